# SPDX-License-Identifier: GPL-2.0-only
"""gates - a result judged against limits, for CI and fleets (docs/fleet.md).

Two gates, each judged per measured CPU over the whole run, on the result's
quantity (results/quantity.py: gap's loop, wake's wake-up latency, ping's round
trip from the intended send time, sub's message latency, send's send call):

  max-latency  the CPU's largest sample (its runs' max_ns) against a duration
  max-lost     the time the CPU lost to outliers (its runs' outliers.lost_ns
               over their duration_ns, in %: jtr ls's "lost" and
               results/figures.py's lost_pct) against a percentage

A value passes when it is at most the limit; a CPU that measured nothing (no
sample) passes no gate. check() makes one case per gate per CPU; section()
makes result.json's "gates" section of them, for jtr run and for jtr gap and
jtr wake alone (the C probes judge nothing: the front end does, after them).
Which causes a failed case names is the driver's (drivers/gates.py: judge),
the words render/gates.py's and the JUnit report formats/junit.py's.
"""
from .figures import run_lost
from .quantity import select

GATES = ("max-latency", "max-lost")
UNITS = {"max-latency": "ns", "max-lost": "%"}


def cpu_runs(runs):
    """[(cpu, [runs])] of @runs by their CPU (None: not pinned), in order of
    first appearance."""
    out = {}
    for r in runs:
        cpu = r.get("cpu")
        out.setdefault(cpu if isinstance(cpu, int) and cpu >= 0 else None, []).append(r)
    return list(out.items())


def lost_pct(runs):
    """The time @runs lost to outliers, % of their duration; None when one has no
    time-lost figure."""
    lost = [run_lost(r) for r in runs]
    if not runs or not all(lost) or not sum(x[2] for x in lost):
        return None
    return round(100.0 * sum(x[0] for x in lost) / sum(x[2] for x in lost), 6)


def check(result, max_latency_ns=None, max_lost_pct=None):
    """The cases of @result against the limits given (None: that gate is not
    asked for): one per gate per CPU of its quantity's runs, the latency
    gate's first. A case: gate, cpu, value (ns, or % of the time; None when
    nothing was measured or the result has no such figure: it fails), limit,
    unit, passed, duration_ns."""
    q = select(result)
    cases = []
    for gate, limit in zip(GATES, (max_latency_ns, max_lost_pct)):
        if limit is None:
            continue
        for cpu, runs in cpu_runs(q.runs):
            if not sum(r.get("samples") or 0 for r in runs):
                value = None
            elif gate == "max-latency":
                maxes = [r.get("max_ns") for r in runs]
                value = max(maxes) if maxes and all(isinstance(m, int) for m in maxes) \
                    else None
            else:
                value = lost_pct(runs)
            cases.append({"gate": gate, "cpu": cpu, "value": value, "limit": limit,
                          "unit": UNITS[gate],
                          "passed": value is not None and value <= limit,
                          "duration_ns": max((r.get("duration_ns") or 0 for r in runs),
                                             default=0)})
    return cases


def passed(cases):
    """True when every case passed (and when there are none)."""
    return all(c["passed"] for c in cases)


def section(cases, max_latency_ns=None, max_lost_pct=None, quantity=None):
    """result.json's "gates" section of judged @cases (with what the driver
    added to failed ones: beyond, causes, causes_missing, note)."""
    return {"limits": {"max_latency_ns": max_latency_ns, "max_lost_pct": max_lost_pct},
            "quantity": quantity, "passed": passed(cases), "cases": cases}
