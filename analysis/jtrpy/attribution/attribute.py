# SPDX-License-Identifier: GPL-2.0-only
"""attribute - charge every outlier of a probe to the kernel events that caused it.

Input: a result (result.json), its outliers.csv (cpu,start_ns,length_ns and
optional columns) and the event log the tracer recorded on the same CPUs
(events.bin + trace.json). An outlier of a round trip or a message is searched on
the CPUs of both ends (attribute()'s sides; the rules below apply on each, the
largest episode of all is primary, and every cause says its side and phase). Both
use CLOCK_MONOTONIC, so they are joined on time. Output: the "attribution"
section of result.json (docs/result.schema.json), and a table for people.

Method

1. Window. An outlier starting at start_ns (the last clock read before the gap)
   and lasting length_ns has the window [start_ns - slack_ns, start_ns + length_ns];
   slack_ns (DEFAULT_SLACK_NS) absorbs the error of mapping the probe's clock onto
   CLOCK_MONOTONIC. An event belongs to the window if its timestamp is in it. An
   interval (entry/exit pair) that began before the window counts if it was still
   open at the window start: the events of the CPU are walked in time order with
   a nesting stack, starting up to LOOKBACK_EVENTS events and at most LOOKBACK_NS
   before the window (or, when outliers are close together, carrying the state on
   from the previous window), so entries whose exit is inside or after the window
   start are found. An exit whose entry is beyond the look-back still shows that
   the interval overlapped the window start.
2. Episodes. The walk turns events into episodes, each with a category, a name,
   an interval and a causal chain of links joined by " → ":
   - vector entry..exit: local_timer is "timer tick" / "local timer"; reschedule,
     call_function, call_function_single and irq_work are "IPI" / the kind; any
     other kind (thermal_apic, x86_platform_ipi, error_apic, spurious_apic,
     unknown) is "hardirq" / the kind.
   - irq_handler entry..exit: "hardirq" / "<irq> <action>", e.g. "36 virtio1-req".
   - hrtimer and timer expiries inside an episode add links "hrtimer <function>",
     "timer <function>" (kernel symbols from trace.json, else the hex address);
     an interrupt nested in another episode is a link of it too.
   - softirq entry..exit: right after an irq or vector episode (no sched_switch
     between) it is a link of that episode ("softirq TIMER") and extends its end;
     otherwise it is its own episode, "softirq" / the vector name ("NET_RX").
   - sched_switch away from the probe's task: "task preemption" / "<comm> (pid N,
     prio P)" of the task switched in, lasting until the switch back to the probe
     (or the window end). Workqueue functions, softirqs and timers run by the
     preempting tasks are named inside its link: "preempted by kworker/1:2 (pid
     123, workqueue vmstat_update, prio 120) for 38.0 us". An irq or vector
     episode in the window that immediately preceded the switch (the wakeup)
     becomes the head of the chain and the preemption starts with it:
     "local timer → hrtimer hrtimer_wakeup → preempted by fifo-spin (pid 4242,
     prio 9) for 200.0 us". The probe's task is the task most often switched out
     while still runnable on that CPU (the probe never blocks; never the idle
     task), or the task of the program named for that CPU; with no such
     switch, the first switch in the window is taken to leave the probe. A task
     whose next_comm is empty is named from any other sched_switch naming its
     pid, else "pid N (prio P)".
   - page faults: "page fault" / "user" or "kernel", duration unknown (0).
   - NMI: "NMI" / the handler's symbol, lasting the handler's delta_ns.
   - softirq_raise, sched_wakeup/waking and sched_migrate_task make no episode.
   - Lost events: an hrtimer or timer with no enclosing interrupt seen is a
     "timer tick" / "local timer" resp. "softirq" / "TIMER" episode of its own; a
     workqueue item with no switch seen is a "task preemption" / "pid N" episode;
     an exit whose entry was not seen makes an episode from the start of the
     walk. A preemption whose switch back was lost ends at the next event the
     probe's task runs; and since the probe ran between two outliers, whatever is
     still open at the end of one window is closed there when the next window
     starts later.
   Chains show a repeated link once and at most MAX_LINKS links, MAX_TASKS tasks.
3. Primary cause. The episode with the largest duration clipped to the window
   (ties: the first) is the outlier's cause, and the WHOLE outlier length is
   charged to it, so the causes' total_ns sum exactly to the outliers' total and
   the shares sum to 1. Unless the kernel events explain less than half of the
   outlier: when traced_ns plus ENTRY_ALLOWANCE_NS (the interrupt entry work
   before an entry tracepoint fires) is below half its length, the outlier is
   "no kernel event" (a 30 ms silence with a 30 us tick at its end is the
   hypervisor's, not the tick's), and its chain says so: "no kernel event for
   29.97 ms, with local timer → hrtimer tick_nohz_handler". An episode of unknown
   duration counts as 0 but wins when alone. Outliers with nothing in the window
   are "no kernel event" / "hypervisor, SMI or hardware" (where the log has the
   host's steal counter, "no kernel event" time is split into "host preemption
   (steal)" and "VM exits, SMI or hardware": steal.py); with events but no
   episode (say only a
   sched_waking) "other events" / their types; outliers that start outside the
   tracer's [start_ns, end_ns] (a killed tracer's log ends at its last event) or
   are on a CPU it did not trace are "not traced" / "outside the trace".
   traced_ns of an outlier is the time covered by the union of its episodes
   clipped to the window, at most length_ns.
4. Aggregation per cause (category + name): count, total_ns, share of the outlier
   time, p50_ns and max_ns of the charged outlier lengths, per_s over the
   probe's duration (the longest run), and the chain of its longest outlier;
   sorted by total_ns, largest first. "worst" lists the `top` longest outliers
   with their chains and the first WORST_EVENTS events in their windows, each as
   "+1.5 us local_timer_entry vector=236" (time from the outlier's start).

Speed: each CPU's outliers are taken in time order against the sorted
timestamps of that CPU (bisect); only the records in and just before windows are
decoded, each at most once, so time and memory are linear in the input. With
numpy (and one CPU an outlier, no each), vector.py classifies a CPU's windows at
once and charges those whose walk would find one interruption, or none, without
the walker; the rest go through it (_attribute_fast): the same result, about ten
times faster on a log of a million events.
"""
import bisect
import heapq
import struct

from ..errors import UsageError
from ..results.figures import measured_ns
from ..system.memory import paused_gc
from ..system.numeric import numpy_or_none
from ..trace import causes as C
from ..trace import events as ev
from ..trace import syscalls
from ..trace.events import (
    HRTIMER_ENTRY,
    IRQ_ENTRY,
    NMI,
    PF_KERNEL,
    PF_USER,
    SOFTIRQ_ENTRY,
    SWITCH,
    TIMER_ENTRY,
    VEC_ENTRY,
    WQ_START,
)
from ..units import counted
from ..units import fmt_ns as _fmt_ns
from . import steal as host_steal
from . import vector
from .throttle import Throttle

DEFAULT_SLACK_NS = 1000
# interrupt entry work before the entry tracepoint fires (measured here: the
# first event of an outlier comes 1.4 to 17 us after its start): counted as
# explained time of the outlier's primary cause
ENTRY_ALLOWANCE_NS = 20000
LOOKBACK_EVENTS = 8
LOOKBACK_NS = 1_000_000
WORST_EVENTS = 16
MAX_LINKS = 8           # links shown in a chain
MAX_TASKS = 4           # preempting tasks named in a chain
MAX_EPISODES = 8        # episodes of one outlier spelled out in its chain
# per_outlier's digits: a category's place in its list
CODES = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
RULE = "entry in [start - slack, end] or overlap; whole outlier to its longest episode"
ARROW = " → "

NO_EVENT = C.HOST_UNMEASURED     # split by the host's steal where the log measured it
NOT_TRACED = C.OUTSIDE
OTHER = C.OTHER
_TICK = C.vector("local_timer")
_TIMER_SOFTIRQ = C.TIMER_SOFTIRQ + ("softirq TIMER",)
# exits of entry/exit pairs (the entry's type is one less), and events that change no state
_EXITS = frozenset((ev.IRQ_EXIT, ev.SOFTIRQ_EXIT, ev.VEC_EXIT, ev.WQ_END, ev.HRTIMER_EXIT,
                    ev.TIMER_EXIT))
_PASSIVE = frozenset((ev.SOFTIRQ_RAISE, ev.WAKEUP, ev.WAKING, ev.MIGRATE, ev.STEAL,
                      ev.TASK, ev.CALL, ev.BLOCK, ev.TICK_STOP))

# a sched_switch record from its cpu field on: cpu, type, flags, a (prev_pid |
# next_pid << 32), b (skipped), prev_comm, next_comm
_SWITCH_FIELDS = struct.Struct("<HBBQ8x%ds%ds" % (ev.COMM_LEN, ev.COMM_LEN))
_TS = struct.Struct("<Q")
_REC, _HDR = ev.RECORD_SIZE, ev.HEADER_SIZE
_TYPE, _RAW = ev.TYPE_OFFSET, ev.RAW_OFFSET


class Episode:
    """One interruption found in the events: what, when, and the chain of links."""
    __slots__ = ("category", "name", "begin", "end", "known", "links", "tasks", "switch_ns",
                 "woke", "sender", "waiter")

    def __init__(self, category, name, begin, link, known=True):
        """An episode from begin (end not known yet) with its first link."""
        self.category = category
        self.name = name
        self.begin = begin
        self.end = None
        self.known = known
        self.links = [link]
        self.tasks = None       # preemption: [[comm, pid, prio, items], ...]
        self.switch_ns = None   # preemption: when the probe was switched out
        self.woke = None        # a wait: the program that was woken and waited to run
        self.sender = None      # an IPI: who sent it, where the tracer saw the send
        self.waiter = None      # jtr run app's blocked thread, until its waker is named


def wait_episode(pid, comm, prio, begin, end, woke):
    """Task @pid held the CPU from @begin to @end while the program @woke (its
    text), woken, waited to run there."""
    ep = Episode(C.TASK, C.Task(comm, pid, prio), begin, None)
    ep.links = []
    ep.woke = woke
    ep.end = end
    ep.tasks = [[comm, pid, prio, []]]
    ep.switch_ns = begin
    return ep


def task_text(task):
    """'kworker/1:2 (pid 123, workqueue vmstat_update, prio 120)'."""
    comm, pid, prio, items = task
    parts = ["pid %d" % pid] + items + ([] if prio is None else ["prio %d" % prio])
    return "%s (%s)" % (comm, ", ".join(parts)) if comm else "pid %d (%s)" % (
        pid, ", ".join(parts[1:]) or "task")


def _shorten(items, most, what):
    """At most `most` items, the rest summed up as '3 more links'."""
    if len(items) <= most:
        return items
    return items[:most - 1] + ["%d more %s" % (len(items) - most + 1, what)]


def format_chain(ep, hi_ns):
    """The episode's causal chain, links joined by ' → ' (repeats shown once)."""
    links = list(dict.fromkeys(ep.links))
    if ep.tasks is not None:
        end = ep.end if ep.end is not None else hi_ns
        who = _shorten([task_text(t) for t in ep.tasks], MAX_TASKS, "tasks")
        links = _shorten(links, MAX_LINKS - 1, "links")
        held = _fmt_ns(max(0, end - ep.switch_ns))
        if ep.woke:
            links.append("%s held the CPU while %s waited to run, for %s" % (
                ", ".join(who), ep.woke, held))
        elif ep.category == C.THROTTLING:
            links.append("RT throttling (%s): the CPU went to %s for %s" % (
                ep.name, ", ".join(who), held))
        else:
            links.append("preempted by %s for %s" % (", ".join(who), held))
        return ARROW.join(links)
    return ARROW.join(_shorten(links, MAX_LINKS, "links"))


