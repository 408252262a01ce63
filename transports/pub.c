// SPDX-License-Identifier: GPL-2.0-only
/* pub.c - jtr pub: a rate-paced publisher.
 *
 * One sending thread per stream (-a CPU[,CPU...], --streams N) sends COUNT
 * messages of LEN bytes at RATE per second (or for -d) after WARMUP
 * unmeasured ones (at --warmup-rate), busy-waiting to each intended send
 * time on a fixed schedule and catching up without skipping when it falls
 * behind: evenly spaced, or in --ticks bursts, one message a write or
 * --pack of them. Every message carries its sequence number and, unless
 * --no-timestamps (or not chosen by --latency-rate), its send time and, from
 * 32 bytes, its intended time (CLOCK_MONOTONIC) for the subscribers'
 * latency; the rest of it is a payload written for it, a pattern of its
 * number that 'jtr sub --verify' checks (tp_payload_fill). After the last
 * one it lingers, then sends end of stream with the count, so subscribers
 * can tell tail loss from a finished run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jtr_cli.h"
#include "tp_prog.h"
#include "tp_ring.h"
#include "tp_zip.h"

static const char usage_text[] =
"usage: jtr pub [OPTIONS]\n"
"\n"
"Publish messages at a steady rate to one or more 'jtr sub'. The sending thread\n"
"waits for each message's intended time on a fixed schedule (sleeping until\n"
"100 us before it, then spinning; --spin: spinning all the way) and catches up\n"
"without skipping when late. For shm, tcp and unix it waits for --subs\n"
"subscribers first; for udp, unix-dgram and mcast, start the subscribers first.\n"
"\n"
"options:\n"
JTR_COUNT_HELP "        measured messages (default 100000; K, M, G suffixes)\n"
JTR_DURATION_HELP "  send for DURATION instead of a count (with -r: the\n"
"                           messages due in it; with -r max: until it is over)\n"
"      --steady DUR         send for the start-up (--startup) and then DUR, the\n"
"                           steady state's length (the summary's steady phase)\n"
JTR_RATE_HELP "          messages per second (default 10000); max: no pacing\n"
"      --ticks N            send in N bursts a second (each of RATE/N messages,\n"
"                           back to back) instead of evenly spaced messages\n"
"      --spin               busy-wait all the way to each send, never sleep (the\n"
"                           same from 10000 sends a second up)\n"
"      --latency-rate RATE  stamp only RATE messages a second (evenly among\n"
"                           them; the others carry no time), for low overhead\n"
"      --pack N             N messages in one write, datagram or ring slot, sent\n"
"                           when the first is due; the subscriber counts each\n"
"      --high-water-mark BYTES  each message into an output buffer of BYTES\n"
"                           (K, M: x1024) when it is due, stamped then; the\n"
"                           buffer is written (one write, datagram or ring slot)\n"
"                           when the next message would not fit, when the next\n"
"                           is not due yet (the end of a --ticks burst) and at\n"
"                           the end: the wait in it is part of the latency\n"
JTR_LEN_HELP "          message length, header included (default 64, >= 24;\n"
"                           from 32 on a message carries its intended send time;\n"
"                           the bytes after the header and time are a payload\n"
"                           written for each message, which 'sub --verify' checks)\n"
"  -w, --warmup N           messages sent first, not measured (default 1000)\n"
"      --warmup-rate RATE   the warm-up's own rate (default: -r's; max)\n"
"      --compress zlib      each message's payload deflated on its own after it\n"
"                           is stamped ('jtr sub' expands it before it takes the\n"
"                           time): the ratio and the time per message reported\n"
"      --compress-level N   1 (fastest) to 9 (smallest; default 6, zlib's)\n"
"      --max-fragment BYTES  a message longer than BYTES (K, M: x1024) goes in\n"
"                           fragments of at most BYTES, each its own write, which\n"
"                           'jtr sub' puts together (so -m can pass a datagram's\n"
"                           64 KB or a ring slot's size)\n"
"  -l, --linger DUR         wait after the last message before end of stream\n"
"                           (default 100ms)\n"
JTR_CPUS_HELP "          pin the sending thread (-1: none, the default); with\n"
"                           --streams N, one CPU per stream: CPU[,CPU...]\n"
"      --streams N          N streams, each its own transport and pinned sending\n"
"                           thread, at -r each (stream K: the port + K, or the\n"
"                           shm name or socket path + .K); sums and each stream\n"
"      --subs N             shm, tcp, unix: subscribers to wait for (default 1)\n"
"      --no-timestamps      do not stamp messages (no clock read per message;\n"
"                           subscribers then report no latency)\n"
"      --drop-every K       for testing: skip sending every K-th message (its\n"
"                           sequence number is used up), so loss is seen\n"
JTR_FIFO_HELP "          run SCHED_FIFO at PRIO (1-99)\n"
JTR_OUTPUT_HELP "         results folder (default results/DATE-HOST-pub)\n"
"      --hist-error PCT     histogram's maximum relative error (default 1)\n"
JTR_QUIET_HELP "              no summary on stdout\n"
"  -h, --help               this text\n"
"\n"
TP_PROG_USAGE
"\n"
TP_STATS_USAGE
"\n"
"A duration is NUMBER[UNIT], UNIT ns, us, ms, s, m or h; a bare number is in\n"
"seconds, but -l still reads one as ms, with a warning: write the unit (100ms).\n"
"\n"
JTR_OLD_HELP " -a LIST (-c).\n"
"\n"
"Writes DIR/summary.txt (inputs and results), DIR/result.json (run send_call: time\n"
"per send; transport.stats holds the rows) and DIR/stats.csv. Exit status: 0; 1\n"
"if a subscriber went away or stopped reading; 2 for bad options or subscribers\n"
"that never came; 130 after Ctrl-C, SIGTERM or SIGHUP (what was sent is\n"
"written, marked partial).\n"
"\n"
"examples:\n"
"  jtr sub -T shm & jtr pub -T shm -r 1M -n 10M        10 s at 1M msgs/s through shm\n"
"  jtr pub -T tcp -r 100K --ticks 1000 -d 30s --latency-rate 1000\n"
"                     30 s of 100-message bursts every ms, 1000 of them stamped\n"
"  jtr pub -T udp -r max -m 25 --pack 32 --no-timestamps -n 10M\n"
"                     32 messages of 25 bytes per datagram, as fast as it goes\n"
"  jtr pub -T mcast -r 100K -m 700 -n 1M               700-byte multicast on loopback\n"
"  jtr pub -T tcp -r 100K --ticks 100 --high-water-mark 4K\n"
"                     bursts of 1000 in 4 KB writes, as a library's output queue\n"
"  jtr pub -T udp -r 2K -m 200K --max-fragment 60K\n"
"                     200 KB messages over udp, in fragments of 60 KB\n"
"  jtr pub -T tcp --subs 3 -r max -n 1M -w 10000       as fast as 3 TCP readers\n"
"                                                      take it\n";

/* getopt values of pub's own long options (tp_prog.h's are 400 up) */
enum { OPT_LATENCY_RATE = 500, OPT_PACK, OPT_STREAMS, OPT_HWM, OPT_COMPRESS, OPT_COMPRESS_LEVEL,
       OPT_MAX_FRAGMENT };

#define PACK_MAX 1024u

