// SPDX-License-Identifier: GPL-2.0-only
/* ping.c - jtr ping: round-trip latency at a constant rate, through jtr pong.
 *
 * A sending thread (-A CPU) sends on a fixed schedule, busy-waiting to each
 * intended send time and catching up without skipping when it is late; a
 * receiving thread (-a CPU) takes pong's reflections.
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
"  -l, --linger DUR         after the last send, wait at most DUR for the replies\n"
"                           still out; later ones are lost (default: --timeout)\n"
JTR_CPUS_HELP "          RECV[,SEND]: pin the receiving thread, then the\n"
"                           sending one (-1: none, the default)\n"
"      --recv-cpu CPU       pin the receiving thread alone\n"
"      --send-cpu CPU       pin the sending thread alone\n"
"  -1, --one-thread         one thread sends and takes each reply before the next\n"
"                           send (one message in flight, like sockperf ping-pong):\n"
"                           busy-poll on two CPUs; pinned with -c CPU; a reply\n"
"                           that does not come within --timeout ends the run\n"
"  -t, --timebase TB        tsc (default) or clock: how times are read\n"
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
"  jtr ping -T udp --latency-file --stats-every 500ms   every sample, 2 rows a second\n";

enum { OPT_SEND_CPU = 700, OPT_RECV_CPU };

static const struct option long_opts[] = {
	JTR_LONG(COUNT),
	JTR_LONG(RATE),
	JTR_LONG(LEN),
	{ "warmup", required_argument, NULL, 'w' },
	{ "warmup-rate", required_argument, NULL, TP_OPT_WARMUP_RATE },
	{ "steady", required_argument, NULL, TP_OPT_STEADY },
	JTR_LONG(DURATION),
	{ "linger", required_argument, NULL, 'l' },
	JTR_LONG(CPUS),
	{ "send-cpu", required_argument, NULL, OPT_SEND_CPU },
	{ "recv-cpu", required_argument, NULL, OPT_RECV_CPU },
	{ "one-thread", no_argument, NULL, '1' },
	{ "timebase", required_argument, NULL, 't' },
	{ "stall-at", required_argument, NULL, TP_OPT_STALL_AT },
	{ "stall", required_argument, NULL, TP_OPT_STALL },
	JTR_PROBE_OUTLIER_LONG_OPTS,
	TP_PROG_LONG_OPTS,
	TP_STATS_LONG_OPTS,
	JTR_PROBE_LONG_OPTS,
	{ NULL, 0, NULL, 0 },
};

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

	/* statistics: each thread's interval counters, the rows, every sample */
	struct tp_stat_src ssrc, rsrc;
	struct tp_stats st;
	struct tp_latlog lat;
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

/* handshake - a HELLO answered by pong, or exit 2 after --wait */
static void handshake(struct ping *g)
{
	struct tp_msg *m = (struct tp_msg *)g->sbuf;
	const struct tp_msg *r = (const struct tp_msg *)g->rbuf;
	int64_t end = jtr_mono_ns() + (int64_t)g->tp->o.wait_ns;
	ssize_t n;
	int rc;

	while (!jtr_stop) {
		tp_msg_fill(m, g->load.len, TP_F_HELLO, 0, 0, 0);
		rc = tp_send(g->t, m, g->load.len);
		if (rc < 0 && rc != -EPIPE)
			jtr_fatal(g->p, "sending to %s: %s", tp_describe(g->t), strerror(-rc));
		n = tp_recv(g->t, g->rbuf, g->rcap, 200 * JTR_NS_PER_MS);
		if (n > 0 && tp_msg_check(r, (size_t)n) && (r->flags & TP_F_HELLO))
			return;
		if (n < 0 && n != -EAGAIN && n != -EPIPE)
			jtr_fatal(g->p, "receiving from %s: %s", tp_describe(g->t), strerror((int)-n));
		/* a connection or a ring sees pong go; a datagram's -EPIPE is a
		 * pong not there yet */
		if (n == -EPIPE && !tp_prog_has(g->tp, TP_P_DATAGRAM))
			jtr_fatal(g->p, "pong at %s went away before the run", tp_describe(g->t));
		if (jtr_mono_ns() >= end)
			break;
		if (n == -EPIPE) {
			struct timespec ts = { 0, 100000000L };

			nanosleep(&ts, NULL);
		}
	}
	jtr_usage_error(g->p, "no pong answered on %s within %g s; start 'jtr pong' with the "
			"same -T and --addr first, or wait longer (--wait)", tp_describe(g->t),
			(double)g->tp->o.wait_ns / 1e9);
}

