// SPDX-License-Identifier: GPL-2.0-only
/* programs.c - load the tracer's BPF programs (trace.bpf.c, through its
 * skeleton) and attach them: tp_btf programs, or raw_tp where tp_btf does not
 * load; irq_vectors pairs discovered in tracefs and attached as raw
 * tracepoints; detached by several threads at the end (programs.h says why
 * this is a file of its own).
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "jtr_clock.h"
#include "programs.h"
#include "watch_run.h"
#include "trace.skel.h"
#include "watch.skel.h"

#define TRACEFS "/sys/kernel/tracing"

/* the typed tracepoints, each with a tp_btf and a raw_tp program; a
 * tracepoint's index is its programs' id (enum jtr_prog_id) */
#define TP_DEF(cat, name) { #cat, #name },
static const struct tp_def {
	const char *cat, *name;
} tps[] = { JTR_TPS(TP_DEF) };
#undef TP_DEF
_Static_assert(sizeof(tps) / sizeof(tps[0]) == TRACER_NTPS, "TRACER_NTPS: tracer.h");

static struct tracer *g_tracer;		/* for libbpf's print callback */

/* on_libbpf - keep libbpf's last warning for error messages; print all with -v */
static int on_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	va_list aq;

	if (g_tracer && level <= LIBBPF_WARN) {
		va_copy(aq, ap);
		vsnprintf(g_tracer->last_libbpf, sizeof(g_tracer->last_libbpf), fmt, aq);
		va_end(aq);
		g_tracer->last_libbpf[strcspn(g_tracer->last_libbpf, "\n")] = 0;
	}
	if (g_tracer && g_tracer->o->verbose)
		return vfprintf(stderr, fmt, ap);
	return 0;
}

/* progs_libbpf_print - see programs.h */
void progs_libbpf_print(struct tracer *t)
{
	g_tracer = t;
	libbpf_set_print(on_libbpf);
}


/* the kernel's BTF, where tracefs may not be read (CAP_BPF and CAP_PERFMON
 * without root: tracefs is root's); NULL: tracefs is read */
static struct btf *tp_btf_names;

/* progs_tracefs_ready - make sure tracefs is mounted; mount it if not. Not
 * root and tracefs not readable: the tracepoints are looked up in the kernel's
 * BTF instead (each has its btf_trace_NAME type; attaching by name needs no
 * tracefs) */
int progs_tracefs_ready(struct jtr_err *e)
{
	struct stat st;

	if (stat(TRACEFS "/events", &st) == 0)
		return 0;
	if (geteuid() != 0 && (errno == EACCES || errno == ENOENT)) {
		tp_btf_names = btf__load_vmlinux_btf();
		if (tp_btf_names)
			return 0;
	}
	if (mount("nodev", TRACEFS, "tracefs", 0, NULL) < 0 && errno != EBUSY)
		return jtr_err_set(e, -errno, "tracefs is not mounted and mounting it on " TRACEFS
				   " failed (%s); mount it with 'mount -t tracefs nodev " TRACEFS "'",
				   strerror(errno));
	if (stat(TRACEFS "/events", &st) < 0)
		return jtr_err_set(e, -ENOENT, TRACEFS "/events is missing after mounting tracefs: "
				   "this kernel has no tracepoints (CONFIG_TRACEPOINTS)");
	return 0;
}

/* tp_exists - is CAT:NAME a tracepoint of this kernel? */
static bool tp_exists(const char *cat, const char *name)
{
	char path[256];
	struct stat st;

	if (tp_btf_names) {
		snprintf(path, sizeof(path), "btf_trace_%s", name);
		return btf__find_by_name_kind(tp_btf_names, path, BTF_KIND_TYPEDEF) >= 0;
	}
	snprintf(path, sizeof(path), TRACEFS "/events/%s/%s", cat, name);
	return stat(path, &st) == 0;
}

/* the irq_vectors pairs x86 kernels have: what is looked for in the BTF where
 * tracefs, which lists them, may not be read */
static const char *const known_vectors[] = {
	"call_function", "call_function_single", "deferred_error_apic", "error_apic",
	"irq_work", "local_timer", "reschedule", "spurious_apic", "thermal_apic",
	"threshold_apic", "x86_platform_ipi",
};

