# SPDX-License-Identifier: GPL-2.0-only
"""advice - from the causes a measurement found to the remedies that remove them.

RULES is the rule base (docs/tuning.md's "From cause to remedy" table is this
list): each rule names the causes it matches, what to change, and what the
change needs (nothing but root at run time, a reboot, a kernel built with an
option, the host). classify() sends one charged cause (category and name of the
attribution, the workqueue functions its preempting tasks ran) to its rule
(trace/causes.py's rule_of: the cause model keeps each category's rule). advise() takes what a
result's outliers were charged to, per rule, and this machine's facts (facts():
the capability checks jtr tune show uses) and returns the remedies ranked by the
time they would save (the time the measurement lost to their causes), each with
its tuned-format changes or its boot line and whether this machine can apply it
(and why not); profile_text() writes the changes of the chosen ones as one
tuned profile, one commented line per change.

Nothing is applied here; a saving is a prediction: the time the measured run
lost to those causes, per second of run. jtr advise --prove measures it.
"""
import os
import re
import textwrap
from typing import NamedTuple

from ..errors import UsageError
from ..results import probes as P
from ..system.cpus import online_cpus
from ..system.paths import tuned_layout
from ..trace import causes as C
from ..units import fmt_ns
from ..values import format_cpulist
from . import engine, knobs
from .profile import Profile, cpus_to_hexmask, find_profile


class Rule(NamedTuple):
    id: str
    cause: str          # the causes it matches (docs/tuning.md)
    remedy: str         # what to change
    needs: str          # "run time", "reboot", "reboot; CONFIG_NO_HZ_FULL", "host", ...


RULES = (
    Rule("rt_throttling", "RT throttling: a SCHED_FIFO/RR task losing its CPU to idle or a "
         "lower priority (sched_rt_runtime_us of sched_rt_period_us; the fair server since "
         "Linux 6.12)",
         "kernel.sched_rt_runtime_us=-1; a FIFO task that never sleeps then owns its CPU: "
         "only on an isolated CPU", "run time"),
    Rule("tasks", "task preemption by a task that may move (user tasks, unbound kernel "
         "threads); IPI reschedule and softirq SCHED (waking and balancing tasks here)",
         "move tasks off the CPU: [scheduler] isolated_cores (movable tasks and device IRQs); "
         "a group rule for each task pinned to the measured CPU by its owner",
         "run time"),
    Rule("vmstat", "task preemption by a per-CPU kworker running vmstat_update",
         "vm.stat_interval=10 (per-CPU vmstat counters folded every 10 s, not every second)",
         "run time"),
    Rule("unbound_work", "task preemption by an unbound kworker (kworker/uN:M)",
         "unbound workqueues' cpumask to the housekeeping CPUs", "run time"),
    Rule("percpu_work", "task preemption by a per-CPU kworker running other work items",
         "nothing moves per-CPU work: nohz_full and isolcpus=domain,managed_irq cut what "
         "queues it (boot); find who queues it", "reboot"),
    Rule("percpu_kthread", "task preemption by a per-CPU kernel thread (ksoftirqd, "
         "migration, cpuhp, rcuc; ktimers on PREEMPT_RT)", "isolcpus=domain,managed_irq "
         "and rcu_nocbs on the kernel command line", "reboot"),
    Rule("tick", "the timer tick (local timer)", "nohz_full=CPUS rcu_nocbs=CPUS on the "
         "kernel command line, one task on the CPU", "reboot; CONFIG_NO_HZ_FULL"),
    Rule("watchdog", "the soft-lockup watchdog's hrtimer (watchdog_timer_fn) on the CPU",
         "kernel.watchdog_cpumask=HOUSEKEEPING", "run time"),
    Rule("timers", "softirq TIMER or HRTIMER run outside the tick",
         "kernel.timer_migration=0 (timers stay on the CPU that armed them)", "run time"),
    Rule("irq", "device IRQs (hardirq) and the softirqs they raise (NET_RX, NET_TX, BLOCK, "
         "TASKLET, HI, IRQ_POLL)", "IRQ affinity to the housekeeping CPUs ([scheduler] "
         "isolated_cores); a managed IRQ cannot move: isolcpus=managed_irq,CPUS (boot)",
         "run time"),
    Rule("rcu", "softirq RCU", "rcu_nocbs=CPUS on the kernel command line", "reboot"),
    Rule("ipi", "IPI call_function / call_function_single (TLB shootdowns, cross-CPU "
         "calls)", "kernel.numa_balancing=0; keep threads that share memory with the "
         "measured one from changing mappings; the senders are on other CPUs: pin them to "
         "the housekeeping CPUs (named, each with what removes it, where the tracer saw "
         "the sends)", "run time"),
    Rule("irq_work", "IPI irq_work (perf, BPF, printk wake-ups)", "no switch: find the "
         "perf or BPF user on the CPU", "nothing here"),
    Rule("page_faults", "page faults", "lock and prefault the memory (mlockall); THP never, "
         "KSM off, NUMA balancing off", "run time"),
    Rule("nmi", "NMI (the perf NMI watchdog)", "kernel.nmi_watchdog=0", "run time"),
    Rule("cstate", "timer IRQ latency of a wake-up (C-state exit, interrupts off, host)",
         "[cpu] force_latency=1: hold /dev/cpu_dma_latency at 1 us", "run time"),
    Rule("host", "no kernel event (hypervisor, SMI or hardware) and host preemption (steal)",
         "on the host: dedicated vCPUs pinned on isolated host CPUs, no "
         "overcommit, halt-polling; on bare metal, BIOS: C-states, SMI sources, power "
         "management off", "host or BIOS"),
)
RULE = {r.id: r for r in RULES}

