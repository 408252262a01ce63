// SPDX-License-Identifier: GPL-2.0-only
/* test_sockopts.c - socket buffer sizes and Nagle in the transport library:
 * tp_check refuses them where they do not belong, tp_open sets them on real
 * loopback sockets and tp_sock_info reads back what the kernel made of them
 * (twice a size below the sysctl cap) and, for tcp, the connection's
 * segments and messages. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "tp.h"

/* free_addr - "127.0.0.1:PORT" of a TCP and UDP port nobody holds now */
static void free_addr(char *buf, size_t n)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t l = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &l), 0);
	close(fd);
	snprintf(buf, n, "127.0.0.1:%u", ntohs(sa.sin_port));
}

/* default_ok - @got is what the default size can read back as: twice it, or
 * twice the sysctl @cap when the plain option capped it (not root) */
static bool default_ok(int got, const char *cap)
{
	char path[64];
	long long max = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sys/net/core/%s", cap);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%lld", &max), 1);
	fclose(f);
	if (max > TP_SOCK_BUF_DEFAULT)
		max = TP_SOCK_BUF_DEFAULT;
	return got == 2 * TP_SOCK_BUF_DEFAULT || got == 2 * max;
}

static int check(enum tp_kind kind, uint32_t snd, uint32_t rcv, bool nagle, struct jtr_err *e)
{
	struct tp_opts o;

	tp_opts_init(&o, kind);
	o.sndbuf = snd;
	o.rcvbuf = rcv;
	o.nagle = nagle;
	jtr_err_clear(e);
	return tp_check(&o, TP_SUB, e);
}

static void test_check_refuses_what_does_not_belong(void **state)
{
	struct jtr_err e;

	(void)state;
	assert_int_equal(check(TP_SHM, 64 << 10, 0, false, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "--sndbuf 64K: the option is for sockets"));
	assert_int_equal(check(TP_SHM, 0, 4 << 20, false, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "--rcvbuf 4M"));
	assert_int_equal(check(TP_UDP, 0, 0, true, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "--nagle is for tcp (-T tcp): udp has no Nagle"));
	assert_int_equal(check(TP_UNIX, 0, 0, true, &e), -EINVAL);
	assert_int_equal(check(TP_TCP, 1000, 0, false, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "--sndbuf 1000: use a size from 1K to 512M"));
	assert_int_equal(check(TP_UDP, 0, TP_SOCK_BUF_MAX + 1024, false, &e), -EINVAL);
	/* what is right for the kind passes */
	assert_int_equal(check(TP_TCP, 64 << 10, 1 << 20, true, &e), 0);
	for (enum tp_kind k = TP_TCP; k <= TP_UNIX_DGRAM; k++)
		assert_int_equal(check(k, TP_SOCK_BUF_MIN, TP_SOCK_BUF_MAX, false, &e), 0);
	assert_int_equal(check(TP_SHM, 0, 0, false, &e), 0);
}

static void test_udp_sizes_read_back(void **state)
{
	char addr[32];
	struct tp_opts o;
	struct tp_sock_info si;
	struct jtr_err e;
	struct tp *t;

	(void)state;
	free_addr(addr, sizeof(addr));
	tp_opts_init(&o, TP_UDP);
	o.addr = addr;
	o.sndbuf = 48 << 10;
	o.rcvbuf = 80 << 10;
	jtr_err_clear(&e);
	assert_int_equal(tp_open(&t, &o, TP_SUB, &e), 0);
	assert_true(tp_sock_info(t, &si));
	assert_int_equal(si.sndbuf, 2 * (48 << 10));
	assert_int_equal(si.rcvbuf, 2 * (80 << 10));
	assert_false(si.tcp);
	assert_false(si.have_segs);
	tp_close(t);
}

struct sub_arg {
	struct tp_opts o;
	struct tp *t;
	int rc;
	uint64_t got;
};

