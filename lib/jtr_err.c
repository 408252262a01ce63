// SPDX-License-Identifier: GPL-2.0-only
/* jtr_err.c - error messages carried out of library calls. */
#include <stdarg.h>
#include <stdio.h>

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
