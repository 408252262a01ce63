/* SPDX-License-Identifier: GPL-2.0-only */
/* tp_prog.h - what jtr ping, pong, pub and sub share in main(): the
 * transport options, opening with clear errors, and the run's "transport"
 * object in result.json. Like jtr_probe.h, these print and exit.
 */
#ifndef JTR_TP_PROG_H
#define JTR_TP_PROG_H

#include <getopt.h>

#include "jtr_probe.h"
#include "tp.h"
#include "tp_load.h"
#include "tp_olog.h"
#include "tp_seq.h"
#include "tp_stats.h"

/* getopt values of the long-only transport options */
enum {
	TP_OPT_IFACE = 400, TP_OPT_TTL, TP_OPT_WIDE, TP_OPT_SLOTS, TP_OPT_WAIT, TP_OPT_TIMEOUT,
	TP_OPT_SUBS, TP_OPT_DROP_EVERY, TP_OPT_STALL_AT, TP_OPT_STALL, TP_OPT_NO_TS,
	TP_OPT_MAX_RATE, TP_OPT_RECV, TP_OPT_STATS_EVERY, TP_OPT_LATENCY_FILE, TP_OPT_LATENCY_MAX,
	TP_OPT_NUMA_NODE, TP_OPT_CROSS_NUMA, TP_OPT_STATS_PRINT,
	TP_OPT_SNDBUF, TP_OPT_RCVBUF, TP_OPT_NAGLE, TP_OPT_WARMUP_RATE, TP_OPT_TICKS,
	TP_OPT_STEADY, TP_OPT_SPIN, TP_OPT_LEGACY_OUTPUT,
};

/* --legacy-output[=STYLE]: whose lines stdout has */
enum tp_legacy {
	TP_LEGACY_NONE,		/* jtr's summary */
	TP_LEGACY_JTR,		/* jtr's summary and its earlier lines (summary.txt's) */
	TP_LEGACY_UM_LAT,	/* only the lines um_lat_ping printed (ping) */
	TP_LEGACY_UM_PERF,	/* only the lines um_perf_pub or um_perf_sub printed */
};

#define TP_DEFAULT_STATS_EVERY_NS JTR_NS_PER_S
#define TP_DEFAULT_LATENCY_MAX 1000000ULL

#define TP_PROG_SHORT JTR_TRANSPORT_S JTR_ADDR_S "b"

#define TP_PROG_LONG_OPTS						\
	JTR_LONG(TRANSPORT),						\
	JTR_LONG(ADDR),							\
	{ "busy", no_argument, NULL, 'b' },				\
	{ "recv", required_argument, NULL, TP_OPT_RECV },		\
	{ "iface", required_argument, NULL, TP_OPT_IFACE },		\
	{ "ttl", required_argument, NULL, TP_OPT_TTL },			\
	{ "mcast-wide", no_argument, NULL, TP_OPT_WIDE },		\
	{ "slots", required_argument, NULL, TP_OPT_SLOTS },		\
	{ "numa-node", required_argument, NULL, TP_OPT_NUMA_NODE },	\
	{ "cross-numa", no_argument, NULL, TP_OPT_CROSS_NUMA },		\
	{ "wait", required_argument, NULL, TP_OPT_WAIT },		\
	{ "timeout", required_argument, NULL, TP_OPT_TIMEOUT },		\
	{ "sndbuf", required_argument, NULL, TP_OPT_SNDBUF },		\
	{ "rcvbuf", required_argument, NULL, TP_OPT_RCVBUF },		\
	{ "nagle", no_argument, NULL, TP_OPT_NAGLE }

