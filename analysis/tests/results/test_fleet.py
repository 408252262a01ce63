# SPDX-License-Identifier: GPL-2.0-only
"""results.fleet: whose each result is, the rows, the rule (two hosts and many),
and the cause a flag names."""
import json

import pytest

from jtrpy.errors import UsageError
from jtrpy.results import fleet

from ..synthetic import make_result, make_run

N = 200_000        # samples: p99.99 is judged (20 beyond it)


def gap(host="vm", lost_pct=1.0, causes=(), tail_ns=None, n=N, started="2026-01-01T00:00:00Z",
        tool="gap", attributed=True):
    """A result of @n loops of 40 ns (the top 30 of @tail_ns: its p99.99) whose time
    lost is @lost_pct; @causes [(category, name, share)] its attribution."""
    values = [40] * n
    if tail_ns:
        values[-30:] = [tail_ns] * 30
    run = make_run(values, cpu=1)
    run["outliers"]["lost_ns"] = int(run["duration_ns"] * lost_pct / 100)
    att = None
    if attributed:
        att = {"causes": [{"category": c, "name": nm, "share": s,
                           "total_ns": int(s * run["outliers"]["lost_ns"])}
                          for c, nm, s in causes]}
    doc = make_result(run, tool=tool, host=host, attribution=att)
    doc["started_at"] = started
    return doc


def write(folder, doc):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "result.json").write_text(json.dumps(doc))


QUIET = [("no kernel event", "VM exits, SMI or hardware", 0.6), ("timer tick", "local timer", 0.4)]


def noisy(pid=4242):
    return [("task preemption", "jtr-inject (pid %d, prio 89)" % pid, 0.8),
            ("no kernel event", "VM exits, SMI or hardware", 0.12),
            ("timer tick", "local timer", 0.08)]


# --- where the results come from ----------------------------------------------------

def test_hosts_are_named_by_their_folders_else_by_result_json(tmp_path):
    # Ansible's fetch layout: DIR/HOST/..., results at any depth, every one 'vm'
    write(tmp_path / "fleet" / "web1" / "gap", gap())
    write(tmp_path / "fleet" / "web1" / "wake", gap(tool="wake"))
    write(tmp_path / "fleet" / "web2" / "var" / "tmp" / "jtr" / "gap", gap())
    write(tmp_path / "fleet" / "web2" / ".gap.partial-77", gap())       # unfinished: hidden
    (tmp_path / "fleet" / "web3").mkdir()                                # fetched nothing
    # a result given on its own, and a plain results folder: result.json's host
    write(tmp_path / "solo", gap(host="db1"))
    write(tmp_path / "results" / "20260101-x-gap", gap(host="db2"))
    (tmp_path / "results" / "latest").symlink_to(tmp_path / "results" / "20260101-x-gap")
    write(tmp_path / "nameless", dict(gap(), host={}))
    hosts, empty, _ = fleet.collect([str(tmp_path / d) for d in
                                     ("fleet", "solo", "results", "nameless")])
    assert {h: len(rs) for h, rs in hosts.items()} == {
        "web1": 2, "web2": 1, "db1": 1, "db2": 1, "nameless": 1}
    assert empty == [str(tmp_path / "fleet" / "web3")]
    assert hosts["web2"][0].folder == str(tmp_path / "fleet" / "web2" / "var" / "tmp" / "jtr"
                                          / "gap")


def test_no_result_and_a_damaged_one_are_one_line_errors(tmp_path):
    (tmp_path / "fleet" / "h1").mkdir(parents=True)
    with pytest.raises(UsageError, match=r"^no jtr result in .*fleet; give results folders"):
        fleet.collect([str(tmp_path / "fleet")])
    bad = tmp_path / "fleet" / "h1" / "gap"
    write(bad, gap())
    (bad / "result.json").write_text('{"format": "jtr-result/1", "runs": "x"}')
    with pytest.raises(UsageError) as e:
        fleet.collect([str(tmp_path / "fleet")])
    assert str(e.value) == "%s: runs: expected a list of run objects, got a string" % (
        bad / "result.json")
    with pytest.raises(UsageError, match="nope: no such folder"):
        fleet.collect([str(tmp_path / "nope")])


