/* SPDX-License-Identifier: GPL-2.0-only */
/* jtr_probe.h - what every measuring program's main() does, written once:
 * error exits, option helpers, the privileged start, the timebase and its
 * calibration, worker threads on pre-allocated stacks, progress, Ctrl-C,
 * and the common head of result.json.
 *
 * Unlike the rest of lib/, functions here print and exit: they are for
 * main() and nothing else.
 */
#ifndef JTR_PROBE_H
#define JTR_PROBE_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "jtr_clock.h"
#include "jtr_cpu.h"
#include "jtr_host.h"
#include "jtr_json.h"
#include "jtr_opts.h"
#include "jtr_out.h"
#include "jtr_result.h"

/* the version comes from the VERSION file at the top of the tree, through
 * the Makefile, so the C programs and the Python front end never differ */
#ifndef JTR_VERSION
#error "JTR_VERSION is not defined: build with make, which reads it from the VERSION file"
#endif
#define JTR_MAX_WARNINGS 32
/* the most old letters (jtr_opts.h) one program takes */
#define JTR_MAX_OLD 8

/* the exit status of a run a signal stopped: 128 + SIGINT, as a shell's */
#define JTR_EXIT_INTERRUPTED 130

/* set by SIGINT/SIGTERM; hot loops read it and stop */
extern volatile sig_atomic_t jtr_stop;

struct jtr_probe {
	char prog[64];			/* "jtr null" */
	const char *tool;		/* "null" */
	const char *format;		/* result.json's format; NULL: JTR_RESULT_FORMAT */
	int argc;
	char **argv;
	bool quiet;
	bool results_on_stderr;		/* "results: DIR/" on stderr: stdout is another
					 * tool's lines only (--legacy-output=um_lat) */
	bool progress;			/* stderr is a terminal and not quiet */
	bool progress_lines;		/* progress as whole lines, not one line
					 * redrawn: another program writes to the
					 * same terminal */
	bool sleeps;			/* the measuring threads sleep between samples:
					 * RT throttling cannot stop them (no warning) */
	const char *shrink;		/* what maps less, for the memory-not-locked
					 * warning; NULL: "lower --max-outliers" */

	/* common options */
	int fifo_prio;			/* 0: none */
	enum jtr_timebase tb_wanted;
	const char *out_opt;		/* -o, untouched until privileges are gone */
	double hist_error;

	/* state */
	struct jtr_priv priv;
	struct jtr_host host;
	struct jtr_outdir out;
	struct jtr_tb tb;
	struct jtr_clock_costs costs;
	char tb_fallback[JTR_ERR_MAX];	/* why tsc was not used, or "" */
	bool locked;			/* mlockall succeeded */
	uint64_t mapped;		/* bytes mapped when it was tried (what it locks) */
	uint64_t memlock_limit;		/* the user's RLIMIT_MEMLOCK; UINT64_MAX: none */
	bool partial;
	bool written;			/* the results folder is in place */
	int stdout_err;			/* errno of a failed flush of stdout, 0 */
	struct timespec started_rt, ended_rt;
	int64_t started_mono, ended_mono;
	char *warnings[JTR_MAX_WARNINGS];
	int nwarnings;
	struct jtr_old_letter {		/* old letters given (jtr_opt_old) */
		char letter;
		const char *now, *what;
	} old[JTR_MAX_OLD];
	int nold;
};

/* jtr_probe_init - name the program, look at its privileges, set defaults */
void jtr_probe_init(struct jtr_probe *p, const char *tool, int argc, char **argv);

/* jtr_usage_error - "PROG: msg" on stderr, exit 2 (bad input) */
__attribute__((noreturn, format(printf, 2, 3)))
void jtr_usage_error(struct jtr_probe *p, const char *fmt, ...);

/* jtr_fatal - "PROG: msg" on stderr, remove a half-written folder, exit 1 */
__attribute__((noreturn, format(printf, 2, 3)))
void jtr_fatal(struct jtr_probe *p, const char *fmt, ...);

/* jtr_warn - "PROG: warning: msg" on stderr, kept for result.json */
__attribute__((format(printf, 2, 3)))
void jtr_warn(struct jtr_probe *p, const char *fmt, ...);

/* jtr_unknown_option - the message for getopt's ':' (value missing) or '?'
 * (unknown option); call with getopt's return, optopt and argv[optind - 1] */
__attribute__((noreturn))
void jtr_unknown_option(struct jtr_probe *p, int opt, int optopt_c, const char *arg);

/* getopt values of the long-only options every probe shares */
enum { JTR_OPT_HIST_ERROR = 300, JTR_OPT_THRESHOLD, JTR_OPT_MAX_OUTLIERS };

