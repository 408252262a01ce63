# SPDX-License-Identifier: GPL-2.0-only
"""--legacy-output=um_lat (jtr ping) and =um_perf (jtr pub, jtr sub): the lines
the tools jtr replaces printed, in the shapes of the lines their own documents
print (SEED_* below, copied from them: every number becomes a number of the
same kind), with figures checked against what jtr measured: ping's -H buckets
against every round trip of its latency file, the counts against result.json."""
import csv
import math
import re

import pytest
from conftest import load, run_jtr
from test_pacing import pong as start_pong
from test_transports import addr_for, finish, kill_all, spawn, wait_ready

pytestmark = pytest.mark.measures

# um_lat_ping's last lines, as its document prints them (after its -H bucket
# lines, one count each)
SEED_UM_LAT = """\
o_histogram=300,1000, hist_overflows=0, hist_min_sample=19991, hist_max_sample=115171,
hist_num_samples=500000, average_sample=24134,
Percentiles: 90=25000, 99=34000, 99.9=51000, 99.99=83000, 99.999=113000
actual_sends=500000, duration_ns=9999983492, result_rate=49999.982540, global_max_tight_sends=6, max_flight_size=500004
Rcv: num_rcv_msgs=500004, num_rx_msgs=0, num_unrec_loss=0,
"""  # noqa: E501 (the seed's lines as they are)
# um_perf_pub's lines (its options, the sends, the last line) and um_perf_sub's
SEED_UM_PERF_PUB = """\
o_affinity_cpu=7, o_config=ump.cfg, o_flags=0x00, o_jitter_loops=0, o_linger_ms=2000, o_msg_len=25, o_num_msgs=100000000, o_rate=999999999, o_topic='um_perf', o_warmup_loops=10000,
actual_sends=100000000, duration_ns=5045650145, result_rate=19819051.485188,
25,100010000,19819051.485188
"""  # noqa: E501
SEED_UM_PERF_SUB = """\
o_affinity_cpu=5, o_config=ump.cfg, o_fast=0, o_spin_cnt=0, o_topic='um_perf',
rcv event EOS, 'um_perf', LBT-SMX:7001139a:12001[1912960237], num_rcv_msgs=2510000, min_latency=128, max_latency=205974, average latency=156,
"""  # noqa: E501


def shape(line):
    """A seed's line as a pattern: each number any number of its kind (-1 too,
    decimals with as many places), each quoted or configuration word any word,
    the source's name anything without a comma."""
    out, pos = "", 0
    token = re.compile(r"(?P<src>LBT-SMX:[^,]+)|(?P<q>'[^']*')|(?P<cfg>(?<=o_config=)[^,]+)|"
                       r"(?P<dec>\d+\.(?P<places>\d+))|(?P<hex>0x[0-9a-f]+)|(?P<int>\d+)")
    for m in token.finditer(line):
        out += re.escape(line[pos:m.start()])
        if m.group("src"):
            out += r"[^,]+"
        elif m.group("q"):
            out += r"'[^']*'"
        elif m.group("cfg"):
            out += r"[^,]+"
        elif m.group("dec"):
            out += r"\d+\.\d{%d}" % len(m.group("places"))
        elif m.group("hex"):
            out += r"0x[0-9a-f]{%d}" % (len(m.group("hex")) - 2)
        else:
            out += r"-?\d+"
        pos = m.end()
    return re.compile(out + re.escape(line[pos:]))


def fields(text):
    """{name: number} of 'name=value' pairs (Percentiles' keys as p90, ...)."""
    text = text.replace("Percentiles: ", "").replace("average latency", "average_latency")
    out = {}
    for k, v in re.findall(r"([\w.]+)=(-?[\d.]+)", text):
        out[("p" + k) if k[0].isdigit() else k] = float(v) if "." in v else int(v)
    return out


def test_the_shapes_match_the_seeds_own_lines():
    """The shapes are what they claim: each seed line matches its own shape,
    and a changed separator or name does not."""
    for seed in (SEED_UM_LAT, SEED_UM_PERF_PUB, SEED_UM_PERF_SUB):
        for line in seed.splitlines():
            assert shape(line).fullmatch(line), line
    line = SEED_UM_LAT.splitlines()[2]
    assert not shape(line).fullmatch(line.replace("99.9=", "99.9:"))
    assert not shape(line).fullmatch(line.replace(", ", ","))


def fixed_pct(counts, total, ns_per, pct):
    """um_lat's percentile of its buckets: the end of the first bucket where at
    least pct % of the samples lie, -1 among the overflows."""
    need, cum = math.ceil(total * pct / 100), 0
    for i, n in enumerate(counts):
        cum += n
        if total and cum >= need:
            return (i + 1) * ns_per
    return -1