def test_a_host_folder_that_cannot_be_read_is_an_error(tmp_path, monkeypatch):
    """A host whose folder cannot be read (another user's, as jtr fleet runs as a
    user) is one line, exit 2, not a host left out: it may be the one that
    differs, and it was silently dropped (os.walk's errors were ignored)."""
    write(tmp_path / "f" / "h1" / "gap", gap())
    write(tmp_path / "f" / "h2" / "gap", gap())
    locked = str(tmp_path / "f" / "h2")
    real = fleet.os.scandir

    def scandir(path="."):
        if str(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(fleet.os, "scandir", scandir)
    with pytest.raises(UsageError) as e:
        fleet.collect([str(tmp_path / "f")])
    assert str(e.value) == "%s: cannot read: Permission denied" % locked


def test_a_host_folder_linked_out_of_the_folder_is_not_followed(tmp_path):
    """DIR/HOST a link to a folder outside DIR (to / it walked the whole machine):
    left out and named; a link to a folder inside DIR is followed (once)."""
    write(tmp_path / "f" / "h1" / "gap", gap())
    write(tmp_path / "elsewhere" / "gap", gap())
    (tmp_path / "f" / "out").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "f" / "root").symlink_to("/")
    (tmp_path / "f" / "again").symlink_to(tmp_path / "f" / "h1")
    hosts, empty, outside = fleet.collect([str(tmp_path / "f")])
    assert sorted(hosts) == ["h1"] and empty == []
    assert outside == [str(tmp_path / "f" / "out"), str(tmp_path / "f" / "root")]


def test_the_newest_result_of_a_host_and_probe_is_used(tmp_path):
    write(tmp_path / "f" / "h1" / "old", gap(lost_pct=9, started="2026-01-01T00:00:00Z"))
    write(tmp_path / "f" / "h1" / "new", gap(lost_pct=1, started="2026-01-02T00:00:00Z"))
    write(tmp_path / "f" / "h2" / "gap", gap(lost_pct=1))
    doc = fleet.fleet([str(tmp_path / "f")])
    (h1,) = [r for r in doc["rows"] if r["host"] == "h1"]
    assert h1["path"] == str(tmp_path / "f" / "h1" / "new")
    assert h1["lost_pct"] == pytest.approx(1, rel=1e-6)
    assert doc["not_used"] == [str(tmp_path / "f" / "h1" / "old")]
    assert doc["flagged_hosts"] == []


# --- causes -------------------------------------------------------------------------

def test_cause_keys_leave_out_what_differs_between_hosts():
    k = fleet.cause_key
    assert k("task preemption", "jtr-inject (pid 16143, prio 89)") == \
        k("task preemption", "jtr-inject (pid 7, prio 120)") == "task preemption: jtr-inject"
    assert k("task preemption", "kworker/1:2 (pid 374, prio 120)") == \
        "task preemption: kworker/1:*"
    assert k("task preemption", "kworker/1:1H (pid 54, prio 100)") == \
        "task preemption: kworker/1:*H"
    assert k("hardirq", "36 virtio1-req.0") == "hardirq: 36 virtio1-req.0"
    assert k("no kernel event", "") == "no kernel event"


def test_a_hosts_causes_add_up_to_its_time_lost():
    doc = gap(lost_pct=8.0, causes=noisy() + [("task preemption", "jtr-inject (pid 9, "
                                                                  "prio 120)", 0.0)])
    causes = fleet.row_causes(doc, 8.0)
    assert [c["key"] for c in causes] == ["task preemption: jtr-inject",
                                          "no kernel event: VM exits, SMI or hardware",
                                          "timer tick: local timer"]
    assert sum(c["lost_pct"] for c in causes) == pytest.approx(8.0)
    assert causes[0]["lost_pct"] == pytest.approx(6.4)
    assert fleet.row_causes(gap(attributed=False), 1.0) == []


# --- the rule -----------------------------------------------------------------------

def rows_of(tmp_path, docs, rule=None):
    for host, doc in docs.items():
        write(tmp_path / "f" / host / "gap", doc)
    return fleet.fleet([str(tmp_path / "f")], rule)


