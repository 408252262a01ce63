# SPDX-License-Identifier: GPL-2.0-only
"""compare_page - the HTML page of two results compared (jtr report A B): the
verdict first, jtr compare's table once, A's and B's tails on one plot (CCDF),
what changed per cause, A | B side by side (each result's summary), the host
facts in one table with the differences marked, and the 10 ns graphs.

The numbers are jtr compare's (stats/compare.py), written as its table writes
them (render/compare.py); the summaries are the single-result page's."""
import os

from ..results.figures import merged_histogram
from ..results.quantity import select
from ..units import fmt_ns
from . import compare_plots, plots
from .compare import change_word, fmt_ci, fmt_diff, fmt_pct, fmt_value, min_effect_text
from .html import esc, img, page_html, svg_figure, table

TABLE_CAUSES = 10
VERDICT_COLOURS = {"better": "#1a7f37", "worse": "#c62828", "mixed": "#b26a00"}
CSS = """
.verdict{border:2px solid #888;border-radius:6px;padding:10px 14px;margin:0.8em 0 1.2em}
.verdict h2{margin:0 0 6px}
.verdict li{margin:2px 0}
.sides{display:grid;grid-template-columns:1fr 1fr;gap:18px}
.sides>div{min-width:0;overflow-x:auto}
tr.differs td{background:#fff3cd;font-weight:bold}
td.num{white-space:nowrap}
td.change-worse{color:#c62828;font-weight:bold} td.change-better{color:#1a7f37;font-weight:bold}
"""


def _labels(results, given):
    return [os.path.basename(os.path.abspath(r.folder)) or g for r, g in zip(results, given)]


# --- the verdict and the table ----------------------------------------------

def verdict_section(c, labels):
    """The verdict in words at the top: what decided it (or why none), why the
    sides are not comparable, what to do for a surer answer."""
    v = c["verdict"]
    colour = VERDICT_COLOURS.get(v, "#555555")
    out = ['<section class="verdict" style="border-color:%s">' % colour,
           '<h2 style="color:%s">Verdict: %s</h2>' % (colour, esc(v))]
    out.append("<p>B (%s) against A (%s), on %s.</p>" % (
        esc(labels[1]), esc(labels[0]), esc(_quantity_text(c))))
    items = []
    if not c.get("comparable", True):
        items += ["not comparable: %s" % x for x in c["not_comparable"]]
        items.append("the numbers below are shown, not judged")
    else:
        head, _, rest = c["verdict_text"].partition(": ")
        # the metrics that decided (or did not), one a line, without the notes
        detail = rest.split(" (one result per side")[0]
        for s in c["suggestions"]:
            detail = detail.replace("; " + s, "")
        items += [x.replace(" ", ": ", 1) if head.startswith("no significant") else x
                  for x in detail.split("; ") if x]
        if not any(m["a_range"] for m in c["metrics"]):
            items.append("one result per side: the confidence intervals cover the sampling "
                         "noise within each run, not the variation from run to run")
    items += c["suggestions"]
    out.append("<ul>%s</ul>" % "".join("<li>%s</li>" % esc(x) for x in items))
    out.append("<p><small>A key metric (%s) counts as changed when its %g %% confidence "
               "interval excludes 0 and the change is at least %s (jtr compare "
               "--min-effect, --min-effect-pct; docs/compare.md).</small></p>" % (
                   esc(", ".join(m["name"] for m in c["metrics"] if m["key"])),
                   c["method"]["confidence"], esc(min_effect_text(c["method"], c["metrics"]))))
    if c["warnings"]:
        out.append('<ul class="warn">%s</ul>' % "".join(
            "<li>%s</li>" % esc(w) for w in c["warnings"]))
    out.append("</section>")
    return "\n".join(out)


def _quantity_text(c):
    """'gap (the loop time)', or "A's oslat against B's gap"."""
    qa, qb = c["a"]["quantity"], c["b"]["quantity"]
    if qa != qb:
        return "A's %s against B's %s" % (qa, qb)
    return "%s (the %s)" % (qa, c["a"]["measures"]) if c["a"]["measures"] else qa


