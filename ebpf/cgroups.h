/* SPDX-License-Identifier: GPL-2.0-only */
/* cgroups.h - who a task is: the cgroups its JTR_EV_TASK records name (the
 * default hierarchy's, cgroup v2, and the memory controller's on cgroup v1),
 * resolved to their paths while the tracer drains (a cgroup may be gone by
 * the time it stops) and to a container, pod or systemd unit where the path
 * shows one: trace.json's "cgroups", jtr watch's container label.
 *
 * The rules (jtr_cgroup_label), first match from the path's end:
 *   .../docker-ID.scope, .../docker/ID           -> "docker ID12"
 *   .../cri-containerd-ID.scope                  -> "containerd ID12"
 *   .../crio-ID.scope                            -> "cri-o ID12"
 *   .../libpod-ID.scope                          -> "podman ID12"
 *   .../ID (64 hex digits, another parent)       -> "container ID12"
 * each preceded by "pod UID " where a folder is a Kubernetes pod's
 * (pod<UID> with cgroupfs, kubepods-...-pod<UID>.slice with systemd, its
 * underscores read as dashes); a pod's folder alone gives "pod UID"; else the
 * deepest systemd unit (NAME.scope, NAME.service) gives the unit; else no
 * label. ID12: the container ID's first 12 digits, as docker ps shows it. A
 * task's label is its v2 cgroup's, else its v1 cgroup's.
 *
 * Bounded: JTR_CGROUPS_MAX cgroups and JTR_CGROUPS_TASKS tasks (the
 * latest wins a slot), a walk of the hierarchy only when a record names a
 * cgroup not seen before, JTR_CGROUPS_DEPTH deep.
 */
#ifndef JTR_CGROUPS_H
#define JTR_CGROUPS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jtr_json.h"
#include "trace.h"

#define JTR_CGROUPS_MAX		1024
#define JTR_CGROUPS_TASKS	4096
#define JTR_CGROUPS_DEPTH	16
#define JTR_CGROUP_PATH		256
#define JTR_CGROUP_LABEL	80	/* "pod UID containerd ID12" fits */

struct jtr_cgroup {
	uint64_t id;			/* 0: a free slot */
	bool v1;			/* of the v1 memory hierarchy (else v2) */
	bool resolved;			/* looked for; path "" when it was gone */
	char path[JTR_CGROUP_PATH];	/* from the hierarchy's root: "/system.slice/x.scope" */
	char label[JTR_CGROUP_LABEL];	/* "" where the path shows no container */
};

struct jtr_cgroup_task {
	uint32_t pid;			/* 0: a free slot */
	uint64_t v2, v1;
};

struct jtr_cgroups {
	char v2_root[JTR_CGROUP_PATH];	/* where each is mounted ("": not) */
	char v1_root[JTR_CGROUP_PATH];
	struct jtr_cgroup *group;	/* JTR_CGROUPS_MAX, open addressing */
	size_t ngroups, pending;	/* pending: noted, not looked for yet */
	struct jtr_cgroup_task *task;	/* JTR_CGROUPS_TASKS, by pid */
	uint64_t walks;
};

/* jtr_cgroups_init - empty tables and the hierarchies' mount points (from
 * /proc/self/mounts, or @mounts when not NULL: tests); 0 or -ENOMEM */
int jtr_cgroups_init(struct jtr_cgroups *c, const char *mounts);
void jtr_cgroups_free(struct jtr_cgroups *c);

/* jtr_cgroups_note - a JTR_EV_TASK record: the task's groups, its cgroups
 * looked for at once where they are new (jtr watch names the task's next
 * switch with them) */
void jtr_cgroups_note(struct jtr_cgroups *c, const struct jtr_ev *e);

/* jtr_cgroups_resolve - look for the cgroups noted and not looked for yet
 * (one walk of each hierarchy that has some) */
void jtr_cgroups_resolve(struct jtr_cgroups *c);

/* jtr_cgroups_known - does the table hold task @pid (a later task may have
 * taken its slot)? */
bool jtr_cgroups_known(const struct jtr_cgroups *c, uint32_t pid);

/* jtr_cgroups_label - the label of the task in cgroups @v2 and @v1 (the ids
 * jtr watch's kernel side reads), looked for where they are new; "" for none */
const char *jtr_cgroups_label(struct jtr_cgroups *c, uint64_t v2, uint64_t v1);

/* jtr_cgroups_task_label - the label of task @pid ("" when none, or not seen) */
const char *jtr_cgroups_task_label(const struct jtr_cgroups *c, uint32_t pid);

/* jtr_cgroups_write - trace.json's "cgroups": the mounts and every cgroup
 * noted, {"v2": {"ID": {"path": ..., "label": ...}}, "v1": {...}} */
void jtr_cgroups_write(const struct jtr_cgroups *c, struct jtr_json *j);

/* jtr_cgroup_label - the label of cgroup path @path (the rules above) into
 * @out (JTR_CGROUP_LABEL bytes); "" for none */
void jtr_cgroup_label(const char *path, char *out);

#endif
