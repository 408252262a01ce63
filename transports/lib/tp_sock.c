// SPDX-License-Identifier: GPL-2.0-only
/* tp_sock.c - tcp, udp, mcast, unix and unix-dgram over sockets.
 *
 * Sockets stay blocking; a blocking receive sleeps in the kernel in slices
 * of TP_SLICE_NS (SO_RCVTIMEO) so timeouts and Ctrl-C are seen, a
 * busy-poll receive calls recv with MSG_DONTWAIT in a loop, and an epoll
 * receive calls recv with MSG_DONTWAIT and, when nothing is there, waits in
 * epoll_wait (level-triggered, the data socket alone) for at most a slice.
 * Sends stay blocking in every mode. Streams carry
 * whole messages framed by the header's length and are read through a
 * buffer, so a receive is one recv() for many small messages.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <linux/sock_diag.h>	/* SK_MEMINFO_DROPS */
#include <linux/tcp.h>	/* struct tcp_info with tcpi_segs_out (glibc's has not) */
#include <poll.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "tp_int.h"

#define CONNECT_RETRY_NS (20 * 1000000ULL)

/* a socket transport's state (tp_priv) */
struct tp_sock {
	int fd;				/* the data socket (-1: none) */
	int lfd;			/* listening socket (-1: none) */
	int epfd;			/* epoll receive: the epoll instance (-1: none) */
	int subs[TP_MAX_SUBS];		/* pub on a stream: one per subscriber */
	uint32_t nsubs;
	struct sockaddr_storage dst;	/* datagram destination */
	socklen_t dstlen;
	bool have_dst;
	struct sockaddr_storage peer;	/* unconnected datagram receiver: the session's peer */
	socklen_t peerlen;
	bool have_peer;
	bool peer_data;			/* a message other than a hello came from it */
	uint64_t session;		/* its hello's session id; a datagram pub's own */
	int64_t hello_ns;		/* a datagram pub: when it last said hello (0: never again) */
	int64_t open_ns;		/* a datagram pub: when it said its first hello */
	int64_t look_ns;		/* a datagram pub: when it last looked at the clock */
	uint32_t sends;			/* a datagram pub: sends since it looked at the clock */
	uint32_t look;			/* a datagram pub: looks every so many sends (1..HELLO_LOOK) */
	bool connected;			/* fd is connect()ed: plain send() */
	char unlink_path[108];		/* a unix socket path we bound */
	unsigned char *rbuf;		/* stream receive buffer */
	size_t rcap, roff, rlen;
	uint32_t sndbuf, rcvbuf;	/* the sizes to ask for (tp_opts, 0 made the default) */
	bool nagle;			/* tcp: no TCP_NODELAY */
	int sndbuf_got, rcvbuf_got;	/* read back from the first data socket (0: none yet) */
	uint64_t msgs_out, msgs_in;	/* messages sent and received (tp_sock_info) */
};

/* sock_of - @t's socket state */
static inline struct tp_sock *sock_of(const struct tp *t)
{
	return tp_priv(t);
}

/* has - @t's kind has the property @flag */
static inline bool has(const struct tp *t, unsigned flag)
{
	return t->ops->flags & flag;
}

/* set_timeo - SO_RCVTIMEO or SO_SNDTIMEO to @ns */
static void set_timeo(int fd, int opt, uint64_t ns)
{
	struct timeval tv = { (time_t)(ns / 1000000000ULL), (suseconds_t)(ns % 1000000000ULL / 1000) };

	setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof(tv));
}

/* set_bufs - the socket buffers asked for: forced first, which goes past
 * net.core.[rw]mem_max where the process may (CAP_NET_ADMIN), else the
 * plain option, which the kernel caps there. Set on a stream socket before
 * it connects or listens (accepted sockets inherit them), so the window
 * offered in the handshake follows them. */
static void set_bufs(const struct tp *t, int fd)
{
	const struct tp_sock *sk = sock_of(t);
	int r = (int)sk->rcvbuf, s = (int)sk->sndbuf;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &r, sizeof(r)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &r, sizeof(r));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &s, sizeof(s)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &s, sizeof(s));
}

/* new_socket - a socket of @family and @type with the buffers set, or -1 */
static int new_socket(const struct tp *t, int family, int type)
{
	int fd = socket(family, type | SOCK_CLOEXEC, 0);

	if (fd >= 0)
		set_bufs(t, fd);
	return fd;
}

/* data_fd_setup - options of a socket that carries messages; the first one's
 * buffer sizes are read back for tp_sock_info */
static void data_fd_setup(struct tp *t, int fd)
{
	struct tp_sock *sk = sock_of(t);
	int one = 1;
	socklen_t l = sizeof(int);

	if (has(t, TP_P_NAGLE) && !sk->nagle)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	set_bufs(t, fd);
	set_timeo(fd, SO_RCVTIMEO, TP_SLICE_NS);
	set_timeo(fd, SO_SNDTIMEO, t->wait_ns);
	if (!sk->sndbuf_got) {
		getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sk->sndbuf_got, &l);
		l = sizeof(int);
		getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sk->rcvbuf_got, &l);
	}
}

