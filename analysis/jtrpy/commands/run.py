# SPDX-License-Identifier: GPL-2.0-only
"""run - jtr run [PROBE]: measure with the tracer beside the probe, and say what
caused each outlier. Declares the options it needs itself and hands every other
one to the probe as it is (as perf mem record hands its own to perf record);
drivers/run.py's run_job runs and concludes it."""
import sys

from ..attribution.attribute import DEFAULT_SLACK_NS
from ..cli.parser import (
    OUTPUT_RULE,
    Count,
    CpuList,
    Duration,
    Int,
    JtrParser,
    Size,
    add_attribution_options,
    add_backend,
    add_cross_check_options,
    add_gates,
    add_output,
    add_partner_cpus,
    check_junit_path,
    shared,
)
from ..cli.progress import Progress
from ..drivers.app import app_job
from ..drivers.run import run_job
from ..errors import UsageError
from ..render import gates as gate_text
from ..render.runs import run_lines
from ..results import probes as P
from ..system.cpus import online_cpus
from ..units import fmt_ns

DESCRIPTION = """\
The main job: start the kernel-event tracer on every CPU the measurement uses,
run the probe, stop the tracer, charge every outlier to the kernel event that
caused it (or to "no kernel event"), write one results folder and print what was
found: the headline first (what ran where, whether it is a valid measurement, a
table of the runs' p50, p99, p99.99, max and outliers, the top causes), then the
probe's own table and the causes. PROBE is gap (the default: with no options it
measures the first isolated CPU, or else the last online CPU, for 10 s), wake
(timer wake-ups like cyclictest: every late one is taken apart into timer IRQ
latency, the timer IRQ, interference, the blocking thread, the switch and the
return to user space), null, send (its send runs and its null runs are
attributed apart, and the difference per cause is printed), ping (jtr run starts
jtr pong on --pong-cpu; each slow round trip is charged on both ends, with the
phase it sat in) or pub (jtr run starts jtr sub on --sub-cpu; each slow message
is charged on both ends). jtr run pins every measuring thread (-c, or the
probe's own CPU option, else the default CPU). 'jtr run app --func
BINARY:SYMBOL' times every call of a function of your own program instead, and
explains each slow one (see 'jtr run app --help'). Tracing needs root (or CAP_BPF
and CAP_PERFMON); without it the probe still runs and jtr says what attribution
needs."""

NOTES = """\
jtr run's own options may stand anywhere on the line; every other option goes to
the probe as it is (see 'jtr gap --help', 'jtr ping --help', ...), for example:
  -d, --duration DURATION  gap: how long (10s, 500ms, 2m; a bare number is in seconds)
  -f, --fifo PRIO          SCHED_FIFO priority 1-99 (ping, pub: both ends)
  -T udp -1 -r 10K -n 80K  ping: transport, one thread, rate, messages
For ping the folder is ping's, with pong's result in pong/; for pub it is the
subscriber's (it measures the latency), with pub's result in pub/.

The folder holds result.json (with an "attribution" section), summary.txt,
outliers.csv, events.bin and trace.json (the tracer's log) and attribution.txt;
with --cross-check also sched.data and a "cross_check" section. Ctrl-C (or
SIGTERM) stops the probe early: what it measured is attributed and kept, marked
partial, and jtr run exits 130.

Gates for CI: --max-latency and --max-lost are judged per measured CPU on the
result's quantity (gap's loop, wake's latency, ping's round trip from the
intended send time, sub's message latency, send's send call); --max-lost only
where a sample is CPU time (gap, null, send), not for a latency (wake, ping,
pub). When one is
exceeded the whole folder is still written, with a "gates" section in
result.json, a line per failed gate comes last (value, limit, top causes) and
the exit status is 1 (130 when interrupted). The causes of a failed
--max-latency are those of the outliers beyond the limit; of a failed
--max-lost, those of the CPU's outliers, most time first. --junit FILE writes
a JUnit XML report (a testcase per gate per CPU, one passing "run" testcase
without gates), also when every gate passes; docs/fleet.md shows one."""

