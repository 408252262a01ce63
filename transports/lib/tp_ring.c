// SPDX-License-Identifier: GPL-2.0-only
/* tp_ring.c - the single-producer, multi-reader ring (see tp_ring.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tp_ring.h"

/* slots_offset - where the slots start */
static size_t slots_offset(uint32_t max_readers)
{
	return sizeof(struct tp_ring) + (size_t)max_readers * sizeof(struct tp_ring_reader);
}

/* stride_for - slot header plus @slot_bytes, rounded to a cache line */
static uint32_t stride_for(uint32_t slot_bytes)
{
	return (uint32_t)((sizeof(struct tp_ring_slot) + slot_bytes + 63) & ~(size_t)63);
}

/* ahead - how many slots of @stride @bytes ahead is: 1 at least,
 * TP_RING_READ_AHEAD_MAX and half the ring's @slots at most */
static uint32_t ahead(uint32_t stride, uint32_t bytes, uint32_t slots)
{
	uint32_t n = bytes / stride;

	if (n > TP_RING_READ_AHEAD_MAX)
		n = TP_RING_READ_AHEAD_MAX;
	if (n > slots / 2)
		n = slots / 2;
	return n ? n : 1;
}

/* tp_ring_size - bytes the ring needs */
size_t tp_ring_size(uint32_t slots, uint32_t slot_bytes, uint32_t max_readers)
{
	if (slots < 2 || (slots & (slots - 1)) || slots > (1u << 24) || slot_bytes == 0 ||
	    slot_bytes > (1u << 24) || max_readers == 0 || max_readers > TP_RING_MAX_READERS)
		return 0;
	return slots_offset(max_readers) + (size_t)slots * stride_for(slot_bytes);
}

/* tp_ring_init - lay the ring out; ready is stored last */
int tp_ring_init(void *mem, size_t size, uint32_t slots, uint32_t slot_bytes,
		 uint32_t max_readers, pid_t creator)
{
	struct tp_ring *r = mem;
	size_t need = tp_ring_size(slots, slot_bytes, max_readers);

	if (!need || size < need)
		return -EINVAL;
	r->h.magic = TP_RING_MAGIC;
	r->h.version = TP_RING_VERSION;
	r->h.slots = slots;
	r->h.slot_bytes = slot_bytes;
	r->h.stride = stride_for(slot_bytes);
	r->h.max_readers = max_readers;
	r->h.creator_pid = (int32_t)creator;
	r->h.size = need;
	__atomic_store_n(&r->h.ready, 1, __ATOMIC_RELEASE);
	return 0;
}

/* tp_ring_valid - magic, version, ready and a size that fits */
int tp_ring_valid(const void *mem, size_t size)
{
	const struct tp_ring *r = mem;

	if (size < sizeof(struct tp_ring) || !__atomic_load_n(&r->h.ready, __ATOMIC_ACQUIRE))
		return -EAGAIN;
	if (r->h.magic != TP_RING_MAGIC || r->h.version != TP_RING_VERSION)
		return -EPROTO;
	if (r->h.size > size || tp_ring_size(r->h.slots, r->h.slot_bytes, r->h.max_readers) != r->h.size)
		return -EPROTO;
	return 0;
}

/* membarrier - the raw system call (glibc has no wrapper) */
static long membarrier(int cmd)
{
	return syscall(SYS_membarrier, cmd, 0, 0);
}

/* asym_barrier - this process can leave its per-send barrier to the
 * readers: the kernel has membarrier's global expedited command and this
 * process is registered for it (asked once; cold) */
static bool asym_barrier(void)
{
	static int ok = -1;
	int v = __atomic_load_n(&ok, __ATOMIC_ACQUIRE);

	if (v < 0) {
		long q = membarrier(MEMBARRIER_CMD_QUERY);

		v = q > 0 && (q & MEMBARRIER_CMD_GLOBAL_EXPEDITED) &&
		    (q & MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) &&
		    membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0;
		__atomic_store_n(&ok, v, __ATOMIC_RELEASE);
	}
	return v;
}

/* tp_ring_writer_open - claim the writer's place; say which barrier it uses
 * before its first write (a reader that saw asym == 0 counted itself in
 * waiters before this store, so the first write sees it) */
