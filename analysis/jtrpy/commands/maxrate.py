# SPDX-License-Identifier: GPL-2.0-only
"""maxrate - jtr maxrate: the maximum sustainable rate of a transport, per
message size, or the latency at given rates."""
import sys

from ..cli.parser import (
    Choice,
    Count,
    CountList,
    Duration,
    JtrParser,
    Percent,
    ShellSplit,
    add_output,
    add_sub_pub_cpus,
    shared,
)
from ..drivers.maxrate import maxrate_job
from ..errors import UsageError
from ..render import maxrate as table
from ..vocab import TRANSPORTS

DESCRIPTION = """\
Find the maximum sustainable message rate of a transport: run 'jtr sub' and
'jtr pub' at a rate for one step, double the rate while the steps pass, halve it
while they fail, then bisect between the last good and the first bad rate until
they are within --tolerance. The answer is the highest rate that passed. A step
passes (--method seed, the default: the procedure of the tools jtr replaces,
which fail a rate on loss or on a send that would block) when
  - nothing is lost and both programs finish normally (exit 0, end of stream),
  - no send found the transport full and had to wait for room (a full shm
    ring or socket buffer: their EWOULDBLOCK),
  - the publisher achieved the rate asked, within --slack (it catches up
    without skipping, so a sender too slow to keep the schedule falls short),
  - the subscriber received at the rate asked, within --slack (it kept up).
--method late also fails a step where more than --max-late of the sends found
their time already past: a stricter rule, for a sender that must keep its
schedule message by message (on a small or shared host it measures how much
CPU the pacing loop gets as much as the transport).
--sizes runs the search for each message size and ends with one table: size,
max rate, MB/s and the figures of the step that passed there. --rates runs no
search: one step at each rate given (for each size), its subscriber measuring
the latency, and ends with one table: rate asked, achieved (the subscriber's
rate), lost, min, average, p50, p99, p99.9 and max latency from the intended
send time, and the step's verdict."""

NOTES = """\
The subscriber of a search runs in fast mode (-f: counts and order, no
latency); that of a rate sweep measures latency, which costs it time per
message. Every step has a time limit; Ctrl-C (or SIGTERM, SIGHUP) stops, keeps
the sizes and rates that finished and prints the tables so far. Exit status 0
with an answer (for every size; a sweep that ran every step), 1 if no rate
passed (for a size) or a program would not start, 2 for bad options, 130 when
interrupted."""

EXAMPLES = """\
  jtr maxrate -T shm                       shm ring, 64-byte messages, 2 s steps
  jtr maxrate -T udp -m 700 --from 50K -d 5
  jtr maxrate -T tcp -c 1,0 --to 5M        pinned, at most 5M msgs/s
  jtr maxrate -T udp -d 0.5 --sub '--max-rate 20K'   a receiver capped at 20K/s
  jtr maxrate -T shm --sizes 32,64,128,500,1500       the max rate per size
  jtr maxrate -T udp --method late --max-late 10      a sender that keeps its schedule
  jtr maxrate -T udp --rates 10K,50K,100K -d 5        latency at each rate
  jtr maxrate -T shm --sizes 100,500 --rates 250K,1M  latency per size and rate"""

