// SPDX-License-Identifier: GPL-2.0-only
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
#define NAME_MAX_BYTES 200	/* a file name option's longest (the temporary adds .tmp-PID) */

static const char *const result_files[] = { JTR_RESULT_FILES };

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

/* tp_stats_opts_init - the default names and start-up */
void tp_stats_opts_init(struct tp_stats_opts *o)
{
	memset(o, 0, sizeof(*o));
}

/* opt_name - @o's name for @opt as given, or its default */
static const char *opt_name(const struct tp_stats_opts *o, int opt)
{
	if (opt == TP_OPT_STATS_FILE)
		return o->stats_file ? o->stats_file : TP_STATS_FILE;
	return o->summary_file ? o->summary_file : TP_SUMMARY_FILE;
}

/* check_name - exit 2 unless @arg can be @opt's file in the results folder:
 * a name (no '/'), not one the folder uses for another file, not @other's */
static void check_name(struct jtr_probe *p, const struct tp_stats_opts *o, int opt,
		       const char *arg)
{
	const char *name = opt == TP_OPT_STATS_FILE ? "--stats-file" : "--summary-file";
	const char *own = opt == TP_OPT_STATS_FILE ? TP_STATS_FILE : TP_SUMMARY_FILE;
	int other = opt == TP_OPT_STATS_FILE ? TP_OPT_SUMMARY_FILE : TP_OPT_STATS_FILE;

	if (!*arg)
		jtr_usage_error(p, "%s '': give a file name, e.g. %s run1-%s", name, name, own);
	if (strchr(arg, '/') || !strcmp(arg, ".") || !strcmp(arg, ".."))
		jtr_usage_error(p, "%s %s: give a file name, not a path: the file goes into the "
				"results folder (-o DIR), e.g. %s run1-%s", name, arg, name, own);
	if (strlen(arg) > NAME_MAX_BYTES)
		jtr_usage_error(p, "%s %.32s...: a name of %zu bytes; give one of at most %d",
				name, arg, strlen(arg), NAME_MAX_BYTES);
	for (size_t i = 0; i < sizeof(result_files) / sizeof(result_files[0]); i++)
		if (!strcmp(arg, result_files[i]) && strcmp(arg, own))
			jtr_usage_error(p, "%s %s: the results folder uses that name for another "
					"file; give another, e.g. %s run1-%s", name, arg, name, own);
	if (!strcmp(arg, opt_name(o, other)))
		jtr_usage_error(p, "%s %s: the same name as the %s; give them different names",
				name, arg, other == TP_OPT_STATS_FILE ? "statistics file (--stats-file)" :
				"summary (--summary-file)");
}

/* tp_stats_opt - --startup, --stats-file, --summary-file */
bool tp_stats_opt(struct jtr_probe *p, struct tp_stats_opts *o, int opt, const char *arg)
{
	switch (opt) {
	case TP_OPT_STARTUP:
		o->startup_ns = jtr_opt_duration(p, "--startup", arg, 0, 24ULL * 3600 * JTR_NS_PER_S);
		o->startup_given = true;
		return true;
	case TP_OPT_STATS_FILE:
		check_name(p, o, opt, arg);
		o->stats_file = arg;
		return true;
	case TP_OPT_SUMMARY_FILE:
		check_name(p, o, opt, arg);
		o->summary_file = arg;
		return true;
	default:
		return false;
	}
}

/* tp_stats_startup_ns - --startup, else one interval, at least TP_STARTUP_MIN_NS */
uint64_t tp_stats_startup_ns(const struct tp_stats_opts *o, uint64_t every_ns)
{
	if (o && o->startup_given)
		return o->startup_ns;
	return every_ns > TP_STARTUP_MIN_NS ? every_ns : TP_STARTUP_MIN_NS;
}

/* tp_stats_init - nothing yet */
void tp_stats_init(struct tp_stats *st, uint64_t every_ns)
{
	memset(st, 0, sizeof(*st));
	st->every_ns = every_ns;
	st->statm_fd = -1;
	st->startup_ns = tp_stats_startup_ns(NULL, every_ns);
	st->stats_name = TP_STATS_FILE;
	st->summary_name = TP_SUMMARY_FILE;
	ival_zero(&st->tot[TP_STAT_SEND]);
	ival_zero(&st->tot[TP_STAT_RECV]);
}

/* tp_stats_set_opts - the names and the start-up; what needs rows without
 * them is refused */
