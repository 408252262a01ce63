// SPDX-License-Identifier: GPL-2.0-only
/* send.c - jtr send: how much jitter a transport's send call adds, measured
 * against an empty loop of the same mean duration, in pairs of runs.
 *
 * Each pair is two runs on one CPU. The send run times N send calls of one
 * transport between fenced timestamp reads, busy-waiting a pause after each
 * (the NIC-speed delay that lets a packet leave before the next). The null
 * run times N empty loops whose iteration count is calibrated so that their
 * mean equals the send run's mean, with the same pause. What the send run
 * has beyond its null run in the tail (p99 .. max) is jitter the send path
 * adds; what both have is the CPU's own. A drain thread on another CPU reads
 * everything sent, so no receiver is needed (--no-drain: 'jtr sub' reads).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jtr_cli.h"
#include "jtr_legacy.h"
#include "jtr_sample.h"
#include "tp_prog.h"

#define MAX_PAIRS 50
#define CAL_WARMUP 200			/* samples before a calibration point */
#define CAL_SAMPLES 10000		/* samples per calibration point */
#define CAL_SPINS 2000			/* the long point of the null loop's cost line */
#define CAL_TOLERANCE 0.02		/* a check off by more is corrected */
#define CAL_TRIES 4			/* checks per null run at most */
#define DRIFT_WARN 0.10		/* a null run this far off its target is run again */
#define NULL_TRIES 3			/* null runs per pair at most: then it is invalid */
#define DRAIN_END_NS (20 * JTR_NS_PER_MS)	/* the drain's last wait */
#define SETTLE_NS (2 * JTR_NS_PER_MS)	/* the drain idle this long has caught up */
#define SETTLE_MAX_NS (500 * JTR_NS_PER_MS)
#define DEFAULT_BUCKETS 1000		/* 10 us: kernel send calls take microseconds */

enum { OPT_NO_DRAIN = 500, OPT_PAIRS, OPT_DRAIN_CPU, OPT_DESC };

static const char usage_text[] =
"usage: jtr send [OPTIONS]\n"
"\n"
"Time each send call of a transport, and an empty loop calibrated to the same\n"
"mean, in alternating pairs of runs on one CPU. Both runs pause between samples\n"
"the same way; whatever the send run has beyond its null run in the tail (p99,\n"
"p99.9, p99.99, max) is jitter the send path adds, what both have is the CPU's\n"
"own. A drain thread on another CPU receives everything, so no other program is\n"
"needed.\n"
"\n"
"options:\n"
JTR_COUNT_HELP "        samples per run (default 2000000; K/M/G suffixes;\n"
"                           --samples is the same)\n"
"      --pairs N            send/null pairs (default 3): runs send_1, null_1, ...\n"
"  -w, --warmup N           samples per run before recording (default 500)\n"
"  -p, --pause DURATION     busy-wait after each sample (default 898ns, a 1 KB\n"
"                           message on 10 Gb/s; 10us for 1 Gb/s)\n"
JTR_LEN_HELP "          message length, header included (default 64, >= 32)\n"
JTR_CPUS_HELP "          CPU[,DRAIN]: the CPU of the timed loops (default:\n"
"                           first isolated CPU, else the last online one), then\n"
"                           the drain thread's (default: another online CPU);\n"
"                           -1: do not pin\n"
"      --drain-cpu CPU      the drain thread's CPU alone\n"
"      --no-drain           no drain thread: 'jtr sub' with the same -T and --addr\n"
"                           receives (it is sent end of stream at the end)\n"
"  -t, --timebase TB        tsc (or 1, RDTSC; default) or clock (or 2)\n"
JTR_FIFO_HELP "          run SCHED_FIFO at PRIO (1-99)\n"
JTR_OUTPUT_HELP "         results folder (default results/DATE-HOST-send)\n"
"      --desc TEXT          run name in summary.txt's run headers and the gnuplot\n"
"                           titles (default 'jtr send')\n"
"  -H, --histo-buckets N    10 ns buckets in summary.txt's percentiles and the\n"
"                           gnuplot file (default 1000: 10 us)\n"
"      --threshold DUR      log samples longer than this (default max(1us, 8 x\n"
"                           the send run's warm-up minimum), the same in its\n"
"                           null run)\n"
"      --max-outliers N     outlier log entries kept per run (default 100000)\n"
"      --hist-error PCT     histogram's maximum relative error (default 1)\n"
JTR_QUIET_HELP "              no progress and no summary on stdout\n"
"  -h, --help               this text\n"
"\n"
TP_PROG_USAGE
"\n"
"A duration is NUMBER[UNIT], UNIT ns, us, ms, s, m or h; a bare number is in\n"
"seconds, but -p and --threshold still read one as ns, with a warning: write the\n"
"unit (898ns, 2us).\n"
"\n"
JTR_OLD_HELP " -r N (--pairs),\n"
"-a CPU (--drain-cpu), -d TEXT (--desc; a TEXT that reads as a duration is\n"
"refused: jtr send has none).\n"
"\n"
"The drain thread opens the receiving side itself (udp, unix-dgram: binds the\n"
"address; mcast: joins the group; tcp, unix: connects; shm: attaches), so the\n"
"address must be free. Datagrams are sent on a connected socket to it.\n"
"\n"
"Writes DIR/summary.txt (per run: a header with the settings and the measured\n"
"costs, min/max/average and the values 90 % to 99.999 % of samples are below;\n"
"then the pairs compared), DIR/send.gp (gnuplot data: each run's 10 ns\n"
"histogram), DIR/send_v_null.plt ('gnuplot send_v_null.plt' draws\n"
"send_v_null-K.png per pair), DIR/outliers.csv and DIR/result.json\n"
"(jtr-result/1).\n"
"\n"
"Exit status: 0; 1 if sending failed mid-run (what was measured is written); 2\n"
"for bad options, an address in use, or a message too long for the transport;\n"
"130 after Ctrl-C, SIGTERM or SIGHUP (what was measured is written, marked\n"
"partial).\n"
"\n"
"examples:\n"
"  jtr send                                  3 pairs of 2M UDP sends to loopback\n"
"  jtr send -T tcp -n 500K --pairs 1         one pair over TCP, 500K samples each\n"
"  jtr send -T shm -m 1024 -c 1,0            1 KB messages into a shm ring\n"
"  jtr send -T udp -p 10us --desc udp-1g     a 1 Gb/s NIC's pause, named udp-1g\n";

