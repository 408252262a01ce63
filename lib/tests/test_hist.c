// SPDX-License-Identifier: GPL-2.0-only
/* test_hist.c - the log-linear histogram against sorted references. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <errno.h>
#include <cmocka.h>

#include "jtr_hist.h"

/* xorshift64* - a fixed, portable PRNG so failures reproduce */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void test_bits_for_error(void **state)
{
	(void)state;
	assert_int_equal(jtr_hist_bits_for_error(0.01), 7);	/* 1/128 = 0.78 % */
	assert_int_equal(jtr_hist_bits_for_error(0.0078125), 7);
	assert_int_equal(jtr_hist_bits_for_error(0.001), 10);
	assert_int_equal(jtr_hist_bits_for_error(0.5), 1);
	assert_true(jtr_hist_bits_for_error(0.0) < 0);
	assert_true(jtr_hist_bits_for_error(0.9) < 0);
	assert_true(jtr_hist_bits_for_error(1e-9) < 0);
}

/* every value lands in a bucket whose bounds hold it; buckets tile the range */
static void test_index_bounds(void **state)
{
	(void)state;
	for (uint32_t p = 1; p <= 12; p++) {
		uint32_t nb = (65U - p) << p;
		uint64_t expect_lo = 0;

		for (uint32_t i = 0; i < nb; i++) {
			uint64_t lo = jtr_hist_bucket_lo(p, i), hi = jtr_hist_bucket_hi(p, i);

			assert_int_equal(lo, expect_lo);	/* no gap, no overlap */
			assert_true(hi >= lo);
			assert_int_equal(jtr_hist_index(p, lo), i);
			assert_int_equal(jtr_hist_index(p, hi), i);
			/* width never above 2^-p of the lowest value (exact buckets aside) */
			if (hi > lo)
				assert_true((double)(hi - lo + 1) <= ldexp((double)lo, -(int)p));
			expect_lo = hi + 1;
			if (hi == UINT64_MAX)
				assert_int_equal(i, nb - 1);
		}
		assert_int_equal(jtr_hist_bucket_hi(p, nb - 1), UINT64_MAX);
	}
	/* random values across the range */
	for (int k = 0; k < 200000; k++) {
		uint64_t v = rnd() >> (rnd() % 64);
		uint32_t i = jtr_hist_index(7, v);

		assert_true(jtr_hist_bucket_lo(7, i) <= v);
		assert_true(jtr_hist_bucket_hi(7, i) >= v);
	}
}

/* percentiles against a sorted copy: ref <= got <= ref * (1 + 2^-p) */
static void check_percentiles(const uint64_t *vals, size_t n, double rel)
{
	struct jtr_hist h;
	uint64_t *s = malloc(n * sizeof(*s));
	static const double pcts[] = { 0.1, 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 99.999, 100 };
	long double sum = 0, sq = 0;

	assert_non_null(s);
	assert_int_equal(jtr_hist_init(&h, rel), 0);
	for (size_t i = 0; i < n; i++) {
		jtr_hist_record(&h, vals[i]);
		sum += vals[i];
		sq += (long double)vals[i] * vals[i];
	}
	memcpy(s, vals, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_u64);
	assert_int_equal(h.total, n);
	assert_int_equal(h.min, s[0]);
	assert_int_equal(h.max, s[n - 1]);
	assert_true(fabs(jtr_hist_mean(&h) - (double)(sum / n)) <= 1e-9 * (double)(sum / n) + 1e-9);
	{
		long double m = sum / n, var = sq / n - m * m;
		double sd = (double)sqrtl(var > 0 ? var : 0);

		assert_true(fabs(jtr_hist_stddev(&h) - sd) <= 1e-6 * sd + 1e-6);
	}
	for (size_t k = 0; k < sizeof(pcts) / sizeof(pcts[0]); k++) {
		size_t rank = (size_t)ceil(pcts[k] / 100.0 * (double)n - 1e-9);
		uint64_t ref = s[(rank ? rank : 1) - 1];
		uint64_t got = jtr_hist_value_at_percentile(&h, pcts[k]);

		if (got < ref || (double)(got - ref) > (double)ref * jtr_hist_rel_error(&h))
			fail_msg("p%g: reference %llu, histogram %llu (bound %g)", pcts[k],
				 (unsigned long long)ref, (unsigned long long)got, jtr_hist_rel_error(&h));
	}
	free(s);
	jtr_hist_free(&h);
}

static void test_percentiles_uniform(void **state)
{
	enum { N = 300000 };
	uint64_t *v = malloc(N * sizeof(*v));

	(void)state;
	for (size_t i = 0; i < N; i++)
		v[i] = 20 + rnd() % 2000;
	check_percentiles(v, N, 0.01);
	check_percentiles(v, N, 0.001);
	free(v);
}

/* jitter-shaped data: a tight body and a heavy tail reaching past 60 s */
static void test_percentiles_heavy_tail(void **state)
{
	enum { N = 400000 };
	uint64_t *v = malloc(N * sizeof(*v));

	(void)state;
	for (size_t i = 0; i < N; i++) {
		uint64_t r = rnd() % 100000;

		if (r < 99000)
			v[i] = 40 + rnd() % 12;			/* the loop */
		else if (r < 99990)
			v[i] = 1000 + rnd() % 60000;		/* interrupts */
		else
			v[i] = (uint64_t)exp((double)(rnd() % 2500) / 100.0);	/* up to 7e10 ns */
	}
	v[17] = 120ULL * 1000000000ULL;				/* a two-minute stall */
	check_percentiles(v, N, 0.01);
	check_percentiles(v, N, 0.05);
	free(v);
}

