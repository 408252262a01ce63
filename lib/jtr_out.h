/* SPDX-License-Identifier: GPL-2.0-only */
/* jtr_out.h - results on disk: atomic files and the results folder.
 *
 * A file is written as NAME.tmp-PID beside its final name, flushed, fsynced
 * and renamed, so a reader sees the old file or the whole new one. A new
 * results folder is filled as a hidden .NAME.partial-PID sibling and renamed
 * into place at the end, so a failed or killed run leaves no half-written
 * folder under the name the user asked for.
 */
#ifndef JTR_OUT_H
#define JTR_OUT_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#include "jtr_err.h"

struct jtr_afile {
	FILE *f;
	char path[PATH_MAX];
	char tmp[PATH_MAX];
};

/* jtr_afile_open - open a temporary beside @path for writing */
int jtr_afile_open(struct jtr_afile *a, const char *path);

/* jtr_afile_commit - flush, fsync, close and rename into place */
int jtr_afile_commit(struct jtr_afile *a);

/* jtr_afile_abort - close and remove the temporary */
void jtr_afile_abort(struct jtr_afile *a);

/* jtr_final_name - @path as the user will find it, into @buf of @n bytes
 * (cut short to fit): a folder .NAME.partial-PID in it (a results folder being
 * filled, gone once a write failed) named NAME; the Python side's is
 * cli/main.py final_name */
void jtr_final_name(const char *path, char *buf, size_t n);

/* every file a results folder may hold (docs/result-format.md); the Python
 * side's list is results/result.py RESULT_FILES (test_parity compares them).
 * A result written into an existing folder removes, once it is in place, the
 * ones it did not write itself: what an earlier result left there. */
#define JTR_RESULT_FILES \
	"result.json", "summary.txt", "outliers.csv", "null.gp", "send.gp", \
	"send_v_null.plt", "stats.csv", "latency.csv", "events.bin", "trace.json", \
	"attribution.txt", "decomposition.csv", "sched.data", "oslat.json", \
	"cyclictest.json", "source.hlog"

struct jtr_outdir {
	char final[PATH_MAX];	/* the folder the user will see */
	char work[PATH_MAX];	/* where files go now */
	char results_root[PATH_MAX];	/* "results" when the name was chosen for the user */
	bool is_tmp;		/* work is a hidden sibling renamed at commit */
	bool prepared;
	unsigned int written;	/* bit i: JTR_RESULT_FILES[i] was written by this run */
	char result_as[64];	/* "": result.json is written as itself; else its name */
};

/* jtr_outdir_default_name - "YYYYmmdd-HHMMSS-HOST-TOOL" for local time @t */
int jtr_outdir_default_name(char *buf, size_t n, const char *host, const char *tool, long t);

/* jtr_outdir_prepare - decide and create where results go. @dir NULL: a new
 * folder under ./results/ (created when missing). An existing folder is
 * written into (each file atomically); a new one is created hidden and renamed
 * at commit; its parent must exist (it is not created). Fails with a message
 * naming the folder and the fix when it cannot be written. */
int jtr_outdir_prepare(struct jtr_outdir *o, const char *dir, const char *host,
		       const char *tool, struct jtr_err *e);

/* jtr_outdir_path - @name inside the folder being written (noted as written);
 * result.json under o->result_as when that is set (jtr_probe_open: jtr run's) */
int jtr_outdir_path(struct jtr_outdir *o, const char *name, char *buf, size_t n);

/* jtr_outdir_commit - move the folder into place; point results/latest at it.
 * In an existing folder where this run wrote result.json, remove the other
 * JTR_RESULT_FILES it did not write (an earlier result's). */
int jtr_outdir_commit(struct jtr_outdir *o, struct jtr_err *e);

/* jtr_outdir_abort - remove a hidden folder and what was written in it */
void jtr_outdir_abort(struct jtr_outdir *o);

#endif