/* cmp_str - qsort on strings */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* discover_vectors - every irq_vectors:X_entry that has an X_exit */
static void discover_vectors(struct tracer *t)
{
	DIR *d = opendir(TRACEFS "/events/irq_vectors");
	struct dirent *de;
	size_t len;

	t->nvecs = 0;
	if (tp_btf_names) {
		for (size_t i = 0; i < sizeof(known_vectors) / sizeof(known_vectors[0]); i++) {
			char name[64];

			snprintf(name, sizeof(name), "%s_entry", known_vectors[i]);
			if (!tp_exists("irq_vectors", name))
				continue;
			snprintf(name, sizeof(name), "%s_exit", known_vectors[i]);
			if (tp_exists("irq_vectors", name) && t->nvecs < JTR_TRACE_MAX_VECS)
				snprintf(t->vec_names[t->nvecs++], sizeof(t->vec_names[0]), "%s",
					 known_vectors[i]);
		}
		return;
	}
	if (!d)
		return;
	while ((de = readdir(d)) && t->nvecs < JTR_TRACE_MAX_VECS) {
		len = strlen(de->d_name);
		if (len <= 6 || len >= sizeof(t->vec_names[0]) ||
		    strcmp(de->d_name + len - 6, "_entry"))
			continue;
		snprintf(t->vec_names[t->nvecs], sizeof(t->vec_names[0]), "%.*s",
			 (int)(len - 6), de->d_name);
		char exitname[64];
		snprintf(exitname, sizeof(exitname), "%s_exit", t->vec_names[t->nvecs]);
		if (tp_exists("irq_vectors", exitname))
			t->nvecs++;
	}
	closedir(d);
	qsort(t->vec_names, t->nvecs, sizeof(t->vec_names[0]), cmp_str);
}

/* prog_for - the skeleton's program named PREFIX_NAME */
static struct bpf_program *prog_for(struct trace_bpf *skel, const char *prefix, const char *name)
{
	char want[96];

	snprintf(want, sizeof(want), "%s_%s", prefix, name);
	return bpf_object__find_program_by_name(skel->obj, want);
}

/* vec_prog - the program of irq_vectors pair @v's entry (or @exit) */
static struct bpf_program *vec_prog(struct tracer *t, int v, int exit)
{
	char name[32];

	snprintf(name, sizeof(name), "vec_%s_%d", exit ? "exit" : "entry", v);
	return bpf_object__find_program_by_name(t->skel->obj, name);
}

/* add_link - keep @l for detaching; and empty the rings of what the programs
 * attached so far wrote (on_event counts it outside the window): with 24 busy
 * loops on the draining CPU, attaching took long enough for a loopback flood
 * (2.2 million events a second) to fill a ring before the first drain */
static int add_link(struct tracer *t, struct bpf_link *l)
{
	struct bpf_link **n = realloc(t->links, (t->nlinks + 1) * sizeof(*n));

	if (!n) {
		bpf_link__destroy(l);
		return -ENOMEM;
	}
	t->links = n;
	t->links[t->nlinks++] = l;
	progs_consume(t, jtr_mono_ns() + (int64_t)t->o->drain_ns, NULL);
	return 0;
}

/* progs_consume - see programs.h. libbpf's ring_buffer__consume takes a
 * ring's records while more keep coming: under a flood faster than this
 * thread (starved of its CPU, its cgroup throttled) one call would not
 * return while the flood lasts, and the trace would run on past -d with
 * the log growing. So each ring has its own consumer, and on_event ends a
 * ring's turn at @end_ns (-ETIME, checked every PASS_CHECK records; the
 * next ring has its turn all the same, and each pass begins with the next
 * ring, so that one flooded ring does not keep the others to their first
 * records pass after pass) */
int progs_consume(struct tracer *t, int64_t end_ns, uint64_t *records)
{
	int rc = 0, late = 0, n = t->nring_fds;

	t->pass_end_ns = end_ns;
	t->pass_records = 0;
	for (int k = 0; k < n && t->rbs && rc >= 0; k++) {
		int i = (t->pass_first + k) % n;

		if (!t->rbs[i])
			continue;
		rc = ring_buffer__consume(t->rbs[i]);
		if (rc == -ETIME) {
			late = 1;
			rc = 0;
		}
	}
	t->pass_end_ns = 0;
	t->pass_first = n ? (t->pass_first + 1) % n : 0;
	if (rc < 0)
		return rc;
	if (records)
		*records = t->pass_records;
	return late;
}

/* progs_forget_task - the kernel side describes task @pid again at its next
 * switch (its task_groups record was dropped: it came while attaching) */
void progs_forget_task(struct tracer *t, uint32_t pid)
{
	if (!t->skel)
		return;
	bpf_map__delete_elem(t->skel->maps.task_groups, &pid, sizeof(pid), 0);
	/* and out of every CPU's seen tasks (trace.bpf.c note_task) */
	__atomic_fetch_add(&t->skel->bss->forget_gen, 1, __ATOMIC_RELEASE);
}

