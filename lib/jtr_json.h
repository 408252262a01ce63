/* SPDX-License-Identifier: GPL-2.0-only */
/* jtr_json.h - a small streaming JSON writer.
 *
 * Commas, indentation and string escaping are the writer's job, never the
 * caller's: every string goes through jtr_json_escape(), so hostnames,
 * command lines and comm names with quotes, control characters or invalid
 * UTF-8 still give valid JSON. Keys are passed with values; inside arrays
 * (and at the top level) the key is NULL.
 */
#ifndef JTR_JSON_H
#define JTR_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JTR_JSON_MAX_DEPTH 32

struct jtr_json {
	FILE *f;
	int depth;
	bool first[JTR_JSON_MAX_DEPTH];		/* nothing written yet at this level */
	bool inline_[JTR_JSON_MAX_DEPTH];	/* this level is written on one line */
	int err;				/* -EINVAL on misuse (too deep, unbalanced) */
};

/* jtr_json_init - start writing to @f */
void jtr_json_init(struct jtr_json *j, FILE *f);

/* jtr_json_escape - write @s as a quoted JSON string. Control characters are
 * escaped; bytes that are not valid UTF-8 are written as \u00XX (their
 * Latin-1 reading) so the output always parses. */
void jtr_json_escape(FILE *f, const char *s);

void jtr_json_obj_begin(struct jtr_json *j, const char *key);
void jtr_json_obj_end(struct jtr_json *j);
void jtr_json_arr_begin(struct jtr_json *j, const char *key);
/* jtr_json_arr_begin_inline - an array written on one line: [1, 2, 3] */
void jtr_json_arr_begin_inline(struct jtr_json *j, const char *key);
void jtr_json_arr_end(struct jtr_json *j);

void jtr_json_str(struct jtr_json *j, const char *key, const char *v);	/* NULL: null */
void jtr_json_int(struct jtr_json *j, const char *key, long long v);
void jtr_json_uint(struct jtr_json *j, const char *key, unsigned long long v);
/* jtr_json_double - shortest form that reads back equal; inf and nan: null */
void jtr_json_double(struct jtr_json *j, const char *key, double v);
/* jtr_json_fixed - @v with @decimals decimals (for ns means and shares) */
void jtr_json_fixed(struct jtr_json *j, const char *key, double v, int decimals);
void jtr_json_bool(struct jtr_json *j, const char *key, bool v);
void jtr_json_null(struct jtr_json *j, const char *key);

/* jtr_json_finish - end the document; 0, or -EINVAL if unbalanced, -EIO on
 * a write error */
int jtr_json_finish(struct jtr_json *j);

#endif
