# SPDX-License-Identifier: GPL-2.0-only
"""jtr report: the HTML page and its PNGs, on real short gap runs and on synthetic
results (attribution, warnings); the raw numbers on the page are those of
result.json; the page as headless Chromium shows it (browser.py): the summary
at the top in people's units, the spectrum to the maximum, every outlier
coloured by its cause."""
import collections
import copy
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import time

import browser
import pytest
from conftest import load, need_tracing, run_jtr

from jtrpy.results import hist
from jtrpy.results.result import PERCENTILE_KEYS
from jtrpy.system.files import dumps_json as dumps_result
from jtrpy.trace.events import SWITCH, read_events
from jtrpy.units import fmt_ns

# make test runs these beside the measuring tests, on the first CPU alone at
# SCHED_IDLE (scripts/beside.sh): the pages of synthetic results; those that
# measure or trace (the real runs) are marked every_cpu and run in the first phase
pytestmark = pytest.mark.beside


class Page(html.parser.HTMLParser):
    """Tables as lists of rows of cell texts, images, and all text."""

    def __init__(self):
        super().__init__()
        self.rows, self.imgs, self.text, self.svgs = [], [], [], 0
        self._row = self._cell = None

    def handle_starttag(self, tag, attrs):
        if tag == "svg":
            self.svgs += 1
        if tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "img":
            self.imgs.append(dict(attrs))

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append("".join(self._cell))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def parse(path):
    p = Page()
    with open(path, encoding="utf-8") as f:
        p.feed(f.read())
    p.close()
    return p


def field(page, name):
    """Values of every table row whose first cell is @name."""
    return [r[1] for r in page.rows if len(r) > 1 and r[0] == name]


def assert_png(path):
    import matplotlib.image
    assert os.path.getsize(path) > 1000, path
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n", path
    a = matplotlib.image.imread(path)
    assert a.ndim == 3 and a.shape[0] > 100 and a.shape[1] > 100
    assert float(a[..., :3].var()) > 0, "%s is blank" % path


def assert_numbers(page, result):
    """p99, p99.99, max and time lost of every run appear as in result.json."""
    for run in result["runs"]:
        for k in ("99", "99.99"):
            assert json.dumps(run["percentiles_ns"][k]) in field(page, "percentiles_ns." + k)
        assert json.dumps(run["max_ns"]) in field(page, "max_ns")
        if "lost_time_pct" in run:
            assert json.dumps(run["lost_time_pct"]) in field(page, "lost_time_pct")
            assert json.dumps(run["outliers"]["lost_ns"]) in field(page, "outliers.lost_ns")


# --- real runs ---------------------------------------------------------------

@pytest.fixture(scope="module")
def gaps(tmp_path_factory):
    d = tmp_path_factory.mktemp("gaps")
    cpu = str(max(os.sched_getaffinity(0)))  # CPU 1 here, unless this process may not
    out = []
    for name in ("a", "b"):
        p = d / name
        run_jtr("gap", "-c", cpu, "-d", "1", "-o", p, check=True)
        out.append(str(p))
    return out


@pytest.mark.every_cpu
def test_real_run(gaps):
    p = run_jtr("report", gaps[0], check=True)
    rep = os.path.join(gaps[0], "report")
    assert os.path.join(rep, "report.html") in p.stdout
    for n in ("histogram", "percentiles"):
        assert_png(os.path.join(rep, n + ".png"))
    page = parse(os.path.join(rep, "report.html"))
    assert (len(page.imgs), page.svgs) == (0, 2)      # spectrum and histogram, inline SVG
    assert_numbers(page, load(gaps[0]))
    assert field(page, "hostname") == [load(gaps[0])["host"]["hostname"]]
    assert "none active" in "".join(page.text)


@pytest.mark.every_cpu
def test_rt_throttling_is_warned_of_only_where_it_applies(gaps, tmp_path):
    """A SCHED_OTHER gap run's page says nothing of RT throttling; a SCHED_FIFO
    one's says it once (the probe's own line: its busy loop is stopped for 50 ms
    of every second), and names the hypervisor in words."""
    if not os.path.exists("/proc/sys/kernel/sched_rt_runtime_us"):
        pytest.skip("no RT throttling on this kernel (no sched_rt_runtime_us): nothing to warn of")

    def throttled_run(name, *args):
        """A gap run made while RT throttling is on: the tuning tests beside this
        one switch it off for a while (a profile's kernel.sched_rt_runtime_us=-1),
        and a run made then has nothing to warn of; up to three tries, said."""
        for attempt in (1, 2, 3):
            out = tmp_path / ("%s%d" % (name, attempt))
            run_jtr("gap", "-c", str(max(os.sched_getaffinity(0))), "-d", "300ms", "-o", out,
                    *args, check=True)
            if (load(out)["host"].get("rt_throttling") or {}).get("enabled"):
                return out
            print("RT throttling was off during try %d (a tuning test beside this one)"
                  % attempt)
        pytest.skip("RT throttling stayed off (a tuning test beside this one held it)")

    other_run = gaps[0]
    if not (load(other_run)["host"].get("rt_throttling") or {}).get("enabled"):
        other_run = str(throttled_run("other"))
    run_jtr("report", other_run, check=True)
    other = " ".join("".join(parse(os.path.join(other_run, "report", "report.html")).text).split())
    assert "RT throttling" not in other, other
    if os.geteuid() != 0:
        pytest.skip("a SCHED_FIFO run needs root here")
    fifo = throttled_run("fifo", "-f", "1")
    run_jtr("report", fifo, check=True)
    text = " ".join("".join(parse(fifo / "report" / "report.html").text).split())
    assert text.count("RT throttling") == 1, text
    assert "RT throttling is on (" in text and "busy loop is stopped for about" in text
    if load(fifo)["host"].get("hypervisor") == "KVMKVMKVM":
        assert "virtual machine (KVM): the hypervisor can take the CPU" in text