static void test_small_counts(void **state)
{
	uint64_t one[] = { 12345 };
	uint64_t two[] = { 5, 1000000 };

	(void)state;
	check_percentiles(one, 1, 0.01);
	check_percentiles(two, 2, 0.01);
}

/* the extremes of the range are kept, not clamped or dropped */
static void test_no_overflow(void **state)
{
	struct jtr_hist h;

	(void)state;
	assert_int_equal(jtr_hist_init(&h, 0.01), 0);
	jtr_hist_record(&h, 0);
	jtr_hist_record(&h, 1);
	jtr_hist_record(&h, 60ULL * 1000000000ULL);
	jtr_hist_record(&h, UINT64_MAX);
	assert_int_equal(h.total, 4);
	assert_int_equal(h.min, 0);
	assert_int_equal(h.max, UINT64_MAX);
	assert_int_equal(jtr_hist_value_at_percentile(&h, 100), UINT64_MAX);
	assert_int_equal(jtr_hist_value_at_percentile(&h, 25), 0);
	assert_int_equal(jtr_hist_value_at_percentile(&h, 50), 1);
	{
		uint64_t v = jtr_hist_value_at_percentile(&h, 75);

		assert_true(v >= 60ULL * 1000000000ULL);
		assert_true((double)v <= 60e9 * (1 + 1.0 / 128));
	}
	/* memory is fixed and modest: (65 - 7) * 128 counters */
	assert_int_equal(h.nbuckets, 58 * 128);
	jtr_hist_free(&h);
}

static void test_merge(void **state)
{
	struct jtr_hist a, b, all, other;

	(void)state;
	assert_int_equal(jtr_hist_init(&a, 0.01), 0);
	assert_int_equal(jtr_hist_init(&b, 0.01), 0);
	assert_int_equal(jtr_hist_init(&all, 0.01), 0);
	assert_int_equal(jtr_hist_init(&other, 0.001), 0);
	for (int i = 0; i < 100000; i++) {
		uint64_t v = rnd() % 1000000;

		jtr_hist_record(i % 3 ? &a : &b, v);
		jtr_hist_record(&all, v);
	}
	assert_int_equal(jtr_hist_merge(&a, &b), 0);
	assert_int_equal(a.total, all.total);
	assert_int_equal(a.sum, all.sum);
	assert_int_equal(a.min, all.min);
	assert_int_equal(a.max, all.max);
	assert_memory_equal(a.counts, all.counts, a.nbuckets * sizeof(a.counts[0]));
	assert_true(a.sum_sq_small == all.sum_sq_small && a.sum_sq_large == all.sum_sq_large);
	assert_int_equal(jtr_hist_merge(&a, &other), -EINVAL);
	jtr_hist_free(&a);
	jtr_hist_free(&b);
	jtr_hist_free(&all);
	jtr_hist_free(&other);
}

static void test_iterate_and_count_above(void **state)
{
	struct jtr_hist h;
	struct jtr_hist_bucket bk;
	uint32_t idx = 0;
	uint64_t seen = 0, n = 0, prev_hi = 0;

	(void)state;
	assert_int_equal(jtr_hist_init(&h, 0.01), 0);
	for (uint64_t v = 0; v < 5000; v += 7)
		jtr_hist_record(&h, v);
	while (jtr_hist_next(&h, &idx, &bk)) {
		assert_true(bk.count > 0);
		if (n)
			assert_true(bk.lo > prev_hi);
		prev_hi = bk.hi;
		seen += bk.count;
		n++;
	}
	assert_int_equal(seen, h.total);
	/* exact where v + 1 starts a bucket: below 2^p every value is a bucket */
	assert_int_equal(jtr_hist_count_above(&h, 99), h.total - 15);	/* 0..98: 15 values */
	assert_int_equal(jtr_hist_count_above(&h, UINT64_MAX), 0);
	jtr_hist_reset(&h);
	assert_int_equal(h.total, 0);
	assert_int_equal(jtr_hist_value_at_percentile(&h, 50), 0);
	jtr_hist_free(&h);
}

/* jtr_null's 10 ns linear view */
static void test_linear_view(void **state)
{
	struct jtr_hist h;
	uint64_t lin[200], over;

	(void)state;
	assert_int_equal(jtr_hist_init(&h, 0.01), 0);
	for (int i = 0; i < 1000; i++)
		jtr_hist_record(&h, 172);
	jtr_hist_record(&h, 201);
	jtr_hist_record(&h, 1999);
	jtr_hist_record(&h, 3445);
	jtr_hist_record(&h, 90000000);
	jtr_hist_linear(&h, 10, 200, lin, &over);
	assert_int_equal(lin[17], 1000);
	assert_int_equal(lin[20], 1);
	assert_int_equal(lin[199], 1);		/* 1999 sits in [1992, 1999] */
	assert_int_equal(over, 2);
	jtr_hist_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bits_for_error),
		cmocka_unit_test(test_index_bounds),
		cmocka_unit_test(test_percentiles_uniform),
		cmocka_unit_test(test_percentiles_heavy_tail),
		cmocka_unit_test(test_small_counts),
		cmocka_unit_test(test_no_overflow),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_iterate_and_count_above),
		cmocka_unit_test(test_linear_view),
	};

	return cmocka_run_group_tests_name("hist", tests, NULL, NULL);
}
