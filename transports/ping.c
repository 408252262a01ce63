// SPDX-License-Identifier: GPL-2.0-only
/* ping.c - jtr ping: round-trip latency at a constant rate, through jtr pong.
 *
 * A sending thread (-A CPU) sends on a fixed schedule, waiting for each
 * intended send time (tp_load.h's pacing: a sleep, then a spin) and
 * catching up without skipping when it is late; a receiving thread (-a CPU)
 * takes pong's reflections.
 * Each message carries its intended and its actual send time, so every
 * round trip is recorded twice: from the intended time (what a client that
 * wanted to send then saw: coordinated-omission correct, a stalled sender
 * shows) and from the actual send (the transport alone). Both go into
 * lossless histograms: percentiles to 99.999 are always real numbers.
 *
 * A reply must be one of ping's own messages come back: the library turns
 * away malformed ones and, on an unconnected socket (mcast), those from
 * another sender than the first pong that answered; here, a reply whose
 * number ping has not sent yet is out of window, and one whose stamps (ping's
 * own timebase) lie outside the run (before it started, after the reply
 * came, or intended after sent) is forged. Neither is measured.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jtr_cli.h"
#include "tp_prog.h"

static const char usage_text[] =
"usage: jtr ping [OPTIONS]\n"
"\n"
"Send messages at a constant rate to 'jtr pong', which reflects them, and measure\n"
"each round trip. A sending and a receiving thread, each pinned if asked.\n"
"Every round trip is measured from the message's intended send time (the schedule:\n"
"correct under coordinated omission, a stalled sender shows) and from its actual\n"
"send time (the transport alone); both are reported, with percentiles to 99.999\n"
"from a lossless histogram.\n"
"\n"
"options:\n"
JTR_COUNT_HELP "        measured messages (default 10000; K, M, G suffixes)\n"
JTR_DURATION_HELP "  send for DURATION instead of a count\n"
"      --steady DUR         send for the start-up (--startup) and then DUR, the\n"
"                           steady state's length (the summary's steady phase)\n"
JTR_RATE_HELP "          messages per second (default 1000; max: no pacing)\n"
JTR_LEN_HELP "          message length, header included (default 64, >= 24;\n"
"                           from 32 on a message carries its intended send time,\n"
"                           from 48 pong's receive and send times)\n"
"  -w, --warmup N           messages sent first, not measured (default 100)\n"
"      --warmup-rate RATE   the warm-up's own rate (default: -r's; max)\n"
"      --spin               busy-wait all the way to each send (default: sleep\n"
"                           until 100 us before it, then spin)\n"
"  -l, --linger DUR         after the last send, wait at most DUR for the replies\n"
"                           still out; later ones are lost (default: --timeout)\n"
JTR_CPUS_HELP "          RECV[,SEND]: pin the receiving thread, then the\n"
"                           sending one (-1: none, the default); with --streams\n"
"                           N, each stream's receiving thread: CPU[,CPU...]\n"
"      --recv-cpu CPU       pin the receiving thread alone\n"
"      --send-cpu CPU       pin the sending thread alone (--streams N: each\n"
"                           stream's: CPU[,CPU...])\n"
"      --streams N          N streams to 'jtr pong --streams N', each its own\n"
"                           transport (stream K: the port + K, or the shm name or\n"
"                           socket path + .K) and threads, at -r each; sums and\n"
"                           each stream; outliers.csv holds every stream's round\n"
"                           trips (a stream column), latency.K.csv stream K's\n"
"  -1, --one-thread         one thread sends and takes each reply before the next\n"
"                           send (one message in flight, like sockperf ping-pong):\n"
"                           busy-poll on two CPUs; pinned with -c CPU; a reply\n"
"                           that does not come within --timeout ends the run\n"
"  -t, --timebase TB        tsc (default) or clock: how times are read\n"
"  -H, --histo-buckets N,NS a histogram of N buckets of NS ns (a bare number: ns;\n"
"                           300,1us) of the round trips from the send, beside the\n"
"                           lossless one: --legacy-output=um_lat prints it (its\n"
"                           default there: 300,1000); one stream\n"
JTR_FIFO_HELP "          run SCHED_FIFO at PRIO (1-99)\n"
JTR_OUTPUT_HELP "         results folder (default results/DATE-HOST-ping)\n"
"      --hist-error PCT     histogram's maximum relative error (default 1)\n"
TP_OLOG_USAGE("round trips", "")
"      --stall-at N --stall DUR\n"
"                           for testing: the sender stops for DUR before measured\n"
"                           message N, as a descheduled client would\n"
JTR_QUIET_HELP "              no summary on stdout\n"
"  -h, --help               this text\n"
"\n"
TP_PROG_USAGE
"\n"
TP_STATS_USAGE
TP_LATENCY_USAGE
"                           (ping: at most -n; latency here is the round trip\n"
"                           from the actual send, times in CLOCK_MONOTONIC ns)\n"
"\n"
"A duration is NUMBER[UNIT], UNIT ns, us, ms, s, m or h; a bare number is in\n"
"seconds, but --stall still reads one as ms, with a warning: write the unit.\n"
"\n"
JTR_OLD_HELP " -a CPU (-c CPU,\n"
"the receiving thread), -A CPU (--send-cpu).\n"
"\n"
"Writes DIR/summary.txt (inputs and results), DIR/result.json (jtr-result/1: runs\n"
"rtt_from_intended, rtt_from_send and send_call; transport.stats holds the rows),\n"
"DIR/stats.csv, DIR/outliers.csv (cpu,start_ns,length_ns,kind,seq,send_ns,sent_ns,\n"
"peer_rx_ns,peer_tx_ns: each round trip over the threshold, from its intended\n"
"send, stamped by ping's send call and, when the message has room, pong's\n"
"receive and send; 0: not known) and, with --latency-file, DIR/latency.csv.\n"
"Exit status: 0 when every reply came back (lost replies are counted and warned\n"
"about), 1 if pong went away or went silent (what was received is still\n"
"written), 2 for bad options or no pong within --wait, 130 after Ctrl-C,\n"
"SIGTERM or SIGHUP (what came back is written, marked partial).\n"
"\n"
"examples:\n"
"  jtr pong -T udp & jtr ping -T udp              10000 UDP round trips at 1000/s\n"
"  jtr ping -T shm -b -c 0,1 -r 100K -n 1M        shm, busy-poll, pinned threads\n"
"  jtr pong -T shm -b -c 1 & jtr ping -T shm -b -1 -c 0 -r 100K\n"
"                                                 busy-poll ping-pong on two CPUs\n"
"  jtr ping -T tcp -m 1024 -r 50K -n 500K -w 5    1 KB messages at 50K/s over TCP\n"
"  jtr ping -T tcp -P [::1]:17391 --recv epoll    IPv6, epoll receive\n"
"  jtr ping -T udp --latency-file --stats-every 500ms   every sample, 2 rows a second\n"
"  jtr ping -T udp -m 24 -r 50K -n 500K -w 5 -H 300,1000 --legacy-output=um_lat\n"
"                                                 round trips in the earlier lines\n";

enum { OPT_SEND_CPU = 700, OPT_RECV_CPU, OPT_STREAMS };

/* the most streams: two threads each (a sending and a receiving one), each a
 * source of the rows */
#define STREAMS_MAX (TP_STAT_MAX_SRC / 2)

static const struct option long_opts[] = {
	JTR_LONG(COUNT),
	JTR_LONG(RATE),
	JTR_LONG(LEN),
	{ "warmup", required_argument, NULL, 'w' },
	{ "warmup-rate", required_argument, NULL, TP_OPT_WARMUP_RATE },
	{ "steady", required_argument, NULL, TP_OPT_STEADY },
	{ "spin", no_argument, NULL, TP_OPT_SPIN },
	JTR_LONG(DURATION),
	{ "linger", required_argument, NULL, 'l' },
	JTR_LONG(CPUS),
	{ "send-cpu", required_argument, NULL, OPT_SEND_CPU },
	{ "recv-cpu", required_argument, NULL, OPT_RECV_CPU },
	{ "one-thread", no_argument, NULL, '1' },
	{ "streams", required_argument, NULL, OPT_STREAMS },
	{ "timebase", required_argument, NULL, 't' },
	{ "histo-buckets", required_argument, NULL, 'H' },
	{ "stall-at", required_argument, NULL, TP_OPT_STALL_AT },
	{ "stall", required_argument, NULL, TP_OPT_STALL },
	JTR_PROBE_OUTLIER_LONG_OPTS,
	TP_PROG_LONG_OPTS,
	TP_STATS_LONG_OPTS,
	JTR_PROBE_LONG_OPTS,
	{ NULL, 0, NULL, 0 },
};