@pytest.mark.every_cpu
def test_real_pair_compare(gaps, tmp_path):
    """Two results make the comparison page (tests/test_compare_e2e.py looks at it
    in a browser): its files, and jtr compare's verdict on it."""
    out = tmp_path / "cmp"
    run_jtr("report", "-o", out, gaps[0], gaps[1], check=True)
    assert sorted(os.listdir(out)) == ["a.gp", "a.txt", "b.gp", "b.txt", "plot_a_v_b-1.png",
                                       "report.html", "spectra.png"]
    for n in ("spectra", "plot_a_v_b-1"):
        assert_png(out / (n + ".png"))
    page = parse(out / "report.html")
    c = json.loads(run_jtr("compare", "--json", gaps[0], gaps[1], check=True).stdout)
    text = " ".join("".join(page.text).split())
    assert "Verdict: " + c["verdict"] in text
    for s in c["suggestions"]:
        assert s in text


# --- synthetic results ---------------------------------------------------------

def synthetic(folder, attributed=True, warn=True, each=True):
    """A one-CPU gap result with a histogram, outliers.csv and an attribution
    (with each outlier's category unless @each is False: as attributed before
    jtr kept them)."""
    bits = 7
    values = {30: 900000, 31: 90000, 40: 9000, 2000: 50, 15000: 10, 250000: 2}
    idx = {}
    for v, n in values.items():
        i = hist.bucket_index(bits, v)
        idx[i] = idx.get(i, 0) + n
    buckets = [list(hist.bucket_lo_hi(bits, i)) + [idx[i]] for i in sorted(idx)]
    n = sum(values.values())
    t0 = 5_000_000_000
    outl = [(t0 + 1000 * k * 7919 % 999_000_000, 2000 if k < 50 else 15000 if k < 60
             else 250000) for k in range(62)]
    outl.sort()
    lost = sum(n - 30 for _, n in outl)
    run = {
        "name": "cpu1", "cpu": 1, "partial": False, "start_mono_ns": t0,
        "end_mono_ns": t0 + 10**9, "duration_ns": 10**9, "samples": n, "min_ns": 30,
        "max_ns": 250000, "mean_ns": 31.5, "stddev_ns": 250.25,
        "percentiles_ns": {k: hist.value_at_percentile(buckets, float(k), 30, 250000)
                           for k in PERCENTILE_KEYS},
        "histogram": {"unit": "ns", "sub_bucket_bits": bits, "max_rel_error": 2 ** -bits,
                      "total": n, "buckets": buckets},
        "loop_period_ns": 1000.5, "pre_min_ns": 30, "lost_time_pct": 100.0 * lost / 1e9,
        "outliers": {"threshold_ns": 1000, "count": 62, "per_s": 62.0, "logged": 62,
                     "dropped": 3 if warn else 0, "log": "outliers.csv",
                     "total_ns": sum(n for _, n in outl), "lost_ns": lost, "max_ns": 250000},
        "pmu": None if warn else {
            "cycles": 2_000_000_000, "instructions": 3_000_000_000, "cache_misses": 4000,
            "dtlb_load_misses": 200, "ipc": 1.5,
            "per_million_loops": {"cache_misses": 4.0, "dtlb_load_misses": 0.2}},
    }
    r = {
        "format": "jtr-result/1", "tool": "gap", "jtr_version": "0.1",
        "command": ["jtr gap", "-c", "1"] + (["-f", "1"] if warn else []),
        "started_at": "2026-11-22T08:00:00.000Z",
        # a FIFO busy loop (where RT throttling applies) when it warns
        "privileges": {"uid": 0, "fifo_priority": 1 if warn else None},
        "ended_at": "2026-11-22T08:00:01.000Z", "partial": warn,
        "host": {"hostname": "synth-host", "kernel": "6.1.0", "virtualised": warn,
                 "hypervisor": "KVMKVMKVM" if warn else None,
                 "rt_throttling": {"enabled": warn, "runtime_us": 950000,
                                   "period_us": 1000000},
                 "tuning_profile": "jtr-isolated" if warn else None},
        "params": {"duration_ns": 10**9, "cpus": [1], "hist_error": 0.01},
        "runs": [run], "files": {"outliers": "outliers.csv"},
        "warnings": ["memory not locked (synthetic)"] if warn else [],
    }
    if attributed:
        cats = [("timer tick", "local timer"), ("task preemption", "kworker/1:1 (pid 9)"),
                ("hardirq", "36 virtio1-req.0")]
        r["attribution"] = {
            "tracer": {"backend": "ebpf", "events": 1234, "dropped": 7 if warn else 0,
                       "start_ns": t0, "end_ns": t0 + 10**9,
                       "cost": {"setup_cpu_ns": 40_000_000, "tracing_cpu_ns": 2_500_000,
                                "process_cpus": "0", "kernel_ns": 600_000,
                                "kernel_runs": 1500}},
            "outliers": {"count": 62, "total_ns": run["outliers"]["total_ns"],
                         "traced_ns": 500000},
            "causes": [{"category": c, "name": nm, "count": 20, "primary_count": 20,
                        "total_ns": 300000 // (j + 1), "share": 0.5 / (j + 1),
                        "p50_ns": 2000, "max_ns": 250000, "per_s": 20.0}
                       for j, (c, nm) in enumerate(cats)],
            "worst": [{"cpu": 1, "start_ns": s, "length_ns": n, "category": cats[j % 3][0],
                       "name": cats[j % 3][1], "chain": "chain %d" % j}
                      for j, (s, n) in enumerate(sorted(outl, key=lambda x: -x[1])[:5])],
            "warnings": ["7 events dropped"] if warn else [],
        }
        if each:    # outlier k: category k % 3, in outliers.csv's order
            r["attribution"]["per_outlier"] = {"categories": [c for c, _ in cats],
                                               "main": "012" * 20 + "01"}
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "result.json"), "w") as f:
        f.write(dumps_result(r) + "\n")
    with open(os.path.join(folder, "outliers.csv"), "w") as f:
        f.write("cpu,start_ns,length_ns\n")
        f.writelines("1,%d,%d\n" % o for o in outl)
    return r


