// SPDX-License-Identifier: GPL-2.0-only
/* trace.c - jtr trace: record the kernel events that can steal a CPU.
 *
 * Loads trace.bpf.c (tp_btf programs, or raw_tp where tp_btf does not load;
 * irq_vectors pairs discovered in tracefs and attached as tracepoints),
 * filters to the traced CPUs in the kernel, and drains the ring buffer on a
 * timer from a CPU that is not traced, so the tracer itself sends no
 * interrupt to a traced CPU. Writes events.bin (trace.h) and trace.json.
 *
 * This file is the tool: its options, main() and the drain loop. Its parts
 * are files of their own (ebpf/README.md): programs.c loads and attaches
 * the BPF side, ksyms.c names kernel addresses, trace_json.c writes
 * trace.json, watch_run.c runs --watch around watch.c's accounting; the
 * state they share is tracer.h's.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "calls.h"
#include "jtr_cli.h"
#include "jtr_probe.h"
#include "programs.h"
#include "trace.h"
#include "trace_json.h"
#include "tracer.h"
#include "watch.h"
#include "watch_run.h"

#define CAP_PERFMON_BIT 38
#define CAP_BPF_BIT 39
/* the default ring buffer keeps up with this many events a second per traced
 * CPU while the drain comes up to JTR_TRACE_LATE intervals late (a busy
 * draining CPU): a record takes 64 bytes and the ring buffer's 8-byte header */
#define JTR_TRACE_RATE	250000
#define JTR_TRACE_LATE	8
#define JTR_RB_RECORD	(JTR_EV_SIZE + 8)
#define JTR_LOG_BUF	(1 << 20)	/* stdio buffer of events.bin: few large writes */
/* events.bin's bound: the most the readers take (analysis/jtrpy/vocab.py
 * MAX_LOG_BYTES, 2 GiB; the environment may lower it, for tests) */
#define JTR_TRACE_LOG_MAX	(2ULL << 30)
#define JTR_CONSUMER_NICE -10		/* the drain must not wait behind busy tasks */

static const char usage_text[] =
"usage: jtr trace [OPTIONS]\n"
"       jtr trace --print [RESULTS_DIR | events.bin]\n"
"\n"
"Record, on the traced CPUs only, the kernel events that can take a CPU away from\n"
"a program: hardirqs, softirqs, the local timer and IPIs (every irq_vectors pair\n"
"the kernel has), NMIs, context switches, wake-ups, migrations, page faults,\n"
"workqueue items and timer expiries, and in a KVM guest the host's steal counter\n"
"of each traced CPU whenever it moved. Runs until the duration ends or Ctrl-C.\n"
"'jtr run' starts it beside the gap probe; 'jtr attribute' joins the two.\n"
"\n"
"options:\n"
"  -c, --cpus LIST          CPUs to trace (default: first isolated CPU, else the\n"
"                           last online one)\n"
"  -d, --duration DURATION  stop after this long (default: at Ctrl-C or SIGTERM)\n"
"  -o, --output DIR         results folder (default results/DATE-HOST-trace); an\n"
"                           existing folder is written into\n"
"  -b, --buffer SIZE        ring buffer size, a power of two from 4K to 1G\n"
"                           (K, M, G are x1024; default: room for 250,000\n"
"                           events a second per traced CPU over 8 drain\n"
"                           intervals, 16M for one CPU at 100ms), shared out\n"
"                           among the traced CPUs: a ring each\n"
"  -i, --drain-interval DUR how often the buffer is drained (default 100ms;\n"
"                           sooner while it fills fast)\n"
"      --consumer-cpu CPU   where the draining thread runs (default: the first\n"
"                           CPU that is not traced), at nice -10 there\n"
"      --programs KIND      auto (default), tp_btf or raw_tp\n"
"      --prog-stats MODE    how the programs are timed (trace.json's programs):\n"
"                           sampled (default: each program counts its runs and\n"
"                           times one in 64), kernel (the kernel's BPF\n"
"                           statistics: every run timed, with two clock reads\n"
"                           in each run of every BPF program on the machine\n"
"                           while on) or off; --no-prog-stats is off\n"
"      --floor              also attach two programs beside each of jtr's\n"
"                           (tp_btf; raw_tp on irq_vectors): trace.json's\n"
"                           programs then have floor_NAME (empty: what any\n"
"                           program on that tracepoint costs here) and\n"
"                           clock_NAME (reads the clock once: what a program\n"
"                           whose records carry a time costs at the least),\n"
"                           beside jtr's (make bench; with --watch the empty\n"
"                           ones only)\n"
"      --floor-only KIND    attach one kind of those in place of jtr's and\n"
"                           record nothing: empty (floor_NAME) or clock\n"
"                           (clock_NAME); what any tracer there costs the\n"
"                           traced CPUs (make bench); timed only with\n"
"                           --prog-stats kernel\n"
"      --wakeup             submit events with wake-ups (for tests: this sends\n"
"                           irq_work IPIs to the traced CPUs)\n"
"      --watch              jtr watch's mode: no log; count the interruptions of\n"
"                           the application on the traced CPUs by cause and print\n"
"                           them as one line of JSON on stdout every\n"
"                           --state-interval (default 1s), counted in the kernel;\n"
"                           with --dump-above DUR keep the last --keep (default 2m,\n"
"                           at most --recorder SIZE of records, default 64M) of\n"
"                           events and, when an interruption lasts that or more,\n"
"                           write them to DIR/dump-DATE-cpuN/ (at most --dump-max\n"
"                           N, default 20); --names N: names kept per CPU and\n"
"                           category (default 32, then \"other\"); --app COMM|PID\n"
"                           (a comma list, repeatable): the application's tasks,\n"
"                           by comm or process (default: per CPU, the comm that\n"
"                           has run there longest); --state-fd N: each state in\n"
"                           descriptor N (jtr watch's memfd; docs/fleet.md has\n"
"                           its layout), stdout only for dumps and the last\n"
"                           state; 'jtr watch' runs this (docs/fleet.md)\n"
"      --func BINARY:SYMBOL time every call of the function SYMBOL in BINARY\n"
"                           (an executable or a shared library; a name without\n"
"                           / is looked up as libbpf does) with a uprobe and a\n"
"                           uretprobe, and write a probe's results beside the\n"
"                           log: result.json (tool app), outliers.csv and\n"
"                           summary.txt; 'jtr run app' runs this\n"
"      --usdt BINARY:PROVIDER:START,END\n"
"                           as --func, a call being the time from the USDT\n"
"                           probe START to the probe END on the same thread\n"
"      --pid PID            --func: the calls of this process only (default:\n"
"                           every process that maps BINARY); its threads'\n"
"                           blocking system calls and waker are recorded, and\n"
"                           the trace ends when it exits\n"
"      --threshold DUR      --func: calls longer than this are outliers\n"
"                           (default max(1us, 8 x the warm-up's shortest))\n"
"      --warmup COUNT       --func: calls per CPU before recording (default 100)\n"
"      --max-outliers N     --func: outliers logged per CPU (default 1000000)\n"
"  -v, --verbose            show libbpf's messages\n"
"  -q, --quiet              no progress and no summary on stdout\n"
"  -h, --help               this text\n"
"\n"
"A duration is NUMBER[UNIT], UNIT ns, us, ms, s, m or h; a bare number is in\n"
"seconds, but -i still reads one as ms, with a warning: write the unit (100ms).\n"
"\n"
"Needs root (or CAP_BPF and CAP_PERFMON) and a kernel with BTF\n"
"(/sys/kernel/btf/vmlinux). Writes DIR/events.bin (64-byte records, see\n"
"docs/attribution.md) and DIR/trace.json (counts, drops, symbols). Without -d,\n"
"Ctrl-C or SIGTERM is how a trace ends: exit status 0. Stopped before -d ends,\n"
"what was recorded is written, marked partial, and the exit status is 130.\n"
"\n"
"examples:\n"
"  jtr trace -c 1 -d 10          ten seconds of CPU 1's kernel events\n"
"  jtr trace --print results/latest | less\n";

