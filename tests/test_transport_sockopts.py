# SPDX-License-Identifier: GPL-2.0-only
"""Socket buffer sizes and Nagle on jtr's socket transports: --sndbuf and --rcvbuf
are asked of the kernel and what it made of them is read back into result.json and
summary.txt on both ends (Linux doubles a size it takes; root forces one past
net.core.[rw]mem_max), the default is still reported, --nagle lets TCP put many small
messages in one segment (TCP_INFO's count shows it) without losing any, and wrong
combinations are one line and exit 2."""
import math
import os
import re
import warnings

import pytest
from conftest import assert_usage_errors
from test_transports import free_port, pingpong, pubsub, two_hosts  # noqa: F401  (a fixture)

from jtrpy.results import validity as V

# not marked measures: real runs judged by what arrives and how they end, not by
# timing, so they run beside other tests (docs/testing.md)

DEFAULT = 4 << 20       # TP_SOCK_BUF_DEFAULT in transports/lib/tp.h


def sysctl(name):
    with open("/proc/sys/net/core/" + name) as f:
        return int(f.read())


def can_force():
    """The programs may force a buffer past the sysctl cap: CAP_NET_ADMIN, which
    they keep from this process (root keeps root)."""
    with open("/proc/self/status") as f:
        eff = next(int(ln.split()[1], 16) for ln in f if ln.startswith("CapEff:"))
    return bool(eff & (1 << 12))


def kernel_size(asked, cap_name):
    """What getsockopt gives back for a buffer of @asked bytes: twice what was
    asked, where the plain option caps what is asked at the sysctl unless forced."""
    cap = sysctl(cap_name)
    return 2 * (asked if can_force() or asked <= cap else cap)


def summary(path):
    with open(os.path.join(path, "summary.txt")) as f:
        return f.read()


def tcp_line(path):
    """summary.txt's "tcp:" line: (messages sent, segments out, the line)."""
    line = next(ln for ln in summary(path).splitlines() if ln.startswith("  tcp:"))
    m = re.search(r"sent (\d+) messages in (\d+) segments", line)
    return int(m.group(1)), int(m.group(2)), line


def cpu_wait_s():
    """How long some task has waited for a CPU so far, in s (/proc/pressure/cpu's
    "some" total; 0 where the kernel keeps no such count). While the sender or the
    softirq that acknowledges its segments waits, what it writes queues behind the
    unacknowledged segments and goes out together, Nagle or not."""
    try:
        with open("/proc/pressure/cpu") as f:
            return int(re.search(r"^some .*total=(\d+)", f.read(), re.M).group(1)) / 1e6
    except OSError:
        return 0.0


def check_buffers(res, path, snd, rcv):
    """@res (from the folder @path) asked for @snd and @rcv bytes (None: the default)
    and reports what the kernel uses, in result.json and summary.txt."""
    t = res["transport"]
    assert t["sndbuf_asked"] == snd and t["rcvbuf_asked"] == rcv
    for name, asked, cap in (("sndbuf", snd, "wmem_max"), ("rcvbuf", rcv, "rmem_max")):
        want = kernel_size(asked or DEFAULT, cap)
        assert t[name + "_bytes"] == want, (name, t[name + "_bytes"], want)
        assert t[name + "_bytes"] >= min(asked or DEFAULT, sysctl(cap))
    text = summary(path)
    for label, opt, asked, name in (("send buffer:", "--sndbuf", snd, "sndbuf"),
                                    ("receive buffer:", "--rcvbuf", rcv, "rcvbuf")):
        line = next(ln for ln in text.splitlines() if ln.strip().startswith(label))
        assert "%d bytes" % t[name + "_bytes"] in line, line
        assert ("%s %d" % (opt, asked) if asked else "default %d" % DEFAULT) in line, line


