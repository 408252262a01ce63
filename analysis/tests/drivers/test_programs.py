# SPDX-License-Identifier: GPL-2.0-only
"""drivers.programs: a C program run the rule's way, with stand-ins in a folder
of the test's own (JTR_LIBEXEC): the results folder it reports on its own
descriptor (never scraped from its output), a program that is not built, one
stopped with its one SIGTERM or killed after the grace, a subscriber's 'ready
on', and the last line of a log without its warnings."""
import gc
import os
import signal
import subprocess
import sys
import time

import pytest

from jtrpy.drivers import programs as P
from jtrpy.errors import JtrError
from jtrpy.system import signals

FAKE = """#!%s
import os, signal, sys, time
plan = os.environ.get("FAKE_PLAN", "ok")
fd = int(os.environ["JTR_RESULTS_FD"])
print("results in /not/this/one")             # its output is not read for the folder
if plan == "ok":
    os.write(fd, b"/tmp/r1/\\n")
    sys.exit(int(os.environ.get("FAKE_RC", "0")))
if plan == "env":
    os.write(fd, (os.environ.get("FOO", "-") + " " + " ".join(sys.argv[1:])).encode())
    sys.exit(0)
if plan == "nothing":
    sys.exit(3)
if plan == "stubborn":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
else:
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(130))
print("ready", flush=True)
time.sleep(30)
"""


@pytest.fixture
def fake(tmp_path, monkeypatch):
    b = tmp_path / "bin"
    b.mkdir()
    p = b / "jtr-x"
    p.write_text(FAKE % sys.executable)
    p.chmod(0o755)
    monkeypatch.setenv("JTR_LIBEXEC", str(b))
    signals.reset()
    yield
    signals.reset()


def open_fds():
    return len(os.listdir("/proc/self/fd"))


def test_the_folder_comes_on_its_descriptor(fake):
    prog = P.Program("x", ["-q"], stdout=subprocess.DEVNULL)
    assert prog.run() == (0, "/tmp/r1")                 # its '/' and newline dropped
    assert prog.read_end is None


def test_a_folder_named_with_a_newline_or_bytes_that_are_not_utf8():
    """The name is everything the program wrote but the newline that ends it (a
    name with a newline was cut at it, and a byte that is not UTF-8 replaced: the
    folder was then 'no such result')."""
    assert P.said_folder(b"/r/a\nb\n") == "/r/a\nb"
    name = P.said_folder(b"/r/x\xffy/\n")
    assert os.fsencode(name) == b"/r/x\xffy"
    assert P.said_folder(b"") is None and P.said_folder(b"\n") is None


def test_exit_status_and_no_folder(fake, monkeypatch):
    monkeypatch.setenv("FAKE_PLAN", "nothing")
    assert P.Program("x", [], stdout=subprocess.DEVNULL).run() == (3, None)


def test_env_and_prefix(fake):
    prog = P.Program("x", ["-a", "1"], env={"FOO": "bar", "FAKE_PLAN": "env",
                                            "PATH": os.environ["PATH"]},
                     prefix=["env", "FOO=baz"], stdout=subprocess.DEVNULL)
    assert prog.run() == (0, "baz -a 1")


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_a_program_not_built_leaks_no_descriptor(fake, monkeypatch, tmp_path):
    """Its pipe is closed once: neither left open nor closed again when the
    half-made Program goes (a second close could take a descriptor opened since)."""
    monkeypatch.setenv("JTR_LIBEXEC", str(tmp_path))
    gc.collect()                        # what earlier tests left open is closed first
    before = open_fds()
    with pytest.raises(JtrError, match="the measuring program jtr-x is not built"):
        P.Program("x", [])
    gc.collect()
    assert open_fds() == before


def started(plan, monkeypatch):
    """A stand-in that has set its SIGTERM handler."""
    monkeypatch.setenv("FAKE_PLAN", plan)
    prog = P.Program("x", [], stdout=subprocess.PIPE)
    while prog.proc.stdout.readline() not in (b"ready\n", b""):
        pass
    return prog


def test_stop_asks_once_then_kills(fake, monkeypatch):
    prog = started("wait", monkeypatch)
    assert P.stop(prog.proc) == 130
    prog.folder()
    prog = started("stubborn", monkeypatch)
    t = time.monotonic()
    assert P.stop(prog.proc, grace=0.1) == -signal.SIGKILL
    assert 0.1 <= time.monotonic() - t < 5
    assert P.stop(prog.proc) == -signal.SIGKILL          # ended already: its status
    prog.folder()


def test_wait_ready(tmp_path):
    log = tmp_path / "sub.log"
    p = subprocess.Popen([sys.executable, "-c", "import sys, time; time.sleep(0.05); "
                          "open(sys.argv[1], 'a').write('jtr sub: ready on udp :9\\n'); "
                          "time.sleep(5)", str(log)])
    log.write_text("")
    try:
        assert P.wait_ready(p, str(log), 5) is True
    finally:
        p.kill()
        p.wait()
    # it exited without saying so (known at once), or took too long
    log.write_text("starting\n")
    t = time.monotonic()
    assert P.wait_ready(p, str(log), 5) is False
    assert time.monotonic() - t < 2
    q = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"])
    try:
        t = time.monotonic()
        assert P.wait_ready(q, str(log), 0.1) is False
        assert time.monotonic() - t < 2
    finally:
        q.kill()
        q.wait()


def test_last_line(tmp_path):
    log = tmp_path / "a.log"
    log.write_text("first\njtr sub: failed: no peer\n\njtr sub: warning: slow\n  \n")
    assert P.last_line(str(log)) == "jtr sub: failed: no peer"
    log.write_text("warning: only this\n")
    assert P.last_line(str(log)) == ""
    assert P.last_line(str(tmp_path / "none.log")) == ""