/* make_addr - the socket address of @o (inet, or unix by path) */
static int make_addr(const struct tp *t, const struct tp_opts *o, struct sockaddr_storage *ss,
		     socklen_t *len, struct jtr_err *e)
{
	const char *addr = o->addr;

	memset(ss, 0, sizeof(*ss));
	if (has(t, TP_P_PATH)) {
		struct sockaddr_un *su = (struct sockaddr_un *)ss;

		su->sun_family = AF_UNIX;
		snprintf(su->sun_path, sizeof(su->sun_path), "%s", addr);
		*len = sizeof(*su);
		return 0;
	}
	return tp_parse_inet(addr, ss, len, e);
}

/* in_use - the message for EADDRINUSE */
static int in_use(struct tp *t, struct jtr_err *e)
{
	return jtr_err_set(e, -EADDRINUSE, "%s is in use (another program is bound there); choose "
			   "another %s with --addr", t->desc,
			   has(t, TP_P_PATH) ? "path" : "port");
}

/* unix_claim - make a unix path free to bind: a stale socket (nobody
 * listening) is removed, a live one is in use */
static int unix_claim(struct tp *t, const struct sockaddr_un *su, int type, struct jtr_err *e)
{
	struct stat st;
	int fd, rc;

	if (lstat(su->sun_path, &st) < 0)
		return 0;
	if (!S_ISSOCK(st.st_mode))
		return jtr_err_set(e, -EEXIST, "%s exists and is not a socket; choose another path "
				   "with --addr", su->sun_path);
	fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	rc = connect(fd, (const struct sockaddr *)su, sizeof(*su));
	close(fd);
	if (rc == 0)
		return in_use(t, e);
	unlink(su->sun_path);
	return 0;
}

/* bind_here - bind @fd to @ss, with the in-use message */
static int bind_here(struct tp *t, int fd, const struct sockaddr_storage *ss, socklen_t len,
		     int type, struct jtr_err *e)
{
	struct tp_sock *sk = sock_of(t);

	if (ss->ss_family == AF_UNIX) {
		int rc = unix_claim(t, (const struct sockaddr_un *)ss, type, e);

		if (rc < 0)
			return rc;
	}
	if (bind(fd, (const struct sockaddr *)ss, len) < 0) {
		if (errno == EADDRINUSE)
			return in_use(t, e);
		if (errno == EADDRNOTAVAIL)
			return jtr_err_set(e, -EADDRNOTAVAIL, "%s: no interface here has that address",
					   t->desc);
		return jtr_err_set(e, -errno, "cannot bind %s: %s", t->desc, strerror(errno));
	}
	if (ss->ss_family == AF_UNIX)
		snprintf(sk->unlink_path, sizeof(sk->unlink_path), "%s",
			 ((const struct sockaddr_un *)ss)->sun_path);
	return 0;
}

/* a stream subscriber says hello as it connects; pub waits this long for it
 * on each connection (never past --wait) */
#define STREAM_HELLO_WAIT_NS (1000 * 1000000LL)

/* said_hello - a connection a publisher accepted sends a well-formed hello
 * (TP_HDR_LEN bytes, TP_F_HELLO) before @end and within STREAM_HELLO_WAIT_NS:
 * a subscriber, not any client of the port (one that sends nothing, or
 * something else, is closed and counted malformed) */
static bool said_hello(struct tp *t, int fd, int64_t end)
{
	struct tp_msg m;
	size_t got = 0;
	int64_t until = tp_now_ns() + STREAM_HELLO_WAIT_NS;

	if (until > end)
		until = end;
	while (got < sizeof(m)) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = until - tp_now_ns();
		ssize_t r;

		if (left <= 0 || poll(&p, 1, (int)((left + 999999) / 1000000)) <= 0)
			break;
		r = recv(fd, (unsigned char *)&m + got, sizeof(m) - got, MSG_DONTWAIT);
		if (r <= 0 && !(r < 0 && (errno == EINTR || errno == EAGAIN)))
			break;
		got += r > 0 ? (size_t)r : 0;
	}
	if (got == sizeof(m) && tp_msg_ok(&m, sizeof(m)) && m.flags == TP_F_HELLO)
		return true;
	t->rej.malformed++;
	return false;
}

/* stream_listen - bind, listen, accept @n peers within the wait time (for a
 * publisher, subscribers: connections that said hello) */
static int stream_listen(struct tp *t, const struct tp_opts *o, uint32_t n, const char *who,
			 struct jtr_err *e)
{
	struct tp_sock *sk = sock_of(t);
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1, rc;
	int64_t end;

	rc = make_addr(t, o, &ss, &len, e);
	if (rc < 0)
		return rc;
	sk->lfd = new_socket(t, ss.ss_family, SOCK_STREAM);
	if (sk->lfd < 0)
		return jtr_err_set(e, -errno, "socket: %s", strerror(errno));
	if (ss.ss_family == AF_INET || ss.ss_family == AF_INET6)
		setsockopt(sk->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	rc = bind_here(t, sk->lfd, &ss, len, SOCK_STREAM, e);
	if (rc < 0)
		return rc;
	if (listen(sk->lfd, TP_MAX_SUBS) < 0)
		return jtr_err_set(e, -errno, "listen on %s: %s", t->desc, strerror(errno));
	end = tp_now_ns() + (int64_t)o->wait_ns;
	while (sk->nsubs < n) {
		struct pollfd p = { .fd = sk->lfd, .events = POLLIN };
		int64_t left = end - tp_now_ns();
		int fd;

		if (left <= 0 || poll(&p, 1, (int)((left + 999999) / 1000000)) == 0)
			return jtr_err_set(e, -ETIMEDOUT, "%u of %u %s connected to %s within %g s; "
					   "start them or wait longer (--wait)", sk->nsubs, n, who,
					   t->desc, (double)o->wait_ns / 1e9);
		fd = accept4(sk->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED)
				continue;
			return jtr_err_set(e, -errno, "accept on %s: %s", t->desc, strerror(errno));
		}
		if (t->role == TP_PUB && !said_hello(t, fd, end)) {
			close(fd);
			continue;
		}
		data_fd_setup(t, fd);
		sk->subs[sk->nsubs++] = fd;
	}
	sk->fd = sk->subs[0];
	return 0;
}

