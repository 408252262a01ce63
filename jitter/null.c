// SPDX-License-Identifier: GPL-2.0-only
/* null.c - jtr null: time an empty loop, millions of times.
 *
 * Each sample times a K-iteration empty loop between two fenced timestamp
 * reads, then busy-waits a pause (jtr_null's NIC-speed delay) so samples are
 * spaced like sends would be. On an undisturbed CPU every sample takes the
 * same time; anything above that is the machine: interrupts, the tick,
 * preemption, the hypervisor. R runs of N samples each, after W warm-up
 * samples; output in jtr_null's legacy text and gnuplot formats and result.json.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jtr_cli.h"
#include "jtr_probe.h"
#include "jtr_legacy.h"
#include "jtr_sample.h"

#define MAX_RUNS 100

static const char usage_text[] =
"usage: jtr null [OPTIONS]\n"
"\n"
"Time an empty loop of K iterations N times per run, R runs, on one CPU, and\n"
"report min, max, mean, stddev and percentiles to 99.999 %. A quiet CPU gives\n"
"the same time for every sample; what is left is the machine's jitter.\n"
"\n"
"options:\n"
JTR_COUNT_HELP "       samples per run (default 2000000; K/M/G suffixes;\n"
"                          --samples is the same)\n"
"  -B, --spins N           empty-loop iterations per sample (default 100)\n"
"      --unoptimised-loop  the empty loop as built without optimisation: its counter\n"
"                          in memory (~5x longer an iteration), the workload of\n"
"                          null loops timed that way\n"
"  -p, --pause DURATION    busy-wait between samples (default 898ns)\n"
"  -w, --warmup N          samples per run before recording (default 500)\n"
"      --runs N            runs (default 3)\n"
"  -t, --timebase TB       tsc (or 1, RDTSC; default) or clock (or 2, clock_gettime)\n"
JTR_CPUS_HELP "         the CPU to run on (one; default: first isolated CPU,\n"
"                          else the last online one); -1: do not pin (not\n"
"                          recommended)\n"
JTR_FIFO_HELP "         run SCHED_FIFO at PRIO (1-99)\n"
JTR_OUTPUT_HELP "        results folder (default results/DATE-HOST-null)\n"
"      --desc TEXT         run name in summary.txt's run headers and the gnuplot\n"
"                          titles (default 'jtr null')\n"
"  -H, --histo-buckets N   10 ns buckets in summary.txt's percentiles and the\n"
"                          gnuplot file (default 200)\n"
"      --threshold DUR     log samples longer than this (default max(1us, 8 x\n"
"                          warm-up min))\n"
"      --max-outliers N    outlier log entries kept per run (default 100000)\n"
"      --hist-error PCT    histogram's maximum relative error (default 1)\n"
JTR_QUIET_HELP "             no progress and no summary on stdout\n"
"  -h, --help              this text\n"
"\n"
"A duration is NUMBER[UNIT], UNIT ns, us, ms, s, m or h. -p and --threshold still\n"
"read a bare number as ns, with a warning: write the unit (898ns, 2us).\n"
"\n"
JTR_OLD_HELP " -r N (--runs),\n"
"-d TEXT (--desc; a TEXT that reads as a duration is refused: jtr null has none).\n"
"\n"
"Writes DIR/summary.txt (per run: a header with the settings and the measured\n"
"costs, min/max/average and the values 90 % to 99.999 % of samples are below),\n"
"DIR/null.gp (gnuplot data: each run's 10 ns histogram), DIR/outliers.csv and\n"
"DIR/result.json (format jtr-result/1).\n"
"\n"
JTR_PROBE_STOP_HELP
"\n"
"examples:\n"
"  jtr null                          3 x 2M samples on the default CPU\n"
"  jtr null -c 3 -n 500K --runs 1    one shorter run on CPU 3\n"
"  jtr null -t clock --desc clock-run  timed with clock_gettime, named clock-run\n"
"  jtr null --unoptimised-loop -c 5  100 iterations of the unoptimised loop\n"
"  jtr null -f 99 -c 3 -o null-fifo  SCHED_FIFO 99 (root, or after make install-caps)\n";

enum { OPT_RUNS = 400, OPT_DESC, OPT_UNOPT_LOOP };

static const struct option long_opts[] = {
	JTR_LONG(COUNT),
	{ "samples", required_argument, NULL, JTR_COUNT_C },
	{ "spins", required_argument, NULL, 'B' },
	{ "unoptimised-loop", no_argument, NULL, OPT_UNOPT_LOOP },
	{ "pause", required_argument, NULL, 'p' },
	{ "warmup", required_argument, NULL, 'w' },
	{ "runs", required_argument, NULL, OPT_RUNS },
	{ "timebase", required_argument, NULL, 't' },
	JTR_LONG(CPUS),
	{ "cpu", required_argument, NULL, JTR_CPUS_C },
	{ "desc", required_argument, NULL, OPT_DESC },
	{ "histo-buckets", required_argument, NULL, 'H' },
	JTR_PROBE_OUTLIER_LONG_OPTS,
	JTR_PROBE_LONG_OPTS,
	{ NULL, 0, NULL, 0 },
};

struct null_run {
	struct jtr_hist hist;
	struct jtr_hist lengths;
	struct jtr_olog log;
	struct jtr_sample loop;	/* the loop's settings and what it left */
	struct jtr_pmu pmu;		/* hardware counters around the run */
};

