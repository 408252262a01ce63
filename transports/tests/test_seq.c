// SPDX-License-Identifier: GPL-2.0-only
/* test_seq.c - sequence accounting: loss, duplicates, reordering, tail loss. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "tp_seq.h"

static struct tp_seq s;

static void test_in_order(void **state)
{
	(void)state;
	tp_seq_init(&s);
	for (uint64_t q = 0; q < 100000; q++)
		assert_int_equal(tp_seq_note(&s, q), TP_SEQ_IN_ORDER);
	tp_seq_end(&s, 100000, true);
	assert_int_equal(s.received, 100000);
	assert_int_equal(s.lost + s.duplicates + s.reordered + s.stale, 0);
}

static void test_drop_every_k(void **state)
{
	(void)state;
	tp_seq_init(&s);
	/* what pub --drop-every 10 does: seq 9, 19, 29, ... never sent */
	for (uint64_t q = 0; q < 10000; q++)
		if ((q + 1) % 10)
			tp_seq_note(&s, q);
	tp_seq_end(&s, 10000, true);
	assert_int_equal(s.lost, 1000);
	assert_int_equal(s.received, 9000);
	assert_int_equal(s.reordered, 0);
}

static void test_reorder_and_dup(void **state)
{
	(void)state;
	tp_seq_init(&s);
	assert_int_equal(tp_seq_note(&s, 0), TP_SEQ_IN_ORDER);
	assert_int_equal(tp_seq_note(&s, 2), TP_SEQ_GAP);
	assert_int_equal(s.lost, 1);
	assert_int_equal(tp_seq_note(&s, 1), TP_SEQ_LATE);	/* not lost after all */
	assert_int_equal(s.lost, 0);
	assert_int_equal(s.reordered, 1);
	assert_int_equal(tp_seq_note(&s, 1), TP_SEQ_DUP);
	assert_int_equal(tp_seq_note(&s, 2), TP_SEQ_DUP);
	assert_int_equal(s.duplicates, 2);
	assert_int_equal(tp_seq_note(&s, 3), TP_SEQ_IN_ORDER);
	assert_int_equal(s.received, 4);
}

static void test_big_gap_and_stale(void **state)
{
	(void)state;
	tp_seq_init(&s);
	tp_seq_note(&s, 0);
	assert_int_equal(tp_seq_note(&s, 3 * TP_SEQ_WINDOW), TP_SEQ_GAP);
	assert_int_equal(s.lost, 3 * TP_SEQ_WINDOW - 1);
	/* older than the window: cannot tell late from duplicate */
	assert_int_equal(tp_seq_note(&s, 5), TP_SEQ_STALE);
	assert_int_equal(s.stale, 1);
	/* inside the window and never seen: late */
	assert_int_equal(tp_seq_note(&s, 3 * TP_SEQ_WINDOW - 1), TP_SEQ_LATE);
	assert_int_equal(s.lost, 3 * TP_SEQ_WINDOW - 2);
	/* the window slot reused after the gap was cleared: not a duplicate */
	assert_int_equal(tp_seq_note(&s, 3 * TP_SEQ_WINDOW - 2), TP_SEQ_LATE);
}

static void test_tail_head_loss(void **state)
{
	(void)state;
	tp_seq_init(&s);
	for (uint64_t q = 5; q < 50; q++)
		tp_seq_note(&s, q);
	tp_seq_end(&s, 60, false);	/* joined late: 0-4 are not counted */
	assert_int_equal(s.lost, 10);
	tp_seq_end(&s, 60, true);	/* there from the start: they are */
	assert_int_equal(s.lost, 15);
	tp_seq_init(&s);
	tp_seq_end(&s, 7, true);	/* nothing at all */
	assert_int_equal(s.lost, 7);
}

static void test_before_first(void **state)
{
	(void)state;
	tp_seq_init(&s);
	tp_seq_note(&s, 10);
	tp_seq_note(&s, 11);
	assert_int_equal(tp_seq_note(&s, 8), TP_SEQ_LATE);	/* 9 is now missing */
	assert_int_equal(s.lost, 1);
	assert_int_equal(s.first, 8);
	assert_int_equal(tp_seq_note(&s, 9), TP_SEQ_LATE);
	assert_int_equal(s.lost, 0);
	assert_int_equal(s.received, 4);
}

static void test_forged_jump_is_out_of_window(void **state)
{
	(void)state;
	tp_seq_init(&s);
	for (uint64_t q = 0; q < 1000; q++) {
		s.limit = tp_seq_limit_at(&s, q * 1000);	/* 1 us apart */
		assert_int_equal(tp_seq_note(&s, q), TP_SEQ_IN_ORDER);
	}
	/* one number far beyond what the sender can have issued: counted, no loss,
	 * and the real ones after it are still in order, not stale */
	s.limit = tp_seq_limit_at(&s, 1000 * 1000);
	assert_int_equal(tp_seq_note(&s, 1ULL << 63), TP_SEQ_OUT_OF_WINDOW);
	assert_int_equal(tp_seq_note(&s, UINT64_MAX), TP_SEQ_OUT_OF_WINDOW);
	assert_int_equal(s.out_of_window, 2);
	assert_int_equal(s.lost, 0);
	assert_int_equal(s.next, 1000);
	for (uint64_t q = 1000; q < 2000; q++)
		assert_int_equal(tp_seq_note(&s, q), TP_SEQ_IN_ORDER);
	assert_int_equal(s.received, 2000);
	assert_int_equal(s.stale + s.duplicates + s.reordered + s.lost, 0);
	/* a real gap inside the bound is loss, as before */
	assert_int_equal(tp_seq_note(&s, 2000 + TP_SEQ_JUMP_FLOOR / 2), TP_SEQ_GAP);
	assert_int_equal(s.lost, TP_SEQ_JUMP_FLOOR / 2);
}

static void test_limit_at(void **state)
{
	(void)state;
	tp_seq_init(&s);
	assert_true(s.limit == UINT64_MAX);
	/* before any number: from 0, 1M plus one per 8 ns since the start */
	assert_true(tp_seq_limit_at(&s, 0) == TP_SEQ_JUMP_FLOOR);
	assert_true(tp_seq_limit_at(&s, 8000000000ULL) == TP_SEQ_JUMP_FLOOR + 1000000000ULL);
	/* after: from the first number noted, which later arrivals do not move */
	tp_seq_note(&s, 5000);
	tp_seq_note(&s, 4999);
	assert_int_equal(s.first, 4999);
	assert_true(tp_seq_limit_at(&s, 800) == 5000 + TP_SEQ_JUMP_FLOOR + 100);
	/* no overflow near the top */
	tp_seq_init(&s);
	tp_seq_note(&s, UINT64_MAX - 5);
	assert_true(tp_seq_limit_at(&s, 1ULL << 40) == UINT64_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_order),
		cmocka_unit_test(test_drop_every_k),
		cmocka_unit_test(test_reorder_and_dup),
		cmocka_unit_test(test_big_gap_and_stale),
		cmocka_unit_test(test_tail_head_loss),
		cmocka_unit_test(test_before_first),
		cmocka_unit_test(test_forged_jump_is_out_of_window),
		cmocka_unit_test(test_limit_at),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
