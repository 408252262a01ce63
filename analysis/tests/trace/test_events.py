# SPDX-License-Identifier: GPL-2.0-only
"""The event log: write, read back, index, decode, describe, and reject bad files."""
import json
import os
import struct

import pytest

from jtrpy.errors import UsageError
from jtrpy.trace import events as E

T0 = 1_000_000_000_000
TICK_FN = 0xffffffff81234560
SYMS = {"0x%x" % TICK_FN: "tick_sched_timer", "0xffffffff81100000": "vmstat_update"}


def lists(index):
    """An index ({cpu: sequence}) with each sequence as a list."""
    return {c: list(v) for c, v in index.items()}


def every_type():
    """One record of every type, in the layout trace.h gives each."""
    return [
        (T0 + 10, 812, 1, E.IRQ_ENTRY, 0, 36, 0, "virtio1-req"),
        (T0 + 20, 812, 1, E.IRQ_EXIT, 0, 36, 1, None),
        (T0 + 30, 812, 1, E.SOFTIRQ_RAISE, 0, 3, 0, None),
        (T0 + 40, 812, 1, E.SOFTIRQ_ENTRY, 0, 3, 0, None),
        (T0 + 50, 812, 1, E.SOFTIRQ_EXIT, 0, 3, 0, None),
        (T0 + 60, 812, 1, E.VEC_ENTRY, 0, 236, 0, None),
        (T0 + 70, 812, 1, E.VEC_EXIT, 0, 236, 0, None),
        (T0 + 80, 812, 1, E.NMI, 1, 0xffffffff81000001, 2100, None),
        (T0 + 90, 812, 1, E.SWITCH, 1, 812 | 123 << 32, 89 | 120 << 16 | 0 << 32,
         ("gap/1", "kworker/1:2")),
        (T0 + 100, 123, 1, E.WAKEUP, 0, 4242, 1 | 9 << 32, "fifo-spin"),
        (T0 + 110, 123, 1, E.WAKING, 0, 4242, 1 | 9 << 32, "fifo-spin"),
        (T0 + 120, 123, 1, E.MIGRATE, 0, 77, 2 | 1 << 32, "bash"),
        (T0 + 130, 123, 1, E.PF_USER, 0, 0x7f0000001000, 0x401000, (6,)),
        (T0 + 140, 123, 1, E.PF_KERNEL, 0, 0xffff888000001000, 0xffffffff81000002, (2,)),
        (T0 + 150, 123, 1, E.WQ_START, 0, 0xffff888000002000, 0xffffffff81100000, None),
        (T0 + 160, 123, 1, E.WQ_END, 0, 0xffff888000002000, 0xffffffff81100000, None),
        (T0 + 170, 123, 1, E.HRTIMER_ENTRY, 0, 0xffff888000003000, TICK_FN, None),
        (T0 + 180, 123, 1, E.HRTIMER_EXIT, 0, 0xffff888000003000, 0, None),
        (T0 + 190, 123, 1, E.TIMER_ENTRY, 0, 0xffff888000004000, 0xffffffff81200000, None),
        (T0 + 200, 123, 1, E.TIMER_EXIT, 0, 0xffff888000004000, 0, None),
        (T0 + 210, 123, 1, E.STEAL, E.STEAL_FIRST, 4_323_902_088, 4_323_902_088, None),
        (T0 + 220, 123, 1, E.STEAL, 0, 4_323_952_193, 4_323_902_088, None),
        (T0 + 230, 123, 1, E.TASK, 0, 4242 | 4240 << 32, 9001, task_raw("stress", 77)),
        (T0 + 240, 4300, 1, E.CALL, 0, T0 + 200, 1 | 1 << 32, None),
        (T0 + 250, 4300, 1, E.BLOCK, 0, 202, 1, None),
        (T0 + 260, 0, 1, E.TICK_STOP, 0, 0, 16, None),
    ]


def task_raw(comm, v1):
    """A task_groups record's raw bytes: its comm, then its v1 cgroup in x[2]."""
    return comm.encode().ljust(16, b"\0") + E.X4.pack(0, 0, v1, 0)[16:]


