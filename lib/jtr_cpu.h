/* SPDX-License-Identifier: GPL-2.0-only */
/* jtr_cpu.h - CPU placement, SCHED_FIFO, memory locking and privileges.
 *
 * Order of a privileged start (setuid root or file capabilities):
 *   1. parse numbers only; keep paths as strings, touch nothing on disk;
 *   2. allocate and pre-touch everything the hot loop uses (jtr_prefault);
 *   3. jtr_fifo_set() and jtr_mlock() while still privileged;
 *   4. jtr_priv_drop(): real uid/gid for good, every capability cleared,
 *      no_new_privs, then checked;
 *   5. only then open files or create folders, as the real user.
 */
#ifndef JTR_CPU_H
#define JTR_CPU_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jtr_err.h"

/* jtr_cpus_online - CPUs in /sys/devices/system/cpu/online */
int jtr_cpus_online(cpu_set_t *set);

/* jtr_cpus_allowed - CPUs this process may run on (sched_getaffinity) */
int jtr_cpus_allowed(cpu_set_t *set);

/* jtr_cpus_from_file - CPU list in a sysfs file such as .../isolated;
 * an empty file gives an empty set; a missing one -ENOENT */
int jtr_cpus_from_file(const char *path, cpu_set_t *set);

/* jtr_cpus_cpuset - CPUs this process's cpuset cgroup allows (cgroup v2
 * cpuset.cpus.effective; the online CPUs when it has none): where it may pin a
 * thread even outside its affinity */
int jtr_cpus_cpuset(cpu_set_t *set);

/* jtr_cpu_check - @cpu is online and allowed: 0; outside the affinity but in the
 * cpuset (the shell was moved off an isolated CPU), or outside the cpuset but in
 * a cgroup v2 cpuset partition this process then joins (jtr-isolated): 1, and
 * @e says so; else -EINVAL and why */
int jtr_cpu_check(int cpu, struct jtr_err *e);

/* jtr_cpu_default - the CPU a probe measures when none is given: the first
 * isolated CPU if any, else the last online and allowed CPU (away from CPU 0,
 * which takes most housekeeping) */
int jtr_cpu_default(void);

/* jtr_pin_self - pin the calling thread to @cpu */
int jtr_pin_self(int cpu);

/* jtr_pin_self_set - pin the calling thread to @set */
int jtr_pin_self_set(const cpu_set_t *set);

/* jtr_fifo_set - SCHED_FIFO at @prio (1-99) for the calling thread; threads it
 * creates afterwards inherit it */
int jtr_fifo_set(int prio);

/* jtr_sched_other - back to SCHED_OTHER (always allowed) */
int jtr_sched_other(void);

/* jtr_mlock - mlockall(MCL_CURRENT): lock what is mapped now. MCL_FUTURE is
 * not used: after a privilege drop it would make every later allocation
 * fail against RLIMIT_MEMLOCK. Hot-loop memory is allocated first. */
int jtr_mlock(void);

/* jtr_proc_kb - the "KEY: N kB" line of a /proc file such as /proc/meminfo or
 * /proc/self/status, in bytes; 0 when the file or the line is missing */
uint64_t jtr_proc_kb(const char *path, const char *key);

/* jtr_mapped_bytes - what this process maps now (VmSize): what
 * jtr_mlock() would lock; 0 if unknown */
uint64_t jtr_mapped_bytes(void);

/* jtr_memlock_limit - RLIMIT_MEMLOCK's soft limit in bytes, UINT64_MAX for
 * none */
uint64_t jtr_memlock_limit(void);

/* jtr_prefault - write every page of [@p, @p + @len) */
void jtr_prefault(void *p, size_t len);

/* jtr_prefault_stack - touch @len bytes of the calling thread's stack */
void jtr_prefault_stack(size_t len);

/* RT throttling of this process's real-time tasks: with RT group scheduling
 * (a cgroup v1 cpu controller with cpu.rt_runtime_us) the runtime and period of
 * its cpu cgroup, which throttle whatever the sysctls say (kernel 6.18: root's
 * 800000 of 1000000 gave 200 ms stops under a sysctl of 950000); else
 * /proc/sys/kernel/sched_rt_{runtime,period}_us. kernel.sched_rt_runtime_us -1
 * turns it off either way. */
struct jtr_rt_throttle {
	long long runtime_us;	/* -1: throttling off */
	long long period_us;
	long long sysctl_runtime_us;	/* kernel.sched_rt_runtime_us */
	char cgroup[256];	/* the cpu cgroup whose values these are, "" for the sysctls */
	bool known;
};

/* jtr_rt_throttle_read - read the knobs that throttle this process */
int jtr_rt_throttle_read(struct jtr_rt_throttle *t);

/* jtr_rt_throttle_read_at - the same, with /proc and /sys under @root ("" for /) */
int jtr_rt_throttle_read_at(struct jtr_rt_throttle *t, const char *root);

/* jtr_rt_throttle_warning - the warning a FIFO busy loop deserves, or
 * false when throttling is off */
bool jtr_rt_throttle_warning(const struct jtr_rt_throttle *t, char *buf, size_t n);

/* privilege state at start */
struct jtr_priv {
	unsigned int ruid, euid, rgid, egid;
	uint64_t cap_eff, cap_prm;
	bool elevated;		/* setuid/setgid or file capabilities beyond the real user */
	bool dropped;
};

/* jtr_priv_init - look at how the program was started */
int jtr_priv_init(struct jtr_priv *p);

/* jtr_priv_drop - if elevated: become the real uid/gid for good, clear every
 * capability, set no_new_privs, and check all of it. Plain root stays root. */
int jtr_priv_drop(struct jtr_priv *p, struct jtr_err *e);

/* jtr_caps_read - effective and permitted capability sets of this thread */
int jtr_caps_read(uint64_t *eff, uint64_t *prm);

#endif
