"""cli - the jtr front end: one command, subcommands like perf or bpftool.

Measuring subcommands hand over to the C programs (exec, so Ctrl-C, exit
status and setuid behave exactly as if the program had been run directly);
`jtr run` drives the tracer and a probe, attributes, and prints the headline.
"""
import os
import re
import sys

from . import __version__
from .errors import JtrError, UsageError
from .paths import probe_path
from .result import load_result
from .units import fmt_ns  # noqa: F401 (jtr's one duration format, used here and by tests)

USAGE = """\
usage: jtr [--help] [--version] COMMAND [OPTIONS]

jtr measures how much jitter a CPU has and which kernel event caused each
outlier.

commands:
{commands}

Run 'jtr COMMAND --help' for the options of one command.

examples:
  jtr run                       10 s on the default CPU: summary, headline, results folder
  jtr run -c 1-3 -d 60          a minute on CPUs 1, 2 and 3
  jtr attribute results/latest  explain a run's outliers again (e.g. --slack 2us)
  jtr trace --print | less      the kernel events of the last run, one a line
  jtr gap -j 1G -t clock        um_perf -j: a billion clock_gettime loops, min and max gap
  jtr null -f 99 -c 3           the 100-cycle null loop at SCHED_FIFO 99
  jtr clock                     what rdtsc, rdtscp and clock_gettime cost here
"""

RUN_USAGE = """\
usage: jtr run [--no-trace] [--backend KIND] [--slack DUR] [--top N]
               [--trace-buffer SIZE] [--drain-interval DUR]
               [--cross-check [--cross-check-min DUR]] [GAP OPTIONS]

The main job: start the kernel-event tracer on the measured CPU, measure it with
the gap probe (jtr gap), stop the tracer, charge every outlier to the kernel
event that caused it (or to "no kernel event"), write a results folder and print
what was found. With no options it measures the first isolated CPU, or else the
last online CPU, for 10 s. Tracing needs root (or CAP_BPF and CAP_PERFMON);
without it the probe still runs and jtr says what attribution needs.

options of jtr run:
  --no-trace   measure only; no tracer, no attribution
  --backend KIND  ebpf (jtr trace), perf (perf record on the same tracepoints) or
               auto (default: eBPF, else perf when BPF is not available)
  --slack DUR  how long before an outlier an event may start and still be
               charged to it (default {slack}; see docs/attribution.md)
  --top N      worst outliers listed with their causal chains (default 20)
  --trace-buffer SIZE     the tracer's ring buffer (default 8M; see jtr trace -b)
  --drain-interval DUR    how often the tracer drains it (default 100ms)
  --cross-check  also record the scheduler's events with perf sched record (kept
               as sched.data) and compare the attribution with perf sched
               timehist of the same window: which preemptions both see, which
               only one (see jtr attribute --help, docs/attribution.md)
  --cross-check-min DUR   shortest task slice the cross-check reports as missed
               by the attribution (default: the outlier threshold, at least 1us)

Every option of 'jtr gap' is accepted (see 'jtr gap --help'), for example:
  -c LIST      CPUs to measure (one pinned thread each; the tracer follows)
  -d DURATION  how long (10s, 500ms, 2m; a bare number is in seconds)
  -f PRIO      SCHED_FIFO priority 1-99
  -o DIR       results folder (default results/DATE-HOST-gap)

The folder holds result.json (with an "attribution" section), summary.txt,
outliers.csv, events.bin and trace.json (the tracer's log) and attribution.txt;
with --cross-check also sched.data and a "cross_check" section.

examples:
  sudo jtr run
  sudo jtr run -c 1 -d 30 -o before-tuning
  sudo jtr run --cross-check -c 1 -d 10
  jtr run --no-trace -d 5
"""

