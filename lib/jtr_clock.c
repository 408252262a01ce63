// SPDX-License-Identifier: GPL-2.0-only
/* jtr_clock.c - TSC calibration, conversions and clock costs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "jtr_clock.h"

/* jtr_tsc_invariant - CPUID says the TSC ticks at a constant rate, always */
bool jtr_tsc_invariant(struct jtr_err *why)
{
#if JTR_HAVE_TSC
	unsigned int a, b, c, d;

	if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007) {
		jtr_err_set(why, -ENODEV, "the CPU does not report whether its TSC is invariant");
		return false;
	}
	__get_cpuid(0x80000007, &a, &b, &c, &d);
	if (!(d & (1U << 8))) {
		jtr_err_set(why, -ENODEV,
			    "the TSC is not invariant (CPUID 80000007h EDX bit 8 is clear): "
			    "its rate may follow the CPU frequency or stop in idle states");
		return false;
	}
	return true;
#else
	jtr_err_set(why, -ENODEV, "this CPU architecture has no TSC");
	return false;
#endif
}

/* jtr_tsc_usable - invariant TSC present and not disabled by JTR_NO_TSC */
bool jtr_tsc_usable(struct jtr_err *why)
{
	const char *env = getenv("JTR_NO_TSC");

	if (env && *env && strcmp(env, "0") != 0) {
		jtr_err_set(why, -ENODEV, "JTR_NO_TSC=%s is set in the environment", env);
		return false;
	}
	return jtr_tsc_invariant(why);
}

/* jtr_tsc_pair_take - best of @tries brackets around a clock read */
void jtr_tsc_pair_take(clockid_t clk, int tries, struct jtr_tsc_pair *p)
{
	int i;

	p->window_ticks = UINT64_MAX;
	p->tsc = 0;
	p->ns = 0;
	for (i = 0; i < tries; i++) {
		uint64_t t0 = jtr_rdtsc_ordered();
		int64_t ns = jtr_clock_ns(clk);
		uint64_t t1 = jtr_rdtsc_ordered();

		if (t1 - t0 < p->window_ticks) {
			p->window_ticks = t1 - t0;
			p->tsc = t0 + (t1 - t0) / 2;
			p->ns = ns;
		}
	}
}

/* jtr_clock_pair - @clk at a CLOCK_MONOTONIC instant: the narrowest bracket */
int64_t jtr_clock_pair(clockid_t clk, int tries, int64_t *mono)
{
	int64_t best = INT64_MAX, ns = 0;

	for (int i = 0; i < tries || best == INT64_MAX; i++) {
		int64_t a = jtr_mono_ns();
		int64_t c = jtr_clock_ns(clk);
		int64_t b = jtr_mono_ns();

		if (b - a < best) {
			best = b - a;
			*mono = a + (b - a) / 2;
			ns = c;
		}
	}
	return ns;
}

/* jtr_tsc_hz_from_pairs - frequency implied by two pairs */
double jtr_tsc_hz_from_pairs(const struct jtr_tsc_pair *a, const struct jtr_tsc_pair *b)
{
	if (b->ns <= a->ns || b->tsc <= a->tsc)
		return -1.0;
	return (double)(b->tsc - a->tsc) * 1e9 / (double)(b->ns - a->ns);
}

/* jtr_tsc_calibrate - TSC Hz against CLOCK_MONOTONIC_RAW over @window_ns */
int jtr_tsc_calibrate(uint64_t window_ns, double *hz)
{
	struct jtr_tsc_pair a, b;
	struct timespec ts = {
		.tv_sec = (time_t)(window_ns / 1000000000ULL),
		.tv_nsec = (long)(window_ns % 1000000000ULL),
	};
	double f;

	if (!JTR_HAVE_TSC)
		return -ENODEV;
	jtr_tsc_pair_take(CLOCK_MONOTONIC_RAW, 64, &a);
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
	jtr_tsc_pair_take(CLOCK_MONOTONIC_RAW, 64, &b);
	f = jtr_tsc_hz_from_pairs(&a, &b);
	if (f <= 0)
		return -EIO;
	*hz = f;
	return 0;
}

/* jtr_ticks2ns_init - fixed-point factor for @hz */
void jtr_ticks2ns_init(struct jtr_ticks2ns *c, double hz)
{
	/* 1e9 / hz in 16.48 fixed point, rounded to nearest (long double keeps
	 * the 64-bit mantissa the factor needs) */
	c->mult = hz > 0 ? (uint64_t)(1e9L * 281474976710656.0L / (long double)hz + 0.5L) : 0;
	c->mult32 = hz > 0 ? (uint64_t)(1e9L * 4294967296.0L / (long double)hz + 0.5L) : 0;
	c->fast_max = c->mult32 ? UINT64_MAX / c->mult32 : 0;
}

