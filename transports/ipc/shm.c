// SPDX-License-Identifier: GPL-2.0-only
/* shm.c - jtr ipc's shared-memory methods. The coordinator creates a
 * segment per row in /dev/shm, sizes it, touches every page and lays out a
 * tp_ipcq queue (shm-mutex, shm-adaptive) or a tp_ring ring (shm-lockless);
 * each process maps it by name, as a separate program would. Once every
 * process has it mapped the name goes, so nothing is left in /dev/shm. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipc.h"

#define QUEUE_MAX_BYTES (64u << 20)	/* a queue is cut to fewer slots above this */
#define SPIN_LOOPS 200			/* shm-lockless: polls before a reader sleeps */

/* ipc_queue_slots - the queue length for @batch: --queue, halved until it
 * fits QUEUE_MAX_BYTES (at least 2) */
uint32_t ipc_queue_slots(const struct ipc_cfg *c, uint32_t batch)
{
	uint32_t s = c->slots;

	while (s > 2 && (uint64_t)s * batch > QUEUE_MAX_BYTES)
		s /= 2;
	return s;
}

/* ipc_shm_setup - create, size, pre-touch and lay out row @n's segment;
 * -ERANGE for a queue too large for the options, another -errno for what
 * the machine refused, with the message in @e */
