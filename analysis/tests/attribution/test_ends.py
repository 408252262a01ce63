# SPDX-License-Identifier: GPL-2.0-only
"""Round trips across two ends (attribution/ends.py) on synthetic logs of ping's
CPU 1 and pong's CPU 0: each phase charged on the CPUs that can delay it, a
waiting program's wake-up charged to what held its CPU, a late send to what
held the sender and the rest to the backlog, no phase charged more than its
stamps measured, and overlapping round trips counted once in the totals; on
the numpy path and the plain one alike."""
import pytest

from jtrpy.attribution import ends
from jtrpy.trace import causes as C
from jtrpy.trace import events as E

from .test_attribute import SYM, T0, ev, switch, tick

PING, PONG = ("jtr-ping", 100, 120), ("jtr-pong", 200, 120)
SPIN = ("spin", 300, 89)            # FIFO 10
OTHER = ("bash", 400, 120)
IDLE0, IDLE1 = ("swapper/0", 0, 120), ("swapper/1", 0, 120)
SIDES = {"ping": [1], "pong": [0]}
PROGRAMS = {1: "jtr-ping", 0: "jtr-pong"}


@pytest.fixture(autouse=True, params=["numpy", "plain"])
def path(request, monkeypatch):
    monkeypatch.setenv("JTR_NUMPY", "1" if request.param == "numpy" else "0")
    return request.param


def woken(ts, who, cpu, on):
    """sched_wakeup of @who (comm, pid, prio) targeting @cpu, recorded on CPU @on."""
    return ev(ts, E.WAKEUP, who[1], cpu | who[2] << 32, who[0], cpu=on)


def attribute(tmp_path, events, rows, stamps, tool="ping", params=None, runs=None):
    E.write_events(str(tmp_path), sorted(events, key=lambda e: e[0]), T0 - 10**7,
                   T0 + 10**9, meta={"cpus": [0, 1], "backend": "ebpf"})
    log = E.read_events(str(tmp_path))
    result = {"tool": tool, "params": params or {"one_thread": True},
              "runs": runs or [{"name": "rtt_from_intended", "cpu": 1,
                                "duration_ns": 10**9, "start_mono_ns": T0},
                               {"name": "rtt_from_send", "cpu": 1, "duration_ns": 10**9,
                                "start_mono_ns": T0, "percentiles_ns": {"50": 10_000}}]}
    cols = {k: [s[n] for s in stamps] for n, k in enumerate(
        ("send_ns", "sent_ns", "peer_rx_ns", "peer_tx_ns"))}
    return ends.attribute_ends(result, rows, log, SIDES, cols, PROGRAMS, top=1000)


def parts(att, k=0):
    return {(p["category"], p["name"], p.get("side"), p.get("phase")): p["ns"]
            for p in att["worst"][k]["parts"]}


def background():
    """Both programs wait for messages from the start (a blocking receive)."""
    return [switch(T0 - 5_000_000, PING, IDLE1, preempted=False, cpu=1),
            switch(T0 - 5_000_000, PONG, IDLE0, preempted=False, cpu=0)]


def spun_round_trip(tmp_path, before=()):
    """One round trip with the spinner on pong's CPU from +4 to +304 us while pong
    waits (events @before it too), attributed: intended T0, the send call from
    +0.2 us to +3 us, pong's receive and send at +305 and +306 us, the reply at
    +320 us."""
    evs = background() + list(before) + [
        switch(T0 + 500, PING, IDLE1, preempted=False, cpu=1),  # after its send: waits
        switch(T0 + 4_000, IDLE0, SPIN, cpu=0),
        woken(T0 + 6_000, PONG, 0, on=1),
        switch(T0 + 304_000, SPIN, PONG, preempted=False, cpu=0),
        switch(T0 + 307_000, PONG, IDLE0, preempted=False, cpu=0),
        woken(T0 + 310_000, PING, 1, on=0),
        switch(T0 + 312_000, IDLE1, PING, cpu=1)]
    return attribute(tmp_path, evs, [(1, T0, 320_000)],
                     [(T0 + 200, T0 + 3_000, T0 + 305_000, T0 + 306_000)])


