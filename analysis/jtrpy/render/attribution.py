# SPDX-License-Identifier: GPL-2.0-only
"""attribution - an attribution and its cross-check as text for people (the
tables jtr run and jtr attribute print and attribution.txt holds)."""
import re

from ..trace import causes as C
from ..trace.sched import TOOL
from ..units import fmt_ns as _fmt_ns
from .text import align, cpus_text

TABLE_WORST = 5         # worst outliers in the table
SHOWN = 3               # cross-check examples and tasks of each kind printed
DIFF_SHOWN = 12         # causes of the send - null difference printed
BACKEND_NAMES = {"ebpf": "eBPF (jtr trace)", "perf": "perf (perf record)"}


def task_key(cause):
    """(comm, [pids]) of a task cause, from its name and tasks (or, in older
    results, from a name with the pid in it); None for other causes."""
    if cause.get("category") != C.TASK:
        return None
    name = str(cause.get("name") or "")
    tasks = cause.get("tasks")
    if isinstance(tasks, list):
        return name, [t.get("pid") for t in tasks if isinstance(t, dict)]
    comm = C.cause_key(C.TASK, name)[1]
    pid = re.search(r"\(pid (\d+)", name) if comm != name else None
    return comm, [int(pid.group(1))] if pid else []


def cause_label(cause):
    """A cause's name for people (causes.label: a task's comm with how many
    tasks, or its pid and prio), with its side across two ends ('bash (pong side)')."""
    t = task_key(cause)
    if t is not None and not isinstance(cause.get("tasks"), list):
        label = t[0]        # an older result's one task: its comm
    else:
        label = C.label(cause)
    return label + (" (%s side)" % cause["side"] if cause.get("side") else "")


def group_causes(causes, names=3):
    """The causes by category, most time first: [{category, total_ns, share, count
    (outliers where it was the main cause), names: [{label, total_ns, share,
    count, max_ns, per_s, phases, causes}], more}], one task per comm (older
    results' rows of one comm, one per pid, merged), the @names largest of each
    category kept (None: all), @more the number left out."""
    groups = {}
    for c in causes:
        g = groups.setdefault(c.get("category"), {
            "category": c.get("category"), "total_ns": 0, "share": 0.0, "count": 0,
            "names": {}})
        g["total_ns"] += c.get("total_ns") or 0
        g["share"] += c.get("share") or 0.0
        g["count"] += c.get("primary_count") or 0
        t = task_key(c)
        key = (t[0] if t else str(c.get("name")), c.get("side"))
        nm = g["names"].setdefault(key, {"label": None, "total_ns": 0, "share": 0.0,
                                         "count": 0, "max_ns": 0, "per_s": 0.0,
                                         "phases": {}, "causes": 0, "pids": set(),
                                         "row": c, "chain": c.get("example_chain")})
        nm["total_ns"] += c.get("total_ns") or 0
        nm["share"] += c.get("share") or 0.0
        nm["count"] += c.get("count") or 0
        nm["max_ns"] = max(nm["max_ns"], c.get("max_ns") or 0)
        nm["per_s"] += c.get("per_s") or 0.0
        for k, v in (c.get("phases") or {}).items():
            nm["phases"][k] = nm["phases"].get(k, 0) + v
        nm["causes"] += 1
        if t:
            nm["pids"].update(t[1])
            nm["tasks"] = max(nm.get("tasks", 0), c.get("pids") or 0) if \
                nm["causes"] == 1 else len(nm["pids"])
    out = sorted(groups.values(), key=lambda g: (-g["total_ns"], str(g["category"])))
    for g in out:
        for (name, side), nm in g["names"].items():
            row = nm.pop("row")
            pids = nm.pop("pids")
            if "tasks" in nm:
                n = max(nm.pop("tasks"), len(pids), 1)
                one = (row.get("tasks") or [{}])[0] if isinstance(row.get("tasks"), list) \
                    else {}
                one = one if isinstance(one, dict) else {}      # a damaged file's
                nm["label"] = C.task_label(name, n, one.get("pid") if n == 1 else None,
                                           one.get("prio") if n == 1 else None)
            else:
                nm["label"] = name
            nm["label"] += C.detail(row)
            if side:
                nm["label"] += " (%s side)" % side
        ns = sorted(g["names"].values(), key=lambda n: (-n["total_ns"], n["label"]))
        keep = len(ns) if names is None else names
        g["more"] = max(0, len(ns) - keep)
        g["names"] = ns[:keep]
    return out


def phases_text(cause):
    """'send 1.2 us, out 40.0 us': the time of a cause per phase, most first."""
    ph = cause.get("phases") or {}
    return ", ".join("%s %s" % (PHASE_NAMES.get(k, k), _fmt_ns(v))
                     for k, v in sorted(ph.items(), key=lambda kv: -kv[1]))


