// SPDX-License-Identifier: GPL-2.0-only
/* jtr_cli.c - strict parsers for command-line values: the one value grammar
 * (jtr_cli.h). */
#include <ctype.h>
#include <limits.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jtr_cli.h"

#define INT_FORM "expected a decimal or 0x-hex integer such as 5, -1 or 0x1f"
#define COUNT_FORM "expected a whole number with an optional K, M or G suffix, such as 2000000, 2M or 500K"
#define SIZE_FORM "expected bytes with an optional K, M or G (x1024), e.g. 4096, 64K, 8M"
#define DUR_FORM "expected a number with an optional unit ns, us, ms, s, m or h, such as 10us, " \
	"500ms or 2m"
#define PCT_FORM "expected a number with an optional %%, such as 1, 0.5 or 2.5%% (a bare " \
	"number is a percentage)"
#define CPU_FORM "expected CPU numbers and ranges such as 1, 0-3 or 1,3-5"

/* scan_u64 - digits of @base at *@p into @v; advances *@p; -ERANGE on overflow */
static int scan_u64(const char **p, int base, uint64_t *v)
{
	const char *s = *p;
	uint64_t acc = 0;
	int n = 0;

	for (;; s++, n++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (base == 16 && isxdigit((unsigned char)*s))
			d = tolower((unsigned char)*s) - 'a' + 10;
		else
			break;
		if (acc > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return -ERANGE;
		acc = acc * (uint64_t)base + (uint64_t)d;
	}
	if (n == 0)
		return -EINVAL;
	*p = s;
	*v = acc;
	return 0;
}

/* jtr_parse_int - decimal or 0x-hex integer with optional sign, in [min, max] */
int jtr_parse_int(const char *s, long long min, long long max, long long *out,
		  struct jtr_err *e)
{
	const char *p = s ? s : "";
	int neg = 0, rc;
	uint64_t mag;
	long long v;

	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		p += 2;
		rc = scan_u64(&p, 16, &mag);
	} else {
		rc = scan_u64(&p, 10, &mag);
	}
	if (rc == -ERANGE || (rc == 0 && *p == '\0' &&
			      mag > (neg ? (uint64_t)LLONG_MAX + 1 : (uint64_t)LLONG_MAX)))
		return jtr_err_set(e, -ERANGE, "'%s' is out of range; expected %lld..%lld",
				   s ? s : "", min, max);
	if (rc < 0 || *p != '\0')
		return jtr_err_set(e, -EINVAL, "'%s' is not an integer; " INT_FORM, s ? s : "");
	v = neg ? (long long)(0 - mag) : (long long)mag;
	if (v < min || v > max)
		return jtr_err_set(e, -ERANGE, "'%s' is out of range; expected %lld..%lld",
				   s, min, max);
	*out = v;
	return 0;
}

/* parse_scaled - a whole decimal number with an optional K, M or G of @base
 * (1000 or 1024), in [min, max]; @what and @form for the message */
static int parse_scaled(const char *s, uint64_t base, uint64_t min, uint64_t max, uint64_t *out,
			const char *what, const char *form, struct jtr_err *e)
{
	const char *p = s ? s : "";
	uint64_t v = 0, mult = 1;
	int rc;

	rc = scan_u64(&p, 10, &v);
	if (rc == 0) {
		switch (*p) {
		case 'k': case 'K': mult = base; p++; break;
		case 'm': case 'M': mult = base * base; p++; break;
		case 'g': case 'G': mult = base * base * base; p++; break;
		default: break;
		}
		if (*p != '\0')
			rc = -EINVAL;
	}
	if (rc == -EINVAL)
		return jtr_err_set(e, -EINVAL, "'%s' is not a %s; %s", s ? s : "", what, form);
	if (rc == -ERANGE || v > UINT64_MAX / mult || v * mult < min || v * mult > max)
		return jtr_err_set(e, -ERANGE, "'%s' is out of range; expected %llu..%llu",
				   s, (unsigned long long)min, (unsigned long long)max);
	*out = v * mult;
	return 0;
}

/* jtr_parse_count - non-negative count, K/M/G are powers of 1000 */
int jtr_parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out,
		    struct jtr_err *e)
{
	return parse_scaled(s, 1000, min, max, out, "count", COUNT_FORM, e);
}

/* jtr_parse_size - size in bytes, K/M/G are powers of 1024 */
int jtr_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out, struct jtr_err *e)
{
	return parse_scaled(s, 1024, min, max, out, "size", SIZE_FORM, e);
}

