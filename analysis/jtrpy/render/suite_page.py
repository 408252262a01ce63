# SPDX-License-Identifier: GPL-2.0-only
"""suite_page - the HTML page of a jtr suite folder: the warnings once, every
item in one table (people's units), the tails of every item on one plot, and
per item its runs as small multiples ranged to their data (a send item's runs
beside their null loop, the clock_gettime-timed null loop beside the RDTSC
one), its numbers, and its jtr_null-format files: the 10 ns graphs (PNG) and
the .gp and .txt files, written beside the page and linked from it."""
import math
import os

from ..formats import legacy
from ..results.figures import merged_histogram, result_figures, run_pairs
from ..results.quantity import select
from ..units import fmt_ns
from . import compare_plots, plots
from .html import esc, page_html, svg_figure, table
from .report import warnings_of

PANEL_COLUMNS = 3


def _ns(v):
    return fmt_ns(v) if isinstance(v, (int, float)) else ""


def warnings_once(entries, loaded):
    """Every item's warnings, each said once with the items it concerns."""
    seen = {}
    for e in entries:
        r = loaded.get(e["name"])
        for w in warnings_of(r) if r else []:
            seen.setdefault(w, []).append(e["name"])
    if not seen:
        return ""
    n = len(loaded)
    items = ["<li>%s <small>(%s)</small></li>" % (
        esc(w), "every item" if len(names) == n and n > 1 else esc(", ".join(names)))
        for w, names in seen.items()]
    return '<h2>Warnings</h2><ul class="warn">%s</ul>' % "".join(items)


def items_table(entries, loaded, why):
    rows = []
    for e in entries:
        r = loaded.get(e["name"])
        f = result_figures(r) if r else {}
        pc = f.get("percentiles_ns") or {}
        lost = f.get("lost_pct")
        rows.append((e["name"], e.get("tool") or "", e.get("status") or "",
                     f.get("quantity") or "", "{:,}".format(f["samples"]) if r else "",
                     _ns(pc.get("50")), _ns(pc.get("99")), _ns(pc.get("99.99")),
                     _ns(f.get("max_ns")), "%.3f %%" % lost if lost is not None else "",
                     e.get("why") or why.get(e["name"]) or ""))
    return table(rows, head=("item", "tool", "status", "quantity", "samples", "p50", "p99",
                             "p99.99", "max", "time lost", "why not run"))


# --- the plots --------------------------------------------------------------

def panels_of(name, result, partner=None):
    """[(title, [(label, buckets, colour)])]: one panel per run of @result, a
    send run with its null run, a run of @partner's result (the RDTSC null loop
    of a null-clock item) beside the run of the same number."""
    pairs = run_pairs(result)
    if pairs:
        return [("%s %d" % (kind, k), [(run.get("name"), run["histogram"]["buckets"],
                                        plots.SIDE_COLOURS[1]),
                                       (null.get("name"), null["histogram"]["buckets"],
                                        plots.SIDE_COLOURS[0])])
                for kind, k, run, null in pairs]
    theirs = legacy.plottable_runs(partner[1]) if partner else []
    out = []
    for k, run in enumerate(legacy.plottable_runs(result)):
        series = [("%s %s" % (name, run.get("name")), run["histogram"]["buckets"],
                   plots.SIDE_COLOURS[1] if theirs else plots.SIDE_COLOURS[0])]
        if k < len(theirs):
            series.append(("%s %s" % (partner[0], theirs[k].get("name")),
                           theirs[k]["histogram"]["buckets"], plots.SIDE_COLOURS[0]))
        out.append((str(run.get("name") or "run %d" % (k + 1)), series))
    return out


