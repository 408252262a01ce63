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
	uint64_t msgs_sent, bytes_sent, msgs_recv, bytes_recv;
	uint64_t lat_n, lat_min, lat_max;
	double lat_avg, lat_sd;
	double cpu_pct;			/* the process: user + system time / wall time */
	double send_cpu_pct, recv_cpu_pct;	/* the threads' (-1: none) */
	double rss_mb;
};

enum { TP_STAT_SEND, TP_STAT_RECV };

struct tp_stats {
	uint64_t every_ns;		/* 0: no rows */
	bool print;			/* each row on stdout too (--stats-print) */
	struct tp_stat_src *src[2];	/* TP_STAT_SEND, TP_STAT_RECV; NULL: none */
	struct jtr_worker *w[2];	/* their threads */
	bool has_lat;			/* the receiver measures latency */
	bool waiting[2];		/* asked and not answered yet */
	uint64_t asked[2];
	struct jtr_afile csv;
	bool csv_open;
	int statm_fd;
	long page_size;
	int64_t t0_ns, prev_ns;
	int64_t proc_cpu0_ns, proc_prev_ns;
	int64_t thr_prev_ns[2];
	struct tp_stats_row *rows;
	size_t nrows, cap;
	double rss_max_mb;
};

/* tp_stats_init - no sources, no rows; @every_ns 0: off */
void tp_stats_init(struct tp_stats *st, uint64_t every_ns);

/* tp_stats_add - @src is the hot thread of @role run by @w; @latency: its
 * tp_stat_lat() samples are the run's latency */
void tp_stats_add(struct tp_stats *st, int role, struct tp_stat_src *src,
		  struct jtr_worker *w, bool latency);

/* tp_stats_start - open DIR/stats.csv (if on) and /proc/self/statm, note
 * the process's CPU time; call after jtr_probe_privileged, before the run */
void tp_stats_start(struct tp_stats *st, struct jtr_probe *p);

/* tp_stats_run - after jtr_workers_start: a row every every_ns until every
 * worker is done, then the last (partial) row, then jtr_workers_wait() */
void tp_stats_run(struct tp_stats *st, struct jtr_probe *p, struct jtr_worker *w, int n);

/* tp_stats_proc_cpu_pct - the process's CPU % over the run (as measured
 * between tp_stats_start and the end of tp_stats_run) */
double tp_stats_proc_cpu_pct(const struct tp_stats *st);

/* tp_stats_write_json - fields of the open "transport" object: cpu_pct,
 * send_cpu_pct, recv_cpu_pct, rss_max_mb, stats_every_ns, and "stats" (rows) */
void tp_stats_write_json(struct jtr_json *j, const struct tp_stats *st);

/* tp_stats_summary - the resource lines of summary.txt (CPU and memory,
 * whole run and max, min, avg over the rows) */
void tp_stats_summary(FILE *f, const struct tp_stats *st, const char *recv_mode);

/* tp_stats_commit - finish DIR/stats.csv */
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

/* tp_latlog_write - DIR/latency.csv: seq,sent_ns,received_ns,latency_ns
 * (CLOCK_MONOTONIC; TSC stamps converted with @p's timebase if @tsc);
 * warns when samples did not fit */
void tp_latlog_write(struct tp_latlog *l, struct jtr_probe *p, bool tsc);

/* tp_latlog_write_json - the "latency_file" object of "transport" (or null) */
void tp_latlog_write_json(struct jtr_json *j, const struct tp_latlog *l);

#endif
