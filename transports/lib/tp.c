// SPDX-License-Identifier: GPL-2.0-only
/* tp.c - the transport interface: the kinds' tables, names, addresses,
 * checks, and dispatch through the tables. Nothing here knows a kind but
 * by its table: a new kind is its file (with its struct tp_ops) and its
 * line in kind_names and kind_ops. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jtr_cli.h"
#include "tp_int.h"
#include "tp_numa.h"

/* -T's words, by kind */
static const char *const kind_names[TP_NKINDS] = {
	[TP_SHM] = "shm", [TP_TCP] = "tcp", [TP_UDP] = "udp", [TP_MCAST] = "mcast",
	[TP_UNIX] = "unix", [TP_UNIX_DGRAM] = "unix-dgram",
};

/* each kind's table (tp_int.h) */
static const struct tp_ops *const kind_ops[TP_NKINDS] = {
	[TP_SHM] = &tp_shm_ops, [TP_TCP] = &tp_tcp_ops, [TP_UDP] = &tp_udp_ops,
	[TP_MCAST] = &tp_mcast_ops, [TP_UNIX] = &tp_unix_ops, [TP_UNIX_DGRAM] = &tp_unix_dgram_ops,
};

/* ops_of - @k's table, NULL if there is no such kind */
static const struct tp_ops *ops_of(enum tp_kind k)
{
	return k >= TP_SHM && k < TP_NKINDS ? kind_ops[k] : NULL;
}

/* tp_kind_parse - a transport's name */
int tp_kind_parse(const char *s, enum tp_kind *k)
{
	for (int i = TP_SHM; i < TP_NKINDS; i++)
		if (!strcmp(s, kind_names[i])) {
			*k = (enum tp_kind)i;
			return 0;
		}
	return -EINVAL;
}

/* tp_kind_name - the name */
const char *tp_kind_name(enum tp_kind k)
{
	return ops_of(k) ? kind_names[k] : "?";
}

/* tp_kind_flags - what the kind is */
unsigned tp_kind_flags(enum tp_kind k)
{
	return ops_of(k) ? ops_of(k)->flags : 0;
}

/* tp_kind_list - "tcp, udp, mcast, unix or unix-dgram" */
const char *tp_kind_list(unsigned flags, char *buf, size_t n)
{
	size_t at = 0;
	int left = 0;

	for (int i = TP_SHM; i < TP_NKINDS; i++)
		left += tp_kind_has((enum tp_kind)i, flags);
	buf[0] = 0;
	for (int i = TP_SHM; i < TP_NKINDS && at < n; i++) {
		if (!tp_kind_has((enum tp_kind)i, flags))
			continue;
		left--;
		at += (size_t)snprintf(buf + at, n - at, "%s%s", kind_names[i],
				       left > 1 ? ", " : left == 1 ? " or " : "");
	}
	return buf;
}

/* tp_default_addr - where a transport goes when no address is given */
const char *tp_default_addr(enum tp_kind k)
{
	return ops_of(k) ? ops_of(k)->default_addr : "127.0.0.1:17391";
}

/* tp_opts_init - defaults */
void tp_opts_init(struct tp_opts *o, enum tp_kind kind)
{
	memset(o, 0, sizeof(*o));
	o->kind = kind;
	o->subs = 1;
	o->slots = TP_DEFAULT_SLOTS;
	o->msg_max = 64;
	o->iface = TP_DEFAULT_IFACE;
	o->wait_ns = 10 * 1000000000ULL;
	o->numa_cpu = o->numa_node = -1;
}

/* tp_max_msg - the largest message of the kind */
uint32_t tp_max_msg(const struct tp_opts *o)
{
	return ops_of(o->kind) ? ops_of(o->kind)->max_msg : TP_STREAM_MAX;
}

/* tp_recv_name - the receive mode's name */
const char *tp_recv_name(const struct tp_opts *o)
{
	return o->epoll ? "epoll" : o->busy ? "busy-poll" : "blocking";
}

/* size_name - @v bytes as an option would give them: 4M, 256K or 1000 */
static const char *size_name(uint32_t v, char *buf, size_t n)
{
	if (v && !(v % (1u << 20)))
		snprintf(buf, n, "%uM", v >> 20);
	else if (v && !(v % 1024))
		snprintf(buf, n, "%uK", v >> 10);
	else
		snprintf(buf, n, "%u", v);
	return buf;
}

