// SPDX-License-Identifier: GPL-2.0-only
/* watch.c - jtr watch's names, state line and dumps, around the accounting
 * of watch_model.h (watch.h says what is counted, where and how). No
 * allocation after jtr_watch_init.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jtr_json.h"
#include "watch.h"

static struct jtr_wcell *user_cell(struct jtr_watch *w, struct jtr_wcpu *c,
				   const struct jtr_wkey *k);
static const struct jtr_ev *region_at(const struct jtr_watch *w, int r, size_t i);
static void user_group(const struct jtr_watch *w, uint32_t pid, struct jtr_wkey *k);
static bool user_app_tid(const struct jtr_watch *w, uint32_t pid);
static void user_keep(struct jtr_watch *w, struct jtr_wcpu *c, const struct jtr_wkey *k,
		      uint64_t start, uint64_t len);

/* the model, as the user side runs it: the name tables are its cells */
#define W_CTX			struct jtr_watch *
#define W_CFG(ctx)		(&(ctx)->cfg)
#define W_KEYBUF(ctx)		(&(ctx)->key)
#define W_CELL(ctx, c, k)	user_cell(ctx, c, k)
#define W_GROUP(ctx, pid, k)	user_group(ctx, pid, k)
#define W_APP_TID(ctx, pid)	user_app_tid(ctx, pid)
#define W_KEEP(ctx, c, k, start, len) user_keep(ctx, c, k, start, len)
#include "watch_model.h"

const char *const jtr_watch_cats[JTR_W_NCATS] = {
	[JTR_W_TICK] = "timer tick", [JTR_W_IPI] = "IPI", [JTR_W_HARDIRQ] = "hardirq",
	[JTR_W_SOFTIRQ] = "softirq", [JTR_W_TASK] = "task preemption",
	[JTR_W_PF] = "page fault", [JTR_W_NMI] = "NMI", [JTR_W_THROTTLE] = "RT throttling",
};

const uint64_t jtr_watch_bounds_ns[JTR_WATCH_BUCKETS - 1] = JTR_WATCH_BOUNDS;

/* softirq vectors 0..9, as the kernel names them */
static const char *const softirq_names[] = {
	"HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER",
	"RCU",
};

int jtr_watch_init(struct jtr_watch *w, const int *cpus, int ncpus, int names,
		   size_t rec_records, size_t kept, bool own)
{
	memset(w, 0, sizeof(*w));
	memset(w->cfg.slot, 0xff, sizeof(w->cfg.slot));
	w->names = names > 0 ? names : 1;
	w->cfg.names = (uint32_t)w->names;
	w->cfg.settle_ns = JTR_WATCH_SETTLE_NS;
	w->cfg.nslots = (uint32_t)ncpus;
	w->ncpus = ncpus;
	w->rec_slots = rec_records;
	w->kept_slots = kept;
	w->cfg.rec_slots = (uint32_t)rec_records;
	w->cfg.kept_slots = (uint32_t)kept;
	w->rec_shared = &w->rec_shared_own;
	w->own = own;
	w->cpus = calloc(ncpus ? ncpus : 1, sizeof(*w->cpus));
	if (!w->cpus)
		return -ENOMEM;
	if (own) {
		w->rec = calloc(rec_records * (ncpus + 1) + 1, sizeof(*w->rec));
		w->kept = calloc(kept * ncpus + 1, sizeof(*w->kept));
		if (!w->rec || !w->kept) {
			jtr_watch_free(w);
			return -ENOMEM;
		}
	}
	for (int i = 0; i < ncpus; i++)
		for (int k = 0; k < JTR_W_NCATS; k++) {
			w->cpus[i].cat[k].cell = calloc(w->names + 1, sizeof(struct jtr_watch_cell));
			if (!w->cpus[i].cat[k].cell) {
				jtr_watch_free(w);
				return -ENOMEM;
			}
		}
	for (int i = 0; i < ncpus; i++) {
		w->cpus[i].cpu = cpus[i];
		w->cpus[i].st.cpu = (uint32_t)cpus[i];
		w->cpus[i].st.slot = (uint32_t)i;
		w->cpus[i].st.run_idx = -1;
		if (cpus[i] >= 0 && cpus[i] < JTR_TRACE_MAX_CPUS)
			w->cfg.slot[cpus[i]] = (int16_t)i;
	}
	return 0;
}

