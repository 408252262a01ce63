// SPDX-License-Identifier: GPL-2.0-only
/* watch.c - jtr watch's accounting of interruptions and its flight recorder
 * (watch.h says what is counted and how). No allocation after
 * jtr_watch_init; every event costs a few comparisons and one 64-byte copy.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jtr_json.h"
#include "watch.h"

const char *const jtr_watch_cats[JTR_W_NCATS] = {
	[JTR_W_TICK] = "timer tick", [JTR_W_IPI] = "IPI", [JTR_W_HARDIRQ] = "hardirq",
	[JTR_W_SOFTIRQ] = "softirq", [JTR_W_TASK] = "task preemption",
	[JTR_W_PF] = "page fault", [JTR_W_NMI] = "NMI", [JTR_W_THROTTLE] = "RT throttling",
};

const uint64_t jtr_watch_bounds_ns[JTR_WATCH_BUCKETS - 1] = {
	1000, 2000, 5000, 10000, 20000, 50000, 100000, 200000, 500000,
	1000000, 2000000, 5000000, 10000000, 20000000, 50000000, 100000000,
};

/* softirq vectors 0..9, as the kernel names them */
static const char *const softirq_names[] = {
	"HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER",
	"RCU",
};

int jtr_watch_init(struct jtr_watch *w, const int *cpus, int ncpus, int names,
		   size_t rec_records, size_t intr_keep)
{
	memset(w, 0, sizeof(*w));
	memset(w->slot, 0xff, sizeof(w->slot));
	w->names = names > 0 ? names : 1;
	w->settle_ns = JTR_WATCH_SETTLE_NS;
	w->ncpus = ncpus;
	w->cpus = calloc(ncpus ? ncpus : 1, sizeof(*w->cpus));
	w->rec = calloc(rec_records ? rec_records : 1, sizeof(*w->rec));
	w->intr = calloc(intr_keep ? intr_keep : 1, sizeof(*w->intr));
	if (!w->cpus || !w->rec || !w->intr) {
		jtr_watch_free(w);
		return -ENOMEM;
	}
	for (int i = 0; i < ncpus; i++)
		for (int k = 0; k < JTR_W_NCATS; k++) {
			w->cpus[i].cat[k].cell = calloc(w->names + 1, sizeof(struct jtr_watch_cell));
			if (!w->cpus[i].cat[k].cell) {
				jtr_watch_free(w);
				return -ENOMEM;
			}
		}
	w->rec_cap = rec_records ? rec_records : 1;
	w->intr_cap = intr_keep ? intr_keep : 1;
	for (int i = 0; i < ncpus; i++) {
		w->cpus[i].cpu = cpus[i];
		w->cpus[i].running = -1;
		w->cpus[i].run_idx = -1;
		if (cpus[i] >= 0 && cpus[i] < JTR_TRACE_MAX_CPUS)
			w->slot[cpus[i]] = (int16_t)i;
	}
	return 0;
}

void jtr_watch_free(struct jtr_watch *w)
{
	for (int i = 0; w->cpus && i < w->ncpus; i++)
		for (int k = 0; k < JTR_W_NCATS; k++)
			free(w->cpus[i].cat[k].cell);
	free(w->cpus);
	free(w->rec);
	free(w->intr);
	w->cpus = NULL;
	w->rec = NULL;
	w->intr = NULL;
}

void jtr_watch_task_name(char *out, const char *comm, uint32_t pid, size_t n)
{
	if (comm[0])
		snprintf(out, n, "%.*s", JTR_COMM_LEN, comm);
	else
		snprintf(out, n, "pid %u", pid);
}

int jtr_watch_app_comm(struct jtr_watch *w, const char *comm)
{
	if (w->napp_comm == JTR_WATCH_APPS)
		return -ENOSPC;
	snprintf(w->app_comm[w->napp_comm++], JTR_COMM_LEN, "%s", comm);
	return 0;
}

int jtr_watch_app_pid(struct jtr_watch *w, uint32_t pid)
{
	if (w->napp_pid == JTR_WATCH_APPS)
		return -ENOSPC;
	w->app_pid[w->napp_pid++] = pid;
	return 0;
}

int jtr_watch_app_tid(struct jtr_watch *w, uint32_t tid)
{
	if (w->napp_tid == JTR_WATCH_TIDS)
		return -ENOSPC;
	w->app_tid[w->napp_tid++] = tid;
	return 0;
}

