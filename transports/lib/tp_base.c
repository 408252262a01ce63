// SPDX-License-Identifier: GPL-2.0-only
/* tp_base.c - what the dispatcher (tp.c) and the transports (tp_shm.c,
 * tp_sock.c) share: the clock of timeouts, inet addresses, the packed
 * unit's check. Below all of them, so that none calls back up. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <time.h>

#include "jtr_cli.h"
#include "tp_int.h"

/* tp_now_ns - CLOCK_MONOTONIC in ns */
int64_t tp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* tp_parse_inet - "A.B.C.D:PORT" or "[IPV6]:PORT"; names are not looked up */
int tp_parse_inet(const char *s, struct sockaddr_storage *ss, socklen_t *len, struct jtr_err *e)
{
	struct sockaddr_in *sa = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	const char *colon, *hs = s;
	char host[64];
	long long port;
	struct jtr_err pe;
	size_t hl;
	bool v6 = s[0] == '[';

	memset(ss, 0, sizeof(*ss));
	if (v6) {
		const char *rb = strchr(s, ']');

		if (!rb || rb[1] != ':')
			return jtr_err_set(e, -EINVAL, "'%s' is not an address: an IPv6 address goes in "
					   "brackets before the port, e.g. [::1]:%d", s, TP_DEFAULT_PORT);
		hs = s + 1;
		hl = (size_t)(rb - hs);
		colon = rb + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return jtr_err_set(e, -EINVAL, "'%s' is not an address: use HOST:PORT with a "
					   "dotted IPv4 host, e.g. 127.0.0.1:%d, or [IPV6]:PORT, e.g. "
					   "[::1]:%d", s, TP_DEFAULT_PORT, TP_DEFAULT_PORT);
		hl = (size_t)(colon - s);
		if (memchr(s, ':', hl))
			return jtr_err_set(e, -EINVAL, "'%s': an IPv6 address goes in brackets before "
					   "the port, e.g. [::1]:%d", s, TP_DEFAULT_PORT);
	}
	if (hl >= sizeof(host))
		return jtr_err_set(e, -EINVAL, "'%s': host part too long", s);
	memcpy(host, hs, hl);
	host[hl] = 0;
	if (jtr_parse_int(colon + 1, 1, 65535, &port, &pe) < 0)
		return jtr_err_set(e, -EINVAL, "'%s': the port must be 1-65535", s);
	if (!hl)
		return jtr_err_set(e, -EINVAL, "'%s': no host; e.g. 127.0.0.1:%lld or [::1]:%lld", s,
				   port, port);
	if (v6) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*s6);
		if (inet_pton(AF_INET6, host, &s6->sin6_addr) != 1)
			return jtr_err_set(e, -EINVAL, "'%s' is not an address: '%s' is not an IPv6 "
					   "address (names are not looked up)", s, host);
		return 0;
	}
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	*len = sizeof(*sa);
	if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
		return jtr_err_set(e, -EINVAL, "'%s' is not an address: '%s' is not a dotted IPv4 "
				   "address (names are not looked up)", s, host);
	return 0;
}

/* tp_msg_check_packed - every message of the unit sane, the lengths adding up */
bool tp_msg_check_packed(const struct tp_msg *m, size_t len)
{
	const unsigned char *p = (const unsigned char *)m, *end = p + len;

	while ((size_t)(end - p) >= TP_HDR_LEN) {
		const struct tp_msg *q = (const struct tp_msg *)p;
		size_t rest = (size_t)(end - p);

		if (q->magic != TP_MAGIC || q->version != TP_VERSION || (q->flags & ~TP_F_ALL) ||
		    q->len < TP_HDR_LEN || q->len > rest)
			return false;
		if (q->flags & (TP_F_EOS | TP_F_HELLO))
			return false;		/* control messages are never packed */
		if (!(q->flags & TP_F_PACKED))
			return q->len == rest;	/* the last one ends the unit */
		p += q->len;
	}
	return false;
}
