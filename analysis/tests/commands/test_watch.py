# SPDX-License-Identifier: GPL-2.0-only
"""jtr watch's options in-process: --app's comms and PIDs (a comm the kernel cuts
to 15 characters said so, a PID that is not running refused); the watch itself
is a stand-in here (nothing is traced). The job's checks: tests/drivers/test_watch.py."""
import os

import pytest

from jtrpy.cli.main import main as jtr

from ..drivers import test_watch as jobs

watched = jobs.watched      # fixture: the options the watch was given (nothing is traced)


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
