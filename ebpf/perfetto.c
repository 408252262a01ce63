// SPDX-License-Identifier: GPL-2.0-only
/* perfetto.c - jtr-perfetto: the kernel-event tracks of one CPU of an event log
 * (events.bin) as Trace Event JSON, the part of `jtr export --perfetto` that
 * walks every event. analysis/jtrpy/formats/perfetto.py writes the rest of the
 * file (the header, each CPU's process, the probe's runs and outliers) and runs
 * this once per traced CPU, appending what it prints; the tracks are described
 * there.
 *
 * usage: jtr-perfetto LOG NAMES CPU RECORDS ZERO_NS START_NS END_NS [EVERY]
 *   LOG      events.bin (already checked by the Python reader)
 *   NAMES    what the log's trace.json and jtr's vocabulary say, one a line,
 *            fields apart by tabs, texts as JSON string contents:
 *              S <hex address> <symbol>
 *              V <index> <kind> <slice name> <category>   (index -1: unknown)
 *              C <hardirq|softirq|nmi|page_fault> <category>
 *   CPU      the CPU whose events are written
 *   RECORDS  how many records of LOG to read
 *   ZERO_NS  the time written as 0; START_NS, END_NS the log's span
 * Every trace event is printed after ",\n" (the file's first events are the
 * Python side's). Entries and exits are paired with a stack per track in time
 * order, so slices nest; "progress N" lines on stderr every EVERY events
 * (65,536 by default).
 * Exit 0, or 2 with a message for bad arguments or an unreadable file.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jtr_cli.h"
#include "jtr_err.h"
#include "trace.h"
#include "trace_names.h"

#define PID_BASE	1000	/* CPU n is process 1000 + n (perfetto.py's PID_BASE) */
#define PROGRESS_EVERY	65536
#define NAME_MAX_LEN	8192	/* a name or an event's text, escaped (symbols: 512 characters at most) */
#define ARGS_MAX_LEN	8192	/* the args of a slice made at once */
#define MAX_VECS	256
#define MAX_SYSCALLS	1024	/* system call names known (NAMES' Y lines) */
#define CALL_LANES	8	/* jtr run app's calls of one CPU in flight together, drawn */
#define CALLS_TRACK	20	/* their threads: pid * 100 + 20 + lane (perfetto.py's CALLS) */
/* a string of @n raw bytes as JSON string contents: 6 bytes each at most */
#define ESC_LEN(n)	(6 * (n) + 1)

enum track { INTERRUPTS = 2, SOFTIRQS = 3, TASKS = 4, NTRACKS = 5 };
static const char *const track_names[NTRACKS] = {
	[INTERRUPTS] = "interrupts", [SOFTIRQS] = "softirqs", [TASKS] = "tasks",
};

/* what an open slice is keyed by (perfetto.py's ("vec", a), "task", ...) */
enum key_kind { K_VEC = 1, K_IRQ, K_SOFTIRQ, K_HRTIMER, K_TIMER, K_TASK, K_WQ };

struct item {
	enum key_kind kind;
	uint64_t a;
	int64_t start;
	long long pid;		/* a task's pid (K_TASK) */
	const char *cat;
	char *name;		/* grown as needed, kept when the slot is used again */
	char *args;		/* its args' members, "key":value,... */
	size_t name_cap, args_len, args_cap;
};

struct stack {
	struct item *items;
	size_t n, cap;
};

/* a set of (kind, a) keys with a small value: the timers' tracks, the
 * workqueue items a switch closed */
struct slot {
	uint64_t a;
	uint8_t kind;		/* 0: empty, 0xff: deleted */
	uint8_t value;
};

struct keymap {
	struct slot *slots;
	size_t cap, used, live;	/* used counts deleted slots too */
};

struct sym {
	uint64_t addr;
	char *name;
};

struct names {
	struct sym *syms;
	size_t nsyms, capsyms;
	char *vec_kind[MAX_VECS], *vec_name[MAX_VECS], *vec_cat[MAX_VECS];
	int nvecs;
	char *unknown_kind, *unknown_name, *unknown_cat;
	char *hardirq, *softirq, *nmi, *page_fault;
	char *syscall[MAX_SYSCALLS];	/* by number; NULL: "syscall N" */
	char *call;			/* jtr run app's function (F call), or "call" */
};

struct walk {
	FILE *out;
	const struct names *nm;
	int pid;
	int64_t zero, log_start;
	struct stack stacks[NTRACKS];
	int64_t mark[NTRACKS];
	bool named[NTRACKS];
	struct keymap where, cut;
	bool have_steal;
	uint64_t steal_base;
	int64_t last_ts;
	int64_t lane_end[CALL_LANES];	/* the calls' lanes: where the last one ended */
	bool lane_named[CALL_LANES];
};

static const char *const softirq_names[] = {
	"HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER",
	"RCU",
};

static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "jtr-perfetto: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(2);
}

static void *grow(void *p, size_t n, size_t size)
{
	void *q = realloc(p, n * size);

	if (!q)
		die("%s", "out of memory");
	return q;
}

/* ---- text: JSON string contents --------------------------------------- */

/* utf8_len - the length of the valid UTF-8 sequence at @s (of @n bytes), 0 if
 * none starts there (Python's strict decoder: no overlongs, surrogates or
 * code points past U+10FFFF) */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (len > n)
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/* esc - bytes up to the first NUL (at most @n) as JSON string contents into
 * @buf: what Python's decode("utf-8", "backslashreplace") then json.dumps
 * (ensure_ascii=False) make of them */
