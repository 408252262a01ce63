// SPDX-License-Identifier: GPL-2.0-only
/* jtr_series.c - the per-CPU series of the probes with a measuring thread
 * on each CPU, and their results' common parts (jtr_series.h says what and
 * why).
 */
#include <stdio.h>

#include "jtr_series.h"

/* what series_init needs of jtr_series_workers' arguments */
struct series_ctx {
	size_t off;
	uint64_t max_outliers;
	struct jtr_probe *p;
};

/* series_init - a record's series for @cpu (jtr_probe_cpu_workers' init) */
static void series_init(void *rec, int cpu, void *arg)
{
	const struct series_ctx *c = arg;
	struct jtr_series *s = (struct jtr_series *)((char *)rec + c->off);

	s->p = c->p;
	s->cpu = cpu;
	jtr_probe_series_init(c->p, &s->hist, &s->lengths, &s->log, c->max_outliers, cpu);
}

/* jtr_series_workers - see jtr_series.h */
void *jtr_series_workers(struct jtr_probe *p, const cpu_set_t *set, size_t size, size_t off,
			 uint64_t max_outliers, void (*fn)(void *rec), struct jtr_worker **w,
			 int *n)
{
	struct series_ctx c = { .off = off, .max_outliers = max_outliers, .p = p };

	return jtr_probe_cpu_workers(p, set, size, series_init, &c, fn, w, n);
}

/* jtr_series_head - see jtr_series.h */
void jtr_series_head(FILE *f, const struct jtr_series_set *a, const char *corner)
{
	char label[64];

	fprintf(f, "\n\n  %-24s", corner);
	for (int i = 0; i < a->n; i++) {
		snprintf(label, sizeof(label), "CPU %d", jtr_series_at(a, i)->cpu);
		fprintf(f, " %14s", label);
	}
}

/* dist_row - a row of the distribution: @label, then @pct's value of each
 * CPU's samples (@pct < 0: the minimum, > 100: the maximum); "-" where the
 * samples do not support it (jtr_pct_supported: 1,000 wake-ups have no p99.99
 * of their own, it would be the max under another name) or there are none */
static void dist_row(FILE *f, const struct jtr_series_set *a, const char *label, double pct)
{
	fprintf(f, "  %-24s", label);
	for (int i = 0; i < a->n; i++) {
		const struct jtr_hist *h = &jtr_series_at(a, i)->hist;
		uint64_t v = pct < 0 ? h->min : pct > 100 ? h->max :
			     jtr_hist_value_at_percentile(h, pct);

		if (!h->total || (pct >= 0 && pct <= 100 && !jtr_pct_supported(pct, h->total)))
			fprintf(f, " %14s", "-");
		else
			fprintf(f, " %14llu", (unsigned long long)v);
	}
	fputc('\n', f);
}

/* jtr_series_dist - see jtr_series.h */
void jtr_series_dist(FILE *f, const struct jtr_series_set *a)
{
	char label[64];

	dist_row(f, a, "min ns", -1);
	for (int k = 0; k < JTR_NPCT; k++) {
		snprintf(label, sizeof(label), "p%s ns", jtr_pct_keys[k]);
		dist_row(f, a, label, jtr_pct_values[k]);
	}
	dist_row(f, a, "max ns", 101);
}

/* jtr_series_open - see jtr_series.h */
void jtr_series_open(struct jtr_probe *p, struct jtr_series_out *o)
{
	jtr_probe_open(p, &o->txt, "summary.txt");
	jtr_probe_open(p, &o->csv, "outliers.csv");
	jtr_probe_open(p, &o->res, "result.json");
	jtr_json_init(&o->j, o->res.f);
	jtr_probe_result_begin(p, &o->j);
}

/* jtr_series_csv - see jtr_series.h */
void jtr_series_csv(FILE *f, const struct jtr_series_set *a, const struct jtr_tb *tb)
{
	jtr_olog_csv_header(f, NULL);
	for (int i = 0; i < a->n; i++)
		jtr_olog_write_csv(f, &jtr_series_at(a, i)->log, tb);
}

/* jtr_series_cpus - see jtr_series.h */
void jtr_series_cpus(struct jtr_json *j, const struct jtr_series_set *a)
{
	jtr_json_arr_begin_inline(j, "cpus");
	for (int i = 0; i < a->n; i++)
		jtr_json_int(j, NULL, jtr_series_at(a, i)->cpu);
	jtr_json_arr_end(j);
}

/* jtr_series_run_begin - see jtr_series.h */
void jtr_series_run_begin(struct jtr_json *j, const struct jtr_series *s, int64_t start_ns,
			  int64_t end_ns, uint64_t dur)
{
	char name[32];

	snprintf(name, sizeof(name), "cpu%d", s->cpu);
	jtr_result_run_begin(j, name, s->cpu, s->partial, start_ns, end_ns, dur, &s->hist);
}

/* jtr_series_run_outliers - see jtr_series.h */
void jtr_series_run_outliers(struct jtr_json *j, const struct jtr_series *s, uint64_t dur)
{
	jtr_result_write_outliers(j, &s->log, &s->lengths, s->threshold_ns, dur,
				  s->hist.total ? s->hist.min : 0, "outliers.csv");
}

/* jtr_series_run_end - see jtr_series.h */
void jtr_series_run_end(struct jtr_json *j, const struct jtr_series *s)
{
	jtr_result_write_hist(j, "histogram", &s->hist);
	jtr_json_obj_end(j);
}

/* jtr_series_close - see jtr_series.h */
void jtr_series_close(struct jtr_probe *p, struct jtr_series_out *o)
{
	jtr_json_obj_begin(&o->j, "files");
	jtr_json_str(&o->j, "summary", "summary.txt");
	jtr_json_str(&o->j, "outliers", "outliers.csv");
	jtr_json_obj_end(&o->j);
	jtr_probe_result_end(p, &o->j);
	jtr_probe_commit_file(p, &o->txt);
	jtr_probe_commit_file(p, &o->csv);
	jtr_probe_commit_file(p, &o->res);
}
