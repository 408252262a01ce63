/* SPDX-License-Identifier: GPL-2.0-only */
/* trace.h - types shared by the kernel side (trace.bpf.c) and the user side
 * (trace.c) of jtr's kernel-event tracer, and the on-disk event log.
 *
 * The event log (events.bin) is a 64-byte header followed by records of
 * exactly JTR_EV_SIZE (64) bytes, little-endian, as the kernel side wrote
 * them. docs/attribution.md documents every field per type; the Python
 * reader is analysis/jtrpy/trace/events.py (analysis/tests/test_parity.py
 * checks that it declares the same layout). Names that need /proc/kallsyms or the
 * list of irq_vectors events are resolved by the tracer when it stops and
 * written to trace.json beside the log, so a log can be read on another
 * machine.
 */
#ifndef JTR_TRACE_H
#define JTR_TRACE_H

#define JTR_EV_MAGIC	"JTREVT1"	/* 8 bytes with the NUL */
#define JTR_EV_VERSION	1
#define JTR_EV_SIZE	64
#define JTR_EV_MIN	32	/* a record in the ring without str/x: the kernel
				 * side writes only what a type carries (trace.bpf.c
				 * JTR_EV_BYTES), the user side the whole 64 */
#define JTR_TRACE_MAX_CPUS 1024
#define JTR_TRACE_MAX_VECS 32		/* irq_vectors entry/exit pairs */
#define JTR_TRACE_MAX_APPS 16		/* jtr watch --app PIDs the kernel side matches */
#define JTR_COMM_LEN	16

/* the typed tracepoints, each with a tp_btf and a raw_tp program (the
 * user side's table, programs.c, and the kernel side's program ids) */
#define JTR_TPS(X)								\
	X(irq, irq_handler_entry) X(irq, irq_handler_exit)			\
	X(irq, softirq_raise) X(irq, softirq_entry) X(irq, softirq_exit)	\
	X(nmi, nmi_handler)							\
	X(sched, sched_switch) X(sched, sched_wakeup) X(sched, sched_waking)	\
	X(sched, sched_migrate_task)						\
	X(exceptions, page_fault_user) X(exceptions, page_fault_kernel)		\
	X(workqueue, workqueue_execute_start) X(workqueue, workqueue_execute_end) \
	X(timer, hrtimer_expire_entry) X(timer, hrtimer_expire_exit)		\
	X(timer, timer_expire_entry) X(timer, timer_expire_exit)		\
	X(timer, tick_stop)							\
	X(ipi, ipi_send_cpu) X(ipi, ipi_send_cpumask) X(csd, csd_queue_cpu)

/* each program's place in the run counters (struct jtr_prog_run, the
 * prog_runs map): a typed tracepoint's (either twin), then each irq_vectors
 * pair's entry and exit, then the application's four probes */
#define JTR_TP_ID(cat, name) JTR_P_##name,
enum jtr_prog_id {
	JTR_TPS(JTR_TP_ID)
	JTR_P_VEC,				/* + 2 k entry, + 2 k + 1 exit */
	JTR_P_APP = JTR_P_VEC + 2 * JTR_TRACE_MAX_VECS,	/* app_entry, app_exit,
							 * app_usdt_start, app_usdt_end */
	JTR_NPROGS = JTR_P_APP + 4
};
#undef JTR_TP_ID

/* one program's runs on one CPU, counted by the program itself (--prog-stats
 * sampled, the default): every run counted, one in JTR_TIME_EVERY timed
 * between two clock reads. The kernel's own statistics (--prog-stats kernel)
 * read the clock twice in every run of every BPF program on the machine */
#define JTR_TIME_EVERY	64
#define JTR_TIMED_MAX_NS 50000	/* a timed run longer than this is not counted */
struct jtr_prog_run {
	unsigned long long runs;
	unsigned long long timed;	/* runs timed */
	unsigned long long timed_ns;	/* their time */
};

