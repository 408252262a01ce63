// SPDX-License-Identifier: GPL-2.0-only
/* jtr_cpu.c - CPU placement, SCHED_FIFO, memory locking and privileges. */
#include <dirent.h>
#include <errno.h>
#include <linux/capability.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "jtr_cli.h"
#include "jtr_cpu.h"

/* read_small_file - whole (short) file into @buf, trailing newline removed */
static int read_small_file(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "re");
	size_t len;

	if (!f)
		return -errno;
	len = fread(buf, 1, n - 1, f);
	fclose(f);
	buf[len] = '\0';
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		buf[--len] = '\0';
	return (int)len;
}

/* jtr_cpus_from_file - CPU list in a sysfs file */
int jtr_cpus_from_file(const char *path, cpu_set_t *set)
{
	char buf[4096];
	int rc = read_small_file(path, buf, sizeof(buf));

	CPU_ZERO(set);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return 0;
	return jtr_parse_cpulist(buf, set, NULL);
}

/* jtr_cpus_online - CPUs in /sys/devices/system/cpu/online */
int jtr_cpus_online(cpu_set_t *set)
{
	int rc = jtr_cpus_from_file("/sys/devices/system/cpu/online", set);
	long n;

	if (rc == 0 && CPU_COUNT(set) > 0)
		return 0;
	/* no sysfs: trust sysconf */
	n = sysconf(_SC_NPROCESSORS_ONLN);
	CPU_ZERO(set);
	for (long i = 0; i < n && i < CPU_SETSIZE; i++)
		CPU_SET((int)i, set);
	return n > 0 ? 0 : -ENOENT;
}

/* jtr_cpus_allowed - CPUs this process may run on */
int jtr_cpus_allowed(cpu_set_t *set)
{
	CPU_ZERO(set);
	if (sched_getaffinity(0, sizeof(*set), set) == -1)
		return -errno;
	return 0;
}

/* jtr_cpus_cpuset - see jtr_cpu.h */
int jtr_cpus_cpuset(cpu_set_t *set)
{
	char line[4096], path[4200];
	FILE *f = fopen("/proc/self/cgroup", "re");
	bool found = false;

	if (f) {
		while (fgets(line, sizeof(line), f)) {
			if (strncmp(line, "0::", 3))
				continue;
			line[strcspn(line, "\n")] = '\0';
			snprintf(path, sizeof(path), "/sys/fs/cgroup%s/cpuset.cpus.effective",
				 strcmp(line + 3, "/") ? line + 3 : "");
			found = jtr_cpus_from_file(path, set) == 0 && CPU_COUNT(set) > 0;
			break;
		}
		fclose(f);
	}
	return found ? 0 : jtr_cpus_online(set);
}

/* join_partition - move this process into the cgroup v2 cpuset partition at the
 * top of /sys/fs/cgroup whose CPUs hold @cpu (jtr tune apply jtr-isolate makes
 * jtr-isolated: the isolated CPUs are then out of every other cgroup's), so
 * that it may run there; its path into @path, or -errno */
static int join_partition(int cpu, char *path, size_t n)
{
	static const char *const top = "/sys/fs/cgroup";
	char file[4200], kind[64];
	cpu_set_t set;
	DIR *d = opendir(top);
	struct dirent *de;
	int rc = -ENOENT;

	if (!d)
		return -errno;
	while (rc == -ENOENT && (de = readdir(d))) {
		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		snprintf(file, sizeof(file), "%s/%s/cpuset.cpus.partition", top, de->d_name);
		if (read_small_file(file, kind, sizeof(kind)) <= 0 ||
		    (strncmp(kind, "isolated", 8) && strncmp(kind, "root", 4)) ||
		    strstr(kind, "invalid"))
			continue;
		snprintf(file, sizeof(file), "%s/%s/cpuset.cpus.effective", top, de->d_name);
		if (jtr_cpus_from_file(file, &set) < 0 || !CPU_ISSET(cpu, &set))
			continue;
		snprintf(file, sizeof(file), "%s/%s/cgroup.procs", top, de->d_name);
		FILE *f = fopen(file, "we");

		if (!f) {
			rc = -errno;
			break;
		}
		rc = fputs("0\n", f) < 0 ? -EIO : 0;
		if (fclose(f) == EOF && !rc)
			rc = -errno;
		snprintf(path, n, "%s/%s", top, de->d_name);
	}
	closedir(d);
	return rc;
}

/* jtr_cpu_check - @cpu is online and allowed, or in this process's cpuset (or in
 * a cpuset partition it joins) */
