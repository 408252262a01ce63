# SPDX-License-Identifier: GPL-2.0-only
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
import getopt
import os
import re
import shlex

from .. import __version__
from ..errors import UsageError
from ..results import hist
from ..results.result import FORMAT, PERCENTILE_KEYS, check_result
from ..system.files import open_regular, read_bytes, read_json
from ..system.host import UNKNOWN_HOST, this_machine
from ..system.schema import COUNT_MAX, Any, Num, Obj, Opt, Str, check
from . import hdrlog
from .hdrlog import MAX_SECONDS

BITS = 7  # jtr's default precision (1 %)



# --- reading the file ------------------------------------------------------

MAX_HLOG_BYTES = 256 << 20     # an HdrHistogram log: 256 MiB
MAX_US = 10 ** 12               # a value in a tool's histogram: 11.6 days in us
THREAD = Obj({"histogram": Obj(values=Any(), what="an object of \"us\": count"),
              "min": Num(0, MAX_US), "max": Num(0, MAX_US), "avg": Num(0, MAX_US),
              "freq": Any(), "duration": Opt(Num(0, MAX_SECONDS))}, what="a thread object")
RT_TESTS_FIELDS = Obj({
    "thread": Obj(values=THREAD), "start_time": Opt(Str(256)), "end_time": Opt(Str(256)),
    "sysinfo": Obj({k: Opt(Str(256)) for k in ("nodename", "release", "version", "machine")}),
})


def _load(path):
    doc = read_json(path)
    if detect(doc):
        check(doc, RT_TESTS_FIELDS, path)
    return doc


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


# the tools' own getopt_long tables (rt-tests 2.x: oslat.c, cyclictest.c), so their
# command lines are read exactly as the tools read them. Python's getopt has no
# optional arguments ("a::"): those options' attached values are taken off first.
RT_TESTS_OPTIONS = {
    "oslat": ("b:Bc:C:D:f:hm:qsT:vw:z",
              ["bucket-size=", "bias", "cpu-list=", "cpu-main-thread=", "duration=",
               "json=", "rtprio=", "help", "workload-mem=", "quiet", "single-preheat",
               "trace-threshold=", "version", "workload=", "zero-omit"], "", ()),
    "cyclictest": ("a::A::b:c:d:D:F:h:H:i:l:MNo:p:mqrRsSt::uvx",
                   ["affinity", "aligned", "breaktrace=", "clock=", "default-system",
                    "distance=", "duration=", "latency=", "fifo=", "histogram=", "histofall=",
                    "histfile=", "interval=", "json=", "laptop", "loops=", "mainaffinity=",
                    "mlockall", "refresh_on_max", "nsecs", "oscope=", "priority=", "quiet",
                    "priospread", "relative", "resolution", "secaligned", "system", "smi",
                    "smp", "spike=", "spike-nodes=", "threads", "tracemark", "unbuffered",
                    "verbose", "dbg_cyclictest", "policy=", "help", "posix_timers"],
                   "aAt", ("affinity", "aligned", "secaligned", "threads")),
}


def tool_options(tool, argv):
    """{option: value} of a tool's command line @argv (argv[0] the program), the
    last of each option given, by its long name where it has one (True for a
    flag); {} when the tool would have refused the line."""
    short, longs, optional, optional_long = RT_TESTS_OPTIONS[tool]
    args = []
    for a in argv[1:]:
        if len(a) > 2 and a[0] == "-" and a[1] in optional:     # -a1: the value attached
            a = a[:2]
        elif a.startswith("--") and a[2:].split("=")[0] in optional_long:
            a = a.split("=")[0]
        args.append(a)
    try:
        pairs, _ = getopt.gnu_getopt(args, short.replace("::", ""), longs)
    except getopt.GetoptError:
        return {}
    takes = set(re.findall(r"([A-Za-z]):(?!:)", short)) | \
        {n[:-1] for n in longs if n.endswith("=")}
    long_of = dict(SHORT_LONG[tool])
    out = {}
    for opt, val in pairs:
        name = opt.lstrip("-")
        out[long_of.get(name, name)] = val if name in takes else True
    return out


# the short options whose values the importer reads, and their long names
SHORT_LONG = {
    "oslat": (("b", "bucket-size"), ("f", "rtprio")),
    "cyclictest": (("h", "histogram"), ("H", "histofall"), ("i", "interval"),
                   ("m", "mlockall"), ("p", "priority")),
}


def _int(v):
    text = str(v).strip().lstrip("=")
    if len(text) > 20:      # no count or time of the tools has more digits
        return None
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def _when(s):
    """rt-tests' start_time / end_time ('Sun, 22 Nov 2026 07:42:17 +0000') as UTC."""
    if not isinstance(s, str):
        return None
    try:
        t = email.utils.parsedate_to_datetime(s)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if t is None:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=datetime.timezone.utc)
    return t.astimezone(datetime.timezone.utc)


