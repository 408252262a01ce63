"""export - jtr export: results as HdrHistogram interval logs (--hlog) and as a
Prometheus textfile for node_exporter's textfile collector (--prom).

docs/interop.md says what maps to what and the limits.
"""
import decimal
import os
import re
import sys

from . import hdrlog
from .errors import UsageError
from .figures import run_figures, utc_time
from .result import PERCENTILE_KEYS, load_result, write_atomic
from .cpus import pack_cpulist

DEFAULT_TOP = 5

USAGE = """\
usage: jtr export [--hlog FILE] [--prom FILE [--top N]] RESULT...

Write results in other tools' formats. RESULT is a results folder or its
result.json; give --hlog, --prom or both. FILE '-' is standard output.

  --hlog FILE  an HdrHistogram interval log: one line per run (tagged with the
               run's name, cpu1, ...), its time span and its histogram in
               HdrHistogram's compressed encoding, values in ns. Read by
               HistogramLogAnalyzer and HdrHistogram's log readers (Java, Python
               hdrhistogram, ...). Every jtr bucket's count is placed at the
               bucket's highest value (clamped to the run's min and max), so the
               percentiles read back are jtr's
  --prom FILE  the headline numbers in Prometheus text format for node_exporter's
               textfile collector (per run: percentiles as jtr_loop_seconds with a
               quantile label, max, % time lost, outliers/s; per result: the largest
               causes' share and time per second), labels host, cpu, tool, profile
               (and category, cause). Written to FILE.tmp-PID and renamed, as the
               collector needs. Of results with the same labels the newest is kept
  --top N      causes per result in --prom (default {top}; 0: none)

examples:
  jtr export --hlog cpu1.hlog results/latest
  jtr export --hlog before.hlog --prom /var/lib/node_exporter/textfile/jtr.prom results/latest
  jtr export --prom - results/latest results/20261122-041305-vm-gap
"""


def parse_args(args):
    opts = {"hlog": None, "prom": None, "top": DEFAULT_TOP, "results": []}
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--hlog", "--prom", "--top"):
            if i + 1 >= len(args):
                raise UsageError("%s needs a value; see 'jtr export --help'" % a)
            v = args[i + 1]
            if a == "--top":
                if not re.fullmatch(r"\d+", v) or int(v) > 1000:
                    raise UsageError("--top %s: use a whole number from 0 to 1000" % v)
                opts["top"] = int(v)
            else:
                opts[a[2:]] = v
            i += 2
            continue
        if a.startswith("-") and a != "-":
            raise UsageError("unknown option '%s'; see 'jtr export --help'" % a)
        opts["results"].append(a)
        i += 1
    if not opts["hlog"] and not opts["prom"]:
        raise UsageError("say what to write: --hlog FILE, --prom FILE or both; see "
                         "'jtr export --help'")
    if not opts["results"]:
        raise UsageError("give at least one result (a results folder or its result.json)")
    if opts["hlog"] == "-" and opts["prom"] == "-":
        raise UsageError("--hlog and --prom cannot both go to standard output")
    return opts


def check_writable(path, opt):
    """UsageError unless @path can be created or replaced (its folder is writable)."""
    if path == "-":
        return
    if os.path.isdir(path):
        raise UsageError("%s %s: is a folder; give a file name" % (opt, path))
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise UsageError("%s %s: no such folder %s" % (opt, path, d))
    if not os.access(d, os.W_OK | os.X_OK):
        raise UsageError("%s %s: cannot write in %s" % (opt, path, d))


def write_out(path, text, opt):
    if path == "-":
        sys.stdout.write(text)
        return
    try:
        write_atomic(path, text)
    except OSError as e:
        raise UsageError("%s %s: cannot write: %s" % (opt, path, e.strerror))


# --- hlog ------------------------------------------------------------------

def hlog(results, labels):
    for r, label in zip(results, labels):
        runs = r.get("runs")
        if not runs or not all(isinstance(x, dict) and isinstance(x.get("histogram"), dict)
                               for x in runs):
            raise UsageError("%s: the result has no runs with histograms; export results "
                             "of jtr gap, jtr null or jtr clock" % label)
        for x in runs:
            bits = x["histogram"].get("sub_bucket_bits", 7)
            try:
                hdrlog.digits_for_bits(bits)
            except ValueError as e:
                raise UsageError("%s: %s" % (label, e))
    return hdrlog.hlog_text(results, labels)


# --- Prometheus textfile ---------------------------------------------------

# name, type, help
FAMILIES = [
    ("jtr_loop_seconds", "gauge",
     "Per-loop time at a quantile (jtr's percentile: a histogram bucket's highest "
     "value, within max_rel_error above the true value)."),
    ("jtr_loop_max_seconds", "gauge", "Longest loop of the run (exact)."),
    ("jtr_time_lost_ratio", "gauge",
     "Share of the run's time lost to interruptions (lost_ns / duration_ns; x 100 is "
     "jtr's lost %)."),
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


def _labels(d):
    return "{" + ",".join('%s="%s"' % (k, _escape(v)) for k, v in d.items()) + "}"


def _num(v):
    if isinstance(v, int):
        return str(v)
    return repr(float(v))


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
        key = (c.get("category") or "?", cause_label(c.get("name")))
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
    # runs that share a CPU (null repetitions, clock sources) are told apart by name
    by_name = len(set(cpus)) < len(cpus)
    for run in runs:
        cpu = run.get("cpu")
        lab = dict(base, cpu="" if cpu is None else str(cpu))
        if by_name:
            lab["run"] = run.get("name") or ""
        f = run_figures(run)
        for k in PERCENTILE_KEYS:
            v = f["percentiles_ns"].get(k)
            if v is not None:
                out["jtr_loop_seconds"].append(
                    (dict(lab, quantile=_quantile(k)), v / 1e9))
        if f["max_ns"] is not None:
            out["jtr_loop_max_seconds"].append((lab, f["max_ns"] / 1e9))
        if f["lost_pct"] is not None:
            out["jtr_time_lost_ratio"].append((lab, f["lost_pct"] / 100.0))
            out["jtr_outliers_per_second"].append((lab, f["outliers_per_s"]))
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
    clab = dict(base, cpu=pack_cpulist(acpus))
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
    lines = []
    for name, typ, text in FAMILIES:
        if not families[name]:
            continue
        lines.append("# HELP %s %s" % (name, text))
        lines.append("# TYPE %s %s" % (name, typ))
        for lab, v in families[name]:
            lines.append("%s%s %s" % (name, _labels(lab), _num(v)))
    return "\n".join(lines) + "\n", notes


# --- the command -----------------------------------------------------------

def main(args):
    if any(a in ("-h", "--help") for a in args):
        sys.stdout.write(USAGE.format(top=DEFAULT_TOP))
        return 0
    opts = parse_args(args)
    for opt in ("hlog", "prom"):
        if opts[opt]:
            check_writable(opts[opt], "--" + opt)
    labels = opts["results"]
    results = [load_result(p) for p in labels]
    if opts["hlog"]:
        write_out(opts["hlog"], hlog(results, labels), "--hlog")
    if opts["prom"]:
        text, notes = prom_text(results, labels, opts["top"])
        for n in notes:
            print("jtr export: %s" % n, file=sys.stderr)
        write_out(opts["prom"], text, "--prom")
    return 0
