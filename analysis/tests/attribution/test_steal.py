# SPDX-License-Identifier: GPL-2.0-only
"""The host's steal in outliers: steal.assign's rule on readings and windows, and
the split of 'no kernel event' in attribution of synthetic logs with steal_time
records."""
from jtrpy.attribution import attribute as A
from jtrpy.attribution import ends
from jtrpy.attribution import steal as S
from jtrpy.render.attribution import format_table
from jtrpy.trace import events as E

from .test_attribute import T0, ev, result, tick

MEASURED = {"source": "kvm steal_time", "available": True}


def reading(ts, before, after, cpu=1):
    """A steal_time record: the counter went from @before to @after."""
    return ev(ts, E.STEAL, after, before, cpu=cpu)


def attribute(tmp_path, events, outliers, steal=MEASURED):
    meta = {"cpus": [1], "backend": "ebpf"}
    if steal is not None:
        meta["steal"] = steal
    E.write_events(str(tmp_path), sorted(events), T0, T0 + 1_000_000_000, meta=meta)
    return A.attribute(result(), outliers, E.read_events(str(tmp_path)))


def causes(att):
    return {(c["category"], c["name"]): c["total_ns"] for c in att["causes"]}


# --- the rule ------------------------------------------------------------------

def test_one_outlier_in_the_span_takes_the_reading():
    # counter 5000 -> 125000 between a look at 100 and one at 9000; the outlier
    # [1000, 2000] is the only one there
    assert S.assign([(9000, 100, 125_000, 5000)], [(1000, 2000)]) == [1000]   # up to its length
    assert S.assign([(9000, 100, 5600, 5000)], [(1000, 2000)]) == [600]


def test_a_reading_goes_to_the_longest_outlier_of_its_span_first():
    wins = [(1000, 1100), (2000, 2500), (3000, 3200), (50_000, 60_000)]
    # 450 ns stolen between the looks at 500 and 4000: one stall fits only the
    # 500 ns gap; the outlier at 50000 lies after the reading
    assert S.assign([(4000, 500, 1450, 1000)], wins) == [0, 450, 0, 0]
    # 700: the 500 ns gap is full, the 200 ns one takes the rest
    assert S.assign([(4000, 500, 1700, 1000)], wins) == [0, 500, 200, 0]
    # an outlier that ended before the previous look, or starts after the
    # reading, is not in its span
    assert S.assign([(2800, 1200, 1100, 1000)], wins) == [0, 100, 0, 0]


def test_steal_outside_every_outlier_is_charged_to_none():
    assert S.assign([(900, 10, 2000, 1000)], [(1000, 2000)]) == [0]
    assert S.assign([(5000, 2500, 2000, 1000)], [(1000, 2000)]) == [0]
    # a first reading (b = a) and no reading at all: nothing
    assert S.assign([(1500, 10, 7000, 7000)], [(1000, 2000)]) == [0]
    assert S.assign([], [(1000, 2000)]) == [0]


def test_split_and_status():
    assert S.split(None, 500) == {S.UNMEASURED: 500}
    assert S.split(0, 500) == {S.OTHER: 500}
    assert S.split(200, 500) == {S.HOST: 200, S.OTHER: 300}
    assert S.split(900, 500) == {S.HOST: 500}
    assert S.status({"steal": MEASURED}) == "measured: kvm steal_time"
    assert S.status({"steal": {"available": False, "reason": "not a virtual machine"}}) == \
        "not measured: not a virtual machine"
    assert S.status({"backend": "perf"}).startswith("not measured: the tracer of this log (perf)")


# --- in the attribution ----------------------------------------------------------

def test_a_silent_outlier_is_split_exactly_by_the_steal_in_it(tmp_path):
    s = T0 + 10_000_000
    evs = tick(s - 1_000_000) + [reading(s + 310_000, 4_000_000, 4_120_000)] + tick(s + 310_000)
    att = attribute(tmp_path, evs, [(1, s, 300_000)])
    assert causes(att) == {S.HOST: 120_000, S.OTHER: 180_000}
    assert att["tracer"]["steal"] == "measured: kvm steal_time"
    worst = att["worst"][0]
    assert worst["category"] == "no kernel event" and worst["name"] == S.OTHER[1]
    assert {(p["name"], p["ns"]) for p in worst["parts"]} == {(S.HOST[1], 120_000),
                                                              (S.OTHER[1], 180_000)}
    assert "host preemption (steal) 120.0 us" in worst["chain"]
    assert "  host steal: measured: kvm steal_time" in format_table(att)