#define TP_PROG_USAGE							\
"transport:\n"								\
JTR_TRANSPORT_HELP "     shm, tcp, udp, mcast, unix or unix-dgram (default udp)\n" \
JTR_ADDR_HELP "          shm: a segment name (default jtr); tcp, udp:\n" \
"                           A.B.C.D:PORT or [IPV6]:PORT (default 127.0.0.1:17391,\n" \
"                           e.g. [::1]:17391); mcast: IPv4 GROUP:PORT (default\n" \
"                           239.255.0.1:17391); unix, unix-dgram: a socket path\n" \
"                           (default /tmp/jtr-tp.sock)\n" \
"  -b, --busy               busy-poll receive (the same as --recv busy)\n" \
"      --recv MODE          blocking (default: a blocking read, a futex for shm),\n" \
"                           busy (busy-poll) or epoll (sockets: non-blocking reads,\n" \
"                           waiting in epoll_wait)\n" \
"      --iface ADDR         mcast: the interface's address (default 127.0.0.1)\n" \
"      --ttl N              mcast: TTL (default 0: never leaves this host)\n" \
"      --mcast-wide         allow a group outside 239.255.0.0/16 or a TTL above 0\n" \
"                           (such traffic can flood networks and switch supervisors)\n" \
"      --slots N            shm: ring slots, a power of two (default 4096; 4K, 16M)\n" \
"      --numa-node N        shm reader: run on node N and put the ring there\n" \
"                           (default: the pinned CPU's node, else where it runs)\n" \
"      --cross-numa         shm reader: put the ring on another node than the\n" \
"                           reader's, for the comparison (needs two nodes)\n" \
"      --wait DUR           how long to wait for the peer to appear (default 10s)\n" \
"      --timeout DUR        a peer silent this long mid-run has gone (default 5s)\n" \
"      --sndbuf BYTES       sockets: the send buffer to ask for (K, M: x1024;\n" \
"                           default 4M, forced past net.core.wmem_max as root);\n" \
"                           the size the kernel uses (Linux doubles it) is reported\n" \
"      --rcvbuf BYTES       sockets: the receive buffer to ask for, the same way\n" \
"      --nagle              tcp: leave Nagle's algorithm on (no TCP_NODELAY): small\n" \
"                           messages are sent together while one is unacknowledged\n"

/* the statistics options of ping, pub and sub */
#define TP_STATS_LONG_OPTS						\
	{ "stats-every", required_argument, NULL, TP_OPT_STATS_EVERY },	\
	{ "stats-print", no_argument, NULL, TP_OPT_STATS_PRINT },	\
	{ "latency-file", no_argument, NULL, TP_OPT_LATENCY_FILE },	\
	{ "latency-max", required_argument, NULL, TP_OPT_LATENCY_MAX },	\
	{ "startup", required_argument, NULL, TP_OPT_STARTUP },		\
	{ "stats-file", required_argument, NULL, TP_OPT_STATS_FILE },	\
	{ "summary-file", required_argument, NULL, TP_OPT_SUMMARY_FILE },	\
	{ "legacy-output", optional_argument, NULL, TP_OPT_LEGACY_OUTPUT }

#define TP_STATS_USAGE							\
"statistics:\n"								\
"      --stats-every DUR    a row of DIR/stats.csv every DUR (default 1s; 0: none):\n" \
"                           the time (s since the start, UTC, CLOCK_MONOTONIC ns),\n" \
"                           messages and bytes sent and received, the interval's\n" \
"                           latency avg/stddev/min/max, CPU % of the process and\n" \
"                           of each thread, RSS MB; the rows are in result.json too\n" \
"      --stats-print        each row on stdout as well, while the run goes on\n" \
"      --startup DUR        the summary's phases, made of the rows: the start-up is\n" \
"                           the first DUR of traffic (default one --stats-every, at\n" \
"                           least 1s; 0: none), the steady state the rest, each\n" \
"                           with messages, MB, rates, latency and CPU %\n" \
"      --stats-file NAME    the rows' file in the results folder (default stats.csv)\n" \
"      --summary-file NAME  the summary's file in the results folder (default\n" \
"                           summary.txt)\n" \
"      --legacy-output[=STYLE]  earlier lines on stdout: jtr (the default) adds\n" \
"                           jtr's earlier lines (Percentiles:, actual_sends=,\n" \
"                           result_rate=, the phases table, the CPU/memory\n" \
"                           samples; summary.txt always has them); um_lat (ping)\n" \
"                           or um_perf (pub, sub) prints only the lines those\n" \
"                           tools printed, as they printed them\n"

#define TP_LATENCY_USAGE						\
"      --latency-file       every latency sample to DIR/latency.csv (seq, sent_ns,\n" \
"                           received_ns, latency_ns), kept in memory until the end\n" \
"      --latency-max N      the latency file's capacity in samples (default 1M;\n" \
"                           24 bytes each, allocated and touched before the run)\n"

