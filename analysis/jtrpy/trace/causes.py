# SPDX-License-Identifier: GPL-2.0-only
"""causes - what a cause of an outlier is: the one model every reader of an
attribution uses.

A cause is a pair (category, name). The category says what kind of thing took
the time; CATEGORIES has one row per category with its colour on pages, the
remedy rule of tune/advice.py that removes it (rule_of() refines it by name),
whether kernel events show it, and a line for people. The name says which one:
the IRQ ("36 virtio1-req.0"), the vector kind, the softirq ("NET_RX"), the
task's comm ("kworker/1:2"; one row per comm, its pids counted: task_label()).

The functions below are the one classification of kernel events into causes:
the attribution's walker and its numpy path (attribution/attribute.py,
vector.py), jtr wake's decomposition (wake.py), the Perfetto export and jtr
watch (ebpf/watch.c's table of WATCH categories, compared by
analysis/tests/test_parity.py) call them, so a new category is one row here
plus the rule that classifies its events.
"""
import re
from typing import NamedTuple

from .events import SOFTIRQ_NAMES, TICK_DEPS


class Category(NamedTuple):
    name: str
    colour: str         # on pages and plots
    rule: str           # tune/advice.py's rule that removes it ("" per name or none)
    kernel: bool        # seen as kernel events (False: what no event shows, bookkeeping)
    about: str          # one line for people


TICK = "timer tick"
IPI = "IPI"
HARDIRQ = "hardirq"
SOFTIRQ = "softirq"
TASK = "task preemption"
THROTTLING = "RT throttling"
PAGE_FAULT = "page fault"
BLOCKED = "blocked"
NMI = "NMI"
NO_EVENT = "no kernel event"
BACKLOG = "backlog"
PATH = "own path"
OTHER = "other events"
NOT_TRACED = "not traced"
# jtr wake's components that are causes of their own
IRQ_LATENCY = "timer IRQ latency"
TIMER_IRQ = "timer IRQ"
WAKE_PATH = "wake-up path"
UNACCOUNTED = "unaccounted"

CATEGORIES = (
    Category(TICK, "#1f77b4", "tick", True, "the scheduler tick (local timer interrupt) "
             "and the timers it runs"),
    Category(IPI, "#ff7f0e", "", True, "an inter-processor interrupt: reschedule, "
             "function calls (TLB shootdowns), irq_work"),
    Category(HARDIRQ, "#2ca02c", "irq", True, "a device interrupt or another vector"),
    Category(SOFTIRQ, "#d62728", "", True, "a softirq outside an interrupt (NET_RX, "
             "TIMER, RCU, ...)"),
    Category(TASK, "#9467bd", "", True, "another task ran on the CPU the measurement "
             "needed"),
    Category(THROTTLING, "#393b79", "rt_throttling", True, "the kernel's RT throttling "
             "took the CPU from a SCHED_FIFO/RR task (sched_rt_runtime_us)"),
    Category(PAGE_FAULT, "#8c564b", "page_faults", True, "a page fault"),
    Category(BLOCKED, "#17becf", "", True, "jtr run app: the timed thread itself waited "
             "in the kernel, in the system call named (futex, clock_nanosleep, read, ...), "
             "until its waker woke it"),
    Category(NMI, "#e377c2", "nmi", True, "a non-maskable interrupt (perf, watchdog)"),
    Category(NO_EVENT, "#2b2b2b", "host", False, "no kernel event: the hypervisor (host "
             "preemption, VM exits), SMIs or the hardware"),
    Category(IRQ_LATENCY, "#aec7e8", "cstate", False, "a timer interrupt that came "
             "late: C-state exit, interrupts off, the host"),
    Category(TIMER_IRQ, "#ffbb78", "", True, "the timer interrupt that woke the thread"),
    Category(WAKE_PATH, "#98df8a", "", True, "the scheduler's switch to the woken thread "
             "and its return to user space"),
    Category(PATH, "#dbdb8d", "", False, "not a cause: a message's own way at its "
             "typical duration (the run's median from the send: the send call, the "
             "network stack, the wake-ups), or a timed call's own work at its median "
             "(jtr run app), where no kernel event took the time"),
    Category(BACKLOG, "#c49c94", "", False, "not a kernel cause: the message was sent "
             "late, behind earlier ones (the schedule's backlog; a run with much of it is "
             "not a valid measurement)"),
    Category(OTHER, "#bcbd22", "", True, "events that take no time of their own"),
    Category(UNACCOUNTED, "#c7c7c7", "", False, "events missing, or the clocks apart"),
    Category(NOT_TRACED, "#7f7f7f", "", False, "outside the tracer's time or CPUs"),
)
BY_NAME = {c.name: c for c in CATEGORIES}
# jtr watch's categories, in ebpf/watch.c's order (jtr_watch_cats)
WATCH = (TICK, IPI, HARDIRQ, SOFTIRQ, TASK, PAGE_FAULT, NMI, THROTTLING)
UNKNOWN_COLOUR = "#000000"