def few_ticks(lo, hi, most=4):
    """At most @most ticks of a log axis from @lo to @hi: 1-2-5 a decade, thinned;
    @lo and @hi themselves when none falls between."""
    def between(subs):
        return [m * 10 ** k for k in range(int(math.floor(math.log10(lo))),
                                           int(math.ceil(math.log10(hi))) + 1)
                for m in subs if lo <= m * 10 ** k <= hi]
    cands = between((1,))
    if len(cands) < 3:
        cands = between((1, 2, 5))
    while len(cands) > most:
        cands = cands[::2]
    return cands if len(cands) >= 2 else sorted({lo, hi})


ZERO_X = 0.5      # where a panel's log axis draws the samples of 0 ns (a coarse clock's)


def panels_figure(plt, panels, what="loop time"):
    """Small multiples: one histogram per panel (counts on a log scale, x on a
    log scale), up to PANEL_COLUMNS a row, every panel on one x range (they are
    compared side by side); samples of 0 ns (a coarse clock's: every read in one
    tick) drawn at ZERO_X, labelled 0, rather than off a log axis."""
    cols = min(PANEL_COLUMNS, len(panels))
    rows = int(math.ceil(len(panels) / float(cols)))
    fig, axes = plt.subplots(rows, cols, figsize=(9, 2.7 * rows + 0.5), squeeze=False)
    filled = [b for _, series in panels for _, bs, _ in series for b in bs if b[2]]
    lo = min((b[0] for b in filled), default=1)
    hi = max((b[1] for b in filled), default=2)
    zero = any(b[1] < 1 for b in filled)
    for ax, (title, series) in zip([a for row in axes for a in row], panels):
        top = 1
        for label, buckets, colour in series:
            xs = [ZERO_X if b[1] < 1 else max((b[0] + b[1]) / 2.0, 1) for b in buckets if b[2]]
            ys = [b[2] for b in buckets if b[2]]
            top = max([top] + ys)
            ax.vlines(xs, 0.8, ys, colors=colour, alpha=0.7, linewidth=1.2)
            ax.plot(xs, ys, ".", color=colour, markersize=3, label=label)
        ax.set_yscale("log")
        plots.log_counts(ax)
        ax.set_ylim(0.7, top * 2)
        ax.set_xscale("log")
        ticks = few_ticks(max(lo, 1), max(hi, 2))
        ax.set_xticks(([ZERO_X] if zero else []) + ticks)
        ax.set_xticklabels((["0"] if zero else []) + [plots.tick_ns(t) for t in ticks])
        ax.minorticks_off()
        ax.set_xlim((ZERO_X if zero else max(lo, 1)) / 1.3, max(hi, 2) * 1.3)
        ax.set_title(title, fontsize=plots.FONT)
        ax.tick_params(labelsize=plots.FONT - 1)
        ax.grid(True, which="major", alpha=0.3)
        if len(series) > 1:
            ax.legend(fontsize=plots.FONT - 2, loc="upper right")
    for ax in [a for row in axes for a in row][len(panels):]:
        ax.set_visible(False)
    fig.supxlabel("%s (log)" % what, fontsize=plots.FONT)
    fig.supylabel("count (log)", fontsize=plots.FONT)
    fig.tight_layout()
    return fig


def overview_section(plt, names, results, pngs):
    """The tails of every item on one plot, each on its tool's quantity: a
    percentile spectrum per item."""
    cmap = plt.get_cmap("tab10")
    series = []
    for i, (name, r) in enumerate(zip(names, results)):
        q = select(r)
        m = merged_histogram(q.runs)
        if m and m[0]:
            series.append(("%s (%s)" % (name, q.name), m[0], m[1], m[2], cmap(i % 10)))
    if not series:
        return ""
    png, svg = plots.png_and_svg(plt, compare_plots.spectra_figure(plt, series, "value"))
    pngs["suite-tails"] = png
    return "<h2>The tails of every item</h2>" + svg_figure(
        svg, "The percentile spectrum of every item on its tool's quantity (x: the "
             "percentile, y: the value, log axes); each line ends at the item's maximum",
        "suite-tails")


