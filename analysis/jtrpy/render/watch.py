# SPDX-License-Identifier: GPL-2.0-only
"""watch - jtr watch for people: the first line, the progress line, a dump's
line, the table of interruptions by CPU and cause and the last line at the end
(what drivers/watch.py hands over)."""
from ..trace.causes import IPI
from ..units import fmt_ns
from .text import align, cpus_text

FAULT = "page fault"


def totals(state):
    """{cpu: (interruptions, ns)} of a state line: page faults are not
    interruptions (kernel events without a duration: faults())."""
    out = {}
    for c in state.get("cpus", ()):
        ks = [k for k in c["categories"] if k["category"] != FAULT]
        out[c["cpu"]] = (sum(k["count"] for k in ks), sum(k["ns"] for k in ks))
    return out


def faults(state):
    """The page faults seen on the watched CPUs (each name's events)."""
    return sum(n[3] for c in state.get("cpus", ()) for k in c["categories"]
               if k["category"] == FAULT for n in k["names"])


def progress_line(state, elapsed_s):
    """'watch 1m05s: interruptions CPU 1 312, 1.20 ms; page faults 12; longest
    410.2 us; 1000 events, 0 dropped'."""
    m, s = divmod(int(elapsed_s), 60)
    parts = ["CPU %d %d, %s" % (cpu, n, fmt_ns(ns)) for cpu, (n, ns) in totals(state).items()]
    return "watch %dm%02ds: interruptions %s; page faults %d; longest %s; %d events, " \
        "%d dropped" % (m, s, "; ".join(parts) or "none", faults(state),
                        fmt_ns(state.get("longest_ns", 0)), state.get("records", 0),
                        state.get("dropped", 0))


def app_text(apps):
    """Who the application is, for the first line: '--app' values or the rule."""
    return ("the application %s" % ", ".join(apps) if apps else
            "the application (each CPU's longest-running comm)")


def watching_line(o):
    """The first line, once the tracer runs: what jtr watch's settings @o (the
    CPUs as the job completed them) watch and where the metrics and dumps go."""
    return "watching %s for %s: %s%s%s; Ctrl-C to stop" % (
        cpus_text(o.cpus), app_text(o.app),
        "metrics on http://%s:%d/metrics" % o.listen if o.listen else "no --listen",
        ", textfile %s" % o.textfile if o.textfile else "",
        ", dumps above %s" % fmt_ns(o.dump_above) if o.dump_above is not None else "")


def dump_line(d):
    """What a flight-recorder dump holds and how to explain it."""
    t = d["trigger"]
    return ("dump: %s (%s %s, %s on CPU %d; %d events, %d interruptions): jtr attribute %s"
            % (d["dump"], t["category"], t["name"], fmt_ns(t["length_ns"]), t["cpu"],
               d["records"], d["outliers"], d["dump"]))


def labelled(row, category):
    """A state line's name row as a cause: its name, and a task's container
    after it where it has one ('stress [docker 0123456789ab]'), an IPI's
    sender ('call_function_single from java')."""
    if len(row) < 5 or not row[4]:
        return row[0]
    return "%s from %s" % (row[0], row[4]) if category == IPI else "%s [%s]" % (row[0], row[4])


def table(state, duration_s):
    """Lines: per CPU, each cause with its interruptions, time, rate and longest
    bucket, largest time first."""
    rows = [("cpu", "category", "name", "count", "per s", "time", "share")]
    for c in state.get("cpus", ()):
        spent = sum(k["ns"] for k in c["categories"]) or 1
        cells = []
        for k in c["categories"]:
            for row in k["names"]:
                name, n, ns = row[:3]
                if n:
                    cells.append((ns, n, k["category"], labelled(row, k["category"])))
        for ns, n, cat, name in sorted(cells, key=lambda x: (-x[0], -x[1])):
            rows.append((str(c["cpu"]), cat, name, str(n),
                         "%.1f" % (n / duration_s) if duration_s > 0 else "-",
                         fmt_ns(ns) if ns else "-", "%.1f %%" % (100.0 * ns / spent)))
    lines = (["no interruption seen"] if len(rows) == 1 else
             align(rows, (True, False, False, True, True, True, True)))
    return lines + footer(state)


def footer(state):
    """Per CPU: the application seen there and its time, and the page faults
    (kernel events without a duration, not interruptions)."""
    out = []
    for c in state.get("cpus", ()):
        faults = [(n[0], n[3]) for k in c["categories"] if k["category"] == FAULT
                  for n in k["names"] if n[3]]
        app = ("application %s ran %s" % (c["app"], fmt_ns(c.get("app_ns", 0)))
               if c.get("app") else "the application was not seen")
        out.append("CPU %d: %s%s" % (c["cpu"], app, "; page faults (no duration): " + ", ".join(
            "%d %s" % (n, name) for name, n in faults) if faults else ""))
    return out


def end_lines(out):
    """The end of a watch (drivers/watch.py Outcome @out): the table of its last
    state, then how it ended and where its results are."""
    if out.unsaved:
        return table(out.state, out.seconds) + ["watch: %s; watch.json not written (%s): "
                                                "the counts above are all that is kept" % (
                                                    "stopped" if out.stopped else "done",
                                                    out.unsaved)]
    return table(out.state, out.seconds) + ["watch: %s; results: %s" % (
        "stopped" if out.stopped else "done", out.folder)]