/* record types; keep numbers stable, they are in every log */
enum jtr_ev_type {
	JTR_EV_IRQ_ENTRY = 1,	/* a=irq, str=action name */
	JTR_EV_IRQ_EXIT,	/* a=irq, b=handler return */
	JTR_EV_SOFTIRQ_RAISE,	/* a=vector (0 HI .. 9 RCU) */
	JTR_EV_SOFTIRQ_ENTRY,	/* a=vector */
	JTR_EV_SOFTIRQ_EXIT,	/* a=vector */
	JTR_EV_VEC_ENTRY,	/* a=vector number, b=kind (index into trace.json "vectors");
				 * an IPI whose send was seen (ipi_send_cpu, _cpumask):
				 * flags JTR_VEC_SENDER, str[0..15]=the sender's comm,
				 * x[2]=the callback (JTR_VEC_SITE: the callsite, a
				 * reschedule has no callback), x[3]=the sender's pid |
				 * its CPU<<32 */
	JTR_EV_VEC_EXIT,	/* a=vector number, b=kind */
	JTR_EV_NMI,		/* a=handler address, b=delta_ns; flags=handled; ts = end of handler */
	JTR_EV_SWITCH,		/* a=prev_pid | next_pid<<32, b=prev_prio | next_prio<<16 |
				 * prev_state<<32; flags: JTR_SW_PREEMPTED prev preempted
				 * (runnable; clear: blocked), JTR_FL_APP prev and
				 * JTR_FL_APP_NEXT next belong to an --app process;
				 * str=prev_comm[16] next_comm[16] */
	JTR_EV_WAKEUP,		/* a=pid, b=target_cpu | prio<<32, str=comm; flags:
				 * JTR_FL_APP the task belongs to an --app process */
	JTR_EV_WAKING,		/* a=pid, b=target_cpu | prio<<32, str=comm; flags: JTR_FL_APP */
	JTR_EV_MIGRATE,		/* a=pid, b=orig_cpu | dest_cpu<<32, str=comm; flags: JTR_FL_APP */
	JTR_EV_PF_USER,		/* a=address, b=ip, x[0]=error_code */
	JTR_EV_PF_KERNEL,	/* a=address, b=ip, x[0]=error_code */
	JTR_EV_WQ_START,	/* a=work, b=function address */
	JTR_EV_WQ_END,		/* a=work (match the start by it) */
	JTR_EV_HRTIMER_ENTRY,	/* a=hrtimer, b=function address, x[0]=expires (ns,
				 * CLOCK_MONOTONIC for a monotonic timer), x[1]=soft
				 * expiry, x[2]=the expiry code's now */
	JTR_EV_HRTIMER_EXIT,	/* a=hrtimer */
	JTR_EV_TIMER_ENTRY,	/* a=timer_list, b=function address */
	JTR_EV_TIMER_EXIT,	/* a=timer_list */
	JTR_EV_STEAL,		/* a=the host's steal ns so far (kvm steal_time), b=the
				 * value the CPU's previous look saw; flags=1: the CPU's
				 * first look (b = a); written before the event that looked.
				 * Looks: VEC_ENTRY, IRQ_ENTRY, NMI and SWITCH records */
	JTR_EV_TASK,		/* a task's groups, once per task (again when they
				 * change), written before the switch that brings it
				 * in: a=pid | tgid<<32, b=its cgroup v2 id (the
				 * default hierarchy's kernfs id: the folder's inode
				 * number), x[2]=its cgroup v1 id in the memory
				 * controller's hierarchy (0: none), str[0..15]=comm */
	JTR_EV_CALL,		/* jtr run app: a call of the timed function returned:
				 * ts=its return, a=its entry (ns), b=the CPU at
				 * entry | the CPU at return<<32, pid=the thread;
				 * written on the CPU it returned on, traced or not */
	JTR_EV_BLOCK,		/* jtr run app: a thread of the application is about
				 * to leave its CPU blocked (written before the switch):
				 * pid=the thread, a=the system call it blocks in
				 * (orig_ax; JTR_NO_SYSCALL: not in one), b=its state */
	JTR_EV_TICK_STOP,	/* timer:tick_stop, when what it says on the CPU
				 * changes: a=1 the tick stopped (0: it could not),
				 * b=what kept it (a TICK_DEP_MASK_* bit: 1 POSIX_TIMER,
				 * 2 PERF_EVENTS, 4 SCHED, 8 CLOCK_UNSTABLE, 16 RCU,
				 * 32 RCU_EXP; 0 none) */
	JTR_EV_NTYPES
};

/* jtr watch only, never in a log: the kernel side counted an interruption of
 * at least --dump-above (a dump's trigger): ts = its start, a = its length,
 * b = its key's cat | src<<8 | id<<32, str = the key's name and group
 * (watch_model.h struct jtr_wkey), cpu = its CPU */
#define JTR_EV_WATCH_INTR 64

/* one event, as the kernel side submits it and the log stores it */
struct jtr_ev {
	unsigned long long ts_ns;	/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	unsigned int pid;		/* the task running when it happened (tid) */
	unsigned short cpu;
	unsigned char type;		/* enum jtr_ev_type */
	unsigned char flags;
	unsigned long long a;
	unsigned long long b;
	union {
		char str[2 * JTR_COMM_LEN];
		unsigned long long x[4];
	};
};

/* the log's header; records follow at offset sizeof(struct jtr_ev_header) */
struct jtr_ev_header {
	char magic[8];			/* JTR_EV_MAGIC */
	unsigned int version;		/* JTR_EV_VERSION */
	unsigned int record_size;	/* JTR_EV_SIZE */
	unsigned long long start_ns;	/* CLOCK_MONOTONIC when tracing began */
	unsigned long long end_ns;	/* 0 until the tracer stops */
	unsigned long long records;	/* 0 until the tracer stops */
	unsigned long long dropped;	/* 0 until the tracer stops */
	unsigned char reserved[16];
};

/* per-CPU counters the kernel side keeps (a BPF per-CPU array of these) */
#define JTR_SEEN_TASKS	16

