// SPDX-License-Identifier: GPL-2.0-only
/* pong.c - jtr pong: reflect every message back to jtr ping, as-is.
 *
 * One receiving thread (pinned with -a) sends each message back unchanged,
 * so every timestamp in it stays ping's. Ends on ping's end-of-stream; a
 * ping that never comes, goes silent or goes away is reported and the exit
 * status says so. With -o it also writes a results folder: what it
 * reflected and the CPU it used, and a stats.csv row every --stats-every.
 * The reflecting loop runs in a jtr_worker (pinned with -a, SCHED_FIFO
 * with -f); the main thread waits for ping's first message, then makes the
 * rows and waits for the worker.
 *
 * pong reflects only ping's messages: the library turns away malformed ones
 * and, on datagrams, those from another sender than the first well-formed
 * one (the session's ping, which alone gets replies and whose end of stream
 * alone ends the session). pong does not read stamps or sequence numbers;
 * ping judges them when they come back.
 *
 * A message with room after its header goes back with pong's own receive
 * and send times in it (struct tp_echo, TP_F_ECHO), so ping can tell where a
 * slow round trip spent its time. With -o pong also keeps an outlier log of
 * its slow reflections (receive returned to send call ended).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jtr_cli.h"
#include "tp_prog.h"

static const char usage_text[] =
"usage: jtr pong [OPTIONS]\n"
"\n"
"Reflect every message jtr ping sends back to it unchanged. Start pong first; it\n"
"ends when ping says it is done and prints how many messages it reflected.\n"
"\n"
"options:\n"
JTR_CPUS_HELP "          pin the receiving thread to a CPU (one; -1: none, the\n"
"                           default)\n"
JTR_LEN_HELP "          shm: the ring's slot size, the longest message ping may\n"
"                           send (default 4096; --max-len is the same)\n"
JTR_FIFO_HELP "          run SCHED_FIFO at PRIO (1-99)\n"
JTR_OUTPUT_HELP "         also write a results folder: summary.txt, result.json\n"
"                           (messages reflected, CPU %, RSS) and stats.csv; default none\n"
"      --stats-every DUR    with -o: a row of DIR/stats.csv every DUR (default 1s;\n"
"                           0: none): messages and bytes received and sent back, CPU %\n"
"                           of the process and of the reflecting thread, RSS MB\n"
"      --stats-print        with -o: each row on stdout as well, while pong runs\n"
TP_OLOG_USAGE("with -o: reflections",
"                           (ping's -w warm-up messages give m)\n")
JTR_QUIET_HELP "              print nothing but errors\n"
"  -h, --help               this text\n"
"\n"
TP_PROG_USAGE
"  (pong waits 60 s for ping by default)\n"
"\n"
JTR_OLD_HELP " -a CPU (-c).\n"
"\n"
"A message with room for it (-m on ping: 48 bytes or more) goes back with pong's\n"
"receive and send times after its header (CLOCK_MONOTONIC ns), which ping's\n"
"outlier log shows. With -o, DIR/outliers.csv (cpu,start_ns,length_ns,kind,seq)\n"
"holds the reflections over the threshold and result.json a run 'reflect'.\n"
"\n"
"Exit status: 0 after ping's end of stream; 1 if ping went away or went silent;\n"
"2 for bad options, an address in use, or no ping within --wait; 130 after\n"
"Ctrl-C, SIGTERM or SIGHUP (with -o, what was reflected is written, marked\n"
"partial).\n"
"\n"
"examples:\n"
"  jtr pong -T udp                        reflect UDP on 127.0.0.1:17391\n"
"  jtr pong -T shm -c 1 -b                shm rings jtr-jtr-a/b, busy-poll on CPU 1\n"
"  jtr pong -T tcp -P 10.0.0.2:17400      TCP on another address\n"
"  jtr pong -T tcp -P [::1]:17400 --recv epoll -o pong-out   IPv6, epoll, results\n";

static const struct option long_opts[] = {
	JTR_LONG(CPUS),
	{ "cpu", required_argument, NULL, JTR_CPUS_C },
	JTR_LONG(LEN),
	{ "max-len", required_argument, NULL, JTR_LEN_C },
	{ "stats-every", required_argument, NULL, TP_OPT_STATS_EVERY },
	{ "stats-print", no_argument, NULL, TP_OPT_STATS_PRINT },
	JTR_PROBE_OUTLIER_LONG_OPTS,
	TP_PROG_LONG_OPTS,
	JTR_PROBE_LONG_OPTS,
	{ NULL, 0, NULL, 0 },
};

struct pong {
	struct tp_prog *tp;
	struct tp *t;
	char desc[160];
	int cpu;
	bool record_times;		/* -o: note the first and last reflection */
	unsigned char *buf;
	uint64_t cap;
	ssize_t first_n;		/* ping's first message, already in buf */
	uint64_t reflected;
	int64_t first_ns, last_ns;
	bool eos;
	int rc;
	struct tp_rejects rej;		/* what the library turned away */
	char err_text[512];		/* g.rc in words, taken before the close */
	struct tp_stat_src rsrc, ssrc;	/* the reflecting thread: received, sent back */
	struct tp_stats st;
	bool tsc;			/* stamps and times in TSC ticks, else CLOCK_MONOTONIC ns */
	struct jtr_ticks2ns t2n;	/* -o with tsc: ticks to ns */
	struct jtr_hist reflect;	/* -o: each measured reflection, ns */
	struct tp_olog olog;		/* -o: those over the threshold */
};

