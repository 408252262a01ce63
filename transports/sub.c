// SPDX-License-Identifier: GPL-2.0-only
/* sub.c - jtr sub: a subscriber that counts, checks order and measures.
 *
 * One receiving thread per stream (-a CPU[,CPU...], --streams N) takes every
 * message, the messages of a packed unit one by one: its sequence number
 * goes through tp_seq (lost, duplicated, reordered), and unless -f its
 * latency from the publisher's send time and from its intended send time is
 * recorded (both CLOCK_MONOTONIC, one machine or namespaces of one). -s adds
 * an empty loop per message, work that makes a slower receiver;
 * --max-rate caps how fast messages are taken (a receiver of known speed,
 * for testing jtr maxrate). The publisher's end of stream carries its count,
 * so tail loss is counted too.
 *
 * What cannot be the publisher's is counted and dropped, never measured:
 * the library turns away malformed messages and, on datagrams, those from
 * another sender than the first; here, stamps outside the run's time window
 * (sent before this subscriber opened its transport or after it received
 * the message, or intended after sent) are forged, and a sequence number or
 * end-of-stream count beyond what the publisher can have issued by now
 * (tp_seq_limit_at) is out of window.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jtr_cli.h"
#include "tp_prog.h"
#include "tp_zip.h"
#include "tp_ring.h"

static const char usage_text[] =
"usage: jtr sub [OPTIONS]\n"
"\n"
"Receive what 'jtr pub' publishes: count the messages, find lost, duplicated and\n"
"reordered ones by sequence number, measure the rate, and the latency of each\n"
"message from the publisher's send time and from its intended send time. Ends at\n"
"the publisher's end of stream.\n"
"\n"
"options:\n"
JTR_CPUS_HELP "          pin the receiving thread (-1: none, the default); with\n"
"                           --streams N, one CPU per stream: CPU[,CPU...]\n"
"      --streams N          N streams, as 'jtr pub --streams N' sends them: each its\n"
"                           own transport and pinned receiving thread; sums and\n"
"                           each stream; outliers.csv holds every stream's\n"
"                           outliers (its stream column), latency.K.csv stream\n"
"                           K's latencies; each stream its own threshold and\n"
"                           room for --max-outliers and --latency-max\n"
"      --fast               minimal per-message work: counts and sequence only,\n"
"                           no latency\n"
"      --verify             check every message's payload against the pattern\n"
"                           the publisher writes from its number; exit 1 if any\n"
"                           differs\n"
"  -s, --spin N             an empty loop of N iterations per message\n"
"      --max-rate RATE      for testing: take at most RATE messages per second\n"
"                           (waits for each one's turn; a late wake-up is made\n"
"                           up for, up to 5 ms behind), a receiver of known\n"
"                           speed: datagrams overflow, a ring or socket fills\n"
JTR_FIFO_HELP "          run SCHED_FIFO at PRIO (1-99)\n"
JTR_OUTPUT_HELP "         results folder (default results/DATE-HOST-sub)\n"
"      --hist-error PCT     histogram's maximum relative error (default 1)\n"
TP_OLOG_USAGE("latencies",
"                           (the publisher's -w warm-up messages give m)\n")
JTR_QUIET_HELP "              no summary on stdout, no 'ready' line on stderr\n"
"  -h, --help               this text\n"
"\n"
TP_PROG_USAGE
"\n"
TP_STATS_USAGE
TP_LATENCY_USAGE
"                           (latency here is from the publisher's send time)\n"
"\n"
"Prints 'jtr sub: ready on KIND ADDR' on stderr once it can receive. Writes\n"
"DIR/summary.txt (inputs and results), DIR/result.json (runs latency_from_send,\n"
"latency_from_intended; transport.stats holds the rows), DIR/stats.csv,\n"
"DIR/outliers.csv (cpu,start_ns,length_ns,kind,seq: each latency over the\n"
"threshold from its send stamp; not with --fast) and, with --latency-file,\n"
"DIR/latency.csv.\n"
"Exit status: 0 at end of stream (loss is counted, not an error), 1 if the\n"
"publisher went away or went silent (what was received is written) or, with\n"
"--verify, a message's payload was not the publisher's, 2 for bad\n"
"options or no publisher within --wait, 130 after Ctrl-C, SIGTERM or SIGHUP\n"
"before the end of stream (what was received is written, marked partial).\n"
"\n"
JTR_OLD_HELP " -a LIST (-c), -f\n"
"without a value (--fast: a -f followed by another option or by nothing; -f PRIO\n"
"is the FIFO priority).\n"
"\n"
"examples:\n"
"  jtr sub -T shm -c 1 --fast        counts and order only, CPU 1, a shm ring\n"
"  jtr sub -T shm -c 1 --fast --verify\n"
"                                    the same, every payload checked\n"
"  jtr sub -T mcast -s 4             multicast on loopback, 4 spins per message\n"
"  jtr sub -T tcp -P 10.0.0.1:17391  from a publisher in another namespace\n"
"  jtr sub -T tcp --recv epoll --latency-file   epoll receive, every sample kept\n"
"  jtr sub -T udp -P [::1]:17391 -b  IPv6 on loopback, busy-poll\n";

/* getopt values of sub's own long options (tp_prog.h's are 400 up) */
enum { OPT_STREAMS = 500, OPT_FAST, OPT_VERIFY };

