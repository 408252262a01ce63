# SPDX-License-Identifier: GPL-2.0-only
"""render.compare_plots: the comparison page's graphs: the tick steps, and what
the two figures draw (read back from matplotlib's axes, not from pixels)."""
import matplotlib.colors as mc
import pytest

from jtrpy.render import compare_plots, plots


@pytest.fixture(scope="module")
def plt():
    return plots.pyplot()


def test_tick_steps_and_rates():
    assert [compare_plots.nice_step(x) for x in (0.7, 1, 1.5, 3, 256, 7000)] == \
        [1, 1, 2, 5, 500, 10000]
    assert compare_plots.per_s(1_780_000) == "1.78 ms/s" and compare_plots.per_s(0) == "0/s"
    assert compare_plots.signed_per_s(-39_084) == "-39.1 us/s"


def test_spectra_figure_draws_each_side_to_its_max_as_every_page(plt):
    """The comparison's tails are drawn as every page draws a spectrum: x = the
    percentile (1/(1-p), log), y = the value; each side to its own maximum."""
    a = [[20, 20, 90], [30, 30, 9], [1000, 1007, 1]]
    b = [[20, 20, 99], [4000, 4031, 1]]
    fig = compare_plots.spectra_figure(plt, [("A", a, 20, 1003, "#1f77b4"),
                                             ("B", b, 20, 4010, "#d62728")], what="rtt")
    ax = fig.axes[0]
    try:
        steps = [ln for ln in ax.get_lines() if ln.get_drawstyle() == "steps-post"]
        assert [ln.get_label() for ln in steps] == ["A, max 1.003 us", "B, max 4.01 us"]
        assert steps[1].get_ydata()[-1] == 4010 and steps[0].get_ydata()[-1] == 1003
        assert ax.get_ylabel() == "rtt" and "percentile" in ax.get_xlabel()
        assert [t.get_text() for t in ax.get_xticklabels()][:3] == ["50%", "90%", "99%"]
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
