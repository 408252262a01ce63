# SPDX-License-Identifier: GPL-2.0-only
"""cli.parser: the option types, jtr's error lines and the help layout; the
callbacks commands hand their jobs for the lines due while they work."""
import sys

import pytest

from jtrpy.cli.parser import (
    Choice,
    Count,
    CpuList,
    Duration,
    Int,
    JtrParser,
    Listen,
    Percent,
    Size,
    Words,
    note,
    say,
)
from jtrpy.errors import UsageError


def parser():
    p = JtrParser("jtr demo", usage="%(prog)s [OPTIONS] THING", description="A demo.",
                  notes="Some notes.", examples="  jtr demo -d 5 x")
    p.add_argument("-d", "--duration", metavar="DUR", type=Duration(10 ** 6, 3600 * 10 ** 9))
    p.add_argument("--pause", metavar="DUR", type=Duration(0, 10 ** 10, legacy_unit="ns"))
    p.add_argument("-n", "--count", metavar="N", type=Count(1, 10 ** 9))
    p.add_argument("-r", "--rate", metavar="RATE", type=Count(1, 10 ** 9, word="max"))
    p.add_argument("--size", metavar="SIZE", type=Size(1, 1 << 30))
    p.add_argument("--pct", metavar="PCT", type=Percent(0.1, 50))
    p.add_argument("--prio", metavar="PRIO", type=Int(1, 99))
    p.add_argument("-c", "--cpus", metavar="LIST", type=CpuList(lambda: [0, 1]))
    p.add_argument("--kind", metavar="KIND", type=Choice("shm", "udp"))
    p.add_argument("--only", metavar="LIST", type=Words(("a", "b")))
    p.add_argument("-q", "--quiet", action="store_true", help="say less")
    p.add_operands("things", "THING", "what to do it to")
    return p


def parse(*args):
    return parser().parse_args(list(args))


def test_values_in_the_one_grammar(capsys):
    o = parse("-d", "10", "--pause=898ns", "-n", "2M", "--size", "64K", "--pct", "5%",
              "--prio", "0x10", "-c", "0-1", "--kind", "udp", "--only", "b,a", "x", "y")
    assert (o.duration, o.pause, o.count, o.size, o.pct, o.prio) == \
        (10 ** 10, 898, 2 * 10 ** 6, 65536, 5.0, 16)
    assert (o.cpus, o.kind, o.only, o.things) == ([0, 1], "udp", ["b", "a"], ["x", "y"])
    assert parse("-d1.5ms").duration == 1_500_000         # attached value
    assert parse("--duration=2m").duration == 120 * 10 ** 9
    assert (parse("-r", "max").rate, parse("-r", "50K").rate) == ("max", 50000)
    assert capsys.readouterr().err == ""


def test_a_bare_number_in_an_older_unit_warns(capsys):
    assert parse("--pause", "898").pause == 898
    assert capsys.readouterr().err == (
        "jtr demo: warning: --pause 898: a bare number here still means ns (as before); write "
        "898ns \u2014 a bare duration is in seconds everywhere else in jtr, and will be here in "
        "a later version\n")
    assert parse("--pause", "0").pause == 0 and capsys.readouterr().err == ""


@pytest.mark.parametrize("args, message", [
    (["-d", "abc"], "-d abc: 'abc' is not a duration; expected a number with an optional unit "
                    "ns, us, ms, s, m or h, such as 10us, 500ms or 2m (a bare number is in "
                    "seconds)"),
    (["-d", "2h"], "-d 2h: '2h' is out of range; expected 1ms to 1h"),
    (["--pause", "1e9"], "--pause 1e9: '1e9' is not a duration; expected a number with an "
                         "optional unit ns, us, ms, s, m or h, such as 10us, 500ms or 2m (a bare "
                         "number here is in ns)"),
    (["--pause", "20000000000"], "--pause 20000000000: '20000000000' is out of range; "
                                  "expected 0 to 10s"),
    (["-d", "1e3"], "-d 1e3: '1e3' is not a duration"),
    (["-n", "0"], "-n 0: '0' is out of range; expected 1..1000000000"),
    (["-n", "-5"], "-n -5: '-5' is not a count"),
    (["-n", "max"], "-n max: 'max' is not a count"),
    (["-r", "0"], "-r 0: '0' is out of range; expected 1..1000000000"),
    (["-r", "Max"], "-r Max: 'Max' is not a count"),
    (["--size", "1T"], "--size 1T: '1T' is not a size"),
    (["--pct", "90"], "--pct 90: '90' is out of range; expected 0.1-50 (a percentage)"),
    (["--prio", "100"], "--prio 100: '100' is out of range; expected 1..99"),
    (["-c", "3"], "-c 3: CPU 3 is not online; online CPUs: 0-1"),
    (["-c", "1-0"], "-c 1-0: '1-0' is not a CPU list: range 1-0 ends before it starts"),
    (["--kind", "tcp"], "--kind tcp: use shm or udp"),
    (["--only", "a,c"], "--only a,c: use some of a,b, comma-separated"),
    (["--bogus"], "unknown option '--bogus'; see 'jtr demo --help'"),
    (["--bogus=3"], "unknown option '--bogus'; see 'jtr demo --help'"),
    (["--dur", "5"], "unknown option '--dur'"),            # no abbreviations
    (["-n"], "option '-n' needs a value"),
    (["--quiet=3"], "option '--quiet' takes no value ('3' given)"),
])
def test_errors_name_the_option_the_value_and_the_fix(args, message):
    with pytest.raises(UsageError) as e:
        parse(*args)
    assert str(e.value) == message or str(e.value).startswith(message), str(e.value)


