# SPDX-License-Identifier: GPL-2.0-only
"""runs - what jtr run prints: the headline first (what ran, where, whether it is
a valid measurement, a table of the runs' percentiles, max and outliers, the top
causes), then the detail: the probe's own table and the attribution
(run_lines)."""
from ..results.figures import measured_ns, run_figures, supported
from ..results.probes import is_cpu_time
from ..results.validity import ATTRIBUTION, MEASUREMENT, of, summary
from ..units import fmt_ns, shown
from .text import align, cpus_text

TOP_CAUSES = 3


def _first_line(result):
    """What ran, where, for how long, and whether it is a valid measurement."""
    runs = result.get("runs", [])
    cpus = sorted({r.get("cpu") for r in runs if isinstance(r.get("cpu"), int)})
    dur = measured_ns(runs)     # send's runs one after another add up; ping's quantities not
    tool = shown(str(result.get("tool") or "run"))
    where = cpus_text(cpus)
    sides = result.get("sides") if isinstance(result.get("sides"), dict) else {}
    if len(sides) > 1:
        where = ", ".join("%s %s" % (shown(str(k)), cpus_text(v if isinstance(v, list) else []))
                          for k, v in sides.items())
    t = result.get("transport") if isinstance(result.get("transport"), dict) else {}
    if t.get("kind"):
        where += " (%s %s)" % (shown(str(t["kind"])), shown(str(t.get("address") or "")))
    what = "%s: %s, %.2f s" % (tool if tool.startswith("jtr ") else "jtr " + tool,
                                 where, dur / 1e9)
    if result.get("partial"):
        what += ", partial (stopped early: the figures cover what was measured)"
    v = of(result)
    meas, causes = summary(v, MEASUREMENT), summary(v, ATTRIBUTION)
    return "%s: %s" % (what, "; ".join(x for x in (meas or "a valid measurement", causes) if x))


def _row(r, cpu_time):
    """A run's cells: name, CPU, samples, p50, p99, p99.99, max, its outliers."""
    pct = r.get("percentiles_ns") or {}
    o = r.get("outliers") or {}
    n = r.get("samples") or 0
    cells = [shown(str(r.get("name") or "run")), str(r.get("cpu", "-")), str(n)]
    cells += [fmt_ns(pct[k]) if k in pct and supported(k, n) else "-"
              for k in ("50", "99", "99.99")]
    cells.append(fmt_ns(r.get("max_ns") or 0))
    if not o:
        return cells + [""]
    noun = "interruptions" if "lost_time_pct" in r else "outliers"
    text = "%d %s above %s" % (o.get("count", 0), noun, fmt_ns(o.get("threshold_ns", 0)))
    f = run_figures(r, cpu_time)
    if "lost_time_pct" in r:
        text += " (%.1f/s), %.3f %% of the time lost" % (o.get("per_s", 0.0),
                                                        r.get("lost_time_pct", 0.0))
    elif f["lost_pct"] is not None:
        text += ", %.3f %% of the time lost" % f["lost_pct"]
    elif f["excess_ns_per_s"] is not None:
        text += ", excess latency %s per s of run" % fmt_ns(f["excess_ns_per_s"])
    if r.get("missed"):
        # wake: periods that passed while the thread was held (measured, not skipped)
        text += "; %d periods missed" % r["missed"]
    return cells + [text]


def _cause_name(c):
    name = shown(str(c.get("name") or ""))
    text = "%s: %s" % (c.get("category"), name) if name and name != c.get("category") \
        else str(c.get("category"))
    return text + (" (%s side)" % c["side"] if c.get("side") else "")


def top_causes(result, n=TOP_CAUSES):
    """'top causes: ...' of the attribution's largest @n causes by time, or None."""
    att = result.get("attribution")
    causes = att.get("causes") if isinstance(att, dict) else None
    if not causes:
        return None
    return "top causes of the outlier time: " + "; ".join(
        "%s %.1f %%" % (_cause_name(c), 100 * (c.get("share") or 0)) for c in causes[:n])


def headline(result):
    """The headline jtr run prints first: what ran, where, for how long and
    whether it is a valid measurement (or why not: results/validity.py); a
    table of the runs (samples, p50, p99, p99.99, max, and their outliers: a
    gap run's interruptions and time lost, a latency's excess over the
    threshold per second of run, results/probes.py); the top causes when
    attributed; hardware counters where there are (where there are none, the
    probe's warning said so once)."""
    cpu_time = is_cpu_time(result)
    rows = [["run", "CPU", "samples", "p50", "p99", "p99.99", "max", "outliers"]]
    rows += [_row(r, cpu_time) for r in result.get("runs", [])]
    lines = [_first_line(result)]
    lines += ["  " + line for line in align(rows, [False] + [True] * 6 + [False])]
    causes = top_causes(result)
    if causes:
        lines.append("  " + causes)
    for r in result.get("runs", []):
        pmu = r.get("pmu")
        if pmu:
            per = pmu.get("per_million_loops", {})
            lines.append("  CPU %s hardware counters: IPC %.2f; per million loops %.0f cache "
                         "misses, %.0f dTLB misses (a slowed CPU, not a stolen one, shows here)"
                         % (r.get("cpu"), pmu.get("ipc", 0), per.get("cache_misses", 0),
                            per.get("dtlb_load_misses", 0)))
    return lines


def run_lines(result, detail, lines, why, cross_check=False):
    """What jtr run prints (drivers/run.py's Job): the headline of @result, with
    why there are no causes (@why) when there are none; then the detail: the
    probe's own table (@detail, its text), the attribution's @lines, and that
    --cross-check (@cross_check) had nothing to compare."""
    out = headline(result)
    if not lines:
        out.append("  causes: not attributed: %s" % why)
    if detail.strip():
        out += [""] + detail.rstrip("\n").split("\n")
    if lines:
        out += [""] + list(lines)
    elif cross_check:
        out.append("cross-check: not run: there is no attribution to compare")
    return out
