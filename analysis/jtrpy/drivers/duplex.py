# SPDX-License-Identifier: GPL-2.0-only
"""duplex - jtr duplex's run: this side's jtr sub (receiving what the peer
publishes) and jtr pub (publishing to the peer) at once, into one folder, and
duplex.json with both sides' key figures (jtr-duplex/1, docs/duplex.schema.json).

The order: the sub first; for the datagram kinds the pub once the sub says
"ready on" (and --delay later), for tcp, unix and shm at once (the pub listens or
creates the ring and waits for the peer's sub, while this sub connects to the
peer's pub: waiting for this sub first would wait for the peer's pub, which
waits the same way). A udp pub with nobody receiving yet exits 2 at its first
sends ("nobody is receiving"): the peer has not started, so it is started again
every RETRY_S until --wait is over. A program that exits 2 (refused options, no
peer within --wait) stops the other; a stop signal reaches both once
(system/signals.py) and each writes what it has, marked partial.

duplex_job is the command's job: the addresses checked (each of its kind, the
two directions not one address on this host), the programs found, the results
folder made (and removed when a program refuses), the run, summary.txt
(render/duplex.py's lines); the command prints the summary and the warnings."""
import ipaddress
import os
import shutil
import socket
import subprocess
import time
from collections import namedtuple

from .. import __version__
from ..errors import EXIT_INTERRUPTED, EXIT_USAGE, JtrError, UsageError
from ..render.duplex import summary
from ..results.result import make_results_dir
from ..results.suite import now_iso
from ..system import signals
from ..system.files import write_atomic, write_json
from ..system.paths import probe_path
from ..values import format_duration
from ..vocab import DATAGRAM_TRANSPORTS
from .maxrate import latency, read
from .programs import Program, last_line, stop

FORMAT = "jtr-duplex/1"
NAME = "duplex.json"
WRITTEN = ("pub", "sub", "pub.log", "sub.log")      # what a run writes before duplex.json
SIDES = ("pub", "sub")
RETRY_S = 0.1               # between starts of a udp pub that found nobody receiving
NOBODY = "nobody is receiving"
READY = "ready on"
WAIT_NS = 10 * 10 ** 9      # the programs' default --wait
KILL_AFTER_S = 10.0         # a program still running this long after a stop is killed
POLL_S = 0.02


# --- addresses -----------------------------------------------------------------

INET_FORM = "give A.B.C.D:PORT or [IPV6]:PORT, e.g. %s"
WILDCARDS = ("0.0.0.0", "::")


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


def check_addresses(o):
    """UsageError unless o["pub_addr"] and o["sub_addr"] are addresses of o["kind"]
    and this side would not talk to itself through them."""
    kind = o["kind"]
    pub = check_address(kind, "--pub-addr", o["pub_addr"])
    sub = check_address(kind, "--sub-addr", o["sub_addr"])
    why = self_loop(kind, pub, sub)
    if why:
        raise UsageError("--pub-addr %s and --sub-addr %s: %s" % (o["pub_addr"], o["sub_addr"],
                                                                 why))


# --- the run -------------------------------------------------------------------

def ns_arg(ns):
    """A duration as the programs read it, in the words given (5ms, not 5000000ns):
    their errors quote it."""
    return format_duration(ns)


def common(o, side):
    """The options both programs take from the duplex's: the kind, the side's
    address and folder, --wait, --timeout, --stats-every."""
    a = ["-T", o["kind"], "-P", o["%s_addr" % side]]
    for key, opt in (("wait_ns", "--wait"), ("timeout_ns", "--timeout"),
                     ("stats_every_ns", "--stats-every")):
        if o[key] is not None:
            a += [opt, ns_arg(o[key])]
    return a


def pub_args(o, outdir):
    """jtr pub's command line (after the program's name)."""
    a = common(o, "pub") + ["-o", os.path.join(outdir, "pub"), "-r", str(o["rate"])]
    for key, opt in (("count", "-n"), ("len", "-m"), ("warmup", "-w"), ("ticks", "--ticks"),
                     ("latency_rate", "--latency-rate"), ("pack", "--pack"),
                     ("pub_cpu", "-c")):
        if o[key] is not None:
            a += [opt, str(o[key])]
    if o["duration_ns"] is not None:
        a += ["-d", ns_arg(o["duration_ns"])]
    if not o["timestamps"]:
        a.append("--no-timestamps")
    return a + o["both"] + o["pub"]


