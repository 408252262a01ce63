# SPDX-License-Identifier: GPL-2.0-only
"""formats/watch_metrics: a state line as Prometheus families, read back with the
client's own parser."""
import os

import pytest
from prometheus_client.parser import text_string_to_metric_families

from jtrpy.formats import watch_metrics as wm
from jtrpy.trace.causes import WATCH
from jtrpy.vocab import WATCH_BOUNDS_NS


def state():
    hist = [0] * (len(WATCH_BOUNDS_NS) + 1)
    hist[2], hist[8], hist[-1] = 3, 1, 1          # 3 x (2us,5us], 1 x (200us,500us], 1 huge
    cats = [{"category": c, "count": 0, "ns": 0, "hist": [0] * len(hist), "names": []}
            for c in WATCH]
    cats[0].update(count=5, ns=2_000_000_500, hist=hist,
                   names=[["local timer", 5, 2_000_000_500, 7]])
    cats[WATCH.index("page fault")].update(names=[["user", 0, 0, 9]])
    return {"ts_ns": 1, "records": 100, "dropped": 2, "cpu_ns": 1_500_000_000, "dumps": 1,
            "dumps_skipped": 0, "longest_ns": 2_000_000_000,
            "cpus": [{"cpu": 3, "app": "app", "app_ns": 5, "bpf_runs": 6400,
                      "bpf_ns": 1_280_000, "categories": cats}]}


def parsed(st):
    c = wm.Collector()
    c.update(st)
    return {f.name: f for f in text_string_to_metric_families(c.text())}


def test_every_family_is_exposed_with_its_type():
    fams = parsed(state())
    want = {(n[:-len("_total")] if t == "counter" else n, t) for n, t, _, _ in wm.FAMILIES}
    assert {(f.name, f.type) for f in fams.values()} == want


def test_counters_and_seconds():
    fams = parsed(state())
    lab = {"cpu": "3", "category": "timer tick", "name": "local timer"}
    assert [s.value for s in fams["jtr_watch_interruptions"].samples if s.labels == lab] == [5]
    secs = [s.value for s in fams["jtr_watch_interrupted_seconds"].samples if s.labels == lab]
    assert secs == [pytest.approx(2.0000005)]
    ev = {s.labels["name"]: s.value for s in fams["jtr_watch_kernel_events"].samples
          if s.name.endswith("_total")}
    assert ev == {"local timer": 7, "user": 9}
    one = {f: fams[f].samples[0].value for f in (
        "jtr_watch_trace_events", "jtr_watch_trace_dropped", "jtr_watch_dumps",
        "jtr_watch_tracer_cpu_seconds", "jtr_watch_longest_interruption_seconds")}
    assert one == {"jtr_watch_trace_events": 100, "jtr_watch_trace_dropped": 2,
                   "jtr_watch_dumps": 1, "jtr_watch_tracer_cpu_seconds": 1.5,
                   "jtr_watch_longest_interruption_seconds": 2.0}


def test_the_tracers_bpf_time_on_each_cpu():
    """Its programs' runs and estimated time on each watched CPU; none from a
    tracer that did not count them."""
    fams = parsed(state())
    assert [(s.labels, s.value) for s in fams["jtr_watch_bpf_runs"].samples] == \
        [({"cpu": "3"}, 6400)]
    assert [(s.labels, s.value) for s in fams["jtr_watch_bpf_seconds"].samples] == \
        [({"cpu": "3"}, pytest.approx(0.00128))]
    st = state()
    del st["cpus"][0]["bpf_runs"]
    assert not parsed(st)["jtr_watch_bpf_runs"].samples


def test_a_tasks_container_and_an_ipis_sender_are_labels():
    """A task's row with a container (its fifth field) carries it as the
    container label, an IPI's the sender's comm as the sender label; the same
    comm outside a container is a series of its own, without the label."""
    st = state()
    k = st["cpus"][0]["categories"][WATCH.index("task preemption")]
    k["names"] = [["stress", 2, 3000, 2, "docker 0123456789ab"], ["stress", 1, 500, 1]]
    ipi = st["cpus"][0]["categories"][WATCH.index("IPI")]
    ipi["names"] = [["call_function_single", 4, 4000, 5, "java"]]
    fams = parsed(st)
    got = {s.labels.get("container"): s.value for s in fams["jtr_watch_interruptions"].samples
           if s.labels["name"] == "stress"}
    assert got == {"docker 0123456789ab": 2, None: 1}
    (s,) = [s for s in fams["jtr_watch_kernel_events"].samples
            if s.labels["category"] == "IPI" and s.name.endswith("_total")]
    assert s.labels == {"cpu": "3", "category": "IPI", "name": "call_function_single",
                        "sender": "java"} and s.value == 5


def test_histogram_is_cumulative_and_ends_in_the_count():
    fams = parsed(state())
    h = fams["jtr_watch_interruption_duration_seconds"]
    tick = [s for s in h.samples if s.labels.get("category") == "timer tick"]
    buckets = [(s.labels["le"], s.value) for s in tick if s.name.endswith("_bucket")]
    assert len(buckets) == len(WATCH_BOUNDS_NS) + 1
    assert buckets[1] == ("2e-06", 0) and buckets[2] == ("5e-06", 3)
    assert buckets[8] == ("0.0005", 4) and buckets[-1] == ("+Inf", 5)
    count = [s.value for s in tick if s.name.endswith("_count")]
    assert count == [5]