def _add_item(task, item):
    """Name something a preempting task ran, once (at most MAX_LINKS of them)."""
    if item not in task[3] and len(task[3]) < MAX_LINKS:
        task[3].append(item)


def _first_ts(data, index):
    """The time of a CPU's first record (0 for none)."""
    return ev.HEAD.unpack_from(data, _HDR + _REC * int(index[0]))[0] if len(index) else 0


vector_desc = C.vector     # category, name and chain link of an irq_vectors kind


def records_of(np, log, cpu):
    """A whole walk's events of @cpu decoded with numpy, as Walker.walk takes
    them: (j, record number, ts, pid, type, flags, a, b) of each that is not
    passive, in time order."""
    recs, _, idx = log.arrays(cpu)
    keep = ~np.isin(recs["type"][idx], sorted(_PASSIVE))
    js = np.flatnonzero(keep)
    rows = idx[js]
    sel = recs[rows]
    return zip(js.tolist(), rows.tolist(), *(sel[f].tolist() for f in (
        "ts_ns", "pid", "type", "flags", "a", "b")))


class Walker:
    """Walks one CPU's events in time order, keeping the nesting state between windows."""

    def __init__(self, log, cpu, probe_pid, comms=None, index=None, irq_name=None,
                 throttled=None, app=None):
        """A walker over cpu's events in log; the probe's pid and pid -> comm, if
        known. index: the CPU's record numbers in time order (log.cpu_index's by
        default); irq_name(irq, j): the action of the irq whose exit at j has no
        entry in the walk (by default the last entry walked); throttled: RT
        throttling's name and whether it can be at an instant (a
        throttle.Throttle); app: jtr run app's Wakings, where the probe is an
        application's thread whose own waits are causes (blocked)."""
        self.throttled = throttled or Throttle()
        self.cpu = cpu
        # a softirq joins the interrupt before it (run on its exit) only this soon
        # after it; None: whenever no switch came between (a window's walk)
        self.join_ns = None
        # whether a task switched in while the probe waits (a blocking receive) is
        # charged from its switch (a window's walk); else the timeline of both
        # ends charges what held the CPU from the probe's wake-up (ends.py)
        self.charge_waits = True
        self.data = log.data
        self.index = log.cpu_index.get(cpu, []) if index is None else index
        self.irq_name = irq_name
        self.app = app
        if app is not None:
            # the application's thread sleeps of its own accord: what runs here
            # meanwhile took nothing from it (its wait is the cause: _wait)
            self.charge_waits = False
        self.j = 0
        self.symbols = log.symbols
        self.vectors = log.vectors
        self.probe_pid = probe_pid
        self.comms = comms or {}
        self.irq_names = {}
        self.timer_links = {}
        self.softirqs = {}      # vector -> (name, link)
        self.vec_desc = [vector_desc(k) for k in self.vectors] + [vector_desc("unknown")]
        # a nohz_full CPU: its ticks named by its tick_stop states (_nohz_tick)
        nohz, states = log.tick_states() if hasattr(log, "tick_states") else (set(), {})
        self.tick_states = states.get(cpu, ([], [])) if cpu in nohz else None
        self.restart(_first_ts(self.data, self.index))

    def restart(self, origin_ns):
        """Forget all state: the walk starts afresh at origin_ns."""
        self.origin = origin_ns
        self.stack = []         # frames: [group, key, episode, own, is_task]
        self.preempt = None     # the open preemption episode
        self.away = None        # pid of the task it preempted
        self.away_prio = None   # and its prio, when it was switched out runnable
        self.last_irq = None    # last closed irq-like episode since the last switch
        self.episodes = []      # recent episodes, pruned per window
        self.blocked = False    # the probe's task waits (a blocking receive)
        self.wait = None        # jtr run app: its thread's open wait (blocked), and tid
        self.wait_tid = None
        self.wait_ran = []      # and who ran here since: [(ts, pid, comm, prio)]
        self.moved_from = None  # jtr run app: it went on elsewhere, after this

    def settle(self, at_ns):
        """The probe ran from at_ns: close whatever is still open there."""
        for fr in self.stack:
            if fr[3] and fr[2].end is None:
                fr[2].end = at_ns
        self.stack = []
        if self.preempt is not None:
            self.preempt.end = at_ns
            self.preempt = None
        if self.wait is not None:
            self.wait.end = at_ns
            self.wait = None
        self.last_irq = None
        self.origin = at_ns

    def _sender(self, row):
        """The sender of the IPI whose vector entry is record @row (VEC_SENDER):
        events.ipi_sender's text."""
        return ev.ipi_sender(ev.decode(self.data, _HDR + _REC * row), self._sym)

    def _sym(self, addr):
        """Kernel symbol or hex address."""
        key = "0x%x" % addr
        return self.symbols.get(key, key)

    def _new(self, category, name, begin, link, known=True):
        """Start an episode and remember it."""
        ep = Episode(category, name, begin, link, known)
        self.episodes.append(ep)
        return ep

    def _pop(self, group, key, ts):
        """Close the innermost frame of group/key (and any left open above it)."""
        stack = self.stack
        for s in range(len(stack) - 1, -1, -1):
            fr = stack[s]
            if fr[0] == group and fr[1] == key:
                for above in stack[s + 1:]:
                    if above[3] and above[2].end is None:
                        above[2].end = ts
                del stack[s:]
                return fr
        return None

    def _exit(self, group, key, ts, b):
        """An exit event: close its frame, or make the overlapping episode it implies."""
        fr = self._pop(group, key, ts)
        if fr is not None:
            self._close(fr, group, ts)
            return
        if group == WQ_START or self.stack or self.preempt is not None:
            return
        cat, name, link = self._orphan(group, key, b)
        ep = self._new(cat, name, self.origin, link)
        ep.end = ts
        self.last_irq = ep

    def _close(self, fr, group, ts):
        """A frame's exit: end its own episode, or extend the one it was attached to."""
        ep = fr[2]
        if fr[3]:
            ep.end = ts
            if group != WQ_START:
                self.last_irq = ep
        elif not fr[4] and ep.end is not None and ts > ep.end:
            ep.end = ts     # a softirq after its irq extends it

    def _orphan(self, group, key, b):
        """Category, name and link of an interval whose entry was not seen."""
        if group == VEC_ENTRY:
            return self.vec_desc[b if 0 <= b < len(self.vectors) else -1]
        if group == IRQ_ENTRY:
            name = (self.irq_names.get(key) if self.irq_name is None else
                    self.irq_name(key, self.j)) or str(key)
            return C.HARDIRQ, name, "hardirq " + name
        if group == SOFTIRQ_ENTRY:
            name = softirq_name(key)
            return C.SOFTIRQ, name, "softirq " + name
        if group == HRTIMER_ENTRY:
            return _TICK
        return _TIMER_SOFTIRQ

    def _interrupt(self, group, key, ts, category, name, link):
        """An irq or vector entry: a link of the enclosing episode, or a new one."""
        stack = self.stack
        if stack and not stack[-1][4]:
            ep = stack[-1][2]
            ep.links.append(link)
            stack.append([group, key, ep, False, False])
        else:
            stack.append([group, key, self._new(category, name, ts, link), True, False])

    def _timer(self, group, key, ts, link, orphan):
        """An hrtimer or timer expiry: a link, a task's item, or an episode of its own."""
        stack = self.stack
        if stack:
            top = stack[-1]
            if top[4]:
                _add_item(self.preempt.tasks[-1] if self.preempt else top[2].tasks[-1], link)
            else:
                top[2].links.append(link)
            stack.append([group, key, top[2], False, top[4]])
        elif self.preempt is not None:
            _add_item(self.preempt.tasks[-1], link)
            stack.append([group, key, self.preempt, False, True])
        else:
            ep = self._new(orphan[0], orphan[1], ts, orphan[2])
            ep.links.append(link)
            stack.append([group, key, ep, True, False])

    def _switch(self, ts, a, b, flags, raw, win_lo):
        """sched_switch: a preemption of the probe starts, moves on, or ends."""
        prev_pid, next_pid = a & 0xffffffff, a >> 32
        pre, self.last_irq = self.last_irq, None
        if self.stack:
            self._left(prev_pid, ts)
        if self.wait is not None:
            if next_pid == self.wait_tid:
                self._wait_over(ts)     # the application's thread runs again here
            else:
                self.wait_ran.append((ts, next_pid, ev.cstr(raw[16:]), (b >> 16) & 0xffff))
        if self.preempt is not None:
            if next_pid == self.away or (next_pid == 0 and self.blocked):
                self.preempt.end = ts
                self.preempt = None
                if next_pid == self.away:
                    self.blocked = False
                return
            tasks = self.preempt.tasks
            if tasks[-1][1] != next_pid:
                comm, prio = ev.cstr(raw[16:]) or self.comms.get(next_pid), (b >> 16) & 0xffff
                if self.preempt.category != C.TASK:
                    tasks.append([comm, next_pid, prio, []])
                    return
                # another task takes the CPU from the one that preempted the probe:
                # a preemption of its own, charged its own time (a chain of tasks on
                # a busy CPU is not all the first one's); the idle task or one below
                # a runnable real-time probe: the kernel's throttle began behind a
                # task above it (migration/1 woken by the watchdog's hrtimer)
                self.preempt.end = ts
                cat = C.TASK
                if not self.blocked and self.away_prio is not None and \
                        C.preemption(self.away_prio, next_pid, prio) == C.THROTTLING and \
                        self.throttled.at(self.cpu, ts):
                    cat = C.THROTTLING
                ep = Episode(cat, C.Task(comm or "", next_pid, prio) if cat == C.TASK else
                             self.throttled.name, ts, None)
                ep.links = []
                ep.tasks = [[comm, next_pid, prio, []]]
                ep.switch_ns = ts
                self.episodes.append(ep)
                self.preempt = ep
            return
        prev_prio = b & 0xffff      # the probe's, when it is the task that left
        if self.probe_pid is not None:
            if next_pid == self.probe_pid:
                self.blocked = False
            if prev_pid != self.probe_pid:
                # while the probe waits, a task that takes the CPU delays its wake-up
                if not self.blocked or not self.charge_waits or \
                        next_pid in (0, self.probe_pid):
                    return
                prev_pid, prev_prio = self.probe_pid, None
            elif not flags & 1:
                self.blocked = True     # it waits for a message: nothing took the CPU
                if self.app is not None:
                    # an application's own wait is a cause
                    self._wait(ts, prev_pid, (ts, next_pid, ev.cstr(raw[16:]),
                                              (b >> 16) & 0xffff))
                return
        elif ts < win_lo:
            return
        for fr in self.stack:   # no switch inside an interrupt: its exit was lost
            if fr[3] and fr[2].end is None:
                fr[2].end = ts
        self.stack = []
        comm, prio = ev.cstr(raw[16:]) or self.comms.get(next_pid), (b >> 16) & 0xffff
        cat = C.preemption(prev_prio, next_pid, prio) if prev_prio is not None else C.TASK
        if cat == C.THROTTLING and not self.throttled.at(self.cpu, ts):
            cat = C.TASK        # no RT runtime spent before it: not the kernel's throttling
        ep = Episode(cat, C.Task(comm or "", next_pid, prio) if cat == C.TASK else
                      self.throttled.name, ts, None)
        ep.links = []
        ep.tasks = [[comm, next_pid, prio, []]]
        ep.switch_ns = ts
        eps = self.episodes
        if (pre is not None and eps and eps[-1] is pre and pre.end is not None
                and pre.end >= win_lo):
            eps.pop()
            ep.begin = pre.begin
            ep.links = pre.links
        eps.append(ep)
        self.preempt, self.away, self.away_prio = ep, prev_pid, prev_prio

    def _wait(self, ts, tid, ran):
        """jtr run app: the application's thread @tid blocks at @ts, in the system
        call its BLOCK record (the record before the switch) names: an episode
        until its wake-up (_wait_over; or the window's end: it may wake elsewhere).
        @ran: the switch-in of the task that runs here after it."""
        nr = None
        # the switch looks at the host's steal counter first: its record may come
        # between (a futex wait read 'not in a system call' once)
        for k in range(self.j - 1, max(-1, self.j - 3), -1):
            off = _HDR + _REC * self.index[k]
            if self.data[off + _TYPE] == ev.STEAL:
                continue
            if self.data[off + _TYPE] == ev.BLOCK:
                _, pid, _, _, _, a, _ = ev.HEAD.unpack_from(self.data, off)
                if pid == tid and a != ev.NO_SYSCALL:
                    nr = a
            break
        if nr is None:
            name, link = "not in a system call", "blocked outside a system call (a page fault)"
        else:
            name = syscalls.name(nr)
            link = "blocked in " + name
        ep = self._new(C.BLOCKED, name, ts, link)
        ep.waiter = tid
        if self.wait is not None:
            self._ran_again(ts)
        if self.wait is not None and self.wait.end is None:
            self.wait.end = ts          # its wake-up on another CPU was not seen here
        self.wait, self.wait_tid, self.wait_ran = ep, tid, [ran]

    def _ran_again(self, at):
        """jtr run app: the open wait's thread began or returned from a call by
        @at, its switch back here not seen (a switch the tracer lost: on this
        kind of host a switch to one task of the host's agent is never followed
        by a switch away from it). Its wait ends at its wake-up; who held the
        CPU after the wake-up is not known: nothing is charged for it. Left
        open, the loop's sleep between two calls was charged to the next (CI
        counted 114 sleeps in 113 sleeping calls); its wake-up lost too, it
        was still charged a microsecond of the next call (the window's slack)
        when it ended where that call began."""
        ep, tid = self.wait, self.wait_tid
        ret = self.app.ran_at(tid, ep.begin, at)
        if ret is None:
            return
        ret, began = ret
        w = self.app.first(tid, ep.begin, ret)
        if ep.waiter is not None:
            self._woken(ep, ret)
        if w is not None:
            ep.end = max(ep.begin, w[0])
        elif began:
            # its wake-up lost too (the host ran its agent the whole wait
            # through): a wait between two calls, ended when is not known, no
            # part of the call that began at @ret
            ep.end = ep.begin
        else:
            ep.end = ret                # a wait inside the call that returned at @ret
        self.wait, self.wait_ran = None, []

    def _wait_over(self, ts):
        """jtr run app: the blocked thread runs here again at @ts. Its wait ends at
        its wake-up; from there to @ts the wake-up was being delivered: each task
        that held the CPU meanwhile is charged its part (an episode: it held the
        CPU while the thread waited to run), interrupts are episodes of their own,
        the rest is no kernel event (an idle CPU the host did not run)."""
        ep, tid = self.wait, self.wait_tid
        self.wait = None
        w = self.app.first(tid, ep.begin, ts)
        if w is None or w[0] >= ts:
            ep.end = ts
            return
        if ep.waiter is not None:
            self._woken(ep, ts)
        woke = ep.end = max(ep.begin, w[0])
        ep.links.append("it ran %s after its wake-up" % _fmt_ns(ts - woke))
        who = "%s (tid %d)" % (self.comms.get(tid) or "the thread", tid)
        ran = self.wait_ran
        for k, (t0, pid, comm, prio) in enumerate(ran):
            t1 = ran[k + 1][0] if k + 1 < len(ran) else ts
            b = max(t0, woke)
            if pid != 0 and t1 > b:
                # in time order among the episodes since (an interrupt after it)
                eps = self.episodes
                k = len(eps)
                while k > 0 and eps[k - 1].begin > b:
                    k -= 1
                eps.insert(k, wait_episode(pid, comm or self.comms.get(pid) or "", prio, b,
                                           t1, who))
        self.wait_ran = []

    def _moved(self, hi):
        """jtr run app: the thread preempted or blocked here that ran again on
        another CPU by @hi: what held it here ends there (a migration; its time
        there is not this CPU's)."""
        for attr, tid in (("preempt", self.away), ("wait", self.wait_tid)):
            ep = getattr(self, attr)
            if ep is None or ep.end is not None or tid is None:
                continue
            moved = self.app.ran_elsewhere(tid, self.cpu, ep.begin, hi)
            if moved is None:
                continue
            if ep.waiter is not None:
                self._woken(ep, moved[0])
            ep.end = moved[0]
            self.moved_from = ep.begin
            if attr == "wait":
                # its wait ends at its wake-up (the other CPU's walk has the rest)
                w = self.app.first(tid, ep.begin, moved[0])
                if w is not None:
                    ep.end = max(ep.begin, w[0])
                ep.links.append("it ran on CPU %d from there" % moved[1])
                self.wait_ran = []
            setattr(self, attr, None)

    def _nohz_tick(self, ep):
        """A tick on this nohz_full CPU: the residual tick (the tick stopped, it
        came for the CPU's next timer) or the tick kept by a dependency, as the
        last timer:tick_stop record before it says (C.nohz_tick)."""
        ts, states = self.tick_states
        k = bisect.bisect_right(ts, ep.begin) - 1
        ep.name, link = C.nohz_tick(states[k] if k >= 0 else None)
        if ep.links and ep.links[0] == C.LOCAL_TIMER[1]:
            ep.links[0] = link

    def _woken(self, ep, hi):
        """A blocked episode's waker, once known: a link 'woken by COMM (pid N,
        CPU C) after T' from the first sched_waking of the thread in it."""
        w = self.app.first(ep.waiter, ep.begin, ep.end if ep.end is not None else hi)
        if w is None:
            return
        ep.links.append(self.app.text(w, ep.begin, self.comms))
        ep.waiter = None

    def _left(self, pid, ts):
        """Task @pid left the CPU: a work item it started here as an episode of
        its own ends with it. Its workqueue_execute_end may come on another CPU
        (an unbound kworker that blocked and woke elsewhere) or much later: left
        open, the item spanned every outlier after it (a kworker 'for 308 ms')."""
        keep = [fr for fr in self.stack if not (
            fr[0] == WQ_START and fr[3] and fr[2] is not self.preempt and
            fr[2].tasks and fr[2].tasks[0][1] == pid)]
        if len(keep) < len(self.stack):
            for fr in self.stack:
                if fr not in keep and fr[2].end is None:
                    fr[2].end = ts
            self.stack = keep

    def _decoded(self, j0, j1):
        """(j, record number, ts, pid, type, flags, a, b) of the CPU's events
        j0..j1-1 that are not passive."""
        data, unpack, passive = self.data, ev.HEAD.unpack_from, _PASSIVE
        rows = self.index[j0:j1]
        if not isinstance(rows, list):
            rows = rows.tolist()        # a numpy index: its ints, once
        for j, row in enumerate(rows, j0):
            off = _HDR + _REC * row
            if data[off + _TYPE] in passive:
                continue
            ts, pid, _, t, flags, a, b = unpack(data, off)
            yield j, row, ts, pid, t, flags, a, b

    def walk(self, j0, j1, win_lo, records=None):
        """Process the CPU's events j0..j1-1 (positions in its time order); a
        whole CPU's walk may give them decoded (@records: records_of())."""
        data = self.data
        # links: hrtimer functions by address, timer functions by ~address
        links, exits, vec_desc = self.timer_links, _EXITS, self.vec_desc
        n_vec = len(self.vectors)
        stack, episodes = self.stack, self.episodes     # _switch() may replace the stack
        away = self.away if self.preempt is not None else None
        for j, row, ts, pid, t, flags, a, b in (
                self._decoded(j0, j1) if records is None else records):
            if pid == away and t != SWITCH:
                self.preempt.end = ts   # the probe runs again: the switch back was lost
                self.preempt = away = None
            if t in exits:
                g = t - 1
                if stack and stack[-1][0] == g and stack[-1][1] == a:
                    fr = stack.pop()    # the usual case, _close() inline
                    ep = fr[2]
                    if fr[3]:
                        ep.end = ts
                        if g != WQ_START:
                            self.last_irq = ep
                    elif not fr[4] and ep.end is not None and ts > ep.end:
                        ep.end = ts
                else:
                    self.j = j
                    self._exit(g, a, ts, b)
            elif t == VEC_ENTRY:
                cat, name, link = vec_desc[b if 0 <= b < n_vec else -1]
                sender = None
                if flags & ev.VEC_SENDER:
                    sender = self._sender(row)
                    link = "%s from %s" % (link, sender)
                if stack:
                    self._interrupt(VEC_ENTRY, a, ts, cat, name, link)
                else:                   # the usual case, _interrupt() inline
                    ep = Episode(cat, name, ts, link)
                    ep.sender = sender
                    episodes.append(ep)
                    stack.append([VEC_ENTRY, a, ep, True, False])
            elif t == HRTIMER_ENTRY:
                link = links.get(b)
                if link is None:
                    link = links[b] = "hrtimer " + self._sym(b)
                if stack and not stack[-1][4]:  # the usual case, _timer() inline
                    top = stack[-1]
                    top[2].links.append(link)
                    stack.append([HRTIMER_ENTRY, a, top[2], False, False])
                else:
                    self._timer(HRTIMER_ENTRY, a, ts, link, _TICK)
            elif t == SOFTIRQ_ENTRY:
                self._softirq(ts, a, win_lo)
            elif t == TIMER_ENTRY:
                link = links.get(~b)
                if link is None:
                    link = links[~b] = "timer " + self._sym(b)
                if stack and not stack[-1][4]:  # the usual case, _timer() inline
                    top = stack[-1]
                    top[2].links.append(link)
                    stack.append([TIMER_ENTRY, a, top[2], False, False])
                else:
                    self._timer(TIMER_ENTRY, a, ts, link, _TIMER_SOFTIRQ)
            elif t == IRQ_ENTRY:
                off = _HDR + _REC * row
                name = C.irq(a, ev.cstr(data[off + _RAW:off + _REC]))
                self.irq_names[a] = name
                self._interrupt(IRQ_ENTRY, a, ts, C.HARDIRQ, name, "hardirq " + name)
            elif t == SWITCH:
                self.j = j
                off = _HDR + _REC * row
                self._switch(ts, a, b, flags, data[off + _RAW:off + _REC], win_lo)
                stack = self.stack
                away = self.away if self.preempt is not None else None
            elif t == WQ_START:
                self._work(ts, pid, a, "workqueue " + self._sym(b))
            elif t == NMI:
                sym = self._sym(a)
                ep = self._new(C.NMI, sym, ts - b, "NMI " + sym)
                ep.end = ts
            elif t == PF_USER or t == PF_KERNEL:
                kind = "user" if t == PF_USER else "kernel"
                ep = self._new(C.PAGE_FAULT, kind, ts, "page fault " + kind, known=False)
                ep.end = ts

    def _softirq(self, ts, vec, win_lo):
        """softirq entry: part of the irq before it, run by a preempting task, or alone."""
        got = self.softirqs.get(vec)
        if got is None:
            name = softirq_name(vec)
            got = self.softirqs[vec] = (name, "softirq " + name)
        name, link = got
        stack, last = self.stack, self.last_irq
        if stack and not stack[-1][4]:
            ep = stack[-1][2]
            ep.links.append(link)
            stack.append([SOFTIRQ_ENTRY, vec, ep, False, False])
        elif last is not None and (last.end >= win_lo or ts < win_lo) and (
                self.join_ns is None or ts - last.end <= self.join_ns):
            last.links.append(link)
            stack.append([SOFTIRQ_ENTRY, vec, last, False, False])
        elif self.preempt is not None:
            _add_item(self.preempt.tasks[-1], link)
            stack.append([SOFTIRQ_ENTRY, vec, self.preempt, False, True])
        else:
            ep = self._new(C.SOFTIRQ, name, ts, link)
            stack.append([SOFTIRQ_ENTRY, vec, ep, True, False])

    def _work(self, ts, pid, work, item):
        """workqueue_execute_start: an item of the preempting task (or of an unseen one)."""
        if self.preempt is not None:
            _add_item(self.preempt.tasks[-1], item)
            self.stack.append([WQ_START, work, self.preempt, False, True])
            return
        comm = self.comms.get(pid)    # named by its switches elsewhere in the log
        ep = self._new(C.TASK, C.Task(comm or "", pid), ts, None)
        ep.links = []
        ep.tasks = [[comm, pid, None, [item]]]
        ep.switch_ns = ts
        self.stack.append([WQ_START, work, ep, True, True])

    def pick(self, lo, hi, length):
        """The primary episode of the window [lo, hi], the traced time and every
        episode in the window with its clipped duration: (None, 0, []) if none.

        Forgets the episodes that ended before lo: later windows start later.
        """
        if self.app is not None:
            self._moved(hi)
            if self.wait is not None:
                self._ran_again(hi)
        keep, best, best_d, spans, found = [], None, -1, [], []
        for e in self.episodes:
            end = e.end
            if end is not None and end < lo:
                continue
            keep.append(e)
            if e.begin > hi:
                continue
            b = e.begin if e.begin > lo else lo
            if e.waiter is not None:
                self._woken(e, hi)
            if self.tick_states is not None and e.category == C.TICK and \
                    e.name == C.LOCAL_TIMER[1]:
                self._nohz_tick(e)
            if end is None or end > hi:
                end = hi
            d = end - b if e.known and end > b else 0
            found.append((e, d, b, end))
            if d > best_d:
                best, best_d = e, d
            if d > 0:
                spans.append((b, end))
        self.episodes = keep
        if len(spans) < 2:
            traced = best_d if spans else 0
        else:
            traced = union_ns(spans)
        return best, traced if traced < length else length, found


