# SPDX-License-Identifier: GPL-2.0-only
"""compare - is B better or worse than A? Percentiles, time lost and causes of two
sides of results, with bootstrap confidence intervals drawn from the histograms.

compare(results_a, results_b) takes each side as a list of loaded results
(repetitions of one setup); `jtr compare A B` gives one result per side.
docs/compare.md explains the method; in short:

1. Each result is taken on ONE quantity (results/quantity.py: its default, or
   the one asked for; a ping result on rtt_from_intended, not its three runs
   pooled), and two quantities that measure different things are not compared
   unless asked. Each side's histograms are merged: every run of that quantity of
   every result (one run per CPU for gap, per repetition for null) adds its
   bucket counts. The point values
   are jtr's percentiles of the merged histogram (hist.value_at_percentile), so
   for a one-run result they are its percentiles_ns exactly. Time lost is the
   side's lost_ns over its duration_ns (all runs), outliers/s its outlier count
   over its duration in seconds.
2. Bootstrap: each run's bucket counts are resampled RESAMPLES times from a
   multinomial with the run's own total and bucket shares (never expanding the
   samples, so 1e9 samples cost what 1e3 do), the resampled runs of a side are
   added up, and every metric is computed again on each resample. The time
   lost and outlier count of a run are scaled by how the resample changed the
   weight of its buckets above the outlier threshold (each value less the run's
   min_ns, resp. 1). The CI of B-A is the (1-c)/2 and (1+c)/2 quantiles of the
   resampled B less the resampled A.
3. A key metric (p99, p99.9, p99.99, time lost) changed significantly when its
   CI excludes 0, the difference is larger than the resolution (max_rel_error of
   the larger value and the coarser side's step, percentiles only) and larger
   than the run-to-run spread (max - min of the metric across a side's results,
   the wider side) where a side has several results. It changed in practice
   when the difference is also at least the minimum practical effect: min_ns
   (percentiles; time lost: min_ns per ms of run) and min_pct of A.
4. The verdict: "not comparable" when the sides measure different things
   (--mixed-quantities) or have different resolutions (an oslat import counts
   whole us, jtr's probes TSC steps of some ns): the numbers are shown, not
   judged. Else "worse" when some key metric rose in practice and none fell,
   "better" the reverse, "mixed" when both happened, "no practical difference"
   when a change was significant but smaller than the minimums (naming the one
   it missed), else "no significant change". A side of one short result adds a
   suggestion to repeat it.
"""
import math

from .. import __version__
from ..errors import JtrError, UsageError
from ..results import hist
from ..results.figures import measured_ns, run_excess
from ..results.probes import is_cpu_time
from ..results.quantity import check_same, select, selected
from ..results.result import PERCENTILE_KEYS
from ..results.validity import MEASUREMENT, summary
from ..results.validity import of as validity_of
from ..system import packages
from ..trace import causes as C
from ..units import fmt_ns

FORMAT = "jtr-compare/1"
DEFAULT_CONFIDENCE = 95.0
DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 1
# "time lost" where a sample is CPU time; "excess latency" (ns past the threshold
# per second of run) where it is a latency (results/probes.py)
LOST, EXCESS = "time lost", "excess latency"
KEY_METRICS = ("p99", "p99.9", "p99.99", LOST, EXCESS)
# the minimum practical effect (docs/compare.md, "The verdict", says why these)
DEFAULT_MIN_EFFECT_NS = 100
DEFAULT_MIN_EFFECT_PCT = 10.0
# a side of one result measured for less than this is a "short run"
SHORT_RUN_NS = 10 * 10 ** 9
# resolutions further apart than this factor are not comparable, when the
# coarser one is at least the minimum practical effect
RESOLUTION_FACTOR = 2.0
VERDICTS = ("better", "worse", "mixed", "no practical difference", "no significant change",
            "not comparable")



def _numpy():
    """numpy, or a one-line error saying how to get it."""
    try:
        import numpy
    except ImportError:
        raise JtrError("jtr compare needs numpy (any version): %s"
                       % packages.python_hint("numpy"))
    return numpy


# --- the sides ---------------------------------------------------------------