struct tp_prog {
	struct tp_opts o;
	uint64_t timeout_ns;	/* idle peer mid-run */
	bool wait_given;
	uint64_t stats_every_ns;	/* --stats-every, 0: off */
	bool latency_file;		/* --latency-file */
	bool stats_print;		/* --stats-print */
	bool legacy_output;		/* --legacy-output(=jtr) */
	enum tp_legacy legacy_style;	/* --legacy-output=STYLE */
	uint64_t latency_max;		/* --latency-max */
	struct tp_stats_opts stats_opts;	/* --startup, --stats-file, --summary-file */
	struct tp *t;			/* once opened: for the result's numa object */
};

struct tp_zip;

/* tp_prog_write_zip - transport.compression: @z's counts (null when @z saw
 * no message: no compression); @pub: the compressing end */
void tp_prog_write_zip(struct jtr_json *j, const struct tp_zip *z, bool pub);

/* tp_prog_zip_input - summary.txt's "compression:" line, when @z saw any */
void tp_prog_zip_input(FILE *f, const struct tp_zip *z, bool pub);

struct tp_frag_tx;
struct tp_frag_rx;

/* tp_prog_write_frags - transport.fragments: pub's (@tx, with --max-fragment)
 * or sub's (@rx, when any fragment came); null otherwise */
void tp_prog_write_frags(struct jtr_json *j, const struct tp_frag_tx *tx,
			 const struct tp_frag_rx *rx);

/* tp_prog_frags_input - summary.txt's "fragments:" line, the same way */
void tp_prog_frags_input(FILE *f, const struct tp_frag_tx *tx, const struct tp_frag_rx *rx);

/* tp_prog_init - defaults (udp) */
void tp_prog_init(struct tp_prog *tp);

/* tp_prog_has - the transport asked for has every property of @flags
 * (TP_P_*, tp.h) */
static inline bool tp_prog_has(const struct tp_prog *tp, unsigned flags)
{
	return tp_kind_has(tp->o.kind, flags);
}

/* tp_prog_legacy_only - refuse (exit 2) a --legacy-output style other than
 * jtr and @style (the one this program has) */
void tp_prog_legacy_only(struct jtr_probe *p, const struct tp_prog *tp, enum tp_legacy style);

/* tp_prog_opt - handle a transport option; false if @opt is not one */
bool tp_prog_opt(struct jtr_probe *p, struct tp_prog *tp, int opt, const char *arg);

/* tp_prog_check - tp_check() or exit 2; warn about a wide multicast */
void tp_prog_check(struct jtr_probe *p, struct tp_prog *tp, enum tp_role role);

/* tp_prog_open - open or exit: 2 for a bad or busy address and a peer
 * that never appeared, 1 otherwise */
struct tp *tp_prog_open(struct jtr_probe *p, struct tp_prog *tp, enum tp_role role);

/* tp_prog_privileged - jtr_probe_privileged() without a results folder
 * (pong): FIFO, mlockall, privilege drop, Ctrl-C */
void tp_prog_privileged(struct jtr_probe *p);

/* tp_prog_recv_name - "blocking", "busy-poll" or "epoll" */
const char *tp_prog_recv_name(const struct tp_prog *tp);

/* what tp_prog_inputs lists besides the transport */
enum { TP_IN_HIST = 1, TP_IN_LATENCY_FILE = 2 };

/* tp_prog_inputs - the head of summary.txt's "inputs" block: the command
 * and the transport options (sockets: the buffers asked for and read back;
 * tcp: Nagle and the "tcp:" line of messages and segments so far), the
 * histogram's error and the latency file if @what says so; the program adds
 * its own with tp_prog_input */
void tp_prog_inputs(FILE *f, const struct jtr_probe *p, const struct tp_prog *tp, unsigned what);

/* tp_prog_input - one "  name: value" line of the inputs block */
__attribute__((format(printf, 3, 4)))
void tp_prog_input(FILE *f, const char *name, const char *fmt, ...);

/* tp_prog_finish - "files" (summary, stats, latency, outliers), the end of
 * the result, then summary.txt, result.json, stats.csv and outliers.csv
 * committed (@l, @o: NULL when the program keeps none) */
void tp_prog_finish(struct jtr_probe *p, struct jtr_json *j, struct jtr_afile *txt,
		    struct jtr_afile *res, struct tp_stats *st, const struct tp_latlog *l,
		    const struct tp_olog *o);

/* tp_prog_write_transport - the "transport" object's common head: kind,
 * address, receive mode, message length, the kind's own (sockets: buffers,
 * nodelay and tcp's segment counts now); the object stays open */
void tp_prog_write_transport(struct jtr_json *j, const struct tp_prog *tp, uint32_t msg_len);

