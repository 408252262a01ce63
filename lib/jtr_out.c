// SPDX-License-Identifier: GPL-2.0-only
/* jtr_out.c - results on disk: atomic files and the results folder. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jtr_out.h"

static const char *const result_files[] = { JTR_RESULT_FILES };
#define N_RESULT_FILES (sizeof(result_files) / sizeof(result_files[0]))

/* partial_len - the length of NAME when the component of @len bytes at @c
 * is .NAME.partial-PID, else 0 */
static size_t partial_len(const char *c, size_t len)
{
	static const char mark[] = ".partial-";
	size_t digits = 0;

	if (len < 2 || c[0] != '.')
		return 0;
	while (digits < len && isdigit((unsigned char)c[len - 1 - digits]))
		digits++;
	if (!digits || len < 1 + 1 + (sizeof(mark) - 1) + digits)
		return 0;
	if (memcmp(c + len - digits - (sizeof(mark) - 1), mark, sizeof(mark) - 1))
		return 0;
	return len - digits - (sizeof(mark) - 1) - 1;
}

/* jtr_final_name - see jtr_out.h */
void jtr_final_name(const char *path, char *buf, size_t n)
{
	size_t k = 0;

	if (!n)
		return;
	for (const char *c = path; *c && k + 1 < n;) {
		const char *end = strchr(c, '/');
		size_t len = end ? (size_t)(end - c) : strlen(c);
		size_t name = end ? partial_len(c, len) : 0;	/* a folder, not a file */
		int w = name ? snprintf(buf + k, n - k, "%.*s/", (int)name, c + 1) :
			       snprintf(buf + k, n - k, "%.*s%s", (int)len, c, end ? "/" : "");

		k += w < 0 ? 0 : (size_t)w;
		if (k >= n)
			k = n - 1;
		c = end ? end + 1 : c + len;
	}
	buf[k] = '\0';
}

/* jtr_afile_open - open a temporary beside @path for writing */
int jtr_afile_open(struct jtr_afile *a, const char *path)
{
	int fd;

	memset(a, 0, sizeof(*a));
	if (snprintf(a->path, sizeof(a->path), "%s", path) >= (int)sizeof(a->path) ||
	    snprintf(a->tmp, sizeof(a->tmp), "%s.tmp-%d", path, (int)getpid()) >= (int)sizeof(a->tmp))
		return -ENAMETOOLONG;
	fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd == -1)
		return -errno;
	a->f = fdopen(fd, "w");
	if (!a->f) {
		int rc = -errno;

		close(fd);
		unlink(a->tmp);
		return rc;
	}
	return 0;
}

/* jtr_afile_commit - flush, fsync, close and rename into place */
int jtr_afile_commit(struct jtr_afile *a)
{
	int rc = jtr_write_errno(a->f);

	if (rc == 0 && fsync(fileno(a->f)) == -1)
		rc = -errno;
	if (fclose(a->f) != 0 && rc == 0)
		rc = -EIO;
	a->f = NULL;
	if (rc == 0 && rename(a->tmp, a->path) == -1)
		rc = -errno;
	if (rc < 0)
		unlink(a->tmp);
	return rc;
}

/* jtr_afile_abort - close and remove the temporary */
void jtr_afile_abort(struct jtr_afile *a)
{
	if (a->f)
		fclose(a->f);
	a->f = NULL;
	unlink(a->tmp);
}

