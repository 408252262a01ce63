# SPDX-License-Identifier: GPL-2.0-only
"""The numpy path of attribution (attribution/vector.py) against the plain
walker: the same attribution, to the byte, on random logs full of what makes the
walker's rules matter, and the fast path really taking the simple windows."""
import random

import numpy as np
import pytest

from jtrpy.attribution import attribute as A
from jtrpy.attribution import vector as V
from jtrpy.results.outliers import read_outliers_file
from jtrpy.trace import events as E

T0 = 1_000_000_000_000
PROBE, KWORKER, FIFO, OTHER = 812, 123, 4242, 77
SYM = {"tick_sched_timer": 0xffffffff81000010, "hrtimer_wakeup": 0xffffffff81000020,
       "vmstat_update": 0xffffffff81000030, "process_timeout": 0xffffffff81000040}
GAP, KW, SPIN = ("gap/1", PROBE, 120), ("kworker/1:2", KWORKER, 120), ("fifo-spin", FIFO, 9)


def blocks(rnd, cpu, s, probe_waits):
    """The events of one random episode of interference at s on cpu, and how long
    the probe's outlier around it could be."""
    def ev(dt, typ, a=0, b=0, raw=None, pid=PROBE, flags=0):
        """One record dt ns after s."""
        return (s + dt, pid, cpu, typ, flags, a, b, raw)

    def sw(dt, prev, nxt, preempted=True, comm=True):
        """A sched_switch dt ns after s."""
        return ev(dt, E.SWITCH, prev[1] | nxt[1] << 32, prev[2] | nxt[2] << 16,
                  (prev[0], nxt[0] if comm else ""), pid=prev[1], flags=int(preempted))

    kind = rnd.randrange(16)
    soft = rnd.choice((0, 0, 800, 5000))
    if kind <= 3:       # a tick, maybe its softirq (joined or not), maybe lost events
        out = [ev(300, E.VEC_ENTRY, 236, 0), ev(600, E.HRTIMER_ENTRY, 1, SYM["tick_sched_timer"]),
               ev(2000, E.HRTIMER_EXIT, 1), ev(2500, E.VEC_EXIT, 236, 0)]
        if soft:
            out += [ev(2700 + rnd.choice((0, 3000)), E.SOFTIRQ_ENTRY, 1),
                    ev(2900, E.TIMER_ENTRY, 2, SYM["process_timeout"]),
                    ev(3000 + soft // 2, E.TIMER_EXIT, 2), ev(3500 + soft, E.SOFTIRQ_EXIT, 1)]
        if rnd.random() < 0.15:
            del out[rnd.randrange(len(out))]        # an entry or exit the tracer lost
        return out, 4000 + soft
    if kind <= 5:       # a device irq with NET_RX, named by its action
        n = rnd.choice((36, 37))
        return [ev(200, E.IRQ_ENTRY, n, 0, "virtio%d-req" % (n - 35)), ev(900, E.SOFTIRQ_RAISE, 3),
                ev(1800, E.IRQ_EXIT, n, 1), ev(1900, E.SOFTIRQ_ENTRY, 3),
                ev(1900 + max(soft, 300), E.SOFTIRQ_EXIT, 3)], 2500 + soft
    if kind == 6:       # an irq exit alone (its entry before the trace or lost)
        return [ev(700, E.IRQ_EXIT, 36, 1)], 1500
    if kind == 7:       # a kworker preempts the probe, maybe without the switch back
        n = rnd.randint(5_000, 40_000)
        out = [sw(500, GAP, KW), ev(800, E.WQ_START, 3, SYM["vmstat_update"], pid=KWORKER),
               ev(n - 1000, E.WQ_END, 3, SYM["vmstat_update"], pid=KWORKER)]
        if rnd.random() < 0.8:
            out.append(sw(n, KW, GAP, False))
        return out, n + 500
    if kind == 8:       # the tick wakes a FIFO task, which preempts the probe
        return [ev(300, E.VEC_ENTRY, 236, 0), ev(600, E.HRTIMER_ENTRY, 4, SYM["hrtimer_wakeup"]),
                ev(700, E.WAKING, FIFO, 1 | 9 << 32, "fifo-spin"), ev(1200, E.HRTIMER_EXIT, 4),
                ev(1500, E.VEC_EXIT, 236, 0), sw(1800, GAP, SPIN, comm=rnd.random() < 0.7),
                sw(30_000, SPIN, GAP, False)], 30_500
    if kind == 9:       # an IPI, an NMI, a page fault
        return [ev(400, E.VEC_ENTRY, 251, 2), ev(2400, E.VEC_EXIT, 251, 2),
                ev(2600, E.NMI, 0xffffffff81000050, 900, flags=1),
                ev(2800, E.PF_USER, 0x1000, 0xffffffff81000060)], 3000
    if kind == 10 and probe_waits:      # the probe waits, a task runs, it is woken
        return [sw(300, GAP, ("bash", OTHER, 120), False),
                sw(3000, ("bash", OTHER, 120), ("swapper/1", 0, 120), False),
                ev(3300, E.VEC_ENTRY, 236, 0), ev(3900, E.VEC_EXIT, 236, 0),
                sw(4000, ("swapper/1", 0, 120), GAP, False)], 4500
    if kind == 11:      # a workqueue item with no switch seen, a switch among others
        return [ev(500, E.WQ_START, 9, SYM["vmstat_update"], pid=KWORKER),
                ev(1500, E.WQ_END, 9, SYM["vmstat_update"], pid=KWORKER),
                sw(1700, ("bash", OTHER, 120), KW)], 2000
    if kind == 12:      # a softirq alone, after an earlier interrupt or not
        return [ev(300, E.SOFTIRQ_ENTRY, 9), ev(300 + max(soft, 500), E.SOFTIRQ_EXIT, 9)], \
            1000 + soft
    if kind == 13:      # a mismatched exit and an unknown type
        return [ev(300, E.VEC_ENTRY, 236, 0), ev(500, E.IRQ_EXIT, 40, 1),
                ev(800, E.VEC_EXIT, 236, 0), ev(900, 99, 1, 2)], 1500
    if kind == 14:      # only passive events
        return [ev(300, E.WAKING, OTHER, 1, "bash"), ev(400, E.SOFTIRQ_RAISE, 3)], \
            rnd.randint(1000, 3000)
    return [], rnd.randint(1000, 30_000)     # nothing: no kernel event


def random_log(folder, seed, n=300, cpus=(1, 2), probe_waits=False):
    """A log of n episodes of interference over cpus and their outliers: windows
    around them, some late, some overlapping, some outside the trace."""
    rnd = random.Random(seed)
    events, outliers = [], []
    t = T0 + 2_000_000
    for _ in range(n):
        t += rnd.choice((2_000, 50_000, 60_000, 2_000_000))
        cpu = rnd.choice(cpus)
        evs, length = blocks(rnd, cpu, t, probe_waits)
        events += evs
        for _ in range(rnd.choice((0, 1, 1, 1, 2))):
            start = t + rnd.choice((0, 0, 100, -200, -5000, 2000, 40_000))
            outliers.append((cpu, max(0, start), max(1, length + rnd.randint(-2500, 2500))))
        if rnd.random() < 0.1:
            events.append((t + 70_000, 99, rnd.choice(cpus), E.WAKING, 0, OTHER, 1, "bash"))
    end = t + 100_000
    outliers += [(1, T0 - 5000, 3000), (3, T0 + 3_000_000, 3000), (1, end + 10, 500)]
    rnd.shuffle(outliers)
    events.sort(key=lambda e: e[0])
    for i in range(1, len(events) - 1, 31):     # the tracer's order is nearly sorted
        events[i], events[i + 1] = events[i + 1], events[i]
    E.write_events(folder, events, T0, end, meta={
        "symbols": {"0x%x" % a: n for n, a in SYM.items()}, "cpus": list(cpus),
        "backend": "ebpf"})
    return outliers


def result(cpus):
    """A gap result with a run per CPU."""
    return {"format": "jtr-result/1", "tool": "gap", "runs": [
        {"cpu": c, "duration_ns": 10**9, "start_mono_ns": T0} for c in cpus]}


def both(monkeypatch, folder, outliers, cpus, **kw):
    """The attribution of the plain walker and of the numpy path."""
    out = []
    for mode in ("0", "1"):
        monkeypatch.setenv("JTR_NUMPY", mode)
        log = E.read_events(folder)
        assert (log.arrays(None) is None) == (mode == "0")
        rows = np.array(outliers, dtype=np.uint64) if mode == "1" else outliers
        out.append(A.attribute(result(cpus), rows, log, **kw))
    return out


@pytest.mark.parametrize("seed", range(24))
def test_numpy_path_gives_the_walkers_attribution(tmp_path, monkeypatch, seed):
    cpus = (1, 2) if seed % 3 else (1,)
    outliers = random_log(str(tmp_path), seed, cpus=cpus, probe_waits=seed % 4 == 0)
    plain, fast = both(monkeypatch, str(tmp_path), outliers, cpus, top=seed % 7)
    assert fast == plain


def test_fast_path_takes_the_simple_windows(tmp_path, monkeypatch):
    """Windows of every simple kind are charged by numpy, a good share of this
    deliberately tangled log (else the test above would only compare the walker
    with itself; the bench's log of ticks, irqs and preemptions: all of them)."""
    outliers = random_log(str(tmp_path), 99, n=400, cpus=(1,))
    log = E.read_events(str(tmp_path))
    pids, comms = V.switches(np, log)
    assert pids == {1: PROBE}
    ours = np.array([o for o in outliers if o[0] == 1 and T0 <= o[1] <= log.end_ns], np.int64)
    outs = np.stack([ours[:, 1], ours[:, 1] + ours[:, 2], np.arange(len(ours))], axis=1)
    w = V.plan(np, log, 1, outs, A.DEFAULT_SLACK_NS, A.LOOKBACK_EVENTS, A.LOOKBACK_NS,
               A.ENTRY_ALLOWANCE_NS, len(log.vectors), None, PROBE, comms)
    assert w.fast.mean() > 0.25, w.fast.mean()
    kinds = set((w.code[w.fast] & ~V.KIND).tolist())
    assert {V.VEC, V.IRQ, V.SOFTIRQ, V.PREEMPT, V.OTHER, V.NO_EVENT} <= kinds
    plain, fast = both(monkeypatch, str(tmp_path), outliers, (1,))
    assert fast == plain


def test_switches_as_scan_switches(tmp_path, monkeypatch):
    random_log(str(tmp_path), 5, cpus=(1, 2), probe_waits=True)
    programs = {2: "gap/1"}
    monkeypatch.setenv("JTR_NUMPY", "0")
    want = A.scan_switches(E.read_events(str(tmp_path)), programs)
    monkeypatch.setenv("JTR_NUMPY", "1")
    pids, comms = V.switches(np, E.read_events(str(tmp_path)), programs)
    assert pids == want[0]
    assert {p: comms.get(p) for p in want[1]} == want[1]
    assert comms.get(123456) is None


def test_outlier_log_read_with_numpy_or_without(tmp_path, monkeypatch):
    p = tmp_path / "outliers.csv"
    p.write_text("cpu,start_ns,length_ns\n1,%d,500\n2,18446744073709551614,7\n" % T0)
    monkeypatch.setenv("JTR_NUMPY", "1")
    table = read_outliers_file(str(p), table=True)
    assert table.array is not None and table.array.dtype == np.uint64
    assert table.rows == [(1, T0, 500), (2, 18446744073709551614, 7)]
    # blank lines and numbers past 2^64 - 1 (read as it by numpy) take the exact path
    p.write_text("cpu,start_ns,length_ns\n1,5,6\n\n2,7,8\n")
    table = read_outliers_file(str(p), table=True)
    assert table.array is None and table.rows == [(1, 5, 6), (2, 7, 8)]
    p.write_text("cpu,start_ns,length_ns\n1,18446744073709551616,6\n")
    with pytest.raises(Exception, match="outliers.csv:2"):
        read_outliers_file(str(p), table=True)
    monkeypatch.setenv("JTR_NUMPY", "0")
    p.write_text("cpu,start_ns,length_ns\n1,5,6\n")
    table = read_outliers_file(str(p), table=True)
    assert table.array is None and table.outliers() == [(1, 5, 6)]


def test_event_index_as_arrays_or_lists(tmp_path, monkeypatch):
    random_log(str(tmp_path), 3)
    monkeypatch.setenv("JTR_NUMPY", "0")
    plain = E.read_events(str(tmp_path))
    monkeypatch.setenv("JTR_NUMPY", "1")
    fast = E.read_events(str(tmp_path))
    # numpy's: 8-byte int arrays (array.array), the plain reader's: lists
    assert {c: list(v) for c, v in fast.cpu_ts.items()} == plain.cpu_ts
    assert {c: list(v) for c, v in fast.cpu_index.items()} == plain.cpu_index
    assert all(v.itemsize == 8 for v in fast.cpu_ts.values())
    assert (fast.start_ns, fast.end_ns, fast.meta["cpus"]) == (
        plain.start_ns, plain.end_ns, plain.meta["cpus"])
    lo, hi = plain.cpu_ts[1][10], plain.cpu_ts[1][20]
    fast = E.read_events(str(tmp_path))
    assert fast.window(1, lo, hi) == plain.window(1, lo, hi)