/* tp_prog_write_run - one element of "runs": @name, @cpu (-1: null), partial,
 * the CLOCK_MONOTONIC span, the duration, the statistics and histogram of @h,
 * and the "outliers" of @o when it is the run's log (else NULL) */
void tp_prog_write_run(struct jtr_json *j, const struct jtr_probe *p, const char *name,
		       int cpu, int64_t start_mono_ns, int64_t end_mono_ns, uint64_t duration_ns,
		       const struct jtr_hist *h, const struct tp_olog *o);

/* tp_prog_write_seq - the sequence counts as fields of the open object */
void tp_prog_write_seq(struct jtr_json *j, const struct tp_seq *s);

/* tp_prog_strerror - what @rc from tp_send or tp_recv on @tp's transport
 * means, for a message (-EFAULT: which shm segment shrank) */
const char *tp_prog_strerror(const struct tp_prog *tp, int rc);

/* tp_prog_rejects - what @tp's receiver turned away: the library's counts
 * into @r (malformed, foreign), the program's (forged, out_of_window) kept */
void tp_prog_rejects(const struct tp_prog *tp, struct tp_rejects *r);

/* tp_prog_add_stream - stream @k's sequence figures and what it turned away
 * added into the run's @seq and @rej (--streams: the run is their sum; @k 0
 * sets them, the window state its; @seq and @s NULL: a program that counts
 * no sequence, pong) */
void tp_prog_add_stream(struct tp_seq *seq, struct tp_rejects *rej, const struct tp_seq *s,
			const struct tp_rejects *r, int k);

/* tp_prog_warn_rejects - a warning when anything was turned away; @judged:
 * the program judges stamps and sequence numbers (not pong) */
void tp_prog_warn_rejects(struct jtr_probe *p, const struct tp_prog *tp,
			  const struct tp_rejects *r, bool judged);

/* tp_prog_rejects_line - summary.txt's "rejected: ..." line (on stdout, only
 * when something was rejected: tp_prog_rejected) */
void tp_prog_rejects_line(FILE *f, const struct tp_rejects *r, bool judged);

/* tp_prog_rejected - something was rejected */
static inline bool tp_prog_rejected(const struct tp_rejects *r)
{
	return r->malformed || r->foreign || r->before_session || r->forged || r->out_of_window;
}

/* tp_prog_write_rejects - the "rejected" object of the open "transport"
 * (forged and out_of_window null where the program does not judge them) */
void tp_prog_write_rejects(struct jtr_json *j, const struct tp_rejects *r, bool judged);

/* tp_prog_cpu_opt - one CPU of -c, or -1 for none */
int tp_prog_cpu_opt(struct jtr_probe *p, const char *opt, const char *arg);

/* tp_prog_cpus_opt - @opt CPU[,CPU...] into @cpus (at most @max, one per
 * stream): how many */
int tp_prog_cpus_opt(struct jtr_probe *p, const char *opt, const char *arg, int *cpus, int max);

/* tp_prog_stream_cpu - stream @k's CPU from -c's @ncpus CPUs (one for
 * every stream, or one for the only stream; -1: not pinned) */
static inline int tp_prog_stream_cpu(const int *cpus, int ncpus, int k)
{
	return ncpus ? cpus[k < ncpus ? k : 0] : -1;
}

/* tp_prog_input_cpus - the inputs block's "cpu:" line: each of @nstreams
 * streams' CPU, comma-separated */
void tp_prog_input_cpus(FILE *f, const int *cpus, int ncpus, int nstreams);

/* tp_prog_stream - stream @k of @n: a copy of @base's options with the
 * stream's address (tp_stream_addr) in @addr; exit 2 if it has none */
void tp_prog_stream(struct jtr_probe *p, const struct tp_prog *base, int k, int n,
		    struct tp_prog *out, char *addr, size_t len);

/* tp_prog_end_of_stream - tell @t's subscribers that @count numbers were
 * issued: an end of stream built in @buf (@len bytes) and sent, three
 * times 1 ms apart where a datagram can be lost */
void tp_prog_end_of_stream(struct tp *t, void *buf, uint32_t len, uint64_t count);

/* tp_prog_rate_opt - @opt RATE (msgs/s, K/M/G suffixes) or "max" (0) */
uint64_t tp_prog_rate_opt(struct jtr_probe *p, const char *opt, const char *arg);

#endif
