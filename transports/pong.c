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
"                           default); with --streams N, one per stream: CPU[,CPU...]\n"
"      --streams N          N streams, as 'jtr ping --streams N' sends them: each\n"
"                           its own transport (stream K: the port + K, or the shm\n"
"                           name or socket path + .K) and reflecting thread\n"
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

enum { OPT_STREAMS = 700 };

/* the most streams: each thread two sources of the rows (received, sent back) */
#define STREAMS_MAX (TP_STAT_MAX_SRC / 2)

static const struct option long_opts[] = {
	JTR_LONG(CPUS),
	{ "cpu", required_argument, NULL, JTR_CPUS_C },
	JTR_LONG(LEN),
	{ "max-len", required_argument, NULL, JTR_LEN_C },
	{ "stats-every", required_argument, NULL, TP_OPT_STATS_EVERY },
	{ "stats-print", no_argument, NULL, TP_OPT_STATS_PRINT },
	{ "streams", required_argument, NULL, OPT_STREAMS },
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
	struct tp_stats *st;		/* the run's (every stream's thread) */
	bool tsc;			/* stamps and times in TSC ticks, else CLOCK_MONOTONIC ns */
	struct jtr_ticks2ns t2n;	/* -o with tsc: ticks to ns */
	struct jtr_hist reflect;	/* -o: each measured reflection, ns */
	struct tp_olog olog;		/* -o: those over the threshold */

	/* --streams N: each stream is a copy of main's with its own address,
	 * transport, thread and figures; main's holds their sum */
	struct tp_prog tpc;		/* a stream's options, with its address */
	char addr[128];
	int nstreams;			/* 1 in each stream's copy */
	struct pong *streams;		/* main's copy: each stream's */
	int ncpus, cpus[STREAMS_MAX];	/* -c as given */
	const struct tp_olog *ologs[STREAMS_MAX];	/* main's copy: each stream's */
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

/* span_ns - first to last reflection */
static uint64_t span_ns(const struct pong *g)
{
	return g->last_ns > g->first_ns ? (uint64_t)(g->last_ns - g->first_ns) : 0;
}

/* rate_hz - reflections a second over the span */
static double rate_hz(const struct pong *g)
{
	uint64_t span = span_ns(g);

	return span && g->reflected > 1 ? (double)(g->reflected - 1) * 1e9 / (double)span : 0.0;
}

/* summary - what was reflected, CPU and memory */
static void summary(FILE *f, const struct jtr_probe *p, const struct pong *g)
{
	uint64_t span = span_ns(g);

	fprintf(f, "jtr pong: %s, %s receive%s%s\n", g->desc, tp_prog_recv_name(g->tp),
		g->nstreams > 1 ? ", the streams below; their sum" : "", p->partial ? ", PARTIAL" : "");
	for (int k = 0; g->nstreams > 1 && k < g->nstreams; k++) {
		const struct pong *e = &g->streams[k];

		fprintf(f, "  stream %d: %s, cpu %d: reflected=%llu, end_of_stream=%s%s", k,
			e->desc, e->cpu, (unsigned long long)e->reflected, e->eos ? "yes" : "no",
			e->rc ? ", FAILED" : "");
		tp_olog_stream_text(f, &e->olog);
		fputc('\n', f);
	}
	fprintf(f, "reflected=%llu, end_of_stream=%s, duration_ns=%llu, result_rate=%.6f\n",
		(unsigned long long)g->reflected, g->eos ? "yes" : "no", (unsigned long long)span,
		rate_hz(g));
	tp_prog_rejects_line(f, &g->rej, false);
	tp_olog_summary(f, &g->olog, "reflections");
	tp_stats_summary(f, g->st, tp_prog_recv_name(g->tp), true);
}

/* write_streams - transport.streams: each stream's own figures */
static void write_streams(struct jtr_json *j, const struct pong *g)
{
	jtr_json_arr_begin(j, "streams");
	for (int k = 0; k < g->nstreams; k++) {
		const struct pong *e = &g->streams[k];

		jtr_json_obj_begin(j, NULL);
		jtr_json_uint(j, "stream", (uint64_t)k);
		jtr_json_str(j, "address", e->desc);
		if (e->cpu >= 0) jtr_json_int(j, "cpu", e->cpu); else jtr_json_null(j, "cpu");
		jtr_json_uint(j, "reflected", e->reflected);
		jtr_json_bool(j, "end_of_stream", e->eos);
		jtr_json_bool(j, "failed", e->rc != 0);
		jtr_json_uint(j, "duration_ns", span_ns(e));
		jtr_json_fixed(j, "rate_hz", rate_hz(e), 3);
		jtr_json_str(j, "threshold_rule", tp_olog_rule_name(&e->olog));
		tp_olog_write_run(j, &e->olog, span_ns(e), &e->reflect);
		jtr_json_obj_end(j);
	}
	jtr_json_arr_end(j);
}

/* write_outputs - -o: summary.txt and result.json */
static void write_outputs(struct jtr_probe *p, struct pong *g, const char *peer)
{
	struct jtr_afile txt, res;
	struct jtr_json j;
	uint64_t span = span_ns(g);

	jtr_probe_open(p, &txt, "summary.txt");
	jtr_probe_open(p, &res, "result.json");
	summary(txt.f, p, g);
	tp_prog_inputs(txt.f, p, g->tp, 0);
	tp_prog_input_cpus(txt.f, g->cpus, g->ncpus, g->nstreams);
	tp_prog_input(txt.f, "streams:", "%d", g->nstreams);
	tp_prog_input(txt.f, "longest message:", "%u bytes", g->tp->o.msg_max);
	jtr_json_init(&j, res.f);
	jtr_probe_result_begin(p, &j);
	jtr_json_obj_begin(&j, "params");
	if (g->cpu >= 0) jtr_json_int(&j, "cpu", g->cpu); else jtr_json_null(&j, "cpu");
	jtr_json_uint(&j, "max_len", g->tp->o.msg_max);
	jtr_json_uint(&j, "streams", (uint64_t)g->nstreams);
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
	jtr_json_fixed(&j, "rate_hz", rate_hz(g), 3);
	if (g->nstreams > 1)
		write_streams(&j, g);
	tp_stats_write_json(&j, g->st);
	jtr_json_obj_end(&j);
	jtr_json_arr_begin(&j, "runs");
	tp_prog_write_run(&j, p, "reflect", g->cpu, g->first_ns, g->last_ns, span, &g->reflect,
			  &g->olog);
	jtr_json_arr_end(&j);
	tp_prog_finish(p, &j, &txt, &res, g->st, NULL, &g->olog);
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
		case JTR_CPUS_C:
			if (opt == 'a') {
				g->cpus[0] = g->cpu = tp_prog_cpu_opt(p, "-a", optarg);
				g->ncpus = 1;
				break;
			}
			g->ncpus = tp_prog_cpus_opt(p, "-c", optarg, g->cpus, STREAMS_MAX);
			g->cpu = g->cpus[0];
			break;
		case OPT_STREAMS:
			g->nstreams = (int)jtr_opt_count(p, "--streams", optarg, 1, STREAMS_MAX);
			break;
		case JTR_LEN_C: tp->o.msg_max = (uint32_t)jtr_opt_count(p, "-m", optarg, TP_HDR_LEN, 1u << 24); break;
		}
	}
	jtr_probe_no_args(p, argc, argv);
	if (g->ncpus > 1 && g->ncpus != g->nstreams)
		jtr_usage_error(p, "-c with %d CPUs for %d stream(s): give one CPU per stream (or "
				"one for all)", g->ncpus, g->nstreams);
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