/* the long options every probe takes: -f, -o, -q, -h and --hist-error */
#define JTR_PROBE_LONG_OPTS						\
	JTR_LONG(FIFO),							\
	JTR_LONG(OUTPUT),						\
	{ "hist-error", required_argument, NULL, JTR_OPT_HIST_ERROR },	\
	JTR_LONG(QUIET),						\
	{ "help", no_argument, NULL, 'h' }

/* jtr_probe_common_opt - handle getopt's @opt if it is one every probe
 * shares (-f, -o, -t, -q, -h, --hist-error) or an error (':' or '?');
 * returns false for the tool's own options. -h prints @usage and exits 0. */
bool jtr_probe_common_opt(struct jtr_probe *p, int opt, const char *usage, char **argv);

/* the outlier log's long options of the sampling probes (gap, null, send) */
#define JTR_PROBE_OUTLIER_LONG_OPTS						\
	{ "threshold", required_argument, NULL, JTR_OPT_THRESHOLD },		\
	{ "max-outliers", required_argument, NULL, JTR_OPT_MAX_OUTLIERS }

/* jtr_opt_old - a letter taken in its meaning before the one option alphabet
 * (jtr_opts.h): "PROG: -a is now -c (the CPU); -a goes in the next release"
 * on stderr once the options have passed every check (jtr_probe_old_letters:
 * a refused command line has its one line); not a warning of the result,
 * which is the same */
void jtr_opt_old(struct jtr_probe *p, char old, const char *now, const char *what);

/* jtr_probe_old_letters - the lines of the old letters given, once;
 * jtr_probe_privileged and tp_prog_privileged call it */
void jtr_probe_old_letters(struct jtr_probe *p);

/* jtr_opt_old_desc - the old -d TEXT of jtr null and jtr send (now --desc):
 * @arg with the line of jtr_opt_old, or exit 2 when it reads as a duration
 * (the program has none; -d means one everywhere else) */
const char *jtr_opt_old_desc(struct jtr_probe *p, const char *arg);

/* jtr_probe_outlier_opt - handle --threshold DUR (1ns to 1h; a bare number
 * is ns, with a warning) into *@threshold_ns or --max-outliers N (0 to 1e8)
 * into *@max_outliers; false for any other @opt */
bool jtr_probe_outlier_opt(struct jtr_probe *p, int opt, const char *arg, uint64_t *threshold_ns,
			   uint64_t *max_outliers);

/* the gates' lines of a probe's --help: `jtr gap` and `jtr wake` take them, and
 * the front end judges them after the probe ended (commands/probe.py; the
 * program itself never sees them). A probe whose sample is a latency, not CPU
 * time (jtr wake), has no --max-lost: JTR_GATE_LATENCY_HELP */
#define JTR_GATE_LATENCY_HELP							\
"      --max-latency DUR    exit 1 when a CPU's largest sample (a gap, a\n"	\
"                           wake-up's latency) exceeds DUR, e.g. 100us\n"	\
"      --junit FILE         write a JUnit XML report for CI (a testcase per\n"	\
"                           gate per CPU; one passing testcase without gates)\n"
#define JTR_GATE_HELP								\
JTR_GATE_LATENCY_HELP								\
"      --max-lost PCT       exit 1 when a CPU lost more than PCT of the time\n"	\
"                           to outliers (e.g. 0.5%)\n"

/* jtr_probe_no_args - refuse words left after the options */
void jtr_probe_no_args(struct jtr_probe *p, int argc, char **argv);

/* jtr_probe_default_cpus - @set to jtr_cpu_default() unless @given */
void jtr_probe_default_cpus(cpu_set_t *set, bool given);

/* option helpers: validate or exit 2 naming the value and the fix */
int jtr_opt_int(struct jtr_probe *p, const char *opt, const char *arg, long long min, long long max);
uint64_t jtr_opt_count(struct jtr_probe *p, const char *opt, const char *arg, uint64_t min, uint64_t max);
/* jtr_opt_duration - NUMBER[UNIT], a bare number in seconds */
uint64_t jtr_opt_duration(struct jtr_probe *p, const char *opt, const char *arg, uint64_t min_ns,
			  uint64_t max_ns);
/* jtr_opt_duration_legacy - for the options whose bare number meant @old_unit_ns
 * (ns or ms) before the one grammar: still so, with a warning on stderr */
uint64_t jtr_opt_duration_legacy(struct jtr_probe *p, const char *opt, const char *arg,
				 uint64_t old_unit_ns, uint64_t min_ns, uint64_t max_ns);
/* jtr_opt_percent - NUMBER[%] */
double jtr_opt_percent(struct jtr_probe *p, const char *opt, const char *arg, double min,
		       double max);
