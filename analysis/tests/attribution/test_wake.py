# SPDX-License-Identifier: GPL-2.0-only
"""jtr wake's decomposition: synthetic wake-up timelines, component by component."""
import random

import pytest

from jtrpy.attribution import wake as W
from jtrpy.errors import UsageError
from jtrpy.render.attribution import format_table
from jtrpy.trace import events as E

T0 = 1_000_000_000_000
TID = 4242
PRIO = 19                       # FIFO 80
SYM = {"hrtimer_wakeup": 0xffffffff81000020, "tick_nohz_handler": 0xffffffff81000010}
SYMBOLS = {"0x%x" % addr: name for name, addr in SYM.items()}
LOCAL_TIMER = 0
IDLE = ("swapper/1", 0, 120)
PROBE = ("jtr-wake", TID, PRIO)
SPIN = ("spin", 777, 9)         # FIFO 90: above the probe
LOW = ("low", 778, 89)          # FIFO 10: below it


def ev(ts, typ, a=0, b=0, raw=None, pid=0, flags=0, cpu=1):
    return (ts, pid, cpu, typ, flags, a, b, raw)


def switch(ts, prev, nxt, preempted=True):
    return ev(ts, E.SWITCH, prev[1] | nxt[1] << 32,
              prev[2] | nxt[2] << 16 | (0 if preempted else 1) << 32,
              (prev[0], nxt[0]), pid=prev[1], flags=1 if preempted else 0)


def wake_up(t, cur=0, irq_at=3_000, irq_ns=8_000, other_hrtimer=False):
    """The timer interrupt @irq_at ns after @t that wakes the probe, while @cur runs."""
    v = t + irq_at
    out = [ev(v, E.VEC_ENTRY, 236, LOCAL_TIMER, pid=cur)]
    if other_hrtimer:
        out += [ev(v + 200, E.HRTIMER_ENTRY, 0xffff01, SYM["tick_nohz_handler"], pid=cur),
                ev(v + 1200, E.HRTIMER_EXIT, 0xffff01, pid=cur)]
    out += [ev(v + 1500, E.HRTIMER_ENTRY, 0xffff02, SYM["hrtimer_wakeup"], (t, t), pid=cur),
            ev(v + 1800, E.WAKING, TID, 1 | PRIO << 32, "jtr-wake", pid=cur),
            ev(v + 2000, E.WAKEUP, TID, 1 | PRIO << 32, "jtr-wake", pid=cur),
            ev(v + 2500, E.HRTIMER_EXIT, 0xffff02, pid=cur),
            ev(v + irq_ns, E.VEC_EXIT, 236, LOCAL_TIMER, pid=cur)]
    return out


def decompose(tmp_path, events, outliers, prio=80, steal=False, begin=T0 - 10**7, **kw):
    meta = {"symbols": SYMBOLS, "cpus": [1], "backend": "ebpf"}
    if steal:
        meta["steal"] = {"source": "kvm steal_time", "available": True}
    E.write_events(str(tmp_path), sorted(events, key=lambda e: e[0]), begin, T0 + 10**9,
                   meta=meta)
    log = E.read_events(str(tmp_path))
    res = {"tool": "wake", "privileges": {"fifo_priority": prio},
           "host": {"rt_throttling": {"enabled": True, "runtime_us": 950000,
                                      "period_us": 1000000}},
           "runs": [{"cpu": 1, "tid": TID, "duration_ns": 10**9, "start_mono_ns": T0,
                     "outliers": {"dropped": 0}}]}
    return W.decompose(res, outliers, log, **kw)


def comps(att, k=0):
    return att["worst"][k]["components"]


def test_idle_cpu_wake_up_is_latency_irq_switch_return(tmp_path):
    evs = wake_up(T0) + [switch(T0 + 12_000, IDLE, PROBE)]
    att, rows = decompose(tmp_path, evs, [(1, T0, 14_000)])
    c = comps(att)
    assert c == {"irq_latency": 3_000, "timer_irq": 8_000, "scheduling": 1_000,
                 "return": 2_000}
    assert sum(c.values()) == 14_000
    w = att["worst"][0]
    assert w["dominant"] == "timer_irq"
    assert (w["category"], w["name"]) == ("timer IRQ", "local timer")
    assert att["decomposition"]["complete"] == att["decomposition"]["within_tolerance"] == 1
    # the chain reads along the timeline
    assert w["chain"].startswith("timer IRQ latency 3.0 us → timer IRQ 8.0 us (hrtimer_wakeup")
    # the CSV has every component of every outlier
    text = W.csv_text(rows).splitlines()
    assert text[0] == W.CSV_HEAD
    assert text[1].startswith("1,%d,14000,3000,8000,0,0,0,0,1000,0,2000,0,0,0,timer_irq," % T0)