EXAMPLES = """\
  sudo jtr run
  sudo jtr run -c 1 -d 30 -o before-tuning
  sudo jtr run wake -c 1 -f 80 --cpu-dma-latency 0
  sudo jtr run send -T udp -c 1 -n 500K
  sudo jtr run ping -T udp -1 -c 1 -r 10K -n 80K --pong-cpu 0
  sudo jtr run pub -T shm -b -c 1 -r 100K -n 1M --sub-cpu 0
  sudo jtr run --cross-check -c 1 -d 10
  sudo jtr run wake -c 1 --max-latency 100us --junit ci.xml
  sudo jtr run app --func ./my-app:on_tick --pid $(pgrep my-app) -d 30
  sudo jtr run -c 1 -d 30 --max-latency 50us --max-lost 0.1% --junit ci.xml
  jtr run --no-trace -d 5"""


def make_parser(prog):
    p = JtrParser(prog, usage="%(prog)s [PROBE] [OPTIONS] [PROBE OPTIONS]",
                  description=DESCRIPTION, notes=NOTES, examples=EXAMPLES)
    p.add_argument(*shared("-c"), metavar="LIST", type=CpuList(online_cpus),
                   help="CPUs to measure (gap, wake: one pinned thread each; the other "
                        "probes measure one); the tracer follows (default: the probe's own CPU "
                        "option, else the first isolated CPU, else the last online one)")
    add_partner_cpus(p, online_cpus)
    p.add_argument("--partner-netns", metavar="NAME",
                   help="ping, pub: start jtr pong or jtr sub in this network namespace "
                        "(ip netns exec NAME; give ping or pub the address it has there)")
    add_output(p, "results folder (default results/DATE-HOST-PROBE; sub for pub): "
               + OUTPUT_RULE)
    p.add_argument("--no-trace", action="store_true",
                   help="measure only; no tracer, no attribution")
    add_backend(p)
    add_attribution_options(p, fmt_ns(DEFAULT_SLACK_NS))
    p.add_argument("--trace-buffer", metavar="SIZE", type=Size(4096, 1 << 34),
                   help="the tracer's ring buffer (default: sized from the event rate; "
                        "see jtr trace -b)")
    p.add_argument("--drain-interval", metavar="DUR", type=Duration(10 ** 6, 10 ** 10),
                   help="how often the tracer drains it, 1ms to 10s (default 100ms)")
    add_cross_check_options(p)
    add_gates(p)
    return p


APP_DESCRIPTION = """\
Time every call of a function of an unmodified program, and explain each slow
one. A uprobe and a uretprobe on --func BINARY:SYMBOL (an executable or a
shared library: libc.so.6:malloc) time each call in the kernel, per thread,
with the CPU it entered on; every call goes into that CPU's histogram (the
distribution, like funclatency), and each one above the threshold is an outlier
attributed like a probe's: what ran on the thread's CPU during the call
(interrupts, softirqs, the tick, IPIs with their senders, other tasks, page
faults) and where the thread itself waited: the system call it blocked in and
the task that woke it ("blocked in futex → woken by worker (pid 812, CPU 0)
after 300.1 us"). Give the process with --pid, or start the program after --:
it is held until the probes are in, runs as the user who ran sudo, and the run
ends when it exits (or at -d: it is then told to stop). Where the program has
USDT probes, --usdt BINARY:PROVIDER:START,END times the span from one to the
other on each thread instead. The tracer records on the CPUs the process may
run on (-c to choose). Needs root, or CAP_BPF and
CAP_PERFMON."""

APP_NOTES = """\
The threshold: calls above --threshold are outliers; by default the first
--warmup calls on each CPU (100) are not recorded and their shortest times 8, at
least 1 us, is the threshold (jtr wake's rule). A function the compiler inlined
everywhere has no copy to attach to: jtr says so (nm lists the functions there
are; __attribute__((noinline)) keeps one). The folder holds result.json (tool
app: a run per CPU the calls entered on, with its histogram), outliers.csv (the
slow calls: CPU, entry, length), summary.txt, events.bin, trace.json and
attribution.txt; jtr report, compare, ab and advise read it as any result."""

APP_EXAMPLES = """\
  sudo jtr run app --func ./my-app:on_market_data --pid $(pgrep my-app) -d 30
  sudo jtr run app --func libc.so.6:malloc --pid 812 --threshold 50us
  sudo jtr run app --func ./my-app:on_tick -c 2 -- ./my-app --config prod.yaml
  sudo jtr run app --usdt ./my-app:myapp:request_start,request_end --pid 812
  sudo jtr run app --func ./my-app:on_tick -- ./my-app --max-latency 200us --junit ci.xml"""


