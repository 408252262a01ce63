// SPDX-License-Identifier: GPL-2.0-only
/* jtr_values.c - the C side of jtr's one value grammar, line by line, for
 * checking it against tests/vectors/values.txt and against the Python side.
 *
 *   jtr-values < LINES          each "KIND<TAB>INPUT" line (a third column is
 *                               ignored) gives "ok<TAB>VALUE" or
 *                               "error<TAB>MESSAGE"; blank lines and lines
 *                               starting with '#' give nothing
 *   jtr-values --check FILE     every "KIND<TAB>INPUT<TAB>EXPECTED" line of
 *                               FILE must give EXPECTED (the value, or
 *                               "error"); exit 1 on any difference
 *
 * KIND is duration, count, size, percent, cpulist or int, parsed without
 * bounds of an option (the whole range of the type). VALUE is canonical:
 * ns for a duration, decimal integers, a percent in its shortest form that
 * reads back to the same double, a CPU list as ranges ("0-3,6"; "-1" for
 * no pinning).
 */
#include <float.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jtr_cli.h"

/* shortest - the shortest %g form of @v that reads back as @v */
static void shortest(double v, char *buf, size_t n)
{
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, n, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

/* parse_value - @input as @kind: 0 and the canonical value in @out, or -1
 * and the message */
static int parse_value(const char *kind, const char *input, char *out, size_t n)
{
	struct jtr_err e;
	uint64_t u;
	long long i;
	double d;
	cpu_set_t set;
	int rc;

	jtr_err_clear(&e);
	if (!strcmp(kind, "duration")) {
		rc = jtr_parse_duration_ns(input, 0, UINT64_MAX, &u, &e);
	} else if (!strcmp(kind, "count")) {
		rc = jtr_parse_count(input, 0, UINT64_MAX, &u, &e);
	} else if (!strcmp(kind, "size")) {
		rc = jtr_parse_size(input, 0, UINT64_MAX, &u, &e);
	} else if (!strcmp(kind, "percent")) {
		if ((rc = jtr_parse_percent(input, 0, DBL_MAX, &d, &e)) == 0)
			shortest(d, out, n);
		goto done;
	} else if (!strcmp(kind, "cpulist")) {
		if (!strcmp(input, "-1")) {
			snprintf(out, n, "-1");
			return 0;
		}
		if ((rc = jtr_parse_cpulist(input, &set, &e)) == 0 && jtr_format_cpulist(&set, out, n) < 0)
			rc = jtr_err_set(&e, -1, "'%s': too many ranges to print", input);
		goto done;
	} else if (!strcmp(kind, "int")) {
		if ((rc = jtr_parse_int(input, LLONG_MIN, LLONG_MAX, &i, &e)) == 0)
			snprintf(out, n, "%lld", i);
		goto done;
	} else {
		snprintf(out, n, "unknown kind '%s'; use duration, count, size, percent, cpulist or "
			 "int", kind);
		return -1;
	}
	if (rc == 0)
		snprintf(out, n, "%llu", (unsigned long long)u);
done:
	if (rc < 0) {
		snprintf(out, n, "%s", e.msg);
		return -1;
	}
	return 0;
}

/* split - cut @line at tabs into at most @max fields; returns how many */
static int split(char *line, char **f, int max)
{
	int n = 0;

	line[strcspn(line, "\r\n")] = '\0';
	f[n++] = line;
	while (n < max && (line = strchr(line, '\t'))) {
		*line++ = '\0';
		f[n++] = line;
	}
	return n;
}

/* skipped - a blank line or a comment */
static int skipped(const char *line)
{
	return line[0] == '#' || line[strspn(line, " \t\r\n")] == '\0';
}

/* check - every vector of @path; the number of differences, or -1 */
static int check(const char *path)
{
	char line[4096], got[JTR_ERR_MAX], *f[4];
	int lineno = 0, bad = 0, total = 0;
	FILE *in = fopen(path, "r");

	if (!in) {
		perror(path);
		return -1;
	}
	while (fgets(line, sizeof(line), in)) {
		int rc;

		lineno++;
		if (skipped(line))
			continue;
		if (split(line, f, 4) != 3) {
			fprintf(stderr, "%s:%d: expected KIND<TAB>INPUT<TAB>EXPECTED\n", path, lineno);
			bad++;
			continue;
		}
		total++;
		rc = parse_value(f[0], f[1], got, sizeof(got));
		if (!strcmp(f[2], "error") ? rc == 0 :
		    rc < 0 || (!strcmp(f[0], "percent") ? strtod(f[2], NULL) != strtod(got, NULL)
							  : strcmp(f[2], got) != 0)) {
			fprintf(stderr, "%s:%d: %s '%s': expected %s, got %s %s\n", path, lineno, f[0],
				f[1], f[2], rc < 0 ? "error" : "ok", got);
			bad++;
		}
	}
	fclose(in);
	printf("jtr-values: %d vectors, %d wrong\n", total, bad);
	return bad;
}

int main(int argc, char **argv)
{
	char line[4096], out[JTR_ERR_MAX], *f[3];

	if (argc == 3 && !strcmp(argv[1], "--check")) {
		int bad = check(argv[2]);

		return bad == 0 ? 0 : 1;
	}
	if (argc != 1) {
		fprintf(stderr, "usage: jtr-values < LINES, or jtr-values --check FILE\n");
		return 2;
	}
	while (fgets(line, sizeof(line), stdin)) {
		if (skipped(line))
			continue;
		if (split(line, f, 3) < 2) {
			printf("error\texpected KIND<TAB>INPUT\n");
			continue;
		}
		if (parse_value(f[0], f[1], out, sizeof(out)) == 0)
			printf("ok\t%s\n", out);
		else
			printf("error\t%s\n", out);
	}
	return 0;
}
