# SPDX-License-Identifier: GPL-2.0-only
"""attribute - a result's outliers charged to the kernel events the tracer
recorded beside it (jtr run after the probe, and jtr attribute), optionally
checked against perf sched timehist, and stored in the result; jtr attribute's
job (a results folder, jtr watch's dump, or an application's outlier log).

The result is handed in loaded; its outlier log, event log and sched.data are
read here (results/, trace/), the work is attribution/'s, and what is written
back goes through the Result.
"""
import bisect
import os

from ..attribution import attribute as att
from ..attribution import crosscheck as xc
from ..attribution import ends, irqthreads, wake
from ..errors import UsageError
from ..render.attribution import cross_check_lines, format_table
from ..results import probes as P
from ..results import validity
from ..results.outliers import read_outlier_log, read_outliers_file
from ..results.result import load_result
from ..system.files import check_file
from ..trace import events, sched


def sched_data_path(result, given=None):
    """The sched.data to compare with: @given (a file, or a folder holding one), the
    one the result names, or the result's sched.data; UsageError with the fix when
    there is none or no perf to read it."""
    if given is not None:
        p = os.path.join(given, sched.NAME) if os.path.isdir(given) else given
        if not os.path.lexists(p):
            raise UsageError("--sched-data %s: no such file" % given)
        check_file(p, "perf sched record file")
    else:
        p = result.file("sched")
        if not os.path.lexists(p):
            raise UsageError("--cross-check: %s: no such file; %s, or give --sched-data PATH"
                             % (p, sched.HOW_TO_RECORD))
        check_file(p, "perf sched record file", within=result.folder)
    why = sched.timehist_unavailable()
    if why:
        raise UsageError(why)
    return p


def attribution_of(result, slack_ns=None, top=None, events_path=None, cross_check=None,
                   decomposed=None, each=None, progress=None):
    """The attribution of @result (a Result) and, when @cross_check is given
    ({"sched_data": PATH or None, "min_ns": NS or None}), a function that compares
    it with perf sched timehist and returns the cross_check section. Nothing is
    written. Usage errors of the cross-check come before the work. @each is called
    with every outlier's charges (attribution.attribute's each). A jtr wake
    result is decomposed (attribution/wake.py); its rows per outlier are added to
    the list @decomposed when one is given."""
    kw = {} if progress is None else {"progress": progress}
    if slack_ns is not None:
        kw["slack_ns"] = slack_ns
    if top is not None:
        kw["top"] = top
    sched_path = None
    apart = P.is_decomposed(result)     # each outlier taken apart
    if cross_check is not None and apart:
        raise UsageError("--cross-check compares the charges to task preemption with perf "
                         "sched; a jtr wake result's decomposition names the blocking "
                         "thread itself: leave --cross-check out")
    if cross_check is not None:
        sched_path = sched_data_path(result, cross_check.get("sched_data"))
    table = read_outlier_log(result)
    log = events.read_events(events_path) if events_path else \
        events.read_events(result.file("events"), within=result.folder)
    if apart:
        a, rows = wake.decompose(result, table.outliers(), log, each=each, **kw)
        if decomposed is not None:
            decomposed += rows
        return irqthreads.named(a, irqthreads.full_names(log)), None
    kw.update(ends_of(result))
    outcomes = []
    if sched_path is not None or each is not None:
        def collect(*o):
            if sched_path is not None:
                outcomes.append(o)
            if each is not None:
                each(*o)
        kw["each"] = collect
    # a threaded IRQ handler's comm is cut at 15 characters: its texts say it whole
    a = irqthreads.named(by_run_kind(result, table, log, kw), irqthreads.full_names(log))
    if sched_path is None:
        return a, None
    rel = os.path.relpath(sched_path, result.folder)
    name = sched_path if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel

    def check(res):
        cpus = sorted({r["cpu"] for r in res.get("runs", []) if r.get("cpu") is not None})
        slices, comms, lost = sched.read_sched(sched_path, cpus)
        return xc.compare(res, outcomes, slices, min_ns=cross_check.get("min_ns"),
                          sched_name=name, lost=lost, comms=comms)
    return a, check


STAMPS = ("send_ns", "sent_ns", "peer_rx_ns", "peer_tx_ns")


