// SPDX-License-Identifier: GPL-2.0-only
/* tp.c - the transport interface: names, addresses, checks, dispatch. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>

#include "jtr_cli.h"
#include "jtr_cpu.h"
#include "tp_int.h"
#include "tp_numa.h"

static const char *const kind_names[] = {
	[TP_SHM] = "shm", [TP_TCP] = "tcp", [TP_UDP] = "udp", [TP_MCAST] = "mcast",
	[TP_UNIX] = "unix", [TP_UNIX_DGRAM] = "unix-dgram",
};

/* tp_now_ns - CLOCK_MONOTONIC in ns */
int64_t tp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* tp_kind_parse - a transport's name */
int tp_kind_parse(const char *s, enum tp_kind *k)
{
	for (int i = TP_SHM; i <= TP_UNIX_DGRAM; i++)
		if (!strcmp(s, kind_names[i])) {
			*k = (enum tp_kind)i;
			return 0;
		}
	return -EINVAL;
}

/* tp_kind_name - the name */
const char *tp_kind_name(enum tp_kind k)
{
	return k >= TP_SHM && k <= TP_UNIX_DGRAM ? kind_names[k] : "?";
}

/* tp_default_addr - where a transport goes when no address is given */
const char *tp_default_addr(enum tp_kind k)
{
	switch (k) {
	case TP_SHM: return TP_DEFAULT_SHM;
	case TP_MCAST: return TP_DEFAULT_GROUP ":17391";
	case TP_UNIX:
	case TP_UNIX_DGRAM: return TP_DEFAULT_UNIX;
	default: return "127.0.0.1:17391";
	}
}

/* tp_opts_init - defaults */
void tp_opts_init(struct tp_opts *o, enum tp_kind kind)
{
	memset(o, 0, sizeof(*o));
	o->kind = kind;
	o->subs = 1;
	o->slots = TP_DEFAULT_SLOTS;
	o->msg_max = 64;
	o->iface = TP_DEFAULT_IFACE;
	o->wait_ns = 10 * 1000000000ULL;
	o->numa_cpu = o->numa_node = -1;
}

/* tp_max_msg - the largest message of the kind */
uint32_t tp_max_msg(const struct tp_opts *o)
{
	switch (o->kind) {
	case TP_SHM: return 1u << 24;
	case TP_UDP:
	case TP_MCAST: return TP_UDP_MAX;
	case TP_UNIX_DGRAM: return TP_UNIX_DGRAM_MAX;
	default: return TP_STREAM_MAX;
	}
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

/* tp_recv_name - the receive mode's name */
const char *tp_recv_name(const struct tp_opts *o)
{
	return o->epoll ? "epoll" : o->busy ? "busy-poll" : "blocking";
}

/* tp_mcast_is_wide - outside 239.255.0.0/16, or TTL > 0 */
int tp_mcast_is_wide(const struct tp_opts *o, struct jtr_err *e)
{
	struct sockaddr_storage ss;
	socklen_t len;
	uint32_t a;
	const char *addr = o->addr ? o->addr : tp_default_addr(o->kind);
	int rc = tp_parse_inet(addr, &ss, &len, e);

	if (rc < 0)
		return rc;
	if (ss.ss_family != AF_INET)
		return jtr_err_set(e, -EINVAL, "'%s': multicast is IPv4 only here (IPv6 multicast "
				   "needs a multicast-capable interface; loopback is not one); use a "
				   "group in 239.255.0.0/16, e.g. %s:%d", addr, TP_DEFAULT_GROUP,
				   TP_DEFAULT_PORT);
	a = ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr);
	if ((a >> 28) != 0xe)
		return jtr_err_set(e, -EINVAL, "'%s' is not a multicast group (224.0.0.0/4); the "
				   "default is %s:%d", addr, TP_DEFAULT_GROUP, TP_DEFAULT_PORT);
	return (a >> 16) != 0xefff || o->ttl > 0;
}

