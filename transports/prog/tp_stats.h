/* SPDX-License-Identifier: GPL-2.0-only */
/* tp_stats.h - periodic statistics and the per-sample latency file of jtr
 * ping, pub, sub (stats.csv, the summary's resource lines, latency.csv).
 *
 * Every N seconds one row: messages and bytes sent and received, the
 * interval's latency (samples, mean, standard deviation, min, max), the
 * process's CPU % and each measuring thread's, and the resident set size.
 * Rows go to DIR/stats.csv as they are made and into result.json at the end.
 *
 * The hot threads never lock, allocate or call the kernel for this. Each
 * one adds to its own interval accumulators (struct tp_stat_src: plain
 * stores on its own cache lines) and, once per message or idle wake-up,
 * loads one word the stats thread writes once per interval ("ask"). When
 * that word changed, the hot thread copies its accumulators into a snapshot,
 * zeroes them and publishes the snapshot with a release store ("done"). The
 * stats thread (main, while it waits for the workers) asks, waits for the
 * answer, and reads the snapshot: every message and every latency sample is
 * in exactly one row, so the rows add up to the run's totals, and a row's
 * mean, deviation, min and max come from the same samples. A hot thread
 * that does not answer (stuck in a long send) leaves its part of the row
 * empty; what it did then goes into the row after its next answer.
 *
 * Each row carries its end as CLOCK_MONOTONIC ns (the clock of the messages'
 * stamps and of result.json's runs) and as UTC from CLOCK_REALTIME read at
 * the same moment. At the end the rows are cut into three phases for the
 * summary and result.json (tp_stats_phases): the start-up (the rows whose
 * middle lies within the first --startup of traffic), the steady state (the
 * rows after it up to the last one with traffic) and the whole run (both),
 * each with its messages, bytes, rates, CPU and latency combined exactly
 * from the rows' sums. Rows before the first message and after the last are
 * in no phase (waiting for the peer, waiting for it to go silent).
 *
 * The latency file is a pre-allocated, pre-touched array of (seq, sent,
 * received) filled by the receiving thread with two stores and written to
 * DIR/latency.csv after the run; samples beyond its capacity are counted.
 */
#ifndef JTR_TP_STATS_H
#define JTR_TP_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "jtr_probe.h"

/* one interval of one hot thread */
struct tp_ival {
	uint64_t msgs;
	uint64_t bytes;
	uint64_t lat_n;
	uint64_t lat_sum;
	uint64_t lat_min;
	uint64_t lat_max;
	unsigned __int128 lat_sum_sq;
};

/* a hot thread's side: its accumulators, the stats thread's question, its
 * answer, and its own CPU time at start and end */
struct tp_stat_src {
	struct tp_ival cur __attribute__((aligned(64)));	/* hot thread only */
	uint64_t served;					/* hot thread only */
	uint64_t ask __attribute__((aligned(64)));		/* stats thread writes */
	uint64_t done __attribute__((aligned(64)));		/* hot thread writes */
	struct tp_ival snap;
	int64_t cpu_begin_ns, cpu_end_ns;		/* the thread's CPU clock */
	int64_t wall_begin_ns, wall_end_ns;		/* CLOCK_MONOTONIC */
};

/* tp_stat_handover - copy and zero the accumulators, answer @ask (cold) */
void tp_stat_handover(struct tp_stat_src *s, uint64_t ask);

/* tp_stat_poll - answer the stats thread if it asked: one relaxed load */
static inline void tp_stat_poll(struct tp_stat_src *s)
{
	uint64_t a = __atomic_load_n(&s->ask, __ATOMIC_RELAXED);

	if (__builtin_expect(a != s->served, 0))
		tp_stat_handover(s, a);
}

/* tp_stat_msg - one message of @bytes sent or received */
static inline void tp_stat_msg(struct tp_stat_src *s, uint64_t bytes)
{
	s->cur.msgs++;
	s->cur.bytes += bytes;
}

/* tp_stat_lat - one latency sample */
static inline void tp_stat_lat(struct tp_stat_src *s, uint64_t ns)
{
	struct tp_ival *c = &s->cur;

	c->lat_n++;
	c->lat_sum += ns;
	c->lat_sum_sq += (unsigned __int128)ns * ns;
	c->lat_min = ns < c->lat_min ? ns : c->lat_min;
	c->lat_max = ns > c->lat_max ? ns : c->lat_max;
}

/* tp_stat_thread_begin / _end - the hot thread notes its CPU clock and the
 * time (two system calls, outside its loop) */
void tp_stat_thread_begin(struct tp_stat_src *s);
void tp_stat_thread_end(struct tp_stat_src *s);

