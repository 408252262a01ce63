// SPDX-License-Identifier: GPL-2.0-only
/* watch_run.c - jtr watch's run inside the tracer: the options into the
 * accounting (watch.c), the state lines and the dumps (watch_run.h says why
 * this is a file of its own).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "jtr_cpu.h"
#include "jtr_probe.h"
#include "programs.h"
#include "trace_json.h"
#include "watch_run.h"
#include "trace.skel.h"

/* the kernel side's maps, mapped here; the counters as a state line read them */
static struct jtr_wcpu *wstate;
static struct jtr_wcell *wcounts, *snap;
static size_t wstate_bytes, wcounts_bytes, wrec_bytes, wkept_bytes, ncounts;
/* the names' keys and their place among a CPU's and category's counters */
static struct jtr_wkey *keys;
static uint32_t *key_n;
static size_t nkeys, keys_cap;
static uint64_t keys_names = (uint64_t)-1;	/* the names the kernel side had */

/* recorder_room - the flight recorder (with --dump-above) is kernel memory
 * for the whole watch: at most half the memory available now (the rest is left
 * to everything else, as for an shm ring), or exit 2 before anything is
 * traced (a 16 GiB recorder was locked on a 24 GB machine); checked with or
 * without --dump-above, as the option is */
static void recorder_room(struct jtr_probe *p, uint64_t bytes)
{
	const uint64_t avail = jtr_proc_kb("/proc/meminfo", "MemAvailable");

	if (avail && bytes > avail / 2)
		jtr_usage_error(p, "--recorder %.1f MiB: more than half the memory available now "
				"(%.1f MiB); the recorder is kernel memory while it watches: give "
				"at most %.0f MiB, or free memory", bytes / 1048576.0,
				avail / 1048576.0, (double)(avail / 2 / 1048576));
}

/* label_of - the container label of the cgroups a cause's task was in when
 * the kernel side counted it (cgroups.h) */
static const char *label_of(const void *ctx, uint64_t v2, uint64_t v1)
{
	struct tracer *t = (struct tracer *)ctx;

	return jtr_cgroups_label(&t->groups, v2, v1);
}

/* pow2_below - the largest power of two <= @n (0 for 0) */
static size_t pow2_below(size_t n)
{
	size_t p = 1;

	if (!n)
		return 0;
	while (p * 2 <= n)
		p *= 2;
	return p;
}

/* watch_run_configure - see watch_run.h */
void watch_run_configure(struct tracer *t)
{
	struct jtr_watch *w = t->watch;
	struct trace_bpf *skel = t->skel;
	/* what only a dump's records need: not attached without dumps */
	static const char *const dump_only[] = {
		"softirq_raise", "sched_waking", "workqueue_execute_start", "workqueue_execute_end",
		"hrtimer_expire_entry", "hrtimer_expire_exit", "timer_expire_entry",
		"timer_expire_exit", "tick_stop",
	};
	size_t names = (size_t)w->ncpus * JTR_W_NCATS * w->names;

	skel->rodata->watch_mode = true;
	jtr_watch_vectors(w, (const char (*)[48])t->vec_names, t->nvecs);
	bpf_map__set_max_entries(skel->maps.wstate, w->ncpus);
	bpf_map__set_max_entries(skel->maps.wcells, names);
	ncounts = (size_t)w->ncpus * JTR_W_NCATS * (w->names + 1);
	bpf_map__set_max_entries(skel->maps.wcounts, ncounts);
	keys_cap = names;
	free(keys);		/* a second try (raw_tp after tp_btf) sets up again */
	free(key_n);
	free(snap);
	keys = calloc(keys_cap, sizeof(*keys));
	key_n = calloc(keys_cap, sizeof(*key_n));
	snap = calloc(ncounts, sizeof(*snap));
	if (!keys || !key_n || !snap)
		jtr_fatal(t->p, "no memory for jtr watch's tables");
	bpf_map__set_max_entries(skel->maps.wkept, w->kept_slots ? w->ncpus * w->kept_slots : 1);
	bpf_map__set_max_entries(skel->maps.wrec, w->rec_slots ? (w->ncpus + 1) * w->rec_slots : 1);
	skel->bss->wcfg = w->cfg;
	skel->bss->wcfg.on = 0;
	if (w->rec_slots)
		return;
	for (size_t i = 0; i < sizeof(dump_only) / sizeof(dump_only[0]); i++)
		for (int k = 0; k < 4; k++) {
			static const char *const kinds[] = { "btf", "raw", "floor", "clock" };
			char name[96];
			struct bpf_program *prog;

			snprintf(name, sizeof(name), "%s_%s", kinds[k], dump_only[i]);
			if ((prog = bpf_object__find_program_by_name(skel->obj, name)))
				bpf_program__set_autoload(prog, false);
		}
}

