// SPDX-License-Identifier: GPL-2.0-only
/* calls.c - jtr run app: every call of the timed function, from the
 * JTR_EV_CALL records the uprobe pair writes (trace.bpf.c app_entry and
 * app_exit), into a series per traced CPU (the CPU the call entered on):
 * a histogram of every call, the outliers above the threshold in the outlier
 * log, and the results a probe writes (calls.h).
 *
 * The threshold is the warm-up's rule of jtr wake: the first --warmup calls
 * of each CPU (default 100) are not recorded, and their shortest times 8
 * (at least 1 us) is the threshold, unless --threshold gives one.
 */
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "jtr_probe.h"

/* calls_init - see calls.h */
void calls_init(struct calls *c, struct jtr_probe *p, const cpu_set_t *cpus)
{
	int n = CPU_COUNT(cpus), k = 0;

	c->p = p;
	c->cpus = calloc((size_t)(n ? n : 1), sizeof(*c->cpus));
	if (!c->cpus)
		jtr_fatal(p, "out of memory for the calls' series");
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		c->index[cpu] = -1;
		if (!CPU_ISSET(cpu, cpus))
			continue;
		struct calls_cpu *s = &c->cpus[k];

		s->p = p;
		s->cpu = cpu;
		jtr_probe_series_init(p, &s->hist, &s->lengths, &s->log, c->max_outliers, cpu);
		s->threshold_ns = c->threshold_given ? c->threshold_opt : 0;
		s->warm_min_ns = UINT64_MAX;
		c->index[cpu] = (int16_t)k++;
	}
	c->n = k;
}

/* note_tid - count a call of thread @tid on @s */
static void note_tid(struct calls_cpu *s, uint32_t tid)
{
	for (int i = 0; i < s->ntids; i++)
		if (s->tid[i] == tid) {
			s->ncalls[i]++;
			return;
		}
	if (s->ntids < JTR_CALLS_THREADS) {
		s->tid[s->ntids] = tid;
		s->ncalls[s->ntids++] = 1;
	}
}

/* calls_event - see calls.h */
void calls_event(struct calls *c, const struct jtr_ev *e)
{
	uint32_t in = (uint32_t)e->b, out = (uint32_t)(e->b >> 32);
	struct calls_cpu *s;
	uint64_t len;

	if (in >= CPU_SETSIZE || c->index[in] < 0 || e->ts_ns < e->a) {
		c->elsewhere++;
		return;
	}
	s = &c->cpus[c->index[in]];
	len = e->ts_ns - e->a;
	if (s->warm < c->warmup) {
		s->warm++;
		if (len < s->warm_min_ns)
			s->warm_min_ns = len;
		if (s->warm == c->warmup && !c->threshold_given)
			s->threshold_ns = jtr_default_threshold_ns(s->warm_min_ns);
		return;
	}
	if (!s->threshold_ns && !c->threshold_given)	/* --warmup 0 */
		s->threshold_ns = jtr_default_threshold_ns(len);
	if (!s->hist.total)
		s->first_ns = (int64_t)e->a;
	s->last_ns = (int64_t)e->ts_ns;
	jtr_hist_record(&s->hist, len);
	if (len > s->threshold_ns) {
		jtr_hist_record(&s->lengths, len);
		jtr_olog_add(&s->log, e->a, len);
	}
	if (out != in)
		s->migrated++;
	note_tid(s, e->pid);
}

/* most_tid - the thread that made most of @s's calls (0: none) */
static uint32_t most_tid(const struct calls_cpu *s)
{
	int best = -1;

	for (int i = 0; i < s->ntids; i++)
		if (best < 0 || s->ncalls[i] > s->ncalls[best])
			best = i;
	return best < 0 ? 0 : s->tid[best];
}

#define ROW(f, label, fmt, expr) JTR_SERIES_ROW(f, cpus, n, s, label, fmt, expr)

/* summary - the table of the calls, per CPU they entered on: @cpus, @n of them */
static void summary(FILE *f, const struct calls *c, const struct calls_cpu *cpus, int n)
{
	const struct jtr_series_set set = JTR_SERIES_SET(cpus, n);

	fprintf(f, "jtr app: %s%s in %s%s", c->usdt ? "USDT " : "", c->sym, c->path,
		c->p->partial ? " (PARTIAL: stopped early)" : "");
	if (c->pid > 0)
		fprintf(f, ", pid %d", c->pid);
	jtr_series_head(f, &set, "call time");
	fputc('\n', f);
	ROW(f, "calls", "llu", (unsigned long long)s->hist.total);
	ROW(f, "warm-up calls", "llu", (unsigned long long)s->warm);
	jtr_series_dist(f, &set);
	ROW(f, "mean ns", ".1f", jtr_hist_mean(&s->hist));
	ROW(f, "threshold ns", "llu", (unsigned long long)s->threshold_ns);
	ROW(f, "outliers", "llu", (unsigned long long)s->lengths.total);
	ROW(f, "returned on another CPU", "llu", (unsigned long long)s->migrated);
	ROW(f, "not logged (log full)", "llu", (unsigned long long)s->log.dropped);
	if (c->elsewhere)
		fprintf(f, "\n%llu calls entered on CPUs not traced (not counted above)\n",
			(unsigned long long)c->elsewhere);
}

