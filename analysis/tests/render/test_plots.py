# SPDX-License-Identifier: GPL-2.0-only
"""render.plots: the spectrum's points (through the result's percentiles, to its
maximum), the axes' ticks and labels, where the timeline counts from, each
instant of a CPU counted once per bin, the 10 ns graphs and files a set of
results gets, and what the figures draw (read back from matplotlib's axes)."""
import sys

import matplotlib.colors as mc
import numpy as np
import pytest

from jtrpy.errors import UsageError
from jtrpy.formats import legacy
from jtrpy.render import plots, suite_page

from ..synthetic import make_run


@pytest.fixture(scope="module")
def plt():
    return plots.pyplot()


def synthetic_run():
    """The one-CPU gap run of tests/test_report.py's synthetic result: 900000
    loops of 30 ns, 90000 of 31, 9000 of 40, 50 of 2 us, 10 of 15 us, 2 of 250 us."""
    values = {30: 900000, 31: 90000, 40: 9000, 2000: 50, 15000: 10, 250000: 2}
    return make_run(np.repeat(list(values), list(values.values())), cpu=1)


def test_spectrum_meets_the_result_percentiles():
    """The spectrum passes through the result's percentiles and ends at its
    maximum, at x = the sample count (the percentile of the largest sample)."""
    run = synthetic_run()
    pts = plots.spectrum(run["histogram"]["buckets"], run["min_ns"], run["max_ns"])
    assert pts[0][1] == run["percentiles_ns"]["50"]
    at = dict(pts)
    for k in ("99.9", "99.99", "99.999"):
        assert at[plots.mark_x(float(k))] == run["percentiles_ns"][k], k
    assert pts[-1] == (run["samples"], run["max_ns"])
    assert all(x1 <= x2 and v1 <= v2 for (x1, v1), (x2, v2) in zip(pts, pts[1:]))


def test_spectrum_of_few_samples_goes_on_to_99_999():
    """Ten samples: the curve still reaches x = 1/(1 - 99.999 %), at the maximum;
    the marks the samples do not reach are not points of their own."""
    pts = plots.spectrum([[10, 10, 9], [100, 100, 1]], 10, 100, points=20)
    assert pts[0] == (2.0, 10) and pts[-1] == (pytest.approx(100000), 100)
    assert {v for x, v in pts if x < 10} == {10} and {v for x, v in pts if x > 10} == {100}
    assert plots.mark_x(99.9999) not in dict(pts)
    assert plots.mark_x(99.9) == pytest.approx(1000)


@pytest.mark.parametrize("v,text", [(20, "20 ns"), (0.5, "0.5 ns"), (1500, "1.5 us"),
                                    (1234567, "1.235 ms"), (10e6, "10 ms"), (2.5e9, "2.5 s")])
def test_tick_labels(v, text):
    assert plots.tick_ns(v) == text


@pytest.mark.parametrize("v,text", [(1, "1"), (0.5, "0.5"), (20, "20"), (1000, "1K"),
                                    (2.5e6, "2.5M"), (1e9, "1G")])
def test_count_labels(v, text):
    assert plots.count_label(v) == text


@pytest.fixture
def no_tex(monkeypatch):
    """matplotlib's TeX parser refuses to run: its labels (10 to the power k) cost
    0.25 s of the 1.7 s a report's figures took to draw."""
    mathtext = pytest.importorskip("matplotlib._mathtext")

    def refuse(self, s, *args, **kwargs):
        raise AssertionError("a label went through the TeX parser: %r" % s)
    monkeypatch.setattr(mathtext.Parser, "parse", refuse)


def test_histograms_draw_counts_and_durations_in_plain_text(plt, no_tex):
    buckets = [(10, 20, 5), (1000, 1100, 20000), (2_000_000, 2_100_000, 1)]
    fig = plots.histogram_figure(plt, [("cpu1", buckets, "#1f77b4")])
    ax = fig.axes[0]
    _, svg = plots.png_and_svg(plt, fig)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["100 ns", "1 us", "10 us", "100 us",
                                                            "1 ms"]
    assert {"1", "100", "10K"} <= {t.get_text() for t in ax.get_yticklabels()}
    assert ">10K<" in svg and ">1 ms<" in svg
    panels = suite_page.panels_figure(plt, [("a", [("x", buckets, "#1f77b4")])])
    plots.png_and_svg(plt, panels)
    plots.plot_versus(plt, "t", [("a", [1, 0, 50000], "#1f77b4")], 3)