# a managed IRQ (the kernel places it; its affinity cannot be written): the queue
# IRQs of multi-queue block and network drivers
MANAGED_IRQ_RE = re.compile(r"virtio\d+-(req|input|output)\.\d+|nvme\d+q\d+")
STAT_INTERVAL = 10


def classify(category, name, works=()):
    """The rule that removes a cause, or None (not something a change removes: the
    probe's own wake-up path, events missing): trace/causes.py's rule_of."""
    return C.rule_of(category, name, works)


# ---------------------------------------------------------------- the machine

SYSCTLS = ("kernel.sched_rt_runtime_us", "vm.stat_interval", "kernel.numa_balancing",
           "kernel.timer_migration", "kernel.nmi_watchdog", "kernel.watchdog_cpumask")


def _read(path):
    try:
        return knobs.read_file(path)
    except knobs.KnobError:
        return None


def facts():
    """What this machine is and can do, for the rules: sysctl values, THP, KSM,
    cpu_dma_latency, nohz_full and the command line (jtr tune show's checks)."""
    f = {"sysctl": {k: _read("/proc/sys/" + k.replace(".", "/")) for k in SYSCTLS},
         "thp": _read(engine.THP + "enabled"), "ksm": _read("/sys/kernel/mm/ksm/run"),
         "dma_latency": None, "dma_latency_why": None,
         "nohz_full": engine.has_nohz_full(), "cmdline": engine.can_change_cmdline(),
         "workqueue_cpumask": os.path.exists("/sys/devices/virtual/workqueue/cpumask"),
         "online": online_cpus()}
    if not os.path.exists(knobs.DMA_LATENCY):
        f["dma_latency_why"] = "no %s on this kernel" % knobs.DMA_LATENCY
    else:
        # root alone may read it: advise as another user says so instead of failing
        try:
            f["dma_latency"] = knobs.read_dma_latency()
        except knobs.KnobError as e:
            f["dma_latency_why"] = "%s (as root, jtr advise reads it)" % e
    if f["thp"]:
        f["thp"] = knobs.norm_bracket(f["thp"])
    return f