def test_synthetic_attributed(tmp_path):
    r = synthetic(tmp_path / "s")
    run_jtr("report", tmp_path / "s", check=True)
    rep = tmp_path / "s" / "report"
    assert sorted(os.listdir(rep)) == ["causes.png", "histogram.png", "percentiles.png",
                                       "report.html", "timeline.png"]
    for n in ("histogram", "percentiles", "timeline", "causes"):
        assert_png(rep / (n + ".png"))
    page = parse(rep / "report.html")
    assert (len(page.imgs), page.svgs) == (0, 4)
    assert_numbers(page, r)
    text = "".join(page.text)
    for w in ("RT throttling is enabled", "virtual machine (KVM): the hypervisor can take",
              "partial run", "3 outliers did not fit", "the tracer dropped 7 events",
              "memory not locked (synthetic)", "jtr-isolated"):
        assert w in text, w
    causes = [row for row in page.rows if len(row) == 9 and row[0] != "category"]
    assert [(c[0], c[1], c[4]) for c in causes] == [
        (c["category"], c["name"], json.dumps(c["total_ns"])) for c in r["attribution"]["causes"]]
    # and for people: 50.0 % and 300.0 us of the timer tick
    assert ["timer tick", "local timer", "50.0 %", "300.0 us", "20", "250.0 us", "20.0"] in \
        page.rows
    assert field(page, "rt_throttling.runtime_us") == ["950000"]
    assert field(page, "duration_ns") == ["1000000000", "1000000000"]  # params, run
    # the tracer's backend and cost; no hardware counters in this one
    assert "tracer: eBPF (jtr trace), 1,234 events, 7 dropped" in text
    assert ("Tracer cost: BPF programs 600.0 us in the kernel (1500 runs, 400 ns each, on all "
            "CPUs); the tracer process 2.50 ms CPU while tracing (0.25 % of CPU 0), 40.00 ms "
            "to start") in text
    assert field(page, "pmu") == ["null"]


def test_hardware_counters_in_the_report(tmp_path):
    """Where the run has hardware counters, the report shows IPC and misses per
    million loops beside the jitter numbers."""
    synthetic(tmp_path / "s", warn=False)
    run_jtr("report", tmp_path / "s", check=True)
    page = parse(tmp_path / "s" / "report" / "report.html")
    assert field(page, "pmu.ipc") == ["1.5"]
    assert field(page, "pmu.per_million_loops.cache_misses") == ["4.0"]
    assert field(page, "pmu.per_million_loops.dtlb_load_misses") == ["0.2"]


def test_synthetic_pair_and_no_warnings(tmp_path):
    """An attributed result against one that is not: both sides' summaries with
    their numbers for people; the per-cause chart is refused, with why."""
    a = synthetic(tmp_path / "a", attributed=False, warn=False)
    b = synthetic(tmp_path / "b")
    run_jtr("report", "-o", tmp_path / "o", tmp_path / "a", tmp_path / "b", check=True)
    files = sorted(os.listdir(tmp_path / "o"))
    assert files == ["a.gp", "a.txt", "b.gp", "b.txt", "plot_a_v_b-1.png", "report.html",
                     "spectra.png"]
    text = " ".join("".join(parse(tmp_path / "o" / "report.html").text).split())
    for r in (a, b):
        run = r["runs"][0]
        assert "max" + fmt_ns(run["max_ns"]).replace(" ", "") in text.replace(" ", "")
    assert "Not compared: A not attributed" in text


# --- 10 ns graphs (plot_X_v_Y-N.png) and gnuplot files -------------------------------

def colour_pixels(path, hex_colour, tol=0.02):
    """How many pixels of the PNG are within @tol of @hex_colour (the series'
    outline colour; fills are lighter)."""
    import matplotlib.image
    import numpy
    a = matplotlib.image.imread(str(path))[..., :3]
    want = numpy.array([int(hex_colour[i:i + 2], 16) / 255.0 for i in (1, 3, 5)])
    return int((numpy.abs(a - want).max(axis=2) < tol).sum())


def send_like(folder, pairs=2):
    """A result of send runs (send_1, null_1, ...): sends around 2 us, null loops
    around 2.1 us with a thinner tail, runs named as jtr send names them."""
    r = synthetic(folder, attributed=False, warn=False)
    bits = 7
    runs = []
    for k in range(1, pairs + 1):
        for kind, values in (("send", {1500: 5000, 2000: 90000, 4000: 400, 9000: 3}),
                             ("null", {2100: 95000, 2600: 30, 7000: 1})):
            idx = {}
            for v, n in values.items():
                i = hist.bucket_index(bits, v)
                idx[i] = idx.get(i, 0) + n
            b = [list(hist.bucket_lo_hi(bits, i)) + [idx[i]] for i in sorted(idx)]
            n = sum(values.values())
            lo, hi = min(values), max(values)
            runs.append({"name": "%s_%d" % (kind, k), "kind": kind, "cpu": 1,
                         "samples": n, "min_ns": lo, "max_ns": hi,
                         "mean_ns": sum(v * c for v, c in values.items()) / n,
                         "stddev_ns": 1.0,
                         "percentiles_ns": {p: hist.value_at_percentile(b, float(p), lo, hi)
                                            for p in PERCENTILE_KEYS},
                         "histogram": {"unit": "ns", "sub_bucket_bits": bits,
                                       "max_rel_error": 2 ** -bits, "total": n, "buckets": b}})
            if kind == "null":
                runs[-1]["spins"] = 1234
    r.update(tool="send", runs=runs, params={"samples": 95403, "msg_len": 64,
                                             "histo_buckets": 1000, "desc": "tst_sock.sh"})
    with open(os.path.join(folder, "result.json"), "w") as f:
        f.write(dumps_result(r) + "\n")
    return r


def test_versus_graphs_of_two_results(tmp_path):
    """plot_A_v_B-N.png for run N of A against run N of B: both series drawn."""
    from jtrpy.formats import legacy
    from jtrpy.render import plots as report
    a = synthetic(tmp_path / "before", attributed=False, warn=False)
    b = synthetic(tmp_path / "after", attributed=False, warn=False)
    # B is slower: every value 40 ns later, so the two series do not overlap
    for bk in b["runs"][0]["histogram"]["buckets"]:
        bk[0] += 40
        bk[1] += 40
    b["runs"][0]["min_ns"] += 40
    (tmp_path / "after" / "result.json").write_text(dumps_result(b) + "\n")
    out = tmp_path / "o"
    p = run_jtr("report", "-o", out, tmp_path / "before", tmp_path / "after", check=True)
    assert "plot_before_v_after-1.png" in p.stdout
    png = out / "plot_before_v_after-1.png"
    assert_png(png)
    for colour in report.SIDE_COLOURS:
        assert colour_pixels(png, colour) > 200, colour
    assert (out / "before.gp").read_text() == legacy.gnuplot_text(a)
    assert (out / "after.txt").read_text() == legacy.summary_text(b)
    page = parse(out / "report.html")
    assert "plot_before_v_after-1" in [i.get("alt") for i in page.imgs]
    assert "10 ns graphs (jtr_null's gnuplot format)" in "".join(page.text)


