/* SPDX-License-Identifier: GPL-2.0-only */
/* tp_int.h - what the transports share behind tp.h; not for programs. */
#ifndef JTR_TP_INT_H
#define JTR_TP_INT_H

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "tp.h"
#include "tp_ring.h"

/* how long a blocking socket read sleeps before looking at the clock */
#define TP_SLICE_NS (100 * 1000000ULL)

struct tp_shm_seg {
	char name[128];			/* "/jtr-NAME-a" */
	struct tp_ring *ring;
	size_t size;
	bool created;
	volatile sig_atomic_t faulted;	/* shrank under us: now zero pages (tp_shm.c) */
};

struct tp {
	enum tp_kind kind;
	enum tp_role role;
	bool busy;
	bool epoll;
	int epfd;			/* epoll receive: the epoll instance (-1: none) */
	uint32_t msg_max;
	uint64_t wait_ns;
	char desc[160];
	char note[320];			/* what tp_open did that the user should hear of */
	uint32_t peers_lost;
	struct tp_rejects rej;		/* malformed and foreign, counted by the receiver */

	/* shm: [0] carries pub->sub and ping->pong, [1] pong->ping */
	struct tp_shm_seg seg[2];
	struct tp_ring_wr wr;
	struct tp_ring_rd rd;
	bool writing, reading;
	volatile sig_atomic_t faulted;	/* one of seg[] shrank under us */
	uint32_t left_seen;		/* writer: tp_ring_left() when last looked */
	int32_t start_pids[TP_RING_MAX_READERS];	/* writer: its readers at the start (0: none) */
	int reader_node, ring_node;	/* -1 until the ring is placed */

	/* sockets */
	int fd;				/* the data socket (-1: none) */
	int lfd;			/* listening socket (-1: none) */
	int subs[TP_MAX_SUBS];		/* pub on a stream: one per subscriber */
	uint32_t nsubs;
	struct sockaddr_storage dst;	/* datagram destination */
	socklen_t dstlen;
	bool have_dst;
	struct sockaddr_storage peer;	/* unconnected datagram receiver: the session's peer */
	socklen_t peerlen;
	bool have_peer;
	char peer_name[72];
	bool connected;			/* fd is connect()ed: plain send() */
	char unlink_path[108];		/* a unix socket path we bound */
	unsigned char *rbuf;		/* stream receive buffer */
	size_t rcap, roff, rlen;
	uint32_t sndbuf, rcvbuf;	/* the sizes to ask for (tp_opts, 0 made the default) */
	bool nagle;			/* tcp: no TCP_NODELAY */
	int sndbuf_got, rcvbuf_got;	/* read back from the first data socket (0: none yet) */
	uint64_t msgs_out, msgs_in;	/* messages sent and received (tp_sock_info) */
};

/* tp_now_ns - CLOCK_MONOTONIC for timeouts */
int64_t tp_now_ns(void);

/* tp_parse_inet - "A.B.C.D:PORT" (IPv4) or "[ADDR]:PORT" (IPv6) into @ss */
int tp_parse_inet(const char *s, struct sockaddr_storage *ss, socklen_t *len, struct jtr_err *e);

int tp_shm_open(struct tp *t, const struct tp_opts *o, struct jtr_err *e);
int tp_shm_send(struct tp *t, const void *buf, size_t len);
ssize_t tp_shm_recv(struct tp *t, void *buf, size_t cap, uint64_t timeout_ns);
int tp_shm_poll(struct tp *t, uint64_t timeout_ns);
void tp_shm_close(struct tp *t);
uint32_t tp_shm_peers_lost(const struct tp *t);

/* tp_addr_name - @ss as "A.B.C.D:PORT", "[V6]:PORT" or a unix address */
void tp_addr_name(const struct sockaddr_storage *ss, socklen_t len, char *buf, size_t size);

int tp_sock_open(struct tp *t, const struct tp_opts *o, struct jtr_err *e);
int tp_sock_send(struct tp *t, const void *buf, size_t len);
ssize_t tp_sock_recv(struct tp *t, void *buf, size_t cap, uint64_t timeout_ns);
int tp_sock_poll(struct tp *t, uint64_t timeout_ns);
void tp_sock_close(struct tp *t);

#endif
