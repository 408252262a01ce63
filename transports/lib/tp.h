/* SPDX-License-Identifier: GPL-2.0-only */
/* tp.h - one interface over jtr's five transports.
 *
 * shm        a single-producer ring in a shared-memory segment, 1-to-N readers
 *            each with its own cursor (tp_ring.h)
 * tcp        TCP with TCP_NODELAY (unless o->nagle), plain blocking
 *            read/write (or epoll)
 * udp        UDP unicast (tcp and udp: IPv4 A.B.C.D:PORT or IPv6 [ADDR]:PORT)
 * mcast      UDP multicast, 1-to-N (239.255.0.0/16, TTL 0, loopback by default)
 * unix       unix-domain stream; unix-dgram: unix-domain datagram
 *
 * Each kind is a table of operations behind this interface (struct tp_ops,
 * tp_int.h) and a set of properties (TP_P_*: datagram, stream, ring,
 * multicast, ...). What differs by kind, here and in the programs, is asked
 * of the properties (tp_kind_has, tp_flags), never of the kind itself.
 *
 * Every socket gets o->sndbuf and o->rcvbuf (default TP_SOCK_BUF_DEFAULT),
 * forced past net.core.[rw]mem_max where the process may (CAP_NET_ADMIN);
 * tp_sock_info reads back what the kernel made of them.
 *
 * Every message starts with struct tp_msg (sequence number and send time;
 * the intended send time follows in messages of 32 bytes or more). A
 * transport is opened in one of four roles; who
 * listens, binds or creates follows from the role:
 *
 *            shm          tcp, unix       udp, unix-dgram     mcast
 *   pub      creates      listens for N   sends to ADDR       sends to GROUP
 *   sub      attaches     connects        binds ADDR          joins GROUP
 *   pong     creates two  listens for 1   binds, replies to   joins, replies to
 *            rings                        its session's ping  its session's ping
 *   ping     attaches     connects        sends to ADDR       sends to GROUP
 *
 * Receive is blocking (futex wake-up for shm, blocking sockets with a short
 * SO_RCVTIMEO for the others), busy-poll (no syscall while the ring is
 * empty; MSG_DONTWAIT for sockets) or, for sockets, epoll (non-blocking
 * reads, waiting in epoll_wait when there is nothing). Every wait has a
 * timeout. Functions return 0, a length, or -errno, and never print or exit.
 *
 * A receive hands on only well-formed messages (tp_msg_check) from the
 * session's peer: for a datagram receiver that is not connected (sub, pong,
 * ping on mcast) the sender whose hello opened the session (a datagram pub
 * sends one as it opens, ping in its handshake, pong in answer), for a
 * stream its connection, for shm the ring's writer. Anything else is
 * counted (tp_rejected) and dropped, and the receive goes on waiting.
 */
#ifndef JTR_TP_H
#define JTR_TP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "jtr_err.h"

enum tp_kind { TP_SHM = 1, TP_TCP, TP_UDP, TP_MCAST, TP_UNIX, TP_UNIX_DGRAM, TP_NKINDS };
enum tp_role { TP_PUB = 1, TP_SUB, TP_PING, TP_PONG };

/* what a kind of transport is (tp_kind_flags, tp_flags): code that behaves
 * differently by transport asks these, never which kind it is, so a new
 * kind with the same properties needs no change there */
enum {
	TP_P_DATAGRAM = 1,	/* a message is one datagram: it can be lost, and a peer
				 * that goes is not seen (an end of stream goes out more
				 * than once); a packed unit marks its messages TP_F_PACKED */
	TP_P_STREAM = 2,	/* a connection carrying a byte stream framed by the
				 * header's length: nothing is lost and a peer that goes is
				 * seen; pub and pong accept their peers inside tp_open */
	TP_P_RING = 4,		/* a ring in shared memory: no socket and no file
				 * descriptor, slots of o->msg_max, sends in place
				 * (tp_claim), a poll that is a load, NUMA placement; a peer
				 * that goes is seen */
	TP_P_SOCKET = 8,	/* a socket: buffers (--sndbuf, --rcvbuf), tp_sock_info */
	TP_P_MULTICAST = 16,	/* to a group, 1-to-N: interface and TTL; the sender is
				 * not connected, so it never hears that nobody listens */
	TP_P_NAGLE = 32,	/* tcp: Nagle's algorithm (--nagle), TCP_INFO's segments */
	TP_P_PATH = 64,		/* addressed by a name (a segment, a socket path), not
				 * HOST:PORT */
};