def make_app_parser(prog):
    p = JtrParser(prog, usage="%(prog)s (--func BINARY:SYMBOL | --usdt "
                  "BINARY:PROVIDER:START,END) (--pid PID | -- CMD [ARGS...]) [OPTIONS]",
                  description=APP_DESCRIPTION, notes=APP_NOTES, examples=APP_EXAMPLES)
    p.add_argument("--func", metavar="BINARY:SYMBOL",
                   help="the function to time: BINARY a path, a program on PATH or a "
                        "library's name (libc.so.6; with --pid, the file the process maps)")
    p.add_argument("--usdt", metavar="BINARY:PROVIDER:START,END",
                   help="instead of --func, where the program has USDT probes: a call is the "
                        "time from the probe START to the probe END on one thread")
    p.add_argument("--pid", metavar="PID", type=Int(1, 1 << 30),
                   help="the process whose calls are timed (its threads' waits and wakers "
                        "are followed); the run ends when it exits")
    p.add_argument(*shared("-c"), metavar="LIST", type=CpuList(online_cpus),
                   help="CPUs to trace (default: every CPU the process may run on)")
    p.add_argument(*shared("-d"), metavar="DURATION", type=Duration(10 ** 6, 7 * 86400 * 10 ** 9),
                   help="stop after this long (default: when the program exits, or "
                        "Ctrl-C; with --pid 10s)")
    p.add_argument("--threshold", metavar="DUR", type=Duration(1, 3600 * 10 ** 9),
                   help="calls longer than this are outliers (default: 8 x the shortest of "
                        "the warm-up's, at least 1us)")
    p.add_argument("--warmup", metavar="N", type=Count(0, 1000000),
                   help="calls per CPU before recording; they set the default threshold "
                        "(default 100)")
    p.add_argument("--max-outliers", metavar="N", type=Count(0, 10 ** 8),
                   help="slow calls logged per CPU (default 1000000; the rest are counted)")
    add_output(p, "results folder (default results/DATE-HOST-app): " + OUTPUT_RULE)
    p.add_argument(*shared("-q"), action="store_true",
                   help="the tracer's own summary left out (jtr run's report stays)")
    add_attribution_options(p, fmt_ns(DEFAULT_SLACK_NS))
    p.add_argument("--trace-buffer", metavar="SIZE", type=Size(4096, 1 << 30),
                   help="the tracer's ring buffer (see jtr trace -b)")
    p.add_argument("--drain-interval", metavar="DUR", type=Duration(10 ** 6, 10 ** 10),
                   help="how often the tracer drains it, 1ms to 10s (default 100ms)")
    add_gates(p, lost=False)
    return p


def parse_app(args):
    """jtr run app's options, and the command after --."""
    words = list(args)
    cmd = []
    if "--" in args:
        k = args.index("--")
        args, cmd = args[:k], args[k + 1:]
    opts = make_app_parser("jtr run app").parse_args(args)
    opts.cmd = cmd
    opts.probe = "app"
    opts.cross_check = False
    opts.command = ["jtr", "run", "app"] + words
    if (opts.pid is None) == (not cmd):
        raise UsageError("give the process with --pid PID, or the program to start after "
                         "--, e.g. jtr run app --func ./my-app:on_tick -- ./my-app"
                         if not cmd else "--pid and -- CMD: give one of them")
    if (opts.func is None) == (opts.usdt is None):
        raise UsageError("give the function with --func BINARY:SYMBOL, or a USDT pair with "
                         "--usdt BINARY:PROVIDER:START,END" if opts.func is None else
                         "--func and --usdt: give one of them")
    check_junit_path(opts.junit)
    return opts


def app_options(opts):
    """app_job's settings (drivers/app.py) from the parsed options."""
    duration = opts.duration if opts.duration is not None else \
        (10 * 10 ** 9 if opts.pid is not None else None)
    return {"probe": "app", "func": opts.func, "usdt": opts.usdt, "pid": opts.pid,
            "cmd": opts.cmd, "cpus": opts.cpus,
            "duration_ns": duration, "threshold_ns": opts.threshold,
            "warmup": opts.warmup, "max_outliers": opts.max_outliers,
            "output": opts.output, "slack_ns": opts.slack, "top": opts.top,
            "trace_buffer": opts.trace_buffer, "drain_interval": opts.drain_interval,
            "quiet": opts.quiet,
            "gates": (opts.max_latency, None), "junit": opts.junit,
            "command": " ".join(opts.command), "argv": list(opts.command)}


