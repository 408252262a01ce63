# SPDX-License-Identifier: GPL-2.0-only
"""jtr gap and jtr wake given a gate: the gate options are the front end's (the
probe never sees them), anywhere on the line, checked before the probe runs;
jtr wake refuses --max-lost; the hint says how to get the causes."""
import pytest

from jtrpy.cli import main
from jtrpy.commands import probe
from jtrpy.errors import UsageError


def parse(name, args):
    return probe.parse(probe.make_parser("jtr " + name), args)


def test_the_gates_are_taken_the_rest_goes_to_the_probe(tmp_path):
    xml = str(tmp_path / "ci.xml")
    o = parse("gap", ["-c", "1", "--max-latency", "50us", "-d", "2", "--max-lost=0.5%",
                      "--junit", xml, "-q"])
    assert (o.probe, o.max_latency, o.max_lost, o.junit) == ("gap", 50_000, 0.5, xml)
    assert o.probe_args == ["-c", "1", "-d", "2", "-q"] and o.quiet
    assert o.command == "jtr gap -c 1 --max-latency 50us -d 2 --max-lost=0.5%% --junit %s " \
        "-q" % xml
    o = parse("wake", ["-f", "80", "--max-latency", "1h"])
    assert o.probe_args == ["-f", "80"] and not o.quiet and o.max_lost is None


def test_wake_has_no_time_lost_and_bad_values_are_refused(tmp_path):
    with pytest.raises(UsageError) as e:
        parse("wake", ["--max-lost", "1"])
    assert str(e.value) == ("--max-lost: a wake-up's latency is no CPU time lost (the "
                            "probe sleeps between wake-ups); gate it with --max-latency")
    assert parse("gap", ["--max-lost", "1"]).max_lost == 1.0
    for args, message in ((["--max-latency", "x"], "--max-latency x: 'x' is not a duration"),
                          (["--junit", str(tmp_path / "no" / "x.xml")], "no folder %s"
                           % (tmp_path / "no"))):
        with pytest.raises(UsageError) as e:
            parse("gap", args)
        assert message in str(e.value)


def test_the_hint_names_the_limits_as_given():
    o = parse("gap", ["--max-latency", "1ns", "--max-lost", "100"])
    assert probe.hint(o) == "'jtr run gap ... --max-latency 1ns --max-lost 100%' (as root) " \
        "names them"
    assert probe.hint(parse("wake", ["--max-latency", "100us"])) == \
        "'jtr run wake ... --max-latency 100us' (as root) names them"


@pytest.mark.parametrize("name, args, gated", [
    ("gap", ["-d", "1", "--max-latency", "1ms"], True),
    ("wake", ["--junit=ci.xml"], True),
    ("gap", ["-d", "1"], False),                            # exec, as ever
    ("gap", ["--max-latency", "1ms", "--help"], False),     # the probe's own help
    ("gap", ["--", "--max-latency"], False),                # past the options
    ("null", ["--max-latency", "1ms"], False),              # no gates alone: its own error
    ("gap", ["--max-outliers", "5"], False),
])
def test_the_dispatcher_runs_a_gated_probe_through_the_front_end(name, args, gated):
    assert main.wants_gates(name, args) is gated
