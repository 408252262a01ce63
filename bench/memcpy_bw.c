// SPDX-License-Identifier: GPL-2.0-only
/* memcpy_bw.c - memcpy bandwidth from one CPU to another: the ceiling for
 * a shared-memory transport between them.
 *
 * A producer pinned to -a copies 100 KB blocks (-s) from a private source
 * into the slots of a shared ring (-k slots, default 4, so it can fill one
 * slot while the consumer empties another); the consumer pinned to -b copies
 * each block out into a private buffer, then hands the slot back. One
 * handshake per block each way: the producer's sequence number and the
 * consumer's, each on a line of its own. Bandwidth is the bytes the consumer
 * copied out over the time from its first block's arrival to its last
 * block's copy end; each block's time at the consumer (wait plus copy) also
 * goes into a jtr_hist. Prints JSON.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>

#include "bench_tool.h"
#include "jtr_clock.h"
#include "jtr_hist.h"
#include "jtr_json.h"
#include "jtr_result.h"

#define PROG "memcpy_bw"
#define WARMUP 200ULL

static const char usage_text[] =
"Usage: memcpy_bw [-a CPU] [-b CPU] [-n BLOCKS] [-s BYTES] [-k SLOTS]\n"
"\n"
"Copy blocks from a producer on one CPU to a consumer on another through a\n"
"shared ring of block-sized slots (memcpy in, memcpy out, one handshake per\n"
"block) and print the bandwidth and each block's time at the consumer as JSON.\n"
"\n"
"  -a CPU        the producer's CPU (default 0)\n"
"  -b CPU        the consumer's CPU, which times the blocks (default 1)\n"
"  -n BLOCKS     measured blocks (default 20K; K, M, G suffixes), after 200\n"
"                unmeasured ones\n"
"  -s BYTES      block size (default 100K = 102400; K, M, G are x1024)\n"
"  -k SLOTS      blocks the ring holds (default 4, at least 2)\n"
"  -h, --help    this text\n"
"\n"
"Example:\n"
"  build/bench/memcpy_bw -a 0 -b 1 -n 10K -s 100K\n";

/* one sequence number, alone on its 128 bytes */
struct seqline {
	volatile uint64_t v __attribute__((aligned(128)));
	char pad[120];
};

struct copy {
	struct seqline produced;	/* blocks written (producer) */
	struct seqline consumed;	/* blocks copied out (consumer) */
	unsigned char *slots, *src, *dst;
	size_t block;
	uint64_t nslots, total;
	int cpu;			/* the producer's */
};

