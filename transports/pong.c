/* pong.c - jtr pong: reflect every message back to jtr ping, as-is.
 *
 * um_lat's pong and the Refinitiv tools' reflect mode: one receiving thread
 * (pinned with -a) sends each message back unchanged, so every timestamp in
 * it stays ping's. Ends on ping's end-of-stream; a ping that never comes,
 * goes silent or goes away is reported and the exit status says so.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jtr_cli.h"
#include "tp_prog.h"

static const char usage_text[] =
"Usage: jtr pong [OPTIONS]\n"
"\n"
"Reflect every message jtr ping sends back to it unchanged (um_lat's pong, the\n"
"Refinitiv tools' reflect mode). Start pong first; it ends when ping says it is\n"
"done and prints how many messages it reflected.\n"
"\n"
"Options:\n"
"  -a, --cpu CPU            pin the receiving thread to CPU (-1: none, the default)\n"
"  -m, --max-len BYTES      shm: the ring's slot size, the longest message ping may\n"
"                           send (default 4096)\n"
"  -f, --fifo PRIO          run SCHED_FIFO at PRIO (1-99)\n"
"  -q, --quiet              print nothing but errors\n"
"  -h, --help               this text\n"
"\n"
TP_PROG_USAGE
"  (pong waits 60 s for ping by default)\n"
"\n"
"Exit status: 0 after ping's end of stream; 1 if ping went away or went silent;\n"
"2 for bad options, an address in use, or no ping within --wait.\n"
"\n"
"Examples:\n"
"  jtr pong -T udp                        reflect UDP on 127.0.0.1:17391\n"
"  jtr pong -T shm -a 1 -b                shm rings jtr-jtr-a/b, busy-poll on CPU 1\n"
"  jtr pong -T tcp -P 10.0.0.2:17400      TCP on another address\n";

static const struct option long_opts[] = {
	{ "cpu", required_argument, NULL, 'a' },
	{ "max-len", required_argument, NULL, 'm' },
	TP_PROG_LONG_OPTS,
	JTR_PROBE_LONG_OPTS,
	{ NULL, 0, NULL, 0 },
};

int main(int argc, char **argv)
{
	struct jtr_probe p;
	struct tp_prog tp;
	struct tp *t;
	unsigned char *buf;
	uint64_t reflected = 0, cap;
	int64_t last = 0;
	char desc[160];
	int opt, cpu = -1, rc = 0;
	ssize_t n;
	bool eos = false;

	jtr_probe_init(&p, "pong", argc, argv);
	tp_prog_init(&tp);
	tp.o.msg_max = 4096;
	tp.o.wait_ns = 60 * JTR_NS_PER_S;

	/* 1. options */
	while ((opt = getopt_long(argc, argv, ":a:m:f:qh" TP_PROG_SHORT, long_opts, NULL)) != -1) {
		if (opt == 'o' || opt == 't' || opt == JTR_OPT_HIST_ERROR)
			jtr_usage_error(&p, "pong measures nothing: it takes no -o, -t or --hist-error");
		if (jtr_probe_common_opt(&p, opt, usage_text, argv) || tp_prog_opt(&p, &tp, opt, optarg))
			continue;
		switch (opt) {
		case 'a': cpu = tp_prog_cpu_opt(&p, "-a", optarg); break;
		case 'm': tp.o.msg_max = (uint32_t)jtr_opt_count(&p, "-m", optarg, TP_HDR_LEN, 1u << 24); break;
		}
	}
	jtr_probe_no_args(&p, argc, argv);
	if (tp.o.kind != TP_SHM && tp.o.msg_max < tp_max_msg(&tp.o))
		tp.o.msg_max = tp_max_msg(&tp.o);	/* sockets: take whatever comes */
	tp_prog_check(&p, &tp, TP_PONG);
	cap = tp.o.msg_max;
	buf = malloc(cap);
	if (!buf)
		jtr_fatal(&p, "out of memory");
	jtr_prefault(buf, cap);

	/* 2. privileges, then the transport as the real user */
	tp_prog_privileged(&p);
	if (cpu >= 0 && jtr_pin_self(cpu) < 0)
		jtr_fatal(&p, "cannot pin to CPU %d", cpu);
	if (!p.quiet)
		fprintf(stderr, "%s: waiting for ping on %s %s\n", p.prog, tp_kind_name(tp.o.kind),
			tp.o.addr ? tp.o.addr : tp_default_addr(tp.o.kind));
	t = tp_prog_open(&p, &tp, TP_PONG);
	snprintf(desc, sizeof(desc), "%s", tp_describe(t));

	/* 3. the first message within --wait, then reflect until end of stream */
	{
		int64_t end = jtr_mono_ns() + (int64_t)tp.o.wait_ns;

		do
			n = tp_recv(t, buf, cap, 100 * JTR_NS_PER_MS);
		while (n == -EAGAIN && !jtr_stop && jtr_mono_ns() < end);
	}
	if (n == -EAGAIN && !jtr_stop) {
		tp_close(t);
		jtr_usage_error(&p, "no ping arrived on %s within %.0f s; start 'jtr ping' with the "
				"same -T and --addr, or wait longer (--wait)", desc,
				(double)tp.o.wait_ns / 1e9);
	}
	while (!jtr_stop) {
		if (n >= 0) {
			const struct tp_msg *m = (const struct tp_msg *)buf;

			if (!tp_msg_check(m, (size_t)n)) {
				rc = -EPROTO;
				break;
			}
			if (m->flags & TP_F_EOS) {
				eos = true;
				break;
			}
			if ((rc = tp_send(t, buf, (size_t)n)) < 0)
				break;
			reflected++;
			last = 0;
		} else if (n == -EAGAIN) {
			int64_t now = jtr_mono_ns();

			if (!last)
				last = now;
			else if (now - last >= (int64_t)tp.timeout_ns) {
				rc = -ETIMEDOUT;
				break;
			}
		} else {
			rc = (int)n;
			break;
		}
		n = tp_recv(t, buf, cap, 100 * JTR_NS_PER_MS);
	}
	tp_close(t);
	if (eos) {
		if (!p.quiet)
			printf("jtr pong: reflected %llu messages on %s\n", (unsigned long long)reflected,
			       desc);
		return 0;
	}
	if (jtr_stop) {
		fprintf(stderr, "%s: stopped after reflecting %llu messages\n", p.prog,
			(unsigned long long)reflected);
		return 1;
	}
	if (rc == -ETIMEDOUT)
		fprintf(stderr, "%s: ping went silent for %.1f s after %llu messages (no end of "
			"stream): it stopped or died\n", p.prog, (double)tp.timeout_ns / 1e9,
			(unsigned long long)reflected);
	else if (rc == -EPIPE)
		fprintf(stderr, "%s: ping went away after %llu messages (no end of stream)\n",
			p.prog, (unsigned long long)reflected);
	else
		fprintf(stderr, "%s: error after %llu messages: %s\n", p.prog,
			(unsigned long long)reflected, rc == -EPROTO ? "a malformed message" : strerror(-rc));
	return 1;
}
