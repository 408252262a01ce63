# SPDX-License-Identifier: GPL-2.0-only
"""Fleet validation end to end: ansible-playbook runs the role of ansible/ on two
"hosts" made on this machine (ansible_connection=local, each with its own install
prefix, results folder and tuning state), both installed beforehand (jtr_install:
none), each applying a profile around its runs. During one host's gap run a
SCHED_FIFO spinner named jtr-inject steals its measured CPU; jtr fleet's table
(in the playbook's output) and page must flag exactly that host, by that cause,
and not the other. The role's two installs (a host built from source, another
given the controller's tree) are played apart, with a short run and no profile:
that play measures nothing and runs beside the other tests. Then jtr fleet's
refusals of bad input."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import warnings

import pytest
from conftest import JTR, ROOT, load, need_tracing, run_as, run_jtr, wait_for

from jtrpy.values import format_cpulist

# the two-host play measures (alone, after the rest); the source build and the
# refusals judge what is built and said
pytestmark = [pytest.mark.slow, pytest.mark.root]

INJECT = os.path.join(ROOT, "tests", "inject.py")
PLAYBOOK = os.path.join(ROOT, "ansible", "fleet.yml")
QUIET, DISTURBED = "alpha", "beta"
RUN_S, WAKE_S = 1.5, 1
# the spinner: 5 ms at FIFO 10 every 20 ms, from 0.2 s into the run for 1 s:
# about 17 % of the run, several times this machine's own time lost (3.7 % beside a
# busy loop on the other CPU: VM exits, the test's own python, the tick); its
# first spin comes 0.06 s after that here, its last ends 0.2 s before the run does
SPIN_US, PERIOD_MS, INJECT_AFTER_S, INJECT_S = 5000, 20, 0.2, 1.0
CAUSE = "task preemption: jtr-inject"


def _inventory(tmp, modes):
    """Hosts on this machine, {name: install mode} (YAML, written as JSON)."""
    hosts = {}
    for host, mode in modes.items():
        d = tmp / host
        hosts[host] = {"jtr_install": mode, "jtr_prefix": str(d / "prefix"),
                       "jtr_build_dir": str(d / "build"),
                       "jtr_results_dir": str(d / "results"),
                       "jtr_environment": {"JTR_STATE_DIR": str(d / "state")}}
    path = tmp / "inventory.yml"
    path.write_text(json.dumps({"jtr": {"hosts": hosts, "vars": {
        "ansible_connection": "local", "ansible_python_interpreter": "/usr/bin/python3"}}}))
    return path


def _inject_when_measuring(tmp, cpu, out, done):
    """Wait for the disturbed host's gap probe to measure (its hidden partial
    folder), then run the spinner on @cpu in a pid namespace of its own; its
    CompletedProcess goes into @out. Gives up when @done is set first."""
    partial = str(tmp / DISTURBED / "results" / ".gap.partial-*")
    if not wait_for(lambda: glob.glob(partial) or done.is_set(), timeout=200) \
            or done.is_set():
        return
    time.sleep(INJECT_AFTER_S)
    cmd = ["unshare", "--pid", "--fork", "--mount-proc", sys.executable, INJECT, "fifo",
           str(cpu), "--prio", "10", "--spin-us", str(SPIN_US), "--period-ms", str(PERIOD_MS),
           "--duration", str(INJECT_S), "--out", str(tmp / "inject.csv")]
    out.append(subprocess.run(cmd, capture_output=True, text=True, timeout=60))


def _ansible(tmp, modes, extra, pin=None):
    """ansible-playbook over @modes' hosts in @tmp with the role's variables @extra,
    on the CPUs @pin (all when None); its CompletedProcess."""
    extra = dict({"jtr_become": False, "jtr_src": ROOT, "jtr_fleet_command": JTR,
                  "jtr_fleet_dir": str(tmp / "fleet")}, **extra)
    (tmp / "vars.json").write_text(json.dumps(extra))
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_PIPELINING="1",
               ANSIBLE_RETRY_FILES_ENABLED="0", ANSIBLE_LOCAL_TEMP=str(tmp / ".ansible"),
               ANSIBLE_REMOTE_TMP=str(tmp / ".ansible-remote"),
               # the controller is on the measured machine: no millisecond polling
               # of its workers (the default, 1 ms, is 4 % of a CPU)
               ANSIBLE_INTERNAL_POLL_INTERVAL="0.02")
    cmd = ["ansible-playbook", "-i", str(_inventory(tmp, modes)), PLAYBOOK, "--forks", "1",
           "-e", "@%s" % (tmp / "vars.json")]
    if pin:
        cmd = ["taskset", "-c", format_cpulist(pin)] + cmd
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=240, cwd=tmp)


def _play(tmp, cpus, install="tree"):
    """The playbook over the two hosts in @tmp, the spinner in the disturbed one's gap
    run: {tmp, cpu, play, doc (jtr fleet --json)}. @install: the hosts' jtr_install
    ("none": an earlier play in @tmp installed them)."""
    cpu = cpus[-1]
    extra = {"jtr_cpus": str(cpu), "jtr_duration": "%gs" % RUN_S, "jtr_wake": True,
             "jtr_wake_duration": "%gs" % WAKE_S, "jtr_wake_args": ["-f", "80"],
             "jtr_profile": "jtr-baseline"}
    injected, done = [], threading.Event()
    watcher = threading.Thread(target=_inject_when_measuring, args=(tmp, cpu, injected, done))
    watcher.start()
    t0 = time.monotonic()
    try:
        # the controller and its workers keep off the measured CPU, as on a real
        # fleet (it runs elsewhere): beside a busy program on the other CPU they
        # would take turns with the probe (ansible-playbook flagged on the quiet host)
        play = _ansible(tmp, {QUIET: install, DISTURBED: install}, extra, pin=cpus[:-1])
    finally:
        done.set()
        watcher.join(timeout=60)
    took = time.monotonic() - t0
    print("ansible-playbook took %.1f s" % took)
    assert play.returncode == 0, play.stdout[-6000:] + play.stderr[-3000:]
    assert injected and injected[0].returncode == 0, (
        injected[0].stderr if injected else "the disturbed host's probe never started")
    js = run_jtr("fleet", "--json", str(tmp / "fleet"))
    assert js.returncode == 0, js.stderr
    return {"tmp": tmp, "cpu": cpu, "play": play, "doc": json.loads(js.stdout)}


def _injected_pct(tmp):
    """The share of the disturbed host's gap run the spinner's spins took, in %
    (the injector's own count)."""
    run = load(tmp / "fleet" / DISTURBED / "gap")["runs"][0]
    spans = [tuple(map(int, x.split(","))) for x in (tmp / "inject.csv").read_text().split()]
    took = sum(min(e, run["end_mono_ns"]) - max(b, run["start_mono_ns"]) for b, e in spans
               if b < run["end_mono_ns"] and e > run["start_mono_ns"])
    return 100.0 * took / (run["end_mono_ns"] - run["start_mono_ns"])


def _not_quiet(got):
    """Why the quiet host's gap run cannot be told from the disturbed one (it lost
    more than half what the spinner took of the other: the rule flags a host at
    twice the others' time lost), or None."""
    row = _row(got["doc"], QUIET, "gap")
    injected = _injected_pct(got["tmp"])
    if (row["lost_pct"] or 0) <= injected / 2:
        return None
    return "the quiet host's gap run lost %.2f %% (%s), more than half the %.2f %% " \
        "injected into the other" % (row["lost_pct"], "; ".join(
            "%s %.2f %%" % (c["key"], c["lost_pct"] or 0) for c in row["causes"][:3]),
            injected)


def _stray(got):
    """Why a row other than the disturbed host's gap run is flagged by a cause the
    test did not inject and the hypervisor did not take, or None. jtr fleet is right
    to flag it (the run lost that time: RCU callbacks run in the softirq for 0.7 %
    of the disturbed host's wake run once, 71.6 times the quiet host's), and it is
    not what this test injects."""
    stray = ["%s %s by %s" % (r["host"], r["tool"], (r.get("cause") or {}).get("key"))
             for r in got["doc"]["rows"] if r["flagged"] and not _host_noise(r)
             and (r["host"], r["tool"]) != (DISTURBED, "gap")]
    return stray and "flagged, not injected: " + "; ".join(stray) or None


def _need_ansible():
    need_tracing()
    if not shutil.which("ansible-playbook"):
        pytest.skip("ansible-playbook is not installed (Debian: ansible-core, in "
                    "scripts/deps.sh)")


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    _need_ansible()
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("needs two CPUs: one measured, one for the tracer, Ansible and the "
                    "spinner's start")
    tmp = tmp_path_factory.mktemp("fleet")
    # the hosts installed beforehand (jtr_install: none): a make install copied to
    # the other host takes 2 s here, the role's tree install 10 s of the measuring
    # phase; the tree and source installs are played in
    # test_the_role_builds_on_one_host_and_copies_a_tree_to_another
    subprocess.run(["make", "-s", "-C", ROOT, "install", "PREFIX=%s" % (tmp / QUIET / "prefix")],
                   check=True, capture_output=True, timeout=120)
    shutil.copytree(tmp / QUIET / "prefix", tmp / DISTURBED / "prefix", symlinks=True)
    got = _play(tmp, cpus, install="none")
    why = _not_quiet(got) or _stray(got)
    if why:
        # this shared VM stalls a vCPU for tens of ms now and then (30.7 ms once in
        # the quiet host's run: 5.5 % lost to VM exits and a 21 ms timer tick)
        warnings.warn("%s: the machine was disturbed; the play runs once more, on the "
                      "hosts it installed" % why, stacklevel=1)
        print(why + ": the play runs once more")
        got = _play(got["tmp"], cpus, install="none")
        why = _not_quiet(got)
        assert not why, why + ", twice"
    return got


def _host_noise(row):
    """Is @row flagged only by what the hypervisor took (no kernel event in the
    guest: VM exits, or the host's preemption the steal clock counts; for a
    wake-up, the timer interrupt the host delivered late)? This shared VM stalls
    a vCPU for milliseconds now and then (6.1 ms once in the quiet host's 1 s
    wake run); jtr fleet is right to flag that, and it is not what this test
    injects."""
    key = (row.get("cause") or {}).get("key", "")
    return row["flagged"] and (key.startswith("no kernel event") or key in (
        "timer IRQ latency: VM exits, SMI, hardware or interrupts off",
        "timer IRQ latency: host preemption (steal)"))


def _flagged(doc, tool=None):
    """The (host, probe) rows flagged, less those flagged by the hypervisor alone
    (printed), which the test cannot control."""
    out = []
    for r in doc["rows"]:
        if r["flagged"] and (tool is None or r["tool"] == tool):
            if _host_noise(r) and (r["host"], r["tool"]) != (DISTURBED, "gap"):
                print("not injected, left out: %s %s flagged by %s" % (
                    r["host"], r["tool"], r["cause"]["key"]))
            else:
                out.append((r["host"], r["tool"]))
    return out


def _row(doc, host, tool):
    (row,) = [r for r in doc["rows"] if r["host"] == host and r["tool"] == tool]
    return row


@pytest.mark.measures
def test_role_installs_measures_and_fetches(fleet):
    tmp = fleet["tmp"]
    for host in (QUIET, DISTURBED):
        assert os.access(tmp / host / "prefix" / "bin" / "jtr", os.X_OK)
        assert os.access(tmp / host / "prefix" / "libexec" / "jtr" / "jtr-gap", os.X_OK)
        for probe, tool in (("gap", "gap"), ("wake", "wake")):
            res = load(tmp / "fleet" / host / probe)
            assert res["tool"] == tool and not res.get("partial")
            assert res["runs"][0]["cpu"] == fleet["cpu"] and "attribution" in res
            # the profile was applied around the runs (the results record it) ...
            assert res["host"]["tuning_profile"] == "jtr-baseline"
        # ... and reverted after them, always
        assert not os.path.exists(tmp / host / "state" / "active-profile")
        assert not os.path.exists(tmp / host / "results.tar.gz")
    # installed beforehand (jtr_install: none): nothing was built on them
    assert not os.path.exists(tmp / QUIET / "build")
    assert not os.path.exists(tmp / DISTURBED / "build")
    assert os.path.isfile(tmp / "fleet" / "fleet.html")


def test_the_role_builds_on_one_host_and_copies_a_tree_to_another(tmp_path):
    """jtr_install: source on one host: the role packs the controller's source
    tree, builds it there (make -j, the host's compilers) and installs it at the
    host's prefix; jtr_install: tree on the other: built and installed once on the
    controller, that tree unpacked at the host's prefix, nothing built there. A
    short run on each is fetched and jtr fleet reads them. No profile, and nothing
    timed: it runs beside the other tests (the build took 17 s on the one CPU the
    measured play leaves to Ansible); the measured play's hosts are installed
    already (jtr_install: none)."""
    _need_ansible()
    play = _ansible(tmp_path, {QUIET: "source", DISTURBED: "tree"}, {"jtr_duration": "300ms"})
    assert play.returncode == 0, play.stdout[-6000:] + play.stderr[-3000:]
    assert os.path.isfile(tmp_path / QUIET / "build" / "build" / "bin" / "jtr-gap")
    assert not os.path.exists(tmp_path / DISTURBED / "build")
    for host in (QUIET, DISTURBED):
        assert os.access(tmp_path / host / "prefix" / "bin" / "jtr", os.X_OK)
        assert os.access(tmp_path / host / "prefix" / "libexec" / "jtr" / "jtr-gap", os.X_OK)
        res = load(tmp_path / "fleet" / host / "gap")
        assert res["tool"] == "gap" and not res.get("partial") and "attribution" in res
        assert not res["host"].get("tuning_profile")
        assert not os.path.exists(tmp_path / host / "results.tar.gz")
    assert os.path.isfile(tmp_path / "fleet" / "fleet.html")


@pytest.mark.measures
def test_the_injection_is_in_the_disturbed_run(fleet):
    """The ground truth: the spinner ran inside the disturbed host's gap run and its
    attribution charged it; the quiet host's has no such cause."""
    tmp = fleet["tmp"]
    res = load(tmp / "fleet" / DISTURBED / "gap")
    run = res["runs"][0]
    spans = [tuple(map(int, x.split(","))) for x in (tmp / "inject.csv").read_text().split()]
    inside = [s for s in spans if run["start_mono_ns"] < s[0] and s[1] < run["end_mono_ns"]]
    assert len(inside) >= 0.9 * len(spans) >= 0.9 * INJECT_S * 1000 / PERIOD_MS * 0.8
    charged = sum(c["primary_count"] for c in res["attribution"]["causes"]
                  if c["name"] == "jtr-inject")
    assert charged >= 0.8 * len(inside)
    quiet = load(tmp / "fleet" / QUIET / "gap")
    assert not any(c["name"].startswith("jtr-inject") for c in quiet["attribution"]["causes"])


@pytest.mark.measures
def test_fleet_flags_exactly_the_disturbed_host_and_the_cause(fleet):
    doc = fleet["doc"]
    assert doc["hosts"] == [QUIET, DISTURBED]
    assert doc["flagged_hosts"] == [DISTURBED] or _flagged(doc) == [(DISTURBED, "gap")], [
        (r["host"], r["tool"], r["cause"]) for r in doc["rows"] if r["flagged"]]
    row = _row(doc, DISTURBED, "gap")
    assert row["flagged"] and row["cause"]["key"] == CAUSE
    flag = {f["metric"]: f for f in row["flags"]}["lost"]
    quiet = _row(doc, QUIET, "gap")
    assert flag["baseline"] == quiet["lost_pct"] and flag["value"] == row["lost_pct"]
    assert row["lost_pct"] >= 2 * quiet["lost_pct"]
    # the cause's time lost is what the spinner took: most of the difference
    assert row["cause"]["excess_pct"] >= 0.5 * (row["lost_pct"] - quiet["lost_pct"])
    assert _flagged(doc) == [(DISTURBED, "gap")]


@pytest.mark.measures
def test_the_playbook_prints_the_table(fleet):
    out = fleet["play"].stdout
    lines = [x.strip().strip('",').strip() for x in out.splitlines()]
    head = [x for x in lines if x.startswith("host ")]
    assert head and head[0].split()[:4] == ["host", "probe", "CPUs", "p99"], out[-3000:]
    rows = {tuple(x.split()[:2]): x for x in lines if re.match(r"(alpha|beta) +(gap|wake) ", x)}
    assert set(rows) == {(h, p) for h in (QUIET, DISTURBED) for p in ("gap", "wake")}
    assert "FLAGGED" in rows[(DISTURBED, "gap")] and CAUSE in rows[(DISTURBED, "gap")]
    noise = {(r["host"], r["tool"]) for r in fleet["doc"]["rows"] if _host_noise(r)}
    for key in ((QUIET, "gap"), (QUIET, "wake")):
        assert rows[key].endswith("  -") or (key in noise and "FLAGGED" in rows[key])
    assert "flagged: %s" % DISTURBED in lines or "flagged: %s, %s" % (QUIET, DISTURBED) in lines
    assert any(x.startswith("by %s" % CAUSE) for x in lines)
    # the runs as the role ran them: no limits asked for, none passed
    tmp, cpu = fleet["tmp"], fleet["cpu"]
    for host in (QUIET, DISTURBED):
        for cmd in ("run -c %d -d %gs -o %s/gap" % (cpu, RUN_S, tmp / host / "results"),
                    "run wake -c %d -d %gs -f 80 -o %s/wake" % (cpu, WAKE_S,
                                                              tmp / host / "results")):
            assert "(item=%s %s)" % (tmp / host / "prefix" / "bin" / "jtr", cmd) in out


@pytest.mark.measures
def test_the_page_names_the_host_and_the_cause(fleet):
    page = (fleet["tmp"] / "fleet" / "fleet.html").read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)   # needs no network
    assert page.count("data:image/png;base64,") == 2                     # gap and wake
    noise = ["<td>%s</td><td>%s</td>" % (r["host"], r["tool"]) for r in fleet["doc"]["rows"]
             if _host_noise(r) and (r["host"], r["tool"]) != (DISTURBED, "gap")]
    flagged = [x for x in re.findall(r'<tr class="flagged"[^>]*>(.*?)</tr>', page)
               if not any(x.startswith(n) for n in noise)]
    assert len(flagged) == 1 and "<td>%s</td><td>gap</td>" % DISTURBED in flagged[0]
    assert "jtr-inject" in flagged[0]
    assert len(_flagged(fleet["doc"])) == 1
    assert re.search(r"flagged: (%s, )?%s</p>" % (QUIET, DISTURBED), page)
    assert re.search(r'<li class="flagged"><b>%s</b> \(gap\): time lost .* by %s' % (
        DISTURBED, CAUSE), page)