/* map_of - @map of @bytes mapped here, or exit 1 */
static void *map_of(struct tracer *t, struct bpf_map *map, size_t bytes)
{
	void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(map), 0);

	if (m == MAP_FAILED)
		jtr_fatal(t->p, "cannot map the kernel side's %s: %s", bpf_map__name(map),
			  strerror(errno));
	return m;
}

/* watch_run_init - see watch_run.h */
void watch_run_init(struct tracer *t, struct jtr_watch *w)
{
	const struct trace_opts *o = t->o;
	int cpus[JTR_TRACE_MAX_CPUS], n = 0;

	for (int c = 0; c < JTR_TRACE_MAX_CPUS && c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &o->cpus))
			cpus[n++] = c;
	/* stdout carries the state lines; nothing else goes there */
	t->p->quiet = true;
	t->p->progress = false;
	/* the recorder and the interruptions kept for outliers.csv only for
	 * dumps: a region per watched CPU and one for the records of the
	 * others, each a power of two */
	recorder_room(t->p, o->recorder_bytes);
	if (jtr_watch_init(w, cpus, n, o->names, o->dump_above_ns ?
			   pow2_below(o->recorder_bytes / sizeof(struct jtr_ev) / (n + 1)) : 0,
			   o->dump_above_ns ? JTR_WATCH_KEPT : 0, false) < 0)
		jtr_fatal(t->p, "no memory for jtr watch's tables");
	for (int i = 0; i < o->napp_comm; i++)
		jtr_watch_app_comm(w, o->app_comm[i]);
	for (int i = 0; i < o->napp_pid; i++)
		jtr_watch_app_pid(w, o->app_pid[i]);
	w->cfg.dump_above_ns = o->dump_above_ns;
	w->dump_after_ns = JTR_NS_PER_S;
	w->label_of = label_of;
	w->group_ctx = t;
	t->watch = w;
}

/* app_tasks - the application's tasks (--app) that run already, for the
 * CPUs where they run before any switch is seen: every thread of an --app
 * PID, every thread whose comm is an --app comm */
static void app_tasks(struct jtr_watch *w)
{
	DIR *procs, *tasks;
	struct dirent *d, *t;
	char path[PATH_MAX], comm[JTR_COMM_LEN + 2];

	if ((!w->cfg.napp_comm && !w->napp_pid) || !(procs = opendir("/proc")))
		return;
	while ((d = readdir(procs))) {
		uint32_t pid = (uint32_t)strtoul(d->d_name, NULL, 10);
		bool all = false;

		if (!pid)
			continue;
		for (int i = 0; i < w->napp_pid; i++)
			all |= w->app_pid[i] == pid;
		if (!all && !w->cfg.napp_comm)
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task", pid);
		if (!(tasks = opendir(path)))
			continue;
		while ((t = readdir(tasks))) {
			uint32_t tid = (uint32_t)strtoul(t->d_name, NULL, 10);
			bool app = all;
			FILE *f;

			if (!tid)
				continue;
			snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
			if (!app && (f = fopen(path, "r"))) {
				if (fgets(comm, sizeof(comm), f)) {
					comm[strcspn(comm, "\n")] = 0;
					for (uint32_t i = 0; i < w->cfg.napp_comm; i++)
						app |= !strcmp(comm, w->cfg.app_comm[i]);
				}
				fclose(f);
			}
			if (app && jtr_watch_app_tid(w, tid) < 0)
				break;
		}
		closedir(tasks);
	}
	closedir(procs);
}

/* read_keys - the names' keys and their places, again when the kernel side
 * has more names than when they were read (@names: how many it has now) */
static void read_keys(struct tracer *t, uint64_t names)
{
	int fd = bpf_map__fd(t->skel->maps.wcells);
	struct jtr_wkey k, next;
	void *prev = NULL;

	if (names == keys_names)
		return;
	nkeys = 0;
	while (nkeys < keys_cap && !bpf_map_get_next_key(fd, prev, &next)) {
		if (!bpf_map_lookup_elem(fd, &next, &key_n[nkeys]))
			keys[nkeys++] = next;
		k = next;
		prev = &k;
	}
	keys_names = names;
}