enum { OPT_CONSUMER = 400, OPT_PROGRAMS, OPT_NO_STATS, OPT_WAKEUP, OPT_WATCH, OPT_STATE,
       OPT_DUMP_ABOVE, OPT_KEEP, OPT_RECORDER, OPT_DUMP_MAX, OPT_NAMES, OPT_APP, OPT_FLOOR,
       OPT_FLOOR_ONLY, OPT_FUNC, OPT_PID, OPT_WARMUP, OPT_USDT, OPT_STATE_FD, OPT_STATS };

static const struct option long_opts[] = {
	{ "cpus", required_argument, NULL, 'c' },
	{ "cpu", required_argument, NULL, 'c' },
	{ "duration", required_argument, NULL, 'd' },
	{ "buffer", required_argument, NULL, 'b' },
	{ "drain-interval", required_argument, NULL, 'i' },
	{ "consumer-cpu", required_argument, NULL, OPT_CONSUMER },
	{ "programs", required_argument, NULL, OPT_PROGRAMS },
	{ "no-prog-stats", no_argument, NULL, OPT_NO_STATS },
	{ "prog-stats", required_argument, NULL, OPT_STATS },
	{ "floor", no_argument, NULL, OPT_FLOOR },
	{ "floor-only", required_argument, NULL, OPT_FLOOR_ONLY },
	{ "wakeup", no_argument, NULL, OPT_WAKEUP },
	{ "watch", no_argument, NULL, OPT_WATCH },
	{ "state-interval", required_argument, NULL, OPT_STATE },
	{ "state-fd", required_argument, NULL, OPT_STATE_FD },
	{ "dump-above", required_argument, NULL, OPT_DUMP_ABOVE },
	{ "keep", required_argument, NULL, OPT_KEEP },
	{ "recorder", required_argument, NULL, OPT_RECORDER },
	{ "dump-max", required_argument, NULL, OPT_DUMP_MAX },
	{ "names", required_argument, NULL, OPT_NAMES },
	{ "app", required_argument, NULL, OPT_APP },
	{ "func", required_argument, NULL, OPT_FUNC },
	{ "usdt", required_argument, NULL, OPT_USDT },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	JTR_PROBE_OUTLIER_LONG_OPTS,
	{ "verbose", no_argument, NULL, 'v' },
	{ "output", required_argument, NULL, 'o' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int log_event(struct tracer *t, const struct jtr_ev *e);

/* take_event - one record from the ring: appended, its addresses noted; a
 * softirq's, an hrtimer's or a vector's exit that carries its entry
 * (JTR_SIRQ_PAIR, JTR_HRT_PAIR, JTR_VEC_PAIR) as the two records */
static int take_event(struct tracer *t, void *data, size_t size)
{
	struct jtr_ev whole;
	int rc;

	/* a record as long as its type needs (trace.bpf.c JTR_EV_BYTES): the rest
	 * of the 64 bytes are zeros */
	if (size < JTR_EV_MIN || size > sizeof(whole))
		return 0;
	memcpy(&whole, data, size);
	memset((char *)&whole + size, 0, sizeof(whole) - size);
	if (whole.type == JTR_EV_SOFTIRQ_EXIT && (whole.flags & JTR_SIRQ_PAIR)) {
		struct jtr_ev entry = whole;

		entry.ts_ns = whole.b;
		entry.type = JTR_EV_SOFTIRQ_ENTRY;
		entry.flags = 0;
		entry.b = 0;
		whole.flags = 0;
		whole.b = 0;
		if ((rc = log_event(t, &entry)) < 0)
			return rc;
	}
	if (whole.type == JTR_EV_VEC_EXIT && (whole.flags & JTR_VEC_PAIR)) {
		struct jtr_ev entry = whole;

		entry.ts_ns = whole.b;
		entry.type = JTR_EV_VEC_ENTRY;
		entry.flags = 0;
		entry.a = (uint32_t)whole.a;
		entry.b = whole.a >> 32;
		whole.flags = 0;
		whole.a = entry.a;
		whole.b = entry.b;
		if ((rc = log_event(t, &entry)) < 0)
			return rc;
	}
	if (whole.type == JTR_EV_HRTIMER_EXIT && (whole.flags & JTR_HRT_PAIR)) {
		struct jtr_ev entry = whole;

		entry.ts_ns = whole.b;
		entry.type = JTR_EV_HRTIMER_ENTRY;
		entry.flags = 0;
		entry.b = whole.x[3];
		entry.x[3] = 0;
		memset(&whole.x, 0, sizeof(whole.x));
		whole.flags = 0;
		whole.b = 0;
		if ((rc = log_event(t, &entry)) < 0)
			return rc;
	}
	return log_event(t, &whole);
}

/* log_event - one record for the log: appended if in the window, its
 * addresses noted */
static int log_event(struct tracer *t, const struct jtr_ev *e)
{
	/* keep the time every program was attached: while they attach or detach one
	 * by one, an exit can come without its entry (and while they attach, the
	 * window has not begun: win_start_ns is 0 until every one is) */
	if (!t->win_start_ns || (int64_t)e->ts_ns < t->win_start_ns ||
	    (t->win_end_ns && (int64_t)e->ts_ns > t->win_end_ns)) {
		t->outside++;
		/* a task's groups are said once (trace.bpf.c note_task): said
		 * again at the task's next switch */
		if (e->type == JTR_EV_TASK && !t->win_end_ns)
			progs_forget_task(t, (uint32_t)e->a);
		return 0;
	}
	if (e->type == JTR_EV_TASK)
		jtr_cgroups_note(&t->groups, e);
	if (e->type == JTR_EV_CALL && t->calls)
		calls_event(t->calls, e);
	if (t->watch) {
		watch_run_notice(t, e);
		return 0;
	}
	/* the log at its bound: it ends where every CPU's records are in it (the
	 * last drain that took them all began there); the rest is outside it */
	if (t->log_end_ns ||
	    sizeof(struct jtr_ev_header) + (t->records + 1) * sizeof(*e) > t->log_max) {
		if (!t->log_end_ns)
			t->log_end_ns = t->consumed_to_ns > t->win_start_ns ? t->consumed_to_ns :
					t->win_start_ns;
		t->outside++;
		return 0;
	}
	if (fwrite(e, sizeof(*e), 1, t->log.f) != 1) {
		t->write_err = errno ? errno : EIO;
		return -t->write_err;
	}
	t->records++;
	jtr_addrs_note(&t->addrs, e);
	return 0;
}

/* PASS_CHECK - records between two looks at the clock in a drain pass */
#define PASS_CHECK 1024

/* on_event - ring buffer callback: the record taken; the ring's turn ends
 * (-ETIME) once its pass is past its end (progs_consume). libbpf has moved
 * past a record before it calls this: the record is taken first */
static int on_event(void *ctx, void *data, size_t size)
{
	struct tracer *t = ctx;
	int rc = take_event(t, data, size);

	if (rc < 0)
		return rc;
	if (t->pass_end_ns && !(++t->pass_records % PASS_CHECK) &&
	    jtr_mono_ns() > t->pass_end_ns)
		return -ETIME;
	return 0;
}

/* log_max - events.bin's bound: JTR_TRACE_LOG_MAX, or less where the
 * environment's JTR_TRACE_LOG_MAX (bytes, for tests) says so */
static uint64_t log_max(void)
{
	const char *s = getenv("JTR_TRACE_LOG_MAX");
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return JTR_TRACE_LOG_MAX;
	errno = 0;
	v = strtoull(s, &end, 10);
	return errno || *end || v > JTR_TRACE_LOG_MAX ? JTR_TRACE_LOG_MAX : v;
}

/* can_bpf - root, or CAP_BPF and CAP_PERFMON */
static bool can_bpf(void)
{
	uint64_t eff = 0, prm = 0;

	if (geteuid() == 0)
		return true;
	if (jtr_caps_read(&eff, &prm) < 0)
		return false;
	return (eff >> CAP_BPF_BIT & 1) && (eff >> CAP_PERFMON_BIT & 1);
}

/* pick_consumer - the first online, allowed CPU that is not traced */
static int pick_consumer(const cpu_set_t *traced)
{
	cpu_set_t on, al;

	if (jtr_cpus_online(&on) < 0 || jtr_cpus_allowed(&al) < 0)
		return -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &on) && CPU_ISSET(c, &al) && !CPU_ISSET(c, traced))
			return c;
	return -1;
}

