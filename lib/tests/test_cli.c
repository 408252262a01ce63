// SPDX-License-Identifier: GPL-2.0-only
/* test_cli.c - strict parsers: what they accept, refuse, and say. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <limits.h>
#include <errno.h>
#include <cmocka.h>

#include "jtr_cli.h"

/* refused - the parse failed and the message quotes the bad value */
#define assert_refused(call, bad, form) do {				\
	struct jtr_err e_;						\
	jtr_err_clear(&e_);						\
	(void)e_;							\
	int rc_ = (call);						\
	if (rc_ >= 0)							\
		fail_msg("'%s' was accepted", bad);			\
	if (!strstr(e_.msg, "'" bad "'"))				\
		fail_msg("message does not quote '%s': %s", bad, e_.msg); \
	if (form && !strstr(e_.msg, form))				\
		fail_msg("message lacks '%s': %s", (const char *)form, e_.msg); \
} while (0)

static void test_int(void **state)
{
	long long v;

	(void)state;
	assert_int_equal(jtr_parse_int("42", 0, 100, &v, NULL), 0);
	assert_int_equal(v, 42);
	assert_int_equal(jtr_parse_int("-1", -1, 100, &v, NULL), 0);
	assert_int_equal(v, -1);
	assert_int_equal(jtr_parse_int("0x1f", 0, 100, &v, NULL), 0);
	assert_int_equal(v, 31);
	assert_int_equal(jtr_parse_int("0X10", 0, 100, &v, NULL), 0);
	assert_int_equal(v, 16);
	assert_int_equal(jtr_parse_int("-9223372036854775808", LLONG_MIN, 0, &v, NULL), 0);
	assert_true(v == LLONG_MIN);
	assert_refused(jtr_parse_int("abc", 0, 100, &v, &e_), "abc", "0x");
	assert_refused(jtr_parse_int("12abc", 0, 100, &v, &e_), "12abc", "integer");
	assert_refused(jtr_parse_int("", 0, 100, &v, &e_), "", "integer");
	assert_refused(jtr_parse_int(" 5", 0, 100, &v, &e_), " 5", "integer");
	assert_refused(jtr_parse_int("0x", 0, 100, &v, &e_), "0x", "integer");
	assert_refused(jtr_parse_int("101", 0, 100, &v, &e_), "101", "0..100");
	assert_refused(jtr_parse_int("99999999999999999999", 0, 100, &v, &e_),
		       "99999999999999999999", "range");
	assert_refused(jtr_parse_int("9223372036854775808", 0, LLONG_MAX, &v, &e_),
		       "9223372036854775808", "range");
	assert_int_equal(jtr_parse_int(NULL, 0, 1, &v, NULL), -EINVAL);
}