def _task(tid):
    st = knobs.task_stat(tid)
    if st is None:
        return None
    try:
        cpus = sorted(os.sched_getaffinity(tid))
    except OSError:
        return None
    return {"pid": tid, "comm": st[0], "cmdline": knobs.task_cmdline(tid), "cpus": cpus,
            "kernel": bool(st[1] & knobs.PF_NO_SETAFFINITY)}


def find_tasks(comm, pids, cpus):
    """The tasks now behind a cause of @comm whose tasks had the pids @pids: those
    pids that still have that comm; else (they are gone, or the tracer's pids are
    not this /proc's, as in a pid namespace) every task of that comm allowed only
    on @cpus. Each {"pid", "comm", "cmdline", "cpus" (its affinity), "kernel" (may
    not move)}."""
    out = [t for t in (_task(p) for p in pids or () if p) if t is not None and
           t["comm"] == comm]
    if out:
        return out
    for tid in knobs.all_tids():
        st = knobs.task_stat(tid)
        if st is not None and st[0] == comm:
            t = _task(tid)
            if t is not None and set(t["cpus"]) <= set(cpus):
                out.append(t)
    return out


# ---------------------------------------------------------------- remedies

def _change(section, option, value, comment):
    return {"section": section, "option": option, "value": str(value), "comment": comment}


def _boot(words, f, why_needed):
    """Why a boot-line remedy is not applied now on this machine, and what it takes."""
    if any(w.startswith("nohz_full=") for w in words) and not f["nohz_full"]:
        return ("this kernel is built without CONFIG_NO_HZ_FULL (no "
                "/sys/devices/system/cpu/nohz_full): build or install one with it, "
                "then put %s on its command line and reboot" % " ".join(words))
    ok, how = f["cmdline"]
    if not ok:
        return "%s; %s" % (why_needed, how)
    return "%s: jtr tune apply --boot writes it (%s), then reboot" % (why_needed, how)


class Context:
    """The measured CPUs, the housekeeping ones, the facts, the tasks behind
    the task-preemption causes ({cause name: find_tasks()}), the run's own
    network path (own_path(), or None) and the senders of its IPIs ({IPI name:
    the attribution's "senders"})."""

    def __init__(self, cpus, f, tasks=None, own_path=None, senders=None):
        self.cpus, self.f, self.tasks = list(cpus), f, tasks or {}
        self.own_path = own_path
        self.senders = senders or {}
        self.house = [c for c in f["online"] if c not in self.cpus]
        self.cpulist = format_cpulist(self.cpus)

    def sysctl(self, name):
        return self.f["sysctl"].get(name)


def _remedy_tasks(ctx, causes):
    """isolated_cores for every movable task, and a group rule for each task pinned
    to the measured CPUs alone (jtr-isolate leaves those where their owner put them)."""
    changes, notes = [], []
    if not ctx.house:
        return [], ["every online CPU is measured: nothing is left to move tasks to"], None
    changes.append(_change("scheduler", "isolated_cores", ctx.cpulist,
                           "move every movable task and device IRQ off CPU %s" % ctx.cpulist))
    changes.append(_change("scheduler", "default_irq_smp_affinity", "ignore",
                           "leave the default affinity of new IRQs as it is"))
    mask = cpus_to_hexmask(ctx.house)
    seen, unseen = set(), []
    for c in causes:
        if c["category"] != C.TASK:
            continue
        comm = c["name"]
        found = ctx.tasks.get(c["name"]) or []
        if not found:
            unseen.append(c["name"])
        for t in found:
            if t["kernel"]:
                notes.append("%s is a per-CPU kernel thread: it cannot move" % c["name"])
                continue
            if set(t["cpus"]) - set(ctx.cpus) or not t["cmdline"] or t["cmdline"] in seen:
                continue
            seen.add(t["cmdline"])
            group = re.sub(r"[^A-Za-z0-9_]", "_", comm)[:24] or "task"
            changes.append(_change(
                "scheduler", "group.jtr_%s%s" % (group, "_%d" % len(seen) if len(seen) > 1
                                                 else ""),
                "0:*:*:%s:%s" % (mask, cmdline_regex(t["cmdline"])),
                "%s (pid %d) is pinned to CPU %s by its owner: move it to CPU %s"
                % (comm, t["pid"], format_cpulist(t["cpus"]), format_cpulist(ctx.house))))
    if unseen:
        # one line for them all (a busy host's run names many shells gone since)
        notes.append("%s %s not to be seen now (exited, or outside this pid namespace): "
                     "isolated_cores moves %s if %s here"
                     % (", ".join(unseen), "is" if len(unseen) == 1 else "are",
                        "it" if len(unseen) == 1 else "them",
                        "it runs" if len(unseen) == 1 else "they run"))
    return changes, notes, None


