// SPDX-License-Identifier: GPL-2.0-only
/* test_ring_fast.c - the shm ring's fast paths: the writer's barrier either
 * way (membarrier's, or its own on every send), sleeping readers woken in
 * both, the head as the writer's only counter, the one-store length and
 * stamp, and the inline copies of every length. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "tp_ring.h"

static struct tp_ring *new_ring(uint32_t slots, uint32_t slot_bytes, uint32_t readers)
{
	size_t n = tp_ring_size(slots, slot_bytes, readers);
	void *m;

	assert_true(n > 0);
	m = aligned_alloc(TP_RING_LINE, (n + TP_RING_LINE - 1) / TP_RING_LINE * TP_RING_LINE);
	assert_non_null(m);
	memset(m, 0, n);
	assert_int_equal(tp_ring_init(m, n, slots, slot_bytes, readers, getpid()), 0);
	return m;
}

/* force_barrier - make @w put its own barrier in every send, as a writer
 * without membarrier does */
static void force_barrier(struct tp_ring_wr *w)
{
	w->asym = false;
	__atomic_store_n(&w->r->wake.asym, 0, __ATOMIC_SEQ_CST);
}

/* every length through the inline copies and memcpy, the length and stamp
 * read back, the head counting sends */
static void test_lengths_and_stamp(void **state)
{
	struct tp_ring *r = new_ring(16, 200, 1);
	struct tp_ring_wr w;
	struct tp_ring_rd rd;
	unsigned char in[200], out[200];
	uint64_t n = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(i * 7 + 3);
	assert_int_equal(tp_ring_writer_open(&w, r, 1), 0);
	assert_int_equal(tp_ring_reader_join(&rd, r, 2), 0);
	for (uint32_t len = 1; len <= 200; len++) {
		const struct tp_ring_slot *s = tp_ring_slot_of(&rd, n);

		in[0] = (unsigned char)len;
		if (len >= 32 && len <= TP_RING_SMALL && len % 2) {
			if (!tp_ring_fits(&w, len))
				assert_int_equal(tp_ring_make_room(&w), 0);
			assert_false(tp_ring_put_any(&w, in, len, TP_RING_COPY_SMALL));
		} else if (len >= TP_RING_SHORT && len < 32) {
			if (!tp_ring_fits(&w, len))
				assert_int_equal(tp_ring_make_room(&w), 0);
			assert_false(tp_ring_put_any(&w, in, len, TP_RING_COPY_SHORT));
		} else {
			assert_int_equal(tp_ring_write(&w, in, len), 0);
		}
		assert_int_equal(tp_ring_head(&w), n + 1);
		assert_int_equal(r->w.head, n + 1);
		assert_int_equal(s->len, len);
		assert_int_equal(s->seq, (uint32_t)(n + 1));
		memset(out, 0xee, sizeof(out));
		assert_int_equal(tp_ring_read(&rd, out, sizeof(out)), (ssize_t)len);
		assert_memory_equal(out, in, len);
		if (len < sizeof(out))
			assert_int_equal(out[len], 0xee);	/* nothing past the length */
		n++;
	}
	free(r);
}

/* a full ring: the writer's cached minimum makes it rescan, and the head
 * it publishes there is where a reader that joins starts */
static void test_full_rescan_and_join(void **state)
{
	struct tp_ring *r = new_ring(8, 64, 2);
	struct tp_ring_wr w;
	struct tp_ring_rd a, b;
	unsigned char m[40] = { 0 }, out[64];

	(void)state;
	tp_ring_writer_open(&w, r, 1);
	assert_int_equal(tp_ring_reader_join(&a, r, 2), 0);
	for (int i = 0; i < 8; i++)
		assert_int_equal(tp_ring_write(&w, m, sizeof(m)), 0);
	assert_false(tp_ring_fits(&w, sizeof(m)));
	assert_int_equal(tp_ring_write(&w, m, sizeof(m)), -EAGAIN);
	assert_int_equal(tp_ring_read(&a, out, sizeof(out)), sizeof(m));
	assert_int_equal(tp_ring_write(&w, m, sizeof(m)), 0);	/* rescanned */
	assert_int_equal(tp_ring_reader_join(&b, r, 3), 0);
	assert_int_equal(b.tail, 9);
	assert_int_equal(tp_ring_read(&b, out, sizeof(out)), -EAGAIN);
	assert_int_equal(tp_ring_write(&w, m, sizeof(m)), -EAGAIN);	/* a is 8 behind */
	free(r);
}

#define N_WAKE 20000ULL

struct sleeper {
	struct tp_ring *r;
	uint64_t got, bad, waits;
	pthread_barrier_t *bar;
};

/* sleeper_thread - a blocking reader: sleeps whenever the ring is empty */
static void *sleeper_thread(void *arg)
{
	struct sleeper *a = arg;
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
			/* a lost wake-up sleeps the full second: the writer
			 * sends nothing more until this message is read */
			if (tp_ring_wait(&rd, 1000000000ULL) == -ETIMEDOUT)
				a->bad++;
			a->waits++;
			continue;
		}
		a->bad += v != want;
		want = v + 1;
		a->got++;
	}
	tp_ring_reader_leave(&rd);
	return NULL;
}

/* one message at a time, the next only once the reader has taken it, so
 * the reader goes to sleep before each one and only a wake-up brings it
 * back; with either barrier every message arrives and no sleep runs to its
 * timeout */
static void run_sleeper(bool own_barrier)
{
	struct tp_ring *r = new_ring(64, 8, 1);
	struct tp_ring_wr w;
	pthread_barrier_t bar;
	pthread_t th;
	struct sleeper a = { r, 0, 0, 0, &bar };

	pthread_barrier_init(&bar, NULL, 2);
	tp_ring_writer_open(&w, r, 1);
	if (own_barrier)
		force_barrier(&w);
	pthread_create(&th, NULL, sleeper_thread, &a);
	pthread_barrier_wait(&bar);
	for (uint64_t v = 0; v < N_WAKE; v++) {
		assert_int_equal(tp_ring_write(&w, &v, sizeof(v)), 0);
		while (__atomic_load_n(&r->r[0].tail, __ATOMIC_ACQUIRE) != v + 1)
			sched_yield();
	}
	tp_ring_writer_close(&w);
	pthread_join(th, NULL);
	assert_int_equal(a.got, N_WAKE);
	assert_int_equal(a.bad, 0);
	assert_true(a.waits > 0);
	assert_int_equal(r->wake.waiters, 0);
	pthread_barrier_destroy(&bar);
	free(r);
}

static void test_sleepers_woken_asymmetric(void **state)
{
	(void)state;
	run_sleeper(false);
}

static void test_sleepers_woken_own_barrier(void **state)
{
	(void)state;
	run_sleeper(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lengths_and_stamp),
		cmocka_unit_test(test_full_rescan_and_join),
		cmocka_unit_test(test_sleepers_woken_asymmetric),
		cmocka_unit_test(test_sleepers_woken_own_barrier),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