/* -H N,NS: N buckets of NS ns and the overflows, the histogram the tools jtr
 * replaces kept (its counts are printed with --legacy-output=um_lat) */
struct fixed_hist {
	uint64_t *counts;		/* NULL without -H */
	uint64_t n, ns_per, over;
};

#define FIXED_MAX (1U << 20)		/* buckets at most */
#define UM_LAT_DEFAULT_N 300		/* --legacy-output=um_lat without -H */
#define UM_LAT_DEFAULT_NS 1000

/* fixed_record - one round trip of @ns into its bucket (a division: only with -H) */
static inline void fixed_record(struct fixed_hist *f, uint64_t ns)
{
	uint64_t i = ns / f->ns_per;

	if (i < f->n)
		f->counts[i]++;
	else
		f->over++;
}

/* fixed_opt - -H N,NS (NS a bare number of ns, as the tools jtr replaces took
 * it, or a duration with its unit) */
static void fixed_opt(struct jtr_probe *p, struct fixed_hist *f, const char *arg)
{
	char n[32];
	const char *comma = strchr(arg, ',');
	size_t len = comma ? (size_t)(comma - arg) : strlen(arg);
	char *end;

	if (!comma || len == 0 || len >= sizeof(n) || !comma[1])
		jtr_usage_error(p, "-H %s: give BUCKETS,NS_PER_BUCKET, e.g. -H 300,1000 (300 "
				"buckets of 1 us)", arg);
	memcpy(n, arg, len);
	n[len] = '\0';
	f->n = jtr_opt_count(p, "-H", n, 1, FIXED_MAX);
	errno = 0;
	f->ns_per = strtoull(comma + 1, &end, 10);
	if (errno || *end || end == comma + 1)	/* not a bare number: a duration */
		f->ns_per = jtr_opt_duration(p, "-H", comma + 1, 1, JTR_NS_PER_S);
	if (!f->ns_per || f->ns_per > JTR_NS_PER_S)
		jtr_usage_error(p, "-H %s: a bucket of 1 ns to 1 s", arg);
}

/* send-call ends kept for the outlier log's sent_ns: a reply more than
 * this many messages behind its send finds its slot reused (sent_ns 0) */
#define SEND_ENDS 4096u

/* one message's send-call end, its slot written by the sender and read
 * by the receiver only for an outlier: seq1 (its number + 1) is 0 while the
 * slot changes, so a read between two equal seq1 is whole */
struct send_end {
	uint64_t seq1;
	uint64_t end_raw;
};

/* the outlier log's stamps; pong's are TSC ticks where the TSC is usable */
static const char *const stamp_names[] = { "send", "sent", "peer_rx", "peer_tx" };
#define STAMPS_PEER_TSC 0xcu

struct ping {
	struct jtr_probe *p;
	struct tp_prog *tp;
	struct tp *t;
	struct tp_load load;		/* -m, -n, -d, -r, -w, --warmup-rate (-d: count 2^40) */
	uint64_t linger_ns;		/* -l: how long replies are awaited after the last send */
	uint64_t duration_raw;		/* -d in timebase units */
	int send_cpu, recv_cpu;
	bool one_thread;		/* --one-thread: the sender takes each reply */
	bool old_cpus;			/* given with -a and -A, the old letters */
	uint64_t stall_at, stall_ns;
	bool tsc;
	bool peer_tsc;			/* pong's stamps are TSC ticks (the TSC is usable) */
	double raw_per_s;		/* timebase units a second (the schedule's) */
	struct jtr_ticks2ns t2n;
	unsigned char *sbuf, *rbuf;
	size_t rcap;

	/* sender */
	struct jtr_hist send_call;
	uint64_t first_raw, last_send_raw;
	uint64_t late, max_tight;
	uint64_t max_flight;		/* the most messages sent and not yet back, at a send */
	int send_err;
	int64_t send_end_mono;
	volatile uint64_t sent __attribute__((aligned(64)));
	volatile uint64_t issued;	/* stored before each send: replies to come are below */
	volatile uint64_t total;	/* messages the run sends: set when the sender ends */
	volatile int send_done;

	/* receiver */
	struct jtr_hist from_intended __attribute__((aligned(64)));
	struct jtr_hist from_send;
	struct fixed_hist fixed;	/* -H: fixed buckets of the round trips from the send */
	struct tp_seq seq;
	uint64_t last_recv_raw;
	uint64_t start_raw;		/* before the first send: no stamp is older */
	uint64_t slack_raw;		/* a stamp this far past a receive is the clock's */
	uint64_t issued_seen;		/* the receiver's copy of issued, reloaded when short */
	struct tp_rejects rej;		/* forged and out of window here */
	struct tp_olog olog;		/* round trips from the intended send over the threshold */
	struct send_end *ends;		/* SEND_ENDS slots */
	int recv_err;
	volatile int abort_run;

	/* statistics: each thread's interval counters, the rows (the run's, every
	 * stream's threads), every sample */
	struct tp_stat_src ssrc, rsrc;
	struct tp_stats *st;
	struct tp_latlog lat;

	/* --streams N: each stream is a copy of main's with its own address,
	 * transport, threads and figures; main's holds their sum */
	struct tp_prog tpc;		/* a stream's options, with its address */
	char addr[128];
	int nstreams;			/* 1 in each stream's copy */
	struct ping *streams;		/* main's copy: each stream's */
	int ncpus, cpus[STREAMS_MAX];	/* -c as given */
	int nsend, send_cpus[STREAMS_MAX];	/* --send-cpu as given */
	const char *cpus_arg;
	const struct tp_olog *ologs[STREAMS_MAX];	/* main's copy: each stream's */
};

/* now_raw - a timestamp in the timebase's units */
static inline uint64_t now_raw(bool tsc)
{
	return tsc ? jtr_rdtsc_ordered() : (uint64_t)jtr_mono_ns();
}

/* to_ns - a timebase delta in ns */
static inline uint64_t to_ns(const struct ping *g, uint64_t d)
{
	return g->tsc ? jtr_ticks2ns(&g->t2n, d) : d;
}

/* cpu_relax - a spinning core's hint */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* send_end_of - the end of message @seq's send call, or 0 when its slot
 * holds another message's (or is being written) */
static uint64_t send_end_of(const struct ping *g, uint64_t seq)
{
	const struct send_end *e = &g->ends[seq & (SEND_ENDS - 1)];
	uint64_t s1 = __atomic_load_n(&e->seq1, __ATOMIC_ACQUIRE);
	uint64_t end = __atomic_load_n(&e->end_raw, __ATOMIC_RELAXED);

	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (s1 != seq + 1 || __atomic_load_n(&e->seq1, __ATOMIC_RELAXED) != s1)
		return 0;
	return end;
}

/* log_outlier - an outlier round trip of reply @m (@n bytes) that came at
 * @now: from its intended send, with ping's send-call stamps and pong's echoed
 * ones. A send-call end noted after the reply came (the sending thread was held
 * between its send and its stamp) is not when the call ended: 0, unknown */
static __attribute__((noinline)) void log_outlier(struct ping *g, const struct tp_msg *m, size_t n,
						  uint64_t len_ns, uint64_t now)
{
	uint64_t end = send_end_of(g, m->seq);
	uint64_t st[4] = { (uint64_t)m->sent_ns, end <= now ? end : 0, 0, 0 };
	/* pong's clock must be the one the log maps: its TSC where ours is usable */
	const unsigned want = g->peer_tsc ? TP_F_ECHO_TSC : TP_F_ECHO;

	if ((m->flags & (TP_F_ECHO | TP_F_ECHO_TSC)) == want && n >= TP_ECHO_OFF + TP_ECHO_LEN) {
		struct tp_echo e;

		memcpy(&e, (const unsigned char *)m + TP_ECHO_OFF, sizeof(e));
		if (e.rx_ns > 0 && e.rx_ns <= e.tx_ns) {
			st[2] = (uint64_t)e.rx_ns;
			st[3] = (uint64_t)e.tx_ns;
		}
	}
	tp_olog_note(&g->olog, (uint64_t)tp_msg_intended(m), len_ns, m->seq, st);
}