void tp_stats_set_opts(struct tp_stats *st, struct jtr_probe *p, const struct tp_stats_opts *o)
{
	if (!st->every_ns && o->startup_given)
		jtr_usage_error(p, "--startup with --stats-every 0: the phases are made of the "
				"stats rows; give --stats-every DUR or drop --startup");
	if (!st->every_ns && o->stats_file)
		jtr_usage_error(p, "--stats-file %s with --stats-every 0: there are no rows to "
				"write; give --stats-every DUR or drop --stats-file", o->stats_file);
	st->startup_ns = tp_stats_startup_ns(o, st->every_ns);
	st->stats_name = opt_name(o, TP_OPT_STATS_FILE);
	st->summary_name = opt_name(o, TP_OPT_SUMMARY_FILE);
}

/* tp_stats_summary_name - the summary's file name */
const char *tp_stats_summary_name(const struct tp_stats *st)
{
	return st->summary_name;
}

/* tp_stats_file_name - the rows' file name, NULL when there are none */
const char *tp_stats_file_name(const struct tp_stats *st)
{
	return st->every_ns ? st->stats_name : NULL;
}

/* tp_stats_add - register a hot thread */
void tp_stats_add(struct tp_stats *st, int role, struct tp_stat_src *src,
		  struct jtr_worker *w, bool latency)
{
	memset(src, 0, sizeof(*src));
	ival_zero(&src->cur);
	ival_zero(&src->snap);
	src->cpu_begin_ns = -1;
	if (st->nsrc[role] < TP_STAT_MAX_SRC) {
		st->src[role][st->nsrc[role]] = src;
		st->w[role][st->nsrc[role]++] = w;
	}
	if (role == TP_STAT_RECV)
		st->has_lat = latency;
}

