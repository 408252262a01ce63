/* SPDX-License-Identifier: GPL-2.0-only */
/* jtr_gate.h - gates for CI and fleets: a limit on the latency a probe
 * measured (--max-latency DUR: each measured CPU's maximum over the run)
 * and on the time it lost (--max-lost PCT: the outliers' time lost, each
 * less one undisturbed sample, over the run's duration: the run's
 * outliers.lost_ns / duration_ns, as jtr ls and jtr run show it), and the
 * JUnit XML report CI servers read (--junit FILE).
 *
 * Library code: it parses, judges and writes; it never prints or exits
 * (lib/jtr_probe.c wires it into a probe's main). The Python front end's
 * jtr run judges and writes the same way (analysis/jtrpy/results/gates.py,
 * formats/junit.py); docs/fleet.md describes both.
 */
#ifndef JTR_GATE_H
#define JTR_GATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "jtr_err.h"
#include "jtr_hist.h"
#include "jtr_json.h"
#include "jtr_result.h"

/* getopt values of the gate options (past the probes' own) */
enum { JTR_OPT_MAX_LATENCY = 350, JTR_OPT_MAX_LOST, JTR_OPT_JUNIT };

/* the long options of the gates, for a probe's option table */
#define JTR_GATE_LONG_OPTS							\
	{ "max-latency", required_argument, NULL, JTR_OPT_MAX_LATENCY },	\
	{ "max-lost", required_argument, NULL, JTR_OPT_MAX_LOST },		\
	{ "junit", required_argument, NULL, JTR_OPT_JUNIT }

/* the gates' lines of a probe's --help; a probe whose sample is a latency,
 * not CPU time (jtr wake), has no --max-lost: JTR_GATE_LATENCY_HELP */
#define JTR_GATE_LATENCY_HELP							\
"      --max-latency DUR    exit 1 when a CPU's largest sample (a gap, a\n"	\
"                           wake-up's latency) exceeds DUR, e.g. 100us\n"	\
"      --junit FILE         write a JUnit XML report for CI (a testcase per\n"	\
"                           gate per CPU; one passing testcase without gates)\n"
#define JTR_GATE_HELP								\
JTR_GATE_LATENCY_HELP								\
"      --max-lost PCT       exit 1 when a CPU lost more than PCT of the time\n"	\
"                           to outliers (e.g. 0.5%)\n"

#define JTR_GATE_MAX_LATENCY_NS (3600ULL * 1000000000ULL)	/* 1h */

/* what the gate options asked for */
struct jtr_gate {
	bool latency;			/* --max-latency given */
	uint64_t max_latency_ns;
	bool lost;			/* --max-lost given */
	double max_lost_pct;
	const char *junit;		/* --junit FILE, or NULL */
};

/* jtr_gate_opt - take getopt's @opt if it is a gate option: 1 (taken into
 * @g), 0 (another option), or -EINVAL / -ERANGE with @e naming the option,
 * the value and the fix. --junit's folder must exist and be writable. */
int jtr_gate_opt(struct jtr_gate *g, int opt, const char *arg, struct jtr_err *e);

/* jtr_gate_any - true when a limit or --junit was given */
bool jtr_gate_any(const struct jtr_gate *g);

/* what a probe measured on one CPU, as the gates read it */
struct jtr_gate_run {
	int cpu;			/* -1: not pinned */
	uint64_t max_ns;		/* the largest latency */
	uint64_t lost_ns;		/* time lost to outliers */
	uint64_t duration_ns;
	uint64_t samples;
};

/* jtr_gate_run_of - what a sampling probe measured on @cpu: the largest
 * sample of @hist, and the time lost as result.json's outliers.lost_ns has
 * it (each of @lengths' outliers, logged in @log, less one undisturbed
 * sample, @base_ns) */
struct jtr_gate_run jtr_gate_run_of(int cpu, const struct jtr_hist *hist,
				    const struct jtr_hist *lengths, const struct jtr_olog *log,
				    uint64_t base_ns, uint64_t duration_ns);