/* DETACHERS threads destroy the links, each every DETACHERS'th: where the
 * kernel waits a grace period when a tracepoint loses a program, the waits
 * from several threads overlap (one after the other they made a 0.1 s trace
 * take 1.4 s). Classic (perf) tracepoints wait under one lock, one after the
 * other whatever the threads: the irq_vectors pairs are raw tracepoints. */
#define DETACHERS 16

struct detacher {
	struct tracer *t;
	size_t first;
};

static void *detach_some(void *arg)
{
	struct detacher *d = arg;

	for (size_t i = d->first; i < d->t->nlinks; i += DETACHERS)
		bpf_link__destroy(d->t->links[i]);
	return NULL;
}

/* progs_detach - remove every program from its tracepoint */
void progs_detach(struct tracer *t)
{
	struct detacher d[DETACHERS];
	pthread_t tid[DETACHERS];
	bool started[DETACHERS] = {false};

	for (size_t k = 0; k < DETACHERS && k < t->nlinks; k++) {
		d[k] = (struct detacher){t, k};
		started[k] = pthread_create(&tid[k], NULL, detach_some, &d[k]) == 0;
		if (!started[k])        /* no thread: this one does its share */
			detach_some(&d[k]);
	}
	for (size_t k = 0; k < DETACHERS; k++)
		if (started[k])
			pthread_join(tid[k], NULL);
	free(t->links);
	t->links = NULL;
	t->nlinks = 0;
}

/* progs_stop - detach and unload */
void progs_stop(struct tracer *t)
{
	progs_detach(t);
	for (int i = 0; t->rbs && i < t->nring_fds; i++)
		ring_buffer__free(t->rbs[i]);
	free(t->rbs);
	t->rbs = NULL;
	for (int i = 0; i < t->nring_fds; i++)
		close(t->ring_fds[i]);
	free(t->ring_fds);
	t->ring_fds = NULL;
	t->nring_fds = 0;
	trace_bpf__destroy(t->skel);
	t->skel = NULL;
}

/* kvm_steal_offered - does the hypervisor say it is KVM and keeps steal time
 * (CPUID leaf KVMKVMKVM, feature KVM_FEATURE_STEAL_TIME)? */
static bool kvm_steal_offered(char *why, size_t len)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned int a, b, c, d, base;
	char sig[13];

	__cpuid(1, a, b, c, d);
	if (!(c & 1U << 31)) {
		snprintf(why, len, "not a virtual machine (no hypervisor CPUID bit)");
		return false;
	}
	/* the KVM leaves may sit above another hypervisor's, in steps of 0x100 */
	for (base = 0x40000000; base < 0x40010000; base += 0x100) {
		__cpuid(base, a, b, c, d);
		memcpy(sig, &b, 4);
		memcpy(sig + 4, &c, 4);
		memcpy(sig + 8, &d, 4);
		sig[12] = 0;
		if (!strcmp(sig, "KVMKVMKVM"))
			break;
	}
	if (base >= 0x40010000) {
		snprintf(why, len, "the hypervisor is not KVM");
		return false;
	}
	__cpuid(base + 1, a, b, c, d);
	if (!(a & 1U << 5)) {
		snprintf(why, len, "the KVM host does not offer steal time (KVM_FEATURE_STEAL_TIME)");
		return false;
	}
	return true;
#else
	snprintf(why, len, "kvm steal_time is read on x86 only");
	return false;
#endif
}

/* percpu_offset - the offset of per-CPU variable @name in the kernel's per-CPU
 * section (.data..percpu in BTF), or -1 */
static long long percpu_offset(const struct btf *btf, const char *name)
{
	int var = btf__find_by_name_kind(btf, name, BTF_KIND_VAR);
	int sec = btf__find_by_name_kind(btf, ".data..percpu", BTF_KIND_DATASEC);
	const struct btf_type *t;
	const struct btf_var_secinfo *v;

	if (var < 0 || sec < 0)
		return -1;
	t = btf__type_by_id(btf, sec);
	v = btf_var_secinfos(t);
	for (int i = 0; i < btf_vlen(t); i++, v++)
		if ((int)v->type == var)
			return v->offset;
	return -1;
}

/* progs_steal_check - can the kernel side read the host's steal counter? Sets
 * t->steal_from_rq (steal_time's distance from runqueues in a CPU's per-CPU
 * area), or t->steal_why to the reason it cannot */