#define TP_MAGIC 0x4a54u	/* "JT" */
#define TP_VERSION 2		/* 2: the 24-byte header, the intended time after it */

/* tp_msg.flags */
enum {
	TP_F_WARMUP = 1,	/* not measured */
	TP_F_EOS = 2,		/* end of stream: seq is the number of messages sent */
	TP_F_STAMPED = 4,	/* sent_ns (and the intended time, when carried) is set */
	TP_F_HELLO = 8,		/* ping's "are you there" before the run */
	TP_F_ECHO = 16,		/* pong's stamps at TP_ECHO_OFF: struct tp_echo, ns */
	TP_F_ECHO_TSC = 32,	/* the same in TSC ticks */
	TP_F_PACKED = 64,	/* more messages follow this one in the same datagram or
				 * ring slot (pub --pack); the last one has no such bit */
	TP_F_EXT = 128,		/* the message is carried changed (tp_zip.h): the whole
				 * message's length at TP_EXT_OFF says how, compressed
				 * (pub --compress) or one fragment of it (TP_EXT_FRAG,
				 * pub --max-fragment) */
	TP_F_ALL = 255,		/* no other bit is ever set */
};

/* the header of every message, in host byte order (one machine): 24 bytes,
 * so that a message can be as short as the seeds' (um_lat's 24 bytes).
 * What else a message carries sits at fixed offsets after it, where the
 * message is long enough:
 *
 *   offset  size  field                              carried when
 *    0       2    magic "JT"                         always
 *    2       1    version (2)                        always
 *    3       1    flags (TP_F_*)                     always
 *    4       4    len: this message, header included always
 *    8       8    seq                                always
 *   16       8    sent_ns: when it was sent          always (0 if unstamped)
 *   24       8    intended_ns: the schedule's time   len >= 32 (TP_FULL_LEN)
 *   32      16    pong's echo (struct tp_echo)       len >= 48, ping-pong only
 *
 * A message shorter than TP_FULL_LEN has no intended time: its receiver
 * takes the sent time for it (tp_msg_intended), so latency "from intended"
 * is then latency from the send. */
struct tp_msg {
	uint16_t magic;
	uint8_t version;
	uint8_t flags;
	uint32_t len;		/* this message, header included */
	uint64_t seq;
	int64_t sent_ns;	/* when it was sent */
};

#define TP_HDR_LEN ((uint32_t)sizeof(struct tp_msg))
#define TP_INTENDED_OFF 24u	/* the intended send time, when len >= TP_FULL_LEN */
#define TP_FULL_LEN 32u		/* a message that carries its intended time */
#define TP_ECHO_OFF 32u		/* pong's echo */

/* what pong writes at TP_ECHO_OFF of a message that has room for it
 * (len >= TP_ECHO_OFF + TP_ECHO_LEN) before sending it back, so ping can split
 * a round trip: its own times, in TSC ticks (TP_F_ECHO_TSC) where the TSC is
 * usable, else CLOCK_MONOTONIC ns (TP_F_ECHO). Ticks are what keeps pong's
 * turnaround short: an rdtsc costs ~10 ns, a clock_gettime ~25 ns on a VM,
 * and two of them are 40 % of a 130 ns shm round trip; ping, on the same
 * machine, maps them to CLOCK_MONOTONIC with its own TSC pairs. A reply
 * with neither bit (a shorter message, or a pong that does not stamp) has
 * none. */
struct tp_echo {
	int64_t rx_ns;		/* pong's receive returned the message */
	int64_t tx_ns;		/* pong's send call back began */
};

