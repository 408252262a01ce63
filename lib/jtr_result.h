/* SPDX-License-Identifier: GPL-2.0-only */
/* jtr_result.h - pieces of the jtr-result/1 format shared by every tool:
 * per-run statistics, the lossless histogram, and the outlier log.
 * docs/result-format.md describes the whole format; docs/result.schema.json
 * is what the tests validate against.
 */
#ifndef JTR_RESULT_H
#define JTR_RESULT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "jtr_clock.h"
#include "jtr_hist.h"
#include "jtr_json.h"
#include "jtr_pmu.h"

#define JTR_RESULT_FORMAT "jtr-result/1"

/* the percentiles every run carries, as keys of "percentiles_ns" */
extern const char *const jtr_pct_keys[];
extern const double jtr_pct_values[];
#define JTR_NPCT 6

/* jtr_pct_supported - whether @samples support percentile @pct: at least one
 * sample lies above it (results/figures.py supported(), the same rule) */
bool jtr_pct_supported(double pct, uint64_t samples);

/* jtr_result_write_stats - samples, min/max/mean/stddev and percentiles_ns */
void jtr_result_write_stats(struct jtr_json *j, const struct jtr_hist *h);

/* jtr_result_run_begin - open a run object of "runs": name, cpu (null when
 * @cpu < 0), partial, start/end (CLOCK_MONOTONIC ns), duration and the stats of
 * @h; the caller adds its own fields and closes the object */
void jtr_result_run_begin(struct jtr_json *j, const char *name, int cpu, bool partial,
			  int64_t start_mono_ns, int64_t end_mono_ns, uint64_t duration_ns,
			  const struct jtr_hist *h);

/* jtr_result_write_percentiles - {"50": v, ..., "99.999": v} under @key */
void jtr_result_write_percentiles(struct jtr_json *j, const char *key, const struct jtr_hist *h);

/* jtr_result_write_hist - the "histogram" object: unit, sub_bucket_bits,
 * max_rel_error, total and every non-empty bucket as [lo, hi, count] */
void jtr_result_write_hist(struct jtr_json *j, const char *key, const struct jtr_hist *h);

/* one interruption: where it began (in timebase units) and how long (ns) */
struct jtr_outlier {
	uint64_t start_raw;
	uint64_t len_ns;
};

/* the most stamp columns a log can carry (jtr_olog_columns) */
#define JTR_OLOG_MAX_STAMPS 4

/* a bounded, pre-allocated outlier log for one CPU; overflow is counted.
 * Every log has cpu,start_ns,length_ns; jtr_olog_columns adds the optional
 * ones of a message's log: kind (one word for every line), seq and stamps */
struct jtr_olog {
	struct jtr_outlier *v;
	uint64_t cap;
	uint64_t n;
	uint64_t dropped;
	uint64_t total_ns;	/* sum of every outlier's length, logged or dropped */
	int cpu;
	/* optional columns; NULL and 0 when the log has none */
	const char *kind;	/* the "kind" column's word */
	uint64_t *seq;		/* the "seq" column, cap entries */
	uint64_t *stamps;	/* nstamps a line, cap lines; 0: not known */
	unsigned nstamps;
	const char *const *stamp_names;	/* header "<name>_ns" */
	unsigned stamp_tsc;	/* bit i: stamp i is TSC ticks, not the timebase's units */
};

/* jtr_olog_init - allocate and pre-touch room for @cap entries */
int jtr_olog_init(struct jtr_olog *l, uint64_t cap, int cpu);

/* jtr_olog_columns - after jtr_olog_init: add the kind column (@kind, or
 * none when NULL), a seq column and @nstamps stamp columns named @names
 * (the header says "<name>_ns"; bit i of @tsc: stamp i is in TSC ticks,
 * mapped through the timebase's TSC pairs whatever its kind, else in the
 * timebase's raw units like start), allocated and pre-touched for the log's
 * capacity; -EINVAL for more than JTR_OLOG_MAX_STAMPS, -ENOMEM */