def cmdline_regex(cmdline, most=200):
    """A regular expression on one line that finds exactly @cmdline (its first @most
    characters, when longer): control characters as escapes."""
    body = "".join(re.escape(ch) if ch.isprintable() else "\\x%02x" % ord(ch)
                   if ord(ch) < 256 else "\\u%04x" % ord(ch) for ch in cmdline[:most])
    return "^" + body + ("$" if len(cmdline) <= most else "")


def _remedy_rt(ctx, causes):
    now = ctx.sysctl("kernel.sched_rt_runtime_us")
    if now is None:
        return [], [], "no /proc/sys/kernel/sched_rt_runtime_us on this kernel"
    if now == "-1":
        return [], [], ("kernel.sched_rt_runtime_us is -1 already: what remains is the "
                        "kernel's fair server (Linux 6.12 and later) giving normal tasks "
                        "their share; /sys/kernel/debug/sched/fair_server/cpuN/runtime "
                        "sets it (0: off; run FIFO busy loops only on isolated CPUs)")
    return [_change("sysctl", "kernel.sched_rt_runtime_us", -1,
                    "RT throttling off (now %s): a FIFO task that never sleeps then owns its "
                    "CPU; run FIFO busy loops only on isolated CPUs" % now)], \
        ["with sched_rt_runtime_us=-1 a SCHED_FIFO busy loop on a CPU that other tasks "
         "need starves them: isolate the CPU first"], None


def _remedy_sysctl(name, value, comment):
    def make(ctx, causes):
        now = ctx.sysctl(name)
        if now is None:
            return [], [], "no /proc/sys/%s on this kernel" % name.replace(".", "/")
        if now == str(value):
            return [], [], "%s is %s already" % (name, now)
        return [_change("sysctl", name, value, "%s (now %s)" % (comment, now))], [], None
    return make


# what an IPI's function says of its sender, and what removes it
IPI_WHY = (
    (("flush_tlb_func",), "TLB shootdowns: it changed the memory map of a process with a "
     "thread on the measured CPU (munmap, mprotect, madvise, page migration); keep such "
     "threads off the CPU, or make the mapping changes before the hot path"),
    (("rcu_exp_handler",), "expedited RCU grace periods (synchronize_rcu_expedited): "
     "rcupdate.rcu_normal=1 on the kernel command line makes them normal ones"),
    (("sched_ttwu_pending", "nohz_csd_func"), "the scheduler's remote wake-ups and idle "
     "balancing: keep the tasks it wakes off the measured CPU"),
)
MAX_SENDERS_NAMED = 3