/* recv_one - take one reflection and record both round trips: 1 when a
 * measured or warm-up reply was counted, 0 when nothing (or a message that is
 * not one) came, -1 when the receiving is over (g->recv_err says why) */
static inline int recv_one(struct ping *g, struct jtr_hist *hi, struct jtr_hist *hs,
			   int64_t *quiet_since)
{
	const struct tp_msg *m = (const struct tp_msg *)g->rbuf;
	uint64_t now, intended;
	ssize_t n;

	tp_stat_poll(&g->rsrc);
	n = tp_recv(g->t, g->rbuf, g->rcap, 100 * JTR_NS_PER_MS);
	if (n == -EAGAIN) {
		int64_t mono = jtr_mono_ns();

		if (jtr_stop || g->abort_run)
			return -1;
		if (__atomic_load_n(&g->send_done, __ATOMIC_ACQUIRE)) {
			/* the rest are lost unless they come within the timeout */
			return mono - g->send_end_mono >= (int64_t)g->linger_ns ? -1 : 0;
		}
		if (__atomic_load_n(&g->sent, __ATOMIC_ACQUIRE) > g->seq.received) {
			if (!*quiet_since)
				*quiet_since = mono;
			else if (mono - *quiet_since >= (int64_t)g->tp->timeout_ns) {
				g->recv_err = -ETIMEDOUT;
				return -1;
			}
		}
		return 0;
	}
	if (n < 0) {
		g->recv_err = (int)n;
		return -1;
	}
	now = now_raw(g->tsc);
	if (m->flags & (TP_F_HELLO | TP_F_EOS))
		return 0;
	if (__builtin_expect(m->flags & TP_F_PACKED, 0)) {
		g->rej.forged++;	/* ping never packs: not a reply to it */
		return 0;
	}
	/* only a number already sent can come back (reload the count when short) */
	if (__builtin_expect(m->seq >= g->issued_seen, 0) &&
	    m->seq >= (g->issued_seen = __atomic_load_n(&g->issued, __ATOMIC_ACQUIRE))) {
		g->rej.out_of_window++;
		return 0;
	}
	intended = (uint64_t)tp_msg_intended(m);
	if (__builtin_expect(intended < g->start_raw || intended > (uint64_t)m->sent_ns ||
			     (uint64_t)m->sent_ns > now + g->slack_raw, 0)) {
		g->rej.forged++;
		return 0;
	}
	switch (tp_seq_note(&g->seq, m->seq)) {
	case TP_SEQ_DUP:
	case TP_SEQ_STALE:
		return 0;
	default:
		break;
	}
	*quiet_since = 0;
	g->last_recv_raw = now;
	tp_stat_msg(&g->rsrc, (uint64_t)n);
	{
		/* (a stamp up to slack_raw past now, another CPU's clock, is 0) */
		uint64_t sent = (uint64_t)m->sent_ns;
		uint64_t rtt = to_ns(g, now > sent ? now - sent : 0);
		uint64_t from_intended = to_ns(g, now > intended ? now - intended : 0);

		if (m->flags & TP_F_WARMUP) {
			tp_olog_warm(&g->olog, from_intended);
			return 1;
		}
		jtr_hist_record(hi, from_intended);
		jtr_hist_record(hs, rtt);
		if (__builtin_expect(g->fixed.counts != NULL, 0))
			fixed_record(&g->fixed, rtt);
		tp_stat_lat(&g->rsrc, rtt);
		tp_latlog_add(&g->lat, m->seq, (uint64_t)m->sent_ns, now);
		if (__builtin_expect(tp_olog_over(&g->olog, from_intended), 0))
			log_outlier(g, m, (size_t)n, from_intended, now);
	}
	return 1;
}

/* stall - --stall: the sender stops, as a descheduled client would */
static __attribute__((noinline)) void stall(const struct ping *g)
{
	uint64_t s0 = (uint64_t)jtr_mono_ns();

	while ((uint64_t)jtr_mono_ns() - s0 < g->stall_ns)
		cpu_relax();
}

/* wait_turn - message @i's turn: the stall before it, if asked for, then a
 * spin to @intended; a paced send that begins after its time is late
 * (@tight: late ones in a row), counted among the measured sends only (a
 * warm-up's late sends made "late on 100 % of sends (30099 of 30000)"). The
 * time it begins. */
static inline __attribute__((always_inline)) uint64_t wait_turn(struct ping *g, bool tsc, uint64_t i,
								 uint64_t intended, bool paced,
								 uint64_t *tight)
{
	uint64_t now;

	if (__builtin_expect(g->stall_ns && i == g->load.warmup + g->stall_at, 0))
		stall(g);
	now = now_raw(tsc);
	if (now < intended) {
		*tight = 0;
		const uint64_t ahead_ns = g->load.spin ? 0 : to_ns(g, intended - now);

		if (ahead_ns > TP_SPIN_NS) {
			tp_nap(jtr_mono_ns() + (int64_t)ahead_ns - TP_SPIN_NS);
			now = now_raw(tsc);
		}
		while (now < intended && !g->abort_run) {
			cpu_relax();
			now = now_raw(tsc);
		}
	} else if (paced && i && i >= g->load.warmup) {
		g->late++;
		if (++*tight > g->max_tight)
			g->max_tight = *tight;
	}
	return now;
}

/* note_sent - message @i went, its send call ending at @after: its slot of
 * send-call ends (the outlier log's), the count the receiver reads, the
 * most in flight, the interval's counts */
static inline __attribute__((always_inline)) void note_sent(struct ping *g, uint64_t i, uint64_t after)
{
	struct send_end *e = &g->ends[i & (SEND_ENDS - 1)];
	uint64_t flight;

	__atomic_store_n(&e->seq1, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&e->end_raw, after, __ATOMIC_RELEASE);
	__atomic_store_n(&e->seq1, i + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&g->sent, i + 1, __ATOMIC_RELEASE);
	flight = i + 1 - __atomic_load_n(&g->seq.received, __ATOMIC_RELAXED);
	if (flight > g->max_flight && flight <= i + 1)
		g->max_flight = flight;
	tp_stat_msg(&g->ssrc, g->load.len);
	tp_stat_poll(&g->ssrc);
}

/* sender - the paced loop: wait for the intended time, stamp, send (and
 * with --one-thread take the reply) */
static void sender(void *arg)
{
	struct ping *g = arg;
	const bool tsc = g->tsc;
	const uint64_t total = g->load.warmup + g->load.count;
	struct tp_msg *m = (struct tp_msg *)g->sbuf;
	struct jtr_hist sc = g->send_call, hi = g->from_intended, hs = g->from_send;
	uint64_t i, now = 0, sent_raw, after, tight = 0, deadline = 0;
	int64_t quiet_since = 0;
	struct tp_sched plan;
	int rc;

	tp_stat_thread_begin(&g->ssrc);
	if (g->one_thread) {
		tp_stat_thread_begin(&g->rsrc);
		tp_olog_cpu(&g->olog, g->recv_cpu);
	}
	tp_sched_init(&plan, &g->load, (int64_t)now_raw(tsc), g->raw_per_s);
	for (i = 0; i < total && !jtr_stop && !g->abort_run; i++) {
		const bool paced = i < g->load.warmup ? g->load.warm_rate_hz : g->load.rate_hz;
		const uint64_t intended = (uint64_t)tp_sched_at(&plan, i);

		now = wait_turn(g, tsc, i, intended, paced, &tight);
		if (i == g->load.warmup) {
			g->first_raw = paced ? intended : now;
			deadline = g->duration_raw ? g->first_raw + g->duration_raw : 0;
		}
		if (__builtin_expect(deadline != 0, 0) && (paced ? intended : now) >= deadline)
			break;	/* -d: the next message is due after the run's end */
		sent_raw = now_raw(tsc);
		tp_msg_fill(m, g->load.len, i < g->load.warmup ? TP_F_WARMUP | TP_F_STAMPED : TP_F_STAMPED,
			    i, (int64_t)(g->load.rate_hz ? intended : sent_raw), (int64_t)sent_raw);
		__atomic_store_n(&g->issued, i + 1, __ATOMIC_RELEASE);
		rc = tp_send(g->t, m, g->load.len);
		after = now_raw(tsc);
		if (i >= g->load.warmup)
			jtr_hist_record(&sc, to_ns(g, after - sent_raw));
		if (__builtin_expect(rc < 0, 0)) {
			g->send_err = rc;
			break;
		}
		note_sent(g, i, after);
		if (g->one_thread) {
			/* one in flight: this reply before the next send */
			while (g->seq.received <= i && recv_one(g, &hi, &hs, &quiet_since) >= 0)
				;
			if (g->recv_err || jtr_stop)
				break;
			after = now_raw(tsc);
		}
		now = after;
	}
	tp_stat_thread_end(&g->ssrc);
	if (g->one_thread)
		tp_stat_thread_end(&g->rsrc);
	g->send_call = sc;
	if (g->one_thread) {
		g->from_intended = hi;
		g->from_send = hs;
	}
	g->last_send_raw = now;
	g->send_end_mono = jtr_mono_ns();
	__atomic_store_n(&g->total, g->sent, __ATOMIC_RELEASE);
	__atomic_store_n(&g->send_done, 1, __ATOMIC_RELEASE);
}