def union_ns(spans):
    """Time covered by a list of (begin, end) intervals."""
    traced, cur_b, cur_e = 0, None, None
    for b, end in sorted(spans):
        if cur_e is None or b > cur_e:
            if cur_e is not None:
                traced += cur_e - cur_b
            cur_b, cur_e = b, end
        elif end > cur_e:
            cur_e = end
    if cur_e is not None:
        traced += cur_e - cur_b
    return traced


softirq_name = C.softirq   # HI, TIMER, ... RCU for vectors 0..9


def scan_switches(log, programs=None):
    """From every sched_switch: the probe's pid per CPU, and the comm of every pid seen.

    The probe is the task most often switched out while runnable on that CPU (it
    spins and never blocks; the idle task, pid 0, is left out); where @programs
    ({cpu: comm}) names the program measuring on a CPU (jtr-pong, which may
    block), the task of that comm that ran there longest (from each switch to it
    to its switch out: jtr-gap's main thread and its measuring thread were once
    switched out four times each, and the main thread, taken for the probe, made
    every throttle of the measuring one 'no kernel event'). Comms come from
    prev_comm and next_comm, so a task whose next_comm was not recorded is still
    named once it was switched out.
    """
    body = memoryview(log.data)[_HDR:_HDR + log.records * _REC]
    types = bytes(body[_TYPE::_REC])
    counts, comms, named, last = {}, {}, {}, {}
    find, data, unpack = types.find, log.data, _SWITCH_FIELDS.unpack_from
    ts_of = _TS.unpack_from
    i = find(SWITCH)
    while i >= 0:
        cpu, _, flags, prev_next, prev_comm, next_comm = unpack(
            data, _HDR + i * _REC + ev.CPU_OFFSET)
        prev_pid, next_pid = prev_next & 0xffffffff, prev_next >> 32
        if flags & 1 and prev_pid:      # the idle task is always runnable, never the probe
            per = counts.setdefault(cpu, {})
            per[prev_pid] = per.get(prev_pid, 0) + 1
        if programs and cpu in programs:
            ts = ts_of(data, _HDR + i * _REC)[0]
            if ev.cstr(prev_comm) == programs[cpu]:
                t0 = last.get(cpu)      # its time on the CPU, since the switch before
                per = named.setdefault(cpu, {})
                per[prev_pid] = per.get(prev_pid, 0) + (ts - t0 if t0 is not None and
                                                         ts > t0 else 1)
            last[cpu] = ts
        if prev_comm[0]:
            comms[prev_pid] = prev_comm
        if next_comm[0]:
            comms[next_pid] = next_comm
        i = find(SWITCH, i + 1)
    # a task never switched in the log (running when tracing began) may still be
    # named by a wake-up or migration record: comm of the task in str, pid in a
    for t in (ev.WAKEUP, ev.WAKING, ev.MIGRATE):
        i = find(t)
        while i >= 0:
            off = _HDR + i * _REC
            pid = int.from_bytes(data[off + ev.A_OFFSET:off + ev.A_OFFSET + 4], "little")
            if pid not in comms and data[off + _RAW]:
                comms[pid] = bytes(data[off + _RAW:off + _RAW + ev.COMM_LEN])
            i = find(t, i + 1)
    names = {pid: ev.cstr(c) for pid, c in comms.items()}
    counts.update(named)
    pids = {cpu: max(per, key=per.get) for cpu, per in counts.items()}
    # jtr run app: the thread that called on a CPU is known by its tid
    pids.update({c: v for c, v in (programs or {}).items() if isinstance(v, int)})
    return pids, names


