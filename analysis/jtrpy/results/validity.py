# SPDX-License-Identifier: GPL-2.0-only
"""validity - whether a run is a valid measurement: the findings that make its
numbers something else than what was asked for, each with the figure, the
documented limit and the fix (docs/result-format.md, "validity").

A run is not a valid measurement when
  late sends     the sender did not keep its schedule: more than LATE_MAX of its
                 sends began late (ping; pub, from jtr run's pub/ result), so the
                 latency from the intended time is the schedule's backlog more
                 than the path's;
  warm-up        the outlier threshold came from a warm-up whose median was more
                 than WARMUP_MAX times the run's own (the machine was busy as it
                 started): the outliers are those of another machine;
  lost           more than LOST_MAX of the messages were lost (datagrams): the
                 latency of the rest hides what happened to them;
  payload        a message's payload was not the publisher's (sub --verify): what
                 arrived is not what was sent, whatever its latency;
  null drift     a jtr send pair's null loop missed the send path's mean (below
                 the outlier threshold) by more than NULL_DRIFT_MAX after the
                 runs jtr send makes to hit it: "added" compares the send path
                 with another workload;
  tracer drops   the tracer dropped more than DROPS_MAX of its events: the causes
                 of some outliers are missing (the measurement stands; the
                 attribution does not).
result.json keeps {"valid": bool, "reasons": [{code, scope, text, fix, value,
limit}]} as "validity"; scope is "measurement" or "attribution". jtr compare, ab
and fleet give no verdict on an invalid result, and jtr advise no remedy,
unless told --accept-invalid.
"""
from ..units import fmt_ns
from ..vocab import MAX_LOG_BYTES
from . import probes as P

LATE_MAX = 0.10
WARMUP_MAX = 2.0
LOST_MAX = 0.01
NULL_DRIFT_MAX = 0.10   # jtr send's DRIFT_WARN (jitter/send.c)
DROPS_MAX = 0.001
MEASUREMENT, ATTRIBUTION = "measurement", "attribution"


def _reason(code, scope, text, fix, value, limit):
    return {"code": code, "scope": scope, "text": text, "fix": fix, "value": value,
            "limit": limit}


def _pct(x):
    return "%.0f %%" % (100 * x) if x >= 0.01 else "%.2f %%" % (100 * x)


def _transport(result):
    t = result.get("transport")
    return t if isinstance(t, dict) else {}


def _late(result, who):
    """The late-sends reason of a result that sends on a schedule, or None."""
    t = _transport(result)
    late, sent = t.get("late_sends"), t.get("sent")
    if not isinstance(late, int) or not isinstance(sent, int) or sent <= 0:
        return None
    share = late / sent
    if share <= LATE_MAX:
        return None
    params = result.get("params") if isinstance(result.get("params"), dict) else {}
    rate = params.get("rate_hz")
    fix = "lower -r%s" % (" (%s/s was asked)" % _num(rate) if rate else "")
    if params.get("one_thread"):
        fix += ", or drop -1 (one thread waits for each reply before it sends again)"
    return _reason("late_sends", MEASUREMENT,
                   "%s was late on %s of sends (%d of %d): it did not keep its schedule"
                   % (who, _pct(share), late, sent), fix, round(share, 6), LATE_MAX)


def _num(x):
    return ("%g" % x) if isinstance(x, (int, float)) else str(x)


def _warmup(result, probe):
    params = result.get("params") if isinstance(result.get("params"), dict) else {}
    if params.get("threshold_rule") != "warmup" or not probe or not probe.typical:
        return None
    warm = params.get("warmup_median_ns")
    p50 = [(r.get("percentiles_ns") or {}).get("50") for r in result.get("runs") or []
           if isinstance(r, dict) and r.get("name") == probe.typical]
    p50 = [x for x in p50 if isinstance(x, int) and x > 0]
    if not isinstance(warm, int) or not p50 or warm <= WARMUP_MAX * min(p50):
        return None
    ratio = warm / min(p50)
    return _reason("warmup", MEASUREMENT,
                   "the outlier threshold came from a slow warm-up: its median %s is %.1f "
                   "times the run's %s" % (fmt_ns(warm), ratio, fmt_ns(min(p50))),
                   "give --threshold, or measure on a quieter machine", round(ratio, 3),
                   WARMUP_MAX)


def _lost(result):
    t = _transport(result)
    lost, got = t.get("lost"), t.get("received")
    if not isinstance(lost, int) or not isinstance(got, int) or lost + got <= 0:
        return None
    share = lost / (lost + got)
    if share <= LOST_MAX:
        return None
    drops = t.get("socket_drops")
    where = ""
    if isinstance(drops, int) and drops > 0:
        # the kernel's own count at the receiving socket: its buffer was full
        where = "; %s dropped by the kernel at the receiving socket (its buffer was " \
            "full)" % ("all of them" if drops >= lost else "%d of them" % drops)
    return _reason("lost", MEASUREMENT,
                   "%s of the messages were lost (%d)%s: the latency of the others hides "
                   "them" % (_pct(share), lost, where),
                   "raise --rcvbuf or lower -r, or use a transport that does not drop"
                   if where else
                   "lower -r, raise --rcvbuf, or use a transport that does not drop",
                   round(share, 6), LOST_MAX)


