/* SPDX-License-Identifier: GPL-2.0-only */
/* jtr_sample.h - the timed-sampling loop of jtr null and jtr send, once.
 *
 * A run is W warm-up samples, whose minimum sets the outlier threshold when
 * none is given, then N measured samples. A sample is a body between two
 * fenced timestamp reads, less the timer's own overhead: an empty loop of
 * S iterations, or the caller's function (a send call). After each sample
 * the loop busy-waits a pause, so samples are spaced as sends on a wire
 * would be. Every measured sample goes into a histogram; one above the
 * threshold also into the outlier log and the histogram of outlier lengths.
 * The stop flag is read every 4096 samples.
 *
 * jtr_sample_run() is always inlined, with constant @tsc, @prepare and
 * @body, so each caller's loop carries only its own code: no test of the
 * timebase and no indirect call per sample. Nothing in the loop allocates,
 * makes a system call (but the body's own) or touches memory that was not
 * touched before the run; the histograms' running totals and the log's
 * counters are local copies, kept in registers and written back at the end
 * (the next fenced read waits for every store and reload before it).
 */
#ifndef JTR_SAMPLE_H
#define JTR_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>

#include "jtr_clock.h"
#include "jtr_hist.h"
#include "jtr_probe.h"
#include "jtr_result.h"

/* one run: what the caller sets, then what the loop leaves */
struct jtr_sample {
	/* in */
	uint64_t warmup;		/* samples before recording */
	uint64_t samples;		/* measured samples */
	uint64_t spins;			/* no body: iterations of the empty loop */
	uint64_t threshold_ns;		/* 0: jtr_default_threshold_ns(warm-up minimum) */
	uint64_t overhead_raw;		/* the timer's own cost, in timebase units */
	uint64_t pause_raw;		/* busy-wait after each sample, timebase units */
	struct jtr_ticks2ns t2n;	/* tsc: ticks to ns */
	struct jtr_hist *hist;		/* every measured sample */
	struct jtr_hist *lengths;	/* samples above the threshold */
	struct jtr_olog *log;		/* their starts and lengths */
	volatile uint64_t *at_sample;	/* progress: set every 4096 samples */
	/* out */
	uint64_t warm_min_ns;		/* 0 without warm-up samples */
	uint64_t start_raw, end_raw;	/* the measured samples' span, timebase units */
	uint64_t bodies;		/* bodies that returned >= 0, warm-up included */
	int err;			/* the body's -errno that ended the run, or 0 */
	bool partial;			/* fewer than @samples measured */
};

/* jtr_sample_timing - @s's timer overhead, pause and tick conversion for
 * probe @p's timebase (@tsc: the TSC, else clock_gettime); the rest of @s is
 * the caller's */
static inline void jtr_sample_timing(struct jtr_sample *s, const struct jtr_probe *p, bool tsc,
				     uint64_t pause_ns)
{
	s->overhead_raw = tsc ? jtr_ns2ticks(p->tb.hz, (uint64_t)p->costs.region_overhead_ns)
			      : (uint64_t)p->costs.gettime_region_ns;
	s->pause_raw = tsc ? jtr_ns2ticks(p->tb.hz, pause_ns) : pause_ns;
	s->t2n = p->tb.t2n;
}

/* jtr_sample_read_begin - the read that starts a timed region: lfence;rdtsc
 * (nothing before it still running), or clock_gettime(CLOCK_MONOTONIC) ns */
static inline __attribute__((always_inline)) uint64_t jtr_sample_read_begin(bool tsc)
{
	return tsc ? jtr_tsc_begin() : (uint64_t)jtr_mono_ns();
}

/* jtr_sample_read_end - the read that ends it: rdtscp;lfence (the body has
 * retired, and nothing after starts early), or clock_gettime ns */
static inline __attribute__((always_inline)) uint64_t jtr_sample_read_end(bool tsc)
{
	return tsc ? jtr_tsc_end() : (uint64_t)jtr_mono_ns();
}

