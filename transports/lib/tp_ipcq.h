/* SPDX-License-Identifier: GPL-2.0-only */
/* tp_ipcq.h - a bounded queue of batches guarded by a process-shared mutex:
 * the shm-mutex and shm-adaptive methods of jtr ipc (the lockless one is
 * tp_ring.h).
 *
 * One writer and 1..TP_IPCQ_MAX_READERS readers; every reader sees every
 * batch (each has its own tail) and the writer waits for the slowest. A slot
 * holds one batch. Each side takes the mutex twice a batch, at its beginning
 * (is there room / a batch?) and at its end (publish / release); the copy
 * itself is done outside the lock.
 *
 * How a side that cannot go on waits:
 *   TP_IPCQ_MUTEX     a normal mutex and two condition variables, all
 *                     PTHREAD_PROCESS_SHARED
 *   TP_IPCQ_ADAPTIVE  PTHREAD_MUTEX_ADAPTIVE_NP (spins a little on contention
 *                     before sleeping) and an eventfd per process, waited on
 *                     in epoll_wait: the writer writes a waiting reader's
 *                     eventfd when it publishes; a reader writes the writer's
 *                     when it releases a slot. One eventfd per reader, never
 *                     one shared by several: a pulse read by one waiter is
 *                     gone for the others.
 * Either way a writer that found the queue full is woken only when the
 * slowest reader has drained it to the low-water mark (used <= low_water),
 * so a full queue costs one wake-up per (slots - low_water) batches, not
 * one per batch. The waiting flags are set and tested under the mutex, and
 * an eventfd stays readable until its sleeper reads it, so no wake-up is
 * lost. Every sleep also ends after TP_IPCQ_WAIT_NS to look at the stop flag.
 *
 * The queue lives in any memory (the unit tests use malloc; jtr ipc puts it
 * in a shared-memory segment). Functions return 0 or -errno.
 */
#ifndef JTR_TP_IPCQ_H
#define JTR_TP_IPCQ_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TP_IPCQ_MAGIC 0x6a74722d69706371ULL	/* "jtr-ipcq" */
#define TP_IPCQ_LINE 128
#define TP_IPCQ_MAX_READERS 16
#define TP_IPCQ_WAIT_NS 100000000LL		/* a sleep looks at the stop flag this often */

enum tp_ipcq_kind { TP_IPCQ_MUTEX = 1, TP_IPCQ_ADAPTIVE = 2 };

/* a reader's tail and waiting flag (under the mutex) */
struct tp_ipcq_rdstate {
	uint64_t tail;			/* batches this reader has released */
	uint32_t waiting;		/* adaptive: asleep on its eventfd */
} __attribute__((aligned(TP_IPCQ_LINE)));

struct tp_ipcq {
	uint64_t magic;
	uint32_t kind;			/* enum tp_ipcq_kind */
	uint32_t slots;			/* a power of two */
	uint32_t slot_bytes;		/* largest batch */
	uint32_t stride;		/* bytes from one slot to the next */
	uint32_t readers;
	uint32_t low_water;		/* wake a full writer at used <= this */
	uint64_t size;			/* of the whole queue */
	pthread_mutex_t mu;
	pthread_cond_t not_empty;	/* mutex kind: readers wait here */
	pthread_cond_t not_full;	/* mutex kind: the writer waits here */
	/* under mu */
	uint64_t head;			/* batches published */
	uint32_t closed;		/* the writer has finished */
	uint32_t writer_waiting;
	uint32_t readers_waiting;	/* mutex kind: readers in cond_wait */
	struct tp_ipcq_rdstate rd[TP_IPCQ_MAX_READERS];
	/* then the slots, each a uint64_t length and the batch */
} __attribute__((aligned(TP_IPCQ_LINE)));

/* one process's end of the queue */
struct tp_ipcq_end {
	struct tp_ipcq *q;
	int idx;			/* reader index, -1 for the writer */
	int epfd;			/* adaptive: epoll over efd_self and stop_fd */
	int efd_self;			/* adaptive: this side's eventfd */
	int efd_writer;			/* adaptive: the writer's (readers write it) */
	int efd_readers[TP_IPCQ_MAX_READERS];	/* adaptive: the readers' (the writer writes them) */
	const volatile uint32_t *stop;	/* non-zero: stop waiting (-ECANCELED) */
	uint64_t waits;			/* found empty (reader) or full (writer) and waited */
	uint64_t sleeps;		/* slept in cond_wait or epoll_wait */
};