ATTRIBUTE_USAGE = """\
usage: jtr attribute [--events PATH] [--slack DUR] [--top N] [--json] [--no-write]
                     [--cross-check [--sched-data PATH] [--cross-check-min DUR]]
                     RESULTS_DIR

Charge each outlier of a gap run to the kernel events the tracer saw on that
CPU in its time window, print the causes as a table, and store them in
RESULTS_DIR/result.json ("attribution") and RESULTS_DIR/attribution.txt.

  --events PATH  the tracer's events.bin or its folder (default RESULTS_DIR)
  --slack DUR    how long before an outlier an event may start and still be
                 charged to it (default {slack})
  --top N        worst outliers listed with their chains (default 20)
  --json         print the attribution as JSON instead of the table (with
                 --cross-check: {{"attribution": ..., "cross_check": ...}})
  --no-write     print only; change nothing in RESULTS_DIR
  --cross-check  compare the attribution with perf sched timehist of the same
                 window and CPUs (RESULTS_DIR/sched.data, recorded by jtr run
                 --cross-check): outliers charged to a task timehist does not
                 show, task slices timehist shows that were charged to something
                 else, and the totals; stored as "cross_check" in result.json.
                 Exit status 0 when the check ran, disagreements or not
  --sched-data PATH       perf sched record data to compare with
                 (default RESULTS_DIR/sched.data)
  --cross-check-min DUR   shortest task slice reported as missed by the
                 attribution (default: the outlier threshold, at least 1us)

examples:
  jtr attribute results/latest
  jtr attribute --slack 2us --top 5 results/20261122-041305-vm-gap
  jtr attribute --cross-check results/latest
  sudo jtr trace -c 1 -d 30 -o tr & jtr gap -c 1 -d 20 -o g; wait; jtr attribute --events tr g
"""

TRACE_PRINT_USAGE = """\
usage: jtr trace --print [RESULTS_DIR | events.bin]

Print the tracer's binary event log for people, one event a line, time in
seconds from the start of the trace (default: results/latest).
"""