def test_pong_held_before_its_receive_is_charged_in_the_way_out(tmp_path):
    """The spinner runs on pong's CPU while pong waits; the message wakes pong at
    +6 us, the spinner keeps the CPU until +304 us: 298 us charged to it, pong's
    side, the way out; every part adds up to the round trip, no phase more than
    its stamps measured."""
    att = spun_round_trip(tmp_path)
    got = parts(att)
    assert got[("task preemption", "spin", "pong", "out")] == 298_000
    assert sum(got.values()) == 320_000
    w = att["worst"][0]
    assert (w["category"], w["name"]) == ("task preemption", "spin")
    assert "spin (pid 300, prio 89) held the CPU while jtr-pong waited to run" in w["chain"]
    for b in att["budget"]:
        assert b["charged_mean_ns"] <= b["measured_mean_ns"], b
    measured = {b["phase"]: b["measured_mean_ns"] for b in att["budget"]}
    assert measured == {"send": 3_000, "out": 302_000, "reflect": 1_000, "reply": 14_000}
    c = [x for x in att["causes"] if x["name"] == "spin"][0]
    assert (c["side"], c["total_ns"], c["tasks"][0]["pid"]) == ("pong", 298_000, 300)


def test_a_work_item_ends_when_its_kworker_leaves_the_cpu(tmp_path):
    """An unbound kworker starts a work item on pong's CPU 300 ms before the
    round trip and blocks in it (its end comes on another CPU, or never): the
    item is over when the kworker leaves; the spinner that later holds pong is
    what is charged, not the kworker 'for 300 ms'."""
    kw = ("kworker/u8:2", 500, 120)
    att = spun_round_trip(tmp_path, [
        switch(T0 - 300_000_000, IDLE0, kw, cpu=0),
        ev(T0 - 299_999_000, E.WQ_START, 0xffff0007, SYM["vmstat_update"], cpu=0, pid=500),
        switch(T0 - 299_900_000, kw, IDLE0, preempted=False, cpu=0)])
    got = parts(att)
    assert got[("task preemption", "spin", "pong", "out")] == 298_000, got
    assert not [k for k in got if k[1] == "kworker/u8:2"], got


def test_a_late_send_is_what_held_the_sender_then_the_backlog(tmp_path):
    """Intended at T0, sent from +200 us: another task preempted ping's pacing loop
    for 60 us of it (charged to it, the send phase), the rest is the backlog
    (earlier messages held the sender), never pong's side."""
    evs = background() + [
        switch(T0 - 1_000, IDLE1, PING, cpu=1),      # its pacing loop spins to the send
        switch(T0 + 50_000, PING, OTHER, cpu=1),
        switch(T0 + 110_000, OTHER, PING, preempted=False, cpu=1),
        switch(T0 + 150_000, IDLE0, SPIN, cpu=0),     # pong's CPU: not this message's
        switch(T0 + 180_000, SPIN, IDLE0, preempted=False, cpu=0)]
    att = attribute(tmp_path, evs, [(1, T0, 240_000)],
                    [(T0 + 200_000, T0 + 203_000, T0 + 210_000, T0 + 211_000)])
    got = parts(att)
    assert got[("task preemption", "bash", "ping", "send")] == 60_000
    assert got[("backlog", "earlier messages held the sender", "ping", "send")] == 140_000
    assert not any(k[2] == "pong" and k[3] == "send" for k in got), got
    assert sum(got.values()) == 240_000
    assert att["worst"][0]["chain"].startswith("sent 200.0 us late (140.0 us of it behind "
                                               "earlier messages)")
    send = [b for b in att["budget"] if b["phase"] == "send"][0]
    assert send["backlog_mean_ns"] == 140_000


def test_overlapping_round_trips_are_counted_once_in_the_totals(tmp_path):
    """Ten round trips in flight together while a spinner holds pong's CPU for
    1 ms: the spinner's total is the 1 ms it ran, not ten times it; the outliers'
    total is the time one was in flight; their lengths added are summed_ns."""
    evs = background() + [switch(T0 + 1_000, IDLE0, SPIN, cpu=0), woken(T0 + 2_000, PONG, 0, 1),
                          switch(T0 + 1_001_000, SPIN, PONG, preempted=False, cpu=0)]
    rows, stamps = [], []
    for k in range(10):
        s = T0 + k * 10_000
        rows.append((1, s, 1_010_000 - k * 10_000))
        stamps.append((s + 100, s + 1_000, T0 + 1_002_000, T0 + 1_003_000))
    att = attribute(tmp_path, evs, rows, stamps, params={"one_thread": False})
    spin = [c for c in att["causes"] if c["name"] == "spin"][0]
    assert spin["total_ns"] == 999_000 and spin["count"] == 10
    o = att["outliers"]
    assert o["total_ns"] == 1_010_000 and o["summed_ns"] == sum(r[2] for r in rows)
    assert sum(c["total_ns"] for c in att["causes"]) == o["total_ns"]
    assert all(c["share"] <= 1 for c in att["causes"])


