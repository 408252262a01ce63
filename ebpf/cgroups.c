// SPDX-License-Identifier: GPL-2.0-only
/* cgroups.c - cgroup ids to paths and container labels (cgroups.h) */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroups.h"

/* unescape - a /proc/self/mounts field: \040 and the like in place */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/* has_opt - is @opt one of the comma-separated @opts? */
static bool has_opt(const char *opts, const char *opt)
{
	size_t n = strlen(opt);

	for (const char *p = opts; p; p = strchr(p, ',')) {
		if (*p == ',')
			p++;
		if (!strncmp(p, opt, n) && (p[n] == ',' || p[n] == '\0'))
			return true;
	}
	return false;
}

static void find_mounts(struct jtr_cgroups *c, const char *mounts)
{
	FILE *f = fopen(mounts ? mounts : "/proc/self/mounts", "re");
	char line[1024];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char dev[256], dir[JTR_CGROUP_PATH], type[32], opts[512];

		if (sscanf(line, "%255s %255s %31s %511s", dev, dir, type, opts) != 4)
			continue;
		unescape(dir);
		if (!strcmp(type, "cgroup2") && !c->v2_root[0])
			snprintf(c->v2_root, sizeof(c->v2_root), "%s", dir);
		else if (!strcmp(type, "cgroup") && has_opt(opts, "memory") && !c->v1_root[0])
			snprintf(c->v1_root, sizeof(c->v1_root), "%s", dir);
	}
	fclose(f);
}

int jtr_cgroups_init(struct jtr_cgroups *c, const char *mounts)
{
	memset(c, 0, sizeof(*c));
	c->group = calloc(JTR_CGROUPS_MAX, sizeof(*c->group));
	c->task = calloc(JTR_CGROUPS_TASKS, sizeof(*c->task));
	if (!c->group || !c->task) {
		jtr_cgroups_free(c);
		return -ENOMEM;
	}
	find_mounts(c, mounts);
	return 0;
}

void jtr_cgroups_free(struct jtr_cgroups *c)
{
	free(c->group);
	free(c->task);
	c->group = NULL;
	c->task = NULL;
}

static size_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (size_t)x;
}

/* group_of - the slot of (@id, @v1): found, or a free one to take (NULL: full) */
static struct jtr_cgroup *group_of(const struct jtr_cgroups *c, uint64_t id, bool v1)
{
	size_t h = hash64(id * 2 + v1);

	for (size_t i = 0; i < JTR_CGROUPS_MAX; i++) {
		struct jtr_cgroup *g = &c->group[(h + i) % JTR_CGROUPS_MAX];

		if (!g->id || (g->id == id && g->v1 == v1))
			return g;
	}
	return NULL;
}

static void note_group(struct jtr_cgroups *c, uint64_t id, bool v1)
{
	struct jtr_cgroup *g;

	if (!id || !c->group || !(v1 ? c->v1_root : c->v2_root)[0])
		return;
	g = group_of(c, id, v1);
	if (!g || g->id || c->ngroups >= JTR_CGROUPS_MAX * 3 / 4)
		return;
	g->id = id;
	g->v1 = v1;
	c->ngroups++;
	c->pending++;
}

void jtr_cgroups_note(struct jtr_cgroups *c, const struct jtr_ev *e)
{
	uint32_t pid = (uint32_t)e->a;
	struct jtr_cgroup_task *t;

	if (e->type != JTR_EV_TASK || !pid || !c->task)
		return;
	t = &c->task[hash64(pid) % JTR_CGROUPS_TASKS];
	t->pid = pid;
	t->v2 = e->b;
	t->v1 = e->x[2];
	note_group(c, e->b, false);
	note_group(c, e->x[2], true);
	jtr_cgroups_resolve(c);
}

static void walk(struct jtr_cgroups *c, int fd, const char *path, bool v1, int depth);

/* found - @path (from the root) is the folder with inode @ino of a hierarchy */
static void found(struct jtr_cgroups *c, uint64_t ino, bool v1, const char *path)
{
	struct jtr_cgroup *g = group_of(c, ino, v1);

	if (!g || g->id != ino || g->resolved)
		return;
	snprintf(g->path, sizeof(g->path), "%s", path[0] ? path : "/");
	jtr_cgroup_label(g->path, g->label);
	g->resolved = true;
	c->pending--;
}

