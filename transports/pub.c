/* pub.c - jtr pub: a rate-paced publisher.
 *
 * One sending thread (-a CPU) sends COUNT messages of LEN bytes at RATE per
 * second after WARMUP unmeasured ones, busy-waiting to each intended send
 * time on a fixed schedule and catching up without skipping when it falls
 * behind, so the traffic is evenly spaced, never bursty by design. Every
 * message carries its sequence number and, unless --no-timestamps, its
 * intended and actual send times (CLOCK_MONOTONIC) for the subscribers'
 * latency. After the last one it lingers, then sends end of stream with
 * the count, so subscribers can tell tail loss from a finished run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jtr_cli.h"
#include "tp_prog.h"

static const char usage_text[] =
"usage: jtr pub [OPTIONS]\n"
"\n"
"Publish messages at a steady rate to one or more 'jtr sub'. The sending thread\n"
"busy-waits to each message's intended time on a fixed schedule and catches up\n"
"without skipping when late. For shm, tcp and unix it waits for --subs\n"
"subscribers first; for udp, unix-dgram and mcast, start the subscribers first.\n"
"\n"
"options:\n"
"  -n, --count N            measured messages (default 100000; K, M, G suffixes)\n"
"  -r, --rate RATE          messages per second (default 10000); max: no pacing\n"
"  -m, --len BYTES          message length, header included (default 64, >= 32)\n"
"  -w, --warmup N           messages sent first at the same rate, not measured\n"
"                           (default 1000)\n"
"  -l, --linger DUR         wait after the last message before end of stream\n"
"                           (default 100ms)\n"
"  -a, --cpu CPU            pin the sending thread (-1: none, the default)\n"
"      --subs N             shm, tcp, unix: subscribers to wait for (default 1)\n"
"      --no-timestamps      do not stamp messages (no clock read per message;\n"
"                           subscribers then report no latency)\n"
"      --drop-every K       for testing: skip sending every K-th message (its\n"
"                           sequence number is used up), so loss is seen\n"
"  -f, --fifo PRIO          run SCHED_FIFO at PRIO (1-99)\n"
"  -o, --output DIR         results folder (default results/DATE-HOST-pub)\n"
"      --hist-error PCT     histogram's maximum relative error (default 1)\n"
"  -q, --quiet              no summary on stdout\n"
"  -h, --help               this text\n"
"\n"
TP_PROG_USAGE
"\n"
TP_STATS_USAGE
"\n"
"A duration is NUMBER[UNIT], UNIT ns, us, ms, s, m or h; a bare number is in\n"
"seconds, but -l still reads one as ms, with a warning: write the unit (100ms).\n"
"\n"
"Writes DIR/summary.txt (inputs and results), DIR/result.json (run send_call: time\n"
"per send; transport.stats holds the rows) and DIR/stats.csv. Exit status: 0; 1\n"
"if a subscriber went away or stopped reading; 2 for bad options or subscribers\n"
"that never came; 130 after Ctrl-C, SIGTERM or SIGHUP (what was sent is\n"
"written, marked partial).\n"
"\n"
"examples:\n"
"  jtr sub -T shm & jtr pub -T shm -r 1M -n 10M        10 s at 1M msgs/s through shm\n"
"  jtr pub -T mcast -r 100K -m 700 -n 1M               700-byte multicast on loopback\n"
"  jtr pub -T tcp --subs 3 -r max -n 1M -w 10000       as fast as 3 TCP readers\n"
"                                                      take it\n";

static const struct option long_opts[] = {
	{ "count", required_argument, NULL, 'n' },
	{ "rate", required_argument, NULL, 'r' },
	{ "len", required_argument, NULL, 'm' },
	{ "warmup", required_argument, NULL, 'w' },
	{ "linger", required_argument, NULL, 'l' },
	{ "cpu", required_argument, NULL, 'a' },
	{ "subs", required_argument, NULL, TP_OPT_SUBS },
	{ "no-timestamps", no_argument, NULL, TP_OPT_NO_TS },
	{ "drop-every", required_argument, NULL, TP_OPT_DROP_EVERY },
	TP_PROG_LONG_OPTS,
	TP_STATS_LONG_OPTS,
	JTR_PROBE_LONG_OPTS,
	{ NULL, 0, NULL, 0 },
};

/* unstamped messages of up to AHEAD_MAX_LEN bytes are prepared AHEAD
 * sends ahead (see sender) */
