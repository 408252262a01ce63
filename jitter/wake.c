// SPDX-License-Identifier: GPL-2.0-only
/* wake.c - jtr wake: timer wake-up latency, like cyclictest.
 *
 * One pinned thread per CPU sleeps with an absolute clock_nanosleep on
 * CLOCK_MONOTONIC until the next period of a fixed schedule (every -i from a
 * start all threads share) and, the moment it runs again, reads the TSC: the
 * latency is when it ran less when it should have. The schedule never
 * shifts: a thread still busy (or held off the CPU) past its next period
 * does not sleep for it, it measures how late it already is, and the
 * period is counted as missed (no coordinated omission: every period is a
 * sample). Each latency goes into a histogram, each one above the threshold
 * into the outlier log with its intended time as the start, so that
 * 'jtr run wake' can take every outlier apart against the kernel's events.
 *
 * The TSC is mapped onto CLOCK_MONOTONIC by a (TSC, clock_gettime, TSC)
 * triple read just before each sleep: the conversion spans one period, so
 * neither the calibration's error nor NTP's slewing of CLOCK_MONOTONIC
 * adds up over a long run.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "jtr_cli.h"
#include "jtr_probe.h"
#include "jtr_series.h"

#define WARMUP_DEFAULT 100
#define INTERVAL_MIN_NS 1000ULL			/* 1 us */
#define INTERVAL_MAX_NS (10 * JTR_NS_PER_S)
#define START_AFTER_NS (20 * JTR_NS_PER_MS)	/* the first period: after the threads are up */

static const char usage_text[] =
"usage: jtr wake [OPTIONS]\n"
"\n"
"Timer wake-up latency, like cyclictest: one pinned thread per CPU sleeps until\n"
"the next period of a fixed schedule (absolute clock_nanosleep on\n"
"CLOCK_MONOTONIC) and reads the TSC as soon as it runs; the latency is how late\n"
"it ran. A late wake-up never shifts the schedule: a period that has passed\n"
"before the thread could sleep is measured too (how late it already was) and\n"
"counted as missed. Every latency goes into a lossless histogram; every one\n"
"above the threshold into outliers.csv, its start the intended wake-up time, for\n"
"'jtr run wake' to take apart.\n"
"\n"
"options:\n"
JTR_CPUS_HELP "          CPUs to measure, one thread each, e.g. 1 or 2-3\n"
"                           (default: first isolated CPU, else the last online one)\n"
"  -i, --interval DURATION  period of the schedule (default 1ms; write the unit:\n"
"                           cyclictest's -i 200 is -i 200us)\n"
JTR_DURATION_HELP "  how long (default 10s; 30 is seconds, or 500ms, 2m)\n"
JTR_COUNT_HELP "        COUNT wake-ups per thread instead of a duration\n"
"                           (--loops is the same)\n"
"      --warmup COUNT       wake-ups before recording (default 100); their\n"
"                           minimum sets the default threshold\n"
JTR_FIFO_HELP "          run SCHED_FIFO at PRIO (1-99; cyclictest's -p PRIO)\n"
"      --cpu-dma-latency DUR  hold /dev/cpu_dma_latency at DUR (e.g. 0) while\n"
"                           measuring, as cyclictest does unless --laptop: idle\n"
"                           CPUs then stay in shallow C-states (needs root)\n"
"  -t, --timebase TB        tsc (default) or clock (clock_gettime at wake-up)\n"
JTR_OUTPUT_HELP "         results folder (default results/DATE-HOST-wake)\n"
"      --threshold DUR      latencies above this are outliers\n"
"                           (default max(1us, 8 x the warm-up's shortest);\n"
"                           0 logs every wake-up)\n"
"      --max-outliers N     outlier log entries kept per CPU (default 100000;\n"
"                           more are counted as dropped, never lost silently)\n"
"      --hist-error PCT     histogram's maximum relative error (default 1)\n"
JTR_GATE_LATENCY_HELP
JTR_QUIET_HELP "              no progress and no summary on stdout\n"
"  -h, --help               this text\n"
"\n"
"cyclictest -m -t 1 -a 3 -p 80 -i 200 -D 60 measures what\n"
"jtr wake -c 3 -f 80 -i 200us -d 60 --cpu-dma-latency 0 does (memory is always\n"
"locked; without --cpu-dma-latency it is cyclictest --laptop). Without -f the\n"
"threads run SCHED_OTHER with a timer slack of 1 ns.\n"
"\n"
"Writes DIR/summary.txt (with cyclictest's summary line per thread, in us),\n"
"DIR/outliers.csv (cpu,start_ns,length_ns) and DIR/result.json (format\n"
"jtr-result/1).\n"
"\n"
"With --max-latency the exit status is 1 when a CPU's largest wake-up latency\n"
"exceeds it (result.json's \"gates\" says which); the results are written all\n"
"the same. A wake-up's latency is no CPU time lost: there is no --max-lost.\n"
"jtr wake does not trace: 'jtr run wake' with the same options names the\n"
"causes of the wake-ups beyond the limit.\n"
"\n"
JTR_PROBE_STOP_HELP
"\n"
"examples:\n"
"  jtr wake -f 80                  10 s of 1 ms wake-ups at SCHED_FIFO 80\n"
"  jtr wake -c 1-2 -i 200us -d 60  a minute of 200 us periods on CPUs 1 and 2\n"
"  jtr run wake -f 80              the same with the tracer: every outlier taken apart\n"
"  jtr wake -f 80 -d 60 --max-latency 100us --junit wake.xml\n"
"                                  a CI gate: exit 1 past 100 us, a JUnit report\n";