def parse(parser, args):
    """jtr run's own options; the rest, with the CPUs and the folder, for the probe."""
    if args and args[0] == "app":
        return parse_app(args[1:])
    probe, words = "gap", list(args)
    if args and args[0] in P.RUN_PROBES:
        probe, args = args[0], args[1:]
    elif args and not args[0].startswith("-"):
        raise UsageError("%s: not a probe jtr run knows; give one of %s (default gap), or "
                         "app" % (args[0], ", ".join(P.RUN_PROBES)))
    opts, rest = parser.parse_known_args(args)
    opts.probe = probe
    opts.command = ["jtr", "run"] + words
    if opts.partner_netns is not None and not P.BY_TOOL[probe].partner:
        raise UsageError("--partner-netns goes with ping and pub: %s has no other end" % probe)
    if opts.no_trace:
        # the tracer's and the attribution's options mean nothing without them
        given = [o for o in ("--backend", "--slack", "--top", "--by", "--trace-buffer",
                             "--drain-interval", "--cross-check-min")
                 if any(a == o or a.startswith(o + "=") for a in args)]
        if given:
            raise UsageError("%s %s no effect with --no-trace (nothing is traced or "
                             "attributed); drop one of them"
                             % (" and ".join(given), "has" if len(given) == 1 else "have"))
    if opts.max_lost is not None and P.GATE_LOST not in P.BY_TOOL[probe].gates:
        raise UsageError("--max-lost: jtr run %s measures a latency, not time lost (its "
                         "outliers overlap: their sum is no share of the run); gate it "
                         "with --max-latency" % probe)
    check_junit_path(opts.junit)
    opts.probe_args = list(rest) + (["-o", opts.output] if opts.output is not None else [])
    return opts


def options(opts):
    """The job's settings (drivers/run.py run_job) from the parsed options."""
    if opts.cross_check_min is not None and not opts.cross_check:
        raise UsageError("--cross-check-min goes with --cross-check; see 'jtr run --help'")
    if opts.cross_check and opts.no_trace:
        raise UsageError("--cross-check compares the attribution with perf: it needs "
                         "tracing, drop --no-trace")
    return {"probe": opts.probe, "probe_args": opts.probe_args, "cpus": opts.cpus,
            "pong_cpu": opts.pong_cpu, "sub_cpu": opts.sub_cpu,
            "partner_netns": opts.partner_netns, "trace": not opts.no_trace,
            "trace_buffer": opts.trace_buffer, "drain_interval": opts.drain_interval,
            "backend": opts.backend, "slack_ns": opts.slack, "top": opts.top,
            "split": opts.by == "pid",
            "cross_check": {"min_ns": opts.cross_check_min} if opts.cross_check else None,
            "gates": (opts.max_latency, opts.max_lost), "junit": opts.junit,
            "command": " ".join(opts.command)}


def run(opts):
    if opts.probe == "app":
        job, rc = app_job(app_options(opts), Progress("jtr run app", sys.stderr))
    else:
        job, rc = run_job(options(opts), Progress("jtr run", sys.stderr))
    for n in job.notices:
        print("jtr run: %s" % n if not n.startswith("jtr ") else n, file=sys.stderr)
    if job.result is None:
        # bad input to the probe (exit 2) did nothing: no report either, only
        # what the probe printed
        sys.stdout.write(job.detail)
        return rc
    for line in run_lines(job.result, job.detail, job.lines, job.why, opts.cross_check):
        print(line)
    if job.cases:
        print()
        for line in gate_text.lines(job.cases):
            print(line)
    if opts.junit:
        print("junit: %s" % opts.junit)
    sys.stdout.flush()
    if job.interrupted:
        print("jtr run: interrupted; partial results in %s/" % job.result.folder,
              file=sys.stderr)
        return rc
    for line in gate_text.failure_lines(job.cases, "jtr run"):
        print(line, file=sys.stderr)
    return rc
