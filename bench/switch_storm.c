// SPDX-License-Identifier: GPL-2.0-only
/* switch_storm.c - context switches as fast as one CPU makes them: the load
 * under which make bench measures jtr watch's programs at their highest
 * event rate (bench/watch_bench.py).
 *
 * Two threads (-t) pinned to one CPU (-c) call sched_yield() in a loop for a
 * duration (-d): each call hands the CPU to the other thread, one
 * sched_switch each, the tracer's dearest event. Each thread counts its
 * calls; the sum over the elapsed time is printed as JSON (calls_per_s), with
 * the switches the kernel counted for the threads (voluntary and involuntary,
 * from getrusage) beside it.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/resource.h>

#include "bench_tool.h"
#include "jtr_json.h"

#define PROG "switch_storm"
#define MAX_THREADS 16

static const char usage_text[] =
"Usage: switch_storm [-c CPU] [-d DURATION] [-t THREADS]\n"
"\n"
"Threads pinned to one CPU hand it to each other with sched_yield() for a\n"
"duration: a context switch a call. Prints the calls a second as JSON.\n"
"\n"
"  -c CPU        the CPU (default 1)\n"
"  -d DURATION   how long (default 5s; ms, s suffixes; at most 1h)\n"
"  -t THREADS    threads (default 2, at most 16)\n"
"  -h, --help    this text\n"
"\n"
"Example:\n"
"  build/bench/switch_storm -c 1 -d 5s\n";

struct yielder {
	pthread_t th;
	int cpu;
	uint64_t calls;
	struct rusage ru;
} __attribute__((aligned(128)));

static volatile int stop;

static void *yielder(void *arg)
{
	struct yielder *y = arg;
	uint64_t n = 0;

	bench_pin(PROG, y->cpu);
	while (!stop) {
		sched_yield();
		n++;
	}
	y->calls = n;
	getrusage(RUSAGE_THREAD, &y->ru);
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct yielder ys[MAX_THREADS];
	uint64_t dur_ns = 5 * JTR_NS_PER_S, calls = 0, switches = 0;
	int opt, cpu = 1, nthreads = 2, started = 0;
	struct timespec ts;
	struct jtr_json j;
	struct jtr_err e;
	int64_t t0, t1;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "c:d:t:h", long_opts, NULL)) != -1) {
		switch (opt) {
		case 'c': cpu = bench_opt_cpu(PROG, "-c", optarg); break;
		case 'd':
			jtr_err_clear(&e);
			if (jtr_parse_duration_ns(optarg, JTR_NS_PER_MS, 3600 * JTR_NS_PER_S,
						  &dur_ns, &e) < 0)
				bench_usage_error(PROG, "-d %s: %s", optarg, e.msg);
			break;
		case 't': nthreads = (int)bench_opt_count(PROG, "-t", optarg, 1, MAX_THREADS); break;
		case 'h': fputs(usage_text, stdout); return 0;
		default:
			bench_usage_error(PROG, "%s: unknown option or missing value; see --help",
					  argv[optind - 1]);
		}
	}
	if (optind < argc)
		bench_usage_error(PROG, "%s: takes no arguments; see --help", argv[optind]);

	t0 = jtr_mono_ns();
	for (; started < nthreads; started++) {
		ys[started].cpu = cpu;
		if (pthread_create(&ys[started].th, NULL, yielder, &ys[started]) != 0) {
			fprintf(stderr, "%s: cannot start thread %d\n", PROG, started + 1);
			stop = 1;
			break;
		}
	}
	ts.tv_sec = (time_t)(dur_ns / JTR_NS_PER_S);
	ts.tv_nsec = (long)(dur_ns % JTR_NS_PER_S);
	while (!stop && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	stop = 1;
	for (int i = 0; i < started; i++) {
		pthread_join(ys[i].th, NULL);
		calls += ys[i].calls;
		switches += (uint64_t)ys[i].ru.ru_nvcsw + (uint64_t)ys[i].ru.ru_nivcsw;
	}
	t1 = jtr_mono_ns();
	if (started < nthreads)
		return 1;

	jtr_json_init(&j, stdout);
	jtr_json_obj_begin(&j, NULL);
	jtr_json_str(&j, "tool", PROG);
	jtr_json_int(&j, "cpu", cpu);
	jtr_json_int(&j, "threads", nthreads);
	jtr_json_fixed(&j, "seconds", (double)(t1 - t0) / 1e9, 6);
	jtr_json_uint(&j, "calls", calls);
	jtr_json_uint(&j, "switches", switches);
	jtr_json_fixed(&j, "calls_per_s", (double)calls * 1e9 / (double)(t1 - t0), 0);
	jtr_json_obj_end(&j);
	return jtr_json_finish(&j) < 0 ? 1 : 0;
}