/* by_app - was the application given (--app), or is it the default rule's? */
static bool by_app(const struct jtr_watch *w)
{
	return w->napp_comm || w->napp_pid;
}

/* same_comm - two comms of up to JTR_COMM_LEN bytes (not always terminated) */
static bool same_comm(const char *a, const char *b)
{
	return !strncmp(a, b, JTR_COMM_LEN - 1);
}

/* app_task - is task @pid of @comm the application's on @c? @flagged: the
 * kernel side found it a thread of an --app PID */
static bool app_task(const struct jtr_watch *w, const struct jtr_watch_cpu *c, uint32_t pid,
		     const char *comm, bool flagged)
{
	if (!pid)
		return false;
	if (by_app(w)) {
		if (flagged)
			return true;
		for (int i = 0; i < w->napp_comm; i++)
			if (same_comm(comm, w->app_comm[i]))
				return true;
		return false;
	}
	return c->nrun && same_comm(comm, c->run[c->lead].comm);
}

/* runner_of - @comm's row in @c's run table, or -1 */
static int runner_of(const struct jtr_watch_cpu *c, const char *comm)
{
	for (int i = 0; i < c->nrun; i++)
		if (same_comm(c->run[i].comm, comm))
			return i;
	return -1;
}

/* runner_add - @ns more run time for @comm on @c (Space-Saving: a new comm in
 * a full table replaces the row with the least time, and starts from it) */
static void runner_add(struct jtr_watch_cpu *c, const char *comm, uint64_t ns)
{
	int i = runner_of(c, comm);

	if (i < 0) {
		if (c->nrun < JTR_WATCH_RUNNERS) {
			i = c->nrun++;
			c->run[i].ns = 0;
		} else {
			i = 0;
			for (int k = 1; k < c->nrun; k++)
				if (c->run[k].ns < c->run[i].ns)
					i = k;
		}
		snprintf(c->run[i].comm, JTR_COMM_LEN, "%.*s", JTR_COMM_LEN - 1, comm);
	}
	c->run[i].ns += ns;
	if (c->run[i].ns > c->run[c->lead].ns)
		c->lead = i;
}

/* app_runs - does the application run on @c at @ts? */
static bool app_runs(const struct jtr_watch *w, const struct jtr_watch_cpu *c, uint64_t ts)
{
	uint64_t mine;

	if (c->running <= 0)
		return false;
	if (by_app(w))
		return c->app;
	/* a task on the CPU since the watch began (its comm not seen yet) has
	 * run there longest; otherwise its time with the running slice */
	if (!c->comm[0] || !c->nrun || c->run_idx == c->lead)
		return true;
	mine = (c->run_idx >= 0 ? c->run[c->run_idx].ns : 0) +
	       (ts > c->last_switch ? ts - c->last_switch : 0);
	return mine >= c->run[c->lead].ns;
}

/* group_cell - the cell of @name in @group (a task's container, an IPI's
 * sender's comm; "": none) in @a: found, new, or "other" once the table is full */
static struct jtr_watch_cell *group_cell(const struct jtr_watch *w, struct jtr_watch_cat_acct *a,
					 const char *name, const char *group)
{
	for (int i = 0; i < a->n; i++)
		if (!strcmp(a->cell[i].name, name) && !strcmp(a->cell[i].group, group))
			return &a->cell[i];
	if (a->n < w->names) {
		snprintf(a->cell[a->n].name, JTR_WATCH_NAME_LEN, "%s", name);
		snprintf(a->cell[a->n].group, JTR_WATCH_GROUP_LEN, "%s", group);
		return &a->cell[a->n++];
	}
	snprintf(a->cell[w->names].name, JTR_WATCH_NAME_LEN, "other");
	return &a->cell[w->names];
}

/* cell_of - the cell of @name (not a task's) in @a */
static struct jtr_watch_cell *cell_of(const struct jtr_watch *w, struct jtr_watch_cat_acct *a,
				      const char *name)
{
	return group_cell(w, a, name, "");
}

/* group_of - task @pid's container label, "" for none */
static const char *group_of(const struct jtr_watch *w, uint32_t pid)
{
	return w->group_of ? w->group_of(w->group_ctx, pid) : "";
}

static int bucket_of(uint64_t ns)
{
	int b = 0;

	while (b < JTR_WATCH_BUCKETS - 1 && ns > jtr_watch_bounds_ns[b])
		b++;
	return b;
}

