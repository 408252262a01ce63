// SPDX-License-Identifier: GPL-2.0-only
/* trace.bpf.c - kernel side of jtr's event tracer.
 *
 * Every handler first checks that it runs on a traced CPU (a bitmap in
 * rodata, so the check is a load and a test), then reserves a record in its
 * CPU's ring buffer and submits it with BPF_RB_NO_WAKEUP: a wake-up would queue
 * irq_work on this CPU, that is, interrupt the very CPU being measured. The
 * user side drains the buffer on a timer from a CPU that is not traced. A
 * full buffer is counted per CPU and per type, never lost silently.
 *
 * Each typed tracepoint has two programs with one body: tp_btf (direct BTF
 * access, cheapest) and raw_tp (the fallback where tp_btf does not load).
 * The user side loads one set. irq_vectors events (local timer, IPIs, ...)
 * differ per architecture and kernel, so they are discovered at start; pair
 * k of the list is attached as raw tracepoints to vec_entry_k and vec_exit_k,
 * which carry k in the record. (Classic tracepoints with the pair in the
 * attach cookie each cost the kernel a grace period when they detach, one
 * after the other: the tracer took 1.1 s from its stop to its exit here, for
 * 9 pairs; 0.15 s now.)
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/usdt.bpf.h>
#include "trace.h"
#include "watch_model.h"

char LICENSE[] SEC("license") = "GPL";

/* set by the user side before load */
const volatile __u64 cpu_mask[JTR_TRACE_MAX_CPUS / 64] = {};
const volatile bool wakeup = false;	/* test switch: submit with wake-ups */
/* the host's per-CPU steal counter of a KVM guest (steal_time, struct
 * kvm_steal_time, arch/x86/kernel/kvm.c) lies this many bytes from the CPU's
 * runqueue (runqueues) in every CPU's per-CPU area: the user side takes both
 * offsets from the kernel's BTF. 0: not read. (A __ksym of steal_time needs
 * the kernel to list data symbols in kallsyms, which many do not.) */
const volatile __s64 steal_from_rq = 0;
/* jtr watch --app PIDs: the records of their threads are flagged JTR_FL_APP */
const volatile __u32 app_tgid[JTR_TRACE_MAX_APPS] = {};
const volatile __u32 napp_tgid = 0;
/* jtr run app (--func/--usdt with --pid): the --app threads' blocking calls are
 * noted (note_block); jtr watch --app counts no waits, and has none written */
const volatile bool app_blocks = false;
/* --prog-stats sampled (the default): each program counts its runs and times
 * one in JTR_TIME_EVERY (JTR_TIMED); false with the kernel's statistics or none */
const volatile bool own_timing = false;

/* the runs of each program (enum jtr_prog_id) on each CPU */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, JTR_NPROGS);
	__type(key, __u32);
	__type(value, struct jtr_prog_run);
} prog_runs SEC(".maps");

/* run_begin - count a run of a program with counters @r; the time to start
 * one in JTR_TIME_EVERY from (0: this run is not timed): the second, then
 * every JTR_TIME_EVERY-th (a first run finds everything cold) */
static __always_inline __u64 run_begin(struct jtr_prog_run *r)
{
	if (!r || r->runs++ % JTR_TIME_EVERY != 1)
		return 0;
	return bpf_ktime_get_ns();
}

/* run_end - a timed run (@t0 not 0) ends: its time into @r, unless it took
 * longer than JTR_TIMED_MAX_NS: the host took the CPU meanwhile (a program
 * takes microseconds at most, interrupts within it included), and one such
 * run in 64 would count 64 times */
static __always_inline void run_end(struct jtr_prog_run *r, __u64 t0)
{
	__u64 d;

	if (t0 && r && (d = bpf_ktime_get_ns() - t0) < JTR_TIMED_MAX_NS) {
		r->timed++;
		r->timed_ns += d;
	}
}

/* JTR_TIMED - @call, the body of program @id, counted and one run in
 * JTR_TIME_EVERY timed when own_timing is set (what the kernel's statistics
 * would say, for a clock read in 64 runs instead of two in each) */
#define JTR_TIMED(id, call) ({							\
	__u32 id_ = (id);							\
	struct jtr_prog_run *r_ = own_timing ?					\
		bpf_map_lookup_elem(&prog_runs, &id_) : NULL;			\
	__u64 t0_ = run_begin(r_);						\
	int rv_ = (call);							\
	run_end(r_, t0_);							\
	rv_; })

/* one ring buffer per traced CPU, so that CPUs writing records at once do
 * not share a ring's lock and positions (with one shared ring, a record cost
 * two to three times as much with two CPUs writing: docs/bench.md); the CPUs
 * not traced (a waker's, a migration's source) share one more. The user side
 * makes the rings and puts them in here by CPU before the programs run. */
struct ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);	/* resized by the user side */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, JTR_TRACE_MAX_CPUS);
	__type(key, __u32);
	__array(values, struct ring);
} rings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct jtr_trace_counts);
} counts SEC(".maps");

/* traced - is this CPU one we trace? */
static __always_inline bool traced(__u32 cpu)
{
	__u64 word = cpu / 64;

	/* the barrier keeps the bounds check on the register used as the index */
	barrier_var(word);
	if (word >= JTR_TRACE_MAX_CPUS / 64)
		return false;
	return cpu_mask[word] & (1ULL << (cpu % 64));
}

/* jtr watch: every record is counted where it happens (w_account), none
 * goes to the ring; set by the user side before load. The object is built
 * twice from this file: JTR_WATCH_BUILD 1 (watch.bpf.o, loaded for jtr watch)
 * has the counting, 0 (trace.bpf.o) has none of its code, so that a kernel
 * that verifies every function a program calls (6.1) does not verify it for
 * every trace. The two have the same maps, programs and globals: one
 * skeleton opens either */
#ifndef JTR_WATCH_BUILD
#define JTR_WATCH_BUILD 0
#endif
const volatile bool watch_mode = false;
static __always_inline void w_account(struct jtr_ev *e);
static __always_inline bool w_recording(void);
static __always_inline void w_next(struct task_struct *next, __u32 pid, __u64 cset);

/* ev_end - hand the record over without waking the consumer; jtr watch's
 * to its accounting */
static __always_inline void ev_end(struct jtr_ev *e)
{
	if (JTR_WATCH_BUILD && watch_mode) {
		w_account(e);
		return;
	}
	bpf_ringbuf_submit(e, wakeup ? 0 : BPF_RB_NO_WAKEUP);
}

/* JTR_EV_BYTES - the bytes a record of @type takes in the ring: the fields up
 * to b, and of str/x what the type carries (trace.h); the user side fills the
 * rest of its 64 with zeros. A constant in each caller. Fewer bytes, fewer
 * cache lines the draining CPU takes back from the traced one */
#define JTR_EV_BYTES(type)						\
	((type) == JTR_EV_SWITCH || (type) == JTR_EV_IRQ_ENTRY ? JTR_EV_SIZE :	\
	 (type) == JTR_EV_HRTIMER_ENTRY || (type) == JTR_EV_TASK ? JTR_EV_MIN + 24 : \
	 (type) == JTR_EV_WAKEUP || (type) == JTR_EV_WAKING ||			\
	 (type) == JTR_EV_MIGRATE ? JTR_EV_MIN + JTR_COMM_LEN :		\
	 (type) == JTR_EV_PF_USER || (type) == JTR_EV_PF_KERNEL ? JTR_EV_MIN + 8 : \
	 JTR_EV_MIN)

/* ev_reserve - a record of @type from this CPU, @bytes long (a constant),
 * counted; NULL when the buffer is full */
static __always_inline struct jtr_ev *w_reserve(void);

