// SPDX-License-Identifier: GPL-2.0-only
/* tp_ipcq.c - the mutex-guarded batch queue (see tp_ipcq.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "tp_ipcq.h"

/* stride_for - length word plus @slot_bytes, rounded to a cache line */
static uint32_t stride_for(uint32_t slot_bytes)
{
	return (uint32_t)((sizeof(uint64_t) + slot_bytes + 63) & ~(size_t)63);
}

/* tp_ipcq_size - bytes the queue needs */
size_t tp_ipcq_size(uint32_t slots, uint32_t slot_bytes, uint32_t readers)
{
	if (slots < 2 || (slots & (slots - 1)) || slots > (1u << 20) || slot_bytes == 0 ||
	    slot_bytes > (1u << 28) || readers == 0 || readers > TP_IPCQ_MAX_READERS)
		return 0;
	return sizeof(struct tp_ipcq) + (size_t)slots * stride_for(slot_bytes);
}

/* tp_ipcq_init - the layout, then the shared mutex and condition variables */
int tp_ipcq_init(void *mem, size_t size, enum tp_ipcq_kind kind, uint32_t slots,
		 uint32_t slot_bytes, uint32_t readers, uint32_t low_water)
{
	struct tp_ipcq *q = mem;
	size_t need = tp_ipcq_size(slots, slot_bytes, readers);
	pthread_mutexattr_t ma;
	pthread_condattr_t ca;
	int rc;

	if (!need || size < need || low_water >= slots ||
	    (kind != TP_IPCQ_MUTEX && kind != TP_IPCQ_ADAPTIVE))
		return -EINVAL;
	memset(q, 0, sizeof(*q));
	q->magic = TP_IPCQ_MAGIC;
	q->kind = kind;
	q->slots = slots;
	q->slot_bytes = slot_bytes;
	q->stride = stride_for(slot_bytes);
	q->readers = readers;
	q->low_water = low_water;
	q->size = need;

	pthread_mutexattr_init(&ma);
	rc = pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	if (!rc && kind == TP_IPCQ_ADAPTIVE)
		rc = pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
	if (!rc)
		rc = pthread_mutex_init(&q->mu, &ma);
	pthread_mutexattr_destroy(&ma);
	if (rc)
		return -rc;
	pthread_condattr_init(&ca);
	rc = pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
	if (!rc)
		rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (!rc)
		rc = pthread_cond_init(&q->not_empty, &ca);
	if (!rc)
		rc = pthread_cond_init(&q->not_full, &ca);
	pthread_condattr_destroy(&ca);
	return -rc;
}

/* tp_ipcq_destroy - the mutex and condition variables */
void tp_ipcq_destroy(struct tp_ipcq *q)
{
	pthread_cond_destroy(&q->not_full);
	pthread_cond_destroy(&q->not_empty);
	pthread_mutex_destroy(&q->mu);
}

/* tp_ipcq_min_tail - the slowest reader's tail */
uint64_t tp_ipcq_min_tail(const struct tp_ipcq *q)
{
	uint64_t m = q->rd[0].tail;

	for (uint32_t i = 1; i < q->readers; i++)
		if (q->rd[i].tail < m)
			m = q->rd[i].tail;
	return m;
}

/* tp_ipcq_end_open - this process's end; the adaptive kind gets an epoll */
int tp_ipcq_end_open(struct tp_ipcq_end *e, struct tp_ipcq *q, int idx, int efd_self,
		     int efd_writer, const int *efd_readers, int stop_fd,
		     const volatile uint32_t *stop)
{
	struct epoll_event ev = { .events = EPOLLIN };

	if (idx < -1 || idx >= (int)q->readers)
		return -EINVAL;
	memset(e, 0, sizeof(*e));
	e->q = q;
	e->idx = idx;
	e->epfd = -1;
	e->efd_self = efd_self;
	e->efd_writer = efd_writer;
	e->stop = stop;
	if (q->kind != TP_IPCQ_ADAPTIVE)
		return 0;
	if (idx < 0 && efd_readers)
		memcpy(e->efd_readers, efd_readers, q->readers * sizeof(int));
	e->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (e->epfd < 0)
		return -errno;
	ev.data.fd = efd_self;
	if (epoll_ctl(e->epfd, EPOLL_CTL_ADD, efd_self, &ev) < 0)
		goto fail;
	ev.data.fd = stop_fd;
	if (stop_fd >= 0 && epoll_ctl(e->epfd, EPOLL_CTL_ADD, stop_fd, &ev) < 0)
		goto fail;
	return 0;
fail:
	close(e->epfd);
	e->epfd = -1;
	return -errno;
}

/* tp_ipcq_end_close - the epoll descriptor */
void tp_ipcq_end_close(struct tp_ipcq_end *e)
{
	if (e->epfd >= 0)
		close(e->epfd);
	e->epfd = -1;
}

/* stopped - the stop flag */
static inline bool stopped(const struct tp_ipcq_end *e)
{
	return e->stop && *e->stop;
}

/* cond_sleep - one timed wait on @c (mutex kind; mu held) */
static void cond_sleep(struct tp_ipcq_end *e, pthread_cond_t *c)
{
	struct timespec dl;

	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_nsec += TP_IPCQ_WAIT_NS;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(c, &e->q->mu, &dl);
	e->sleeps++;
}

/* efd_sleep - unlock, wait for this side's eventfd (or stop), reset it,
 * lock again (adaptive kind) */