#define TP_ECHO_LEN ((uint32_t)sizeof(struct tp_echo))
#define TP_DEFAULT_PORT 17391
#define TP_DEFAULT_GROUP "239.255.0.1"
#define TP_DEFAULT_IFACE "127.0.0.1"
#define TP_DEFAULT_SHM "jtr"
#define TP_DEFAULT_UNIX "/tmp/jtr-tp.sock"
#define TP_UDP_MAX 65507u	/* largest IPv4 UDP payload */
#define TP_UNIX_DGRAM_MAX 65536u
#define TP_STREAM_MAX (1u << 20)
#define TP_MAX_SUBS 64
#define TP_DEFAULT_SLOTS 4096u
#define TP_SOCK_BUF_DEFAULT (4u << 20)	/* socket buffers asked for when no size is given */
#define TP_SOCK_BUF_MIN 1024u		/* the sizes tp_check accepts (the kernel keeps */
#define TP_SOCK_BUF_MAX (512u << 20)	/* a floor of a few KiB of its own) */

struct tp_opts {
	enum tp_kind kind;
	const char *addr;	/* NULL: tp_default_addr() */
	bool busy;		/* busy-poll receive */
	bool epoll;		/* sockets: non-blocking reads waited in epoll_wait */
	uint32_t subs;		/* pub on shm, tcp, unix: subscribers to wait for (>= 1) */
	uint32_t slots;		/* shm: ring slots, a power of two */
	uint32_t msg_max;	/* largest message that will be sent (shm: the slot size) */
	const char *iface;	/* mcast: interface address (default 127.0.0.1) */
	int ttl;		/* mcast: multicast TTL (default 0: never leaves the host) */
	bool wide;		/* mcast: another group or TTL > 0 was asked for explicitly */
	uint64_t wait_ns;	/* how long to wait for the peer to appear */
	int numa_cpu;		/* shm: this side's pinned (reading) CPU, -1: not pinned */
	int numa_node;		/* shm: the reader's node, -1: its CPU's (--numa-node) */
	bool cross_numa;	/* shm: the ring on a node other than its reader's */
	uint32_t sndbuf;	/* sockets: SO_SNDBUF to ask for, 0: TP_SOCK_BUF_DEFAULT */
	uint32_t rcvbuf;	/* sockets: SO_RCVBUF to ask for, 0: TP_SOCK_BUF_DEFAULT */
	bool nagle;		/* tcp: leave Nagle's algorithm on (no TCP_NODELAY) */
	bool hello_once;	/* datagram pub: say hello as it opens only, not again
				 * while it sends (jtr send: its timed sends stay one
				 * syscall; its drain binds before the hello) */
};

struct tp;

/* tp_kind_flags - what kind @k is: TP_P_* (0: no such kind) */
unsigned tp_kind_flags(enum tp_kind k);

/* tp_kind_has - @k has every property of @flags */
static inline bool tp_kind_has(enum tp_kind k, unsigned flags)
{
	return (tp_kind_flags(k) & flags) == flags;
}

/* tp_kind_list - the names of the kinds with every property of @flags, as
 * a sentence lists them ("tcp, udp or unix"), into @buf */
const char *tp_kind_list(unsigned flags, char *buf, size_t n);

/* tp_opts_init - defaults: the kind's default address, blocking, 1 sub */
void tp_opts_init(struct tp_opts *o, enum tp_kind kind);

/* tp_kind_parse - "shm", "tcp", "udp", "mcast", "unix", "unix-dgram" */
int tp_kind_parse(const char *s, enum tp_kind *k);

/* tp_kind_name - the name tp_kind_parse() accepts */
const char *tp_kind_name(enum tp_kind k);

/* tp_default_addr - "jtr", "127.0.0.1:17391", "239.255.0.1:17391", a path */
const char *tp_default_addr(enum tp_kind k);

/* tp_max_msg - the largest message @o's transport can carry in one piece */
uint32_t tp_max_msg(const struct tp_opts *o);

/* tp_stream_addr - the address of stream @k of several (pub/sub --streams):
 * stream 0 is o->addr itself; then shm and unix paths get ".K" appended and
 * inet addresses the port + K (e.g. 127.0.0.1:17392 for stream 1) */
int tp_stream_addr(const struct tp_opts *o, unsigned k, char *buf, size_t n, struct jtr_err *e);

/* tp_recv_name - "blocking", "busy-poll" or "epoll" for @o */
const char *tp_recv_name(const struct tp_opts *o);

/* tp_mcast_is_wide - @o asks for a group outside 239.255.0.0/16 or TTL > 0
 * (which needs o->wide and deserves a warning); -EINVAL if the address is bad */
int tp_mcast_is_wide(const struct tp_opts *o, struct jtr_err *e);

