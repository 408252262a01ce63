# SPDX-License-Identifier: GPL-2.0-only
"""jtr advise: seeded misconfigurations, each measured with jtr run, advised on,
and proven with jtr advise --prove (jtr ab with the generated profile); the
machine exactly as before after every proof (the tune tests' snapshot compare).

Each scenario runs in its own pid namespace (test_tune.in_namespace), as root,
with the `machine` fixture putting back every machine-wide value it saw.
"""
import glob
import json
import os
import shutil
import subprocess

import pytest
from conftest import JTR, ROOT, load, need_tracing, run_as, run_jtr
from rtknobs import RT_SYSCTL, rt_period
from test_tune import (  # noqa: F401
    TUNED_PY,
    _tuned_load,
    dumps,
    in_namespace,
    machine,
    tuned_daemon,
)

from jtrpy.trace.causes import FAIR_SERVER

# the seeded scenarios are marked measures (alone, after the rest); the others
# judge what jtr advise says and refuses, which holds beside other tests
pytestmark = [pytest.mark.slow, pytest.mark.root]

RUN_S = 2


def scenario(tmp_path, env, setup, run_args, prove_s=RUN_S, until=None, run_s=RUN_S,
             text=False, tries=3):
    """Seed (bash @setup, which may start tasks), jtr run for @run_s (with @text,
    jtr advise's text into advice.txt beside what follows), jtr advise --prove
    --json; every output in tmp_path. With @until, jtr advise --json after the run,
    and the run is made again (@tries tries) until the advice holds that text: the
    kernel decides when some seeded events come; without, the advice is the one
    --prove wrote (p/advice.json, the same document). Returns (advice, proof, the
    namespace's stdout)."""
    steps = [
        "$JTR advise $OUT/r > $OUT/advice.txt 2>&1 & TEXT=$!" if text else "",
        "$JTR advise --json $OUT/r > $OUT/advice.json 2> $OUT/advice.err; echo advise=$?"
        if until is not None else "",
        "wait $TEXT" if text else "",
        "grep -q -- '%s' $OUT/advice.json && break" % until if until is not None else "break"]
    p = in_namespace("""
%s
$JTR tune show --json > $OUT/before.json
for try in $(seq %d); do
  rm -rf $OUT/r
  $JTR run -q -c 1 -d %g %s -o $OUT/r > $OUT/run.txt 2>&1; echo run=$?
  %s
done
$JTR advise --prove -d %g -o $OUT/p $OUT/r > $OUT/prove.txt 2>&1; echo prove=$?
$JTR tune show --json > $OUT/after.json
""" % (setup, tries, run_s, run_args, "\n  ".join(steps), prove_s), env, tmp_path, timeout=300)
    assert "run=0" in p.stdout, (tmp_path / "run.txt").read_text()
    if until is not None:
        assert "advise=0" in p.stdout, (tmp_path / "advice.err").read_text()
    assert "prove=0" in p.stdout, (tmp_path / "prove.txt").read_text()
    before, after = dumps(tmp_path, "before.json", "after.json")
    assert after == before          # the proof reverted exactly
    advice = json.loads((tmp_path / ("advice.json" if until is not None else
                                     "p/advice.json")).read_text())
    proof = json.loads((tmp_path / "p" / "prove.json").read_text())
    return advice, proof, p.stdout


def remedy(doc, rule):
    return next((r for r in doc["remedies"] if r["rule"] == rule), None)


def row(proof, rule):
    return next(r for r in proof["remedies"] if r["rule"] == rule)


