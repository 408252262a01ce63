// SPDX-License-Identifier: GPL-2.0-only
/* ksyms.c - kernel addresses seen in a trace, and their names from
 * /proc/kallsyms (ksyms.h says why this is a file of its own).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksyms.h"

#define KSYM_BUF (1 << 20)

/* jtr_addrs_add - see ksyms.h */
int jtr_addrs_add(struct jtr_addrs *s, uint64_t a)
{
	size_t i;

	if (!a)
		return 0;
	if (s->n * 2 >= s->cap) {
		struct jtr_addrs bigger = { .cap = s->cap ? s->cap * 2 : 1024 };

		bigger.slot = calloc(bigger.cap, sizeof(uint64_t));
		if (!bigger.slot)
			return -ENOMEM;
		for (i = 0; i < s->cap; i++)
			if (s->slot[i])
				jtr_addrs_add(&bigger, s->slot[i]);
		free(s->slot);
		*s = bigger;
	}
	for (i = (a >> 4) * 0x9E3779B97F4A7C15ULL % s->cap; s->slot[i]; i = (i + 1) % s->cap)
		if (s->slot[i] == a)
			return 0;
	s->slot[i] = a;
	s->n++;
	return 0;
}

/* jtr_addrs_note - see ksyms.h */
void jtr_addrs_note(struct jtr_addrs *s, const struct jtr_ev *e)
{
	switch (e->type) {
	case JTR_EV_NMI:
		jtr_addrs_add(s, e->a);
		break;
	case JTR_EV_WQ_START:
	case JTR_EV_HRTIMER_ENTRY:
	case JTR_EV_TIMER_ENTRY:
		jtr_addrs_add(s, e->b);
		break;
	case JTR_EV_VEC_ENTRY:
		if (e->flags & JTR_VEC_SENDER)
			jtr_addrs_add(s, e->x[2]);	/* an IPI's callback or callsite */
		break;
	}
}

/* jtr_addrs_free - see ksyms.h */
void jtr_addrs_free(struct jtr_addrs *s)
{
	free(s->slot);
	s->slot = NULL;
	s->cap = s->n = 0;
}

/* a kernel address seen in the log, and the text symbol at or below it */
struct ksym {
	uint64_t addr;		/* the address seen */
	uint64_t sym;		/* the symbol's address, 0 for none yet */
	char name[128];
};

/* cmp_ksym - qsort by the address seen */
static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* jtr_ksyms_write - "0xADDR": "name" (or "name+0xOFF") for every address seen.
 * /proc/kallsyms is read once, line by line, and each text symbol is kept only
 * where it is the closest one yet below a seen address: the seen addresses are
 * few and sorted, the symbols (120,000 here) are neither copied nor sorted (that
 * took 0.6 s of every trace's end) */
void jtr_ksyms_write(const struct jtr_addrs *addrs, struct jtr_json *j)
{
	struct ksym *seen = calloc(addrs->n ? addrs->n : 1, sizeof(*seen));
	FILE *f = seen ? fopen("/proc/kallsyms", "r") : NULL;
	char *buf = f ? malloc(KSYM_BUF) : NULL;
	size_t k = 0;
	char line[512], key[24], val[300];

	/* big reads: /proc/kallsyms costs per read, not per byte (5,000 reads of
	 * stdio's 1 KiB took half a second) */
	if (f && buf)
		setvbuf(f, buf, _IOFBF, KSYM_BUF);
	jtr_json_obj_begin(j, "symbols");
	for (size_t i = 0; seen && i < addrs->cap && k < addrs->n; i++)
		if (addrs->slot[i])
			seen[k++].addr = addrs->slot[i];
	qsort(seen, k, sizeof(*seen), cmp_ksym);
	while (f && k && fgets(line, sizeof(line), f)) {
		char *end, *name;
		unsigned long long a = strtoull(line, &end, 16);
		size_t lo = 0, hi = k, len;

		/* "ADDR T name[\t[module]]": text symbols only */
		if (!a || end[0] != ' ' || !strchr("tTwW", end[1]) || !end[1] || end[2] != ' ')
			continue;
		while (lo < hi) {		/* the first seen address at or above a */
			size_t mid = (lo + hi) / 2;

			if (seen[mid].addr < a)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == k || a < seen[lo].sym)
			continue;
		name = end + 3;
		len = strcspn(name, " \t\n");
		if (len >= sizeof(seen[lo].name))
			len = sizeof(seen[lo].name) - 1;
		seen[lo].sym = a;
		memcpy(seen[lo].name, name, len);
		seen[lo].name[len] = '\0';
	}
	if (f)
		fclose(f);
	free(buf);
	/* a seen address with no symbol since the one below it has that one's */
	for (size_t i = 1; i < k; i++)
		if (!seen[i].sym && seen[i - 1].sym) {
			seen[i].sym = seen[i - 1].sym;
			memcpy(seen[i].name, seen[i - 1].name, sizeof(seen[i].name));
		}
	for (size_t i = 0; i < k; i++) {
		if (!seen[i].sym)
			continue;
		if (seen[i].sym == seen[i].addr)
			snprintf(val, sizeof(val), "%s", seen[i].name);
		else
			snprintf(val, sizeof(val), "%s+0x%llx", seen[i].name,
				 (unsigned long long)(seen[i].addr - seen[i].sym));
		snprintf(key, sizeof(key), "0x%llx", (unsigned long long)seen[i].addr);
		jtr_json_str(j, key, val);
	}
	jtr_json_obj_end(j);
	free(seen);
}