/* tp_check - validate @o for @role without opening anything: the address
 * parses, the message fits, the multicast group is allowed */
int tp_check(const struct tp_opts *o, enum tp_role role, struct jtr_err *e);

/* tp_open - open in @role; waits up to o->wait_ns for the peer where the
 * role needs one (-ETIMEDOUT). -EADDRINUSE: the address is taken. */
int tp_open(struct tp **out, const struct tp_opts *o, enum tp_role role, struct jtr_err *e);

/* tp_send - send one message (@len >= TP_HDR_LEN) to the peer(s); pub sends
 * to every subscriber, pong to its session's ping. A subscriber that went away
 * is dropped and counted (tp_peers_lost); -EPIPE when none is left (shm:
 * the last reader left or died). A full shm ring is waited on (busy, or
 * yielding when blocking) up to the wait time: -ETIMEDOUT then. -EMSGSIZE if
 * @len does not fit; -EFAULT when an shm segment shrank (tp_fault). */
int tp_send(struct tp *t, const void *buf, size_t len);

/* tp_claim - where the next message of @len bytes can be written in place
 * (shm: the ring's next slot, which still holds what was written there one
 * lap before: write the whole message, as pub does), or NULL
 * when it cannot go there now (another kind, a full ring, a reader that
 * left, a length the fast path does not take): then build the message in
 * a buffer and tp_send it. After writing it, tp_commit(@len) sends it. */
void *tp_claim(struct tp *t, size_t len);

/* tp_commit - send the message written where tp_claim said: 0 (a sleeping
 * reader is woken) */
int tp_commit(struct tp *t, size_t len);

struct tp_ring_wr;

/* tp_shm_writer - a shm writer's ring, for sends in place with tp_ring.h's
 * inline tp_ring_fits, tp_ring_claim, tp_ring_commit and tp_ring_wake: no
 * call per message (two calls a message halved the rate); NULL for other
 * kinds and roles. The inline path skips what tp_claim checks (a reader that
 * left, a segment that shrank): a sender goes through tp_claim every
 * TP_CLAIM_EVERY messages, so those are seen. */
struct tp_ring_wr *tp_shm_writer(struct tp *t);

#define TP_CLAIM_EVERY 256

struct tp_ring_rd;

/* tp_shm_reader - a shm reader's ring, for receives with tp_ring.h's inline
 * tp_ring_available and tp_ring_read, each unit read then judged with
 * tp_msg_check (one it refuses counted with tp_reject_malformed): no call per
 * message; NULL for other kinds and roles. The inline path skips what
 * tp_recv checks (a writer gone, a segment that shrank): a receiver goes
 * through tp_recv at least every TP_CLAIM_EVERY messages and whenever the
 * ring holds none, so those are seen. */
struct tp_ring_rd *tp_shm_reader(struct tp *t);

/* tp_reject_malformed - count a unit a receive in place refused */
void tp_reject_malformed(struct tp *t);

/* tp_recv - one whole, well-formed message from the session's peer into
 * @buf: its length; -EAGAIN after @timeout_ns with nothing (rejected
 * messages do not end the wait early nor make it longer); -EPIPE when the
 * peer closed or died; -EPROTO when a stream's framing is lost (a header
 * that cannot be one: the rest of the stream cannot be read); -EFAULT when
 * an shm segment shrank under the run (tp_fault says which) */
ssize_t tp_recv(struct tp *t, void *buf, size_t cap, uint64_t timeout_ns);

/* what a receiver turned away (tp_rejected fills what the library judges;
 * the programs add what they judge) */
struct tp_rejects {
	uint64_t malformed;	/* not a message: shorter than the header, bad magic,
				 * version, length or flags, longer than the buffer */
	uint64_t foreign;	/* from another sender than the session's peer */
	uint64_t before_session; /* datagrams before any sender's hello opened a session */
	uint64_t forged;	/* (program) stamps outside the run's time window */
	uint64_t out_of_window;	/* (program) a sequence number the sender cannot have issued */
	char foreign_from[72];	/* the first foreign sender ("" if none) */
};

/* tp_rejected - what tp_recv dropped so far: malformed, foreign and the
 * first foreign sender; forged and out_of_window are left 0 */
void tp_rejected(const struct tp *t, struct tp_rejects *r);