static const struct option long_opts[] = {
	JTR_LONG(COUNT),
	{ "samples", required_argument, NULL, JTR_COUNT_C },
	{ "pairs", required_argument, NULL, OPT_PAIRS },
	{ "warmup", required_argument, NULL, 'w' },
	{ "pause", required_argument, NULL, 'p' },
	JTR_LONG(LEN),
	JTR_LONG(CPUS),
	{ "cpu", required_argument, NULL, JTR_CPUS_C },
	{ "drain-cpu", required_argument, NULL, OPT_DRAIN_CPU },
	{ "no-drain", no_argument, NULL, OPT_NO_DRAIN },
	{ "timebase", required_argument, NULL, 't' },
	{ "desc", required_argument, NULL, OPT_DESC },
	{ "histo-buckets", required_argument, NULL, 'H' },
	JTR_PROBE_OUTLIER_LONG_OPTS,
	TP_PROG_LONG_OPTS,
	JTR_PROBE_LONG_OPTS,
	{ NULL, 0, NULL, 0 },
};

struct send_run {
	struct jtr_hist hist;
	struct jtr_hist lengths;	/* outlier lengths */
	struct jtr_olog log;
	struct jtr_sample loop;		/* the loop's settings and what it left */
	bool is_null;
	/* null runs: how the loop count was chosen */
	uint64_t spins;			/* the loop count used */
	uint64_t spins_line;		/* the cost line's first guess */
	double target_ns;		/* the send run's mean below its threshold */
	double check_ns;		/* median of the last short check */
	int checks;			/* short checks made */
	int tries;			/* null runs made (the last one kept) */
};

/* the null loop's cost line, mean(spins) = floor + per_spin x spins */
struct null_line {
	double floor_ns;		/* median at 0 spins */
	double long_ns;			/* median at CAL_SPINS */
	double per_spin_ns;
	bool done;
};

struct send_ctx {
	struct jtr_probe *p;
	struct tp_prog *tp;
	struct tp *tx, *rx;		/* rx: the drain's side, NULL with --no-drain */
	int cpu, drain_cpu;		/* -1: not pinned */
	bool drain;
	uint64_t samples, warmup, pause_ns, threshold_opt, max_outliers;
	uint32_t len, histo_buckets;
	int pairs;
	const char *desc;
	unsigned char *msg, *rbuf;
	uint64_t seq;			/* sequence numbers issued */
	uint64_t sent;			/* send calls that succeeded */
	struct send_run run[2 * MAX_PAIRS];
	struct send_run cal;		/* scratch for the calibration points */
	struct null_line line;
	int runs_done;
	int err;			/* a send's -errno */
	volatile int sender_done;
	volatile uint64_t drained;	/* messages the drain thread took */
	int drain_err;
	volatile uint64_t at_sample;
	volatile int at_run;
};

/* what a send sample uses, copied out of the context so that the loop
 * keeps it in registers (the send call is opaque: fields read through the
 * context would be reloaded inside the timed region after every call) */
struct send_regs {
	struct tp *t;
	struct tp_msg *m;
	uint32_t len;
	uint64_t seq;			/* the next sequence number */
};

/* prepare_msg - the next message, stamped before the timed region */
static inline __attribute__((always_inline)) void prepare_msg(void *arg, bool warmup)
{
	struct send_regs *a = arg;

	tp_msg_fill(a->m, a->len, warmup ? TP_F_WARMUP : 0, a->seq++, 0, 0);
}

/* send_msg - the timed send call */
static inline __attribute__((always_inline)) int send_msg(void *arg)
{
	struct send_regs *a = arg;

	return tp_send(a->t, a->m, a->len);
}

/* timed_run - @nwarm warm-up, then @nsamp samples into @r: a send call
 * (@send) or r->spins empty-loop iterations between fenced reads, then the
 * pause (jtr_sample.h). Always inlined with constant @tsc and @send, so
 * each of the four loops carries only its own code. */
static inline __attribute__((always_inline)) void
timed_run(struct send_ctx *c, struct send_run *r, uint64_t nwarm, uint64_t nsamp, bool tsc,
	  bool send)
{
	struct send_regs a = { c->tx, (struct tp_msg *)c->msg, c->len, c->seq };

	/* a null run comes with its send run's threshold: one meaning of
	 * "outlier" within a pair */
	r->loop = (struct jtr_sample){
		.warmup = nwarm,
		.samples = nsamp,
		.spins = r->spins,
		.threshold_ns = c->threshold_opt ? c->threshold_opt : r->loop.threshold_ns,
		.hist = &r->hist,
		.lengths = &r->lengths,
		.log = &r->log,
		.at_sample = &c->at_sample,
	};
	jtr_sample_timing(&r->loop, c->p, tsc, c->pause_ns);
	jtr_sample_run(&r->loop, tsc, send ? prepare_msg : NULL, send ? send_msg : NULL, &a);
	c->seq = a.seq;
	c->sent += r->loop.bodies;
	if (r->loop.err < 0)
		c->err = r->loop.err;
}

/* send_tsc - send calls timed with the TSC */
static void send_tsc(struct send_ctx *c, struct send_run *r, uint64_t w, uint64_t n)
{
	timed_run(c, r, w, n, true, true);
}

/* send_clock - send calls timed with clock_gettime */
static void send_clock(struct send_ctx *c, struct send_run *r, uint64_t w, uint64_t n)
{
	timed_run(c, r, w, n, false, true);
}

/* null_tsc - empty loops timed with the TSC */
static void null_tsc(struct send_ctx *c, struct send_run *r, uint64_t w, uint64_t n)
{
	timed_run(c, r, w, n, true, false);
}

/* null_clock - empty loops timed with clock_gettime */
static void null_clock(struct send_ctx *c, struct send_run *r, uint64_t w, uint64_t n)
{
	timed_run(c, r, w, n, false, false);
}

/* run_send - a send run in the chosen timebase */
static void run_send(struct send_ctx *c, struct send_run *r, uint64_t w, uint64_t n)
{
	if (c->p->tb.kind == JTR_TB_TSC)
		send_tsc(c, r, w, n);
	else
		send_clock(c, r, w, n);
}

/* run_null - a null run in the chosen timebase */
static void run_null(struct send_ctx *c, struct send_run *r, uint64_t w, uint64_t n)
{
	if (c->p->tb.kind == JTR_TB_TSC)
		null_tsc(c, r, w, n);
	else
		null_clock(c, r, w, n);
}

/* null_point - the median of a short null run at @spins, as the real null
 * run times it (same fences, same pause) */
