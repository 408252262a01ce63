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
from ..system.memory import paused_gc
from ..system.numeric import numpy_or_none
from ..trace import events as ev
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

IPI_KINDS = frozenset(("reschedule", "call_function", "call_function_single", "irq_work"))
NO_EVENT = host_steal.UNMEASURED     # split by the host's steal where the log measured it
NOT_TRACED = ("not traced", "outside the trace")
# a message sent late because earlier round trips held the sender (the schedule's
# backlog, coordinated omission): the time before its send call that no event explains
BACKLOG = ("backlog", "earlier messages held the sender", "ping")
OTHER = "other events"
_TICK = ("timer tick", "local timer", "local timer")
_TIMER_SOFTIRQ = ("softirq", "TIMER", "softirq TIMER")
# exits of entry/exit pairs (the entry's type is one less), and events that change no state
_EXITS = frozenset((ev.IRQ_EXIT, ev.SOFTIRQ_EXIT, ev.VEC_EXIT, ev.WQ_END, ev.HRTIMER_EXIT,
                    ev.TIMER_EXIT))
_PASSIVE = frozenset((ev.SOFTIRQ_RAISE, ev.WAKEUP, ev.WAKING, ev.MIGRATE, ev.STEAL))

# a sched_switch record from its cpu field on: cpu, type, flags, a (prev_pid |
# next_pid << 32), b (skipped), prev_comm, next_comm
_SWITCH_FIELDS = struct.Struct("<HBBQ8x%ds%ds" % (ev.COMM_LEN, ev.COMM_LEN))
_REC, _HDR = ev.RECORD_SIZE, ev.HEADER_SIZE
_TYPE, _RAW = ev.TYPE_OFFSET, ev.RAW_OFFSET


class _Episode:
    """One interruption found in the events: what, when, and the chain of links."""
    __slots__ = ("category", "name", "begin", "end", "known", "links", "tasks", "switch_ns")

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
        links.append("preempted by %s for %s" % (", ".join(who),
                                                 _fmt_ns(max(0, end - ep.switch_ns))))
        return ARROW.join(links)
    return ARROW.join(_shorten(links, MAX_LINKS, "links"))


def _add_item(task, item):
    """Name something a preempting task ran, once (at most MAX_LINKS of them)."""
    if item not in task[3] and len(task[3]) < MAX_LINKS:
        task[3].append(item)


def _first_ts(data, index):
    """The time of a CPU's first record (0 for none)."""
    return ev.HEAD.unpack_from(data, _HDR + _REC * int(index[0]))[0] if len(index) else 0


def vector_desc(kind):
    """Category, name and chain link of an irq_vectors kind."""
    if kind == "local_timer":
        return _TICK
    if kind in IPI_KINDS:
        return "IPI", kind, "IPI " + kind
    return "hardirq", kind, "hardirq " + kind


