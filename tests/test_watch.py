"""jtr watch end to end, with the real thing: a Prometheus server (Debian's
prometheus, its config written here) scrapes `jtr watch` on 127.0.0.1 while an
application busy-loops on the watched CPU and a SCHED_FIFO spinner preempts it a
counted number of times (tests/watch_inject.py); PromQL must count exactly those
preemptions under category "task preemption", name "jtr-inject". The same run
checks the textfile, watch.json, the flight recorder's dump (charged by jtr
attribute to the spinner), the tracer's memory staying flat once its recorder
has wrapped, and the Grafana dashboard's queries against the metric names."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import pytest
from conftest import JTR, ROOT, need_tracing, run_jtr, wait_for
from injection import cpus
from prometheus_client.parser import text_string_to_metric_families

from jtrpy.formats.watch_metrics import FAMILIES

SPINS = 20
FIRST_SPIN_US = 8000        # above --dump-above 5ms: the dump's trigger
INJECT = os.path.join(ROOT, "tests", "watch_inject.py")
DASHBOARD = os.path.join(ROOT, "dist", "grafana", "jtr-watch.json")
PROM_QUERY = ('jtr_watch_interruptions_total{cpu="%d",category="task preemption",'
              'name="jtr-inject"}')


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def promql(port, query):
    """The value of an instant query's single series, or None."""
    doc = json.loads(get("http://127.0.0.1:%d/api/v1/query?%s"
                         % (port, urllib.parse.urlencode({"query": query}))))
    assert doc["status"] == "success", doc
    res = doc["data"]["result"]
    return float(res[0]["value"][1]) if len(res) == 1 else None


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def tracer_pid(watch_pid):
    with open("/proc/%d/task/%d/children" % (watch_pid, watch_pid)) as f:
        kids = [int(p) for p in f.read().split()]
    return kids[0] if kids else None


@pytest.fixture(scope="module")
def watched(tmp_path_factory):
    need_tracing()
    prom_bin = shutil.which("prometheus")
    if not prom_bin:
        pytest.skip("no prometheus server: Debian's prometheus package (make deps installs it)")
    cpu, other = cpus()
    tmp = tmp_path_factory.mktemp("watch")
    jtr_port, prom_port = free_port(), free_port()
    (tmp / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        "scrape_configs:\n  - job_name: jtr\n    static_configs:\n"
        "      - targets: ['127.0.0.1:%d']\n" % jtr_port)
    prom = subprocess.Popen(["taskset", "-c", str(other), prom_bin,
                             "--config.file=%s" % (tmp / "prometheus.yml"),
                             "--storage.tsdb.path=%s" % (tmp / "tsdb"),
                             "--web.listen-address=127.0.0.1:%d" % prom_port],
                            stdout=subprocess.DEVNULL, stderr=open(tmp / "prom.log", "w"))
    watch = None
    try:
        def ready():
            try:
                return "Ready" in get("http://127.0.0.1:%d/-/ready" % prom_port)
            except OSError:
                return False
        assert wait_for(ready, 30), (tmp / "prom.log").read_text()[-2000:]
        # a small recorder (16K events): it has wrapped before memory is sampled;
        # the first spin (FIRST_SPIN_US) alone lasts long enough for a dump. jtr
        # watch and the server stay off the watched CPU, as they would on a host
        # with isolated CPUs
        watch = subprocess.Popen(["taskset", "-c", str(other), JTR, "watch", "-c", str(cpu),
                                  "--listen", "127.0.0.1:%d" % jtr_port, "--textfile",
                                  str(tmp / "jtr.prom"), "--dump-above", "5ms",
                                  "--dump-max", "1", "--recorder", "1M", "--names", "256",
                                  "--interval", "500ms", "-o", str(tmp / "out")],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

        def serving():
            try:
                return "jtr_watch_trace_events_total" in get(
                    "http://127.0.0.1:%d/metrics" % jtr_port)
            except OSError:
                return watch.poll() is not None
        assert wait_for(serving, 30) and watch.poll() is None, watch.communicate()
        inj = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", sys.executable,
                              INJECT, str(cpu), "--other", str(other), "--spins", str(SPINS),
                              "--period-ms", "50", "--spin-us", "300", "--first-spin-us",
                              str(FIRST_SPIN_US), "--app-s", "1",
                              "--out", str(tmp / "spans.csv")],
                             capture_output=True, text=True, timeout=60)
        assert inj.returncode == 0, inj.stderr
        tracer = tracer_pid(watch.pid)
        rss = [(rss_kb(tracer), rss_kb(watch.pid))]
        # Prometheus scrapes every second: wait for the last spin to be scraped
        value = wait_for(lambda: (promql(prom_port, PROM_QUERY % cpu) or 0) >= SPINS and
                         promql(prom_port, PROM_QUERY % cpu), 20)
        time.sleep(1)
        rss.append((rss_kb(tracer), rss_kb(watch.pid)))
        queries = {q: promql(prom_port, q % {"cpu": cpu}) for q in (
            'sum(jtr_watch_interruption_duration_seconds_bucket{cpu="%(cpu)d",'
            'category="task preemption",le="0.0005"}) - sum(jtr_watch_interruption_duration_'
            'seconds_bucket{cpu="%(cpu)d",category="task preemption",le="0.0002"})',
            'jtr_watch_trace_dropped_total',
            'sum(rate(jtr_watch_kernel_events_total{cpu="%(cpu)d",category="timer tick"}[5s]))')}
        watch.send_signal(signal.SIGTERM)
        out, err = watch.communicate(timeout=30)
        spans = (tmp / "spans.csv").read_text().split()
        return {"cpu": cpu, "tmp": tmp, "value": value, "rc": watch.returncode, "out": out,
                "err": err, "spans": spans, "rss": rss, "queries": queries,
                "prom_port": prom_port}
    finally:
        if watch is not None and watch.poll() is None:
            watch.kill()
        prom.terminate()
        prom.wait(timeout=30)