static const struct option long_opts[] = {
	JTR_LONG(COUNT),
	JTR_LONG(RATE),
	JTR_LONG(LEN),
	{ "warmup", required_argument, NULL, 'w' },
	{ "linger", required_argument, NULL, 'l' },
	JTR_LONG(CPUS),
	{ "cpu", required_argument, NULL, JTR_CPUS_C },
	{ "subs", required_argument, NULL, TP_OPT_SUBS },
	{ "no-timestamps", no_argument, NULL, TP_OPT_NO_TS },
	{ "drop-every", required_argument, NULL, TP_OPT_DROP_EVERY },
	JTR_LONG(DURATION),
	{ "ticks", required_argument, NULL, TP_OPT_TICKS },
	{ "spin", no_argument, NULL, TP_OPT_SPIN },
	{ "steady", required_argument, NULL, TP_OPT_STEADY },
	{ "latency-rate", required_argument, NULL, OPT_LATENCY_RATE },
	{ "pack", required_argument, NULL, OPT_PACK },
	{ "high-water-mark", required_argument, NULL, OPT_HWM },
	{ "compress", required_argument, NULL, OPT_COMPRESS },
	{ "compress-level", required_argument, NULL, OPT_COMPRESS_LEVEL },
	{ "max-fragment", required_argument, NULL, OPT_MAX_FRAGMENT },
	{ "warmup-rate", required_argument, NULL, TP_OPT_WARMUP_RATE },
	{ "streams", required_argument, NULL, OPT_STREAMS },
	TP_PROG_LONG_OPTS,
	TP_STATS_LONG_OPTS,
	JTR_PROBE_LONG_OPTS,
	{ NULL, 0, NULL, 0 },
};

/* unstamped messages of up to AHEAD_MAX_LEN bytes are prepared AHEAD
 * sends ahead (see sender) */
#define AHEAD 16
#define AHEAD_MAX_LEN 4096u

/* the most streams (one sending thread each) */
#define STREAMS_MAX TP_STAT_MAX_SRC

struct stream;

struct pub {
	struct jtr_probe *p;
	struct tp_prog *tp;
	struct tp_load load;		/* -m, -n, -d, -r, -w, --warmup-rate, --ticks */
	uint64_t linger_ns, drop_every;
	uint64_t lat_rate;		/* --latency-rate: stamped messages a second (0: all) */
	uint32_t pack;			/* --pack: messages per write or slot */
	uint32_t hwm;			/* --high-water-mark: the output buffer's bytes (0: none,
					 * each message its own write) */
	uint32_t qmax;			/* the messages it holds */
	int zlevel;			/* --compress zlib: its level (0: no compression) */
	int zlevel_given;		/* --compress-level (0: not given) */
	uint32_t frag_max;		/* --max-fragment (0: none) */
	bool frag;			/* -m is longer: every message goes in fragments */
	bool stamps;
	int nstreams;			/* --streams */
	int ncpus;			/* CPUs -a gave (0: none) */
	int cpus[STREAMS_MAX];
	struct stream *streams;
	struct tp_stats st;
};

/* one stream: a transport, its sending thread and what it did (with one
 * stream, the run; with several, also their sum for the totals) */
struct stream {
	struct pub *g;
	int k;				/* its number, 0 .. nstreams - 1 */
	struct tp_prog tp;		/* the options, with this stream's address */
	char addr[128];
	struct tp *t;
	int cpu;
	unsigned char *buf;		/* ahead buffers of len bytes, or one unit, or the
					 * output buffer (--high-water-mark) */
	uint32_t qn;			/* messages waiting in the output buffer */
	struct tp_zip zip;		/* --compress */
	unsigned char *zbuf;		/* a compressed message */
	struct tp_frag_tx frag;		/* --max-fragment */
	uint32_t ahead;			/* a power of two: 1 (stamped, long or packed) or AHEAD */
	bool framed;			/* the transport frames each message (a stream): a
					 * packed unit needs no TP_F_PACKED */
	struct jtr_hist send_call;
	int64_t first_ns, last_ns;
	uint64_t issued, sent, dropped, late, max_tight, units, stamped;
	uint64_t measured;		/* measured messages sent (after the run) */
	uint32_t subs_at_start;
	uint32_t subs_lost;		/* gone before the end of stream went out */
	uint64_t blocked;		/* sends that waited for room (tp_blocked) */
	int err;
	struct tp_stat_src ssrc;	/* the sending thread's interval counters */
};

/* stamp_due - with --latency-rate L, message @i is stamped when it starts
 * a new 1/L of the schedule: floor(i x L / rate) moves on, exactly L a
 * second */
static inline bool stamp_due(const struct pub *g, uint64_t i)
{
	const uint64_t r = i < g->load.warmup ? g->load.warm_rate_hz : g->load.rate_hz;

	if (!g->lat_rate || !r)
		return g->stamps;
	i = i < g->load.warmup ? i : i - g->load.warmup;
	return !i || (unsigned __int128)i * g->lat_rate / r !=
		     (unsigned __int128)(i - 1) * g->lat_rate / r;
}

/* cpu_relax - a spinning core's hint */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* stat_asked - the stats thread asks for the interval's counts (the
 * load tp_stat_poll makes) */
static inline bool stat_asked(const struct tp_stat_src *s)
{
	return __atomic_load_n(&s->ask, __ATOMIC_RELAXED) != s->served;
}

/* stat_add - @n messages of @len bytes into the interval's counts (the
 * sender counts in a register, not with a store per message) */
static inline void stat_add(struct tp_stat_src *s, uint64_t n, uint32_t len)
{
	s->cur.msgs += n;
	s->cur.bytes += n * len;
}

/* prepare - unstamped message @i, whole: its header and its payload (every
 * message is written for itself, none reuses what a slot or buffer held) */
static inline void prepare(const struct pub *g, struct tp_msg *m, uint64_t i)
{
	tp_msg_fill(m, g->load.len, i < g->load.warmup ? TP_F_WARMUP : 0, i, 0, 0);
	tp_payload_fill(m, g->load.len, i);
}

/* dropped_here - --drop-every skips message @j: its number is used up,
 * nothing is sent */
static inline bool dropped_here(const struct pub *g, uint64_t j)
{
	return g->drop_every && (j + 1) % g->drop_every == 0;
}

/* one send of the paced loop: the numbers it covers, the messages it sends
 * (--drop-every leaves some out), its stamp */
struct unit {
	uint64_t k, n;
	int64_t sent_ns;	/* the stamp (stamp) */
	bool stamp;
};

/* fill_unit - messages @i .. @i + @k - 1 one after the other in s->buf (one
 * write, one datagram, one ring slot), those --drop-every skips left out,
 * each but the last marked packed where the transport keeps no framing of
 * its own (a stream needs none). The payloads are written first, then the
 * stamp is taken (u->sent_ns, when u->stamp) and the headers written with
 * it: every message is due at @due, or at the stamp when not @paced. The
 * bytes to send. */
static size_t fill_unit(struct stream *s, uint64_t i, uint64_t k, int64_t due, bool paced,
			struct unit *u, uint64_t *stamped)
{
	const struct pub *g = s->g;
	const uint32_t len = g->load.len;
	const bool framed = s->framed;
	struct tp_msg *m = NULL;
	size_t off = 0;

	for (uint64_t j = i; j < i + k; j++)
		if (!dropped_here(g, j)) {
			tp_payload_fill((struct tp_msg *)(s->buf + off), len, j);
			off += len;
		}
	u->sent_ns = u->stamp ? jtr_mono_ns() : 0;
	if (!paced)
		due = u->sent_ns;
	off = 0;
	for (uint64_t j = i; j < i + k; j++) {
		const bool stamp = stamp_due(g, j);

		if (dropped_here(g, j)) {
			s->dropped++;	/* the number is used up, nothing is sent */
			continue;
		}
		m = (struct tp_msg *)(s->buf + off);
		tp_msg_fill(m, len, (uint8_t)((j < g->load.warmup ? TP_F_WARMUP : 0) |
					      (stamp ? TP_F_STAMPED : 0) | (framed ? 0 : TP_F_PACKED)),
			    j, stamp ? due : 0, stamp ? u->sent_ns : 0);
		*stamped += stamp;
		off += len;
	}
	if (m)
		m->flags &= (uint8_t)~TP_F_PACKED;
	return off;
}

