/* SPDX-License-Identifier: GPL-2.0-only */
/* watch.h - jtr watch's accounting: the tracer's events turned, where they
 * happen, into the interruptions of the application on the watched CPUs
 * (what took its CPU from it, by cause), counted in fixed tables, and a
 * flight recorder of the last events for a dump. The counting is
 * watch_model.h's, run by the kernel side in each program (the tables are
 * BPF maps, read at each state line; no event crosses a ring buffer to be
 * counted); this file turns those tables into names and the state line, cuts
 * dumps from the recorder, and runs the same model on synthetic records for
 * the unit tests (jtr_watch_event). Everything is allocated once at the
 * start: memory stays bounded however long the watch runs.
 *
 * The application. With --app COMM|PID (jtr_watch_app_comm/_pid), its tasks
 * are those of that comm or of that process (every thread). Without --app,
 * it is, on each CPU, the comm that has run longest there since the watch
 * began (a task running when the watch begins has run since then; the
 * running slice counts): on a CPU given to one application, that
 * application, whatever else comes and goes; on a CPU shared by two busy
 * programs, give --app. A CPU's first second (JTR_WATCH_SETTLE_NS) only
 * decides which comm that is: by this rule, interruptions that begin in it are
 * not counted. When another comm takes the lead, a wait of the one before it
 * is no wait of the application's: it is dropped. The
 * application's own running time is never an interruption, whoever it
 * preempts.
 *
 * An interruption of the application is:
 *  - an interrupt while one of its tasks runs (hardirq, softirq outside one,
 *    vector: tick, IPI, other), from its first entry to the exit that leaves
 *    no interrupt open, charged to the nested interrupt with the largest self
 *    time; an NMI (its handler's time);
 *  - a wait: from the moment one of its tasks is runnable on the CPU but
 *    another task has it (a switch away from the application's task while it
 *    is still runnable, or its wake-up while another task runs, or another
 *    task taking the CPU while it is woken) until one of its tasks runs there
 *    again (or the waiting task moves to another CPU, or the watch ends): one
 *    interruption of its whole length, charged to the task that took the CPU
 *    (category "task preemption", the task's full comm, "kworker/1:2"; the one
 *    that had it when the application was woken), as jtr attribute charges a
 *    preemption; or to "RT throttling" ("sched_rt_runtime_us") when it began
 *    with a real-time task (prio < 100) switched out still runnable for the
 *    idle task or a task of lower priority: only the kernel throttling the RT
 *    runqueue does that.
 * An interrupt is counted when it ends, a wait when it ends: each adds one to
 * its cause's count, its length to the cause's time and to the category's
 * histogram, in one place (add_intr), so the histogram's count and sum are
 * always the sums of the counts and times by name. Interrupts that come while
 * the CPU is idle, runs other tasks or during a wait are kernel events (the
 * wait's length holds them), not interruptions; so are page faults, which have
 * no exit tracepoint and so no length, and every preemption of a task by
 * another. Names are kept per CPU and category up to --names, then "other".
 *
 * The category words are trace/causes.py's (WATCH, in jtr_watch_cats' order;
 * analysis/tests/test_parity.py compares them).
 */
#ifndef JTR_WATCH_H
#define JTR_WATCH_H
#include <linux/types.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "trace.h"
#include "watch_model.h"

#define JTR_WATCH_NAME_LEN	32
#define JTR_WATCH_GROUP_LEN	80	/* cgroups.h JTR_CGROUP_LABEL */
#define JTR_WATCH_NAMES		32	/* default names kept per CPU and category; then "other" */
#define JTR_WATCH_TIDS		4096	/* --app tasks found running when the watch began */
#define JTR_WATCH_KEPT		4096	/* interruptions kept per CPU for a dump (a power of 2) */
#define JTR_WATCH_THROTTLE_NAME	"sched_rt_runtime_us"	/* RT throttling's one name */

extern const char *const jtr_watch_cats[JTR_W_NCATS];
/* upper bounds of the duration histogram's buckets, ns (the last is +Inf) */
extern const uint64_t jtr_watch_bounds_ns[JTR_WATCH_BUCKETS - 1];