class _Walker:
    """Walks one CPU's events in time order, keeping the nesting state between windows."""

    def __init__(self, log, cpu, probe_pid, comms=None, index=None, irq_name=None):
        """A walker over cpu's events in log; the probe's pid and pid -> comm, if
        known. index: the CPU's record numbers in time order (log.cpu_index's by
        default); irq_name(irq, j): the action of the irq whose exit at j has no
        entry in the walk (by default the last entry walked)."""
        self.data = log.data
        self.index = log.cpu_index.get(cpu, []) if index is None else index
        self.irq_name = irq_name
        self.j = 0
        self.symbols = log.symbols
        self.vectors = log.vectors
        self.probe_pid = probe_pid
        self.comms = comms or {}
        self.irq_names = {}
        self.timer_links = {}
        self.vec_desc = [vector_desc(k) for k in self.vectors] + [vector_desc("unknown")]
        self.restart(_first_ts(self.data, self.index))

    def restart(self, origin_ns):
        """Forget all state: the walk starts afresh at origin_ns."""
        self.origin = origin_ns
        self.stack = []         # frames: [group, key, episode, own, is_task]
        self.preempt = None     # the open preemption episode
        self.away = None        # pid of the task it preempted
        self.last_irq = None    # last closed irq-like episode since the last switch
        self.episodes = []      # recent episodes, pruned per window
        self.blocked = False    # the probe's task waits (a blocking receive)

    def settle(self, at_ns):
        """The probe ran from at_ns: close whatever is still open there."""
        for fr in self.stack:
            if fr[3] and fr[2].end is None:
                fr[2].end = at_ns
        self.stack = []
        if self.preempt is not None:
            self.preempt.end = at_ns
            self.preempt = None
        self.last_irq = None
        self.origin = at_ns

    def _sym(self, addr):
        """Kernel symbol or hex address."""
        key = "0x%x" % addr
        return self.symbols.get(key, key)

    def _new(self, category, name, begin, link, known=True):
        """Start an episode and remember it."""
        ep = _Episode(category, name, begin, link, known)
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
            return "hardirq", name, "hardirq " + name
        if group == SOFTIRQ_ENTRY:
            name = softirq_name(key)
            return "softirq", name, "softirq " + name
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
        if self.preempt is not None:
            if next_pid == self.away or (next_pid == 0 and self.blocked):
                self.preempt.end = ts
                self.preempt = None
                if next_pid == self.away:
                    self.blocked = False
                return
            tasks = self.preempt.tasks
            if tasks[-1][1] != next_pid:
                tasks.append([ev.cstr(raw[16:]) or self.comms.get(next_pid), next_pid,
                              (b >> 16) & 0xffff, []])
            return
        if self.probe_pid is not None:
            if next_pid == self.probe_pid:
                self.blocked = False
            if prev_pid != self.probe_pid:
                # while the probe waits, a task that takes the CPU delays its wake-up
                if not self.blocked or next_pid in (0, self.probe_pid):
                    return
                prev_pid = self.probe_pid
            elif not flags & 1:
                self.blocked = True     # it waits for a message: nothing took the CPU
                return
        elif ts < win_lo:
            return
        for fr in self.stack:   # no switch inside an interrupt: its exit was lost
            if fr[3] and fr[2].end is None:
                fr[2].end = ts
        self.stack = []
        comm, prio = ev.cstr(raw[16:]) or self.comms.get(next_pid), (b >> 16) & 0xffff
        name = ("%s (pid %d, prio %d)" % (comm, next_pid, prio) if comm else
                "pid %d (prio %d)" % (next_pid, prio))
        ep = _Episode("task preemption", name, ts, None)
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
        self.preempt, self.away = ep, prev_pid

    def walk(self, j0, j1, win_lo):
        """Process the CPU's events j0..j1-1 (positions in its time order)."""
        data, index, unpack = self.data, self.index, ev.HEAD.unpack_from
        # links: hrtimer functions by address, timer functions by ~address
        links, passive, exits, vec_desc = self.timer_links, _PASSIVE, _EXITS, self.vec_desc
        n_vec = len(self.vectors)
        stack, episodes = self.stack, self.episodes     # _switch() may replace the stack
        away = self.away if self.preempt is not None else None
        rows = index[j0:j1]
        if not isinstance(rows, list):
            rows = rows.tolist()        # a numpy index: its ints, once
        for j, row in enumerate(rows, j0):
            off = _HDR + _REC * row
            if data[off + _TYPE] in passive:
                continue
            ts, pid, _, t, flags, a, b = unpack(data, off)
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
                if stack:
                    self._interrupt(VEC_ENTRY, a, ts, cat, name, link)
                else:                   # the usual case, _interrupt() inline
                    ep = _Episode(cat, name, ts, link)
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
                name = "%d %s" % (a, ev.cstr(data[off + _RAW:off + _REC]))
                self.irq_names[a] = name
                self._interrupt(IRQ_ENTRY, a, ts, "hardirq", name, "hardirq " + name)
            elif t == SWITCH:
                self._switch(ts, a, b, flags, data[off + _RAW:off + _REC], win_lo)
                stack = self.stack
                away = self.away if self.preempt is not None else None
            elif t == WQ_START:
                self._work(ts, pid, a, "workqueue " + self._sym(b))
            elif t == NMI:
                sym = self._sym(a)
                ep = self._new("NMI", sym, ts - b, "NMI " + sym)
                ep.end = ts
            elif t == PF_USER or t == PF_KERNEL:
                kind = "user" if t == PF_USER else "kernel"
                ep = self._new("page fault", kind, ts, "page fault " + kind, known=False)
                ep.end = ts

    def _softirq(self, ts, vec, win_lo):
        """softirq entry: part of the irq before it, run by a preempting task, or alone."""
        name = softirq_name(vec)
        link = "softirq " + name
        stack, last = self.stack, self.last_irq
        if stack and not stack[-1][4]:
            ep = stack[-1][2]
            ep.links.append(link)
            stack.append([SOFTIRQ_ENTRY, vec, ep, False, False])
        elif last is not None and (last.end >= win_lo or ts < win_lo):
            last.links.append(link)
            stack.append([SOFTIRQ_ENTRY, vec, last, False, False])
        elif self.preempt is not None:
            _add_item(self.preempt.tasks[-1], link)
            stack.append([SOFTIRQ_ENTRY, vec, self.preempt, False, True])
        else:
            ep = self._new("softirq", name, ts, link)
            stack.append([SOFTIRQ_ENTRY, vec, ep, True, False])

    def _work(self, ts, pid, work, item):
        """workqueue_execute_start: an item of the preempting task (or of an unseen one)."""
        if self.preempt is not None:
            _add_item(self.preempt.tasks[-1], item)
            self.stack.append([WQ_START, work, self.preempt, False, True])
            return
        comm = self.comms.get(pid)    # named by its switches elsewhere in the log
        ep = self._new("task preemption", "%s (pid %d)" % (comm, pid) if comm else
                       "pid %d" % pid, ts, None)
        ep.links = []
        ep.tasks = [[comm, pid, None, [item]]]
        ep.switch_ns = ts
        self.stack.append([WQ_START, work, ep, True, True])

    def pick(self, lo, hi, length):
        """The primary episode of the window [lo, hi], the traced time and every
        episode in the window with its clipped duration: (None, 0, []) if none.

        Forgets the episodes that ended before lo: later windows start later.
        """
        keep, best, best_d, spans, found = [], None, -1, [], []
        for e in self.episodes:
            end = e.end
            if end is not None and end < lo:
                continue
            keep.append(e)
            if e.begin > hi:
                continue
            b = e.begin if e.begin > lo else lo
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
            traced = _union_ns(spans)
        return best, traced if traced < length else length, found


