"""maxrate - jtr maxrate: the maximum sustainable rate of a transport
(um_perf's method): run jtr sub and jtr pub at a rate for a step, step up
while nothing fails, then bisect between the last good and the first bad
rate; a table of the steps and the answer."""
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time

from .cli import parse_count, parse_duration_ns, take_value
from .errors import JtrError, UsageError
from .paths import probe_path
from .procs import cpu_times
from .result import dumps_result, load_result, new_results_dir, write_atomic

FORMAT = "jtr-maxrate/1"
KINDS = ("shm", "tcp", "udp", "mcast", "unix", "unix-dgram")
DGRAM = ("udp", "mcast", "unix-dgram")

USAGE = """\
usage: jtr maxrate [-T KIND] [-P ADDR] [--from RATE] [--to RATE] [-d DUR]
                   [-m LEN] [-b] [-A CPU] [-a CPU] [--tolerance PCT]
                   [--slack PCT] [--max-late PCT] [--retries N] [--max-steal PCT]
                   [--pub OPTS] [--sub OPTS] [-o DIR]

Find the maximum sustainable message rate of a transport the way um_perf does:
run 'jtr sub' and 'jtr pub' at a rate for one step, double the rate while the
steps pass, halve it while they fail, then bisect between the last good and
the first bad rate until they are within --tolerance. The answer is the highest
rate that passed. A step passes when
  - nothing is lost and both programs finish normally (exit 0, end of stream),
  - the publisher achieved the rate asked, within --slack (it catches up
    without skipping, so a sender held back by a full ring or socket, or too
    slow to keep the schedule, falls short),
  - at most --max-late of its sends found their time already past,
  - the subscriber received at the rate asked, within --slack (it kept up).

options:
  -T, --transport KIND  shm, tcp, udp, mcast, unix or unix-dgram (default udp)
  -P, --addr ADDR   the transport's address (see 'jtr pub --help')
  --from RATE       first rate tried, msgs/s, K/M/G suffixes (default 10K)
  --to RATE         highest rate tried (default 100M); passing there answers
                    ">= RATE"
  -d, --step-s DUR  length of each step, measured (default 2s; bare numbers are
                    seconds); a tenth more is sent first as warm-up
  -m, --len BYTES   message length (default 64)
  -b, --busy        busy-poll receive
  -A CPU            pin the publisher's sending thread
  -a CPU            pin the subscriber's receiving thread
  --tolerance PCT   stop bisecting when bad and good are this close (default 5)
  --slack PCT       achieved rates may fall this far short of the rate asked
                    (default 3)
  --max-late PCT    most sends that may find their time past (default 50; a
                    sender that cannot keep the schedule is late nearly always,
                    one that was descheduled a while catches up late for a bit)
  --retries N       run a failed step again up to N times before its rate counts
                    as failed (default 1: on a shared machine one step can
                    fail because another program took the CPU)
  --max-steal PCT   a step that fails while the hypervisor stole more than this
                    share of the CPUs (/proc/stat steal) measured the host, not
                    the transport: it is run again without using up a retry, at
                    most 3 times per rate (default 5)
  --pub OPTS        more options for every jtr pub (one shell-quoted string)
  --sub OPTS        more options for every jtr sub, e.g. --sub '--max-rate 50K'
  -o DIR            results folder (default results/DATE-HOST-maxrate):
                    maxrate.json and per step NN-RATE/pub/ and NN-RATE/sub/
                    (their result.json) with the programs' output in *.log

The subscriber runs in fast mode (-f: counts and order, no latency). Every
step has a time limit; Ctrl-C (or SIGTERM) stops and prints the table so
far. Exit status 0 with an answer, 1 if no rate passed or a program would
not start, 2 for bad options, 130 when interrupted.

examples:
  jtr maxrate -T shm                       shm ring, 64-byte messages, 2 s steps
  jtr maxrate -T udp -m 700 --from 50K -d 5
  jtr maxrate -T tcp -A 0 -a 1 --to 5M     pinned, at most 5M msgs/s
  jtr maxrate -T udp -d 0.5 --sub '--max-rate 20K'   a receiver capped at 20K/s
"""