struct null_ctx {
	struct jtr_probe *p;
	int cpu;		/* -1: not pinned */
	uint64_t samples, spins, pause_ns, warmup, threshold_opt, max_outliers;
	int runs;
	uint32_t histo_buckets;
	const char *desc;
	struct null_run run[MAX_RUNS];
	int runs_done;
	struct jtr_err pmu_why;		/* why there are no counters */
	bool unopt;			/* --unoptimised-loop: jtr_unoptimised_loop */
	double unopt_1000_ns;		/* its 1000 iterations' cost, on the CPU */
	volatile uint64_t at_sample;	/* for progress */
	volatile int at_run;
};

/* run_setup - the loop's settings for one run in timebase @tsc or clock */
static void run_setup(struct null_ctx *c, struct null_run *r, bool tsc)
{
	r->loop = (struct jtr_sample){
		.warmup = c->warmup,
		.samples = c->samples,
		.spins = c->spins,
		.threshold_ns = c->threshold_opt,
		.hist = &r->hist,
		.lengths = &r->lengths,
		.log = &r->log,
		.at_sample = &c->at_sample,
	};
	jtr_sample_timing(&r->loop, c->p, tsc, c->pause_ns);
}

/* unopt_body - --unoptimised-loop's sample (a constant body: the
 * always-inlined sample loop inlines it too) */
static int unopt_body(void *arg)
{
	jtr_unoptimised_loop(*(const uint64_t *)arg);
	return 0;
}

/* run_tsc - one run of empty loops timed with the TSC */
static void run_tsc(struct null_ctx *c, struct null_run *r)
{
	run_setup(c, r, true);
	if (c->unopt)
		jtr_sample_run(&r->loop, true, NULL, unopt_body, &c->spins);
	else
		jtr_sample_run(&r->loop, true, NULL, NULL, NULL);
}

/* run_clock - one run of empty loops timed with clock_gettime(CLOCK_MONOTONIC) */
static void run_clock(struct null_ctx *c, struct null_run *r)
{
	run_setup(c, r, false);
	if (c->unopt)
		jtr_sample_run(&r->loop, false, NULL, unopt_body, &c->spins);
	else
		jtr_sample_run(&r->loop, false, NULL, NULL, NULL);
}

/* unopt_cost - the unoptimised loop's 1000 iterations in ns on this CPU, the
 * least of 100 tries (the header's jtr_1000_loops_cost, of the loop that ran) */
static double unopt_cost(void)
{
	int64_t best = INT64_MAX;

	for (int k = 0; k < 100; k++) {
		int64_t t0 = jtr_mono_ns();

		jtr_unoptimised_loop(1000);
		t0 = jtr_mono_ns() - t0;
		if (t0 < best)
			best = t0;
	}
	return (double)best;
}

/* worker - every run, one after the other, on the pinned CPU */
static void worker(void *arg)
{
	struct null_ctx *c = arg;

	struct jtr_pmu pmu;
	bool counting;

	if (c->unopt)
		c->unopt_1000_ns = unopt_cost();
	/* counters are opened and read outside the timed loops */
	jtr_err_clear(&c->pmu_why);
	counting = jtr_pmu_open(&pmu, &c->pmu_why) == 0;
	for (int k = 0; k < c->runs && !jtr_stop; k++) {
		struct null_run *r = &c->run[k];

		c->at_run = k;
		if (counting)
			jtr_pmu_begin(&pmu);
		if (c->p->tb.kind == JTR_TB_TSC)
			run_tsc(c, r);
		else
			run_clock(c, r);
		if (counting) {
			jtr_pmu_end(&pmu);
			r->pmu = pmu;
		}
		c->runs_done = k + 1;
	}
	if (counting)
		jtr_pmu_close(&pmu);
}

