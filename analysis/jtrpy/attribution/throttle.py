# SPDX-License-Identifier: GPL-2.0-only
"""throttle - could the kernel have been throttling a CPU's RT runqueue then?

A runnable real-time task loses its CPU to the idle task or to a task of lower
priority only when the kernel throttles the CPU's RT runqueue (causes.preemption,
wake.py's idle CPU): and the kernel throttles it only after its real-time tasks
have run sched_rt_runtime_us within the current sched_rt_period_us (or, with
throttling off, when the fair server's deadline reservation runs the normal tasks
they starved: its 50 ms in each second, so after about 950 ms of real-time run
time too). So such a moment is RT throttling only where the switch records show
the CPU's real-time tasks running at least SHARE of that runtime in the period
before it; elsewhere (a woken real-time thread the idle task kept waiting 40 us
because the host held the CPU, a task migrated away) it is not, and the walker
names what ran. Time the log does not show (before its start, or before a CPU's
first switch) counts as real-time run time: without evidence, the rule stands.
"""
from bisect import bisect_right

from ..system.numeric import numpy_or_none
from ..trace import causes as C
from ..trace import events as ev

SHARE = 0.9                     # of the runtime, in the period before
DEFAULT_RUNTIME_US, DEFAULT_PERIOD_US = 950_000, 1_000_000
FAIR_SERVER_US = 50_000         # the fair server's default runtime per period


class Throttle:
    """RT throttling's cause name for a result and, for an instant on a CPU of
    its event log, whether the RT runqueue can have been throttled then."""

    def __init__(self, result=None, log=None):
        host = result.get("host") if isinstance(result, dict) else None
        rt = host.get("rt_throttling") if isinstance(host, dict) else None
        self.name = C.throttling_name(rt)
        runtime, period = DEFAULT_RUNTIME_US, DEFAULT_PERIOD_US
        if isinstance(rt, dict) and isinstance(rt.get("runtime_us"), int) and \
                isinstance(rt.get("period_us"), int) and rt["period_us"] > 0:
            period = rt["period_us"]
            runtime = rt["runtime_us"] if rt["runtime_us"] >= 0 else \
                max(0, period - FAIR_SERVER_US)
        self.period_ns = period * 1000
        self.need_ns = SHARE * runtime * 1000
        self.log = log
        self.lines = {}

    def _line(self, cpu):
        """(switch times, real-time run time before each, whether the task
        switched in is a real-time one) of @cpu, in time order. The time between
        two switches is real-time when the task switched in was, or when the one
        switched out at its end is: a task that sets SCHED_FIFO itself while it
        runs (jtr gap -f) goes in at its old priority; and where a switch is not
        in the log (the task switched out is not the one switched in: one such
        beside a busy loop, with no drop counted), the log does not show who
        ran: the rule stands, as for time before the log."""
        got = self.lines.get(cpu)
        if got is not None:
            return got
        np, log = numpy_or_none(), self.log
        if np is not None and log.arrays(None) is not None:
            recs, _, idx = log.arrays(cpu)
            sel = idx[recs["type"][idx] == ev.SWITCH]
            ts = recs["ts_ns"][sel].astype(np.int64)
            b = recs["b"][sel].astype(np.int64)
            a = recs["a"][sel]
            nxt, prev = a >> 32, a & 0xffffffff
            rt = ((b >> 16) & 0xffff < C.RT_PRIO_END) & (nxt != C.IDLE_PID)
            out = (b & 0xffff < C.RT_PRIO_END) & (prev != C.IDLE_PID)
            rt[:-1] |= out[1:]
            cum = np.zeros(len(ts), np.int64)
            if len(ts) > 1:
                cum[1:] = np.cumsum(np.where(rt[:-1], np.diff(ts), 0))
            got = (ts.tolist(), cum.tolist(), rt.tolist())
        else:
            ts, cum, rt = [], [], []
            for i in log.cpu_index.get(cpu, []):
                e = log.event(int(i))
                if e.type != ev.SWITCH:
                    continue
                if ts:
                    if e.b & 0xffff < C.RT_PRIO_END and e.a & 0xffffffff != C.IDLE_PID:
                        rt[-1] = True       # real-time when it went out
                    cum.append(cum[-1] + (e.ts_ns - ts[-1] if rt[-1] else 0))
                else:
                    cum.append(0)
                ts.append(e.ts_ns)
                rt.append(((e.b >> 16) & 0xffff) < C.RT_PRIO_END and e.a >> 32 != C.IDLE_PID)
            got = (ts, cum, rt)
        self.lines[cpu] = got
        return got

    def _ran(self, line, t):
        """Real-time run time on the CPU from its first switch to @t."""
        ts, cum, rt = line
        j = bisect_right(ts, t) - 1
        if j < 0:
            return 0
        return cum[j] + (t - ts[j] if rt[j] else 0)

    def at(self, cpu, t):
        """Could @cpu's RT runqueue have been throttled at @t? True without a log."""
        if self.log is None:
            return True
        line = self._line(cpu)
        lo = t - self.period_ns
        unknown = max(0, min(t, line[0][0] if line[0] else t) - lo)   # nothing shows it
        return self._ran(line, t) - self._ran(line, lo) + unknown >= self.need_ns
