// SPDX-License-Identifier: GPL-2.0-only
/* test_ipcq.c - the mutex-guarded batch queue: layout, index math, the
 * low-water mark, 1-to-N, and batches moved intact between threads with
 * both kinds of waiting. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <cmocka.h>

#include "tp_ipcq.h"

/* new_queue - a queue in private memory */
static struct tp_ipcq *new_queue(enum tp_ipcq_kind kind, uint32_t slots, uint32_t slot_bytes,
				 uint32_t readers, uint32_t low_water)
{
	size_t n = tp_ipcq_size(slots, slot_bytes, readers);
	void *m;

	assert_true(n > 0);
	m = aligned_alloc(TP_IPCQ_LINE, (n + TP_IPCQ_LINE - 1) / TP_IPCQ_LINE * TP_IPCQ_LINE);
	assert_non_null(m);
	memset(m, 0xa5, n);	/* init must not rely on zeroed memory */
	assert_int_equal(tp_ipcq_init(m, n, kind, slots, slot_bytes, readers, low_water), 0);
	return m;
}

static void test_layout(void **state)
{
	struct tp_ipcq *q;
	unsigned char *s0, *s1;

	(void)state;
	assert_int_equal(tp_ipcq_size(3, 64, 1), 0);	/* not a power of two */
	assert_int_equal(tp_ipcq_size(1, 64, 1), 0);
	assert_int_equal(tp_ipcq_size(8, 0, 1), 0);
	assert_int_equal(tp_ipcq_size(8, 64, 0), 0);
	assert_int_equal(tp_ipcq_size(8, 64, TP_IPCQ_MAX_READERS + 1), 0);
	assert_int_equal(offsetof(struct tp_ipcq, rd) % TP_IPCQ_LINE, 0);
	assert_int_equal(sizeof(struct tp_ipcq_rdstate), TP_IPCQ_LINE);
	q = new_queue(TP_IPCQ_MUTEX, 8, 100, 1, 4);
	assert_int_equal(tp_ipcq_init(q, q->size, TP_IPCQ_MUTEX, 8, 100, 1, 8), -EINVAL);
	assert_int_equal(tp_ipcq_init(q, q->size - 1, TP_IPCQ_MUTEX, 8, 100, 1, 4), -EINVAL);
	assert_int_equal(tp_ipcq_init(q, q->size, TP_IPCQ_MUTEX, 8, 100, 1, 4), 0);
	assert_int_equal(q->stride % 64, 0);
	assert_true(q->stride >= 100 + 8);
	/* slots are stride apart, wrap at 8, and the last ends inside the queue */
	s0 = tp_ipcq_slot(q, 0);
	s1 = tp_ipcq_slot(q, 1);
	assert_int_equal(s1 - s0, q->stride);
	assert_ptr_equal(tp_ipcq_slot(q, 8), s0);
	assert_ptr_equal(tp_ipcq_slot(q, (1ULL << 40) + 9), s1);
	assert_true(tp_ipcq_slot(q, 7) + 100 <= (unsigned char *)q + q->size);
	assert_int_equal((uintptr_t)(s0 - 8) % 8, 0);
	tp_ipcq_destroy(q);
	free(q);
}

static void test_used_full_low_water(void **state)
{
	struct tp_ipcq *q = new_queue(TP_IPCQ_MUTEX, 8, 16, 3, 2);

	(void)state;
	assert_int_equal(tp_ipcq_used(q), 0);
	assert_false(tp_ipcq_full(q));
	/* the slowest of three readers decides */
	q->head = 1000;
	q->rd[0].tail = 999;
	q->rd[1].tail = 992;
	q->rd[2].tail = 997;
	assert_int_equal(tp_ipcq_min_tail(q), 992);
	assert_int_equal(tp_ipcq_used(q), 8);
	assert_true(tp_ipcq_full(q));
	assert_false(tp_ipcq_drained(q));
	q->rd[1].tail = 998;
	assert_int_equal(tp_ipcq_used(q), 3);
	assert_false(tp_ipcq_full(q));
	assert_false(tp_ipcq_drained(q));	/* 3 > low water 2 */
	q->rd[2].tail = 998;
	assert_true(tp_ipcq_drained(q));	/* 2 <= 2 */
	tp_ipcq_destroy(q);
	free(q);
}