def test_buffers_asked_are_read_back_on_both_ends(tmp_path, validate):
    """tcp and udp, pub and sub: each end asks for one size and leaves the other at
    the default; both are read back (twice what was asked, below the sysctl cap)."""
    for kind in ("tcp", "udp"):
        for tag in (kind, kind + "-again"):
            pub, (sub,) = pubsub(tmp_path, kind, validate, count=1000, tag=tag,
                                 extra_pub=["--sndbuf", "96K"], extra_sub=["--rcvbuf", "160K"])
            t = sub["transport"]
            # a datagram is gone when the subscriber is held off its CPU until its
            # receive buffer is full (15 ms once, beside the other tests: 300 of
            # these messages); that is UDP, not a buffer read wrong: once more
            if kind != "udp" or not t["lost"] or tag != kind:
                break
            warnings.warn("udp: the subscriber lost %d of 1100 datagrams (its latency reached "
                          "%.1f ms: held off its CPU, its receive buffer full); run once more"
                          % (t["lost"], sub["runs"][0]["max_ns"] / 1e6), stacklevel=1)
        check_buffers(pub, tmp_path / ("pub" + tag), 96 << 10, None)
        check_buffers(sub, tmp_path / ("sub%s0" % tag), None, 160 << 10)
        assert t["received"] == 1100 and t["lost"] == 0
        assert pub["transport"]["nodelay"] is (True if kind == "tcp" else None)
        assert (pub["transport"]["segs_out"] is None) is (kind != "tcp")


def test_defaults_are_reported_ping(tmp_path, validate):
    """No option: the default size, read back; TCP_NODELAY on; a segment per message."""
    waited = cpu_wait_s()
    res = pingpong(tmp_path, "tcp", validate, count=300, rate=3000)
    waited = cpu_wait_s() - waited
    t = res["transport"]
    assert t["sndbuf_asked"] is None and t["rcvbuf_asked"] is None
    assert t["sndbuf_bytes"] == kernel_size(DEFAULT, "wmem_max")
    assert t["rcvbuf_bytes"] == kernel_size(DEFAULT, "rmem_max")
    assert t["nodelay"] is True
    assert "nagle:                 off (TCP_NODELAY)" in summary(tmp_path / "ping")
    # hellos, 20 warm-up, 300 measured and the end of stream, one at a time: each
    # its own segment, none put together but those sent while a CPU was awaited;
    # besides them the handshake's and pure ACKs (quiet: 3 more than messages; at
    # most one a reply, when the next message is late to carry the ACK)
    msgs, segs, line = tcp_line(tmp_path / "ping")
    assert segs == t["segs_out"] and "(Nagle off)" in line
    assert msgs >= 322
    assert msgs - 3000 * waited <= segs <= 2 * msgs + 3, (msgs, segs, waited)


def nagle_run(tmp_path, validate, nagle):
    """40-byte messages over tcp: with Nagle at the maximum rate, without it at 20K/s."""
    n = 100000 if nagle else 20000
    extra = ["-m", "40", "-r", "max" if nagle else "20K"] + (["--nagle"] if nagle else [])
    pub, (sub,) = pubsub(tmp_path, "tcp", validate, count=n, extra_pub=extra)
    s = sub["transport"]
    assert s["received"] == s["publisher_issued"] == n + 100 and s["lost"] == 0
    assert s["nodelay"] is True     # the subscriber did not ask for Nagle
    return pub["transport"]


def test_nagle_puts_small_messages_together(tmp_path, validate):
    t = nagle_run(tmp_path, validate, True)
    assert t["nodelay"] is False
    assert t["segs_out"] < t["sent_total"] / 2, (t["segs_out"], t["sent_total"])
    msgs, segs, line = tcp_line(tmp_path / "pub")
    assert (msgs, segs) == (t["sent_total"] + 1, t["segs_out"]) and "(Nagle on)" in line


def test_without_nagle_a_segment_per_message(tmp_path, validate):
    waited = cpu_wait_s()
    t = nagle_run(tmp_path, validate, False)
    waited = cpu_wait_s() - waited
    assert t["nodelay"] is True
    # on a quiet machine 99 % go alone; what was written while a CPU was awaited
    # (at 20K/s) may have gone together
    assert t["segs_out"] >= 0.9 * t["sent_total"] - 20000 * waited, \
        (t["segs_out"], t["sent_total"], waited)


