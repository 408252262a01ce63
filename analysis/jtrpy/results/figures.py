# SPDX-License-Identifier: GPL-2.0-only
"""figures - the headline numbers of a result, for jtr ls and jtr export --prom.

Per run they are read from result.json as written. For a whole result they are
those of ONE quantity (results/quantity.py: the tool's default, or the one asked
for): the runs of that quantity (several CPUs of a gap run, repetitions of a null
run; never a ping result's three different runs) have their histograms merged as
jtr compare merges them (coarsest precision, counts of equal buckets added) and
the percentiles are jtr's rule on the merged histogram, so a one-run result gives
exactly its percentiles_ns. Where a sample is CPU time (results/probes.py: gap,
null, send, ...) time lost is the runs' lost_ns over their duration; where it is
a latency (wake, ping, sub: they overlap, their sum is no time) the excess
latency per second of run is their outliers' excess over the threshold over it;
outliers per second their count over it.
"""
import re

from . import hist
from .probes import is_cpu_time
from .quantity import select
from .result import PERCENTILE_KEYS
from .validity import of as validity_of


def supported(pct, samples):
    """Whether @samples support percentile @pct (a key: "99.99"): at least one
    sample lies above it (with fewer, it is the max under another name: 1,000
    wake-ups have no p99.99 of their own). What the headline and the pages print."""
    return samples * (1 - float(pct) / 100) >= 1 - 1e-9


def _int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def measured_ns(runs):
    """The time measured on one CPU, the most of any CPU: the durations of a CPU's
    runs added up (runs one after another on one CPU: null's repetitions, send's
    pairs), a span that runs of one CPU share counted once (the quantities of
    one measurement: ping's round trips from intended, from send and its send
    calls over the same 8 s are 8 s, not 24), the most of any CPU (runs side by
    side: gap on two CPUs); 0 without a duration. What a cause's time per second
    and the outliers' time are over."""
    per_cpu = {}
    for r in runs:
        d = r.get("duration_ns") if isinstance(r, dict) else None
        if _int(d) and d > 0:
            start = r.get("start_mono_ns")
            per_cpu.setdefault(r.get("cpu"), []).append((start, d) if _int(start) else (None, d))
    return max((_covered(spans) for spans in per_cpu.values()), default=0)


def _covered(spans):
    """The ns [(start, duration)] cover, overlaps once; a span without a start
    adds its duration."""
    total = sum(d for s, d in spans if s is None)
    end = None
    for s, d in sorted((s, d) for s, d in spans if s is not None):
        if end is None or s >= end:
            total += d
            end = s + d
        elif s + d > end:
            total += s + d - end
            end = s + d
    return total


def run_lost(run):
    """(lost_ns, outlier count, duration_ns) of a run, or None without outliers."""
    o = run.get("outliers")
    dur = run.get("duration_ns")
    if not isinstance(o, dict) or not dur or o.get("lost_ns") is None:
        return None
    return o["lost_ns"], o.get("count", 0), dur


def run_excess(run):
    """(excess_ns, outlier count, duration_ns) of a run: how far its outliers went
    past the threshold, added up (a latency probe's headline: its samples are no
    CPU time, several can be in flight at once), or None without outliers."""
    o = run.get("outliers")
    dur = run.get("duration_ns")
    if not isinstance(o, dict) or not dur or not isinstance(o.get("total_ns"), int) or \
            not isinstance(o.get("threshold_ns"), int):
        return None
    n = o.get("count") or 0
    return max(0, o["total_ns"] - n * o["threshold_ns"]), n, dur


def run_figures(run, cpu_time=True):
    """{percentiles_ns, max_ns, lost_pct, excess_ns_per_s, outliers_per_s,
    duration_ns, samples} of a run: time lost where a sample is CPU time
    (@cpu_time), else the excess latency per second of run."""
    lost = run_lost(run) if cpu_time else None
    excess = None if cpu_time else run_excess(run)
    n = lost or excess
    return {
        "percentiles_ns": dict(run.get("percentiles_ns") or {}),
        "max_ns": run.get("max_ns"),
        "duration_ns": run.get("duration_ns"),
        "samples": run.get("samples"),
        "lost_pct": 100.0 * lost[0] / lost[2] if lost else None,
        "excess_ns_per_s": excess[0] / (excess[2] / 1e9) if excess else None,
        "outliers_per_s": n[1] / (n[2] / 1e9) if n else None,
    }


