// SPDX-License-Identifier: GPL-2.0-only
/* tp_olog.c - the outlier log of jtr ping, pong and sub. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "tp_olog.h"

/* the warm-up histogram's error: the median sets a threshold, no more */
#define WARM_HIST_ERROR 0.1

/* tp_olog_defaults - --max-outliers' default, no --threshold */
void tp_olog_defaults(struct tp_olog *o)
{
	memset(o, 0, sizeof(*o));
	o->max = TP_OLOG_DEFAULT_MAX;
}

/* tp_olog_opt - --threshold or --max-outliers */
bool tp_olog_opt(struct jtr_probe *p, struct tp_olog *o, int opt, const char *arg)
{
	return jtr_probe_outlier_opt(p, opt, arg, &o->threshold_opt, &o->max);
}

/* tp_olog_init - the log, its columns and histograms, pre-touched */
void tp_olog_init(struct jtr_probe *p, struct tp_olog *o, const char *kind, unsigned nstamps,
		  const char *const *names, unsigned mono)
{
	if (jtr_hist_init(&o->lengths, p->hist_error) < 0 ||
	    jtr_hist_init(&o->warm, WARM_HIST_ERROR) < 0 || jtr_olog_init(&o->log, o->max, 0) < 0 ||
	    jtr_olog_columns(&o->log, kind, true, nstamps, names, mono) < 0)
		jtr_fatal(p, "out of memory for %llu outliers; lower --max-outliers",
			  (unsigned long long)o->max);
	o->on = true;
	if (o->threshold_opt) {
		o->threshold_ns = o->threshold_opt;
		o->rule = TP_OLOG_OPTION;
	}
}

/* tp_olog_cpu - the pinned CPU, else the one the thread runs on now */
void tp_olog_cpu(struct tp_olog *o, int pinned)
{
	int cpu = pinned >= 0 ? pinned : sched_getcpu();

	o->log.cpu = cpu >= 0 ? cpu : 0;
}

/* tp_olog_settle - the threshold by the rule (see tp_olog.h), once */
void tp_olog_settle(struct tp_olog *o)
{
	uint64_t m;

	if (o->threshold_ns)
		return;
	if (o->warm.total < TP_OLOG_WARM_MIN) {
		o->threshold_ns = TP_OLOG_FALLBACK_NS;
		o->rule = TP_OLOG_FIXED;
		return;
	}
	m = jtr_hist_value_at_percentile(&o->warm, 50.0);
	o->warm_median_ns = m;
	o->threshold_ns = 2 * m > m + TP_OLOG_MARGIN_NS ? 2 * m : m + TP_OLOG_MARGIN_NS;
	o->rule = TP_OLOG_WARMUP;
}

/* tp_olog_sum - see tp_olog.h */
void tp_olog_sum(struct jtr_probe *p, struct tp_olog *sum, const struct tp_olog *const *parts,
		 int n)
{
	const struct tp_olog *a = parts[0];

	memset(sum, 0, sizeof(*sum));
	if (jtr_hist_init(&sum->lengths, p->hist_error) < 0)
		jtr_fatal(p, "out of memory");
	sum->on = a->on;
	sum->threshold_opt = a->threshold_opt;
	sum->max = a->max;
	sum->rule = a->rule;
	sum->threshold_ns = a->threshold_ns;
	sum->log.kind = a->log.kind;
	sum->parts = parts;
	sum->nparts = n;
	for (int k = 0; k < n; k++) {
		const struct tp_olog *o = parts[k];

		if (o->threshold_ns < sum->threshold_ns)
			sum->threshold_ns = o->threshold_ns;
		if (o->rule != sum->rule)
			sum->rule = TP_OLOG_UNSET;	/* "each stream's" */
		if (jtr_hist_merge(&sum->lengths, &o->lengths) < 0)
			jtr_fatal(p, "outlier lengths of two precisions");
		sum->log.n += o->log.n;
		sum->log.cap += o->log.cap;
		sum->log.dropped += o->log.dropped;
		sum->log.total_ns += o->log.total_ns;
	}
	/* one median only when there is one stream's warm-up */
	sum->warm_median_ns = n == 1 ? a->warm_median_ns : 0;
}