def comparable(results, labels, quantity=None):
    """The results as they are compared, each on its quantity @quantity (None: its
    default; results/quantity.py), and the Quantity of each."""
    pairs = [selected(r, quantity, label) for r, label in zip(results, labels)]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def check_quantities(qs_a, qs_b, labels_a, labels_b, mixed=False):
    """The warnings of comparing the quantities of a side with each other and
    with the other side's (the results named by their labels); UsageError for two
    that measure different things (unless @mixed)."""
    w = []
    first = "A (%s)" % labels_a[0]
    pairs = [("A (%s)" % la, q) for la, q in zip(labels_a[1:], qs_a[1:])] + \
        [("B (%s)" % lb, q) for lb, q in zip(labels_b, qs_b)]
    for tag, q in pairs:
        for line in check_same(qs_a[0], q, mixed, (first, tag)):
            if line not in w:
                w.append(line)
    return w


def check_result(result, label):
    """UsageError unless every run of @result has a non-empty histogram."""
    runs = result.get("runs")
    if not isinstance(runs, list) or not runs:
        raise UsageError("%s: the result has no runs; compare results of jtr gap or jtr null"
                         % label)
    for i, run in enumerate(runs):
        h = run.get("histogram") if isinstance(run, dict) else None
        if not isinstance(h, dict) or not isinstance(h.get("buckets"), list):
            raise UsageError("%s: run %s has no histogram; compare results of jtr gap or "
                             "jtr null, which keep one per run" % (label, _run_name(run, i)))
        for b in h["buckets"]:
            if not (isinstance(b, list) and len(b) == 3 and all(
                    isinstance(x, int) and x >= 0 for x in b) and b[0] <= b[1]):
                raise UsageError("%s: run %s: bucket %r is not [lo, hi, count]; the result "
                                 "is damaged" % (label, _run_name(run, i), b))
        if not sum(b[2] for b in h["buckets"]):
            raise UsageError("%s: run %s has no samples; it cannot be compared"
                             % (label, _run_name(run, i)))


def _run_name(run, i):
    return repr(run.get("name")) if isinstance(run, dict) and run.get("name") else str(i + 1)


# --- one side --------------------------------------------------------------

class _Run:
    """One run's histogram (on the side's grid) and its outlier figures: the time
    lost where a sample is CPU time (@cpu_time), else the excess latency (how far
    the outliers went past the threshold, added up) as its lost_ns."""

    def __init__(self, run, bits, cpu_time=True):
        h = run["histogram"]
        self.buckets = hist.coarsen(h["buckets"], h.get("sub_bucket_bits", bits), bits)
        self.min_ns = run.get("min_ns", self.buckets[0][0])
        self.max_ns = run.get("max_ns", self.buckets[-1][1])
        self.duration_ns = run.get("duration_ns") or 0
        self.cpu_time = cpu_time
        o = run.get("outliers")
        self.threshold_ns = o.get("threshold_ns") if isinstance(o, dict) else None
        self.count = o.get("count") if isinstance(o, dict) else None
        if cpu_time:
            self.lost_ns = o.get("lost_ns") if isinstance(o, dict) else None
        else:
            x = run_excess(run)
            self.lost_ns = x[0] if x else None
        # what each sample above the threshold adds to lost_ns: its value less the
        # loop's own (min_ns), or less the threshold
        self.base_ns = self.min_ns if cpu_time else self.threshold_ns

    @property
    def has_outliers(self):
        return None not in (self.threshold_ns, self.lost_ns, self.count) and self.duration_ns > 0


def resolution_of(result):
    """(the step its values come in, in ns, or None when not known; what it is):
    1000 for a result imported in microseconds (oslat, cyclictest without -N, an
    HdrHistogram log in us), the TSC's step for a probe timed with the TSC."""
    imp = result.get("import")
    if isinstance(imp, dict) and imp.get("time_unit") == "us":
        return 1000, "imported from %s, which counts whole microseconds" % (
            result.get("tool") or "a file")
    cal = result.get("calibration") if isinstance(result.get("calibration"), dict) else {}
    step = cal.get("tsc_step_ns")
    if cal.get("timebase") == "tsc" and isinstance(step, (int, float)) and step > 0:
        return step, "the TSC's step"
    return None, "not known"


def _bits(results):
    """The coarsest precision among the runs, and its relative error."""
    bits = min(r_["histogram"].get("sub_bucket_bits", 7) for r in results for r_ in r["runs"])
    return bits, 2.0 ** -bits