/* send_unpaced - sender's loop for -r max with unstamped single messages,
 * the throughput case, kept apart so that its few variables stay in
 * registers (the general loop's spill to the stack cost 40 % of the rate):
 * no clock read but for the first measured message and -d; each message
 * written whole in its ring slot, or (sockets) prepared AHEAD sends ahead */
static void send_unpaced(struct stream *s, uint64_t total)
{
	struct pub *g = s->g;
	const uint64_t warmup = g->load.warmup, drop_every = g->drop_every, mask = s->ahead - 1;
	const uint32_t len = g->load.len;
	unsigned char *const buf = s->buf;
	struct tp *const t = s->t;
	int64_t deadline = 0;
	uint64_t i, sent = 0, counted = 0;
	struct tp_msg *slot;
	const bool claims = tp_prog_has(g->tp, TP_P_RING);	/* sends in place */
	struct tp_ring_wr *const ring = claims && len >= TP_RING_SHORT && len <= TP_RING_SMALL ?
					tp_shm_writer(t) : NULL;
	int rc;

	for (i = 0; i < total && !jtr_stop; i++) {
		struct tp_msg *m = (struct tp_msg *)(buf + (size_t)(i & mask) * len);

		if (__builtin_expect(i == warmup, 0)) {
			s->first_ns = jtr_mono_ns();
			if (g->load.duration_ns)
				deadline = s->first_ns + (int64_t)g->load.duration_ns;
		}
		if (__builtin_expect(deadline != 0, 0) && (i & 63) == 0 && jtr_mono_ns() >= deadline)
			break;
		/* the messages sent since the last answer go into the interval
		 * before the stats thread's question is answered */
		if (__builtin_expect(stat_asked(&s->ssrc), 0)) {
			stat_add(&s->ssrc, sent - counted, len);
			counted = sent;
			tp_stat_poll(&s->ssrc);
		}
		if (__builtin_expect(drop_every && (i + 1) % drop_every == 0, 0)) {
			s->dropped++;	/* the number is used up, nothing is sent */
			if (!claims)
				prepare(g, m, i + mask + 1);
			continue;
		}
		/* in place where the transport lets: the message is written
		 * whole into shm's next slot (no copy), inline but every
		 * TP_CLAIM_EVERY'th, which tp_claim checks; else (a full
		 * ring, a socket) from a buffer */
		if (ring && (i % TP_CLAIM_EVERY) && tp_ring_fits(ring, len)) {
			slot = (struct tp_msg *)(void *)tp_ring_claim(ring);
			prepare(g, slot, i);
			if (tp_ring_commit(ring, len))
				tp_ring_wake(ring->r);
			rc = 0;
		} else if (claims && (slot = tp_claim(t, len)) != NULL) {
			prepare(g, slot, i);
			rc = tp_commit(t, len);
		} else if (claims) {
			prepare(g, m, i);
			rc = tp_send(t, m, len);
		} else {
			rc = tp_send(t, m, len);
			prepare(g, m, i + mask + 1);
		}
		if (__builtin_expect(rc < 0, 0)) {
			s->err = rc;
			break;
		}
		sent++;
	}
	stat_add(&s->ssrc, sent - counted, len);
	s->sent = sent;
	s->units = sent;
	s->issued = i;
}

/* pace - wait until message @i is due: its intended time. A measured send (a
 * tick's first; messages from @warmup on) that begins after its time is late
 * (@tight: late ones in a row); the warm-up's are not counted, as they are not
 * in the measured messages sent. */
static inline __attribute__((always_inline)) int64_t pace(struct stream *s, const struct tp_sched *plan,
							  uint64_t i, uint64_t warmup,
							  int64_t *prev_due, uint64_t *tight)
{
	int64_t due = tp_sched_at(plan, i), now = jtr_mono_ns();

	if (now < due) {
		*tight = 0;
		if (due - now > TP_SPIN_NS && !s->g->load.spin) {
			tp_nap(due - TP_SPIN_NS);
			now = jtr_mono_ns();
		}
		while (now < due) {
			cpu_relax();
			now = jtr_mono_ns();
		}
	} else if (i && i >= warmup && due != *prev_due) {
		s->late++;
		if (++*tight > s->max_tight)
			s->max_tight = *tight;
	}
	*prev_due = due;
	return due;
}

/* send_packed - --pack: messages @i .. in one unit (all warm-up or all
 * measured), due at @due (unpaced: at its stamp); 1 when --drop-every left
 * nothing to send */
static inline __attribute__((always_inline)) int send_packed(struct stream *s, uint64_t i, uint64_t total,
							     int64_t due, bool paced, struct unit *u,
							     uint64_t *stamped)
{
	const struct pub *g = s->g;
	const uint64_t dropped = s->dropped;
	size_t bytes;

	u->k = total - i < g->pack ? total - i : g->pack;
	if (i < g->load.warmup && g->load.warmup - i < u->k)
		u->k = g->load.warmup - i;	/* a unit is all warm-up or all measured */
	u->stamp = g->stamps;
	bytes = fill_unit(s, i, u->k, due, paced, u, stamped);
	u->n = u->k - (s->dropped - dropped);	/* messages in the unit */
	return bytes ? tp_send(s->t, s->buf, bytes) : 1;
}

/* flush_queue - --high-water-mark: the messages waiting in the output
 * buffer in one write (the last one's packed mark taken off); @u: the
 * write's messages and, with stamps, its start (the send-call time). 1 when
 * none wait */
static int flush_queue(struct stream *s, struct unit *u)
{
	const uint32_t len = s->g->load.len;
	int rc;

	if (!s->qn)
		return 1;
	((struct tp_msg *)(s->buf + (size_t)(s->qn - 1) * len))->flags &= (uint8_t)~TP_F_PACKED;
	u->n = s->qn;
	u->stamp = s->g->stamps;
	u->sent_ns = u->stamp ? jtr_mono_ns() : 0;
	rc = tp_send(s->t, s->buf, (size_t)s->qn * len);
	s->qn = 0;
	return rc;
}

/* send_queued - --high-water-mark: message @i, due at @due, written into the
 * output buffer when it is due, stamped then (its wait in the buffer is part
 * of its latency, as in a library's output queue); the buffer is written
 * when the next message would not fit, when the next one is not due yet (the
 * sender is about to wait: the end of a --ticks burst, or any paced message
 * when each is alone in its time), at the end of the warm-up and at the last
 * message. 1 when nothing was written */
static inline __attribute__((always_inline)) int send_queued(struct stream *s, const struct tp_sched *plan,
							     uint64_t i, uint64_t total, int64_t due,
							     bool paced, struct unit *u, uint64_t *stamped)
{
	const struct pub *g = s->g;
	const uint32_t len = g->load.len;
	int64_t now = 0;

	if (__builtin_expect(dropped_here(g, i), 0)) {
		s->dropped++;	/* the number is used up, nothing is sent */
	} else {
		struct tp_msg *m = (struct tp_msg *)(s->buf + (size_t)s->qn * len);
		const bool stamp = stamp_due(g, i);

		tp_payload_fill(m, len, i);	/* before the stamp */
		now = stamp ? jtr_mono_ns() : 0;
		tp_msg_fill(m, len, (uint8_t)((i < g->load.warmup ? TP_F_WARMUP : 0) |
					      (stamp ? TP_F_STAMPED : 0) |
					      (s->framed ? 0 : TP_F_PACKED)),
			    i, stamp ? (paced ? due : now) : 0, now);
		*stamped += stamp;
		s->qn++;
	}
	if (s->qn < g->qmax && i + 1 < total && i + 1 != g->load.warmup &&
	    !(paced && tp_sched_at(plan, i + 1) > (now ? now : jtr_mono_ns())))
		return 1;
	return flush_queue(s, u);
}