static const struct option long_opts[] = {
	JTR_LONG(CPUS),
	{ "cpu", required_argument, NULL, JTR_CPUS_C },
	{ "fast", no_argument, NULL, OPT_FAST },
	{ "verify", no_argument, NULL, OPT_VERIFY },
	{ "spin", required_argument, NULL, 's' },
	{ "max-rate", required_argument, NULL, TP_OPT_MAX_RATE },
	JTR_PROBE_LONG_OPTS,
	JTR_PROBE_OUTLIER_LONG_OPTS,
	TP_PROG_LONG_OPTS,
	TP_STATS_LONG_OPTS,
	{ "streams", required_argument, NULL, OPT_STREAMS },
	{ NULL, 0, NULL, 0 },
};

/* the most streams (one receiving thread each) */
#define STREAMS_MAX TP_STAT_MAX_SRC

/* one stream's receiver (with several, main's copy holds their sum) */
struct sub {
	struct jtr_probe *p;
	struct tp_prog *tp;
	struct tp_prog tpc;		/* a stream's options, with its address */
	char addr[128];
	struct tp *t;
	int cpu;
	bool fast;
	bool verify;			/* --verify: every payload checked */
	uint64_t mismatched;		/* messages whose payload was not their number's */
	uint64_t spin;
	uint64_t max_rate;		/* --max-rate, 0: none */
	unsigned char *buf;
	size_t cap;
	struct tp_zip zip;		/* expands what pub --compress sent */
	unsigned char *zbuf;		/* an expanded message */
	struct tp_frag_rx frag;		/* a message put together from pub --max-fragment's */
	struct jtr_hist from_send, from_intended;
	struct tp_seq seq;
	uint64_t measured, warm, eos_count;
	int64_t open_ns;		/* before the transport opened: no stamp is older */
	int64_t seq_t0;			/* when the first sequence number was noted */
	struct tp_rejects rej;		/* forged and out of window here, the rest the library's */
	int64_t first_ns, last_ns;
	bool eos;
	int err;			/* -ETIMEDOUT silent, -EPIPE gone, -ENOENT never came */
	struct tp_stat_src rsrc;	/* the receiving thread's interval counters */
	struct tp_stats *st;		/* the run's (all streams') */
	int nstreams;			/* --streams */
	struct sub *streams;		/* main's copy: each stream's */
	int ncpus;			/* CPUs -a gave (0: none) */
	int cpus[STREAMS_MAX];
	struct tp_latlog lat;		/* the stream's (main's copy with several: none) */
	struct tp_olog olog;		/* latencies from the send over the threshold (main's
					 * copy with several: their sum) */
	const struct tp_olog *ologs[STREAMS_MAX];	/* main's copy: each stream's */
};

/* a --max-rate receiver may fall this far behind its schedule and still catch
 * up: a sleep that overshoots (a loaded or virtualised host wakes late, often by
 * more than one period) does not lower the ceiling; a backlog found after an
 * idle spell is taken at most this much early */
#define TURN_CREDIT_NS ((int64_t)(5 * JTR_NS_PER_MS))

/* take_turn - --max-rate: wait until the next message's turn, one period
 * after this one's, with up to TURN_CREDIT_NS (or one period) of credit;
 * sleeps, then spins the last 60 us */
static void take_turn(int64_t *turn, int64_t now, int64_t per_ns)
{
	const int64_t credit_ns = per_ns > TURN_CREDIT_NS ? per_ns : TURN_CREDIT_NS;
	int64_t t;

	if (*turn < now - credit_ns)
		*turn = now - credit_ns;
	*turn += per_ns;
	t = *turn - 60000;
	if (t > jtr_mono_ns()) {
		struct timespec ts = { (time_t)(t / JTR_NS_PER_S), (long)(t % JTR_NS_PER_S) };

		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	while (jtr_mono_ns() < *turn && !jtr_stop) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	}
}

/* a stamp this far after the receive time is still the clock's, not forged:
 * CLOCK_MONOTONIC read on two CPUs */
#define STAMP_SLACK_NS ((int64_t)JTR_NS_PER_MS)

/* stamps_ok - @m's stamps lie in the run's window: opened <= intended <=
 * sent <= received */
static inline bool stamps_ok(const struct tp_msg *m, int64_t open_ns, int64_t now)
{
	const int64_t intended = tp_msg_intended(m);

	return intended >= open_ns && intended <= m->sent_ns &&
	       m->sent_ns <= now + STAMP_SLACK_NS;
}

/* limit_now - the highest number the publisher can have issued by @now */
static inline uint64_t limit_now(const struct sub *g, int64_t now)
{
	return g->seq.started ? tp_seq_limit_at(&g->seq, (uint64_t)(now - g->seq_t0)) : UINT64_MAX;
}

/* LAZY_EVERY - a lazy clock (see receiver) is read at least once per this
 * many messages */
#define LAZY_EVERY 64

/* the receiving loop's clock (the receiver's helpers are inline, so these
 * stay in registers) */
struct rx {
	int64_t now;		/* the time taken for the message in hand */
	int64_t last;		/* when the last message came (0: none yet) */
	int64_t turn;		/* --max-rate: the next message's turn */
	uint32_t untimed;	/* lazy: messages taken since the clock was read */
	bool fresh;		/* now was read for this unit */
	bool last_stale;	/* lazy: last_ns is an earlier message's time */
};

/* quiet - nothing came within a receive's wait: true when the run is over
 * (no publisher within --wait, or one silent for --timeout) */
static inline bool quiet(struct sub *g, struct rx *x, int64_t start)
{
	x->now = jtr_mono_ns();
	if (!x->last && x->now - start >= (int64_t)g->tp->o.wait_ns) {
		g->err = -ENOENT;
		return true;
	}
	if (x->last && x->now - x->last >= (int64_t)g->tp->timeout_ns) {
		g->err = -ETIMEDOUT;
		return true;
	}
	return false;
}