/* an entry kept in a CPU's counters until its exit's record carries it */
struct jtr_kept {
	unsigned long long ts;
	unsigned int key;	/* what its exit must match */
	unsigned int aux;
	unsigned int pid;
	unsigned int open;	/* 1 while it is kept */
};

struct jtr_trace_counts {
	unsigned long long events[JTR_EV_NTYPES];	/* submitted per type */
	unsigned long long dropped[JTR_EV_NTYPES];	/* ring buffer full, per type */
	unsigned long long steal_addr;	/* this CPU's steal_time (0: not found yet) */
	unsigned long long steal_ns;	/* steal_time.steal at the last look that was logged */
	unsigned long long steal_looked;	/* 1 once steal_ns holds a reading */
	unsigned long long tick_state;	/* the last JTR_EV_TICK_STOP logged: 1 | a<<1 | b<<2 */
	/* a trace's softirq entered and not yet left (trace.bpf.c softirq_pair):
	 * key the vector */
	struct jtr_kept sirq;
	/* a trace's hrtimer callback begun and not yet ended (trace.bpf.c
	 * hrtimer_pair): the entry's time, task, timer, function and times */
	unsigned long long hrt_ts;
	unsigned long long hrt_timer;
	unsigned long long hrt_fn;
	unsigned long long hrt_x[3];
	unsigned int hrt_pid;
	unsigned int hrt_open;
	/* a trace's interrupt vector (not an IPI) entered and not yet left
	 * (trace.bpf.c vector_pair): key the pair k, aux the vector */
	struct jtr_kept vec;
	/* the tasks this CPU last found described (trace.bpf.c note_task), by
	 * pid % JTR_SEEN_TASKS: a switch to one of them needs no lookup */
	struct {
		unsigned int pid;
		unsigned int gen;	/* forget_gen then */
		unsigned long long cset;
	} seen[JTR_SEEN_TASKS];
};

#define JTR_STEAL_FIRST	1	/* JTR_EV_STEAL flags: the CPU's first reading */
#define JTR_SW_PREEMPTED 1	/* JTR_EV_SWITCH flags: prev is still runnable */
/* the task a record names (a switch's prev) is a thread of one of the
 * processes given to jtr watch --app or to --func --pid (jtr run app) */
#define JTR_FL_APP	2
#define JTR_FL_APP_NEXT	4	/* JTR_EV_SWITCH: next is */
#define JTR_VEC_SENDER	1	/* JTR_EV_VEC_ENTRY flags: the IPI's sender is in it */
#define JTR_VEC_SITE	8	/* ... and x[2] is the send's callsite, not a callback */
/* JTR_EV_SOFTIRQ_EXIT in the ring (never in a log): the softirq's entry too,
 * at time b, the same task and vector; the tracer writes the two records */
#define JTR_SIRQ_PAIR	16
/* JTR_EV_HRTIMER_EXIT in the ring (never in a log): the callback's entry too,
 * at time b, its function in x[3] and its x[0..2]; the same task and timer */
#define JTR_HRT_PAIR	32
/* JTR_EV_VEC_EXIT in the ring (never in a log): the vector's entry too, at
 * time b, the same task; a is the vector | the pair k << 32 */
#define JTR_VEC_PAIR	64
/* JTR_EV_WAKING of a thread of an --app process: str[16..31] is the
 * waker's comm (the record's pid is the waker's) */
#define JTR_NO_SYSCALL	0xffffffffffffffffULL	/* JTR_EV_BLOCK a: not in a system call */
#define JTR_IPI_RESCHED	1	/* an irq_vectors pair's IPI kind (trace.bpf.c vec_ipi) */
#define JTR_IPI_CALL	2

/* jtr_comm_pad - a comm read whole as two words (@w0 its bytes 0-7, @w1
 * 8-15, in memory order) made what bpf_probe_read_kernel_str gives: the
 * bytes after its first NUL zero, and its 16th always (comms are keys,
 * compared as bytes, and a kernel that renames a task may leave the old
 * name's bytes after the NUL). The lowest zero byte of a word is the lowest
 * set bit of (w - 0x01..) & ~w & 0x80..: exact for the lowest one, and it is
 * the first in memory on a little-endian CPU; 0 where the CPU is not
 * (trace.bpf.c then reads comms with the helper) */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define JTR_COMM_PAD 1
static inline __attribute__((always_inline)) void jtr_comm_pad(unsigned long long *w0,
							       unsigned long long *w1)
{
	const unsigned long long ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
	unsigned long long z0 = (*w0 - ones) & ~*w0 & highs, z1 = (*w1 - ones) & ~*w1 & highs;

	if (z0) {
		*w0 &= ((z0 & -z0) >> 7) - 1;
		*w1 = 0;
	} else if (z1) {
		*w1 &= ((z1 & -z1) >> 7) - 1;
	} else {
		*w1 &= 0x00ffffffffffffffULL;
	}
}
#else
#define JTR_COMM_PAD 0
#endif

#endif
