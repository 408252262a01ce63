# SPDX-License-Identifier: GPL-2.0-only
"""jtr ab's command line: the probe after '--', its options passed on, and what
makes no sense for a probe refused with the reason, before anything is applied."""
import pytest

from jtrpy.commands import ab
from jtrpy.errors import UsageError


def parse(args):
    return ab.parse(ab.make_parser("jtr ab"), args)


def test_no_probe_is_gap_for_ten_seconds():
    o = parse(["jtr-latency"])
    assert (o.probe, o.probe_args, o.duration_ns, o.quantity) == ("gap", [], 10 ** 10, None)
    o = parse(["jtr-latency", "-d", "500ms", "--repeat", "2"])
    assert (o.probe, o.duration_ns, o.repeat) == ("gap", 5 * 10 ** 8, 2)
    # gap's own length stands instead of jtr ab's default
    o = parse(["jtr-latency", "--", "gap", "-j", "1M"])
    assert o.probe_args == ["-j", "1M"] and o.duration_ns is None


def test_the_probe_and_its_options_after_the_separator():
    o = parse(["jtr-latency", "--repeat", "3", "--quantity", "rtt_from_send", "--pong-cpu",
               "0", "--", "ping", "-T", "udp", "-1", "-n", "20K", "-r", "10K", "--quantity"])
    assert o.profile == ["jtr-latency"] and o.repeat == 3 and o.probe == "ping"
    # everything after the probe is its own, even a word jtr ab also knows
    assert o.probe_args == ["-T", "udp", "-1", "-n", "20K", "-r", "10K", "--quantity"]
    assert (o.duration_ns, o.partner_cpu, o.quantity) == (None, 0, "rtt_from_send")
    o = parse(["jtr-latency", "--", "null", "-n", "500K", "-r", "1"])
    assert (o.probe, o.probe_args, o.duration_ns) == ("null", ["-n", "500K", "-r", "1"], None)
    assert parse(["jtr-latency", "--sub-cpu", "0", "--", "pub", "-n", "1K"]).partner_cpu == 0


@pytest.mark.parametrize("args, message", [
    (["p", "--"], r"^-- : give a probe after '--': one of gap, wake, null, send, ping, pub"),
    (["p", "--", "pong"], r"^-- pong: give a probe after '--'"),
    (["p", "ping", "-T", "udp"], r"^unknown option '-T'"),
    (["p", "ping"], r"^ping: put the probe after '--': jtr ab p \[OPTIONS\] -- ping"),
    (["p", "-d", "5", "--", "ping", "-n", "1K"],
     r"^-d: ping's own options set its length \(-n messages, -r rate\), not a duration; "
     r"give them after '-- ping'"),
    (["p", "-d", "5", "--", "null"], r"^-d: null's own options set its length \(-n samples "
     r"a run, --runs runs\)"),
    (["p", "-d", "5", "--", "gap", "-d", "3"], r"^-d and gap's -d both set the length"),
    (["p", "-d", "5", "--", "gap", "--loops", "1M"], r"^-d and gap's -n both set"),
    (["p", "--", "gap", "-o", "x"], r"^-o in gap's options: jtr ab chooses each run's folder"),
    (["p", "--", "ping", "--output=x"], r"^-o in ping's options"),
    (["p", "--pong-cpu", "0", "--", "pub"], r"^--pong-cpu: pub has no jtr pong to place "
     r"\(it goes with ping\)"),
    (["p", "--sub-cpu", "0"], r"^--sub-cpu: gap has no jtr sub to place \(it goes with pub\)"),
    (["p", "--pong-cpu", "0-1", "--", "ping"], r"^--pong-cpu 0-1: give one CPU"),
    (["p", "--quantity", "gap", "--", "ping"],
     r"^--quantity gap: ping results have rtt_from_intended, rtt_from_send, send_call$"),
    (["p", "--quantity", "rtt_from_send", "--", "pub"],
     r"^--quantity rtt_from_send: sub results have latency_from_send, latency_from_intended$"),
    (["p", "--quantity", "send_call"], r"^--quantity send_call: gap results have gap$"),
    (["p", "--cpus", "0", "--", "ping", "-a", "1"], r"-c 0 and -a 1 both say where ping runs"),
])
def test_what_makes_no_sense_is_refused(args, message):
    with pytest.raises(UsageError, match=message):
        parse(args)


def test_help_shows_the_probe_form(capsys):
    with pytest.raises(SystemExit):
        parse(["--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: jtr ab PROFILE [OPTIONS] [-- PROBE [PROBE OPTIONS]]")
    for want in ("--quantity NAME", "--pong-cpu CPU", "--sub-cpu CPU",
                 "-- ping -T udp -1 -n 20K -r 10K"):
        assert want in out
