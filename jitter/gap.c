// SPDX-License-Identifier: GPL-2.0-only
/* gap.c - jtr gap: read the clock in a tight loop and keep every gap.
 *
 * One pinned thread per CPU reads the timestamp back to back for a duration
 * (or for a number of loops, -j). Every delta goes into the
 * histogram; every delta above the threshold is an interruption and goes to
 * a pre-allocated outlier log with its CLOCK_MONOTONIC start, for the
 * attribution step to explain. Three views of one run: per loop (sample
 * percentiles), per interruption (count, rate, lengths), and time lost.
 */
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jtr_cli.h"
#include "jtr_pmu.h"
#include "jtr_probe.h"
#include "jtr_series.h"

#define PRE_LOOPS 100000

static const char usage_text[] =
"usage: jtr gap [OPTIONS]\n"
"\n"
"Read the timestamp back to back in a tight loop on one or more CPUs (one pinned\n"
"thread each), like oslat or sysjitter. Every loop's delta goes into a lossless\n"
"histogram; every delta above the threshold is an interruption, logged with its\n"
"CLOCK_MONOTONIC start for 'jtr attribute'.\n"
"\n"
"options:\n"
JTR_DURATION_HELP "  how long (default 10s; 30 is seconds, or 500ms, 2m)\n"
JTR_COUNT_HELP "        run COUNT loops instead of a duration, and print the\n"
"                           shortest and longest gap of each CPU (e.g. -n 1G;\n"
"                           --loops is the same)\n"
JTR_CPUS_HELP "          CPUs to measure, e.g. 1 or 2-3,5 (default: first isolated\n"
"                           CPU, else the last online one)\n"
"  -t, --timebase TB        tsc (or 1, RDTSC; default) or clock (or 2, clock_gettime)\n"
JTR_FIFO_HELP "          run SCHED_FIFO at PRIO (1-99)\n"
JTR_OUTPUT_HELP "         results folder (default results/DATE-HOST-gap)\n"
"      --threshold DUR      gaps above this are interruptions\n"
"                           (default max(1us, 8 x the shortest loop))\n"
"      --max-outliers N     outlier log entries kept per CPU (default 100000;\n"
"                           more are counted as dropped, never lost silently)\n"
"      --hist-error PCT     histogram's maximum relative error (default 1)\n"
JTR_GATE_HELP
JTR_QUIET_HELP "              no progress and no summary on stdout\n"
"  -h, --help               this text\n"
"\n"
"A duration is NUMBER[UNIT], UNIT ns, us, ms, s, m or h; a bare number is in\n"
"seconds, but --threshold still reads one as ns, with a warning: write the unit.\n"
"\n"
JTR_OLD_HELP " -j COUNT (-n).\n"
"\n"
"Writes DIR/summary.txt, DIR/outliers.csv (cpu,start_ns,length_ns) and\n"
"DIR/result.json (format jtr-result/1).\n"
"\n"
"With --max-latency or --max-lost the exit status is 1 when a CPU exceeds a\n"
"limit (result.json's \"gates\" says which); the results are written all the\n"
"same. 'jtr run' with the same options also names the causes.\n"
"\n"
JTR_PROBE_STOP_HELP
"\n"
"examples:\n"
"  jtr gap                       10 s on the default CPU\n"
"  jtr gap -c 1-3 -d 60          a minute on CPUs 1, 2 and 3 at once\n"
"  jtr gap -n 1G -t clock        1e9 clock_gettime loops: min and max gap\n"
"  jtr gap -f 99 -c 3 -d 5m      five minutes at SCHED_FIFO 99\n"
"  jtr gap -c 1 --max-latency 50us --max-lost 0.1% --junit gap.xml\n"
"                                a CI gate with a JUnit report\n";

