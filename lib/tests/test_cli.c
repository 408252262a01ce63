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
	assert_int_equal(jtr_parse_count("0x100", 1, UINT64_MAX, &v, NULL), 0);
	assert_int_equal(v, 256);
	assert_refused(jtr_parse_count("-5", 1, 100, &v, &e_), "-5", "2M");
	assert_refused(jtr_parse_count("0", 1, 100, &v, &e_), "0", "1..100");
	assert_refused(jtr_parse_count("1e99", 1, 100, &v, &e_), "1e99", "count");
	assert_refused(jtr_parse_count("2MB", 1, 100, &v, &e_), "2MB", "count");
	assert_refused(jtr_parse_count("20000000000000G", 1, UINT64_MAX, &v, &e_),
		       "20000000000000G", "range");
}

static void test_duration(void **state)
{
	uint64_t v;
	const uint64_t S = JTR_NS_PER_S;

	(void)state;
	assert_int_equal(jtr_parse_duration_ns("10s", S, 0, UINT64_MAX, &v, NULL), 0);
	assert_int_equal(v, 10 * S);
	assert_int_equal(jtr_parse_duration_ns("10", S, 0, UINT64_MAX, &v, NULL), 0);
	assert_int_equal(v, 10 * S);
	assert_int_equal(jtr_parse_duration_ns("898", 1, 0, UINT64_MAX, &v, NULL), 0);
	assert_int_equal(v, 898);
	assert_int_equal(jtr_parse_duration_ns("500ms", S, 0, UINT64_MAX, &v, NULL), 0);
	assert_int_equal(v, 500000000);
	assert_int_equal(jtr_parse_duration_ns("1.5ms", 1, 0, UINT64_MAX, &v, NULL), 0);
	assert_int_equal(v, 1500000);
	assert_int_equal(jtr_parse_duration_ns("0.000000001s", 1, 0, UINT64_MAX, &v, NULL), 0);
	assert_int_equal(v, 1);
	assert_int_equal(jtr_parse_duration_ns("10us", 1, 0, UINT64_MAX, &v, NULL), 0);
	assert_int_equal(v, 10000);
	assert_int_equal(jtr_parse_duration_ns("2m", S, 0, UINT64_MAX, &v, NULL), 0);
	assert_int_equal(v, 120 * S);
	assert_int_equal(jtr_parse_duration_ns("1h", S, 0, UINT64_MAX, &v, NULL), 0);
	assert_int_equal(v, 3600 * S);
	assert_refused(jtr_parse_duration_ns("1e99", 1, 0, UINT64_MAX, &v, &e_), "1e99", "10us");
	assert_refused(jtr_parse_duration_ns("10 s", S, 0, UINT64_MAX, &v, &e_), "10 s", "duration");
	assert_refused(jtr_parse_duration_ns("-1s", S, 0, UINT64_MAX, &v, &e_), "-1s", "duration");
	assert_refused(jtr_parse_duration_ns("5x", S, 0, UINT64_MAX, &v, &e_), "5x", "duration");
	assert_refused(jtr_parse_duration_ns("1.", S, 0, UINT64_MAX, &v, &e_), "1.", "duration");
	assert_refused(jtr_parse_duration_ns("inf", S, 0, UINT64_MAX, &v, &e_), "inf", "duration");
	assert_refused(jtr_parse_duration_ns("99999999999h", S, 0, UINT64_MAX, &v, &e_),
		       "99999999999h", "range");
	assert_refused(jtr_parse_duration_ns("0", S, 1000000, UINT64_MAX, &v, &e_), "0", "range");
}

static void test_double(void **state)
{
	double v;

	(void)state;
	assert_int_equal(jtr_parse_double("1", 0, 50, &v, NULL), 0);
	assert_true(v == 1.0);
	assert_int_equal(jtr_parse_double("0.5", 0, 50, &v, NULL), 0);
	assert_true(v == 0.5);
	assert_refused(jtr_parse_double("nan", 0, 50, &v, &e_), "nan", "decimal");
	assert_refused(jtr_parse_double("1e3", 0, 5000, &v, &e_), "1e3", "decimal");
	assert_refused(jtr_parse_double("0x10", 0, 50, &v, &e_), "0x10", "decimal");
	assert_refused(jtr_parse_double("51", 0, 50, &v, &e_), "51", "range");
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
		cmocka_unit_test(test_double),
		cmocka_unit_test(test_cpulist),
	};

	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