/* subscriber - connect and take messages until the publisher closes */
static void *subscriber(void *p)
{
	struct sub_arg *a = p;
	struct jtr_err e;
	unsigned char buf[256];

	jtr_err_clear(&e);
	a->rc = tp_open(&a->t, &a->o, TP_SUB, &e);
	if (a->rc < 0)
		return NULL;
	while (tp_recv(a->t, buf, sizeof(buf), 2000000000ULL) > 0)
		a->got++;
	return NULL;
}

/* tcp - @n 40-byte messages pub to sub with @nagle: pub's and sub's info */
static void tcp(bool nagle, int n, struct tp_sock_info *pi, struct tp_sock_info *si)
{
	char addr[32];
	unsigned char buf[40];
	struct sub_arg a;
	struct tp_opts o;
	struct jtr_err e;
	struct tp *t;
	pthread_t th;

	free_addr(addr, sizeof(addr));
	tp_opts_init(&o, TP_TCP);
	o.addr = addr;
	o.msg_max = sizeof(buf);
	o.nagle = nagle;
	o.sndbuf = 256 << 10;
	memset(&a, 0, sizeof(a));
	a.o = o;
	a.o.nagle = false;
	a.o.sndbuf = 0;
	a.o.rcvbuf = 512 << 10;
	assert_int_equal(pthread_create(&th, NULL, subscriber, &a), 0);
	jtr_err_clear(&e);
	assert_int_equal(tp_open(&t, &o, TP_PUB, &e), 0);
	for (int i = 0; i < n; i++) {
		tp_msg_fill((struct tp_msg *)buf, sizeof(buf), 0, (uint64_t)i, 0, 0);
		assert_int_equal(tp_send(t, buf, sizeof(buf)), 0);
	}
	usleep(100000);		/* the last ACKs back */
	assert_true(tp_sock_info(t, pi));
	tp_close(t);		/* the subscriber sees the end */
	pthread_join(th, NULL);
	assert_int_equal(a.rc, 0);
	assert_int_equal(a.got, n);
	assert_true(tp_sock_info(a.t, si));
	tp_close(a.t);
}

static void test_tcp_nodelay_sizes_and_segments(void **state)
{
	struct tp_sock_info pi, si;

	(void)state;
	tcp(false, 200, &pi, &si);
	assert_true(pi.tcp && pi.nodelay && pi.have_segs);
	assert_int_equal(pi.sndbuf, 2 * (256 << 10));
	assert_true(default_ok(pi.rcvbuf, "rmem_max"));
	assert_int_equal(pi.msgs_out, 200);
	assert_int_equal(pi.msgs_in, 0);
	/* the subscriber's own sizes; its segments in are the publisher's out, and
	 * the SYN-ACK (sent before the accepted socket counts) and the FIN (sent
	 * after the publisher read its count) */
	assert_true(si.tcp && si.nodelay && si.have_segs);
	assert_int_equal(si.rcvbuf, 2 * (512 << 10));
	assert_true(default_ok(si.sndbuf, "wmem_max"));
	assert_int_equal(si.msgs_in, 200);
	assert_true(si.segs_in >= pi.segs_out && si.segs_in <= pi.segs_out + 2);
	assert_true(pi.segs_out >= 2 && pi.segs_out <= 200 + 2);
}

static void test_tcp_nagle_puts_messages_together(void **state)
{
	struct tp_sock_info pi, si;

	(void)state;
	/* back to back, as fast as the loop goes: with Nagle, all but the first
	 * wait for an ACK and go out together */
	tcp(true, 20000, &pi, &si);
	assert_true(pi.tcp && !pi.nodelay && pi.have_segs);
	assert_true(si.nodelay);
	assert_int_equal(pi.msgs_out, 20000);
	assert_int_equal(si.msgs_in, 20000);
	assert_true(pi.segs_out < 20000 / 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_refuses_what_does_not_belong),
		cmocka_unit_test(test_udp_sizes_read_back),
		cmocka_unit_test(test_tcp_nodelay_sizes_and_segments),
		cmocka_unit_test(test_tcp_nagle_puts_messages_together),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