def test_round_trip_every_type(tmp_path):
    evs = every_type()
    assert sorted({e[3] for e in evs}) == sorted(E.TYPE_NAMES) == list(range(1, 26))
    p = E.write_events(str(tmp_path), evs, T0, T0 + 1000, dropped=3, meta={"symbols": SYMS})
    assert p == str(tmp_path / "events.bin")
    log = E.read_events(str(tmp_path))
    assert (len(log), log.start_ns, log.end_ns, log.dropped, log.complete) == (
        26, T0, T0 + 1000, 3, True)
    assert lists(log.cpu_ts) == {1: [e[0] for e in evs]}
    got = list(log.iter_events())
    for want, ev in zip(evs, got):
        assert tuple(ev[:7]) == want[:7]
        assert len(ev.raw) == 32
    assert got[0].text == "virtio1-req"
    sw = got[8]
    assert (sw.prev_comm, sw.next_comm, sw.type_name) == ("gap/1", "kworker/1:2", "sched_switch")
    assert got[12].x == (6, 0, 0, 0)
    assert got[9].text == "fifo-spin"
    assert log.type_counts()["sched_switch"] == 1
    meta = json.loads((tmp_path / "trace.json").read_text())
    assert meta["format"] == "jtr-trace/1" and meta["cpus"] == [1]
    assert meta["events"]["per_type"]["hrtimer_expire_entry"] == 1


CGROUPS = {"v2_mount": "/sys/fs/cgroup", "v1_mount": "",
           "v2": {"9001": {"path": "/system.slice/docker-%s.scope" % ("ab" * 32),
                           "label": "docker " + "ab" * 6},
                  "9002": {"path": "/user.slice", "label": ""}},
           "v1": {"77": {"path": None, "label": ""},
                  "78": {"path": "/docker/" + "cd" * 32, "label": "docker " + "cd" * 6}}}


def test_task_groups_label_each_task_by_its_last_record(tmp_path):
    """A task's label is its v2 cgroup's, else its v1 cgroup's; its last
    task_groups record wins (it moved), and a task in no container has none."""
    evs = [(T0 + 10, 1, 1, E.TASK, 0, 4242 | 4242 << 32, 9001, task_raw("stress", 77)),
           (T0 + 20, 1, 1, E.TASK, 0, 5, 9002, task_raw("bash", 78)),
           (T0 + 30, 1, 1, E.TASK, 0, 6, 9002, task_raw("sshd", 77)),
           (T0 + 40, 1, 1, E.TASK, 0, 7, 9001, task_raw("moved", 77)),
           (T0 + 50, 1, 1, E.TASK, 0, 7, 9002, task_raw("moved", 77))]
    E.write_events(str(tmp_path), evs, T0, T0 + 100, meta={"cgroups": CGROUPS})
    log = E.read_events(str(tmp_path))
    assert log.task_groups() == {4242: "docker " + "ab" * 6, 5: "docker " + "cd" * 6}
    assert E.describe(log.event(0), log.meta) == (
        "task_groups stress(pid 4242, tgid 4242) v2 9001 /system.slice/docker-%s.scope v1 77"
        % ("ab" * 32))


def test_app_records_say_what_they_are(tmp_path):
    evs = [(T0 + 10, 812, 0, E.WAKING, E.APP, 4300, 1 | 120 << 32,
            b"jtr-app-caller".ljust(16, b"\0") + b"jtr-app-waker"),
           (T0 + 20, 4300, 1, E.CALL, 0, T0 - 84000 + 20, 1 | 0 << 32, None),
           (T0 + 30, 4300, 1, E.BLOCK, 0, 202, 1, None),
           (T0 + 40, 4300, 1, E.BLOCK, 0, E.NO_SYSCALL, 2, None)]
    E.write_events(str(tmp_path), evs, T0, T0 + 100)
    log = E.read_events(str(tmp_path))
    said = [E.describe(log.event(i), log.meta) for i in range(4)]
    assert said[0].endswith("target_cpu=1 by jtr-app-waker(pid 812)")
    assert said[1:] == ["app_call 84.0 us, CPU 1 -> 0", "app_block " + E.syscalls.name(202),
                        "app_block outside a system call"]


