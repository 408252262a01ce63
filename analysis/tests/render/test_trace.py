# SPDX-License-Identifier: GPL-2.0-only
"""render.trace: an event a line, its time from the start of the trace, its CPU
and what it says; every event of a log in time order."""
from jtrpy.render.trace import event_lines, format_event
from jtrpy.trace import events as E

from ..trace.test_events import SYMS, T0, every_type


def test_format_event_lines(tmp_path):
    evs = every_type()
    E.write_events(str(tmp_path), evs, T0 - 12_345_678_000, T0 + 1000, meta={"symbols": SYMS})
    log = E.read_events(str(tmp_path))
    lines = [format_event(ev, log.meta) for ev in log.iter_events()]
    assert lines[5] == "   12.345678  cpu1  local_timer_entry vector=236"
    assert lines[0].endswith("  cpu1  irq_handler_entry 36 virtio1-req")
    assert lines[1].endswith("irq_handler_exit 36 ret=handled")
    assert lines[3].endswith("softirq_entry NET_RX")
    assert lines[7].endswith("nmi_handler 0xffffffff81000001 2100 ns")
    assert lines[8].endswith("sched_switch prev=gap/1(pid 812, prio 89, R+) -> "
                             "kworker/1:2(pid 123, prio 120)")
    assert lines[9].endswith("sched_wakeup fifo-spin(pid 4242, prio 9) target_cpu=1")
    assert lines[11].endswith("sched_migrate_task bash(pid 77) cpu 2 -> 1")
    assert lines[12].endswith("page_fault_user address=0x7f0000001000 ip=0x401000 "
                              "error_code=0x6")
    assert lines[14].endswith("workqueue_execute_start vmstat_update")
    assert lines[16].endswith("hrtimer_expire_entry tick_sched_timer")
    assert lines[18].endswith("timer_expire_entry 0xffffffff81200000")
    assert lines[20].endswith("steal_time host steal so far 4.323902 s (first reading)")
    assert lines[21].endswith("steal_time host took 50.1 us (so far 4.323952 s)")


def test_every_event_a_line_in_time_order(tmp_path):
    # written out of order on two CPUs, the time from the start of the trace
    E.write_events(str(tmp_path), [(T0 + 3000, 1, 2, E.IRQ_EXIT, 0, 36, 1, None),
                                   (T0 + 1000, 1, 1, E.IRQ_ENTRY, 0, 36, 0, "eth0")],
                   T0, T0 + 10 ** 6)
    log = E.read_events(str(tmp_path))
    lines = event_lines(log)
    assert next(lines) == "    0.000001  cpu1  irq_handler_entry 36 eth0"
    assert list(lines) == ["    0.000003  cpu2  irq_handler_exit 36 ret=handled"]
    assert list(event_lines(log)) == [format_event(ev, log.meta) for ev in log.iter_events()]


def test_no_start_in_the_description_counts_from_zero(tmp_path):
    E.write_events(str(tmp_path), [(2_500_000_000, 1, 3, E.IRQ_EXIT, 0, 9, 0, None)],
                   0, 3_000_000_000)
    log = E.read_events(str(tmp_path))
    assert format_event(log.event(0), {}) == "    2.500000  cpu3  irq_handler_exit 9 " \
                                             "ret=unhandled"