static __always_inline struct jtr_ev *ev_reserve(struct jtr_trace_counts *c, __u8 type, __u32 cpu,
						 __u32 bytes)
{
	void *ring;
	struct jtr_ev *e;

	if (JTR_WATCH_BUILD && watch_mode) {
		e = w_reserve();
		if (e == (void *)1)
			return NULL;	/* not counting yet */
		bytes = JTR_EV_SIZE;	/* the whole record: the recorder keeps it */
	} else {
		ring = bpf_map_lookup_elem(&rings, &cpu);
		e = ring ? bpf_ringbuf_reserve(ring, bytes, 0) : NULL;
	}

	if (!e) {
		if (c && type < JTR_EV_NTYPES)
			c->dropped[type]++;
		return NULL;
	}
	if (c && type < JTR_EV_NTYPES)
		c->events[type]++;
	e->ts_ns = bpf_ktime_get_ns();
	e->pid = (__u32)bpf_get_current_pid_tgid();
	e->cpu = cpu;
	e->type = type;
	e->flags = 0;
	e->a = 0;
	e->b = 0;
	if (bytes > JTR_EV_MIN)
		e->x[0] = 0;
	if (bytes > JTR_EV_MIN + 8)
		e->x[1] = 0;
	if (bytes > JTR_EV_MIN + 16)
		e->x[2] = 0;
	if (bytes > JTR_EV_MIN + 24)
		e->x[3] = 0;
	return e;
}

/* steal_where - the address of this CPU's steal_time, from the runqueue of
 * the task running here (every task's se.cfs_rq is one of its CPU's); 0 if
 * that runqueue is not this CPU's */
static __always_inline __u64 steal_where(__u32 cpu)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct rq *rq = BPF_CORE_READ(task, se.cfs_rq, rq);

	if (!rq || BPF_CORE_READ(rq, cpu) != (int)cpu)
		return 0;
	return (__u64)rq + steal_from_rq;
}

/* look_steal - log the host's steal counter of this (traced) CPU when it moved
 * since the last look: one 8-byte read and a compare. The host adds to it each
 * time it runs the vCPU again, so the first interrupt after a host preemption
 * (the pending timer interrupt, most often) logs it right after the stall. A
 * record the full buffer refused leaves the last value as it was: the next look
 * logs the whole change. */
static __always_inline void look_steal(struct jtr_trace_counts *c, __u32 cpu)
{
	struct jtr_ev *e;
	__u64 now;

	if (!steal_from_rq)
		return;
	if (!c->steal_addr)
		c->steal_addr = steal_where(cpu);
	if (!c->steal_addr ||
	    bpf_probe_read_kernel(&now, sizeof(now), (void *)(c->steal_addr +
				  offsetof(struct kvm_steal_time, steal))))
		return;
	if (c->steal_looked && now == c->steal_ns)
		return;
	e = ev_reserve(c, JTR_EV_STEAL, cpu, JTR_EV_BYTES(JTR_EV_STEAL));
	if (!e)
		return;
	e->a = now;
	e->b = c->steal_looked ? c->steal_ns : now;
	e->flags = c->steal_looked ? 0 : JTR_STEAL_FIRST;
	c->steal_ns = now;
	c->steal_looked = 1;
	ev_end(e);
}

/* JTR_STEAL_LOOKS: the events that look at the steal counter first: interrupt
 * entries and context switches (the type is a constant in each caller, so the
 * test costs nothing) */
#define JTR_STEAL_LOOKS(type) ((type) == JTR_EV_VEC_ENTRY || (type) == JTR_EV_IRQ_ENTRY || \
			       (type) == JTR_EV_NMI || (type) == JTR_EV_SWITCH)

/* ev_begin_n - a record for @type on this CPU, @bytes long, or NULL (not
 * traced, or full); on a traced CPU an interrupt entry or a switch looks at the
 * steal counter first */
static __always_inline struct jtr_ev *ev_begin_n(__u8 type, bool any_cpu, __u32 bytes)
{
	__u32 cpu = bpf_get_smp_processor_id(), zero = 0;
	struct jtr_trace_counts *c;
	bool here = true;

	if (any_cpu)
		here = traced(cpu);
	else if (!traced(cpu))
		return NULL;
	c = bpf_map_lookup_elem(&counts, &zero);
	/* jtr watch counts no steal: only a dump's records (a trace) say it */
	if (c && here && JTR_STEAL_LOOKS(type) && !(JTR_WATCH_BUILD && watch_mode && !w_recording()))
		look_steal(c, cpu);
	return ev_reserve(c, type, cpu, bytes);
}

/* ev_begin - ev_begin_n, as long as @type's records are */
static __always_inline struct jtr_ev *ev_begin(__u8 type, bool any_cpu)
{
	return ev_begin_n(type, any_cpu, JTR_EV_BYTES(type));
}

/* T_READ - field @f of @p, an argument of the program or a pointer read
 * from one: in place under tp_btf (@btf: a load, which a fault cannot
 * harm), else with a helper call (~8 ns each here). @btf is a constant in
 * each program: the other branch is not in it */
#define T_READ(btf, p, f)	((btf) ? (p)->f : BPF_CORE_READ(p, f))

/* FLOORS - the two programs jtr-trace --floor (and --floor-only) attaches on
 * tracepoint @tp (section @sec): floor_@tp, empty: what any program there
 * costs here; clock_@tp, which reads the clock once and does nothing else:
 * what a program whose records carry a time costs at the least (make bench).
 * The helper's result is unused, but a call to it is never left out */