/* jtr_outdir_default_name - "YYYYmmdd-HHMMSS-HOST-TOOL" */
int jtr_outdir_default_name(char *buf, size_t n, const char *host, const char *tool, long t)
{
	time_t tt = (time_t)t;
	struct tm tm;
	char stamp[32], h[64];
	size_t i;

	localtime_r(&tt, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	/* keep the host part to safe file-name characters */
	snprintf(h, sizeof(h), "%s", host && *host ? host : "host");
	for (i = 0; h[i]; i++)
		if (!((h[i] >= 'a' && h[i] <= 'z') || (h[i] >= 'A' && h[i] <= 'Z') ||
		      (h[i] >= '0' && h[i] <= '9') || h[i] == '-' || h[i] == '_'))
			h[i] = '_';
	if (snprintf(buf, n, "%s-%s-%s", stamp, h, tool) >= (int)n)
		return -ENAMETOOLONG;
	return 0;
}

/* split - parent folder and base name of @path */
static int split(const char *path, char *parent, size_t pn, char *base, size_t bn)
{
	char a[PATH_MAX], b[PATH_MAX];

	if (snprintf(a, sizeof(a), "%s", path) >= (int)sizeof(a))
		return -ENAMETOOLONG;
	memcpy(b, a, sizeof(a));
	/* "dir/" names dir, not an empty base */
	for (size_t l = strlen(b); l > 1 && b[l - 1] == '/'; l--)
		b[l - 1] = a[l - 1] = '\0';
	snprintf(parent, pn, "%s", dirname(a));
	snprintf(base, bn, "%s", basename(b));
	return 0;
}

/* jtr_outdir_prepare - decide and create where results go */
int jtr_outdir_prepare(struct jtr_outdir *o, const char *dir, const char *host,
		       const char *tool, struct jtr_err *e)
{
	char parent[PATH_MAX], base[PATH_MAX], name[256];
	struct stat st;
	int rc;

	memset(o, 0, sizeof(*o));
	if (!dir) {
		rc = jtr_outdir_default_name(name, sizeof(name), host, tool, (long)time(NULL));
		if (rc < 0)
			return jtr_err_set(e, rc, "results folder name too long");
		if (mkdir("results", 0755) == -1 && errno != EEXIST)
			return jtr_err_set(e, -errno,
					   "cannot create the results folder 'results' here: %s; "
					   "run from a folder you can write to, or give -o DIR",
					   strerror(errno));
		snprintf(o->results_root, sizeof(o->results_root), "results");
		/* two runs in the same second get -2, -3, ... */
		snprintf(o->final, sizeof(o->final), "results/%s", name);
		for (int k = 2; stat(o->final, &st) == 0 && k < 1000; k++)
			snprintf(o->final, sizeof(o->final), "results/%s-%d", name, k);
	} else {
		if (!*dir)
			return jtr_err_set(e, -EINVAL, "-o '': give a folder name, e.g. -o run1");
		if (snprintf(o->final, sizeof(o->final), "%s", dir) >= (int)sizeof(o->final))
			return jtr_err_set(e, -ENAMETOOLONG, "-o %.64s...: a path of %zu bytes, "
					   "longer than the %d this system takes; give a shorter one",
					   dir, strlen(dir), PATH_MAX - 1);
	}

	if (stat(o->final, &st) == 0) {
		if (!S_ISDIR(st.st_mode))
			return jtr_err_set(e, -ENOTDIR, "-o %s: exists and is not a folder; "
					   "give a new or existing folder", o->final);
		if (access(o->final, W_OK | X_OK) == -1)
			return jtr_err_set(e, -errno, "-o %s: cannot write in this folder: %s; "
					   "choose a folder you can write to", o->final, strerror(errno));
		snprintf(o->work, sizeof(o->work), "%s", o->final);
		o->prepared = true;
		return 0;
	}
	rc = split(o->final, parent, sizeof(parent), base, sizeof(base));
	if (rc < 0)
		return jtr_err_set(e, rc, "-o %s: path too long", o->final);
	if (snprintf(o->work, sizeof(o->work), "%s/.%s.partial-%d", parent, base,
		     (int)getpid()) >= (int)sizeof(o->work))
		return jtr_err_set(e, -ENAMETOOLONG, "-o %s: path too long", o->final);
	if (mkdir(o->work, 0755) == -1)
		return jtr_err_set(e, -errno, "-o %s: cannot create the results folder: %s; "
				   "choose a folder whose parent exists and that you can write to",
				   o->final, strerror(errno));
	o->is_tmp = true;
	o->prepared = true;
	return 0;
}

/* written_as - the file name @name is written under in @o: result.json under
 * o->result_as when it is set, every other file under its own */
static const char *written_as(const struct jtr_outdir *o, const char *name)
{
	return o->result_as[0] && !strcmp(name, "result.json") ? o->result_as : name;
}

/* jtr_outdir_path - @name inside the folder being written (noted as written) */
int jtr_outdir_path(struct jtr_outdir *o, const char *name, char *buf, size_t n)
{
	if (snprintf(buf, n, "%s/%s", o->work, written_as(o, name)) >= (int)n)
		return -ENAMETOOLONG;
	for (size_t i = 0; i < N_RESULT_FILES; i++)
		if (!strcmp(name, result_files[i]))
			o->written |= 1u << i;
	return 0;
}

/* remove_stale - an earlier result's files in the existing folder @o */
static int remove_stale(struct jtr_outdir *o, struct jtr_err *e)
{
	char p[PATH_MAX + 64];

	if (!(o->written & 1u))		/* no result.json: not a result (jtr trace) */
		return 0;
	for (size_t i = 1; i < N_RESULT_FILES; i++) {
		if (o->written & (1u << i))
			continue;
		snprintf(p, sizeof(p), "%s/%s", o->work, result_files[i]);
		/* a folder of that name is no file of a result: left alone */
		if (unlink(p) == -1 && errno != ENOENT && errno != EISDIR)
			return jtr_err_set(e, -errno, "cannot remove %s, left there by an earlier "
					   "result: %s; remove it, or give a new folder with -o",
					   p, strerror(errno));
	}
	return 0;
}

/* jtr_outdir_commit - move the folder into place; point results/latest at it */
int jtr_outdir_commit(struct jtr_outdir *o, struct jtr_err *e)
{
	if (!o->prepared)
		return 0;
	if (!o->is_tmp) {
		int rc = remove_stale(o, e);

		if (rc < 0)
			return rc;
	} else {
		if (rename(o->work, o->final) == -1)
			return jtr_err_set(e, -errno, "cannot move results into %s: %s",
					   o->final, strerror(errno));
		snprintf(o->work, sizeof(o->work), "%s", o->final);
		o->is_tmp = false;
	}
	if (o->results_root[0]) {
		char link[PATH_MAX + 16], tmp[PATH_MAX + 32];
		const char *rel = o->final + strlen(o->results_root) + 1;

		/* replace the link atomically: make it beside, then rename over */
		snprintf(link, sizeof(link), "%s/latest", o->results_root);
		snprintf(tmp, sizeof(tmp), "%s/.latest-%d", o->results_root, (int)getpid());
		unlink(tmp);
		if (symlink(rel, tmp) == 0 && rename(tmp, link) == -1)
			unlink(tmp);
	}
	o->prepared = false;
	return 0;
}

/* jtr_outdir_abort - remove a hidden folder and what was written in it */
void jtr_outdir_abort(struct jtr_outdir *o)
{
	DIR *d;
	struct dirent *de;
	char p[PATH_MAX + 256];

	if (!o->prepared || !o->is_tmp)
		return;
	d = opendir(o->work);
	if (d) {
		while ((de = readdir(d)) != NULL) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			snprintf(p, sizeof(p), "%s/%s", o->work, de->d_name);
			unlink(p);
		}
		closedir(d);
	}
	rmdir(o->work);
	o->prepared = false;
}
