# SPDX-License-Identifier: GPL-2.0-only
"""jtr suite and jtr report of its folder: a real quick suite, its index, its
report; Ctrl-C in the middle; the 10 ns gnuplot and summary text files written
from Python byte for byte as the C probes write them; bad options."""
import glob
import json
import os
import shutil
import signal
import subprocess
import time

import pytest
from browser import see
from conftest import JTR, load, run_jtr
from test_figures import result_fits
from test_report import assert_png, parse

from jtrpy.errors import JtrError
from jtrpy.formats import legacy
from jtrpy.render import plots
from jtrpy.render.report import warnings_of
from jtrpy.results.figures import result_figures, run_pairs
from jtrpy.system.paths import probe_path
from jtrpy.units import fmt_ns

CPU = str(max(os.sched_getaffinity(0)))
# make test runs these beside the measuring tests, on the first CPU alone
# (scripts/beside.sh): the suite measures the CPU this process may use, at no
# real-time priority, untraced
pytestmark = pytest.mark.beside
BASE_ITEMS = ["null", "null-clock", "clock", "gap"]


def have_send():
    """jtr-send is built (where the jtr front end looks: build/bin or $JTR_LIBEXEC)."""
    try:
        probe_path("send")
    except JtrError:
        return False
    return True


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    d = tmp_path_factory.mktemp("suite") / "s"
    p = run_jtr("suite", "--quick", "--cpus", CPU, "--transports", "udp,shm", "-o", d,
                timeout=300)
    return d, p


def test_suite_runs(suite, validate):
    d, p = suite
    assert p.returncode == 0, p.stdout + p.stderr
    doc = json.loads((d / "suite.json").read_text())
    assert doc["format"] == "jtr-suite/1" and doc["state"] == "done"
    assert doc["partial"] is False and doc["ended_at"]
    items = {e["name"]: e for e in doc["items"]}
    sends = ["send-udp", "send-shm"]
    assert list(items) == BASE_ITEMS + sends
    ran = BASE_ITEMS + (sends if have_send() else [])
    for name in ran:
        e = items[name]
        assert e["status"] == "done" and e["exit_status"] == 0, e
        assert e["folder"] == name and e["result"] == name + "/result.json"
        r = validate(load(d / name))
        assert r["partial"] is False and r["tool"] == e["tool"]
        assert e["command"][:2] == ["jtr", e["tool"]] and e["command"][-2:] == [
            "-o", str(d / name)]
        assert (d / e["log"]).exists()
        # one progress line before and one after each item
        k = ran.index(name) + 1
        assert ("suite: %d/%d %s: jtr %s " % (k, len(ran), name, e["tool"])) in p.stdout
        assert ("suite: %d/%d %s: done in " % (k, len(ran), name)) in p.stdout
    assert load(d / "null-clock")["calibration"]["timebase"] == "clock"
    assert load(d / "gap")["runs"][0]["cpu"] == int(CPU)
    if not have_send():
        for name in sends:
            assert items[name]["status"] == "skipped" and "jtr-send" in items[name]["why"]
            assert not (d / name).exists()
        assert "suite: send: skipped: " in p.stdout
    assert doc["pairs"] == [["null-clock", "null"]]


def test_no_impossible_figure_in_a_suite(suite):
    """Each item's result fits its run (test_figures.py: no share above one, no
    percentage above 100, no cause longer than the run)."""
    d, _ = suite
    items = sorted(glob.glob(str(d / "*" / "result.json")))
    assert items
    for item in items:
        result_fits(os.path.dirname(item), "suite " + item)


@pytest.fixture(scope="module")
def suite_page(suite):
    """jtr report of the quick suite, and the page as Chromium shows it."""
    d, _ = suite
    p = run_jtr("report", d, check=True, timeout=300)
    return d, p, see(d / "report" / "report.html", d / "seen", height=2000)