/* keep_intr - an interruption of @len ns into the histogram, the longest, the
 * ring a dump's outliers.csv comes from; maybe a dump's trigger */
static void keep_intr(struct jtr_watch *w, struct jtr_watch_cpu *c, int cat, const char *name,
		      uint64_t start, uint64_t len)
{
	struct jtr_watch_intr *k;

	c->cat[cat].hist[bucket_of(len)]++;
	if (len > w->longest_ns)
		w->longest_ns = len;
	if (len < JTR_WATCH_KEEP_MIN_NS)
		return;
	k = &w->intr[w->intr_next];
	k->start_ns = start;
	k->length_ns = len;
	k->cpu = (uint16_t)c->cpu;
	k->cat = (uint8_t)cat;
	snprintf(k->name, sizeof(k->name), "%s", name);
	w->intr_next = (w->intr_next + 1) % w->intr_cap;
	if (w->intr_n < w->intr_cap)
		w->intr_n++;
	if (!w->dump_above_ns || len < w->dump_above_ns || w->dump_due_ns)
		return;
	if (start < w->last_dump_end_ns)
		return;			/* in the last dump already */
	w->dump_due_ns = start + len + w->dump_after_ns;
	w->trigger = *k;
}

/* add_intr - one interruption of the application: its cause's count and
 * time, its category's histogram (the one place all of them grow), kept; by
 * the default rule, none before the CPU's first second has decided which comm
 * the application is */
static void add_intr(struct jtr_watch *w, struct jtr_watch_cpu *c, int cat, const char *name,
		     const char *group, uint64_t start, uint64_t len)
{
	struct jtr_watch_cat_acct *a = &c->cat[cat];
	struct jtr_watch_cell *cell;

	if (!by_app(w) && start < c->settled)
		return;
	cell = group_cell(w, a, name, group);
	cell->count++;
	cell->ns += len;
	a->count++;
	a->ns += len;
	keep_intr(w, c, cat, name, start, len);
}

/* finish - the open interrupt, all exits seen (and no softirq right after) */
static void finish(struct jtr_watch *w, struct jtr_watch_cpu *c, uint64_t end)
{
	if (c->counting)
		add_intr(w, c, c->best_cat, c->best_name, c->best_group, c->intr_start,
			 end - c->intr_start);
	c->counting = false;
	c->intr_start = 0;
}

/* enter - an interrupt's entry: @name of @cat; an IPI's sender's comm (the
 * tracer saw the send) is its cells' group */
static void enter(const struct jtr_watch *w, struct jtr_watch_cpu *c, const struct jtr_ev *e,
		  int cat, const char *name)
{
	struct jtr_watch_ctx *x;
	char group[JTR_COMM_LEN] = "";

	if (e->type == JTR_EV_VEC_ENTRY && cat == JTR_W_IPI && (e->flags & JTR_VEC_SENDER))
		snprintf(group, sizeof(group), "%.*s", JTR_COMM_LEN - 1, e->str);
	if (c->depth == 0 && !c->intr_start) {
		c->counting = app_runs(w, c, e->ts_ns);
		c->intr_start = e->ts_ns;
		c->best_self = 0;
		c->best_cat = (uint8_t)cat;
		snprintf(c->best_name, sizeof(c->best_name), "%s", name);
		snprintf(c->best_group, sizeof(c->best_group), "%s", group);
	}
	group_cell(w, &c->cat[cat], name, group)->events++;
	if (c->depth == JTR_WATCH_DEPTH)
		return;
	x = &c->stack[c->depth++];
	x->kind = e->type;
	x->cat = (uint8_t)cat;
	x->key = e->a;
	x->entry_ns = e->ts_ns;
	x->child_ns = 0;
	snprintf(x->name, sizeof(x->name), "%s", name);
	snprintf(x->group, sizeof(x->group), "%s", group);
}

