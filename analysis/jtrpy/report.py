"""report - jtr report: one self-contained HTML page (plots as base64 PNG) per
result, or per pair of results, plus the PNGs beside it.

Numbers in the tables are the values of result.json as written (JSON's own
spelling), with a reading for people beside them; the plots are drawn from the
result's histograms (hist.py's percentile rule), outliers.csv and the
attribution. Two results add overlays and jtr compare's table.
"""
import base64
import csv
import html
import io
import json
import os
import sys

from . import hist, legacy
from .attribute import cost_text
from .errors import UsageError
from .figures import merged_histogram, result_figures, run_pairs
from .result import load_result, measured_runs, result_path, write_atomic
from .units import fmt_ns as _fmt_ns

USAGE = """\
usage: jtr report [-o DIR] [--gnuplot] [--histo-buckets N] RESULT [RESULT_B]
       jtr report [-o DIR] SUITE_DIR

Write a report of a result as one HTML page that needs no network (the plots are
embedded) and the plots as PNG files beside it:

  histogram.png    loop times (ns, log) against bucket counts (log), per run
  percentiles.png  percentile spectrum, HdrHistogram style: the value at each
                   percentile from 50 % to 99.999 %, x axis 1/(1-p) on a log scale
  timeline.png     (attributed runs) every logged outlier over the run's time, the
                   worst ones coloured by their main cause
  causes.png       (attributed runs) outlier time per cause

and tables of the headline numbers, the host, the tuning profile, the
parameters and the warnings (RT throttling, virtualised host, dropped events or
outliers, partial run). Each number is the one in result.json.

Given two results (A, then B), the plots overlay both and the page adds the
table of 'jtr compare A B' (confidence intervals, per-cause deltas).

Seed-style graphs, as the original jitter tools' plot scripts drew them from
their gnuplot files (10 ns buckets from 0 to histo_buckets x 10 ns, counts on a
log scale):
  plot_A_v_B-N.png     run N of A against run N of B, for two results; and for a
                       result of send runs (send_1, null_1, ...) each send run
                       against the null loop of the same mean: plot_A_v_null-N.png
  A.gp, A.txt          the original's gnuplot data file and text summary of each
                       result on such a graph (jtr null writes them itself as
                       null.gp and summary.txt; these are the same bytes)
  plot_A-N.png         (--gnuplot) each run alone, and A.gp and A.txt for any result

Given a folder written by 'jtr suite', the page has one section per item (its
runs' seed-style graphs, histogram and numbers), the send-vs-null graphs of each
transport, the clock_gettime-timed null loop against the RDTSC one, and every
item's .gp and .txt: what the original's plotall.sh drew after tstall.sh.

  -o DIR   where to write report.html and the PNGs (default: RESULT/report for
           one result or a suite, ./report-A-vs-B for two)
  --gnuplot            also the seed-style files of a result that has no pair
  --histo-buckets N    10 ns buckets of the seed-style files and graphs (default:
                       the result's own, jtr null -H, else enough for 99.9 % of
                       the samples and at least 200)

examples:
  jtr report results/latest
  jtr report -o /tmp/rep results/20261122-041305-vm-gap
  jtr report before-tuning after-tuning       # before/after overlays and the comparison
  jtr report --gnuplot results/latest         # also latest.gp, latest.txt, plot_latest-1.png
  jtr suite -o s && jtr report s              # every item of a suite on one page
"""

PLOTS = ("histogram", "percentiles", "timeline", "causes")
CATEGORY_COLOURS = {
    "timer tick": "#1f77b4", "IPI": "#ff7f0e", "hardirq": "#2ca02c", "softirq": "#d62728",
    "task preemption": "#9467bd", "page fault": "#8c564b", "NMI": "#e377c2",
    "no kernel event": "#17becf", "other events": "#bcbd22", "not traced": "#7f7f7f",
}
SIDE_COLOURS = ("#1f77b4", "#d62728")
SPECTRUM_MAX = 99.999


