# SPDX-License-Identifier: GPL-2.0-only
"""jtr trace --print in-process: a log written here printed one event a line, as
trace/events.py formats each; the folder, the file, results/latest by default;
one log at a time."""
import os

import pytest

from jtrpy.cli.main import main as jtr
from jtrpy.trace import events as E

T0 = 10**12
EVENTS = [(T0 + 1500, 7, 1, E.IRQ_ENTRY, 0, 36, 0, "virtio1-req.0"),
          (T0 + 2_000_000, 7, 1, E.IRQ_EXIT, 0, 36, 1, None)]


@pytest.fixture
def log(tmp_path):
    E.write_events(str(tmp_path), EVENTS, T0, T0 + 10**9)
    return tmp_path


def test_print_one_event_a_line(log, capsys):
    want = ["    0.000002  cpu1  irq_handler_entry 36 virtio1-req.0",
            "    0.002000  cpu1  irq_handler_exit 36 ret=handled"]
    assert jtr(["trace", "--print", str(log)]) == 0
    assert capsys.readouterr().out.splitlines() == want
    assert jtr(["trace", "--print", str(log / "events.bin")]) == 0
    assert capsys.readouterr().out.splitlines() == want


def test_latest_by_default(log, capsys, monkeypatch):
    os.makedirs(log / "results")
    os.symlink(str(log), str(log / "results" / "latest"))
    monkeypatch.chdir(log)
    assert jtr(["trace", "--print"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2


def test_one_log_at_a_time(log, capsys):
    assert jtr(["trace", "--print", str(log), str(log)]) == 2
    assert capsys.readouterr().err == ("jtr trace: --print takes one results folder or "
                                       "events.bin; see 'jtr trace --print --help'\n")
    assert jtr(["trace", "--print", str(log / "none")]) == 2
    assert capsys.readouterr().err.startswith("jtr trace: %s" % (log / "none"))