# the causes with fixed names
LOCAL_TIMER = (TICK, "local timer")
TIMER_SOFTIRQ = (SOFTIRQ, "TIMER")
HOST_UNMEASURED = (NO_EVENT, "hypervisor, SMI or hardware")
HOST_STEAL = (NO_EVENT, "host preemption (steal)")
HOST_OTHER = (NO_EVENT, "VM exits, SMI or hardware")
OUTSIDE = (NOT_TRACED, "outside the trace")
# a round trip or message sent late because earlier ones held the sender: the
# time from its intended send to its send call (a validity finding of the run)
LATE = (BACKLOG, "earlier messages held the sender")
# the typical time of a message's way, charged before no kernel event
TYPICAL = (PATH, "the median from the send")
# a timed call's own work at the run's median (jtr run app), charged before no kernel event
CALL_MEDIAN = (PATH, "the call's median")
# and the rest of a slow call no kernel event explains: its own code (a longer way
# through it than the median's), or the host's VM exits, SMIs or hardware
CALL_OWN = (NO_EVENT, "the call's own code, or VM exits")

IPI_KINDS = ("reschedule", "call_function", "call_function_single", "irq_work")
# the kernel's prio of the idle task, and the first prio that is not real-time
IDLE_PID = 0
RT_PRIO_END = 100


def colour(category):
    """A category's colour on pages (UNKNOWN_COLOUR for a word this version does
    not know: an older or newer result)."""
    c = BY_NAME.get(category)
    return c.colour if c else UNKNOWN_COLOUR


def vector(kind):
    """(category, name, chain link) of an irq_vectors kind."""
    if kind == "local_timer":
        return TICK, "local timer", "local timer"
    if kind in IPI_KINDS:
        return IPI, kind, "IPI " + kind
    return HARDIRQ, kind, "hardirq " + kind


def softirq(vec):
    """A softirq vector's name: HI, TIMER, ... RCU for 0..9."""
    return SOFTIRQ_NAMES[vec] if 0 <= vec < len(SOFTIRQ_NAMES) else "vec %d" % vec


def irq(number, action):
    """A device interrupt's name: '36 virtio1-req.0'."""
    return "%d %s" % (number, action)


def task(comm, pid):
    """A task's cause name: its comm (one row per comm, whatever its pids), or
    'pid N' when no event named it."""
    return comm if comm else "pid %d" % pid


class Task(NamedTuple):
    """A task while an attribution is made: the name of its cause is task()'s
    (str() gives it), the pid and prio are kept beside it (a cause's "tasks")."""
    comm: str
    pid: int
    prio: object = None

    def __str__(self):
        return task(self.comm, self.pid)


# a task cause's name as results before one cause per comm wrote it: "bash (pid
# 22607, prio 120)", "kworker/1:1 (prio 120)"
_OLD_TASK = re.compile(r"(.+?) \((?:pid \d+(?:, [^)]*)?|prio \d+)\)")


def cause_key(category, name):
    """(category, name) of a cause, a task's named by its comm whatever version
    wrote it: a cause of one run is the same cause of the next."""
    if category == TASK:
        m = _OLD_TASK.fullmatch(str(name))
        if m:
            return category, m.group(1)
    return category, name


