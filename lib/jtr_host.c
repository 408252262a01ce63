// SPDX-License-Identifier: GPL-2.0-only
/* jtr_host.c - host facts written at the head of every result. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "jtr_cli.h"
#include "jtr_clock.h"
#include "jtr_host.h"

/* read_line - first line of @path into @buf ("" if unreadable); -errno */
static int read_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "re");
	int rc = 0;

	buf[0] = '\0';
	if (!f)
		return -errno;
	if (!fgets(buf, (int)n, f))
		rc = -EIO;
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return rc;
}

/* cpu_model - "model name" from /proc/cpuinfo (or the first "Hardware"/"cpu") */
static void cpu_model(char *buf, size_t n)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[512];

	buf[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (!colon)
			continue;
		if (!strncmp(line, "model name", 10) || !strncmp(line, "Hardware", 8) ||
		    (!buf[0] && !strncmp(line, "cpu\t", 4))) {
			colon++;
			while (*colon == ' ')
				colon++;
			colon[strcspn(colon, "\n")] = '\0';
			snprintf(buf, n, "%s", colon);
			if (!strncmp(line, "model name", 10))
				break;
		}
	}
	fclose(f);
}

/* hypervisor - cpuid's hypervisor bit and vendor, or /sys/hypervisor/type */
static bool hypervisor(char *buf, size_t n)
{
	buf[0] = '\0';
#if defined(__x86_64__) || defined(__i386__)
	{
		unsigned int a, b, c, d;

		if (__get_cpuid(1, &a, &b, &c, &d) && (c & (1U << 31))) {
			unsigned int v[3];

			__cpuid(0x40000000, a, v[0], v[1], v[2]);
			snprintf(buf, n, "%.12s", (const char *)v);
			for (size_t i = 0; buf[i]; i++)
				if (buf[i] < 0x20 || buf[i] > 0x7e)
					buf[i] = '?';
			if (!buf[0])
				snprintf(buf, n, "unknown");
			return true;
		}
	}
#endif
	if (read_line("/sys/hypervisor/type", buf, n) == 0 && buf[0])
		return true;
	buf[0] = '\0';
	return false;
}

/* jtr_host_state_dir - $JTR_STATE_DIR or /run/jtr */
const char *jtr_host_state_dir(void)
{
	const char *d = getenv("JTR_STATE_DIR");

	return d && *d ? d : "/run/jtr";
}

/* cpulist_file - a sysfs CPU list, normalised */
static void cpulist_file(const char *path, char *buf, size_t n, bool *exists)
{
	cpu_set_t set;
	int rc = jtr_cpus_from_file(path, &set);

	buf[0] = '\0';
	if (exists)
		*exists = rc != -ENOENT;
	if (rc == 0)
		jtr_format_cpulist(&set, buf, n);
}

/* jtr_host_collect - read uname, /proc and /sys */
int jtr_host_collect(struct jtr_host *h)
{
	struct utsname u;
	char path[PATH_MAX];
	cpu_set_t set;

	memset(h, 0, sizeof(*h));
	if (gethostname(h->hostname, sizeof(h->hostname) - 1) == -1)
		snprintf(h->hostname, sizeof(h->hostname), "unknown");
	if (uname(&u) == 0) {
		snprintf(h->kernel, sizeof(h->kernel), "%s", u.release);
		snprintf(h->kernel_version, sizeof(h->kernel_version), "%s", u.version);
		snprintf(h->machine, sizeof(h->machine), "%s", u.machine);
	}
	read_line("/proc/cmdline", h->cmdline, sizeof(h->cmdline));
	cpu_model(h->cpu_model, sizeof(h->cpu_model));
	if (jtr_cpus_online(&set) == 0)
		jtr_format_cpulist(&set, h->online, sizeof(h->online));
	cpulist_file("/sys/devices/system/cpu/isolated", h->isolated, sizeof(h->isolated), NULL);
	cpulist_file("/sys/devices/system/cpu/nohz_full", h->nohz_full, sizeof(h->nohz_full),
		     &h->nohz_full_supported);
	read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		  h->clocksource, sizeof(h->clocksource));
	h->virtualised = hypervisor(h->hypervisor, sizeof(h->hypervisor));
	jtr_rt_throttle_read(&h->rt);
	snprintf(path, sizeof(path), "%s/active-profile", jtr_host_state_dir());
	read_line(path, h->tuning_profile, sizeof(h->tuning_profile));
	h->tsc_invariant = jtr_tsc_invariant(NULL);
	return 0;
}

/* str_or_null - "" as JSON null */
static void str_or_null(struct jtr_json *j, const char *key, const char *v)
{
	jtr_json_str(j, key, v && *v ? v : NULL);
}

/* jtr_host_write - the "host" object */
void jtr_host_write(struct jtr_json *j, const char *key, const struct jtr_host *h)
{
	jtr_json_obj_begin(j, key);
	jtr_json_str(j, "hostname", h->hostname);
	jtr_json_str(j, "kernel", h->kernel);
	jtr_json_str(j, "kernel_version", h->kernel_version);
	jtr_json_str(j, "machine", h->machine);
	jtr_json_str(j, "cmdline", h->cmdline);
	jtr_json_str(j, "cpu_model", h->cpu_model);
	jtr_json_str(j, "online_cpus", h->online);
	jtr_json_str(j, "isolated_cpus", h->isolated);
	if (h->nohz_full_supported)
		jtr_json_str(j, "nohz_full_cpus", h->nohz_full);
	else
		jtr_json_null(j, "nohz_full_cpus");
	str_or_null(j, "clocksource", h->clocksource);
	jtr_json_bool(j, "tsc_invariant", h->tsc_invariant);
	if (h->tsc_hz > 0) {
		jtr_json_fixed(j, "tsc_hz", h->tsc_hz, 3);
		jtr_json_fixed(j, "tsc_step_ns", h->tsc_step_ns, 2);
	} else {
		jtr_json_null(j, "tsc_hz");
		jtr_json_null(j, "tsc_step_ns");
	}
	jtr_json_bool(j, "virtualised", h->virtualised);
	str_or_null(j, "hypervisor", h->hypervisor);
	jtr_json_obj_begin(j, "rt_throttling");
	if (h->rt.known) {
		jtr_json_bool(j, "enabled", h->rt.runtime_us >= 0 && h->rt.runtime_us < h->rt.period_us);
		jtr_json_int(j, "runtime_us", h->rt.runtime_us);
		jtr_json_int(j, "period_us", h->rt.period_us);
		if (h->rt.cgroup[0]) {
			jtr_json_str(j, "cgroup", h->rt.cgroup);
			jtr_json_int(j, "sysctl_runtime_us", h->rt.sysctl_runtime_us);
		}
	} else {
		jtr_json_null(j, "enabled");
	}
	jtr_json_obj_end(j);
	str_or_null(j, "tuning_profile", h->tuning_profile);
	jtr_json_obj_end(j);
}
