// SPDX-License-Identifier: GPL-2.0-only
/* tp_zip.c - a message carried changed: compressed with zlib, each message
 * on its own, or cut in fragments (tp_zip.h) */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tp_int.h"
#include "tp_zip.h"

/* bits_for - the window's log2 for a payload of @n bytes: 9 (512 bytes,
 * zlib's smallest for deflate) to 15 (32 KB) */
static int bits_for(uint32_t n)
{
	int b = 9;

	while (b < 15 && (1u << b) < n)
		b++;
	return b;
}

/* prime - one byte through a new deflater and @z's inflater, so that the
 * window zlib allocates at the first expansion is there before the run */
static int prime(struct tp_zip *z)
{
	unsigned char in = 'j', mid[16], out[4];
	z_stream d;
	int rc;

	memset(&d, 0, sizeof(d));
	if (deflateInit2(&d, 1, Z_DEFLATED, -9, 1, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	d.next_in = &in;
	d.avail_in = 1;
	d.next_out = mid;
	d.avail_out = sizeof(mid);
	rc = deflate(&d, Z_FINISH);
	deflateEnd(&d);
	if (rc != Z_STREAM_END)
		return -ENOMEM;
	z->z.next_in = mid;
	z->z.avail_in = (uInt)(sizeof(mid) - d.avail_out);
	z->z.next_out = out;
	z->z.avail_out = sizeof(out);
	rc = inflate(&z->z, Z_FINISH);
	inflateReset(&z->z);
	return rc == Z_STREAM_END ? 0 : -ENOMEM;
}

int tp_zip_init(struct tp_zip *z, bool deflating, int level, uint32_t len)
{
	const int bits = bits_for(len > TP_FULL_LEN ? len - TP_FULL_LEN : 1);
	int rc;

	memset(z, 0, sizeof(*z));
	z->deflating = deflating;
	z->level = level;
	/* raw deflate (no zlib header: the message has its own), the hash
	 * as wide as the window (memLevel + 7 bits) */
	rc = deflating ? deflateInit2(&z->z, level, Z_DEFLATED, -bits, bits - 7 > 0 ? bits - 7 : 1,
				      Z_DEFAULT_STRATEGY) :
			 inflateInit2(&z->z, -15);
	if (rc != Z_OK)
		return -ENOMEM;
	z->on = true;
	if (!deflating && prime(z) < 0) {
		tp_zip_end(z);
		return -ENOMEM;
	}
	return 0;
}

void tp_zip_end(struct tp_zip *z)
{
	if (!z->on)
		return;
	if (z->deflating)
		deflateEnd(&z->z);
	else
		inflateEnd(&z->z);
	z->on = false;
}

size_t tp_zip_pack(struct tp_zip *z, const struct tp_msg *m, unsigned char *out, size_t cap)
{
	const int64_t t0 = tp_now_ns();
	const uint32_t len = m->len;
	struct tp_msg *h = (struct tp_msg *)out;
	size_t n = 0;

	if (cap > TP_ZIP_OFF && len >= TP_ZIP_MIN_LEN && deflateReset(&z->z) == Z_OK) {
		z->z.next_in = (Bytef *)((const unsigned char *)m + TP_FULL_LEN);
		z->z.avail_in = len - TP_FULL_LEN;
		z->z.next_out = out + TP_ZIP_OFF;
		z->z.avail_out = (uInt)(cap - TP_ZIP_OFF);
		if (deflate(&z->z, Z_FINISH) == Z_STREAM_END)
			n = TP_ZIP_OFF + (size_t)z->z.total_out;
	}
	if (n) {
		memcpy(out, m, TP_FULL_LEN);
		memcpy(out + TP_FULL_LEN, &len, sizeof(len));
		h->len = (uint32_t)n;
		h->flags |= TP_F_EXT;
	} else {
		z->kept++;
	}
	z->msgs++;
	z->raw_bytes += len;
	z->wire_bytes += n ? n : len;
	z->ns += (uint64_t)(tp_now_ns() - t0);
	return n;
}

ssize_t tp_zip_unpack(struct tp_zip *z, const struct tp_msg *m, size_t len, unsigned char *out,
		      size_t cap)
{
	const int64_t t0 = tp_now_ns();
	struct tp_msg *h = (struct tp_msg *)out;
	uint32_t raw;
	ssize_t rc = -EBADMSG;

	if (len < TP_ZIP_OFF)
		goto out;
	memcpy(&raw, (const unsigned char *)m + TP_FULL_LEN, sizeof(raw));
	if (raw < TP_ZIP_MIN_LEN || raw > cap || inflateReset(&z->z) != Z_OK)
		goto out;
	z->z.next_in = (Bytef *)((const unsigned char *)m + TP_ZIP_OFF);
	z->z.avail_in = (uInt)(len - TP_ZIP_OFF);
	z->z.next_out = out + TP_FULL_LEN;
	z->z.avail_out = raw - TP_FULL_LEN;
	if (inflate(&z->z, Z_FINISH) != Z_STREAM_END || z->z.avail_out || z->z.avail_in)
		goto out;
	memcpy(out, m, TP_FULL_LEN);
	h->len = raw;
	h->flags &= (uint8_t)~TP_F_EXT;
	rc = raw;
	z->msgs++;
	z->raw_bytes += raw;
	z->wire_bytes += len;
out:
	if (rc < 0)
		z->bad++;
	z->ns += (uint64_t)(tp_now_ns() - t0);
	return rc;
}

void tp_zip_add(struct tp_zip *into, const struct tp_zip *z)
{
	into->level = z->level;
	into->msgs += z->msgs;
	into->kept += z->kept;
	into->raw_bytes += z->raw_bytes;
	into->wire_bytes += z->wire_bytes;
	into->ns += z->ns;
	into->bad += z->bad;
}

int tp_frag_tx_init(struct tp_frag_tx *f, uint32_t max)
{
	memset(f, 0, sizeof(*f));
	f->max = max;
	f->buf = malloc(max);
	return f->buf ? 0 : -ENOMEM;
}

uint32_t tp_frag_build(struct tp_frag_tx *f, const struct tp_msg *m, uint32_t off)
{
	const uint32_t len = m->len, whole = len | TP_EXT_FRAG, room = f->max - TP_FRAG_OFF;
	const uint32_t n = len - off < room ? len - off : room;
	struct tp_msg *h = (struct tp_msg *)(void *)f->buf;

	memcpy(f->buf, m, TP_FULL_LEN);
	h->flags |= TP_F_EXT;
	h->len = TP_FRAG_OFF + n;
	memcpy(f->buf + TP_EXT_OFF, &whole, sizeof(whole));
	memcpy(f->buf + TP_EXT_OFF + 4, &off, sizeof(off));
	memcpy(f->buf + TP_FRAG_OFF, (const unsigned char *)m + off, n);
	return n;
}

int tp_frag_send(struct tp_frag_tx *f, struct tp *t, const struct tp_msg *m)
{
	for (uint32_t off = TP_FULL_LEN; off < m->len;) {
		const uint32_t n = tp_frag_build(f, m, off);
		int rc = tp_send(t, f->buf, TP_FRAG_OFF + n);

		if (rc < 0)
			return rc;
		f->frags++;
		off += n;
	}
	f->msgs++;
	return 0;
}

/* frag_room - r->buf of at least @total bytes (grown, and touched, when a
 * longer message comes than any before: once in a run of one length) */
static int frag_room(struct tp_frag_rx *r, uint32_t total)
{
	unsigned char *b;

	if (total <= r->cap)
		return 0;
	b = realloc(r->buf, total);
	if (!b)
		return -ENOMEM;
	memset(b, 0, total);
	r->buf = b;
	r->cap = total;
	return 0;
}

ssize_t tp_frag_take(struct tp_frag_rx *r, const struct tp_msg *m, size_t len)
{
	const unsigned char *b = (const unsigned char *)m;
	uint32_t whole, total, off, n;
	struct tp_msg *h;

	if (len < TP_FRAG_OFF + 1)
		goto bad;
	memcpy(&whole, b + TP_EXT_OFF, sizeof(whole));
	memcpy(&off, b + TP_EXT_OFF + 4, sizeof(off));
	total = whole & ~TP_EXT_FRAG;
	n = (uint32_t)len - TP_FRAG_OFF;
	if (total <= TP_FULL_LEN || total > TP_FRAG_MSG_MAX || off < TP_FULL_LEN || off > total ||
	    n > total - off)
		goto bad;
	if (r->open && (m->seq != r->seq || total != r->total || off != r->next)) {
		/* a fragment of the message being put together went missing */
		r->incomplete++;
		r->open = false;
	}
	if (!r->open && off != TP_FULL_LEN) {
		/* the rest of a message given up, or of one whose first
		 * fragment went missing (given up now) */
		if (m->seq != r->seq || !r->total) {
			r->incomplete++;
			r->seq = m->seq;
			r->total = total;
		}
		r->orphans++;
		return 0;
	}
	if (!r->open) {
		if (frag_room(r, total) < 0)
			return -ENOMEM;
		memcpy(r->buf, m, TP_FULL_LEN);
		h = (struct tp_msg *)(void *)r->buf;
		h->len = total;
		h->flags &= (uint8_t)~TP_F_EXT;
		r->seq = m->seq;
		r->total = total;
		r->next = TP_FULL_LEN;
		r->open = true;
	}
	memcpy(r->buf + off, b + TP_FRAG_OFF, n);
	r->next = off + n;
	r->frags++;
	if (r->next < total)
		return 0;
	r->open = false;
	r->msgs++;
	return total;
bad:
	r->bad++;
	return -EBADMSG;
}

void tp_frag_rx_add(struct tp_frag_rx *into, const struct tp_frag_rx *r)
{
	into->frags += r->frags;
	into->msgs += r->msgs;
	into->incomplete += r->incomplete;
	into->orphans += r->orphans;
	into->bad += r->bad;
}