def test_prometheus_counts_each_injected_preemption(watched):
    assert len(watched["spans"]) == SPINS
    assert watched["value"] == SPINS, watched["err"]
    hist, dropped, ticks = watched["queries"].values()
    # the 300 us spins: the (200 us, 500 us] bucket; not the long first one, nor
    # perhaps the last, whose slice also writes the spans out
    assert hist >= SPINS - 2
    assert dropped == 0
    assert ticks and ticks > 0      # the app ran the whole time: ticks interrupted it


def test_watch_ends_on_sigterm_with_its_counts_kept(watched):
    assert watched["rc"] == 0, watched["err"]
    doc = json.loads((watched["tmp"] / "out" / "watch.json").read_text())
    assert doc["format"] == "jtr-watch/1" and doc["cpus"] == [watched["cpu"]]
    cats = {k["category"]: k for c in doc["state"]["cpus"] for k in c["categories"]}
    names = {n[0]: n for n in cats["task preemption"]["names"]}
    assert names["jtr-inject"][1] == SPINS
    assert re.search(r"\n +%d +task preemption +jtr-inject +%d " % (watched["cpu"], SPINS),
                     watched["out"]), watched["out"]
    assert "results: %s" % (watched["tmp"] / "out") in watched["out"]


def test_textfile_is_what_prometheus_reads(watched):
    text = (watched["tmp"] / "jtr.prom").read_text()
    fams = {f.name: f for f in text_string_to_metric_families(text)}
    assert set(fams) == {f[0][:-len("_total")] if f[1] == "counter" else f[0]
                         for f in FAMILIES}
    got = [s.value for s in fams["jtr_watch_interruptions"].samples
           if s.labels == {"cpu": str(watched["cpu"]), "category": "task preemption",
                           "name": "jtr-inject"}]
    assert got == [SPINS]
    assert all("pid" not in s.labels for f in fams.values() for s in f.samples)


def test_dump_is_charged_to_the_spinner(watched):
    dumps = [d for d in os.listdir(watched["tmp"] / "out") if d.startswith("dump-")]
    assert len(dumps) == 1, watched["err"]
    d = watched["tmp"] / "out" / dumps[0]
    assert "dump: %s" % d in watched["err"]
    labels = [line.split(",")[3] for line in (d / "outliers.csv").read_text().split("\n")[1:]
              if line]
    ours = labels.count("task preemption jtr-inject")
    # the long first spin is the trigger; the spins of the following second follow it
    assert ours >= 10, labels
    assert "(task preemption jtr-inject, 8." in watched["err"], watched["err"]
    r = run_jtr("attribute", str(d), "--json", check=True)
    a = json.loads(r.stdout)
    mine = [c for c in a["causes"] if c["category"] == "task preemption" and
            c["name"].startswith("jtr-inject ")]
    assert sum(c["count"] for c in mine) == ours, r.stdout


def test_memory_stays_bounded(watched):
    (tracer0, front0), (tracer1, front1) = watched["rss"]
    # the recorder had wrapped: the tracer's tables are all allocated up front
    assert tracer1 - tracer0 <= 256, watched["rss"]
    assert front1 - front0 <= 2048, watched["rss"]


def test_dashboard_queries_name_real_metrics():
    with open(DASHBOARD) as f:
        dash = json.load(f)
    names = {f[0] for f in FAMILIES}
    exposed = set()
    for n in names:
        exposed.add(n)
        if n.endswith("_seconds") and any(f[0] == n and f[1] == "histogram" for f in FAMILIES):
            exposed |= {n + "_bucket", n + "_sum", n + "_count"}
    exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", ())]
    assert exprs
    for e in exprs:
        used = set(re.findall(r"\bjtr_\w+", e))
        assert used and used <= exposed, (e, used - exposed)
        labels = set(re.findall(r"(\w+)\s*(?:=~|!=|=)\s*\"", e)) | {
            w for by in re.findall(r"by \(([^)]*)\)", e) for w in re.split(r"\s*,\s*", by)}
        assert labels <= {"cpu", "category", "name", "le", "instance", "job"}, e


def test_bad_input(tmp_path):
    cases = [(["watch", "-c", "1", "--listen", "nope"], "give ADDR:PORT"),
             (["watch", "-c", "1", "--listen", ":70000"], "a port is 1 to 65535"),
             (["watch", "-c", "99999"], "CPU"),
             (["watch", "-c", "1", "--dump-above", "1ns"], "--dump-above"),
             (["watch", "-c", "1", "--trace-buffer", "3M"], "power of two")]
    for args, text in cases:
        r = run_jtr(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert text in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_listen_port_taken(tmp_path):
    need_tracing()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        r = run_jtr("watch", "-c", "1", "-d", "1s", "--listen",
                    "127.0.0.1:%d" % s.getsockname()[1], "-o", str(tmp_path / "w"))
    assert r.returncode == 2 and "choose another address or port" in r.stderr, r.stderr
    assert not (tmp_path / "w").exists()      # nothing watched, nothing left


def test_systemd_unit_verifies(tmp_path):
    if not shutil.which("systemd-analyze"):
        pytest.skip("no systemd-analyze on this machine")
    unit = open(os.path.join(ROOT, "dist", "jtr-watch.service")).read()
    assert "ExecStart=/usr/local/bin/jtr watch " in unit
    (tmp_path / "jtr-watch.service").write_text(unit.replace("/usr/local/bin/jtr", JTR))
    r = subprocess.run(["systemd-analyze", "verify", str(tmp_path / "jtr-watch.service")],
                       capture_output=True, text=True)
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr
