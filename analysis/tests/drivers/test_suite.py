# SPDX-License-Identifier: GPL-2.0-only
"""drivers.suite: jtr suite's plan from its options, and a suite run with
stand-in probes (JTR_LIBEXEC) that write a result, fail or stop early: each
item's status, exit status and log in suite.json, what the command is handed
to print (the plan, each item as it starts and ends, the Outcome), the exit
status of the whole, and a stop that ends the suite after the running item."""
import json
import os
import sys

import pytest

from jtrpy.drivers import suite as S
from jtrpy.errors import EXIT_INTERRUPTED, UsageError
from jtrpy.system import signals

from ..synthetic import loops, make_result, make_run

FAKE = """#!%s
import os, shutil, sys
tool = os.path.basename(sys.argv[0])[len("jtr-"):]
plan = os.environ.get("FAKE_" + tool.upper(), "ok")
print("%%s: %%s" %% (os.environ["JTR_PROG"], " ".join(sys.argv[1:])))
if plan == "fail":
    print("jtr %%s: warning: odd" %% tool)
    print("jtr %%s: failed: no such clock" %% tool)
    print("jtr %%s: warning: after" %% tool)
    sys.exit(1)
out = sys.argv[sys.argv.index("-o") + 1]
os.makedirs(out)
shutil.copy(os.environ["FAKE_RESULT" + ("_PARTIAL" if plan == "partial" else "")],
            os.path.join(out, "result.json"))
sys.exit(130 if plan == "partial" else 0)
"""


def options(**kw):
    o = {"quick": False, "samples": None, "runs": None, "cpus": None, "gap_ns": None,
         "transports": ["udp", "shm"], "only": None, "out": None}
    o.update(kw)
    return o


@pytest.fixture
def fakes(tmp_path, monkeypatch):
    b = tmp_path / "bin"
    b.mkdir()
    for tool in ("null", "clock", "gap", "send"):
        p = b / ("jtr-" + tool)
        p.write_text(FAKE % sys.executable)
        p.chmod(0o755)
    res = make_result(make_run(loops(1, n=5000), cpu=3))
    (tmp_path / "r.json").write_text(json.dumps(res))
    (tmp_path / "p.json").write_text(json.dumps(dict(res, partial=True)))
    monkeypatch.setenv("JTR_LIBEXEC", str(b))
    monkeypatch.setenv("FAKE_RESULT", str(tmp_path / "r.json"))
    monkeypatch.setenv("FAKE_RESULT_PARTIAL", str(tmp_path / "p.json"))
    monkeypatch.setattr(S, "default_cpu", lambda: 3)
    signals.reset()
    yield res
    signals.reset()


def test_plan_of_the_defaults(fakes):
    items, skipped = S.plan(options())
    assert [(i["name"], i["tool"]) for i in items] == [
        ("null", "null"), ("null-clock", "null"), ("clock", "clock"), ("gap", "gap"),
        ("send-udp", "send"), ("send-shm", "send")]
    assert items[0]["args"] == ["-n", "2M", "--runs", "3", "-c", "3", "--desc", "null"]
    assert items[1]["args"][:2] == ["-t", "clock"]
    assert items[2]["args"] == ["-n", "1M", "-c", "3"]
    assert items[3]["args"] == ["-d", "10s", "-c", "3"]
    assert items[4]["args"] == ["-T", "udp", "-n", "500K", "--pairs", "3", "-c", "3",
                                "--desc", "send-udp"]
    assert skipped == []


def test_plan_quick_with_options(fakes):
    items, _ = S.plan(options(quick=True, cpus=[2, 5, 6], only=["gap", "send"],
                              transports=["tcp"]))
    assert [(i["name"], i["args"]) for i in items] == [
        ("gap", ["-d", "500ms", "-c", "2,5-6"]),
        ("send-tcp", ["-T", "tcp", "-n", "20K", "--pairs", "2", "-c", "2", "--desc", "send-tcp"])]
    items, _ = S.plan(options(samples=7000, runs=9, gap_ns=3 * 10**9, only=["null", "gap"]))
    assert [i["args"] for i in items] == [["-n", "7K", "--runs", "9", "-c", "3", "--desc", "null"],
                                          ["-d", "3s", "-c", "3"]]


def test_a_count_given_is_written_as_the_programs_read_it(fakes):
    items, _ = S.plan(options(samples=1234, only=["null", "send-udp"]))
    assert [i["args"][i["args"].index("-n") + 1] for i in items] == ["1234", "1234"]
    items, _ = S.plan(options(samples=3 * 10 ** 6, only=["null-clock"]))
    assert items[0]["args"][2:4] == ["-n", "3M"]


def test_send_is_skipped_when_not_built(fakes, tmp_path):
    os.unlink(tmp_path / "bin" / "jtr-send")
    items, skipped = S.plan(options(only=["send-shm", "null"]))
    assert [i["name"] for i in items] == ["null"]
    assert [i["name"] for i in skipped] == ["send-shm"]
    assert skipped[0]["why"].startswith("the measuring program jtr-send is not built")


def test_item_figures_and_last_line(fakes, tmp_path):
    d = tmp_path / "item"
    d.mkdir()
    (d / "result.json").write_text(json.dumps(fakes))
    f = S.item_figures(str(d))
    run = fakes["runs"][0]
    assert (f["percentiles_ns"]["99.99"], f["max_ns"], f["partial"]) == (
        run["percentiles_ns"]["99.99"], run["max_ns"], False)
    (d / "result.json").write_text("{}")
    assert S.item_figures(str(d)) is None
    log = tmp_path / "x.log"
    log.write_text("a\nwarning: b\n\n")
    assert S.last_line(str(log)) == "a"
    log.write_text("warning: only\n")
    assert S.last_line(str(log)) == "warning: only"     # nothing else to say
    assert S.last_line(str(tmp_path / "none")) == ""