/* sock_opts_check - the socket buffer sizes and Nagle go with their kinds */
static int sock_opts_check(const struct tp_opts *o, unsigned flags, struct jtr_err *e)
{
	char b[24], kinds[96];

	for (int i = 0; i < 2; i++) {
		uint32_t v = i ? o->rcvbuf : o->sndbuf;
		const char *name = i ? "--rcvbuf" : "--sndbuf";

		if (v && !(flags & TP_P_SOCKET))
			return jtr_err_set(e, -EINVAL, "%s %s: the option is for sockets (-T %s); an "
					   "%s ring has no socket buffer (size it with --slots)", name,
					   size_name(v, b, sizeof(b)),
					   tp_kind_list(TP_P_SOCKET, kinds, sizeof(kinds)),
					   tp_kind_name(o->kind));
		if (v && (v < TP_SOCK_BUF_MIN || v > TP_SOCK_BUF_MAX))
			return jtr_err_set(e, -EINVAL, "%s %s: use a size from 1K to 512M, e.g. 256K, "
					   "or leave the option out for the default (4M)", name,
					   size_name(v, b, sizeof(b)));
	}
	if (o->nagle && !(flags & TP_P_NAGLE))
		return jtr_err_set(e, -EINVAL, "--nagle is for %s (-T %s): %s has no Nagle "
				   "algorithm; leave --nagle out",
				   tp_kind_list(TP_P_NAGLE, kinds, sizeof(kinds)),
				   tp_kind_list(TP_P_NAGLE, b, sizeof(b)), tp_kind_name(o->kind));
	return 0;
}

/* numa_check - --numa-node and --cross-numa: for a ring's reader, on a
 * machine with the nodes asked for */
static int numa_check(const struct tp_opts *o, unsigned flags, enum tp_role role,
		      struct jtr_err *e)
{
	const char *opt = o->cross_numa ? "cross-numa" : "numa-node";

	if (!(flags & TP_P_RING) && (o->cross_numa || o->numa_node >= 0))
		return jtr_err_set(e, -EINVAL, "--%s is for the shm ring (-T shm); a socket's "
				   "buffers are the kernel's", opt);
	if (role == TP_PUB && (o->cross_numa || o->numa_node >= 0))
		return jtr_err_set(e, -EINVAL, "--%s: the ring's readers place it; give it to jtr sub "
				   "(jtr pub follows the ring's node)", opt);
	if (o->numa_node >= tp_numa_nodes())
		return tp_numa_nodes() == 1 ?
			jtr_err_set(e, -EINVAL, "--numa-node %d: this machine has one NUMA node, "
				    "node 0", o->numa_node) :
			jtr_err_set(e, -EINVAL, "--numa-node %d: use a node from 0 to %d",
				    o->numa_node, tp_numa_nodes() - 1);
	if (o->cross_numa && tp_numa_nodes() < 2)
		return jtr_err_set(e, -EINVAL, "--cross-numa: this machine has one NUMA node, so "
				   "there is no remote memory to compare with");
	return 0;
}

/* tp_check - validate without opening: what every kind checks, by its
 * properties, then the kind's own checks (ops->check) */
int tp_check(const struct tp_opts *o, enum tp_role role, struct jtr_err *e)
{
	const struct tp_ops *ops = ops_of(o->kind);
	const char *addr;
	int rc;

	if (!ops)
		return jtr_err_set(e, -EINVAL, "transport %d: no such kind", (int)o->kind);
	addr = o->addr ? o->addr : ops->default_addr;
	if (o->epoll && (ops->flags & TP_P_RING))
		return jtr_err_set(e, -EINVAL, "--recv epoll: an %s ring has no file descriptor to "
				   "wait on; use blocking (a futex) or busy-poll (-b)",
				   tp_kind_name(o->kind));
	if (o->msg_max < TP_HDR_LEN)
		return jtr_err_set(e, -EINVAL, "a message must hold the %u-byte header", TP_HDR_LEN);
	if (o->msg_max > ops->max_msg)
		return jtr_err_set(e, -EMSGSIZE, "a %u-byte message is longer than a %s %s can carry "
				   "(%u bytes)", o->msg_max, tp_kind_name(o->kind), ops->unit,
				   ops->max_msg);
	rc = numa_check(o, ops->flags, role, e);
	if (rc == 0)
		rc = sock_opts_check(o, ops->flags, e);
	if (rc == 0)
		rc = ops->check(o, role, addr, e);
	if (rc == 0 && (ops->flags & TP_P_STREAM) && (o->subs < 1 || o->subs > TP_MAX_SUBS))
		return jtr_err_set(e, -EINVAL, "%u subscribers: use 1-%d", o->subs, TP_MAX_SUBS);
	return rc;
}

/* tp_open - check, then open the kind */
int tp_open(struct tp **out, const struct tp_opts *o, enum tp_role role, struct jtr_err *e)
{
	const struct tp_ops *ops = ops_of(o->kind);
	struct tp_opts oo = *o;
	struct tp *t;
	int rc = tp_check(o, role, e);

	*out = NULL;
	if (rc < 0)
		return rc;
	t = calloc(1, sizeof(*t) + ops->priv_size);
	if (!t)
		return jtr_err_set(e, -ENOMEM, "out of memory");
	if (!oo.addr)
		oo.addr = ops->default_addr;
	t->ops = ops;
	t->role = role;
	t->busy = o->busy && !o->epoll;
	t->epoll = o->epoll;
	t->msg_max = o->msg_max;
	t->wait_ns = o->wait_ns;
	snprintf(t->desc, sizeof(t->desc), "%s %s", tp_kind_name(o->kind), oo.addr);
	rc = ops->open(t, &oo, e);
	if (rc < 0) {
		tp_close(t);
		return rc;
	}
	*out = t;
	return 0;
}