/* default_buffer - the ring buffer for JTR_TRACE_RATE events a second on each
 * of @ncpus CPUs, drained JTR_TRACE_LATE x @drain_ns late: a power of two,
 * 8M to 1G */
static uint64_t default_buffer(int ncpus, uint64_t drain_ns)
{
	double need = (double)ncpus * JTR_TRACE_RATE * JTR_RB_RECORD * JTR_TRACE_LATE *
		      drain_ns / JTR_NS_PER_S;
	uint64_t b = 8 << 20;

	while (b < need && b < 1ULL << 30)
		b <<= 1;
	return b;
}

/* next_drain - how long to sleep after a drain that took @records, @since ns
 * after the drain before it: the time in which, at the rate they came, a ring
 * fills an eighth (as if every record came from one CPU: its ring is the one
 * that fills), the interval at most, 1 ms at least. An eighth: a drain may
 * come that many times as late before a ring is full (a busy draining CPU).
 * Scaled from the time they took to come, not from the interval: from the
 * interval, the fill went as the square root of the rate (a third of a ring a
 * drain at 2.2 million events a second, and a late drain lost events) */
static uint64_t next_drain(const struct tracer *t, int records, uint64_t since)
{
	const struct trace_opts *o = t->o;
	double filled = (double)records * JTR_RB_RECORD /
			(double)(t->ring_bytes ? t->ring_bytes : o->buffer_bytes);
	uint64_t ns = o->drain_ns;

	if (filled > 0 && since / (filled * JTR_TRACE_LATE) < (double)ns)
		ns = (uint64_t)(since / (filled * JTR_TRACE_LATE));
	return ns < JTR_NS_PER_MS ? JTR_NS_PER_MS : ns;
}

/* add_apps - --app's comma list: a PID (all digits) of a running process, or
 * a comm (its first 15 characters, as the kernel keeps them); or exit 2 */
static void add_apps(struct jtr_probe *p, struct trace_opts *o, const char *arg)
{
	char buf[4096], *save = NULL, *tok;
	const char *fix = "give the application's comm or PID, e.g. --app myapp or --app 1234";
	size_t n = strlen(arg);

	if (!n || arg[0] == ',' || arg[n - 1] == ',' || strstr(arg, ",,"))
		jtr_usage_error(p, "--app '%s': an empty name; %s", arg, fix);
	if (n >= sizeof(buf))
		jtr_usage_error(p, "--app: the list is too long; %s", fix);
	memcpy(buf, arg, n + 1);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (strspn(tok, "0123456789") == strlen(tok)) {
			char path[64];
			unsigned long pid = strtoul(tok, NULL, 10);

			snprintf(path, sizeof(path), "/proc/%lu", pid);
			if (strlen(tok) > 9 || !pid || access(path, F_OK) < 0)
				jtr_usage_error(p, "--app %s: no process %s is running; give the PID of "
						"a running process, or a comm", tok, tok);
			if (o->napp_pid == JTR_WATCH_APPS)
				jtr_usage_error(p, "--app %s: at most %d PIDs", tok, JTR_WATCH_APPS);
			o->app_pid[o->napp_pid++] = (uint32_t)pid;
		} else {
			if (o->napp_comm == JTR_WATCH_APPS)
				jtr_usage_error(p, "--app %s: at most %d comms", tok, JTR_WATCH_APPS);
			snprintf(o->app_comm[o->napp_comm++], JTR_COMM_LEN, "%s", tok);
		}
	}
}