void jtr_opt_fifo(struct jtr_probe *p, const char *arg);
void jtr_opt_timebase(struct jtr_probe *p, const char *arg);
void jtr_opt_hist_error(struct jtr_probe *p, const char *arg);
/* jtr_opt_cpus - a CPU list; with @allow_none, "-1" means no pinning (empty set) */
void jtr_opt_cpus(struct jtr_probe *p, const char *arg, bool allow_none, cpu_set_t *set, bool *none);

/* jtr_probe_check_cpus - every CPU in @set online and allowed, else exit 2 */
void jtr_probe_check_cpus(struct jtr_probe *p, const char *opt, const cpu_set_t *set);

/* jtr_probe_one_cpu - the one CPU of @set, checked as jtr_probe_check_cpus
 * does; -1 when @no_pin (-c -1). The caller has refused a set of more than one. */
int jtr_probe_one_cpu(struct jtr_probe *p, const char *opt, const cpu_set_t *set, bool no_pin);

/* jtr_probe_series_init - a run's histogram, histogram of outlier lengths
 * and outlier log of @max_outliers entries for @cpu, allocated and
 * pre-touched at the probe's histogram error; exit 1 when out of memory */
void jtr_probe_series_init(struct jtr_probe *p, struct jtr_hist *hist, struct jtr_hist *lengths,
			   struct jtr_olog *log, uint64_t max_outliers, int cpu);

struct jtr_worker;

/* jtr_probe_cpu_workers - for each CPU of @set (in order), a zeroed record of
 * @size bytes (64-byte aligned: two CPUs' records never share a cache line),
 * set up by @init(record, cpu, @ctx), and a worker pinned to that CPU on a
 * pre-allocated stack that will run @fn(record); the records, *@w the workers
 * and *@n their count. Exits 1 when out of memory. Call before
 * jtr_probe_privileged. */
void *jtr_probe_cpu_workers(struct jtr_probe *p, const cpu_set_t *set, size_t size,
			    void (*init)(void *rec, int cpu, void *ctx), void *ctx,
			    void (*fn)(void *rec), struct jtr_worker **w, int *n);

/* jtr_probe_privileged - FIFO (if asked) and mlockall while privileged, then
 * drop to the real user for good; then host facts and the results folder.
 * Call after every hot-loop buffer is allocated and before any file is
 * opened. */
void jtr_probe_privileged(struct jtr_probe *p);

/* jtr_probe_elevated - its first half, for a program that writes no results
 * (pong without -o): FIFO (if asked; refused with the installs that give it),
 * mlockall within the real user's locked-memory limit (a user other than root
 * is not lifted past it by the privilege), then the drop for good */
void jtr_probe_elevated(struct jtr_probe *p);

/* The Ctrl-C rule, for every program: the first SIGINT, SIGTERM or SIGHUP
 * stops the measurement (jtr_stop); what was measured is written, marked
 * partial; the last line on stderr says so and where, and the exit status
 * is JTR_EXIT_INTERRUPTED. A later one is acknowledged on stderr and skips
 * nothing: the files are still written and renamed into place (SIGKILL is
 * the way to abort).
 *
 * jtr_probe_signals - install the handler (jtr_probe_privileged does); it
 * says "stopping: writing what was measured" on stderr, or just "stopping"
 * without @writes (a program that writes no results folder) */
void jtr_probe_signals(bool writes);

/* the signals of the Ctrl-C rule */
#define JTR_STOP_SIGNALS SIGINT, SIGTERM, SIGHUP

/* the rule in a probe's --help, one paragraph */
#define JTR_PROBE_STOP_HELP \
	"Ctrl-C, SIGTERM or SIGHUP stops the run: what was measured is written, marked\n" \
	"partial, and the exit status is 130. Another one only says it is still\n" \
	"writing (kill -9 aborts).\n"

/* the environment variable a front end sets to its pid in the programs it
 * runs, so that they stop when it dies */
#define JTR_PARENT_ENV "JTR_PARENT_PID"

/* jtr_probe_follow_parent - with JTR_PARENT_PID set (a front end runs this
 * program): SIGTERM when the parent dies (PR_SET_PDEATHSIG), at once if it
 * is gone already; SIGPIPE ignored (its pipes to the parent may break). jtr_probe_init calls it, and jtr_probe_privileged again
 * after the privilege drop, which clears it. */
void jtr_probe_follow_parent(void);

/* jtr_probe_orphaned - a front end started this program (JTR_PARENT_PID) and
 * has died since */
bool jtr_probe_orphaned(void);