static const struct option long_opts[] = {
	JTR_LONG(DURATION),
	JTR_LONG(COUNT),
	{ "loops", required_argument, NULL, JTR_COUNT_C },
	JTR_LONG(CPUS),
	{ "cpu", required_argument, NULL, JTR_CPUS_C },
	{ "timebase", required_argument, NULL, 't' },
	JTR_PROBE_OUTLIER_LONG_OPTS,
	JTR_PROBE_LONG_OPTS,
	{ NULL, 0, NULL, 0 },
};

struct gap_params {
	struct jtr_probe *p;
	uint64_t duration_ns;
	uint64_t loops;			/* -n; 0: use the duration */
	uint64_t threshold_opt;
	uint64_t max_outliers;
};

/* one measured CPU; aligned so two CPUs' hot fields never share a line */
struct gap_cpu {
	JTR_SERIES_GROUP;			/* p, cpu, hist, lengths, log, threshold_ns,
						   progress_max_ns, progress_count, partial */
	const struct gap_params *gp;
	uint64_t pre_min_ns;
	uint64_t start_raw, end_raw;
	struct jtr_pmu pmu;			/* hardware counters around the loop */
	struct jtr_err pmu_why;			/* why there are none */
} __attribute__((aligned(64)));

/* pre_min_tsc - shortest of PRE_LOOPS back-to-back deltas, in ns */
static uint64_t pre_min_tsc(const struct jtr_ticks2ns *t2n)
{
	uint64_t prev = jtr_rdtsc_ordered(), now, m = UINT64_MAX;

	for (int i = 0; i < PRE_LOOPS; i++) {
		now = jtr_rdtsc_ordered();
		if (now - prev < m)
			m = now - prev;
		prev = now;
	}
	return jtr_ticks2ns(t2n, m);
}

/* pre_min_clock - the same with clock_gettime */
static uint64_t pre_min_clock(void)
{
	uint64_t prev = (uint64_t)jtr_mono_ns(), now, m = UINT64_MAX;

	for (int i = 0; i < PRE_LOOPS; i++) {
		now = (uint64_t)jtr_mono_ns();
		if (now - prev < m)
			m = now - prev;
		prev = now;
	}
	return m;
}

/* GAP_LOOP - the hot loop, shared by both timebases and both end conditions.
 * READ() gives a raw timestamp, TONS(d) turns a raw delta into ns, DONE() is
 * the end condition. Per loop: one read, one conversion, one histogram
 * record, two well-predicted branches, one load of the stop flag. The
 * histograms' running totals and the log's counters are local copies so
 * they stay in registers (the next fenced read waits for everything before
 * it, including stores and reloads a memory-resident total would need);
 * they are written back after the loop. */
#define GAP_LOOP(READ, TONS, DONE) do {						\
	struct jtr_hist hl_ = g->hist, ll_ = g->lengths;			\
	struct jtr_olog lg_ = g->log;						\
	uint64_t prev_ = READ(), now_, ns_, n_ = 0;				\
	g->start_raw = prev_;							\
	for (;;) {								\
		now_ = READ();							\
		ns_ = TONS(now_ - prev_);					\
		jtr_hist_record(&hl_, ns_);					\
		if (__builtin_expect(ns_ > thr, 0)) {				\
			jtr_olog_add(&lg_, prev_, ns_);				\
			jtr_hist_record(&ll_, ns_);				\
			g->progress_max_ns = ll_.max;				\
			g->progress_count = ll_.total;				\
		}								\
		n_++;								\
		if (__builtin_expect(DONE() || jtr_stop, 0))			\
			break;							\
		prev_ = now_;							\
	}									\
	g->end_raw = now_;							\
	g->hist = hl_;								\
	g->lengths = ll_;							\
	g->log = lg_;								\
	(void)n_;								\
} while (0)

