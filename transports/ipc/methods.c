// SPDX-License-Identifier: GPL-2.0-only
/* methods.c - the five methods of jtr ipc behind one interface, for the
 * writer and reader processes: open an end, hand over a batch, take the
 * next piece of the stream, close. shm.c and tcp.c do the work; they
 * return -errno (an open, with the message in a jtr_err) and leave ending
 * the process to the coordinator. */

#include "ipc.h"

const char *const ipc_method_names[M_COUNT] = {
	"shm-mutex", "shm-adaptive", "shm-lockless", "tcp", "tcp-epoll",
};

/* is_shm - the method goes through the shm segment */
static bool is_shm(const struct ipc_xport *x)
{
	return x->r->row->m <= M_SHM_LOCKLESS;
}

/* ipc_writer_open - the writer's end of the row's method */
int ipc_writer_open(struct ipc_xport *x, struct jtr_err *e)
{
	return is_shm(x) ? ipc_shm_writer_open(x, e) : ipc_tcp_writer_open(x, e);
}

/* ipc_reader_open - a reader's end of the row's method */
int ipc_reader_open(struct ipc_xport *x, struct jtr_err *e)
{
	return is_shm(x) ? ipc_shm_reader_open(x, e) : ipc_tcp_reader_open(x, e);
}

/* ipc_writer_close - end of stream */
void ipc_writer_close(struct ipc_xport *x)
{
	if (is_shm(x))
		ipc_shm_writer_close(x);
	else
		ipc_tcp_writer_close(x);
}

/* ipc_send_batch - hand one batch over to every reader */
int ipc_send_batch(struct ipc_xport *x, const unsigned char *buf, size_t len)
{
	return is_shm(x) ? ipc_shm_send(x, buf, len) : ipc_tcp_send(x, buf, len);
}

/* ipc_recv_batch - the next piece of the stream into @p (@cap bytes free);
 * 0 at end of stream */
ssize_t ipc_recv_batch(struct ipc_xport *x, unsigned char *p, size_t cap)
{
	return is_shm(x) ? ipc_shm_recv(x, p, cap) : ipc_tcp_recv(x, p, cap);
}

/* ipc_sync_counts - the queue's wait counts into the board (the tp_ipcq
 * methods count in their end of the queue; the others in the board) */
void ipc_sync_counts(struct ipc_xport *x)
{
	enum ipc_method m = x->r->row->m;

	if (m == M_SHM_MUTEX || m == M_SHM_ADAPTIVE) {
		x->s->waits = x->qe.waits;
		x->s->sleeps = x->qe.sleeps;
	}
}
