# SPDX-License-Identifier: GPL-2.0-only
"""tune_driver - the killing part of the tuning tests, run inside a pid namespace of
its own (tests/test_tune.py starts it with unshare --pid --fork --mount-proc, so
the tasks a profile moves are this driver's): SIGKILL of `jtr tune apply` at swept
moments, then `jtr tune revert`; stop signals to `jtr ab` at chosen phases. It
prints what it saw as one JSON document; the tests judge it.

    python tune_driver.py sweep                    (JTR, JTR_STATE_DIR, T_OUT set)
    python tune_driver.py ab '{"sigs": [...], "to": "process"|"group", "phase": ...}'
    python tune_driver.py tune '{"cmd": "apply"|"revert", "sigs": [...], "to": ...}'
"""
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

HOLDER_MARK = b"/dev/cpu_dma_latency"


def dma_holders():
    """Live processes holding /dev/cpu_dma_latency the way jtr's holder does (a
    `python -c PROGRAM` whose program names the device), as this /proc shows them."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                argv = f.read().split(b"\0")
            with open("/proc/%s/stat" % p) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if len(argv) > 2 and argv[1] == b"-c" and HOLDER_MARK in argv[2] and state not in "ZX":
            out.append(int(p))
    return out


def tmp_files(*folders):
    """The temporary files of atomic writes (.NAME.tmp-PID) left in @folders."""
    return sorted(f for d in folders for f in glob.glob(os.path.join(d, ".*.tmp-*")))


def read_dma():
    with open("/dev/cpu_dma_latency", "rb") as f:
        return int.from_bytes(f.read(4), "little", signed=True)


def diff(a, b):
    return {k: [a.get(k), b.get(k)] for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)}


def jtr(*args):
    return subprocess.run([os.environ["JTR"]] + list(args), text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=120)


def dump():
    p = jtr("tune", "show", "--json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)["dump"]


def state():
    try:
        with open(os.path.join(os.environ["JTR_STATE_DIR"], "tune-state.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def status():
    return state().get("status")


def done(n):
    """The apply has reached (and finished) at least @n entries."""
    st = state()
    return st.get("status") == "applying" and \
        sum(1 for e in st.get("entries", []) if e.get("result") not in (None, "pending")) >= n


def reap():
    """Collect the orphans this driver (pid 1 here) inherited from killed processes."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def children():
    """The pids of this driver's living children (orphans of this pid namespace
    come to it)."""
    me, out = os.getpid(), set()
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % p) as f:
                state, ppid = f.read().rsplit(")", 1)[1].split()[:2]
        except (OSError, ValueError):
            continue
        if int(ppid) == me and state not in "ZX":
            out.add(int(p))
    return out


def reap_orphans(keep, wait_s=5.0):
    """reap(), waiting up to @wait_s for the children that are not in @keep (the
    orphans of a killed process) to end: a query of tuned's version that jtr tune
    apply had started when it was killed (tuned-adm's python, or tuned-adm
    --version) runs on for up to a few hundred ms, and a dump would count it as a
    task the apply left behind."""
    end = time.monotonic() + wait_s
    while True:
        reap()
        if not children() - keep or time.monotonic() >= end:
            return
        time.sleep(0.01)


def probe_measuring(comm="jtr-gap"):
    """A @comm of this pid namespace has its handler for SIGINT and SIGTERM in place
    (/proc/PID/status SigCgt): a stop signal now ends its run with a result. The
    run's folder can exist a while before that on a busy machine."""
    want = (1 << (signal.SIGINT - 1)) | (1 << (signal.SIGTERM - 1))
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/status" % p) as f:
                st = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue
        if st.get("Name", "").strip() == comm and \
                int(st.get("SigCgt", "0"), 16) & want == want:
            return True
    return False


def catches(pid, sig):
    """Does process @pid catch @sig (its handler set: /proc/PID/status SigCgt)?"""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) >> (sig - 1) & 1)
    except (OSError, ValueError):
        pass
    return False


def wait_until(cond, proc, timeout=120.0, every=0.0002):
    """Poll @cond @every s (0.2 ms) while @proc runs; whether it came true."""
    end = time.monotonic() + timeout
    while time.monotonic() < end and proc.poll() is None:
        if cond():
            return True
        time.sleep(every)
    return False