enum { OPT_WARMUP = 400, OPT_DMA };

#define DMA_PATH "/dev/cpu_dma_latency"

static const struct option long_opts[] = {
	JTR_LONG(CPUS),
	{ "cpu", required_argument, NULL, JTR_CPUS_C },
	{ "interval", required_argument, NULL, 'i' },
	JTR_LONG(DURATION),
	JTR_LONG(COUNT),
	{ "loops", required_argument, NULL, JTR_COUNT_C },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "cpu-dma-latency", required_argument, NULL, OPT_DMA },
	{ "timebase", required_argument, NULL, 't' },
	JTR_PROBE_OUTLIER_LONG_OPTS,
	JTR_PROBE_LONG_OPTS,
	{ NULL, 0, NULL, 0 },
};

struct wake_params {
	struct jtr_probe *p;
	uint64_t interval_ns;
	uint64_t duration_ns;
	uint64_t loops;			/* -n; 0: use the duration */
	uint64_t warmup;
	uint64_t threshold_opt;
	bool threshold_given;		/* --threshold 0 is "every wake-up" */
	uint64_t max_outliers;
	int64_t dma_us;			/* --cpu-dma-latency; -1: not held */
	int64_t first_ns;		/* the schedule's first period, CLOCK_MONOTONIC */
};

/* one measured CPU; aligned so two CPUs' hot fields never share a line */
struct wake_cpu {
	JTR_SERIES_GROUP;		/* p, cpu, hist, lengths, log, threshold_ns,
					   progress_max_ns, progress_count, partial */
	const struct wake_params *wp;
	int tid;
	uint64_t warm_min_ns;
	uint64_t wakeups;		/* measured periods */
	uint64_t missed;		/* of them: passed before the thread could sleep */
	uint64_t sum_ns;		/* for the mean of the summary line */
	uint64_t last_ns;		/* the last latency (cyclictest's Act) */
	int64_t start_ns, end_ns;	/* the first and last measured period */
	volatile uint64_t progress_over;
} __attribute__((aligned(64)));

/* sleep_until - absolute sleep on CLOCK_MONOTONIC to @t_ns (a signal cannot
 * interrupt it: the stop signals are blocked in this thread) */