/* receiver - take reflections, record both round trips */
static void receiver(void *arg)
{
	struct ping *g = arg;
	struct jtr_hist hi = g->from_intended, hs = g->from_send;
	int64_t quiet_since = 0;

	tp_stat_thread_begin(&g->rsrc);
	tp_olog_cpu(&g->olog, g->recv_cpu);
	while (g->seq.received < __atomic_load_n(&g->total, __ATOMIC_ACQUIRE) && recv_one(g, &hi, &hs, &quiet_since) >= 0)
		;
	tp_stat_thread_end(&g->rsrc);
	g->from_intended = hi;
	g->from_send = hs;
	if (g->recv_err)
		g->abort_run = 1;	/* the sender stops too */
}

/* hello - stream @s: a HELLO sent and a reply awaited up to @wait_ns: true
 * when pong answered; *@gone when a datagram found no pong there yet */
static bool hello(struct ping *s, int64_t wait_ns, bool *gone)
{
	struct tp_msg *m = (struct tp_msg *)s->sbuf;
	const struct tp_msg *r = (const struct tp_msg *)s->rbuf;
	ssize_t n;
	int rc;

	tp_msg_fill(m, s->load.len, TP_F_HELLO, 0, 0, 0);
	rc = tp_send(s->t, m, s->load.len);
	if (rc < 0 && rc != -EPIPE)
		jtr_fatal(s->p, "sending to %s: %s", tp_describe(s->t), strerror(-rc));
	n = tp_recv(s->t, s->rbuf, s->rcap, wait_ns);
	if (n > 0 && tp_msg_check(r, (size_t)n) && (r->flags & TP_F_HELLO))
		return true;
	if (n < 0 && n != -EAGAIN && n != -EPIPE)
		jtr_fatal(s->p, "receiving from %s: %s", tp_describe(s->t), strerror((int)-n));
	/* a connection or a ring sees pong go; a datagram's -EPIPE is a
	 * pong not there yet */
	if (n == -EPIPE && !tp_prog_has(s->tp, TP_P_DATAGRAM))
		jtr_fatal(s->p, "pong at %s went away before the run", tp_describe(s->t));
	*gone = *gone || n == -EPIPE;
	return false;
}

/* handshake - every stream's HELLO answered by pong (the streams in turn,
 * each said hello again until it is: pong reflects once it heard from every
 * one), or exit 2 after --wait */
static void handshake(struct ping *g)
{
	const int n = g->nstreams;
	int64_t end = jtr_mono_ns() + (int64_t)g->tp->o.wait_ns;
	bool done[STREAMS_MAX] = { false };
	int left = n, k;

	while (!jtr_stop) {
		bool gone = false;

		for (k = 0; k < n; k++)
			if (!done[k] && hello(&g->streams[k], 200 * JTR_NS_PER_MS / left, &gone)) {
				done[k] = true;
				left--;
			}
		if (!left || jtr_mono_ns() >= end)
			break;
		if (gone) {
			struct timespec ts = { 0, 100000000L };

			nanosleep(&ts, NULL);
		}
	}
	if (!left)
		return;
	for (k = 0; done[k]; k++)
		;
	jtr_usage_error(g->p, "no pong answered on %s within %g s; start 'jtr pong' with the "
			"same -T and --addr%s first, or wait longer (--wait)",
			tp_describe(g->streams[k].t), (double)g->tp->o.wait_ns / 1e9,
			n > 1 ? " and --streams" : "");
}

/* duration_ns - the measured span: first measured intended send to last send */
static uint64_t duration_ns(const struct ping *g)
{
	return g->last_send_raw > g->first_raw ? to_ns(g, g->last_send_raw - g->first_raw) : 0;
}

/* sent_measured - measured messages the sender sent (the streams' sum) */
static uint64_t sent_measured(const struct ping *g)
{
	uint64_t n = 0;

	if (g->nstreams > 1) {
		for (int k = 0; k < g->nstreams; k++)
			n += sent_measured(&g->streams[k]);
		return n;
	}
	return g->sent > g->load.warmup ? g->sent - g->load.warmup : 0;
}

/* rate_hz - measured messages a second over the measured span */
static double rate_hz(const struct ping *g)
{
	uint64_t dur = duration_ns(g);

	return dur ? (double)sent_measured(g) * 1e9 / (double)dur : 0.0;
}

#define PCT(h, v) ((unsigned long long)jtr_hist_value_at_percentile((h), (v)))

/* summary - the table, then the sends and replies, the outliers and the CPU;
 * with @legacy (summary.txt, --legacy-output) the predecessors' lines too:
 * Percentiles:, actual_sends=, replies=, the phases table */
static void summary(FILE *f, const struct jtr_probe *p, const struct ping *g, bool legacy)
{
	const struct jtr_hist *hi = &g->from_intended, *hs = &g->from_send, *sc = &g->send_call;
	uint64_t dur = duration_ns(g);
	char label[32], rate[32];

	tp_load_rate_name(&g->load, rate, sizeof(rate));
	tp_load_what(&g->load, label, sizeof(label));
	fprintf(f, "jtr ping: %s, %s receive%s, %u-byte messages, %s at %s (+%llu warm-up), "
		"%s timebase%s%s\n", tp_describe(g->t), tp_prog_recv_name(g->tp),
		g->one_thread ? " (one thread)" : "", g->load.len, label, rate,
		(unsigned long long)g->load.warmup, jtr_tb_name(p->tb.kind),
		g->nstreams > 1 ? ", each of the streams below; their sum" : "",
		p->partial ? ", PARTIAL" : "");
	for (int k = 0; g->nstreams > 1 && k < g->nstreams; k++) {
		const struct ping *e = &g->streams[k];
		char rcpu[16] = "any", scpu[16] = "any";	/* where its threads were pinned */

		if (e->recv_cpu >= 0)
			snprintf(rcpu, sizeof(rcpu), "%d", e->recv_cpu);
		if (e->send_cpu >= 0)
			snprintf(scpu, sizeof(scpu), "%d", e->send_cpu);
		fprintf(f, "  stream %d: %s, receive on CPU %s, send on %s: replies=%llu, lost=%llu, "
			"rate=%.1f, late_sends=%llu, p50=%llu, max=%llu%s", k,
			tp_describe(e->t), rcpu, scpu,
			(unsigned long long)e->seq.received, (unsigned long long)e->seq.lost,
			rate_hz(e), (unsigned long long)e->late, PCT(&e->from_intended, 50),
			(unsigned long long)e->from_intended.max,
			e->recv_err || e->send_err ? ", FAILED" : "");
		tp_olog_stream_text(f, &e->olog);
		fputc('\n', f);
	}
	fputc('\n', f);
	fprintf(f, "  %-16s %16s %16s %16s\n", "round trip ns", "from intended", "from send", "send call");
	fprintf(f, "  %-16s %16llu %16llu %16llu\n", "samples", (unsigned long long)hi->total,
		(unsigned long long)hs->total, (unsigned long long)sc->total);
	fprintf(f, "  %-16s %16llu %16llu %16llu\n", "min", (unsigned long long)(hi->total ? hi->min : 0),
		(unsigned long long)(hs->total ? hs->min : 0), (unsigned long long)(sc->total ? sc->min : 0));
	for (int k = 0; k < JTR_NPCT; k++) {
		snprintf(label, sizeof(label), "p%s", jtr_pct_keys[k]);
		fprintf(f, "  %-16s %16llu %16llu %16llu\n", label, PCT(hi, jtr_pct_values[k]),
			PCT(hs, jtr_pct_values[k]), PCT(sc, jtr_pct_values[k]));
	}
	fprintf(f, "  %-16s %16llu %16llu %16llu\n", "max", (unsigned long long)hi->max,
		(unsigned long long)hs->max, (unsigned long long)sc->max);
	fprintf(f, "  %-16s %16.1f %16.1f %16.1f\n", "mean", jtr_hist_mean(hi), jtr_hist_mean(hs),
		jtr_hist_mean(sc));
	fputc('\n', f);
	if (legacy) {
		fprintf(f, "Percentiles: 90=%llu, 99=%llu, 99.9=%llu, 99.99=%llu, 99.999=%llu\n",
			PCT(hi, 90), PCT(hi, 99), PCT(hi, 99.9), PCT(hi, 99.99), PCT(hi, 99.999));
		fprintf(f, "actual_sends=%llu, duration_ns=%llu, result_rate=%.6f, late_sends=%llu, "
			"max_tight_sends=%llu, max_flight_size=%llu\n",
			(unsigned long long)sent_measured(g), (unsigned long long)dur, rate_hz(g),
			(unsigned long long)g->late, (unsigned long long)g->max_tight,
			(unsigned long long)g->max_flight);
		fprintf(f, "replies=%llu, lost=%llu, duplicates=%llu, reordered=%llu\n",
			(unsigned long long)g->seq.received, (unsigned long long)g->seq.lost,
			(unsigned long long)g->seq.duplicates, (unsigned long long)g->seq.reordered);
	} else {
		fprintf(f, "sent %llu at %.1f/s, %llu late; %llu replies: %llu lost, %llu duplicates, "
			"%llu reordered\n", (unsigned long long)sent_measured(g), rate_hz(g),
			(unsigned long long)g->late, (unsigned long long)g->seq.received,
			(unsigned long long)g->seq.lost, (unsigned long long)g->seq.duplicates,
			(unsigned long long)g->seq.reordered);
	}
	if (legacy || tp_prog_rejected(&g->rej))
		tp_prog_rejects_line(f, &g->rej, true);
	tp_olog_summary(f, &g->olog, "round trips");
	tp_stats_summary(f, g->st, tp_prog_recv_name(g->tp), legacy);
}

