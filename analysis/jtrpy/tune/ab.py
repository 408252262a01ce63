"""ab - `jtr ab PROFILE`: baseline runs, the profile applied, tuned runs, reverted,
compared; in one command, and always reverted (error, Ctrl-C, SIGTERM).

With --repeat N the runs are interleaved in ABBA order (A B B A A B B A ...), so a
slow drift of the machine during the experiment falls on both sides equally
instead of passing for an effect of the profile.
"""
import json
import os
import re
import signal
import sys
import time

from .. import compare as C
from ..cli import parse_count, take_value
from ..errors import JtrError, UsageError
from ..result import dumps_result, load_result, new_results_dir, write_atomic
from . import engine as E
from ..cpus import pack_cpulist

FORMAT = "jtr-ab/1"

USAGE = """\
usage: jtr ab PROFILE [--cpus LIST] [--duration DUR] [--repeat N] [--no-trace]
              [--backend KIND] [-o DIR]

Measure whether a tuning profile helps: baseline runs on the machine as it is,
the profile applied (jtr tune apply), the same runs again, the profile reverted,
and the two sides compared (jtr compare: percentiles with bootstrap confidence
intervals, time lost, outliers/s, per-cause deltas, a verdict). With --repeat N
there are N runs a side, interleaved A B B A A B ..., so drift on a noisy
machine shows as run-to-run spread instead of as an effect. The profile is
reverted whatever happens: an error, Ctrl-C or SIGTERM.

  --cpus LIST     CPUs to isolate (jtr-isolate, jtr-realtime) and to measure
                  (default: measure the default CPU of jtr run)
  --duration DUR  each run (default 10s)
  --repeat N      runs a side, 1 to 100 (default 1)
  --no-trace      measure only (no kernel-event tracing, no per-cause deltas)
  --backend KIND  tracer backend of jtr run: auto, ebpf or perf
  -o DIR          results folder (default results/DATE-HOST-ab): a-1/, b-1/, ...
                  (each a jtr run results folder), ab.json, compare.json and
                  compare.txt

Needs root (it applies a profile). Run it from a housekeeping CPU.

examples:
  sudo jtr ab jtr-latency -d 30
  sudo jtr ab jtr-isolate --cpus 1 --repeat 3
"""


class Stop(Exception):
    """Ctrl-C or SIGTERM during the experiment."""


def parse(args):
    o = {"cpus": None, "duration": "10s", "repeat": 1, "trace": True, "backend": "auto",
         "out": None, "profile": None}
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--cpus":
            o["cpus"] = take_value(args, i, a)
            i += 1
        elif a in ("-d", "--duration"):
            o["duration"] = take_value(args, i, a)
            if not re.fullmatch(r"\d+(\.\d+)?(ms|s|m)?", o["duration"]):
                raise UsageError("%s %s: not a duration; use e.g. 10s, 500ms or 2m"
                                 % (a, o["duration"]))
            i += 1
        elif a == "--repeat":
            o["repeat"] = parse_count(a, take_value(args, i, a), 1, 100)
            i += 1
        elif a == "--no-trace":
            o["trace"] = False
        elif a == "--backend":
            o["backend"] = take_value(args, i, a)
            if o["backend"] not in ("auto", "ebpf", "perf"):
                raise UsageError("--backend %s: use ebpf, perf or auto" % o["backend"])
            i += 1
        elif a in ("-o", "--output"):
            o["out"] = take_value(args, i, a)
            i += 1
        elif a.startswith("-"):
            raise UsageError("unknown option '%s'; see 'jtr ab --help'" % a)
        elif o["profile"] is None:
            o["profile"] = a
        else:
            raise UsageError("give one profile; '%s' is one too many" % a)
        i += 1
    if not o["profile"]:
        raise UsageError("give the profile to test, e.g. 'jtr ab jtr-latency'; see "
                         "'jtr tune list'")
    return o


def order(repeat):
    """['a', 'b', 'b', 'a', 'a', 'b', ...]: ABBA blocks, @repeat runs a side."""
    out = []
    for i in range(repeat):
        out += ["a", "b"] if i % 2 == 0 else ["b", "a"]
    return out


