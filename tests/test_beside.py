# SPDX-License-Identifier: GPL-2.0-only
"""scripts/beside.sh, which make test runs the tests marked beside with beside the
measuring tests: the command runs on the one CPU given whatever affinity it asks
for, at SCHED_IDLE, with TMPDIR a folder of /dev/shm open to every user as /tmp;
its exit status comes back; Ctrl-C, SIGTERM and SIGHUP end it and leave neither
the cgroup nor the folder; bad input is one line and exit 2."""
import glob
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import ROOT, wait_for

from jtrpy.tune import knobs

# each run makes a cpuset cgroup, machine-wide while it lasts: the tuning tests'
# snapshots of the machine saw one come and go (one after another with them)
pytestmark = pytest.mark.machine

BESIDE = os.path.join(ROOT, "scripts", "beside.sh")

# what the command sees: its CPUs after asking for every one, its policy, TMPDIR
LOOK = """
import json, os, stat
os.sched_setaffinity(0, range(os.cpu_count()))
t = os.environ.get("TMPDIR", "")
print(json.dumps([sorted(os.sched_getaffinity(0)), os.sched_getscheduler(0) == os.SCHED_IDLE,
                  t, stat.S_IMODE(os.stat(t).st_mode) if t else None]))
"""


def a_cpuset_can_be_made():
    """Would beside.sh confine its command with a cpuset cgroup here?"""
    ver, root = knobs.cpuset_root()
    if os.geteuid() != 0 or ver is None:
        return False
    if ver == 1:
        return os.path.exists(os.path.join(root, "cpuset.mems"))
    with open(os.path.join(root, "cgroup.subtree_control")) as f:
        return "cpuset" in f.read().split()


def left():
    """The cgroups and /dev/shm folders of a beside.sh that are still there."""
    ver, root = knobs.cpuset_root()
    where = ["/dev/shm/jtr-beside.*"] + ([os.path.join(root, "jtr-beside.*")] if ver else [])
    return [p for g in where for p in glob.glob(g)]


