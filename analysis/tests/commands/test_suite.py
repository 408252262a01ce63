# SPDX-License-Identifier: GPL-2.0-only
"""jtr suite's options in-process: what they become for drivers/suite.py (the
run itself is a stand-in here), and the words it refuses; then what it prints
of a suite run with the stand-in probes of tests/drivers/test_suite.py."""
import pytest

from jtrpy.cli.main import main as jtr
from jtrpy.commands import suite as command
from jtrpy.errors import EXIT_INTERRUPTED
from jtrpy.render.suite import headline
from jtrpy.vocab import TRANSPORTS

from ..drivers import test_suite as jobs

fakes = jobs.fakes      # fixture: stand-in probes that write a result, fail or stop early


@pytest.fixture
def ran(monkeypatch):
    got = []
    monkeypatch.setattr(command, "suite_job", lambda o, cmd, planned, progress: got.append(
        (o, cmd)) or jobs.S.Outcome("s", 0, 0, 0, False, 0))
    return got


def test_options_become_the_drivers(ran):
    assert jtr(["suite", "--quick", "-n", "500000", "-r", "4", "--cpus", "0", "-d", "2s",
                "--only", "null,send-udp", "--transports", "udp,tcp", "-o", "s"]) == 0
    ((o, cmd),) = ran
    assert o == {"quick": True, "out": "s", "cpus": [0], "samples": 500000, "runs": 4,
                 "gap_ns": 2 * 10**9, "transports": ["udp", "tcp"],
                 "only": ["null", "send-udp"]}
    assert cmd == ["jtr suite", "--quick", "-n", "500000", "-r", "4", "--cpus", "0", "-d",
                   "2s", "--only", "null,send-udp", "--transports", "udp,tcp", "-o", "s"]


def test_defaults(ran):
    assert jtr(["suite"]) == 0
    assert ran[0][0] == {"quick": False, "out": None, "cpus": None, "samples": None,
                         "runs": None, "gap_ns": None, "transports": list(TRANSPORTS),
                         "only": None}


@pytest.mark.parametrize("args,word", [
    (["--only", "null,nope"], "nope"), (["--only", "send-nope"], "send-nope"),
    (["--transports", "pigeon"], "pigeon"), (["-r", "51"], "51"), (["-d", "1ms"], "1ms"),
])
def test_words_it_refuses(ran, capsys, args, word):
    assert jtr(["suite"] + args) == 2
    err = capsys.readouterr().err
    assert err.startswith("jtr suite: ") and word in err and err.count("\n") == 1
    assert ran == []


def test_a_suite_says_what_it_runs_each_item_and_the_end(fakes, tmp_path, monkeypatch,
                                                          capsys):
    monkeypatch.setenv("FAKE_CLOCK", "fail")
    monkeypatch.setenv("FAKE_GAP", "partial")
    out = tmp_path / "s"
    assert jtr(["suite", "--only", "null,clock,gap,send-udp", "-o", str(out)]) == 1
    lines = capsys.readouterr().out.splitlines()
    head = headline(jobs.S.item_figures(str(out / "null")))
    assert lines[0] == "suite: %s: 4 items (null, clock, gap, send-udp)" % out
    assert lines[1] == ("suite: 1/4 null: jtr null -n 2M --runs 3 -c 3 --desc null -q -o %s"
                        % (out / "null"))
    assert lines[2].startswith("suite: 1/4 null: done in ") and lines[2].endswith(": " + head)
    assert lines[4] == "suite: 2/4 clock: failed (exit 1): jtr clock: failed: no such clock"
    assert lines[6].startswith("suite: 3/4 gap: interrupted after ")
    assert lines[6].endswith("; kept what it measured (%s)" % head)
    assert lines[7].startswith("suite: 4/4 send-udp: jtr send -T udp ")
    assert lines[-1] == ("suite: %s: 2 of 4 items done, 1 failed; 'jtr report %s' draws them"
                         % (out, out))
    assert len(lines) == 10


def test_skipped_sends_are_said_after_the_plan(fakes, tmp_path, capsys):
    (tmp_path / "bin" / "jtr-send").unlink()
    out = tmp_path / "s"
    assert jtr(["suite", "--only", "null,send", "--transports", "udp", "-o", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "suite: %s: 1 item (null)" % out
    assert lines[1].startswith("suite: send: skipped: the measuring program jtr-send is not "
                               "built")
    assert lines[-1].startswith("suite: %s: 1 of 1 items done; " % out)


def test_a_stopped_suite_says_so_last_on_stderr(fakes, tmp_path, monkeypatch, capsys):
    asked = iter([False, True])         # the stop comes while the first item runs
    monkeypatch.setattr(jobs.S.signals, "requested", lambda: next(asked, True))
    out = tmp_path / "s"
    assert jtr(["suite", "--only", "null,gap", "-o", str(out)]) == EXIT_INTERRUPTED
    cap = capsys.readouterr()
    assert cap.err == "jtr suite: interrupted; partial results in %s/\n" % out
    assert cap.out.splitlines()[-1].endswith(", interrupted (partial); 'jtr report %s' draws "
                                             "them" % out)