static double null_point(struct send_ctx *c, uint64_t spins)
{
	struct send_run *s = &c->cal;

	jtr_hist_reset(&s->hist);
	jtr_hist_reset(&s->lengths);
	s->log.n = s->log.dropped = s->log.total_ns = 0;
	s->loop.threshold_ns = 0;
	s->spins = spins;
	run_null(c, s, CAL_WARMUP, CAL_SAMPLES);
	return s->hist.total ? (double)jtr_hist_value_at_percentile(&s->hist, 50) : 0;
}

/* measure_line - the null loop's cost line from two points (0 and
 * CAL_SPINS iterations); medians, so an interruption does not tilt it */
static void measure_line(struct send_ctx *c)
{
	struct null_line *l = &c->line;

	l->floor_ns = null_point(c, 0);
	l->long_ns = null_point(c, CAL_SPINS);
	l->per_spin_ns = (l->long_ns - l->floor_ns) / CAL_SPINS;
	if (l->per_spin_ns <= 0)	/* a disturbed point; never seen, but never divide by 0 */
		l->per_spin_ns = c->p->costs.loops_1000_ns > 0 ? c->p->costs.loops_1000_ns / 1000 : 1;
	l->done = !jtr_stop;
}

/* spins_for - iterations whose sample takes @ns by the line */
static uint64_t spins_for(const struct null_line *l, double ns)
{
	double s = (ns - l->floor_ns) / l->per_spin_ns;

	return s > 0 ? (uint64_t)(s + 0.5) : 0;
}

/* body_mean - the mean of the samples at or below the run's outlier
 * threshold: what a sample takes when nothing stops the CPU. A few host
 * stalls of milliseconds can double a run's mean; the null loop is matched
 * to this, and its own stalls come on top like the send run's. */
static double body_mean(const struct send_run *r)
{
	uint64_t n = r->log.n + r->log.dropped;

	if (r->hist.total <= n)
		return jtr_hist_mean(&r->hist);
	return (double)(r->hist.sum - r->log.total_ns) / (double)(r->hist.total - n);
}

/* settle - wait until the drain thread has taken what was sent, or has been
 * idle SETTLE_NS (datagrams it missed were dropped), so that its work on the
 * other CPU does not slow the calibration (they may share a core) */
static void settle(struct send_ctx *c)
{
	int64_t start = jtr_mono_ns(), quiet = start, now;
	uint64_t seen = c->drained;

	if (!c->drain)
		return;
	while (c->drained < c->sent && !jtr_stop) {
		now = jtr_mono_ns();
		if (c->drained != seen) {
			seen = c->drained;
			quiet = now;
		}
		if (now - quiet > (int64_t)SETTLE_NS || now - start > (int64_t)SETTLE_MAX_NS)
			break;
	}
}

/* choose_spins - the null run's loop count for @target_ns: the line's guess,
 * checked by a short run and corrected in proportion while the check is
 * more than CAL_TOLERANCE off (the loop's cost is not quite linear, and a
 * shared host changes its speed), at most CAL_TRIES checks */
static void choose_spins(struct send_ctx *c, struct send_run *n, double target_ns)
{
	const struct null_line *l = &c->line;
	uint64_t spins;

	settle(c);
	n->target_ns = target_ns;
	n->spins_line = spins = spins_for(l, target_ns);
	for (n->checks = 0; n->checks < CAL_TRIES && !jtr_stop;) {
		double above;

		n->spins = spins;
		n->check_ns = null_point(c, spins);
		n->checks++;
		above = n->check_ns - l->floor_ns;
		if (!spins || above <= 0 || (n->check_ns <= target_ns * (1 + CAL_TOLERANCE) &&
					     n->check_ns >= target_ns * (1 - CAL_TOLERANCE)))
			break;
		spins = (uint64_t)((double)spins * (target_ns - l->floor_ns) / above + 0.5);
	}
}

/* on_target - a null run's mean below its threshold within DRIFT_WARN of its
 * target (the send run's) */
static bool on_target(const struct send_run *n)
{
	double got = body_mean(n);

	return n->target_ns <= 0 ||
	       (got <= n->target_ns * (1 + DRIFT_WARN) && got >= n->target_ns * (1 - DRIFT_WARN));
}

/* run_pair_null - the null run of a pair, made again (up to NULL_TRIES in all)
 * while its mean below the threshold misses the target by more than
 * DRIFT_WARN: the calibration's short check hit the target, so the host
 * disturbed the run more than the check or ran the loop at another speed (a
 * busy host, another thread on the core); each time the loop count is
 * corrected in proportion to what the run measured. The last run is kept. */
static void run_pair_null(struct send_ctx *c, struct send_run *n)
{
	const struct null_line *l = &c->line;

	for (n->tries = 1;; n->tries++) {
		double above;

		run_null(c, n, c->warmup, c->samples);
		if (jtr_stop || n->loop.partial || n->tries >= NULL_TRIES || on_target(n))
			return;
		above = body_mean(n) - l->floor_ns;
		if (above > 0 && n->spins)
			n->spins = (uint64_t)((double)n->spins * (n->target_ns - l->floor_ns) / above +
					      0.5);
		jtr_hist_reset(&n->hist);
		jtr_hist_reset(&n->lengths);
		n->log.n = n->log.dropped = n->log.total_ns = 0;
		settle(c);
	}
}

/* warn_drift - say so when a pair's null run still missed its target by more
 * than DRIFT_WARN after NULL_TRIES runs: the pair is not a valid measurement
 * (results/validity.py says so too) */
static void warn_drift(struct send_ctx *c, int k)
{
	const struct send_run *n = &c->run[2 * k + 1];

	if (n->loop.partial || on_target(n))
		return;
	jtr_warn(c->p, "pair %d: the null loop's mean below its outlier threshold is %.0f ns for a "
		 "target of %.0f ns after %d runs (median %.0f ns in calibration, %llu ns in the "
		 "run): the host disturbed the runs or ran the loop at another speed, so 'added' "
		 "compares the send path with another workload: not a valid measurement",
		 k + 1, body_mean(n), n->target_ns, n->tries, n->check_ns,
		 (unsigned long long)jtr_hist_value_at_percentile(&n->hist, 50));
}