/* connect_retry - connect @fd to @ss, retrying while nobody listens */
static int connect_retry(struct tp *t, int *fd, int type, const struct sockaddr_storage *ss,
			 socklen_t len, const char *who, struct jtr_err *e)
{
	int64_t end = tp_now_ns() + (int64_t)t->wait_ns;

	for (;;) {
		struct timespec ts = { 0, (long)CONNECT_RETRY_NS };

		if (connect(*fd, (const struct sockaddr *)ss, len) == 0)
			return 0;
		if (errno != ECONNREFUSED && errno != ENOENT && errno != EAGAIN && errno != EINTR)
			return jtr_err_set(e, -errno, "cannot connect to %s: %s", t->desc, strerror(errno));
		if (tp_now_ns() >= end)
			return jtr_err_set(e, -ETIMEDOUT, "no %s appeared at %s within %g s; start it "
					   "first or wait longer (--wait)", who, t->desc,
					   (double)t->wait_ns / 1e9);
		nanosleep(&ts, NULL);
		if (type == SOCK_STREAM) {
			/* a stream socket whose connect failed cannot be reused */
			close(*fd);
			*fd = new_socket(t, ss->ss_family, type);
			if (*fd < 0)
				return jtr_err_set(e, -errno, "socket: %s", strerror(errno));
		}
	}
}

/* mcast_join - bind to the group's port and join it on the interface */
static int mcast_join(struct tp *t, const struct tp_opts *o, const struct sockaddr_in *g,
		      struct jtr_err *e)
{
	struct tp_sock *sk = sock_of(t);
	struct ip_mreq mr;
	int one = 1, rc;

	setsockopt(sk->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	rc = bind_here(t, sk->fd, (const struct sockaddr_storage *)g, sizeof(*g), SOCK_DGRAM, e);
	if (rc < 0)
		return rc;
	mr.imr_multiaddr = g->sin_addr;
	inet_pton(AF_INET, o->iface ? o->iface : TP_DEFAULT_IFACE, &mr.imr_interface);
	if (setsockopt(sk->fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof(mr)) < 0)
		return jtr_err_set(e, -errno, "cannot join %s on interface %s: %s", t->desc,
				   o->iface ? o->iface : TP_DEFAULT_IFACE, strerror(errno));
	return 0;
}

/* mcast_sender - interface, TTL and loopback for sending to the group */
static int mcast_sender(struct tp *t, const struct tp_opts *o, struct jtr_err *e)
{
	struct tp_sock *sk = sock_of(t);
	struct in_addr ifa;
	unsigned char ttl = (unsigned char)o->ttl, loop = 1;

	inet_pton(AF_INET, o->iface ? o->iface : TP_DEFAULT_IFACE, &ifa);
	if (setsockopt(sk->fd, IPPROTO_IP, IP_MULTICAST_IF, &ifa, sizeof(ifa)) < 0)
		return jtr_err_set(e, -errno, "--iface %s: %s (is it an address of this host?)",
				   o->iface ? o->iface : TP_DEFAULT_IFACE, strerror(errno));
	setsockopt(sk->fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof(ttl));
	setsockopt(sk->fd, IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof(loop));
	return 0;
}

static int write_all(int fd, const unsigned char *p, size_t len, uint64_t *blocked);

/* open_kind - by kind and role (the table in tp.h) */
static int open_kind(struct tp *t, const struct tp_opts *o, struct jtr_err *e)
{
	struct tp_sock *sk = sock_of(t);
	struct sockaddr_storage ss;
	socklen_t len;
	bool stream = has(t, TP_P_STREAM);
	bool server = t->role == TP_SUB || t->role == TP_PONG;
	int type = stream ? SOCK_STREAM : SOCK_DGRAM, rc;

	rc = make_addr(t, o, &ss, &len, e);
	if (rc < 0)
		return rc;
	if (stream) {
		sk->rcap = 2 * (size_t)(o->msg_max > 65536 ? o->msg_max : 65536);
		sk->rbuf = malloc(sk->rcap);
		if (!sk->rbuf)
			return jtr_err_set(e, -ENOMEM, "out of memory");
		if (t->role == TP_PUB)
			return stream_listen(t, o, o->subs, "subscribers", e);
		if (t->role == TP_PONG)
			return stream_listen(t, o, 1, "ping", e);
		sk->fd = new_socket(t, ss.ss_family, SOCK_STREAM);
		if (sk->fd < 0)
			return jtr_err_set(e, -errno, "socket: %s", strerror(errno));
		rc = connect_retry(t, &sk->fd, SOCK_STREAM, &ss, len,
				   t->role == TP_SUB ? "publisher" : "pong", e);
		if (rc == 0)
			data_fd_setup(t, sk->fd);
		if (rc == 0 && t->role == TP_SUB) {
			struct tp_msg m;	/* the publisher takes it as a subscriber for it */

			tp_msg_fill(&m, TP_HDR_LEN, TP_F_HELLO, 0, 0, 0);
			rc = write_all(sk->fd, (const unsigned char *)&m, sizeof(m), NULL);
			if (rc < 0)
				return jtr_err_set(e, rc, "saying hello to the publisher at %s: %s",
						   t->desc, strerror(-rc));
		}
		return rc;
	}
	sk->fd = socket(ss.ss_family, type | SOCK_CLOEXEC, 0);
	if (sk->fd < 0)
		return jtr_err_set(e, -errno, "socket: %s", strerror(errno));
	data_fd_setup(t, sk->fd);
	if (has(t, TP_P_MULTICAST)) {
		if (server)
			return mcast_join(t, o, (const struct sockaddr_in *)&ss, e);
		memcpy(&sk->dst, &ss, len);
		sk->dstlen = len;
		sk->have_dst = true;
		return mcast_sender(t, o, e);
	}
	if (server)
		return bind_here(t, sk->fd, &ss, len, type, e);
	if (has(t, TP_P_PATH)) {
		/* autobind an abstract address so that pong can answer */
		sa_family_t fam = AF_UNIX;

		if (bind(sk->fd, (const struct sockaddr *)&fam, sizeof(fam)) < 0)
			return jtr_err_set(e, -errno, "autobind: %s", strerror(errno));
	}
	rc = connect_retry(t, &sk->fd, SOCK_DGRAM, &ss, len, t->role == TP_PUB ? "subscriber" : "pong", e);
	sk->connected = rc == 0;
	return rc;
}

/* HELLOS - the copies of a datagram publisher's first hello (one may be
 * lost); HELLO_EVERY_NS - how often it says hello again while it sends, so
 * that a subscriber that starts later (a multicast receiver joining a running
 * stream, the other host of jtr duplex) joins within that time; in the first
 * HELLO_EARLY_NS, every HELLO_EARLY_EVERY_NS (the two ends of jtr duplex
 * start together, each subscriber a little before or after the other
 * side's publisher). The clock is read every `look` sends, between 1 and
 * HELLO_LOOK, so that a look comes about every eighth of the period at any
 * rate: at 1,000 messages a second a look every send or two, at a million
 * every 256 sends. */
#define HELLOS 3
#define HELLO_EVERY_NS (100 * 1000000LL)
#define HELLO_EARLY_NS (1000 * 1000000LL)
#define HELLO_EARLY_EVERY_NS (10 * 1000000LL)
#define HELLO_LOOK 256

/* now_ns - CLOCK_MONOTONIC */
static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* send_or_wait - sendto() that first tries without waiting: a send that
 * finds the socket's buffer full is counted in *@blocked (when not NULL),
 * then made as the socket makes it (waiting up to its SO_SNDTIMEO). One call
 * when there is room, as before. */
static ssize_t send_or_wait(int fd, const void *buf, size_t len, int flags,
			    const struct sockaddr *to, socklen_t tolen, uint64_t *blocked)
{
	ssize_t n = sendto(fd, buf, len, flags | MSG_DONTWAIT, to, tolen);

	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		if (blocked)
			(*blocked)++;
		n = sendto(fd, buf, len, flags, to, tolen);
	}
	return n;
}