def parse_duration_ns(opt, s, bare_unit_ns=1000):
    """'5us', '2ms', '1.5s', '800ns' or a bare number in @bare_unit_ns; UsageError."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(ns|us|ms|s)?", s or "")
    if not m:
        raise UsageError("%s %s: not a duration; use a number with ns, us, ms or s, e.g. 5us"
                         % (opt, s))
    unit = {"ns": 1, "us": 1000, "ms": 10**6, "s": 10**9, None: bare_unit_ns}[m.group(2)]
    return int(round(float(m.group(1)) * unit))


def parse_count(opt, s, lo, hi):
    """An integer in [lo, hi]; UsageError naming the value and the range."""
    if not re.fullmatch(r"\d+", s or "") or not lo <= int(s) <= hi:
        raise UsageError("%s %s: use a whole number from %d to %d" % (opt, s, lo, hi))
    return int(s)


def attribution_option(args, i, opts):
    """--slack DUR or --top N at args[i] into @opts; True if it was one (its value
    is args[i + 1])."""
    a = args[i]
    if a == "--slack":
        opts["slack_ns"] = parse_duration_ns(a, take_value(args, i, a))
    elif a == "--top":
        opts["top"] = parse_count(a, take_value(args, i, a), 0, 100000)
    else:
        return False
    return True


def take_value(args, i, opt):
    """The value after option @opt at args[i], or UsageError."""
    if i + 1 >= len(args):
        raise UsageError("%s needs a value; see --help" % opt)
    return args[i + 1]


def _exec_probe(name):
    def run(args):
        prog = probe_path(name)
        sys.stdout.flush()
        os.execv(prog, [prog] + args)
    return run


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
        pmu = r.get("pmu")
        if pmu:
            per = pmu.get("per_million_loops", {})
            lines.append("CPU %s hardware counters: IPC %.2f; per million loops %.0f cache "
                         "misses, %.0f dTLB misses (a slowed CPU, not a stolen one, shows here)"
                         % (r.get("cpu"), pmu.get("ipc", 0), per.get("cache_misses", 0),
                            per.get("dtlb_load_misses", 0)))
    if any("pmu" in r and r["pmu"] is None for r in result.get("runs", [])):
        why = next((w for w in result.get("warnings", []) if w.startswith("no hardware")), None)
        if why:
            lines.append("hardware counters: none %s" % why[len("no hardware counters "):])
    if result.get("partial"):
        lines.append("partial: the run was stopped early; the numbers cover what was measured")
    return lines


def default_slack_ns():
    from .attribute import DEFAULT_SLACK_NS
    return DEFAULT_SLACK_NS


def cross_check_option(args, i, opts):
    """--cross-check or --cross-check-min DUR at args[i] into @opts (a dict that
    becomes the cross_check argument); how many args it took (0: not one)."""
    a = args[i]
    if a == "--cross-check":
        opts.setdefault("min_ns", None)
        return 1
    if a == "--cross-check-min":
        opts["min_ns"] = parse_duration_ns(a, take_value(args, i, a))
        return 2
    return 0


def cmd_run(args):
    from . import runjob
    from .crosscheck import record_unavailable

    if any(a in ("-h", "--help") for a in args):
        sys.stdout.write(RUN_USAGE.format(slack=fmt_ns(default_slack_ns())))
        return 0
    trace, att, rest, tracer_args, backend, xc = True, {}, [], [], "auto", {}
    cross = False
    i = 0
    while i < len(args):
        a = args[i]
        n = cross_check_option(args, i, xc)
        if n:
            cross = cross or a == "--cross-check"
            i += n
            continue
        if a == "--no-trace":
            trace = False
        elif a == "--backend":
            backend = take_value(args, i, a)
            if backend not in ("auto", "ebpf", "perf"):
                raise UsageError("--backend %s: use ebpf, perf or auto" % backend)
            i += 1
        elif a in ("--trace-buffer", "--drain-interval"):
            tracer_args += [{"--trace-buffer": "-b", "--drain-interval": "-i"}[a],
                            take_value(args, i, a)]
            i += 1
        elif attribution_option(args, i, att):
            i += 1
        else:
            rest.append(a)
        i += 1
    if xc and not cross:
        raise UsageError("--cross-check-min goes with --cross-check; see 'jtr run --help'")
    if cross:
        if not trace:
            raise UsageError("--cross-check compares the attribution with perf: it needs "
                             "tracing, drop --no-trace")
        why = record_unavailable()
        if why:
            raise UsageError(why)
    rc, outdir, lines, why = runjob.run(rest, trace=trace, tracer_args=tracer_args,
                                        backend=backend, cross_check=xc if cross else None,
                                        **att)
    if rc != 0 or not outdir:
        return rc
    print()
    for line in headline(load_result(outdir)):
        print(line)
    if lines:
        print()
        for line in lines:
            print(line)
    else:
        print("causes: not attributed: %s" % why)
        if cross:
            print("cross-check: not run: there is no attribution to compare")
    return 0


def cmd_attribute(args):
    from .runjob import attribute_into, attribution_of
    from .attribute import format_table
    from .crosscheck import format_lines

    if any(a in ("-h", "--help") for a in args):
        sys.stdout.write(ATTRIBUTE_USAGE.format(slack=fmt_ns(default_slack_ns())))
        return 0
    events, kw, as_json, write, dirs, xc, cross = None, {}, False, True, [], {}, False
    i = 0
    while i < len(args):
        a = args[i]
        n = cross_check_option(args, i, xc)
        if n:
            cross = cross or a == "--cross-check"
            i += n
            continue
        if a == "--sched-data":
            xc["sched_data"] = take_value(args, i, a)
            i += 1
        elif a == "--events":
            events = take_value(args, i, a)
            i += 1
        elif attribution_option(args, i, kw):
            i += 1
        elif a == "--json":
            as_json = True
        elif a == "--no-write":
            write = False
        elif a.startswith("-"):
            raise UsageError("unknown option '%s'; see 'jtr attribute --help'" % a)
        else:
            dirs.append(a)
        i += 1
    if len(dirs) != 1:
        raise UsageError("give one results folder (the gap run to explain); see "
                         "'jtr attribute --help'")
    d = dirs[0]
    if not os.path.isdir(d):
        raise UsageError("%s: not a results folder" % d)
    if events is not None and not os.path.exists(events):
        raise UsageError("--events %s: no such file or folder" % events)
    if xc and not cross:
        raise UsageError("--sched-data and --cross-check-min go with --cross-check; see "
                         "'jtr attribute --help'")
    xc = dict(xc, sched_data=xc.get("sched_data")) if cross else None
    if write and not as_json:
        lines = attribute_into(d, events_path=events, cross_check=xc, **kw)
    else:
        a, check = attribution_of(d, events_path=events, cross_check=xc, **kw)
        cc = check(load_result(d)) if check else None
        if as_json:
            import json
            print(json.dumps({"attribution": a, "cross_check": cc} if cc else a, indent=2))
            return 0
        lines = format_table(a)
        if cc:
            lines += [""] + format_lines(cc, a["outliers"].get("start_ns") or 0)
    for line in lines:
        print(line)
    return 0


def cmd_trace(args):
    if "--print" not in args:
        return _exec_probe("trace")(args)
    from .events import format_event, read_events

    if any(a in ("-h", "--help") for a in args):
        sys.stdout.write(TRACE_PRINT_USAGE)
        return 0
    paths = [a for a in args if a != "--print"]
    if any(p.startswith("-") for p in paths) or len(paths) > 1:
        raise UsageError("--print takes one results folder or events.bin; see "
                         "'jtr trace --print --help'")
    log = read_events(paths[0] if paths else os.path.join("results", "latest"))
    for ev in log.iter_events():
        print(format_event(ev, log.meta))
    return 0


def cmd_compare(args):
    from .compare import main as compare_main
    return compare_main(args)


def cmd_version(args):
    print("jtr %s" % __version__)
    return 0


COMMANDS = [
    ("run", "measure a CPU and print what was found (the main job)", cmd_run),
    ("attribute", "charge each outlier of a run to the kernel event that caused it",
     cmd_attribute),
    ("compare", "is B better or worse than A: percentiles, time lost, causes, with CIs",
     cmd_compare),
    ("trace", "record the kernel events that steal a CPU (eBPF); --print shows a log",
     cmd_trace),
    ("null", "time an empty loop millions of times (jtr_null, tst_clock.sh)",
     _exec_probe("null")),
    ("gap", "read the clock back to back, log every interruption (oslat, um_perf -j)",
     _exec_probe("gap")),
    ("clock", "cost and jitter of rdtsc, rdtscp, clock_gettime and friends",
     _exec_probe("clock")),
    ("ping", "round trips at a constant rate through jtr pong (um_lat)", _exec_probe("ping")),
    ("pong", "reflect jtr ping's messages back", _exec_probe("pong")),
    ("pub", "publish at a steady rate over shm, tcp, udp, mcast, unix (um_perf)", _exec_probe("pub")),
    ("sub", "receive from jtr pub: loss, order, rate, latency", _exec_probe("sub")),
    ("send", "time a transport's send calls against a null loop of the same mean (jtr_sock)",
     _exec_probe("send")),
    ("ipc", "shm queues against TCP: 50-byte objects in batches, 1-to-1 and 1-to-3",
     _exec_probe("ipc")),
    ("maxrate", "the maximum sustainable rate of a transport: step up, bisect, a table",
     lambda args: __import__("jtrpy.maxrate", fromlist=["main"]).main(args)),
    ("tune", "apply, verify and revert tuning profiles (tuned format), with a snapshot",
     lambda args: __import__("jtrpy.tune.cli", fromlist=["cmd_tune"]).cmd_tune(args)),
    ("ab", "does a profile help? baseline runs, apply, tuned runs, revert, compare",
     lambda args: __import__("jtrpy.tune.ab", fromlist=["main"]).main(args)),
    ("ls", "list past results with their headline numbers, newest first",
     lambda args: __import__("jtrpy.ls", fromlist=["main"]).main(args)),
    ("export", "results as HdrHistogram logs (.hlog) or a Prometheus textfile",
     lambda args: __import__("jtrpy.export", fromlist=["main"]).main(args)),
    ("import", "oslat and cyclictest --json results, HdrHistogram logs as jtr results",
     lambda args: __import__("jtrpy.importer", fromlist=["main"]).main(args)),
    ("report", "one HTML page of plots and tables of a result, or of two compared",
     lambda args: __import__("jtrpy.report", fromlist=["main"]).main(args)),
    ("suite", "the standard set (null, clock, gap, send per transport) into one folder",
     lambda args: __import__("jtrpy.suite", fromlist=["main"]).main(args)),
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
