# SPDX-License-Identifier: GPL-2.0-only
"""system.signals: the stop rule's handlers. Outside a block the first stop
signal raises KeyboardInterrupt; inside measuring() it is a request, passed once
to the programs started with spawn(); inside holding() even the first is only
acknowledged; later ones are told the innermost block's words and skip nothing."""
import os
import signal
import subprocess
import sys
import time

import pytest

from jtrpy.system import signals


@pytest.fixture
def rule():
    """install("jtr x") for the test, acknowledging on stderr; the handlers and
    the state put back after."""
    old = {s: signal.getsignal(s) for s in signals.STOP_SIGNALS}
    signals.reset()
    signals.install("jtr x", lambda text: sys.stderr.write(text))
    yield
    signals.reset()
    for s, h in old.items():
        signal.signal(s, h)


def kill_self(sig):
    os.kill(os.getpid(), sig)


def test_outside_a_block_the_first_signal_raises(rule, capfd):
    with pytest.raises(KeyboardInterrupt):
        kill_self(signal.SIGTERM)
        time.sleep(1)               # the handler runs before this ends
    assert signals.requested()
    kill_self(signal.SIGHUP)        # a later one: acknowledged, nothing raised
    assert capfd.readouterr().err == \
        "jtr x: still stopping: writing what was measured (kill -9 aborts)\n"


def test_once_the_command_returned_a_signal_changes_nothing(rule, capfd):
    # cli/main.py's main() has returned: a Ctrl-C now neither raises on the way
    # out (a traceback) nor, at exit, ends the process by SIGINT
    signals.closing()
    kill_self(signal.SIGINT)
    time.sleep(0.05)
    assert not signals.requested() and capfd.readouterr().err == ""
    assert signal.getsignal(signal.SIGINT) is not signal.SIG_IGN   # in-process callers keep theirs
    signals.closing(exiting=True)
    assert all(signal.getsignal(s) is signal.SIG_IGN for s in signals.STOP_SIGNALS)


def test_a_stop_signal_at_the_exit_of_jtr_is_taken_quietly(tmp_path):
    # the real process: its command done, a SIGINT on the way out (at the
    # console_main step) leaves the exit status and says nothing
    code = ("import os, signal, sys\n"
            "from jtrpy.cli import main as m\n"
            "rc = m.main(['ls', %r])\n"
            "os.kill(os.getpid(), signal.SIGINT)\n"
            "m.console_main(['version'])\n" % str(tmp_path))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=60, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert (r.returncode, r.stderr) == (0, ""), r.stderr


def test_measuring_requests_and_says_each_blocks_words(rule, capfd):
    with signals.measuring(stopping="", busy="still undoing the apply; wait") as block:
        kill_self(signal.SIGINT)
        assert signals.requested()
        assert capfd.readouterr().err == ""         # stopping='' says nothing
        kill_self(signal.SIGTERM)
        block.busy = "still reverting the tuning; wait"
        with signals.measuring():                   # inherits the enclosing words
            kill_self(signal.SIGHUP)
    assert capfd.readouterr().err == ("jtr x: still undoing the apply; wait\n"
                                      "jtr x: still reverting the tuning; wait\n")


def test_measuring_default_words(rule, capfd):
    with signals.measuring():
        kill_self(signal.SIGTERM)
        kill_self(signal.SIGTERM)
    err = capfd.readouterr().err
    assert err == ("\njtr x: stopping: writing what was measured\n"
                   "jtr x: still stopping: writing what was measured (kill -9 aborts)\n")


def test_holding_acknowledges_the_first_too(rule, capfd):
    with signals.holding("still reverting; wait"):
        for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            kill_self(s)
    assert capfd.readouterr().err == "jtr x: still reverting; wait\n" * 3
    assert signals.requested()


def test_a_stop_reaches_each_program_once(rule, tmp_path):
    """Three signals: the program started with stop=True gets one SIGTERM (its
    handler counts them), the one with stop=False none; both in their own
    process group."""
    count = tmp_path / "count"
    prog = ("import signal, sys, time\n"
            "n = []\n"
            "signal.signal(signal.SIGTERM, lambda *a: n.append(1))\n"
            "print('ready', flush=True)\n"
            "end = time.time() + 2\n"
            "while time.time() < end: time.sleep(0.05)\n"
            "open(sys.argv[1], 'w').write(str(len(n)))\n")
    with signals.measuring():
        told = signals.spawn([sys.executable, "-c", prog, str(count)], stdout=subprocess.PIPE)
        left = signals.spawn([sys.executable, "-c", prog, str(count) + "2"],
                             stdout=subprocess.PIPE, stop=False)
        for p in (told, left):
            assert p.stdout.readline() == b"ready\n"
            assert os.getpgid(p.pid) == p.pid
        for _ in range(3):
            kill_self(signal.SIGTERM)
        assert told.wait(10) == 0 and left.wait(10) == 0
    assert count.read_text() == "1" and (tmp_path / "count2").read_text() == "0"
    for p in (told, left):
        p.stdout.close()


def gone(pid):
    """Has process @pid ended (no such process, or a zombie left to be reaped)?"""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] in "ZX"
    except OSError:
        return True


def test_a_query_ends_with_jtr_even_one_killed(tmp_path):
    """run(): a query started the rule's way ends when jtr dies by SIGKILL (it
    was left running before, and jtr tune's kill sweep found it)."""
    pidfile = tmp_path / "pid"
    code = ("import sys; sys.path.insert(0, %r); from jtrpy.system import signals; "
            "signals.run(['sh', '-c', 'echo $$ > %s; exec sleep 30'])"
            % (os.path.dirname(os.path.dirname(os.path.dirname(signals.__file__))), pidfile))
    jtr = subprocess.Popen([sys.executable, "-c", code])
    end = time.monotonic() + 10
    while not (pidfile.exists() and pidfile.read_text().strip()) and time.monotonic() < end:
        time.sleep(0.01)
    pid = int(pidfile.read_text())
    jtr.kill()
    jtr.wait()
    end = time.monotonic() + 5
    while not gone(pid) and time.monotonic() < end:
        time.sleep(0.01)
    assert gone(pid)


def test_a_query_past_its_timeout_is_killed():
    t = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        signals.run(["sleep", "30"], timeout=0.2)
    assert time.monotonic() - t < 5
    p = signals.run(["sh", "-c", "echo hi; exit 3"], stdout=subprocess.PIPE, text=True)
    assert (p.returncode, p.stdout) == (3, "hi\n")


def test_what_a_signal_is_told_goes_where_the_command_said(capfd):
    old = {s: signal.getsignal(s) for s in signals.STOP_SIGNALS}
    told = []
    signals.reset()
    signals.install("jtr y", told.append)
    try:
        with signals.measuring():
            kill_self(signal.SIGTERM)
    finally:
        signals.reset()
        for s, h in old.items():
            signal.signal(s, h)
    assert told == ["\njtr y: stopping: writing what was measured\n"]
    assert capfd.readouterr().err == ""
