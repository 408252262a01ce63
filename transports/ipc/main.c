// SPDX-License-Identifier: GPL-2.0-only
/* main.c - jtr ipc: the IPC comparison (ipc.h says what it moves and how).
 * Options, the rows (reader count, then method, then batch size), the run
 * of each (--repeat times), the table and the results folder. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "jtr_cli.h"
#include "ipc.h"

static const char usage_text[] =
"usage: jtr ipc [OPTIONS]\n"
"\n"
"The IPC comparison: move N objects of SIZE bytes in batches of BATCH bytes from\n"
"one writer process to 1 or more reader processes (each reader gets every object)\n"
"through a shared-memory queue (mutex, adaptive mutex with eventfd wake-ups and a\n"
"low-water mark, lockless ring) and loopback TCP (blocking, epoll). Every object\n"
"is checked; a run fails if one is lost, duplicated or corrupted. Prints one row\n"
"per method, reader count and batch size: elapsed time, rate, and how often a\n"
"reader found the queue empty and the writer found it full.\n"
"\n"
"options:\n"
JTR_COUNT_HELP "        objects sent to every reader (default 10M; K, M, G\n"
"                           are x1000: 1G is 1,000,000,000; --objects is the same)\n"
JTR_LEN_HELP "          object size, >= 16 (default 50; --size is the same)\n"
"  -B, --batch LIST         batch sizes in bytes, each one row (default 100K,\n"
"                           i.e. 100000 bytes = 2000 objects of 50 bytes)\n"
"      --sweep              batch sizes 1K,5K,10K,20K,50K,100K,1M\n"
"      --methods LIST       shm-mutex, shm-adaptive, shm-lockless, tcp, tcp-epoll,\n"
"                           or all (the default)\n"
"      --readers LIST       reader counts, each one row (default 1,3: point to\n"
"                           point and one to three; at most 8)\n"
JTR_CPUS_HELP "          pin the writer to the first CPU, readers to the next\n"
"                           ones, round robin (default: no pinning)\n"
"  -Q, --queue SLOTS        shm queue length in batches, a power of two (default\n"
"                           128; fewer when SLOTS x BATCH would pass 64 MiB)\n"
"      --low-water N        shm-mutex, shm-adaptive: a writer that found the queue\n"
"                           full is woken when it has drained to N batches\n"
"                           (default SLOTS/2)\n"
"      --nagle              tcp: leave Nagle's algorithm on (default TCP_NODELAY,\n"
"                           so each batch is handed over when written)\n"
"      --repeat N           run every row N times, one after the other, and give\n"
"                           its elapsed time's average, standard deviation,\n"
"                           minimum and maximum (default 1; at most 100)\n"
"      --timeout DUR        a run with no progress this long fails (default 10s)\n"
JTR_OUTPUT_HELP "         results folder (default results/DATE-HOST-ipc)\n"
JTR_QUIET_HELP "              no table on stdout\n"
"  -h, --help               this text\n"
"\n"
"testing:\n"
"      --pace DUR           the writer sleeps DUR after each batch (readers wait)\n"
"      --reader-pace DUR    each reader sleeps DUR after each batch (the writer waits)\n"
"      --drop-every K       skip every K-th sequence number (the check must fail)\n"
"      --corrupt-every K    spoil the check word of every K-th object (ditto)\n"
"\n"
"A duration is NUMBER[UNIT], UNIT ns, us, ms, s, m or h; a bare number is in\n"
"seconds, but --pace and --reader-pace still read one as ms, with a warning:\n"
"write the unit (2ms).\n"
"\n"
JTR_OLD_HELP " -s BYTES (-m),\n"
"-m LIST of methods (--methods: a -m that is no size), -r LIST (--readers).\n"
"\n"
"Writes DIR/summary.txt (the table) and DIR/result.json (format jtr-ipc/1).\n"
"Ctrl-C, SIGTERM or SIGHUP stops the run in progress, keeps what it moved\n"
"(marked partial; with --repeat the row's figures are those of the repetitions\n"
"that finished) and skips the rest. Exit status: 0; 1 if a check failed or a\n"
"run broke down; 2 for bad options; 130 after a stop signal.\n"
"\n"
"examples:\n"
"  jtr ipc                               10M objects, every method, 1 and 3 readers\n"
"  jtr ipc -n 1G -c 0,1                  1e9 objects, pinned to CPUs 0 and 1\n"
"  jtr ipc --sweep --methods shm-mutex,tcp --readers 3\n"
"                                        batch sizes 1K..1M, one to three\n"
"  jtr ipc -n 100M --readers 1 --repeat 5\n"
"                                        every method 5 times: avg, stdev, min, max\n";

enum {
	OPT_SWEEP = 500, OPT_LOW_WATER, OPT_NAGLE, OPT_TIMEOUT, OPT_PACE, OPT_READER_PACE,
	OPT_DROP_EVERY, OPT_CORRUPT_EVERY, OPT_REPEAT, OPT_METHODS, OPT_READERS, OPT_LEN,
};

static const struct option long_opts[] = {
	JTR_LONG(COUNT),
	{ "objects", required_argument, NULL, JTR_COUNT_C },
	{ JTR_LEN_LONG, required_argument, NULL, OPT_LEN },
	{ "size", required_argument, NULL, OPT_LEN },
	{ "batch", required_argument, NULL, 'B' },
	{ "sweep", no_argument, NULL, OPT_SWEEP },
	{ "methods", required_argument, NULL, OPT_METHODS },
	{ "readers", required_argument, NULL, OPT_READERS },
	JTR_LONG(CPUS),
	{ "queue", required_argument, NULL, 'Q' },
	{ "low-water", required_argument, NULL, OPT_LOW_WATER },
	{ "nagle", no_argument, NULL, OPT_NAGLE },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "repeat", required_argument, NULL, OPT_REPEAT },
	{ "pace", required_argument, NULL, OPT_PACE },
	{ "reader-pace", required_argument, NULL, OPT_READER_PACE },
	{ "drop-every", required_argument, NULL, OPT_DROP_EVERY },
	{ "corrupt-every", required_argument, NULL, OPT_CORRUPT_EVERY },
	JTR_PROBE_LONG_OPTS,
	{ NULL, 0, NULL, 0 },
};

/* parse_list - a comma-separated list of counts into @out */
static int parse_list(struct jtr_probe *p, const char *opt, const char *arg, uint64_t min,
		      uint64_t max, uint32_t *out, int cap)
{
	char item[64];
	const char *s = arg;
	int n = 0;

	while (*s) {
		size_t len = strcspn(s, ",");

		if (n == cap)
			jtr_usage_error(p, "%s %s: at most %d values", opt, arg, cap);
		if (len == 0 || len >= sizeof(item))
			jtr_usage_error(p, "%s %s: use a comma-separated list such as 1,3", opt, arg);
		memcpy(item, s, len);
		item[len] = 0;
		out[n++] = (uint32_t)jtr_opt_count(p, opt, item, min, max);
		s += len;
		if (*s == ',' && *++s == 0)
			jtr_usage_error(p, "%s %s: a list must not end with a comma", opt, arg);
	}
	if (!n)
		jtr_usage_error(p, "%s needs at least one value", opt);
	return n;
}

