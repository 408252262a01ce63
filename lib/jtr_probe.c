// SPDX-License-Identifier: GPL-2.0-only
/* jtr_probe.c - what every measuring program's main() does, written once. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "jtr_cli.h"
#include "jtr_legacy.h"
#include "jtr_probe.h"

#define JTR_STACK_SIZE (256 * 1024)

volatile sig_atomic_t jtr_stop;

/* jtr_tb_name - "tsc" or "clock" */
const char *jtr_tb_name(enum jtr_timebase tb)
{
	return tb == JTR_TB_TSC ? "tsc" : "clock";
}

/* jtr_probe_init - name the program, look at its privileges, set defaults */
void jtr_probe_init(struct jtr_probe *p, const char *tool, int argc, char **argv)
{
	const char *name = getenv("JTR_PROG");

	memset(p, 0, sizeof(*p));
	/* JTR_PROG lets the front end's `jtr run` speak as itself in messages */
	if (name && *name)
		snprintf(p->prog, sizeof(p->prog), "%s", name);
	else
		snprintf(p->prog, sizeof(p->prog), "jtr %s", tool);
	p->tool = tool;
	p->argc = argc;
	p->argv = argv;
	p->tb_wanted = JTR_TB_TSC;
	p->hist_error = JTR_HIST_DEFAULT_ERROR;
	p->memlock_limit = jtr_memlock_limit();
	p->progress = isatty(STDERR_FILENO);
	opterr = 0;
	jtr_probe_follow_parent();
	if (jtr_priv_init(&p->priv) < 0)
		jtr_fatal(p, "cannot read this process's user and group ids: %s", strerror(errno));
}

/* vsay - "PROG: [what: ]msg\n" on stderr, after clearing a progress line */
static void vsay(struct jtr_probe *p, const char *what, const char *fmt, va_list ap)
{
	if (p->progress)
		fputs("\r\033[K", stderr);
	fprintf(stderr, "%s: %s", p->prog, what);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

/* jtr_usage_error - bad input: exit 2 */
void jtr_usage_error(struct jtr_probe *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(p, "", fmt, ap);
	va_end(ap);
	jtr_outdir_abort(&p->out);
	exit(2);
}

/* jtr_fatal - a failure that is not the user's input: exit 1 */
void jtr_fatal(struct jtr_probe *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(p, "error: ", fmt, ap);
	va_end(ap);
	jtr_outdir_abort(&p->out);
	exit(1);
}

/* jtr_warn - a warning, also kept for result.json */
void jtr_warn(struct jtr_probe *p, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s)
		return;
	if (p->progress)
		fputs("\r\033[K", stderr);
	fprintf(stderr, "%s: warning: %s\n", p->prog, s);
	if (p->nwarnings < JTR_MAX_WARNINGS)
		p->warnings[p->nwarnings++] = s;
	else
		free(s);
}

/* jtr_unknown_option - the message for getopt's ':' (value missing) or '?'
 * (unknown option); @optopt_c is getopt's optopt, @arg the word it stopped at */
void jtr_unknown_option(struct jtr_probe *p, int opt, int optopt_c, const char *arg)
{
	if (arg && !strncmp(arg, "--", 2)) {
		char name[64];

		snprintf(name, sizeof(name), "%.*s", (int)strcspn(arg, "="), arg);
		if (opt == ':')
			jtr_usage_error(p, "option '%s' needs a value; see '%s --help'", name, p->prog);
		if (optopt_c && strchr(arg, '='))
			jtr_usage_error(p, "option '%s' takes no value; see '%s --help'", name, p->prog);
		jtr_usage_error(p, "unknown option '%s'; see '%s --help'", arg, p->prog);
	}
	if (opt == ':')
		jtr_usage_error(p, "option '-%c' needs a value; see '%s --help'", optopt_c, p->prog);
	jtr_usage_error(p, "unknown option '-%c'; see '%s --help'", optopt_c, p->prog);
}

/* jtr_opt_old - see jtr_probe.h */
void jtr_opt_old(struct jtr_probe *p, char old, const char *now, const char *what)
{
	for (int i = 0; i < p->nold; i++)
		if (p->old[i].letter == old)
			return;
	if (p->nold < JTR_MAX_OLD)
		p->old[p->nold++] = (struct jtr_old_letter){ old, now, what };
}

/* jtr_opt_old_desc - see jtr_probe.h */
const char *jtr_opt_old_desc(struct jtr_probe *p, const char *arg)
{
	struct jtr_err e;
	uint64_t ns;

	if (jtr_parse_duration_ns(arg, 0, UINT64_MAX, &ns, &e) == 0)
		jtr_usage_error(p, "-d %s: %s takes no duration (-d is a duration in jtr); "
				"a run name is --desc TEXT", arg, p->prog);
	jtr_opt_old(p, 'd', "--desc", "the run name");
	return arg;
}

