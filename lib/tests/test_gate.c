// SPDX-License-Identifier: GPL-2.0-only
/* test_gate.c - the gates: their options, judging, result.json's section,
 * XML escaping and the JUnit writer. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <limits.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "jtr_gate.h"

/* escaped - jtr_xml_escape(@s, @attr) as a string (caller frees) */
static char *escaped(const char *s, bool attr)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	jtr_xml_escape(f, s, attr);
	fclose(f);
	return buf;
}

#define assert_escape(in, attr, want) do {		\
	char *got_ = escaped(in, attr);			\
	assert_string_equal(got_, want);		\
	free(got_);					\
} while (0)

#define FFFD "\xef\xbf\xbd"

static void test_escape(void **state)
{
	(void)state;
	assert_escape("plain", true, "plain");
	assert_escape("", false, "");
	assert_escape(NULL, false, "");
	assert_escape("a&b<c>d", false, "a&amp;b&lt;c&gt;d");
	/* quotes only need escaping in attributes; line ends must be kept there */
	assert_escape("say \"hi\" 'x'", true, "say &quot;hi&quot; &apos;x&apos;");
	assert_escape("say \"hi\" 'x'", false, "say \"hi\" 'x'");
	assert_escape("a\nb\tc\rd", true, "a&#10;b&#9;c&#13;d");
	assert_escape("a\nb\tc\rd", false, "a\nb\tc&#13;d");
	/* control characters XML 1.0 cannot hold, even as references */
	assert_escape("\x01x\x1b[0m\x1f", false, FFFD "x" FFFD "[0m" FFFD);
	/* valid UTF-8 passes through: é, €, 😀 */
	assert_escape("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", true,
		      "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	/* invalid bytes: stray continuation, truncated, overlong, surrogate,
	 * past U+10FFFF, and U+FFFE / U+FFFF, which XML 1.0 excludes */
	assert_escape("a\x80z", false, "a" FFFD "z");
	assert_escape("\xc3", false, FFFD);
	assert_escape("\xc0\xaf", false, FFFD FFFD);
	assert_escape("\xe0\x80\xaf", false, FFFD FFFD FFFD);
	assert_escape("\xed\xa0\x80", false, FFFD FFFD FFFD);
	assert_escape("\xf4\x90\x80\x80", false, FFFD FFFD FFFD FFFD);
	assert_escape("\xef\xbf\xbe\xef\xbf\xbf", false, FFFD FFFD FFFD FFFD FFFD FFFD);
	assert_escape("\xff<", false, FFFD "&lt;");
}

/* opt - jtr_gate_opt of one option on a fresh gate; its status */
static int opt(struct jtr_gate *g, int o, const char *arg, struct jtr_err *e)
{
	jtr_err_clear(e);
	return jtr_gate_opt(g, o, arg, e);
}

static void test_options(void **state)
{
	struct jtr_gate g = { 0 };
	struct jtr_err e;
	char dir[] = "/tmp/jtr-test-gate-XXXXXX", file[64], sub[64];

	(void)state;
	assert_false(jtr_gate_any(&g));
	assert_int_equal(opt(&g, 'd', "10", &e), 0);		/* not a gate's */
	assert_int_equal(opt(&g, JTR_OPT_MAX_LATENCY, "100us", &e), 1);
	assert_true(g.latency);
	assert_int_equal(g.max_latency_ns, 100000);
	assert_int_equal(opt(&g, JTR_OPT_MAX_LATENCY, "1.5ms", &e), 1);
	assert_int_equal(g.max_latency_ns, 1500000);
	assert_int_equal(opt(&g, JTR_OPT_MAX_LATENCY, "0", &e), 1);
	assert_int_equal(g.max_latency_ns, 0);
	assert_int_equal(opt(&g, JTR_OPT_MAX_LATENCY, "1h", &e), 1);
	assert_int_equal(opt(&g, JTR_OPT_MAX_LATENCY, "61m", &e), -ERANGE);
	assert_non_null(strstr(e.msg, "--max-latency 61m: '61m' is out of range"));
	assert_int_equal(opt(&g, JTR_OPT_MAX_LATENCY, "100 us", &e), -EINVAL);
	assert_non_null(strstr(e.msg, "'100 us' is not a duration"));
	assert_int_equal(opt(&g, JTR_OPT_MAX_LOST, "0.5%", &e), 1);
	assert_true(g.lost);
	assert_true(g.max_lost_pct == 0.5);
	assert_int_equal(opt(&g, JTR_OPT_MAX_LOST, "2", &e), 1);
	assert_true(g.max_lost_pct == 2.0);
	assert_int_equal(opt(&g, JTR_OPT_MAX_LOST, "100.5", &e), -ERANGE);
	assert_non_null(strstr(e.msg, "--max-lost 100.5: "));
	assert_int_equal(opt(&g, JTR_OPT_MAX_LOST, "-1", &e), -EINVAL);

	/* --junit: a file in a folder that exists and may be written */
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/ci.xml", dir);
	assert_int_equal(opt(&g, JTR_OPT_JUNIT, file, &e), 1);
	assert_string_equal(g.junit, file);
	assert_true(jtr_gate_any(&g));
	assert_int_equal(opt(&g, JTR_OPT_JUNIT, dir, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "a folder; give a file name in it"));
	snprintf(sub, sizeof(sub), "%s/missing/ci.xml", dir);
	assert_int_equal(opt(&g, JTR_OPT_JUNIT, sub, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "no folder"));
	assert_int_equal(opt(&g, JTR_OPT_JUNIT, "", &e), -EINVAL);
	assert_int_equal(rmdir(dir), 0);
}

static void test_check(void **state)
{
	struct jtr_gate g = { .latency = true, .max_latency_ns = 50000 };
	struct jtr_gate_run runs[2] = {
		{ .cpu = 1, .max_ns = 50000, .lost_ns = 1000000, .duration_ns = 1000000000,
		  .samples = 1000 },
		{ .cpu = 3, .max_ns = 50001, .lost_ns = 0, .duration_ns = 1000000000,
		  .samples = 1000 },
	};
	struct jtr_gate_case c[4];
	char buf[256];
	int failed, n;

	(void)state;
	/* at the limit passes, one ns past it fails */
	n = jtr_gate_check(&g, runs, 2, c, &failed);
	assert_int_equal(n, 2);
	assert_int_equal(failed, 1);
	assert_true(c[0].passed);
	assert_false(c[1].passed);
	assert_string_equal(jtr_gate_case_name(&c[1], buf, sizeof(buf)), "max-latency cpu 3");
	assert_string_equal(jtr_gate_verdict(&c[1], buf, sizeof(buf)),
			    "max-latency cpu 3: FAILED: max 50.0 us > limit 50us");
	assert_string_equal(jtr_gate_verdict(&c[0], buf, sizeof(buf)),
			    "max-latency cpu 1: passed: max 50.0 us <= limit 50us");

	/* both gates: a case per gate per CPU, the latency gate's first */
	g.lost = true;
	g.max_lost_pct = 0.05;
	n = jtr_gate_check(&g, runs, 2, c, &failed);
	assert_int_equal(n, 4);
	assert_int_equal(failed, 2);
	assert_string_equal(c[2].gate, "max-lost");
	assert_int_equal(c[2].cpu, 1);
	assert_true(c[2].value > 0.0999 && c[2].value < 0.1001);	/* 1 ms of 1 s */
	assert_false(c[2].passed);
	assert_true(c[3].passed);
	assert_string_equal(jtr_gate_verdict(&c[2], buf, sizeof(buf)),
			    "max-lost cpu 1: FAILED: 0.100 % of the time lost > limit 0.05 %");
	assert_string_equal(jtr_gate_detail(&c[3], buf, sizeof(buf)),
			    "0.000 % of the time lost <= limit 0.05 %");
	/* the JUnit failure texts, as jtr run writes them */
	assert_string_equal(jtr_gate_failure_text(&c[1], "wake", "not measured: why", buf,
						  sizeof(buf)),
			    "value: 50.0 us (50001 ns), the largest sample of wake on CPU 3 in "
			    "1.00 s\nlimit: 50us (50000 ns)\ncauses: not measured: why\n");
	assert_string_equal(jtr_gate_failure_text(&c[2], "wake", "x", buf, sizeof(buf)),
			    "value: 0.100000 % of the time lost on CPU 1 in 1.00 s\n"
			    "limit: 0.05 %\ncauses: x\n");

	/* only the lost gate; an unpinned run has no CPU in its name */
	g.latency = false;
	runs[0].cpu = -1;
	n = jtr_gate_check(&g, runs, 1, c, &failed);
	assert_int_equal(n, 1);
	assert_string_equal(jtr_gate_case_name(&c[0], buf, sizeof(buf)), "max-lost");

	/* a run that measured nothing passes no gate */
	runs[0].samples = 0;
	g.latency = true;
	g.max_latency_ns = 3600000000000ULL;
	n = jtr_gate_check(&g, runs, 1, c, &failed);
	assert_int_equal(failed, 2);
	assert_false(c[0].measured || c[0].passed);
	assert_string_equal(jtr_gate_detail(&c[0], buf, sizeof(buf)), "nothing measured (no sample)");
}

static void test_run_of(void **state)
{
	struct jtr_hist h, lengths;
	struct jtr_olog log;
	struct jtr_gate_run r;

	(void)state;
	assert_int_equal(jtr_hist_init(&h, 0.01), 0);
	assert_int_equal(jtr_hist_init(&lengths, 0.01), 0);
	assert_int_equal(jtr_olog_init(&log, 4, 2), 0);
	for (int i = 0; i < 100; i++)
		jtr_hist_record(&h, 100);
	jtr_hist_record(&h, 5000);
	jtr_hist_record(&h, 9000);
	jtr_olog_add(&log, 1, 5000);
	jtr_hist_record(&lengths, 5000);
	jtr_olog_add(&log, 2, 9000);
	jtr_hist_record(&lengths, 9000);
	/* each outlier less one undisturbed sample, as result.json's lost_ns */
	r = jtr_gate_run_of(2, &h, &lengths, &log, 100, 1000000);
	assert_int_equal(r.cpu, 2);
	assert_int_equal(r.lost_ns, 5000 + 9000 - 2 * 100);
	assert_true(r.max_ns >= 9000 && r.max_ns <= 9090);	/* the histogram's error */
	assert_int_equal(r.samples, 102);
	assert_int_equal(r.duration_ns, 1000000);
	jtr_olog_free(&log);
	jtr_hist_free(&h);
	jtr_hist_free(&lengths);
}

/* junit_of - the JUnit document of @s (caller frees) */
static char *junit_of(const struct jtr_junit_suite *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_int_equal(jtr_junit_write(f, s), 0);
	fclose(f);
	return buf;
}

static void test_junit(void **state)
{
	struct jtr_junit_prop props[] = { { "command", "jtr wake --junit \"a&b\".xml" } };
	struct jtr_junit_case cases[] = {
		{ .classname = "jtr.wake", .name = "max-latency cpu 1", .time_s = 10.00049,
		  .failure_type = "max-latency",
		  .failure_message = "max-latency cpu 1: FAILED: max 1.25 ms > limit 100us",
		  .failure_text = "value: 1250000 ns\nlimit: 100us\ncauses: <none> & \x01",
		  .system_out = "CPU 1: ..." },
		{ .classname = "jtr.wake", .name = "max-lost cpu 1", .time_s = 10 },
	};
	struct jtr_junit_suite s = {
		.name = "jtr wake", .hostname = "h<1>", .timestamp = "2026-11-26T13:48:10+00:00",
		.time_s = 11.5, .props = props, .nprops = 1, .cases = cases, .ncases = 2,
	};
	char *x, stamp[40];

	(void)state;
	x = junit_of(&s);
	assert_non_null(strstr(x, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites "
				  "name=\"jtr wake\" tests=\"2\" failures=\"1\" errors=\"0\" "
				  "time=\"11.500\">"));
	assert_non_null(strstr(x, "<testsuite name=\"jtr wake\" tests=\"2\" failures=\"1\" "
				  "errors=\"0\" skipped=\"0\" time=\"11.500\" timestamp=\"2026-11-26T"
				  "13:48:10+00:00\" hostname=\"h&lt;1&gt;\">"));
	assert_non_null(strstr(x, "<property name=\"command\" value=\"jtr wake --junit "
				  "&quot;a&amp;b&quot;.xml\"/>"));
	/* at most three decimals: junit-10.xsd's SUREFIRE_TIME */
	assert_non_null(strstr(x, "<testcase classname=\"jtr.wake\" name=\"max-latency cpu 1\" "
				  "time=\"10.000\">"));
	assert_non_null(strstr(x, "<failure message=\"max-latency cpu 1: FAILED: max 1.25 ms "
				  "&gt; limit 100us\" type=\"max-latency\">value: 1250000 ns\n"
				  "limit: 100us\ncauses: &lt;none&gt; &amp; " FFFD "</failure>"));
	assert_non_null(strstr(x, "<system-out>CPU 1: ...</system-out>"));
	/* a passed case with nothing to say closes at once */
	assert_non_null(strstr(x, "<testcase classname=\"jtr.wake\" name=\"max-lost cpu 1\" "
				  "time=\"10.000\"/>"));
	assert_non_null(strstr(x, "</testsuite>\n</testsuites>\n"));
	free(x);

	/* no properties, no failures */
	cases[0].failure_type = NULL;
	s.nprops = 0;
	s.time_s = -1;
	x = junit_of(&s);
	assert_null(strstr(x, "<properties>"));
	assert_null(strstr(x, "<failure"));
	assert_non_null(strstr(x, "failures=\"0\""));
	assert_non_null(strstr(x, "time=\"0.000\""));
	free(x);

	assert_string_equal(jtr_junit_timestamp(0, stamp, sizeof(stamp)),
			    "1970-01-01T00:00:00+00:00");
	assert_string_equal(jtr_junit_timestamp(1795873690, stamp, sizeof(stamp)),
			    "2026-11-28T13:48:10+00:00");
}

static void test_json_section(void **state)
{
	struct jtr_gate g = { .latency = true, .max_latency_ns = 100000, .lost = false };
	struct jtr_gate_case c[2] = {
		{ .gate = "max-latency", .cpu = 1, .measured = true, .passed = false,
		  .value = 1250000, .limit = 100000, .duration_ns = 10 },
		{ .gate = "max-lost", .cpu = -1, .measured = false, .passed = false, .limit = 0.5 },
	};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct jtr_json j;

	(void)state;
	jtr_json_init(&j, f);
	jtr_json_obj_begin(&j, NULL);
	jtr_gate_json(&j, &g, "wake", c, 2, "not measured: \"why\"");
	jtr_json_obj_end(&j);
	assert_int_equal(jtr_json_finish(&j), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\"max_latency_ns\": 100000"));
	assert_non_null(strstr(buf, "\"max_lost_pct\": null"));
	assert_non_null(strstr(buf, "\"quantity\": \"wake\""));
	assert_non_null(strstr(buf, "\"passed\": false"));
	assert_non_null(strstr(buf, "\"value\": 1250000"));
	assert_non_null(strstr(buf, "\"unit\": \"ns\""));
	assert_non_null(strstr(buf, "\"duration_ns\": 10"));
	assert_non_null(strstr(buf, "\"cpu\": null"));
	assert_non_null(strstr(buf, "\"value\": null"));
	assert_non_null(strstr(buf, "\"limit\": 0.5"));
	assert_non_null(strstr(buf, "\"causes_missing\": \"not measured: \\\"why\\\"\""));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_run_of),
		cmocka_unit_test(test_junit),
		cmocka_unit_test(test_json_section),
	};

	return cmocka_run_group_tests_name("gate", tests, NULL, NULL);
}