/* send_single - message @i, stamped when due (in one of AHEAD buffers
 * prepared before, when unstamped); 1 when --drop-every skips it */
static inline __attribute__((always_inline)) int send_single(struct stream *s, uint64_t i, int64_t due,
							     bool paced, struct unit *u,
							     uint64_t *stamped)
{
	const struct pub *g = s->g;
	struct tp_msg *m = (struct tp_msg *)(s->buf + (size_t)(i & (s->ahead - 1)) * g->load.len);
	int rc;

	if (__builtin_expect(dropped_here(g, i), 0)) {
		s->dropped++;	/* the number is used up, nothing is sent */
		if (s->ahead > 1)
			prepare(g, m, i + s->ahead);
		return 1;
	}
	u->stamp = s->ahead == 1 && stamp_due(g, i);
	if (s->ahead == 1) {
		tp_payload_fill(m, g->load.len, i);	/* before the stamp */
		u->sent_ns = u->stamp ? jtr_mono_ns() : 0;
		tp_msg_fill(m, g->load.len, (uint8_t)((i < g->load.warmup ? TP_F_WARMUP : 0) |
						      (u->stamp ? TP_F_STAMPED : 0)),
			    i, u->stamp ? (paced ? due : u->sent_ns) : 0, u->sent_ns);
		*stamped += u->stamp;
	}
	if (g->frag) {
		rc = tp_frag_send(&s->frag, s->t, m);
	} else if (g->zlevel) {	/* the library's work, after the stamp */
		size_t n = tp_zip_pack(&s->zip, m, s->zbuf, g->load.len - 1);

		rc = n ? tp_send(s->t, s->zbuf, n) : tp_send(s->t, m, g->load.len);
	} else {
		rc = tp_send(s->t, m, g->load.len);
	}
	if (s->ahead > 1)
		prepare(g, m, i + s->ahead);
	return rc;
}

/* sender - the paced loop: one send per message, or per --pack messages.
 * Unstamped single messages are prepared AHEAD sends before they go (in a
 * ring of AHEAD buffers): a send copies a header written long before,
 * instead of loading the number just stored, a load that would wait for
 * every store queued before it (the previous message's slot, waiting for
 * its cache line) */
static void sender(void *arg)
{
	struct stream *s = arg;
	struct pub *g = s->g;
	const uint64_t total = g->load.warmup + g->load.count;
	struct jtr_hist sc = s->send_call;
	struct tp_sched plan;
	int64_t prev_due = INT64_MIN, deadline = 0, after;
	uint64_t i, tight = 0, sent = 0, counted = 0, units = 0, stamped = 0;
	int rc;

	for (i = 0; s->ahead > 1 && i < s->ahead; i++)
		prepare(g, (struct tp_msg *)(s->buf + (size_t)i * g->load.len), i);
	tp_sched_init(&plan, &g->load, jtr_mono_ns(), 1e9);
	tp_stat_thread_begin(&s->ssrc);
	if (s->ahead > 1 && !g->load.rate_hz && !g->load.warm_rate_hz) {
		send_unpaced(s, total);
		tp_stat_thread_end(&s->ssrc);
		s->last_ns = jtr_mono_ns();
		return;
	}
	for (i = 0; i < total && !jtr_stop;) {
		const bool paced = i < g->load.warmup ? g->load.warm_rate_hz : g->load.rate_hz;
		/* unpaced (-r max), the clock is read only for stamps, for the
		 * first measured message and for -d: at tens of millions of
		 * messages a second a clock read (~20 ns) would cost more than
		 * the send */
		const int64_t due = paced ? pace(s, &plan, i, g->load.warmup, &prev_due, &tight) : plan.t0;
		struct unit u = { .k = 1, .n = 1 };

		if (__builtin_expect(i == g->load.warmup, 0)) {
			s->first_ns = paced ? due : jtr_mono_ns();
			if (g->load.duration_ns && !g->load.rate_hz)
				deadline = s->first_ns + (int64_t)g->load.duration_ns;
		}
		if (__builtin_expect(deadline != 0, 0) && (units & 63) == 0 && jtr_mono_ns() >= deadline)
			break;
		/* the messages sent since the last answer go into the interval
		 * before the stats thread's question is answered */
		if (__builtin_expect(stat_asked(&s->ssrc), 0)) {
			stat_add(&s->ssrc, sent - counted, g->load.len);
			counted = sent;
			tp_stat_poll(&s->ssrc);
		}
		rc = g->hwm ? send_queued(s, &plan, i, total, due, paced, &u, &stamped) :
		     g->pack > 1 ? send_packed(s, i, total, due, paced, &u, &stamped) :
				   send_single(s, i, due, paced, &u, &stamped);
		if (rc > 0) {	/* nothing went: the numbers are used up */
			i += u.k;
			continue;
		}
		if (u.stamp) {
			after = jtr_mono_ns();
			if (i >= g->load.warmup)
				jtr_hist_record(&sc, (uint64_t)(after - u.sent_ns));
		}
		if (__builtin_expect(rc < 0, 0)) {
			s->err = rc;
			break;
		}
		sent += u.n;
		units++;
		i += u.k;
	}
	if (s->qn && !s->err) {		/* stopped or out of time: what waits goes too */
		struct unit u = { .k = 0 };

		rc = flush_queue(s, &u);
		if (rc < 0) {
			s->err = rc;
		} else {
			sent += u.n;
			units++;
		}
	}
	stat_add(&s->ssrc, sent - counted, g->load.len);
	s->sent = sent;
	s->units = units;
	s->stamped = stamped;
	tp_stat_thread_end(&s->ssrc);
	s->issued = i;
	s->last_ns = jtr_mono_ns();
	s->send_call = sc;
}

/* measured_sent - measured messages stream @s actually sent */
static uint64_t measured_sent(const struct pub *g, const struct stream *s)
{
	uint64_t warm_sent = s->issued < g->load.warmup ? s->issued : g->load.warmup;

	warm_sent -= g->drop_every ? warm_sent / g->drop_every : 0;
	return s->sent > warm_sent ? s->sent - warm_sent : 0;
}

/* duration_ns - first measured intended send to the end of the last send */
static uint64_t duration_ns(const struct stream *s)
{
	return s->first_ns && s->last_ns > s->first_ns ? (uint64_t)(s->last_ns - s->first_ns) : 0;
}

/* summary - the sends and subscribers, the send-call times and the CPU; with
 * @legacy (summary.txt, --legacy-output) in the predecessors' lines: the o_*
 * inputs, actual_sends=, result_rate=, the phases table, um_perf's last line */