void progs_steal_check(struct tracer *t)
{
	long long st, rq;
	struct btf *btf;

	t->steal_from_rq = 0;
	/* JTR_NO_STEAL: behave as a machine without it (tests the fallback) */
	if (getenv("JTR_NO_STEAL")) {
		snprintf(t->steal_why, sizeof(t->steal_why), "switched off (JTR_NO_STEAL is set)");
		return;
	}
	if (!kvm_steal_offered(t->steal_why, sizeof(t->steal_why)))
		return;
	btf = btf__load_vmlinux_btf();
	if (!btf) {
		snprintf(t->steal_why, sizeof(t->steal_why), "the kernel's BTF does not load");
		return;
	}
	st = percpu_offset(btf, "steal_time");
	rq = percpu_offset(btf, "runqueues");
	btf__free(btf);
	if (st < 0 || rq < 0 || st == rq)
		snprintf(t->steal_why, sizeof(t->steal_why), "the kernel's BTF has no per-CPU %s "
			 "(a kernel built without CONFIG_KVM_GUEST?)", st < 0 ? "steal_time" :
			 "runqueues");
	else
		t->steal_from_rq = st - rq;
}

/* ring_size - each ring's bytes: the buffer shared out among the traced
 * CPUs, a power of two of at least a page (what BPF rings must be) */
static uint64_t ring_size(struct tracer *t)
{
	const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	int n = CPU_COUNT(&t->o->cpus);
	uint64_t want = t->o->buffer_bytes / (uint64_t)(n > 0 ? n : 1), b = page;

	while (b * 2 <= want)
		b *= 2;
	t->ring_bytes = b;
	return b;
}

/* set_rodata - the kernel side's constants: the CPU filter, the wake-up
 * switch, the steal counter's offset, the --app processes; the ring buffer's
 * size */
static void set_rodata(struct tracer *t)
{
	for (int cpu = 0; cpu < JTR_TRACE_MAX_CPUS && cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &t->o->cpus))
			t->skel->rodata->cpu_mask[cpu / 64] |= 1ULL << (cpu % 64);
	t->skel->rodata->wakeup = t->o->wakeup;
	t->skel->rodata->own_timing = t->o->prog_stats == STATS_SAMPLED;
	t->skel->rodata->steal_from_rq = t->steal_from_rq;
	/* jtr watch --app PIDs: the kernel side flags their threads' records */
	for (int i = 0; i < t->o->napp_pid; i++)
		t->skel->rodata->app_tgid[i] = t->o->app_pid[i];
	t->skel->rodata->napp_tgid = t->o->napp_pid;
	t->skel->rodata->app_blocks = t->o->func_sym[0] != 0;
	ring_size(t);
}

/* choose_programs - one kind (@use: "btf" or "raw") for each tracepoint this
 * kernel has, the other kind's twin left out; a program for each irq_vectors
 * pair found; what is missing in t->missing */