/* fixed_pct - the value um_lat printed for percentile @pct of -H's buckets:
 * the end of the first bucket where at least @pct % of the samples lie, -1 when
 * that is among the overflows (or there are no samples) */
static long long fixed_pct(const struct fixed_hist *f, uint64_t total, double pct)
{
	uint64_t need = (uint64_t)ceil((double)total * pct / 100.0), cum = 0;

	for (uint64_t i = 0; total && i < f->n; i++) {
		cum += f->counts[i];
		if (cum >= need)
			return (long long)((i + 1) * f->ns_per);
	}
	return -1;
}

/* um_lat - --legacy-output=um_lat: the lines um_lat_ping printed, as it printed
 * them: -H's bucket counts one a line, then the histogram's figures, the
 * percentiles of its buckets, the sends and what came back (round trips from
 * the send; no retransmissions here, so num_rx_msgs is 0) */
static void um_lat(FILE *f, const struct ping *g)
{
	const struct fixed_hist *x = &g->fixed;
	const struct jtr_hist *hs = &g->from_send;

	for (uint64_t i = 0; i < x->n; i++)
		fprintf(f, "%llu\n", (unsigned long long)x->counts[i]);
	fprintf(f, "o_histogram=%llu,%llu, hist_overflows=%llu, hist_min_sample=%llu, "
		"hist_max_sample=%llu,\n", (unsigned long long)x->n, (unsigned long long)x->ns_per,
		(unsigned long long)x->over, (unsigned long long)(hs->total ? hs->min : 0),
		(unsigned long long)hs->max);
	fprintf(f, "hist_num_samples=%llu, average_sample=%llu,\n", (unsigned long long)hs->total,
		(unsigned long long)(hs->total ? hs->sum / hs->total : 0));
	fprintf(f, "Percentiles: 90=%lld, 99=%lld, 99.9=%lld, 99.99=%lld, 99.999=%lld\n",
		fixed_pct(x, hs->total, 90), fixed_pct(x, hs->total, 99),
		fixed_pct(x, hs->total, 99.9), fixed_pct(x, hs->total, 99.99),
		fixed_pct(x, hs->total, 99.999));
	fprintf(f, "actual_sends=%llu, duration_ns=%llu, result_rate=%.6f, global_max_tight_sends=%llu, "
		"max_flight_size=%llu\n", (unsigned long long)sent_measured(g),
		(unsigned long long)duration_ns(g), rate_hz(g), (unsigned long long)g->max_tight,
		(unsigned long long)g->max_flight);
	fprintf(f, "Rcv: num_rcv_msgs=%llu, num_rx_msgs=0, num_unrec_loss=%llu,\n",
		(unsigned long long)g->seq.received, (unsigned long long)g->seq.lost);
}

/* inputs - summary.txt's inputs block */
static void inputs(FILE *f, const struct jtr_probe *p, const struct ping *g)
{
	tp_prog_inputs(f, p, g->tp, TP_IN_HIST | TP_IN_LATENCY_FILE);
	tp_load_inputs(f, &g->load);
	tp_prog_input(f, "linger:", "%.3f s", (double)g->linger_ns / 1e9);
	tp_prog_input(f, "send cpu:", "%d", g->send_cpu);
	tp_prog_input(f, "receive cpu:", "%d", g->recv_cpu);
	tp_prog_input(f, "streams:", "%d", g->nstreams);
	for (int k = 0; g->nstreams > 1 && k < g->nstreams; k++)
		tp_prog_input(f, "stream cpus:", "%d: receive %d, send %d", k,
			      g->streams[k].recv_cpu, g->streams[k].send_cpu);
	if (g->stall_ns)
		tp_prog_input(f, "stall:", "%.3f s before message %llu", (double)g->stall_ns / 1e9,
			      (unsigned long long)g->stall_at);
}

/* write_run - one run object */
static void write_run(struct jtr_json *j, const struct jtr_probe *p, const struct ping *g,
		      const char *name, int cpu, const struct jtr_hist *h, const struct tp_olog *o)
{
	uint64_t end = g->last_send_raw;

	tp_prog_write_run(j, p, name, cpu, jtr_tb_mono_ns(&p->tb, g->first_raw),
			  jtr_tb_mono_ns(&p->tb, end), duration_ns(g), h, o);
}

/* write_streams - transport.streams: each stream's own figures */
static void write_streams(struct jtr_json *j, const struct ping *g)
{
	jtr_json_arr_begin(j, "streams");
	for (int k = 0; k < g->nstreams; k++) {
		const struct ping *e = &g->streams[k];
		const struct jtr_hist *h = &e->from_intended;

		jtr_json_obj_begin(j, NULL);
		jtr_json_uint(j, "stream", (uint64_t)k);
		jtr_json_str(j, "address", tp_describe(e->t));
		if (e->recv_cpu >= 0) jtr_json_int(j, "recv_cpu", e->recv_cpu); else jtr_json_null(j, "recv_cpu");
		if (e->send_cpu >= 0) jtr_json_int(j, "send_cpu", e->send_cpu); else jtr_json_null(j, "send_cpu");
		jtr_json_uint(j, "sent", sent_measured(e));
		tp_prog_write_seq(j, &e->seq);
		jtr_json_uint(j, "late_sends", e->late);
		jtr_json_uint(j, "max_flight_size", e->max_flight);
		jtr_json_bool(j, "failed", e->recv_err || e->send_err);
		jtr_json_uint(j, "duration_ns", duration_ns(e));
		jtr_json_fixed(j, "rate_hz", rate_hz(e), 3);
		if (h->total) {
			jtr_json_uint(j, "rtt_p50_ns", jtr_hist_value_at_percentile(h, 50));
			jtr_json_uint(j, "rtt_max_ns", h->max);
		}
		tp_latlog_write_json(j, &e->lat);
		jtr_json_str(j, "threshold_rule", tp_olog_rule_name(&e->olog));
		tp_olog_write_run(j, &e->olog, duration_ns(e), h);
		jtr_json_obj_end(j);
	}
	jtr_json_arr_end(j);
}