def test_higher_priority_task_is_the_blocking_thread(tmp_path):
    # the spinner runs from before the intended time until 500 us after it
    evs = [switch(T0 - 100_000, IDLE, SPIN)] + wake_up(T0, cur=SPIN[1]) + \
        [switch(T0 + 500_000, SPIN, PROBE, preempted=False)]
    att, _ = decompose(tmp_path, evs, [(1, T0, 502_000)])
    c = comps(att)
    assert c["blocking"] == 500_000 - 11_000
    assert c["irq_latency"] == 3_000 and c["timer_irq"] == 8_000 and c["return"] == 2_000
    w = att["worst"][0]
    assert w["dominant"] == "blocking"
    assert (w["category"], w["name"]) == ("task preemption", "spin")
    assert {(p["pid"], p["prio"]) for p in w["parts"] if p["name"] == "spin"} == {(777, 9)}
    assert "blocked by spin (pid 777, prio 9) 489.0 us" in w["chain"]
    d = {x["component"]: x for x in att["decomposition"]["components"]}
    assert d["blocking"]["dominant_count"] == 1 and d["blocking"]["total_ns"] == 489_000


def test_lower_priority_task_is_preempted_not_blocking(tmp_path):
    evs = [switch(T0 - 100_000, IDLE, LOW)] + wake_up(T0, cur=LOW[1]) + \
        [switch(T0 + 12_000, LOW, PROBE)]
    att, _ = decompose(tmp_path, evs, [(1, T0, 14_000)])
    c = comps(att)
    assert "blocking" not in c and c["scheduling"] == 1_000
    assert not any(p["category"] == "task preemption" for p in att["worst"][0]["parts"])


def test_interrupts_before_and_after_the_timer(tmp_path):
    # a device interrupt open at the intended time holds the timer interrupt off;
    # the timer softirq after it and an NMI delay the thread
    evs = [ev(T0 - 2_000, E.IRQ_ENTRY, 36, 0, "virtio1-req"),
           ev(T0 + 2_000, E.IRQ_EXIT, 36, 1)] + wake_up(T0) + \
        [ev(T0 + 11_000, E.SOFTIRQ_ENTRY, 1), ev(T0 + 15_000, E.SOFTIRQ_EXIT, 1),
         ev(T0 + 17_000, E.NMI, 0xffffffff81000040, 1_000, flags=1),
         switch(T0 + 18_000, IDLE, PROBE)]
    att, _ = decompose(tmp_path, evs, [(1, T0, 20_000)])
    c = comps(att)
    assert c["irq"] == 2_000 and c["irq_latency"] == 1_000
    assert c["softirq"] == 4_000 and c["nmi"] == 1_000
    assert c["scheduling"] == 18_000 - 15_000 - 1_000
    parts = {(p["category"], p["name"]): p["ns"] for p in att["worst"][0]["parts"]}
    assert parts[("hardirq", "36 virtio1-req")] == 2_000
    assert parts[("softirq", "TIMER")] == 4_000
    assert sum(c.values()) == 20_000


def test_missing_switch_is_unaccounted_and_said(tmp_path):
    att, _ = decompose(tmp_path, wake_up(T0), [(1, T0, 30_000)])
    c = comps(att)
    # without the switch-in, the time after the interrupt is the idle task's: the
    # scheduler's, but the timeline is not whole
    assert att["decomposition"]["complete"] == 0
    assert sum(c.values()) == 30_000
    assert any("no whole wake-up path" in w for w in att["warnings"])


def test_switch_after_the_probe_read_is_negative_unaccounted(tmp_path):
    # the tracer's switch-in 3 us after the probe's own reading: clocks apart
    evs = wake_up(T0) + [switch(T0 + 17_000, IDLE, PROBE)]
    att, _ = decompose(tmp_path, evs, [(1, T0, 14_000)])
    c = comps(att)
    assert c["unaccounted"] == -3_000
    assert att["decomposition"]["within_tolerance"] == 0
    assert "unaccounted -3.0 us" in att["worst"][0]["chain"]


