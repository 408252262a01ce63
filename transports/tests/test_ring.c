// SPDX-License-Identifier: GPL-2.0-only
/* test_ring.c - the shm ring: layout, order, back-pressure, 1-to-N, wake-ups. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "tp_ring.h"

/* new_ring - a zeroed ring in private memory */
static struct tp_ring *new_ring(uint32_t slots, uint32_t slot_bytes, uint32_t readers)
{
	size_t n = tp_ring_size(slots, slot_bytes, readers);
	void *m;

	assert_true(n > 0);
	m = aligned_alloc(TP_RING_LINE, (n + TP_RING_LINE - 1) / TP_RING_LINE * TP_RING_LINE);
	assert_non_null(m);
	memset(m, 0, n);
	assert_int_equal(tp_ring_init(m, n, slots, slot_bytes, readers, getpid()), 0);
	assert_int_equal(tp_ring_valid(m, n), 0);
	return m;
}

static void test_layout(void **state)
{
	struct tp_ring *r;

	(void)state;
	/* the writer's line, the wake-up line and each reader's line are apart */
	assert_int_equal(offsetof(struct tp_ring, w) % TP_RING_LINE, 0);
	assert_int_equal(offsetof(struct tp_ring, wake) % TP_RING_LINE, 0);
	assert_true(offsetof(struct tp_ring, wake) - offsetof(struct tp_ring, w) >= TP_RING_LINE);
	assert_int_equal(sizeof(struct tp_ring_reader), TP_RING_LINE);
	assert_int_equal(offsetof(struct tp_ring, r) % TP_RING_LINE, 0);
	assert_int_equal(tp_ring_size(3, 64, 1), 0);	/* not a power of two */
	assert_int_equal(tp_ring_size(8, 0, 1), 0);
	assert_int_equal(tp_ring_size(8, 64, 0), 0);
	assert_int_equal(tp_ring_size(8, 64, TP_RING_MAX_READERS + 1), 0);
	r = new_ring(8, 100, 2);
	assert_int_equal(r->h.stride % 64, 0);
	assert_true(r->h.stride >= 100 + 8);
	r->h.magic++;
	assert_int_equal(tp_ring_valid(r, r->h.size), -EPROTO);
	free(r);
}

static void test_order_and_wrap(void **state)
{
	struct tp_ring *r = new_ring(8, 64, 1);
	struct tp_ring_wr w;
	struct tp_ring_rd rd;
	uint64_t v, out;

	(void)state;
	assert_int_equal(tp_ring_writer_open(&w, r, 1), 0);
	assert_int_equal(tp_ring_writer_open(&w, r, 2), -EBUSY);
	assert_int_equal(tp_ring_reader_join(&rd, r, 3), 0);
	assert_int_equal(tp_ring_read(&rd, &out, sizeof(out)), -EAGAIN);
	for (v = 0; v < 1000; v++) {
		assert_int_equal(tp_ring_write(&w, &v, sizeof(v)), 0);
		assert_int_equal(tp_ring_read(&rd, &out, sizeof(out)), sizeof(out));
		assert_int_equal(out, v);
	}
	free(r);
}

static void test_full_and_sizes(void **state)
{
	struct tp_ring *r = new_ring(4, 16, 1);
	struct tp_ring_wr w;
	struct tp_ring_rd rd;
	char big[32] = { 0 }, small[4];
	uint64_t v;

	(void)state;
	tp_ring_writer_open(&w, r, 1);
	tp_ring_reader_join(&rd, r, 2);
	assert_int_equal(tp_ring_write(&w, big, sizeof(big)), -EMSGSIZE);	/* longer than a slot */
	for (v = 0; v < 4; v++)
		assert_int_equal(tp_ring_write(&w, &v, sizeof(v)), 0);
	assert_int_equal(tp_ring_write(&w, &v, sizeof(v)), -EAGAIN);		/* full: never overwrite */
	assert_int_equal(tp_ring_read(&rd, small, sizeof(small)), -EMSGSIZE);	/* skipped */
	assert_int_equal(tp_ring_write(&w, &v, sizeof(v)), 0);			/* room again */
	assert_int_equal(tp_ring_read(&rd, &v, sizeof(v)), sizeof(v));
	assert_int_equal(v, 1);
	free(r);
}

