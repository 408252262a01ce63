# SPDX-License-Identifier: GPL-2.0-only
"""compare_plots - the graphs of the comparison page (render/compare_page.py):
A's and B's percentile spectra on one plot, and the change of each cause's time
lost per second of run as diverging bars. Each returns a matplotlib figure
(plots.png_and_svg makes the page's inline SVG and the PNG beside it)."""
import math

from ..units import fmt_ns
from . import plots

DELTA_CAUSES = 12       # causes on the delta chart, largest change first


def spectra_figure(plt, series, what="loop time"):
    """The percentile spectra of several results on one plot, as every page
    draws a spectrum (plots.spectrum_figure: x = the percentile, y = the value,
    each curve to its own maximum, marked). series: [(label, buckets, min_ns,
    max_ns, colour)]; each label says its maximum."""
    sp = [("%s, max %s" % (label, plots.tick_ns(hi)), plots.spectrum(buckets, lo, hi), colour)
          for label, buckets, lo, hi, colour in series]
    return plots.spectrum_figure(plt, [s for s in sp if s[1]], what)


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
