// SPDX-License-Identifier: GPL-2.0-only
/* test_clock.c - calibration and TSC -> ns math with fake inputs, and the
 * real calibration's repeatability on this machine. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <time.h>
#include <cmocka.h>

#include "jtr_clock.h"
#include "jtr_result.h"

static void test_hz_from_pairs(void **state)
{
	/* 2.596122 GHz over exactly 100 ms */
	struct jtr_tsc_pair a = { .tsc = 1000000, .ns = 5000000000LL };
	struct jtr_tsc_pair b = { .tsc = 1000000 + 259612200, .ns = 5100000000LL };
	struct jtr_tsc_pair back = { .tsc = 10, .ns = 4000000000LL };

	(void)state;
	assert_true(fabs(jtr_tsc_hz_from_pairs(&a, &b) - 2596122000.0) < 1e-3);
	/* fractional Hz survive: 123.456 Hz more over 100 ms is 12.3456 ticks */
	b.tsc += 12;
	assert_true(fabs(jtr_tsc_hz_from_pairs(&a, &b) - 2596122120.0) < 1e-3);
	assert_true(jtr_tsc_hz_from_pairs(&a, &back) < 0);	/* time went backwards */
	assert_true(jtr_tsc_hz_from_pairs(&a, &a) < 0);
}

/* ticks -> ns with the fixed-point factor against long double, for the
 * frequencies this code meets and tick counts up to hours */
static void test_ticks2ns(void **state)
{
	static const double hzs[] = { 1e9, 2000000039.931, 2596122000.0, 3399967502.0, 25e6 };
	static const uint64_t ticks[] = { 0, 1, 26, 1000, 123456789, 2596122000ULL,
					  3600ULL * 3400000000ULL, 1ULL << 50 };

	(void)state;
	for (size_t i = 0; i < sizeof(hzs) / sizeof(hzs[0]); i++) {
		struct jtr_ticks2ns c;

		jtr_ticks2ns_init(&c, hzs[i]);
		for (size_t k = 0; k < sizeof(ticks) / sizeof(ticks[0]); k++) {
			long double want = (long double)ticks[k] * 1e9L / hzs[i];
			uint64_t got = jtr_ticks2ns(&c, ticks[k]);
			/* truncation to the ns plus the factor's rounding (2^-49 of 1e9/hz) */
			long double tol = 1.0L + want * 1e-13L;

			if (fabsl((long double)got - want) > tol)
				fail_msg("hz %.3f ticks %llu: got %llu want %.3Lf", hzs[i],
					 (unsigned long long)ticks[k], (unsigned long long)got, want);
		}
		/* and back */
		assert_true(llabs((long long)jtr_ns2ticks(hzs[i], 1000000000ULL) - (long long)hzs[i]) <= 1);
	}
}

/* TSC -> CLOCK_MONOTONIC through two pairs: exact at the pairs, linear
 * between, extrapolated outside, and following a slewed clock */
static void test_tsc_map(void **state)
{
	struct jtr_tsc_map m = {
		.a = { .tsc = 2000000000ULL, .ns = 1000000000LL },
		.b = { .tsc = 4000000000ULL, .ns = 2000000000LL },	/* 2 GHz */
	};

	(void)state;
	assert_int_equal(jtr_tsc_map_ns(&m, m.a.tsc), m.a.ns);
	assert_int_equal(jtr_tsc_map_ns(&m, m.b.tsc), m.b.ns);
	assert_int_equal(jtr_tsc_map_ns(&m, 3000000000ULL), 1500000000LL);
	assert_int_equal(jtr_tsc_map_ns(&m, 3000000001ULL), 1500000001LL);	/* 0.5 rounds up */
	assert_int_equal(jtr_tsc_map_ns(&m, 1000000000ULL), 500000000LL);	/* before a */
	assert_int_equal(jtr_tsc_map_ns(&m, 6000000000ULL), 3000000000LL);	/* after b */
	/* a clock slewed 100 ppm slow over the span */
	m.b.ns = 1000000000LL + 999900000LL;
	assert_int_equal(jtr_tsc_map_ns(&m, 3000000000ULL), 1000000000LL + 499950000LL);
	/* a degenerate map does not divide by zero */
	m.b = m.a;
	assert_int_equal(jtr_tsc_map_ns(&m, 5), m.a.ns);
}

