# SPDX-License-Identifier: GPL-2.0-only
"""jtr run's gates: --max-latency, --max-lost and --junit are jtr run's own (never
handed to the probe, which has its own in gap and wake), their values checked
before anything runs."""
import os

import pytest

from jtrpy.commands import run
from jtrpy.errors import UsageError


def parse(args):
    return run.parse(run.make_parser("jtr run"), args)


def test_the_gates_are_taken_not_handed_to_the_probe(tmp_path):
    junit = str(tmp_path / "ci.xml")
    o = parse(["gap", "-d", "1", "--max-latency", "100us", "--max-lost=0.5%", "--junit",
               junit, "-f", "80"])
    assert (o.probe, o.max_latency, o.max_lost, o.junit) == ("gap", 100_000, 0.5, junit)
    assert o.probe_args == ["-d", "1", "-f", "80"]
    assert o.command == ["jtr", "run", "gap", "-d", "1", "--max-latency", "100us",
                         "--max-lost=0.5%", "--junit", junit, "-f", "80"]
    o = parse(["wake", "-d", "1", "--max-latency", "100us", "-f", "80"])
    assert (o.probe, o.max_latency, o.max_lost) == ("wake", 100_000, None)
    o = parse(["-d", "1"])
    assert (o.max_latency, o.max_lost, o.junit) == (None, None, None)
    assert parse(["--max-latency", "0"]).max_latency == 0
    assert parse(["--max-latency", "1h", "--max-lost", "100"]).max_lost == 100.0


@pytest.mark.parametrize("args, message", [
    (["--max-latency", "100"], None),       # a bare number is seconds, the grammar's rule
    (["--max-latency", "2h"], "--max-latency 2h: '2h' is out of range"),
    (["--max-latency", "fast"], "--max-latency fast: 'fast' is not a duration"),
    (["--max-lost", "101"], "--max-lost 101: '101' is out of range"),
    (["--max-lost", "-1"], "--max-lost -1: '-1' is not a percentage"),
    (["--junit"], "option '--junit' needs a value"),
])
def test_bad_values(args, message):
    if message is None:
        assert parse(args).max_latency == 100 * 10 ** 9
        return
    with pytest.raises(UsageError) as e:
        parse(args)
    assert message in str(e.value)


def test_the_junit_file_is_checked_before_the_run(tmp_path):
    cases = [
        (str(tmp_path), "a folder; give a file name in it, e.g. %s"
         % os.path.join(str(tmp_path), "jtr-junit.xml")),
        (str(tmp_path / "no" / "ci.xml"), "no folder %s; create it first" % (tmp_path / "no")),
        ("", "--junit '': give a file name"),
    ]
    for path, message in cases:
        with pytest.raises(UsageError) as e:
            parse(["--junit", path])
        assert message in str(e.value), path
    assert parse(["--junit", "ci.xml"]).junit == "ci.xml"     # the current folder


def test_help_shows_the_gates_with_an_example():
    text = run.make_parser("jtr run").format_help()
    for want in ("--max-latency DUR", "--max-lost PCT", "--junit FILE",
                 "--max-latency 50us --max-lost 0.1% --junit ci.xml", "Gates for CI"):
        assert want in text


@pytest.mark.parametrize("probe", ["wake", "ping", "pub"])
def test_time_lost_is_no_gate_of_a_latency(probe):
    """A latency probe's outliers overlap: --max-lost is refused, naming the gate
    that fits (the probe model's gates)."""
    with pytest.raises(UsageError, match="measures a latency, not time lost.*--max-latency"):
        parse([probe, "--max-lost", "1%"])
