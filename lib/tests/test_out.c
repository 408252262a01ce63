// SPDX-License-Identifier: GPL-2.0-only
/* test_out.c - atomic files, the results folder, and the CPU helpers that
 * read sysfs-style files. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <limits.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "jtr_cpu.h"
#include "jtr_out.h"

static char top[PATH_MAX];

static int setup(void **state)
{
	(void)state;
	snprintf(top, sizeof(top), "/tmp/jtr-test-out-XXXXXX");
	return mkdtemp(top) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	return system(cmd) == 0 ? 0 : -1;
}

static bool exists(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0;
}

static int count_entries(const char *dir)
{
	char cmd[PATH_MAX + 64];
	FILE *f;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", dir);
	f = popen(cmd, "r");
	if (f && fscanf(f, "%d", &n) != 1)
		n = -1;
	if (f)
		pclose(f);
	return n;
}

static void test_afile(void **state)
{
	struct jtr_afile a;
	char path[PATH_MAX + 32], buf[64] = "";
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/x.json", top);
	assert_int_equal(jtr_afile_open(&a, path), 0);
	fputs("hello", a.f);
	assert_false(exists(path));		/* nothing under the final name yet */
	assert_true(exists(a.tmp));
	assert_int_equal(jtr_afile_commit(&a), 0);
	assert_true(exists(path));
	assert_false(exists(a.tmp));
	f = fopen(path, "r");
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "hello");

	/* abort leaves the old file and no temporary */
	assert_int_equal(jtr_afile_open(&a, path), 0);
	fputs("half", a.f);
	jtr_afile_abort(&a);
	assert_false(exists(a.tmp));
	f = fopen(path, "r");
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "hello");
	assert_int_equal(count_entries(top), 1);
}

static void test_final_name(void **state)
{
	static const char *const cases[][2] = {
		{ "/a/b/.r.partial-13068/summary.txt", "/a/b/r/summary.txt" },
		{ "rel/.x.y.partial-1/dump/.d.partial-22/trace.json", "rel/x.y/dump/d/trace.json" },
		{ ".r.partial-7/result.json", "r/result.json" },
		/* not a draft folder: a file, no PID, no NAME, no dot, more than digits */
		{ "/a/.r.partial-12", "/a/.r.partial-12" },
		{ "/a/.r.partial-/f", "/a/.r.partial-/f" },
		{ "/a/..partial-1/f", "/a/..partial-1/f" },
		{ "/a/r.partial-1/f", "/a/r.partial-1/f" },
		{ "/a/.r.partial-1x/f", "/a/.r.partial-1x/f" },
		{ "/a//b/", "/a//b/" },
		{ "", "" },
	};
	char buf[PATH_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		jtr_final_name(cases[i][0], buf, sizeof(buf));
		assert_string_equal(buf, cases[i][1]);
	}
	/* cut short to the buffer, still a string */
	jtr_final_name("/a/b/.r.partial-13068/summary.txt", buf, 8);
	assert_string_equal(buf, "/a/b/r/");
	jtr_final_name("/a/b/.r.partial-13068/summary.txt", buf, 5);
	assert_string_equal(buf, "/a/b");
}

static void test_outdir_new(void **state)
{
	struct jtr_outdir o;
	struct jtr_err e;
	struct jtr_afile a;
	char dir[PATH_MAX + 32], file[PATH_MAX + 64];

	(void)state;
	snprintf(dir, sizeof(dir), "%s/run1", top);
	assert_int_equal(jtr_outdir_prepare(&o, dir, "h", "gap", &e), 0);
	assert_true(o.is_tmp);
	assert_false(exists(dir));		/* hidden until commit */
	assert_non_null(strstr(o.work, "/.run1.partial-"));
	assert_int_equal(jtr_outdir_path(&o, "result.json", file, sizeof(file)), 0);
	assert_int_equal(jtr_afile_open(&a, file), 0);
	assert_int_equal(jtr_afile_commit(&a), 0);
	assert_int_equal(jtr_outdir_commit(&o, &e), 0);
	assert_true(exists(dir));
	snprintf(file, sizeof(file), "%s/result.json", dir);
	assert_true(exists(file));

	/* an existing folder is written into directly */
	assert_int_equal(jtr_outdir_prepare(&o, dir, "h", "gap", &e), 0);
	assert_false(o.is_tmp);
	assert_string_equal(o.work, dir);
}

