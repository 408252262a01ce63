# SPDX-License-Identifier: GPL-2.0-only
"""prom - results as a Prometheus textfile for node_exporter's textfile collector:
the headline numbers per run and the largest causes per result
(docs/interop.md has the names and labels)."""
import decimal
import math
import re

from ..results.figures import run_figures
from ..results.probes import is_cpu_time
from ..results.quantity import run_quantity
from ..results.result import PERCENTILE_KEYS
from ..results.validity import MEASUREMENT, is_valid
from ..system.schema import utc_time
from ..trace import causes as C
from ..values import format_cpulist

DEFAULT_TOP = 5

# name, type, help
FAMILIES = [
    ("jtr_loop_seconds", "gauge",
     "Per-loop time at a quantile (jtr's percentile: a histogram bucket's highest "
     "value, within max_rel_error above the true value)."),
    ("jtr_loop_max_seconds", "gauge", "Longest loop of the run (exact)."),
    ("jtr_time_lost_ratio", "gauge",
     "Share of the run's time lost to interruptions (lost_ns / duration_ns; x 100 is "
     "jtr's lost %)."),
    ("jtr_excess_latency_seconds_per_second", "gauge",
     "Latency probes (wake, ping, sub): how far the outliers went past the threshold, "
     "added up, per second of the run (their samples overlap: no share of time)."),
    ("jtr_run_valid", "gauge",
     "1 when the run is a valid measurement (it kept its schedule, its threshold came "
     "from a quiet warm-up, it lost no messages), else 0."),
    ("jtr_outliers_per_second", "gauge",
     "Interruptions above the run's threshold per second of the run."),
    ("jtr_outlier_threshold_seconds", "gauge",
     "Loops longer than this count as interruptions."),
    ("jtr_run_duration_seconds", "gauge", "How long the run measured."),
    ("jtr_run_end_timestamp_seconds", "gauge",
     "When the result ended (seconds since the epoch): alert when it gets old."),
    ("jtr_run_partial", "gauge", "1 when the run was stopped early, else 0."),
    ("jtr_cause_share_ratio", "gauge",
     "A cause's share of the attributed outlier time (largest causes; pids left out "
     "of the cause label, equal names added)."),
    ("jtr_cause_seconds_per_second", "gauge",
     "Time a cause took from the measured CPUs per second of the run."),
]


def _escape(v):
    return str(v).replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n")


def labels_text(d):
    """{k="v",...} of dict @d, values escaped; '' when it is empty."""
    if not d:
        return ""
    return "{" + ",".join('%s="%s"' % (k, _escape(v)) for k, v in d.items()) + "}"


def _num(v):
    if isinstance(v, int):
        return str(v)
    v = float(v)
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return "NaN" if math.isnan(v) else repr(v)


def exposition(families):
    """@families [(name, type, help, [(sample name, labels, value)])] in the text
    format (version 0.0.4, what node_exporter's textfile collector and Prometheus
    read), a str; a family without samples has its HELP and TYPE alone. Labels are
    a dict, or a str labels_text made (a label set many samples share, rendered once).
    The one writer of export --prom and jtr watch's metrics."""
    lines = []
    for name, typ, text, samples in families:
        lines.append("# HELP %s %s" % (name, text.replace("\\", "\\\\").replace("\n", "\\n")))
        lines.append("# TYPE %s %s" % (name, typ))
        lines.extend("%s%s %s" % (sn, lab if isinstance(lab, str) else labels_text(lab),
                                  _num(v)) for sn, lab, v in samples)
    return "\n".join(lines) + "\n"


def cause_label(name):
    """A cause name without its pid part: 'kworker/1:1 (pid 27369, prio 120)' ->
    'kworker/1:1' (a pid in a label makes a new series per process)."""
    return re.sub(r"\s*\(pid \d+[^)]*\)", "", name or "").strip()


def causes_of(result, top):
    """[(category, cause, share, seconds per second)] of the largest causes, equal
    (category, cause) added, largest first."""
    a = result.get("attribution")
    if not isinstance(a, dict) or not top:
        return []
    o = a.get("outliers") or {}
    dur = o.get("duration_ns")
    if not dur:
        dur = sum(r.get("duration_ns") or 0 for r in result.get("runs", []))
    acc = {}
    for c in a.get("causes") or []:
        key = C.cause_key(c.get("category") or "?", cause_label(c.get("name")))
        s = acc.setdefault(key, [0.0, 0])
        s[0] += c.get("share") or 0.0
        s[1] += c.get("total_ns") or 0
    out = sorted(acc.items(), key=lambda kv: (-kv[1][1], kv[0]))[:top]
    return [(k[0], k[1], v[0], v[1] / dur if dur else 0.0) for k, v in out]