/* sender - the pairs: send run, calibration, null run, ... */
static void sender(void *arg)
{
	struct send_ctx *c = arg;

	measure_line(c);
	for (int k = 0; k < c->pairs && !jtr_stop; k++) {
		struct send_run *s = &c->run[2 * k], *n = &c->run[2 * k + 1];

		c->at_run = 2 * k;
		run_send(c, s, c->warmup, c->samples);
		c->runs_done = 2 * k + 1;
		if (jtr_stop || c->err || !s->hist.total)
			break;
		c->at_run = 2 * k + 1;
		choose_spins(c, n, body_mean(s));
		if (jtr_stop)
			break;
		n->loop.threshold_ns = s->loop.threshold_ns;
		run_pair_null(c, n);
		c->runs_done = 2 * k + 2;
	}
	__atomic_store_n(&c->sender_done, 1, __ATOMIC_RELEASE);
}

/* drainer - take every message until the sender is done, then what is
 * still on its way (all of it, or until none came for DRAIN_END_NS: lost
 * datagrams never come) */
static void drainer(void *arg)
{
	struct send_ctx *c = arg;
	uint64_t n = 0;
	bool done = false;

	for (;;) {
		ssize_t rc;

		if (!done && __atomic_load_n(&c->sender_done, __ATOMIC_ACQUIRE))
			done = true;
		if (done && n >= c->sent)
			break;
		rc = tp_recv(c->rx, c->rbuf, c->len, done ? DRAIN_END_NS : 100 * JTR_NS_PER_MS);
		if (rc == -EAGAIN) {
			if (done)
				break;
			continue;
		}
		if (rc < 0) {
			c->drain_err = (int)rc;
			break;
		}
		if (((const struct tp_msg *)c->rbuf)->flags & TP_F_HELLO)
			continue;	/* the session's opening, not a message sent */
		c->drained = ++n;
	}
}

/* progress - "send: run 3/6 (send_2), 1.2M of 2M samples" */
static void progress(struct jtr_probe *p, void *arg, double elapsed)
{
	struct send_ctx *c = arg;

	jtr_progress_line(p, "send: run %d/%d (%s_%d), %.1fM of %.1fM samples, %.0f s",
			  c->at_run + 1, 2 * c->pairs, c->at_run % 2 ? "null" : "send",
			  c->at_run / 2 + 1, (double)c->at_sample / 1e6, (double)c->samples / 1e6,
			  elapsed);
}

/* legacy_hdr - jtr_null's header fields of run @k */
static void legacy_hdr(const struct send_ctx *c, int k, struct jtr_legacy_hdr *s, char *desc,
		       size_t dn, char *lead, size_t ln)
{
	const struct jtr_probe *p = c->p;

	if (k % 2) {
		snprintf(desc, dn, "%s (null loop)", c->desc);
		snprintf(lead, ln, "no_send_spin=%llu", (unsigned long long)c->run[k].spins);
	} else {
		snprintf(desc, dn, "%s", c->desc);
		snprintf(lead, ln, "Msg_size=%u", c->len);
	}
	jtr_probe_legacy_hdr(p, s);
	s->desc = desc;
	s->lead = lead;
	s->cpu_num = c->cpu;
	s->histo_buckets = c->histo_buckets;
	s->num_samples = c->samples;
	s->pause_ns = c->pause_ns;
	s->warmup_loops = c->warmup;
}

/* the points of the pair comparison: a percentile, or 0 for max */
static const struct { const char *key; double pct; } cmp_points[] = {
	{ "50", 50 }, { "99", 99 }, { "99.9", 99.9 }, { "99.99", 99.99 }, { "99.999", 99.999 },
	{ "max", 0 },
};
#define NCMP ((int)(sizeof(cmp_points) / sizeof(cmp_points[0])))

/* cmp_value - the value of comparison point @i in @h */
static uint64_t cmp_value(const struct jtr_hist *h, int i)
{
	return cmp_points[i].pct ? jtr_hist_value_at_percentile(h, cmp_points[i].pct) : h->max;
}

/* pairs_done - pairs whose both runs exist */
static int pairs_done(const struct send_ctx *c)
{
	return c->runs_done / 2;
}

/* comparison - the pairs compared, after the legacy blocks */
static void comparison(FILE *f, const struct send_ctx *c)
{
	const struct jtr_probe *p = c->p;
	char drain[96];

	if (!c->drain)
		snprintf(drain, sizeof(drain), "no drain thread (an outside receiver)");
	else if (c->drain_cpu >= 0)
		snprintf(drain, sizeof(drain), "drain thread on CPU %d (%s receive)", c->drain_cpu,
			 c->tp->o.busy ? "busy-poll" : "blocking");
	else
		snprintf(drain, sizeof(drain), "drain thread unpinned (%s receive)",
			 c->tp->o.busy ? "busy-poll" : "blocking");
	fprintf(f, "\n%s: %s, %u-byte messages, %d of %d pairs of %llu samples, pause %llu ns, "
		"%s timebase, %s%s\n", c->desc, tp_describe(c->tx), c->len, pairs_done(c), c->pairs,
		(unsigned long long)c->samples, (unsigned long long)c->pause_ns,
		jtr_tb_name(p->tb.kind), drain, p->partial ? ", PARTIAL" : "");
	fprintf(f, "null loop cost: %.1f ns + %.4f ns per spin (medians at 0 and %d spins)\n",
		c->line.floor_ns, c->line.per_spin_ns, CAL_SPINS);
	for (int k = 0; k < pairs_done(c); k++) {
		const struct send_run *s = &c->run[2 * k], *n = &c->run[2 * k + 1];
		double ms = jtr_hist_mean(&s->hist), mn = jtr_hist_mean(&n->hist);
		double bs = body_mean(s), bn = body_mean(n);

		fprintf(f, "pair %d: send mean %.1f ns, null loop mean %.1f ns (%llu spins): "
			"send/null %.3f\n", k + 1, ms, mn, (unsigned long long)n->spins,
			mn > 0 ? ms / mn : 0.0);
		fprintf(f, "  below the %llu ns outlier threshold (what the loop is matched to): "
			"send %.1f ns, null loop %.1f ns, send/null %.3f\n",
			(unsigned long long)s->loop.threshold_ns, bs, bn, bn > 0 ? bs / bn : 0.0);
		fprintf(f, "  %-8s %12s %12s %12s\n", "ns", "send", "null loop", "added");
		for (int i = 0; i < NCMP; i++) {
			uint64_t a = cmp_value(&s->hist, i), b = cmp_value(&n->hist, i);
			char label[16];

			snprintf(label, sizeof(label), "%s%s", cmp_points[i].pct ? "p" : "", cmp_points[i].key);
			fprintf(f, "  %-8s %12llu %12llu %+12lld\n", label, (unsigned long long)a,
				(unsigned long long)b, (long long)a - (long long)b);
		}
	}
}

