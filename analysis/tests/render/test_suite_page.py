# SPDX-License-Identifier: GPL-2.0-only
"""render.suite_page: a jtr suite folder's page from items written here (loaded
by drivers.report): the warnings said once with the items they concern, the
items' table, each item's panels (a send run beside its null run,
the clock_gettime loop beside the RDTSC one), the thinned ticks, and the page
with its plots and jtr_null files."""
import json

import pytest

from jtrpy.drivers.report import suite_items
from jtrpy.render import plots
from jtrpy.render import suite_page as S
from jtrpy.results.figures import result_figures
from jtrpy.results.result import load_result
from jtrpy.units import fmt_ns

from ..synthetic import loops, make_result, make_run


def write(folder, doc):
    folder.mkdir(parents=True)
    (folder / "result.json").write_text(json.dumps(doc))


def entry(name, tool="null", status="done", folder=True, **kw):
    e = {"name": name, "tool": tool, "status": status, "folder": name if folder else None,
         "command": ["jtr", tool]}
    e.update(kw)
    return e


@pytest.fixture
def suite(tmp_path):
    """null and null-clock (two runs each), and a failed send item."""
    for name, seed in (("null", 1), ("null-clock", 3)):
        r = make_result(make_run(loops(seed, n=5000), cpu=1, name="run 1"),
                        make_run(loops(seed + 1, n=5000), cpu=1, name="run 2"), tool="null")
        r["warnings"] = ["memory not locked"] + (["clock_gettime is slow"]
                                                 if name == "null-clock" else [])
        write(tmp_path / name, r)
    doc = {"format": "jtr-suite/1", "command": ["jtr suite"], "host": "h", "partial": True,
           "started_at": "2026-01-01T00:00:00Z", "ended_at": "2026-01-01T00:01:00Z",
           "items": [entry("null"), entry("null-clock"),
                     entry("send-udp", "send", "failed", why="exit 1")],
           "pairs": [["null-clock", "null"]]}
    (tmp_path / "suite.json").write_text(json.dumps(doc))
    return tmp_path, doc


def test_warnings_once_with_the_items_they_concern(suite):
    folder, doc = suite
    loaded, _ = suite_items(str(folder), doc["items"])
    html = S.warnings_once(doc["items"], loaded)
    assert html.count("<li>") == 2
    assert "<li>memory not locked <small>(every item)</small></li>" in html
    assert "<li>clock_gettime is slow <small>(null-clock)</small></li>" in html
    assert S.warnings_once(doc["items"], {}) == ""


def test_items_table_in_peoples_units(suite):
    folder, doc = suite
    loaded, why = suite_items(str(folder), doc["items"])
    rows = [r.split("</td><td>") for r in S.items_table(doc["items"], loaded, why).split(
        "\n") if r.startswith("<tr><td>")]
    f = result_figures(loaded["null"])
    assert rows[0][:5] == ["<tr><td>null", "null", "done", "null", "10,000"]
    assert rows[0][5:9] == [fmt_ns(f["percentiles_ns"][k]) for k in ("50", "99", "99.99")] + \
        [fmt_ns(f["max_ns"])]
    assert rows[0][9] == "%.3f %%" % f["lost_pct"]
    assert rows[2] == ["<tr><td>send-udp", "send", "failed", "", "", "", "", "", "", "",
                       "exit 1</td></tr>"]


def hist_run(name, **kw):
    return dict({"name": name, "histogram": {"buckets": [[10, 10, 1]]}}, **kw)


def test_panels_of_a_send_result_pair_each_run_with_its_null():
    r = {"tool": "send", "runs": [hist_run("send_1"), hist_run("null_1"), hist_run("send_2"),
                                  hist_run("null_2")]}
    p = S.panels_of("send-udp", r)
    assert [(t, [s[0] for s in series], [s[2] for s in series]) for t, series in p] == [
        ("send 1", ["send_1", "null_1"], [plots.SIDE_COLOURS[1], plots.SIDE_COLOURS[0]]),
        ("send 2", ["send_2", "null_2"], [plots.SIDE_COLOURS[1], plots.SIDE_COLOURS[0]])]