def test_missed_period_is_the_blocking_task_then_the_thread(tmp_path):
    # no sleep for this period: the spinner held the CPU until 300 us after it
    evs = [switch(T0 - 600_000, PROBE, SPIN)] + [switch(T0 + 300_000, SPIN, PROBE)]
    att, _ = decompose(tmp_path, evs, [(1, T0, 302_000)])
    c = comps(att)
    assert c["blocking"] == 300_000 and c["return"] == 2_000
    assert att["worst"][0]["dominant"] == "blocking"


def test_periods_that_passed_inside_a_long_interrupt_are_the_interrupts(tmp_path):
    # a timer interrupt the host held 30 ms, entered 1 ms before this period
    # (before the look-back): the period passed inside it, not in the lower
    # task it had interrupted, which then gave the CPU up at once (the test of
    # a FIFO 5 spinner, tests/test_wake.py, charged 30 such periods to it)
    evs = [switch(T0 - 2_000_000, IDLE, LOW),
           ev(T0 - 1_000_000, E.VEC_ENTRY, 236, LOCAL_TIMER, pid=LOW[1]),
           ev(T0 + 28_000_000, E.VEC_EXIT, 236, LOCAL_TIMER, pid=LOW[1]),
           switch(T0 + 28_010_000, LOW, PROBE)]
    att, _ = decompose(tmp_path, evs, [(1, T0, 28_012_000)])
    c = comps(att)
    assert "blocking" not in c, c
    assert c["irq"] == 28_000_000 and c["scheduling"] == 10_000 and c["return"] == 2_000
    w = att["worst"][0]
    assert w["dominant"] == "irq" and (w["category"], w["name"]) == ("timer tick", "local timer")


def test_outside_the_trace_and_table(tmp_path):
    evs = wake_up(T0) + [switch(T0 + 12_000, IDLE, PROBE)]
    att, _ = decompose(tmp_path, evs, [(1, T0, 14_000), (3, T0, 50_000)])
    assert {c["category"] for c in att["causes"]} >= {"not traced", "timer IRQ"}
    text = "\n".join(format_table(att))
    assert "late wake-ups taken apart: 2 outliers" in text
    assert "timer IRQ latency" in text and "decomposition.csv" in text
    with pytest.raises(UsageError):
        decompose(tmp_path, evs, [(1, T0, 14_000)], slack_ns=-1)


def test_no_event_at_all_is_unaccounted_not_the_thread(tmp_path):
    att, _ = decompose(tmp_path, [ev(T0 - 5 * 10**6, E.SOFTIRQ_RAISE, 1, pid=99)],
                       [(1, T0, 40_000)])
    assert comps(att) == {"unaccounted": 40_000}
    assert att["worst"][0]["dominant"] == "unaccounted"


def test_a_switch_the_kernel_did_not_record_leaves_the_hole_unaccounted(tmp_path):
    """Seen on a guest whose agent's thread comes and goes without a sched_switch
    (ftrace misses the same ones): the agent switched in, 3.1 ms without an
    event, then a switch whose prev is another task (rcu_preempt), to the probe.
    Who ran in between is not known: neither outlier may name a task for those
    instants (before: the first blamed the agent for 3.08 ms, the next one, a
    period later, rcu_preempt for 2.08 ms of the same time)."""
    agent, rcu = ("tokio-rt-worker", 81, 110), ("rcu_preempt", 15, 120)
    evs = [switch(T0 - 46_100, IDLE, agent),
           switch(T0 + 3_081_800, rcu, PROBE),
           switch(T0 + 3_103_300, PROBE, agent, preempted=False)]
    att, rows = decompose(tmp_path, evs, [(1, T0, 3_088_757), (1, T0 + 1_000_000, 2_092_602)])
    for w in att["worst"]:
        named = {p["name"] for p in w["parts"] if p["category"] == "task preemption"}
        assert not named, w
        c = w["components"]
        assert c == {"unaccounted": 3_081_800 - (w["start_ns"] - T0),
                     "return": w["length_ns"] - 3_081_800 + (w["start_ns"] - T0)}, w
    assert len(rows) == 2
    # the warning counts the one hole (the probe's switch-out after it is none)
    assert [w for w in att["warnings"] if "missing from the log" in w] == [
        "1 context switch is missing from the log (CPU 1: 1; a switch whose prev is "
        "not the task the switch before put on), and the tracer dropped none: the "
        "kernel made them without a sched_switch event; who ran in between is not known"]