/* note_reflection - -o: a reflection of @m from @rx_ns to @end_ns into the
 * histogram and the outlier log (ping's warm-up ones into the rule) */
static inline void note_reflection(struct pong *g, const struct tp_msg *m, uint64_t rx,
				   uint64_t end)
{
	uint64_t v = end > rx ? end - rx : 0;

	if (g->tsc)
		v = jtr_ticks2ns(&g->t2n, v);
	if (m->flags & TP_F_HELLO)
		return;
	if (m->flags & TP_F_WARMUP) {
		tp_olog_warm(&g->olog, v);
		return;
	}
	jtr_hist_record(&g->reflect, v);
	if (__builtin_expect(tp_olog_over(&g->olog, v), 0))
		tp_olog_note(&g->olog, rx, v, m->seq, NULL);
}

/* now_raw - TSC ticks or CLOCK_MONOTONIC ns */
static inline uint64_t now_raw(bool tsc)
{
	return tsc ? jtr_rdtsc() : (uint64_t)jtr_mono_ns();
}

/* reflector - send each message back until ping's end of stream, a silent
 * or vanished ping, or a stop (the worker; the first message is in buf) */
static void reflector(void *arg)
{
	struct pong *g = arg;
	const int64_t timeout_ns = (int64_t)g->tp->timeout_ns;
	unsigned char *buf = g->buf;
	ssize_t n = g->first_n;
	int64_t quiet_since = 0;

	tp_stat_thread_begin(&g->rsrc);
	tp_stat_thread_begin(&g->ssrc);
	if (g->record_times)
		tp_olog_cpu(&g->olog, g->cpu);
	while (!jtr_stop) {
		if (n >= 0) {
			struct tp_msg *m = (struct tp_msg *)buf;
			const bool echo = (size_t)n >= TP_ECHO_OFF + TP_ECHO_LEN;
			uint64_t rx = 0;

			if (m->flags & TP_F_EOS) {
				g->eos = true;
				break;
			}
			if (echo || g->record_times)
				rx = now_raw(g->tsc);
			tp_stat_msg(&g->rsrc, (uint64_t)n);
			if (echo) {
				struct tp_echo e = { (int64_t)rx, (int64_t)now_raw(g->tsc) };

				memcpy(buf + TP_ECHO_OFF, &e, sizeof(e));
				m->flags |= g->tsc ? TP_F_ECHO_TSC : TP_F_ECHO;
			}
			if ((g->rc = tp_send(g->t, buf, (size_t)n)) < 0)
				break;
			tp_stat_msg(&g->ssrc, (uint64_t)n);
			if (g->record_times) {
				g->last_ns = jtr_mono_ns();
				if (!g->reflected)
					g->first_ns = g->last_ns;
				note_reflection(g, m, rx, now_raw(g->tsc));
			}
			g->reflected++;
			quiet_since = 0;
		} else if (n == -EAGAIN) {
			int64_t now = jtr_mono_ns();

			if (!quiet_since)
				quiet_since = now;
			else if (now - quiet_since >= timeout_ns) {
				g->rc = -ETIMEDOUT;
				break;
			}
		} else {
			g->rc = (int)n;
			break;
		}
		tp_stat_poll(&g->rsrc);
		tp_stat_poll(&g->ssrc);
		n = tp_recv(g->t, buf, g->cap, 100 * JTR_NS_PER_MS);
	}
	tp_stat_thread_end(&g->ssrc);
	tp_stat_thread_end(&g->rsrc);
}

