# SPDX-License-Identifier: GPL-2.0-only
"""hist - jtr's log-linear histograms on the Python side (lib/jtr_hist.c's rules).

A histogram in a result is {"sub_bucket_bits", "max_rel_error", "total",
"buckets": [[lo, hi, count], ...]} with the non-empty buckets ascending
(docs/result-format.md). Every power of two [2^e, 2^(e+1)) is cut into
2^bits equal buckets; values below 2^(bits+1) have buckets of width 1.
Histograms of one precision share one bucket grid, so they merge by adding
the counts of equal buckets; a finer grid nests in a coarser one, so one of
more bits can be coarsened to fewer.
"""
import math

PERCENTILES = (50.0, 90.0, 99.0, 99.9, 99.99, 99.999)


def bucket_index(bits, v):
    """The bucket of value @v: (s << bits) + (v >> s), s = max(msb(v) - bits, 0)."""
    s = max((v | (1 << bits)).bit_length() - 1 - bits, 0)
    return (s << bits) + (v >> s)


def bucket_lo_hi(bits, idx):
    """[lowest, highest] value of bucket @idx."""
    s = idx >> bits
    s = s - 1 if s else 0
    lo = (idx - (s << bits)) << s
    return lo, lo + (1 << s) - 1


def rank(pct, n):
    """Which value (1-based, ascending) percentile @pct of @n values is: ⌈pct/100·n⌉,
    computed in doubles as the C code does (the epsilon keeps 99.9 % of 1000 at 999)."""
    return max(1, int(math.ceil(pct / 100.0 * float(n) - 1e-9)))


def value_at_percentile(buckets, pct, min_ns, max_ns):
    """jtr's percentile: the highest value of the bucket holding the rank(pct, n)-th
    smallest value, clamped to [min_ns, max_ns]; p100 is max_ns, 0 if empty."""
    n = sum(b[2] for b in buckets)
    if not n:
        return 0
    if pct >= 100.0:
        return max_ns
    if pct <= 0.0:
        return min_ns
    target, cum = rank(pct, n), 0
    for _, hi, count in buckets:
        cum += count
        if cum >= target:
            return min(max(hi, min_ns), max_ns)
    return max_ns


def coarsen(buckets, bits_from, bits_to):
    """Buckets of precision @bits_from moved onto the coarser grid of @bits_to."""
    if bits_to > bits_from:
        raise ValueError("cannot refine a histogram (%d to %d bits)" % (bits_from, bits_to))
    if bits_to == bits_from:
        return [list(b) for b in buckets]
    out = {}
    for lo, _, count in buckets:
        i = bucket_index(bits_to, lo)
        out[i] = out.get(i, 0) + count
    return [list(bucket_lo_hi(bits_to, i)) + [out[i]] for i in sorted(out)]


def merge(buckets_lists):
    """Buckets of one precision added together: [[lo, hi, count], ...] ascending."""
    out = {}
    for buckets in buckets_lists:
        for lo, hi, count in buckets:
            b = out.setdefault(lo, [lo, hi, 0])
            b[2] += count
    return [out[lo] for lo in sorted(out)]
