// SPDX-License-Identifier: GPL-2.0-only
/* test_json.c - the JSON writer: escaping, structure, numbers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <errno.h>
#include <cmocka.h>

#include "jtr_json.h"

/* escaped - jtr_json_escape(@s) as a string (caller frees) */
static char *escaped(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	jtr_json_escape(f, s);
	fclose(f);
	return buf;
}

#define assert_escape(in, want) do {			\
	char *got_ = escaped(in);			\
	assert_string_equal(got_, want);		\
	free(got_);					\
} while (0)

static void test_escape(void **state)
{
	(void)state;
	assert_escape("plain", "\"plain\"");
	assert_escape("", "\"\"");
	assert_escape("a\"b", "\"a\\\"b\"");
	assert_escape("back\\slash", "\"back\\\\slash\"");
	assert_escape("tab\there\nnew\rcr", "\"tab\\there\\nnew\\rcr\"");
	assert_escape("\b\f", "\"\\b\\f\"");
	assert_escape("\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"");
	/* valid UTF-8 passes through: é, €, 😀 */
	assert_escape("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
	/* invalid bytes become \u00XX: stray continuation, truncated, overlong, surrogate */
	assert_escape("a\x80z", "\"a\\u0080z\"");
	assert_escape("\xc3", "\"\\u00c3\"");
	assert_escape("\xc0\xaf", "\"\\u00c0\\u00af\"");
	assert_escape("\xed\xa0\x80", "\"\\u00ed\\u00a0\\u0080\"");
	assert_escape("\xff", "\"\\u00ff\"");
}

/* doc - run @fn on a writer and return the text */
static char *doc(void (*fn)(struct jtr_json *j), int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct jtr_json j;

	jtr_json_init(&j, f);
	fn(&j);
	*rc = jtr_json_finish(&j);
	fclose(f);
	{
		char *out = strdup(buf);

		free(buf);
		return out;
	}
}

static void build_nested(struct jtr_json *j)
{
	jtr_json_obj_begin(j, NULL);
	jtr_json_str(j, "s", "x\"y");
	jtr_json_int(j, "i", -5);
	jtr_json_uint(j, "u", 18446744073709551615ULL);
	jtr_json_bool(j, "t", true);
	jtr_json_null(j, "n");
	jtr_json_str(j, "nullstr", NULL);
	jtr_json_arr_begin(j, "a");
	jtr_json_arr_begin_inline(j, NULL);
	jtr_json_uint(j, NULL, 1);
	jtr_json_uint(j, NULL, 2);
	jtr_json_arr_end(j);
	jtr_json_obj_begin(j, NULL);
	jtr_json_obj_end(j);
	jtr_json_arr_end(j);
	jtr_json_arr_begin(j, "empty");
	jtr_json_arr_end(j);
	jtr_json_obj_end(j);
}

static void test_structure(void **state)
{
	int rc;
	char *s = doc(build_nested, &rc);

	(void)state;
	assert_int_equal(rc, 0);
	assert_string_equal(s,
		"{\n"
		"  \"s\": \"x\\\"y\",\n"
		"  \"i\": -5,\n"
		"  \"u\": 18446744073709551615,\n"
		"  \"t\": true,\n"
		"  \"n\": null,\n"
		"  \"nullstr\": null,\n"
		"  \"a\": [\n"
		"    [1, 2],\n"
		"    {}\n"
		"  ],\n"
		"  \"empty\": []\n"
		"}\n");
	free(s);
}

static void build_numbers(struct jtr_json *j)
{
	jtr_json_arr_begin_inline(j, NULL);
	jtr_json_double(j, NULL, 0.1);
	jtr_json_double(j, NULL, 2596122000.5);
	jtr_json_double(j, NULL, 1e-300);
	jtr_json_double(j, NULL, 1.0 / 3.0);
	jtr_json_double(j, NULL, INFINITY);
	jtr_json_double(j, NULL, NAN);
	jtr_json_fixed(j, NULL, 77.3404, 3);
	jtr_json_fixed(j, NULL, -INFINITY, 3);
	jtr_json_arr_end(j);
}

static void test_numbers(void **state)
{
	int rc;
	char *s = doc(build_numbers, &rc);
	double third;

	(void)state;
	assert_int_equal(rc, 0);
	assert_non_null(strstr(s, "[0.1, 2596122000.5, 1e-300, "));
	assert_non_null(strstr(s, ", null, null, 77.340, null]"));
	/* the shortest form still reads back to the same double */
	sscanf(strstr(s, "1e-300, ") + 8, "%lf", &third);
	assert_true(third == 1.0 / 3.0);
	free(s);
}

static void build_unbalanced(struct jtr_json *j)
{
	jtr_json_obj_begin(j, NULL);
	jtr_json_arr_begin(j, "x");
	jtr_json_obj_end(j);
}

static void build_too_deep(struct jtr_json *j)
{
	for (int i = 0; i < JTR_JSON_MAX_DEPTH + 2; i++)
		jtr_json_arr_begin(j, NULL);
}

static void test_misuse(void **state)
{
	int rc;
	char *s;

	(void)state;
	s = doc(build_unbalanced, &rc);
	assert_int_equal(rc, -EINVAL);
	free(s);
	s = doc(build_too_deep, &rc);
	assert_int_equal(rc, -EINVAL);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_structure),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_misuse),
	};

	return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