int jtr_cpu_check(int cpu, struct jtr_err *e)
{
	cpu_set_t online, allowed, cpuset;
	char on[256], al[256];

	jtr_cpus_online(&online);
	jtr_cpus_allowed(&allowed);
	jtr_format_cpulist(&online, on, sizeof(on));
	jtr_format_cpulist(&allowed, al, sizeof(al));
	if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &online))
		return jtr_err_set(e, -EINVAL, "CPU %d is not online; online CPUs: %s", cpu, on);
	if (CPU_ISSET(cpu, &allowed))
		return 0;
	jtr_cpus_cpuset(&cpuset);
	if (CPU_ISSET(cpu, &cpuset)) {
		jtr_err_set(e, 0, "CPU %d is outside this process's affinity (%s, as after "
			    "jtr tune apply jtr-isolate): its measuring thread is pinned there "
			    "as asked", cpu, al);
		return 1;
	}
	char part[4200];
	int rc = join_partition(cpu, part, sizeof(part));

	if (rc == 0) {
		jtr_err_set(e, 0, "CPU %d is in the cpuset partition %s (as after jtr tune "
			    "apply jtr-isolate on cgroup v2): this process joined it to run there",
			    cpu, part);
		return 1;
	}
	return jtr_err_set(e, -EINVAL,
			   "CPU %d is online but this process may not run there "
			   "(allowed: %s, and its cpuset cgroup leaves it out; see taskset or "
			   "the cpuset cgroup)%s", cpu, al,
			   rc == -ENOENT ? "" : ": joining the cpuset partition that holds it failed");
}

/* jtr_cpu_default - first isolated CPU of the cpuset (even outside the
 * affinity: a shell moved off the isolated CPUs), else the last online and
 * allowed one */
int jtr_cpu_default(void)
{
	cpu_set_t online, allowed, iso, ok, cpuset;
	int cpu;

	jtr_cpus_online(&online);
	jtr_cpus_allowed(&allowed);
	jtr_cpus_cpuset(&cpuset);
	CPU_AND(&ok, &online, &allowed);
	if (jtr_cpus_from_file("/sys/devices/system/cpu/isolated", &iso) == 0) {
		CPU_AND(&iso, &iso, &online);
		CPU_AND(&iso, &iso, &cpuset);
		for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
			if (CPU_ISSET(cpu, &iso))
				return cpu;
	}
	for (cpu = CPU_SETSIZE - 1; cpu >= 0; cpu--)
		if (CPU_ISSET(cpu, &ok))
			return cpu;
	return 0;
}

/* jtr_pin_self_set - pin the calling thread to @set */
int jtr_pin_self_set(const cpu_set_t *set)
{
	int rc = pthread_setaffinity_np(pthread_self(), sizeof(*set), set);

	return -rc;
}

/* jtr_pin_self - pin the calling thread to @cpu */
int jtr_pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return jtr_pin_self_set(&set);
}

/* jtr_fifo_set - SCHED_FIFO at @prio for the calling thread */
int jtr_fifo_set(int prio)
{
	struct sched_param sp = { .sched_priority = prio };

	if (prio < 1 || prio > 99)
		return -EINVAL;
	return -pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
}

/* jtr_sched_other - back to SCHED_OTHER */
int jtr_sched_other(void)
{
	struct sched_param sp = { .sched_priority = 0 };

	return -pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
}

/* jtr_mlock - mlockall(MCL_CURRENT) */
int jtr_mlock(void)
{
	return mlockall(MCL_CURRENT) == -1 ? -errno : 0;
}

/* jtr_proc_kb - see jtr_cpu.h */
uint64_t jtr_proc_kb(const char *path, const char *key)
{
	FILE *f = fopen(path, "re");
	char line[256];
	size_t n = strlen(key);
	unsigned long long kb = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':' &&
		    sscanf(line + n + 1, " %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb * 1024;
}

/* jtr_mapped_bytes - see jtr_cpu.h */
uint64_t jtr_mapped_bytes(void)
{
	return jtr_proc_kb("/proc/self/status", "VmSize");
}

/* jtr_memlock_limit - see jtr_cpu.h */
uint64_t jtr_memlock_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return UINT64_MAX;
	return (uint64_t)rl.rlim_cur;
}

/* jtr_prefault - write every page of [@p, @p + @len) */
void jtr_prefault(void *p, size_t len)
{
	volatile char *c = p;
	long pg = sysconf(_SC_PAGESIZE);

	for (size_t off = 0; off < len; off += (size_t)pg)
		c[off] = c[off];
	if (len)
		c[len - 1] = c[len - 1];
}

