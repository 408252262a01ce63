# SPDX-License-Identifier: GPL-2.0-only
"""trace.causes: the one model of a cause: every category with its own colour,
the names of vectors, softirqs, IRQs and tasks, a task's cause of older results
read as the same cause, the words people read, RT throttling told from a
preemption by priorities, and the remedy rule of each cause."""
import pytest

from jtrpy.trace import causes as C


def test_each_category_has_its_own_colour():
    colours = [c.colour for c in C.CATEGORIES]
    assert len(set(colours)) == len(colours) == len(C.BY_NAME)
    assert C.UNKNOWN_COLOUR not in colours
    assert C.colour(C.TICK) == C.BY_NAME[C.TICK].colour
    assert C.colour("a category of a newer jtr") == C.UNKNOWN_COLOUR
    assert set(C.WATCH) <= set(C.BY_NAME)
    for cat, _ in (C.LOCAL_TIMER, C.HOST_STEAL, C.OUTSIDE, C.LATE, C.TYPICAL):
        assert cat in C.BY_NAME


@pytest.mark.parametrize("kind,want", [
    ("local_timer", (C.TICK, "local timer", "local timer")),
    ("reschedule", (C.IPI, "reschedule", "IPI reschedule")),
    ("irq_work", (C.IPI, "irq_work", "IPI irq_work")),
    ("thermal_apic", (C.HARDIRQ, "thermal_apic", "hardirq thermal_apic")),
])
def test_vector_kinds(kind, want):
    assert C.vector(kind) == want


def test_names_of_softirqs_irqs_and_tasks():
    assert [C.softirq(v) for v in (0, 1, 3, 9)] == ["HI", "TIMER", "NET_RX", "RCU"]
    assert C.softirq(10) == "vec 10" and C.softirq(-1) == "vec -1"
    assert C.irq(36, "virtio1-req.0") == "36 virtio1-req.0"
    assert C.task("bash", 7) == "bash" and C.task("", 7) == "pid 7"
    assert str(C.Task("kworker/1:2", 41, 120)) == "kworker/1:2" and str(C.Task("", 9)) == "pid 9"


@pytest.mark.parametrize("name,key", [
    ("bash (pid 22607, prio 120)", "bash"),         # one row per pid, as older jtr wrote
    ("kworker/1:1 (prio 120)", "kworker/1:1"),
    ("a b (pid 3)", "a b"),
    ("bash", "bash"),
    ("my (app)", "my (app)"),                       # brackets of the comm itself kept
])
def test_cause_key_reads_older_task_names_as_the_comm(name, key):
    assert C.cause_key(C.TASK, name) == (C.TASK, key)


def test_cause_key_leaves_other_categories_alone():
    assert C.cause_key(C.HARDIRQ, "36 x (pid 3)") == (C.HARDIRQ, "36 x (pid 3)")


def test_task_labels():
    assert C.task_label("bash", tasks=7) == "bash (7 tasks)"
    assert C.task_label("kworker/1:2", pid=41, prio=120) == "kworker/1:2 (pid 41, prio 120)"
    assert C.task_label("pid 41", pid=41, prio=120) == "pid 41 (prio 120)"
    assert C.task_label("bash") == "bash"
    # a damaged result's (the fuzzer's tasks[0].pid = 'x' was a traceback)
    assert C.task_label("bash", tasks="7", pid="x", prio=True) == "bash"
    assert C.label({"category": C.TASK, "name": "bash", "tasks": [{"pid": "x", "prio": 120}]}) \
        == "bash (prio 120)"
    task = {"category": C.TASK, "name": "bash", "tasks": [{"pid": 5, "prio": 120}]}
    assert C.label(task) == "bash (pid 5, prio 120)"
    assert C.label(dict(task, pids=3)) == "bash (3 tasks)"
    assert C.label(dict(task, tasks=[{"pid": 5}, {"pid": 6}])) == "bash (2 tasks)"
    assert C.label({"category": C.TASK, "name": "bash", "tasks": "x"}) == "bash"
    assert C.label({"category": C.HARDIRQ, "name": "36 virtio"}) == "36 virtio"
    assert C.label({"category": C.NMI}) == C.NMI and C.label({}) == "?"