/* dgram_put - one datagram to the peer or the group: 0, or -errno; a send
 * that had to wait for room counted in *@blocked */
static int dgram_put(struct tp_sock *sk, const void *buf, size_t len, uint64_t *blocked)
{
	ssize_t n;

	for (;;) {
		if (sk->connected)
			n = send_or_wait(sk->fd, buf, len, 0, NULL, 0, blocked);
		else if (sk->have_dst)
			n = send_or_wait(sk->fd, buf, len, 0, (const struct sockaddr *)&sk->dst,
					 sk->dstlen, blocked);
		else
			return -ENOTCONN;	/* pong before any ping */
		if (n == (ssize_t)len)
			return 0;
		if (n >= 0)
			return -EMSGSIZE;
		if (errno == EINTR || errno == ENOBUFS)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return -ETIMEDOUT;
		return -errno;
	}
}

/* hello - the publisher's hello: its session id as the sequence number */
static int hello(struct tp_sock *sk)
{
	struct tp_msg m;

	tp_msg_fill(&m, TP_HDR_LEN, TP_F_HELLO, sk->session, 0, 0);
	sk->hello_ns = now_ns();
	return dgram_put(sk, &m, sizeof(m), NULL);
}

/* say_hello - a datagram publisher opens its session: HELLOS hellos whose
 * sequence number is a random session id (receivers join the sender of the
 * first; dgram_recv), and, unless @once, again as it sends (dgram_send,
 * hello_due).
 * A send that fails is the data's to find out. */
static void say_hello(struct tp *t, bool once)
{
	struct tp_sock *sk = sock_of(t);
	uint64_t id = 0;

	if (getrandom(&id, sizeof(id), GRND_NONBLOCK) != (ssize_t)sizeof(id) || !id)
		id = ((uint64_t)now_ns() ^ ((uint64_t)getpid() << 40)) | 1;
	sk->session = id;
	for (int i = 0; i < HELLOS; i++)
		if (hello(sk) < 0)
			break;
	sk->open_ns = sk->look_ns = sk->hello_ns;
	sk->sends = 0;
	sk->look = 1;
	if (once)
		sk->hello_ns = 0;
}

/* hello_due - a datagram publisher looks at the clock: a hello is due when
 * its period has passed; the sends between looks are halved when the look
 * came later than an eighth of the period, doubled when it came sooner than
 * a thirty-second */