#define AHEAD 16
#define AHEAD_MAX_LEN 4096u

struct pub {
	struct jtr_probe *p;
	struct tp_prog *tp;
	struct tp *t;
	uint64_t count, warmup, rate_hz, linger_ns, drop_every;
	uint32_t len;
	int cpu;
	bool stamps;
	unsigned char *buf;		/* ahead buffers of len bytes */
	uint32_t ahead;			/* a power of two: 1 (stamped, or long messages) or AHEAD */
	struct jtr_hist send_call;
	int64_t first_ns, last_ns;
	uint64_t issued, sent, dropped, late, max_tight;
	uint32_t subs_at_start;
	uint32_t subs_lost;		/* gone before the end of stream went out */
	int err;
	struct tp_stat_src ssrc;	/* the sending thread's interval counters */
	struct tp_stats st;
};

/* cpu_relax - a spinning core's hint */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* stat_asked - the stats thread asks for the interval's counts (the
 * load tp_stat_poll makes) */
static inline bool stat_asked(const struct tp_stat_src *s)
{
	return __atomic_load_n(&s->ask, __ATOMIC_RELAXED) != s->served;
}

/* stat_add - @n messages of @len bytes into the interval's counts (the
 * sender counts in a register, not with a store per message) */
static inline void stat_add(struct tp_stat_src *s, uint64_t n, uint32_t len)
{
	s->cur.msgs += n;
	s->cur.bytes += n * len;
}

/* prepare - an unstamped message's header for number @i: only the number,
 * unless the flags change (at the end of the warm-up) */
static inline void prepare(const struct pub *g, struct tp_msg *m, uint64_t i)
{
	uint8_t flags = i < g->warmup ? TP_F_WARMUP : 0;

	if (__builtin_expect(m->magic != TP_MAGIC || m->flags != flags, 0))
		tp_msg_fill(m, g->len, flags, i, 0, 0);
	else
		m->seq = i;
}

/* sender - the paced loop. Unstamped messages are prepared AHEAD sends
 * before they go (in a ring of AHEAD buffers): a send copies a header
 * written long before, instead of loading the number just stored, a load
 * that would wait for every store queued before it (the previous message's
 * slot, waiting for its cache line) */
