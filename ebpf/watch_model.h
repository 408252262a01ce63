/* SPDX-License-Identifier: GPL-2.0-only */
/* watch_model.h - jtr watch's accounting of interruptions (watch.h says what
 * counts, and how): one model, compiled twice. The kernel side
 * (trace.bpf.c) runs it in each traced program, per CPU, so that counting
 * costs no record in a ring buffer and no wake-up of user space; the user
 * side (watch.c) runs the same code on synthetic records for the unit tests
 * (ebpf/tests/test_watch.c). Names are keys here (struct jtr_wkey: an IRQ's
 * number and action, a vector's kind, a task's comm and cgroups): the user
 * side turns them into the names it prints when it reads the tables.
 *
 * The includer defines, before including:
 *   W_CTX			the type of the side's context pointer
 *   W_CELL(ctx, c, key)	the counters of @key, a struct with count, ns and
 *				events (NULL: none to be had); the side bounds the
 *				names per CPU and category (jtr_wkey_other)
 *   W_GROUP(ctx, pid, key)	fill key->group with task @pid's container (the
 *				kernel side: its cgroups' ids)
 *   W_APP_TID(ctx, pid)	is @pid one of the --app tasks found running when
 *				the watch began?
 *   W_CFG(ctx)		the settings (struct jtr_wcfg *)
 *   W_KEYBUF(ctx)		room for a key (the BPF side's stack is small); ctx
 *				is not NULL there
 *   W_KEEP(ctx, c, key, start, len)
 *				an interruption was counted: kept for a dump's
 *				outliers.csv, maybe a dump's trigger
 * and the types __u8 .. __u64.
 *
 * Bounded loops and masked indexes only: the BPF verifier reads this code.
 * Remote events (a wake-up or migration on another CPU that concerns a
 * watched one) are notices in the CPU's state (pend_*), taken by the CPU's
 * next event: a CPU's state has one writer, the CPU itself.
 */
#ifndef JTR_WATCH_MODEL_H
#define JTR_WATCH_MODEL_H

#include "trace.h"

/* W_SUB: a part the BPF side makes a function of its own (global: the
 * verifier reads it once, not along every path that calls it); its pointer
 * arguments are checked (the verifier takes them as possibly NULL) */
#ifdef __BPF__
#define W_FN static __always_inline
#define W_SUB __noinline int
/* an argument a part may not read on this side: passed all the same (the
 * compiler would pass nothing for it, and the verifier refuse the call) */
#define W_USE(x) asm volatile("" :: "r"(x))
/* loops unrolled: no back-edge for a verifier (6.1's refused the shape clang
 * gave one of them) */
#define W_UNROLL _Pragma("unroll")
#else
#define W_FN static inline
#define W_SUB static inline int
#define W_USE(x) ((void)(x))
#define W_UNROLL
#endif

#define JTR_WATCH_DEPTH		8	/* interrupts nested in one another */
#define JTR_WATCH_BUCKETS	17	/* 16 upper bounds (1 us .. 100 ms) and +Inf */
#define JTR_WATCH_KEEP_MIN_NS	1000	/* interruptions kept for a dump's outliers.csv */
#define JTR_WATCH_JOIN_NS	20000	/* a softirq this soon after an interrupt is part of it */
#define JTR_WATCH_RUNNERS	16	/* comms whose run time is kept per CPU (no --app) */
#define JTR_WATCH_RT_PRIO_END	100	/* the first prio that is not real-time */
#define JTR_WATCH_SETTLE_NS	1000000000ULL	/* without --app: nothing counted before */
#define JTR_WATCH_APPS		JTR_TRACE_MAX_APPS	/* --app comms, and PIDs */
#define JTR_WATCH_SOFTIRQS	16	/* softirq vectors a CPU's state keeps a shortcut for */

enum jtr_watch_cat {
	JTR_W_TICK,		/* "timer tick": the local timer vector */
	JTR_W_IPI,		/* "IPI": reschedule, call_function(_single), irq_work */
	JTR_W_HARDIRQ,		/* "hardirq": device IRQs and other vectors */
	JTR_W_SOFTIRQ,		/* "softirq" */
	JTR_W_TASK,		/* "task preemption" */
	JTR_W_PF,		/* "page fault" (kernel events only: no duration) */
	JTR_W_NMI,		/* "NMI" */
	JTR_W_THROTTLE,		/* "RT throttling" */
	JTR_W_NCATS
};

