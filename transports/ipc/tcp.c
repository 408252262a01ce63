// SPDX-License-Identifier: GPL-2.0-only
/* tcp.c - jtr ipc's loopback TCP methods: tcp (blocking send and recv) and
 * tcp-epoll (non-blocking sockets waited on in epoll_wait).
 *
 * Why not tp_sock.c, the transport library's TCP: it fits neither end.
 *  - tp_sock carries whole messages, each with a tp_msg header, and reads a
 *    stream through its own buffer to hand back one message at a time. jtr
 *    ipc compares methods that all do the same user-space work, one copy in
 *    and one copy out per batch: here a batch is raw bytes (the objects
 *    carry their own sequence numbers), written straight from the writer's
 *    buffer and read straight into the reader's, wherever recv() cuts the
 *    stream (an object may straddle two reads). A header and a second copy
 *    would charge TCP for work the shm methods do not do.
 *  - tcp-epoll writes one batch to N non-blocking sockets at once, taking
 *    partial writes from each as it will take them and waiting in one
 *    epoll_wait on all of them and an eventfd that says "stop"; tp_sock's
 *    sockets stay blocking and a send writes one socket to the end.
 *  - both count each write that would block (the queue is full) and each
 *    read that would block (it is empty), which tp_sock does not expose.
 *  - the pairs are made by the coordinator before it forks, on an ephemeral
 *    port of 127.0.0.1, so every child inherits its connected end and no run
 *    can meet a busy port; tp_sock listens on a named address and waits for
 *    its peers.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "ipc.h"

/* ipc_tcp_setup - a connected loopback pair per reader (an ephemeral
 * port); -errno with the message in @e */
int ipc_tcp_setup(struct ipc_run *r, struct jtr_err *e)
{
	struct ipc_row *w = r->row;
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	int one = 1, ls;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(ls, IPC_MAX_READERS) < 0 || getsockname(ls, (struct sockaddr *)&a, &al) < 0) {
		int rc = jtr_err_set(e, -errno, "cannot listen on 127.0.0.1: %s", strerror(errno));

		if (ls >= 0)
			close(ls);
		return rc;
	}
	for (uint32_t i = 0; i < w->readers; i++) {
		int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), s = -1;

		if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) < 0 ||
		    (s = accept4(ls, NULL, NULL, SOCK_CLOEXEC)) < 0) {
			int rc = jtr_err_set(e, -errno, "cannot connect on 127.0.0.1:%d: %s",
					     ntohs(a.sin_port), strerror(errno));

			if (c >= 0)
				close(c);
			close(ls);
			return rc;
		}
		if (!r->cfg->nagle) {
			setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		}
		if (w->m == M_TCP_EPOLL) {
			fcntl(c, F_SETFL, fcntl(c, F_GETFL) | O_NONBLOCK);
			fcntl(s, F_SETFL, fcntl(s, F_GETFL) | O_NONBLOCK);
		}
		r->wfd[i] = s;
		r->rfd[i] = c;
	}
	al = sizeof(w->sndbuf);
	getsockopt(r->wfd[0], SOL_SOCKET, SO_SNDBUF, &w->sndbuf, &al);
	al = sizeof(w->rcvbuf);
	getsockopt(r->rfd[0], SOL_SOCKET, SO_RCVBUF, &w->rcvbuf, &al);
	close(ls);
	return 0;
}

/* ipc_tcp_writer_open - tcp-epoll: every reader's socket (edge-triggered,
 * writable) and the stop eventfd in one epoll set */