static inline void sleep_until(int64_t t_ns)
{
	struct timespec ts = { .tv_sec = t_ns / (int64_t)JTR_NS_PER_S,
			       .tv_nsec = t_ns % (int64_t)JTR_NS_PER_S };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* WAKE_LOOP - the measured periods; @TSC (a constant) picks the timebase.
 * Per period: a TSC/clock pair, the sleep, one fenced read, a histogram
 * record; nothing allocates and nothing but the sleep and the vDSO clock
 * read leaves user space. */
#define WAKE_LOOP(TSC) do {							\
	struct jtr_hist hl_ = w->hist, ll_ = w->lengths;			\
	struct jtr_olog lg_ = w->log;						\
	uint64_t k_, lat_, sum_ = 0, last_ = 0, missed_ = 0;			\
	int64_t t_ = next, now_, mono_ = 0, d_;					\
	uint64_t tsc0_ = 0, tsc1_, wake_;					\
	w->start_ns = t_;							\
	for (k_ = 0;; k_++) {							\
		if (TSC) {							\
			tsc0_ = jtr_rdtsc_ordered();				\
			mono_ = jtr_mono_ns();					\
			tsc1_ = jtr_rdtsc();					\
			tsc0_ += (tsc1_ - tsc0_) / 2;				\
			now_ = mono_;						\
		} else {							\
			now_ = jtr_mono_ns();					\
		}								\
		if (now_ < t_)							\
			sleep_until(t_);					\
		else								\
			missed_++;						\
		if (TSC) {							\
			wake_ = jtr_rdtsc_ordered();				\
			d_ = mono_ + (int64_t)jtr_ticks2ns(&t2n, wake_ - tsc0_) - t_; \
		} else {							\
			d_ = jtr_mono_ns() - t_;				\
		}								\
		lat_ = d_ > 0 ? (uint64_t)d_ : 0;				\
		jtr_hist_record(&hl_, lat_);					\
		sum_ += lat_;							\
		last_ = lat_;							\
		if (__builtin_expect(lat_ > thr || log_all, 0)) {		\
			jtr_olog_add(&lg_, (uint64_t)t_, lat_);			\
			jtr_hist_record(&ll_, lat_);				\
			w->progress_over = ll_.total;				\
		}								\
		w->progress_max_ns = hl_.max;					\
		w->progress_count = k_ + 1;					\
		if ((loops ? k_ + 1 >= loops : t_ + (int64_t)iv >= end) || jtr_stop) \
			break;							\
		t_ += (int64_t)iv;						\
	}									\
	w->end_ns = t_;								\
	w->wakeups = k_ + 1;							\
	w->missed = missed_;							\
	w->sum_ns = sum_;							\
	w->last_ns = last_;							\
	w->hist = hl_;								\
	w->lengths = ll_;							\
	w->log = lg_;								\
} while (0)

/* warm_up - @n periods from *@next, unrecorded: the shortest latency */
static uint64_t warm_up(uint64_t n, int64_t *next, uint64_t iv)
{
	uint64_t m = UINT64_MAX;

	for (uint64_t k = 0; k < n && !jtr_stop; k++) {
		if (jtr_mono_ns() < *next)
			sleep_until(*next);
		int64_t d = jtr_mono_ns() - *next;

		if (d >= 0 && (uint64_t)d < m)
			m = (uint64_t)d;
		*next += (int64_t)iv;
	}
	return m == UINT64_MAX ? 0 : m;
}

/* worker - measure one CPU */
static void worker(void *arg)
{
	struct wake_cpu *w = arg;
	const struct wake_params *wp = w->wp;
	const struct jtr_ticks2ns t2n = w->p->tb.t2n;
	const uint64_t iv = wp->interval_ns, loops = wp->loops;
	const bool log_all = wp->threshold_given && wp->threshold_opt == 0;
	int64_t next = wp->first_ns, end;
	uint64_t thr;

	w->tid = (int)syscall(SYS_gettid);
	/* a SCHED_OTHER sleeper's timer fires up to its slack (50 us) late on
	 * purpose: 1 ns is the least there is (0 means the default) */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	w->warm_min_ns = warm_up(wp->warmup, &next, iv);
	thr = wp->threshold_given ? wp->threshold_opt : jtr_default_threshold_ns(w->warm_min_ns);
	w->threshold_ns = thr;
	end = next + (int64_t)wp->duration_ns;
	if (jtr_stop) {
		w->partial = true;
		return;
	}
	if (w->p->tb.kind == JTR_TB_TSC)
		WAKE_LOOP(1);
	else
		WAKE_LOOP(0);
	w->partial = jtr_stop != 0;
}

struct wake_all {
	struct wake_cpu *cpus;
	int n;
	const struct wake_params *wp;
};

