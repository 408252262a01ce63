# SPDX-License-Identifier: GPL-2.0-only
"""formats/perfetto.py: synthetic kernel-event logs (trace/events.py write_events)
and outliers as Trace Event JSON: entries paired with exits, nesting per thread,
the tracks of each CPU, outliers with their causes, pieces that join to one file."""
import json
import os
import re

import jsonschema
import pytest

from jtrpy.formats import perfetto as P
from jtrpy.results.outliers import OutlierLog
from jtrpy.trace import events as E

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..")
T0 = 1_000_000_000_000
END = T0 + 1_000_000
PROBE = ("jtr-gap", 812, 120)
KWORKER = ("kworker/1:2", 77, 120)
SYM = {0xffffffff81000010: "tick_nohz_handler", 0xffffffff81000030: "vmstat_update",
       0xffffffff81000040: "perf_event_nmi_handler", 0xffffffff81000050: "process_timeout"}
LOCAL_TIMER, RESCHEDULE = 4, 5      # places in E.VECTOR_KINDS order below
VECTORS = ["call_function", "call_function_single", "error_apic", "irq_work", "local_timer",
           "reschedule", "spurious_apic", "thermal_apic", "x86_platform_ipi"]


@pytest.fixture(scope="module")
def schema():
    with open(os.path.join(ROOT, "docs", "perfetto-trace.schema.json")) as f:
        return jsonschema.Draft202012Validator(json.load(f))


def ev(ts, typ, a=0, b=0, raw=None, cpu=1, pid=812, flags=0):
    """One record as write_events takes it (ts relative to T0)."""
    return (T0 + ts, pid, cpu, typ, flags, a, b, raw)


def switch(ts, prev, nxt, preempted=True, cpu=1):
    """sched_switch from prev=(comm, pid, prio) to nxt."""
    return ev(ts, E.SWITCH, prev[1] | nxt[1] << 32,
              prev[2] | nxt[2] << 16 | (0 if preempted else 1) << 32,
              (prev[0], nxt[0]), cpu=cpu, pid=prev[1], flags=1 if preempted else 0)


def tick(ts, cpu=1):
    """The local timer at ts with its hrtimer inside, 3 us in all."""
    return [ev(ts, E.VEC_ENTRY, 236, LOCAL_TIMER, cpu=cpu),
            ev(ts + 500, E.HRTIMER_ENTRY, 0xffff0001, 0xffffffff81000010,
               (T0 + ts - 100, 0, 0, 0), cpu=cpu),
            ev(ts + 2500, E.HRTIMER_EXIT, 0xffff0001, cpu=cpu),
            ev(ts + 3000, E.VEC_EXIT, 236, LOCAL_TIMER, cpu=cpu)]


def export(tmp_path, events, outliers=(), runs=(), cpus=(1,), schema=None):
    """The trace of a synthetic log: (the JSON document, its text)."""
    E.write_events(str(tmp_path), sorted(events), T0, END, meta={
        "symbols": {"0x%x" % k: v for k, v in SYM.items()}, "cpus": list(cpus),
        "vectors": VECTORS})
    log = E.read_events(str(tmp_path))
    text = "".join(P.trace_chunks(log, outliers, runs, {"result": "synthetic"}))
    doc = json.loads(text)
    if schema is not None:
        errors = [e.message for e in schema.iter_errors(doc)]
        assert not errors, errors[:5]
    assert nesting_errors(doc) == []
    return doc, text


def nesting_errors(doc):
    """Slices of one thread that overlap part-way (Perfetto needs them nested)."""
    by = {}
    for e in doc["traceEvents"]:
        if e["ph"] == "X":
            assert e["ts"] >= 0 and e["dur"] >= 0, e
            by.setdefault(e["tid"], []).append((ns(e["ts"]), ns(e["dur"]), e["name"]))
    bad = []
    for tid, slices in by.items():
        stack = []
        for ts, dur, name in sorted(slices, key=lambda s: (s[0], -s[1])):
            while stack and stack[-1] <= ts:
                stack.pop()
            if stack and stack[-1] < ts + dur:
                bad.append((tid, name, ts, dur))
            stack.append(ts + dur)
    return bad


def ns(us):
    return round(us * 1000)


def tid(cpu, track):
    return (P.PID_BASE + cpu) * 100 + track


