# SPDX-License-Identifier: GPL-2.0-only
"""Interop and ergonomics through the front end, on real runs of this machine:
jtr export --hlog read back by the hdrhistogram package, jtr export --prom parsed
by prometheus_client, jtr import of real oslat and cyclictest output, jtr ls,
and bad input (one line, exit status 2, no traceback)."""
import copy
import datetime
import json
import math
import os
import shutil
import subprocess
import sys

import pytest
from conftest import load, run_jtr, without_pm_qos
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader
from prometheus_client.parser import text_string_to_metric_families

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "analysis"))
from jtrpy.results import hist  # noqa: E402

PCTS = ["50", "90", "99", "99.9", "99.99", "99.999"]
# compare needs numpy: the venv's python3 first on PATH
ENV = {"PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}


def jtr(*args, **kw):
    return run_jtr(*args, env=ENV, **kw)


def epoch(iso):
    return datetime.datetime.strptime(iso, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()


def one_line_error(p, *words):
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("jtr %s: " % p.args[1]), p.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Real gap results: one CPU, and both CPUs in one run."""
    d = tmp_path_factory.mktemp("interop")
    jtr("gap", "-c", "1", "-d", "1", "-o", d / "gap1", check=True, timeout=60)
    jtr("gap", "-c", "0-1", "-d", "1", "-o", d / "gap01", check=True, timeout=60)
    return d


def read_hlog(path):
    """[(tag, histogram, start s, end s)] and the reader's start time."""
    r = HistogramLogReader(str(path), HdrHistogram(1, 2, 2))
    out = []
    while True:
        h = r.get_next_interval_histogram()
        if h is None:
            break
        out.append((h.get_tag(), h, h.get_start_time_stamp() / 1e3, h.get_end_time_stamp() / 1e3))
    return out, r.get_start_time_sec()


def check_roundtrip(run, h):
    err = run["histogram"]["max_rel_error"]
    assert h.get_total_count() == run["samples"] == run["histogram"]["total"]
    # min and max: the lowest and highest value of the bucket holding them
    assert abs(h.get_min_value() - run["min_ns"]) <= run["min_ns"] * err + 1
    assert run["max_ns"] <= h.get_max_value() <= run["max_ns"] * (1 + err) + 1
    n, buckets = run["samples"], run["histogram"]["buckets"]
    for k in PCTS:
        ours, theirs = run["percentiles_ns"][k], h.get_value_at_percentile(float(k))
        # HdrHistogram's rank rounds p/100 * n to the nearest, jtr's rounds it up: the
        # same rule on the buckets gives the highest value of the bucket holding it
        rank_hdr = max(1, int(float(k) * n / 100 + 0.5))
        assert theirs == value_at_rank(buckets, rank_hdr), (k, ours, theirs)
        if rank_hdr == hist.rank(float(k), n):
            assert ours <= theirs <= ours * (1 + err) + 1, (k, ours, theirs)
            if ours < run["max_ns"]:
                # not clamped to the max: HdrHistogram's answer is jtr's
                assert theirs == ours, (k, ours, theirs)


def value_at_rank(buckets, rank):
    cum = 0
    for _, hi, c in buckets:
        cum += c
        if cum >= rank:
            return hi


def test_hlog_roundtrip(runs, tmp_path):
    out = tmp_path / "gap.hlog"
    p = jtr("export", "--hlog", out, runs / "gap01", runs / "gap1", check=True)
    assert p.stdout == "" and p.stderr == ""
    text = out.read_text()
    head = text.splitlines()
    assert "#[Histogram log format version 1.3]" in head
    assert any(h.startswith("#[StartTime: ") for h in head)
    assert any(h.startswith("#[BaseTime: ") for h in head)
    assert ('"StartTimestamp","Interval_Length","Interval_Max",'
            '"Interval_Compressed_Histogram"') in head
    intervals, start = read_hlog(out)
    r01, r1 = load(runs / "gap01"), load(runs / "gap1")
    assert len(intervals) == 3
    # the earliest run's start is the log's start time
    assert abs(start - epoch(r1["started_at"])) < 1.0
    want = [(r01, x) for x in r01["runs"]] + [(r1, x) for x in r1["runs"]]
    for res, run in want:
        match = [i for i in intervals if i[0] == run["name"] and
                 abs(i[2] - (epoch(res["started_at"]) + (run["start_mono_ns"] -
                                                          res["started_mono_ns"]) / 1e9)) < 0.01]
        assert len(match) == 1, (run["name"], intervals)
        tag, h, t0, t1 = match[0]
        assert abs((t1 - t0) - run["duration_ns"] / 1e9) < 0.002
        check_roundtrip(run, h)
    # Interval_Max: the run's max in ms
    for line in head:
        if line.startswith("Tag=cpu1,"):
            assert float(line.split(",")[3]) in {round(x["max_ns"] / 1e6, 3) for x in
                                                  r01["runs"] + r1["runs"] if x["cpu"] == 1}


JAR = "/usr/share/java/hdrhistogram.jar"


def test_hlog_read_by_java(runs, tmp_path):
    """HdrHistogram's own Java log reader (HistogramLogProcessor) gives jtr's
    percentiles and the run's sample count from jtr export --hlog."""
    java = shutil.which("java")
    if not java or not os.path.exists(JAR):
        pytest.skip("HdrHistogram's Java library or a JRE is missing (Debian: "
                    "libhdrhistogram-java, default-jre-headless; scripts/deps.sh)")
    jtr("export", "--hlog", tmp_path / "g.hlog", runs / "gap1", check=True)
    run = load(runs / "gap1")["runs"][0]
    p = subprocess.run([java, "-cp", JAR, "org.HdrHistogram.HistogramLogProcessor", "-i",
                        str(tmp_path / "g.hlog"), "-tag", run["name"],
                        "-outputValueUnitRatio", "1", "-o", str(tmp_path / "out")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    # the interval line: "T: I:count ( 50% 90% Max ) T:count ( 50% 90% 99% 99.9% 99.99% Max )"
    line = [x for x in (tmp_path / "out").read_text().splitlines() if " T:" in x][0]
    total = line.split(" T:")[1]
    count, rest = total.split("(")
    vals = [float(v) for v in rest.strip(" )").split()]
    n = run["samples"]
    assert int(count) == n
    buckets = run["histogram"]["buckets"]
    for k, v in zip(("50", "90", "99", "99.9", "99.99"), vals):
        # Java's rank (AbstractHistogram.getValueAtPercentile): the ceiling of
        # p/100 x n, p first lowered by one ulp (an exact product is its own rank);
        # it differs from the nearest rank when the count crosses right there (p99.9
        # of 27205926 samples once: rank 27178721, not 27178720)
        rank = max(1, math.ceil(math.nextafter(float(k), -math.inf) * n / 100))
        assert v == value_at_rank(buckets, rank), (k, v)
        if rank == hist.rank(float(k), n) and run["percentiles_ns"][k] < run["max_ns"]:
            assert v == run["percentiles_ns"][k]
    err = run["histogram"]["max_rel_error"]
    assert run["max_ns"] <= vals[-1] <= run["max_ns"] * (1 + err) + 1


# --- jtr import --hlog -------------------------------------------------------

def test_import_hlog_roundtrip(runs, tmp_path, validate):
    """export then import: same runs, samples, buckets, percentiles (equal, or
    within the histogram's error where jtr's is the run's exact max)."""
    jtr("export", "--hlog", tmp_path / "both.hlog", runs / "gap01", runs / "gap1", check=True)
    jtr("export", "--hlog", tmp_path / "one.hlog", runs / "gap01", check=True)
    p = jtr("import", "--hlog", "-o", tmp_path / "back", tmp_path / "one.hlog", check=True)
    src = load(runs / "gap01")
    back = validate(load(tmp_path / "back"))
    # one run per tag, in the order the log has them (the runs' start times, which
    # the log keeps to the ms: two CPUs' runs that start within one may come either way)
    names = [r["name"] for r in back["runs"]]
    starts = {r["name"]: r["start_mono_ns"] for r in src["runs"]}
    assert sorted(names) == sorted(starts)
    assert all(starts[a] <= starts[b] + 10**6 for a, b in zip(names, names[1:])), starts
    assert p.stdout.startswith("%s: hlog, 2 runs (%s), %d samples" % (
        tmp_path / "back", ", ".join(names), sum(r["samples"] for r in src["runs"])))
    assert back["tool"] == "hlog" and back["import"]["time_unit"] == "ns"
    assert (tmp_path / "back" / "source.hlog").read_text() == (tmp_path / "one.hlog").read_text()
    for b in back["runs"]:
        a = [r for r in src["runs"] if r["name"] == b["name"]][0]
        err = a["histogram"]["max_rel_error"]
        assert b["cpu"] == a["cpu"] and b["samples"] == a["samples"]
        assert b["histogram"]["sub_bucket_bits"] == a["histogram"]["sub_bucket_bits"]
        assert [x[:2] for x in b["histogram"]["buckets"]] == [x[:2] for x in
                                                             a["histogram"]["buckets"]]
        assert [x[2] for x in b["histogram"]["buckets"]] == [x[2] for x in
                                                            a["histogram"]["buckets"]]
        for k in PCTS:
            x, y = a["percentiles_ns"][k], b["percentiles_ns"][k]
            if x < a["max_ns"]:
                assert y == x, (k, x, y)
            else:
                assert x <= y <= x * (1 + err) + 1, (k, x, y)
        assert a["max_ns"] <= b["max_ns"] <= a["max_ns"] * (1 + err) + 1
        assert b["min_ns"] <= a["min_ns"] and a["min_ns"] - b["min_ns"] <= a["min_ns"] * err + 1
        assert abs(b["mean_ns"] - a["mean_ns"]) <= a["mean_ns"] * err + 1
        assert abs(b["duration_ns"] - a["duration_ns"]) <= 2 * 10**6
    # it compares with its source: no significant change, nothing but the bucket error
    c = json.loads(jtr("compare", "--json", runs / "gap01", tmp_path / "back",
                       check=True).stdout)
    for m in c["metrics"]:
        if m["name"] in ("p50", "p90", "p99", "p99.9"):
            assert m["diff"] == 0, m
    # exported again, the histograms read back are the same
    jtr("export", "--hlog", tmp_path / "again.hlog", tmp_path / "back", check=True)
    first, _ = read_hlog(tmp_path / "one.hlog")
    again, _ = read_hlog(tmp_path / "again.hlog")
    assert sorted(i[0] for i in first) == sorted(i[0] for i in again)
    for t1, h1, s1, e1 in first:
        (_, h2, s2, e2), = [i for i in again if i[0] == t1]
        assert h1.get_total_count() == h2.get_total_count()
        for q in (50, 90, 99, 99.9, 99.99, 100):
            assert h1.get_value_at_percentile(q) == h2.get_value_at_percentile(q)
        assert abs((e2 - s2) - (e1 - s1)) < 0.002
    # two results with the same tags: the intervals of a tag are added, and said so
    jtr("import", "--hlog", "-o", tmp_path / "both", tmp_path / "both.hlog", check=True)
    both = validate(load(tmp_path / "both"))
    cpu1 = [r for r in both["runs"] if r["name"] == "cpu1"][0]
    assert cpu1["samples"] == sum(r["samples"] for r in
                                  load(runs / "gap01")["runs"] + load(runs / "gap1")["runs"]
                                  if r["cpu"] == 1)
    assert any("same tag were added" in w and "cpu1 (2)" in w for w in both["warnings"])


def test_import_hlog_of_another_writer(tmp_path, validate):
    """A log written by the hdrhistogram package (3 digits, values in us, absolute
    timestamps, no StartTime line; one line tagged as Java's writer tags it): jtr's
    percentiles are HdrHistogram's, x 1000 for us."""
    import io
    import random

    from hdrh.log import HistogramLogWriter
    rnd = random.Random(7)
    path = tmp_path / "svc.hlog"
    hs = []
    buf = io.StringIO()
    w = HistogramLogWriter(buf)
    w.output_comment("[a service's latencies in us]")
    w.output_log_format_version()
    w.output_legend()
    for k, tag in enumerate([None, "db", None]):
        h = HdrHistogram(1, 3600 * 10**6, 3)
        for _ in range(20000):
            h.record_value(int(rnd.lognormvariate(4, 1)) + 1)
        h.set_start_time_stamp(1795339822000 + 1000 * k)
        h.set_end_time_stamp(1795339823000 + 1000 * k)
        w.output_interval_histogram(h)
        hs.append((tag, h))
    lines = buf.getvalue().splitlines()
    lines[-2] = "Tag=db," + lines[-2]  # the hdrh package writes no tags; Java's does
    path.write_text("\n".join(lines) + "\n")
    jtr("import", "--hlog", "--unit", "us", "-o", tmp_path / "svc", path, check=True)
    r = validate(load(tmp_path / "svc"))
    assert [x["name"] for x in r["runs"]] == ["hlog", "db"]
    assert r["runs"][0]["histogram"]["sub_bucket_bits"] == 10  # 3 digits
    total = HdrHistogram(1, 3600 * 10**6, 3)
    for tag, h in hs:
        if tag is None:
            total.add(h)
    run = r["runs"][0]
    assert run["samples"] == total.get_total_count() == 40000
    assert run["max_ns"] == (total.get_max_value() + 1) * 1000 - 1
    assert run["min_ns"] == total.get_min_value() * 1000
    n = run["samples"]
    for k in PCTS:
        want = total.get_value_at_percentile(float(k))
        if max(1, int(float(k) * n / 100 + 0.5)) == hist.rank(float(k), n):
            # the same bucket: its highest value in ns, moved up by less than one
            # bucket of jtr's grid (the us grid in ns is not jtr's ns grid)
            top = (want + 1) * 1000 - 1
            assert top <= run["percentiles_ns"][k] <= min(top * (1 + 2 ** -10) + 1,
                                                         run["max_ns"]), k
    assert abs(run["mean_ns"] - total.get_mean_value() * 1000) <= 1000
    assert r["started_at"].startswith("2026-11-22T09:30:22")
    assert run["duration_ns"] == 3 * 10**9


def test_import_hlog_errors(runs, tmp_path):
    jtr("export", "--hlog", tmp_path / "good.hlog", runs / "gap1", check=True)
    lines = (tmp_path / "good.hlog").read_text().splitlines()
    (tmp_path / "cut.hlog").write_text("\n".join(lines[:-1] + [lines[-1][:-30]]) + "\n")
    (tmp_path / "notb64.hlog").write_text("\n".join(lines[:-1] + [lines[-1][:-10] + "!!!"]))
    (tmp_path / "empty.hlog").write_text("\n".join(lines[:-1]) + "\n")
    (tmp_path / "text.hlog").write_text("hello\n")
    (tmp_path / "bin.hlog").write_bytes(b"\xff\xfe\x00" * 10)
    cases = [
        (("import", "--hlog", tmp_path / "missing.hlog"), ["no such file"]),
        (("import", "--hlog", tmp_path / "cut.hlog"), ["line %d" % len(lines)]),
        (("import", "--hlog", tmp_path / "notb64.hlog"), ["not base64"]),
        (("import", "--hlog", tmp_path / "empty.hlog"), ["no interval lines"]),
        (("import", "--hlog", tmp_path / "text.hlog"), ["not 'StartTimestamp"]),
        (("import", "--hlog", tmp_path / "bin.hlog"), ["not a text file"]),
        (("import", "--hlog", tmp_path), ["is a folder"]),
        (("import", "--hlog", "--unit", "ms", tmp_path / "good.hlog"), ["--unit ms"]),
        (("import", "--unit", "us", tmp_path / "good.hlog"), ["--unit goes with --hlog"]),
        (("import", "--hlog"), ["--hlog FILE"]),
    ]
    for args, words in cases:
        one_line_error(jtr(*args), *words)
    assert not os.path.exists("results") or not any(
        n.endswith("-hlog") for n in os.listdir("results"))


@pytest.mark.parametrize("bits", [4, 5, 10])
def test_hlog_other_precisions(runs, tmp_path, bits):
    """A histogram of another precision: 4 and 10 bits are HdrHistogram's 1 and 3
    digits exactly, 5 bits goes onto the finer 2-digit grid."""
    r = load(runs / "gap1")
    run = r["runs"][0]
    h = run["histogram"]
    if bits < h["sub_bucket_bits"]:
        h["buckets"] = hist.coarsen(h["buckets"], h["sub_bucket_bits"], bits)
    else:
        # refine by putting every count at its bucket's highest value (a valid finer
        # histogram of the same percentiles)
        acc = {}
        for _, hi, c in h["buckets"]:
            i = hist.bucket_index(bits, hi)
            acc[i] = acc.get(i, 0) + c
        h["buckets"] = [list(hist.bucket_lo_hi(bits, i)) + [acc[i]] for i in sorted(acc)]
    h["sub_bucket_bits"], h["max_rel_error"] = bits, 2.0 ** -bits
    run["percentiles_ns"] = {k: hist.value_at_percentile(h["buckets"], float(k),
                                                          run["min_ns"], run["max_ns"])
                             for k in PCTS}
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "result.json").write_text(json.dumps(r))
    jtr("export", "--hlog", tmp_path / "x.hlog", tmp_path / "r", check=True)
    (tag, hh, _, _), = read_hlog(tmp_path / "x.hlog")[0]
    assert hh.significant_figures == {4: 1, 5: 2, 10: 3}[bits]
    check_roundtrip(run, hh)


def test_hlog_stdout_matches_file(runs, tmp_path):
    jtr("export", "--hlog", tmp_path / "a.hlog", runs / "gap1", check=True)
    p = jtr("export", "--hlog", "-", runs / "gap1", check=True)
    assert p.stdout == (tmp_path / "a.hlog").read_text()


# --- Prometheus ------------------------------------------------------------

QUANTILES = {"0.5": "50", "0.9": "90", "0.99": "99", "0.999": "99.9", "0.9999": "99.99",
             "0.99999": "99.999"}


def families(text):
    return {f.name: f for f in text_string_to_metric_families(text)}


def attributed(runs, tmp_path):
    """gap1 with an attribution section of a few causes (two pids of one command)."""
    r = load(runs / "gap1")
    dur = r["runs"][0]["duration_ns"]
    r["attribution"] = {"outliers": {"cpus": [1], "duration_ns": dur},
                        "causes": [
                            {"category": "no kernel event", "name": "hypervisor, SMI or hardware",
                             "share": 0.5, "total_ns": 5000000},
                            {"category": "task preemption", "name": "sh (pid 11, prio 120)",
                             "share": 0.2, "total_ns": 2000000},
                            {"category": "timer tick", "name": "local timer",
                             "share": 0.15, "total_ns": 1500000},
                            {"category": "task preemption", "name": "sh (pid 12, prio 120)",
                             "share": 0.1, "total_ns": 1000000},
                            {"category": "IPI", "name": "reschedule",
                             "share": 0.05, "total_ns": 500000}]}
    r["host"]["tuning_profile"] = "jtr-latency"
    d = tmp_path / "att"
    d.mkdir()
    (d / "result.json").write_text(json.dumps(r))
    return d, r


def test_prom_values(runs, tmp_path):
    out = tmp_path / "jtr.prom"
    out.write_text("old\n")
    att, ra = attributed(runs, tmp_path)
    p = jtr("export", "--prom", out, "--top", "3", runs / "gap01", att, check=True)
    assert p.stderr == ""
    assert sorted(os.listdir(tmp_path)) == ["att", "jtr.prom"]  # no temporary left
    text = out.read_text()
    fam = families(text)
    for name in ("jtr_loop_seconds", "jtr_loop_max_seconds", "jtr_time_lost_ratio",
                 "jtr_outliers_per_second", "jtr_cause_share_ratio",
                 "jtr_cause_seconds_per_second", "jtr_run_end_timestamp_seconds"):
        assert fam[name].type == "gauge" and fam[name].documentation, name
        assert "# HELP %s " % name in text and "# TYPE %s gauge" % name in text
    series = [(s.name, tuple(sorted(s.labels.items()))) for f in fam.values() for s in f.samples]
    assert len(series) == len(set(series)), "duplicate series"
    r01 = load(runs / "gap01")
    host = os.uname().nodename
    for res, profile in ((r01, "none"), (ra, "jtr-latency")):
        for run in res["runs"]:
            lab = {"host": host, "cpu": str(run["cpu"]), "tool": "gap", "profile": profile,
                   "quantity": "gap"}
            q = {s.labels["quantile"]: s.value for s in fam["jtr_loop_seconds"].samples
                 if {k: s.labels[k] for k in lab} == lab}
            assert q == {qk: run["percentiles_ns"][k] / 1e9 for qk, k in QUANTILES.items()}
            val = {n: [s.value for s in fam[n].samples if s.labels == lab]
                   for n in ("jtr_loop_max_seconds", "jtr_time_lost_ratio",
                             "jtr_outliers_per_second", "jtr_run_end_timestamp_seconds")}
            o = run["outliers"]
            assert val["jtr_loop_max_seconds"] == [run["max_ns"] / 1e9]
            assert val["jtr_time_lost_ratio"] == [pytest.approx(o["lost_ns"] / run["duration_ns"])]
            assert val["jtr_time_lost_ratio"][0] == pytest.approx(run["lost_time_pct"] / 100,
                                                                  abs=1e-6)
            assert val["jtr_outliers_per_second"] == [
                pytest.approx(o["count"] / (run["duration_ns"] / 1e9))]
            assert val["jtr_run_end_timestamp_seconds"] == [epoch(res["ended_at"])]
    # causes: pids left out, the two sh added, the top 3
    share = {(s.labels["category"], s.labels["cause"]): s.value
             for s in fam["jtr_cause_share_ratio"].samples}
    assert share == {("no kernel event", "hypervisor, SMI or hardware"): 0.5,
                     ("task preemption", "sh"): pytest.approx(0.3),
                     ("timer tick", "local timer"): 0.15}
    per_s = {s.labels["cause"]: s.value for s in fam["jtr_cause_seconds_per_second"].samples}
    dur = ra["runs"][0]["duration_ns"]
    assert per_s["sh"] == pytest.approx(3000000 / dur)
    assert all(s.labels["cpu"] == "1" and s.labels["profile"] == "jtr-latency"
               for s in fam["jtr_cause_share_ratio"].samples)


def test_prom_same_labels_newest_kept(runs, tmp_path):
    older = load(runs / "gap1")
    older["started_at"] = "2020-01-01T00:00:00.000Z"
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "result.json").write_text(json.dumps(older))
    p = jtr("export", "--prom", "-", tmp_path / "old", runs / "gap1", check=True)
    assert "left out" in p.stderr and str(tmp_path / "old") in p.stderr
    fam = families(p.stdout)
    (mx,) = fam["jtr_loop_max_seconds"].samples
    assert mx.value == load(runs / "gap1")["runs"][0]["max_ns"] / 1e9


# --- import of real rt-tests output ----------------------------------------

def rt_tool(name):
    if not shutil.which(name):
        pytest.skip("%s is not installed (Debian: rt-tests)" % name)
    if os.geteuid() != 0:
        pytest.skip("%s needs root (mlockall, /dev/cpu_dma_latency)" % name)


@pytest.fixture(scope="module")
def rt_files(tmp_path_factory):
    rt_tool("oslat")
    rt_tool("cyclictest")
    d = tmp_path_factory.mktemp("rt")
    # neither holds /dev/cpu_dma_latency for the tuning tests beside them to read
    subprocess.run(without_pm_qos(["oslat", "--cpu-list", "1", "-D", "1",
                                   "--json=%s" % (d / "oslat.json")]),
                   check=True, stdout=subprocess.DEVNULL, timeout=60)
    subprocess.run(without_pm_qos(["cyclictest", "-m", "-q", "-D", "1", "-t", "1", "-a", "1",
                                   "-h", "1000", "--json=%s" % (d / "cyc.json")]),
                   check=True, stdout=subprocess.DEVNULL, timeout=60)
    return d


def test_rt_tools_run_with_a_pm_qos_device_of_their_own():
    """oslat and cyclictest run here beside the tuning tests: in their mount
    namespace /dev/cpu_dma_latency is /dev/null (what cyclictest writes there
    holds nothing), and the machine's device is untouched."""
    if os.geteuid() != 0:
        pytest.skip("a mount namespace of its own needs root; this run is not root")
    real = os.stat("/dev/cpu_dma_latency")
    p = subprocess.run(without_pm_qos(["stat", "-c", "%t:%T", "/dev/cpu_dma_latency"]),
                       capture_output=True, text=True, timeout=30)
    null = os.stat("/dev/null")
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["%x:%x" % (os.major(null.st_rdev), os.minor(null.st_rdev))]
    assert os.stat("/dev/cpu_dma_latency").st_rdev == real.st_rdev


def check_rules(run):
    """percentiles_ns are jtr's rule on the run's own buckets."""
    b = run["histogram"]["buckets"]
    assert sum(x[2] for x in b) == run["histogram"]["total"] == run["samples"]
    for k in PCTS:
        assert run["percentiles_ns"][k] == hist.value_at_percentile(
            b, float(k), run["min_ns"], run["max_ns"])


def test_import_oslat(rt_files, runs, tmp_path, validate):
    src = json.loads((rt_files / "oslat.json").read_text())
    p = jtr("import", "-o", tmp_path / "os", rt_files / "oslat.json", check=True)
    assert p.stdout.startswith("%s: oslat, 1 run (cpu1), " % (tmp_path / "os"))
    r = validate(load(tmp_path / "os"))
    assert r["tool"] == "oslat" and r["import"]["from"] == str(rt_files / "oslat.json")
    assert (tmp_path / "os" / "oslat.json").read_text() == (rt_files / "oslat.json").read_text()
    (run,) = r["runs"]
    t = src["thread"]["0"]
    assert run["cpu"] == t["cpu"] == 1
    assert run["samples"] == sum(t["histogram"].values())
    assert run["min_ns"] == t["min"] * 1000 and run["max_ns"] == t["max"] * 1000
    assert run["mean_ns"] == pytest.approx(t["avg"] * 1000, abs=0.001)
    assert run["duration_ns"] == round(t["duration"] * 1e9)
    check_rules(run)
    # every count below the last bucket is at its value in ns
    last = max(int(k) for k in t["histogram"])
    for k, c in t["histogram"].items():
        if int(k) < last or t["max"] == last:
            idx = hist.bucket_index(7, int(k) * 1000)
            lo, hi = hist.bucket_lo_hi(7, idx)
            assert [lo, hi, c] in run["histogram"]["buckets"]
    if t["max"] > last:
        assert r["import"]["overflow"]["cpu1"]["count"] == t["histogram"][str(last)]
        assert any("placed at the max" in w for w in r["warnings"])
    assert r["host"]["hostname"] == src["sysinfo"]["nodename"]
    assert "cpu_model" in r["import"]["host_facts"]["this machine"]
    assert r["host"]["tsc_hz"] == t["freq"] * 1e6
    # jtr compare takes it next to jtr's own
    c = jtr("compare", "--json", "--resamples", "200", tmp_path / "os", runs / "gap1",
            check=True)
    cmp_ = json.loads(c.stdout)
    assert cmp_["a"]["tools"] == ["oslat"] and cmp_["b"]["tools"] == ["gap"]
    assert cmp_["a"]["samples"] == run["samples"]


def test_import_cyclictest(rt_files, tmp_path, validate):
    src = json.loads((rt_files / "cyc.json").read_text())
    os.makedirs(tmp_path / "w")
    p = jtr("import", rt_files / "cyc.json", cwd=tmp_path / "w", check=True)
    (name,) = os.listdir(tmp_path / "w" / "results")
    assert name.endswith("-%s-cyclictest" % os.uname().nodename.replace(".", "_"))
    assert p.stdout.startswith("results/%s: cyclictest, 1 run (cpu1), " % name)
    assert not os.path.exists(tmp_path / "w" / "results" / "latest")
    r = validate(load(tmp_path / "w" / "results" / name))
    (run,) = r["runs"]
    t = src["thread"]["0"]
    assert run["samples"] == t["cycles"]
    assert run["min_ns"] == t["min"] * 1000 and run["max_ns"] == t["max"] * 1000
    over = t["cycles"] - sum(t["histogram"].values())
    assert r["import"]["overflow"].get("cpu1", {}).get("count", 0) == over
    check_rules(run)
    p = jtr("compare", tmp_path / "w" / "results" / name, tmp_path / "w" / "results" / name,
            "--resamples", "200", check=True)
    assert "verdict: no significant change" in p.stdout


def test_import_overflow_placement(rt_files, tmp_path, validate):
    """cyclictest keeps only the number of samples past -h: they go to the max."""
    src = json.loads((rt_files / "cyc.json").read_text())
    t = src["thread"]["0"]
    keys = sorted(t["histogram"], key=int)
    cut = keys[len(keys) // 2:]
    # beyond -h already in the real file, and those cut off here
    gone = t["cycles"] - sum(t["histogram"].values()) + sum(t["histogram"][k] for k in cut)
    for k in cut:
        del t["histogram"][k]
    t["max"] = 5000
    src["cmdline:"] = src["cmdline:"].replace("-h 1000", "-h %s" % cut[0])
    f = tmp_path / "cut.json"
    f.write_text(json.dumps(src))
    jtr("import", "-o", tmp_path / "cut", f, check=True)
    r = validate(load(tmp_path / "cut"))
    (run,) = r["runs"]
    assert run["histogram"]["buckets"][-1][2] >= gone
    lo, hi, c = run["histogram"]["buckets"][-1]
    assert lo <= 5000000 <= hi
    assert r["import"]["overflow"]["cpu1"] == {"count": gone, "from_ns": int(cut[0]) * 1000,
                                               "placed_at_ns": 5000000}
    assert run["percentiles_ns"]["99.999"] == 5000000
    assert any("p%.6g are upper bounds" % (100.0 * (t["cycles"] - gone) / t["cycles"]) in w
               for w in r["warnings"])


def test_import_two_threads_and_ns(tmp_path, validate):
    """Two threads on two CPUs, and cyclictest -N (values in ns): hand-made from the
    format the tools write."""
    doc = {"file_version": 1, "cmdline:": "cyclictest -N -t 2 -a 0-1 -h 100000 --json=x",
           "rt_test_version:": "2.40", "start_time": "Sun, 22 Nov 2026 07:42:21 +0000",
           "end_time": "Sun, 22 Nov 2026 07:42:24 +0000", "return_code": 0,
           "sysinfo": {"sysname": "Linux", "nodename": "elsewhere", "release": "5.10",
                       "version": "#1", "machine": "x86_64", "realtime": 1},
           "num_threads": 2, "resolution_in_ns": 1,
           "thread": {"0": {"histogram": {"1500": 3, "2100": 1}, "cycles": 4, "min": 1500,
                            "max": 2100, "avg": 1650.0, "cpu": 0, "node": 0},
                      "1": {"histogram": {"900": 2}, "cycles": 3, "min": 900, "max": 250000,
                            "avg": 83933.3, "cpu": 1, "node": 0}}}
    f = tmp_path / "x.json"
    f.write_text(json.dumps(doc))
    jtr("import", "-o", tmp_path / "x", f, check=True)
    r = validate(load(tmp_path / "x"))
    a, b = r["runs"]
    assert (a["name"], a["cpu"], a["min_ns"], a["max_ns"]) == ("cpu0", 0, 1500, 2100)
    assert a["histogram"]["buckets"] == [[1496, 1503, 3], [2096, 2111, 1]]
    assert b["samples"] == 3 and b["max_ns"] == 250000
    assert r["import"]["overflow"] == {"cpu1": {"count": 1, "from_ns": 100000,
                                                "placed_at_ns": 250000}}
    assert r["host"]["hostname"] == "elsewhere" and r["host"]["cpu_model"] == ""
    assert "cpu_model" in r["import"]["host_facts"]["unknown"]
    assert r["import"]["time_unit"] == "ns"


# --- jtr ls ----------------------------------------------------------------

def test_ls(runs, tmp_path):
    w = tmp_path / "w"
    w.mkdir()
    jtr("gap", "-c", "1", "-d", "0.3", cwd=w, check=True, timeout=60)
    res = w / "results"
    (name,) = [n for n in os.listdir(res) if n != "latest"]
    # the folder is named date-host-tool and latest points at it
    assert name.endswith("-gap") and os.readlink(res / "latest") == name
    shutil.copytree(runs / "gap01", res / "both")
    (res / "notes").mkdir()
    (res / "notes" / "x.txt").write_text("not a result")
    p = jtr("ls", cwd=w, check=True)
    lines = p.stdout.splitlines()
    assert lines[0].split()[:3] == ["started", "(UTC)", "tool"]
    assert lines[-1] == "2 results; 1 folder skipped (no jtr result in it)"
    body = lines[1:-1]
    assert len(body) == 2  # latest not listed twice
    # newest first: the run made here after gap01
    assert body[0].endswith("results/" + name) and body[1].endswith("results/both")
    assert body[1].split()[3] == "0-1"
    js = json.loads(jtr("ls", "--json", res, cwd=w, check=True).stdout)
    assert js["format"] == "jtr-ls/1" and js["skipped"] == [str(res / "notes")]
    first = js["results"][0]
    r = load(res / name)
    run = r["runs"][0]
    assert first["percentiles_ns"] == run["percentiles_ns"]
    assert first["max_ns"] == run["max_ns"] and first["cpus"] == [1]
    assert first["lost_pct"] == pytest.approx(run["lost_time_pct"], abs=1e-5)
    assert first["partial"] is False and first["tool"] == "gap"
    both = js["results"][1]
    r01 = load(runs / "gap01")
    assert both["max_ns"] == max(x["max_ns"] for x in r01["runs"])
    assert both["samples"] == sum(x["samples"] for x in r01["runs"])
    err = max(x["histogram"]["max_rel_error"] for x in r01["runs"])
    for k in PCTS:
        each = [x["percentiles_ns"][k] for x in r01["runs"]]
        assert min(each) * (1 - err) <= both["percentiles_ns"][k] <= max(each)
    # a folder with no results at all, and the default with no results/ here
    assert jtr("ls", cwd=tmp_path / "w" / "results" / "notes",
               check=True).stdout == "0 results\n"


def test_ls_partial_and_cause(runs, tmp_path):
    att, r = attributed(runs, tmp_path)
    r2 = copy.deepcopy(r)
    r2["partial"] = True
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "result.json").write_text(json.dumps(r2))
    out = jtr("ls", att, tmp_path / "p", check=True).stdout
    assert "gap (partial)" in out
    assert "hypervisor, SMI or hardware 50 %" in out and "jtr-latency" in out


# --- bad input and help ----------------------------------------------------

def test_errors(runs, tmp_path):
    (tmp_path / "other.json").write_text(json.dumps({"format": "something-else"}))
    (tmp_path / "odd.json").write_text(json.dumps({"thread": {"0": {"x": 1}}}))
    (tmp_path / "text.json").write_text("oslat V 2.40\n")
    cases = [
        (("export", "--hlog", tmp_path / "a.hlog", tmp_path / "missing"), ["no such result"]),
        (("export", "--prom", tmp_path / "a.prom", tmp_path / "other.json"),
         ["format is 'something-else'"]),
        (("export", runs / "gap1"), ["--hlog FILE, --prom FILE"]),
        (("export", "--prom", tmp_path / "nodir" / "a.prom", runs / "gap1"), ["no such folder"]),
        (("export", "--prom", tmp_path, runs / "gap1"), ["is a folder"]),
        (("export", "--prom", "/proc/jtr.prom", runs / "gap1"), ["cannot write"]),
        (("export", "--top", "x", "--prom", "-", runs / "gap1"), ["--top x"]),
        (("import", tmp_path / "missing.json"), ["no such file"]),
        (("import", tmp_path / "text.json"), ["not a JSON file"]),
        (("import", tmp_path / "odd.json"), ["unknown format"]),
        (("import", tmp_path / "other.json"), ["unknown format"]),
        (("import", "-o", "/proc/x", tmp_path / "odd.json"), ["unknown format"]),
        (("import",), ["--json=FILE"]),
        (("ls", tmp_path / "nothere"), ["no such folder"]),
        (("ls", "--bogus"), ["unknown option"]),
    ]
    for args, words in cases:
        one_line_error(jtr(*args), *words)
    assert not os.path.exists(tmp_path / "a.hlog") and not os.path.exists(tmp_path / "a.prom")


def test_import_unwritable(tmp_path):
    doc = {"file_version": 1, "cmdline:": "oslat -D 1", "start_time":
           "Sun, 22 Nov 2026 07:42:21 +0000", "end_time": "Sun, 22 Nov 2026 07:42:22 +0000",
           "thread": {"0": {"cpu": 1, "freq": 2000, "min": 1, "avg": 1.0, "max": 1,
                            "duration": 1.0, "histogram": {"1": 10}}}}
    f = tmp_path / "o.json"
    f.write_text(json.dumps(doc))
    one_line_error(jtr("import", "-o", "/proc/jtr-import", f),
                   "-o /proc/jtr-import: cannot create the results folder")
    one_line_error(jtr("import", "-o", tmp_path / "no" / "such", f),
                   "cannot create the results folder: No such file or directory; choose a "
                   "folder whose parent exists and that you can write to")
    (tmp_path / "file").write_text("")
    one_line_error(jtr("import", "-o", tmp_path / "file", f), "not a folder")
    one_line_error(jtr("import", "-o", tmp_path / "file" / "sub", f),
                   "cannot create the results folder: Not a directory")
    one_line_error(jtr("import", "-o", "", f), "-o '': give a folder name")


@pytest.mark.parametrize("cmd", ["export", "import", "ls"])
def test_help(cmd):
    p = jtr(cmd, "--help", check=True)
    assert p.stdout.startswith("usage: jtr %s" % cmd) and "\nexamples:\n" in p.stdout
    assert cmd in jtr("--help").stdout