def test_without_the_peers_stamps_one_phase_on_both_ends(tmp_path):
    """Messages too short for pong's stamps: the round trip after the send is
    one phase searched on both ends."""
    evs = background() + [switch(T0 + 1_000, IDLE0, SPIN, cpu=0), woken(T0 + 2_000, PONG, 0, 1),
                          switch(T0 + 51_000, SPIN, PONG, preempted=False, cpu=0)]
    att = attribute(tmp_path, evs, [(1, T0, 60_000)], [(T0 + 100, T0 + 500, 0, 0)])
    got = parts(att)
    assert got[("task preemption", "spin", "pong", "trip")] == 49_000
    assert sum(got.values()) == 60_000


def test_steal_of_many_spans_at_once_is_each_ones(tmp_path, path):
    """_Steal.within_all (numpy, every span at once) gives what within gives span
    by span, on random readings and spans."""
    import random
    np = pytest.importorskip("numpy")
    rnd = random.Random(7)
    st = ends._Steal.__new__(ends._Steal)
    rows, t, counter = [], T0, 0
    for _ in range(200):
        prev, t = t, t + rnd.randrange(1_000, 200_000)
        moved = rnd.choice([0, rnd.randrange(1, t - prev + 1)])
        rows.append((t, prev, counter + moved, counter))
        counter += moved
    st.why, st.rows, st.ts = None, {1: rows}, {1: [r[0] for r in rows]}
    a = [T0 + rnd.randrange(0, t - T0) for _ in range(500)]
    b = [x + rnd.randrange(0, 3_000_000) for x in a]
    got = st.within_all(np, 1, np.array(a, dtype=np.int64), np.array(b, dtype=np.int64))
    assert got.tolist() == [st.within(1, x, y) for x, y in zip(a, b)]


def test_the_own_path_of_many_groups_at_once_is_each_ones(path):
    """own_path_arrays (numpy, every outlier or span at once) takes what own_path
    takes group by group, on random parts: the same ns per key and span, the
    own path last in its span; totals whose product passes int64 as well."""
    import random
    np = pytest.importorskip("numpy")
    rnd = random.Random(11)
    pool = [C.HOST_OTHER + ("ping",), C.HOST_OTHER + ("pong",), C.HOST_STEAL + ("ping",),
            C.LATE + ("ping",), ("softirq", "NET_RX", "pong"), C.HOST_UNMEASURED + ("sub",)]
    for typical, scale in ((10_000, 50_000), (3 * 10**9, 10**10)):
        groups, v, k, grp = [], [], [], []
        for g in range(300):
            spans = []
            for _ in range(rnd.randrange(0, 4)):
                share = {}
                for key in rnd.sample(pool, rnd.randrange(0, 4)):
                    share[key] = rnd.choice([0, rnd.randrange(1, scale)])
                spans.append(share)
                for key, x in share.items():
                    v.append(x)
                    k.append(pool.index(key))
                    grp.append(g)
            groups.append(spans)
        q, n = [], 0            # each part's span, the spans numbered in order
        for spans in groups:
            for share in spans:
                q += [n] * len(share)
                n += 1
        keys = list(pool)
        arr = lambda x: np.array(x, np.int64)       # noqa: E731
        got_q, got_v, got_k = ends.own_path_arrays(np, keys, arr(grp), arr(q), arr(v), arr(k),
                                                   typical)
        want = []
        for spans in groups:
            copy = [dict(s) for s in spans]
            ends.own_path(copy, typical)
            want += [{key: x for key, x in s.items() if x > 0} for s in copy]
        mine = [{} for _ in want]
        for a, x, key in zip(got_q.tolist(), got_v.tolist(), got_k.tolist()):
            mine[a][keys[key]] = mine[a].get(keys[key], 0) + x
        assert mine == want
        assert [list(s) for s in mine] == [list(s) for s in want]      # the order too