/* clock_for - the time of unit @m: read, or with a lazy clock the last one
 * read, while it is fresh enough (see receiver); @rd: the ring read in place
 * (NULL: polled through the transport) */
static inline __attribute__((always_inline)) void clock_for(struct sub *g, const struct tp_msg *m,
							    bool lazy, const struct tp_ring_rd *rd,
							    struct rx *x)
{
	if (!lazy || !g->measured || (m->flags & (TP_F_STAMPED | TP_F_EOS | TP_F_HELLO)) ||
	    ++x->untimed >= LAZY_EVERY ||
	    (rd ? !tp_ring_available(rd) : tp_poll(g->t, 0) != 1)) {
		x->now = jtr_mono_ns();
		x->untimed = 0;
		x->fresh = true;
	} else {
		x->fresh = false;
	}
	x->last = x->now;
}

/* control - an end of stream (true: the run is over) or a hello */
static bool control(struct sub *g, const struct tp_msg *m, const struct rx *x)
{
	if (!(m->flags & TP_F_EOS))
		return false;
	/* a count: at least what came, at most what can have been issued */
	if (g->seq.started && (m->seq < g->seq.next || m->seq - 1 > limit_now(g, x->now))) {
		g->rej.out_of_window++;
		return false;
	}
	/* the end of stream was in the ring already when the last message was
	 * taken: that one's time is now */
	if (x->last_stale)
		g->last_ns = x->now;
	g->eos = true;
	g->eos_count = m->seq;
	return true;
}

/* record - a measured message's latencies: the histograms, the interval's,
 * the latency file, the outlier log */
static inline __attribute__((always_inline)) void record(struct sub *g, const struct tp_msg *m,
							 int64_t now, struct jtr_hist *hs,
							 struct jtr_hist *hi)
{
	/* (a sent stamp up to STAMP_SLACK_NS ahead is 0) */
	uint64_t ls = now > m->sent_ns ? (uint64_t)(now - m->sent_ns) : 0;

	jtr_hist_record(hs, ls);
	jtr_hist_record(hi, now > tp_msg_intended(m) ? (uint64_t)(now - tp_msg_intended(m)) : 0);
	tp_stat_lat(&g->rsrc, ls);
	tp_latlog_add(&g->lat, m->seq, (uint64_t)m->sent_ns, (uint64_t)now);
	if (g->olog.on && __builtin_expect(tp_olog_over(&g->olog, ls), 0))
		tp_olog_note(&g->olog, (uint64_t)m->sent_ns, ls, m->seq, NULL);
}

/* take - one message of a unit: judged (stamps, sequence number), counted,
 * measured, then the work of -s and the wait of --max-rate. A sequence
 * number above the limit of a stale time is judged again with a fresh one
 * (the limit only grows). */
static inline __attribute__((always_inline)) void take(struct sub *g, const struct tp_msg *m,
						       struct rx *x, struct jtr_hist *hs,
						       struct jtr_hist *hi, int64_t per_ns)
{
	if ((m->flags & TP_F_STAMPED) && __builtin_expect(!stamps_ok(m, g->open_ns, x->now), 0)) {
		g->rej.forged++;
		return;
	}
	g->seq.limit = limit_now(g, x->now);
	if (__builtin_expect(m->seq > g->seq.limit && !x->fresh, 0)) {
		x->now = x->last = jtr_mono_ns();
		x->untimed = 0;
		g->seq.limit = limit_now(g, x->now);
	}
	switch (tp_seq_note(&g->seq, m->seq)) {
	case TP_SEQ_DUP:
	case TP_SEQ_STALE:
	case TP_SEQ_OUT_OF_WINDOW:
		return;
	default:
		break;
	}
	if (__builtin_expect(!g->seq_t0, 0))
		g->seq_t0 = x->now;
	if (g->verify && __builtin_expect(!tp_payload_ok(m), 0))
		g->mismatched++;
	tp_stat_msg(&g->rsrc, m->len);
	if (m->flags & TP_F_WARMUP) {
		g->warm++;
		if (g->olog.on && (m->flags & TP_F_STAMPED))
			tp_olog_warm(&g->olog, x->now > m->sent_ns ? (uint64_t)(x->now - m->sent_ns) : 0);
	} else {
		if (!g->measured)
			g->first_ns = x->now;
		g->last_ns = x->now;
		x->last_stale = !x->fresh;
		g->measured++;
		if (!g->fast && (m->flags & TP_F_STAMPED))
			record(g, m, x->now, hs, hi);
	}
	if (g->spin)
		jtr_null_loop(g->spin);
	if (per_ns)
		take_turn(&x->turn, x->now, per_ns);
}

/* changed - message @m of *@n bytes carried changed (TP_F_EXT): the message
 * expanded or, at its last fragment, put together (*@n its length); NULL
 * while more fragments are to come (*@n 0) or for what is malformed (*@n < 0) */
static const struct tp_msg *changed(struct sub *g, const struct tp_msg *m, ssize_t *n)
{
	const struct tp_msg *u;

	if (tp_ext_is_frag(m, (size_t)*n)) {
		*n = tp_frag_take(&g->frag, m, (size_t)*n);
		u = (const struct tp_msg *)(void *)g->frag.buf;
	} else {
		*n = tp_zip_unpack(&g->zip, m, (size_t)*n, g->zbuf, g->cap);
		u = (const struct tp_msg *)(void *)g->zbuf;
	}
	if (*n > 0 && !tp_msg_ok(u, (size_t)*n))
		*n = -EBADMSG;
	return *n > 0 ? u : NULL;
}