/* write_outputs - summary.txt and result.json */
static void write_outputs(struct jtr_probe *p, struct ping *g, const char *peer)
{
	struct jtr_afile txt, res;
	struct jtr_json j;
	uint64_t dur = duration_ns(g);

	jtr_probe_open(p, &txt, tp_stats_summary_name(g->st));
	jtr_probe_open(p, &res, "result.json");
	summary(txt.f, p, g, true);
	inputs(txt.f, p, g);
	if (!p->quiet && g->tp->legacy_style == TP_LEGACY_UM_LAT)
		um_lat(stdout, g);
	else if (!p->quiet)
		summary(stdout, p, g, g->tp->legacy_output);
	jtr_json_init(&j, res.f);
	jtr_probe_result_begin(p, &j);
	jtr_json_obj_begin(&j, "params");
	jtr_json_uint(&j, "count", g->load.duration_ns ? sent_measured(g) : g->load.count);
	if (g->load.duration_ns) jtr_json_uint(&j, "duration_ns", g->load.duration_ns); else jtr_json_null(&j, "duration_ns");
	if (g->load.warm_rate_hz) jtr_json_uint(&j, "warmup_rate_hz", g->load.warm_rate_hz); else jtr_json_null(&j, "warmup_rate_hz");
	jtr_json_uint(&j, "linger_ns", g->linger_ns);
	if (g->fixed.n) {
		jtr_json_uint(&j, "histo_buckets", g->fixed.n);
		jtr_json_uint(&j, "histo_ns_per_bucket", g->fixed.ns_per);
	} else {
		jtr_json_null(&j, "histo_buckets");
		jtr_json_null(&j, "histo_ns_per_bucket");
	}
	if (g->load.rate_hz)
		jtr_json_uint(&j, "rate_hz", g->load.rate_hz);
	else
		jtr_json_null(&j, "rate_hz");
	jtr_json_uint(&j, "msg_len", g->load.len);
	jtr_json_uint(&j, "warmup", g->load.warmup);
	if (g->send_cpu >= 0) jtr_json_int(&j, "send_cpu", g->send_cpu); else jtr_json_null(&j, "send_cpu");
	jtr_json_bool(&j, "one_thread", g->one_thread);
	if (g->recv_cpu >= 0) jtr_json_int(&j, "recv_cpu", g->recv_cpu); else jtr_json_null(&j, "recv_cpu");
	jtr_json_str(&j, "timebase", jtr_tb_name(p->tb_wanted));
	jtr_json_uint(&j, "streams", (uint64_t)g->nstreams);
	tp_olog_write_params(&j, &g->olog);
	if (g->stall_ns) {
		jtr_json_uint(&j, "stall_at", g->stall_at);
		jtr_json_uint(&j, "stall_ns", g->stall_ns);
	} else {
		jtr_json_null(&j, "stall_at");
		jtr_json_null(&j, "stall_ns");
	}
	jtr_json_uint(&j, "wait_ns", g->tp->o.wait_ns);
	jtr_json_uint(&j, "timeout_ns", g->tp->timeout_ns);
	jtr_json_double(&j, "hist_error", p->hist_error);
	jtr_json_obj_end(&j);

	tp_prog_write_transport(&j, g->tp, g->load.len);
	jtr_json_str(&j, "peer", peer);
	jtr_json_uint(&j, "sent", sent_measured(g));
	jtr_json_uint(&j, "sent_warmup", g->sent - sent_measured(g));
	tp_prog_write_seq(&j, &g->seq);
	tp_prog_write_rejects(&j, &g->rej, true);
	jtr_json_uint(&j, "late_sends", g->late);
	jtr_json_uint(&j, "max_tight_sends", g->max_tight);
	jtr_json_uint(&j, "max_flight_size", g->max_flight);
	if (g->fixed.n) {		/* -H: its buckets, as --legacy-output=um_lat prints them */
		jtr_json_obj_begin(&j, "fixed_histogram");
		jtr_json_uint(&j, "ns_per_bucket", g->fixed.ns_per);
		jtr_json_uint(&j, "overflows", g->fixed.over);
		jtr_json_arr_begin_inline(&j, "counts");
		for (uint64_t i = 0; i < g->fixed.n; i++)
			jtr_json_uint(&j, NULL, g->fixed.counts[i]);
		jtr_json_arr_end(&j);
		jtr_json_obj_end(&j);
	}
	jtr_json_uint(&j, "duration_ns", dur);
	jtr_json_fixed(&j, "rate_hz", rate_hz(g), 3);
	tp_latlog_write_json(&j, &g->lat);
	if (g->nstreams > 1)
		write_streams(&j, g);
	tp_stats_write_json(&j, g->st);
	jtr_json_obj_end(&j);

	jtr_json_arr_begin(&j, "runs");
	write_run(&j, p, g, "rtt_from_intended", g->recv_cpu, &g->from_intended, &g->olog);
	write_run(&j, p, g, "rtt_from_send", g->recv_cpu, &g->from_send, NULL);
	write_run(&j, p, g, "send_call", g->send_cpu, &g->send_call, NULL);
	jtr_json_arr_end(&j);
	tp_prog_finish(p, &j, &txt, &res, g->st, &g->lat, &g->olog);
}

/* cpus_opt - -c RECV[,SEND] (with --streams N: each stream's receiving
 * thread; checked once the options are all read) */
static void cpus_opt(struct jtr_probe *p, struct ping *g, const char *arg)
{
	g->cpus_arg = arg;
	g->ncpus = tp_prog_cpus_opt(p, "-c", arg, g->cpus, STREAMS_MAX);
	if (g->ncpus == 2)
		g->send_cpu = g->cpus[1];
	g->recv_cpu = g->cpus[0];
}

/* check_streams - -c and --send-cpu against --streams */
static void check_streams(struct jtr_probe *p, struct ping *g)
{
	const int n = g->nstreams;

	if (n == 1) {
		if (g->ncpus > 2)
			jtr_usage_error(p, "-c %s: RECV[,SEND], two CPUs at most (with --streams N: "
					"one per stream)", g->cpus_arg);
		if (g->nsend > 1)
			jtr_usage_error(p, "--send-cpu with %d CPUs: one, the sending thread's (with "
					"--streams N: one per stream)", g->nsend);
		return;
	}
	if (g->ncpus > 1 && g->ncpus != n)
		jtr_usage_error(p, "-c %s: %d CPUs for %d streams: give one CPU per stream, its "
				"receiving thread's (or one for all)", g->cpus_arg, g->ncpus, n);
	if (g->nsend > 1 && g->nsend != n)
		jtr_usage_error(p, "--send-cpu with %d CPUs for %d streams: give one CPU per "
				"stream, its sending thread's (or one for all)", g->nsend, n);
	if (g->one_thread && g->nsend)
		jtr_usage_error(p, "--one-thread with --streams %d and --send-cpu: each stream has "
				"one thread; -c gives its CPU", n);
	if (g->old_cpus)
		jtr_usage_error(p, "--streams %d with -a or -A: give the streams' CPUs with -c "
				"and --send-cpu", n);
	/* -c's second CPU is stream 1's, not a sending thread's */
	g->recv_cpu = g->ncpus ? g->cpus[0] : -1;
	g->send_cpu = g->nsend ? g->send_cpus[0] : -1;
}