def _ipi_sender_notes(ctx, causes):
    """A note per sender of the IPI causes (the most time first, at most
    MAX_SENDERS_NAMED a cause): who sent it, the function it ran, and what
    removes that."""
    notes = []
    for c in causes:
        for s in (ctx.senders.get(c["name"]) or [])[:MAX_SENDERS_NAMED]:
            text = str(s.get("sender", "?"))
            fn = text.rsplit(" ", 1)[-1].split("+")[0]
            why = next((w for fns, w in IPI_WHY if fn in fns), None) or (
                "pin it to the housekeeping CPUs (%s), or stop it asking CPU %s to run %s"
                % (format_cpulist(ctx.house) or "none left", ctx.cpulist, fn))
            notes.append("IPI %s from %s (%dx, %s): %s" % (
                c["name"], text, s.get("count", 0), fmt_ns(s.get("total_ns", 0)), why))
    return notes


def _remedy_ipi(ctx, causes):
    """kernel.numa_balancing=0 (its page migrations send TLB shootdowns), and,
    where the tracer saw the sends, the senders by name with what removes each."""
    changes, notes, why = _remedy_sysctl("kernel.numa_balancing", 0, "no NUMA balancing page "
                                         "migrations and their TLB shootdowns")(ctx, causes)
    return changes, notes + _ipi_sender_notes(ctx, causes), why


def _remedy_vmstat(ctx, causes):
    now = ctx.sysctl("vm.stat_interval")
    if now is None:
        return [], [], "no /proc/sys/vm/stat_interval on this kernel"
    if now.isdigit() and int(now) >= STAT_INTERVAL:
        return [], [], "vm.stat_interval is %s already" % now
    return [_change("sysctl", "vm.stat_interval", STAT_INTERVAL,
                    "fold the per-CPU vmstat counters every %d s, not every %s s"
                    % (STAT_INTERVAL, now))], [], None


def _remedy_watchdog(ctx, causes):
    now = ctx.sysctl("kernel.watchdog_cpumask")
    if now is None:
        return [], [], "no /proc/sys/kernel/watchdog_cpumask on this kernel"
    if not ctx.house:
        return [], [], "every online CPU is measured"
    return [_change("sysctl", "kernel.watchdog_cpumask", format_cpulist(ctx.house),
                    "the soft-lockup watchdog's timer only on CPU %s (now %s)"
                    % (format_cpulist(ctx.house), now))], [], None


def _remedy_unbound(ctx, causes):
    if not ctx.f["workqueue_cpumask"]:
        return [], [], "no /sys/devices/virtual/workqueue/cpumask on this kernel"
    if not ctx.house:
        return [], [], "every online CPU is measured"
    return [_change("sysfs", "/sys/devices/virtual/workqueue/cpumask",
                    cpus_to_hexmask(ctx.house),
                    "unbound work items only on CPU %s" % format_cpulist(ctx.house))], [], None


def _remedy_irq(ctx, causes):
    managed = sorted({c["name"] for c in causes
                      if c["category"] == C.HARDIRQ and MANAGED_IRQ_RE.search(c["name"])})
    notes = ["IRQ %s is managed (a queue of a multi-queue device): the kernel places it "
             "and refuses other affinities; isolcpus=managed_irq,%s keeps it off the CPU "
             "(boot)" % (m, ctx.cpulist) for m in managed]
    movable = [c for c in causes if c["name"] not in managed]
    if not movable:
        return [], notes, "the IRQs are managed: only the boot option moves them"
    if not ctx.house:
        return [], notes, "every online CPU is measured"
    return [_change("scheduler", "isolated_cores", ctx.cpulist,
                    "device IRQs (and movable tasks) off CPU %s" % ctx.cpulist)], notes, None


def _remedy_page_faults(ctx, causes):
    f, changes = ctx.f, []
    if f["thp"] and f["thp"] != "never":
        changes.append(_change("vm", "transparent_hugepages", "never",
                               "no khugepaged collapses or compaction stalls (now %s)"
                               % f["thp"]))
    if f["ksm"] == "1":
        changes.append(_change("sysfs", "/sys/kernel/mm/ksm/run", 0,
                               "no KSM scans and copy-on-write breaks (now 1)"))
    if ctx.sysctl("kernel.numa_balancing") not in (None, "0"):
        changes.append(_change("sysctl", "kernel.numa_balancing", 0,
                               "no NUMA hinting faults (now %s)"
                               % ctx.sysctl("kernel.numa_balancing")))
    notes = ["in the application: mlockall(MCL_CURRENT | MCL_FUTURE) and touch every "
             "page before the hot path (jtr's probes do)"]
    return changes, notes, None if changes else \
        "THP, KSM and NUMA balancing are off already: the faults are the program's own"


