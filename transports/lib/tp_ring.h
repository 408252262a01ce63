/* SPDX-License-Identifier: GPL-2.0-only */
/* tp_ring.h - the single-producer, multi-reader ring behind the shm transport.
 *
 * One writer, up to max_readers readers, each with its own cursor; every
 * reader sees every message (1-to-N, like a multicast group). The writer's
 * head, the wake-up words and each reader's tail sit on lines of their own
 * (128 bytes: the adjacent-line prefetcher moves lines in pairs), so a
 * reader advancing its tail never invalidates the line the writer stores
 * to, and readers never touch one another's lines.
 *
 * The writer waits for the slowest active reader (no message is ever
 * overwritten unread). It keeps a cached minimum of the readers' tails and
 * rereads them only when the cache says the ring is full, so the common
 * send touches one slot and the head.
 *
 * Each slot carries the low 32 bits of its message number + 1, stored last
 * with the message's length (one 8-byte release store): a reader learns that its next message is there from the slot
 * itself, not from the writer's head, so a message moves the slot's lines
 * between the two caches and nothing else (the head's line stays with the
 * writer but for a reader's load every TP_RING_HEAD_EVERY messages; a
 * reader polling an empty ring reads its next slot and the closed word,
 * which the writer does not store to while running).
 *
 * Readers poll their next slot (busy) or sleep on a futex (blocking): a
 * reader counts itself in wake.waiters and rechecks the head before
 * sleeping; the writer stores the head, then loads waiters and wakes only
 * when it is non-zero, so a busy-poll run makes no syscall at all. The
 * store and the load need a full barrier between them (else the writer may
 * read waiters before its store is seen, while the reader reads the old
 * head and sleeps). Where the kernel has membarrier(2)'s global expedited
 * command the barrier is asymmetric: the writer registers for it and its
 * send has none (a message costs plain stores, which the CPU can overlap),
 * and a reader about to sleep calls membarrier, which runs a barrier on the
 * writer's CPU; without it the writer's head store is a full barrier
 * (xchg). wake.asym says which; the writer sets it before its first write.
 *
 * Lines are fetched before they are needed, on both sides, only where the
 * fetch cannot take a line from the other side mid-write: the writer asks
 * for a slot TP_RING_WRITE_AHEAD bytes ahead for writing (prefetchw) when
 * its cached minimum tail says every reader has read it, so the
 * invalidation of the readers' old copies is under way before the message
 * is written; a reader fetches the slot TP_RING_READ_AHEAD bytes ahead only
 * when the head it last loaded says that slot is written, and loads the
 * head every TP_RING_HEAD_EVERY messages (a load of the writer's line: once
 * per 1,024 messages costs the writer nothing measurable; loaded again at
 * the last slot it allowed, the head moved a line between the CPUs every
 * few messages and the rate fell by a third). A reader that has caught
 * up so reads by stamps and fetches nothing ahead (the next slots are not
 * written yet); a reader behind reads by the head, and its loads of the
 * next slots overlap. 50-byte messages on two vCPUs, verified: 24-31M
 * messages/s without, 85-92M with (docs/bench.md).
 *
 * The send and receive fast paths are inline (one slot, no call but the
 * copy); what is cold (a full ring, an empty one, a wake-up) is in
 * tp_ring.c.
 *
 * The ring lives in any memory (the unit tests use malloc); tp_shm.c puts it
 * in a shared segment. Functions return 0, a length or -errno.
 */
#ifndef JTR_TP_RING_H
#define JTR_TP_RING_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#define TP_RING_MAGIC 0x6a74722d72696e67ULL	/* "jtr-ring" */
#define TP_RING_VERSION 4
#define TP_RING_LINE 128
#define TP_RING_MAX_READERS 64
#define TP_RING_WRITE_AHEAD 256u	/* bytes: 2 slots of the 128-byte stride */
#define TP_RING_READ_AHEAD 1536u	/* bytes: 12 slots of the 128-byte stride */
#define TP_RING_READ_AHEAD_MAX 12u	/* slots: no further with shorter strides */
#define TP_RING_HEAD_EVERY 1024u	/* a reader loads the head every this many */

