// SPDX-License-Identifier: GPL-2.0-only
/* tp_load.c - the load shape's options, checks and inputs lines (tp_load.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "jtr_cli.h"
#include "tp_load.h"
#include "tp_prog.h"

/* tp_load_init - defaults */
void tp_load_init(struct tp_load *l, uint64_t count, uint64_t warmup, uint64_t rate_hz)
{
	*l = (struct tp_load){ .len = 64, .count = count, .warmup = warmup, .rate_hz = rate_hz };
}

/* tp_load_opt - the load options */
bool tp_load_opt(struct jtr_probe *p, struct tp_load *l, int opt, const char *arg)
{
	switch (opt) {
	case JTR_COUNT_C:
		l->count = jtr_opt_count(p, "-n", arg, 1, 1ULL << 40);
		l->count_given = true;
		return true;
	case JTR_DURATION_C:
		l->duration_ns = jtr_opt_duration(p, "-d", arg, JTR_NS_PER_MS, 30 * 86400 * JTR_NS_PER_S);
		return true;
	case JTR_RATE_C: l->rate_hz = tp_prog_rate_opt(p, "-r", arg); return true;
	case JTR_LEN_C: l->len = (uint32_t)jtr_opt_count(p, "-m", arg, TP_HDR_LEN, 1u << 24); return true;
	case 'w': {
		const char *comma = strchr(arg, ',');

		if (comma) {		/* -w LOOPS,RATE, as the tools jtr replaces took it */
			int n = (int)(comma - arg);

			jtr_usage_error(p, "-w %s: the warm-up's count and its rate are two options "
					"here: -w %.*s --warmup-rate %s", arg, n, arg, comma + 1);
		}
		l->warmup = jtr_opt_count(p, "-w", arg, 0, 1ULL << 32);
		return true;
	}
	case TP_OPT_WARMUP_RATE:
		l->warm_rate_hz = tp_prog_rate_opt(p, "--warmup-rate", arg);
		l->warm_rate_given = true;
		return true;
	case TP_OPT_TICKS: l->ticks = jtr_opt_count(p, "--ticks", arg, 1, 1000000); return true;
	case TP_OPT_SPIN: l->spin = true; return true;
	case TP_OPT_STEADY:
		l->steady_ns = jtr_opt_duration(p, "--steady", arg, JTR_NS_PER_MS, 30 * 86400 * JTR_NS_PER_S);
		return true;
	}
	return false;
}

/* tp_load_check - the options together */
void tp_load_check(struct jtr_probe *p, struct tp_load *l, uint64_t startup_ns)
{
	if (!l->warm_rate_given)
		l->warm_rate_hz = l->rate_hz;
	if (l->duration_ns && l->count_given)
		jtr_usage_error(p, "-n and -d both say when to stop: give one (-n COUNT or -d DURATION)");
	if (l->steady_ns && (l->duration_ns || l->count_given))
		jtr_usage_error(p, "--steady and %s both say when to stop: give one (--steady is "
				"the run after the start-up, -d the whole run)",
				l->duration_ns ? "-d" : "-n");
	if (l->steady_ns)
		l->duration_ns = startup_ns + l->steady_ns;
	/* said at run time, not only in --help: the seeds' 24 and 25-byte rows */
	if (l->len < TP_FULL_LEN)
		jtr_warn(p, "%u-byte messages have no room for the intended send time (%u bytes "
			 "do): latency from intended is the latency from the send, and a backlog "
			 "of late sends does not show in it; give -m %u or more to see it", l->len,
			 TP_FULL_LEN, TP_FULL_LEN);
	if (l->ticks && !l->rate_hz)
		jtr_usage_error(p, "--ticks %llu: bursts need a rate to divide (-r RATE; -r max sends "
				"without pacing)", (unsigned long long)l->ticks);
	if (l->ticks > l->rate_hz)
		jtr_usage_error(p, "--ticks %llu: more ticks than the %llu messages a second; give "
				"--ticks at most the rate", (unsigned long long)l->ticks,
				(unsigned long long)l->rate_hz);
	/* the naps end on time: a normal task's timer fires up to 50 us late
	 * by default (its slack); threads started after this inherit it */
	if (!l->spin && (l->rate_hz || l->warm_rate_hz))
		(void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
}

/* tp_nap - the pacing's sleep */
void tp_nap(int64_t until_ns)
{
	const struct timespec ts = { .tv_sec = until_ns / 1000000000,
				     .tv_nsec = until_ns % 1000000000 };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		if (jtr_stop)
			return;
}

/* tp_load_inputs - the load's lines of the inputs block */
void tp_load_inputs(FILE *f, const struct tp_load *l)
{
	tp_prog_input(f, "message length:", "%u bytes", l->len);
	if (l->duration_ns)
		tp_prog_input(f, "messages:", "for %.3f s (+%llu warm-up)", (double)l->duration_ns / 1e9,
			      (unsigned long long)l->warmup);
	else
		tp_prog_input(f, "messages:", "%llu (+%llu warm-up)", (unsigned long long)l->count,
			      (unsigned long long)l->warmup);
	if (l->rate_hz)
		tp_prog_input(f, "rate:", "%llu/s", (unsigned long long)l->rate_hz);
	else
		tp_prog_input(f, "rate:", "max");
	if (l->warm_rate_hz != l->rate_hz)
		tp_prog_input(f, "warm-up rate:", l->warm_rate_hz ? "%llu/s" : "max",
			      (unsigned long long)l->warm_rate_hz);
	if (l->ticks)
		tp_prog_input(f, "ticks:", "%llu/s", (unsigned long long)l->ticks);
	if (l->rate_hz || l->warm_rate_hz)
		tp_prog_input(f, "pacing:", l->spin ? "spin (--spin)" :
			      "sleep, then spin the last %llu us", (unsigned long long)TP_SPIN_NS / 1000);
}

/* tp_load_rate_name - the rate for a summary's head */
const char *tp_load_rate_name(const struct tp_load *l, char *buf, size_t n)
{
	if (l->rate_hz)
		snprintf(buf, n, "%llu/s", (unsigned long long)l->rate_hz);
	else
		snprintf(buf, n, "max rate");
	return buf;
}

/* tp_load_what - the count, or the duration, for a summary's head */
const char *tp_load_what(const struct tp_load *l, char *buf, size_t n)
{
	if (l->duration_ns)
		snprintf(buf, n, "%.3f s", (double)l->duration_ns / 1e9);
	else
		snprintf(buf, n, "%llu", (unsigned long long)l->count);
	return buf;
}
