# SPDX-License-Identifier: GPL-2.0-only
"""plots - every graph jtr draws (the only code that imports matplotlib, and
only when a graph is asked for): histograms, percentile spectra, outlier
timelines, causes, a fleet's time lost per host, and the 10 ns graphs of
jtr_null's gnuplot files.

The *_figure functions return a matplotlib figure for png_and_svg() (a page
shows the SVG inline and writes the PNG beside it); the plot_* ones its PNG."""
import html
import io
import math
import textwrap

from ..errors import UsageError
from ..formats import legacy
from ..results import hist
from ..results.figures import run_pairs
from ..results.probes import is_cpu_time
from ..system import packages
from ..trace import causes as C
from ..units import fmt_ns

# the causes' colours: trace/causes.py's, one per category
CATEGORY_COLOURS = {c.name: c.colour for c in C.CATEGORIES}
SIDE_COLOURS = ("#1f77b4", "#d62728")
UNKEPT = "#bbbbbb"      # an outlier whose cause the attribution did not keep
# the spectrum's marked percentiles, up to SPECTRUM_MAX; the curve goes on to the
# maximum (the last sample: x = the sample count), which is marked too
SPECTRUM_MARKS = (99.9, 99.99, 99.999, 99.9999)
SPECTRUM_MAX = SPECTRUM_MARKS[-1]
RASTER_POINTS = 2000    # scatter plots with more points are pixels inside the SVG
FONT = 10               # points: the smallest text on a page's plots


def pyplot():
    """matplotlib's pyplot on the Agg backend, or UsageError saying how to get it."""
    try:
        import matplotlib
    except ImportError:
        raise UsageError("jtr report needs matplotlib: %s"
                         % packages.python_hint("matplotlib"))
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt




def spectrum(buckets, lo, hi, points=200):
    """[(x, value)] from 50 % to the maximum, evenly spaced in x = 1/(1-p) on a
    log scale, through the percentiles of SPECTRUM_MARKS the samples reach: the
    last point is the maximum @hi at x = the sample count (the percentile of the
    largest sample, HdrHistogram's plotter's end), at least 1/(1-99.999 %)."""
    n = sum(b[2] for b in buckets)
    end = max(float(n), 1 / (1 - 99.999 / 100))
    a, b = math.log10(2.0), math.log10(end)
    xs = {10 ** (a + (b - a) * i / points) for i in range(points)}
    xs.update(1 / (1 - m / 100) for m in SPECTRUM_MARKS if 1 / (1 - m / 100) < end)
    out = [(x, hist.value_at_percentile(buckets, 100.0 * (1 - 1 / x), lo, hi))
           for x in sorted(xs)]
    out.append((end, hi))
    return out


def mark_x(pct):
    """The x of percentile @pct on a spectrum."""
    return 1 / (1 - pct / 100)


def tick_ns(v):
    """A short axis label of a duration: 20 ns, 1.5 us, 10 ms."""
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if v >= scale:
            return "%g %s" % (round(v / scale, 3), unit)
    return "%g ns" % round(v, 3)