/* setup - each stream (a copy of @g with its address and CPU, reflecting in
 * w[K]): the buffer, the worker's stack, with -o the histogram, the outlier
 * log and the rows' sources; with several, the histogram of their sum */
static void setup(struct jtr_probe *p, struct tp_prog *tp, struct pong *g, struct jtr_worker *w)
{
	const int n = g->nstreams;

	g->record_times = p->out_opt != NULL;
	tp_stats_init(g->st, tp->stats_every_ns);
	g->st->print = tp->stats_print;
	if (n > 1 && g->record_times && jtr_hist_init(&g->reflect, p->hist_error) < 0)
		jtr_fatal(p, "out of memory");
	for (int k = 0; k < n; k++) {
		struct pong *s = &g->streams[k];

		*s = *g;
		s->nstreams = 1;
		tp_prog_stream(p, tp, k, n, &s->tpc, s->addr, sizeof(s->addr));
		s->tp = &s->tpc;
		s->cpu = tp_prog_stream_cpu(g->cpus, g->ncpus, k);
		s->cap = tp->o.msg_max;
		s->buf = malloc(s->cap);
		if (!s->buf || jtr_worker_alloc(&w[k], s->cpu) < 0)
			jtr_fatal(p, "out of memory");
		jtr_prefault(s->buf, s->cap);
		if (s->record_times) {
			if (jtr_hist_init(&s->reflect, p->hist_error) < 0)
				jtr_fatal(p, "out of memory");
			tp_olog_init(p, &s->olog, "reflect", 0, NULL, 0);
		}
		tp_stats_add(g->st, TP_STAT_SEND, &s->ssrc, &w[k], false);
		tp_stats_add(g->st, TP_STAT_RECV, &s->rsrc, &w[k], false);
		g->ologs[k] = &s->olog;
	}
}

