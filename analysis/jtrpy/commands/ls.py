# SPDX-License-Identifier: GPL-2.0-only
"""ls - jtr ls: past results with their headline numbers, newest first."""
import json

from ..cli.parser import JtrParser, add_quantity, warn
from ..errors import UsageError
from ..render.text import align
from ..results.figures import result_figures
from ..results.find import find_results
from ..results.quantity import select
from ..results.validity import MEASUREMENT
from ..system.schema import utc_time
from ..units import fmt_ns
from ..values import format_cpulist

FORMAT = "jtr-ls/1"

DESCRIPTION = """\
List past results, newest first, one a line: when it started (UTC), the tool,
the CPUs, the quantity the numbers are about (the tool's default, or --quantity
NAME: a ping result's rtt_from_intended, not its three runs pooled), how long it
ran, its p99, p99.99 and max, the time lost to interruptions (where a sample is
CPU time: gap, null, send) or the excess latency per second of run (where it is
a latency: wake, ping, sub), the largest cause (when attributed), the tuning
profile that was active, whether the run was stopped early, and whether it is a
valid measurement (a run that did not keep its schedule, or whose threshold came
from a slow warm-up, is marked invalid). Each FOLDER is a results folder or a
folder of them (default: results). Folders that hold no jtr result are skipped
and counted on the last line; a result that cannot be read (damaged, or not what
jtr wrote) is skipped with a warning line on stderr saying why; results/latest
is not listed twice. With --quantity, results without that quantity are left out
and counted on the last line (none with it: exit status 2, naming the quantities
the results have)."""

EXAMPLES = """\
  jtr ls
  jtr ls --json | python3 -m json.tool
  jtr ls results /srv/jitter/results before-tuning
  jtr ls --quantity rtt_from_send       # the ping results, on their round trip from the send"""


def make_parser(prog):
    p = JtrParser(prog, usage="%(prog)s [--json] [--quantity NAME] [FOLDER...]",
                  description=DESCRIPTION, examples=EXAMPLES)
    p.add_argument("--json", action="store_true",
                   help="print the list as JSON (" + FORMAT + "): per result its path and "
                        "the numbers (ns, %%), the folders skipped and the damaged results with "
                        "why (damaged: [{path, error}]); without_quantity: the results "
                        "left out by --quantity")
    add_quantity(p)
    p.add_operands("folders", "FOLDER", "a results folder, or a folder of them")
    return p


def rows(found, quantity=None):
    """One dict of headline numbers per Result on @quantity (None: each one's
    default), newest first; and the Results that have no @quantity."""
    out, without = [], []
    for r in found:
        try:
            f = result_figures(r, quantity)
        except UsageError:
            without.append(r)
            continue
        f["path"] = r.folder
        out.append(f)
    epoch = utc_time("1970-01-01T00:00:00Z")
    out.sort(key=lambda f: (utc_time(f["started_at"]) or epoch, f["path"]), reverse=True)
    return out, without


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


def format_table(items, skipped, damaged=(), without=(), quantity=None):
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


def run(opts):
    default = not opts.folders
    found, skipped, damaged = find_results(opts.folders or ["results"], default)
    for _, why in damaged:
        warn("jtr ls", why)
    items, without = rows(found, opts.quantity)
    if without and not items:
        have = sorted({q for r in without for q in select(r).names})
        raise UsageError("no result here has the quantity '%s'; they have %s" % (
            opts.quantity, ", ".join(have) or "none (no runs)"))
    if opts.json:
        print(json.dumps({"format": FORMAT, "results": items, "skipped": skipped,
                          "damaged": [{"path": p, "error": why} for p, why in damaged],
                          "without_quantity": [r.folder for r in without]}, indent=2))
        return 0
    for line in format_table(items, skipped, damaged, without, opts.quantity):
        print(line)
    return 0
