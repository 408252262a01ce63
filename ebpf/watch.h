/* watch.h - jtr watch's accounting: the tracer's events turned, as they are
 * drained, into the interruptions of the watched CPUs (what the running task
 * lost, by cause), counted in fixed tables, and a flight recorder of the last
 * events for a dump. Everything is allocated once at the start: memory stays
 * bounded however long the watch runs.
 *
 * An interruption of a CPU is time a task (not the idle task) was kept from
 * running: an interrupt (hardirq, softirq outside one, vector: tick, IPI, other)
 * from its first entry to the exit that leaves no interrupt open, whose cause
 * is the nested interrupt with the largest self time; an NMI (its handler's
 * time); or a preemption: a switch to a task while the task switched out is
 * still runnable, counted for the task that took the CPU, its comm up to any
 * '/' (kworker/1:2 is "kworker"). From it until the task it preempted runs
 * again (or the CPU goes idle, or that task moves away), the time of every
 * other task's slice is charged to its task, and the whole wait is one
 * duration in the histogram. So a spinner that wakes N times on an
 * application's CPU is N interruptions, whatever else runs there. Interrupts
 * that come while the CPU is idle or during such a wait are counted as kernel
 * events, not as interruptions.
 * Page faults have no exit tracepoint: they are counted, without a duration.
 *
 * The category words are attribution's (analysis/jtrpy/vocab.py WATCH_CATEGORIES;
 * test_parity compares them).
 */
#ifndef JTR_WATCH_H
#define JTR_WATCH_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "trace.h"

#define JTR_WATCH_NAME_LEN	32
#define JTR_WATCH_NAMES		32	/* default names kept per CPU and category; then "other" */
#define JTR_WATCH_DEPTH		8	/* interrupts nested in one another */
#define JTR_WATCH_BUCKETS	17	/* 16 upper bounds (1 us .. 100 ms) and +Inf */
#define JTR_WATCH_KEEP_MIN_NS	1000	/* interruptions kept for a dump's outliers.csv */
#define JTR_WATCH_JOIN_NS	20000	/* a softirq this soon after an interrupt is part of it */

enum jtr_watch_cat {
	JTR_W_TICK,		/* "timer tick": the local timer vector */
	JTR_W_IPI,		/* "IPI": reschedule, call_function(_single), irq_work */
	JTR_W_HARDIRQ,		/* "hardirq": device IRQs and other vectors */
	JTR_W_SOFTIRQ,		/* "softirq" */
	JTR_W_TASK,		/* "task preemption" */
	JTR_W_PF,		/* "page fault" (counted, no duration) */
	JTR_W_NMI,		/* "NMI" */
	JTR_W_NCATS
};

extern const char *const jtr_watch_cats[JTR_W_NCATS];
/* upper bounds of the duration histogram's buckets, ns (the last is +Inf) */
extern const uint64_t jtr_watch_bounds_ns[JTR_WATCH_BUCKETS - 1];

struct jtr_watch_cell {
	char name[JTR_WATCH_NAME_LEN];
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
	struct jtr_watch_cat_acct cat[JTR_W_NCATS];
	struct jtr_watch_ctx stack[JTR_WATCH_DEPTH];
	int depth;
	bool counting;			/* the open interrupt interrupts a task */
	uint64_t intr_start, intr_end;	/* the open interrupt; end: its last exit */
	uint8_t best_cat;		/* the open interrupt's cause so far */
	uint64_t best_self;
	char best_name[JTR_WATCH_NAME_LEN];
	int64_t running;		/* pid on the CPU; -1: not seen yet */
	uint64_t last_switch;
	bool win_open;			/* a preempted task (the victim) waits */
	uint32_t victim;
	uint64_t win_start;
	char win_name[JTR_WATCH_NAME_LEN];	/* the task that preempted it */
};

struct jtr_watch {
	int ncpus;
	int names;			/* names kept per CPU and category */
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
	uint64_t records, dumps, dumps_skipped, longest_ns;
};

/* jtr_watch_init - tables of @names names per category for the CPUs in @cpus
 * (each < JTR_TRACE_MAX_CPUS), a recorder of @rec_records records and
 * @intr_keep interruptions; 0 or -ENOMEM */
int jtr_watch_init(struct jtr_watch *w, const int *cpus, int ncpus, int names,
		   size_t rec_records, size_t intr_keep);
void jtr_watch_free(struct jtr_watch *w);

/* jtr_watch_event - account one record (in drain order) and keep it */
void jtr_watch_event(struct jtr_watch *w, const struct jtr_ev *e);

/* jtr_watch_flush - end the interrupts whose exits are all seen (before a state) */
void jtr_watch_flush(struct jtr_watch *w);

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

/* jtr_watch_task_name - @comm up to any '/' (kworker/1:2 -> kworker) */
void jtr_watch_task_name(char *out, const char *comm, size_t n);

#endif