struct jtr_watch_cell {
	char name[JTR_WATCH_NAME_LEN];
	char group[JTR_WATCH_GROUP_LEN];	/* a task's container, an IPI's
						   sender's comm ("": none) */
	union {
		struct jtr_wcell v;
		struct {
			uint64_t count;		/* interruptions caused by this name */
			uint64_t ns;		/* their time */
			uint64_t events;	/* kernel events of this name */
		};
	};
};

/* the names of one CPU and category, as printed */
struct jtr_watch_cat_acct {
	struct jtr_watch_cell *cell;	/* names + 1 cells; the last: "other" */
	int n;
};

/* one interruption, as a dump's outliers.csv lists it */
struct jtr_watch_intr {
	uint64_t start_ns, length_ns;
	uint16_t cpu;
	uint8_t cat;
	char name[JTR_WATCH_NAME_LEN];
};

struct jtr_watch_cpu {
	int cpu;
	struct jtr_wcpu st;		/* the model's state (tests), or a copy of the
					 * kernel side's taken at a state line */
	struct jtr_watch_cat_acct cat[JTR_W_NCATS];
	/* the tracer's BPF programs on this CPU so far: their runs, and their
	 * time estimated from the runs they timed (set by the tracer before a
	 * state line, when jtr_watch.bpf_timed) */
	uint64_t bpf_runs, bpf_ns;
};

struct jtr_watch {
	int ncpus;
	int names;			/* names kept per CPU and category */
	struct jtr_wcfg cfg;		/* the model's settings: the application, ... */
	uint32_t app_pid[JTR_WATCH_APPS];	/* matched by the kernel side: JTR_FL_APP */
	int napp_pid;
	uint32_t app_tid[JTR_WATCH_TIDS];	/* its tasks when the watch began */
	int napp_tid;
	struct jtr_watch_cpu *cpus;
	bool bpf_timed;			/* cpus[].bpf_runs and bpf_ns are set: the
					 * programs time themselves (--prog-stats
					 * sampled) and were read; the state line
					 * leaves them out otherwise */
	const char (*vec_names)[48];		/* the tracer's irq_vectors kinds */
	int nvecs;
	/* the flight recorder: a region of rec_slots records per watched CPU
	 * (its head: the CPU's st.rec_head) and one more for the records of
	 * other CPUs (*rec_shared); the kernel side's map, or the tests' memory */
	struct jtr_ev *rec;
	size_t rec_slots;
	uint64_t *rec_shared, rec_shared_own;
	/* the interruptions of at least JTR_WATCH_KEEP_MIN_NS, kept_slots per
	 * CPU (its head: st.kept_head) */
	struct jtr_wkept *kept;
	size_t kept_slots;
	bool own;			/* rec and kept are allocated here (tests) */
	bool virtual;			/* counting what the kernel side will count
					 * (a state line's flush): nothing kept */
	uint64_t dump_after_ns;		/* how long after the trigger a dump is cut */
	uint64_t dump_due_ns;		/* event time a pending dump is cut at; 0: none */
	uint64_t last_dump_end_ns;
	struct jtr_watch_intr trigger;	/* the interruption that asked for the pending dump */
	/* a task's cgroups by pid (its key's group), and their container label
	 * ("": none); NULL: no labels */
	void (*ids_of)(const void *ctx, uint32_t pid, uint64_t *v2, uint64_t *v1);
	const char *(*label_of)(const void *ctx, uint64_t v2, uint64_t v1);
	const void *group_ctx;
	uint64_t dumps, dumps_skipped;
	struct jtr_wkey key;		/* the model's room for a key (W_KEYBUF) */
};

/* jtr_watch_init - tables of @names names per category for the CPUs in @cpus
 * (each < JTR_TRACE_MAX_CPUS); with @own, a recorder of @rec_records records
 * per region and @kept interruptions per CPU in memory of its own (the tests;
 * jtr-trace points them at the kernel side's maps); 0 or -ENOMEM */