# the vmstat scenario first: a proof whose profile holds vm.stat_interval=10 (the
# other scenarios' do when a vmstat_update came in their run) leaves the kernel's
# vmstat shepherd, which re-arms itself with the interval in force when it runs,
# up to 10 s away once reverted: no vmstat_update on any CPU until then (three
# tries of this run found none 2 s after the busy loop's proof). The tests that
# make test runs before the measuring ones do the same (test_tune.py's round trips
# apply jtr-latency): the runs go on for five tries (about 12 s, the window and a
# run) until one names vmstat_update; run again right after itself, this test
# needed four
@pytest.mark.measures
def test_vmstat_and_the_tick(machine, tmp_path):  # noqa: F811
    """vm.stat_interval=1 and a writer of the page cache on the CPU: vmstat_update in a per-CPU
    kworker, sent to vm.stat_interval (proven or within noise); the tick: nohz_full,
    unavailable without CONFIG_NO_HZ_FULL, with the boot line."""
    env, _ = machine
    # the writer says it runs with a file: its comm is no sign where python3 is a
    # launcher script (pyenv's shim is bash, named python3, that starts helpers
    # pinned with it before it runs python: the first dump saw them, the last not)
    setup = ("echo 1 > /proc/sys/vm/stat_interval\n"
             "taskset -c 1 python3 -c 'import time\nopen(\"%s/writing\", \"w\").close()\n"
             "while True:\n"
             " open(\"%s/dirty\", \"wb\").write(b\"x\" * (8 << 20))\n"
             " time.sleep(0.1)' &\n"
             "while [ ! -e %s/writing ]; do sleep 0.02; done" % (tmp_path, tmp_path, tmp_path))
    advice, proof, _ = scenario(tmp_path, env, setup, "", prove_s=1, until='"rule": "vmstat"',
                                text=True, tries=5)
    vm = remedy(advice, "vmstat")
    assert vm and vm["applicable"], advice["remedies"]
    assert vm["changes"] == [{"section": "sysctl", "option": "vm.stat_interval", "value": "10",
                              "comment": vm["changes"][0]["comment"]}]
    assert all(c["name"].startswith("kworker/1:") for c in vm["causes"])
    assert row(proof, "vmstat")["outcome"] in ("gone", "reduced", "within noise")
    tick = remedy(advice, "tick")
    assert tick and not tick["applicable"] and tick["boot"] == ["nohz_full=1", "rcu_nocbs=1"]
    if not os.path.exists("/sys/devices/system/cpu/nohz_full"):
        assert "CONFIG_NO_HZ_FULL" in tick["why_not"]
        text = (tmp_path / "advice.txt").read_text()
        assert "boot line: nohz_full=1 rcu_nocbs=1" in text


@pytest.mark.measures
def test_busy_loop_on_the_cpu_is_moved_off(machine, tmp_path):  # noqa: F811
    """A SCHED_OTHER busy loop pinned to the measured CPU: the top remedy moves
    tasks off it (a group rule for the pinned loop); proven: its time is gone."""
    env, _ = machine
    advice, proof, _ = scenario(tmp_path, env, "taskset -c 1 bash -c 'while :; do :; done' &",
                                "", prove_s=1, run_s=1)
    top = advice["remedies"][0]
    assert top["rule"] == "tasks" and top["applicable"], advice["remedies"]
    assert any(c["name"] == "bash" for c in top["causes"])
    groups = [c for c in top["changes"] if c["option"].startswith("group.")]
    assert groups and groups[0]["value"].endswith(r":^bash\ \-c\ while\ :;\ do\ :;\ done$")
    assert top["share"] > 0.3           # the loop had half the CPU
    conf = (tmp_path / "p" / "profile" / "jtr-advised" / "tuned.conf").read_text()
    # jtr-baseline written out, not included: the file loads on its own in tuned
    assert "include=" not in conf and "# on top of jtr-baseline" in conf
    assert "\nisolated_cores=1\n" in conf
    if os.path.isdir(TUNED_PY):
        _tuned_load("jtr-advised", folder=str(tmp_path / "p" / "profile"))
    # tasks outside this pid namespace (the rest of the machine) cannot be moved from
    # in here and may still come: the loop's time is what must go
    r = row(proof, "tasks")
    assert r["outcome"] in ("gone", "reduced") and r["ci"][0] > 0, r
    assert r["after_per_s_ns"] < 0.5 * r["before_per_s_ns"], r
    # the tuned run's preemptions by the loop are gone (by its pid: another bash of
    # this busy machine, outside the namespace, may still come)
    def bash_pids(res, least_ns=0):
        return {t["pid"] for c in res["attribution"]["causes"] if c["name"] == "bash"
                for t in c.get("tasks") or [c] if t.get("total_ns", 0) >= least_ns}
    loop = bash_pids(load(tmp_path / "r"), 0.2e9)       # half the CPU of a 1 s run
    assert loop
    b = load(tmp_path / "p" / "ab" / "b-1")
    assert not loop & bash_pids(b), b["attribution"]["causes"]


@pytest.mark.measures
def test_prove_through_the_running_daemon(machine, tuned_daemon, tmp_path):  # noqa: F811
    """Where the tuned daemon runs, --prove's profile is applied by the daemon, as
    jtr tune apply's is (it was applied by jtr's own applier beside the daemon):
    installed in tuned's folder for the tuned runs and removed after; the loop's
    time still goes; the machine as before."""
    env, _ = machine
    advice, proof, _ = scenario(tmp_path, env, "taskset -c 1 bash -c 'while :; do :; done' &",
                                "", prove_s=1, run_s=1)
    assert "jtr-advised through the tuned daemon" in (tmp_path / "prove.txt").read_text()
    assert json.loads((tmp_path / "p" / "ab" / "ab.json").read_text())["via_tuned"] is True
    assert load(tmp_path / "p" / "ab" / "b-1")["host"]["tuning_profile"].endswith(
        "/jtr-advised")
    assert row(proof, "tasks")["outcome"] in ("gone", "reduced"), proof
    assert not glob.glob("/etc/tuned/jtr-*") and not glob.glob("/etc/tuned/profiles/jtr-*")