def ends_of(result):
    """The attribution's keywords for a result measured across two ends (ping and
    pong, pub and sub: a probe with phases, whose result.json has the "sides"
    jtr run wrote): the sides' CPUs and the program on each. For a one-sided
    probe of jtr's, its program on each run's CPU: where another task shares the
    CPU as often as the probe (a busy loop pinned there), the probe is the task of
    that name, not whichever was switched out more often; {} for others (an
    imported result, a tool this version does not know)."""
    probe = P.probe_of(result)
    if probe is None:
        return {}
    if probe.tool == "app":
        # an application's calls: the thread that made most of them on each CPU
        return {"app": True, "programs": {
            r["cpu"]: r["tid"] for r in result.get("runs", []) if isinstance(r, dict)
            and isinstance(r.get("cpu"), int) and isinstance(r.get("tid"), int) and r["tid"] > 0}}
    sides = result.get("sides")
    if not probe.phases or not isinstance(sides, dict) or \
            not any(k in probe.sides for k in sides):
        if not probe.program:
            return {}
        cpus = {r.get("cpu") for r in result.get("runs", []) if isinstance(r, dict)}
        return {"programs": {c: probe.program for c in cpus
                             if isinstance(c, int) and c >= 0}}
    clean = {k: [c for c in v if isinstance(c, int) and c >= 0] for k, v in sides.items()
             if isinstance(v, list) and k in probe.sides}
    programs = {c: P.program_of(probe.tool, k) for k, cs in clean.items() for c in cs}
    return {"sides": clean, "programs": programs}


def run_kinds(result):
    """[(kind, start_ns, end_ns)] of the runs of a result whose runs are of
    different kinds (jtr send: send and null runs); [] otherwise."""
    out = []
    for r in result.get("runs", []):
        k, t0, d = r.get("kind"), r.get("start_mono_ns"), r.get("duration_ns")
        if isinstance(k, str) and isinstance(t0, int) and isinstance(d, int):
            out.append((k, t0, t0 + d))
    return out if len({k for k, _, _ in out}) > 1 else []


def by_run_kind(result, table, log, kw):
    """The attribution of @table's outliers: one for all of them, or, when the runs
    are of different kinds (send and null), one per kind, the first run's kind the
    main one, the others under "by_kind" and what each cause adds under
    "difference" (see attribution.attribute.difference)."""
    kinds = run_kinds(result)
    if "sides" in kw:       # across two ends: every CPU of both, by phase
        stamps = {k: table.column(k) for k in STAMPS if table.column(k)}
        return ends.attribute_ends(result, table.outliers(), log, stamps=stamps, **kw)
    if not kinds:
        return att.attribute(result, table.outliers(), log, **kw)
    order = list(dict.fromkeys(k for k, _, _ in kinds))
    spans = sorted((t0, t1, k) for k, t0, t1 in kinds)
    starts = [t0 for t0, _, _ in spans]
    rows = {k: [] for k in order}
    for row in table.rows:
        j = max(0, bisect.bisect_right(starts, row[1]) - 1)
        rows[spans[j][2]].append(row)
    out = {}
    for k in order:
        part = {"runs": [r for r in result.get("runs", []) if r.get("kind") == k]}
        out[k] = att.attribute(part, rows[k], log, **kw)
        out[k]["run_kind"] = k
    main = out.pop(order[0])
    main["by_kind"] = out
    main["difference"] = att.difference(main, out[order[1]]) if len(order) > 1 else []
    return main


def attribute_csv(path, events_path, slack_ns=None, top=None):
    """The attribution of an application's own outlier log (@path: cpu,start_ns,
    length_ns[,label]..., CLOCK_MONOTONIC ns) against a jtr trace log (@events_path:
    events.bin or its folder). Nothing is written."""
    table = read_outliers_file(path, table=True, hint="write the header "
                               "cpu,start_ns,length_ns and a line per outlier")
    log = events.read_events(events_path)
    span = max(0, log.end_ns - log.start_ns)
    cpus = sorted({r[0] for r in table.rows})
    runs = [{"cpu": c, "duration_ns": span, "start_mono_ns": log.start_ns} for c in cpus]
    kw = {k: v for k, v in (("slack_ns", slack_ns), ("top", top)) if v is not None}
    a = att.attribute({"runs": runs}, table.outliers(), log, **kw)
    a["outliers"]["file"] = path
    return a


def partner_of(result):
    """The other end's result kept in @result's folder by jtr run (pub/ beside a
    subscriber's: the publisher whose schedule the messages followed), or None."""
    probe = P.probe_of(result)
    if probe is None or probe.tool != "sub" or not result.folder:
        return None
    path = os.path.join(result.folder, "pub", "result.json")
    if not os.path.isfile(path):
        return None
    try:
        return load_result(path)
    except UsageError:
        return None


def validity_of(result):
    """@result's validity (results/validity.py), its partner's sends included."""
    return validity.check(result, partner_of(result))