/* calls_write - see calls.h */
void calls_write(struct calls *c, int64_t start_ns, int64_t end_ns)
{
	const struct jtr_series_set set = JTR_SERIES_SET(c->cpus, c->n);
	const struct jtr_tb mono = { .kind = JTR_TB_CLOCK };	/* starts are ns already */
	struct jtr_probe *p = c->p;
	struct jtr_series_out o;
	struct jtr_json *j = &o.j;
	uint64_t total = 0;

	for (int i = 0; i < c->n; i++)
		total += c->cpus[i].hist.total + c->cpus[i].warm;
	if (!total)
		jtr_warn(p, "no call of %s returned in the %.1f s traced: is it called (a "
			 "function the compiler inlined everywhere is never called; 'nm -C %s' "
			 "lists the copies there are, and __attribute__((noinline)) keeps one)?",
			 c->sym, (end_ns - start_ns) / 1e9, c->path);
	if (c->elsewhere)
		jtr_warn(p, "%llu calls entered on CPUs not traced: trace every CPU the threads "
			 "run on (-c) or pin them", (unsigned long long)c->elsewhere);
	if (c->dropped)
		jtr_warn(p, "%llu calls were lost (the tracer's ring was full): their times are not "
			 "in the histogram", (unsigned long long)c->dropped);
	/* the table's columns: the CPUs calls entered on (all traced ones if none did) */
	struct calls_cpu *shown = calloc((size_t)(c->n ? c->n : 1), sizeof(*shown));
	int nshown = 0;

	if (!shown)
		jtr_fatal(p, "out of memory for the summary");
	for (int i = 0; i < c->n; i++)
		if (c->cpus[i].hist.total || c->cpus[i].warm)
			shown[nshown++] = c->cpus[i];
	if (!nshown) {
		memcpy(shown, c->cpus, (size_t)c->n * sizeof(*shown));
		nshown = c->n;
	}
	jtr_series_open(p, &o);
	summary(o.txt.f, c, shown, nshown);
	if (!p->quiet)
		summary(stdout, c, shown, nshown);
	free(shown);
	jtr_series_csv(o.csv.f, &set, &mono);

	jtr_json_obj_begin(j, "params");
	jtr_json_str(j, "binary", c->path);
	jtr_json_str(j, "function", c->sym);
	jtr_json_bool(j, "usdt", c->usdt);
	if (c->pid > 0)
		jtr_json_int(j, "pid", c->pid);
	else
		jtr_json_null(j, "pid");
	jtr_json_uint(j, "warmup", c->warmup);
	jtr_json_uint(j, "duration_ns", (uint64_t)(end_ns - start_ns));
	jtr_json_uint(j, "calls_elsewhere", c->elsewhere);
	jtr_json_uint(j, "calls_lost", c->dropped);
	jtr_series_cpus(j, &set);
	jtr_probe_params_common(p, j, c->threshold_given ? c->threshold_opt : 0, c->max_outliers);
	jtr_json_obj_end(j);

	jtr_json_arr_begin(j, "runs");
	for (int i = 0; i < c->n; i++) {
		const struct calls_cpu *s = &c->cpus[i];
		uint64_t dur = (uint64_t)(end_ns - start_ns);

		if (!s->hist.total)
			continue;
		jtr_series_run_begin(j, &s->series, start_ns, end_ns, dur);
		jtr_json_int(j, "tid", most_tid(s));
		jtr_json_uint(j, "calls", s->hist.total);
		jtr_json_uint(j, "warmup_min_ns", s->warm ? s->warm_min_ns : 0);
		jtr_json_uint(j, "migrated", s->migrated);
		jtr_series_run_outliers(j, &s->series, dur);
		jtr_series_run_end(j, &s->series);
	}
	jtr_json_arr_end(j);
	/* jtr_series_close's, with the tracer's log beside them */
	jtr_json_obj_begin(j, "files");
	jtr_json_str(j, "summary", "summary.txt");
	jtr_json_str(j, "outliers", "outliers.csv");
	jtr_json_str(j, "events", "events.bin");
	jtr_json_str(j, "trace", "trace.json");
	jtr_json_obj_end(j);
	jtr_probe_result_end(p, j);
	jtr_probe_commit_file(p, &o.txt);
	jtr_probe_commit_file(p, &o.csv);
	jtr_probe_commit_file(p, &o.res);
}

/* calls_free - see calls.h */
void calls_free(struct calls *c)
{
	for (int i = 0; i < c->n; i++) {
		jtr_hist_free(&c->cpus[i].hist);
		jtr_hist_free(&c->cpus[i].lengths);
		jtr_olog_free(&c->cpus[i].log);
	}
	free(c->cpus);
	c->cpus = NULL;
}