def sub_args(o, outdir):
    """jtr sub's command line (after the program's name): not -q, which would
    silence its "ready on" line."""
    a = common(o, "sub") + ["-o", os.path.join(outdir, "sub")]
    if o["recv"] is not None:
        a += ["--recv", o["recv"]]
    if o["sub_cpu"] is not None:
        a += ["-c", str(o["sub_cpu"])]
    return a + o["both"] + o["sub"]


def log_has(path, text):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return text in f.read()
    except OSError:
        return False


def ready_line(path):
    """The sub's "ready on KIND ADDR" (without its program name), or None."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if READY in line:
                    return line.strip().split(": ", 1)[-1]
    except OSError:
        pass
    return None


def sleep_unless_stopped(seconds):
    """Sleep, in short slices, unless a stop signal comes; False if one did."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if signals.requested():
            return False
        time.sleep(min(POLL_S, max(0.0, end - time.monotonic())))
    return not signals.requested()


class Side:
    """One of the two programs: its Program, log, exit status and starts."""

    def __init__(self, name, args, log):
        self.name, self.args, self.log = name, args, log
        self.prog = None
        self.rc = None
        self.attempts = 0
        self.stopped = False        # stopped by the duplex (the other one exited 2)

    def start(self):
        self.attempts += 1
        with open(self.log, "w") as f:
            self.prog = Program(self.name, self.args, stdout=f, stderr=subprocess.STDOUT)

    def running(self):
        return self.prog is not None and self.rc is None and self.prog.poll() is None

    def stop(self):
        if self.running():
            self.stopped = True
            stop(self.prog.proc)


class Run:
    """The two programs of one side of a duplex, started and waited for."""

    def __init__(self, o, outdir, progress):
        self.o, self.outdir, self.progress = o, outdir, progress
        self.sub = Side("sub", sub_args(o, outdir), os.path.join(outdir, "sub.log"))
        self.pub = Side("pub", pub_args(o, outdir), os.path.join(outdir, "pub.log"))
        self.order = []             # the sides in the order they ended
        self.said_ready = False
        self.said_waiting = False
        wait_ns = WAIT_NS if o["wait_ns"] is None else o["wait_ns"]
        self.wait_s = wait_ns / 1e9
        self.deadline = None        # until when a udp pub is started again
        self.stop_at = None         # when the stop signal was seen

    def sides(self):
        return (self.sub, self.pub)

    def announce_ready(self):
        if not self.said_ready:
            line = ready_line(self.sub.log)
            if line:
                self.said_ready = True
                self.progress("sub " + line)

    def start(self):
        """The sub, then (after it is ready, for datagrams) the pub."""
        o = self.o
        self.sub.start()
        if o["kind"] in DATAGRAM_TRANSPORTS:
            end = time.monotonic() + self.wait_s + 5
            while not ready_line(self.sub.log):
                if signals.requested():
                    return
                if self.sub.prog.poll() is not None:
                    if not ready_line(self.sub.log):    # it ended before it was ready
                        return
                    break
                if time.monotonic() > end:
                    self.sub.stop()
                    raise JtrError("jtr sub did not say it was ready on %s %s within %.0f s "
                                   "(see %s)" % (o["kind"], o["sub_addr"], self.wait_s + 5,
                                                 self.sub.log))
                time.sleep(POLL_S)
            self.announce_ready()
            if o["delay_ns"] and not sleep_unless_stopped(o["delay_ns"] / 1e9):
                return
        if signals.requested():
            return
        self.deadline = time.monotonic() + self.wait_s
        self.pub.start()

    def retry_pub(self):
        """True when the pub that just ended found nobody receiving and may be
        started again (udp, within --wait, no stop signal)."""
        if self.o["kind"] != "udp" or self.pub.prog.proc.returncode != 2 or signals.requested():
            return False
        if not log_has(self.pub.log, NOBODY) or time.monotonic() > self.deadline:
            return False
        if not self.sub.running():
            return False
        if not self.said_waiting:
            self.said_waiting = True
            self.progress("nobody receiving on %s %s yet; starting the pub again every %.1f s "
                          "until --wait (%g s) is over" % (self.o["kind"], self.o["pub_addr"],
                                                          RETRY_S, self.wait_s))
        return True

    def wait(self):
        """Until both have ended: a pub with nobody receiving yet is started
        again; one that exits 2 stops the other; after a stop signal one that
        overstays is killed."""
        while any(s.running() for s in self.sides()):
            for s in self.sides():
                if s.prog is None or s.rc is not None or s.prog.poll() is None:
                    continue
                if s is self.pub and self.retry_pub():
                    if sleep_unless_stopped(RETRY_S):
                        s.start()
                        continue
                s.rc = s.prog.proc.returncode
                self.order.append(s)
                if s.rc == EXIT_USAGE and not signals.requested():
                    for other in self.sides():
                        if other is not s:
                            other.stop()
            self.announce_ready()
            if signals.requested():
                if self.stop_at is None:
                    self.stop_at = time.monotonic()
                elif time.monotonic() - self.stop_at > KILL_AFTER_S:
                    for s in self.sides():
                        if s.running():
                            s.prog.proc.kill()
            time.sleep(POLL_S)
        for s in self.sides():
            if s.prog is not None and s.rc is None:
                s.rc = s.prog.wait()
                self.order.append(s)
        self.announce_ready()

    def refused(self):
        """The side whose exit 2 ended the run when the other did not finish on
        its own (refused options, no peer within --wait), or None."""
        if signals.requested():
            return None
        for s in self.order:
            if s.rc == EXIT_USAGE:
                other = self.pub if s is self.sub else self.sub
                if other.rc != 0 or other.stopped or other.prog is None:
                    return s
                return None
            if s.rc:
                return None
        return None

    def exit_status(self):
        if signals.requested():
            return EXIT_INTERRUPTED
        for s in self.order:
            if s.rc:
                return s.rc
        if self.pub.prog is None or self.sub.prog is None:
            return 1
        return 0