def job(o, command=("jtr suite",)):
    """suite_job with callbacks that keep what they are given: (Outcome,
    [(folder, names, skipped)], [item records])."""
    planned, items = [], []
    out = S.suite_job(o, list(command), lambda *a: planned.append(a), items.append)
    return out, planned, items


def test_a_suite_with_a_failed_and_a_partial_item(fakes, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_CLOCK", "fail")
    monkeypatch.setenv("FAKE_GAP", "partial")
    out = tmp_path / "s"
    o, planned, recs = job(options(out=str(out), only=["null", "clock", "gap", "send-udp"]),
                           ["jtr suite", "-o", str(out)])
    assert o == S.Outcome(str(out), 4, 2, 1, False, 1)
    doc = json.loads((out / "suite.json").read_text())
    assert (doc["state"], doc["partial"], doc["pairs"]) == ("done", False, [])
    got = {e["name"]: (e["status"], e["exit_status"], e.get("result")) for e in doc["items"]}
    assert got == {"null": ("done", 0, "null/result.json"), "clock": ("failed", 1, None),
                   "gap": ("interrupted", 130, "gap/result.json"),
                   "send-udp": ("done", 0, "send-udp/result.json")}
    assert doc["items"][0]["command"] == ["jtr", "null", "-n", "2M", "--runs", "3", "-c",
                                          "3", "--desc", "null", "-q", "-o", str(out / "null")]
    assert (out / "null.log").read_text().startswith("jtr suite: null: -n 2M")
    assert planned == [(str(out), ["null", "clock", "gap", "send-udp"], [])]
    # each item as it starts (its entry then) and as it ends
    assert [(r["k"], r["total"], r["name"], r["status"]) for r in recs] == [
        (1, 4, "null", "running"), (1, 4, "null", "done"), (2, 4, "clock", "running"),
        (2, 4, "clock", "failed"), (3, 4, "gap", "running"), (3, 4, "gap", "interrupted"),
        (4, 4, "send-udp", "running"), (4, 4, "send-udp", "done")]
    assert recs[0]["command"] == doc["items"][0]["command"] and "seconds" not in recs[0]
    assert recs[1]["figures"]["max_ns"] == fakes["runs"][0]["max_ns"] and recs[1]["kept"]
    assert recs[1]["seconds"] >= 0 and recs[1]["last"] is None
    assert (recs[3]["exit_status"], recs[3]["figures"], recs[3]["kept"], recs[3]["last"]) == (
        1, None, False, "jtr clock: failed: no such clock")
    assert recs[5]["figures"]["partial"] is True and recs[5]["kept"]
    # send over UDP on a port of its own, said as it starts
    assert recs[6]["command"][recs[6]["command"].index("-P") + 1].startswith("127.0.0.1:")


def test_both_null_loops_make_a_pair_and_a_skipped_send_is_listed(fakes, tmp_path):
    os.unlink(tmp_path / "bin" / "jtr-send")
    out = tmp_path / "s"
    o, planned, _ = job(options(out=str(out), only=["null", "null-clock", "send"]))
    assert o.rc == 0 and (o.total, o.done, o.failed) == (2, 2, 0)
    doc = json.loads((out / "suite.json").read_text())
    assert doc["pairs"] == [["null-clock", "null"]]
    skipped = [e for e in doc["items"] if e["status"] == "skipped"]
    assert [e["name"] for e in skipped] == ["send-udp", "send-shm"]
    assert skipped[0]["folder"] is None and skipped[0]["command"][:2] == ["jtr", "send"]
    [(folder, names, skipped)] = planned
    assert names == ["null", "null-clock"] and [i["name"] for i in skipped] == [
        "send-udp", "send-shm"]
    assert skipped[0]["why"].startswith("the measuring program jtr-send is not built")


def test_a_stop_ends_the_suite_after_the_running_item(fakes, tmp_path, monkeypatch):
    asked = iter([False, True])         # the stop comes while the first item runs
    monkeypatch.setattr(S.signals, "requested", lambda: next(asked, True))
    out = tmp_path / "s"
    o, _, recs = job(options(out=str(out), only=["null", "gap"]))
    assert o == S.Outcome(str(out), 2, 0, 0, True, EXIT_INTERRUPTED)
    doc = json.loads((out / "suite.json").read_text())
    assert (doc["state"], doc["partial"]) == ("interrupted", True)
    assert [(e["name"], e["status"]) for e in doc["items"]] == [("null", "interrupted"),
                                                               ("gap", "not run")]
    assert [r["status"] for r in recs] == ["running", "interrupted"]


def test_an_existing_folder_is_refused(fakes, tmp_path):
    (tmp_path / "s").mkdir()
    with pytest.raises(UsageError, match="-o .*/s: exists; give a new folder"):
        job(options(out=str(tmp_path / "s")))


def test_a_send_item_over_a_port_gets_one_free_when_it_starts():
    import socket
    udp = {"tool": "send", "args": ["-T", "udp", "-n", "20K"]}
    # the default port taken by another program: the item's is another, and free
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as held:
        try:
            held.bind(("127.0.0.1", 17391))
        except OSError:
            pass            # taken already: the same for the item
        flag, addr = S.own_port(udp)
    host, port = addr.rsplit(":", 1)
    assert flag == "-P" and host == "127.0.0.1" and int(port) != 17391
    assert S.own_port({"tool": "send", "args": ["-T", "tcp"]})[0] == "-P"
    assert S.own_port({"tool": "send", "args": ["-T", "shm"]}) == []
    assert S.own_port({"tool": "null", "args": ["-n", "2M"]}) == []
