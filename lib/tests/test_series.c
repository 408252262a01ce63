// SPDX-License-Identifier: GPL-2.0-only
/* test_series.c - what jtr gap and jtr wake share through jtr_series: a
 * record per CPU whose series is reached by name and as one struct, set up
 * for its CPU with a worker; the summary table's head and distribution rows;
 * outliers.csv CPU after CPU; a run of result.json; the three files. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <unistd.h>
#include <cmocka.h>

#include "jtr_series.h"

/* a probe's per-CPU record, its series not first (the offset is honoured) */
struct rec {
	int before;
	JTR_SERIES_GROUP;
	int tag;
} __attribute__((aligned(64)));

static void nothing(void *rec)
{
	(void)rec;
}

/* allowed - the first @max CPUs this test may run on, in order; how many */
static int allowed(cpu_set_t *set, int max)
{
	cpu_set_t all;
	int n = 0;

	assert_int_equal(sched_getaffinity(0, sizeof(all), &all), 0);
	CPU_ZERO(set);
	for (int k = 0; k < CPU_SETSIZE && n < max; k++)
		if (CPU_ISSET(k, &all)) {
			CPU_SET(k, set);
			n++;
		}
	return n;
}

/* TEXT_OF - what @stmt wrote to f (a memory stream) into @out, to free */
#define TEXT_OF(out, stmt) do {						\
	size_t len_ = 0;						\
	FILE *f = open_memstream(&(out), &len_);			\
									\
	assert_non_null(f);						\
	stmt;								\
	fclose(f);							\
} while (0)

static void test_workers(void **state)
{
	struct jtr_probe p;
	struct jtr_worker *w;
	struct rec *r;
	cpu_set_t set;
	int want = allowed(&set, 2), n = -1, prev = -1;

	(void)state;
	jtr_probe_init(&p, "test", 0, NULL);
	r = jtr_series_workers(&p, &set, sizeof(*r), offsetof(struct rec, series), 5, nothing, &w,
			       &n);
	assert_int_equal(n, want);
	assert_int_equal((uintptr_t)r % 64, 0);
	for (int i = 0; i < n; i++) {
		/* each CPU of the set, in order, its record zeroed but for the series */
		assert_true(CPU_ISSET(r[i].cpu, &set));
		assert_true(r[i].cpu > prev);
		prev = r[i].cpu;
		assert_int_equal(r[i].before, 0);
		assert_int_equal(r[i].tag, 0);
		assert_ptr_equal(r[i].p, &p);
		assert_int_equal(r[i].log.cap, 5);
		assert_int_equal(r[i].log.cpu, r[i].cpu);
		assert_non_null(r[i].log.v);
		assert_non_null(r[i].hist.counts);
		assert_non_null(r[i].lengths.counts);
		/* the worker runs the record on its CPU */
		assert_int_equal(w[i].cpu, r[i].cpu);
		assert_ptr_equal(w[i].fn, nothing);
		assert_ptr_equal(w[i].arg, &r[i]);
		/* one memory, two names: what the loop records, the writers read */
		jtr_hist_record(&r[i].hist, 42);
		jtr_olog_add(&r[i].log, 7, 1500);
		r[i].threshold_ns = 1000;
		assert_int_equal(r[i].series.hist.total, 1);
		assert_int_equal(r[i].series.hist.max, 42);
		assert_int_equal(r[i].series.log.n, 1);
		assert_int_equal(r[i].series.threshold_ns, 1000);
		assert_int_equal(r[i].series.cpu, r[i].cpu);
		assert_ptr_equal(jtr_series_at(&JTR_SERIES_SET(r, n), i), &r[i].series);
	}
}

/* two CPUs' records: CPU 2 saw 1..100 ns (exact in the histogram), CPU 5
 * nothing */
static struct rec two[2];

static int setup_two(void **state)
{
	struct jtr_probe p;

	(void)state;
	memset(two, 0, sizeof(two));
	jtr_probe_init(&p, "test", 0, NULL);
	two[0].cpu = 2;
	two[1].cpu = 5;
	for (int i = 0; i < 2; i++)
		jtr_probe_series_init(&p, &two[i].hist, &two[i].lengths, &two[i].log, 4, two[i].cpu);
	for (uint64_t v = 1; v <= 100; v++)
		jtr_hist_record(&two[0].hist, v);
	return 0;
}

static int teardown_two(void **state)
{
	(void)state;
	for (int i = 0; i < 2; i++) {
		jtr_hist_free(&two[i].hist);
		jtr_hist_free(&two[i].lengths);
		jtr_olog_free(&two[i].log);
	}
	return 0;
}

static void test_summary(void **state)
{
	const struct jtr_series_set set = JTR_SERIES_SET(two, 2);
	char *s = NULL;

	(void)state;
	TEXT_OF(s, jtr_series_head(f, &set, "latency"); fputc('\n', f);
		JTR_SERIES_ROW(f, two, 2, r, "samples", "llu", (unsigned long long)r->hist.total);
		jtr_series_dist(f, &set));
	assert_string_equal(s,
		"\n\n  latency                           CPU 2          CPU 5\n"
		"  samples                             100              0\n"
		"  min ns                                1              -\n"
		"  p50 ns                               50              -\n"
		"  p90 ns                               90              -\n"
		"  p99 ns                               99              -\n"
		"  p99.9 ns                              -              -\n"
		"  p99.99 ns                             -              -\n"
		"  p99.999 ns                            -              -\n"
		"  max ns                              100              -\n");
	free(s);
}

