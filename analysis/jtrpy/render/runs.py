# SPDX-License-Identifier: GPL-2.0-only
"""runs - the lines jtr run prints after the probe's own table: whether it is a
valid measurement, per CPU how often and how long it was interrupted (or how far
its latencies went past the threshold), hardware counters, whether it was cut
short; then the attribution, or why there is none (end_lines)."""
from ..results.figures import run_figures
from ..results.probes import is_cpu_time
from ..results.validity import of, summary
from ..units import fmt_ns


def validity_line(result):
    """The first line of a result's summary when it is not a valid measurement
    (results/validity.py), or None."""
    return summary(of(result))


def headline(result):
    """The headline lines of a result: first whether it is a valid measurement
    (when it is not), then per run a gap run's interruptions and time lost; any
    other run's percentiles and outliers (send, ping, sub), with the time lost
    where a sample is CPU time and the excess latency per second where it is a
    latency (results/probes.py)."""
    lines = []
    bad = validity_line(result)
    if bad:
        lines.append(bad)
    cpu_time = is_cpu_time(result)
    for r in result.get("runs", []):
        o = r.get("outliers", {})
        if "lost_time_pct" not in r:
            pct = r.get("percentiles_ns") or {}
            text = "%s on CPU %s: %s samples, p50 %s, p99 %s, p99.99 %s, max %s" % (
                r.get("name", "run"), r.get("cpu"), r.get("samples", 0),
                *(fmt_ns(pct[k]) if k in pct else "-" for k in ("50", "99", "99.99")),
                fmt_ns(r.get("max_ns", 0)))
            if o:
                f = run_figures(r, cpu_time)
                text += "; %d outliers above %s" % (o.get("count", 0),
                                                    fmt_ns(o.get("threshold_ns", 0)))
                if f["lost_pct"] is not None:
                    text += ", %.3f %% of the time lost" % f["lost_pct"]
                if f["excess_ns_per_s"] is not None:
                    text += ", excess latency %s per s of run" % fmt_ns(f["excess_ns_per_s"])
            lines.append(text)
            continue
        lines.append(
            "CPU %s: %d interruptions above %s in %.2f s (%.1f/s), %.3f %% of the time "
            "lost; per loop p99.99 %s, max %s" % (
                r.get("cpu"), o.get("count", 0), fmt_ns(o.get("threshold_ns", 0)),
                r.get("duration_ns", 0) / 1e9, o.get("per_s", 0.0),
                r.get("lost_time_pct", 0.0), fmt_ns(r["percentiles_ns"]["99.99"]),
                fmt_ns(r.get("max_ns", 0))))
        pmu = r.get("pmu")
        if pmu:
            per = pmu.get("per_million_loops", {})
            lines.append("CPU %s hardware counters: IPC %.2f; per million loops %.0f cache "
                         "misses, %.0f dTLB misses (a slowed CPU, not a stolen one, shows here)"
                         % (r.get("cpu"), pmu.get("ipc", 0), per.get("cache_misses", 0),
                            per.get("dtlb_load_misses", 0)))
    if any("pmu" in r and r["pmu"] is None for r in result.get("runs", [])):
        why = next((w for w in result.get("warnings", []) if w.startswith("no hardware")), None)
        if why:
            lines.append("hardware counters: none %s" % why[len("no hardware counters "):])
    if result.get("partial"):
        lines.append("partial: the run was stopped early; the numbers cover what was measured")
    return lines


def end_lines(result, lines, why, cross_check=False):
    """What jtr run prints after the probe's own table (drivers/run.py's Job):
    a blank line, the headline of @result, then the attribution's @lines, or
    why there are none (@why), and that --cross-check (@cross_check) had
    nothing to compare."""
    out = [""] + headline(result)
    if lines:
        return out + [""] + list(lines)
    out.append("causes: not attributed: %s" % why)
    if cross_check:
        out.append("cross-check: not run: there is no attribution to compare")
    return out