/* worker - measure one CPU */
static void worker(void *arg)
{
	struct gap_cpu *g = arg;
	const struct gap_params *gp = g->gp;
	const struct jtr_ticks2ns t2n = g->p->tb.t2n;
	uint64_t thr, end, loops = gp->loops;

	g->pre_min_ns = g->p->tb.kind == JTR_TB_TSC ? pre_min_tsc(&t2n) : pre_min_clock();
	thr = gp->threshold_opt ? gp->threshold_opt : jtr_default_threshold_ns(g->pre_min_ns);
	g->threshold_ns = thr;
	/* counters are opened and read outside the loop: syscalls, not in it */
	jtr_err_clear(&g->pmu_why);
	if (jtr_pmu_open(&g->pmu, &g->pmu_why) == 0)
		jtr_pmu_begin(&g->pmu);

#define TSC_TONS(d) jtr_ticks2ns(&t2n, (d))
#define CLK_TONS(d) (d)
#define CLK_READ() ((uint64_t)jtr_mono_ns())
#define BY_TIME() (now_ >= end)
#define BY_COUNT() (n_ >= loops)
	if (g->p->tb.kind == JTR_TB_TSC) {
		end = jtr_rdtsc_ordered() + jtr_ns2ticks(g->p->tb.hz, gp->duration_ns);
		if (loops)
			GAP_LOOP(jtr_rdtsc_ordered, TSC_TONS, BY_COUNT);
		else
			GAP_LOOP(jtr_rdtsc_ordered, TSC_TONS, BY_TIME);
	} else {
		end = (uint64_t)jtr_mono_ns() + gp->duration_ns;
		if (loops)
			GAP_LOOP(CLK_READ, CLK_TONS, BY_COUNT);
		else
			GAP_LOOP(CLK_READ, CLK_TONS, BY_TIME);
	}
	if (g->pmu.open) {
		jtr_pmu_end(&g->pmu);
		jtr_pmu_close(&g->pmu);
		g->pmu.open = true;	/* the counts are kept */
	}
	g->partial = jtr_stop != 0;
}

struct gap_all {
	struct gap_cpu *cpus;
	int n;
	const struct gap_params *gp;
};

/* progress - "gap: 3 of 10 s, 12 interruptions, max 23.4 us" (the max as the
 * summary writes it) */
static void progress(struct jtr_probe *p, void *arg, double elapsed)
{
	struct gap_all *a = arg;
	uint64_t mx = 0, n = 0;
	char ms[32];

	for (int i = 0; i < a->n; i++) {
		if (a->cpus[i].progress_max_ns > mx)
			mx = a->cpus[i].progress_max_ns;
		n += a->cpus[i].progress_count;
	}
	jtr_fmt_ns(mx, ms, sizeof(ms));
	if (a->gp->loops)
		jtr_progress_line(p, "gap: %.0f s, %llu interruptions, max %s",
				  elapsed, (unsigned long long)n, ms);
	else
		jtr_progress_line(p, "gap: %.0f of %g s, %llu interruptions, max %s",
				  elapsed, (double)a->gp->duration_ns / 1e9, (unsigned long long)n, ms);
}

/* run_ns - a CPU's measured span in CLOCK_MONOTONIC ns */
static uint64_t run_ns(const struct jtr_probe *p, const struct gap_cpu *g, int64_t *t0, int64_t *t1)
{
	*t0 = jtr_tb_mono_ns(&p->tb, g->start_raw);
	*t1 = jtr_tb_mono_ns(&p->tb, g->end_raw);
	return *t1 > *t0 ? (uint64_t)(*t1 - *t0) : 0;
}

/* lost_ns - time lost to interruptions: each gap less one undisturbed loop */
static uint64_t lost_ns(const struct gap_cpu *g)
{
	uint64_t base = g->hist.total ? g->hist.min : 0, n = g->lengths.total;

	return g->log.total_ns > n * base ? g->log.total_ns - n * base : 0;
}

/* row - one line of the summary table: a label and a value per CPU */
#define ROW(f, label, fmt, expr) JTR_SERIES_ROW(f, a->cpus, a->n, g, label, fmt, expr)