/* jtr_prefault_stack - touch @len bytes of the calling thread's stack */
__attribute__((noinline)) void jtr_prefault_stack(size_t len)
{
	char buf[len];

	memset(buf, 0, len);
	__asm__ __volatile__("" : : "r"(buf) : "memory");
}

/* has_word - @list (comma-separated) holds @word */
static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, word, n) && (p[n] == ',' || p[n] == '\0'))
			return true;
	return false;
}

/* cpu_cgroup_dir - the directory of this process's cgroup v1 cpu controller
 * (/proc/self/cgroup's "N:cpu,cpuacct:/PATH" under the mount /proc/self/mountinfo
 * names, less the mount's own root, as in a container); @path gets its cgroup
 * path; -ENOENT without one */
static int cpu_cgroup_dir(const char *root, char *dir, size_t n, char *path, size_t pn)
{
	char line[4096], file[512], *f[10], *sp;
	FILE *fp;
	bool found = false;
	int k;

	snprintf(file, sizeof(file), "%s/proc/self/cgroup", root);
	fp = fopen(file, "re");
	if (!fp)
		return -ENOENT;
	while (!found && fgets(line, sizeof(line), fp)) {
		char *list = strchr(line, ':'), *cg = list ? strchr(list + 1, ':') : NULL;

		if (!cg)
			continue;
		*cg++ = '\0';
		cg[strcspn(cg, "\n")] = '\0';
		if (has_word(list + 1, "cpu")) {
			snprintf(path, pn, "%s", cg);
			found = true;
		}
	}
	fclose(fp);
	if (!found)
		return -ENOENT;
	snprintf(file, sizeof(file), "%s/proc/self/mountinfo", root);
	fp = fopen(file, "re");
	if (!fp)
		return -ENOENT;
	found = false;
	while (!found && fgets(line, sizeof(line), fp)) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPER */
		line[strcspn(line, "\n")] = '\0';
		k = 0;
		for (char *t = strtok_r(line, " ", &sp); t && k < 10; t = strtok_r(NULL, " ", &sp)) {
			if (k == 6 && strcmp(t, "-"))
				continue;	/* optional fields */
			f[k++] = t;
		}
		if (k < 10 || strcmp(f[7], "cgroup") || !has_word(f[9], "cpu"))
			continue;
		size_t rl = strcmp(f[3], "/") ? strlen(f[3]) : 0;

		if (rl && strncmp(path, f[3], rl))
			continue;
		snprintf(dir, n, "%s%s%s", root, f[4], strcmp(path + rl, "/") ? path + rl : "");
		found = true;
	}
	fclose(fp);
	return found ? 0 : -ENOENT;
}

/* jtr_rt_throttle_read_at - see jtr_cpu.h */
int jtr_rt_throttle_read_at(struct jtr_rt_throttle *t, const char *root)
{
	char buf[64], file[4400], dir[4200], cg[256];
	long long v, runtime, period;

	memset(t, 0, sizeof(*t));
	t->runtime_us = t->sysctl_runtime_us = -1;
	t->period_us = 1000000;
	snprintf(file, sizeof(file), "%s/proc/sys/kernel/sched_rt_runtime_us", root);
	if (read_small_file(file, buf, sizeof(buf)) <= 0 ||
	    jtr_parse_int(buf, -1, 1LL << 40, &v, NULL) < 0)
		return -ENOENT;
	t->runtime_us = t->sysctl_runtime_us = v;
	snprintf(file, sizeof(file), "%s/proc/sys/kernel/sched_rt_period_us", root);
	if (read_small_file(file, buf, sizeof(buf)) > 0 &&
	    jtr_parse_int(buf, 1, 1LL << 40, &v, NULL) == 0)
		t->period_us = v;
	t->known = true;
	if (cpu_cgroup_dir(root, dir, sizeof(dir), cg, sizeof(cg)) < 0)
		return 0;
	snprintf(file, sizeof(file), "%s/cpu.rt_runtime_us", dir);
	if (read_small_file(file, buf, sizeof(buf)) <= 0 ||
	    jtr_parse_int(buf, -1, 1LL << 40, &runtime, NULL) < 0)
		return 0;
	snprintf(file, sizeof(file), "%s/cpu.rt_period_us", dir);
	if (read_small_file(file, buf, sizeof(buf)) <= 0 ||
	    jtr_parse_int(buf, 1, 1LL << 40, &period, NULL) < 0)
		return 0;
	snprintf(t->cgroup, sizeof(t->cgroup), "%s", cg);
	t->period_us = period;
	t->runtime_us = t->sysctl_runtime_us < 0 ? -1 : runtime;
	return 0;
}