def test_every_category_has_a_histogram_that_sums_its_counters():
    fams = parsed(state())
    h = fams["jtr_watch_interruption_duration_seconds"].samples
    n = fams["jtr_watch_interruptions"].samples
    secs = fams["jtr_watch_interrupted_seconds"].samples
    for cat in WATCH:
        counts = [s.value for s in h if s.name.endswith("_count") and
                  s.labels["category"] == cat]
        sums = [s.value for s in h if s.name.endswith("_sum") and s.labels["category"] == cat]
        assert counts == [sum(s.value for s in n if s.labels["category"] == cat
                              and s.name.endswith("_total"))], cat
        assert sums == [pytest.approx(sum(s.value for s in secs if s.labels["category"] == cat
                                          and s.name.endswith("_total")))], cat
    # page faults have no durations: kernel events, never interruptions
    assert [s.value for s in h if s.labels.get("category") == "page fault" and
            s.name.endswith("_count")] == [0]


def test_no_state_yet_is_only_the_totals():
    fams = parsed({})
    assert fams["jtr_watch_trace_events"].samples[0].value == 0
    assert not fams["jtr_watch_interruptions"].samples


def test_a_state_is_rendered_once_whatever_the_scrapes(monkeypatch):
    """The text is made at the first scrape after an update and served as it is
    until the next update (a scrape interval shorter than --interval costs no
    rendering)."""
    calls = []
    real = wm.families
    monkeypatch.setattr(wm, "families", lambda st: calls.append(st) or real(st))
    c = wm.Collector()
    st = state()
    c.update(st)
    first = c.text()
    assert c.text() is first and len(calls) == 1
    st2 = state()
    st2["records"] = 101
    c.update(st2)
    assert "jtr_watch_trace_events_total 101\n" in c.text() and len(calls) == 2


def _ask(port, raw, timeout=10):
    """Send @raw to the server on @port, read its answer until it closes."""
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(raw)
        out = b""
        while True:
            try:
                d = s.recv(65536)
            except ConnectionResetError:   # it answered before all was read
                return out
            if not d:
                return out
            out += d


@pytest.fixture
def server():
    c = wm.Collector()
    c.update(state())
    httpd = wm.serve(c, "127.0.0.1", 0)
    yield c, httpd.server_address[1]
    httpd.server_close()


def test_served_over_http_with_the_text_formats_type(server):
    """serve: GET /metrics (and HEAD) answer the latest state, through the
    standard library's client as through Prometheus'; /favicon.ico is not
    found, other methods are not allowed."""
    import http.client

    c, port = server
    con = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    con.request("GET", "/metrics")
    r = con.getresponse()
    body = r.read().decode()
    assert r.status == 200 and r.getheader("Content-Type") == wm.CONTENT_TYPE
    assert body == c.text()
    fams = {f.name: f for f in text_string_to_metric_families(body)}
    assert fams["jtr_watch_trace_dropped"].samples[0].value == 2
    head = _ask(port, b"HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK\r\n") and head.endswith(b"\r\n\r\n")
    assert b"Content-Length: %d\r\n" % len(body.encode()) in head
    assert _ask(port, b"GET /favicon.ico HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 404 ")
    post = _ask(port, b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
    assert post.startswith(b"HTTP/1.1 405 ") and b"Allow: GET, HEAD\r\n" in post
    assert _ask(port, b"nonsense\r\n\r\n").startswith(b"HTTP/1.1 400 ")


def test_a_silent_client_does_not_hold_up_a_scrape(server):
    """Connections are served side by side: one that sends half a request and
    waits does not delay the next scrape; an endless request is refused."""
    import socket

    c, port = server
    with socket.create_connection(("127.0.0.1", port), timeout=10) as idle:
        idle.sendall(b"GET /metrics HTTP/1.1\r\n")
        got = _ask(port, b"GET /metrics HTTP/1.1\r\n\r\n", timeout=5)
        assert got.endswith(c.text().encode())
        long = _ask(port, b"GET /" + b"x" * (wm.REQUEST_MAX + 10), timeout=5)
        assert long.startswith(b"HTTP/1.1 431 ")
        idle.sendall(b"\r\n")         # the first one's request ends: it is answered
        assert idle.recv(15) == b"HTTP/1.1 200 OK"


def test_an_address_in_use_is_an_oserror(server):
    with pytest.raises(OSError):
        wm.serve(wm.Collector(), "127.0.0.1", server[1])


def _keep(fd, seq, st, length=None):
    """Write @st as jtr-trace --state-fd keeps it: sequence number, length, line."""
    import json
    import struct

    line = (json.dumps(st) + "\n").encode()
    os.pwrite(fd, line, 16)
    os.pwrite(fd, struct.pack("=QQ", seq, len(line) if length is None else length), 0)


def test_a_scrape_reads_the_tracers_state_descriptor():
    """With the tracer's descriptor (jtr watch without progress or --textfile):
    each scrape takes the state it holds when its sequence number moved, keeps
    the last whole one while it is being written (odd), and none is read once a
    state is given (the last, from the tracer's stdout)."""
    fd = os.memfd_create("test-state")
    try:
        c = wm.Collector(fd)
        assert "jtr_watch_trace_events_total 0\n" in c.text()      # nothing kept yet
        st = state()
        _keep(fd, 2, st)
        assert "jtr_watch_trace_events_total 100\n" in c.text()
        st["records"] = 150
        _keep(fd, 3, st)                                            # being written
        assert "jtr_watch_trace_events_total 100\n" in c.text()
        _keep(fd, 4, st)
        assert "jtr_watch_trace_events_total 150\n" in c.text()
        assert wm.read_state(fd) == (4, st)
        last = dict(st, records=175)
        c.update(last)
        st["records"] = 999
        _keep(fd, 6, st)
        assert "jtr_watch_trace_events_total 175\n" in c.text()
    finally:
        os.close(fd)
