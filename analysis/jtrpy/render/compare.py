# SPDX-License-Identifier: GPL-2.0-only
"""compare - a comparison (jtr-compare/1) as the table jtr compare prints."""
from ..stats.compare import PMU_MISSES, fmt_ci, fmt_diff, fmt_pct, fmt_range, fmt_value
from ..units import fmt_ns as _fmt_ns
from .text import align

TABLE_CAUSES = 10


def _list(v):
    return ", ".join(str(x) for x in v)


def _side_line(tag, d):
    """A: before  (gap, CPU 1, gap: 1 run, 10.00 s, 237025339 samples): the tool,
    the CPUs, and the quantity compared with its runs and samples."""
    cpus = [c for c in d["cpus"] if c is not None]
    where = ("CPU %s" if len(cpus) == 1 else "CPUs %s") % _list(cpus) if cpus else "unpinned"
    runs = "%d run%s" % (d["runs"], "" if d["runs"] == 1 else "s")
    if len(d["results"]) > 1:
        runs = "%d results, %s" % (len(d["results"]), runs)
    return "%s: %s  (%s, %s, %s: %s, %.2f s, %d samples)" % (
        tag, ", ".join(d["results"]), "/".join(d["tools"]), where, d["quantity"], runs,
        d["duration_ns"] / 1e9, d["samples"])


def _others_line(c):
    """The quantities the results hold besides those compared, or None."""
    shown = set(c["a"]["quantity"].split("/")) | set(c["b"]["quantity"].split("/"))
    others = sorted((set(c["a"]["quantities"]) | set(c["b"]["quantities"])) - shown)
    if not others:
        return None
    return "the results also hold %s: --quantity NAME compares one of them" % ", ".join(others)


def change_word(c, m):
    """The change column by the verdict's rule: worse, better (a key metric that
    changed), small (significant, less than the minimum practical effect), - (a
    key metric that did not change); a metric that is not key never decides:
    "higher" or "lower" where it changed, no colour; nothing when the sides are
    not comparable."""
    if not c.get("comparable", True):
        return ""
    if m["change"]:
        if not m["key"]:
            return "higher" if m["change"] == "worse" else "lower"
        return m["change"]
    return "small" if m.get("significant") else ("-" if m["key"] else "")


NOT_JUDGED = "not judged"


def extreme_cells(m):
    """A max or count row's cells after its name: A, B, B-A, B-A %, its CI (none:
    one sample, or a count)."""
    return [fmt_value(m, m["a"]), fmt_value(m, m["b"]), fmt_diff(m), fmt_pct(m["diff_pct"]),
            "-"]


def cause_interval(r):
    """A cause row's interval cell: each side's range over its results, and
    whether the change is within the run-to-run spread; with one result a side,
    none to judge by."""
    if r.get("a_range") is None:
        return "one run each: no interval"
    return "A %s..%s, B %s..%s%s" % (
        _fmt_ns(r["a_range"][0]), _fmt_ns(r["a_range"][1]), _fmt_ns(r["b_range"][0]),
        _fmt_ns(r["b_range"][1]), ": within the spread" if r["within_spread"] else "")


def min_effect_text(method, metrics=()):
    """'100 ns and 10 % of A (time lost: 0.010 pt)': the minimum practical effect
    (of the excess latency instead, for latency probes)."""
    ns, pct = method["min_effect_ns"], method["min_effect_pct"]
    if any(m["name"] == "excess latency" for m in metrics):
        return "%s and %g %% of A (excess latency: %s/s)" % (_fmt_ns(ns), pct,
                                                            _fmt_ns(ns * 1000))
    return "%s and %g %% of A (time lost: %.3f pt)" % (_fmt_ns(ns), pct, ns * 1e-4)