static void leave(struct jtr_watch_cpu *c, const struct jtr_ev *e, int entry_type)
{
	int i;

	for (i = c->depth - 1; i >= 0; i--)
		if (c->stack[i].kind == entry_type && c->stack[i].key == e->a)
			break;
	if (i < 0)
		return;			/* its entry came before the watch began, or was lost */
	while (c->depth > i) {
		struct jtr_watch_ctx *x = &c->stack[--c->depth];
		uint64_t dur = e->ts_ns > x->entry_ns ? e->ts_ns - x->entry_ns : 0;
		uint64_t self = dur > x->child_ns ? dur - x->child_ns : 0;

		if (c->depth)
			c->stack[c->depth - 1].child_ns += dur;
		if (self >= c->best_self) {
			c->best_self = self;
			c->best_cat = x->cat;
			snprintf(c->best_name, sizeof(c->best_name), "%s", x->name);
			snprintf(c->best_group, sizeof(c->best_group), "%s", x->group);
		}
	}
	if (!c->depth)
		c->intr_end = e->ts_ns;	/* it may go on with a softirq */
}

static void vector(const struct jtr_watch *w, uint64_t kind, int *cat, const char **name)
{
	const char *k = (int)kind < w->nvecs ? w->vec_names[kind] : "vector";

	*name = k;
	if (!strcmp(k, "local_timer")) {
		*cat = JTR_W_TICK;
		*name = "local timer";
	} else if (!strcmp(k, "reschedule") || !strcmp(k, "call_function") ||
		   !strcmp(k, "call_function_single") || !strcmp(k, "irq_work")) {
		*cat = JTR_W_IPI;
	} else {
		*cat = JTR_W_HARDIRQ;
	}
}

/* wait_open - the waiting application has lost the CPU to @name (of @cat;
 * in container @group) at @ts */
static void wait_open(struct jtr_watch_cpu *c, int cat, const char *name, const char *group,
		      uint64_t ts)
{
	c->win_open = true;
	c->win_cat = (uint8_t)cat;
	c->win_start = ts;
	snprintf(c->win_name, sizeof(c->win_name), "%s", name);
	snprintf(c->win_group, sizeof(c->win_group), "%s", group);
}

/* wait_end - the application no longer waits on @c from @ts: the wait, if
 * another task had the CPU, is one interruption, charged to what took it */
static void wait_end(struct jtr_watch *w, struct jtr_watch_cpu *c, uint64_t ts)
{
	/* one that ends before it begins is none: records of two CPUs drained
	 * out of time order (a wake-up and the switch to the woken task) */
	if (c->win_open && ts > c->win_start)
		add_intr(w, c, c->win_cat, c->win_name, c->win_group, c->win_start,
			 ts - c->win_start);
	c->win_open = false;
	c->waiting = false;
}

/* on_switch - a task's slice ends, another's begins: the application's wait
 * begins when one of its tasks leaves the CPU still runnable for another
 * task (or for the idle task or a lower one when it is real-time: RT
 * throttling), or when another task takes the CPU while it is woken; it
 * ends when one of its tasks comes back */
static void on_switch(struct jtr_watch *w, struct jtr_watch_cpu *c, const struct jtr_ev *e)
{
	uint32_t prev = (uint32_t)e->a, next = (uint32_t)(e->a >> 32);
	unsigned int pprio = e->b & 0xffff, nprio = (e->b >> 16) & 0xffff;
	bool runnable = e->flags & JTR_SW_PREEMPTED, prev_app, next_app, throttled;
	const char *pc = e->str, *nc = e->str + JTR_COMM_LEN;
	uint64_t slice = e->ts_ns > c->last_switch ? e->ts_ns - c->last_switch : 0;
	char name[JTR_WATCH_NAME_LEN];

	if (c->depth) {			/* exits were lost: nothing is open across a switch */
		c->depth = 0;
		c->counting = false;
		c->intr_start = 0;
	}
	if (prev && !by_app(w))
		runner_add(c, pc, slice);
	prev_app = app_task(w, c, prev, pc, e->flags & JTR_FL_APP);
	next_app = app_task(w, c, next, nc, e->flags & JTR_FL_APP_NEXT);
	if (prev_app)
		c->app_ns += slice;
	/* the kernel events: every preemption, every throttling */
	throttled = prev && runnable && pprio < JTR_WATCH_RT_PRIO_END && (!next || nprio > pprio);
	jtr_watch_task_name(name, nc, next, sizeof(name));
	if (throttled)
		cell_of(w, &c->cat[JTR_W_THROTTLE], JTR_WATCH_THROTTLE_NAME)->events++;
	else if (prev && runnable && next && next != prev)
		group_cell(w, &c->cat[JTR_W_TASK], name, group_of(w, next))->events++;
	/* the default rule's application is another comm now: the waiting task
	 * is not the application's */
	if (c->waiting && !by_app(w) && !same_comm(c->victim_comm, c->run[c->lead].comm))
		c->waiting = c->win_open = false;
	/* the application runs again (or its waiting task did, unseen) */
	if (c->waiting && (next_app || next == c->victim))
		wait_end(w, c, e->ts_ns);
	else if (c->waiting && prev == c->victim)
		wait_end(w, c, c->last_switch);
	if (prev_app && runnable && !next_app) {
		c->waiting = true;
		c->victim = prev;
		snprintf(c->victim_comm, sizeof(c->victim_comm), "%.*s", JTR_COMM_LEN - 1, pc);
		if (throttled)
			wait_open(c, JTR_W_THROTTLE, JTR_WATCH_THROTTLE_NAME, "", e->ts_ns);
		else if (next)
			wait_open(c, JTR_W_TASK, name, group_of(w, next), e->ts_ns);
	} else if (c->waiting && !c->win_open && next && !next_app) {
		/* it was woken, another came */
		wait_open(c, JTR_W_TASK, name, group_of(w, next), e->ts_ns);
	}
	if (prev_app || next_app) {
		const char *ac = next_app ? nc : pc;

		snprintf(c->app_comm, sizeof(c->app_comm), "%.*s", JTR_COMM_LEN - 1, ac);
	}
	c->running = next;
	c->app = next_app;
	snprintf(c->comm, sizeof(c->comm), "%.*s", JTR_COMM_LEN - 1, next ? nc : "");
	c->run_idx = by_app(w) ? -1 : runner_of(c, nc);
	c->last_switch = e->ts_ns;
}