/* progress - "null: run 2/3, 1.2M of 2M samples" */
static void progress(struct jtr_probe *p, void *arg, double elapsed)
{
	struct null_ctx *c = arg;

	jtr_progress_line(p, "null: run %d/%d, %.1fM of %.1fM samples, %.0f s", c->at_run + 1,
			  c->runs, (double)c->at_sample / 1e6, (double)c->samples / 1e6, elapsed);
}

/* legacy_hdr - jtr_null's header fields for this run */
static void legacy_hdr(const struct null_ctx *c, struct jtr_legacy_hdr *s, char *lead, size_t n)
{
	const struct jtr_probe *p = c->p;

	snprintf(lead, n, "Busy_spins=%llu", (unsigned long long)c->spins);
	jtr_probe_legacy_hdr(p, s);
	if (c->unopt)			/* the cost of the loop that ran */
		s->loops_1000_cost = (long long)(c->unopt_1000_ns + 0.5);
	s->desc = c->desc;
	s->lead = lead;
	s->cpu_num = c->cpu;
	s->histo_buckets = c->histo_buckets;
	s->num_samples = c->samples;
	s->pause_ns = c->pause_ns;
	s->warmup_loops = c->warmup;
}

/* write_outputs - summary.txt, null.gp, outliers.csv, result.json */
static void write_outputs(struct null_ctx *c)
{
	struct jtr_probe *p = c->p;
	struct jtr_afile txt, gp, csv, res;
	struct jtr_legacy_hdr sh;
	struct jtr_json j;
	char lead[64], hdr[1024], name[32];

	jtr_probe_open(p, &txt, "summary.txt");
	jtr_probe_open(p, &gp, "null.gp");
	jtr_probe_open(p, &csv, "outliers.csv");
	jtr_probe_open(p, &res, "result.json");
	legacy_hdr(c, &sh, lead, sizeof(lead));
	jtr_legacy_header(hdr, sizeof(hdr), &sh);
	jtr_olog_csv_header(csv.f, NULL);

	for (int k = 0; k < c->runs_done; k++) {
		struct null_run *r = &c->run[k];

		jtr_probe_legacy_run(p, txt.f, gp.f, k, hdr, &r->hist, c->histo_buckets);
		jtr_olog_write_csv(csv.f, &r->log, &p->tb);
	}

	jtr_json_init(&j, res.f);
	jtr_probe_result_begin(p, &j);
	jtr_json_obj_begin(&j, "params");
	jtr_json_uint(&j, "samples", c->samples);
	jtr_json_uint(&j, "spins", c->spins);
	jtr_json_bool(&j, "unoptimised_loop", c->unopt);
	if (c->unopt)
		jtr_json_fixed(&j, "unoptimised_loop_1000_cost_ns", c->unopt_1000_ns, 2);
	jtr_json_uint(&j, "pause_ns", c->pause_ns);
	jtr_json_uint(&j, "warmup", c->warmup);
	jtr_json_int(&j, "runs", c->runs);
	if (c->cpu >= 0)
		jtr_json_int(&j, "cpu", c->cpu);
	else
		jtr_json_null(&j, "cpu");
	jtr_json_uint(&j, "histo_buckets", c->histo_buckets);
	jtr_json_str(&j, "desc", c->desc);
	jtr_probe_params_common(p, &j, c->threshold_opt, c->max_outliers);
	jtr_json_obj_end(&j);

	jtr_json_arr_begin(&j, "runs");
	for (int k = 0; k < c->runs_done; k++) {
		struct null_run *r = &c->run[k];
		int64_t t0 = jtr_tb_mono_ns(&p->tb, r->loop.start_raw), t1 = jtr_tb_mono_ns(&p->tb, r->loop.end_raw);
		uint64_t dur = t1 > t0 ? (uint64_t)(t1 - t0) : 0;

		snprintf(name, sizeof(name), "run %d", k + 1);
		jtr_result_run_begin(&j, name, c->cpu, r->loop.partial, t0, t1, dur, &r->hist);
		jtr_json_int(&j, "run", k + 1);
		jtr_json_uint(&j, "warmup_min_ns", r->loop.warm_min_ns);
		jtr_result_write_outliers(&j, &r->log, &r->lengths, r->loop.threshold_ns, dur,
					  r->hist.total ? r->hist.min : 0, "outliers.csv");
		jtr_result_write_pmu(&j, &r->pmu, r->hist.total);
		jtr_result_write_hist(&j, "histogram", &r->hist);
		jtr_json_obj_end(&j);
	}
	jtr_json_arr_end(&j);
	jtr_json_obj_begin(&j, "files");
	jtr_json_str(&j, "summary", "summary.txt");
	jtr_json_str(&j, "gnuplot", "null.gp");
	jtr_json_str(&j, "outliers", "outliers.csv");
	jtr_json_obj_end(&j);
	jtr_probe_result_end(p, &j);

	jtr_probe_commit_file(p, &txt);
	jtr_probe_commit_file(p, &gp);
	jtr_probe_commit_file(p, &csv);
	jtr_probe_commit_file(p, &res);
}