/* human - @b bytes as "12.3 GiB" */
static const char *human(uint64_t b, char *buf, size_t n)
{
	static const char *const unit[] = { "bytes", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)b;
	int u = 0;

	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	if (u)
		snprintf(buf, n, "%.1f %s", v, unit[u]);
	else
		snprintf(buf, n, "%llu bytes", (unsigned long long)b);
	return buf;
}

/* ring_room - a creator's rings (pub: one of 64 readers, pong: two of one)
 * must fit in what the machine can hold: half the smaller of /dev/shm's free
 * space and the memory available. The segment lives in /dev/shm (tmpfs, so
 * in memory), is populated when mapped and locked with the rest of the
 * program (mlockall): none of it can be reclaimed during the run, and the
 * other half is the room left to everything else. Checked before anything
 * is created, so a ring that cannot fit fails at once with the figures,
 * not late in mmap or after /dev/shm filled up. */
static int ring_room(const struct tp_opts *o, enum tp_role role, struct jtr_err *e)
{
	uint32_t rings = role == TP_PONG ? 2 : 1;
	size_t one = tp_ring_size(o->slots, o->msg_max, role == TP_PONG ? 1 : TP_RING_MAX_READERS);
	uint64_t need = (uint64_t)one * rings, shm = UINT64_MAX, can;
	uint64_t mem = jtr_proc_kb("/proc/meminfo", "MemAvailable");
	struct statvfs sv;
	char a[32], b[32], c[32], d[32];

	if (role != TP_PUB && role != TP_PONG)
		return 0;
	if (statvfs("/dev/shm", &sv) == 0)
		shm = (uint64_t)sv.f_bavail * sv.f_frsize;
	if (!mem)
		mem = UINT64_MAX;	/* unknown: /dev/shm alone bounds it */
	can = (shm < mem ? shm : mem) / 2;
	if (need <= can)
		return 0;
	return jtr_err_set(e, -ENOMEM, "%s of %u slots of %u-byte messages need%s %s; this "
			   "machine can hold %s (half the smaller of /dev/shm's free %s and %s of "
			   "memory available); use fewer --slots or a shorter -m",
			   rings > 1 ? "two rings" : "a ring", o->slots, o->msg_max,
			   rings > 1 ? "" : "s", human(need, a, sizeof(a)), human(can, b, sizeof(b)),
			   shm == UINT64_MAX ? "?" : human(shm, c, sizeof(c)),
			   mem == UINT64_MAX ? "?" : human(mem, d, sizeof(d)));
}

/* size_name - @v bytes as an option would give them: 4M, 256K or 1000 */
static const char *size_name(uint32_t v, char *buf, size_t n)
{
	if (v && !(v % (1u << 20)))
		snprintf(buf, n, "%uM", v >> 20);
	else if (v && !(v % 1024))
		snprintf(buf, n, "%uK", v >> 10);
	else
		snprintf(buf, n, "%u", v);
	return buf;
}

/* sock_opts_check - the socket buffer sizes and Nagle go with their kinds */
static int sock_opts_check(const struct tp_opts *o, struct jtr_err *e)
{
	char b[24];

	for (int i = 0; i < 2; i++) {
		uint32_t v = i ? o->rcvbuf : o->sndbuf;
		const char *name = i ? "--rcvbuf" : "--sndbuf";

		if (v && o->kind == TP_SHM)
			return jtr_err_set(e, -EINVAL, "%s %s: the option is for sockets (-T tcp, udp, "
					   "mcast, unix or unix-dgram); an shm ring has no socket "
					   "buffer (size it with --slots)", name, size_name(v, b, sizeof(b)));
		if (v && (v < TP_SOCK_BUF_MIN || v > TP_SOCK_BUF_MAX))
			return jtr_err_set(e, -EINVAL, "%s %s: use a size from 1K to 512M, e.g. 256K, "
					   "or leave the option out for the default (4M)", name,
					   size_name(v, b, sizeof(b)));
	}
	if (o->nagle && o->kind != TP_TCP)
		return jtr_err_set(e, -EINVAL, "--nagle is for tcp (-T tcp): %s has no Nagle "
				   "algorithm; leave --nagle out", tp_kind_name(o->kind));
	return 0;
}

