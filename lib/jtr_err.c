// SPDX-License-Identifier: GPL-2.0-only
/* jtr_err.c - error messages carried out of library calls. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/statvfs.h>

#include "jtr_err.h"

/* jtr_err_set - format a message into @e (if not NULL) and return @rc */
int jtr_err_set(struct jtr_err *e, int rc, const char *fmt, ...)
{
	va_list ap;

	if (e) {
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* jtr_err_clear - empty the message */
void jtr_err_clear(struct jtr_err *e)
{
	if (e)
		e->msg[0] = '\0';
}

/* jtr_write_errno - the error of a failed write to @f: the flush's errno, else
 * (an earlier write failed and stdio kept only the flag) ENOSPC when @f's file
 * system has no room left, else EIO */
int jtr_write_errno(FILE *f)
{
	struct statvfs v;

	errno = 0;
	if (fflush(f) != 0 && errno)
		return -errno;
	if (!ferror(f))
		return 0;
	if (fstatvfs(fileno(f), &v) == 0 && (v.f_bavail == 0 || v.f_favail == 0))
		return -ENOSPC;
	return -EIO;
}
