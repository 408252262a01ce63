/* tp_stats.c - the stats thread's side of tp_stats.h, and the latency file. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "jtr_cli.h"
#include "tp_stats.h"

#define ANSWER_WAIT_NS (250 * JTR_NS_PER_MS)	/* a hot thread's longest idle slice is 100 ms */
#define ANSWER_POLL_NS (1000 * 1000)

/* ival_zero - an empty interval */
static void ival_zero(struct tp_ival *v)
{
	memset(v, 0, sizeof(*v));
	v->lat_min = UINT64_MAX;
}

/* ival_add - @src into @dst */
static void ival_add(struct tp_ival *dst, const struct tp_ival *src)
{
	dst->msgs += src->msgs;
	dst->bytes += src->bytes;
	dst->lat_n += src->lat_n;
	dst->lat_sum += src->lat_sum;
	dst->lat_sum_sq += src->lat_sum_sq;
	if (src->lat_min < dst->lat_min)
		dst->lat_min = src->lat_min;
	if (src->lat_max > dst->lat_max)
		dst->lat_max = src->lat_max;
}

/* tp_stat_handover - the hot thread's answer: snapshot, zero, publish */
__attribute__((noinline, cold))
void tp_stat_handover(struct tp_stat_src *s, uint64_t ask)
{
	s->snap = s->cur;
	ival_zero(&s->cur);
	s->served = ask;
	__atomic_store_n(&s->done, ask, __ATOMIC_RELEASE);
}

/* clock_ns - a clock's reading in ns, or -1 */
static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) < 0)
		return -1;
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* tp_stat_thread_begin - the thread's CPU clock and the time at its start */
void tp_stat_thread_begin(struct tp_stat_src *s)
{
	s->cpu_begin_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	s->wall_begin_ns = jtr_mono_ns();
}

/* tp_stat_thread_end - the same at its end */
void tp_stat_thread_end(struct tp_stat_src *s)
{
	s->cpu_end_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	s->wall_end_ns = jtr_mono_ns();
}

/* tp_stat_thread_cpu_pct - CPU time over wall time between begin and end */
double tp_stat_thread_cpu_pct(const struct tp_stat_src *s)
{
	if (!s || s->cpu_begin_ns < 0 || s->cpu_end_ns <= 0 || s->wall_end_ns <= s->wall_begin_ns)
		return -1;
	return 100.0 * (double)(s->cpu_end_ns - s->cpu_begin_ns) /
	       (double)(s->wall_end_ns - s->wall_begin_ns);
}

/* tp_stats_init - nothing yet */
void tp_stats_init(struct tp_stats *st, uint64_t every_ns)
{
	memset(st, 0, sizeof(*st));
	st->every_ns = every_ns;
	st->statm_fd = -1;
}

/* tp_stats_add - register a hot thread */
void tp_stats_add(struct tp_stats *st, int role, struct tp_stat_src *src,
		  struct jtr_worker *w, bool latency)
{
	memset(src, 0, sizeof(*src));
	ival_zero(&src->cur);
	ival_zero(&src->snap);
	src->cpu_begin_ns = -1;
	st->src[role] = src;
	st->w[role] = w;
	if (role == TP_STAT_RECV)
		st->has_lat = latency;
}