/* tp_fault - -EFAULT and a message naming the shm segment that shrank under
 * the run (another process truncated it), or 0 if none did */
int tp_fault(const struct tp *t, struct jtr_err *e);

/* tp_note - what opening did that the user should hear of (a stale shm
 * segment of a dead run replaced), or NULL */
const char *tp_note(const struct tp *t);

/* tp_peer_name - the session's peer ("127.0.0.1:40000", a unix address or
 * "" when none is pinned) */
const char *tp_peer_name(const struct tp *t);

/* tp_poll - wait until a message can be received: 1, 0 on timeout, -errno */
int tp_poll(struct tp *t, uint64_t timeout_ns);

/* tp_close - release everything (an shm creator removes its segments) */
void tp_close(struct tp *t);

/* tp_describe - "udp 127.0.0.1:17391", for messages */
const char *tp_describe(const struct tp *t);

/* tp_flags - what @t is: TP_P_* */
unsigned tp_flags(const struct tp *t);

/* tp_peers - subscribers connected or attached now (pub); 1 otherwise */
uint32_t tp_peers(const struct tp *t);

/* tp_numa_where - shm: the node this side's reader runs on and the node the
 * ring it reads (pub: writes) is on now; false for other kinds */
bool tp_numa_where(const struct tp *t, int *reader_node, int *ring_node);

/* what a socket transport's data socket is set to and did (for pub on a
 * stream: the first subscriber's; they are all set alike) */
struct tp_sock_info {
	int sndbuf;		/* SO_SNDBUF read back: Linux doubles what is asked */
	int rcvbuf;		/* SO_RCVBUF read back */
	bool tcp;		/* the fields below are read (tcp) */
	bool nodelay;		/* TCP_NODELAY is set (Nagle off) */
	bool have_segs;		/* TCP_INFO gave the segment counts */
	uint32_t segs_out;	/* tcpi_segs_out: segments sent, pure ACKs included */
	uint32_t segs_in;	/* tcpi_segs_in */
	uint64_t msgs_out;	/* messages this end sent on that socket */
	uint64_t msgs_in;	/* messages it received on it */
	bool have_drops;	/* drops is read (SO_MEMINFO) */
	uint32_t drops;		/* what the kernel dropped at the socket: datagrams
				 * that found its receive buffer full */
};

/* tp_sock_info - @t's socket options as the kernel reports them and, for
 * tcp, the connection's segment counts now (TCP_INFO); false for shm */
bool tp_sock_info(const struct tp *t, struct tp_sock_info *out);

/* tp_peers_lost - subscribers that went away during the run (pub; shm: of
 * the readers at the start, those that left, were dropped or died) */
uint32_t tp_peers_lost(const struct tp *t);

/* tp_blocked - sends that found the transport full and waited for room (a
 * full shm ring, a socket's full send buffer: the seeds' EWOULDBLOCK, which
 * their maximum-rate procedure counts as a failure) */
uint64_t tp_blocked(const struct tp *t);

/* tp_msg_ok - one message's header is sane for its own length @len */
static inline bool tp_msg_ok(const struct tp_msg *m, size_t len)
{
	return len >= TP_HDR_LEN && m->magic == TP_MAGIC && m->version == TP_VERSION &&
	       m->len == len && !(m->flags & ~TP_F_ALL);
}

/* tp_msg_check_packed - a packed unit (pub --pack): messages one after the
 * other, each sane for its own length, every one but the last marked
 * TP_F_PACKED, their lengths adding up to exactly @len (cold) */
bool tp_msg_check_packed(const struct tp_msg *m, size_t len);

/* tp_msg_check - a received unit (a datagram, a ring slot, a stream's
 * message) is one sane message, or a sane packed unit */
static inline bool tp_msg_check(const struct tp_msg *m, size_t len)
{
	if (__builtin_expect(len >= TP_HDR_LEN && (m->flags & TP_F_PACKED), 0))
		return tp_msg_check_packed(m, len);
	return tp_msg_ok(m, len);
}

/* tp_msg_next - the message after @m in a unit (the unit's end when @m is
 * its last) */
static inline const struct tp_msg *tp_msg_next(const struct tp_msg *m)
{
	return (const struct tp_msg *)((const unsigned char *)m + m->len);
}

/* tp_msg_intended - @m's intended send time: carried when the message is
 * long enough, else its sent time */
