"""importer - jtr import: rt-tests' oslat and cyclictest --json results as
jtr-result/1 folders, so they can be listed, compared and exported next to jtr's.

What the tools write (rt-tests 2.x, "file_version": 1): per thread a histogram
{"us": count}, min, avg and max in us, the CPU; oslat also its TSC MHz and the
duration. Values become ns as the tool printed them (k us -> k * 1000 ns):
oslat counts a loop of t us (truncated) as t + 1, cyclictest a latency of t us
as t, so the true value lies within 1 us below (oslat) or above (cyclictest)
that. Samples past the end of the tool's histogram (oslat's last bucket holds
all from bucket_size us up; cyclictest keeps only how many there were, as cycles
less the histogram's counts) are placed at the run's max: their count and the
max are exact, percentiles that fall among them are upper bounds, and the
result's warnings say from which percentile on. docs/interop.md has the table.
"""
import datetime
import email.utils
import json
import os
import re
import shlex
import shutil
import sys

from . import __version__
from . import hdrlog, hist
from .errors import UsageError
from .result import FORMAT, PERCENTILE_KEYS, dumps_result, write_atomic

BITS = 7  # jtr's default precision (1 %)

USAGE = """\
usage: jtr import [-o DIR] FILE...
       jtr import --hlog [--unit ns|us] [-o DIR] FILE...

Turn the --json output of rt-tests' oslat or cyclictest into a jtr results folder
(tool "oslat" or "cyclictest", one run per measured thread), so it shows in
jtr ls and jtr compare and can be exported like jtr's own results. The kind of
file is recognised from its contents. Each run gets a jtr histogram built from
the tool's (values in us become ns), the tool's min, avg and max, and jtr's
percentiles of it. Host facts come from the file (hostname, kernel, machine); when
the file was written on this machine, the others are read here now, and the
result's "import" section says which are which. The original file is kept in the
folder. docs/interop.md says what maps to what and the limits.

With --hlog (or when FILE starts like one), FILE is an HdrHistogram interval log
(.hlog: 'jtr export --hlog', HdrHistogram's HistogramLogWriter in Java, C, Python,
Go, Rust, ...): tool "hlog", one run per tag (untagged: "hlog"), the intervals of
a tag added together, every bucket's count at the bucket's highest value on jtr's
grid of the log's precision (2 significant digits: jtr's default 1 %). Percentiles
read back equal the log's; min, max, mean and stddev are the buckets' (within the
log's relative error). The log keeps no host facts, calibration or outliers.

  -o DIR   the results folder (default results/DATE-HOST-TOOL, DATE from the
           file's start time; results/latest is left pointing at the last run
           measured here). With several FILEs, give no -o
  --hlog   FILE is an HdrHistogram interval log
  --unit U the log's values are in ns (default) or us

examples:
  oslat --cpu-list 1 -D 60 --json=oslat.json && jtr import oslat.json
  cyclictest -m -q -D 60 -t 1 -a 1 -h 1000 --json=cyc.json && jtr import -o cyc cyc.json
  jtr compare cyc results/latest
  jtr export --hlog run.hlog results/latest && jtr import --hlog -o back run.hlog
  jtr import --hlog --unit us -o app service-latency.hlog   # a Java service's log, in us
"""


# --- reading the file ------------------------------------------------------

