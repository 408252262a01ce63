# SPDX-License-Identifier: GPL-2.0-only
"""steal - how much of the outliers nothing in the kernel explains the host took,
from the readings of the kvm steal counter in the event log.

The tracer looks at the host's steal counter of a traced CPU (steal_time, which
KVM raises by the time the vCPU waited for a host CPU each time it runs the vCPU
again) at each interrupt entry and context switch on that CPU, and logs a
reading (steal_time record) when it moved: (ts, prev, a, b), the counter went
from b to a between the CPU's previous look (at prev, where it was seen at b;
EventLog.steal_readings) and ts.

Rule. A host stall is one gap in the probe, at least as long as the stall; the
probe reads its clock all the time it runs, so a gap longer than the outlier
threshold is an outlier. The outliers a reading can come from are those of the
same CPU that overlap (prev, ts]: lo < ts and hi > prev for a window [lo, hi]
(the window of attribute.py, [start - slack, start + length]).
- one such outlier: the reading's a - b is its steal, up to its length;
- several: the longest takes the steal first, up to its length, then the next
  longest, and so on (one stall fits only a gap at least as long as itself);
- none, or steal left over: it fell in gaps below the outlier threshold and is
  charged to no outlier.
attribute.py charges an outlier's steal first ("host preemption (steal)",
at most its length: the host's time is no time kernel events could take), its
kernel events the time left, and "VM exits, SMI or hardware" the rest. A log
without readings (no KVM steal counter, an older tracer, the perf backend)
keeps the one name "hypervisor, SMI or hardware": nothing is guessed.
"""
from bisect import bisect_left, bisect_right

from ..trace.causes import HOST_OTHER as OTHER
from ..trace.causes import HOST_STEAL as HOST
from ..trace.causes import HOST_UNMEASURED as UNMEASURED

SOURCE = "kvm steal_time"


def unmeasured(meta):
    """Why the log has no steal readings (trace.json "steal"), or None when it has."""
    st = meta.get("steal")
    if not isinstance(st, dict):
        return "the tracer of this log (%s) does not read the host's steal counter" % (
            meta.get("backend") or "backend unknown")
    if not st.get("available"):
        return st.get("reason") or "the tracer did not read it"
    return None


def status(meta):
    """attribution.tracer "steal": what was measured, or why not."""
    why = unmeasured(meta)
    return "not measured: %s" % why if why else "measured: %s" % SOURCE


def assign(readings, windows):
    """Steal ns of each window of one CPU (the module's rule).

    readings: [(ts, prev, a, b)] in time order; windows: [(lo, hi)] in time
    order, not overlapping (one probe's outliers). Returns a list of ns, one per
    window."""
    got = [0] * len(windows)
    los = [lo for lo, _ in windows]
    his = [hi for _, hi in windows]
    for ts, prev, a, b in readings:
        left = a - b
        if left <= 0:
            continue
        first, end = bisect_right(his, prev), bisect_left(los, ts)
        for k in sorted(range(first, end), key=lambda k: (los[k] - his[k], k)):
            room = his[k] - los[k] - got[k]
            take = left if left < room else room
            if take > 0:
                got[k] += take
                left -= take
            if left == 0:
                break
    return got


def first(steal, host, rest):
    """{cause: ns} of an outlier's time that kernel events do not take: @host ns of
    the host's steal (charged first), @rest ns of nothing seen; @steal None: not
    measured (the one name for both)."""
    if steal is None:
        return {UNMEASURED: rest} if rest > 0 else {}
    out = {HOST: host} if host > 0 else {}
    if rest > 0:
        out[OTHER] = rest
    return out


def split(steal, ns):
    """{cause: ns} for ns of "no kernel event" time with @steal ns of host steal
    in it (None: not measured)."""
    if steal is None:
        return {UNMEASURED: ns}
    host = min(steal, ns)
    if host == ns:
        return {HOST: ns}
    if host == 0:
        return {OTHER: ns}
    return {HOST: host, OTHER: ns - host}