def by_host(doc):
    return {r["host"]: r for r in doc["rows"]}


def test_two_hosts_each_against_the_other(tmp_path):
    doc = rows_of(tmp_path, {"a": gap(lost_pct=1.0, causes=QUIET),
                             "b": gap(lost_pct=8.0, causes=noisy())})
    rows = by_host(doc)
    assert doc["flagged_hosts"] == ["b"] and not rows["a"]["flagged"]
    (flag,) = rows["b"]["flags"]
    assert (flag["metric"], flag["baseline"], flag["spread"], flag["compared"]) == (
        "lost", pytest.approx(1.0), 0, 1)
    assert flag["times"] == pytest.approx(8.0) and flag["threshold"] == pytest.approx(2.0)
    c = rows["b"]["cause"]
    assert c["key"] == "task preemption: jtr-inject"
    assert (c["lost_pct"], c["baseline_pct"]) == (pytest.approx(6.4), 0.0)


def test_the_practical_minimums(tmp_path):
    # 2x but only 0.3 points more: not flagged; with --min-lost 0.2 it is
    docs = {"a": gap(lost_pct=0.3, causes=QUIET), "b": gap(lost_pct=0.6, causes=noisy())}
    assert rows_of(tmp_path, docs)["flagged_hosts"] == []
    assert rows_of(tmp_path, docs, fleet.Rule(min_lost_pct=0.2))["flagged_hosts"] == ["b"]
    # 1.9x is under the ratio, whatever the difference
    docs = {"a": gap(lost_pct=5.0, causes=QUIET), "b": gap(lost_pct=9.5, causes=noisy())}
    assert rows_of(tmp_path, docs)["flagged_hosts"] == []
    assert rows_of(tmp_path, docs, fleet.Rule(ratio=1.5))["flagged_hosts"] == ["b"]


def test_many_hosts_the_mad_of_the_others_widens_the_margin(tmp_path):
    # a fleet that varies a lot: 1, 3, 5, 7 %; 12 % is 2x the others' median (5)
    # and 7 points above it, but within 3 MADs (5 + 3 x 1.4826 x 2 = 13.9)
    spread = {"h%d" % i: gap(lost_pct=v, causes=QUIET) for i, v in enumerate((1, 3, 5, 7))}
    docs = dict(spread, h9=gap(lost_pct=12, causes=noisy()))
    doc = rows_of(tmp_path, docs)
    assert doc["flagged_hosts"] == []
    assert rows_of(tmp_path, docs, fleet.Rule(k=1))["flagged_hosts"] == ["h9"]
    # a tight fleet: 12 % stands out; the host itself is left out of its baseline
    tight = {"h%d" % i: gap(lost_pct=v, causes=QUIET) for i, v in
             enumerate((1.0, 1.1, 0.9, 1.05))}
    doc = rows_of(tmp_path / "t", dict(tight, h9=gap(lost_pct=12, causes=noisy())))
    assert doc["flagged_hosts"] == ["h9"]
    (flag,) = by_host(doc)["h9"]["flags"]
    assert flag["baseline"] == pytest.approx(1.025) and flag["compared"] == 4
    assert flag["spread"] == pytest.approx(1.4826 * 0.05)     # |0.9, 1, 1.05, 1.1 - 1.025|


def test_percentiles_are_judged_only_with_enough_samples_beyond_them(tmp_path):
    docs = {"a": gap(lost_pct=1, causes=QUIET, tail_ns=3000),
            "b": gap(lost_pct=1, causes=QUIET, tail_ns=50_000)}
    doc = rows_of(tmp_path, docs)
    b = by_host(doc)["b"]
    assert b["percentiles_ns"]["99.99"] >= 49_000
    assert [f["metric"] for f in b["flags"]] == ["p99.99"]
    # with 2,000 samples p99.99 is one sample: not judged; max only when asked
    docs = {"a": gap(lost_pct=1, causes=QUIET, tail_ns=3000, n=2000),
            "b": gap(lost_pct=1, causes=QUIET, tail_ns=50_000, n=2000)}
    assert rows_of(tmp_path / "s", docs)["flagged_hosts"] == []
    doc = rows_of(tmp_path / "m", docs, fleet.Rule(metrics=("lost", "max")))
    assert [f["metric"] for f in by_host(doc)["b"]["flags"]] == ["max"]