enum { TP_RD_FREE = 0, TP_RD_JOINING = 1, TP_RD_ACTIVE = 2 };

struct tp_ring_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t slots;			/* a power of two */
	uint32_t slot_bytes;		/* largest message */
	uint32_t stride;		/* bytes from one slot to the next */
	uint32_t max_readers;
	int32_t creator_pid;
	uint64_t size;			/* of the whole ring */
	uint32_t ready;			/* set last by the creator */
} __attribute__((aligned(TP_RING_LINE)));

/* written by the writer only */
struct tp_ring_writer {
	uint64_t head;			/* messages written */
	int32_t pid;			/* 0: no writer yet */
} __attribute__((aligned(TP_RING_LINE)));

/* blocking readers: written only when someone sleeps, or at the end */
struct tp_ring_wake {
	uint32_t futex;			/* bumped by the writer before a wake */
	uint32_t waiters;		/* readers about to sleep or asleep */
	uint32_t closed;		/* the writer has finished */
	uint32_t left;			/* readers that have left (bumped as each leaves) */
	uint32_t asym;			/* the writer's barrier is membarrier's (see above) */
} __attribute__((aligned(TP_RING_LINE)));

struct tp_ring_reader {
	uint64_t tail;			/* messages this reader has consumed */
	int32_t pid;
	uint32_t state;			/* TP_RD_* */
} __attribute__((aligned(TP_RING_LINE)));

struct tp_ring {
	struct tp_ring_hdr h;
	struct tp_ring_writer w;
	struct tp_ring_wake wake;
	struct tp_ring_reader r[];	/* max_readers of them, then the slots */
};

/* a slot: length, sequence stamp, then the message (length and stamp are
 * stored together, last, in one 8-byte store) */
struct tp_ring_slot {
	uint32_t len;
	uint32_t seq;			/* (uint32_t)(message number + 1) */
	unsigned char data[];
};

/* the writer's private view (its head is the shared one: tp_ring_head) */
struct tp_ring_wr {
	struct tp_ring *r;
	unsigned char *slots;
	uint64_t min_tail;		/* cached: no active reader is behind it */
	uint32_t mask;
	uint32_t stride;
	uint32_t slot_bytes;
	uint32_t ahead;			/* slots from the head to the one prefetched */
	bool asym;			/* readers fence for us: no barrier per send */
};

/* a reader's private view */
struct tp_ring_rd {
	struct tp_ring *r;
	unsigned char *slots;
	struct tp_ring_reader *me;
	uint64_t tail;
	uint64_t head_seen;		/* cached head: read by it, no stamp, while behind it */
	uint32_t mask;
	uint32_t stride;
	uint32_t ahead;			/* slots from the tail to the one prefetched */
	int idx;
};

/* tp_ring_size - bytes a ring of @slots x @slot_bytes with @max_readers needs;
 * 0 if the numbers are out of range */
size_t tp_ring_size(uint32_t slots, uint32_t slot_bytes, uint32_t max_readers);

/* tp_ring_init - lay a ring out in @mem (@size from tp_ring_size), zeroed
 * by the caller; @slots must be a power of two */
int tp_ring_init(void *mem, size_t size, uint32_t slots, uint32_t slot_bytes,
		 uint32_t max_readers, pid_t creator);

/* tp_ring_valid - @mem holds a ready ring of at most @size bytes */
int tp_ring_valid(const void *mem, size_t size);

/* tp_ring_writer_open - become the writer (-EBUSY if there is one) */
int tp_ring_writer_open(struct tp_ring_wr *w, struct tp_ring *r, pid_t pid);

/* tp_ring_copy - memcpy, inline up to 64 bytes: two or four 16-byte moves
 * that overlap where @n is not a multiple of 16 (a call would save and
 * restore registers, stores that queue behind the slot's own) */
