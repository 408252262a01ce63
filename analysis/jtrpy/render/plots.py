"""plots - every graph jtr draws (the only code that imports matplotlib, and
only when a graph is asked for): histograms, percentile spectra, outlier
timelines, causes, a fleet's time lost per host, and the 10 ns 10 ns graphs of
jtr_null's gnuplot files."""
import io
import math

from ..errors import UsageError
from ..formats import legacy
from ..results import hist
from ..results.figures import run_pairs

CATEGORY_COLOURS = {
    "timer tick": "#1f77b4", "IPI": "#ff7f0e", "hardirq": "#2ca02c", "softirq": "#d62728",
    "task preemption": "#9467bd", "page fault": "#8c564b", "NMI": "#e377c2",
    "no kernel event": "#17becf", "other events": "#bcbd22", "not traced": "#7f7f7f",
    # jtr wake's components (attribution/wake.py)
    "timer IRQ latency": "#aec7e8", "timer IRQ": "#ffbb78", "wake-up path": "#98df8a",
    "unaccounted": "#c7c7c7",
}
SIDE_COLOURS = ("#1f77b4", "#d62728")
SPECTRUM_MAX = 99.999


def pyplot():
    """matplotlib's pyplot on the Agg backend, or UsageError saying how to get it."""
    try:
        import matplotlib
    except ImportError:
        raise UsageError("jtr report needs matplotlib: apt-get install python3-matplotlib, or "
                         "pip install 'jtr[report]' where jtr was installed with pip")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt




def spectrum(buckets, lo, hi, points=200):
    """[(x, value)] from 50 % to 99.999 %, evenly spaced in x = log(1/(1-p))."""
    a, b = math.log10(1 / (1 - 0.5)), math.log10(1 / (1 - SPECTRUM_MAX / 100))
    out = []
    for i in range(points + 1):
        x = 10 ** (a + (b - a) * i / points)
        p = 100.0 * (1 - 1 / x)
        out.append((x, hist.value_at_percentile(buckets, p, lo, hi)))
    return out


# the 9 x 4.5 in graphs with one-line axis labels: fixed margins, because
# tight_layout's tick measuring costs more than the drawing
FIXED_MARGINS = {"left": 0.08, "right": 0.98, "top": 0.92, "bottom": 0.11}


def _png(plt, fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return buf.getvalue()


def plot_histogram(plt, series, what="loop time (ns)"):
    """series: [(label, buckets, colour)]; @what: the x axis (the quantity)."""
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for label, buckets, colour in series:
        xs = [(b[0] + b[1]) / 2.0 for b in buckets]
        ys = [b[2] for b in buckets]
        ax.vlines(xs, 0.8, ys, colors=colour, alpha=0.6, linewidth=1)
        ax.plot(xs, ys, ".", color=colour, markersize=3, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(bottom=0.8)
    ax.set_xlabel(what)
    ax.set_ylabel("count per bucket")
    ax.set_title("Histogram (log-scale counts)")
    # major ticks only, fixed margins: measuring the minor log ticks for
    # tight_layout took two thirds of each graph's time
    ax.minorticks_off()
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper right", fontsize=8)
    fig.subplots_adjust(**FIXED_MARGINS)
    return _png(plt, fig)


def plot_spectrum(plt, series, what="loop time (ns)"):
    """series: [(label, [(x, value)], colour)]; @what: the y axis (the quantity)."""
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
    ax.set_ylabel(what)
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
    for _, (starts, lengths) in sorted(outliers.items()):
        ax.scatter([(s - t0) / 1e9 for s in starts], [n / 1e3 for n in lengths], s=4,
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
    labels = [t if len(t) < 60 else t[:57] + "..." for t in labels]
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
