# SPDX-License-Identifier: GPL-2.0-only
"""jtr tune: apply -> verify -> revert round trips on this machine, a killed apply,
dry runs, drift, bad input, the grub drop-in, auto-revert, and the profiles read
by tuned's own parser.

Every test that changes the machine runs the tune commands inside its own pid
namespace (unshare --pid --fork --mount-proc), so the tasks it moves are its own;
the `machine` fixture restores every machine-wide value it saw before the test,
also when the test fails.
"""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest
from conftest import JTR, ROOT, free_port, load, make_in_tree, need_tracing, run_jtr
from tune_driver import dma_holders, read_dma

sys.path.insert(0, os.path.join(ROOT, "analysis"))
from jtrpy.system.cpus import online_cpus  # noqa: E402
from jtrpy.system.procs import proc_stat  # noqa: E402
from jtrpy.tune import inventory  # noqa: E402
from jtrpy.tune import knobs as K  # noqa: E402

pytestmark = [pytest.mark.machine, pytest.mark.root]

PROFILES = ["jtr-baseline", "jtr-latency", "jtr-isolate", "jtr-realtime"]
TUNED_PY = "/usr/lib/python3/dist-packages/tuned"


def need_root():
    if os.geteuid() != 0:
        pytest.skip("jtr tune changes kernel settings: needs root; this run is not root")


def without_the_lane(dump):
    """@dump less the cpuset of make test's lane beside the measuring tests
    (scripts/beside.sh, jtr-beside.PID): it is there from the measuring phase's
    start until the lane ends, which may be between two dumps of a test."""
    if "cpusets" in dump:
        dump = dict(dump, cpusets=[c for c in dump["cpusets"]
                                   if not c.startswith("jtr-beside.")])
    return dump


def global_dump(env):
    """The machine-wide part of `jtr tune show --json`'s dump (no tasks), read in
    this process (inventory.dump, what the command prints) with @env's folders."""
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        return without_the_lane({k: v for k, v in inventory.dump().items()
                                 if not k.startswith("task:")})
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _force_restore(before, env):
    """Put back by hand anything a failed test left (the fixture's safety net)."""
    run_jtr("tune", "revert", env=env)
    for k, v in before.items():
        if k.startswith("file:"):
            try:
                if K.read_file(k[5:]) != v:
                    K.write_file(k[5:], v)
            except K.KnobError:
                pass
        elif k.startswith("irq:"):
            try:
                K.write_file("/proc/irq/%s/smp_affinity_list" % k[4:], v)
            except K.KnobError:
                pass
        elif k == "default_irq":
            K.write_file("/proc/irq/default_smp_affinity", v)
    ver, root = K.cpuset_root()
    if ver and os.path.isdir(os.path.join(root, "jtr-isolated")):
        K.remove_cpuset({"name": "jtr-isolated"})
    os.environ["JTR_STATE_DIR"] = env["JTR_STATE_DIR"]
    try:
        K.stop_dma_holder()
    finally:
        del os.environ["JTR_STATE_DIR"]
    for pid in dma_holders():             # holders no snapshot recorded
        os.kill(pid, signal.SIGKILL)


@pytest.fixture
def machine(tmp_path):
    """(env, dump before): a private state folder; everything restored afterwards."""
    need_root()
    env = {"JTR_STATE_DIR": str(tmp_path / "state"), "JTR_GRUB_DIR": str(tmp_path / "grub")}
    before = global_dump(env)
    yield env, before
    after = global_dump(env)
    if after != before:
        _force_restore(before, env)


def in_namespace(script, env, tmp_path, timeout=120):
    """Run a bash @script in its own pid namespace with `jtr` on PATH as $JTR and
    a few tasks of its own to move; returns CompletedProcess."""
    # the tasks are all there (threads started) before the script's first dump
    full = ("set -u\nJTR=%s\nOUT=%s\nsleep 300 & SLEEPER=$!\n"
            "python3 -c 'import threading,time; [threading.Thread(target=time.sleep, "
            "args=(300,), daemon=True).start() for _ in range(3)]; "
            "open(\"%s/.tasks-ready\", \"w\").close(); time.sleep(300)' &\n"
            "while [ ! -e $OUT/.tasks-ready ] || [ \"$(cat /proc/$SLEEPER/comm)\" != sleep ]; "
            "do sleep 0.02; done\n%s\n"
            % (JTR, tmp_path, tmp_path, script))
    e = dict(os.environ, **env)
    return subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "bash", "-c", full],
                          env=e, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=timeout)


def dumps(tmp_path, *names):
    out = []
    for n in names:
        with open(tmp_path / n) as f:
            out.append(without_the_lane(json.load(f)["dump"]))
    return out


@pytest.mark.parametrize("profile", PROFILES)
def test_round_trip_restores_every_knob(machine, tmp_path, profile):
    env, _ = machine
    cpus = "--cpus 1" if profile in ("jtr-isolate", "jtr-realtime") else ""
    p = in_namespace("""
$JTR tune show --json > $OUT/before.json
$JTR tune apply %s %s > $OUT/apply.txt 2>&1; echo apply=$?
$JTR tune show --json > $OUT/mid.json
$JTR tune verify > $OUT/verify.txt; echo verify=$?
$JTR tune revert > $OUT/revert.txt 2>&1; echo revert=$?
$JTR tune show --json > $OUT/after.json
$JTR tune revert > $OUT/revert2.txt; echo revert2=$?
""" % (profile, cpus), env, tmp_path)
    assert "apply=0" in p.stdout, (tmp_path / "apply.txt").read_text()
    assert "verify=0" in p.stdout, (tmp_path / "verify.txt").read_text()
    assert "revert=0" in p.stdout and "revert2=0" in p.stdout, p.stdout
    before, mid, after = dumps(tmp_path, "before.json", "mid.json", "after.json")
    assert after == before, {k: (before.get(k), after.get(k)) for k in set(before) | set(after)
                             if before.get(k) != after.get(k)}
    changed = {k for k in before if before[k] != mid.get(k)}
    if profile == "jtr-baseline":
        assert changed == {"active_profile"}
        return
    assert "file:/proc/sys/vm/stat_interval" in changed and mid["dma_latency"] == 1
    assert mid["file:/sys/kernel/mm/transparent_hugepage/enabled"] == "never"
    if cpus:
        moved = [k for k in changed if k.startswith("task:")]
        assert len(moved) >= 4, changed      # bash, sleep, python3 and its threads
        assert all(mid[k] == "0" for k in moved)
        assert mid["default_irq"].lstrip("0") == "1"
        assert "jtr-isolated" in mid.get("cpusets", ["jtr-isolated"])
        assert mid["file:/sys/devices/virtual/workqueue/writeback/cpumask"].lstrip("0") == "1"
    if profile == "jtr-realtime":
        assert mid["file:/proc/sys/kernel/sched_rt_runtime_us"] == "-1"
        assert "RT throttling is off" in (tmp_path / "apply.txt").read_text()


def test_writeback_cpumask_aliases_are_one_entry(machine, tmp_path):
    env, _ = machine
    p = run_jtr("tune", "apply", "jtr-isolate", "--cpus", "1", "--dry-run", env=env, check=True)
    assert p.stdout.count("/sys/devices/virtual/workqueue/writeback/cpumask") == 1
    assert "/sys/bus/workqueue" not in p.stdout