/* parse_methods - names or all */
static void parse_methods(struct jtr_probe *p, const char *opt, const char *arg, bool *out)
{
	const char *s = arg;

	memset(out, 0, M_COUNT * sizeof(*out));
	while (*s) {
		size_t len = strcspn(s, ",");
		bool found = false;

		if (len == 3 && !strncmp(s, "all", 3)) {
			for (int m = 0; m < M_COUNT; m++)
				out[m] = true;
			found = true;
		}
		for (int m = 0; m < M_COUNT && !found; m++)
			if (strlen(ipc_method_names[m]) == len && !strncmp(s, ipc_method_names[m], len))
				out[m] = found = true;
		if (!found)
			jtr_usage_error(p, "%s %s: unknown method '%.*s'; use shm-mutex, shm-adaptive, "
					"shm-lockless, tcp, tcp-epoll or all", opt, arg, (int)len, s);
		s += len;
		if (*s == ',')
			s++;
	}
	for (int m = 0; m < M_COUNT; m++)
		if (out[m])
			return;
	jtr_usage_error(p, "%s needs at least one method", opt);
}

/* parse_cpus - -c LIST into the config's CPU array */
static void parse_cpus(struct jtr_probe *p, const char *arg, struct ipc_cfg *c)
{
	cpu_set_t set;
	bool none;

	jtr_opt_cpus(p, arg, false, &set, &none);
	jtr_probe_check_cpus(p, "-c", &set);
	c->ncpus = 0;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set))
			c->cpus[c->ncpus++] = cpu;
}