# --- bad input: one line, exit 2 -------------------------------------------------

def test_bad_input(tmp_path):
    (tmp_path / "empty" / "host1").mkdir(parents=True)
    bad = tmp_path / "bad" / "host1" / "gap"
    bad.mkdir(parents=True)
    (bad / "result.json").write_text('{"format": "jtr-result/1", "tool": "gap", "runs": [')
    cases = [
        ([str(tmp_path / "empty")], "jtr fleet: no jtr result in %s" % (tmp_path / "empty")),
        ([str(bad.parent.parent)], "jtr fleet: %s" % (bad / "result.json")),
        ([str(tmp_path / "nope")], "jtr fleet: %s: no such folder" % (tmp_path / "nope")),
        ([], "jtr fleet: give the folders of the hosts' results"),
        (["--metrics", "p42", str(tmp_path)], "jtr fleet: --metrics p42: use some of"),
    ]
    for args, start in cases:
        p = run_jtr("fleet", *args)
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        assert p.stderr.startswith(start) and p.stderr.count("\n") == 1, p.stderr
        assert "Traceback" not in p.stderr and p.stdout == ""


def test_a_host_that_cannot_be_read_as_a_user(nobody_folder):
    """jtr fleet as the user nobody, one host's folder closed to it: one line naming
    the folder, exit 2 (the host was left out silently and the others compared,
    exit 0); a host folder linked out of the fleet's folder is not followed."""
    top, nobody = nobody_folder
    for h in ("h1", "h2"):
        os.mkdir(os.path.join(top, h))
        p = run_jtr("gap", "-c", "0", "-d", "0.2", "-q", "-o", os.path.join(top, h, "gap"))
        assert p.returncode == 0, p.stderr
    subprocess.run(["chmod", "-R", "a+rX", top], check=True)
    os.chmod(os.path.join(top, "h2"), 0o700)
    os.symlink("/", os.path.join(top, "root"))
    q = run_as(nobody, JTR, "fleet", top)
    assert q.returncode == 2, (q.stdout, q.stderr)
    assert q.stderr == "jtr fleet: %s/h2: cannot read: Permission denied\n" % top
    os.chmod(os.path.join(top, "h2"), 0o755)
    q = run_as(nobody, JTR, "fleet", top)
    assert q.returncode == 0, q.stderr
    assert "%s/root: a link out of the folder given; not followed" % top in q.stderr
    assert q.stdout.count(" gap ") == 2, q.stdout