def cost_text(tracer):
    """One line of what the tracer cost, or None when it was not measured."""
    c = tracer.get("cost") or {}
    if not c:
        return None
    perf = tracer.get("backend") == "perf"
    window_ns = (tracer.get("end_ns") or 0) - (tracer.get("start_ns") or 0)
    parts = []
    if "kernel_ns" in c:
        parts.append("BPF programs %s in the kernel (%d runs, %s each%s, on all CPUs)" % (
            _fmt_ns(c["kernel_ns"]), c["kernel_runs"],
            _fmt_ns(c["kernel_ns"] // c["kernel_runs"]) if c["kernel_runs"] else "-",
            ", %d of them timed" % c["kernel_timed_runs"] if "kernel_timed_runs" in c
            else ""))
    if "tracing_cpu_ns" in c:
        procs = c.get("process_cpus")
        where = ("one CPU" if not procs else "CPU " + procs if procs.isdigit()
                 else "one CPU, on CPUs " + procs)
        pct = (" (%.2f %% of %s)" % (100.0 * c["tracing_cpu_ns"] / window_ns, where)
               if window_ns > 0 else "")
        text = "%s %s CPU while tracing%s" % (
            "perf record" if perf else "the tracer process", _fmt_ns(c["tracing_cpu_ns"]), pct)
        if "setup_cpu_ns" in c:
            text += ", %s to start" % _fmt_ns(c["setup_cpu_ns"])
        parts.append(text)
    if "convert_ns" in c:
        parts.append("%s converting after the run" % _fmt_ns(c["convert_ns"]))
    if perf and "kernel_ns" not in c:
        parts.append("perf's own time in the kernel is not measured per run (make bench "
                     "compares runs with it and without)")
    return "cost: " + "; ".join(parts)


PHASE_NAMES = {"send": "the send (from the intended time)",
               "out": "the way out and pong's wake-up", "reflect": "pong's reflection",
               "reply": "the way back and the reply's wake-up",
               "trip": "the round trip after the send", "round trip": "the round trip",
               "back": "the way back", "publish": "the publisher's send",
               "receive": "the message, send to receive"}


def by_pid(causes):
    """The causes with every task's cause split into one row per task (its pid and
    prio in the name; its count and time; its p50 and max are not kept per task),
    as --by pid shows them."""
    out = []
    for c in causes:
        tasks = c.get("tasks") if c.get("category") == C.TASK else None
        if not isinstance(tasks, list) or len(tasks) < 2:
            out.append(c)
            continue
        total = sum(t.get("total_ns") or 0 for t in tasks) or 1
        more = (c.get("pids") or len(tasks)) - len(tasks)
        for t in tasks:
            out.append(dict(c, name=c["name"], tasks=[t], pids=1, count=t["count"],
                            total_ns=t["total_ns"], share=c["share"] * t["total_ns"] / total,
                            p50_ns=None, max_ns=None,
                            per_s=c["per_s"] * t["count"] / max(1, c["count"])))
        if more > 0:
            out[-1] = dict(out[-1], more_tasks=more)
    return out


def _causes(attribution, lines, split=False):
    """The causes table (with side and phase columns for two ends); @split: a row
    per task (--by pid), else one per comm."""
    o, t = attribution["outliers"], attribution["tracer"]
    kind = attribution.get("run_kind")
    if "summed_ns" in o:    # they overlap: the time one was in flight, not their sum
        lines.append("causes of %d outliers%s on %s: one or more in flight for %s of the %.2f s "
                     "run" % (o["count"], " of the %s runs" % kind if kind else "",
                              cpus_text(t.get("cpus") or o.get("cpus") or []),
                              _fmt_ns(o["total_ns"]), o.get("duration_ns", 0) / 1e9))
    else:
        lines.append("causes of %d outliers%s on %s: %s in %.2f s" % (
            o["count"], " of the %s runs" % kind if kind else "",
            cpus_text(o.get("cpus") or t.get("cpus") or []), _fmt_ns(o["total_ns"]),
            o.get("duration_ns", 0) / 1e9))
    sided = any("side" in c for c in attribution["causes"])
    rows = [("category", "name") + (("side", "phase") if sided else ()) +
            ("count", "share", "total", "p50", "max", "per s")]
    for c in by_pid(attribution["causes"]) if split else attribution["causes"]:
        ph = c.get("phases") or {}
        where = (c.get("side") or "-", max(ph, key=ph.get) if ph else "-") if sided else ()
        rows.append((c["category"], C.label(c) + (
                        " and %d more tasks" % c["more_tasks"] if c.get("more_tasks") else "")) +
                    where + (str(c["count"]), "%.1f %%" % (100 * c["share"]),
                             _fmt_ns(c["total_ns"]),
                             "-" if c["p50_ns"] is None else _fmt_ns(c["p50_ns"]),
                             "-" if c["max_ns"] is None else _fmt_ns(c["max_ns"]),
                             "%.1f" % c["per_s"]))
    lines += ["  " + line for line in align(rows, (False, False) + (False, False) * sided +
                                            (True,) * 6)]
    if o["total_ns"]:
        lines.append("  kernel events cover %s of it (%.1f %%)" % (
            _fmt_ns(o["traced_ns"]), 100.0 * o["traced_ns"] / o["total_ns"]))


def budget_lines(attribution):
    """The per-phase budget of round trips / messages, or []: per phase the mean
    time its stamps measured per outlier, the mean charged to kernel events and
    the host, and the cause that took most of it."""
    rows = [("phase", "side", "outliers", "measured", "kernel, host", "most of it")]
    for b in attribution.get("budget") or ():
        if "measured_mean_ns" not in b:
            continue            # an older result's budget (sums): not shown
        d = b.get("dominant")
        rows.append((PHASE_NAMES.get(b["phase"], b["phase"]), b["side"], str(b["outliers"]),
                     _fmt_ns(b["measured_mean_ns"]), _fmt_ns(b["charged_mean_ns"]),
                     "%s: %s (%s side, %.0f %%)" % (d["category"], d["name"], d["side"],
                                                    100 * d["share"]) if d else "-"))
    if len(rows) == 1:
        return []
    head = ("budget of the outliers by phase (per outlier, the mean measured by the "
            "stamps and charged to kernel events and the host; the rest is no kernel "
            "event):")
    return ["", head] + ["  " + x for x in align(rows, (False, False, True, True, True,
                                                        False))]


def difference_lines(attribution):
    """What the main run kind adds per cause (send - null), or []."""
    diff = attribution.get("difference")
    others = attribution.get("by_kind") or {}
    if not others:
        return []
    lines = []
    for other in others.values():
        lines.append("")
        _causes(other, lines)
    if diff:
        ka = attribution.get("run_kind", "a")
        kb = next(iter(others))
        rows = [("category", "name", ka, kb, "outliers", "time")]
        for d in diff[:DIFF_SHOWN]:
            rows.append((d["category"], d["name"], "%d, %s" % (d[ka]["count"],
                                                               _fmt_ns(d[ka]["total_ns"])),
                         "%d, %s" % (d[kb]["count"], _fmt_ns(d[kb]["total_ns"])),
                         "%+d" % d["count_delta"],
                         ("+" if d["total_ns_delta"] >= 0 else "-") +
                         _fmt_ns(abs(d["total_ns_delta"]))))
        lines += ["", "what the %s runs add (%s - %s), per cause:" % (ka, ka, kb)]
        lines += ["  " + x for x in align(rows, (False, False, True, True, True, True))]
        if len(diff) > DIFF_SHOWN:
            lines.append("  %d more causes in result.json (attribution.difference)"
                         % (len(diff) - DIFF_SHOWN))
    return lines


def decomposition_lines(attribution):
    """jtr wake: the components of the late wake-ups, which one dominated how
    often, and how many timelines closed within the tolerance; [] otherwise."""
    d = attribution.get("decomposition")
    if not d:
        return []
    o = attribution["outliers"]
    rows = [("component", "dominant", "share", "total", "p50", "max")]
    for c in d["components"]:
        if not c["count"]:
            continue
        neg = c["component"] == "unaccounted" and c["min_ns"] < 0
        rows.append((c["label"], str(c["dominant_count"]),
                     "-" if c["component"] == "unaccounted" else "%.1f %%" % (100 * c["share"]),
                     _fmt_ns(c["total_ns"]) if c["total_ns"] >= 0 else
                     "-" + _fmt_ns(-c["total_ns"]), _fmt_ns(c["p50_ns"]) if c["p50_ns"] >= 0
                     else "-" + _fmt_ns(-c["p50_ns"]),
                     _fmt_ns(c["max_ns"]) + (" (min -%s)" % _fmt_ns(-c["min_ns"]) if neg else "")))
    lines = ["late wake-ups taken apart: %d outliers on %s, %s of latency" % (
        o["count"], cpus_text(o.get("cpus") or []), _fmt_ns(o["total_ns"]))]
    lines += ["  " + x for x in align(rows, (False, True, True, True, True, True))]
    lines.append("  %d of %d with a whole wake-up path; %d of them within %s unaccounted "
                 "(per outlier: %s)" % (d["complete"], o["count"], d["within_tolerance"],
                                        _fmt_ns(d["tolerance_ns"]), d["file"]))
    return lines + [""]


def format_table(attribution, split=False):
    """The attribution as lines of text for people: causes (@split: a row per
    task, --by pid), worst outliers, tracer, warnings."""
    o, t = attribution["outliers"], attribution["tracer"]
    lines = decomposition_lines(attribution)
    _causes(attribution, lines, split)
    lines += budget_lines(attribution) + difference_lines(attribution)
    if attribution["worst"]:
        lines += ["", "worst outliers:"]
        t0 = o.get("start_ns") or 0
        rows = [(_fmt_ns(w["length_ns"]), "cpu%d" % w["cpu"],
                 "+%.3f s" % ((w["start_ns"] - t0) / 1e9),
                 ("%s side: " % w["side"] if w.get("side") and " side: " not in w["chain"]
                  else "") + w["chain"])
                for w in attribution["worst"][:TABLE_WORST]]
        lines += ["  " + line for line in align(rows, (True, False, True, False))]
    lines += ["", "tracer: %s, %d events, %d dropped" % (
        BACKEND_NAMES.get(t.get("backend"), t.get("backend") or "unknown"), t["events"],
        t["dropped"])]
    cost = cost_text(t)
    if cost:
        lines.append("  " + cost)
    if t.get("steal"):
        lines.append("  host steal: %s" % t["steal"])
    lines += ["warning: " + w for w in attribution["warnings"]]
    return lines


def _task(tid, comm):
    """'kworker/1:1[123]'."""
    return "%s[%d]" % (comm, tid) if tid > 0 else comm


def cross_check_lines(cc, t0):
    """The cross-check for people: counts and times, a few examples, the verdict;
    times of the examples in s from @t0 (the run's start)."""
    span = (cc["end_ns"] - cc["start_ns"]) / 1e9
    probes = ", ".join("%s on CPU %d" % (_task(p["tid"], p["comm"]), p["cpu"])
                       for p in cc["probe_tasks"]) or "none found"
    t, m, a, h = cc["totals"], cc["matched"], cc["attribution_only"], cc["timehist_only"]
    lines = ["cross-check with %s (%s, %.2f s; the probe's thread: %s):"
             % (TOOL, cc["sched_data"], span, probes)]
    rows = [("", "count", "time", ""),
            ("matched", str(m["count"]), _fmt_ns(m["ns"]),
             "outliers charged to task preemption; timehist shows those tasks in them"),
            ("attribution-only", str(a["count"]), _fmt_ns(a["ns"]),
             "outliers charged to a task timehist does not show in them"),
            ("timehist-only", str(h["count"]), _fmt_ns(h["ns"]),
             "slices of other tasks (>= %s) in outliers charged to something else"
             % _fmt_ns(cc["min_ns"]))]
    lines += ["  " + x for x in align(rows, (False, True, True, False))]
    d = t["difference_ns"]
    out, short = t["outside_outliers"], t["short"]
    lines.append("  other tasks ran %s in %d slices per timehist; the attribution charged %s "
                 "to task preemption (%s %s)" % (
                     _fmt_ns(t["timehist_ns"]), t["timehist_slices"],
                     _fmt_ns(t["attribution_ns"]), _fmt_ns(abs(d)), "more" if d >= 0 else "less"))
    if out["count"] or short["count"]:
        lines.append("  not compared: %d slices (%s) outside outliers, %d (%s) shorter than %s"
                     % (out["count"], _fmt_ns(out["ns"]), short["count"],
                        _fmt_ns(short["ns"]), _fmt_ns(cc["min_ns"])))
    for label, k in (("attribution-only", a), ("timehist-only", h)):
        if k["tasks"]:
            lines.append("  %s by task: %s" % (label, ", ".join(
                "%s %d× %s" % (_task(x["tid"], x["comm"] or "pid"), x["count"], _fmt_ns(x["ns"]))
                for x in k["tasks"][:SHOWN])))
    for x in a["examples"][:SHOWN]:
        lines.append("  attribution-only +%.6f s cpu%d %s: %s; timehist shows no pid %s there"
                     % ((x["start_ns"] - t0) / 1e9, x["cpu"], _fmt_ns(x["length_ns"]),
                        ", ".join(x["charged"]), ", ".join(map(str, x["missing_pids"]))))
    for x in h["examples"][:SHOWN]:
        lines.append("  timehist-only    +%.6f s cpu%d %s ran %s in a %s outlier charged to %s"
                     % ((x["start_ns"] - t0) / 1e9, x["cpu"], _task(x["tid"], x["comm"]),
                        _fmt_ns(x["end_ns"] - x["start_ns"]), _fmt_ns(x["outlier_length_ns"]),
                        x["charged_to"]))
    lines += ["warning: " + w for w in cc["warnings"]]
    lines.append("cross-check: %s" % cc["verdict"])
    return lines