@pytest.mark.parametrize("tool", ["ping", "sub"])
def test_the_numpy_path_and_the_plain_one_give_the_same_attribution(tmp_path, monkeypatch,
                                                                     tool):
    """A random busy second of both ends (spinners and a kworker running its item
    while the programs wait, ticks inside them, round trips or messages
    overlapping by the dozen, late sends): the whole section (causes, chains,
    worst, budget, totals) and what @each is told come out the same on both
    paths."""
    import random
    pytest.importorskip("numpy")
    rnd = random.Random(5)
    kw = ("kworker/0:1", 123, 120)
    evs = background()
    prog0, prog1 = (PONG, PING) if tool == "ping" else (("jtr-sub", 200, 120),
                                                        ("jtr-pub", 100, 120))
    t = T0
    for _ in range(60):
        t += rnd.randrange(20_000, 200_000)
        cpu, prog, idle = rnd.choice([(0, prog0, IDLE0), (1, prog1, IDLE1)])
        who = rnd.choice([SPIN, OTHER, kw])
        hold = rnd.randrange(5_000, 150_000)
        evs += [switch(t, idle, who, cpu=cpu), woken(t + hold // 3, prog, cpu, on=1 - cpu)]
        if who is kw:
            evs += [ev(t + 1_000, E.WQ_START, 0xffff0003, SYM["vmstat_update"], pid=123,
                       cpu=cpu),
                    ev(t + hold - 1_000, E.WQ_END, 0xffff0003, SYM["vmstat_update"], pid=123,
                       cpu=cpu)]
        if rnd.random() < 0.5:
            evs += tick(t + hold // 2, cpu=cpu)
        evs += [switch(t + hold, who, prog, preempted=False, cpu=cpu),
                switch(t + hold + 2_000, prog, idle, preempted=False, cpu=cpu)]
    rows, stamps = [], []
    s = T0
    for _ in range(300):
        s += rnd.randrange(5_000, 60_000)
        late = rnd.choice([0, 0, rnd.randrange(1_000, 80_000)])
        n = rnd.randrange(20_000, 400_000)
        sent = s + late + 500
        rx = sent + rnd.randrange(1_000, n // 2)
        rows.append((1, s, n + late))
        stamps.append((s + late, sent, rx, rx + 1_000) if rnd.random() < 0.8 else
                      (s + late, sent, 0, 0))
    got = {}
    for mode in ("1", "0"):
        monkeypatch.setenv("JTR_NUMPY", mode)
        told = []
        E.write_events(str(tmp_path / mode), sorted(evs, key=lambda e: e[0]), T0 - 10**7,
                       T0 + 10**9, meta={"cpus": [0, 1], "backend": "ebpf"})
        log = E.read_events(str(tmp_path / mode))
        names = ("rtt_from_intended", "rtt_from_send") if tool == "ping" else (
            "latency_from_intended", "latency_from_send")
        result = {"tool": tool, "params": {"one_thread": False},
                  "runs": [{"name": names[0], "cpu": 1, "duration_ns": 10**9,
                            "start_mono_ns": T0},
                           {"name": names[1], "cpu": 1, "duration_ns": 10**9,
                            "start_mono_ns": T0, "percentiles_ns": {"50": 15_000}}]}
        cols = {k: [x[n] for x in stamps] for n, k in enumerate(
            ("send_ns", "sent_ns", "peer_rx_ns", "peer_tx_ns"))} if tool == "ping" else {}
        sides, programs = (SIDES, PROGRAMS) if tool == "ping" else (
            {"pub": [1], "sub": [0]}, {1: "jtr-pub", 0: "jtr-sub"})
        att = ends.attribute_ends(result, rows, log, sides, cols, programs, top=50,
                                  each=lambda *a, told=told: told.append(a))
        got[mode] = (att, told)
    (att, told), (plain, plain_told) = got["1"], got["0"]
    assert att["outliers"]["count"] == 300 and len(att["causes"]) > 5
    assert any(works for *_, works in told)          # the kworker's item is named
    assert att == plain
    assert told == plain_told
