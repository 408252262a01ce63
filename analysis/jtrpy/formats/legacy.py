# SPDX-License-Identifier: GPL-2.0-only
"""legacy - jtr_null's text summary and gnuplot data file, written
from any result's histograms (the Python side of lib/jtr_legacy.c, byte for byte).

jtr null writes both itself (summary.txt, null.gp); this module writes them for
every result that has histograms (jtr gap, jtr clock, jtr send, imports, results
read back from an HdrHistogram log), so people who keep jtr_null's gnuplot
scripts can plot any of them, and jtr report draws its 10 ns graphs from the
same numbers.

Per run, the file holds
  # title_N = "<header, \\n-joined, _ escaped>\\nMinimum=.., Maximum=.., Average=.., Overflows=.."
  # xrange_N = <histo_buckets * 10>
  <bucket start ns> <count>        (non-empty 10 ns buckets)
and two blank lines. The linear view puts each count of jtr's log-linear
histogram into the 10 ns bucket of its bucket's lowest value (as jtr_hist_linear),
so a bucket wider than 10 ns (values from 2^(bits+1) ns up: 256 ns at 1 %) shows
as one line at its start. Counts past histo_buckets * 10 ns are the Overflows.

The header's fields come from the result: desc, spins (Busy_spins=), cpu,
samples, pause_ns, warmup and histo_buckets from "params", the timebase and the
costs from "calibration", FIFO priority from "privileges". A field a tool does not
have is -1 (cpu_num, fifo_priority) or 0. The costs are rounded from
result.json's two decimals, Average is the whole part of mean_ns (three decimals):
where the probe's exact value lies within 0.005 ns of a half (cost) or 0.0005 ns of
a whole number (mean), its own file can differ from this one by 1 in that field
(see ambiguous_fields).
"""
import math
import re

from ..results import hist

BUCKET_NS = 10
DEFAULT_BUCKETS = 200
MAX_BUCKETS = 1000000
MAX_AUTO_BUCKETS = 10000  # 100 us: past that, 10 ns buckets say little
PCTS = (90.0, 99.0, 99.9, 99.99, 99.999)


def _int(v, default):
    return v if isinstance(v, int) and not isinstance(v, bool) else default


def _round_cost(v):
    """(long long)(x + 0.5) of a cost in ns, 0 when there is none."""
    return int(math.floor(v + 0.5)) if isinstance(v, (int, float)) else 0