def test_versus_same_names(tmp_path):
    """Two results in folders of the same name get -a and -b."""
    synthetic(tmp_path / "x" / "run", attributed=False, warn=False)
    synthetic(tmp_path / "y" / "run", attributed=False, warn=False)
    run_jtr("report", "-o", tmp_path / "o", tmp_path / "x" / "run", tmp_path / "y" / "run",
            check=True)
    assert (tmp_path / "o" / "plot_run-a_v_run-b-1.png").exists()
    assert (tmp_path / "o" / "run-a.gp").exists() and (tmp_path / "o" / "run-b.gp").exists()


def test_send_vs_null_pairs(tmp_path):
    """A result of send runs gets plot_NAME_v_null-K.png per pair, with the send run
    and its null run, and its gnuplot file holds the runs in order."""
    from jtrpy.render import plots as report
    r = send_like(tmp_path / "tst_sock")
    p = run_jtr("report", tmp_path / "tst_sock", check=True)
    rep = tmp_path / "tst_sock" / "report"
    for k in (1, 2):
        png = rep / ("plot_tst_sock_v_null-%d.png" % k)
        assert_png(png)
        for colour in report.SIDE_COLOURS:
            assert colour_pixels(png, colour) > 100, (k, colour)
    assert "plot_tst_sock_v_null-1.png" in p.stdout
    gp = (rep / "tst_sock.gp").read_text()
    titles = [line for line in gp.splitlines() if line.startswith("# title_")]
    assert len(titles) == len(r["runs"]) == 4
    assert "Msg\\_size=64" in titles[0] and "tst\\_sock.sh (null loop): no\\_send\\_spin=1234" \
        in titles[1]
    assert "# xrange_1 = 10000" in gp
    # a bucket's count sits at the 10 ns bucket of its lowest value: 2000 ns is
    # bucket [2000, 2007], 2100 ns bucket [2096, 2111] (16 ns wide at 1 %)
    assert "\n2000 90000\n" in gp and "\n2090 95000\n" in gp


def test_gnuplot_option(tmp_path):
    """--gnuplot: each run alone (plot_NAME-N.png) and the files, for any result;
    --histo-buckets sets the 10 ns buckets."""
    from jtrpy.formats import legacy
    r = synthetic(tmp_path / "g", attributed=False, warn=False)
    run_jtr("report", tmp_path / "g", check=True)
    assert not (tmp_path / "g" / "report" / "g.gp").exists()
    run_jtr("report", "--gnuplot", "--histo-buckets", "50", tmp_path / "g", check=True)
    rep = tmp_path / "g" / "report"
    assert_png(rep / "plot_g-1.png")
    text = (rep / "g.gp").read_text()
    assert text == legacy.gnuplot_text(r, 50)
    assert "# xrange_1 = 500\n" in text and "histo\\_buckets=50," in text
    # values of 2000 ns and more are past 500 ns: the overflows
    over = sum(c for lo, _, c in r["runs"][0]["histogram"]["buckets"] if lo >= 500)
    assert "Overflows=%d\"" % over in text
    assert (rep / "g.txt").read_text().count("% are below") == 5


# --- bad input and help ----------------------------------------------------------

@pytest.mark.parametrize("case", ["missing", "notjson", "notresult", "noargs", "three",
                                  "badopt", "nohist", "buckets0", "bucketsx"])
def test_bad_input(tmp_path, case):
    bad = tmp_path / "bad.json"
    if case == "notjson":
        bad.write_text("hello")
    elif case == "notresult":
        bad.write_text('{"format": "something-else"}')
    args = {"missing": [tmp_path / "nope"], "notjson": [bad], "notresult": [bad],
            "noargs": [], "three": ["a", "b", "c"], "badopt": ["--nope", "x"],
            "buckets0": ["--histo-buckets", "0", "x"],
            "bucketsx": ["--histo-buckets", "many", "x"]}.get(case)
    if case == "nohist":
        r = synthetic(tmp_path / "s")
        r2 = copy.deepcopy(r)
        del r2["runs"][0]["histogram"]
        os.makedirs(tmp_path / "t")
        (tmp_path / "t" / "result.json").write_text(json.dumps(r2))
        args = [tmp_path / "s", tmp_path / "t"]
    p = run_jtr("report", *args)
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("jtr report: ") and p.stderr.count("\n") == 1, p.stderr
    assert "Traceback" not in p.stderr


def test_help():
    p = run_jtr("report", "--help", check=True)
    assert "usage: jtr report" in p.stdout and "examples:" in p.stdout
    assert "report" in run_jtr("--help").stdout


# --- what a person sees: the page in headless Chromium ---------------------------

def svg_figures(page_path):
    """The inline SVG figures of a page, in order."""
    with open(page_path, encoding="utf-8") as f:
        return re.findall(r"<svg.*?</svg>", f.read(), re.S)


