/* SPDX-License-Identifier: GPL-2.0-only */
/* tracer.h - jtr-trace's options and state, which the files of the one
 * program share: trace.c (the tool: options, main, the drain loop) fills
 * them, programs.c loads the BPF side into them, trace_json.c writes
 * trace.json from them, watch_run.c runs --watch with them.
 *
 * A header of its own so that each of those files takes the state it works
 * on as one pointer, as the code did when it was one file; nothing outside
 * jtr-trace includes it (watch.c, the accounting, knows nothing of it).
 */
#ifndef JTR_TRACER_H
#define JTR_TRACER_H
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>

#include "jtr_cli.h"
#include "cgroups.h"
#include "jtr_out.h"
#include "ksyms.h"
#include "trace.h"
#include "watch.h"

#define TRACER_NTPS 22		/* typed tracepoints (programs.c's table) */

enum prog_kind { PROGS_AUTO, PROGS_BTF, PROGS_RAW };
/* --prog-stats: what times the programs (trace.json's programs) */
enum prog_stats { STATS_OFF, STATS_SAMPLED, STATS_KERNEL };
/* --floor-only: jtr's programs left out, on their tracepoints only the empty
 * programs (floor_*) or only those that read the clock once (clock_*) */
enum floor_only { FLOOR_NONE, FLOOR_EMPTY, FLOOR_CLOCK };

struct trace_opts {
	cpu_set_t cpus;
	uint64_t duration_ns;		/* 0: until a signal */
	uint64_t buffer_bytes;
	uint64_t drain_ns;
	int consumer_cpu;		/* -1: choose */
	enum prog_kind progs;
	enum prog_stats prog_stats;
	bool stats_given;		/* --prog-stats or --no-prog-stats */
	bool floor;			/* --floor: the floor programs beside jtr's */
	enum floor_only floor_only;	/* --floor-only */
	bool wakeup;
	bool verbose;
	bool watch;			/* jtr watch: account and record, no log */
	uint64_t state_ns;		/* --watch: how often the state is printed */
	int state_fd;			/* --state-fd: where it is kept instead (-1: stdout) */
	uint64_t dump_above_ns;		/* 0: no dumps */
	uint64_t keep_ns;		/* a dump's span */
	uint64_t recorder_bytes;
	uint64_t dump_max;
	int names;			/* --watch: names kept per CPU and category */
	/* --watch --app: the application's comms and PIDs */
	char app_comm[JTR_WATCH_APPS][JTR_COMM_LEN];
	int napp_comm;
	uint32_t app_pid[JTR_WATCH_APPS];
	int napp_pid;
	/* --func BINARY:SYMBOL or --usdt BINARY:PROVIDER:START,END (jtr run app):
	 * every call timed, in --pid's process */
	char func_path[4096];
	char func_sym[400];		/* the function; --usdt: "PROVIDER:START,END" */
	bool usdt;
	char usdt_provider[128], usdt_start[128], usdt_end[128];
	int func_pid;			/* -1: every process that maps the binary */
	uint64_t threshold_ns;		/* --threshold; 0: the warm-up's rule */
	bool threshold_given;
	uint64_t warmup;		/* calls per CPU before recording */
	uint64_t max_outliers;
};

struct jtr_probe;
struct trace_bpf;
struct bpf_link;
struct ring_buffer;
struct calls;

struct tracer {
	struct jtr_probe *p;
	struct trace_opts *o;
	struct trace_bpf *skel;
	struct bpf_link **links;
	size_t nlinks;
	struct ring_buffer **rbs;	/* one consumer per ring (progs_consume) */
	int *ring_fds;			/* the rings made for the rings map (programs.c) */
	int nring_fds;
	int64_t pass_end_ns;		/* a drain pass leaves a ring here (0: never) */
	uint64_t pass_records;		/* records this pass has taken */
	int pass_first;			/* the ring a pass begins with */
	uint64_t ring_bytes;		/* the size of each */
	const char *kind;		/* "tp_btf" or "raw_tp" */
	char vec_names[JTR_TRACE_MAX_VECS][48];
	int nvecs;
	char missing[TRACER_NTPS + 4][48];	/* tracepoints this kernel lacks */
	int nmissing;
	char left_out[2][48];		/* tracepoints not attached on purpose (programs.c) */
	int nleft_out;
	struct jtr_afile log;
	uint64_t records;
	uint64_t outside;		/* records from while programs were attaching or detaching,
					 * or past the log's bound */
	uint64_t log_max;		/* the log's bound, bytes: JTR_TRACE_LOG_MAX */
	int64_t log_end_ns;		/* the log reached it: every CPU's records are in it up
					 * to here (0: it did not) */
	int64_t consumed_to_ns;		/* records made before this are drained */
	int64_t win_start_ns, win_end_ns;	/* every program attached; end 0: not yet */
	uint64_t setup_cpu_ns, tracing_cpu_ns;	/* this process's CPU time: loading and
						   attaching, then tracing and draining */
	int write_err;
	struct jtr_addrs addrs;
	struct jtr_cgroups groups;	/* the cgroups of the tasks records describe */
	struct jtr_trace_counts total;
	int64_t steal_from_rq;		/* the kvm steal counter is read (JTR_EV_STEAL): where */
	int consumer_cpu;		/* the draining thread's CPU; -1: not pinned */
	int consumer_nice;		/* the draining thread's nice value */
	char steal_why[160];		/* why not, when it is not */
	char last_libbpf[512];
	struct jtr_watch *watch;	/* --watch: the accounting, instead of the log */
	int64_t last_state_ns;		/* --watch: the last state line */
	uint64_t state_seq;		/* --state-fd: its sequence number (odd: changing) */
	struct calls *calls;		/* --func: the calls' series (calls.c) */
	bool app_gone;			/* --func --pid: the process exited */
	bool calls_denied;		/* --func: no right to make uprobes (programs.c) */
};

/* process_cpu_ns - CPU time of this process so far, user and system, all threads */
static inline uint64_t process_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * JTR_NS_PER_S +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
}

#endif
