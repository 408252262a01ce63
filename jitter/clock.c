// SPDX-License-Identifier: GPL-2.0-only
/* clock.c - jtr clock: the cost and jitter of each way to read the time.
 *
 * For each source (rdtsc, lfence;rdtsc, rdtscp, clock_gettime through the
 * vDSO for MONOTONIC and MONOTONIC_RAW, the raw clock_gettime syscall, and the
 * coarse clock) read it N times back to back on one CPU. The delta between
 * consecutive reads, in the source's own time, is one sample: its minimum is
 * the source's step, its typical value the cost of a read, its tail the
 * interruptions seen while reading. The cost per read is also timed from
 * outside with the TSC, which matters for the coarse clock whose own deltas
 * are mostly zero.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "jtr_cli.h"
#include "jtr_probe.h"

static const char usage_text[] =
"usage: jtr clock [OPTIONS]\n"
"\n"
"Read each clock source N times back to back on one CPU and report its cost per\n"
"read, its step, and the percentiles of the deltas between reads, side by side:\n"
"rdtsc, lfence;rdtsc, rdtscp, clock_gettime (vDSO) for CLOCK_MONOTONIC and\n"
"CLOCK_MONOTONIC_RAW, the clock_gettime system call, and CLOCK_MONOTONIC_COARSE.\n"
"\n"
"options:\n"
JTR_COUNT_HELP "       reads per source (default 1M; K/M/G suffixes; --reads\n"
"                          is the same); a clock coarser than 1 us is read until\n"
"                          it has stepped 10 times\n"
JTR_CPUS_HELP "         the CPU to run on (one; default: first isolated CPU,\n"
"                          else the last online one)\n"
JTR_FIFO_HELP "         run SCHED_FIFO at PRIO (1-99)\n"
JTR_OUTPUT_HELP "        results folder (default results/DATE-HOST-clock)\n"
"      --hist-error PCT    histogram's maximum relative error (default 1)\n"
JTR_QUIET_HELP "             no progress and no summary on stdout\n"
"  -h, --help              this text\n"
"\n"
"Writes DIR/summary.txt and DIR/result.json (format jtr-result/1), one run per\n"
"source.\n"
"\n"
JTR_PROBE_STOP_HELP
"\n"
"examples:\n"
"  jtr clock                   every source, 1M reads each\n"
"  jtr clock -c 2 -n 10M       longer, on CPU 2\n";

static const struct option long_opts[] = {
	JTR_LONG(COUNT),
	{ "reads", required_argument, NULL, JTR_COUNT_C },
	JTR_LONG(CPUS),
	{ "cpu", required_argument, NULL, JTR_CPUS_C },
	JTR_PROBE_LONG_OPTS,
	{ NULL, 0, NULL, 0 },
};

enum src_kind { SRC_TSC, SRC_CLOCK };

struct source {
	const char *name;
	const char *what;
	enum src_kind kind;
	clockid_t clk;			/* SRC_CLOCK */
	struct jtr_hist hist;
	double cost_ns;
	double resolution_ns;
	uint64_t step_ns;		/* smallest non-zero delta, exact */
	uint64_t zero_deltas;
	bool ran;
};

#define NSRC 7

struct clock_ctx {
	struct jtr_probe *p;
	int cpu;
	uint64_t reads;
	struct source src[NSRC];
	volatile int at;
};

/* reads of each source, inlined into their own loops */
static inline uint64_t rd_tsc(void) { return jtr_rdtsc(); }
static inline uint64_t rd_tsc_ordered(void) { return jtr_rdtsc_ordered(); }
static inline uint64_t rd_tscp(void) { return jtr_rdtscp(); }
static inline uint64_t rd_mono(void) { return (uint64_t)jtr_clock_ns(CLOCK_MONOTONIC); }
static inline uint64_t rd_raw(void) { return (uint64_t)jtr_clock_ns(CLOCK_MONOTONIC_RAW); }
static inline uint64_t rd_coarse(void) { return (uint64_t)jtr_clock_ns(CLOCK_MONOTONIC_COARSE); }
static inline uint64_t rd_syscall(void)
{
	struct timespec ts;

	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * JTR_NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* outside - a timestamp for the cost of the whole loop: TSC if usable */
static inline uint64_t outside(const struct jtr_probe *p)
{
	return p->tb.hz > 0 ? jtr_tsc_begin() : (uint64_t)jtr_mono_ns();
}

static inline double outside_ns(const struct jtr_probe *p, uint64_t d)
{
	return p->tb.hz > 0 ? jtr_ticks_to_ns_f(p->tb.hz, (double)d) : (double)d;
}

/* READ_LOOP - back-to-back reads of READ, deltas (TONS) into the histogram:
 * at least c->reads of them, and for a clock coarser than 1 us enough to span
 * ten of its steps (a 4 ms coarse clock read 1M times at 8 ns would otherwise
 * never be seen to move) */
#define READ_LOOP(s, READ, TONS) do {					\
	struct jtr_hist *h_ = &(s)->hist;				\
	uint64_t o0_ = outside(c->p), prev_ = READ(), first_ = prev_;	\
	uint64_t now_, d_, zero_ = 0, step_ = UINT64_MAX, i_;		\
	uint64_t span_ = (s)->resolution_ns > 1000 ? (uint64_t)(10 * (s)->resolution_ns) : 0; \
	for (i_ = 0;; i_++) {						\
		now_ = READ();						\
		d_ = TONS(now_ - prev_);				\
		zero_ += d_ == 0;					\
		if (d_ && d_ < step_)					\
			step_ = d_;					\
		jtr_hist_record(h_, d_);				\
		prev_ = now_;						\
		if (i_ + 1 >= c->reads && (now_ - first_ >= span_ || i_ >= 1000 * c->reads)) \
			break;						\
		if (__builtin_expect((i_ & 65535) == 0 && jtr_stop, 0))	\
			break;						\
	}								\
	(s)->cost_ns = outside_ns(c->p, outside(c->p) - o0_) / (double)(i_ + 2); \
	(s)->zero_deltas = zero_;					\
	(s)->step_ns = step_ == UINT64_MAX ? 0 : step_;			\
	(s)->ran = true;						\
} while (0)