static void sender(void *arg)
{
	struct pub *g = arg;
	const uint64_t total = g->warmup + g->count;
	const double per_ns = g->rate_hz ? 1e9 / (double)g->rate_hz : 0;
	struct tp_msg *m;
	struct jtr_hist sc = g->send_call;
	int64_t t0 = jtr_mono_ns(), now, sent_ns = 0, after;
	uint64_t i, tight = 0, sent = 0, counted = 0;
	int rc;

	for (i = 0; !g->stamps && i < g->ahead; i++)
		prepare(g, (struct tp_msg *)(g->buf + (size_t)i * g->len), i);
	tp_stat_thread_begin(&g->ssrc);
	for (i = 0; i < total && !jtr_stop; i++) {
		int64_t intended = t0;

		/* unpaced (-r max), the clock is read only for stamps and for the
		 * first measured message: at tens of millions of messages a second
		 * a clock read (~20 ns) would cost more than the send */
		if (g->rate_hz) {
			intended = t0 + (int64_t)((double)i * per_ns);
			now = jtr_mono_ns();
			if (now < intended) {
				tight = 0;
				while (now < intended) {
					cpu_relax();
					now = jtr_mono_ns();
				}
			} else if (i) {
				g->late++;
				if (++tight > g->max_tight)
					g->max_tight = tight;
			}
		}
		if (__builtin_expect(i == g->warmup, 0))
			g->first_ns = g->rate_hz ? intended : jtr_mono_ns();
		/* the messages sent since the last answer go into the interval
		 * before the stats thread's question is answered */
		if (__builtin_expect(stat_asked(&g->ssrc), 0)) {
			stat_add(&g->ssrc, sent - counted, g->len);
			counted = sent;
			tp_stat_poll(&g->ssrc);
		}
		if (__builtin_expect(g->drop_every && (i + 1) % g->drop_every == 0, 0)) {
			g->dropped++;	/* the number is used up, nothing is sent */
			if (!g->stamps)
				prepare(g, (struct tp_msg *)(g->buf + (size_t)(i & (g->ahead - 1)) * g->len),
					i + g->ahead);
			continue;
		}
		m = (struct tp_msg *)(g->buf + (size_t)(i & (g->ahead - 1)) * g->len);
		if (g->stamps) {
			sent_ns = jtr_mono_ns();
			tp_msg_fill(m, g->len, (uint8_t)((i < g->warmup ? TP_F_WARMUP : 0) | TP_F_STAMPED),
				    i, g->rate_hz ? intended : sent_ns, sent_ns);
		}
		rc = tp_send(g->t, m, g->len);
		if (!g->stamps)
			prepare(g, m, i + g->ahead);
		if (g->stamps) {
			after = jtr_mono_ns();
			if (i >= g->warmup)
				jtr_hist_record(&sc, (uint64_t)(after - sent_ns));
		}
		if (__builtin_expect(rc < 0, 0)) {
			g->err = rc;
			break;
		}
		sent++;
	}
	stat_add(&g->ssrc, sent - counted, g->len);
	g->sent = sent;
	tp_stat_thread_end(&g->ssrc);
	g->issued = i;
	g->last_ns = jtr_mono_ns();
	g->send_call = sc;
}

/* measured_sent - measured messages actually sent */
static uint64_t measured_sent(const struct pub *g)
{
	uint64_t warm_sent = g->issued < g->warmup ? g->issued : g->warmup;

	warm_sent -= g->drop_every ? warm_sent / g->drop_every : 0;
	return g->sent > warm_sent ? g->sent - warm_sent : 0;
}

/* duration_ns - first measured intended send to the end of the last send */
static uint64_t duration_ns(const struct pub *g)
{
	return g->first_ns && g->last_ns > g->first_ns ? (uint64_t)(g->last_ns - g->first_ns) : 0;
}

/* summary - the o_* inputs, rate, send and subscriber lines, the send-call
 * times and the resource lines */
static void summary(FILE *f, const struct jtr_probe *p, const struct pub *g)
{
	const struct jtr_hist *h = &g->send_call;
	uint64_t dur = duration_ns(g), n = measured_sent(g);

	char rate[32];

	if (g->rate_hz)
		snprintf(rate, sizeof(rate), "%llu/s", (unsigned long long)g->rate_hz);
	else
		snprintf(rate, sizeof(rate), "max rate");
	fprintf(f, "jtr pub: %s, %u-byte messages, %llu at %s (+%llu warm-up)%s\n",
		tp_describe(g->t), g->len, (unsigned long long)g->count, rate,
		(unsigned long long)g->warmup, p->partial ? ", PARTIAL" : "");
	fprintf(f, "o_rate=%llu, o_msg_len=%u, o_num_msgs=%llu, o_warmup_loops=%llu, o_linger_ms=%llu,\n",
		(unsigned long long)g->rate_hz, g->len, (unsigned long long)g->count,
		(unsigned long long)g->warmup, (unsigned long long)(g->linger_ns / JTR_NS_PER_MS));
	fprintf(f, "actual_sends=%llu, duration_ns=%llu, result_rate=%.6f,\n", (unsigned long long)n,
		(unsigned long long)dur, dur ? (double)n * 1e9 / (double)dur : 0.0);
	fprintf(f, "late_sends=%llu, max_tight_sends=%llu, dropped_on_purpose=%llu, subscribers=%u, "
		"subscribers_lost=%u\n", (unsigned long long)g->late, (unsigned long long)g->max_tight,
		(unsigned long long)g->dropped, g->subs_at_start, g->subs_lost);
	if (h->total)
		fprintf(f, "send call ns: min=%llu, p50=%llu, p99=%llu, p99.9=%llu, p99.999=%llu, max=%llu\n",
			(unsigned long long)h->min,
			(unsigned long long)jtr_hist_value_at_percentile(h, 50),
			(unsigned long long)jtr_hist_value_at_percentile(h, 99),
			(unsigned long long)jtr_hist_value_at_percentile(h, 99.9),
			(unsigned long long)jtr_hist_value_at_percentile(h, 99.999),
			(unsigned long long)h->max);
	tp_stats_summary(f, &g->st, tp_prog_recv_name(g->tp));
}