/* producer - fill the next free slot from the private source, publish it */
static void *producer(void *arg)
{
	struct copy *c = arg;

	bench_pin(PROG, c->cpu);
	for (uint64_t i = 0; i < c->total; i++) {
		while (i - __atomic_load_n(&c->consumed.v, __ATOMIC_ACQUIRE) >= c->nslots)
			bench_relax();
		/* a different first word per block, so no copy is of identical data */
		*(uint64_t *)c->src = i;
		memcpy(c->slots + (i % c->nslots) * c->block, c->src, c->block);
		__atomic_store_n(&c->produced.v, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* consume - the timed side: wait for each block, copy it out, hand it back;
 * returns the ticks from the first measured block's arrival to the last copy */
static uint64_t consume(struct copy *c, struct jtr_hist *h, const struct jtr_ticks2ns *t2n,
			uint64_t *check)
{
	struct jtr_hist loc = *h;
	uint64_t prev = 0, first = 0, sum = 0;

	for (uint64_t i = 0; i < c->total; i++) {
		while (__atomic_load_n(&c->produced.v, __ATOMIC_ACQUIRE) <= i)
			bench_relax();
		if (i == WARMUP)
			first = prev = jtr_rdtsc_ordered();
		memcpy(c->dst, c->slots + (i % c->nslots) * c->block, c->block);
		sum += *(volatile uint64_t *)c->dst;
		__atomic_store_n(&c->consumed.v, i + 1, __ATOMIC_RELEASE);
		if (i >= WARMUP) {
			uint64_t now = jtr_rdtsc_ordered();

			jtr_hist_record(&loc, jtr_ticks2ns(t2n, now - prev));
			prev = now;
		}
	}
	*h = loc;
	*check = sum;
	return prev - first;
}

/* map - anonymous memory, touched (shared between the threads of one process:
 * what crosses CPUs is the cache lines, as between processes) */
static unsigned char *map(size_t len)
{
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		       -1, 0);

	if (m == MAP_FAILED) {
		fprintf(stderr, "%s: cannot map %zu bytes: %s\n", PROG, len, strerror(errno));
		exit(1);
	}
	memset(m, 1, len);
	return m;
}

int main(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct copy c = { .block = 102400, .nslots = 4 };
	struct jtr_ticks2ns t2n;
	struct jtr_hist h;
	struct jtr_json j;
	struct jtr_err e;
	pthread_t th;
	int opt, cpu_a = 0, cpu_b = 1;
	uint64_t count = 20000, ticks, check, v;
	double hz, secs;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "a:b:n:s:k:h", long_opts, NULL)) != -1) {
		switch (opt) {
		case 'a': cpu_a = bench_opt_cpu(PROG, "-a", optarg); break;
		case 'b': cpu_b = bench_opt_cpu(PROG, "-b", optarg); break;
		case 'n': count = bench_opt_count(PROG, "-n", optarg, 1, 1ULL << 32); break;
		case 's':
			jtr_err_clear(&e);
			if (jtr_parse_size(optarg, 64, 1ULL << 30, &v, &e) < 0)
				bench_usage_error(PROG, "-s %s: %s", optarg, e.msg);
			c.block = (size_t)v;
			break;
		case 'k': c.nslots = bench_opt_count(PROG, "-k", optarg, 2, 1024); break;
		case 'h': fputs(usage_text, stdout); return 0;
		default:
			bench_usage_error(PROG, "%s: unknown option or missing value; see --help",
					  argv[optind - 1]);
		}
	}
	bench_setup(PROG, argc, argv, cpu_a, cpu_b, &hz, &t2n, &h);
	c.total = WARMUP + count;
	c.cpu = cpu_a;
	c.slots = map(c.nslots * c.block);
	c.src = map(c.block);
	c.dst = map(c.block);

	/* the producer on its CPU, the timed consumer on this thread */
	bench_pin(PROG, cpu_b);
	if (pthread_create(&th, NULL, producer, &c) != 0) {
		fprintf(stderr, "%s: cannot start the producer thread\n", PROG);
		return 1;
	}
	ticks = consume(&c, &h, &t2n, &check);
	pthread_join(th, NULL);
	secs = (double)ticks / hz;

	jtr_json_init(&j, stdout);
	jtr_json_obj_begin(&j, NULL);
	jtr_json_str(&j, "tool", PROG);
	jtr_json_int(&j, "cpu_a", cpu_a);
	jtr_json_int(&j, "cpu_b", cpu_b);
	jtr_json_uint(&j, "block_bytes", c.block);
	jtr_json_uint(&j, "slots", c.nslots);
	jtr_json_uint(&j, "blocks", count);
	jtr_json_fixed(&j, "tsc_hz", hz, 0);
	jtr_json_fixed(&j, "seconds", secs, 6);
	jtr_json_fixed(&j, "bytes_per_s", secs > 0 ? (double)count * (double)c.block / secs : 0.0, 0);
	jtr_json_uint(&j, "check", check);
	jtr_json_str(&j, "unit", "ns per block at the consumer");
	jtr_result_write_stats(&j, &h);
	jtr_json_obj_end(&j);
	return jtr_json_finish(&j) < 0 ? 1 : 0;
}