/* progress - "wake: 3 of 10 s, 3000 wake-ups, max 48.1 us, 2 over 88.0 us" */
static void progress(struct jtr_probe *p, void *arg, double elapsed)
{
	struct wake_all *a = arg;
	uint64_t mx = 0, n = 0, over = 0, thr = 0;
	char ms[32], ts[32];

	for (int i = 0; i < a->n; i++) {
		if (a->cpus[i].progress_max_ns > mx)
			mx = a->cpus[i].progress_max_ns;
		n += a->cpus[i].progress_count;
		over += a->cpus[i].progress_over;
		thr = a->cpus[i].threshold_ns;
	}
	jtr_fmt_ns(mx, ms, sizeof(ms));
	jtr_fmt_ns(thr, ts, sizeof(ts));
	if (a->wp->loops)
		jtr_progress_line(p, "wake: %.0f s, %llu of %llu wake-ups, max %s, %llu over %s",
				  elapsed, (unsigned long long)n,
				  (unsigned long long)(a->wp->loops * (uint64_t)a->n), ms,
				  (unsigned long long)over, ts);
	else
		jtr_progress_line(p, "wake: %.0f of %g s, %llu wake-ups, max %s, %llu over %s",
				  elapsed, (double)(a->wp->duration_ns + a->wp->warmup * a->wp->interval_ns) / 1e9,
				  (unsigned long long)n, ms, (unsigned long long)over, ts);
}

/* run_ns - a CPU's measured span: from its first period to one interval past its last */
static uint64_t run_ns(const struct wake_cpu *w)
{
	return w->wakeups ? (uint64_t)(w->end_ns - w->start_ns) + w->wp->interval_ns : 0;
}

/* cyclic_line - cyclictest's summary line of thread @k, in us as it prints it */
static void cyclic_line(FILE *f, const struct jtr_probe *p, const struct wake_cpu *w, int k)
{
	uint64_t n = w->hist.total;

	fprintf(f, "T:%2d (%5d) P:%2d I:%llu C:%7llu Min:%7llu Act:%5llu Avg:%5llu Max:%8llu\n",
		k, w->tid, p->fifo_prio, (unsigned long long)(w->wp->interval_ns / 1000),
		(unsigned long long)n, (unsigned long long)(n ? w->hist.min / 1000 : 0),
		(unsigned long long)(w->last_ns / 1000),
		(unsigned long long)(n ? w->sum_ns / n / 1000 : 0),
		(unsigned long long)(w->hist.max / 1000));
}

#define ROW(f, label, fmt, expr) JTR_SERIES_ROW(f, a->cpus, a->n, w, label, fmt, expr)

/* summary - the table and the cyclictest lines (stdout and summary.txt) */
static void summary(FILE *f, const struct jtr_probe *p, const struct wake_all *a)
{
	const struct jtr_series_set set = JTR_SERIES_SET(a->cpus, a->n);

	fprintf(f, "jtr wake: %s timebase, every %.3f ms, %s%s", jtr_tb_name(p->tb.kind),
		(double)a->wp->interval_ns / 1e6, p->fifo_prio ? "SCHED_FIFO " : "SCHED_OTHER",
		p->partial ? " (PARTIAL: stopped early)" : "");
	if (p->fifo_prio)
		fprintf(f, "%d", p->fifo_prio);
	if (a->wp->dma_us >= 0)
		fprintf(f, ", %s held at %lld us", DMA_PATH, (long long)a->wp->dma_us);
	jtr_series_head(f, &set, "latency");
	fputc('\n', f);
	ROW(f, "wake-ups", "llu", (unsigned long long)w->hist.total);
	ROW(f, "missed periods", "llu", (unsigned long long)w->missed);
	jtr_series_dist(f, &set);
	ROW(f, "mean ns", ".1f", w->hist.total ? (double)w->sum_ns / (double)w->hist.total : 0.0);
	ROW(f, "threshold ns", "llu", (unsigned long long)w->threshold_ns);
	ROW(f, "outliers", "llu", (unsigned long long)w->lengths.total);
	ROW(f, "not logged (log full)", "llu", (unsigned long long)w->log.dropped);
	fputs("\ncyclictest's summary (us):\n", f);
	for (int i = 0; i < a->n; i++)
		cyclic_line(f, p, &a->cpus[i], i);
}

