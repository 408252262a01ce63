# SPDX-License-Identifier: GPL-2.0-only
"""main - the jtr front end: one command, subcommands like perf or bpftool.

The measuring programs (null, gap, clock, wake, ping, pong, pub, sub, send, ipc, and
trace without --print) are C programs: jtr hands over to them with exec before
any parsing, so their options, --help, Ctrl-C, exit status and setuid behave
exactly as if the program had been run directly. Every other subcommand is a
module of commands/ with make_parser(prog) (a cli/parser.py JtrParser) and
run(opts), loaded only when it is the one asked for.

Exit status (jtr.1 says it in the user's words: scripts/gen-docs.py): 0 done;
1 a gate failed or something failed (a JtrError: "jtr CMD: error: ..."); 2 bad
input (a UsageError: "jtr CMD: ..."); 130 interrupted (Ctrl-C or SIGTERM or
SIGHUP: what was measured is kept, marked partial; system/signals.py).
"""
import importlib
import os
import re
import sys

from .. import __version__
from ..errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE, JtrError, UsageError
from ..system import signals
from ..system.paths import probe_path
from .parser import GATE_OPTIONS

# name, one line for `jtr --help`, and where it lives: "exec" for a C program
# (jtr-NAME), else the module under commands/
COMMANDS = [
    ("run", "measure with any probe and say what caused each outlier (the main job)", "run"),
    ("attribute", "charge each outlier of a run to the kernel event that caused it",
     "attribute"),
    ("compare", "is B better or worse than A: percentiles, time lost, causes, with CIs",
     "compare"),
    ("trace", "record the kernel events that steal a CPU (eBPF); --print shows a log",
     "trace"),
    ("null", "time an empty loop millions of times, in runs", "exec"),
    ("gap", "read the clock back to back, log every interruption (like oslat)", "exec"),
    ("clock", "cost and jitter of rdtsc, rdtscp, clock_gettime and friends", "exec"),
    ("wake", "timer wake-up latency on a fixed schedule (like cyclictest)", "exec"),
    ("ping", "round trips at a constant rate through jtr pong", "exec"),
    ("pong", "reflect jtr ping's messages back", "exec"),
    ("pub", "publish at a steady rate over shm, tcp, udp, mcast, unix", "exec"),
    ("sub", "receive from jtr pub: loss, order, rate, latency", "exec"),
    ("send", "time a transport's send calls against an empty loop of the same mean",
     "exec"),
    ("ipc", "shm queues against TCP: 50-byte objects in batches, 1-to-1 and 1-to-3",
     "exec"),
    ("maxrate", "the maximum sustainable rate of a transport: step up, bisect, a table",
     "maxrate"),
    ("duplex", "one endpoint of a two-way run: jtr sub and jtr pub at once, one summary",
     "duplex"),
    ("tune", "apply, verify and revert tuning profiles (tuned format), with a snapshot",
     "tune"),
    ("watch", "the interruptions of an application's CPUs by cause, as Prometheus metrics; "
     "a flight recorder", "watch"),
    ("ab", "does a profile help? baseline runs, apply, tuned runs, revert, compare", "ab"),
    ("advise", "what to change: remedies for the measured causes, ranked; --prove measures "
     "them", "advise"),
    ("ls", "list past results with their headline numbers, newest first", "ls"),
    ("export", "results as HdrHistogram logs (.hlog) or a Prometheus textfile", "export"),
    ("import", "oslat and cyclictest --json results, HdrHistogram logs as jtr results",
     "import_"),
    ("report", "one HTML page of plots and tables of a result, or of two compared",
     "report"),
    ("fleet", "one table and page over many hosts' results; flags the hosts that differ, "
     "and by which cause", "fleet"),
    ("suite", "the standard set (null, clock, gap, send per transport) into one folder",
     "suite"),
    ("help", "the help of a command: jtr help CMD is jtr CMD --help", None),
    ("version", "print the version", None),
]

USAGE = """\
usage: jtr [-h] [--version] COMMAND [OPTIONS]

jtr measures how much jitter a CPU has and which kernel event caused each
outlier.

commands:
{commands}

Run 'jtr COMMAND --help' (or 'jtr help COMMAND') for the options of one command.
Option values have one grammar everywhere: docs/values.md.

examples:
  jtr run                       10 s on the default CPU: summary, causes, results folder
  jtr run -c 1-3 -d 60          a minute on CPUs 1, 2 and 3
  jtr attribute results/latest  explain a run's outliers again (e.g. --slack 2us)
  jtr trace --print | less      the kernel events of the last run, one a line
  jtr gap -n 1G -t clock        a billion clock_gettime loops: the shortest and longest gap
  jtr null -f 99 -c 3           the 100-cycle empty loop at SCHED_FIFO 99
  jtr clock                     what rdtsc, rdtscp and clock_gettime cost here
"""


