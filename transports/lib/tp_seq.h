/* SPDX-License-Identifier: GPL-2.0-only */
/* tp_seq.h - sequence accounting: loss, duplicates and reordering.
 *
 * A receiver notes every sequence number it gets. The highest seen plus one
 * is "next"; a jump past next counts the skipped numbers as lost; one of
 * them arriving later is un-lost and counted as reordered; a number seen
 * before is a duplicate. A bitmap remembers the last TP_SEQ_WINDOW numbers;
 * an arrival older than that cannot be told apart and is counted as stale.
 * At the end of stream the sender's count adds the tail loss (messages after
 * the last one received). Noting a number is a few instructions and never
 * allocates.
 *
 * A number above @limit (the highest the sender can have issued by now; the
 * receiver sets it before each note, UINT64_MAX by default) is out of window:
 * counted and otherwise ignored, so one forged or corrupt number cannot turn
 * into billions of lost messages nor make the real ones that follow look
 * stale. tp_seq_limit_at() gives the bound a receiver that knows nothing of
 * the sender's rate uses: the first number it noted, plus TP_SEQ_JUMP_FLOOR,
 * plus one number per TP_SEQ_NS_PER_NUMBER since that first arrival.
 */
#ifndef JTR_TP_SEQ_H
#define JTR_TP_SEQ_H

#include <stdbool.h>
#include <stdint.h>

#define TP_SEQ_WINDOW 4096
/* out-of-window bound: 1M numbers ahead at any time, and no sender issues
 * more than one number per 8 ns (125M messages/s; the fastest transport
 * here, shm pub/sub with 50-byte messages, moves tens of millions a second) */
#define TP_SEQ_JUMP_FLOOR (1ULL << 20)
#define TP_SEQ_NS_PER_NUMBER 8

enum tp_seq_verdict {
	TP_SEQ_IN_ORDER,	/* the next one */
	TP_SEQ_GAP,		/* ahead of next: the ones between are lost (for now) */
	TP_SEQ_LATE,		/* a lost one arrived after all: reordered */
	TP_SEQ_DUP,		/* seen before */
	TP_SEQ_STALE,		/* older than the window: not counted either way */
	TP_SEQ_OUT_OF_WINDOW,	/* above the limit: counted, nothing else changes */
};

struct tp_seq {
	uint64_t first;		/* first number received */
	uint64_t next;		/* highest received + 1 */
	uint64_t received;	/* distinct numbers received */
	uint64_t lost;		/* numbers in [first, next) not received */
	uint64_t duplicates;
	uint64_t reordered;
	uint64_t stale;
	uint64_t out_of_window;	/* numbers above the limit, ignored */
	uint64_t base;		/* the very first number noted (first may go lower) */
	uint64_t limit;		/* the highest number the sender can have issued */
	bool started;
	uint64_t seen[TP_SEQ_WINDOW / 64];	/* bit seq % WINDOW: seq received */
};

/* tp_seq_init - nothing seen, no limit */
void tp_seq_init(struct tp_seq *s);

/* tp_seq_limit_at - the highest number a sender can have issued
 * @elapsed_ns after this receiver noted its first one (before any:
 * @elapsed_ns after the receiver started, from 0) */
static inline uint64_t tp_seq_limit_at(const struct tp_seq *s, uint64_t elapsed_ns)
{
	uint64_t base = s->started ? s->base : 0;
	uint64_t ahead = TP_SEQ_JUMP_FLOOR + elapsed_ns / TP_SEQ_NS_PER_NUMBER;

	return base > UINT64_MAX - ahead ? UINT64_MAX : base + ahead;
}

/* tp_seq_note_slow - tp_seq_note for all but the next number in order */
enum tp_seq_verdict tp_seq_note_slow(struct tp_seq *s, uint64_t seq);

/* tp_seq_note - account for @seq (above s->limit: out of window); the next
 * number in order is handled inline (a compare, a bit set, two increments) */
static inline enum tp_seq_verdict tp_seq_note(struct tp_seq *s, uint64_t seq)
{
	if (__builtin_expect(seq == s->next && s->started && seq <= s->limit, 1)) {
		uint64_t i = seq % TP_SEQ_WINDOW;

		s->seen[i / 64] |= 1ULL << (i % 64);
		s->next++;
		s->received++;
		return TP_SEQ_IN_ORDER;
	}
	return tp_seq_note_slow(s, seq);
}

/* tp_seq_end - the sender says it sent @sent numbers (0 .. sent-1): those
 * after the last one received are lost, and so are those before the first
 * if @from_zero (the receiver was there from the start) */
void tp_seq_end(struct tp_seq *s, uint64_t sent, bool from_zero);

#endif
