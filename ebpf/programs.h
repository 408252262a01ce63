/* SPDX-License-Identifier: GPL-2.0-only */
/* programs.h - the tracer's BPF side from user space: tracefs, which program
 * each tracepoint gets (tp_btf, or its raw_tp twin), the irq_vectors pairs
 * this kernel has, load, attach, detach and unload, the per-CPU counters,
 * and whether the host's steal counter can be read.
 *
 * Its own file because it is the one part of jtr-trace that speaks libbpf
 * and the skeleton: trace.c decides when (options, the drain loop), this
 * says how. libbpf-tools' tools keep this in main(); here the fallback, the
 * irq_vectors discovery and the parallel detach make it a module.
 */
#ifndef JTR_PROGRAMS_H
#define JTR_PROGRAMS_H
#include <stddef.h>
#include <stdint.h>

#include "jtr_err.h"
#include "tracer.h"

/* progs_libbpf_print - libbpf's messages: the last warning kept in
 * t->last_libbpf for error messages, every message on stderr with -v */
void progs_libbpf_print(struct tracer *t);

/* progs_tracefs_ready - make sure tracefs is mounted; mount it if not */
int progs_tracefs_ready(struct jtr_err *e);

/* progs_steal_check - can the kernel side read the host's steal counter? Sets
 * t->steal_from_rq (steal_time's distance from runqueues in a CPU's per-CPU
 * area), or t->steal_why to the reason it cannot */
void progs_steal_check(struct tracer *t);

/* progs_start - open, configure, load and attach with @kind programs (PROGS_BTF
 * or PROGS_RAW), the ring buffer drained into @on_event(t, record, size);
 * 0, or -errno with @e saying why and nothing left loaded */
int progs_start(struct tracer *t, enum prog_kind kind,
		int (*on_event)(void *ctx, void *data, size_t size), struct jtr_err *e);

/* progs_detach - remove every program from its tracepoint (the ring buffer
 * and the counters stay readable) */
void progs_detach(struct tracer *t);

/* progs_consume - a drain pass: each ring's records taken (on_event) until
 * none is left or, @end_ns past (0: no end), a ring's turn ends with records
 * left. 0: every ring emptied, 1: a turn ended at @end_ns, or -errno (the
 * log cannot be written); *@records (may be NULL): the records taken */
int progs_consume(struct tracer *t, int64_t end_ns, uint64_t *records);

/* progs_stop - detach and unload */
void progs_stop(struct tracer *t);

/* progs_forget_task - task @pid's groups said again at its next switch */
void progs_forget_task(struct tracer *t, uint32_t pid);

/* progs_read_counts - sum the per-CPU counters into t->total; 0 or -errno */
int progs_read_counts(struct tracer *t);

/* progs_kept_entries - the softirq, hrtimer and vector entries the CPUs'
 * counters still keep (entered, not left: trace.bpf.c softirq_pair,
 * hrtimer_pair, vector_pair), once the programs are detached, as records
 * in *@out (malloc'd; the caller frees): how many (0 when none or the
 * counters cannot be read) */
int progs_kept_entries(struct tracer *t, struct jtr_ev **out);

/* progs_runs - the runs of the program named @name on every CPU, counted
 * and sampled by the program itself (--prog-stats sampled) into *@sum; 0 or
 * -errno (-ENOENT: not one of jtr's programs) */
int progs_runs(struct tracer *t, const char *name, struct jtr_prog_run *sum);

/* progs_cost_by_cpu - the runs of all the programs on each CPU (--prog-stats
 * sampled) into @runs[cpu] and their time, estimated from each program's
 * timed runs, into @ns[cpu], for CPUs below @ncpus; 0 or -errno */
int progs_cost_by_cpu(struct tracer *t, uint64_t *runs, uint64_t *ns, int ncpus);

/* progs_sum - all types of one counter array (t->total.events or .dropped) */
uint64_t progs_sum(const unsigned long long *c);

#endif