static void choose_programs(struct tracer *t, const char *use, const char *off)
{
	/* --floor (beside jtr's) or --floor-only (in their place): the empty
	 * programs and those that read the clock once, tp_btf (the kernel that
	 * refuses tp_btf refuses them too), on irq_vectors raw_tp. jtr watch
	 * --floor has the empty ones only: its rate item in make bench loads
	 * every CPU with a program fewer per event */
	const enum floor_only only = t->o->floor_only;
	const bool mine = only == FLOOR_NONE, btf = !strcmp(use, "btf");
	const bool empty = t->o->floor || only == FLOOR_EMPTY;
	const bool clock = (t->o->floor && !t->o->watch) || only == FLOOR_CLOCK;

	t->nmissing = 0;
	t->nleft_out = 0;
	for (size_t i = 0; i < TRACER_NTPS; i++) {
		bool have = tp_exists(tps[i].cat, tps[i].name);

		/* sched_wakeup says what sched_waking said a moment before (the
		 * task, its CPU and priority) and every reader of the log takes
		 * the first of the two: one program less on every wake-up path
		 * (a traced wake-up fires about seven). jtr watch counts by
		 * sched_wakeup (the CPU the task is queued on: sched_waking's may
		 * be another) and leaves sched_waking out without dumps */
		if (have && !strcmp(tps[i].name, "sched_wakeup") && tp_exists("sched", "sched_waking") &&
		    !t->o->watch) {
			have = false;
			snprintf(t->left_out[t->nleft_out++], sizeof(t->left_out[0]), "%s:%s",
				 tps[i].cat, tps[i].name);
			bpf_program__set_autoload(prog_for(t->skel, use, tps[i].name), false);
			bpf_program__set_autoload(prog_for(t->skel, off, tps[i].name), false);
			bpf_program__set_autoload(prog_for(t->skel, "floor", tps[i].name), false);
			bpf_program__set_autoload(prog_for(t->skel, "clock", tps[i].name), false);
			continue;
		}

		bpf_program__set_autoload(prog_for(t->skel, use, tps[i].name), have && mine);
		bpf_program__set_autoload(prog_for(t->skel, off, tps[i].name), false);
		bpf_program__set_autoload(prog_for(t->skel, "floor", tps[i].name),
					  have && empty && btf);
		bpf_program__set_autoload(prog_for(t->skel, "clock", tps[i].name),
					  have && clock && btf);
		if (!have)
			snprintf(t->missing[t->nmissing++], sizeof(t->missing[0]), "%s:%s",
				 tps[i].cat, tps[i].name);
	}
	discover_vectors(t);
	/* the IPIs' pairs take the sends' senders (trace.bpf.c on_vector) */
	for (int v = 0; v < t->nvecs; v++)
		t->skel->rodata->vec_ipi[v] =
			!strcmp(t->vec_names[v], "reschedule") ? JTR_IPI_RESCHED :
			!strcmp(t->vec_names[v], "call_function") ||
			!strcmp(t->vec_names[v], "call_function_single") ? JTR_IPI_CALL : 0;
	if (!t->nvecs)
		snprintf(t->missing[t->nmissing++], sizeof(t->missing[0]), "irq_vectors:*");
	for (int v = 0; v < JTR_TRACE_MAX_VECS; v++)
		for (int ex = 0; ex < 2; ex++)
			bpf_program__set_autoload(vec_prog(t, v, ex), v < t->nvecs && mine);
	bpf_program__set_autoload(t->skel->progs.floor_vectors, empty && t->nvecs);
	bpf_program__set_autoload(t->skel->progs.clock_vectors, clock && t->nvecs);
	bpf_program__set_autoload(t->skel->progs.app_entry, t->o->func_sym[0] && !t->o->usdt);
	bpf_program__set_autoload(t->skel->progs.app_exit, t->o->func_sym[0] && !t->o->usdt);
	bpf_program__set_autoload(t->skel->progs.app_usdt_start, t->o->usdt);
	bpf_program__set_autoload(t->skel->progs.app_usdt_end, t->o->usdt);
}

/* attach_calls - jtr run app: the uprobe and uretprobe on --func's symbol in
 * its binary, or --usdt's two probes, for --pid's process (-1: every process
 * that maps it); 0 or
 * -errno (with @e: libbpf resolves the symbol, and says so when it is not
 * there) */
static int attach_calls(struct tracer *t, struct jtr_err *e)
{
	const struct trace_opts *o = t->o;
	struct bpf_link *l;
	int rc;

	/* the return (the end) first: a call entered before its uretprobe was in
	 * returns unseen, and its entry must not be kept (trace.bpf.c app_entry) */
	for (int ret = 1; ret >= 0; ret--) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = o->func_sym, .retprobe = ret != 0);
		const char *name = o->usdt ? (ret ? o->usdt_end : o->usdt_start) : o->func_sym;

		t->last_libbpf[0] = 0;
		if (o->usdt)
			l = bpf_program__attach_usdt(ret ? t->skel->progs.app_usdt_end :
						     t->skel->progs.app_usdt_start, o->func_pid,
						     o->func_path, o->usdt_provider, name, NULL);
		else
			l = bpf_program__attach_uprobe_opts(ret ? t->skel->progs.app_exit :
							    t->skel->progs.app_entry, o->func_pid,
							    o->func_path, 0, &uo);
		if (!l && errno == EACCES && geteuid() != 0) {
			/* the kernel's rule since 2025 (perf_uprobe_event_init): making a
			 * uprobe takes CAP_SYS_ADMIN again, CAP_PERFMON is not enough */
			t->calls_denied = true;
			return jtr_err_set(e, -EACCES, "cannot attach a %s to %s in %s: this kernel "
					   "lets only root or CAP_SYS_ADMIN make uprobes (CAP_BPF and "
					   "CAP_PERFMON are enough for the tracepoints); run it as root",
					   o->usdt ? "USDT probe" : ret ? "uretprobe" : "uprobe",
					   o->func_sym, o->func_path);
		}
		if (!l) {
			rc = -errno;
			return jtr_err_set(e, rc, "cannot attach a %s to %s%s%s in %s: %s%s%s%s",
					   o->usdt ? "USDT probe" : ret ? "uretprobe" : "uprobe",
					   o->usdt ? o->usdt_provider : "", o->usdt ? ":" : "", name,
					   o->func_path, strerror(-rc), t->last_libbpf[0] ? " (" : "",
					   t->last_libbpf, t->last_libbpf[0] ? ")" : "");
		}
		if ((rc = add_link(t, l)) < 0)
			return rc;
	}
	return 0;
}