def _point_metrics(runs):
    """Percentiles, time lost and outliers/s of runs merged: {name: value or None}."""
    merged = hist.merge(r.buckets for r in runs)
    lo_ns, hi_ns = min(r.min_ns for r in runs), max(r.max_ns for r in runs)
    m = {"p" + k: hist.value_at_percentile(merged, float(k), lo_ns, hi_ns)
         for k in PERCENTILE_KEYS}
    dur = sum(r.duration_ns for r in runs)
    cpu_time = all(r.cpu_time for r in runs)
    m[LOST] = m[EXCESS] = m["outliers/s"] = None
    if all(r.has_outliers for r in runs):
        if cpu_time:
            m[LOST] = 100.0 * sum(r.lost_ns for r in runs) / dur
        else:
            m[EXCESS] = sum(r.lost_ns for r in runs) / (dur / 1e9)
        m["outliers/s"] = sum(r.count for r in runs) / (dur / 1e9)
    return m


class _Side:
    """A side of the comparison: its results, runs and point metrics."""

    def __init__(self, results, labels, bits, quantities=None):
        self.results = results
        self.quantities = quantities or [select(r) for r in results]
        self.labels = labels
        self.per_result = [[_Run(run, bits, is_cpu_time(r)) for run in r["runs"]]
                           for r in results]
        self.runs = [run for runs in self.per_result for run in runs]
        self.point = _point_metrics(self.runs)
        self.reps = [_point_metrics(runs) for runs in self.per_result]

    def describe(self):
        """What the side holds, for the JSON and the header lines."""
        tools = sorted({r.get("tool", "?") for r in self.results})
        cpus = sorted({run.get("cpu") for r in self.results for run in r["runs"]},
                      key=lambda c: (c is None, c))
        hosts = sorted({(r.get("host") or {}).get("hostname") or "?" for r in self.results})
        names = []
        for q in self.quantities:
            if q.name not in names:
                names.append(q.name)
        measures = sorted({q.measures for q in self.quantities if q.measures})
        res = [resolution_of(r) for r in self.results]
        known = [x for x in res if x[0] is not None]
        coarsest = max(known, key=lambda x: x[0]) if known else (None, "not known")
        return {"results": list(self.labels), "tools": tools,
                "quantity": "/".join(names),
                "measures": measures[0] if len(measures) == 1 else None,
                "quantities": sorted({n for q in self.quantities for n in q.names}),
                "cpus": cpus, "hosts": hosts,
                "runs": len(self.runs), "samples": sum(sum(b[2] for b in run.buckets)
                                                       for run in self.runs),
                "duration_ns": sum(run.duration_ns for run in self.runs),
                "resolution_ns": None if coarsest[0] is None else _num(coarsest[0]),
                "resolution": coarsest[1],
                "attributed": all(isinstance(r.get("attribution"), dict)
                                  for r in self.results)}


# --- bootstrap -------------------------------------------------------------

def _resample_run(np, rng, run, resamples, grid):
    """One run resampled: (counts R x K on the side's grid, lost_ns R, count R)."""
    counts = np.array([b[2] for b in run.buckets], dtype=np.int64)
    n = int(counts.sum())
    draws = rng.multinomial(n, counts / float(n), size=resamples)
    cols = np.array([grid[b[0]] for b in run.buckets])
    if not run.has_outliers:
        return cols, draws, None, None
    lo = np.array([b[0] for b in run.buckets], dtype=np.float64)
    hi = np.array([b[1] for b in run.buckets], dtype=np.float64)
    # the share of each bucket above the threshold, and its values less min_ns
    above = np.clip((hi - run.threshold_ns) / (hi - lo + 1.0), 0.0, 1.0)
    lost_w = above * np.maximum((lo + hi) / 2.0 - run.base_ns, 0.0)
    return cols, draws, _scaled(np, draws, lost_w, run.lost_ns, counts), \
        _scaled(np, draws, above, run.count, counts)


def _scaled(np, draws, weights, point, counts):
    """@point scaled, per resample, by how the resample changed sum(counts * weights)."""
    base = float(counts @ weights)
    if base <= 0.0:
        return np.full(draws.shape[0], float(point))
    return float(point) * (draws @ weights) / base


