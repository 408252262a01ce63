# SPDX-License-Identifier: GPL-2.0-only
"""jtr fleet in-process: the table, --json, -o, --fail-on-flagged, the rule's
options, and the errors."""
import json

from jtrpy.cli.main import main as jtr

from ..results.test_fleet import QUIET, gap, noisy, write


def _fleet(tmp_path):
    write(tmp_path / "f" / "a" / "gap", gap(lost_pct=1.0, causes=QUIET))
    write(tmp_path / "f" / "b" / "gap", gap(lost_pct=3.0, causes=noisy()))
    (tmp_path / "f" / "c").mkdir()
    return str(tmp_path / "f")


def test_table_json_and_page(tmp_path, capsys):
    f = _fleet(tmp_path)
    page = tmp_path / "fleet.html"
    assert jtr(["fleet", "-o", str(page), f]) == 0
    cap = capsys.readouterr()
    out = cap.out.splitlines()
    assert out[0].startswith("host  probe  CPUs") and out[-1] == "jtr fleet: %s" % page
    assert "flagged: b" in out and out[2].endswith("FLAGGED lost 3.0x: task preemption: "
                                                   "jtr-inject")
    assert cap.err == "jtr fleet: warning: %s/c: no jtr result in this host's folder; left " \
                      "out\n" % f
    assert page.read_text().startswith("<!DOCTYPE html>")
    assert jtr(["fleet", "--json", f]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["format"] == "jtr-fleet/1" and doc["flagged_hosts"] == ["b"]
    assert doc["hosts_without_results"] == [f + "/c"]
    assert doc["rule"]["metrics"] == ["lost", "p99.99"] and doc["rule"]["ratio"] == 2.0
    b = doc["rows"][1]
    assert (b["host"], b["tool"], b["cause"]["key"]) == ("b", "gap", "task preemption: "
                                                                     "jtr-inject")


def test_fail_on_flagged_and_the_rules_options(tmp_path, capsys):
    f = _fleet(tmp_path)
    assert jtr(["fleet", "--fail-on-flagged", f]) == 1
    # 3x and 2 points: under a 250 % rise, or a 2.5-point minimum
    assert jtr(["fleet", "--fail-on-flagged", "--min-rise", "250%", f]) == 0
    assert jtr(["fleet", "--fail-on-flagged", "--min-lost", "2.5", f]) == 0
    assert jtr(["fleet", "--fail-on-flagged", "--metrics", "p99,max", f]) == 0
    capsys.readouterr()
    assert jtr(["fleet", "--json", "--mad-k", "5", "--min-latency", "2us", f]) == 0
    rule = json.loads(capsys.readouterr().out)["rule"]
    assert (rule["k"], rule["min_latency_ns"]) == (5.0, 2000)


def test_errors_are_one_line(tmp_path, capsys):
    f = _fleet(tmp_path)
    for args, err in (
            ([], "jtr fleet: give the folders of the hosts' results (DIR/HOST/... or results "
                 "folders); see 'jtr fleet --help'\n"),
            (["-o", str(tmp_path / "no" / "x.html"), f],
             "jtr fleet: -o %s: no such folder %s\n" % (tmp_path / "no" / "x.html",
                                                       tmp_path / "no")),
            (["-o", str(tmp_path), f],
             "jtr fleet: -o %s: is a folder; give a file name, e.g. -o fleet.html\n" % tmp_path),
            (["--min-rise", "x", f], None),
            (["--metrics", "", f], None)):
        assert jtr(["fleet"] + args) == 2, args
        e = capsys.readouterr().err
        assert e.count("\n") == 1 and (err is None or e.endswith(err)), e