/* what a key's id and name are */
enum jtr_wsrc {
	JTR_WK_IRQ = 1,		/* id = IRQ number, name = its action */
	JTR_WK_VEC,		/* id = the irq_vectors pair's index; group = an IPI's sender */
	JTR_WK_SOFTIRQ,		/* id = the vector */
	JTR_WK_TASK,		/* name = comm (id = pid where it has none); group = cgroups */
	JTR_WK_PF,		/* id 0 user, 1 kernel */
	JTR_WK_NMI,
	JTR_WK_THROTTLE,
	JTR_WK_OTHER,		/* the names past the bound, of cpu and cat */
};

/* a cause, as the tables are keyed: 40 bytes, no padding */
struct jtr_wkey {
	__u16 cpu;
	__u8 cat;		/* enum jtr_watch_cat */
	__u8 src;		/* enum jtr_wsrc */
	__u32 id;
	char name[JTR_COMM_LEN];
	char group[JTR_COMM_LEN];	/* a task's: cgroup v2 id, v1 id (the kernel
					 * side); an IPI's sender's comm */
};

/* a cause's counters */
struct jtr_wcell {
	__u64 count;		/* interruptions */
	__u64 ns;		/* their time */
	__u64 events;		/* kernel events of this name (interruptions or not) */
};

/* an interrupt open on the CPU */
struct jtr_wframe {
	__u64 kind;		/* JTR_EV_IRQ_ENTRY, _SOFTIRQ_ENTRY or _VEC_ENTRY */
	__u64 irq;		/* irq or vector number: the exit's match */
	__u64 entry_ns, child_ns;
	struct jtr_wkey key;
};

/* the default rule's run time of one comm on a CPU */
struct jtr_watch_runner {
	char comm[JTR_COMM_LEN];
	__u64 ns;
};

/* one interruption, kept for a dump's outliers.csv */
struct jtr_wkept {
	__u64 start_ns, length_ns;
	struct jtr_wkey key;
};

/* what the user side sets before the watch begins */
struct jtr_wcfg {
	__u64 on;			/* 0 until every program is attached */
	__u64 start_ns;			/* the watch began (0: at each CPU's first event) */
	__u64 settle_ns;		/* JTR_WATCH_SETTLE_NS (tests set 0) */
	__u64 dump_above_ns;		/* 0: no dumps */
	__u32 names;			/* names kept per CPU and category */
	__u32 by_app;			/* --app given */
	__u32 napp_comm;
	__u32 rec_slots;		/* records kept per recorder region (0: none) */
	__u32 kept_slots;		/* interruptions kept per watched CPU */
	__u32 nslots;			/* watched CPUs */
	char app_comm[JTR_WATCH_APPS][JTR_COMM_LEN];
	__u8 vec_cat[JTR_TRACE_MAX_VECS];	/* an irq_vectors pair's category */
	__s16 slot[JTR_TRACE_MAX_CPUS];		/* CPU -> its state's index, -1: not watched */
};