def pub_figures(doc, side):
    """duplex.json's "pub" from jtr pub's result (None: it wrote none)."""
    out = {"folder": "pub", "log": "pub.log", "exit_status": side.rc, "starts": side.attempts,
           "partial": None, "peer": None, "sent": None, "warmup_sent": None, "issued": None,
           "rate_hz": None, "duration_ns": None, "late_sends": None, "late_pct": None}
    if doc is None:
        return out
    t = doc.get("transport") or {}
    sent, total, issued = t.get("sent"), t.get("sent_total"), t.get("issued")
    # with --ticks late_sends counts ticks, not messages: no share of the sends
    per_message = not (doc.get("params") or {}).get("ticks")
    out.update(partial=doc.get("partial"), peer=t.get("peer"), sent=sent,
               warmup_sent=None if sent is None or total is None else total - sent,
               issued=issued, rate_hz=t.get("rate_hz"), duration_ns=t.get("duration_ns"),
               late_sends=t.get("late_sends"),
               late_pct=round(100.0 * t["late_sends"] / issued, 3)
               if issued and per_message and t.get("late_sends") is not None else None)
    return out


def sub_figures(doc, side):
    """duplex.json's "sub" from jtr sub's result (None: it wrote none)."""
    out = {"folder": "sub", "log": "sub.log", "exit_status": side.rc, "partial": None,
           "peer": None, "received": None, "warmup_received": None, "lost": None,
           "duplicates": None, "reordered": None, "end_of_stream": None,
           "publisher_issued": None, "rate_hz": None, "duration_ns": None, "latency_ns": None}
    if doc is None:
        return out
    t = doc.get("transport") or {}
    out.update(partial=doc.get("partial"), peer=t.get("peer"), received=t.get("measured"),
               warmup_received=t.get("warmup_received"), lost=t.get("lost"),
               duplicates=t.get("duplicates"), reordered=t.get("reordered"),
               end_of_stream=t.get("end_of_stream"), publisher_issued=t.get("publisher_issued"),
               rate_hz=t.get("rate_hz"), duration_ns=t.get("duration_ns"),
               latency_ns=latency(doc))
    return out


