# SPDX-License-Identifier: GPL-2.0-only
"""No impossible figure anywhere: every result kind (gap, null, send, wake, an
overloaded ping, pub/sub, an ab, a fleet; a suite's in test_suite.py) made for
real, then read by every command that shows figures (run's own output, ls,
compare, report, advise, fleet). A share is never above 100 %; a cause's time never exceeds the
run's time on the CPUs of its side; the outliers' time never the run's on all
its CPUs; a round trip's charged time never what its stamps measured; an
outlier's parts add up to its length. The overloaded ping is also the ground
truth of its validity (late sends counted by the client itself), of the causes
named (the busy loops injected on both ends), and of the speed of its
attribution."""
import concurrent.futures
import glob
import json
import os
import re
import shutil
import subprocess
import time

import pytest
from browser import see
from conftest import free_port, load, need_tracing, run_jtr

# the results are made and read beside the other tests (a busy machine is where an
# impossible figure shows); the overloaded ping (its ground truth: the loops it
# injected named, nothing else's) and ab (it applies a profile) run alone
pytestmark = pytest.mark.slow

EPS = 1e-6
# a figure in words above 100 % ("18131.131 %")
PCT = re.compile(r"(?<![\d.+-])(\d+(?:\.\d+)?) ?%")


def two_cpus():
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        pytest.skip("needs two CPUs")
    return allowed[-1], allowed[0]


def busy(cpus):
    """A busy loop pinned to each of @cpus, in a pid namespace of its own."""
    code = " ".join("taskset -c %d sh -c 'while :; do :; done' &" % c for c in cpus)
    return subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc", "--kill-child",
                             "sh", "-c", code + " wait"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """{kind: folder} of one result of each kind but the overloaded ping's."""
    need_tracing()
    d = tmp_path_factory.mktemp("figures")
    cpu, other = two_cpus()
    out = {}

    def run(kind, *args):
        p = run_jtr("run", *args, "-o", d / kind, timeout=180)
        assert p.returncode == 0, p.stderr
        out[kind] = d / kind
    run("gap", "-c", cpu, "-d", "1")
    run("null", "null", "-c", cpu, "-n", "200K")
    run("send", "send", "-T", "udp", "-c", cpu, "-n", "20K")
    run("wake", "wake", "-c", cpu, "-f", "80", "-d", "1")
    run("pub", "pub", "-T", "udp", "-P", "127.0.0.1:%d" % free_port(), "-r", "10K", "-n", "20K",
        "-c", cpu, "--sub-cpu", other)
    # a fleet of two hosts: this host's gap run, and the same run as another's
    for host in ("h1", "h2"):
        shutil.copytree(out["gap"], d / "fleet" / host / "gap")
    out["fleet"] = d / "fleet"
    return out


@pytest.fixture(scope="module")
def overloaded(tmp_path_factory):
    """The overloaded ping's folder, what jtr run printed, what jtr attribute
    printed and the seconds it took; and an ab's folder."""
    need_tracing()
    d = tmp_path_factory.mktemp("overloaded")
    cpu, other = two_cpus()
    # the overloaded round trips: a busy loop on each end
    loops = busy([cpu, other, cpu])
    try:
        time.sleep(0.3)
        # a threshold given: a warm-up already slowed by the loops puts its own
        # above every round trip (12 ms once: no outlier, nothing to attribute).
        # 10,000 round trips: the loops make the client late on every send and
        # take the share of the outliers' time they take in 30,000 (sh on both
        # sides: 84 % and 85 % against 83 %), in 1.3 s of run, not 4.9 s (jtr
        # ping once counted the warm-up's late sends too: 10,099 of 10,000)
        p = run_jtr("run", "ping", "-T", "udp", "-1", "-c", cpu, "-r", "10K", "-n", "10K",
                    "--pong-cpu", other, "-P", "127.0.0.1:%d" % free_port(), "--threshold",
                    "1ms", "-o", d / "ping", timeout=180)
    finally:
        loops.kill()
        loops.wait()
    assert p.returncode == 0, p.stderr
    out = {"ping": d / "ping", "ping_stdout": p.stdout}
    t = time.monotonic()
    a = run_jtr("attribute", out["ping"], check=True)
    out["ping_attribute_s"] = time.monotonic() - t
    out["ping_attribute"] = a.stdout
    p = run_jtr("ab", "jtr-baseline", "-c", cpu, "-d", "200ms", "-o", d / "ab", timeout=300)
    assert p.returncode in (0, 1), p.stderr
    out["ab"] = d / "ab"
    return out


