// SPDX-License-Identifier: GPL-2.0-only
/* jtr_json.c - a small streaming JSON writer. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jtr_err.h"
#include "jtr_json.h"

/* jtr_json_init - start writing to @f */
void jtr_json_init(struct jtr_json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->first[0] = true;
}

/* utf8_len - length of the valid UTF-8 sequence at @s, 0 if invalid */
static int utf8_len(const unsigned char *s)
{
	int n, i;
	unsigned int cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates and values past U+10FFFF are invalid */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

/* jtr_json_escape - write @s as a quoted JSON string */
void jtr_json_escape(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p) {
		int n;

		switch (*p) {
		case '"': fputs("\\\"", f); p++; continue;
		case '\\': fputs("\\\\", f); p++; continue;
		case '\n': fputs("\\n", f); p++; continue;
		case '\r': fputs("\\r", f); p++; continue;
		case '\t': fputs("\\t", f); p++; continue;
		case '\b': fputs("\\b", f); p++; continue;
		case '\f': fputs("\\f", f); p++; continue;
		default: break;
		}
		if (*p < 0x20 || *p == 0x7f) {
			fprintf(f, "\\u%04x", *p);
			p++;
			continue;
		}
		n = utf8_len(p);
		if (n == 0) {
			fprintf(f, "\\u%04x", *p);	/* stray byte: its Latin-1 reading */
			p++;
			continue;
		}
		fwrite(p, 1, (size_t)n, f);
		p += n;
	}
	fputc('"', f);
}

/* sep - comma, newline and indentation before an element; then the key */
static void sep(struct jtr_json *j, const char *key)
{
	int d = j->depth;

	if (!j->first[d])
		fputc(',', j->f);
	if (d > 0) {
		if (j->inline_[d]) {
			if (!j->first[d])
				fputc(' ', j->f);
		} else {
			fputc('\n', j->f);
			for (int i = 0; i < d; i++)
				fputs("  ", j->f);
		}
	}
	j->first[d] = false;
	if (key) {
		jtr_json_escape(j->f, key);
		fputs(": ", j->f);
	}
}

/* open_level - begin an object or array */
static void open_level(struct jtr_json *j, const char *key, char c, bool inl)
{
	sep(j, key);
	fputc(c, j->f);
	if (j->depth + 1 >= JTR_JSON_MAX_DEPTH) {
		j->err = -EINVAL;
		return;
	}
	j->depth++;
	j->first[j->depth] = true;
	/* everything inside an inline level stays inline */
	j->inline_[j->depth] = inl || j->inline_[j->depth - 1];
}

/* close_level - end an object or array */
static void close_level(struct jtr_json *j, char c)
{
	bool empty = j->first[j->depth], inl = j->inline_[j->depth];

	if (j->depth == 0) {
		j->err = -EINVAL;
		return;
	}
	j->depth--;
	if (!empty && !inl) {
		fputc('\n', j->f);
		for (int i = 0; i < j->depth; i++)
			fputs("  ", j->f);
	}
	fputc(c, j->f);
}

void jtr_json_obj_begin(struct jtr_json *j, const char *key) { open_level(j, key, '{', false); }
void jtr_json_obj_end(struct jtr_json *j) { close_level(j, '}'); }
void jtr_json_arr_begin(struct jtr_json *j, const char *key) { open_level(j, key, '[', false); }
void jtr_json_arr_begin_inline(struct jtr_json *j, const char *key) { open_level(j, key, '[', true); }
void jtr_json_arr_end(struct jtr_json *j) { close_level(j, ']'); }

void jtr_json_str(struct jtr_json *j, const char *key, const char *v)
{
	sep(j, key);
	if (v)
		jtr_json_escape(j->f, v);
	else
		fputs("null", j->f);
}

void jtr_json_int(struct jtr_json *j, const char *key, long long v)
{
	sep(j, key);
	fprintf(j->f, "%lld", v);
}

void jtr_json_uint(struct jtr_json *j, const char *key, unsigned long long v)
{
	sep(j, key);
	fprintf(j->f, "%llu", v);
}

void jtr_json_double(struct jtr_json *j, const char *key, double v)
{
	char buf[64];

	sep(j, key);
	if (!isfinite(v)) {
		fputs("null", j->f);
		return;
	}
	/* fewest digits that read back to the same double */
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	fputs(buf, j->f);
}

void jtr_json_fixed(struct jtr_json *j, const char *key, double v, int decimals)
{
	sep(j, key);
	if (!isfinite(v))
		fputs("null", j->f);
	else
		fprintf(j->f, "%.*f", decimals, v);
}

void jtr_json_bool(struct jtr_json *j, const char *key, bool v)
{
	sep(j, key);
	fputs(v ? "true" : "false", j->f);
}

void jtr_json_null(struct jtr_json *j, const char *key)
{
	sep(j, key);
	fputs("null", j->f);
}

/* jtr_json_finish - end the document */
int jtr_json_finish(struct jtr_json *j)
{
	fputc('\n', j->f);
	if (j->err)
		return j->err;
	if (j->depth != 0)
		return -EINVAL;
	return jtr_write_errno(j->f);
}