@pytest.mark.measures
def test_prove_an_application_result(machine, tmp_path):  # noqa: F811
    """jtr advise --prove on a jtr run app result: the program started anew for
    each of jtr ab's runs, with the settings the result keeps; the busy loop that
    preempted its calls is moved away by the remedy; the machine as before."""
    need_tracing()
    env, _ = machine
    target = os.path.join(ROOT, "build", "tests", "jtr-app-target")
    p = in_namespace("""
taskset -c 1 bash -c 'while :; do :; done' &
$JTR tune show --json > $OUT/before.json
$JTR run app -c 1 --func %s:on_tick --threshold 150us -o $OUT/r -- %s -c 1 -d 1 -i 0 -w 20 \
  > $OUT/run.txt 2>&1; echo run=$?
$JTR advise --prove -o $OUT/p $OUT/r > $OUT/prove.txt 2>&1; echo prove=$?
$JTR tune show --json > $OUT/after.json
""" % (target, target), env, tmp_path, timeout=300)
    assert "run=0" in p.stdout, (tmp_path / "run.txt").read_text()
    assert "prove=0" in p.stdout, (tmp_path / "prove.txt").read_text()
    res = load(tmp_path / "r")
    assert res["app"]["cmd"][0] == target and res["command"][:3] == ["jtr", "run", "app"]
    ab = json.loads((tmp_path / "p" / "ab" / "ab.json").read_text())
    assert ab["probe"] == "app" and not ab["partial"]
    for run in ab["order"]:
        r = load(tmp_path / "p" / "ab" / run)
        assert r["tool"] == "app" and r["runs"][0]["calls"] > 1000
    proof = json.loads((tmp_path / "p" / "prove.json").read_text())
    assert row(proof, "tasks")["outcome"] in ("gone", "reduced"), proof
    before, after = dumps(tmp_path, "before.json", "after.json")
    assert after == before


# RT throttling every 100 ms, 95 % of it to real-time tasks (the default's share):
# a FIFO busy loop loses about 5 ms every 100 ms, the default's 50 ms a second
RT_PERIOD_US, RT_RUNTIME_US = 100_000, 95_000


@pytest.mark.measures
def test_rt_throttling_of_a_fifo_probe(machine, tmp_path):  # noqa: F811
    """A SCHED_FIFO gap probe with RT throttling on: its gaps, once a period, are
    charged to RT throttling by the attribution (a FIFO task losing its CPU to idle
    or a normal task); sched_rt_runtime_us=-1, proven. On kernels with the fair
    server (6.12 and later) a few pieces of tens of us remain after it, named
    the fair server: the throttled ones are gone (on a busy machine, where other
    programs' tasks wait on the CPU, the fair server runs them as long as the
    throttling did: gone by name, no reduction). The period is 100 ms here, 95 %
    of it to real-time tasks as by default (RT_PERIOD_US): a 1 s run holds ten
    pieces of about 6 ms, where the default's 1 s period gave one or two 50 ms
    pieces in a 2 s run and the proof took 6 s a side to hold enough of them (a
    bootstrap that draws none of the pieces in more than 2.5 % of its resamples
    cannot call the change a reduction); the proof runs 1 s a side here, ten
    pieces in each."""
    env, _ = machine
    if not os.path.exists(RT_SYSCTL % "runtime"):
        pytest.skip("no RT throttling on this kernel (no sched_rt_runtime_us)")
    with open(RT_SYSCTL % "runtime") as f:
        if f.read().strip() == "-1":
            pytest.skip("RT throttling is off on this machine (sched_rt_runtime_us=-1)")
    periods = 10        # in the 1 s run, and in each 1 s run of the proof
    with rt_period(RT_PERIOD_US, RT_RUNTIME_US):
        advice, proof, _ = scenario(tmp_path, env, "", "-f 10", prove_s=1, run_s=1)
    top = advice["remedies"][0]
    # half the periods at least (one of two 1 s periods, before): a period in which
    # the host took 5 % of the CPU or more is not throttled (the kernel counts the
    # probe's run time without the time stolen from it)
    assert top["rule"] == "rt_throttling" and advice["throttled_outliers"] >= periods // 2
    assert top["changes"][0]["option"] == "kernel.sched_rt_runtime_us"
    assert top["changes"][0]["value"] == "-1" and top["notes"]     # the starvation warning
    r = row(proof, "rt_throttling")
    assert r["before_count"] >= periods // 2, r
    # the setting's throttling is gone from every after run: what stays is the
    # fair server's (Linux 6.12 and later: normal tasks waiting on the CPU get
    # their 50 ms a second whatever the setting says), tens of us here
    ab = tmp_path / "p" / "ab"
    after = [n for n in sorted(os.listdir(ab)) if n.startswith("b-")]
    assert after
    for name in after:
        left = [c for c in load(ab / name)["attribution"]["causes"]
                if c["category"] == "RT throttling"]
        assert all(c["name"] == FAIR_SERVER for c in left), (name, left)
    if r["after_per_s_ns"] < 0.1 * r["before_per_s_ns"]:
        assert r["outcome"] in ("gone", "reduced"), r
    else:
        # on a busy machine other programs' tasks wait on the measured CPU (the
        # other one is taken): the fair server runs them, and nothing is saved
        print("the fair server ran normal tasks %.1f ms/s after (the setting's throttling "
              "%.1f ms/s before): a busy machine, no reduction to prove"
              % (r["after_per_s_ns"] / 1e6, r["before_per_s_ns"] / 1e6))
    text = (tmp_path / "prove.txt").read_text()
    assert "rt_throttling" in text and r["outcome"] in text