def params(o):
    return {"transport": o["kind"], "pub_addr": o["pub_addr"], "sub_addr": o["sub_addr"],
            "rate_hz": None if o["rate"] == "max" else o["rate"], "count": o["count"],
            "duration_ns": o["duration_ns"], "msg_len": o["len"], "warmup": o["warmup"],
            "ticks": o["ticks"], "latency_rate_hz": o["latency_rate"], "pack": o["pack"],
            "timestamps": o["timestamps"], "receive": o["recv"], "pub_cpu": o["pub_cpu"],
            "sub_cpu": o["sub_cpu"], "wait_ns": o["wait_ns"], "timeout_ns": o["timeout_ns"],
            "stats_every_ns": o["stats_every_ns"], "delay_ns": o["delay_ns"],
            "pub_options": o["pub"], "sub_options": o["sub"], "both_options": o["both"]}


def run_duplex(o, outdir, argv, progress):
    """Run this side into @outdir (which exists) and write duplex.json; its
    document. @progress(text): a line for stderr. UsageError (nothing worth
    keeping) when a program refused its options or found no peer within --wait
    and the other was stopped for it."""
    started = now_iso()
    r = Run(o, outdir, progress)
    with signals.measuring():
        try:
            r.start()
            r.wait()
        finally:
            for s in r.sides():
                if s.running():
                    s.stop()
    bad = r.refused()
    if bad is not None:
        line = last_line(bad.log) or "jtr %s exited with status 2" % bad.name
        if NOBODY in line or "--wait" in line:      # no peer: say what the peer runs
            line = "no peer within --wait (%g s): start jtr duplex -T %s on the other side " \
                   "with its --pub-addr and --sub-addr the other way round, or give a " \
                   "longer --wait (%s)" % (r.wait_s, o["kind"], line)
        raise UsageError(line)
    pdoc = read(os.path.join(outdir, "pub")) if r.pub.prog is not None else None
    sdoc = read(os.path.join(outdir, "sub")) if r.sub.prog is not None else None
    pub, sub = pub_figures(pdoc, r.pub), sub_figures(sdoc, r.sub)
    warnings = ["%s: %s" % (name, w) for name, d in (("pub", pdoc), ("sub", sdoc))
                for w in (d or {}).get("warnings") or []]
    for s, d in ((r.pub, pdoc), (r.sub, sdoc)):
        if s.prog is not None and d is None and s.rc not in (0, EXIT_INTERRUPTED):
            warnings.append("%s: %s" % (s.name, last_line(s.log) or "exit status %d, no "
                                        "result (see %s.log)" % (s.rc, s.name)))
    status = r.exit_status()
    doc = {"format": FORMAT, "tool": "duplex", "jtr_version": __version__,
           "command": ["jtr duplex"] + list(argv or []), "host": socket.gethostname(),
           "started_at": started, "ended_at": now_iso(),
           "partial": status == EXIT_INTERRUPTED or bool(pub["partial"] or sub["partial"]),
           "exit_status": status, "params": params(o), "pub": pub, "sub": sub,
           "warnings": warnings}
    write_json(os.path.join(outdir, NAME), doc)
    return doc


def write_summary(outdir, lines):
    """summary.txt: the lines jtr duplex prints."""
    write_atomic(os.path.join(outdir, "summary.txt"), "\n".join(lines) + "\n")


# what a jtr duplex run ends with: its duplex.json document, the results folder
# and the summary's lines (summary.txt)
Outcome = namedtuple("Outcome", "doc outdir lines")


def duplex_job(o, argv, progress):
    """jtr duplex's job on settings @o (commands/duplex.py's options): the
    addresses checked (check_addresses), jtr pub and jtr sub found (not built:
    JtrError now), the results folder made (o["out"], or results/DATE-HOST-duplex),
    run_duplex with @argv (the command line, for duplex.json) and @progress(text),
    then summary.txt; an Outcome. When a program refused its options or found no
    peer (UsageError) nothing is kept: not the folder (of a folder that was there,
    what the run wrote in it), nor a results/ made for it."""
    check_addresses(o)
    probe_path("pub"), probe_path("sub")          # not built: say so now
    parent = os.path.abspath(os.path.dirname(o["out"]) if o["out"] else "results")
    made_parent = not os.path.isdir(parent)
    existed = o["out"] is not None and os.path.isdir(o["out"])
    outdir = make_results_dir("duplex", o["out"])
    try:
        doc = run_duplex(o, outdir, argv, progress)
    except UsageError:
        if existed:
            for name in WRITTEN:
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
    write_summary(outdir, lines)
    return Outcome(doc, outdir, lines)