/* jtr_probe_old_letters - see jtr_probe.h */
void jtr_probe_old_letters(struct jtr_probe *p)
{
	for (int i = 0; i < p->nold; i++)
		fprintf(stderr, "%s: -%c is now %s (%s); -%c goes in the next release\n", p->prog,
			p->old[i].letter, p->old[i].now, p->old[i].what, p->old[i].letter);
	p->nold = 0;
}

/* jtr_probe_common_opt - the options every probe shares */
bool jtr_probe_common_opt(struct jtr_probe *p, int opt, const char *usage, char **argv)
{
	switch (opt) {
	case JTR_FIFO_C: jtr_opt_fifo(p, optarg); return true;
	case JTR_OUTPUT_C: p->out_opt = optarg; return true;
	case 't': jtr_opt_timebase(p, optarg); return true;
	case JTR_QUIET_C: p->quiet = true; p->progress = false; return true;
	case JTR_OPT_HIST_ERROR: jtr_opt_hist_error(p, optarg); return true;
	case 'h':
		fputs(usage, stdout);
		exit(0);
	case ':':
	case '?':
		jtr_unknown_option(p, opt, optopt, argv[optind - 1]);
	default:
		return false;
	}
}

/* jtr_probe_outlier_opt - see jtr_probe.h */
bool jtr_probe_outlier_opt(struct jtr_probe *p, int opt, const char *arg, uint64_t *threshold_ns,
			   uint64_t *max_outliers)
{
	switch (opt) {
	case JTR_OPT_THRESHOLD:
		*threshold_ns = jtr_opt_duration_legacy(p, "--threshold", arg, 1, 1,
							3600 * JTR_NS_PER_S);
		return true;
	case JTR_OPT_MAX_OUTLIERS:
		*max_outliers = jtr_opt_count(p, "--max-outliers", arg, 0, 100000000);
		return true;
	default:
		return false;
	}
}

/* jtr_probe_no_args - refuse words left after the options */
void jtr_probe_no_args(struct jtr_probe *p, int argc, char **argv)
{
	if (optind < argc)
		jtr_usage_error(p, "unexpected argument '%s'; see '%s --help'", argv[optind], p->prog);
}

/* jtr_probe_default_cpus - @set to jtr_cpu_default() unless @given */
void jtr_probe_default_cpus(cpu_set_t *set, bool given)
{
	if (given)
		return;
	CPU_ZERO(set);
	CPU_SET(jtr_cpu_default(), set);
}

/* jtr_opt_int - an integer in [min, max] or exit 2 */
int jtr_opt_int(struct jtr_probe *p, const char *opt, const char *arg, long long min, long long max)
{
	struct jtr_err e;
	long long v;

	if (jtr_parse_int(arg, min, max, &v, &e) < 0)
		jtr_usage_error(p, "%s %s: %s", opt, arg, e.msg);
	return (int)v;
}

/* jtr_opt_count - a count in [min, max] or exit 2 */
uint64_t jtr_opt_count(struct jtr_probe *p, const char *opt, const char *arg, uint64_t min, uint64_t max)
{
	struct jtr_err e;
	uint64_t v;

	if (jtr_parse_count(arg, min, max, &v, &e) < 0)
		jtr_usage_error(p, "%s %s: %s", opt, arg, e.msg);
	return v;
}

/* jtr_opt_duration - a duration in [min, max] ns (a bare number is in
 * seconds) or exit 2 */
uint64_t jtr_opt_duration(struct jtr_probe *p, const char *opt, const char *arg, uint64_t min_ns,
			  uint64_t max_ns)
{
	struct jtr_err e;
	uint64_t v;

	if (jtr_parse_duration_ns(arg, min_ns, max_ns, &v, &e) < 0)
		jtr_usage_error(p, "%s %s: %s", opt, arg, e.msg);
	return v;
}

/* jtr_opt_duration_legacy - a duration for an option whose bare number meant
 * @old_unit_ns: still read so, with a warning, or exit 2 */
uint64_t jtr_opt_duration_legacy(struct jtr_probe *p, const char *opt, const char *arg,
				 uint64_t old_unit_ns, uint64_t min_ns, uint64_t max_ns)
{
	struct jtr_err e;
	char w[512];
	uint64_t v;
	bool bare;

	if (jtr_parse_duration_legacy_ns(arg, old_unit_ns, min_ns, max_ns, &v, &bare, &e) < 0)
		jtr_usage_error(p, "%s %s: %s", opt, arg, e.msg);
	if (bare)
		jtr_warn(p, "%s", jtr_duration_legacy_warning(w, sizeof(w), opt, arg, old_unit_ns));
	return v;
}

/* jtr_opt_percent - a percentage in [min, max] or exit 2 */
double jtr_opt_percent(struct jtr_probe *p, const char *opt, const char *arg, double min,
		       double max)
{
	struct jtr_err e;
	double v;

	if (jtr_parse_percent(arg, min, max, &v, &e) < 0)
		jtr_usage_error(p, "%s %s: %s", opt, arg, e.msg);
	return v;
}