static inline void tp_ring_copy(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	if (n >= 32 && n <= 64) {
		__builtin_memcpy(d, s, 16);
		__builtin_memcpy(d + 16, s + 16, 16);
		__builtin_memcpy(d + n - 32, s + n - 32, 16);
		__builtin_memcpy(d + n - 16, s + n - 16, 16);
	} else if (n >= 16 && n < 32) {
		__builtin_memcpy(d, s, 16);
		__builtin_memcpy(d + n - 16, s + n - 16, 16);
	} else {
		memcpy(d, s, n);
	}
}

/* tp_ring_make_room - the ring looks full: rescan the readers' tails
 * (cold); 0 if there is room now, else -EAGAIN */
int tp_ring_make_room(struct tp_ring_wr *w);

/* tp_ring_wake - futex-wake the readers that sleep (cold) */
void tp_ring_wake(struct tp_ring *r);

/* tp_ring_head - the writer's head: the shared word itself, whose line
 * stays with the writer (readers load it to join, to sleep, at the end and
 * every TP_RING_HEAD_EVERY messages), so a send stores the head once */
static inline uint64_t tp_ring_head(const struct tp_ring_wr *w)
{
	return __atomic_load_n(&w->r->w.head, __ATOMIC_RELAXED);
}

/* tp_ring_fits - a message of @len goes in now, without a rescan */
static inline bool tp_ring_fits(const struct tp_ring_wr *w, size_t len)
{
	return len <= w->slot_bytes && tp_ring_head(w) - w->min_tail <= w->mask;
}

/* TP_RING_SMALL - messages of 32 to this many bytes can be copied by
 * tp_ring_put_small: two 32-byte moves that overlap, with no call */
#define TP_RING_SMALL 64u

/* how tp_ring_put_any copies: memcpy (any length), four 16-byte moves or
 * two 32-byte AVX ones (32 to TP_RING_SMALL bytes; AVX only in a function
 * built for it: __attribute__((target("avx2")))) */
enum { TP_RING_COPY_ANY, TP_RING_COPY_SMALL, TP_RING_COPY_SMALL_AVX, TP_RING_COPY_SHORT };

/* TP_RING_SHORT - messages of this many to 31 bytes can be copied with two
 * 16-byte moves that overlap (TP_RING_COPY_SHORT): the seeds' 24 and 25 */
#define TP_RING_SHORT 16u

/* 32 bytes anywhere: one AVX move */
typedef unsigned char tp_ring_v32 __attribute__((vector_size(32), aligned(1), may_alias));

/* a 64-bit word that may alias the slot's length and stamp */
typedef uint64_t __attribute__((may_alias)) tp_ring_word;

/* tp_ring_claim - the slot the next message goes in (tp_ring_fits said it
 * goes): the writer may write the message there in place, then
 * tp_ring_commit. The slot holds what was written there one lap before. */
static inline __attribute__((always_inline)) unsigned char *tp_ring_claim(const struct tp_ring_wr *w)
{
	uint64_t h = tp_ring_head(w);

	return ((struct tp_ring_slot *)(w->slots + (size_t)(h & w->mask) * w->stride))->data;
}

/* tp_ring_commit - publish the claimed slot's message of @len bytes: its
 * length and stamp (one 8-byte release store: the message is in place
 * before its stamp says so), then the head; true if a reader sleeps and must
 * be woken (tp_ring_wake) */