/* one watched CPU's accounting: what it has counted and where it stands */
struct jtr_wcpu {
	__u64 seq;			/* odd while the kernel side changes it (and its
					 * counters) */
	__u64 count[JTR_W_NCATS], ns[JTR_W_NCATS];
	__u64 hist[JTR_W_NCATS][JTR_WATCH_BUCKETS];	/* interruptions by duration */
	__u64 nnames[JTR_W_NCATS];	/* names in the table (the kernel side's bound) */
	__u64 records;			/* events accounted */
	__u64 longest_ns;
	__u64 rec_head, kept_head;	/* records and interruptions kept so far */
	__u32 cpu;
	__u32 slot;			/* its index among the watched CPUs */
	__u32 seen;			/* an event came: running is known */
	__u32 pad0;
	/* the open interrupt */
	struct jtr_wframe stack[JTR_WATCH_DEPTH];
	__u32 depth;
	__u32 counting;			/* it interrupts the application */
	__u64 intr_start, intr_end;	/* end: its last exit */
	__u64 best_self;
	struct jtr_wkey best;		/* its cause so far */
	/* the task on the CPU */
	__s64 running;			/* its pid (0: idle) */
	char comm[JTR_COMM_LEN];	/* "": not switched to since the watch began */
	__u32 app;			/* with --app: it is one of the application's */
	__s32 run_idx;			/* its row in run[], or -1 */
	__u64 last_switch;		/* its slice began (or the watch did) */
	__u64 settled;			/* without --app: interruptions count from here */
	/* without --app: run time by comm, the Space-Saving way (a new comm in a
	 * full table takes the smallest row's place and time), so a comm that
	 * has run longest is always there; lead is the longest */
	struct jtr_watch_runner run[JTR_WATCH_RUNNERS];
	__u32 nrun, lead;
	__u64 app_ns;			/* the application's slices that ended here */
	char app_comm[JTR_COMM_LEN];	/* with --app: its last task seen here */
	/* the application waits */
	__u32 waiting;			/* one of its tasks is runnable here, not running */
	__u32 victim;			/* that task */
	char victim_comm[JTR_COMM_LEN];
	__u32 win_open;			/* another task (or RT throttling) has the CPU */
	__u32 pad;
	__u64 win_start;
	struct jtr_wkey win;		/* what took the CPU */
	/* the kernel side's shortcut for the commonest causes, a softirq vector
	 * and a vector without a sender: their counters' places (+1; 0: not
	 * known yet), found without a hash lookup */
	__u32 softirq_at[JTR_WATCH_SOFTIRQS], vec_at[JTR_TRACE_MAX_VECS];
	/* what other CPUs' programs read and write here (jtr_wmodel_remote),
	 * which this CPU writes seldom: lines of their own, apart from the
	 * ones every event writes (a wake-up from another CPU that read the
	 * runners' table took its lines from this CPU each time: 350-365 ns
	 * a wake-up beside two floods, 233-258 with these). First, without
	 * --app: run[lead]'s comm, the application's (w_runner_add) */
	char lead_comm[JTR_COMM_LEN] __attribute__((aligned(64)));
	__u32 lead_set;			/* run[] has a row: lead_comm holds */
	__u32 pad2;
	/* notices from other CPUs, taken by this CPU's next event */
	__u64 pend_wake_ts;		/* 0: none */
	__u32 pend_wake_pid, pend_wake_app;
	char pend_wake_comm[JTR_COMM_LEN];
	__u64 pend_move_ts;		/* 0: none */
	__u32 pend_move_pid, pad3;
};

/* upper bounds of the duration histogram's buckets, ns (the last is +Inf) */
#define JTR_WATCH_BOUNDS { 1000, 2000, 5000, 10000, 20000, 50000, 100000, 200000, 500000, \
	1000000, 2000000, 5000000, 10000000, 20000000, 50000000, 100000000 }

/* jtr_wkey_other - the key of the names past the bound of @key's CPU and category */
W_FN void jtr_wkey_other(struct jtr_wkey *o, const struct jtr_wkey *key)
{
	__builtin_memset(o, 0, sizeof(*o));
	o->cpu = key->cpu;
	o->cat = key->cat;
	o->src = JTR_WK_OTHER;
}

#endif /* JTR_WATCH_MODEL_H: the types */

/* the functions, once the includer has said how its side keeps the tables */
#if defined(W_CTX) && !defined(JTR_WATCH_MODEL_FNS)
#define JTR_WATCH_MODEL_FNS

/* comms here are NUL-padded to their 16 bytes (the kernel side reads them
 * into zeroed records, w_copy pads): compared and copied as two words, no
 * loop for the verifier to walk */
#define W_COMM_LAST 0x00ffffffffffffffULL	/* a comm's 8 last bytes but its 16th */

/* w_same - two comms, up to their 15th character */
W_FN bool w_same(const char *a, const char *b)
{
	__u64 a0, a1, b0, b1;

	__builtin_memcpy(&a0, a, 8);
	__builtin_memcpy(&a1, a + 8, 8);
	__builtin_memcpy(&b0, b, 8);
	__builtin_memcpy(&b1, b + 8, 8);
	return a0 == b0 && !((a1 ^ b1) & W_COMM_LAST);
}

/* w_copy - a comm (NUL-padded: keys are compared as bytes) */
W_FN void w_copy(char *dst, const char *src)
{
	__u64 w0, w1;

	__builtin_memcpy(&w0, src, 8);
	__builtin_memcpy(&w1, src + 8, 8);
	w1 &= W_COMM_LAST;
	__builtin_memcpy(dst, &w0, 8);
	__builtin_memcpy(dst + 8, &w1, 8);
}

/* W_IDX - @i kept within a table of @n (a power of two) where the verifier
 * can see it (the compiler drops a mask it can prove useless) */
#ifdef __BPF__
#define W_IDX(i, n) ({ __u64 __i = (i); barrier_var(__i); __i & ((n) - 1); })
#else
#define W_IDX(i, n) ((i) & ((n) - 1))
#endif

