"""ab - `jtr ab PROFILE`: baseline runs, the profile applied, tuned runs, reverted,
compared; in one command, and always reverted (error, Ctrl-C, SIGTERM).

With --repeat N the runs are interleaved in ABBA order (A B B A A B B A ...), so a
slow drift of the machine during the experiment falls on both sides equally
instead of passing for an effect of the profile.
"""
import os
import sys
import time

from ..errors import JtrError, UsageError
from ..render.compare import format_table as compare_table
from ..results.result import load_result
from ..stats.compare import compare
from ..system import signals
from ..system.files import write_atomic, write_json
from ..tune import engine as E
from ..units import fmt_ns
from ..values import format_cpulist, format_duration
from .run import INTERRUPTED, run_job

FORMAT = "jtr-ab/1"


class Stop(Exception):
    """Ctrl-C or SIGTERM during the experiment."""


def order(repeat):
    """['a', 'b', 'b', 'a', 'a', 'b', ...]: ABBA blocks, @repeat runs a side."""
    out = []
    for i in range(repeat):
        out += ["a", "b"] if i % 2 == 0 else ["b", "a"]
    return out


def experiment(o, profile, cpus, outdir):
    """The runs of `jtr ab` into @outdir (which exists) with @profile (loaded for
    @cpus); progress on stdout; the exit status (130 when it was stopped)."""
    measure = [str(cpus[0])] if cpus else []
    seq = order(o["repeat"])
    record = {"format": FORMAT, "profile": profile.name, "isolated_cpus": format_cpulist(cpus),
              "measured_cpu": measure[0] if measure else None,
              "duration": format_duration(o["duration_ns"]),
              "repeat": o["repeat"], "trace": o["trace"], "order": [], "runs": [],
              "partial": True, "compare": None, "verdict": None}
    mine = os.sched_getaffinity(0)      # apply moves jtr to the housekeeping CPUs;

    applied = False
    n = {"a": 0, "b": 0}
    # a stop signal reaches the running probe (it ends its run early and keeps
    # what it has); the experiment stops after that run
    with signals.measuring():
        try:
            for k, side in enumerate(seq):
                n[side] += 1
                name = "%s-%d" % (side, n[side])
                if side == "b" and not applied:
                    plan = E.make_plan(E.load_profile(o["profile"], cpus), cpus)
                    E.apply(plan, out=open(os.devnull, "w"))
                    os.sched_setaffinity(0, mine)   # its probes must reach the isolated CPUs
                    applied = True
                    print("[%s] applied %s" % (_now(), profile.name))
                elif side == "a" and applied:
                    _revert()
                    applied = False
                    print("[%s] reverted %s" % (_now(), profile.name))
                print("[%s] run %d of %d: %s (%s)" % (_now(), k + 1, len(seq), name,
                      "baseline" if side == "a" else profile.name))
                sys.stdout.flush()
                if signals.requested():
                    raise Stop()
                rc, partial = _measure(os.path.join(outdir, name), measure, o)
                record["runs"].append({"name": name, "side": side, "rc": rc, "partial": partial,
                                       "profile": profile.name if side == "b" else None})
                record["order"].append(name)
                if signals.requested() or (partial and rc in (0, INTERRUPTED)):
                    raise Stop()
                if rc != 0:
                    err = UsageError if rc == 2 else JtrError
                    raise err("run %s failed (exit %d); the profile is reverted" % (name, rc))
            record["partial"] = False
        except (KeyboardInterrupt, Stop):
            print("jtr ab: interrupted; reverting and comparing what was measured",
                  file=sys.stderr)
        finally:
            if applied:
                _revert()
                print("[%s] reverted %s" % (_now(), profile.name))
            _finish(outdir, record)
    if record["partial"]:
        sys.stdout.flush()
        print("jtr ab: interrupted; partial results in %s/" % outdir, file=sys.stderr)
        return INTERRUPTED
    return 0


def _now():
    return time.strftime("%H:%M:%S")


def _revert():
    st = E.read_state()
    failed, _ = E.revert(st, out=open(os.devnull, "w"))
    for label, why in failed:
        print("  not restored: %s: %s" % (label, why), file=sys.stderr)


def _measure(d, measure, o):
    """One jtr run into @d: (its probe's exit status, partial?)."""
    args = ["-q", "-o", d, "-d", format_duration(o["duration_ns"])] + \
        (["-c"] + measure if measure else [])
    job = run_job(args, cpus=measure[0] if measure else None, trace=o["trace"],
                  backend=o["backend"])
    for n in job.notices:
        print("jtr ab: %s" % n, file=sys.stderr)
    partial = True
    if job.result is not None:
        partial = bool(job.result.get("partial")) or job.interrupted
        run = job.result["runs"][0]
        print("    p99 %s  p99.99 %s  max %s  lost %.3f %%%s" % (
            fmt_ns(run["percentiles_ns"]["99"]), fmt_ns(run["percentiles_ns"]["99.99"]),
            fmt_ns(run["max_ns"]), run.get("lost_time_pct", 0.0),
            "" if job.lines else "  (not attributed: %s)" % job.why))
    return job.rc, partial


def _finish(outdir, record):
    """Compare what was measured; write ab.json, compare.json/.txt; print."""
    ok = [r for r in record["runs"] if r["rc"] == 0 and not r["partial"]]
    a = [os.path.join(outdir, r["name"]) for r in ok if r["side"] == "a"]
    b = [os.path.join(outdir, r["name"]) for r in ok if r["side"] == "b"]
    if a and b:
        c = compare([load_result(p) for p in a], [load_result(p) for p in b],
                    labels_a=a, labels_b=b)
        write_json(os.path.join(outdir, "compare.json"), c)
        lines = compare_table(c)
        write_atomic(os.path.join(outdir, "compare.txt"), "\n".join(lines) + "\n")
        record["compare"] = "compare.json"
        record["verdict"] = c["verdict"]
        print()
        print("\n".join(lines))
    else:
        print("jtr ab: not enough runs to compare (baseline %d, tuned %d)" % (len(a), len(b)))
    write_json(os.path.join(outdir, "ab.json"), record)
    print("results: %s" % outdir)