def slices(doc, track, cpu=1):
    """[(start ns from T0, dur ns, name, args)] of one thread, in time order."""
    out = [(ns(e["ts"]), ns(e["dur"]), e["name"], e["args"]) for e in doc["traceEvents"]
           if e["ph"] == "X" and e["tid"] == tid(cpu, track)]
    return sorted(out, key=lambda s: (s[0], -s[1]))


def instants(doc, track, cpu=1):
    return [(ns(e["ts"]), e["name"], e["args"]) for e in doc["traceEvents"]
            if e["ph"] == "i" and e["tid"] == tid(cpu, track)]


def thread_names(doc, cpu=1):
    return {e["tid"] - (P.PID_BASE + cpu) * 100: e["args"]["name"] for e in doc["traceEvents"]
            if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == P.PID_BASE + cpu}


def test_interrupts_pair_and_nest(tmp_path, schema):
    events = tick(10_000) + [
        ev(20_000, E.IRQ_ENTRY, 36, 0, "virtio1-req.0"),
        ev(24_000, E.IRQ_EXIT, 36, 1),
        ev(24_100, E.SOFTIRQ_RAISE, 4),
        ev(24_500, E.SOFTIRQ_ENTRY, 4),
        ev(25_000, E.IRQ_ENTRY, 36, 0, "virtio1-req.0"),     # an irq inside the softirq
        ev(25_700, E.IRQ_EXIT, 36, 1),
        ev(27_500, E.SOFTIRQ_EXIT, 4),
        ev(30_000, E.VEC_ENTRY, 253, RESCHEDULE),
        ev(30_800, E.VEC_EXIT, 253, RESCHEDULE),
        ev(40_000, E.SOFTIRQ_ENTRY, 1),
        ev(40_200, E.TIMER_ENTRY, 0xffff0002, 0xffffffff81000050),
        ev(41_200, E.TIMER_EXIT, 0xffff0002),
        ev(42_000, E.SOFTIRQ_EXIT, 1),
        ev(50_000, E.NMI, 0xffffffff81000040, 1500, flags=1),
    ]
    doc, _ = export(tmp_path, events, schema=schema)
    irq = slices(doc, P.INTERRUPTS)
    assert [(s, d, n) for s, d, n, _ in irq] == [
        (10_000, 3000, "local timer"), (10_500, 2000, "hrtimer tick_nohz_handler"),
        (20_000, 4000, "irq 36 virtio1-req.0"), (25_000, 700, "irq 36 virtio1-req.0"),
        (30_000, 800, "reschedule"), (48_500, 1500, "NMI perf_event_nmi_handler")]
    assert irq[1][3] == {"function": "tick_nohz_handler", "late_ns": 600}
    assert irq[2][3] == {"irq": 36, "action": "virtio1-req.0", "ret": "handled"}
    cats = {e["name"]: e["cat"] for e in doc["traceEvents"] if e["ph"] == "X"}
    assert cats["local timer"] == "timer tick" and cats["reschedule"] == "IPI"
    assert cats["irq 36 virtio1-req.0"] == "hardirq"
    soft = slices(doc, P.SOFTIRQS)
    assert [(s, d, n) for s, d, n, _ in soft] == [
        (24_500, 3000, "softirq BLOCK"), (40_000, 2000, "softirq TIMER"),
        (40_200, 1000, "timer process_timeout")]
    assert instants(doc, P.SOFTIRQS) == []      # raises are left out
    assert thread_names(doc) == {P.INTERRUPTS: "interrupts", P.SOFTIRQS: "softirqs"}
    names = {e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "process_name"}
    assert names == {"CPU 1"}


def test_exits_not_in_the_log(tmp_path, schema):
    events = [
        ev(1_000, E.IRQ_EXIT, 36, 1),                       # its entry before the log
        ev(5_000, E.VEC_ENTRY, 236, LOCAL_TIMER),
        ev(5_500, E.HRTIMER_ENTRY, 0xffff0001, 0xffffffff81000010),   # exit lost
        ev(9_000, E.VEC_EXIT, 236, LOCAL_TIMER),
        ev(20_000, E.SOFTIRQ_ENTRY, 9),                     # still running at the end
    ]
    doc, _ = export(tmp_path, events, schema=schema)
    irq = slices(doc, P.INTERRUPTS)
    assert [(s, d, n) for s, d, n, _ in irq] == [
        (5_000, 4000, "local timer"), (5_500, 3500, "hrtimer tick_nohz_handler")]
    assert irq[1][3]["exit"] == P.NO_EXIT and "exit" not in irq[0][3]
    [(at, name, args)] = instants(doc, P.INTERRUPTS)
    assert (at, name) == (1_000, "irq 36 (entry not in the log)")
    assert args["event"] == "irq_handler_exit 36 ret=handled"
    [soft] = slices(doc, P.SOFTIRQS)
    assert soft[:3] == (20_000, END - T0 - 20_000, "softirq RCU")
    assert soft[3]["exit"] == P.NO_EXIT


