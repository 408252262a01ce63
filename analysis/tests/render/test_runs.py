# SPDX-License-Identifier: GPL-2.0-only
"""render.runs: the headline jtr run prints first, and the detail after it."""
from jtrpy.render.runs import headline, run_lines, top_causes
from jtrpy.results.figures import supported

RESULT = {"format": "jtr-result/1", "tool": "gap", "partial": True, "runs": [{
    "name": "cpu3", "cpu": 3, "duration_ns": 2_000_000_000, "lost_time_pct": 1.5,
    "max_ns": 68900, "samples": 60_000_000,
    "percentiles_ns": {"50": 30, "99": 40, "99.99": 291},
    "outliers": {"count": 10, "threshold_ns": 1000, "per_s": 5.0}}]}

PING = {"format": "jtr-result/1", "tool": "ping", "partial": False,
        "sides": {"ping": [1], "pong": [0]},
        "transport": {"kind": "udp", "address": "127.0.0.1:17391", "sent": 5000,
                      "late_sends": 2000},
        "params": {"rate_hz": 5000},
        "runs": [{"name": "rtt_from_intended", "cpu": 1, "duration_ns": 1_000_000_000,
                  "start_mono_ns": 5_000,
                  "samples": 5000, "max_ns": 1_220_000,
                  "percentiles_ns": {"50": 24300, "99": 220200, "99.99": 1_220_000},
                  "outliers": {"count": 62, "threshold_ns": 77800, "logged": 62,
                               "excess_ns": 28_350_000}},
                 {"name": "send_call", "cpu": 1, "duration_ns": 1_000_000_000,
                  "start_mono_ns": 5_000,
                  "samples": 5000, "max_ns": 22300,
                  "percentiles_ns": {"50": 7400, "99": 14700, "99.99": 22300}}],
        "attribution": {"causes": [
            {"category": "task preemption", "name": "jtr-trace", "side": "pong", "share": 0.7},
            {"category": "no kernel event", "name": "VM exits, SMI or hardware",
             "side": "ping", "share": 0.074},
            {"category": "timer tick", "name": "local timer", "side": "ping", "share": 0.028},
            {"category": "softirq", "name": "NET_RX", "side": "ping", "share": 0.02}]}}


def test_the_headline_is_what_where_validity_then_a_table_of_the_runs():
    lines = headline(RESULT)
    assert lines[0] == ("jtr gap: CPU 3, 2.00 s, partial (stopped early: the figures cover "
                        "what was measured): a valid measurement")
    assert lines[1].split() == ["run", "CPU", "samples", "p50", "p99", "p99.99", "max",
                                "outliers"]
    assert lines[2].split()[:11] == ["cpu3", "3", "60000000", "30", "ns", "40", "ns", "291",
                                     "ns", "68.9", "us"]
    assert lines[2].endswith("10 interruptions above 1.0 us (5.0/s), 1.500 % of the time lost")
    assert len(lines) == 3          # not attributed: no causes line


def test_the_headline_says_where_both_ends_ran_and_why_a_run_is_not_valid():
    lines = headline(PING)
    assert lines[0].startswith("jtr ping: ping CPU 1, pong CPU 0 (udp 127.0.0.1:17391), "
                               "1.00 s: not a valid measurement: ")
    assert "late" in lines[0]
    assert "62 outliers above 77.8 us" in lines[2]
    assert lines[3].split()[:2] == ["send_call", "1"] and lines[3].rstrip().endswith("22.3 us")
    assert lines[4] == ("  top causes of the outlier time: task preemption: jtr-trace (pong "
                        "side) 70.0 %; no kernel event: VM exits, SMI or hardware (ping side) "
                        "7.4 %; timer tick: local timer (ping side) 2.8 %")


def test_a_percentile_the_samples_do_not_support_is_not_printed():
    """1,000 wake-ups have no p99.99 of their own (it would be the max again)."""
    r = dict(RESULT["runs"][0], samples=1000)
    row = headline(dict(RESULT, runs=[r]))[2].split()
    assert row[:10] == ["cpu3", "3", "1000", "30", "ns", "40", "ns", "-", "68.9", "us"]
    assert supported("99.99", 10000) and not supported("99.99", 9999)
    assert supported("50", 2) and not supported("99", 99)


def test_a_wake_run_says_its_missed_periods():
    r = dict(RESULT["runs"][0], missed=217)
    del r["lost_time_pct"]
    row = headline(dict(RESULT, tool="wake", runs=[r]))[2]
    assert row.endswith("10 outliers above 1.0 us; 217 periods missed"), row


def test_top_causes_none_without_an_attribution():
    assert top_causes(RESULT) is None
    assert top_causes(PING, 1).endswith("jtr-trace (pong side) 70.0 %")


def test_the_headline_first_then_the_probes_table_then_the_attribution():
    detail = "jtr gap: tsc timebase\n\n  per loop\nresults: x/\n"
    out = run_lines(RESULT, detail, ["causes:", "  irq"], None, cross_check=True)
    assert out == headline(RESULT) + ["", "jtr gap: tsc timebase", "", "  per loop",
                                      "results: x/", "", "causes:", "  irq"]


def test_without_an_attribution_the_headline_says_why_and_what_was_not_compared():
    why = "tracing was switched off (--no-trace)"
    out = run_lines(RESULT, "", None, why)
    assert out == headline(RESULT) + ["  causes: not attributed: " + why]
    assert run_lines(RESULT, "", None, why, cross_check=True)[-2:] == [
        "  causes: not attributed: " + why,
        "cross-check: not run: there is no attribution to compare"]
