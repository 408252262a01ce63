# SPDX-License-Identifier: GPL-2.0-only
"""gates - judged gates (results/gates.py, with drivers/gates.py's causes) for
people and for CI: the "gates:" block jtr run prints, the last lines it prints
for each failed gate, and the JUnit suite (formats/junit.py writes it) whose
failures carry the value, the limit and the causes."""
import time

from ..results.figures import result_figures
from ..trace import causes as C
from ..units import counted, fmt_ns
from ..values import format_duration
from .runs import headline
from .text import align

SHOWN = 3           # causes on a failed gate's line
LISTED = 10         # causes in its JUnit failure text


def case_name(c):
    """'max-latency cpu 1' ('max-latency' for a thread that was not pinned)."""
    return c["gate"] if c["cpu"] is None else "%s cpu %d" % (c["gate"], c["cpu"])


def limit_text(c):
    """'100us' (the value grammar: what the option took) or '0.5 %'."""
    return format_duration(c["limit"]) if c["unit"] == "ns" else "%g %%" % c["limit"]


def detail(c):
    """'max 1.25 ms > limit 100us', '0.412 % of the time lost <= limit 0.5 %'."""
    if c["value"] is None:
        return "nothing measured (no sample%s)" % ("" if c["unit"] == "ns" else
                                                  " or no time-lost figure")
    op = "<=" if c["passed"] else ">"
    if c["unit"] == "ns":
        return "max %s %s limit %s" % (fmt_ns(c["value"]), op, limit_text(c))
    return "%.3f %% of the time lost %s limit %s" % (c["value"], op, limit_text(c))


def verdict(c):
    """'max-latency cpu 1: FAILED: max 1.25 ms > limit 100us'."""
    return "%s: %s: %s" % (case_name(c), "passed" if c["passed"] else "FAILED", detail(c))


def cause_label(x):
    """'task preemption jtr-inject (pid 42, prio 89)', with the end it sat on."""
    return "%s %s%s" % (x["category"], C.label(x), " [%s]" % x["side"] if x.get("side")
                        else "")


def whose(c):
    """Whose causes a failed case names: 'the 12 outliers beyond the limit'."""
    if c["gate"] == "max-latency":
        n = c.get("beyond", 0)
        return "the %d outlier%s beyond the limit" % (n, "" if n == 1 else "s")
    n = c.get("outliers", 0)
    return "the %d outlier%s%s" % (n, "" if n == 1 else "s",
                                   "" if c["cpu"] is None else " of CPU %d" % c["cpu"])


def causes_text(c, shown=SHOWN):
    """The causes of a failed case on one line, or why there are none."""
    if "causes_missing" in c:
        return "causes %s" % c["causes_missing"]
    if "causes" not in c:
        return None
    if not c["causes"]:
        return "no cause: %s" % (c.get("note") or "no outlier was logged")
    top = ", ".join("%s (%s, %s)" % (cause_label(x), counted(x["count"], "outlier"),
                                     fmt_ns(x["total_ns"])) for x in c["causes"][:shown])
    more = len(c["causes"]) - shown
    return "top causes of %s: %s%s" % (whose(c), top, " and %d more" % more if more > 0
                                       else "")


def lines(cases):
    """The "gates:" block: a verdict per case, the causes under a failed one."""
    out = ["gates:"]
    for c in cases:
        out.append("  " + verdict(c))
        why = None if c["passed"] else causes_text(c)
        if why:
            out.append("    " + why)
        if why and c.get("note") and c.get("causes"):
            out.append("    note: " + c["note"])
    return out


def failure_lines(cases, prog):
    """A last line per failed case: 'jtr run: gate max-latency cpu 1 failed:
    max 1.25 ms > limit 100us; top causes of ...'."""
    out = []
    for c in cases:
        if not c["passed"]:
            why = causes_text(c)
            out.append("%s: gate %s failed: %s%s" % (prog, case_name(c), detail(c),
                                                     "; " + why if why else ""))
    return out


