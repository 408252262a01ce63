# SPDX-License-Identifier: GPL-2.0-only
"""duplex - jtr duplex: one endpoint of a two-way run, a jtr sub receiving what
the peer publishes and a jtr pub publishing to the peer, at the same time."""
import sys

from ..cli.parser import (
    Choice,
    Count,
    Duration,
    JtrParser,
    ShellSplit,
    add_output,
    add_sub_pub_cpus,
    shared,
)
from ..drivers.duplex import duplex_job
from ..errors import EXIT_INTERRUPTED, UsageError
from ..vocab import DATAGRAM_TRANSPORTS, TRANSPORTS

DESCRIPTION = """\
One endpoint of a two-way run: a 'jtr sub' receives what the peer publishes
while a 'jtr pub' publishes to the peer, both at once, into one results folder
with one summary. Run it on both endpoints (two hosts, two network namespaces,
or two shells on one host) with the directions the other way round: where one
side's pub sends (or listens), the other side's sub receives (or connects).
Each is lossless when the rates are sustainable.

--pub-addr and --sub-addr are the -P of this side's jtr pub and jtr sub, with
their meaning per kind (who listens is as for pub and sub):

  -T          --pub-addr (this side's pub)    --sub-addr (this side's sub)
  udp         the peer's receiving address    the address it binds
  unix-dgram  the peer's socket path          the socket path it binds
  mcast       the group the peer joins        the group it joins
  tcp         where it listens                where the peer's pub listens
  unix        the socket path it listens on   the peer's socket path
  shm         the ring it creates             the ring the peer creates

The sub starts first. For udp, mcast and unix-dgram this side's pub starts once
the sub says it is ready; a udp pub that finds nobody receiving yet (the peer
has not started) is started again every 0.1 s until --wait is over, and a
unix-dgram pub waits for the peer's socket itself. For tcp, unix and shm the
pub starts at once: it listens (creates the ring) and waits for the peer's sub,
while this side's sub connects to the peer's pub, both within --wait."""

NOTES = """\
Messages carry their send time (CLOCK_MONOTONIC): the latency across two hosts
is right only when their clocks agree (network namespaces share one clock).
Multicast has no receiver to wait for: what a pub sends before the peer has
joined is lost, so give both sides --delay longer than the time between their
starts. Options after -- go to both programs unchanged (--iface, --sndbuf,
--hist-error, ...); --pub and --sub pass options to one of them.
The results folder holds pub/ and sub/ (the programs' own results), pub.log
and sub.log (what they printed), duplex.json (jtr-duplex/1,
docs/duplex.schema.json) and summary.txt. Exit status 0 when both programs
ended well, else the first non-zero status of the two (1: the peer went away
or stalled; 2: bad options, or no peer within --wait: nothing is kept); 130
after Ctrl-C, SIGTERM or SIGHUP (both programs stop and write what they have,
marked partial)."""

EXAMPLES = """\
  on 10.0.0.1:  jtr duplex -T udp --pub-addr 10.0.0.2:17391 --sub-addr 0.0.0.0:17392
  on 10.0.0.2:  jtr duplex -T udp --pub-addr 10.0.0.1:17392 --sub-addr 0.0.0.0:17391
  on 10.0.0.1:  jtr duplex -T tcp --pub-addr 0.0.0.0:17391 --sub-addr 10.0.0.2:17392
  on 10.0.0.2:  jtr duplex -T tcp --pub-addr 0.0.0.0:17392 --sub-addr 10.0.0.1:17391
  one host, two shells: shm rings a and b, 50K msgs/s each way for 10 s, pinned
    jtr duplex -T shm --pub-addr a --sub-addr b -r 50K -d 10s -c 1,0 -o left
    jtr duplex -T shm --pub-addr b --sub-addr a -r 50K -d 10s -c 0,1 -o right
  jtr duplex ... --ticks 100 --latency-rate 1K       bursts, 1000 stamped a second
  jtr duplex ... --sub --latency-file -- --rcvbuf 16M  every sample kept; both
                                                     programs' buffers 16M"""

RATE_MAX = 10 ** 9


