/* SPDX-License-Identifier: GPL-2.0-only */
/* jtr_clock.h - timestamps: fenced TSC reads, calibration against
 * CLOCK_MONOTONIC_RAW, TSC -> CLOCK_MONOTONIC conversion, and the costs of
 * reading each clock.
 *
 * jtr has two timebases. "tsc" reads the time-stamp counter directly (a few
 * ns, no kernel involvement) and converts ticks to ns with a calibrated
 * frequency. "clock" calls clock_gettime(CLOCK_MONOTONIC) (the vDSO on most
 * machines). Where the TSC is missing or not invariant, or JTR_NO_TSC=1 is set
 * in the environment, the tsc timebase is unavailable and probes fall back to
 * "clock", saying so.
 */
#ifndef JTR_CLOCK_H
#define JTR_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "jtr_err.h"

enum jtr_timebase {
	JTR_TB_TSC = 1,		/* jtr_null's timebase=1 */
	JTR_TB_CLOCK = 2,	/* jtr_null's timebase=2 */
};

#if defined(__x86_64__) || defined(__i386__)
#define JTR_HAVE_TSC 1

/* jtr_rdtsc - bare rdtsc. May execute before earlier instructions finish
 * and let later ones start first: fine for back-to-back gap loops where only
 * the distance between reads matters, not the exact point in the program. */
static inline uint64_t jtr_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* jtr_rdtsc_ordered - lfence; rdtsc. The lfence waits until every earlier
 * instruction has completed locally, so the read is not hoisted above the
 * code that precedes it (as the kernel's rdtsc_ordered()). The "memory"
 * clobber stops the compiler from moving loads and stores across it. */
static inline uint64_t jtr_rdtsc_ordered(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) : : "memory");
	return ((uint64_t)hi << 32) | lo;
}

/* jtr_tsc_begin - read at the start of a timed region: lfence; rdtsc; lfence.
 * The first lfence keeps earlier work out of the region; the second keeps
 * the region's first instructions from starting before the counter is read. */
static inline uint64_t jtr_tsc_begin(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
	return ((uint64_t)hi << 32) | lo;
}

/* jtr_tsc_end - read at the end of a timed region: rdtscp; lfence. rdtscp
 * waits for every earlier instruction (the region) to execute before it
 * reads; the lfence keeps later instructions from starting before the read.
 * rdtscp also loads IA32_TSC_AUX (the CPU number) into ecx, discarded. */
static inline uint64_t jtr_tsc_end(void)
{
	uint32_t lo, hi, aux;

	__asm__ __volatile__("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux) : : "memory");
	(void)aux;
	return ((uint64_t)hi << 32) | lo;
}

/* jtr_rdtscp - bare rdtscp (waits for earlier instructions; no trailing fence) */
static inline uint64_t jtr_rdtscp(void)
{
	uint32_t lo, hi, aux;

	__asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux) : : "memory");
	(void)aux;
	return ((uint64_t)hi << 32) | lo;
}
#else
#define JTR_HAVE_TSC 0
static inline uint64_t jtr_rdtsc(void) { return 0; }
static inline uint64_t jtr_rdtsc_ordered(void) { return 0; }
static inline uint64_t jtr_tsc_begin(void) { return 0; }
static inline uint64_t jtr_tsc_end(void) { return 0; }
static inline uint64_t jtr_rdtscp(void) { return 0; }
#endif

/* jtr_clock_ns - clock_gettime(@clk) in ns */
static inline int64_t jtr_clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* jtr_mono_ns - CLOCK_MONOTONIC in ns, the clock every jtr log is written in */
static inline int64_t jtr_mono_ns(void)
{
	return jtr_clock_ns(CLOCK_MONOTONIC);
}

/* jtr_clock_pair - @clk's ns at the CLOCK_MONOTONIC instant it stores in
 * *@mono: the narrowest of @tries brackets monotonic / @clk / monotonic, *@mono
 * its midpoint. One pair of reads is skewed by whatever ran between them (a
 * preemption, a stolen vCPU); the narrowest bracket is not. */
int64_t jtr_clock_pair(clockid_t clk, int tries, int64_t *mono);

/* a TSC reading taken as close as possible to a clock reading */
struct jtr_tsc_pair {
	uint64_t tsc;
	int64_t ns;
	uint64_t window_ticks;	/* width of the TSC bracket around the clock read */
};

/* linear map from TSC ticks to a clock's ns, from two pairs */
struct jtr_tsc_map {
	struct jtr_tsc_pair a, b;
};

/* ticks -> ns for durations.
 * mult: 1e9/hz in 16.48 fixed point, used in 128-bit arithmetic; its rounding
 * stays below 1e-14 relative (under 1 ns for an hour of ticks), and 1e9/hz
 * < 2^16 keeps the product in 128 bits.
 * mult32: 1e9/hz in 32.32 fixed point for deltas up to fast_max ticks
 * (UINT64_MAX / mult32: about 4 s at any frequency): one 64-bit multiply and a
 * shift, which is what a hot loop wants on its critical path. Its rounding
 * error is below 1 ns for any delta it is used for. */