W_FN void w_key(struct jtr_wkey *k, const struct jtr_wcpu *c, int cat, int src, __u32 id)
{
	__builtin_memset(k, 0, sizeof(*k));
	k->cpu = (__u16)c->cpu;
	k->cat = (__u8)cat;
	k->src = (__u8)src;
	k->id = id;
}

/* w_task_key - a task's cause: its comm, or its pid when it has none, in its
 * container */
W_FN void w_task_key(W_CTX ctx, struct jtr_wkey *k, const struct jtr_wcpu *c, int cat,
		     const char *comm, __u32 pid)
{
	w_key(k, c, cat, JTR_WK_TASK, comm[0] ? 0 : pid);
	w_copy(k->name, comm);
	W_GROUP(ctx, pid, k);
}

W_FN void w_events(W_CTX ctx, struct jtr_wcpu *c, const struct jtr_wkey *k)
{
	struct jtr_wcell *cell = W_CELL(ctx, c, k);

	if (cell)
		cell->events++;
}

W_FN bool w_app_task(const struct jtr_wcfg *cfg, const struct jtr_wcpu *c, __u32 pid,
		     const char *comm, bool flagged)
{
	if (!pid)
		return false;
	if (cfg->by_app) {
		if (flagged)
			return true;
		W_UNROLL
		for (int i = 0; i < JTR_WATCH_APPS; i++) {
			if (i >= (int)cfg->napp_comm)
				break;
			if (w_same(comm, cfg->app_comm[i]))
				return true;
		}
		return false;
	}
	return c->lead_set && w_same(comm, c->lead_comm);
}

W_FN int w_runner_of(const struct jtr_wcpu *c, const char *comm)
{
	W_UNROLL
	for (int i = 0; i < JTR_WATCH_RUNNERS; i++) {
		if (i >= (int)c->nrun)
			break;
		if (w_same(c->run[i].comm, comm))
			return i;
	}
	return -1;
}

/* w_runner_add - @ns more run time for @comm (Space-Saving: a new comm in a
 * full table replaces the row with the least time, and starts from it) */
W_FN void w_runner_add(struct jtr_wcpu *c, const char *comm, __u64 ns)
{
	int i = w_runner_of(c, comm);

	if (i < 0) {
		if (c->nrun < JTR_WATCH_RUNNERS) {
			i = (int)c->nrun++;
			c->run[W_IDX(i, JTR_WATCH_RUNNERS)].ns = 0;
		} else {
			i = 0;
			W_UNROLL
			for (int k = 1; k < JTR_WATCH_RUNNERS; k++)
				if (c->run[k].ns < c->run[W_IDX(i, JTR_WATCH_RUNNERS)].ns)
					i = k;
		}
		w_copy(c->run[W_IDX(i, JTR_WATCH_RUNNERS)].comm, comm);
	}
	i = (int)W_IDX(i, JTR_WATCH_RUNNERS);
	c->run[i].ns += ns;
	if (c->run[i].ns > c->run[W_IDX(c->lead, JTR_WATCH_RUNNERS)].ns)
		c->lead = (__u32)i;
	/* written only when it changes: other CPUs read it */
	if (!c->lead_set || !w_same(c->lead_comm, c->run[W_IDX(c->lead, JTR_WATCH_RUNNERS)].comm)) {
		w_copy(c->lead_comm, c->run[W_IDX(c->lead, JTR_WATCH_RUNNERS)].comm);
		c->lead_set = 1;
	}
}

/* w_app_runs - does the application run on @c at @ts? */
W_FN bool w_app_runs(const struct jtr_wcfg *cfg, const struct jtr_wcpu *c, __u64 ts)
{
	__u64 mine;

	if (c->running <= 0)
		return false;
	if (cfg->by_app)
		return c->app;
	/* a task on the CPU since the watch began (its comm not seen yet) has
	 * run there longest; otherwise its time with the running slice */
	if (!c->comm[0] || !c->nrun || c->run_idx == (__s32)c->lead)
		return true;
	mine = (c->run_idx >= 0 ? c->run[W_IDX(c->run_idx, JTR_WATCH_RUNNERS)].ns : 0) +
	       (ts > c->last_switch ? ts - c->last_switch : 0);
	return mine >= c->run[W_IDX(c->lead, JTR_WATCH_RUNNERS)].ns;
}

W_FN int w_bucket(__u64 ns)
{
	const __u64 bounds[JTR_WATCH_BUCKETS - 1] = JTR_WATCH_BOUNDS;
	int b = JTR_WATCH_BUCKETS - 1;

	W_UNROLL
	for (int i = JTR_WATCH_BUCKETS - 2; i >= 0; i--)
		if (ns <= bounds[i])
			b = i;
	return b;
}