#define FLOORS(sec, tp)							\
	SEC(sec) int BPF_PROG(floor_##tp) { return 0; }			\
	SEC(sec) int BPF_PROG(clock_##tp) { bpf_ktime_get_ns(); return 0; }

/* a tp_btf and a raw_tp program for @tp, both calling @call (btf true in the
 * first, false in the second: T_READ's); and the tp_btf FLOORS beside them */
#define TWIN(tp, call, ...)						\
	SEC("tp_btf/" #tp) int BPF_PROG(btf_##tp, __VA_ARGS__)		\
	{ const bool btf __attribute__((unused)) = true;		\
	  return JTR_TIMED(JTR_P_##tp, call); }				\
	SEC("raw_tp/" #tp) int BPF_PROG(raw_##tp, __VA_ARGS__)		\
	{ const bool btf __attribute__((unused)) = false;		\
	  return JTR_TIMED(JTR_P_##tp, call); }				\
	FLOORS("tp_btf/" #tp, tp)

/* on_irq - irq_handler_entry/exit: IRQ number, action name, return */
static __always_inline int on_irq(__u8 type, int irq, struct irqaction *action, int ret, bool btf)
{
	struct jtr_ev *e = ev_begin(type, false);

	if (!e)
		return 0;
	e->a = irq;
	e->b = ret;
	if (type == JTR_EV_IRQ_ENTRY)
		bpf_probe_read_kernel_str(e->str, sizeof(e->str), T_READ(btf, action, name));
	ev_end(e);
	return 0;
}

TWIN(irq_handler_entry, on_irq(JTR_EV_IRQ_ENTRY, irq, action, 0, btf),
     int irq, struct irqaction *action)
TWIN(irq_handler_exit, on_irq(JTR_EV_IRQ_EXIT, irq, action, ret, btf),
     int irq, struct irqaction *action, int ret)

/* traced_counts - the counters of @cpu (this CPU), NULL where it is not traced */
static __always_inline struct jtr_trace_counts *traced_counts(__u32 cpu)
{
	__u32 zero = 0;

	return traced(cpu) ? bpf_map_lookup_elem(&counts, &zero) : NULL;
}

/* kept_lost - a kept entry of @type (counted when it was kept) that no record
 * will carry: counted as dropped instead */
static __always_inline void kept_lost(struct jtr_trace_counts *c, __u8 type)
{
	if (type < JTR_EV_NTYPES) {
		c->events[type]--;
		c->dropped[type]++;
	}
}

/* kept_record - a record of @bytes (a constant) for a kept entry of @type made
 * at @ts by @pid, its head written; NULL (counted as dropped) when the ring is
 * full. An entry is kept when a second one comes before its exit (a softirq
 * preempted on PREEMPT_RT, a hardirq hrtimer inside a softirq one): the first
 * goes as a record of its own */
static __always_inline struct jtr_ev *kept_record(struct jtr_trace_counts *c, __u32 cpu,
						   __u8 type, __u32 bytes, __u64 ts, __u32 pid)
{
	void *ring = bpf_map_lookup_elem(&rings, &cpu);
	struct jtr_ev *e = ring ? bpf_ringbuf_reserve(ring, bytes, 0) : NULL;

	if (!e) {
		kept_lost(c, type);
		return NULL;
	}
	e->ts_ns = ts;
	e->pid = pid;
	e->cpu = cpu;
	e->type = type;
	e->flags = 0;
	return e;
}

/* keep_entry - an entry of @type with @key and @aux kept in @kept: its time
 * and task; what was kept before (its exit not seen) goes as a record of its
 * own first: a = key, b = 0 (@aux_a: a = aux, b = key) */
static __always_inline void keep_entry(struct jtr_trace_counts *c, __u32 cpu,
				       struct jtr_kept *kept, __u8 type, __u32 key, __u32 aux,
				       bool aux_a)
{
	struct jtr_ev *e;

	if (kept->open) {
		kept->open = 0;
		e = kept_record(c, cpu, type, JTR_EV_BYTES(type), kept->ts, kept->pid);
		if (e) {
			e->a = aux_a ? kept->aux : kept->key;
			e->b = aux_a ? kept->key : 0;
			ev_end(e);
		}
	}
	kept->ts = bpf_ktime_get_ns();
	kept->key = key;
	kept->aux = aux;
	kept->pid = (__u32)bpf_get_current_pid_tgid();
	kept->open = 1;
	c->events[type]++;
}

/* kept_exit - the record of an exit of @type with @key, NULL when the ring
 * is full; the entry kept in @kept when it is this exit's (@entry its type):
 * its time in b and @pair in flags, no longer kept */
static __always_inline struct jtr_ev *kept_exit(struct jtr_trace_counts *c, __u32 cpu,
						struct jtr_kept *kept, __u8 type, __u8 entry,
						__u32 key, __u8 pair)
{
	bool paired = kept->open && kept->key == key;
	struct jtr_ev *e = ev_reserve(c, type, cpu, JTR_EV_BYTES(type));

	if (paired)
		kept->open = 0;
	if (!e) {
		if (paired)
			kept_lost(c, entry);
		return NULL;
	}
	if (paired) {
		e->b = kept->ts;
		e->flags = pair;
	}
	return e;
}

/* softirq_pair - a trace's softirq entry and exit in one ring record: the
 * entry's time, vector and task kept in the CPU's counters, the exit's
 * record carrying them (JTR_SIRQ_PAIR, the entry's time in b), written as
 * the two records by the tracer; an entry still kept when the trace ends is
 * written from the counters (progs_kept_entries). One ring record a pair
 * instead of two: the entry's program costs a clock read and a few stores
 * (docs/bench.md). An exit without its entry kept (the trace began inside
 * the softirq) is a record of its own, as before; jtr watch, which counts in
 * the kernel as events come, keeps a record for each */
static __always_inline int softirq_pair(__u8 type, unsigned int vec)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct jtr_trace_counts *c = traced_counts(cpu);
	struct jtr_ev *e;

	if (!c)
		return 0;
	if (type == JTR_EV_SOFTIRQ_ENTRY) {
		keep_entry(c, cpu, &c->sirq, JTR_EV_SOFTIRQ_ENTRY, vec, 0, false);
		return 0;
	}
	e = kept_exit(c, cpu, &c->sirq, JTR_EV_SOFTIRQ_EXIT, JTR_EV_SOFTIRQ_ENTRY, vec,
		      JTR_SIRQ_PAIR);
	if (!e)
		return 0;
	e->a = vec;
	ev_end(e);
	return 0;
}

/* on_softirq - softirq_raise/entry/exit: the vector */
static __always_inline int on_softirq(__u8 type, unsigned int vec)
{
	struct jtr_ev *e;

	if (type != JTR_EV_SOFTIRQ_RAISE && !(JTR_WATCH_BUILD && watch_mode))
		return softirq_pair(type, vec);
	e = ev_begin(type, false);

	if (!e)
		return 0;
	e->a = vec;
	ev_end(e);
	return 0;
}

TWIN(softirq_raise, on_softirq(JTR_EV_SOFTIRQ_RAISE, vec), unsigned int vec)
TWIN(softirq_entry, on_softirq(JTR_EV_SOFTIRQ_ENTRY, vec), unsigned int vec)
TWIN(softirq_exit, on_softirq(JTR_EV_SOFTIRQ_EXIT, vec), unsigned int vec)

/* on_nmi - nmi_handler fires after each handler with its duration */
static __always_inline int on_nmi(void *handler, s64 delta_ns, int handled)
{
	struct jtr_ev *e = ev_begin(JTR_EV_NMI, false);

	if (!e)
		return 0;
	e->a = (__u64)handler;
	e->b = delta_ns;
	e->flags = handled;
	ev_end(e);
	return 0;
}

TWIN(nmi_handler, on_nmi(handler, delta_ns, handled), void *handler, s64 delta_ns, int handled)

/* app_of - JTR_FL_APP when @p is a thread of an --app process, else 0 */
static __always_inline __u8 app_of(struct task_struct *p, bool btf)
{
	__u32 tgid;

	if (!napp_tgid)
		return 0;
	tgid = T_READ(btf, p, tgid);
	for (int i = 0; i < JTR_TRACE_MAX_APPS; i++) {
		if (i >= napp_tgid)
			break;
		if (app_tgid[i] == tgid)
			return JTR_FL_APP;
	}
	return 0;
}

/* a task's set of cgroups (its css_set) when its last JTR_EV_TASK record was
 * written, by pid: a task is described once, and again when it moves to
 * another group (which gives it another css_set). One read and a lookup on a
 * switch (none for a task the CPU remembers: note_task); the ids are read
 * only then (reading them on every switch cost 52 ns more a switch, 170 ->
 * 222 ns, make bench's floor item) */
struct task_groups {
	__u64 cset;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct task_groups);
} task_groups SEC(".maps");

/* bumped by the user side each time it deletes from task_groups (a task to
 * describe again): every CPU's seen tasks are stale then */
__u32 forget_gen = 0;

/* v1_memory_id - @p's cgroup in the memory controller's hierarchy (the
 * controller every container runtime sets): on cgroup v1 that hierarchy's
 * folder; 0 where the kernel has no memory controller */
static __always_inline __u64 v1_memory_id(struct task_struct *p)
{
	struct cgroup_subsys_state *css = NULL;
	struct css_set *cs;
	int idx;

	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, memory_cgrp_id))
		return 0;
	idx = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	if (idx < 0 || idx >= bpf_core_enum_value(enum cgroup_subsys_id, CGROUP_SUBSYS_COUNT))
		return 0;
	cs = BPF_CORE_READ(p, cgroups);
	if (!cs || bpf_probe_read_kernel(&css, sizeof(css), &cs->subsys[idx]) || !css)
		return 0;
	return BPF_CORE_READ(css, cgroup, kn, id);
}

/* jtr watch's accounting in the kernel (watch_model.h): each record is built
 * in a per-CPU scratch record instead of the ring, counted by the model in
 * its CPU's state (wstate), its causes' counters in wcells, kept in the flight
 * recorder (wrec, only with dumps); the user side reads the tables at each
 * state line. A program that runs while another one's record is being counted
 * on the same CPU (an interrupt inside a program) is not counted: a drop, per
 * type, as a full ring's */
struct jtr_wcfg wcfg = {};		/* set by the user side; on: counting */
__u64 wrec_shared = 0;			/* the head of the region of the CPUs not watched */

/* records of programs run inside one that counts: an interrupt inside a
 * softirq's program brings its vector's entry and exit, an IRQ's, and the
 * wake-ups its timers make (with 4, a vector's exit was dropped in 4 of 15
 * runs beside two UDP floods, one or two in 6.6 million) */
#define W_QUEUE 8

/* w_recording - jtr watch keeps a flight recorder (--dump-above) */
static __always_inline bool w_recording(void)
{
	return wcfg.rec_slots != 0;
}

struct wscratch {
	struct jtr_ev ev;		/* first: the record handlers fill */
	__u32 qhead, qtail;		/* taken, written */
	__u32 inq;			/* a record of q is being written */
	__u32 pad3;
	__u64 busy;
	__u64 next;			/* a switch's next task (its cgroups) */
	__u32 next_pid, pad;
	__u64 next_cset;		/* its css_set (0: not read) */
	__u64 g_cset, g_v2, g_v1;	/* w_group's last css_set and its ids */
	__u32 n;			/* w_cell's room: the stack of the model's calls
					 * is bounded (512 bytes) */
	__u32 pad2;
	struct jtr_wkey key;		/* w_switch's, for the same reason */
	struct jtr_wkey lkey;		/* w_cell's key for the helpers */
	struct jtr_wkey last;		/* w_cell's last key looked up, */
	__u32 last_at;			/* its counters' place + 1 (0: none) */
	__u32 pad4;
	/* last, apart from what every record touches: a program's run inside
	 * one that counts (an interrupt inside a softirq's program), its record
	 * counted after that one's */
	struct jtr_ev q[W_QUEUE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct wscratch);
} wscratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);		/* the watched CPUs: set by the user side */
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct jtr_wcpu);
} wstate SEC(".maps");

/* a cause's counters: wcounts[(slot * JTR_W_NCATS + cat) * (names + 1) + n], the
 * name's n-th of its CPU and category (n = names: "other"); wcells, the
 * names' keys to their n (the user side reads both, the counters mapped) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);		/* CPUs x categories x names */
	__type(key, struct jtr_wkey);
	__type(value, __u32);
} wcells SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);		/* CPUs x categories x (names + 1) */
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct jtr_wcell);
} wcounts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);		/* (CPUs + 1) x rec_slots */
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct jtr_ev);
} wrec SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);		/* CPUs x kept_slots */
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct jtr_wkept);
} wkept SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);	/* watch.h JTR_WATCH_TIDS */
	__type(key, __u32);
	__type(value, __u8);
} wtids SEC(".maps");