def test_the_cause_named_is_the_largest_excess_not_the_largest_cause(tmp_path):
    # b's largest cause is the tick, as everywhere; what b has more of is NET_RX
    base = [("timer tick", "local timer", 0.7), ("softirq", "NET_RX", 0.3)]
    more = [("timer tick", "local timer", 0.35), ("softirq", "NET_RX", 0.65)]
    docs = {"a": gap(lost_pct=2, causes=base), "c": gap(lost_pct=2.2, causes=base),
            "b": gap(lost_pct=6, causes=more)}
    c = by_host(rows_of(tmp_path, docs))["b"]["cause"]
    assert c["key"] == "softirq: NET_RX"
    assert c["baseline_pct"] == pytest.approx((0.6 + 0.66) / 2)
    assert c["excess_pct"] == pytest.approx(3.9 - 0.63)


def test_a_flag_without_attribution_says_why(tmp_path):
    docs = {"a": gap(lost_pct=1, causes=QUIET), "b": gap(lost_pct=9, attributed=False)}
    b = by_host(rows_of(tmp_path, docs))["b"]
    assert b["flagged"] and b["cause"] == {
        "why": "this run was not attributed (jtr run as root traces its causes)"}
    docs = {"a": gap(lost_pct=1, attributed=False), "b": gap(lost_pct=9, causes=noisy())}
    assert by_host(rows_of(tmp_path / "x", docs))["b"]["cause"] == {
        "why": "no other host's run of this probe was attributed"}


def test_probes_are_compared_only_with_the_same_probe(tmp_path):
    write(tmp_path / "f" / "a" / "gap", gap(lost_pct=1, causes=QUIET))
    write(tmp_path / "f" / "b" / "gap", gap(lost_pct=1.1, causes=QUIET))
    write(tmp_path / "f" / "b" / "wake", gap(lost_pct=9, causes=noisy(), tool="wake"))
    doc = fleet.fleet([str(tmp_path / "f")])
    assert doc["flagged_hosts"] == [] and doc["not_judged"] == ["wake"]
    assert [(r["host"], r["tool"]) for r in doc["rows"]] == [("a", "gap"), ("b", "gap"),
                                                             ("b", "wake")]


def test_a_latency_probe_is_judged_by_its_excess_latency_not_a_time_lost(tmp_path):
    # wake: a sample is a latency, no CPU time; the row's loss is how far its
    # outliers went past the threshold per s of run, in ns/s, and a cause's share of it
    def wake(tail_ns, causes):
        doc = gap(tool="wake", tail_ns=tail_ns, causes=causes)
        doc["runs"][0]["duration_ns"] = 10 ** 9            # 1 s of run
        return doc
    for host, tail, causes in (("a", 3000, QUIET), ("c", 3000, QUIET),
                               ("b", 40_000, noisy())):
        write(tmp_path / "f" / host / "wake", wake(tail, causes))
    doc = fleet.fleet([str(tmp_path / "f")])
    rows = by_host(doc)
    a, b = rows["a"], rows["b"]
    assert a["lost_pct"] is None and not a["cpu_time"]
    assert a["loss"] == pytest.approx(30 * (3000 - 1000))          # ns per s
    assert b["loss"] == pytest.approx(30 * (40_000 - 1000))
    assert doc["flagged_hosts"] == ["b"]
    assert "lost" in [f["metric"] for f in b["flags"]]
    c = b["cause"]
    assert c["key"] == "task preemption: jtr-inject" and c["unit"] == "ns/s"
    assert c["lost_pct"] == pytest.approx(0.8 * 30 * 39_000)
    assert c["baseline_pct"] == 0.0
    # the minimum that counts in ns/s: min_latency_ns per ms of run
    assert fleet.Rule().minimum("lost", cpu_time=False) == fleet.Rule().min_latency_ns * 1000
