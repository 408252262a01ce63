# SPDX-License-Identifier: GPL-2.0-only
"""results.validity: each finding at its documented limit (just over it makes
the run invalid, at it does not), its figure worked out from the counts, the
scope it belongs to, and the one line people read."""
import pytest

from jtrpy.results import validity as V


def ping(sent=1000, late=0, lost=0, received=1000, **params):
    return {"tool": "ping", "transport": {"sent": sent, "late_sends": late, "lost": lost,
                                          "received": received},
            "params": params, "runs": []}


def codes(result, partner=None):
    return [r["code"] for r in V.check(result, partner)["reasons"]]


def test_late_sends_past_a_tenth():
    assert V.check(ping(late=100)) == {"valid": True, "reasons": []}     # 10 %: the limit
    (r,) = V.check(ping(late=101, rate_hz=5000))["reasons"]
    assert r == {"code": "late_sends", "scope": "measurement",
                 "text": "the client (jtr ping) was late on 10 % of sends (101 of 1000): it "
                         "did not keep its schedule",
                 "fix": "lower -r (5000/s was asked)", "value": 0.101, "limit": V.LATE_MAX}
    (r,) = V.check(ping(late=500, one_thread=True))["reasons"]
    assert r["fix"] == ("lower -r, or drop -1 (one thread waits for each reply before it "
                        "sends again)") and r["value"] == 0.5
    # nothing sent, or counts that are not counts: no finding
    assert codes(ping(sent=0, late=5)) == [] and codes(ping(late="5")) == []


def test_late_sends_of_the_publisher_judge_the_subscriber():
    sub = {"tool": "sub", "transport": {"lost": 0, "received": 10}, "runs": []}
    pub = {"tool": "pub", "transport": {"sent": 10, "late_sends": 2}}
    (r,) = V.check(sub, pub)["reasons"]
    assert r["text"].startswith("the publisher (jtr pub) was late on 20 % of sends (2 of 10)")
    # a gap result's own transport counts are nobody's schedule
    assert codes({"tool": "gap", "transport": {"sent": 10, "late_sends": 9}}) == []
    assert codes(sub, {"tool": "sub", "transport": {"sent": 10, "late_sends": 9}}) == []


def test_lost_messages_past_one_percent():
    assert codes(ping(lost=10, received=990)) == []        # 1 % of 1000
    (r,) = V.check(ping(lost=3, received=97))["reasons"]
    assert (r["code"], r["value"], r["limit"]) == ("lost", 0.03, V.LOST_MAX)
    assert r["text"] == ("3 % of the messages were lost (3): the latency of the others "
                         "hides them")
    # the kernel's count at the receiving socket says where they went
    t = ping(lost=3, received=97)
    t["transport"]["socket_drops"] = 5          # the end-of-stream repeats too
    (r,) = V.check(t)["reasons"]
    assert r["text"] == ("3 % of the messages were lost (3); all of them dropped by the kernel "
                         "at the receiving socket (its buffer was full): the latency of the "
                         "others hides them")
    assert r["fix"].startswith("raise --rcvbuf")
    t["transport"]["socket_drops"] = 2
    assert "; 2 of them dropped by the kernel" in V.check(t)["reasons"][0]["text"]
    t["transport"]["socket_drops"] = 0
    assert V.check(t)["reasons"][0]["text"].startswith("3 % of the messages were lost (3): ")
    # below 1 %, the share is written with two decimals
    assert V._pct(0.005) == "0.50 %" and V._pct(0.25) == "25 %"


def test_a_payload_not_the_publishers():
    """One message whose payload sub --verify found changed makes the run invalid;
    none, or a run that did not verify (payload null), says nothing."""
    sub = {"tool": "sub", "transport": {"lost": 0, "received": 100,
                                        "payload": {"verified": 100, "mismatched": 1}},
           "runs": []}
    (r,) = V.check(sub)["reasons"]
    assert (r["code"], r["scope"], r["value"], r["limit"]) == ("payload", "measurement", 1, 0)
    assert r["text"] == "1 of 100 messages arrived with a payload other than the publisher's"
    sub["transport"]["payload"]["mismatched"] = 0
    assert codes(sub) == []
    sub["transport"]["payload"] = None
    assert codes(sub) == []


def test_a_send_pairs_null_loop_off_its_target():
    """A jtr send pair whose null loop's mean below the threshold missed the send
    path's by more than a tenth (after jtr send's tries) makes the run invalid:
    "added" would compare with another workload; at a tenth it does not."""
    def send(*nulls):
        return {"tool": "send", "runs": [], "pairs": [
            {"pair": k + 1, "target_ns": 1000.0, "null_mean_below_threshold_ns": got,
             "null_tries": 3} for k, got in enumerate(nulls)]}
    assert codes(send(1000.0, 1100.0, 900.0)) == []
    (r,) = V.check(send(1000.0, 1460.0, 880.0))["reasons"]
    assert (r["code"], r["scope"], r["value"], r["limit"]) == (
        "null_drift", "measurement", 0.46, V.NULL_DRIFT_MAX)
    assert r["text"] == ("the null loop of 2 of 3 pairs missed the send path's mean by more "
                         "than 10 % (pair 2: 1.5 us for 1.0 us, +46 %, after 3 runs): "
                         "'added' compares the send path with another workload")
    # only send results have pairs to judge; figures that are not numbers say nothing
    assert codes(dict(send(1450.0), tool="gap")) == []
    assert codes({"tool": "send", "runs": [], "pairs": [{"target_ns": "x"}, None]}) == []