def count_label(v):
    """A short axis label of a count: 1, 20, 1K, 2.5M."""
    for unit, scale in (("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if v >= scale:
            return "%g%s" % (round(v / scale, 3), unit)
    return "%g" % round(v, 3)


def log_counts(ax, axis="y"):
    """A log count axis labelled 1, 10, 100, 1K: plain text, where matplotlib's
    own labels (10 to the power k) go through its TeX parser: 0.25 s of the 1.7 s
    a report's four figures took to draw (cProfile, here)."""
    import matplotlib.ticker as mt
    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(
        mt.FuncFormatter(lambda v, _: count_label(v)))


def log_ticks(ax, lo, hi, axis="y"):
    """Labelled ticks of a log duration axis from @lo to @hi ns: 1-2-5 a decade
    (1 a decade over many decades), at least three of them; a linear axis where
    the range is too narrow for three."""
    lo, hi = max(lo, 1e-3), max(hi, lo * 1.01)
    decades = math.log10(hi / lo)
    subs = (1,) if decades > 4 else (1, 2, 5) if decades > 0.9 else range(1, 10)
    ticks = [m * 10 ** k for k in range(int(math.floor(math.log10(lo))),
                                        int(math.ceil(math.log10(hi))) + 1)
             for m in subs if lo <= m * 10 ** k <= hi]
    setter = ax.set_yticks if axis == "y" else ax.set_xticks
    labeller = ax.set_yticklabels if axis == "y" else ax.set_xticklabels
    if len(ticks) < 3:
        (ax.set_yscale if axis == "y" else ax.set_xscale)("linear")
        import matplotlib.ticker as mt
        loc = mt.MaxNLocator(5)
        ticks = [t for t in loc.tick_values(lo, hi) if lo <= t <= hi] or [lo, hi]
    else:
        (ax.set_yscale if axis == "y" else ax.set_xscale)("log")
        ax.minorticks_off()
    setter(ticks)
    labeller([tick_ns(t) for t in ticks], fontsize=FONT)


# the 9 x 4.5 in graphs with one-line axis labels: fixed margins, because
# tight_layout's tick measuring costs more than the drawing
FIXED_MARGINS = {"left": 0.08, "right": 0.98, "top": 0.92, "bottom": 0.11}


def _png(plt, fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return buf.getvalue()


def png_and_svg(plt, fig):
    """(PNG bytes, inline SVG text) of a figure, closed after."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return buf.getvalue(), svg(plt, fig)


def hover(fig, artist, gid, titles):
    """What a reader sees on hovering @artist of @fig (svg() writes it as SVG
    <title>s): @titles, a text (a bar: the group named @gid) or a list of texts,
    one per point of a scatter in its order."""
    artist.set_gid(gid)
    fig.__dict__.setdefault("jtr_titles", {})[gid] = titles


def _with_titles(text, titles):
    """@text (an SVG) with a <title> in each group hover() named: a bar's group
    gets one, each point of a scatter (its <use>s, in order) its own."""
    out, pos = [], 0
    for gid, t in sorted(titles.items(), key=lambda kv: text.find('id="%s"' % kv[0])):
        at = text.find('<g id="%s">' % gid, pos)
        if at < 0:
            continue
        at += len('<g id="%s">' % gid)
        out.append(text[pos:at])
        pos = at
        if isinstance(t, str):
            out.append("<title>%s</title>" % html.escape(t, quote=False))
            continue
        for one in t:
            use = text.find("<use ", pos)
            if use < 0:
                break
            out += [text[pos:use], "<title>%s</title>" % html.escape(one, quote=False),
                    "<use "]
            pos = use + len("<use ")
    return "".join(out) + text[pos:]


def svg(plt, fig):
    """The figure as an inline SVG element for a page: its text stays text (what a
    reader can select and search, and what the page tests read), drawn in the
    page's own font; what hover() gave becomes <title>s a reader sees on hovering."""
    import matplotlib
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        fig.savefig(buf, format="svg")
    plt.close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    titles = fig.__dict__.get("jtr_titles")
    return _with_titles(text, titles) if titles else text


def plot_histogram(plt, series, what="loop time"):
    """histogram_figure's PNG."""
    return _png(plt, histogram_figure(plt, series, what))


def histogram_figure(plt, series, what="loop time", font=8):
    """series: [(label, buckets, colour)]; @what: the x axis (the quantity)."""
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for label, buckets, colour in series:
        xs = [(b[0] + b[1]) / 2.0 for b in buckets]
        ys = [b[2] for b in buckets]
        ax.vlines(xs, 0.8, ys, colors=colour, alpha=0.6, linewidth=1)
        ax.plot(xs, ys, ".", color=colour, markersize=3, label=label)
    mids = [(b[0] + b[1]) / 2.0 for _, buckets, _ in series for b in buckets] or [1]
    ax.set_xscale("log")
    log_ticks(ax, min(mids), max(mids), axis="x")
    ax.set_yscale("log")
    log_counts(ax)
    ax.set_ylim(bottom=0.8)
    ax.set_xlabel(what)
    ax.set_ylabel("count per bucket")
    ax.set_title("Histogram (log-scale counts)")
    # major ticks only, fixed margins: measuring the minor log ticks for
    # tight_layout took two thirds of each graph's time
    ax.minorticks_off()
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper right", fontsize=font)
    fig.subplots_adjust(**FIXED_MARGINS)
    return fig


def plot_spectrum(plt, series, what="loop time (ns)"):
    """spectrum_figure's PNG."""
    return _png(plt, spectrum_figure(plt, series, what))


def spectrum_figure(plt, series, what="loop time (ns)"):
    """The percentile spectrum in HdrHistogram's plotter's style: x = 1/(1-p) on a
    log axis up to each series' maximum, the percentiles 50 % .. 99.9999 % marked
    where the samples reach them, each series' maximum labelled with its value
    ("max 3.67 ms"), the value axis labelled in people's units.
    series: [(label, spectrum(), colour)]; @what: the y axis (the quantity)."""
    fig, ax = plt.subplots(figsize=(9, 4.8))
    end = max((p[-1][0] for _, p, _ in series if p), default=mark_x(99.999))
    values = [v for _, p, _ in series for _, v in p if v > 0] or [1]
    lo, hi = min(values), max(values)
    for label, pts, colour in series:
        ax.step([p[0] for p in pts], [p[1] for p in pts], where="post", color=colour,
                label=label, linewidth=1.6)
        if len(series) == 1:        # the marked percentiles' values, on the curve
            for m in SPECTRUM_MARKS:
                x = mark_x(m)
                if x < pts[-1][0]:
                    v = next(val for px, val in pts if px >= x)
                    ax.plot([x], [v], "o", color=colour, markersize=4)
                    ax.annotate(fmt_ns(v), (x, v), xytext=(-4, 6), textcoords="offset points",
                                ha="right", fontsize=FONT, color="#333333")
        x, v = pts[-1]
        ax.plot([x], [v], "o", color=colour, markersize=6, markeredgecolor="black",
                markeredgewidth=0.6)
        ax.annotate("max " + fmt_ns(v), (x, v), xytext=(-6, 6), textcoords="offset points",
                    ha="right", va="bottom", fontsize=FONT, fontweight="bold", color=colour)
    ax.set_xscale("log")
    ticks = [50, 90, 99] + [m for m in SPECTRUM_MARKS if mark_x(m) <= end * 1.0001]
    ax.set_xticks([mark_x(t) for t in ticks])
    ax.set_xticklabels(["%g%%" % t for t in ticks], fontsize=FONT)
    ax.set_xlim(1.6, end * 2.5)
    log_ticks(ax, lo, hi)
    if ax.get_yscale() == "log":
        ax.set_ylim(lo / 1.5, hi * 2.2)     # room for the max's label
    else:
        ax.set_ylim(0, hi * 1.25)
    ax.set_xlabel("percentile (x = 1/(1-p), log; the curve ends at each series' maximum)",
                  fontsize=FONT)
    ax.set_ylabel(what, fontsize=FONT)
    ax.set_title("Percentile spectrum", fontsize=FONT + 2)
    ax.grid(True, which="major", alpha=0.3)
    # the legend under the axes, where it covers no curve (a ping's top curve
    # ran under it in the corner)
    cols = min(3, max(len(series), 1))
    lines = -(-len(series) // cols)
    fig.set_size_inches(9, 4.8 + 0.22 * lines)
    fig.legend(*ax.get_legend_handles_labels(), loc="lower center", ncol=cols, fontsize=FONT,
               frameon=False)
    fig.subplots_adjust(left=0.1, right=0.98, top=0.92,
                        bottom=(0.55 + 0.22 * lines) / fig.get_figheight())
    return fig


def run_start(result, outliers=()):
    """The time the timeline counts from: the first run's start, else the first
    outlier's (or worst outlier's)."""
    t0 = min((r.get("start_mono_ns") for r in result.get("runs", [])
              if isinstance(r, dict) and isinstance(r.get("start_mono_ns"), int)), default=None)
    if t0 is None:
        worst = (result.get("attribution") or {}).get("worst") or []
        t0 = min([o[1] for o in outliers] + [w["start_ns"] for w in worst], default=0)
    return t0


def timeline_figure(plt, result, outliers, categories=None, bins=60):
    """Every logged outlier over the run's time, coloured by its main cause
    category, one lane per CPU, over a stacked panel of the time lost per cause
    category in each of @bins slices of the run. @outliers: [(cpu, start_ns,
    length_ns)] in outliers.csv's order, @categories the category of each (None
    where the attribution did not keep them: then the worst outliers are
    coloured on grey)."""
    import numpy as np
    t0 = run_start(result, outliers)
    worst = (result.get("attribution") or {}).get("worst") or []
    arr = np.array(outliers, dtype=np.float64).reshape(-1, 3)
    cpus = sorted({int(c) for c in arr[:, 0]}) or sorted(
        {w["cpu"] for w in worst}) or [0]
    if categories is not None and len(categories) != len(arr):
        categories = None
    cats = np.array(categories if categories is not None else ["?"] * len(arr), dtype=object)
    order = [c for c in CATEGORY_COLOURS if c in set(cats.tolist())] + sorted(
        set(cats.tolist()) - set(CATEGORY_COLOURS) - {"?"})
    lane_h = 2.3 if len(cpus) <= 2 else 1.6
    fig, axes = plt.subplots(len(cpus) + 1, 1, sharex=True, squeeze=False,
                             figsize=(9, 1.3 + lane_h * len(cpus) + 2.2),
                             gridspec_kw={"height_ratios": [lane_h] * len(cpus) + [2.0]})
    axes = axes[:, 0]
    xs = (arr[:, 1] - t0) / 1e9
    raster = len(arr) > RASTER_POINTS
    lengths = [w["length_ns"] for w in worst] + arr[:, 2].tolist()
    lo, hi = (min(lengths), max(lengths)) if lengths else (1000, 10000)
    counts = {c: int((cats == c).sum()) for c in order}
    order.sort(key=lambda c: -counts[c])      # the legend's order: most outliers first
    place = {c: k for k, c in enumerate(order)}
    rank = np.array([place.get(c, 0) for c in cats.tolist()], dtype=np.int64)
    colour_of = np.array([CATEGORY_COLOURS.get(c, "#000000") for c in cats.tolist()],
                         dtype=object)
    chains = {(w["cpu"], w["start_ns"]): w for w in worst}

    def title(i, cat):
        """A point's hover text: its length, when, where, its main cause, and its
        causal chain where the attribution kept it (the worst outliers)."""
        cpu, start, length = int(arr[i, 0]), int(arr[i, 1]), arr[i, 2]
        w = chains.get((cpu, start))
        return "%s at +%.3f s on CPU %d: %s%s" % (
            fmt_ns(length), (start - t0) / 1e9, cpu, cat if cat != "?" else
            "cause not kept per outlier", "\n" + w["chain"] if w and w.get("chain") else "")
    for ax, cpu in zip(axes, cpus):
        on = arr[:, 0] == cpu
        if categories is None:
            sc = ax.scatter(xs[on], arr[on, 2], s=5, color=UNKEPT, rasterized=raster, zorder=3,
                            label="cause not kept per outlier (attributed before jtr kept it)"
                            if cpu == cpus[0] else None)
            if not raster:
                hover(fig, sc, "outliers-cpu%d" % cpu, [title(i, "?")
                                                        for i in np.flatnonzero(on)])
            seen = set()
            for k, w in enumerate(worst):
                if w["cpu"] != cpu:
                    continue
                cat = w.get("category")
                sc = ax.scatter([(w["start_ns"] - t0) / 1e9], [w["length_ns"]], s=28,
                                color=CATEGORY_COLOURS.get(cat, "#000000"),
                                edgecolors="black", linewidths=0.4, zorder=3,
                                label="worst: %s" % cat if cat not in seen else None)
                hover(fig, sc, "worst-%d" % k, ["%s at +%.3f s on CPU %d: %s\n%s" % (
                    fmt_ns(w["length_ns"]), (w["start_ns"] - t0) / 1e9, cpu, cat,
                    w.get("chain") or "")])
                seen.add(cat)
        else:
            # one scatter, the most frequent category drawn first: a rare cause is
            # never buried under a frequent one
            idx = np.flatnonzero(on)
            idx = idx[np.argsort(rank[idx], kind="stable")]
            # above the grid lines and the frame: what the pointer finds is the point
            sc = ax.scatter(xs[idx], arr[idx, 2], s=7, linewidths=0, c=colour_of[idx],
                            rasterized=raster, zorder=3)
            if not raster:
                hover(fig, sc, "outliers-cpu%d" % cpu, [title(i, cats[i]) for i in idx])
            else:
                # the points are pixels: the worst ones, with their chains, can be
                # hovered still (a mark too faint to see over each)
                mine = [w for w in worst if w["cpu"] == cpu]
                if mine:
                    sc = ax.scatter([(w["start_ns"] - t0) / 1e9 for w in mine],
                                    [w["length_ns"] for w in mine], s=30, color="#000000",
                                    alpha=0.01, linewidths=0, zorder=3)
                    hover(fig, sc, "worst-cpu%d" % cpu, ["%s at +%.3f s on CPU %d: %s\n%s" % (
                        fmt_ns(w["length_ns"]), (w["start_ns"] - t0) / 1e9, cpu,
                        w.get("category"), w.get("chain") or "") for w in mine])
            if cpu == cpus[0]:
                for c in order:
                    ax.scatter([], [], s=7, color=CATEGORY_COLOURS.get(c, "#000000"),
                               label="%s (%d)" % (c, counts[c]))
        ax.set_yscale("log")
        log_ticks(ax, lo, hi)
        if ax.get_yscale() == "log":
            ax.set_ylim(lo / 1.4, hi * 1.4)
        ax.set_ylabel("CPU %d: length" % cpu if len(cpus) > 1 else "outlier length",
                      fontsize=FONT)
        ax.grid(True, alpha=0.3)
    # time lost per category per slice of the run
    ax = axes[-1]
    span = max([(r.get("duration_ns") or 0) / 1e9 for r in result.get("runs", [])
                if isinstance(r, dict)] + [float(xs.max()) if len(xs) else 0.0] +
               [(w["start_ns"] - t0) / 1e9 for w in worst]) or 1.0
    width = span / bins
    edges = np.arange(bins + 1) * width
    bottom = np.zeros(bins)
    scale = 100.0 / (width * 1e9 * len(cpus))
    per = covered_by_bin(arr, (arr[:, 1] - t0) / 1e9, cats, width, bins)
    for c in order if categories is not None else ["?"]:
        pct = per.get(c, np.zeros(bins)) * scale
        ax.bar(edges[:-1], pct, width=width, bottom=bottom, align="edge", linewidth=0,
               color=CATEGORY_COLOURS.get(c, UNKEPT))
        bottom += pct
    lost = is_cpu_time(result)
    what = "time lost" if lost else "time an outlier was in flight"
    ax.set_ylabel(("% of the time\nlost" if lost else "% of the time\none in flight") +
                  (" (all CPUs)" if len(cpus) > 1 else ""), fontsize=FONT)
    ax.set_xlabel("time from the start of the run (s)\nlower panel: %s per cause "
                  "category in each %s (each instant once)" % (what, fmt_ns(width * 1e9)),
                  fontsize=FONT)
    ax.set_xlim(0, span)
    ax.set_ylim(0, max(float(bottom.max()) * 1.15, 1e-3))
    ax.tick_params(labelsize=FONT)
    ax.grid(True, axis="y", alpha=0.3)
    h = fig.get_figheight()
    fig.suptitle("Outlier timeline: every outlier coloured by its main cause"
                 if categories is not None else
                 "Outlier timeline: the worst outliers coloured by main cause",
                 fontsize=FONT + 2, y=1 - 0.1 / h, va="top")
    handles, labels = axes[0].get_legend_handles_labels()
    rows = (len(handles) + 3) // 4
    if handles:
        fig.legend(handles, labels, loc="upper center", ncol=min(4, len(handles)),
                   fontsize=FONT, frameon=False, bbox_to_anchor=(0.5, 1 - 0.35 / h),
                   markerscale=2.5, handletextpad=0.2, columnspacing=1.2)
    fig.subplots_adjust(left=0.11, right=0.98, top=1 - (0.45 + 0.25 * rows) / h,
                        bottom=0.7 / h, hspace=0.12)
    return fig


def covered_by_bin(arr, xs, cats, width, bins):
    """{category: ns per bin} of the outliers @arr (cpu, start, length rows; @xs
    their starts in s from the run's start), each instant of a CPU once: an
    outlier adds only what no earlier one on its CPU covered (overlapping round
    trips are not time lost twice), to its main category."""
    import numpy as np
    out = {}
    order = np.lexsort((xs, arr[:, 0]))
    cur_cpu, cur_end = None, None
    w_ns = width * 1e9
    for j in order.tolist():
        cpu, start, length = arr[j, 0], xs[j] * 1e9, arr[j, 2]
        if cpu != cur_cpu:
            cur_cpu, cur_end = cpu, -1.0
        a, b = max(start, cur_end), start + length
        if b <= a:
            continue
        cur_end = b
        got = out.get(cats[j])
        if got is None:
            got = out[cats[j]] = np.zeros(bins)
        k = int(a // w_ns)
        while a < b and k < bins:
            edge = (k + 1) * w_ns
            got[max(k, 0)] += min(b, edge) - a
            a, k = edge, k + 1
    return out


# a name's label on the causes chart, at most this long (the whole one in its
# tooltip): an IPI's sender and function made the bars a third of the width
LABEL_CHARS = 48


def short_label(label):
    """@label cut to LABEL_CHARS characters, an ellipsis at the cut."""
    return label if len(label) <= LABEL_CHARS else label[:LABEL_CHARS - 1].rstrip() + "\u2026"


def causes_figure(plt, groups):
    """Outlier time per cause category (linear shares with % labels), each
    category's bar followed by its largest names' (lighter, indented).
    groups: attribution.group_causes()."""
    rows = []
    for g in groups:
        rows.append((g["category"], g["share"], g["category"], True,
                     "%s: %.1f %% of the outliers' time, %s; the main cause of %d" % (
                         g["category"], 100 * g["share"], fmt_ns(g.get("total_ns", 0)),
                         g.get("count", 0))))
        for nm in g["names"]:
            rows.append(("    " + short_label(nm["label"]), nm["share"], g["category"], False,
                         "%s: %.1f %%, %s in %d outliers (the longest %s)%s" % (
                             nm["label"], 100 * nm["share"], fmt_ns(nm.get("total_ns", 0)),
                             nm.get("count", 0), fmt_ns(nm.get("max_ns", 0)),
                             "\nfor example: " + nm["chain"] if nm.get("chain") else "")))
    fig, ax = plt.subplots(figsize=(9, 0.9 + 0.3 * max(len(rows), 1)))
    ys = list(range(len(rows)))[::-1]
    top = max((r[1] for r in rows), default=0) * 100 or 1
    for k, (y, (_, share, cat, head, tip)) in enumerate(zip(ys, rows)):
        colour = CATEGORY_COLOURS.get(cat, "#555555")
        bars = ax.barh([y], [share * 100], height=0.75 if head else 0.55, color=colour,
                       alpha=1.0 if head else 0.5, edgecolor=colour)
        hover(fig, bars.patches[0], "cause-%d" % k, tip)
        ax.text(share * 100 + top * 0.01, y, "%.1f %%" % (share * 100), va="center",
                fontsize=FONT, fontweight="bold" if head else "normal")
    ax.set_yticks(ys)
    ax.set_yticklabels([r[0] for r in rows], fontsize=FONT)
    for t, r in zip(ax.get_yticklabels(), rows):
        if r[3]:
            t.set_fontweight("bold")
    ax.set_xlim(0, top * 1.15)
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.tick_params(axis="x", labelsize=FONT)
    ax.set_xlabel("share of the outliers' time (%)", fontsize=FONT)
    ax.set_title("Outlier time per cause: categories and their largest names",
                 fontsize=FONT + 2)
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


# jtr wake's components (attribution/wake.py), coloured as the causes they are
COMPONENT_COLOURS = {
    "irq_latency": CATEGORY_COLOURS[C.IRQ_LATENCY], "timer_irq": CATEGORY_COLOURS[C.TIMER_IRQ],
    "irq": CATEGORY_COLOURS[C.HARDIRQ], "softirq": CATEGORY_COLOURS[C.SOFTIRQ],
    "nmi": CATEGORY_COLOURS[C.NMI], "blocking": CATEGORY_COLOURS[C.TASK],
    "scheduling": CATEGORY_COLOURS[C.WAKE_PATH], "stall": CATEGORY_COLOURS[C.NO_EVENT],
    "return": "#17becf", "own": CATEGORY_COLOURS[C.BACKLOG],
    "unaccounted": CATEGORY_COLOURS[C.UNACCOUNTED], "host": "#7f7f7f"}


def decomposition_figure(plt, worst, labels, order, t0=0):
    """The worst late wake-ups taken apart: one stacked bar each (the longest at
    the top), its components from the timer's expiry to the thread's return to
    user space. @worst: attribution.worst (each with "components"); @labels:
    {component: label}; @order: the components in path order; @t0: the run's
    start (each bar's label says when in the run)."""
    rows = [w for w in worst if w.get("components")]
    fig, ax = plt.subplots(figsize=(9, 1.4 + 0.32 * max(len(rows), 1)))
    ys = list(range(len(rows)))[::-1]
    shown = set()
    for y, w in zip(ys, rows):
        left = 0.0
        for k in order:
            v = w["components"].get(k, 0)
            if v <= 0:
                continue
            ax.barh([y], [v / 1e3], left=left, height=0.7,
                    color=COMPONENT_COLOURS.get(k, "#555555"), edgecolor="white",
                    linewidth=0.4, label=None if k in shown else labels.get(k, k))
            shown.add(k)
            left += v / 1e3
    ax.set_yticks(ys)
    ax.set_yticklabels(["%s at +%.3f s" % (fmt_ns(w["length_ns"]), (w["start_ns"] - t0) / 1e9)
                        for w in rows], fontsize=FONT)
    ax.set_xlabel("us from the timer's expiry (the intended wake-up)", fontsize=FONT)
    ax.tick_params(axis="x", labelsize=FONT)
    ax.set_ylim(-0.6, max(len(rows), 1) - 0.4)
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_title("The worst late wake-ups taken apart", fontsize=FONT + 2)
    # the legend under the plot, in a strip of its own
    strip = 0.0
    if shown:
        lines = -(-len(shown) // 4)
        strip = (0.3 + 0.22 * lines) / fig.get_figheight()
        fig.legend(*ax.get_legend_handles_labels(), loc="lower center", ncol=4,
                   fontsize=FONT - 1, frameon=False)
    fig.tight_layout(rect=(0, strip, 1, 1))
    return fig


# the path's phases that are not one step of it (a round trip measured whole)
WHOLE_PHASES = ("trip", "round trip")


def budget_figure(plt, budget, names):
    """The outliers' path, phase by phase (attribution.budget, in path order): a
    box per phase on its side's colour, the mean each phase's stamps measured per
    outlier with a bar of it against the longest phase, its part charged to
    kernel events and the host darker, and the cause that took most of it.
    @names: {phase: its name for people}. Phases measured whole (a round trip
    without pong's stamps) follow apart, after a gap."""
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle
    steps = [b for b in budget if "measured_mean_ns" in b]
    path = [b for b in steps if b["phase"] not in WHOLE_PHASES]
    whole = [b for b in steps if b["phase"] in WHOLE_PHASES]
    boxes = path + whole
    n = max(len(boxes), 1)
    fig, ax = plt.subplots(figsize=(9, 3.2))
    ax.set_xlim(0, n + (0.4 if whole and path else 0))
    ax.set_ylim(0, 1)
    ax.axis("off")
    top = max((b["measured_mean_ns"] for b in boxes), default=1) or 1
    sides = list(dict.fromkeys(b["side"] for b in boxes))
    for i, b in enumerate(boxes):
        x = i + (0.4 if b in whole and path else 0)
        colour = SIDE_COLOURS[sides.index(b["side"]) % len(SIDE_COLOURS)]
        ax.add_patch(FancyBboxPatch((x + 0.05, 0.08), 0.9, 0.84,
                                    boxstyle="round,pad=0,rounding_size=0.03",
                                    facecolor=colour, alpha=0.08, edgecolor=colour))
        ax.text(x + 0.5, 0.88, "\n".join(textwrap.wrap(names.get(b["phase"], b["phase"]), 22)),
                ha="center", va="top", fontsize=FONT - 1, fontweight="bold")
        ax.text(x + 0.5, 0.66, "%s side · %s" % (b["side"], count_word(b["outliers"])),
                ha="center", va="center", fontsize=FONT - 2, color=colour)
        # the measured mean against the longest phase, the charged part darker
        w = 0.8 * b["measured_mean_ns"] / top
        c = 0.8 * min(b["charged_mean_ns"], b["measured_mean_ns"]) / top
        ax.add_patch(Rectangle((x + 0.1, 0.5), 0.8, 0.07, facecolor="white",
                               edgecolor="#bbbbbb", linewidth=0.5))
        ax.add_patch(Rectangle((x + 0.1, 0.5), w, 0.07, facecolor=colour, alpha=0.35))
        ax.add_patch(Rectangle((x + 0.1, 0.5), c, 0.07, facecolor=colour, alpha=0.9))
        ax.text(x + 0.5, 0.42, "%s measured\n%s kernel, host" % (
            fmt_ns(b["measured_mean_ns"]), fmt_ns(b["charged_mean_ns"])),
            ha="center", va="top", fontsize=FONT - 1)
        d = b.get("dominant")
        if d:
            # the cause in dark text, its category's colour as a rule above it
            ax.add_patch(Rectangle((x + 0.1, 0.225), 0.8, 0.018,
                                   facecolor=CATEGORY_COLOURS.get(d["category"], "#333333")))
            ax.text(x + 0.5, 0.2, "\n".join(textwrap.wrap("most: %s %.0f %%" % (
                d["name"] if d["name"] != d["category"] else d["category"],
                100 * d["share"]), 26)), ha="center", va="top", fontsize=FONT - 2,
                color="#333333")
        if 0 < i < len(path):
            ax.add_patch(FancyArrowPatch((x - 0.06, 0.53), (x + 0.06, 0.53),
                                         arrowstyle="-|>", mutation_scale=10, color="#555555"))
    ax.set_title("The outliers' path, phase by phase: the mean per outlier (darker: "
                 "charged to kernel events and the host)", fontsize=FONT)
    fig.subplots_adjust(left=0.01, right=0.99, top=0.9, bottom=0.02)
    return fig


def count_word(n):
    return "1 outlier" if n == 1 else "{:,} outliers".format(n)


def plot_fleet(plt, title, bars, unit="time lost (% of the run)"):
    """Stacked horizontal bars, one per host: bars [(label, [(category, value)],
    flagged)], each bar's parts coloured by cause category; flagged hosts' labels
    in red."""
    height = 1.6 + 0.4 * max(len(bars), 1)
    fig, ax = plt.subplots(figsize=(9, height))
    ys = list(range(len(bars)))[::-1]
    shown = set()
    for y, (_, parts, _) in zip(ys, bars):
        left = 0.0
        for cat, v in parts:
            ax.barh([y], [v], left=left, color=CATEGORY_COLOURS.get(cat, "#7f7f7f"),
                    edgecolor="white", linewidth=0.5, label=None if cat in shown else cat)
            shown.add(cat)
            left += v
    ax.set_yticks(ys)
    ax.set_yticklabels([b[0] for b in bars], fontsize=8)
    for tick, (_, _, flagged) in zip(ax.get_yticklabels(), bars):
        if flagged:
            tick.set_color("#c00000")
            tick.set_fontweight("bold")
    ax.set_xlabel(unit)
    ax.set_title(title, fontsize=10)
    ax.grid(True, axis="x", alpha=0.3)
    # the legend in a strip of its own under the axes, whatever the number of bars
    if shown:
        fig.legend(loc="lower center", ncol=6, fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, 0.5 / height, 1, 1))
    return _png(plt, fig)


def plot_versus(plt, title, series, nb):
    """jtr_null's graph of gnuplot blocks on one plot: 10 ns buckets from 0 to
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
    log_counts(ax)
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
    """A legend entry: who, and jtr_null's min/max/average/overflow line."""
    return "%s %s: %s" % (label, run.get("name"), legacy.minmax(run, nb).strip())


def legacy_graphs(plt, stems, results, every=False, nb=None, pairs=(), inner=True):
    """The 10 ns graphs and files of @results (file stems @stems):
    ({png name: bytes}, {file name: text}). Graphs: run N of result 0 against run N
    of result 1 when there are two; each result's send-vs-null pairs; with @every,
    each run alone. @pairs adds (i, j) pairs of results (a suite's); @inner False
    leaves out the pairs inside each result. Each result on a graph gets STEM.gp
    and STEM.txt."""
    pngs, texts, used = {}, {}, set()
    cross = list(pairs)
    if len(results) == 2 and not {(0, 1), (1, 0)} & set(cross):
        cross.append((0, 1))        # two results: one against the other, once
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