/* w_key_same - two keys alike (five words: a key has no padding) */
static __always_inline bool w_key_same(const struct jtr_wkey *a, const struct jtr_wkey *b)
{
	const __u64 *p = (const __u64 *)(const void *)a, *q = (const __u64 *)(const void *)b;

	_Static_assert(sizeof(struct jtr_wkey) == 40, "a key is five words");
	return p[0] == q[0] && p[1] == q[1] && p[2] == q[2] && p[3] == q[3] && p[4] == q[4];
}

/* w_cell - the counters of @k: found, new while the CPU's category has room,
 * else its "other". The key and the new name's place go to the helpers from
 * the scratch map's value: a global function's arguments are plain memory,
 * which 6.1's helpers do not take */
static __always_inline struct jtr_wcell *w_cell(struct jtr_wcpu *c, const struct jtr_wkey *k)
{
	__u32 *n, cat = k->cat, base, i, *at = NULL, zero = 0;
	struct wscratch *x;
	__u64 id = k->id;

	if (cat >= JTR_W_NCATS)
		return NULL;
	/* a softirq, a vector without a sender: its place known from before */
	barrier_var(id);
	if (k->src == JTR_WK_SOFTIRQ && id < JTR_WATCH_SOFTIRQS)
		at = &c->softirq_at[id];
	else if (k->src == JTR_WK_VEC && !k->group[0] && id < JTR_TRACE_MAX_VECS)
		at = &c->vec_at[id];
	if (at && *at) {
		i = *at - 1;
		return bpf_map_lookup_elem(&wcounts, &i);
	}
	x = bpf_map_lookup_elem(&wscratch, &zero);
	if (!x)
		return NULL;
	/* the same cause again (the next task of a switch, most often): its
	 * place is known without hashing the key (a place, once given, stays) */
	if (x->last_at && w_key_same(&x->last, k)) {
		i = x->last_at - 1;
		return bpf_map_lookup_elem(&wcounts, &i);
	}
	x->lkey = *k;
	/* the bound again where it is used: 6.1's verifier loses it when cat
	 * is kept on the stack across the lookups */
	barrier_var(cat);
	cat &= JTR_W_NCATS - 1;
	n = bpf_map_lookup_elem(&wcells, &x->lkey);
	base = (c->slot * JTR_W_NCATS + cat) * (wcfg.names + 1);
	if (n)
		i = base + *n;
	else if (c->nnames[cat] < wcfg.names) {
		x->n = (__u32)c->nnames[cat];
		if (bpf_map_update_elem(&wcells, &x->lkey, &x->n, BPF_NOEXIST))
			i = base + wcfg.names;	/* the table is full: "other" */
		else
			i = base + (__u32)c->nnames[cat]++;
	} else {
		i = base + wcfg.names;
	}
	if (at)
		*at = i + 1;
	x->last = *k;
	x->last_at = i + 1;
	return bpf_map_lookup_elem(&wcounts, &i);
}

/* w_group - task @pid's cgroups (v2 id, v1 memory id) in @k->group: the
 * switch's next task, or the one running here */
static __always_inline void w_group(struct wscratch *x, __u32 pid, struct jtr_wkey *k)
{
	struct task_struct *t;
	__u64 v2, v1, cset;

	if (!x || !pid)
		return;
	if (x->next && x->next_pid == pid) {
		t = (struct task_struct *)x->next;
		cset = x->next_cset;
	} else {
		t = (struct task_struct *)bpf_get_current_task();
		if ((__u32)BPF_CORE_READ(t, pid) != pid)
			return;
		cset = 0;
	}
	if (!cset)
		cset = (__u64)BPF_CORE_READ(t, cgroups);
	/* the tasks of a CPU are mostly of one set of cgroups: its ids are
	 * read again only when the set is another (a task that moves to
	 * another group gets another css_set, as note_task says) */
	if (cset && cset == x->g_cset) {
		v2 = x->g_v2;
		v1 = x->g_v1;
	} else {
		v2 = BPF_CORE_READ(t, cgroups, dfl_cgrp, kn, id);
		v1 = v1_memory_id(t);
		x->g_cset = cset;
		x->g_v2 = v2;
		x->g_v1 = v1;
	}
	__builtin_memcpy(k->group, &v2, sizeof(v2));
	__builtin_memcpy(k->group + 8, &v1, sizeof(v1));
}

/* w_keep - an interruption counted: kept for a dump's outliers.csv, and told
 * to the user side when it may trigger a dump */