/* duration_ns - the measured span: first measured intended send to last send */
static uint64_t duration_ns(const struct ping *g)
{
	return g->last_send_raw > g->first_raw ? to_ns(g, g->last_send_raw - g->first_raw) : 0;
}

/* sent_measured - measured messages the sender sent */
static uint64_t sent_measured(const struct ping *g)
{
	return g->sent > g->load.warmup ? g->sent - g->load.warmup : 0;
}

#define PCT(h, v) ((unsigned long long)jtr_hist_value_at_percentile((h), (v)))

/* summary - the table, then the percentile, rate and reply lines */
static void summary(FILE *f, const struct jtr_probe *p, const struct ping *g)
{
	const struct jtr_hist *hi = &g->from_intended, *hs = &g->from_send, *sc = &g->send_call;
	uint64_t dur = duration_ns(g);
	char label[32], rate[32];

	tp_load_rate_name(&g->load, rate, sizeof(rate));
	tp_load_what(&g->load, label, sizeof(label));
	fprintf(f, "jtr ping: %s, %s receive%s, %u-byte messages, %s at %s (+%llu warm-up), "
		"%s timebase%s\n\n", tp_describe(g->t), tp_prog_recv_name(g->tp),
		g->one_thread ? " (one thread)" : "", g->load.len, label, rate,
		(unsigned long long)g->load.warmup, jtr_tb_name(p->tb.kind), p->partial ? ", PARTIAL" : "");
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
	fprintf(f, "\nPercentiles: 90=%llu, 99=%llu, 99.9=%llu, 99.99=%llu, 99.999=%llu\n",
		PCT(hi, 90), PCT(hi, 99), PCT(hi, 99.9), PCT(hi, 99.99), PCT(hi, 99.999));
	fprintf(f, "actual_sends=%llu, duration_ns=%llu, result_rate=%.6f, late_sends=%llu, "
		"max_tight_sends=%llu, max_flight_size=%llu\n", (unsigned long long)sent_measured(g),
		(unsigned long long)dur, dur ? (double)sent_measured(g) * 1e9 / (double)dur : 0.0,
		(unsigned long long)g->late, (unsigned long long)g->max_tight,
		(unsigned long long)g->max_flight);
	fprintf(f, "replies=%llu, lost=%llu, duplicates=%llu, reordered=%llu\n",
		(unsigned long long)g->seq.received, (unsigned long long)g->seq.lost,
		(unsigned long long)g->seq.duplicates, (unsigned long long)g->seq.reordered);
	tp_prog_rejects_line(f, &g->rej, true);
	tp_olog_summary(f, &g->olog, "round trips");
	tp_stats_summary(f, &g->st, tp_prog_recv_name(g->tp));
}