def test_tick_stop_records_say_what_kept_the_tick_and_the_log_indexes_them(tmp_path):
    evs = [(T0 + 10, 0, 1, E.TICK_STOP, 0, 1, 0, None),
           (T0 + 20, 77, 1, E.TICK_STOP, 0, 0, 4, None),
           (T0 + 30, 77, 2, E.TICK_STOP, 0, 0, 16, None),
           (T0 + 40, 77, 1, E.TICK_STOP, 0, 0, 64, None)]
    E.write_events(str(tmp_path), evs, T0, T0 + 100, meta={"nohz_full": "1-2\n"})
    log = E.read_events(str(tmp_path))
    assert [E.describe(log.event(i), log.meta) for i in range(4)] == [
        "tick_stop success=1 dependency=NONE", "tick_stop success=0 dependency=SCHED",
        "tick_stop success=0 dependency=RCU", "tick_stop success=0 dependency=0x40"]
    assert log.tick_states() == ({1, 2}, {1: ([T0 + 10, T0 + 20, T0 + 40],
                                              [(1, 0), (0, 4), (0, 64)]),
                                          2: ([T0 + 30], [(0, 16)])})
    E.write_events(str(tmp_path), evs, T0, T0 + 100, meta={"nohz_full": None})
    assert E.read_events(str(tmp_path)).tick_states()[0] == set()


def test_decode_one_record():
    rec = E.RECORD.pack(T0, 7, 3, E.VEC_ENTRY, 0, 236, 0, b"")
    ev = E.decode(b"x" * 5 + rec, 5)
    assert (ev.ts_ns, ev.pid, ev.cpu, ev.type, ev.a) == (T0, 7, 3, E.VEC_ENTRY, 236)
    assert E.decode(rec).type_name == "vector_entry"


def test_index_sorts_per_cpu(tmp_path):
    evs = [(T0 + t, 1, cpu, E.VEC_ENTRY, 0, 236, 0, None)
           for t, cpu in [(50, 1), (10, 2), (30, 1), (20, 1), (5, 2), (40, 2)]]
    E.write_events(str(tmp_path), evs, T0, T0 + 100)
    log = E.read_events(str(tmp_path / "events.bin"))
    assert lists(log.cpu_ts) == {1: [T0 + 20, T0 + 30, T0 + 50], 2: [T0 + 5, T0 + 10, T0 + 40]}
    assert [log.event(i).ts_ns for i in log.cpu_index[1]] == list(log.cpu_ts[1])
    assert [e.ts_ns - T0 for e in log.iter_events()] == [5, 10, 20, 30, 40, 50]
    assert [e.ts_ns - T0 for e in log.iter_events(cpu=2)] == [5, 10, 40]
    assert [e.ts_ns - T0 for e in log.window(1, T0 + 20, T0 + 30)] == [20, 30]
    assert log.window(7, T0, T0 + 100) == []


@pytest.mark.parametrize("numpy", [True, False])
def test_switches_missing_from_the_log_and_the_event_before_a_time(tmp_path, monkeypatch,
                                                                     numpy):
    """A switch whose prev is not the task the CPU's switch before put on: one
    the kernel made without an event (or the tracer dropped) between them."""
    if not numpy:
        monkeypatch.setattr(E, "numpy_or_none", lambda: None)

    def sw(t, cpu, prev, nxt):
        return (T0 + t, prev, cpu, E.SWITCH, 0, prev | nxt << 32, 0, ("a", "b"))
    evs = [sw(10, 1, 0, 81), sw(20, 1, 15, 4242), sw(30, 1, 4242, 0),    # 81 -> 15 missing
           sw(15, 2, 7, 8), sw(25, 2, 8, 7), sw(35, 2, 9, 7),            # 7 -> 9 missing
           sw(40, 2, 7, 0), (T0 + 50, 0, 2, E.VEC_ENTRY, 0, 236, 0, None)]
    E.write_events(str(tmp_path), evs, T0, T0 + 100)
    log = E.read_events(str(tmp_path / "events.bin"))
    assert log.switch_breaks() == {1: 1, 2: 1}
    assert log.last_before(1, T0 + 20).ts_ns == T0 + 10
    assert log.last_before(2, T0 + 51).type == E.VEC_ENTRY
    assert log.last_before(1, T0 + 10) is None
    assert log.last_before(3, T0 + 10) is None


