# SPDX-License-Identifier: GPL-2.0-only
"""jtr run's own options, and the rest handed to the probe as it is."""
import pytest

from jtrpy.commands import run
from jtrpy.errors import UsageError
from jtrpy.system.cpus import online_cpus


def parse(args):
    return run.parse(run.make_parser("jtr run"), args)


def test_own_options_are_taken_the_rest_goes_to_gap(capsys):
    cpu = online_cpus()[-1]
    o = parse(["-d", "5", "-c", str(cpu), "--slack", "2us", "-q", "--threshold=2us", "-f", "9"])
    assert o.slack == 2000 and o.cpus == [cpu] and o.output is None and o.probe == "gap"
    assert o.probe_args == ["-d", "5", "-q", "--threshold=2us", "-f", "9"]
    o = parse(["--cpus=%s" % cpu, "--output=res", "--duration=3"])
    assert o.probe_args == ["--duration=3", "-o", "res"]
    assert o.cpus == [cpu] and o.output == "res"
    o = parse(["-o", "x", "--top", "5", "--cross-check-min", "5us", "--backend=perf"])
    assert (o.top, o.cross_check_min, o.backend) == (5, 5000, "perf")
    assert o.probe_args == ["-o", "x"] and o.cpus is None
    assert capsys.readouterr().err == ""


def test_a_probe_first_and_its_options_anywhere():
    cpu = online_cpus()[0]
    o = parse(["ping", "-T", "udp", "-1", "--pong-cpu", str(cpu), "-a", "1", "-r", "10K",
               "-o", "x"])
    assert o.probe == "ping" and o.partner_cpu == cpu
    assert o.probe_args == ["-T", "udp", "-1", "-a", "1", "-r", "10K", "-o", "x"]
    assert parse(["pub", "--sub-cpu", str(cpu)]).partner_cpu == cpu


@pytest.mark.parametrize("args, message", [
    (["wobble"], "wobble: not a probe jtr run knows; give one of gap, wake, null, send, ping, pub"),
    (["gap", "--pong-cpu", "0"], "--pong-cpu: gap has no jtr pong to place (it goes with ping)"),
    (["ping", "--sub-cpu", "0"], "--sub-cpu: ping has no jtr sub to place (it goes with pub)"),
])
def test_bad_probe_lines(args, message):
    with pytest.raises(UsageError) as e:
        parse(args)
    assert message in str(e.value)


def test_a_bare_slack_is_still_microseconds_with_a_warning(capsys):
    assert parse(["--slack", "2"]).slack == 2000
    err = capsys.readouterr().err
    assert err.startswith("jtr run: warning: --slack 2: a bare number here still means us")
    assert "write 2us" in err


@pytest.mark.parametrize("args, message", [
    (["-c", "999"], "-c 999: CPU 999 is not online; online CPUs: "),
    (["--backend", "dtrace"], "--backend dtrace: use ebpf, perf or auto"),
    (["--slack", "x"], "--slack x: 'x' is not a duration"),
    (["--trace-buffer", "1"], "--trace-buffer 1: '1' is out of range"),
    (["--drain-interval", "20s"],
     "--drain-interval 20s: '20s' is out of range; expected 1ms to 10s"),
    (["--top"], "option '--top' needs a value"),
])
def test_bad_options(args, message):
    with pytest.raises(UsageError) as e:
        parse(args)
    assert message in str(e.value)
