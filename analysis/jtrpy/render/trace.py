# SPDX-License-Identifier: GPL-2.0-only
"""trace - the tracer's event log for people (jtr trace --print): an event a line,
its time in seconds from the start of the trace, its CPU and what it says
(trace/events.py's describe)."""
from ..trace.events import describe


def format_event(ev, meta):
    """One line for people: seconds since the log start, CPU, what happened."""
    start = (meta or {}).get("start_ns") or 0
    return "%12.6f  cpu%d  %s" % ((ev.ts_ns - start) / 1e9, ev.cpu, describe(ev, meta))


def event_lines(log):
    """The lines of every event of @log (an EventLog, drivers/trace.py), in time
    order, one at a time."""
    for ev in log.iter_events():
        yield format_event(ev, log.meta)