/* snapshot - CPU @i's state and counters as they were at one moment: copied
 * between two equal even values of its sequence number (the kernel side makes
 * it odd while it counts); after many tries, as they are */
static void snapshot(struct jtr_watch *w, int i)
{
	const size_t per = (size_t)JTR_W_NCATS * (w->names + 1);
	volatile __u64 *seq = &wstate[i].seq;

	for (int tries = 0; tries < 10000; tries++) {
		uint64_t s1 = __atomic_load_n(seq, __ATOMIC_ACQUIRE);

		if (s1 & 1)
			continue;
		memcpy(&w->cpus[i].st, &wstate[i], sizeof(wstate[i]));
		memcpy(&snap[i * per], &wcounts[i * per], per * sizeof(*snap));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(seq, __ATOMIC_RELAXED) == s1)
			return;
	}
}

/* watch_read - the kernel side's tables into the names; @now: what it will
 * count at its CPU's next event counted now too (an interrupt whose softirq
 * can no longer come), as the user side's model counts it (nothing kept) */
static void watch_read(struct tracer *t, uint64_t now)
{
	struct jtr_watch *w = t->watch;
	const size_t per_cat = (size_t)w->names + 1;
	uint64_t names = 0;

	for (int i = 0; i < w->ncpus; i++) {
		snapshot(w, i);
		for (int k = 0; k < JTR_W_NCATS; k++)
			names += w->cpus[i].st.nnames[k];
	}
	read_keys(t, names);
	jtr_watch_clear(w);
	for (size_t n = 0; n < nkeys; n++) {
		int s = jtr_watch_slot(w, keys[n].cpu);

		if (s >= 0 && keys[n].cat < JTR_W_NCATS && key_n[n] < (uint32_t)w->names)
			jtr_watch_add(w, &keys[n], &snap[((size_t)s * JTR_W_NCATS + keys[n].cat) *
							 per_cat + key_n[n]]);
	}
	for (int s = 0; s < w->ncpus; s++)		/* the names past the bound */
		for (int k = 0; k < JTR_W_NCATS; k++) {
			const struct jtr_wcell *v = &snap[((size_t)s * JTR_W_NCATS + k) * per_cat +
							  w->names];
			struct jtr_wkey o = { .cpu = (uint16_t)w->cpus[s].cpu, .cat = (uint8_t)k,
					      .src = JTR_WK_OTHER };

			if (v->count || v->events)
				jtr_watch_add(w, &o, v);
		}
	if (now) {
		w->virtual = true;
		jtr_watch_flush_at(w, now);
		w->virtual = false;
	}
}

/* state_to_fd - the state line @buf (@len bytes) into --state-fd, which the
 * reader copies between two equal even sequence numbers (docs/fleet.md):
 * bytes 0-7 the sequence number, 8-15 the line's length, the line from 16.
 * No wake-up of the reader: it reads when it is scraped */
static void state_to_fd(struct tracer *t, const char *buf, uint64_t len)
{
	static bool warned;
	uint64_t seq = ++t->state_seq;	/* odd: changing */
	int fd = t->o->state_fd;

	if (pwrite(fd, &seq, 8, 0) != 8 || pwrite(fd, buf, len, 16) != (ssize_t)len ||
	    pwrite(fd, &len, 8, 8) != 8 || (seq = ++t->state_seq, pwrite(fd, &seq, 8, 0) != 8)) {
		if (!warned)
			jtr_warn(t->p, "--state-fd: %s: the state is not kept", strerror(errno));
		warned = true;
	}
}

/* bpf_cost - each watched CPU's BPF runs and time so far (--prog-stats
 * sampled; w->bpf_timed stays false otherwise, or when the counters cannot
 * be read) */
static void bpf_cost(struct tracer *t)
{
	uint64_t runs[JTR_TRACE_MAX_CPUS], ns[JTR_TRACE_MAX_CPUS];
	struct jtr_watch *w = t->watch;

	w->bpf_timed = t->o->prog_stats == STATS_SAMPLED &&
		       progs_cost_by_cpu(t, runs, ns, JTR_TRACE_MAX_CPUS) >= 0;
	if (!w->bpf_timed)
		return;
	for (int i = 0; i < w->ncpus; i++)
		if (w->cpus[i].cpu >= 0 && w->cpus[i].cpu < JTR_TRACE_MAX_CPUS) {
			w->cpus[i].bpf_runs = runs[w->cpus[i].cpu];
			w->cpus[i].bpf_ns = ns[w->cpus[i].cpu];
		}
}