/* on_wakeup - a task is woken onto @c: when it is the application's and
 * another task has the CPU, the application waits from now */
static void on_wakeup(struct jtr_watch *w, struct jtr_watch_cpu *c, const struct jtr_ev *e)
{
	uint32_t pid = (uint32_t)e->a;
	char name[JTR_WATCH_NAME_LEN];

	if (c->waiting || c->running < 0 || c->running == pid || e->ts_ns < c->last_switch ||
	    !app_task(w, c, pid, e->str, e->flags & JTR_FL_APP) || app_runs(w, c, e->ts_ns))
		return;
	c->waiting = true;
	c->victim = pid;
	snprintf(c->victim_comm, sizeof(c->victim_comm), "%.*s", JTR_COMM_LEN - 1, e->str);
	if (c->running > 0) {
		jtr_watch_task_name(name, c->comm, (uint32_t)c->running, sizeof(name));
		wait_open(c, JTR_W_TASK, name, group_of(w, (uint32_t)c->running), e->ts_ns);
	}
}

/* seen - the first event of @c tells the task that runs there since the
 * watch began */
static void seen(const struct jtr_watch *w, struct jtr_watch_cpu *c, const struct jtr_ev *e)
{
	c->running = e->pid;
	c->comm[0] = 0;
	c->run_idx = -1;
	c->last_switch = w->start_ns && w->start_ns < e->ts_ns ? w->start_ns : e->ts_ns;
	c->settled = c->last_switch + w->settle_ns;
	c->app = false;
	for (int i = 0; e->pid && i < w->napp_tid; i++)
		if (w->app_tid[i] == e->pid)
			c->app = true;
}

/* slot_of - the index of @cpu's accounting, or -1 */
static int slot_of(const struct jtr_watch *w, uint64_t cpu)
{
	return cpu < JTR_TRACE_MAX_CPUS ? w->slot[cpu] : -1;
}