static bool hello_due(struct tp_sock *sk)
{
	const int64_t now = now_ns();
	const int64_t every = now - sk->open_ns < HELLO_EARLY_NS ? HELLO_EARLY_EVERY_NS :
								    HELLO_EVERY_NS;
	const int64_t since = now - sk->look_ns;

	sk->sends = 0;
	sk->look_ns = now;
	if (since > every / 8 && sk->look > 1)
		sk->look /= 2;
	else if (since < every / 32 && sk->look < HELLO_LOOK)
		sk->look *= 2;
	return now - sk->hello_ns >= every;
}

/* sock_open - open, then the epoll instance for an epoll receive; a datagram
 * publisher says hello */
static int sock_open(struct tp *t, const struct tp_opts *o, struct jtr_err *e)
{
	struct tp_sock *sk = sock_of(t);
	struct epoll_event ev = { .events = EPOLLIN };
	int rc;

	sk->fd = sk->lfd = sk->epfd = -1;
	sk->sndbuf = o->sndbuf ? o->sndbuf : TP_SOCK_BUF_DEFAULT;
	sk->rcvbuf = o->rcvbuf ? o->rcvbuf : TP_SOCK_BUF_DEFAULT;
	sk->nagle = o->nagle;
	rc = open_kind(t, o, e);
	if (rc == 0 && t->role == TP_PUB && !has(t, TP_P_STREAM))
		say_hello(t, o->hello_once);

	if (rc < 0 || !t->epoll || t->role == TP_PUB || sk->fd < 0)
		return rc;
	sk->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (sk->epfd < 0)
		return jtr_err_set(e, -errno, "epoll_create1: %s", strerror(errno));
	ev.data.fd = sk->fd;
	if (epoll_ctl(sk->epfd, EPOLL_CTL_ADD, sk->fd, &ev) < 0)
		return jtr_err_set(e, -errno, "epoll_ctl: %s", strerror(errno));
	return 0;
}

/* write_all - a whole message on a stream, or -errno; each write that had to
 * wait for room counted in *@blocked (when not NULL) */
static int write_all(int fd, const unsigned char *p, size_t len, uint64_t *blocked)
{
	while (len) {
		ssize_t n = send_or_wait(fd, p, len, MSG_NOSIGNAL, NULL, 0, blocked);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return -ETIMEDOUT;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* peer_gone - errors that mean the other side is not there any more */
static bool peer_gone(int rc)
{
	return rc == -EPIPE || rc == -ECONNRESET || rc == -ECONNREFUSED || rc == -ENOTCONN;
}

/* stream_send - to every subscriber (pub), or the peer */
static int stream_send(struct tp *t, const void *buf, size_t len)
{
	struct tp_sock *sk = sock_of(t);

	if (t->role != TP_PUB) {
		int rc = write_all(sk->fd, buf, len, &t->blocked);

		sk->msgs_out += rc == 0;
		return peer_gone(rc) ? -EPIPE : rc;
	}
	for (uint32_t i = 0; i < sk->nsubs;) {
		int rc = write_all(sk->subs[i], buf, len, &t->blocked);

		if (rc == 0) {
			i++;
			continue;
		}
		if (!peer_gone(rc))
			return rc;
		close(sk->subs[i]);
		sk->subs[i] = sk->subs[--sk->nsubs];
		t->peers_lost++;
	}
	sk->fd = sk->nsubs ? sk->subs[0] : -1;
	sk->msgs_out += sk->nsubs > 0;
	return sk->nsubs ? 0 : -EPIPE;
}

/* dgram_send - to the peer (pong: its session's ping) or the group; a
 * publisher says hello again first when one is due (hello_due) */
static int dgram_send(struct tp *t, const void *buf, size_t len)
{
	struct tp_sock *sk = sock_of(t);
	int rc;

	if (sk->hello_ns && ++sk->sends >= sk->look && hello_due(sk))
		hello(sk);		/* a failure is the data's to find out */
	rc = dgram_put(sk, buf, len, &t->blocked);
	if (rc == 0) {
		sk->msgs_out++;
		return 0;
	}
	return rc == -ETIMEDOUT || rc == -EMSGSIZE || rc == -ENOTCONN ? rc :
	       peer_gone(rc) ? -EPIPE : rc;
}

/* elapsed_past - time is up (@end 0: set it from @timeout_ns first) */
static bool elapsed_past(int64_t *end, uint64_t timeout_ns)
{
	int64_t now = tp_now_ns();

	if (!*end)
		*end = now + (int64_t)timeout_ns;
	return now >= *end;
}

/* epoll_slice - epoll receive: wait until readable, at most until @end
 * (which elapsed_past has set) or a slice; 0, or -errno */
static int epoll_slice(struct tp *t, int64_t end)
{
	struct tp_sock *sk = sock_of(t);
	struct epoll_event ev;
	int64_t left = end - tp_now_ns();
	int ms;

	if (left > (int64_t)TP_SLICE_NS)
		left = (int64_t)TP_SLICE_NS;
	ms = left > 0 ? (int)((left + 999999) / 1000000) : 0;
	if (epoll_wait(sk->epfd, &ev, 1, ms) < 0 && errno != EINTR)
		return -errno;
	return 0;
}

/* addr_name - an address for messages */
static void addr_name(const struct sockaddr_storage *ss, socklen_t len, char *buf, size_t size)
{
	char a[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sa = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &sa->sin_addr, a, sizeof(a));
		snprintf(buf, size, "%s:%u", a, ntohs(sa->sin_port));
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		snprintf(buf, size, "[%s]:%u", a, ntohs(s6->sin6_port));
	} else if (ss->ss_family == AF_UNIX) {
		const struct sockaddr_un *su = (const struct sockaddr_un *)ss;
		size_t n = len > offsetof(struct sockaddr_un, sun_path) ?
			   len - offsetof(struct sockaddr_un, sun_path) : 0;

		if (!n)
			snprintf(buf, size, "an unbound unix socket");
		else if (!su->sun_path[0])	/* abstract: @name */
			snprintf(buf, size, "@%.*s", (int)(n - 1 < 60 ? n - 1 : 60), su->sun_path + 1);
		else
			snprintf(buf, size, "%.*s", (int)(n < 64 ? n : 64), su->sun_path);
	} else {
		snprintf(buf, size, "address family %d", ss->ss_family);
	}
}

/* same_sender - @a (len @al) and @b (len @bl) are the same socket address */
static bool same_sender(const struct sockaddr_storage *a, socklen_t al,
			const struct sockaddr_storage *b, socklen_t bl)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;

		return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;

		return x->sin6_port == y->sin6_port && x->sin6_scope_id == y->sin6_scope_id &&
		       !memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr));
	}
	return al == bl && !memcmp(a, b, al);
}