def _remedy_cstate(ctx, causes):
    now = ctx.f["dma_latency"]
    if now is None:
        return [], [], ctx.f.get("dma_latency_why") or "no %s on this kernel" % knobs.DMA_LATENCY
    if now <= 1:
        return [], [], "cpu_dma_latency is %d us already" % now
    return [_change("cpu", "force_latency", 1, "only C-states that wake within 1 us "
                    "(cpu_dma_latency now %d us)" % now)], \
        ["the part of the latency that is the host's stays (no kernel event)"], None


def _remedy_boot(words_of, why):
    def make(ctx, causes):
        words = words_of(ctx)
        return [], [], _boot(words, ctx.f, why), words
    return make


def _nothing(why):
    def make(ctx, causes):
        return [], [], why
    return make


MAKERS = {
    "rt_throttling": _remedy_rt,
    "tasks": _remedy_tasks,
    "vmstat": _remedy_vmstat,
    "unbound_work": _remedy_unbound,
    "percpu_work": _remedy_boot(lambda c: ["isolcpus=domain,managed_irq,%s" % c.cpulist,
                                           "nohz_full=%s" % c.cpulist],
                                "per-CPU work moves only with the CPU's isolation at boot"),
    "percpu_kthread": _remedy_boot(lambda c: ["isolcpus=domain,managed_irq,%s" % c.cpulist,
                                              "rcu_nocbs=%s" % c.cpulist],
                                   "per-CPU kernel threads cannot move"),
    "tick": _remedy_boot(lambda c: ["nohz_full=%s" % c.cpulist, "rcu_nocbs=%s" % c.cpulist],
                         "the tick stops only with nohz_full, set at boot"),
    "rcu": _remedy_boot(lambda c: ["rcu_nocbs=%s" % c.cpulist],
                        "RCU callbacks move only with rcu_nocbs, set at boot"),
    "watchdog": _remedy_watchdog,
    "timers": _remedy_sysctl("kernel.timer_migration", 0, "timers stay on the CPU that "
                             "armed them"),
    "irq": _remedy_irq,
    "ipi": _remedy_ipi,
    "irq_work": _nothing("no switch removes irq_work: it is raised by perf, BPF or printk "
                         "users on the CPU"),
    "page_faults": _remedy_page_faults,
    "nmi": _remedy_sysctl("kernel.nmi_watchdog", 0, "no perf NMI watchdog"),
    "cstate": _remedy_cstate,
    "host": _nothing("no change inside this machine removes time its host or its "
                     "firmware takes"),
}


# the softirqs a transport's own messages raise where they never leave the machine
OWN_PATH_SOFTIRQS = ("NET_RX", "NET_TX")


def own_path(transport):
    """What carried a run's messages when they never met a device ("udp over
    loopback 127.0.0.1:5000"), from its result's transport section, or None (a
    device, a namespace's veth, no transport). Over loopback the kernel runs a
    message's receive (softirq NET_RX) on the CPU that sent or takes it: the
    measured path itself, not a device's interrupt to move away."""
    t = transport if isinstance(transport, dict) else {}
    kind, addr = t.get("kind"), str(t.get("address") or "")
    if kind not in ("udp", "tcp", "mcast"):
        return None
    host = addr.rsplit(":", 1)[0].strip("[]") if ":" in addr else addr
    # mcast: the interface it joins on (an address, 127.0.0.1 by default, or a name)
    if kind == "mcast":
        host = str(t.get("iface") or "")
    if host in ("lo", "localhost", "::1") or host.startswith("127."):
        return "%s over loopback %s" % (kind, addr)
    return None