/* the whole single-threaded protocol, 1-to-2: order, back-pressure, close */
static void test_one_to_two(void **state)
{
	struct tp_ipcq *q = new_queue(TP_IPCQ_MUTEX, 4, 16, 2, 1);
	struct tp_ipcq_end w, r[2];
	uint32_t stop = 0;
	unsigned char *s;
	const unsigned char *rs;
	uint64_t len, v;

	(void)state;
	assert_int_equal(tp_ipcq_end_open(&w, q, -1, -1, -1, NULL, -1, &stop), 0);
	assert_int_equal(tp_ipcq_end_open(&r[0], q, 0, -1, -1, NULL, -1, &stop), 0);
	assert_int_equal(tp_ipcq_end_open(&r[1], q, 1, -1, -1, NULL, -1, &stop), 0);
	assert_int_equal(tp_ipcq_end_open(&r[1], q, 2, -1, -1, NULL, -1, &stop), -EINVAL);
	for (v = 0; v < 4; v++) {
		assert_int_equal(tp_ipcq_reserve(&w, &s), 0);
		memcpy(s, &v, sizeof(v));
		tp_ipcq_publish(&w, sizeof(v));
	}
	/* full: with stop set the writer gives up instead of waiting forever */
	stop = 1;
	assert_int_equal(tp_ipcq_reserve(&w, &s), -ECANCELED);
	assert_int_equal(w.waits, 0);	/* it gave up without waiting */
	stop = 0;
	/* reader 0 drains everything; reader 1 still holds all four slots */
	for (v = 0; v < 4; v++) {
		assert_int_equal(tp_ipcq_peek(&r[0], &rs, &len), 0);
		assert_int_equal(len, sizeof(v));
		assert_memory_equal(rs, &v, sizeof(v));
		tp_ipcq_release(&r[0]);
	}
	assert_true(tp_ipcq_full(q));
	tp_ipcq_peek(&r[1], &rs, &len);
	tp_ipcq_release(&r[1]);
	assert_false(tp_ipcq_full(q));
	assert_int_equal(tp_ipcq_reserve(&w, &s), 0);
	assert_ptr_equal(s, tp_ipcq_slot(q, 0));	/* batch 4 reuses slot 0 */
	v = 4;
	memcpy(s, &v, sizeof(v));
	tp_ipcq_publish(&w, sizeof(v));
	tp_ipcq_close(&w);
	/* closed: each reader still gets what is left, then end of stream */
	assert_int_equal(tp_ipcq_peek(&r[0], &rs, &len), 0);
	assert_memory_equal(rs, &v, sizeof(v));
	tp_ipcq_release(&r[0]);
	assert_int_equal(tp_ipcq_peek(&r[0], &rs, &len), -EPIPE);
	for (uint64_t want = 1; want <= 4; want++) {
		assert_int_equal(tp_ipcq_peek(&r[1], &rs, &len), 0);
		assert_memory_equal(rs, &want, sizeof(want));
		tp_ipcq_release(&r[1]);
	}
	assert_int_equal(tp_ipcq_peek(&r[1], &rs, &len), -EPIPE);
	tp_ipcq_destroy(q);
	free(q);
}

#define N_THREADED 20000
#define READERS 3

struct rd_arg {
	struct tp_ipcq_end e;
	uint64_t got, bad;
};

/* reader_thread - peek, check, release until end of stream */
static void *reader_thread(void *arg)
{
	struct rd_arg *a = arg;
	const unsigned char *s;
	uint64_t len, v;

	while (tp_ipcq_peek(&a->e, &s, &len) == 0) {
		memcpy(&v, s, sizeof(v));
		if (len != 16 || v != a->got || memcmp(s + 8, &v, sizeof(v)))
			a->bad++;
		a->got++;
		tp_ipcq_release(&a->e);
	}
	return NULL;
}

/* move - N_THREADED batches through 4 slots to three reader threads */
static void move(enum tp_ipcq_kind kind)
{
	struct tp_ipcq *q = new_queue(kind, 4, 16, READERS, 1);
	struct tp_ipcq_end w;
	struct rd_arg a[READERS];
	pthread_t th[READERS];
	int efd_w = -1, efd_r[READERS];
	uint32_t stop = 0;
	uint64_t waits = 0, sleeps = 0;

	for (int i = 0; i < READERS; i++)
		efd_r[i] = kind == TP_IPCQ_ADAPTIVE ? eventfd(0, EFD_NONBLOCK) : -1;
	if (kind == TP_IPCQ_ADAPTIVE)
		efd_w = eventfd(0, EFD_NONBLOCK);
	assert_int_equal(tp_ipcq_end_open(&w, q, -1, efd_w, -1, efd_r, -1, &stop), 0);
	for (int i = 0; i < READERS; i++) {
		memset(&a[i], 0, sizeof(a[i]));
		assert_int_equal(tp_ipcq_end_open(&a[i].e, q, i, efd_r[i], efd_w, NULL, -1, &stop), 0);
		pthread_create(&th[i], NULL, reader_thread, &a[i]);
	}
	for (uint64_t v = 0; v < N_THREADED; v++) {
		unsigned char *s;

		assert_int_equal(tp_ipcq_reserve(&w, &s), 0);
		memcpy(s, &v, sizeof(v));
		memcpy(s + 8, &v, sizeof(v));
		tp_ipcq_publish(&w, 16);
	}
	tp_ipcq_close(&w);
	for (int i = 0; i < READERS; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(a[i].got, N_THREADED);
		assert_int_equal(a[i].bad, 0);
		waits += a[i].e.waits;
		sleeps += a[i].e.sleeps;
		tp_ipcq_end_close(&a[i].e);
		if (efd_r[i] >= 0)
			close(efd_r[i]);
	}
	/* a wait is counted once however many sleeps it took */
	assert_true(w.waits <= w.sleeps || w.sleeps == 0);
	printf("# kind %d: writer waited %llu times (%llu sleeps), readers %llu (%llu)\n", kind,
	       (unsigned long long)w.waits, (unsigned long long)w.sleeps,
	       (unsigned long long)waits, (unsigned long long)sleeps);
	tp_ipcq_end_close(&w);
	if (efd_w >= 0)
		close(efd_w);
	tp_ipcq_destroy(q);
	free(q);
}

static void test_threaded_mutex(void **state)
{
	(void)state;
	move(TP_IPCQ_MUTEX);
}

static void test_threaded_adaptive(void **state)
{
	(void)state;
	move(TP_IPCQ_ADAPTIVE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_used_full_low_water),
		cmocka_unit_test(test_one_to_two),
		cmocka_unit_test(test_threaded_mutex),
		cmocka_unit_test(test_threaded_adaptive),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
