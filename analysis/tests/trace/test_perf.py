# SPDX-License-Identifier: GPL-2.0-only
"""trace.perf: perf script's lines as event records (each field where the eBPF
tracer puts it, worked out by hand), the conversion of a recording through a
stand-in perf (the window, a task that was exiting, lines it cannot read, the
events perf lost), the tracepoints found in a tracefs of the test's own, and a
tracepoint perf may not enable left out with its pair. No perf is run."""
import json
import os
import signal
import sys

import pytest

from jtrpy.trace import events as ev
from jtrpy.trace import perf

SYMS = {"vmstat_update": 0x100, "tick_sched_timer": 0x200, "delayed_work_timer_fn": 0x300,
        "perf_event_nmi_handler": 0x400}


def addr(name):
    return int(name, 16) if name.startswith("0x") else SYMS[name]


def rec(name, rest, cat="x", kinds=None):
    return perf.to_record(5, 9, 1, cat, name, rest, kinds or {}, addr)


@pytest.mark.parametrize("name,rest,want", [
    ("irq_handler_entry", "irq=36 name=virtio1-req.0", (ev.IRQ_ENTRY, 0, 36, 0, "virtio1-req.0")),
    ("irq_handler_exit", "irq=36 ret=handled", (ev.IRQ_EXIT, 0, 36, 1, None)),
    ("irq_handler_exit", "irq=36 ret=unhandled", (ev.IRQ_EXIT, 0, 36, 0, None)),
    ("softirq_raise", "vec=1 [action=TIMER]", (ev.SOFTIRQ_RAISE, 0, 1, 0, None)),
    ("softirq_exit", "vec=3 [action=NET_RX]", (ev.SOFTIRQ_EXIT, 0, 3, 0, None)),
    # preempted (R+): flag 1, no "left" bit; prev 41 and next 0 packed, the prios too
    ("sched_switch", "prev_comm=my app prev_pid=41 prev_prio=120 prev_state=R+ ==> "
     "next_comm=swapper/1 next_pid=0 next_prio=120",
     (ev.SWITCH, 1, 41, 120 | 120 << 16, ("my app", "swapper/1"))),
    ("sched_switch", "prev_comm=a prev_pid=41 prev_prio=120 prev_state=S ==> "
     "next_comm=b next_pid=7 next_prio=49",
     (ev.SWITCH, 0, 41 | 7 << 32, 120 | 49 << 16 | 1 << 32, ("a", "b"))),
    ("sched_wakeup", "comm=kworker/1:1 pid=9 prio=120 target_cpu=003",
     (ev.WAKEUP, 0, 9, 3 | 120 << 32, "kworker/1:1")),
    ("sched_waking", "comm=x pid=9 prio=120", (ev.WAKING, 0, 9, 1 | 120 << 32, "x")),
    ("sched_migrate_task", "comm=a b pid=5 prio=120 orig_cpu=1 dest_cpu=3",
     (ev.MIGRATE, 0, 5, 1 | 3 << 32, "a b")),
    ("page_fault_user", "address=0x7f00 ip=0x401000 error_code=0x6",
     (ev.PF_USER, 0, 0x7f00, 0x401000, (6,))),
    ("page_fault_kernel", "address=junk ip=0x10 error_code=0x2",
     (ev.PF_KERNEL, 0, 0, 0x10, (2,))),
    ("workqueue_execute_start", "work struct 0xffff0001: function vmstat_update",
     (ev.WQ_START, 0, 0xffff0001, 0x100, None)),
    ("workqueue_execute_end", "work struct 0xffff0001: function vmstat_update",
     (ev.WQ_END, 0, 0xffff0001, 0, None)),
    ("hrtimer_expire_entry", "hrtimer=0xff01 function=tick_sched_timer now=5",
     (ev.HRTIMER_ENTRY, 0, 0xff01, 0x200, None)),
    ("timer_expire_entry", "timer=0xaa function=delayed_work_timer_fn now=1 baseclk=1",
     (ev.TIMER_ENTRY, 0, 0xaa, 0x300, None)),
    ("hrtimer_expire_exit", "hrtimer=0xff01", (ev.HRTIMER_EXIT, 0, 0xff01, 0, None)),
    ("timer_expire_exit", "timer=0xaa", (ev.TIMER_EXIT, 0, 0xaa, 0, None)),
    ("tick_stop", "success=0 dependency=RCU", (ev.TICK_STOP, 0, 0, 16, None)),
    ("tick_stop", "success=1 dependency=NONE", (ev.TICK_STOP, 0, 1, 0, None)),
    ("nmi_handler", "handler=perf_event_nmi_handler delta_ns=4430 handled=1",
     (ev.NMI, 1, 0x400, 4430, None)),
])
def test_records_by_hand(name, rest, want):
    assert rec(name, rest) == (5, 9, 1) + want