int tp_ring_writer_open(struct tp_ring_wr *w, struct tp_ring *r, pid_t pid)
{
	int32_t none = 0;

	if (!__atomic_compare_exchange_n(&r->w.pid, &none, (int32_t)pid, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return -EBUSY;
	memset(w, 0, sizeof(*w));
	w->r = r;
	w->slots = (unsigned char *)r + slots_offset(r->h.max_readers);
	w->min_tail = __atomic_load_n(&r->w.head, __ATOMIC_ACQUIRE);
	w->mask = r->h.slots - 1;
	w->stride = r->h.stride;
	w->slot_bytes = r->h.slot_bytes;
	w->ahead = ahead(r->h.stride, TP_RING_WRITE_AHEAD, r->h.slots);
	w->asym = asym_barrier();
	__atomic_store_n(&r->wake.asym, (uint32_t)w->asym, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return 0;
}

/* min_tail - the slowest active reader's tail, or @head if there is none */
static uint64_t min_tail(const struct tp_ring *r, uint64_t head)
{
	uint64_t m = head;

	for (uint32_t i = 0; i < r->h.max_readers; i++) {
		/* seq_cst pairs with the reader's join (see tp_ring_reader_join) */
		if (__atomic_load_n(&r->r[i].state, __ATOMIC_SEQ_CST) == TP_RD_ACTIVE) {
			uint64_t t = __atomic_load_n(&r->r[i].tail, __ATOMIC_ACQUIRE);

			if (t < m)
				m = t;
		}
	}
	return m;
}

/* futex - the raw system call (glibc has no wrapper) */
static long futex(uint32_t *uaddr, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

/* tp_ring_wake - a reader counted itself in waiters: the head it will
 * recheck (or has rechecked) is stored; wake the sleepers */
void tp_ring_wake(struct tp_ring *r)
{
	__atomic_add_fetch(&r->wake.futex, 1, __ATOMIC_SEQ_CST);
	futex(&r->wake.futex, FUTEX_WAKE, INT_MAX, NULL);
}

/* tp_ring_make_room - rescan the tails. The full barrier puts the head
 * stored so far before the readers' states are read: a reader joining
 * meanwhile either is seen here or reads that head (tp_ring_reader_join) */
int tp_ring_make_room(struct tp_ring_wr *w)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	uint64_t h = tp_ring_head(w);

	w->min_tail = min_tail(w->r, h);
	return h - w->min_tail > w->mask ? -EAGAIN : 0;
}

/* tp_ring_writer_close - closed, then wake everyone */
void tp_ring_writer_close(struct tp_ring_wr *w)
{
	__atomic_store_n(&w->r->wake.closed, 1, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&w->r->wake.futex, 1, __ATOMIC_SEQ_CST);
	futex(&w->r->wake.futex, FUTEX_WAKE, INT_MAX, NULL);
}

/* tp_ring_readers - active readers */
uint32_t tp_ring_readers(const struct tp_ring *r)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < r->h.max_readers; i++)
		n += __atomic_load_n(&r->r[i].state, __ATOMIC_ACQUIRE) == TP_RD_ACTIVE;
	return n;
}

/* tp_ring_drop_reader - free a dead reader's slot */
void tp_ring_drop_reader(struct tp_ring *r, int idx)
{
	if (idx >= 0 && (uint32_t)idx < r->h.max_readers)
		__atomic_store_n(&r->r[idx].state, TP_RD_FREE, __ATOMIC_RELEASE);
}

/* tp_ring_lagging_reader - the active reader whose tail is the minimum */
int tp_ring_lagging_reader(const struct tp_ring_wr *w)
{
	uint64_t m = min_tail(w->r, tp_ring_head(w));

	for (uint32_t i = 0; i < w->r->h.max_readers; i++)
		if (__atomic_load_n(&w->r->r[i].state, __ATOMIC_ACQUIRE) == TP_RD_ACTIVE &&
		    __atomic_load_n(&w->r->r[i].tail, __ATOMIC_ACQUIRE) == m)
			return (int)i;
	return -1;
}

/* tp_ring_reader_join - take a slot. The tail is first set to a head read
 * before activation (never ahead of what the writer protects), and then,
 * after a full barrier, to the head read after it: a writer scan that did
 * not see this reader happened before the activation, so its cached minimum
 * is at most that second head and the writer cannot lap the reader. */
int tp_ring_reader_join(struct tp_ring_rd *rd, struct tp_ring *r, pid_t pid)
{
	for (uint32_t i = 0; i < r->h.max_readers; i++) {
		uint32_t free_ = TP_RD_FREE;
		uint64_t h;

		if (!__atomic_compare_exchange_n(&r->r[i].state, &free_, TP_RD_JOINING, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			continue;
		r->r[i].pid = (int32_t)pid;
		h = __atomic_load_n(&r->w.head, __ATOMIC_ACQUIRE);
		__atomic_store_n(&r->r[i].tail, h, __ATOMIC_RELEASE);
		__atomic_store_n(&r->r[i].state, TP_RD_ACTIVE, __ATOMIC_SEQ_CST);
		h = __atomic_load_n(&r->w.head, __ATOMIC_SEQ_CST);
		__atomic_store_n(&r->r[i].tail, h, __ATOMIC_RELEASE);
		memset(rd, 0, sizeof(*rd));
		rd->r = r;
		rd->slots = (unsigned char *)r + slots_offset(r->h.max_readers);
		rd->me = &r->r[i];
		rd->tail = h;
		rd->head_seen = h;
		rd->mask = r->h.slots - 1;
		rd->stride = r->h.stride;
		rd->ahead = ahead(r->h.stride, TP_RING_READ_AHEAD, r->h.slots);
		rd->idx = (int)i;
		return 0;
	}
	return -EBUSY;
}

/* tp_ring_empty - nothing stamped at the tail: closed is stored after the
 * last head, so once it is set the head is read once more */
int tp_ring_empty(struct tp_ring_rd *rd)
{
	if (!__atomic_load_n(&rd->r->wake.closed, __ATOMIC_ACQUIRE))
		return -EAGAIN;
	rd->head_seen = __atomic_load_n(&rd->r->w.head, __ATOMIC_ACQUIRE);
	return rd->tail >= rd->head_seen ? -EPIPE : 0;
}

/* tp_ring_wait - sleep until the head moves, the writer closes, or timeout.
 * Counted in waiters, the reader rechecks the head; a writer without a
 * barrier of its own (asym) is made to run one first, so that either its
 * head store is seen here or its load of waiters sees this reader. */
int tp_ring_wait(struct tp_ring_rd *rd, uint64_t timeout_ns)
{
	struct tp_ring *r = rd->r;
	struct timespec ts = { (time_t)(timeout_ns / 1000000000ULL), (long)(timeout_ns % 1000000000ULL) };
	uint32_t f = __atomic_load_n(&r->wake.futex, __ATOMIC_SEQ_CST);
	long rc;

	__atomic_add_fetch(&r->wake.waiters, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&r->wake.asym, __ATOMIC_SEQ_CST))
		membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED);
	if (__atomic_load_n(&r->w.head, __ATOMIC_SEQ_CST) != rd->tail ||
	    __atomic_load_n(&r->wake.closed, __ATOMIC_SEQ_CST)) {
		__atomic_sub_fetch(&r->wake.waiters, 1, __ATOMIC_SEQ_CST);
		return 0;
	}
	rc = futex(&r->wake.futex, FUTEX_WAIT, f, &ts);
	__atomic_sub_fetch(&r->wake.waiters, 1, __ATOMIC_SEQ_CST);
	if (rc < 0 && errno == ETIMEDOUT)
		return -ETIMEDOUT;
	return 0;	/* woken, the value changed (EAGAIN) or a signal: look again */
}

/* tp_ring_reader_leave - free the slot */
void tp_ring_reader_leave(struct tp_ring_rd *rd)
{
	if (rd->me) {
		__atomic_store_n(&rd->me->state, TP_RD_FREE, __ATOMIC_RELEASE);
		__atomic_add_fetch(&rd->r->wake.left, 1, __ATOMIC_RELEASE);
	}
	rd->me = NULL;
}
