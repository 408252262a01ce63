// SPDX-License-Identifier: GPL-2.0-only
/* objects.c - what jtr ipc's objects carry: a sequence number in the first
 * 8 bytes and a check word made from it in the last 8, so a reader can tell
 * a lost, duplicated, reordered or corrupted object from a good one. */
#include <string.h>

#include "ipc.h"

/* check_word - what an object with sequence number @seq carries at its end */
static inline uint64_t check_word(uint64_t seq)
{
	return (seq + 1) * 0x9e3779b97f4a7c15ULL ^ 0x6a74722d6970632dULL;
}

/* ipc_fill_batch - @n objects from sequence number @seq into @buf */
uint64_t ipc_fill_batch(const struct ipc_cfg *c, unsigned char *buf, uint32_t n, uint64_t seq)
{
	const uint32_t size = c->size;

	for (uint32_t i = 0; i < n; i++, seq++, buf += size) {
		uint64_t chk;

		if (__builtin_expect(c->drop_every && (seq + 1) % c->drop_every == 0, 0))
			seq++;
		chk = check_word(seq);
		if (__builtin_expect(c->corrupt_every && (seq + 1) % c->corrupt_every == 0, 0))
			chk ^= 0x100;
		memcpy(buf, &seq, sizeof(seq));
		memcpy(buf + size - sizeof(chk), &chk, sizeof(chk));
	}
	return seq;
}

/* note_bad - remember where the first fault was */
static inline void note_bad(struct ipc_check *k, uint64_t at)
{
	if (!k->lost && !k->dups && !k->corrupt)
		k->first_bad = at;
}

/* ipc_check_objects - @n objects at @p: sequence numbers in order, check words right */
void ipc_check_objects(struct ipc_check *k, const unsigned char *p, uint64_t n, uint32_t size)
{
	for (uint64_t i = 0; i < n; i++, p += size) {
		uint64_t seq, chk;

		memcpy(&seq, p, sizeof(seq));
		memcpy(&chk, p + size - sizeof(chk), sizeof(chk));
		if (__builtin_expect(chk != check_word(seq), 0)) {
			note_bad(k, k->next);
			k->corrupt++;
			k->next++;
		} else if (__builtin_expect(seq != k->next, 0)) {
			note_bad(k, k->next);
			if (seq > k->next)
				k->lost += seq - k->next;
			else
				k->dups++;
			k->next = seq + 1;
		} else {
			k->next++;
		}
	}
}

/* ipc_check_tail - a piece of an object at end of stream counts as corrupted */
void ipc_check_tail(struct ipc_check *k)
{
	note_bad(k, k->next);
	k->corrupt++;
}
