"""jtr run's own options, and the rest handed to the probe as it is."""
import pytest

from jtrpy.commands import run
from jtrpy.errors import UsageError
from jtrpy.system.cpus import online_cpus


def parse(args):
    return run.parse(run.make_parser("jtr run"), args)


def test_own_options_are_taken_the_rest_goes_to_gap(capsys):
    cpu = str(online_cpus()[-1])
    o = parse(["-d", "5", "-c", cpu, "--slack", "2us", "-q", "--threshold=2us", "-f", "9"])
    assert o.slack == 2000 and o.cpu_text == cpu and o.output is None
    assert o.probe_args == ["-d", "5", "-q", "--threshold=2us", "-f", "9", "-c", cpu]
    o = parse(["--cpus=%s" % cpu, "--output=res", "--duration=3"])
    assert o.probe_args == ["--duration=3", "-c", cpu, "-o", "res"]
    assert o.cpu_text == cpu and o.output == "res"
    o = parse(["-o", "x", "--top", "5", "--cross-check-min", "5us", "--backend=perf"])
    assert (o.top, o.cross_check_min, o.backend) == (5, 5000, "perf")
    assert o.probe_args == ["-o", "x"] and o.cpu_text is None
    assert capsys.readouterr().err == ""


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
