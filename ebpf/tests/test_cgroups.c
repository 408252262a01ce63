// SPDX-License-Identifier: GPL-2.0-only
/* test_cgroups.c - cgroup paths to container labels (ebpf/cgroups.c), and
 * ids to paths by a walk of a hierarchy: a folder tree made here stands for
 * one (its folders' inode numbers are the ids, as kernfs' are). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "cgroups.h"

#define ID64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define UID "6b1c0e8a-2d6f-4f59-9d0e-5a8f3c2b1a00"
#define UID_ "6b1c0e8a_2d6f_4f59_9d0e_5a8f3c2b1a00"

static void is(const char *path, const char *want)
{
	char got[JTR_CGROUP_LABEL];

	jtr_cgroup_label(path, got);
	if (strcmp(got, want))
		fail_msg("%s: label '%s', expected '%s'", path, got, want);
}

static void test_labels(void **state)
{
	(void)state;
	/* systemd's driver */
	is("/system.slice/docker-" ID64 ".scope", "docker 0123456789ab");
	is("/system.slice/cri-containerd-" ID64 ".scope", "containerd 0123456789ab");
	is("/machine.slice/libpod-" ID64 ".scope", "podman 0123456789ab");
	is("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice/"
	   "crio-" ID64 ".scope", "pod " UID " cri-o 0123456789ab");
	is("/kubepods.slice/kubepods-pod" UID_ ".slice", "pod " UID);
	/* cgroupfs' */
	is("/docker/" ID64, "docker 0123456789ab");
	is("/kubepods/besteffort/pod" UID "/" ID64, "pod " UID " container 0123456789ab");
	/* the container's own sub-groups keep its label */
	is("/system.slice/docker-" ID64 ".scope/init", "docker 0123456789ab");
	/* systemd units */
	is("/user.slice/user-1000.slice/session-3.scope", "session-3.scope");
	is("/system.slice/nginx.service", "nginx.service");
	is("/system.slice/nginx.service/workers", "nginx.service");
	is("/user.slice/user-1000.slice/user@1000.service/app.slice/app-x.scope", "app-x.scope");
	/* nothing to show */
	is("/", "");
	is("", "");
	is("/user.slice", "");
	is("/process_api/882c182b18575aa404b083293f0ea6ea", "");
	is("/docker/" ID64 "0", "");			/* 65 digits: no ID */
	is("/system.slice/docker-0123.scope", "docker-0123.scope");	/* a unit, no ID */
	is("/kubepods/pod" UID "x", "");
}

/* a hierarchy in @root: /a.scope, /a.scope/b, /deep/.../leaf.service */
static uint64_t ino(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_ino;
}

static void task(struct jtr_cgroups *c, uint32_t pid, uint64_t v2, uint64_t v1)
{
	struct jtr_ev e;

	memset(&e, 0, sizeof(e));
	e.type = JTR_EV_TASK;
	e.a = pid | (uint64_t)pid << 32;
	e.b = v2;
	e.x[2] = v1;
	jtr_cgroups_note(c, &e);
}

static void test_ids_to_paths(void **state)
{
	char root[] = "/tmp/jtr-cgroups-XXXXXX", mounts[320], p[512], deep[512];
	struct jtr_cgroups c;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(mounts, sizeof(mounts), "%s/mounts", root);
	snprintf(p, sizeof(p), "%s/v2", root);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/v1", root);
	assert_int_equal(mkdir(p, 0755), 0);
	f = fopen(mounts, "w");
	assert_non_null(f);
	/* a space in a mount point is \040 in /proc/self/mounts; the first of each kind wins */
	fprintf(f, "sysfs /sys sysfs rw 0 0\n"
		"cgroup2 %s/v2 cgroup2 rw,nsdelegate 0 0\n"
		"cgroup2 /elsewhere cgroup2 rw 0 0\n"
		"cgroup %s/cpu cgroup rw,cpu 0 0\n"
		"cgroup %s/v1 cgroup rw,nosuid,memory 0 0\n", root, root, root);
	fclose(f);
	assert_int_equal(jtr_cgroups_init(&c, mounts), 0);
	snprintf(p, sizeof(p), "%s/v2", root);
	assert_string_equal(c.v2_root, p);
	snprintf(p, sizeof(p), "%s/v1", root);
	assert_string_equal(c.v1_root, p);

	snprintf(p, sizeof(p), "%s/v2/a.scope", root);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/v2/a.scope/b", root);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/v1/docker", root);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/v1/docker/" ID64, root);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(deep, sizeof(deep), "%s/v2", root);
	for (int i = 0; i < JTR_CGROUPS_DEPTH + 2; i++) {
		strcat(deep, "/d");
		assert_int_equal(mkdir(deep, 0755), 0);
	}

	snprintf(p, sizeof(p), "%s/v2/a.scope/b", root);
	task(&c, 10, ino(p), 0);
	assert_string_equal(jtr_cgroups_task_label(&c, 10), "a.scope");
	snprintf(p, sizeof(p), "%s/v2", root);
	task(&c, 11, ino(p), 0);				/* the root: no label */
	assert_string_equal(jtr_cgroups_task_label(&c, 11), "");
	snprintf(p, sizeof(p), "%s/v1/docker/" ID64, root);
	task(&c, 12, ino(root), ino(p));		/* v2 unknown, v1 docker */
	assert_string_equal(jtr_cgroups_task_label(&c, 12), "docker 0123456789ab");
	task(&c, 13, ino(deep), 0);			/* deeper than a walk goes */
	assert_string_equal(jtr_cgroups_task_label(&c, 13), "");
	assert_string_equal(jtr_cgroups_task_label(&c, 99), "");	/* never seen */
	assert_true(jtr_cgroups_known(&c, 11) && !jtr_cgroups_known(&c, 99));
	assert_int_equal(c.pending, 0);
	/* one walk a hierarchy that had a new id, none for ids seen before */
	uint64_t walks = c.walks;

	snprintf(p, sizeof(p), "%s/v2/a.scope/b", root);
	task(&c, 14, ino(p), 0);
	assert_int_equal(c.walks, walks);
	assert_string_equal(jtr_cgroups_task_label(&c, 14), "a.scope");

	jtr_cgroups_free(&c);
	snprintf(p, sizeof(p), "rm -rf '%s'", root);
	assert_int_equal(system(p), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_ids_to_paths),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
