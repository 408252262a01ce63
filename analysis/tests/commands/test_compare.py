# SPDX-License-Identifier: GPL-2.0-only
"""jtr compare's options and what it prints and writes, in-process."""
import json
import os

import pytest

from jtrpy.cli.main import main as jtr
from jtrpy.commands import compare
from jtrpy.errors import UsageError

from ..synthetic import loops, make_result, make_run


def parse(args):
    return compare.make_parser("jtr compare").parse_args(args)


def main(args):
    return jtr(["compare"] + args)


@pytest.mark.parametrize("args,match", [
    (["a"], "give two results"),
    (["a", "b", "c"], "give two results"),
    (["--confidence", "100", "a", "b"],
     r"--confidence 100: '100' is out of range; expected 50-99\.99 \(a percentage\)"),
    (["--confidence", "49.9", "a", "b"], r"expected 50-99\.99 \(a percentage\)"),
    (["--confidence", "high", "a", "b"], "--confidence high: 'high' is not a percentage"),
    (["--confidence"], "option '--confidence' needs a value"),
    (["--resamples", "10", "a", "b"],
     r"--resamples 10: '10' is out of range; expected 100\.\.100000"),
    (["--seed", "-1", "a", "b"], "--seed -1: '-1' is not a count"),
    (["--seed=x", "a", "b"], "--seed x: 'x' is not a count"),
    (["--bogus", "a", "b"], "unknown option '--bogus'; see 'jtr compare --help'"),
    (["--min-effect", "soon", "a", "b"], "--min-effect soon"),
    (["--min-effect-pct", "1001", "a", "b"], r"--min-effect-pct 1001: .*expected 0-1000"),
])
def test_bad_arguments(args, match):
    with pytest.raises(UsageError, match=match):
        compare.run(parse(args))


def test_arguments():
    opts = parse(["--confidence", "99.5", "--resamples", "500", "--seed", "3", "--json",
                  "-o", "x.json", "A", "B"])
    assert opts.results == ["A", "B"]
    assert (opts.confidence, opts.resamples, opts.seed, opts.json, opts.output) == \
        (99.5, 500, 3, True, "x.json")
    assert parse(["--seed=3", "--confidence=90", "A", "B"]).seed == 3     # --opt=value
    o = parse(["A", "B"])
    assert (o.min_effect, o.min_effect_pct) == (100, 10.0)
    o = parse(["--min-effect", "1.5us", "--min-effect-pct", "0", "A", "B"])
    assert (o.min_effect, o.min_effect_pct) == (1500, 0.0)


def test_main_writes_json_and_prints_the_table(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    for d, seed, tail in ((a, 1, 1.0), (b, 2, 1.3)):
        d.mkdir()
        (d / "result.json").write_text(json.dumps(make_result(make_run(
            loops(seed, n=300_000, tail=tail)))))
    out = tmp_path / "cmp.json"
    assert main(["-o", str(out), str(a), str(b)]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0].startswith("A: %s  (gap, CPU 0, gap: 1 run, " % a)
    assert "95 % CI of B-A" in text and text.rstrip().splitlines()[-1].startswith("verdict: ")
    saved = json.loads(out.read_text())
    assert saved["format"] == "jtr-compare/1" and saved["verdict"] in text
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".")]   # no temp file left
    assert main(["--json", str(a), str(b)]) == 0
    assert json.loads(capsys.readouterr().out) == saved
    assert main([str(a), str(b / "result.json")]) == 0     # a folder or its result.json
    assert "B: %s  (gap" % (b / "result.json") in capsys.readouterr().out
    assert main(["-o", str(tmp_path / "no" / "such.json"), str(a), str(b)]) == 2
    assert "-o %s: cannot write there" % (tmp_path / "no" / "such.json") in \
        capsys.readouterr().err
    assert main([str(a), str(tmp_path / "missing")]) == 2
    assert "no such result" in capsys.readouterr().err


def test_help_names_the_options_and_examples(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for want in ("usage: jtr compare", "--confidence PCT", "--resamples N", "--seed N",
                 "--json", "-o, --output FILE", "examples:", "jtr compare before after"):
        assert want in out




def test_quantity_and_mixed_quantities(tmp_path, capsys):
    runs = [make_run(loops(s, n=50_000), name=n) for s, n in
            ((1, "rtt_from_intended"), (2, "rtt_from_send"), (3, "send_call"))]
    for name, doc in (("p", make_result(*runs, tool="ping")),
                      ("g", make_result(make_run(loops(4, n=50_000))))):
        (tmp_path / name).mkdir()
        (tmp_path / name / "result.json").write_text(json.dumps(doc))
    p, g = str(tmp_path / "p"), str(tmp_path / "g")
    assert main(["--resamples", "100", p, p]) == 0
    out = capsys.readouterr().out
    assert "(ping, CPU 0, rtt_from_intended: 1 run, 0.00 s, 50000 samples)" in out
    assert main(["--resamples", "100", "--quantity", "send_call", "--json", p, p]) == 0
    assert json.loads(capsys.readouterr().out)["a"]["quantity"] == "send_call"
    assert main(["--quantity", "gap", p, g]) == 2
    err = capsys.readouterr().err
    assert err == "jtr compare: %s: no quantity 'gap' in this ping result; it has " \
                  "rtt_from_intended, rtt_from_send, send_call\n" % p
    assert main([p, g]) == 2
    assert "differ in quantity (rtt_from_intended vs gap)" in capsys.readouterr().err
    assert main(["--resamples", "100", "--mixed-quantities", p, g]) == 0
    assert "warning: A (%s) and B (%s) differ in quantity" % (p, g) in capsys.readouterr().out
    assert main(["--quantity=", p, p]) == 2
    assert "--quantity '': give a name" in capsys.readouterr().err