/* receiver - the loop. The clock is read for each message, except with a
 * lazy clock (-f on a ring, where a message can cost less than a clock
 * read): then it is read for the first measured message, for stamped ones,
 * at least every LAZY_EVERY messages, and whenever the ring holds no next
 * message (a poll of the next slot's stamp, no system call), so that the
 * last message before a pause, and so the last one of the run, has the time
 * it was taken. So what is counted is what a clock read per message would
 * count. There a message waiting in the ring is read in place (tp_shm_reader:
 * no call), and the transport's receive is called when none is, and at least
 * every TP_CLAIM_EVERY messages. */
static void receiver(void *arg)
{
	struct sub *g = arg;
	struct jtr_hist hs = g->from_send, hi = g->from_intended;
	const struct tp_msg *m = (const struct tp_msg *)g->buf, *u0;
	const int64_t start = jtr_mono_ns();
	const int64_t per_ns = g->max_rate ? (int64_t)(1e9 / (double)g->max_rate) : 0;
	/* a ring's receive costs less than a clock read, and its poll is a load */
	const bool lazy = g->fast && !per_ns && tp_prog_has(g->tp, TP_P_RING);
	struct tp_ring_rd *const rd = lazy ? tp_shm_reader(g->t) : NULL;
	struct rx x = { .now = start };
	uint32_t inline_reads = 0;
	ssize_t n;

	tp_stat_thread_begin(&g->rsrc);
	if (g->olog.on)
		tp_olog_cpu(&g->olog, g->cpu);
	while (!jtr_stop) {
		tp_stat_poll(&g->rsrc);
		if (rd && ++inline_reads % TP_CLAIM_EVERY && tp_ring_available(rd)) {
			n = tp_ring_read(rd, g->buf, g->cap);
			if (__builtin_expect(n < 0 || !tp_msg_check(m, (size_t)n), 0)) {
				tp_reject_malformed(g->t);
				continue;
			}
		} else {
			n = tp_recv(g->t, g->buf, g->cap, 100 * JTR_NS_PER_MS);
		}
		if (n == -EAGAIN) {
			if (quiet(g, &x, start))
				break;
			continue;
		}
		if (n < 0) {
			g->err = (int)n;
			break;
		}
		/* pub --compress: expanded first, as a library would before the
		 * application sees it (its time is in the latency); pub
		 * --max-fragment: put together, the time taken at the last
		 * fragment */
		u0 = m;
		if (__builtin_expect(m->flags & TP_F_EXT, 0)) {
			u0 = changed(g, m, &n);
			if (!u0) {
				if (n < 0)
					tp_reject_malformed(g->t);
				continue;
			}
		}
		clock_for(g, u0, lazy, rd, &x);
		if (__builtin_expect(u0->flags & (TP_F_EOS | TP_F_HELLO), 0)) {
			if (control(g, u0, &x))
				break;
			continue;
		}
		/* the unit's messages one by one (more than one when packed) */
		for (const struct tp_msg *u = u0;; u = tp_msg_next(u)) {
			take(g, u, &x, &hs, &hi, per_ns);
			if (!(u->flags & TP_F_PACKED))
				break;
		}
	}
	tp_stat_thread_end(&g->rsrc);
	g->from_send = hs;
	g->from_intended = hi;
}

/* span_ns - first to last measured message */
static uint64_t span_ns(const struct sub *g)
{
	return g->last_ns > g->first_ns ? (uint64_t)(g->last_ns - g->first_ns) : 0;
}

/* rate_hz - measured messages per second over the span */
static double rate_hz(const struct sub *g)
{
	return span_ns(g) && g->measured > 1 ? (double)(g->measured - 1) * 1e9 / (double)span_ns(g) : 0;
}

#define PCT(h, v) ((unsigned long long)jtr_hist_value_at_percentile((h), (v)))

/* latency_table - the latencies from the send and from the intended time */
static void latency_table(FILE *f, const struct sub *g)
{
	const struct jtr_hist *hs = &g->from_send, *hi = &g->from_intended;
	char label[32];

	fprintf(f, "\n  %-16s %16s %16s\n", "latency ns", "from send", "from intended");
	fprintf(f, "  %-16s %16llu %16llu\n", "samples", (unsigned long long)hs->total,
		(unsigned long long)hi->total);
	fprintf(f, "  %-16s %16llu %16llu\n", "min", (unsigned long long)hs->min, (unsigned long long)hi->min);
	for (int k = 0; k < JTR_NPCT; k++) {
		snprintf(label, sizeof(label), "p%s", jtr_pct_keys[k]);
		fprintf(f, "  %-16s %16llu %16llu\n", label, PCT(hs, jtr_pct_values[k]), PCT(hi, jtr_pct_values[k]));
	}
	fprintf(f, "  %-16s %16llu %16llu\n", "max", (unsigned long long)hs->max, (unsigned long long)hi->max);
	fprintf(f, "  %-16s %16.1f %16.1f\n", "mean", jtr_hist_mean(hs), jtr_hist_mean(hi));
}

/* um_perf - --legacy-output=um_perf: the lines um_perf_sub printed, as it
 * printed them: its options (no configuration file: "(null)"), and at the end
 * of stream the messages received with the warm-up and, when it measured
 * them, the latencies from the send (min, max, average, ns) */
static void um_perf(FILE *f, const struct sub *g)
{
	const struct jtr_hist *hs = &g->from_send;
	const char *peer = tp_peer_name(g->t);

	fprintf(f, "o_affinity_cpu=%d, o_config=(null), o_fast=%d, o_spin_cnt=%llu, o_topic='%s',\n",
		g->cpu, g->fast ? 1 : 0, (unsigned long long)g->spin, tp_describe(g->t));
	if (!g->eos)
		return;
	fprintf(f, "rcv event EOS, '%s', %s, num_rcv_msgs=%llu,", tp_describe(g->t),
		peer && *peer ? peer : "-", (unsigned long long)(g->measured + g->warm));
	if (hs->total)
		fprintf(f, " min_latency=%llu, max_latency=%llu, average latency=%llu,",
			(unsigned long long)hs->min, (unsigned long long)hs->max,
			(unsigned long long)(hs->sum / hs->total));
	fputc('\n', f);
}