def test_lower_priority_task_holding_the_cpu_long_blocks(tmp_path):
    # a task the log shows below the probe kept the CPU 200 us after the wake-up
    # (a non-preemptible section, or a priority it dropped before the switch)
    evs = [switch(T0 - 100_000, IDLE, LOW)] + wake_up(T0, cur=LOW[1]) + \
        [switch(T0 + 211_000, LOW, PROBE)]
    att, _ = decompose(tmp_path, evs, [(1, T0, 213_000)])
    c = comps(att)
    assert c["blocking"] == 200_000 and "scheduling" not in c
    assert (att["worst"][0]["name"], att["worst"][0]["parts"][0]["pid"]) == ("low", 778)


BUSY = ("python3", 779, 120)    # a normal task


def test_host_steal_inside_the_blocking_span_is_the_hosts_first(tmp_path):
    """A FIFO 80 probe woken while a normal task runs, that task switched out
    1.3 ms later; the host's steal counter moved 780 us between the CPU's looks
    around it: the host took those 780 us, the task only what is left, and the
    decomposition shows the host as its own component."""
    evs = [switch(T0 - 100_000, IDLE, BUSY)] + wake_up(T0, cur=BUSY[1]) + \
        [ev(T0 + 1_300_000, E.STEAL, 5_780_000, 5_000_000),
         switch(T0 + 1_311_000, BUSY, PROBE)]
    att, rows = decompose(tmp_path, evs, [(1, T0, 1_313_000)], steal=True)
    c = comps(att)
    assert c["host"] == 780_000
    assert sum(c.values()) == 1_313_000
    # the reading spans the timer interrupt's exit to the task's switch-out: the
    # blocking loses what the host took of it, in proportion
    assert c["blocking"] < 1_300_000 - 11_000 - 700_000, c
    w = att["worst"][0]
    parts = {(p["category"], p["name"]): p["ns"] for p in w["parts"]}
    assert parts[("no kernel event", "host preemption (steal)")] == 780_000
    assert parts[("task preemption", "python3")] == c["blocking"]
    assert (w["category"], w["name"]) == ("no kernel event", "host preemption (steal)")
    d = {x["component"]: x for x in att["decomposition"]["components"]}
    assert d["host"]["total_ns"] == 780_000
    assert "host_ns" in W.CSV_HEAD and rows[0][3]["host"] == 780_000


def test_idle_keeping_a_woken_fifo_thread_waiting_is_rt_throttling(tmp_path):
    """The CPU stays idle 40 ms after a FIFO thread's wake-up: only the kernel's
    RT throttling keeps a runnable real-time thread off an idle CPU."""
    evs = wake_up(T0) + [switch(T0 + 40_011_000, IDLE, PROBE)]
    att, _ = decompose(tmp_path, evs, [(1, T0, 40_013_000)])
    w = att["worst"][0]
    assert (w["category"], w["name"]) == ("RT throttling",
                                          "sched_rt_runtime_us 950000 of 1000000")
    assert comps(att)["blocking"] == 40_000_000
    # a normal-priority thread waiting for an idle CPU is the scheduling's own time
    att, _ = decompose(tmp_path / "x", evs, [(1, T0, 40_013_000)], prio=0) if \
        (tmp_path / "x").mkdir() is None else None
    assert not any(c["category"] == "RT throttling" for c in att["causes"])