def prom_samples(result, top):
    """{family: [(labels, value)]} of one result."""
    host = result.get("host") or {}
    base = {"host": host.get("hostname") or "", "tool": result.get("tool") or "",
            "profile": host.get("tuning_profile") or "none"}
    out = {name: [] for name, _, _ in FAMILIES}
    end = utc_time(result.get("ended_at"))
    runs = [r for r in result.get("runs", []) if isinstance(r, dict)]
    cpus = [r.get("cpu") for r in runs]
    valid = is_valid(result, MEASUREMENT)
    # runs that share a CPU (null repetitions, clock sources) are told apart by name
    by_name = len(set(cpus)) < len(cpus)
    for run in runs:
        cpu = run.get("cpu")
        lab = dict(base, cpu="" if cpu is None else str(cpu),
                   quantity=run_quantity(result.get("tool"), run))
        if by_name:
            lab["run"] = run.get("name") or ""
        f = run_figures(run, is_cpu_time(result))
        for k in PERCENTILE_KEYS:
            v = f["percentiles_ns"].get(k)
            if v is not None:
                out["jtr_loop_seconds"].append(
                    (dict(lab, quantile=_quantile(k)), v / 1e9))
        if f["max_ns"] is not None:
            out["jtr_loop_max_seconds"].append((lab, f["max_ns"] / 1e9))
        if f["lost_pct"] is not None:
            out["jtr_time_lost_ratio"].append((lab, f["lost_pct"] / 100.0))
        if f["excess_ns_per_s"] is not None:
            out["jtr_excess_latency_seconds_per_second"].append(
                (lab, f["excess_ns_per_s"] / 1e9))
        if f["outliers_per_s"] is not None:
            out["jtr_outliers_per_second"].append((lab, f["outliers_per_s"]))
        out["jtr_run_valid"].append((lab, 1 if valid else 0))
        o = run.get("outliers")
        if isinstance(o, dict) and o.get("threshold_ns") is not None:
            out["jtr_outlier_threshold_seconds"].append((lab, o["threshold_ns"] / 1e9))
        if f["duration_ns"]:
            out["jtr_run_duration_seconds"].append((lab, f["duration_ns"] / 1e9))
        if end:
            out["jtr_run_end_timestamp_seconds"].append((lab, end.timestamp()))
        out["jtr_run_partial"].append((lab, 1 if run.get("partial") or result.get("partial")
                                       else 0))
    a = result.get("attribution") or {}
    acpus = (a.get("outliers") or {}).get("cpus") or [c for c in cpus if c is not None]
    clab = dict(base, cpu=format_cpulist(acpus))
    for cat, cause, share, per_s in causes_of(result, top):
        lab = dict(clab, category=cat, cause=cause)
        out["jtr_cause_share_ratio"].append((lab, share))
        out["jtr_cause_seconds_per_second"].append((lab, per_s))
    return out


def _quantile(k):
    """'99.99' -> '0.9999' (Prometheus quantiles are fractions)."""
    return format((decimal.Decimal(k) / 100).normalize(), "f")


def prom_text(results, labels, top):
    """The textfile of loaded @results; (text, notes) where notes say which results
    were left out because a newer one has the same labels."""
    order = sorted(range(len(results)), key=lambda i: (
        utc_time(results[i].get("started_at")) or utc_time("1970-01-01T00:00:00Z")),
        reverse=True)
    families = {name: [] for name, _, _ in FAMILIES}
    seen, notes = {}, []
    for i in order:
        samples = prom_samples(results[i], top)
        keys = {(name, tuple(sorted(lab.items()))) for name, ss in samples.items()
                for lab, _ in ss}
        clash = next((seen[k] for k in keys if k in seen), None)
        if clash is not None:
            notes.append("%s: left out: %s is newer and has the same labels (host, cpu, "
                         "tool, profile)" % (labels[i], labels[clash]))
            continue
        for k in keys:
            seen[k] = i
        for name, ss in samples.items():
            families[name].extend(ss)
    return exposition((name, typ, text, [(name, lab, v) for lab, v in families[name]])
                      for name, typ, text in FAMILIES if families[name]), notes