static void test_outdir_abort(void **state)
{
	struct jtr_outdir o;
	struct jtr_err e;
	struct jtr_afile a;
	char dir[PATH_MAX + 32], file[PATH_MAX + 64];
	int before = count_entries(top);

	(void)state;
	snprintf(dir, sizeof(dir), "%s/failed", top);
	assert_int_equal(jtr_outdir_prepare(&o, dir, "h", "gap", &e), 0);
	jtr_outdir_path(&o, "a.txt", file, sizeof(file));
	assert_int_equal(jtr_afile_open(&a, file), 0);
	assert_int_equal(jtr_afile_commit(&a), 0);
	jtr_outdir_abort(&o);
	assert_false(exists(dir));
	assert_false(exists(o.work));
	assert_int_equal(count_entries(top), before);
}

static void test_outdir_errors(void **state)
{
	struct jtr_outdir o;
	struct jtr_err e;
	char dir[PATH_MAX + 32], file[PATH_MAX + 32];
	FILE *f;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/no/such/parent/run", top);
	assert_true(jtr_outdir_prepare(&o, dir, "h", "gap", &e) < 0);
	assert_non_null(strstr(e.msg, dir));
	assert_non_null(strstr(e.msg, "choose a folder"));

	snprintf(file, sizeof(file), "%s/plainfile", top);
	f = fopen(file, "w");
	fclose(f);
	assert_int_equal(jtr_outdir_prepare(&o, file, "h", "gap", &e), -ENOTDIR);
	assert_non_null(strstr(e.msg, "not a folder"));
	assert_true(jtr_outdir_prepare(&o, "", "h", "gap", &e) < 0);
	unlink(file);
}

/* touch - an empty file @name in @dir */
static void touch(const char *dir, const char *name)
{
	char p[PATH_MAX + 64];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fclose(f);
}

/* in_dir - does @dir hold @name? */
static bool in_dir(const char *dir, const char *name)
{
	char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return exists(p);
}

static void write_file(struct jtr_outdir *o, const char *name)
{
	char file[PATH_MAX + 64];
	struct jtr_afile a;

	assert_int_equal(jtr_outdir_path(o, name, file, sizeof(file)), 0);
	assert_int_equal(jtr_afile_open(&a, file), 0);
	assert_int_equal(jtr_afile_commit(&a), 0);
}

