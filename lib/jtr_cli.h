/* SPDX-License-Identifier: GPL-2.0-only */
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
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jtr_err.h"

#define JTR_NS_PER_US 1000ULL
#define JTR_NS_PER_MS 1000000ULL
#define JTR_NS_PER_S  1000000000ULL

/* The one value grammar of jtr (the Python front end reads the same;
 * tests/vectors/values.txt holds the cases both must agree on):
 *   duration  NUMBER[UNIT], UNIT ns, us, ms, s, m or h; NUMBER is digits with
 *             an optional fraction (1.5ms), exact to the ns (a part of a ns is
 *             dropped); no sign, exponent, inf or nan; a bare number is in
 *             seconds
 *   count     a whole decimal number with an optional K, M or G (x1000), any case
 *   size      bytes: a whole decimal number with an optional K, M or G (x1024)
 *   percent   NUMBER[%]: a bare number is a percentage (5 = 5%), fractions allowed
 *   cpulist   1, 0-3, 1,3-5 (and -1, no pinning, where an option allows it)
 *   int       decimal or 0x-hex with an optional sign
 * Nothing else: no spaces, no trailing junk. */

/* jtr_parse_int - decimal or 0x-hex integer with optional sign, in [min, max] */
int jtr_parse_int(const char *s, long long min, long long max, long long *out,
		  struct jtr_err *e);

/* jtr_parse_count - count with optional K, M or G (x1000) suffix, in [min, max] */
int jtr_parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out,
		    struct jtr_err *e);

/* jtr_parse_size - size in bytes with optional K, M or G (x1024) suffix */
int jtr_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out,
		   struct jtr_err *e);

/* jtr_parse_duration_ns - NUMBER[UNIT] in ns, in [min_ns, max_ns]; a bare
 * number is in seconds */
int jtr_parse_duration_ns(const char *s, uint64_t min_ns, uint64_t max_ns, uint64_t *out,
			  struct jtr_err *e);

/* jtr_parse_duration_legacy_ns - jtr_parse_duration_ns for an option whose
 * bare number meant @old_unit_ns (1: ns, JTR_NS_PER_MS: ms) before the one
 * grammar: a bare non-zero number is still read in that unit, and *@bare is
 * set so that the caller warns (jtr_duration_legacy_warning); "0" and a
 * number with a unit are read as everywhere else */
int jtr_parse_duration_legacy_ns(const char *s, uint64_t old_unit_ns, uint64_t min_ns,
				 uint64_t max_ns, uint64_t *out, bool *bare, struct jtr_err *e);

/* jtr_duration_legacy_warning - "OPT ARG: a bare number here still means ns
 * (as before); write ARGns - ..." into @buf; returns @buf */
char *jtr_duration_legacy_warning(char *buf, size_t n, const char *opt, const char *arg,
				  uint64_t old_unit_ns);

/* jtr_format_duration - @ns in the largest unit that holds it whole: 0,
 * 898ns, 10us, 1500us, 10s, 2m, 720h; returns @buf */
char *jtr_format_duration(uint64_t ns, char *buf, size_t n);

/* jtr_fmt_ns - @ns for people, as every summary writes it (jtrpy.units.fmt_ns):
 * 727 ns, 11.1 us, 2.97 ms, 1.20 s; returns @buf */
char *jtr_fmt_ns(uint64_t ns, char *buf, size_t n);

/* jtr_parse_percent - NUMBER[%] in [min, max] percent: 5, 5% and 0.5% */
int jtr_parse_percent(const char *s, double min, double max, double *out, struct jtr_err *e);

/* jtr_parse_cpulist - CPU list such as "1", "0-3" or "1,3-5" into @set */
int jtr_parse_cpulist(const char *s, cpu_set_t *set, struct jtr_err *e);

/* jtr_format_cpulist - write @set as a compact list ("0-3,6"); "" if empty.
 * Returns the length written or -ENOSPC. */
int jtr_format_cpulist(const cpu_set_t *set, char *buf, size_t n);

#endif