static void summary(FILE *f, const struct jtr_probe *p, const struct pub *g,
		    const struct stream *s, bool legacy)
{
	const struct jtr_hist *h = &s->send_call;
	uint64_t dur = duration_ns(s), n = s->measured;

	const uint64_t asked = g->load.duration_ns && !g->load.rate_hz ? n : g->load.count;
	char rate[32], what[48];

	tp_load_rate_name(&g->load, rate, sizeof(rate));
	tp_load_what(&g->load, what, sizeof(what));
	fprintf(f, "jtr pub: %s, %u-byte messages, %s at %s (+%llu warm-up)%s%s\n",
		tp_describe(s->t), g->load.len, what, rate, (unsigned long long)g->load.warmup,
		g->nstreams > 1 ? ", each of the streams below; their sum" : "",
		p->partial ? ", PARTIAL" : "");
	for (int k = 0; g->nstreams > 1 && k < g->nstreams; k++) {
		const struct stream *e = &g->streams[k];
		uint64_t d = duration_ns(e);

		fprintf(f, "  stream %d: %s, cpu %d: sent=%llu, rate=%.1f, late_sends=%llu, "
			"subscribers_lost=%u%s\n", k, tp_describe(e->t), e->cpu,
			(unsigned long long)e->measured, d ? (double)e->measured * 1e9 / (double)d : 0.0,
			(unsigned long long)e->late, e->subs_lost, e->err ? ", FAILED" : "");
	}
	if (!legacy) {
		fprintf(f, "sent %llu at %.1f/s in %.3f s, %llu late", (unsigned long long)n,
			dur ? (double)n * 1e9 / (double)dur : 0.0, (double)dur / 1e9,
			(unsigned long long)s->late);
		if (s->blocked)
			fprintf(f, ", %llu waited for room", (unsigned long long)s->blocked);
		if (s->dropped)
			fprintf(f, ", %llu dropped on purpose", (unsigned long long)s->dropped);
		fprintf(f, "; %u subscriber%s", s->subs_at_start, s->subs_at_start == 1 ? "" : "s");
		if (s->subs_lost)
			fprintf(f, ", %u lost", s->subs_lost);
		fputc('\n', f);
	} else {
		fprintf(f, "o_rate=%llu, o_msg_len=%u, o_num_msgs=%llu, o_warmup_loops=%llu, "
			"o_linger_ms=%llu,\n", (unsigned long long)g->load.rate_hz, g->load.len,
			(unsigned long long)asked, (unsigned long long)g->load.warmup,
			(unsigned long long)(g->linger_ns / JTR_NS_PER_MS));
		fprintf(f, "actual_sends=%llu, duration_ns=%llu, result_rate=%.6f,\n",
			(unsigned long long)n, (unsigned long long)dur,
			dur ? (double)n * 1e9 / (double)dur : 0.0);
		fprintf(f, "late_sends=%llu, max_tight_sends=%llu, dropped_on_purpose=%llu, "
			"subscribers=%u, subscribers_lost=%u\n", (unsigned long long)s->late,
			(unsigned long long)s->max_tight, (unsigned long long)s->dropped,
			s->subs_at_start, s->subs_lost);
	}
	if (g->load.ticks || g->pack > 1 || g->lat_rate)
		fprintf(f, "ticks=%llu, messages_per_tick=%.2f, writes=%llu, messages_per_write=%.2f, "
			"stamped=%llu\n", (unsigned long long)g->load.ticks,
			g->load.ticks ? (double)g->load.rate_hz / (double)g->load.ticks : 1.0,
			(unsigned long long)s->units,
			s->units ? (double)s->sent / (double)s->units : 0.0,
			(unsigned long long)s->stamped);
	if (h->total)
		fprintf(f, "send call ns: min=%llu, p50=%llu, p99=%llu, p99.9=%llu, p99.999=%llu, max=%llu\n",
			(unsigned long long)h->min,
			(unsigned long long)jtr_hist_value_at_percentile(h, 50),
			(unsigned long long)jtr_hist_value_at_percentile(h, 99),
			(unsigned long long)jtr_hist_value_at_percentile(h, 99.9),
			(unsigned long long)jtr_hist_value_at_percentile(h, 99.999),
			(unsigned long long)h->max);
	tp_stats_summary(f, &g->st, tp_prog_recv_name(g->tp), legacy);
	/* um_perf's last line: length, messages sent with the warm-up, rate */
	if (legacy)
		fprintf(f, "%u,%llu,%.6f\n", g->load.len, (unsigned long long)s->sent,
			dur ? (double)n * 1e9 / (double)dur : 0.0);
}

/* um_perf - --legacy-output=um_perf: the lines um_perf_pub printed, as it
 * printed them: its options (no configuration file: "(null)", as its printf
 * wrote a missing one; -r max as its 999999999), the sends, then length,
 * messages with the warm-up, rate */
static void um_perf(FILE *f, const struct pub *g, const struct stream *s)
{
	uint64_t dur = duration_ns(s), n = s->measured;
	double rate = dur ? (double)n * 1e9 / (double)dur : 0.0;

	fprintf(f, "o_affinity_cpu=%d, o_config=(null), o_flags=0x00, o_jitter_loops=0, "
		"o_linger_ms=%llu, o_msg_len=%u, o_num_msgs=%llu, o_rate=%llu, o_topic='%s', "
		"o_warmup_loops=%llu,\n", s->cpu, (unsigned long long)(g->linger_ns / JTR_NS_PER_MS),
		g->load.len, (unsigned long long)(g->load.duration_ns ? n : g->load.count),
		(unsigned long long)(g->load.rate_hz ? g->load.rate_hz : 999999999ULL),
		tp_describe(s->t), (unsigned long long)g->load.warmup);
	fprintf(f, "actual_sends=%llu, duration_ns=%llu, result_rate=%.6f,\n",
		(unsigned long long)n, (unsigned long long)dur, rate);
	fprintf(f, "%u,%llu,%.6f\n", g->load.len, (unsigned long long)s->sent, rate);
}

/* inputs - summary.txt's inputs block */
static void inputs(FILE *f, const struct jtr_probe *p, const struct pub *g)
{
	tp_prog_inputs(f, p, g->tp, TP_IN_HIST);
	tp_load_inputs(f, &g->load);
	if (g->lat_rate)
		tp_prog_input(f, "latency rate:", "%llu/s", (unsigned long long)g->lat_rate);
	if (g->pack > 1)
		tp_prog_input(f, "pack:", "%u messages per write", g->pack);
	if (g->hwm)
		tp_prog_input(f, "high-water mark:", "%u bytes (up to %u messages a write: written "
			      "when full, when the next is not due yet, and at the end)", g->hwm, g->qmax);
	tp_prog_input(f, "linger:", "%.3f s", (double)g->linger_ns / 1e9);
	tp_prog_input_cpus(f, g->cpus, g->ncpus, g->nstreams);
	tp_prog_input(f, "streams:", "%d", g->nstreams);
	tp_prog_input(f, "subscribers:", "%u", g->tp->o.subs);
	tp_prog_input(f, "timestamps:", "%s", g->stamps ? "yes" : "no");
	tp_prog_input(f, "drop every:", "%llu", (unsigned long long)g->drop_every);
}

/* write_streams - transport.streams: each stream's own figures */
static void write_streams(struct jtr_json *j, const struct pub *g)
{
	jtr_json_arr_begin(j, "streams");
	for (int k = 0; k < g->nstreams; k++) {
		const struct stream *e = &g->streams[k];
		const struct jtr_hist *h = &e->send_call;
		uint64_t d = duration_ns(e);

		jtr_json_obj_begin(j, NULL);
		jtr_json_uint(j, "stream", (uint64_t)k);
		jtr_json_str(j, "address", tp_describe(e->t));
		if (e->cpu >= 0) jtr_json_int(j, "cpu", e->cpu); else jtr_json_null(j, "cpu");
		jtr_json_uint(j, "issued", e->issued);
		jtr_json_uint(j, "sent", e->measured);
		jtr_json_uint(j, "sent_total", e->sent);
		jtr_json_uint(j, "writes", e->units);
		jtr_json_uint(j, "late_sends", e->late);
		jtr_json_uint(j, "subscribers", e->subs_at_start);
		jtr_json_uint(j, "subscribers_lost", e->subs_lost);
		jtr_json_uint(j, "blocked_sends", e->blocked);
		jtr_json_bool(j, "failed", e->err != 0);
		jtr_json_uint(j, "duration_ns", d);
		jtr_json_fixed(j, "rate_hz", d ? (double)e->measured * 1e9 / (double)d : 0.0, 3);
		if (h->total) {
			jtr_json_uint(j, "send_call_p50_ns", jtr_hist_value_at_percentile(h, 50));
			jtr_json_uint(j, "send_call_max_ns", h->max);
		}
		jtr_json_obj_end(j);
	}
	jtr_json_arr_end(j);
}