def test_steal_readings_span_from_the_cpus_look_before(tmp_path):
    evs = every_type() + [(T0 + 5, 9, 2, E.STEAL, E.STEAL_FIRST, 70, 70, None),
                          (T0 + 6, 9, 2, E.VEC_ENTRY, 0, 236, 0, None),
                          (T0 + 7, 9, 2, E.HRTIMER_ENTRY, 0, 1, TICK_FN, None),
                          (T0 + 900, 9, 2, E.VEC_ENTRY, 0, 236, 0, None),
                          (T0 + 900, 9, 2, E.STEAL, 0, 95, 70, None)]
    E.write_events(str(tmp_path), evs, T0, T0 + 1000)
    got = E.read_events(str(tmp_path)).steal_readings()
    # the previous look is the last interrupt entry or switch before: cpu 1's
    # sched_switch (not the timer_expire_exit, nor the steal_time record, after
    # it); cpu 2: the log's start for the first, the vector entry at +6 (not the
    # hrtimer after it, nor the vector entry of the same ns) for the second
    assert got == {1: [(T0 + 210, T0 + 90, 4_323_902_088, 4_323_902_088),
                       (T0 + 220, T0 + 90, 4_323_952_193, 4_323_902_088)],
                   2: [(T0 + 5, T0, 70, 70), (T0 + 900, T0 + 6, 95, 70)]}


def test_blocked_task_state():
    assert E.task_state(0, 1) == "R+"
    assert E.task_state(0, 0) == "R"
    assert E.task_state(1, 0) == "S"
    assert E.task_state(2, 0) == "D"


def test_vector_kind_out_of_range(tmp_path):
    E.write_events(str(tmp_path), [(T0, 1, 1, E.VEC_ENTRY, 0, 250, 99, None)], T0, T0 + 1)
    log = E.read_events(str(tmp_path))
    assert log.vector_kind(99) == "unknown"
    assert log.symbol(0x1234) == "0x1234"
    assert E.describe(log.event(0), log.meta) == "unknown_entry vector=250"


def test_no_trace_json_gives_defaults(tmp_path):
    E.write_events(str(tmp_path), every_type(), T0, T0 + 1000)
    os.unlink(tmp_path / "trace.json")
    log = E.read_events(str(tmp_path))
    assert log.meta["cpus"] == [1]
    assert log.vectors[0] == "local_timer"
    assert log.symbol(TICK_FN) == "0x%x" % TICK_FN


def test_a_floor_only_trace_is_refused_by_name(tmp_path):
    """jtr trace --floor-only records nothing by design: reading its log for
    events is refused with what made it, not read as a quiet CPU."""
    E.write_events(str(tmp_path), [], T0, T0 + 1000, meta={"floor_only": "clock"})
    with pytest.raises(UsageError, match="written by jtr trace --floor-only clock, whose "
                       "programs record nothing.*trace again without --floor-only"):
        E.read_events(str(tmp_path))


def test_killed_tracer_counts_records_from_size(tmp_path):
    p = E.write_events(str(tmp_path), every_type(), T0, T0 + 1000)
    data = bytearray(open(p, "rb").read())
    struct.pack_into("<QQQ", data, 24, 0, 0, 0)     # end_ns, records, dropped never written
    data += b"\x01" * 40                             # a partial record at the end
    open(p, "wb").write(bytes(data))
    os.unlink(tmp_path / "trace.json")
    log = E.read_events(p)
    assert (len(log), log.complete) == (26, False)
    assert log.end_ns == T0 + 260                    # the last event


def test_bad_files(tmp_path):
    p = str(tmp_path / "events.bin")
    with pytest.raises(UsageError, match="no such event log"):
        E.read_events(p)
    good = open(E.write_events(p, every_type(), T0, T0 + 1000), "rb").read()
    open(p, "wb").write(b"NOTJTR1\0" + good[8:])
    with pytest.raises(UsageError, match=r"events.bin: not a jtr event log \(it does not start"):
        E.read_events(p)
    open(p, "wb").write(good[:40])
    with pytest.raises(UsageError, match="truncated header"):
        E.read_events(p)
    open(p, "wb").write(good[:64 + 64 * 5 + 3])
    with pytest.raises(UsageError, match="header says 26 records, the file holds 5"):
        E.read_events(p)
    bad = bytearray(good)
    struct.pack_into("<I", bad, 8, 2)
    open(p, "wb").write(bytes(bad))
    with pytest.raises(UsageError, match="version 2"):
        E.read_events(p)
    bad = bytearray(good)
    struct.pack_into("<I", bad, 12, 48)
    open(p, "wb").write(bytes(bad))
    with pytest.raises(UsageError, match="record size 48, expected 64"):
        E.read_events(p)
    open(p, "wb").write(good)
    (tmp_path / "trace.json").write_text('{"format": "other"}')
    with pytest.raises(UsageError, match="expected 'jtr-trace/1'"):
        E.read_events(p)
    (tmp_path / "trace.json").write_text("{broken")
    with pytest.raises(UsageError, match="trace.json: not a JSON file"):
        E.read_events(p)