def test_only_the_host_gets_host_advice(tmp_path):
    """A result whose outliers no kernel event explains: no guest remedy, the
    host's advice, and nothing to prove (exit 2, the reason)."""
    src = tmp_path / "r"
    p = run_jtr("gap", "-c", "0", "-d", "0.3", "-o", str(src))
    assert p.returncode == 0, p.stderr
    doc = load(src)
    lost = doc["runs"][0]["outliers"]["total_ns"]
    doc["attribution"] = {"causes": [
        {"category": "no kernel event", "name": "VM exits, SMI or hardware", "count": 9,
         "primary_count": 9, "total_ns": lost - lost // 4, "share": 0.75},
        {"category": "no kernel event", "name": "host preemption (steal)", "count": 3,
         "primary_count": 3, "total_ns": lost // 4, "share": 0.25}], "outliers": {}}
    (src / "result.json").write_text(json.dumps(doc))
    p = run_jtr("advise", "--json", str(src))
    assert p.returncode == 0, p.stderr
    a = json.loads(p.stdout)
    assert [r["rule"] for r in a["remedies"]] == ["host"] and a["profile"] is None
    assert not a["remedies"][0]["applicable"] and a["remedies"][0]["saving_ns"] == lost
    p = run_jtr("advise", str(src))
    assert "no remedy this machine can apply" in p.stdout
    assert "out of the guest's reach" in p.stdout and "dedicated vCPUs" in p.stdout
    if os.geteuid() == 0:
        p = run_jtr("advise", "--prove", "-o", str(tmp_path / "p"), str(src))
        assert p.returncode == 2 and "nothing to prove" in p.stderr, p.stderr


@pytest.mark.parametrize("args,msg", [
    ([], "give one results folder"),
    (["--repeat", "2", "R"], "--repeat goes with --prove"),
    (["/nonexistent"], "/nonexistent"),
])
def test_bad_input(tmp_path, args, msg):
    p = run_jtr("advise", *[str(tmp_path) if a == "R" else a for a in args])
    assert p.returncode == 2 and msg in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_no_attribution_is_refused(tmp_path):
    src = tmp_path / "r"
    assert run_jtr("gap", "-c", "0", "-d", "0.2", "-o", str(src)).returncode == 0
    p = run_jtr("advise", str(src))
    assert p.returncode == 2 and "has no attribution" in p.stderr, p.stderr
    shutil.rmtree(src)


def test_advise_as_another_user(nobody_folder):
    """jtr advise reads a result as any user: only --prove needs root. As the user
    nobody, /dev/cpu_dma_latency cannot be read; advise says so where it matters
    and answers (it ended in a traceback: KnobError, permission denied)."""
    top, nobody = nobody_folder
    src = os.path.join(top, "r")
    p = run_jtr("run", "-c", "1", "-d", "0.3", "-q", "-o", src)
    assert p.returncode == 0, p.stderr
    subprocess.run(["chmod", "-R", "a+rX", top], check=True)
    for extra in ([], ["--json"]):
        q = run_as(nobody, JTR, "advise", src, *extra)
        assert q.returncode == 0 and "Traceback" not in q.stderr, q.stderr
        assert src in q.stdout
    doc = json.loads(q.stdout)
    why = [r.get("why_not") for r in doc["remedies"] if r["rule"] == "cstate"]
    assert all(w is None or "as root, jtr advise reads it" in w for w in why), why
    q = run_as(nobody, JTR, "advise", "--prove", src)
    assert q.returncode == 2 and "root" in q.stderr and "Traceback" not in q.stderr, q.stderr
