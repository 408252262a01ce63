# SPDX-License-Identifier: GPL-2.0-only
"""attribution/throttle.py: whether a CPU's RT runqueue can have been throttled
at an instant, from the real-time run time its switch records show."""
import pytest

from jtrpy.attribution.throttle import Throttle
from jtrpy.trace import causes as C
from jtrpy.trace import events as E

from .test_attribute import T0, switch

FIFO, IDLE, BASH = ("spin", 300, 89), ("swapper/1", 0, 120), ("bash", 400, 120)
S = 1_000_000_000


@pytest.fixture(autouse=True, params=["numpy", "plain"])
def path(request, monkeypatch):
    monkeypatch.setenv("JTR_NUMPY", "1" if request.param == "numpy" else "0")


def throttle(tmp_path, events, rt=None, begin=T0):
    E.write_events(str(tmp_path), events, begin, T0 + 5 * S, meta={"cpus": [1]})
    host = {"rt_throttling": rt} if rt else {}
    return Throttle({"host": host}, E.read_events(str(tmp_path)))


def test_only_after_the_runtime_was_spent_in_the_period(tmp_path):
    # bash from the start, FIFO from 0.3 s to 1.4 s, then bash: 1.1 s of real time
    th = throttle(tmp_path, [switch(T0 + 1_000, IDLE, BASH),
                             switch(T0 + 3 * S // 10, BASH, FIFO),
                             switch(T0 + 14 * S // 10, FIFO, BASH)],
                  {"enabled": True, "runtime_us": 950_000, "period_us": 1_000_000})
    assert th.name == "sched_rt_runtime_us 950000 of 1000000"
    assert th.at(1, T0 + S) is False            # 700 ms of the second before: < 90 %
    assert th.at(1, T0 + 12 * S // 10) is True  # 900 ms of [0.2 s, 1.2 s]
    assert th.at(1, T0 + 14 * S // 10) is True  # 1.0 s
    assert th.at(1, T0 + 22 * S // 10) is False  # 200 ms of [1.2 s, 2.2 s]


def test_time_the_log_does_not_show_counts_as_real_time(tmp_path):
    # no switch until 0.5 s: who ran before is not known, the rule stands
    th = throttle(tmp_path, [switch(T0 + S // 2, BASH, IDLE)])
    assert th.at(1, T0 + S // 2) is True
    assert th.at(1, T0 + 3 * S // 2) is False   # the second before it shows idle only
    assert Throttle().at(1, T0) is True         # no log at all
    assert Throttle().name == "the RT runqueue throttled"


def test_the_fair_server_after_all_but_its_50_ms(tmp_path):
    # throttling off (-1): the fair server runs normal tasks after ~950 ms of RT
    th = throttle(tmp_path, [switch(T0 + 1_000, BASH, FIFO)],
                  {"enabled": False, "runtime_us": -1, "period_us": 1_000_000})
    assert th.name == C.FAIR_SERVER
    assert th.at(1, T0 + S) is True
    assert th.need_ns == pytest.approx(0.9 * 950_000_000)


def test_a_task_made_real_time_while_it_ran(tmp_path):
    # jtr gap -f starts as a normal task and sets SCHED_FIFO itself: it is switched
    # in at prio 120 and out at 89; the second between counts as real time
    made_fifo = ("spin", 300, 120)
    th = throttle(tmp_path, [switch(T0 + 1_000, BASH, made_fifo),
                             switch(T0 + 11 * S // 10, FIFO, IDLE)],
                  {"enabled": True, "runtime_us": 950_000, "period_us": 1_000_000})
    assert th.at(1, T0 + 11 * S // 10) is True
    assert th.at(1, T0 + 22 * S // 10) is False  # idle the second before


def test_a_switch_missing_from_the_log(tmp_path):
    # FIFO went out to bash at 0.1 s; its way back in is not in the log, but it
    # went out again at 1.1 s: who ran between is not known, the rule stands
    th = throttle(tmp_path, [switch(T0 + 1_000, BASH, FIFO),
                             switch(T0 + S // 10, FIFO, BASH),
                             switch(T0 + 11 * S // 10, FIFO, IDLE)],
                  {"enabled": True, "runtime_us": 950_000, "period_us": 1_000_000})
    assert th.at(1, T0 + 11 * S // 10) is True