def runs_table(result):
    keys = ("50", "99", "99.9", "99.99", "99.999")
    return table([(str(x.get("name")), str(x.get("cpu", "")), "{:,}".format(x.get("samples") or 0),
                   _ns(x.get("min_ns")), *[_ns((x.get("percentiles_ns") or {}).get(k))
                                           for k in keys], _ns(x.get("max_ns")))
                  for x in result.get("runs", []) if isinstance(x, dict)],
                 head=("run", "CPU", "samples", "min") + tuple("p" + k for k in keys) +
                 ("max",))


def _links(names):
    return ", ".join('<a href="%s">%s</a>' % (esc(n), esc(n)) for n in names)


# --- the page ------------------------------------------------------------------

def build(folder, doc, opts, loaded, why):
    """({name: png bytes}, the HTML page, {name: text}) of the suite in @folder
    whose index is @doc: @loaded {item name: Result} of the items that have one,
    @why {item name: why it has none}."""
    plt = plots.pyplot()
    entries = doc.get("items", [])
    names = list(loaded)
    stems = plots.file_stems(names)
    results = [loaded[n] for n in names]
    pngs, texts = {}, {}
    title = "jtr suite: %s" % os.path.basename(os.path.abspath(folder))
    body = ["<h1>%s</h1>" % esc(title)]
    body.append("<p>%s to %s on %s%s: <code>%s</code></p>" % (
        esc(doc.get("started_at")), esc(doc.get("ended_at")), esc(doc.get("host")),
        " <b>(partial: interrupted)</b>" if doc.get("partial") else "",
        esc(" ".join(doc.get("command") or []))))
    body.append(warnings_once(entries, loaded))
    body.append(items_table(entries, loaded, why))
    body.append(overview_section(plt, names, results, pngs))
    # the cross-item pairs (null-clock vs null): on the page as panels, in files
    # as jtr_null's 10 ns graphs
    pairs = [(names.index(a), names.index(b)) for a, b in doc.get("pairs") or []
             if a in names and b in names]
    partner = {names[i]: (names[j], results[j]) for i, j in pairs}
    cross, ctexts = plots.legacy_graphs(plt, stems, results, pairs=pairs, inner=False,
                                        nb=opts.get("histo_buckets"))
    for e in entries:
        name = e["name"]
        body.append('<h2 id="%s">%s</h2>' % (esc(name), esc(name)))
        r = loaded.get(name)
        body.append("<p>jtr %s, %s%s</p>" % (
            esc(e.get("tool")), esc(e.get("status")),
            (": " + esc(e.get("why") or why.get(name))) if e.get("why") or name in why
            else "" if r else ": no result"))
        if r is None:
            continue
        i = names.index(name)
        panels = panels_of(name, r, partner.get(name))
        if panels:
            q = select(r)
            png, svg = plots.png_and_svg(plt, panels_figure(plt, panels, q.measures or
                                                            "value"))
            pngs["%s-runs" % stems[i]] = png
            body.append(svg_figure(svg, "%s: each run's histogram, on one range%s" % (
                name, " (%s)" % ", ".join(
                    "against %s" % partner[name][0] for _ in [0]) if name in partner
                else ""), "%s-runs" % stems[i]))
        body.append(runs_table(r))
        # jtr_null's files: a send result's pairs, else each run alone
        sp, st = plots.legacy_graphs(plt, stems[i:i + 1], [r], every=not run_pairs(r),
                                     nb=opts.get("histo_buckets"))
        mine = {k: v for k, v in cross.items() if k.startswith("plot_%s_v_" % stems[i])}
        pngs.update(mine)
        pngs.update(sp)
        texts.update(st)
        body.append("<p>jtr_null's 10 ns graphs and files: %s</p>" % _links(
            ["%s.png" % k for k in list(mine) + sorted(sp)] + list(st)))
    texts.update(ctexts)
    return pngs, page_html(title, body), texts
