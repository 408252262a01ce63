/* SPDX-License-Identifier: GPL-2.0-only */
/* jtr_hist.h - the HDR-style log-linear histogram (the only one in jtr).
 *
 * Values are unsigned 64-bit (jtr records nanoseconds). Each power-of-two
 * range [2^e, 2^(e+1)) is cut into 2^p equal sub-buckets, so a bucket is never
 * wider than 2^-p of its lowest value: the relative error of any reported
 * value is at most 2^-p (p = 7 gives 0.78 %). Values below 2^p are exact.
 * The buckets cover the whole uint64 range, so nothing ever overflows: a
 * 60 s gap is recorded as faithfully as a 10 ns one.
 *
 * Memory is one array of (65 - p) * 2^p counters allocated at init (58 KiB
 * for p = 7); recording is a clz, two shifts and an increment, plus exact
 * min, max, sum and sum of squares for the mean and standard deviation.
 */
#ifndef JTR_HIST_H
#define JTR_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JTR_HIST_DEFAULT_ERROR 0.01	/* 1 %: chooses p = 7 (0.78 %) */
#define JTR_HIST_MIN_BITS 1
#define JTR_HIST_MAX_BITS 14

/* The running statistics are unsigned long long while the counters are
 * uint64_t (unsigned long): same width, but distinct types, so type-based
 * alias analysis knows a counter increment cannot change them and the
 * compiler keeps them in registers across a hot loop instead of storing
 * and reloading each one on every record. */
typedef unsigned long long jtr_stat_t;

struct jtr_hist {
	uint32_t sub_bits;		/* p: 2^p sub-buckets per power of two */
	uint32_t nbuckets;
	uint64_t *counts;
	jtr_stat_t total;
	jtr_stat_t min;
	jtr_stat_t max;
	jtr_stat_t sum;			/* wraps only after 584 years of ns */
	/* sum of squares, exact, in two parts: values below fast_max (at most
	 * 1023, squares below 2^20) in 64 bits, good for 2^44 such values;
	 * the rest in 128 bits, off the fast path */
	jtr_stat_t sum_sq_small;
	unsigned __int128 sum_sq_large;
	uint32_t fast_max;		/* min(2^(p+1), 1024): index == value below */
};

/* one non-empty bucket, as given by jtr_hist_next() */
struct jtr_hist_bucket {
	uint64_t lo;			/* lowest value that lands here */
	uint64_t hi;			/* highest value that lands here */
	uint64_t count;
};

/* jtr_hist_bits_for_error - smallest p whose relative error 2^-p <= @rel */
int jtr_hist_bits_for_error(double rel);

/* jtr_hist_init - allocate for relative error <= @rel_error (0 < rel <= 0.5) */
int jtr_hist_init(struct jtr_hist *h, double rel_error);

/* jtr_hist_free - release the counters */
void jtr_hist_free(struct jtr_hist *h);

/* jtr_hist_reset - forget every recorded value, keep the memory */
void jtr_hist_reset(struct jtr_hist *h);

/* jtr_hist_index - bucket of @v: (s << p) + (v >> s), s = max(msb(v) - p, 0) */
static inline uint32_t jtr_hist_index(uint32_t p, uint64_t v)
{
	/* OR-ing in 2^p makes msb >= p, so s is never negative and values
	 * below 2^p map to themselves */
	uint32_t s = (uint32_t)(63 - __builtin_clzll(v | (1ULL << p))) - p;

	return (s << p) + (uint32_t)(v >> s);
}

/* jtr_hist_record - count one value */
static inline void jtr_hist_record(struct jtr_hist *h, uint64_t v)
{
	uint32_t idx;

	/* below 2^(p+1) every bucket has width 1 and the index is the value:
	 * jitter probes record almost nothing else, so a predicted branch keeps
	 * the clz, the shifts and the 128-bit square off the path a fenced loop
	 * waits on */
	if (__builtin_expect(v < h->fast_max, 1)) {
		idx = (uint32_t)v;
		h->sum_sq_small += v * v;
	} else {
		idx = jtr_hist_index(h->sub_bits, v);
		h->sum_sq_large += (unsigned __int128)v * v;
	}
	h->counts[idx]++;
	h->total++;
	h->sum += v;
	/* unconditional (cmov) updates: no branch to mispredict, and every
	 * field is written the same way, so a hot loop can keep them all in
	 * registers and store once at its end */
	h->min = v < h->min ? v : h->min;
	h->max = v > h->max ? v : h->max;
}

/* jtr_hist_bucket_lo - lowest value of bucket @idx */
uint64_t jtr_hist_bucket_lo(uint32_t p, uint32_t idx);

/* jtr_hist_bucket_hi - highest value of bucket @idx */
uint64_t jtr_hist_bucket_hi(uint32_t p, uint32_t idx);

/* jtr_hist_merge - add @src into @dst; -EINVAL if their precisions differ */
int jtr_hist_merge(struct jtr_hist *dst, const struct jtr_hist *src);

/* jtr_hist_mean - exact mean of the recorded values (0 if empty) */
double jtr_hist_mean(const struct jtr_hist *h);

/* jtr_hist_stddev - exact population standard deviation (0 if empty) */
double jtr_hist_stddev(const struct jtr_hist *h);

/* jtr_hist_value_at_percentile - smallest bucket bound that covers @pct % of
 * the values: the highest value of the bucket holding the ceil(pct/100 * n)th
 * smallest value, clamped to [min, max]. 0 if empty. */
uint64_t jtr_hist_value_at_percentile(const struct jtr_hist *h, double pct);

/* jtr_hist_count_above - values > @v, exact when @v + 1 is a bucket's lower
 * bound, otherwise counting the whole bucket that holds @v + 1 */
uint64_t jtr_hist_count_above(const struct jtr_hist *h, uint64_t v);

/* jtr_hist_next - iterate non-empty buckets: start with *@idx = 0; returns
 * false at the end */
bool jtr_hist_next(const struct jtr_hist *h, uint32_t *idx, struct jtr_hist_bucket *b);

/* jtr_hist_linear - jtr_null's linear view: @n buckets of @width values
 * each. A log bucket is placed by its lowest value, so where a log bucket is
 * wider than 1 and straddles a boundary (above 2^p * 4 for width 10) its whole
 * count goes to the lower linear bucket. Counts at or beyond n * width go to
 * *@overflows. */
void jtr_hist_linear(const struct jtr_hist *h, uint64_t width, uint32_t n,
		     uint64_t *out, uint64_t *overflows);

/* jtr_hist_rel_error - the bound 2^-p on the relative error */
double jtr_hist_rel_error(const struct jtr_hist *h);

#endif