/* tp_stat_thread_cpu_pct - the thread's CPU % from begin to end (-1: unknown) */
double tp_stat_thread_cpu_pct(const struct tp_stat_src *s);

/* one row */
struct tp_stats_row {
	double t_s;			/* end of the interval, s since the run started */
	double span_s;			/* its length */
	int64_t mono_ns;		/* its end, CLOCK_MONOTONIC */
	int64_t span_ns;		/* its length in ns */
	int64_t real_ns;		/* its end, CLOCK_REALTIME (read with mono_ns) */
	uint64_t msgs_sent, bytes_sent, msgs_recv, bytes_recv;
	uint64_t lat_n, lat_min, lat_max;
	uint64_t lat_sum;		/* the samples' sum and sum of squares: */
	unsigned __int128 lat_sum_sq;	/* the phases combine these exactly */
	double lat_avg, lat_sd;
	int64_t cpu_ns;			/* the process's CPU time in the interval, -1: unknown */
	double cpu_pct;			/* the process: user + system time / wall time */
	double send_cpu_pct, recv_cpu_pct;	/* the threads' (-1: none) */
	double rss_mb;
};

enum { TP_STAT_SEND, TP_STAT_RECV };

/* the most hot threads of one role (streams) */
#define TP_STAT_MAX_SRC 16

/* getopt values of the statistics options (tp_prog.h's own are below 600) */
enum { TP_OPT_STARTUP = 600, TP_OPT_STATS_FILE, TP_OPT_SUMMARY_FILE };

#define TP_STATS_FILE "stats.csv"
#define TP_SUMMARY_FILE "summary.txt"
#define TP_STARTUP_MIN_NS JTR_NS_PER_S	/* the default start-up's floor */

/* what the statistics options choose besides --stats-every and --stats-print */
struct tp_stats_opts {
	uint64_t startup_ns;		/* --startup */
	bool startup_given;		/* else one stats interval, at least 1 s */
	const char *stats_file;		/* --stats-file NAME */
	const char *summary_file;	/* --summary-file NAME */
};

/* tp_stats_opts_init - the defaults: stats.csv, summary.txt, the start-up
 * one stats interval (at least 1 s) */
void tp_stats_opts_init(struct tp_stats_opts *o);

/* tp_stats_opt - --startup, --stats-file, --summary-file (exit 2 for a bad
 * value: a NAME is a file name in the results folder, not another output's);
 * false if @opt is not one of them */
bool tp_stats_opt(struct jtr_probe *p, struct tp_stats_opts *o, int opt, const char *arg);

/* tp_stats_startup_ns - the start-up's length for rows every @every_ns:
 * --startup, else one interval, at least TP_STARTUP_MIN_NS (@o NULL: the
 * default) */
uint64_t tp_stats_startup_ns(const struct tp_stats_opts *o, uint64_t every_ns);

/* one phase of the run: a span of whole rows and what they add up to */
struct tp_phase {
	size_t first, n;		/* rows[first .. first + n - 1]; n 0: empty */
	int64_t start_ns, end_ns;	/* CLOCK_MONOTONIC */
	struct tp_ival v[2];		/* TP_STAT_SEND, TP_STAT_RECV */
	int64_t cpu_ns;			/* the process's CPU time, -1: unknown */
};

enum { TP_PHASE_STARTUP, TP_PHASE_STEADY, TP_PHASE_WHOLE, TP_PHASES };

struct tp_stats {
	uint64_t every_ns;		/* 0: no rows */
	bool print;			/* each row on stdout too (--stats-print) */
	/* TP_STAT_SEND, TP_STAT_RECV: the hot threads of each (one per stream) */
	struct tp_stat_src *src[2][TP_STAT_MAX_SRC];
	struct jtr_worker *w[2][TP_STAT_MAX_SRC];	/* their threads */
	int nsrc[2];
	bool has_lat;			/* the receiver measures latency */
	bool waiting[2][TP_STAT_MAX_SRC];	/* asked and not answered yet */
	uint64_t asked[2][TP_STAT_MAX_SRC];
	struct jtr_afile csv;
	bool csv_open;
	int statm_fd;
	long page_size;
	int64_t t0_ns, prev_ns;
	int64_t proc_cpu0_ns, proc_prev_ns;
	int64_t thr_prev_ns[2][TP_STAT_MAX_SRC];
	struct tp_stats_row *rows;
	size_t nrows, cap;
	double rss_max_mb;
	struct tp_ival tot[2];		/* the run's totals (the rows', or taken at the end) */
	uint64_t startup_ns;		/* the start-up phase's length, 0: none */
	const char *stats_name;		/* the file names in the results folder */
	const char *summary_name;
};

/* tp_stats_init - no sources, no rows; @every_ns 0: off; the default names
 * and start-up (tp_stats_opts_init's) until tp_stats_set_opts */