def metrics_table(c):
    """jtr compare's table in people's units, once."""
    conf = c["method"]["confidence"]
    reps = any(m["a_range"] or m["b_range"] for m in c["metrics"])
    head = ["", "A", "B", "B-A", "B-A %", "%g %% CI of B-A" % conf, "change"]
    rows = []
    for m in c["metrics"]:
        word = change_word(c, m)
        cells = [esc(m["name"] + (" (key)" if m["key"] else "")), esc(fmt_value(m, m["a"])),
                 esc(fmt_value(m, m["b"])), esc(fmt_diff(m)), esc(fmt_pct(m["diff_pct"])),
                 esc(fmt_ci(m))]
        cls = ' class="change-%s"' % word if word in ("worse", "better") else ""
        note = " (%s)" % m["why"] if word == "small" else ""
        rows.append("<tr><td>%s</td>%s<td%s>%s</td></tr>" % (
            cells[0], "".join('<td class="num">%s</td>' % x for x in cells[1:]), cls,
            esc(word + note)))
    out = ["<table><tr>%s</tr>%s</table>" % ("".join("<th>%s</th>" % esc(h) for h in head),
                                              "".join(rows))]
    if reps:
        out.append(table([(m["name"], _range(m, m["a_range"]), _range(m, m["b_range"]))
                          for m in c["metrics"]], head=("", "A runs", "B runs")))
    return "\n".join(out)


def _range(m, r):
    return "%s .. %s" % (fmt_value(m, r[0]), fmt_value(m, r[1])) if r else ""


# --- causes -------------------------------------------------------------------

def causes_section(c, plt, pngs):
    out = ["<h2>What changed per cause</h2>"]
    if c["causes"] is None:
        which = [s.upper() for s in ("a", "b") if not c[s]["attributed"]]
        out.append("<p>Not compared: %s not attributed (jtr run as root traces the kernel's "
                   "events; jtr attribute adds them to a traced result).</p>"
                   % " and ".join(which))
        return "\n".join(out)
    if not c["causes"]:
        out.append("<p>Neither side had outliers to attribute.</p>")
        return "\n".join(out)
    png, svg = plots.png_and_svg(plt, compare_plots.delta_figure(plt, c["causes"]))
    pngs["causes-delta"] = png
    out.append(svg_figure(svg, "Outlier time per second of run, B less A, per cause "
                               "(largest change first, coloured by category)",
                          "causes-delta"))
    rows = []
    for r in c["causes"][:TABLE_CAUSES]:
        d = r["diff_ns_per_s"]
        rows.append((r["category"], r["name"], compare_plots.per_s(r["a_ns_per_s"]),
                     compare_plots.per_s(r["b_ns_per_s"]),
                     ("+" if d > 0 else "-" if d < 0 else "") + compare_plots.per_s(abs(d)),
                     "%.1f %%" % (100 * r["a_share"]), "%.1f %%" % (100 * r["b_share"])))
    out.append(table(rows, head=("category", "cause", "A", "B", "B-A", "A share",
                                 "B share")))
    more = len(c["causes"]) - TABLE_CAUSES
    if more > 0:
        out.append("<p>%d more causes in jtr compare --json.</p>" % more)
    return "\n".join(out)


# --- host ----------------------------------------------------------------------

def _flat(host):
    out = {}
    for k, v in (host or {}).items():
        if isinstance(v, dict):
            for k2, v2 in v.items():
                out["%s.%s" % (k, k2)] = v2
        else:
            out[k] = v
    return out


def _value(v):
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, list):
        return ", ".join(str(x) for x in v) or "none"
    return str(v)