def test_help_layout_is_the_c_programs(capsys):
    with pytest.raises(SystemExit) as e:
        parse("--help")
    assert e.value.code == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "usage: jtr demo [OPTIONS] THING"
    assert lines[1:3] == ["", "A demo."]
    assert "options:" in lines and "arguments:" in lines and "examples:" in lines
    assert "  -d, --duration DUR" in out                   # short and long together
    assert "      --pause DUR" in out                      # long-only under the long names
    assert "  -h, --help" in out and "this text" in out
    assert out.index("Some notes.") < out.index("examples:\n  jtr demo -d 5 x")


def test_an_option_takes_the_next_word_whatever_it_is():
    """As getopt does for the C programs: `--pub '--slots 64'`, `-x -1`."""
    p = JtrParser("jtr demo")
    p.add_argument("--pub", metavar="OPTS")
    p.add_argument("-x", metavar="N", type=Int(-5, 5))
    p.add_argument("-q", action="store_true")
    o = p.parse_args(["--pub", "--slots 64", "-x", "-1", "-q"])
    assert (o.pub, o.x, o.q) == ("--slots 64", -1, True)
    assert p.parse_args(["--pub=-b"]).pub == "-b"
    # a flag is not given the next word, and after -- nothing is an option
    o, rest = p.parse_known_args(["-q", "--pub", "-q", "--", "--pub", "x"])
    assert (o.q, o.pub, rest) == (True, "-q", ["--", "--pub", "x"])
    with pytest.raises(UsageError, match="option '--pub' needs a value"):
        p.parse_args(["--pub"])


@pytest.mark.parametrize("text, want", [
    ("127.0.0.1:9477", ("127.0.0.1", 9477)), (":9477", ("0.0.0.0", 9477)),
    ("9477", ("0.0.0.0", 9477)), ("[::1]:80", ("::1", 80)), ("host.example:1", ("host.example", 1)),
])
def test_listen_addresses(text, want):
    assert Listen()(text) == want


@pytest.mark.parametrize("text", ["", "nope", ":0", ":65536", "1.2.3.4:", "a:b:c", "[::1]"])
def test_listen_refuses(text):
    with pytest.raises(UsageError, match="give ADDR:PORT"):
        Listen()(text)


@pytest.mark.parametrize("text, shown", [
    ("\udcff:9999", "'\\xff' is not an address"), ("a\nb:1", "'a\\nb' is not an address"),
    ("h st:80", "'h st' is not an address"),
])
def test_listen_refuses_what_is_no_host_name(text, shown):
    """A byte that is not UTF-8 (a surrogate here) or a control character in the
    address: refused, shown escaped (it reached getaddrinfo: UnicodeError, idna)."""
    with pytest.raises(UsageError) as e:
        Listen()(text)
    assert str(e.value).startswith(shown) and "\n" not in str(e.value)


def test_say_is_seen_at_once_and_note_comes_after_what_stdout_holds(monkeypatch):
    events = []

    class Stream:
        def __init__(self, name):
            self.name = name

        def write(self, text):
            events.append((self.name, text))

        def flush(self):
            events.append((self.name, "flush"))
    monkeypatch.setattr(sys, "stdout", Stream("out"))
    monkeypatch.setattr(sys, "stderr", Stream("err"))
    say("[12:00:00] applied p")
    note("jtr ab: interrupted")
    assert [e for e in events if e[1] != "\n"] == [
        ("out", "[12:00:00] applied p"), ("out", "flush"), ("out", "flush"),
        ("err", "jtr ab: interrupted")]
    assert "".join(t for n, t in events if n == "err" and t != "flush") == \
        "jtr ab: interrupted\n"
