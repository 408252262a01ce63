# SPDX-License-Identifier: GPL-2.0-only
"""render.duplex: the summary's lines from a duplex.json document: who listens,
what was sent and received, the latency, and what went wrong."""
from jtrpy.render.duplex import summary


def doc(**over):
    """A duplex.json document as drivers/duplex.py writes it."""
    d = {"params": {"transport": "udp", "pub_addr": "10.0.0.2:17391",
                    "sub_addr": "0.0.0.0:17392", "rate_hz": 10000},
         "pub": {"exit_status": 0, "partial": False, "peer": "ok", "sent": 100000,
                 "warmup_sent": 1000, "rate_hz": 10000.4, "late_pct": 0.25},
         "sub": {"exit_status": 0, "partial": False, "peer": "ok", "received": 99990,
                 "warmup_received": 1000, "lost": 10, "rate_hz": 9999.1,
                 "latency_ns": {"from_send": {"p50_ns": 12300, "p99_ns": 45600,
                                              "max_ns": 1200000},
                                "from_intended": {"p50_ns": 12500, "p99_ns": 51000,
                                                  "max_ns": 1300000}}}}
    for k, v in over.items():
        d[k].update(v)
    return d


def test_summary():
    assert summary(doc()) == [
        "jtr duplex: udp, sending 10.0.0.2:17391, receiving on 0.0.0.0:17392",
        "  sent      100,000 at 10,000/s (+1,000 warm-up), achieved 10,000/s, 0.2% late",
        "  received  99,990 (+1,000 warm-up) at 9,999/s, lost 10, latency p50 12.3 us p99 "
        "45.6 us max 1.20 ms",
        "            from the intended send time: p50 12.5 us p99 51.0 us max 1.30 ms"]


def test_summary_says_who_listens_and_what_went_wrong():
    d = doc(params={"transport": "tcp", "pub_addr": "0.0.0.0:1", "sub_addr": "10.0.0.2:2",
                    "rate_hz": None},
            pub={"exit_status": 1, "peer": "gone", "partial": True, "late_pct": None},
            sub={"latency_ns": None, "exit_status": 130, "partial": True})
    lines = summary(d)
    assert lines[0] == ("jtr duplex: tcp, publishing on 0.0.0.0:1 (listening), receiving "
                        "from 10.0.0.2:2")
    assert lines[1] == ("  sent      100,000 at max rate (+1,000 warm-up), achieved 10,000/s, "
                        "exit 1, peer gone, partial")
    assert lines[2].endswith("lost 10, no latency (unstamped messages, or jtr sub --fast), "
                             "exit 130, partial")
    assert len(lines) == 3
    shm = doc(params={"transport": "shm", "pub_addr": "a", "sub_addr": "b"})
    assert summary(shm)[0] == "jtr duplex: shm, publishing into ring a, reading ring b"


def test_summary_of_programs_that_wrote_nothing():
    d = doc(pub={"sent": None, "exit_status": None}, sub={"received": None, "exit_status": 2})
    assert summary(d)[1:] == ["  sent      nothing", "  received  nothing, exit 2"]
