# SPDX-License-Identifier: GPL-2.0-only
"""gates - what a failed gate (results/gates.py judges) is charged to: for
--max-latency the causes of the outliers beyond the limit on that CPU, for
--max-lost the causes of that CPU's outliers; both most time first.

They are the attribution's own (attribution/attribute.py; attribution/wake.py
for jtr wake) taken over just those outliers of the result's outlier log,
against the event log jtr run recorded beside it, with the run's slack: the
same walk that charged every outlier, so a cause here is a row of the whole
table too. Without an attribution (--no-trace, no root, no BPF) a failed case
says why its causes were not measured and how to get them.
"""
import bisect
import socket
import time

from ..attribution import wake
from ..errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE, UsageError
from ..formats.junit import write_junit
from ..render import gates as gate_text
from ..results import gates
from ..results.outliers import OutlierLog, read_outlier_log
from ..results.probes import is_decomposed
from ..results.quantity import select
from ..trace import events
from ..units import fmt_ns
from ..values import format_duration
from .attribute import by_run_kind, ends_of, run_kinds

HOW = ("jtr run as root (or with CAP_BPF and CAP_PERFMON), without --no-trace, "
       "names them")


def judge(result, max_latency_ns=None, max_lost_pct=None, why=None, how=HOW):
    """The gates' cases of @result (results/gates.check) with the causes of the
    failed ones, kept in the result's "gates" section (not saved: the job saves
    the document once); [] when no limit was given. @why: why the result has
    no attribution, where it has none; @how: how to get one."""
    if max_latency_ns is None and max_lost_pct is None:
        return []
    cases = gates.check(result, max_latency_ns, max_lost_pct)
    try:
        add_causes(result, cases, why=why, how=how)
    except UsageError as e:
        for c in cases:
            if not c["passed"] and c["value"] is not None:
                c.pop("causes", None)
                c["causes_missing"] = "not measured: %s" % e
    result["gates"] = gates.section(cases, max_latency_ns, max_lost_pct, select(result).name)
    return cases


def conclude(job, junit, prog, probe, started, command, limits):
    """The end of a gated probe's job, one for jtr run and for a probe run alone
    (@prog "jtr run" or "jtr"): the JUnit report at @junit, when one was asked
    for, of the gates' cases (@limits: (max_latency_ns, max_lost_pct); @command:
    the line run; @started: time.time() at the start), or an error suite when
    the probe wrote no result (none after bad input: exit 2 did nothing); and
    the exit status: the probe's own without a result, EXIT_INTERRUPTED when a
    stop request ended it, EXIT_FAILED when a gate failed, else 0."""
    if junit and (job.result is not None or job.rc != EXIT_USAGE):
        elapsed = time.time() - started
        if job.result is None:
            suite = gate_text.junit_error_suite(
                prog, probe, "jtr %s wrote no result (exit %s)" % (probe, job.rc), started,
                elapsed, socket.gethostname())
        else:
            suite = gate_text.junit_suite(prog, probe, job.result, job.cases, started, elapsed,
                                          command, gate_text.limits_of(*limits))
        write_junit(junit, suite)
    if job.result is None:
        return job.rc
    if job.interrupted:
        return EXIT_INTERRUPTED
    return 0 if gates.passed(job.cases) else EXIT_FAILED