def test_vector_records_name_their_kind_by_its_number():
    kinds = {"reschedule": 0, "local_timer": 1}
    assert rec("local_timer_entry", "vector=236", "irq_vectors", kinds) == \
        (5, 9, 1, ev.VEC_ENTRY, 0, 236, 1, None)
    assert rec("reschedule_exit", "vector=253", "irq_vectors", kinds) == \
        (5, 9, 1, ev.VEC_EXIT, 0, 253, 0, None)
    assert rec("new_kind_entry", "vector=1", "irq_vectors", kinds)[6] == 0xffff


def test_what_is_not_a_record():
    assert rec("cpu_idle", "state=1 cpu_id=1") is None
    with pytest.raises(KeyError):
        rec("irq_handler_entry", "name=no-number")
    with pytest.raises(ValueError):
        rec("softirq_entry", "vec=x")


def test_comm_fields_hold_spaces_and_are_cut_at_15():
    rest = "prev_comm=rcu tasks kthre prev_pid=1 ==> next_comm=a next_pid=2"
    assert perf.comm_field(rest, "prev_comm") == "rcu tasks kthre"
    assert perf.comm_field(rest, "next_comm") == "a"
    assert perf.comm_field("comm=a_very_long_thread_name pid=3", "comm") == "a_very_long_thr"
    assert perf.comm_field("pid=3", "comm") == ""


def test_numbers_in_hex_or_decimal():
    assert perf._int("0x1f") == 31 and perf._int("42") == 42 and perf._int("junk") == 0


def test_line_pattern():
    m = perf.LINE.match("      -1 [003] 12345.000000042: sched:sched_switch: prev_comm=x")
    assert m.groups() == ("-1", "003", "12345", "000000042", "sched", "sched_switch",
                          "prev_comm=x")
    assert not perf.LINE.match("12345.000000042: sched:sched_switch:")


# --- the tracefs of the test ---------------------------------------------------------

@pytest.fixture
def tracefs(tmp_path, monkeypatch):
    root = tmp_path / "tracing"
    for d in ("irq/irq_handler_entry", "sched/sched_switch", "timer/hrtimer_expire_entry",
              "irq_vectors/local_timer_entry", "irq_vectors/local_timer_exit",
              "irq_vectors/reschedule_entry", "irq_vectors/irq_work_entry",
              "irq_vectors/irq_work_exit"):
        (root / "events" / d).mkdir(parents=True)
    monkeypatch.setattr(perf, "TRACEFS", str(root))
    return root


def test_tracepoints_this_kernel_has(tracefs):
    names, kinds = perf.tracepoints()
    # reschedule has no exit: no pair, left out
    assert kinds == ["irq_work", "local_timer"]
    assert names == ["irq:irq_handler_entry", "sched:sched_switch",
                     "timer:hrtimer_expire_entry", "irq_vectors:irq_work_entry",
                     "irq_vectors:irq_work_exit", "irq_vectors:local_timer_entry",
                     "irq_vectors:local_timer_exit"]