struct jtr_ticks2ns {
	uint64_t mult;
	uint64_t mult32;
	uint64_t fast_max;
};

/* jtr_tsc_invariant - CPUID says the TSC ticks at a constant rate, always */
bool jtr_tsc_invariant(struct jtr_err *why);

/* jtr_tsc_usable - invariant TSC present and not disabled by JTR_NO_TSC;
 * fills @why (if not NULL) when it is not */
bool jtr_tsc_usable(struct jtr_err *why);

/* jtr_tsc_pair_take - best of @tries brackets lfence;rdtsc / clock_gettime /
 * lfence;rdtsc: the narrowest bracket wins, its midpoint is the tsc */
void jtr_tsc_pair_take(clockid_t clk, int tries, struct jtr_tsc_pair *p);

/* jtr_tsc_hz_from_pairs - frequency implied by two pairs; -1 if unusable */
double jtr_tsc_hz_from_pairs(const struct jtr_tsc_pair *a, const struct jtr_tsc_pair *b);

/* jtr_tsc_calibrate - TSC Hz against CLOCK_MONOTONIC_RAW over @window_ns
 * (sleeping between two pairs). Returns 0 or -errno. */
int jtr_tsc_calibrate(uint64_t window_ns, double *hz);

/* the window a probe calibrates over: each pair is the best of 64 brackets of
 * a clock read (about 40 ns wide here), so 20 ms bounds the error near 1 ppm
 * (a 1 ms latency within 1 ns); ten calibrations here spread over 0.05 ppm.
 * Every jtr program starts 80 ms sooner than with the 100 ms of before */
#define JTR_TSC_CALIBRATE_NS 20000000ULL

/* jtr_ticks2ns_init - fixed-point factor for @hz */
void jtr_ticks2ns_init(struct jtr_ticks2ns *c, double hz);

/* jtr_ticks2ns - ticks to ns, within a ns for any 64-bit tick count */
static inline uint64_t jtr_ticks2ns(const struct jtr_ticks2ns *c, uint64_t ticks)
{
	if (__builtin_expect(ticks > c->fast_max, 0))
		return (uint64_t)(((unsigned __int128)ticks * c->mult) >> 48);
	return (ticks * c->mult32) >> 32;	/* cannot overflow: ticks <= fast_max */
}

/* jtr_ns2ticks - ns to ticks at @hz (rounded down) */
uint64_t jtr_ns2ticks(double hz, uint64_t ns);

/* jtr_tsc_map_ns - CLOCK_MONOTONIC ns of @tsc on the line through the map's
 * two pairs (interpolates inside, extrapolates outside) */
int64_t jtr_tsc_map_ns(const struct jtr_tsc_map *m, uint64_t tsc);

/* measured costs and steps of this machine's clocks */
struct jtr_clock_costs {
	double rdtsc_ns;		/* bare rdtsc, mean per read */
	double rdtsc_ordered_ns;	/* lfence;rdtsc */
	double rdtscp_ns;		/* rdtscp */
	double gettime_ns;		/* clock_gettime(CLOCK_MONOTONIC), min over repeats */
	double tsc_step_ns;		/* smallest non-zero step between back-to-back reads */
	uint64_t tsc_step_ticks;
	double loops_1000_ns;		/* jtr_null's jtr_1000_loops_cost */
	double region_overhead_ns;	/* jtr_tsc_begin() + jtr_tsc_end() around nothing, min */
	double gettime_region_ns;	/* two clock_gettime() around nothing, min */
};

/* jtr_null_loop - @n iterations of an empty loop that -O2 cannot remove:
 * the empty asm with the counter as an in/out operand makes every iteration
 * an observable step the compiler must keep */
static inline void jtr_null_loop(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		__asm__ __volatile__("" : "+r"(i));
}

/* jtr_unoptimised_loop - @n iterations of `for (i = 0; i < n; i++) {}` as
 * built without optimisation: the counter lives in memory, so each iteration
 * loads, adds and stores it (a store-to-load round trip, ~5-6 cycles, where
 * jtr_null_loop takes ~1); jtr null --unoptimised-loop */
static inline void jtr_unoptimised_loop(uint64_t n)
{
	volatile uint64_t i;

	for (i = 0; i < n; i++)
		;
}

/* jtr_clock_measure_costs - fill @c; @hz may be 0 without a usable TSC (the
 * tsc fields are then 0) */
void jtr_clock_measure_costs(double hz, struct jtr_clock_costs *c);

/* jtr_ticks_to_ns_f - ticks to ns as a double */
static inline double jtr_ticks_to_ns_f(double hz, double ticks)
{
	return hz > 0 ? ticks * 1e9 / hz : 0.0;
}

#endif
