// SPDX-License-Identifier: GPL-2.0-only
/* test_legacy.c - jtr_null's text and gnuplot formats, byte for byte against
 * the example the original tools printed on the host "Crush". */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "jtr_legacy.h"

static const char crush_header[] =
	"tst_null.sh: Busy_spins=100, cpu_num=5, fifo_priority=-1, histo_buckets=200, num_samples=2000000,\n"
	" pause=898 timebase=1, warmup_loops=500, gettime_cost=15,\n"
	" rdtsc_cost=6, ticks_per_sec=3399967502, jtr_1000_loops_cost=1684\n";

static const char crush_summary[] =
	"Minimum=172, Maximum=3445, Average=174, Overflows=1\n"
	"90.000% are below 180 ns\n"
	"99.000% are below 180 ns\n"
	"99.900% are below 180 ns\n"
	"99.990% are below 180 ns\n"
	"99.999% are below 180 ns\n";

static const char crush_gp[] =
	"# title_1 = \"tst\\_null.sh: Busy\\_spins=100, cpu\\_num=5, fifo\\_priority=-1, "
	"histo\\_buckets=200, num\\_samples=2000000,\\n pause=898 timebase=1, warmup\\_loops=500, "
	"gettime\\_cost=15,\\n rdtsc\\_cost=6, ticks\\_per\\_sec=3399967502, "
	"jtr\\_1000\\_loops\\_cost=1684\\nMinimum=172, Maximum=3445, Average=174, Overflows=1\"\n"
	"# xrange_1 = 2000\n"
	"170 1999998\n"
	"200 1\n"
	"\n\n";

/* crush - the first run of the original README's example: 2M samples, one at 201 ns,
 * one at 3445 ns beyond the 200 x 10 ns range */
static void crush(struct jtr_hist *h)
{
	assert_int_equal(jtr_hist_init(h, 0.01), 0);
	jtr_hist_record(h, 172);
	for (int i = 0; i < 1999997; i++)
		jtr_hist_record(h, 174);
	jtr_hist_record(h, 201);
	jtr_hist_record(h, 3445);
}

static void test_header(void **state)
{
	struct jtr_legacy_hdr s = {
		.desc = "tst_null.sh", .lead = "Busy_spins=100", .cpu_num = 5, .fifo_priority = -1,
		.histo_buckets = 200, .num_samples = 2000000, .pause_ns = 898, .timebase = 1,
		.warmup_loops = 500, .gettime_cost = 15, .rdtsc_cost = 6,
		.ticks_per_sec = 3399967502LL, .loops_1000_cost = 1684,
	};
	char buf[1024];

	(void)state;
	assert_int_equal(jtr_legacy_header(buf, sizeof(buf), &s), (int)strlen(crush_header));
	assert_string_equal(buf, crush_header);
	assert_true(jtr_legacy_header(buf, 20, &s) < 0);
}

static void test_summary(void **state)
{
	struct jtr_hist h;
	char mm[256], pct[512], all[1024];

	(void)state;
	crush(&h);
	assert_true(jtr_legacy_minmax(mm, sizeof(mm), &h, 200) > 0);
	assert_true(jtr_legacy_percentiles(pct, sizeof(pct), &h, 200) > 0);
	snprintf(all, sizeof(all), "%s%s", mm, pct);
	assert_string_equal(all, crush_summary);
	jtr_hist_free(&h);
}

static void test_gnuplot(void **state)
{
	struct jtr_hist h;
	char mm[256], *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	crush(&h);
	jtr_legacy_minmax(mm, sizeof(mm), &h, 200);
	assert_int_equal(jtr_legacy_gnuplot_block(f, 1, crush_header, mm, &h, 200), 0);
	fclose(f);
	assert_string_equal(buf, crush_gp);
	free(buf);
	jtr_hist_free(&h);
}

/* where the original printed "Warning, histogram overflow", jtr still knows */
static void test_percentile_beyond_linear(void **state)
{
	struct jtr_hist h;

	(void)state;
	assert_int_equal(jtr_hist_init(&h, 0.01), 0);
	for (int i = 0; i < 10; i++)
		jtr_hist_record(&h, 100);
	for (int i = 0; i < 10; i++)
		jtr_hist_record(&h, 25325);	/* beyond 2000 ns */
	assert_int_equal(jtr_legacy_below_ns(&h, 200, 50.0), 110);
	/* 25325 lies in a log bucket [25088, 25343]: rounded up to its 10 ns end */
	{
		uint64_t v = jtr_legacy_below_ns(&h, 200, 99.0);

		assert_true(v >= 25330 && v <= 25350);
		assert_int_equal(v % 10, 0);
	}
	jtr_hist_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_gnuplot),
		cmocka_unit_test(test_percentile_beyond_linear),
	};

	return cmocka_run_group_tests_name("legacy", tests, NULL, NULL);
}