def test_ping_prints_um_lats_lines(tmp_path, validate):
    """jtr ping --legacy-output=um_lat -H 40,2000: 40 bucket counts, then um_lat's
    five lines in their shapes; the buckets, overflows, min, max, average and
    percentiles worked out again from every round trip of the latency file;
    sends and replies as result.json has them."""
    addr, pong = start_pong(tmp_path)
    try:
        out = tmp_path / "ping"
        p = run_jtr("ping", "-T", "udp", "-P", addr, "-m", "24", "-n", "3000", "-r", "5K",
                    "-w", "5", "-H", "40,2000", "--latency-file", "--legacy-output=um_lat",
                    "-o", out, "--wait", "20", timeout=120)
        assert p.returncode == 0, p.stderr
        rc, _, err = finish(pong)
        assert rc == 0, err
    finally:
        kill_all([pong])
    res = validate(load(out))
    lines = p.stdout.splitlines()
    assert len(lines) == 40 + 5, p.stdout
    counts = [int(x) for x in lines[:40]]
    for got, seed in zip(lines[40:], SEED_UM_LAT.splitlines()):
        assert shape(seed).fullmatch(got), (got, seed)
    with open(out / "latency.csv") as f:
        lat = [int(r["latency_ns"]) for r in csv.DictReader(f)]
    assert len(lat) == 3000
    want = [0] * 40
    for v in lat:
        if v // 2000 < 40:
            want[v // 2000] += 1
    assert counts == want
    got = fields("\n".join(lines[40:]))
    assert (got["o_histogram"], got["hist_overflows"]) == (40, 3000 - sum(want))
    assert got["hist_min_sample"] == min(lat) and got["hist_max_sample"] == max(lat)
    assert got["hist_num_samples"] == 3000 and got["average_sample"] == sum(lat) // 3000
    for k in ("90", "99", "99.9", "99.99", "99.999"):
        assert got["p" + k] == fixed_pct(counts, 3000, 2000, float(k)), k
    t = res["transport"]
    assert got["actual_sends"] == t["sent"] == 3000
    assert got["num_rcv_msgs"] == t["received"] and got["num_unrec_loss"] == t["lost"]
    assert got["max_flight_size"] == t["max_flight_size"]
    assert res["params"]["histo_buckets"] == 40 and res["params"]["histo_ns_per_bucket"] == 2000
    assert t["fixed_histogram"] == {"ns_per_bucket": 2000, "overflows": 3000 - sum(want),
                                    "counts": want}


def test_pub_and_sub_print_um_perfs_lines(tmp_path, validate):
    """jtr sub and jtr pub --legacy-output=um_perf: each prints the lines um_perf's
    tool printed, in their shapes, with jtr's figures: the options asked, the
    sends and rate (with the warm-up in the last line), the messages received
    with the warm-up and the latency from the send."""
    addr = addr_for("udp", tmp_path)
    sub = spawn("sub", "-T", "udp", "-P", addr, "--wait", "30", "--legacy-output=um_perf",
                "-o", tmp_path / "sub")
    try:
        wait_ready(sub)
        p = run_jtr("pub", "-T", "udp", "-P", addr, "-m", "25", "-n", "2000", "-r", "10K",
                    "-w", "100", "--legacy-output=um_perf", "-o", tmp_path / "pub", timeout=60)
        assert p.returncode == 0, p.stderr
        rc, sout, err = finish(sub)
        assert rc == 0, err
    finally:
        kill_all([sub])
    pub, sres = validate(load(tmp_path / "pub")), validate(load(tmp_path / "sub"))
    plines = p.stdout.splitlines()
    assert len(plines) == 3, p.stdout
    for got, seed in zip(plines, SEED_UM_PERF_PUB.splitlines()):
        assert shape(seed).fullmatch(got), (got, seed)
    f = fields(p.stdout)
    t = pub["transport"]
    assert (f["o_msg_len"], f["o_num_msgs"], f["o_rate"], f["o_warmup_loops"]) == \
        (25, 2000, 10000, 100)
    assert f["actual_sends"] == t["sent"] == 2000
    assert abs(f["result_rate"] - t["rate_hz"]) < 0.01
    assert plines[2] == "25,%d,%s" % (t["sent_total"], plines[1].split("result_rate=")[1][:-1])
    slines = sout.splitlines()
    assert len(slines) == 2, sout
    for got, seed in zip(slines, SEED_UM_PERF_SUB.splitlines()):
        assert shape(seed).fullmatch(got), (got, seed)
    f = fields(slines[1])
    st = sres["transport"]
    assert f["num_rcv_msgs"] == st["received"] == 2100
    run = next(r for r in sres["runs"] if r["name"] == "latency_from_send")
    assert (f["min_latency"], f["max_latency"]) == (run["min_ns"], run["max_ns"])
    assert abs(f["average_latency"] - run["mean_ns"]) <= 1


@pytest.mark.parametrize("prog,style", [("ping", "um_perf"), ("pub", "um_lat"),
                                        ("sub", "um_lat"), ("ping", "umlat")])
def test_a_style_a_program_does_not_print_is_refused(prog, style):
    p = run_jtr(prog, "-T", "udp", "--legacy-output=" + style)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and "--legacy-output=%s" % style in p.stderr, p.stderr
