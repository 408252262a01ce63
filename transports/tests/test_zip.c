// SPDX-License-Identifier: GPL-2.0-only
/* test_zip.c - pub --compress: a message compressed on its own and expanded
 * back to exactly what was sent, every length from the shortest compressed
 * one; a message that would not be shorter is kept as it is; what does not
 * expand to its stated length is refused and counted. A message cut in
 * fragments is put together as it was sent; one missing a fragment is
 * dropped and counted, and so are its other fragments. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tp_zip.h"

#define MAXLEN 100000u

static _Alignas(8) unsigned char raw[MAXLEN], wire[MAXLEN], back[MAXLEN];

/* msg - message @seq of @len bytes, stamped, in raw */
static struct tp_msg *msg(uint32_t len, uint64_t seq)
{
	struct tp_msg *m = (struct tp_msg *)(void *)raw;

	memset(raw, 0xa5, sizeof(raw));
	tp_payload_fill(m, len, seq);
	tp_msg_fill(m, len, TP_F_STAMPED, seq, 1234567, 7654321);
	return m;
}

static void test_round_trip_every_length(void **state)
{
	struct tp_zip d, i;
	uint64_t sent = 0, wire_bytes = 0;

	(void)state;
	assert_int_equal(tp_zip_init(&i, false, 0, 0), 0);
	for (uint32_t len = TP_ZIP_MIN_LEN; len <= 4096; len += len < 300 ? 1 : 97) {
		assert_int_equal(tp_zip_init(&d, true, 6, len), 0);
		for (uint64_t seq = 0; seq < 3; seq++) {
			const struct tp_msg *m = msg(len, seq * 1000003);
			size_t n = tp_zip_pack(&d, m, wire, len - 1);
			const struct tp_msg *w = (const struct tp_msg *)(void *)wire;
			ssize_t r;

			sent++;
			if (!n)		/* not shorter: sent as it is */
				continue;
			assert_true(n < len && n > TP_ZIP_OFF);
			assert_int_equal(w->len, n);
			assert_true(w->flags & TP_F_EXT);
			assert_true(tp_msg_ok(w, n));
			wire_bytes += n;
			memset(back, 0, sizeof(back));
			r = tp_zip_unpack(&i, w, n, back, sizeof(back));
			assert_int_equal(r, len);
			assert_memory_equal(back, raw, len);	/* flags and len as sent */
			assert_true(tp_payload_ok((const struct tp_msg *)(void *)back));
		}
		assert_int_equal(d.msgs, 3);
		tp_zip_end(&d);
	}
	assert_int_equal(i.bad, 0);
	assert_int_equal(i.wire_bytes, wire_bytes);
	/* the pattern compresses: from 100 bytes on, every message is shorter */
	assert_true(i.msgs > sent / 2);
	tp_zip_end(&i);
}

static void test_too_short_to_gain_is_kept(void **state)
{
	struct tp_zip d;

	(void)state;
	assert_int_equal(tp_zip_init(&d, true, 9, TP_ZIP_MIN_LEN), 0);
	/* 8 bytes of payload cannot come out shorter with 4 bytes of length before them */
	assert_int_equal(tp_zip_pack(&d, msg(TP_ZIP_MIN_LEN, 5), wire, TP_ZIP_MIN_LEN - 1), 0);
	assert_int_equal(d.kept, 1);
	assert_int_equal(d.wire_bytes, TP_ZIP_MIN_LEN);
	tp_zip_end(&d);
}

static void test_what_does_not_expand_is_refused(void **state)
{
	struct tp_zip d, i;
	struct tp_msg *w = (struct tp_msg *)(void *)wire;
	size_t n;

	(void)state;
	assert_int_equal(tp_zip_init(&d, true, 6, 1000), 0);
	assert_int_equal(tp_zip_init(&i, false, 0, 0), 0);
	n = tp_zip_pack(&d, msg(1000, 42), wire, 999);
	assert_true(n > 0);
	/* a receiver with room for less than the stated length */
	assert_int_equal(tp_zip_unpack(&i, w, n, back, 999), -EBADMSG);
	/* cut short; then a byte of the stream changed */
	assert_int_equal(tp_zip_unpack(&i, w, n - 1, back, sizeof(back)), -EBADMSG);
	wire[TP_ZIP_OFF] ^= 0xff;
	assert_int_equal(tp_zip_unpack(&i, w, n, back, sizeof(back)), -EBADMSG);
	wire[TP_ZIP_OFF] ^= 0xff;
	/* a stated length longer than the stream expands to */
	wire[TP_FULL_LEN] += 1;
	assert_int_equal(tp_zip_unpack(&i, w, n, back, sizeof(back)), -EBADMSG);
	wire[TP_FULL_LEN] -= 1;
	assert_int_equal(tp_zip_unpack(&i, w, n, back, sizeof(back)), 1000);
	assert_int_equal(i.bad, 4);
	assert_int_equal(i.msgs, 1);
	tp_zip_end(&d);
	tp_zip_end(&i);
}

