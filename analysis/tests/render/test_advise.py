# SPDX-License-Identifier: GPL-2.0-only
"""render.advise: jtr advise's text from an advice built here: the headline, the
remedies this machine can apply (their changes, the shipped profile that also
carries them), what cannot be done and why, the host's share, the profile, and
the proof's table with its signs."""
from jtrpy.render.advise import SHIPPED, format_advice, format_proof


def remedy(rule, ns, applicable=True, **kw):
    r = {"rule": rule, "saving_ns": ns, "share": ns / 1_000_000, "per_s_ns": ns / 10,
         "needs": "run time", "applicable": applicable, "notes": [], "changes": [],
         "boot": [], "why_not": None if applicable else "no", "remedy": "",
         "causes": [{"category": "timer tick", "name": "local timer", "count": 3,
                     "ns": ns}]}
    r.update(kw)
    return r


def advice(**kw):
    doc = {"result": "results/r1", "tool": "gap", "cpus": [1, 3], "duration_ns": 10**10,
           "outliers": 42, "outlier_ns": 1_000_000, "lost_pct": 0.01,
           "throttled_outliers": 0, "remedies": [], "unexplained": [], "profile": None}
    doc.update(kw)
    return doc


def test_headline_and_nothing_to_apply():
    lines = format_advice(advice(lost_pct=None, duration_ns=None))
    assert lines == ["results/r1: gap on CPU 1,3, 0 ns: 42 outliers, 1.00 ms", "",
                     "no remedy this machine can apply"]
    lines = format_advice(advice(throttled_outliers=5))
    assert lines[0].endswith(" (0.010 % of the time lost)")
    assert lines[1].startswith("5 outliers were held by RT throttling")


def test_remedies_this_machine_can_apply():
    causes = [{"category": "task preemption", "name": "t%d" % i, "count": 1, "ns": 1000}
              for i in range(6)]
    rs = [remedy("tasks", 600_000, causes=causes, notes=["pinned tasks stay"],
                 changes=[{"section": "scheduler", "option": "isolated_cores",
                           "value": "1,3", "comment": "move tasks off"}]),
          remedy("my_rule", 100_000)]
    lines = format_advice(advice(remedies=rs))
    i = lines.index("remedies this machine can apply, largest first (predicted: what the "
                    "run lost to their causes; jtr advise --prove measures it):")
    assert lines[i + 1] == ("  1. tasks          predicted -60.0 us/s (600.0 us in the run, "
                            "60.0 % of the outlier time)  needs: run time")
    assert lines[i + 2] == ("     causes: task preemption t0 (1x, 1.0 us); task preemption t1 "
                            "(1x, 1.0 us); task preemption t2 (1x, 1.0 us); task preemption t3 "
                            "(1x, 1.0 us); 2 more")
    assert lines[i + 3] == "     [scheduler] isolated_cores=1,3    # move tasks off"
    assert lines[i + 4] == ("     (also in the shipped profile %s: sudo jtr tune apply %s "
                            "--cpus 1,3)" % (SHIPPED["tasks"], SHIPPED["tasks"]))
    assert lines[i + 5] == "     note: pinned tasks stay"
    assert lines[i + 6].startswith("  2. my_rule        predicted -10.0 us/s (100.0 us")
    assert not any("shipped profile" in x for x in lines[i + 6:])   # no shipped profile has it


def test_what_cannot_be_done_and_the_host():
    rs = [remedy("tick", 300_000, False, boot=["nohz_full=1"], why_not="needs a reboot",
                 notes=["n"]),
          remedy("host", 200_000, False, remedy="tune the host", why_not="out of reach")]
    lines = format_advice(advice(remedies=rs, unexplained=[
        {"category": "c%d" % i, "name": "n", "ns": 1000 * i} for i in range(5)]))
    i = lines.index("what cannot be done here:")
    assert lines[i + 1] == "  tick           300.0 us (30.0 %)  needs: run time"
    assert lines[i + 3:i + 6] == ["     boot line: nohz_full=1", "     why: needs a reboot",
                                  "     note: n"]
    j = lines.index("out of the guest's reach: 200.0 us (20.0 % of the outlier time)")
    assert lines[j + 2:j + 4] == ["     tune the host", "     out of reach"]
    assert lines[-1] == ("no rule for: c0 n (0 ns); c1 n (1.0 us); c2 n (2.0 us); "
                         "c3 n (3.0 us)")


def test_the_profile_and_where_it_goes():
    doc = advice(remedies=[remedy("tick", 1000)], profile="[main]\n\n[sysctl]\nx=1\n")
    lines = format_advice(doc)
    i = lines.index("the profile of the remedies above (tuned format):")
    assert lines[i + 1:i + 5] == ["  [main]", "", "  [sysctl]", "  x=1"]
    assert lines[-1] == ("write it with --profile-dir DIR, then: sudo jtr tune apply DIR; "
                         "measure it: sudo jtr advise --prove results/r1")
    assert format_advice(doc, "/tmp/p")[-1] == ("written to /tmp/p/tuned.conf; apply it: sudo "
                                                "jtr tune apply /tmp/p")


def test_proof_table():
    doc = advice(remedies=[remedy("tick", 1000, per_s_ns=2500.0),
                           remedy("irq", 1000, per_s_ns=None)])
    proof = {"runs": {"a": 1, "b": 3}, "remedies": [
        {"rule": "tick", "before_per_s_ns": 3000.0, "after_per_s_ns": 500.0,
         "saving_per_s_ns": 2500.0, "ci": [-100.0, 4000.0], "outcome": "within noise",
         "before_count": 30, "after_count": 5},
        {"rule": "irq", "before_per_s_ns": None, "after_per_s_ns": None,
         "saving_per_s_ns": None, "ci": None, "outcome": "not measured",
         "before_count": 0, "after_count": 0}]}
    lines = format_proof(proof, doc)
    assert lines[1] == ("per remedy: time lost to its causes per second of run (baseline 1 "
                        "run, tuned 3)")
    assert lines[3].split() == ["tick", "2.5", "us/s", "3.0", "us/s", "500", "ns/s", "2.5",
                                "us/s", "-100", "ns", "..", "4.0", "us", "within", "noise",
                                "(30", "->", "5", "outliers)"]
    assert lines[4].split() == ["irq", "-", "-", "-", "-", "-", "not", "measured", "(0", "->",
                                "0", "outliers)"]


def test_the_measurements_own_causes_in_one_line():
    own = [{"category": "task preemption", "name": "jtr-trace", "count": 3, "ns": 5000,
            "why": "jtr's own program"},
           {"category": "softirq", "name": "NET_RX", "count": 9, "ns": 900,
            "why": "the run's own messages (udp over loopback 127.0.0.1:5000)"}]
    lines = format_advice(advice(own=own))
    assert lines[-1] == (
        "the measurement's own, not a remedy's: task preemption jtr-trace (3x, 5.0 us: jtr's "
        "own program); softirq NET_RX (9x, 900 ns: the run's own messages (udp over loopback "
        "127.0.0.1:5000))")
    lines = format_advice(advice(own=own * 3))
    assert lines[-1].endswith("; 2 more")
    assert not any("measurement's own" in x for x in format_advice(advice()))