/* tp_check - validate without opening */
int tp_check(const struct tp_opts *o, enum tp_role role, struct jtr_err *e)
{
	const char *addr = o->addr ? o->addr : tp_default_addr(o->kind);
	struct sockaddr_storage ss;
	struct sockaddr_in ifa;
	socklen_t sl;
	int rc;

	if (o->epoll && o->kind == TP_SHM)
		return jtr_err_set(e, -EINVAL, "--recv epoll: an shm ring has no file descriptor to "
				   "wait on; use blocking (a futex) or busy-poll (-b)");
	if (o->msg_max < TP_HDR_LEN)
		return jtr_err_set(e, -EINVAL, "a message must hold the %u-byte header", TP_HDR_LEN);
	if (o->msg_max > tp_max_msg(o))
		return jtr_err_set(e, -EMSGSIZE, "a %u-byte message is longer than a %s %s can carry "
				   "(%u bytes)", o->msg_max, tp_kind_name(o->kind),
				   o->kind == TP_SHM ? "ring slot" :
				   (o->kind == TP_TCP || o->kind == TP_UNIX) ? "message" : "datagram",
				   tp_max_msg(o));
	if (o->kind != TP_SHM && (o->cross_numa || o->numa_node >= 0))
		return jtr_err_set(e, -EINVAL, "--%s is for the shm ring (-T shm); a socket's "
				   "buffers are the kernel's", o->cross_numa ? "cross-numa" : "numa-node");
	if (o->kind == TP_SHM && role == TP_PUB && (o->cross_numa || o->numa_node >= 0))
		return jtr_err_set(e, -EINVAL, "--%s: the ring's readers place it; give it to jtr sub "
				   "(jtr pub follows the ring's node)", o->cross_numa ? "cross-numa" :
				   "numa-node");
	if (o->numa_node >= tp_numa_nodes())
		return tp_numa_nodes() == 1 ?
			jtr_err_set(e, -EINVAL, "--numa-node %d: this machine has one NUMA node, "
				    "node 0", o->numa_node) :
			jtr_err_set(e, -EINVAL, "--numa-node %d: use a node from 0 to %d",
				    o->numa_node, tp_numa_nodes() - 1);
	if (o->cross_numa && tp_numa_nodes() < 2)
		return jtr_err_set(e, -EINVAL, "--cross-numa: this machine has one NUMA node, so "
				   "there is no remote memory to compare with");
	rc = sock_opts_check(o, e);
	if (rc < 0)
		return rc;
	switch (o->kind) {
	case TP_SHM:
		if (!*addr || strlen(addr) > 64 || strchr(addr, '/'))
			return jtr_err_set(e, -EINVAL, "'%s' is not a segment name: use 1-64 characters "
					   "without '/', e.g. %s", addr, TP_DEFAULT_SHM);
		if (o->slots < 2 || (o->slots & (o->slots - 1)) || o->slots > (1u << 24))
			return jtr_err_set(e, -EINVAL, "%u ring slots: use a power of two from 2 to 16M",
					   o->slots);
		if (o->subs < 1 || o->subs > TP_RING_MAX_READERS)
			return jtr_err_set(e, -EINVAL, "%u subscribers: a ring has 1-%d readers",
					   o->subs, TP_RING_MAX_READERS);
		return ring_room(o, role, e);
	case TP_UNIX:
	case TP_UNIX_DGRAM:
		if (!*addr || strlen(addr) >= sizeof(((struct sockaddr_un *)0)->sun_path))
			return jtr_err_set(e, -EINVAL, "'%s' is not a socket path: use 1-107 characters, "
					   "e.g. %s", addr, TP_DEFAULT_UNIX);
		break;
	case TP_MCAST:
		rc = tp_mcast_is_wide(o, e);
		if (rc < 0)
			return rc;
		if (rc > 0 && !o->wide)
			return jtr_err_set(e, -EPERM, "group %s with TTL %d can reach other hosts: "
					   "multicast outside 239.255.0.0/16 or with TTL > 0 can flood "
					   "a network and its switches' supervisors; add --mcast-wide "
					   "if this is what you want", addr, o->ttl);
		if (inet_pton(AF_INET, o->iface ? o->iface : TP_DEFAULT_IFACE, &ifa.sin_addr) != 1)
			return jtr_err_set(e, -EINVAL, "--iface %s: not a dotted IPv4 address of an "
					   "interface, e.g. %s", o->iface, TP_DEFAULT_IFACE);
		if (o->ttl < 0 || o->ttl > 255)
			return jtr_err_set(e, -EINVAL, "--ttl %d: use 0-255", o->ttl);
		break;
	default:
		rc = tp_parse_inet(addr, &ss, &sl, e);
		if (rc < 0)
			return rc;
		break;
	}
	if ((o->kind == TP_TCP || o->kind == TP_UNIX) && (o->subs < 1 || o->subs > TP_MAX_SUBS))
		return jtr_err_set(e, -EINVAL, "%u subscribers: use 1-%d", o->subs, TP_MAX_SUBS);
	return 0;
}