/* first_messages - each stream's first message from ping within --wait
 * (the streams in turn; ping says hello on each until pong reflects), or
 * exit 2 naming the first stream none came on */
static void first_messages(struct jtr_probe *p, struct tp_prog *tp, struct pong *g)
{
	const int n = g->nstreams;
	int64_t end = jtr_mono_ns() + (int64_t)tp->o.wait_ns;
	int waiting, k;

	for (k = 0; k < n; k++)
		g->streams[k].first_n = -EAGAIN;
	do {
		waiting = 0;
		for (k = 0; k < n; k++) {
			struct pong *s = &g->streams[k];

			if (s->first_n != -EAGAIN)
				continue;
			s->first_n = tp_recv(s->t, s->buf, s->cap, 100 * JTR_NS_PER_MS / n);
			waiting += s->first_n == -EAGAIN;
		}
	} while (waiting && !jtr_stop && jtr_mono_ns() < end);
	if (!waiting || jtr_stop)
		return;
	for (k = 0; g->streams[k].first_n != -EAGAIN; k++)
		;
	for (int i = 0; i < n; i++)
		tp_close(g->streams[i].t);
	jtr_usage_error(p, "no ping arrived on %s within %g s; start 'jtr ping' with the "
			"same -T and --addr%s, or wait longer (--wait)", g->streams[k].desc,
			(double)tp->o.wait_ns / 1e9, n > 1 ? " and --streams" : "");
}

/* start - privileges (and the results folder with -o), then each stream's
 * transport as the real user, and ping's first message on each within
 * --wait (exit 2 if none comes) */
static void start(struct jtr_probe *p, struct tp_prog *tp, struct pong *g)
{
	/* a stream's listener accepts ping inside the open: say it first; the
	 * others are bound or created when the open returns */
	const bool accepts = tp_prog_has(tp, TP_P_STREAM);
	const int n = g->nstreams;

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
	/* the main thread opens on the stream's CPU (memory near it); with
	 * several it stays where it is */
	if (n == 1 && g->cpu >= 0 && jtr_pin_self(g->cpu) < 0)
		jtr_fatal(p, "cannot pin to CPU %d", g->cpu);
	for (int k = 0; k < n; k++) {
		struct pong *s = &g->streams[k];

		s->tsc = g->tsc;
		s->t2n = g->t2n;
		if (!p->quiet && accepts)
			waiting_line(p, &s->tpc);
		s->tpc.o.numa_cpu = s->cpu;
		s->t = tp_prog_open(p, &s->tpc, TP_PONG);
		if (!p->quiet && !accepts)
			waiting_line(p, &s->tpc);
		snprintf(s->desc, sizeof(s->desc), "%s", tp_describe(s->t));
	}
	tp->t = g->streams[0].t;
	if (n > 1)
		snprintf(g->desc, sizeof(g->desc), "%.120s and %d more streams", g->streams[0].desc,
			 n - 1);
	else
		snprintf(g->desc, sizeof(g->desc), "%s", g->streams[0].desc);
	first_messages(p, tp, g);
}

/* run - each stream's worker reflects its first message and every other
 * until end of stream, while this thread makes the rows; then what each
 * turned away */
static void run(struct jtr_probe *p, struct pong *g, struct jtr_worker *w)
{
	const int n = g->nstreams;

	for (int k = 0; k < n; k++) {
		w[k].fn = reflector;
		w[k].arg = &g->streams[k];
	}
	jtr_probe_map_begin(p);
	tp_stats_start(g->st, p);
	jtr_workers_start(p, w, n);	/* a stop before it makes them return at once */
	tp_stats_run(g->st, p, w, n);
	jtr_probe_map_end(p);
	for (int k = 0; k < n; k++) {
		struct pong *s = &g->streams[k];

		tp_prog_rejects(s->tp, &s->rej);
		if (s->rc < 0)
			snprintf(s->err_text, sizeof(s->err_text), "%s", tp_prog_strerror(s->tp, s->rc));
		if (s->record_times)
			tp_olog_settle(&s->olog);
	}
}