/* is_size - @arg is meant as a size (-m BYTES: it starts with a digit), not
 * as the old -m's methods (names) */
static bool is_size(const char *arg)
{
	return arg[0] >= '0' && arg[0] <= '9';
}

/* parse_readers - --readers LIST (@opt as given) */
static void parse_readers(struct jtr_probe *p, const char *opt, struct ipc_cfg *c)
{
	c->nfanouts = parse_list(p, opt, optarg, 0, 1000, c->fanouts, IPC_MAX_FANOUTS);
	for (int i = 0; i < c->nfanouts; i++)
		if (c->fanouts[i] == 0 || c->fanouts[i] > IPC_MAX_READERS)
			jtr_usage_error(p, "%s %s: %u readers; use 1 to %d (1: point to point, 3: one "
					"to three)", opt, optarg, c->fanouts[i], IPC_MAX_READERS);
}

/* ipc_opt - one option of jtr ipc's own (jtr_probe_common_opt has taken
 * the common ones) */
static void ipc_opt(struct jtr_probe *p, struct ipc_cfg *c, int opt, char **argv)
{
	static const uint32_t sweep[] = { 1000, 5000, 10000, 20000, 50000, 100000, 1000000 };

	switch (opt) {
	case JTR_COUNT_C:
		if (!strcmp(optarg, "0"))
			jtr_usage_error(p, "-n 0: nothing to move; give at least 1 object "
					"(default 10M)");
		c->objects = jtr_opt_count(p, "-n", optarg, 1, 1ULL << 40);
		break;
	case 's':
		jtr_opt_old(p, 's', "-m", "the object size");
		/* fall through */
	case JTR_LEN_C:
	case OPT_LEN:
		if (opt == JTR_LEN_C && !is_size(optarg)) {
			jtr_opt_old(p, 'm', "--methods", "the methods; -m BYTES is the object size");
			parse_methods(p, "-m", optarg, c->methods);
			break;
		}
		c->size = (uint32_t)jtr_opt_count(p, opt == 's' ? "-s" : "-m", optarg, 1, 1u << 20);
		if (c->size < 16)
			jtr_usage_error(p, "%s %s: an object carries an 8-byte sequence number and "
					"an 8-byte check word; use at least 16 bytes",
					opt == 's' ? "-s" : "-m", optarg);
		break;
	case 'B': c->nbatches = parse_list(p, "-B", optarg, 1, 16000000, c->batches, IPC_MAX_BATCHES); break;
	case OPT_SWEEP:
		memcpy(c->batches, sweep, sizeof(sweep));
		c->nbatches = (int)(sizeof(sweep) / sizeof(sweep[0]));
		break;
	case OPT_METHODS: parse_methods(p, "--methods", optarg, c->methods); break;
	case 'r':
		jtr_opt_old(p, 'r', "--readers", "the reader counts");
		/* fall through */
	case OPT_READERS: parse_readers(p, opt == 'r' ? "-r" : "--readers", c); break;
	case JTR_CPUS_C: parse_cpus(p, optarg, c); break;
	case 'Q':
		c->slots = (uint32_t)jtr_opt_count(p, "-Q", optarg, 2, 1u << 16);
		if (c->slots & (c->slots - 1))
			jtr_usage_error(p, "-Q %s: use a power of two, e.g. 64 or 128", optarg);
		break;
	case OPT_LOW_WATER:
		c->low_water = (uint32_t)jtr_opt_count(p, "--low-water", optarg, 0, 1u << 16);
		c->low_water_given = true;
		break;
	case OPT_NAGLE: c->nagle = true; break;
	case OPT_REPEAT:
		if (!strcmp(optarg, "0"))
			jtr_usage_error(p, "--repeat 0: every row runs at least once; give 1 "
					"to %d (default 1)", IPC_MAX_REPEAT);
		c->repeat = (uint32_t)jtr_opt_count(p, "--repeat", optarg, 1, IPC_MAX_REPEAT);
		break;
	case OPT_TIMEOUT:
		c->timeout_ns = jtr_opt_duration(p, "--timeout", optarg, JTR_NS_PER_S / 10,
						 24ULL * 3600 * JTR_NS_PER_S);
		break;
	case OPT_PACE:
		c->pace_ns = jtr_opt_duration_legacy(p, "--pace", optarg, JTR_NS_PER_MS, 0,
						     JTR_NS_PER_S);
		break;
	case OPT_READER_PACE:
		c->reader_pace_ns = jtr_opt_duration_legacy(p, "--reader-pace", optarg,
							    JTR_NS_PER_MS, 0, JTR_NS_PER_S);
		break;
	case OPT_DROP_EVERY:
		c->drop_every = jtr_opt_count(p, "--drop-every", optarg, 2, 1ULL << 40);
		break;
	case OPT_CORRUPT_EVERY:
		c->corrupt_every = jtr_opt_count(p, "--corrupt-every", optarg, 1, 1ULL << 40);
		break;
	default:
		jtr_unknown_option(p, '?', optopt, argv[optind - 1]);
	}
}

