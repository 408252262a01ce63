# SPDX-License-Identifier: GPL-2.0-only
"""jtr duplex: both endpoints publish and subscribe at once. Across two network
namespaces over udp and tcp, and on one host with swapped addresses over shm,
unix-dgram and mcast (its pubs started after a --delay), each side's sub
receives every message the other side's pub sent; bad input is refused with one
line before anything runs (and what pub or sub refuse themselves leaves nothing
behind); Ctrl-C or SIGTERM stops both programs, keeps what they wrote, marked
partial, and exits 130, while the peer ends with 1 (peer gone)."""
import json
import os
import signal
import subprocess
import time

import jsonschema
import pytest
from conftest import JTR, ROOT, assert_usage_errors, load, run_jtr, wait_for
from test_transports import (
    finish,
    free_port,
    kill_all,
    two_hosts,  # noqa: F401 (a fixture)
)

# not marked measures: real runs judged by what arrives and how they end, not by
# timing, so they run beside other tests (docs/testing.md)

COUNT = 2000
WARMUP = 100

with open(os.path.join(ROOT, "docs", "duplex.schema.json")) as f:
    SCHEMA = json.load(f)
jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.fixture(autouse=True)
def no_shm_left():
    """Rings of a side killed on purpose are not removed by it: remove this test
    run's, whatever happened."""
    yield
    prefix = "jtr-dx%d-" % os.getpid()
    for f in os.listdir("/dev/shm"):
        if f.startswith(prefix):
            os.unlink(os.path.join("/dev/shm", f))


def start(args, ns=None):
    """`jtr duplex ARGS` (in network namespace @ns) in a session of its own, as
    a terminal would start it, with pipes."""
    cmd = [JTR, "duplex"] + [str(a) for a in args]
    if ns:
        cmd = ["ip", "netns", "exec", ns] + cmd
    env = dict(os.environ)
    env.pop("JTR_PROG", None)
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, start_new_session=True)


def duplex_doc(folder):
    with open(os.path.join(folder, "duplex.json")) as f:
        doc = json.load(f)
    errors = list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(doc))
    assert not errors, [e.message for e in errors[:5]]
    return doc


def run_pair(tmp_path, kind, a_args, b_args, ns=(None, None), extra=()):
    """Side a and side b at once, each publishing COUNT messages at 2K/s: for
    each, (exit status, stdout, stderr, duplex.json)."""
    common = ["-T", kind, "-r", "2K", "-n", COUNT, "-w", WARMUP, "--wait", "20"] + list(extra)
    procs = []
    try:
        for name, args, where in (("a", a_args, ns[0]), ("b", b_args, ns[1])):
            procs.append(start(common + list(args) + ["-o", tmp_path / name], ns=where))
        out = {}
        for name, p in zip("ab", procs):
            rc, so, se = finish(p, timeout=90)
            assert "Traceback" not in se, se
            out[name] = (rc, so, se, duplex_doc(tmp_path / name) if rc == 0 else None)
        return out
    finally:
        kill_all(procs)


def check_pair(tmp_path, out, kind, validate):
    """Each side sent COUNT, received every one of the other side's, lost none."""
    for me, peer in (("a", "b"), ("b", "a")):
        rc, so, se, doc = out[me]
        assert rc == 0, se
        pdoc = out[peer][3]
        p, s = doc["pub"], doc["sub"]
        assert doc["exit_status"] == 0 and not doc["partial"] and doc["params"]["transport"] == kind
        assert p["exit_status"] == 0 and p["peer"] == "ok" and not p["partial"]
        assert p["sent"] == COUNT and p["warmup_sent"] == WARMUP and p["issued"] == COUNT + WARMUP
        assert s["exit_status"] == 0 and s["peer"] == "ok" and s["end_of_stream"]
        assert s["received"] == pdoc["pub"]["sent"] == COUNT and s["lost"] == 0
        assert s["warmup_received"] == WARMUP and s["duplicates"] == s["reordered"] == 0
        assert s["publisher_issued"] == pdoc["pub"]["issued"]
        lat = s["latency_ns"]["from_send"]
        assert lat["samples"] == COUNT and 0 < lat["p50_ns"] <= lat["p99_ns"] <= lat["max_ns"]
        # the programs' own results, beside duplex.json
        folder = tmp_path / me
        assert validate(load(folder / "pub"))["tool"] == "pub"
        sub = validate(load(folder / "sub"))
        assert sub["tool"] == "sub" and sub["transport"]["measured"] == COUNT
        assert (folder / "pub.log").exists() and (folder / "sub.log").exists()
        # the summary: printed and in summary.txt
        lines = so.splitlines()
        assert lines[0].startswith("jtr duplex: %s, " % kind)
        assert lines[-1] == "results: %s" % folder
        assert (folder / "summary.txt").read_text().splitlines() == lines[:-1]
        assert "sent      2,000 at 2,000/s (+100 warm-up)" in so
        assert "received  2,000 (+100 warm-up)" in so and ", lost 0, latency p50 " in so