def test_task_labels_name_their_containers():
    task = {"category": C.TASK, "name": "stress", "tasks": [{"pid": 5, "prio": 120}],
            "containers": ["docker 0123456789ab"]}
    assert C.label(task) == "stress (pid 5, prio 120) [docker 0123456789ab]"
    many = dict(task, pids=5, containers=["a.scope", "b.scope", "c.scope", "d.scope", "e.scope"])
    assert C.label(many) == "stress (5 tasks) [a.scope, b.scope, c.scope, 2 more]"
    assert C.label(dict(task, containers=[])) == "stress (pid 5, prio 120)"


@pytest.mark.parametrize("probe,next_pid,next_prio,want", [
    (49, 0, 120, C.THROTTLING),         # a FIFO probe's CPU went idle
    (49, 77, 120, C.THROTTLING),        # ... or to a normal task
    (49, 77, None, C.THROTTLING),       # ... or to a task of no known prio
    (49, 77, 49, C.TASK),               # the same priority: round robin, a preemption
    (49, 77, 10, C.TASK),               # a higher priority (lower number) preempts
    (120, 0, 120, C.TASK),              # a normal probe is only ever preempted
    (None, 0, 120, C.TASK),
])
def test_preemption_or_throttling(probe, next_pid, next_prio, want):
    assert C.preemption(probe, next_pid, next_prio) == want


def test_throttling_name():
    assert C.throttling_name({"runtime_us": 950000, "period_us": 1000000}) == \
        "sched_rt_runtime_us 950000 of 1000000"
    assert C.throttling_name({"runtime_us": -1, "period_us": 1000000}) == C.FAIR_SERVER
    # RT group scheduling: the probe's cpu cgroup's setting throttled it
    assert C.throttling_name({"runtime_us": 800000, "period_us": 1000000, "cgroup": "/",
                              "sysctl_runtime_us": 950000}) == \
        "cpu.rt_runtime_us 800000 of 1000000 (cgroup /)"
    assert C.throttling_name({"runtime_us": -1, "period_us": 1000000, "cgroup": "/",
                              "sysctl_runtime_us": -1}) == C.FAIR_SERVER
    for rt in (None, {}, {"runtime_us": "950000", "period_us": 1000000}, "x"):
        assert C.throttling_name(rt) == "the RT runqueue throttled"


@pytest.mark.parametrize("category,name,works,rule", [
    (C.TASK, "kworker/u8:1", ("vmstat_update",), "unbound_work"),
    (C.TASK, "kworker/3:0", ("vmstat_update", "x"), "vmstat"),
    (C.TASK, "kworker/3:0", (), "percpu_work"),
    (C.TASK, "migration/3", (), "percpu_kthread"),
    (C.TASK, "myapp", (), "tasks"),
    # PREEMPT_RT's threaded IRQ handler: its IRQ's affinity moves it
    (C.TASK, "irq/25-virtio0-", (), "irq"),
    (C.TASK, "irqbalance", (), "tasks"),
    (C.TASK, "ktimers/1", (), "percpu_kthread"),   # PREEMPT_RT's timer softirq thread
    (C.SOFTIRQ, "HRTIMER", (), "timers"),
    (C.SOFTIRQ, "vec 12", (), None),
    (C.IPI, "call_function_single", (), "ipi"),
    (C.IPI, "something new", (), None),
    (C.TICK, C.WATCHDOG_FN, (), "watchdog"),
    (C.TICK, "local timer", (), "tick"),
    (C.NO_EVENT, "host preemption (steal)", (), "host"),
    (C.OTHER, "x", (), None),                   # a category with no rule
    (C.NOT_TRACED, "outside the trace", (), None),
    ("a newer category", "x", (), None),
])
def test_rule_of(category, name, works, rule):
    assert C.rule_of(category, name, works) == rule