void jtr_watch_event(struct jtr_watch *w, const struct jtr_ev *e)
{
	struct jtr_watch_cpu *c;
	char name[JTR_WATCH_NAME_LEN];
	const char *nm;
	int cat, s;

	w->records++;
	w->rec[w->rec_next] = *e;
	w->rec_next = (w->rec_next + 1) % w->rec_cap;
	if (w->rec_n < w->rec_cap)
		w->rec_n++;
	/* wake-ups and migrations concern the CPU they name, wherever they happen */
	if (e->type == JTR_EV_WAKEUP && (s = slot_of(w, e->b & 0xffffffff)) >= 0 &&
	    w->cpus[s].cpu != e->cpu)
		on_wakeup(w, &w->cpus[s], e);
	if (e->type == JTR_EV_MIGRATE && (s = slot_of(w, e->b & 0xffffffff)) >= 0 &&
	    w->cpus[s].waiting && w->cpus[s].victim == (uint32_t)e->a)
		wait_end(w, &w->cpus[s], e->ts_ns);	/* the waiting task moves away */
	s = slot_of(w, e->cpu);
	if (s < 0)
		return;
	c = &w->cpus[s];
	if (c->running < 0)
		seen(w, c, e);
	/* an interrupt whose exits are all seen ends here, unless a softirq
	 * follows at once (irq_exit runs them): that belongs to it */
	if (c->depth == 0 && c->intr_start && e->type != JTR_EV_STEAL &&
	    (e->type != JTR_EV_SOFTIRQ_ENTRY || e->ts_ns - c->intr_end > JTR_WATCH_JOIN_NS))
		finish(w, c, c->intr_end);
	switch (e->type) {
	case JTR_EV_IRQ_ENTRY:
		snprintf(name, sizeof(name), "%llu %.*s", (unsigned long long)e->a, JTR_COMM_LEN,
			 e->str);
		enter(w, c, e, JTR_W_HARDIRQ, name);
		break;
	case JTR_EV_SOFTIRQ_ENTRY:
		enter(w, c, e, JTR_W_SOFTIRQ, e->a < 10 ? softirq_names[e->a] : "softirq");
		break;
	case JTR_EV_VEC_ENTRY:
		vector(w, e->b, &cat, &nm);
		enter(w, c, e, cat, nm);
		break;
	case JTR_EV_IRQ_EXIT:
	case JTR_EV_SOFTIRQ_EXIT:
	case JTR_EV_VEC_EXIT:
		leave(c, e, e->type - 1);
		break;
	case JTR_EV_NMI:
		cell_of(w, &c->cat[JTR_W_NMI], "nmi")->events++;
		if (c->depth)
			c->stack[c->depth - 1].child_ns += e->b;
		else if (!c->intr_start && app_runs(w, c, e->ts_ns))
			add_intr(w, c, JTR_W_NMI, "nmi", "", e->ts_ns - e->b, e->b);
		break;
	case JTR_EV_PF_USER:
	case JTR_EV_PF_KERNEL:
		/* no exit tracepoint, no length: a kernel event, not an interruption */
		nm = e->type == JTR_EV_PF_USER ? "user" : "kernel";
		cell_of(w, &c->cat[JTR_W_PF], nm)->events++;
		break;
	case JTR_EV_SWITCH:
		on_switch(w, c, e);
		break;
	case JTR_EV_WAKEUP:
		if ((e->b & 0xffffffff) == e->cpu)
			on_wakeup(w, c, e);
		break;
	}
}

void jtr_watch_flush(struct jtr_watch *w)
{
	for (int i = 0; i < w->ncpus; i++)
		if (w->cpus[i].depth == 0 && w->cpus[i].intr_start)
			finish(w, &w->cpus[i], w->cpus[i].intr_end);
}

void jtr_watch_end(struct jtr_watch *w, uint64_t ts)
{
	jtr_watch_flush(w);
	for (int i = 0; i < w->ncpus; i++) {
		struct jtr_watch_cpu *c = &w->cpus[i];

		if (c->waiting)
			wait_end(w, c, ts);
		if (ts > c->last_switch && app_runs(w, c, ts)) {
			c->app_ns += ts - c->last_switch;	/* its last slice */
			c->last_switch = ts;
		}
	}
}

/* json_str - a JSON string (jtr_json's escaping) */
static void json_str(FILE *f, const char *s)
{
	jtr_json_escape(f, s);
}

