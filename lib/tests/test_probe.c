// SPDX-License-Identifier: GPL-2.0-only
/* test_probe.c - what the sampling probes (gap, null, send) share through
 * jtr_probe: the one CPU of -c, a run's histograms and outlier log, the
 * common "params" of result.json, a run's text and gnuplot blocks. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "jtr_cpu.h"
#include "jtr_legacy.h"
#include "jtr_probe.h"
#include "jtr_sample.h"

/* first_allowed - the lowest CPU this test may run on */
static int first_allowed(void)
{
	cpu_set_t set;

	assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
	for (int k = 0; k < CPU_SETSIZE; k++)
		if (CPU_ISSET(k, &set))
			return k;
	fail_msg("no CPU allowed");
	return -1;
}

static void test_one_cpu(void **state)
{
	struct jtr_probe p;
	cpu_set_t set;
	int cpu = first_allowed();

	(void)state;
	jtr_probe_init(&p, "test", 0, NULL);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	assert_int_equal(jtr_probe_one_cpu(&p, "-c", &set, false), cpu);
	/* -c -1: not pinned, whatever the set holds */
	assert_int_equal(jtr_probe_one_cpu(&p, "-c", &set, true), -1);
}

/* a CPU that is not there is bad input: exit 2 with the option's name */
static void test_one_cpu_absent(void **state)
{
	int fds[2], status;
	char msg[512] = "";
	ssize_t n;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct jtr_probe p;
		cpu_set_t set;

		dup2(fds[1], STDERR_FILENO);
		jtr_probe_init(&p, "test", 0, NULL);
		CPU_ZERO(&set);
		CPU_SET(CPU_SETSIZE - 1, &set);
		jtr_probe_one_cpu(&p, "-c", &set, false);
		_exit(0);
	}
	close(fds[1]);
	/* stderr is unbuffered: the line comes in several writes */
	for (size_t got = 0; got < sizeof(msg) - 1; got += (size_t)n) {
		n = read(fds[0], msg + got, sizeof(msg) - 1 - got);
		if (n <= 0)
			break;
	}
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 2);
	assert_non_null(strstr(msg, "jtr test: -c: "));
}

static void test_series_init(void **state)
{
	struct jtr_probe p;
	struct jtr_hist h, len;
	struct jtr_olog log;

	(void)state;
	jtr_probe_init(&p, "test", 0, NULL);
	jtr_probe_series_init(&p, &h, &len, &log, 10, 3);
	assert_int_equal(log.cap, 10);
	assert_int_equal(log.cpu, 3);
	assert_non_null(log.v);
	for (int i = 0; i < 12; i++)
		jtr_olog_add(&log, (uint64_t)i, 100);
	assert_int_equal(log.n, 10);
	assert_int_equal(log.dropped, 2);
	assert_int_equal(log.total_ns, 1200);
	jtr_hist_record(&h, 1000);
	jtr_hist_record(&len, 1000);
	assert_int_equal(h.total, 1);
	assert_int_equal(len.total, 1);
	jtr_hist_free(&h);
	jtr_hist_free(&len);
	jtr_olog_free(&log);

	/* no room for outliers: only counted */
	jtr_probe_series_init(&p, &h, &len, &log, 0, -1);
	assert_null(log.v);
	jtr_olog_add(&log, 1, 5);
	assert_int_equal(log.n, 0);
	assert_int_equal(log.dropped, 1);
	jtr_hist_free(&h);
	jtr_hist_free(&len);
}

/* csv_of - @l's outlier log file (header and lines) as a string */
static char *csv_of(const struct jtr_olog *l, const struct jtr_tb *tb)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	jtr_olog_csv_header(f, l);
	assert_int_equal(jtr_olog_write_csv(f, l, tb), 0);
	fclose(f);
	return buf;
}