/* inputs - summary.txt's inputs block */
static void inputs(FILE *f, const struct jtr_probe *p, const struct pub *g)
{
	tp_prog_inputs(f, p, g->tp, TP_IN_HIST);
	tp_prog_input(f, "message length:", "%u bytes", g->len);
	tp_prog_input(f, "messages:", "%llu (+%llu warm-up)", (unsigned long long)g->count,
		      (unsigned long long)g->warmup);
	if (g->rate_hz)
		tp_prog_input(f, "rate:", "%llu/s", (unsigned long long)g->rate_hz);
	else
		tp_prog_input(f, "rate:", "max");
	tp_prog_input(f, "linger:", "%.3f s", (double)g->linger_ns / 1e9);
	tp_prog_input(f, "cpu:", "%d", g->cpu);
	tp_prog_input(f, "subscribers:", "%u", g->tp->o.subs);
	tp_prog_input(f, "timestamps:", "%s", g->stamps ? "yes" : "no");
	tp_prog_input(f, "drop every:", "%llu", (unsigned long long)g->drop_every);
}

/* write_outputs - summary.txt and result.json */
static void write_outputs(struct jtr_probe *p, struct pub *g, const char *peer)
{
	struct jtr_afile txt, res;
	struct jtr_json j;
	uint64_t dur = duration_ns(g);

	jtr_probe_open(p, &txt, "summary.txt");
	jtr_probe_open(p, &res, "result.json");
	summary(txt.f, p, g);
	inputs(txt.f, p, g);
	if (!p->quiet)
		summary(stdout, p, g);
	jtr_json_init(&j, res.f);
	jtr_probe_result_begin(p, &j);
	jtr_json_obj_begin(&j, "params");
	jtr_json_uint(&j, "count", g->count);
	if (g->rate_hz)
		jtr_json_uint(&j, "rate_hz", g->rate_hz);
	else
		jtr_json_null(&j, "rate_hz");
	jtr_json_uint(&j, "msg_len", g->len);
	jtr_json_uint(&j, "warmup", g->warmup);
	jtr_json_uint(&j, "linger_ns", g->linger_ns);
	if (g->cpu >= 0) jtr_json_int(&j, "cpu", g->cpu); else jtr_json_null(&j, "cpu");
	jtr_json_uint(&j, "subs", g->tp->o.subs);
	jtr_json_bool(&j, "timestamps", g->stamps);
	if (g->drop_every) jtr_json_uint(&j, "drop_every", g->drop_every); else jtr_json_null(&j, "drop_every");
	jtr_json_uint(&j, "wait_ns", g->tp->o.wait_ns);
	jtr_json_double(&j, "hist_error", p->hist_error);
	jtr_json_obj_end(&j);

	tp_prog_write_transport(&j, g->tp, g->len);
	jtr_json_str(&j, "peer", peer);
	jtr_json_uint(&j, "issued", g->issued);
	jtr_json_uint(&j, "sent", measured_sent(g));
	jtr_json_uint(&j, "sent_total", g->sent);
	jtr_json_uint(&j, "dropped_on_purpose", g->dropped);
	jtr_json_uint(&j, "late_sends", g->late);
	jtr_json_uint(&j, "max_tight_sends", g->max_tight);
	jtr_json_uint(&j, "subscribers", g->subs_at_start);
	jtr_json_uint(&j, "subscribers_lost", g->subs_lost);
	jtr_json_uint(&j, "duration_ns", dur);
	jtr_json_fixed(&j, "rate_hz", dur ? (double)measured_sent(g) * 1e9 / (double)dur : 0.0, 3);
	tp_stats_write_json(&j, &g->st);
	jtr_json_obj_end(&j);

	jtr_json_arr_begin(&j, "runs");
	tp_prog_write_run(&j, p, "send_call", g->cpu, g->first_ns, g->last_ns, dur, &g->send_call, NULL);
	jtr_json_arr_end(&j);
	tp_prog_finish(p, &j, &txt, &res, &g->st, NULL, NULL);
}

