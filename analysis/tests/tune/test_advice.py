# SPDX-License-Identifier: GPL-2.0-only
"""tune.advice: the rule base (cause -> rule), RT throttling's shape, the
remedies' changes against a machine's facts, and the profile they make (read back
by jtr's loader and checked as jtr tune apply checks it)."""
import json
import os
import re
import subprocess

import pytest

from jtrpy.system.cpus import online_cpus
from jtrpy.trace import causes as C
from jtrpy.tune import advice as A
from jtrpy.tune.checks import check_profile
from jtrpy.tune.profile import Profile


@pytest.mark.parametrize("category,name,works,rule", [
    ("timer tick", "local timer", (), "tick"),
    ("timer tick", "watchdog_timer_fn", (), "watchdog"),
    ("RT throttling", "sched_rt_runtime_us 950000 of 1000000", (), "rt_throttling"),
    ("task preemption", "bash", (), "tasks"),
    ("task preemption", "kworker/1:1", ("vmstat_update",), "vmstat"),
    ("task preemption", "kworker/1:1", ("gc_worker",), "percpu_work"),
    ("task preemption", "kworker/u4:2", (), "unbound_work"),
    ("task preemption", "ksoftirqd/1", (), "percpu_kthread"),
    ("hardirq", "36 virtio1-req.0", (), "irq"),
    ("softirq", "NET_RX", (), "irq"),
    ("softirq", "RCU", (), "rcu"),
    ("softirq", "TIMER", (), "timers"),
    ("IPI", "reschedule", (), "tasks"),
    ("IPI", "call_function", (), "ipi"),
    ("IPI", "irq_work", (), "irq_work"),
    ("page fault", "user", (), "page_faults"),
    ("NMI", "perf_event_nmi_handler", (), "nmi"),
    ("no kernel event", "VM exits, SMI or hardware", (), "host"),
    ("no kernel event", "host preemption (steal)", (), "host"),
    ("timer IRQ latency", "hardware, hypervisor or interrupts off", (), "cstate"),
    ("wake-up path", "return to user space", (), None),
    ("other events", "sched_waking", (), None),
])
def test_classify(category, name, works, rule):
    assert A.classify(category, name, works) == rule
    assert rule is None or rule in A.RULE and rule in A.MAKERS


def test_every_category_rule_is_a_rule():
    """The cause model's rules are tune/advice.py's."""
    for c in C.CATEGORIES:
        assert not c.rule or c.rule in A.RULE, c


def test_every_rule_has_a_maker():
    assert set(A.MAKERS) == set(A.RULE)


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
                          ("vmstat", "task preemption", "kworker/1:1", 500, 1),
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


def test_cpu_dma_latency_that_only_root_can_read(monkeypatch):
    """As a user other than root /dev/cpu_dma_latency cannot be read: the facts say
    so and the C-state remedy says why it gives nothing, instead of jtr advise
    ending in a traceback (KnobError: permission denied)."""
    def denied():
        raise A.knobs.KnobError("/dev/cpu_dma_latency: permission denied")

    monkeypatch.setattr(A.knobs, "read_dma_latency", denied)
    monkeypatch.setattr(A.os.path, "exists", lambda p: p == A.knobs.DMA_LATENCY or
                        os.path.lexists(p))
    f = A.facts()
    assert f["dma_latency"] is None
    assert f["dma_latency_why"] == ("/dev/cpu_dma_latency: permission denied (as root, jtr "
                                    "advise reads it)")
    r = A.advise(charges(("cstate", "idle", "C-state exit", 5000, 5)),
                 A.Context([1], facts(dma_latency=None, dma_latency_why=f["dma_latency_why"])),
                 5000, 10 ** 9)[0]
    assert not r["applicable"] and r["why_not"] == f["dma_latency_why"]


def test_tasks_pinned_by_their_owner_get_a_group_rule():
    name = "busy"
    tasks = {name: [{"pid": 77, "comm": "busy", "cmdline": "busy --spin 1", "cpus": [1],
                     "kernel": False}]}
    r = A.advise(charges(("tasks", "task preemption", name, 5000, 5)),
                 A.Context([1], facts(), tasks), 5000, 10 ** 9)[0]
    opts = {c["option"]: c["value"] for c in r["changes"]}
    assert opts["isolated_cores"] == "1"
    assert opts["group.jtr_busy"] == r"0:*:*:00000001:^busy\ \-\-spin\ 1$"