def attribute_into(result, slack_ns=None, top=None, events_path=None, cross_check=None,
                   strict=True, progress=None, split=False, save=True):
    """Attribute @result, store it in the result ("attribution"; result.json saved
    unless not @save: the main job saves its document once, at its end) and
    attribution.txt; returns the table's lines. With @cross_check (see
    attribution_of) the comparison with perf sched timehist is added too
    ("cross_check", and its lines after the table); without it an earlier
    cross_check is removed, as it judged an earlier attribution. A cross-check
    that fails after the attribution raises UsageError if @strict, else says why
    in its lines."""
    rows = []
    a, check = attribution_of(result, slack_ns=slack_ns, top=top, events_path=events_path,
                              cross_check=cross_check, decomposed=rows, progress=progress)
    lines = format_table(a, split)
    result["attribution"] = a
    result["validity"] = validity_of(result)
    result.pop("cross_check", None)
    files = result.setdefault("files", {})
    if events_path is None:
        files["events"] = events.LOG_NAME
        files["trace"] = events.TRACE_NAME
    result.write_text("attribution", "attribution.txt", "\n".join(lines) + "\n")
    if "decomposition" in a:
        result.write_text("decomposition", wake.CSV_NAME, wake.csv_text(rows))
    if check is not None:
        try:
            cc = check(result)
        except UsageError as e:
            if strict:
                if save:
                    result.save()
                raise
            lines += ["", "cross-check: not run: %s" % e]
        else:
            result["cross_check"] = cc
            if not os.path.isabs(cc["sched_data"]):
                files[sched.FILE_ROLE] = cc["sched_data"]
            lines += [""] + cross_check_lines(cc, a["outliers"].get("start_ns") or 0)
    if save:
        result.save()
    return lines


def is_dump(d):
    """A folder of jtr watch's dumps: outliers.csv and events.bin, no result.json."""
    return not os.path.lexists(os.path.join(d, "result.json")) and all(
        os.path.isfile(os.path.join(d, f)) for f in ("outliers.csv", "events.bin"))


def attribute_job(dirs, opts, progress=None):
    """jtr attribute DIRS: what it prints, the attribution document with
    @opts["json"], else the lines of its table (with the cross-check's). One
    results folder is attributed and, with @opts["write"] and not JSON, the
    attribution stored in it; jtr watch's dump, or an application's outlier log
    (@opts["outliers"]), is attributed only. @opts: outliers, events, slack_ns,
    top, by_pid, json, write, cross_check, sched_data, cross_check_min."""
    if opts["outliers"] is not None:
        return attribute_log(dirs, opts["outliers"], opts["events"], opts)
    if len(dirs) != 1:
        raise UsageError("give one results folder (the gap run to explain); see "
                         "'jtr attribute --help'")
    d = dirs[0]
    if not os.path.isdir(d):
        raise UsageError("%s: not a results folder" % d)
    if is_dump(d) and opts["events"] is None:
        # jtr watch's flight-recorder dump: its interruptions against its events
        return attribute_log([], os.path.join(d, "outliers.csv"), d, opts)
    if opts["events"] is not None and not os.path.exists(opts["events"]):
        raise UsageError("--events %s: no such file or folder" % opts["events"])
    if (opts["sched_data"] is not None or opts["cross_check_min"] is not None) and \
            not opts["cross_check"]:
        raise UsageError("--sched-data and --cross-check-min go with --cross-check; see "
                         "'jtr attribute --help'")
    xc = {"sched_data": opts["sched_data"], "min_ns": opts["cross_check_min"]} \
        if opts["cross_check"] else None
    result = load_result(d)
    kw = {"slack_ns": opts["slack_ns"], "top": opts["top"], "events_path": opts["events"],
          "cross_check": xc, "progress": progress}
    try:
        if opts["write"] and not opts["json"]:
            return attribute_into(result, split=opts["by_pid"], **kw)
        a, check = attribution_of(result, **kw)
    finally:
        if progress is not None:
            progress.done()
    cc = check(result) if check else None
    if opts["json"]:
        return {"attribution": a, "cross_check": cc} if cc else a
    lines = format_table(a, opts["by_pid"])
    if cc:
        lines += [""] + cross_check_lines(cc, a["outliers"].get("start_ns") or 0)
    return lines


def attribute_log(dirs, path, events_path, opts):
    """jtr attribute --outliers FILE --events TRACE: an application's own outliers
    (or a jtr watch dump's) charged, nothing written; what attribute_job prints."""
    if dirs:
        raise UsageError("--outliers %s explains that file; give no results folder beside it"
                         % path)
    if events_path is None:
        raise UsageError("--outliers %s: give the trace to charge them against with --events "
                         "DIR (a jtr trace folder)" % path)
    if not os.path.exists(events_path):
        raise UsageError("--events %s: no such file or folder" % events_path)
    if opts["cross_check"]:
        raise UsageError("--cross-check goes with a results folder, not --outliers")
    a = attribute_csv(path, events_path, slack_ns=opts["slack_ns"], top=opts["top"])
    return a if opts["json"] else format_table(a, opts["by_pid"])