def task_label(name, tasks=1, pid=None, prio=None):
    """A task cause for people: 'bash (7 tasks)', 'kworker/1:2 (pid 41, prio 120)'.
    A pid, prio or count that is not a whole number (a damaged result's) is
    left out."""
    def whole(v):
        return v if isinstance(v, int) and not isinstance(v, bool) else None
    tasks, pid, prio = whole(tasks) or 1, whole(pid), whole(prio)
    if tasks > 1:
        return "%s (%d tasks)" % (name, tasks)
    parts = (["pid %d" % pid] if pid is not None and not name.startswith("pid ") else []) + (
        ["prio %d" % prio] if prio is not None else [])
    return "%s (%s)" % (name, ", ".join(parts)) if parts else name


MAX_CONTAINERS_SHOWN = 3


def label(cause):
    """A cause (a dict with category and name; a task's with pids, tasks and
    prio) for people: the name, a task's with how many tasks of that comm, or
    its pid and prio when it is one, and the containers its tasks were in
    where their cgroups show them: 'stress (pid 7, prio 120) [docker 0123456789ab]';
    an IPI with its sender where the tracer saw it, the one of most time first:
    'call_function_single from java (pid 812, CPU 0) flush_tlb_func'."""
    name = str(cause.get("name") or cause.get("category") or "?")
    if cause.get("category") not in (TASK,) or not isinstance(cause.get("tasks"), list):
        return name + detail(cause)
    tasks = cause["tasks"]
    n = cause.get("pids") if isinstance(cause.get("pids"), int) else len(tasks)
    one = tasks[0] if tasks and isinstance(tasks[0], dict) else {}
    return task_label(name, n, one.get("pid"), one.get("prio")) + detail(cause)


def detail(cause):
    """What a cause's label says after its name: a task's containers ('
    [docker 0123456789ab]', at most MAX_CONTAINERS_SHOWN), an IPI's sender of
    most time (' from java (pid 812, CPU 0) flush_tlb_func and 2 more'); ''."""
    senders = cause.get("senders")
    if cause.get("category") == IPI and isinstance(senders, list) and senders and \
            isinstance(senders[0], dict) and isinstance(senders[0].get("sender"), str):
        return " from %s%s" % (senders[0]["sender"], " and %d more" % (
            len(senders) - 1) if len(senders) > 1 else "")
    boxes = [b for b in cause.get("containers") or () if isinstance(b, str)] \
        if cause.get("category") == TASK and isinstance(cause.get("containers"), list) else []
    if not boxes:
        return ""
    more = len(boxes) - MAX_CONTAINERS_SHOWN
    return " [%s%s]" % (", ".join(boxes[:MAX_CONTAINERS_SHOWN]),
                        ", %d more" % more if more > 0 else "")


def preemption(probe_prio, next_pid, next_prio):
    """The category of another task taking the CPU from the probe's task: RT
    throttling when the probe is a real-time task and the CPU went to the idle
    task or to one of lower priority (a runnable SCHED_FIFO/RR task loses its
    CPU to those only when the kernel throttles the RT runqueue), else task
    preemption."""
    if probe_prio is not None and probe_prio < RT_PRIO_END and (
            next_pid == IDLE_PID or next_prio is None or next_prio > probe_prio):
        return THROTTLING
    return TASK


FAIR_SERVER = "the fair server (sched_rt_runtime_us is -1)"


def throttling_name(rt):
    """RT throttling's cause name from a result's host.rt_throttling: the
    setting that throttles ('sched_rt_runtime_us 950000 of 1000000'); with it off
    (-1), what still takes the CPU from a real-time task for normal ones is the
    kernel's fair server (a deadline reservation for normal tasks, since Linux
    6.12; its runtime is in debugfs, sched/fair_server/cpuN/runtime). With RT
    group scheduling, the cpu cgroup's setting that throttled the probe:
    'cpu.rt_runtime_us 800000 of 1000000 (cgroup /)'."""
    if isinstance(rt, dict) and isinstance(rt.get("runtime_us"), int) and \
            isinstance(rt.get("period_us"), int):
        if rt["runtime_us"] < 0:
            return FAIR_SERVER
        if isinstance(rt.get("cgroup"), str):
            return "cpu.rt_runtime_us %d of %d (cgroup %s)" % (
                rt["runtime_us"], rt["period_us"], rt["cgroup"])
        return "sched_rt_runtime_us %d of %d" % (rt["runtime_us"], rt["period_us"])
    return "the RT runqueue throttled"