def histo_buckets(result, override=None):
    """How many 10 ns buckets the linear view has: @override, else the result's
    histo_buckets (jtr null -H), else enough for 99.9 % of every run (at least 200,
    at most 10000)."""
    if override:
        return override
    hb = _int((result.get("params") or {}).get("histo_buckets"), None)
    if hb and hb > 0:
        return hb
    need = DEFAULT_BUCKETS
    for run in result.get("runs", []):
        p = (run.get("percentiles_ns") or {}).get("99.9") if isinstance(run, dict) else None
        if isinstance(p, (int, float)):
            need = max(need, int(p) // BUCKET_NS + 2)
    return min(need, MAX_AUTO_BUCKETS)


def lead_of(result, run):
    """The tool's first header field: Busy_spins=100 (null), no_send_spin=N (a send
    tool's null loop), Msg_size=N (its send calls), else Tool=NAME."""
    if isinstance(run.get("legacy_lead"), str):
        return run["legacy_lead"]
    params = result.get("params") or {}
    name = str(run.get("name") or "")
    spins = _int(run.get("spins"), _int(params.get("spins"), None))
    if result.get("tool") == "null" and spins is not None:
        return "Busy_spins=%d" % spins
    if (run.get("kind") == "null" or name.startswith("null")) and spins is not None:
        return "no_send_spin=%d" % spins
    for k in ("msg_len", "len", "msg_size", "size"):
        if _int(params.get(k), None) is not None:
            return "Msg_size=%d" % params[k]
    if spins is not None:
        return "Busy_spins=%d" % spins
    return "Tool=%s" % (result.get("tool") or "unknown")


def header_fields(result, run):
    """The fields of jtr_legacy_hdr for @run of @result."""
    params = result.get("params") or {}
    cal = result.get("calibration") or {}
    priv = result.get("privileges") or {}
    cpu = run.get("cpu")
    if not isinstance(cpu, int):
        cpu = _int(params.get("cpu"), -1)
    fifo = _int(priv.get("fifo_priority"), None) or -1
    samples = _int(params.get("samples"), None)
    if samples is None:
        samples = _int(run.get("samples"), 0)
    desc = str(params.get("desc") or "jtr %s" % (result.get("tool") or ""))
    if result.get("tool") != "null" and (run.get("kind") == "null" or
                                         str(run.get("name") or "").startswith("null_")):
        desc += " (null loop)"  # a send tool's null run, as jtr_null named it
    return {
        "desc": desc,
        "lead": lead_of(result, run),
        "cpu_num": cpu,
        "fifo_priority": fifo,
        "histo_buckets": histo_buckets(result),
        "num_samples": samples,
        "pause_ns": _int(params.get("pause_ns"), 0),
        "timebase": {"tsc": 1, "clock": 2}.get(cal.get("timebase"), 0),
        "warmup_loops": _int(params.get("warmup"), 0),
        "gettime_cost": _round_cost(cal.get("gettime_cost_ns")),
        "rdtsc_cost": _round_cost(cal.get("rdtsc_cost_ns")),
        "ticks_per_sec": _round_cost(cal.get("tsc_hz")),
        "loops_1000_cost": _round_cost(cal.get("loops_1000_cost_ns")),
    }


def header(f):
    """The three header lines (jtr_legacy_header)."""
    return ("%s: %s, cpu_num=%d, fifo_priority=%d, histo_buckets=%d, num_samples=%d,\n"
            " pause=%d timebase=%d, warmup_loops=%d, gettime_cost=%d,\n"
            " rdtsc_cost=%d, ticks_per_sec=%d, jtr_1000_loops_cost=%d\n"
            % (f["desc"], f["lead"], f["cpu_num"], f["fifo_priority"], f["histo_buckets"],
               f["num_samples"], f["pause_ns"], f["timebase"], f["warmup_loops"],
               f["gettime_cost"], f["rdtsc_cost"], f["ticks_per_sec"], f["loops_1000_cost"]))


def linear(buckets, nb):
    """(counts of @nb 10 ns buckets, overflows): jtr_hist_linear."""
    lin, over = [0] * nb, 0
    for lo, _, count in buckets:
        i = lo // BUCKET_NS
        if i < nb:
            lin[i] += count
        else:
            over += count
    return lin, over


def _total(buckets):
    return sum(b[2] for b in buckets)


def minmax(run, nb):
    """"Minimum=.., Maximum=.., Average=.., Overflows=..\\n" (jtr_legacy_minmax)."""
    buckets = run["histogram"]["buckets"]
    _, over = linear(buckets, nb)
    n = _total(buckets)
    mean = run.get("mean_ns")
    avg = int(math.floor(mean)) if n and isinstance(mean, (int, float)) else 0
    return "Minimum=%d, Maximum=%d, Average=%d, Overflows=%d\n" % (
        run.get("min_ns", 0) if n else 0, run.get("max_ns", 0), avg, over)


def below_ns(run, nb, pct):
    """The N of "P% are below N ns" (jtr_legacy_below_ns)."""
    buckets = run["histogram"]["buckets"]
    lin, _ = linear(buckets, nb)
    n = _total(buckets)
    need = int((pct / 100.0) * float(n) + 0.5)
    i = cum = 0
    while i < nb and cum < need:
        cum += lin[i]
        i += 1
    if cum >= need:
        return i * BUCKET_NS
    v = hist.value_at_percentile(buckets, pct, run.get("min_ns", 0), run.get("max_ns", 0))
    return (v // BUCKET_NS + 1) * BUCKET_NS


def percentiles(run, nb):
    """The five "are below" lines (jtr_legacy_percentiles)."""
    return "".join("%6.3f%% are below %d ns\n" % (p, below_ns(run, nb, p)) for p in PCTS)


def escape_title(s):
    """gnuplot-escaped title text: newlines as \\n, '_' as \\_, '"' and '\\' escaped;
    trailing newlines dropped."""
    s = s.rstrip("\n")
    return (s.replace("\\", "\\\\").replace('"', '\\"').replace("_", "\\_")
            .replace("\n", "\\n"))


def gnuplot_block(index, head, mm, run, nb):
    """One run's block (jtr_legacy_gnuplot_block); @index counts from 1."""
    lin, _ = linear(run["histogram"]["buckets"], nb)
    out = ['# title_%d = "%s\\n%s"\n' % (index, escape_title(head), escape_title(mm)),
           "# xrange_%d = %d\n" % (index, nb * BUCKET_NS)]
    out += ["%d %d\n" % (i * BUCKET_NS, c) for i, c in enumerate(lin) if c]
    out.append("\n\n")
    return "".join(out)


def plottable_runs(result):
    """The runs that have histograms, in file order."""
    return [r for r in result.get("runs", []) if isinstance(r, dict)
            and isinstance(r.get("histogram"), dict)]


def blocks(result, nb=None):
    """[(run, header text, minmax text, percentile text)] of the plottable runs;
    @nb overrides the number of 10 ns buckets."""
    nb = histo_buckets(result, nb)
    out = []
    for run in plottable_runs(result):
        f = header_fields(result, run)
        f["histo_buckets"] = nb
        out.append((run, header(f), minmax(run, nb), percentiles(run, nb)))
    return nb, out


def summary_text(result, nb=None):
    """jtr_null's text summary of every run (what jtr null prints)."""
    _, bl = blocks(result, nb)
    return "".join(h + mm + p for _, h, mm, p in bl)


def gnuplot_text(result, nb=None):
    """jtr_null's gnuplot data file of every run (jtr null's null.gp)."""
    nb, bl = blocks(result, nb)
    return "".join(gnuplot_block(k + 1, h, mm, run, nb) for k, (run, h, mm, _) in
                   enumerate(bl))


def ambiguous_fields(result):
    """Fields where this file may differ by 1 from the probe's own (see the module
    note): [(run name, field)]."""
    out = []
    cal = result.get("calibration") or {}
    for k, name in (("gettime_cost_ns", "gettime_cost"), ("rdtsc_cost_ns", "rdtsc_cost"),
                    ("loops_1000_cost_ns", "jtr_1000_loops_cost")):
        v = cal.get(k)
        if isinstance(v, (int, float)) and abs(round(v * 100) % 100 - 50) == 0:
            out.append(("calibration", name))
    for run in plottable_runs(result):
        m = run.get("mean_ns")
        if isinstance(m, (int, float)) and round(m * 1000) % 1000 == 0:
            out.append((run.get("name"), "Average"))
    return out


def file_stem(label):
    """A label as a file name part: letters, digits, '-', '_' and '.' kept."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", str(label)).strip("._") or "result"
