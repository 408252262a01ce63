// SPDX-License-Identifier: GPL-2.0-only
/* jtr_gate.c - gates for CI: --max-latency, --max-lost, and the JUnit report. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jtr_cli.h"
#include "jtr_gate.h"

/* junit_folder_ok - 0 when the folder --junit's @path goes into is a
 * folder the (real) user may write in, else -ENOENT / -EACCES with @e */
static int junit_folder_ok(const char *path, struct jtr_err *e)
{
	char copy[PATH_MAX], *dir;
	struct stat st;

	if (!*path || strlen(path) >= sizeof(copy))
		return jtr_err_set(e, -EINVAL, "--junit '%s': give a file name, e.g. --junit "
				   "jtr-junit.xml", path);
	if (path[strlen(path) - 1] == '/' || (stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
		return jtr_err_set(e, -EINVAL, "--junit %s: a folder; give a file name in it, e.g. "
				   "%s%sjtr-junit.xml", path, path,
				   path[strlen(path) - 1] == '/' ? "" : "/");
	snprintf(copy, sizeof(copy), "%s", path);
	dir = dirname(copy);
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return jtr_err_set(e, -ENOENT, "--junit %s: no folder %s; create it first, or give "
				   "a file in an existing folder", path, dir);
	/* access() checks the real user: a setuid probe writes only where its user may */
	if (access(dir, W_OK | X_OK) < 0)
		return jtr_err_set(e, -EACCES, "--junit %s: cannot write in %s: %s; give a file in "
				   "a folder you may write", path, dir, strerror(errno));
	return 0;
}

/* jtr_gate_opt - see jtr_gate.h */
int jtr_gate_opt(struct jtr_gate *g, int opt, const char *arg, struct jtr_err *e)
{
	struct jtr_err why;
	int rc;

	switch (opt) {
	case JTR_OPT_MAX_LATENCY:
		rc = jtr_parse_duration_ns(arg, 0, JTR_GATE_MAX_LATENCY_NS, &g->max_latency_ns, &why);
		if (rc < 0)
			return jtr_err_set(e, rc, "--max-latency %s: %s", arg, why.msg);
		g->latency = true;
		return 1;
	case JTR_OPT_MAX_LOST:
		rc = jtr_parse_percent(arg, 0, 100, &g->max_lost_pct, &why);
		if (rc < 0)
			return jtr_err_set(e, rc, "--max-lost %s: %s", arg, why.msg);
		g->lost = true;
		return 1;
	case JTR_OPT_JUNIT:
		rc = junit_folder_ok(arg, e);
		if (rc < 0)
			return rc;
		g->junit = arg;
		return 1;
	default:
		return 0;
	}
}

/* jtr_gate_any - see jtr_gate.h */
bool jtr_gate_any(const struct jtr_gate *g)
{
	return g->latency || g->lost || g->junit;
}

/* jtr_gate_run_of - see jtr_gate.h */
struct jtr_gate_run jtr_gate_run_of(int cpu, const struct jtr_hist *hist,
				    const struct jtr_hist *lengths, const struct jtr_olog *log,
				    uint64_t base_ns, uint64_t duration_ns)
{
	uint64_t n = lengths->total;

	return (struct jtr_gate_run){
		.cpu = cpu, .max_ns = hist->total ? hist->max : 0,
		.lost_ns = log->total_ns > n * base_ns ? log->total_ns - n * base_ns : 0,
		.duration_ns = duration_ns, .samples = hist->total,
	};
}

/* jtr_gate_check - see jtr_gate.h */
int jtr_gate_check(const struct jtr_gate *g, const struct jtr_gate_run *runs, int n,
		   struct jtr_gate_case *cases, int *failed)
{
	int k = 0;

	*failed = 0;
	for (int gate = 0; gate < 2; gate++) {
		if ((gate == 0 && !g->latency) || (gate == 1 && !g->lost))
			continue;
		for (int i = 0; i < n; i++) {
			const struct jtr_gate_run *r = &runs[i];
			struct jtr_gate_case *c = &cases[k++];

			c->gate = gate == 0 ? "max-latency" : "max-lost";
			c->cpu = r->cpu;
			c->duration_ns = r->duration_ns;
			c->measured = r->samples && r->duration_ns;
			if (gate == 0) {
				c->value = (double)r->max_ns;
				c->limit = (double)g->max_latency_ns;
				c->passed = c->measured && r->max_ns <= g->max_latency_ns;
			} else {
				/* rounded as result.json's "gates" writes it */
				c->value = c->measured ? round(1e8 * (double)r->lost_ns /
							       (double)r->duration_ns) / 1e6 : 0.0;
				c->limit = g->max_lost_pct;
				c->passed = c->measured && c->value <= c->limit;
			}
			*failed += !c->passed;
		}
	}
	return k;
}

/* jtr_gate_case_name - see jtr_gate.h */
char *jtr_gate_case_name(const struct jtr_gate_case *c, char *buf, size_t n)
{
	if (c->cpu >= 0)
		snprintf(buf, n, "%s cpu %d", c->gate, c->cpu);
	else
		snprintf(buf, n, "%s", c->gate);
	return buf;
}

/* fmt_ns - a duration for people, as the front end writes it: 727 ns,
 * 11.1 us, 2.97 ms, 1.20 s */
static char *fmt_ns(double ns, char *buf, size_t n)
{
	if (ns < 1e3)
		snprintf(buf, n, "%.0f ns", ns);
	else if (ns < 1e6)
		snprintf(buf, n, "%.1f us", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, n, "%.2f ms", ns / 1e6);
	else
		snprintf(buf, n, "%.2f s", ns / 1e9);
	return buf;
}

/* jtr_gate_detail - see jtr_gate.h */
char *jtr_gate_detail(const struct jtr_gate_case *c, char *buf, size_t n)
{
	char v[32], l[32];

	if (!c->measured)
		snprintf(buf, n, "nothing measured (no sample)");
	else if (!strcmp(c->gate, "max-latency"))
		snprintf(buf, n, "max %s %s limit %s", fmt_ns(c->value, v, sizeof(v)),
			 c->passed ? "<=" : ">",
			 jtr_format_duration((uint64_t)c->limit, l, sizeof(l)));
	else
		snprintf(buf, n, "%.3f %% of the time lost %s limit %g %%", c->value,
			 c->passed ? "<=" : ">", c->limit);
	return buf;
}

/* jtr_gate_verdict - see jtr_gate.h */
char *jtr_gate_verdict(const struct jtr_gate_case *c, char *buf, size_t n)
{
	char name[64], d[128];

	snprintf(buf, n, "%s: %s: %s", jtr_gate_case_name(c, name, sizeof(name)),
		 c->passed ? "passed" : "FAILED", jtr_gate_detail(c, d, sizeof(d)));
	return buf;
}

/* jtr_gate_failure_text - see jtr_gate.h */
char *jtr_gate_failure_text(const struct jtr_gate_case *c, const char *quantity,
			    const char *causes, char *buf, size_t n)
{
	char where[32], v[32], l[32];
	double s = (double)c->duration_ns / 1e9;

	if (c->cpu >= 0)
		snprintf(where, sizeof(where), "CPU %d", c->cpu);
	else
		snprintf(where, sizeof(where), "the run");
	if (!c->measured)
		snprintf(buf, n, "value: none: nothing was measured on %s\n", where);
	else if (!strcmp(c->gate, "max-latency"))
		snprintf(buf, n, "value: %s (%llu ns), the largest sample of %s on %s in %.2f s\n",
			 fmt_ns(c->value, v, sizeof(v)), (unsigned long long)c->value, quantity,
			 where, s);
	else
		snprintf(buf, n, "value: %.6f %% of the time lost on %s in %.2f s\n", c->value,
			 where, s);
	if (!strcmp(c->gate, "max-latency"))
		snprintf(buf + strlen(buf), n - strlen(buf), "limit: %s (%llu ns)\n",
			 jtr_format_duration((uint64_t)c->limit, l, sizeof(l)),
			 (unsigned long long)c->limit);
	else
		snprintf(buf + strlen(buf), n - strlen(buf), "limit: %g %%\n", c->limit);
	snprintf(buf + strlen(buf), n - strlen(buf), "causes: %s\n", causes);
	return buf;
}

/* jtr_gate_json - see jtr_gate.h */
void jtr_gate_json(struct jtr_json *j, const struct jtr_gate *g, const char *quantity,
		   const struct jtr_gate_case *cases, int n, const char *no_causes)
{
	bool passed = true;

	for (int i = 0; i < n; i++)
		passed &= cases[i].passed;
	jtr_json_obj_begin(j, "gates");
	jtr_json_obj_begin(j, "limits");
	if (g->latency)
		jtr_json_uint(j, "max_latency_ns", g->max_latency_ns);
	else
		jtr_json_null(j, "max_latency_ns");
	if (g->lost)
		jtr_json_double(j, "max_lost_pct", g->max_lost_pct);
	else
		jtr_json_null(j, "max_lost_pct");
	jtr_json_obj_end(j);
	jtr_json_str(j, "quantity", quantity);
	jtr_json_bool(j, "passed", passed);
	jtr_json_arr_begin(j, "cases");
	for (int i = 0; i < n; i++) {
		const struct jtr_gate_case *c = &cases[i];
		bool lat = !strcmp(c->gate, "max-latency");

		jtr_json_obj_begin(j, NULL);
		jtr_json_str(j, "gate", c->gate);
		if (c->cpu >= 0)
			jtr_json_int(j, "cpu", c->cpu);
		else
			jtr_json_null(j, "cpu");
		if (!c->measured) {
			jtr_json_null(j, "value");
			if (lat)
				jtr_json_uint(j, "limit", (uint64_t)c->limit);
			else
				jtr_json_double(j, "limit", c->limit);
		} else if (lat) {
			jtr_json_uint(j, "value", (uint64_t)c->value);
			jtr_json_uint(j, "limit", (uint64_t)c->limit);
		} else {
			jtr_json_fixed(j, "value", c->value, 6);
			jtr_json_double(j, "limit", c->limit);
		}
		jtr_json_str(j, "unit", lat ? "ns" : "%");
		jtr_json_bool(j, "passed", c->passed);
		jtr_json_uint(j, "duration_ns", c->duration_ns);
		if (!c->passed && no_causes)
			jtr_json_str(j, "causes_missing", no_causes);
		jtr_json_obj_end(j);
	}
	jtr_json_arr_end(j);
	jtr_json_obj_end(j);
}

/* utf8_len - the length of the valid UTF-8 sequence at @s that XML 1.0 may
 * hold (1 to 4), or 0 */
static int utf8_len(const unsigned char *s)
{
	unsigned c = s[0], cp;
	int n;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
		return 0;
	return n;
}

/* jtr_xml_escape - see jtr_gate.h */
void jtr_xml_escape(FILE *f, const char *s, bool attr)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	while (*p) {
		int n;

		switch (*p) {
		case '&': fputs("&amp;", f); p++; continue;
		case '<': fputs("&lt;", f); p++; continue;
		case '>': fputs("&gt;", f); p++; continue;
		case '"': fputs(attr ? "&quot;" : "\"", f); p++; continue;
		case '\'': fputs(attr ? "&apos;" : "'", f); p++; continue;
		case '\r': fputs("&#13;", f); p++; continue;
		case '\n': fputs(attr ? "&#10;" : "\n", f); p++; continue;
		case '\t': fputs(attr ? "&#9;" : "\t", f); p++; continue;
		}
		if (*p < 0x20) {
			/* XML 1.0 has no way to write these, not even as references */
			fputs("\xef\xbf\xbd", f);
			p++;
			continue;
		}
		n = utf8_len(p);
		if (!n) {
			fputs("\xef\xbf\xbd", f);
			p++;
			continue;
		}
		fwrite(p, 1, (size_t)n, f);
		p += n;
	}
}

/* attr - ' NAME="VALUE"' */
static void attr(FILE *f, const char *name, const char *value)
{
	fprintf(f, " %s=\"", name);
	jtr_xml_escape(f, value, true);
	fputc('"', f);
}

/* seconds - @s as junit-10.xsd's SUREFIRE_TIME has it: at most 3 decimals,
 * no sign or exponent */
static char *seconds(double s, char *buf, size_t n)
{
	snprintf(buf, n, "%.3f", s > 0 && s < 1e15 ? s : 0.0);
	return buf;
}

/* jtr_junit_write - see jtr_gate.h */
int jtr_junit_write(FILE *f, const struct jtr_junit_suite *s)
{
	char num[32], t[32];
	int failures = 0;

	for (int i = 0; i < s->ncases; i++)
		failures += s->cases[i].failure_type != NULL;
	seconds(s->time_s, t, sizeof(t));
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
	/* <testsuites> and its one <testsuite> say the same counts */
	for (int level = 0; level < 2; level++) {
		fputs(level ? ">\n  <testsuite" : "<testsuites", f);
		attr(f, "name", s->name);
		snprintf(num, sizeof(num), "%d", s->ncases);
		attr(f, "tests", num);
		snprintf(num, sizeof(num), "%d", failures);
		attr(f, "failures", num);
		attr(f, "errors", "0");
		if (level)
			attr(f, "skipped", "0");
		attr(f, "time", t);
	}
	attr(f, "timestamp", s->timestamp);
	attr(f, "hostname", s->hostname);
	fputs(">\n", f);
	if (s->nprops) {
		fputs("    <properties>\n", f);
		for (int i = 0; i < s->nprops; i++) {
			fputs("      <property", f);
			attr(f, "name", s->props[i].name);
			attr(f, "value", s->props[i].value);
			fputs("/>\n", f);
		}
		fputs("    </properties>\n", f);
	}
	for (int i = 0; i < s->ncases; i++) {
		const struct jtr_junit_case *c = &s->cases[i];

		fputs("    <testcase", f);
		attr(f, "classname", c->classname);
		attr(f, "name", c->name);
		attr(f, "time", seconds(c->time_s, t, sizeof(t)));
		if (!c->failure_type && !c->system_out) {
			fputs("/>\n", f);
			continue;
		}
		fputs(">\n", f);
		if (c->failure_type) {
			fputs("      <failure", f);
			attr(f, "message", c->failure_message);
			attr(f, "type", c->failure_type);
			fputc('>', f);
			jtr_xml_escape(f, c->failure_text, false);
			fputs("</failure>\n", f);
		}
		if (c->system_out) {
			fputs("      <system-out>", f);
			jtr_xml_escape(f, c->system_out, false);
			fputs("</system-out>\n", f);
		}
		fputs("    </testcase>\n", f);
	}
	fputs("  </testsuite>\n</testsuites>\n", f);
	return ferror(f) ? -EIO : 0;
}

/* jtr_junit_timestamp - see jtr_gate.h */
char *jtr_junit_timestamp(long long sec, char *buf, size_t n)
{
	time_t t = (time_t)sec;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%S+00:00", &tm);
	return buf;
}
