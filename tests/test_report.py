"""jtr report: the HTML page and its PNGs, on real short gap runs and on synthetic
results (attribution, warnings); the numbers on the page are those of result.json;
the page renders in headless Chromium."""
import copy
import html.parser
import json
import os
import shutil
import subprocess

import pytest
from conftest import load, run_jtr

from jtrpy.results import hist
from jtrpy.results.result import PERCENTILE_KEYS
from jtrpy.system.files import dumps_json as dumps_result


class Page(html.parser.HTMLParser):
    """Tables as lists of rows of cell texts, images, and all text."""

    def __init__(self):
        super().__init__()
        self.rows, self.imgs, self.text = [], [], []
        self._row = self._cell = None

    def handle_starttag(self, tag, attrs):
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


def test_real_run(gaps):
    p = run_jtr("report", gaps[0], check=True)
    rep = os.path.join(gaps[0], "report")
    assert os.path.join(rep, "report.html") in p.stdout
    for n in ("histogram", "percentiles"):
        assert_png(os.path.join(rep, n + ".png"))
    page = parse(os.path.join(rep, "report.html"))
    assert len(page.imgs) == 2
    assert all(i["src"].startswith("data:image/png;base64,") for i in page.imgs)
    assert_numbers(page, load(gaps[0]))
    assert field(page, "hostname") == [load(gaps[0])["host"]["hostname"]]
    assert "none active" in "".join(page.text)


def test_real_pair_compare(gaps, tmp_path):
    out = tmp_path / "cmp"
    run_jtr("report", "-o", out, gaps[0], gaps[1], check=True)
    assert sorted(os.listdir(out)) == ["a.gp", "a.txt", "b.gp", "b.txt", "histogram.png",
                                       "percentiles.png", "plot_a_v_b-1.png", "report.html"]
    for n in ("histogram", "percentiles", "plot_a_v_b-1"):
        assert_png(out / (n + ".png"))
    page = parse(out / "report.html")
    for g in gaps:
        assert_numbers(page, load(g))
    c = json.loads(run_jtr("compare", "--json", gaps[0], gaps[1], check=True).stdout)
    rows = {r[0]: r for r in page.rows if len(r) == 7 and r[0] in
            [m["name"] for m in c["metrics"]]}
    for m in c["metrics"]:
        assert rows[m["name"]][2:5] == [json.dumps(m["a"]), json.dumps(m["b"]),
                                        json.dumps(m["diff"])]
    assert ("verdict: " + c["verdict_text"]) in "".join(page.text)


# --- synthetic results ---------------------------------------------------------

def synthetic(folder, attributed=True, warn=True):
    """A one-CPU gap result with a histogram, outliers.csv and an attribution."""
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
        "command": ["jtr gap", "-c", "1"], "started_at": "2026-11-22T08:00:00.000Z",
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
    assert len(page.imgs) == 4
    assert_numbers(page, r)
    text = "".join(page.text)
    for w in ("RT throttling is enabled", "virtualised host (hypervisor KVMKVMKVM)",
              "partial run", "3 outliers did not fit", "the tracer dropped 7 events",
              "memory not locked (synthetic)", "jtr-isolated"):
        assert w in text, w
    causes = [row for row in page.rows if len(row) == 9 and row[0] != "category"]
    assert [(c[0], c[1], c[4]) for c in causes] == [
        (c["category"], c["name"], json.dumps(c["total_ns"])) for c in r["attribution"]["causes"]]
    assert field(page, "rt_throttling.runtime_us") == ["950000"]
    assert field(page, "duration_ns") == ["1000000000", "1000000000"]  # params, run
    # the tracer's backend and cost; no hardware counters in this one
    assert "tracer: ebpf backend, 1234 events, 7 dropped" in text
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
    a = synthetic(tmp_path / "a", attributed=False, warn=False)
    b = synthetic(tmp_path / "b")
    run_jtr("report", "-o", tmp_path / "o", tmp_path / "a", tmp_path / "b", check=True)
    files = sorted(os.listdir(tmp_path / "o"))
    assert files == ["a.gp", "a.txt", "b.gp", "b.txt", "causes-b.png", "histogram.png",
                     "percentiles.png", "plot_a_v_b-1.png", "report.html", "timeline-b.png"]
    page = parse(tmp_path / "o" / "report.html")
    assert_numbers(page, a)
    assert_numbers(page, b)
    assert "Comparison (jtr compare)" in "".join(page.text)


def test_spectrum_meets_the_result_percentiles(tmp_path):
    from jtrpy.render import plots as report
    r = synthetic(tmp_path / "s")
    run = r["runs"][0]
    pts = report.spectrum(run["histogram"]["buckets"], run["min_ns"], run["max_ns"])
    assert pts[0][1] == run["percentiles_ns"]["50"]
    assert pts[-1][1] == run["percentiles_ns"]["99.999"]
    assert all(x1 <= x2 and v1 <= v2 for (x1, v1), (x2, v2) in zip(pts, pts[1:]))


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


# --- headless Chromium ---------------------------------------------------------------

def test_renders_in_chromium(tmp_path):
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        pytest.skip("chromium is not installed (scripts/deps.sh installs it)")
    synthetic(tmp_path / "s")
    run_jtr("report", tmp_path / "s", check=True)
    shot = tmp_path / "shot.png"
    page = (tmp_path / "s" / "report" / "report.html").resolve().as_uri()
    try:
        p = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu",
                            "--screenshot=%s" % shot, "--window-size=1200,2000", page],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=120, cwd=tmp_path)
    except (OSError, subprocess.TimeoutExpired) as e:
        pytest.skip("chromium cannot run here: %s" % e)
    if not shot.exists():
        pytest.skip("chromium cannot run here (exit %d): %s"
                    % (p.returncode, p.stderr.strip().splitlines()[-1:] or ""))
    assert_png(shot)
    import matplotlib.image
    a = matplotlib.image.imread(str(shot))
    assert a.shape[:2] == (2000, 1200)
    # the plots were drawn: many distinct colours, not just text on white
    import numpy
    rgb = (a[..., :3] * 255).astype(numpy.uint32)
    assert len(numpy.unique((rgb[..., 0] << 16) | (rgb[..., 1] << 8) | rgb[..., 2])) > 50