int ipc_tcp_writer_open(struct ipc_xport *x, struct jtr_err *e)
{
	const struct ipc_run *r = x->r;
	struct epoll_event ev = { .events = EPOLLOUT | EPOLLET };

	if (r->row->m != M_TCP_EPOLL)
		return 0;
	if ((x->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		return jtr_err_set(e, -errno, "epoll_create1: %s", strerror(errno));
	for (uint32_t i = 0; i < r->row->readers; i++) {
		ev.data.u32 = i;
		if (epoll_ctl(x->epfd, EPOLL_CTL_ADD, r->wfd[i], &ev) < 0)
			return jtr_err_set(e, -errno, "epoll_ctl: %s", strerror(errno));
	}
	ev.events = EPOLLIN;
	ev.data.u32 = IPC_MAX_READERS;
	if (epoll_ctl(x->epfd, EPOLL_CTL_ADD, r->stop_fd, &ev) < 0)
		return jtr_err_set(e, -errno, "epoll_ctl: %s", strerror(errno));
	return 0;
}

/* ipc_tcp_reader_open - the reader's socket (tcp-epoll: in its epoll set) */
int ipc_tcp_reader_open(struct ipc_xport *x, struct jtr_err *e)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };

	x->fd = x->r->rfd[x->idx];
	if (x->r->row->m != M_TCP_EPOLL)
		return 0;
	if ((x->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    epoll_ctl(x->epfd, EPOLL_CTL_ADD, x->fd, &ev) < 0)
		return jtr_err_set(e, -errno, "epoll: %s", strerror(errno));
	return 0;
}

/* ipc_tcp_writer_close - end of stream: close every reader's socket */
void ipc_tcp_writer_close(struct ipc_xport *x)
{
	for (uint32_t i = 0; i < x->r->row->readers; i++)
		close(x->r->wfd[i]);
}

/* send_all_blocking - tcp: the whole batch to one reader; a send that would
 * block is counted as a full queue */
static int send_all_blocking(struct ipc_xport *x, int fd, const unsigned char *p, size_t len)
{
	ssize_t k = send(fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);

	if (k == (ssize_t)len)
		return 0;
	if (k < 0 && errno != EAGAIN)
		return -errno;
	if (k < 0)
		k = 0;
	x->s->waits++;
	while ((size_t)k < len) {
		ssize_t m = send(fd, p + k, len - (size_t)k, MSG_NOSIGNAL);

		if (m < 0 && errno == EINTR)
			continue;
		if (m < 0)
			return -errno;
		x->s->sleeps++;
		k += m;
	}
	return 0;
}

/* send_all_epoll - tcp-epoll: the batch to every reader, non-blocking, in
 * whatever order their sockets take it; epoll_wait when none does */
static int send_all_epoll(struct ipc_xport *x, const unsigned char *p, size_t len)
{
	const struct ipc_run *r = x->r;
	size_t left[IPC_MAX_READERS];
	bool full[IPC_MAX_READERS] = { false };
	uint32_t n = r->row->readers, pending = n;

	for (uint32_t i = 0; i < n; i++)
		left[i] = len;
	while (pending) {
		bool moved = false;

		for (uint32_t i = 0; i < n; i++) {
			ssize_t k;

			if (!left[i])
				continue;
			k = send(r->wfd[i], p + len - left[i], left[i], MSG_NOSIGNAL);
			if (k > 0) {
				left[i] -= (size_t)k;
				pending -= !left[i];
				moved = true;
			} else if (k < 0 && errno != EAGAIN && errno != EINTR) {
				return -errno;
			}
			if (left[i] && !full[i]) {
				full[i] = true;
				x->s->waits++;
			}
		}
		if (pending && !moved) {
			struct epoll_event ev[IPC_MAX_READERS + 1];

			if (__atomic_load_n(&r->board->stop, __ATOMIC_RELAXED) &&
			    __atomic_load_n(&r->board->abort, __ATOMIC_RELAXED))
				return -ECANCELED;
			epoll_wait(x->epfd, ev, IPC_MAX_READERS + 1, (int)(TP_IPCQ_WAIT_NS / 1000000));
			x->s->sleeps++;
		}
	}
	return 0;
}

/* ipc_tcp_send - one batch to every reader */
int ipc_tcp_send(struct ipc_xport *x, const unsigned char *buf, size_t len)
{
	int rc;

	if (x->r->row->m == M_TCP_EPOLL)
		return send_all_epoll(x, buf, len);
	for (uint32_t i = 0; i < x->r->row->readers; i++)
		if ((rc = send_all_blocking(x, x->r->wfd[i], buf, len)) < 0)
			return rc;
	return 0;
}

/* ipc_tcp_recv - up to @cap bytes; a read that would block is counted as an
 * empty queue. 0 at end of stream. */
ssize_t ipc_tcp_recv(struct ipc_xport *x, unsigned char *p, size_t cap)
{
	bool counted = false;
	ssize_t k;

	for (;;) {
		k = recv(x->fd, p, cap, MSG_DONTWAIT);
		if (k >= 0)
			return k;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -errno;
		if (!counted) {
			x->s->waits++;
			counted = true;
		}
		x->s->sleeps++;
		if (x->r->row->m == M_TCP) {
			do
				k = recv(x->fd, p, cap, 0);
			while (k < 0 && errno == EINTR);
			return k < 0 ? -errno : k;
		} else {
			struct epoll_event ev;

			if (__atomic_load_n(&x->r->board->abort, __ATOMIC_RELAXED))
				return -ECANCELED;
			epoll_wait(x->epfd, &ev, 1, (int)(TP_IPCQ_WAIT_NS / 1000000));
		}
	}
}