def markers(svg):
    """{fill colour: count} of the scatter points drawn as SVG markers: each is a
    filled <use> of a marker (the ticks' are not filled); the figure's legend,
    drawn last, left out."""
    if '<g id="legend_' in svg:
        svg = svg[:svg.index('<g id="legend_')]
    return collections.Counter(re.findall(
        r'<use xlink:href="#[Cm][^"]*"[^>]*style="fill: (#[0-9a-f]{6})', svg))


def parts(text):
    """(summary, spectrum) of a page's text: the text of an inline SVG comes in
    its drawing order, the spectrum's percentile axis first."""
    axis = text.index("50% 90% 99%")
    return text[:axis], text[axis:text.index("Percentile spectrum of the")]


def before(text, first, then):
    """@first is seen before @then in @text (both are there)."""
    assert first in text and then in text, (first, then)
    return text.index(first) < text.index(then)


def raw_keys(text):
    """Result-file keys (max_ns, share, lost_time_pct) shown as words in @text;
    a task's name that holds one (unshare; lintian's comm /usr/share/lint, which
    took 46 % of a traced run's outliers beside the other tests once) is not a
    key."""
    return [t for t in re.findall(r"[A-Za-z0-9_./-]+", text)
            if t.endswith("_ns") or t in ("share", "lost_time_pct")
            or t.startswith("percentiles_ns")]


@pytest.fixture(scope="module")
def synthetic_seen(tmp_path_factory):
    d = tmp_path_factory.mktemp("seen")
    r = synthetic(d / "s")
    run_jtr("report", d / "s", check=True)
    page = d / "s" / "report" / "report.html"
    return r, page, browser.see(page, d / "chromium")


def test_seen_summary_first_in_peoples_units(synthetic_seen):
    r, _, seen = synthetic_seen
    text = seen.words()
    title = "jtr gap · CPU 1 · synth-host · 2026-11-22 08:00 UTC"
    assert text.startswith(title), text[:200]
    summary = parts(text)[0]
    for w in ("p99.99", "max 250.0 us", "time lost", "timer tick 50.0 %",
              "RT throttling is enabled", "the tracer dropped 7 events",
              "memory not locked (synthetic)"):
        assert w in summary, w
    assert not raw_keys(summary), summary
    # the warnings once, in the summary only
    assert text.count("memory not locked (synthetic)") == 1
    # what the closed <details> holds is not seen
    assert "percentiles_ns.99" not in text and "rt_throttling.runtime_us" not in text
    assert before(text, "p99.99", "Outlier timeline")


def test_seen_spectrum_to_the_max(synthetic_seen):
    r, page, seen = synthetic_seen
    text = seen.words()
    spectrum = parts(text)[1]
    assert "max %s" % fmt_ns(r["runs"][0]["max_ns"]) in spectrum     # max 250.0 us
    for pct in ("99.9%", "99.99%", "99.999%"):
        assert pct in spectrum
    # several labelled ticks on the value axis
    assert len(set(re.findall(r"\b\d+ (?:ns|us|ms)\b", spectrum))) >= 3, spectrum


def test_seen_every_outlier_coloured(synthetic_seen):
    """All 62 outliers of the log drawn in their cause's colour, none grey."""
    from jtrpy.render.plots import CATEGORY_COLOURS, UNKEPT
    r, page, seen = synthetic_seen
    timeline = [s for s in svg_figures(page) if "Outlier timeline" in s]
    assert len(timeline) == 1
    got = markers(timeline[0])
    want = {CATEGORY_COLOURS["timer tick"]: 21, CATEGORY_COLOURS["task preemption"]: 21,
            CATEGORY_COLOURS["hardirq"]: 20}
    assert got == want
    assert UNKEPT not in got
    assert "timer tick (21)" in seen.words() and "cause not kept" not in seen.words()
    # and the pixels: the causes' colours are on the screenshot
    px = seen.pixels.reshape(-1, 3).astype(int)
    for colour in want:
        rgb = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
        assert (abs(px - rgb).max(axis=1) <= 2).sum() > 50, colour


def test_hovering_an_outlier_or_a_cause_bar_shows_what_it_was(synthetic_seen):
    """In the browser, the pointer on each of the 62 outlier points shows its
    length, time, CPU and main cause (the worst ones their causal chain too), and
    on each cause bar its share and time."""
    r, page, _ = synthetic_seen
    tips = browser.hover_texts(page, "g[id^='outliers-cpu'] use")
    assert len(tips) == 62 and all(re.match(r"[\d.]+ [nmu]?s at \+[\d.]+ s on CPU \d: \w", t)
                                   for t in tips), tips[:3]
    chains = [w["chain"] for w in r["attribution"]["worst"]]
    assert sum(1 for t in tips if any(c in t for c in chains)) == len(chains), chains
    bars = browser.hover_texts(page, "g[id^='cause-'] path")
    assert bars and all(re.search(r"[\d.]+ %", t) for t in bars), bars
    assert any("timer tick: 50.0 % of the outliers' time" in t for t in bars), bars