int ipc_shm_setup(struct ipc_run *r, int n, struct jtr_err *e)
{
	const struct ipc_row *w = r->row;
	uint32_t bytes = w->opb * r->cfg->size;
	int fd, rc;

	snprintf(r->shm_name, sizeof(r->shm_name), "/jtr-ipc-%d-%d", (int)getpid(), n);
	r->shm_size = w->m == M_SHM_LOCKLESS ? tp_ring_size(w->slots, bytes, w->readers)
					     : tp_ipcq_size(w->slots, bytes, w->readers);
	if (!r->shm_size)
		return jtr_err_set(e, -ERANGE, "a queue of %u slots of %u bytes is out of range; use "
				   "a smaller --queue or --batch", w->slots, bytes);
	fd = shm_open(r->shm_name, O_CREAT | O_EXCL | O_RDWR, 0600);
	if (fd < 0) {
		r->shm_name[0] = 0;
		return jtr_err_set(e, -errno, "cannot create a shm segment in /dev/shm: %s",
				   strerror(errno));
	}
	if (ftruncate(fd, (off_t)r->shm_size) < 0) {
		rc = -errno;
		close(fd);
		return jtr_err_set(e, rc, "cannot size /dev/shm%s to %zu bytes: %s", r->shm_name,
				   r->shm_size, strerror(-rc));
	}
	r->shm = mmap(NULL, r->shm_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	rc = -errno;
	close(fd);
	if (r->shm == MAP_FAILED) {
		r->shm = NULL;
		return jtr_err_set(e, rc, "cannot map /dev/shm%s: %s", r->shm_name, strerror(-rc));
	}
	memset(r->shm, 0, r->shm_size);	/* allocates the pages now, not during the run */
	if (w->m == M_SHM_LOCKLESS)
		rc = tp_ring_init(r->shm, r->shm_size, w->slots, bytes, w->readers, getpid());
	else
		rc = tp_ipcq_init(r->shm, r->shm_size,
				  w->m == M_SHM_MUTEX ? TP_IPCQ_MUTEX : TP_IPCQ_ADAPTIVE, w->slots,
				  bytes, w->readers, w->low_water);
	if (rc < 0)
		return jtr_err_set(e, rc, "cannot set up the queue: %s", strerror(-rc));
	return 0;
}

/* ipc_shm_unlink - the segment's name goes (the coordinator only; the
 * mappings stay) */
void ipc_shm_unlink(struct ipc_run *r)
{
	if (r->shm_name[0] && getpid() == r->coordinator)
		shm_unlink(r->shm_name);
	r->shm_name[0] = 0;
}

/* ipc_shm_release - the name and the coordinator's mapping */
void ipc_shm_release(struct ipc_run *r)
{
	ipc_shm_unlink(r);
	if (r->shm) {
		/* no tp_ipcq_destroy: a killed process may have left a condition
		 * variable with a waiter, and destroying it would wait for ever;
		 * the memory goes with the segment */
		munmap(r->shm, r->shm_size);
		r->shm = NULL;
	}
}

/* attach - map the row's segment by name, like a separate program would;
 * NULL with the message in @e */
static void *attach(struct ipc_xport *x, struct jtr_err *e)
{
	const struct ipc_run *r = x->r;
	int fd = shm_open(r->shm_name, O_RDWR, 0);
	void *m;
	int rc;

	if (fd < 0) {
		jtr_err_set(e, -errno, "cannot open /dev/shm%s: %s", r->shm_name, strerror(errno));
		return NULL;
	}
	m = mmap(NULL, r->shm_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	rc = errno;
	close(fd);
	if (m == MAP_FAILED) {
		jtr_err_set(e, -rc, "cannot map /dev/shm%s: %s", r->shm_name, strerror(rc));
		return NULL;
	}
	return m;
}

/* ipc_shm_writer_open - the writer's end of the queue or ring */
int ipc_shm_writer_open(struct ipc_xport *x, struct jtr_err *e)
{
	struct ipc_run *r = x->r;
	void *m = attach(x, e);
	int rc;

	if (!m)
		return -1;
	if (r->row->m == M_SHM_LOCKLESS) {
		if ((rc = tp_ring_writer_open(&x->wr, m, getpid())) < 0)
			return jtr_err_set(e, rc, "cannot open the ring: %s", strerror(-rc));
		return 0;
	}
	rc = tp_ipcq_end_open(&x->qe, m, -1, r->efd_w, -1, r->efd_r, r->stop_fd, &r->board->stop);
	if (rc < 0)
		return jtr_err_set(e, rc, "cannot open the queue: %s", strerror(-rc));
	return 0;
}

/* ipc_shm_reader_open - a reader's end of the queue or ring */
int ipc_shm_reader_open(struct ipc_xport *x, struct jtr_err *e)
{
	struct ipc_run *r = x->r;
	void *m = attach(x, e);
	int rc;

	if (!m)
		return -1;
	if (r->row->m == M_SHM_LOCKLESS) {
		if ((rc = tp_ring_reader_join(&x->rd, m, getpid())) < 0)
			return jtr_err_set(e, rc, "cannot join the ring: %s", strerror(-rc));
		return 0;
	}
	rc = tp_ipcq_end_open(&x->qe, m, x->idx, r->efd_r[x->idx], r->efd_w, NULL, -1,
			      &r->board->abort);
	if (rc < 0)
		return jtr_err_set(e, rc, "cannot open the queue: %s", strerror(-rc));
	return 0;
}

/* ipc_shm_send - one batch: copied into a queue slot, or written to the
 * ring (a full ring is counted once, then the writer yields until there is
 * room or it is told to stop) */
int ipc_shm_send(struct ipc_xport *x, const unsigned char *buf, size_t len)
{
	unsigned char *slot;
	bool counted = false;
	int rc;

	if (x->r->row->m != M_SHM_LOCKLESS) {
		rc = tp_ipcq_reserve(&x->qe, &slot);
		if (rc < 0)
			return rc;
		memcpy(slot, buf, len);
		tp_ipcq_publish(&x->qe, len);
		return 0;
	}
	while ((rc = tp_ring_write(&x->wr, buf, (uint32_t)len)) == -EAGAIN) {
		if (!counted) {
			x->s->waits++;
			counted = true;
		}
		if (__atomic_load_n(&x->r->board->stop, __ATOMIC_RELAXED))
			return -ECANCELED;
		sched_yield();
		x->s->sleeps++;
	}
	return rc;
}

/* recv_ring - shm-lockless: the next batch; spin a little, then sleep on the
 * ring's futex. 0 at end of stream. */
static ssize_t recv_ring(struct ipc_xport *x, unsigned char *p, size_t cap)
{
	bool counted = false;
	ssize_t k;

	for (;;) {
		k = tp_ring_read(&x->rd, p, cap);
		if (k >= 0)
			return k;
		if (k == -EPIPE)
			return 0;
		if (k != -EAGAIN)
			return k;
		if (!counted) {
			x->s->waits++;
			counted = true;
		}
		for (int i = 0; i < SPIN_LOOPS && !tp_ring_available(&x->rd); i++)
			__builtin_ia32_pause();
		if (tp_ring_available(&x->rd))
			continue;
		if (__atomic_load_n(&x->r->board->abort, __ATOMIC_RELAXED))
			return -ECANCELED;
		tp_ring_wait(&x->rd, TP_IPCQ_WAIT_NS);
		x->s->sleeps++;
	}
}

/* ipc_shm_recv - the next batch, copied out of its slot; 0 at end of stream */
ssize_t ipc_shm_recv(struct ipc_xport *x, unsigned char *p, size_t cap)
{
	const unsigned char *slot;
	uint64_t len;
	int rc;

	if (x->r->row->m == M_SHM_LOCKLESS)
		return recv_ring(x, p, cap);
	rc = tp_ipcq_peek(&x->qe, &slot, &len);
	if (rc == -EPIPE)
		return 0;
	if (rc < 0)
		return rc;
	if (len > cap)
		return -EMSGSIZE;
	memcpy(p, slot, len);
	tp_ipcq_release(&x->qe);
	return (ssize_t)len;
}

/* ipc_shm_writer_close - end of stream */
void ipc_shm_writer_close(struct ipc_xport *x)
{
	if (x->r->row->m == M_SHM_LOCKLESS)
		tp_ring_writer_close(&x->wr);
	else
		tp_ipcq_close(&x->qe);
}
