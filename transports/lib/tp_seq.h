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
 */
#ifndef JTR_TP_SEQ_H
#define JTR_TP_SEQ_H

#include <stdbool.h>
#include <stdint.h>

#define TP_SEQ_WINDOW 4096

enum tp_seq_verdict {
	TP_SEQ_IN_ORDER,	/* the next one */
	TP_SEQ_GAP,		/* ahead of next: the ones between are lost (for now) */
	TP_SEQ_LATE,		/* a lost one arrived after all: reordered */
	TP_SEQ_DUP,		/* seen before */
	TP_SEQ_STALE,		/* older than the window: not counted either way */
};

struct tp_seq {
	uint64_t first;		/* first number received */
	uint64_t next;		/* highest received + 1 */
	uint64_t received;	/* distinct numbers received */
	uint64_t lost;		/* numbers in [first, next) not received */
	uint64_t duplicates;
	uint64_t reordered;
	uint64_t stale;
	bool started;
	uint64_t seen[TP_SEQ_WINDOW / 64];	/* bit seq % WINDOW: seq received */
};

/* tp_seq_init - nothing seen */
void tp_seq_init(struct tp_seq *s);

/* tp_seq_note - account for @seq */
enum tp_seq_verdict tp_seq_note(struct tp_seq *s, uint64_t seq);

/* tp_seq_end - the sender says it sent @sent numbers (0 .. sent-1): those
 * after the last one received are lost, and so are those before the first
 * if @from_zero (the receiver was there from the start) */
void tp_seq_end(struct tp_seq *s, uint64_t sent, bool from_zero);

#endif
