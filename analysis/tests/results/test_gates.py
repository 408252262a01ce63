# SPDX-License-Identifier: GPL-2.0-only
"""results.gates: the limits judged per CPU on a result's quantity, and the
"gates" section of result.json against docs/result.schema.json."""
import copy
import json
import os

import jsonschema
import pytest

from jtrpy.results import gates
from jtrpy.results.figures import result_figures

from ..synthetic import make_result, make_run

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..")


def gap_result():
    """CPU 1 with a 9 us interruption, CPU 3 with a 30 us one."""
    return make_result(make_run([40] * 10000 + [9000], cpu=1),
                       make_run([40] * 10000 + [30000], cpu=3))


def test_a_case_per_gate_per_cpu_latency_first():
    r = gap_result()
    cases = gates.check(r, max_latency_ns=10000, max_lost_pct=5.0)
    assert [(c["gate"], c["cpu"]) for c in cases] == [
        ("max-latency", 1), ("max-latency", 3), ("max-lost", 1), ("max-lost", 3)]
    lat1, lat3, lost1, lost3 = cases
    assert (lat1["value"], lat1["passed"], lat1["unit"]) == (9000, True, "ns")
    assert (lat3["value"], lat3["passed"]) == (30000, False)
    # the time lost: each interruption less one undisturbed loop, over the run
    run3 = r["runs"][1]
    want = round(100.0 * (30000 - 40) / run3["duration_ns"], 6)
    assert lost3["value"] == want and lost3["unit"] == "%" and lost3["duration_ns"] == \
        run3["duration_ns"]
    assert lost3["passed"] is (want <= 5.0)
    # one CPU's figure is the whole result's when it is the only one
    one = make_result(r["runs"][1])
    assert gates.check(one, max_lost_pct=5.0)[0]["value"] == \
        round(result_figures(one)["lost_pct"], 6)
    assert not gates.passed(cases)
    assert gates.passed(cases[:1]) and gates.passed([])


def test_the_limit_itself_passes_one_ns_more_fails():
    r = gap_result()
    assert gates.check(r, max_latency_ns=30000)[1]["passed"]
    assert not gates.check(r, max_latency_ns=29999)[1]["passed"]
    lost = gates.check(r, max_lost_pct=100.0)[1]["value"]
    assert gates.check(r, max_lost_pct=lost)[1]["passed"]
    assert not gates.check(r, max_lost_pct=lost - 1e-6)[1]["passed"]


def test_only_the_gates_asked_for():
    r = gap_result()
    assert gates.check(r) == []
    assert {c["gate"] for c in gates.check(r, max_lost_pct=1)} == {"max-lost"}


def test_the_quantity_decides_which_runs_count():
    """ping: only the round trip from the intended send time is judged, not the
    send call's run on the same CPU."""
    rtt = make_run([20000] * 100 + [900000], cpu=2, name="rtt_from_intended")
    call = make_run([500] * 100 + [5000000], cpu=2, name="send_call")
    r = make_result(rtt, call, tool="ping")
    [c] = gates.check(r, max_latency_ns=1000000)
    assert (c["cpu"], c["value"], c["passed"]) == (2, 900000, True)
    # send: its send runs (two repetitions on one CPU) are one case; null runs are not judged
    s1, s2 = make_run([300] * 50 + [7000], cpu=1), make_run([300] * 50 + [8000], cpu=1)
    n1 = make_run([300] * 50 + [90000], cpu=1)
    for run, kind in ((s1, "send"), (s2, "send"), (n1, "null")):
        run["kind"] = kind
    [c] = gates.check(make_result(s1, s2, n1, tool="send"), max_latency_ns=10000)
    assert (c["value"], c["passed"]) == (8000, True)


def test_nothing_measured_passes_no_gate():
    run = make_run([40] * 10, cpu=1)
    run["samples"] = 0
    cases = gates.check(make_result(run), max_latency_ns=3600 * 10 ** 9, max_lost_pct=100)
    assert [(c["value"], c["passed"]) for c in cases] == [(None, False), (None, False)]
    # a run with no time-lost figure cannot pass --max-lost
    run = make_run([40] * 10, cpu=1)
    del run["outliers"]
    [c] = gates.check(make_result(run), max_lost_pct=100)
    assert c["value"] is None and not c["passed"]


def test_an_unpinned_run_is_one_case_without_cpu():
    run = make_run([40] * 10 + [5000], cpu=0)
    run["cpu"] = None
    [c] = gates.check(make_result(run), max_latency_ns=1)
    assert c["cpu"] is None and not c["passed"]


@pytest.fixture(scope="module")
def gates_schema():
    with open(os.path.join(ROOT, "docs", "result.schema.json")) as f:
        s = json.load(f)
    return dict(s["properties"]["gates"], **{"$defs": s["$defs"]})


def valid(doc, schema):
    return jsonschema.Draft202012Validator(schema).is_valid(doc)


def test_the_section_matches_the_schema(gates_schema):
    cases = gates.check(gap_result(), max_latency_ns=10000, max_lost_pct=5.0)
    cases[1].update(beyond=1, causes=[{"category": "timer tick", "name": "local timer",
                                       "count": 1, "total_ns": 30000, "share": 1.0,
                                       "example_chain": "local timer"}])
    cases[1]["note"] = "a note"
    sec = gates.section(cases, 10000, 5.0, "gap")
    assert sec["passed"] is False and sec["quantity"] == "gap"
    assert sec["limits"] == {"max_latency_ns": 10000, "max_lost_pct": 5.0}
    assert valid(sec, gates_schema)
    assert valid(gates.section([], 10000, None, "gap"), gates_schema)
    missing = copy.deepcopy(sec)
    missing["cases"][1].pop("causes")
    missing["cases"][1]["causes_missing"] = "not measured: tracing was switched off"
    assert valid(missing, gates_schema)
    spoiled = [
        lambda s: s["cases"][0].update(gate="max-jitter"),
        lambda s: s["cases"][0].update(unit="%"),            # a latency is in ns
        lambda s: s["cases"][2].update(limit=101),            # a share of the time
        lambda s: s["cases"][0].pop("duration_ns"),
        lambda s: s["cases"][0].update(causes=[]),            # a passed case has no causes
        lambda s: s["cases"][1]["causes"][0].pop("total_ns"),
        lambda s: s["limits"].pop("max_lost_pct"),
        lambda s: s.update(extra=1),
        lambda s: s["cases"][0].update(value=-1),
    ]
    for spoil in spoiled:
        bad = copy.deepcopy(sec)
        spoil(bad)
        assert not valid(bad, gates_schema), spoil