def host_section(results):
    """One table of the host facts of A and B, the rows that differ first and
    marked."""
    fa, fb = _flat(results[0].get("host")), _flat(results[1].get("host"))
    keys = list(fa) + [k for k in fb if k not in fa]
    differ = [k for k in keys if fa.get(k) != fb.get(k)]
    same = [k for k in keys if k not in differ]
    rows = ['<tr class="differs"><td>%s</td><td>%s</td><td>%s</td></tr>'
            % (esc(k), esc(_value(fa.get(k))), esc(_value(fb.get(k)))) for k in differ]
    rows += ["<tr><td>%s</td><td>%s</td><td>%s</td></tr>"
             % (esc(k), esc(_value(fa.get(k))), esc(_value(fb.get(k)))) for k in same]
    head = "<p>%s</p>" % ("%d of %d host facts differ (marked, first)." % (len(differ), len(keys))
                          if differ else "The host facts are the same.")
    return "<h2>Host</h2>%s<table><tr><th>host fact</th><th>A</th><th>B</th></tr>%s</table>" \
        % (head, "".join(rows))


# --- the page -------------------------------------------------------------------

def ccdf_section(c, results, labels, quantity, plt, pngs):
    series = []
    for tag, label, res, colour in zip("AB", labels, results, plots.SIDE_COLOURS):
        q = select(res, quantity, label)
        m = merged_histogram(q.runs)
        if m:
            series.append(("%s: %s" % (tag, label), m[0], m[1], m[2], colour))
    if not series:
        return ""
    what = c["a"]["measures"] or c["a"]["quantity"]
    png, svg = plots.png_and_svg(plt, compare_plots.ccdf_figure(plt, series, what))
    pngs["ccdf"] = png
    maxes = ", ".join("%s %s" % (s[0].split(":")[0], fmt_ns(s[3])) for s in series)
    return "<h2>The tails of A and B</h2>" + svg_figure(
        svg, "Share of samples above each value (log axes): the lower and further left a "
             "line, the fewer and shorter its slow samples; each line ends at its side's "
             "maximum (%s)" % maxes, "ccdf")


def legacy_details(graphs, texts):
    """jtr_null's 10 ns graphs and files, folded away."""
    if not graphs and not texts:
        return ""
    out = ["<details><summary>10 ns graphs (jtr_null's gnuplot format)</summary>",
           "<p>10 ns buckets, counts on a log scale; the data files: %s</p>" % ", ".join(
               '<a href="%s">%s</a>' % (esc(t), esc(t)) for t in texts)]
    out += [img(name, data, name) for name, data in graphs.items()]
    out.append("</details>")
    return "\n".join(out)


def build(results, given, opts, summary, c):
    """({name: png bytes}, the page, {name: text}) of two Results compared (@given:
    how the user named them; @c: stats.compare's comparison of them). @opts:
    gnuplot, histo_buckets, quantity; @summary(label, result, quantity): the
    single-result page's summary section of a result."""
    opts = opts or {}
    quantity = opts.get("quantity")
    labels = _labels(results, given)
    plt = plots.pyplot()
    pngs = {}
    title = "jtr report: %s vs %s" % tuple(labels)
    body = ["<style>%s</style>" % CSS, "<h1>%s</h1>" % esc(title)]
    body.append(verdict_section(c, labels))
    body.append("<h2>A against B</h2>")
    body.append(metrics_table(c))
    body.append(ccdf_section(c, results, labels, quantity, plt, pngs))
    body.append(causes_section(c, plt, pngs))
    body.append('<h2>A | B</h2><div class="sides"><div>%s</div><div>%s</div></div>' % (
        summary("A: " + labels[0], results[0], quantity),
        summary("B: " + labels[1], results[1], quantity)))
    body.append(host_section(results))
    graphs, texts = plots.legacy_graphs(plt, plots.file_stems(labels), results,
                                        every=opts.get("gnuplot"), nb=opts.get("histo_buckets"))
    pngs.update(graphs)
    body.append(legacy_details(graphs, texts))
    return pngs, page_html(title, body), texts
