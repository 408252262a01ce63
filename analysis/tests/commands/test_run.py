# SPDX-License-Identifier: GPL-2.0-only
"""jtr run's own options, and the rest handed to the probe as it is; what it
prints of a run (a stand-in jtr-gap: tests/drivers/test_run.py). The job's
checks: tests/drivers/test_run.py."""
import pytest

from jtrpy.cli.main import main as jtr
from jtrpy.commands import run
from jtrpy.errors import EXIT_FAILED, UsageError
from jtrpy.system.cpus import online_cpus

from ..drivers import test_run as jobs

gap = jobs.gap      # fixture: a stand-in jtr-gap writing a one-CPU result


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
    assert o.probe == "ping" and o.pong_cpu == [cpu]
    assert o.probe_args == ["-T", "udp", "-1", "-a", "1", "-r", "10K", "-o", "x"]
    assert parse(["pub", "--sub-cpu", str(cpu)]).sub_cpu == [cpu]


def test_the_options_become_the_jobs_settings():
    cpu = online_cpus()[-1]
    o = run.options(parse(["ping", "-c", str(cpu), "--pong-cpu", str(cpu), "--by", "pid",
                           "--trace-buffer", "1M", "--drain-interval", "5ms", "--cross-check",
                           "--cross-check-min", "3us", "--max-latency", "1ms", "-T", "udp"]))
    assert o == {"probe": "ping", "probe_args": ["-T", "udp"], "cpus": [cpu],
                 "pong_cpu": [cpu], "sub_cpu": None, "partner_netns": None, "trace": True,
                 "trace_buffer": 1 << 20, "drain_interval": 5 * 10 ** 6, "backend": "auto",
                 "slack_ns": None, "top": None, "split": True, "cross_check": {"min_ns": 3000},
                 "gates": (10 ** 6, None), "junit": None,
                 "command": "jtr run ping -c %d --pong-cpu %d --by pid --trace-buffer 1M "
                            "--drain-interval 5ms --cross-check --cross-check-min 3us "
                            "--max-latency 1ms -T udp" % (cpu, cpu)}
    o = run.options(parse(["--no-trace"]))
    assert (o["trace"], o["cross_check"], o["split"], o["gates"]) == (
        False, None, False, (None, None))


@pytest.mark.parametrize("args, message", [
    (["--cross-check-min", "5us"],
     "--cross-check-min goes with --cross-check; see 'jtr run --help'"),
    (["--cross-check", "--no-trace"],
     "--cross-check compares the attribution with perf: it needs tracing, drop --no-trace"),
])
def test_cross_check_options_that_do_not_go_together(args, message):
    with pytest.raises(UsageError) as e:
        run.options(parse(args))
    assert str(e.value) == message


@pytest.mark.parametrize("args, message", [
    (["wobble"], "wobble: not a probe jtr run knows; give one of gap, wake, null, send, ping, pub"),
    (["gap", "--partner-netns", "x"],
     "--partner-netns goes with ping and pub: gap has no other end"),
    (["--no-trace", "--slack", "2us", "--top=3"],
     "--slack and --top have no effect with --no-trace"),
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


def test_a_gated_run_prints_its_headline_its_gates_and_the_failures_last(gap, tmp_path,
                                                                        capsys):
    tmp, _ = gap
    junit = tmp_path / "ci.xml"
    rc = jtr(["run", "--no-trace", "-c", str(online_cpus()[-1]), "-o", str(tmp / "r"),
              "--max-latency", "1us", "--junit", str(junit)])
    assert rc == EXIT_FAILED and junit.exists()
    cap = capsys.readouterr()
    out = cap.out.splitlines()
    # the stand-in probe prints nothing: jtr run's lines alone, the headline first
    assert out[0].startswith("jtr gap: CPU 1, ") and out[2].startswith("  cpu1 ")
    i = out.index("  causes: not attributed: tracing was switched off (--no-trace)")
    assert out[i + 1:i + 4] == ["", "gates:", "  max-latency cpu 1: FAILED: max 12.0 us > "
                                              "limit 1us"]
    assert out[-1] == "junit: %s" % junit
    assert cap.err.splitlines()[-1].startswith(
        "jtr run: gate max-latency cpu 1 failed: max 12.0 us > limit 1us; causes not "
        "measured: tracing was switched off (--no-trace)")


def test_a_probe_that_refuses_its_options_prints_nothing_more(gap, tmp_path, capsys,
                                                               monkeypatch):
    tmp, _ = gap
    monkeypatch.setenv("FAKE_RC", "2")
    assert jtr(["run", "--no-trace", "-o", str(tmp / "r"), "--junit",
                str(tmp_path / "ci.xml")]) == 2
    assert capsys.readouterr().out == "" and not (tmp_path / "ci.xml").exists()