/* join - @from, whose hello @m opens a session, becomes the peer (pong
 * answers it, and only it) */
static void join(struct tp *t, const struct sockaddr_storage *from, socklen_t fl,
		 const struct tp_msg *m)
{
	struct tp_sock *sk = sock_of(t);

	memcpy(&sk->peer, from, fl);
	sk->peerlen = fl;
	sk->have_peer = true;
	sk->peer_data = false;
	sk->session = m->seq;
	addr_name(from, fl, t->peer_name, sizeof(t->peer_name));
	if (t->role == TP_PONG) {
		memcpy(&sk->dst, from, fl);
		sk->dstlen = fl;
		sk->have_dst = true;
	}
}

/* dgram_recv - one well-formed datagram from the session's peer. An
 * unconnected receiver (sub, pong, ping on mcast) joins the session a hello
 * opens (pub's, sent by tp_open; ping's handshake; pong's answer to it): its
 * sender is the peer. A datagram before any hello is counted before_session,
 * one from elsewhere after it foreign, and neither changes the session: one
 * forged datagram cannot take it. A hello from elsewhere takes over a session
 * that has had nothing but its hello (a forged hello before the real one); once
 * the peer's messages come, no other sender can. A connected socket gets
 * datagrams from its peer alone (the kernel filters). Rejected datagrams are
 * counted and the wait goes on, still bounded by @timeout_ns. */