static __always_inline void w_keep(struct jtr_wcpu *c, const struct jtr_wkey *k, __u64 start,
				   __u64 len)
{
	struct jtr_wkept *kept;
	struct jtr_ev *e;
	void *ring;
	__u32 i, cpu = c->cpu;

	if (len >= JTR_WATCH_KEEP_MIN_NS && wcfg.kept_slots) {
		i = c->slot * wcfg.kept_slots + (__u32)(c->kept_head & (wcfg.kept_slots - 1));
		kept = bpf_map_lookup_elem(&wkept, &i);
		if (kept) {
			kept->start_ns = start;
			kept->length_ns = len;
			kept->key = *k;
		}
		c->kept_head++;
	}
	if (!wcfg.dump_above_ns || len < wcfg.dump_above_ns)
		return;
	ring = bpf_map_lookup_elem(&rings, &cpu);
	e = ring ? bpf_ringbuf_reserve(ring, JTR_EV_SIZE, 0) : NULL;
	if (!e)
		return;
	e->ts_ns = start;
	e->pid = 0;
	e->cpu = (__u16)cpu;
	e->type = JTR_EV_WATCH_INTR;
	e->flags = 0;
	e->a = len;
	e->b = k->cat | (__u64)k->src << 8 | (__u64)k->id << 32;
	__builtin_memcpy(e->str, k->name, JTR_COMM_LEN);
	__builtin_memcpy(e->str + JTR_COMM_LEN, k->group, JTR_COMM_LEN);
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

#define W_CTX			struct wscratch *
#define W_CFG(ctx)		(&wcfg)
#define W_KEYBUF(ctx)		(&(ctx)->key)	/* ctx: checked by the caller */
#define W_CELL(ctx, c, k)	w_cell(c, k)
#define W_GROUP(ctx, pid, k)	w_group(ctx, pid, k)
#define W_APP_TID(ctx, pid)	(bpf_map_lookup_elem(&wtids, &(__u32){ pid }) != NULL)
#define W_KEEP(ctx, c, k, start, len) w_keep(c, k, start, len)
#include "watch_model.h"

/* w_reserve - the scratch record, or a place in its queue when a record is
 * being counted on this CPU; NULL: the queue is full (a drop); 1: not
 * counting yet */
static __always_inline struct jtr_ev *w_reserve(void)
{
	__u32 zero = 0;
	struct wscratch *x = bpf_map_lookup_elem(&wscratch, &zero);

	if (!wcfg.on)
		return (struct jtr_ev *)1;
	if (!x)
		return NULL;
	if (x->busy) {
		/* inside a program that counts: queued for it, one at a time
		 * (another program inside this one, an NMI's, is a drop) */
		if (x->inq || x->qtail - x->qhead >= W_QUEUE)
			return NULL;
		x->inq = 1;
		return &x->q[x->qtail & (W_QUEUE - 1)];
	}
	x->busy = 1;
	x->next = 0;
	x->next_pid = 0;
	x->next_cset = 0;
	return &x->ev;
}

/* w_slot - @cpu's index among the watched CPUs, or -1 */
static __always_inline int w_slot(__u32 cpu)
{
	__u64 i = cpu;

	barrier_var(i);		/* the bounds check on the register used as the index */
	if (i >= JTR_TRACE_MAX_CPUS)
		return -1;
	return wcfg.slot[i];
}

/* w_model - the scratch record @x counted on its CPU, told to the CPU it
 * concerns (a wake-up onto, a migration away from a watched CPU), kept. A
 * function of its own (global: the verifier reads it once per program, not
 * once per call; each program has one copy, not the model inlined) */
__noinline int w_one(struct wscratch *x, struct jtr_ev *e)
{
	struct jtr_wcpu *c = NULL, *t;
	__u32 s, ts = (__u32)-1, i;
	struct jtr_ev *r;
	__u64 head;

	if (!x || !e)
		return 0;
	s = w_slot(e->cpu);
	if (s != (__u32)-1 && (c = bpf_map_lookup_elem(&wstate, &s))) {
		/* odd while it changes: the user side copies it between two
		 * equal even values */
		*(volatile __u64 *)&c->seq = c->seq + 1;
		asm volatile("" ::: "memory");
		jtr_wmodel_event(x, &wcfg, c, e);
		asm volatile("" ::: "memory");
		*(volatile __u64 *)&c->seq = c->seq + 1;
	}
	if (e->type == JTR_EV_WAKEUP || e->type == JTR_EV_MIGRATE)
		ts = w_slot((__u32)e->b);
	if (ts != (__u32)-1 && ts != s && (t = bpf_map_lookup_elem(&wstate, &ts)))
		jtr_wmodel_remote(&wcfg, t, e);
	if (wcfg.rec_slots) {
		if (c) {
			head = c->rec_head++;
			i = s * wcfg.rec_slots + (__u32)(head & (wcfg.rec_slots - 1));
		} else {
			head = __sync_fetch_and_add(&wrec_shared, 1);
			i = wcfg.nslots * wcfg.rec_slots + (__u32)(head & (wcfg.rec_slots - 1));
		}
		r = bpf_map_lookup_elem(&wrec, &i);
		if (r)
			__builtin_memcpy(r, e, sizeof(*r));
	}
	return 0;
}

/* w_queued - what programs that ran inside the one counting queued, in
 * their order (a function of its own: seldom needed, kept out of w_model's
 * path) */
__noinline int w_queued(struct wscratch *x)
{
	if (!x)
		return 0;
	W_UNROLL
	for (int i = 0; i < W_QUEUE; i++) {
		if (x->qhead == x->qtail)
			break;
		w_one(x, &x->q[x->qhead & (W_QUEUE - 1)]);
		x->qhead++;
	}
	return 0;
}

/* w_model - the scratch record @x->ev counted, then what programs that ran
 * inside this one queued meanwhile (w_reserve), in their order. A function of
 * its own (global: the verifier reads it once per program; each program has
 * one copy, not the model inlined) */
__noinline int w_model(struct wscratch *x)
{
	if (!x)
		return 0;
	if (x->inq) {			/* a queued record is written: it is next */
		x->inq = 0;
		x->qtail++;
		return 0;
	}
	w_one(x, &x->ev);
	if (x->qhead != x->qtail)
		w_queued(x);
	x->busy = 0;
	return 0;
}

static __always_inline void w_account(struct jtr_ev *e)
{
	__u32 zero = 0;

	w_model(bpf_map_lookup_elem(&wscratch, &zero));
}

/* w_next - a switch's next task, for its cgroups (a switch is never run
 * inside another program: its record is the scratch's own) */
static __always_inline void w_next(struct task_struct *next, __u32 pid, __u64 cset)
{
	__u32 zero = 0;
	struct wscratch *x = bpf_map_lookup_elem(&wscratch, &zero);

	if (x) {
		x->next = (__u64)next;
		x->next_pid = pid;
		x->next_cset = cset;
	}
}

/* note_task - a JTR_EV_TASK record for @p where it is new or has moved to
 * another group since its last one: who a cause is in (docs/attribution.md) */
static __always_inline void note_task(struct task_struct *p, bool btf)
{
	struct task_groups g, *seen;
	__u32 pid = T_READ(btf, p, pid), zero = 0, gen = forget_gen;
	struct jtr_trace_counts *c = bpf_map_lookup_elem(&counts, &zero);
	struct jtr_ev *e;

	if (!pid || !c)
		return;
	g.cset = (__u64)T_READ(btf, p, cgroups);
	/* this CPU found it described, in this set, since the last forgetting
	 * (the hash lookup below took 30-50 ns of a switch's 230-260 here) */
	if (c->seen[pid % JTR_SEEN_TASKS].pid == pid && c->seen[pid % JTR_SEEN_TASKS].gen == gen &&
	    c->seen[pid % JTR_SEEN_TASKS].cset == g.cset)
		return;
	seen = bpf_map_lookup_elem(&task_groups, &pid);
	if (seen && seen->cset == g.cset)
		goto described;
	e = ev_begin(JTR_EV_TASK, false);
	if (!e)
		return;
	e->a = (__u64)pid | (__u64)(__u32)BPF_CORE_READ(p, tgid) << 32;
	e->b = BPF_CORE_READ(p, cgroups, dfl_cgrp, kn, id);
	bpf_core_read_str(e->str, JTR_COMM_LEN, &p->comm);
	e->x[2] = v1_memory_id(p);
	/* in the hash before the record is handed over: a record the user side
	 * drops (made while attaching) deletes the task from it again, and an
	 * update after that delete would keep the task described with no record
	 * in the log (a host preemption between the two: once in make test) */
	bpf_map_update_elem(&task_groups, &pid, &g, BPF_ANY);
	ev_end(e);
described:
	c->seen[pid % JTR_SEEN_TASKS].pid = pid;
	c->seen[pid % JTR_SEEN_TASKS].gen = gen;
	c->seen[pid % JTR_SEEN_TASKS].cset = g.cset;
}

/* in_syscall - the system call @task is in (its registers at its entry to
 * the kernel), or JTR_NO_SYSCALL: blocked in a page fault or another exception.
 * x86's entry sets ax to -ENOSYS and the call's number in orig_ax; an
 * exception leaves the user's ax there and its error code in orig_ax */
static __always_inline __u64 in_syscall(struct task_struct *task)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

	if (!regs)
		return JTR_NO_SYSCALL;
#if defined(__TARGET_ARCH_x86)
	if (BPF_CORE_READ(regs, ax) != (unsigned long)-38)
		return JTR_NO_SYSCALL;
	return BPF_CORE_READ(regs, orig_ax);
#elif defined(__TARGET_ARCH_arm64)
	{
		int nr = BPF_CORE_READ(regs, syscallno);

		return nr < 0 ? JTR_NO_SYSCALL : (__u64)nr;
	}
#else
	return JTR_NO_SYSCALL;
#endif
}

/* note_block - a JTR_EV_BLOCK record: thread @prev of the application leaves
 * its CPU blocked, in the system call its registers say (@regs: whether this
 * program may read them: tp_btf only) */
static __always_inline void note_block(struct task_struct *prev, unsigned int prev_state,
				       bool regs)
{
	struct jtr_ev *e = ev_begin(JTR_EV_BLOCK, false);

	if (!e)
		return;
	e->pid = BPF_CORE_READ(prev, pid);
	e->a = regs ? in_syscall(prev) : JTR_NO_SYSCALL;
	e->b = prev_state;
	ev_end(e);
}

/* T_COMM - task @p's comm into @dst (JTR_COMM_LEN bytes), NUL-padded: under
 * tp_btf (@btf) read in place as two words, jtr_comm_pad'ded, else (and on
 * a big-endian CPU) with the helper */