/* attach_programs - the typed tracepoints' programs, then each irq_vectors
 * pair to its programs; 0 or -errno (with @e) */
static int attach_programs(struct tracer *t, struct jtr_err *e)
{
	struct bpf_program *prog;
	struct bpf_link *l;
	int rc;

	bpf_object__for_each_program(prog, t->skel->obj) {
		if (!bpf_program__autoload(prog) || !strncmp(bpf_program__name(prog), "vec_", 4) ||
		    prog == t->skel->progs.floor_vectors || prog == t->skel->progs.clock_vectors ||
		    !strncmp(bpf_program__name(prog), "app_", 4))
			continue;
		l = bpf_program__attach(prog);
		if (!l) {
			rc = -errno;
			return jtr_err_set(e, rc, "cannot attach %s: %s", bpf_program__name(prog),
					   strerror(-rc));
		}
		if ((rc = add_link(t, l)) < 0)
			return rc;
	}
	for (int v = 0; v < t->nvecs; v++) {
		for (int ex = 0; ex < 2; ex++) {
			struct bpf_program *on[] = { vec_prog(t, v, ex), t->skel->progs.floor_vectors,
						     t->skel->progs.clock_vectors };
			char name[64];

			snprintf(name, sizeof(name), "%s_%s", t->vec_names[v], ex ? "exit" : "entry");
			for (size_t k = 0; k < sizeof(on) / sizeof(on[0]); k++) {
				if (!bpf_program__autoload(on[k]))
					continue;
				l = bpf_program__attach_raw_tracepoint(on[k], name);
				if (!l) {
					rc = -errno;
					return jtr_err_set(e, rc, "cannot attach %s to irq_vectors:%s: %s",
							   bpf_program__name(on[k]), name,
							   strerror(-rc));
				}
				if ((rc = add_link(t, l)) < 0)
					return rc;
			}
		}
	}
	return 0;
}

/* make_rings - a ring buffer for each traced CPU and one the others share,
 * each in the rings map at its CPUs; the consumer's ring_buffer over them
 * all (@on_event for every record). 0 or -errno (with @e) */
static int make_rings(struct tracer *t, int (*on_event)(void *ctx, void *data, size_t size),
		      struct jtr_err *e)
{
	int ncpu = libbpf_num_possible_cpus(), outer = bpf_map__fd(t->skel->maps.rings);
	int shared = -1;

	if (ncpu > JTR_TRACE_MAX_CPUS)
		ncpu = JTR_TRACE_MAX_CPUS;
	t->ring_fds = calloc((size_t)ncpu + 1, sizeof(int));
	t->rbs = calloc((size_t)ncpu + 1, sizeof(*t->rbs));
	if (ncpu <= 0 || !t->ring_fds || !t->rbs)
		return jtr_err_set(e, -ENOMEM, "out of memory for the ring buffers");
	for (int cpu = 0; cpu < ncpu; cpu++) {
		bool mine = cpu < CPU_SETSIZE && CPU_ISSET(cpu, &t->o->cpus);
		int fd = mine ? -1 : shared;

		if (fd < 0) {
			/* the others' ring takes only wake-ups and migrations that
			 * concern a traced CPU: a quarter */
			uint64_t bytes = mine || t->ring_bytes < 4 * (uint64_t)sysconf(_SC_PAGESIZE) ?
					 t->ring_bytes : t->ring_bytes / 4;

			fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, NULL, 0, 0, (__u32)bytes, NULL);
			if (fd < 0)
				return jtr_err_set(e, -errno, "cannot make a %llu-byte ring buffer: "
						   "%s", (unsigned long long)bytes, strerror(errno));
			t->rbs[t->nring_fds] = ring_buffer__new(fd, on_event, t, NULL);
			t->ring_fds[t->nring_fds++] = fd;
			if (!t->rbs[t->nring_fds - 1])
				return jtr_err_set(e, -errno, "cannot map the ring buffer: %s",
						   strerror(errno));
			if (!mine)
				shared = fd;
		}
		if (bpf_map_update_elem(outer, &cpu, &fd, BPF_ANY) < 0)
			return jtr_err_set(e, -errno, "cannot put CPU %d's ring buffer in place: %s",
					   cpu, strerror(errno));
	}
	return 0;
}