/* parse - the options, each alone and then together, or exit 2 */
static void parse(struct jtr_probe *p, struct tp_prog *tp, struct ping *g, int argc, char **argv)
{
	bool stall_at_given = false, linger_given = false;
	int opt;

	while ((opt = getopt_long(argc, argv, ":" JTR_COUNT_S JTR_RATE_S JTR_LEN_S "w:A:a:H:"
					JTR_CPUS_S "1t:" JTR_DURATION_S "l:" JTR_FIFO_S JTR_OUTPUT_S
					JTR_QUIET_S "h" TP_PROG_SHORT, long_opts, NULL)) != -1) {
		if (jtr_probe_common_opt(p, opt, usage_text, argv) || tp_prog_opt(p, tp, opt, optarg) ||
		    tp_olog_opt(p, &g->olog, opt, optarg) || tp_load_opt(p, &g->load, opt, optarg))
			continue;
		switch (opt) {
		case 'l': g->linger_ns = jtr_opt_duration(p, "-l", optarg, 0, 3600 * JTR_NS_PER_S); linger_given = true; break;
		case JTR_CPUS_C: cpus_opt(p, g, optarg); break;
		case 'A':
			jtr_opt_old(p, 'A', "--send-cpu", "the sending thread's CPU; or -c RECV,SEND");
			g->old_cpus = true;
			/* fall through */
		case OPT_SEND_CPU:
			if (opt == 'A') {
				g->send_cpu = tp_prog_cpu_opt(p, "-A", optarg);
				break;
			}
			g->nsend = tp_prog_cpus_opt(p, "--send-cpu", optarg, g->send_cpus, STREAMS_MAX);
			g->send_cpu = g->send_cpus[0];
			break;
		case 'a':
			jtr_opt_old(p, 'a', "-c", "the receiving thread's CPU");
			g->old_cpus = true;
			/* fall through */
		case OPT_RECV_CPU:
			g->recv_cpu = tp_prog_cpu_opt(p, opt == 'a' ? "-a" : "--recv-cpu", optarg);
			break;
		case '1': g->one_thread = true; break;
		case 'H': fixed_opt(p, &g->fixed, optarg); break;
		case OPT_STREAMS:
			g->nstreams = (int)jtr_opt_count(p, "--streams", optarg, 1, STREAMS_MAX);
			break;
		case TP_OPT_STALL_AT:
			g->stall_at = jtr_opt_count(p, "--stall-at", optarg, 0, 1ULL << 40);
			stall_at_given = true;
			break;
		case TP_OPT_STALL:
			g->stall_ns = jtr_opt_duration_legacy(p, "--stall", optarg, JTR_NS_PER_MS, 1,
							      60 * JTR_NS_PER_S);
			break;
		}
	}
	jtr_probe_no_args(p, argc, argv);
	tp_prog_legacy_only(p, tp, TP_LEGACY_UM_LAT);
	if (tp->legacy_style == TP_LEGACY_UM_LAT && !g->fixed.n) {
		g->fixed.n = UM_LAT_DEFAULT_N;
		g->fixed.ns_per = UM_LAT_DEFAULT_NS;
	}
	if (g->fixed.n && g->nstreams > 1)
		jtr_usage_error(p, "-H with --streams %d: the fixed histogram is of one stream; "
				"leave one out", g->nstreams);
	check_streams(p, g);
	tp_load_check(p, &g->load, tp_stats_startup_ns(&g->tp->stats_opts, g->tp->stats_every_ns));
	if (g->load.len < TP_ECHO_OFF + TP_ECHO_LEN)
		jtr_warn(p, "%u-byte messages have no room for pong's stamps (%u bytes do): the "
			 "round trips are not taken apart into the way out, pong's reflection and "
			 "the way back; give -m %u or more for that", g->load.len,
			 TP_ECHO_OFF + TP_ECHO_LEN, TP_ECHO_OFF + TP_ECHO_LEN);
	if (g->load.duration_ns) {
		if (g->stall_ns && !stall_at_given)
			jtr_usage_error(p, "--stall with -d: say where with --stall-at N");
		g->load.count = 1ULL << 40;	/* until the duration is over */
	}
	if (!linger_given)
		g->linger_ns = tp->timeout_ns;
	g->total = g->load.warmup + g->load.count;
	if (g->stall_ns && !stall_at_given)
		g->stall_at = g->load.count / 2;
	if (g->stall_at >= g->load.count)
		jtr_usage_error(p, "--stall-at %llu: the run has messages 0-%llu",
				(unsigned long long)g->stall_at, (unsigned long long)g->load.count - 1);
	if (g->one_thread) {
		if (g->send_cpu >= 0 && g->recv_cpu >= 0 && g->send_cpu != g->recv_cpu)
			jtr_usage_error(p, g->old_cpus ? "--one-thread with -A %d -a %d: one thread "
					"runs on one CPU; give -a CPU only" : "--one-thread with sending "
					"CPU %d and receiving CPU %d: one thread runs on one CPU; give "
					"-c CPU only", g->send_cpu, g->recv_cpu);
		if (g->recv_cpu < 0)
			g->recv_cpu = g->send_cpu;
		g->send_cpu = g->recv_cpu;
	}
	tp->o.msg_max = g->load.len;
	tp_prog_check(p, tp, TP_PING);
}

/* prepare_stream - stream @s's buffers, histograms, logs, threads (@ws
 * sends, @wr receives) and its sources of the rows */
static void prepare_stream(struct jtr_probe *p, struct tp_prog *tp, struct ping *s,
			   struct jtr_worker *ws, struct jtr_worker *wr)
{
	s->rcap = tp_max_msg(&tp->o) < 65536 ? tp_max_msg(&tp->o) : 65536;
	if (s->rcap < s->load.len)
		s->rcap = s->load.len;
	s->sbuf = calloc(1, s->load.len);
	s->rbuf = calloc(1, s->rcap);
	if (!s->sbuf || !s->rbuf || jtr_hist_init(&s->from_intended, p->hist_error) < 0 ||
	    jtr_hist_init(&s->from_send, p->hist_error) < 0 || jtr_hist_init(&s->send_call, p->hist_error) < 0 ||
	    jtr_worker_alloc(ws, s->send_cpu) < 0 || jtr_worker_alloc(wr, s->recv_cpu) < 0)
		jtr_fatal(p, "out of memory");
	jtr_prefault(s->rbuf, s->rcap);
	s->ends = calloc(SEND_ENDS, sizeof(s->ends[0]));
	if (!s->ends)
		jtr_fatal(p, "out of memory");
	jtr_prefault(s->ends, SEND_ENDS * sizeof(s->ends[0]));
	if (s->fixed.n) {		/* -H (one stream) */
		s->fixed.counts = calloc(s->fixed.n, sizeof(s->fixed.counts[0]));
		if (!s->fixed.counts)
			jtr_fatal(p, "out of memory");
		jtr_prefault(s->fixed.counts, s->fixed.n * sizeof(s->fixed.counts[0]));
	}
	tp_olog_init(p, &s->olog, "rtt", 4, stamp_names, 0);
	tp_seq_init(&s->seq);
	if (tp->latency_file && tp_latlog_alloc(&s->lat, tp->latency_max) < 0)
		jtr_fatal(p, "out of memory for %llu latency samples; lower --latency-max",
			  (unsigned long long)tp->latency_max);
	tp_stats_add(s->st, TP_STAT_SEND, &s->ssrc, ws, false);
	/* --one-thread: the sending thread takes the replies too */
	tp_stats_add(s->st, TP_STAT_RECV, &s->rsrc, s->one_thread ? ws : wr, true);
}

/* prepare - what the run touches, allocated and touched before the
 * privilege drop: each stream (a copy of @g with its address and CPUs;
 * stream K sends in w[K] and receives in w[N + K]), and with several the
 * histograms of their sum */
static void prepare(struct jtr_probe *p, struct tp_prog *tp, struct ping *g, struct jtr_worker *w)
{
	const int n = g->nstreams;

	if (tp->latency_max > g->load.count)
		tp->latency_max = g->load.count;	/* never more samples than messages */
	tp_stats_init(g->st, tp->stats_every_ns);
	g->st->print = tp->stats_print;
	tp_stats_set_opts(g->st, p, &tp->stats_opts);
	if (n > 1 && (jtr_hist_init(&g->from_intended, p->hist_error) < 0 ||
		      jtr_hist_init(&g->from_send, p->hist_error) < 0 ||
		      jtr_hist_init(&g->send_call, p->hist_error) < 0))
		jtr_fatal(p, "out of memory");
	for (int k = 0; k < n; k++) {
		struct ping *s = &g->streams[k];

		*s = *g;
		s->nstreams = 1;
		tp_prog_stream(p, tp, k, n, &s->tpc, s->addr, sizeof(s->addr));
		s->tp = &s->tpc;
		if (n > 1) {
			s->recv_cpu = tp_prog_stream_cpu(g->cpus, g->ncpus, k);
			s->send_cpu = g->one_thread ? s->recv_cpu :
				      tp_prog_stream_cpu(g->send_cpus, g->nsend, k);
		}
		prepare_stream(p, tp, s, &w[k], &w[n + k]);
		if (n > 1)
			snprintf(s->lat.name, sizeof(s->lat.name), "latency.%d.csv", k);
		g->ologs[k] = &s->olog;
	}
}