#define T_COMM(btf, dst, p)	do {					\
	if ((btf) && JTR_COMM_PAD) {					\
		__u64 __w0 = *(const __u64 *)(const void *)&(p)->comm[0];	\
		__u64 __w1 = *(const __u64 *)(const void *)&(p)->comm[8];	\
									\
		jtr_comm_pad(&__w0, &__w1);				\
		__builtin_memcpy((dst), &__w0, 8);			\
		__builtin_memcpy((dst) + 8, &__w1, 8);			\
	} else {							\
		bpf_core_read_str(dst, JTR_COMM_LEN, &(p)->comm);	\
	}								\
} while (0)

/* on_switch - who left the CPU, who came, and whether the one that left
 * could have gone on running (preempted) or chose to sleep (blocked); a
 * thread of the application that blocks says in what first (note_block) */
static __always_inline int on_switch(bool preempt, struct task_struct *prev,
				     struct task_struct *next, unsigned int prev_state,
				     bool btf)
{
	struct jtr_ev *e;
	__u64 prev_prio, next_prio;
	__u8 prev_app;

	if (!traced(bpf_get_smp_processor_id()))
		return 0;
	/* jtr watch reads a cause's cgroups where it counts it (w_group); a
	 * dump's records say who each task is, as a log's do */
	if (!watch_mode || wcfg.rec_slots)
		note_task(next, btf);
	prev_app = app_of(prev, btf);
	if (app_blocks && prev_app && !preempt && prev_state != 0)
		note_block(prev, prev_state, btf);
	e = ev_begin(JTR_EV_SWITCH, false);
	if (!e)
		return 0;
	prev_prio = (__u16)T_READ(btf, prev, prio);
	next_prio = (__u16)T_READ(btf, next, prio);
	e->a = (__u64)(__u32)T_READ(btf, prev, pid) | (__u64)(__u32)T_READ(btf, next, pid) << 32;
	T_COMM(btf, e->str, prev);
	T_COMM(btf, &e->str[JTR_COMM_LEN], next);
	e->b = prev_prio | next_prio << 16 | (__u64)prev_state << 32;
	e->flags = preempt || prev_state == 0 ? JTR_SW_PREEMPTED : 0;	/* TASK_RUNNING */
	e->flags |= prev_app | (app_of(next, btf) ? JTR_FL_APP_NEXT : 0);
	if (JTR_WATCH_BUILD && watch_mode)
		w_next(next, (__u32)(e->a >> 32), (__u64)T_READ(btf, next, cgroups));
	ev_end(e);
	return 0;
}

/* the twins by hand: only tp_btf may read a task's registers */
SEC("tp_btf/sched_switch")
int BPF_PROG(btf_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	return JTR_TIMED(JTR_P_sched_switch, on_switch(preempt, prev, next, prev_state, true));
}
SEC("raw_tp/sched_switch")
int BPF_PROG(raw_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	return JTR_TIMED(JTR_P_sched_switch, on_switch(preempt, prev, next, prev_state, false));
}
FLOORS("tp_btf/sched_switch", sched_switch)

/* on_task - a wake-up or migration that concerns a traced CPU: the CPU it
 * happens on, the CPU the task will run on, or the one it leaves */
static __always_inline int on_task(__u8 type, struct task_struct *p, int to_cpu, int from_cpu,
				   bool btf)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct jtr_ev *e;
	__u8 app;

	if (!traced(cpu) && !traced(to_cpu) && !(from_cpu >= 0 && traced(from_cpu)))
		return 0;
	app = app_of(p, btf);
	/* a wake-up of the application's thread names its waker too (one reserve:
	 * two, one per size, merged by the compiler, made 6.1's verifier lose
	 * track of the record's null check) */
	e = ev_begin_n(type, true, type == JTR_EV_WAKING && app ? JTR_EV_SIZE : JTR_EV_BYTES(type));
	if (!e)
		return 0;
	e->a = (__u32)T_READ(btf, p, pid);
	e->flags = app;
	if (type == JTR_EV_WAKING && app)
		bpf_get_current_comm(&e->str[JTR_COMM_LEN], JTR_COMM_LEN);
	if (type == JTR_EV_MIGRATE)
		e->b = (__u64)(__u32)from_cpu | (__u64)(__u32)to_cpu << 32;
	else
		e->b = (__u64)(__u32)to_cpu | (__u64)(__u16)T_READ(btf, p, prio) << 32;
	T_COMM(btf, e->str, p);
	ev_end(e);
	return 0;
}

/* task_cpu - the CPU a task is queued on */
static __always_inline int task_cpu(struct task_struct *p, bool btf)
{
	return T_READ(btf, p, thread_info.cpu);
}

TWIN(sched_wakeup, on_task(JTR_EV_WAKEUP, p, task_cpu(p, btf), -1, btf), struct task_struct *p)
TWIN(sched_waking, on_task(JTR_EV_WAKING, p, task_cpu(p, btf), -1, btf), struct task_struct *p)
TWIN(sched_migrate_task, on_task(JTR_EV_MIGRATE, p, dest_cpu, task_cpu(p, btf), btf),
     struct task_struct *p, int dest_cpu)

/* on_fault - page_fault_user/kernel: address, instruction, error code */
static __always_inline int on_fault(__u8 type, unsigned long address, struct pt_regs *regs,
				    unsigned long error_code, bool btf)
{
	struct jtr_ev *e = ev_begin(type, false);

	if (!e)
		return 0;
	e->a = address;
	e->b = T_READ(btf, regs, ip);
	e->x[0] = error_code;
	ev_end(e);
	return 0;
}

TWIN(page_fault_user, on_fault(JTR_EV_PF_USER, address, regs, error_code, btf),
     unsigned long address, struct pt_regs *regs, unsigned long error_code)
TWIN(page_fault_kernel, on_fault(JTR_EV_PF_KERNEL, address, regs, error_code, btf),
     unsigned long address, struct pt_regs *regs, unsigned long error_code)

/* on_ptr - an event about a kernel object and the function it runs */
static __always_inline int on_ptr(__u8 type, const void *obj, __u64 fn)
{
	struct jtr_ev *e = ev_begin(type, false);

	if (!e)
		return 0;
	e->a = (__u64)obj;
	e->b = fn;
	ev_end(e);
	return 0;
}

TWIN(workqueue_execute_start,
     on_ptr(JTR_EV_WQ_START, work, (__u64)T_READ(btf, work, func)), struct work_struct *work)
/* the end's function argument is not readable from tp_btf (a function
 * pointer), and the work item may be freed by then: match by the work pointer */
TWIN(workqueue_execute_end, on_ptr(JTR_EV_WQ_END, work, 0),
     struct work_struct *work, work_func_t function)
/* on_hrtimer - hrtimer_expire_entry: the timer, its function, when it was
 * due (the hard expiry, and the soft one a timer slack puts before it) and
 * the time the expiry code read: a sleeper's intended wake-up is its expiry */
/* hrt_flush - the kept hrtimer entry of @c as a record of its own */
static __always_inline void hrt_flush(struct jtr_trace_counts *c, __u32 cpu)
{
	struct jtr_ev *e = kept_record(c, cpu, JTR_EV_HRTIMER_ENTRY,
				       JTR_EV_BYTES(JTR_EV_HRTIMER_ENTRY), c->hrt_ts, c->hrt_pid);

	c->hrt_open = 0;
	if (!e)
		return;
	e->a = c->hrt_timer;
	e->b = c->hrt_fn;
	e->x[0] = c->hrt_x[0];
	e->x[1] = c->hrt_x[1];
	e->x[2] = c->hrt_x[2];
	ev_end(e);
}

/* hrtimer_pair - a trace's hrtimer callback, its entry and exit in one ring
 * record, as softirq_pair does for a softirq: the entry kept in the CPU's
 * counters, the exit's record carrying it (JTR_HRT_PAIR) */