def test_idle_keeping_a_fifo_thread_waiting_unthrottled_is_a_stall_of_the_machine(tmp_path):
    """The CPU stays idle 21 ms after a FIFO thread's wake-up, with nothing on it
    (no event until the switch-in) and its RT runqueue far from throttled (the
    CPU idle the second before): the machine held the CPU (VM exits, SMI or the
    hardware: a shared VM's vCPU once), not the scheduling, whose switch out of
    idle takes microseconds; where the host's steal counter moved over it, the
    host's preemption."""
    begin = T0 - 1_100_000_000
    quiet = [switch(begin + 1_000, LOW, IDLE, preempted=False)]
    hold = wake_up(T0) + [switch(T0 + 21_011_000, IDLE, PROBE)]
    att, rows = decompose(tmp_path / "q", quiet + hold, [(1, T0, 21_013_000)], begin=begin) \
        if (tmp_path / "q").mkdir() is None else None
    c = comps(att)
    assert c["stall"] == 21_000_000 and "scheduling" not in c and "blocking" not in c
    w = att["worst"][0]
    assert (w["category"], w["name"]) == ("no kernel event", "VM exits, SMI or hardware")
    assert w["dominant"] == "stall" and "machine stall (no kernel event) 21.00 ms" in w["chain"]
    assert w["traced_ns"] == 21_013_000 - 3_000 - 21_000_000
    assert sum(p["ns"] for p in w["parts"]) == w["length_ns"]
    assert [x for x in att["decomposition"]["components"] if x["component"] == "stall"]
    # the steal counter moved by 15 ms inside it: that much is the host's
    steal = [ev(T0 + 21_011_000, E.STEAL, 15_000_000, 0, pid=0)]
    att, _ = decompose(tmp_path / "s", quiet + hold + steal, [(1, T0, 21_013_000)],
                       begin=begin, steal=True) if (tmp_path / "s").mkdir() is None else None
    c = comps(att)
    assert c["host"] == 15_000_000 and 5_900_000 <= c["stall"] <= 6_100_000, c
    # a normal-priority thread waiting that long for an idle CPU stays the
    # scheduling (CFS bandwidth throttling can hold it)
    normal = [e[:6] + (1 | 120 << 32,) + e[7:] if e[3] in (E.WAKING, E.WAKEUP) else e
              for e in wake_up(T0)] + [switch(T0 + 21_011_000, IDLE, ("jtr-wake", TID, 120))]
    att, _ = decompose(tmp_path / "n", quiet + normal, [(1, T0, 21_013_000)], begin=begin,
                       prio=0) if (tmp_path / "n").mkdir() is None else None
    assert comps(att)["scheduling"] == 21_000_000 and "stall" not in comps(att)


def test_an_idle_cpu_is_rt_throttling_only_after_the_rt_runtime_was_spent(tmp_path):
    """The kernel throttles a CPU's RT runqueue only after its real-time tasks ran
    sched_rt_runtime_us (950 ms) of the period: after a second the CPU spent idle,
    an idle CPU that kept the woken FIFO thread waiting 40 us is the scheduling
    (the host, a slow exit from idle), not RT throttling; after a FIFO spinner
    ran 960 ms of it, it is."""
    begin = T0 - 1_100_000_000
    quiet = [switch(begin + 1_000, LOW, IDLE, preempted=False)]
    hold = wake_up(T0) + [switch(T0 + 51_000, IDLE, PROBE)]
    att, _ = decompose(tmp_path / "q", quiet + hold, [(1, T0, 53_000)], begin=begin) if \
        (tmp_path / "q").mkdir() is None else None
    c = comps(att)
    assert "blocking" not in c and c["scheduling"] == 40_000
    assert not any(x["category"] == "RT throttling" for x in att["causes"])
    busy = [switch(begin + 1_000, LOW, SPIN, preempted=False),
            switch(T0 - 40_000_000, SPIN, IDLE, preempted=False)]    # ran 1.02 s, then idle
    att, _ = decompose(tmp_path / "b", busy + hold, [(1, T0, 53_000)], begin=begin) if \
        (tmp_path / "b").mkdir() is None else None
    assert comps(att)["blocking"] == 40_000
    w = att["worst"][0]
    assert (w["category"], w["name"]) == ("RT throttling",
                                          "sched_rt_runtime_us 950000 of 1000000")


def test_overlapping_late_wake_ups_count_each_instant_once(tmp_path):
    """A spinner holds the CPU 5 ms: the five 1 ms periods due in it are five
    outliers whose windows overlap; the causes' totals count each instant once
    (the spin's 5 ms), not five times, and never more than the run."""
    evs = [switch(T0 - 100_000, IDLE, SPIN)] + wake_up(T0, cur=SPIN[1]) + \
        [switch(T0 + 5_000_000, SPIN, PROBE, preempted=False)]
    outs = [(1, T0 + k * 1_000_000, 5_002_000 - k * 1_000_000) for k in range(5)]
    att, _ = decompose(tmp_path, evs, outs)
    total = sum(c["total_ns"] for c in att["causes"])
    assert total == att["outliers"]["total_ns"] == 5_002_000
    assert att["outliers"]["summed_ns"] == sum(o[2] for o in outs)
    spin = [c for c in att["causes"] if c["name"] == "spin"][0]
    assert spin["total_ns"] <= 5_000_000 and spin["count"] >= 1
    d = {x["component"]: x for x in att["decomposition"]["components"]}
    assert sum(x["total_ns"] for x in d.values()) == 5_002_000



