# SPDX-License-Identifier: GPL-2.0-only
"""jtr compare through the front end: two real gap runs, the table, the JSON, and
bad input (one line, exit status 2, no traceback); a real jtr ping result, whose
three runs are three quantities: compare, ls and export take one, never the three
pooled, and --quantity another."""
import json
import os
import re
import sys

import jsonschema
import pytest
from browser import see
from conftest import ROOT, load, run_jtr
from test_transports import pingpong

from jtrpy.render import compare_plots, plots
from jtrpy.stats.compare import fmt_value
from jtrpy.units import fmt_ns

PCTS = ["50", "90", "99", "99.9", "99.99", "99.999"]
# ./jtr runs on the python3 first on PATH; compare needs numpy, which the test
# venv has (requirements-dev.txt), so that python3 goes first
ENV = {"PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}


# make test runs these beside the measuring tests, on the first CPU alone
# (scripts/beside.sh): the gap runs measure the first CPU this process may use
pytestmark = pytest.mark.beside
CPU = min(os.sched_getaffinity(0))


def jtr(*args, **kw):
    return run_jtr(*args, env=ENV, **kw)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """Two one-second gap runs of CPU (the first this process may use), one
    after the other."""
    d = tmp_path_factory.mktemp("cmp")
    for name in ("before", "after"):
        jtr("gap", "-d", "1", "-c", CPU, "-o", d / name, check=True, timeout=60)
    return d


@pytest.fixture(scope="module")
def compare_schema():
    with open(os.path.join(ROOT, "docs", "compare.schema.json")) as f:
        s = json.load(f)
    jsonschema.Draft202012Validator.check_schema(s)
    return jsonschema.Draft202012Validator(s)


def test_two_gap_runs_table(two_runs):
    a, b = two_runs / "before", two_runs / "after"
    p = jtr("compare", a, b / "result.json", check=True)
    assert p.stderr == ""
    lines = p.stdout.splitlines()
    assert lines[0].startswith("A: %s  (gap, CPU %d, gap: 1 run, " % (a, CPU))
    assert lines[1].startswith("B: %s  (gap, CPU %d, gap: 1 run, " % (b / "result.json", CPU))
    ra, rb = load(a)["runs"][0], load(b)["runs"][0]
    for k in PCTS:
        row = next(line.split() for line in lines if line.split()[:1] == ["p" + k])
        # the row starts with A's and B's value as the probe printed them
        va, vb = ra["percentiles_ns"][k], rb["percentiles_ns"][k]
        if va < 1000 and vb < 1000:
            assert row[1:5] == [str(va), "ns", str(vb), "ns"], row
    assert any(line.split()[:2] == ["time", "lost"] for line in lines)
    assert any(line.split()[:1] == ["outliers/s"] for line in lines)
    assert "95 % CI of B-A" in p.stdout
    assert "causes: not compared: A and B not attributed" in p.stdout
    assert lines[-1].startswith("verdict: ")
    assert lines[-1].split()[1].rstrip(":") in ("better", "worse", "mixed", "no")


def test_two_gap_runs_json(two_runs, compare_schema, tmp_path):
    a, b = two_runs / "before", two_runs / "after"
    out = tmp_path / "cmp.json"
    p = jtr("compare", "--json", "--confidence", "99", "--resamples", "300", "--seed", "5",
            "-o", out, a, b, check=True)
    c = json.loads(p.stdout)
    errors = list(compare_schema.iter_errors(c))
    assert not errors, errors[0].message
    assert json.loads(out.read_text()) == c
    assert c["format"] == "jtr-compare/1"
    assert c["method"]["confidence"] == 99 and c["method"]["resamples"] == 300
    m = {x["name"]: x for x in c["metrics"]}
    ra, rb = load(a)["runs"][0], load(b)["runs"][0]
    for k in PCTS:
        assert m["p" + k]["a"] == ra["percentiles_ns"][k]
        assert m["p" + k]["b"] == rb["percentiles_ns"][k]
        assert m["p" + k]["diff"] == rb["percentiles_ns"][k] - ra["percentiles_ns"][k]
        assert m["p" + k]["ci"][0] <= m["p" + k]["ci"][1]
    assert m["time lost"]["a"] == pytest.approx(ra["lost_time_pct"], abs=1e-5)
    assert m["outliers/s"]["b"] == pytest.approx(rb["outliers"]["per_s"], abs=1e-2)
    assert c["a"]["samples"] == ra["samples"] and c["b"]["cpus"] == [CPU]
    # the same seed gives the same comparison
    again = jtr("compare", "--json", "--confidence", "99", "--resamples", "300", "--seed", "5",
                "-o", out, a, b, check=True)
    assert json.loads(again.stdout) == c


def test_help():
    p = jtr("compare", "--help", check=True)
    assert p.stdout.startswith("usage: jtr compare ") and "examples:" in p.stdout
    assert "\n  compare " in jtr("--help", check=True).stdout


def _bad_files(d):
    """Files that are not comparable results."""
    (d / "other.json").write_text(json.dumps({"format": "oslat", "runs": []}))
    (d / "broken.json").write_text("{not json")
    (d / "nohist").mkdir()
    (d / "nohist" / "result.json").write_text(json.dumps(
        {"format": "jtr-result/1", "tool": "gap", "runs": [{"name": "cpu1", "cpu": 1}]}))
    (d / "noruns.json").write_text(json.dumps({"format": "jtr-result/1", "runs": []}))


BAD = [
    # (args, what the one line must contain); GOOD is a real result
    ([], ["give two results, A (before) and B (after), not 0"]),
    (["GOOD"], ["give two results", "not 1"]),
    (["GOOD", "GOOD", "GOOD"], ["not 3"]),
    (["GOOD", "missing"], ["missing: no such result", "give a results folder"]),
    (["GOOD", "other.json"], ["other.json: format is 'oslat', expected 'jtr-result/1'"]),
    (["broken.json", "GOOD"], ["broken.json: not a JSON file"]),
    (["GOOD", "nohist"], ["run 'cpu1' has no histogram"]),
    (["noruns.json", "GOOD"], ["noruns.json: the result has no runs"]),
    (["--confidence", "100", "GOOD", "GOOD"],
     ["--confidence 100", "expected 50-99.99 (a percentage)"]),
    (["--confidence", "abc", "GOOD", "GOOD"], ["--confidence abc", "'abc' is not a percentage"]),
    (["--confidence"], ["option '--confidence' needs a value"]),
    (["--resamples", "5", "GOOD", "GOOD"], ["--resamples 5", "expected 100..100000"]),
    (["--seed", "x", "GOOD", "GOOD"], ["--seed x"]),
    (["--frob", "GOOD", "GOOD"], ["unknown option '--frob'", "jtr compare --help"]),
    (["-o", "no/such/dir/c.json", "GOOD", "GOOD"], ["-o no/such/dir/c.json: cannot write"]),
]


@pytest.mark.parametrize("args,want", BAD, ids=[" ".join(a) or "none" for a, _ in BAD])
def test_bad_input(two_runs, tmp_path, args, want):
    _bad_files(tmp_path)
    args = [str(two_runs / "before") if a == "GOOD" else a for a in args]
    p = jtr("compare", *args, cwd=tmp_path, timeout=60)
    assert p.returncode == 2, (p.returncode, p.stderr)
    lines = p.stderr.strip().split("\n")
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("jtr compare: ")
    for w in want:
        assert w in lines[0], (w, lines[0])
    assert "Traceback" not in p.stderr and p.stdout == ""


@pytest.fixture(scope="module")
def ping_result(tmp_path_factory):
    """3000 round trips over UDP on loopback, 10000 a second (jtr pong started
    here, as test_transports does)."""
    d = tmp_path_factory.mktemp("ping")
    pingpong(d, "udp", lambda r: r, count=3000, rate=10000)
    return d / "ping"


def test_ping_is_compared_on_one_quantity(ping_result, two_runs, compare_schema):
    r = load(ping_result)
    assert [x["name"] for x in r["runs"]] == ["rtt_from_intended", "rtt_from_send",
                                              "send_call"]
    c = json.loads(jtr("compare", "--json", "--resamples", "200", ping_result, ping_result,
                       check=True).stdout)
    assert not list(compare_schema.iter_errors(c))
    # one run of 3000 samples, not the three runs' 9000 pooled
    assert c["a"]["quantity"] == "rtt_from_intended" and c["a"]["runs"] == 1
    assert c["a"]["samples"] == r["runs"][0]["samples"] == 3000
    m = {x["name"]: x for x in c["metrics"]}
    for k in PCTS:
        assert m["p" + k]["a"] == r["runs"][0]["percentiles_ns"][k]
    p = jtr("compare", "--resamples", "200", ping_result, ping_result, check=True)
    assert "(ping, unpinned, rtt_from_intended: 1 run, " in p.stdout
    assert "3000 samples)" in p.stdout
    assert "the results also hold rtt_from_send, send_call" in p.stdout
    # another quantity on request
    c = json.loads(jtr("compare", "--json", "--resamples", "200", "--quantity", "send_call",
                       ping_result, ping_result, check=True).stdout)
    assert c["a"]["quantity"] == "send_call"
    assert {x["name"]: x["a"] for x in c["metrics"]}["p99"] == \
        r["runs"][2]["percentiles_ns"]["99"]
    # a round trip against a loop time: refused, unless asked
    p = jtr("compare", ping_result, two_runs / "before")
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.startswith("jtr compare: A (%s) and B (%s) differ in quantity "
                               "(rtt_from_intended vs gap): "
                               % (ping_result, two_runs / "before"))
    assert p.stderr.count("\n") == 1
    p = jtr("compare", "--quantity", "gap", ping_result, two_runs / "before")
    assert p.returncode == 2 and p.stderr == (
        "jtr compare: %s: no quantity 'gap' in this ping result; it has rtt_from_intended, "
        "rtt_from_send, send_call\n" % ping_result)
    p = jtr("compare", "--mixed-quantities", "--resamples", "200", ping_result,
            two_runs / "before", check=True)
    assert "differ in quantity (rtt_from_intended vs gap), which measure different " \
        "things" in p.stdout


def test_ping_in_ls_and_export(ping_result):
    r = load(ping_result)
    (row,) = json.loads(jtr("ls", "--json", ping_result, check=True).stdout)["results"]
    assert row["quantity"] == "rtt_from_intended" and row["samples"] == 3000
    assert row["percentiles_ns"] == r["runs"][0]["percentiles_ns"]
    (row,) = json.loads(jtr("ls", "--json", "--quantity", "rtt_from_send", ping_result,
                            check=True).stdout)["results"]
    assert row["quantity"] == "rtt_from_send"
    assert row["percentiles_ns"] == r["runs"][1]["percentiles_ns"]
    p = jtr("ls", "--quantity", "gap", ping_result)
    assert p.returncode == 2 and "they have rtt_from_intended, rtt_from_send, send_call" \
        in p.stderr
    prom = jtr("export", "--prom", "-", "--quantity", "rtt_from_send", ping_result,
               check=True).stdout
    loops = [line for line in prom.splitlines() if line.startswith("jtr_loop_seconds{")]
    assert len(loops) == len(PCTS) and all('quantity="rtt_from_send"' in x for x in loops)


# --- the comparison page as a person sees it (headless Chromium) -------------------

RAW_FLOAT = re.compile(r"(?<![\w.])\d+\.\d{5,}")    # "-0.324037": JSON's spelling, not people's


def attributed(src, dst, causes):
    """A copy of the real result @src with an attribution of @causes
    [(category, name, ns)] over its duration."""
    r = load(src)
    dur = r["runs"][0]["duration_ns"]
    total = sum(ns for _, _, ns in causes) or 1
    r["attribution"] = {
        "outliers": {"count": 10, "total_ns": total, "traced_ns": total, "duration_ns": dur},
        "tracer": {"backend": "ebpf", "events": 100, "dropped": 0},
        "causes": [{"category": cat, "name": name, "count": 5, "primary_count": 5,
                    "total_ns": ns, "share": ns / total, "p50_ns": 2000, "max_ns": 9000,
                    "per_s": 5 / (dur / 1e9)} for cat, name, ns in causes],
        "worst": [], "warnings": []}
    os.makedirs(dst)
    with open(os.path.join(dst, "result.json"), "w") as f:
        json.dump(r, f)
    return r


@pytest.fixture(scope="module")
def pages(two_runs, tmp_path_factory):
    """The page of the two real gap runs, with causes added (B: a task took 40 ms
    of each second), seen in Chromium; and of an oslat import against a gap run."""
    d = tmp_path_factory.mktemp("pages")
    attributed(two_runs / "before", d / "quiet", [("timer tick", "local timer", 4_000_000),
                                                   ("no kernel event", "VM exits", 9_000_000)])
    attributed(two_runs / "after", d / "noisy", [("timer tick", "local timer", 4_000_000),
                                                  ("no kernel event", "VM exits", 9_000_000),
                                                  ("task preemption", "noisy (prio 120)",
                                                   40_000_000)])
    jtr("report", "-o", d / "rep", d / "quiet", d / "noisy", check=True, timeout=120)
    osl = {"file_version": 1, "cmdline:": "oslat --cpu-list 0 -D 1",
           "start_time": "Sun, 22 Nov 2026 07:42:21 +0000",
           "end_time": "Sun, 22 Nov 2026 07:42:22 +0000",
           "sysinfo": {"nodename": "vm", "release": "6.1", "version": "#1", "machine": "x86_64"},
           "thread": {"0": {"cpu": 0, "freq": 2600, "min": 1, "avg": 1.0, "max": 40,
                            "duration": 1.0, "histogram": {"1": 900000, "2": 900, "5": 20,
                                                           "33": 2}}}}
    (d / "oslat.json").write_text(json.dumps(osl))
    jtr("import", "-o", d / "os", d / "oslat.json", check=True)
    jtr("report", "-o", d / "rep-os", d / "os", two_runs / "before", check=True, timeout=120)
    return {"d": d, "seen": see(d / "rep" / "report.html", d / "seen"),
            "seen_os": see(d / "rep-os" / "report.html", d / "seen-os")}


def test_page_verdict_first_and_numbers_for_people(pages, two_runs):
    seen = pages["seen"]
    lines = [x for x in seen.text.splitlines() if x.strip()]
    c = json.loads(jtr("compare", "--json", pages["d"] / "quiet", pages["d"] / "noisy",
                       check=True).stdout)
    assert lines[0] == "jtr report: quiet vs noisy"
    assert lines[1] == "Verdict: %s" % c["verdict"]
    # the decided metrics (or why none) and the suggestion of 1 s runs follow it
    assert "are each one run shorter than 10 s" in seen.words()
    assert not RAW_FLOAT.search(seen.text), RAW_FLOAT.search(seen.text).group(0)
    # the table once, in people's units, with the CI written out
    words = seen.words()
    m = {x["name"]: x for x in c["metrics"]}
    assert words.count("p99.99 (key)") == 1
    assert "p99.99 (key) %s %s" % (fmt_ns(m["p99.99"]["a"]), fmt_ns(m["p99.99"]["b"])) in words
    assert "%.3f %%" % m["time lost"]["a"] in words
    assert words.count("95 % CI of B-A") == 1
    # the max and the counts in the table, shown, not judged
    ex = {x["name"]: x for x in c["extremes"]}
    assert "max %s %s" % (fmt_ns(ex["max"]["a"]), fmt_ns(ex["max"]["b"])) in words
    assert words.count("- not judged") == len(c["extremes"])     # CI: none
    # no red but for a key metric's change the verdict counts: the others say
    # higher or lower
    for x in c["metrics"]:
        if not x["key"] and x["change"]:
            assert "%s %s %s" % (x["name"], fmt_value(x, x["a"]), fmt_value(x, x["b"])) in \
                words
    html = (pages["d"] / "rep" / "report.html").read_text()
    assert html.count('class="change-') == sum(1 for x in c["metrics"]
                                               if x["key"] and x["change"])
    # the per-cause changes say they have no interval (one run each)
    assert "One run each: no interval for a cause's change" in words
    # the host table once, in words: both hostnames in one row
    host = load(two_runs / "before")["host"]["hostname"]
    assert words.count("host %s %s" % (host, host)) == 1


def test_page_spectra_show_both_sides_to_their_max(pages, two_runs):
    words = pages["seen"].words()
    for tag, name, src in (("A", "quiet", "before"), ("B", "noisy", "after")):
        mx = load(two_runs / src)["runs"][0]["max_ns"]
        assert "%s: %s, max %s" % (tag, name, plots.tick_ns(mx)) in words
    # both lines drawn: the side colours are on the screen
    px = pages["seen"].pixels.reshape(-1, 3).astype(int)
    for colour in plots.SIDE_COLOURS:
        rgb = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
        assert (abs(px - rgb).max(axis=1) < 12).sum() > 200, colour


def test_page_delta_chart_names_the_cause_that_changed(pages):
    words = pages["seen"].words()
    c = json.loads(jtr("compare", "--json", pages["d"] / "quiet", pages["d"] / "noisy",
                       check=True).stdout)
    row = c["causes"][0]
    assert row["name"] == "noisy" and row["a_ns_per_s"] == 0
    chart = words[words.index("What changed per cause"):]
    # the largest change first, B's 40 ms of each second against A's none
    first = chart.index("task preemption: noisy A 0/s, B %s"
                        % compare_plots.per_s(row["b_ns_per_s"]))
    assert first < chart.index("timer tick: local timer")
    assert compare_plots.signed_per_s(row["diff_ns_per_s"]) in chart
    # 40 ms of a run of about a second (the real run's duration: a busy machine
    # stretches it by a few ms)
    dur_s = load(pages["d"] / "noisy")["runs"][0]["duration_ns"] / 1e9
    assert abs(row["diff_ns_per_s"] - 40_000_000 / dur_s) < 1000
    assert "B - A: time lost per second of run" in words
    # A | B: each side's own summary beside the other's
    assert "A: quiet" in words and "B: noisy" in words


def test_page_gap_against_oslat_is_not_comparable(pages, two_runs):
    c = json.loads(jtr("compare", "--json", pages["d"] / "os", two_runs / "before",
                       check=True).stdout)
    assert c["verdict"] == "not comparable" and not c["comparable"]
    assert c["a"]["resolution_ns"] == 1000 and c["b"]["resolution_ns"] < 100
    p = jtr("compare", pages["d"] / "os", two_runs / "before", check=True)
    assert p.stdout.splitlines()[-1].startswith(
        "verdict: not comparable: different resolutions: A's values come in steps of 1.0 us "
        "(imported from oslat, which counts whole microseconds), B's of ")
    words = pages["seen_os"].words()
    lines = [x for x in pages["seen_os"].text.splitlines() if x.strip()]
    assert lines[1] == "Verdict: not comparable"
    assert "A's values come in steps of 1.0 us" in words and "the numbers below are " \
        "shown, not judged" in words
    # the numbers are there, no row judged
    assert "p50 (key)" not in words and "p50 1.0 us" in words
    assert " better " not in words and " worse " not in words


def test_min_effect_options(two_runs):
    a, b = two_runs / "before", two_runs / "after"
    strict = json.loads(jtr("compare", "--json", "--min-effect", "1ms", a, b,
                            check=True).stdout)
    assert strict["method"]["min_effect_ns"] == 10 ** 6
    assert strict["verdict"] in ("no significant change", "no practical difference")
    assert all(m["change"] is None for m in strict["metrics"] if m["unit"] == "ns")
    p = jtr("compare", "--min-effect", "soon", a, b)
    assert p.returncode == 2 and p.stderr.startswith("jtr compare: --min-effect soon")