/* write_outputs - summary.txt and result.json */
static void write_outputs(struct jtr_probe *p, struct pub *g, const struct stream *s,
			  const char *peer)
{
	struct jtr_afile txt, res;
	struct jtr_json j;
	uint64_t dur = duration_ns(s);

	jtr_probe_open(p, &txt, tp_stats_summary_name(&g->st));
	jtr_probe_open(p, &res, "result.json");
	summary(txt.f, p, g, s, true);
	inputs(txt.f, p, g);
	tp_prog_zip_input(txt.f, &s->zip, true);
	tp_prog_frags_input(txt.f, &s->frag, NULL);
	if (!p->quiet && g->tp->legacy_style == TP_LEGACY_UM_PERF)
		um_perf(stdout, g, s);
	else if (!p->quiet)
		summary(stdout, p, g, s, g->tp->legacy_output);
	jtr_json_init(&j, res.f);
	jtr_probe_result_begin(p, &j);
	jtr_json_obj_begin(&j, "params");
	jtr_json_uint(&j, "count", g->load.duration_ns ? s->measured : g->load.count);
	if (g->load.rate_hz)
		jtr_json_uint(&j, "rate_hz", g->load.rate_hz);
	else
		jtr_json_null(&j, "rate_hz");
	jtr_json_uint(&j, "msg_len", g->load.len);
	jtr_json_uint(&j, "warmup", g->load.warmup);
	if (g->load.warm_rate_hz)
		jtr_json_uint(&j, "warmup_rate_hz", g->load.warm_rate_hz);
	else
		jtr_json_null(&j, "warmup_rate_hz");
	if (g->load.duration_ns) jtr_json_uint(&j, "duration_ns", g->load.duration_ns); else jtr_json_null(&j, "duration_ns");
	if (g->load.ticks) jtr_json_uint(&j, "ticks", g->load.ticks); else jtr_json_null(&j, "ticks");
	if (g->lat_rate) jtr_json_uint(&j, "latency_rate_hz", g->lat_rate); else jtr_json_null(&j, "latency_rate_hz");
	jtr_json_uint(&j, "pack", g->pack);
	if (g->hwm) jtr_json_uint(&j, "high_water_mark", g->hwm); else jtr_json_null(&j, "high_water_mark");
	jtr_json_uint(&j, "linger_ns", g->linger_ns);
	if (s->cpu >= 0) jtr_json_int(&j, "cpu", s->cpu); else jtr_json_null(&j, "cpu");
	jtr_json_uint(&j, "streams", (uint64_t)g->nstreams);
	jtr_json_uint(&j, "subs", g->tp->o.subs);
	jtr_json_bool(&j, "timestamps", g->stamps);
	if (g->drop_every) jtr_json_uint(&j, "drop_every", g->drop_every); else jtr_json_null(&j, "drop_every");
	jtr_json_uint(&j, "wait_ns", g->tp->o.wait_ns);
	jtr_json_double(&j, "hist_error", p->hist_error);
	jtr_json_obj_end(&j);

	tp_prog_write_transport(&j, g->tp, g->load.len);
	jtr_json_str(&j, "peer", peer);
	jtr_json_uint(&j, "issued", s->issued);
	jtr_json_uint(&j, "sent", s->measured);
	jtr_json_uint(&j, "sent_total", s->sent);
	jtr_json_uint(&j, "dropped_on_purpose", s->dropped);
	jtr_json_uint(&j, "writes", s->units);
	jtr_json_uint(&j, "stamped", s->stamped);
	jtr_json_uint(&j, "late_sends", s->late);
	jtr_json_uint(&j, "max_tight_sends", s->max_tight);
	jtr_json_uint(&j, "subscribers", s->subs_at_start);
	jtr_json_uint(&j, "subscribers_lost", s->subs_lost);
	jtr_json_uint(&j, "blocked_sends", s->blocked);
	tp_prog_write_zip(&j, &s->zip, true);
	tp_prog_write_frags(&j, &s->frag, NULL);
	jtr_json_uint(&j, "duration_ns", dur);
	jtr_json_fixed(&j, "rate_hz", dur ? (double)s->measured * 1e9 / (double)dur : 0.0, 3);
	if (g->nstreams > 1)
		write_streams(&j, g);
	tp_stats_write_json(&j, &g->st);
	jtr_json_obj_end(&j);

	jtr_json_arr_begin(&j, "runs");
	tp_prog_write_run(&j, p, "send_call", s->cpu, s->first_ns, s->last_ns, dur, &s->send_call, NULL);
	jtr_json_arr_end(&j);
	tp_prog_finish(p, &j, &txt, &res, &g->st, NULL, NULL);
}

/* check_pacing - the pacing options together: exit 2 for what cannot be
 * done; -d turns into a count */
static void check_pacing(struct jtr_probe *p, struct pub *g)
{
	tp_load_check(p, &g->load, tp_stats_startup_ns(&g->tp->stats_opts, g->tp->stats_every_ns));
	if (g->lat_rate && !g->stamps)
		jtr_usage_error(p, "--latency-rate and --no-timestamps contradict each other: give one");
	if (g->lat_rate && !g->load.rate_hz)
		jtr_usage_error(p, "--latency-rate %llu needs a paced -r RATE to take it from (with "
				"-r max, use --no-timestamps or stamp every message)",
				(unsigned long long)g->lat_rate);
	if (g->lat_rate > g->load.rate_hz)
		jtr_usage_error(p, "--latency-rate %llu: more than the %llu messages a second sent; "
				"give at most -r", (unsigned long long)g->lat_rate,
				(unsigned long long)g->load.rate_hz);
	if (g->pack > 1 && (uint64_t)g->pack * g->load.len > (1u << 24))
		jtr_usage_error(p, "--pack %u x -m %u: %llu bytes in one write is more than 16 MiB; "
				"pack fewer or shorter messages", g->pack, g->load.len,
				(unsigned long long)g->pack * g->load.len);
	if (g->load.duration_ns) {
		/* the messages due within the duration; -r max: until it is over */
		g->load.count = g->load.rate_hz ? (uint64_t)((unsigned __int128)g->load.duration_ns *
							     g->load.rate_hz / JTR_NS_PER_S) : 1ULL << 40;
		if (!g->load.count)
			g->load.count = 1;
	}
}

/* hwm_opt - --high-water-mark BYTES (K, M: x1024) */
static uint32_t hwm_opt(struct jtr_probe *p, const char *arg)
{
	struct jtr_err e;
	uint64_t v;

	if (jtr_parse_size(arg, 1, 1u << 24, &v, &e) < 0)
		jtr_usage_error(p, "--high-water-mark %s: %s (bytes, K or M: x1024, up to 16M)",
				arg, e.msg);
	return (uint32_t)v;
}

/* check_hwm - --high-water-mark against -m, --pack and the transport's
 * largest write: exit 2 for what cannot be done */