_SUFFIX = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9}


def parse_rate(opt, s):
    """Messages per second with K/M/G suffixes, 1 to 1G; UsageError."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmMgG]?)", s or "")
    v = int(round(float(m.group(1)) * _SUFFIX[m.group(2).lower()])) if m else 0
    if not m or not 1 <= v <= 10**9:
        raise UsageError("%s %s: use a rate from 1 to 1G messages per second (K, M, G "
                         "suffixes)" % (opt, s))
    return v


def parse_pct(opt, s, lo, hi):
    try:
        v = float(s)
    except (TypeError, ValueError):
        v = None
    if v is None or not lo <= v <= hi:
        raise UsageError("%s %s: use a percentage from %g to %g" % (opt, s, lo, hi))
    return v


def parse(args):
    o = {"kind": "udp", "addr": None, "from": 10000, "to": 10**8, "step_ns": 2 * 10**9,
         "len": 64, "busy": False, "pub_cpu": None, "sub_cpu": None, "tolerance": 5.0,
         "slack": 3.0, "max_late": 50.0, "retries": 1, "max_steal": 5.0, "pub": [], "sub": [], "out": None}
    i = 0
    while i < len(args):
        a, v = args[i], None
        if "=" in a and a.startswith("--"):
            a, v = a.split("=", 1)
            args = args[:i] + [a, v] + args[i + 1:]
        if a in ("-T", "--transport"):
            o["kind"] = take_value(args, i, a)
            if o["kind"] not in KINDS:
                raise UsageError("%s %s: use one of %s" % (a, o["kind"], ", ".join(KINDS)))
        elif a in ("-P", "--addr"):
            o["addr"] = take_value(args, i, a)
        elif a == "--from":
            o["from"] = parse_rate(a, take_value(args, i, a))
        elif a == "--to":
            o["to"] = parse_rate(a, take_value(args, i, a))
        elif a in ("-d", "--step-s"):
            o["step_ns"] = parse_duration_ns(a, take_value(args, i, a), 10**9)
            if not 10**8 <= o["step_ns"] <= 3600 * 10**9:
                raise UsageError("%s %s: a step lasts from 100ms to 1h" % (a, args[i + 1]))
        elif a in ("-m", "--len"):
            o["len"] = parse_count(a, take_value(args, i, a), 32, 1 << 24)
        elif a in ("-b", "--busy"):
            o["busy"] = True
            i += 1
            continue
        elif a == "-A":
            o["pub_cpu"] = parse_count(a, take_value(args, i, a), 0, 4095)
        elif a == "-a":
            o["sub_cpu"] = parse_count(a, take_value(args, i, a), 0, 4095)
        elif a == "--tolerance":
            o["tolerance"] = parse_pct(a, take_value(args, i, a), 0.1, 100)
        elif a == "--slack":
            o["slack"] = parse_pct(a, take_value(args, i, a), 0, 50)
        elif a == "--max-late":
            o["max_late"] = parse_pct(a, take_value(args, i, a), 0, 100)
        elif a == "--max-steal":
            o["max_steal"] = parse_pct(a, take_value(args, i, a), 0, 100)
        elif a == "--retries":
            o["retries"] = parse_count(a, take_value(args, i, a), 0, 10)
        elif a in ("--pub", "--sub"):
            try:
                o[a[2:]] += shlex.split(take_value(args, i, a))
            except ValueError as e:
                raise UsageError("%s %s: %s" % (a, args[i + 1], e))
        elif a in ("-o", "--output"):
            o["out"] = take_value(args, i, a)
        else:
            raise UsageError("unknown option '%s'; see 'jtr maxrate --help'" % a)
        i += 2
    if o["from"] > o["to"]:
        raise UsageError("--from %d is above --to %d" % (o["from"], o["to"]))
    return o


def fmt_rate(v):
    return "-" if v is None else "{:,}".format(int(round(v)))


def stop(proc, grace=5.0):
    """Ask a child to stop (SIGINT: it writes what it has), then kill it; its exit."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