static void test_tb_clock_identity(void **state)
{
	struct jtr_tb tb = { .kind = JTR_TB_CLOCK };

	(void)state;
	assert_int_equal(jtr_tb_mono_ns(&tb, 123456789), 123456789);
}

/* on this machine: two calibrations over the probes' window agree to a few ppm */
static void test_calibration_repeat(void **state)
{
	double a, b, ppm;
	struct jtr_err why;

	(void)state;
	if (!jtr_tsc_usable(&why)) {
		/* a machine without an invariant TSC: nothing to calibrate */
		print_message("skipped: %s\n", why.msg);
		skip();
	}
	/* over the window the probes calibrate over */
	assert_int_equal(jtr_tsc_calibrate(JTR_TSC_CALIBRATE_NS, &a), 0);
	assert_int_equal(jtr_tsc_calibrate(JTR_TSC_CALIBRATE_NS, &b), 0);
	ppm = fabs(a - b) / a * 1e6;
	print_message("calibrations: %.3f Hz and %.3f Hz, %.3f ppm apart\n", a, b, ppm);
	assert_true(ppm < 20.0);
	assert_true(a > 1e8 && a < 1e10);
}

/* measured costs are positive and ordered as the hardware must order them */
static void test_costs(void **state)
{
	struct jtr_clock_costs c;
	double hz = 0;

	(void)state;
	if (jtr_tsc_usable(NULL))
		assert_int_equal(jtr_tsc_calibrate(50000000ULL, &hz), 0);
	jtr_clock_measure_costs(hz, &c);
	assert_true(c.gettime_ns > 0);
	assert_true(c.loops_1000_ns > 0);
	if (hz > 0) {
		assert_true(c.rdtsc_ns > 0);
		assert_true(c.tsc_step_ticks > 0);
		/* a fenced read cannot be cheaper than a bare one, give or take noise */
		assert_true(c.rdtsc_ordered_ns >= c.rdtsc_ns * 0.8);
	}
}

/* a clock read at a CLOCK_MONOTONIC instant: CLOCK_MONOTONIC itself at that
 * instant, and CLOCK_REALTIME at the same offset twice 10 ms apart (NTP's
 * slew, 500 ppm at most, moves it 5 us); 0 tries still reads once */
static void test_clock_pair(void **state)
{
	int64_t m1, m2, before = jtr_mono_ns();
	int64_t ns = jtr_clock_pair(CLOCK_MONOTONIC, 16, &m1);
	int64_t after = jtr_mono_ns();
	struct timespec ten_ms = { 0, 10000000 };
	int64_t r1, r2;

	(void)state;
	assert_true(before <= m1 && m1 <= after);
	assert_true(before <= ns && ns <= after);
	assert_true(llabs(ns - m1) < 20000);
	r1 = jtr_clock_pair(CLOCK_REALTIME, 16, &m1);
	nanosleep(&ten_ms, NULL);
	r2 = jtr_clock_pair(CLOCK_REALTIME, 0, &m2);
	assert_true(m2 - m1 >= 10000000);
	assert_true(llabs((r2 - m2) - (r1 - m1)) < 40000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hz_from_pairs),
		cmocka_unit_test(test_ticks2ns),
		cmocka_unit_test(test_tsc_map),
		cmocka_unit_test(test_tb_clock_identity),
		cmocka_unit_test(test_calibration_repeat),
		cmocka_unit_test(test_costs),
		cmocka_unit_test(test_clock_pair),
	};

	return cmocka_run_group_tests_name("clock", tests, NULL, NULL);
}