static void test_size(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(jtr_parse_size("4096", 4096, 1ULL << 30, &v, NULL), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(jtr_parse_size("4K", 4096, 1ULL << 30, &v, NULL), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(jtr_parse_size("8m", 4096, 1ULL << 30, &v, NULL), 0);
	assert_int_equal(v, 8ULL << 20);
	assert_int_equal(jtr_parse_size("1G", 4096, 1ULL << 30, &v, NULL), 0);
	assert_int_equal(v, 1ULL << 30);
	assert_refused(jtr_parse_size("2G", 4096, 1ULL << 30, &v, &e_), "2G", "range");
	assert_refused(jtr_parse_size("3K", 4096, 1ULL << 30, &v, &e_), "3K", "4096..");
	assert_refused(jtr_parse_size("8MB", 4096, 1ULL << 30, &v, &e_), "8MB", "64K");
	assert_refused(jtr_parse_size("", 1, 10, &v, &e_), "", "size");
	assert_refused(jtr_parse_size("0x1000", 1, 1ULL << 30, &v, &e_), "0x1000", "size");
}

static void test_count(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(jtr_parse_count("2000000", 1, UINT64_MAX, &v, NULL), 0);
	assert_int_equal(v, 2000000);
	assert_int_equal(jtr_parse_count("2M", 1, UINT64_MAX, &v, NULL), 0);
	assert_int_equal(v, 2000000);
	assert_int_equal(jtr_parse_count("500K", 1, UINT64_MAX, &v, NULL), 0);
	assert_int_equal(v, 500000);
	assert_int_equal(jtr_parse_count("1g", 1, UINT64_MAX, &v, NULL), 0);
	assert_int_equal(v, 1000000000);
	assert_int_equal(jtr_parse_count("007", 1, UINT64_MAX, &v, NULL), 0);
	assert_int_equal(v, 7);
	assert_refused(jtr_parse_count("0x100", 1, UINT64_MAX, &v, &e_), "0x100", "whole number");
	assert_refused(jtr_parse_count("1.5M", 1, UINT64_MAX, &v, &e_), "1.5M", "count");
	assert_refused(jtr_parse_count("+5", 1, 100, &v, &e_), "+5", "count");
	assert_refused(jtr_parse_count("5 ", 1, 100, &v, &e_), "5 ", "count");
	assert_refused(jtr_parse_count("-5", 1, 100, &v, &e_), "-5", "2M");
	assert_refused(jtr_parse_count("0", 1, 100, &v, &e_), "0", "1..100");
	assert_refused(jtr_parse_count("1e99", 1, 100, &v, &e_), "1e99", "count");
	assert_refused(jtr_parse_count("2MB", 1, 100, &v, &e_), "2MB", "count");
	assert_refused(jtr_parse_count("20000000000000G", 1, UINT64_MAX, &v, &e_),
		       "20000000000000G", "range");
}

/* dur - jtr_parse_duration_ns with no bounds */
static int dur(const char *s, uint64_t *v, struct jtr_err *e)
{
	return jtr_parse_duration_ns(s, 0, UINT64_MAX, v, e);
}

static void test_duration(void **state)
{
	uint64_t v;
	const uint64_t S = JTR_NS_PER_S;

	(void)state;
	assert_int_equal(dur("10s", &v, NULL), 0);
	assert_int_equal(v, 10 * S);
	assert_int_equal(dur("10", &v, NULL), 0);		/* bare: seconds */
	assert_int_equal(v, 10 * S);
	assert_int_equal(dur("0.5", &v, NULL), 0);
	assert_int_equal(v, S / 2);
	assert_int_equal(dur("898ns", &v, NULL), 0);
	assert_int_equal(v, 898);
	assert_int_equal(dur("500ms", &v, NULL), 0);
	assert_int_equal(v, 500000000);
	assert_int_equal(dur("1.5ms", &v, NULL), 0);
	assert_int_equal(v, 1500000);
	assert_int_equal(dur("0.000000001s", &v, NULL), 0);
	assert_int_equal(v, 1);
	assert_int_equal(dur("10us", &v, NULL), 0);
	assert_int_equal(v, 10000);
	assert_int_equal(dur("2m", &v, NULL), 0);
	assert_int_equal(v, 120 * S);
	assert_int_equal(dur("1h", &v, NULL), 0);
	assert_int_equal(v, 3600 * S);
	assert_int_equal(dur("0", &v, NULL), 0);
	assert_int_equal(v, 0);
	/* exact to the ns, a part of a ns dropped, however many digits */
	assert_int_equal(dur("1.5ns", &v, NULL), 0);
	assert_int_equal(v, 1);
	assert_int_equal(dur("0.1h", &v, NULL), 0);
	assert_int_equal(v, 360 * S);
	assert_int_equal(dur("0.00000000000099h", &v, NULL), 0);	/* 3.564 ns */
	assert_int_equal(v, 3);
	assert_int_equal(dur("0.333333333333333333333333333333m", &v, NULL), 0);
	assert_int_equal(v, 19999999999);
	assert_int_equal(dur("18446744073709551615ns", &v, NULL), 0);
	assert_int_equal(v, UINT64_MAX);
	assert_refused(dur("18446744073709551616ns", &v, &e_), "18446744073709551616ns", "range");
	assert_refused(dur("1e99", &v, &e_), "1e99", "10us");
	assert_refused(dur("abc", &v, &e_), "abc", "bare number is in seconds");
	assert_refused(dur("10 s", &v, &e_), "10 s", "duration");
	assert_refused(dur(" 10s", &v, &e_), " 10s", "duration");
	assert_refused(dur("-1s", &v, &e_), "-1s", "duration");
	assert_refused(dur("+1s", &v, &e_), "+1s", "duration");
	assert_refused(dur("5x", &v, &e_), "5x", "duration");
	assert_refused(dur("10S", &v, &e_), "10S", "duration");
	assert_refused(dur("10sec", &v, &e_), "10sec", "duration");
	assert_refused(dur("1.", &v, &e_), "1.", "duration");
	assert_refused(dur(".5s", &v, &e_), ".5s", "duration");
	assert_refused(dur("ms", &v, &e_), "ms", "duration");
	assert_refused(dur("", &v, &e_), "", "duration");
	assert_refused(dur("inf", &v, &e_), "inf", "duration");
	assert_refused(dur("nan", &v, &e_), "nan", "duration");
	assert_refused(dur("0x10s", &v, &e_), "0x10s", "duration");
	assert_refused(dur("99999999999h", &v, &e_), "99999999999h", "range");
	assert_int_equal(jtr_parse_duration_ns(NULL, 0, 1, &v, NULL), -EINVAL);
	/* bounds are shown in units */
	assert_refused(jtr_parse_duration_ns("0", JTR_NS_PER_MS, 30 * 24 * 3600 * S, &v, &e_), "0",
		       "expected 1ms to 720h");
	assert_refused(jtr_parse_duration_ns("2s", 0, 1500 * JTR_NS_PER_US, &v, &e_), "2s",
		       "expected 0 to 1500us");
}

static void test_duration_legacy(void **state)
{
	char w[512];
	uint64_t v;
	bool bare;

	(void)state;
	/* a bare non-zero number is in the old unit, and says so */
	assert_int_equal(jtr_parse_duration_legacy_ns("898", 1, 0, UINT64_MAX, &v, &bare, NULL), 0);
	assert_int_equal(v, 898);
	assert_true(bare);
	assert_int_equal(jtr_parse_duration_legacy_ns("1.5", JTR_NS_PER_MS, 0, UINT64_MAX, &v, &bare,
						      NULL), 0);
	assert_int_equal(v, 1500000);
	assert_true(bare);
	/* 0 needs no unit; a unit is read as everywhere else */
	assert_int_equal(jtr_parse_duration_legacy_ns("0", 1, 0, UINT64_MAX, &v, &bare, NULL), 0);
	assert_int_equal(v, 0);
	assert_false(bare);
	assert_int_equal(jtr_parse_duration_legacy_ns("0.0", JTR_NS_PER_MS, 0, UINT64_MAX, &v, &bare,
						      NULL), 0);
	assert_false(bare);
	assert_int_equal(jtr_parse_duration_legacy_ns("2s", 1, 0, UINT64_MAX, &v, &bare, NULL), 0);
	assert_int_equal(v, 2 * JTR_NS_PER_S);
	assert_false(bare);
	assert_refused(jtr_parse_duration_legacy_ns("1e99", 1, 0, UINT64_MAX, &v, &bare, &e_),
		       "1e99", "(a bare number here is in ns)");
	assert_refused(jtr_parse_duration_legacy_ns("x", JTR_NS_PER_MS, 0, UINT64_MAX, &v, &bare,
						    &e_), "x", "(a bare number here is in ms)");
	assert_false(bare);
	/* the old unit applies to the bounds too */
	assert_refused(jtr_parse_duration_legacy_ns("11", JTR_NS_PER_MS, 0, 10 * JTR_NS_PER_MS, &v,
						     &bare, &e_), "11", "expected 0 to 10ms");
	assert_string_equal(jtr_duration_legacy_warning(w, sizeof(w), "-p", "898", 1),
			    "-p 898: a bare number here still means ns (as before); write 898ns "
			    "\xe2\x80\x94 a bare duration is in seconds everywhere else in jtr, and "
			    "will be here in a later version");
	jtr_duration_legacy_warning(w, sizeof(w), "--pace", "2", JTR_NS_PER_MS);
	assert_non_null(strstr(w, "--pace 2: a bare number here still means ms (as before); "
				  "write 2ms"));
}

static void test_format_duration(void **state)
{
	char b[32];

	(void)state;
	assert_string_equal(jtr_format_duration(0, b, sizeof(b)), "0");
	assert_string_equal(jtr_format_duration(898, b, sizeof(b)), "898ns");
	assert_string_equal(jtr_format_duration(10000, b, sizeof(b)), "10us");
	assert_string_equal(jtr_format_duration(1500000, b, sizeof(b)), "1500us");
	assert_string_equal(jtr_format_duration(10 * JTR_NS_PER_S, b, sizeof(b)), "10s");
	assert_string_equal(jtr_format_duration(90 * JTR_NS_PER_S, b, sizeof(b)), "90s");
	assert_string_equal(jtr_format_duration(120 * JTR_NS_PER_S, b, sizeof(b)), "2m");
	assert_string_equal(jtr_format_duration(7200 * JTR_NS_PER_S, b, sizeof(b)), "2h");
}

/* the people's format, as jtrpy.units.fmt_ns writes the summaries: a
 * progress line and the summary after it say the same */
static void test_fmt_ns(void **state)
{
	char b[32];

	(void)state;
	assert_string_equal(jtr_fmt_ns(727, b, sizeof(b)), "727 ns");
	assert_string_equal(jtr_fmt_ns(11149, b, sizeof(b)), "11.1 us");
	assert_string_equal(jtr_fmt_ns(8225000, b, sizeof(b)), "8.22 ms");
	assert_string_equal(jtr_fmt_ns(12140000, b, sizeof(b)), "12.14 ms");
	assert_string_equal(jtr_fmt_ns(1200000000, b, sizeof(b)), "1.20 s");
}

static void test_percent(void **state)
{
	double v;

	(void)state;
	assert_int_equal(jtr_parse_percent("1", 0, 50, &v, NULL), 0);
	assert_true(v == 1.0);
	assert_int_equal(jtr_parse_percent("5%", 0, 50, &v, NULL), 0);
	assert_true(v == 5.0);
	assert_int_equal(jtr_parse_percent("0.5", 0, 50, &v, NULL), 0);
	assert_true(v == 0.5);
	assert_int_equal(jtr_parse_percent("0.01%", 0.01, 50, &v, NULL), 0);
	assert_true(v == 0.01);
	assert_refused(jtr_parse_percent("nan", 0, 50, &v, &e_), "nan", "percentage");
	assert_refused(jtr_parse_percent("1e3", 0, 5000, &v, &e_), "1e3", "2.5%");
	assert_refused(jtr_parse_percent("0x10", 0, 50, &v, &e_), "0x10", "percentage");
	assert_refused(jtr_parse_percent("-1", 0, 50, &v, &e_), "-1", "percentage");
	assert_refused(jtr_parse_percent("5 %", 0, 50, &v, &e_), "5 %", "percentage");
	assert_refused(jtr_parse_percent("5%%", 0, 50, &v, &e_), "5%%", "percentage");
	assert_refused(jtr_parse_percent("%", 0, 50, &v, &e_), "%", "percentage");
	assert_refused(jtr_parse_percent("", 0, 50, &v, &e_), "", "percentage");
	assert_refused(jtr_parse_percent(".5", 0, 50, &v, &e_), ".5", "percentage");
	assert_refused(jtr_parse_percent("51", 0, 50, &v, &e_), "51", "0-50");
	assert_refused(jtr_parse_percent("90", 0.01, 50, &v, &e_), "90", "0.01-50");
}

static void test_cpulist(void **state)
{
	cpu_set_t s;
	char buf[64];

	(void)state;
	assert_int_equal(jtr_parse_cpulist("1", &s, NULL), 0);
	assert_int_equal(CPU_COUNT(&s), 1);
	assert_true(CPU_ISSET(1, &s));
	assert_int_equal(jtr_parse_cpulist("1,3-5", &s, NULL), 0);
	assert_int_equal(CPU_COUNT(&s), 4);
	assert_true(CPU_ISSET(3, &s) && CPU_ISSET(4, &s) && CPU_ISSET(5, &s) && !CPU_ISSET(2, &s));
	assert_int_equal(jtr_format_cpulist(&s, buf, sizeof(buf)), 5);
	assert_string_equal(buf, "1,3-5");
	assert_int_equal(jtr_parse_cpulist("0-3,6,8-9", &s, NULL), 0);
	jtr_format_cpulist(&s, buf, sizeof(buf));
	assert_string_equal(buf, "0-3,6,8-9");
	CPU_ZERO(&s);
	jtr_format_cpulist(&s, buf, sizeof(buf));
	assert_string_equal(buf, "");
	assert_int_equal(jtr_format_cpulist(&s, buf, 0), -ENOSPC);
	assert_refused(jtr_parse_cpulist("abc", &s, &e_), "abc", "1,3-5");
	assert_refused(jtr_parse_cpulist("3-1", &s, &e_), "3-1", "ends before");
	assert_refused(jtr_parse_cpulist("1,", &s, &e_), "1,", "CPU list");
	assert_refused(jtr_parse_cpulist("-1", &s, &e_), "-1", "CPU list");
	assert_refused(jtr_parse_cpulist("", &s, &e_), "", "CPU list");
	assert_refused(jtr_parse_cpulist("5000", &s, &e_), "5000", "CPUs 0-");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_int),
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_size),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_duration_legacy),
		cmocka_unit_test(test_format_duration),
		cmocka_unit_test(test_fmt_ns),
		cmocka_unit_test(test_percent),
		cmocka_unit_test(test_cpulist),
	};

	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
