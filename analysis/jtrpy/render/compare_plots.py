# SPDX-License-Identifier: GPL-2.0-only
"""compare_plots - the graphs of the comparison page (render/compare_page.py):
A's and B's complementary CDFs on one plot, and the change of each cause's time
lost per second of run as diverging bars. Each returns a matplotlib figure
(plots.png_and_svg makes the page's inline SVG and the PNG beside it)."""
import math

from ..units import fmt_ns
from . import plots

DELTA_CAUSES = 12       # causes on the delta chart, largest change first


def ccdf_points(buckets, lo_ns, hi_ns):
    """[(value_ns, fraction of samples above it)] of a histogram: one step per
    bucket, from 1 at @lo_ns down to one sample's share at the maximum @hi_ns
    (the last sample is drawn at its own value, never at 0 on a log axis)."""
    n = float(sum(b[2] for b in buckets))
    if not n:
        return []
    pts, seen = [(max(lo_ns, 1), 1.0)], 0
    for _, hi, count in buckets:
        seen += count
        above = (n - seen) / n
        x = min(max(hi, lo_ns, 1), hi_ns)
        if above <= 0:
            break
        pts.append((x, above))
    pts.append((max(hi_ns, 1), 1.0 / n))
    return pts


def _fraction_label(y):
    """The y tick of a CCDF: 'all', then the percentile a fraction above is the
    tail of: 'p90', 'p99', 'p99.9', ..."""
    if y >= 1:
        return "all"
    k = int(round(-math.log10(y)))
    return "p" + ("%.*f" % (k - 2, 100 - 100 * y) if k > 2 else "%g" % (100 - 100 * y))


def ccdf_figure(plt, series, what="loop time"):
    """Complementary CDFs on log axes. series: [(label, buckets, min_ns, max_ns,
    colour)]; each line ends at its side's maximum, marked and labelled."""
    fig, ax = plt.subplots(figsize=(9, 4.6))
    lo_x, hi_x, lo_y = float("inf"), 1.0, 1.0
    for i, (label, buckets, lo, hi, colour) in enumerate(series):
        pts = ccdf_points(buckets, lo, hi)
        if not pts:
            continue
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        ax.step(xs, ys, where="post", color=colour, linewidth=1.8 if i == 0 else 1.4,
                linestyle="-" if i == 0 else "--",
                label="%s, max %s" % (label, plots.tick_ns(hi)))
        ax.plot([xs[-1]], [ys[-1]], "o", color=colour, markersize=6)
        lo_x, hi_x, lo_y = min(lo_x, xs[0]), max(hi_x, xs[-1]), min(lo_y, ys[-1])
    if lo_x == float("inf"):
        lo_x = 1.0
    ax.set_yscale("log")
    ax.set_xscale("log")
    plots.log_ticks(ax, lo_x, hi_x * 1.05, axis="x")
    ax.set_xlim(lo_x / 1.15, hi_x * 1.6)
    bottom = 10 ** math.floor(math.log10(lo_y))
    ax.set_ylim(bottom / 1.5, 1.6)
    ticks = [10 ** -k for k in range(0, int(round(-math.log10(bottom))) + 1)]
    ax.set_yticks(ticks)
    ax.set_yticklabels([_fraction_label(t) for t in ticks], fontsize=plots.FONT)
    ax.minorticks_off()
    ax.set_xlabel(what, fontsize=plots.FONT)
    ax.set_ylabel("samples above: the tail from percentile", fontsize=plots.FONT)
    ax.grid(True, which="major", alpha=0.3)
    if len(series) > 2:
        # many lines: the legend under the axes, where it hides none
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2,
                  fontsize=plots.FONT, frameon=False)
        fig.set_size_inches(9, 4.6 + 0.25 * ((len(series) + 1) // 2))
    else:
        ax.legend(loc="lower left", fontsize=plots.FONT)
    fig.tight_layout()
    return fig


def nice_step(x):
    """The 1, 2 or 5 x 10^k at least @x: a tick step."""
    k = 10 ** math.floor(math.log10(x))
    return next(m * k for m in (1, 2, 5, 10) if m * k >= x)


def per_s(ns):
    """'1.78 ms/s' of a time per second of run."""
    return fmt_ns(ns) + "/s" if ns else "0/s"


def signed_per_s(ns):
    return ("+" if ns > 0 else "-" if ns < 0 else "") + per_s(abs(ns))


def delta_figure(plt, causes, top=DELTA_CAUSES, sides=("A", "B")):
    """Diverging bars: per cause (compare's cause rows, largest change first), B
    less A of its time lost per second of run, left of 0 when B lost less,
    coloured by category; each named with its A and B (@sides: what A and B are
    called: jtr send's page compares null and send)."""
    rows = [r for r in causes if r["diff_ns_per_s"]][:top] or causes[:top]
    fig, ax = plt.subplots(figsize=(9, 1.2 + 0.5 * max(len(rows), 1)))
    ys = list(range(len(rows)))[::-1]
    vals = [r["diff_ns_per_s"] for r in rows]
    ax.barh(ys, vals, color=[plots.CATEGORY_COLOURS.get(r["category"], "#555555")
                             for r in rows], height=0.6)
    span = max([abs(v) for v in vals] + [1.0])
    for y, v in zip(ys, vals):
        ax.text(v + (0.015 * span if v >= 0 else -0.015 * span), y, signed_per_s(v),
                va="center", ha="left" if v >= 0 else "right", fontsize=plots.FONT)
    names = ["%s: %s" % (r["category"], r["name"]) for r in rows]
    ax.set_yticks(ys)
    ax.set_yticklabels(["%s\n%s %s, %s %s" % (t if len(t) < 46 else t[:43] + "...", sides[0],
                                              per_s(r["a_ns_per_s"]), sides[1],
                                              per_s(r["b_ns_per_s"]))
                        for t, r in zip(names, rows)], fontsize=plots.FONT - 1)
    # room for the value beside each bar, on the sides that have bars
    ax.set_xlim(-span * 1.6 if min(vals + [0]) < 0 else -span * 0.04,
                span * 1.6 if max(vals + [0]) > 0 else span * 0.04)
    ax.axvline(0, color="#333333", linewidth=0.8)
    lo, hi = ax.get_xlim()
    step = nice_step((hi - lo) / 5)
    ticks = [k * step for k in range(int(math.ceil(lo / step)), int(math.floor(hi / step)) + 1)]
    ax.set_xticks(ticks)
    ax.set_xticklabels([("+" if t > 0 else "-" if t < 0 else "") +
                        (plots.tick_ns(abs(t)) + "/s" if t else "0") for t in ticks],
                       fontsize=plots.FONT)
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.set_xlabel("%s - %s: time lost per second of run (left of 0: %s lost less)" % (
        sides[1], sides[0], sides[1]), fontsize=plots.FONT)
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    return fig