@pytest.mark.parametrize("kind", ["udp", "tcp"])
def test_both_ways_across_namespaces(tmp_path, validate, two_hosts, kind):  # noqa: F811
    h = two_hosts
    pa, pb = free_port(), free_port()
    if kind == "udp":       # a pub sends to the peer's address; a sub binds its own
        a = ["--pub-addr", "%s:%d" % (h["ip_b"], pb), "--sub-addr", "0.0.0.0:%d" % pa]
        b = ["--pub-addr", "%s:%d" % (h["ip_a"], pa), "--sub-addr", "%s:%d" % (h["ip_b"], pb)]
    else:                   # a pub listens on its own address; a sub connects to the peer's
        a = ["--pub-addr", "0.0.0.0:%d" % pa, "--sub-addr", "%s:%d" % (h["ip_b"], pb)]
        b = ["--pub-addr", "%s:%d" % (h["ip_b"], pb), "--sub-addr", "%s:%d" % (h["ip_a"], pa)]
    out = run_pair(tmp_path, kind, a, b, ns=(h["a"], h["b"]))
    check_pair(tmp_path, out, kind, validate)
    if kind == "udp":
        assert "sending %s:%d, receiving on 0.0.0.0:%d" % (h["ip_b"], pb, pa) in out["a"][1]
    else:
        assert "publishing on 0.0.0.0:%d (listening), receiving from %s:%d" % (
            pa, h["ip_b"], pb) in out["a"][1]


@pytest.mark.parametrize("kind", ["shm", "unix-dgram", "mcast"])
def test_one_host_swapped_addresses(tmp_path, validate, kind):
    extra = ()
    if kind == "shm":
        x, y = ("dx%d-%d-%s" % (os.getpid(), free_port(), n) for n in "xy")
    elif kind == "mcast":
        # no receiver to wait for: each pub starts a while after its sub, so
        # the other side's sub has joined by then
        x, y = ("239.255.%d.%d:%d" % (os.getpid() % 250, n, free_port()) for n in (1, 2))
        extra = ("--delay", "500ms")
    else:
        x, y = str(tmp_path / "x.sock"), str(tmp_path / "y.sock")
    out = run_pair(tmp_path, kind, ["--pub-addr", x, "--sub-addr", y],
                   ["--pub-addr", y, "--sub-addr", x], extra=extra)
    check_pair(tmp_path, out, kind, validate)
    if kind == "mcast":
        assert out["a"][3]["params"]["delay_ns"] == 500_000_000


def test_bad_input(tmp_path):
    port = free_port()
    udp = ["-T", "udp", "--pub-addr", "127.0.0.1:%d" % free_port(),
           "--sub-addr", "127.0.0.1:%d" % port]
    assert_usage_errors(tmp_path, [
        (["duplex", "-T", "udp"], "give --pub-addr and --sub-addr"),
        (["duplex", "-T", "udp", "--pub-addr", "127.0.0.1:%d" % port,
          "--sub-addr", "0.0.0.0:%d" % port], "would send to its own sub"),
        (["duplex", "-T", "tcp", "--pub-addr", "0.0.0.0:%d" % port,
          "--sub-addr", "127.0.0.1:%d" % port], "would connect to its own pub"),
        (["duplex", "-T", "shm", "--pub-addr", "r1", "--sub-addr", "r1"], "one ring"),
        (["duplex", "-T", "udp", "--pub-addr", "10.0.0.2", "--sub-addr", "0.0.0.0:1"],
         "--pub-addr 10.0.0.2: give A.B.C.D:PORT"),
        (["duplex", "-T", "mcast", "--pub-addr", "10.0.0.2:5", "--sub-addr", "239.255.0.1:5"],
         "not an IPv4 multicast group"),
        (["duplex", "-T", "carrier-pigeon"], "-T carrier-pigeon"),
        (["duplex", *udp, "-r", "0"], "-r 0"),
        (["duplex", *udp, "-n", "10", "-d", "1s"], "cannot go with"),
        (["duplex", *udp, "-b", "--recv", "epoll"], "-b and --recv epoll"),
        (["duplex", "-T", "tcp", "--pub-addr", "0.0.0.0:1", "--sub-addr", "10.0.0.2:2",
          "--delay", "1s"], "--delay with -T tcp"),
        (["duplex", *udp, "--frobnicate"], "unknown option"),
        # refused by the programs themselves: the other one is stopped, nothing kept
        (["duplex", *udp, "-r", "1K", "--latency-rate", "5K"], "jtr pub: --latency-rate 5000"),
        (["duplex", *udp, "--sub", "--max-rate 0"], "jtr sub: --max-rate 0"),
        (["duplex", *udp, "--stats-every", "5ms"], "jtr sub: --stats-every 5ms: use at least 10ms"),
    ])
    # a folder that was there loses only what the refused run wrote in it
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "mine.txt").write_text("kept\n")
    p = run_jtr("duplex", *udp, "--pub", "--pack 0", "-o", keep)
    assert p.returncode == 2 and p.stderr.startswith("jtr duplex: jtr pub: --pack 0"), p.stderr
    assert sorted(os.listdir(keep)) == ["mine.txt"]


