# SPDX-License-Identifier: GPL-2.0-only
"""drivers.export: a text or its pieces written to a file or standard output,
the pieces of a traced result's Perfetto trace (or why there are none), and
the job: the files checked before anything is loaded, each written as its
format's functions write it, --prom's notes handed back before its file is
written and nothing done before the generator is iterated."""
import io
import json

import pytest

from jtrpy.drivers.export import export, perfetto_trace, write_out
from jtrpy.errors import UsageError
from jtrpy.formats import hdrlog, prom
from jtrpy.results.result import load_result

from ..synthetic import loops, make_result, make_run
from .test_attribute import result as traced


def write(folder, doc):
    folder.mkdir(parents=True)
    (folder / "result.json").write_text(json.dumps(doc))
    return str(folder)


class Out(io.StringIO):
    """A text stream with the bytes underneath, as sys.stdout has."""

    def __init__(self):
        super().__init__()
        self.buffer = io.BytesIO()


def test_write_out(tmp_path):
    out = Out()
    write_out("-", "text\n", "--prom", out)
    assert out.getvalue() == "text\n"
    write_out("-", iter(["a", "é\n"]), "--perfetto", out)
    assert out.buffer.getvalue() == "aé\n".encode()
    write_out(str(tmp_path / "f"), iter(["x", "y"]), "--hlog", out)
    assert (tmp_path / "f").read_text() == "xy"
    with pytest.raises(UsageError, match="^--hlog %s: cannot write: " % (tmp_path / "no" / "f")):
        write_out(str(tmp_path / "no" / "f"), "x", "--hlog", out)


def test_perfetto_trace(tmp_path):
    d = str(traced(tmp_path / "t"))
    trace = json.loads("".join(perfetto_trace(load_result(d), "t")))
    assert trace["otherData"]["result"] == "t"
    assert any((e.get("name") or "").startswith("timer tick") for e in trace["traceEvents"])
    g = write(tmp_path / "g", make_result(make_run(loops(1, n=1000), cpu=1)))
    with pytest.raises(UsageError, match="^gap: no event log \\(events.bin\\): --perfetto "):
        perfetto_trace(load_result(g), "gap")


def test_export_writes_the_files_as_the_formats_do(tmp_path):
    older = make_result(make_run(loops(2, n=3000), cpu=1))
    older["started_at"] = "2025-01-01T00:00:00Z"
    newer = make_result(make_run(loops(3, n=3000), cpu=1))
    newer["started_at"] = "2026-01-01T00:00:00Z"
    paths = [write(tmp_path / "old", older), write(tmp_path / "new", newer)]
    out = {"hlog": str(tmp_path / "r.hlog"), "prom": str(tmp_path / "r.prom"),
           "perfetto": None}
    job = export(paths, out, None)
    assert not (tmp_path / "r.hlog").exists()          # nothing before it is iterated
    notes = [next(job)]
    assert (tmp_path / "r.hlog").exists() and not (tmp_path / "r.prom").exists()
    notes += list(job)
    rs = [load_result(p) for p in paths]
    text, want = prom.prom_text(rs, paths, prom.DEFAULT_TOP)
    assert notes == want and len(notes) == 1 and "left out" in notes[0]
    assert (tmp_path / "r.prom").read_text() == text
    assert (tmp_path / "r.hlog").read_text() == hdrlog.hlog_text(rs, paths)


def test_export_checks_and_selects_first(tmp_path):
    runs = [make_run(loops(s, n=2000), cpu=2, name=n) for s, n in
            ((1, "rtt_from_intended"), (2, "send_call"))]
    p = write(tmp_path / "p", make_result(*runs, tool="ping"))
    with pytest.raises(UsageError, match="^--hlog %s: " % (tmp_path / "no" / "x.hlog")):
        list(export(["nowhere"], {"hlog": str(tmp_path / "no" / "x.hlog")}, None))
    list(export([p], {"prom": str(tmp_path / "q.prom")}, None, quantity="send_call", top=0))
    assert {line.split('quantity="')[1].split('"')[0] for line in
            (tmp_path / "q.prom").read_text().splitlines() if 'quantity="' in line} == \
        {"send_call"}
    with pytest.raises(UsageError, match="no quantity 'nope' in this ping result"):
        list(export([p], {"prom": str(tmp_path / "n.prom")}, None, quantity="nope"))
    assert not (tmp_path / "n.prom").exists()