def test_sigkill_mid_apply_then_revert(machine, tmp_path):
    env, _ = machine
    state = os.path.join(env["JTR_STATE_DIR"], "tune-state.json")
    p = in_namespace("""
$JTR tune show --json > $OUT/before.json
JTR_TUNE_STEP_DELAY=0.15 $JTR tune apply jtr-realtime --cpus 1 > $OUT/apply.txt 2>&1 &
APPLY=$!
for i in $(seq 100); do sleep 0.1; grep -q '"applying"' %s 2>/dev/null && break; done
sleep 1.2
$JTR tune show --json > $OUT/mid.json
kill -9 $APPLY; wait $APPLY; echo killed=$?
grep -o '"status": "[a-z]*"' %s
$JTR tune revert > $OUT/revert.txt 2>&1; echo revert=$?
$JTR tune show --json > $OUT/after.json
""" % (state, state), env, tmp_path)
    assert "killed=137" in p.stdout and '"status": "applying"' in p.stdout, p.stdout + p.stderr
    assert "revert=0" in p.stdout, (tmp_path / "revert.txt").read_text()
    assert "did not finish" in (tmp_path / "revert.txt").read_text()
    before, mid, after = dumps(tmp_path, "before.json", "mid.json", "after.json")
    assert any(before[k] != mid.get(k) for k in before), "the kill came before any change"
    assert after == before


def test_dry_run_changes_nothing(machine, tmp_path):
    env, before = machine
    p = run_jtr("tune", "apply", "jtr-realtime", "--cpus", "1", "--dry-run", env=env)
    assert p.returncode == 0 and "dry run: nothing was changed" in p.stdout
    assert "cpu_dma_latency" in p.stdout and "not applied here:" in p.stdout
    assert not os.path.exists(os.path.join(env["JTR_STATE_DIR"], "tune-state.json"))
    assert global_dump(env) == before