/* summary - what was reflected, CPU and memory */
static void summary(FILE *f, const struct jtr_probe *p, const struct pong *g)
{
	uint64_t span = g->last_ns > g->first_ns ? (uint64_t)(g->last_ns - g->first_ns) : 0;

	fprintf(f, "jtr pong: %s, %s receive%s\n", g->desc, tp_prog_recv_name(g->tp),
		p->partial ? ", PARTIAL" : "");
	fprintf(f, "reflected=%llu, end_of_stream=%s, duration_ns=%llu, result_rate=%.6f\n",
		(unsigned long long)g->reflected, g->eos ? "yes" : "no", (unsigned long long)span,
		span && g->reflected > 1 ? (double)(g->reflected - 1) * 1e9 / (double)span : 0.0);
	tp_prog_rejects_line(f, &g->rej, false);
	tp_olog_summary(f, &g->olog, "reflections");
	tp_stats_summary(f, &g->st, tp_prog_recv_name(g->tp));
}

/* write_outputs - -o: summary.txt and result.json */
static void write_outputs(struct jtr_probe *p, struct pong *g, const char *peer)
{
	struct jtr_afile txt, res;
	struct jtr_json j;
	uint64_t span = g->last_ns > g->first_ns ? (uint64_t)(g->last_ns - g->first_ns) : 0;

	jtr_probe_open(p, &txt, "summary.txt");
	jtr_probe_open(p, &res, "result.json");
	summary(txt.f, p, g);
	tp_prog_inputs(txt.f, p, g->tp, 0);
	tp_prog_input(txt.f, "cpu:", "%d", g->cpu);
	tp_prog_input(txt.f, "longest message:", "%u bytes", g->tp->o.msg_max);
	jtr_json_init(&j, res.f);
	jtr_probe_result_begin(p, &j);
	jtr_json_obj_begin(&j, "params");
	if (g->cpu >= 0) jtr_json_int(&j, "cpu", g->cpu); else jtr_json_null(&j, "cpu");
	jtr_json_uint(&j, "max_len", g->tp->o.msg_max);
	tp_olog_write_params(&j, &g->olog);
	jtr_json_uint(&j, "wait_ns", g->tp->o.wait_ns);
	jtr_json_uint(&j, "timeout_ns", g->tp->timeout_ns);
	jtr_json_obj_end(&j);
	tp_prog_write_transport(&j, g->tp, 0);
	jtr_json_str(&j, "peer", peer);
	jtr_json_uint(&j, "reflected", g->reflected);
	tp_prog_write_rejects(&j, &g->rej, false);
	jtr_json_bool(&j, "end_of_stream", g->eos);
	jtr_json_uint(&j, "duration_ns", span);
	jtr_json_fixed(&j, "rate_hz", span && g->reflected > 1 ?
		       (double)(g->reflected - 1) * 1e9 / (double)span : 0.0, 3);
	tp_stats_write_json(&j, &g->st);
	jtr_json_obj_end(&j);
	jtr_json_arr_begin(&j, "runs");
	tp_prog_write_run(&j, p, "reflect", g->cpu, g->first_ns, g->last_ns, span, &g->reflect,
			  &g->olog);
	jtr_json_arr_end(&j);
	tp_prog_finish(p, &j, &txt, &res, &g->st, NULL, &g->olog);
}

/* waiting_line - "jtr pong: waiting for ping on KIND ADDR" on stderr */
static void waiting_line(const struct jtr_probe *p, const struct tp_prog *tp)
{
	fprintf(stderr, "%s: waiting for ping on %s %s\n", p->prog, tp_kind_name(tp->o.kind),
		tp->o.addr ? tp->o.addr : tp_default_addr(tp->o.kind));
	fflush(stderr);
}

