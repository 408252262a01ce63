# SPDX-License-Identifier: GPL-2.0-only
"""jtr ab's command line: the probe after '--', its options passed on, one
profile; what they become for drivers/ab.py (whose ab_job refuses what makes no
sense for the probe: tests/drivers/test_ab.py)."""
import sys

import pytest

from jtrpy.cli.main import main as jtr
from jtrpy.commands import ab
from jtrpy.errors import UsageError


def parse(args):
    return ab.parse(ab.make_parser("jtr ab"), args)


def test_no_probe_is_gap():
    o = parse(["jtr-latency"])
    assert (o.probe, o.probe_args, o.duration_ns, o.quantity) == ("gap", [], None, None)
    o = parse(["jtr-latency", "-d", "500ms", "--repeat", "2"])
    assert (o.probe, o.duration_ns, o.repeat) == ("gap", 5 * 10 ** 8, 2)
    o = parse(["jtr-latency", "--", "gap", "-j", "1M"])
    assert o.probe_args == ["-j", "1M"] and o.duration_ns is None


def test_the_probe_and_its_options_after_the_separator():
    o = parse(["jtr-latency", "--repeat", "3", "--quantity", "rtt_from_send", "--pong-cpu",
               "0", "--", "ping", "-T", "udp", "-1", "-n", "20K", "-r", "10K", "--quantity"])
    assert o.profile == ["jtr-latency"] and o.repeat == 3 and o.probe == "ping"
    # everything after the probe is its own, even a word jtr ab also knows
    assert o.probe_args == ["-T", "udp", "-1", "-n", "20K", "-r", "10K", "--quantity"]
    assert (o.duration_ns, o.pong_cpu, o.quantity) == (None, [0], "rtt_from_send")
    o = parse(["jtr-latency", "--", "null", "-n", "500K", "-r", "1"])
    assert (o.probe, o.probe_args, o.duration_ns) == ("null", ["-n", "500K", "-r", "1"], None)
    assert parse(["jtr-latency", "--sub-cpu", "0", "--", "pub", "-n", "1K"]).sub_cpu == [0]


def test_the_options_become_the_jobs_settings():
    o = ab.options(parse(["jtr-isolate", "--cpus", "1", "-o", "x", "--no-trace",
                          "--accept-invalid", "--pong-cpu", "0", "--", "ping", "-n", "1K"]))
    assert o == {"profile": "jtr-isolate", "cpus": "1", "duration_ns": None, "repeat": 1,
                 "trace": False, "backend": "auto", "probe": "ping", "probe_args": ["-n", "1K"],
                 "pong_cpu": [0], "sub_cpu": None, "quantity": None, "accept_invalid": True,
                 "out": "x", "via_tuned": None, "app": None, "boot": False}
    # --no-tuned: jtr's own applier even where the tuned daemon runs
    assert ab.options(parse(["jtr-isolate", "--no-tuned"]))["via_tuned"] is False
    assert ab.options(parse(["jtr-isolate", "--boot"]))["boot"] is True
    # after the reboot, the folder alone: its record holds the rest
    assert ab.options(parse(["--resume", "d"])) == {"resume": "d"}
    with pytest.raises(UsageError, match="^--resume DIR goes on with the experiment in DIR"):
        ab.options(parse(["jtr-isolate", "--resume", "d"]))


@pytest.mark.parametrize("args, message", [
    (["p", "--"], r"^-- : give a probe after '--': one of gap, wake, null, send, ping, pub"),
    (["p", "--", "pong"], r"^-- pong: give a probe after '--'"),
    (["p", "ping", "-T", "udp"], r"^unknown option '-T'"),
    (["p", "ping"], r"^ping: put the probe after '--': jtr ab p \[OPTIONS\] -- ping"),
])
def test_what_is_not_jtr_abs_form_is_refused(args, message):
    with pytest.raises(UsageError, match=message):
        parse(args)


def test_app_after_the_dashes_is_parsed_as_jtr_run_app_parses_it():
    o = ab.options(parse(["jtr-isolate", "--", "app", "--func", "./a:f", "--threshold", "50us",
                          "--", "./a", "-x"]))
    assert o["probe"] == "app"
    assert {k: o["app"][k] for k in ("func", "cmd", "threshold_ns", "pid")} == {
        "func": "./a:f", "cmd": ["./a", "-x"], "threshold_ns": 50_000, "pid": None}
    with pytest.raises(UsageError, match="give the process with --pid PID"):
        parse(["jtr-isolate", "--", "app", "--func", "./a:f"])


@pytest.mark.parametrize("args, message", [
    ([], "give the profile to test, e.g. 'jtr ab jtr-latency'; see 'jtr tune list'"),
    (["p", "q"], "give one profile; 'q' is one too many"),
])
def test_one_profile(args, message):
    with pytest.raises(UsageError) as e:
        ab.options(parse(args))
    assert str(e.value) == message


def test_the_command_hands_its_settings_to_the_job(monkeypatch, capsys):
    got = []

    def job(o, say, note, progress):
        got.append(o)
        assert progress.prog == "jtr ab" and progress.stream is sys.stderr
        say("[12:00:00] run 1 of 2: a-1 (baseline)")
        note("jtr ab: interrupted; comparing what was measured")
        say("results: x")
        return 7
    monkeypatch.setattr(ab, "ab_job", job)
    assert jtr(["ab", "jtr-latency", "-d", "2s"]) == 7
    assert got[0]["profile"] == "jtr-latency" and got[0]["duration_ns"] == 2 * 10 ** 9
    # the lines due while it works: say's on stdout, note's on stderr
    assert capsys.readouterr() == ("[12:00:00] run 1 of 2: a-1 (baseline)\nresults: x\n",
                                   "jtr ab: interrupted; comparing what was measured\n")
    assert jtr(["ab", "jtr-latency", "jtr-isolate"]) == 2 and len(got) == 1
    assert capsys.readouterr().err == "jtr ab: give one profile; 'jtr-isolate' is one too many\n"


def test_help_shows_the_probe_form(capsys):
    with pytest.raises(SystemExit):
        parse(["--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: jtr ab PROFILE [OPTIONS] [-- PROBE [PROBE OPTIONS]]")
    for want in ("--quantity NAME", "--pong-cpu CPU", "--sub-cpu CPU",
                 "-- ping -T udp -1 -n 20K -r 10K"):
        assert want in out