def merged_histogram(runs):
    """(buckets, min_ns, max_ns) of the runs' histograms merged at the coarsest
    precision among them, or None when no run has a histogram. The extremes are
    those of the runs with a histogram; a run that does not give its min_ns or
    max_ns (an imported one) stands for its lowest or highest filled bucket's
    edge, not for 0 (every percentile clamped to 0 below a maximum of 0)."""
    with_h = [r for r in runs if isinstance(r.get("histogram"), dict)]
    if not with_h:
        return None
    hs = [r["histogram"] for r in with_h]
    bits = min(h.get("sub_bucket_bits", 7) for h in hs)
    merged = hist.merge(hist.coarsen(h["buckets"], h.get("sub_bucket_bits", 7), bits)
                        for h in hs)
    lows, highs = [], []
    for r in with_h:
        filled = [b for b in r["histogram"]["buckets"] if b[2]]
        if isinstance(r.get("min_ns"), (int, float)):
            lows.append(r["min_ns"])
        elif filled:
            lows.append(min(b[0] for b in filled))
        if isinstance(r.get("max_ns"), (int, float)):
            highs.append(r["max_ns"])
        elif filled:
            highs.append(max(b[1] for b in filled))
    return merged, min(lows, default=0), max(highs, default=0)


def merged_percentiles(runs):
    """{key: ns} of jtr's percentiles of the runs' merged histograms."""
    m = merged_histogram(runs)
    if not m:
        return {}
    merged, lo, hi = m
    return {k: hist.value_at_percentile(merged, float(k), lo, hi) for k in PERCENTILE_KEYS}


def top_cause(result):
    """The attribution's largest cause by time: {category, name, share, total_ns} or None."""
    a = result.get("attribution")
    causes = a.get("causes") if isinstance(a, dict) else None
    if not causes:
        return None
    c = causes[0]
    return {"category": c.get("category"), "name": c.get("name"), "share": c.get("share"),
            "total_ns": c.get("total_ns")}


def result_figures(result, quantity=None):
    """The headline numbers of a whole result on its quantity @quantity (None:
    its default; see the module's note). UsageError when it has no @quantity."""
    q = select(result, quantity)
    runs = q.runs
    cpu_time = is_cpu_time(result)
    lost = [run_lost(r) if cpu_time else run_excess(r) for r in runs]
    have_lost = bool(runs) and all(lost)
    cpus = sorted({r.get("cpu") for r in runs if r.get("cpu") is not None})
    host = result.get("host") or {}
    return {
        "started_at": result.get("started_at"),
        "tool": result.get("tool"),
        "quantity": q.name,
        "measures": q.measures,
        "quantities": q.names,
        "runs": len(runs),
        "host": host.get("hostname"),
        "cpus": cpus,
        "duration_ns": measured_ns(runs) or None,
        "samples": sum(r.get("samples") or 0 for r in runs),
        "percentiles_ns": merged_percentiles(runs),
        "max_ns": max((r.get("max_ns") or 0 for r in runs), default=None),
        "cpu_time": cpu_time,
        "lost_pct": 100.0 * sum(x[0] for x in lost) / sum(x[2] for x in lost)
        if have_lost and cpu_time else None,
        "excess_ns_per_s": sum(x[0] for x in lost) / (sum(x[2] for x in lost) / 1e9)
        if have_lost and not cpu_time else None,
        "validity": validity_of(result),
        "outliers_per_s": sum(x[1] for x in lost) / (sum(x[2] for x in lost) / 1e9)
        if have_lost else None,
        "top_cause": top_cause(result),
        "tuning_profile": host.get("tuning_profile"),
        "partial": bool(result.get("partial")),
        "imported": (result.get("import") or {}).get("from") if isinstance(
            result.get("import"), dict) else None,
    }


RUN_NAME = re.compile(r"([A-Za-z][A-Za-z-]*?)[ _-]?(\d+)")


def run_kind(run):
    """(kind, number) of a run named like 'send_2', 'null_2', 'run 2', or None."""
    m = RUN_NAME.fullmatch(str(run.get("name") or ""))
    return (m.group(1), int(m.group(2))) if m else None


def run_pairs(result):
    """The send-vs-null pairs inside one result (a send tool's runs send_1, null_1,
    send_2, ...): [(kind, number, run, null run)], each kind other than "null" with
    the null run of the same number, in the order of the kind's runs."""
    runs = [r for r in result.get("runs", []) if isinstance(r, dict)
            and isinstance(r.get("histogram"), dict)]
    nulls = {}
    for r in runs:
        k = run_kind(r)
        if k and k[0] == "null":
            nulls.setdefault(k[1], r)
    out = []
    for r in runs:
        k = run_kind(r)
        if k and k[0] != "null" and k[1] in nulls:
            out.append((k[0], k[1], r, nulls[k[1]]))
    return out