@pytest.mark.parametrize("stolen", [780_001, 433_337, 123_457])
def test_host_steal_cut_leaves_parts_adding_up_to_the_latency(tmp_path, stolen):
    """The host's steal read once over the timer interrupt and the blocking task
    after it: the steal is taken from both in proportion, to the ns, and the
    outlier's parts add up to its length (rounded per component, 1 ns was lost
    into unaccounted -1 ns and the parts came to the length + 1)."""
    evs = [switch(T0 - 100_000, IDLE, BUSY)] + wake_up(T0, cur=BUSY[1]) + \
        [ev(T0 + 1_300_000, E.STEAL, 5_000_000 + stolen, 5_000_000),
         switch(T0 + 1_311_007, BUSY, PROBE)]
    att, _ = decompose(tmp_path, evs, [(1, T0, 1_313_011)], steal=True)
    w = att["worst"][0]
    c = w["components"]
    assert c["host"] == stolen and c.get("unaccounted", 0) == 0, c
    assert sum(c.values()) == 1_313_011
    assert sum(p["ns"] for p in w["parts"]) == w["length_ns"] == 1_313_011, w["parts"]
    assert c["timer_irq"] < 8_000 and c["blocking"] < 1_300_000 - 11_000 - stolen // 2, c


def test_the_steal_readings_of_an_outlier_are_found_by_bisection():
    """_overlapping: the readings whose span (prev, ts] overlaps the outlier, the
    same as a walk over all of them (which took minutes for 40,000 late
    wake-ups against a counter read at every switch)."""
    rng = random.Random(5)
    ts, readings, look = 0, [], 0
    for _ in range(3000):
        ts += rng.randint(1, 50)
        if rng.random() < 0.7:
            look = rng.randint(look, ts - 1) if ts - 1 > look else look
        readings.append((ts, look, rng.randint(0, 9), 0))
    keys = [r[0] for r in readings]
    for _ in range(500):
        lo = rng.randint(-10, ts + 10)
        hi = lo + rng.randint(0, 400)
        want = [r for r in readings if r[0] > lo and r[1] < hi]
        assert list(W._overlapping(readings, keys, lo, hi)) == want, (lo, hi)
    assert W._overlapping((), None, 0, 10) == ()


def test_a_normal_task_keeping_a_woken_fifo_thread_waiting_is_rt_throttling(tmp_path):
    """A normal task runs on 40 ms after a FIFO thread's wake-up on its CPU:
    the kernel lets a task below a runnable real-time one run only when it
    throttles the RT runqueue (since 6.12 its fair server runs the normal tasks
    50 ms a second), so the 40 ms are RT throttling, not the task; where the RT
    runqueue cannot have been throttled (the CPU idle the second before), the
    task is named as before."""
    normal = ("bash", 779, 120)
    hold = [switch(T0 - 100_000, IDLE, normal)] + wake_up(T0, cur=normal[1]) + \
        [switch(T0 + 40_011_000, normal, PROBE)]
    att, _ = decompose(tmp_path / "t", hold, [(1, T0, 40_013_000)]) if \
        (tmp_path / "t").mkdir() is None else None
    w = att["worst"][0]
    assert (w["category"], w["name"]) == ("RT throttling",
                                          "sched_rt_runtime_us 950000 of 1000000")
    assert not any(c["category"] == "task preemption" for c in att["causes"])
    begin = T0 - 1_100_000_000
    quiet = [switch(begin + 1_000, normal, IDLE, preempted=False)]
    att, _ = decompose(tmp_path / "q", quiet + hold, [(1, T0, 40_013_000)], begin=begin) if \
        (tmp_path / "q").mkdir() is None else None
    w = att["worst"][0]
    assert (w["category"], w["name"]) == ("task preemption", "bash")


def test_each_outliers_main_category_is_kept_in_the_order_given(tmp_path):
    """per_outlier: the page colours every late wake-up by its main cause, in
    outliers.csv's order, whatever order the decomposition took them in."""
    from jtrpy.attribution.attribute import categories_of
    evs = wake_up(T0) + [switch(T0 + 12_000, IDLE, PROBE)]
    # given out of time order, one outside the trace (CPU 3)
    att, _ = decompose(tmp_path, evs, [(3, T0, 50_000), (1, T0, 14_000)])
    cats = categories_of(att)
    assert cats[0] == "not traced" and len(cats) == 2
    main = max(att["causes"], key=lambda c: c["total_ns"] if c["category"] != "not traced"
               else -1)
    assert cats[1] == main["category"]