/* summary - the latency table, the counts and the CPU; with @legacy
 * (summary.txt, --legacy-output) the predecessors' lines too: duration_ns=,
 * result_rate=, the phases table, and the table last, as before */
static void summary(FILE *f, const struct jtr_probe *p, const struct sub *g, bool legacy)
{
	const struct jtr_hist *hs = &g->from_send;

	fprintf(f, "jtr sub: %s, %s receive%s%s%s\n", tp_describe(g->t),
		tp_prog_recv_name(g->tp), g->fast ? ", fast" : "",
		g->nstreams > 1 ? ", the streams below; their sum" : "", p->partial ? ", PARTIAL" : "");
	for (int k = 0; g->nstreams > 1 && k < g->nstreams; k++) {
		const struct sub *e = &g->streams[k];

		fprintf(f, "  stream %d: %s, cpu %d: received=%llu, lost=%llu, rate=%.1f, "
			"end_of_stream=%s%s", k, tp_describe(e->t), e->cpu,
			(unsigned long long)e->measured, (unsigned long long)e->seq.lost, rate_hz(e),
			e->eos ? "yes" : "no", e->err ? ", FAILED" : "");
		tp_olog_stream_text(f, &e->olog);
		fputc('\n', f);
	}
	if (!legacy && hs->total) {
		latency_table(f, g);
		fputc('\n', f);
	}
	fprintf(f, "received=%llu (+%llu warm-up), lost=%llu, duplicates=%llu, reordered=%llu, "
		"stale=%llu, end_of_stream=%s", (unsigned long long)g->measured,
		(unsigned long long)g->warm, (unsigned long long)g->seq.lost,
		(unsigned long long)g->seq.duplicates, (unsigned long long)g->seq.reordered,
		(unsigned long long)g->seq.stale, g->eos ? "yes" : "no");
	if (g->eos)
		fprintf(f, " (publisher issued %llu)", (unsigned long long)g->eos_count);
	fputc('\n', f);
	if (legacy || tp_prog_rejected(&g->rej))
		tp_prog_rejects_line(f, &g->rej, true);
	if (g->verify)
		fprintf(f, "payload: verified=%llu, mismatched=%llu\n",
			(unsigned long long)g->seq.received, (unsigned long long)g->mismatched);
	if (g->olog.on)
		tp_olog_summary(f, &g->olog, "latencies");
	if (legacy)
		fprintf(f, "duration_ns=%llu, result_rate=%.6f\n", (unsigned long long)span_ns(g),
			rate_hz(g));
	else
		fprintf(f, "received at %.1f/s in %.3f s\n", rate_hz(g), (double)span_ns(g) / 1e9);
	tp_stats_summary(f, g->st, tp_prog_recv_name(g->tp), legacy);
	if (legacy && hs->total)
		latency_table(f, g);
}

/* inputs - summary.txt's inputs block */
static void inputs(FILE *f, const struct jtr_probe *p, const struct sub *g)
{
	tp_prog_inputs(f, p, g->tp, TP_IN_HIST | TP_IN_LATENCY_FILE);
	tp_prog_input_cpus(f, g->cpus, g->ncpus, g->nstreams);
	tp_prog_input(f, "streams:", "%d", g->nstreams);
	tp_prog_input(f, "fast:", "%s", g->fast ? "yes (no latency)" : "no");
	tp_prog_input(f, "verify:", "%s", g->verify ? "yes (every payload)" : "no");
	tp_prog_input(f, "spin:", "%llu", (unsigned long long)g->spin);
	if (g->max_rate)
		tp_prog_input(f, "max rate:", "%llu/s", (unsigned long long)g->max_rate);
	else
		tp_prog_input(f, "max rate:", "none");
	tp_prog_zip_input(f, &g->zip, false);
	tp_prog_frags_input(f, NULL, &g->frag);
}

/* write_run - one latency run */
static void write_run(struct jtr_json *j, const struct jtr_probe *p, const struct sub *g,
		      const char *name, const struct jtr_hist *h, const struct tp_olog *o)
{
	tp_prog_write_run(j, p, name, g->cpu, g->first_ns, g->last_ns, span_ns(g), h, o);
}

/* write_streams - transport.streams: each stream's own figures */
static void write_streams(struct jtr_json *j, const struct sub *g)
{
	jtr_json_arr_begin(j, "streams");
	for (int k = 0; k < g->nstreams; k++) {
		const struct sub *e = &g->streams[k];
		const struct jtr_hist *h = &e->from_send;

		jtr_json_obj_begin(j, NULL);
		jtr_json_uint(j, "stream", (uint64_t)k);
		jtr_json_str(j, "address", tp_describe(e->t));
		if (e->cpu >= 0) jtr_json_int(j, "cpu", e->cpu); else jtr_json_null(j, "cpu");
		jtr_json_bool(j, "end_of_stream", e->eos);
		if (e->eos) jtr_json_uint(j, "publisher_issued", e->eos_count);
		else jtr_json_null(j, "publisher_issued");
		jtr_json_uint(j, "measured", e->measured);
		jtr_json_uint(j, "warmup_received", e->warm);
		tp_prog_write_seq(j, &e->seq);
		jtr_json_bool(j, "failed", e->err != 0);
		jtr_json_uint(j, "duration_ns", span_ns(e));
		jtr_json_fixed(j, "rate_hz", rate_hz(e), 3);
		if (h->total) {
			jtr_json_uint(j, "latency_p50_ns", jtr_hist_value_at_percentile(h, 50));
			jtr_json_uint(j, "latency_max_ns", h->max);
		}
		tp_latlog_write_json(j, &e->lat);
		if (e->olog.on) {
			jtr_json_str(j, "threshold_rule", tp_olog_rule_name(&e->olog));
			tp_olog_write_run(j, &e->olog, span_ns(e), h);
		}
		jtr_json_obj_end(j);
	}
	jtr_json_arr_end(j);
}