def test_tasks_who_ran_and_workqueue_items(tmp_path, schema):
    events = [
        ev(2_000, E.PF_USER, 0x7f0000001000, 0x401000, (6, 0, 0, 0)),
        switch(10_000, PROBE, KWORKER),
        ev(11_000, E.WQ_START, 0xffff8000, 0xffffffff81000030, pid=77),
        ev(15_000, E.WQ_END, 0xffff8000, pid=77),
        ev(16_000, E.WQ_START, 0xffff9000, 0xffffffff81000030, pid=77),
        switch(18_000, KWORKER, PROBE, preempted=False),   # it slept inside the item
        ev(19_000, E.WAKING, 77, 1 | 120 << 32, "kworker/1:2"),
        switch(20_000, PROBE, KWORKER),
        ev(21_000, E.WQ_END, 0xffff9000, pid=77),           # the item cut at the switch
        switch(22_000, KWORKER, PROBE, preempted=False),
    ]
    doc, _ = export(tmp_path, events, schema=schema)
    tasks = slices(doc, P.TASKS)
    assert [(s, d, n) for s, d, n, _ in tasks] == [
        (0, 10_000, "jtr-gap (pid 812)"),           # from the log's start
        (10_000, 8_000, "kworker/1:2 (pid 77)"),
        (11_000, 4_000, "workqueue vmstat_update"),
        (16_000, 2_000, "workqueue vmstat_update"),
        (18_000, 2_000, "jtr-gap (pid 812)"),
        (20_000, 2_000, "kworker/1:2 (pid 77)"),
        (22_000, END - T0 - 22_000, "jtr-gap (pid 812)")]
    assert tasks[0][3]["state"] == "R+" and "since" in tasks[0][3]
    assert tasks[1][3] == {"pid": 77, "prio": 120, "state": "S"}
    assert tasks[3][3]["switched out"] is True
    assert tasks[-1][3]["until"] == "the log's end"
    marks = instants(doc, P.TASKS)
    assert [(t, n) for t, n, _ in marks] == [(2_000, "page fault user"),
                                             (19_000, "waking kworker/1:2 (pid 77)")]
    assert marks[0][2]["event"].startswith("page_fault_user address=0x7f0000001000")


def test_nmi_starts_after_what_closed_before_it(tmp_path, schema):
    # the NMI's length reaches back over the end of the tick before it (clock
    # skew): it starts where the tick ended, so the two do not overlap part-way
    events = tick(10_000) + [ev(13_500, E.NMI, 0xffffffff81000040, 2000, flags=1)]
    doc, _ = export(tmp_path, events, schema=schema)
    nmi = [s for s in slices(doc, P.INTERRUPTS) if s[2].startswith("NMI")]
    assert [(s, d) for s, d, _, _ in nmi] == [(13_000, 500)]
    assert nmi[0][3] == {"handler": "perf_event_nmi_handler", "handled": True, "delta_ns": 2000}


def test_steal_counter_and_times_exact(tmp_path, schema):
    events = [ev(1_234_567 - 1_000_000 + 1, E.STEAL, 5_000_000, 5_000_000, flags=1),
              ev(500_001, E.STEAL, 5_250_000, 5_000_000)]
    doc, text = export(tmp_path, events, schema=schema)
    counters = [(e["ts"], e["args"]["ms"]) for e in doc["traceEvents"] if e["ph"] == "C"]
    assert counters == [(234.568, 0.0), (500.001, 0.25)]
    assert '"ts":234.568,' in text and '"ts":500.001,' in text    # ns as 3 decimals of us
    assert json.loads(text)["displayTimeUnit"] == "ns"