@pytest.mark.parametrize("how", ["ctrl-c", "term"])
def test_stop_signal_keeps_both_results(tmp_path, how):
    """Ctrl-C (SIGINT to the session's group) or SIGTERM to jtr duplex alone on
    one side: both of its programs stop and write their results, marked
    partial; exit 130, no traceback. Its peer's pub finds nobody receiving: 1.
    The stop comes 1 s after both subs are ready; when the peer's pub had not begun
    sending by then (its start took longer once, beside the other tests: the left
    sub received nothing), it runs once more, saying so."""
    for attempt in (1, 2):
        d = tmp_path / str(attempt)
        d.mkdir()
        left, right, doc, so = _stopped_left(d, how)
        try:
            if doc["sub"]["received"] == 0 and attempt == 1:
                print("test_duplex: the right pub had not begun sending 1 s after both subs "
                      "were ready (the left sub received nothing): running it again")
                continue
            assert doc["pub"]["sent"] > 0 and doc["sub"]["received"] > 0
            assert (d / "left" / "summary.txt").read_text().splitlines() == \
                so.splitlines()[:-1]
            rc, so, se = finish(right, timeout=30)
            assert rc == 1, se
            peer = duplex_doc(d / "right")
            assert peer["exit_status"] == 1 and peer["pub"]["peer"] == "gone"
            # what the left pub sent before it stopped, the right sub received; what
            # it issued and could not send (a full socket buffer beside the other
            # tests, 7 once) the sub counts lost, no more
            unsent = doc["pub"]["issued"] - doc["pub"]["sent"] - doc["pub"]["warmup_sent"]
            assert peer["sub"]["received"] == doc["pub"]["sent"], (peer["sub"], doc["pub"])
            assert peer["sub"]["lost"] == unsent, (peer["sub"], doc["pub"])
            return
        finally:
            kill_all([left, right])


def _stopped_left(tmp_path, how):
    """Both sides of a duplex over loopback, the left stopped by @how 1 s after both
    subs are ready: (left, right, the left's duplex.json, its stdout), the left's
    exit and results checked."""
    pl, pr = free_port(), free_port()
    common = ["-T", "udp", "-r", "1K", "-d", "30s", "-w", WARMUP]
    left = start(common + ["--pub-addr", "127.0.0.1:%d" % pr, "--sub-addr", "127.0.0.1:%d" % pl,
                           "-o", tmp_path / "left"])
    right = start(common + ["--pub-addr", "127.0.0.1:%d" % pl,
                            "--sub-addr", "127.0.0.1:%d" % pr, "-o", tmp_path / "right"])
    try:
        for side in ("left", "right"):
            assert wait_for(lambda log=tmp_path / side / "sub.log": log.exists() and
                            "ready on" in log.read_text(), 20), side + "'s sub never bound"
        time.sleep(1.0)                                 # both pubs sending
        if how == "term":
            left.send_signal(signal.SIGTERM)
        else:
            os.killpg(left.pid, signal.SIGINT)
        rc, so, se = finish(left, timeout=30)
        assert rc == 130, se
        assert "Traceback" not in se and "jtr duplex: interrupted; partial results in" in se
        doc = duplex_doc(tmp_path / "left")
        assert doc["partial"] and doc["exit_status"] == 130
        for side in ("pub", "sub"):
            res = load(tmp_path / "left" / side)
            assert res["partial"] and doc[side]["partial"] and doc[side]["exit_status"] == 130
        return left, right, doc, so
    except BaseException:
        kill_all([left, right])
        raise
