# SPDX-License-Identifier: GPL-2.0-only
"""Synthetic results for the unit tests: histograms built here with the bucket
rule written out again, independently of jtrpy.results.hist."""
import math

import numpy as np

PCTS = ("50", "90", "99", "99.9", "99.99", "99.999")
BITS = 7


# --- synthetic results -------------------------------------------------------
# The bucket rule is written out again here, independently of jtrpy.hist: a value
# v has the bucket [lo, lo + 2^s - 1] with s = max(msb(v) - bits, 0), lo = v with
# its low s bits cleared; below 2^(bits + 1) every bucket has width 1.

def bucket_of(v, bits=BITS):
    s = max(int(v).bit_length() - 1 - bits, 0)
    lo = (int(v) >> s) << s
    return lo, lo + (1 << s) - 1


def to_buckets(values, bits=BITS):
    """Sample values as jtr's [[lo, hi, count], ...], ascending."""
    uniq, counts = np.unique(np.asarray(values, dtype=np.int64), return_counts=True)
    out = {}
    for v, n in zip(uniq.tolist(), counts.tolist()):
        lo, hi = bucket_of(v, bits)
        out.setdefault(lo, [lo, hi, 0])[2] += n
    return [out[lo] for lo in sorted(out)]


def true_percentile(values, pct, bits=BITS):
    """jtr's rule from the sorted samples themselves: the bucket end of the
    ⌈p·n⌉-th value, clamped to [min, max]."""
    v = np.sort(np.asarray(values, dtype=np.int64))
    k = max(1, math.ceil(pct / 100.0 * len(v) - 1e-9))
    return min(max(bucket_of(v[k - 1], bits)[1], int(v[0])), int(v[-1]))


def make_run(values, cpu=0, threshold_ns=1000, bits=BITS, name=None):
    """A gap run of these loop times (duration = their sum)."""
    v = np.asarray(values, dtype=np.int64)
    dur = int(v.sum())
    above = v[v > threshold_ns]
    lost = int((above - v.min()).sum())
    return {
        "name": name or "cpu%d" % cpu, "cpu": cpu, "partial": False, "duration_ns": dur,
        "samples": int(v.size), "min_ns": int(v.min()), "max_ns": int(v.max()),
        "percentiles_ns": {k: true_percentile(v, float(k), bits) for k in PCTS},
        "lost_time_pct": 100.0 * lost / dur,
        "outliers": {"threshold_ns": threshold_ns, "count": int(above.size),
                     "per_s": above.size / (dur / 1e9), "lost_ns": lost,
                     "total_ns": int(above.sum())},
        "histogram": {"unit": "ns", "sub_bucket_bits": bits, "max_rel_error": 2.0 ** -bits,
                      "total": int(v.size), "buckets": to_buckets(v, bits)}}


def make_result(*runs, tool="gap", host="test", attribution=None):
    r = {"format": "jtr-result/1", "tool": tool, "host": {"hostname": host},
         "partial": False, "runs": list(runs), "warnings": []}
    if attribution is not None:
        r["attribution"] = attribution
    return r


def loops(seed, n=2_000_000, tail=1.0, rate=5e-4):
    """Loop times: ~40 ns with a little noise, a slower 2 % around 60 ns, and rare
    interruptions of some us (lognormal); @tail multiplies every value above 50 ns."""
    rng = np.random.default_rng(seed)
    v = rng.normal(40, 2, n)
    slow = rng.random(n) < 0.02
    v[slow] = rng.normal(60, 6, slow.sum())
    hit = rng.random(n) < rate
    v[hit] = rng.lognormal(math.log(8000), 0.6, hit.sum())
    v = np.maximum(np.rint(v), 20).astype(np.int64)
    return np.where(v > 50, np.rint(v * tail).astype(np.int64), v)