def test_names_with_any_bytes_are_json_as_python_reads_them(tmp_path, schema):
    """Comms and action names are bytes: valid UTF-8 is kept, quotes, backslashes
    and control characters escaped, the rest written as Python's backslashreplace
    reads them (the compiled walk and the reader agree)."""
    odd = b'a"b\\c\x01\xff\xc3\xa9\xe2\x82'        # ends in half of a 3-byte character
    prev = ("x", 812, 120)
    events = [ev(1_000, E.IRQ_ENTRY, 36, 0, odd), ev(2_000, E.IRQ_EXIT, 36, 1),
              ev(3_000, E.SWITCH, 812 | 77 << 32, 120 | 120 << 16, odd.ljust(16, b"\0") + b"\t\n",
                 pid=prev[1], flags=1)]
    doc, _ = export(tmp_path, events, schema=schema)
    text = E.cstr(odd)
    assert text == 'a"b\\c\x01\\xff\u00e9\\xe2\\x82'
    [irq] = slices(doc, P.INTERRUPTS)
    assert irq[2] == "irq 36 " + text and irq[3]["action"] == text
    tasks = slices(doc, P.TASKS)
    assert tasks[0][2] == "%s (pid 812)" % text
    assert tasks[1][2] == "\t\n (pid 77)"


def test_any_log_makes_valid_nested_json(tmp_path, schema):
    """Records of any type (known or not), values and bytes, most entries
    without their exits: the trace is valid JSON and nests, every record of the
    CPU walked."""
    import random
    rnd = random.Random(7)
    events = []
    for k in range(3000):
        raw = bytes(rnd.randrange(256) for _ in range(32))
        events.append(ev(k * 100 + rnd.randrange(50), rnd.randrange(0, 30),
                         rnd.choice((0, 1, 236, 2**64 - 1, rnd.randrange(2**64))),
                         rnd.choice((0, 1, 2, 5, 2**63, rnd.randrange(2**64))), raw,
                         flags=rnd.randrange(256)))
    doc, _ = export(tmp_path, events, schema=schema)
    assert len(doc["traceEvents"]) > 1000


def table(rows, **columns):
    return OutlierLog([tuple(r) for r in rows], columns)


def test_outliers_carry_their_causes(tmp_path, schema):
    rows = [(1, T0 + 10_000, 4_000), (1, T0 + 30_000, 2_000), (1, T0 + 50_000, 8_000),
            (2, T0 + 60_000, 1_500)]
    walked = {(1, T0 + 10_000): [("timer tick", "local timer", 4_000)],
              (1, T0 + 50_000): [("task preemption", "kworker/1:2 (pid 77, prio 120)", 6_000),
                                 ("timer tick", "local timer", 2_000)]}
    worst = [{"cpu": 1, "start_ns": T0 + 50_000, "category": "task preemption",
              "name": "kworker/1:2 (pid 77, prio 120)", "chain": "local timer → preempted",
              "events": ["+0.0 us local_timer_entry vector=236"]}]
    out = P.outlier_slices(table(rows, kind=["a", "b", "c", "d"]), walked, worst,
                           {(2, T0 + 60_000): {"components_ns": {"blocking": 1_000}}})
    assert [o[3] for o in out] == ["timer tick", "outlier", "task preemption", "outlier"]
    assert out[0][4] == {"outlier": 1, "length": "4.0 us", "length_ns": 4000,
                         "cause": "timer tick: local timer", "kind": "a"}
    assert out[2][4]["parts"] == ["task preemption: kworker/1:2 (pid 77, prio 120) 6.0 us",
                                  "timer tick: local timer 2.0 us"]
    assert out[2][4]["chain"] == "local timer → preempted"
    assert out[3][4]["components_ns"] == {"blocking": 1000} and "cause" not in out[3][4]
    # without the walk: the worst row's cause
    out2 = P.outlier_slices(table(rows), None, worst)
    assert [o[3] for o in out2] == ["outlier", "outlier", "task preemption", "outlier"]
    assert out2[2][4]["cause"] == "task preemption: kworker/1:2 (pid 77, prio 120)"
    runs = P.run_slices({"tool": "gap", "runs": [
        {"name": "cpu1", "cpu": 1, "start_mono_ns": T0 + 5_000, "duration_ns": 100_000,
         "samples": 10, "max_ns": 8_000, "percentiles_ns": {"50": 20, "99": 30},
         "outliers": {"count": 3}, "lost_time_pct": 14.0},
        {"name": "bad", "cpu": 1}]})
    assert runs == [(1, T0 + 5_000, T0 + 105_000, "gap cpu1", {
        "run": "cpu1", "samples": 10, "p50": "20 ns", "p99": "30 ns", "max": "8.0 us",
        "outliers": 3, "lost": "14.000 %"})]
    doc, _ = export(tmp_path, tick(10_000), out, runs, schema=schema)
    track = slices(doc, P.OUTLIERS)
    assert [(s, d, n) for s, d, n, _ in track] == [
        (5_000, 100_000, "gap cpu1"), (10_000, 4_000, "timer tick"),
        (30_000, 2_000, "outlier"), (50_000, 8_000, "task preemption")]
    # CPU 2 was not traced: a process with its outliers only
    assert [(s, d, n) for s, d, n, _ in slices(doc, P.OUTLIERS, cpu=2)] == [
        (60_000, 1_500, "outlier")]
    assert thread_names(doc, cpu=2) == {P.OUTLIERS: "outliers"}
    assert {P.OUTLIERS, P.INTERRUPTS}.issubset(thread_names(doc))
    sort = {e["pid"]: e["args"]["sort_index"] for e in doc["traceEvents"]
            if e["name"] == "process_sort_index"}
    assert sort == {P.PID_BASE + 1: 1, P.PID_BASE + 2: 2}