/* jtr_opt_fifo - -f PRIO */
void jtr_opt_fifo(struct jtr_probe *p, const char *arg)
{
	struct jtr_err e;
	long long v;
	int rc;

	if (arg[0] == '0' && (arg[1] == 'x' || arg[1] == 'X')) {
		/* the flag bits the publishers jtr replaces took as -f 0xN: said in jtr's words */
		unsigned long bits = strtoul(arg + 2, NULL, 16);

		jtr_usage_error(p, "-f %s: -f is the SCHED_FIFO priority (1-99) here; a "
				"hexadecimal -f reads as publisher flag bits, which jtr pub has as: "
				"0x1 (timestamps) is its default (--no-timestamps drops them)%s%s; "
				"leave -f out%s", arg,
				bits & 2 ? ", 0x2 (non-blocking sends) is not carried over (a send "
				"waits for room and is counted: blocked_sends)" : "",
				bits & 4 ? ", 0x4 (generic source) means nothing here (one send path)"
				: "", bits & ~7UL ? " (bits above 0x4 were never defined)" : "");
	}
	rc = jtr_parse_int(arg, 1, 99, &v, &e);

	if (rc == -ERANGE)
		jtr_usage_error(p, "-f %s: SCHED_FIFO priority must be 1-99 (99 is the highest); "
				"leave -f out for the normal scheduler", arg);
	if (rc < 0)
		jtr_usage_error(p, "-f %s: %s", arg, e.msg);
	p->fifo_prio = (int)v;
}

/* jtr_opt_timebase - -t tsc|clock (or jtr_null's 1|2) */
void jtr_opt_timebase(struct jtr_probe *p, const char *arg)
{
	if (!strcmp(arg, "tsc") || !strcmp(arg, "rdtsc") || !strcmp(arg, "1"))
		p->tb_wanted = JTR_TB_TSC;
	else if (!strcmp(arg, "clock") || !strcmp(arg, "clock_gettime") || !strcmp(arg, "2"))
		p->tb_wanted = JTR_TB_CLOCK;
	else
		jtr_usage_error(p, "-t %s: unknown timebase; use tsc (or 1) for RDTSC, "
				"clock (or 2) for clock_gettime", arg);
}

/* jtr_opt_hist_error - --hist-error PCT */
void jtr_opt_hist_error(struct jtr_probe *p, const char *arg)
{
	p->hist_error = jtr_opt_percent(p, "--hist-error", arg, 0.01, 50) / 100.0;
}

/* jtr_opt_cpus - a CPU list, or -1 for no pinning */
void jtr_opt_cpus(struct jtr_probe *p, const char *arg, bool allow_none, cpu_set_t *set, bool *none)
{
	struct jtr_err e;

	*none = false;
	if (allow_none && !strcmp(arg, "-1")) {
		CPU_ZERO(set);
		*none = true;
		return;
	}
	if (jtr_parse_cpulist(arg, set, &e) < 0)
		jtr_usage_error(p, "-c %s: %s%s", arg, e.msg, allow_none ? ", or -1 for no pinning" : "");
}

/* jtr_probe_check_cpus - every CPU in @set online and allowed, else exit 2 */
void jtr_probe_check_cpus(struct jtr_probe *p, const char *opt, const cpu_set_t *set)
{
	struct jtr_err e;

	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, set))
			continue;
		int rc = jtr_cpu_check(cpu, &e);

		if (rc < 0)
			jtr_usage_error(p, "%s: %s", opt, e.msg);
		if (rc > 0)
			jtr_warn(p, "%s", e.msg);
	}
}

/* jtr_probe_one_cpu - see jtr_probe.h */
int jtr_probe_one_cpu(struct jtr_probe *p, const char *opt, const cpu_set_t *set, bool no_pin)
{
	if (no_pin)
		return -1;
	jtr_probe_check_cpus(p, opt, set);
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, set))
			return cpu;
	return -1;
}

/* jtr_probe_series_init - see jtr_probe.h */
void jtr_probe_series_init(struct jtr_probe *p, struct jtr_hist *hist, struct jtr_hist *lengths,
			   struct jtr_olog *log, uint64_t max_outliers, int cpu)
{
	if (jtr_hist_init(hist, p->hist_error) < 0 || jtr_hist_init(lengths, p->hist_error) < 0 ||
	    jtr_olog_init(log, max_outliers, cpu) < 0) {
		if (cpu >= 0)
			jtr_fatal(p, "out of memory for the histograms and outlier log of CPU %d", cpu);
		jtr_fatal(p, "out of memory for the histograms and outlier log");
	}
}

/* what on_signal says: set before the handler is installed */
static const char *stop_notice = "", *again_notice = "";

/* say - @s on stderr from a signal handler */
static void say(const char *s)
{
	if (write(STDERR_FILENO, s, strlen(s)) < 0)
		return;
}

/* on_signal - the first stop signal asks the run to stop; the later ones
 * are acknowledged and change nothing: what was measured is still written
 * and the folder still renamed into place (SIGKILL is what aborts) */
static void on_signal(int sig)
{
	int saved = errno;

	(void)sig;
	if (jtr_stop)
		say(again_notice);
	else
		say(stop_notice);
	jtr_stop = 1;
	errno = saved;
}