/* tp_stats_start - stats.csv, statm, the starting CPU time */
void tp_stats_start(struct tp_stats *st, struct jtr_probe *p)
{
	st->page_size = sysconf(_SC_PAGESIZE);
	st->statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	if (st->every_ns) {
		jtr_probe_open(p, &st->csv, "stats.csv");
		st->csv_open = true;
		fputs("t_s,msgs_sent,bytes_sent,msgs_recv,bytes_recv,lat_samples,lat_avg_ns,"
		      "lat_stddev_ns,lat_min_ns,lat_max_ns,cpu_pct,send_cpu_pct,recv_cpu_pct,rss_mb\n",
		      st->csv.f);
		fflush(st->csv.f);
	}
	st->t0_ns = st->prev_ns = jtr_mono_ns();
	st->proc_cpu0_ns = st->proc_prev_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

/* rss_mb - resident set size from /proc/self/statm, or -1 */
static double rss_mb(const struct tp_stats *st)
{
	char buf[128];
	unsigned long long size, res;
	ssize_t n;

	if (st->statm_fd < 0)
		return -1;
	n = pread(st->statm_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	if (sscanf(buf, "%llu %llu", &size, &res) != 2)
		return -1;
	return (double)res * (double)st->page_size / (1024.0 * 1024.0);
}

/* worker_done - the thread has left its function (its writes are visible) */
static bool worker_done(const struct jtr_worker *w)
{
	return !w || __atomic_load_n(&w->done, __ATOMIC_ACQUIRE);
}

/* collect - one source's part of the row. @final: the workers are joined.
 * Returns whether the source is finished (nothing more will come). */
static bool collect(struct tp_stats *st, int role, bool final, bool *finished,
		    struct tp_ival *out)
{
	struct tp_stat_src *s = st->src[role];
	int64_t until;

	ival_zero(out);
	if (*finished)
		return true;
	if (!final && !worker_done(st->w[role])) {
		if (!st->waiting[role]) {
			st->asked[role]++;
			__atomic_store_n(&s->ask, st->asked[role], __ATOMIC_RELEASE);
			st->waiting[role] = true;
		}
		until = jtr_mono_ns() + ANSWER_WAIT_NS;
		while (__atomic_load_n(&s->done, __ATOMIC_ACQUIRE) != st->asked[role] &&
		       !worker_done(st->w[role]) && jtr_mono_ns() < until) {
			struct timespec ts = { 0, ANSWER_POLL_NS };

			nanosleep(&ts, NULL);
		}
	}
	if (st->waiting[role] && __atomic_load_n(&s->done, __ATOMIC_ACQUIRE) == st->asked[role]) {
		ival_add(out, &s->snap);
		st->waiting[role] = false;
	}
	if (final || worker_done(st->w[role])) {
		/* the thread is gone: what it did since its last answer is in cur */
		ival_add(out, &s->cur);
		ival_zero(&s->cur);
		*finished = true;
	}
	return *finished;
}

/* thread_cpu_ns - a worker's CPU clock now, or at its end once it is done */
static int64_t thread_cpu_ns(const struct tp_stats *st, int role, bool finished)
{
	clockid_t cid;
	int64_t v;

	if (!finished && st->w[role] && st->w[role]->started &&
	    pthread_getcpuclockid(st->w[role]->th, &cid) == 0 && (v = clock_ns(cid)) >= 0)
		return v;
	return st->src[role]->cpu_end_ns > 0 ? st->src[role]->cpu_end_ns : -1;
}

/* csv_num - a CSV field: the number, or empty when @v < 0 */
static void csv_num(FILE *f, double v, int decimals, bool last)
{
	if (v >= 0)
		fprintf(f, "%.*f", decimals, v);
	fputc(last ? '\n' : ',', f);
}

/* print_row - the row as one line on stdout (the CSV has every column; this
 * is for watching a run) */
static void print_row(const struct tp_stats *st, const struct tp_stats_row *r)
{
	printf("stats %8.3f s:", r->t_s);
	if (st->src[TP_STAT_SEND])
		printf(" sent %llu (%.2f MB)", (unsigned long long)r->msgs_sent,
		       (double)r->bytes_sent / 1e6);
	if (st->src[TP_STAT_RECV])
		printf("%s received %llu (%.2f MB)", st->src[TP_STAT_SEND] ? "," : "",
		       (unsigned long long)r->msgs_recv, (double)r->bytes_recv / 1e6);
	if (r->lat_n)
		printf(", latency us avg %.2f sd %.2f min %.2f max %.2f", r->lat_avg / 1e3,
		       r->lat_sd / 1e3, (double)r->lat_min / 1e3, (double)r->lat_max / 1e3);
	if (r->cpu_pct >= 0)
		printf(", CPU %.1f %%", r->cpu_pct);
	if (r->rss_mb >= 0)
		printf(", RSS %.1f MB", r->rss_mb);
	putchar('\n');
	fflush(stdout);
}

/* take_row - one interval's row: ask, wait, add up, CPU and RSS */
static void take_row(struct tp_stats *st, bool final, bool *finished)
{
	struct tp_stats_row r;
	struct tp_ival v[2];
	int64_t now, proc;
	double span;

	memset(&r, 0, sizeof(r));
	for (int role = 0; role < 2; role++) {
		ival_zero(&v[role]);
		if (st->src[role])
			collect(st, role, final, &finished[role], &v[role]);
	}
	now = jtr_mono_ns();
	proc = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	span = (double)(now - st->prev_ns);
	r.t_s = (double)(now - st->t0_ns) / 1e9;
	r.span_s = span / 1e9;
	r.msgs_sent = v[TP_STAT_SEND].msgs;
	r.bytes_sent = v[TP_STAT_SEND].bytes;
	r.msgs_recv = v[TP_STAT_RECV].msgs;
	r.bytes_recv = v[TP_STAT_RECV].bytes;
	r.lat_n = v[TP_STAT_RECV].lat_n;
	if (r.lat_n) {
		const struct tp_ival *l = &v[TP_STAT_RECV];
		double mean = (double)l->lat_sum / (double)r.lat_n;
		double var = (double)(l->lat_sum_sq / r.lat_n) - mean * mean;

		r.lat_avg = mean;
		r.lat_sd = var > 0 ? sqrt(var) : 0;
		r.lat_min = l->lat_min;
		r.lat_max = l->lat_max;
	}
	r.cpu_pct = span > 0 && proc >= 0 ? 100.0 * (double)(proc - st->proc_prev_ns) / span : -1;
	r.send_cpu_pct = r.recv_cpu_pct = -1;
	for (int role = 0; role < 2; role++) {
		int64_t c;

		if (!st->src[role])
			continue;
		c = thread_cpu_ns(st, role, finished[role]);
		if (c >= 0 && span > 0) {
			double pct = 100.0 * (double)(c - st->thr_prev_ns[role]) / span;

			if (role == TP_STAT_SEND)
				r.send_cpu_pct = pct > 0 ? pct : 0;
			else
				r.recv_cpu_pct = pct > 0 ? pct : 0;
			st->thr_prev_ns[role] = c;
		}
	}
	r.rss_mb = rss_mb(st);
	if (r.rss_mb > st->rss_max_mb)
		st->rss_max_mb = r.rss_mb;
	st->prev_ns = now;
	st->proc_prev_ns = proc;

	if (st->nrows == st->cap) {
		size_t cap = st->cap ? 2 * st->cap : 64;
		struct tp_stats_row *n = realloc(st->rows, cap * sizeof(*n));

		if (!n)
			return;		/* the CSV still has it */
		st->rows = n;
		st->cap = cap;
	}
	st->rows[st->nrows++] = r;
	if (st->csv_open) {
		FILE *f = st->csv.f;

		fprintf(f, "%.3f,%llu,%llu,%llu,%llu,%llu,", r.t_s, (unsigned long long)r.msgs_sent,
			(unsigned long long)r.bytes_sent, (unsigned long long)r.msgs_recv,
			(unsigned long long)r.bytes_recv, (unsigned long long)r.lat_n);
		if (r.lat_n)
			fprintf(f, "%.1f,%.1f,%llu,%llu,", r.lat_avg, r.lat_sd,
				(unsigned long long)r.lat_min, (unsigned long long)r.lat_max);
		else
			fputs(",,,,", f);
		csv_num(f, r.cpu_pct, 2, false);
		csv_num(f, r.send_cpu_pct, 2, false);
		csv_num(f, r.recv_cpu_pct, 2, false);
		csv_num(f, r.rss_mb, 2, true);
		fflush(f);
	}
	if (st->print)
		print_row(st, &r);
}

/* join_until - join the workers still running, giving up at CLOCK_MONOTONIC
 * @until_ns: true once every one is joined (the main thread sleeps in the
 * join, so it wakes only for a row or the end) */
static bool join_until(struct jtr_worker *w, int n, int64_t until_ns)
{
	struct timespec rt;
	int64_t left = until_ns - jtr_mono_ns(), ns;

	clock_gettime(CLOCK_REALTIME, &rt);
	ns = (int64_t)rt.tv_nsec + (left > 0 ? left : 0);
	rt.tv_sec += (time_t)(ns / 1000000000LL);
	rt.tv_nsec = (long)(ns % 1000000000LL);
	for (int i = 0; i < n; i++) {
		if (!w[i].started)
			continue;
		if (pthread_timedjoin_np(w[i].th, NULL, &rt) != 0)
			return false;
		w[i].started = false;
	}
	return true;
}

/* tp_stats_run - rows while the workers run, the last after they end */
void tp_stats_run(struct tp_stats *st, struct jtr_probe *p, struct jtr_worker *w, int n)
{
	bool finished[2] = { false, false };
	int64_t next = st->t0_ns + (int64_t)st->every_ns;

	while (st->every_ns && !join_until(w, n, next)) {
		take_row(st, false, finished);
		next += (int64_t)st->every_ns;
		if (next <= jtr_mono_ns())
			next = jtr_mono_ns() + (int64_t)st->every_ns;
	}
	jtr_workers_wait(p, w, n, NULL, NULL);	/* the rest, and pinning errors */
	if (st->every_ns)
		take_row(st, true, finished);
	st->prev_ns = jtr_mono_ns();
	st->proc_prev_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	if (st->rss_max_mb <= 0)
		st->rss_max_mb = rss_mb(st);
}

/* tp_stats_proc_cpu_pct - process CPU over the run */
double tp_stats_proc_cpu_pct(const struct tp_stats *st)
{
	if (st->prev_ns <= st->t0_ns || st->proc_cpu0_ns < 0 || st->proc_prev_ns < 0)
		return -1;
	return 100.0 * (double)(st->proc_prev_ns - st->proc_cpu0_ns) / (double)(st->prev_ns - st->t0_ns);
}

/* json_pct - a percentage, or null */
static void json_pct(struct jtr_json *j, const char *key, double v)
{
	if (v >= 0)
		jtr_json_fixed(j, key, v, 2);
	else
		jtr_json_null(j, key);
}

/* tp_stats_write_json - CPU, RSS and the rows into the open object */
void tp_stats_write_json(struct jtr_json *j, const struct tp_stats *st)
{
	json_pct(j, "cpu_pct", tp_stats_proc_cpu_pct(st));
	json_pct(j, "send_cpu_pct", tp_stat_thread_cpu_pct(st->src[TP_STAT_SEND]));
	json_pct(j, "recv_cpu_pct", tp_stat_thread_cpu_pct(st->src[TP_STAT_RECV]));
	json_pct(j, "rss_max_mb", st->rss_max_mb > 0 ? st->rss_max_mb : -1);
	if (st->every_ns)
		jtr_json_uint(j, "stats_every_ns", st->every_ns);
	else
		jtr_json_null(j, "stats_every_ns");
	jtr_json_arr_begin(j, "stats");
	for (size_t i = 0; i < st->nrows; i++) {
		const struct tp_stats_row *r = &st->rows[i];

		jtr_json_obj_begin(j, NULL);
		jtr_json_fixed(j, "t_s", r->t_s, 3);
		jtr_json_uint(j, "msgs_sent", r->msgs_sent);
		jtr_json_uint(j, "bytes_sent", r->bytes_sent);
		jtr_json_uint(j, "msgs_recv", r->msgs_recv);
		jtr_json_uint(j, "bytes_recv", r->bytes_recv);
		jtr_json_uint(j, "lat_samples", r->lat_n);
		if (r->lat_n) {
			jtr_json_fixed(j, "lat_avg_ns", r->lat_avg, 1);
			jtr_json_fixed(j, "lat_stddev_ns", r->lat_sd, 1);
			jtr_json_uint(j, "lat_min_ns", r->lat_min);
			jtr_json_uint(j, "lat_max_ns", r->lat_max);
		} else {
			jtr_json_null(j, "lat_avg_ns");
			jtr_json_null(j, "lat_stddev_ns");
			jtr_json_null(j, "lat_min_ns");
			jtr_json_null(j, "lat_max_ns");
		}
		json_pct(j, "cpu_pct", r->cpu_pct);
		json_pct(j, "send_cpu_pct", r->send_cpu_pct);
		json_pct(j, "recv_cpu_pct", r->recv_cpu_pct);
		json_pct(j, "rss_mb", r->rss_mb);
		jtr_json_obj_end(j);
	}
	jtr_json_arr_end(j);
}

/* pct_text - "12.34 %" or "unknown" */
static const char *pct_text(char *buf, size_t n, double v)
{
	if (v < 0)
		snprintf(buf, n, "unknown");
	else
		snprintf(buf, n, "%.2f %%", v);
	return buf;
}

/* tp_stats_summary - CPU and memory, overall and over the samples */
void tp_stats_summary(FILE *f, const struct tp_stats *st, const char *recv_mode)
{
	char a[32], b[32], c[32];
	double cmax = 0, cmin = 1e300, csum = 0, mmax = 0, mmin = 1e300, msum = 0;
	size_t n = 0;

	fprintf(f, "CPU: process %s", pct_text(a, sizeof(a), tp_stats_proc_cpu_pct(st)));
	if (st->src[TP_STAT_SEND] && st->src[TP_STAT_RECV] && st->w[TP_STAT_SEND] &&
	    st->w[TP_STAT_SEND] == st->w[TP_STAT_RECV]) {
		/* one thread does both (ping --one-thread, pong) */
		fprintf(f, ", the thread that sends and receives %s (%s receive)",
			pct_text(c, sizeof(c), tp_stat_thread_cpu_pct(st->src[TP_STAT_RECV])), recv_mode);
	} else {
		if (st->src[TP_STAT_SEND])
			fprintf(f, ", sending thread %s",
				pct_text(b, sizeof(b), tp_stat_thread_cpu_pct(st->src[TP_STAT_SEND])));
		if (st->src[TP_STAT_RECV])
			fprintf(f, ", receiving thread %s (%s receive)",
				pct_text(c, sizeof(c), tp_stat_thread_cpu_pct(st->src[TP_STAT_RECV])),
				recv_mode);
	}
	fprintf(f, "; memory: RSS max %.2f MB\n", st->rss_max_mb);
	for (size_t i = 0; i < st->nrows; i++) {
		const struct tp_stats_row *r = &st->rows[i];

		if (r->cpu_pct < 0 || r->rss_mb < 0)
			continue;
		n++;
		cmax = r->cpu_pct > cmax ? r->cpu_pct : cmax;
		cmin = r->cpu_pct < cmin ? r->cpu_pct : cmin;
		csum += r->cpu_pct;
		mmax = r->rss_mb > mmax ? r->rss_mb : mmax;
		mmin = r->rss_mb < mmin ? r->rss_mb : mmin;
		msum += r->rss_mb;
	}
	if (n)
		fprintf(f, "CPU/memory samples: %zu every %.3f s; CPU usage (%%) max %.2f, min %.2f, "
			"avg %.2f; memory usage (MB) max %.2f, min %.2f, avg %.2f\n", n,
			(double)st->every_ns / 1e9, cmax, cmin, csum / (double)n, mmax, mmin,
			msum / (double)n);
}

/* tp_stats_commit - stats.csv into place */
void tp_stats_commit(struct tp_stats *st, struct jtr_probe *p)
{
	if (st->csv_open)
		jtr_probe_commit_file(p, &st->csv);
	st->csv_open = false;
	if (st->statm_fd >= 0)
		close(st->statm_fd);
	st->statm_fd = -1;
}

/* tp_latlog_alloc - map and pre-touch the samples */
int tp_latlog_alloc(struct tp_latlog *l, uint64_t cap)
{
	size_t len = (size_t)cap * sizeof(struct tp_lat_rec);

	memset(l, 0, sizeof(*l));
	if (!cap)
		return 0;
	l->rec = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (l->rec == MAP_FAILED) {
		l->rec = NULL;
		return -ENOMEM;
	}
	jtr_prefault(l->rec, len);
	l->cap = cap;
	return 0;
}

/* tp_latlog_write - latency.csv from the kept samples */
void tp_latlog_write(struct tp_latlog *l, struct jtr_probe *p, bool tsc)
{
	struct jtr_afile a;
	uint64_t kept = l->n < l->cap ? l->n : l->cap;

	if (!l->cap)
		return;
	jtr_probe_open(p, &a, "latency.csv");
	fputs("seq,sent_ns,received_ns,latency_ns\n", a.f);
	for (uint64_t i = 0; i < kept; i++) {
		const struct tp_lat_rec *r = &l->rec[i];
		long long s, rv;
		unsigned long long lat;

		if (tsc) {
			s = jtr_tb_mono_ns(&p->tb, r->sent);
			rv = jtr_tb_mono_ns(&p->tb, r->recv);
			lat = jtr_ticks2ns(&p->tb.t2n, r->recv - r->sent);
		} else {
			s = (long long)r->sent;
			rv = (long long)r->recv;
			lat = rv > s ? (unsigned long long)(rv - s) : 0;
		}
		fprintf(a.f, "%llu,%lld,%lld,%llu\n", (unsigned long long)r->seq, s, rv, lat);
	}
	jtr_probe_commit_file(p, &a);
	if (l->n > l->cap)
		jtr_warn(p, "latency.csv holds the first %llu of %llu latency samples (the buffer was "
			 "full); raise --latency-max to keep them all",
			 (unsigned long long)l->cap, (unsigned long long)l->n);
}

/* tp_latlog_write_json - "latency_file": name, samples kept, samples not kept */
void tp_latlog_write_json(struct jtr_json *j, const struct tp_latlog *l)
{
	uint64_t kept = l->n < l->cap ? l->n : l->cap;

	if (!l->cap) {
		jtr_json_null(j, "latency_file");
		return;
	}
	jtr_json_obj_begin(j, "latency_file");
	jtr_json_str(j, "name", "latency.csv");
	jtr_json_uint(j, "capacity", l->cap);
	jtr_json_uint(j, "samples", kept);
	jtr_json_uint(j, "not_kept", l->n - kept);
	jtr_json_obj_end(j);
}