def test_panels_beside_a_partners_runs():
    mine = {"tool": "null", "runs": [hist_run("run 1"), hist_run("run 2"), {"name": "x"}]}
    theirs = {"tool": "null", "runs": [hist_run("run 1")]}
    p = S.panels_of("null-clock", mine, ("null", theirs))
    assert [(t, [s[0] for s in series]) for t, series in p] == [
        ("run 1", ["null-clock run 1", "null run 1"]), ("run 2", ["null-clock run 2"])]
    alone = S.panels_of("null", {"runs": [{"histogram": {"buckets": []}}]})
    assert alone[0][0] == "run 1" and alone[0][1][0][2] == plots.SIDE_COLOURS[0]


@pytest.mark.parametrize("lo,hi,ticks", [
    (1, 10_000, [1, 100, 10_000]),          # five decades, every other one
    (20, 300, [20, 50, 100, 200]),          # one decade: 1-2-5
    (30, 90, [30, 90]),                     # nothing but 50 between: the ends
    (10, 10**8, [10, 1000, 10**5, 10**7]),
])
def test_few_ticks(lo, hi, ticks):
    assert S.few_ticks(lo, hi) == ticks


def test_runs_table():
    r = {"runs": [{"name": "cpu1", "cpu": 1, "samples": 12345, "min_ns": 20,
                   "percentiles_ns": {"50": 30, "99.999": 2000}, "max_ns": 9000}, "junk"]}
    (row,) = [x for x in S.runs_table(r).split("\n") if x.startswith("<tr><td>")]
    assert row == ("<tr><td>cpu1</td><td>1</td><td>12,345</td><td>20 ns</td><td>30 ns</td>"
                   "<td></td><td></td><td></td><td>2.0 us</td><td>9.0 us</td></tr>")


def test_the_page(suite, monkeypatch):
    """Three items with results (the 10 ns graphs stubbed: test_plots.py draws them)."""
    folder, doc = suite
    write(folder / "gap", make_result(make_run(loops(5, n=5000), cpu=1)))
    doc["items"].append(entry("gap", "gap"))
    monkeypatch.setattr(plots, "plot_versus", lambda *a: b"\x89PNG stub")
    drawn = []

    def png_and_svg(plt, fig):
        """The figures' panels and lines, not their pixels (saving is most of the time)."""
        drawn.append([(ax.get_title(), [ln.get_label() for ln in ax.get_lines()])
                      for ax in fig.axes if ax.get_visible()])
        plt.close(fig)
        return b"\x89PNG stub", "<svg>%d</svg>" % len(drawn)
    monkeypatch.setattr(plots, "png_and_svg", png_and_svg)
    pngs, page, texts = S.build(str(folder), doc, {"histo_buckets": 50},
                                *suite_items(str(folder), doc["items"]))
    assert sorted(pngs) == ["gap-runs", "null-clock-runs", "null-runs", "plot_gap-1",
                            "plot_null-1", "plot_null-2", "plot_null-clock-1",
                            "plot_null-clock-2", "plot_null-clock_v_null-1",
                            "plot_null-clock_v_null-2", "suite-tails"]
    assert sorted(texts) == ["gap.gp", "gap.txt", "null-clock.gp", "null-clock.txt",
                             "null.gp", "null.txt"]
    assert "# xrange_1 = 500\n" in texts["gap.gp"]
    assert "<h1>jtr suite: %s</h1>" % folder.name in page
    assert "<b>(partial: interrupted)</b>" in page and "<code>jtr suite</code>" in page
    assert "<p>jtr send, failed: exit 1</p>" in page
    assert "null-clock: each run&#x27;s histogram, on one range (against null)" in page
    assert [page.index("<svg>%d</svg>" % i) for i in (1, 2, 3, 4)] == sorted(
        page.index("<svg>%d</svg>" % i) for i in (1, 2, 3, 4))    # in the order drawn
    # the tails: each item on its quantity, to its maximum; then each item's runs
    null = load_result(str(folder / "null"))
    tails = drawn[0][0][1]
    assert "null (null), max %s" % plots.tick_ns(max(r["max_ns"] for r in null["runs"])) in tails
    assert len([x for x in tails if ", max " in x]) == 3
    assert [title for title, _ in drawn[2]] == ["run 1", "run 2"]     # null-clock's panels
    assert [lines for _, lines in drawn[2]] == [["null-clock run 1", "null run 1"],
                                                ["null-clock run 2", "null run 2"]]