def walk(doc, path=""):
    """Every (path, key, value) of a JSON document."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield path, k, v
            yield from walk(v, path + "/" + str(k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from walk(v, path + "/%d" % i)


def shares_and_percents(doc, what):
    """No share above 1, no percentage above 100, in a JSON document."""
    for path, k, v in walk(doc):
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            continue
        if k == "share" or k.endswith("_share"):
            assert v <= 1 + EPS, "%s: %s%s/%s = %r" % (what, path, "", k, v)
        if (k.endswith("_pct") or k == "pct") and not k.startswith(("diff", "min_")) and \
                "limit" not in k:
            assert v <= 100 + EPS, "%s: %s/%s = %r" % (what, path, k, v)


def measured(runs):
    """The time measured on one CPU, the most of any: a CPU's runs one after
    another added up (null's repetitions, send's pairs), CPUs side by side not."""
    per_cpu = {}
    for r in runs:
        per_cpu[r.get("cpu")] = per_cpu.get(r.get("cpu"), 0) + (r.get("duration_ns") or 0)
    return max(per_cpu.values(), default=0)


def attribution_fits(att, every_run, sides, what):
    """The attribution's times fit the runs it covers (those of @every_run of its
    kind, or all of them): each cause's on its side's CPUs, all of them on all
    the CPUs; each outlier's parts add up to it; no phase charged more than
    measured; the outliers' time within the duration the attribution itself
    gives (127 % of it once: one run's of three). A result of runs of two kinds
    (send and null) has an attribution per kind."""
    kind = att.get("run_kind")
    runs = [r for r in every_run if r.get("kind") == kind] or every_run
    duration_ns = measured(runs)
    cpus = {c for cs in sides.values() for c in cs} or set(att["outliers"].get("cpus") or [])
    every = max(1, len(cpus)) * duration_ns
    o = att["outliers"]
    assert o["total_ns"] <= every, (what, o["total_ns"], every)
    if o.get("duration_ns") is not None:
        assert o["total_ns"] <= max(1, len(cpus)) * o["duration_ns"], (what, o)
    assert sum(c["total_ns"] for c in att["causes"]) <= every, what
    for c in att["causes"]:
        side_cpus = len(sides.get(c.get("side"), [])) or max(1, len(cpus))
        assert c["total_ns"] <= side_cpus * duration_ns, (what, c)
        assert c["max_ns"] <= o.get("summed_ns", o["total_ns"]), (what, c)
        for t in c.get("tasks") or ():
            assert t["total_ns"] <= c["total_ns"], (what, c)
    for w in att["worst"]:
        assert sum(p["ns"] for p in w["parts"]) == w["length_ns"], (what, w)
    for b in att.get("budget") or ():
        assert b["charged_mean_ns"] <= b["measured_mean_ns"], (what, b)
    for kind, k in (att.get("by_kind") or {}).items():
        attribution_fits(k, every_run, {}, what + " (%s runs)" % kind)


def result_fits(folder, what):
    r = load(folder)
    shares_and_percents(r, what)
    for x in r["runs"]:
        if "lost_time_pct" in x:
            assert x["lost_time_pct"] <= 100, (what, x["lost_time_pct"])
    t = r.get("transport") or {}
    if isinstance(t.get("late_sends"), int) and isinstance(t.get("sent"), int):
        # late sends are among the measured ones (the warm-up's were counted once)
        assert t["late_sends"] <= t["sent"], (what, t["late_sends"], t["sent"])
    for reason in (r.get("validity") or {}).get("reasons") or []:
        if reason.get("code") in ("late_sends", "lost", "tracer_drops"):  # shares
            assert 0 <= reason["value"] <= 1, (what, reason)
    if "attribution" in r:
        attribution_fits(r["attribution"], r["runs"], r.get("sides") or {}, what)
    return r


KINDS = ["gap", "null", "send", "wake", "pub"]


def reading(kind, folder):
    """(kind, command, argv) of jtr ls, compare, report and advise (where the
    result was attributed) on a result."""
    jobs = [(kind, "ls", ("ls", "--json", folder)),
            (kind, "compare", ("compare", "--json", "--accept-invalid", folder, folder)),
            (kind, "report", ("report", folder))]
    if "attribution" in load(folder):
        jobs.append((kind, "advise", ("advise", "--json", "--accept-invalid", folder)))
    return jobs


def read_all(jobs):
    """{(kind, command): CompletedProcess} of the reading commands @jobs (reading()),
    two at a time (the runs were made before)."""
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        done = pool.map(lambda job: run_jtr(*job[2], check=True), jobs)
        return {(kind, cmd): p for (kind, cmd, _), p in zip(jobs, done)}


@pytest.fixture(scope="module")
def read(made):
    """read_all() of the reading commands on each result."""
    return read_all([job for kind in KINDS for job in reading(kind, made[kind])])


def commands_fit(kind, folder, read, tmp_path, seen=None):
    """What jtr ls, compare, advise and report said of a result: no share above
    one, no percentage above 100, no remedy saving more than the run's time.
    @seen: the report's page as see() gave it (None: it is rendered here)."""
    r = result_fits(folder, kind)
    # jtr ls
    ls = json.loads(read[kind, "ls"].stdout)
    shares_and_percents(ls, "ls " + kind)
    for row in ls["results"]:
        assert row["lost_pct"] is None or row["lost_pct"] <= 100, row
    # jtr compare (the result with itself: the same figures on both sides)
    shares_and_percents(json.loads(read[kind, "compare"].stdout), "compare " + kind)
    # jtr advise, where the result was attributed
    if "attribution" in r:
        doc = json.loads(read[kind, "advise"].stdout)
        shares_and_percents(doc, "advise " + kind)
        cpus = max(1, len({c for cs in (r.get("sides") or {"x": doc["cpus"]}).values()
                           for c in cs}))
        for rem in doc["remedies"]:
            assert rem["saving_ns"] <= cpus * doc["duration_ns"], rem
    # jtr report: no percentage above 100 on the page a person reads
    seen = seen or see(folder / "report" / "report.html", tmp_path)
    over = [m for m in PCT.findall(seen.words()) if float(m) > 100 + EPS]
    assert not over, (kind, over)


@pytest.mark.parametrize("kind", KINDS)
def test_each_result_and_its_commands(made, read, kind, tmp_path):
    commands_fit(kind, made[kind], read, tmp_path)


def test_fleet(made):
    f = json.loads(run_jtr("fleet", "--json", made["fleet"], check=True).stdout)
    shares_and_percents(f, "fleet")
    for row in f["rows"]:
        assert row["lost_pct"] is None or row["lost_pct"] <= 100, row


@pytest.mark.measures
def test_the_overloaded_ping_and_its_commands(overloaded, tmp_path):
    folder = overloaded["ping"]
    jobs = reading("ping", folder)

    def report_and_its_page():
        [argv] = [argv for _, cmd, argv in jobs if cmd == "report"]
        p = run_jtr(*argv, check=True)
        return p, see(folder / "report" / "report.html", tmp_path)
    # the report's page rendered (Chromium, then its PDF read) while the other
    # commands run
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        page = pool.submit(report_and_its_page)
        read = {(kind, cmd): run_jtr(*argv, check=True) for kind, cmd, argv in jobs
                if cmd != "report"}
        read["ping", "report"], seen = page.result()
    commands_fit("ping", folder, read, tmp_path, seen)


@pytest.mark.measures
def test_ab(overloaded):
    for item in sorted(glob.glob(str(overloaded["ab"] / "*" / "result.json"))):
        result_fits(os.path.dirname(item), "ab " + item)
    compare = overloaded["ab"] / "compare.json"
    if compare.exists():
        shares_and_percents(json.loads(compare.read_text()), "ab compare.json")


@pytest.mark.measures
def test_an_overloaded_ping_is_invalid_and_names_the_loops(overloaded):
    """The client counted its late sends itself (result.json transport.late_sends):
    above the documented share the run is not a valid measurement, in result.json,
    on the first line jtr run prints and in jtr ls; jtr advise gives no
    remedy from it and jtr compare no verdict. The busy loops injected on both
    ends are the causes named, on both sides; the attribution takes seconds."""
    r = load(overloaded["ping"])
    t = r["transport"]
    share = t["late_sends"] / t["sent"]
    if share <= 0.10:
        pytest.skip("the client kept its schedule here (%.0f %% late): the loops did not "
                    "overload it" % (100 * share))
    v = r["validity"]
    assert not v["valid"] and any(x["code"] == "late_sends" for x in v["reasons"]), v
    # the headline's first line, the first thing jtr run prints
    first = overloaded["ping_stdout"].splitlines()[0]
    assert first.startswith("jtr ping: ping CPU ") and \
        ": not a valid measurement: the client (jtr ping) was late" in first, first
    ls = run_jtr("ls", overloaded["ping"], check=True).stdout
    assert "ping (invalid)" in ls
    a = run_jtr("advise", overloaded["ping"])
    assert a.returncode == 2 and "not a valid measurement" in a.stderr
    c = json.loads(run_jtr("compare", "--json", overloaded["ping"], overloaded["ping"],
                           check=True).stdout)
    assert c["verdict"] == "invalid" and c["invalid"]
    # the loops (comm sh) on each end, most of the time the outliers were in flight
    att = r["attribution"]
    loops = {c["side"]: c for c in att["causes"] if c["category"] == "task preemption" and
             c["name"] == "sh"}
    assert set(loops) == {"ping", "pong"}, att["causes"][:5]
    assert att["causes"][0]["name"] == "sh", att["causes"][:3]
    assert sum(c["share"] for c in loops.values()) > 0.5, loops
    # seconds, not minutes (the speed goal is make bench's; this is a bound a busy
    # machine keeps)
    assert overloaded["ping_attribute_s"] < 60, overloaded["ping_attribute_s"]