/* set_func - --func BINARY:SYMBOL (split at the last colon), or exit 2 */
static void set_func(struct jtr_probe *p, struct trace_opts *o, const char *arg)
{
	const char *colon = strrchr(arg, ':');
	const char *fix = "give the binary and the function, e.g. --func ./my-app:on_tick or "
			  "--func libc.so.6:malloc";

	if (!colon || colon == arg || !colon[1])
		jtr_usage_error(p, "--func '%s': %s", arg, fix);
	if ((size_t)(colon - arg) >= sizeof(o->func_path) || strlen(colon + 1) >= sizeof(o->func_sym))
		jtr_usage_error(p, "--func: the name is too long; %s", fix);
	memcpy(o->func_path, arg, (size_t)(colon - arg));
	o->func_path[colon - arg] = 0;
	snprintf(o->func_sym, sizeof(o->func_sym), "%s", colon + 1);
}

/* set_usdt - --usdt BINARY:PROVIDER:START,END, or exit 2 */
static void set_usdt(struct jtr_probe *p, struct trace_opts *o, const char *arg)
{
	const char *fix = "give the binary, the provider and the two probes, e.g. --usdt "
			  "./my-app:myapp:request_start,request_end";
	char rest[sizeof(o->func_path)], *prov, *names, *comma;

	set_func(p, o, arg);		/* BINARY:PROVIDER and START,END */
	snprintf(rest, sizeof(rest), "%s", o->func_path);
	prov = strrchr(rest, ':');
	names = o->func_sym;
	comma = strchr(names, ',');
	if (!prov || prov == rest || !prov[1] || !comma || comma == names || !comma[1] ||
	    strchr(comma + 1, ','))
		jtr_usage_error(p, "--usdt '%s': %s", arg, fix);
	*prov++ = 0;
	*comma = 0;
	if (strlen(prov) >= sizeof(o->usdt_provider) || strlen(names) >= sizeof(o->usdt_start) ||
	    strlen(comma + 1) >= sizeof(o->usdt_end))
		jtr_usage_error(p, "--usdt: a name is too long; %s", fix);
	snprintf(o->usdt_provider, sizeof(o->usdt_provider), "%s", prov);
	snprintf(o->usdt_start, sizeof(o->usdt_start), "%s", names);
	snprintf(o->usdt_end, sizeof(o->usdt_end), "%s", comma + 1);
	snprintf(o->func_path, sizeof(o->func_path), "%s", rest);
	snprintf(o->func_sym, sizeof(o->func_sym), "%s:%s,%s", o->usdt_provider, o->usdt_start,
		 o->usdt_end);
	o->usdt = true;
}

/* parse_kind - --programs, --prog-stats or --floor-only (@opt): optarg, one
 * of its words, into @o, or exit 2 */
static void parse_kind(struct jtr_probe *p, struct trace_opts *o, int opt)
{
	static const struct { int opt; const char *word; int v; } words[] = {
		{ OPT_PROGRAMS, "auto", PROGS_AUTO }, { OPT_PROGRAMS, "tp_btf", PROGS_BTF },
		{ OPT_PROGRAMS, "raw_tp", PROGS_RAW }, { OPT_STATS, "sampled", STATS_SAMPLED },
		{ OPT_STATS, "kernel", STATS_KERNEL }, { OPT_STATS, "off", STATS_OFF },
		{ OPT_FLOOR_ONLY, "empty", FLOOR_EMPTY }, { OPT_FLOOR_ONLY, "clock", FLOOR_CLOCK },
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (words[i].opt != opt || strcmp(optarg, words[i].word))
			continue;
		if (opt == OPT_PROGRAMS)
			o->progs = (enum prog_kind)words[i].v;
		else if (opt == OPT_STATS)
			o->prog_stats = (enum prog_stats)words[i].v;
		else
			o->floor_only = (enum floor_only)words[i].v;
		o->stats_given |= opt == OPT_STATS;
		return;
	}
	jtr_usage_error(p, opt == OPT_PROGRAMS ? "--programs %s: use auto, tp_btf or raw_tp" :
			opt == OPT_STATS ? "--prog-stats %s: use sampled, kernel or off" :
			"--floor-only %s: use empty or clock", optarg);
}