/* inputs - summary.txt's inputs block */
static void inputs(FILE *f, const struct jtr_probe *p, const struct ping *g)
{
	tp_prog_inputs(f, p, g->tp, TP_IN_HIST | TP_IN_LATENCY_FILE);
	tp_load_inputs(f, &g->load);
	tp_prog_input(f, "linger:", "%.3f s", (double)g->linger_ns / 1e9);
	tp_prog_input(f, "send cpu:", "%d", g->send_cpu);
	tp_prog_input(f, "receive cpu:", "%d", g->recv_cpu);
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

/* write_outputs - summary.txt and result.json */
static void write_outputs(struct jtr_probe *p, struct ping *g, const char *peer)
{
	struct jtr_afile txt, res;
	struct jtr_json j;
	uint64_t dur = duration_ns(g);

	jtr_probe_open(p, &txt, tp_stats_summary_name(&g->st));
	jtr_probe_open(p, &res, "result.json");
	summary(txt.f, p, g);
	inputs(txt.f, p, g);
	if (!p->quiet)
		summary(stdout, p, g);
	jtr_json_init(&j, res.f);
	jtr_probe_result_begin(p, &j);
	jtr_json_obj_begin(&j, "params");
	jtr_json_uint(&j, "count", g->load.duration_ns ? sent_measured(g) : g->load.count);
	if (g->load.duration_ns) jtr_json_uint(&j, "duration_ns", g->load.duration_ns); else jtr_json_null(&j, "duration_ns");
	if (g->load.warm_rate_hz) jtr_json_uint(&j, "warmup_rate_hz", g->load.warm_rate_hz); else jtr_json_null(&j, "warmup_rate_hz");
	jtr_json_uint(&j, "linger_ns", g->linger_ns);
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
	jtr_json_uint(&j, "sent_warmup", g->sent < g->load.warmup ? g->sent : g->load.warmup);
	tp_prog_write_seq(&j, &g->seq);
	tp_prog_write_rejects(&j, &g->rej, true);
	jtr_json_uint(&j, "late_sends", g->late);
	jtr_json_uint(&j, "max_tight_sends", g->max_tight);
	jtr_json_uint(&j, "max_flight_size", g->max_flight);
	jtr_json_uint(&j, "duration_ns", dur);
	jtr_json_fixed(&j, "rate_hz", dur ? (double)sent_measured(g) * 1e9 / (double)dur : 0.0, 3);
	tp_latlog_write_json(&j, &g->lat);
	tp_stats_write_json(&j, &g->st);
	jtr_json_obj_end(&j);

	jtr_json_arr_begin(&j, "runs");
	write_run(&j, p, g, "rtt_from_intended", g->recv_cpu, &g->from_intended, &g->olog);
	write_run(&j, p, g, "rtt_from_send", g->recv_cpu, &g->from_send, NULL);
	write_run(&j, p, g, "send_call", g->send_cpu, &g->send_call, NULL);
	jtr_json_arr_end(&j);
	tp_prog_finish(p, &j, &txt, &res, &g->st, &g->lat, &g->olog);
}

/* cpus_opt - -c RECV[,SEND] */
static void cpus_opt(struct jtr_probe *p, struct ping *g, const char *arg)
{
	int cpus[2];

	if (tp_prog_cpus_opt(p, "-c", arg, cpus, 2) == 2)
		g->send_cpu = cpus[1];
	g->recv_cpu = cpus[0];
}

/* parse - the options, each alone and then together, or exit 2 */
static void parse(struct jtr_probe *p, struct tp_prog *tp, struct ping *g, int argc, char **argv)
{
	bool stall_at_given = false, linger_given = false;
	int opt;

	while ((opt = getopt_long(argc, argv, ":" JTR_COUNT_S JTR_RATE_S JTR_LEN_S "w:A:a:"
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
			g->send_cpu = tp_prog_cpu_opt(p, opt == 'A' ? "-A" : "--send-cpu", optarg);
			break;
		case 'a':
			jtr_opt_old(p, 'a', "-c", "the receiving thread's CPU");
			g->old_cpus = true;
			/* fall through */
		case OPT_RECV_CPU:
			g->recv_cpu = tp_prog_cpu_opt(p, opt == 'a' ? "-a" : "--recv-cpu", optarg);
			break;
		case '1': g->one_thread = true; break;
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
	tp_load_check(p, &g->load, tp_stats_startup_ns(&g->tp->stats_opts, g->tp->stats_every_ns));
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

/* prepare - what the run touches, allocated and touched before the
 * privilege drop: buffers, histograms, the logs, the rows' sources */
static void prepare(struct jtr_probe *p, struct tp_prog *tp, struct ping *g, struct jtr_worker w[2])
{
	g->rcap = tp_max_msg(&tp->o) < 65536 ? tp_max_msg(&tp->o) : 65536;
	if (g->rcap < g->load.len)
		g->rcap = g->load.len;
	g->sbuf = calloc(1, g->load.len);
	g->rbuf = calloc(1, g->rcap);
	if (!g->sbuf || !g->rbuf || jtr_hist_init(&g->from_intended, p->hist_error) < 0 ||
	    jtr_hist_init(&g->from_send, p->hist_error) < 0 || jtr_hist_init(&g->send_call, p->hist_error) < 0 ||
	    jtr_worker_alloc(&w[0], g->send_cpu) < 0 || jtr_worker_alloc(&w[1], g->recv_cpu) < 0)
		jtr_fatal(p, "out of memory");
	jtr_prefault(g->rbuf, g->rcap);
	g->ends = calloc(SEND_ENDS, sizeof(g->ends[0]));
	if (!g->ends)
		jtr_fatal(p, "out of memory");
	jtr_prefault(g->ends, SEND_ENDS * sizeof(g->ends[0]));
	tp_olog_init(p, &g->olog, "rtt", 4, stamp_names, 0);
	tp_seq_init(&g->seq);
	if (tp->latency_max > g->load.count)
		tp->latency_max = g->load.count;	/* never more samples than messages */
	if (tp->latency_file && tp_latlog_alloc(&g->lat, tp->latency_max) < 0)
		jtr_fatal(p, "out of memory for %llu latency samples; lower --latency-max",
			  (unsigned long long)tp->latency_max);
	tp_stats_init(&g->st, tp->stats_every_ns);
	g->st.print = tp->stats_print;
	tp_stats_set_opts(&g->st, p, &tp->stats_opts);
	tp_stats_add(&g->st, TP_STAT_SEND, &g->ssrc, &w[0], false);
	/* --one-thread: the sending thread takes the replies too */
	tp_stats_add(&g->st, TP_STAT_RECV, &g->rsrc, g->one_thread ? &w[0] : &w[1], true);
}

/* start - the timebase and its units, the transport, a round trip to see
 * pong is there */
static void start(struct jtr_probe *p, struct tp_prog *tp, struct ping *g)
{
	jtr_probe_timebase(p);
	g->tsc = p->tb.kind == JTR_TB_TSC;
	g->t2n = p->tb.t2n;
	/* pong's TSC stamps map through TSC pairs: taken around the run even on
	 * the clock timebase (jtr_probe_map_* take them only for the TSC's) */
	g->peer_tsc = p->tb.hz > 0;
	if (g->peer_tsc)
		g->olog.log.stamp_tsc = STAMPS_PEER_TSC;
	g->raw_per_s = g->tsc ? p->tb.hz : 1e9;
	g->duration_raw = !g->load.duration_ns ? 0 : g->tsc ?
			  (uint64_t)((double)g->load.duration_ns * p->tb.hz / 1e9) : g->load.duration_ns;
	tp->o.numa_cpu = g->recv_cpu;
	g->t = tp_prog_open(p, tp, TP_PING);
	handshake(g);
}

/* run - the sending and receiving threads (one with --one-thread) and the
 * rows; stamps before start_raw cannot be this run's */
static void run(struct jtr_probe *p, struct ping *g, struct jtr_worker w[2])
{
	const int n = g->one_thread ? 1 : 2;

	g->start_raw = now_raw(g->tsc);
	g->slack_raw = g->tsc ? (uint64_t)(p->tb.hz / 1000) : JTR_NS_PER_MS;
	w[0].fn = sender;
	w[0].arg = g;
	w[1].fn = receiver;
	w[1].arg = g;
	jtr_probe_map_begin(p);
	if (g->peer_tsc && !g->tsc)
		jtr_tsc_pair_take(CLOCK_MONOTONIC, 64, &p->tb.map.a);
	tp_stats_start(&g->st, p);
	jtr_workers_start(p, w, n);
	tp_stats_run(&g->st, p, w, n);
	jtr_probe_map_end(p);
	if (g->peer_tsc && !g->tsc)
		jtr_tsc_pair_take(CLOCK_MONOTONIC, 64, &p->tb.map.b);
}

/* end_session - tell pong we are done (twice where a datagram can be
 * lost), then account for what came back: "ok", "silent", "gone", "error" */
static const char *end_session(struct jtr_probe *p, struct tp_prog *tp, struct ping *g)
{
	struct tp_msg *m = (struct tp_msg *)g->sbuf;
	const char *peer = "ok";

	tp_msg_fill(m, g->load.len, TP_F_EOS, g->sent, 0, 0);
	tp_send(g->t, m, g->load.len);
	if (tp_prog_has(tp, TP_P_DATAGRAM))
		tp_send(g->t, m, g->load.len);
	tp_seq_end(&g->seq, g->sent, true);
	tp_prog_rejects(tp, &g->rej);
	tp_prog_warn_rejects(p, tp, &g->rej, true);
	if (g->recv_err == -ETIMEDOUT)
		peer = "silent";
	else if (g->recv_err == -EPIPE || g->send_err == -EPIPE)
		peer = "gone";
	else if (g->recv_err || g->send_err)
		peer = "error";
	p->partial = p->partial || strcmp(peer, "ok");
	if (!strcmp(peer, "ok") && g->seq.lost)
		jtr_warn(p, "%llu of %llu replies never came back (lost)", (unsigned long long)g->seq.lost,
			 (unsigned long long)g->sent);
	return peer;
}

/* report - the results folder, the line saying why the run ended short,
 * the exit status */
static int report(struct jtr_probe *p, struct tp_prog *tp, struct ping *g, const char *peer)
{
	int rc = 1;

	tp_latlog_write(&g->lat, p, g->tsc);
	tp_olog_settle(&g->olog);
	write_outputs(p, g, peer);
	jtr_probe_finish(p);
	if (!strcmp(peer, "silent"))
		fprintf(stderr, "%s: pong went silent for %.1f s after %llu replies: it stopped or died; "
			"the results hold what came back\n", p->prog, (double)tp->timeout_ns / 1e9,
			(unsigned long long)g->seq.received);
	else if (!strcmp(peer, "gone"))
		fprintf(stderr, "%s: pong went away after %llu replies; the results hold what came "
			"back\n", p->prog, (unsigned long long)g->seq.received);
	else if (!strcmp(peer, "error"))
		fprintf(stderr, "%s: the run failed: %s\n", p->prog,
			tp_prog_strerror(tp, g->send_err ? g->send_err : g->recv_err));
	else
		rc = 0;
	tp_close(g->t);
	return jtr_probe_exit(p, rc);
}

int main(int argc, char **argv)
{
	static struct ping g = { .send_cpu = -1, .recv_cpu = -1 };
	struct jtr_probe p;
	struct tp_prog tp;
	struct jtr_worker w[2];

	jtr_probe_init(&p, "ping", argc, argv);
	tp_prog_init(&tp);
	tp_olog_defaults(&g.olog);
	tp_load_init(&g.load, 10000, 100, 1000);
	g.p = &p;
	g.tp = &tp;

	/* 1. options: numbers only */
	parse(&p, &tp, &g, argc, argv);
	/* 2. buffers and histograms before the privilege drop */
	prepare(&p, &tp, &g, w);
	/* 3. FIFO and mlockall, the privilege drop, the results folder */
	jtr_probe_privileged(&p);
	/* 4. timebase, transport, a round trip to see pong is there */
	start(&p, &tp, &g);
	/* 5. the run */
	run(&p, &g, w);
	/* 6. tell pong we are done, then report */
	return report(&p, &tp, &g, end_session(&p, &tp, &g));
}