/* parse - the options, each alone and then together, or exit 2 */
static void parse(struct jtr_probe *p, struct ipc_cfg *c, int argc, char **argv)
{
	int opt;

	while ((opt = getopt_long(argc, argv, ":" JTR_COUNT_S "s:B:" JTR_LEN_S "r:" JTR_CPUS_S
				  "Q:" JTR_OUTPUT_S JTR_QUIET_S "h", long_opts, NULL)) != -1) {
		if (opt == JTR_FIFO_C)
			jtr_usage_error(p, "--fifo: jtr ipc runs a writer and readers that may share "
					"CPUs, where SCHED_FIFO busy waits can starve one another; it "
					"takes no --fifo");
		if (!jtr_probe_common_opt(p, opt, usage_text, argv))
			ipc_opt(p, c, opt, argv);
	}
	jtr_probe_no_args(p, argc, argv);
	for (int i = 0; i < c->nbatches; i++)
		if (c->batches[i] < c->size)
			jtr_usage_error(p, "-B %u: a batch smaller than one %u-byte object; use at least "
					"%u bytes", c->batches[i], c->size, c->size);
	if (c->low_water_given && c->low_water >= c->slots)
		jtr_usage_error(p, "--low-water %u: must be below the queue length (-Q %u)",
				c->low_water, c->slots);
}

/* make_rows - reader count, then method, then batch size; each c->repeat
 * times (a struct ipc_row per repetition): the rows, their number in @n */
static struct ipc_row *make_rows(struct jtr_probe *p, const struct ipc_cfg *c, int *n)
{
	const uint32_t reps = c->repeat;
	struct ipc_row *rows = calloc((size_t)c->nfanouts * M_COUNT * c->nbatches * reps, sizeof(*rows));