/* parse_opt - getopt's @opt (with optarg) into @o, or exit 2 (-h: exit 0) */
static void parse_opt(struct jtr_probe *p, struct trace_opts *o, int opt, char **argv,
		      bool *cpu_given)
{
	struct jtr_err e;
	uint64_t v;
	bool none;

	switch (opt) {
	case 'c': jtr_opt_cpus(p, optarg, false, &o->cpus, &none); *cpu_given = true; break;
	case 'd':
		o->duration_ns = jtr_opt_duration(p, "-d", optarg, JTR_NS_PER_MS,
						  7 * 24 * 3600 * JTR_NS_PER_S);
		break;
	case 'o': p->out_opt = optarg; break;
	case 'b':
		jtr_err_clear(&e);
		if (jtr_parse_size(optarg, 4096, 1ULL << 30, &v, &e) < 0)
			jtr_usage_error(p, "-b %s: %s", optarg, e.msg);
		if (v & (v - 1))
			jtr_usage_error(p, "-b %s: the ring buffer must be a power of two from 4K "
					"to 1G, e.g. 4K, 256K, 8M", optarg);
		o->buffer_bytes = v;
		break;
	case 'i':
		o->drain_ns = jtr_opt_duration_legacy(p, "-i", optarg, JTR_NS_PER_MS,
						      JTR_NS_PER_MS, 10 * JTR_NS_PER_S);
		break;
	case OPT_CONSUMER:
		o->consumer_cpu = jtr_opt_int(p, "--consumer-cpu", optarg, 0, CPU_SETSIZE - 1);
		break;
	case OPT_PROGRAMS:
	case OPT_STATS:
	case OPT_FLOOR_ONLY:
		parse_kind(p, o, opt);
		break;
	case OPT_NO_STATS:
		o->prog_stats = STATS_OFF;
		o->stats_given = true;
		break;
	case OPT_FLOOR: o->floor = true; break;
	case OPT_WAKEUP: o->wakeup = true; break;
	case OPT_WATCH: o->watch = true; break;
	case OPT_STATE:
		o->state_ns = jtr_opt_duration(p, "--state-interval", optarg, 10 * JTR_NS_PER_MS,
					       3600 * JTR_NS_PER_S);
		break;
	case OPT_STATE_FD:
		o->state_fd = (int)jtr_opt_count(p, "--state-fd", optarg, 0, INT_MAX);
		if (fcntl(o->state_fd, F_GETFD) < 0)
			jtr_usage_error(p, "--state-fd %s: no such open descriptor; jtr watch "
					"passes one it made (a memfd)", optarg);
		break;
	case OPT_DUMP_ABOVE:
		o->dump_above_ns = jtr_opt_duration(p, "--dump-above", optarg, 1000,
						    3600 * JTR_NS_PER_S);
		break;
	case OPT_KEEP:
		o->keep_ns = jtr_opt_duration(p, "--keep", optarg, JTR_NS_PER_S,
					      24 * 3600 * JTR_NS_PER_S);
		break;
	case OPT_RECORDER:
		jtr_err_clear(&e);
		if (jtr_parse_size(optarg, 64 << 10, 16ULL << 30, &o->recorder_bytes, &e) < 0)
			jtr_usage_error(p, "--recorder %s: %s", optarg, e.msg);
		break;
	case OPT_DUMP_MAX:
		o->dump_max = jtr_opt_count(p, "--dump-max", optarg, 0, 1000000);
		break;
	case OPT_NAMES:
		o->names = jtr_opt_int(p, "--names", optarg, 1, 1024);
		break;
	case OPT_APP: add_apps(p, o, optarg); break;
	case OPT_FUNC:
	case OPT_USDT:
		if (o->func_sym[0])
			jtr_usage_error(p, "--func and --usdt: give one function or one USDT pair");
		if (opt == OPT_FUNC)
			set_func(p, o, optarg);
		else
			set_usdt(p, o, optarg);
		break;
	case OPT_PID:
		o->func_pid = jtr_opt_int(p, "--pid", optarg, 1, 1 << 30);
		if (kill(o->func_pid, 0) < 0 && errno == ESRCH)
			jtr_usage_error(p, "--pid %s: no process %s is running; give the PID of a "
					"running process (pgrep NAME finds it)", optarg, optarg);
		break;
	case OPT_WARMUP: o->warmup = jtr_opt_count(p, "--warmup", optarg, 0, 1000000); break;
	case JTR_OPT_THRESHOLD:
	case JTR_OPT_MAX_OUTLIERS:
		jtr_probe_outlier_opt(p, opt, optarg, &o->threshold_ns, &o->max_outliers);
		o->threshold_given |= opt == JTR_OPT_THRESHOLD;
		break;
	case 'v': o->verbose = true; break;
	case 'q': p->quiet = true; p->progress = false; break;
	case 'h': fputs(usage_text, stdout); exit(0);
	default: jtr_unknown_option(p, opt, optopt, argv[optind - 1]);
	}
}

/* check_traced - -c: every CPU online (traced from elsewhere: it need not be
 * one this process may run on, such as an isolated CPU in a cpuset partition) */
static void check_traced(struct jtr_probe *p, const cpu_set_t *set)
{
	cpu_set_t on;
	char list[256];

	jtr_cpus_online(&on);
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, set) && !CPU_ISSET(cpu, &on)) {
			jtr_format_cpulist(&on, list, sizeof(list));
			jtr_usage_error(p, "-c: CPU %d is not online; online CPUs: %s", cpu, list);
		}
}

/* check_consumer - --consumer-cpu CPU: online, allowed, and not traced
 * unless every CPU is; or exit 2 */
static void check_consumer(struct jtr_probe *p, const struct trace_opts *o)
{
	cpu_set_t online, rest;
	struct jtr_err e;

	jtr_err_clear(&e);
	if (jtr_cpu_check(o->consumer_cpu, &e) < 0)
		jtr_usage_error(p, "--consumer-cpu %d: %s", o->consumer_cpu, e.msg);
	jtr_cpus_online(&online);
	CPU_XOR(&rest, &online, &o->cpus);
	CPU_AND(&rest, &rest, &online);
	/* a traced one only when every CPU is traced (jtr run picks the quiet end) */
	if (CPU_ISSET(o->consumer_cpu, &o->cpus) && CPU_COUNT(&rest) > 0)
		jtr_usage_error(p, "--consumer-cpu %d is traced: choose a CPU outside -c, or the "
				"tracer's own wake-ups show up in the trace", o->consumer_cpu);
}