def test_pack_raw_checks():
    assert E.pack_raw(("a", "b")) == b"a" + b"\0" * 15 + b"b" + b"\0" * 15
    with pytest.raises(UsageError, match="at most 32"):
        E.pack_raw(b"x" * 33)
    with pytest.raises(UsageError, match="two comms"):
        E.pack_raw(("a", "b", "c"))


@pytest.mark.parametrize("field, value, message", [
    ("symbols", None, "symbols: expected an object of address: symbol name, got null"),
    ("vectors", None, "vectors: expected a list of irq_vectors kind names, got null"),
    ("vectors", [1], "vectors[0]: expected a string of at most 256 characters, got 1"),
    ("cpus", ["1"], "cpus[0]: expected a CPU number (0 to 65535), got a string"),
    ("events", {"per_type": {"x": -1}}, "events.per_type.x: expected a count"),
    ("programs", {"p": {"run_time_ns": "5"}}, "programs.p.run_time_ns: expected a time in ns"),
    ("start_ns", float("nan"), "start_ns: expected a time in ns"),
    ("steal", {"reason": "x"}, "steal.available: expected true or false, got nothing"),
])
def test_a_damaged_trace_json_names_the_field(tmp_path, field, value, message):
    p = E.write_events(str(tmp_path), every_type(), T0, T0 + 1000)
    meta = json.loads((tmp_path / "trace.json").read_text())
    meta[field] = value
    (tmp_path / "trace.json").write_text(json.dumps(meta))
    with pytest.raises(UsageError) as e:
        E.read_events(p)
    text = str(e.value)
    assert text.startswith("%s: %s" % (tmp_path / "trace.json", message)), text
    assert text.endswith("; remove it to read the log without symbol names")


def test_a_log_named_by_a_result_stays_in_its_folder(tmp_path):
    d = tmp_path / "r"
    d.mkdir()
    E.write_events(str(tmp_path), every_type(), T0, T0 + 1000)
    os.symlink(str(tmp_path / "events.bin"), str(d / "events.bin"))
    with pytest.raises(UsageError, match="events.bin: leads out of the results folder"):
        E.read_events(str(d / "events.bin"), within=str(d))
    assert len(E.read_events(str(d / "events.bin"))) == 26      # given by hand: followed
    os.unlink(d / "events.bin")
    os.symlink("/dev/zero", str(d / "events.bin"))
    with pytest.raises(UsageError, match="a character device, not a regular file"):
        E.read_events(str(d))
    os.unlink(d / "events.bin")
    os.mkfifo(str(d / "events.bin"))
    with pytest.raises(UsageError, match="a FIFO, not a regular file .the event log must"):
        E.read_events(str(d), within=str(d))
    os.unlink(d / "events.bin")
    E.write_events(str(d), every_type(), T0, T0 + 1000)
    os.unlink(d / "trace.json")
    os.symlink(str(tmp_path / "trace.json"), str(d / "trace.json"))
    with pytest.raises(UsageError, match="trace.json: leads out of the results folder"):
        E.read_events(str(d), within=str(d))


def test_an_ipis_entry_names_its_sender():
    raw = b"java".ljust(16, b"\0") + E.X4.pack(0, 0, 0xffffffff81300000, 812 | 3 << 32)[16:]
    ev = E.decode(E.RECORD.pack(T0, 1, 1, E.VEC_ENTRY, E.VEC_SENDER, 251, 1, raw))
    meta = {"vectors": ["local_timer", "call_function_single"],
            "symbols": {"0xffffffff81300000": "flush_tlb_func"}}
    assert E.describe(ev, meta) == ("call_function_single_entry vector=251 from java "
                                    "(pid 812, CPU 3) flush_tlb_func")
    site = E.decode(E.RECORD.pack(T0, 1, 1, E.VEC_ENTRY, E.VEC_SENDER | E.VEC_SITE, 253, 0,
                                  raw))
    assert E.describe(site, {"vectors": ["reschedule"], "symbols": {}}).endswith(
        "from java (pid 812, CPU 3) sent at 0xffffffff81300000")
    plain = E.decode(E.RECORD.pack(T0, 1, 1, E.VEC_ENTRY, 0, 251, 1, raw))
    assert E.describe(plain, meta) == "call_function_single_entry vector=251"