def test_why_perf_cannot_trace(tracefs, tmp_path, monkeypatch):
    monkeypatch.setattr(perf, "perf_path", lambda: "/x/perf")
    monkeypatch.delenv("JTR_NO_PERF", raising=False)
    assert perf.unavailable() is None
    monkeypatch.setenv("JTR_NO_PERF", "1")
    assert perf.unavailable() == "perf is switched off for this run (JTR_NO_PERF is set)"
    monkeypatch.delenv("JTR_NO_PERF")
    monkeypatch.setattr(perf, "perf_path", lambda: None)
    assert perf.unavailable().startswith("perf is not installed (")
    # tracefs not mounted, and this process may not mount it: said how to
    monkeypatch.setattr(perf, "perf_path", lambda: "/x/perf")
    monkeypatch.setattr(perf, "TRACEFS", str(tmp_path / "empty"))
    monkeypatch.setattr(perf.os, "geteuid", lambda: 1000)
    assert perf.unavailable() == ("tracefs is not mounted on %s; mount it with 'mount -t "
                                  "tracefs nodev %s'" % ((str(tmp_path / "empty"),) * 2))


def test_a_refused_tracepoint_is_left_out_with_its_pair(tracefs, tmp_path, monkeypatch):
    monkeypatch.setattr(perf, "perf_path", lambda: "/x/perf")
    t = perf.PerfTracer("1", str(tmp_path / "w"))
    said = iter(["perf record failed: No permission to enable irq_vectors:irq_work_exit event.",
                 "perf record failed: No permission to enable timer:hrtimer_expire_entry event.",
                 None])
    monkeypatch.setattr(t, "_wait", lambda timeout_s: next(said))
    assert t.wait_ready() is None
    assert t.refused == ["irq_vectors:irq_work_entry", "irq_vectors:irq_work_exit",
                         "timer:hrtimer_expire_entry"]
    assert t.kinds == ["local_timer"]
    assert t.names == ["irq:irq_handler_entry", "sched:sched_switch",
                       "irq_vectors:local_timer_entry", "irq_vectors:local_timer_exit"]
    cmd = t.command()
    assert cmd[:9] == ["/x/perf", "record", "-q", "-B", "-k", "CLOCK_MONOTONIC", "-C", "1",
                       "-o"]
    assert cmd[10:] == sum((["-e", n] for n in t.names), [])
    # another failure is said as it is
    monkeypatch.setattr(t, "_wait", lambda timeout_s: "perf record failed: exit 1")
    assert t.wait_ready() == "perf record failed: exit 1"


class Proc:
    pid = 1

    def __init__(self, rc, err):
        self.rc, self.err, self.returncode, self.signals = rc, err, None, []

    def poll(self):
        return self.returncode

    def send_signal(self, s):
        self.signals.append(s)

    def communicate(self):
        self.returncode = self.rc
        return "", self.err


@pytest.mark.parametrize("rc,want", [(0, 0), (-signal.SIGTERM, 0), (128 + signal.SIGTERM, 0),
                                     (1, 1), (-signal.SIGKILL, -signal.SIGKILL)])
def test_stop_takes_perfs_own_end_as_success(tmp_path, monkeypatch, rc, want):
    r = perf.PerfRecord("1", str(tmp_path), "perf.data")
    r.proc = Proc(rc, "[ perf record: Woken up 1 times ]\n\nwarning: x\n")
    spent = iter([1000, 1600])
    monkeypatch.setattr(perf, "children_cpu_ns", lambda: next(spent))
    assert r.stop() == want
    assert r.proc.signals == [signal.SIGTERM] and r.cpu_ns == 600
    assert r.err == "warning: x" and r.end_ns > 0


# --- the conversion, through a stand-in perf --------------------------------------