/* jtr_sample_read_now - a plain read, for the pause */
static inline __attribute__((always_inline)) uint64_t jtr_sample_read_now(bool tsc)
{
	return tsc ? jtr_rdtsc() : (uint64_t)jtr_mono_ns();
}

/* jtr_sample_once - one sample in ns, the timer's overhead @ovh (raw)
 * removed; its start in *@t0 and end in *@t1 (raw), the body's return in
 * *@rc (left alone without a body) */
static inline __attribute__((always_inline)) uint64_t
jtr_sample_once(bool tsc, const struct jtr_ticks2ns *t2n, uint64_t ovh, uint64_t spins, bool warm,
		void (*prepare)(void *arg, bool warmup), int (*body)(void *arg), void *arg,
		uint64_t *t0, uint64_t *t1, int *rc)
{
	uint64_t d;

	if (prepare)
		prepare(arg, warm);
	*t0 = jtr_sample_read_begin(tsc);
	if (body)
		*rc = body(arg);
	else
		jtr_null_loop(spins);
	*t1 = jtr_sample_read_end(tsc);
	d = *t1 - *t0;
	d = d > ovh ? d - ovh : 0;
	return tsc ? jtr_ticks2ns(t2n, d) : d;
}

/* jtr_sample_run - warm-up, threshold, then the measured samples of @s.
 * @prepare (may be NULL) runs before each sample, untimed: it gets whether
 * the sample is a warm-up one. @body (NULL: s->spins empty-loop iterations)
 * runs between the reads; a return below 0 ends the run, kept in s->err. */
static inline __attribute__((always_inline)) void
jtr_sample_run(struct jtr_sample *s, bool tsc, void (*prepare)(void *arg, bool warmup),
	       int (*body)(void *arg), void *arg)
{
	const struct jtr_ticks2ns t2n = s->t2n;
	const uint64_t ovh = s->overhead_raw, spins = s->spins, pause = s->pause_raw;
	volatile uint64_t *const at_sample = s->at_sample;
	struct jtr_hist hl = *s->hist, ll = *s->lengths;
	struct jtr_olog lg = *s->log;
	uint64_t t0, t1, ns, i, thr, wmin = UINT64_MAX, ok = 0;
	int rc = 0;

	for (i = 0; i < s->warmup && !jtr_stop; i++) {
		ns = jtr_sample_once(tsc, &t2n, ovh, spins, true, prepare, body, arg, &t0, &t1, &rc);
		if (body && __builtin_expect(rc < 0, 0))
			break;
		ok += body != NULL;
		if (ns < wmin)
			wmin = ns;
		while (jtr_sample_read_now(tsc) - t1 < pause)
			;
	}
	s->warm_min_ns = wmin == UINT64_MAX ? 0 : wmin;
	thr = s->threshold_ns ? s->threshold_ns : jtr_default_threshold_ns(s->warm_min_ns);
	s->threshold_ns = thr;
	s->start_raw = jtr_sample_read_now(tsc);
	for (i = 0; i < s->samples && rc == 0; i++) {
		ns = jtr_sample_once(tsc, &t2n, ovh, spins, false, prepare, body, arg, &t0, &t1, &rc);
		if (body && __builtin_expect(rc < 0, 0))
			break;
		ok += body != NULL;
		jtr_hist_record(&hl, ns);
		if (__builtin_expect(ns > thr, 0)) {
			jtr_olog_add(&lg, t0, ns);
			jtr_hist_record(&ll, ns);
		}
		if (__builtin_expect((i & 4095) == 0, 0)) {
			*at_sample = i;
			if (jtr_stop)
				break;
		}
		while (jtr_sample_read_now(tsc) - t1 < pause)
			;
	}
	s->end_raw = tsc ? jtr_rdtsc_ordered() : (uint64_t)jtr_mono_ns();
	s->partial = i < s->samples;
	s->bodies = ok;
	s->err = rc;
	*s->hist = hl;
	*s->lengths = ll;
	*s->log = lg;
}

#endif
