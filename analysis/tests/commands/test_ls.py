# SPDX-License-Identifier: GPL-2.0-only
"""jtr ls in-process: each row on one quantity, named; --quantity."""
import json

from jtrpy.cli.main import main as jtr

from ..synthetic import loops, make_result, make_run


def _results(tmp_path):
    runs = [make_run(loops(s, n=20_000, tail=t), name=n) for s, n, t in
            ((1, "rtt_from_intended", 3.0), (2, "rtt_from_send", 1.0), (3, "send_call", 0.2))]
    docs = {"p": make_result(*runs, tool="ping"),
            "g": make_result(make_run(loops(4, n=20_000), cpu=0),
                             make_run(loops(5, n=20_000), cpu=1))}
    for name, doc in docs.items():
        doc["started_at"] = "2026-01-0%dT00:00:00.000Z" % (1 if name == "g" else 2)
        (tmp_path / name).mkdir()
        (tmp_path / name / "result.json").write_text(json.dumps(doc))
    return docs


def test_rows_name_their_quantity(tmp_path, capsys):
    docs = _results(tmp_path)
    assert jtr(["ls", "--json", str(tmp_path)]) == 0
    rows = {r["tool"]: r for r in json.loads(capsys.readouterr().out)["results"]}
    p = rows["ping"]
    assert (p["quantity"], p["runs"], p["samples"]) == ("rtt_from_intended", 1, 20_000)
    assert p["quantities"] == ["rtt_from_intended", "rtt_from_send", "send_call"]
    assert p["percentiles_ns"] == docs["p"]["runs"][0]["percentiles_ns"]
    assert (rows["gap"]["quantity"], rows["gap"]["runs"]) == ("gap", 2)
    assert jtr(["ls", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:5] == ["started", "(UTC)", "tool", "CPUs", "quantity"]
    assert lines[1].split()[2:5] == ["ping", "0", "rtt_from_intended"]
    assert lines[2].split()[2:5] == ["gap", "0-1", "gap"]
    assert lines[3] == ("ping results also hold rtt_from_send, send_call: --quantity NAME "
                        "lists one of them")
    assert lines[-1] == "2 results"


def test_quantity_option(tmp_path, capsys):
    docs = _results(tmp_path)
    assert jtr(["ls", "--json", "--quantity", "send_call", str(tmp_path)]) == 0
    js = json.loads(capsys.readouterr().out)
    (row,) = js["results"]
    assert row["quantity"] == "send_call" and row["samples"] == 20_000
    assert row["percentiles_ns"] == docs["p"]["runs"][2]["percentiles_ns"]
    assert js["without_quantity"] == [str(tmp_path / "g")]
    assert jtr(["ls", "--quantity", "send_call", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "1 result; 1 without send_call left out"
    assert jtr(["ls", "--quantity", "rtt", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        "jtr ls: no result here has the quantity 'rtt'; they have gap, rtt_from_intended, "
        "rtt_from_send, send_call\n")
