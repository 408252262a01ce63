/* SPDX-License-Identifier: GPL-2.0-only */
/* watch.h - jtr watch's accounting: the tracer's events turned, as they are
 * drained, into the interruptions of the application on the watched CPUs
 * (what took its CPU from it, by cause), counted in fixed tables, and a
 * flight recorder of the last events for a dump. Everything is allocated once
 * at the start: memory stays bounded however long the watch runs.
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
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "trace.h"

#define JTR_WATCH_NAME_LEN	32
#define JTR_WATCH_GROUP_LEN	80	/* cgroups.h JTR_CGROUP_LABEL */
#define JTR_WATCH_NAMES		32	/* default names kept per CPU and category; then "other" */
#define JTR_WATCH_DEPTH		8	/* interrupts nested in one another */
#define JTR_WATCH_BUCKETS	17	/* 16 upper bounds (1 us .. 100 ms) and +Inf */
#define JTR_WATCH_KEEP_MIN_NS	1000	/* interruptions kept for a dump's outliers.csv */
#define JTR_WATCH_JOIN_NS	20000	/* a softirq this soon after an interrupt is part of it */
#define JTR_WATCH_APPS		JTR_TRACE_MAX_APPS	/* --app comms, and PIDs */
#define JTR_WATCH_TIDS		4096	/* --app tasks found running when the watch began */
#define JTR_WATCH_RUNNERS	16	/* comms whose run time is kept per CPU (no --app) */
#define JTR_WATCH_RT_PRIO_END	100	/* the first prio that is not real-time */
#define JTR_WATCH_SETTLE_NS	1000000000ULL	/* without --app: nothing counted before */
#define JTR_WATCH_THROTTLE_NAME	"sched_rt_runtime_us"	/* RT throttling's one name */

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

extern const char *const jtr_watch_cats[JTR_W_NCATS];
/* upper bounds of the duration histogram's buckets, ns (the last is +Inf) */
extern const uint64_t jtr_watch_bounds_ns[JTR_WATCH_BUCKETS - 1];

struct jtr_watch_cell {
	char name[JTR_WATCH_NAME_LEN];
	char group[JTR_WATCH_GROUP_LEN];	/* a task's container, an IPI's
						   sender's comm ("": none) */
	uint64_t count;			/* interruptions caused by this name */
	uint64_t ns;			/* their time */
	uint64_t events;		/* kernel events of this name (interruptions or not) */
};

struct jtr_watch_cat_acct {
	struct jtr_watch_cell *cell;	/* names + 1 cells; the last: "other" */
	int n;
	uint64_t hist[JTR_WATCH_BUCKETS];	/* interruptions by duration */
	uint64_t count, ns;
};

struct jtr_watch_ctx {
	uint8_t kind;			/* JTR_EV_IRQ_ENTRY, _SOFTIRQ_ENTRY or _VEC_ENTRY */
	uint8_t cat;
	uint64_t key;			/* irq or vector number: the exit's match */
	uint64_t entry_ns, child_ns;
	char name[JTR_WATCH_NAME_LEN];
	char group[JTR_COMM_LEN];	/* an IPI's sender ("": not seen) */
};

/* one interruption, as a dump's outliers.csv lists it */
struct jtr_watch_intr {
	uint64_t start_ns, length_ns;
	uint16_t cpu;
	uint8_t cat;
	char name[JTR_WATCH_NAME_LEN];
};

/* the default rule's run time of one comm on a CPU */
struct jtr_watch_runner {
	char comm[JTR_COMM_LEN];
	uint64_t ns;
};

struct jtr_watch_cpu {
	int cpu;
	struct jtr_watch_cat_acct cat[JTR_W_NCATS];
	struct jtr_watch_ctx stack[JTR_WATCH_DEPTH];
	int depth;
	bool counting;			/* the open interrupt interrupts the application */
	uint64_t intr_start, intr_end;	/* the open interrupt; end: its last exit */
	uint8_t best_cat;		/* the open interrupt's cause so far */
	uint64_t best_self;
	char best_name[JTR_WATCH_NAME_LEN];
	char best_group[JTR_COMM_LEN];
	/* the task on the CPU */
	int64_t running;		/* its pid (0: idle); -1: not seen yet */
	char comm[JTR_COMM_LEN];	/* "": not switched to since the watch began */
	bool app;			/* with --app: it is one of the application's */
	uint64_t last_switch;		/* its slice began (or the watch did) */
	uint64_t settled;		/* without --app: interruptions count from here */
	int run_idx;			/* its row in run[], or -1 */
	/* without --app: run time by comm, the Space-Saving way (a new comm in a
	 * full table takes the smallest row's place and time), so a comm that
	 * has run longest is always there; lead is the longest */
	struct jtr_watch_runner run[JTR_WATCH_RUNNERS];
	int nrun, lead;
	uint64_t app_ns;		/* the application's slices that ended here */
	char app_comm[JTR_COMM_LEN];	/* with --app: its last task seen here */
	/* the application waits */
	bool waiting;			/* one of its tasks is runnable here, not running */
	uint32_t victim;		/* that task */
	char victim_comm[JTR_COMM_LEN];
	bool win_open;			/* another task (or RT throttling) has the CPU */
	uint8_t win_cat;
	uint64_t win_start;
	char win_name[JTR_WATCH_NAME_LEN];	/* what took the CPU */
	char win_group[JTR_WATCH_GROUP_LEN];	/* its container, a task's */
};

