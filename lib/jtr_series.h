/* SPDX-License-Identifier: GPL-2.0-only */
/* jtr_series.h - the per-CPU series of a probe that runs one measuring
 * thread on each CPU it measures (jtr gap, jtr wake): what it keeps for each
 * CPU (a histogram of every sample, one of the outliers' lengths, the outlier
 * log, the threshold, progress), the records and threads made before the
 * privilege drop, and the parts of its results that are the same for every
 * such probe: the summary table's frame, outliers.csv, and result.json's
 * "cpus", runs and "files".
 *
 * Each probe keeps its own per-CPU record (its own fields beside the series)
 * and says in its own words what it measured; this is only what was written
 * twice. Like jtr_probe.h, it prints and exits: it is for main() and the
 * functions main() calls, never for a measuring loop.
 */
#ifndef JTR_SERIES_H
#define JTR_SERIES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "jtr_probe.h"

/* JTR_SERIES_MEMBERS - the members of struct jtr_series */
#define JTR_SERIES_MEMBERS						\
	struct jtr_probe *p;						\
	int cpu;							\
	struct jtr_hist hist;		/* every sample */		\
	struct jtr_hist lengths;	/* the outliers', logged or not */ \
	struct jtr_olog log;		/* the outliers, up to --max-outliers */ \
	uint64_t threshold_ns;		/* above it a sample is an outlier */ \
	volatile uint64_t progress_max_ns;	/* for the progress line only */ \
	volatile uint64_t progress_count;				\
	bool partial			/* a stop signal ended the CPU's run */

/* one CPU's series */
struct jtr_series {
	JTR_SERIES_MEMBERS;
};

/* JTR_SERIES_GROUP - a member of a probe's per-CPU record that holds the
 * series' members by name (g->hist, as the measuring loops use them) and as
 * one struct (g->series, for the functions below), as the kernel's
 * struct_group_tagged() does */
#define JTR_SERIES_GROUP						\
	union {								\
		struct jtr_series series;				\
		struct { JTR_SERIES_MEMBERS; };				\
	}

/* the records of every measured CPU, seen as series: @n records of @size
 * bytes from @recs, each with its series (JTR_SERIES_GROUP) at offset @off */
struct jtr_series_set {
	const void *recs;
	size_t size, off;
	int n;
};

/* JTR_SERIES_SET - the set of the @n records of the array @recs */
#define JTR_SERIES_SET(recs, n)							((struct jtr_series_set){ (recs), sizeof(*(recs)),						  offsetof(__typeof__(*(recs)), series), (n) })

/* jtr_series_at - the series of record @i */
static inline const struct jtr_series *jtr_series_at(const struct jtr_series_set *a, int i)
{
	return (const struct jtr_series *)((const char *)a->recs + a->size * (size_t)i + a->off);
}

/* jtr_series_workers - for each CPU of @set (in order), a zeroed record of
 * @size bytes whose series (at offset @off) is set up for that CPU: p, cpu,
 * and the histograms and an outlier log of @max_outliers entries, allocated
 * and pre-touched; and a worker pinned to that CPU that will run
 * @fn(record). The records (64-byte aligned, as jtr_probe_cpu_workers makes
 * them), *@w the workers and *@n their count; exit 1 when out of memory.
 * Call before jtr_probe_privileged. */
void *jtr_series_workers(struct jtr_probe *p, const cpu_set_t *set, size_t size, size_t off,
			 uint64_t max_outliers, void (*fn)(void *rec), struct jtr_worker **w,
			 int *n);

/* the summary table (summary.txt and stdout): a row is a label of 24
 * columns, then a value of 14 columns per CPU */

/* jtr_series_head - the table's head: "\n\n  " @corner, then "CPU N" for each
 * CPU (no newline: the probe ends the line) */
void jtr_series_head(FILE *f, const struct jtr_series_set *a, const char *corner);

/* jtr_series_dist - the rows of every sample's distribution: "min ns", the
 * percentiles of result.json ("p50 ns" .. "p99.999 ns"), "max ns" */
void jtr_series_dist(FILE *f, const struct jtr_series_set *a);

/* JTR_SERIES_ROW - a row: @label, then @expr (printf format @fmt) for each of
 * the @n records of the array @recs, each seen as @var */
#define JTR_SERIES_ROW(f, recs, n, var, label, fmt, expr) do {		\
	fprintf(f, "  %-24s", label);					\
	for (int i_ = 0; i_ < (n); i_++) {				\
		const __typeof__(*(recs)) *var = &(recs)[i_];		\
		fprintf(f, " %14" fmt, expr);				\
	}								\
	fputc('\n', f);							\
} while (0)

/* the files of a per-CPU probe's results, open */
struct jtr_series_out {
	struct jtr_afile txt;		/* summary.txt */
	struct jtr_afile csv;		/* outliers.csv */
	struct jtr_afile res;		/* result.json */
	struct jtr_json j;		/* on res */
};

/* jtr_series_open - open summary.txt, outliers.csv and result.json in the
 * results folder, and begin result.json (jtr_probe_result_begin) */
void jtr_series_open(struct jtr_probe *p, struct jtr_series_out *o);

/* jtr_series_csv - outliers.csv: its header, then every CPU's outliers as
 * its loop logged them (in time order), CPU after CPU, their starts mapped to
 * CLOCK_MONOTONIC by @tb */
void jtr_series_csv(FILE *f, const struct jtr_series_set *a, const struct jtr_tb *tb);

/* jtr_series_cpus - "params"' "cpus": the measured CPUs, in order */
void jtr_series_cpus(struct jtr_json *j, const struct jtr_series_set *a);

/* jtr_series_run_begin - open a run of "runs" for @s's CPU: its name
 * ("cpuN"), partial, its span from @start_ns to @end_ns (CLOCK_MONOTONIC),
 * @dur ns, and its samples' statistics; the probe adds its own fields */
void jtr_series_run_begin(struct jtr_json *j, const struct jtr_series *s, int64_t start_ns,
			  int64_t end_ns, uint64_t dur);

/* jtr_series_run_outliers - the run's "outliers" over @dur ns (an outlier's
 * time lost is its length less the shortest sample), logged in outliers.csv */
void jtr_series_run_outliers(struct jtr_json *j, const struct jtr_series *s, uint64_t dur);

/* jtr_series_run_end - the run's "histogram", and the run closed */
void jtr_series_run_end(struct jtr_json *j, const struct jtr_series *s);

/* jtr_series_close - "files" (summary.txt, outliers.csv), the end of
 * result.json, and the three files committed; or exit 1 */
void jtr_series_close(struct jtr_probe *p, struct jtr_series_out *o);

#endif