static inline int64_t tp_msg_intended(const struct tp_msg *m)
{
	int64_t v;

	if (m->len < TP_FULL_LEN)
		return m->sent_ns;
	__builtin_memcpy(&v, (const unsigned char *)m + TP_INTENDED_OFF, sizeof(v));
	return v;
}

/* A published message's payload: the bytes after its header and intended
 * time (from TP_FULL_LEN, or TP_HDR_LEN in a shorter message) carry a
 * pattern of its sequence number, written by the publisher for every
 * message it sends, so that no figure can be had by sending the same bytes
 * again: the byte at offset o is byte (o mod 8) of tp_payload_word(seq)
 * stored in the host's byte order, as the header is. 'jtr sub --verify'
 * checks each one (tp_payload_ok). */
#define TP_PAYLOAD_MUL 0x9E3779B97F4A7C15ull	/* odd: one word per number */

static inline uint64_t tp_payload_word(uint64_t seq)
{
	return (seq + 1) * TP_PAYLOAD_MUL;
}

/* tp_payload_off - where the payload of a @len-byte message begins */
static inline uint32_t tp_payload_off(uint32_t len)
{
	return len >= TP_FULL_LEN ? TP_FULL_LEN : TP_HDR_LEN;
}

/* tp_payload_tail - the 8 bytes that end a @len-byte message's payload at
 * len - 8, as a word: byte k is byte (len + k) mod 8 of @w's */
static inline uint64_t tp_payload_tail(uint64_t w, uint32_t len)
{
	const unsigned r = 8 * (len & 7);

	if (!r)
		return w;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return w >> r | w << (64 - r);
#else
	return w << r | w >> (64 - r);
#endif
}

/* tp_payload_fill - write message @seq's payload into @m of @len bytes:
 * 8-byte stores, and the last len mod 8 bytes as one more that overlaps
 * the one before (a payload shorter than 8 bytes byte by byte) */
static inline void tp_payload_fill(struct tp_msg *m, uint32_t len, uint64_t seq)
{
	unsigned char *b = (unsigned char *)m;
	const uint64_t w = tp_payload_word(seq);
	uint32_t o = tp_payload_off(len);

	if (len - o < 8) {
		unsigned char wb[8];

		__builtin_memcpy(wb, &w, sizeof(w));
		for (; o < len; o++)
			b[o] = wb[o & 7];
		return;
	}
	for (; o + 8 <= len; o += 8)
		__builtin_memcpy(b + o, &w, sizeof(w));
	if (o < len) {
		const uint64_t t = tp_payload_tail(w, len);

		__builtin_memcpy(b + len - 8, &t, sizeof(t));
	}
}

/* tp_payload_ok - @m carries the payload its sequence number gives (read
 * as tp_payload_fill writes it) */
static inline bool tp_payload_ok(const struct tp_msg *m)
{
	const unsigned char *b = (const unsigned char *)m;
	const uint64_t w = tp_payload_word(m->seq);
	const uint32_t len = m->len;
	uint32_t o = tp_payload_off(len);
	uint64_t v, diff = 0;

	if (len - o < 8) {
		unsigned char wb[8];

		__builtin_memcpy(wb, &w, sizeof(w));
		for (; o < len; o++)
			diff |= (uint64_t)(b[o] ^ wb[o & 7]);
		return !diff;
	}
	for (; o + 8 <= len; o += 8) {
		__builtin_memcpy(&v, b + o, sizeof(v));
		diff |= v ^ w;
	}
	if (o < len) {
		__builtin_memcpy(&v, b + len - 8, sizeof(v));
		diff |= v ^ tp_payload_tail(w, len);
	}
	return !diff;
}

/* tp_msg_fill - write a header, and the intended time where there is room */
static inline void tp_msg_fill(struct tp_msg *m, uint32_t len, uint8_t flags, uint64_t seq,
			       int64_t intended_ns, int64_t sent_ns)
{
	m->magic = TP_MAGIC;
	m->version = TP_VERSION;
	m->flags = flags;
	m->len = len;
	m->seq = seq;
	m->sent_ns = sent_ns;
	if (len >= TP_FULL_LEN)
		__builtin_memcpy((unsigned char *)m + TP_INTENDED_OFF, &intended_ns, sizeof(intended_ns));
}

#endif
