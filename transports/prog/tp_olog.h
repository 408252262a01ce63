/* SPDX-License-Identifier: GPL-2.0-only */
/* tp_olog.h - the outlier log of jtr ping, pong and sub: --threshold and
 * --max-outliers, the default threshold from the warm-up, the log (a
 * jtr_olog with the kind and seq columns and the program's stamps) and its
 * parts of summary.txt and result.json. Like tp_prog.h, main()'s helpers
 * print and exit; the hot-path ones (inline) do neither.
 *
 * The default threshold is max(2 x m, m + 10 us), m the median of the warm-up
 * messages' values (ping: round trips; pong: reflections; sub: latencies):
 * where the values are steady (busy-poll, shm) m + 10 us logs every
 * interruption of 10 us or more and about the top 0.1-1 % of a quiet run;
 * 2 x m keeps a blocking receive's wake-up spread (p90 1.2-1.6 x the median
 * on loopback) out of the log. With fewer than TP_OLOG_WARM_MIN warm-up
 * values it is a fixed TP_OLOG_FALLBACK_NS.
 */
#ifndef JTR_TP_OLOG_H
#define JTR_TP_OLOG_H

#include "jtr_probe.h"

#define TP_OLOG_DEFAULT_MAX 100000ULL
#define TP_OLOG_WARM_MIN 10			/* warm-up values the rule needs */
#define TP_OLOG_MARGIN_NS 10000ULL	/* m + 10 us */
#define TP_OLOG_FALLBACK_NS 100000ULL

/* the options' help lines, @what is "round trips", "reflections", ... */
#define TP_OLOG_USAGE(what, extra)						\
"      --threshold DUR      " what " above DUR go to DIR/outliers.csv\n"	\
"                           (default max(2 x m, m + 10us), m the median of the\n"	\
"                           warm-up's; 100us with fewer than 10 warm-up messages)\n" \
extra									\
"      --max-outliers N     lines the log keeps (default 100000, 0: none; the rest\n" \
"                           are counted as dropped)\n"

/* how threshold_ns was set */
enum tp_olog_rule { TP_OLOG_UNSET, TP_OLOG_OPTION, TP_OLOG_WARMUP, TP_OLOG_FIXED };

struct tp_olog {
	bool on;			/* the program keeps a log in this run */
	uint64_t threshold_opt;		/* --threshold, 0: the rule */
	uint64_t max;			/* --max-outliers */
	uint64_t threshold_ns;		/* in force; 0 until the first measured value */
	uint64_t warm_median_ns;	/* the warm-up's median, 0: none */
	enum tp_olog_rule rule;
	struct jtr_olog log;
	struct jtr_hist lengths;	/* every outlier's length, logged or dropped */
	struct jtr_hist warm;		/* the warm-up's values, coarse */
	/* a sum of several streams' logs (tp_olog_sum): those logs */
	const struct tp_olog *const *parts;
	int nparts;
};

/* tp_olog_defaults - --max-outliers' default, no --threshold */
void tp_olog_defaults(struct tp_olog *o);

/* tp_olog_opt - --threshold or --max-outliers into @o; false for another @opt */
bool tp_olog_opt(struct jtr_probe *p, struct tp_olog *o, int opt, const char *arg);

/* tp_olog_init - switch the log on: allocate and pre-touch it with the
 * kind column @kind, seq, and @nstamps stamps @names (bit i of @mono:
 * stamp i is CLOCK_MONOTONIC ns, else the timebase's), and the histograms;
 * exit 1 when out of memory. Call before the privilege drop. */
void tp_olog_init(struct jtr_probe *p, struct tp_olog *o, const char *kind, unsigned nstamps,
		  const char *const *names, unsigned mono);

/* tp_olog_cpu - the measuring thread's CPU for the log: @pinned, or (not
 * pinned) the CPU it runs on now, a guess. Call in that thread, before its
 * loop. */
void tp_olog_cpu(struct tp_olog *o, int pinned);

/* tp_olog_settle - set the threshold by the rule, once (the first measured
 * value does it; call it after the run, before the writers below, for a run
 * that had none) */
void tp_olog_settle(struct tp_olog *o);

/* tp_olog_warm - a warm-up value, for the rule (hot path) */
static inline void tp_olog_warm(struct tp_olog *o, uint64_t v)
{
	if (!o->threshold_ns)
		jtr_hist_record(&o->warm, v);
}

/* tp_olog_over - a measured value @v is an outlier (hot path) */
static inline bool tp_olog_over(struct tp_olog *o, uint64_t v)
{
	if (__builtin_expect(!o->threshold_ns, 0))
		tp_olog_settle(o);
	return v > o->threshold_ns;
}

/* tp_olog_note - log outlier @v of message @seq from @start_raw, with the
 * log's stamps (hot path) */
static inline void tp_olog_note(struct tp_olog *o, uint64_t start_raw, uint64_t v, uint64_t seq,
				const uint64_t *stamps)
{
	jtr_hist_record(&o->lengths, v);
	jtr_olog_add_msg(&o->log, start_raw, v, seq, stamps);
}

/* tp_olog_sum - @sum: the logs @parts[0..@n) of @n streams together (each
 * stream its own threshold, from its own warm-up unless --threshold): counts,
 * lengths and dropped lines added up, the lowest threshold, their rule when
 * they share it; outliers.csv then holds every stream's lines, a "stream"
 * column last. @parts stays the caller's. Call after each is settled. */
void tp_olog_sum(struct jtr_probe *p, struct tp_olog *sum, const struct tp_olog *const *parts,
		 int n);

/* tp_olog_rule_name - "option", "warmup", "fixed" (a sum whose streams'
 * rules differ: "per_stream") */
const char *tp_olog_rule_name(const struct tp_olog *o);

/* tp_olog_write_params - params' threshold_ns (--threshold, null: the rule),
 * threshold_rule (option, warmup or fixed), warmup_median_ns (null: none)
 * and max_outliers */
void tp_olog_write_params(struct jtr_json *j, const struct tp_olog *o);

/* tp_olog_write_run - the "outliers" object of the run the log measures
 * (@dur: the run's duration, @h its histogram) */
void tp_olog_write_run(struct jtr_json *j, const struct tp_olog *o, uint64_t dur,
		       const struct jtr_hist *h);

/* tp_olog_summary - summary.txt's outliers line */
void tp_olog_summary(FILE *f, const struct tp_olog *o, const char *what);

/* tp_olog_stream_text - a stream's part of its summary line: ", outliers=N
 * above T ns (rule)", nothing when it keeps no log */
void tp_olog_stream_text(FILE *f, const struct tp_olog *o);

/* tp_olog_write_csv - DIR/outliers.csv, committed (times through @tb); a
 * sum's: each stream's lines, stream by stream, with its number */
void tp_olog_write_csv(struct jtr_probe *p, const struct tp_olog *o);

#endif