def wait_ready(proc, log, timeout):
    """Until the subscriber says 'ready on' in @log; False if it exited or timed out."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        with open(log, encoding="utf-8", errors="replace") as f:
            if "ready on" in f.read():
                return True
        if proc.poll() is not None:
            return False
        time.sleep(0.01)
    return False


def cpu_ticks():
    """(steal, total) clock ticks of all CPUs so far (/proc/stat), or None."""
    t = cpu_times()
    return None if t is None else (t["all"][7], sum(t["all"]))


def steal_pct(t0, t1):
    """The share of CPU time the hypervisor took between two cpu_ticks()."""
    if t0 is None or t1 is None or t1[1] <= t0[1]:
        return None
    return 100.0 * (t1[0] - t0[0]) / (t1[1] - t0[1])


def read(folder):
    try:
        return load_result(folder).get("transport") or {}
    except UsageError:
        return None


class Search:
    def __init__(self, o, outdir):
        self.o, self.outdir, self.steps = o, outdir, []
        self.running = []

    def common(self):
        c = ["-T", self.o["kind"]] + (["-P", self.o["addr"]] if self.o["addr"] else [])
        return c + (["-b"] if self.o["busy"] else [])

    def step(self, rate):
        """Run one step at @rate; its record (appended to self.steps)."""
        o, n = self.o, len(self.steps) + 1
        d = os.path.join(self.outdir, "%02d-%d" % (n, rate))
        os.makedirs(d)
        self.ticks0 = cpu_ticks()
        count = max(10, rate * o["step_ns"] // 10**9)
        warm = max(10, count // 10)
        sub_cmd = [probe_path("sub"), "-f", "-o", os.path.join(d, "sub")] + self.common()
        sub_cmd += (["-a", str(o["sub_cpu"])] if o["sub_cpu"] is not None else []) + o["sub"]
        pub_cmd = [probe_path("pub"), "-q", "-o", os.path.join(d, "pub"), "-r", str(rate),
                   "-n", str(count), "-w", str(warm), "-m", str(o["len"])] + self.common()
        pub_cmd += (["-a", str(o["pub_cpu"])] if o["pub_cpu"] is not None else []) + o["pub"]
        rec = {"step": n, "rate_hz": rate, "count": count, "warmup": warm,
               "folder": os.path.basename(d)}
        # the measured part, the warm-up, and what a receiver 4 times slower needs
        limit = 15 + 5 * (count + warm) / rate
        sub_log, pub_log = os.path.join(d, "sub.log"), os.path.join(d, "pub.log")
        with open(sub_log, "w") as sl, open(pub_log, "w") as pl:
            sub = subprocess.Popen(sub_cmd, stdout=sl, stderr=subprocess.STDOUT)
            self.running = [sub]
            pub = None
            try:
                if o["kind"] in DGRAM and not wait_ready(sub, sub_log, 15):
                    rec["sub_exit"] = stop(sub)
                    return self.done(rec, ["sub did not start (see %s)" % sub_log])
                pub = subprocess.Popen(pub_cmd, stdout=pl, stderr=subprocess.STDOUT)
                self.running = [pub, sub]
                timed_out = []
                try:
                    pub.wait(limit)
                except subprocess.TimeoutExpired:
                    timed_out.append("pub took over %.0f s" % limit)
                rec["pub_exit"] = stop(pub)
                try:
                    sub.wait(15)
                except subprocess.TimeoutExpired:
                    timed_out.append("sub did not finish")
                rec["sub_exit"] = stop(sub)
            finally:
                for p in (pub, sub):
                    if p is not None and p.poll() is None:
                        stop(p)
                self.running = []
        return self.done(rec, timed_out)

    def done(self, rec, reasons):
        o, rate = self.o, rec["rate_hz"]
        d = os.path.join(self.outdir, rec["folder"])
        pt, st = read(os.path.join(d, "pub")), read(os.path.join(d, "sub"))
        rec["steal_pct"] = steal_pct(self.ticks0, cpu_ticks())
        low = rate * (1 - o["slack"] / 100)
        if pt is not None:
            issued = pt.get("issued") or 0
            rec.update(pub_rate_hz=pt.get("rate_hz"), sent=pt.get("sent"),
                       late_sends=pt.get("late_sends"),
                       late_pct=100.0 * (pt.get("late_sends") or 0) / issued if issued else None)
            if rec.get("pub_exit"):
                reasons.append("pub exit %d (%s)" % (rec["pub_exit"], pt.get("peer")))
            if (pt.get("rate_hz") or 0) < low:
                reasons.append("sender behind")
            if rec["late_pct"] is not None and rec["late_pct"] > o["max_late"]:
                reasons.append("late sends")
        elif "pub_exit" in rec:
            reasons.append("pub exit %d, no result" % rec["pub_exit"])
        if st is not None:
            rec.update(sub_rate_hz=st.get("rate_hz"), received=st.get("received"),
                       lost=st.get("lost"), duplicates=st.get("duplicates"),
                       end_of_stream=st.get("end_of_stream"))
            if st.get("lost"):
                reasons.append("loss")
            if rec.get("sub_exit"):
                reasons.append("sub exit %d (%s)" % (rec["sub_exit"], st.get("peer")))
            elif not st.get("end_of_stream"):
                reasons.append("no end of stream")
            if (st.get("rate_hz") or 0) < low:
                reasons.append("receiver behind")
        elif "sub_exit" in rec and not reasons:
            reasons.append("sub exit %d, no result" % rec["sub_exit"])
        rec["pass"] = not reasons
        rec["noisy"] = bool(reasons) and (rec["steal_pct"] or 0) > o["max_steal"]
        if rec["noisy"]:
            reasons.append("host stole %.0f%% of the CPUs" % rec["steal_pct"])
        rec["verdict"] = "pass" if not reasons else "FAIL: " + ", ".join(reasons)
        self.steps.append(rec)
        return rec


HEAD = "%4s %12s %12s %12s %8s %7s %6s  %s"


def print_row(rec, out=sys.stdout):
    late, steal = rec.get("late_pct"), rec.get("steal_pct")
    print(HEAD % (rec["step"], fmt_rate(rec["rate_hz"]), fmt_rate(rec.get("pub_rate_hz")),
                  fmt_rate(rec.get("sub_rate_hz")),
                  "-" if rec.get("lost") is None else "{:,}".format(rec["lost"]),
                  "-" if late is None else "%.1f%%" % late,
                  "-" if steal is None else "%.1f%%" % steal, rec["verdict"]), file=out)
    out.flush()


def save(outdir, o, s, good, bad, state):
    doc = {"format": FORMAT, "tool": "maxrate", "host": socket.gethostname(),
           "params": {"transport": o["kind"], "addr": o["addr"], "from_hz": o["from"],
                      "to_hz": o["to"], "step_ns": o["step_ns"], "msg_len": o["len"],
                      "busy": o["busy"], "pub_cpu": o["pub_cpu"], "sub_cpu": o["sub_cpu"],
                      "tolerance_pct": o["tolerance"], "slack_pct": o["slack"],
                      "max_late_pct": o["max_late"], "retries": o["retries"],
                      "max_steal_pct": o["max_steal"], "pub_options": o["pub"],
                      "sub_options": o["sub"]},
           "state": state, "max_rate_hz": good, "first_bad_hz": bad, "steps": s.steps}
    write_atomic(os.path.join(outdir, "maxrate.json"), dumps_result(doc) + "\n")


NOISY_TRIES = 3     # uncounted runs of one rate because the host stole the CPUs


def trial(o, s, rate, progress):
    """A step at @rate, run again up to --retries times while it fails (and up to
    NOISY_TRIES more when the failure came with host steal above --max-steal);
    the last."""
    k = noisy = 0
    while True:
        r = s.step(rate)
        k += 1
        r["try"] = k
        progress(r)
        if r["pass"]:
            return r
        if r["noisy"] and noisy < NOISY_TRIES:
            noisy += 1
        elif k - noisy > o["retries"]:
            return r


def search(o, s, outdir, progress):
    """Step up (or down), then bisect; (good, bad, state)."""
    good = bad = None
    rate = o["from"]
    while True:                        # 1. double while passing, halve while failing
        r = trial(o, s, rate, progress)
        if r["pass"]:
            good = rate
            if bad is not None or rate >= o["to"]:
                break
            rate = min(rate * 2, o["to"])
        else:
            bad = rate
            if good is not None:
                break
            if rate == 1:
                return None, bad, "none passed"
            rate = max(1, rate // 2)
        save(outdir, o, s, good, bad, "searching")
    if good >= o["to"] and bad is None:
        return good, None, "reached --to"
    while (bad - good) * 100 > o["tolerance"] * good:   # 2. bisect
        mid = (good + bad) // 2
        if mid in (good, bad):
            break
        r = trial(o, s, mid, progress)
        if r["pass"]:
            good = mid
        else:
            bad = mid
        save(outdir, o, s, good, bad, "bisecting")
    return good, bad, "done"


def _interrupted(signum, frame):
    raise KeyboardInterrupt


def main(args):
    if any(a in ("-h", "--help") for a in args):
        sys.stdout.write(USAGE)
        return 0
    o = parse(list(args))
    probe_path("pub"), probe_path("sub")          # not built: say so now
    outdir = new_results_dir("maxrate", o["out"])
    os.makedirs(outdir)
    s = Search(o, outdir)
    print("jtr maxrate: %s%s, %d-byte messages, %.3g s steps, from %s msgs/s" % (
        o["kind"], " " + o["addr"] if o["addr"] else "", o["len"], o["step_ns"] / 1e9,
        fmt_rate(o["from"])))
    print(HEAD % ("step", "rate asked", "pub rate", "sub rate", "lost", "late", "steal",
                  "verdict"))
    good = bad = None
    # Ctrl-C and kill stop the search and keep the table, also where the shell
    # started jtr with SIGINT ignored (a background job of a script)
    handlers = {sig: signal.signal(sig, _interrupted) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        good, bad, state = search(o, s, outdir, print_row)
    except KeyboardInterrupt:
        for sig in handlers:        # a second Ctrl-C does not cut the clean-up short
            signal.signal(sig, signal.SIG_IGN)
        for p in s.running:
            stop(p, 2)
        done = s.steps
        ok = [r["rate_hz"] for r in done if r["pass"]]
        ko = [r["rate_hz"] for r in done if not r["pass"] and r["rate_hz"] > max(ok or [0])
              and sum(x["rate_hz"] == r["rate_hz"] for x in done) > o["retries"]]
        good, bad, state = max(ok) if ok else None, min(ko) if ko else None, "interrupted"
    finally:
        for sig, h in handlers.items():
            signal.signal(sig, h)
    save(outdir, o, s, good, bad, state)
    if state == "interrupted":
        print("interrupted after %d steps" % len(s.steps))
    if good is None:
        print("no rate passed (lowest tried %s msgs/s)" % fmt_rate(bad))
    elif state == "reached --to":
        print("max sustainable rate: >= %s msgs/s (--to reached)" % fmt_rate(good))
    else:
        print("max sustainable rate: %s msgs/s%s" % (
            fmt_rate(good), " (%s failed)" % fmt_rate(bad) if bad else ""))
    print("results: %s" % outdir)
    if state == "interrupted":
        return 130
    return 0 if good is not None else 1


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except UsageError as e:
        print("jtr: %s" % e, file=sys.stderr)
        sys.exit(2)
    except JtrError as e:
        print("jtr: error: %s" % e, file=sys.stderr)
        sys.exit(1)