/* w_add - one interruption of the application: its cause's count and time,
 * its category's (the one place all of them grow), kept; by the default rule,
 * none before the CPU's first second has decided which comm the application is */
W_FN void w_add(W_CTX ctx, struct jtr_wcpu *c, const struct jtr_wkey *k, __u64 start, __u64 len)
{
	const struct jtr_wcfg *cfg = W_CFG(ctx);
	struct jtr_wcell *cell;
	__u32 cat, b;

	if (!cfg || !c || !k)
		return;
	cat = k->cat;
	if (!cfg->by_app && start < c->settled)
		return;
	if (cat >= JTR_W_NCATS)
		return;
	cell = W_CELL(ctx, c, k);
	if (!cell)
		return;
	cell->count++;
	cell->ns += len;
	cat = (__u32)W_IDX(cat, JTR_W_NCATS);
	c->count[cat]++;
	c->ns[cat] += len;
	b = (__u32)W_IDX(w_bucket(len), 32);
	if (b > JTR_WATCH_BUCKETS - 1)
		b = JTR_WATCH_BUCKETS - 1;
	cat = (__u32)W_IDX(cat, JTR_W_NCATS);
	c->hist[cat][b]++;
	if (len > c->longest_ns)
		c->longest_ns = len;
	W_KEEP(ctx, c, k, start, len);
}

/* w_finish - the open interrupt, all exits seen (and no softirq right after) */
W_FN void w_finish(W_CTX ctx, struct jtr_wcpu *c, __u64 end)
{
	if (c->counting)
		w_add(ctx, c, &c->best, c->intr_start, end - c->intr_start);
	c->counting = 0;
	c->intr_start = 0;
}

/* w_enter - an interrupt's entry, of cause @k */
W_SUB w_enter(W_CTX ctx, const struct jtr_wcfg *cfg, struct jtr_wcpu *c,
		  const struct jtr_ev *e, const struct jtr_wkey *k)
{
	struct jtr_wframe *x;

	if (!cfg || !c || !e || !k)
		return 0;
	W_USE(ctx);

	if (c->depth == 0 && !c->intr_start) {
		c->counting = w_app_runs(cfg, c, e->ts_ns);
		c->intr_start = e->ts_ns;
		c->best_self = 0;
		c->best = *k;
	}
	w_events(ctx, c, k);
	if (c->depth >= JTR_WATCH_DEPTH)
		return 0;
	x = &c->stack[W_IDX(c->depth, JTR_WATCH_DEPTH)];
	c->depth++;
	x->kind = e->type;
	x->irq = e->a;
	x->entry_ns = e->ts_ns;
	x->child_ns = 0;
	x->key = *k;
	return 0;
}

/* w_leave - an interrupt's exit: it and what it left open end here */
W_SUB w_leave(struct jtr_wcpu *c, const struct jtr_ev *e, __u64 entry_type)
{
	int i = -1;

	if (!c || !e)
		return 0;

	W_UNROLL
	for (int k = JTR_WATCH_DEPTH - 1; k >= 0; k--) {
		if (k >= (int)c->depth)
			continue;
		if (c->stack[k].kind == entry_type && c->stack[k].irq == e->a) {
			i = k;
			break;
		}
	}
	if (i < 0)
		return 0;			/* its entry came before the watch began, or was lost */
	W_UNROLL
	for (int k = JTR_WATCH_DEPTH - 1; k >= 0; k--) {
		struct jtr_wframe *x;
		__u64 dur, self;

		if (k >= (int)c->depth || k < i)
			continue;
		x = &c->stack[k];
		dur = e->ts_ns > x->entry_ns ? e->ts_ns - x->entry_ns : 0;
		self = dur > x->child_ns ? dur - x->child_ns : 0;
		if (k > 0)
			c->stack[W_IDX(k - 1, JTR_WATCH_DEPTH)].child_ns += dur;
		if (self >= c->best_self) {
			c->best_self = self;
			c->best = x->key;
		}
	}
	c->depth = (__u32)i;
	if (!c->depth)
		c->intr_end = e->ts_ns;	/* it may go on with a softirq */
	return 0;
}

/* w_wait_open - the waiting application has lost the CPU to @k at @ts */
W_FN void w_wait_open(struct jtr_wcpu *c, const struct jtr_wkey *k, __u64 ts)
{
	c->win_open = 1;
	c->win_start = ts;
	c->win = *k;
}

