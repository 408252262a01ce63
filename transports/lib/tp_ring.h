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
 * (release): a reader learns that its next message is there from the slot
 * itself, not from the writer's head, so a message moves the slot's lines
 * between the two caches and nothing else (the head's line stays with the
 * writer; a reader polling an empty ring reads its next slot and the closed
 * word, which the writer does not store to while running).
 *
 * Readers poll their next slot (busy) or sleep on a futex (blocking): a
 * reader counts itself in wake.waiters and rechecks the head before
 * sleeping; the writer stores the head with a full barrier and wakes only
 * when waiters is non-zero, so a busy-poll run makes no syscall at all.
 *
 * The ring lives in any memory (the unit tests use malloc); tp_shm.c puts it
 * in a shared segment. Functions return 0, a length or -errno.
 */
#ifndef JTR_TP_RING_H
#define JTR_TP_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TP_RING_MAGIC 0x6a74722d72696e67ULL	/* "jtr-ring" */
#define TP_RING_VERSION 3
#define TP_RING_LINE 128
#define TP_RING_MAX_READERS 64

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

/* a slot: length, sequence stamp, then the message */
struct tp_ring_slot {
	uint32_t len;
	uint32_t seq;			/* (uint32_t)(message number + 1), stored last */
	unsigned char data[];
};

/* the writer's private view */
struct tp_ring_wr {
	struct tp_ring *r;
	unsigned char *slots;
	uint64_t head;
	uint64_t min_tail;		/* cached: no active reader is behind it */
	uint32_t mask;
	uint32_t stride;
	uint32_t slot_bytes;
};

/* a reader's private view */
struct tp_ring_rd {
	struct tp_ring *r;
	unsigned char *slots;
	struct tp_ring_reader *me;
	uint64_t tail;
	uint64_t head_seen;		/* cached head: no reload while behind it */
	uint32_t mask;
	uint32_t stride;
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

/* tp_ring_write - copy one message in: 0, -EAGAIN if the slowest active
 * reader has not made room, -EMSGSIZE if @len > slot_bytes */
int tp_ring_write(struct tp_ring_wr *w, const void *buf, uint32_t len);

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

/* tp_ring_read - copy the next message out: its length, -EAGAIN if there
 * is none, -EPIPE if there is none and the writer has closed, -EMSGSIZE
 * (the message is skipped) if it is longer than @cap */
ssize_t tp_ring_read(struct tp_ring_rd *rd, void *buf, size_t cap);

/* tp_ring_available - a message is waiting (reloads the head) */
bool tp_ring_available(struct tp_ring_rd *rd);

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