static const struct {
	const char *name;
	uint64_t ns;
} dur_units[] = {
	{ "h", 3600 * JTR_NS_PER_S }, { "m", 60 * JTR_NS_PER_S }, { "s", JTR_NS_PER_S },
	{ "ms", JTR_NS_PER_MS }, { "us", JTR_NS_PER_US }, { "ns", 1 },
};
#define NUNITS (sizeof(dur_units) / sizeof(dur_units[0]))

/* unit_name - the name of a unit of @ns, or "?" */
static const char *unit_name(uint64_t ns)
{
	for (size_t i = 0; i < NUNITS; i++)
		if (dur_units[i].ns == ns)
			return dur_units[i].name;
	return "?";
}

/* jtr_format_duration - @ns in the largest unit that holds it whole */
char *jtr_format_duration(uint64_t ns, char *buf, size_t n)
{
	size_t i;

	if (ns == 0) {
		snprintf(buf, n, "0");
		return buf;
	}
	for (i = 0; i < NUNITS - 1 && ns % dur_units[i].ns; i++)
		;
	snprintf(buf, n, "%llu%s", (unsigned long long)(ns / dur_units[i].ns), dur_units[i].name);
	return buf;
}

char *jtr_fmt_ns(uint64_t ns, char *buf, size_t n)
{
	const double v = (double)ns;

	if (v < 1e3)
		snprintf(buf, n, "%.0f ns", v);
	else if (v < 1e6)
		snprintf(buf, n, "%.1f us", v / 1e3);
	else if (v < 1e9)
		snprintf(buf, n, "%.2f ms", v / 1e6);
	else
		snprintf(buf, n, "%.2f s", v / 1e9);
	return buf;
}

/* frac_ns - floor(0.D x @unit) for the @n fraction digits D at @d, exact
 * for any number of digits: multiplying D by @unit digit by digit from the
 * least significant, the carry out of the n-th digit is unit x D / 10^n,
 * rounded down (and stays below @unit, so nothing overflows) */
static uint64_t frac_ns(const char *d, size_t n, uint64_t unit)
{
	uint64_t carry = 0;

	while (n--)
		carry = ((uint64_t)(d[n] - '0') * unit + carry) / 10;
	return carry;
}

/* parse_duration - NUMBER[UNIT] into ns; a bare number is in @bare_unit_ns,
 * and *@bare (if not NULL) says whether it was bare */
static int parse_duration(const char *s, uint64_t bare_unit_ns, uint64_t min_ns, uint64_t max_ns,
			  uint64_t *out, bool *bare, struct jtr_err *e)
{
	const char *p = s ? s : "", *frac = "";
	uint64_t whole, unit = bare_unit_ns, ns, f;
	size_t nfrac = 0, i;
	char lo[32], hi[32];

	if (scan_u64(&p, 10, &whole) == -ERANGE)
		goto range;
	if (!s || p == s)
		goto bad;
	if (*p == '.') {
		frac = ++p;
		nfrac = strspn(p, "0123456789");
		if (nfrac == 0)
			goto bad;
		p += nfrac;
	}
	if (bare)
		*bare = *p == '\0';
	if (*p != '\0') {
		for (i = 0; i < NUNITS; i++)
			if (strcmp(p, dur_units[i].name) == 0)
				break;
		if (i == NUNITS)
			goto bad;
		unit = dur_units[i].ns;
	}
	f = frac_ns(frac, nfrac, unit);
	if (whole > (UINT64_MAX - f) / unit)
		goto range;
	ns = whole * unit + f;
	if (ns < min_ns || ns > max_ns)
		goto range;
	*out = ns;
	return 0;
bad:
	if (bare_unit_ns == JTR_NS_PER_S)
		return jtr_err_set(e, -EINVAL, "'%s' is not a duration; " DUR_FORM
				   " (a bare number is in seconds)", s ? s : "");
	/* an option that keeps its older unit says so */
	return jtr_err_set(e, -EINVAL, "'%s' is not a duration; " DUR_FORM
			   " (a bare number here is in %s)", s ? s : "", unit_name(bare_unit_ns));
range:
	return jtr_err_set(e, -ERANGE, "'%s' is out of range; expected %s to %s", s,
			   jtr_format_duration(min_ns, lo, sizeof(lo)),
			   jtr_format_duration(max_ns, hi, sizeof(hi)));
}

/* jtr_parse_duration_ns - NUMBER[UNIT]; a bare number is in seconds */
int jtr_parse_duration_ns(const char *s, uint64_t min_ns, uint64_t max_ns, uint64_t *out,
			  struct jtr_err *e)
{
	return parse_duration(s, JTR_NS_PER_S, min_ns, max_ns, out, NULL, e);
}

