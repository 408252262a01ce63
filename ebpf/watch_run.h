/* SPDX-License-Identifier: GPL-2.0-only */
/* watch_run.h - jtr watch's run inside the tracer (jtr-trace --watch): the
 * accounting set up from the options, the application's tasks already
 * running, one state line on stdout every --state-interval, and the dumps
 * (a folder of events.bin, trace.json and outliers.csv that 'jtr attribute'
 * reads) when an interruption lasts --dump-above or more.
 *
 * Beside watch.c, not in it: watch.c is the accounting alone (events in,
 * tables out to the stream it is given; it opens nothing and allocates nothing
 * after its init; tests/test_watch.c feeds it synthetic events), this is what
 * the tracer does with it: /proc, stdout, folders, and the BPF counters.
 */
#ifndef JTR_WATCH_RUN_H
#define JTR_WATCH_RUN_H
#include <stdint.h>

#include "tracer.h"
#include "watch.h"

/* watch_run_init - the accounting of --watch in @w from t->o, and t->watch;
 * stdout is left to the state lines (quiet, no progress); exit 1 when the
 * recorder does not fit in memory */
void watch_run_init(struct tracer *t, struct jtr_watch *w);

/* watch_run_configure - the kernel side set up for --watch before it loads:
 * counting in the kernel, its tables' sizes and settings; without dumps, the
 * programs only a dump's records need are not loaded */
void watch_run_configure(struct tracer *t);

/* watch_run_notice - a record the kernel side sent (an interruption that may
 * trigger a dump) */
void watch_run_notice(struct tracer *t, const struct jtr_ev *e);

/* watch_run_begin - every program is attached at @start_ns: the accounting
 * starts, with the --app tasks already running; the first state line */
void watch_run_begin(struct tracer *t, int64_t start_ns);

/* watch_run_drained - after a drain: the dump that is due, the state line
 * that is due; returns the pause to the next drain: @pause, shortened to
 * --state-interval; without dumps, the time to the next state line */
uint64_t watch_run_drained(struct tracer *t, uint64_t pause);

/* watch_run_stop - the watch ends: nothing more is counted (the programs
 * are detached next) */
void watch_run_stop(struct tracer *t);

/* watch_run_end - every program detached at @end_ns: what is left in the
 * ring buffer, the waits still open, a dump that was due, the last state
 * line */
void watch_run_end(struct tracer *t, int64_t end_ns);

#endif