/* w_wait_end - the application no longer waits on @c from @ts: the wait, if
 * another task had the CPU, is one interruption, charged to what took it */
W_FN void w_wait_end(W_CTX ctx, struct jtr_wcpu *c, __u64 ts)
{
	/* one that ends before it begins is none: a wake-up from another CPU
	 * taken after the switch to the woken task */
	if (c->win_open && ts > c->win_start)
		w_add(ctx, c, &c->win, c->win_start, ts - c->win_start);
	c->win_open = 0;
	c->waiting = 0;
}

/* w_switch - a task's slice ends, another's begins: the application's wait
 * begins when one of its tasks leaves the CPU still runnable for another
 * task (or for the idle task or a lower one when it is real-time: RT
 * throttling), or when another task takes the CPU while it is woken; it
 * ends when one of its tasks comes back */
W_SUB w_switch(W_CTX ctx, const struct jtr_wcfg *cfg, struct jtr_wcpu *c,
		   const struct jtr_ev *e)
{
	__u32 prev, next;
	unsigned int pprio, nprio;
	bool runnable, prev_app, next_app, throttled;
	const char *pc, *nc;
	__u64 slice;
	struct jtr_wkey *k;

	if (!ctx || !cfg || !c || !e)
		return 0;
	k = W_KEYBUF(ctx);
	W_USE(ctx);
	prev = (__u32)e->a;
	next = (__u32)(e->a >> 32);
	pprio = e->b & 0xffff;
	nprio = (e->b >> 16) & 0xffff;
	runnable = e->flags & JTR_SW_PREEMPTED;
	pc = e->str;
	nc = e->str + JTR_COMM_LEN;
	slice = e->ts_ns > c->last_switch ? e->ts_ns - c->last_switch : 0;
	w_key(k, c, JTR_W_TASK, JTR_WK_TASK, 0);
	if (c->depth) {			/* exits were lost: nothing is open across a switch */
		c->depth = 0;
		c->counting = 0;
		c->intr_start = 0;
	}
	if (prev && !cfg->by_app)
		w_runner_add(c, pc, slice);
	prev_app = w_app_task(cfg, c, prev, pc, e->flags & JTR_FL_APP);
	next_app = w_app_task(cfg, c, next, nc, e->flags & JTR_FL_APP_NEXT);
	if (prev_app)
		c->app_ns += slice;
	/* the kernel events: every preemption, every throttling */
	throttled = prev && runnable && pprio < JTR_WATCH_RT_PRIO_END && (!next || nprio > pprio);
	if (throttled) {
		w_key(k, c, JTR_W_THROTTLE, JTR_WK_THROTTLE, 0);
		w_events(ctx, c, k);
	} else if (runnable || c->waiting) {	/* only then is it named (its cgroups read) */
		w_task_key(ctx, k, c, JTR_W_TASK, nc, next);
		if (prev && runnable && next && next != prev)
			w_events(ctx, c, k);
	}
	/* the default rule's application is another comm now: the waiting task
	 * is not the application's */
	if (c->waiting && !cfg->by_app &&
	    !w_same(c->victim_comm, c->run[W_IDX(c->lead, JTR_WATCH_RUNNERS)].comm))
		c->waiting = c->win_open = 0;
	/* the application runs again (or its waiting task did, unseen) */
	if (c->waiting && (next_app || next == c->victim))
		w_wait_end(ctx, c, e->ts_ns);
	else if (c->waiting && prev == c->victim)
		w_wait_end(ctx, c, c->last_switch);
	if (prev_app && runnable && !next_app) {
		c->waiting = 1;
		c->victim = prev;
		w_copy(c->victim_comm, pc);
		if (throttled || next)
			w_wait_open(c, k, e->ts_ns);
	} else if (c->waiting && !c->win_open && next && !next_app) {
		/* it was woken, another came */
		w_wait_open(c, k, e->ts_ns);
	}
	if (prev_app || next_app)
		w_copy(c->app_comm, next_app ? nc : pc);
	c->running = next;
	c->app = next_app;
	if (next)
		w_copy(c->comm, nc);
	else
		c->comm[0] = 0;
	c->run_idx = cfg->by_app ? -1 : w_runner_of(c, nc);
	c->last_switch = e->ts_ns;
	return 0;
}

/* w_wakeup - task @pid (of @comm; @flagged: an --app PID's) is woken onto @c
 * at @ts: when it is the application's and another task has the CPU, the
 * application waits from then */
