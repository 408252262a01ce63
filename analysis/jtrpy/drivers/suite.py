# SPDX-License-Identifier: GPL-2.0-only
"""suite - jtr suite: the standard set of measurements, one after the other,
into one folder (jtr report draws them on one page: render/suite_page.py).

Items, one results folder each under the suite's folder: the 100-cycle null loop
timed with RDTSC (null) and with clock_gettime (null-clock), the clock sources
(clock), back-to-back timestamps (gap), and the send-vs-null pairs of jtr send
per transport (send-KIND) when jtr-send is built. suite.json (results/suite.py)
says what ran, with which command, its exit status and where.

suite_job is the command's job; the command prints what it runs and each item
as it starts and ends (the callbacks), and the end (render/suite.py).
"""
import os
import subprocess
import time
from collections import namedtuple

from ..errors import JtrError, UsageError
from ..results.figures import result_figures
from ..results.result import load_result, new_results_dir
from ..results.suite import SuiteIndex, now_iso
from ..system import signals
from ..system.cpus import default_cpu
from ..system.paths import probe_path
from ..system.ports import free_port
from ..values import format_count, format_cpulist, format_duration
from .programs import Program
from .run import INTERRUPTED

ITEMS = ("null", "null-clock", "clock", "gap", "send")
DEFAULTS = {"samples": "2M", "send_samples": "500K", "runs": 3, "gap_ns": 10 * 10**9,
            "reads": "1M"}
QUICK = {"samples": "20K", "send_samples": "20K", "runs": 2, "gap_ns": 5 * 10**8,
         "reads": "20K"}

# --- the plan --------------------------------------------------------------

def send_binary():
    """(path of jtr-send, None) or (None, why it cannot run)."""
    try:
        return probe_path("send"), None
    except JtrError as e:
        return None, str(e)


def plan(o):
    """The items in order: [{"name", "tool", "args"}], and the lines to print for
    what is skipped, and the skipped items."""
    d = QUICK if o["quick"] else DEFAULTS
    n = format_count(o["samples"]) if o["samples"] else d["samples"]
    ns = format_count(o["samples"]) if o["samples"] else d["send_samples"]
    r = str(o["runs"] or d["runs"])
    cpus = o["cpus"] or [default_cpu()]
    cpu = str(cpus[0])
    gap = format_duration(o["gap_ns"] or d["gap_ns"])
    items = [
        {"name": "null", "tool": "null",
         "args": ["-n", n, "--runs", r, "-c", cpu, "--desc", "null"]},
        {"name": "null-clock", "tool": "null",
         "args": ["-t", "clock", "-n", n, "--runs", r, "-c", cpu, "--desc", "null-clock"]},
        {"name": "clock", "tool": "clock", "args": ["-n", d["reads"], "-c", cpu]},
        {"name": "gap", "tool": "gap", "args": ["-d", gap, "-c", format_cpulist(cpus)]},
    ]
    skipped = []
    prog, why = send_binary()
    for kind in o["transports"]:
        it = {"name": "send-" + kind, "tool": "send",
              "args": ["-T", kind, "-n", ns, "--pairs", r, "-c", cpu, "--desc", "send-" + kind]}
        if prog:
            items.append(it)
        else:
            it["why"] = why
            skipped.append(it)
    if o["only"]:
        keep = lambda it: it["name"] in o["only"] or (  # noqa: E731
            it["tool"] == "send" and "send" in o["only"])
        items = [it for it in items if keep(it)]
        skipped = [it for it in skipped if keep(it)]
    return items, skipped


# --- running ---------------------------------------------------------------

def item_figures(folder):
    """The figures (results/figures.py) of a finished item's result, or None
    when it cannot be read."""
    try:
        return result_figures(load_result(folder))
    except UsageError:
        return None


def last_line(path):
    try:
        with open(path, errors="replace") as f:
            lines = [x.strip() for x in f.read().splitlines() if x.strip()]
    except OSError:
        return ""
    lines = [x for x in lines if "warning:" not in x] or lines
    return lines[-1] if lines else ""


def own_port(it):
    """["-P", ADDR] for a send item over UDP or TCP: a loopback port free when it
    starts. jtr send's default (17391) can be another program's (a jtr ping left
    running, a test beside the suite), and a suite has no --addr to choose one."""
    args = it["args"]
    kind = args[args.index("-T") + 1] if it["tool"] == "send" and "-T" in args else None
    return ["-P", "127.0.0.1:%d" % free_port()] if kind in ("udp", "tcp") else []


