# SPDX-License-Identifier: GPL-2.0-only
"""duplex - jtr duplex: one endpoint of a two-way run, a jtr sub receiving what
the peer publishes and a jtr pub publishing to the peer, at the same time."""
import ipaddress
import os
import shutil
import socket
import sys

from ..cli.parser import (
    Choice,
    Count,
    Duration,
    JtrParser,
    OptionType,
    ShellSplit,
    add_output,
    add_sub_pub_cpus,
    shared,
)
from ..drivers import duplex as driver
from ..errors import EXIT_INTERRUPTED, UsageError
from ..results.result import make_results_dir
from ..system.paths import probe_path
from ..units import fmt_ns, fmt_rate
from ..values import parse_count
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
WILDCARDS = ("0.0.0.0", "::")


class Rate(OptionType):
    """-r: messages a second, 1 to 1G, or max (jtr pub's -r)."""

    def parse(self, text, opt, prog):
        return "max" if text == "max" else parse_count(text, 1, RATE_MAX)


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
    p.add_argument(*shared("-r"), metavar="RATE", type=Rate(), default=10000,
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


# --- addresses -----------------------------------------------------------------

INET_FORM = "give A.B.C.D:PORT or [IPV6]:PORT, e.g. %s"


def inet(opt, text, example):
    """(ip, port) of A.B.C.D:PORT or [IPV6]:PORT; UsageError."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise UsageError("%s %s: %s (a port is 1 to 65535)" % (opt, text or "''",
                                                               INET_FORM % example))
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        want = 6
    else:
        want = 4
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        raise UsageError("%s %s: '%s' is not an IPv%d address (names are not looked up); %s"
                         % (opt, text, host, want, INET_FORM % example))
    if ip.version != want:
        raise UsageError("%s %s: an IPv6 address goes in brackets before the port; %s"
                         % (opt, text, INET_FORM % example))
    return str(ip), int(port)


def is_local(ip):
    """True when @ip is an address of this host (or of this network namespace)."""
    fam = socket.AF_INET6 if ":" in ip else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    try:
        s.bind((ip, 0))
        return True
    except OSError:
        return False
    finally:
        s.close()


def check_address(kind, opt, text):
    """UsageError unless @text is an address of @kind for @opt; its parsed form:
    (ip, port) for tcp, udp and mcast, an absolute path for unix sockets, the
    segment name for shm."""
    if kind in ("tcp", "udp"):
        return inet(opt, text, "10.0.0.2:17391")
    if kind == "mcast":
        ip, port = inet(opt, text, "239.255.0.1:17391")
        if not ipaddress.ip_address(ip).is_multicast or ":" in ip:
            raise UsageError("%s %s: not an IPv4 multicast group; give GROUP:PORT, e.g. "
                             "239.255.0.1:17391" % (opt, text))
        return ip, port
    if kind in ("unix", "unix-dgram"):
        if not 1 <= len(text) <= 107:
            raise UsageError("%s %s: not a socket path: use 1-107 characters, e.g. "
                             "/tmp/jtr-a.sock" % (opt, text or "''"))
        return os.path.abspath(text)
    if not 1 <= len(text) <= 64 or "/" in text:
        raise UsageError("%s %s: not a segment name: use 1-64 characters without '/', "
                         "e.g. jtr-a" % (opt, text or "''"))
    return text


def self_loop(kind, pub, sub):
    """Why this side would talk to itself with these parsed addresses, or None:
    on one host the two directions need different addresses."""
    if kind in ("shm", "unix", "unix-dgram", "mcast"):
        if pub != sub:
            return None
        return {"shm": "both directions in one ring: this side's sub would read its own "
                       "pub; give --sub-addr the ring the peer creates",
                "mcast": "both directions in one group and port: each side's sub would "
                         "receive its own pub's messages too; give each direction its own "
                         "group or port"}.get(kind, "both directions on one socket path: "
                                                    "give --sub-addr the peer's path")
    (pip, pport), (sip, sport) = pub, sub
    if pport != sport:
        return None
    if kind == "udp" and (sip in WILDCARDS or sip == pip) and is_local(pip):
        return ("this side's pub would send to its own sub; give --pub-addr the peer's "
                "--sub-addr (on one host, another port)")
    if kind == "tcp" and (pip in WILDCARDS or pip == sip) and (sip in WILDCARDS or is_local(sip)):
        return ("this side's sub would connect to its own pub; give --sub-addr the peer's "
                "--pub-addr (on one host, another port)")
    return None


def options(opts):
    """The run's settings (drivers/duplex.py) from the parsed options; UsageError
    for what cannot work, before anything starts."""
    kind = opts.transport
    if opts.pub_addr is None or opts.sub_addr is None:
        raise UsageError("give --pub-addr and --sub-addr: where this side publishes and where "
                         "it receives (the peer's the other way round); see 'jtr duplex --help'")
    pub = check_address(kind, "--pub-addr", opts.pub_addr)
    sub = check_address(kind, "--sub-addr", opts.sub_addr)
    why = self_loop(kind, pub, sub)
    if why:
        raise UsageError("--pub-addr %s and --sub-addr %s: %s" % (opts.pub_addr, opts.sub_addr,
                                                                 why))
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


# --- the summary -----------------------------------------------------------------

def heading(o):
    """The first line: the kind and both directions."""
    kind, pa, sa = o["kind"], o["pub_addr"], o["sub_addr"]
    if kind in ("tcp", "unix"):
        where = "publishing on %s (listening), receiving from %s" % (pa, sa)
    elif kind == "shm":
        where = "publishing into ring %s, reading ring %s" % (pa, sa)
    else:
        where = "sending %s, receiving on %s" % (pa, sa)
    return "jtr duplex: %s, %s" % (kind, where)


def count(v):
    return "-" if v is None else "{:,}".format(v)


def ended(side):
    """', exit 1, peer gone, partial' for a program that did not end well, else ''."""
    bits = []
    if side.get("exit_status"):
        bits.append("exit %d" % side["exit_status"])
    if side.get("peer") not in (None, "ok"):
        bits.append("peer %s" % side["peer"])
    if side.get("partial"):
        bits.append("partial")
    return ", " + ", ".join(bits) if bits else ""


def latency_text(lat):
    """'p50 12.3 us p99 45.6 us max 1.20 ms' of one latency record, or None."""
    if not lat or lat.get("p50_ns") is None:
        return None
    return "p50 %s p99 %s max %s" % (fmt_ns(lat["p50_ns"]), fmt_ns(lat["p99_ns"]),
                                     fmt_ns(lat["max_ns"]))


def summary(doc):
    """The summary's lines from a duplex.json document."""
    o, p, s = doc["params"], doc["pub"], doc["sub"]
    lines = [heading({"kind": o["transport"], "pub_addr": o["pub_addr"],
                      "sub_addr": o["sub_addr"]})]
    if p.get("sent") is None:
        lines.append("  sent      nothing%s" % ended(p))
    else:
        asked = "max rate" if o["rate_hz"] is None else "%s/s" % fmt_rate(o["rate_hz"])
        late = "" if p.get("late_pct") is None else ", %.1f%% late" % p["late_pct"]
        lines.append("  sent      %s at %s (+%s warm-up), achieved %s/s%s%s" % (
            count(p["sent"]), asked, count(p.get("warmup_sent")), fmt_rate(p.get("rate_hz")),
            late, ended(p)))
    if s.get("received") is None:
        lines.append("  received  nothing%s" % ended(s))
        return lines
    lat = s.get("latency_ns") or {}
    send = latency_text(lat.get("from_send"))
    lines.append("  received  %s (+%s warm-up) at %s/s, lost %s, %s%s" % (
        count(s["received"]), count(s.get("warmup_received")), fmt_rate(s.get("rate_hz")),
        count(s.get("lost")), "latency " + send if send else
        "no latency (unstamped messages, or jtr sub --fast)", ended(s)))
    intended = latency_text(lat.get("from_intended"))
    if intended:
        lines.append("            from the intended send time: %s" % intended)
    return lines


def run(opts):
    o = options(opts)
    probe_path("pub"), probe_path("sub")          # not built: say so now
    parent = os.path.abspath(os.path.dirname(o["out"]) if o["out"] else "results")
    made_parent = not os.path.isdir(parent)
    existed = o["out"] is not None and os.path.isdir(o["out"])
    outdir = make_results_dir("duplex", o["out"])

    def progress(text):         # for people at a terminal; a log gets the summary
        if not o["quiet"] and sys.stderr.isatty():
            print("jtr duplex: %s" % text, file=sys.stderr)
            sys.stderr.flush()
    try:
        doc = driver.run_duplex(o, outdir, getattr(opts, "argv", None), progress)
    except UsageError:
        # refused: nothing is kept (of a folder that was there, what this run wrote)
        if existed:
            for name in driver.WRITTEN:
                path = os.path.join(outdir, name)
                if os.path.isdir(path):
                    shutil.rmtree(path, ignore_errors=True)
                elif os.path.exists(path):
                    os.unlink(path)
        else:
            shutil.rmtree(outdir, ignore_errors=True)
        if made_parent:
            shutil.rmtree(parent, ignore_errors=True)
        raise
    lines = summary(doc)
    driver.write_summary(outdir, lines)
    if not o["quiet"]:
        for w in doc["warnings"]:
            print("jtr duplex: warning: %s" % w, file=sys.stderr)
    if not o["quiet"]:
        print("\n".join(lines))
        print("results: %s" % outdir)
        sys.stdout.flush()
    if doc["exit_status"] == EXIT_INTERRUPTED:
        print("jtr duplex: interrupted; partial results in %s/" % outdir, file=sys.stderr)
    return doc["exit_status"]