static __always_inline int hrtimer_pair(bool entry, struct hrtimer *hrtimer, ktime_t *now,
					bool btf)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct jtr_trace_counts *c = traced_counts(cpu);
	struct jtr_ev *e;
	bool paired;

	if (!c)
		return 0;
	if (entry) {
		if (c->hrt_open)
			hrt_flush(c, cpu);
		c->hrt_ts = bpf_ktime_get_ns();
		c->hrt_pid = (__u32)bpf_get_current_pid_tgid();
		c->hrt_timer = (__u64)hrtimer;
		c->hrt_fn = (__u64)T_READ(btf, hrtimer, function);
		c->hrt_x[0] = (__u64)T_READ(btf, hrtimer, node.expires);
		c->hrt_x[1] = (__u64)T_READ(btf, hrtimer, _softexpires);
		bpf_probe_read_kernel(&c->hrt_x[2], sizeof(c->hrt_x[2]), now);
		c->hrt_open = 1;
		c->events[JTR_EV_HRTIMER_ENTRY]++;
		return 0;
	}
	paired = c->hrt_open && c->hrt_timer == (__u64)hrtimer;
	/* a constant size (the verifier's): the whole record, paired or not */
	e = ev_reserve(c, JTR_EV_HRTIMER_EXIT, cpu, JTR_EV_SIZE);
	if (paired)
		c->hrt_open = 0;
	if (!e) {
		if (paired)
			kept_lost(c, JTR_EV_HRTIMER_ENTRY);
		return 0;
	}
	e->a = (__u64)hrtimer;
	if (paired) {
		e->b = c->hrt_ts;
		e->flags = JTR_HRT_PAIR;
		e->x[0] = c->hrt_x[0];
		e->x[1] = c->hrt_x[1];
		e->x[2] = c->hrt_x[2];
		e->x[3] = c->hrt_fn;
	}
	ev_end(e);
	return 0;
}

static __always_inline int on_hrtimer(struct hrtimer *hrtimer, ktime_t *now, bool btf)
{
	struct jtr_ev *e;

	if (!(JTR_WATCH_BUILD && watch_mode))
		return hrtimer_pair(true, hrtimer, now, btf);
	e = ev_begin(JTR_EV_HRTIMER_ENTRY, false);

	if (!e)
		return 0;
	e->a = (__u64)hrtimer;
	e->b = (__u64)T_READ(btf, hrtimer, function);
	e->x[0] = (__u64)T_READ(btf, hrtimer, node.expires);
	e->x[1] = (__u64)T_READ(btf, hrtimer, _softexpires);
	bpf_probe_read_kernel(&e->x[2], sizeof(e->x[2]), now);
	ev_end(e);
	return 0;
}

TWIN(hrtimer_expire_entry, on_hrtimer(hrtimer, now, btf), struct hrtimer *hrtimer, ktime_t *now)
TWIN(hrtimer_expire_exit, JTR_WATCH_BUILD && watch_mode ?
			       on_ptr(JTR_EV_HRTIMER_EXIT, hrtimer, 0) :
			       hrtimer_pair(false, hrtimer, NULL, btf), struct hrtimer *hrtimer)
TWIN(timer_expire_entry,
     on_ptr(JTR_EV_TIMER_ENTRY, timer, (__u64)T_READ(btf, timer, function)),
     struct timer_list *timer, unsigned long baseclk)
TWIN(timer_expire_exit, on_ptr(JTR_EV_TIMER_EXIT, timer, 0), struct timer_list *timer)

/* on_tick_stop - timer:tick_stop: whether this CPU's tick stopped or what kept
 * it running (a nohz_full CPU checks at every interrupt's exit; any CPU says
 * when its tick stops for idle), logged when that changes: the state a tick
 * on a nohz_full CPU came in (the residual tick, named by why) */
static __always_inline int on_tick_stop(int success, int dependency)
{
	__u32 cpu = bpf_get_smp_processor_id(), zero = 0;
	__u64 now = 1 | (__u64)(success != 0) << 1 | (__u64)(__u32)dependency << 2;
	struct jtr_trace_counts *c;
	struct jtr_ev *e;

	if (!traced(cpu))
		return 0;
	c = bpf_map_lookup_elem(&counts, &zero);
	if (!c || c->tick_state == now)
		return 0;
	e = ev_reserve(c, JTR_EV_TICK_STOP, cpu, JTR_EV_BYTES(JTR_EV_TICK_STOP));
	if (!e)
		return 0;
	e->a = success != 0;
	e->b = (__u32)dependency;
	c->tick_state = now;
	ev_end(e);
	return 0;
}

TWIN(tick_stop, on_tick_stop(success, dependency), int success, int dependency)

/* the IPI kind of each irq_vectors pair (JTR_IPI_RESCHED, JTR_IPI_CALL; 0:
 * not an IPI), set by the user side from the pairs' names */
const volatile __u8 vec_ipi[JTR_TRACE_MAX_VECS] = {};

/* the last IPI sent to each traced CPU, by kind ([cpu * 2] a reschedule,
 * [cpu * 2 + 1] a function call): its receiver's vector entry takes it.
 * Written by the sending CPU, read by the receiving one, without a lock (a
 * tracing program may not take one): two senders to one CPU at the same
 * moment can mix their fields; the time is written last */
struct ipi_send {
	__u64 ts;			/* 0: taken, or none */
	__u64 fn;			/* the callback, or the callsite where there is none */
	__u32 pid, cpu;			/* the sender: its task, its CPU */
	__u8 site;			/* fn is the callsite */
	__u8 queued;			/* fn is the function queued (csd_queue_cpu) */
	char comm[JTR_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, JTR_TRACE_MAX_CPUS * 2);
	__type(key, __u32);
	__type(value, struct ipi_send);
} ipi_sends SEC(".maps");

/* an IPI received this long after its send is not that send's (one that raised
 * no interrupt: a CPU polling in idle is woken without one) */
#define JTR_IPI_STALE_NS 10000000ULL

/* a function queued for a CPU (csd_queue_cpu) this soon before the IPI that
 * runs it is sent from the same CPU is that IPI's function: the send names
 * only the generic handler that runs the queue */
#define JTR_IPI_QUEUED_NS 100000ULL

/* note_send - an IPI from here to @to (ipi_send_cpu, _cpumask): @callback,
 * or @callsite for a reschedule, which has none; @queued: the function queued
 * for it (csd_queue_cpu), the send that follows keeps it */
static __always_inline void note_send(__u32 to, __u64 callsite, __u64 callback, bool queued)
{
	__u32 k = to * 2 + (callback ? 1 : 0), cpu = bpf_get_smp_processor_id();
	struct ipi_send *s;
	__u64 now;

	if (!traced(to) || !(s = bpf_map_lookup_elem(&ipi_sends, &k)))
		return;
	now = bpf_ktime_get_ns();
	if (!queued && callback && s->queued && s->cpu == cpu && now - s->ts < JTR_IPI_QUEUED_NS) {
		s->ts = now;
		return;
	}
	s->fn = callback ? callback : callsite;
	s->site = !callback;
	s->queued = queued;
	s->pid = (__u32)bpf_get_current_pid_tgid();
	s->cpu = cpu;
	bpf_get_current_comm(s->comm, sizeof(s->comm));
	asm volatile("" ::: "memory");	/* the time last (x86 keeps stores in order) */
	s->ts = now;
}

TWIN(ipi_send_cpu, (note_send(cpu, callsite, (__u64)callback, false), 0),
     unsigned int cpu, unsigned long callsite, void *callback)
/* csd_queue_cpu's function is a function pointer, which a tp_btf program may
 * not read (the verifier refuses that context access: "arg2 type FUNC_PROTO
 * is not a struct"): raw_tp programs under each name */