def test_jtrs_own_programs_are_not_moved_nor_counted_and_the_unseen_in_one_line():
    """A ping's jtr-pong and the tracer preempting the measured thread are the
    measurement: advise does not propose moving them nor count them in a
    saving, and says so once; tasks not to be seen now are one note, not one each."""
    r = A.advise(charges(("tasks", "task preemption", "jtr-pong (pid 5, prio 120)", 700, 7),
                         ("tasks", "task preemption", "jtr-trace", 300, 3)),
                 A.Context([1], facts()), 1000, 10 ** 9)
    assert r == []
    r = A.advise(charges(("tasks", "task preemption", "jtr-pong", 700, 7),
                         ("tasks", "task preemption", "bash", 200, 2),
                         ("tasks", "task preemption", "sleep", 100, 1),
                         ("tasks", "task preemption", "apt-cache", 50, 1)),
                 A.Context([1], facts(), {}), 1050, 10 ** 9)[0]
    assert r["saving_ns"] == 350 and [c["name"] for c in r["causes"]] == [
        "bash", "sleep", "apt-cache"]
    assert r["notes"] == [
        "bash, sleep, apt-cache are not to be seen now (exited, or outside this pid "
        "namespace): isolated_cores moves them if they run here",
        "jtr-pong: jtr's own program, part of the measurement: not moved, and not counted "
        "in what this predicts"]
    assert not any("jtr-pong" in c["comment"] for c in r["changes"])


def test_a_transports_own_receive_path_is_not_a_devices():
    """Over loopback the softirqs NET_RX and NET_TX on the measured CPUs are the
    run's own messages: the IRQ rule neither counts them nor proposes moving them
    for them, and says so; a device's IRQ beside them is still its cause. Over a
    device (or without a transport) NET_RX is the IRQ rule's, as before."""
    assert A.own_path({"kind": "udp", "address": "127.0.0.1:5000"}) == \
        "udp over loopback 127.0.0.1:5000"
    assert A.own_path({"kind": "tcp", "address": "[::1]:80"}) == "tcp over loopback [::1]:80"
    for iface in ("127.0.0.1", "lo"):
        assert A.own_path({"kind": "mcast", "address": "239.1.1.1:5000", "iface": iface})
    for t in ({"kind": "udp", "address": "10.0.0.2:5000"}, {"kind": "shm", "address": "x"},
              None, {"kind": "udp", "address": "127"},
              {"kind": "mcast", "address": "239.1.1.1:5000", "iface": "10.0.0.1"}):
        assert A.own_path(t) is None, t
    rx = [("irq", "softirq", "NET_RX", 900, 9), ("irq", "softirq", "NET_TX", 50, 1)]
    f = dict(facts(), online=[0, 1])
    path = A.own_path({"kind": "udp", "address": "127.0.0.1:5000"})
    assert A.advise(charges(*rx), A.Context([1], f, own_path=path), 950, 10 ** 9) == []
    [r] = A.advise(charges(*rx, ("irq", "hardirq", "36 virtio1-req.0", 100, 1)),
                   A.Context([1], f, own_path=path), 1050, 10 ** 9)
    assert r["saving_ns"] == 100 and [c["name"] for c in r["causes"]] == ["36 virtio1-req.0"]
    assert r["notes"][-1] == (
        "softirq NET_RX (9x, 900 ns); softirq NET_TX (1x, 50 ns): the run's own messages "
        "(udp over loopback 127.0.0.1:5000): the kernel's receive path of the measured "
        "traffic, not a device's interrupt: not moved, and not counted in what this predicts")
    [r] = A.advise(charges(*rx), A.Context([1], f), 950, 10 ** 9)
    assert r["rule"] == "irq" and r["saving_ns"] == 950
    # the measurement's own, for the one line that names them
    own = A.own_causes(charges(*rx, ("tasks", "task preemption", "jtr-trace", 2000, 2),
                               ("tasks", "task preemption", "bash", 300, 3)),
                       A.Context([1], f, own_path=path))
    assert [(c["name"], c["ns"], c["why"]) for c in own] == [
        ("jtr-trace", 2000, "jtr's own program"),
        ("NET_RX", 900, "the run's own messages (udp over loopback 127.0.0.1:5000)"),
        ("NET_TX", 50, "the run's own messages (udp over loopback 127.0.0.1:5000)")]
    assert A.own_causes(charges(*rx), A.Context([1], f)) == []


def test_cmdline_regex_is_one_line_and_exact():
    for cmd in ("python3 -c import time\nwhile 1: pass # x", "a" * 300, "x\u2028y"):
        r = A.cmdline_regex(cmd)
        assert "\n" not in r and re.search(r, cmd)
    assert not re.search(A.cmdline_regex("sh -c x"), "sh -c xy")


def test_the_profile_loads_and_passes_the_checks(tmp_path, monkeypatch):
    if len(online_cpus()) < 2:
        pytest.skip("needs two CPUs (one measured, one to keep)")
    cpu = max(online_cpus())
    name = "busy"
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
    assert p.files == [str(d / "tuned.conf")]       # jtr-baseline written out, not included
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


# ---------------------------------------------------------------- tuned's own loader

TUNED_LOAD = r"""
import json, sys
sys.path.insert(0, "/usr/lib/python3/dist-packages")
import tuned.profiles as P
from tuned.profiles.locator import Locator
from tuned.profiles.variables import Variables
from tuned.utils.global_config import GlobalConfig
loader = P.Loader(Locator(sys.argv[1].split(":")), P.Factory(), P.Merger(), GlobalConfig(),
                  Variables())
prof = loader.load([sys.argv[2]])
print(json.dumps({n: dict(u.options) for n, u in prof.units.items()}))
"""