/* jtr_parse_duration_legacy_ns - a bare non-zero number in @old_unit_ns */
int jtr_parse_duration_legacy_ns(const char *s, uint64_t old_unit_ns, uint64_t min_ns,
				 uint64_t max_ns, uint64_t *out, bool *bare, struct jtr_err *e)
{
	bool b = false;
	int rc = parse_duration(s, old_unit_ns, min_ns, max_ns, out, &b, e);

	/* a bare 0 is 0 in any unit: nothing to warn about */
	*bare = rc == 0 && b && strspn(s, "0.") != strlen(s);
	return rc;
}

/* jtr_duration_legacy_warning - the warning for a bare number in its old unit */
char *jtr_duration_legacy_warning(char *buf, size_t n, const char *opt, const char *arg,
				  uint64_t old_unit_ns)
{
	const char *u = unit_name(old_unit_ns);

	snprintf(buf, n, "%s %s: a bare number here still means %s (as before); write %s%s \xe2\x80\x94 "
		 "a bare duration is in seconds everywhere else in jtr, and will be here in a later "
		 "version", opt, arg, u, arg, u);
	return buf;
}

/* jtr_parse_percent - NUMBER[%]: digits with an optional fraction, then an
 * optional '%' */
int jtr_parse_percent(const char *s, double min, double max, double *out, struct jtr_err *e)
{
	const char *p = s ? s : "";
	char num[64];
	size_t len;
	double v;

	len = strspn(p, "0123456789");
	if (len == 0)
		goto bad;
	if (p[len] == '.') {
		size_t f = strspn(p + len + 1, "0123456789");

		if (f == 0)
			goto bad;
		len += 1 + f;
	}
	if (!(p[len] == '\0' || (p[len] == '%' && p[len + 1] == '\0')) || len >= sizeof(num))
		goto bad;
	memcpy(num, p, len);
	num[len] = '\0';
	v = strtod(num, NULL);		/* only digits and one point: always finite */
	if (v < min || v > max)
		return jtr_err_set(e, -ERANGE, "'%s' is out of range; expected %g-%g (a percentage)",
				   s, min, max);
	*out = v;
	return 0;
bad:
	return jtr_err_set(e, -EINVAL, "'%s' is not a percentage; " PCT_FORM, s ? s : "");
}

/* jtr_parse_cpulist - CPU list such as "1", "0-3" or "1,3-5" into @set */
int jtr_parse_cpulist(const char *s, cpu_set_t *set, struct jtr_err *e)
{
	const char *p = s ? s : "";
	uint64_t a, b;

	CPU_ZERO(set);
	for (;;) {
		if (scan_u64(&p, 10, &a) < 0)
			goto bad;
		b = a;
		if (*p == '-') {
			p++;
			if (scan_u64(&p, 10, &b) < 0)
				goto bad;
			if (b < a)
				return jtr_err_set(e, -EINVAL,
						   "'%s' is not a CPU list: range %llu-%llu ends before it starts; "
						   CPU_FORM, s, (unsigned long long)a, (unsigned long long)b);
		}
		if (b >= CPU_SETSIZE)
			return jtr_err_set(e, -ERANGE,
					   "'%s' names CPU %llu; this build handles CPUs 0-%d",
					   s, (unsigned long long)b, CPU_SETSIZE - 1);
		for (; a <= b; a++)
			CPU_SET((int)a, set);
		if (*p == '\0')
			return 0;
		if (*p++ != ',')
			goto bad;
	}
bad:
	return jtr_err_set(e, -EINVAL, "'%s' is not a CPU list; " CPU_FORM, s ? s : "");
}

/* jtr_format_cpulist - write @set as a compact list ("0-3,6") */
int jtr_format_cpulist(const cpu_set_t *set, char *buf, size_t n)
{
	size_t len = 0;
	int cpu, start, w;

	if (n == 0)
		return -ENOSPC;
	buf[0] = '\0';
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, set))
			continue;
		start = cpu;
		while (cpu + 1 < CPU_SETSIZE && CPU_ISSET(cpu + 1, set))
			cpu++;
		if (start == cpu)
			w = snprintf(buf + len, n - len, "%s%d", len ? "," : "", start);
		else
			w = snprintf(buf + len, n - len, "%s%d-%d", len ? "," : "", start, cpu);
		if (w < 0 || (size_t)w >= n - len)
			return -ENOSPC;
		len += (size_t)w;
	}
	return (int)len;
}