@pytest.mark.parametrize("lo,hi,scale,ticks", [
    (10, 1e6, "log", [10, 100, 1000, 10000, 100000, 1000000]),     # many decades: 1 each
    (10, 1000, "log", [10, 20, 50, 100, 200, 500, 1000]),           # 1-2-5 a decade
    # one decade: 1-2-5 (every 100 us crowded a timeline lane's axis)
    (100, 1000, "log", [100, 200, 500, 1000]),
    (100, 700, "log", [100, 200, 300, 400, 500, 600, 700]),    # less: every step
    (100, 130, "linear", None),         # too narrow for 3: matplotlib's linear steps
])
def test_log_ticks(plt, lo, hi, scale, ticks):
    fig, ax = plt.subplots()
    try:
        plots.log_ticks(ax, lo, hi, axis="x")
        assert ax.get_xscale() == scale
        got = [float(t) for t in ax.get_xticks()]
        if ticks is None:
            steps = {round(b - a, 6) for a, b in zip(got, got[1:])}
            assert len(got) >= 3 and lo <= got[0] and got[-1] <= hi and len(steps) == 1
        else:
            assert got == ticks
        assert [t.get_text() for t in ax.get_xticklabels()] == [plots.tick_ns(t) for t in got]
    finally:
        plt.close(fig)


def test_run_start():
    assert plots.run_start({"runs": [{"start_mono_ns": 50}, {"start_mono_ns": 20}, "x"]}) == 20
    r = {"runs": [{}], "attribution": {"worst": [{"start_ns": 70}]}}
    assert plots.run_start(r, [(1, 90, 5), (1, 80, 5)]) == 70
    assert plots.run_start({"runs": []}) == 0


def test_covered_by_bin_counts_each_instant_of_a_cpu_once():
    """Bins of 1000 ns. CPU 0: 500..1500 (A), then 1200..1800 (B) of which only
    1500..1800 is new; CPU 1: 0..3000 (A), and one past the last bin."""
    arr = np.array([(0, 500, 1000), (0, 1200, 600), (1, 0, 3000), (1, 5000, 100)],
                   dtype=np.float64)
    cats = np.array(["A", "B", "A", "A"], dtype=object)
    out = plots.covered_by_bin(arr, arr[:, 1] / 1e9, cats, 1e-6, 4)
    assert sorted(out) == ["A", "B"]
    assert out["A"].tolist() == [1500, 1500, 1000, 0]
    assert out["B"].tolist() == [0, 300, 0, 0]


def test_file_stems_are_made_unique():
    assert plots.file_stems(["a", "b/c"]) == ["a", "b_c"]
    assert plots.file_stems(["x/run", "y/run"]) == ["x_run", "y_run"]
    assert plots.file_stems(["run", "run"]) == ["run-a", "run-b"]


def hist_run(name, **kw):
    r = {"name": name, "cpu": 1, "min_ns": 5, "max_ns": 15, "mean_ns": 10.0,
         "histogram": {"buckets": [[5, 5, 1], [15, 15, 1]]}}
    r.update(kw)
    return r


def test_versus_label():
    assert plots.versus_label("before", hist_run("cpu1"), 200) == \
        "before cpu1: Minimum=5, Maximum=15, Average=10, Overflows=0"