/* parse - the options, each alone and then together, or exit 2 */
static void parse(struct jtr_probe *p, struct tp_prog *tp, struct pong *g, int argc, char **argv)
{
	bool stats_given = false, olog_given = false;
	int opt;

	while ((opt = getopt_long(argc, argv, ":" JTR_CPUS_S "a:" JTR_LEN_S JTR_FIFO_S
					JTR_OUTPUT_S JTR_QUIET_S "h" TP_PROG_SHORT, long_opts, NULL)) != -1) {
		if (opt == 't' || opt == JTR_OPT_HIST_ERROR)
			jtr_usage_error(p, "pong measures no latency: it takes no -t or --hist-error");
		if (opt == TP_OPT_STATS_EVERY || opt == TP_OPT_STATS_PRINT)
			stats_given = true;
		if (opt == JTR_OPT_THRESHOLD || opt == JTR_OPT_MAX_OUTLIERS)
			olog_given = true;
		if (jtr_probe_common_opt(p, opt, usage_text, argv) || tp_prog_opt(p, tp, opt, optarg) ||
		    tp_olog_opt(p, &g->olog, opt, optarg))
			continue;
		switch (opt) {
		case 'a':
			jtr_opt_old(p, 'a', "-c", "the CPU");
			/* fall through */
		case JTR_CPUS_C: g->cpu = tp_prog_cpu_opt(p, opt == 'a' ? "-a" : "-c", optarg); break;
		case JTR_LEN_C: tp->o.msg_max = (uint32_t)jtr_opt_count(p, "-m", optarg, TP_HDR_LEN, 1u << 24); break;
		}
	}
	jtr_probe_no_args(p, argc, argv);
	if (!p->out_opt) {
		if (stats_given)
			jtr_usage_error(p, "--stats-every and --stats-print write stats.csv into the "
					"results folder: add -o DIR");
		if (olog_given)
			jtr_usage_error(p, "--threshold and --max-outliers are for the outlier log, "
					"DIR/outliers.csv: add -o DIR");
		tp->stats_every_ns = 0;
	}
	if (!tp_prog_has(tp, TP_P_RING) && tp->o.msg_max < tp_max_msg(&tp->o))
		tp->o.msg_max = tp_max_msg(&tp->o);	/* not a ring of -m slots: take whatever comes */
	tp_prog_check(p, tp, TP_PONG);
}

/* setup - the buffer, the worker's stack, with -o the histogram, the outlier
 * log and the rows' sources */
static void setup(struct jtr_probe *p, struct tp_prog *tp, struct pong *g, struct jtr_worker *w)
{
	g->cap = tp->o.msg_max;
	g->buf = malloc(g->cap);
	if (!g->buf || jtr_worker_alloc(w, g->cpu) < 0)
		jtr_fatal(p, "out of memory");
	jtr_prefault(g->buf, g->cap);
	g->record_times = p->out_opt != NULL;
	if (g->record_times) {
		if (jtr_hist_init(&g->reflect, p->hist_error) < 0)
			jtr_fatal(p, "out of memory");
		tp_olog_init(p, &g->olog, "reflect", 0, NULL, 0);
	}
	tp_stats_init(&g->st, tp->stats_every_ns);
	g->st.print = tp->stats_print;
	tp_stats_add(&g->st, TP_STAT_SEND, &g->ssrc, w, false);
	tp_stats_add(&g->st, TP_STAT_RECV, &g->rsrc, w, false);
}

/* start - privileges (and the results folder with -o), then the transport
 * as the real user, and ping's first message within --wait (exit 2 if none
 * comes) */
static void start(struct jtr_probe *p, struct tp_prog *tp, struct pong *g)
{
	/* a stream's listener accepts ping inside the open: say it first; the
	 * others are bound or created when the open returns */
	const bool accepts = tp_prog_has(tp, TP_P_STREAM);
	int64_t end;

	if (p->out_opt) {
		jtr_probe_privileged(p);
		jtr_probe_timebase(p);
		g->tsc = p->tb.kind == JTR_TB_TSC;
		g->t2n = p->tb.t2n;
	} else {
		struct jtr_err why;

		tp_prog_privileged(p);
		g->tsc = jtr_tsc_usable(&why);
	}
	if (g->cpu >= 0 && jtr_pin_self(g->cpu) < 0)
		jtr_fatal(p, "cannot pin to CPU %d", g->cpu);
	if (!p->quiet && accepts)
		waiting_line(p, tp);
	tp->o.numa_cpu = g->cpu;
	g->t = tp_prog_open(p, tp, TP_PONG);
	if (!p->quiet && !accepts)
		waiting_line(p, tp);
	snprintf(g->desc, sizeof(g->desc), "%s", tp_describe(g->t));
	end = jtr_mono_ns() + (int64_t)tp->o.wait_ns;
	do
		g->first_n = tp_recv(g->t, g->buf, g->cap, 100 * JTR_NS_PER_MS);
	while (g->first_n == -EAGAIN && !jtr_stop && jtr_mono_ns() < end);
	if (g->first_n == -EAGAIN && !jtr_stop) {
		tp_close(g->t);
		jtr_usage_error(p, "no ping arrived on %s within %g s; start 'jtr ping' with the "
				"same -T and --addr, or wait longer (--wait)", g->desc,
				(double)tp->o.wait_ns / 1e9);
	}
}