def make_parser(prog):
    p = JtrParser(prog, usage="%(prog)s -T KIND --pub-addr ADDR --sub-addr ADDR [OPTIONS] "
                              "[-- OPTIONS FOR BOTH]",
                  description=DESCRIPTION, notes=NOTES, examples=EXAMPLES)
    p.add_argument(*shared("-T"), metavar="KIND", type=Choice(*TRANSPORTS), default="udp",
                   help="%s (default udp)" % ", ".join(TRANSPORTS))
    p.add_argument("--pub-addr", metavar="ADDR",
                   help="this side's jtr pub -P: where it sends or listens (the table above)")
    p.add_argument("--sub-addr", metavar="ADDR",
                   help="this side's jtr sub -P: where it binds or connects (the table above)")
    p.add_argument(*shared("-r"), metavar="RATE", type=Count(1, RATE_MAX, word="max"),
                   default=10000,
                   help="messages a second this side publishes (default 10000); max: no "
                        "pacing")
    stop = p.add_mutually_exclusive_group()
    stop.add_argument(*shared("-n"), metavar="N", type=Count(1, 1 << 40),
                      help="measured messages this side publishes (default 100000)")
    stop.add_argument(*shared("-d"), metavar="DUR", dest="duration_ns",
                      type=Duration(10 ** 6, 30 * 86400 * 10 ** 9),
                      help="publish for DUR instead of a count")
    p.add_argument(*shared("-m"), metavar="BYTES", type=Count(24, 1 << 24),
                   help="message length, header included (default 64)")
    p.add_argument("-w", "--warmup", metavar="N", type=Count(0, 1 << 32),
                   help="messages sent first, not measured (default 1000)")
    p.add_argument("--ticks", metavar="N", type=Count(1, 10 ** 6),
                   help="publish in N bursts a second (jtr pub --ticks)")
    p.add_argument("--latency-rate", metavar="RATE", type=Count(1, RATE_MAX),
                   help="stamp only RATE of the messages a second, for low overhead")
    p.add_argument("--pack", metavar="N", type=Count(1, 1024),
                   help="N messages in one write, datagram or ring slot (jtr pub --pack)")
    p.add_argument("--no-timestamps", action="store_true",
                   help="do not stamp messages: no latency on the peer's side")
    p.add_argument("-b", "--busy", action="store_true",
                   help="the sub busy-polls (the same as --recv busy)")
    p.add_argument("--recv", metavar="MODE", type=Choice("blocking", "busy", "epoll"),
                   help="the sub's receive mode: blocking (default), busy or epoll")
    add_sub_pub_cpus(p, "the sub's receiving thread", "the pub's sending thread")
    p.add_argument("--wait", metavar="DUR", dest="wait_ns",
                   type=Duration(10 ** 6, 24 * 3600 * 10 ** 9),
                   help="how long both programs wait for the peer to appear (default 10s)")
    p.add_argument("--timeout", metavar="DUR", dest="timeout_ns",
                   type=Duration(10 ** 6, 24 * 3600 * 10 ** 9),
                   help="a peer silent this long mid-run has gone (default 5s)")
    p.add_argument("--stats-every", metavar="DUR", dest="stats_every_ns",
                   type=Duration(0, 24 * 3600 * 10 ** 9),
                   help="a row of each program's stats.csv every DUR (default 1s; 0: none)")
    p.add_argument("--delay", metavar="DUR", dest="delay_ns", type=Duration(0, 3600 * 10 ** 9),
                   default=0,
                   help="start the pub DUR after the sub is ready (default 0); for mcast, "
                        "longer than the time between the two sides' starts")
    p.add_argument("--pub", metavar="OPTS", type=ShellSplit(), action="extend", default=[],
                   help="more options for jtr pub only (one shell-quoted string), e.g. "
                        "--pub '--drop-every 7'")
    p.add_argument("--sub", metavar="OPTS", type=ShellSplit(), action="extend", default=[],
                   help="more options for jtr sub only, e.g. --sub --fast (counts only, no "
                        "latency)")
    p.add_argument(*shared("-q"), action="store_true",
                   help="no summary on stdout, no progress or warnings on stderr")
    add_output(p, "results folder (default results/DATE-HOST-duplex): pub/ and sub/ (the "
                  "programs' results), pub.log, sub.log, duplex.json and summary.txt")
    return p


def parse(parser, args):
    """The options, with what follows -- (for both programs) as .both."""
    args = list(args)
    both = []
    if "--" in args:
        i = args.index("--")
        args, both = args[:i], args[i + 1:]
    opts = parser.parse_args(args)
    opts.both = both
    return opts


def options(opts):
    """The run's settings (drivers/duplex.py) from the parsed options; UsageError
    for options that do not go together (the job checks the addresses)."""
    kind = opts.transport
    if opts.pub_addr is None or opts.sub_addr is None:
        raise UsageError("give --pub-addr and --sub-addr: where this side publishes and where "
                         "it receives (the peer's the other way round); see 'jtr duplex --help'")
    if opts.busy and opts.recv not in (None, "busy"):
        raise UsageError("-b and --recv %s: -b is --recv busy; give one" % opts.recv)
    if opts.delay_ns and kind not in DATAGRAM_TRANSPORTS:
        raise UsageError("--delay with -T %s: its pub waits for the peer's sub itself; leave "
                         "--delay out" % kind)
    return {"kind": kind, "pub_addr": opts.pub_addr, "sub_addr": opts.sub_addr,
            "rate": opts.rate, "count": opts.count, "duration_ns": opts.duration_ns,
            "len": opts.len, "warmup": opts.warmup, "ticks": opts.ticks,
            "latency_rate": opts.latency_rate, "pack": opts.pack,
            "timestamps": not opts.no_timestamps,
            "recv": "busy" if opts.busy else opts.recv, "pub_cpu": opts.pub_cpu,
            "sub_cpu": opts.sub_cpu, "wait_ns": opts.wait_ns, "timeout_ns": opts.timeout_ns,
            "stats_every_ns": opts.stats_every_ns, "delay_ns": opts.delay_ns,
            "pub": opts.pub, "sub": opts.sub, "both": opts.both, "out": opts.output,
            "quiet": opts.quiet}


def run(opts):
    o = options(opts)

    def progress(text):         # for people at a terminal; a log gets the summary
        if not o["quiet"] and sys.stderr.isatty():
            print("jtr duplex: %s" % text, file=sys.stderr)
            sys.stderr.flush()
    out = duplex_job(o, getattr(opts, "argv", None), progress)
    if not o["quiet"]:
        for w in out.doc["warnings"]:
            print("jtr duplex: warning: %s" % w, file=sys.stderr)
    if not o["quiet"]:
        print("\n".join(out.lines))
        print("results: %s" % out.outdir)
        sys.stdout.flush()
    if out.doc["exit_status"] == EXIT_INTERRUPTED:
        print("jtr duplex: interrupted; partial results in %s/" % out.outdir, file=sys.stderr)
    return out.doc["exit_status"]