/* parse_args - options into @o, or exit 2 */
static void parse_args(struct jtr_probe *p, struct trace_opts *o, int argc, char **argv)
{
	bool cpu_given = false;
	int opt;

	memset(o, 0, sizeof(*o));
	o->buffer_bytes = 0;		/* from the rate, once the CPUs are known */
	o->drain_ns = 100 * JTR_NS_PER_MS;
	o->consumer_cpu = -1;
	o->prog_stats = STATS_SAMPLED;
	o->state_ns = JTR_NS_PER_S;
	o->state_fd = -1;
	o->keep_ns = 120 * JTR_NS_PER_S;
	o->recorder_bytes = 64 << 20;
	o->dump_max = 20;
	o->names = JTR_WATCH_NAMES;
	o->func_pid = -1;
	o->warmup = JTR_CALLS_WARMUP;
	o->max_outliers = 1000000;
	while ((opt = getopt_long(argc, argv, ":c:d:o:b:i:vqh", long_opts, NULL)) != -1)
		parse_opt(p, o, opt, argv, &cpu_given);
	jtr_probe_no_args(p, argc, argv);
	if (!o->watch && (o->dump_above_ns || o->state_ns != JTR_NS_PER_S || o->state_fd >= 0))
		jtr_usage_error(p, "--dump-above, --state-interval and --state-fd go with --watch");
	if (!o->watch && (o->napp_comm || o->napp_pid))
		jtr_usage_error(p, "--app goes with --watch");
	if (!o->func_sym[0] && (o->func_pid > 0 || o->threshold_given || o->warmup != JTR_CALLS_WARMUP))
		jtr_usage_error(p, "--pid, --threshold and --warmup go with --func BINARY:SYMBOL or "
				"--usdt");
	if (o->func_sym[0] && o->watch)
		jtr_usage_error(p, "--func and --watch: jtr watch counts interruptions, it times no "
				"calls; leave one out");
	/* the application's threads: their blocking calls and wakers are noted */
	if (o->func_pid > 0) {
		o->app_pid[0] = (uint32_t)o->func_pid;
		o->napp_pid = 1;
	}
	/* the empty programs are timed by the kernel's statistics only */
	if (o->floor && o->stats_given && o->prog_stats != STATS_KERNEL)
		jtr_usage_error(p, "--floor with %s: the empty programs are read by the "
				"kernel's BPF statistics; leave it out",
				o->prog_stats == STATS_OFF ? "--no-prog-stats" :
				"--prog-stats sampled");
	if (o->floor && o->progs == PROGS_RAW)
		jtr_usage_error(p, "--floor with --programs raw_tp: the empty programs are "
				"tp_btf; leave it out");
	if (o->floor)
		o->prog_stats = STATS_KERNEL;
	/* the floor programs time nothing themselves: the kernel times them, or
	 * nothing does (their cost on what is traced is then measured outside) */
	if (o->floor_only && (o->floor || o->watch || o->func_sym[0]))
		jtr_usage_error(p, "--floor-only with %s: it attaches no program of jtr's; "
				"leave one out", o->floor ? "--floor" : o->watch ? "--watch" :
				o->usdt ? "--usdt" : "--func");
	if (o->floor_only && o->stats_given && o->prog_stats == STATS_SAMPLED)
		jtr_usage_error(p, "--floor-only with --prog-stats sampled: the floor programs "
				"time nothing themselves; use kernel or off");
	if (o->floor_only && o->progs == PROGS_RAW)
		jtr_usage_error(p, "--floor-only with --programs raw_tp: the floor programs are "
				"tp_btf; leave it out");
	if (o->floor_only && o->prog_stats == STATS_SAMPLED)
		o->prog_stats = STATS_OFF;
	jtr_probe_default_cpus(&o->cpus, cpu_given);
	check_traced(p, &o->cpus);
	if (!o->buffer_bytes)
		o->buffer_bytes = default_buffer(CPU_COUNT(&o->cpus), o->drain_ns);
	if (o->consumer_cpu >= 0)
		check_consumer(p, o);
}

/* check_kernel - what the kernel and our privileges allow, or exit 2 */
static void check_kernel(struct jtr_probe *p)
{
	struct jtr_err e;

	if (!can_bpf())
		jtr_usage_error(p, "tracing needs root (or CAP_BPF and CAP_PERFMON): run 'sudo jtr "
				"trace', or 'sudo jtr run' to measure and attribute in one go");
	if (access("/sys/kernel/btf/vmlinux", R_OK) < 0)
		jtr_usage_error(p, "this kernel has no BTF (/sys/kernel/btf/vmlinux is missing): the "
				"tracer needs a kernel built with CONFIG_DEBUG_INFO_BTF=y, as Debian, "
				"Ubuntu, Fedora and RHEL kernels are");
	jtr_err_clear(&e);
	if (progs_tracefs_ready(&e) < 0)
		jtr_usage_error(p, "%s", e.msg);
}

/* setup_consumer - the draining thread (this one): its CPU in
 * t->consumer_cpu (--consumer-cpu, else the first that is not traced),
 * pinned there, and at JTR_CONSUMER_NICE where that takes nothing from what
 * is traced */
static void setup_consumer(struct tracer *t)
{
	const struct trace_opts *o = t->o;
	struct jtr_probe *p = t->p;
	int consumer = o->consumer_cpu >= 0 ? o->consumer_cpu : pick_consumer(&o->cpus);
	bool traced_consumer = consumer >= 0 && CPU_ISSET(consumer, &o->cpus);

	t->consumer_cpu = consumer;
	if (consumer < 0)
		jtr_warn(p, "every CPU is traced: the draining thread's wake-ups every %s will show "
			 "in the trace; leave one CPU out of -c", o->drain_ns >= JTR_NS_PER_S ? "second" :
			 "interval");
	else if (traced_consumer)
		jtr_warn(p, "every CPU is traced: the draining thread runs on CPU %d, where its "
			 "wake-ups show in the trace", consumer);
	if (consumer >= 0 && jtr_pin_self(consumer) < 0)
		jtr_fatal(p, "cannot run on CPU %d: %s", consumer, strerror(errno));
	/* a drain that waits behind the busy tasks of its CPU loses events; on an
	 * untraced CPU only, where it takes nothing from what is measured */
	if (consumer >= 0 && !traced_consumer && setpriority(PRIO_PROCESS, 0, JTR_CONSUMER_NICE) < 0)
		jtr_warn(p, "cannot run the drain at nice %d (%s): a busy CPU %d may delay it",
			 JTR_CONSUMER_NICE, strerror(errno), consumer);
	t->consumer_nice = getpriority(PRIO_PROCESS, 0);
}

/* open_log - events.bin and its header (@hdr: the totals still 0), before
 * anything is traced; none with --watch */
static void open_log(struct tracer *t, struct jtr_ev_header *hdr)
{
	memset(hdr, 0, sizeof(*hdr));
	memcpy(hdr->magic, JTR_EV_MAGIC, sizeof(hdr->magic));
	hdr->version = JTR_EV_VERSION;
	hdr->record_size = JTR_EV_SIZE;
	if (t->o->watch)
		return;
	jtr_probe_open(t->p, &t->log, "events.bin");
	setvbuf(t->log.f, NULL, _IOFBF, JTR_LOG_BUF);
	if (fwrite(hdr, sizeof(*hdr), 1, t->log.f) != 1)
		jtr_fatal(t->p, "cannot write %s: %s", t->log.path, strerror(errno));
}

/* load - load and attach: tp_btf first, raw_tp where tp_btf does not load
 * (--programs); the BPF run-time statistics' descriptor (-1: none). Neither
 * loads: nothing kept, exit 2 or 1 saying why */
static int load(struct tracer *t)
{
	const struct trace_opts *o = t->o;
	struct jtr_probe *p = t->p;
	struct jtr_err e;
	int stats_fd = -1, rc = -EINVAL;

	progs_steal_check(t);
	if (o->prog_stats == STATS_KERNEL)
		stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (o->progs != PROGS_RAW) {
		jtr_err_clear(&e);
		rc = progs_start(t, PROGS_BTF, on_event, &e);
		if (rc < 0 && o->progs == PROGS_AUTO && !t->calls_denied)
			jtr_warn(p, "tp_btf programs did not load (%s); using raw_tp", e.msg);
	}
	if (rc < 0 && o->progs != PROGS_BTF && !t->calls_denied) {
		jtr_err_clear(&e);
		rc = progs_start(t, PROGS_RAW, on_event, &e);
	}
	if (rc >= 0)
		return stats_fd;
	if (!o->watch)
		jtr_afile_abort(&t->log);
	jtr_outdir_abort(&p->out);
	if (t->calls_denied)
		jtr_usage_error(p, "%s", e.msg);
	if (rc == -EPERM)
		jtr_usage_error(p, "%s; the kernel may be locked down (see "
				"/sys/kernel/security/lockdown) or this container lacks "
				"CAP_BPF", e.msg);
	if (rc == -EACCES)
		jtr_fatal(p, "%s; the verifier rejected a program: run with -v to see why "
			  "and report it", e.msg);
	jtr_fatal(p, "%s", e.msg);
}