# ---------------------------------------------------------------- SIGKILL sweep

# (what the delay counts from, ms): the start of the process (Python not yet
# running: nothing changed); the snapshot appearing; the holder of
# cpu_dma_latency (the first entry) existing; the device reading 1 (the holder
# holds it: the rest of the apply, files, IRQs, tasks, the cpuset, follows)
SWEEP = [("start", 0), ("start", 20), ("start", 50)] + \
        [("snapshot", ms) for ms in (0, 1, 2)] + \
        [("holder", ms) for ms in (0, 0.5, 1, 2, 3, 5, 8)] + \
        [("held", ms) for ms in (0, 0, 0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.5, 2, 3, 5, 8, 12, 20)]


def sweep():
    state = os.environ["JTR_STATE_DIR"]
    out = []
    # the machine as found: every point's revert must give it back (read once:
    # a point that left anything would show in every later point's diff too)
    before, dma_before = dump(), read_dma()
    keep = children()
    for when, ms in SWEEP:
        shutil.rmtree(state, ignore_errors=True)
        p = subprocess.Popen([os.environ["JTR"], "tune", "apply", "jtr-realtime", "--cpus", "1"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if when != "start":
            wait_until({"snapshot": lambda: os.path.exists(os.path.join(state,
                                                                        "tune-state.json")),
                        "holder": dma_holders, "held": lambda: read_dma() == 1}[when], p)
        time.sleep(ms / 1000.0)
        p.kill()
        p.wait()
        st = status()
        r = jtr("tune", "revert")
        reap_orphans(keep)
        after = dump()
        out.append({"when": when, "ms": ms, "status": st, "revert_rc": r.returncode,
                    "revert": (r.stdout + r.stderr).strip(), "diff": diff(before, after),
                    "dma_before": dma_before, "dma_after": read_dma(),
                    "holders": dma_holders(), "tmp": tmp_files(state)})
    return out


# ---------------------------------------------------------------- jtr ab

def ab(case):
    """`jtr ab jtr-realtime --cpus 1` stopped by case["sigs"] (each 5 ms after the one
    before was taken: signal_in_turn) sent to
    the process or its process group when case["phase"] is reached (with
    case["env"] in its environment); then the next jtr ab."""
    out = os.path.join(os.environ["T_OUT"], "ab")
    before = dump()
    phase = case["phase"]
    cond = {"baseline": lambda: glob.glob(os.path.join(out, ".a-1.partial-*")),
            "applying": lambda: done(5),
            "tuned": lambda: status() == "applied" and glob.glob(os.path.join(out,
                                                                             ".b-1.partial-*"))
            and probe_measuring(),
            # the last run's figures are out: what follows is the last revert
            # (20 ms a setting), then the comparison
            "end": lambda: ran("b-1", seen)
            }[phase]
    p = subprocess.Popen([os.environ["JTR"], "ab", "jtr-realtime", "--cpus", "1", "-d",
                          "200ms", "--no-trace", "-o", out], text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True, env=dict(os.environ, **case.get("env", {})))
    seen = Output(p)
    reached = wait_until(cond, p)
    o, e = signal_in_turn(p, case["sigs"], case["to"], seen)
    reap()
    after = dump()
    doc = None
    if os.path.exists(os.path.join(out, "ab.json")):
        with open(os.path.join(out, "ab.json")) as f:
            doc = json.load(f)
    nxt = jtr("ab", "jtr-baseline", "-d", "100ms", "--no-trace", "-o", out + "-next")
    return {"reached": reached, "rc": p.returncode, "stdout": o, "stderr": e, "ab": doc,
            "compare": os.path.exists(os.path.join(out, "compare.json")),
            "diff": diff(before, after), "holders": dma_holders(), "status": status(),
            "tmp": tmp_files(out, os.environ["JTR_STATE_DIR"]),
            "next_rc": nxt.returncode, "next": (nxt.stdout + nxt.stderr)[-2000:]}


# the lines that say jtr took a stop signal (the first, and each later one)
TAKEN = ("jtr tune: st", "jtr ab: interrupted; reverting", "jtr ab: still", "jtr ab: stopping")


class Output:
    """The lines of @p's stdout and stderr as they come (two threads)."""

    def __init__(self, p):
        self.p, self.out, self.err = p, [], []
        self.readers = [threading.Thread(target=lambda: self.err.extend(iter(p.stderr))),
                        threading.Thread(target=lambda: self.out.extend(iter(p.stdout)))]
        for t in self.readers:
            t.start()

    def taken(self):
        """How many stop signals jtr said it took."""
        return sum(1 for x in list(self.err) if x.startswith(TAKEN))

    def ended(self):
        """(stdout, stderr) once @p has ended."""
        self.p.wait(timeout=120)
        for t in self.readers:
            t.join(10)
        return "".join(self.out), "".join(self.err)


def ran(name, seen):
    """jtr ab said run @name's figures (or that it wrote none): the run is over."""
    lines = list(seen.out)
    at = [i for i, x in enumerate(lines) if ": %s (" % name in x]
    return bool(at) and len(lines) > at[0] + 1 and lines[at[0] + 1].startswith("    ")


def signal_in_turn(p, sigs, to, seen=None):
    """Send @sigs to @p (or its group, @to "group"), each 5 ms after jtr took the one
    before: its line on stderr ("jtr tune: stopping..." or "... still ..."), or 2 s.
    Two signals of one number that come before Python's handler has run are one
    call of it, so a second sent blindly 5 ms later may never be seen as one.
    @seen: the Output of @p, if one reads it already. (stdout, stderr) once it
    has ended."""
    seen = seen or Output(p)
    for i, name in enumerate(sigs):
        if i:
            end = time.monotonic() + 2
            while seen.taken() < i and p.poll() is None and time.monotonic() < end:
                time.sleep(0.001)
            time.sleep(0.005)
        try:
            (os.killpg if to == "group" else os.kill)(p.pid, getattr(signal, "SIG" + name))
        except ProcessLookupError:
            pass
    return seen.ended()


# ---------------------------------------------------------------- jtr tune

def tune(case):
    """Stop signals (case["sigs"], 5 ms apart, to the process or its group) to
    `jtr tune apply jtr-realtime --cpus 1` after it changed 5 settings, or to
    `jtr tune revert` 0.2 s after it started; the settings take 20 ms each."""
    state_dir = os.environ["JTR_STATE_DIR"]
    before = dump()
    slow = dict(os.environ, JTR_TUNE_STEP_DELAY="0.02")
    if case["cmd"] == "revert":
        assert jtr("tune", "apply", "jtr-realtime", "--cpus", "1").returncode == 0
        args = ["tune", "revert"]
    else:
        args = ["tune", "apply", "jtr-realtime", "--cpus", "1"]
    p = subprocess.Popen([os.environ["JTR"]] + args, text=True, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True, env=slow)
    if case["cmd"] == "revert":
        # the revert runs once jtr catches the stop signals (its Python loaded: a
        # fixed 0.2 s was not always enough beside the other tests, and SIGTERM
        # then killed it, -15), a few of its 20 ms steps later. Looked at every
        # 5 ms: reading /proc/PID/status every 0.2 ms held back the process it
        # looked at (with two busy loops on its CPU, no handler in 120 s)
        reached = wait_until(lambda: catches(p.pid, signal.SIGTERM), p, every=0.005)
        time.sleep(0.06)
        reached = reached and p.poll() is None
    else:
        reached = wait_until(lambda: done(5), p)
    o, e = signal_in_turn(p, case["sigs"], case["to"])
    reap()
    return {"reached": reached, "rc": p.returncode, "stdout": o, "stderr": e,
            "diff": diff(before, dump()), "holders": dma_holders(), "status": status(),
            "tmp": tmp_files(state_dir)}


if __name__ == "__main__":
    subprocess.Popen(["sleep", "300"])          # a task of its own for the profile to move
    time.sleep(0.05)
    what = sys.argv[1]
    doc = sweep() if what == "sweep" else {"ab": ab, "tune": tune}[what](json.loads(sys.argv[2]))
    print(json.dumps(doc))
