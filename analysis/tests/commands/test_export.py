# SPDX-License-Identifier: GPL-2.0-only
"""jtr export in-process on results written here: what it refuses (one line
each), --prom and --hlog to a file or standard output as the formats' own
functions write them, --quantity, the notes of results with the same labels,
and --perfetto of a traced result (or why not)."""
import json
import os

import pytest

from jtrpy.cli.main import main as jtr
from jtrpy.formats import hdrlog, prom
from jtrpy.results.result import load_result

from ..drivers.test_attribute import result as traced
from ..synthetic import loops, make_result, make_run


def write(folder, doc):
    folder.mkdir(parents=True)
    (folder / "result.json").write_text(json.dumps(doc))
    return str(folder)


@pytest.fixture
def gap(tmp_path):
    r = make_result(make_run(loops(1, n=5000), cpu=1))
    r["started_at"] = "2026-01-01T00:00:00Z"
    return write(tmp_path / "g", r)


@pytest.mark.parametrize("args,message", [
    (["r"], "say what to write: --hlog FILE, --prom FILE, --perfetto FILE or several; see "
            "'jtr export --help'"),
    (["--prom", "x.prom"], "give at least one result (a results folder or its result.json)"),
    (["--prom", "-", "--hlog", "-", "r"], "--hlog - and --prom -: the same standard output; "
     "give each its own file"),
    (["--perfetto", "t.json", "a", "b"], "--perfetto writes the trace of one result; give one "
                                         "(2 given)"),
])
def test_usage_errors(capsys, args, message):
    assert jtr(["export"] + args) == 2
    assert capsys.readouterr().err == "jtr export: %s\n" % message


def test_prom_and_hlog_as_the_formats_write_them(gap, tmp_path, capsys):
    r = load_result(gap)
    assert jtr(["export", "--prom", "-", gap]) == 0
    assert capsys.readouterr().out == prom.prom_text([r], [gap], prom.DEFAULT_TOP)[0]
    assert jtr(["export", "--hlog", "-", gap]) == 0
    assert capsys.readouterr().out == hdrlog.hlog_text([r], [gap])
    out = tmp_path / "o" / "jtr.prom"
    out.parent.mkdir()
    assert jtr(["export", "--prom", str(out), "--hlog", str(tmp_path / "o" / "r.hlog"),
                gap]) == 0
    assert out.read_text() == prom.prom_text([r], [gap], prom.DEFAULT_TOP)[0]
    assert sorted(os.listdir(tmp_path / "o")) == ["jtr.prom", "r.hlog"]     # no temporary left


def test_the_newest_of_equal_labels_with_a_note(gap, tmp_path, capsys):
    older = make_result(make_run(loops(2, n=5000), cpu=1))
    older["started_at"] = "2025-01-01T00:00:00Z"
    old = write(tmp_path / "old", older)
    assert jtr(["export", "--prom", "-", old, gap]) == 0
    cap = capsys.readouterr()
    assert cap.err == ("jtr export: %s: left out: %s is newer and has the same labels (host, "
                       "cpu, tool, profile)\n" % (old, gap))
    assert cap.out.count("jtr_loop_max_seconds{") == 1


def test_quantity_writes_only_its_runs(tmp_path, capsys):
    runs = [make_run(loops(s, n=3000), cpu=2, name=n) for s, n in
            ((1, "rtt_from_intended"), (2, "rtt_from_send"), (3, "send_call"))]
    p = write(tmp_path / "p", make_result(*runs, tool="ping"))
    assert jtr(["export", "--quantity", "send_call", "--prom", "-", p]) == 0
    quantities = {line.split('quantity="')[1].split('"')[0] for line in
                  capsys.readouterr().out.splitlines() if 'quantity="' in line}
    assert quantities == {"send_call"}
    assert jtr(["export", "--quantity", "nope", "--prom", "-", p]) == 2
    assert "no quantity 'nope' in this ping result" in capsys.readouterr().err


def test_perfetto_of_a_traced_result(tmp_path, gap, capsys):
    d = traced(tmp_path / "t")
    out = tmp_path / "run.json"
    assert jtr(["export", "--perfetto", str(out), str(d)]) == 0
    trace = json.loads(out.read_text())
    assert trace["otherData"]["result"] == str(d)
    names = [e.get("name") for e in trace["traceEvents"]]
    assert "CPU 1" in [e["args"].get("name") for e in trace["traceEvents"] if e["ph"] == "M"]
    assert any(n and n.startswith("timer tick") for n in names)    # the outlier, by its cause
    assert jtr(["export", "--perfetto", str(out), gap]) == 2
    assert capsys.readouterr().err == (
        "jtr export: %s: no event log (events.bin): --perfetto shows the kernel events the "
        "tracer recorded; run it with the tracer: jtr run -o DIR\n" % gap)
