// SPDX-License-Identifier: GPL-2.0-only
/* test_pmu.c - hardware counters: the derived rates, and opening them here */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "jtr_pmu.h"

static void test_derive(void **state)
{
	uint64_t c[JTR_PMU_N] = { 2000, 3000, 50, 7 };
	struct jtr_pmu_derived d;

	(void)state;
	jtr_pmu_derive(c, 1000, &d);
	assert_true(d.ipc > 1.4999 && d.ipc < 1.5001);
	assert_true(d.per_mloop[JTR_PMU_CACHE_MISSES] > 49999.9 &&
		    d.per_mloop[JTR_PMU_CACHE_MISSES] < 50000.1);
	assert_true(d.per_mloop[JTR_PMU_DTLB_MISSES] > 6999.9 && d.per_mloop[JTR_PMU_DTLB_MISSES] < 7000.1);
	memset(c, 0, sizeof(c));
	jtr_pmu_derive(c, 0, &d);	/* nothing counted: zeros, not a division by zero */
	assert_true(d.ipc == 0.0 && d.per_mloop[JTR_PMU_CYCLES] == 0.0);
}

/* test_open_here - counts where there is a PMU; where there is none, an error
 * that says so and nothing left open */
static void test_open_here(void **state)
{
	struct jtr_pmu m;
	struct jtr_err e;
	volatile uint64_t x = 0;

	(void)state;
	jtr_err_clear(&e);
	if (jtr_pmu_open(&m, &e) < 0) {
		assert_non_null(strstr(e.msg, "no hardware counters here"));
		assert_false(m.open);
		for (int c = 0; c < JTR_PMU_N; c++)
			assert_int_equal(m.fd[c], -1);
		printf("skipped: counting itself: %s\n", e.msg);
		skip();
	}
	jtr_pmu_begin(&m);
	for (int i = 0; i < 1000000; i++)
		x += i;
	jtr_pmu_end(&m);
	assert_true(m.end[JTR_PMU_CYCLES] - m.begin[JTR_PMU_CYCLES] > 100000);
	assert_true(m.end[JTR_PMU_INSTRUCTIONS] - m.begin[JTR_PMU_INSTRUCTIONS] > 1000000);
	jtr_pmu_close(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_derive),
		cmocka_unit_test(test_open_here),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
