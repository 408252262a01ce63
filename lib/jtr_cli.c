/* jtr_cli.c - strict parsers for command-line values. */
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
#define DUR_FORM "expected a number with an optional unit ns, us, ms, s, m or h, such as %s"
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

/* scan_unsigned - decimal or 0x-hex digits at *@p */
static int scan_unsigned(const char **p, uint64_t *v)
{
	if ((*p)[0] == '0' && ((*p)[1] == 'x' || (*p)[1] == 'X')) {
		*p += 2;
		return scan_u64(p, 16, v);
	}
	return scan_u64(p, 10, v);
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
	rc = scan_unsigned(&p, &mag);
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

/* jtr_parse_count - non-negative count with optional K, M or G (x1000) suffix */
/* parse_scaled - a count with an optional K, M or G of @base (1000 or 1024) */
static int parse_scaled(const char *s, uint64_t base, uint64_t min, uint64_t max, uint64_t *out,
			const char *form, struct jtr_err *e)
{
	const char *p = s ? s : "";
	uint64_t v, mult = 1;
	int rc;

	rc = scan_unsigned(&p, &v);
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
		return jtr_err_set(e, -EINVAL, "'%s' is not a %s", s ? s : "", form);
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
	return parse_scaled(s, 1000, min, max, out, "count; " COUNT_FORM, e);
}

/* jtr_parse_size - size in bytes, K/M/G are powers of 1024 */
int jtr_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out, struct jtr_err *e)
{
	return parse_scaled(s, 1024, min, max, out,
			    "size; expected bytes with an optional K, M or G (x1024), e.g. 4096, 64K, 8M", e);
}

static const struct {
	const char *name;
	uint64_t ns;
} dur_units[] = {
	{ "ns", 1 }, { "us", JTR_NS_PER_US }, { "ms", JTR_NS_PER_MS },
	{ "s", JTR_NS_PER_S }, { "m", 60 * JTR_NS_PER_S }, { "h", 3600 * JTR_NS_PER_S },
};

/* jtr_parse_duration_ns - number with unit; bare numbers are in @bare_unit_ns */
int jtr_parse_duration_ns(const char *s, uint64_t bare_unit_ns, uint64_t min_ns,
			  uint64_t max_ns, uint64_t *out, struct jtr_err *e)
{
	const char *p = s ? s : "";
	const char *example = bare_unit_ns == 1 ? "898, 10us or 1ms (a bare number is in ns)"
			    : "10, 500ms or 2m (a bare number is in seconds)";
	uint64_t whole, frac = 0, frac_div = 1, unit = bare_unit_ns, ns;
	size_t i;

	if (scan_u64(&p, 10, &whole) == -ERANGE)
		goto range;
	if (p == s || !s)
		goto bad;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			goto bad;
		for (; isdigit((unsigned char)*p); p++) {
			if (frac_div >= JTR_NS_PER_S * 1000)	/* more digits than ns can hold */
				continue;
			frac = frac * 10 + (uint64_t)(*p - '0');
			frac_div *= 10;
		}
	}
	if (*p != '\0') {
		for (i = 0; i < sizeof(dur_units) / sizeof(dur_units[0]); i++)
			if (strcmp(p, dur_units[i].name) == 0)
				break;
		if (i == sizeof(dur_units) / sizeof(dur_units[0]))
			goto bad;
		unit = dur_units[i].ns;
	}
	if (whole > UINT64_MAX / unit)
		goto range;
	ns = whole * unit;
	/* frac / frac_div of a unit, rounded down to the ns; unit <= 3.6e12 and
	 * frac < frac_div <= 1e12, so the product fits in 128 bits */
	ns += (uint64_t)(((unsigned __int128)frac * unit) / frac_div);
	if (ns < whole * unit)
		goto range;
	if (ns < min_ns || ns > max_ns)
		goto range;
	*out = ns;
	return 0;
bad:
	return jtr_err_set(e, -EINVAL, "'%s' is not a duration; " DUR_FORM, s ? s : "", example);
range:
	return jtr_err_set(e, -ERANGE, "'%s' is out of range; expected %llu ns to %llu ns",
			   s, (unsigned long long)min_ns, (unsigned long long)max_ns);
}

/* jtr_parse_double - finite decimal number in [min, max] */
int jtr_parse_double(const char *s, double min, double max, double *out,
		     struct jtr_err *e)
{
	const char *p;
	char *end;
	double v;

	if (!s || !*s)
		goto bad;
	/* only digits, one point and a leading sign: no exponents, hex, inf or nan */
	for (p = s; *p; p++)
		if (!isdigit((unsigned char)*p) && *p != '.' && !(p == s && (*p == '-' || *p == '+')))
			goto bad;
	errno = 0;
	v = strtod(s, &end);
	if (*end != '\0' || end == s || errno || !isfinite(v))
		goto bad;
	if (v < min || v > max)
		return jtr_err_set(e, -ERANGE, "'%s' is out of range; expected %g..%g", s, min, max);
	*out = v;
	return 0;
bad:
	return jtr_err_set(e, -EINVAL, "'%s' is not a number; expected a decimal such as 1 or 0.5",
			   s ? s : "");
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