def test_older_attribution_greys_what_it_did_not_keep(tmp_path):
    """A result attributed before each outlier's cause was kept: the worst are
    coloured, the others grey, and the page says so."""
    from jtrpy.render.plots import UNKEPT
    synthetic(tmp_path / "s", each=False)
    run_jtr("report", tmp_path / "s", check=True)
    page = tmp_path / "s" / "report" / "report.html"
    timeline = [s for s in svg_figures(page) if "Outlier timeline" in s][0]
    assert markers(timeline)[UNKEPT] == 62
    assert "cause not kept per outlier" in page.read_text()


def test_two_ends_by_side_and_phase(tmp_path):
    """A round trip's causes say their side and phases."""
    r = synthetic(tmp_path / "p")
    a = r["attribution"]
    a["causes"][0].update(side="pong", phases={"reflect": 200000, "back": 100000})
    a["causes"][1].update(side="ping", phases={"out": 150000})
    a["causes"][2].update(side="ping", phases={"send": 100000})
    (tmp_path / "p" / "result.json").write_text(dumps_result(r) + "\n")
    run_jtr("report", tmp_path / "p", check=True)
    page = parse(tmp_path / "p" / "report" / "report.html")
    assert ["timer tick", "local timer (pong side)",
            "pong's reflection 200.0 us, the way back 100.0 us", "50.0 %",
            "300.0 us", "20", "250.0 us", "20.0"] in page.rows
    assert "local timer (pong side) 50.0 %" in "".join(page.text)


def test_lanes_per_cpu(tmp_path):
    """A run of two CPUs: one lane of outliers per CPU, every outlier coloured."""
    from jtrpy.render.plots import UNKEPT
    r = synthetic(tmp_path / "s")
    run0 = dict(copy.deepcopy(r["runs"][0]), name="cpu0", cpu=0)
    r["runs"].insert(0, run0)
    (tmp_path / "s" / "result.json").write_text(dumps_result(r) + "\n")
    rows = (tmp_path / "s" / "outliers.csv").read_text().splitlines()
    rows[1::2] = ["0," + x.split(",", 1)[1] for x in rows[1::2]]
    (tmp_path / "s" / "outliers.csv").write_text("\n".join(rows) + "\n")
    run_jtr("report", tmp_path / "s", check=True)
    page = tmp_path / "s" / "report" / "report.html"
    timeline = [s for s in svg_figures(page) if "Outlier timeline" in s][0]
    assert "CPU 0: length" in timeline and "CPU 1: length" in timeline
    got = markers(timeline)
    assert sum(got.values()) == 62 and UNKEPT not in got
    assert "<h1>jtr gap · CPUs 0, 1 · synth-host" in page.read_text()


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    """One real traced run (1 s) and its report: (folder, result, report seconds,
    Seen)."""
    need_tracing()
    d = tmp_path_factory.mktemp("traced") / "run"
    cpu = str(max(os.sched_getaffinity(0)))
    run_jtr("run", "-c", cpu, "-d", "1", "-o", d, check=True)
    t = time.monotonic()
    run_jtr("report", d, check=True)
    took = time.monotonic() - t
    return d, load(d), took, browser.see(d / "report" / "report.html", d / "chromium")


@pytest.mark.every_cpu
def test_real_traced_run_seen(traced):
    folder, r, took, seen = traced
    text = seen.words()
    run = r["runs"][0]
    assert text.startswith("jtr gap · CPU %d · %s" % (run["cpu"], r["host"]["hostname"]))
    assert before(text, "p99.99", "Percentile spectrum")
    summary, spectrum = parts(text)
    assert "max %s" % fmt_ns(run["max_ns"]) in spectrum
    assert not raw_keys(summary), summary
    # every outlier of the log has its cause: the legend's counts add up to the log
    from jtrpy.attribution.attribute import categories_of
    with open(folder / "outliers.csv") as f:
        logged = sum(1 for _ in f) - 1
    cats = categories_of(r["attribution"])
    assert len(cats) == logged and None not in cats
    from jtrpy.render.plots import CATEGORY_COLOURS
    legend = re.findall(r"(%s) \((\d+)\)" % "|".join(map(re.escape, CATEGORY_COLOURS)), text[
        text.index("Outlier timeline"):text.index("Every outlier over the run")])
    assert sum(int(n) for _, n in legend) == logged, legend
    assert dict(collections.Counter(cats)) == {c: int(n) for c, n in legend}
    assert took < 10, took


INJECT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "inject.py")


