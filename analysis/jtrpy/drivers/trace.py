# SPDX-License-Identifier: GPL-2.0-only
"""jtr trace --print's job: the tracer's event log read (trace/events.py) from a
results folder or its events.bin, results/latest by default; the command prints
it through render/trace.py."""
import os

from ..trace.events import read_events

LATEST = os.path.join("results", "latest")


def trace_job(path=None):
    """The EventLog at @path (a results folder or its events.bin; None: the
    results folder results/latest). UsageError when it cannot be read."""
    return read_events(LATEST if path is None else path)