/* tp_ipcq_size - bytes a queue of @slots x @slot_bytes needs; 0 if out of range */
size_t tp_ipcq_size(uint32_t slots, uint32_t slot_bytes, uint32_t readers);

/* tp_ipcq_init - lay a queue out in @mem (@size from tp_ipcq_size) and
 * initialise its process-shared mutex and condition variables;
 * @low_water < @slots */
int tp_ipcq_init(void *mem, size_t size, enum tp_ipcq_kind kind, uint32_t slots,
		 uint32_t slot_bytes, uint32_t readers, uint32_t low_water);

/* tp_ipcq_destroy - destroy the mutex and condition variables; only when no
 * process waits on them (glibc's cond_destroy waits for its waiters, and one
 * that was killed never leaves): a queue in a segment that goes away needs
 * no destroy */
void tp_ipcq_destroy(struct tp_ipcq *q);

/* tp_ipcq_slot - the data of the slot batch @seq goes in */
static inline unsigned char *tp_ipcq_slot(struct tp_ipcq *q, uint64_t seq)
{
	return (unsigned char *)q + sizeof(*q) + (size_t)(seq & (q->slots - 1)) * q->stride +
	       sizeof(uint64_t);
}

/* tp_ipcq_min_tail - the slowest reader's tail (call under the mutex) */
uint64_t tp_ipcq_min_tail(const struct tp_ipcq *q);

/* tp_ipcq_used - batches published and not yet released by every reader */
static inline uint64_t tp_ipcq_used(const struct tp_ipcq *q)
{
	return q->head - tp_ipcq_min_tail(q);
}

/* tp_ipcq_full - no slot is free */
static inline bool tp_ipcq_full(const struct tp_ipcq *q)
{
	return tp_ipcq_used(q) >= q->slots;
}

/* tp_ipcq_drained - used is at or below the low-water mark */
static inline bool tp_ipcq_drained(const struct tp_ipcq *q)
{
	return tp_ipcq_used(q) <= q->low_water;
}

/* tp_ipcq_end_open - this process's end: @idx is a reader index or -1 for
 * the writer. Adaptive: @efd_self is this side's eventfd (non-blocking),
 * @efd_writer and @efd_readers the others' (only what this side writes is
 * needed), @stop_fd an eventfd that becomes readable on stop, or -1. */
int tp_ipcq_end_open(struct tp_ipcq_end *e, struct tp_ipcq *q, int idx, int efd_self,
		     int efd_writer, const int *efd_readers, int stop_fd,
		     const volatile uint32_t *stop);

/* tp_ipcq_end_close - close the epoll descriptor */
void tp_ipcq_end_close(struct tp_ipcq_end *e);

/* tp_ipcq_reserve - writer: wait for a free slot; 0 and *@slot, or
 * -ECANCELED if *stop became non-zero while waiting */
int tp_ipcq_reserve(struct tp_ipcq_end *e, unsigned char **slot);

/* tp_ipcq_publish - writer: the reserved slot holds @len bytes; wake the
 * readers that wait */
void tp_ipcq_publish(struct tp_ipcq_end *e, uint64_t len);

/* tp_ipcq_close - writer: no more batches; wake every reader */
void tp_ipcq_close(struct tp_ipcq_end *e);

/* tp_ipcq_peek - reader: wait for the next batch; 0 with *@slot and *@len,
 * -EPIPE when the writer has closed and every batch was read, -ECANCELED
 * if *stop became non-zero while waiting */
int tp_ipcq_peek(struct tp_ipcq_end *e, const unsigned char **slot, uint64_t *len);

/* tp_ipcq_release - reader: done with the batch from tp_ipcq_peek; wake the
 * writer if it waits and the queue is drained to the low-water mark */
void tp_ipcq_release(struct tp_ipcq_end *e);

#endif