W_FN void w_wakeup(W_CTX ctx, const struct jtr_wcfg *cfg, struct jtr_wcpu *c, __u64 ts,
		   __u32 pid, const char *comm, bool flagged)
{
	struct jtr_wkey *k = W_KEYBUF(ctx);

	if (!k || c->waiting || !c->seen || c->running == pid || ts < c->last_switch ||
	    !w_app_task(cfg, c, pid, comm, flagged) || w_app_runs(cfg, c, ts))
		return;
	c->waiting = 1;
	c->victim = pid;
	w_copy(c->victim_comm, comm);
	if (c->running > 0) {
		w_task_key(ctx, k, c, JTR_W_TASK, c->comm, (__u32)c->running);
		w_wait_open(c, k, ts);
	}
}

/* w_seen - the first event of @c tells the task that runs there since the
 * watch began */
W_FN void w_seen(W_CTX ctx, const struct jtr_wcfg *cfg, struct jtr_wcpu *c,
		 const struct jtr_ev *e)
{
	c->seen = 1;
	c->running = e->pid;
	c->comm[0] = 0;
	c->run_idx = -1;
	c->last_switch = cfg->start_ns && cfg->start_ns < e->ts_ns ? cfg->start_ns : e->ts_ns;
	c->settled = c->last_switch + cfg->settle_ns;
	c->app = e->pid && W_APP_TID(ctx, e->pid);
}

/* w_pending - the notices other CPUs left for @c, up to @ts: a wake-up of a
 * task onto it, the waiting task moved away */
W_SUB w_pending(W_CTX ctx, const struct jtr_wcfg *cfg, struct jtr_wcpu *c, __u64 ts)
{
	__u64 wake, move;

	if (!ctx || !cfg || !c)
		return 0;
	W_USE(ctx);
	wake = c->pend_wake_ts;
	move = c->pend_move_ts;

	if (wake && wake <= ts && (!move || wake <= move)) {
		c->pend_wake_ts = 0;
		w_wakeup(ctx, cfg, c, wake, c->pend_wake_pid, c->pend_wake_comm,
			 c->pend_wake_app);
	}
	if (move && move <= ts) {
		c->pend_move_ts = 0;
		if (c->waiting && c->victim == c->pend_move_pid)
			w_wait_end(ctx, c, move);	/* the waiting task moves away */
	}
	wake = c->pend_wake_ts;
	if (wake && wake <= ts) {
		c->pend_wake_ts = 0;
		w_wakeup(ctx, cfg, c, wake, c->pend_wake_pid, c->pend_wake_comm,
			 c->pend_wake_app);
	}
	return 0;
}

/* jtr_wmodel_remote - a record from another CPU about @c: a wake-up of one of
 * the application's tasks onto it, or the waiting task's migration away from
 * it, left as a notice (the first one stays until taken: its time is when the
 * application began to wait). What it reads of @c may be changing under it:
 * at worst a notice is left that its CPU finds of no use, or one is missed */
W_FN void jtr_wmodel_remote(const struct jtr_wcfg *cfg, struct jtr_wcpu *c,
			    const struct jtr_ev *e)
{
	if (e->type == JTR_EV_WAKEUP && !c->pend_wake_ts &&
	    w_app_task(cfg, c, (__u32)e->a, e->str, e->flags & JTR_FL_APP)) {
		c->pend_wake_pid = (__u32)e->a;
		c->pend_wake_app = (e->flags & JTR_FL_APP) != 0;
		w_copy(c->pend_wake_comm, e->str);
		c->pend_wake_ts = e->ts_ns;
	} else if (e->type == JTR_EV_MIGRATE && !c->pend_move_ts && c->waiting &&
		   c->victim == (__u32)e->a) {
		c->pend_move_pid = (__u32)e->a;
		c->pend_move_ts = e->ts_ns;
	}
}

/* w_vector_key - an irq_vectors pair's entry: its category, and an IPI's
 * sender's comm (the tracer saw the send) as its group */
W_FN void w_vector_key(const struct jtr_wcfg *cfg, struct jtr_wkey *k, const struct jtr_wcpu *c,
		       const struct jtr_ev *e)
{
	__u32 kind = (__u32)e->b;
	int cat = kind < JTR_TRACE_MAX_VECS ? cfg->vec_cat[W_IDX(kind, JTR_TRACE_MAX_VECS)] :
		  JTR_W_HARDIRQ;

	w_key(k, c, cat, JTR_WK_VEC, kind);
	if (cat == JTR_W_IPI && (e->flags & JTR_VEC_SENDER))
		w_copy(k->group, e->str);
}