int main(int argc, char **argv)
{
	static struct null_ctx c;
	struct jtr_probe p;
	struct jtr_worker w;
	cpu_set_t cpus;
	bool no_pin = false, cpu_given = false;
	int opt, k;

	jtr_probe_init(&p, "null", argc, argv);
	c.p = &p;
	c.samples = 2000000;
	c.spins = 100;
	c.pause_ns = 898;
	c.warmup = 500;
	c.runs = 3;
	c.histo_buckets = JTR_LEGACY_DEFAULT_BUCKETS;
	c.max_outliers = 100000;
	c.desc = "jtr null";

	/* 1. options: numbers only; paths are kept as strings */
	while ((opt = getopt_long(argc, argv, ":" JTR_COUNT_S "B:p:w:r:t:" JTR_CPUS_S JTR_FIFO_S
					JTR_OUTPUT_S "d:H:" JTR_QUIET_S "h", long_opts, NULL)) != -1) {
		if (jtr_probe_common_opt(&p, opt, usage_text, argv) ||
		    jtr_probe_outlier_opt(&p, opt, optarg, &c.threshold_opt, &c.max_outliers))
			continue;
		switch (opt) {
		case JTR_COUNT_C: c.samples = jtr_opt_count(&p, "-n", optarg, 1, 1ULL << 40); break;
		case 'B': c.spins = jtr_opt_count(&p, "-B", optarg, 0, 1ULL << 32); break;
		case OPT_UNOPT_LOOP: c.unopt = true; break;
		case 'p':
			c.pause_ns = jtr_opt_duration_legacy(&p, "-p", optarg, 1, 0, 10 * JTR_NS_PER_S);
			break;
		case 'w': c.warmup = jtr_opt_count(&p, "-w", optarg, 0, 1ULL << 32); break;
		case 'r':
			jtr_opt_old(&p, 'r', "--runs", "the number of runs");
			/* fall through */
		case OPT_RUNS:
			c.runs = jtr_opt_int(&p, opt == 'r' ? "-r" : "--runs", optarg, 1, MAX_RUNS);
			break;
		case JTR_CPUS_C:
			jtr_opt_cpus(&p, optarg, true, &cpus, &no_pin);
			if (!no_pin && CPU_COUNT(&cpus) != 1)
				jtr_usage_error(&p, "-c %s: jtr null runs on one CPU; give one "
						"CPU number (jtr gap takes a list)", optarg);
			cpu_given = true;
			break;
		case 'd': c.desc = jtr_opt_old_desc(&p, optarg); break;
		case OPT_DESC: c.desc = optarg; break;
		case 'H': c.histo_buckets = (uint32_t)jtr_opt_int(&p, "-H", optarg, 1, 1000000); break;
		}
	}
	jtr_probe_no_args(&p, argc, argv);
	jtr_probe_default_cpus(&cpus, cpu_given);
	c.cpu = jtr_probe_one_cpu(&p, "-c", &cpus, no_pin);

	/* 2. everything the hot loop touches, allocated and pre-touched */
	for (k = 0; k < c.runs; k++)
		jtr_probe_series_init(&p, &c.run[k].hist, &c.run[k].lengths, &c.run[k].log,
				      c.max_outliers, c.cpu);
	if (jtr_worker_alloc(&w, c.cpu) < 0)
		jtr_fatal(&p, "cannot allocate a thread stack");

	/* 3. FIFO and mlockall, then the privilege drop; files only after */
	jtr_probe_privileged(&p);
	if (no_pin)
		jtr_warn(&p, "-c -1: not pinned; the thread may move between CPUs, which adds jitter");

	/* 4. calibrate, run, write */
	jtr_probe_timebase(&p);
	jtr_probe_map_begin(&p);
	w.fn = worker;
	w.arg = &c;
	jtr_workers_start(&p, &w, 1);
	jtr_workers_wait(&p, &w, 1, progress, &c);
	if (c.runs_done && !c.run[0].pmu.open)
		jtr_warn(&p, "%s", c.pmu_why.msg);
	jtr_probe_map_end(&p);
	for (k = 0; k < c.runs_done; k++)
		if (c.run[k].loop.partial)
			p.partial = true;
	if (c.runs_done < c.runs)
		p.partial = true;
	write_outputs(&c);
	jtr_probe_finish(&p);
	return jtr_probe_exit(&p, 0);
}