/* write_outputs - summary.txt and result.json */
static void write_outputs(struct jtr_probe *p, struct sub *g, const char *peer)
{
	struct jtr_afile txt, res;
	struct jtr_json j;

	jtr_probe_open(p, &txt, tp_stats_summary_name(g->st));
	jtr_probe_open(p, &res, "result.json");
	summary(txt.f, p, g, true);
	inputs(txt.f, p, g);
	if (!p->quiet && g->tp->legacy_style == TP_LEGACY_UM_PERF)
		um_perf(stdout, g);
	else if (!p->quiet)
		summary(stdout, p, g, g->tp->legacy_output);
	jtr_json_init(&j, res.f);
	jtr_probe_result_begin(p, &j);
	jtr_json_obj_begin(&j, "params");
	if (g->cpu >= 0) jtr_json_int(&j, "cpu", g->cpu); else jtr_json_null(&j, "cpu");
	jtr_json_uint(&j, "streams", (uint64_t)g->nstreams);
	jtr_json_bool(&j, "fast", g->fast);
	jtr_json_bool(&j, "verify", g->verify);
	jtr_json_uint(&j, "spin", g->spin);
	if (g->max_rate) jtr_json_uint(&j, "max_rate", g->max_rate); else jtr_json_null(&j, "max_rate");
	jtr_json_uint(&j, "wait_ns", g->tp->o.wait_ns);
	jtr_json_uint(&j, "timeout_ns", g->tp->timeout_ns);
	jtr_json_double(&j, "hist_error", p->hist_error);
	if (g->olog.on)
		tp_olog_write_params(&j, &g->olog);
	jtr_json_obj_end(&j);

	tp_prog_write_transport(&j, g->tp, 0);
	jtr_json_str(&j, "peer", peer);
	jtr_json_bool(&j, "end_of_stream", g->eos);
	if (g->eos) jtr_json_uint(&j, "publisher_issued", g->eos_count);
	else jtr_json_null(&j, "publisher_issued");
	jtr_json_uint(&j, "measured", g->measured);
	jtr_json_uint(&j, "warmup_received", g->warm);
	tp_prog_write_seq(&j, &g->seq);
	tp_prog_write_rejects(&j, &g->rej, true);
	tp_prog_write_zip(&j, &g->zip, false);
	tp_prog_write_frags(&j, NULL, &g->frag);
	if (g->verify) {
		jtr_json_obj_begin(&j, "payload");
		jtr_json_uint(&j, "verified", g->seq.received);
		jtr_json_uint(&j, "mismatched", g->mismatched);
		jtr_json_obj_end(&j);
	} else {
		jtr_json_null(&j, "payload");
	}
	jtr_json_uint(&j, "duration_ns", span_ns(g));
	jtr_json_fixed(&j, "rate_hz", rate_hz(g), 3);
	tp_latlog_write_json(&j, &g->lat);
	if (g->nstreams > 1)
		write_streams(&j, g);
	tp_stats_write_json(&j, g->st);
	jtr_json_obj_end(&j);

	jtr_json_arr_begin(&j, "runs");
	write_run(&j, p, g, "latency_from_send", &g->from_send, &g->olog);
	write_run(&j, p, g, "latency_from_intended", &g->from_intended, NULL);
	jtr_json_arr_end(&j);
	tp_prog_finish(p, &j, &txt, &res, g->st, &g->lat, &g->olog);
}

/* add_up - the streams' sum into @g (main's copy): counts, sequence
 * figures, what was turned away, histograms, the span, the first failure */
static void add_up(struct sub *g, const struct sub *streams, int n)
{
	g->t = streams[0].t;
	g->eos = true;
	for (int k = 0; k < n; k++) {
		const struct sub *e = &streams[k];

		jtr_hist_merge(&g->from_send, &e->from_send);
		jtr_hist_merge(&g->from_intended, &e->from_intended);
		g->measured += e->measured;
		tp_zip_add(&g->zip, &e->zip);
		tp_frag_rx_add(&g->frag, &e->frag);
		g->warm += e->warm;
		g->mismatched += e->mismatched;
		g->eos_count += e->eos_count;
		g->eos = g->eos && e->eos;
		tp_prog_add_stream(&g->seq, &g->rej, &e->seq, &e->rej, k);
		if (e->measured && (!g->first_ns || e->first_ns < g->first_ns))
			g->first_ns = e->first_ns;
		if (e->last_ns > g->last_ns)
			g->last_ns = e->last_ns;
		if (!g->err)
			g->err = e->err;
	}
}

/* old_fast - @opt is the -f of old, a flag (now --fast): a short -f at the
 * end, or followed by another option (given back to getopt), where -f PRIO
 * takes a number; true then */