def bootstrap(side, resamples, rng):
    """{metric: array of its @resamples resampled values} for one side."""
    np = _numpy()
    merged = hist.merge(r.buckets for r in side.runs)
    grid = {b[0]: i for i, b in enumerate(merged)}
    total = np.zeros((resamples, len(merged)), dtype=np.int64)
    lost, count, outliers = np.zeros(resamples), np.zeros(resamples), True
    for run in side.runs:
        cols, draws, run_lost, run_count = _resample_run(np, rng, run, resamples, grid)
        total[:, cols] += draws
        if run_lost is None:
            outliers = False
        else:
            lost += run_lost
            count += run_count
    cum = np.cumsum(total, axis=1)
    n = int(cum[0, -1])
    hi = np.array([b[1] for b in merged], dtype=np.int64)
    lo_ns, hi_ns = min(r.min_ns for r in side.runs), max(r.max_ns for r in side.runs)
    out = {}
    for k in PERCENTILE_KEYS:
        idx = (cum < hist.rank(float(k), n)).sum(axis=1)
        out["p" + k] = np.clip(hi[np.minimum(idx, len(hi) - 1)], lo_ns, hi_ns)
    dur = sum(r.duration_ns for r in side.runs)
    if outliers:
        if all(r.cpu_time for r in side.runs):
            out[LOST] = 100.0 * lost / dur
        else:
            out[EXCESS] = lost / (dur / 1e9)
        out["outliers/s"] = count / (dur / 1e9)
    return out


# --- metrics and verdict ---------------------------------------------------

def _range(reps, name):
    """[min, max] of a metric across a side's results, or None with fewer than two."""
    vals = [r[name] for r in reps if r[name] is not None]
    return [min(vals), max(vals)] if len(reps) > 1 and len(vals) == len(reps) else None


def outer_quantiles(np, values, q_lo, q_hi):
    """[the @q_lo quantile rounded down to a value, the @q_hi one rounded up] of
    @values: numpy's quantile methods "lower" and "higher" (index q x (n - 1)),
    written out so that numpy before 1.22 (no method=; Ubuntu 22.04, RHEL 9)
    gives the same."""
    v = np.sort(np.asarray(values, dtype=float), axis=None)
    last = len(v) - 1
    return [float(v[int(math.floor(q_lo * last))]), float(v[int(math.ceil(q_hi * last))])]


def min_effect(unit, a, min_ns, min_pct):
    """The minimum practical effect of a metric in @unit whose A is @a: (the
    absolute minimum or None, the relative one as an absolute value, the text of
    each). Percentiles: @min_ns; time lost (%): @min_ns per ms of run, in
    percentage points; excess latency (ns/s): @min_ns per ms of run; outliers/s:
    only @min_pct."""
    rel = abs(a) * min_pct / 100.0
    rel_text = "%g %% of A" % min_pct
    if unit == "ns":
        return min_ns, rel, fmt_ns(min_ns), rel_text
    if unit == "ns/s":
        return min_ns * 1000.0, rel, "%s/s (%s per ms)" % (fmt_ns(min_ns * 1000),
                                                           fmt_ns(min_ns)), rel_text
    if unit == "%":
        return min_ns * 1e-4, rel, "%.3f pt (%s per ms)" % (min_ns * 1e-4, fmt_ns(min_ns)), \
            rel_text
    return None, rel, None, rel_text