static void test_outdir_stale(void **state)
{
	struct jtr_outdir o;
	struct jtr_err e;
	char dir[PATH_MAX + 32], sub[PATH_MAX + 64];

	(void)state;
	/* an earlier jtr run's folder: its probe files, the tracer's, the attribution */
	snprintf(dir, sizeof(dir), "%s/old-run", top);
	assert_int_equal(mkdir(dir, 0755), 0);
	touch(dir, "result.json");
	touch(dir, "summary.txt");
	touch(dir, "outliers.csv");
	touch(dir, "events.bin");
	touch(dir, "trace.json");
	touch(dir, "attribution.txt");
	touch(dir, "sched.data");
	touch(dir, "notes.txt");		/* not jtr's: left alone */
	snprintf(sub, sizeof(sub), "%s/report", dir);
	assert_int_equal(mkdir(sub, 0755), 0);

	/* a new gap result written into it: the earlier result's other files go */
	assert_int_equal(jtr_outdir_prepare(&o, dir, "h", "gap", &e), 0);
	write_file(&o, "summary.txt");
	write_file(&o, "outliers.csv");
	write_file(&o, "result.json");
	assert_true(in_dir(dir, "events.bin"));	/* the old result is whole until commit */
	assert_int_equal(jtr_outdir_commit(&o, &e), 0);
	assert_true(in_dir(dir, "result.json") && in_dir(dir, "summary.txt") &&
		    in_dir(dir, "outliers.csv"));
	assert_false(in_dir(dir, "events.bin") || in_dir(dir, "trace.json") ||
		     in_dir(dir, "attribution.txt") || in_dir(dir, "sched.data"));
	assert_true(in_dir(dir, "notes.txt") && in_dir(dir, "report"));

	/* the tracer writes no result.json: it replaces its own files only */
	assert_int_equal(jtr_outdir_prepare(&o, dir, "h", "trace", &e), 0);
	write_file(&o, "events.bin");
	write_file(&o, "trace.json");
	assert_int_equal(jtr_outdir_commit(&o, &e), 0);
	assert_true(in_dir(dir, "result.json") && in_dir(dir, "outliers.csv") &&
		    in_dir(dir, "events.bin"));

	/* a folder under a result file's name is not removed, nor an error */
	snprintf(sub, sizeof(sub), "%s/attribution.txt", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(jtr_outdir_prepare(&o, dir, "h", "gap", &e), 0);
	write_file(&o, "result.json");
	assert_int_equal(jtr_outdir_commit(&o, &e), 0);
	assert_true(in_dir(dir, "attribution.txt") && !in_dir(dir, "events.bin") &&
		    !in_dir(dir, "outliers.csv"));
}

static void test_outdir_result_as(void **state)
{
	struct jtr_outdir o;
	struct jtr_err e;
	char dir[PATH_MAX + 32], file[PATH_MAX + 64];

	(void)state;
	/* jtr run's probe: result.json under the name jtr run reads it from; the
	 * folder's earlier result's files still go (it wrote its result) */
	snprintf(dir, sizeof(dir), "%s/by-run", top);
	assert_int_equal(mkdir(dir, 0755), 0);
	touch(dir, "events.bin");
	assert_int_equal(jtr_outdir_prepare(&o, dir, "h", "gap", &e), 0);
	assert_string_equal(o.result_as, "");
	snprintf(o.result_as, sizeof(o.result_as), ".probe-result.json");
	write_file(&o, "result.json");
	write_file(&o, "summary.txt");
	assert_int_equal(jtr_outdir_commit(&o, &e), 0);
	assert_true(in_dir(dir, ".probe-result.json") && in_dir(dir, "summary.txt"));
	assert_false(in_dir(dir, "result.json") || in_dir(dir, "events.bin"));
	o.result_as[0] = '\0';
	assert_int_equal(jtr_outdir_path(&o, "result.json", file, sizeof(file)), 0);
	assert_non_null(strstr(file, "/by-run/result.json"));
}

static void test_outdir_messages_whole(void **state)
{
	struct jtr_outdir o;
	struct jtr_err e;
	char dir[PATH_MAX + 64], *huge;
	size_t n;

	(void)state;
	/* a long path (about 3000 bytes) whose parent is missing: named whole, fix last */
	n = (size_t)snprintf(dir, sizeof(dir), "%s/", top);
	while (n < 3000)
		n += (size_t)snprintf(dir + n, sizeof(dir) - n, "abcdefghij/");
	snprintf(dir + n, sizeof(dir) - n, "run");
	assert_true(jtr_outdir_prepare(&o, dir, "h", "gap", &e) < 0);
	assert_non_null(strstr(e.msg, dir));
	assert_non_null(strstr(e.msg, "choose a folder whose parent exists and that you can "
			       "write to"));

	/* longer than PATH_MAX: said with its length, the message still ends with the fix */
	huge = malloc(3 * PATH_MAX);
	assert_non_null(huge);
	memset(huge, 'x', 3 * PATH_MAX - 1);
	huge[3 * PATH_MAX - 1] = '\0';
	assert_int_equal(jtr_outdir_prepare(&o, huge, "h", "gap", &e), -ENAMETOOLONG);
	assert_non_null(strstr(e.msg, "give a shorter one"));
	free(huge);

	assert_int_equal(jtr_outdir_prepare(&o, "", "h", "gap", &e), -EINVAL);
	assert_string_equal(e.msg, "-o '': give a folder name, e.g. -o run1");
}

static void test_default_name(void **state)
{
	struct jtr_outdir o;
	struct jtr_err e;
	char name[128], cwd[PATH_MAX], link[PATH_MAX];
	ssize_t n;

	(void)state;
	assert_int_equal(jtr_outdir_default_name(name, sizeof(name), "a/b c", "gap", 0), 0);
	assert_int_equal(strlen(name), strlen("19700101-000000-a_b_c-gap"));
	assert_non_null(strstr(name, "-a_b_c-gap"));

	/* no -o: a new folder under ./results and a latest link to it */
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(top), 0);
	assert_int_equal(jtr_outdir_prepare(&o, NULL, "host", "null", &e), 0);
	assert_int_equal(jtr_outdir_commit(&o, &e), 0);
	assert_true(exists(o.final));
	assert_non_null(strstr(o.final, "results/"));
	n = readlink("results/latest", link, sizeof(link) - 1);
	assert_true(n > 0);
	link[n] = '\0';
	assert_string_equal(link, o.final + strlen("results/"));
	assert_int_equal(chdir(cwd), 0);
}