/* summary - the human-readable table (stdout and summary.txt) */
static void summary(FILE *f, const struct jtr_probe *p, const struct gap_all *a)
{
	const struct jtr_series_set set = JTR_SERIES_SET(a->cpus, a->n);
	int64_t t0, t1;

	fprintf(f, "jtr gap: %s timebase%s", jtr_tb_name(p->tb.kind), p->partial ? ", PARTIAL (stopped early)" : "");
	if (p->tb.hz > 0)
		fprintf(f, ", TSC %.3f MHz", p->tb.hz / 1e6);
	jtr_series_head(f, &set, "");
	fputs("\n per loop\n", f);
	ROW(f, "duration s", ".3f", (double)run_ns(p, g, &t0, &t1) / 1e9);
	ROW(f, "loops", "llu", (unsigned long long)g->hist.total);
	ROW(f, "ns per loop", ".2f", g->hist.total ? (double)run_ns(p, g, &t0, &t1) / (double)g->hist.total : 0.0);
	jtr_series_dist(f, &set);
	fputs(" per interruption\n", f);
	ROW(f, "threshold ns", "llu", (unsigned long long)g->threshold_ns);
	ROW(f, "count", "llu", (unsigned long long)g->lengths.total);
	ROW(f, "per second", ".2f", run_ns(p, g, &t0, &t1) ? (double)g->lengths.total * 1e9 / (double)run_ns(p, g, &t0, &t1) : 0.0);
	ROW(f, "p50 ns", "llu", (unsigned long long)jtr_hist_value_at_percentile(&g->lengths, 50));
	ROW(f, "p99 ns", "llu", (unsigned long long)jtr_hist_value_at_percentile(&g->lengths, 99));
	ROW(f, "max ns", "llu", (unsigned long long)g->lengths.max);
	ROW(f, "not logged (log full)", "llu", (unsigned long long)g->log.dropped);
	fputs(" time lost\n", f);
	ROW(f, "lost %", ".4f", run_ns(p, g, &t0, &t1) ? 100.0 * (double)lost_ns(g) / (double)run_ns(p, g, &t0, &t1) : 0.0);
	if (a->gp->loops) {
		fputc('\n', f);
		for (int i = 0; i < a->n; i++)
			fprintf(f, "cpu=%d, ts_min_ns=%llu, ts_max_ns=%llu,\n", a->cpus[i].cpu,
				(unsigned long long)(a->cpus[i].hist.total ? a->cpus[i].hist.min : 0),
				(unsigned long long)a->cpus[i].hist.max);
	}
}

/* write_outputs - summary.txt, outliers.csv, result.json */
static void write_outputs(struct jtr_probe *p, const struct gap_all *a)
{
	const struct jtr_series_set set = JTR_SERIES_SET(a->cpus, a->n);
	const struct gap_params *gp = a->gp;
	struct jtr_series_out o;
	struct jtr_json *j = &o.j;

	jtr_series_open(p, &o);
	summary(o.txt.f, p, a);
	if (!p->quiet)
		summary(stdout, p, a);
	jtr_series_csv(o.csv.f, &set, &p->tb);

	jtr_json_obj_begin(j, "params");
	if (gp->loops) {
		jtr_json_null(j, "duration_ns");
		jtr_json_uint(j, "loops", gp->loops);
	} else {
		jtr_json_uint(j, "duration_ns", gp->duration_ns);
		jtr_json_null(j, "loops");
	}
	jtr_series_cpus(j, &set);
	jtr_probe_params_common(p, j, gp->threshold_opt, gp->max_outliers);
	jtr_json_obj_end(j);

	jtr_json_arr_begin(j, "runs");
	for (int i = 0; i < a->n; i++) {
		const struct gap_cpu *g = &a->cpus[i];
		int64_t t0, t1;
		uint64_t dur = run_ns(p, g, &t0, &t1);

		jtr_series_run_begin(j, &g->series, t0, t1, dur);
		jtr_json_fixed(j, "loop_period_ns", g->hist.total ? (double)dur / (double)g->hist.total : 0.0, 3);
		jtr_json_uint(j, "pre_min_ns", g->pre_min_ns);
		jtr_json_fixed(j, "lost_time_pct", dur ? 100.0 * (double)lost_ns(g) / (double)dur : 0.0, 6);
		jtr_series_run_outliers(j, &g->series, dur);
		jtr_result_write_pmu(j, &g->pmu, g->hist.total);
		jtr_series_run_end(j, &g->series);
	}
	jtr_json_arr_end(j);
	jtr_series_close(p, &o);
}