/* worker - every source in turn */
static void worker(void *arg)
{
	struct clock_ctx *c = arg;
	const struct jtr_ticks2ns t2n = c->p->tb.t2n;
	bool tsc = c->p->tb.hz > 0;

#define T2N(d) jtr_ticks2ns(&t2n, (d))
#define SAME(d) (d)
	for (int k = 0; k < NSRC && !jtr_stop; k++) {
		struct source *s = &c->src[k];

		c->at = k;
		if (s->kind == SRC_TSC && !tsc)
			continue;
		switch (k) {
		case 0: READ_LOOP(s, rd_tsc, T2N); break;
		case 1: READ_LOOP(s, rd_tsc_ordered, T2N); break;
		case 2: READ_LOOP(s, rd_tscp, T2N); break;
		case 3: READ_LOOP(s, rd_mono, SAME); break;
		case 4: READ_LOOP(s, rd_raw, SAME); break;
		case 5: READ_LOOP(s, rd_syscall, SAME); break;
		case 6: READ_LOOP(s, rd_coarse, SAME); break;
		}
	}
}

/* progress - "clock: rdtscp (3 of 7)" */
static void progress(struct jtr_probe *p, void *arg, double elapsed)
{
	struct clock_ctx *c = arg;

	jtr_progress_line(p, "clock: %s (%d of %d), %.0f s", c->src[c->at].name, c->at + 1, NSRC, elapsed);
}

/* summary - the side-by-side table */
static void summary(FILE *f, const struct clock_ctx *c)
{
	fprintf(f, "jtr clock: %llu or more back-to-back reads per source on CPU %d%s\n\n",
		(unsigned long long)c->reads, c->cpu, c->p->partial ? " (PARTIAL: stopped early)" : "");
	fprintf(f, "%-22s %9s %9s %9s %8s %8s %8s %10s %10s\n", "source", "cost ns", "res ns",
		"step ns", "p50", "p99", "p99.9", "p99.99", "max");
	for (int k = 0; k < NSRC; k++) {
		const struct source *s = &c->src[k];

		if (!s->ran) {
			fprintf(f, "%-22s %9s   (no usable TSC)\n", s->name, "-");
			continue;
		}
		fprintf(f, "%-22s %9.2f %9.2f %9llu %8llu %8llu %8llu %10llu %10llu\n", s->name,
			s->cost_ns, s->resolution_ns, (unsigned long long)s->step_ns,
			(unsigned long long)jtr_hist_value_at_percentile(&s->hist, 50),
			(unsigned long long)jtr_hist_value_at_percentile(&s->hist, 99),
			(unsigned long long)jtr_hist_value_at_percentile(&s->hist, 99.9),
			(unsigned long long)jtr_hist_value_at_percentile(&s->hist, 99.99),
			(unsigned long long)s->hist.max);
	}
	fputs("\ncost: time per read timed from outside; res: the clock's stated resolution;\n"
	      "step: smallest non-zero delta; percentiles: deltas between consecutive reads (ns).\n", f);
}

