// SPDX-License-Identifier: GPL-2.0-only
/* jtr_pmu.c - hardware counters for one thread around a run */
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "jtr_pmu.h"

const char *const jtr_pmu_names[JTR_PMU_N] = {
	"cycles", "instructions", "cache_misses", "dtlb_load_misses",
};

/* attr_for - the perf_event_attr of counter @c */
static void attr_for(enum jtr_pmu_counter c, struct perf_event_attr *a, bool user_only)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_HARDWARE;
	a->exclude_hv = 1;
	a->exclude_kernel = user_only;
	switch (c) {
	case JTR_PMU_CYCLES: a->config = PERF_COUNT_HW_CPU_CYCLES; break;
	case JTR_PMU_INSTRUCTIONS: a->config = PERF_COUNT_HW_INSTRUCTIONS; break;
	case JTR_PMU_CACHE_MISSES: a->config = PERF_COUNT_HW_CACHE_MISSES; break;
	default:
		a->type = PERF_TYPE_HW_CACHE;
		a->config = PERF_COUNT_HW_CACHE_DTLB | PERF_COUNT_HW_CACHE_OP_READ << 8 |
			    PERF_COUNT_HW_CACHE_RESULT_MISS << 16;
		break;
	}
}

/* open_one - counter @c for this thread; kernel counting when allowed */
static int open_one(enum jtr_pmu_counter c)
{
	struct perf_event_attr a;
	int fd;

	attr_for(c, &a, false);
	fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && (errno == EACCES || errno == EPERM)) {
		attr_for(c, &a, true);	/* perf_event_paranoid 2: user space only */
		fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	}
	return fd < 0 ? -errno : fd;
}

/* jtr_pmu_open - count for the calling thread */
int jtr_pmu_open(struct jtr_pmu *m, struct jtr_err *e)
{
	int rc;

	memset(m, 0, sizeof(*m));
	for (int c = 0; c < JTR_PMU_N; c++)
		m->fd[c] = -1;
	for (int c = 0; c < JTR_PMU_N; c++) {
		rc = open_one(c);
		if (rc >= 0) {
			m->fd[c] = rc;
			continue;
		}
		if (c <= JTR_PMU_INSTRUCTIONS) {
			jtr_pmu_close(m);
			return jtr_err_set(e, rc, "no hardware counters here (perf_event_open %s: %s)%s",
					   jtr_pmu_names[c], strerror(-rc),
					   rc == -ENOENT || rc == -EOPNOTSUPP ?
					   ": no PMU, as in many virtual machines" : "");
		}
	}
	m->open = true;
	return 0;
}

/* read_all - the counters' values into @v (0 for those not open) */
static void read_all(const struct jtr_pmu *m, uint64_t *v)
{
	for (int c = 0; c < JTR_PMU_N; c++) {
		v[c] = 0;
		if (m->fd[c] >= 0 && read(m->fd[c], &v[c], sizeof(v[c])) != sizeof(v[c]))
			v[c] = 0;
	}
}

void jtr_pmu_begin(struct jtr_pmu *m)
{
	read_all(m, m->begin);
}

void jtr_pmu_end(struct jtr_pmu *m)
{
	read_all(m, m->end);
}

/* jtr_pmu_close - close what is open */
void jtr_pmu_close(struct jtr_pmu *m)
{
	for (int c = 0; c < JTR_PMU_N; c++) {
		if (m->fd[c] >= 0)
			close(m->fd[c]);
		m->fd[c] = -1;
	}
	m->open = false;
}

/* jtr_pmu_derive - IPC and per-million-loop rates */
void jtr_pmu_derive(const uint64_t count[JTR_PMU_N], uint64_t loops, struct jtr_pmu_derived *d)
{
	d->ipc = count[JTR_PMU_CYCLES] ? (double)count[JTR_PMU_INSTRUCTIONS] /
					 (double)count[JTR_PMU_CYCLES] : 0.0;
	for (int c = 0; c < JTR_PMU_N; c++)
		d->per_mloop[c] = loops ? (double)count[c] * 1e6 / (double)loops : 0.0;
}