def _payload(result):
    p = _transport(result).get("payload")
    bad = p.get("mismatched") if isinstance(p, dict) else None
    if not isinstance(bad, int) or bad <= 0:
        return None
    return _reason("payload", MEASUREMENT,
                   "%d of %s messages arrived with a payload other than the publisher's"
                   % (bad, p.get("verified")),
                   "find what changes messages between the publisher and here",
                   bad, 0)


def _null_drift(result):
    """The null-drift reason of a jtr send result, or None: the pair whose null
    loop missed its target the most."""
    bad = []
    for p in result.get("pairs") or ():
        if not isinstance(p, dict):
            continue
        target, got = p.get("target_ns"), p.get("null_mean_below_threshold_ns")
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool)
                   for x in (target, got)) or target <= 0:
            continue
        off = got / target - 1
        # the bounds as jtr send computes them (target x (1 +- the limit))
        if got > target * (1 + NULL_DRIFT_MAX) or got < target * (1 - NULL_DRIFT_MAX):
            bad.append((abs(off), off, p, got, target))
    if not bad:
        return None
    _, off, p, got, target = max(bad, key=lambda b: b[0])
    tries = p.get("null_tries")
    return _reason("null_drift", MEASUREMENT,
                   "the null loop of %d of %d pairs missed the send path's mean by more "
                   "than %s (pair %s: %s for %s, %+.0f %%%s): 'added' compares the send "
                   "path with another workload" % (
                       len(bad), len(result.get("pairs")), _pct(NULL_DRIFT_MAX), p.get("pair"),
                       fmt_ns(got), fmt_ns(target), 100 * off,
                       ", after %d runs" % tries if isinstance(tries, int) else ""),
                   "measure on a quieter CPU (isolated, with nothing busy beside it on its "
                   "core), or with more -n",
                   round(off, 4), NULL_DRIFT_MAX)


def _drops(result):
    a = result.get("attribution")
    t = a.get("tracer") if isinstance(a, dict) else None
    if not isinstance(t, dict):
        return None
    dropped, events = t.get("dropped") or 0, t.get("events") or 0
    if not dropped:
        return None
    share = dropped / max(1, dropped + events)
    if share <= DROPS_MAX:
        return None
    return _reason("tracer_drops", ATTRIBUTION,
                   "the tracer dropped %s of its events (%d): causes are missing for "
                   "some outliers" % (_pct(share), dropped),
                   "give a larger --trace-buffer or a shorter --drain-interval",
                   round(share, 6), DROPS_MAX)


def _log_full(result):
    a = result.get("attribution")
    t = a.get("tracer") if isinstance(a, dict) else None
    if not isinstance(t, dict) or t.get("log_full") is not True:
        return None
    start, end = t.get("start_ns"), t.get("end_ns")
    covered = (end - start) / 1e9 if isinstance(start, int) and isinstance(end, int) else 0.0
    return _reason("tracer_log_full", ATTRIBUTION,
                   "the tracer's event log reached its bound %.1f s into the trace: the "
                   "outliers after it are not traced" % covered,
                   "trace fewer CPUs, or for less time", round(covered, 3), MAX_LOG_BYTES)


def check(result, partner=None):
    """The "validity" of @result (a result.json document; @partner: the other end's
    result of a jtr run pub, whose sends the subscriber measured)."""
    probe = P.probe_of(result)
    reasons = []
    if probe is not None and probe.tool == "ping":
        reasons.append(_late(result, "the client (jtr ping)"))
    if partner is not None and P.probe_of(partner) is not None and \
            P.probe_of(partner).tool == "pub":
        reasons.append(_late(partner, "the publisher (jtr pub)"))
    if probe is not None and probe.tool in ("ping", "sub"):
        reasons.append(_warmup(result, probe))
        reasons.append(_lost(result))
        reasons.append(_payload(result))
    if probe is not None and probe.tool == "send":
        reasons.append(_null_drift(result))
    reasons.append(_drops(result))
    reasons.append(_log_full(result))
    reasons = [r for r in reasons if r]
    return {"valid": not reasons, "reasons": reasons}


def of(result):
    """The validity stored in @result, else checked now (an older result, or one
    a probe wrote alone)."""
    v = result.get("validity")
    if isinstance(v, dict) and isinstance(v.get("valid"), bool) and \
            isinstance(v.get("reasons"), list) and all(
                isinstance(r, dict) and all(isinstance(r.get(k), str)
                                            for k in ("code", "scope", "text", "fix"))
                for r in v["reasons"]):
        return v
    # a reason that is not one (a damaged or hand-edited file): checked again
    return check(result)


def summary(v, scope=None):
    """One line for people: 'not a valid measurement: ...; fix: ...', or None
    when valid (for @scope: only its reasons)."""
    rs = [r for r in v.get("reasons") or [] if scope is None or r.get("scope") == scope]
    if not rs:
        return None
    what = "not a valid measurement" if any(r.get("scope") == MEASUREMENT for r in rs) \
        else "the causes are not complete"
    return "%s: %s" % (what, "; ".join("%s — %s" % (r["text"], r["fix"]) for r in rs))


def is_valid(result, scope=None):
    """Whether @result has no finding (of @scope, or of any)."""
    return summary(of(result), scope) is None