void jtr_watch_state(const struct jtr_watch *w, FILE *f, int64_t now_ns, uint64_t dropped,
		     uint64_t cpu_ns)
{
	fprintf(f, "{\"ts_ns\":%lld,\"records\":%llu,\"dropped\":%llu,\"cpu_ns\":%llu,"
		"\"dumps\":%llu,\"dumps_skipped\":%llu,\"longest_ns\":%llu,\"cpus\":[",
		(long long)now_ns, (unsigned long long)w->records, (unsigned long long)dropped,
		(unsigned long long)cpu_ns, (unsigned long long)w->dumps,
		(unsigned long long)w->dumps_skipped, (unsigned long long)w->longest_ns);
	for (int i = 0; i < w->ncpus; i++) {
		const struct jtr_watch_cpu *c = &w->cpus[i];

		const char *app = by_app(w) ? c->app_comm : c->nrun ? c->run[c->lead].comm : "";
		uint64_t app_ns = c->app_ns;
		char pid[JTR_WATCH_NAME_LEN];

		if (!app[0] && c->running > 0 && app_runs(w, c, c->last_switch)) {
			/* on the CPU since the watch began, not switched out yet */
			jtr_watch_task_name(pid, "", (uint32_t)c->running, sizeof(pid));
			app = pid;
		}

		/* the application's slice that runs now */
		if (now_ns > 0 && (uint64_t)now_ns > c->last_switch && app_runs(w, c, now_ns))
			app_ns += now_ns - c->last_switch;
		fprintf(f, "%s{\"cpu\":%d,\"app\":", i ? "," : "", c->cpu);
		json_str(f, app);
		fprintf(f, ",\"app_ns\":%llu,\"categories\":[", (unsigned long long)app_ns);
		for (int k = 0; k < JTR_W_NCATS; k++) {
			const struct jtr_watch_cat_acct *a = &c->cat[k];
			int n = a->n + (a->cell[w->names].name[0] ? 1 : 0);

			fprintf(f, "%s{\"category\":", k ? "," : "");
			json_str(f, jtr_watch_cats[k]);
			fprintf(f, ",\"count\":%llu,\"ns\":%llu,\"hist\":[", (unsigned long long)a->count,
				(unsigned long long)a->ns);
			for (int b = 0; b < JTR_WATCH_BUCKETS; b++)
				fprintf(f, "%s%llu", b ? "," : "", (unsigned long long)a->hist[b]);
			fprintf(f, "],\"names\":[");
			for (int m = 0; m < n; m++) {
				const struct jtr_watch_cell *cell =
					&a->cell[m < a->n ? m : w->names];

				fprintf(f, "%s[", m ? "," : "");
				json_str(f, cell->name);
				fprintf(f, ",%llu,%llu,%llu", (unsigned long long)cell->count,
					(unsigned long long)cell->ns, (unsigned long long)cell->events);
				if (cell->group[0]) {	/* a task's container */
					fputc(',', f);
					json_str(f, cell->group);
				}
				fputc(']', f);
			}
			fprintf(f, "]}");
		}
		fprintf(f, "]}");
	}
	fprintf(f, "]}\n");
	fflush(f);
}

void jtr_watch_dump_range(const struct jtr_watch *w, uint64_t from, uint64_t to, size_t *first,
			  size_t *n)
{
	size_t oldest = (w->rec_next + w->rec_cap - w->rec_n) % w->rec_cap, i, k = 0, start = 0;
	bool found = false;

	for (i = 0; i < w->rec_n; i++) {
		const struct jtr_ev *e = &w->rec[(oldest + i) % w->rec_cap];

		if (!found && e->ts_ns >= from) {
			found = true;
			start = i;
		}
		if (found && e->ts_ns <= to)
			k = i + 1 - start;
	}
	*first = (oldest + start) % w->rec_cap;
	*n = found ? k : 0;
}

long jtr_watch_outliers(const struct jtr_watch *w, FILE *f, uint64_t from, uint64_t to,
			uint64_t min_ns)
{
	size_t oldest = (w->intr_next + w->intr_cap - w->intr_n) % w->intr_cap;
	long n = 0;

	if (fprintf(f, "cpu,start_ns,length_ns,label\n") < 0)
		return -1;
	for (size_t i = 0; i < w->intr_n; i++) {
		const struct jtr_watch_intr *k = &w->intr[(oldest + i) % w->intr_cap];

		if (k->start_ns < from || k->start_ns > to || k->length_ns < min_ns)
			continue;
		/* a label has no comma or double quote (results/outliers.py) */
		char label[2 * JTR_WATCH_NAME_LEN + 2];
		snprintf(label, sizeof(label), "%s %s", jtr_watch_cats[k->cat], k->name);
		for (char *p = label; *p; p++)
			if (*p == ',' || *p == '"' || (unsigned char)*p < 0x20 || *p == 0x7f)
				*p = ' ';
		if (fprintf(f, "%u,%llu,%llu,%s\n", k->cpu, (unsigned long long)k->start_ns,
			    (unsigned long long)k->length_ns, label) < 0)
			return -1;
		n++;
	}
	return n;
}