/* run - the worker reflects the first message and every other until end
 * of stream, while this thread makes the rows */
static void run(struct jtr_probe *p, struct tp_prog *tp, struct pong *g, struct jtr_worker *w)
{
	w->fn = reflector;
	w->arg = g;
	jtr_probe_map_begin(p);
	tp_stats_start(&g->st, p);
	jtr_workers_start(p, w, 1);	/* a stop before it makes it return at once */
	tp_stats_run(&g->st, p, w, 1);
	jtr_probe_map_end(p);
	tp_prog_rejects(tp, &g->rej);
	tp_prog_warn_rejects(p, tp, &g->rej, false);
	if (g->rc < 0)
		snprintf(g->err_text, sizeof(g->err_text), "%s", tp_prog_strerror(tp, g->rc));
}

/* report - the results folder (-o), the line, the exit status */
static int report(struct jtr_probe *p, struct tp_prog *tp, struct pong *g)
{
	const char *peer = "ok";

	if (!g->eos) {
		p->partial = true;
		peer = jtr_stop ? "ok" : g->rc == -ETIMEDOUT ? "silent" : g->rc == -EPIPE ? "gone" : "error";
	}
	if (g->eos && !p->quiet)
		printf("jtr pong: reflected %llu messages on %s\n", (unsigned long long)g->reflected,
		       g->desc);
	if (p->out_opt) {
		tp_olog_settle(&g->olog);
		write_outputs(p, g, peer);
		jtr_probe_finish(p);
	}
	tp_close(g->t);	/* after the result: it reads where the ring was */
	if (g->eos)
		return jtr_probe_exit(p, 0);
	if (jtr_stop) {
		fprintf(stderr, "%s: stopped after reflecting %llu messages\n", p->prog,
			(unsigned long long)g->reflected);
		return jtr_probe_exit(p, 1);
	}
	if (g->rc == -ETIMEDOUT)
		fprintf(stderr, "%s: ping went silent for %.1f s after %llu messages (no end of "
			"stream): it stopped or died\n", p->prog, (double)tp->timeout_ns / 1e9,
			(unsigned long long)g->reflected);
	else if (g->rc == -EPIPE)
		fprintf(stderr, "%s: ping went away after %llu messages (no end of stream)\n",
			p->prog, (unsigned long long)g->reflected);
	else
		fprintf(stderr, "%s: error after %llu messages: %s\n", p->prog,
			(unsigned long long)g->reflected, g->err_text);
	return 1;
}

int main(int argc, char **argv)
{
	static struct pong g = { .cpu = -1 };
	struct jtr_probe p;
	struct tp_prog tp;
	struct jtr_worker w;

	jtr_probe_init(&p, "pong", argc, argv);
	tp_prog_init(&tp);
	tp_olog_defaults(&g.olog);
	tp.o.msg_max = 4096;
	tp.o.wait_ns = 60 * JTR_NS_PER_S;
	g.tp = &tp;

	/* 1. options */
	parse(&p, &tp, &g, argc, argv);
	setup(&p, &tp, &g, &w);
	/* 2. privileges (and the results folder with -o), then the transport as
	 * the real user, and ping's first message */
	start(&p, &tp, &g);
	/* 3. the worker reflects it and every other until end of stream, while
	 * this thread makes the rows */
	run(&p, &tp, &g, &w);
	/* 4. the results folder (-o), the line, the exit status */
	return report(&p, &tp, &g);
}