/* walk - the folders under @fd (@path from the root), @depth deep at most,
 * until nothing is pending */
static void walk(struct jtr_cgroups *c, int fd, const char *path, bool v1, int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;

	if (!d) {
		close(fd);
		return;
	}
	while (c->pending && (de = readdir(d))) {
		char sub[JTR_CGROUP_PATH];
		int n;

		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		n = snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		if (n < 0 || (size_t)n >= sizeof(sub))
			continue;
		found(c, de->d_ino, v1, sub);
		if (depth > 1 && c->pending) {
			int sfd = openat(dirfd(d), de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sfd >= 0)
				walk(c, sfd, sub, v1, depth - 1);
		}
	}
	closedir(d);
}

void jtr_cgroups_resolve(struct jtr_cgroups *c)
{
	if (!c->group || !c->pending)
		return;
	for (int v1 = 0; v1 < 2 && c->pending; v1++) {
		const char *root = v1 ? c->v1_root : c->v2_root;
		struct stat st;
		int fd;

		if (!root[0] || (fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
			continue;
		if (!fstat(fd, &st))
			found(c, st.st_ino, v1, "");
		c->walks++;
		walk(c, fd, "", v1, JTR_CGROUPS_DEPTH);
	}
	/* what no walk found is gone: not looked for again */
	for (size_t i = 0; c->pending && i < JTR_CGROUPS_MAX; i++)
		if (c->group[i].id && !c->group[i].resolved) {
			c->group[i].resolved = true;
			c->pending--;
		}
}

bool jtr_cgroups_known(const struct jtr_cgroups *c, uint32_t pid)
{
	return c && c->task && pid && c->task[hash64(pid) % JTR_CGROUPS_TASKS].pid == pid;
}

/* ids_label - the label of v2 cgroup @v2, else of v1 cgroup @v1 ("": none) */
static const char *ids_label(const struct jtr_cgroups *c, uint64_t v2, uint64_t v1)
{
	const struct jtr_cgroup *g;

	if ((g = group_of(c, v2, false)) && g->id && g->label[0])
		return g->label;
	if ((g = group_of(c, v1, true)) && g->id && g->label[0])
		return g->label;
	return "";
}

const char *jtr_cgroups_label(struct jtr_cgroups *c, uint64_t v2, uint64_t v1)
{
	if (!c->group)
		return "";
	note_group(c, v2, false);
	note_group(c, v1, true);
	jtr_cgroups_resolve(c);
	return ids_label(c, v2, v1);
}

const char *jtr_cgroups_task_label(const struct jtr_cgroups *c, uint32_t pid)
{
	const struct jtr_cgroup_task *t;

	if (!c || !c->task || !pid)
		return "";
	t = &c->task[hash64(pid) % JTR_CGROUPS_TASKS];
	return t->pid == pid ? ids_label(c, t->v2, t->v1) : "";
}

void jtr_cgroups_write(const struct jtr_cgroups *c, struct jtr_json *j)
{
	jtr_json_obj_begin(j, "cgroups");
	jtr_json_str(j, "v2_mount", c->v2_root);
	jtr_json_str(j, "v1_mount", c->v1_root);
	for (int v1 = 0; v1 < 2; v1++) {
		jtr_json_obj_begin(j, v1 ? "v1" : "v2");
		for (size_t i = 0; c->group && i < JTR_CGROUPS_MAX; i++) {
			const struct jtr_cgroup *g = &c->group[i];
			char id[24];

			if (!g->id || g->v1 != v1)
				continue;
			snprintf(id, sizeof(id), "%llu", (unsigned long long)g->id);
			jtr_json_obj_begin(j, id);
			if (g->path[0])
				jtr_json_str(j, "path", g->path);
			else
				jtr_json_null(j, "path");	/* gone before it was looked for */
			jtr_json_str(j, "label", g->label);
			jtr_json_obj_end(j);
		}
		jtr_json_obj_end(j);
	}
	jtr_json_obj_end(j);
}

/* hex_id - is @s, up to @end, a container ID (64 hex digits)? */
static bool hex_id(const char *s, size_t n)
{
	if (n != 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* container - a container ID in folder @f (@n bytes; @parent the folder
 * above, @pn bytes): its runtime's word and where the ID starts */
static const char *container(const char *f, size_t n, const char *parent, size_t pn,
			     const char **id)
{
	static const struct { const char *prefix, *word; } scopes[] = {
		{ "docker-", "docker" }, { "cri-containerd-", "containerd" },
		{ "crio-", "cri-o" }, { "libpod-", "podman" },
	};
	const size_t scope = strlen(".scope");

	for (size_t k = 0; k < sizeof(scopes) / sizeof(scopes[0]); k++) {
		size_t p = strlen(scopes[k].prefix);

		if (n == p + 64 + scope && !strncmp(f, scopes[k].prefix, p) &&
		    !strncmp(f + p + 64, ".scope", scope) && hex_id(f + p, 64)) {
			*id = f + p;
			return scopes[k].word;
		}
	}
	if (hex_id(f, n)) {
		*id = f;
		return pn == 6 && !strncmp(parent, "docker", 6) ? "docker" : "container";
	}
	return NULL;
}

/* pod_uid - a Kubernetes pod's UID in folder @f (@n bytes) into @uid (37
 * bytes), dashes for the systemd driver's underscores */
static bool pod_uid(const char *f, size_t n, char *uid)
{
	const char *u = NULL;
	size_t len = 0;

	if (n == 3 + 36 && !strncmp(f, "pod", 3)) {
		u = f + 3;			/* cgroupfs: pod<uid> */
		len = 36;
	} else if (n > 12 + 36 && !strncmp(f, "kubepods", 8) &&
		   !strncmp(f + n - 6, ".slice", 6) && !strncmp(f + n - 6 - 36 - 3, "pod", 3)) {
		u = f + n - 6 - 36;		/* systemd: kubepods-...-pod<uid>.slice */
		len = 36;
	}
	if (!u)
		return false;
	for (size_t i = 0; i < len; i++) {
		char ch = u[i] == '_' ? '-' : u[i];

		if (!isxdigit((unsigned char)ch) && ch != '-')
			return false;
		uid[i] = ch;
	}
	uid[len] = '\0';
	return true;
}

void jtr_cgroup_label(const char *path, char *out)
{
	const char *f[JTR_CGROUPS_DEPTH + 1], *id = NULL, *word = NULL, *p = path;
	size_t fn[JTR_CGROUPS_DEPTH + 1];
	char uid[40] = "";
	int n = 0;

	out[0] = '\0';
	/* the folders of the path, the last JTR_CGROUPS_DEPTH + 1 of them */
	while (*p) {
		const char *e;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchr(p, '/');
		if (!e)
			e = p + strlen(p);
		if (n == JTR_CGROUPS_DEPTH + 1) {
			memmove(f, f + 1, sizeof(f[0]) * JTR_CGROUPS_DEPTH);
			memmove(fn, fn + 1, sizeof(fn[0]) * JTR_CGROUPS_DEPTH);
			n--;
		}
		f[n] = p;
		fn[n++] = (size_t)(e - p);
		p = e;
	}
	for (int i = n - 1; i >= 0 && !word; i--)
		word = container(f[i], fn[i], i ? f[i - 1] : "", i ? fn[i - 1] : 0, &id);
	for (int i = n - 1; i >= 0 && !uid[0]; i--)
		pod_uid(f[i], fn[i], uid);
	if (word)
		snprintf(out, JTR_CGROUP_LABEL, "%s%s%s%s %.12s", uid[0] ? "pod " : "", uid,
			 uid[0] ? " " : "", word, id);
	else if (uid[0])
		snprintf(out, JTR_CGROUP_LABEL, "pod %s", uid);
	else
		for (int i = n - 1; i >= 0; i--)
			if ((fn[i] > 6 && !strncmp(f[i] + fn[i] - 6, ".scope", 6)) ||
			    (fn[i] > 8 && !strncmp(f[i] + fn[i] - 8, ".service", 8))) {
				snprintf(out, JTR_CGROUP_LABEL, "%.*s", (int)fn[i], f[i]);
				break;
			}
}
