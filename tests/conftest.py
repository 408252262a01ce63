# SPDX-License-Identifier: GPL-2.0-only
"""Shared fixtures for the end-to-end tests: they drive the built programs
through the `jtr` front end, the way a user does."""
import fcntl
import json
import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
import time

import jsonschema
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JTR = os.path.join(ROOT, "jtr")
BIN = os.path.join(ROOT, "build", "bin")
SCHEMA_PATH = os.path.join(ROOT, "docs", "result.schema.json")

# pytest keeps each test module's rewritten asserts in __pycache__ only where this
# process may write bytecode: under PYTHONDONTWRITEBYTECODE every pytest process
# rewrote every module again (8 s of CPU each; 1.5 s from the cache). The
# environment is kept: the programs the tests start write no bytecode if told not to
sys.dont_write_bytecode = False

sys.path.insert(0, os.path.join(ROOT, "analysis"))
from jtrpy.system.ports import free_port  # noqa: E402,F401 (the tests import it from here)


def pytest_runtest_setup(item):
    """A test marked root is skipped, saying so, when this run is not root."""
    if item.get_closest_marker("root") and os.geteuid() != 0:
        pytest.skip("needs root (%s is marked root: machine-wide settings, packages, "
                    "users or tracing); this run is not root" % item.path.name)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist's --dist loadgroup (make test's first phase): the tests
    marked machine (they change machine-wide settings) are one group, run one
    after another by one worker, and first, as the longest (those marked
    machine(last=True) at its end: what they need is made outside the group
    meanwhile); every other file is a group of its own (its module fixtures run
    once), as --dist loadfile."""
    # a worker's "dist" is "no"; pytest-xdist tells it loadgroup in option.loadgroup
    if not getattr(config.option, "loadgroup", False):
        return

    def place(item):
        m = item.get_closest_marker("machine")
        return (0, 1 if m.kwargs.get("last") else 0) if m else (1, 0)
    items.sort(key=place)
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            group = "machine" if item.get_closest_marker("machine") else item.nodeid.split("::")[0]
            item.add_marker(pytest.mark.xdist_group(group))


def make_in_tree(*args, timeout=900, env=None):
    """make @args in the source tree, one at a time across the test workers: make
    man, completion and every install target write build/man and build/completion
    afresh (rm -rf first), and two at once take the folder from each other."""
    os.makedirs(os.path.join(ROOT, "build"), exist_ok=True)
    with open(os.path.join(ROOT, "build", ".tests-make.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return subprocess.run(["make", "-C", ROOT, "--no-print-directory"] + [str(a) for a in args],
                              capture_output=True, text=True, timeout=timeout, env=env)


def without_pm_qos(argv):
    """@argv (oslat, cyclictest) in a mount namespace of its own where
    /dev/cpu_dma_latency is /dev/null: cyclictest holds the device at 0 while it
    runs (unless --laptop), a machine-wide setting the tuning tests beside it read;
    what it writes there goes nowhere, and the tool runs as users run it."""
    return ["unshare", "--mount", "sh", "-c",
            'mount --bind /dev/null /dev/cpu_dma_latency && exec "$@"', "sh"] + \
        [str(a) for a in argv]


@pytest.fixture(scope="module", autouse=True)
def no_browser_left_after_its_file():
    """A file's headless Chromium (tests/browser.py) is closed with the file: its
    idle threads would wake on the measured CPU in the files after it (chromium
    and HangWatcher, a foreign task in jtr watch's ground truth once)."""
    yield
    if "browser" in sys.modules:
        sys.modules["browser"].close_browser()


@pytest.fixture(scope="session")
def schema():
    with open(SCHEMA_PATH) as f:
        s = json.load(f)
    jsonschema.Draft202012Validator.check_schema(s)
    return s


# a list longer than this is validated on a sample of as many of its items: its
# first and last third and the rest evenly spread (every item of a list is made by
# the same code; a 30 MB result of 9,000 outliers took 6 s to validate in full).
# No list the schema bounds (maxItems at most 62) is that long.
SAMPLE_ITEMS = 600


def sampled(v):
    """@v with every list longer than SAMPLE_ITEMS cut down to a sample of it."""
    if isinstance(v, dict):
        return {k: sampled(x) for k, x in v.items()}
    if isinstance(v, list):
        if len(v) > SAMPLE_ITEMS:
            third = SAMPLE_ITEMS // 3
            step = (len(v) - 2 * third) / third
            v = v[:third] + [v[third + int(i * step)] for i in range(third)] + v[-third:]
        return [sampled(x) for x in v]
    return v


@pytest.fixture
def validate(schema):
    """validate(result_dict): the result must match docs/result.schema.json
    (long lists on a sample, sampled())."""
    v = jsonschema.Draft202012Validator(schema)

    def check(result):
        errors = sorted(v.iter_errors(sampled(result)), key=lambda e: list(e.path))
        assert not errors, "\n".join("%s: %s" % (list(e.path), e.message) for e in errors[:5])
        return result
    return check


def run_jtr(*args, cwd=None, env=None, timeout=120, check=False):
    """Run `jtr ARGS...`; returns CompletedProcess with text stdout/stderr."""
    e = dict(os.environ)
    e.pop("JTR_PROG", None)
    if env:
        e.update(env)
    p = subprocess.run([JTR] + [str(a) for a in args], cwd=cwd, env=e, text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError("jtr %s: exit %d\n%s" % (" ".join(map(str, args)), p.returncode,
                                                       p.stderr))
    return p


def assert_usage_errors(tmp_path, cases):
    """Each (args, message) case: exit 2, one line of stderr holding the message,
    and no results folder written."""
    out = tmp_path / "x"
    for args, msg in cases:
        p = run_jtr(*args, "-o", out, timeout=30)
        assert p.returncode == 2, (args, p.stderr)
        assert msg in p.stderr and p.stderr.count("\n") == 1, (args, p.stderr)
    assert not out.exists()


def load(path):
    with open(os.path.join(path, "result.json") if os.path.isdir(path) else path) as f:
        return json.load(f)


def legacy_blocks(text):
    """Parse the summary text (the jtr_null text format) into one dict per run."""
    blocks = []
    for m in re.finditer(
            r"(?P<hdr>[^\n]*: (?P<lead>\w+=\d+), cpu_num=(?P<cpu>-?\d+), "
            r"fifo_priority=(?P<fifo>-?\d+), histo_buckets=(?P<hb>\d+), "
            r"num_samples=(?P<n>\d+),\n pause=(?P<pause>\d+) timebase=(?P<tb>\d), "
            r"warmup_loops=(?P<w>\d+), gettime_cost=(?P<gc>\d+),\n rdtsc_cost=(?P<rc>\d+), "
            r"ticks_per_sec=(?P<tps>\d+), jtr_1000_loops_cost=(?P<lc>\d+)\n)"
            r"Minimum=(?P<min>\d+), Maximum=(?P<max>\d+), Average=(?P<avg>\d+), "
            r"Overflows=(?P<over>\d+)\n(?P<pct>(?: ?\d+\.\d{3}% are below \d+ ns\n){5})", text):
        d = {k: (int(v) if v and re.fullmatch(r"-?\d+", v) else v)
             for k, v in m.groupdict().items()}
        d["below"] = {float(p): int(n) for p, n in
                      re.findall(r"(\d+\.\d{3})% are below (\d+) ns", m.group("pct"))}
        blocks.append(d)
    return blocks


def steal_ns():
    """{cpu: ns} the hypervisor has taken from each CPU so far (/proc/stat; it
    counts in ticks of 10 ms)."""
    from jtrpy.system.procs import cpu_times
    hz = os.sysconf("SC_CLK_TCK")
    return {c: t[7] * 10**9 // hz for c, t in cpu_times().items() if c != "all"}


def stolen_ns(before, cpus=None):
    """The most the hypervisor took from one CPU (of @cpus, default all) since
    steal_ns() gave @before."""
    now = steal_ns()
    return max((now[c] - before.get(c, now[c]) for c in (cpus or now)), default=0)


# --- a measuring test the host disturbed runs once more --------------------------

# A measuring test that failed while the hypervisor took at least this much CPU
# time from one of the guest's CPUs (the steal counter of /proc/stat, counted in
# 10 ms ticks) is run once more, saying why and what the first try said: the
# injected interference is no longer what the test asked for (a 300 us spin took
# 330 ms once), and a shared CI host took 160 ms of a CPU in 2 s. Its second
# result is the one reported. JTR_NO_RERUN=1 reports the first.
RERUN_STOLEN_NS = 10 * 10**6
RERUNS = []


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    if item.get_closest_marker("measures") is None or os.environ.get("JTR_NO_RERUN"):
        return None
    from _pytest.runner import runtestprotocol
    for attempt in (1, 2):
        item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        before = steal_ns()
        reports = runtestprotocol(item, nextitem=nextitem, log=False)
        stolen = stolen_ns(before)
        call = [r for r in reports if r.when == "call"]
        if attempt == 1 and call and call[0].failed and stolen >= RERUN_STOLEN_NS:
            crash = getattr(call[0].longrepr, "reprcrash", None)
            first = (getattr(crash, "message", "") or call[0].longreprtext).strip()
            first = (first.splitlines() or ["?"])[0]
            why = ("%s failed while the host stole %d ms of a CPU: run once more (it said: "
                   "%s)" % (item.nodeid, stolen // 10**6, first[:300]))
            RERUNS.append(why)
            tr = item.config.pluginmanager.get_plugin("terminalreporter")
            if tr is not None:
                tr.write_line("")
                tr.write_line("rerun: " + why)
            item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
            continue
        for r in reports:
            item.ihook.pytest_runtest_logreport(report=r)
        item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True
    return True


def pytest_terminal_summary(terminalreporter):
    """The measuring tests run again because the host took CPU time, listed."""
    if RERUNS:
        terminalreporter.section("run again: the host took CPU time from a failed try")
        for why in RERUNS:
            terminalreporter.write_line(why)


@pytest.fixture(scope="session")
def fifo_injected(tmp_path_factory):
    """One eBPF-traced `jtr run` (with --cross-check where perf is installed) with
    the FIFO spinner preempting the probe, shared by the ground-truth, backend
    and cross-check tests: (folder, result, injection spans, stdout)."""
    from injection import fifo_run
    return fifo_run(tmp_path_factory.mktemp("fifo"))


def on_a_terminal(argv, timeout=60, env=None):
    """Run @argv with a pseudo-terminal as its stdout and stderr (stdin from
    /dev/null), in @env (default jtr's): (exit status, every byte it wrote there)."""
    import pty
    leader, follower = pty.openpty()
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=follower, stderr=follower,
                         env=env)
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    p.wait(timeout=timeout)
    os.close(leader)
    return p.returncode, seen


def need_tracing():
    """Skip, saying why, where the kernel-event tracer cannot run: not root, or no BTF."""
    if os.geteuid() != 0:
        pytest.skip("tracing needs root (or CAP_BPF and CAP_PERFMON); this run is not root")
    if not os.path.exists("/sys/kernel/btf/vmlinux"):
        pytest.skip("this kernel has no BTF (/sys/kernel/btf/vmlinux)")


def wait_for(cond, timeout=30.0):
    """cond()'s first true value within @timeout seconds, or None."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = cond()
        if v:
            return v
        time.sleep(0.02)
    return None


def comm(pid):
    """The name of process @pid, or None when it is gone."""
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return None


@pytest.fixture
def nobody_folder():
    """(a folder under /tmp the user nobody can read, the words that run a command
    as nobody: setpriv ... --); the folder removed after. pytest's own folders are
    root's alone."""
    if os.geteuid() != 0:
        pytest.skip("running as another user needs root; this run is not root")
    if not shutil.which("setpriv"):
        pytest.skip("setpriv (util-linux) is not installed")
    try:
        pw = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("this machine has no user 'nobody'")
    top = tempfile.mkdtemp(prefix="jtr-nobody-")
    os.chmod(top, 0o755)
    try:
        yield top, ["setpriv", "--reuid=%d" % pw.pw_uid, "--regid=%d" % pw.pw_gid,
                    "--clear-groups", "--"]
    finally:
        shutil.rmtree(top)


def run_as(prefix, *argv):
    """@argv run after @prefix (nobody_folder's) with a plain environment."""
    return subprocess.run(list(prefix) + [str(a) for a in argv], capture_output=True,
                          text=True, env={"PATH": os.environ["PATH"], "LANG": "C.UTF-8"})
