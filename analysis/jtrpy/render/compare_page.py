# SPDX-License-Identifier: GPL-2.0-only
"""compare_page - the HTML page of two results compared (jtr report A B): the
verdict first, jtr compare's table once, A's and B's percentile spectra on one plot,
what changed per cause, A | B side by side (each result's summary), the host
facts in one table with the differences marked, and the 10 ns graphs.

The numbers are jtr compare's (stats/compare.py), written as its table writes
them (render/compare.py); the summaries are the single-result page's."""
import os

from ..results.figures import merged_histogram
from ..results.quantity import select
from ..units import fmt_ns
from . import compare_plots, plots
from .compare import (
    NOT_JUDGED,
    cause_interval,
    change_word,
    extreme_cells,
    fmt_ci,
    fmt_diff,
    fmt_pct,
    fmt_value,
    min_effect_text,
)
from .html import esc, img, page_html, svg_figure, table
from .report import hypervisor_name

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
        if c["verdict"] == "no significant change":
            # why each key metric did not count, one a line
            items += ["%s: %s" % (m["name"], m["why"]) for m in c["metrics"] if m["key"]]
        else:
            _, _, rest = c["verdict_text"].partition(": ")
            # the metrics that decided (or did not), one a line, without the notes
            detail = rest.split(" (one result per side")[0]
            for s in c["suggestions"]:
                detail = detail.replace("; " + s, "")
            items += [x for x in detail.split("; ") if x]
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
    for m in c.get("extremes") or ():
        rows.append('<tr class="extreme"><td>%s</td>%s<td>%s</td></tr>' % (
            esc(m["name"]), "".join('<td class="num">%s</td>' % esc(x)
                                    for x in extreme_cells(m)), NOT_JUDGED))
    out = ["<table><tr>%s</tr>%s</table>" % ("".join("<th>%s</th>" % esc(h) for h in head),
                                              "".join(rows))]
    out.append("<p><small>Only the key metrics decide the verdict (worse, better: in "
               "colour); the others say higher or lower. The max is one sample and the "
               "counts follow the durations: shown, not judged.</small></p>")
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
    reps = c["causes"][0].get("a_range") is not None
    out.append("<p>%s</p>" % esc(
        "Each side's range over its results beside the change: a change within the wider "
        "range is run-to-run noise, not a change." if reps else
        "One run each: no interval for a cause's change. Two runs of one setup differ by "
        "themselves (the timer tick's time by several ms/s on a virtual machine): repeat "
        "each side (jtr ab PROFILE --repeat 3) to tell a change from noise."))
    head = ("category", "cause", "A", "B", "B-A", "A share", "B share") + \
        (("A and B over their results",) if reps else ())
    rows = [_cause_row(r, reps) for r in c["causes"]]
    out.append(table(rows[:TABLE_CAUSES], head=head))
    if len(rows) > TABLE_CAUSES:
        out.append("<details><summary>%d more causes</summary>%s</details>" % (
            len(rows) - TABLE_CAUSES, table(rows[TABLE_CAUSES:], head=head)))
    return "\n".join(out)


def _cause_row(r, reps):
    d = r["diff_ns_per_s"]
    return (r["category"], r["name"], compare_plots.per_s(r["a_ns_per_s"]),
            compare_plots.per_s(r["b_ns_per_s"]),
            ("+" if d > 0 else "-" if d < 0 else "") + compare_plots.per_s(abs(d)),
            "%.1f %%" % (100 * r["a_share"]), "%.1f %%" % (100 * r["b_share"])) + \
        ((cause_interval(r),) if reps else ())


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


def _rel_within(tol):
    """Two numbers the same within @tol of the larger (calibration noise)."""
    def same(a, b):
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b)):
            return a == b
        return abs(a - b) <= tol * max(abs(a), abs(b))
    return same


def _mhz(v):
    return "%.3f MHz" % (v / 1e6) if isinstance(v, (int, float)) else _value(v)


def _cpus(v):
    return _value(v) if v else "none"


