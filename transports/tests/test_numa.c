// SPDX-License-Identifier: GPL-2.0-only
/* test_numa.c - NUMA placement: real mbind/get_mempolicy calls on this
 * machine's nodes; the second-node cases run where there is a second node. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "tp_numa.h"

#define LEN (4u << 20)

static void test_cpu_zero_has_a_node(void **state)
{
	(void)state;
	assert_true(tp_numa_nodes() >= 1);
	assert_true(tp_numa_node_of_cpu(0) >= 0);
	assert_int_equal(tp_numa_node_of_cpu(-1), -1);
}

static void test_place_on_own_node_and_read_it_back(void **state)
{
	struct jtr_err e;
	int node = tp_numa_node_of_cpu(0);
	char *m = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	(void)state;
	assert_true(m != MAP_FAILED);
	memset(m, 1, LEN);				/* pages exist before the move */
	assert_int_equal(tp_numa_place(m + 100, LEN - 100, node, &e), 0);
	assert_int_equal(tp_numa_node_of_addr(m), node);
	assert_int_equal(tp_numa_node_of_addr(m + LEN - 1), node);
	munmap(m, LEN);
}

static void test_bad_node_is_refused(void **state)
{
	struct jtr_err e;
	char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	(void)state;
	jtr_err_clear(&e);
	assert_true(tp_numa_place(m, 4096, 100000, &e) < 0);
	assert_non_null(strstr(e.msg, "100000"));
	munmap(m, 4096);
}

static void test_other_node(void **state)
{
	struct jtr_err e;
	int other = tp_numa_other_node(0);
	char *m;

	(void)state;
	if (tp_numa_nodes() == 1) {
		assert_int_equal(other, -1);
		print_message("one NUMA node here: moving to a second node is not tested\n");
		return;
	}
	assert_true(other > 0);
	m = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	memset(m, 1, LEN);
	assert_int_equal(tp_numa_place(m, LEN, other, &e), 0);
	assert_int_equal(tp_numa_node_of_addr(m), other);
	munmap(m, LEN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu_zero_has_a_node),
		cmocka_unit_test(test_place_on_own_node_and_read_it_back),
		cmocka_unit_test(test_bad_node_is_refused),
		cmocka_unit_test(test_other_node),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