/* jtr_probe_signals - the Ctrl-C rule's first half (see jtr_probe.h) */
void jtr_probe_signals(bool writes)
{
	static const int sigs[] = { JTR_STOP_SIGNALS };
	struct sigaction sa;

	stop_notice = writes ? "\nstopping: writing what was measured\n" : "\nstopping\n";
	again_notice = writes ? "still stopping: writing what was measured (kill -9 aborts)\n"
			      : "still stopping (kill -9 aborts)\n";
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&sa.sa_mask, sigs[i]);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/* parent_pid - JTR_PARENT_PID, or 0 */
static pid_t parent_pid(void)
{
	const char *s = getenv(JTR_PARENT_ENV);
	char *end;
	long ppid;

	if (!s || !*s)
		return 0;
	errno = 0;
	ppid = strtol(s, &end, 10);
	return errno || *end || ppid <= 0 ? 0 : (pid_t)ppid;
}

/* jtr_probe_follow_parent - see jtr_probe.h */
void jtr_probe_follow_parent(void)
{
	if (!parent_pid())
		return;
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	/* its pipes may end with it: a write to one then fails (EPIPE) instead
	 * of killing this program before it has cleaned up */
	signal(SIGPIPE, SIG_IGN);
	/* gone already, between the fork and here: stop as the signal would */
	if (jtr_probe_orphaned())
		raise(SIGTERM);
}

/* jtr_probe_orphaned - see jtr_probe.h */
bool jtr_probe_orphaned(void)
{
	pid_t ppid = parent_pid();

	return ppid && getppid() != ppid;
}

/* stdout_written - @rc, or 1 with a line on stderr when what went to standard
 * output could not be written (a full disk: jtr gap > /dev/full); a reader that
 * went away (| head) is no error */
static int stdout_written(const struct jtr_probe *p, int rc)
{
	int err = 0;

	errno = 0;
	if (fflush(stdout) != 0)
		err = errno ? errno : EIO;
	else if (ferror(stdout))
		err = p->stdout_err ? p->stdout_err : EIO;
	if (!err || err == EPIPE)
		return rc;
	if (p->written)
		fprintf(stderr, "%s: cannot write standard output: %s; the results are in %s/\n",
			p->prog, strerror(err), p->out.final);
	else
		fprintf(stderr, "%s: cannot write standard output: %s\n", p->prog, strerror(err));
	return rc ? rc : 1;
}

/* jtr_probe_exit - the Ctrl-C rule's second half (see jtr_probe.h) */
int jtr_probe_exit(struct jtr_probe *p, int rc)
{
	const char *front = getenv("JTR_RESULTS_FD");

	rc = stdout_written(p, rc);
	if (!jtr_stop)
		return rc;
	if (p->progress)
		fputs("\r\033[K", stderr);
	/* a front end that reads the folder on JTR_RESULTS_FD goes on after the
	 * program (jtr run attributes the partial run) and says it last itself */
	if (front && *front)
		return JTR_EXIT_INTERRUPTED;
	if (!p->written)
		fprintf(stderr, "%s: interrupted; nothing was written\n", p->prog);
	else
		fprintf(stderr, "%s: interrupted; %sresults in %s/\n", p->prog,
			p->partial ? "partial " : "", p->out.final);
	return JTR_EXIT_INTERRUPTED;
}

/* jtr_probe_cpu_workers - see jtr_probe.h */
void *jtr_probe_cpu_workers(struct jtr_probe *p, const cpu_set_t *set, size_t size,
			    void (*init)(void *rec, int cpu, void *ctx), void *ctx,
			    void (*fn)(void *rec), struct jtr_worker **w, int *n)
{
	size_t rsize = (size + 63) / 64 * 64;
	int count = CPU_COUNT(set), i = 0;
	char *recs = aligned_alloc(64, rsize * (size_t)(count ? count : 1));

	*w = calloc((size_t)(count ? count : 1), sizeof(**w));
	if (!recs || !*w)
		jtr_fatal(p, "out of memory");
	memset(recs, 0, rsize * (size_t)count);
	for (int cpu = 0; cpu < CPU_SETSIZE && i < count; cpu++) {
		if (!CPU_ISSET(cpu, set))
			continue;
		init(recs + rsize * (size_t)i, cpu, ctx);
		if (jtr_worker_alloc(&(*w)[i], cpu) < 0)
			jtr_fatal(p, "cannot allocate a thread stack for CPU %d", cpu);
		(*w)[i].fn = fn;
		(*w)[i].arg = recs + rsize * (size_t)i;
		i++;
	}
	*n = count;
	return recs;
}

