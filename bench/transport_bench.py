#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""transport_bench.py - the transport part of `make bench` (docs/bench.md).

Three comparisons, each against a peer measured in the same run between the
same two CPUs (A: the initiator, ping, client, producer, publisher; B: the
responder, pong, server, consumer, subscriber), rounds alternating A-tool,
peer, A-tool, peer..., medians reported:

1. shm ping-pong p50 round trip (`jtr ping -T shm -b --one-thread -r max`
   against `jtr pong -T shm -b`) vs the cache-line round trip
   (build/bench/cacheline_rtt). Goal: <= 1.5x.
2. UDP and TCP ping-pong p50 round trip, blocking and busy-poll, vs sockperf
   ping-pong (`--full-rtt`: round trips, not sockperf's default RTT/2;
   `--nonblocked` on both sides for busy-poll). Goal: <= 1.0x. At least
   SOCK_ROUNDS rounds, the tool that goes first alternating; ping with
   `--hist-error 0.1` (sockperf's percentiles are exact).
3. shm 1-to-1 throughput of 50-byte messages vs memcpy bandwidth in 100 KB
   blocks (build/bench/memcpy_bw). Batched (`jtr ipc`, 100 KB batches): goal
   >= 60 % of memcpy. Unbatched (`jtr pub -r max -m 50 -n 20M` into `jtr sub
   -f -b`, one ring publish per message): goal >= 60M messages/s, beside the
   cache-line limit (memcpy's bytes/s over 64: a 50-byte message and its slot
   stamp fill one line, so lines a second bound messages a second). Packed
   (`--pack 16`: 16 messages per ring slot) is reported apart, without a goal.

Every item prints the commands, the two numbers, the ratio, the goal and
PASS or MISS. A missed goal is a result; an item whose programs fail to run
says FAILED TO RUN, the others still run, and `make bench` exits 1. Run alone:
`.venv/bin/python bench/transport_bench.py` (BENCH_ROUNDS, BENCH_CPU as bench.py).
"""
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "analysis"))

from jtrpy.system.cpus import online_cpus  # noqa: E402
from jtrpy.system.ports import free_port  # noqa: E402

JTR = os.path.join(ROOT, "jtr")
BENCH_BIN = os.path.join(ROOT, "build", "bench")
MSG_LEN = 64            # ping-pong message, header included (sockperf -m 64)
TPUT_LEN = 50           # throughput message, header included
TPUT_COUNT = 20_000_000  # unbatched pub/sub messages a round (a short run is ruled by start-up)
TPUT_GOAL = 60e6        # unbatched messages/s
TPUT_PACK = 16          # messages per ring slot in the packed run, reported apart
LINE = 64               # bytes a cache line: one slot of a 50-byte message
TIMEOUT_S = 120         # any one program


class BenchError(Exception):
    """A program of the benchmark failed to run (not a missed goal)."""


def show(cmd, cpu=None):
    """The command as a user would type it (taskset shown when we pin with it)."""
    text = " ".join(shlex.quote(c) for c in cmd)
    text = text.replace(ROOT + "/", "")
    return ("taskset -c %d " % cpu if cpu is not None else "") + text


def run(cmd, cpu=None):
    """Run to the end; its stdout; BenchError with its stderr if it fails."""
    full = (["taskset", "-c", str(cpu)] if cpu is not None else []) + cmd
    try:
        p = subprocess.run(full, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise BenchError("%s: no end within %d s" % (show(cmd, cpu), TIMEOUT_S))
    if p.returncode != 0:
        raise BenchError("%s: exit %d: %s" % (show(cmd, cpu), p.returncode,
                                              p.stderr.strip()[-400:]))
    return p.stdout


class Server:
    """A peer started in the background (pong, sockperf server, sub), stopped by
    its own pid: waited for when it ends by itself, else terminated."""

    def __init__(self, cmd, cpu=None):
        self.cmd = (["taskset", "-c", str(cpu)] if cpu is not None else []) + cmd
        self.text = show(cmd, cpu)
        self.p = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True)

    def finish(self, ends_itself, timeout=15):
        """Its stdout; BenchError if it failed (only when it was to end by itself)."""
        if not ends_itself:
            self.p.terminate()
        try:
            out, err = self.p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            out, err = self.p.communicate()
            raise BenchError("%s: did not end" % self.text)
        if ends_itself and self.p.returncode != 0:
            raise BenchError("%s: exit %d: %s" % (self.text, self.p.returncode,
                                                  err.strip()[-400:]))
        return out

    def kill(self):
        """SIGKILL if it still runs (after a failure elsewhere)."""
        if self.p.poll() is None:
            self.p.kill()
            self.p.communicate()


def load(path):
    """A results folder's result.json."""
    with open(os.path.join(path, "result.json")) as f:
        return json.load(f)


def ratio_line(name, ratio, goal, ratios, higher_is_better=False):
    """'name: 1.23 (goal <= 1.5; rounds: ...): PASS|MISS' and the verdict."""
    ok = ratio >= goal if higher_is_better else ratio <= goal
    return ("  %s: %.3f (goal %s %s; rounds: %s): %s"
            % (name, ratio, ">=" if higher_is_better else "<=", goal,
               ", ".join("%.3f" % r for r in ratios), "PASS" if ok else "MISS")), ok


# -- 1. shm ping-pong vs the cache-line round trip -----------------------------

def cacheline_round(a, b, pause=False):
    """build/bench/cacheline_rtt between @a and @b: its JSON and the command."""
    cmd = [os.path.join(BENCH_BIN, "cacheline_rtt"), "-a", str(a), "-b", str(b), "-n", "500K"]
    if pause:
        cmd.append("--pause")
    return json.loads(run(cmd)), cmd


def ping_round(kind, addr, busy, a, b, count, out, msg_len=None, ping_flags=()):
    """One `jtr pong` + `jtr ping --one-thread -r max`: ping's result and the commands."""
    flags = (["-b"] if busy else []) + (["-m", str(msg_len)] if msg_len else [])
    pong_cmd = [JTR, "pong", "-T", kind, "-P", addr] + flags + ["-c", str(b), "-q"]
    ping_cmd = ([JTR, "ping", "-T", kind, "-P", addr] + flags +
                ["--one-thread", "-c", str(a), "-r", "max", "-n", str(count)] +
                list(ping_flags) + ["-q", "-o", out])
    shutil.rmtree(out, ignore_errors=True)
    pong = Server(pong_cmd)
    try:
        run(ping_cmd)
        pong.finish(True)
    finally:
        pong.kill()
    r = load(out)
    runs = {x["name"]: x for x in r["runs"]}
    return runs["rtt_from_send"], [show(pong_cmd) + " &", show(ping_cmd)]


SHM_PING_LEN = 56


def shm_vs_cacheline(a, b, rounds, tmp):
    """Item 1: alternating rounds, printed; the dict for bench.json."""
    jt, cl, clp, ratios, j64 = [], [], [], [], []
    for i in range(rounds):
        print("bench: transports round %d/%d: cache-line round trip and shm ping-pong, CPUs "
              "%d and %d" % (i + 1, rounds, a, b), file=sys.stderr)
        c, cl_cmd = cacheline_round(a, b)
        cp, _ = cacheline_round(a, b, pause=True)
        # 56 bytes (the 32-byte header and 24 of payload) and the slot's 8-byte
        # length and stamp fill one 64-byte line: one line moves each way, as in
        # the cache-line test; a 64-byte message spans two lines
        s, cmds = ping_round("shm", "jtrbench%d" % os.getpid(), True, a, b, 100000,
                             os.path.join(tmp, "ping-shm"), msg_len=SHM_PING_LEN)
        s64, _ = ping_round("shm", "jtrbench%d" % os.getpid(), True, a, b, 100000,
                            os.path.join(tmp, "ping-shm"))
        j64.append(s64["percentiles_ns"]["50"])
        cl.append(c["percentiles_ns"]["50"])
        clp.append(cp["percentiles_ns"]["50"])
        jt.append(s["percentiles_ns"]["50"])
        ratios.append(jt[-1] / cl[-1])
    med = statistics.median
    res = {"jtr_p50_ns": med(jt), "msg_len": SHM_PING_LEN, "jtr_64_byte_p50_ns": med(j64),
           "cacheline_p50_ns": med(cl),
           "cacheline_pause_p50_ns": med(clp), "ratio": med(ratios), "ratios": ratios,
           "goal": 1.5, "commands": [show(cl_cmd)] + cmds}
    print("shm ping-pong vs the cache-line round trip, CPUs %d and %d, %d rounds (medians)"
          % (a, b, rounds))
    for c in res["commands"]:
        print("  $ " + c)
    print("  %-34s %12s %12s" % ("", "jtr shm", "cache line"))
    print("  %-34s %12.0f %12.0f" % ("p50 round trip ns", res["jtr_p50_ns"],
                                      res["cacheline_p50_ns"]))
    print("  (%d-byte messages fill one 64-byte slot line; 64-byte messages span two: p50 "
          "%.0f ns; the cache line spinning with the pause hint, as the ring does: p50 %.0f ns)"
          % (SHM_PING_LEN, res["jtr_64_byte_p50_ns"], res["cacheline_pause_p50_ns"]))
    line, res["pass"] = ratio_line("ratio jtr shm / cache line", res["ratio"], 1.5, ratios)
    print(line)
    return res


# -- 2. UDP and TCP ping-pong vs sockperf ---------------------------------------

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def sockperf_round(kind, busy, a, b, seconds):
    """sockperf server on B, sockperf ping-pong on A: p50 round trip in ns."""
    port = free_port()
    flags = (["--tcp"] if kind == "tcp" else []) + (["--nonblocked"] if busy else [])
    srv_cmd = ["sockperf", "server", "-i", "127.0.0.1", "-p", str(port)] + flags
    cli_cmd = (["sockperf", "ping-pong", "-i", "127.0.0.1", "-p", str(port),
                "-m", str(MSG_LEN), "-t", str(seconds), "--full-rtt"] + flags)
    srv = Server(srv_cmd, b)
    try:
        for _ in range(25):
            # sockperf exits 0 after "ERROR: Can`t connect" while its server
            # is not listening yet: try again then
            out = ANSI.sub("", run(cli_cmd, a))
            if "Round trip is" in out or srv.p.poll() is not None:
                break
            time.sleep(0.2)
    finally:
        srv.finish(False)
        srv.kill()
    # with --full-rtt sockperf says "Round trip is" and its percentiles are
    # round trips in usec; without it "Latency is" (RTT/2)
    m = re.search(r"percentile 50\.000 =\s*([0-9.]+)", out)
    v = re.search(r"Valid Duration\] RunTime=([0-9.]+) sec; SentMessages=(\d+); "
                  r"ReceivedMessages=(\d+)", out)
    if "Round trip is" not in out or not m:
        raise BenchError("%s: no round trips in its output: %s"
                         % (show(cli_cmd, a), " / ".join(out.strip().splitlines()[-3:])))
    return ({"p50_ns": float(m.group(1)) * 1000.0,
             "round_trips": int(v.group(3)) if v else None},
            [show(srv_cmd, b) + " &", show(cli_cmd, a)])


# rounds of item 2 at least: one round's ratio moves by +-5 % with the host
# (blocking round trips are two VM wake-ups), so 3 rounds' median is a coin toss
SOCK_ROUNDS = 7
# ping's histogram error for item 2, in %: sockperf prints exact percentiles,
# and the default 1 % reports a bucket's top, up to 0.8 % above the value
SOCK_HIST_ERROR = "0.1"


def jtr_sock_round(kind, busy, a, b, count, tmp):
    """`jtr pong` on @b, `jtr ping --one-thread` on @a over udp or tcp: as ping_round."""
    return ping_round(kind, "127.0.0.1:%d" % free_port(), busy, a, b, count,
                      os.path.join(tmp, "ping-" + kind),
                      ping_flags=("--hist-error", SOCK_HIST_ERROR))


def sockets_vs_sockperf(a, b, rounds, tmp, seconds=1, count=10000):
    """Item 2: udp and tcp, blocking and busy-poll, alternating (which tool goes
    first alternates too); printed; a dict."""
    res = {"modes": {}, "goal": 1.0, "commands": []}
    rounds = max(rounds, SOCK_ROUNDS)
    res["rounds"] = rounds
    for kind in ("udp", "tcp"):
        for busy in (False, True):
            mode = "%s %s" % (kind, "busy-poll" if busy else "blocking")
            jt, sp, ratios = [], [], []
            for i in range(rounds):
                print("bench: transports round %d/%d: %s ping-pong, sockperf and jtr, CPUs "
                      "%d and %d" % (i + 1, rounds, mode, a, b), file=sys.stderr)
                if i % 2:
                    j, jcmds = jtr_sock_round(kind, busy, a, b, count, tmp)
                    s, scmds = sockperf_round(kind, busy, a, b, seconds)
                else:
                    s, scmds = sockperf_round(kind, busy, a, b, seconds)
                    j, jcmds = jtr_sock_round(kind, busy, a, b, count, tmp)
                sp.append(s["p50_ns"])
                jt.append(j["percentiles_ns"]["50"])
                ratios.append(jt[-1] / sp[-1])
            med = statistics.median
            res["modes"][mode] = {"jtr_p50_ns": med(jt), "sockperf_p50_ns": med(sp),
                                  "ratio": med(ratios), "ratios": ratios,
                                  "pass": med(ratios) <= 1.0,
                                  "commands": scmds + jcmds}
    print("UDP and TCP ping-pong vs sockperf ping-pong, loopback, %d-byte messages, "
          "client/ping on CPU %d, server/pong on CPU %d, %d rounds (medians; the tool that "
          "goes first alternates)" % (MSG_LEN, a, b, rounds))
    for mode in ("udp blocking", "udp busy-poll"):
        for c in res["modes"][mode]["commands"]:
            print("  $ " + c)
    print("  (tcp: the same with --tcp for sockperf and -T tcp for jtr)")
    print("  %-16s %14s %14s %8s" % ("p50 round trip", "jtr ns", "sockperf ns", "ratio"))
    for mode, m in res["modes"].items():
        print("  %-16s %14.0f %14.0f %8.3f  (goal <= 1.0; rounds: %s): %s"
              % (mode, m["jtr_p50_ns"], m["sockperf_p50_ns"], m["ratio"],
                 ", ".join("%.3f" % r for r in m["ratios"]), "PASS" if m["pass"] else "MISS"))
    res["pass"] = all(m["pass"] for m in res["modes"].values())
    return res


# -- 3. shm throughput vs memcpy bandwidth --------------------------------------

def memcpy_round(a, b):
    """build/bench/memcpy_bw from @a to @b in 100 KB blocks: its JSON and the command."""
    cmd = [os.path.join(BENCH_BIN, "memcpy_bw"), "-a", str(a), "-b", str(b), "-n", "10K",
           "-s", "100K"]
    return json.loads(run(cmd)), cmd


def pubsub_round(a, b, count, tmp, pack=1):
    """`jtr sub --fast --verify -b` on @b, `jtr pub -r max -m 50` on @a (@pack
    messages per ring slot): pub writes every message whole, its payload a pattern of
    its number, and sub checks every payload: messages/s and the commands."""
    name = "jtrbench%d" % os.getpid()
    sub_out, pub_out = os.path.join(tmp, "sub"), os.path.join(tmp, "pub")
    for d in (sub_out, pub_out):
        shutil.rmtree(d, ignore_errors=True)
    sub_cmd = [JTR, "sub", "-T", "shm", "-P", name, "--fast", "--verify", "-b", "-c", str(b),
               "-q", "-o", sub_out]
    pub_cmd = [JTR, "pub", "-T", "shm", "-P", name, "-r", "max", "-m", str(TPUT_LEN),
               "-n", str(count), "-w", "10K", "--no-timestamps", "-c", str(a), "-q",
               "-o", pub_out] + (["--pack", str(pack)] if pack > 1 else [])
    sub = Server(sub_cmd)
    try:
        run(pub_cmd)
        sub.finish(True)
    except BenchError:
        if not os.path.exists(os.path.join(sub_out, "result.json")):
            raise
    finally:
        sub.kill()
    t = load(sub_out)["transport"]
    if t["lost"] or not t["end_of_stream"] or t["payload"]["mismatched"]:
        raise BenchError("%s: lost %d, end of stream %s, payloads mismatched %d"
                         % (show(sub_cmd), t["lost"], t["end_of_stream"],
                            t["payload"]["mismatched"]))
    return t["rate_hz"], [show(sub_cmd) + " &", show(pub_cmd)]


IPC_SHM = ("shm-mutex", "shm-adaptive", "shm-lockless")


def ipc_round(a, b, tmp, objects="20M"):
    """`jtr ipc`, the shm methods, writer on @a and one reader on @b, 50-byte
    objects in 100 KB batches: (bytes/s of the fastest method, its name, the command)."""
    out = os.path.join(tmp, "ipc")
    shutil.rmtree(out, ignore_errors=True)
    cmd = [JTR, "ipc", "-n", objects, "-m", str(TPUT_LEN), "-B", "100K", "--readers", "1",
           "--methods", ",".join(IPC_SHM), "-c", "%d,%d" % (a, b), "-q", "-o", out]
    run(cmd)
    with open(os.path.join(out, "result.json")) as f:
        rows = [r for r in json.load(f)["rows"] if r["ok"]]
    if not rows:
        raise BenchError("%s: no shm row passed its check" % show(cmd))
    best = min(rows, key=lambda r: r["elapsed_s"])
    return best["bytes_per_reader"] / best["elapsed_s"], best["method"], show(cmd)


def throughput_vs_memcpy(a, b, rounds, tmp, count=TPUT_COUNT):
    """Item 3: alternating rounds, printed; the dict for bench.json."""
    jt, mc, mcp50, ratios, bt, bratios, bmethods, packed = [], [], [], [], [], [], [], []
    for i in range(rounds):
        print("bench: transports round %d/%d: memcpy bandwidth and shm pub/sub throughput, "
              "CPUs %d and %d" % (i + 1, rounds, a, b), file=sys.stderr)
        m, mcmd = memcpy_round(a, b)
        rate, cmds = pubsub_round(a, b, count, tmp)
        prate, pcmds = pubsub_round(a, b, count, tmp, pack=TPUT_PACK)
        packed.append(prate)
        mc.append(m["bytes_per_s"])
        mcp50.append(m["block_bytes"] * 1e9 / m["percentiles_ns"]["50"])
        jt.append(rate * TPUT_LEN)
        ratios.append(jt[-1] / mc[-1])
        bps, method, icmd = ipc_round(a, b, tmp)
        bt.append(bps)
        bmethods.append(method)
        bratios.append(bps / mc[-1])
    med = statistics.median
    msgs = [x / TPUT_LEN for x in jt]
    lines = [x / LINE for x in mc]
    res = {"jtr_bytes_per_s": med(jt), "jtr_msgs_per_s": med(msgs), "jtr_msgs_per_s_rounds": msgs,
           "count": count, "memcpy_bytes_per_s": med(mc),
           "memcpy_p50_block_bytes_per_s": med(mcp50),
           "line_limit_per_s": med(lines),
           "line_limit_ratio": med(j / x for j, x in zip(msgs, lines)),
           "unbatched_goal_msgs_per_s": TPUT_GOAL, "unbatched_pass": med(msgs) >= TPUT_GOAL,
           "per_message_ratio": med(ratios), "per_message_ratios": ratios,
           "packed": TPUT_PACK, "packed_msgs_per_s": med(packed),
           "packed_msgs_per_s_rounds": packed,
           "batched_bytes_per_s": med(bt), "batched_methods": bmethods,
           "ratio": med(bratios), "ratios": bratios, "goal": 0.6,
           "commands": [show(mcmd)] + cmds + pcmds[1:] + [icmd]}
    print("shm 1-to-1 throughput, %d-byte messages, vs memcpy bandwidth in 100 KB blocks, "
          "producer/pub on CPU %d, consumer/sub on CPU %d, %d rounds (medians)"
          % (TPUT_LEN, a, b, rounds))
    for c in res["commands"]:
        print("  $ " + c)
    print("  %-34s %12s %12s %12s" % ("", "ipc batched", "pub/sub", "memcpy"))
    print("  %-34s %12.1f %12.1f %12.1f" % ("MB/s", res["batched_bytes_per_s"] / 1e6,
                                             res["jtr_bytes_per_s"] / 1e6,
                                             res["memcpy_bytes_per_s"] / 1e6))
    print("  %-34s %12.0f %12.0f %12.0f" % ("messages/s (memcpy: 64-byte lines/s)",
                                            res["batched_bytes_per_s"] / TPUT_LEN,
                                            res["jtr_msgs_per_s"], res["line_limit_per_s"]))
    print("  (memcpy at its p50 block time: %.1f MB/s; ipc: the fastest shm queue of the "
          "round (%s), 100 KB batches; pub/sub: one ring publish per message, not batched, "
          "%d messages, %.3f of memcpy's bytes)"
          % (res["memcpy_p50_block_bytes_per_s"] / 1e6, ", ".join(bmethods), count,
             res["per_message_ratio"]))
    print("  pub/sub unbatched, every message written whole and its payload verified: "
          "%.1fM messages/s (goal >= %.0fM; rounds: %s): %s; %.3f of the "
          "cache-line limit (memcpy's lines/s)"
          % (res["jtr_msgs_per_s"] / 1e6, TPUT_GOAL / 1e6,
             ", ".join("%.1fM" % (x / 1e6) for x in msgs),
             "PASS" if res["unbatched_pass"] else "MISS", res["line_limit_ratio"]))
    print("  pub/sub packed, %d messages per ring slot (--pack %d), verified: %.1fM messages/s "
          "(rounds: %s), %.2f x unbatched" % (TPUT_PACK, TPUT_PACK, res["packed_msgs_per_s"] / 1e6,
                                     ", ".join("%.1fM" % (x / 1e6) for x in packed),
                                     res["packed_msgs_per_s"] / res["jtr_msgs_per_s"]))
    line, res["pass"] = ratio_line("ratio jtr shm (100 KB batches) / memcpy", res["ratio"],
                                   0.6, bratios, True)
    print(line)
    return res


def cpu_pair():
    """(A, B): B is BENCH_CPU (default the last online CPU), A another online CPU."""
    cpus = online_cpus()
    b = int(os.environ.get("BENCH_CPU", cpus[-1]))
    others = [c for c in cpus if c != b]
    if not others:
        return None
    return others[0], b


def transports(rounds, tmp):
    """All three items: (a dict for bench.json or None when they cannot run
    here, the errors of the items that failed to run). An item that fails is
    reported and the others still run."""
    pair = cpu_pair()
    if not pair:
        print("transport benchmarks: skipped (they need two online CPUs)")
        return None, []
    for exe in ("cacheline_rtt", "memcpy_bw"):
        if not os.access(os.path.join(BENCH_BIN, exe), os.X_OK):
            return None, ["build/bench/%s is missing; run 'make bench'" % exe]
    a, b = pair
    out, errors = {"cpus": [a, b], "rounds": rounds}, []
    items = [("shm_vs_cacheline", shm_vs_cacheline)]
    if shutil.which("sockperf"):
        m = re.search(r"version ([0-9.]+)", run(["sockperf", "--version"]))
        out["sockperf_version"] = m.group(1) if m else None
        items.append(("sockets_vs_sockperf", sockets_vs_sockperf))
    else:
        print("UDP and TCP vs sockperf: skipped (sockperf is missing; run 'make deps', "
              "Debian package sockperf)")
    items.append(("shm_throughput_vs_memcpy", throughput_vs_memcpy))
    for name, fn in items:
        try:
            out[name] = fn(a, b, rounds, tmp)
        except BenchError as e:
            print("%s: FAILED TO RUN: %s" % (name, e))
            out[name] = {"error": str(e)}
            errors.append("%s: %s" % (name, e))
        sys.stdout.flush()
    # a pong or sub killed after a failure cannot remove its segments
    for f in os.listdir("/dev/shm"):
        if f.startswith("jtr-jtrbench%d" % os.getpid()):
            os.unlink(os.path.join("/dev/shm", f))
    return out, errors


if __name__ == "__main__":
    import tempfile
    tmpdir = tempfile.mkdtemp(prefix="jtr-bench-")
    try:
        _, errs = transports(int(os.environ.get("BENCH_ROUNDS", "3")), tmpdir)
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    sys.exit(1 if errs else 0)
