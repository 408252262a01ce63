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
	[JTR_W_PF] = "page fault", [JTR_W_NMI] = "NMI",
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

void jtr_watch_task_name(char *out, const char *comm, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n && i < JTR_COMM_LEN && comm[i] && comm[i] != '/'; i++)
		out[i] = comm[i];
	out[i] = 0;
	if (!i)
		snprintf(out, n, "?");
}

/* cell_of - the cell of @name in @a: found, new, or "other" once the table is full */
static struct jtr_watch_cell *cell_of(const struct jtr_watch *w, struct jtr_watch_cat_acct *a,
				      const char *name)
{
	for (int i = 0; i < a->n; i++)
		if (!strcmp(a->cell[i].name, name))
			return &a->cell[i];
	if (a->n < w->names) {
		snprintf(a->cell[a->n].name, JTR_WATCH_NAME_LEN, "%s", name);
		return &a->cell[a->n++];
	}
	snprintf(a->cell[w->names].name, JTR_WATCH_NAME_LEN, "other");
	return &a->cell[w->names];
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

/* add_intr - one interruption of @c's task by an interrupt: counted, its time,
 * kept */
static void add_intr(struct jtr_watch *w, struct jtr_watch_cpu *c, int cat, const char *name,
		     uint64_t start, uint64_t len)
{
	struct jtr_watch_cat_acct *a = &c->cat[cat];
	struct jtr_watch_cell *cell = cell_of(w, a, name);

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
		add_intr(w, c, c->best_cat, c->best_name, c->intr_start, end - c->intr_start);
	c->counting = false;
	c->intr_start = 0;
}

static void enter(const struct jtr_watch *w, struct jtr_watch_cpu *c, const struct jtr_ev *e,
		  int cat, const char *name)
{
	struct jtr_watch_ctx *x;

	if (c->depth == 0 && !c->intr_start) {
		c->counting = c->running > 0 && !c->win_open;
		c->intr_start = e->ts_ns;
		c->best_self = 0;
		c->best_cat = (uint8_t)cat;
		snprintf(c->best_name, sizeof(c->best_name), "%s", name);
	}
	cell_of(w, &c->cat[cat], name)->events++;
	if (c->depth == JTR_WATCH_DEPTH)
		return;
	x = &c->stack[c->depth++];
	x->kind = e->type;
	x->cat = (uint8_t)cat;
	x->key = e->a;
	x->entry_ns = e->ts_ns;
	x->child_ns = 0;
	snprintf(x->name, sizeof(x->name), "%s", name);
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

/* on_switch - a task's slice ends, another's begins: a preemption is counted
 * for the task that takes the CPU from a runnable one; while the task it took
 * the CPU from (the window's victim) waits, every slice's time is charged to
 * its task, and when the victim runs again (or the CPU goes idle, or it moves
 * away) the window is one interruption in the histogram, by the task that
 * opened it */
static void on_switch(struct jtr_watch *w, struct jtr_watch_cpu *c, const struct jtr_ev *e)
{
	uint32_t prev = (uint32_t)e->a, next = (uint32_t)(e->a >> 32);
	struct jtr_watch_cat_acct *a = &c->cat[JTR_W_TASK];
	char name[JTR_WATCH_NAME_LEN];

	if (c->depth) {			/* exits were lost: nothing is open across a switch */
		c->depth = 0;
		c->counting = false;
		c->intr_start = 0;
	}
	if (c->win_open && prev != c->victim) {		/* prev's slice in the window */
		struct jtr_watch_cell *cell;
		uint64_t slice = e->ts_ns - c->last_switch;

		jtr_watch_task_name(name, e->str, sizeof(name));
		cell = cell_of(w, a, name);
		cell->ns += slice;
		a->ns += slice;
	}
	if (c->win_open && (next == c->victim || !next)) {
		keep_intr(w, c, JTR_W_TASK, c->win_name, c->win_start, e->ts_ns - c->win_start);
		c->win_open = false;
	}
	if (prev && e->flags && next && next != prev) {		/* next preempts prev */
		struct jtr_watch_cell *cell;

		jtr_watch_task_name(name, e->str + JTR_COMM_LEN, sizeof(name));
		cell = cell_of(w, a, name);
		cell->count++;
		cell->events++;
		a->count++;
		if (!c->win_open) {
			c->win_open = true;
			c->victim = prev;
			c->win_start = e->ts_ns;
			snprintf(c->win_name, sizeof(c->win_name), "%s", name);
		}
	}
	c->running = next;
	c->last_switch = e->ts_ns;
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
	s = e->cpu < JTR_TRACE_MAX_CPUS ? w->slot[e->cpu] : -1;
	if (s < 0)
		return;
	c = &w->cpus[s];
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
		else if (!c->intr_start && c->running > 0 && !c->win_open)
			add_intr(w, c, JTR_W_NMI, "nmi", e->ts_ns - e->b, e->b);
		break;
	case JTR_EV_PF_USER:
	case JTR_EV_PF_KERNEL:
		nm = e->type == JTR_EV_PF_USER ? "user" : "kernel";
		cell_of(w, &c->cat[JTR_W_PF], nm)->events++;
		if (c->running > 0 && !c->win_open && !c->depth) {
			cell_of(w, &c->cat[JTR_W_PF], nm)->count++;
			c->cat[JTR_W_PF].count++;
		}
		break;
	case JTR_EV_SWITCH:
		on_switch(w, c, e);
		break;
	case JTR_EV_MIGRATE:
		/* a preempted task that moves away no longer waits here */
		s = (e->b & 0xffffffff) < JTR_TRACE_MAX_CPUS ? w->slot[e->b & 0xffffffff] : -1;
		if (s >= 0 && w->cpus[s].win_open && w->cpus[s].victim == (uint32_t)e->a) {
			struct jtr_watch_cpu *o = &w->cpus[s];

			keep_intr(w, o, JTR_W_TASK, o->win_name, o->win_start, e->ts_ns - o->win_start);
			o->win_open = false;
		}
		break;
	}
}

void jtr_watch_flush(struct jtr_watch *w)
{
	for (int i = 0; i < w->ncpus; i++)
		if (w->cpus[i].depth == 0 && w->cpus[i].intr_start)
			finish(w, &w->cpus[i], w->cpus[i].intr_end);
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

		fprintf(f, "%s{\"cpu\":%d,\"categories\":[", i ? "," : "", c->cpu);
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
				fprintf(f, ",%llu,%llu,%llu]", (unsigned long long)cell->count,
					(unsigned long long)cell->ns, (unsigned long long)cell->events);
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