def _load(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise UsageError("%s: no such file" % path)
    except IsADirectoryError:
        raise UsageError("%s: is a folder; give the file oslat or cyclictest wrote with "
                         "--json=FILE" % path)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise UsageError("%s: not a JSON file (%s); jtr import reads the --json output of "
                         "oslat and cyclictest" % (path, str(e).split(":")[0]))
    except OSError as e:
        raise UsageError("%s: cannot read: %s" % (path, e.strerror))


def _cmdline(doc):
    # rt-tests write the key with a colon: "cmdline:"
    c = doc.get("cmdline:", doc.get("cmdline"))
    return c if isinstance(c, str) else ""


def detect(doc):
    """'oslat', 'cyclictest' or None: the tool that wrote @doc."""
    if not isinstance(doc, dict) or not isinstance(doc.get("thread"), dict):
        return None
    argv = _split(_cmdline(doc))
    prog = os.path.basename(argv[0]) if argv else ""
    if prog in ("oslat", "cyclictest"):
        return prog
    threads = [t for t in doc["thread"].values() if isinstance(t, dict)]
    if threads and all("cycles" in t for t in threads):
        return "cyclictest"
    if threads and all("freq" in t and "duration" in t for t in threads):
        return "oslat"
    return None


def _split(cmdline):
    try:
        return shlex.split(cmdline)
    except ValueError:
        return cmdline.split()


def option(argv, short, long_):
    """The value of -X V, -XV, --long V or --long=V in @argv (the last given), or None."""
    val = None
    for i, a in enumerate(argv):
        if long_ and a.startswith("--" + long_ + "="):
            val = a.split("=", 1)[1]
        elif (a == "--" + long_ if long_ else False) or (short and a == "-" + short):
            val = argv[i + 1] if i + 1 < len(argv) else None
        elif short and a.startswith("-" + short) and not a.startswith("--") and len(a) > 2:
            val = a[2:]
    return val


def flag(argv, short, long_):
    return any(a == "-" + short or a == "--" + long_ for a in argv)


def _int(v):
    try:
        return int(str(v).strip().lstrip("="))
    except (TypeError, ValueError):
        return None


def _when(s):
    """rt-tests' start_time / end_time ('Sun, 22 Nov 2026 07:42:17 +0000') as UTC."""
    try:
        t = email.utils.parsedate_to_datetime(s)
    except (TypeError, ValueError, IndexError):
        return None
    if t is None:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=datetime.timezone.utc)
    return t.astimezone(datetime.timezone.utc)


def _iso(t):
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)


# --- host facts ------------------------------------------------------------