/* timebase - what stream @s reads the timebase with */
static void timebase(const struct jtr_probe *p, struct ping *s)
{
	s->tsc = p->tb.kind == JTR_TB_TSC;
	s->t2n = p->tb.t2n;
	/* pong's TSC stamps map through TSC pairs: taken around the run even on
	 * the clock timebase (jtr_probe_map_* take them only for the TSC's) */
	s->peer_tsc = p->tb.hz > 0;
	if (s->peer_tsc)
		s->olog.log.stamp_tsc = STAMPS_PEER_TSC;
	s->raw_per_s = s->tsc ? p->tb.hz : 1e9;
	s->duration_raw = !s->load.duration_ns ? 0 : s->tsc ?
			  (uint64_t)((double)s->load.duration_ns * p->tb.hz / 1e9) : s->load.duration_ns;
}

/* start - the timebase and its units, each stream's transport, then a
 * round trip on each to see pong is there */
static void start(struct jtr_probe *p, struct tp_prog *tp, struct ping *g)
{
	jtr_probe_timebase(p);
	timebase(p, g);
	for (int k = 0; k < g->nstreams; k++) {
		struct ping *s = &g->streams[k];

		timebase(p, s);
		s->tpc.o.numa_cpu = s->recv_cpu;
		s->t = tp_prog_open(p, &s->tpc, TP_PING);
	}
	tp->t = g->streams[0].t;
	handshake(g);
}

/* run - each stream's sending and receiving threads (one with
 * --one-thread) and the rows; stamps before start_raw cannot be this run's */
static void run(struct jtr_probe *p, struct ping *g, struct jtr_worker *w)
{
	const int n = g->nstreams, threads = g->one_thread ? n : 2 * n;
	const uint64_t start_raw = now_raw(g->tsc);

	for (int k = 0; k < n; k++) {
		struct ping *s = &g->streams[k];

		s->start_raw = start_raw;
		s->slack_raw = s->tsc ? (uint64_t)(p->tb.hz / 1000) : JTR_NS_PER_MS;
		w[k].fn = sender;
		w[k].arg = s;
		w[n + k].fn = receiver;
		w[n + k].arg = s;
	}
	jtr_probe_map_begin(p);
	if (g->peer_tsc && !g->tsc)
		jtr_tsc_pair_take(CLOCK_MONOTONIC, 64, &p->tb.map.a);
	tp_stats_start(g->st, p);
	jtr_workers_start(p, w, threads);
	tp_stats_run(g->st, p, w, threads);
	jtr_probe_map_end(p);
	if (g->peer_tsc && !g->tsc)
		jtr_tsc_pair_take(CLOCK_MONOTONIC, 64, &p->tb.map.b);
}

/* end_stream - tell pong stream @s is done (twice where a datagram can be
 * lost); what did not come back is lost, what was turned away counted */
static void end_stream(struct ping *s)
{
	struct tp_msg *m = (struct tp_msg *)s->sbuf;

	tp_msg_fill(m, s->load.len, TP_F_EOS, s->sent, 0, 0);
	tp_send(s->t, m, s->load.len);
	if (tp_prog_has(s->tp, TP_P_DATAGRAM))
		tp_send(s->t, m, s->load.len);
	tp_seq_end(&s->seq, s->sent, true);
	tp_prog_rejects(s->tp, &s->rej);
	tp_olog_settle(&s->olog);
}

/* add_up - the streams' sum into @g (main's copy): counts, sequence
 * figures, what was turned away, histograms, outliers, the span, the first
 * failure */
static void add_up(struct jtr_probe *p, struct ping *g)
{
	const int n = g->nstreams;

	g->t = g->streams[0].t;
	for (int k = 0; k < n; k++) {
		const struct ping *e = &g->streams[k];

		jtr_hist_merge(&g->from_intended, &e->from_intended);
		jtr_hist_merge(&g->from_send, &e->from_send);
		jtr_hist_merge(&g->send_call, &e->send_call);
		tp_prog_add_stream(&g->seq, &g->rej, &e->seq, &e->rej, k);
		g->sent += e->sent;
		g->late += e->late;
		if (e->max_tight > g->max_tight)
			g->max_tight = e->max_tight;
		if (e->max_flight > g->max_flight)
			g->max_flight = e->max_flight;
		if (sent_measured(e) && (!g->first_raw || e->first_raw < g->first_raw))
			g->first_raw = e->first_raw;
		if (e->last_send_raw > g->last_send_raw)
			g->last_send_raw = e->last_send_raw;
		if (!g->recv_err)
			g->recv_err = e->recv_err;
		if (!g->send_err)
			g->send_err = e->send_err;
	}
	tp_olog_sum(p, &g->olog, g->ologs, n);
}

/* settle - each stream ended, then the run's figures: the stream's, or
 * with several their sum in @g */
static struct ping *settle(struct jtr_probe *p, struct tp_prog *tp, struct ping *g)
{
	for (int k = 0; k < g->nstreams; k++)
		end_stream(&g->streams[k]);
	if (g->nstreams > 1) {
		add_up(p, g);
		return g;
	}
	g->streams[0].tp = tp;
	return &g->streams[0];
}

/* judge - what came back: "ok", "silent", "gone", "error" */
static const char *judge(struct jtr_probe *p, struct tp_prog *tp, struct ping *r)
{
	const char *peer = "ok";

	tp_prog_warn_rejects(p, tp, &r->rej, true);
	if (r->recv_err == -ETIMEDOUT)
		peer = "silent";
	else if (r->recv_err == -EPIPE || r->send_err == -EPIPE)
		peer = "gone";
	else if (r->recv_err || r->send_err)
		peer = "error";
	p->partial = p->partial || strcmp(peer, "ok");
	if (!strcmp(peer, "ok") && r->seq.lost)
		jtr_warn(p, "%llu of %llu replies never came back (lost)", (unsigned long long)r->seq.lost,
			 (unsigned long long)r->sent);
	return peer;
}

/* report - the results folder, the line saying why the run ended short,
 * the exit status */
static int report(struct jtr_probe *p, struct tp_prog *tp, struct ping *g, struct ping *r,
		  const char *peer)
{
	int rc = 1;

	for (int k = 0; k < g->nstreams; k++)
		tp_latlog_write(&g->streams[k].lat, p, r->tsc);
	write_outputs(p, r, peer);
	jtr_probe_finish(p);
	if (!strcmp(peer, "silent"))
		fprintf(stderr, "%s: pong went silent for %.1f s after %llu replies: it stopped or died; "
			"the results hold what came back\n", p->prog, (double)tp->timeout_ns / 1e9,
			(unsigned long long)r->seq.received);
	else if (!strcmp(peer, "gone"))
		fprintf(stderr, "%s: pong went away after %llu replies; the results hold what came "
			"back\n", p->prog, (unsigned long long)r->seq.received);
	else if (!strcmp(peer, "error"))
		fprintf(stderr, "%s: the run failed: %s\n", p->prog,
			tp_prog_strerror(tp, r->send_err ? r->send_err : r->recv_err));
	else
		rc = 0;
	for (int k = 0; k < g->nstreams; k++)
		tp_close(g->streams[k].t);
	return jtr_probe_exit(p, rc);
}

int main(int argc, char **argv)
{
	static struct ping g = { .send_cpu = -1, .recv_cpu = -1, .nstreams = 1 };
	static struct ping streams[STREAMS_MAX];
	static struct tp_stats st;
	static struct jtr_worker w[2 * STREAMS_MAX];
	struct jtr_probe p;
	struct tp_prog tp;
	struct ping *r;

	jtr_probe_init(&p, "ping", argc, argv);
	tp_prog_init(&tp);
	tp_olog_defaults(&g.olog);
	tp_load_init(&g.load, 10000, 100, 1000);
	g.p = &p;
	g.tp = &tp;
	g.st = &st;
	g.streams = streams;

	/* 1. options: numbers only */
	parse(&p, &tp, &g, argc, argv);
	/* 2. each stream's buffers and histograms before the privilege drop */
	prepare(&p, &tp, &g, w);
	/* 3. FIFO and mlockall, the privilege drop, the results folder */
	jtr_probe_privileged(&p);
	/* 4. timebase, transports, a round trip on each to see pong is there */
	start(&p, &tp, &g);
	/* 5. the run */
	run(&p, &g, w);
	/* 6. tell pong we are done, add the streams up, then report */
	r = settle(&p, &tp, &g);
	return report(&p, &tp, &g, r, judge(&p, &tp, r));
}