void tp_stats_init(struct tp_stats *st, uint64_t every_ns);

/* tp_stats_set_opts - the start-up and the file names of @o; call after
 * tp_stats_init, before jtr_probe_privileged (exit 2 for --startup or
 * --stats-file without rows) */
void tp_stats_set_opts(struct tp_stats *st, struct jtr_probe *p, const struct tp_stats_opts *o);

/* tp_stats_summary_name - the summary's file name (--summary-file) */
const char *tp_stats_summary_name(const struct tp_stats *st);

/* tp_stats_file_name - stats.csv's name (--stats-file), NULL with no rows */
const char *tp_stats_file_name(const struct tp_stats *st);

/* tp_stats_add - @src is a hot thread of @role run by @w; @latency: its
 * tp_stat_lat() samples are the run's latency. Several of one role (one per
 * stream, up to TP_STAT_MAX_SRC) add up in the rows; their CPU % too. */
void tp_stats_add(struct tp_stats *st, int role, struct tp_stat_src *src,
		  struct jtr_worker *w, bool latency);

/* tp_stats_start - open DIR/stats.csv (if on; or its --stats-file name) and
 * /proc/self/statm, note the process's CPU time; call after
 * jtr_probe_privileged, before the run */
void tp_stats_start(struct tp_stats *st, struct jtr_probe *p);

/* tp_stats_run - after jtr_workers_start: a row every every_ns until every
 * worker is done, then the last (partial) row, then jtr_workers_wait() */
void tp_stats_run(struct tp_stats *st, struct jtr_probe *p, struct jtr_worker *w, int n);

/* tp_stats_proc_cpu_pct - the process's CPU % over the run (as measured
 * between tp_stats_start and the end of tp_stats_run) */
double tp_stats_proc_cpu_pct(const struct tp_stats *st);

/* tp_stats_phases - @ph[TP_PHASE_*] from the rows (n 0: empty). Returns the
 * number of rows with traffic (0: no phase at all) */
size_t tp_stats_phases(const struct tp_stats *st, struct tp_phase ph[TP_PHASES]);

/* tp_stats_write_json - fields of the open "transport" object: cpu_pct,
 * send_cpu_pct, recv_cpu_pct, rss_max_mb, stats_every_ns, startup_ns, "stats"
 * (rows) and "phases" (startup, steady, whole: objects or null) */
void tp_stats_write_json(struct jtr_json *j, const struct tp_stats *st);

/* tp_stats_summary - the phases table and the whole run's totals and rates,
 * then the resource lines of summary.txt (CPU and memory, whole run and
 * max, min, avg over the rows); without @legacy (stdout without
 * --legacy-output) only the CPU and memory line */
void tp_stats_summary(FILE *f, const struct tp_stats *st, const char *recv_mode, bool legacy);

/* tp_stats_commit - finish DIR/stats.csv (its --stats-file name) */
void tp_stats_commit(struct tp_stats *st, struct jtr_probe *p);

/* one latency sample, in the receiver's timebase */
struct tp_lat_rec {
	uint64_t seq;
	uint64_t sent;
	uint64_t recv;
};

struct tp_latlog {
	struct tp_lat_rec *rec;
	uint64_t cap;			/* 0: no latency file */
	uint64_t n;			/* samples offered (may exceed cap) */
	char name[24];			/* its file, "" latency.csv (jtr sub's streams:
					 * latency.K.csv) */
};

/* tp_latlog_alloc - a pre-touched array of @cap samples; -ENOMEM */
int tp_latlog_alloc(struct tp_latlog *l, uint64_t cap);

/* tp_latlog_add - keep one sample while there is room, count it anyway */
static inline void tp_latlog_add(struct tp_latlog *l, uint64_t seq, uint64_t sent, uint64_t recv)
{
	if (__builtin_expect(l->n < l->cap, 1)) {
		struct tp_lat_rec *r = &l->rec[l->n];

		r->seq = seq;
		r->sent = sent;
		r->recv = recv;
	}
	l->n++;
}

/* tp_latlog_write - DIR/latency.csv (or l->name): seq,sent_ns,received_ns,latency_ns
 * (CLOCK_MONOTONIC; TSC stamps converted with @p's timebase if @tsc);
 * warns when samples did not fit */
void tp_latlog_write(struct tp_latlog *l, struct jtr_probe *p, bool tsc);

/* tp_latlog_name - its file's name */
const char *tp_latlog_name(const struct tp_latlog *l);

/* tp_latlog_write_json - the "latency_file" object of "transport" (or null) */
void tp_latlog_write_json(struct jtr_json *j, const struct tp_latlog *l);

#endif
