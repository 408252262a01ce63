/* SPDX-License-Identifier: GPL-2.0-only */
/* tp_int.h - what the transports share behind tp.h; not for programs.
 *
 * Each kind of transport is one struct tp_ops: what it is (TP_P_* flags),
 * how it is addressed and checked, and its open, send, receive, poll and
 * close. tp.c looks a kind's table up (tp_kind_ops) and calls through it;
 * a transport file defines its tables and keeps its state in a struct of
 * its own, allocated after the struct tp every kind shares (tp_priv). The
 * files call downwards only:
 *
 *   tp.c (names, checks, dispatch)
 *     tp_shm.c, tp_sock.c (the transports)
 *       tp_base.c (clock, inet addresses), tp_ring.c, tp_numa.c
 */
#ifndef JTR_TP_INT_H
#define JTR_TP_INT_H

#include <netinet/in.h>
#include <sys/socket.h>

#include "tp.h"

/* how long a blocking socket read sleeps before looking at the clock */
#define TP_SLICE_NS (100 * 1000000ULL)

struct tp_ops {
	unsigned flags;			/* TP_P_*: what the kind is */
	const char *default_addr;	/* where it goes when no address is given */
	uint32_t max_msg;		/* the longest message it carries in one piece */
	const char *unit;		/* what carries a message: "datagram", for errors */
	const char *name_what;		/* TP_P_PATH: "segment name", "socket path" */
	unsigned name_max;		/* TP_P_PATH: the longest name, a stream's ".K" in it */
	size_t priv_size;		/* its own state, after struct tp (tp_priv) */

	/* the kind's own checks of @o for @role, @addr its address (the
	 * default where none was given); after tp_check's common ones */
	int (*check)(const struct tp_opts *o, enum tp_role role, const char *addr,
		     struct jtr_err *e);
	/* open by t->role; @o->addr is set. On an error tp_close follows. */
	int (*open)(struct tp *t, const struct tp_opts *o, struct jtr_err *e);
	int (*send)(struct tp *t, const void *buf, size_t len);
	ssize_t (*recv)(struct tp *t, void *buf, size_t cap, uint64_t timeout_ns);
	int (*poll)(struct tp *t, uint64_t timeout_ns);
	/* release what open took, however far it got */
	void (*close)(struct tp *t);

	/* optional: NULL gives the default */
	uint32_t (*peers)(const struct tp *t);		/* pub's subscribers now (1) */
	uint32_t (*peers_lost)(const struct tp *t);	/* (t->peers_lost) */
	int (*fault)(const struct tp *t, struct jtr_err *e);	/* (0: none) */
	bool (*numa_where)(const struct tp *t, int *reader_node, int *ring_node); /* (false) */
	bool (*sock_info)(const struct tp *t, struct tp_sock_info *out);	/* (false) */
};

/* the kinds' tables, one per kind (tp.c's kind_ops names each for its kind) */
extern const struct tp_ops tp_shm_ops;
extern const struct tp_ops tp_tcp_ops, tp_udp_ops, tp_mcast_ops, tp_unix_ops, tp_unix_dgram_ops;

/* what every kind has; the kind's own state follows (tp_priv) */
struct tp {
	const struct tp_ops *ops;
	enum tp_role role;
	bool busy;			/* busy-poll receive */
	bool epoll;			/* sockets: epoll receive */
	uint32_t msg_max;
	uint64_t wait_ns;
	char desc[160];
	char note[320];			/* what tp_open did that the user should hear of */
	char peer_name[72];		/* the session's peer, once pinned */
	uint32_t peers_lost;
	uint64_t blocked;		/* sends that found the transport full and waited */
	struct tp_rejects rej;		/* malformed and foreign, counted by the receiver */
	/* the kind's own state, ops->priv_size bytes: at a fixed offset, so
	 * reaching it costs no load on the hot paths */
	unsigned char priv[] __attribute__((aligned(16)));
};

/* tp_priv - the kind's own state of @t */
static inline void *tp_priv(const struct tp *t)
{
	return (void *)t->priv;
}

/* tp_base.c */

/* tp_now_ns - CLOCK_MONOTONIC for timeouts */
int64_t tp_now_ns(void);

/* tp_parse_inet - "A.B.C.D:PORT" (IPv4) or "[ADDR]:PORT" (IPv6) into @ss */
int tp_parse_inet(const char *s, struct sockaddr_storage *ss, socklen_t *len, struct jtr_err *e);

#endif