/* write_run - one run's object in "runs" */
static void write_run(struct jtr_json *j, const struct send_ctx *c, int k)
{
	const struct jtr_probe *p = c->p;
	const struct send_run *r = &c->run[k];
	int64_t t0 = jtr_tb_mono_ns(&p->tb, r->loop.start_raw), t1 = jtr_tb_mono_ns(&p->tb, r->loop.end_raw);
	uint64_t dur = t1 > t0 ? (uint64_t)(t1 - t0) : 0;
	char name[32];

	snprintf(name, sizeof(name), "%s_%d", k % 2 ? "null" : "send", k / 2 + 1);
	jtr_result_run_begin(j, name, c->cpu, r->loop.partial, t0, t1, dur, &r->hist);
	jtr_json_int(j, "run", k + 1);
	jtr_json_int(j, "pair", k / 2 + 1);
	jtr_json_str(j, "kind", k % 2 ? "null" : "send");
	jtr_json_uint(j, "warmup_min_ns", r->loop.warm_min_ns);
	jtr_json_fixed(j, "mean_below_threshold_ns", body_mean(r), 3);
	if (k % 2) {
		jtr_json_uint(j, "spins", r->spins);
		jtr_json_fixed(j, "target_ns", r->target_ns, 1);
	}
	jtr_result_write_outliers(j, &r->log, &r->lengths, r->loop.threshold_ns, dur,
				  r->hist.total ? r->hist.min : 0, "outliers.csv");
	jtr_result_write_hist(j, "histogram", &r->hist);
	jtr_json_obj_end(j);
}

/* write_pairs - "null_calibration" and "pairs" */
static void write_pairs(struct jtr_json *j, const struct send_ctx *c)
{
	jtr_json_obj_begin(j, "null_calibration");
	jtr_json_str(j, "method", "medians of short null runs at 0 and long_spins iterations give "
		     "a line; each null run's spins come from the line at its send run's mean "
		     "below the outlier threshold, checked by short runs and corrected in "
		     "proportion while off by more than the tolerance (at most max_checks); a "
		     "null run whose mean below the threshold is off its target by more than "
		     "run_tolerance is run again with its spins corrected by what it measured, "
		     "at most max_null_tries runs, the last kept");
	jtr_json_uint(j, "samples_per_point", CAL_SAMPLES);
	jtr_json_uint(j, "long_spins", CAL_SPINS);
	jtr_json_fixed(j, "floor_ns", c->line.floor_ns, 1);
	jtr_json_fixed(j, "long_ns", c->line.long_ns, 1);
	jtr_json_fixed(j, "ns_per_spin", c->line.per_spin_ns, 4);
	jtr_json_double(j, "tolerance", CAL_TOLERANCE);
	jtr_json_int(j, "max_checks", CAL_TRIES);
	jtr_json_double(j, "run_tolerance", DRIFT_WARN);
	jtr_json_int(j, "max_null_tries", NULL_TRIES);
	jtr_json_obj_end(j);

	jtr_json_arr_begin(j, "pairs");
	for (int k = 0; k < pairs_done(c); k++) {
		const struct send_run *s = &c->run[2 * k], *n = &c->run[2 * k + 1];
		double ms = jtr_hist_mean(&s->hist), mn = jtr_hist_mean(&n->hist);
		double bs = body_mean(s), bn = body_mean(n);
		char sn[16], nn[16];

		snprintf(sn, sizeof(sn), "send_%d", k + 1);
		snprintf(nn, sizeof(nn), "null_%d", k + 1);
		jtr_json_obj_begin(j, NULL);
		jtr_json_int(j, "pair", k + 1);
		jtr_json_str(j, "send_run", sn);
		jtr_json_str(j, "null_run", nn);
		jtr_json_fixed(j, "target_ns", n->target_ns, 1);
		jtr_json_uint(j, "spins_from_line", n->spins_line);
		jtr_json_int(j, "checks", n->checks);
		jtr_json_fixed(j, "check_median_ns", n->check_ns, 1);
		jtr_json_uint(j, "spins", n->spins);
		jtr_json_int(j, "null_tries", n->tries);
		jtr_json_fixed(j, "send_mean_ns", ms, 3);
		jtr_json_fixed(j, "null_mean_ns", mn, 3);
		jtr_json_fixed(j, "mean_ratio", mn > 0 ? ms / mn : 0.0, 4);
		jtr_json_fixed(j, "send_mean_below_threshold_ns", bs, 3);
		jtr_json_fixed(j, "null_mean_below_threshold_ns", bn, 3);
		jtr_json_fixed(j, "mean_below_threshold_ratio", bn > 0 ? bs / bn : 0.0, 4);
		jtr_json_obj_begin(j, "added_ns");
		for (int i = 0; i < NCMP; i++)
			jtr_json_int(j, cmp_points[i].key,
				     (long long)cmp_value(&s->hist, i) - (long long)cmp_value(&n->hist, i));
		jtr_json_obj_end(j);
		jtr_json_obj_end(j);
	}
	jtr_json_arr_end(j);
}

/* send_duration_ns - the send runs' time together */
static uint64_t send_duration_ns(const struct send_ctx *c)
{
	uint64_t sum = 0;

	for (int k = 0; k < c->runs_done; k += 2) {
		int64_t t0 = jtr_tb_mono_ns(&c->p->tb, c->run[k].loop.start_raw);
		int64_t t1 = jtr_tb_mono_ns(&c->p->tb, c->run[k].loop.end_raw);

		sum += t1 > t0 ? (uint64_t)(t1 - t0) : 0;
	}
	return sum;
}

/* send_samples - measured send calls */
static uint64_t send_samples(const struct send_ctx *c)
{
	uint64_t n = 0;

	for (int k = 0; k < c->runs_done; k += 2)
		n += c->run[k].hist.total;
	return n;
}

/* gp_points - the run has points in its send.gp block (not every sample
 * beyond the -H range) */
static bool gp_points(const struct send_ctx *c, const struct send_run *r)
{
	uint64_t over = 0, *lin = calloc(c->histo_buckets, sizeof(*lin));

	if (!lin)
		return false;
	jtr_hist_linear(&r->hist, JTR_LEGACY_BUCKET_NS, c->histo_buckets, lin, &over);
	free(lin);
	return over < r->hist.total;
}

/* gp_str - @s as the inside of a gnuplot double-quoted string */
static void gp_str(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s == '\n' ? ' ' : *s, f);
	}
}