/* jtr_wmodel_event - account one record of @c's CPU (in time order) */
W_FN void jtr_wmodel_event(W_CTX ctx, const struct jtr_wcfg *cfg, struct jtr_wcpu *c,
			   const struct jtr_ev *e)
{
	struct jtr_wkey *k = W_KEYBUF(ctx);
	__u64 type = e->type;

	if (!k)
		return;
	c->records++;
	if (!c->seen)
		w_seen(ctx, cfg, c, e);
	if (c->pend_wake_ts || c->pend_move_ts)
		w_pending(ctx, cfg, c, e->ts_ns);
	/* an interrupt whose exits are all seen ends here, unless a softirq
	 * follows at once (irq_exit runs them): that belongs to it */
	if (c->depth == 0 && c->intr_start && type != JTR_EV_STEAL &&
	    (type != JTR_EV_SOFTIRQ_ENTRY || e->ts_ns - c->intr_end > JTR_WATCH_JOIN_NS))
		w_finish(ctx, c, c->intr_end);
	switch (type) {
	case JTR_EV_IRQ_ENTRY:
		w_key(k, c, JTR_W_HARDIRQ, JTR_WK_IRQ, (__u32)e->a);
		w_copy(k->name, e->str);
		w_enter(ctx, cfg, c, e, k);
		break;
	case JTR_EV_SOFTIRQ_ENTRY:
		w_key(k, c, JTR_W_SOFTIRQ, JTR_WK_SOFTIRQ, (__u32)e->a);
		w_enter(ctx, cfg, c, e, k);
		break;
	case JTR_EV_VEC_ENTRY:
		w_vector_key(cfg, k, c, e);
		w_enter(ctx, cfg, c, e, k);
		break;
	case JTR_EV_IRQ_EXIT:
	case JTR_EV_SOFTIRQ_EXIT:
	case JTR_EV_VEC_EXIT:
		w_leave(c, e, type - 1);
		break;
	case JTR_EV_NMI:
		w_key(k, c, JTR_W_NMI, JTR_WK_NMI, 0);
		w_events(ctx, c, k);
		if (c->depth)
			c->stack[W_IDX(c->depth - 1, JTR_WATCH_DEPTH)].child_ns += e->b;
		else if (!c->intr_start && w_app_runs(cfg, c, e->ts_ns))
			w_add(ctx, c, k, e->ts_ns - e->b, e->b);
		break;
	case JTR_EV_PF_USER:
	case JTR_EV_PF_KERNEL:
		/* no exit tracepoint, no length: a kernel event, not an interruption */
		w_key(k, c, JTR_W_PF, JTR_WK_PF, type == JTR_EV_PF_KERNEL);
		w_events(ctx, c, k);
		break;
	case JTR_EV_SWITCH:
		w_switch(ctx, cfg, c, e);
		break;
	case JTR_EV_WAKEUP:
		if ((e->b & 0xffffffff) == c->cpu)
			w_wakeup(ctx, cfg, c, e->ts_ns, (__u32)e->a, e->str,
				 e->flags & JTR_FL_APP);
		break;
	case JTR_EV_MIGRATE:
		/* the waiting task moves away, by this CPU's doing */
		if ((e->b & 0xffffffff) == c->cpu && c->waiting && c->victim == (__u32)e->a)
			w_wait_end(ctx, c, e->ts_ns);
		break;
	}
}

/* jtr_wmodel_flush - end the interrupt whose exits are all seen, if no
 * softirq can join it any more (@now: JTR_WATCH_JOIN_NS after its end) */
W_FN void jtr_wmodel_flush(W_CTX ctx, struct jtr_wcpu *c, __u64 now)
{
	if (c->depth == 0 && c->intr_start && (!now || now - c->intr_end > JTR_WATCH_JOIN_NS))
		w_finish(ctx, c, c->intr_end);
}

/* jtr_wmodel_end - the watch ends at @ts: notices taken, the open interrupt
 * and the wait still open counted up to it, the application's last slice */
W_FN void jtr_wmodel_end(W_CTX ctx, const struct jtr_wcfg *cfg, struct jtr_wcpu *c, __u64 ts)
{
	if (c->pend_wake_ts || c->pend_move_ts)
		w_pending(ctx, cfg, c, ts);
	jtr_wmodel_flush(ctx, c, 0);
	if (c->waiting)
		w_wait_end(ctx, c, ts);
	if (ts > c->last_switch && w_app_runs(cfg, c, ts)) {
		c->app_ns += ts - c->last_switch;	/* its last slice */
		c->last_switch = ts;
	}
}

#endif