static ssize_t dgram_recv(struct tp *t, void *buf, size_t cap, uint64_t timeout_ns)
{
	struct tp_sock *sk = sock_of(t);
	int64_t end = 0;
	uint32_t spins = 0;
	int rc;
	const bool keep = !sk->connected;
	const int flags = MSG_TRUNC | (t->busy || t->epoll ? MSG_DONTWAIT : 0);

	if (sk->fd < 0)
		return -EBADF;
	for (;;) {
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(sk->fd, buf, cap, flags, keep ? (struct sockaddr *)&from : NULL,
				     keep ? &fl : NULL);

		if (n >= 0) {
			const bool ok = (size_t)n <= cap && tp_msg_check(buf, (size_t)n);
			const bool hello = ok && (((const struct tp_msg *)buf)->flags & TP_F_HELLO);
			const bool peer = keep && sk->have_peer &&
					  same_sender(&sk->peer, sk->peerlen, &from, fl);

			if (keep && hello && !peer && (!sk->have_peer || !sk->peer_data) &&
			    fl > 0 && fl <= sizeof(sk->peer)) {
				join(t, &from, fl, buf);
				sk->msgs_in++;
				return n;
			}
			if (keep && sk->have_peer && !peer) {
				if (!t->rej.foreign++)
					addr_name(&from, fl, t->rej.foreign_from,
						     sizeof(t->rej.foreign_from));
			} else if (!ok) {
				t->rej.malformed++;
			} else if (keep && !sk->have_peer) {
				t->rej.before_session++;
			} else {
				if (keep && !hello)
					sk->peer_data = true;
				sk->msgs_in++;
				return n;
			}
			/* rejected: wait on, but not past the time */
			if (elapsed_past(&end, timeout_ns))
				return -EAGAIN;
			continue;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return peer_gone(-errno) ? -EPIPE : -errno;
		if (t->busy && ++spins % 64)
			continue;
		if (elapsed_past(&end, timeout_ns))
			return -EAGAIN;
		if (t->epoll && (rc = epoll_slice(t, end)) < 0)
			return rc;
	}
}

/* stream_recv - the next whole message out of the buffer, reading more as
 * needed. A frame whose header cannot be one loses the framing (-EPROTO: the
 * rest of the stream cannot be read); a well-framed message that is not
 * well-formed, or longer than @cap, is counted and skipped. */
static ssize_t stream_recv(struct tp *t, void *buf, size_t cap, uint64_t timeout_ns)
{
	struct tp_sock *sk = sock_of(t);
	int64_t end = 0;
	uint32_t spins = 0;
	int rc, flags = t->busy || t->epoll ? MSG_DONTWAIT : 0;

	if (sk->fd < 0)
		return -EBADF;
	for (;;) {
		size_t have = sk->rlen - sk->roff;
		ssize_t n;

		if (have >= TP_HDR_LEN) {
			const struct tp_msg *m = (const struct tp_msg *)(sk->rbuf + sk->roff);
			uint32_t len;

			memcpy(&len, &m->len, sizeof(len));
			if (m->magic != TP_MAGIC || len < TP_HDR_LEN || len > sk->rcap) {
				t->rej.malformed++;
				return -EPROTO;
			}
			if (have >= len) {
				sk->roff += len;
				if (len <= cap && tp_msg_check(m, len)) {
					memcpy(buf, m, len);
					sk->msgs_in++;
					return len;
				}
				t->rej.malformed++;
				continue;
			}
		}
		if (sk->roff && (sk->rcap - sk->rlen < sk->rcap / 2 || have == 0)) {
			memmove(sk->rbuf, sk->rbuf + sk->roff, have);
			sk->rlen = have;
			sk->roff = 0;
		}
		n = recv(sk->fd, sk->rbuf + sk->rlen, sk->rcap - sk->rlen, flags);
		if (n > 0) {
			sk->rlen += (size_t)n;
			continue;
		}
		if (n == 0)
			return -EPIPE;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return peer_gone(-errno) ? -EPIPE : -errno;
		if (t->busy && ++spins % 64)
			continue;
		if (elapsed_past(&end, timeout_ns))
			return -EAGAIN;
		if (t->epoll && (rc = epoll_slice(t, end)) < 0)
			return rc;
	}
}

/* sock_poll - poll(2), or a whole message already buffered */
static int sock_poll(struct tp *t, uint64_t timeout_ns)
{
	struct tp_sock *sk = sock_of(t);
	struct pollfd p = { .fd = sk->fd, .events = POLLIN };
	int rc;

	if (sk->fd < 0)
		return -EBADF;
	if (has(t, TP_P_STREAM) && sk->rlen - sk->roff >= TP_HDR_LEN) {
		const struct tp_msg *m = (const struct tp_msg *)(sk->rbuf + sk->roff);

		if (sk->rlen - sk->roff >= m->len)
			return 1;
	}
	rc = poll(&p, 1, (int)((timeout_ns + 999999) / 1000000));
	if (rc < 0)
		return -errno;
	if (rc > 0 && (p.revents & (POLLERR | POLLHUP)) && !(p.revents & POLLIN))
		return -EPIPE;
	return rc > 0;
}

/* sock_drops - what the kernel dropped at socket @fd (SO_MEMINFO's
 * SK_MEMINFO_DROPS: datagrams that found its receive buffer full, or a
 * filter or memory limit refused): false where it cannot say */
static bool sock_drops(int fd, uint32_t *drops)
{
	uint32_t mem[SK_MEMINFO_VARS];
	socklen_t l = sizeof(mem);

	if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mem, &l) < 0 ||
	    l <= SK_MEMINFO_DROPS * sizeof(mem[0]))
		return false;
	*drops = mem[SK_MEMINFO_DROPS];
	return true;
}

/* sock_info - the buffers read back when the first data socket was set
 * up; tcp: TCP_NODELAY and TCP_INFO's segment counts of the data socket now
 * (tp_sock_info, which zeroed @out) */
static bool sock_info(const struct tp *t, struct tp_sock_info *out)
{
	const struct tp_sock *sk = sock_of(t);
	struct tcp_info ti;
	socklen_t l;
	int v = 0;

	out->sndbuf = sk->sndbuf_got;
	out->rcvbuf = sk->rcvbuf_got;
	out->msgs_out = sk->msgs_out;
	out->msgs_in = sk->msgs_in;
	out->have_drops = sock_drops(sk->fd, &out->drops);
	if (!has(t, TP_P_NAGLE))
		return true;
	out->tcp = true;
	out->nodelay = !sk->nagle;
	if (sk->fd < 0)
		return true;
	l = sizeof(v);
	if (getsockopt(sk->fd, IPPROTO_TCP, TCP_NODELAY, &v, &l) == 0)
		out->nodelay = v != 0;
	l = sizeof(ti);
	memset(&ti, 0, sizeof(ti));
	if (getsockopt(sk->fd, IPPROTO_TCP, TCP_INFO, &ti, &l) == 0 &&
	    l >= offsetof(struct tcp_info, tcpi_segs_in) + sizeof(ti.tcpi_segs_in)) {
		out->have_segs = true;
		out->segs_out = ti.tcpi_segs_out;
		out->segs_in = ti.tcpi_segs_in;
	}
	return true;
}

/* sock_close - close every socket, remove a bound unix path */
static void sock_close(struct tp *t)
{
	struct tp_sock *sk = sock_of(t);

	for (uint32_t i = 0; i < sk->nsubs; i++)
		close(sk->subs[i]);
	if (sk->nsubs == 0 && sk->fd >= 0)
		close(sk->fd);
	if (sk->lfd >= 0)
		close(sk->lfd);
	if (sk->epfd >= 0)
		close(sk->epfd);
	if (sk->unlink_path[0])
		unlink(sk->unlink_path);
	free(sk->rbuf);
}

/* stream_peers - pub's subscribers connected now */
static uint32_t stream_peers(const struct tp *t)
{
	return sock_of(t)->nsubs;
}