/* jtr_probe_exit - the program's exit status for @rc: @rc unless a signal
 * stopped it; then "PROG: interrupted; partial results in DIR/" (or
 * "nothing was written") on stderr, left to the front end when it reads the
 * folder on JTR_RESULTS_FD, and JTR_EXIT_INTERRUPTED. Standard output that
 * could not be written (a full disk; not a reader gone) is said on stderr
 * with where the results are, and @rc 0 becomes 1. Call it last. */
int jtr_probe_exit(struct jtr_probe *p, int rc);

/* jtr_probe_timebase - pick the timebase (falling back from tsc with a
 * warning), calibrate the TSC and measure clock costs */
void jtr_probe_timebase(struct jtr_probe *p);

/* jtr_probe_map_begin / _end - TSC <-> CLOCK_MONOTONIC pairs around a run */
void jtr_probe_map_begin(struct jtr_probe *p);
void jtr_probe_map_end(struct jtr_probe *p);

/* a worker thread on a stack allocated (and locked) before privileges drop */
struct jtr_worker {
	pthread_t th;
	void *stack;
	size_t stack_size;
	int cpu;			/* -1: not pinned */
	void (*fn)(void *arg);
	void *arg;
	volatile int done;
	int pin_err;
	bool started;
};

/* jtr_worker_alloc - map and pre-touch a stack; call before jtr_probe_privileged */
int jtr_worker_alloc(struct jtr_worker *w, int cpu);

/* jtr_workers_start - start @n workers with SIGINT/SIGTERM blocked in them;
 * the calling thread then leaves the measured CPUs and SCHED_FIFO */
void jtr_workers_start(struct jtr_probe *p, struct jtr_worker *w, int n);

/* jtr_workers_wait - join; while waiting call @progress once a second when
 * stderr is a terminal */
void jtr_workers_wait(struct jtr_probe *p, struct jtr_worker *w, int n,
		      void (*progress)(struct jtr_probe *p, void *arg, double elapsed_s),
		      void *arg);

/* jtr_progress_line - "\rtext" on stderr, cleared to the end of the line; with
 * p->progress_lines "PROG: text" and a newline */
__attribute__((format(printf, 2, 3)))
void jtr_progress_line(struct jtr_probe *p, const char *fmt, ...);

/* jtr_progress_clear - the progress line cleared (with progress_lines: nothing) */
void jtr_progress_clear(struct jtr_probe *p);

struct jtr_legacy_hdr;
/* jtr_probe_legacy_hdr - zero @s and fill what jtr_null's header takes from the
 * probe: FIFO priority (-1: none), timebase, the measured costs and ticks per
 * second; the caller fills the run's own fields */
void jtr_probe_legacy_hdr(const struct jtr_probe *p, struct jtr_legacy_hdr *s);

/* jtr_probe_legacy_run - run @k's (from 0) block: header @hdr, min/max and
 * percentiles of @hist in @buckets 10 ns buckets, into summary file @txt
 * (and stdout unless -q), and its gnuplot block into @gp */
void jtr_probe_legacy_run(const struct jtr_probe *p, FILE *txt, FILE *gp, int k, const char *hdr,
			  const struct jtr_hist *hist, uint32_t buckets);

/* jtr_iso_utc - @ts (CLOCK_REALTIME) as "2026-11-22T03:40:00.123Z" */
void jtr_iso_utc(const struct timespec *ts, char *buf, size_t n);

/* jtr_probe_open - open an output file in the results folder atomically */
void jtr_probe_open(struct jtr_probe *p, struct jtr_afile *a, const char *name);

/* jtr_probe_commit_file - commit @a or exit 1 */
void jtr_probe_commit_file(struct jtr_probe *p, struct jtr_afile *a);

/* jtr_probe_result_begin - result.json's head: format, tool, version,
 * command, times, partial, host, calibration; the object stays open */
void jtr_probe_result_begin(struct jtr_probe *p, struct jtr_json *j);

/* jtr_probe_params_common - the "params" every sampling probe shares:
 * timebase (as asked), threshold_ns (null: from the warm-up), max_outliers
 * and hist_error */
void jtr_probe_params_common(const struct jtr_probe *p, struct jtr_json *j, uint64_t threshold_opt,
			     uint64_t max_outliers);

/* jtr_probe_result_end - warnings and the closing brace */
void jtr_probe_result_end(struct jtr_probe *p, struct jtr_json *j);

/* jtr_probe_finish_summary - "files" naming summary.txt only, the end of the
 * result, then @txt and @res committed (a program with no other files) */
void jtr_probe_finish_summary(struct jtr_probe *p, struct jtr_json *j, struct jtr_afile *txt,
			      struct jtr_afile *res);

/* jtr_probe_finish - move the results folder into place and say where */
void jtr_probe_finish(struct jtr_probe *p);

/* jtr_tb_name - "tsc" or "clock" */
const char *jtr_tb_name(enum jtr_timebase tb);

#endif