	if (!rows)
		jtr_fatal(p, "out of memory");
	*n = 0;
	for (int f = 0; f < c->nfanouts; f++)
		for (int m = 0; m < M_COUNT; m++)
			for (int b = 0; m < M_COUNT && c->methods[m] && b < c->nbatches; b++) {
				struct ipc_row *g = &rows[(size_t)(*n)++ * reps];

				for (uint32_t k = 0; k < reps; k++) {
					struct ipc_row *w = &g[k];

					w->m = (enum ipc_method)m;
					w->rep = k;
					w->readers = c->fanouts[f];
					w->batch = c->batches[b];
					w->opb = c->batches[b] / c->size;
					w->slots = ipc_queue_slots(c, w->opb * c->size);
					w->low_water = c->low_water_given ?
						(c->low_water < w->slots ? c->low_water : w->slots - 1) :
						w->slots / 2;
				}
			}
	return rows;
}

/* run_rows - the rows one after the other, each line of the table as its
 * row ends: how many rows failed */
static int run_rows(struct jtr_probe *p, const struct ipc_cfg *c, struct ipc_board *board,
		    struct ipc_row *rows, int n)
{
	const uint32_t reps = c->repeat;
	int bad = 0;

	if (!p->quiet) {
		ipc_table_head(stdout, c);
		fflush(stdout);
	}
	jtr_probe_map_begin(p);
	for (int i = 0; i < n && !jtr_stop; i++) {
		struct ipc_row *g = &rows[(size_t)i * reps];
		struct ipc_stats st;

		/* a repetition that fails fails the row: the rest of it is not run */
		for (uint32_t k = 0; k < reps && !jtr_stop && (k == 0 || g[k - 1].ok); k++)
			ipc_run_row(p, c, board, &g[k], (int)(i * reps + k));
		if (!p->quiet) {
			ipc_table_row(stdout, c, g);
			fflush(stdout);
		}
		ipc_row_stats(g, reps, &st);
		bad += !st.ok;
	}
	jtr_probe_map_end(p);
	if (!p->quiet)
		ipc_table_tail(stdout, c, rows, n);
	return bad;
}

int main(int argc, char **argv)
{
	static struct ipc_cfg c = {
		.objects = 10000000, .size = 50, .batches = { 100000 }, .nbatches = 1,
		.fanouts = { 1, 3 }, .nfanouts = 2, .slots = 128, .timeout_ns = 10 * JTR_NS_PER_S,
		.repeat = 1,
	};
	struct jtr_probe p;
	struct ipc_board *board;
	struct ipc_row *rows;
	int n, bad;

	jtr_probe_init(&p, "ipc", argc, argv);
	p.format = IPC_FORMAT;
	for (int m = 0; m < M_COUNT; m++)
		c.methods[m] = true;

	/* 1. options */
	parse(&p, &c, argc, argv);
	/* 2. the rows, and the board the processes count in */
	rows = make_rows(&p, &c, &n);
	board = mmap(NULL, sizeof(*board), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (board == MAP_FAILED)
		jtr_fatal(&p, "out of memory");
	/* 3. privileges, host facts, results folder, calibration */
	jtr_probe_privileged(&p);
	jtr_probe_timebase(&p);
	atexit(ipc_cleanup);
	/* 4. the runs, one after the other */
	bad = run_rows(&p, &c, board, rows, n);
	/* 5. results */
	ipc_write_outputs(&p, &c, rows, n);
	jtr_probe_finish(&p);
	if (bad) {
		char prefix[80];

		snprintf(prefix, sizeof(prefix), "%s: ", p.prog);
		ipc_print_failures(stderr, prefix, &c, rows, n);
	}
	return jtr_probe_exit(&p, bad ? 1 : 0);
}