/* end_of_stream - tell the subscribers how many numbers were issued */
static void end_of_stream(struct pub *g)
{
	struct tp_msg *m = (struct tp_msg *)g->buf;
	int copies = g->tp->o.kind == TP_UDP || g->tp->o.kind == TP_MCAST ||
		     g->tp->o.kind == TP_UNIX_DGRAM ? 3 : 1;

	for (int i = 0; i < copies; i++) {
		struct timespec ts = { 0, 1000000L };

		tp_msg_fill(m, g->len, TP_F_EOS, g->issued, 0, 0);
		if (tp_send(g->t, m, g->len) < 0)
			break;
		nanosleep(&ts, NULL);
	}
}

int main(int argc, char **argv)
{
	static struct pub g = {
		.count = 100000, .warmup = 1000, .rate_hz = 10000, .len = 64,
		.linger_ns = 100 * JTR_NS_PER_MS, .cpu = -1, .stamps = true,
	};
	struct jtr_probe p;
	struct tp_prog tp;
	struct jtr_worker w;
	const char *peer = "ok";
	int opt;

	jtr_probe_init(&p, "pub", argc, argv);
	tp_prog_init(&tp);
	g.p = &p;
	g.tp = &tp;

	/* 1. options */
	while ((opt = getopt_long(argc, argv, ":n:r:m:w:l:a:f:o:qh" TP_PROG_SHORT, long_opts, NULL)) != -1) {
		if (opt == 't')
			jtr_usage_error(&p, "pub stamps messages with CLOCK_MONOTONIC, which every "
					"subscriber reads too; it takes no -t");
		if (opt == TP_OPT_LATENCY_FILE || opt == TP_OPT_LATENCY_MAX)
			jtr_usage_error(&p, "pub measures no latency: give --latency-file to 'jtr sub'");
		if (jtr_probe_common_opt(&p, opt, usage_text, argv) || tp_prog_opt(&p, &tp, opt, optarg))
			continue;
		switch (opt) {
		case 'n': g.count = jtr_opt_count(&p, "-n", optarg, 1, 1ULL << 40); break;
		case 'r': g.rate_hz = tp_prog_rate_opt(&p, optarg); break;
		case 'm': g.len = (uint32_t)jtr_opt_count(&p, "-m", optarg, TP_HDR_LEN, 1u << 24); break;
		case 'w': g.warmup = jtr_opt_count(&p, "-w", optarg, 0, 1ULL << 32); break;
		case 'l':
			g.linger_ns = jtr_opt_duration_legacy(&p, "-l", optarg, JTR_NS_PER_MS, 0,
							      3600 * JTR_NS_PER_S);
			break;
		case 'a': g.cpu = tp_prog_cpu_opt(&p, "-a", optarg); break;
		case TP_OPT_SUBS: tp.o.subs = (uint32_t)jtr_opt_count(&p, "--subs", optarg, 1, TP_MAX_SUBS); break;
		case TP_OPT_NO_TS: g.stamps = false; break;
		case TP_OPT_DROP_EVERY: g.drop_every = jtr_opt_count(&p, "--drop-every", optarg, 2, 1ULL << 40); break;
		}
	}
	jtr_probe_no_args(&p, argc, argv);
	tp.o.msg_max = g.len;
	tp_prog_check(&p, &tp, TP_PUB);
	p.tb_wanted = JTR_TB_CLOCK;

	/* 2. buffers, histogram, thread stack */
	g.ahead = !g.stamps && g.len <= AHEAD_MAX_LEN ? AHEAD : 1;
	g.buf = calloc(g.ahead, g.len);
	if (!g.buf || jtr_hist_init(&g.send_call, p.hist_error) < 0 || jtr_worker_alloc(&w, g.cpu) < 0)
		jtr_fatal(&p, "out of memory");
	tp_stats_init(&g.st, tp.stats_every_ns);
	g.st.print = tp.stats_print;
	tp_stats_add(&g.st, TP_STAT_SEND, &g.ssrc, &w, false);

	/* 3. privileges, folder, calibration, then the transport */
	jtr_probe_privileged(&p);
	jtr_probe_timebase(&p);
	tp.o.numa_cpu = g.cpu;
	g.t = tp_prog_open(&p, &tp, TP_PUB);
	g.subs_at_start = tp_peers(g.t);

	/* 4. the run, the linger, end of stream */
	w.fn = sender;
	w.arg = &g;
	jtr_probe_map_begin(&p);
	tp_stats_start(&g.st, &p);
	jtr_workers_start(&p, &w, 1);
	tp_stats_run(&g.st, &p, &w, 1);
	if (!g.err && g.linger_ns) {
		struct timespec ts = { (time_t)(g.linger_ns / JTR_NS_PER_S), (long)(g.linger_ns % JTR_NS_PER_S) };

		nanosleep(&ts, NULL);
	}
	/* subscribers that leave after the end of stream have not been lost */
	g.subs_lost = tp_peers_lost(g.t);
	if (!g.err)
		end_of_stream(&g);
	jtr_probe_map_end(&p);
	if (g.err == -EPIPE && g.sent <= 1 && (tp.o.kind == TP_UDP || tp.o.kind == TP_UNIX_DGRAM))
		jtr_usage_error(&p, "nobody is receiving on %s; start 'jtr sub' there first",
				tp_describe(g.t));
	if (g.err == -EPIPE) {
		peer = "gone";
		p.partial = true;
	} else if (g.err == -ETIMEDOUT) {
		peer = "stalled";
		p.partial = true;
	} else if (g.err) {
		peer = "error";
		p.partial = true;
	} else if (g.subs_lost) {
		peer = "some gone";
	}
	write_outputs(&p, &g, peer);
	jtr_probe_finish(&p);
	if (g.err == -EPIPE)
		fprintf(stderr, "%s: every subscriber went away after %llu messages\n", p.prog,
			(unsigned long long)g.sent);
	else if (g.err == -ETIMEDOUT)
		fprintf(stderr, "%s: a subscriber stopped reading for %.0f s after %llu messages (the "
			"ring or socket stayed full)\n", p.prog, (double)tp.o.wait_ns / 1e9,
			(unsigned long long)g.sent);
	else if (g.err)
		fprintf(stderr, "%s: sending failed after %llu messages: %s\n", p.prog,
			(unsigned long long)g.sent, tp_prog_strerror(&tp, g.err));
	else if (g.subs_lost)
		fprintf(stderr, "%s: %u subscriber(s) went away during the run\n", p.prog,
			g.subs_lost);
	opt = g.err || g.subs_lost ? 1 : 0;
	tp_close(g.t);
	return jtr_probe_exit(&p, opt);
}