/* frags - message @seq of @len bytes cut in fragments of at most @max bytes,
 * given to @r in order but those whose bit is set in @skip; what the last
 * one given returned */
static ssize_t frags(struct tp_frag_rx *r, uint32_t len, uint64_t seq, uint32_t max,
		     unsigned skip, unsigned *count)
{
	struct tp_frag_tx f;
	const struct tp_msg *m = msg(len, seq);
	ssize_t rc = 0;
	unsigned k = 0;

	assert_int_equal(tp_frag_tx_init(&f, max), 0);
	for (uint32_t off = TP_FULL_LEN; off < len; k++) {
		const uint32_t n = tp_frag_build(&f, m, off);
		const struct tp_msg *w = (const struct tp_msg *)(void *)f.buf;

		assert_true(tp_msg_ok(w, TP_FRAG_OFF + n) && (w->flags & TP_F_EXT));
		assert_true(tp_ext_is_frag(w, TP_FRAG_OFF + n));
		assert_true(TP_FRAG_OFF + n <= max);
		if (!(skip & (1u << k)))
			rc = tp_frag_take(r, w, TP_FRAG_OFF + n);
		off += n;
	}
	*count = k;
	free(f.buf);
	return rc;
}

static void test_fragments_put_together(void **state)
{
	struct tp_frag_rx r;
	unsigned k;

	(void)state;
	memset(&r, 0, sizeof(r));
	/* 3000 bytes in fragments of 1000: 968 bytes each after their 40, 4 of them */
	assert_int_equal(frags(&r, 3000, 7, 1000, 0, &k), 3000);
	assert_int_equal(k, 4);
	assert_memory_equal(r.buf, msg(3000, 7), 3000);	/* header and flags as sent */
	assert_true(tp_payload_ok((const struct tp_msg *)(void *)r.buf));
	/* one whose third fragment went missing: dropped when the next message
	 * begins, which is put together */
	assert_int_equal(frags(&r, 3000, 8, 1000, 1u << 2, &k), 0);
	assert_int_equal(frags(&r, 3000, 9, 1000, 0, &k), 3000);
	assert_memory_equal(r.buf, msg(3000, 9), 3000);
	/* one whose first went missing: its others dropped quietly */
	assert_int_equal(frags(&r, 3000, 10, 1000, 1u, &k), 0);
	/* a longer one than any before: room made for it */
	assert_int_equal(frags(&r, 100000, 11, 9000, 0, &k), 100000);
	assert_memory_equal(r.buf, msg(100000, 11), 100000);
	assert_int_equal(r.msgs, 3);
	assert_int_equal(r.incomplete, 2);
	assert_int_equal(r.orphans, 1 + 3);
	assert_int_equal(r.bad, 0);
	assert_int_equal(r.frags, 4 + 2 + 4 + 12);
	free(r.buf);
}

static void test_fragments_that_fit_no_message(void **state)
{
	struct tp_frag_rx r;
	struct tp_frag_tx f;
	struct tp_msg *w;
	uint32_t v;

	(void)state;
	memset(&r, 0, sizeof(r));
	assert_int_equal(tp_frag_tx_init(&f, 1000), 0);
	w = (struct tp_msg *)(void *)f.buf;
	tp_frag_build(&f, msg(3000, 1), TP_FULL_LEN);
	/* bytes past the stated length; an offset inside the header; a length
	 * past 16 MB */
	v = 100 | TP_EXT_FRAG;
	memcpy(f.buf + TP_EXT_OFF, &v, 4);
	assert_int_equal(tp_frag_take(&r, w, w->len), -EBADMSG);
	v = 3000 | TP_EXT_FRAG;
	memcpy(f.buf + TP_EXT_OFF, &v, 4);
	v = 8;
	memcpy(f.buf + TP_EXT_OFF + 4, &v, 4);
	assert_int_equal(tp_frag_take(&r, w, w->len), -EBADMSG);
	v = TP_FULL_LEN;
	memcpy(f.buf + TP_EXT_OFF + 4, &v, 4);
	v = (TP_FRAG_MSG_MAX + 1) | TP_EXT_FRAG;
	memcpy(f.buf + TP_EXT_OFF, &v, 4);
	assert_int_equal(tp_frag_take(&r, w, w->len), -EBADMSG);
	assert_int_equal(r.bad, 3);
	assert_int_equal(r.frags, 0);
	free(f.buf);
	free(r.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_every_length),
		cmocka_unit_test(test_too_short_to_gain_is_kept),
		cmocka_unit_test(test_what_does_not_expand_is_refused),
		cmocka_unit_test(test_fragments_put_together),
		cmocka_unit_test(test_fragments_that_fit_no_message),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