/* settle - the run's figures: the stream's, or with several their sum in
 * @g (reflections, the span, what was turned away, the reflection times, the
 * first failure; an end of stream when every stream had its own) */
static struct pong *settle(struct jtr_probe *p, struct tp_prog *tp, struct pong *g)
{
	const int n = g->nstreams;
	struct pong *r = g;

	if (n == 1) {
		r = &g->streams[0];
		r->tp = tp;
		snprintf(r->desc, sizeof(r->desc), "%s", g->desc);
	} else {
		g->eos = true;
		for (int k = 0; k < n; k++) {
			const struct pong *e = &g->streams[k];

			g->reflected += e->reflected;
			if (e->reflected && (!g->first_ns || e->first_ns < g->first_ns))
				g->first_ns = e->first_ns;
			if (e->last_ns > g->last_ns)
				g->last_ns = e->last_ns;
			g->eos = g->eos && e->eos;
			tp_prog_add_stream(NULL, &g->rej, NULL, &e->rej, k);
			if (g->record_times)
				jtr_hist_merge(&g->reflect, &e->reflect);
			if (!g->rc && e->rc) {
				g->rc = e->rc;
				memcpy(g->err_text, e->err_text, sizeof(g->err_text));
			}
		}
		if (g->record_times)
			tp_olog_sum(p, &g->olog, g->ologs, n);
	}
	tp_prog_warn_rejects(p, tp, &r->rej, false);
	return r;
}

/* report - the results folder (-o), the line, the exit status */
static int report(struct jtr_probe *p, struct tp_prog *tp, struct pong *g, struct pong *r)
{
	const char *peer = "ok";

	if (!r->eos) {
		p->partial = true;
		peer = jtr_stop ? "ok" : r->rc == -ETIMEDOUT ? "silent" : r->rc == -EPIPE ? "gone" : "error";
	}
	if (r->eos && !p->quiet)
		printf("jtr pong: reflected %llu messages on %s\n", (unsigned long long)r->reflected,
		       r->desc);
	if (p->out_opt) {
		write_outputs(p, r, peer);
		jtr_probe_finish(p);
	}
	/* after the result: it reads where the ring was */
	for (int k = 0; k < g->nstreams; k++)
		tp_close(g->streams[k].t);
	if (r->eos)
		return jtr_probe_exit(p, 0);
	if (jtr_stop) {
		fprintf(stderr, "%s: stopped after reflecting %llu messages\n", p->prog,
			(unsigned long long)r->reflected);
		return jtr_probe_exit(p, 1);
	}
	if (r->rc == -ETIMEDOUT)
		fprintf(stderr, "%s: ping went silent for %.1f s after %llu messages (no end of "
			"stream): it stopped or died\n", p->prog, (double)tp->timeout_ns / 1e9,
			(unsigned long long)r->reflected);
	else if (r->rc == -EPIPE)
		fprintf(stderr, "%s: ping went away after %llu messages (no end of stream)\n",
			p->prog, (unsigned long long)r->reflected);
	else
		fprintf(stderr, "%s: error after %llu messages: %s\n", p->prog,
			(unsigned long long)r->reflected, r->err_text);
	return 1;
}

int main(int argc, char **argv)
{
	static struct pong g = { .cpu = -1, .nstreams = 1 };
	static struct pong streams[STREAMS_MAX];
	static struct tp_stats st;
	static struct jtr_worker w[STREAMS_MAX];
	struct jtr_probe p;
	struct tp_prog tp;

	jtr_probe_init(&p, "pong", argc, argv);
	tp_prog_init(&tp);
	tp_olog_defaults(&g.olog);
	tp.o.msg_max = 4096;
	tp.o.wait_ns = 60 * JTR_NS_PER_S;
	g.tp = &tp;
	g.st = &st;
	g.streams = streams;

	/* 1. options */
	parse(&p, &tp, &g, argc, argv);
	setup(&p, &tp, &g, w);
	/* 2. privileges (and the results folder with -o), then each stream's
	 * transport as the real user, and ping's first message on each */
	start(&p, &tp, &g);
	/* 3. the workers reflect it and every other until end of stream, while
	 * this thread makes the rows */
	run(&p, &g, w);
	/* 4. the results folder (-o), the line, the exit status */
	return report(&p, &tp, &g, settle(&p, &tp, &g));
}