def _metric(name, a, b, boot_a, boot_b, conf, reps_a, reps_b, rel_error,
            min_ns=DEFAULT_MIN_EFFECT_NS, min_pct=DEFAULT_MIN_EFFECT_PCT, step_ns=None):
    """One row: values, B-A, its CI, the run-to-run spread, whether it changed
    significantly and whether that is at least the minimum practical effect
    (@min_ns, @min_pct; @step_ns: the coarser side's resolution, or None)."""
    np = _numpy()
    alpha = (100.0 - conf) / 100.0
    d = boot_b[name] - boot_a[name]
    ci = outer_quantiles(np, d, alpha / 2, 1 - alpha / 2)
    diff = b - a
    ra, rb = _range(reps_a, name), _range(reps_b, name)
    spreads = [r[1] - r[0] for r in (ra, rb) if r]
    spread = max(spreads) if spreads else None
    unit = "ns" if name.startswith("p") else {LOST: "%", EXCESS: "ns/s"}.get(name, "1/s")
    resolution = max(rel_error * max(a, b), step_ns or 0) if unit == "ns" else 0.0
    significant, practical = False, None
    if diff == 0 or ci[0] <= 0.0 <= ci[1]:
        why = "CI includes 0"
    elif (diff > 0) != (ci[0] > 0):
        why = "CI and difference disagree"
    elif abs(diff) <= resolution:
        why = "within the resolution (%s)" % fmt_ns(resolution) if step_ns and \
            resolution == step_ns else "within the histogram's resolution"
    elif spread is not None and abs(diff) <= spread:
        why = "within the run-to-run spread"
    else:
        significant = True
        floor, rel, floor_text, rel_text = min_effect(unit, a, min_ns, min_pct)
        missed = [t for f, t in ((floor, floor_text), (rel, rel_text))
                  if f is not None and abs(diff) < f]
        practical = not missed
        why = "CI excludes 0" if practical else "less than the minimum%s of %s" % (
            "s" * (len(missed) > 1), " and ".join(missed))
    change = ("worse" if diff > 0 else "better") if practical else None
    return {"name": name, "unit": unit, "key": name in KEY_METRICS, "a": _num(a),
            "b": _num(b), "diff": _num(diff), "diff_pct": _num(100.0 * diff / a) if a else None,
            "ci": [_num(ci[0]), _num(ci[1])], "a_range": ra and [_num(v) for v in ra],
            "b_range": rb and [_num(v) for v in rb],
            "spread": None if spread is None else _num(spread),
            "significant": significant, "practical": practical,
            "change": change, "why": why}


def _num(v):
    """A plain int or a float rounded for JSON (numpy scalars become Python ones)."""
    v = float(v)
    return int(v) if v.is_integer() and abs(v) < 2 ** 53 else round(v, 6)


def _moved(m):
    """'p99 rose +20 ns (+5.0 %, CI +18 ns .. +22 ns)'."""
    return "%s %s %s (%s, CI %s)" % (m["name"], "rose" if m["diff"] > 0 else "fell",
                                     fmt_diff(m), fmt_pct(m["diff_pct"]), fmt_ci(m))


def verdict(metrics, spread_known, not_comparable=(), suggestions=(), invalid=()):
    """(verdict, the metrics that decided it, a sentence saying why)."""
    tail = "" if spread_known else " (one result per side: run-to-run variation not measured)"
    tail += "".join("; " + x for x in suggestions)
    if invalid:
        return "invalid", [], "no verdict: %s; the numbers are shown, not judged " \
            "(--accept-invalid judges them all the same)" % "; ".join(invalid)
    if not_comparable:
        return "not comparable", [], "not comparable: %s; the numbers are shown, not " \
            "judged" % "; ".join(not_comparable)
    keys = [m for m in metrics if m["key"]]
    worse = [m for m in keys if m["change"] == "worse"]
    better = [m for m in keys if m["change"] == "better"]
    if worse and better:
        v, decided = "mixed", worse + better
    elif worse or better:
        v, decided = ("worse", worse) if worse else ("better", better)
    elif any(m["significant"] for m in keys):
        small = [m for m in keys if m["significant"]]
        return "no practical difference", [], "no practical difference: " + "; ".join(
            "%s, %s" % (_moved(m), m["why"]) for m in small) + tail
    else:
        why = "; ".join("%s %s" % (m["name"], m["why"]) for m in keys)
        return "no significant change", [], "no significant change: " + why + tail
    text = "%s: %s" % (v, "; ".join(_moved(m) for m in decided))
    return v, [m["name"] for m in decided], text + tail


def not_comparable(da, db, qs_a, qs_b, min_ns):
    """Why the two sides cannot be judged against each other ([] when they can):
    quantities that measure different things (compared only with
    --mixed-quantities), or resolutions far apart."""
    why = []
    for qa in qs_a:
        for qb in qs_b:
            if qa.measures and qb.measures and qa.measures != qb.measures:
                line = "A's %s measures the %s, B's %s the %s" % (qa.name, qa.measures,
                                                                  qb.name, qb.measures)
                if line not in why:
                    why.append(line)
    ra, rb = da["resolution_ns"], db["resolution_ns"]
    if ra and rb:
        lo, hi = min(ra, rb), max(ra, rb)
        if hi > RESOLUTION_FACTOR * lo and hi >= min_ns:
            why.append("different resolutions: A's values come in steps of %s (%s), B's "
                       "of %s (%s): a difference of one step would pass as a change"
                       % (fmt_ns(ra), da["resolution"], fmt_ns(rb), db["resolution"]))
    return why