static bool old_fast(struct jtr_probe *p, struct sub *g, int opt, char **argv)
{
	struct jtr_err e;
	long long prio;

	if (opt == ':' && optopt == JTR_FIFO_C && strncmp(argv[optind - 1], "--", 2))
		goto old;
	if (opt != JTR_FIFO_C || jtr_parse_int(optarg, LLONG_MIN, LLONG_MAX, &prio, &e) == 0 ||
	    optind < 2 || optarg != argv[optind - 1] || optarg[0] != '-' ||
	    !strncmp(argv[optind - 2], "--", 2))
		return false;
	optind--;			/* the next option, read again */
old:
	jtr_opt_old(p, 'f', "--fast", "a fast subscriber; -f PRIO is the FIFO priority");
	g->fast = true;
	return true;
}

/* parse - the options, each alone and then together, or exit 2 */
static void parse(struct jtr_probe *p, struct tp_prog *tp, struct sub *g, int argc, char **argv)
{
	const char *cpus_opt = "-c";
	bool olog_given = false;
	int opt, n;

	while ((opt = getopt_long(argc, argv, ":" JTR_CPUS_S "a:" JTR_FIFO_S "s:" JTR_OUTPUT_S
				  JTR_QUIET_S "h" TP_PROG_SHORT, long_opts, NULL)) != -1) {
		if (old_fast(p, g, opt, argv))
			continue;
		if (opt == OPT_FAST || opt == OPT_VERIFY) {
			*(opt == OPT_FAST ? &g->fast : &g->verify) = true;
			continue;
		}
		if (opt == JTR_OPT_THRESHOLD || opt == JTR_OPT_MAX_OUTLIERS)
			olog_given = true;
		if (jtr_probe_common_opt(p, opt, usage_text, argv) || tp_prog_opt(p, tp, opt, optarg) ||
		    tp_olog_opt(p, &g->olog, opt, optarg))
			continue;
		switch (opt) {
		case 'a':
			jtr_opt_old(p, 'a', "-c", "the CPUs");
			/* fall through */
		case JTR_CPUS_C:
			cpus_opt = opt == 'a' ? "-a" : "-c";
			g->ncpus = tp_prog_cpus_opt(p, cpus_opt, optarg, g->cpus, STREAMS_MAX);
			g->cpu = g->cpus[0];
			break;
		case 's': g->spin = jtr_opt_count(p, "-s", optarg, 0, 1ULL << 40); break;
		case TP_OPT_MAX_RATE: g->max_rate = jtr_opt_count(p, "--max-rate", optarg, 1, 1000000000ULL); break;
		case OPT_STREAMS: g->nstreams = (int)jtr_opt_count(p, "--streams", optarg, 1, STREAMS_MAX); break;
		}
	}
	jtr_probe_no_args(p, argc, argv);
	tp_prog_legacy_only(p, tp, TP_LEGACY_UM_PERF);
	n = g->nstreams;
	if (g->fast && tp->latency_file)
		jtr_usage_error(p, "--latency-file with --fast: a fast subscriber measures no latency; "
				"drop one of them");
	if (g->fast && olog_given)
		jtr_usage_error(p, "--threshold and --max-outliers with --fast: a fast subscriber "
				"measures no latency and keeps no outlier log; drop one of them");
	if (g->ncpus > 1 && g->ncpus != n)
		jtr_usage_error(p, "%s with %d CPUs for %d stream(s): give one CPU per stream (or "
				"one CPU for one stream)", cpus_opt, g->ncpus, n);
	tp->o.msg_max = tp_max_msg(&tp->o) < TP_STREAM_MAX ? tp_max_msg(&tp->o) : TP_STREAM_MAX;
	tp_prog_check(p, tp, TP_SUB);
	p->tb_wanted = JTR_TB_CLOCK;
}

/* setup - each stream (a copy of @g): its address, buffers, histograms,
 * logs, thread stack */
static void setup(struct jtr_probe *p, struct tp_prog *tp, struct sub *g, struct jtr_worker *w)
{
	const int n = g->nstreams;

	g->cap = tp->o.msg_max;
	if (jtr_hist_init(&g->from_send, p->hist_error) < 0 ||
	    jtr_hist_init(&g->from_intended, p->hist_error) < 0)
		jtr_fatal(p, "out of memory");
	tp_stats_init(g->st, tp->stats_every_ns);
	g->st->print = tp->stats_print;
	tp_stats_set_opts(g->st, p, &tp->stats_opts);
	for (int k = 0; k < n; k++) {
		struct sub *s = &g->streams[k];

		*s = *g;
		tp_prog_stream(p, tp, k, n, &s->tpc, s->addr, sizeof(s->addr));
		s->tp = &s->tpc;
		s->cpu = tp_prog_stream_cpu(g->cpus, g->ncpus, k);
		s->buf = malloc(s->cap);
		s->zbuf = malloc(s->cap);
		if (!s->buf || !s->zbuf || tp_zip_init(&s->zip, false, 0, 0) < 0 ||
		    jtr_hist_init(&s->from_send, p->hist_error) < 0 ||
		    jtr_hist_init(&s->from_intended, p->hist_error) < 0 ||
		    jtr_worker_alloc(&w[k], s->cpu) < 0)
			jtr_fatal(p, "out of memory");
		jtr_prefault(s->buf, s->cap);
		jtr_prefault(s->zbuf, s->cap);
		tp_seq_init(&s->seq);
		s->olog.on = false;
		if (tp->latency_file && !g->fast && tp_latlog_alloc(&s->lat, tp->latency_max) < 0)
			jtr_fatal(p, "out of memory for %llu latency samples; lower --latency-max",
				  (unsigned long long)tp->latency_max);
		if (n > 1)
			snprintf(s->lat.name, sizeof(s->lat.name), "latency.%d.csv", k);
		if (!g->fast)
			tp_olog_init(p, &s->olog, "latency", 0, NULL, 0);
		g->ologs[k] = &s->olog;
		tp_stats_add(g->st, TP_STAT_RECV, &s->rsrc, &w[k], !g->fast);
	}
}