def tuned_load(dirs, name):
    """tuned's own Loader (the system Python's tuned package) on only @dirs:
    (exit status, {unit: options} or its error)."""
    if not os.path.isdir("/usr/lib/python3/dist-packages/tuned/profiles"):
        pytest.skip("tuned is not installed (its Python package is missing): make deps "
                    "installs it")
    p = subprocess.run(["/usr/bin/python3", "-c", TUNED_LOAD, ":".join(dirs), name],
                       capture_output=True, text=True, timeout=60)
    return p.returncode, json.loads(p.stdout) if p.returncode == 0 else p.stderr


OWN = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))), "tuning-profiles")


@pytest.mark.parametrize("base", ["jtr-baseline", "jtr-latency", "jtr-isolate",
                                  "jtr-realtime"])
def test_the_advised_profile_loads_in_tuned_alone(tmp_path, base):
    """jtr advise --profile-dir's file, on top of each of jtr's profiles, loads with
    tuned's own loader from its folder alone (jtr's profiles installed nowhere
    tuned looks), and holds what tuned makes of the base chain plus the changes."""
    rem = [{"rule": "vmstat", "saving_ns": 9000, "share": 0.5, "changes": [
        {"section": "sysctl", "option": "vm.stat_interval", "value": "10", "comment": "a"},
        {"section": "sysctl", "option": "vm.swappiness", "value": "5", "comment": "b"}]}]
    d = tmp_path / "jtr-advised"
    d.mkdir()
    (d / "tuned.conf").write_text(A.profile_text(rem, base, "r (gap)"))
    rc, units = tuned_load([str(tmp_path)], "jtr-advised")
    assert rc == 0, units
    rc, want = tuned_load([OWN], base)              # the chain, from jtr's own folder
    assert rc == 0, want
    want.setdefault("sysctl", {}).update({"vm.stat_interval": "10", "vm.swappiness": "5"})
    assert units == want
    p = Profile(str(d), expand=False)               # and jtr's loader reads the same
    assert p.units["sysctl"]["vm.stat_interval"] == "10"
    if base != "jtr-baseline":
        assert p.raw == Profile(base, expand=False).raw | {"sysctl": {
            **Profile(base, expand=False).raw["sysctl"], "vm.stat_interval": "10",
            "vm.swappiness": "5"}}


def test_a_stock_tuned_base_stays_included(tmp_path):
    """A base tuned finds by name itself (its own profile) is included, not copied."""
    if not os.path.isfile("/usr/lib/tuned/latency-performance/tuned.conf") and \
            not os.path.isfile("/usr/lib/tuned/profiles/latency-performance/tuned.conf"):
        pytest.skip("tuned's latency-performance profile is not installed")
    text = A.profile_text([], "latency-performance", "r (gap)")
    assert "\ninclude=latency-performance\n" in text


def test_the_ipi_rule_names_each_sender_with_its_remedy():
    """Where the tracer saw the sends, the ipi rule names the senders (most time
    first, at most three a cause) with what removes each: a TLB shootdown, an
    expedited RCU grace period, anything else pinned away."""
    senders = {"call_function_single": [
        {"sender": "java (pid 812, CPU 0) flush_tlb_func", "count": 40, "total_ns": 9000},
        {"sender": "rcu_exp_gp_kthr (pid 17, CPU 0) rcu_exp_handler", "count": 2,
         "total_ns": 900},
        {"sender": "jtr-inject (pid 9, CPU 0) cpuid_smp_cpuid", "count": 1, "total_ns": 500},
        {"sender": "bash (pid 5, CPU 0) sent at wakeup_preempt+0x55", "count": 1,
         "total_ns": 100}]}
    [r] = A.advise(charges(("ipi", "IPI", "call_function_single", 10500, 44)),
                   A.Context([1], facts(), senders=senders), 10500, 10 ** 9)
    assert r["why_not"] == "kernel.numa_balancing is 0 already"
    assert len(r["notes"]) == 3
    assert r["notes"][0].startswith("IPI call_function_single from java (pid 812, CPU 0) "
                                    "flush_tlb_func (40x, 9.0 us): TLB shootdowns")
    assert "rcupdate.rcu_normal=1" in r["notes"][1]
    assert r["notes"][2].endswith("pin it to the housekeeping CPUs (0), or stop it asking "
                                  "CPU 1 to run cpuid_smp_cpuid")
    # without the sends seen: the rule as before, no note
    [r] = A.advise(charges(("ipi", "IPI", "call_function_single", 10500, 44)),
                   A.Context([1], facts(**{"sysctl": {"kernel.numa_balancing": "1"}})),
                   10500, 10 ** 9)
    assert r["applicable"] and r["notes"] == []