static void test_one_to_n(void **state)
{
	struct tp_ring *r = new_ring(8, 16, 3);
	struct tp_ring_wr w;
	struct tp_ring_rd rd[4];
	uint64_t v, out;

	(void)state;
	tp_ring_writer_open(&w, r, 1);
	for (int i = 0; i < 3; i++)
		assert_int_equal(tp_ring_reader_join(&rd[i], r, 10 + i), 0);
	assert_int_equal(tp_ring_reader_join(&rd[3], r, 13), -EBUSY);
	assert_int_equal(tp_ring_readers(r), 3);
	for (v = 0; v < 8; v++)
		assert_int_equal(tp_ring_write(&w, &v, sizeof(v)), 0);
	/* readers 0 and 1 catch up; 2 holds the writer back */
	for (int i = 0; i < 2; i++)
		for (v = 0; v < 8; v++) {
			assert_int_equal(tp_ring_read(&rd[i], &out, sizeof(out)), sizeof(out));
			assert_int_equal(out, v);
		}
	assert_int_equal(tp_ring_write(&w, &v, sizeof(v)), -EAGAIN);
	assert_int_equal(tp_ring_lagging_reader(&w), rd[2].idx);
	/* reader 2 dies: dropping it lets the writer go on */
	tp_ring_drop_reader(r, rd[2].idx);
	assert_int_equal(tp_ring_readers(r), 2);
	assert_int_equal(tp_ring_write(&w, &v, sizeof(v)), 0);
	assert_int_equal(tp_ring_read(&rd[0], &out, sizeof(out)), sizeof(out));
	assert_int_equal(out, 8);
	/* a late joiner starts at the head: it sees only what comes next */
	assert_int_equal(tp_ring_reader_join(&rd[3], r, 14), 0);
	assert_int_equal(tp_ring_read(&rd[3], &out, sizeof(out)), -EAGAIN);
	v = 9;
	assert_int_equal(tp_ring_write(&w, &v, sizeof(v)), 0);
	assert_int_equal(tp_ring_read(&rd[3], &out, sizeof(out)), sizeof(out));
	assert_int_equal(out, 9);
	/* closed and drained: end of stream */
	tp_ring_writer_close(&w);
	assert_int_equal(tp_ring_read(&rd[3], &out, sizeof(out)), -EPIPE);
	assert_int_equal(tp_ring_read(&rd[0], &out, sizeof(out)), sizeof(out));
	/* a reader that leaves is counted where the writer looks after a write;
	 * one dropped by the writer is not (the writer knows it) */
	assert_int_equal(tp_ring_left(r), 0);
	tp_ring_reader_leave(&rd[0]);
	assert_int_equal(tp_ring_left(r), 1);
	assert_int_equal(tp_ring_readers(r), 2);
	tp_ring_reader_leave(&rd[0]);		/* a second leave is none */
	assert_int_equal(tp_ring_left(r), 1);
	free(r);
}

/* a reader learns of a message from its slot's stamp, not from the head:
 * with the stamp wiped it sees nothing until it reloads the head (closed) */
static void test_stamp_says_when(void **state)
{
	struct tp_ring *r = new_ring(8, 64, 1);
	struct tp_ring_wr w;
	struct tp_ring_rd rd;
	struct tp_ring_slot *s;
	uint64_t v = 42, out = 0;

	(void)state;
	tp_ring_writer_open(&w, r, 1);
	assert_int_equal(tp_ring_reader_join(&rd, r, 2), 0);
	assert_false(tp_ring_available(&rd));
	assert_int_equal(tp_ring_write(&w, &v, sizeof(v)), 0);
	s = (struct tp_ring_slot *)rd.slots;
	assert_int_equal(s->seq, 1);			/* message 0's stamp */
	assert_true(tp_ring_available(&rd));
	s->seq = 0;
	assert_false(tp_ring_available(&rd));
	assert_int_equal(tp_ring_read(&rd, &out, sizeof(out)), -EAGAIN);
	assert_int_equal(rd.head_seen, 0);		/* the head was not read */
	tp_ring_writer_close(&w);			/* closed: the head is read once */
	assert_int_equal(tp_ring_read(&rd, &out, sizeof(out)), sizeof(out));
	assert_int_equal(out, 42);
	assert_int_equal(tp_ring_read(&rd, &out, sizeof(out)), -EPIPE);
	free(r);
}

/* a reader behind the writer reads by the head it loads every
 * TP_RING_HEAD_EVERY messages: the messages that head covers are read
 * without their stamps (wiped here), and no further */