def _union_ns(spans):
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


def softirq_name(vec):
    """HI, TIMER, ... RCU for vectors 0..9."""
    return ev.SOFTIRQ_NAMES[vec] if vec < len(ev.SOFTIRQ_NAMES) else "vec %d" % vec


def scan_switches(log, programs=None):
    """From every sched_switch: the probe's pid per CPU, and the comm of every pid seen.

    The probe is the task most often switched out while runnable on that CPU (it
    spins and never blocks; the idle task, pid 0, is left out); where @programs
    ({cpu: comm}) names the program measuring on a CPU (jtr-pong, which may
    block), the task of that comm most often switched out there. Comms come from
    prev_comm and next_comm, so a task whose next_comm was not recorded is still
    named once it was switched out.
    """
    body = memoryview(log.data)[_HDR:_HDR + log.records * _REC]
    types = bytes(body[_TYPE::_REC])
    counts, comms, named = {}, {}, {}
    find, data, unpack = types.find, log.data, _SWITCH_FIELDS.unpack_from
    i = find(SWITCH)
    while i >= 0:
        cpu, _, flags, prev_next, prev_comm, next_comm = unpack(
            data, _HDR + i * _REC + ev.CPU_OFFSET)
        prev_pid, next_pid = prev_next & 0xffffffff, prev_next >> 32
        if flags & 1 and prev_pid:      # the idle task is always runnable, never the probe
            per = counts.setdefault(cpu, {})
            per[prev_pid] = per.get(prev_pid, 0) + 1
        if programs and cpu in programs and ev.cstr(prev_comm) == programs[cpu]:
            per = named.setdefault(cpu, {})
            per[prev_pid] = per.get(prev_pid, 0) + 1
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
    return {cpu: max(per, key=per.get) for cpu, per in counts.items()}, names