def test_buffers_across_network_namespaces(tmp_path, validate, two_hosts):  # noqa: F811
    """tcp over a veth pair: the sizes asked on each side are the ones used, one of
    them past net.core.rmem_max (forced where the program may), and nothing is lost."""
    h = two_hosts
    big = min(4 * sysctl("rmem_max"), 512 << 20)     # past the cap, within --rcvbuf's range
    addr = "%s:%d" % (h["ip_a"], free_port())
    pub, (sub,) = pubsub(tmp_path, "tcp", validate, addr=addr, ns_pub=h["a"], ns_sub=h["b"],
                         count=2000, extra_pub=["--sndbuf", "256K", "--rcvbuf", "64K"],
                         extra_sub=["--sndbuf", "48K", "--rcvbuf", str(big)])
    check_buffers(pub, tmp_path / "pub", 256 << 10, 64 << 10)
    check_buffers(sub, tmp_path / "sub0", 48 << 10, big)
    assert sub["transport"]["received"] == 2100 and sub["transport"]["lost"] == 0
    # the subscriber's segments in are the publisher's out, and the SYN-ACK (sent
    # before the accepted socket counts) and the FIN, if it came before the
    # subscriber read its count
    assert 0 <= sub["transport"]["segs_in"] - pub["transport"]["segs_out"] <= 2


@pytest.mark.parametrize("kind", ["udp", "mcast"])
def test_datagrams_the_kernel_dropped_at_the_socket(tmp_path, validate, kind):
    """A subscriber that takes 5,000 messages/s behind an 8 KB receive buffer, a
    publisher at 20,000/s: most datagrams find the buffer full. The kernel's own
    count at the socket (socket_drops) covers every lost message, and no more than
    the lost ones and the control datagrams; summary.txt says it, and the
    validity's lost reason says where they went. The publisher's socket dropped
    nothing."""
    pub, (sub,) = pubsub(tmp_path, kind, validate, count=20000,
                         extra_sub=["--rcvbuf", "4K", "--max-rate", "5000"])
    t = sub["transport"]
    assert t["rcvbuf_bytes"] == 8192 and t["lost"] > 5000, t
    issued = pub["transport"]["issued"]
    assert t["received"] + t["lost"] == issued
    # and besides them only control datagrams (transports/lib/tp_sock.c): the end of
    # stream's 3 copies, the first hello's 3, one every 10 ms in the first second and
    # one every 100 ms after it
    hellos = 3 + 3 + 100 + 10 * math.ceil(pub["transport"]["duration_ns"] / 1e9) + 5
    assert t["lost"] <= t["socket_drops"] <= t["lost"] + hellos, (t, hellos)
    assert pub["transport"]["socket_drops"] == 0
    line = next(ln for ln in summary(tmp_path / "sub0").splitlines()
                if ln.strip().startswith("socket drops:"))
    assert "%d (dropped by the kernel at this socket" % t["socket_drops"] in line, line
    (r,) = [x for x in V.check(sub)["reasons"] if x["code"] == "lost"]
    assert "all of them dropped by the kernel at the receiving socket" in r["text"], r


def test_a_subscriber_that_keeps_up_drops_nothing(tmp_path, validate):
    """udp at 20,000/s to a subscriber that keeps up: socket_drops 0, said as 0.
    (A subscriber held off its CPU beside the other tests may lose some: then its
    kernel says it dropped exactly those.)"""
    pub, (sub,) = pubsub(tmp_path, "udp", validate, count=2000)
    t = sub["transport"]
    assert t["lost"] <= t["socket_drops"] and (t["lost"] > 0) is (t["socket_drops"] > 0), t
    assert "socket drops:          %d" % t["socket_drops"] in summary(tmp_path / "sub0")


def test_bad_input_exit_2(tmp_path):
    cases = [
        (["pub", "-T", "tcp", "--sndbuf", "0"], "--sndbuf 0: use a size from 1K to 512M"),
        (["sub", "-T", "udp", "--sndbuf", "1x"], "--sndbuf 1x: '1x' is not a size"),
        (["ping", "--rcvbuf", "1G"], "--rcvbuf 1G: use a size from 1K to 512M"),
        (["sub", "-T", "shm", "--rcvbuf", "64K"],
         "--rcvbuf 64K: the option is for sockets (-T tcp, udp, mcast, unix or unix-dgram)"),
        (["pong", "-T", "shm", "--sndbuf", "1M"], "--sndbuf 1M: the option is for sockets"),
        (["pub", "-T", "udp", "--nagle"], "--nagle is for tcp (-T tcp): udp has no Nagle"),
        (["ping", "-T", "unix", "--nagle"], "--nagle is for tcp (-T tcp): unix has no Nagle"),
    ]
    assert_usage_errors(tmp_path, cases)
