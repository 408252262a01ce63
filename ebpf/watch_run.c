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
#include <time.h>

#include <bpf/libbpf.h>

#include "jtr_cpu.h"
#include "jtr_probe.h"
#include "programs.h"
#include "trace_json.h"
#include "watch_run.h"

/* recorder_room - the flight recorder is allocated and locked in memory for
 * the whole watch: at most half the memory available now (the rest is left
 * to everything else, as for an shm ring), or exit 2 before anything is
 * traced (a 16 GiB recorder was locked on a 24 GB machine) */
static void recorder_room(struct jtr_probe *p, uint64_t bytes)
{
	const uint64_t avail = jtr_proc_kb("/proc/meminfo", "MemAvailable");

	if (avail && bytes > avail / 2)
		jtr_usage_error(p, "--recorder %.1f MiB: more than half the memory available now "
				"(%.1f MiB); the recorder is locked in memory while it watches: give "
				"at most %.0f MiB, or free memory", bytes / 1048576.0,
				avail / 1048576.0, (double)(avail / 2 / 1048576));
}

/* watch_run_init - see watch_run.h */
/* group_of - the container label of task @pid (cgroups.h); a task the table
 * no longer holds (a later one took its slot, in a watch of days) is described
 * again by the kernel side at its next switch */
static const char *group_of(const void *ctx, uint32_t pid)
{
	struct tracer *t = (struct tracer *)ctx;

	if (pid && !jtr_cgroups_known(&t->groups, pid))
		progs_forget_task(t, pid);
	return jtr_cgroups_task_label(&t->groups, pid);
}

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
	recorder_room(t->p, o->recorder_bytes);
	if (jtr_watch_init(w, cpus, n, o->names, o->recorder_bytes / sizeof(struct jtr_ev),
			   65536) < 0)
		jtr_fatal(t->p, "no memory for a recorder of %llu bytes: use a smaller --recorder",
			  (unsigned long long)o->recorder_bytes);
	for (int i = 0; i < o->napp_comm; i++)
		jtr_watch_app_comm(w, o->app_comm[i]);
	for (int i = 0; i < o->napp_pid; i++)
		jtr_watch_app_pid(w, o->app_pid[i]);
	w->dump_above_ns = o->dump_above_ns;
	w->keep_ns = o->keep_ns;
	w->dump_after_ns = JTR_NS_PER_S;
	w->group_of = group_of;
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

	if ((!w->napp_comm && !w->napp_pid) || !(procs = opendir("/proc")))
		return;
	while ((d = readdir(procs))) {
		uint32_t pid = (uint32_t)strtoul(d->d_name, NULL, 10);
		bool all = false;

		if (!pid)
			continue;
		for (int i = 0; i < w->napp_pid; i++)
			all |= w->app_pid[i] == pid;
		if (!all && !w->napp_comm)
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
					for (int i = 0; i < w->napp_comm; i++)
						app |= !strcmp(comm, w->app_comm[i]);
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

/* watch_state - the accounting so far, one line on stdout */
static void watch_state(struct tracer *t, int64_t now)
{
	jtr_watch_flush(t->watch);
	progs_read_counts(t);
	jtr_watch_state(t->watch, stdout, now, progs_sum(t->total.dropped),
			process_cpu_ns());
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
	if (w->rec_n == w->rec_cap && *from < w->rec[w->rec_next].ts_ns)
		*from = w->rec[w->rec_next].ts_ns;
}

/* dump_files - the dump's events.bin, outliers.csv (the kept interruptions
 * of at least min(--dump-above, 10 us)) and trace.json in @d, for the
 * records from @from to @to: how many in *@n, and outliers in *@nout; 0, or
 * -1 with errno as the call that failed left it */
static int dump_files(struct tracer *t, struct jtr_outdir *d, uint64_t from, uint64_t to,
		      size_t *n, long *nout)
{
	struct jtr_watch *w = t->watch;
	uint64_t min_ns = w->dump_above_ns < 10000 ? w->dump_above_ns : 10000;
	struct jtr_addrs addrs = { 0 };
	struct jtr_ev_header hdr;
	struct jtr_afile ev, out, tj;
	char path[PATH_MAX];
	size_t first;
	int rc;

	jtr_watch_dump_range(w, from, to, &first, n);
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
	for (size_t i = 0; i < *n; i++) {
		const struct jtr_ev *r = &w->rec[(first + i) % w->rec_cap];

		fwrite(r, sizeof(*r), 1, ev.f);
		jtr_addrs_note(&addrs, r);
	}
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

	w->vec_names = (const char (*)[48])t->vec_names;
	w->nvecs = t->nvecs;
	w->start_ns = start_ns;
	app_tasks(w);
	t->last_state_ns = start_ns;
	watch_state(t, start_ns);
}

/* watch_run_drained - see watch_run.h */
uint64_t watch_run_drained(struct tracer *t, uint64_t pause)
{
	int64_t now = jtr_mono_ns();

	if (t->watch->dump_due_ns && (uint64_t)now >= t->watch->dump_due_ns)
		watch_dump(t, now);
	if (now - t->last_state_ns >= (int64_t)t->o->state_ns) {
		t->last_state_ns = now;
		watch_state(t, now);
	}
	return pause > t->o->state_ns ? t->o->state_ns : pause;
}

/* watch_run_end - see watch_run.h */
void watch_run_end(struct tracer *t, int64_t end_ns)
{
	ring_buffer__consume(t->rb);
	jtr_watch_end(t->watch, end_ns);
	if (t->watch->dump_due_ns)
		watch_dump(t, end_ns);
	watch_state(t, end_ns);
}