/* open_streams - each stream's transport, then "ready" */
static void open_streams(struct jtr_probe *p, struct tp_prog *tp, struct sub *g, struct jtr_worker *w)
{
	for (int k = 0; k < g->nstreams; k++) {
		struct sub *s = &g->streams[k];

		s->tpc.o.numa_cpu = s->cpu;
		s->open_ns = jtr_mono_ns();
		s->t = tp_prog_open(p, &s->tpc, TP_SUB);
		if (!p->quiet) {
			fprintf(stderr, "%s: ready on %s\n", p->prog, tp_describe(s->t));
			fflush(stderr);
		}
		w[k].fn = receiver;
		w[k].arg = s;
	}
	tp->t = g->streams[0].t;
}

/* run - the receiving threads and the rows */
static void run(struct jtr_probe *p, struct sub *g, struct jtr_worker *w)
{
	jtr_probe_map_begin(p);
	tp_stats_start(g->st, p);
	jtr_workers_start(p, w, g->nstreams);
	tp_stats_run(g->st, p, w, g->nstreams);
	jtr_probe_map_end(p);
}

/* settle - each stream's end (exit 2 when no publisher ever came), then the
 * run's figures: the stream's, or with several their sum in @g */
static struct sub *settle(struct jtr_probe *p, struct tp_prog *tp, struct sub *g)
{
	const int n = g->nstreams;
	struct sub *r;

	for (int k = 0; k < n; k++) {
		struct sub *s = &g->streams[k];

		if (s->err == -ENOENT)
			jtr_usage_error(p, "no publisher sent anything on %s within %g s; start 'jtr "
					"pub' with the same -T and --addr%s, or wait longer (--wait)",
					tp_describe(s->t), (double)tp->o.wait_ns / 1e9,
					n > 1 ? " and --streams" : "");
		if (s->eos)
			tp_seq_end(&s->seq, s->eos_count, true);
		s->rej.out_of_window += s->seq.out_of_window;
		tp_prog_rejects(&s->tpc, &s->rej);
		if (s->olog.on)
			tp_olog_settle(&s->olog);
	}
	if (n > 1) {
		add_up(g, g->streams, n);
		if (g->streams[0].olog.on)
			tp_olog_sum(p, &g->olog, g->ologs, n);
		return g;
	}
	r = &g->streams[0];
	r->nstreams = 1;
	r->tp = tp;
	return r;
}

/* report - the warnings, the results folder, the line saying why the run
 * ended short, the exit status */
static int report(struct jtr_probe *p, struct tp_prog *tp, struct sub *r, int nstreams)
{
	const char *peer = r->err == -ETIMEDOUT ? "silent" : r->err == -EPIPE ? "gone" :
			   r->err ? "error" : "ok";
	int rc = 1;

	p->partial = p->partial || r->err;
	if (r->seq.lost)
		jtr_warn(p, "%llu messages lost", (unsigned long long)r->seq.lost);
	if (r->mismatched)
		jtr_warn(p, "%llu of %llu messages carried a payload other than the one their "
			 "number gives: changed between the publisher and here",
			 (unsigned long long)r->mismatched, (unsigned long long)r->seq.received);
	tp_prog_warn_rejects(p, tp, &r->rej, true);
	for (int k = 0; k < nstreams; k++)
		tp_latlog_write(nstreams > 1 ? &r->streams[k].lat : &r->lat, p, false);
	if (r->olog.on)
		tp_olog_settle(&r->olog);
	write_outputs(p, r, peer);
	jtr_probe_finish(p);
	if (r->err == -ETIMEDOUT)
		fprintf(stderr, "%s: the publisher went silent for %.1f s after %llu messages, without "
			"end of stream: it stopped or died\n", p->prog, (double)tp->timeout_ns / 1e9,
			(unsigned long long)r->seq.received);
	else if (r->err == -EPIPE)
		fprintf(stderr, "%s: the publisher went away after %llu messages, without end of "
			"stream\n", p->prog, (unsigned long long)r->seq.received);
	else if (r->err)
		fprintf(stderr, "%s: receiving failed after %llu messages: %s\n", p->prog,
			(unsigned long long)r->seq.received, tp_prog_strerror(tp, r->err));
	else if (r->mismatched)
		fprintf(stderr, "%s: %llu messages' payloads were not the publisher's (see the "
			"warning above)\n", p->prog, (unsigned long long)r->mismatched);
	else
		rc = 0;
	for (int k = 0; k < nstreams; k++)
		tp_close(r->streams[k].t);
	return jtr_probe_exit(p, rc);
}

int main(int argc, char **argv)
{
	static struct sub g = { .cpu = -1, .nstreams = 1 };
	static struct sub streams[STREAMS_MAX];
	static struct jtr_worker w[STREAMS_MAX];
	static struct tp_stats st;
	struct jtr_probe p;
	struct tp_prog tp;

	jtr_probe_init(&p, "sub", argc, argv);
	tp_prog_init(&tp);
	tp_olog_defaults(&g.olog);
	g.p = &p;
	g.tp = &tp;
	g.st = &st;
	g.streams = streams;

	/* 1. options */
	parse(&p, &tp, &g, argc, argv);
	/* 2. each stream: its address, buffers, histograms, thread stack */
	setup(&p, &tp, &g, w);
	/* 3. privileges, folder, calibration, the transports */
	jtr_probe_privileged(&p);
	jtr_probe_timebase(&p);
	open_streams(&p, &tp, &g, w);
	/* 4. the run */
	run(&p, &g, w);
	/* 5. the results: the stream's, or the streams' sum */
	return report(&p, &tp, settle(&p, &tp, &g), g.nstreams);
}