def signals_at_default():
    """In beside.sh's process before it starts: the signals the tests send at
    their default action, as in a terminal. Under nohup (make test started so)
    SIGHUP is ignored, and a shell cannot trap a signal ignored when it started:
    beside.sh, rightly, then lets SIGHUP pass, as nohup asked."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


@pytest.fixture
def nothing_left():
    before = set(left())
    yield
    assert wait_for(lambda: set(left()) <= before, 5), set(left()) - before


def test_the_command_stays_on_its_cpu_idle_with_its_files_in_memory(nothing_left):
    cpu = min(os.sched_getaffinity(0))
    p = subprocess.run([BESIDE, str(cpu), sys.executable, "-c", LOOK], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    cpus, idle, tmp, mode = json.loads(p.stdout)
    assert cpus == [cpu] and idle, p.stdout
    if os.path.isdir("/dev/shm"):
        assert tmp.startswith("/dev/shm/jtr-beside.") and mode == 0o1777, p.stdout
    # how it was confined is said first
    assert p.stderr.startswith("== on CPU %d at SCHED_IDLE (" % cpu), p.stderr
    if a_cpuset_can_be_made():
        assert "(cpuset %s/jtr-beside." % knobs.cpuset_root()[1] in p.stderr, p.stderr


def test_the_exit_status_is_the_commands(nothing_left):
    p = subprocess.run([BESIDE, "0", "sh", "-c", "exit 3"], capture_output=True, timeout=60)
    assert p.returncode == 3


def started_idle(p, started):
    """Wait for the command of beside.sh @p to make @started. At SCHED_IDLE
    beside a busy process on CPU 0 it gets a few thousandths of it (Python's
    start then takes a minute): after 10 s it is let out of SCHED_IDLE, as make
    test does once it has measured, and the test goes on, saying so."""
    if wait_for(started.exists, 10):
        return
    print("the command did not start in 10 s at SCHED_IDLE (CPU 0 busy): SIGUSR1")
    p.send_signal(signal.SIGUSR1)
    assert wait_for(started.exists, 30), p.communicate()


def test_usr1_takes_it_and_what_it_started_out_of_sched_idle(nothing_left, tmp_path):
    """make test's SIGUSR1 once the measuring tests are done: the command and the
    programs it started leave SCHED_IDLE for SCHED_OTHER, say so, and go on to
    their end (beside a busy process on the CPU the tests beside would take
    hours at SCHED_IDLE)."""
    started, go = tmp_path / "started", tmp_path / "go"
    code = ("import os, pathlib, subprocess, sys, time\n"
            "kid = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            "pathlib.Path(%r).write_text(str(kid.pid))\n"
            "while not os.path.exists(%r):\n"
            "    time.sleep(0.01)\n"
            "kid.kill()\n" % (str(started), str(go)))
    p = subprocess.Popen([BESIDE, "0", sys.executable, "-c", code], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, preexec_fn=signals_at_default)
    try:
        assert wait_for(started.exists, 60), p.communicate()
        assert wait_for(lambda: started.read_text(), 5)
        kid = int(started.read_text())
        command = int(open("/proc/%d/stat" % kid).read().rsplit(")", 1)[1].split()[1])
        policies = lambda: {os.sched_getscheduler(x) for x in (kid, command)}  # noqa: E731
        assert policies() == {os.SCHED_IDLE}
        p.send_signal(signal.SIGUSR1)
        assert wait_for(lambda: policies() == {os.SCHED_OTHER}, 10), policies()
        go.touch()
        _, err = p.communicate(timeout=60)
    finally:
        go.touch()                      # the command ends, whatever became of beside.sh
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 0, err
    assert "== SCHED_OTHER from here on: the measuring is over" in err.splitlines(), err


@pytest.mark.parametrize("sig, rc", [(signal.SIGINT, 130), (signal.SIGTERM, 143),
                                     (signal.SIGHUP, 129)])
def test_a_signal_ends_it_and_leaves_nothing(nothing_left, tmp_path, sig, rc):
    """As make's Ctrl-C does: the signal to the whole process group (SIGINT), or to
    beside.sh alone (SIGTERM, SIGHUP: passed on)."""
    started = tmp_path / "started"
    code = ("import pathlib, time; pathlib.Path(%r).touch(); time.sleep(60)" % str(started))
    p = subprocess.Popen([BESIDE, "0", sys.executable, "-c", code], start_new_session=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=signals_at_default)
    started_idle(p, started)
    t = time.monotonic()
    if sig == signal.SIGINT:
        os.killpg(p.pid, sig)
    else:
        p.send_signal(sig)
    _, err = p.communicate(timeout=30)
    assert p.returncode == rc, err
    assert time.monotonic() - t < 10         # not the command's 60 s
    if sig == signal.SIGINT:                 # python ended as after a Ctrl-C
        assert "KeyboardInterrupt" in err, err


@pytest.mark.parametrize("sig, rc", [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_signal_before_the_command_starts_leaves_nothing(nothing_left, tmp_path, sig, rc):
    """The signal while beside.sh makes its folder (a mktemp first on PATH that
    says so, then waits): the command, started after, ends at once, and nothing is
    left. On a busy machine the tests' signal once came before the traps were set:
    the script died, its command ran on and its cgroup and folder stayed."""
    bin_dir, reached, ran = tmp_path / "bin", tmp_path / "reached", tmp_path / "ran"
    bin_dir.mkdir()
    (bin_dir / "mktemp").write_text("#!/bin/sh\ntouch %s\nsleep 1\nexec /usr/bin/mktemp \"$@\"\n"
                                    % reached)
    (bin_dir / "mktemp").chmod(0o755)
    code = "import pathlib, time; pathlib.Path(%r).touch(); time.sleep(60)" % str(ran)
    p = subprocess.Popen([BESIDE, "0", sys.executable, "-c", code], start_new_session=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=signals_at_default,
                         env=dict(os.environ, PATH="%s:%s" % (bin_dir, os.environ["PATH"])))
    assert wait_for(reached.exists, 30), p.communicate()
    p.send_signal(sig)
    _, err = p.communicate(timeout=30)
    assert p.returncode == rc, err
    assert not ran.exists() or time.monotonic() - ran.stat().st_mtime < 60


@pytest.mark.parametrize("args, words", [
    ([], "usage: scripts/beside.sh CPU COMMAND"),
    (["x", "true"], "'x' is not a CPU number"),
    (["4096", "true"], "CPU 4096 is not one this machine's cpusets hold")])
def test_bad_input(nothing_left, args, words):
    if args[:1] == ["4096"] and not a_cpuset_can_be_made():
        pytest.skip("no cpuset cgroup this run may make (not root, no cpuset controller "
                    "mounted, or a cgroup v2 root that does not delegate it)")
    p = subprocess.run([BESIDE] + args, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and words in p.stderr, p.stderr
    assert p.stderr.count("\n") == 1