/* write_outputs - summary.txt, outliers.csv, result.json */
static void write_outputs(struct jtr_probe *p, const struct wake_all *a)
{
	const struct jtr_series_set set = JTR_SERIES_SET(a->cpus, a->n);
	const struct wake_params *wp = a->wp;
	/* the log's starts are CLOCK_MONOTONIC ns already: written as they are */
	const struct jtr_tb mono = { .kind = JTR_TB_CLOCK };
	struct jtr_series_out o;
	struct jtr_json *j = &o.j;

	jtr_series_open(p, &o);
	summary(o.txt.f, p, a);
	if (!p->quiet)
		summary(stdout, p, a);
	jtr_series_csv(o.csv.f, &set, &mono);

	jtr_json_obj_begin(j, "params");
	jtr_json_uint(j, "interval_ns", wp->interval_ns);
	if (wp->loops) {
		jtr_json_null(j, "duration_ns");
		jtr_json_uint(j, "loops", wp->loops);
	} else {
		jtr_json_uint(j, "duration_ns", wp->duration_ns);
		jtr_json_null(j, "loops");
	}
	jtr_json_uint(j, "warmup", wp->warmup);
	jtr_series_cpus(j, &set);
	jtr_json_int(j, "timer_slack_ns", p->fifo_prio ? 0 : 1);
	if (wp->dma_us >= 0)
		jtr_json_int(j, "cpu_dma_latency_us", wp->dma_us);
	else
		jtr_json_null(j, "cpu_dma_latency_us");
	jtr_probe_params_common(p, j, wp->threshold_given ? wp->threshold_opt : 0, wp->max_outliers);
	jtr_json_obj_end(j);

	jtr_json_arr_begin(j, "runs");
	for (int i = 0; i < a->n; i++) {
		const struct wake_cpu *w = &a->cpus[i];
		uint64_t dur = run_ns(w);

		jtr_series_run_begin(j, &w->series, w->start_ns, w->start_ns + (int64_t)dur, dur);
		jtr_json_int(j, "tid", w->tid);
		jtr_json_uint(j, "interval_ns", wp->interval_ns);
		jtr_json_uint(j, "wakeups", w->hist.total);
		jtr_json_uint(j, "missed", w->missed);
		jtr_json_uint(j, "warmup_min_ns", w->warm_min_ns);
		jtr_series_run_outliers(j, &w->series, dur);
		jtr_series_run_end(j, &w->series);
	}
	jtr_json_arr_end(j);
	jtr_series_close(p, &o);
}

/* opt_interval - -i DURATION; a bare number is refused (cyclictest's is us,
 * jtr's grammar says seconds: a guess either way would be wrong for someone) */
static uint64_t opt_interval(struct jtr_probe *p, const char *arg)
{
	size_t n = strlen(arg);

	if (n && arg[n - 1] >= '0' && arg[n - 1] <= '9')
		jtr_usage_error(p, "-i %s: write the unit: -i %sus is cyclictest's -i %s, "
				"-i %sms a period of %s ms", arg, arg, arg, arg, arg);
	return jtr_opt_duration(p, "-i", arg, INTERVAL_MIN_NS, INTERVAL_MAX_NS);
}

/* wake_opt - getopt's @opt (with optarg), one of jtr wake's own or an outlier
 * option, into @wp; -c's list into @cpus; or exit 2 */
static void wake_opt(struct jtr_probe *p, struct wake_params *wp, int opt, cpu_set_t *cpus,
		     bool *cpu_given, bool *dur_given)
{
	bool none;

	if (opt == JTR_OPT_THRESHOLD && !strcmp(optarg, "0")) {
		wp->threshold_given = true;
		wp->threshold_opt = 0;
		return;
	}
	if (jtr_probe_outlier_opt(p, opt, optarg, &wp->threshold_opt, &wp->max_outliers)) {
		wp->threshold_given |= opt == JTR_OPT_THRESHOLD;
		return;
	}
	switch (opt) {
	case JTR_CPUS_C: jtr_opt_cpus(p, optarg, false, cpus, &none); *cpu_given = true; break;
	case 'i': wp->interval_ns = opt_interval(p, optarg); break;
	case JTR_DURATION_C:
		wp->duration_ns = jtr_opt_duration(p, "-d", optarg, JTR_NS_PER_MS,
						   30ULL * 24 * 3600 * JTR_NS_PER_S);
		*dur_given = true;
		break;
	case JTR_COUNT_C: wp->loops = jtr_opt_count(p, "-n", optarg, 1, 1ULL << 40); break;
	case OPT_WARMUP: wp->warmup = jtr_opt_count(p, "--warmup", optarg, 0, 1000000); break;
	case OPT_DMA:
		wp->dma_us = strcmp(optarg, "0") ? (int64_t)(jtr_opt_duration(
			p, "--cpu-dma-latency", optarg, 0, 2000 * JTR_NS_PER_S) / 1000) : 0;
		break;
	}
}