def wake_beside_spinner(folder, cpu):
    """jtr run wake for 1 s on @cpu with a FIFO spinner (1.1 ms every 20 ms for
    0.6 s: 29 spins) on it from 0.2 s after the probe's hidden results folder
    (.wake.partial-PID) is there; the spinner is started first, so that its
    Python is loaded when the probe measures (on CI the tracer's start took longer
    than a fixed delay: every spin came before the run). A spin is longer than
    the wake's 1 ms period, so that each covers a wake-up whatever their phase
    (400 us spins every 20 ms keep one phase to the wake-ups all run: every spin
    fell on one, or none did, 2 runs in 4 here). The spins inside the run,
    counted from the spinner's own log."""
    spins = folder / "spins.csv"
    spinner = subprocess.Popen(
        ["unshare", "--pid", "--kill-child", "--mount-proc", sys.executable, INJECT, "fifo",
         str(cpu), "--prio", "10", "--spin-us", "1100", "--period-ms", "20", "--duration",
         "0.6", "--delay", "0.2", "--out", str(spins),
         "--start-when", str(folder / ".wake.partial-*")])
    try:
        run_jtr("run", "wake", "-c", cpu, "-d", "1", "-o", folder / "wake", check=True)
    finally:
        spinner.wait(timeout=60)
    r = load(folder / "wake")
    inside = [line for line in spins.read_text().split()
              if r["started_mono_ns"] <= int(line.split(",")[0]) <= r["ended_mono_ns"]]
    # and what the tracer saw: the spinner switched in on the wake's CPU in the run
    log = read_events(str(folder / "wake"))
    ran = sum(1 for e in log.iter_events(cpu) if e.type == SWITCH and
              e.next_comm == "jtr-inject" and
              r["started_mono_ns"] <= e.ts_ns <= r["ended_mono_ns"])
    return min(len(inside), ran)


@pytest.fixture(scope="module")
def probe_pages(tmp_path_factory):
    """Real traced runs of wake (beside a FIFO spinner on its CPU: late wake-ups
    for certain) and ping, and their pages: {probe: (folder, result, page)}."""
    need_tracing()
    d = tmp_path_factory.mktemp("probes")
    cpu = max(os.sched_getaffinity(0))
    out = {}
    inside = wake_beside_spinner(d, cpu)
    if inside < 20:
        # the host held the spinner back past the run, or off the wake's CPU (its log
        # and the tracer's say so): once more, said
        print("only %d of the spinner's 29 spins ran inside the wake run on its CPU (its "
              "log and the tracer's): tried again" % inside)
        shutil.rmtree(d / "wake")
        inside = wake_beside_spinner(d, cpu)
    assert inside >= 20, "%d of 29 spins inside the wake run, twice" % inside
    run_jtr("run", "ping", "-T", "udp", "-r", "2K", "-d", "500ms", "-o", d / "ping", check=True)
    for probe in ("wake", "ping"):
        run_jtr("report", d / probe, check=True)
        out[probe] = (d / probe, load(d / probe), d / probe / "report" / "report.html")
    return out


@pytest.mark.every_cpu
def test_the_wake_page_shows_what_wake_is_for(probe_pages, tmp_path):
    """A real jtr run wake's page: the headline first, its missed periods,
    cyclictest's line, the late wake-ups taken apart (the spinner's), every
    outlier coloured and hoverable."""
    folder, r, page = probe_pages["wake"]
    seen = browser.see(page, tmp_path)
    text = seen.words()
    run = r["runs"][0]
    summary = text[:text.index("Percentile spectrum")]
    assert text.startswith("jtr wake · CPU %d" % run["cpu"])
    assert "missed periods %d" % run["missed"] in summary.replace(",", "")
    assert re.search(r"T: 0 \( *\d+\) P: ?\d+ I:1000 C: +\d+ Min:", summary), summary
    assert "Late wake-ups taken apart" in text and "blocking thread" in text
    # the spinner took some of them: the attribution names it, and so does the page
    # (shown, or in the causes folded under "more" and the points' hover text: on a
    # busy host other blockers can come first)
    assert "jtr-inject" in json.dumps(r["attribution"]), r["attribution"].get("causes")
    assert "jtr-inject" in " ".join(parse(page).text)
    assert "cause not kept" not in text
    tips = browser.hover_texts(page, "g[id^='outliers-cpu'] use")
    assert len(tips) == run["outliers"]["logged"] and all(" on CPU " in t for t in tips)


@pytest.mark.every_cpu
def test_the_ping_page_draws_the_path(probe_pages):
    """A real jtr run ping's page draws the outliers' path (its text read from
    the page; the browser's view of a page is the wake test's)."""
    folder, r, page = probe_pages["ping"]
    text = " ".join("".join(parse(page).text).split())
    assert text.startswith("jtr ping · CPU")
    if r["attribution"]["outliers"]["count"]:
        assert "The outliers' path, phase by phase" in text
        assert "the way out and pong's wake-up" in text and "ping side ·" in text