def _apart_own_path(causes, path):
    """@causes less the softirqs the run's own messages raised over @path
    (own_path()): (the rest, those)."""
    if not path:
        return causes, []
    mine = [c for c in causes if c["category"] == C.SOFTIRQ and
            c["name"] in OWN_PATH_SOFTIRQS]
    return [c for c in causes if c not in mine], mine


def own_programs():
    """The comms of jtr's own programs: every probe's and transport end's, and the
    tracer's."""
    return {p.program for p in P.BY_TOOL.values() if p.program} | {"jtr-trace"}


def _apart_own(causes, own):
    """@causes less those that are jtr's own programs preempting the measured
    thread (a ping's jtr-pong, the tracer): they are the measurement, not what to
    move. (the rest, the comms left out)."""
    mine = [c for c in causes if c["category"] == C.TASK and
            c["name"].split(" (")[0] in own]
    return [c for c in causes if c not in mine], sorted({c["name"].split(" (")[0]
                                                          for c in mine})


def own_causes(charges, ctx):
    """The causes that are the measurement itself, which no remedy takes: jtr's
    own programs preempting the measured thread, and the softirqs of the run's own
    messages over loopback (ctx.own_path): [{category, name, ns, count, why}],
    the largest first."""
    own, out = own_programs(), []
    for rid, per in charges.items():
        if rid is None or rid not in RULE:
            continue
        causes = [{"category": k[0], "name": k[1], "ns": v[0], "count": v[1]}
                  for k, v in per.items()]
        rest, _ = _apart_own(causes, own)
        out += [dict(c, why="jtr's own program") for c in causes if c not in rest]
        _, path = _apart_own_path(rest, ctx.own_path)
        out += [dict(c, why="the run's own messages (%s)" % ctx.own_path) for c in path]
    return sorted(out, key=lambda c: (-c["ns"], c["name"]))


def advise(charges, ctx, outlier_ns, duration_ns):
    """The remedies for @charges ({rule id: {(category, name): [ns, count]}}, the
    measured time each cause took, sent to its rule), on @ctx (a Context): a list,
    applicable ones first, each by its saving. Each: rule, cause (the rule's
    text), remedy, needs, saving_ns (what the run lost to its causes), per_s_ns,
    share (of the outlier time), causes [{category, name, ns, count}], changes
    [{section, option, value, comment}], boot (words, or []), applicable, why_not,
    notes."""
    out = []
    secs = duration_ns / 1e9 if duration_ns else None
    own = own_programs()
    for rid, per in charges.items():
        if rid is None or rid not in RULE:
            continue
        causes = sorted(({"category": k[0], "name": k[1], "ns": v[0], "count": v[1]}
                         for k, v in per.items()), key=lambda c: (-c["ns"], c["name"]))
        causes, mine = _apart_own(causes, own)
        causes, path = _apart_own_path(causes, ctx.own_path)
        if not causes:
            continue
        ns = sum(c["ns"] for c in causes)
        made = MAKERS[rid](ctx, causes)
        changes, notes, why = made[:3]
        boot = made[3] if len(made) > 3 else []
        if mine:
            notes = list(notes) + ["%s: jtr's own program%s, part of the measurement: not "
                                   "moved, and not counted in what this predicts"
                                   % (", ".join(mine), "s" if len(mine) > 1 else "")]
        if path:
            notes = list(notes) + ["%s: the run's own messages (%s): the kernel's receive "
                                   "path of the measured traffic, not a device's interrupt: "
                                   "not moved, and not counted in what this predicts" % (
                                       "; ".join("softirq %s (%dx, %s)" % (
                                           c["name"], c["count"], fmt_ns(c["ns"]))
                                           for c in path), ctx.own_path)]
        rule = RULE[rid]
        out.append({"rule": rid, "cause": rule.cause, "remedy": rule.remedy,
                    "needs": rule.needs, "saving_ns": ns,
                    "per_s_ns": round(ns / secs, 1) if secs else None,
                    "share": round(ns / outlier_ns, 6) if outlier_ns else None,
                    "causes": causes, "changes": changes, "boot": boot,
                    "applicable": bool(changes), "why_not": None if changes else why,
                    "notes": notes})
    out.sort(key=lambda r: (not r["applicable"], r["rule"] == "host", -r["saving_ns"],
                            r["rule"]))
    return out