def test_verify_detects_a_hand_change(machine, tmp_path):
    env, before = machine
    run_jtr("tune", "apply", "jtr-latency", env=env, check=True)
    try:
        assert run_jtr("tune", "verify", env=env).returncode == 0
        K.write_file("/proc/sys/vm/swappiness", "33")
        p = run_jtr("tune", "verify", env=env)
        assert p.returncode == 1 and "vm.swappiness: want 10, now 33" in p.stdout
    finally:
        r = run_jtr("tune", "revert", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert global_dump(env) == before       # back to the value before the apply, not 33


def test_revert_says_what_it_could_not_restore(machine, tmp_path):
    env, before = machine
    run_jtr("tune", "apply", "jtr-latency", env=env, check=True)
    st_path = os.path.join(env["JTR_STATE_DIR"], "tune-state.json")
    with open(st_path) as f:
        st = json.load(f)
    st["entries"].append({"type": "file", "key": "file:/proc/sys/kernel/osrelease",
                          "label": "kernel.osrelease", "path": "/proc/sys/kernel/osrelease",
                          "how": "text", "before": "1.0", "target": "1.0",
                          "result": "changed"})       # one the apply reached
    with open(st_path, "w") as f:
        json.dump(st, f)
    p = run_jtr("tune", "revert", env=env)
    assert p.returncode == 1
    assert "not restored: kernel.osrelease" in p.stdout
    assert global_dump(env) == before       # everything else was restored


@pytest.mark.parametrize("args,msg", [
    (["apply", "no-such-profile"], "unknown profile 'no-such-profile'"),
    (["apply", "jtr-isolate", "--cpus", "1-x"], "--cpus 1-x: '1-x' is not a CPU list"),
    (["apply", "jtr-isolate", "--cpus", "64"], "--cpus 64: CPU 64 is not online"),
    (["apply", "jtr-isolate", "--cpus", "0-1"], "would isolate every CPU"),
    (["apply", "jtr-isolate"], "say which with --cpus LIST"),
    (["apply", "jtr-latency", "--auto-revert", "0"],
     "--auto-revert 0: '0' is out of range; expected 5s to 24h"),
    (["apply"], "give one profile"),
    (["revert"], "no snapshot at"),
    (["verify"], "no profile is applied"),
    (["frobnicate"], "unknown 'jtr tune frobnicate'"),
    (["apply", "jtr-latency", "--bogus"], "unknown option '--bogus'"),
])
def test_bad_input(machine, args, msg):
    env, before = machine
    p = run_jtr("tune", *args, env=env)
    assert p.returncode == 2 and msg in p.stderr, p.stderr
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr
    assert global_dump(env) == before


def test_isolating_own_cpus_is_refused(machine):
    env, before = machine
    p = subprocess.run(["taskset", "-c", "1", JTR, "tune", "apply", "jtr-isolate", "--cpus", "1",
                        "--dry-run"], env=dict(os.environ, **env), text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.returncode == 2 and "the CPU jtr runs on" in p.stderr


def test_corrupt_snapshot_changes_nothing(machine):
    env, before = machine
    os.makedirs(env["JTR_STATE_DIR"])
    st_path = os.path.join(env["JTR_STATE_DIR"], "tune-state.json")
    for junk in ('{"format": "jtr-tune-state/1", "entr', '{"format": "other"}', "[]"):
        with open(st_path, "w") as f:
            f.write(junk)
        for cmd in (["revert"], ["apply", "jtr-latency"], ["verify"]):
            p = run_jtr("tune", *cmd, env=env)
            assert p.returncode == 2 and "corrupt snapshot" in p.stderr, (cmd, p.stderr)
        assert open(st_path).read() == junk
    assert global_dump(env) == before


def test_apply_twice_is_refused(machine):
    env, before = machine
    run_jtr("tune", "apply", "jtr-latency", env=env, check=True)
    try:
        p = run_jtr("tune", "apply", "jtr-latency", env=env)
        assert p.returncode == 2 and "is applied (since" in p.stderr
    finally:
        run_jtr("tune", "revert", env=env, check=True)
    assert global_dump(env) == before


def test_not_root_is_refused(machine):
    env, before = machine
    p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", JTR,
                        "tune", "apply", "jtr-latency"], env=dict(os.environ, **env),
                       text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.returncode == 2 and "run it as root" in p.stderr


def test_boot_fragment_and_grub_dropin(machine, tmp_path):
    env, before = machine
    p = run_jtr("tune", "apply", "jtr-isolate", "--cpus", "1", "--dry-run", env={})
    assert "isolcpus=domain,managed_irq,1 rcu_nocbs=1 irqaffinity=0 skew_tick=1 nosoftlockup" \
        in p.stdout
    if not os.path.exists("/sys/devices/system/cpu/nohz_full"):
        assert "nohz_full=1: this kernel is built without CONFIG_NO_HZ_FULL" in p.stdout
    if not os.path.exists("/etc/default/grub"):
        p = run_jtr("tune", "apply", "jtr-isolate", "--cpus", "1", "--boot",
                    env={"JTR_STATE_DIR": env["JTR_STATE_DIR"]})
        assert p.returncode == 2 and "does not boot through grub" in p.stderr
    dropin = os.path.join(env["JTR_GRUB_DIR"], "99-jtr.cfg")
    p = in_namespace("$JTR tune apply jtr-isolate --cpus 1 --boot > $OUT/apply.txt; "
                     "cp %s $OUT/dropin.cfg; $JTR tune revert" % dropin, env, tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    text = (tmp_path / "dropin.cfg").read_text()
    assert text.startswith('GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT '
                           'isolcpus=domain,managed_irq,1 ')
    assert ("nohz_full" in text) == os.path.exists("/sys/devices/system/cpu/nohz_full")
    assert not os.path.exists(dropin)


def _status(env):
    with open(os.path.join(env["JTR_STATE_DIR"], "tune-state.json")) as f:
        return json.load(f)["status"]


def _alive(pid):
    """A process that exists and is not a zombie."""
    st = proc_stat(pid)
    return st is not None and st.state not in ("Z", "X")


def _tuned_runs():
    """Is a tuned daemon running (a zombie one is not: this machine's init reaps
    the processes it inherits a second or two after they exit, and pgrep lists
    them until then)?"""
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = proc_stat(int(name))
            if st is not None and st.comm == "tuned" and _alive(int(name)):
                return True
    return False


def test_auto_revert_unless_confirmed(machine):
    env, before = machine
    p = run_jtr("tune", "apply", "jtr-latency", "--auto-revert", "5", env=env, check=True)
    assert "auto-revert in 5 s" in p.stdout
    assert global_dump(env) != before
    for _ in range(100):
        time.sleep(0.2)
        if _status(env) == "reverted":
            break
    assert _status(env) == "reverted"
    assert global_dump(env) == before
    # confirmed: it stays. The reverting process is stopped, and the state says
    # confirmed (what that process checks if it wakes anyway)
    run_jtr("tune", "apply", "jtr-latency", "--auto-revert", "5", env=env, check=True)
    with open(os.path.join(env["JTR_STATE_DIR"], "tune-state.json")) as f:
        pid = json.load(f)["auto_revert_pid"]
    assert _alive(pid)
    assert run_jtr("tune", "confirm", env=env).returncode == 0
    for _ in range(50):
        if not _alive(pid):
            break
        time.sleep(0.1)
    assert not _alive(pid), "confirm left the auto-revert process %d running" % pid
    with open(os.path.join(env["JTR_STATE_DIR"], "tune-state.json")) as f:
        st = json.load(f)
    assert st["status"] == "applied" and st["confirmed"] is True
    assert global_dump(env) != before
    run_jtr("tune", "revert", env=env, check=True)
    assert global_dump(env) == before


def _pidfile_pid(path):
    try:
        with open(path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _bus_answers():
    return subprocess.run(["dbus-send", "--system", "--print-reply", "--dest=org.freedesktop.DBus",
                           "/org/freedesktop/DBus", "org.freedesktop.DBus.GetId"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


@pytest.fixture
def tuned_daemon():
    """The tuned daemon running with no profile active; stopped again afterwards
    (and the system bus too) if this fixture started them."""
    need_tuned()
    if not shutil.which("dbus-daemon"):
        pytest.skip("dbus-daemon is not installed: tuned's daemon needs the system bus")
    started, saved = [], {}
    try:
        if not _tuned_runs():
            for name, value in (("active_profile", ""), ("profile_mode", "manual")):
                path = "/etc/tuned/" + name
                saved[path] = open(path).read() if os.path.exists(path) else None
                with open(path, "w") as f:
                    f.write(value + "\n")
            if not _bus_answers():
                for stale in ("/run/dbus/system_bus_socket", "/run/dbus/pid"):
                    if os.path.exists(stale):
                        os.unlink(stale)
                os.makedirs("/run/dbus", exist_ok=True)
                subprocess.run(["dbus-daemon", "--system", "--fork"], check=True)
                started.append("/run/dbus/pid")
            subprocess.run(["tuned", "--daemon"], check=True)
            started.append("/run/tuned/tuned.pid")
            for _ in range(100):
                if subprocess.run(["tuned-adm", "active"], stdout=subprocess.PIPE, text=True,
                                  stderr=subprocess.STDOUT).stdout.startswith("No current"):
                    break
                time.sleep(0.2)
        yield
    finally:
        for pidfile in reversed(started):
            pid = _pidfile_pid(pidfile)
            if pid:
                os.kill(pid, signal.SIGTERM)
                # gone once it has exited (a zombie waits for init, 1.5 s here)
                for _ in range(200):
                    if not _alive(pid):
                        break
                    time.sleep(0.05)
            if pidfile == "/run/dbus/pid":
                for stale in ("/run/dbus/system_bus_socket", "/run/dbus/pid"):
                    if os.path.exists(stale):
                        os.unlink(stale)
        for path, text in saved.items():
            if text is None:
                os.unlink(path)
            else:
                with open(path, "w") as f:
                    f.write(text)


# the tuned daemon is not in the test's pid namespace: its scheduler plugin moves every
# task of the machine off CPU 1 while the profile is applied (a test beside it saw
# its process's affinity as CPU 0 only), so this one runs with nothing beside it
@pytest.mark.measures
def test_the_running_daemon_applies_by_default(machine, tuned_daemon, tmp_path):
    env, _ = machine
    p = in_namespace("""
$JTR tune show --json > $OUT/before.json
$JTR tune apply jtr-realtime --cpus 1 > $OUT/apply.txt 2>&1; echo apply=$?
tuned-adm active > $OUT/active.txt
$JTR tune show --json > $OUT/mid.json
$JTR tune revert > $OUT/revert.txt 2>&1; echo revert=$?
$JTR tune show --json > $OUT/after.json
""", env, tmp_path, timeout=180)
    assert "apply=0" in p.stdout, (tmp_path / "apply.txt").read_text()
    assert "revert=0" in p.stdout, (tmp_path / "revert.txt").read_text()
    text = (tmp_path / "apply.txt").read_text()     # the daemon runs: through it by default
    assert "the tuned daemon runs: tuned applies jtr-realtime" in text
    assert "applied jtr-realtime by tuned: " in text and "by tuned, " in text
    assert "Current active profile: jtr-realtime" in (tmp_path / "active.txt").read_text()
    before, mid, after = dumps(tmp_path, "before.json", "mid.json", "after.json")
    assert mid["file:/proc/sys/kernel/sched_rt_runtime_us"] == "-1"      # tuned set it
    assert mid["file:/sys/devices/virtual/workqueue/writeback/cpumask"].lstrip("0") == "1"
    assert "jtr-isolated" in mid["cpusets"]                              # jtr's own section
    assert after == before
    assert not glob.glob("/etc/tuned/jtr-*")


@pytest.mark.measures
def test_ab_applies_through_the_running_daemon(machine, tuned_daemon, tmp_path):
    """jtr ab where the tuned daemon runs: the daemon applies the profile, as jtr
    tune apply does (jtr ab applied with its own applier beside it, two appliers
    on the same knobs); reverted after, the machine as before, nothing left in
    /etc/tuned. (--no-tuned, jtr's own applier: analysis/tests/drivers/test_ab.py.)"""
    env, _ = machine
    out = tmp_path / "ab"
    p = in_namespace("""
$JTR tune show --json > $OUT/before.json
$JTR ab jtr-latency -d 0.3 --no-trace -o %s > $OUT/ab.txt 2>&1; echo ab=$?
$JTR tune show --json > $OUT/after.json
""" % out, env, tmp_path, timeout=180)
    text = (tmp_path / "ab.txt").read_text()
    assert "ab=0" in p.stdout, text
    assert "applied jtr-latency through the tuned daemon" in text
    assert json.loads((out / "ab.json").read_text())["via_tuned"] is True
    b = json.loads((out / "b-1" / "result.json").read_text())
    assert b["host"]["tuning_profile"] == "jtr-latency"
    before, after = dumps(tmp_path, "before.json", "after.json")
    assert after == before
    assert not glob.glob("/etc/tuned/jtr-*") and not glob.glob("/etc/tuned/profiles/jtr-*")


def test_via_tuned_needs_the_daemon(machine):
    env, before = machine
    if _tuned_runs():
        pytest.skip("the tuned daemon runs here: --via-tuned is exercised for real elsewhere")
    p = run_jtr("tune", "apply", "jtr-latency", "--via-tuned", env=env)
    assert p.returncode == 2 and "--via-tuned:" in p.stderr
    assert "without --via-tuned jtr applies the profile itself" in p.stderr
    assert global_dump(env) == before


def test_show_lists_every_knob_with_support():
    p = run_jtr("tune", "show", check=True)
    for label in ("cpu_dma_latency", "THP enabled", "kernel.timer_migration", "IRQ affinity",
                  "task affinity", "cpuset partition", "isolcpus", "nohz_full",
                  "kernel.sched_rt_runtime_us", "/sys/devices/virtual/workqueue/cpumask"):
        assert label in p.stdout, label
    lines = {ln.split()[0]: ln for ln in p.stdout.splitlines() if ln.strip()}
    nohz = lines["nohz_full"]
    assert ("no [" in nohz) == (not os.path.exists("/sys/devices/system/cpu/nohz_full"))
    assert " boot " in lines["isolcpus"] and " runtime " in lines["vm.swappiness"]
    with open("/proc/sys/vm/swappiness") as f:
        assert lines["vm.swappiness"].split()[1] == f.read().strip()


# ---------------------------------------------------------------- tuned's parser

PROFILE_DIR = os.path.join(ROOT, "tuning-profiles")


def _tuned_load(names, variables="", folder=PROFILE_DIR):
    """Load profiles with tuned's own Loader (system Python); their merged units."""
    code = r"""
import json, sys
sys.path.insert(0, "/usr/lib/python3/dist-packages")
import tuned.profiles as P
from tuned.profiles.locator import Locator
from tuned.profiles.variables import Variables
from tuned.utils.global_config import GlobalConfig
v = Variables()
for kv in filter(None, sys.argv[3].split(";")):
    v.add_variable(*kv.split("=", 1))
loader = P.Loader(Locator([sys.argv[1], "/usr/lib/tuned"]), P.Factory(), P.Merger(),
                  GlobalConfig(), v)
prof = loader.load(sys.argv[2].split())
print(json.dumps({n: {"type": u.type, "enabled": u.enabled, "options": dict(u.options)}
                  for n, u in prof.units.items()}))
"""
    p = subprocess.run(["/usr/bin/python3", "-c", code, folder, names, variables], text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def need_tuned():
    if not os.path.isdir(TUNED_PY):
        pytest.skip("tuned is not installed (%s missing): apt-get install tuned" % TUNED_PY)


@pytest.mark.parametrize("profile", PROFILES)
def test_profiles_parse_with_tuneds_parser(profile):
    need_tuned()
    units = _tuned_load(profile)
    sys.path.insert(0, os.path.join(ROOT, "analysis"))
    from jtrpy.tune.profile import Profile
    mine = Profile(profile, expand=False)
    assert set(units) == set(mine.units)
    for sec, u in units.items():
        for k, v in u["options"].items():
            if k in mine.units[sec]:
                assert mine.units[sec][k] == v, (sec, k)
    if profile == "jtr-realtime":        # the include chain reached jtr-latency
        assert units["sysctl"]["options"]["kernel.timer_migration"] == "0"
        assert units["sysctl"]["options"]["kernel.sched_rt_runtime_us"] == "-1"
        assert units["jtr_cpuset"]["enabled"] is False     # tuned skips jtr's own section


def test_include_of_a_stock_tuned_profile_resolves(tmp_path):
    need_tuned()
    d = tmp_path / "my-latency"
    d.mkdir()
    (d / "tuned.conf").write_text("[main]\nsummary=mine\ninclude=latency-performance\n\n"
                                  "[sysctl]\n# why: a test\nvm.swappiness=5\n")
    stock = _tuned_load("my-latency", folder=str(tmp_path))       # tuned's own view
    assert stock["sysctl"]["options"]["vm.swappiness"] == "5"
    assert stock["sysctl"]["options"]["vm.dirty_ratio"] == "10"
    env = {"JTR_PROFILE_DIRS": "%s:%s:/usr/lib/tuned" % (tmp_path,
                                                         os.path.join(ROOT, "tuning-profiles"))}
    p = run_jtr("tune", "apply", "my-latency", "--dry-run", env=env)
    assert p.returncode == 0, p.stderr
    assert "vm.swappiness" in p.stdout and "-> 5" in p.stdout       # ours overrides stock 10
    assert "vm.dirty_ratio" in p.stdout                              # from latency-performance
    assert "[cpu] energy_perf_bias: not implemented by jtr's applier" in p.stdout


def test_profiles_have_a_comment_on_every_value():
    for conf in glob.glob(os.path.join(ROOT, "tuning-profiles", "jtr-*", "tuned.conf")):
        lines = open(conf).read().splitlines()
        for i, ln in enumerate(lines):
            s = ln.strip()
            if not s or s.startswith(("#", "[")) or s.startswith(("summary=", "include=")):
                continue
            j = i - 1
            while j >= 0 and lines[j].strip() and not lines[j].lstrip().startswith("#") \
                    and not lines[j].lstrip().startswith("["):
                j -= 1
            assert j >= 0 and lines[j].lstrip().startswith("#"), "%s: %s has no comment" % (
                conf, s)


# ---------------------------------------------------------------- jtr ab

def test_ab_interleaves_reverts_and_compares(machine, tmp_path):
    env, _ = machine
    out = tmp_path / "ab"
    p = in_namespace("$JTR tune show --json > $OUT/before.json\n"
                     "$JTR ab jtr-latency -d 0.5 --repeat 2 --no-trace -o %s > $OUT/ab.txt 2>&1;"
                     " echo ab=$?\n$JTR tune show --json > $OUT/after.json\n"
                     "$JTR ab jtr-isolate --cpus 1 -d 0.5 --no-trace -o %s-iso > $OUT/iso.txt "
                     "2>&1; echo iso=$?\n$JTR tune show --json > $OUT/after-iso.json"
                     % (out, out), env, tmp_path, timeout=180)
    assert "iso=0" in p.stdout, (tmp_path / "iso.txt").read_text()
    iso = json.loads((tmp_path / "ab-iso" / "b-1" / "result.json").read_text())
    assert iso["runs"][0]["cpu"] == 1 and iso["host"]["tuning_profile"] == "jtr-isolate"
    text = (tmp_path / "ab.txt").read_text()
    assert "ab=0" in p.stdout, text
    rec = json.loads((out / "ab.json").read_text())
    assert rec["order"] == ["a-1", "b-1", "b-2", "a-2"] and rec["partial"] is False
    assert [r["profile"] for r in rec["runs"]] == [None, "jtr-latency", "jtr-latency", None]
    for name in rec["order"]:
        r = json.loads((out / name / "result.json").read_text())
        assert r["host"]["tuning_profile"] == ("jtr-latency" if name[0] == "b" else None)
    c = json.loads((out / "compare.json").read_text())
    assert len(c["a"]["results"]) == 2 and len(c["b"]["results"]) == 2
    assert rec["verdict"] == c["verdict"] and ("verdict: " + c["verdict"]) in text
    before, after, after_iso = dumps(tmp_path, "before.json", "after.json", "after-iso.json")
    assert after == before and after_iso == before


def test_ab_over_ping(machine, tmp_path):
    """jtr ab over `jtr ping` (jtr pong started beside each run): a verdict with CIs on
    rtt_from_intended, the ping results' default quantity, never their three runs
    pooled; everything reverted."""
    env, _ = machine
    out = tmp_path / "ab"
    p = in_namespace("$JTR tune show --json > $OUT/before.json\n"
                     "$JTR ab jtr-latency --no-trace -o %s -- ping -T udp -P 127.0.0.1:%d -1 "
                     "-n 20K -r 10K > $OUT/ab.txt 2>&1; echo ab=$?\n"
                     "$JTR tune show --json > $OUT/after.json"
                     % (out, free_port()), env, tmp_path, timeout=180)
    text = (tmp_path / "ab.txt").read_text()
    assert "ab=0" in p.stdout, text
    rec = json.loads((out / "ab.json").read_text())
    assert rec["probe"] == "ping" and rec["probe_args"][:2] == ["-T", "udp"]
    assert rec["duration"] is None and rec["quantity"] == "rtt_from_intended"
    for name in ("a-1", "b-1"):
        r = json.loads((out / name / "result.json").read_text())
        assert r["tool"] == "ping" and r["transport"]["sent"] == 20000
        assert r["transport"]["peer"] == "ok" and os.path.isdir(out / name / "pong")
        assert r["host"]["tuning_profile"] == ("jtr-latency" if name == "b-1" else None)
        assert "    rtt_from_intended: p99 " in text
    c = json.loads((out / "compare.json").read_text())
    a = json.loads((out / "a-1" / "result.json").read_text())["runs"][0]
    assert c["a"]["quantity"] == c["b"]["quantity"] == "rtt_from_intended"
    assert c["a"]["runs"] == 1 and c["a"]["samples"] == a["samples"] == 20000
    m = {x["name"]: x for x in c["metrics"]}
    assert m["p99"]["a"] == a["percentiles_ns"]["99"] and m["p99"]["ci"][0] <= m["p99"]["ci"][1]
    # a loaded machine can make a 10K/s ping late on most sends: no verdict then
    assert rec["verdict"] == c["verdict"] and ("verdict: " + c["verdict_text"]) in text
    assert c["verdict"] != "invalid" or c["verdict_text"].startswith("no verdict: ")
    assert re.search(r"\(ping, CPU \d, rtt_from_intended: 1 run, [\d.]+ s, 20000 samples\)",
                     text), text
    before, after = dumps(tmp_path, "before.json", "after.json")
    assert after == before


def test_ab_over_an_application_function(machine, tmp_path):
    """jtr ab over jtr run app: the program started anew for each run, every call
    of its function timed, the sides compared on the app quantity; reverted."""
    need_tracing()
    env, _ = machine
    out = tmp_path / "ab"
    target = os.path.join(ROOT, "build", "tests", "jtr-app-target")
    p = in_namespace("$JTR tune show --json > $OUT/before.json\n"
                     "$JTR ab jtr-latency -o %s -- app --func %s:on_tick --threshold 150us "
                     "-- %s -c 1 -d 1 -i 0 -w 20 > $OUT/ab.txt 2>&1; echo ab=$?\n"
                     "$JTR tune show --json > $OUT/after.json" % (out, target, target),
                     env, tmp_path, timeout=180)
    text = (tmp_path / "ab.txt").read_text()
    assert "ab=0" in p.stdout, text
    rec = json.loads((out / "ab.json").read_text())
    assert rec["probe"] == "app" and rec["quantity"] == "app" and rec["partial"] is False
    for name in ("a-1", "b-1"):
        r = json.loads((out / name / "result.json").read_text())
        assert r["tool"] == "app" and r["runs"][0]["calls"] > 1000 and "attribution" in r
        assert r["host"]["tuning_profile"] == ("jtr-latency" if name == "b-1" else None)
    c = json.loads((out / "compare.json").read_text())
    assert c["a"]["quantity"] == c["b"]["quantity"] == "app"
    assert rec["verdict"] == c["verdict"]
    before, after = dumps(tmp_path, "before.json", "after.json")
    assert after == before


@pytest.mark.parametrize("sig", ["INT", "TERM"])
def test_ab_reverts_when_interrupted(machine, tmp_path, sig):
    env, _ = machine
    out = tmp_path / "ab"
    state = os.path.join(env["JTR_STATE_DIR"], "tune-state.json")
    # python restores the default SIGINT that bash gives background jobs as "ignored"
    p = in_namespace("""
$JTR tune show --json > $OUT/before.json
python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL);
os.execv(sys.argv[1], sys.argv[1:])' $JTR ab jtr-latency -d 2 --no-trace -o %s > $OUT/ab.txt 2>&1 &
AB=$!
for i in $(seq 150); do sleep 0.1; grep -q '"applied"' %s 2>/dev/null && break; done
# the tuned run's probe is measuring once its hidden partial folder is there
for i in $(seq 150); do sleep 0.1; ls -d %s/.b-1.partial-* >/dev/null 2>&1 && break; done
sleep 0.2
kill -%s $AB; wait $AB; echo ab=$?
$JTR tune show --json > $OUT/after.json
""" % (out, state, out, sig), env, tmp_path, timeout=120)
    text = (tmp_path / "ab.txt").read_text()
    assert "ab=130" in p.stdout, p.stdout + text
    assert "reverted jtr-latency" in text
    rec = json.loads((out / "ab.json").read_text())
    assert rec["partial"] is True and rec["runs"][-1]["partial"] is True
    before, after = dumps(tmp_path, "before.json", "after.json")
    assert after == before
    with open(state) as f:
        assert json.load(f)["status"] == "reverted"


def test_ab_bad_input(machine):
    env, before = machine
    for args, msg in ((["ab"], "give the profile to test"),
                      (["ab", "nope"], "unknown profile 'nope'"),
                      (["ab", "jtr-latency", "--repeat", "0"], "--repeat 0: '0' is out of range"),
                      (["ab", "jtr-latency", "-d", "soon"], "-d soon: 'soon' is not a duration"),
                      (["ab", "jtr-isolate", "--cpus", "0-1"], "would isolate every CPU")):
        p = run_jtr(*args, env=env)
        assert p.returncode == 2 and msg in p.stderr, (args, p.stderr)
    assert global_dump(env) == before


# ---------------------------------------------------------------- killed, stopped, bad input

DRIVER = os.path.join(ROOT, "tests", "tune_driver.py")


def in_namespace_driver(env, tmp_path, *args, timeout=300):
    """tests/tune_driver.py ARGS in a pid namespace of its own: its JSON report."""
    e = dict(os.environ, JTR=JTR, T_OUT=str(tmp_path), **env)
    e.pop("JTR_PROG", None)
    p = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", sys.executable, DRIVER]
                       + list(args), env=e, text=True, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.splitlines()[-1])


@pytest.mark.slow
def test_sigkill_at_any_moment_of_apply_then_revert_is_exact(machine, tmp_path):
    """SIGKILL of `jtr tune apply jtr-realtime --cpus 1` at swept moments (before
    Python runs, and 0 to 150 ms after the snapshot appears: the holder of
    cpu_dma_latency starting, files, IRQs, tasks, the cpuset), then `jtr tune
    revert`: every knob back, /dev/cpu_dma_latency as before, no holder left, no
    temporary file left."""
    env, _ = machine
    dma_before = read_dma()
    seen = set()
    for r in in_namespace_driver(env, tmp_path, "sweep"):
        where = "kill %d ms after the %s (snapshot status %s): %s" % (
            r["ms"], r["when"], r["status"], r["revert"])
        seen.add(r["status"])
        if r["status"] is None:
            assert r["revert_rc"] == 2 and "no snapshot at" in r["revert"], where
        else:
            assert r["revert_rc"] == 0, where
        assert r["diff"] == {}, (where, r["diff"])
        assert r["dma_after"] == r["dma_before"] == dma_before, where
        assert r["holders"] == [], where
        assert r["tmp"] == [], where
    assert "applying" in seen, "no kill landed inside the apply: %s" % seen
    assert read_dma() == dma_before and dma_holders() == []


AB_STOPS = [
    # (signals, to, phase): second and third signals 5 ms after the one before
    (["TERM", "TERM"], "process", "applying"),
    (["TERM", "TERM"], "process", "tuned"),
    (["TERM", "TERM"], "group", "tuned"),
    (["INT", "INT"], "group", "tuned"),
    (["INT", "INT", "INT"], "process", "end"),
    (["HUP", "TERM"], "process", "baseline"),
]


@pytest.mark.parametrize("sigs,to,phase", AB_STOPS,
                         ids=["-".join(c[0]) + "-" + c[1] + "-" + c[2] for c in AB_STOPS])
def test_ab_stopped_twice_reverts_and_keeps_what_it_measured(machine, tmp_path, sigs, to, phase):
    """A stop signal and a second one 5 ms later (to jtr ab alone, or to its
    process group) while the profile is applied, during a run or at the end:
    the machine is as before, no holder and no temporary file is left, ab.json
    holds what was measured (partial), the exit status is 130 with the last line
    'jtr ab: interrupted; partial results in DIR/', and the next jtr ab runs."""
    env, _ = machine
    # mid-apply, and at the end (the last run's figures out): 20 ms a setting, so
    # the stop comes after 5 settings of the apply or in the last revert, and the
    # later signals while the revert (100 ms or more) is still going on
    case = {"sigs": sigs, "to": to, "phase": phase,
            "env": {"JTR_TUNE_STEP_DELAY": "0.02"} if phase in ("applying", "end") else {}}
    r = in_namespace_driver(env, tmp_path, "ab", json.dumps(case))
    out = tmp_path / "ab"
    why = r["stdout"][-2000:] + r["stderr"][-2000:]
    assert r["reached"], "jtr ab ended before the %s phase: %s" % (phase, why)
    assert r["rc"] == 130, why
    assert "Traceback" not in r["stderr"], why
    assert r["stderr"].splitlines()[-1] == "jtr ab: interrupted; partial results in %s/" % out
    assert r["diff"] == {} and r["holders"] == [] and r["tmp"] == [], (r["diff"], r["tmp"], why)
    assert r["status"] in (None, "reverted"), why
    assert r["ab"] is not None and r["ab"]["interrupted"] is True, why
    assert r["ab"]["partial"] is (phase != "end"), why      # at the end every run was done
    runs = {x["name"]: x for x in r["ab"]["runs"]}
    if phase in ("tuned", "end"):
        assert runs["a-1"]["partial"] is False and runs["a-1"]["result"] is True, runs
        assert "b-1" in runs, runs
    if phase == "end":                  # the first signal came in the last revert
        assert runs["b-1"]["partial"] is False and r["compare"], why
        assert "jtr ab: interrupted; reverting and comparing what was measured" in \
            r["stderr"].splitlines(), why
    if phase == "tuned":                # the probe was measuring: its run is kept
        assert runs["b-1"]["partial"] is True and runs["b-1"]["result"] is True, runs
        assert r["compare"], why
    if to == "process" and phase in ("applying", "end"):
        # jtr ab's own handler took the later signals: acknowledged, cleanup went on
        assert "jtr ab: still " in r["stderr"] and "; wait" in r["stderr"], why
    assert r["next_rc"] == 0, r["next"]


@pytest.mark.parametrize("sigs,to", [(["TERM", "TERM"], "process"), (["INT", "INT"], "group"),
                                     (["HUP", "TERM", "TERM"], "process")])
def test_apply_stopped_is_undone_whatever_follows(machine, tmp_path, sigs, to):
    """A stop signal after the apply changed 5 settings ends it and undoes it; the
    signals after it are acknowledged and the undoing goes on: exit 130, the
    machine as before, the snapshot reverted, no holder, no temporary file."""
    env, _ = machine
    r = in_namespace_driver(env, tmp_path, "tune", json.dumps({"cmd": "apply", "sigs": sigs,
                                                                "to": to}))
    why = r["stdout"][-2000:] + r["stderr"]
    assert r["reached"] and r["rc"] == 130, why
    last = r["stderr"].splitlines()[-1]
    assert last.startswith("jtr tune: interrupted; the apply of jtr-realtime was undone ("), why
    assert r["stderr"].count("jtr tune: stopping: undoing the apply") == 1, why
    assert r["stderr"].count("jtr tune: still undoing the apply; wait") == len(sigs) - 1, why
    assert "Traceback" not in r["stderr"] and r["status"] == "reverted", why
    assert r["diff"] == {} and r["holders"] == [] and r["tmp"] == [], (r["diff"], r["tmp"])


def test_revert_is_not_stopped_by_signals(machine, tmp_path):
    """SIGTERM, SIGINT and SIGHUP in the middle of a revert: each is acknowledged,
    the revert finishes (exit 0) and every setting is back."""
    env, _ = machine
    r = in_namespace_driver(env, tmp_path, "tune", json.dumps({
        "cmd": "revert", "sigs": ["TERM", "INT", "HUP"], "to": "group"}))
    why = r["stdout"] + r["stderr"]
    assert r["reached"] and r["rc"] == 0, why
    assert r["stderr"].count("jtr tune: still reverting; wait") == 3, why
    assert "reverted jtr-realtime: " in r["stdout"] and r["status"] == "reverted", why
    assert r["diff"] == {} and r["holders"] == [] and r["tmp"] == [], (r["diff"], r["tmp"])


def test_ab_compares_a_partial_run(machine, tmp_path):
    """One SIGTERM during the tuned run: the run stops early, is kept (marked
    partial) and compared with the baseline; the output says how many runs each
    side has."""
    env, _ = machine
    r = in_namespace_driver(env, tmp_path, "ab", json.dumps({"sigs": ["TERM"], "to": "process",
                                                              "phase": "tuned"}))
    why = r["stdout"][-3000:] + r["stderr"][-2000:]
    assert r["reached"] and r["rc"] == 130, why
    runs = {x["name"]: x for x in r["ab"]["runs"]}
    assert runs["b-1"]["partial"] is True and runs["b-1"]["result"] is True, runs
    assert r["compare"] and r["ab"]["compare"] == "compare.json", why
    c = json.loads((tmp_path / "ab" / "compare.json").read_text())
    assert len(c["a"]["results"]) == 1 and len(c["b"]["results"]) == 1
    assert "compared: baseline 1 run, tuned 1 run (1 partial)" in r["stdout"], why
    assert "verdict: " in r["stdout"] and r["diff"] == {}, why


BAD_PROFILES = [
    # (the profile's sections, the start of what is wrong)
    ("[jtr_cpuset]\ncpus=1\nname=../../../../tmp/jtr-escape",
     "[jtr_cpuset] name=../../../../tmp/jtr-escape: a cpuset name is one folder"),
    ("[jtr_cpuset]\ncpus=1\nname=a/b", "[jtr_cpuset] name=a/b: a cpuset name is one folder"),
    ("[jtr_cpuset]\ncpus=1\nname=..", "[jtr_cpuset] name=..: a cpuset name is one folder"),
    ("[jtr_cpuset]\ncpus=zz", "[jtr_cpuset] cpus=zz: 'zz' is not a CPU list"),
    ("[jtr_cpuset]\ncpus=1\nfrob=1", "[jtr_cpuset] frob=1: not an option of [jtr_cpuset]"),
    ("[scheduler]\nisolated_cores=a-b", "[scheduler] isolated_cores=a-b: 'a-b' is not a CPU"),
    ("[scheduler]\nisolated_cores=99", "[scheduler] isolated_cores=99: CPU 99 is not online"),
    ("[scheduler]\nisolated_cores=0-1", "[scheduler] isolated_cores=0-1: would isolate every"),
    ("[scheduler]\nisolated_cores=1\ndefault_irq_smp_affinity=zz",
     "[scheduler] default_irq_smp_affinity=zz: 'zz' is not calc, ignore or a CPU list"),
    ("[scheduler]\nisolated_cores=1\ndefault_irq_smp_affinity=0x3",
     "[scheduler] default_irq_smp_affinity=0x3: '0x3' is not calc, ignore or a CPU list"),
    ("[cpu]\nforce_latency=-5", "[cpu] force_latency=-5: not a latency in us"),
    ("[cpu]\nforce_latency=99999999999", "[cpu] force_latency=99999999999: not a latency"),
    ("[vm]\ntransparent_hugepages=banana",
     "[vm] transparent_hugepages=banana: 'banana' is not a THP mode; write always, madvise "
     "or never"),
    ("[sysctl]\nvm.swappiness=", "[sysctl] vm.swappiness=: empty"),
    ("[sysctl]\nvm.swappiness=10\n  20", "[sysctl] vm.swappiness=10\\n20: more than one line"),
    ("[sysctl]\n../../etc/x=1", "[sysctl] ../../etc/x=1: not a sysctl name"),
    ("[sysctl]\nkernel.watchdog_cpumask=x-y",
     "[sysctl] kernel.watchdog_cpumask=x-y: 'x-y' is not a CPU list"),
    ("[sysfs]\n{tmp}/target=1", "[sysfs] {tmp}/target=1: not a path under /sys"),
    ("[sysfs]\n/sys/../{tmp}/target=1", "not a path under /sys"),
    ("[sysfs]\n/sys/devices/virtual/workqueue/cpumask=zz",
     "[sysfs] /sys/devices/virtual/workqueue/cpumask=zz: not a CPU mask"),
    ("[bootloader]\ncmdline=isolcpus=zz", "[bootloader] cmdline=isolcpus=zz: isolcpus=zz: "
                                         "'zz' is not a CPU list"),
    ("[bootloader]\ncmdline=quiet\"; touch {tmp}/x; \"",
     "cannot go on the kernel command line"),
]


@pytest.mark.parametrize("body,msg", BAD_PROFILES, ids=[str(i) for i in range(len(BAD_PROFILES))])
def test_bad_profile_value_is_refused_before_anything(machine, tmp_path, body, msg):
    """Every value a profile gives jtr's applier is checked when the profile is
    loaded: one line 'jtr tune: PROFILE: [section] key=value: what is wrong',
    exit 2, no traceback, nothing changed or created; with and without
    --dry-run, and for jtr ab."""
    env, before = machine
    body, msg = body.replace("{tmp}", str(tmp_path)), msg.replace("{tmp}", str(tmp_path))
    (tmp_path / "target").write_text("untouched\n")
    d = tmp_path / "profiles" / "bad"
    d.mkdir(parents=True)
    (d / "tuned.conf").write_text("[main]\nsummary=a bad profile\n\n%s\n" % body)
    env = dict(env, JTR_PROFILE_DIRS="%s:%s" % (tmp_path / "profiles", PROFILE_DIR))
    p = in_namespace("""
$JTR tune apply bad --cpus 1 --dry-run > $OUT/dry.out 2> $OUT/dry.err; echo dry=$?
$JTR tune apply bad --cpus 1 > $OUT/apply.out 2> $OUT/apply.err; echo apply=$?
$JTR ab bad --cpus 1 -d 100ms --no-trace -o $OUT/ab > $OUT/ab.out 2> $OUT/ab.err; echo ab=$?
""", env, tmp_path)
    for what, prog in (("dry", "jtr tune"), ("apply", "jtr tune"), ("ab", "jtr ab")):
        err = (tmp_path / (what + ".err")).read_text()
        assert "%s=2" % what in p.stdout, (what, err)
        assert err.startswith("%s: bad: " % prog) and msg in err, (what, err)
        assert err.count("\n") == 1 and "Traceback" not in err, (what, err)
        assert (tmp_path / (what + ".out")).read_text() == "", what
    assert not os.path.exists("/tmp/jtr-escape") and not (tmp_path / "x").exists()
    assert (tmp_path / "target").read_text() == "untouched\n"
    assert not (tmp_path / "ab").exists()
    assert not os.path.exists(os.path.join(env["JTR_STATE_DIR"], "tune-state.json"))
    assert global_dump(env) == before


def test_snapshot_entry_of_unknown_type_is_refused(machine):
    """verify and revert name the state file and the entry they do not know, in one
    line (exit 2), and change nothing, the snapshot included."""
    env, before = machine
    os.makedirs(env["JTR_STATE_DIR"])
    st_path = os.path.join(env["JTR_STATE_DIR"], "tune-state.json")
    st = {"format": "jtr-tune-state/1", "profile": "jtr-latency", "isolated_cpus": "",
          "applied_at": "2026-11-23T00:00:00.000+00:00", "pid": 1, "status": "applied",
          "confirmed": True, "via_tuned": None, "boot": [],
          "entries": [{"type": "file", "key": "file:/proc/sys/vm/swappiness",
                       "label": "vm.swappiness", "path": "/proc/sys/vm/swappiness",
                       "how": "text", "before": "60", "target": "10", "result": "changed"},
                      {"type": "frob", "key": "frob:1", "label": "a frob", "before": "1",
                       "target": "2", "result": "changed"}]}
    text = json.dumps(st)
    with open(st_path, "w") as f:
        f.write(text)
    for cmd in ("verify", "revert", "confirm"):
        p = run_jtr("tune", cmd, env=env)
        assert p.returncode == 2, (cmd, p.stdout, p.stderr)
        assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr, (cmd, p.stderr)
        assert st_path in p.stderr and "entry 2 (frob:1)" in p.stderr, (cmd, p.stderr)
        assert "unknown type 'frob'" in p.stderr, (cmd, p.stderr)
    with open(st_path) as f:
        assert f.read() == text
    assert global_dump(env) == before


@pytest.mark.parametrize("args,msg", [
    ([], "give an action: list, show, apply, verify, revert, confirm"),
    (["list", "extra"], "unexpected argument 'extra'"),
    (["verify", "extra"], "unexpected argument 'extra'"),
    (["revert", "--cpus", "1"], "unknown option '--cpus'"),
    (["-x"], "unknown option '-x'"),
])
def test_tune_usage_goes_to_stderr(args, msg):
    p = run_jtr("tune", *args)
    assert p.returncode == 2 and p.stdout == "", p.stdout
    assert msg in p.stderr and p.stderr.count("\n") == 1, p.stderr


def test_isolate_then_measure_from_the_same_shell(machine, tmp_path):
    """After jtr tune apply jtr-isolate --cpus 1 the shell may no longer run on
    CPU 1; jtr run -c 1 and the probes still measure there, say so, and the
    tuning is reverted."""
    env, _ = machine
    if 1 not in online_cpus() or len(online_cpus()) < 2:
        pytest.skip("needs CPUs 0 and 1 online")
    p = in_namespace("""
$JTR tune apply jtr-isolate --cpus 1 > $OUT/apply.txt 2>&1; echo apply=$?
taskset -pc $$ > $OUT/affinity.txt
$JTR run -c 1 -d 1 -o $OUT/run > $OUT/run.txt 2>&1; echo run=$?
$JTR null -c 1 -n 20K -r 1 -o $OUT/null > $OUT/null.txt 2>&1; echo null=$?
$JTR tune revert > $OUT/revert.txt 2>&1; echo revert=$?
""", env, tmp_path, timeout=180)
    assert "apply=0" in p.stdout, (tmp_path / "apply.txt").read_text()
    assert "revert=0" in p.stdout, (tmp_path / "revert.txt").read_text()
    assert (tmp_path / "affinity.txt").read_text().strip().endswith(": 0")
    for name in ("run", "null"):
        text = (tmp_path / (name + ".txt")).read_text()
        assert "%s=0" % name in p.stdout, text
        assert "CPU 1 is outside this process's affinity (0" in text
        res = load(tmp_path / name)
        assert {r["cpu"] for r in res["runs"]} == {1}
        assert any("outside this process's affinity" in w for w in res["warnings"])


def test_install_profiles_where_tuned_finds_them(tmp_path):
    """install-profiles copies every jtr profile and the variables template, keeps
    the user's variables and a profile of the same name that differs (exit 1)."""
    d = tmp_path / "tuned"
    d.mkdir()
    p = run_jtr("tune", "install-profiles", "--dir", str(d))
    assert p.returncode == 0, p.stderr
    for name in PROFILES:
        assert (d / name / "tuned.conf").read_text() == \
            open(os.path.join(PROFILE_DIR, name, "tuned.conf")).read()
    assert "isolated_cores=1" in (d / "jtr-variables.conf").read_text()
    (d / "jtr-variables.conf").write_text("isolated_cores=3\n")
    (d / "jtr-latency" / "tuned.conf").write_text("[main]\nsummary=mine\n")
    p = run_jtr("tune", "install-profiles", "--dir", str(d))
    assert p.returncode == 1 and "jtr-latency/tuned.conf: left as it is" in p.stdout
    assert (d / "jtr-variables.conf").read_text() == "isolated_cores=3\n"
    assert "kept (yours; isolated_cores=3)" in p.stdout
    p = run_jtr("tune", "install-profiles", "--dir", str(tmp_path / "none"))
    assert p.returncode == 2 and "no such folder" in p.stderr
    # tuned 2.23 and later: its user folder is /etc/tuned/profiles; where that is
    # missing, the error says which tuned it is and how to copy elsewhere
    if not os.path.isdir("/etc/tuned/profiles"):
        p = run_jtr("tune", "install-profiles", env={"JTR_TUNED_VERSION": "2.23.0"})
        assert p.returncode == 2 and "/etc/tuned/profiles: no such folder (tuned 2.23.0" in \
            p.stderr and "--dir DIR" in p.stderr, p.stderr
    if os.path.isdir(TUNED_PY):         # tuned's own loader finds them by name
        units = _tuned_load("jtr-isolate", "isolated_cores=1", folder=str(d))
        assert "isolated_cores" in units["scheduler"]["options"]


# ---------------------------------------------------------------- tuned's layout

TUNED_DIRS = r"""
import sys
sys.path.insert(0, "/usr/lib/python3/dist-packages")
import tuned.consts as c
# before 2.23 LOAD_DIRECTORIES; from 2.23 CFG_DEF_PROFILE_DIRS (system, user)
print(" ".join(getattr(c, "LOAD_DIRECTORIES", None) or c.CFG_DEF_PROFILE_DIRS))
"""


def test_the_folders_are_the_installed_tuneds(tmp_path):
    """install-profiles and make install use the folders this machine's tuned reads
    (its own consts.py says which), and tuned 2.23's layout where tuned is 2.23 or
    later (JTR_TUNED_VERSION stands in for a newer tuned)."""
    need_tuned()
    p = subprocess.run(["/usr/bin/python3", "-c", TUNED_DIRS], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    system, user = p.stdout.split()
    env = {"JTR_TUNED_VERSION": ""}
    # the version jtr reads from tuned's package is the one tuned-adm prints
    adm = subprocess.run(["tuned-adm", "--version"], capture_output=True, text=True, timeout=60)
    version = re.search(r"\d+\.\d+\.\d+", adm.stdout + adm.stderr).group(0)
    for which, want in (("system", system), ("user", user),
                        ("variables", "/etc/tuned/jtr-variables.conf")):
        p = run_jtr("tune", "install-profiles", "--print-dir", which, env=env)
        assert p.returncode == 0 and p.stdout == want + "\n", p.stdout + p.stderr
        assert "tuned %s (tuned's version module)" % version in p.stderr, p.stderr
    for version, system, user in (("2.23.0", "/usr/lib/tuned/profiles", "/etc/tuned/profiles"),
                                  ("2.22.1", "/usr/lib/tuned", "/etc/tuned")):
        env = {"JTR_TUNED_VERSION": version}
        got = [run_jtr("tune", "install-profiles", "--print-dir", w, env=env).stdout.strip()
               for w in ("system", "user", "variables")]
        assert got == [system, user, "/etc/tuned/jtr-variables.conf"], (version, got)
    p = run_jtr("tune", "install-profiles", "--print-dir", "nowhere")
    assert p.returncode == 2 and "--print-dir nowhere: use system, user or variables" in \
        p.stderr and "Traceback" not in p.stderr, p.stderr


@pytest.mark.parametrize("version", [None, "2.24.0"])
def test_make_install_links_where_tuned_reads(tmp_path, version):
    """make install PREFIX=/usr into a DESTDIR: the profiles linked into the system
    folder of the installed tuned (this machine's, then a 2.23-or-later one), the
    variables template into /etc/tuned; tuned's own Locator lists them there and
    its loader loads jtr-isolate with its variables; make uninstall takes them away."""
    need_tuned()
    dest = tmp_path / "root"
    env = dict(os.environ, JTR_TUNED_VERSION=version or "")
    args = ["-s", "PREFIX=/usr", "DESTDIR=%s" % dest]
    p = make_in_tree(*args, "install", env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    want = run_jtr("tune", "install-profiles", "--print-dir", "system",
                   env={"JTR_TUNED_VERSION": version or ""}).stdout.strip()
    assert want == ("/usr/lib/tuned/profiles" if version else
                    subprocess.run(["/usr/bin/python3", "-c", TUNED_DIRS], capture_output=True,
                                   text=True).stdout.split()[0])
    folder = dest / want.lstrip("/")
    for name in PROFILES:
        link = folder / name
        assert os.readlink(link) == "/usr/share/jtr/tuning-profiles/" + name
        assert (dest / "usr/share/jtr/tuning-profiles" / name / "tuned.conf").is_file()
    other = dest / ("usr/lib/tuned/jtr-latency" if version else
                    "usr/lib/tuned/profiles/jtr-latency")
    assert not os.path.lexists(other)           # one layout: the installed tuned's
    assert (dest / "etc/tuned/jtr-variables.conf").read_text() == \
        open(os.path.join(PROFILE_DIR, "jtr-variables.conf")).read()
    # tuned's own loader on that folder: the links resolved inside DESTDIR
    staged = tmp_path / "staged"
    staged.mkdir()
    for name in PROFILES:
        os.symlink(str(dest) + os.readlink(folder / name), staged / name)
    units = _tuned_load("jtr-isolate", folder=str(staged))
    assert units["scheduler"]["options"]["isolated_cores"] == "${isolated_cores}"
    p = make_in_tree(*args, "uninstall", timeout=300, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    assert not [n for n in PROFILES if os.path.lexists(folder / n)]
    assert not (dest / "etc/tuned/jtr-variables.conf").exists()