/* write_outputs - summary.txt and result.json */
static void write_outputs(struct clock_ctx *c)
{
	struct jtr_probe *p = c->p;
	struct jtr_afile txt, res;
	struct jtr_json j;

	jtr_probe_open(p, &txt, "summary.txt");
	jtr_probe_open(p, &res, "result.json");
	summary(txt.f, c);
	if (!p->quiet)
		summary(stdout, c);

	jtr_json_init(&j, res.f);
	jtr_probe_result_begin(p, &j);
	jtr_json_obj_begin(&j, "params");
	jtr_json_uint(&j, "reads", c->reads);
	jtr_json_int(&j, "cpu", c->cpu);
	jtr_json_double(&j, "hist_error", p->hist_error);
	jtr_json_obj_end(&j);
	jtr_json_arr_begin(&j, "runs");
	for (int k = 0; k < NSRC; k++) {
		const struct source *s = &c->src[k];

		if (!s->ran)
			continue;
		jtr_json_obj_begin(&j, NULL);
		jtr_json_str(&j, "name", s->name);
		jtr_json_str(&j, "source", s->what);
		jtr_json_int(&j, "cpu", c->cpu);
		jtr_json_fixed(&j, "cost_ns", s->cost_ns, 3);
		jtr_json_fixed(&j, "resolution_ns", s->resolution_ns, 3);
		jtr_json_uint(&j, "step_ns", s->step_ns);
		jtr_json_uint(&j, "zero_deltas", s->zero_deltas);
		jtr_result_write_stats(&j, &s->hist);
		jtr_result_write_hist(&j, "histogram", &s->hist);
		jtr_json_obj_end(&j);
	}
	jtr_json_arr_end(&j);
	jtr_probe_finish_summary(p, &j, &txt, &res);
}

int main(int argc, char **argv)
{
	static struct clock_ctx c = {
		.src = {
			{ "rdtsc", "rdtsc", SRC_TSC, 0 },
			{ "lfence_rdtsc", "lfence; rdtsc", SRC_TSC, 0 },
			{ "rdtscp", "rdtscp", SRC_TSC, 0 },
			{ "monotonic_vdso", "clock_gettime(CLOCK_MONOTONIC)", SRC_CLOCK, CLOCK_MONOTONIC },
			{ "monotonic_raw_vdso", "clock_gettime(CLOCK_MONOTONIC_RAW)", SRC_CLOCK, CLOCK_MONOTONIC_RAW },
			{ "monotonic_syscall", "syscall(SYS_clock_gettime, CLOCK_MONOTONIC)", SRC_CLOCK, CLOCK_MONOTONIC },
			{ "monotonic_coarse", "clock_gettime(CLOCK_MONOTONIC_COARSE)", SRC_CLOCK, CLOCK_MONOTONIC_COARSE },
		},
	};
	struct jtr_probe p;
	struct jtr_worker w;
	cpu_set_t cpus;
	bool none, cpu_given = false;
	int opt, k;

	jtr_probe_init(&p, "clock", argc, argv);
	c.p = &p;
	c.reads = 1000000;
	while ((opt = getopt_long(argc, argv, ":" JTR_COUNT_S JTR_CPUS_S JTR_FIFO_S JTR_OUTPUT_S
					JTR_QUIET_S "h", long_opts, NULL)) != -1) {
		if (jtr_probe_common_opt(&p, opt, usage_text, argv))
			continue;
		switch (opt) {
		case JTR_COUNT_C: c.reads = jtr_opt_count(&p, "-n", optarg, 1, 1ULL << 40); break;
		case JTR_CPUS_C:
			jtr_opt_cpus(&p, optarg, false, &cpus, &none);
			if (CPU_COUNT(&cpus) != 1)
				jtr_usage_error(&p, "-c %s: jtr clock runs on one CPU; give one CPU number",
						optarg);
			cpu_given = true;
			break;
		}
	}
	jtr_probe_no_args(&p, argc, argv);
	jtr_probe_default_cpus(&cpus, cpu_given);
	jtr_probe_check_cpus(&p, "-c", &cpus);
	for (k = 0; k < CPU_SETSIZE; k++)
		if (CPU_ISSET(k, &cpus))
			c.cpu = k;

	for (k = 0; k < NSRC; k++)
		if (jtr_hist_init(&c.src[k].hist, p.hist_error) < 0)
			jtr_fatal(&p, "out of memory");
	if (jtr_worker_alloc(&w, c.cpu) < 0)
		jtr_fatal(&p, "cannot allocate a thread stack");

	jtr_probe_privileged(&p);
	jtr_probe_timebase(&p);
	for (k = 0; k < NSRC; k++) {
		struct timespec r;

		if (c.src[k].kind == SRC_TSC)
			c.src[k].resolution_ns = p.tb.hz > 0 ? 1e9 / p.tb.hz : 0;
		else if (clock_getres(c.src[k].clk, &r) == 0)
			c.src[k].resolution_ns = (double)r.tv_sec * 1e9 + (double)r.tv_nsec;
	}
	jtr_probe_map_begin(&p);
	w.fn = worker;
	w.arg = &c;
	jtr_workers_start(&p, &w, 1);
	jtr_workers_wait(&p, &w, 1, progress, &c);
	jtr_probe_map_end(&p);
	write_outputs(&c);
	jtr_probe_finish(&p);
	return jtr_probe_exit(&p, 0);
}
