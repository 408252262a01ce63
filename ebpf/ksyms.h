/* SPDX-License-Identifier: GPL-2.0-only */
/* ksyms.h - the kernel addresses a trace names (NMI handlers, work and timer
 * functions) and their symbols from /proc/kallsyms, for trace.json's
 * "symbols": a log read on another machine still says which function ran.
 *
 * Its own file because it is the one piece of the tracer that knows nothing
 * of BPF or of the tracer's state: a set of addresses filled while draining
 * (jtr_addrs_note, a few comparisons per record), named once at the end.
 */
#ifndef JTR_KSYMS_H
#define JTR_KSYMS_H
#include <stddef.h>
#include <stdint.h>

#include "jtr_json.h"
#include "trace.h"

/* a set of kernel addresses to name at the end (open addressing) */
struct jtr_addrs {
	uint64_t *slot;
	size_t cap, n;
};

/* jtr_addrs_add - remember @a (non-zero); 0 or -ENOMEM */
int jtr_addrs_add(struct jtr_addrs *s, uint64_t a);

/* jtr_addrs_note - remember the kernel addresses record @e names */
void jtr_addrs_note(struct jtr_addrs *s, const struct jtr_ev *e);

/* jtr_addrs_free - release the set (it is then empty) */
void jtr_addrs_free(struct jtr_addrs *s);

/* jtr_ksyms_write - "symbols": {"0xADDR": "name" or "name+0xOFF"} for every
 * address of @s that /proc/kallsyms has a text symbol at or below */
void jtr_ksyms_write(const struct jtr_addrs *s, struct jtr_json *j);

#endif