def _p50(values):
    """The median (lower middle) of a non-empty list."""
    values.sort()
    return values[(len(values) - 1) // 2]


def attribute(result, outliers, log, slack_ns=DEFAULT_SLACK_NS, top=20, each=None,
              sides=None, stamps=None, programs=None):
    """The attribution section: every outlier charged to one cause (module docstring).

    each, if given, is called once per outlier with (cpu, start_ns, length_ns,
    parts, pids, works): parts as [(category, name, ns)] (what the outlier's time
    was charged to, as worst[].parts), pids the tasks of its charged
    task-preemption episodes (every task of their chains), works the workqueue
    functions those tasks ran. The cross-check and jtr advise use it.

    sides ({side: [cpus]}, e.g. {"ping": [1], "pong": [0]}): an outlier is a
    round trip or a message that crossed every one of those CPUs: its window is
    searched on each of them and every cause says on which side it sat (and,
    from @stamps, in which phase; see PHASES). stamps: {column: [ns per
    outlier]} (sent_ns, peer_rx_ns, peer_tx_ns of ping's log; 0: not known).
    programs: {cpu: comm} of the program measuring on a CPU that may block.
    """
    with paused_gc():
        return _attribute(result, outliers, log, slack_ns, top, each, sides, stamps or {},
                          programs)


def _preempting(eps):
    """The pids of the tasks in the task-preemption episodes among eps."""
    return [t[1] for e in eps if e is not None and e.tasks for t in e.tasks]


WORK = "workqueue "


def _works(eps):
    """The workqueue functions the preempting tasks of eps ran ('vmstat_update')."""
    return sorted({i[len(WORK):] for e in eps if e is not None and e.tasks
                   for t in e.tasks for i in t[3] if i.startswith(WORK)})


# the phases of a round trip and of a message, in order, and the side whose
# delay each one is (docs/attribution.md): ping's send call (from the intended
# time), the way out (ping's CPU while the message goes), pong's wake-up and
# reflection, the way back (pong's CPU after its send), the reply's wake-up;
# a message: the publisher's send, the subscriber's receive
PHASES = (("send", "ping"), ("out", "ping"), ("reflect", "pong"), ("back", "pong"),
          ("reply", "ping"), ("publish", "pub"), ("receive", "sub"))


def phase_of(side, t, sent, peer_tx):
    """The phase an episode of @side that began at @t sat in (None: not known)."""
    if side == "ping":
        if sent and t < sent:
            return "send"
        if peer_tx:
            return "out" if t < peer_tx else "reply"
        return None
    if side == "pong":
        return "back" if peer_tx and t >= peer_tx else "reflect"
    return {"pub": "publish", "sub": "receive"}.get(side)


def measured_phases(start, length, sent, peer_rx, peer_tx):
    """{phase: ns} a round trip's stamps measure: the send call (from the intended
    time), the way out with pong's wake-up (to pong's receive), the reflection,
    the way back with the reply's wake-up; {} without stamps."""
    end = start + length
    out = {"send": sent - start} if sent and start <= sent <= end else {}
    if out and start <= peer_rx <= peer_tx <= end and peer_rx:
        # over loopback pong may have the message before ping's send call returns
        out.update({"out": max(0, peer_rx - sent), "reflect": peer_tx - peer_rx,
                    "reply": end - peer_tx})
    return out


def _attribute(result, outliers, log, slack_ns, top, each, sides, stamps, programs):
    """attribute() with the garbage collector paused."""
    if not isinstance(slack_ns, int) or slack_ns < 0:
        raise UsageError("slack %r: give a whole number of ns >= 0" % (slack_ns,))
    if not isinstance(top, int) or top < 0:
        raise UsageError("top %r: give a whole number >= 0" % (top,))
    runs = result.get("runs", [])
    meta = log.meta
    traced_cpus = set(meta.get("cpus") or log.cpu_ts)
    t_lo, t_hi = log.start_ns, log.end_ns
    side_of = {}
    for side, cpus in (sides or {}).items():
        for c in cpus:
            side_of.setdefault(c, side)
    every_cpu = sorted(side_of)
    send_col, sent_col, rx_col, tx_col = (stamps.get(k) for k in
                                          ("send_ns", "sent_ns", "peer_rx_ns", "peer_tx_ns"))
    # causes: (category, name, side) -> [parts_ns, longest outlier, its chain,
    # primary count, {phase: ns}]
    causes, worst = {}, []
    traced_total = 0
    budget = {}         # phase -> [measured ns, {cause key: charged ns}]
    # the outlier being charged, numbered in the order they are taken: ties (in
    # length, then start) go to the first, in the worst list and in a cause's chain
    proc = [-1]
    # each outlier's main category, in the order given (outliers.csv's); at[0]: the
    # outlier being charged, as an index into it
    main_of, at_i = [None] * len(outliers), [0]

    def tally(key, part_ns, primary, length, chain_fn, phase=None):
        """Charge part_ns of an outlier to a cause; keep the chain of its longest."""
        c = causes.get(key)
        if c is None:
            c = causes[key] = [[], -1, "", 0, {}, -1]
        c[0].append(part_ns)
        if primary:
            c[3] += 1
        if phase is not None:
            c[4][phase] = c[4].get(phase, 0) + part_ns
            b = budget.setdefault(phase, [0, {}])
            b[1][key] = b[1].get(key, 0) + part_ns
        if length > c[1]:
            c[1], c[2], c[5] = length, chain_fn(), proc[0]

    def note_worst(cpu, start, length, key, chain_fn, traced, parts):
        """Keep the outlier if it is among the top longest."""
        rank = (length, -start, -proc[0])
        if top > 0 and (len(worst) < top or rank > worst[0][:3]):
            item = rank + (cpu, key, chain_fn(), traced, parts)
            if len(worst) < top:
                heapq.heappush(worst, item)
            else:
                heapq.heapreplace(worst, item)

    def charge(key, cpu, start, length, ep, hi, traced, phase=None):
        """An outlier with one cause for all of it."""
        main_of[at_i[0]] = key[0]
        if each is not None:
            each(cpu, start, length, [(key[0], key[1], length)], _preempting((ep,)),
                 _works((ep,)))
        c = causes.get(key)
        if phase is None and c is not None and length <= c[1] and (top == 0 or (
                len(worst) == top and (length, -start, -proc[0]) <= worst[0][:3])):
            c[0].append(length)     # the usual case: no new chain to write
            c[3] += 1
            return

        def chain():
            return format_chain(ep, hi) if ep is not None else "%s: %s" % key[:2]
        tally(key, length, True, length, chain, phase)
        parts = None if phase is None else [_part(key, length, phase)]
        note_worst(cpu, start, length, key, chain, traced, parts)

    def charge_split(cpu, start, length, ep, found, hi, traced, st):
        """Share an outlier among the episodes in it: each other episode gets its
        own time, the primary the rest of the traced time plus the entry
        allowance, and what the kernel does not explain goes to 'no kernel event'
        (the hypervisor, SMI or hardware). @st: (sent, peer_tx, no-event side,
        no-event phase) of a round trip, or None."""
        key = (ep.category, ep.name, found_side[id(ep)])
        phases = {}
        if sides is not None:
            for e, _, b, _, side in found:
                phases.setdefault((e.category, e.name, side), phase_of(side, b, st[0], st[1]))
        if len(found) == 1 and traced + ENTRY_ALLOWANCE_NS >= length:
            return charge(key, cpu, start, length, ep, hi, traced, phases.get(key))
        kernel_ns = min(length, traced + ENTRY_ALLOWANCE_NS)
        share = {key: 0}
        pb, pe = next((b, end) for e, _, b, end, _ in found if e is ep)
        # episodes inside the primary's time (a tick while the preempting task
        # ran) took time from that task, not from the probe: not parts of their own
        apart = [(e, d, side) for e, d, b, end, side in found
                 if e is not ep and d > 0 and (b < pb or end > pe)]
        for e, d, side in apart:
            k = (e.category, e.name, side)
            if k != key:
                share[k] = share.get(k, 0) + d
        others = sum(share.values())
        if others > kernel_ns:          # overlapping episodes: scale them into the time
            for k in share:
                share[k] = share[k] * kernel_ns // others
            others = sum(share.values())
        share[key] = kernel_ns - others
        rest = length - kernel_ns
        no_event = NO_EVENT + ((st[2] if st else None),)
        late = min(rest, st[4]) if st else 0
        if late > 0:        # what the events leave of a late send: the earlier messages'
            share[BACKLOG] = late
            phases[BACKLOG] = "send"
            rest -= late
        if rest > 0:
            for k, ns in host_steal.split(stolen.get((cpu, start)), rest).items():
                share[k + no_event[2:]] = ns
                if st:
                    phases[k + no_event[2:]] = st[3]
        if len(share) == 1:
            return charge(key, cpu, start, length, ep, hi, traced, phases.get(key))
        main = max(share, key=lambda k: (share[k], k == key))

        memo = []

        def chain():
            # one text per outlier, however many parts ask for it; linear in the
            # episodes (an outlier can hold thousands: a flood of IPIs), and at most
            # MAX_EPISODES of them spelled out
            if memo:
                return memo[0]
            apart_ids = {id(a) for a, _, _ in apart}
            shown = [e for e, _, _, _, _ in found if e is ep or id(e) in apart_ids]
            texts = [format_chain(e, hi) for e in shown[:MAX_EPISODES]]
            if len(shown) > MAX_EPISODES:
                texts.append("%d more episodes" % (len(shown) - MAX_EPISODES))
            c = "; then ".join(texts)
            if main[0] == no_event[0]:
                c = "no kernel event for %s, with %s" % (_fmt_ns(rest), c)
            elif rest > 0:
                c = "%s, and no kernel event for %s" % (c, _fmt_ns(rest))
            memo.append(c)
            return c
        def charged():
            return [e for e in [ep] + [a for a, _, _ in apart]
                    if share.get((e.category, e.name, found_side[id(e)]))
                    or (e.category, e.name, found_side[id(e)]) == main]
        charge_parts(cpu, start, length, share, main, chain, traced, phases, charged)

    def charge_parts(cpu, start, length, share, main, chain, traced, phases, charged=None):
        """An outlier shared among causes: share {cause: ns}, main the primary."""
        main_of[at_i[0]] = main[0]
        parts = []
        for k, ns in share.items():
            if ns > 0 or k == main:
                tally(k, ns, k == main, length, chain, phases.get(k))
                parts.append(_part(k, ns, phases.get(k)))
        parts.sort(key=lambda p: -p["ns"])
        if each is not None:
            eps = charged() if charged else ()
            each(cpu, start, length, [(p["category"], p["name"], p["ns"]) for p in parts],
                 _preempting(eps), _works(eps))
        note_worst(cpu, start, length, main, chain, traced, parts)

    def charge_no_event(cpu, start, length, hi, st):
        """An outlier with no kernel event in its windows: what a late send owes to
        the earlier messages (backlog), the rest split by the host's steal where
        the log measured it (steal.split)."""
        side, phase = (st[2], st[3]) if st else (None, None)
        late = min(st[4], length) if st else 0
        share, phases = ({BACKLOG: late}, {BACKLOG: "send"}) if late else ({}, {})
        if length > late:
            for k, ns in host_steal.split(stolen.get((cpu, start)), length - late).items():
                share[k + (side,)], phases[k + (side,)] = ns, phase
        main = max(share, key=share.get)
        if len(share) == 1:
            return charge(main, cpu, start, length, None, hi, 0, phases[main])

        def chain():
            texts = ["sent %s late, behind earlier messages" % _fmt_ns(late)] if late else []
            if length > late:
                stole = share.get(host_steal.HOST + (side,))
                texts.append("no kernel event for %s%s" % (
                    _fmt_ns(length - late), ", of which host preemption (steal) %s"
                    % _fmt_ns(stole) if stole else ""))
            return "; ".join(texts)
        charge_parts(cpu, start, length, share, main, chain, 0, phases)

    phase_side = dict(PHASES)

    def settle(i, at):
        """Charge outlier @i from what its windows held on each CPU (@at); the
        time the kernel's events cover in it."""
        cpu, start, length = outliers[i]
        hi = start + length
        st = None
        if sides is not None:
            sent = sent_col[i] if sent_col else 0
            peer_tx = tx_col[i] if tx_col else 0
            measured = measured_phases(start, length, sent, rx_col[i] if rx_col else 0,
                                       peer_tx)
            for ph, ns in measured.items():
                budget.setdefault(ph, [0, {}])[0] += ns
            longest = max(measured, key=measured.get) if measured else None
            send = send_col[i] if send_col else 0
            late = send - start if start < send < hi else 0
            st = (sent, peer_tx, phase_side.get(longest), longest, late)
        if len(at) == 1:
            ep, traced, found, names, _ = at[0]
        else:
            found, spans, names, ep, best_d = [], [], [], None, -1
            for _, _, f, nm, _ in at:
                found += f
                names += nm or []
                for e, d, b, end, _ in f:
                    if d > best_d:
                        ep, best_d = e, d
                    if d > 0:
                        spans.append((b, end))
            traced = min(length, _union_ns(spans)) if spans else 0
        if ep is not None:
            charge_split(cpu, start, length, ep, found, hi, traced, st)
        elif names:
            charge((OTHER, ", ".join(sorted(set(names))), side_of.get(cpu) if sides else None),
                   cpu, start, length, None, hi, 0)
        else:
            charge_no_event(cpu, start, length, hi, st)
        return traced

    def window(walker, cpu, side, win, i):
        """Walk one outlier's window on one CPU (win: the walker's bookkeeping of
        it, see _bookkeeping) and note what was found there."""
        begin, hi, lo, i0, i1, settle_at, restart_at, s = win
        if settle_at is not None:
            if walker.stack or walker.preempt is not None:
                walker.settle(settle_at)
            else:
                walker.origin, walker.last_irq = settle_at, None
        if restart_at is not None:   # past the CPU's last event: start afresh at the outlier
            walker.restart(restart_at)
        if i1 > s:
            walker.walk(s, i1, lo)
        ep, traced, found = walker.pick(lo, hi, outliers[i][2])
        for e, _, _, _ in found:
            found_side[id(e)] = side
        names = None
        if ep is None and i1 > i0:
            idx = walker.index
            names = sorted({ev.TYPE_NAMES.get(log.data[_HDR + _TYPE + _REC * idx[j]],
                                              "type ?") for j in range(i0, i1)}
                           - {ev.TYPE_NAMES[ev.STEAL]})
        return ep, traced, [f + (side,) for f in found], names, cpu

    def charge_window(i, at, number=None):
        """Charge outlier @i, found as @at on its CPU(s) (the @number'th taken,
        or the next): the traced time."""
        proc[0] = proc[0] + 1 if number is None else number
        at_i[0] = i
        return settle(i, at)

    found_side = {}     # id(episode) -> its side
    stolen = {}         # (cpu, start) -> host steal ns, where measured (_stolen)
    np = numpy_or_none() if sides is None and each is None else None
    arr = _as_array(np, outliers) if np is not None else None
    if arr is not None and log.arrays(None) is not None:
        if not isinstance(outliers, list):
            outliers = _Rows(arr)
        fast_traced, not_traced = _attribute_fast(
            np, arr, outliers, log, slack_ns, top, traced_cpus, programs, causes, worst,
            stolen, lambda i, at, number: charge_window(i, [at], number), window, main_of)
        return _report(runs, log, slack_ns, causes, worst, traced_total + fast_traced,
                       not_traced, len(outliers), budget, main_of)

    if not isinstance(outliers, list):      # an array (OutlierLog.outliers())
        outliers = list(map(tuple, outliers.tolist()))
    # every outlier is searched on its own CPU and, with sides, on every side's CPU
    copies, not_traced, n = {}, [0, 0], len(outliers)
    for i, (cpu, start, length) in enumerate(outliers):
        where = [cpu] + [c for c in every_cpu if c != cpu]
        seen = [c for c in where if c in traced_cpus]
        if not seen or start < t_lo or start > t_hi:
            not_traced[0] += 1
            not_traced[1] += length
            side = side_of.get(cpu) if sides else None
            proc[0] += 1
            at_i[0] = i
            charge(NOT_TRACED + (side,), cpu, start, length, None, 0, 0)
            continue
        # the other end cannot delay a message before it was sent: its window
        # starts at the send call (ping's send_ns), not at the intended time
        begin = send_col[i] if send_col and start < send_col[i] < start + length else start
        for c in seen:
            b = begin if side_of.get(c) != side_of.get(cpu) else start
            copies.setdefault(c, []).append((b, start + length, i))
    found_at = {}       # outlier -> [(ep, traced, found with sides, events seen, cpu)]
    pids, comms = scan_switches(log, programs) if copies else ({}, {})
    stolen.update(_stolen(log, copies, outliers, slack_ns))
    for cpu, outs in copies.items():
        outs.sort()
        side = side_of.get(cpu) if sides else None
        walker = _Walker(log, cpu, pids.get(cpu), comms)
        for win, (_, _, i) in zip(_bookkeeping(log.cpu_ts.get(cpu, []), outs, slack_ns), outs):
            at = window(walker, cpu, side, win, i)
            if sides is None:       # one CPU an outlier: charge it now, as it comes
                traced_total += charge_window(i, [at])
            else:
                found_at.setdefault(i, []).append(at)
    for i in sorted(found_at):
        traced_total += charge_window(i, found_at[i])
    return _report(runs, log, slack_ns, causes, worst, traced_total, not_traced, n, budget,
                   main_of)


def _attribute_fast(np, arr, outliers, log, slack_ns, top, traced_cpus, programs, causes,
                    worst, stolen, charge, window, main_of):
    """_attribute with numpy, for one CPU an outlier (no sides, no each): the
    simple windows (vector.plan) charged here into @causes and @worst (the
    walker's tallies, with the same ties), the others through charge(i, found,
    number) after window(walker, cpu, side, bookkeeping, i). @stolen: the host
    steal per outlier, filled here (the charges read it). Returns (traced ns
    of the simple ones, [outliers not traced, their ns]). @main_of: each
    outlier's main category, filled here for the simple ones (charge() fills the
    others')."""
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
    for c in cpus:
        sel = per_cpu[c]
        outs = np.stack([start_a[sel], start_a[sel] + len_a[sel], sel], axis=1)
        w = vector.plan(np, log, c, outs, slack_ns, LOOKBACK_EVENTS, LOOKBACK_NS,
                        ENTRY_ALLOWANCE_NS, len(log.vectors), steal, pids.get(c), comms)
        for kind, local in ((vector.IRQ, w.irq_names), (vector.PREEMPT, w.task_names)):
            if local:           # one number per name over all CPUs
                ids = np.array([names[kind].setdefault(nm, len(names[kind])) for nm in local])
                sel = w.fast & (w.code & ~vector.KIND == kind)
                w.code[sel] = kind | ids[w.code[sel] & vector.KIND]
        plans.append((number, c, w))
        f = np.flatnonzero(w.fast)
        items.append((number + f, w.oi[f], w.code[f], w.traced[f]))
        slow = np.flatnonzero(~w.fast)
        if len(slow):
            traced += _walk_slow(np, log, c, w, slow, number, pids.get(c), comms, charge,
                                 window)
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
        walker = _Walker(log, c, pids.get(c), comms, log.arrays(c)[2])
        lo, hi = int(w.lo[k]), int(w.hi[k])
        walker.walk(int(w.s[k]), int(w.i1[k]), lo)
        return format_chain(walker.pick(lo, hi, int(length[j]))[0], hi)

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
        c = causes.get(k)
        if c is None:
            c = causes[k] = [[], -1, "", 0, {}, -1]
        c[0].extend(length[g].tolist())
        c[3] += len(g)
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


def _walk_slow(np, log, cpu, w, slow, number, probe_pid, comms, charge, window):
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

    walker = _Walker(log, cpu, probe_pid, comms, idx, irq_name)
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
        traced += charge(oi[k], window(walker, cpu, None, win, oi[k]), number + k)
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

def _part(key, ns, phase):
    """One part of an outlier: its cause, the time charged and, for round trips
    and messages, the side and phase it sat in."""
    p = {"category": key[0], "name": key[1], "ns": ns}
    if key[2] is not None:
        p["side"] = key[2]
    if phase is not None:
        p["phase"] = phase
    return p


def _budget(budget):
    """The per-phase budget: what the stamps measured and what was charged, with
    the cause that took most of it."""
    out = []
    for phase, side in PHASES:
        if phase not in budget:
            continue
        measured, charged = budget[phase]
        row = {"phase": phase, "side": side, "measured_ns": measured,
               "charged_ns": sum(charged.values())}
        if charged:
            k = max(charged, key=charged.get)
            row["dominant"] = {"category": k[0], "name": k[1], "side": k[2],
                               "ns": charged[k]}
        out.append(row)
    return out


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


def _report(runs, log, slack_ns, causes, worst, traced_total, not_traced, count, budget,
            main_of):
    """Assemble the attribution dict from the per-cause tallies."""
    meta = log.meta
    total_ns = sum(sum(c[0]) for c in causes.values())
    duration_ns = max((r.get("duration_ns") or 0 for r in runs), default=0)
    starts = [r["start_mono_ns"] for r in runs if r.get("start_mono_ns") is not None]
    probe_cpus = sorted({r["cpu"] for r in runs if r.get("cpu") is not None})
    unlogged = sum((r.get("outliers") or {}).get("dropped", 0) for r in runs)
    rows = []
    for (cat, name, side), (parts, _, chain, primary, phases, _) in causes.items():
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
        rows.append(row)
    rows.sort(key=lambda r: (-r["total_ns"], -r["count"], r["category"], r["name"],
                             r.get("side") or ""))
    tracer = tracer_section(log)
    dropped = tracer["dropped"]
    worst_rows = []
    for length, neg_start, _, cpu, key, chain, traced, parts in sorted(
            worst, reverse=True, key=lambda w: w[:3]):
        start = -neg_start
        evs = log.window(cpu, start - slack_ns, start + length)
        lines = ["%+.1f us %s" % ((e.ts_ns - start) / 1e3, ev.describe(e, meta))
                 for e in evs[:WORST_EVENTS]]
        row = {"cpu": cpu, "start_ns": start, "length_ns": length,
               "category": key[0], "name": key[1], "chain": chain, "traced_ns": traced,
               "parts": parts or [_part(key, length, None)], "events": lines}
        if key[2] is not None:
            row["side"] = key[2]
        worst_rows.append(row)
    warnings = tracer_warnings(log, dropped)
    each = per_outlier(main_of)
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
        **({"budget": _budget(budget)} if budget else {}),
        "worst": worst_rows,
        **({"per_outlier": each} if each else {}),
        "warnings": warnings,
    }


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
    return out


def tracer_cost(meta):
    """What tracing cost, from trace.json: the tracer process's CPU time to start
    and while tracing and the CPUs it ran on, the BPF programs' run time in the
    kernel (eBPF, with BPF statistics on) and the conversion after the run (perf);
    {} for a log that does not say."""
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