def test_legacy_graphs_name_every_graph_and_file(plt, monkeypatch):
    drawn = []
    monkeypatch.setattr(plots, "plot_versus", lambda p, title, series, nb: drawn.append(
        (title, [s[0] for s in series], nb)) or b"png")
    a = {"tool": "gap", "runs": [hist_run("cpu1"), hist_run("cpu2")]}
    b = {"tool": "gap", "runs": [hist_run("cpu1")]}
    pngs, texts = plots.legacy_graphs(plt, ["a", "b"], [a, b])
    assert list(pngs) == ["plot_a_v_b-1"] and sorted(texts) == ["a.gp", "a.txt", "b.gp", "b.txt"]
    assert drawn[0][0] == "plot_a_v_b-1: a cpu1 vs b cpu1" and drawn[0][2] == 200
    assert texts["a.gp"] == legacy.gnuplot_text(a) and texts["b.txt"] == legacy.summary_text(b)
    # a send result's pairs, by kind when it has two; each run alone with every=True
    s = {"tool": "send", "runs": [hist_run(n) for n in ("send_1", "null_1", "tcp_1")]}
    pngs, texts = plots.legacy_graphs(plt, ["s"], [s])
    assert list(pngs) == ["plot_s-send_v_null-1", "plot_s-tcp_v_null-1"]
    pngs, texts = plots.legacy_graphs(plt, ["s", "g"], [s, a], every=True, inner=False, nb=50)
    assert list(pngs) == ["plot_s_v_g-1", "plot_s_v_g-2", "plot_s-1", "plot_s-2", "plot_s-3",
                          "plot_g-1", "plot_g-2"]
    assert drawn[-1][2] == 50 and texts["g.gp"] == legacy.gnuplot_text(a, 50)
    # a suite's pairs: only those asked for; a result on no graph gets no files
    pngs, texts = plots.legacy_graphs(plt, ["x", "y", "z"], [a, b, b], pairs=[(2, 0)],
                                      inner=False)
    assert list(pngs) == ["plot_z_v_x-1"] and sorted(texts) == ["x.gp", "x.txt", "z.gp", "z.txt"]
    # a suite of two whose pair is asked for, either way round: drawn once
    for pair in ((1, 0), (0, 1)):
        pngs, _ = plots.legacy_graphs(plt, ["x", "y"], [a, b], pairs=[pair], inner=False)
        assert list(pngs) == ["plot_%s_v_%s-1" % tuple("xy"[k] for k in pair)]


def test_plot_versus_is_a_png(plt):
    png = plots.plot_versus(plt, "t", [("a", [1, 0, 5], "#1f77b4")], 3)
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and plt.get_fignums() == []


def test_pyplot_missing_says_how_to_get_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(UsageError, match="^jtr report needs matplotlib: "):
        plots.pyplot()


def test_timeline_lanes_and_legend(plt):
    res = {"tool": "gap", "runs": [{"cpu": 0, "start_mono_ns": 1000, "duration_ns": 10**9},
                                   {"cpu": 2, "start_mono_ns": 1000, "duration_ns": 10**9}]}
    outl = [(0, 1000 + 10**8, 5000), (2, 1000 + 2 * 10**8, 8000), (0, 1000 + 3 * 10**8, 2000)]
    fig = plots.timeline_figure(plt, res, outl, ["timer tick", "hardirq", "timer tick"])
    try:
        lanes = fig.axes
        assert len(lanes) == 3
        assert [ax.get_ylabel() for ax in lanes[:2]] == ["CPU 0: length", "CPU 2: length"]
        assert [t.get_text() for t in fig.legends[0].get_texts()] == ["timer tick (2)",
                                                                      "hardirq (1)"]
        dots = lanes[0].collections[0]
        assert dots.get_offsets().tolist() == [[0.1, 5000], [0.3, 2000]]
        assert {mc.to_hex(c) for c in dots.get_facecolors()} == {
            plots.CATEGORY_COLOURS["timer tick"]}
        # the lower panel: % of the time lost per bin, both CPUs, stacked by category
        heights = [p.get_height() for p in lanes[2].patches]
        assert sum(heights) == pytest.approx(100.0 * 15000 / (10**9 / 60 * 2))
    finally:
        plt.close(fig)


def test_causes_figure(plt):
    groups = [{"category": "timer tick", "share": 0.6,
               "names": [{"label": "local timer", "share": 0.5}]},
              {"category": "hardirq", "share": 0.4, "names": []}]
    fig = plots.causes_figure(plt, groups)
    try:
        ax = fig.axes[0]
        assert [t.get_text() for t in ax.get_yticklabels()] == ["timer tick", "    local timer",
                                                                "hardirq"]
        assert [t.get_text() for t in ax.texts] == ["60.0 %", "50.0 %", "40.0 %"]
        assert [round(p.get_width(), 6) for p in ax.patches] == [60.0, 50.0, 40.0]
    finally:
        plt.close(fig)