def _p50(values):
    """The median (lower middle) of a non-empty list."""
    values.sort()
    return values[(len(values) - 1) // 2]


class Wakings:
    """jtr run app: the wake-ups of the application's threads (sched_waking
    records flagged APP), by thread in time order: when, by whom, and from
    what: a task, or an interrupt that ran on the waker's CPU (the timer of a
    sleep wakes it from whichever task it interrupted: that task did not)."""

    CONTEXT = 64        # records looked back on the waker's CPU for an open interrupt

    def __init__(self, log):
        body = memoryview(log.data)[_HDR:_HDR + log.records * _REC]
        types = bytes(body[_TYPE::_REC])
        self.log = log
        self.by_tid = {}
        i = types.find(ev.WAKING)
        while i >= 0:
            off = _HDR + i * _REC
            ts, pid, cpu, _, flags, a, _ = ev.HEAD.unpack_from(log.data, off)
            if flags & ev.APP:
                comm = ev.cstr(log.data[off + _RAW + ev.COMM_LEN:off + _RAW + 2 * ev.COMM_LEN])
                self.by_tid.setdefault(a, []).append((ts, pid, comm, cpu))
            i = types.find(ev.WAKING, i + 1)
        for v in self.by_tid.values():
            v.sort()
        # where each thread of the application was switched in: (ts, cpu) in order
        self.ins = {}
        i = types.find(SWITCH)
        while i >= 0:
            off = _HDR + i * _REC
            ts, _, cpu, _, flags, a, _ = ev.HEAD.unpack_from(log.data, off)
            if flags & ev.APP_NEXT:
                self.ins.setdefault(a >> 32, []).append((ts, cpu))
            i = types.find(SWITCH, i + 1)
        for v in self.ins.values():
            v.sort()
        self.ran = None         # ran_at's index, made when first asked

    def ran_at(self, tid, lo, hi):
        """(when, whether it began one) of @tid's first beginning of, or return
        from, a call in (lo, hi] (its CALL records: it ran there), or None."""
        if self.ran is None:
            self.ran = {}
            for e in self.log.of_type(ev.CALL):
                self.ran.setdefault(e.pid, []).extend(((e.a, True), (e.ts_ns, False)))
            for v in self.ran.values():
                v.sort()
        v = self.ran.get(tid)
        if not v:
            return None
        k = bisect.bisect_right(v, (lo, True))
        return v[k] if k < len(v) and v[k][0] <= hi else None

    def ran_elsewhere(self, tid, cpu, lo, hi):
        """(ts, cpu) of @tid's first switch-in on a CPU other than @cpu in
        [lo, hi], or None: it went on running there (a migration)."""
        v = self.ins.get(tid)
        if not v:
            return None
        for ts, c in v[bisect.bisect_left(v, (lo,)):]:
            if ts > hi:
                return None
            if c != cpu:
                return ts, c
        return None

    def first(self, tid, lo, hi):
        """(ts, waker pid, waker comm, its CPU) of @tid's first wake-up in [lo,
        hi], or None."""
        v = self.by_tid.get(tid)
        if not v:
            return None
        k = bisect.bisect_left(v, (lo,))
        return v[k] if k < len(v) and v[k][0] <= hi else None

    def context(self, cpu, ts):
        """The interrupt open on @cpu at @ts (the innermost entry before it whose
        exit is not before it): 'its timer hrtimer_wakeup', 'hardirq 36
        virtio1-req', 'softirq NET_RX', 'IPI reschedule'; None when a task woke it
        (a switch comes first, looking back)."""
        log = self.log
        tss, idx = log.cpu_ts.get(cpu, []), log.cpu_index.get(cpu, [])
        k = bisect.bisect_left(tss, ts)
        closed = {}
        for j in range(k - 1, max(-1, k - 1 - self.CONTEXT), -1):
            off = _HDR + _REC * idx[j]
            _, _, _, t, _, a, b = ev.HEAD.unpack_from(log.data, off)
            if t == SWITCH:
                return None
            if t in _EXITS:
                closed[t - 1] = closed.get(t - 1, 0) + 1
                continue
            if t not in (HRTIMER_ENTRY, TIMER_ENTRY, IRQ_ENTRY, SOFTIRQ_ENTRY, VEC_ENTRY):
                continue
            if closed.get(t):
                closed[t] -= 1
                continue
            if t in (HRTIMER_ENTRY, TIMER_ENTRY):
                return "its timer %s" % log.symbol(b)
            if t == IRQ_ENTRY:
                return "hardirq " + C.irq(a, ev.cstr(log.data[off + _RAW:off + _REC]))
            if t == SOFTIRQ_ENTRY:
                return "softirq " + softirq_name(a)
            return vector_desc(log.vectors[b] if 0 <= b < len(log.vectors) else "unknown")[2]
        return None

    def text(self, w, begin, comms):
        """'woken by COMM (pid N, CPU C) after T', or by the interrupt it came from."""
        ts, pid, comm, cpu = w
        ctx = self.context(cpu, ts)
        who = ("%s on CPU %d" % (ctx, cpu)) if ctx else \
            "%s (pid %d, CPU %d)" % (comm or comms.get(pid) or "?", pid, cpu)
        return "woken by %s after %s" % (who, _fmt_ns(ts - begin))


def attribute(result, outliers, log, slack_ns=DEFAULT_SLACK_NS, top=20, each=None,
              programs=None, progress=None, app=False):
    """The attribution section: every outlier charged to its causes (module
    docstring), each outlier searched on its own CPU (round trips and messages
    across two ends: attribution/ends.py).

    each, if given, is called once per outlier with (cpu, start_ns, length_ns,
    parts, pids, works): parts as [(category, name, ns)] (what the outlier's time
    was charged to, as worst[].parts), pids the tasks of its charged
    task-preemption episodes (every task of their chains), works the workqueue
    functions those tasks ran. The cross-check and jtr advise use it.
    programs: {cpu: comm} of the program measuring on a CPU (it may block), or
    {cpu: tid} of the thread whose outliers they are (jtr run app).
    app: the outliers are an application's calls (jtr run app): where its thread
    blocks, that wait is a cause of its own (blocked: the system call, the
    waker), not a time other tasks are charged for; the walker takes every
    window (no fast path).
    progress(text), if given, is told what is being done (on a terminal, jtr says
    it when the work takes a while).
    """
    progress = progress or (lambda text: None)
    with paused_gc():
        app = Wakings(log) if app else None
        a = _attribute(result, outliers, log, slack_ns, top, each, programs, progress, app)
        spans = merged_spans(outliers)
        if spans is None:
            return a
        # outliers in flight together: their sums are no time at all. Each cause's
        # total is charged once per instant, over the spans they cover together
        # (attribution/ends.py does the same for round trips and messages)
        progress("%d overlapping outliers: charging the %d spans they cover once"
                 % (len(outliers), len(spans)))
        once = _attribute(result, spans, log, slack_ns, 0, None, programs, progress, app)
        totals = {(c["category"], c["name"], c.get("side")): c["total_ns"]
                  for c in once["causes"]}
        return with_totals(a, totals, (0, 0))


# two outliers of a CPU overlapping by this much or less do not: a probe's start and
# length are each rounded to the ns from its clock's units, so one gap's end can fall
# 1-2 ns after the next gap's start (1 ns in a 2 s gap run once: the causes then
# added up to 1 ns less than the probe's own total)
ROUNDING_NS = 2


def merged_spans(outliers):
    """The outliers' windows with those that overlap on a CPU joined, from the first
    one's start to the last one's end: [(cpu, start, length)]; None when no two
    overlap by more than ROUNDING_NS (a probe's outliers never do; an application's
    calls, a subscriber's messages in flight together do)."""
    if getattr(outliers, "ndim", 0) == 2 and not _overlap_np(outliers):
        return None         # a probe's array: told at once (a loop took 0.18 s per 100K)
    per = {}
    for cpu, start, length in outliers:
        per.setdefault(int(cpu), []).append((int(start), int(start) + int(length)))
    out, joined = [], False
    for cpu, spans in per.items():
        spans.sort()
        b, e = spans[0]
        for s, t in spans[1:]:
            if s < e - ROUNDING_NS:
                joined = True
                e = max(e, t)
            else:
                out.append((cpu, b, e - b))
                b, e = s, t
        out.append((cpu, b, e - b))
    return out if joined else None


def _overlap_np(arr):
    """Do two rows of an outlier array (cpu, start, length) overlap on a CPU (by
    more than ROUNDING_NS)? Sorted by CPU and start, some row then starts before the
    end of the row before it."""
    if len(arr) < 2:
        return False
    import numpy as np
    order = np.lexsort((arr[:, 1], arr[:, 0]))
    cpu, start = arr[order, 0], arr[order, 1]
    end = start + arr[order, 2]
    return bool(np.any((cpu[1:] == cpu[:-1]) & (start[1:] < end[:-1] - ROUNDING_NS)))


def with_totals(a, totals, not_traced):
    """The section @a with each cause's total_ns charged once per instant
    (@totals), its share of them, its phases scaled to it, and the outliers'
    total_ns the time some outlier was in flight (their lengths added:
    summed_ns)."""
    o = a["outliers"]
    o["summed_ns"] = o["total_ns"]
    grand = sum(totals.values()) + not_traced[1]
    for c in a["causes"]:
        key = (c["category"], c["name"], c.get("side"))
        summed = sum(c.get("phases", {}).values()) or None
        if c["category"] == NOT_TRACED[0]:
            tot = totals.get(key, c["total_ns"])
        else:
            tot = totals.get(key, 0)
        if summed and c.get("phases"):
            c["phases"] = {k: v * tot // summed for k, v in c["phases"].items()}
        if c.get("tasks"):
            s = sum(t["total_ns"] for t in c["tasks"]) or 1
            for t in c["tasks"]:
                t["total_ns"] = t["total_ns"] * tot // s
        c["total_ns"] = tot
        c["share"] = round(tot / grand, 6) if grand else 0.0
    a["causes"].sort(key=lambda r: (-r["total_ns"], -r["count"], r["category"], r["name"],
                                    r.get("side") or ""))
    o["total_ns"] = grand
    o["traced_ns"] = sum(v for k, v in totals.items() if C.BY_NAME[k[0]].kernel)
    return a


def preempting(eps):
    """The pids of the tasks in the task-preemption episodes among eps."""
    return [t[1] for e in eps if e is not None and e.tasks for t in e.tasks]


WORK = "workqueue "


def works_of(eps):
    """The workqueue functions the preempting tasks of eps ran ('vmstat_update')."""
    return sorted({i[len(WORK):] for e in eps if e is not None and e.tasks
                   for t in e.tasks for i in t[3] if i.startswith(WORK)})


def check_args(slack_ns, top):
    """UsageError for a slack or a top that is not a whole number >= 0."""
    if not isinstance(slack_ns, int) or slack_ns < 0:
        raise UsageError("slack %r: give a whole number of ns >= 0" % (slack_ns,))
    if not isinstance(top, int) or top < 0:
        raise UsageError("top %r: give a whole number >= 0" % (top,))


class Tallies:
    """The per-cause tallies of an attribution being made, the worst outliers
    and each outlier's main category: what report() turns into the section.

    causes: (category, name, side) -> [parts ns, longest outlier, its chain,
    primary count, {phase: ns}, the number it was taken, {Task: [count, ns]}]."""

    def __init__(self, n, top):
        self.causes, self.worst, self.top = {}, [], top
        self.proc = -1              # the outlier being charged, numbered as taken
        self.at = 0                 # ... and its place in the outliers given
        self.main_of = [None] * n   # each outlier's main category, in the order given
        self.senders = {}           # an IPI cause's senders: key -> {sender: [count, ns]}

    def note_sender(self, key, sender, ns):
        """@ns of an outlier charged to the IPI cause @key sent by @sender."""
        c = self.senders.setdefault(key, {}).setdefault(sender, [0, 0])
        c[0] += 1
        c[1] += ns

    def tally(self, key, part_ns, primary, length, chain_fn, phase=None, tasks=()):
        """Charge part_ns of an outlier to a cause (a folded key); keep the chain of
        its longest; @tasks: [(Task, ns)] of a task cause's part."""
        c = self.causes.get(key)
        if c is None:
            c = self.causes[key] = [[], -1, "", 0, {}, -1, {}]
        c[0].append(part_ns)
        if primary:
            c[3] += 1
        for t, ns in tasks:
            w = c[6].get(t)
            if w is None:
                c[6][t] = [1, ns]
            else:
                w[0] += 1
                w[1] += ns
        if phase is not None:
            c[4][phase] = c[4].get(phase, 0) + part_ns
        if length > c[1]:
            c[1], c[2], c[5] = length, chain_fn(), self.proc

    def bulk(self, key, parts, primary, phases, tasks, length, chain_fn):
        """tally() of many outliers of one cause at once: @parts their ns, @primary
        how many had it as main cause, @phases {phase: ns}, @tasks [(Task, [count,
        ns])], @length the longest one's (taken as self.proc, its chain_fn)."""
        c = self.causes.get(key)
        if c is None:
            c = self.causes[key] = [[], -1, "", 0, {}, -1, {}]
        c[0].extend(parts)
        c[3] += primary
        for ph, ns in phases.items():
            c[4][ph] = c[4].get(ph, 0) + ns
        for t, (n, ns) in tasks:
            w = c[6].get(t)
            if w is None:
                c[6][t] = [n, ns]
            else:
                w[0] += n
                w[1] += ns
        if length > c[1]:
            c[1], c[2], c[5] = length, chain_fn(), self.proc

    def note_worst(self, cpu, start, length, key, chain_fn, traced, parts):
        """Keep the outlier if it is among the top longest."""
        top, worst = self.top, self.worst
        rank = (length, -start, -self.proc)
        if top > 0 and (len(worst) < top or rank > worst[0][:3]):
            item = rank + (cpu, key, chain_fn(), traced, parts)
            if len(worst) < top:
                heapq.heappush(worst, item)
            else:
                heapq.heapreplace(worst, item)

    def parts(self, cpu, start, length, share, main, chain, traced, phases=None):
        """An outlier shared among causes: share {cause: ns} (a task's cause keyed
        by its Task: folded here into one per comm), main the primary. Returns
        its parts, largest first."""
        self.main_of[self.at] = main[0]
        phases = phases or {}
        folded = {}
        for k, ns in share.items():
            if ns > 0 or k == main:
                f = folded.setdefault(fold_task(k), [0, [], phases.get(k), False])
                f[0] += ns
                f[3] = f[3] or k == main
                if type(k[1]) is C.Task:
                    f[1].append((k[1], ns))
        main = fold_task(main)
        out = []
        for k, (ns, tasks, phase, is_main) in folded.items():
            self.tally(k, ns, is_main, length, chain, phase, tasks)
            out.append(outlier_part(k, ns, phase, max(tasks, key=lambda t: t[1])[0]
                                    if tasks else None))
        out.sort(key=lambda p: -p["ns"])
        self.note_worst(cpu, start, length, main, chain, traced, out)
        return out


def _attribute(result, outliers, log, slack_ns, top, each, programs, progress, app=None):
    """attribute() with the garbage collector paused."""
    check_args(slack_ns, top)
    runs = result.get("runs", [])
    meta = log.meta
    traced_cpus = set(meta.get("cpus") or log.cpu_ts)
    t_lo, t_hi = log.start_ns, log.end_ns
    traced_total = 0
    T = Tallies(len(outliers), top)
    causes, worst, main_of = T.causes, T.worst, T.main_of

    def charge(key, cpu, start, length, ep, hi, traced):
        """An outlier with one cause for all of it."""
        main_of[T.at] = key[0]
        task = key[1] if type(key[1]) is C.Task else None
        if task is not None:
            key = fold_task(key)
        if ep is not None and ep.sender:
            T.note_sender(key, ep.sender, length)
        if each is not None:
            each(cpu, start, length, [(key[0], key[1], length)], preempting((ep,)),
                 works_of((ep,)))
        c = causes.get(key)
        if task is None and c is not None and length <= c[1] and (
                top == 0 or (len(worst) == top and
                             (length, -start, -T.proc) <= worst[0][:3])):
            c[0].append(length)     # the usual case: no new chain to write
            c[3] += 1
            return

        def chain():
            return format_chain(ep, hi) if ep is not None else "%s: %s" % key[:2]
        T.tally(key, length, True, length, chain, None, ((task, length),) if task else ())
        T.note_worst(cpu, start, length, key, chain, traced,
                     None if task is None else [outlier_part(key, length, None, task)])

    def charge_split(cpu, start, length, ep, found, hi, traced):
        """Share an outlier: the host's steal measured in it first, then each
        episode other than the primary its own time, the primary the rest of the
        traced time plus the entry allowance, and what is left no kernel event
        (VM exits, SMI or hardware)."""
        key = (ep.category, ep.name, None)
        steal = stolen.get((cpu, start))
        host = min(steal, length) if steal else 0
        room = length - host
        # jtr run app: the call's own work (its median) is in its length
        own = min(own_ns.get(cpu, 0), room)
        if not host and not own and len(found) == 1 and traced + ENTRY_ALLOWANCE_NS >= length:
            return charge(key, cpu, start, length, ep, hi, traced)
        kernel_ns = min(room - own, traced + (0 if ep.category == C.BLOCKED else
                                              ENTRY_ALLOWANCE_NS))
        share = {key: 0}
        pb, pe = next((b, end) for e, _, b, end in found if e is ep)
        # episodes inside the primary's time (a tick while the preempting task
        # ran) took time from that task, not from the probe: not parts of their own
        apart = [(e, d) for e, d, b, end in found
                 if e is not ep and d > 0 and (b < pb or end > pe)]
        # jtr run app: what ran on the CPU while its thread slept took nothing from it
        waits = [(b, end) for e, d, b, end in found if e.category == C.BLOCKED and e is not ep]
        if waits:
            inside = {id(e) for e, d, b, end in found if e.category != C.BLOCKED and
                      any(wb <= b and end <= we for wb, we in waits)}
            apart = [(e, d) for e, d in apart if id(e) not in inside]
        for e, d in apart:
            k = (e.category, e.name, None)
            if k != key:
                share[k] = share.get(k, 0) + d
        others = sum(share.values())
        if others > kernel_ns:  # overlapping episodes, or the host's time: scaled into it
            for k in share:
                share[k] = share[k] * kernel_ns // others
            others = sum(share.values())
        share[key] = kernel_ns - others
        rest = room - own - kernel_ns
        if own:
            share[C.CALL_MEDIAN + (None,)] = own
        for k, ns in host_steal.first(steal, host, rest).items():
            share[(C.CALL_OWN if app is not None and k != C.HOST_STEAL else k) + (None,)] = ns
        if len(share) == 1:
            return charge(key, cpu, start, length, ep, hi, traced)
        main = max(share, key=lambda k: (share[k], k == key))

        memo = []

        def chain():
            # one text per outlier, however many parts ask for it; linear in the
            # episodes (an outlier can hold thousands: a flood of IPIs), and at most
            # MAX_EPISODES of them spelled out
            if memo:
                return memo[0]
            apart_ids = {id(a) for a, _ in apart}
            shown = [e for e, _, _, _ in found if e is ep or id(e) in apart_ids]
            memo.append(outlier_chain(shown, hi, main[0] == NO_EVENT[0], host,
                                      length - host - own - kernel_ns, own))
            return memo[0]
        parts = T.parts(cpu, start, length, share, main, chain, traced)
        # the IPIs' senders, each with its episode's part of its cause's share
        if ep.sender:
            T.note_sender(key, ep.sender, share[key])
        sent = [(e, d) for e, d in apart if e.sender and (e.category, e.name, None) != key]
        if sent:
            own = {}
            for e, d in apart:
                own[(e.category, e.name, None)] = own.get((e.category, e.name, None), 0) + d
            for e, d in sent:
                k = (e.category, e.name, None)
                T.note_sender(k, e.sender, share.get(k, 0) * d // max(1, own[k]))
        if each is not None:
            eps = [e for e in [ep] + [a for a, _ in apart]
                   if share.get((e.category, e.name, None)) or
                   (e.category, e.name, None) == main]
            each(cpu, start, length, [(p["category"], p["name"], p["ns"]) for p in parts],
                 preempting(eps), works_of(eps))

    def charge_no_event(cpu, start, length, hi, names):
        """An outlier with no kernel event that takes time in its window: the
        host's steal first, the rest no kernel event (or, when the window held
        events that take no time, "other events")."""
        steal = stolen.get((cpu, start))
        host = min(steal, length) if steal else 0
        own = min(own_ns.get(cpu, 0), length - host)
        if names:
            other = (OTHER, ", ".join(sorted(set(names))), None)
            share = {other: length - host - own}
            if host:
                share[C.HOST_STEAL + (None,)] = host
        else:
            share = {(C.CALL_OWN if app is not None and k != C.HOST_STEAL else k) + (None,): ns
                     for k, ns in host_steal.first(steal, host, length - host - own).items()}
        if own:
            share[C.CALL_MEDIAN + (None,)] = own
        share = {k: ns for k, ns in share.items() if ns > 0}
        main = max(share, key=share.get)
        if len(share) == 1:
            return charge(main, cpu, start, length, None, hi, 0)

        def chain():
            if not own:
                return "no kernel event for %s, of which host preemption (steal) %s" % (
                    _fmt_ns(length), _fmt_ns(host)) if not names else \
                    "host preemption (steal) %s; then %s" % (_fmt_ns(host), other[1])
            # jtr run app: the call's own work beside what no kernel event
            # explains, and the host's steal only where it took some
            said = ["host preemption (steal) %s" % _fmt_ns(host)] if host else []
            if names:
                said.append(other[1])
            rest = length - host - own
            if not names and rest > 0:
                said.append("no kernel event for %s" % _fmt_ns(rest))
            if own:
                said.append("its own work (the median call) %s" % _fmt_ns(own))
            return "; then ".join(said)
        parts = T.parts(cpu, start, length, share, main, chain, 0)
        if each is not None:
            each(cpu, start, length, [(p["category"], p["name"], p["ns"]) for p in parts],
                 [], [])

    def window(walker, cpu, win, i):
        """Walk one outlier's window on its CPU (win: the walker's bookkeeping of
        it, see _bookkeeping) and charge it; the traced time."""
        begin, hi, lo, i0, i1, settle_at, restart_at, s = win
        if settle_at is not None:
            if walker.stack or walker.preempt is not None or walker.wait is not None:
                walker.settle(settle_at)
            else:
                walker.origin, walker.last_irq = settle_at, None
        if restart_at is not None:   # past the CPU's last event: start afresh at the outlier
            walker.restart(restart_at)
        if i1 > s:
            walker.walk(s, i1, lo)
        _, start, length = outliers[i]
        ep, traced, found = walker.pick(lo, hi, length)
        if app is not None:
            ep, traced, found = elsewhere(walker, ep, traced, found, hi, length)
        if ep is not None:
            charge_split(cpu, start, length, ep, found, hi, traced)
            return traced
        names = None
        if i1 > i0:
            idx = walker.index
            names = sorted({ev.TYPE_NAMES.get(log.data[_HDR + _TYPE + _REC * idx[j]],
                                              "type ?") for j in range(i0, i1)}
                           - {ev.TYPE_NAMES[t] for t in (ev.STEAL, ev.CALL, ev.BLOCK,
                                                         ev.TICK_STOP)})
        charge_no_event(cpu, start, length, hi, names)
        return 0

    others = {}         # jtr run app: a walker per CPU a thread went on to

    def elsewhere(walker, ep, traced, found, hi, length):
        """jtr run app: where the calling thread went on running on another CPU
        inside the window (a migration), that CPU's events from then to the
        window's end, walked with the thread as its probe, join the outlier's
        episodes (ep, traced and found as pick gives them, for both CPUs)."""
        tid = walker.probe_pid
        moved = app.ran_elsewhere(tid, walker.cpu, walker.moved_from or hi, hi) \
            if tid is not None else None
        walker.moved_from = None
        if moved is None:
            return ep, traced, found
        t_in, other = moved
        w = others.get(other)
        if w is None:
            w = others[other] = Walker(log, other, tid, walker.comms, throttled=throttled,
                                       app=app)
        w.probe_pid = tid
        ts = log.cpu_ts.get(other, [])
        j1 = bisect.bisect_right(ts, hi)
        j0 = max(0, bisect.bisect_left(ts, t_in) - LOOKBACK_EVENTS)
        w.restart(ts[j0] if j0 < len(ts) else t_in)
        w.walk(j0, j1, t_in)
        ep2, _, found2 = w.pick(t_in, hi, length)
        if ep2 is None:
            return ep, traced, found
        found = found + found2
        spans = [(b, end) for e, d, b, end in found if d > 0]
        traced = min(length, union_ns(spans))
        best = max(found, key=lambda f: f[1])[0]
        return best, traced, found

    def charge_window(walker, cpu, win, i, number=None):
        """Charge outlier @i on @cpu (the @number'th taken, or the next): the
        traced time."""
        T.proc = T.proc + 1 if number is None else number
        T.at = i
        return window(walker, cpu, win, i)

    throttled = Throttle(result, log)
    stolen = {}         # (cpu, start) -> host steal ns, where measured (_stolen)
    # jtr run app: each CPU's median call, the own work in every slow call's length
    own_ns = {r["cpu"]: int(r["percentiles_ns"]["50"]) for r in runs if app is not None and
              isinstance(r.get("cpu"), int) and isinstance(r.get("percentiles_ns"), dict) and
              isinstance(r["percentiles_ns"].get("50"), int)}
    np = numpy_or_none() if each is None and app is None else None
    arr = _as_array(np, outliers) if np is not None else None
    if arr is not None and log.arrays(None) is not None:
        if not isinstance(outliers, list):
            outliers = _Rows(arr)
        progress("%d outliers against %d events" % (len(outliers), log.records))
        fast_traced, not_traced = _attribute_fast(
            np, arr, outliers, log, slack_ns, top, traced_cpus, programs, T, stolen,
            charge_window, throttled)
        return report(runs, log, slack_ns, T, traced_total + fast_traced, not_traced,
                      len(outliers))

    if not isinstance(outliers, list):      # an array (OutlierLog.outliers())
        outliers = list(map(tuple, outliers.tolist()))
    copies, not_traced, n = {}, [0, 0], len(outliers)
    for i, (cpu, start, length) in enumerate(outliers):
        if cpu not in traced_cpus or start < t_lo or start > t_hi:
            not_traced[0] += 1
            not_traced[1] += length
            T.proc += 1
            T.at = i
            charge(NOT_TRACED + (None,), cpu, start, length, None, 0, 0)
            continue
        copies.setdefault(cpu, []).append((start, start + length, i))
    pids, comms = scan_switches(log, programs) if copies else ({}, {})
    stolen.update(_stolen(log, copies, outliers, slack_ns))
    for cpu, outs in copies.items():
        outs.sort()
        walker = Walker(log, cpu, pids.get(cpu), comms, throttled=throttled, app=app)
        for k, (win, (_, _, i)) in enumerate(zip(
                _bookkeeping(log.cpu_ts.get(cpu, []), outs, slack_ns), outs)):
            if not k & 4095:
                progress("CPU %d: outlier %d of %d" % (cpu, k, len(outs)))
            traced_total += charge_window(walker, cpu, win, i)
    return report(runs, log, slack_ns, T, traced_total, not_traced, n)


def outlier_chain(shown, hi, no_event_main, host, rest, own=0):
    """The chain of an outlier shared among its episodes @shown (the primary and
    the others that took time of their own), the host's steal @host, a timed
    call's @own work (jtr run app) and @rest of no kernel event: at most
    MAX_EPISODES episodes spelled out."""
    texts = [format_chain(e, hi) for e in shown[:MAX_EPISODES]]
    if len(shown) > MAX_EPISODES:
        texts.append("%d more episodes" % (len(shown) - MAX_EPISODES))
    if own:
        texts.append("its own work (the median call) %s" % _fmt_ns(own))
    c = "; then ".join(texts)
    if no_event_main and rest > 0 and rest >= host:
        c = "no kernel event for %s, with %s" % (_fmt_ns(rest), c)
    elif rest > 0:
        c = "%s, and no kernel event for %s" % (c, _fmt_ns(rest))
    if host:
        c = "host preemption (steal) %s; %s" % (_fmt_ns(host), c)
    return c


def _attribute_fast(np, arr, outliers, log, slack_ns, top, traced_cpus, programs, T, stolen,
                    charge, throttled):
    """_attribute with numpy (no each): the simple windows (vector.plan) charged
    here into the Tallies @T (the walker's tallies, with the same ties), the
    others through charge(walker, cpu, bookkeeping, i, number). @stolen: the
    host steal per outlier, filled here (the charges read it). Returns (traced
    ns of the simple ones, [outliers not traced, their ns])."""
    cpu_a, start_a, len_a = arr[:, 0], arr[:, 1], arr[:, 2]
    ok = np.isin(cpu_a, sorted(traced_cpus)) & (start_a >= log.start_ns) & \
        (start_a <= log.end_ns)
    nt = np.flatnonzero(~ok)
    items = [(np.arange(len(nt)), nt, np.full(len(nt), vector.NOT_TRACED, np.int64),
              np.zeros(len(nt), np.int64))]
    tr = np.flatnonzero(ok)
    seen, first = np.unique(cpu_a[tr], return_index=True)
    cpus = seen[np.argsort(first)].tolist()
    per_cpu = {c: tr[cpu_a[tr] == c] for c in cpus}
    steal = None        # vector.plan's: None where the log did not measure it
    if cpus and not host_steal.unmeasured(log.meta):
        stolen.update(_stolen(log, {c: list(zip(start_a[sel].tolist(),
                                             (start_a[sel] + len_a[sel]).tolist(),
                                             sel.tolist())) for c, sel in per_cpu.items()},
                           outliers, slack_ns))
        steal = stolen
    pids, comms = vector.switches(np, log, programs) if cpus else ({}, {})
    vec_desc = [vector_desc(k) for k in log.vectors] + [vector_desc("unknown")]
    names = {vector.IRQ: {}, vector.PREEMPT: {}}     # kind -> {name: number over all CPUs}
    number, plans, traced = len(nt), [], 0
    fast_senders = []       # (outlier, the record of its IPI's vector entry)
    nohz = log.tick_states()[0]
    tick_vecs = [k for k, d in enumerate(vec_desc) if d[0] == C.TICK]
    for c in cpus:
        sel = per_cpu[c]
        outs = np.stack([start_a[sel], start_a[sel] + len_a[sel], sel], axis=1)
        w = vector.plan(np, log, c, outs, slack_ns, LOOKBACK_EVENTS, LOOKBACK_NS,
                        ENTRY_ALLOWANCE_NS, len(log.vectors), steal, pids.get(c), comms)
        if c in nohz:       # its ticks are named by the walker (Walker._nohz_tick)
            kind = w.code & ~vector.KIND
            w.fast &= ~((kind == vector.TICK) | (kind == vector.VEC) &
                        np.isin(w.code & vector.KIND, tick_vecs))
        for kind, local in ((vector.IRQ, w.irq_names), (vector.PREEMPT, w.task_names)):
            if local:           # one number per name over all CPUs
                ids = np.array([names[kind].setdefault(nm, len(names[kind])) for nm in local])
                sel = w.fast & (w.code & ~vector.KIND == kind)
                w.code[sel] = kind | ids[w.code[sel] & vector.KIND]
        plans.append((number, c, w))
        f = np.flatnonzero(w.fast)
        items.append((number + f, w.oi[f], w.code[f], w.traced[f]))
        for k in f[w.sender[f] >= 0].tolist():      # IPIs whose senders were seen
            fast_senders.append((int(w.oi[k]), int(w.sender[k])))
        slow = np.flatnonzero(~w.fast)
        if len(slow):
            traced += _walk_slow(np, log, c, w, slow, number, pids.get(c), comms, throttled,
                                 charge)
        number += len(w.oi)
    num, oi, code, got = (np.concatenate(x) for x in zip(*items))
    traced += int(got.sum())
    length, start = len_a[oi], start_a[oi]
    no_event = (host_steal.UNMEASURED, host_steal.HOST, host_steal.OTHER)

    listed = {kind: list(v) for kind, v in names.items()}

    def key_of(cd):
        """The cause of a code."""
        if cd == vector.NOT_TRACED:
            return NOT_TRACED + (None,)
        return vector.key(cd, vec_desc, listed, softirq_name, no_event) + (None,)

    def chain_of(j):
        """The chain of fast outlier j (walked again, alone)."""
        cd = int(code[j])
        if cd & ~vector.KIND in (vector.OTHER, vector.NO_EVENT, vector.NOT_TRACED):
            return "%s: %s" % key_of(cd)[:2]
        at = max(k for k in range(len(plans)) if plans[k][0] <= num[j])
        base, c, w = plans[at]
        k = int(num[j]) - base
        walker = Walker(log, c, pids.get(c), comms, log.arrays(c)[2], throttled=throttled)
        lo, hi = int(w.lo[k]), int(w.hi[k])
        walker.walk(int(w.s[k]), int(w.i1[k]), lo)
        return format_chain(walker.pick(lo, hi, int(length[j]))[0], hi)

    causes, worst, main_of = T.causes, T.worst, T.main_of
    if fast_senders:
        code_of = dict(zip(oi.tolist(), code.tolist()))
        for o, rec in fast_senders:
            T.note_sender(key_of(code_of[o]), ev.ipi_sender(log.event(rec), log.symbol),
                          int(len_a[o]))
    codes, inv = np.unique(code, return_inverse=True)
    inv = inv.reshape(-1)
    cats = [key_of(cd)[0] for cd in codes.tolist()]
    for j, u in zip(oi.tolist(), inv.tolist()):
        main_of[j] = cats[u]
    srt = np.lexsort((num, -length, inv))      # per cause: longest, then first taken
    bounds = np.searchsorted(inv[srt], np.arange(len(codes) + 1))
    for u, cd in enumerate(codes.tolist()):
        g = srt[bounds[u]:bounds[u + 1]]
        k = key_of(cd)
        lens = length[g].tolist()
        if type(k[1]) is C.Task:
            task, k = k[1], fold_task(k)
        else:
            task = None
        c = causes.get(k)
        if c is None:
            c = causes[k] = [[], -1, "", 0, {}, -1, {}]
        c[0].extend(lens)
        c[3] += len(g)
        if task is not None:
            w = c[6].setdefault(task, [0, 0])
            w[0] += len(lens)
            w[1] += sum(lens)
        j = g[0]
        if length[j] > c[1] or (length[j] == c[1] and num[j] < c[5]):
            c[1], c[2], c[5] = int(length[j]), chain_of(j), int(num[j])
    for j in np.lexsort((num, start, -length))[:top].tolist():
        rank = (int(length[j]), -int(start[j]), -int(num[j]))
        if len(worst) < top or rank > worst[0][:3]:
            cd = int(code[j])
            item = rank + (int(cpu_a[oi[j]]), key_of(cd), chain_of(j), int(got[j]), None)
            if len(worst) < top:
                heapq.heappush(worst, item)
            else:
                heapq.heapreplace(worst, item)
    return traced, [len(nt), int(len_a[nt].sum())]


def _walk_slow(np, log, cpu, w, slow, number, probe_pid, comms, throttled, charge):
    """The walker over @cpu's windows @slow (positions in w), charged as they come;
    the traced ns. Between them, the simple windows changed only what it is told
    here: a restart forgets that the probe waits, and the irq names seen."""
    recs, ts, idx = log.arrays(cpu)
    T = recs["type"][idx]
    irq_at = np.flatnonzero(T == ev.IRQ_ENTRY)
    irq_a = recs["a"][idx[irq_at]]
    s_all, i1_all = w.s, w.i1

    def irq_name(irq, j):
        """The name at the last irq entry walked before j (fast windows' too)."""
        for p in irq_at[(irq_a == irq) & (irq_at < j)][::-1].tolist():
            k = int(s_all.searchsorted(p, "right")) - 1
            if k >= 0 and p < i1_all[k]:
                e = log.event(int(idx[p]))
                return "%d %s" % (e.a, e.text)
        return None

    walker = Walker(log, cpu, probe_pid, comms, idx, irq_name, throttled)
    restarts = np.cumsum(w.restart).tolist()
    cols = [x.tolist() for x in (w.begin, w.hi, w.lo, w.i0, w.i1, w.prev_hi, w.back, w.s,
                                 w.oi, w.fresh, w.restart)]
    begin, hi, lo, i0, i1, prev_hi, back, s, oi, fresh, restart = cols
    n, last, traced = len(ts), -1, 0
    for k in slow.tolist():
        if last >= 0 and restarts[k - 1] > restarts[last]:
            walker.blocked = False
        last = k
        restart_at = None
        if restart[k]:
            restart_at = int(ts[back[k]]) if back[k] < n else lo[k]
        win = (begin[k], hi[k], lo[k], i0[k], i1[k],
               prev_hi[k] if fresh[k] and k else None, restart_at, s[k])
        traced += charge(walker, cpu, win, oi[k], number + k)
    return traced


def _as_array(np, outliers):
    """The outliers (rows, or an (n, 3) uint64 array) as an (n, 3) int64 array;
    None for none, or when a value does not fit."""
    if isinstance(outliers, list):
        try:
            arr = np.array(outliers, dtype=np.int64).reshape(-1, 3)
        except (OverflowError, ValueError, TypeError):
            return None
    elif len(outliers) and outliers.max() < 1 << 63:
        arr = outliers.astype(np.int64)
    else:
        return None
    return arr if len(arr) and arr.min() >= 0 else None


class _Rows:
    """An (n, 3) outlier array read as rows of Python ints, one at a time."""

    def __init__(self, arr):
        self.arr = arr

    def __len__(self):
        return len(self.arr)

    def __getitem__(self, i):
        return tuple(self.arr[i].tolist())


def _bookkeeping(ts, outs, slack_ns):
    """Per window (begin, hi, i) of one CPU's sorted outs, what the walker does
    (the module docstring's rule 1): (begin, hi, lo, i0, i1, settle_at,
    restart_at, s): the window [lo, hi], its events [i0, i1) in the CPU's time
    order (ts), where to settle what is still open (None: the window overlaps
    the one before, whose state goes on), where to restart the walk's state
    afresh (None: it goes on) and the event the walk starts at."""
    bisect_left, bisect_right = bisect.bisect_left, bisect.bisect_right
    pos, prev_hi, i0 = 0, None, 0
    for begin, hi, _ in outs:
        lo = begin - slack_ns
        settle_at = prev_hi if prev_hi is not None and lo > prev_hi else None
        prev_hi = max(hi, prev_hi or 0)
        i0 = bisect_left(ts, lo, i0)
        i1 = bisect_right(ts, hi, i0)
        restart_at, s = None, pos
        if pos < i0:
            back = max(i0 - LOOKBACK_EVENTS, bisect_left(ts, lo - LOOKBACK_NS, pos, i0))
            if pos < back:
                restart_at, s = (ts[back] if back < len(ts) else lo), back
        pos = max(s, i1)
        yield begin, hi, lo, i0, i1, settle_at, restart_at, s


def _stolen(log, copies, outliers, slack_ns):
    """{(cpu, start): host steal ns} of the outliers (steal.assign on each CPU an
    outlier was searched on; the largest of its CPUs, the least the host delayed
    it), {} where the log did not measure it (then .get() gives None)."""
    if host_steal.unmeasured(log.meta):
        return {}
    readings, stolen = log.steal_readings(), {}
    for c, outs in copies.items():
        outs = sorted(outs)
        got = host_steal.assign(readings.get(c, []), [(s - slack_ns, s + n) for s, n, _ in outs])
        for (_, _, i), g in zip(outs, got):
            key = outliers[i][:2]
            stolen[key] = max(stolen.get(key, 0), g)
    return stolen

def fold_task(key):
    """A cause key with its Task name (one task) as the name of its cause (every
    task of that comm): (category, comm, side)."""
    return (key[0], str(key[1]), key[2]) if type(key[1]) is C.Task else key


def outlier_part(key, ns, phase, task=None):
    """One part of an outlier: its cause, the time charged, the task (pid and
    prio) of a task's cause and, for round trips and messages, the side and phase
    it sat in."""
    p = {"category": key[0], "name": str(key[1]), "ns": ns}
    if task is not None:
        p["pid"] = task.pid
        if task.prio is not None:
            p["prio"] = task.prio
    if key[2] is not None:
        p["side"] = key[2]
    if phase is not None:
        p["phase"] = phase
    return p


def per_outlier(main_of):
    """attribution.per_outlier: each outlier's main cause category, compactly: the
    categories in the order they first come, and one character per outlier in
    the order given (outliers.csv's), the category's place in that list written
    as a digit of CODES (0-9, then a-z, A-Z); None past len(CODES) categories."""
    table = {}
    for cat in dict.fromkeys(main_of):
        table[cat] = CODES[len(table)] if len(table) < len(CODES) else None
    if None in table.values():
        return None
    return {"categories": list(table), "main": "".join(map(table.__getitem__, main_of))}


def categories_of(attribution):
    """Each outlier's main category (in outliers.csv's order) from an attribution's
    per_outlier, or None where the attribution does not keep it (older results)."""
    p = attribution.get("per_outlier") if isinstance(attribution, dict) else None
    if not isinstance(p, dict) or not isinstance(p.get("main"), str):
        return None
    cats = p.get("categories")
    if not isinstance(cats, list) or not all(isinstance(c, str) for c in cats):
        return None
    try:
        return [cats[CODES.index(c)] for c in p["main"]]
    except (ValueError, IndexError, TypeError):
        return None


def report(runs, log, slack_ns, T, traced_total, not_traced, count, extra=None):
    """The attribution section from the Tallies @T: causes most time first, the
    worst outliers with their events, the tracer and the warnings; @extra:
    fields added (the budget of round trips, ...)."""
    causes, worst = T.causes, T.worst
    meta = log.meta
    total_ns = sum(sum(c[0]) for c in causes.values())
    duration_ns = measured_ns(runs)
    starts = [r["start_mono_ns"] for r in runs if r.get("start_mono_ns") is not None]
    probe_cpus = sorted({r["cpu"] for r in runs if r.get("cpu") is not None})
    unlogged = sum((r.get("outliers") or {}).get("dropped", 0) for r in runs)
    rows = []
    for (cat, name, side), (parts, _, chain, primary, phases, _, tasks) in causes.items():
        n, tot = len(parts), sum(parts)
        row = {
            "category": cat, "name": name, "count": n, "primary_count": primary,
            "total_ns": tot,
            "share": round(tot / total_ns, 6) if total_ns else 0.0,
            "p50_ns": _p50(parts), "max_ns": max(parts),
            "per_s": round(n / (duration_ns / 1e9), 3) if duration_ns else 0.0,
            "example_chain": chain}
        if side is not None:
            row["side"] = side
        if phases:
            row["phases"] = phases
        if tasks:
            row.update(task_fields(tasks, log.task_groups()))
        if T.senders.get((cat, name, side)):
            row["senders"] = sender_rows(T.senders[(cat, name, side)])
        rows.append(row)
    rows.sort(key=lambda r: (-r["total_ns"], -r["count"], r["category"], r["name"],
                             r.get("side") or ""))
    tracer = tracer_section(log)
    dropped = tracer["dropped"]
    worst_rows = []
    for length, neg_start, _, cpu, key, chain, traced, parts in sorted(
            worst, reverse=True, key=lambda w: w[:3]):
        start = -neg_start
        evs = log.window(cpu, start - slack_ns, start + length, WORST_EVENTS)
        lines = ["%+.1f us %s" % ((e.ts_ns - start) / 1e3, ev.describe(e, meta))
                 for e in evs[:WORST_EVENTS]]
        task = key[1] if type(key[1]) is C.Task else None
        row = {"cpu": cpu, "start_ns": start, "length_ns": length,
               "category": key[0], "name": str(key[1]), "chain": chain, "traced_ns": traced,
               "parts": parts or [outlier_part(key, length, None, task)], "events": lines}
        if key[2] is not None:
            row["side"] = key[2]
        worst_rows.append(row)
    warnings = tracer_warnings(log, dropped)
    each = per_outlier(T.main_of)
    if unlogged:
        warnings.append("%s counted but not logged (outliers.csv was full: raise "
                        "--max-outliers); they are not attributed" % counted(unlogged, "outlier"))
    if not_traced[0]:
        warnings.append("%s (%s) fall outside the trace (its time span or CPUs): charged "
                        "to 'not traced'" % (counted(not_traced[0], "outlier"),
                                             _fmt_ns(not_traced[1])))
    return {
        "method": {"slack_ns": slack_ns, "rule": RULE, "lookback_events": LOOKBACK_EVENTS,
                   "lookback_ns": LOOKBACK_NS},
        "tracer": tracer,
        "outliers": {"count": count, "total_ns": total_ns, "traced_ns": traced_total,
                     "unlogged": unlogged, "cpus": probe_cpus, "duration_ns": duration_ns,
                     "start_ns": min(starts) if starts else log.start_ns},
        "causes": rows,
        **(extra or {}),
        "worst": worst_rows,
        **({"per_outlier": each} if each else {}),
        "warnings": warnings,
    }


MAX_TASKS_LISTED = 32     # a task cause's tasks listed in result.json, most time first
MAX_SENDERS_LISTED = 16   # an IPI cause's senders listed, most time first


def sender_rows(senders):
    """An IPI cause's "senders": [{sender, count, total_ns}] most time first
    (at most MAX_SENDERS_LISTED), each the text events.ipi_sender gives:
    'java (pid 812, CPU 0) flush_tlb_func'. @senders {text: [count, ns]}."""
    rows = sorted(({"sender": s, "count": c, "total_ns": ns} for s, (c, ns) in senders.items()),
                  key=lambda r: (-r["total_ns"], r["sender"]))
    return rows[:MAX_SENDERS_LISTED]


def task_fields(tasks, groups=None):
    """A task cause's fields beside its name (one cause per comm): "pids" (how
    many tasks of that comm), "tasks": [{pid, prio, count, total_ns}] most time
    first (at most MAX_TASKS_LISTED), "prio" the highest priority among them;
    where the tasks' cgroups show containers (@groups, {pid: label}:
    EventLog.task_groups), each task's "container" and the cause's
    "containers", every one of its tasks' in order. @tasks: {Task: [count, ns]}."""
    rows = sorted(({"pid": t.pid, "prio": t.prio, "count": c, "total_ns": ns}
                   for t, (c, ns) in tasks.items()), key=lambda r: (-r["total_ns"], r["pid"]))
    by_pid = {}
    for r in rows:
        w = by_pid.get(r["pid"])
        if w is None:
            by_pid[r["pid"]] = dict(r)
        else:                   # one pid at two priorities (it changed its policy)
            w["count"] += r["count"]
            w["total_ns"] += r["total_ns"]
            if r["prio"] is not None and (w["prio"] is None or r["prio"] < w["prio"]):
                w["prio"] = r["prio"]
    rows = sorted(by_pid.values(), key=lambda r: (-r["total_ns"], r["pid"]))
    for r in rows:
        if (groups or {}).get(r["pid"]):
            r["container"] = groups[r["pid"]]
    prios = [r["prio"] for r in rows if r["prio"] is not None]
    out = {"pids": len(rows), "tasks": rows[:MAX_TASKS_LISTED]}
    boxes = sorted({r["container"] for r in rows if r.get("container")})
    if boxes:
        out["containers"] = boxes
    if prios:
        out["prio"] = min(prios)
    return out


def tracer_section(log):
    """attribution.tracer: what the tracer recorded, dropped and cost."""
    meta = log.meta
    events_meta = meta.get("events") if isinstance(meta.get("events"), dict) else {}
    tracer = {
        "backend": meta.get("backend", "unknown"), "events": log.records,
        "dropped": max(log.dropped, events_meta.get("dropped") or 0),
        "per_type": events_meta.get("per_type") or log.type_counts(),
        "dropped_per_type": events_meta.get("dropped_per_type") or {},
        "cpus": sorted(meta.get("cpus") or log.cpu_ts), "start_ns": log.start_ns,
        "end_ns": log.end_ns, "complete": log.complete, "steal": host_steal.status(meta)}
    if events_meta.get("log_full") is True:     # the log stopped at its bound: end_ns
        tracer["log_full"] = True
    cost = tracer_cost(meta)
    if cost:
        tracer["cost"] = cost
    return tracer


def tracer_warnings(log, dropped):
    """The warnings every attribution gives about its event log."""
    out = []
    if dropped:
        out.append("the tracer dropped %d events: causes may be missing for some "
                   "outliers" % dropped)
    if not log.complete:
        out.append("the tracer did not finish its log (killed?): %d records were read "
                   "from the file size" % log.records)
    breaks = log.switch_breaks()
    if breaks:
        n = sum(breaks.values())
        out.append("%d context switch%s missing from the log (%s; a switch whose prev "
                   "is not the task the switch before put on)%s; who ran in between "
                   "is not known" % (
                       n, " is" if n == 1 else "es are",
                       ", ".join("CPU %d: %d" % (c, k) for c, k in sorted(breaks.items())),
                       "" if dropped else ", and the tracer dropped none: the kernel "
                       "made them without a sched_switch event"))
    return out


def tracer_cost(meta):
    """What tracing cost, from trace.json: the tracer process's CPU time to start
    and while tracing and the CPUs it ran on, the BPF programs' run time in the
    kernel (eBPF: every run counted, timed in each by the kernel's statistics or
    in a sample by the programs, kernel_timed_runs saying how many) and the
    conversion after the run (perf); {} for a log that does not say."""
    cost = {k: v for k, v in (meta.get("cost") or {}).items()
            if k in ("setup_cpu_ns", "tracing_cpu_ns", "convert_ns") and isinstance(v, int)}
    procs = (meta.get("cost") or {}).get("process_cpus")
    if isinstance(meta.get("consumer_cpu"), int) and meta["consumer_cpu"] >= 0:
        procs = str(meta["consumer_cpu"])
    if cost and isinstance(procs, str):
        cost["process_cpus"] = procs
    progs = meta.get("programs")
    if isinstance(progs, dict) and progs:
        cost["kernel_ns"] = sum(p.get("run_time_ns") or 0 for p in progs.values())
        cost["kernel_runs"] = sum(p.get("run_count") or 0 for p in progs.values())
        if meta.get("prog_stats") == "sampled":
            cost["kernel_timed_runs"] = sum(p.get("timed_runs") or 0 for p in progs.values())
    return cost


def difference(a, b):
    """What @a's runs add to @b's per cause (jtr send: the send runs against the
    null runs): per cause (category and name), each side's count, total_ns and
    per_s, and the deltas a - b; the largest change in time first. The runs of
    the two kinds last about as long (the null loop is matched to the send
    call's mean), so counts compare; per_s compares when they do not."""
    ka, kb = a.get("run_kind", "a"), b.get("run_kind", "b")
    rows = {}
    for which, att in ((ka, a), (kb, b)):
        for c in att["causes"]:
            r = rows.setdefault((c["category"], c["name"]), {})
            r[which] = {"count": c["count"], "total_ns": c["total_ns"], "per_s": c["per_s"]}
    out = []
    for (cat, name), r in rows.items():
        x, y = (r.get(k, {"count": 0, "total_ns": 0, "per_s": 0.0}) for k in (ka, kb))
        out.append({"category": cat, "name": name, ka: x, kb: y,
                    "count_delta": x["count"] - y["count"],
                    "total_ns_delta": x["total_ns"] - y["total_ns"],
                    "per_s_delta": round(x["per_s"] - y["per_s"], 3)})
    out.sort(key=lambda r: (-abs(r["total_ns_delta"]), -abs(r["count_delta"]),
                            r["category"], r["name"]))
    return out