#define RAW_TWIN(tp, call, ...)						\
	SEC("raw_tp/" #tp) int BPF_PROG(btf_##tp, __VA_ARGS__)		\
	{ return JTR_TIMED(JTR_P_##tp, call); }				\
	SEC("raw_tp/" #tp) int BPF_PROG(raw_##tp, __VA_ARGS__)		\
	{ return JTR_TIMED(JTR_P_##tp, call); }				\
	FLOORS("raw_tp/" #tp, tp)

RAW_TWIN(csd_queue_cpu, (note_send(cpu, callsite, (__u64)func, true), 0),
	 unsigned int cpu, unsigned long callsite, void *func, void *csd)

/* ipi_send_cpumask: each traced CPU of the mask (the words of the traced CPUs only) */
static __always_inline int on_send_mask(const struct cpumask *mask, unsigned long callsite,
					void *callback)
{
	for (int w = 0; w < JTR_TRACE_MAX_CPUS / 64; w++) {
		__u64 bits = 0;

		if (!cpu_mask[w])
			continue;
		if (bpf_probe_read_kernel(&bits, sizeof(bits), &mask->bits[w]))
			break;
		bits &= cpu_mask[w];
		for (int b = 0; b < 64 && bits; b++) {
			if (bits & (1ULL << b)) {
				note_send(w * 64 + b, callsite, (__u64)callback, false);
				bits &= ~(1ULL << b);
			}
		}
	}
	return 0;
}

TWIN(ipi_send_cpumask, on_send_mask(cpumask, callsite, callback),
     struct cpumask *cpumask, unsigned long callsite, void *callback)

/* vector_pair - a trace's interrupt vector that is not an IPI (the local
 * timer, most often: every tick and every timer wake-up), its entry and exit
 * in one ring record, as softirq_pair does for a softirq: the entry, after
 * its look at the steal counter, kept in the CPU's counters, the exit's
 * record carrying it (JTR_VEC_PAIR). An IPI's entry is a whole record of its
 * own (its sender); its exit, like an exit without its entry kept, is a
 * record of its own */
static __always_inline int vector_pair(__u8 type, __u32 k, __u32 vector)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct jtr_trace_counts *c = traced_counts(cpu);
	struct jtr_ev *e;

	if (!c)
		return 0;
	if (type == JTR_EV_VEC_ENTRY) {
		look_steal(c, cpu);
		keep_entry(c, cpu, &c->vec, JTR_EV_VEC_ENTRY, k, vector, true);
		return 0;
	}
	e = kept_exit(c, cpu, &c->vec, JTR_EV_VEC_EXIT, JTR_EV_VEC_ENTRY, k, JTR_VEC_PAIR);
	if (!e)
		return 0;
	e->a = vector;
	if (e->flags == JTR_VEC_PAIR)
		e->a |= (__u64)k << 32;
	else
		e->b = k;
	ev_end(e);
	return 0;
}

/* on_vector - irq_vectors pair @k's _entry or _exit (raw tracepoint: its one
 * argument, args[0], is the vector); an IPI's entry with its sender, where
 * its send was seen */
static __always_inline int on_vector(__u8 type, __u32 k, struct bpf_raw_tracepoint_args *ctx)
{
	struct jtr_ev *e;
	struct ipi_send *s;
	__u32 key;

	/* an IPI's entry: a whole record, for its sender */
	if (type == JTR_EV_VEC_ENTRY && vec_ipi[k]) {
		e = ev_begin_n(type, false, JTR_EV_SIZE);
		if (!e)
			return 0;
		e->a = (__u32)ctx->args[0];
		e->b = k;
		key = (__u32)e->cpu * 2 + (vec_ipi[k] == JTR_IPI_CALL);
		s = bpf_map_lookup_elem(&ipi_sends, &key);
		if (s && s->ts && s->ts <= e->ts_ns && e->ts_ns - s->ts < JTR_IPI_STALE_NS) {
			e->flags = JTR_VEC_SENDER | (s->site ? JTR_VEC_SITE : 0);
			__builtin_memcpy(e->str, s->comm, JTR_COMM_LEN);
			e->x[2] = s->fn;
			e->x[3] = (__u64)s->pid | (__u64)s->cpu << 32;
			s->ts = 0;
		}
		ev_end(e);
		return 0;
	}
	if (!(JTR_WATCH_BUILD && watch_mode))
		return vector_pair(type, k, (__u32)ctx->args[0]);
	e = ev_begin(type, false);
	if (!e)
		return 0;
	e->a = (__u32)ctx->args[0];
	e->b = k;
	ev_end(e);
	return 0;
}

/* the programs of pair @k; the user side loads those of the pairs it found */
#define VEC_PAIR(k)								\
	SEC("raw_tp") int vec_entry_##k(struct bpf_raw_tracepoint_args *ctx)	\
	{ return JTR_TIMED(JTR_P_VEC + 2 * (k), on_vector(JTR_EV_VEC_ENTRY, k, ctx)); } \
	SEC("raw_tp") int vec_exit_##k(struct bpf_raw_tracepoint_args *ctx)	\
	{ return JTR_TIMED(JTR_P_VEC + 2 * (k) + 1, on_vector(JTR_EV_VEC_EXIT, k, ctx)); }

/* the FLOORS of every irq_vectors tracepoint traced */
SEC("raw_tp") int floor_vectors(struct bpf_raw_tracepoint_args *ctx) { return 0; }
SEC("raw_tp") int clock_vectors(struct bpf_raw_tracepoint_args *ctx)
{
	bpf_ktime_get_ns();
	return 0;
}

_Static_assert(JTR_TRACE_MAX_VECS == 32, "one VEC_PAIR per irq_vectors pair below");
VEC_PAIR(0) VEC_PAIR(1) VEC_PAIR(2) VEC_PAIR(3) VEC_PAIR(4) VEC_PAIR(5) VEC_PAIR(6)
VEC_PAIR(7) VEC_PAIR(8) VEC_PAIR(9) VEC_PAIR(10) VEC_PAIR(11) VEC_PAIR(12) VEC_PAIR(13)
VEC_PAIR(14) VEC_PAIR(15) VEC_PAIR(16) VEC_PAIR(17) VEC_PAIR(18) VEC_PAIR(19)
VEC_PAIR(20) VEC_PAIR(21) VEC_PAIR(22) VEC_PAIR(23) VEC_PAIR(24) VEC_PAIR(25)
VEC_PAIR(26) VEC_PAIR(27) VEC_PAIR(28) VEC_PAIR(29) VEC_PAIR(30) VEC_PAIR(31)

/* jtr run app: the timed function's calls. Its entry (a uprobe) keeps the
 * thread's time, CPU and stack pointer; its return (a uretprobe) writes one
 * JTR_EV_CALL record with both, on the CPU it returns on. A recursive call
 * (entered again deeper on the same stack) is counted once, from the
 * outermost entry to its return; an entry at or above the kept stack pointer
 * means the kept call never returned through its uretprobe (longjmp, an
 * exception, a uretprobe attached after its entry): it starts afresh. The
 * threads are the process's the uprobe was attached for: no filter here */
struct call_start {
	__u64 ts;
	__u64 sp;
	__u32 cpu;
	__u32 depth;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct call_start);
} call_starts SEC(".maps");

/* call_enter - a call begins on this thread: @nest, a uprobe's entry, where a
 * deeper entry on the same stack is a recursive call; a USDT start point
 * always begins one */
static __always_inline int call_enter(struct pt_regs *ctx, bool nest)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct call_start *s = bpf_map_lookup_elem(&call_starts, &tid), n;
	__u64 sp = PT_REGS_SP(ctx);

	if (nest && s && s->depth && sp < s->sp) {
		s->depth++;
		return 0;
	}
	n.ts = bpf_ktime_get_ns();
	n.sp = sp;
	n.cpu = bpf_get_smp_processor_id();
	n.depth = 1;
	if (s)
		*s = n;
	else
		bpf_map_update_elem(&call_starts, &tid, &n, BPF_ANY);
	return 0;
}

/* call_exit - the thread's call (its outermost) ends: its JTR_EV_CALL record */
static __always_inline int call_exit(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct call_start *s = bpf_map_lookup_elem(&call_starts, &tid);
	struct jtr_ev *e;

	if (!s || !s->depth || --s->depth)
		return 0;
	e = ev_begin(JTR_EV_CALL, true);
	if (!e)
		return 0;
	e->a = s->ts;
	e->b = (__u64)s->cpu | (__u64)e->cpu << 32;
	ev_end(e);
	return 0;
}

SEC("uprobe") int app_entry(struct pt_regs *ctx)
{
	return JTR_TIMED(JTR_P_APP, call_enter(ctx, true));
}
SEC("uretprobe") int app_exit(struct pt_regs *ctx) { return JTR_TIMED(JTR_P_APP + 1, call_exit()); }
/* --usdt: a pair of USDT probes, the call's start and end (bpf/usdt.bpf.h's
 * maps make them attachable; their arguments are not read) */
SEC("usdt") int app_usdt_start(struct pt_regs *ctx)
{
	return JTR_TIMED(JTR_P_APP + 2, call_enter(ctx, false));
}
SEC("usdt") int app_usdt_end(struct pt_regs *ctx) { return JTR_TIMED(JTR_P_APP + 3, call_exit()); }