int jtr_olog_columns(struct jtr_olog *l, const char *kind, bool seq, unsigned nstamps,
		     const char *const *names, unsigned tsc);

/* jtr_olog_free - release it */
void jtr_olog_free(struct jtr_olog *l);

/* jtr_olog_add - log one outlier (hot path: no syscall, no allocation) */
static inline void jtr_olog_add(struct jtr_olog *l, uint64_t start_raw, uint64_t len_ns)
{
	l->total_ns += len_ns;
	if (__builtin_expect(l->n < l->cap, 1)) {
		l->v[l->n].start_raw = start_raw;
		l->v[l->n].len_ns = len_ns;
		l->n++;
	} else {
		l->dropped++;
	}
}

/* jtr_olog_add_msg - log one outlier of a message @seq with the log's
 * stamps (@stamps: nstamps values, 0 = not known), for a log with
 * jtr_olog_columns (hot path: no syscall, no allocation) */
static inline void jtr_olog_add_msg(struct jtr_olog *l, uint64_t start_raw, uint64_t len_ns,
				    uint64_t seq, const uint64_t *stamps)
{
	uint64_t i = l->n;

	jtr_olog_add(l, start_raw, len_ns);
	if (__builtin_expect(l->n == i, 0))
		return;		/* full: counted as dropped */
	if (l->seq)
		l->seq[i] = seq;
	for (unsigned k = 0; k < l->nstamps; k++)
		l->stamps[i * l->nstamps + k] = stamps[k];
}

/* how raw timestamps of a timebase become CLOCK_MONOTONIC ns */
struct jtr_tb {
	enum jtr_timebase kind;
	double hz;			/* tsc only */
	struct jtr_ticks2ns t2n;	/* tsc only */
	struct jtr_tsc_map map;		/* tsc only: pairs at start and end */
};

/* jtr_tb_mono_ns - CLOCK_MONOTONIC ns of a raw timestamp */
int64_t jtr_tb_mono_ns(const struct jtr_tb *tb, uint64_t raw);

/* jtr_default_threshold_ns - when a sample counts as an interruption by
 * default: max(1 us, 8 x the undisturbed minimum) */
static inline uint64_t jtr_default_threshold_ns(uint64_t min_ns)
{
	return 8 * min_ns > 1000 ? 8 * min_ns : 1000;
}

/* jtr_result_write_outliers - the "outliers" object of a run: threshold,
 * count, per_s, dropped, log file, total and lost time, length percentiles.
 * @lengths holds every outlier's length (logged or dropped); @base_ns is the
 * undisturbed cost subtracted from each to get time lost. */
void jtr_result_write_outliers(struct jtr_json *j, const struct jtr_olog *l,
			       const struct jtr_hist *lengths, uint64_t threshold_ns,
			       uint64_t duration_ns, uint64_t base_ns, const char *log_name);

/* jtr_olog_csv_header - first line of the outlier log file of @l's
 * columns: "cpu,start_ns,length_ns[,kind][,seq][,<name>_ns ...]" (@l NULL:
 * the first three only) */
void jtr_olog_csv_header(FILE *f, const struct jtr_olog *l);

/* jtr_olog_csv_header_more - the same, then @more (",stream": columns a
 * program adds to each line with jtr_olog_write_csv_more) */
void jtr_olog_csv_header_more(FILE *f, const struct jtr_olog *l, const char *more);

/* jtr_olog_write_csv - "cpu,start_ns,length_ns" lines and @l's optional
 * columns, start and raw stamps in CLOCK_MONOTONIC ns, in time order */
int jtr_olog_write_csv(FILE *f, const struct jtr_olog *l, const struct jtr_tb *tb);

/* jtr_olog_write_csv_more - the same, @more (",3") at the end of each line */
int jtr_olog_write_csv_more(FILE *f, const struct jtr_olog *l, const struct jtr_tb *tb,
			    const char *more);

/* jtr_result_write_pmu - a run's "pmu": counts, IPC and per-million-loop
 * rates, or null when the counters were not open */
void jtr_result_write_pmu(struct jtr_json *j, const struct jtr_pmu *m, uint64_t loops);

#endif