/* jtr_probe_elevated - see jtr_probe.h */
void jtr_probe_elevated(struct jtr_probe *p)
{
	struct jtr_err e;
	bool over;
	int rc, mrc;

	jtr_probe_old_letters(p);
	if (p->fifo_prio) {
		rc = jtr_fifo_set(p->fifo_prio);
		if (rc < 0)
			jtr_usage_error(p, "-f %d: cannot use SCHED_FIFO: %s; run as root, install with "
					"'make install-caps' (cap_sys_nice) or 'make install-setuid', or "
					"raise the limit with 'ulimit -r %d'", p->fifo_prio, strerror(-rc),
					p->fifo_prio);
	}
	/* the privilege (setuid root, cap_ipc_lock) lifts the locked-memory
	 * limit; for a user who is not root it must not lift it for them: a run
	 * that maps more than their limit is not locked at all */
	p->mapped = jtr_mapped_bytes();
	p->memlock_limit = jtr_memlock_limit();
	over = p->priv.elevated && p->priv.ruid != 0 && p->mapped > p->memlock_limit;
	mrc = over ? -ENOMEM : jtr_mlock();
	p->locked = mrc == 0;
	jtr_err_clear(&e);
	if (jtr_priv_drop(&p->priv, &e) < 0)
		jtr_fatal(p, "%s", e.msg);
	/* a change of credentials clears the parent-death signal: set it again */
	jtr_probe_follow_parent();

	/* from here on, everything runs as the real user */
	if (over)
		jtr_warn(p, "memory not locked: this run maps %.1f MB, more than your locked-memory "
			 "limit of %.1f MB ('ulimit -l'), which jtr keeps to for users other than "
			 "root: page faults can add outliers; %s, or raise the "
			 "limit (memlock in /etc/security/limits.conf)", p->mapped / 1048576.0,
			 p->memlock_limit / 1048576.0, p->shrink ? p->shrink : "lower --max-outliers");
	else if (mrc < 0)
		jtr_warn(p, "memory not locked (mlockall: %s): page faults can add outliers; run "
			 "as root, install with 'make install-caps' (cap_ipc_lock), or raise "
			 "'ulimit -l'", strerror(-mrc));
}

/* jtr_probe_privileged - FIFO and mlockall while privileged, drop, then
 * host facts and the results folder as the real user */
void jtr_probe_privileged(struct jtr_probe *p)
{
	struct jtr_err e;
	char w[512];

	jtr_probe_elevated(p);
	jtr_host_collect(&p->host);
	if (p->fifo_prio && !p->sleeps && jtr_rt_throttle_warning(&p->host.rt, w, sizeof(w)))
		jtr_warn(p, "%s", w);
	if (jtr_outdir_prepare(&p->out, p->out_opt, p->host.hostname, p->tool, &e) < 0)
		jtr_usage_error(p, "%s", e.msg);
	jtr_probe_signals(true);
}

/* jtr_probe_timebase - pick the timebase, calibrate, measure costs */
void jtr_probe_timebase(struct jtr_probe *p)
{
	struct jtr_err why;
	double hz = 0;
	bool usable;
	int rc;

	jtr_err_clear(&why);
	usable = jtr_tsc_usable(&why);
	if (usable) {
		rc = jtr_tsc_calibrate(JTR_TSC_CALIBRATE_NS, &hz);
		if (rc < 0) {
			snprintf(why.msg, sizeof(why.msg), "TSC calibration failed (%s)", strerror(-rc));
			usable = false;
			hz = 0;
		}
	}
	p->tb.kind = usable ? p->tb_wanted : JTR_TB_CLOCK;
	if (!usable) {
		snprintf(p->tb_fallback, sizeof(p->tb_fallback), "%s", why.msg);
		if (p->tb_wanted == JTR_TB_TSC)
			jtr_warn(p, "the TSC cannot be used: %s; timing with clock_gettime"
				 "(CLOCK_MONOTONIC) instead", why.msg);
	}
	p->tb.hz = hz;
	jtr_ticks2ns_init(&p->tb.t2n, hz);
	jtr_clock_measure_costs(hz, &p->costs);
	p->host.tsc_hz = hz;
	p->host.tsc_step_ns = p->costs.tsc_step_ns;
}

/* jtr_probe_map_begin - first TSC/CLOCK_MONOTONIC pair, and the start times */
void jtr_probe_map_begin(struct jtr_probe *p)
{
	clock_gettime(CLOCK_REALTIME, &p->started_rt);
	if (p->tb.kind == JTR_TB_TSC)
		jtr_tsc_pair_take(CLOCK_MONOTONIC, 64, &p->tb.map.a);
	p->started_mono = jtr_mono_ns();
}

/* jtr_probe_map_end - second pair, and the end times */
void jtr_probe_map_end(struct jtr_probe *p)
{
	p->ended_mono = jtr_mono_ns();
	if (p->tb.kind == JTR_TB_TSC)
		jtr_tsc_pair_take(CLOCK_MONOTONIC, 64, &p->tb.map.b);
	clock_gettime(CLOCK_REALTIME, &p->ended_rt);
	if (jtr_stop)
		p->partial = true;
}

