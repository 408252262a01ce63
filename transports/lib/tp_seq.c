// SPDX-License-Identifier: GPL-2.0-only
/* tp_seq.c - sequence accounting (see tp_seq.h). */
#include <string.h>

#include "tp_seq.h"

/* bit helpers on the window */
static inline bool seen_get(const struct tp_seq *s, uint64_t q)
{
	uint64_t i = q % TP_SEQ_WINDOW;

	return (s->seen[i / 64] >> (i % 64)) & 1;
}

static inline void seen_set(struct tp_seq *s, uint64_t q, bool v)
{
	uint64_t i = q % TP_SEQ_WINDOW, b = 1ULL << (i % 64);

	if (v)
		s->seen[i / 64] |= b;
	else
		s->seen[i / 64] &= ~b;
}

/* tp_seq_init - nothing seen */
void tp_seq_init(struct tp_seq *s)
{
	memset(s, 0, sizeof(*s));
	s->limit = UINT64_MAX;
}

/* tp_seq_note_slow - account for one received number */
enum tp_seq_verdict tp_seq_note_slow(struct tp_seq *s, uint64_t seq)
{
	if (__builtin_expect(seq > s->limit, 0)) {
		s->out_of_window++;
		return TP_SEQ_OUT_OF_WINDOW;
	}
	if (__builtin_expect(!s->started, 0)) {
		s->started = true;
		s->base = seq;
		s->first = seq;
		s->next = seq + 1;
		s->received = 1;
		seen_set(s, seq, true);
		return TP_SEQ_IN_ORDER;
	}
	if (__builtin_expect(seq == s->next, 1)) {
		seen_set(s, seq, true);
		s->next++;
		s->received++;
		return TP_SEQ_IN_ORDER;
	}
	if (seq > s->next) {
		uint64_t gap = seq - s->next;

		/* the skipped numbers' bits now mean "not received" */
		if (gap >= TP_SEQ_WINDOW)
			memset(s->seen, 0, sizeof(s->seen));
		else
			for (uint64_t q = s->next; q < seq; q++)
				seen_set(s, q, false);
		seen_set(s, seq, true);
		s->lost += gap;
		s->next = seq + 1;
		s->received++;
		return TP_SEQ_GAP;
	}
	if (seq < s->first) {
		/* before the first one: nothing was counted lost for it */
		if (s->first - seq >= TP_SEQ_WINDOW || s->next - seq > TP_SEQ_WINDOW) {
			s->stale++;
			return TP_SEQ_STALE;
		}
		for (uint64_t q = seq + 1; q < s->first; q++)
			seen_set(s, q, false);
		s->lost += s->first - seq - 1;
		s->first = seq;
		seen_set(s, seq, true);
		s->received++;
		s->reordered++;
		return TP_SEQ_LATE;
	}
	if (s->next - seq > TP_SEQ_WINDOW) {
		s->stale++;
		return TP_SEQ_STALE;
	}
	if (seen_get(s, seq)) {
		s->duplicates++;
		return TP_SEQ_DUP;
	}
	seen_set(s, seq, true);
	s->lost--;
	s->reordered++;
	s->received++;
	return TP_SEQ_LATE;
}

/* tp_seq_end - add the tail loss (and the head loss if @from_zero) */
void tp_seq_end(struct tp_seq *s, uint64_t sent, bool from_zero)
{
	if (!s->started) {
		if (from_zero)
			s->lost += sent;
		return;
	}
	if (sent > s->next) {
		s->lost += sent - s->next;
		s->next = sent;
	}
	if (from_zero && s->first > 0) {
		s->lost += s->first;
		s->first = 0;
	}
}
