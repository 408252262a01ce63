# SPDX-License-Identifier: GPL-2.0-only
"""Units of the .hlog writer: the encoding decoded by the hdrhistogram package."""
import random

import pytest
from hdrh.histogram import HdrHistogram

from jtrpy.formats import hdrlog
from jtrpy.results import hist


@pytest.mark.parametrize("digits,bits", [(1, 4), (2, 7), (3, 10), (4, 14)])
def test_grids_match(digits, bits):
    """HdrHistogram of D digits has jtr's grid of m bits: same bucket bounds."""
    assert hdrlog.half_count_magnitude(digits) == bits
    assert hdrlog.digits_for_bits(bits) == digits
    h = HdrHistogram(1, 1 << 62, digits)
    rng = random.Random(bits)
    for v in list(range(1, 3000)) + [rng.getrandbits(rng.randint(12, 61)) for _ in range(3000)]:
        lo, hi = hist.bucket_lo_hi(bits, hist.bucket_index(bits, v))
        assert (h.get_lowest_equivalent_value(v), h.get_highest_equivalent_value(v)) == (lo, hi)


def test_digits_for_other_bits():
    assert [hdrlog.digits_for_bits(b) for b in (1, 4, 5, 6, 7, 8, 11, 14)] == \
        [1, 1, 2, 2, 2, 3, 4, 4]


def test_encode_decoded_by_hdrh():
    """Counts, zero runs of every length, a huge count and a huge value."""
    values = [(1, 5), (2, 1), (4, 3), (300, 7), (100000, 1 << 60), (1 << 40, 2),
              ((1 << 62) - 5, 1)]
    h = HdrHistogram.decode(hdrlog.encode(values, 2))
    assert h.get_total_count() == sum(c for _, c in values)
    for v, c in values:
        assert h.get_count_at_value(v) == c
    assert h.get_min_value() == 1
    assert h.get_max_value() == h.get_highest_equivalent_value((1 << 62) - 5)


def test_encode_matches_hdrh_encoder():
    """The same counts as HdrHistogram's own encoder writes (after decoding both)."""
    rng = random.Random(1)
    values = sorted({rng.randint(1, 10 ** 9): rng.randint(1, 10 ** 6) for _ in range(500)}
                    .items())
    theirs = HdrHistogram(1, 10 ** 9, 2)
    for v, c in values:
        theirs.record_value(v, c)
    ours = HdrHistogram.decode(hdrlog.encode(values, 2))
    back = HdrHistogram.decode(theirs.encode())
    assert ours.get_total_count() == back.get_total_count()
    for i in range(back.counts_len):
        assert ours.get_count_at_index(i) == back.get_count_at_index(i)


def test_recorded_values_rule():
    run = {"min_ns": 30, "max_ns": 1000,
           "histogram": {"buckets": [[30, 30, 4], [500, 503, 2], [992, 999, 1],
                                     [1000, 1007, 1]]}}
    assert hdrlog.recorded_values(run) == [(30, 4), (503, 2), (999, 1), (1000, 1)]


# --- reading: every bound a hostile log could push ---------------------------

import base64  # noqa: E402
import struct  # noqa: E402
import zlib  # noqa: E402

from jtrpy.formats.hdrlog import LogError, decode, read_log  # noqa: E402


def compressed(payload_counts, digits=2, inflate_to=None):
    """A V2 compressed histogram of raw ZigZag LEB128 @payload_counts bytes."""
    body = payload_counts if inflate_to is None else b"\0" * inflate_to
    header = struct.pack(">iiiiqqd", hdrlog.ENCODING_COOKIE, len(body), 0, digits, 1, 1000, 1.0)
    z = zlib.compress(header + body, 9)
    return base64.b64encode(struct.pack(">ii", hdrlog.COMPRESSION_COOKIE, len(z)) + z).decode()


def line(t0="0.000", length="1.000", tag="cpu1", hist=None):
    return "Tag=%s,%s,%s,0.001,%s" % (tag, t0, length, hist or hdrlog.encode([(30, 5)], 2))


@pytest.mark.parametrize("text, message", [
    (line(t0="nan"), "line 1: the times are not finite numbers from 0 to 1e+10 s"),
    (line(length="inf"), "line 1: the times are not finite numbers"),
    (line(t0="-5"), "line 1: the times are not finite numbers"),
    (line(t0="1e300"), "line 1: the times are not finite numbers"),
    (line(tag="t" * 100000), "line 1: a tag of 100000 characters (at most 256: it names a "
                             "run)"),
    (line(hist=compressed(b"", inflate_to=64 << 20)), "line 1: the histogram inflates to "
                                                      "more than 16 MiB"),
    (line(hist=hdrlog.encode([(30, 1 << 53), (31, 1)], 2)),
     "line 1: its counts add up to more than 2^53"),
    (line(hist=compressed(hdrlog._zigzag_leb128(-(1 << 62)) + hdrlog._zigzag_leb128(3))),
     "line 1: a count at values beyond 2^63"),
    (line(hist="not base64!"), "line 1: not base64"),
], ids=["t0-nan", "length-inf", "t0-negative", "t0-1e300", "tag-100000-chars",
        "inflates-64MiB", "counts-past-2^53", "value-past-2^63", "not-base64"])
def test_a_hostile_log_is_refused_with_the_line(text, message):
    with pytest.raises(LogError) as e:
        read_log(text + "\n")
    assert str(e.value).startswith(message), str(e.value)


def test_header_times_that_are_not_times_are_left_out():
    start, ivs = read_log("#[StartTime: nan (seconds since epoch)]\n#[BaseTime: -1e300]\n" +
                          line() + "\n")
    assert start == 0.0 and ivs[0]["start"] == 0.0
    assert decode(hdrlog.encode([(30, 5)], 2)) == ([[30, 30, 5]], 2)