static inline __attribute__((always_inline)) bool tp_ring_commit(struct tp_ring_wr *w, uint32_t len)
{
	uint64_t h = tp_ring_head(w);
	struct tp_ring_slot *s = (struct tp_ring_slot *)(w->slots + (size_t)(h & w->mask) * w->stride);
	union { struct { uint32_t len, seq; } f; uint64_t word; } stamp = { { len, (uint32_t)(h + 1) } };

	__atomic_store_n((tp_ring_word *)(void *)s, stamp.word, __ATOMIC_RELEASE);
	/* the slot w->ahead past the next, if every reader has read it */
	if (h + 1 + w->ahead - w->min_tail <= w->mask)
		__builtin_prefetch(w->slots + (size_t)((h + 1 + w->ahead) & w->mask) * w->stride, 1, 3);
	if (__builtin_expect(w->asym, 1)) {
		/* a sleeping reader's membarrier orders this store before the
		 * load of waiters below; keep the compiler from moving them */
		__atomic_store_n(&w->r->w.head, h + 1, __ATOMIC_RELEASE);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	} else {
		/* seq_cst (xchg on x86): the waiters load cannot pass the store */
		__atomic_store_n(&w->r->w.head, h + 1, __ATOMIC_SEQ_CST);
	}
	return __builtin_expect(__atomic_load_n(&w->r->wake.waiters, __ATOMIC_RELAXED) != 0, 0);
}

/* tp_ring_put_any - copy one message in (tp_ring_fits said it goes) and
 * commit it; true if a reader sleeps and must be woken (tp_ring_wake). @copy
 * (a constant): TP_RING_COPY_*, the small ones for the lengths they name.
 * The stores a send queues are the copy's, the length and stamp and the
 * head: each store to the slot's line waits in the store queue until the
 * line is this CPU's, and a queue full of them is what bounds the rate. */
static inline __attribute__((always_inline)) bool tp_ring_put_any(struct tp_ring_wr *w, const void *buf,
								  uint32_t len, int copy)
{
	unsigned char *d = tp_ring_claim(w);
	const unsigned char *src = buf;

	if (copy == TP_RING_COPY_SMALL_AVX) {
		*(tp_ring_v32 *)(void *)d = *(const tp_ring_v32 *)(const void *)src;
		*(tp_ring_v32 *)(void *)(d + len - 32) = *(const tp_ring_v32 *)(const void *)(src + len - 32);
	} else if (copy == TP_RING_COPY_SMALL) {
		__builtin_memcpy(d, src, 32);
		__builtin_memcpy(d + len - 32, src + len - 32, 32);
	} else if (copy == TP_RING_COPY_SHORT) {
		__builtin_memcpy(d, src, 16);
		__builtin_memcpy(d + len - 16, src + len - 16, 16);
	} else {
		tp_ring_copy(d, buf, len);
	}
	return tp_ring_commit(w, len);
}

/* tp_ring_put - copy one message in (tp_ring_fits said it goes) */
static inline __attribute__((always_inline)) bool tp_ring_put(struct tp_ring_wr *w, const void *buf,
							      uint32_t len)
{
	return tp_ring_put_any(w, buf, len, TP_RING_COPY_ANY);
}

/* tp_ring_write - copy one message in: 0, -EAGAIN if the slowest active
 * reader has not made room, -EMSGSIZE if @len > slot_bytes */
static inline int tp_ring_write(struct tp_ring_wr *w, const void *buf, uint32_t len)
{
	if (__builtin_expect(len > w->slot_bytes, 0))
		return -EMSGSIZE;
	if (__builtin_expect(tp_ring_head(w) - w->min_tail > w->mask, 0) && tp_ring_make_room(w) < 0)
		return -EAGAIN;
	if (tp_ring_put(w, buf, len))
		tp_ring_wake(w->r);
	return 0;
}

/* tp_ring_writer_close - mark the stream finished and wake every reader */
void tp_ring_writer_close(struct tp_ring_wr *w);

/* tp_ring_readers - active readers */
uint32_t tp_ring_readers(const struct tp_ring *r);

/* tp_ring_drop_reader - forget reader @idx (it died): the writer stops
 * waiting for it */
void tp_ring_drop_reader(struct tp_ring *r, int idx);

/* tp_ring_reader_join - take a free reader slot, starting at the current
 * head (messages written before are not seen): -EBUSY if none is free */