/* one gate on one CPU, judged */
struct jtr_gate_case {
	const char *gate;		/* "max-latency" or "max-lost" */
	int cpu;
	bool measured;			/* false: no sample (then it fails) */
	bool passed;
	double value;			/* ns or percent */
	double limit;
	uint64_t duration_ns;
};

/* jtr_gate_check - judge @n runs: a case per gate given per run, in
 * @cases (room for 2 * @n); returns the number of cases and sets *@failed
 * to those that failed. A value passes when it is at most the limit; a run
 * with no sample fails. */
int jtr_gate_check(const struct jtr_gate *g, const struct jtr_gate_run *runs, int n,
		   struct jtr_gate_case *cases, int *failed);

/* jtr_gate_case_name - "max-latency cpu 1" ("max-latency" unpinned); @buf */
char *jtr_gate_case_name(const struct jtr_gate_case *c, char *buf, size_t n);

/* jtr_gate_detail - the value against the limit: "max 1.25 ms > limit
 * 100us", "0.012 % of the time lost <= limit 0.5 %"; @buf */
char *jtr_gate_detail(const struct jtr_gate_case *c, char *buf, size_t n);

/* jtr_gate_verdict - one line: "max-latency cpu 1: FAILED: max 1.25 ms >
 * limit 100us" or "max-lost cpu 1: passed: 0.012 % <= limit 0.5 %"; @buf */
char *jtr_gate_verdict(const struct jtr_gate_case *c, char *buf, size_t n);

/* jtr_gate_failure_text - a failed case's JUnit failure text, as jtr run
 * writes it: "value: 1.25 ms (1250000 ns), the largest sample of wake on
 * CPU 1 in 10.00 s", "limit: 100us (100000 ns)", "causes: @causes"; @buf */
char *jtr_gate_failure_text(const struct jtr_gate_case *c, const char *quantity,
			    const char *causes, char *buf, size_t n);

/* jtr_gate_json - result.json's "gates" section: the limits, whether all
 * passed and each case; @no_causes says why a failed case names no
 * causes and how to get them (a probe does not trace) */
void jtr_gate_json(struct jtr_json *j, const struct jtr_gate *g, const char *quantity,
		   const struct jtr_gate_case *cases, int n, const char *no_causes);

/* jtr_xml_escape - @s as XML 1.0 text (or, with @attr, an attribute value):
 * & < > " ' as entities, a carriage return (and in an attribute a line end
 * or tab) as a character reference; the control characters XML 1.0 cannot
 * hold, U+FFFE, U+FFFF and bytes that are not UTF-8 as U+FFFD */
void jtr_xml_escape(FILE *f, const char *s, bool attr);

struct jtr_junit_prop {
	const char *name;
	const char *value;
};

struct jtr_junit_case {
	const char *classname;		/* "jtr.wake" */
	const char *name;		/* "max-latency cpu 1" */
	double time_s;
	const char *failure_type;	/* NULL: passed */
	const char *failure_message;	/* one line */
	const char *failure_text;	/* value, limit, causes */
	const char *system_out;		/* NULL: none */
};

struct jtr_junit_suite {
	const char *name;		/* "jtr wake" */
	const char *hostname;
	const char *timestamp;		/* ISO 8601: "2026-11-26T13:48:10+00:00" */
	double time_s;
	const struct jtr_junit_prop *props;
	int nprops;
	const struct jtr_junit_case *cases;
	int ncases;
};

/* jtr_junit_write - @s as a JUnit XML document (<testsuites> holding one
 * <testsuite>, as junit-10.xsd has it) to @f; 0 or -EIO */
int jtr_junit_write(FILE *f, const struct jtr_junit_suite *s);

/* jtr_junit_timestamp - "2026-11-26T13:48:10+00:00" of @sec (UTC); @buf */
char *jtr_junit_timestamp(long long sec, char *buf, size_t n);

#endif
