// SPDX-License-Identifier: GPL-2.0-only
/* test_payload.c - a published message's payload: written for its number,
 * checked byte for byte, every length from the header's up. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tp.h"

#define MAXLEN 200u

static _Alignas(8) unsigned char buf[MAXLEN + 8];

/* msg - message @seq of @len bytes at @off into buf (any alignment) */
static struct tp_msg *msg(uint32_t len, uint64_t seq, size_t off)
{
	struct tp_msg *m = (struct tp_msg *)(void *)(buf + off);

	memset(buf, 0xa5, sizeof(buf));
	tp_msg_fill(m, len, 0, seq, 0, 0);
	tp_payload_fill(m, len, seq);
	return m;
}

/* every length and several numbers: what is written checks, and it is the
 * documented pattern (byte o is byte o mod 8 of the number's word) */
static void test_fill_then_ok(void **state)
{
	(void)state;
	for (uint32_t len = TP_HDR_LEN; len <= MAXLEN; len++)
		for (uint64_t seq = 0; seq < 40; seq += 13) {
			struct tp_msg *m = msg(len, seq, 0);
			const uint64_t w = tp_payload_word(seq);
			unsigned char wb[8];

			memcpy(wb, &w, sizeof(wb));
			assert_true(tp_payload_ok(m));
			for (uint32_t o = tp_payload_off(len); o < len; o++)
				assert_int_equal(buf[o], wb[o & 7]);
			/* nothing beyond the message is written */
			assert_int_equal(buf[len], 0xa5);
		}
}

/* the payload begins after the intended time from 32 bytes on, after the
 * header below */
static void test_where_it_begins(void **state)
{
	(void)state;
	assert_int_equal(tp_payload_off(24), 24);
	assert_int_equal(tp_payload_off(31), 24);
	assert_int_equal(tp_payload_off(32), 32);
	assert_int_equal(tp_payload_off(50), 32);
}

/* one byte changed anywhere in the payload, the last one included, is
 * found; so is another message's payload under this number */
static void test_any_change_is_found(void **state)
{
	(void)state;
	for (uint32_t len = TP_HDR_LEN + 1; len <= 80; len++)
		for (uint32_t o = tp_payload_off(len); o < len; o++) {
			struct tp_msg *m = msg(len, 7, 0);

			buf[o] ^= 0x01;
			assert_false(tp_payload_ok(m));
		}
	for (uint32_t len = TP_HDR_LEN + 1; len <= 80; len++) {
		struct tp_msg *m = msg(len, 8, 0);

		if (tp_payload_off(len) == len)
			continue;	/* 32 bytes: no payload */
		m->seq = 9;	/* message 8's bytes under number 9 */
		assert_false(tp_payload_ok(m));
	}
}

/* a message with no room for a payload checks trivially */
static void test_header_only(void **state)
{
	(void)state;
	assert_true(tp_payload_ok(msg(TP_HDR_LEN, 3, 0)));
	assert_true(tp_payload_ok(msg(TP_FULL_LEN, 3, 0)));
}

/* packed messages sit at any offset: an unaligned one checks the same */
static void test_unaligned(void **state)
{
	(void)state;
	for (size_t off = 1; off < 8; off++) {
		struct tp_msg *m = msg(50, 1234567, off);

		assert_true(tp_payload_ok(m));
		buf[off + 49] ^= 0x80;
		assert_false(tp_payload_ok(m));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fill_then_ok),
		cmocka_unit_test(test_where_it_begins),
		cmocka_unit_test(test_any_change_is_found),
		cmocka_unit_test(test_header_only),
		cmocka_unit_test(test_unaligned),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
