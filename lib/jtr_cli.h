/* jtr_cli.h - strict parsers for command-line values.
 *
 * Every parser accepts the whole string or nothing (no trailing junk, no
 * silent wrap-around), returns 0 or -EINVAL / -ERANGE, and on error fills
 * @e with a message that quotes the bad value and shows the accepted form.
 */
#ifndef JTR_CLI_H
#define JTR_CLI_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stddef.h>
#include <stdint.h>

#include "jtr_err.h"

#define JTR_NS_PER_US 1000ULL
#define JTR_NS_PER_MS 1000000ULL
#define JTR_NS_PER_S  1000000000ULL

/* jtr_parse_int - decimal or 0x-hex integer with optional sign, in [min, max] */
int jtr_parse_int(const char *s, long long min, long long max, long long *out,
		  struct jtr_err *e);

/* jtr_parse_count - non-negative count with optional K, M or G (x1000) suffix */
int jtr_parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out,
		    struct jtr_err *e);

/* jtr_parse_size - size in bytes with optional K, M or G (x1024) suffix */
int jtr_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out,
		   struct jtr_err *e);

/* jtr_parse_duration_ns - number with unit ns/us/ms/s/m/h; bare numbers are in
 * @bare_unit_ns (1 for ns, JTR_NS_PER_S for seconds). Fractions such as 1.5ms
 * are exact to the nanosecond; exponents, inf and nan are refused. */
int jtr_parse_duration_ns(const char *s, uint64_t bare_unit_ns, uint64_t min_ns,
			  uint64_t max_ns, uint64_t *out, struct jtr_err *e);

/* jtr_parse_double - finite decimal number in [min, max] */
int jtr_parse_double(const char *s, double min, double max, double *out,
		     struct jtr_err *e);

/* jtr_parse_cpulist - CPU list such as "1", "0-3" or "1,3-5" into @set */
int jtr_parse_cpulist(const char *s, cpu_set_t *set, struct jtr_err *e);

/* jtr_format_cpulist - write @set as a compact list ("0-3,6"); "" if empty.
 * Returns the length written or -ENOSPC. */
int jtr_format_cpulist(const cpu_set_t *set, char *buf, size_t n);

#endif