static void esc(char *buf, size_t size, const char *raw, size_t n)
{
	const unsigned char *s = (const unsigned char *)raw;
	size_t o = 0, i = 0, len = strnlen(raw, n);

	while (i < len && o + 8 < size) {
		unsigned char c = s[i];
		size_t u = utf8_len(s + i, len - i);

		if (!u) {
			o += (size_t)snprintf(buf + o, size - o, "\\\\x%02x", c);
			i++;
			continue;
		}
		if (u > 1) {
			memcpy(buf + o, s + i, u);
			o += u;
			i += u;
			continue;
		}
		switch (c) {
		case '"': buf[o++] = '\\'; buf[o++] = '"'; break;
		case '\\': buf[o++] = '\\'; buf[o++] = '\\'; break;
		case '\n': buf[o++] = '\\'; buf[o++] = 'n'; break;
		case '\r': buf[o++] = '\\'; buf[o++] = 'r'; break;
		case '\t': buf[o++] = '\\'; buf[o++] = 't'; break;
		case '\b': buf[o++] = '\\'; buf[o++] = 'b'; break;
		case '\f': buf[o++] = '\\'; buf[o++] = 'f'; break;
		default:
			if (c < 0x20)
				o += (size_t)snprintf(buf + o, size - o, "\\u%04x", c);
			else
				buf[o++] = (char)c;
		}
		i++;
	}
	buf[o] = '\0';
}

/* ---- the names file ---------------------------------------------------- */

static int sym_cmp(const void *x, const void *y)
{
	const struct sym *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static char *field(char **line)
{
	char *f = *line, *tab;

	if (!f)
		return NULL;
	tab = strchr(f, '\t');
	if (tab) {
		*tab = '\0';
		*line = tab + 1;
	} else {
		*line = NULL;
	}
	return f;
}

static char *text_dup(const char *s)
{
	char *d = strdup(s ? s : "");

	if (!d)
		die("%s", "out of memory");
	return d;
}

static void read_names(const char *path, struct names *nm)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;

	if (!f)
		die("cannot read the names file %s", path);
	while ((len = getline(&line, &cap, f)) > 0) {
		char *rest = line, *tag, *k;

		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		tag = field(&rest);
		k = field(&rest);
		if (!tag || !k)
			continue;
		if (!strcmp(tag, "S")) {
			if (nm->nsyms == nm->capsyms) {
				nm->capsyms = nm->capsyms ? 2 * nm->capsyms : 256;
				nm->syms = grow(nm->syms, nm->capsyms, sizeof(*nm->syms));
			}
			nm->syms[nm->nsyms].addr = strtoull(k, NULL, 16);
			nm->syms[nm->nsyms++].name = text_dup(field(&rest));
		} else if (!strcmp(tag, "V")) {
			int i = atoi(k);
			char *kind = text_dup(field(&rest)), *name = text_dup(field(&rest));
			char *cat = text_dup(field(&rest));

			if (i < 0) {
				nm->unknown_kind = kind;
				nm->unknown_name = name;
				nm->unknown_cat = cat;
			} else if (i < MAX_VECS) {
				nm->vec_kind[i] = kind;
				nm->vec_name[i] = name;
				nm->vec_cat[i] = cat;
				if (i >= nm->nvecs)
					nm->nvecs = i + 1;
			}
		} else if (!strcmp(tag, "Y")) {
			long nr = strtol(k, NULL, 10);
			char *v = text_dup(field(&rest));

			if (nr >= 0 && nr < MAX_SYSCALLS && !nm->syscall[nr])
				nm->syscall[nr] = v;
			else
				free(v);
		} else if (!strcmp(tag, "F") && !strcmp(k, "call")) {
			free(nm->call);
			nm->call = text_dup(field(&rest));
		} else if (!strcmp(tag, "C")) {
			char *v = text_dup(field(&rest));

			if (!strcmp(k, "hardirq"))
				nm->hardirq = v;
			else if (!strcmp(k, "softirq"))
				nm->softirq = v;
			else if (!strcmp(k, "nmi"))
				nm->nmi = v;
			else if (!strcmp(k, "page_fault"))
				nm->page_fault = v;
			else
				free(v);
		}
	}
	free(line);
	fclose(f);
	if (!nm->unknown_kind || !nm->hardirq || !nm->softirq || !nm->nmi || !nm->page_fault)
		die("the names file %s lacks the unknown vector or a category", path);
	for (int i = 0; i < nm->nvecs; i++)
		if (!nm->vec_kind[i]) {
			nm->vec_kind[i] = nm->unknown_kind;
			nm->vec_name[i] = nm->unknown_name;
			nm->vec_cat[i] = nm->unknown_cat;
		}
	if (nm->nsyms)
		qsort(nm->syms, nm->nsyms, sizeof(*nm->syms), sym_cmp);
}

/* sym - the symbol at @addr, or the address in hex (into @buf) */
static const char *sym(const struct names *nm, uint64_t addr, char *buf, size_t size)
{
	struct sym key = { .addr = addr };
	const struct sym *s = nm->nsyms ? bsearch(&key, nm->syms, nm->nsyms, sizeof(*nm->syms),
						  sym_cmp) : NULL;

	if (s)
		return s->name;
	snprintf(buf, size, "0x%" PRIx64, addr);
	return buf;
}

static int vec_index(const struct names *nm, uint64_t kind)
{
	return kind < (uint64_t)nm->nvecs ? (int)kind : -1;
}

static const char *vec_kind(const struct names *nm, uint64_t kind)
{
	int i = vec_index(nm, kind);

	return i < 0 ? nm->unknown_kind : nm->vec_kind[i];
}

