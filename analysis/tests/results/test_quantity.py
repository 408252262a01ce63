# SPDX-License-Identifier: GPL-2.0-only
"""results.quantity: which runs of a result measure the same thing, the default
one, and what comparing two of them means."""
import pytest

from jtrpy.errors import UsageError
from jtrpy.results.figures import result_figures
from jtrpy.results.quantity import check_same, quantities, select, selected, tagged
from jtrpy.results.result import Result

from ..synthetic import loops, make_result, make_run, true_percentile


def ping(n=20_000):
    """A ping result: three runs of different sizes, one quantity each."""
    runs = [make_run(loops(s, n=n * k, tail=t), cpu=0, name=name)
            for s, k, t, name in ((1, 1, 3.0, "rtt_from_intended"), (2, 2, 1.0, "rtt_from_send"),
                                  (3, 3, 0.2, "send_call"))]
    return make_result(*runs, tool="ping")


@pytest.mark.parametrize("tool, names, want", [
    ("gap", ["cpu0", "cpu1"], ["gap"]),
    ("null", ["run 1", "run 2", "run 3"], ["null"]),
    ("oslat", ["cpu1", "cpu2"], ["oslat"]),
    ("cyclictest", ["thread 0"], ["cyclictest"]),
    ("clock", ["rdtsc", "lfence_rdtsc", "monotonic_vdso"],
     ["rdtsc", "lfence_rdtsc", "monotonic_vdso"]),
    ("ping", ["rtt_from_intended", "rtt_from_send", "send_call"],
     ["rtt_from_intended", "rtt_from_send", "send_call"]),
    # the default first, whatever the order of the runs
    ("sub", ["latency_from_intended", "latency_from_send"],
     ["latency_from_send", "latency_from_intended"]),
    ("pub", ["send_call"], ["send_call"]),
    ("hlog", ["cpu0", "cpu1"], ["hlog"]),
    ("hlog", ["hlog"], ["hlog"]),
    ("hlog", ["rtt_from_intended", "rtt_from_send", "send_call"],
     ["rtt_from_intended", "rtt_from_send", "send_call"]),
    ("hlog", ["send_1", "null_1", "send_2", "null_2", "cpu3"], ["send", "null", "hlog"]),
])
def test_quantities_per_tool(tool, names, want):
    r = make_result(*[make_run([40, 41], name=n) for n in names], tool=tool)
    assert quantities(r) == want
    assert select(r).name == want[0]


def test_send_runs_are_told_apart_by_kind():
    runs = [dict(make_run([40], name="null_1"), kind="null"),
            dict(make_run([50], name="send_1"), kind="send"),
            dict(make_run([41], name="null_2"), kind="null"),
            dict(make_run([52], name="send_2"), kind="send")]
    r = make_result(*runs, tool="send")
    q = select(r)
    assert (q.name, q.measures, q.names) == ("send", "send call", ["send", "null"])
    assert [x["name"] for x in q.runs] == ["send_1", "send_2"]
    assert [x["name"] for x in select(r, "null").runs] == ["null_1", "null_2"]
    assert select(r, "null").measures == "loop time"


def test_ping_is_never_pooled():
    r = ping()
    q = select(r)
    assert q.name == "rtt_from_intended" and [x["name"] for x in q.runs] == [q.name]
    assert q.describe() == "rtt_from_intended: 1 run, 20000 samples"
    assert q.others == ["rtt_from_send", "send_call"]
    assert q.measures == "round trip from the intended send time"
    f = result_figures(r)
    assert f["samples"] == 20_000 and f["runs"] == 1 and f["quantity"] == "rtt_from_intended"
    assert f["percentiles_ns"]["99.99"] == r["runs"][0]["percentiles_ns"]["99.99"]
    f = result_figures(r, "send_call")
    assert f["samples"] == 60_000 and f["measures"] == "send call"
    assert f["percentiles_ns"]["99"] == r["runs"][2]["percentiles_ns"]["99"]


def test_gap_pools_its_cpus():
    a, b = loops(1, n=50_000), loops(2, n=50_000, tail=2.0)
    r = make_result(make_run(a, cpu=0), make_run(b, cpu=1))
    q = select(r)
    assert q.name == "gap" and len(q.runs) == 2
    assert result_figures(r)["percentiles_ns"]["99.9"] == true_percentile(
        list(a) + list(b), 99.9)


def test_a_quantity_the_result_has_not_is_refused_naming_those_it_has():
    with pytest.raises(UsageError, match=r"^p1: no quantity 'gap' in this ping result; it has "
                       r"rtt_from_intended, rtt_from_send, send_call$"):
        select(ping(), "gap", "p1")
    with pytest.raises(UsageError, match="it has none"):
        select(make_result(tool="pong"), "x", "p")
    assert select(make_result(tool="pong")).name is None


def test_selected_keeps_a_result_a_result(tmp_path):
    r = Result(ping(), str(tmp_path / "result.json"))
    s, q = selected(r, "rtt_from_send")
    assert isinstance(s, Result) and s.folder == str(tmp_path)
    assert [x["name"] for x in s["runs"]] == ["rtt_from_send"] and q.name == "rtt_from_send"
    assert len(r["runs"]) == 3                      # the original is left whole
    plain, _ = selected(ping())
    assert type(plain) is dict
    assert tagged(r) == [("rtt_from_intended", "rtt_from_intended"),
                         ("rtt_from_send", "rtt_from_send"), ("send_call", "send_call")]


def test_comparing_two_quantities():
    gap = select(make_result(make_run([40])))
    null = select(make_result(make_run([40]), tool="null"))
    rtt = select(ping())
    hlog = select(make_result(make_run([40]), tool="hlog"))
    assert check_same(rtt, select(ping())) == []
    # the same measure: said
    (w,) = check_same(gap, null)
    assert w == "A and B differ in quantity (gap vs null), both the loop time: the " \
                "difference includes that"
    # different measures: refused, naming both and the way out
    with pytest.raises(UsageError) as e:
        check_same(rtt, gap)
    assert str(e.value) == (
        "A and B differ in quantity (rtt_from_intended vs gap): rtt_from_intended measures "
        "the round trip from the intended send time, gap the loop time; compare one "
        "quantity (--quantity NAME; A has rtt_from_intended, rtt_from_send, send_call, B "
        "has gap), or give --mixed-quantities to compare them all the same")
    (w,) = check_same(rtt, gap, mixed=True)
    assert "measure different things" in w and "--mixed-quantities" in w
    # not known: said
    (w,) = check_same(gap, hlog)
    assert "what hlog measures is not known" in w
