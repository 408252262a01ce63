// SPDX-License-Identifier: GPL-2.0-only
/* jtr_result.c - pieces of the jtr-result/1 format shared by every tool. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jtr_cpu.h"
#include "jtr_result.h"

const char *const jtr_pct_keys[JTR_NPCT] = { "50", "90", "99", "99.9", "99.99", "99.999" };
const double jtr_pct_values[JTR_NPCT] = { 50.0, 90.0, 99.0, 99.9, 99.99, 99.999 };

/* jtr_pct_supported - see jtr_result.h */
bool jtr_pct_supported(double pct, uint64_t samples)
{
	return (double)samples * (1.0 - pct / 100.0) >= 1.0 - 1e-9;
}

/* jtr_result_write_percentiles - {"50": v, ..., "99.999": v} under @key */
void jtr_result_write_percentiles(struct jtr_json *j, const char *key, const struct jtr_hist *h)
{
	jtr_json_obj_begin(j, key);
	for (int i = 0; i < JTR_NPCT; i++)
		jtr_json_uint(j, jtr_pct_keys[i], jtr_hist_value_at_percentile(h, jtr_pct_values[i]));
	jtr_json_obj_end(j);
}

/* jtr_result_run_begin - a run object's common head (see jtr_result.h) */
void jtr_result_run_begin(struct jtr_json *j, const char *name, int cpu, bool partial,
			  int64_t start_mono_ns, int64_t end_mono_ns, uint64_t duration_ns,
			  const struct jtr_hist *h)
{
	jtr_json_obj_begin(j, NULL);
	jtr_json_str(j, "name", name);
	if (cpu >= 0)
		jtr_json_int(j, "cpu", cpu);
	else
		jtr_json_null(j, "cpu");
	jtr_json_bool(j, "partial", partial);
	jtr_json_int(j, "start_mono_ns", start_mono_ns);
	jtr_json_int(j, "end_mono_ns", end_mono_ns);
	jtr_json_uint(j, "duration_ns", duration_ns);
	jtr_result_write_stats(j, h);
}

/* jtr_result_write_stats - samples, min/max/mean/stddev and percentiles_ns */
void jtr_result_write_stats(struct jtr_json *j, const struct jtr_hist *h)
{
	jtr_json_uint(j, "samples", h->total);
	jtr_json_uint(j, "min_ns", h->total ? h->min : 0);
	jtr_json_uint(j, "max_ns", h->max);
	jtr_json_fixed(j, "mean_ns", jtr_hist_mean(h), 3);
	jtr_json_fixed(j, "stddev_ns", jtr_hist_stddev(h), 3);
	jtr_result_write_percentiles(j, "percentiles_ns", h);
}

/* jtr_result_write_hist - the "histogram" object */
void jtr_result_write_hist(struct jtr_json *j, const char *key, const struct jtr_hist *h)
{
	struct jtr_hist_bucket b;
	uint32_t idx = 0;

	jtr_json_obj_begin(j, key);
	jtr_json_str(j, "unit", "ns");
	jtr_json_uint(j, "sub_bucket_bits", h->sub_bits);
	jtr_json_double(j, "max_rel_error", jtr_hist_rel_error(h));
	jtr_json_uint(j, "total", h->total);
	jtr_json_arr_begin(j, "buckets");
	while (jtr_hist_next(h, &idx, &b)) {
		jtr_json_arr_begin_inline(j, NULL);
		jtr_json_uint(j, NULL, b.lo);
		jtr_json_uint(j, NULL, b.hi);
		jtr_json_uint(j, NULL, b.count);
		jtr_json_arr_end(j);
	}
	jtr_json_arr_end(j);
	jtr_json_obj_end(j);
}

/* jtr_result_write_outliers - the "outliers" object of a run */
void jtr_result_write_outliers(struct jtr_json *j, const struct jtr_olog *l,
			       const struct jtr_hist *lengths, uint64_t threshold_ns,
			       uint64_t duration_ns, uint64_t base_ns, const char *log_name)
{
	uint64_t n = lengths->total;
	uint64_t lost = l->total_ns > n * base_ns ? l->total_ns - n * base_ns : 0;

	jtr_json_obj_begin(j, "outliers");
	jtr_json_uint(j, "threshold_ns", threshold_ns);
	jtr_json_uint(j, "count", n);
	jtr_json_fixed(j, "per_s", duration_ns ? (double)n * 1e9 / (double)duration_ns : 0.0, 3);
	jtr_json_uint(j, "logged", l->n);
	jtr_json_uint(j, "dropped", l->dropped);
	jtr_json_str(j, "log", log_name);
	jtr_json_uint(j, "total_ns", l->total_ns);
	jtr_json_uint(j, "lost_ns", lost);
	jtr_json_uint(j, "max_ns", lengths->max);
	jtr_result_write_percentiles(j, "length_percentiles_ns", lengths);
	jtr_json_obj_end(j);
}

/* jtr_olog_init - allocate and pre-touch room for @cap entries */
int jtr_olog_init(struct jtr_olog *l, uint64_t cap, int cpu)
{
	memset(l, 0, sizeof(*l));
	l->cpu = cpu;
	l->cap = cap;
	if (cap == 0)
		return 0;
	l->v = malloc((size_t)cap * sizeof(l->v[0]));
	if (!l->v)
		return -ENOMEM;
	jtr_prefault(l->v, (size_t)cap * sizeof(l->v[0]));
	return 0;
}