static void efd_sleep(struct tp_ipcq_end *e)
{
	struct epoll_event ev[2];
	uint64_t v;

	pthread_mutex_unlock(&e->q->mu);
	epoll_wait(e->epfd, ev, 2, (int)(TP_IPCQ_WAIT_NS / 1000000));
	if (read(e->efd_self, &v, sizeof(v)) < 0) {
		/* EAGAIN: a timeout or the stop fd; nothing to reset */
	}
	e->sleeps++;
	pthread_mutex_lock(&e->q->mu);
}

/* pulse - add one to an eventfd */
static void pulse(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, sizeof(one)) < 0) {
		/* EAGAIN only at a count of 2^64 - 2: the sleeper is awake anyway */
	}
}

/* tp_ipcq_reserve - wait for room */
int tp_ipcq_reserve(struct tp_ipcq_end *e, unsigned char **slot)
{
	struct tp_ipcq *q = e->q;
	bool counted = false;
	uint64_t head;

	pthread_mutex_lock(&q->mu);
	while (tp_ipcq_full(q)) {
		if (stopped(e)) {
			q->writer_waiting = 0;
			pthread_mutex_unlock(&q->mu);
			return -ECANCELED;
		}
		if (!counted) {
			e->waits++;
			counted = true;
		}
		q->writer_waiting = 1;
		if (q->kind == TP_IPCQ_MUTEX)
			cond_sleep(e, &q->not_full);
		else
			efd_sleep(e);
	}
	q->writer_waiting = 0;
	head = q->head;
	pthread_mutex_unlock(&q->mu);
	*slot = tp_ipcq_slot(q, head);
	return 0;
}

/* wake_readers - the readers flagged waiting (mu held): cleared, and their
 * mask returned so the eventfds are written after the unlock */
static uint32_t waiting_readers(struct tp_ipcq *q)
{
	uint32_t mask = 0;

	for (uint32_t i = 0; i < q->readers; i++)
		if (q->rd[i].waiting) {
			q->rd[i].waiting = 0;
			mask |= 1u << i;
		}
	return mask;
}

/* wake - after the unlock: broadcast, or pulse each reader in @mask */
static void wake(struct tp_ipcq_end *e, bool cond_waiters, uint32_t mask)
{
	if (e->q->kind == TP_IPCQ_MUTEX) {
		if (cond_waiters)
			pthread_cond_broadcast(&e->q->not_empty);
		return;
	}
	for (uint32_t i = 0; mask; i++, mask >>= 1)
		if (mask & 1)
			pulse(e->efd_readers[i]);
}

/* tp_ipcq_publish - the length, then the head */
void tp_ipcq_publish(struct tp_ipcq_end *e, uint64_t len)
{
	struct tp_ipcq *q = e->q;
	uint32_t mask = 0;
	bool waiters;

	pthread_mutex_lock(&q->mu);
	((uint64_t *)tp_ipcq_slot(q, q->head))[-1] = len;
	q->head++;
	waiters = q->readers_waiting != 0;
	if (q->kind == TP_IPCQ_ADAPTIVE)
		mask = waiting_readers(q);
	pthread_mutex_unlock(&q->mu);
	wake(e, waiters, mask);
}

/* tp_ipcq_close - closed, then every waiting reader woken */
void tp_ipcq_close(struct tp_ipcq_end *e)
{
	struct tp_ipcq *q = e->q;
	uint32_t mask = 0;

	pthread_mutex_lock(&q->mu);
	q->closed = 1;
	if (q->kind == TP_IPCQ_ADAPTIVE)
		mask = waiting_readers(q);
	pthread_mutex_unlock(&q->mu);
	wake(e, true, mask);
}

/* tp_ipcq_peek - wait for the next batch */
int tp_ipcq_peek(struct tp_ipcq_end *e, const unsigned char **slot, uint64_t *len)
{
	struct tp_ipcq *q = e->q;
	struct tp_ipcq_rdstate *me = &q->rd[e->idx];
	bool counted = false;
	uint64_t tail;

	pthread_mutex_lock(&q->mu);
	while (q->head == me->tail) {
		if (q->closed || stopped(e)) {
			int rc = q->closed ? -EPIPE : -ECANCELED;

			me->waiting = 0;
			pthread_mutex_unlock(&q->mu);
			return rc;
		}
		if (!counted) {
			e->waits++;
			counted = true;
		}
		if (q->kind == TP_IPCQ_MUTEX) {
			q->readers_waiting++;
			cond_sleep(e, &q->not_empty);
			q->readers_waiting--;
		} else {
			me->waiting = 1;
			efd_sleep(e);
		}
	}
	me->waiting = 0;
	tail = me->tail;
	pthread_mutex_unlock(&q->mu);
	*slot = tp_ipcq_slot(q, tail);
	*len = ((const uint64_t *)*slot)[-1];
	return 0;
}

/* tp_ipcq_release - the tail, then the writer if it waits and the queue
 * has drained to the low-water mark */
void tp_ipcq_release(struct tp_ipcq_end *e)
{
	struct tp_ipcq *q = e->q;
	bool wake_writer;

	pthread_mutex_lock(&q->mu);
	q->rd[e->idx].tail++;
	wake_writer = q->writer_waiting && tp_ipcq_drained(q);
	if (wake_writer)
		q->writer_waiting = 0;
	pthread_mutex_unlock(&q->mu);
	if (!wake_writer)
		return;
	if (q->kind == TP_IPCQ_MUTEX)
		pthread_cond_signal(&q->not_full);
	else
		pulse(e->efd_writer);
}