/* tp_mcast_is_wide - outside 239.255.0.0/16, or TTL > 0 */
int tp_mcast_is_wide(const struct tp_opts *o, struct jtr_err *e)
{
	struct sockaddr_storage ss;
	socklen_t len;
	uint32_t a;
	const char *addr = o->addr ? o->addr : tp_mcast_ops.default_addr;
	int rc = tp_parse_inet(addr, &ss, &len, e);

	if (rc < 0)
		return rc;
	if (ss.ss_family != AF_INET)
		return jtr_err_set(e, -EINVAL, "'%s': multicast is IPv4 only here (IPv6 multicast "
				   "needs a multicast-capable interface; loopback is not one); use a "
				   "group in 239.255.0.0/16, e.g. %s:%d", addr, TP_DEFAULT_GROUP,
				   TP_DEFAULT_PORT);
	a = ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr);
	if ((a >> 28) != 0xe)
		return jtr_err_set(e, -EINVAL, "'%s' is not a multicast group (224.0.0.0/4); the "
				   "default is %s:%d", addr, TP_DEFAULT_GROUP, TP_DEFAULT_PORT);
	return (a >> 16) != 0xefff || o->ttl > 0;
}

/* inet_check - HOST:PORT */
static int inet_check(const struct tp_opts *o, enum tp_role role, const char *addr,
		      struct jtr_err *e)
{
	struct sockaddr_storage ss;
	socklen_t sl;

	(void)o;
	(void)role;
	return tp_parse_inet(addr, &ss, &sl, e);
}

/* mcast_check - a group on this host unless --mcast-wide, an interface, a TTL */
static int mcast_check(const struct tp_opts *o, enum tp_role role, const char *addr,
		       struct jtr_err *e)
{
	struct sockaddr_in ifa;
	int rc = tp_mcast_is_wide(o, e);

	(void)role;
	if (rc < 0)
		return rc;
	if (rc > 0 && !o->wide)
		return jtr_err_set(e, -EPERM, "group %s with TTL %d can reach other hosts: "
				   "multicast outside 239.255.0.0/16 or with TTL > 0 can flood "
				   "a network and its switches' supervisors; add --mcast-wide "
				   "if this is what you want", addr, o->ttl);
	if (inet_pton(AF_INET, o->iface ? o->iface : TP_DEFAULT_IFACE, &ifa.sin_addr) != 1)
		return jtr_err_set(e, -EINVAL, "--iface %s: not a dotted IPv4 address of an "
				   "interface, e.g. %s", o->iface, TP_DEFAULT_IFACE);
	if (o->ttl < 0 || o->ttl > 255)
		return jtr_err_set(e, -EINVAL, "--ttl %d: use 0-255", o->ttl);
	return 0;
}

/* unix_check - a socket path that fits sun_path */
static int unix_check(const struct tp_opts *o, enum tp_role role, const char *addr,
		      struct jtr_err *e)
{
	(void)o;
	(void)role;
	if (!*addr || strlen(addr) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return jtr_err_set(e, -EINVAL, "'%s' is not a socket path: use 1-107 characters, "
				   "e.g. %s", addr, TP_DEFAULT_UNIX);
	return 0;
}

/* the kinds over sockets: one file, five tables, their differences flags */
#define SOCK_OPS							\
	.priv_size = sizeof(struct tp_sock),				\
	.open = sock_open,						\
	.poll = sock_poll,						\
	.close = sock_close,						\
	.sock_info = sock_info

const struct tp_ops tp_tcp_ops = {
	SOCK_OPS,
	.flags = TP_P_STREAM | TP_P_SOCKET | TP_P_NAGLE,
	.default_addr = "127.0.0.1:17391",
	.max_msg = TP_STREAM_MAX,
	.unit = "message",
	.check = inet_check,
	.send = stream_send,
	.recv = stream_recv,
	.peers = stream_peers,
};

const struct tp_ops tp_udp_ops = {
	SOCK_OPS,
	.flags = TP_P_DATAGRAM | TP_P_SOCKET,
	.default_addr = "127.0.0.1:17391",
	.max_msg = TP_UDP_MAX,
	.unit = "datagram",
	.check = inet_check,
	.send = dgram_send,
	.recv = dgram_recv,
};

const struct tp_ops tp_mcast_ops = {
	SOCK_OPS,
	.flags = TP_P_DATAGRAM | TP_P_SOCKET | TP_P_MULTICAST,
	.default_addr = TP_DEFAULT_GROUP ":17391",
	.max_msg = TP_UDP_MAX,
	.unit = "datagram",
	.check = mcast_check,
	.send = dgram_send,
	.recv = dgram_recv,
};

const struct tp_ops tp_unix_ops = {
	SOCK_OPS,
	.flags = TP_P_STREAM | TP_P_SOCKET | TP_P_PATH,
	.default_addr = TP_DEFAULT_UNIX,
	.max_msg = TP_STREAM_MAX,
	.unit = "message",
	.name_what = "socket path",
	.name_max = 107,
	.check = unix_check,
	.send = stream_send,
	.recv = stream_recv,
	.peers = stream_peers,
};

const struct tp_ops tp_unix_dgram_ops = {
	SOCK_OPS,
	.flags = TP_P_DATAGRAM | TP_P_SOCKET | TP_P_PATH,
	.default_addr = TP_DEFAULT_UNIX,
	.max_msg = TP_UNIX_DGRAM_MAX,
	.unit = "datagram",
	.name_what = "socket path",
	.name_max = 107,
	.check = unix_check,
	.send = dgram_send,
	.recv = dgram_recv,
};