def failure_text(c, quantity=None):
    """The text of a failed case's JUnit <failure>: value, limit, causes."""
    where = "CPU %d" % c["cpu"] if c["cpu"] is not None else "the run"
    dur = "%.2f s" % (c.get("duration_ns", 0) / 1e9)
    if c["value"] is None:
        out = ["value: none: nothing was measured on %s" % where]
    elif c["unit"] == "ns":
        out = ["value: %s (%d ns), the largest %s on %s in %s" % (
            fmt_ns(c["value"]), c["value"], "sample" if not quantity else
            "sample of %s" % quantity, where, dur)]
    else:
        out = ["value: %.6f %% of the time lost on %s in %s" % (c["value"], where, dur)]
    out.append("limit: %s" % (limit_text(c) + (" (%d ns)" % c["limit"] if c["unit"] == "ns"
                                                 else "")))
    if "causes_missing" in c:
        out.append("causes: %s" % c["causes_missing"])
    elif c.get("causes"):
        out.append("causes of %s, most time first:" % whose(c))
        rows = [("category", "name", "outliers", "total", "share")]
        rows += [(x["category"], x["name"] + (" [%s]" % x["side"] if x.get("side") else ""),
                  str(x["count"]), fmt_ns(x["total_ns"]), "%.1f %%" % (100 * x["share"]))
                 for x in c["causes"][:LISTED]]
        out += ["  " + line for line in align(rows, (False, False, True, True, True))]
        if c["causes"][0].get("example_chain"):
            out.append("  the longest outlier of the first: %s" % c["causes"][0]["example_chain"])
        if len(c["causes"]) > LISTED:
            out.append("  and %s more" % counted(len(c["causes"]) - LISTED, "cause"))
    elif "causes" in c:
        out.append("causes: none")
    if c.get("note"):
        out.append("note: %s" % c["note"])
    return "\n".join(out) + "\n"


def timestamp(t):
    """ISO 8601 of the epoch seconds @t, UTC: '2026-11-26T13:48:10+00:00'."""
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(t))


def properties(result, command, limits):
    """[(name, value)] of a suite: what ran, where, the limits, the headline figures."""
    f = result_figures(result)
    pct = f["percentiles_ns"]
    props = [("tool", result.get("tool")), ("quantity", f["quantity"]),
             ("jtr_version", result.get("jtr_version")), ("command", command),
             ("results", result.folder), ("cpus", ",".join(str(c) for c in f["cpus"])),
             ("started_at", result.get("started_at")), ("partial", str(f["partial"]).lower())]
    props += [(k, v) for k, v in limits if v is not None]
    props += [("p%s_ns" % k, pct[k]) for k in ("50", "99", "99.99") if k in pct]
    props.append(("max_ns", f["max_ns"]))
    if f["lost_pct"] is not None:
        props.append(("lost_pct", "%.6f" % f["lost_pct"]))
    if f["outliers_per_s"] is not None:
        props.append(("outliers_per_s", "%.3f" % f["outliers_per_s"]))
    top = f["top_cause"]
    props.append(("top_cause", "%s %s (%.1f %%)" % (top["category"], top["name"],
                                                    100 * (top["share"] or 0))
                  if top else "not attributed"))
    return [(k, "" if v is None else v) for k, v in props]


def limits_of(max_latency_ns, max_lost_pct):
    """The limits as the suite's properties give them: [(name, text or None)]."""
    return [("max_latency_limit", None if max_latency_ns is None else
             format_duration(max_latency_ns)),
            ("max_lost_limit", None if max_lost_pct is None else "%g%%" % max_lost_pct)]


def junit_suite(prog, probe, result, cases, started, elapsed_s, command, limits=()):
    """The JUnit suite of one run (formats/junit.py): a testcase per case, or
    one passing "run" testcase when no gate was asked for. @prog: 'jtr run';
    @started: epoch seconds; @command: the command line as text; @limits:
    [(property name, value or None)]: limits_of()."""
    out = "\n".join(headline(result) + ["results: %s/" % result.folder]) + "\n"
    classname = "%s.%s" % (prog.replace(" ", "."), probe)
    tcs = []
    for c in cases:
        tcs.append({"classname": classname, "name": case_name(c),
                    "time_s": c.get("duration_ns", 0) / 1e9, "system_out": out,
                    "failure": None if c["passed"] else {
                        "type": c["gate"], "message": verdict(c),
                        "text": failure_text(c, (result.get("gates") or {}).get("quantity"))}})
    if not cases:
        runs = result.get("runs") or []
        tcs.append({"classname": classname, "name": "run", "system_out": out,
                    "time_s": max((r.get("duration_ns") or 0 for r in runs), default=0) / 1e9})
    return {"name": "%s %s" % (prog, probe), "timestamp": timestamp(started),
            "hostname": (result.get("host") or {}).get("hostname") or "",
            "time_s": elapsed_s, "properties": properties(result, command, limits),
            "cases": tcs}


def junit_error_suite(prog, probe, message, started, elapsed_s, hostname):
    """The JUnit suite of a run that wrote no result: one testcase in error."""
    return {"name": "%s %s" % (prog, probe), "timestamp": timestamp(started),
            "hostname": hostname, "time_s": elapsed_s, "properties": [],
            "cases": [{"classname": "%s.%s" % (prog.replace(" ", "."), probe), "name": "run",
                       "error": {"type": "no-result", "message": message, "text": message}}]}