/* tp_open - check, then open the kind */
int tp_open(struct tp **out, const struct tp_opts *o, enum tp_role role, struct jtr_err *e)
{
	struct tp *t;
	int rc = tp_check(o, role, e);

	*out = NULL;
	if (rc < 0)
		return rc;
	t = calloc(1, sizeof(*t));
	if (!t)
		return jtr_err_set(e, -ENOMEM, "out of memory");
	t->kind = o->kind;
	t->role = role;
	t->busy = o->busy && !o->epoll;
	t->epoll = o->epoll;
	t->epfd = -1;
	t->msg_max = o->msg_max;
	t->wait_ns = o->wait_ns;
	t->fd = -1;
	t->lfd = -1;
	snprintf(t->desc, sizeof(t->desc), "%s %s", tp_kind_name(o->kind),
		 o->addr ? o->addr : tp_default_addr(o->kind));
	rc = o->kind == TP_SHM ? tp_shm_open(t, o, e) : tp_sock_open(t, o, e);
	if (rc < 0) {
		tp_close(t);
		return rc;
	}
	*out = t;
	return 0;
}

/* tp_send - dispatch */
int tp_send(struct tp *t, const void *buf, size_t len)
{
	if (__builtin_expect(len < TP_HDR_LEN || len > t->msg_max, 0))
		return -EMSGSIZE;
	return t->kind == TP_SHM ? tp_shm_send(t, buf, len) : tp_sock_send(t, buf, len);
}

/* tp_claim - shm's next slot when the fast send would take the message
 * (the checks of tp_shm.c's send_fast), else NULL; the ring's inline claim
 * here, so a message costs one call each way */
void *tp_claim(struct tp *t, size_t len)
{
	if (__builtin_expect(t->kind != TP_SHM || t->role == TP_SUB || t->faulted ||
			     len < TP_HDR_LEN || len > t->msg_max || len > TP_RING_SMALL ||
			     !tp_ring_fits(&t->wr, len) || tp_ring_left(t->wr.r) != t->left_seen, 0))
		return NULL;
	return tp_ring_claim(&t->wr);
}

/* tp_shm_writer - the ring of a shm writer */
struct tp_ring_wr *tp_shm_writer(struct tp *t)
{
	return t->kind == TP_SHM && t->role != TP_SUB && t->writing ? &t->wr : NULL;
}

/* tp_commit - shm only (after a tp_claim that gave a slot) */
int tp_commit(struct tp *t, size_t len)
{
	if (__builtin_expect(tp_ring_commit(&t->wr, (uint32_t)len), 0))
		tp_ring_wake(t->wr.r);
	return 0;
}