def format_table(c):
    """The comparison as lines of text for people."""
    conf = c["method"]["confidence"]
    lines = [_side_line("A", c["a"]), _side_line("B", c["b"])]
    others = _others_line(c)
    lines += ([others] if others else []) + [""]
    reps = any(m["a_range"] or m["b_range"] for m in c["metrics"])
    head = ["", "A", "B", "B-A", "B-A %", "%g %% CI of B-A" % conf]
    head += ["A runs", "B runs"] if reps else []
    rows = [head + ["change"]]
    for m in c["metrics"]:
        row = [m["name"], fmt_value(m, m["a"]), fmt_value(m, m["b"]), fmt_diff(m),
               fmt_pct(m["diff_pct"]), fmt_ci(m)]
        row += [fmt_range(m, m["a_range"]), fmt_range(m, m["b_range"])] if reps else []
        rows.append(row + [change_word(c, m)])
    for m in c.get("extremes") or ():
        rows.append([m["name"]] + extreme_cells(m) + (["", ""] if reps else []) + [NOT_JUDGED])
    right = (False,) + (True,) * (len(head) - 1) + (False,)
    lines += ["  " + line for line in align(rows, right)]
    lines += _cause_lines(c)
    lines += _pmu_lines(c.get("hardware_counters"))
    lines += [""] + ["warning: " + w for w in c["warnings"]]
    lines.append("the verdict comes from the key metrics: %s; a change counts from %s; the "
                 "max (one sample) and the counts are shown, not judged" % (
                     _list(m["name"] for m in c["metrics"] if m["key"]),
                     min_effect_text(c["method"], c["metrics"])))
    if not reps:
        lines.append("note: one result per side: the CIs cover the sampling noise within a "
                     "run, not the variation from run to run")
    lines.append("verdict: " + c["verdict_text"])
    return [line for i, line in enumerate(lines) if line or (i and lines[i - 1])]


def _cause_lines(c):
    """The per-cause table, or a line saying why there is none."""
    if c["causes"] is None:
        which = [s for s in ("a", "b") if not c[s]["attributed"]]
        return ["", "causes: not compared: %s not attributed (jtr run as root, or "
                "jtr attribute)" % " and ".join(s.upper() for s in which)]
    reps = any(r.get("a_range") is not None for r in c["causes"])
    rows = [("cause", "", "A per s", "B per s", "B-A per s", "A share", "B share") +
            (("A and B over their results",) if reps else ())]
    for r in c["causes"][:TABLE_CAUSES]:
        rows.append((r["category"], r["name"], _fmt_ns(r["a_ns_per_s"]),
                     _fmt_ns(r["b_ns_per_s"]),
                     ("+" if r["diff_ns_per_s"] > 0 else "-" if r["diff_ns_per_s"] < 0 else "")
                     + _fmt_ns(abs(r["diff_ns_per_s"])),
                     "%.1f %%" % (100 * r["a_share"]), "%.1f %%" % (100 * r["b_share"])) +
                    ((cause_interval(r),) if reps else ()))
    more = len(c["causes"]) - TABLE_CAUSES
    return ["", "causes (outlier time per second of run; largest change first; %s):" % (
        "a change within the run-to-run spread of either side is not one" if reps else
        "one run each: no interval, a change may be noise")] + \
        ["  " + line for line in align(rows, (False, False) + (True,) * 5 + (False,) * reps)] + \
        (["  ... %d more in --json" % more] if more > 0 else [])


def _pmu_lines(hc):
    """IPC and misses of both sides, one line when only one side has counters,
    nothing when neither has (each run already said why)."""
    if not hc or (hc["a"] is None and hc["b"] is None):
        return []
    if hc["a"] is None or hc["b"] is None:
        return ["", "hardware counters: not compared: %s has none (no PMU where it ran)"
                % ("A" if hc["a"] is None else "B")]
    a, b = hc["a"], hc["b"]
    rows = [("", "A", "B", "B-A", "B-A %")]

    def row(name, va, vb, fmt):
        if va is None or vb is None:
            return
        d = vb - va
        rows.append((name, fmt % va, fmt % vb, ("+" if d > 0 else "") + fmt % d,
                     fmt_pct(100.0 * d / va if va else None)))
    row("IPC", a["ipc"], b["ipc"], "%.2f")
    for k in PMU_MISSES:
        row(k.replace("_", " ") + " per million loops", a["per_million_loops"].get(k),
            b["per_million_loops"].get(k), "%.1f")
    return ["", "hardware counters (a slowed CPU shows as lower IPC or more misses, a "
            "stolen one as outliers):"] + ["  " + line for line in
                                           align(rows, (False,) + (True,) * 4)]