def _plt():
    try:
        import matplotlib
    except ImportError:
        raise UsageError("jtr report needs matplotlib (Debian: apt-get install "
                         "python3-matplotlib; or run scripts/deps.sh)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def parse_args(args):
    out, paths = None, []
    opts = {"gnuplot": False, "histo_buckets": None}
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-o":
            if i + 1 >= len(args):
                raise UsageError("-o needs a folder; see 'jtr report --help'")
            out = args[i + 1]
            i += 1
        elif a == "--gnuplot":
            opts["gnuplot"] = True
        elif a == "--histo-buckets":
            from .cli import parse_count, take_value
            opts["histo_buckets"] = parse_count(a, take_value(args, i, a), 1,
                                                legacy.MAX_BUCKETS)
            i += 1
        elif a.startswith("-") and a != "-":
            raise UsageError("unknown option '%s'; see 'jtr report --help'" % a)
        else:
            paths.append(a)
        i += 1
    if not 1 <= len(paths) <= 2:
        raise UsageError("give one result, or two to compare; see 'jtr report --help'")
    return out, paths, opts


def result_dir(path):
    return os.path.dirname(os.path.abspath(result_path(path)))


def default_out(paths):
    if len(paths) == 1:
        return os.path.join(result_dir(paths[0]), "report")
    names = [os.path.basename(result_dir(p)) or "result" for p in paths]
    return "report-%s-vs-%s" % tuple(names)


# --- numbers ---------------------------------------------------------------

def jnum(v):
    """A value spelled as JSON spells it (what result.json holds)."""
    if v is None:
        return "null"
    if isinstance(v, (dict, list)):
        return json.dumps(v)
    return v if isinstance(v, str) else json.dumps(v)


def fmt_ns(ns):
    """units.fmt_ns, and "" for a value that is not a number."""
    return _fmt_ns(ns) if isinstance(ns, (int, float)) else ""


def spectrum(buckets, lo, hi, points=200):
    """[(p, value)] from 50 % to 99.999 %, evenly spaced in log(1/(1-p))."""
    import math
    a, b = math.log10(1 / (1 - 0.5)), math.log10(1 / (1 - SPECTRUM_MAX / 100))
    out = []
    for i in range(points + 1):
        x = 10 ** (a + (b - a) * i / points)
        p = 100.0 * (1 - 1 / x)
        out.append((x, hist.value_at_percentile(buckets, p, lo, hi)))
    return out


def read_outliers(folder, result):
    """{cpu: ([start_ns], [length_ns])} from the result's outliers.csv, or {}."""
    name = (result.get("files") or {}).get("outliers") or "outliers.csv"
    path = os.path.join(folder, name)
    out = {}
    try:
        with open(path, newline="") as f:
            rows = csv.reader(f)
            next(rows, None)
            for row in rows:
                if len(row) != 3:
                    continue
                try:
                    cpu, start, length = int(row[0]), int(row[1]), int(row[2])
                except ValueError:
                    continue
                s = out.setdefault(cpu, ([], []))
                s[0].append(start)
                s[1].append(length)
    except OSError:
        return {}
    return out


# --- plots -----------------------------------------------------------------

# the 9 x 4.5 in graphs with one-line axis labels: fixed margins, because
# tight_layout's tick measuring costs more than the drawing
FIXED_MARGINS = {"left": 0.08, "right": 0.98, "top": 0.92, "bottom": 0.11}


def _png(plt, fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return buf.getvalue()


def plot_histogram(plt, series):
    """series: [(label, buckets, colour)]."""
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for label, buckets, colour in series:
        xs = [(b[0] + b[1]) / 2.0 for b in buckets]
        ys = [b[2] for b in buckets]
        ax.vlines(xs, 0.8, ys, colors=colour, alpha=0.6, linewidth=1)
        ax.plot(xs, ys, ".", color=colour, markersize=3, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(bottom=0.8)
    ax.set_xlabel("loop time (ns)")
    ax.set_ylabel("count per bucket")
    ax.set_title("Histogram (log-scale counts)")
    # major ticks only, fixed margins: measuring the minor log ticks for
    # tight_layout took two thirds of each graph's time
    ax.minorticks_off()
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper right", fontsize=8)
    fig.subplots_adjust(**FIXED_MARGINS)
    return _png(plt, fig)


def plot_spectrum(plt, series):
    """series: [(label, [(x, value)], colour)]."""
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for label, pts, colour in series:
        ax.step([p[0] for p in pts], [p[1] for p in pts], where="post", color=colour,
                label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ticks = [50, 90, 99, 99.9, 99.99, 99.999]
    ax.set_xticks([1 / (1 - t / 100) for t in ticks])
    ax.set_xticklabels(["%g%%" % t for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel("percentile")
    ax.set_ylabel("loop time (ns)")
    ax.set_title("Percentile spectrum")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    fig.subplots_adjust(**FIXED_MARGINS)
    return _png(plt, fig)


def plot_timeline(plt, result, outliers):
    """Every logged outlier (grey) and the attribution's worst ones by main cause."""
    t0 = min((r.get("start_mono_ns") for r in result.get("runs", [])
              if isinstance(r.get("start_mono_ns"), int)), default=None)
    worst = (result.get("attribution") or {}).get("worst") or []
    if t0 is None:
        t0 = min([min(s) for s, _ in outliers.values() if s] +
                 [w["start_ns"] for w in worst], default=0)
    fig, ax = plt.subplots(figsize=(9, 4.5))
    first = True
    for cpu, (starts, lengths) in sorted(outliers.items()):
        ax.scatter([(s - t0) / 1e9 for s in starts], [l / 1e3 for l in lengths], s=4,
                   color="#bbbbbb", rasterized=True,
                   label="outliers.csv (cause not kept per outlier)" if first else None)
        first = False
    seen = set()
    for w in worst:
        cat = w.get("category")
        ax.scatter([(w["start_ns"] - t0) / 1e9], [w["length_ns"] / 1e3], s=28,
                   color=CATEGORY_COLOURS.get(cat, "#000000"), edgecolors="black",
                   linewidths=0.4, zorder=3,
                   label="worst: %s" % cat if cat not in seen else None)
        seen.add(cat)
    ax.set_yscale("log")
    ax.set_xlabel("time from the start of the run (s)")
    ax.set_ylabel("outlier length (us)")
    ax.set_title("Outlier timeline, worst outliers coloured by main cause")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=3, fontsize=7,
              frameon=False)
    fig.tight_layout()
    return _png(plt, fig)


def plot_causes(plt, causes, top=15):
    causes = causes[:top]
    fig, ax = plt.subplots(figsize=(9, 0.9 + 0.35 * max(len(causes), 1)))
    labels = ["%s: %s" % (c.get("category"), c.get("name")) for c in causes]
    labels = [l if len(l) < 60 else l[:57] + "..." for l in labels]
    ys = list(range(len(causes)))[::-1]
    ax.barh(ys, [c.get("total_ns", 0) / 1e6 for c in causes],
            color=[CATEGORY_COLOURS.get(c.get("category"), "#000000") for c in causes])
    ax.set_yticks(ys)
    ax.set_yticklabels(labels, fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("outlier time charged (ms, log)")
    ax.set_title("Outlier time per cause (largest %d)" % len(causes))
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    return _png(plt, fig)


def plot_versus(plt, title, series, nb):
    """The original's graph of gnuplot blocks on one plot: 10 ns buckets from 0 to
    @nb x 10 ns, counts on a log scale. series: [(label, counts, colour)]."""
    import numpy as np
    edges = np.arange(nb + 1) * legacy.BUCKET_NS
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for label, counts, colour in series:
        # steps as a line and a filled polygon: ax.stairs' patches walk every
        # segment as a curve to find the data limits, over half of each graph's time
        vals = np.array([c if c else 0.5 for c in counts[:nb]], dtype=float)
        xs = np.repeat(edges[:len(vals) + 1], 2)
        ys = np.concatenate(([0.5], np.repeat(vals, 2), [0.5]))
        ax.fill_between(xs, ys, 0.5, color=colour, alpha=0.35, linewidth=0)
        ax.plot(xs, ys, color=colour, linewidth=1, label=label)
    ax.set_yscale("log")
    ax.set_ylim(bottom=0.8)
    ax.set_xlim(0, nb * legacy.BUCKET_NS)
    ax.set_xlabel("ns (10 ns buckets)")
    ax.set_ylabel("count (log)")
    ax.set_title(title, fontsize=10)
    ax.minorticks_off()
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper right", fontsize=7)
    fig.subplots_adjust(**FIXED_MARGINS)
    return _png(plt, fig)


def versus_label(label, run, nb):
    """A legend entry: who, and the original's min/max/average/overflow line."""
    return "%s %s: %s" % (label, run.get("name"), legacy.minmax(run, nb).strip())


def seed_graphs(plt, stems, results, every=False, nb=None, pairs=(), inner=True):
    """The seed-style graphs and files of @results (file stems @stems):
    ({png name: bytes}, {file name: text}). Graphs: run N of result 0 against run N
    of result 1 when there are two; each result's send-vs-null pairs; with @every,
    each run alone. @pairs adds (i, j) pairs of results (a suite's); @inner False
    leaves out the pairs inside each result. Each result on a graph gets STEM.gp
    and STEM.txt."""
    pngs, texts, used = {}, {}, set()
    cross = list(pairs) + ([(0, 1)] if len(results) == 2 else [])
    for i, j in cross:
        a, b = results[i], results[j]
        n = max(legacy.histo_buckets(a, nb), legacy.histo_buckets(b, nb))
        for k, (ra, rb) in enumerate(zip(legacy.plottable_runs(a),
                                         legacy.plottable_runs(b)), 1):
            name = "plot_%s_v_%s-%d" % (stems[i], stems[j], k)
            pngs[name] = plot_versus(plt, "%s: %s %s vs %s %s" % (
                name, stems[i], ra.get("name"), stems[j], rb.get("name")), [
                (versus_label(stems[i], ra, n), legacy.linear(ra["histogram"]["buckets"], n)[0],
                 SIDE_COLOURS[0]),
                (versus_label(stems[j], rb, n), legacy.linear(rb["histogram"]["buckets"], n)[0],
                 SIDE_COLOURS[1])], n)
            used.update((i, j))
    for i, res in enumerate(results):
        n = legacy.histo_buckets(res, nb)
        prs = run_pairs(res) if inner else []
        kinds = sorted({p[0] for p in prs})
        for kind, k, run, null in prs:
            who = stems[i] if len(kinds) == 1 else "%s-%s" % (stems[i], kind)
            name = "plot_%s_v_null-%d" % (who, k)
            pngs[name] = plot_versus(plt, "%s: %s vs %s" % (name, run.get("name"),
                                                            null.get("name")), [
                (versus_label(stems[i], run, n), legacy.linear(run["histogram"]["buckets"], n)[0],
                 SIDE_COLOURS[0]),
                (versus_label(stems[i], null, n),
                 legacy.linear(null["histogram"]["buckets"], n)[0], SIDE_COLOURS[1])], n)
            used.add(i)
        if every:
            for k, run in enumerate(legacy.plottable_runs(res), 1):
                name = "plot_%s-%d" % (stems[i], k)
                pngs[name] = plot_versus(plt, "%s: %s %s" % (name, stems[i], run.get("name")), [
                    (versus_label(stems[i], run, n), legacy.linear(
                        run["histogram"]["buckets"], n)[0], SIDE_COLOURS[0])], n)
                used.add(i)
    for i in sorted(used):
        texts[stems[i] + ".gp"] = legacy.gnuplot_text(results[i], nb)
        texts[stems[i] + ".txt"] = legacy.summary_text(results[i], nb)
    return pngs, texts


def file_stems(labels):
    """File-name stems of @labels, made unique (-a, -b, ... when two are equal)."""
    stems = [legacy.file_stem(x) for x in labels]
    if len(set(stems)) < len(stems):
        stems = ["%s-%s" % (st, chr(ord("a") + i)) for i, st in enumerate(stems)]
    return stems


def seed_section(pngs, texts, captions=None):
    """The page's part for the seed-style graphs and files."""
    if not pngs and not texts:
        return ""
    out = ["<h2>Seed-style graphs</h2>",
           "<p>10 ns buckets, counts on a log scale, as the original's gnuplot scripts "
           "drew them; the data files are in the original's gnuplot format: %s</p>"
           % ", ".join('<a href="%s">%s</a>' % (esc(t), esc(t)) for t in texts)]
    for name, data in pngs.items():
        out.append(img(name, data, (captions or {}).get(name, name)))
    return "\n".join(out)


# --- HTML ------------------------------------------------------------------

def esc(v):
    return html.escape(str(v), quote=True)


def table(rows, head=None, cls=None):
    """An HTML table of rows of cells (already strings)."""
    out = ['<table%s>' % (' class="%s"' % cls if cls else "")]
    if head:
        out.append("<tr>%s</tr>" % "".join("<th>%s</th>" % esc(h) for h in head))
    for r in rows:
        out.append("<tr>%s</tr>" % "".join("<td>%s</td>" % esc(c) for c in r))
    out.append("</table>")
    return "\n".join(out)


def run_rows(run):
    """(field, value as in result.json, reading) of a run's headline numbers."""
    rows = []
    p = run.get("percentiles_ns") or {}
    for k in p:
        rows.append(("percentiles_ns.%s" % k, jnum(p[k]), fmt_ns(p[k])))
    for k in ("min_ns", "max_ns", "mean_ns", "stddev_ns"):
        if k in run:
            rows.append((k, jnum(run[k]), fmt_ns(run[k])))
    for k in ("samples", "duration_ns", "loop_period_ns"):
        if k in run:
            rows.append((k, jnum(run[k]), fmt_ns(run[k]) if k.endswith("_ns") else ""))
    if "lost_time_pct" in run:
        rows.append(("lost_time_pct", jnum(run["lost_time_pct"]),
                     "%.3f %% of the time lost" % run["lost_time_pct"]))
    o = run.get("outliers")
    if isinstance(o, dict):
        for k in ("threshold_ns", "count", "per_s", "logged", "dropped", "total_ns",
                  "lost_ns", "max_ns"):
            if k in o:
                rows.append(("outliers.%s" % k, jnum(o[k]),
                             fmt_ns(o[k]) if k.endswith("_ns") else ""))
    if "pmu" in run:
        pmu = run["pmu"]
        if not isinstance(pmu, dict):
            rows.append(("pmu", "null", "no hardware counters (see the warnings)"))
        else:
            if "ipc" in pmu:
                rows.append(("pmu.ipc", jnum(pmu["ipc"]), "instructions per cycle"))
            for k, v in sorted((pmu.get("per_million_loops") or {}).items()):
                rows.append(("pmu.per_million_loops.%s" % k, jnum(v),
                             "%s per million loops" % k.replace("_", " ")))
    return rows


def warnings_of(result):
    """The warnings a reader should see, from the result's own fields."""
    w = []
    host = result.get("host") or {}
    rt = host.get("rt_throttling")
    if isinstance(rt, dict) and rt.get("enabled"):
        w.append("RT throttling is enabled: SCHED_FIFO threads get %s us of every %s us "
                 "(kernel.sched_rt_runtime_us, kernel.sched_rt_period_us)"
                 % (jnum(rt.get("runtime_us")), jnum(rt.get("period_us"))))
    if host.get("virtualised"):
        w.append("virtualised host (hypervisor %s): the hypervisor can take the CPU "
                 "without any kernel event in the guest" % jnum(host.get("hypervisor")))
    if result.get("partial"):
        w.append("partial run: it was stopped early; the numbers cover what was measured")
    for r in result.get("runs", []):
        o = r.get("outliers") if isinstance(r, dict) else None
        if isinstance(o, dict) and o.get("dropped"):
            w.append("run %s: %s outliers did not fit the log (outliers.dropped); they are "
                     "counted, not in outliers.csv" % (r.get("name"), jnum(o["dropped"])))
        if isinstance(r, dict) and r.get("partial"):
            w.append("run %s was cut short" % r.get("name"))
    a = result.get("attribution")
    if isinstance(a, dict):
        tr = a.get("tracer") or {}
        if tr.get("dropped"):
            w.append("the tracer dropped %s events (attribution.tracer.dropped): causes may "
                     "be missing" % jnum(tr["dropped"]))
        w += ["attribution: %s" % x for x in a.get("warnings") or []]
    w += list(result.get("warnings") or [])
    return w


def host_rows(host):
    rows = []
    for k, v in host.items():
        if isinstance(v, dict):
            rows += [("%s.%s" % (k, k2), jnum(v2)) for k2, v2 in v.items()]
        else:
            rows.append((k, jnum(v)))
    return rows


def img(name, data, alt):
    return '<figure><img src="data:image/png;base64,%s" alt="%s"><figcaption>%s ' \
           '(<a href="%s.png">%s.png</a>)</figcaption></figure>' % (
               base64.b64encode(data).decode("ascii"), esc(alt), esc(alt), name, name)


CSS = """
body{font-family:sans-serif;margin:1.5em;max-width:1100px;color:#222}
table{border-collapse:collapse;margin:0.5em 0 1.2em}
td,th{border:1px solid #ccc;padding:2px 8px;font-size:13px;text-align:left;vertical-align:top}
th{background:#eee} td.num{text-align:right}
figure{margin:0.5em 0 1.5em} img{max-width:100%;border:1px solid #ddd}
pre{background:#f6f6f6;padding:8px;font-size:12px;overflow-x:auto}
.warn li{color:#a40}
"""


def result_section(label, result):
    """The tables of one result."""
    out = ["<h2>%s</h2>" % esc(label)]
    f = result_figures(result)
    out.append(table([
        ("tool", jnum(result.get("tool"))),
        ("started_at", jnum(result.get("started_at"))),
        ("ended_at", jnum(result.get("ended_at"))),
        ("command", " ".join(str(c) for c in result.get("command") or [])),
        ("jtr_version", jnum(result.get("jtr_version"))),
        ("partial", jnum(result.get("partial"))),
        ("CPUs", ", ".join(str(c) for c in f["cpus"])),
    ], head=("field", "value")))
    w = warnings_of(result)
    out.append("<h3>Warnings</h3>")
    out.append('<ul class="warn">%s</ul>' % "".join("<li>%s</li>" % esc(x) for x in w)
               if w else "<p>none</p>")
    for run in result.get("runs", []):
        if not isinstance(run, dict):
            continue
        out.append("<h3>Run %s (CPU %s)</h3>" % (esc(run.get("name")), esc(jnum(run.get("cpu")))))
        out.append(table(run_rows(run), head=("result.json field", "value", "reading"),
                         cls="run"))
    a = result.get("attribution")
    if isinstance(a, dict):
        out.append("<h3>Causes (attribution)</h3>")
        o = a.get("outliers") or {}
        tr = a.get("tracer") or {}
        out.append("<p>%s outliers, %s ns of outlier time, %s ns covered by kernel events; "
                   "tracer: %s backend, %s events, %s dropped</p>" % (
                       esc(jnum(o.get("count"))), esc(jnum(o.get("total_ns"))),
                       esc(jnum(o.get("traced_ns"))), esc(tr.get("backend") or "unknown"),
                       esc(jnum(tr.get("events"))), esc(jnum(tr.get("dropped")))))
        cost = cost_text(tr)
        if cost:
            out.append("<p>Tracer %s</p>" % esc(cost))
        out.append(table([(c.get("category"), c.get("name"), jnum(c.get("count")),
                           jnum(c.get("primary_count")), jnum(c.get("total_ns")),
                           jnum(c.get("share")), jnum(c.get("p50_ns")), jnum(c.get("max_ns")),
                           jnum(c.get("per_s"))) for c in a.get("causes") or []],
                         head=("category", "name", "count", "primary_count", "total_ns",
                               "share", "p50_ns", "max_ns", "per_s")))
        out.append("<h3>Worst outliers</h3>")
        out.append(table([(jnum(x.get("cpu")), jnum(x.get("start_ns")),
                           jnum(x.get("length_ns")), fmt_ns(x.get("length_ns")),
                           x.get("category"), x.get("name"), x.get("chain"))
                          for x in a.get("worst") or []],
                         head=("cpu", "start_ns", "length_ns", "reading", "category",
                               "name", "chain")))
    host = result.get("host") or {}
    out.append("<h3>Tuning profile</h3><p>%s</p>" % (
        esc(host.get("tuning_profile")) if host.get("tuning_profile")
        else "none active (host.tuning_profile is null)"))
    out.append("<h3>Host</h3>")
    out.append(table(host_rows(host), head=("host field", "value")))
    out.append("<h3>Parameters</h3>")
    out.append(table([(k, jnum(v)) for k, v in (result.get("params") or {}).items()],
                     head=("params field", "value")))
    return "\n".join(out)


def compare_section(c):
    from .compare import format_table
    rows = [(m["name"], m["unit"], jnum(m["a"]), jnum(m["b"]), jnum(m["diff"]),
             "%s .. %s" % (jnum(m["ci"][0]), jnum(m["ci"][1])), m["change"] or "")
            for m in c["metrics"]]
    return "\n".join([
        "<h2>Comparison (jtr compare)</h2>",
        "<p><b>verdict:</b> %s</p>" % esc(c["verdict_text"]),
        table(rows, head=("metric", "unit", "A", "B", "B-A", "%g %% CI of B-A"
                          % c["method"]["confidence"], "change")),
        "<pre>%s</pre>" % esc("\n".join(format_table(c))),
    ])


def build(paths, results, opts=None):
    """{name: png bytes}, the HTML text of the report and {name: text} of the
    seed-style files."""
    opts = opts or {}
    plt = _plt()
    pngs = {}
    labels = [os.path.basename(result_dir(p)) or p for p in paths]
    if len(results) == 1:
        runs = [r for r in results[0].get("runs", []) if isinstance(r, dict)
                and isinstance(r.get("histogram"), dict)]
        cmap = plt.get_cmap("tab10")
        hs = [(r.get("name") or "run %d" % i, r["histogram"]["buckets"], cmap(i % 10))
              for i, r in enumerate(runs)]
        sp = [(r.get("name") or "run %d" % i,
               spectrum(r["histogram"]["buckets"], r.get("min_ns", 0), r.get("max_ns", 0)),
               cmap(i % 10)) for i, r in enumerate(runs)]
    else:
        hs, sp = [], []
        for tag, label, res, colour in zip("AB", labels, results, SIDE_COLOURS):
            m = merged_histogram(measured_runs(res))
            if m:
                hs.append(("%s: %s" % (tag, label), m[0], colour))
                sp.append(("%s: %s" % (tag, label), spectrum(*m), colour))
    if hs:
        pngs["histogram"] = plot_histogram(plt, hs)
        pngs["percentiles"] = plot_spectrum(plt, sp)
    for i, (p, res) in enumerate(zip(paths, results)):
        a = res.get("attribution")
        if not isinstance(a, dict):
            continue
        suffix = "" if len(results) == 1 else "-" + "ab"[i]
        outl = read_outliers(result_dir(p), res)
        if outl or a.get("worst"):
            pngs["timeline" + suffix] = plot_timeline(plt, res, outl)
        if a.get("causes"):
            pngs["causes" + suffix] = plot_causes(plt, a["causes"])
    cmp = None
    if len(results) == 2:
        from .compare import compare
        cmp = compare(results[:1], results[1:], labels_a=paths[:1], labels_b=paths[1:])
    title = "jtr report: " + " vs ".join(labels)
    body = ["<h1>%s</h1>" % esc(title)]
    if cmp:
        body.append(compare_section(cmp))
    captions = {"histogram": "Histogram of loop times, counts on a log scale",
                "percentiles": "Percentile spectrum, 50 % to 99.999 %",
                "timeline": "Outlier timeline coloured by cause",
                "causes": "Outlier time per cause"}
    for name, data in pngs.items():
        base = name.split("-")[0]
        cap = captions[base] + ("" if name == base else " (%s)" % name.split("-")[1].upper())
        body.append(img(name, data, cap))
    seed, texts = seed_graphs(plt, file_stems(labels), results, every=opts.get("gnuplot"),
                              nb=opts.get("histo_buckets"))
    body.append(seed_section(seed, texts))
    pngs.update(seed)
    for tag, label, res in zip(("", "") if len(results) == 1 else ("A: ", "B: "),
                               labels, results):
        body.append(result_section(tag + label, res))
    return pngs, page_html(title, body), texts


def page_html(title, body):
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            "<title>%s</title><style>%s</style></head><body>\n%s\n</body></html>\n"
            % (esc(title), CSS, "\n".join(b for b in body if b)))


def write_png(path, data):
    tmp = os.path.join(os.path.dirname(path), ".%s.tmp-%d" % (os.path.basename(path),
                                                              os.getpid()))
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def prepare_out(out):
    """Create the output folder, or UsageError."""
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        raise UsageError("-o %s: cannot create the folder: %s" % (out, e.strerror or e))
    if not os.access(out, os.W_OK):
        raise UsageError("-o %s: the folder is not writable; choose another" % out)


def write_all(out, pngs, page, texts):
    """The PNGs, the seed-style files and report.html (last) into @out; the line
    jtr report prints."""
    for name, data in pngs.items():
        write_png(os.path.join(out, name + ".png"), data)
    for name, text in texts.items():
        write_atomic(os.path.join(out, name), text)
    write_atomic(os.path.join(out, "report.html"), page)
    files = [n + ".png" for n in pngs] + list(texts)
    shown = files if len(files) <= 8 else files[:6] + ["... %d files" % len(files)]
    return "jtr report: %s (%s)" % (os.path.join(out, "report.html"),
                                    ", ".join(shown) or "no plots")


def main(args):
    if any(a in ("-h", "--help") for a in args):
        sys.stdout.write(USAGE)
        return 0
    out, paths, opts = parse_args(args)
    if len(paths) == 1 and os.path.isfile(os.path.join(paths[0], "suite.json")):
        from . import suite
        return suite.report_main(paths[0], out, opts)
    results = [load_result(p) for p in paths]
    if len(results) == 2:
        from .compare import check_result
        for p, r in zip(paths, results):
            check_result(r, p)
    out = out or default_out(paths)
    prepare_out(out)
    print(write_all(out, *build(paths, results, opts)))
    return 0
