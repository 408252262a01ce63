# SPDX-License-Identifier: GPL-2.0-only
"""drivers.trace: the event log of a results folder or of its events.bin,
results/latest when none is named (an empty name is a name), and a log that is
not there one line saying so."""
import os

import pytest

from jtrpy.drivers.trace import trace_job
from jtrpy.errors import UsageError
from jtrpy.trace import events as E

T0 = 10 ** 12
EVENTS = [(T0 + 2000, 7, 2, E.IRQ_EXIT, 0, 36, 1, None),
          (T0 + 1000, 7, 1, E.IRQ_ENTRY, 0, 36, 0, "eth0")]


@pytest.fixture
def run(tmp_path):
    (tmp_path / "run").mkdir()
    E.write_events(str(tmp_path / "run"), EVENTS, T0, T0 + 10 ** 9)
    return tmp_path / "run"


def times(log):
    return [ev.ts_ns - T0 for ev in log.iter_events()]


def test_a_folder_or_its_log(run):
    for path in (str(run), str(run / "events.bin")):
        log = trace_job(path)
        assert times(log) == [1000, 2000] and log.meta["start_ns"] == T0


def test_results_latest_by_default(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match=r"^%s" % os.path.join("results", "latest")):
        trace_job()
    os.mkdir("results")
    os.symlink(str(run), os.path.join("results", "latest"))
    assert times(trace_job()) == [1000, 2000]
    with pytest.raises(UsageError):
        trace_job("")           # named, if empty: not results/latest


def test_no_log_says_so(tmp_path):
    with pytest.raises(UsageError, match=r"^%s" % (tmp_path / "events.bin")):
        trace_job(str(tmp_path))