def short_runs(da, db):
    """The suggestion to repeat a side of one result shorter than SHORT_RUN_NS, or []."""
    short = [(tag, d) for tag, d in (("A", da), ("B", db))
             if len(d["results"]) == 1 and d["duration_ns"] < SHORT_RUN_NS]
    if not short:
        return []
    who = " and ".join("%s (%.2f s)" % (tag, d["duration_ns"] / 1e9) for tag, d in short)
    return ["%s %s one run shorter than %d s: two such runs of one setup can differ by tens "
            "of %% on a shared or virtual machine; repeat each side (jtr ab PROFILE "
            "--repeat 3 interleaves them) or measure longer"
            % (who, "is" if len(short) == 1 else "are each", SHORT_RUN_NS // 10 ** 9)]


# --- causes ----------------------------------------------------------------



def _cause_key(c):
    """(category, name), a task's by its comm (older results named each pid): a
    cause of one run is the same cause of the next."""
    return C.cause_key(c.get("category", "?"), c.get("name", "?"))


def _causes_of(results):
    """{key: total_ns} of a side's attributions, and their duration in s."""
    totals, dur_ns = {}, 0
    for r in results:
        a = r["attribution"]
        for c in a.get("causes", []):
            k = _cause_key(c)
            totals[k] = totals.get(k, 0) + c.get("total_ns", 0)
        dur_ns += (a.get("outliers") or {}).get("duration_ns") or measured_ns(r["runs"])
    return totals, dur_ns / 1e9


def _per_result(results):
    """[{key: ns per s}] of each result of a side (its run-to-run spread)."""
    out = []
    for r in results:
        t, s = _causes_of([r])
        out.append({k: v / s for k, v in t.items()} if s else {})
    return out


def cause_deltas(results_a, results_b):
    """Per cause: share of outlier time and time per second of run on each side, and
    the deltas; largest change first. Where a side has several results, each
    side's range over its results ("a_range", "b_range": [min, max] ns per s)
    and whether the change is within the wider of them ("within_spread"); with
    one result a side these are None: there is no interval to judge a change by."""
    ta, sa = _causes_of(results_a)
    tb, sb = _causes_of(results_b)
    suma, sumb = sum(ta.values()) or 1, sum(tb.values()) or 1
    pa, pb = _per_result(results_a), _per_result(results_b)
    reps = len(pa) > 1 or len(pb) > 1
    rows = []
    for k in set(ta) | set(tb):
        a_ps = ta.get(k, 0) / sa if sa else 0.0
        b_ps = tb.get(k, 0) / sb if sb else 0.0
        ra = [min(p.get(k, 0.0) for p in pa), max(p.get(k, 0.0) for p in pa)]
        rb = [min(p.get(k, 0.0) for p in pb), max(p.get(k, 0.0) for p in pb)]
        spread = max(ra[1] - ra[0], rb[1] - rb[0])
        rows.append({"category": k[0], "name": k[1],
                     "a_share": round(ta.get(k, 0) / suma, 6),
                     "b_share": round(tb.get(k, 0) / sumb, 6),
                     "a_ns_per_s": round(a_ps, 3), "b_ns_per_s": round(b_ps, 3),
                     "diff_ns_per_s": round(b_ps - a_ps, 3),
                     "diff_share": round(tb.get(k, 0) / sumb - ta.get(k, 0) / suma, 6),
                     "a_range": [round(v, 3) for v in ra] if reps else None,
                     "b_range": [round(v, 3) for v in rb] if reps else None,
                     "within_spread": abs(b_ps - a_ps) <= spread if reps else None})
    rows.sort(key=lambda r: (-abs(r["diff_ns_per_s"]), r["category"], r["name"]))
    return rows


def extremes(a, b):
    """The max and the counts of both sides, shown beside the metrics and not
    judged (a max is one sample; counts follow the durations): [{name, unit,
    a, b, diff, diff_pct}]."""
    def row(name, unit, va, vb):
        if va is None or vb is None:
            return None
        return {"name": name, "unit": unit, "a": _num(va), "b": _num(vb),
                "diff": _num(vb - va), "diff_pct": _num(100.0 * (vb - va) / va) if va else None}

    def outliers(side):
        return sum(r.count for r in side.runs) if all(r.has_outliers for r in side.runs) \
            else None
    rows = [row("max", "ns", max(r.max_ns for r in a.runs), max(r.max_ns for r in b.runs)),
            row("samples", "count", sum(sum(x[2] for x in r.buckets) for r in a.runs),
                sum(sum(x[2] for x in r.buckets) for r in b.runs)),
            row("outliers", "count", outliers(a), outliers(b))]
    return [r for r in rows if r]


# --- hardware counters -----------------------------------------------------

PMU_MISSES = ("cache_misses", "dtlb_load_misses")


def _pmu_of(results):
    """A side's hardware counters summed over its runs: {"runs", "ipc",
    "per_million_loops"}, or None when a run has none (no PMU where it ran)."""
    runs = [run for r in results for run in r["runs"]]
    if not runs or not all(isinstance(run.get("pmu"), dict) for run in runs):
        return None
    cycles = sum(run["pmu"].get("cycles") or 0 for run in runs)
    instr = sum(run["pmu"].get("instructions") or 0 for run in runs)
    loops = sum(run.get("samples") or 0 for run in runs)
    per_m = {k: round(1e6 * sum(run["pmu"].get(k) or 0 for run in runs) / loops, 3)
             for k in PMU_MISSES if loops and all(k in run["pmu"] for run in runs)}
    return {"runs": len(runs), "ipc": round(instr / cycles, 4) if cycles else None,
            "per_million_loops": per_m}


def hardware_counters(results_a, results_b):
    """IPC and misses per million loops of each side: a CPU that was slowed (lower
    IPC, more misses) rather than stolen (outliers) shows here."""
    return {"a": _pmu_of(results_a), "b": _pmu_of(results_b)}


# --- warnings --------------------------------------------------------------

def _warnings(da, db, results_a, results_b, quantities):
    """What makes the two sides less comparable; said, never refused (two
    quantities that measure different things were refused before, unless
    asked for: @quantities are the lines that say so)."""
    w = list(quantities)
    for what, key in (("tool", "tools"), ("CPUs", "cpus"), ("host", "hosts")):
        if da[key] != db[key]:
            w.append("A and B differ in %s (%s vs %s): the difference includes that" % (
                what, _list(da[key]), _list(db[key])))
        for side, d in (("A", da), ("B", db)):
            if len(d[key]) > 1 and key != "cpus":
                w.append("the results of %s differ in %s (%s)" % (side, what, _list(d[key])))
    for side, results, labels in (("A", results_a, da["results"]),
                                  ("B", results_b, db["results"])):
        for r, label in zip(results, labels):
            if r.get("partial"):
                w.append("%s (%s) was stopped early: it covers less than asked" % (label, side))
    bits = {(run.get("histogram") or {}).get("sub_bucket_bits")
            for r in results_a + results_b for run in r["runs"]}
    if len(bits) > 1:
        w.append("the histograms differ in precision (sub_bucket_bits %s): each side is "
                 "compared on its coarsest" % _list(sorted(bits)))
    return w


def _list(v):
    return ", ".join(str(x) for x in v)


# --- the comparison --------------------------------------------------------

def invalid_results(results, labels, tag):
    """'A (label) is not a valid measurement: ...' of each result of a side that is
    not one (results/validity.py)."""
    out = []
    for r, label in zip(results, labels):
        s = summary(validity_of(r), MEASUREMENT)
        if s:
            out.append("%s (%s) is %s" % (tag, label, s))
    return out


def compare(results_a, results_b, confidence=DEFAULT_CONFIDENCE, resamples=DEFAULT_RESAMPLES,
            seed=DEFAULT_SEED, labels_a=None, labels_b=None, quantity=None, mixed=False,
            min_effect_ns=DEFAULT_MIN_EFFECT_NS, min_effect_pct=DEFAULT_MIN_EFFECT_PCT,
            accept_invalid=False):
    """The comparison of two sides (lists of loaded results) as a jtr-compare/1
    dict, each result on its quantity @quantity (None: its default); UsageError
    when the sides' quantities measure different things, unless @mixed (then
    the verdict is "not comparable"). A change counts when it is at least
    @min_effect_ns and @min_effect_pct of A. A side holding a result that is not
    a valid measurement gets no verdict ("invalid") unless @accept_invalid."""
    np = _numpy()
    if not results_a or not results_b:
        raise UsageError("give at least one result on each side")
    labels_a = labels_a or ["A%d" % (i + 1) for i in range(len(results_a))]
    labels_b = labels_b or ["B%d" % (i + 1) for i in range(len(results_b))]
    results_a, qs_a = comparable(results_a, labels_a, quantity)
    results_b, qs_b = comparable(results_b, labels_b, quantity)
    for r, label in list(zip(results_a, labels_a)) + list(zip(results_b, labels_b)):
        check_result(r, label)
    said = check_quantities(qs_a, qs_b, labels_a, labels_b, mixed)
    bits_a, err_a = _bits(results_a)
    bits_b, err_b = _bits(results_b)
    a = _Side(results_a, labels_a, bits_a, qs_a)
    b = _Side(results_b, labels_b, bits_b, qs_b)
    da, db = a.describe(), b.describe()
    steps = [d["resolution_ns"] for d in (da, db) if d["resolution_ns"]]
    rng = np.random.default_rng(seed)
    boot_a, boot_b = bootstrap(a, resamples, rng), bootstrap(b, resamples, rng)
    metrics = [_metric(name, a.point[name], b.point[name], boot_a, boot_b, confidence,
                       a.reps, b.reps, max(err_a, err_b), min_effect_ns, min_effect_pct,
                       max(steps) if steps else None)
               for name in a.point if a.point[name] is not None and b.point[name] is not None]
    spread_known = len(results_a) > 1 or len(results_b) > 1
    refused = not_comparable(da, db, qs_a, qs_b, min_effect_ns)
    bad = invalid_results(results_a, labels_a, "A") + invalid_results(results_b, labels_b, "B")
    for m in metrics if refused or (bad and not accept_invalid) else ():
        m["change"] = None      # shown, not judged
    suggestions = short_runs(da, db)
    v, decided, text = verdict(metrics, spread_known, refused, suggestions,
                               () if accept_invalid else bad)
    both = da["attributed"] and db["attributed"]
    return {
        "format": FORMAT,
        "jtr_version": __version__,
        "a": da,
        "b": db,
        "method": {"confidence": confidence, "resamples": resamples, "seed": seed,
                   "bootstrap": "multinomial resampling of each run's bucket counts",
                   "key_metrics": list(KEY_METRICS),
                   "resolution": max(err_a, err_b),
                   "min_effect_ns": _num(min_effect_ns), "min_effect_pct": _num(min_effect_pct),
                   "short_run_ns": SHORT_RUN_NS},
        "metrics": metrics,
        "extremes": extremes(a, b),
        "causes": cause_deltas(results_a, results_b) if both else None,
        "hardware_counters": hardware_counters(results_a, results_b),
        "warnings": _warnings(da, db, results_a, results_b, said) + (
            ["judged although %s (--accept-invalid)" % x for x in bad]
            if accept_invalid else []),
        "invalid": bad,
        "comparable": not refused,
        "not_comparable": refused,
        "suggestions": suggestions,
        "verdict": v,
        "decided_by": decided,
        "verdict_text": text,
    }


# --- the numbers in words (the verdict's text and jtr compare's table) ---------

def fmt_value(m, v):
    """A metric's value in its unit."""
    if m["unit"] == "ns":
        return fmt_ns(v)
    if m["unit"] == "ns/s":
        return fmt_ns(v) + "/s"
    if m["unit"] == "count":
        return "%d" % v
    return "%.3f %%" % v if m["unit"] == "%" else "%.1f" % v


def signed(m, v):
    """A difference with its sign: +20 ns, -1.2 us, +0.120 pt, -3.5, +12 (a count)."""
    sign = "+" if v > 0 else ("-" if v < 0 else "")
    if m["unit"] == "count":
        return sign + "%d" % abs(v)
    if m["unit"] == "ns":
        return sign + fmt_ns(abs(v))
    if m["unit"] == "ns/s":
        return sign + fmt_ns(abs(v)) + "/s"
    return sign + ("%.3f pt" % abs(v) if m["unit"] == "%" else "%.1f" % abs(v))


def fmt_diff(m):
    return signed(m, m["diff"])


def fmt_pct(p):
    return "n/a" if p is None else ("%+.1f %%" % p if p else "0.0 %")


def fmt_ci(m):
    return "%s .. %s" % (signed(m, m["ci"][0]), signed(m, m["ci"][1]))


def fmt_range(m, r):
    return "" if not r else "%s .. %s" % (fmt_value(m, r[0]), fmt_value(m, r[1]))