SCRIPT = """      9 [001]    10.000000100: irq:irq_handler_entry: irq=36 name=virtio1-req.0
      9 [001]    10.000000200: irq:irq_handler_exit: irq=36 ret=handled
      9 [001]    10.000000300: sched:sched_switch: prev_comm=bash prev_pid=9 prev_prio=120 \
prev_state=S ==> next_comm=dying next_pid=77 next_prio=120
     -1 [001]    10.000000400: sched:sched_switch: prev_comm=dying prev_pid=77 prev_prio=120 \
prev_state=X ==> next_comm=swapper/1 next_pid=0 next_prio=120
      0 [001]    10.000000500: workqueue:workqueue_execute_start: work struct 0xffff0001: \
function vmstat_update
      0 [001]    20.000000000: irq:irq_handler_entry: irq=1 name=after-the-window
      0 [001]    10.000000600: irq:irq_handler_entry: name=no-irq-number
not a line of perf script

      0 [001]    10.000000700: irq_vectors:local_timer_entry: vector=236
      0 [001]    10.000000800: power:cpu_idle: state=1 cpu_id=1
"""
FAKE = """#!%s
import sys
if sys.argv[1] == "script":
    sys.stdout.write(open(%r).read())
elif sys.argv[1] == "report":
    print("           LOST events:          2  ( 0.1%%)")
"""


def test_convert_writes_the_log_attribution_reads(tmp_path, monkeypatch):
    (tmp_path / "script.txt").write_text(SCRIPT)
    fake = tmp_path / "perf"
    fake.write_text(FAKE % (sys.executable, str(tmp_path / "script.txt")))
    fake.chmod(0o755)
    monkeypatch.setattr(perf, "perf_path", lambda: str(fake))
    out = tmp_path / "out"
    out.mkdir()
    n = perf.convert("perf.data", str(out), ["reschedule", "local_timer"], "1",
                     10 * 10**9, 15 * 10**9, refused=["irq_vectors:irq_work_exit"],
                     cost={"setup_cpu_ns": 7})
    log = ev.read_events(str(out))
    got = [(e.ts_ns - 10 * 10**9, e.pid, e.type, e.a, e.b) for e in log.iter_events()]
    assert n == 6 and got == [
        (100, 9, ev.IRQ_ENTRY, 36, 0), (200, 9, ev.IRQ_EXIT, 36, 1),
        (300, 9, ev.SWITCH, 9 | 77 << 32, 120 | 120 << 16 | 1 << 32),
        # perf's tid -1: the task the CPU last switched to, the one exiting
        (400, 77, ev.SWITCH, 77, 120 | 120 << 16 | 1 << 32),
        (500, 0, ev.WQ_START, 0xffff0001, perf.FAKE_BASE), (700, 0, ev.VEC_ENTRY, 236, 1)]
    meta = json.loads((out / "trace.json").read_text())
    assert meta["backend"] == "perf" and meta["vectors"] == ["reschedule", "local_timer"]
    assert meta["symbols"] == {"0x%x" % perf.FAKE_BASE: "vmstat_update"}
    assert meta["missing"] == ["irq_vectors:irq_work_exit"] and meta["cpus"] == [1]
    assert meta["warnings"] == ["perf lost 2 events (its buffer was full)",
                                "2 lines of perf script could not be read"]
    assert meta["events"]["dropped"] == 2
    assert meta["cost"]["setup_cpu_ns"] == 7 and meta["cost"]["convert_ns"] > 0
    assert perf.lost_events("perf.data") == 2


def test_move_into_hands_convert_the_costs(tmp_path, monkeypatch, tracefs):
    monkeypatch.setattr(perf, "perf_path", lambda: "/x/perf")
    t = perf.PerfTracer("2", str(tmp_path / "w"))
    os.makedirs(t.dir)
    t.setup_cpu_ns, t.cpu_ns, t.others, t.start_ns, t.end_ns = 40, 30, [0, 1], 1, 2
    seen = {}
    monkeypatch.setattr(perf, "convert", lambda *a, **k: seen.update(args=a, kw=k))
    t.move_into("out")
    # the rusage at exit below /proc's ticks at the start: no negative time
    assert seen["kw"]["cost"] == {"setup_cpu_ns": 40, "tracing_cpu_ns": 0,
                                  "process_cpus": "0-1"}
    assert seen["args"] == (t.data, "out", t.kinds, "2", 1, 2, [])
    assert not os.path.exists(t.dir)