void jtr_watch_free(struct jtr_watch *w)
{
	for (int i = 0; w->cpus && i < w->ncpus; i++)
		for (int k = 0; k < JTR_W_NCATS; k++)
			free(w->cpus[i].cat[k].cell);
	free(w->cpus);
	if (w->own) {
		free(w->rec);
		free(w->kept);
	}
	w->cpus = NULL;
	w->rec = NULL;
	w->kept = NULL;
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
	if (w->cfg.napp_comm == JTR_WATCH_APPS)
		return -ENOSPC;
	snprintf(w->cfg.app_comm[w->cfg.napp_comm++], JTR_COMM_LEN, "%s", comm);
	w->cfg.by_app = 1;
	return 0;
}

int jtr_watch_app_pid(struct jtr_watch *w, uint32_t pid)
{
	if (w->napp_pid == JTR_WATCH_APPS)
		return -ENOSPC;
	w->app_pid[w->napp_pid++] = pid;
	w->cfg.by_app = 1;
	return 0;
}

int jtr_watch_app_tid(struct jtr_watch *w, uint32_t tid)
{
	if (w->napp_tid == JTR_WATCH_TIDS)
		return -ENOSPC;
	w->app_tid[w->napp_tid++] = tid;
	return 0;
}

int jtr_watch_slot(const struct jtr_watch *w, uint64_t cpu)
{
	return cpu < JTR_TRACE_MAX_CPUS ? w->cfg.slot[cpu] : -1;
}

void jtr_watch_vectors(struct jtr_watch *w, const char (*names)[48], int n)
{
	w->vec_names = names;
	w->nvecs = n;
	for (int i = 0; i < n && i < JTR_TRACE_MAX_VECS; i++) {
		const char *k = names[i];

		if (!strcmp(k, "local_timer"))
			w->cfg.vec_cat[i] = JTR_W_TICK;
		else if (!strcmp(k, "reschedule") || !strcmp(k, "call_function") ||
			 !strcmp(k, "call_function_single") || !strcmp(k, "irq_work"))
			w->cfg.vec_cat[i] = JTR_W_IPI;
		else
			w->cfg.vec_cat[i] = JTR_W_HARDIRQ;
	}
}

/* vec_name - an irq_vectors kind as a cause is named */
static const char *vec_name(const struct jtr_watch *w, uint32_t kind)
{
	const char *k = (int)kind < w->nvecs ? w->vec_names[kind] : "vector";

	return !strcmp(k, "local_timer") ? "local timer" : k;
}

