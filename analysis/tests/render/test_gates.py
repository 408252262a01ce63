# SPDX-License-Identifier: GPL-2.0-only
"""render.gates: the words of a judged gate, on the terminal and in the JUnit
report (validated against junit-10.xsd, as formats/test_junit.py does)."""
import os
import sys
import xml.etree.ElementTree as ET

from jtrpy.formats.junit import junit_xml
from jtrpy.render import gates as G
from jtrpy.results import gates
from jtrpy.results.result import Result

from ..synthetic import make_result, make_run

XSD = os.path.join(sys.prefix, "share", "junit", "junit-10.xsd")
CAUSES = [{"category": "task preemption", "name": "jtr-inject (pid 42, prio 89)", "count": 11,
           "total_ns": 3_300_000, "share": 0.9, "example_chain": "IPI reschedule → preempted "
           "by jtr-inject (pid 42, prio 89) for 301.0 us"},
          {"category": "no kernel event", "name": "VM exits, SMI or hardware", "count": 1,
           "total_ns": 366_000, "share": 0.1, "example_chain": None, "side": "ping"}]


def judged(**limits):
    r = Result(make_result(make_run([40] * 100_000 + [1_250_000], cpu=1)), "/tmp/x/result.json")
    return r, gates.check(r, **limits)


def test_verdicts_and_details():
    _, [lat, lost] = judged(max_latency_ns=100_000, max_lost_pct=50)
    assert G.verdict(lat) == "max-latency cpu 1: FAILED: max 1.25 ms > limit 100us"
    assert G.detail(lost).endswith("% of the time lost <= limit 50 %")
    assert G.verdict(lost).startswith("max-lost cpu 1: passed: ")
    lat["cpu"] = None
    assert G.case_name(lat) == "max-latency"
    lat["value"] = None
    assert G.detail(lat) == "nothing measured (no sample)"


def test_a_failed_case_names_its_top_causes():
    _, [lat] = judged(max_latency_ns=100_000)
    lat.update(beyond=12, causes=CAUSES)
    assert G.causes_text(lat) == (
        "top causes of the 12 outliers beyond the limit: task preemption jtr-inject "
        "(pid 42, prio 89) (11 outliers, 3.30 ms), no kernel event VM exits, SMI or "
        "hardware [ping] (1 outlier, 366.0 us)")
    assert G.causes_text(lat, shown=1).endswith("(11 outliers, 3.30 ms) and 1 more")
    [line] = G.failure_lines([lat], "jtr run")
    assert line.startswith("jtr run: gate max-latency cpu 1 failed: max 1.25 ms > limit "
                           "100us; top causes of the 12 outliers beyond the limit: ")
    assert G.lines([lat]) == ["gates:", "  " + G.verdict(lat), "    " + G.causes_text(lat)]
    text = G.failure_text(lat, "gap")
    assert text.startswith("value: 1.25 ms (1250000 ns), the largest sample of gap on CPU 1 in ")
    assert "\nlimit: 100us (100000 ns)\ncauses of the 12 outliers beyond the limit, most " \
           "time first:\n" in text
    assert "jtr-inject (pid 42, prio 89)" in text and "90.0 %" in text
    assert "the longest outlier of the first: IPI reschedule → preempted" in text


def test_missing_causes_and_notes():
    _, [lat, lost] = judged(max_latency_ns=100_000, max_lost_pct=0)
    lat["causes_missing"] = "not measured: tracing was switched off (--no-trace); how"
    lost.update(outliers=0, causes=[], note="no outlier was logged (a note)")
    assert G.causes_text(lat) == "causes " + lat["causes_missing"]
    assert "causes: not measured: tracing was switched off" in G.failure_text(lat)
    assert G.causes_text(lost) == "no cause: no outlier was logged (a note)"
    assert G.failure_text(lost).endswith("causes: none\nnote: no outlier was logged (a note)\n")
    assert len(G.failure_lines([lat, lost], "jtr run")) == 2


def test_the_suite_of_a_run(schema):
    r, cases = judged(max_latency_ns=100_000, max_lost_pct=50)
    cases[0].update(beyond=1, causes=CAUSES[:1])
    s = G.junit_suite("jtr run", "gap", r, cases, 1795873690, 11.5, "jtr run --max-latency "
                      "100us", (("max_latency_limit", "100us"), ("max_lost_limit", None)))
    text = junit_xml(s)
    schema.validate(text)
    root = ET.fromstring(text)
    assert (root.get("tests"), root.get("failures")) == ("2", "1")
    suite = root[0]
    assert (suite.get("name"), suite.get("hostname"), suite.get("timestamp")) == (
        "jtr run gap", "test", "2026-11-28T13:48:10+00:00")
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert props["command"] == "jtr run --max-latency 100us"
    assert props["max_latency_limit"] == "100us" and "max_lost_limit" not in props
    assert props["max_ns"] == "1250000" and props["top_cause"] == "not attributed"
    assert props["results"] == "/tmp/x" and props["cpus"] == "1"
    tcs = suite.findall("testcase")
    assert [(t.get("classname"), t.get("name")) for t in tcs] == [
        ("jtr.run.gap", "max-latency cpu 1"), ("jtr.run.gap", "max-lost cpu 1")]
    assert tcs[0].find("failure").get("message") == G.verdict(cases[0])
    assert "jtr-inject" in tcs[0].find("failure").text
    assert tcs[1].find("failure") is None
    assert "results: /tmp/x/" in tcs[1].find("system-out").text


def test_without_gates_one_passing_run_case(schema):
    r, _ = judged()
    text = junit_xml(G.junit_suite("jtr run", "wake", r, [], 0, 1.0, "jtr run wake"))
    schema.validate(text)
    [tc] = ET.fromstring(text)[0].findall("testcase")
    assert (tc.get("classname"), tc.get("name"), tc.find("failure")) == (
        "jtr.run.wake", "run", None)
    assert "interruptions above" in tc.find("system-out").text   # the headline


def test_a_run_that_wrote_no_result_is_an_error(schema):
    text = junit_xml(G.junit_error_suite("jtr run", "gap", "jtr gap wrote no result (exit 2)",
                                         0, 0.1, "vm"))
    schema.validate(text)
    assert ET.fromstring(text).get("errors") == "1"


def test_the_limits_as_the_suite_names_them():
    assert G.limits_of(100_000, 0.5) == [("max_latency_limit", "100us"),
                                          ("max_lost_limit", "0.5%")]
    assert G.limits_of(None, None) == [("max_latency_limit", None), ("max_lost_limit", None)]