def main(args):
    if any(a in ("-h", "--help") for a in args):
        sys.stdout.write(USAGE)
        return 0
    o = parse(args)
    cpus = E.check_cpus(o["cpus"]) if o["cpus"] else []
    profile = E.load_profile(o["profile"], cpus)      # unknown profile: exit 2 now
    E.need_root("ab")
    if E.active_state():
        st = E.active_state()
        raise UsageError("profile %s is applied: revert it first ('jtr tune revert'), so "
                         "the baseline is the machine untuned" % st["profile"])
    outdir = new_results_dir("ab", o["out"])
    os.makedirs(outdir)
    measure = [str(cpus[0])] if cpus else []
    seq = order(o["repeat"])
    record = {"format": FORMAT, "profile": profile.name, "isolated_cpus": pack_cpulist(cpus),
              "measured_cpu": measure[0] if measure else None, "duration": o["duration"],
              "repeat": o["repeat"], "trace": o["trace"], "order": [], "runs": [],
              "partial": True, "compare": None, "verdict": None}
    mine = os.sched_getaffinity(0)      # apply moves jtr to the housekeeping CPUs;

    stop = []

    def on_term(*_):
        stop.append(1)
        # the probe ends its run early and keeps what it has
        from ..runjob import signal_children
        signal_children(signal.SIGTERM, "jtr-gap")
    old = signal.signal(signal.SIGTERM, on_term)
    applied = False
    n = {"a": 0, "b": 0}
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
            if stop:
                raise Stop()
            rc, partial = _measure(os.path.join(outdir, name), measure, o)
            record["runs"].append({"name": name, "side": side, "rc": rc, "partial": partial,
                                   "profile": profile.name if side == "b" else None})
            record["order"].append(name)
            if stop or (partial and rc == 0):
                raise Stop()
            if rc != 0:
                err = UsageError if rc == 2 else JtrError
                raise err("run %s failed (exit %d); the profile is reverted" % (name, rc))
        record["partial"] = False
    except (KeyboardInterrupt, Stop):
        print("jtr ab: interrupted; reverting and comparing what was measured",
              file=sys.stderr)
    finally:
        signal.signal(signal.SIGTERM, old)
        if applied:
            _revert()
            print("[%s] reverted %s" % (_now(), profile.name))
        _finish(outdir, record)
    return 130 if record["partial"] else 0


def _now():
    return time.strftime("%H:%M:%S")


def _revert():
    st = E.read_state()
    failed, _ = E.revert(st, out=open(os.devnull, "w"))
    for label, why in failed:
        print("  not restored: %s: %s" % (label, why), file=sys.stderr)


def _measure(d, measure, o):
    from .. import runjob
    args = ["-q", "-o", d, "-d", o["duration"]] + (["-c"] + measure if measure else [])
    rc, outdir, lines, why = runjob.run(args, trace=o["trace"], backend=o["backend"])
    partial = True
    if rc == 0 and os.path.exists(os.path.join(d, "result.json")):
        r = load_result(d)
        partial = bool(r.get("partial"))
        run = r["runs"][0]
        print("    p99 %s  p99.99 %s  max %s  lost %.3f %%%s" % (
            C._fmt_ns(run["percentiles_ns"]["99"]), C._fmt_ns(run["percentiles_ns"]["99.99"]),
            C._fmt_ns(run["max_ns"]), run.get("lost_time_pct", 0.0),
            "" if lines else "  (not attributed: %s)" % why))
    return rc, partial


def _finish(outdir, record):
    """Compare what was measured; write ab.json, compare.json/.txt; print."""
    ok = [r for r in record["runs"] if r["rc"] == 0 and not r["partial"]]
    a = [os.path.join(outdir, r["name"]) for r in ok if r["side"] == "a"]
    b = [os.path.join(outdir, r["name"]) for r in ok if r["side"] == "b"]
    if a and b:
        c = C.compare(C.load_side(a), C.load_side(b), labels_a=a, labels_b=b)
        write_atomic(os.path.join(outdir, "compare.json"), dumps_result(c) + "\n")
        lines = C.format_table(c)
        write_atomic(os.path.join(outdir, "compare.txt"), "\n".join(lines) + "\n")
        record["compare"] = "compare.json"
        record["verdict"] = c["verdict"]
        print()
        print("\n".join(lines))
    else:
        print("jtr ab: not enough runs to compare (baseline %d, tuned %d)" % (len(a), len(b)))
    write_atomic(os.path.join(outdir, "ab.json"), json.dumps(record, indent=1) + "\n")
    print("results: %s" % outdir)