/* tp_send - the length, then the kind's send */
int tp_send(struct tp *t, const void *buf, size_t len)
{
	if (__builtin_expect(len < TP_HDR_LEN || len > t->msg_max, 0))
		return -EMSGSIZE;
	return t->ops->send(t, buf, len);
}

/* tp_recv - dispatch */
ssize_t tp_recv(struct tp *t, void *buf, size_t cap, uint64_t timeout_ns)
{
	return t->ops->recv(t, buf, cap, timeout_ns);
}

/* tp_poll - dispatch */
int tp_poll(struct tp *t, uint64_t timeout_ns)
{
	return t->ops->poll(t, timeout_ns);
}

/* tp_close - dispatch and free */
void tp_close(struct tp *t)
{
	if (!t)
		return;
	t->ops->close(t);
	free(t);
}

/* tp_describe - for messages */
const char *tp_describe(const struct tp *t)
{
	return t->desc;
}

/* tp_flags - what the transport is */
unsigned tp_flags(const struct tp *t)
{
	return t->ops->flags;
}

/* tp_peers - subscribers now */
uint32_t tp_peers(const struct tp *t)
{
	return t->role == TP_PUB && t->ops->peers ? t->ops->peers(t) : 1;
}

/* tp_peers_lost - subscribers that went away */
uint32_t tp_peers_lost(const struct tp *t)
{
	return t->ops->peers_lost ? t->ops->peers_lost(t) : t->peers_lost;
}

/* tp_blocked - sends that waited for room */
uint64_t tp_blocked(const struct tp *t)
{
	return t->blocked;
}

/* tp_fault - a segment that shrank */
int tp_fault(const struct tp *t, struct jtr_err *e)
{
	return t->ops->fault ? t->ops->fault(t, e) : 0;
}

/* tp_numa_where - where a ring's reader and the ring are */
bool tp_numa_where(const struct tp *t, int *reader_node, int *ring_node)
{
	return t->ops->numa_where && t->ops->numa_where(t, reader_node, ring_node);
}

/* tp_sock_info - a socket's options and counts */
bool tp_sock_info(const struct tp *t, struct tp_sock_info *out)
{
	memset(out, 0, sizeof(*out));
	return t->ops->sock_info && t->ops->sock_info(t, out);
}

/* tp_rejected - what the receive dropped */
void tp_rejected(const struct tp *t, struct tp_rejects *r)
{
	*r = t->rej;
	r->forged = r->out_of_window = 0;
}

/* tp_note - a notice from tp_open, or NULL */
const char *tp_note(const struct tp *t)
{
	return t->note[0] ? t->note : NULL;
}

/* tp_peer_name - the pinned peer, for messages */
const char *tp_peer_name(const struct tp *t)
{
	return t->peer_name;
}

/* tp_stream_addr - a named kind's name + ".K", an inet address's port + K */
int tp_stream_addr(const struct tp_opts *o, unsigned k, char *buf, size_t n, struct jtr_err *e)
{
	const struct tp_ops *ops = ops_of(o->kind);
	const char *addr = o->addr ? o->addr : tp_default_addr(o->kind);
	const char *colon;
	long long port;
	struct jtr_err pe;
	int len;

	if (!k) {
		len = snprintf(buf, n, "%s", addr);
		return len < 0 || (size_t)len >= n ? jtr_err_set(e, -EINVAL, "'%s': too long", addr) : 0;
	}
	if (ops && (ops->flags & TP_P_PATH)) {
		len = snprintf(buf, n, "%s.%u", addr, k);
		if (len < 0 || (size_t)len >= n || len > (int)ops->name_max)
			return jtr_err_set(e, -EINVAL, "'%s': too long for %u streams (the %s and its "
					   "'.N' are at most %u bytes)", addr, k + 1, ops->name_what,
					   ops->name_max);
		return 0;
	}
	colon = strrchr(addr, ':');
	if (!colon || jtr_parse_int(colon + 1, 1, 65535, &port, &pe) < 0)
		return jtr_err_set(e, -EINVAL, "'%s' is not HOST:PORT", addr);
	if (port + k > 65535)
		return jtr_err_set(e, -EINVAL, "'%s' with %u streams: ports %lld-%lld, past "
				   "65535; choose a lower port", addr, k + 1, port, port + k);
	len = snprintf(buf, n, "%.*s:%lld", (int)(colon - addr), addr, port + k);
	return len < 0 || (size_t)len >= n ? jtr_err_set(e, -EINVAL, "'%s': too long", addr) : 0;
}
