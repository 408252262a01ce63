# SPDX-License-Identifier: GPL-2.0-only
"""cli.progress: nothing before AFTER_S, then one line rewritten in place at
most every EVERY_S, cleared at the end; nothing at all off a terminal. The clock
is the test's."""
import io

import pytest

from jtrpy.cli import progress


class Tty(io.StringIO):
    def __init__(self, tty=True):
        super().__init__()
        self.tty = tty

    def isatty(self):
        return self.tty


@pytest.fixture
def clock(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    return now


def test_silent_at_first_then_rate_limited_then_cleared(clock):
    s = Tty()
    p = progress.Progress("jtr x", s)
    clock[0] += progress.AFTER_S - 0.01
    p("reading")
    p.done()                        # nothing was shown: nothing to clear
    assert s.getvalue() == ""
    clock[0] += 0.5                 # 2.49 s in
    p("reading")
    assert s.getvalue() == "\r\033[Kjtr x: reading (2 s)"
    clock[0] += progress.EVERY_S / 2
    p("skipped")                    # too soon after the last
    clock[0] += progress.EVERY_S
    p("writing")
    assert s.getvalue().split("\r\033[K")[1:] == ["jtr x: reading (2 s)",
                                                  "jtr x: writing (3 s)"]
    p.done()
    assert s.getvalue().endswith("\r\033[K") and not p.shown
    n = len(s.getvalue())
    p.done()                        # once only
    assert len(s.getvalue()) == n


def test_nothing_off_a_terminal(clock):
    s = Tty(tty=False)
    p = progress.Progress("jtr x", s, after_s=0)
    clock[0] += 10
    p("reading")
    p.done()
    assert s.getvalue() == ""