void jtr_watch_key_name(const struct jtr_watch *w, const struct jtr_wkey *k, char *name,
			char *group)
{
	uint64_t v2, v1;
	const char *label;

	group[0] = 0;
	switch (k->src) {
	case JTR_WK_IRQ:
		snprintf(name, JTR_WATCH_NAME_LEN, "%u %.*s", k->id, JTR_COMM_LEN, k->name);
		break;
	case JTR_WK_VEC:
		snprintf(name, JTR_WATCH_NAME_LEN, "%s", vec_name(w, k->id));
		snprintf(group, JTR_WATCH_GROUP_LEN, "%.*s", JTR_COMM_LEN, k->group);
		break;
	case JTR_WK_SOFTIRQ:
		snprintf(name, JTR_WATCH_NAME_LEN, "%s", k->id < 10 ? softirq_names[k->id] :
			 "softirq");
		break;
	case JTR_WK_TASK:
		jtr_watch_task_name(name, k->name, k->id, JTR_WATCH_NAME_LEN);
		memcpy(&v2, k->group, sizeof(v2));
		memcpy(&v1, k->group + 8, sizeof(v1));
		label = w->label_of && (v2 || v1) ? w->label_of(w->group_ctx, v2, v1) : "";
		snprintf(group, JTR_WATCH_GROUP_LEN, "%s", label ? label : "");
		break;
	case JTR_WK_PF:
		snprintf(name, JTR_WATCH_NAME_LEN, "%s", k->id ? "kernel" : "user");
		break;
	case JTR_WK_NMI:
		snprintf(name, JTR_WATCH_NAME_LEN, "nmi");
		break;
	case JTR_WK_THROTTLE:
		snprintf(name, JTR_WATCH_NAME_LEN, JTR_WATCH_THROTTLE_NAME);
		break;
	default:
		snprintf(name, JTR_WATCH_NAME_LEN, "other");
	}
}

/* group_cell - the cell of @name in @group in @a: found, new, or "other"
 * once the table is full */
static struct jtr_watch_cell *group_cell(const struct jtr_watch *w, struct jtr_watch_cat_acct *a,
					 const char *name, const char *group, bool other)
{
	for (int i = 0; !other && i < a->n; i++)
		if (!strcmp(a->cell[i].name, name) && !strcmp(a->cell[i].group, group))
			return &a->cell[i];
	if (a->n < w->names && !other) {
		snprintf(a->cell[a->n].name, JTR_WATCH_NAME_LEN, "%s", name);
		snprintf(a->cell[a->n].group, JTR_WATCH_GROUP_LEN, "%s", group);
		return &a->cell[a->n++];
	}
	snprintf(a->cell[w->names].name, JTR_WATCH_NAME_LEN, "other");
	return &a->cell[w->names];
}

/* cell_of - the name table's cell of key @k */
static struct jtr_watch_cell *cell_of(struct jtr_watch *w, const struct jtr_wkey *k)
{
	char name[JTR_WATCH_NAME_LEN], group[JTR_WATCH_GROUP_LEN];
	int s = k->cat < JTR_W_NCATS ? jtr_watch_slot(w, k->cpu) : -1;

	if (s < 0)
		return NULL;
	jtr_watch_key_name(w, k, name, group);
	return group_cell(w, &w->cpus[s].cat[k->cat], name, group, k->src == JTR_WK_OTHER);
}

static struct jtr_wcell *user_cell(struct jtr_watch *w, struct jtr_wcpu *c,
				   const struct jtr_wkey *k)
{
	struct jtr_watch_cell *cell = cell_of(w, k);

	(void)c;
	return cell ? &cell->v : NULL;
}

static void user_group(const struct jtr_watch *w, uint32_t pid, struct jtr_wkey *k)
{
	uint64_t v2 = 0, v1 = 0;

	if (w->ids_of)
		w->ids_of(w->group_ctx, pid, &v2, &v1);
	memcpy(k->group, &v2, sizeof(v2));
	memcpy(k->group + 8, &v1, sizeof(v1));
}

static bool user_app_tid(const struct jtr_watch *w, uint32_t pid)
{
	for (int i = 0; i < w->napp_tid; i++)
		if (w->app_tid[i] == pid)
			return true;
	return false;
}

/* user_keep - an interruption the user side counted, kept as the kernel side
 * keeps them (not when it only counts ahead of the kernel side) */
static void user_keep(struct jtr_watch *w, struct jtr_wcpu *c, const struct jtr_wkey *k,
		      uint64_t start, uint64_t len)
{
	struct jtr_wkept *kept;

	if (w->virtual)
		return;
	if (len >= JTR_WATCH_KEEP_MIN_NS && w->kept && w->kept_slots) {
		kept = &w->kept[c->slot * w->kept_slots + c->kept_head % w->kept_slots];
		kept->start_ns = start;
		kept->length_ns = len;
		kept->key = *k;
		c->kept_head++;
	}
	jtr_watch_trigger(w, k, start, len);
}