/* hold_dma_latency - open /dev/cpu_dma_latency and write @us: the kernel keeps
 * the request while the file is open (until this program exits). Checked
 * against the real user's rights, so a setuid install grants nobody more. */
static void hold_dma_latency(struct jtr_probe *p, int64_t us)
{
	int32_t v = (int32_t)us;
	int fd;

	if (access(DMA_PATH, W_OK) < 0 || (fd = open(DMA_PATH, O_WRONLY | O_CLOEXEC)) < 0)
		jtr_fatal(p, "--cpu-dma-latency: cannot open %s: %s; run as root, or leave the "
			  "option out", DMA_PATH, strerror(errno));
	if (write(fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		jtr_fatal(p, "--cpu-dma-latency: cannot write %s: %s", DMA_PATH, strerror(errno));
	/* the descriptor stays open on purpose: closing it ends the request */
}

int main(int argc, char **argv)
{
	static struct wake_params wp = {
		.interval_ns = JTR_NS_PER_MS,
		.duration_ns = 10 * JTR_NS_PER_S,
		.warmup = WARMUP_DEFAULT,
		.max_outliers = 100000,
		.dma_us = -1,
	};
	struct jtr_probe p;
	struct wake_all a = { .wp = &wp };
	struct jtr_worker *w;
	cpu_set_t cpus;
	bool cpu_given = false, dur_given = false;
	int opt, i;

	jtr_probe_init(&p, "wake", argc, argv);
	wp.p = &p;
	p.sleeps = true;

	/* 1. options: numbers only; paths are kept as strings */
	while ((opt = getopt_long(argc, argv, ":" JTR_CPUS_S "i:" JTR_DURATION_S JTR_COUNT_S "t:"
					JTR_FIFO_S JTR_OUTPUT_S JTR_QUIET_S "h", long_opts, NULL)) != -1) {
		if (jtr_probe_common_opt(&p, opt, usage_text, argv))
			continue;
		wake_opt(&p, &wp, opt, &cpus, &cpu_given, &dur_given);
	}
	jtr_probe_no_args(&p, argc, argv);
	if (wp.loops && dur_given)
		jtr_usage_error(&p, "-d and -n both given; use -d for a duration or -n for a count "
				"of wake-ups");
	if (!wp.loops && wp.duration_ns < wp.interval_ns)
		jtr_usage_error(&p, "-d %.3f ms is shorter than one interval (-i %.3f ms); "
				"give a longer -d", (double)wp.duration_ns / 1e6,
				(double)wp.interval_ns / 1e6);
	jtr_probe_default_cpus(&cpus, cpu_given);
	jtr_probe_check_cpus(&p, "-c", &cpus);

	/* 2. everything the measuring threads touch, allocated and pre-touched */
	a.cpus = jtr_series_workers(&p, &cpus, sizeof(*a.cpus), offsetof(struct wake_cpu, series),
				    wp.max_outliers, worker, &w, &a.n);
	for (i = 0; i < a.n; i++)
		a.cpus[i].wp = &wp;

	/* 3. FIFO and mlockall, then the privilege drop; files only after */
	if (wp.dma_us >= 0)
		hold_dma_latency(&p, wp.dma_us);
	jtr_probe_privileged(&p);

	/* 4. calibrate; one schedule for every thread, on a multiple of the interval */
	jtr_probe_timebase(&p);
	jtr_probe_map_begin(&p);
	wp.first_ns = jtr_mono_ns() + (int64_t)START_AFTER_NS;
	wp.first_ns += (int64_t)wp.interval_ns - wp.first_ns % (int64_t)wp.interval_ns;
	jtr_workers_start(&p, w, a.n);
	jtr_workers_wait(&p, w, a.n, progress, &a);
	jtr_probe_map_end(&p);
	for (i = 0; i < a.n; i++) {
		const struct wake_cpu *c = &a.cpus[i];

		if (c->partial)
			p.partial = true;
	}
	write_outputs(&p, &a);
	jtr_probe_finish(&p);
	return jtr_probe_exit(&p, 0);
}
