// SPDX-License-Identifier: GPL-2.0-only
/* trace_json.c - trace.json, the description beside an event log: what was
 * traced and how, how many events of each type, what was lost, what the
 * tracing cost, the BPF programs' statistics and the kernel symbols
 * (docs/attribution.md; analysis/jtrpy/trace reads it).
 */
#include <errno.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "jtr_probe.h"
#include "programs.h"
#include "trace.skel.h"
#include "trace_json.h"
#include "trace_names.h"

/* write_programs - each program's runs and run time: from the kernel's BPF
 * statistics (--prog-stats kernel), or counted by the program and timed in
 * one run of JTR_TIME_EVERY (sampled: the time of all its runs estimated
 * from those, timed_runs saying how many were) */
static void write_programs(struct tracer *t, struct jtr_json *j)
{
	bool sampled = t->o->prog_stats == STATS_SAMPLED;
	struct bpf_program *prog;

	jtr_json_str(j, "prog_stats", sampled ? "sampled" : "kernel");
	jtr_json_obj_begin(j, "programs");
	bpf_object__for_each_program(prog, t->skel->obj) {
		struct bpf_prog_info info, kinfo;
		struct jtr_prog_run run;
		__u32 len = sizeof(info);

		if (!bpf_program__autoload(prog))
			continue;
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) < 0)
			continue;
		kinfo = info;
		if (sampled) {
			if (progs_runs(t, bpf_program__name(prog), &run) < 0)
				continue;
			info.run_cnt = run.runs;
			/* the timed runs' mean for every run (rounded) */
			info.run_time_ns = run.timed ? (__u64)((double)run.timed_ns / run.timed *
							       run.runs + 0.5) : 0;
		}
		jtr_json_obj_begin(j, bpf_program__name(prog));
		jtr_json_uint(j, "run_count", info.run_cnt);
		jtr_json_uint(j, "run_time_ns", info.run_time_ns);
		if (sampled)
			jtr_json_uint(j, "timed_runs", run.timed);
		/* the kernel's statistics were on too (another tool, or the
		 * sysctl kernel.bpf_stats_enabled): what they say beside */
		if (sampled && kinfo.run_cnt) {
			jtr_json_uint(j, "kernel_run_count", kinfo.run_cnt);
			jtr_json_uint(j, "kernel_run_time_ns", kinfo.run_time_ns);
		}
		/* runs the kernel skipped: a BPF program already ran on that CPU */
		jtr_json_uint(j, "recursion_misses", info.recursion_misses);
		if (info.run_cnt)
			jtr_json_fixed(j, "ns_per_run", (double)info.run_time_ns / info.run_cnt, 1);
		else
			jtr_json_null(j, "ns_per_run");
		jtr_json_obj_end(j);
	}
	jtr_json_obj_end(j);
}