def usage():
    width = max(len(c[0]) for c in COMMANDS)
    cmds = "\n".join("  %-*s  %s" % (width, name, desc) for name, desc, _ in COMMANDS)
    return USAGE.format(commands=cmds)


def find(name):
    """The table entry of command @name, or UsageError."""
    for entry in COMMANDS:
        if entry[0] == name:
            return entry
    raise UsageError("unknown command '%s'; run 'jtr --help' for the list" % name)


def exec_program(name, args):
    """Hand over to jtr-NAME (never returns)."""
    prog = probe_path(name)
    sys.stdout.flush()
    os.execv(prog, [prog] + list(args))


# the probes whose gates (--max-latency, --max-lost, --junit) the front end judges
# when they run alone (commands/probe.py); jtr run judges every probe's
GATED = ("gap", "wake")
GATES_MODULE = "probe"


def wants_gates(name, args):
    """Does `jtr NAME ARGS` ask for a gate of a probe alone (and not for help)?"""
    if name not in GATED:
        return False
    words = args[:args.index("--")] if "--" in args else list(args)
    if any(w in ("-h", "--help") for w in words):
        return False
    return any(w.split("=")[0] in GATE_OPTIONS for w in words)


def acknowledge(text):
    """@text on stderr at once (a stop signal's acknowledgement): nothing when
    the terminal is gone (SIGHUP). Written to fd 2 itself: a signal can come
    while sys.stderr is writing (a second signal during the first's
    acknowledgement read "RuntimeError: reentrant call inside stderr")."""
    try:
        os.write(2, text.encode("utf-8", "replace"))
    except OSError:
        pass


def run_command(name, args):
    """Parse @args with the command's parser and run it; its exit status."""
    _, _, where = find(name)
    if where == "exec" and wants_gates(name, args):
        where = GATES_MODULE        # judged by the front end (commands/probe.py)
    elif where == "exec" or (name == "trace" and "--print" not in args):
        exec_program(name, args)
    signals.install("jtr " + name, acknowledge)
    module = importlib.import_module("jtrpy.commands." + where)
    parser = module.make_parser("jtr " + name)
    parse = getattr(module, "parse", None)
    opts = parse(parser, args) if parse else parser.parse_args(args)
    opts.argv = list(args)
    return module.run(opts)


def main(argv=None):
    """The whole front end; the exit status. A stop signal that comes once it
    has returned changes nothing (signals.closing)."""
    try:
        return _main(argv)
    finally:
        signals.closing()


def _main(argv):
    argv = sys.argv[1:] if argv is None else list(argv)
    name = argv[0] if argv else None
    prog = "jtr"
    try:
        if not argv:                # a mistake: the list, where mistakes go
            sys.stderr.write(usage())
            return EXIT_USAGE
        if name in ("-h", "--help"):
            sys.stdout.write(usage())
            return 0
        if name in ("version", "--version"):
            print("jtr %s" % __version__)
            return 0
        if name == "help":
            if len(argv) == 1:
                sys.stdout.write(usage())
                return 0
            find(argv[1])
            name, argv = argv[1], argv[1:2] + ["--help"]
        find(name)
        prog = "jtr " + name
        rc = run_command(name, argv[1:])
        sys.stdout.flush()          # a full disk says so here, not at exit
        return rc
    except UsageError as e:
        print("%s: %s" % (prog, e), file=sys.stderr)
        return EXIT_USAGE
    except JtrError as e:
        print("%s: error: %s" % (prog, e), file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("%s: interrupted" % prog, file=sys.stderr)
        return EXIT_INTERRUPTED
    except SystemExit as e:         # argparse after --help
        return e.code if isinstance(e.code, int) else 0
    except BrokenPipeError:
        # the reader went away (jtr ls | head): nothing more to say, and no
        # second error when Python flushes stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as e:
        # a write no layer below took as its own: standard output on a full disk
        # (jtr ls > /dev/full) or a file; one line, and none more at exit
        # the files jtr writes name themselves (system/files.write_atomic): one
        # that does not is standard output
        what = e.filename
        if not what:
            what = "standard output"
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        else:
            what = final_name(str(what))
        try:
            print("%s: error: cannot write %s: %s" % (prog, what, e.strerror or e),
                  file=sys.stderr)
        except OSError:
            pass
        return EXIT_FAILED


def final_name(path):
    """@path named where the user will look for it: a file of a results folder
    still being written is in the hidden .NAME.partial-PID beside it (lib/jtr_out.c,
    results/result.py), which is gone once the write failed: NAME's."""
    return re.sub(r"(^|/)\.([^/]+)\.partial-\d+(?=/)", r"\1\2", path)


def console_main(argv=None):
    """The entry point of the `jtr` script (installed by pip, or the tree's own)."""
    rc = main(argv)
    signals.closing(exiting=True)
    sys.exit(rc)