/* watch_state - the accounting so far, one line on stdout, or in --state-fd
 * but for the last (@read: read from the kernel side first; not: the last) */
static void watch_state(struct tracer *t, int64_t now, bool read)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m;

	if (read)
		watch_read(t, (uint64_t)now);
	progs_read_counts(t);
	bpf_cost(t);
	if (t->o->state_fd < 0 || !read || !(m = open_memstream(&buf, &len))) {
		jtr_watch_state(t->watch, stdout, now, progs_sum(t->total.dropped),
				process_cpu_ns());
		return;
	}
	jtr_watch_state(t->watch, m, now, progs_sum(t->total.dropped), process_cpu_ns());
	if (fclose(m) == 0)
		state_to_fd(t, buf, len);
	free(buf);
}

/* dump_span - the pending dump's records: up to its cut (or @now at the end),
 * from --keep before it but never from before the last dump, before the
 * watch, or before what the recorder still holds once it has wrapped around */
static void dump_span(struct tracer *t, int64_t now, uint64_t *from, uint64_t *to)
{
	struct jtr_watch *w = t->watch;

	*to = w->dump_due_ns && w->dump_due_ns < (uint64_t)now ? w->dump_due_ns : (uint64_t)now;
	*from = *to > t->o->keep_ns ? *to - t->o->keep_ns : 0;
	if (*from < w->last_dump_end_ns)
		*from = w->last_dump_end_ns;
	if (*from < (uint64_t)t->win_start_ns)
		*from = t->win_start_ns;
	if (*from < jtr_watch_oldest(w))
		*from = jtr_watch_oldest(w);
}

struct dump_out {
	struct tracer *t;
	struct jtr_addrs *addrs;
	FILE *f;
	size_t left;		/* records counted: no more (the recorder goes on) */
};

/* dump_one - one record of a dump: written, its addresses and groups noted */
static void dump_one(void *arg, const struct jtr_ev *r)
{
	struct dump_out *o = arg;

	if (!o->left)
		return;
	o->left--;
	fwrite(r, sizeof(*r), 1, o->f);
	jtr_addrs_note(o->addrs, r);
	if (r->type == JTR_EV_TASK)
		jtr_cgroups_note(&o->t->groups, r);
}

/* dump_files - the dump's events.bin, outliers.csv (the kept interruptions
 * of at least min(--dump-above, 10 us)) and trace.json in @d, for the
 * records from @from to @to: how many in *@n, and outliers in *@nout; 0, or
 * -1 with errno as the call that failed left it */
static int dump_files(struct tracer *t, struct jtr_outdir *d, uint64_t from, uint64_t to,
		      size_t *n, long *nout)
{
	struct jtr_watch *w = t->watch;
	uint64_t min_ns = w->cfg.dump_above_ns < 10000 ? w->cfg.dump_above_ns : 10000;
	struct jtr_addrs addrs = { 0 };
	struct jtr_ev_header hdr;
	struct jtr_afile ev, out, tj;
	struct dump_out o = { .t = t, .addrs = &addrs };
	char path[PATH_MAX];
	int rc;

	*n = jtr_watch_records(w, from, to, NULL, NULL);
	memset(&hdr, 0, sizeof(hdr));
	memcpy(hdr.magic, JTR_EV_MAGIC, sizeof(hdr.magic));
	hdr.version = JTR_EV_VERSION;
	hdr.record_size = JTR_EV_SIZE;
	hdr.start_ns = from;
	hdr.end_ns = to;
	hdr.records = *n;
	if (jtr_outdir_path(d, "events.bin", path, sizeof(path)) < 0 || jtr_afile_open(&ev, path) < 0)
		goto fail;
	fwrite(&hdr, sizeof(hdr), 1, ev.f);
	o.f = ev.f;
	o.left = *n;
	jtr_watch_records(w, from, to, dump_one, &o);
	if (ferror(ev.f) || jtr_afile_commit(&ev) < 0)
		goto fail;
	if (jtr_outdir_path(d, "outliers.csv", path, sizeof(path)) < 0 ||
	    jtr_afile_open(&out, path) < 0)
		goto fail;
	*nout = jtr_watch_outliers(w, out.f, from, to, min_ns);
	if (*nout < 0 || jtr_afile_commit(&out) < 0)
		goto fail;
	if (jtr_outdir_path(d, "trace.json", path, sizeof(path)) < 0 || jtr_afile_open(&tj, path) < 0)
		goto fail;
	trace_json_write(t, &tj, from, to, *n, &addrs);
	jtr_addrs_free(&addrs);
	return 0;
fail:
	rc = errno;		/* for the caller's message, as the failed call left it */
	jtr_addrs_free(&addrs);
	errno = rc;
	return -1;
}