/* jtr_olog_columns - the optional columns, allocated and pre-touched */
int jtr_olog_columns(struct jtr_olog *l, const char *kind, bool seq, unsigned nstamps,
		     const char *const *names, unsigned tsc)
{
	if (nstamps > JTR_OLOG_MAX_STAMPS)
		return -EINVAL;
	l->kind = kind;
	l->nstamps = nstamps;
	l->stamp_names = names;
	l->stamp_tsc = tsc;
	if (!l->cap)
		return 0;
	if (seq) {
		l->seq = malloc((size_t)l->cap * sizeof(l->seq[0]));
		if (!l->seq)
			return -ENOMEM;
		jtr_prefault(l->seq, (size_t)l->cap * sizeof(l->seq[0]));
	}
	if (nstamps) {
		l->stamps = malloc((size_t)l->cap * nstamps * sizeof(l->stamps[0]));
		if (!l->stamps)
			return -ENOMEM;
		jtr_prefault(l->stamps, (size_t)l->cap * nstamps * sizeof(l->stamps[0]));
	}
	return 0;
}

/* jtr_olog_free - release it */
void jtr_olog_free(struct jtr_olog *l)
{
	free(l->v);
	free(l->seq);
	free(l->stamps);
	l->v = NULL;
	l->seq = NULL;
	l->stamps = NULL;
}

/* jtr_tb_mono_ns - CLOCK_MONOTONIC ns of a raw timestamp */
int64_t jtr_tb_mono_ns(const struct jtr_tb *tb, uint64_t raw)
{
	if (tb->kind == JTR_TB_CLOCK)
		return (int64_t)raw;
	return jtr_tsc_map_ns(&tb->map, raw);
}

/* jtr_olog_csv_header_more - first line of the outlier log file, @more after */
void jtr_olog_csv_header_more(FILE *f, const struct jtr_olog *l, const char *more)
{
	fputs("cpu,start_ns,length_ns", f);
	if (l && l->kind)
		fputs(",kind", f);
	if (l && l->seq)
		fputs(",seq", f);
	for (unsigned k = 0; l && k < l->nstamps; k++)
		fprintf(f, ",%s_ns", l->stamp_names[k]);
	if (more)
		fputs(more, f);
	fputc('\n', f);
}

/* jtr_olog_csv_header - first line of the outlier log file */
void jtr_olog_csv_header(FILE *f, const struct jtr_olog *l)
{
	jtr_olog_csv_header_more(f, l, NULL);
}

/* jtr_olog_write_csv - "cpu,start_ns,length_ns[,...]" lines */
int jtr_olog_write_csv(FILE *f, const struct jtr_olog *l, const struct jtr_tb *tb)
{
	return jtr_olog_write_csv_more(f, l, tb, NULL);
}

/* jtr_olog_write_csv_more - "cpu,start_ns,length_ns[,...]<more>" lines */
int jtr_olog_write_csv_more(FILE *f, const struct jtr_olog *l, const struct jtr_tb *tb,
			    const char *more)
{
	for (uint64_t i = 0; i < l->n; i++) {
		fprintf(f, "%d,%lld,%llu", l->cpu, (long long)jtr_tb_mono_ns(tb, l->v[i].start_raw),
			(unsigned long long)l->v[i].len_ns);
		if (l->kind)
			fprintf(f, ",%s", l->kind);
		if (l->seq)
			fprintf(f, ",%llu", (unsigned long long)l->seq[i]);
		for (unsigned k = 0; k < l->nstamps; k++) {
			uint64_t v = l->stamps[i * l->nstamps + k];

			/* 0 stays 0: not known */
			if (v && (l->stamp_tsc & (1u << k)))
				v = (uint64_t)jtr_tsc_map_ns(&tb->map, v);
			else if (v)
				v = (uint64_t)jtr_tb_mono_ns(tb, v);
			fprintf(f, ",%llu", (unsigned long long)v);
		}
		if (more)
			fputs(more, f);
		fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}

/* jtr_result_write_pmu - a run's hardware counters, or null */
void jtr_result_write_pmu(struct jtr_json *j, const struct jtr_pmu *m, uint64_t loops)
{
	struct jtr_pmu_derived d;
	uint64_t count[JTR_PMU_N];

	if (!m->open) {
		jtr_json_null(j, "pmu");
		return;
	}
	for (int c = 0; c < JTR_PMU_N; c++)
		count[c] = m->end[c] - m->begin[c];
	jtr_pmu_derive(count, loops, &d);
	jtr_json_obj_begin(j, "pmu");
	for (int c = 0; c < JTR_PMU_N; c++)
		if (m->fd[c] >= 0 || c <= JTR_PMU_INSTRUCTIONS)
			jtr_json_uint(j, jtr_pmu_names[c], count[c]);
	jtr_json_fixed(j, "ipc", d.ipc, 3);
	jtr_json_obj_begin(j, "per_million_loops");
	for (int c = 0; c < JTR_PMU_N; c++)
		jtr_json_fixed(j, jtr_pmu_names[c], d.per_mloop[c], 1);
	jtr_json_obj_end(j);
	jtr_json_obj_end(j);
}