/* open_skel - the skeleton of trace.bpf.o, or for jtr watch the same layout
 * over watch.bpf.o (trace.bpf.c built with the counting in the kernel: the
 * same maps, programs and globals); NULL with errno */
static struct trace_bpf *open_skel(bool watch)
{
	struct trace_bpf *s;
	int err;

	if (!watch)
		return trace_bpf__open();
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	err = trace_bpf__create_skeleton(s);
	if (!err) {
		s->skeleton->data = watch_bpf__elf_bytes(&s->skeleton->data_sz);
		err = bpf_object__open_skeleton(s->skeleton, NULL);
	}
	if (err) {
		trace_bpf__destroy(s);
		errno = -err;
		return NULL;
	}
	return s;
}

/* progs_start - open, configure, load and attach with @kind programs */
int progs_start(struct tracer *t, enum prog_kind kind,
		int (*on_event)(void *ctx, void *data, size_t size), struct jtr_err *e)
{
	int rc;

	t->kind = kind == PROGS_BTF ? "tp_btf" : "raw_tp";
	t->last_libbpf[0] = 0;
	/* JTR_NO_TP_BTF: behave as a kernel that refuses tp_btf (tests the fallback) */
	if (kind == PROGS_BTF && getenv("JTR_NO_TP_BTF"))
		return jtr_err_set(e, -EOPNOTSUPP, "tp_btf switched off (JTR_NO_TP_BTF is set)");
	/* open: parse the object, nothing in the kernel yet */
	t->skel = open_skel(t->o->watch);
	if (!t->skel)
		return jtr_err_set(e, -errno, "cannot open the BPF object: %s", strerror(errno));
	set_rodata(t);
	if (kind == PROGS_BTF)
		choose_programs(t, "btf", "raw");
	else
		choose_programs(t, "raw", "btf");
	if (t->o->watch)
		watch_run_configure(t);

	/* load: verify and load into the kernel */
	rc = trace_bpf__load(t->skel);
	if (rc) {
		rc = rc < 0 ? rc : -errno;
		jtr_err_set(e, rc, "the kernel refused the %s programs (%s)%s%s", t->kind,
			    strerror(-rc), t->last_libbpf[0] ? ": " : "", t->last_libbpf);
		goto fail;
	}
	/* the rings before the programs run: a record has its CPU's ring */
	if ((rc = make_rings(t, on_event, e)) < 0 || (rc = attach_programs(t, e)) < 0 ||
	    (t->o->func_sym[0] && (rc = attach_calls(t, e)) < 0))
		goto fail;
	return 0;
fail:
	progs_stop(t);
	return rc;
}

/* progs_read_counts - sum the per-CPU counters into t->total */
int progs_read_counts(struct tracer *t)
{
	int ncpu = libbpf_num_possible_cpus();
	struct jtr_trace_counts *per;
	__u32 zero = 0;

	if (ncpu <= 0)
		return ncpu;
	per = calloc(ncpu, sizeof(*per));
	if (!per)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.counts), &zero, per) < 0) {
		free(per);
		return -errno;
	}
	memset(&t->total, 0, sizeof(t->total));
	for (int c = 0; c < ncpu; c++)
		for (int i = 0; i < JTR_EV_NTYPES; i++) {
			t->total.events[i] += per[c].events[i];
			t->total.dropped[i] += per[c].dropped[i];
		}
	free(per);
	return 0;
}

/* progs_kept_entries - see programs.h */
int progs_kept_entries(struct tracer *t, struct jtr_ev **out)
{
	int ncpu = libbpf_num_possible_cpus(), n = 0;
	struct jtr_trace_counts *per;
	__u32 zero = 0;

	*out = NULL;
	if (ncpu <= 0 || !(per = calloc(ncpu, sizeof(*per))))
		return 0;
	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.counts), &zero, per) == 0 &&
	    (*out = calloc(3 * (size_t)ncpu, sizeof(**out))))
		for (int c = 0; c < ncpu; c++) {
			if (per[c].sirq.open)
				(*out)[n++] = (struct jtr_ev){ .ts_ns = per[c].sirq.ts,
							       .pid = per[c].sirq.pid,
							       .cpu = (unsigned short)c,
							       .type = JTR_EV_SOFTIRQ_ENTRY,
							       .a = per[c].sirq.key };
			if (per[c].hrt_open)
				(*out)[n++] = (struct jtr_ev){ .ts_ns = per[c].hrt_ts,
							       .pid = per[c].hrt_pid,
							       .cpu = (unsigned short)c,
							       .type = JTR_EV_HRTIMER_ENTRY,
							       .a = per[c].hrt_timer, .b = per[c].hrt_fn,
							       .x = { per[c].hrt_x[0], per[c].hrt_x[1],
								      per[c].hrt_x[2] } };
			if (per[c].vec.open)
				(*out)[n++] = (struct jtr_ev){ .ts_ns = per[c].vec.ts,
							       .pid = per[c].vec.pid,
							       .cpu = (unsigned short)c,
							       .type = JTR_EV_VEC_ENTRY,
							       .a = per[c].vec.aux,
							       .b = per[c].vec.key };
		}
	free(per);
	return n;
}