/* tp_stats_start - stats.csv, statm, the starting CPU time */
void tp_stats_start(struct tp_stats *st, struct jtr_probe *p)
{
	st->page_size = sysconf(_SC_PAGESIZE);
	st->statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	if (st->every_ns) {
		jtr_probe_open(p, &st->csv, st->stats_name);
		st->csv_open = true;
		fputs("t_s,utc,mono_ns,msgs_sent,bytes_sent,msgs_recv,bytes_recv,lat_samples,"
		      "lat_avg_ns,lat_stddev_ns,lat_min_ns,lat_max_ns,cpu_pct,send_cpu_pct,"
		      "recv_cpu_pct,rss_mb\n", st->csv.f);
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
static bool collect(struct tp_stats *st, int role, int k, bool final, bool *finished,
		    struct tp_ival *out)
{
	struct tp_stat_src *s = st->src[role][k];
	struct jtr_worker *w = st->w[role][k];
	int64_t until;

	ival_zero(out);
	if (*finished)
		return true;
	if (!final && !worker_done(w)) {
		if (!st->waiting[role][k]) {
			st->asked[role][k]++;
			__atomic_store_n(&s->ask, st->asked[role][k], __ATOMIC_RELEASE);
			st->waiting[role][k] = true;
		}
		until = jtr_mono_ns() + ANSWER_WAIT_NS;
		while (__atomic_load_n(&s->done, __ATOMIC_ACQUIRE) != st->asked[role][k] &&
		       !worker_done(w) && jtr_mono_ns() < until) {
			struct timespec ts = { 0, ANSWER_POLL_NS };

			nanosleep(&ts, NULL);
		}
	}
	if (st->waiting[role][k] && __atomic_load_n(&s->done, __ATOMIC_ACQUIRE) == st->asked[role][k]) {
		ival_add(out, &s->snap);
		st->waiting[role][k] = false;
	}
	if (final || worker_done(w)) {
		/* the thread is gone: what it did since its last answer is in cur */
		ival_add(out, &s->cur);
		ival_zero(&s->cur);
		*finished = true;
	}
	return *finished;
}

/* thread_cpu_ns - a worker's CPU clock now, or at its end once it is done */
static int64_t thread_cpu_ns(const struct tp_stats *st, int role, int k, bool finished)
{
	const struct jtr_worker *w = st->w[role][k];
	clockid_t cid;
	int64_t v;

	if (!finished && w && w->started && pthread_getcpuclockid(w->th, &cid) == 0 &&
	    (v = clock_ns(cid)) >= 0)
		return v;
	return st->src[role][k]->cpu_end_ns > 0 ? st->src[role][k]->cpu_end_ns : -1;
}

/* role_cpu_pct - the CPU % of @role's threads over their run, added up (-1:
 * none known) */
static double role_cpu_pct(const struct tp_stats *st, int role)
{
	double sum = -1;

	for (int k = 0; k < st->nsrc[role]; k++) {
		double v = tp_stat_thread_cpu_pct(st->src[role][k]);

		if (v >= 0)
			sum = (sum < 0 ? 0 : sum) + v;
	}
	return sum;
}

/* lat_moments - mean and (population) standard deviation of @n samples from
 * their sum and sum of squares: n^2 * variance = n * sum_sq - sum^2, exact in
 * 128 bits while n * sum_sq fits */
static void lat_moments(uint64_t n, uint64_t sum, unsigned __int128 sum_sq, double *mean,
			double *sd)
{
	const unsigned __int128 max = ~(unsigned __int128)0;
	double var;

	*mean = (double)sum / (double)n;
	if (sum_sq <= max / n) {
		unsigned __int128 num = n * sum_sq - (unsigned __int128)sum * sum;

		var = (double)num / ((double)n * (double)n);
	} else {
		long double m = (long double)sum / (long double)n;

		var = (double)((long double)sum_sq / (long double)n - m * m);
	}
	*sd = var > 0 ? sqrt(var) : 0;
}

/* utc_text - CLOCK_REALTIME ns as "2026-11-26T19:52:03.123Z" */
static void utc_text(int64_t real_ns, char *buf, size_t n)
{
	struct timespec ts = { (time_t)(real_ns / (int64_t)JTR_NS_PER_S),
			       (long)(real_ns % (int64_t)JTR_NS_PER_S) };

	jtr_iso_utc(&ts, buf, n);
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
	if (st->nsrc[TP_STAT_SEND])
		printf(" sent %llu (%.2f MB)", (unsigned long long)r->msgs_sent,
		       (double)r->bytes_sent / 1e6);
	if (st->nsrc[TP_STAT_RECV])
		printf("%s received %llu (%.2f MB)", st->nsrc[TP_STAT_SEND] ? "," : "",
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
static void take_row(struct tp_stats *st, bool final, bool (*finished)[TP_STAT_MAX_SRC])
{
	struct tp_stats_row r;
	struct tp_ival v[2];
	int64_t now, real, proc;
	double span;
	char utc[40];

	memset(&r, 0, sizeof(r));
	for (int role = 0; role < 2; role++) {
		ival_zero(&v[role]);
		for (int k = 0; k < st->nsrc[role]; k++) {
			struct tp_ival one;

			collect(st, role, k, final, &finished[role][k], &one);
			ival_add(&v[role], &one);
		}
	}
	for (int role = 0; role < 2; role++)
		ival_add(&st->tot[role], &v[role]);
	real = jtr_clock_pair(CLOCK_REALTIME, 8, &now);	/* at the instant now */
	proc = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	span = (double)(now - st->prev_ns);
	r.t_s = (double)(now - st->t0_ns) / 1e9;
	r.span_s = span / 1e9;
	r.mono_ns = now;
	r.span_ns = now - st->prev_ns;
	r.real_ns = real;
	r.msgs_sent = v[TP_STAT_SEND].msgs;
	r.bytes_sent = v[TP_STAT_SEND].bytes;
	r.msgs_recv = v[TP_STAT_RECV].msgs;
	r.bytes_recv = v[TP_STAT_RECV].bytes;
	r.lat_n = v[TP_STAT_RECV].lat_n;
	if (r.lat_n) {
		const struct tp_ival *l = &v[TP_STAT_RECV];

		lat_moments(r.lat_n, l->lat_sum, l->lat_sum_sq, &r.lat_avg, &r.lat_sd);
		r.lat_sum = l->lat_sum;
		r.lat_sum_sq = l->lat_sum_sq;
		r.lat_min = l->lat_min;
		r.lat_max = l->lat_max;
	}
	r.cpu_ns = proc >= 0 && st->proc_prev_ns >= 0 ? proc - st->proc_prev_ns : -1;
	r.cpu_pct = span > 0 && r.cpu_ns >= 0 ? 100.0 * (double)r.cpu_ns / span : -1;
	r.send_cpu_pct = r.recv_cpu_pct = -1;
	for (int role = 0; role < 2; role++) {
		double *pct = role == TP_STAT_SEND ? &r.send_cpu_pct : &r.recv_cpu_pct;

		for (int k = 0; k < st->nsrc[role]; k++) {
			int64_t c = thread_cpu_ns(st, role, k, finished[role][k]);

			if (c >= 0 && span > 0) {
				double one = 100.0 * (double)(c - st->thr_prev_ns[role][k]) / span;

				*pct = (*pct < 0 ? 0 : *pct) + (one > 0 ? one : 0);
				st->thr_prev_ns[role][k] = c;
			}
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

		utc_text(r.real_ns, utc, sizeof(utc));
		fprintf(f, "%.3f,%s,%lld,%llu,%llu,%llu,%llu,%llu,", r.t_s, utc, (long long)r.mono_ns,
			(unsigned long long)r.msgs_sent, (unsigned long long)r.bytes_sent,
			(unsigned long long)r.msgs_recv, (unsigned long long)r.bytes_recv,
			(unsigned long long)r.lat_n);
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
	bool finished[2][TP_STAT_MAX_SRC] = { { false } };
	int64_t next = st->t0_ns + (int64_t)st->every_ns;

	while (st->every_ns && !join_until(w, n, next)) {
		take_row(st, false, finished);
		next += (int64_t)st->every_ns;
		if (next <= jtr_mono_ns())
			next = jtr_mono_ns() + (int64_t)st->every_ns;
	}
	jtr_workers_wait(p, w, n, NULL, NULL);	/* the rest, and pinning errors */
	if (st->every_ns) {
		take_row(st, true, finished);
	} else {
		/* no rows: the threads' counts since the start are the totals */
		for (int role = 0; role < 2; role++) {
			struct tp_ival v;

			for (int k = 0; k < st->nsrc[role]; k++) {
				collect(st, role, k, true, &finished[role][k], &v);
				ival_add(&st->tot[role], &v);
			}
		}
	}
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

/* row_traffic - a message went either way in the row */
static bool row_traffic(const struct tp_stats_row *r)
{
	return r->msgs_sent || r->msgs_recv;
}

/* phase_of - rows[@first .. @first + @n - 1] added up */
static void phase_of(const struct tp_stats *st, struct tp_phase *ph, size_t first, size_t n)
{
	ph->first = first;
	ph->n = n;
	ph->cpu_ns = 0;
	ival_zero(&ph->v[TP_STAT_SEND]);
	ival_zero(&ph->v[TP_STAT_RECV]);
	if (!n)
		return;
	ph->start_ns = st->rows[first].mono_ns - st->rows[first].span_ns;
	ph->end_ns = st->rows[first + n - 1].mono_ns;
	for (size_t i = first; i < first + n; i++) {
		const struct tp_stats_row *r = &st->rows[i];
		struct tp_ival *s = &ph->v[TP_STAT_SEND], *v = &ph->v[TP_STAT_RECV];

		s->msgs += r->msgs_sent;
		s->bytes += r->bytes_sent;
		v->msgs += r->msgs_recv;
		v->bytes += r->bytes_recv;
		if (r->lat_n) {
			v->lat_n += r->lat_n;
			v->lat_sum += r->lat_sum;
			v->lat_sum_sq += r->lat_sum_sq;
			v->lat_min = r->lat_min < v->lat_min ? r->lat_min : v->lat_min;
			v->lat_max = r->lat_max > v->lat_max ? r->lat_max : v->lat_max;
		}
		if (r->cpu_ns < 0 || ph->cpu_ns < 0)
			ph->cpu_ns = -1;
		else
			ph->cpu_ns += r->cpu_ns;
	}
}

/* tp_stats_phases - the start-up: from the start of the first row with
 * traffic, the rows whose middle lies within the first startup_ns (whole
 * rows: the nearest row boundary); the steady state: the rest up to the last
 * row with traffic; the whole run: both */
size_t tp_stats_phases(const struct tp_stats *st, struct tp_phase ph[TP_PHASES])
{
	size_t first = st->nrows, last = 0, k, busy = 0;
	int64_t t0;

	for (size_t i = 0; i < st->nrows; i++) {
		if (!row_traffic(&st->rows[i]))
			continue;
		if (first == st->nrows)
			first = i;
		last = i;
		busy++;
	}
	if (!busy) {
		for (int i = 0; i < TP_PHASES; i++)
			phase_of(st, &ph[i], 0, 0);
		return 0;
	}
	t0 = st->rows[first].mono_ns - st->rows[first].span_ns;
	for (k = first; k <= last; k++) {
		const struct tp_stats_row *r = &st->rows[k];

		if (r->mono_ns - r->span_ns / 2 - t0 >= (int64_t)st->startup_ns)
			break;
	}
	phase_of(st, &ph[TP_PHASE_STARTUP], first, k - first);
	phase_of(st, &ph[TP_PHASE_STEADY], k, last + 1 - k);
	phase_of(st, &ph[TP_PHASE_WHOLE], first, last + 1 - first);
	return busy;
}

/* whole_from_totals - without rows: the run from tp_stats_start to the end
 * of the workers, with the totals the threads handed over at the end;
 * false when nothing moved */
static bool whole_from_totals(const struct tp_stats *st, struct tp_phase *ph)
{
	memset(ph, 0, sizeof(*ph));
	ph->v[TP_STAT_SEND] = st->tot[TP_STAT_SEND];
	ph->v[TP_STAT_RECV] = st->tot[TP_STAT_RECV];
	ph->start_ns = st->t0_ns;
	ph->end_ns = st->prev_ns;
	ph->cpu_ns = st->proc_cpu0_ns >= 0 && st->proc_prev_ns >= 0 ?
		     st->proc_prev_ns - st->proc_cpu0_ns : -1;
	return ph->v[TP_STAT_SEND].msgs || ph->v[TP_STAT_RECV].msgs;
}

/* the phases as the summary and result.json give them */
struct phase_view {
	const struct tp_phase *ph[TP_PHASES];	/* NULL: empty */
	struct tp_phase all[TP_PHASES];
	bool from_rows;
	size_t busy;				/* rows with traffic */
};

/* phase_view - the phases, or only the whole run from the totals */
static void phase_view(const struct tp_stats *st, struct phase_view *pv)
{
	memset(pv, 0, sizeof(*pv));
	pv->from_rows = st->every_ns != 0;
	if (pv->from_rows) {
		pv->busy = tp_stats_phases(st, pv->all);
		for (int i = 0; i < TP_PHASES; i++)
			pv->ph[i] = pv->all[i].n ? &pv->all[i] : NULL;
	} else if (whole_from_totals(st, &pv->all[TP_PHASE_WHOLE])) {
		pv->ph[TP_PHASE_WHOLE] = &pv->all[TP_PHASE_WHOLE];
	}
}

/* send_cpu_ns_per_msg - the sending threads' CPU time for each message they
 * sent over the run, or -1 (no sending thread of its own, no message, a CPU
 * clock not read): what the pacing costs (a thread that spins to each send
 * spends the gap before it too) */
static double send_cpu_ns_per_msg(const struct tp_stats *st)
{
	struct phase_view pv;
	int64_t cpu = 0;
	uint64_t msgs;

	if (!st->nsrc[TP_STAT_SEND])
		return -1;
	for (int k = 0; k < st->nsrc[TP_STAT_SEND]; k++) {
		const struct tp_stat_src *s = st->src[TP_STAT_SEND][k];

		if (!s || s->cpu_begin_ns < 0 || s->cpu_end_ns <= 0 ||
		    (st->nsrc[TP_STAT_RECV] && st->w[TP_STAT_SEND][k] &&
		     st->w[TP_STAT_SEND][k] == st->w[TP_STAT_RECV][0]))
			return -1;
		cpu += s->cpu_end_ns - s->cpu_begin_ns;
	}
	phase_view(st, &pv);
	msgs = pv.ph[TP_PHASE_WHOLE] ? pv.ph[TP_PHASE_WHOLE]->v[TP_STAT_SEND].msgs : 0;
	return msgs ? (double)cpu / (double)msgs : -1;
}

/* phase_secs - a phase's length in s */
static double phase_secs(const struct tp_phase *ph)
{
	return (double)(ph->end_ns - ph->start_ns) / 1e9;
}

/* per_s - @v per second over @secs (0 for no time) */
static double per_s(double v, double secs)
{
	return secs > 0 ? v / secs : 0;
}

/* write_phase - one phase object (or null) */
static void write_phase(struct jtr_json *j, const char *key, const struct tp_phase *ph)
{
	const struct tp_ival *s, *v;
	double secs;

	if (!ph) {
		jtr_json_null(j, key);
		return;
	}
	s = &ph->v[TP_STAT_SEND];
	v = &ph->v[TP_STAT_RECV];
	secs = phase_secs(ph);
	jtr_json_obj_begin(j, key);
	jtr_json_uint(j, "rows", ph->n);
	jtr_json_int(j, "start_mono_ns", ph->start_ns);
	jtr_json_int(j, "end_mono_ns", ph->end_ns);
	jtr_json_uint(j, "duration_ns", (uint64_t)(ph->end_ns - ph->start_ns));
	jtr_json_uint(j, "msgs_sent", s->msgs);
	jtr_json_uint(j, "bytes_sent", s->bytes);
	jtr_json_fixed(j, "msgs_sent_per_s", per_s((double)s->msgs, secs), 3);
	jtr_json_fixed(j, "mb_sent_per_s", per_s((double)s->bytes / 1e6, secs), 6);
	jtr_json_uint(j, "msgs_recv", v->msgs);
	jtr_json_uint(j, "bytes_recv", v->bytes);
	jtr_json_fixed(j, "msgs_recv_per_s", per_s((double)v->msgs, secs), 3);
	jtr_json_fixed(j, "mb_recv_per_s", per_s((double)v->bytes / 1e6, secs), 6);
	jtr_json_uint(j, "lat_samples", v->lat_n);
	if (v->lat_n) {
		double mean, sd;

		lat_moments(v->lat_n, v->lat_sum, v->lat_sum_sq, &mean, &sd);
		jtr_json_fixed(j, "lat_avg_ns", mean, 1);
		jtr_json_fixed(j, "lat_stddev_ns", sd, 1);
		jtr_json_uint(j, "lat_min_ns", v->lat_min);
		jtr_json_uint(j, "lat_max_ns", v->lat_max);
	} else {
		jtr_json_null(j, "lat_avg_ns");
		jtr_json_null(j, "lat_stddev_ns");
		jtr_json_null(j, "lat_min_ns");
		jtr_json_null(j, "lat_max_ns");
	}
	if (ph->cpu_ns >= 0 && secs > 0)
		jtr_json_fixed(j, "cpu_pct", 100.0 * (double)ph->cpu_ns / 1e9 / secs, 2);
	else
		jtr_json_null(j, "cpu_pct");
	jtr_json_obj_end(j);
}

/* tp_stats_write_json - CPU, RSS and the rows into the open object */
void tp_stats_write_json(struct jtr_json *j, const struct tp_stats *st)
{
	struct phase_view pv;
	char utc[40];

	json_pct(j, "cpu_pct", tp_stats_proc_cpu_pct(st));
	json_pct(j, "send_cpu_pct", role_cpu_pct(st, TP_STAT_SEND));
	if (send_cpu_ns_per_msg(st) >= 0)
		jtr_json_fixed(j, "send_cpu_ns_per_msg", send_cpu_ns_per_msg(st), 1);
	else
		jtr_json_null(j, "send_cpu_ns_per_msg");
	json_pct(j, "recv_cpu_pct", role_cpu_pct(st, TP_STAT_RECV));
	json_pct(j, "rss_max_mb", st->rss_max_mb > 0 ? st->rss_max_mb : -1);
	if (st->every_ns) {
		jtr_json_uint(j, "stats_every_ns", st->every_ns);
		jtr_json_uint(j, "startup_ns", st->startup_ns);
	} else {
		jtr_json_null(j, "stats_every_ns");
		jtr_json_null(j, "startup_ns");
	}
	jtr_json_arr_begin(j, "stats");
	for (size_t i = 0; i < st->nrows; i++) {
		const struct tp_stats_row *r = &st->rows[i];

		utc_text(r->real_ns, utc, sizeof(utc));
		jtr_json_obj_begin(j, NULL);
		jtr_json_fixed(j, "t_s", r->t_s, 3);
		jtr_json_str(j, "utc", utc);
		jtr_json_int(j, "mono_ns", r->mono_ns);
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
	phase_view(st, &pv);
	jtr_json_obj_begin(j, "phases");
	write_phase(j, "startup", pv.ph[TP_PHASE_STARTUP]);
	write_phase(j, "steady", pv.ph[TP_PHASE_STEADY]);
	write_phase(j, "whole", pv.ph[TP_PHASE_WHOLE]);
	jtr_json_obj_end(j);
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

/* what a line of the phases table shows */
enum cell {
	C_ROWS, C_FROM, C_TO, C_SECS, C_MSGS, C_MB, C_MSGS_S, C_MB_S,
	C_LAT_AVG, C_LAT_SD, C_LAT_MIN, C_LAT_MAX, C_CPU,
};

/* cell_text - @ph's value of @what (of the @role thread's counts) */
static const char *cell_text(char *buf, size_t n, const struct tp_stats *st,
			     const struct tp_phase *ph, enum cell what, int role)
{
	const struct tp_ival *v;
	double secs, mean, sd;

	if (!ph)
		return "none";
	v = &ph->v[role];
	secs = phase_secs(ph);
	if (what >= C_LAT_AVG && what <= C_LAT_MAX && !v->lat_n)
		return "-";
	if (what >= C_LAT_AVG && what <= C_LAT_SD)
		lat_moments(v->lat_n, v->lat_sum, v->lat_sum_sq, &mean, &sd);
	switch (what) {
	case C_ROWS: snprintf(buf, n, "%zu", ph->n); break;
	case C_FROM: snprintf(buf, n, "%.3f", (double)(ph->start_ns - st->t0_ns) / 1e9); break;
	case C_TO: snprintf(buf, n, "%.3f", (double)(ph->end_ns - st->t0_ns) / 1e9); break;
	case C_SECS: snprintf(buf, n, "%.3f", secs); break;
	case C_MSGS: snprintf(buf, n, "%llu", (unsigned long long)v->msgs); break;
	case C_MB: snprintf(buf, n, "%.6f", (double)v->bytes / 1e6); break;
	case C_MSGS_S: snprintf(buf, n, "%.1f", per_s((double)v->msgs, secs)); break;
	case C_MB_S: snprintf(buf, n, "%.3f", per_s((double)v->bytes / 1e6, secs)); break;
	case C_LAT_AVG: snprintf(buf, n, "%.2f", mean / 1e3); break;
	case C_LAT_SD: snprintf(buf, n, "%.2f", sd / 1e3); break;
	case C_LAT_MIN: snprintf(buf, n, "%.2f", (double)v->lat_min / 1e3); break;
	case C_LAT_MAX: snprintf(buf, n, "%.2f", (double)v->lat_max / 1e3); break;
	case C_CPU:
		if (ph->cpu_ns < 0 || secs <= 0)
			return "unknown";
		snprintf(buf, n, "%.2f", 100.0 * (double)ph->cpu_ns / 1e9 / secs);
		break;
	}
	return buf;
}

/* table_line - "  LABEL   v1   v2   v3": the phases shown (only the whole run
 * without rows) */
static void table_line(FILE *f, const struct tp_stats *st, const struct phase_view *pv,
		       const char *label, enum cell what, int role)
{
	char buf[48];

	fprintf(f, "  %-20s", label);
	for (int i = pv->from_rows ? 0 : TP_PHASE_WHOLE; i < TP_PHASES; i++)
		fprintf(f, " %15s", cell_text(buf, sizeof(buf), st, pv->ph[i], what, role));
	fputc('\n', f);
}

/* dir_line - "sent 5100 msgs, 0.326400 MB, 0.065 MB/s (0.522 Mbit/s)" */
static void dir_line(FILE *f, const char *dir, const struct tp_ival *v, double secs)
{
	double mb = (double)v->bytes / 1e6;

	fprintf(f, "%s %llu msgs, %.6f MB, %.3f MB/s (%.3f Mbit/s)", dir,
		(unsigned long long)v->msgs, mb, per_s(mb, secs), per_s(8 * mb, secs));
}

/* phases_summary - the phases table and the whole run's line */
static void phases_summary(FILE *f, const struct tp_stats *st)
{
	static const char *const names[TP_PHASES] = { "start-up", "steady", "whole" };
	const bool snd = st->nsrc[TP_STAT_SEND], rcv = st->nsrc[TP_STAT_RECV];
	const struct tp_phase *w;
	struct phase_view pv;

	phase_view(st, &pv);
	w = pv.ph[TP_PHASE_WHOLE];
	fputc('\n', f);
	if (pv.from_rows && !pv.busy) {
		fprintf(f, "phases: none: no message was sent or received in any stats row\n");
		return;
	}
	if (!w) {
		fprintf(f, "phases: none (--stats-every 0: the phases are made of the stats rows), "
			"and no message was sent or received\n");
		return;
	}
	if (pv.from_rows && st->startup_ns)
		fprintf(f, "phases (whole stats rows; MB = 10^6 bytes): the start-up is the first "
			"%.3f s of traffic, the steady state the rest\n",
			(double)st->startup_ns / 1e9);
	else if (pv.from_rows)
		fprintf(f, "phases (whole stats rows; MB = 10^6 bytes): no start-up (--startup 0), "
			"the steady state is all the traffic\n");
	else
		fprintf(f, "phases: none (--stats-every 0: the phases are made of the stats rows); "
			"the whole run from its start to its end (MB = 10^6 bytes):\n");
	fprintf(f, "  %-20s", "phase");
	for (int i = pv.from_rows ? 0 : TP_PHASE_WHOLE; i < TP_PHASES; i++)
		fprintf(f, " %15s", names[i]);
	fputc('\n', f);
	if (pv.from_rows)
		table_line(f, st, &pv, "rows", C_ROWS, 0);
	table_line(f, st, &pv, "from s", C_FROM, 0);
	table_line(f, st, &pv, "to s", C_TO, 0);
	table_line(f, st, &pv, "duration s", C_SECS, 0);
	if (snd) {
		table_line(f, st, &pv, "sent msgs", C_MSGS, TP_STAT_SEND);
		table_line(f, st, &pv, "sent MB", C_MB, TP_STAT_SEND);
		table_line(f, st, &pv, "sent msgs/s", C_MSGS_S, TP_STAT_SEND);
		table_line(f, st, &pv, "sent MB/s", C_MB_S, TP_STAT_SEND);
	}
	if (rcv) {
		table_line(f, st, &pv, "received msgs", C_MSGS, TP_STAT_RECV);
		table_line(f, st, &pv, "received MB", C_MB, TP_STAT_RECV);
		table_line(f, st, &pv, "received msgs/s", C_MSGS_S, TP_STAT_RECV);
		table_line(f, st, &pv, "received MB/s", C_MB_S, TP_STAT_RECV);
	}
	if (st->has_lat) {
		table_line(f, st, &pv, "latency avg us", C_LAT_AVG, TP_STAT_RECV);
		table_line(f, st, &pv, "latency stddev us", C_LAT_SD, TP_STAT_RECV);
		table_line(f, st, &pv, "latency min us", C_LAT_MIN, TP_STAT_RECV);
		table_line(f, st, &pv, "latency max us", C_LAT_MAX, TP_STAT_RECV);
	}
	table_line(f, st, &pv, "CPU % (process)", C_CPU, 0);
	if (pv.from_rows && !pv.ph[TP_PHASE_STARTUP] && st->startup_ns)
		fprintf(f, "start-up: none: %.3f s is less than half a stats row (%.3f s)\n",
			(double)st->startup_ns / 1e9, (double)st->every_ns / 1e9);
	if (pv.from_rows && !pv.ph[TP_PHASE_STEADY])
		fprintf(f, "steady: none: the run was shorter than the start-up\n");
	fprintf(f, "whole run: %.3f s", phase_secs(w));
	if (snd) {
		fputs("; ", f);
		dir_line(f, "sent", &w->v[TP_STAT_SEND], phase_secs(w));
	}
	if (rcv) {
		fputs("; ", f);
		dir_line(f, "received", &w->v[TP_STAT_RECV], phase_secs(w));
	}
	fputc('\n', f);
}

/* tp_stats_summary - the phases; CPU and memory, overall and over the samples */
void tp_stats_summary(FILE *f, const struct tp_stats *st, const char *recv_mode, bool legacy)
{
	char a[32], b[32], c[32];
	double cmax = 0, cmin = 1e300, csum = 0, mmax = 0, mmin = 1e300, msum = 0;
	size_t n = 0;

	if (legacy)
		phases_summary(f, st);
	fprintf(f, "CPU: process %s", pct_text(a, sizeof(a), tp_stats_proc_cpu_pct(st)));
	if (st->nsrc[TP_STAT_SEND] && st->nsrc[TP_STAT_RECV] && st->w[TP_STAT_SEND][0] &&
	    st->w[TP_STAT_SEND][0] == st->w[TP_STAT_RECV][0]) {
		/* one thread does both (ping --one-thread, pong) */
		fprintf(f, ", the thread that sends and receives %s (%s receive)",
			pct_text(c, sizeof(c), role_cpu_pct(st, TP_STAT_RECV)), recv_mode);
	} else {
		if (st->nsrc[TP_STAT_SEND])
			fprintf(f, ", sending thread%s %s", st->nsrc[TP_STAT_SEND] > 1 ? "s" : "",
				pct_text(b, sizeof(b), role_cpu_pct(st, TP_STAT_SEND)));
		if (send_cpu_ns_per_msg(st) >= 0)
			fprintf(f, " (%.0f ns of CPU a message sent)", send_cpu_ns_per_msg(st));
		if (st->nsrc[TP_STAT_RECV])
			fprintf(f, ", receiving thread%s %s (%s receive)",
				st->nsrc[TP_STAT_RECV] > 1 ? "s" : "",
				pct_text(c, sizeof(c), role_cpu_pct(st, TP_STAT_RECV)),
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
	if (n && legacy)
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
/* tp_latlog_name - the latency file's name */
const char *tp_latlog_name(const struct tp_latlog *l)
{
	return l->name[0] ? l->name : "latency.csv";
}

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
	jtr_probe_open(p, &a, tp_latlog_name(l));
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
		jtr_warn(p, "%s holds the first %llu of %llu latency samples (the buffer was "
			 "full); raise --latency-max to keep them all", tp_latlog_name(l),
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
	jtr_json_str(j, "name", tp_latlog_name(l));
	jtr_json_uint(j, "capacity", l->cap);
	jtr_json_uint(j, "samples", kept);
	jtr_json_uint(j, "not_kept", l->n - kept);
	jtr_json_obj_end(j);
}