void jtr_watch_trigger(struct jtr_watch *w, const struct jtr_wkey *k, uint64_t start,
		       uint64_t len)
{
	char group[JTR_WATCH_GROUP_LEN];

	if (!w->cfg.dump_above_ns || len < w->cfg.dump_above_ns || w->dump_due_ns)
		return;
	if (start < w->last_dump_end_ns)
		return;			/* in the last dump already */
	w->dump_due_ns = start + len + w->dump_after_ns;
	w->trigger.start_ns = start;
	w->trigger.length_ns = len;
	w->trigger.cpu = k->cpu;
	w->trigger.cat = k->cat;
	jtr_watch_key_name(w, k, w->trigger.name, group);
}

void jtr_watch_event(struct jtr_watch *w, const struct jtr_ev *e)
{
	int s = jtr_watch_slot(w, e->cpu), t = -1;
	size_t region;

	if (s >= 0)
		jtr_wmodel_event(w, &w->cfg, &w->cpus[s].st, e);
	/* a wake-up onto a watched CPU, or a migration away from one, from another */
	if (e->type == JTR_EV_WAKEUP || e->type == JTR_EV_MIGRATE)
		t = jtr_watch_slot(w, e->b & 0xffffffff);
	if (t >= 0 && t != s)
		jtr_wmodel_remote(&w->cfg, &w->cpus[t].st, e);
	if (!w->rec_slots)
		return;
	/* the recorder: the CPU's region, or the one of the CPUs not watched */
	if (s >= 0) {
		region = (size_t)s * w->rec_slots + w->cpus[s].st.rec_head++ % w->rec_slots;
	} else {
		region = (size_t)w->ncpus * w->rec_slots + *w->rec_shared % w->rec_slots;
		(*w->rec_shared)++;
	}
	w->rec[region] = *e;
}

void jtr_watch_flush_at(struct jtr_watch *w, uint64_t now)
{
	for (int i = 0; i < w->ncpus; i++)
		jtr_wmodel_flush(w, &w->cpus[i].st, now);
}

uint64_t jtr_watch_oldest(const struct jtr_watch *w)
{
	uint64_t oldest = 0;

	for (int r = 0; w->rec_slots && r <= w->ncpus; r++) {
		uint64_t head = r < w->ncpus ? w->cpus[r].st.rec_head : *w->rec_shared;

		if (head > w->rec_slots && region_at(w, r, 0)->ts_ns > oldest)
			oldest = region_at(w, r, 0)->ts_ns;
	}
	return oldest;
}

void jtr_watch_flush(struct jtr_watch *w)
{
	for (int i = 0; i < w->ncpus; i++)
		jtr_wmodel_flush(w, &w->cpus[i].st, 0);
}

void jtr_watch_end(struct jtr_watch *w, uint64_t ts)
{
	for (int i = 0; i < w->ncpus; i++)
		jtr_wmodel_end(w, &w->cfg, &w->cpus[i].st, ts);
}

void jtr_watch_clear(struct jtr_watch *w)
{
	for (int i = 0; i < w->ncpus; i++)
		for (int k = 0; k < JTR_W_NCATS; k++) {
			memset(w->cpus[i].cat[k].cell, 0,
			       (w->names + 1) * sizeof(struct jtr_watch_cell));
			w->cpus[i].cat[k].n = 0;
		}
}

void jtr_watch_add(struct jtr_watch *w, const struct jtr_wkey *k, const struct jtr_wcell *v)
{
	struct jtr_watch_cell *cell = cell_of(w, k);

	if (!cell)
		return;
	cell->count += v->count;
	cell->ns += v->ns;
	cell->events += v->events;
}