static const char *softirq_name(uint64_t vec, char *buf, size_t size)
{
	if (vec < sizeof(softirq_names) / sizeof(softirq_names[0]))
		return softirq_names[vec];
	snprintf(buf, size, "vec %" PRIu64, vec);
	return buf;
}

static const char *type_name(unsigned int type, char *buf, size_t size)
{
	if (type < JTR_EV_NTYPES && jtr_ev_type_names[type])
		return jtr_ev_type_names[type];
	snprintf(buf, size, "type %u", type);
	return buf;
}

/* ---- the key map ------------------------------------------------------- */

static size_t slot_of(const struct keymap *m, enum key_kind kind, uint64_t a)
{
	uint64_t h = (a ^ ((uint64_t)kind << 56)) * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> 20) & (m->cap - 1);
}

static struct slot *find(struct keymap *m, enum key_kind kind, uint64_t a)
{
	if (!m->cap)
		return NULL;
	for (size_t i = slot_of(m, kind, a);; i = (i + 1) & (m->cap - 1)) {
		struct slot *s = &m->slots[i];

		if (!s->kind)
			return NULL;
		if (s->kind == kind && s->a == a)
			return s;
	}
}

static void put(struct keymap *m, enum key_kind kind, uint64_t a, uint8_t value);

/* rehash - the live keys into a table twice as large when they fill a quarter of
 * it, else of the same size (deleted slots let go) */
static void rehash(struct keymap *m)
{
	struct slot *old = m->slots;
	size_t n = m->cap;

	m->cap = !n ? 64 : 4 * m->live >= n ? 2 * n : n;
	m->slots = calloc(m->cap, sizeof(*m->slots));
	if (!m->slots)
		die("%s", "out of memory");
	m->used = m->live = 0;
	for (size_t i = 0; i < n; i++)
		if (old[i].kind && old[i].kind != 0xff)
			put(m, old[i].kind, old[i].a, old[i].value);
	free(old);
}

static void put(struct keymap *m, enum key_kind kind, uint64_t a, uint8_t value)
{
	struct slot *s = find(m, kind, a);

	if (s) {
		s->value = value;
		return;
	}
	if (2 * (m->used + 1) > m->cap)
		rehash(m);
	for (size_t i = slot_of(m, kind, a);; i = (i + 1) & (m->cap - 1)) {
		s = &m->slots[i];
		if (!s->kind || s->kind == 0xff) {	/* not there (find said): any free slot */
			m->used += !s->kind;
			m->live++;
			*s = (struct slot){ .a = a, .kind = (uint8_t)kind, .value = value };
			return;
		}
	}
}

/* take - remove (kind, a); its value, or @dflt when it was not there */
static int take(struct keymap *m, enum key_kind kind, uint64_t a, int dflt)
{
	struct slot *s = find(m, kind, a);

	if (!s)
		return dflt;
	s->kind = 0xff;
	s->a = 0;
	m->live--;
	return s->value;
}

/* ---- writing ----------------------------------------------------------- */

/* ts - @ns from the zero as us with three decimals (floor division, as Python's) */
static void put_us(FILE *f, int64_t ns)
{
	int64_t q = ns / 1000, r = ns % 1000;

	if (r < 0) {
		q--;
		r += 1000;
	}
	fprintf(f, "%" PRId64 ".%03" PRId64, q, r);
}

static int tid_of(const struct walk *w, enum track t)
{
	return w->pid * 100 + (int)t;
}

static void thread(struct walk *w, enum track t)
{
	if (w->named[t])
		return;
	w->named[t] = true;
	fprintf(w->out, ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_name\","
		"\"args\":{\"name\":\"%s\"}}", w->pid, tid_of(w, t), track_names[t]);
	fprintf(w->out, ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_sort_index\","
		"\"args\":{\"sort_index\":%d}}", w->pid, tid_of(w, t), 100 + (int)t);
}

