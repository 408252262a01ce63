"""jtr wake's decomposition: synthetic wake-up timelines, component by component."""
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


def decompose(tmp_path, events, outliers, prio=80, **kw):
    E.write_events(str(tmp_path), events, T0 - 10**7, T0 + 10**9,
                   meta={"symbols": SYMBOLS, "cpus": [1], "backend": "ebpf"})
    log = E.read_events(str(tmp_path))
    res = {"tool": "wake", "privileges": {"fifo_priority": prio},
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
    assert text[1].startswith("1,%d,14000,3000,8000,0,0,0,0,1000,2000,0,0,timer_irq," % T0)


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
    assert (w["category"], w["name"]) == ("task preemption", "spin (pid 777, prio 9)")
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


def test_lower_priority_task_holding_the_cpu_long_blocks(tmp_path):
    # a task the log shows below the probe kept the CPU 200 us after the wake-up
    # (a non-preemptible section, or a priority it dropped before the switch)
    evs = [switch(T0 - 100_000, IDLE, LOW)] + wake_up(T0, cur=LOW[1]) + \
        [switch(T0 + 211_000, LOW, PROBE)]
    att, _ = decompose(tmp_path, evs, [(1, T0, 213_000)])
    c = comps(att)
    assert c["blocking"] == 200_000 and "scheduling" not in c
    assert att["worst"][0]["name"] == "low (pid 778, prio 89)"