static void test_behind_reads_by_the_head(void **state)
{
	struct tp_ring *r = new_ring(4096, 8, 1);
	struct tp_ring_wr w;
	struct tp_ring_rd rd;
	uint64_t v, out = 0;

	(void)state;
	tp_ring_writer_open(&w, r, 1);
	assert_int_equal(tp_ring_reader_join(&rd, r, 2), 0);
	for (v = 0; v < 1100; v++)
		assert_int_equal(tp_ring_write(&w, &v, sizeof(v)), 0);
	assert_int_equal(tp_ring_read(&rd, &out, sizeof(out)), sizeof(out));
	assert_int_equal(out, 0);
	assert_int_equal(rd.head_seen, 1100);		/* loaded at message 0 */
	for (v = 1100; v < 1200; v++)
		assert_int_equal(tp_ring_write(&w, &v, sizeof(v)), 0);
	for (v = 1; v <= 1100; v++)			/* 1100: past the head seen at 0 */
		tp_ring_slot_of(&rd, v)->seq = 0;
	for (v = 1; v < 1200; v++) {
		assert_int_equal(tp_ring_read(&rd, &out, sizeof(out)), sizeof(out));
		assert_int_equal(out, v);
		if (v == 1023)
			assert_int_equal(rd.head_seen, 1100);
	}
	assert_int_equal(rd.head_seen, 1200);		/* loaded again at message 1024 */
	assert_int_equal(tp_ring_read(&rd, &out, sizeof(out)), -EAGAIN);
	free(r);
}

/* how far ahead each side fetches: bytes over the stride, within the ring */
static void test_how_far_ahead(void **state)
{
	static const struct { uint32_t slots, bytes, w, rd; } c[] = {
		{ 4096, 64, 2, 12 },	/* the 128-byte stride of 64-byte messages */
		{ 4096, 56, 4, 12 },	/* a 64-byte stride: 24 slots, at most 12 */
		{ 4096, 1000, 1, 1 },	/* 1,024 bytes a slot */
		{ 8, 8, 4, 4 },		/* half the ring at most */
		{ 2, 8, 1, 1 },
	};
	struct tp_ring_wr w;
	struct tp_ring_rd rd;

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct tp_ring *r = new_ring(c[i].slots, c[i].bytes, 1);

		tp_ring_writer_open(&w, r, 1);
		assert_int_equal(tp_ring_reader_join(&rd, r, 2), 0);
		assert_int_equal(w.ahead, c[i].w);
		assert_int_equal(rd.ahead, c[i].rd);
		free(r);
	}
}

static void test_wait_times_out(void **state)
{
	struct tp_ring *r = new_ring(8, 16, 1);
	struct tp_ring_rd rd;
	struct timespec a, b;

	(void)state;
	tp_ring_reader_join(&rd, r, 2);
	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_int_equal(tp_ring_wait(&rd, 30 * 1000000ULL), -ETIMEDOUT);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	assert_true(ms >= 25 && ms < 1000);
	assert_int_equal(r->wake.waiters, 0);
	free(r);
}

#define N_THREADED 2000000ULL

struct rdarg {
	struct tp_ring *r;
	bool blocking;
	uint64_t got, bad;
	pthread_barrier_t *bar;
};

/* reader_thread - read until end of stream, check every value is the next */
static void *reader_thread(void *arg)
{
	struct rdarg *a = arg;
	struct tp_ring_rd rd;
	uint64_t v, want = 0;
	ssize_t n;

	assert_int_equal(tp_ring_reader_join(&rd, a->r, 100), 0);
	pthread_barrier_wait(a->bar);
	for (;;) {
		n = tp_ring_read(&rd, &v, sizeof(v));
		if (n == -EPIPE)
			break;
		if (n == -EAGAIN) {
			if (a->blocking)
				tp_ring_wait(&rd, 1000000000ULL);
			continue;
		}
		if (v != want)
			a->bad++;
		want = v + 1;
		a->got++;
	}
	return NULL;
}

static void test_threaded_blocking_and_busy(void **state)
{
	struct tp_ring *r = new_ring(256, 8, 2);
	struct tp_ring_wr w;
	pthread_barrier_t bar;
	pthread_t th[2];
	struct rdarg a[2] = { { r, true, 0, 0, &bar }, { r, false, 0, 0, &bar } };

	(void)state;
	pthread_barrier_init(&bar, NULL, 3);
	tp_ring_writer_open(&w, r, 1);
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, reader_thread, &a[i]);
	pthread_barrier_wait(&bar);
	for (uint64_t v = 0; v < N_THREADED; v++)
		while (tp_ring_write(&w, &v, sizeof(v)) == -EAGAIN)
			sched_yield();
	tp_ring_writer_close(&w);
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(a[i].got, N_THREADED);
		assert_int_equal(a[i].bad, 0);
	}
	pthread_barrier_destroy(&bar);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_order_and_wrap),
		cmocka_unit_test(test_full_and_sizes),
		cmocka_unit_test(test_one_to_n),
		cmocka_unit_test(test_stamp_says_when),
		cmocka_unit_test(test_behind_reads_by_the_head),
		cmocka_unit_test(test_how_far_ahead),
		cmocka_unit_test(test_wait_times_out),
		cmocka_unit_test(test_threaded_blocking_and_busy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