def test_overlapping_outliers_get_another_lane(tmp_path, schema):
    # two ends' outliers on one CPU overlapping part-way: one per lane
    rows = [(1, T0 + 10_000, 5_000), (1, T0 + 12_000, 5_000), (1, T0 + 13_000, 1_000),
            (1, T0 + 20_000, 1_000)]
    doc, _ = export(tmp_path, tick(30_000), P.outlier_slices(table(rows)), schema=schema)
    first = [(s, d) for s, d, _, _ in slices(doc, P.OUTLIERS)]
    second = [(s, d) for s, d, _, _ in slices(doc, P.LANE_BASE + 1)]
    assert first == [(10_000, 5_000), (13_000, 1_000), (20_000, 1_000)]
    assert second == [(12_000, 5_000)]
    assert thread_names(doc)[P.LANE_BASE + 1] == "outliers 2"
    sort = {e["tid"] % 100: e["args"]["sort_index"] for e in doc["traceEvents"]
            if e["name"] == "thread_sort_index"}
    assert sort[P.OUTLIERS] < sort[P.LANE_BASE + 1] < sort[P.INTERRUPTS]


def test_more_overlapping_outliers_than_lanes(tmp_path, monkeypatch, schema):
    # round trips held by one stall (ping's backlog) overlap each other part-way:
    # past MAX_LANES threads the next is drawn inside the last thread's, shorter
    monkeypatch.setattr(P, "MAX_LANES", 2)
    rows = [(1, T0 + 10_000, 5_000), (1, T0 + 11_000, 5_000), (1, T0 + 12_000, 5_000)]
    doc, _ = export(tmp_path, [], P.outlier_slices(table(rows)), schema=schema)
    last = slices(doc, P.LANE_BASE + 1)
    assert [(s, d) for s, d, _, _ in last] == [(11_000, 5_000), (12_000, 4_000)]
    assert last[1][3]["length_ns"] == 5_000 and last[1][3]["drawn_ns"] == 4_000
    assert "more than 2 outliers overlap" in last[1][3]["drawn"]
    assert len({e["args"]["outlier"] for e in doc["traceEvents"]
                if e.get("cat") == "outlier"}) == 3


def test_pieces_join_to_the_file(tmp_path, monkeypatch):
    """Small pieces (of jtr-perfetto's text too) make the same file."""
    monkeypatch.setattr(P, "CHUNK_EVENTS", 7)
    monkeypatch.setattr(P, "PIECE_BYTES", 512)
    events = []
    for k in range(40):
        events += tick(10_000 + k * 10_000)
    E.write_events(str(tmp_path), sorted(events), T0, END, meta={"cpus": [1],
                                                                  "vectors": VECTORS})
    log = E.read_events(str(tmp_path))
    pieces = list(P.trace_chunks(log))
    assert len(pieces) > 10 and max(len(p) for p in pieces) < len("".join(pieces)) / 5
    doc = json.loads("".join(pieces))
    assert len(slices(doc, P.INTERRUPTS)) == 80
    assert doc["otherData"]["zero_ns"] == T0 and doc["otherData"]["events"] == 160
    # every line but the brackets is one event
    lines = "".join(pieces).splitlines()
    assert all(re.fullmatch(r"\{.*\},?", ln) for ln in lines[1:-1])


