// SPDX-License-Identifier: GPL-2.0-only
/* jtr-app-target - the program the tests of `jtr run app` time: a thread
 * (comm "jtr-app-caller") pinned to -c CPU calls on_tick() every -i for -d,
 * (-i 0: back to back), then the program exits. on_tick() runs a fixed number of loop iterations
 * (calibrated at the start to about -w), so whatever takes its CPU from it
 * makes that call longer by as much.
 *
 *   --lib              call lib_tick() of libjtr-target.so instead (the same body)
 *   --busy-wait        wait for each call's time in a loop reading the clock, not
 *                      in clock_nanosleep (a schedule faster than wake-ups allow)
 *   --sleep-every N    every Nth call also sleeps 300 us (clock_nanosleep) inside
 *   --wait-every N     every Nth call also waits on a condition variable (a
 *                      futex) that the thread "jtr-app-waker" signals 300 us later
 *
 * Prints "ready PID" on stdout once the caller runs, "calls N" at the end.
 * With <sys/sdt.h> at build time, the USDT probes jtr_target:tick_start and
 * jtr_target:tick_end fire just before and after each call.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "target.h"

/* USDT probes around each call (jtr run app --usdt
 * jtr-app-target:jtr_target:tick_start,tick_end), where the build has
 * <sys/sdt.h> (systemtap-sdt-dev) */
#if __has_include(<sys/sdt.h>)
#include <sys/sdt.h>
#define TICK_PROBE(name, n) DTRACE_PROBE1(jtr_target, name, n)
#else
#define TICK_PROBE(name, n) do { (void)(n); } while (0)
#endif

static int cpu = -1, use_lib, sleep_every, wait_every, busy_wait;
static double duration_s = 3, interval_us = 1000, work_us = 20;
static uint64_t iters;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int waiting, signalled, done;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* block - what on_tick does besides its loop on call @n */
static void block(uint64_t n)
{
	if (sleep_every && n % (uint64_t)sleep_every == 0) {
		struct timespec ts = { 0, 300000 };

		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	}
	if (wait_every && n % (uint64_t)wait_every == 0) {
		pthread_mutex_lock(&mu);
		waiting = 1;
		signalled = 0;
		pthread_cond_broadcast(&cv);
		while (!signalled)
			pthread_cond_wait(&cv, &mu);
		waiting = 0;
		pthread_mutex_unlock(&mu);
	}
}

__attribute__((noinline)) void on_tick(uint64_t n)
{
	jtr_target_spin(iters);
	block(n);
}

/* waker - signals the caller 300 us after it began to wait */
static void *waker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "jtr-app-waker");
	pthread_mutex_lock(&mu);
	while (!done) {
		while (!waiting && !done)
			pthread_cond_wait(&cv, &mu);
		if (done)
			break;
		pthread_mutex_unlock(&mu);
		usleep(300);
		pthread_mutex_lock(&mu);
		signalled = 1;
		waiting = 0;
		pthread_cond_broadcast(&cv);
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void *caller(void *arg)
{
	uint64_t n = 0, next, end;

	(void)arg;
	pthread_setname_np(pthread_self(), "jtr-app-caller");
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) < 0) {
			perror("jtr-app-target: sched_setaffinity");
			exit(1);
		}
	}
	/* about work_us of loop iterations */
	uint64_t t0 = now_ns();

	jtr_target_spin(1000000);
	iters = (uint64_t)(work_us * 1000.0 * 1000000.0 / (double)(now_ns() - t0 + 1));
	printf("ready %d\n", getpid());
	fflush(stdout);
	next = now_ns();
	end = next + (uint64_t)(duration_s * 1e9);
	while (interval_us > 0 ? next < end : now_ns() < end) {
		struct timespec ts = { (time_t)(next / 1000000000ULL), (long)(next % 1000000000ULL) };

		if (interval_us > 0 && busy_wait)
			while (now_ns() < next)
				;
		else if (interval_us > 0)	/* -i 0: back to back */
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		n++;
		TICK_PROBE(tick_start, n);
		if (use_lib)
			lib_tick(n, iters, block);
		else
			on_tick(n);
		TICK_PROBE(tick_end, n);
		next += (uint64_t)(interval_us * 1000.0);
	}
	printf("calls %llu\n", (unsigned long long)n);
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "lib", no_argument, NULL, 'l' },
		{ "busy-wait", no_argument, NULL, 'b' },
		{ "sleep-every", required_argument, NULL, 's' },
		{ "wait-every", required_argument, NULL, 'W' },
		{ NULL, 0, NULL, 0 },
	};
	pthread_t c, w;
	int opt;

	while ((opt = getopt_long(argc, argv, "c:d:i:w:", opts, NULL)) != -1) {
		switch (opt) {
		case 'c': cpu = atoi(optarg); break;
		case 'd': duration_s = atof(optarg); break;
		case 'i': interval_us = atof(optarg); break;
		case 'w': work_us = atof(optarg); break;
		case 'l': use_lib = 1; break;
		case 'b': busy_wait = 1; break;
		case 's': sleep_every = atoi(optarg); break;
		case 'W': wait_every = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: jtr-app-target [-c CPU] [-d S] [-i US] [-w US] [--lib] "
				"[--busy-wait] [--sleep-every N] [--wait-every N]\n");
			return 2;
		}
	}
	if (wait_every)
		pthread_create(&w, NULL, waker, NULL);
	pthread_create(&c, NULL, caller, NULL);
	pthread_join(c, NULL);
	if (wait_every) {
		pthread_mutex_lock(&mu);
		done = 1;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
		pthread_join(w, NULL);
	}
	return 0;
}