/* prog_id - the run counters' place of the program named @name (enum
 * jtr_prog_id), or -1 */
static int prog_id(const char *name)
{
	static const char *const apps[] = { "app_entry", "app_exit", "app_usdt_start",
					     "app_usdt_end" };
	int k;
	char end;

	if (!strncmp(name, "btf_", 4) || !strncmp(name, "raw_", 4))
		for (int i = 0; i < TRACER_NTPS; i++)
			if (!strcmp(name + 4, tps[i].name))
				return i;
	if (sscanf(name, "vec_entry_%d%c", &k, &end) == 1 && k >= 0 && k < JTR_TRACE_MAX_VECS)
		return JTR_P_VEC + 2 * k;
	if (sscanf(name, "vec_exit_%d%c", &k, &end) == 1 && k >= 0 && k < JTR_TRACE_MAX_VECS)
		return JTR_P_VEC + 2 * k + 1;
	for (int i = 0; i < 4; i++)
		if (!strcmp(name, apps[i]))
			return JTR_P_APP + i;
	return -1;
}

/* progs_runs - see programs.h */
int progs_runs(struct tracer *t, const char *name, struct jtr_prog_run *sum)
{
	int ncpu = libbpf_num_possible_cpus(), id = prog_id(name), rc = 0;
	struct jtr_prog_run *per;
	__u32 key = (__u32)id;

	memset(sum, 0, sizeof(*sum));
	if (id < 0)
		return -ENOENT;
	if (ncpu <= 0)
		return ncpu;
	if (!(per = calloc(ncpu, sizeof(*per))))
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.prog_runs), &key, per) < 0)
		rc = -errno;
	for (int c = 0; !rc && c < ncpu; c++) {
		sum->runs += per[c].runs;
		sum->timed += per[c].timed;
		sum->timed_ns += per[c].timed_ns;
	}
	free(per);
	return rc;
}

/* progs_cost_by_cpu - see programs.h */
int progs_cost_by_cpu(struct tracer *t, uint64_t *runs, uint64_t *ns, int ncpus)
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(t->skel->maps.prog_runs), rc = 0;
	__u32 keys[JTR_NPROGS], n = JTR_NPROGS, next;
	struct jtr_prog_run *v;

	memset(runs, 0, ncpus * sizeof(*runs));
	memset(ns, 0, ncpus * sizeof(*ns));
	if (ncpu <= 0)
		return ncpu;
	if (!(v = calloc((size_t)JTR_NPROGS * ncpu, sizeof(*v))))
		return -ENOMEM;
	/* every program's counters on every CPU in one call (a state line's) */
	if (bpf_map_lookup_batch(fd, NULL, &next, keys, v, &n, NULL) < 0 && errno != ENOENT)
		rc = -errno;
	for (__u32 i = 0; !rc && i < n; i++) {
		const struct jtr_prog_run *per = &v[(size_t)i * ncpu];
		uint64_t timed = 0, timed_ns = 0;

		for (int c = 0; c < ncpu; c++) {
			timed += per[c].timed;
			timed_ns += per[c].timed_ns;
		}
		/* the program's mean over every CPU's timed runs, for each
		 * CPU's runs (a CPU times few of them) */
		for (int c = 0; c < ncpu && c < ncpus; c++) {
			runs[c] += per[c].runs;
			if (timed)
				ns[c] += (uint64_t)((double)timed_ns / timed * per[c].runs + 0.5);
		}
	}
	free(v);
	return rc;
}

/* progs_sum - all types of one counter array */
uint64_t progs_sum(const unsigned long long *c)
{
	uint64_t s = 0;

	for (int i = 0; i < JTR_EV_NTYPES; i++)
		s += c[i];
	return s;
}