/* jtr_ns2ticks - ns to ticks at @hz */
uint64_t jtr_ns2ticks(double hz, uint64_t ns)
{
	long double t = (long double)ns * (long double)hz / 1e9L;

	return t >= 18446744073709551615.0L ? UINT64_MAX : (uint64_t)t;
}

/* jtr_tsc_map_ns - CLOCK_MONOTONIC ns of @tsc on the line through the pairs */
int64_t jtr_tsc_map_ns(const struct jtr_tsc_map *m, uint64_t tsc)
{
	long double dt = (long double)(int64_t)(tsc - m->a.tsc);
	long double span_t = (long double)(m->b.tsc - m->a.tsc);
	long double span_ns = (long double)(m->b.ns - m->a.ns);
	long double off;

	if (span_t <= 0)
		return m->a.ns;
	off = dt * span_ns / span_t;
	return m->a.ns + (int64_t)(off < 0 ? off - 0.5L : off + 0.5L);
}

#define COST_READS 20000
#define COST_REPEATS 5

/* loop_cost_ticks - min over repeats of the ticks per call of @what */
#define LOOP_COST_TICKS(expr, out) do {					\
	uint64_t best_ = UINT64_MAX;					\
	for (int r_ = 0; r_ < COST_REPEATS; r_++) {			\
		uint64_t t0_ = jtr_tsc_begin();				\
		for (int i_ = 0; i_ < COST_READS; i_++)			\
			(void)(expr);					\
		uint64_t t1_ = jtr_tsc_end();				\
		if (t1_ - t0_ < best_)					\
			best_ = t1_ - t0_;				\
	}								\
	(out) = (double)best_ / COST_READS;				\
} while (0)

/* jtr_clock_measure_costs - fill @c */
void jtr_clock_measure_costs(double hz, struct jtr_clock_costs *c)
{
	int64_t best, d;
	double ticks;
	int r, i;

	memset(c, 0, sizeof(*c));

	/* clock_gettime: jtr_null's method, 1000 calls timed by the clock itself */
	best = INT64_MAX;
	for (r = 0; r < 20; r++) {
		int64_t a = jtr_mono_ns(), b = a;

		for (i = 0; i < 1000; i++)
			b = jtr_mono_ns();
		d = (b - a) / 1001;
		if (d < best)
			best = d;
	}
	c->gettime_ns = (double)best;

	best = INT64_MAX;
	for (i = 0; i < 1000; i++) {
		int64_t a = jtr_mono_ns();
		int64_t b = jtr_mono_ns();

		if (b - a < best)
			best = b - a;
	}
	c->gettime_region_ns = (double)best;

	if (hz <= 0 || !JTR_HAVE_TSC) {
		/* jtr_null's method for the loop cost: clock_gettime around it */
		best = INT64_MAX;
		for (r = 0; r < 20; r++) {
			int64_t a = jtr_mono_ns();

			jtr_null_loop(1000);
			d = jtr_mono_ns() - a - (int64_t)c->gettime_region_ns;
			if (d < best)
				best = d;
		}
		c->loops_1000_ns = (double)(best > 0 ? best : 0);
		return;
	}

	LOOP_COST_TICKS(jtr_rdtsc(), ticks);
	c->rdtsc_ns = jtr_ticks_to_ns_f(hz, ticks);
	LOOP_COST_TICKS(jtr_rdtsc_ordered(), ticks);
	c->rdtsc_ordered_ns = jtr_ticks_to_ns_f(hz, ticks);
	LOOP_COST_TICKS(jtr_rdtscp(), ticks);
	c->rdtscp_ns = jtr_ticks_to_ns_f(hz, ticks);

	/* step: the smallest non-zero advance between back-to-back reads */
	c->tsc_step_ticks = UINT64_MAX;
	for (i = 0; i < 100000; i++) {
		uint64_t a = jtr_rdtsc_ordered(), b = jtr_rdtsc_ordered();

		if (b > a && b - a < c->tsc_step_ticks)
			c->tsc_step_ticks = b - a;
	}
	c->tsc_step_ns = jtr_ticks_to_ns_f(hz, (double)c->tsc_step_ticks);

	/* overhead of an empty timed region */
	{
		uint64_t o = UINT64_MAX, l = UINT64_MAX;

		for (i = 0; i < 10000; i++) {
			uint64_t a = jtr_tsc_begin(), b = jtr_tsc_end();

			if (b - a < o)
				o = b - a;
		}
		c->region_overhead_ns = jtr_ticks_to_ns_f(hz, (double)o);
		for (r = 0; r < 200; r++) {
			uint64_t a = jtr_tsc_begin();

			jtr_null_loop(1000);
			uint64_t b = jtr_tsc_end();
			if (b - a < l)
				l = b - a;
		}
		c->loops_1000_ns = jtr_ticks_to_ns_f(hz, (double)(l > o ? l - o : 0));
	}
}