static const char *const rule_names[] = {
	[TP_OLOG_UNSET] = "per_stream", [TP_OLOG_OPTION] = "option",
	[TP_OLOG_WARMUP] = "warmup", [TP_OLOG_FIXED] = "fixed",
};

/* tp_olog_rule_name - see tp_olog.h */
const char *tp_olog_rule_name(const struct tp_olog *o)
{
	return rule_names[o->rule];
}

/* tp_olog_write_params - threshold_ns, threshold_rule, warmup_median_ns, max_outliers */
void tp_olog_write_params(struct jtr_json *j, const struct tp_olog *o)
{
	if (o->threshold_opt)
		jtr_json_uint(j, "threshold_ns", o->threshold_opt);
	else
		jtr_json_null(j, "threshold_ns");
	jtr_json_str(j, "threshold_rule", tp_olog_rule_name(o));
	if (o->warm_median_ns)
		jtr_json_uint(j, "warmup_median_ns", o->warm_median_ns);
	else
		jtr_json_null(j, "warmup_median_ns");
	jtr_json_uint(j, "max_outliers", o->max);
}

/* tp_olog_write_run - the run's "outliers" object; time lost is counted
 * above the run's shortest value, as the probes do */
void tp_olog_write_run(struct jtr_json *j, const struct tp_olog *o, uint64_t dur,
		       const struct jtr_hist *h)
{
	jtr_result_write_outliers(j, &o->log, &o->lengths, o->threshold_ns, dur,
				  h->total ? h->min : 0, "outliers.csv");
}

/* tp_olog_summary - "outliers: N above T ns (rule); L logged, D dropped" */
void tp_olog_summary(FILE *f, const struct tp_olog *o, const char *what)
{
	if (o->nparts > 1)
		fprintf(f, "outliers: %llu %s above each stream's threshold (",
			(unsigned long long)o->lengths.total, what);
	else
		fprintf(f, "outliers: %llu %s above %llu ns (", (unsigned long long)o->lengths.total,
			what, (unsigned long long)o->threshold_ns);
	switch (o->nparts > 1 ? TP_OLOG_UNSET : o->rule) {
	case TP_OLOG_UNSET:
		fputs("the streams' lines above", f);
		break;
	case TP_OLOG_OPTION:
		fputs("--threshold", f);
		break;
	case TP_OLOG_WARMUP:
		fprintf(f, "max(2 x m, m + 10us), m = %llu ns, the median of %llu warm-up ones",
			(unsigned long long)o->warm_median_ns, (unsigned long long)o->warm.total);
		break;
	default:
		fprintf(f, "fixed: %llu warm-up ones, fewer than %d", (unsigned long long)o->warm.total,
			TP_OLOG_WARM_MIN);
		break;
	}
	fprintf(f, "); %llu logged in outliers.csv, %llu dropped\n", (unsigned long long)o->log.n,
		(unsigned long long)o->log.dropped);
}

/* tp_olog_stream_text - see tp_olog.h */
void tp_olog_stream_text(FILE *f, const struct tp_olog *o)
{
	if (o->on)
		fprintf(f, ", outliers=%llu above %llu ns (%s)", (unsigned long long)o->lengths.total,
			(unsigned long long)o->threshold_ns, tp_olog_rule_name(o));
}

/* tp_olog_write_csv - DIR/outliers.csv, committed */
void tp_olog_write_csv(struct jtr_probe *p, const struct tp_olog *o)
{
	struct jtr_afile csv;

	char more[16];
	int bad = 0;

	jtr_probe_open(p, &csv, "outliers.csv");
	if (o->nparts <= 1) {
		jtr_olog_csv_header(csv.f, &o->log);
		bad = jtr_olog_write_csv(csv.f, &o->log, &p->tb);
	} else {
		jtr_olog_csv_header_more(csv.f, &o->parts[0]->log, ",stream");
		for (int k = 0; k < o->nparts && !bad; k++) {
			snprintf(more, sizeof(more), ",%d", k);
			bad = jtr_olog_write_csv_more(csv.f, &o->parts[k]->log, &p->tb, more);
		}
	}
	if (bad < 0)
		jtr_fatal(p, "cannot write %s: %s", csv.path, strerror(EIO));
	jtr_probe_commit_file(p, &csv);
}