/* tp_recv - dispatch */
ssize_t tp_recv(struct tp *t, void *buf, size_t cap, uint64_t timeout_ns)
{
	return t->kind == TP_SHM ? tp_shm_recv(t, buf, cap, timeout_ns)
				 : tp_sock_recv(t, buf, cap, timeout_ns);
}

/* tp_poll - dispatch */
int tp_poll(struct tp *t, uint64_t timeout_ns)
{
	return t->kind == TP_SHM ? tp_shm_poll(t, timeout_ns) : tp_sock_poll(t, timeout_ns);
}

/* tp_close - dispatch and free */
void tp_close(struct tp *t)
{
	if (!t)
		return;
	if (t->kind == TP_SHM)
		tp_shm_close(t);
	else
		tp_sock_close(t);
	free(t->rbuf);
	free(t);
}

/* tp_describe - for messages */
const char *tp_describe(const struct tp *t)
{
	return t->desc;
}

/* tp_peers - subscribers now */
uint32_t tp_peers(const struct tp *t)
{
	if (t->role != TP_PUB)
		return 1;
	if (t->kind == TP_SHM)
		return tp_ring_readers(t->seg[0].ring);
	if (t->kind == TP_TCP || t->kind == TP_UNIX)
		return t->nsubs;
	return 1;
}

/* tp_rejected - what the receive dropped */
void tp_rejected(const struct tp *t, struct tp_rejects *r)
{
	*r = t->rej;
	r->forged = r->out_of_window = 0;
}

/* tp_note - a notice from tp_open, or NULL */
const char *tp_note(const struct tp *t)
{
	return t->note[0] ? t->note : NULL;
}

/* tp_peer_name - the pinned peer, for messages */
const char *tp_peer_name(const struct tp *t)
{
	return t->peer_name;
}

/* tp_peers_lost - subscribers that went away */
uint32_t tp_peers_lost(const struct tp *t)
{
	return t->kind == TP_SHM ? tp_shm_peers_lost(t) : t->peers_lost;
}

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

int tp_stream_addr(const struct tp_opts *o, unsigned k, char *buf, size_t n, struct jtr_err *e)
{
	const char *addr = o->addr ? o->addr : tp_default_addr(o->kind);
	const char *colon;
	long long port;
	struct jtr_err pe;
	int len;

	if (!k) {
		len = snprintf(buf, n, "%s", addr);
		return len < 0 || (size_t)len >= n ? jtr_err_set(e, -EINVAL, "'%s': too long", addr) : 0;
	}
	switch (o->kind) {
	case TP_SHM:
	case TP_UNIX:
	case TP_UNIX_DGRAM: {
		/* a segment name, or a socket path (sun_path less its NUL) */
		const int most = o->kind == TP_SHM ? 64 : 107;

		len = snprintf(buf, n, "%s.%u", addr, k);
		if (len < 0 || (size_t)len >= n || len > most)
			return jtr_err_set(e, -EINVAL, "'%s': too long for %u streams (the %s and its "
					   "'.N' are at most %d bytes)", addr, k + 1,
					   o->kind == TP_SHM ? "segment name" : "socket path", most);
		return 0;
	}
	default:
		colon = strrchr(addr, ':');
		if (!colon || jtr_parse_int(colon + 1, 1, 65535, &port, &pe) < 0)
			return jtr_err_set(e, -EINVAL, "'%s' is not HOST:PORT", addr);
		if (port + k > 65535)
			return jtr_err_set(e, -EINVAL, "'%s' with %u streams: ports %lld-%lld, past "
					   "65535; choose a lower port", addr, k + 1, port, port + k);
		len = snprintf(buf, n, "%.*s:%lld", (int)(colon - addr), addr, port + k);
		return len < 0 || (size_t)len >= n ? jtr_err_set(e, -EINVAL, "'%s': too long", addr) : 0;
	}
}