@pytest.mark.slow
def test_suite_report(suite_page):
    d, p, _ = suite_page
    rep = d / "report"
    assert str(rep / "report.html") in p.stdout
    page = parse(rep / "report.html")
    doc = json.loads((d / "suite.json").read_text())
    html = (rep / "report.html").read_text()
    for e in doc["items"]:  # one section per item, ran or not
        assert '<h2 id="%s">%s</h2>' % (e["name"], e["name"]) in html
    # the table of items, in people's units
    rows = {r[0]: r for r in page.rows if len(r) == 11}
    for e in doc["items"]:
        assert rows[e["name"]][2] == e["status"]
        if e["status"] == "done":
            assert rows[e["name"]][3], "the quantity is named"
            mx = result_figures(load(d / e["name"]))["max_ns"]
            assert rows[e["name"]][8] == fmt_ns(mx)
    ran = [e for e in doc["items"] if e["status"] == "done"]
    for e in ran:
        r = load(d / e["name"])
        stem = e["name"]
        assert_png(rep / ("%s-runs.png" % stem))
        # the gnuplot and summary files of every item, the same text the C probes write
        assert (rep / (stem + ".gp")).read_text() == legacy.gnuplot_text(r)
        assert (rep / (stem + ".txt")).read_text() == legacy.summary_text(r)
        runs = legacy.plottable_runs(r)
        if e["tool"] == "send":
            for k in range(1, len(runs) // 2 + 1):
                assert_png(rep / ("plot_%s_v_null-%d.png" % (stem, k)))
        else:
            for k in range(1, len(runs) + 1):
                assert_png(rep / ("plot_%s-%d.png" % (stem, k)))
    nruns = len(load(d / "null")["runs"])
    for k in range(1, nruns + 1):
        assert_png(rep / ("plot_null-clock_v_null-%d.png" % k))
    assert_png(rep / "suite-tails.png")
    # every file beside the page is on it: a plot drawn inline (SVG) with its PNG
    # linked, or a 10 ns graph or data file linked
    files = [f for f in os.listdir(rep) if f != "report.html"]
    for f in files:
        assert 'href="%s"' % f in html, f
    assert page.svgs == 1 + len(ran)        # the tails, and one figure per item
    assert not page.imgs
    # jtr null's own files are the ones the report wrote (unless a rounded field
    # is on a boundary: legacy's note; test_python_writer_equals_c retries for it)
    if not legacy.ambiguous_fields(load(d / "null")):
        assert (rep / "null.gp").read_text() == (d / "null" / "null.gp").read_text()
        assert (rep / "null.txt").read_text() == (d / "null" / "summary.txt").read_text()


def test_suite_page_as_seen(suite_page):
    """What a reader sees: the warnings once, at the top; every item's tail on one
    plot to its max; each item's runs drawn (one panel per run, none empty)."""
    d, _, seen = suite_page
    words = seen.words()
    doc = json.loads((d / "suite.json").read_text())
    ran = [e["name"] for e in doc["items"] if e["status"] == "done"]
    warnings = set()
    for name in ran:
        warnings.update(warnings_of(load(d / name)))
    assert warnings, "a run here has warnings (virtualised, no PMU, RT throttling)"
    first_item = words.index("%s jtr %s" % (ran[0], load(d / ran[0])["tool"]))
    for w in warnings:
        w = " ".join(w.split())
        assert words.count(w) == 1, w
        assert words.index(w) < first_item
    for name in ran:
        f = result_figures(load(d / name))
        assert "%s (%s), max %s" % (name, f["quantity"], plots.tick_ns(f["max_ns"])) in words
        # a panel per run (a send result's per pair), each titled
        r = load(d / name)
        titles = ["%s %d" % (k, n) for k, n, _, _ in run_pairs(r)] or [
            x["name"] for x in legacy.plottable_runs(r)]
        section = words[words.index("%s jtr %s" % (name, r["tool"])):]
        for t in titles:
            assert t in section, (name, t)
    # the page is drawn: not blank below the top
    assert float(seen.pixels[300:].std()) > 10


def test_suite_interrupted(tmp_path):
    """SIGINT to jtr suite while gap runs: gap writes what it measured, the items
    after it do not start, the finished ones stay, suite.json says partial."""
    d = tmp_path / "s"
    env = dict(os.environ)
    env.pop("JTR_PROG", None)
    proc = subprocess.Popen([JTR, "suite", "-n", "20K", "--runs", "2", "-d", "60", "--cpus", CPU,
                             "--transports", "udp", "-o", str(d)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 120
    # gap has started measuring once its hidden partial folder exists
    while not glob.glob(str(d / ".gap.partial-*")) and time.monotonic() < deadline \
            and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, out + err
    doc = json.loads((d / "suite.json").read_text())
    assert doc["partial"] is True and doc["state"] == "interrupted"
    st = {e["name"]: e for e in doc["items"]}
    for name in ("null", "null-clock", "clock"):
        assert st[name]["status"] == "done" and st[name]["exit_status"] == 0
        assert load(d / name)["partial"] is False
    assert st["gap"]["status"] == "interrupted" and st["gap"]["exit_status"] == 130
    g = load(d / "gap")
    assert g["partial"] is True and g["runs"][0]["samples"] > 0
    assert 0 < g["runs"][0]["duration_ns"] < 60 * 10**9
    assert st["send-udp"]["status"] in ("not run", "skipped")
    assert not (d / "send-udp").exists()
    assert "gap: interrupted after" in out and "interrupted (partial)" in out
    # the report draws what finished
    run_jtr("report", d, check=True, timeout=300)
    assert (d / "report" / "plot_gap-1.png").exists()


# --- the gnuplot and summary text writer, byte for byte -------------------------

def null_until_clear(tmp_path, *args):
    """A jtr null result whose rounded fields leave no doubt (legacy's note)."""
    for k in range(5):
        d = tmp_path / ("n%d" % k)
        run_jtr("null", "-q", "-c", CPU, "-o", d, *args, check=True)
        if not legacy.ambiguous_fields(load(d)):
            return d
    raise AssertionError("5 runs in a row had a rounded field on a boundary")


@pytest.mark.parametrize("args", [
    ("-n", "30K", "--runs", "3", "--desc", 'tst_null "quoted" \\ back_slash'),
    ("-n", "20K", "--runs", "2", "-t", "clock", "-H", "37", "-B", "30"),
    ("-n", "5K", "--runs", "1", "-H", "2000", "-p", "2us"),
])
def test_python_writer_equals_c(tmp_path, args):
    d = null_until_clear(tmp_path, *args)
    r = load(d)
    assert legacy.gnuplot_text(r).encode() == (d / "null.gp").read_bytes()
    assert legacy.summary_text(r).encode() == (d / "summary.txt").read_bytes()


def test_python_writer_equals_c_send(tmp_path):
    if not have_send():
        pytest.skip("jtr-send is not built here (make all builds it)")
    for k in range(5):
        d = tmp_path / ("s%d" % k)
        run_jtr("send", "-q", "-T", "udp", "-n", "10K", "-r", "2", "-c", CPU, "-o", d,
                check=True)
        if not legacy.ambiguous_fields(load(d)):
            break
    r = load(d)
    assert legacy.gnuplot_text(r).encode() == (d / "send.gp").read_bytes()
    assert (d / "summary.txt").read_text().startswith(legacy.summary_text(r))


def test_gnuplot_reads_the_file(tmp_path):
    """gnuplot itself reads the blocks: each block's counts add up to the run's
    samples less its overflows."""
    gp = shutil.which("gnuplot")
    if not gp:
        pytest.skip("gnuplot is not installed (Debian: gnuplot-nox)")
    d = tmp_path / "n"
    run_jtr("null", "-q", "-c", CPU, "-n", "20K", "-r", "2", "-o", d, check=True)
    r = load(d)
    (tmp_path / "x.gp").write_text(legacy.gnuplot_text(r))
    for k, run in enumerate(r["runs"]):
        over = int(legacy.minmax(run, 200).rsplit("=", 1)[1])
        p = subprocess.run([gp, "-e", "stats 'x.gp' index %d using 2 nooutput; "
                            "print int(STATS_sum)" % k], cwd=tmp_path, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        assert int(p.stderr.strip().splitlines()[-1]) == run["samples"] - over, p.stderr


# --- bad input and help ---------------------------------------------------------

@pytest.mark.parametrize("args,words", [
    (["--cpus", "99"], ["--cpus 99"]),
    (["--cpus", "x"], ["--cpus x"]),
    (["-n", "0"], ["-n 0"]),
    (["-n", "lots"], ["-n lots"]),
    (["-r", "0"], ["-r 0"]),
    (["-d", "1ms"], ["-d 1ms"]),
    (["-d", "soon"], ["-d soon"]),
    (["--transports", "carrier-pigeon"], ["--transports carrier-pigeon"]),
    (["--only", "everything"], ["--only everything"]),
    (["--bogus"], ["unknown option"]),
    (["-o"], ["option '-o' needs a value"]),
])
def test_bad_options(tmp_path, args, words):
    p = run_jtr("suite", *args, cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("jtr suite: ") and "Traceback" not in p.stderr
    for w in words:
        assert w in lines[0]
    assert not os.path.exists(tmp_path / "results")


def test_existing_folder(tmp_path):
    p = run_jtr("suite", "--quick", "-o", tmp_path)
    assert p.returncode == 2 and "exists" in p.stderr


def test_report_bad_suite(tmp_path):
    (tmp_path / "suite.json").write_text('{"format": "other"}')
    p = run_jtr("report", tmp_path)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "jtr-suite/1" in p.stderr
    (tmp_path / "suite.json").write_text("{")
    p = run_jtr("report", tmp_path)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "suite.json" in p.stderr


def test_help():
    p = run_jtr("suite", "--help", check=True)
    assert p.stdout.startswith("usage: jtr suite") and "\nexamples:\n" in p.stdout
    assert "suite" in run_jtr("--help").stdout