/* say_start - "tracing CPU 1: ..." on stdout, once every program is attached
 * (jtr run and the tests wait for this line) */
static void say_start(const struct tracer *t)
{
	char cpus[256];

	jtr_format_cpulist(&t->o->cpus, cpus, sizeof(cpus));
	printf("tracing CPU%s %s: %zu tracepoints (%s programs%s), draining every %.0f ms "
	       "from CPU %d%s\n", strchr(cpus, ',') || strchr(cpus, '-') ? "s" : "", cpus,
	       t->nlinks, t->kind, t->o->floor_only == FLOOR_EMPTY ? ", empty: no records" :
	       t->o->floor_only == FLOOR_CLOCK ? " that read the clock: no records" : "",
	       t->o->drain_ns / 1e6, t->consumer_cpu, t->o->duration_ns ? "" : "; Ctrl-C to stop");
	fflush(stdout);
}

/* sleep_ns - nanosleep that returns early on a signal */
static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = ns / JTR_NS_PER_S, .tv_nsec = ns % JTR_NS_PER_S };

	nanosleep(&ts, NULL);
}

/* progress as lines (the traced program writes to the same terminal): this often */
#define PROGRESS_LINES_NS	(3 * (int64_t)JTR_NS_PER_S)

/* shares_terminal - does process @pid write to the terminal our stderr is (its
 * fd 1 or 2 that same character device)? Its lines and a progress line redrawn
 * in place would run into each other ('...0 droppedcalls 3000') */
static bool shares_terminal(pid_t pid)
{
	struct stat mine, its;
	char path[64];

	if (!isatty(2) || fstat(2, &mine) < 0 || !S_ISCHR(mine.st_mode))
		return false;
	for (int fd = 1; fd <= 2; fd++) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
		if (stat(path, &its) == 0 && S_ISCHR(its.st_mode) && its.st_rdev == mine.st_rdev)
			return true;
	}
	return false;
}

/* drain - drain the ring buffer on a timer from @start_ns until the duration
 * ends or a signal comes (or the log cannot be written) */
static void drain(struct tracer *t, int64_t start_ns)
{
	const struct trace_opts *o = t->o;
	int64_t last_progress = start_ns;
	/* the first drain soon, so that next_drain learns the rate early: after
	 * a whole interval first, a flood of 2.2 million events a second had
	 * filled the ring before it */
	uint64_t pause = o->drain_ns / JTR_TRACE_LATE;
	int64_t last_drain = start_ns;

	while (!jtr_stop && !t->write_err) {
		int64_t now = jtr_mono_ns(), pass_end;
		uint64_t n = 0;
		int pass;

		if (o->duration_ns && (uint64_t)(now - start_ns) >= o->duration_ns)
			break;
		/* --func --pid: the process is gone, nothing more will be called */
		if (o->func_pid > 0 && kill(o->func_pid, 0) < 0 && errno == ESRCH) {
			t->app_gone = true;
			break;
		}
		sleep_ns(o->duration_ns && o->duration_ns - (now - start_ns) < pause ?
			 o->duration_ns - (now - start_ns) : pause);
		/* a pass ends by the next drain's time, or the duration's end */
		now = jtr_mono_ns();
		pass_end = now + (int64_t)o->drain_ns;
		if (o->duration_ns && start_ns + (int64_t)o->duration_ns < pass_end)
			pass_end = start_ns + (int64_t)o->duration_ns;
		pass = progs_consume(t, pass_end > now ? pass_end : now + 1, &n);
		if (pass == 0)		/* every ring emptied: all made before now is in */
			t->consumed_to_ns = now;
		now = jtr_mono_ns();
		pause = pass > 0 ? 0 : next_drain(t, n > (uint64_t)INT_MAX ? INT_MAX : (int)n,
					    (uint64_t)(now - last_drain));
		last_drain = now;
		if (o->watch)
			pause = watch_run_drained(t, pause);
		if (t->p->progress && jtr_mono_ns() - last_progress >=
		    (t->p->progress_lines ? PROGRESS_LINES_NS : (int64_t)JTR_NS_PER_S)) {
			last_progress = jtr_mono_ns();
			uint64_t calls = 0, slow = 0;
			int rc = progs_read_counts(t);

			for (int i = 0; t->calls && i < t->calls->n; i++) {
				calls += t->calls->cpus[i].hist.total;
				slow += t->calls->cpus[i].lengths.total;
			}
			if (rc == 0 && t->calls)
				jtr_progress_line(t->p, "timing %s %.0f s: %llu calls, %llu slow; "
						  "%llu events, %llu dropped", t->calls->sym,
						  (last_progress - start_ns) / 1e9,
						  (unsigned long long)calls, (unsigned long long)slow,
						  (unsigned long long)progs_sum(t->total.events),
						  (unsigned long long)progs_sum(t->total.dropped));
			else if (rc == 0)
				jtr_progress_line(t->p, "tracing %.0f s: %llu events, %llu dropped",
						  (last_progress - start_ns) / 1e9,
						  (unsigned long long)progs_sum(t->total.events),
						  (unsigned long long)progs_sum(t->total.dropped));
		}
	}
}

/* write_log - once detached: what is left in the buffer, the log's totals in
 * its header @hdr, the log committed, then trace.json; or exit 1 */