/* jtr_worker_alloc - map and pre-touch a stack */
int jtr_worker_alloc(struct jtr_worker *w, int cpu)
{
	memset(w, 0, sizeof(*w));
	w->cpu = cpu;
	w->stack_size = JTR_STACK_SIZE;
	w->stack = mmap(NULL, w->stack_size, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (w->stack == MAP_FAILED) {
		w->stack = NULL;
		return -errno;
	}
	jtr_prefault(w->stack, w->stack_size);
	return 0;
}

/* trampoline - pin, run, mark done */
static void *trampoline(void *arg)
{
	struct jtr_worker *w = arg;

	if (w->cpu >= 0)
		w->pin_err = jtr_pin_self(w->cpu);
	if (!w->pin_err)
		w->fn(w->arg);
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* the signals that stop a run, blocked in the measuring threads */
static const int stop_sigs[] = { JTR_STOP_SIGNALS };

/* jtr_workers_start - start @n workers; the caller leaves their CPUs */
void jtr_workers_start(struct jtr_probe *p, struct jtr_worker *w, int n)
{
	sigset_t block, old;
	cpu_set_t hk;
	int i, rc;

	sigemptyset(&block);
	for (size_t k = 0; k < sizeof(stop_sigs) / sizeof(stop_sigs[0]); k++)
		sigaddset(&block, stop_sigs[k]);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	for (i = 0; i < n; i++) {
		pthread_attr_t a;

		pthread_attr_init(&a);
		pthread_attr_setstack(&a, w[i].stack, w[i].stack_size);
		/* inherit the creator's SCHED_FIFO: creating a FIFO thread
		 * explicitly would need the privileges already dropped */
		pthread_attr_setinheritsched(&a, PTHREAD_INHERIT_SCHED);
		rc = pthread_create(&w[i].th, &a, trampoline, &w[i]);
		pthread_attr_destroy(&a);
		if (rc)
			jtr_fatal(p, "cannot start a measuring thread: %s", strerror(rc));
		w[i].started = true;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);

	/* the waiting thread keeps off the measured CPUs and out of SCHED_FIFO */
	jtr_cpus_allowed(&hk);
	for (i = 0; i < n; i++)
		if (w[i].cpu >= 0)
			CPU_CLR(w[i].cpu, &hk);
	if (CPU_COUNT(&hk) > 0)
		jtr_pin_self_set(&hk);
	if (p->fifo_prio)
		jtr_sched_other();
}

/* jtr_workers_wait - join, with progress once a second on a terminal */
void jtr_workers_wait(struct jtr_probe *p, struct jtr_worker *w, int n,
		      void (*progress)(struct jtr_probe *p, void *arg, double elapsed_s),
		      void *arg)
{
	struct timespec t0, dl;

	clock_gettime(CLOCK_REALTIME, &t0);
	dl = t0;
	for (int i = 0; i < n; i++) {
		if (!w[i].started)
			continue;
		if (p->progress && !p->quiet && progress) {
			for (;;) {
				dl.tv_sec += 1;
				if (pthread_timedjoin_np(w[i].th, NULL, &dl) != ETIMEDOUT)
					break;
				progress(p, arg, (double)(dl.tv_sec - t0.tv_sec));
			}
		} else {
			pthread_join(w[i].th, NULL);
		}
		w[i].started = false;
	}
	if (p->progress && !p->quiet && progress)
		fputs("\r\033[K", stderr);
	for (int i = 0; i < n; i++)
		if (w[i].pin_err)
			jtr_fatal(p, "cannot pin a thread to CPU %d: %s", w[i].cpu, strerror(-w[i].pin_err));
}

/* jtr_progress_line - "\rtext" on stderr; with p->progress_lines "PROG: text"
 * as a line of its own */
void jtr_progress_line(struct jtr_probe *p, const char *fmt, ...)
{
	va_list ap;

	if (p->progress_lines)
		fprintf(stderr, "%s: ", p->prog);
	else
		fputs("\r\033[K", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (p->progress_lines)
		fputc('\n', stderr);
	fflush(stderr);
}

/* jtr_progress_clear - the progress line cleared (nothing with progress_lines) */
void jtr_progress_clear(struct jtr_probe *p)
{
	if (p->progress_lines)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
}

/* result_as - the name result.json is written under: JTR_RESULT_AS (a file of
 * the folder) while the front end that set it runs (jtr run: it builds the
 * result document from that file and writes result.json itself, once); once it
 * is gone (killed), result.json, so that what was measured stays a result */
static void result_as(struct jtr_outdir *o)
{
	const char *as = getenv("JTR_RESULT_AS");

	o->result_as[0] = '\0';
	if (!as || !*as || strchr(as, '/') || !strcmp(as, ".") || !strcmp(as, "..") ||
	    strlen(as) >= sizeof(o->result_as) || jtr_probe_orphaned())
		return;
	snprintf(o->result_as, sizeof(o->result_as), "%s", as);
}

/* jtr_probe_open - open an output file in the results folder atomically */
void jtr_probe_open(struct jtr_probe *p, struct jtr_afile *a, const char *name)
{
	char path[PATH_MAX];
	int rc;

	result_as(&p->out);
	rc = jtr_outdir_path(&p->out, name, path, sizeof(path));

	if (rc == 0)
		rc = jtr_afile_open(a, path);
	if (rc < 0)
		jtr_fatal(p, "cannot write %s/%s: %s", p->out.final, name, strerror(-rc));
}

/* jtr_probe_commit_file - commit @a or exit 1, naming the file where the user
 * will look for it (not in the results folder's hidden draft) */
void jtr_probe_commit_file(struct jtr_probe *p, struct jtr_afile *a)
{
	int rc = jtr_afile_commit(a);
	char path[PATH_MAX];

	if (rc < 0) {
		jtr_final_name(a->path, path, sizeof(path));
		jtr_fatal(p, "cannot write %s: %s", path, strerror(-rc));
	}
}

void jtr_iso_utc(const struct timespec *ts, char *buf, size_t n)
{
	struct tm tm;
	char s[32];

	gmtime_r(&ts->tv_sec, &tm);
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, n, "%s.%03ldZ", s, ts->tv_nsec / 1000000);
}

/* write_calibration - the "calibration" object */
static void write_calibration(struct jtr_probe *p, struct jtr_json *j)
{
	const struct jtr_clock_costs *c = &p->costs;
	bool tsc = p->tb.hz > 0;

	jtr_json_obj_begin(j, "calibration");
	jtr_json_str(j, "timebase", jtr_tb_name(p->tb.kind));
	jtr_json_str(j, "timebase_fallback", p->tb_fallback[0] ? p->tb_fallback : NULL);
	if (tsc) {
		jtr_json_fixed(j, "tsc_hz", p->tb.hz, 3);
		jtr_json_fixed(j, "tsc_step_ns", c->tsc_step_ns, 2);
		jtr_json_uint(j, "tsc_step_ticks", c->tsc_step_ticks);
		jtr_json_fixed(j, "rdtsc_cost_ns", c->rdtsc_ns, 2);
		jtr_json_fixed(j, "rdtsc_ordered_cost_ns", c->rdtsc_ordered_ns, 2);
		jtr_json_fixed(j, "rdtscp_cost_ns", c->rdtscp_ns, 2);
		jtr_json_fixed(j, "timer_overhead_ns", c->region_overhead_ns, 2);
	} else {
		jtr_json_null(j, "tsc_hz");
		jtr_json_null(j, "tsc_step_ns");
		jtr_json_null(j, "rdtsc_cost_ns");
		jtr_json_fixed(j, "timer_overhead_ns", c->gettime_region_ns, 2);
	}
	jtr_json_fixed(j, "gettime_cost_ns", c->gettime_ns, 2);
	jtr_json_fixed(j, "loops_1000_cost_ns", c->loops_1000_ns, 2);
	if (p->tb.kind == JTR_TB_TSC) {
		jtr_json_obj_begin(j, "tsc_to_monotonic");
		jtr_json_uint(j, "tsc_a", p->tb.map.a.tsc);
		jtr_json_int(j, "ns_a", p->tb.map.a.ns);
		jtr_json_uint(j, "tsc_b", p->tb.map.b.tsc);
		jtr_json_int(j, "ns_b", p->tb.map.b.ns);
		jtr_json_obj_end(j);
	}
	jtr_json_obj_end(j);
}

/* jtr_probe_result_begin - result.json's head; the object stays open */
void jtr_probe_result_begin(struct jtr_probe *p, struct jtr_json *j)
{
	char t[48];

	jtr_json_obj_begin(j, NULL);
	jtr_json_str(j, "format", p->format ? p->format : JTR_RESULT_FORMAT);
	jtr_json_str(j, "tool", p->tool);
	jtr_json_str(j, "jtr_version", JTR_VERSION);
	jtr_json_arr_begin_inline(j, "command");
	jtr_json_str(j, NULL, p->prog);
	for (int i = 1; i < p->argc; i++)
		jtr_json_str(j, NULL, p->argv[i]);
	jtr_json_arr_end(j);
	jtr_iso_utc(&p->started_rt, t, sizeof(t));
	jtr_json_str(j, "started_at", t);
	jtr_iso_utc(&p->ended_rt, t, sizeof(t));
	jtr_json_str(j, "ended_at", t);
	jtr_json_int(j, "started_mono_ns", p->started_mono);
	jtr_json_int(j, "ended_mono_ns", p->ended_mono);
	jtr_json_bool(j, "partial", p->partial);
	jtr_json_obj_begin(j, "privileges");
	jtr_json_uint(j, "uid", p->priv.ruid);
	jtr_json_bool(j, "elevated_at_start", p->priv.elevated);
	jtr_json_bool(j, "dropped", p->priv.dropped);
	if (p->fifo_prio)
		jtr_json_int(j, "fifo_priority", p->fifo_prio);
	else
		jtr_json_null(j, "fifo_priority");
	jtr_json_bool(j, "memory_locked", p->locked);
	jtr_json_uint(j, "mapped_bytes", p->mapped);
	if (p->memlock_limit == UINT64_MAX)
		jtr_json_null(j, "memlock_limit_bytes");
	else
		jtr_json_uint(j, "memlock_limit_bytes", p->memlock_limit);
	jtr_json_obj_end(j);
	jtr_host_write(j, "host", &p->host);
	write_calibration(p, j);
}

/* jtr_probe_legacy_run - see jtr_probe.h */
void jtr_probe_legacy_run(const struct jtr_probe *p, FILE *txt, FILE *gp, int k, const char *hdr,
			  const struct jtr_hist *hist, uint32_t buckets)
{
	char mm[256], pct[512];

	jtr_legacy_minmax(mm, sizeof(mm), hist, buckets);
	jtr_legacy_percentiles(pct, sizeof(pct), hist, buckets);
	fprintf(txt, "%s%s%s", hdr, mm, pct);
	if (!p->quiet)
		printf("%s%s%s", hdr, mm, pct);
	jtr_legacy_gnuplot_block(gp, k + 1, hdr, mm, hist, buckets);
}

/* jtr_probe_params_common - see jtr_probe.h */
void jtr_probe_params_common(const struct jtr_probe *p, struct jtr_json *j, uint64_t threshold_opt,
			     uint64_t max_outliers)
{
	jtr_json_str(j, "timebase", jtr_tb_name(p->tb_wanted));
	if (threshold_opt)
		jtr_json_uint(j, "threshold_ns", threshold_opt);
	else
		jtr_json_null(j, "threshold_ns");
	jtr_json_uint(j, "max_outliers", max_outliers);
	jtr_json_double(j, "hist_error", p->hist_error);
}

/* jtr_probe_result_end - the warnings and the closing brace */
void jtr_probe_result_end(struct jtr_probe *p, struct jtr_json *j)
{
	jtr_json_arr_begin(j, "warnings");
	for (int i = 0; i < p->nwarnings; i++)
		jtr_json_str(j, NULL, p->warnings[i]);
	jtr_json_arr_end(j);
	jtr_json_obj_end(j);
	int rc = jtr_json_finish(j);

	if (rc < 0)
		jtr_fatal(p, "cannot write %s/result.json: %s", p->out.final, strerror(-rc));
}

/* jtr_probe_finish_summary - "files" naming summary.txt only, the end of the
 * result, then @txt and @res committed */
void jtr_probe_finish_summary(struct jtr_probe *p, struct jtr_json *j, struct jtr_afile *txt,
			      struct jtr_afile *res)
{
	jtr_json_obj_begin(j, "files");
	jtr_json_str(j, "summary", "summary.txt");
	jtr_json_obj_end(j);
	jtr_probe_result_end(p, j);
	jtr_probe_commit_file(p, txt);
	jtr_probe_commit_file(p, res);
}

/* tell_results_fd - the folder's absolute path and a newline, in one write,
 * to the descriptor a front end named in JTR_RESULTS_FD (so it need not read
 * the "results:" line on stdout); a descriptor that is not open, or a reader
 * that went away, is no error */
static void tell_results_fd(struct jtr_probe *p)
{
	const char *env = getenv("JTR_RESULTS_FD");
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	char path[PATH_MAX + 1];
	long long fd;
	size_t len;
	ssize_t n;

	if (!env || !*env)
		return;
	if (jtr_parse_int(env, 0, INT_MAX, &fd, NULL) < 0) {
		jtr_warn(p, "JTR_RESULTS_FD=%s is not a file descriptor number; the results folder "
			 "is only named on stdout", env);
		return;
	}
	if (!realpath(p->out.final, path))
		snprintf(path, sizeof(path) - 1, "%s", p->out.final);
	len = strlen(path);
	path[len++] = '\n';
	/* a closed pipe must not kill the program now that its results are safe */
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &old);
	n = write((int)fd, path, len);
	sigaction(SIGPIPE, &old, NULL);
	if (n < 0 && errno != EBADF && errno != EPIPE)
		jtr_warn(p, "JTR_RESULTS_FD=%s: %s", env, strerror(errno));
}

/* jtr_probe_finish - move the results folder into place and say where */
void jtr_probe_finish(struct jtr_probe *p)
{
	struct jtr_err e;

	if (jtr_outdir_commit(&p->out, &e) < 0)
		jtr_fatal(p, "%s", e.msg);
	p->written = true;
	tell_results_fd(p);
	if (!p->quiet)
		fprintf(p->results_on_stderr ? stderr : stdout, "results: %s/\n", p->out.final);
	errno = 0;
	if (fflush(stdout) != 0)
		p->stdout_err = errno;	/* said at the end (jtr_probe_exit) */
}

/* jtr_probe_legacy_hdr - the probe's part of jtr_null's header (see jtr_probe.h) */
void jtr_probe_legacy_hdr(const struct jtr_probe *p, struct jtr_legacy_hdr *s)
{
	memset(s, 0, sizeof(*s));
	s->fifo_priority = p->fifo_prio ? p->fifo_prio : -1;
	s->timebase = p->tb.kind;
	s->gettime_cost = (long long)(p->costs.gettime_ns + 0.5);
	s->rdtsc_cost = (long long)(p->costs.rdtsc_ns + 0.5);
	s->ticks_per_sec = (long long)(p->tb.hz + 0.5);
	s->loops_1000_cost = (long long)(p->costs.loops_1000_ns + 0.5);
}
