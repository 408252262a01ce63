/* SPDX-License-Identifier: GPL-2.0-only */
/* tp_zip.h - a message's payload compressed with zlib (pub --compress zlib),
 * each message on its own: a datagram can be lost and a subscriber can join
 * late, so no message needs another to be read (the Refinitiv tools'
 * -compression). A compressed message keeps its header and intended time as
 * they are, with TP_F_COMPRESSED set and len its length on the wire, then
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
 * bytes (header and intended time copied, TP_F_COMPRESSED taken off, len the
 * length before compression): that length, or -EBADMSG (counted in bad) */
ssize_t tp_zip_unpack(struct tp_zip *z, const struct tp_msg *m, size_t len, unsigned char *out,
		      size_t cap);

/* tp_zip_add - @z's counts added to @into's (streams summed) */
void tp_zip_add(struct tp_zip *into, const struct tp_zip *z);

#endif