# host facts in people's words: (key in result.json's host, flattened; label;
# how to show a value; when two values are the same). The TSC's frequency is
# calibrated at each start: 2445405679.6 and 2445406054.0 Hz (0.15 ppm) are
# one clock, so within 10 ppm is the same; its step is measured: within 10 %.
HOST_FACTS = [
    ("hostname", "host", _value, None),
    ("cpu_model", "CPU model", _value, None),
    ("machine", "architecture", _value, None),
    ("kernel", "kernel", _value, None),
    ("kernel_version", "kernel build", _value, None),
    ("cmdline", "kernel command line", _value, None),
    ("online_cpus", "online CPUs", _value, None),
    ("isolated_cpus", "isolated CPUs", _cpus, None),
    ("nohz_full_cpus", "nohz_full CPUs", _cpus, None),
    ("virtualised", "virtual machine", _value, None),
    ("hypervisor", "hypervisor", lambda v: hypervisor_name(v) or "-", None),
    ("clocksource", "clock source", _value, None),
    ("tsc_hz", "TSC frequency (the same within 10 ppm)", _mhz, _rel_within(10e-6)),
    ("tsc_invariant", "TSC invariant", _value, None),
    ("tsc_step_ns", "TSC step, ns (the same within 10 %)", _value, _rel_within(0.10)),
    ("rt_throttling.enabled", "RT throttling", _value, None),
    ("rt_throttling.runtime_us", "RT throttling: runtime per period, us", _value, None),
    ("rt_throttling.period_us", "RT throttling: period, us", _value, None),
    ("rt_throttling.sysctl_runtime_us", "kernel.sched_rt_runtime_us", _value, None),
    ("rt_throttling.cgroup", "RT throttling: cgroup", _value, None),
    ("tuning_profile", "tuning profile", lambda v: _value(v) if v else "none active", None),
]


def host_rows(results):
    """[(label, A, B, differs)] of the host facts of A and B, in people's words;
    a fact jtr does not name yet under its key."""
    fa, fb = _flat(results[0].get("host")), _flat(results[1].get("host"))
    known = {k for k, _, _, _ in HOST_FACTS}
    rows = []
    for key, label, show, same in HOST_FACTS + [
            (k, k, _value, None) for k in list(fa) + [k for k in fb if k not in fa]
            if k not in known]:
        if key not in fa and key not in fb:
            continue
        va, vb = fa.get(key), fb.get(key)
        rows.append((label, show(va), show(vb), not (same or (lambda x, y: x == y))(va, vb)))
    return rows


def host_section(results):
    """One table of the host facts of A and B in people's words, the rows that
    differ first and marked (numbers that are calibrated, not set, within their
    noise: the same)."""
    rows = host_rows(results)
    differ = [r for r in rows if r[3]]
    body = ['<tr class="differs"><td>%s</td><td>%s</td><td>%s</td></tr>'
            % (esc(r[0]), esc(r[1]), esc(r[2])) for r in differ]
    body += ["<tr><td>%s</td><td>%s</td><td>%s</td></tr>" % (esc(r[0]), esc(r[1]), esc(r[2]))
             for r in rows if not r[3]]
    head = "<p>%s</p>" % ("%d of %d host facts differ (marked, first)." % (len(differ), len(rows))
                          if differ else "The host facts are the same.")
    return "<h2>Host</h2>%s<table><tr><th>host fact</th><th>A</th><th>B</th></tr>%s</table>" \
        % (head, "".join(body))


# --- the page -------------------------------------------------------------------

def spectra_section(c, results, labels, quantity, plt, pngs):
    series = []
    for tag, label, res, colour in zip("AB", labels, results, plots.SIDE_COLOURS):
        q = select(res, quantity, label)
        m = merged_histogram(q.runs)
        if m:
            series.append(("%s: %s" % (tag, label), m[0], m[1], m[2], colour))
    if not series:
        return ""
    what = c["a"]["measures"] or c["a"]["quantity"]
    png, svg = plots.png_and_svg(plt, compare_plots.spectra_figure(plt, series, what))
    pngs["spectra"] = png
    maxes = ", ".join("%s %s" % (s[0].split(":")[0], fmt_ns(s[3])) for s in series)
    return "<h2>The tails of A and B</h2>" + svg_figure(
        svg, "The percentile spectra of A and B, as every page draws one (x: the "
             "percentile, y: the value, log axes): the lower a line, the shorter its "
             "samples at that percentile; each line ends at its side's maximum (%s)" % maxes,
        "spectra")


def legacy_details(graphs, texts):
    """jtr_null's 10 ns graphs and files, folded away."""
    if not graphs and not texts:
        return ""
    out = ["<details><summary>10 ns graphs (jtr_null's gnuplot format)</summary>",
           "<p>10 ns buckets, counts on a log scale, as far as 99.9 %% of the samples "
           "reach (--histo-buckets sets it): the tail past them is on the spectra above, "
           "to each side's max. The data files: %s</p>" % ", ".join(
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
    body.append(spectra_section(c, results, labels, quantity, plt, pngs))
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
