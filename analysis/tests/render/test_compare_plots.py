# SPDX-License-Identifier: GPL-2.0-only
"""render.compare_plots: the comparison page's graphs: the CCDF's points (from
all samples down to one sample's share at the maximum), its percentile labels,
the tick steps, and what the two figures draw (read back from matplotlib's
axes, not from pixels)."""
import matplotlib.colors as mc
import pytest

from jtrpy.render import compare_plots, plots


@pytest.fixture(scope="module")
def plt():
    return plots.pyplot()


def test_ccdf_points_run_from_all_to_one_sample_at_the_max():
    buckets = [[20, 20, 90], [30, 30, 9], [1000, 1007, 1]]
    pts = compare_plots.ccdf_points(buckets, 20, 1003)
    assert pts[0] == (20, 1.0)
    # above 20 ns: 10 of 100; above 30 ns: 1 of 100; the last sample at the max
    assert pts[1:] == [(20, 0.1), (30, 0.01), (1003, 0.01)]
    assert all(y > 0 for _, y in pts)
    assert compare_plots.ccdf_points([], 0, 0) == []


@pytest.mark.parametrize("y,label", [(1, "all"), (0.1, "p90"), (0.01, "p99"),
                                     (0.001, "p99.9"), (1e-6, "p99.9999")])
def test_fraction_labels_are_percentiles(y, label):
    assert compare_plots._fraction_label(y) == label


def test_tick_steps_and_rates():
    assert [compare_plots.nice_step(x) for x in (0.7, 1, 1.5, 3, 256, 7000)] == \
        [1, 1, 2, 5, 500, 10000]
    assert compare_plots.per_s(1_780_000) == "1.78 ms/s" and compare_plots.per_s(0) == "0/s"
    assert compare_plots.signed_per_s(-39_084) == "-39.1 us/s"


def test_ccdf_points_on_a_log_axis():
    """A minimum of 0 is drawn at 1 ns (a log axis); the last sample at the run's
    maximum, not at its bucket's end."""
    assert compare_plots.ccdf_points([[0, 0, 1], [900, 1007, 1]], 0, 950) == [
        (1, 1.0), (1, 0.5), (950, 0.5)]


def test_ccdf_figure_draws_each_side_to_its_max(plt):
    a = [[20, 20, 90], [30, 30, 9], [1000, 1007, 1]]
    b = [[20, 20, 99], [4000, 4031, 1]]
    fig = compare_plots.ccdf_figure(plt, [("A", a, 20, 1003, "#1f77b4"),
                                          ("B", b, 20, 4010, "#d62728")], what="rtt")
    ax = fig.axes[0]
    try:
        steps = [ln for ln in ax.get_lines() if ln.get_drawstyle() == "steps-post"]
        assert [ln.get_label() for ln in steps] == ["A, max 1.003 us", "B, max 4.01 us"]
        assert list(steps[1].get_xdata()) == [20, 20, 4010]
        assert list(steps[1].get_ydata()) == [1.0, 0.01, 0.01]
        assert steps[0].get_linestyle() == "-" and steps[1].get_linestyle() == "--"
        assert [t.get_text() for t in ax.get_yticklabels()] == ["all", "p90", "p99"]
        assert ax.get_xlabel() == "rtt" and ax.get_xscale() == ax.get_yscale() == "log"
    finally:
        plt.close(fig)


def test_delta_figure_bars_are_the_changes(plt):
    causes = [{"category": "task preemption", "name": "kworker/1:1", "a_ns_per_s": 5000,
               "b_ns_per_s": 2000, "diff_ns_per_s": -3000},
              {"category": "timer tick", "name": "local timer", "a_ns_per_s": 1000,
               "b_ns_per_s": 2000, "diff_ns_per_s": 1000},
              {"category": "hardirq", "name": "unchanged", "a_ns_per_s": 7, "b_ns_per_s": 7,
               "diff_ns_per_s": 0}]
    fig = compare_plots.delta_figure(plt, causes)
    ax = fig.axes[0]
    try:
        bars = ax.patches
        # a cause that did not change is left out; the largest change on top
        assert [b.get_width() for b in bars] == [-3000, 1000]
        assert [b.get_y() + b.get_height() / 2 for b in bars] == [1, 0]
        colours = [plots.CATEGORY_COLOURS[c] for c in ("task preemption", "timer tick")]
        assert [mc.to_hex(b.get_facecolor()) for b in bars] == colours
        assert [t.get_text() for t in ax.texts] == ["-3.0 us/s", "+1.0 us/s"]
        labels = [t.get_text() for t in ax.get_yticklabels()]       # top first
        assert labels == ["task preemption: kworker/1:1\nA 5.0 us/s, B 2.0 us/s",
                          "timer tick: local timer\nA 1.0 us/s, B 2.0 us/s"]
        lo, hi = ax.get_xlim()
        assert lo == -3000 * 1.6 and hi == 3000 * 1.6       # room both sides
        assert "0" in [t.get_text() for t in ax.get_xticklabels()]
    finally:
        plt.close(fig)
    # nothing changed: the causes are still shown, at 0
    fig = compare_plots.delta_figure(plt, causes[2:])
    try:
        assert [b.get_width() for b in fig.axes[0].patches] == [0]
    finally:
        plt.close(fig)