static void test_olog_columns(void **state)
{
	static const char *const names[] = { "send", "peer_rx" };
	struct jtr_tb tb = { .kind = JTR_TB_CLOCK };
	struct jtr_olog log;
	uint64_t st[2] = { 150, 0 };
	char *csv;

	(void)state;
	/* the three columns of gap, null and send */
	assert_int_equal(jtr_olog_init(&log, 2, 1), 0);
	jtr_olog_add(&log, 100, 7);
	csv = csv_of(&log, &tb);
	assert_string_equal(csv, "cpu,start_ns,length_ns\n1,100,7\n");
	free(csv);
	jtr_olog_free(&log);

	/* a message's log: kind, seq and stamps; 0 stays 0 (not known) */
	assert_int_equal(jtr_olog_init(&log, 2, 3), 0);
	assert_int_equal(jtr_olog_columns(&log, "rtt", true, 2, names, 0), 0);
	jtr_olog_add_msg(&log, 100, 900, 41, st);
	st[1] = 600;
	jtr_olog_add_msg(&log, 200, 800, 42, st);
	jtr_olog_add_msg(&log, 300, 700, 43, st);
	assert_int_equal(log.n, 2);
	assert_int_equal(log.dropped, 1);
	assert_int_equal(log.total_ns, 2400);
	csv = csv_of(&log, &tb);
	assert_string_equal(csv, "cpu,start_ns,length_ns,kind,seq,send_ns,peer_rx_ns\n"
			    "3,100,900,rtt,41,150,0\n3,200,800,rtt,42,150,600\n");
	free(csv);
	jtr_olog_free(&log);
	assert_int_equal(jtr_olog_init(&log, 1, 0), 0);
	assert_int_equal(jtr_olog_columns(&log, NULL, false, JTR_OLOG_MAX_STAMPS + 1, names, 0),
			 -EINVAL);
	jtr_olog_free(&log);
	/* the header alone, for a file of several logs of three columns */
	csv = NULL;
	{
		size_t len = 0;
		FILE *f = open_memstream(&csv, &len);

		jtr_olog_csv_header(f, NULL);
		fclose(f);
	}
	assert_string_equal(csv, "cpu,start_ns,length_ns\n");
	free(csv);
}

/* params - the common params of @p with @threshold as a JSON document */
static char *params(const struct jtr_probe *p, uint64_t threshold, uint64_t max_outliers)
{
	char *buf = NULL, *out;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct jtr_json j;

	jtr_json_init(&j, f);
	jtr_json_obj_begin(&j, NULL);
	jtr_probe_params_common(p, &j, threshold, max_outliers);
	jtr_json_obj_end(&j);
	assert_int_equal(jtr_json_finish(&j), 0);
	fclose(f);
	out = strdup(buf);
	free(buf);
	return out;
}

static void test_params_common(void **state)
{
	struct jtr_probe p;
	char *s;

	(void)state;
	jtr_probe_init(&p, "test", 0, NULL);
	p.hist_error = 0.01;
	s = params(&p, 0, 100000);
	assert_string_equal(s, "{\n"
			    "  \"timebase\": \"tsc\",\n"
			    "  \"threshold_ns\": null,\n"
			    "  \"max_outliers\": 100000,\n"
			    "  \"hist_error\": 0.01\n"
			    "}\n");
	free(s);
	p.tb_wanted = JTR_TB_CLOCK;
	s = params(&p, 2500, 7);
	assert_non_null(strstr(s, "\"timebase\": \"clock\""));
	assert_non_null(strstr(s, "\"threshold_ns\": 2500,"));
	assert_non_null(strstr(s, "\"max_outliers\": 7,"));
	free(s);
}

/* a run's block: the same bytes jtr_legacy makes, to the summary and gnuplot
 * files, and to stdout only without -q */