static void test_csv(void **state)
{
	const struct jtr_series_set set = JTR_SERIES_SET(two, 2);
	const struct jtr_tb tb = { .kind = JTR_TB_CLOCK };
	char *s = NULL;

	(void)state;
	jtr_olog_add(&two[0].log, 2000, 50);
	jtr_olog_add(&two[0].log, 1000, 70);
	jtr_olog_add(&two[1].log, 1500, 10);
	TEXT_OF(s, jtr_series_csv(f, &set, &tb));
	/* one header; each CPU's outliers as its loop logged them, CPU after CPU */
	assert_string_equal(s, "cpu,start_ns,length_ns\n2,2000,50\n2,1000,70\n5,1500,10\n");
	free(s);
}

static void test_run(void **state)
{
	const struct jtr_series_set set = JTR_SERIES_SET(two, 2);
	struct rec *r = &two[0];
	struct jtr_json j;
	char *s = NULL;

	(void)state;
	r->partial = true;
	r->threshold_ns = 60;
	jtr_olog_add(&r->log, 1000, 70);
	jtr_hist_record(&r->lengths, 70);
	jtr_olog_add(&r->log, 2000, 80);
	jtr_hist_record(&r->lengths, 80);
	TEXT_OF(s, jtr_json_init(&j, f); jtr_json_obj_begin(&j, NULL);
		jtr_series_cpus(&j, &set);
		jtr_json_arr_begin(&j, "runs");
		jtr_series_run_begin(&j, &r->series, 1000, 3000, 2000);
		jtr_json_uint(&j, "own", 7);
		jtr_series_run_outliers(&j, &r->series, 2000);
		jtr_series_run_end(&j, &r->series);
		jtr_json_arr_end(&j); jtr_json_obj_end(&j);
		assert_int_equal(jtr_json_finish(&j), 0));
	assert_non_null(strstr(s, "\"cpus\": [2, 5]"));
	assert_non_null(strstr(s, "\"name\": \"cpu2\",\n      \"cpu\": 2,\n      \"partial\": true,\n"
			       "      \"start_mono_ns\": 1000,\n      \"end_mono_ns\": 3000,\n"
			       "      \"duration_ns\": 2000,\n      \"samples\": 100,"));
	/* the probe's own fields between the stats and the outliers */
	assert_true(strstr(s, "\"own\": 7") > strstr(s, "\"percentiles_ns\""));
	assert_true(strstr(s, "\"outliers\"") > strstr(s, "\"own\": 7"));
	assert_non_null(strstr(s, "\"threshold_ns\": 60,\n        \"count\": 2,"));
	assert_non_null(strstr(s, "\"log\": \"outliers.csv\""));
	/* time lost: each outlier less the shortest sample (1 ns) */
	assert_non_null(strstr(s, "\"total_ns\": 150,\n        \"lost_ns\": 148,"));
	/* the histogram last, and the run closed */
	assert_true(strstr(s, "\"histogram\"") > strstr(s, "\"outliers\""));
	free(s);
}

/* the three files, written into a folder and committed */
static void test_files(void **state)
{
	char dir[] = "/tmp/jtr-test-series-XXXXXX", path[256], *buf = NULL;
	struct jtr_series_out o;
	struct jtr_probe p;
	struct jtr_err e;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	jtr_probe_init(&p, "test", 0, NULL);
	jtr_err_clear(&e);
	assert_int_equal(jtr_outdir_prepare(&p.out, dir, "host", "test", &e), 0);
	jtr_series_open(&p, &o);
	fputs("the summary\n", o.txt.f);
	jtr_json_uint(&o.j, "own", 1);
	jtr_series_close(&p, &o);

	snprintf(path, sizeof(path), "%s/summary.txt", dir);
	assert_int_equal(access(path, R_OK), 0);
	snprintf(path, sizeof(path), "%s/outliers.csv", dir);
	assert_int_equal(access(path, R_OK), 0);
	snprintf(path, sizeof(path), "%s/result.json", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_true(getdelim(&buf, &len, '\0', f) > 0);
	fclose(f);
	assert_non_null(strstr(buf, "\"format\": \"jtr-result/1\""));
	assert_non_null(strstr(buf, "\"tool\": \"test\""));
	assert_non_null(strstr(buf, "\"own\": 1,\n  \"files\": {\n    \"summary\": \"summary.txt\",\n"
				 "    \"outliers\": \"outliers.csv\"\n  },\n  \"warnings\": []\n}\n"));
	free(buf);
	for (const char *const *n = (const char *const[]){ "summary.txt", "outliers.csv",
							  "result.json", NULL }; *n; n++) {
		snprintf(path, sizeof(path), "%s/%s", dir, *n);
		unlink(path);
	}
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_workers),
		cmocka_unit_test_setup_teardown(test_summary, setup_two, teardown_two),
		cmocka_unit_test_setup_teardown(test_csv, setup_two, teardown_two),
		cmocka_unit_test_setup_teardown(test_run, setup_two, teardown_two),
		cmocka_unit_test(test_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