def make_parser(prog):
    p = JtrParser(prog, usage="%(prog)s [OPTIONS]", description=DESCRIPTION, notes=NOTES,
                  examples=EXAMPLES)
    p.add_argument(*shared("-T"), metavar="KIND", type=Choice(*TRANSPORTS), default="udp",
                   help="%s (default udp)" % ", ".join(TRANSPORTS))
    p.add_argument(*shared("-P"), metavar="ADDR",
                   help="the transport's address (see 'jtr pub --help')")
    p.add_argument("--from", metavar="RATE", dest="from_hz", type=Count(1, 10 ** 9),
                   help="first rate tried, msgs/s (default 10K)")
    p.add_argument("--to", metavar="RATE", dest="to_hz", type=Count(1, 10 ** 9),
                   help="highest rate tried (default 100M); passing there answers \">= RATE\"")
    p.add_argument("--rates", metavar="LIST", type=CountList(1, 10 ** 9, "10K,50K,100K"),
                   help="no search: a step at each of these rates (msgs/s, comma-separated), "
                        "the subscriber measuring latency; one table of the latency at each")
    p.add_argument(*shared("-d", "--step", "--step-s"), metavar="DUR", dest="step_ns",
                   type=Duration(10 ** 8, 3600 * 10 ** 9), default=2 * 10 ** 9,
                   help="length of each step, measured, 100ms to 1h (default 2s); a tenth "
                        "more is sent first as warm-up")
    p.add_argument(*shared("-m"), metavar="BYTES", type=Count(24, 1 << 24),
                   help="message length, header included (default 64, from 24; below 32 a "
                        "message carries no intended send time)")
    p.add_argument("--sizes", metavar="LIST", type=CountList(24, 1 << 24, "64,256,1500"),
                   help="message lengths, comma-separated: the search (or --rates) for each "
                        "one in turn, one table of the max rate per size")
    p.add_argument("-b", "--busy", action="store_true", help="busy-poll receive")
    add_sub_pub_cpus(p, "the subscriber's receiving thread", "the publisher's sending thread")
    p.add_argument("--tolerance", metavar="PCT", type=Percent(0.1, 100), default=5.0,
                   help="stop bisecting when bad and good are this close (default 5)")
    p.add_argument("--slack", metavar="PCT", type=Percent(0, 50), default=3.0,
                   help="achieved rates may fall this far short of the rate asked (default 3)")
    p.add_argument("--method", metavar="NAME", type=Choice("seed", "late"),
                   help="what fails a step: seed (the default: loss, a send that waited "
                        "for room, a rate not kept) or late (also more than --max-late "
                        "of the sends late; the default when --max-late is given)")
    p.add_argument("--max-late", metavar="PCT", type=Percent(0, 100),
                   help="with --method late: most sends that may find their time past "
                        "(default 50; a sender that cannot keep the schedule is late nearly "
                        "always, one that was descheduled a while catches up late for a bit)")
    p.add_argument("--retries", metavar="N", type=Count(0, 10), default=1,
                   help="run a failed step again up to N times before its rate counts as "
                        "failed (default 1: on a shared machine one step can fail because "
                        "another program took the CPU)")
    p.add_argument("--max-steal", metavar="PCT", type=Percent(0, 100), default=5.0,
                   help="a step that fails while the hypervisor stole more than this share "
                        "of the CPUs (/proc/stat steal) measured the host, not the "
                        "transport: it is run again without using up a retry, at most 3 "
                        "times per rate (default 5)")
    p.add_argument("--pub", metavar="OPTS", type=ShellSplit(), action="extend", default=[],
                   help="more options for every jtr pub (one shell-quoted string)")
    p.add_argument("--sub", metavar="OPTS", type=ShellSplit(), action="extend", default=[],
                   help="more options for every jtr sub, e.g. --sub '--max-rate 50K'")
    add_output(p, "results folder (default results/DATE-HOST-maxrate): maxrate.json and per "
                  "step NN-RATE/pub/ and NN-RATE/sub/ (their result.json; NN-RATE-SIZEB "
                  "with several --sizes) with the programs' output in *.log; a new folder, "
                  "whose parent must exist")
    return p


def options(opts):
    """The search's settings (drivers/maxrate.py) from the parsed options."""
    if opts.len is not None and opts.sizes:
        raise UsageError("-m %d and --sizes: give the sizes in --sizes only" % opts.len)
    if opts.rates and (opts.from_hz or opts.to_hz):
        raise UsageError("%s with --rates: a rate sweep runs the rates given, it does not "
                         "search; leave %s out" % (("--from", "--to")[opts.from_hz is None],
                                                   ("--from", "--to")[opts.from_hz is None]))
    from_hz = 10000 if opts.from_hz is None else opts.from_hz
    to_hz = 10 ** 8 if opts.to_hz is None else opts.to_hz
    if from_hz > to_hz:
        raise UsageError("--from %d is above --to %d" % (from_hz, to_hz))
    sizes = opts.sizes or [64 if opts.len is None else opts.len]
    method = opts.method or ("late" if opts.max_late is not None else "seed")
    if method == "seed" and opts.max_late is not None:
        raise UsageError("--max-late %g with --method seed: the seeds' method does not look "
                         "at late sends; give --method late, or leave --max-late out"
                         % opts.max_late)
    return {"kind": opts.transport, "addr": opts.addr, "from": from_hz, "to": to_hz,
            "step_ns": opts.step_ns, "len": sizes[0], "sizes": sizes, "rates": opts.rates,
            "busy": opts.busy,
            "pub_cpu": opts.pub_cpu, "sub_cpu": opts.sub_cpu, "tolerance": opts.tolerance,
            "slack": opts.slack, "method": method,
            "max_late": 50.0 if opts.max_late is None else opts.max_late,
            "retries": opts.retries,
            "max_steal": opts.max_steal, "pub": opts.pub, "sub": opts.sub,
            "out": opts.output}


def run(opts):
    o = options(opts)
    started, waiting = [], []

    def begin(i, size):
        # a size is announced when it begins (on stderr too when only that is
        # a terminal); the head itself comes with the first step: options pub
        # or sub refuse end the run before it, with one line on stderr and
        # nothing on stdout
        waiting[:] = [table.size_line(o, i, size)] if len(o["sizes"]) > 1 else []
        if started and waiting:
            print(waiting.pop())
        if sys.stderr.isatty() and not sys.stdout.isatty() and len(o["sizes"]) > 1:
            print("jtr maxrate: %d-byte messages (size %d of %d)..." % (
                size, i + 1, len(o["sizes"])), file=sys.stderr)

    def row(rec, sweep):
        if not started:
            started.append(1)
            print(table.heading(o))
            if waiting:
                print(waiting.pop())
            print(table.sweep_head() if o["rates"] else table.step_head())
        elif waiting:
            print(waiting.pop())
        print(table.step_line(o, rec, sweep))
        sys.stdout.flush()
    out = maxrate_job(o, row, begin)
    print("\n".join(table.end_lines(o, out)))
    if out.state == "interrupted":
        sys.stdout.flush()
        print("jtr maxrate: interrupted; partial results in %s/" % out.outdir, file=sys.stderr)
    return out.rc