# tune/advice.py's rules by name, where the category alone does not say
SOFTIRQ_RULE = {"NET_RX": "irq", "NET_TX": "irq", "BLOCK": "irq", "IRQ_POLL": "irq",
                "TASKLET": "irq", "HI": "irq", "RCU": "rcu", "TIMER": "timers",
                "HRTIMER": "timers", "SCHED": "tasks"}
IPI_RULE = {"reschedule": "tasks", "call_function": "ipi", "call_function_single": "ipi",
            "irq_work": "irq_work"}
# the kernel's per-CPU threads (they cannot move; PF_NO_SETAFFINITY)
PERCPU_KTHREADS = ("ksoftirqd/", "migration/", "cpuhp/", "rcuc/", "idle_inject/",
                   "watchdog/", "ktimers/")     # ktimers: PREEMPT_RT's timer softirqs
WATCHDOG_FN = "watchdog_timer_fn"
# a threaded IRQ handler (PREEMPT_RT, threadirqs, request_threaded_irq): irq/36-virtio1-r
IRQ_THREAD = re.compile(r"irq/\d+-")


# a tick on a nohz_full CPU, named by the timer:tick_stop state the CPU was in: the
# tick stopped (it came for the CPU's next timer: the residual tick), or kept
# running by a dependency (the kernel's TICK_DEP_MASK_* bits)
RESIDUAL_TICK = "residual tick"
KEPT_TICK = "tick kept by "
TICK_DEP_WHY = {
    "POSIX_TIMER": "a POSIX CPU-time timer of the running process (setitimer, timer_create "
                   "on a CPU clock)",
    "PERF_EVENTS": "a perf event that needs it (sampling by frequency)",
    "SCHED": "more than one task runnable here",
    "CLOCK_UNSTABLE": "an unstable clock (the TSC not trusted)",
    "RCU": "RCU waiting on this CPU (its callbacks here: rcu_nocbs)",
    "RCU_EXP": "an expedited RCU grace period",
}
TICK_DEP_RULE = {"SCHED": "tasks", "RCU": "rcu"}


def nohz_tick(state):
    """(name, chain link) of a tick on a nohz_full CPU whose timer:tick_stop
    state was @state: (stopped, dependency), or None where the log holds none
    before it."""
    if state is None:
        return RESIDUAL_TICK, "local timer (nohz_full: the residual tick)"
    stopped, dep = state
    if stopped or not dep:
        return RESIDUAL_TICK, "local timer (nohz_full, the tick stopped: the residual " \
            "tick, for the CPU's next timer)"
    name = TICK_DEPS.get(dep, "0x%x" % dep)
    return KEPT_TICK + name, "local timer (nohz_full, the tick kept by %s: %s)" % (
        name, TICK_DEP_WHY.get(name, "a dependency this kernel names so"))


def rule_of(category, name, works=()):
    """The id of tune/advice.py's rule that removes the cause, or None (not
    something a change removes: the probe's own wake-up path, events missing).
    @works: the workqueue functions its tasks ran."""
    if category == TASK:
        comm = str(name)
        if comm.startswith("kworker/u"):
            return "unbound_work"
        if comm.startswith("kworker/"):
            return "vmstat" if "vmstat_update" in works else "percpu_work"
        if comm.startswith(PERCPU_KTHREADS):
            return "percpu_kthread"
        if IRQ_THREAD.match(comm):
            return "irq"            # it runs where its IRQ's affinity says
        return "tasks"
    if category == SOFTIRQ:
        return SOFTIRQ_RULE.get(name)
    if category == IPI:
        return IPI_RULE.get(name)
    if category == TICK and name == WATCHDOG_FN:
        return "watchdog"
    if category == TICK and str(name).startswith(KEPT_TICK):
        return TICK_DEP_RULE.get(str(name)[len(KEPT_TICK):])
    if category == TICK and name == RESIDUAL_TICK:
        return None             # the CPU is tickless already: its chain names the timer
    c = BY_NAME.get(category)
    return c.rule or None if c else None
