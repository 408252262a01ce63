# SPDX-License-Identifier: GPL-2.0-only
"""jtr watch's options in-process: --app's comms and PIDs (a comm the kernel cuts
to 15 characters said so, a PID that is not running refused); the watch itself
is a stand-in here (nothing is traced); what the command prints of the lines
its job hands it, and on which stream (-q: none). The job's checks:
tests/drivers/test_watch.py."""
import os

import pytest

from jtrpy.cli.main import main as jtr
from jtrpy.commands import watch as command
from jtrpy.drivers.watch import Outcome

from ..drivers import test_watch as jobs

watched = jobs.watched      # fixture: the options the watch was given (nothing is traced)


def test_apps_comms_and_running_pids(watched, capsys):
    me = str(os.getpid())
    assert jtr(["watch", "-c", "0", "--app", "myserver,%s" % me, "--app", "a" * 20,
                "--dump-above", "100us"]) == 0
    (o,) = watched
    assert o.app == ["myserver", me, "a" * 20] and o.cpus == [0]
    assert o.dump_above == 100_000
    assert capsys.readouterr().err == (
        "jtr watch: warning: --app %s: the kernel keeps a comm's first 15 characters: tasks "
        "named %s are the application\n" % ("a" * 20, "a" * 15))


@pytest.mark.parametrize("app,message", [
    ("a,,b", "an empty name; give the application's comm or PID, e.g. --app myserver or "
             "--app 4321"),
    ("0", "no process 0 is running; give the PID of a running process, or a comm"),
    ("4194305", "no process 4194305 is running"),       # past the largest pid there can be
])
def test_apps_refused(watched, capsys, app, message):
    assert jtr(["watch", "-c", "0", "--app", app]) == 2
    assert message in capsys.readouterr().err and watched == []


DUMP = {"dump": "out/dump-x", "records": 5, "outliers": 2, "trigger": {
    "cpu": 0, "category": "task preemption", "name": "spin", "length_ns": 1_500_000}}


@pytest.fixture
def job(monkeypatch):
    """A stand-in job: the tracer runs, writes a dump and a state line, and ends
    (progress: None when the command shows none, off a terminal)."""
    def watch_job(o, started, dumped, progress):
        started()
        dumped(DUMP)
        if progress is not None:
            progress({"cpus": []}, 1.0)
        return Outcome({"cpus": []}, 2.0, "out", False, 0)
    monkeypatch.setattr(command, "watch_job", watch_job)


def test_the_command_prints_the_lines_of_its_job(job, capsys):
    assert jtr(["watch", "-c", "0"]) == 0
    out, err = capsys.readouterr()
    assert out == ("watching CPU 0 for the application (each CPU's longest-running comm): "
                   "no --listen; Ctrl-C to stop\nno interruption seen\n"
                   "watch: done; results: out\n")
    # not a terminal: no progress line, a dump's line alone
    assert err == ("dump: out/dump-x (task preemption spin, 1.50 ms on CPU 0; 5 events, "
                   "2 interruptions): jtr attribute out/dump-x\n")
    assert jtr(["watch", "-c", "0", "-q"]) == 0
    assert capsys.readouterr() == ("", "")


def test_on_a_terminal_the_progress_line_is_written_over_and_cleared(job, capsys,
                                                                       monkeypatch):
    monkeypatch.setattr(command.sys.stderr, "isatty", lambda: True)
    assert jtr(["watch", "-c", "0"]) == 0
    clear = "\r\033[K"
    assert capsys.readouterr().err == (
        clear + "dump: out/dump-x (task preemption spin, 1.50 ms on CPU 0; 5 events, 2 "
        "interruptions): jtr attribute out/dump-x\n" + clear + "watch 0m01s: interruptions "
        "none; page faults 0; longest 0 ns; 0 events, 0 dropped" + clear)