def base_sections(base):
    """@base's profile chain written out, for a profile that must load on its
    own (tuned finds an include= only in its own folders, where jtr's profiles
    are not unless installed): (the names of the chain, [variables] as written,
    {section: [(option, value, the profile that set it)]}, {(section, option):
    the profile that set it}); None where tuned finds @base itself (a profile of
    tuned's folders that is not jtr's) or jtr cannot read it (then include=
    names it)."""
    try:
        path = find_profile(base)
        prof = Profile(base, expand=False)
    except UsageError:
        return None
    layout = tuned_layout()
    if os.path.dirname(os.path.dirname(path)) in (layout["user"], layout["system"]) and \
            not os.path.basename(os.path.dirname(path)).startswith("jtr-"):
        return None
    chain = [os.path.basename(os.path.dirname(f)) for f in prof.files]
    sections = {sec: [(k, v, prof.origin.get((sec, k), base)) for k, v in opts.items()]
                for sec, opts in prof.raw.items()}
    return chain, prof.raw_variables, sections, prof.origin


def profile_text(remedies, base, source):
    """A tuned profile with the changes of @remedies (in their order; an option two
    remedies set is written once, by the first), on top of @base, one comment line
    per change. @base's chain is written out in it (base_sections), so that tuned's
    own loader takes the file where jtr's profiles are not installed; include=
    where tuned finds @base itself. @source: what it was made from (a line of
    text)."""
    sections, seen = {}, set()
    for r in remedies:
        for c in r["changes"]:
            key = (c["section"], c["option"])
            if key in seen:
                continue
            seen.add(key)
            sections.setdefault(c["section"], []).append(c)
    inline = base_sections(base) if base else None
    lines = ["#", "# jtr-advised: made by jtr advise from %s" % source,
             "# remedies, largest saving first:"]
    for i, r in enumerate(remedies, 1):
        lines.append("#  %d. %s: %s lost to it%s" % (
            i, r["rule"], fmt_ns(r["saving_ns"]),
            " (%.1f %% of the outlier time)" % (100 * r["share"]) if r["share"] else ""))
    if inline:
        lines += ["# " + ln for ln in textwrap.wrap(
            "on top of %s%s, written out below so that this file loads on its own, "
            "without jtr's profiles installed" % (
                base, " (with what it includes: %s)" % ", ".join(inline[0][:-1])
                if len(inline[0]) > 1 else ""), 76)]
    lines += ["#", "", "[main]", "summary=jtr advise: remedies for the causes measured in %s"
              % source]
    if base and not inline:
        lines.append("include=%s" % base)
    if inline and inline[1]:
        lines += ["", "[variables]"]
        for k, v in inline[1].items():
            lines += ["# from %s" % inline[3].get(("variables", k), base), "%s=%s" % (k, v)]
    order = list(inline[2]) if inline else []
    order += [sec for sec in sections if sec not in order]
    for sec in order:
        mine = {c["option"]: c for c in sections.get(sec, [])}
        lines += ["", "[%s]" % sec]
        for k, v, origin in (inline[2].get(sec, []) if inline else []):
            if k not in mine:
                lines += ["# from %s" % origin, "%s=%s" % (k, v.replace("\n", "\n\t"))]
        for c in sections.get(sec, []):
            lines += ["# " + c["comment"], "%s=%s" % (c["option"], c["value"])]
    return "\n".join(lines) + "\n"
