# SPDX-License-Identifier: GPL-2.0-only
"""ls - jtr ls's table: a line per result of its jtr-ls/1 document
(drivers/ls.py), the other quantities its tools hold, and the counts."""
from ..results.validity import MEASUREMENT
from ..system.schema import utc_time
from ..units import fmt_ns
from ..values import format_cpulist
from .text import align


def _ns(ns):
    return "-" if ns is None else fmt_ns(ns)


def _dur(ns):
    if not ns:
        return "-"
    s = ns / 1e9
    if s < 120:
        return "%.1f s" % s
    if s < 7200:
        return "%.1f m" % (s / 60)
    return "%.1f h" % (s / 3600)


def valid(f):
    """Whether a row's result is a valid measurement."""
    v = f.get("validity") or {}
    return not any(r.get("scope") == MEASUREMENT for r in v.get("reasons") or [])


def _cause(c):
    if not c:
        return "-"
    return "%s %.0f %%" % (c["name"] or c["category"], 100.0 * (c["share"] or 0))


def format_table(doc, quantity=None):
    """The lines of jtr ls for people, of the jtr-ls/1 document @doc listed on
    @quantity (None: each result's default)."""
    items, skipped = doc["results"], doc["skipped"]
    damaged, without = doc["damaged"], doc["without_quantity"]
    head = ("started (UTC)", "tool", "CPUs", "quantity", "duration", "p99", "p99.99", "max",
            "lost or excess", "top cause", "profile", "folder")
    lines = []
    for f in items:
        t = utc_time(f["started_at"])
        p = f["percentiles_ns"]
        lines.append((
            t.strftime("%Y-%m-%d %H:%M:%S") if t else "?",
            (f["tool"] or "?") + (" (partial)" if f["partial"] else "") +
            ("" if valid(f) else " (invalid)"),
            format_cpulist(f["cpus"]) or "-",
            f["quantity"] or "-",
            _dur(f["duration_ns"]),
            _ns(p.get("99")), _ns(p.get("99.99")), _ns(f["max_ns"]),
            "%.3f %%" % f["lost_pct"] if f["lost_pct"] is not None else
            "%s/s" % fmt_ns(f["excess_ns_per_s"]) if f.get("excess_ns_per_s") is not None
            else "-",
            _cause(f["top_cause"]),
            f["tuning_profile"] or "-",
            f["path"]))
    out = align([head] + lines, [i in (4, 5, 6, 7, 8) for i in range(len(head))]) \
        if lines else []
    others = {}
    for f in items:
        for q in f["quantities"][1:] if not quantity else ():
            others.setdefault(f["tool"] or "?", [])
            if q not in others[f["tool"] or "?"]:
                others[f["tool"] or "?"].append(q)
    for tool, qs in sorted(others.items()):
        out.append("%s results also hold %s: --quantity NAME lists one of them"
                   % (tool, ", ".join(qs)))
    n = len(items)
    tail = "%d result%s" % (n, "" if n == 1 else "s")
    if skipped:
        tail += "; %d folder%s skipped (no jtr result in %s)" % (
            len(skipped), "" if len(skipped) == 1 else "s",
            "it" if len(skipped) == 1 else "them")
    if without:
        tail += "; %d without %s left out" % (len(without), quantity)
    if damaged:
        tail += "; %d damaged result%s skipped (see the warning%s above)" % (
            len(damaged), "" if len(damaged) == 1 else "s", "" if len(damaged) == 1 else "s")
    out.append(tail)
    return out