static void check_hwm(struct jtr_probe *p, struct pub *g)
{
	const uint32_t most = tp_max_msg(&g->tp->o);

	if (!g->hwm)
		return;
	if (g->pack > 1)
		jtr_usage_error(p, "--pack %u and --high-water-mark %u both say what goes in one "
				"write; give one", g->pack, g->hwm);
	if (g->hwm < g->load.len)
		jtr_usage_error(p, "--high-water-mark %u: less than one %u-byte message (-m); give "
				"at least %u, or leave it out for a write per message", g->hwm,
				g->load.len, g->load.len);
	g->qmax = g->hwm / g->load.len;
	if ((uint64_t)g->qmax * g->load.len > most)
		jtr_usage_error(p, "--high-water-mark %u: %u messages of %u bytes are more than a "
				"%s write can carry (%u bytes); give at most %u", g->hwm, g->qmax,
				g->load.len, tp_kind_name(g->tp->o.kind), most, most);
}

/* frag_opt - --max-fragment BYTES (K, M: x1024) */
static uint32_t frag_opt(struct jtr_probe *p, const char *arg)
{
	struct jtr_err e;
	uint64_t v;

	if (jtr_parse_size(arg, TP_FRAG_MIN, 1u << 24, &v, &e) < 0)
		jtr_usage_error(p, "--max-fragment %s: %s (bytes, K or M: x1024, from %u)", arg,
				e.msg, TP_FRAG_MIN);
	return (uint32_t)v;
}

/* check_frag - --max-fragment against the transport and the other ways of
 * changing what a write holds */
static void check_frag(struct jtr_probe *p, struct pub *g)
{
	const uint32_t most = tp_max_msg(&g->tp->o);

	if (!g->frag_max)
		return;
	if (g->pack > 1 || g->hwm || g->zlevel)
		jtr_usage_error(p, "--max-fragment with %s: a fragment is a write of its own; give "
				"one", g->pack > 1 ? "--pack" : g->hwm ? "--high-water-mark" :
				"--compress");
	if (g->frag_max > most)
		jtr_usage_error(p, "--max-fragment %u: longer than a %s write can carry (%u "
				"bytes); give at most %u", g->frag_max, tp_kind_name(g->tp->o.kind),
				most, most);
	g->frag = g->load.len > g->frag_max;
}

/* check_compress - --compress against -m, --pack and --high-water-mark (one
 * message a write: each is compressed alone) */
static void check_compress(struct jtr_probe *p, struct pub *g)
{
	if (g->zlevel_given && !g->zlevel)
		jtr_usage_error(p, "--compress-level %d without --compress zlib: give both",
				g->zlevel_given);
	if (!g->zlevel)
		return;
	g->zlevel = g->zlevel_given ? g->zlevel_given : 6;
	if (g->pack > 1 || g->hwm)
		jtr_usage_error(p, "--compress with %s: each message is compressed alone, in a "
				"write of its own; give one", g->pack > 1 ? "--pack" : "--high-water-mark");
	if (g->load.len < TP_ZIP_MIN_LEN)
		jtr_usage_error(p, "--compress with -m %u: a message needs %u bytes or more to have "
				"a payload to compress; give -m %u or more", g->load.len,
				TP_ZIP_MIN_LEN, TP_ZIP_MIN_LEN);
}

/* total_of - the streams' sum into @t (with one stream, that stream) */
static const struct stream *total_of(struct pub *g, struct stream *t, double hist_error)
{
	if (g->nstreams == 1)
		return &g->streams[0];
	memset(t, 0, sizeof(*t));
	t->g = g;
	t->t = g->streams[0].t;
	t->cpu = g->streams[0].cpu;
	if (jtr_hist_init(&t->send_call, hist_error) < 0)
		return &g->streams[0];
	for (int k = 0; k < g->nstreams; k++) {
		const struct stream *e = &g->streams[k];

		jtr_hist_merge(&t->send_call, &e->send_call);
		if (e->first_ns && (!t->first_ns || e->first_ns < t->first_ns))
			t->first_ns = e->first_ns;
		if (e->last_ns > t->last_ns)
			t->last_ns = e->last_ns;
		t->issued += e->issued;
		t->sent += e->sent;
		t->dropped += e->dropped;
		t->late += e->late;
		t->units += e->units;
		t->stamped += e->stamped;
		tp_zip_add(&t->zip, &e->zip);
		t->frag.max = e->frag.max;
		t->frag.msgs += e->frag.msgs;
		t->frag.frags += e->frag.frags;
		t->measured += e->measured;
		t->subs_at_start += e->subs_at_start;
		t->subs_lost += e->subs_lost;
		t->blocked += e->blocked;
		if (e->max_tight > t->max_tight)
			t->max_tight = e->max_tight;
		if (!t->err)
			t->err = e->err;
	}
	return t;
}

/* parse - the options, each alone and then together, or exit 2 */
static void parse(struct jtr_probe *p, struct tp_prog *tp, struct pub *g, int argc, char **argv)
{
	const char *cpus_opt = "-c";
	int opt;

	while ((opt = getopt_long(argc, argv, ":" JTR_COUNT_S JTR_RATE_S JTR_LEN_S "w:l:"
				  JTR_CPUS_S "a:" JTR_DURATION_S JTR_FIFO_S JTR_OUTPUT_S
				  JTR_QUIET_S "h" TP_PROG_SHORT, long_opts, NULL)) != -1) {
		if (opt == 't')
			jtr_usage_error(p, "pub stamps messages with CLOCK_MONOTONIC, which every "
					"subscriber reads too; it takes no -t");
		if (opt == TP_OPT_LATENCY_FILE || opt == TP_OPT_LATENCY_MAX)
			jtr_usage_error(p, "pub measures no latency: give --latency-file to 'jtr sub'");
		if (jtr_probe_common_opt(p, opt, usage_text, argv) || tp_prog_opt(p, tp, opt, optarg) ||
		    tp_load_opt(p, &g->load, opt, optarg))
			continue;
		switch (opt) {
		case OPT_LATENCY_RATE: g->lat_rate = jtr_opt_count(p, "--latency-rate", optarg, 1, 1000000000ULL); break;
		case OPT_PACK: g->pack = (uint32_t)jtr_opt_count(p, "--pack", optarg, 1, PACK_MAX); break;
		case OPT_HWM: g->hwm = hwm_opt(p, optarg); break;
		case OPT_COMPRESS:
			if (strcmp(optarg, "zlib"))
				jtr_usage_error(p, "--compress %s: the one method is zlib", optarg);
			g->zlevel = Z_DEFAULT_COMPRESSION;
			break;
		case OPT_MAX_FRAGMENT: g->frag_max = frag_opt(p, optarg); break;
		case OPT_COMPRESS_LEVEL:
			g->zlevel_given = (int)jtr_opt_int(p, "--compress-level", optarg, 1, 9);
			break;
		case OPT_STREAMS: g->nstreams = (int)jtr_opt_count(p, "--streams", optarg, 1, STREAMS_MAX); break;
		case 'l':
			g->linger_ns = jtr_opt_duration_legacy(p, "-l", optarg, JTR_NS_PER_MS, 0,
							       3600 * JTR_NS_PER_S);
			break;
		case 'a':
			jtr_opt_old(p, 'a', "-c", "the CPUs");
			/* fall through */
		case JTR_CPUS_C:
			cpus_opt = opt == 'a' ? "-a" : "-c";
			g->ncpus = tp_prog_cpus_opt(p, cpus_opt, optarg, g->cpus, STREAMS_MAX);
			break;
		case TP_OPT_SUBS: tp->o.subs = (uint32_t)jtr_opt_count(p, "--subs", optarg, 1, TP_MAX_SUBS); break;
		case TP_OPT_NO_TS: g->stamps = false; break;
		case TP_OPT_DROP_EVERY: g->drop_every = jtr_opt_count(p, "--drop-every", optarg, 2, 1ULL << 40); break;
		}
	}
	jtr_probe_no_args(p, argc, argv);
	tp_prog_legacy_only(p, g->tp, TP_LEGACY_UM_PERF);
	check_pacing(p, g);
	if (g->ncpus > 1 && g->ncpus != g->nstreams)
		jtr_usage_error(p, "%s with %d CPUs for %d stream(s): give one CPU per stream (or "
				"one CPU for one stream)", cpus_opt, g->ncpus, g->nstreams);
	check_hwm(p, g);
	check_compress(p, g);
	check_frag(p, g);
	tp->o.msg_max = g->frag ? g->frag_max : g->load.len * (g->hwm ? g->qmax : g->pack);
	tp_prog_check(p, tp, TP_PUB);
	p->tb_wanted = JTR_TB_CLOCK;
}