/* dump_say - the dump's line of JSON on stdout: where, what, and why */
static void dump_say(const struct jtr_watch *w, const char *dir, size_t n, long nout,
		     uint64_t from, uint64_t to)
{
	printf("{\"dump\":");
	jtr_json_escape(stdout, dir);
	printf(",\"records\":%zu,\"outliers\":%ld,\"from_ns\":%llu,\"to_ns\":%llu,"
	       "\"trigger\":{\"cpu\":%u,\"start_ns\":%llu,\"length_ns\":%llu,\"category\":",
	       n, nout, (unsigned long long)from, (unsigned long long)to, w->trigger.cpu,
	       (unsigned long long)w->trigger.start_ns, (unsigned long long)w->trigger.length_ns);
	jtr_json_escape(stdout, jtr_watch_cats[w->trigger.cat]);
	printf(",\"name\":");
	jtr_json_escape(stdout, w->trigger.name);
	printf("}}\n");
	fflush(stdout);
}

/* watch_dump - the recorder's events of the pending dump (dump_span) as
 * DIR/dump-DATE-cpuN/ (dump_files), which 'jtr attribute' reads; one line
 * of JSON on stdout says where. A dump that cannot be written is a warning
 * and a dump skipped: the watch goes on */
static void watch_dump(struct tracer *t, int64_t now)
{
	struct jtr_watch *w = t->watch;
	struct jtr_probe *p = t->p;
	struct jtr_outdir d;
	struct jtr_err e;
	uint64_t from, to;
	char name[96], dir[PATH_MAX], stamp[32];
	time_t wall = time(NULL);
	size_t n;
	long nout;
	int rc;

	if (!t->win_end_ns)
		watch_read(t, 0);	/* the recorder's heads as they are now */
	dump_span(t, now, &from, &to);
	w->dump_due_ns = 0;
	if (w->dumps >= t->o->dump_max) {
		w->dumps_skipped++;
		return;
	}
	w->last_dump_end_ns = to;
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", localtime(&wall));
	snprintf(name, sizeof(name), "dump-%s-cpu%u", stamp, w->trigger.cpu);
	if (snprintf(dir, sizeof(dir), "%s/%s", p->out.work, name) >= (int)sizeof(dir)) {
		jtr_warn(p, "no dump: the folder name is too long");
		w->dumps_skipped++;
		return;
	}
	jtr_err_clear(&e);
	if (jtr_outdir_prepare(&d, dir, p->host.hostname, "watch", &e) < 0) {
		jtr_warn(p, "no dump: %s", e.msg);
		w->dumps_skipped++;
		return;
	}
	rc = dump_files(t, &d, from, to, &n, &nout);
	if (rc < 0) {
		jtr_warn(p, "no dump: cannot write %s: %s", dir, strerror(errno));
	} else if (jtr_outdir_commit(&d, &e) < 0) {
		jtr_warn(p, "no dump: %s", e.msg);
		rc = -1;
	}
	if (rc < 0) {
		jtr_outdir_abort(&d);
		w->dumps_skipped++;
		return;
	}
	w->dumps++;
	dump_say(w, d.final, n, nout, from, to);
}

/* watch_run_begin - see watch_run.h */
void watch_run_begin(struct tracer *t, int64_t start_ns)
{
	struct jtr_watch *w = t->watch;
	struct trace_bpf *skel = t->skel;
	const size_t page = 4096;
	__u8 one = 1;

	wstate_bytes = ((size_t)w->ncpus * sizeof(struct jtr_wcpu) + page - 1) / page * page;
	wstate = map_of(t, skel->maps.wstate, wstate_bytes);
	wcounts_bytes = (ncounts * sizeof(struct jtr_wcell) + page - 1) / page * page;
	wcounts = map_of(t, skel->maps.wcounts, wcounts_bytes);
	for (int i = 0; i < w->ncpus; i++)
		wstate[i] = w->cpus[i].st;
	if (w->kept_slots) {
		wkept_bytes = w->ncpus * w->kept_slots * sizeof(struct jtr_wkept);
		w->kept = map_of(t, skel->maps.wkept, wkept_bytes);
	}
	if (w->rec_slots) {
		wrec_bytes = (w->ncpus + 1) * w->rec_slots * sizeof(struct jtr_ev);
		w->rec = map_of(t, skel->maps.wrec, wrec_bytes);
		w->rec_shared = (uint64_t *)&skel->bss->wrec_shared;
	}
	w->cfg.start_ns = start_ns;
	app_tasks(w);
	for (int i = 0; i < w->napp_tid; i++)
		bpf_map__update_elem(skel->maps.wtids, &w->app_tid[i], sizeof(w->app_tid[i]), &one,
				     sizeof(one), BPF_ANY);
	skel->bss->wcfg.start_ns = start_ns;
	__atomic_store_n(&skel->bss->wcfg.on, 1, __ATOMIC_RELEASE);	/* counting from here */
	t->last_state_ns = start_ns;
	watch_state(t, start_ns, true);
}

