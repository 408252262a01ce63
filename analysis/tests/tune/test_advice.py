"""tune.advice: the rule base (cause -> rule), RT throttling's shape, the
remedies' changes against a machine's facts, and the profile they make (read back
by jtr's loader and checked as jtr tune apply checks it)."""
import os
import re

import pytest

from jtrpy.system.cpus import online_cpus
from jtrpy.tune import advice as A
from jtrpy.tune.checks import check_profile
from jtrpy.tune.profile import Profile


@pytest.mark.parametrize("category,name,works,shaped,rule", [
    ("timer tick", "local timer", (), False, "tick"),
    ("timer tick", "local timer", (), True, "rt_throttling"),
    ("task preemption", "bash (pid 12, prio 120)", (), False, "tasks"),
    ("task preemption", "kworker/1:1 (pid 41, prio 120)", ("vmstat_update",), False, "vmstat"),
    ("task preemption", "kworker/1:1 (pid 41, prio 120)", ("gc_worker",), False,
     "percpu_work"),
    ("task preemption", "kworker/u4:2 (pid 9, prio 120)", (), False, "unbound_work"),
    ("task preemption", "ksoftirqd/1 (pid 22, prio 120)", (), False, "percpu_kthread"),
    ("hardirq", "36 virtio1-req.0", (), False, "irq"),
    ("softirq", "NET_RX", (), False, "irq"),
    ("softirq", "RCU", (), False, "rcu"),
    ("softirq", "TIMER", (), False, "timers"),
    ("IPI", "reschedule", (), False, "tasks"),
    ("IPI", "call_function", (), False, "ipi"),
    ("IPI", "irq_work", (), False, "irq_work"),
    ("page fault", "user", (), False, "page_faults"),
    ("NMI", "perf_event_nmi_handler", (), False, "nmi"),
    ("no kernel event", "VM exits, SMI or hardware", (), False, "host"),
    ("no kernel event", "host preemption (steal)", (), False, "host"),
    ("timer IRQ latency", "hardware, hypervisor or interrupts off", (), False, "cstate"),
    ("wake-up path", "return to user space", (), False, None),
    ("other events", "sched_waking", (), False, None),
])
def test_classify(category, name, works, shaped, rule):
    assert A.classify(category, name, works, shaped) == rule
    assert rule is None or rule in A.RULE and rule in A.MAKERS


def test_every_rule_has_a_maker():
    assert set(A.MAKERS) == set(A.RULE)


RT = {"enabled": True, "runtime_us": 950000, "period_us": 1000000}


def test_throttle_gaps_by_length_and_period():
    s = 10 ** 9
    outs = [(5 * s, 50_000_000), (6 * s + 1000, 49_900_000), (8 * s, 51_000_000),
            (int(6.5 * s), 50_000_000),         # the length, off the period
            (7 * s, 2_000_000)]                 # the period, not the length
    got = A.throttle_gaps(outs, RT, 50)
    assert got == {5 * s, 6 * s + 1000, 8 * s}
    assert A.throttle_gaps(outs, RT, None) == set()                 # not FIFO
    assert A.throttle_gaps(outs, dict(RT, enabled=False), 50) == set()
    assert A.throttle_gaps([(s, 50_000_000)], RT, 50) == {s}        # one: the length alone


def facts(**kw):
    f = {"sysctl": {"kernel.sched_rt_runtime_us": "950000", "vm.stat_interval": "1",
                    "kernel.numa_balancing": "0", "kernel.timer_migration": "1",
                    "kernel.nmi_watchdog": "0", "kernel.watchdog_cpumask": "0-1"},
         "thp": "madvise", "ksm": "0", "dma_latency": 2000000000, "nohz_full": False,
         "cmdline": (False, "no grub here"), "workqueue_cpumask": True,
         "online": [0, 1]}
    f.update(kw)
    return f


def charges(*items):
    out = {}
    for rule, cat, name, ns, n in items:
        out.setdefault(rule, {})[(cat, name)] = [ns, n]
    return out