static void test_legacy_run(void **state)
{
	static const char hdr[] = "jtr null: Busy_spins=100, cpu_num=0\n";
	struct jtr_probe p;
	struct jtr_hist h;
	char *txt = NULL, *gp = NULL, mm[256], pct[512], want[1024];
	size_t tl = 0, gl = 0;
	FILE *ft, *fg;

	(void)state;
	jtr_probe_init(&p, "test", 0, NULL);
	p.quiet = true;
	assert_int_equal(jtr_hist_init(&h, 0.01), 0);
	for (int i = 0; i < 999; i++)
		jtr_hist_record(&h, 174);
	jtr_hist_record(&h, 3445);
	ft = open_memstream(&txt, &tl);
	fg = open_memstream(&gp, &gl);
	jtr_probe_legacy_run(&p, ft, fg, 1, hdr, &h, 200);
	fclose(ft);
	fclose(fg);
	jtr_legacy_minmax(mm, sizeof(mm), &h, 200);
	jtr_legacy_percentiles(pct, sizeof(pct), &h, 200);
	snprintf(want, sizeof(want), "%s%s%s", hdr, mm, pct);
	assert_string_equal(txt, want);
	assert_non_null(strstr(txt, "Minimum=174, Maximum=3445"));
	/* run 1 (from 0) is the second gnuplot block: _2 */
	assert_non_null(strstr(gp, "# title_2 = "));
	assert_non_null(strstr(gp, "\n170 999\n"));
	free(txt);
	free(gp);
	jtr_hist_free(&h);
}

/* the loop's timing fields from the probe's timebase and measured costs */
static void test_sample_timing(void **state)
{
	struct jtr_probe p;
	struct jtr_sample s = { .samples = 5 };

	(void)state;
	jtr_probe_init(&p, "test", 0, NULL);
	p.tb.hz = 2000000000;		/* 2 ticks a ns */
	p.costs.region_overhead_ns = 10;
	p.costs.gettime_region_ns = 25;
	jtr_sample_timing(&s, &p, true, 898);
	assert_int_equal(s.overhead_raw, 20);
	assert_int_equal(s.pause_raw, 1796);
	jtr_sample_timing(&s, &p, false, 898);
	assert_int_equal(s.overhead_raw, 25);
	assert_int_equal(s.pause_raw, 898);
	assert_int_equal(s.samples, 5);		/* the caller's fields are left alone */
}

/* --threshold and --max-outliers, as gap, null and send read them */
static void test_outlier_opt(void **state)
{
	struct jtr_probe p;
	uint64_t thr = 0, max = 100000;

	(void)state;
	jtr_probe_init(&p, "test", 0, NULL);
	assert_true(jtr_probe_outlier_opt(&p, JTR_OPT_THRESHOLD, "2.5us", &thr, &max));
	assert_int_equal(thr, 2500);
	assert_true(jtr_probe_outlier_opt(&p, JTR_OPT_MAX_OUTLIERS, "5K", &thr, &max));
	assert_int_equal(max, 5000);
	assert_false(jtr_probe_outlier_opt(&p, 'n', "7", &thr, &max));
	assert_false(jtr_probe_outlier_opt(&p, JTR_OPT_HIST_ERROR, "7", &thr, &max));
	assert_int_equal(thr, 2500);
	assert_int_equal(max, 5000);
}

/* jtr_proc_kb: the KEY's line, whole key only, in bytes; 0 when absent */
static void test_proc_kb(void **state)
{
	char path[] = "/tmp/jtr-test-proc-XXXXXX";
	int fd = mkstemp(path);
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs("MemTotal:       24000000 kB\nMemAvailableX:  1 kB\n"
	      "MemAvailable:   12345 kB\nVmSize:\t   8 kB\n", f);
	fclose(f);
	assert_int_equal(jtr_proc_kb(path, "MemAvailable"), 12345ULL * 1024);
	assert_int_equal(jtr_proc_kb(path, "VmSize"), 8 * 1024);
	assert_int_equal(jtr_proc_kb(path, "Mem"), 0);
	assert_int_equal(jtr_proc_kb(path, "Cached"), 0);
	unlink(path);
	assert_int_equal(jtr_proc_kb(path, "MemTotal"), 0);
	assert_true(jtr_mapped_bytes() > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_cpu),
		cmocka_unit_test(test_one_cpu_absent),
		cmocka_unit_test(test_series_init),
		cmocka_unit_test(test_olog_columns),
		cmocka_unit_test(test_params_common),
		cmocka_unit_test(test_legacy_run),
		cmocka_unit_test(test_sample_timing),
		cmocka_unit_test(test_outlier_opt),
		cmocka_unit_test(test_proc_kb),
	};

	return cmocka_run_group_tests_name("probe", tests, NULL, NULL);
}
