/* SPDX-License-Identifier: GPL-2.0-only */
/* tp_zip.h - a message carried changed on the wire (TP_F_EXT): compressed,
 * or cut in fragments. The 4 bytes at TP_EXT_OFF are the whole message's
 * length, with TP_EXT_FRAG set in a fragment.
 *
 * Fragments (pub --max-fragment, the Refinitiv tools' -maxFragmentSize): a
 * message longer than the largest fragment goes in several writes, each
 * with the message's header and intended time (len: the fragment's own),
 * the whole length | TP_EXT_FRAG, where its bytes go in the message (4
 * bytes), then those bytes, in order from byte TP_FULL_LEN:
 *
 *   0       24   the header (len: the fragment's bytes on the wire)
 *   24      8    intended_ns
 *   32      4    the message's length | TP_EXT_FRAG
 *   36      4    the offset in the message of the bytes that follow
 *   40      ...  those bytes
 *
 * A receiver puts a message together from its fragments in order; one that
 * misses a fragment is dropped (counted incomplete; the message is lost by
 * its number).
 *
 * Compression: a message's payload compressed with zlib (pub --compress zlib),
 * each message on its own: a datagram can be lost and a subscriber can join
 * late, so no message needs another to be read (the Refinitiv tools'
 * -compression). A compressed message keeps its header and intended time as
 * they are, with TP_F_EXT set and len its length on the wire, then
 * the payload's length before compression (4 bytes), then the payload as a
 * raw deflate stream:
 *
 *   offset  size
 *   0       24   the header (len: the bytes on the wire)
 *   24      8    intended_ns
 *   32      4    the whole message's length before compression
 *   36      ...  the payload (from TP_FULL_LEN), deflated
 *
 * zlib's window and hash are sized to the message (from 512 bytes and a
 * 256-entry hash for the shortest to 32 KB and 32K entries), so that what a
 * message costs is its own compression and not the clearing of tables sized
 * for long streams. Nothing is allocated per message; each end counts its
 * messages, bytes before and after, and the time spent. */
#ifndef TP_ZIP_H
#define TP_ZIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <zlib.h>

#include "tp.h"

#define TP_EXT_OFF TP_FULL_LEN		/* the whole message's length */
#define TP_EXT_FRAG 0x80000000u		/* in it: this is a fragment */
#define TP_FRAG_OFF (TP_FULL_LEN + 8u)	/* where a fragment's bytes begin */
#define TP_FRAG_MIN (TP_FRAG_OFF + 8u)	/* the smallest fragment (--max-fragment) */
#define TP_FRAG_MSG_MAX (1u << 24)	/* the longest message in fragments (pub's -m) */
#define TP_ZIP_OFF (TP_FULL_LEN + 4u)	/* where the deflated payload begins */
#define TP_ZIP_MIN_LEN (TP_FULL_LEN + 8u)	/* the shortest message compressed */

struct tp_zip {
	z_stream z;
	bool on;		/* initialised */
	bool deflating;		/* pub's end (else sub's) */
	int level;		/* 1 (fastest) .. 9 (smallest) */
	uint64_t msgs;		/* messages compressed or expanded */
	uint64_t kept;		/* pub: messages sent as they were (not shorter compressed) */
	uint64_t raw_bytes;	/* their lengths before compression */
	uint64_t wire_bytes;	/* and on the wire */
	uint64_t ns;		/* the time spent compressing or expanding */
	uint64_t bad;		/* sub: compressed messages that did not expand to their length */
};

/* tp_zip_init - a compressing end (@deflating, at @level 1-9) for messages of
 * up to @len bytes, or an expanding one; 0 or -ENOMEM */
int tp_zip_init(struct tp_zip *z, bool deflating, int level, uint32_t len);

/* tp_zip_end - free what zlib holds */
void tp_zip_end(struct tp_zip *z);

/* tp_zip_pack - @m (its len bytes, at least TP_ZIP_MIN_LEN) compressed into
 * @out of @cap bytes: the compressed message's length, or 0 when it would not
 * be shorter than @cap (send @m as it is; counted in kept) */
size_t tp_zip_pack(struct tp_zip *z, const struct tp_msg *m, unsigned char *out, size_t cap);

/* tp_zip_unpack - compressed @m of @len bytes expanded into @out of @cap
 * bytes (header and intended time copied, TP_F_EXT taken off, len the
 * length before compression): that length, or -EBADMSG (counted in bad) */
ssize_t tp_zip_unpack(struct tp_zip *z, const struct tp_msg *m, size_t len, unsigned char *out,
		      size_t cap);

/* tp_zip_add - @z's counts added to @into's (streams summed) */
void tp_zip_add(struct tp_zip *into, const struct tp_zip *z);

/* tp_ext_is_frag - @m (flagged TP_F_EXT, @len bytes) is a fragment */
static inline bool tp_ext_is_frag(const struct tp_msg *m, size_t len)
{
	uint32_t v;

	if (len < TP_EXT_OFF + 4)
		return false;
	__builtin_memcpy(&v, (const unsigned char *)m + TP_EXT_OFF, sizeof(v));
	return v & TP_EXT_FRAG;
}

/* a sender's fragments (pub --max-fragment) */
struct tp_frag_tx {
	uint32_t max;		/* the longest fragment, bytes on the wire */
	unsigned char *buf;	/* one fragment */
	uint64_t msgs;		/* messages sent in fragments */
	uint64_t frags;		/* their fragments */
};

/* a receiver's message being put together */
struct tp_frag_rx {
	unsigned char *buf;	/* the message (grown to the longest seen) */
	size_t cap;
	uint64_t seq;		/* its number */
	uint32_t total;		/* its length */
	uint32_t next;		/* the offset the next fragment must have */
	bool open;		/* a message is being put together */
	uint64_t frags;		/* fragments taken */
	uint64_t msgs;		/* messages put together */
	uint64_t incomplete;	/* messages dropped for a missing fragment */
	uint64_t orphans;	/* fragments of those, dropped */
	uint64_t bad;		/* fragments that fit no message */
};

/* tp_frag_tx_init - fragments of at most @max bytes (>= TP_FRAG_MIN); -ENOMEM */
int tp_frag_tx_init(struct tp_frag_tx *f, uint32_t max);

/* tp_frag_build - the fragment of @m whose bytes begin at @off (from
 * TP_FULL_LEN) in f->buf: the bytes it carries (it is TP_FRAG_OFF longer) */
uint32_t tp_frag_build(struct tp_frag_tx *f, const struct tp_msg *m, uint32_t off);

/* tp_frag_send - @m (its len bytes, more than f->max) in fragments through
 * @t: 0, or the first failed send's error */
int tp_frag_send(struct tp_frag_tx *f, struct tp *t, const struct tp_msg *m);

/* tp_frag_take - fragment @m of @len bytes: the message's length once its
 * last fragment is in (the message, with the header as sent, at r->buf), 0
 * while more are to come, -EBADMSG for a fragment that fits no message,
 * -ENOMEM when a message longer than any before cannot have room */
ssize_t tp_frag_take(struct tp_frag_rx *r, const struct tp_msg *m, size_t len);

/* tp_frag_rx_add - @r's counts added to @into's (streams summed) */
void tp_frag_rx_add(struct tp_frag_rx *into, const struct tp_frag_rx *r);

#endif