def test_ranking_and_what_cannot_be_done():
    ctx = A.Context([1], facts())
    rs = A.advise(charges(("tick", "timer tick", "local timer", 9000, 9),
                          ("vmstat", "task preemption", "kworker/1:1 (pid 41, prio 120)", 500, 1),
                          ("rt_throttling", "RT throttling", "x", 100000, 2),
                          ("host", "no kernel event", "VM exits, SMI or hardware", 1 << 20, 3),
                          ("nmi", "NMI", "perf_event_nmi_handler", 10, 1)),
                  ctx, outlier_ns=(1 << 20) + 109510, duration_ns=2 * 10 ** 9)
    assert [r["rule"] for r in rs] == ["rt_throttling", "vmstat", "tick", "nmi", "host"]
    assert [r["applicable"] for r in rs] == [True, True, False, False, False]
    assert rs[0]["per_s_ns"] == 50000.0 and rs[1]["changes"][0]["value"] == "10"
    assert rs[2]["boot"] == ["nohz_full=1", "rcu_nocbs=1"]
    assert "CONFIG_NO_HZ_FULL" in rs[2]["why_not"]
    assert rs[3]["why_not"] == "kernel.nmi_watchdog is 0 already"
    assert "host or its firmware" in rs[4]["why_not"]


def test_tick_with_nohz_full_still_needs_a_reboot():
    ctx = A.Context([1], facts(nohz_full=True, cmdline=(True, "grub: a drop-in")))
    r = A.advise(charges(("tick", "timer tick", "local timer", 9000, 9)), ctx, 9000, 10 ** 9)[0]
    assert not r["applicable"] and "jtr tune apply --boot" in r["why_not"]


def test_tasks_pinned_by_their_owner_get_a_group_rule():
    name = "busy (pid 77, prio 120)"
    tasks = {name: [{"pid": 77, "comm": "busy", "cmdline": "busy --spin 1", "cpus": [1],
                     "kernel": False}]}
    r = A.advise(charges(("tasks", "task preemption", name, 5000, 5)),
                 A.Context([1], facts(), tasks), 5000, 10 ** 9)[0]
    opts = {c["option"]: c["value"] for c in r["changes"]}
    assert opts["isolated_cores"] == "1"
    assert opts["group.jtr_busy"] == r"0:*:*:00000001:^busy\ \-\-spin\ 1$"


def test_cmdline_regex_is_one_line_and_exact():
    for cmd in ("python3 -c import time\nwhile 1: pass # x", "a" * 300, "x\u2028y"):
        r = A.cmdline_regex(cmd)
        assert "\n" not in r and re.search(r, cmd)
    assert not re.search(A.cmdline_regex("sh -c x"), "sh -c xy")


def test_the_profile_loads_and_passes_the_checks(tmp_path, monkeypatch):
    if len(online_cpus()) < 2:
        pytest.skip("needs two CPUs (one measured, one to keep)")
    cpu = max(online_cpus())
    name = "busy (pid 77, prio 120)"
    tasks = {name: [{"pid": 77, "comm": "busy", "cmdline": "busy -x #1", "cpus": [cpu],
                     "kernel": False}]}
    f = facts(online=online_cpus())
    rs = A.advise(charges(("tasks", "task preemption", name, 5000, 5),
                          ("rt_throttling", "RT throttling", "x", 100000, 2),
                          ("page_faults", "page fault", "user", 10, 1)),
                  A.Context([cpu], f, tasks), 105010, 10 ** 9)
    text = A.profile_text([r for r in rs if r["applicable"]], "jtr-baseline", "r (gap)")
    d = tmp_path / "jtr-advised"
    d.mkdir()
    (d / "tuned.conf").write_text(text)
    lines = text.splitlines()
    for i, line in enumerate(lines):        # one comment line over each change
        if "=" in line and not line.startswith(("#", "summary", "include")):
            assert lines[i - 1].startswith("# "), line
    p = Profile(str(d))
    assert p.units["sysctl"]["kernel.sched_rt_runtime_us"] == "-1"
    assert p.units["vm"]["transparent_hugepages"] == "never"
    assert re.search(p.units["scheduler"]["group.jtr_busy"].split(":", 4)[4], "busy -x #1")
    assert "jtr-baseline" in p.files[0]
    check_profile(p)


def test_docs_table_is_the_rule_base():
    """docs/tuning.md's "From cause to remedy" table has one row a rule, as RULES says."""
    here = __file__
    for _ in range(4):
        here = os.path.dirname(here)
    with open(os.path.join(here, "docs", "tuning.md")) as f:
        text = f.read()
    table = text[text.index("### From cause to remedy"):]
    rows = table.split("\n\n")[2].splitlines()[2:]
    assert rows == ["| `%s` | %s | %s | %s |" % (r.id, r.cause, r.remedy, r.needs)
                    for r in A.RULES]