def test_the_unexplained_part_of_an_outlier_with_events_is_split(tmp_path):
    # a 3 us tick at the end of a 500 us outlier; the host took 400 us of it
    s = T0 + 10_000_000
    evs = (tick(s - 1_000_000) + [reading(s + 496_000, 9_000_000, 9_400_000)] +
           tick(s + 496_000))
    att = attribute(tmp_path, evs, [(1, s, 500_000)])
    kernel = 3000 + A.ENTRY_ALLOWANCE_NS
    got = causes(att)
    assert got[S.HOST] == 400_000 and got[S.OTHER] == 500_000 - kernel - 400_000
    assert got[("timer tick", "local timer")] == kernel
    assert sum(got.values()) == 500_000


def test_the_hosts_steal_comes_first_before_the_events(tmp_path):
    """A 200 us outlier with a 3 us tick at its end, in which the host took 190 us:
    the host's 190 us first (no kernel event of the guest could take that time),
    the tick only the 10 us left (not its 3 us + the entry allowance), nothing to
    VM exits."""
    s = T0 + 10_000_000
    evs = (tick(s - 1_000_000) + [reading(s + 196_000, 9_000_000, 9_190_000)] +
           tick(s + 196_000))
    att = attribute(tmp_path, evs, [(1, s, 200_000)])
    assert causes(att) == {S.HOST: 190_000, ("timer tick", "local timer"): 10_000}
    w = att["worst"][0]
    assert (w["category"], w["name"]) == S.HOST
    assert w["chain"].startswith("host preemption (steal) 190.0 us; local timer")
    assert "0 ns" not in w["chain"]


def test_all_host_and_a_window_with_only_a_reading(tmp_path):
    # the reading itself inside the window is no kernel event (not 'other events')
    s = T0 + 10_000_000
    evs = tick(s - 1_000_000) + [reading(s + 50_000, 0, 900_000)] + tick(s + 2_000_000)
    att = attribute(tmp_path, evs, [(1, s, 200_000)])
    assert causes(att) == {S.HOST: 200_000}


def test_no_steal_in_the_counter_is_all_vm_exits(tmp_path):
    s = T0 + 10_000_000
    att = attribute(tmp_path, tick(s - 1_000_000) + tick(s + 210_000), [(1, s, 200_000)])
    assert causes(att) == {S.OTHER: 200_000}


def test_without_the_counter_nothing_is_guessed(tmp_path):
    s = T0 + 10_000_000
    evs = tick(s - 1_000_000) + [reading(s + 210_000, 0, 900_000)] + tick(s + 210_000)
    for steal, why in ((None, "the tracer of this log (ebpf) does not read the host's steal "
                              "counter"),
                       ({"available": False, "reason": "not a virtual machine"},
                        "not a virtual machine")):
        att = attribute(tmp_path, evs, [(1, s, 200_000)], steal)
        assert causes(att) == {S.UNMEASURED: 200_000}
        assert att["tracer"]["steal"] == "not measured: " + why


def test_an_outlier_across_cpus_takes_the_largest_steal_of_them(tmp_path):
    # a round trip between CPU 1 and CPU 0: the host took 60 us on CPU 1 and 90 us
    # on CPU 0 in its 200 us; they may overlap, so the host delayed it 90 us at least
    s = T0 + 10_000_000
    evs = (tick(s - 1_000_000) + tick(s - 1_000_000, cpu=0) +
           [reading(s + 250_000, 0, 60_000), reading(s + 260_000, 0, 90_000, cpu=0)] +
           tick(s + 250_000) + tick(s + 260_000, cpu=0))
    E.write_events(str(tmp_path), sorted(evs), T0, T0 + 1_000_000_000,
                   meta={"cpus": [0, 1], "backend": "ebpf", "steal": MEASURED})
    att = ends.attribute_ends(result(), [(1, s, 200_000)], E.read_events(str(tmp_path)),
                              sides={"ping": [1], "pong": [0]})
    assert causes(att) == {S.HOST: 90_000, S.OTHER: 110_000}
