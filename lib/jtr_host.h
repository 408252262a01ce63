/* SPDX-License-Identifier: GPL-2.0-only */
/* jtr_host.h - host facts written at the head of every result. */
#ifndef JTR_HOST_H
#define JTR_HOST_H

#include <stdbool.h>

#include "jtr_cpu.h"
#include "jtr_json.h"

struct jtr_host {
	char hostname[256];
	char kernel[256];		/* uname release */
	char kernel_version[256];	/* uname version */
	char machine[80];
	char cmdline[4096];
	char cpu_model[256];
	char online[256];
	char isolated[256];
	char nohz_full[256];		/* "" when the kernel has no NO_HZ_FULL */
	bool nohz_full_supported;
	char clocksource[64];
	bool virtualised;
	char hypervisor[64];		/* "KVMKVMKVM", "xen", ... or "" */
	struct jtr_rt_throttle rt;
	char tuning_profile[128];	/* active jtr profile or "" */
	bool tsc_invariant;
	double tsc_hz;			/* 0 until the probe has calibrated */
	double tsc_step_ns;
};

/* jtr_host_collect - read uname, /proc and /sys; the tsc fields stay 0 */
int jtr_host_collect(struct jtr_host *h);

/* jtr_host_state_dir - folder of jtr's tuning state: $JTR_STATE_DIR or
 * /run/jtr (runtime tuning does not survive a reboot, and neither should the
 * record of it). The active profile's name is in active-profile there. */
const char *jtr_host_state_dir(void);

/* jtr_host_write - the "host" object */
void jtr_host_write(struct jtr_json *j, const char *key, const struct jtr_host *h);

#endif
