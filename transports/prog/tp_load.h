/* SPDX-License-Identifier: GPL-2.0-only */
/* tp_load.h - the load shape of jtr ping and jtr pub: how long the messages
 * are, how many or for how long, how fast, in what bursts, after what
 * warm-up. One struct with its options (-n, -d, -r, -m, -w, --warmup-rate,
 * --ticks, --spin), its checks, its lines of summary.txt's inputs and the schedule
 * it makes (when each message is due). Like tp_prog.h, these print and exit.
 */
#ifndef JTR_TP_LOAD_H
#define JTR_TP_LOAD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "jtr_probe.h"

struct tp_load {
	uint32_t len;		/* -m: message length, header included */
	uint64_t count;		/* -n: measured messages (-d: what the program makes of it) */
	uint64_t duration_ns;	/* -d: send for this long instead (0: -n gives the count) */
	uint64_t steady_ns;	/* --steady: -d is the start-up and this (0: not given) */
	uint64_t rate_hz;	/* -r: messages a second (0: max, no pacing) */
	uint64_t warmup;	/* -w: messages sent first, not measured */
	uint64_t warm_rate_hz;	/* --warmup-rate (default: -r's; 0: max) */
	uint64_t ticks;		/* --ticks: bursts a second (0: evenly spaced) */
	bool spin;		/* --spin: busy-wait all the way to each send */
	bool count_given;	/* -n was given */
	bool warm_rate_given;	/* --warmup-rate was given */
};

/* tp_load_init - the program's defaults: @count messages after @warmup at
 * @rate_hz, 64 bytes each */
void tp_load_init(struct tp_load *l, uint64_t count, uint64_t warmup, uint64_t rate_hz);

/* tp_load_opt - handle a load option (-n, -d, -r, -m, -w, TP_OPT_WARMUP_RATE,
 * TP_OPT_TICKS, TP_OPT_STEADY, TP_OPT_SPIN); false if @opt is not one. A program takes
 * those its getopt strings name. */
bool tp_load_opt(struct jtr_probe *p, struct tp_load *l, int opt, const char *arg);

/* The pacing's wait for a send more than TP_SPIN_NS away sleeps
 * (clock_nanosleep, with a timer slack of 1 ns) until TP_SPIN_NS before it and
 * spins the rest: the wake-up from that sleep (p99.9 80 us, max 93 us here:
 * jtr wake, SCHED_OTHER) is spent spinning, not sending late, and a sender at
 * a low rate leaves its CPU to others (a publisher at 2,000/s busy-waited 100 %
 * of a CPU). --spin: busy-wait all the way (from 1/TP_SPIN_NS = 10,000
 * messages a second up both are the same: every wait is a spin). */
#define TP_SPIN_NS 100000

/* tp_nap - sleep until @until_ns (CLOCK_MONOTONIC, jtr_mono_ns's clock), or
 * until a signal has asked the program to stop (jtr_stop) */
void tp_nap(int64_t until_ns);

/* tp_load_check - the options together, or exit 2: -n, -d and --steady one
 * at most, --ticks with a rate it divides; the warm-up's rate defaults to
 * -r's; --steady DUR makes -d the start-up (@startup_ns, the summary's
 * start-up phase) and DUR: the seeds' -steadyStateTime */
void tp_load_check(struct jtr_probe *p, struct tp_load *l, uint64_t startup_ns);

/* tp_load_inputs - summary.txt's inputs lines: message length, messages,
 * rate, warm-up rate (when it differs) and ticks (when given) */
void tp_load_inputs(FILE *f, const struct tp_load *l);

/* tp_load_rate_name - "1000/s" or "max rate", for a summary's head */
const char *tp_load_rate_name(const struct tp_load *l, char *buf, size_t n);

/* tp_load_what - "10000" or, with -d, "30.000 s", for a summary's head */
const char *tp_load_what(const struct tp_load *l, char *buf, size_t n);

/* the schedule: when message i is due, in the units of the clock that times
 * the run (per_s of them a second: ns, or TSC ticks). The warm-up goes at its
 * own rate, one message a step; then with T ticks the measured messages go
 * in T bursts a second, message i in tick floor(i x T / rate) (so every tick
 * has rate/T messages, or one more where it does not divide), else one per
 * 1/rate. A rate of 0 (max) is never waited for: every message is due at
 * once. */
struct tp_sched {
	int64_t t0;		/* the first warm-up message's time */
	int64_t measured_t0;	/* the first measured message's time */
	double warm_per;	/* units between warm-up messages */
	double per;		/* units a tick with ticks, else a message */
	uint64_t ticks, rate, warmup;
};

/* tp_sched_init - @l's schedule from @t0, @per_s units a second */
static inline void tp_sched_init(struct tp_sched *s, const struct tp_load *l, int64_t t0,
				 double per_s)
{
	s->t0 = t0;
	s->warmup = l->warmup;
	s->rate = l->rate_hz;
	s->ticks = l->ticks;
	s->warm_per = l->warm_rate_hz ? per_s / (double)l->warm_rate_hz : 0;
	s->measured_t0 = t0 + (int64_t)((double)l->warmup * s->warm_per);
	s->per = !l->rate_hz ? 0 : per_s / (double)(l->ticks ? l->ticks : l->rate_hz);
}

/* tp_sched_at - message @i's intended send time (inline: the send loops'
 * every message) */
static inline int64_t tp_sched_at(const struct tp_sched *s, uint64_t i)
{
	uint64_t step;

	if (i < s->warmup)
		return s->t0 + (int64_t)((double)i * s->warm_per);
	step = i - s->warmup;
	if (s->ticks)
		step = (uint64_t)((unsigned __int128)step * s->ticks / s->rate);
	return s->measured_t0 + (int64_t)((double)step * s->per);
}

#endif