/* trace_json_write - see trace_json.h */
void trace_json_write(struct tracer *t, struct jtr_afile *a, int64_t start_ns, int64_t end_ns,
		      uint64_t records, const struct jtr_addrs *addrs)
{
	struct jtr_probe *p = t->p;
	struct jtr_json j;
	char cpus[256];

	jtr_json_init(&j, a->f);
	jtr_json_obj_begin(&j, NULL);
	jtr_json_str(&j, "format", "jtr-trace/1");
	jtr_json_str(&j, "tool", "trace");
	jtr_json_str(&j, "jtr_version", JTR_VERSION);
	jtr_json_str(&j, "backend", "ebpf");
	jtr_json_str(&j, "programs_kind", t->kind);
	jtr_json_str(&j, "log", "events.bin");
	jtr_json_arr_begin_inline(&j, "cpus");
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &t->o->cpus))
			jtr_json_int(&j, NULL, c);
	jtr_json_arr_end(&j);
	jtr_format_cpulist(&t->o->cpus, cpus, sizeof(cpus));
	jtr_json_str(&j, "cpu_list", cpus);
	/* the nohz_full CPUs (null: a kernel without CONFIG_NO_HZ_FULL) */
	if (p->host.nohz_full_supported)
		jtr_json_str(&j, "nohz_full", p->host.nohz_full);
	else
		jtr_json_null(&j, "nohz_full");
	jtr_json_int(&j, "consumer_cpu", t->consumer_cpu);
	jtr_json_int(&j, "consumer_nice", t->consumer_nice);
	jtr_json_int(&j, "start_ns", start_ns);
	jtr_json_int(&j, "end_ns", end_ns);
	jtr_json_bool(&j, "partial", p->partial);	/* -d cut short by a signal */
	jtr_json_uint(&j, "buffer_bytes", t->o->buffer_bytes);
	jtr_json_uint(&j, "ring_bytes", t->ring_bytes);		/* each traced CPU's ring */
	jtr_json_uint(&j, "drain_interval_ns", t->o->drain_ns);
	jtr_json_bool(&j, "wakeup", t->o->wakeup);
	/* --floor-only: no program of jtr's ran, the log is empty by design */
	if (t->o->floor_only)
		jtr_json_str(&j, "floor_only", t->o->floor_only == FLOOR_CLOCK ? "clock" : "empty");
	jtr_json_obj_begin(&j, "events");
	jtr_json_uint(&j, "total", progs_sum(t->total.events));
	jtr_json_uint(&j, "dropped", progs_sum(t->total.dropped));
	jtr_json_uint(&j, "written", records);
	jtr_json_uint(&j, "outside_window", t->outside);
	/* the log reached its bound: end_ns is where it holds every CPU's events */
	jtr_json_bool(&j, "log_full", t->log_end_ns != 0);
	jtr_json_obj_begin(&j, "per_type");
	for (int i = 1; i < JTR_EV_NTYPES; i++)
		jtr_json_uint(&j, jtr_ev_type_names[i], t->total.events[i]);
	jtr_json_obj_end(&j);
	jtr_json_obj_begin(&j, "dropped_per_type");
	for (int i = 1; i < JTR_EV_NTYPES; i++)
		jtr_json_uint(&j, jtr_ev_type_names[i], t->total.dropped[i]);
	jtr_json_obj_end(&j);
	jtr_json_obj_end(&j);
	jtr_json_obj_begin(&j, "steal");
	jtr_json_str(&j, "source", "kvm steal_time");
	jtr_json_bool(&j, "available", t->steal_from_rq != 0);
	if (!t->steal_from_rq)
		jtr_json_str(&j, "reason", t->steal_why);
	jtr_json_obj_end(&j);
	jtr_json_arr_begin_inline(&j, "vectors");
	for (int v = 0; v < t->nvecs; v++)
		jtr_json_str(&j, NULL, t->vec_names[v]);
	jtr_json_arr_end(&j);
	jtr_json_arr_begin_inline(&j, "missing");
	for (int m = 0; m < t->nmissing; m++)
		jtr_json_str(&j, NULL, t->missing[m]);
	jtr_json_arr_end(&j);
	/* not attached on purpose: what another tracepoint says (programs.c) */
	jtr_json_arr_begin_inline(&j, "left_out");
	for (int m = 0; m < t->nleft_out; m++)
		jtr_json_str(&j, NULL, t->left_out[m]);
	jtr_json_arr_end(&j);
	jtr_json_obj_begin(&j, "cost");
	jtr_json_uint(&j, "setup_cpu_ns", t->setup_cpu_ns);
	jtr_json_uint(&j, "tracing_cpu_ns", t->tracing_cpu_ns);
	jtr_json_obj_end(&j);
	if (t->o->prog_stats != STATS_OFF)
		write_programs(t, &j);
	jtr_ksyms_write(addrs, &j);
	jtr_cgroups_write(&t->groups, &j);
	jtr_probe_result_end(p, &j);
	if (jtr_json_finish(&j) < 0)
		jtr_fatal(p, "cannot write trace.json: %s", strerror(errno));
	jtr_probe_commit_file(p, a);
}