def _iso(t):
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)


# --- host facts ---------------------------------------------------------

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
    if tool == "oslat" and freq and all(isinstance(f, (int, float)) and 0 < f < 1e7
                                        for f in freq):
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
        if us is None or n is None or not 0 <= us <= MAX_US or not 0 <= n <= COUNT_MAX:
            raise UsageError("%s: a histogram entry is not \"us\": count (whole numbers, us "
                             "at most %d, the count at most 2^53)" % (label, MAX_US))
        out[us] = out.get(us, 0) + n
    if sum(out.values()) > COUNT_MAX:
        raise UsageError("%s: the histogram's counts add up to more than 2^53" % label)
    return out


def make_run(tool, t, key, opts, label, names, unit_ns):
    """One jtr run of thread @t (its key in "thread"), and a warning or None; @opts
    the tool's options (tool_options), the file's values in units of @unit_ns
    (1000: us; 1: cyclictest -N)."""
    counts = _counts(t, label)
    for f in ("min", "max", "avg"):
        if not isinstance(t.get(f), (int, float)):
            raise UsageError("%s: thread %s has no %s" % (label, key, f))
    min_ns, max_ns = int(t["min"]) * unit_ns, int(t["max"]) * unit_ns
    cpu = t.get("cpu") if isinstance(t.get("cpu"), int) and 0 <= t["cpu"] <= 65535 else None
    over, limit_us = 0, None
    if tool == "oslat":
        last = max(counts) if counts else 0
        # the last bucket (bias + size us) holds every loop from there up
        if counts and t["max"] > last:
            over, limit_us = counts.pop(last), last
        n = sum(counts.values()) + over
    else:
        n = _int(t.get("cycles"))
        if n is None or not 0 <= n <= COUNT_MAX:
            raise UsageError("%s: thread %s has no cycles count (a whole number up to 2^53)"
                             % (label, key))
        over = n - sum(counts.values())
        if over < 0:
            raise UsageError("%s: thread %s: the histogram holds more than its %d cycles"
                             % (label, key, n))
        limit_us = _int(opts.get("histogram")) or _int(opts.get("histofall"))
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
    opts = tool_options(tool, _split(_cmdline(doc)))
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
        run, w = make_run(tool, threads[k], k, opts, label, cpus, unit_ns)
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
    fifo = _int(opts.get("rtprio")) if tool == "oslat" else _int(opts.get("priority"))
    overflow = {r["name"]: r.pop("_overflow") for r in runs if r.get("_overflow")}
    for r in runs:
        r.pop("_overflow", None)
    now = datetime.datetime.now(datetime.timezone.utc)
    params = {"cmdline": _cmdline(doc), "unit": "ns" if unit_ns == 1 else "us"}
    if tool == "oslat":
        params["bucket_size"] = _int(opts.get("bucket-size")) or 32
    else:
        params["histogram_us"] = _int(opts.get("histogram")) or _int(opts.get("histofall"))
        params["interval_us"] = _int(opts.get("interval")) or 1000
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
                       "memory_locked": tool == "oslat" or bool(opts.get("mlockall"))},
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
    data = read_bytes(path, "file", MAX_HLOG_BYTES)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError("%s: not a text file; an HdrHistogram interval log is text" % path)


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


def looks_like_hlog(path):
    """True when @path starts like an HdrHistogram interval log."""
    try:
        f, _ = open_regular(path, "file")
    except UsageError:
        return False        # said when the file is read
    with f:
        head = f.read(64).lstrip()
    return head.startswith((b"#[", b'"StartTimestamp"', b"Tag="))


def import_file(path, hlog=False, unit="ns"):
    """The result of one file: (result document, [(file name, path)] to keep beside
    it: the original file)."""
    if hlog or looks_like_hlog(path):
        result, copies = hlog_result(path, unit), [("source.hlog", path)]
    else:
        doc = _load(path)
        tool = detect(doc)
        if tool is None:
            raise UsageError("%s: unknown format: not the --json output of oslat or "
                             "cyclictest (rt-tests); those are the formats jtr import reads"
                             % path)
        result, copies = to_result(doc, tool, path), [("%s.json" % tool, path)]
    check_result(result, path)      # what jtr's readers need, as any result they load
    return result, copies


def started_local(result):
    """A result's start (started_at, UTC) as local time (time.struct_time)."""
    t = datetime.datetime.strptime(result["started_at"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).astimezone()
    return t.timetuple()