static void slice(struct walk *w, enum track t, const char *name, const char *cat,
		  int64_t start, int64_t end, const char *args)
{
	thread(w, t);
	fprintf(w->out, ",\n{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":", w->pid, tid_of(w, t));
	put_us(w->out, start - w->zero);
	fputs(",\"dur\":", w->out);
	put_us(w->out, end - start);
	fprintf(w->out, ",\"name\":\"%s\",\"cat\":\"%s\",\"args\":{%s}}", name, cat, args);
}

static void text_room(char **buf, size_t *cap, size_t need)
{
	size_t c = *cap ? *cap : 64;

	if (need <= *cap)
		return;
	while (c < need)
		c *= 2;
	*buf = grow(*buf, c, 1);
	*cap = c;
}

/* item_name - the slice's name, printf-like */
static void item_name(struct item *it, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void item_name(struct item *it, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	text_room(&it->name, &it->name_cap, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(it->name, (size_t)n + 1, fmt, ap);
	va_end(ap);
}

/* args_add - one member "key":value (@fmt makes the value's JSON) */
static void args_add(struct item *it, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void args_add(struct item *it, const char *key, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	text_room(&it->args, &it->args_cap, it->args_len + strlen(key) + (size_t)n + 5);
	it->args_len += (size_t)sprintf(it->args + it->args_len, "%s\"%s\":",
					it->args_len ? "," : "", key);
	va_start(ap, fmt);
	it->args_len += (size_t)vsprintf(it->args + it->args_len, fmt, ap);
	va_end(ap);
}

/* ipi_sender - an IPI's sender from its vector entry (JTR_VEC_SENDER), as
 * events.ipi_sender says it: "java (pid 812, CPU 0) flush_tlb_func" */
static void ipi_sender(const struct names *nm, const struct jtr_ev *e, char *buf, size_t size)
{
	char comm[ESC_LEN(JTR_COMM_LEN)], sb[32];

	esc(comm, sizeof(comm), e->str, JTR_COMM_LEN);
	snprintf(buf, size, "%s (pid %u, CPU %u) %s%s", comm[0] ? comm : "?",
		 (unsigned int)(e->x[3] & 0xffffffff), (unsigned int)(e->x[3] >> 32),
		 e->flags & JTR_VEC_SITE ? "sent at " : "", sym(nm, e->x[2], sb, sizeof(sb)));
}

/* describe - what an event says, without its time and CPU (events.describe) */
static void describe(const struct walk *w, const struct jtr_ev *e, char *buf, size_t size)
{
	const struct names *nm = w->nm;
	char tb[32], sb[32], text[ESC_LEN(2 * JTR_COMM_LEN)], next[ESC_LEN(JTR_COMM_LEN)];
	const char *tn = type_name(e->type, tb, sizeof(tb));
	uint64_t a = e->a, b = e->b;

	switch (e->type) {
	case JTR_EV_VEC_ENTRY:
	case JTR_EV_VEC_EXIT: {
		int n = snprintf(buf, size, "%s_%s vector=%" PRIu64, vec_kind(nm, b),
				 e->type == JTR_EV_VEC_ENTRY ? "entry" : "exit", a);

		if (e->type == JTR_EV_VEC_ENTRY && (e->flags & JTR_VEC_SENDER) && n > 0 &&
		    (size_t)n + 6 < size) {
			memcpy(buf + n, " from ", 7);
			ipi_sender(nm, e, buf + n + 6, size - n - 6);
		}
		return;
	}
	case JTR_EV_IRQ_ENTRY:
		esc(text, sizeof(text), e->str, sizeof(e->str));
		snprintf(buf, size, "irq_handler_entry %" PRIu64 " %s", a, text);
		return;
	case JTR_EV_IRQ_EXIT:
		if (b <= 2)
			snprintf(buf, size, "irq_handler_exit %" PRIu64 " ret=%s", a,
				 b == 0 ? "unhandled" : b == 1 ? "handled" : "wake_thread");
		else
			snprintf(buf, size, "irq_handler_exit %" PRIu64 " ret=%" PRIu64, a, b);
		return;
	case JTR_EV_SOFTIRQ_RAISE:
	case JTR_EV_SOFTIRQ_ENTRY:
	case JTR_EV_SOFTIRQ_EXIT:
		snprintf(buf, size, "%s %s", tn, softirq_name(a, sb, sizeof(sb)));
		return;
	case JTR_EV_SWITCH: {
		char state[16];

		jtr_ev_task_state(b >> 32, e->flags & JTR_SW_PREEMPTED, state);
		esc(text, sizeof(text), e->str, JTR_COMM_LEN);
		esc(next, sizeof(next), e->str + JTR_COMM_LEN, JTR_COMM_LEN);
		snprintf(buf, size, "sched_switch prev=%s(pid %" PRIu64 ", prio %" PRIu64 ", %s) -> "
			 "%s(pid %" PRIu64 ", prio %" PRIu64 ")", text, a & 0xffffffff,
			 b & 0xffff, state, next, a >> 32, (b >> 16) & 0xffff);
		return;
	}
	case JTR_EV_WAKEUP:
	case JTR_EV_WAKING:
		esc(text, sizeof(text), e->str, sizeof(e->str));
		snprintf(buf, size, "%s %s(pid %" PRIu64 ", prio %" PRIu64 ") target_cpu=%" PRIu64,
			 tn, text, a, b >> 32, b & 0xffffffff);
		return;
	case JTR_EV_MIGRATE:
		esc(text, sizeof(text), e->str, sizeof(e->str));
		snprintf(buf, size, "sched_migrate_task %s(pid %" PRIu64 ") cpu %" PRIu64 " -> %"
			 PRIu64, text, a, b & 0xffffffff, b >> 32);
		return;
	case JTR_EV_NMI:
		snprintf(buf, size, "nmi_handler %s %" PRIu64 " ns%s", sym(nm, a, sb, sizeof(sb)), b,
			 e->flags ? "" : " unhandled");
		return;
	case JTR_EV_PF_USER:
	case JTR_EV_PF_KERNEL:
		snprintf(buf, size, "%s address=0x%" PRIx64 " ip=%s error_code=0x%llx", tn, a,
			 sym(nm, b, sb, sizeof(sb)), e->x[0]);
		return;
	case JTR_EV_HRTIMER_ENTRY:
		if (e->x[0]) {
			snprintf(buf, size, "%s %s expires=%.6f s (%+.1f us)", tn,
				 sym(nm, b, sb, sizeof(sb)), (double)e->x[0] / 1e9,
				 (double)((int64_t)e->ts_ns - (int64_t)e->x[0]) / 1e3);
			return;
		}
		/* fall through */
	case JTR_EV_WQ_START:
	case JTR_EV_WQ_END:
	case JTR_EV_TIMER_ENTRY:
		snprintf(buf, size, "%s %s", tn, sym(nm, b, sb, sizeof(sb)));
		return;
	case JTR_EV_HRTIMER_EXIT:
	case JTR_EV_TIMER_EXIT:
		snprintf(buf, size, "%s 0x%" PRIx64, tn, a);
		return;
	case JTR_EV_STEAL:
		if (e->flags & JTR_STEAL_FIRST)
			snprintf(buf, size, "steal_time host steal so far %.6f s (first reading)",
				 (double)a / 1e9);
		else
			snprintf(buf, size, "steal_time host took %.1f us (so far %.6f s)",
				 (double)((int64_t)(a - b)) / 1e3, (double)a / 1e9);
		return;
	default:
		snprintf(buf, size, "%s a=0x%" PRIx64 " b=0x%" PRIx64, tn, a, b);
	}
}

static void instant(struct walk *w, enum track t, const struct jtr_ev *e, const char *name,
		    const char *cat)
{
	char what[NAME_MAX_LEN];

	describe(w, e, what, sizeof(what));
	thread(w, t);
	fprintf(w->out, ",\n{\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,\"tid\":%d,\"ts\":", w->pid,
		tid_of(w, t));
	put_us(w->out, (int64_t)e->ts_ns - w->zero);
	fprintf(w->out, ",\"name\":\"%s\",\"cat\":\"%s\",\"args\":{\"event\":\"%s\"}}", name, cat,
		what);
}

/* orphan - an exit whose entry is not in the log: an instant */
static void orphan(struct walk *w, enum track t, const struct jtr_ev *e, const char *what)
{
	char name[NAME_MAX_LEN + 32];

	snprintf(name, sizeof(name), "%s (entry not in the log)", what);
	instant(w, t, e, name, "exit");
}

/* ---- the stacks -------------------------------------------------------- */

static struct item *push(struct walk *w, enum track t, enum key_kind kind, uint64_t a,
			 int64_t ts, const char *cat)
{
	struct stack *s = &w->stacks[t];
	struct item *it;

	if (s->n == s->cap) {
		size_t old = s->cap;

		s->cap = s->cap ? 2 * s->cap : 16;
		s->items = grow(s->items, s->cap, sizeof(*s->items));
		memset(s->items + old, 0, (s->cap - old) * sizeof(*s->items));
	}
	it = &s->items[s->n++];
	it->kind = kind;
	it->a = a;
	it->start = ts;
	it->pid = -1;
	it->cat = cat;
	text_room(&it->name, &it->name_cap, 1);
	text_room(&it->args, &it->args_cap, 1);
	it->name[0] = '\0';
	it->args[0] = '\0';
	it->args_len = 0;
	w->mark[t] = ts;
	return it;
}

static void close_item(struct walk *w, enum track t, struct item *it, int64_t ts, bool lost)
{
	if (lost)
		args_add(it, "exit", "\"not in the log\"");
	slice(w, t, it->name, it->cat, it->start, ts, it->args);
	w->mark[t] = ts;
}

/* pop - close the open slice (kind, a) at @ts and, first, the slices opened
 * inside it whose exits are not in the log; false when it is not open. @ret:
 * an irq handler's return, added to its args */
static bool pop(struct walk *w, enum track t, enum key_kind kind, uint64_t a, int64_t ts,
		const char *ret)
{
	struct stack *s = &w->stacks[t];

	for (size_t k = s->n; k-- > 0;) {
		if (s->items[k].kind != kind || s->items[k].a != a)
			continue;
		while (s->n > k + 1)
			close_item(w, t, &s->items[--s->n], ts, true);
		s->n--;
		if (ret)
			args_add(&s->items[k], "ret", "\"%s\"", ret);
		close_item(w, t, &s->items[k], ts, false);
		return true;
	}
	return false;
}

static void task_name(char *buf, size_t size, const char *comm, uint64_t pid)
{
	if (*comm)
		snprintf(buf, size, "%s (pid %" PRIu64 ")", comm, pid);
	else
		snprintf(buf, size, "pid %" PRIu64, pid);
}

/* switch_task - sched_switch: the task running so far ends, the next one starts */
static void switch_task(struct walk *w, const struct jtr_ev *e)
{
	struct stack *s = &w->stacks[TASKS];
	uint64_t prev_pid = e->a & 0xffffffff, next_pid = e->a >> 32;
	uint64_t prev_prio = e->b & 0xffff, next_prio = (e->b >> 16) & 0xffff;
	char state[16], prev[ESC_LEN(JTR_COMM_LEN)], next[ESC_LEN(JTR_COMM_LEN)];
	int64_t ts = (int64_t)e->ts_ns;
	struct item *it;

	jtr_ev_task_state(e->b >> 32, e->flags & JTR_SW_PREEMPTED, state);
	esc(prev, sizeof(prev), e->str, JTR_COMM_LEN);
	esc(next, sizeof(next), e->str + JTR_COMM_LEN, JTR_COMM_LEN);
	while (s->n > 1) {		/* workqueue items the task was switched out in */
		it = &s->items[--s->n];
		put(&w->cut, it->kind, it->a, 1);
		args_add(it, "switched out", "true");
		close_item(w, TASKS, it, ts, false);
	}
	if (s->n) {
		it = &s->items[--s->n];
		args_add(it, "state", "\"%s\"", state);
		if (it->pid != (long long)prev_pid)
			args_add(it, "switched out as", "\"%s (pid %" PRIu64 ")\"", prev, prev_pid);
		close_item(w, TASKS, it, ts, false);
	} else {			/* the first switch: prev ran since the log's start */
		char name[NAME_MAX_LEN], args[ARGS_MAX_LEN];

		task_name(name, sizeof(name), prev, prev_pid);
		snprintf(args, sizeof(args), "\"pid\":%" PRIu64 ",\"prio\":%" PRIu64 ",\"state\":"
			 "\"%s\",\"since\":\"the log's start (no earlier switch in it)\"",
			 prev_pid, prev_prio, state);
		slice(w, TASKS, name, "task", w->log_start < ts ? w->log_start : ts, ts, args);
	}
	it = push(w, TASKS, K_TASK, 0, ts, "task");
	it->pid = (long long)next_pid;
	if (*next)
		item_name(it, "%s (pid %" PRIu64 ")", next, next_pid);
	else
		item_name(it, "pid %" PRIu64, next_pid);
	args_add(it, "pid", "%" PRIu64, next_pid);
	args_add(it, "prio", "%" PRIu64, next_prio);
}

/* timer_track - where an expiring timer runs: inside the open interrupt, else
 * inside the open softirq, else (its interrupt not in the log) on interrupts */
static enum track timer_track(const struct walk *w)
{
	if (w->stacks[INTERRUPTS].n || !w->stacks[SOFTIRQS].n)
		return INTERRUPTS;
	return SOFTIRQS;
}

/* interrupt_event - an event of the interrupts or softirqs tracks; false for
 * one of the tasks track */
static bool interrupt_event(struct walk *w, const struct jtr_ev *e)
{
	const struct names *nm = w->nm;
	int64_t ts = (int64_t)e->ts_ns;
	uint64_t a = e->a, b = e->b;
	char sb[32], text[ESC_LEN(2 * JTR_COMM_LEN)], name[NAME_MAX_LEN];
	struct item *it;
	int i;

	switch (e->type) {
	case JTR_EV_VEC_ENTRY:
		i = vec_index(nm, b);
		it = push(w, INTERRUPTS, K_VEC, a, ts, i < 0 ? nm->unknown_cat : nm->vec_cat[i]);
		item_name(it, "%s", i < 0 ? nm->unknown_name : nm->vec_name[i]);
		args_add(it, "vector", "%" PRIu64, a);
		if (e->flags & JTR_VEC_SENDER) {	/* an IPI whose send was seen */
			ipi_sender(nm, e, name, sizeof(name));
			args_add(it, "sender", "\"%s\"", name);
		}
		break;
	case JTR_EV_VEC_EXIT:
		if (!pop(w, INTERRUPTS, K_VEC, a, ts, NULL)) {
			i = vec_index(nm, b);
			orphan(w, INTERRUPTS, e, i < 0 ? nm->unknown_name : nm->vec_name[i]);
		}
		break;
	case JTR_EV_IRQ_ENTRY:
		esc(text, sizeof(text), e->str, sizeof(e->str));
		it = push(w, INTERRUPTS, K_IRQ, a, ts, nm->hardirq);
		item_name(it, "irq %" PRIu64 " %s", a, text);
		args_add(it, "irq", "%" PRIu64, a);
		args_add(it, "action", "\"%s\"", text);
		break;
	case JTR_EV_IRQ_EXIT: {
		char ret[24];

		if (b <= 2)
			snprintf(ret, sizeof(ret), "%s",
				 b == 0 ? "unhandled" : b == 1 ? "handled" : "wake_thread");
		else
			snprintf(ret, sizeof(ret), "%" PRIu64, b);
		if (!pop(w, INTERRUPTS, K_IRQ, a, ts, ret)) {
			snprintf(name, sizeof(name), "irq %" PRIu64, a);
			orphan(w, INTERRUPTS, e, name);
		}
		break;
	}
	case JTR_EV_SOFTIRQ_ENTRY:
		it = push(w, SOFTIRQS, K_SOFTIRQ, a, ts, nm->softirq);
		item_name(it, "softirq %s", softirq_name(a, sb, sizeof(sb)));
		args_add(it, "vec", "%" PRIu64, a);
		break;
	case JTR_EV_SOFTIRQ_EXIT:
		if (!pop(w, SOFTIRQS, K_SOFTIRQ, a, ts, NULL)) {
			snprintf(name, sizeof(name), "softirq %s", softirq_name(a, sb, sizeof(sb)));
			orphan(w, SOFTIRQS, e, name);
		}
		break;
	case JTR_EV_SOFTIRQ_RAISE:
		break;		/* its softirq's slice follows; a raise adds nothing to read */
	case JTR_EV_HRTIMER_ENTRY:
	case JTR_EV_TIMER_ENTRY: {
		bool hr = e->type == JTR_EV_HRTIMER_ENTRY;
		enum key_kind kind = hr ? K_HRTIMER : K_TIMER;
		enum track t = timer_track(w);
		const char *fn = sym(nm, b, sb, sizeof(sb));

		put(&w->where, kind, a, (uint8_t)t);
		it = push(w, t, kind, a, ts, "timer");
		item_name(it, "%s %s", hr ? "hrtimer" : "timer", fn);
		args_add(it, "function", "\"%s\"", fn);
		if (hr && e->x[0] && e->ts_ns >= e->x[0])
			args_add(it, "late_ns", "%llu", e->ts_ns - e->x[0]);
		break;
	}
	case JTR_EV_HRTIMER_EXIT:
	case JTR_EV_TIMER_EXIT: {
		bool hr = e->type == JTR_EV_HRTIMER_EXIT;
		enum key_kind kind = hr ? K_HRTIMER : K_TIMER;
		enum track t = (enum track)take(&w->where, kind, a, INTERRUPTS);

		if (!pop(w, t, kind, a, ts, NULL))
			orphan(w, t, e, hr ? "hrtimer" : "timer");
		break;
	}
	case JTR_EV_NMI: {
		/* the tracepoint fires at the handler's end with its length: a slice
		 * back from here, starting no earlier than what is open or closed */
		int64_t start = b < e->ts_ns ? ts - (int64_t)b : w->mark[INTERRUPTS];
		const char *fn = sym(nm, a, sb, sizeof(sb));
		char args[ARGS_MAX_LEN];

		if (start < w->mark[INTERRUPTS])
			start = w->mark[INTERRUPTS];
		snprintf(name, sizeof(name), "NMI %s", fn);
		snprintf(args, sizeof(args), "\"handler\":\"%s\",\"handled\":%s,\"delta_ns\":%"
			 PRIu64, fn, e->flags ? "true" : "false", b);
		slice(w, INTERRUPTS, name, nm->nmi, start, ts, args);
		w->mark[INTERRUPTS] = ts;
		break;
	}
	default:
		return false;
	}
	return true;
}

/* call_slice - jtr run app's call (JTR_EV_CALL, on the CPU it returned on): a
 * slice from its entry to its return in the first lane free by its entry;
 * calls of threads that took turns on the CPU overlap, and go to the next lane
 * ("calls 2", ...). Past CALL_LANES it is drawn in the last lane from where
 * that lane is free (args "drawn_from_ns"). */
static void call_slice(struct walk *w, const struct jtr_ev *e)
{
	int64_t start = (int64_t)e->a, end = (int64_t)e->ts_ns;
	char args[ARGS_MAX_LEN];
	int lane = 0, n;

	if (start > end || start < w->zero)
		start = start > end ? end : w->zero;
	while (lane < CALL_LANES - 1 && w->lane_end[lane] > start)
		lane++;
	n = snprintf(args, sizeof(args), "\"tid\":%u,\"length_ns\":%" PRId64 ",\"entered_on_cpu\""
		     ":%u,\"returned_on_cpu\":%u", e->pid, end - start,
		     (unsigned)(e->b & 0xffffffff), (unsigned)(e->b >> 32));
	if (w->lane_end[lane] > start) {
		snprintf(args + n, sizeof(args) - n, ",\"drawn_from_ns\":%" PRId64,
			 w->lane_end[lane]);
		start = w->lane_end[lane] < end ? w->lane_end[lane] : end;
	}
	if (!w->lane_named[lane]) {
		int tid = w->pid * 100 + CALLS_TRACK + lane;

		w->lane_named[lane] = true;
		fprintf(w->out, ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_name\","
			"\"args\":{\"name\":\"calls%s", w->pid, tid, lane ? " " : "");
		if (lane)
			fprintf(w->out, "%d", lane + 1);
		fprintf(w->out, "\"}},\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":"
			"\"thread_sort_index\",\"args\":{\"sort_index\":%d}}", w->pid, tid,
			100 + CALLS_TRACK + lane);
	}
	fprintf(w->out, ",\n{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":", w->pid,
		w->pid * 100 + CALLS_TRACK + lane);
	put_us(w->out, start - w->zero);
	fputs(",\"dur\":", w->out);
	put_us(w->out, end - start);
	fprintf(w->out, ",\"name\":\"%s\",\"cat\":\"call\",\"args\":{%s}}",
		w->nm->call ? w->nm->call : "call", args);
	if (end > w->lane_end[lane])
		w->lane_end[lane] = end;
}

/* block_instant - jtr run app's thread leaving the CPU blocked (JTR_EV_BLOCK) */
static void block_instant(struct walk *w, const struct jtr_ev *e)
{
	char name[NAME_MAX_LEN];
	const char *sc = e->a < MAX_SYSCALLS ? w->nm->syscall[e->a] : NULL;

	if (e->a == JTR_NO_SYSCALL)
		snprintf(name, sizeof(name), "blocked outside a system call (tid %u)", e->pid);
	else if (sc)
		snprintf(name, sizeof(name), "blocked in %s (tid %u)", sc, e->pid);
	else
		snprintf(name, sizeof(name), "blocked in syscall %llu (tid %u)",
			 (unsigned long long)e->a, e->pid);
	instant(w, TASKS, e, name, "blocked");
}

/* task_event - an event of the tasks track (or the steal counter) */
static void task_event(struct walk *w, const struct jtr_ev *e)
{
	const struct names *nm = w->nm;
	int64_t ts = (int64_t)e->ts_ns;
	uint64_t a = e->a, b = e->b;
	char sb[32], text[ESC_LEN(2 * JTR_COMM_LEN)], name[NAME_MAX_LEN];
	struct item *it;

	switch (e->type) {
	case JTR_EV_SWITCH:
		switch_task(w, e);
		break;
	case JTR_EV_WQ_START: {
		const char *fn = sym(nm, b, sb, sizeof(sb));

		if (!w->stacks[TASKS].n) {	/* its kworker's switch-in is not in the log */
			it = push(w, TASKS, K_TASK, 0, ts, "task");
			it->pid = e->pid;
			item_name(it, "pid %u", e->pid);
			args_add(it, "pid", "%u", e->pid);
			args_add(it, "since", "\"its first event (no switch in the log)\"");
		}
		take(&w->cut, K_WQ, a, 0);
		it = push(w, TASKS, K_WQ, a, ts, "workqueue");
		item_name(it, "workqueue %s", fn);
		args_add(it, "function", "\"%s\"", fn);
		break;
	}
	case JTR_EV_WQ_END:
		if (!pop(w, TASKS, K_WQ, a, ts, NULL) && !take(&w->cut, K_WQ, a, 0))
			orphan(w, TASKS, e, "workqueue");
		take(&w->cut, K_WQ, a, 0);
		break;
	case JTR_EV_PF_USER:
	case JTR_EV_PF_KERNEL:
		instant(w, TASKS, e, e->type == JTR_EV_PF_USER ? "page fault user" :
			"page fault kernel", nm->page_fault);
		break;
	case JTR_EV_WAKEUP:
	case JTR_EV_WAKING:
	case JTR_EV_MIGRATE: {
		const char *verb = e->type == JTR_EV_WAKEUP ? "wakeup" :
				   e->type == JTR_EV_WAKING ? "waking" : "migrate";

		esc(text, sizeof(text), e->str, sizeof(e->str));
		if (*text)
			snprintf(name, sizeof(name), "%s %s (pid %" PRIu64 ")", verb, text, a);
		else
			snprintf(name, sizeof(name), "%s pid %" PRIu64, verb, a);
		instant(w, TASKS, e, name, e->type == JTR_EV_MIGRATE ? "migrate" : "wakeup");
		break;
	}
	case JTR_EV_STEAL: {
		uint64_t d;

		if (!w->have_steal || a < w->steal_base) {	/* the first, or a reset */
			w->have_steal = true;
			w->steal_base = a < b ? a : b;
		}
		d = a - w->steal_base;
		fprintf(w->out, ",\n{\"ph\":\"C\",\"pid\":%d,\"ts\":", w->pid);
		put_us(w->out, ts - w->zero);
		fprintf(w->out, ",\"name\":\"host steal\",\"args\":{\"ms\":%" PRIu64 ".%06" PRIu64
			"}}", d / 1000000, d % 1000000);
		break;
	}
	case JTR_EV_CALL:
		call_slice(w, e);
		break;
	case JTR_EV_BLOCK:
		block_instant(w, e);
		break;
	default:
		instant(w, TASKS, e, type_name(e->type, sb, sizeof(sb)), "other");
	}
}

/* event - one event of this CPU, in time order */
static void event(struct walk *w, const struct jtr_ev *e)
{
	w->last_ts = (int64_t)e->ts_ns;
	if (!interrupt_event(w, e))
		task_event(w, e);
}

/* finish - close what is still open at the log's end (or its last event, if later) */
static void finish(struct walk *w, int64_t end)
{
	if (w->last_ts > end)
		end = w->last_ts;
	for (int t = INTERRUPTS; t < NTRACKS; t++) {
		struct stack *s = &w->stacks[t];

		while (s->n) {
			struct item *it = &s->items[--s->n];
			int64_t at = end > it->start ? end : it->start;

			if (t == TASKS && it->kind == K_TASK) {
				args_add(it, "until", "\"the log's end\"");
				close_item(w, t, it, at, false);
			} else {
				close_item(w, t, it, at, true);
			}
		}
	}
}

/* ---- main -------------------------------------------------------------- */

struct entry {
	uint64_t ts;
	uint64_t idx;
};

static int entry_cmp(const void *x, const void *y)
{
	const struct entry *a = x, *b = y;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* number - argument @name as an integer in [@min, @max] (lib's parser), or exit 2 */
static long long number(const char *s, const char *name, long long min, long long max)
{
	struct jtr_err e;
	long long v;

	if (jtr_parse_int(s, min, max, &v, &e) < 0) {
		fprintf(stderr, "jtr-perfetto: %s %s: %s\n", name, s, e.msg);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct names nm = { 0 };
	struct walk w = { 0 };
	const struct jtr_ev *recs;
	struct entry *mine;
	unsigned long long records, n = 0;
	struct stat st;
	size_t len;
	void *map;
	long long every = PROGRESS_EVERY;
	int fd, cpu;

	if (argc != 8 && argc != 9) {
		fprintf(stderr, "usage: jtr-perfetto LOG NAMES CPU RECORDS ZERO_NS START_NS END_NS "
			"[EVERY]\n"
			"(run by jtr export --perfetto: the kernel-event tracks of one CPU)\n");
		return 2;
	}
	cpu = (int)number(argv[3], "CPU", 0, JTR_TRACE_MAX_CPUS - 1);
	records = (unsigned long long)number(argv[4], "RECORDS", 0, LLONG_MAX);
	w.zero = number(argv[5], "ZERO_NS", 0, LLONG_MAX);
	w.log_start = number(argv[6], "START_NS", 0, LLONG_MAX);
	if (argc == 9)
		every = number(argv[8], "EVERY", 1, LLONG_MAX);
	read_names(argv[2], &nm);
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "jtr-perfetto: cannot read the event log %s: %s\n", argv[1],
			strerror(errno));
		return 2;
	}
	if (records > (SIZE_MAX - sizeof(struct jtr_ev_header)) / JTR_EV_SIZE)
		die("RECORDS '%s' is more than an event log can hold", argv[4]);
	len = sizeof(struct jtr_ev_header) + records * JTR_EV_SIZE;
	if ((unsigned long long)st.st_size < len)
		die("the event log %s is shorter than its records", argv[1]);
	map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		die("cannot map the event log %s", argv[1]);
	recs = (const struct jtr_ev *)((const char *)map + sizeof(struct jtr_ev_header));
	mine = malloc((records ? records : 1) * sizeof(*mine));
	if (!mine)
		die("%s", "out of memory");
	for (unsigned long long i = 0; i < records; i++)
		if (recs[i].cpu == cpu)
			mine[n++] = (struct entry){ .ts = recs[i].ts_ns, .idx = i };
	qsort(mine, n, sizeof(*mine), entry_cmp);
	w.out = stdout;
	w.nm = &nm;
	w.pid = PID_BASE + cpu;
	for (int t = 0; t < NTRACKS; t++)	/* nothing starts before the time written as 0 */
		w.mark[t] = w.zero;
	setvbuf(stdout, NULL, _IOFBF, 1 << 20);
	for (unsigned long long k = 0; k < n; k++) {
		event(&w, &recs[mine[k].idx]);
		if ((k + 1) % (unsigned long long)every == 0) {
			fprintf(stderr, "progress %llu\n", k + 1);
			fflush(stderr);
		}
	}
	finish(&w, number(argv[7], "END_NS", 0, LLONG_MAX));
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "jtr-perfetto: cannot write: %s\n", strerror(errno));
		return 2;
	}
	return 0;
}