int jtr_watch_init(struct jtr_watch *w, const int *cpus, int ncpus, int names,
		   size_t rec_records, size_t kept, bool own);
void jtr_watch_free(struct jtr_watch *w);

/* jtr_watch_app_comm, _pid, _tid - the application: the tasks of comm
 * @comm (its first 15 characters), of process @pid (the kernel side flags
 * them), or task @tid found running when the watch began; -ENOSPC when full */
int jtr_watch_app_comm(struct jtr_watch *w, const char *comm);
int jtr_watch_app_pid(struct jtr_watch *w, uint32_t pid);
int jtr_watch_app_tid(struct jtr_watch *w, uint32_t tid);

/* jtr_watch_event - the model on one record, as the kernel side runs it
 * where the record happens (tests: records in time order) */
void jtr_watch_event(struct jtr_watch *w, const struct jtr_ev *e);

/* jtr_watch_flush - end the interrupts whose exits are all seen (before a state) */
void jtr_watch_flush(struct jtr_watch *w);

/* jtr_watch_flush_at - end the interrupts whose exits are all seen and that
 * no softirq can join any more at @now */
void jtr_watch_flush_at(struct jtr_watch *w, uint64_t now);

/* jtr_watch_oldest - the time before which the recorder lost records (a
 * region that has wrapped around); 0: none lost */
uint64_t jtr_watch_oldest(const struct jtr_watch *w);

/* jtr_watch_end - the watch ends at @ts: the waits still open are counted up
 * to it */
void jtr_watch_end(struct jtr_watch *w, uint64_t ts);

/* jtr_watch_clear - empty the name tables (before they are filled again
 * from the kernel side's, jtr_watch_add) */
void jtr_watch_clear(struct jtr_watch *w);

/* jtr_watch_add - the counters of kernel-side key @k into the name tables */
void jtr_watch_add(struct jtr_watch *w, const struct jtr_wkey *k, const struct jtr_wcell *v);

/* jtr_watch_vectors - the tracer's irq_vectors kinds (@n of them): their
 * names, and the category of each (local_timer: the tick; reschedule,
 * call_function(_single), irq_work: IPIs; the rest: hardirq) */
void jtr_watch_vectors(struct jtr_watch *w, const char (*names)[48], int n);

/* jtr_watch_slot - the index of @cpu's accounting, or -1 */
int jtr_watch_slot(const struct jtr_watch *w, uint64_t cpu);

/* jtr_watch_trigger - an interruption of key @k, @len ns from @start, counted:
 * a dump's trigger if it is one (at least --dump-above, none pending, not in
 * the last dump) */
void jtr_watch_trigger(struct jtr_watch *w, const struct jtr_wkey *k, uint64_t start,
		       uint64_t len);

/* jtr_watch_state - one line of JSON with every table (docs/fleet.md) */
void jtr_watch_state(const struct jtr_watch *w, FILE *f, int64_t now_ns, uint64_t dropped,
		     uint64_t cpu_ns);

/* jtr_watch_records - call @fn for each recorded record with ts in [from,
 * to], in time order (the regions merged); how many */
size_t jtr_watch_records(const struct jtr_watch *w, uint64_t from, uint64_t to,
			 void (*fn)(void *arg, const struct jtr_ev *e), void *arg);

/* jtr_watch_outliers - write the kept interruptions of at least @min_ns with a
 * start in [from, to] as an outlier log (cpu,start_ns,length_ns,label), in
 * time order; their number, or -1 on a write error */
long jtr_watch_outliers(const struct jtr_watch *w, FILE *f, uint64_t from, uint64_t to,
			uint64_t min_ns);

/* jtr_watch_key_name - the name and group a key is printed with */
void jtr_watch_key_name(const struct jtr_watch *w, const struct jtr_wkey *k, char *name,
			char *group);

/* jtr_watch_task_name - a task's cause name: its full comm (kworker/1:2), or
 * "pid N" when it has none (trace/causes.py task()) */
void jtr_watch_task_name(char *out, const char *comm, uint32_t pid, size_t n);

#endif
