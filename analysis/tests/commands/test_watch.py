# SPDX-License-Identifier: GPL-2.0-only
"""jtr watch's options in-process: --app's comms and PIDs (a comm the kernel cuts
to 15 characters said so, a PID that is not running refused), the CPUs by
default, the ring buffer's size, the most applications the tracer takes; the
watch itself is a stand-in here (nothing is traced)."""
import os

import pytest

from jtrpy.cli.main import main as jtr
from jtrpy.commands import watch as command


@pytest.fixture
def watched(monkeypatch):
    got = []
    monkeypatch.setattr(command, "watch", lambda o: got.append(o) or 0)
    monkeypatch.setattr(command, "isolated_cpus", lambda: [])
    return got


def test_apps_comms_and_running_pids(watched, capsys):
    me = str(os.getpid())
    assert jtr(["watch", "-c", "0", "--app", "myserver,%s" % me, "--app", "a" * 20,
                "--dump-above", "100us"]) == 0
    (o,) = watched
    assert o.app == ["myserver", me, "a" * 20] and o.cpus == [0]
    assert o.dump_above_text == "100.0 us"
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


def test_cpus_by_default_are_the_isolated_ones(watched, capsys, monkeypatch):
    assert jtr(["watch"]) == 2
    assert capsys.readouterr().err == ("jtr watch: no isolated CPU to watch by default: give "
                                       "the application's CPUs with -c LIST, e.g. -c 2-3\n")
    monkeypatch.setattr(command, "isolated_cpus", lambda: [2, 3])
    assert jtr(["watch", "-q"]) == 0
    o = watched[0]
    assert o.cpus == [2, 3] and o.app == [] and o.dump_above_text is None
    assert (o.keep, o.recorder, o.dump_max, o.names, o.interval) == (
        120 * 10**9, 64 << 20, 20, 32, 10**9)


def test_ring_buffer_is_a_power_of_two(watched, capsys):
    assert jtr(["watch", "-c", "0", "--trace-buffer", "3M"]) == 2
    assert capsys.readouterr().err == ("jtr watch: --trace-buffer 3145728: the ring buffer must "
                                       "be a power of two from 4K to 1G, e.g. 4M\n")
    assert jtr(["watch", "-c", "0", "--trace-buffer", "4M"]) == 0


def test_at_most_sixteen_comms_and_sixteen_pids(watched, capsys):
    comms = ",".join("c%d" % i for i in range(16))
    assert jtr(["watch", "-c", "0", "--app", comms]) == 0
    assert jtr(["watch", "-c", "0", "--app", comms + ",c16"]) == 2
    assert capsys.readouterr().err == "jtr watch: --app: 17 comms; at most 16\n"
    pids = ",".join([str(os.getpid())] * 17)
    assert jtr(["watch", "-c", "0", "--app", pids]) == 2
    assert capsys.readouterr().err == "jtr watch: --app: 17 PIDs; at most 16\n"