int tp_ring_reader_join(struct tp_ring_rd *rd, struct tp_ring *r, pid_t pid);

/* tp_ring_slot_of - the slot of message @n */
static inline struct tp_ring_slot *tp_ring_slot_of(const struct tp_ring_rd *rd, uint64_t n)
{
	return (struct tp_ring_slot *)(rd->slots + (size_t)(n & rd->mask) * rd->stride);
}

/* tp_ring_stamped - the slot of message @n holds it (acquire: and its bytes) */
static inline bool tp_ring_stamped(const struct tp_ring_rd *rd, uint64_t n)
{
	return __atomic_load_n(&tp_ring_slot_of(rd, n)->seq, __ATOMIC_ACQUIRE) == (uint32_t)(n + 1);
}

/* tp_ring_empty - no stamped message at the tail (cold): -EAGAIN, -EPIPE if
 * the writer has closed and nothing is left, or 0 if the head says there is
 * one after all */
int tp_ring_empty(struct tp_ring_rd *rd);

/* tp_ring_read - copy the next message out: its length, -EAGAIN if there
 * is none, -EPIPE if there is none and the writer has closed, -EMSGSIZE
 * (the message is skipped) if it is longer than @cap */
static inline __attribute__((always_inline)) ssize_t tp_ring_read(struct tp_ring_rd *rd, void *buf, size_t cap)
{
	const struct tp_ring_slot *s;
	uint32_t len;
	int rc;

	/* behind a head seen before, or the slot's stamp says the message is in
	 * (reading by stamps, the tail passes the last head seen) */
	if (rd->tail >= rd->head_seen && !tp_ring_stamped(rd, rd->tail) &&
	    (rc = tp_ring_empty(rd)) < 0)
		return rc;
	s = tp_ring_slot_of(rd, rd->tail);
	/* the head again every TP_RING_HEAD_EVERY messages; the slot rd->ahead
	 * past this one if the last head said it is written */
	if (!(rd->tail & (TP_RING_HEAD_EVERY - 1)))
		rd->head_seen = __atomic_load_n(&rd->r->w.head, __ATOMIC_ACQUIRE);
	if (rd->tail + rd->ahead < rd->head_seen)
		__builtin_prefetch(tp_ring_slot_of(rd, rd->tail + rd->ahead), 0, 3);
	len = s->len;
	if (__builtin_expect(len <= cap, 1))
		tp_ring_copy(buf, s->data, len);
	rd->tail++;
	/* release: our copy is done before the writer may reuse the slot */
	__atomic_store_n(&rd->me->tail, rd->tail, __ATOMIC_RELEASE);
	return len <= cap ? (ssize_t)len : -EMSGSIZE;
}

/* tp_ring_available - a message is waiting: its slot is stamped */
static inline bool tp_ring_available(const struct tp_ring_rd *rd)
{
	return rd->tail < rd->head_seen || tp_ring_stamped(rd, rd->tail);
}

/* tp_ring_wait - sleep on the futex until a message is written, the writer
 * closes, or @timeout_ns passes: 0 (look again) or -ETIMEDOUT */
int tp_ring_wait(struct tp_ring_rd *rd, uint64_t timeout_ns);

/* tp_ring_reader_leave - give the reader slot back and count it in
 * wake.left, so that a writer sees a reader leave without scanning */
void tp_ring_reader_leave(struct tp_ring_rd *rd);

/* tp_ring_left - how many readers have left so far: a writer that compares
 * it with the count it last saw after each write learns of a reader leaving
 * at once, for one load of the wake-up line the write has just read */
static inline uint32_t tp_ring_left(const struct tp_ring *r)
{
	return __atomic_load_n(&r->wake.left, __ATOMIC_ACQUIRE);
}

/* tp_ring_lagging_reader - index of an active reader at the writer's
 * cached minimum (the one holding it up), or -1 */
int tp_ring_lagging_reader(const struct tp_ring_wr *w);

#endif
