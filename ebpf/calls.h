/* SPDX-License-Identifier: GPL-2.0-only */
/* calls.h - jtr run app's half of jtr-trace: the timed function's calls
 * (JTR_EV_CALL records) into a series per traced CPU, and the results of a
 * probe (result.json of tool "app", outliers.csv, summary.txt) beside the
 * event log. The attribution then reads them like any probe's.
 */
#ifndef JTR_CALLS_H
#define JTR_CALLS_H
#include <stdint.h>

#include "jtr_series.h"
#include "trace.h"

#define JTR_CALLS_THREADS 64	/* threads told apart per CPU; the rest "other" */
#define JTR_CALLS_WARMUP 100	/* calls per CPU before recording, by default */

/* the calls that entered on one CPU */
struct calls_cpu {
	JTR_SERIES_GROUP;		/* p, cpu, hist, lengths, log, threshold_ns */
	uint64_t warm;			/* warm-up calls seen */
	uint64_t warm_min_ns;		/* their shortest */
	uint64_t migrated;		/* recorded calls that returned on another CPU */
	int64_t first_ns, last_ns;	/* the first recorded call's entry, the last's return */
	uint32_t tid[JTR_CALLS_THREADS];	/* the threads that called, and how often */
	uint64_t ncalls[JTR_CALLS_THREADS];
	int ntids;
};

struct calls {
	struct jtr_probe *p;
	const char *path, *sym;		/* --func (--usdt: "PROVIDER:START,END") */
	bool usdt;
	int pid;			/* --pid; -1: every process */
	uint64_t threshold_opt;		/* 0: the warm-up's rule */
	bool threshold_given;
	uint64_t warmup;
	uint64_t max_outliers;
	struct calls_cpu *cpus;		/* one per traced CPU, in order */
	int n;
	int16_t index[CPU_SETSIZE];	/* a CPU's place in cpus, -1: not traced */
	uint64_t elsewhere;		/* calls that entered on a CPU not traced */
	uint64_t dropped;		/* JTR_EV_CALL records the full ring refused */
};

/* calls_init - a series for each CPU of @cpus; exit 1 when out of memory */
void calls_init(struct calls *c, struct jtr_probe *p, const cpu_set_t *cpus);

/* calls_event - a JTR_EV_CALL record into its entry CPU's series */
void calls_event(struct calls *c, const struct jtr_ev *e);

/* calls_write - summary.txt (and stdout), outliers.csv and result.json of
 * the traced span [@start_ns, @end_ns]; or exit 1 */
void calls_write(struct calls *c, int64_t start_ns, int64_t end_ns);

void calls_free(struct calls *c);

#endif