def test_progress_counts_the_kernel_events_walked(tmp_path, monkeypatch):
    """The export says how far it is with each piece it hands out: the share of
    the log's events walked so far, rising to 100 % (not the trace events written,
    which a kernel event makes none, one or two of)."""
    monkeypatch.setattr(P, "PROGRESS_EVERY", 7)
    events = []
    for cpu in (1, 2):
        for k in range(40):
            events += tick(10_000 + k * 10_000, cpu=cpu)
    E.write_events(str(tmp_path), sorted(events), T0, END, meta={"cpus": [1, 2],
                                                                  "vectors": VECTORS})
    said = []
    text = "".join(P.trace_chunks(E.read_events(str(tmp_path)), progress=said.append))
    pcts = [int(re.fullmatch(r"the Perfetto trace: (\d+) % of 320 kernel events", s).group(1))
            for s in said]
    assert len(pcts) > 10 and pcts == sorted(pcts) and pcts[-1] >= 95 and pcts[-1] <= 100
    assert pcts[len(pcts) // 2] in range(35, 66)        # the second CPU's half comes later
    assert text == "".join(P.trace_chunks(E.read_events(str(tmp_path))))


def test_zero_is_the_earliest_time(tmp_path):
    rows = [(1, T0 - 5_000, 1_000)]
    doc, _ = export(tmp_path, tick(10_000), P.outlier_slices(table(rows)))
    assert doc["otherData"]["zero_ns"] == T0 - 5_000
    assert slices(doc, P.OUTLIERS)[0][:2] == (0, 1_000)
    assert slices(doc, P.INTERRUPTS)[0][0] == 15_000


def test_an_applications_calls_and_its_blocking(tmp_path, schema):
    """jtr run app's records: each call a slice from its entry to its return on the
    CPU it returned on, named by the function; two threads' calls in flight
    together in two lanes; the thread leaving its CPU blocked an instant naming
    the system call."""
    futex = next(nr for nr, n in P.syscalls.table().items() if n == "futex")
    events = [
        ev(30_000, E.BLOCK, futex, 1, pid=900),
        # thread 900's call: 10 us to 50 us, entered on CPU 0, returned on 1
        ev(50_000, E.CALL, T0 + 10_000, 0 | 1 << 32, pid=900),
        # thread 901's: 20 us to 40 us on CPU 1, inside 900's: another lane
        ev(40_000, E.CALL, T0 + 20_000, 1 | 1 << 32, pid=901),
        ev(70_000, E.CALL, T0 + 60_000, 1 | 1 << 32, pid=901),
        ev(80_000, E.BLOCK, E.NO_SYSCALL, 2, pid=901),
    ]
    E.write_events(str(tmp_path), sorted(events), T0, END, meta={
        "symbols": {}, "cpus": [1], "vectors": VECTORS})
    log = E.read_events(str(tmp_path))
    doc = json.loads("".join(P.trace_chunks(log, call="on_tick")))
    assert not [e.message for e in schema.iter_errors(doc)]
    assert nesting_errors(doc) == []
    # walked in the order they returned: 901's first call takes the first lane
    first, second = slices(doc, P.CALLS), slices(doc, P.CALLS + 1)
    assert [(s, d, n, a["tid"]) for s, d, n, a in first] == [
        (20_000, 20_000, "on_tick", 901), (60_000, 10_000, "on_tick", 901)]
    assert [(s, d, a) for s, d, _, a in second] == [(10_000, 40_000, {
        "tid": 900, "length_ns": 40_000, "entered_on_cpu": 0, "returned_on_cpu": 1})]
    names = thread_names(doc)
    assert names[P.CALLS] == "calls" and names[P.CALLS + 1] == "calls 2"
    assert [n for _, n, _ in instants(doc, P.TASKS)] == [
        "blocked in futex (tid 900)", "blocked outside a system call (tid 901)"]


def test_more_calls_in_flight_than_lanes(tmp_path, schema):
    """Nine calls in flight together on a CPU: eight lanes, the ninth drawn in
    the last from where that lane is free, and the trace still nests."""
    events = [ev(100_000 + k * 1_000, E.CALL, T0 + k * 1_000, 1 | 1 << 32, pid=900 + k)
              for k in range(9)]
    E.write_events(str(tmp_path), events, T0, END, meta={
        "symbols": {}, "cpus": [1], "vectors": VECTORS})
    doc = json.loads("".join(P.trace_chunks(E.read_events(str(tmp_path)))))
    assert not [e.message for e in schema.iter_errors(doc)]
    assert nesting_errors(doc) == []
    lanes = [slices(doc, P.CALLS + k) for k in range(8)]
    assert [len(x) for x in lanes] == [1] * 7 + [2]
    last = lanes[7][1]
    assert last[2] == "call" and last[3]["tid"] == 908
    assert last[3]["drawn_from_ns"] == T0 + 107_000 and last[0] == 107_000
