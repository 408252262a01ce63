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
