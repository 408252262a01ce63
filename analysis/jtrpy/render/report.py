"""report - the HTML page of one result, or of two compared (jtr report):
headline tables, plots, causes, the 10 ns graphs, host and parameters.

Numbers in the tables are the values of result.json as written (JSON's own
spelling), with a reading for people beside them; the plots are drawn from the
result's histograms (hist.py's percentile rule), outliers.csv and the
attribution. Two results add overlays and jtr compare's table.
"""
import os

from ..errors import UsageError
from ..results.figures import merged_histogram, result_figures
from ..results.outliers import by_cpu, read_outliers
from ..results.quantity import select
from ..stats.compare import compare
from . import plots
from .attribution import cost_text
from .compare import format_table as compare_table
from .html import esc, fmt_ns, img, jnum, page_html, table


def legacy_section(pngs, texts, captions=None):
    """The page's part for the 10 ns graphs and files."""
    if not pngs and not texts:
        return ""
    out = ["<h2>10 ns graphs (jtr_null's gnuplot format)</h2>",
           "<p>10 ns buckets, counts on a log scale; the data files are in jtr_null's "
           "gnuplot format (docs/compat.md): %s</p>"
           % ", ".join('<a href="%s">%s</a>' % (esc(t), esc(t)) for t in texts)]
    for name, data in pngs.items():
        out.append(img(name, data, (captions or {}).get(name, name)))
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


def quantity_text(q):
    """'rtt_from_intended: 1 run, 200000 samples (the round trip from the intended
    send time); also in the result: rtt_from_send, send_call'."""
    return q.describe() + (" (the %s)" % q.measures if q.measures else "") + (
        "; also in the result: %s" % ", ".join(q.others) if q.others else "")


def result_section(label, result, quantity=None):
    """The tables of one result, its headline on @quantity (None: its default)."""
    out = ["<h2>%s</h2>" % esc(label)]
    f = result_figures(result, quantity)
    out.append(table([
        ("tool", jnum(result.get("tool"))),
        ("quantity", quantity_text(select(result, quantity))),
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
    rows = [(m["name"], m["unit"], jnum(m["a"]), jnum(m["b"]), jnum(m["diff"]),
             "%s .. %s" % (jnum(m["ci"][0]), jnum(m["ci"][1])), m["change"] or "")
            for m in c["metrics"]]
    return "\n".join([
        "<h2>Comparison (jtr compare)</h2>",
        "<p><b>verdict:</b> %s</p>" % esc(c["verdict_text"]),
        table(rows, head=("metric", "unit", "A", "B", "B-A", "%g %% CI of B-A"
                          % c["method"]["confidence"], "change")),
        "<pre>%s</pre>" % esc("\n".join(compare_table(c))),
    ])


def build(results, given, opts=None):
    """{name: png bytes}, the HTML text of the report and {name: text} of the
    jtr_null-format files, of one or two Results (@given: how the user named them).
    @opts: gnuplot, histo_buckets, quantity (None: each result's default; one
    result's plots show each run, or only those of a quantity asked for; two
    results are overlaid and compared on it) and mixed (compare two quantities
    that measure different things)."""
    opts = opts or {}
    quantity = opts.get("quantity")
    plt = plots.pyplot()
    pngs = {}
    labels = [os.path.basename(os.path.abspath(r.folder)) or g for r, g in zip(results, given)]
    if len(results) == 1:
        runs = [r for r in (select(results[0], quantity, given[0]).runs if quantity
                            else results[0].get("runs", []))
                if isinstance(r, dict) and isinstance(r.get("histogram"), dict)]
        cmap = plt.get_cmap("tab10")
        hs = [(r.get("name") or "run %d" % i, r["histogram"]["buckets"], cmap(i % 10))
              for i, r in enumerate(runs)]
        sp = [(r.get("name") or "run %d" % i,
               plots.spectrum(r["histogram"]["buckets"], r.get("min_ns", 0), r.get("max_ns", 0)),
               cmap(i % 10)) for i, r in enumerate(runs)]
    else:
        hs, sp = [], []
        for tag, label, res, colour in zip("AB", labels, results, plots.SIDE_COLOURS):
            q = select(res, quantity, label)
            m = merged_histogram(q.runs)
            if m:
                hs.append(("%s: %s (%s)" % (tag, label, q.name), m[0], colour))
                sp.append(("%s: %s (%s)" % (tag, label, q.name), plots.spectrum(*m), colour))
    if hs:
        what = "%s (ns)" % (select(results[0], quantity, labels[0]).measures or "value")
        pngs["histogram"] = plots.plot_histogram(plt, hs, what)
        pngs["percentiles"] = plots.plot_spectrum(plt, sp, what)
    for i, res in enumerate(results):
        a = res.get("attribution")
        if not isinstance(a, dict):
            continue
        suffix = "" if len(results) == 1 else "-" + "ab"[i]
        try:
            outl = by_cpu(read_outliers(res))
        except UsageError:
            outl = {}       # no outlier log (or a damaged one): the worst outliers only
        if outl or a.get("worst"):
            pngs["timeline" + suffix] = plots.plot_timeline(plt, res, outl)
        if a.get("causes"):
            pngs["causes" + suffix] = plots.plot_causes(plt, a["causes"])
    cmp = None
    if len(results) == 2:
        cmp = compare(results[:1], results[1:], labels_a=given[:1], labels_b=given[1:],
                      quantity=quantity, mixed=opts.get("mixed"))
    title = "jtr report: " + " vs ".join(labels)
    body = ["<h1>%s</h1>" % esc(title)]
    if cmp:
        body.append(compare_section(cmp))
    measure = select(results[0], quantity, labels[0]).measures or "values"
    captions = {"histogram": "Histogram of %s, counts on a log scale" % (
                    "loop times" if measure == "loop time" else measure),
                "percentiles": "Percentile spectrum, 50 % to 99.999 %",
                "timeline": "Outlier timeline coloured by cause",
                "causes": "Outlier time per cause"}
    for name, data in pngs.items():
        base = name.split("-")[0]
        cap = captions[base] + ("" if name == base else " (%s)" % name.split("-")[1].upper())
        body.append(img(name, data, cap))
    graphs, texts = plots.legacy_graphs(plt, plots.file_stems(labels), results,
                                    every=opts.get("gnuplot"), nb=opts.get("histo_buckets"))
    body.append(legacy_section(graphs, texts))
    pngs.update(graphs)
    for tag, label, res in zip(("", "") if len(results) == 1 else ("A: ", "B: "),
                               labels, results):
        body.append(result_section(tag + label, res, quantity))
    return pngs, page_html(title, body), texts