static void test_cpus_from_file(void **state)
{
	char p[PATH_MAX + 32];
	cpu_set_t s;
	FILE *f;

	(void)state;
	snprintf(p, sizeof(p), "%s/iso", top);
	f = fopen(p, "w");
	fputs("1,3-4\n", f);
	fclose(f);
	assert_int_equal(jtr_cpus_from_file(p, &s), 0);
	assert_int_equal(CPU_COUNT(&s), 3);
	f = fopen(p, "w");
	fputs("\n", f);
	fclose(f);
	assert_int_equal(jtr_cpus_from_file(p, &s), 0);
	assert_int_equal(CPU_COUNT(&s), 0);
	unlink(p);
	assert_int_equal(jtr_cpus_from_file(p, &s), -ENOENT);
}

static void test_cpu_check(void **state)
{
	struct jtr_err e;
	int def = jtr_cpu_default();

	(void)state;
	assert_int_equal(jtr_cpu_check(def, &e), 0);
	assert_int_equal(jtr_cpu_check(999, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "CPU 999 is not online"));
	assert_int_equal(jtr_cpu_check(-3, &e), -EINVAL);
}

/* a CPU outside the affinity but in the cpuset (a shell moved off an
 * isolated CPU) may be measured: 1 and a message that says so */
static void test_cpu_check_outside_affinity(void **state)
{
	cpu_set_t saved, one, cpuset;
	struct jtr_err e;
	int other = -1;

	(void)state;
	assert_int_equal(jtr_cpus_cpuset(&cpuset), 0);
	assert_true(CPU_COUNT(&cpuset) > 0);
	assert_int_equal(sched_getaffinity(0, sizeof(saved), &saved), 0);
	for (int c = 1; c < CPU_SETSIZE && other < 0; c++)
		if (CPU_ISSET(c, &cpuset) && CPU_ISSET(0, &cpuset))
			other = c;
	if (other < 0)
		skip();
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	int rc = jtr_cpu_check(other, &e);

	sched_setaffinity(0, sizeof(saved), &saved);
	assert_int_equal(rc, 1);
	assert_non_null(strstr(e.msg, "outside this process's affinity (0,"));
}

static void test_rt_throttle_warning(void **state)
{
	struct jtr_rt_throttle on = { .runtime_us = 950000, .period_us = 1000000,
				      .sysctl_runtime_us = 950000, .known = true };
	struct jtr_rt_throttle off = { .runtime_us = -1, .period_us = 1000000,
				       .sysctl_runtime_us = -1, .known = true };
	struct jtr_rt_throttle group = { .runtime_us = 800000, .period_us = 1000000,
					 .sysctl_runtime_us = 950000, .cgroup = "/",
					 .known = true };
	char w[512];

	(void)state;
	assert_true(jtr_rt_throttle_warning(&on, w, sizeof(w)));
	assert_non_null(strstr(w, "sched_rt_runtime_us=950000"));
	assert_non_null(strstr(w, "about 50 ms every 1000 ms"));
	assert_non_null(strstr(w, "sysctl kernel.sched_rt_runtime_us=-1"));
	assert_false(jtr_rt_throttle_warning(&off, w, sizeof(w)));
	assert_true(jtr_rt_throttle_warning(&group, w, sizeof(w)));
	assert_non_null(strstr(w, "(cpu.rt_runtime_us=800000 of 1000000 in cgroup /)"));
	assert_non_null(strstr(w, "about 200 ms every 1000 ms"));
}

