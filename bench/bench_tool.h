/* SPDX-License-Identifier: GPL-2.0-only */
/* bench_tool.h - what bench/cacheline_rtt.c and bench/memcpy_bw.c share: a
 * one-line usage error (exit 2), option values through lib/jtr_cli's
 * parsers, pinning with a clear message, and the spin hint.
 */
#ifndef JTR_BENCH_TOOL_H
#define JTR_BENCH_TOOL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <getopt.h>

#include "jtr_cli.h"
#include "jtr_clock.h"
#include "jtr_cpu.h"
#include "jtr_hist.h"

/* bench_usage_error - "PROG: message" on stderr, exit 2 */
__attribute__((format(printf, 2, 3), noreturn))
static inline void bench_usage_error(const char *prog, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* bench_opt_cpu - an online CPU number, or exit 2 */
static inline int bench_opt_cpu(const char *prog, const char *opt, const char *arg)
{
	struct jtr_err e;
	long long v;

	jtr_err_clear(&e);
	if (jtr_parse_int(arg, 0, CPU_SETSIZE - 1, &v, &e) < 0 || jtr_cpu_check((int)v, &e) < 0)
		bench_usage_error(prog, "%s %s: %s", opt, arg, e.msg);
	return (int)v;
}

/* bench_opt_count - a count in [min, max] (K, M, G suffixes), or exit 2 */
static inline uint64_t bench_opt_count(const char *prog, const char *opt, const char *arg,
				       uint64_t min, uint64_t max)
{
	struct jtr_err e;
	uint64_t v;

	jtr_err_clear(&e);
	if (jtr_parse_count(arg, min, max, &v, &e) < 0)
		bench_usage_error(prog, "%s %s: %s", opt, arg, e.msg);
	return v;
}

/* bench_pin - pin the calling thread to @cpu, or exit 1 */
static inline void bench_pin(const char *prog, int cpu)
{
	int rc = jtr_pin_self(cpu);

	if (rc < 0) {
		fprintf(stderr, "%s: cannot pin to CPU %d: %s\n", prog, cpu, strerror(-rc));
		exit(1);
	}
}

/* bench_setup - after the options: no stray arguments, two different CPUs,
 * the TSC's rate and its converter, a histogram; exits 2 or 1 on failure */
static inline void bench_setup(const char *prog, int argc, char **argv, int cpu_a, int cpu_b,
			       double *hz, struct jtr_ticks2ns *t2n, struct jtr_hist *h)
{
	if (optind < argc)
		bench_usage_error(prog, "%s: takes no arguments; see --help", argv[optind]);
	if (cpu_a == cpu_b)
		bench_usage_error(prog, "-a %d -b %d: give two different CPUs", cpu_a, cpu_b);
	if (jtr_tsc_calibrate(100000000ULL, hz) < 0) {
		fprintf(stderr, "%s: needs an invariant TSC\n", prog);
		exit(1);
	}
	jtr_ticks2ns_init(t2n, *hz);
	if (jtr_hist_init(h, 0.01) < 0) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(1);
	}
}

/* bench_relax - the spin hint (pause), only where asked for */
static inline void bench_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

#endif