def _lab(colour):
    """CIE L*a*b* of '#rrggbb' (sRGB, D65)."""
    r, g, b = (int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b))
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883
    f = [t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116 for t in (x, y, z)]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def test_the_categories_most_seen_are_told_apart():
    """On a virtual machine the two largest categories are no kernel event and
    the timer tick (cyan and blue once: one blue at a glance). Every pair of the
    categories seen most differs by a colour difference of 30 (CIE76) and in hue
    by 60 degrees or in lightness by 20."""
    import colorsys
    import itertools

    from jtrpy.trace import causes as C
    most = [C.NO_EVENT, C.TICK, C.TASK, C.SOFTIRQ, C.HARDIRQ, C.IPI]
    for a, b in itertools.combinations(most, 2):
        ca, cb = plots.CATEGORY_COLOURS[a], plots.CATEGORY_COLOURS[b]
        la, lb = _lab(ca), _lab(cb)
        de = sum((u - v) ** 2 for u, v in zip(la, lb)) ** 0.5
        ha, hb = (colorsys.rgb_to_hsv(*(int(c[i:i + 2], 16) / 255 for i in (1, 3, 5)))[0] * 360
                  for c in (ca, cb))
        hue = min(abs(ha - hb), 360 - abs(ha - hb))
        assert de >= 30 and (hue >= 60 or abs(la[0] - lb[0]) >= 20), (a, b, ca, cb, de, hue)


def test_hover_titles_each_point_and_each_bar():
    """svg() writes hover()'s texts as <title>s: one in each point's own group
    (a scatter's points in their order), one in a bar's group."""
    plt = plots.pyplot()
    fig, ax = plt.subplots()
    sc = ax.scatter([1, 2, 3], [1, 2, 3])
    plots.hover(fig, sc, "pts", ["one <1>", "two", "three"])
    bars = ax.barh([0], [2])
    plots.hover(fig, bars.patches[0], "bar0", "the bar")
    svg = plots.svg(plt, fig)
    groups = svg[svg.index('<g id="pts">'):].split("<use ")[:4]
    assert [g.rsplit("<title>", 1)[-1].split("</title>")[0] for g in groups[:3]] == [
        "one &lt;1&gt;", "two", "three"]
    assert svg.count("<title>") == 4 and '<g id="bar0">\n<title>the bar</title>' in \
        svg.replace('<g id="bar0"><title>', '<g id="bar0">\n<title>')


def test_suite_panels_share_one_range_and_show_samples_of_zero(plt):
    """A coarse clock reads 0 ns between its ticks: 2.6M samples at 0 ns must be
    seen (at the axis's 0, not off a log axis); panels compared side by side
    share one x range."""
    zero = [[0, 0, 2_600_000], [4_000_000, 4_000_063, 3]]
    fine = [[20, 20, 900], [30, 30, 100]]
    fig = suite_page.panels_figure(plt, [("coarse", [("x", zero, "#1f77b4")]),
                                         ("fine", [("y", fine, "#d62728")])])
    try:
        a, b = fig.axes[:2]
        assert a.get_xlim() == b.get_xlim()
        assert a.get_xlim()[0] < suite_page.ZERO_X < a.get_xlim()[1]
        assert a.get_xticklabels()[0].get_text() == "0"
        xs = a.collections[0].get_segments()[0][0][0]
        assert xs == suite_page.ZERO_X
    finally:
        plt.close(fig)


def test_a_long_cause_label_is_cut_on_the_chart():
    long = "call_function_single from jtr-inject (pid 24336, CPU 0) cpuid_smp_cpuid"
    assert plots.short_label("local timer") == "local timer"
    cut = plots.short_label(long)
    assert len(cut) == plots.LABEL_CHARS and cut.endswith("\u2026") and long.startswith(cut[:-1])