int main(int argc, char **argv)
{
	static struct gap_params gp = {
		.duration_ns = 10 * JTR_NS_PER_S,
		.max_outliers = 100000,
	};
	struct jtr_probe p;
	struct gap_all a = { .gp = &gp };
	struct jtr_worker *w;
	cpu_set_t cpus;
	bool none, cpu_given = false, dur_given = false;
	char loops_opt = 'n';
	int opt, i;

	jtr_probe_init(&p, "gap", argc, argv);
	gp.p = &p;

	/* 1. options: numbers only; paths are kept as strings */
	while ((opt = getopt_long(argc, argv, ":" JTR_DURATION_S JTR_COUNT_S "j:" JTR_CPUS_S "t:"
					JTR_FIFO_S JTR_OUTPUT_S JTR_QUIET_S "h", long_opts, NULL)) != -1) {
		if (jtr_probe_common_opt(&p, opt, usage_text, argv) ||
		    jtr_probe_outlier_opt(&p, opt, optarg, &gp.threshold_opt, &gp.max_outliers))
			continue;
		switch (opt) {
		case JTR_DURATION_C:
			gp.duration_ns = jtr_opt_duration(&p, "-d", optarg, JTR_NS_PER_MS,
							  30ULL * 24 * 3600 * JTR_NS_PER_S);
			dur_given = true;
			break;
		case 'j':
			jtr_opt_old(&p, 'j', "-n", "the loop count");
			/* fall through */
		case JTR_COUNT_C:
			loops_opt = (char)opt;
			gp.loops = jtr_opt_count(&p, opt == 'j' ? "-j" : "-n", optarg, 1, 1ULL << 50);
			break;
		case JTR_CPUS_C: jtr_opt_cpus(&p, optarg, false, &cpus, &none); cpu_given = true; break;
		}
	}
	jtr_probe_no_args(&p, argc, argv);
	if (gp.loops && dur_given)
		jtr_usage_error(&p, "-d and -%c both given; use -d for a duration or -n for a loop count",
				loops_opt);
	jtr_probe_default_cpus(&cpus, cpu_given);
	jtr_probe_check_cpus(&p, "-c", &cpus);

	/* 2. everything the hot loops touch, allocated and pre-touched */
	a.cpus = jtr_series_workers(&p, &cpus, sizeof(*a.cpus), offsetof(struct gap_cpu, series),
				    gp.max_outliers, worker, &w, &a.n);
	for (i = 0; i < a.n; i++)
		a.cpus[i].gp = &gp;

	/* 3. FIFO and mlockall, then the privilege drop; files only after */
	jtr_probe_privileged(&p);

	/* 4. calibrate, run, write */
	jtr_probe_timebase(&p);
	jtr_probe_map_begin(&p);
	jtr_workers_start(&p, w, a.n);
	jtr_workers_wait(&p, w, a.n, progress, &a);
	if (a.n && !a.cpus[0].pmu.open)
		jtr_warn(&p, "%s", a.cpus[0].pmu_why.msg);	/* one line for every CPU */
	jtr_probe_map_end(&p);
	for (i = 0; i < a.n; i++) {
		const struct gap_cpu *g = &a.cpus[i];

		if (g->partial)
			p.partial = true;
	}
	write_outputs(&p, &a);
	jtr_probe_finish(&p);
	return jtr_probe_exit(&p, 0);
}