/* write_plot - a gnuplot script drawing each pair of send.gp into
 * send_v_null-K.png (run it in the results folder). gnuplot skips a block
 * without points when it counts "index", so the indexes count only blocks
 * with points, and a run without any is left out of its plot. */
static void write_plot(FILE *f, const struct send_ctx *c)
{
	int idx = 0;

	fprintf(f, "# gnuplot send_v_null.plt: send_v_null-K.png, one per pair of send.gp\n"
		"# (its blocks, one per run: send_1, null_1, send_2, ...)\n"
		"set terminal pngcairo size 1000,600\n"
		"set logscale y\nset xrange [0:%u]\nset yrange [0.5:*]\n"
		"set xlabel \"ns (10 ns buckets)\"\nset ylabel \"samples\"\n",
		c->histo_buckets * JTR_LEGACY_BUCKET_NS);
	for (int k = 0; k < pairs_done(c); k++) {
		const struct send_run *s = &c->run[2 * k], *n = &c->run[2 * k + 1];
		bool ps = gp_points(c, s), pn = gp_points(c, n);

		if (!ps && !pn) {
			fprintf(f, "# pair %d: every sample is beyond %u ns (-H); nothing to draw\n",
				k + 1, c->histo_buckets * JTR_LEGACY_BUCKET_NS);
			continue;
		}
		fprintf(f, "set output \"send_v_null-%d.png\"\nset title \"", k + 1);
		gp_str(f, c->desc);
		fputs(": ", f);
		gp_str(f, tp_describe(c->tx));
		fprintf(f, ", pair %d: send mean %.0f ns, null loop mean %.0f ns\" noenhanced\nplot ",
			k + 1, jtr_hist_mean(&s->hist), jtr_hist_mean(&n->hist));
		if (ps)
			fprintf(f, "\"send.gp\" index %d using 1:2 with impulses lw 2 title \"send\"%s",
				idx++, pn ? ", \\\n     " : "\n");
		if (pn)
			fprintf(f, "\"send.gp\" index %d using ($1+3):2 with impulses lw 2 "
				"title \"null loop\"\n", idx++);
	}
}

/* write_outputs - summary.txt, send.gp, send_v_null.plt, outliers.csv,
 * result.json */
static void write_outputs(struct send_ctx *c, const char *peer)
{
	struct jtr_probe *p = c->p;
	struct jtr_afile txt, gp, plt, csv, res;
	struct jtr_legacy_hdr sh;
	struct jtr_json j;
	char desc[256], lead[64], hdr[1024];
	uint64_t dur = send_duration_ns(c);

	jtr_probe_open(p, &txt, "summary.txt");
	jtr_probe_open(p, &gp, "send.gp");
	jtr_probe_open(p, &plt, "send_v_null.plt");
	jtr_probe_open(p, &csv, "outliers.csv");
	jtr_probe_open(p, &res, "result.json");
	jtr_olog_csv_header(csv.f, NULL);
	for (int k = 0; k < c->runs_done; k++) {
		struct send_run *r = &c->run[k];

		legacy_hdr(c, k, &sh, desc, sizeof(desc), lead, sizeof(lead));
		jtr_legacy_header(hdr, sizeof(hdr), &sh);
		jtr_probe_legacy_run(p, txt.f, gp.f, k, hdr, &r->hist, c->histo_buckets);
		jtr_olog_write_csv(csv.f, &r->log, &p->tb);
	}
	comparison(txt.f, c);
	if (!p->quiet)
		comparison(stdout, c);
	write_plot(plt.f, c);

	jtr_json_init(&j, res.f);
	jtr_probe_result_begin(p, &j);
	jtr_json_obj_begin(&j, "params");
	jtr_json_uint(&j, "samples", c->samples);
	jtr_json_int(&j, "pairs", c->pairs);
	jtr_json_uint(&j, "warmup", c->warmup);
	jtr_json_uint(&j, "pause_ns", c->pause_ns);
	jtr_json_uint(&j, "msg_len", c->len);
	if (c->cpu >= 0) jtr_json_int(&j, "cpu", c->cpu); else jtr_json_null(&j, "cpu");
	jtr_json_bool(&j, "drain", c->drain);
	if (c->drain && c->drain_cpu >= 0)
		jtr_json_int(&j, "drain_cpu", c->drain_cpu);
	else
		jtr_json_null(&j, "drain_cpu");
	jtr_json_uint(&j, "histo_buckets", c->histo_buckets);
	jtr_json_str(&j, "desc", c->desc);
	jtr_json_uint(&j, "wait_ns", c->tp->o.wait_ns);
	jtr_probe_params_common(p, &j, c->threshold_opt, c->max_outliers);
	jtr_json_obj_end(&j);

	tp_prog_write_transport(&j, c->tp, c->len);
	jtr_json_str(&j, "peer", peer);
	jtr_json_uint(&j, "sent", send_samples(c));
	jtr_json_uint(&j, "sent_total", c->sent);
	if (c->drain)
		jtr_json_uint(&j, "drained", c->drained);
	else
		jtr_json_null(&j, "drained");
	jtr_json_uint(&j, "duration_ns", dur);
	jtr_json_fixed(&j, "rate_hz", dur ? (double)send_samples(c) * 1e9 / (double)dur : 0.0, 3);
	jtr_json_obj_end(&j);
	write_pairs(&j, c);

	jtr_json_arr_begin(&j, "runs");
	for (int k = 0; k < c->runs_done; k++)
		write_run(&j, c, k);
	jtr_json_arr_end(&j);
	jtr_json_obj_begin(&j, "files");
	jtr_json_str(&j, "summary", "summary.txt");
	jtr_json_str(&j, "gnuplot", "send.gp");
	jtr_json_str(&j, "plot", "send_v_null.plt");
	jtr_json_str(&j, "outliers", "outliers.csv");
	jtr_json_obj_end(&j);
	jtr_probe_result_end(p, &j);

	jtr_probe_commit_file(p, &txt);
	jtr_probe_commit_file(p, &gp);
	jtr_probe_commit_file(p, &plt);
	jtr_probe_commit_file(p, &csv);
	jtr_probe_commit_file(p, &res);
}

/* the drain side, opened beside the sending side (which may wait for it) */
struct opener {
	pthread_t th;
	struct tp_opts o;
	struct tp *t;
	struct jtr_err e;
	int rc;
};