/* put - write @text to @dir/@rel, making its folders */
static void put(const char *dir, const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (char *p = path + strlen(dir) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_rt_throttle_read_at(void **state)
{
	/* a v1 cpu controller mounted at /sys/fs/cgroup/cpu,cpuacct, the process in
	 * /jobs/a; inside a container whose mount's root is /docker/x, the process
	 * in /docker/x/svc */
	char fake[64] = "/tmp/jtr-rt-XXXXXX", cmd[128];
	struct jtr_rt_throttle t;

	(void)state;
	assert_non_null(mkdtemp(fake));
	put(fake, "proc/sys/kernel/sched_rt_runtime_us", "950000\n");
	put(fake, "proc/sys/kernel/sched_rt_period_us", "1000000\n");
	/* no cgroup file: the sysctls */
	assert_int_equal(jtr_rt_throttle_read_at(&t, fake), 0);
	assert_true(t.known);
	assert_int_equal(t.runtime_us, 950000);
	assert_string_equal(t.cgroup, "");
	put(fake, "proc/self/cgroup", "12:pids:/\n4:cpu,cpuacct:/jobs/a\n1:name=systemd:/\n"
	    "0::/\n");
	put(fake, "proc/self/mountinfo",
	    "30 25 0:26 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
	    "31 25 0:27 / /sys/fs/cgroup/cpuset rw shared:9 - cgroup cgroup rw,cpuset\n"
	    "32 25 0:28 / /sys/fs/cgroup/cpu,cpuacct rw shared:10 - cgroup cgroup "
	    "rw,cpu,cpuacct\n");
	/* the controller without RT group scheduling: the sysctls */
	assert_int_equal(jtr_rt_throttle_read_at(&t, fake), 0);
	assert_string_equal(t.cgroup, "");
	put(fake, "sys/fs/cgroup/cpu,cpuacct/jobs/a/cpu.rt_runtime_us", "800000\n");
	put(fake, "sys/fs/cgroup/cpu,cpuacct/jobs/a/cpu.rt_period_us", "1000000\n");
	assert_int_equal(jtr_rt_throttle_read_at(&t, fake), 0);
	assert_string_equal(t.cgroup, "/jobs/a");
	assert_int_equal(t.runtime_us, 800000);
	assert_int_equal(t.period_us, 1000000);
	assert_int_equal(t.sysctl_runtime_us, 950000);
	/* the sysctl at -1 turns it off, whatever the group says */
	put(fake, "proc/sys/kernel/sched_rt_runtime_us", "-1\n");
	assert_int_equal(jtr_rt_throttle_read_at(&t, fake), 0);
	assert_int_equal(t.runtime_us, -1);
	put(fake, "proc/sys/kernel/sched_rt_runtime_us", "950000\n");
	/* a container: the mount's root is the container's cgroup */
	put(fake, "proc/self/cgroup", "4:cpuacct,cpu:/docker/x/svc\n");
	put(fake, "proc/self/mountinfo", "32 25 0:28 /docker/x /sys/fs/cgroup/cpu rw - cgroup "
	    "cgroup rw,cpuacct,cpu\n");
	put(fake, "sys/fs/cgroup/cpu/svc/cpu.rt_runtime_us", "0\n");
	put(fake, "sys/fs/cgroup/cpu/svc/cpu.rt_period_us", "1000000\n");
	assert_int_equal(jtr_rt_throttle_read_at(&t, fake), 0);
	assert_string_equal(t.cgroup, "/docker/x/svc");
	assert_int_equal(t.runtime_us, 0);
	/* the root group */
	put(fake, "proc/self/cgroup", "4:cpu,cpuacct:/\n");
	put(fake, "proc/self/mountinfo", "32 25 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup "
	    "rw,cpu,cpuacct\n");
	put(fake, "sys/fs/cgroup/cpu/cpu.rt_runtime_us", "900000\n");
	put(fake, "sys/fs/cgroup/cpu/cpu.rt_period_us", "1000000\n");
	assert_int_equal(jtr_rt_throttle_read_at(&t, fake), 0);
	assert_string_equal(t.cgroup, "/");
	assert_int_equal(t.runtime_us, 900000);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", fake);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_afile),
		cmocka_unit_test(test_final_name),
		cmocka_unit_test(test_outdir_new),
		cmocka_unit_test(test_outdir_abort),
		cmocka_unit_test(test_outdir_errors),
		cmocka_unit_test(test_outdir_stale),
		cmocka_unit_test(test_outdir_result_as),
		cmocka_unit_test(test_outdir_messages_whole),
		cmocka_unit_test(test_default_name),
		cmocka_unit_test(test_cpus_from_file),
		cmocka_unit_test(test_cpu_check),
		cmocka_unit_test(test_cpu_check_outside_affinity),
		cmocka_unit_test(test_rt_throttle_warning),
		cmocka_unit_test(test_rt_throttle_read_at),
	};

	return cmocka_run_group_tests_name("out", tests, setup, teardown);
}
