/* tp_ring.c - the single-producer, multi-reader ring (see tp_ring.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
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

/* tp_ring_writer_open - claim the writer's place */
int tp_ring_writer_open(struct tp_ring_wr *w, struct tp_ring *r, pid_t pid)
{
	int32_t none = 0;

	if (!__atomic_compare_exchange_n(&r->w.pid, &none, (int32_t)pid, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return -EBUSY;
	memset(w, 0, sizeof(*w));
	w->r = r;
	w->slots = (unsigned char *)r + slots_offset(r->h.max_readers);
	w->head = __atomic_load_n(&r->w.head, __ATOMIC_ACQUIRE);
	w->min_tail = w->head;
	w->mask = r->h.slots - 1;
	w->stride = r->h.stride;
	w->slot_bytes = r->h.slot_bytes;
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

/* wake_readers - wake sleepers, if any; the caller stored the head with a
 * full barrier, so a reader that counted itself in waiters after that
 * store sees the new head and does not sleep */
static inline void wake_readers(struct tp_ring *r)
{
	if (__builtin_expect(__atomic_load_n(&r->wake.waiters, __ATOMIC_SEQ_CST) != 0, 0)) {
		__atomic_add_fetch(&r->wake.futex, 1, __ATOMIC_SEQ_CST);
		futex(&r->wake.futex, FUTEX_WAKE, INT_MAX, NULL);
	}
}

/* tp_ring_write - copy one message into the next slot */
int tp_ring_write(struct tp_ring_wr *w, const void *buf, uint32_t len)
{
	struct tp_ring_slot *s;

	if (__builtin_expect(len > w->slot_bytes, 0))
		return -EMSGSIZE;
	if (__builtin_expect(w->head - w->min_tail >= w->mask + 1ULL, 0)) {
		w->min_tail = min_tail(w->r, w->head);
		if (w->head - w->min_tail >= w->mask + 1ULL)
			return -EAGAIN;
	}
	s = (struct tp_ring_slot *)(w->slots + (size_t)(w->head & w->mask) * w->stride);
	s->len = len;
	memcpy(s->data, buf, len);
	/* release: the message is in place before its stamp says so */
	__atomic_store_n(&s->seq, (uint32_t)(w->head + 1), __ATOMIC_RELEASE);
	w->head++;
	/* seq_cst (xchg on x86): the slot is visible before the head, and the
	 * waiters load below cannot pass the store */
	__atomic_store_n(&w->r->w.head, w->head, __ATOMIC_SEQ_CST);
	wake_readers(w->r);
	return 0;
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
	uint64_t m = min_tail(w->r, w->head);

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
		rd->idx = (int)i;
		return 0;
	}
	return -EBUSY;
}

/* slot_at - the slot of message @n */
static inline struct tp_ring_slot *slot_at(const struct tp_ring_rd *rd, uint64_t n)
{
	return (struct tp_ring_slot *)(rd->slots + (size_t)(n & rd->mask) * rd->stride);
}

/* stamped - the slot of message @n holds it (acquire: and its bytes) */
static inline bool stamped(const struct tp_ring_rd *rd, uint64_t n)
{
	return __atomic_load_n(&slot_at(rd, n)->seq, __ATOMIC_ACQUIRE) == (uint32_t)(n + 1);
}

/* tp_ring_available - a message is waiting: its slot is stamped */
bool tp_ring_available(struct tp_ring_rd *rd)
{
	return rd->tail < rd->head_seen || stamped(rd, rd->tail);
}

/* tp_ring_read - copy the next message out and release its slot */
ssize_t tp_ring_read(struct tp_ring_rd *rd, void *buf, size_t cap)
{
	const struct tp_ring_slot *s;
	uint32_t len;

	/* behind a head seen before, or the slot's stamp says the message is in
	 * (reading by stamps, the tail passes the last head seen) */
	if (rd->tail >= rd->head_seen && !stamped(rd, rd->tail)) {
		if (!__atomic_load_n(&rd->r->wake.closed, __ATOMIC_ACQUIRE))
			return -EAGAIN;
		/* closed is stored after the last head: look once more */
		rd->head_seen = __atomic_load_n(&rd->r->w.head, __ATOMIC_ACQUIRE);
		if (rd->tail >= rd->head_seen)
			return -EPIPE;
	}
	s = slot_at(rd, rd->tail);
	len = s->len;
	if (len <= cap)
		memcpy(buf, s->data, len);
	rd->tail++;
	/* release: our copy is done before the writer may reuse the slot */
	__atomic_store_n(&rd->me->tail, rd->tail, __ATOMIC_RELEASE);
	return len <= cap ? (ssize_t)len : -EMSGSIZE;
}

/* tp_ring_wait - sleep until the head moves, the writer closes, or timeout */
int tp_ring_wait(struct tp_ring_rd *rd, uint64_t timeout_ns)
{
	struct tp_ring *r = rd->r;
	struct timespec ts = { (time_t)(timeout_ns / 1000000000ULL), (long)(timeout_ns % 1000000000ULL) };
	uint32_t f = __atomic_load_n(&r->wake.futex, __ATOMIC_SEQ_CST);
	long rc;

	__atomic_add_fetch(&r->wake.waiters, 1, __ATOMIC_SEQ_CST);
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
