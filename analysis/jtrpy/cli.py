"""cli - the jtr front end: one command, subcommands like perf or bpftool.

Measuring subcommands hand over to the C programs (exec, so Ctrl-C, exit
status and setuid behave exactly as if the program had been run directly);
`jtr run` drives a probe and then reads its result to print the headline.
"""
import os
import signal
import subprocess
import sys

from . import __version__
from .errors import JtrError, UsageError
from .paths import probe_path
from .result import load_result

USAGE = """\
usage: jtr [--help] [--version] COMMAND [OPTIONS]

jtr measures how much jitter a CPU has, and (in later versions) which kernel
event caused each outlier and whether a tuning change helped.

commands:
{commands}

Run 'jtr COMMAND --help' for the options of one command.

examples:
  jtr run                       10 s on the default CPU: summary, headline, results folder
  jtr run -c 1-3 -d 60          a minute on CPUs 1, 2 and 3
  jtr gap -j 1G -t clock        um_perf -j: a billion clock_gettime loops, min and max gap
  jtr null -f 99 -c 3           the 100-cycle null loop at SCHED_FIFO 99
  jtr clock                     what rdtsc, rdtscp and clock_gettime cost here
"""

RUN_USAGE = """\
usage: jtr run [GAP OPTIONS]

The main job: measure a CPU with the gap probe (jtr gap), write a results
folder, and print what was found. With no options it measures the first
isolated CPU, or else the last online CPU, for 10 s.

Every option of 'jtr gap' is accepted (see 'jtr gap --help'), for example:
  -c LIST      CPUs to measure (one pinned thread each)
  -d DURATION  how long (10s, 500ms, 2m; a bare number is in seconds)
  -f PRIO      SCHED_FIFO priority 1-99
  -o DIR       results folder (default results/DATE-HOST-gap)

Not yet here: attaching the kernel-event tracer and explaining each outlier.

examples:
  jtr run
  jtr run -c 1 -d 30 -o before-tuning
"""


def _exec_probe(name):
    def run(args):
        prog = probe_path(name)
        sys.stdout.flush()
        os.execv(prog, [prog] + args)
    return run


def fmt_ns(ns):
    """A duration for people: 727 ns, 11.1 us, 2.97 ms, 1.20 s."""
    ns = float(ns)
    if ns < 1e3:
        return "%.0f ns" % ns
    if ns < 1e6:
        return "%.1f us" % (ns / 1e3)
    if ns < 1e9:
        return "%.2f ms" % (ns / 1e6)
    return "%.2f s" % (ns / 1e9)


def headline(result):
    """The lines `jtr run` prints after the probe's own table."""
    lines = []
    for r in result.get("runs", []):
        o = r.get("outliers", {})
        lines.append(
            "CPU %s: %d interruptions above %s in %.2f s (%.1f/s), %.3f %% of the time "
            "lost; per loop p99.99 %s, max %s" % (
                r.get("cpu"), o.get("count", 0), fmt_ns(o.get("threshold_ns", 0)),
                r.get("duration_ns", 0) / 1e9, o.get("per_s", 0.0),
                r.get("lost_time_pct", 0.0), fmt_ns(r["percentiles_ns"]["99.99"]),
                fmt_ns(r.get("max_ns", 0))))
    if result.get("partial"):
        lines.append("partial: the run was stopped early; the numbers cover what was measured")
    lines.append("causes: not attributed; this version has no kernel-event tracer yet")
    return lines


def cmd_run(args):
    if any(a in ("-h", "--help") for a in args):
        sys.stdout.write(RUN_USAGE)
        return 0
    prog = probe_path("gap")
    env = dict(os.environ, JTR_PROG="jtr run")
    # the probe gets Ctrl-C from the terminal and writes partial results; we wait for it
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    outdir = None
    try:
        child = subprocess.Popen([prog] + args, stdout=subprocess.PIPE, text=True, env=env,
                                 restore_signals=True,
                                 preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        for line in child.stdout:
            if line.startswith("results: "):
                outdir = line[len("results: "):].strip().rstrip("/")
            sys.stdout.write(line)
            sys.stdout.flush()
        rc = child.wait()
    finally:
        signal.signal(signal.SIGINT, old)
    if rc != 0 or not outdir:
        return rc
    print()
    for line in headline(load_result(outdir)):
        print(line)
    return 0


def cmd_version(args):
    print("jtr %s" % __version__)
    return 0


COMMANDS = [
    ("run", "measure a CPU and print what was found (the main job)", cmd_run),
    ("null", "time an empty loop millions of times (jtr_null, tst_clock.sh)",
     _exec_probe("null")),
    ("gap", "read the clock back to back, log every interruption (oslat, um_perf -j)",
     _exec_probe("gap")),
    ("clock", "cost and jitter of rdtsc, rdtscp, clock_gettime and friends",
     _exec_probe("clock")),
    ("version", "print the version", cmd_version),
]


def usage():
    width = max(len(c[0]) for c in COMMANDS)
    cmds = "\n".join("  %-*s  %s" % (width, name, desc) for name, desc, _ in COMMANDS)
    return USAGE.format(commands=cmds)


def main(argv):
    try:
        if not argv or argv[0] in ("-h", "--help", "help"):
            sys.stdout.write(usage())
            return 0 if argv else 2
        if argv[0] == "--version":
            return cmd_version([])
        for name, _, fn in COMMANDS:
            if argv[0] == name:
                return fn(argv[1:])
        raise UsageError("unknown command '%s'; run 'jtr --help' for the list" % argv[0])
    except UsageError as e:
        print("jtr: %s" % e, file=sys.stderr)
        return 2
    except JtrError as e:
        print("jtr: error: %s" % e, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("jtr: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