def add_causes(result, cases, why=None, how=HOW):
    """Add to each failed case of @cases (results/gates.check of @result) its
    causes ([{category, name, count, total_ns, share, example_chain}], most
    time first; side for two ends), with beyond (the logged outliers they are
    of) and a note where the outlier log cannot hold them all; or, without an
    attribution in @result, causes_missing: @why and how to get them."""
    failed = [c for c in cases if not c["passed"] and c["value"] is not None]
    if not failed:
        return
    att = result.get("attribution")
    if not isinstance(att, dict):
        for c in failed:
            c["causes_missing"] = "not measured: %s; %s" % (
                why or "the result has no attribution", how)
        return
    table = read_outlier_log(result)
    rows = table.rows
    mine = judged_rows(result, rows)
    log = None
    for c in failed:
        idx = [i for i, (cpu, _, length) in enumerate(rows)
               if mine[i] and (c["cpu"] is None or cpu == c["cpu"]) and
               (c["gate"] != "max-latency" or length > c["limit"])]
        c["beyond" if c["gate"] == "max-latency" else "outliers"] = len(idx)
        note = log_note(result, c, len(idx))
        if note:
            c["note"] = note
        if not idx:
            c["causes"] = []
            continue
        if len(idx) == len(rows) and not att.get("by_kind"):
            a = att                 # every outlier: the table jtr run made
        else:
            if log is None:
                log = events.read_events(result.file("events"), within=result.folder)
            a = attribution_over(result, table, idx, log,
                                 (att.get("method") or {}).get("slack_ns"))
        c["causes"] = [cause_row(x) for x in a.get("causes") or []]


def judged_rows(result, rows):
    """Whether each of @rows (the outlier log) is an outlier of the judged
    quantity: all of them, but where runs of different kinds take turns (jtr
    send: send and null), only those in a run of the quantity's kind, placed
    as the attribution places them (drivers/attribute.by_run_kind)."""
    kinds = run_kinds(result)
    if not kinds:
        return [True] * len(rows)
    want = {r.get("kind") for r in select(result).runs}
    spans = sorted((t0, k) for k, t0, _ in kinds)
    starts = [t0 for t0, _ in spans]
    return [spans[max(0, bisect.bisect_right(starts, start) - 1)][1] in want
            for _, start, _ in rows]


def attribution_over(result, table, idx, log, slack_ns=None):
    """The attribution section of the outliers @idx of @table (an OutlierLog
    of @result) against the event log @log."""
    sub = OutlierLog([table.rows[i] for i in idx],
                     {k: [v[i] for i in idx] for k, v in table.columns.items()})
    kw = {"top": 0}
    if isinstance(slack_ns, int):
        kw["slack_ns"] = slack_ns
    if is_decomposed(result):
        return wake.decompose(result, sub.rows, log, **kw)[0]
    kw.update(ends_of(result))
    return by_run_kind(result, sub, log, kw)


def cause_row(c):
    """A cause of the attribution as a gate names it."""
    row = {k: c.get(k) for k in ("category", "name", "count", "total_ns", "share",
                                 "example_chain")}
    for k in ("side", "pids", "prio", "tasks", "containers", "senders"):
        if c.get(k):
            row[k] = c[k]
    return row


def log_note(result, case, n):
    """Why the outlier log may not hold every sample of @case beyond the limit
    (@n of them logged), or None."""
    runs = [r for r in result.get("runs") or [] if isinstance(r, dict) and
            (case["cpu"] is None or r.get("cpu") == case["cpu"])]
    outs = [r.get("outliers") for r in runs if isinstance(r.get("outliers"), dict)]
    threshold = min((o.get("threshold_ns") or 0 for o in outs), default=0)
    dropped = sum(o.get("dropped") or 0 for o in outs)
    notes = []
    if case["gate"] == "max-latency" and case["limit"] < threshold:
        fix = "give --threshold %s to log and attribute them all" % format_duration(
            max(1, case["limit"]))
        notes.append("the outlier log holds the samples above the threshold (%s) only: the "
                     "causes are those of the %d of them, not of the shorter ones beyond the "
                     "limit; %s" % (fmt_ns(threshold), n, fix) if n else
                     "no sample beyond the limit reached the outlier threshold (%s): the log "
                     "holds none of them; %s" % (fmt_ns(threshold), fix))
    if dropped:
        notes.append("%d outliers were counted but not logged (the log was full: raise "
                     "--max-outliers)" % dropped)
    return "; ".join(notes) or None