/* open_rx - the receiving role, in its own thread */
static void *open_rx(void *arg)
{
	struct opener *op = arg;

	op->rc = tp_open(&op->t, &op->o, TP_SUB, &op->e);
	return NULL;
}

/* open_both - the drain's receiving side and the sending side; a stream or
 * shm sender waits for its receiver (both open at once), a datagram receiver
 * binds before the sender opens (and says the hello the receiver joins) */
static void open_both(struct jtr_probe *p, struct send_ctx *c)
{
	static struct opener op;

	c->tp->o.hello_once = true;	/* timed sends stay one syscall each */
	if (!c->drain) {
		c->tx = tp_prog_open(p, c->tp, TP_PUB);
		return;
	}
	op.o = c->tp->o;
	jtr_err_clear(&op.e);
	if (tp_prog_has(c->tp, TP_P_DATAGRAM)) {
		open_rx(&op);
		c->tx = tp_prog_open(p, c->tp, TP_PUB);
	} else {
		if (pthread_create(&op.th, NULL, open_rx, &op))
			jtr_fatal(p, "cannot start a thread");
		c->tx = tp_prog_open(p, c->tp, TP_PUB);
		pthread_join(op.th, NULL);
	}
	if (op.rc < 0)
		jtr_usage_error(p, "the drain cannot receive on %s: %s", tp_describe(c->tx),
				op.e.msg[0] ? op.e.msg : strerror(-op.rc));
	c->rx = op.t;
}

/* end_of_stream - --no-drain: tell 'jtr sub' how many numbers were issued */
static void end_of_stream(struct send_ctx *c)
{
	tp_prog_end_of_stream(c->tx, c->msg, c->len, c->seq);
}

/* other_cpu - an online, allowed CPU other than @cpu, or -1 */
static int other_cpu(int cpu)
{
	cpu_set_t on, ok;

	if (jtr_cpus_online(&on) < 0 || jtr_cpus_allowed(&ok) < 0)
		return -1;
	for (int k = 0; k < CPU_SETSIZE; k++)
		if (k != cpu && CPU_ISSET(k, &on) && CPU_ISSET(k, &ok))
			return k;
	return -1;
}

/* cpus_opt - -c CPU[,DRAIN]: the timed loops' CPU into @cpus (*@no_pin: -1),
 * the drain thread's into c->drain_cpu */
static void cpus_opt(struct jtr_probe *p, struct send_ctx *c, const char *arg, cpu_set_t *cpus,
		     bool *no_pin, bool *drain_given)
{
	const char *comma = strchr(arg, ',');
	char first[64];

	if (comma && (size_t)(comma - arg) >= sizeof(first))
		jtr_usage_error(p, "-c %s: give CPU or CPU,DRAIN (e.g. -c 1,0)", arg);
	snprintf(first, sizeof(first), "%.*s", comma ? (int)(comma - arg) : (int)strlen(arg), arg);
	jtr_opt_cpus(p, first, true, cpus, no_pin);
	if (!*no_pin && CPU_COUNT(cpus) != 1)
		jtr_usage_error(p, "-c %s: jtr send times on one CPU; give one CPU number (and the "
				"drain thread's after a comma: -c 1,0)", arg);
	if (comma) {
		if (strchr(comma + 1, ','))
			jtr_usage_error(p, "-c %s: give CPU or CPU,DRAIN (e.g. -c 1,0)", arg);
		c->drain_cpu = tp_prog_cpu_opt(p, "-c", comma + 1);
		*drain_given = true;
	}
}

/* parse_opt - getopt's @opt (with optarg), one of jtr send's own, into @c;
 * the CPU list of -c into @cpus (*@no_pin: -c -1) */
static void parse_opt(struct jtr_probe *p, struct send_ctx *c, int opt, cpu_set_t *cpus,
		      bool *no_pin, bool *cpu_given, bool *drain_given)
{
	switch (opt) {
	case JTR_COUNT_C: c->samples = jtr_opt_count(p, "-n", optarg, 1, 1ULL << 40); break;
	case 'r':
		jtr_opt_old(p, 'r', "--pairs", "the send/null pairs");
		/* fall through */
	case OPT_PAIRS:
		c->pairs = jtr_opt_int(p, opt == 'r' ? "-r" : "--pairs", optarg, 1, MAX_PAIRS);
		break;
	case 'w': c->warmup = jtr_opt_count(p, "-w", optarg, 0, 1ULL << 32); break;
	case 'p':
		c->pause_ns = jtr_opt_duration_legacy(p, "-p", optarg, 1, 0, 10 * JTR_NS_PER_S);
		break;
	case JTR_LEN_C:
		c->len = (uint32_t)jtr_opt_count(p, "-m", optarg, TP_HDR_LEN, 1u << 24);
		break;
	case JTR_CPUS_C: cpus_opt(p, c, optarg, cpus, no_pin, drain_given); *cpu_given = true; break;
	case 'a':
		jtr_opt_old(p, 'a', "--drain-cpu", "the drain thread's CPU; or -c CPU,DRAIN");
		/* fall through */
	case OPT_DRAIN_CPU:
		c->drain_cpu = tp_prog_cpu_opt(p, opt == 'a' ? "-a" : "--drain-cpu", optarg);
		*drain_given = true;
		break;
	case OPT_NO_DRAIN: c->drain = false; break;
	case 'd': c->desc = jtr_opt_old_desc(p, optarg); break;
	case OPT_DESC: c->desc = optarg; break;
	case 'H': c->histo_buckets = (uint32_t)jtr_opt_int(p, "-H", optarg, 1, 1000000); break;
	}
}

/* parse_args - the defaults, then the options into @c and the transport's
 * into @tp; the timed CPU in c->cpu (-1 and *@no_pin: -c -1), the drain's
 * in c->drain_cpu; or exit 2 */