/* jtr_rt_throttle_read - see jtr_cpu.h */
int jtr_rt_throttle_read(struct jtr_rt_throttle *t)
{
	return jtr_rt_throttle_read_at(t, "");
}

/* jtr_rt_throttle_warning - the warning a FIFO busy loop deserves */
bool jtr_rt_throttle_warning(const struct jtr_rt_throttle *t, char *buf, size_t n)
{
	char knob[320];
	long long gap_ms;

	if (!t->known || t->runtime_us < 0 || t->runtime_us >= t->period_us)
		return false;
	gap_ms = (t->period_us - t->runtime_us) / 1000;
	if (t->cgroup[0])
		snprintf(knob, sizeof(knob), "cpu.rt_runtime_us=%lld of %lld in cgroup %.200s",
			 t->runtime_us, t->period_us, t->cgroup);
	else
		snprintf(knob, sizeof(knob), "kernel.sched_rt_runtime_us=%lld of %lld",
			 t->runtime_us, t->period_us);
	snprintf(buf, n,
		 "RT throttling is on (%s): a SCHED_FIFO busy "
		 "loop is stopped for about %lld ms every %lld ms, and those stops show up as "
		 "outliers. To measure without them: sysctl kernel.sched_rt_runtime_us=-1 (a FIFO "
		 "busy loop can then starve other work on its CPU; use an isolated CPU)",
		 knob, gap_ms, t->period_us / 1000);
	return true;
}

/* jtr_caps_read - effective and permitted capability sets of this thread */
int jtr_caps_read(uint64_t *eff, uint64_t *prm)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &hdr, d) == -1)
		return -errno;
	*eff = ((uint64_t)d[1].effective << 32) | d[0].effective;
	*prm = ((uint64_t)d[1].permitted << 32) | d[0].permitted;
	return 0;
}

/* jtr_priv_init - look at how the program was started */
int jtr_priv_init(struct jtr_priv *p)
{
	uid_t r, e, s;
	gid_t rg, eg, sg;

	memset(p, 0, sizeof(*p));
	if (getresuid(&r, &e, &s) == -1 || getresgid(&rg, &eg, &sg) == -1)
		return -errno;
	p->ruid = r;
	p->euid = e;
	p->rgid = rg;
	p->egid = eg;
	jtr_caps_read(&p->cap_eff, &p->cap_prm);
	p->elevated = r != e || r != s || rg != eg || rg != sg || (r != 0 && p->cap_prm != 0);
	return 0;
}

/* jtr_priv_drop - become the real user for good and check it */
int jtr_priv_drop(struct jtr_priv *p, struct jtr_err *e)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	uid_t r, ef, s;
	gid_t rg, eg, sg;
	uint64_t eff, prm;

	if (!p->elevated)
		return 0;
	/* gid first: after the uid drop there is no right left to change it */
	if (setresgid(p->rgid, p->rgid, p->rgid) == -1)
		return jtr_err_set(e, -errno, "cannot drop group privileges: %s", strerror(errno));
	if (setresuid(p->ruid, p->ruid, p->ruid) == -1)
		return jtr_err_set(e, -errno, "cannot drop user privileges: %s", strerror(errno));
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capset, &hdr, d) == -1)
		return jtr_err_set(e, -errno, "cannot clear capabilities: %s", strerror(errno));
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		return jtr_err_set(e, -errno, "cannot set no_new_privs: %s", strerror(errno));

	/* check: every id is the real one, no capability is left, and the way
	 * back to root is closed */
	if (getresuid(&r, &ef, &s) == -1 || getresgid(&rg, &eg, &sg) == -1 ||
	    r != p->ruid || ef != p->ruid || s != p->ruid ||
	    rg != p->rgid || eg != p->rgid || sg != p->rgid)
		return jtr_err_set(e, -EPERM, "privilege drop did not take: ids still differ");
	if (jtr_caps_read(&eff, &prm) < 0 || eff || prm)
		return jtr_err_set(e, -EPERM, "privilege drop did not take: capabilities remain "
				   "(eff %#llx, prm %#llx)", (unsigned long long)eff,
				   (unsigned long long)prm);
	if (p->ruid != 0 && (setuid(0) == 0 || seteuid(0) == 0))
		return jtr_err_set(e, -EPERM, "privilege drop did not take: could regain root");
	p->dropped = true;
	return 0;
}