/* watch_run_notice - see watch_run.h */
void watch_run_notice(struct tracer *t, const struct jtr_ev *e)
{
	struct jtr_wkey k;

	if (e->type != JTR_EV_WATCH_INTR)
		return;
	memset(&k, 0, sizeof(k));
	k.cpu = e->cpu;
	k.cat = (uint8_t)e->b;
	k.src = (uint8_t)(e->b >> 8);
	k.id = (uint32_t)(e->b >> 32);
	memcpy(k.name, e->str, JTR_COMM_LEN);
	memcpy(k.group, e->str + JTR_COMM_LEN, JTR_COMM_LEN);
	jtr_watch_trigger(t->watch, &k, e->ts_ns, e->a);
}

/* watch_run_drained - see watch_run.h */
uint64_t watch_run_drained(struct tracer *t, uint64_t pause)
{
	int64_t now = jtr_mono_ns();

	if (t->watch->dump_due_ns && (uint64_t)now >= t->watch->dump_due_ns)
		watch_dump(t, now);
	if (now - t->last_state_ns >= (int64_t)t->o->state_ns) {
		t->last_state_ns = now;
		watch_state(t, now, true);
	}
	/* without dumps nothing comes through the ring buffer: the tracer
	 * wakes for the next state line only (ten drains a second cost it
	 * 0.05 % of a CPU on a quiet machine, more than the rest of it) */
	if (!t->o->dump_above_ns) {
		int64_t left = t->last_state_ns + (int64_t)t->o->state_ns - jtr_mono_ns();

		pause = left > (int64_t)JTR_NS_PER_MS ? (uint64_t)left : JTR_NS_PER_MS;
	}
	return pause > t->o->state_ns ? t->o->state_ns : pause;
}

/* floor_json - --floor: the whole watch's trace.json beside watch.json (its
 * programs' run times and their floor's: make bench) */
static void floor_json(struct tracer *t, int64_t end_ns)
{
	struct jtr_addrs addrs = { 0 };
	struct jtr_afile tj;
	char path[PATH_MAX];
	uint64_t records = 0;

	for (int i = 0; i < t->watch->ncpus; i++)
		records += t->watch->cpus[i].st.records;
	if (jtr_outdir_path(&t->p->out, "trace.json", path, sizeof(path)) < 0 ||
	    jtr_afile_open(&tj, path) < 0) {
		jtr_warn(t->p, "no trace.json: %s", strerror(errno));
		return;
	}
	trace_json_write(t, &tj, t->win_start_ns, end_ns, records, &addrs);
}

/* watch_run_stop - see watch_run.h */
void watch_run_stop(struct tracer *t)
{
	__atomic_store_n(&t->skel->bss->wcfg.on, 0, __ATOMIC_RELEASE);
}

/* watch_run_end - see watch_run.h */
void watch_run_end(struct tracer *t, int64_t end_ns)
{
	struct jtr_watch *w = t->watch;

	progs_consume(t, 0, NULL);
	watch_read(t, 0);
	jtr_watch_end(w, end_ns);
	if (w->dump_due_ns)
		watch_dump(t, end_ns);
	if (t->o->floor)
		floor_json(t, end_ns);
	watch_state(t, end_ns, false);
	munmap(wstate, wstate_bytes);
	munmap(wcounts, wcounts_bytes);
	free(keys);
	free(key_n);
	free(snap);
	if (w->kept)
		munmap(w->kept, wkept_bytes);
	if (w->rec)
		munmap(w->rec, wrec_bytes);
	w->kept = NULL;
	w->rec = NULL;
	w->rec_shared = &w->rec_shared_own;
}