def run_item(suite, it, k, total, progress):
    """Run one item (the @k th of @total), @progress(its entry with k and total)
    as it starts and again as it ends, with seconds, figures (item_figures),
    kept (whether it left a result) and last (the last line of its log when it
    failed); fills its entry in suite.json. Its status."""
    entry = it["entry"]
    folder = os.path.join(suite.folder, it["name"])
    log = os.path.join(suite.folder, it["name"] + ".log")
    args = it["args"] + own_port(it) + ["-q", "-o", folder]
    entry.update(status="running", started_at=now_iso(), command=["jtr", it["tool"]] + args)
    suite.save()
    progress(dict(entry, k=k, total=total))
    t0 = time.monotonic()
    env = dict(os.environ, JTR_PROG="jtr suite: %s" % it["name"])
    with open(log, "w") as f:
        try:
            child = Program(it["tool"], args, env, stdout=f, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)
        except (JtrError, OSError) as e:
            f.write("%s\n" % e)
            rc = None
        else:
            rc, _ = child.run()
    dt = time.monotonic() - t0
    interrupted = signals.requested()
    has = os.path.isfile(os.path.join(folder, "result.json"))
    figures = item_figures(folder) if has else None
    partial = figures["partial"] if figures else None
    if rc == 0 and has and not partial and not interrupted:
        status = "done"
    elif interrupted or (rc is not None and rc < 0) or partial:
        status = "interrupted"
    else:
        status = "failed"
    entry.update(status=status, exit_status=rc, ended_at=now_iso(),
                 duration_s=round(dt, 3), result="%s/result.json" % it["name"] if has else None)
    # what it measured is said first: a disk too full for suite.json loses no line
    progress(dict(entry, k=k, total=total, seconds=dt, figures=figures, kept=has,
                  last=last_line(log) if status == "failed" else None))
    suite.save()
    return status


# what a jtr suite run ends with: its folder, the items planned, how many were
# done and how many failed, whether a stop ended it, and the exit status
Outcome = namedtuple("Outcome", "folder total done failed interrupted rc")


def suite_job(o, command, planned, progress):
    """jtr suite's job on the command's settings @o (commands/suite.py), the
    command line @command kept in suite.json: the plan (the default CPU, which
    items are built), the folder made (o["out"], or results/DATE-HOST-suite),
    @planned(folder, the names of the items, the skipped items) once suite.json
    lists them, then the items one after the other (run_item, with
    @progress); an Outcome (its rc: 0 every item ran, 1 one failed,
    EXIT_INTERRUPTED)."""
    folder = new_results_dir("suite", o["out"])
    items, skipped = plan(o)
    try:
        os.makedirs(folder)
    except OSError as e:
        raise UsageError("-o %s: cannot create the folder: %s" % (folder, e.strerror or e))
    suite = SuiteIndex(folder, command)
    for it in items:
        it["entry"] = {"name": it["name"], "tool": it["tool"], "folder": it["name"],
                       "command": ["jtr", it["tool"]] + it["args"] + ["-q", "-o", os.path.join(
                           folder, it["name"])], "status": "not run", "exit_status": None,
                       "log": it["name"] + ".log"}
        suite.doc["items"].append(it["entry"])
    for it in skipped:
        suite.doc["items"].append({"name": it["name"], "tool": it["tool"], "folder": None,
                                   "command": ["jtr", it["tool"]] + it["args"],
                                   "status": "skipped", "exit_status": None,
                                   "why": it["why"]})
    names = [it["name"] for it in items]
    if "null-clock" in names and "null" in names:
        suite.doc["pairs"].append(["null-clock", "null"])
    suite.save()
    planned(folder, names, skipped)
    failed = 0
    try:
        # a stop signal reaches the running item once (it keeps what it measured);
        # the items after it are not run
        with signals.measuring():
            for k, it in enumerate(items, 1):
                if signals.requested():
                    break
                st = run_item(suite, it, k, len(items), progress)
                failed += st == "failed"
        interrupted = signals.requested()
        suite.doc["ended_at"] = now_iso()
        suite.doc["partial"] = bool(interrupted)
        suite.doc["state"] = "interrupted" if interrupted else "done"
        suite.save()
    except OSError as e:
        # a full disk: the suite stops; each item that ran keeps its own folder
        raise JtrError("cannot write %s: %s; each item that ran keeps its results in its "
                       "folder in %s/, suite.json as it was before" % (
                           e.filename or os.path.join(folder, "suite.json"),
                           e.strerror or e, folder))
    done = sum(e["status"] == "done" for e in suite.doc["items"])
    rc = INTERRUPTED if interrupted else 1 if failed else 0
    return Outcome(folder, len(items), done, failed, bool(interrupted), rc)