static void write_log(struct tracer *t, struct jtr_ev_header *hdr, int64_t start_ns,
		      int64_t end_ns)
{
	struct jtr_probe *p = t->p;
	struct jtr_afile tj;
	int rc;

	progs_consume(t, 0, NULL);
	/* the softirqs, hrtimer callbacks and vectors entered and not left by the end */
	{
		struct jtr_ev *kept = NULL;
		int n = progs_kept_entries(t, &kept);

		for (int i = 0; i < n; i++)
			if ((rc = log_event(t, &kept[i])) < 0)
				jtr_fatal(p, "cannot write %s: %s", t->log.path, strerror(-rc));
		free(kept);
	}
	t->tracing_cpu_ns = process_cpu_ns() - t->setup_cpu_ns;
	if (t->log_end_ns && t->log_end_ns < end_ns) {
		jtr_warn(p, "the event log reached its bound (%llu bytes; 2 GiB, the most jtr "
			 "reads, unless JTR_TRACE_LOG_MAX says less) %.3f s into the trace: it "
			 "holds every CPU's events up to there, and outliers after it are 'not "
			 "traced'; trace fewer CPUs, or for less time",
			 (unsigned long long)t->log_max, (t->log_end_ns - start_ns) / 1e9);
		end_ns = t->log_end_ns;		/* the log's window ends there */
	}
	if (p->progress)
		jtr_progress_clear(p);
	if (t->write_err)
		jtr_fatal(p, "cannot write %s: %s", t->log.path, strerror(t->write_err));
	if ((rc = progs_read_counts(t)) < 0)
		jtr_fatal(p, "cannot read the tracer's counters: %s", strerror(-rc));

	/* the header's totals, then the files */
	hdr->end_ns = end_ns;
	hdr->records = t->records;
	hdr->dropped = progs_sum(t->total.dropped);
	if (fseek(t->log.f, 0, SEEK_SET) < 0 || fwrite(hdr, sizeof(*hdr), 1, t->log.f) != 1)
		jtr_fatal(p, "cannot write %s: %s", t->log.path, strerror(errno));
	if (hdr->dropped)
		jtr_warn(p, "%llu events were dropped (ring buffer full): use a larger -b or a "
			 "shorter -i", (unsigned long long)hdr->dropped);
	jtr_probe_commit_file(p, &t->log);
	jtr_probe_open(p, &tj, "trace.json");
	trace_json_write(t, &tj, start_ns, end_ns, t->records, &t->addrs);
	if (!p->quiet)
		printf("traced %.2f s: %llu events written, %llu dropped\n", (end_ns - start_ns) / 1e9,
		       (unsigned long long)t->records, (unsigned long long)hdr->dropped);
}

/* unload - the programs and the statistics off */
static void unload(struct tracer *t, int stats_fd)
{
	progs_stop(t);
	if (stats_fd >= 0)
		close(stats_fd);
}

int main(int argc, char **argv)
{
	struct jtr_ev_header hdr;
	struct jtr_watch watch;
	struct calls calls;
	struct jtr_probe p;
	struct tracer t;
	struct trace_opts o;
	int64_t start_ns, end_ns;
	int stats_fd;

	jtr_probe_init(&p, "trace", argc, argv);
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--watch"))	/* speak as the command the user ran */
			snprintf(p.prog, sizeof(p.prog), "jtr watch");
	parse_args(&p, &o, argc, argv);
	memset(&t, 0, sizeof(t));
	if (jtr_cgroups_init(&t.groups, NULL) < 0)
		jtr_fatal(&p, "no memory for the table of cgroups");
	t.p = &p;
	t.o = &o;
	t.log_max = log_max();
	progs_libbpf_print(&t);
	if (o.watch)
		watch_run_init(&t, &watch);
	check_kernel(&p);
	if (o.func_pid > 0 && p.progress)
		p.progress_lines = shares_terminal(o.func_pid);
	if (o.func_sym[0]) {
		memset(&calls, 0, sizeof(calls));
		calls.path = o.func_path;
		calls.sym = o.func_sym;
		calls.usdt = o.usdt;
		calls.pid = o.func_pid;
		calls.threshold_opt = o.threshold_ns;
		calls.threshold_given = o.threshold_given;
		calls.warmup = o.warmup;
		calls.max_outliers = o.max_outliers;
		calls_init(&calls, &p, &o.cpus);
		t.calls = &calls;
	}
	setup_consumer(&t);

	/* the programs loaded and attached while the privilege is held (CAP_BPF and
	 * CAP_PERFMON without root: the drop below clears them), nothing of the
	 * user's touched yet; what they record before the log is open is before
	 * the window and not kept (on_event). Then, as the user, the results
	 * folder and the log */
	stats_fd = load(&t);
	p.shrink = t.calls ? "lower -b/--buffer or --max-outliers" : "lower -b/--buffer";
	jtr_probe_privileged(&p);
	open_log(&t, &hdr);
	if (t.calls)		/* the result's start: jtr run app's */
		jtr_probe_map_begin(&p);
	start_ns = hdr.start_ns = t.win_start_ns = jtr_mono_ns();
	t.setup_cpu_ns = process_cpu_ns();
	if (o.watch)
		watch_run_begin(&t, start_ns);
	if (!p.quiet)
		say_start(&t);
	drain(&t, start_ns);

	/* stop: detach first, then take what is left in the buffer; without -d
	 * a signal is the normal end, with -d one before it is an interruption */
	end_ns = t.win_end_ns = jtr_mono_ns();
	if (t.calls)
		jtr_probe_map_end(&p);
	p.partial = o.duration_ns && (uint64_t)(end_ns - start_ns) < o.duration_ns && !t.app_gone;
	/* jtr run app: the program's exit ends it; a stop signal before that cuts it
	 * short, -d or not */
	if (t.calls && jtr_stop && !t.app_gone)
		p.partial = true;
	if (o.watch)
		watch_run_stop(&t);	/* what detaching does is not counted */
	progs_detach(&t);
	if (o.watch) {
		watch_run_end(&t, end_ns);
		unload(&t, stats_fd);
		jtr_watch_free(&watch);
		jtr_cgroups_free(&t.groups);
		jtr_probe_finish(&p);
		return 0;
	}
	if (jtr_probe_orphaned()) {
		/* the front end that would have read the log died (even by SIGKILL):
		 * nobody will, so leave nothing behind in its temporary folder */
		jtr_afile_abort(&t.log);
		jtr_outdir_abort(&p.out);
		rmdir(p.out.final);
		fprintf(stderr, "%s: the program that started the tracer is gone; nothing kept\n",
			p.prog);
		return 1;
	}
	write_log(&t, &hdr, start_ns, end_ns);
	if (t.calls) {
		calls.dropped = t.total.dropped[JTR_EV_CALL];
		p.tool = "app";
		calls_write(&calls, start_ns, end_ns);
		calls_free(&calls);
	}
	unload(&t, stats_fd);
	jtr_addrs_free(&t.addrs);
	jtr_cgroups_free(&t.groups);
	jtr_probe_finish(&p);
	return o.duration_ns ? jtr_probe_exit(&p, 0) : 0;
}
