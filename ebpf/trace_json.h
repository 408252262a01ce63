/* SPDX-License-Identifier: GPL-2.0-only */
/* trace_json.h - trace.json (format jtr-trace/1), written beside every event
 * log: at the end of a trace, and for each of jtr watch's dumps.
 *
 * Its own file because both of those write it, and because what it says is
 * a format of its own that readers depend on (analysis/jtrpy/trace): the
 * whole of it is here, in the order it is written, apart from the code that
 * runs the trace.
 */
#ifndef JTR_TRACE_JSON_H
#define JTR_TRACE_JSON_H
#include <stdint.h>

#include "jtr_out.h"
#include "ksyms.h"
#include "tracer.h"

/* trace_json_write - what was traced, how much, what was lost, names: into
 * @a (then committed, or exit 1), for a log of @records records from
 * @start_ns to @end_ns whose kernel addresses are @addrs; the counts are
 * t->total as last read */
void trace_json_write(struct tracer *t, struct jtr_afile *a, int64_t start_ns, int64_t end_ns,
		      uint64_t records, const struct jtr_addrs *addrs);

#endif