def test_a_slow_warm_up():
    """The threshold from a warm-up whose median is over twice the run's typical
    median (ping's rtt_from_send)."""
    r = ping(threshold_rule="warmup", warmup_median_ns=20_001)
    r["runs"] = [{"name": "rtt_from_send", "percentiles_ns": {"50": 10_000}},
                 {"name": "rtt_from_intended", "percentiles_ns": {"50": 1000}}]
    (w,) = V.check(r)["reasons"]
    assert w["code"] == "warmup" and w["value"] == 2.0 and w["limit"] == V.WARMUP_MAX
    assert w["text"] == ("the outlier threshold came from a slow warm-up: its median 20.0 us "
                         "is 2.0 times the run's 10.0 us")
    r["params"]["warmup_median_ns"] = 20_000                # exactly twice: not over
    assert codes(r) == []
    r["params"].update(warmup_median_ns=90_000, threshold_rule="given")
    assert codes(r) == []                                   # --threshold: no warm-up


def test_tracer_drops_judge_only_the_attribution():
    r = {"tool": "gap", "attribution": {"tracer": {"events": 9990, "dropped": 10}}}
    assert codes(r) == []                                   # 10 of 10000: the limit
    r["attribution"]["tracer"]["dropped"] = 11
    v = V.check(r)
    assert [(x["code"], x["scope"]) for x in v["reasons"]] == [("tracer_drops",
                                                               "attribution")]
    assert v["reasons"][0]["value"] == round(11 / 10001, 6)
    assert V.summary(v, V.MEASUREMENT) is None
    assert V.summary(v).startswith("the causes are not complete: the tracer dropped 0.11 % "
                                   "of its events (11)")
    assert V.is_valid(r, V.MEASUREMENT) and not V.is_valid(r)


def test_summary_joins_every_reason_with_its_fix():
    r = ping(late=300, lost=50, received=950)
    r["attribution"] = {"tracer": {"events": 10, "dropped": 10}}
    v = V.check(r)
    assert [x["code"] for x in v["reasons"]] == ["late_sends", "lost", "tracer_drops"]
    s = V.summary(v)
    assert s.startswith("not a valid measurement: the client (jtr ping) was late")
    assert s.count(" — ") == 3 and "; 5 % of the messages were lost (50)" in s
    assert V.summary({"reasons": []}) is None and V.summary({}) is None


def test_stored_validity_is_taken_as_it_is():
    stored = {"valid": False, "reasons": [{"code": "x", "scope": "measurement",
                                          "text": "t", "fix": "f"}]}
    r = ping()
    r["validity"] = stored
    assert V.of(r) is stored and not V.is_valid(r)
    r["validity"] = {"valid": "no"}                         # not one: checked again
    assert V.of(r) == {"valid": True, "reasons": []} and V.is_valid(r)
    # reasons that are not reasons (a damaged file): checked again, no traceback
    for reasons in ([[1, 2]], [None], [{"code": "x", "scope": 1, "text": "t", "fix": "f"}]):
        r["validity"] = {"valid": False, "reasons": reasons}
        assert V.of(r) == {"valid": True, "reasons": []} and V.is_valid(r)


@pytest.mark.parametrize("result", [{}, {"tool": "nope"}, {"tool": "ping", "transport": 7},
                                    {"tool": "gap", "attribution": {"tracer": "x"}}])
def test_results_that_say_nothing_are_valid(result):
    assert V.check(result) == {"valid": True, "reasons": []}


def test_a_trace_cut_at_the_logs_bound_judges_only_the_attribution():
    """The tracer's log stopped at its bound (trace.json events.log_full, carried
    as attribution.tracer.log_full): the outliers after its end are not traced."""
    t = {"events": 10, "dropped": 0, "start_ns": 5_000_000_000, "end_ns": 5_196_000_000}
    r = {"tool": "gap", "attribution": {"tracer": t}}
    assert codes(r) == []
    t["log_full"] = True
    v = V.check(r)
    assert [(x["code"], x["scope"], x["value"], x["limit"]) for x in v["reasons"]] == [
        ("tracer_log_full", "attribution", 0.196, 2 << 30)]
    assert V.summary(v).startswith("the causes are not complete: the tracer's event log "
                                   "reached its bound 0.2 s into the trace")
    assert V.is_valid(r, V.MEASUREMENT) and not V.is_valid(r)