static void parse_args(struct jtr_probe *p, struct send_ctx *c, struct tp_prog *tp, int argc,
		       char **argv, bool *no_pin)
{
	bool cpu_given = false, drain_given = false;
	cpu_set_t cpus;
	int opt;

	c->samples = 2000000;
	c->pairs = 3;
	c->warmup = 500;
	c->pause_ns = 898;
	c->len = 64;
	c->drain = true;
	c->histo_buckets = DEFAULT_BUCKETS;
	c->max_outliers = 100000;
	c->desc = "jtr send";
	while ((opt = getopt_long(argc, argv, ":" JTR_COUNT_S "r:w:p:" JTR_LEN_S JTR_CPUS_S
				  "a:t:" JTR_FIFO_S JTR_OUTPUT_S "d:H:" JTR_QUIET_S "h" TP_PROG_SHORT,
				  long_opts, NULL)) != -1) {
		if (jtr_probe_common_opt(p, opt, usage_text, argv) || tp_prog_opt(p, tp, opt, optarg) ||
		    jtr_probe_outlier_opt(p, opt, optarg, &c->threshold_opt, &c->max_outliers))
			continue;
		parse_opt(p, c, opt, &cpus, no_pin, &cpu_given, &drain_given);
	}
	jtr_probe_no_args(p, argc, argv);
	if (!c->drain && drain_given)
		jtr_usage_error(p, "a drain CPU and --no-drain: without a drain thread there is no CPU to "
				"give it; drop one of them");
	tp->o.msg_max = c->len;
	tp->o.subs = 1;
	tp_prog_check(p, tp, TP_PUB);
	jtr_probe_default_cpus(&cpus, cpu_given);
	c->cpu = jtr_probe_one_cpu(p, "-c", &cpus, *no_pin);
	if (c->drain && !drain_given)
		c->drain_cpu = c->cpu >= 0 ? other_cpu(c->cpu) : -1;
}

/* prepare - everything the hot loop touches, allocated and pre-touched: the
 * messages, every run's series, and the stacks of the sender and the drain
 * (@w; *@nw of them); exit 1 when out of memory */
static void prepare(struct jtr_probe *p, struct send_ctx *c, struct jtr_worker *w, int *nw)
{
	c->msg = calloc(1, c->len);
	c->rbuf = malloc(c->len);
	if (!c->msg || !c->rbuf)
		jtr_fatal(p, "out of memory for %u-byte messages", c->len);
	jtr_prefault(c->msg, c->len);
	jtr_prefault(c->rbuf, c->len);
	for (int k = 0; k < 2 * c->pairs; k++)
		jtr_probe_series_init(p, &c->run[k].hist, &c->run[k].lengths, &c->run[k].log,
				      c->max_outliers, c->cpu);
	jtr_probe_series_init(p, &c->cal.hist, &c->cal.lengths, &c->cal.log, 0, c->cpu);
	*nw = c->drain ? 2 : 1;
	if (jtr_worker_alloc(&w[0], c->cpu) < 0 || (c->drain && jtr_worker_alloc(&w[1], c->drain_cpu) < 0))
		jtr_fatal(p, "cannot allocate a thread stack");
}

/* warn_cpus - where the timed loops and the drain may disturb each other */
static void warn_cpus(struct jtr_probe *p, const struct send_ctx *c, bool no_pin)
{
	if (no_pin)
		jtr_warn(p, "-c -1: not pinned; the thread may move between CPUs, which adds jitter");
	if (c->drain && c->cpu >= 0 && c->drain_cpu == c->cpu)
		jtr_warn(p, "the drain thread shares CPU %d with the timed loops: its receives "
			 "interrupt them", c->cpu);
	else if (c->drain && c->cpu >= 0 && c->drain_cpu < 0)
		jtr_warn(p, "the drain thread is not pinned; it may run on CPU %d and interrupt the "
			 "timed loops", c->cpu);
}

/* judge - what happened, after the pairs: the peer's state for result.json
 * ("ok", "gone", "stalled" or "error"), the run partial or not, warnings; exit
 * 2 when nobody received at all */
static const char *judge(struct jtr_probe *p, struct send_ctx *c)
{
	const char *peer = "ok";

	if (c->err == -EPIPE && c->sent <= 1 && !c->drain)
		jtr_usage_error(p, "nobody is receiving on %s; start 'jtr sub' there first, or drop "
				"--no-drain", tp_describe(c->tx));
	if (c->err == -EPIPE)
		peer = "gone";
	else if (c->err == -ETIMEDOUT)
		peer = "stalled";
	else if (c->err)
		peer = "error";
	if (c->err || c->runs_done < 2 * c->pairs)
		p->partial = true;
	for (int k = 0; k < c->runs_done; k++)
		if (c->run[k].loop.partial)
			p->partial = true;
	if (c->drain_err)
		jtr_warn(p, "the drain thread stopped receiving: %s", strerror(-c->drain_err));
	for (int k = 0; k < pairs_done(c); k++)
		warn_drift(c, k);
	return peer;
}

/* say_failure - once the results are in place: why sending stopped, if it
 * failed; the exit status (1 when it did) */
static int say_failure(const struct jtr_probe *p, const struct send_ctx *c)
{
	if (c->err == -ETIMEDOUT)
		fprintf(stderr, "%s: a send call was held up for %.0f s (the receiver stopped taking "
			"messages) after %llu sends\n", p->prog, (double)c->tp->o.wait_ns / 1e9,
			(unsigned long long)c->sent);
	else if (c->err)
		fprintf(stderr, "%s: sending failed after %llu messages: %s\n", p->prog,
			(unsigned long long)c->sent, strerror(-c->err));
	return c->err ? 1 : 0;
}

int main(int argc, char **argv)
{
	static struct send_ctx c;
	struct jtr_probe p;
	struct tp_prog tp;
	struct jtr_worker w[2];
	bool no_pin = false;
	const char *peer;
	int nw, rc;

	jtr_probe_init(&p, "send", argc, argv);
	tp_prog_init(&tp);
	c.p = &p;
	c.tp = &tp;

	/* 1. options */
	parse_args(&p, &c, &tp, argc, argv, &no_pin);

	/* 2. everything the hot loop touches, allocated and pre-touched */
	prepare(&p, &c, w, &nw);

	/* 3. FIFO and mlockall, the privilege drop, the folder; then the transport */
	jtr_probe_privileged(&p);
	warn_cpus(&p, &c, no_pin);
	jtr_probe_timebase(&p);
	open_both(&p, &c);

	/* 4. the pairs, with the drain beside them */
	w[0].fn = sender;
	w[0].arg = &c;
	w[1].fn = drainer;
	w[1].arg = &c;
	jtr_probe_map_begin(&p);
	jtr_workers_start(&p, w, nw);
	jtr_workers_wait(&p, w, nw, progress, &c);
	if (!c.drain && !c.err)
		end_of_stream(&c);
	jtr_probe_map_end(&p);

	/* 5. what happened, then the files */
	peer = judge(&p, &c);
	write_outputs(&c, peer);
	jtr_probe_finish(&p);
	rc = say_failure(&p, &c);
	tp_close(c.rx);
	tp_close(c.tx);
	return jtr_probe_exit(&p, rc);
}