struct jtr_watch {
	int ncpus;
	int names;			/* names kept per CPU and category */
	/* the application (--app); none: the default rule */
	char app_comm[JTR_WATCH_APPS][JTR_COMM_LEN];
	int napp_comm;
	uint32_t app_pid[JTR_WATCH_APPS];	/* matched by the kernel side: JTR_FL_APP */
	int napp_pid;
	uint32_t app_tid[JTR_WATCH_TIDS];	/* its tasks when the watch began */
	int napp_tid;
	uint64_t start_ns;		/* the watch began (0: at each CPU's first event) */
	uint64_t settle_ns;		/* JTR_WATCH_SETTLE_NS (tests set 0) */
	struct jtr_watch_cpu *cpus;
	int16_t slot[JTR_TRACE_MAX_CPUS];	/* CPU -> index in cpus, -1: not watched */
	const char (*vec_names)[48];		/* the tracer's irq_vectors kinds */
	int nvecs;
	/* the flight recorder: the last rec_cap records */
	struct jtr_ev *rec;
	size_t rec_cap, rec_next, rec_n;
	/* the last interruptions of at least JTR_WATCH_KEEP_MIN_NS */
	struct jtr_watch_intr *intr;
	size_t intr_cap, intr_next, intr_n;
	uint64_t dump_above_ns;		/* 0: no dumps */
	uint64_t keep_ns;		/* a dump's span */
	uint64_t dump_after_ns;		/* how long after the trigger a dump is cut */
	uint64_t dump_due_ns;		/* event time a pending dump is cut at; 0: none */
	uint64_t last_dump_end_ns;
	struct jtr_watch_intr trigger;	/* the interruption that asked for the pending dump */
	/* the container label of a task by pid ("": none); NULL: no labels */
	const char *(*group_of)(const void *ctx, uint32_t pid);
	const void *group_ctx;
	uint64_t records, dumps, dumps_skipped, longest_ns;
};

/* jtr_watch_init - tables of @names names per category for the CPUs in @cpus
 * (each < JTR_TRACE_MAX_CPUS), a recorder of @rec_records records and
 * @intr_keep interruptions; 0 or -ENOMEM */
int jtr_watch_init(struct jtr_watch *w, const int *cpus, int ncpus, int names,
		   size_t rec_records, size_t intr_keep);
void jtr_watch_free(struct jtr_watch *w);

/* jtr_watch_app_comm, _pid, _tid - the application: the tasks of comm
 * @comm (its first 15 characters), of process @pid (the kernel side flags
 * them), or task @tid found running when the watch began; -ENOSPC when full */
int jtr_watch_app_comm(struct jtr_watch *w, const char *comm);
int jtr_watch_app_pid(struct jtr_watch *w, uint32_t pid);
int jtr_watch_app_tid(struct jtr_watch *w, uint32_t tid);

/* jtr_watch_event - account one record (in drain order) and keep it */
void jtr_watch_event(struct jtr_watch *w, const struct jtr_ev *e);

/* jtr_watch_flush - end the interrupts whose exits are all seen (before a state) */
void jtr_watch_flush(struct jtr_watch *w);

/* jtr_watch_end - the watch ends at @ts: the waits still open are counted up
 * to it */
void jtr_watch_end(struct jtr_watch *w, uint64_t ts);

/* jtr_watch_state - one line of JSON with every table (docs/fleet.md) */
void jtr_watch_state(const struct jtr_watch *w, FILE *f, int64_t now_ns, uint64_t dropped,
		     uint64_t cpu_ns);

/* jtr_watch_dump_range - the records of the pending dump: the recorder's
 * positions [*first, *first + *n) (modulo rec_cap) with ts in [from, to] */
void jtr_watch_dump_range(const struct jtr_watch *w, uint64_t from, uint64_t to, size_t *first,
			  size_t *n);

/* jtr_watch_outliers - write the kept interruptions of at least @min_ns with a
 * start in [from, to] as an outlier log (cpu,start_ns,length_ns,label); their
 * number, or -1 on a write error */
long jtr_watch_outliers(const struct jtr_watch *w, FILE *f, uint64_t from, uint64_t to,
			uint64_t min_ns);

/* jtr_watch_task_name - a task's cause name: its full comm (kworker/1:2), or
 * "pid N" when it has none (trace/causes.py task()) */
void jtr_watch_task_name(char *out, const char *comm, uint32_t pid, size_t n);

#endif
