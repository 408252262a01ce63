// SPDX-License-Identifier: GPL-2.0-only
/* jtr_hist.c - the HDR-style log-linear histogram. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jtr_hist.h"

/* jtr_hist_bits_for_error - smallest p whose relative error 2^-p <= @rel */
int jtr_hist_bits_for_error(double rel)
{
	int p;

	if (!(rel > 0.0) || rel > 0.5)
		return -EINVAL;
	for (p = JTR_HIST_MIN_BITS; p <= JTR_HIST_MAX_BITS; p++)
		if (ldexp(1.0, -p) <= rel)
			return p;
	return -ERANGE;
}

/* jtr_hist_init - allocate for relative error <= @rel_error */
int jtr_hist_init(struct jtr_hist *h, double rel_error)
{
	int p = jtr_hist_bits_for_error(rel_error);

	memset(h, 0, sizeof(*h));
	if (p < 0)
		return p;
	h->sub_bits = (uint32_t)p;
	h->nbuckets = (65U - (uint32_t)p) << p;
	h->fast_max = (2U << p) < 1024U ? (2U << p) : 1024U;
	h->counts = calloc(h->nbuckets, sizeof(h->counts[0]));
	if (!h->counts)
		return -ENOMEM;
	jtr_hist_reset(h);
	return 0;
}

/* jtr_hist_free - release the counters */
void jtr_hist_free(struct jtr_hist *h)
{
	free(h->counts);
	h->counts = NULL;
}

/* jtr_hist_reset - forget every recorded value, keep the memory */
void jtr_hist_reset(struct jtr_hist *h)
{
	/* memset also touches every page, which is what pre-faulting wants */
	memset(h->counts, 0, (size_t)h->nbuckets * sizeof(h->counts[0]));
	h->total = 0;
	h->min = UINT64_MAX;
	h->max = 0;
	h->sum = 0;
	h->sum_sq_small = 0;
	h->sum_sq_large = 0;
}

/* jtr_hist_bucket_lo - lowest value of bucket @idx */
uint64_t jtr_hist_bucket_lo(uint32_t p, uint32_t idx)
{
	uint32_t s = idx >> p;

	/* buckets [0, 2^(p+1)) have width 1; then s = (idx >> p) - 1 */
	s = s ? s - 1 : 0;
	return (uint64_t)(idx - (s << p)) << s;
}

/* jtr_hist_bucket_hi - highest value of bucket @idx */
uint64_t jtr_hist_bucket_hi(uint32_t p, uint32_t idx)
{
	uint32_t s = idx >> p;

	s = s ? s - 1 : 0;
	return jtr_hist_bucket_lo(p, idx) + ((1ULL << s) - 1);
}

/* jtr_hist_merge - add @src into @dst */
int jtr_hist_merge(struct jtr_hist *dst, const struct jtr_hist *src)
{
	uint32_t i;

	if (dst->sub_bits != src->sub_bits)
		return -EINVAL;
	for (i = 0; i < dst->nbuckets; i++)
		dst->counts[i] += src->counts[i];
	dst->total += src->total;
	dst->sum += src->sum;
	dst->sum_sq_small += src->sum_sq_small;
	dst->sum_sq_large += src->sum_sq_large;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	return 0;
}

/* jtr_hist_mean - exact mean of the recorded values */
double jtr_hist_mean(const struct jtr_hist *h)
{
	return h->total ? (double)h->sum / (double)h->total : 0.0;
}

/* jtr_hist_stddev - exact population standard deviation */
double jtr_hist_stddev(const struct jtr_hist *h)
{
	unsigned __int128 n = h->total, s = h->sum, sq = h->sum_sq_large + h->sum_sq_small;
	long double var;

	if (!h->total)
		return 0.0;
	/* n * sum_sq - sum^2 is exact in 128 bits for ns-scale values; divide last */
	if (sq <= ((unsigned __int128)-1) / n && s * s / n <= sq) {
		unsigned __int128 a = n * sq, b = s * s;

		var = a > b ? (long double)(a - b) / ((long double)n * (long double)n) : 0.0L;
	} else {
		long double m = (long double)h->sum / (long double)n;

		var = (long double)sq / (long double)n - m * m;
		if (var < 0)
			var = 0;
	}
	return (double)sqrtl(var);
}

/* jtr_hist_value_at_percentile - highest value of the bucket that holds the
 * ceil(pct/100 * n)th value, clamped to [min, max] */
uint64_t jtr_hist_value_at_percentile(const struct jtr_hist *h, double pct)
{
	uint64_t target, cum = 0, v;
	uint32_t i;

	if (!h->total)
		return 0;
	if (pct >= 100.0)
		return h->max;
	if (pct <= 0.0)
		return h->min;
	/* the small epsilon keeps 99.9 % of 1000 at 999, not 1000 by rounding */
	target = (uint64_t)ceil(pct / 100.0 * (double)h->total - 1e-9);
	if (target < 1)
		target = 1;
	for (i = 0; i < h->nbuckets; i++) {
		cum += h->counts[i];
		if (cum >= target)
			break;
	}
	if (i == h->nbuckets)
		return h->max;
	v = jtr_hist_bucket_hi(h->sub_bits, i);
	if (v > h->max)
		v = h->max;
	if (v < h->min)
		v = h->min;
	return v;
}

/* jtr_hist_count_above - values > @v */
uint64_t jtr_hist_count_above(const struct jtr_hist *h, uint64_t v)
{
	uint64_t n = 0;
	uint32_t i;

	if (v == UINT64_MAX)
		return 0;
	for (i = jtr_hist_index(h->sub_bits, v + 1); i < h->nbuckets; i++)
		n += h->counts[i];
	return n;
}

/* jtr_hist_next - iterate non-empty buckets */
bool jtr_hist_next(const struct jtr_hist *h, uint32_t *idx, struct jtr_hist_bucket *b)
{
	uint32_t i;

	for (i = *idx; i < h->nbuckets; i++) {
		if (!h->counts[i])
			continue;
		b->lo = jtr_hist_bucket_lo(h->sub_bits, i);
		b->hi = jtr_hist_bucket_hi(h->sub_bits, i);
		b->count = h->counts[i];
		*idx = i + 1;
		return true;
	}
	*idx = h->nbuckets;
	return false;
}

/* jtr_hist_linear - jtr_null's linear view */
void jtr_hist_linear(const struct jtr_hist *h, uint64_t width, uint32_t n,
		     uint64_t *out, uint64_t *overflows)
{
	struct jtr_hist_bucket b;
	uint32_t idx = 0;

	memset(out, 0, (size_t)n * sizeof(out[0]));
	*overflows = 0;
	while (jtr_hist_next(h, &idx, &b)) {
		uint64_t li = b.lo / width;

		if (li < n)
			out[li] += b.count;
		else
			*overflows += b.count;
	}
}

/* jtr_hist_rel_error - the bound 2^-p on the relative error */
double jtr_hist_rel_error(const struct jtr_hist *h)
{
	return ldexp(1.0, -(int)h->sub_bits);
}
