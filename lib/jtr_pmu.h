/* SPDX-License-Identifier: GPL-2.0-only */
/* jtr_pmu.h - hardware counters around a run: is the CPU stolen or slowed?
 *
 * A stolen CPU shows as gaps (the probes see them); a slowed one (cache and
 * TLB misses, a lower clock) shows as fewer instructions per cycle and more
 * misses per loop. The counters are opened for the calling thread with
 * perf_event_open and read before and after the hot loop, never in it.
 * Where the PMU is missing (many VMs), opening fails and why is kept for
 * one line of the result.
 */
#ifndef JTR_PMU_H
#define JTR_PMU_H

#include <stdbool.h>
#include <stdint.h>

#include "jtr_err.h"

enum jtr_pmu_counter { JTR_PMU_CYCLES, JTR_PMU_INSTRUCTIONS, JTR_PMU_CACHE_MISSES,
		       JTR_PMU_DTLB_MISSES, JTR_PMU_N };

struct jtr_pmu {
	int fd[JTR_PMU_N];		/* -1: not counted */
	uint64_t begin[JTR_PMU_N], end[JTR_PMU_N];
	bool open;			/* at least cycles and instructions */
};

/* what a run's counts mean */
struct jtr_pmu_derived {
	double ipc;			/* instructions per cycle */
	double per_mloop[JTR_PMU_N];	/* counts per million loops */
};

/* jtr_pmu_names - "cycles", "instructions", "cache_misses", "dtlb_load_misses" */
extern const char *const jtr_pmu_names[JTR_PMU_N];

/* jtr_pmu_open - count for the calling thread; -errno and why when the PMU
 * (cycles and instructions at least) cannot be used */
int jtr_pmu_open(struct jtr_pmu *m, struct jtr_err *e);

/* jtr_pmu_begin / jtr_pmu_end - read every counter (outside the hot loop) */
void jtr_pmu_begin(struct jtr_pmu *m);
void jtr_pmu_end(struct jtr_pmu *m);

/* jtr_pmu_close - close what is open */
void jtr_pmu_close(struct jtr_pmu *m);

/* jtr_pmu_derive - IPC and per-million-loop rates from counts and a loop count */
void jtr_pmu_derive(const uint64_t count[JTR_PMU_N], uint64_t loops, struct jtr_pmu_derived *d);

#endif
