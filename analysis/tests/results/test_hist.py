# SPDX-License-Identifier: GPL-2.0-only
"""results.hist: the bucket rule (lib/jtr_hist.c's), jtr's percentile of a
histogram, coarsening and merging, against values worked out by hand and
against the samples themselves (synthetic.py writes the rule out again)."""
import numpy as np
import pytest

from jtrpy.results import hist

from ..synthetic import loops, to_buckets, true_percentile


@pytest.mark.parametrize("bits,v,idx,lo_hi", [
    (7, 0, 0, (0, 0)), (7, 255, 255, (255, 255)),        # below 2^(bits+1): width 1
    (7, 256, 256, (256, 257)),                           # s = 1: width 2
    (7, 1000, 506, (1000, 1003)),                        # s = 2: (2 << 7) + (1000 >> 2)
    (7, 1003, 506, (1000, 1003)),
    (2, 7, 7, (7, 7)), (2, 8, 8, (8, 9)), (2, 15, 11, (14, 15)), (2, 16, 12, (16, 19)),
    (0, 5, 3, (4, 7)),                                   # 0 bits: one bucket an octave
])
def test_bucket_of_a_value_by_hand(bits, v, idx, lo_hi):
    assert hist.bucket_index(bits, v) == idx
    assert hist.bucket_lo_hi(bits, idx) == lo_hi


@pytest.mark.parametrize("bits", [2, 4, 7, 10])
def test_buckets_tile_the_values(bits):
    """Consecutive buckets meet (hi + 1 is the next lo), hold their values, and
    are at most 2^-bits of their values wide."""
    top = hist.bucket_index(bits, 1 << 20)
    prev_hi = -1
    for i in range(top + 1):
        lo, hi = hist.bucket_lo_hi(bits, i)
        assert lo == prev_hi + 1, (i, lo, prev_hi)
        assert hist.bucket_index(bits, lo) == hist.bucket_index(bits, hi) == i
        assert hi - lo + 1 <= max(1, lo * 2.0 ** -bits)
        prev_hi = hi


def test_percentile_by_hand():
    """Ten values: 5 of 10 ns, 4 of 20 ns, one in [1000, 1003] that was 1001."""
    b = [[10, 10, 5], [20, 20, 4], [1000, 1003, 1]]
    at = lambda p: hist.value_at_percentile(b, p, 10, 1001)  # noqa: E731
    assert at(50) == 10            # the 5th value
    assert at(50.0001) == 20       # the 6th
    assert at(90) == 20 and at(95) == 1001      # the bucket's end clamped to the max
    assert at(100) == 1001 and at(0) == 10 and at(-1) == 10
    # a bucket end below the run's minimum is clamped up to it
    assert hist.value_at_percentile([[10, 10, 5]], 50, 12, 12) == 12


def test_percentiles_from_buckets_equal_the_samples():
    v = loops(3, n=200_000)
    b = to_buckets(v)
    for p in (0.1, 1, 50, 90, 99, 99.9, 99.99, 99.999):
        assert hist.value_at_percentile(b, p, int(v.min()), int(v.max())) == \
            true_percentile(v, p), p
    # 99.9 % of 1000 is the 999th value, not the 1000th (the C code's epsilon)
    assert hist.rank(99.9, 1000) == 999 and hist.rank(50, 3) == 2 and hist.rank(0.0001, 5) == 1
    assert hist.value_at_percentile([], 50, 0, 0) == 0


def test_coarsen_and_merge():
    v = loops(4, n=50_000)
    fine = to_buckets(v, bits=9)
    assert hist.coarsen(fine, 9, 7) == to_buckets(v, bits=7)
    with pytest.raises(ValueError):
        hist.coarsen(fine, 7, 9)
    a, b = loops(5, n=30_000), loops(6, n=20_000)
    assert hist.merge([to_buckets(a), to_buckets(b)]) == to_buckets(np.concatenate([a, b]))


def test_coarsen_to_the_same_grid_copies():
    """The same precision gives the same buckets as new lists: the caller's are
    not changed through them."""
    b = [[10, 10, 1], [300, 301, 2]]
    out = hist.coarsen(b, 7, 7)
    assert out == b
    out[0][2] = 99
    assert b[0][2] == 1
    with pytest.raises(ValueError, match="cannot refine a histogram \\(7 to 9 bits\\)"):
        hist.coarsen(b, 7, 9)


def test_merge_adds_equal_buckets_by_hand():
    assert hist.merge([[[10, 10, 1], [300, 301, 2]], [[20, 20, 4], [300, 301, 5]], []]) == \
        [[10, 10, 1], [20, 20, 4], [300, 301, 7]]
    assert hist.merge([]) == []
