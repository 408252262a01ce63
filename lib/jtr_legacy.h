/* SPDX-License-Identifier: GPL-2.0-only */
/* jtr_legacy.h - the summary text and gnuplot file in the jtr_null format
 * (docs/compat.md), which existing scripts read.
 *
 * Summary, one block per run:
 *   DESC: LEAD, cpu_num=5, fifo_priority=-1, histo_buckets=200, num_samples=2000000,
 *    pause=898 timebase=1, warmup_loops=500, gettime_cost=15,
 *    rdtsc_cost=6, ticks_per_sec=3399967502, jtr_1000_loops_cost=1684
 *   Minimum=172, Maximum=3445, Average=174, Overflows=1
 *   90.000% are below 180 ns          (five lines: 90 .. 99.999)
 * where LEAD is the tool's first field (Busy_spins=100, Msg_size=1024, ...).
 *
 * Gnuplot file, one data block per run, separated by two blank lines:
 *   # title_N = "<the block's first four lines, \n-joined, _ escaped>"
 *   # xrange_N = <histo_buckets * 10>
 *   <bucket start ns> <count>        (non-empty 10 ns buckets)
 *
 * Percentiles use the format's linear view of 10 ns buckets; where a
 * percentile lies beyond the linear range, jtr prints the value from its
 * lossless histogram (rounded up to a bucket end) instead of a warning.
 */
#ifndef JTR_LEGACY_H
#define JTR_LEGACY_H

#include <stdint.h>
#include <stdio.h>

#include "jtr_hist.h"

#define JTR_LEGACY_BUCKET_NS 10
#define JTR_LEGACY_DEFAULT_BUCKETS 200

struct jtr_legacy_hdr {
	const char *desc;		/* the run's name, jtr_null's -d */
	const char *lead;		/* "Busy_spins=100" */
	int cpu_num;
	int fifo_priority;
	uint32_t histo_buckets;
	uint64_t num_samples;
	uint64_t pause_ns;
	int timebase;			/* 1 rdtsc, 2 clock_gettime */
	uint64_t warmup_loops;
	long long gettime_cost;
	long long rdtsc_cost;
	long long ticks_per_sec;
	long long loops_1000_cost;
};

/* jtr_legacy_header - the three header lines; returns length or -ENOSPC */
int jtr_legacy_header(char *buf, size_t n, const struct jtr_legacy_hdr *s);

/* jtr_legacy_minmax - "Minimum=.., Maximum=.., Average=.., Overflows=..\n" */
int jtr_legacy_minmax(char *buf, size_t n, const struct jtr_hist *h, uint32_t histo_buckets);

/* jtr_legacy_below_ns - the N of "P% are below N ns" (jtr_null's rounding) */
uint64_t jtr_legacy_below_ns(const struct jtr_hist *h, uint32_t histo_buckets, double pct);

/* jtr_legacy_percentiles - the five "are below" lines */
int jtr_legacy_percentiles(char *buf, size_t n, const struct jtr_hist *h, uint32_t histo_buckets);

/* jtr_legacy_gnuplot_block - one run's block; @index counts from 1 */
int jtr_legacy_gnuplot_block(FILE *f, int index, const char *header, const char *minmax,
			   const struct jtr_hist *h, uint32_t histo_buckets);

#endif