def _read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def this_machine():
    """The host facts jtr records that can be read without measuring, from this
    machine now (tsc_hz, tsc_step_ns and the hypervisor's name need the probes)."""
    info = _read("/proc/cpuinfo") or ""
    model, flags = "", set()
    for line in info.splitlines():
        k, _, v = line.partition(":")
        if k.strip() == "model name" and not model:
            model = v.strip()
        elif k.strip() == "flags" and not flags:
            flags = set(v.split())
    runtime = _int(_read("/proc/sys/kernel/sched_rt_runtime_us"))
    period = _int(_read("/proc/sys/kernel/sched_rt_period_us"))
    rt = {"enabled": None if runtime is None else runtime != -1}
    if runtime is not None:
        rt["runtime_us"] = runtime
    if period:
        rt["period_us"] = period
    state = os.environ.get("JTR_STATE_DIR", "/run/jtr")
    profile = (_read(os.path.join(state, "active-profile")) or "").split("\n")[0] or None
    return {
        "cmdline": _read("/proc/cmdline") or "",
        "cpu_model": model,
        "online_cpus": _read("/sys/devices/system/cpu/online") or "",
        "isolated_cpus": _read("/sys/devices/system/cpu/isolated") or "",
        "nohz_full_cpus": (_read("/sys/devices/system/cpu/nohz_full") or "").replace(
            "(null)", "") if os.path.exists("/sys/devices/system/cpu/nohz_full") else None,
        "clocksource": _read(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource"),
        "tsc_invariant": "constant_tsc" in flags and "nonstop_tsc" in flags,
        "virtualised": "hypervisor" in flags,
        "rt_throttling": rt,
        "tuning_profile": profile,
    }


UNKNOWN_HOST = {"cmdline": "", "cpu_model": "", "online_cpus": "", "isolated_cpus": "",
                "nohz_full_cpus": None, "clocksource": None, "tsc_invariant": False,
                "virtualised": False, "rt_throttling": {"enabled": None},
                "tuning_profile": None}


def host_facts(doc, tool):
    """(host, {"file": [...], "this machine": [...], "unknown": [...]})."""
    si = doc.get("sysinfo") if isinstance(doc.get("sysinfo"), dict) else {}
    host = {"hostname": si.get("nodename") or "", "kernel": si.get("release") or "",
            "kernel_version": si.get("version") or "", "machine": si.get("machine") or ""}
    src = {"file": [k for k in host if host[k]], "this machine": [], "unknown": []}
    src["unknown"] += [k for k in host if not host[k]]
    me = os.uname()
    same = bool(si) and si.get("nodename") == me.nodename and si.get("release") == me.release
    rest = this_machine() if same else dict(UNKNOWN_HOST)
    host.update(rest)
    src["this machine" if same else "unknown"] += list(rest)
    freq = [t.get("freq") for t in doc["thread"].values() if isinstance(t, dict)]
    if tool == "oslat" and freq and all(isinstance(f, (int, float)) and f > 0 for f in freq):
        host["tsc_hz"] = float(freq[0]) * 1e6
        src["file"].append("tsc_hz")
    else:
        host["tsc_hz"] = None
        src["unknown"].append("tsc_hz")
    host.update({"tsc_step_ns": None, "hypervisor": None})
    src["unknown"] += ["tsc_step_ns", "hypervisor"]
    return host, src


# --- runs ------------------------------------------------------------------

def histogram_of(values):
    """jtr's histogram of [(value_ns, count)]: {"unit", "sub_bucket_bits", ...}."""
    acc = {}
    for v, c in values:
        if c:
            i = hist.bucket_index(BITS, v)
            acc[i] = acc.get(i, 0) + c
    buckets = [list(hist.bucket_lo_hi(BITS, i)) + [acc[i]] for i in sorted(acc)]
    return {"unit": "ns", "sub_bucket_bits": BITS, "max_rel_error": 2.0 ** -BITS,
            "total": sum(acc.values()), "buckets": buckets}


def _stddev(values, mean):
    n = sum(c for _, c in values)
    if n < 2:
        return 0.0
    return (sum(c * (v - mean) ** 2 for v, c in values) / n) ** 0.5


def _counts(t, label):
    h = t.get("histogram")
    if not isinstance(h, dict):
        raise UsageError("%s: a thread has no histogram; run the tool with its histogram "
                         "on (cyclictest: -h US)" % label)
    out = {}
    for k, c in h.items():
        us, n = _int(k), _int(c)
        if us is None or n is None or us < 0 or n < 0:
            raise UsageError("%s: histogram entry %r: %r is not 'us': count" % (label, k, c))
        out[us] = out.get(us, 0) + n
    return out


def make_run(tool, t, key, argv, label, names, unit_ns):
    """One jtr run of thread @t (its key in "thread"), and a warning or None; the
    file's values are in units of @unit_ns (1000: us; 1: cyclictest -N)."""
    counts = _counts(t, label)
    for f in ("min", "max", "avg"):
        if not isinstance(t.get(f), (int, float)):
            raise UsageError("%s: thread %s has no %s" % (label, key, f))
    min_ns, max_ns = int(t["min"]) * unit_ns, int(t["max"]) * unit_ns
    cpu = t.get("cpu") if isinstance(t.get("cpu"), int) and t.get("cpu") >= 0 else None
    over, limit_us = 0, None
    if tool == "oslat":
        last = max(counts) if counts else 0
        # the last bucket (bias + size us) holds every loop from there up
        if counts and t["max"] > last:
            over, limit_us = counts.pop(last), last
        n = sum(counts.values()) + over
    else:
        n = _int(t.get("cycles"))
        if n is None:
            raise UsageError("%s: thread %s has no cycles count" % (label, key))
        over = n - sum(counts.values())
        if over < 0:
            raise UsageError("%s: thread %s: the histogram holds more than its %d cycles"
                             % (label, key, n))
        limit_us = _int(option(argv, "h", "histogram")) or _int(option(argv, "H", "histofall"))
        if limit_us is None and over:
            limit_us = max(counts) + 1 if counts else 0
    values = [(us * unit_ns, c) for us, c in sorted(counts.items())]
    if over:
        values.append((max_ns, over))
    h = histogram_of(values)
    pct = {k: hist.value_at_percentile(h["buckets"], float(k), min_ns, max_ns)
           for k in PERCENTILE_KEYS}
    mean = float(t["avg"]) * unit_ns
    name = "cpu%d" % cpu if cpu is not None and names.count(cpu) == 1 else "thread %s" % key
    run = {"name": name, "cpu": cpu, "partial": False}
    if tool == "oslat" and isinstance(t.get("duration"), (int, float)):
        run["duration_ns"] = int(round(t["duration"] * 1e9))
    run.update({"samples": n, "min_ns": min_ns, "max_ns": max_ns,
                "mean_ns": round(mean, 3), "stddev_ns": round(_stddev(values, mean), 3),
                "percentiles_ns": pct, "histogram": h})
    warning = None
    if over:
        first = 100.0 * (n - over) / n
        unit = "us" if unit_ns == 1000 else "ns"
        warning = ("%s: %d of %d samples were beyond %s's histogram (%d %s and up); it "
                   "keeps only their count and the max, so they are placed at the max "
                   "(%d %s): percentiles above p%.6g are upper bounds"
                   % (name, over, n, tool, limit_us, unit, t["max"], unit, first))
    run["_overflow"] = {"count": over, "from_ns": (limit_us or 0) * unit_ns,
                        "placed_at_ns": max_ns} if over else None
    return run, warning


def to_result(doc, tool, path):
    """The jtr-result/1 dict of a loaded oslat or cyclictest --json file."""
    label = path
    argv = _split(_cmdline(doc))
    threads = doc["thread"]
    if not threads:
        raise UsageError("%s: the file has no threads (the tool measured nothing)" % label)
    keys = sorted(threads, key=lambda k: (_int(k) is None, _int(k) or 0, k))
    cpus = [threads[k].get("cpu") for k in keys if isinstance(threads[k], dict)]
    runs, warnings = [], []
    unit_ns = 1 if tool == "cyclictest" and doc.get("resolution_in_ns") else 1000
    for k in keys:
        if not isinstance(threads[k], dict):
            raise UsageError("%s: thread %s is not an object" % (label, k))
        run, w = make_run(tool, threads[k], k, argv, label, cpus, unit_ns)
        runs.append(run)
        if w:
            warnings.append(w)
    start, end = _when(doc.get("start_time")), _when(doc.get("end_time"))
    if start is None:
        raise UsageError("%s: no start_time the importer can read (%r)"
                         % (label, doc.get("start_time")))
    end = end or start
    span_ns = int((end - start).total_seconds() * 1e9)
    if tool == "cyclictest":
        for run in runs:
            run["duration_ns"] = span_ns
        warnings.append("cyclictest records no duration per thread: each run's duration "
                        "is the file's end_time less its start_time (1 s steps)")
    rc = doc.get("return_code")
    if isinstance(rc, int) and rc != 0:
        warnings.append("%s returned %d: the run may not have finished" % (tool, rc))
    host, src = host_facts(doc, tool)
    if src["unknown"]:
        warnings.append("imported: host facts not in the file and not read here: %s"
                        % ", ".join(src["unknown"]))
    fifo = _int(option(argv, "f", "rtprio")) if tool == "oslat" else \
        _int(option(argv, "p", "priority"))
    overflow = {r["name"]: r.pop("_overflow") for r in runs if r.get("_overflow")}
    for r in runs:
        r.pop("_overflow", None)
    now = datetime.datetime.now(datetime.timezone.utc)
    params = {"cmdline": _cmdline(doc), "unit": "ns" if unit_ns == 1 else "us"}
    if tool == "oslat":
        params["bucket_size"] = _int(option(argv, "b", "bucket-size")) or 32
    else:
        params["histogram_us"] = _int(option(argv, "h", "histogram")) or \
            _int(option(argv, "H", "histofall"))
        params["interval_us"] = _int(option(argv, "i", "interval")) or 1000
    result = {
        "format": FORMAT,
        "tool": tool,
        "jtr_version": __version__,
        "command": ["jtr import", path],
        "started_at": _iso(start),
        "ended_at": _iso(end),
        "started_mono_ns": 0,
        "ended_mono_ns": span_ns,
        "partial": False,
        "privileges": {"uid": os.getuid(), "elevated_at_start": False, "dropped": False,
                       "fifo_priority": fifo if fifo and 1 <= fifo <= 99 else None,
                       "memory_locked": tool == "oslat" or flag(argv, "m", "mlockall")},
        "host": host,
        "calibration": {"timebase": "tsc" if tool == "oslat" else "clock",
                        "timebase_fallback": None,
                        "tsc_hz": host["tsc_hz"] if tool == "oslat" else None,
                        "gettime_cost_ns": 0, "loops_1000_cost_ns": 0,
                        "timer_overhead_ns": 0},
        "params": params,
        "runs": runs,
        "files": {},
        "warnings": warnings,
        "import": {
            "from": os.path.abspath(path),
            "format": "%s --json (file_version %s)" % (tool, doc.get("file_version")),
            "tool_version": doc.get("rt_test_version:", doc.get("rt_test_version")),
            "cmdline": _cmdline(doc),
            "return_code": rc,
            "imported_at": _iso(now),
            "time_unit": "ns" if unit_ns == 1 else "us",
            "host_facts": src,
            "overflow": overflow,
            "not_in_file": ["started_mono_ns", "ended_mono_ns", "calibration costs",
                            "outliers"],
        },
    }
    return result


# --- HdrHistogram interval logs --------------------------------------------

HLOG_UNITS = {"ns": 1, "us": 1000}
MAX_BITS = 14  # the finest precision a jtr histogram has (4 significant digits)


def _read_text(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        raise UsageError("%s: no such file" % path)
    except IsADirectoryError:
        raise UsageError("%s: is a folder; give the .hlog file" % path)
    except UnicodeDecodeError:
        raise UsageError("%s: not a text file; an HdrHistogram interval log is text" % path)
    except OSError as e:
        raise UsageError("%s: cannot read: %s" % (path, e.strerror))


def hlog_run(name, intervals, t0, factor):
    """One jtr run of the intervals of one tag: their histograms added, every
    bucket's count at the bucket's highest value (in ns: x @factor) on jtr's grid of
    the log's precision; min and max the lowest and highest values of the lowest
    and highest buckets (HdrHistogram's getMinValue / getMaxValue)."""
    bits = min(max(hdrlog.half_count_magnitude(i["digits"]) for i in intervals), MAX_BITS)
    acc, lo_ns, hi_ns, total, wsum = {}, None, 0, 0, 0
    for iv in intervals:
        for lo, hi, c in iv["buckets"]:
            top = (hi + 1) * factor - 1
            idx = hist.bucket_index(bits, top)
            acc[idx] = acc.get(idx, 0) + c
            lo_ns = lo * factor if lo_ns is None else min(lo_ns, lo * factor)
            hi_ns = max(hi_ns, top)
            # HdrHistogram's mean: each count at its bucket's median equivalent value
            wsum += c * (lo + (hi - lo + 1) // 2) * factor
            total += c
    buckets = [list(hist.bucket_lo_hi(bits, i)) + [acc[i]] for i in sorted(acc)]
    lo_ns = lo_ns or 0
    mean = wsum / total if total else 0.0
    var = 0.0
    if total:
        for iv in intervals:
            for lo, hi, c in iv["buckets"]:
                var += c * ((lo + (hi - lo + 1) // 2) * factor - mean) ** 2
        var /= total
    start = min(i["start"] for i in intervals)
    end = max(i["start"] + i["length"] for i in intervals)
    cpu = re.fullmatch(r"cpu(\d+)", name)
    return {
        "name": name, "cpu": int(cpu.group(1)) if cpu else None, "partial": False,
        "start_mono_ns": int(round((start - t0) * 1e9)),
        "end_mono_ns": int(round((end - t0) * 1e9)),
        "duration_ns": int(round((end - start) * 1e9)),
        "samples": total, "min_ns": lo_ns, "max_ns": hi_ns,
        "mean_ns": round(mean, 3), "stddev_ns": round(var ** 0.5, 3),
        "percentiles_ns": {k: hist.value_at_percentile(buckets, float(k), lo_ns, hi_ns)
                           for k in PERCENTILE_KEYS},
        "histogram": {"unit": "ns", "sub_bucket_bits": bits, "max_rel_error": 2.0 ** -bits,
                      "total": total, "buckets": buckets},
    }


def hlog_result(path, unit="ns"):
    """The jtr-result/1 dict of an HdrHistogram interval log: one run per tag
    (untagged intervals: run "hlog"), the intervals of a tag added together."""
    factor = HLOG_UNITS[unit]
    try:
        start_time, intervals = hdrlog.read_log(_read_text(path))
    except hdrlog.LogError as e:
        raise UsageError("%s: not an HdrHistogram interval log this can read: %s" % (path, e))
    tags = []
    for iv in intervals:
        if iv["tag"] not in tags:
            tags.append(iv["tag"])
    t0 = min(i["start"] for i in intervals)
    t1 = max(i["start"] + i["length"] for i in intervals)
    runs = [hlog_run(hdrlog.tag(t) if t else "hlog", [i for i in intervals if i["tag"] == t],
                     t0, factor) for t in tags]
    runs = [r for r in runs if r["samples"]]
    if not runs:
        raise UsageError("%s: every interval of the log is empty (no values recorded)" % path)
    when = datetime.datetime.fromtimestamp(t0, datetime.timezone.utc)
    until = datetime.datetime.fromtimestamp(t1, datetime.timezone.utc)
    host = dict(UNKNOWN_HOST, hostname="", kernel="", kernel_version="", machine="",
                tsc_hz=None, tsc_step_ns=None, hypervisor=None)
    warnings = ["imported: host facts not in the file and not read here: %s"
                % ", ".join(sorted(host)),
                "imported from an HdrHistogram log: values are known to the log's bucket "
                "(max_rel_error); min, max, mean and stddev are of the buckets "
                "(HdrHistogram's rules), percentiles jtr's rule on them"]
    merged = [t for t in tags if len([i for i in intervals if i["tag"] == t]) > 1]
    if merged:
        warnings.append("intervals of the same tag were added into one run: %s"
                        % ", ".join("%s (%d)" % (hdrlog.tag(t) if t else "hlog",
                                                 len([i for i in intervals if i["tag"] == t]))
                                    for t in merged))
    now = datetime.datetime.now(datetime.timezone.utc)
    return {
        "format": FORMAT, "tool": "hlog", "jtr_version": __version__,
        "command": ["jtr import", "--hlog", path] + (["--unit", unit] if unit != "ns" else []),
        "started_at": _iso(when), "ended_at": _iso(until),
        "started_mono_ns": 0, "ended_mono_ns": int(round((t1 - t0) * 1e9)),
        "partial": False,
        "privileges": {"uid": os.getuid(), "elevated_at_start": False, "dropped": False,
                       "fifo_priority": None, "memory_locked": False},
        "host": host,
        "calibration": {"timebase": "clock", "timebase_fallback": None, "tsc_hz": None,
                        "gettime_cost_ns": 0, "loops_1000_cost_ns": 0,
                        "timer_overhead_ns": 0},
        "params": {"unit": unit, "intervals": len(intervals),
                   "log_start_time": start_time},
        "runs": runs,
        "files": {},
        "warnings": warnings,
        "import": {
            "from": os.path.abspath(path), "format": "HdrHistogram interval log (V2 "
            "compressed histograms)", "tool_version": None, "cmdline": "",
            "return_code": None, "imported_at": _iso(now), "time_unit": unit,
            "host_facts": {"file": [], "this machine": [], "unknown": sorted(host)},
            "overflow": {}, "not_in_file": ["host facts", "calibration costs", "outliers",
                                            "exact min, max and mean"],
        },
    }


# --- writing ---------------------------------------------------------------

def _safe(s):
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in s) or "host"


def default_dir(result):
    t = datetime.datetime.strptime(result["started_at"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).astimezone()
    name = "%s-%s-%s" % (t.strftime("%Y%m%d-%H%M%S"), _safe(result["host"]["hostname"]),
                         result["tool"])
    d = os.path.join("results", name)
    k = 2
    while os.path.exists(d):
        d = os.path.join("results", "%s-%d" % (name, k))
        k += 1
    return d


def write_folder(result, src_path, outdir, keep=None):
    """Write the folder: result.json and the original file (as @keep, default
    TOOL.json), the folder renamed into place at the end (or the files written into
    an existing -o folder)."""
    keep = keep or "%s.json" % result["tool"]
    result["files"] = {"source": keep}
    text = dumps_result(result) + "\n"
    try:
        if os.path.isdir(outdir):
            if not os.access(outdir, os.W_OK | os.X_OK):
                raise UsageError("-o %s: cannot write in this folder" % outdir)
            shutil.copyfile(src_path, os.path.join(outdir, "." + keep + ".tmp"))
            os.replace(os.path.join(outdir, "." + keep + ".tmp"), os.path.join(outdir, keep))
            write_atomic(os.path.join(outdir, "result.json"), text)
            return
        if os.path.exists(outdir):
            raise UsageError("-o %s: exists and is not a folder" % outdir)
        parent = os.path.dirname(os.path.abspath(outdir))
        if not os.path.isdir(parent):
            if os.path.normpath(os.path.dirname(outdir)) == "results":
                os.mkdir(parent)
            else:
                raise UsageError("-o %s: no such folder %s" % (outdir, parent))
        work = os.path.join(parent, ".%s.partial-%d" % (os.path.basename(outdir), os.getpid()))
        os.mkdir(work)
        try:
            shutil.copyfile(src_path, os.path.join(work, keep))
            write_atomic(os.path.join(work, "result.json"), text)
            os.rename(work, outdir)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
    except OSError as e:
        raise UsageError("%s: cannot write: %s" % (outdir, e.strerror))


def looks_like_hlog(path):
    """True when @path starts like an HdrHistogram interval log."""
    try:
        with open(path, "rb") as f:
            head = f.read(64).lstrip()
    except OSError:
        return False
    return head.startswith((b"#[", b'"StartTimestamp"', b"Tag="))


def import_file(path, outdir=None, hlog=False, unit="ns"):
    """Import one file; returns (folder, result)."""
    if hlog or looks_like_hlog(path):
        result = hlog_result(path, unit)
        outdir = outdir or default_dir(result)
        write_folder(result, path, outdir, keep="source.hlog")
        return outdir, result
    doc = _load(path)
    tool = detect(doc)
    if tool is None:
        raise UsageError("%s: unknown format: not the --json output of oslat or cyclictest "
                         "(rt-tests); those are the formats jtr import reads" % path)
    result = to_result(doc, tool, path)
    outdir = outdir or default_dir(result)
    write_folder(result, path, outdir)
    return outdir, result


def summary_line(outdir, result):
    runs = result["runs"]
    mx = max(r["max_ns"] for r in runs)
    return "%s: %s, %d run%s (%s), %d samples, max %s" % (
        outdir, result["tool"], len(runs), "" if len(runs) == 1 else "s",
        ", ".join(r["name"] for r in runs), sum(r["samples"] for r in runs),
        "%d us" % (mx // 1000) if result["tool"] != "hlog" else "%d ns" % mx)


def main(args):
    if any(a in ("-h", "--help") for a in args):
        sys.stdout.write(USAGE)
        return 0
    outdir, files, i, hlog, unit = None, [], 0, False, None
    while i < len(args):
        a = args[i]
        if a in ("-o", "--output"):
            if i + 1 >= len(args):
                raise UsageError("%s needs a folder; see 'jtr import --help'" % a)
            outdir = args[i + 1]
            i += 2
            continue
        if a == "--hlog":
            hlog = True
            i += 1
            continue
        if a == "--unit":
            if i + 1 >= len(args) or args[i + 1] not in HLOG_UNITS:
                raise UsageError("--unit %s: the log's values are in ns or us; use --unit ns "
                                 "or --unit us" % (args[i + 1] if i + 1 < len(args) else ""))
            unit = args[i + 1]
            i += 2
            continue
        if a.startswith("-"):
            raise UsageError("unknown option '%s'; see 'jtr import --help'" % a)
        files.append(a)
        i += 1
    if not files:
        raise UsageError("give the file oslat or cyclictest wrote with --json=FILE, or an "
                         "HdrHistogram log with --hlog FILE; see 'jtr import --help'")
    if unit and not hlog:
        raise UsageError("--unit goes with --hlog (the unit of an HdrHistogram log's values)")
    if outdir and len(files) > 1:
        raise UsageError("-o names one folder: import one file at a time with -o, or give "
                         "no -o")
    for f in files:
        d, r = import_file(f, outdir, hlog=hlog, unit=unit or "ns")
        print(summary_line(d, r))
        for w in r["warnings"]:
            if not w.startswith("imported: host facts"):
                print("  note: %s" % w)
    return 0
