/* SPDX-License-Identifier: GPL-2.0-only */
/* jtr_err.h - error messages carried out of library calls.
 *
 * Library functions return 0 or a negative errno and never print or exit.
 * When they can say more than an errno can, they fill a struct jtr_err with
 * one line that names the bad value and the accepted form; main() prints it.
 */
#ifndef JTR_ERR_H
#define JTR_ERR_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

/* room for a message that names two paths of PATH_MAX and says the fix: a
 * message is never cut */
#define JTR_ERR_MAX (2 * PATH_MAX + 512)

struct jtr_err {
	char msg[JTR_ERR_MAX];
};

/* jtr_err_set - format a message into @e (if not NULL) and return @rc */
int jtr_err_set(struct jtr_err *e, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* jtr_err_clear - empty the message */
void jtr_err_clear(struct jtr_err *e);

/* jtr_write_errno - -errno of a failed write to @f (the flush's; ENOSPC when
 * its file system is full and stdio kept only the error flag; else EIO), 0 */
int jtr_write_errno(FILE *f);

#endif