/* json_str - a JSON string (jtr_json's escaping) */
static void json_str(FILE *f, const char *s)
{
	jtr_json_escape(f, s);
}

void jtr_watch_state(const struct jtr_watch *w, FILE *f, int64_t now_ns, uint64_t dropped,
		     uint64_t cpu_ns)
{
	uint64_t records = 0, longest = 0;

	for (int i = 0; i < w->ncpus; i++) {
		records += w->cpus[i].st.records;
		if (w->cpus[i].st.longest_ns > longest)
			longest = w->cpus[i].st.longest_ns;
	}
	fprintf(f, "{\"ts_ns\":%lld,\"records\":%llu,\"dropped\":%llu,\"cpu_ns\":%llu,"
		"\"dumps\":%llu,\"dumps_skipped\":%llu,\"longest_ns\":%llu,\"cpus\":[",
		(long long)now_ns, (unsigned long long)records, (unsigned long long)dropped,
		(unsigned long long)cpu_ns, (unsigned long long)w->dumps,
		(unsigned long long)w->dumps_skipped, (unsigned long long)longest);
	for (int i = 0; i < w->ncpus; i++) {
		const struct jtr_wcpu *c = &w->cpus[i].st;
		const char *app = w->cfg.by_app ? c->app_comm :
				  c->nrun ? c->run[c->lead % JTR_WATCH_RUNNERS].comm : "";
		uint64_t app_ns = c->app_ns;
		char comm[JTR_WATCH_NAME_LEN];

		snprintf(comm, sizeof(comm), "%.*s", JTR_COMM_LEN - 1, app);
		if (!comm[0] && c->seen && c->running > 0 && w_app_runs(&w->cfg, c, c->last_switch))
			/* on the CPU since the watch began, not switched out yet */
			jtr_watch_task_name(comm, "", (uint32_t)c->running, sizeof(comm));
		/* the application's slice that runs now */
		if (now_ns > 0 && (uint64_t)now_ns > c->last_switch &&
		    w_app_runs(&w->cfg, c, (uint64_t)now_ns))
			app_ns += now_ns - c->last_switch;
		fprintf(f, "%s{\"cpu\":%d,\"app\":", i ? "," : "", w->cpus[i].cpu);
		json_str(f, comm);
		fprintf(f, ",\"app_ns\":%llu", (unsigned long long)app_ns);
		if (w->bpf_timed)
			fprintf(f, ",\"bpf_runs\":%llu,\"bpf_ns\":%llu",
				(unsigned long long)w->cpus[i].bpf_runs,
				(unsigned long long)w->cpus[i].bpf_ns);
		fputs(",\"categories\":[", f);
		for (int k = 0; k < JTR_W_NCATS; k++) {
			const struct jtr_watch_cat_acct *a = &w->cpus[i].cat[k];
			int n = a->n + (a->cell[w->names].name[0] ? 1 : 0);

			fprintf(f, "%s{\"category\":", k ? "," : "");
			json_str(f, jtr_watch_cats[k]);
			fprintf(f, ",\"count\":%llu,\"ns\":%llu,\"hist\":[",
				(unsigned long long)c->count[k], (unsigned long long)c->ns[k]);
			for (int b = 0; b < JTR_WATCH_BUCKETS; b++)
				fprintf(f, "%s%llu", b ? "," : "", (unsigned long long)c->hist[k][b]);
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

/* region_n - how many records recorder region @r holds (the last region:
 * the CPUs not watched) */
static size_t region_n(const struct jtr_watch *w, int r)
{
	uint64_t head = r < w->ncpus ? w->cpus[r].st.rec_head : *w->rec_shared;

	return head < w->rec_slots ? head : w->rec_slots;
}

/* region_at - record @i (from the oldest it holds) of recorder region @r */
static const struct jtr_ev *region_at(const struct jtr_watch *w, int r, size_t i)
{
	uint64_t head = r < w->ncpus ? w->cpus[r].st.rec_head : *w->rec_shared;
	uint64_t first = head - region_n(w, r);

	return &w->rec[(size_t)r * w->rec_slots + (first + i) % w->rec_slots];
}

size_t jtr_watch_records(const struct jtr_watch *w, uint64_t from, uint64_t to,
			 void (*fn)(void *arg, const struct jtr_ev *e), void *arg)
{
	size_t pos[JTR_TRACE_MAX_CPUS + 1], n = 0;
	int regions = w->ncpus + 1;

	if (!w->rec_slots || regions > JTR_TRACE_MAX_CPUS + 1)
		return 0;
	/* each region from its first record at or after @from (time order within one) */
	for (int r = 0; r < regions; r++) {
		size_t have = region_n(w, r);

		pos[r] = 0;
		while (pos[r] < have && region_at(w, r, pos[r])->ts_ns < from)
			pos[r]++;
	}
	for (;;) {
		const struct jtr_ev *best = NULL;
		int br = -1;

		for (int r = 0; r < regions; r++) {
			const struct jtr_ev *e;

			if (pos[r] >= region_n(w, r))
				continue;
			e = region_at(w, r, pos[r]);
			if (e->ts_ns > to)
				continue;
			if (!best || e->ts_ns < best->ts_ns) {
				best = e;
				br = r;
			}
		}
		if (!best)
			return n;
		if (fn)
			fn(arg, best);
		pos[br]++;
		n++;
	}
}

/* kept_at - kept interruption @i (from the oldest) of CPU slot @s */
static const struct jtr_wkept *kept_at(const struct jtr_watch *w, int s, size_t i, size_t *n)
{
	uint64_t head = w->cpus[s].st.kept_head;

	*n = head < w->kept_slots ? head : w->kept_slots;
	return &w->kept[(size_t)s * w->kept_slots + (head - *n + i) % w->kept_slots];
}

long jtr_watch_outliers(const struct jtr_watch *w, FILE *f, uint64_t from, uint64_t to,
			uint64_t min_ns)
{
	size_t pos[JTR_TRACE_MAX_CPUS];
	long n = 0;

	if (fprintf(f, "cpu,start_ns,length_ns,label\n") < 0)
		return -1;
	if (!w->kept_slots || w->ncpus > JTR_TRACE_MAX_CPUS)
		return 0;
	memset(pos, 0, sizeof(pos[0]) * w->ncpus);
	for (;;) {
		const struct jtr_wkept *best = NULL;
		int bs = -1;

		for (int s = 0; s < w->ncpus; s++) {
			const struct jtr_wkept *k;
			size_t have;

			for (;;) {
				k = kept_at(w, s, pos[s], &have);
				if (pos[s] >= have || (k->start_ns >= from && k->start_ns <= to &&
						       k->length_ns >= min_ns))
					break;
				pos[s]++;
			}
			if (pos[s] >= have)
				continue;
			if (!best || k->start_ns < best->start_ns) {
				best = k;
				bs = s;
			}
		}
		if (!best)
			return n;
		pos[bs]++;
		/* a label has no comma or double quote (results/outliers.py) */
		char name[JTR_WATCH_NAME_LEN], group[JTR_WATCH_GROUP_LEN];
		char label[2 * JTR_WATCH_NAME_LEN + 2];

		jtr_watch_key_name(w, &best->key, name, group);
		snprintf(label, sizeof(label), "%s %s", jtr_watch_cats[best->key.cat % JTR_W_NCATS],
			 name);
		for (char *p = label; *p; p++)
			if (*p == ',' || *p == '"' || (unsigned char)*p < 0x20 || *p == 0x7f)
				*p = ' ';
		if (fprintf(f, "%u,%llu,%llu,%s\n", w->cpus[bs].cpu,
			    (unsigned long long)best->start_ns,
			    (unsigned long long)best->length_ns, label) < 0)
			return -1;
		n++;
	}
}
