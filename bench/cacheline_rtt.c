// SPDX-License-Identifier: GPL-2.0-only
/* cacheline_rtt.c - the cache-line round trip between two CPUs: the floor
 * under any shared-memory ping-pong between them.
 *
 * Two threads, pinned to -a and -b, bounce one 64-bit value on a cache line
 * of its own (core-to-core-latency's method): the initiator writes an odd
 * number and waits to see the next even one; the responder waits for the odd
 * number and writes the even one. Each round trip is the line moving to the
 * responder and back. The initiator reads the TSC once per round trip (the
 * difference between consecutive reads: one lfence;rdtsc and one histogram
 * record are inside every sample, about 20 ns here) into a jtr_hist.
 * The waits are plain loads by default (the hardware floor); --pause adds
 * the pause hint to both waits, as spinning transports do. Prints JSON.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>

#include "bench_tool.h"
#include "jtr_clock.h"
#include "jtr_hist.h"
#include "jtr_json.h"
#include "jtr_result.h"

#define PROG "cacheline_rtt"
#define WARMUP 10000ULL

static const char usage_text[] =
"Usage: cacheline_rtt [-a CPU] [-b CPU] [-n COUNT] [--pause]\n"
"\n"
"Bounce one value on a cache line between two pinned threads and print the\n"
"round trip's distribution as JSON (ns; percentiles from a jtr histogram).\n"
"\n"
"  -a CPU        the initiator's CPU, which times the round trips (default 0)\n"
"  -b CPU        the responder's CPU (default 1)\n"
"  -n COUNT      measured round trips (default 2M; K, M, G suffixes), after\n"
"                10K unmeasured ones\n"
"  --pause       spin with the pause hint (default: plain loads)\n"
"  -h, --help    this text\n"
"\n"
"Example:\n"
"  build/bench/cacheline_rtt -a 0 -b 1 -n 1M\n";

/* the bounced line, alone on its 128 bytes (adjacent-line prefetch pairs) */
struct line {
	volatile uint64_t v __attribute__((aligned(128)));
	char pad[120];
};

struct bounce {
	struct line line;
	uint64_t total;		/* warm-up + measured round trips */
	int cpu;		/* the responder's */
	bool pause;
};

/* responder - wait for each odd value, answer with the next even one */
static void *responder(void *arg)
{
	struct bounce *b = arg;

	bench_pin(PROG, b->cpu);
	for (uint64_t i = 1; i <= b->total; i++) {
		while (b->line.v != 2 * i - 1)
			if (b->pause)
				bench_relax();
		b->line.v = 2 * i;
	}
	return NULL;
}

/* initiate - the timed side: write odd, wait for even, one TSC read per trip */
static void initiate(struct bounce *b, struct jtr_hist *h, const struct jtr_ticks2ns *t2n)
{
	struct jtr_hist loc = *h;
	uint64_t prev = jtr_rdtsc_ordered(), now;

	for (uint64_t i = 1; i <= b->total; i++) {
		b->line.v = 2 * i - 1;
		while (b->line.v != 2 * i)
			if (b->pause)
				bench_relax();
		now = jtr_rdtsc_ordered();
		if (i > WARMUP)
			jtr_hist_record(&loc, jtr_ticks2ns(t2n, now - prev));
		prev = now;
	}
	*h = loc;
}

int main(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "pause", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct bounce b;
	struct jtr_ticks2ns t2n;
	struct jtr_hist h;
	struct jtr_json j;
	pthread_t th;
	int opt, cpu_a = 0, cpu_b = 1;
	uint64_t count = 2000000;
	double hz;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "a:b:n:h", long_opts, NULL)) != -1) {
		switch (opt) {
		case 'a': cpu_a = bench_opt_cpu(PROG, "-a", optarg); break;
		case 'b': cpu_b = bench_opt_cpu(PROG, "-b", optarg); break;
		case 'n': count = bench_opt_count(PROG, "-n", optarg, 1, 1ULL << 40); break;
		case 'p': b.pause = true; break;
		case 'h': fputs(usage_text, stdout); return 0;
		default:
			bench_usage_error(PROG, "%s: unknown option or missing value; see --help",
					  argv[optind - 1]);
		}
	}
	bench_setup(PROG, argc, argv, cpu_a, cpu_b, &hz, &t2n, &h);
	b.total = WARMUP + count;
	b.cpu = cpu_b;

	/* the responder first, then the timed side on this thread */
	bench_pin(PROG, cpu_a);
	if (pthread_create(&th, NULL, responder, &b) != 0) {
		fprintf(stderr, "%s: cannot start the responder thread\n", PROG);
		return 1;
	}
	initiate(&b, &h, &t2n);
	pthread_join(th, NULL);

	jtr_json_init(&j, stdout);
	jtr_json_obj_begin(&j, NULL);
	jtr_json_str(&j, "tool", PROG);
	jtr_json_int(&j, "cpu_a", cpu_a);
	jtr_json_int(&j, "cpu_b", cpu_b);
	jtr_json_bool(&j, "pause", b.pause);
	jtr_json_fixed(&j, "tsc_hz", hz, 0);
	jtr_json_str(&j, "unit", "ns per round trip");
	jtr_result_write_stats(&j, &h);
	jtr_json_obj_end(&j);
	return jtr_json_finish(&j) < 0 ? 1 : 0;
}