/* setup - each stream: its address, buffers, histogram, thread stack */
static void setup(struct jtr_probe *p, struct tp_prog *tp, struct pub *g, struct jtr_worker *w)
{
	tp_stats_init(&g->st, tp->stats_every_ns);
	g->st.print = tp->stats_print;
	tp_stats_set_opts(&g->st, p, &tp->stats_opts);
	for (int k = 0; k < g->nstreams; k++) {
		struct stream *s = &g->streams[k];

		s->g = g;
		s->k = k;
		tp_prog_stream(p, tp, k, g->nstreams, &s->tp, s->addr, sizeof(s->addr));
		s->cpu = tp_prog_stream_cpu(g->cpus, g->ncpus, k);
		s->ahead = !g->stamps && g->load.len <= AHEAD_MAX_LEN && g->pack == 1 && !g->hwm &&
			   !g->zlevel && !g->frag ? AHEAD : 1;
		s->framed = tp_prog_has(tp, TP_P_STREAM);
		s->buf = calloc(g->hwm ? g->qmax : s->ahead * g->pack, g->load.len);
		if (g->zlevel && (tp_zip_init(&s->zip, true, g->zlevel, g->load.len) < 0 ||
				  !(s->zbuf = malloc(g->load.len))))
			jtr_fatal(p, "out of memory");
		if (g->frag_max && tp_frag_tx_init(&s->frag, g->frag_max) < 0)
			jtr_fatal(p, "out of memory");
		if (!s->buf || jtr_hist_init(&s->send_call, p->hist_error) < 0 ||
		    jtr_worker_alloc(&w[k], s->cpu) < 0)
			jtr_fatal(p, "out of memory");
		tp_stats_add(&g->st, TP_STAT_SEND, &s->ssrc, &w[k], false);
	}
}

/* open_streams - each stream's transport, its subscribers there */
static void open_streams(struct jtr_probe *p, struct tp_prog *tp, struct pub *g, struct jtr_worker *w)
{
	for (int k = 0; k < g->nstreams; k++) {
		struct stream *s = &g->streams[k];

		s->tp.o.numa_cpu = s->cpu;
		s->t = tp_prog_open(p, &s->tp, TP_PUB);
		s->subs_at_start = tp_peers(s->t);
		w[k].fn = sender;
		w[k].arg = s;
	}
	tp->t = g->streams[0].t;
}

/* run - the sending threads and the rows, the linger (unless every stream
 * failed), each stream's end of stream */
static void run(struct jtr_probe *p, struct pub *g, struct jtr_worker *w)
{
	const int n = g->nstreams;
	bool all_failed = true;

	jtr_probe_map_begin(p);
	tp_stats_start(&g->st, p);
	jtr_workers_start(p, w, n);
	tp_stats_run(&g->st, p, w, n);
	for (int k = 0; k < n; k++)
		all_failed = all_failed && g->streams[k].err;
	if (g->linger_ns && !all_failed) {
		struct timespec ts = { (time_t)(g->linger_ns / JTR_NS_PER_S), (long)(g->linger_ns % JTR_NS_PER_S) };

		nanosleep(&ts, NULL);
	}
	for (int k = 0; k < n; k++) {
		struct stream *s = &g->streams[k];

		/* subscribers that leave after the end of stream have not been lost */
		s->subs_lost = tp_peers_lost(s->t);
		s->blocked = tp_blocked(s->t);
		if (!s->err)
			tp_prog_end_of_stream(s->t, s->buf, g->frag ? g->frag_max : g->load.len,
					      s->issued);
		s->measured = measured_sent(g, s);
	}
	jtr_probe_map_end(p);
}

/* report - the results folder, the line saying what went wrong, the exit
 * status; @tot: the run's figures (the stream, or the streams' sum) */
static int report(struct jtr_probe *p, struct tp_prog *tp, struct pub *g, const struct stream *tot)
{
	const char *peer = "ok";

	/* a connected datagram sender hears that nobody is bound there (a
	 * multicast sender is not connected, so never does) */
	if (tot->err == -EPIPE && tot->sent <= 1 && tp_prog_has(tp, TP_P_DATAGRAM) &&
	    !tp_prog_has(tp, TP_P_MULTICAST))
		jtr_usage_error(p, "nobody is receiving on %s; start 'jtr sub' there first",
				tp_describe(tot->t));
	if (tot->err == -EPIPE)
		peer = "gone";
	else if (tot->err == -ETIMEDOUT)
		peer = "stalled";
	else if (tot->err)
		peer = "error";
	else if (tot->subs_lost)
		peer = "some gone";
	p->partial = p->partial || tot->err;
	write_outputs(p, g, tot, peer);
	jtr_probe_finish(p);
	if (tot->err == -EPIPE)
		fprintf(stderr, "%s: every subscriber went away after %llu messages\n", p->prog,
			(unsigned long long)tot->sent);
	else if (tot->err == -ETIMEDOUT)
		fprintf(stderr, "%s: a subscriber stopped reading for %.0f s after %llu messages (the "
			"ring or socket stayed full)\n", p->prog, (double)tp->o.wait_ns / 1e9,
			(unsigned long long)tot->sent);
	else if (tot->err)
		fprintf(stderr, "%s: sending failed after %llu messages: %s\n", p->prog,
			(unsigned long long)tot->sent, tp_prog_strerror(tp, tot->err));
	else if (tot->subs_lost)
		fprintf(stderr, "%s: %u subscriber(s) went away during the run\n", p->prog,
			tot->subs_lost);
	for (int k = 0; k < g->nstreams; k++)
		tp_close(g->streams[k].t);
	return jtr_probe_exit(p, tot->err || tot->subs_lost ? 1 : 0);
}

int main(int argc, char **argv)
{
	static struct pub g = {
		.linger_ns = 100 * JTR_NS_PER_MS, .stamps = true, .pack = 1, .nstreams = 1,
	};
	static struct stream streams[STREAMS_MAX], tot_buf;
	static struct jtr_worker w[STREAMS_MAX];
	struct jtr_probe p;
	struct tp_prog tp;

	jtr_probe_init(&p, "pub", argc, argv);
	tp_prog_init(&tp);
	tp_load_init(&g.load, 100000, 1000, 10000);
	g.p = &p;
	g.tp = &tp;
	g.streams = streams;

	/* 1. options */
	parse(&p, &tp, &g, argc, argv);
	/* 2. each stream: its address, buffers, histogram, thread stack */
	setup(&p, &tp, &g, w);
	/* 3. privileges, folder, calibration, then the transports */
	jtr_probe_privileged(&p);
	jtr_probe_timebase(&p);
	open_streams(&p, &tp, &g, w);
	/* 4. the run, the linger, end of stream */
	run(&p, &g, w);
	/* 5. the results */
	return report(&p, &tp, &g, total_of(&g, &tot_buf, p.hist_error));
}
