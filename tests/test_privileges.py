# SPDX-License-Identifier: GPL-2.0-only
"""SCHED_FIFO runs, and the setuid and file-capability installs used by an
unprivileged user: FIFO works, privileges are dropped for good before any
file is touched, and results belong to the user."""
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time

import pytest
from conftest import JTR, load, make_in_tree, wait_for

pytestmark = [pytest.mark.machine, pytest.mark.root]

needs_root = pytest.mark.skipif(os.geteuid() != 0,
                                reason="needs root: it installs setuid binaries and adds a user")


def rt_throttled():
    with open("/proc/sys/kernel/sched_rt_runtime_us") as f:
        return int(f.read()) != -1


def threads(pid):
    try:
        return [int(t) for t in os.listdir("/proc/%d/task" % pid)]
    except FileNotFoundError:
        return []


def fifo_threads(pid):
    """(tid, priority, cpus) of every SCHED_FIFO thread of @pid."""
    found = []
    for tid in threads(pid):
        try:
            if os.sched_getscheduler(tid) == os.SCHED_FIFO:
                found.append((tid, os.sched_getparam(tid).sched_priority,
                              os.sched_getaffinity(tid)))
        except (ProcessLookupError, PermissionError):
            pass
    return found


def measuring(pid):
    """The FIFO threads of @pid once its measuring has settled, else None. The
    worker starts FIFO with the main thread's CPUs and then pins itself; the main
    thread drops to SCHED_OTHER after: a look in between (which a stolen vCPU can
    stretch) sees two FIFO threads or an unpinned one. A probe that never drops
    or never pins never settles."""
    if len(threads(pid)) < 2:
        return None
    found = fifo_threads(pid)
    return found if len(found) == 1 and len(found[0][2]) == 1 else None




def status(pid):
    d = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            d[k] = v.split()
    return d


@needs_root
def test_fifo_as_root_really_runs_fifo(tmp_path, validate):
    out = tmp_path / "fifo"
    # 1 s: the thread is looked at while it measures (polled every 20 ms); a FIFO
    # loop on CPU 1 leaves the tests beside it 5 % of that CPU while it runs
    p = subprocess.Popen([JTR, "gap", "-f", "10", "-c", "1", "-d", "1", "-o", str(out)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    found = wait_for(lambda: measuring(p.pid))
    so, se = p.communicate(timeout=30)
    assert p.returncode == 0, se
    # the measuring thread is FIFO 10 on CPU 1; the waiting thread went back
    assert found and len(found) == 1, found
    assert found[0][1] == 10 and found[0][2] == {1}
    res = validate(load(out))
    assert res["privileges"]["fifo_priority"] == 10
    warned = any("RT throttling is on" in w for w in res["warnings"])
    assert warned == rt_throttled() == ("RT throttling is on" in se)


@pytest.fixture(scope="module")
def user():
    if os.geteuid() != 0:
        pytest.skip("needs root to add a test user")
    name = "jtrt%d" % os.getpid()
    subprocess.run(["useradd", "-M", "-N", "-s", "/usr/sbin/nologin", name], check=True)
    pw = pwd.getpwnam(name)
    yield name, pw.pw_uid, pw.pw_gid
    subprocess.run(["userdel", "-f", name], check=False)


@pytest.fixture(scope="module", params=["plain", "setuid", "caps"])
def installed(request):
    """`make install` into a prefix the test user can reach, then the
    variant's own step (install-setuid or install-caps)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to install setuid or capability binaries")
    prefix = tempfile.mkdtemp(prefix="jtr-inst-", dir="/tmp")
    os.chmod(prefix, 0o755)
    target = {"plain": "install", "setuid": "install-setuid", "caps": "install-caps"}[request.param]
    r = make_in_tree(target, "PREFIX=" + prefix)
    assert r.returncode == 0, r.stderr
    probe = os.path.join(prefix, "libexec", "jtr", "jtr-gap")
    st = os.stat(probe)
    assert bool(st.st_mode & 0o4000) == (request.param == "setuid") and st.st_uid == 0
    caps = subprocess.run(["getcap", probe], capture_output=True, text=True).stdout
    assert ("cap_ipc_lock,cap_sys_nice=ep" in caps) == (request.param == "caps")
    yield request.param, prefix
    shutil.rmtree(prefix)


def as_user(user, argv, **kw):
    """Popen @argv as the test user, with a plain environment."""
    name, uid, gid = user
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/tmp"}
    return subprocess.Popen(["setpriv", "--reuid=%d" % uid, "--regid=%d" % gid,
                             "--clear-groups", "--"] + argv, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


@pytest.fixture
def user_dir(user):
    d = tempfile.mkdtemp(prefix="jtr-user-", dir="/tmp")
    os.chown(d, user[1], user[2])
    yield d
    shutil.rmtree(d)


def test_fifo_through_install(installed, user, user_dir, validate):
    kind, prefix = installed
    name, uid, gid = user
    out = os.path.join(user_dir, "res")
    jtr = os.path.join(prefix, "bin", "jtr")
    p = as_user(user, [jtr, "gap", "-f", "10", "-c", "1", "-d", "1", "-o", out])
    if kind == "plain":
        so, se = p.communicate(timeout=30)
        assert p.returncode == 2
        assert "-f 10: cannot use SCHED_FIFO" in se and "make install-caps" in se
        assert not os.path.exists(out) and os.listdir(user_dir) == []
        return

    # while it measures (the worker exists only after the drop): who is it?
    def look():
        fifo = measuring(p.pid)
        return (status(p.pid), fifo) if fifo else None
    seen = wait_for(look)
    so, se = p.communicate(timeout=30)
    assert p.returncode == 0, se
    assert seen, "the measuring thread never appeared"
    st, fifo = seen
    assert st["Uid"] == [str(uid)] * 4, st["Uid"]
    assert st["Gid"] == [str(gid)] * 4, st["Gid"]
    assert int(st["CapEff"][0], 16) == 0 and int(st["CapPrm"][0], 16) == 0
    assert st["NoNewPrivs"] == ["1"]
    assert len(fifo) == 1 and fifo[0][1] == 10 and fifo[0][2] == {1}

    # the results are the user's, and say what happened
    for d, _, files in os.walk(out):
        assert os.stat(d).st_uid == uid
        for f in files:
            assert os.stat(os.path.join(d, f)).st_uid == uid, f
    res = validate(load(out))
    pr = res["privileges"]
    assert pr["uid"] == uid and pr["elevated_at_start"] and pr["dropped"]
    assert pr["fifo_priority"] == 10 and pr["memory_locked"]


def test_wake_through_install(installed, user, user_dir, validate):
    """jtr wake is installed like the other probes: FIFO for the user through the
    setuid or capability install, the privileges dropped, the files the user's;
    /dev/cpu_dma_latency only for whom may write it."""
    kind, prefix = installed
    name, uid, gid = user
    probe = os.path.join(prefix, "libexec", "jtr", "jtr-wake")
    assert bool(os.stat(probe).st_mode & 0o4000) == (kind == "setuid")
    jtr = os.path.join(prefix, "bin", "jtr")
    out = os.path.join(user_dir, "wake")
    p = as_user(user, [jtr, "wake", "-f", "10", "-c", "1", "-n", "300", "-q", "-o", out])
    so, se = p.communicate(timeout=60)
    if kind == "plain":
        assert p.returncode == 2 and "-f 10: cannot use SCHED_FIFO" in se
        assert not os.path.exists(out)
        return
    assert p.returncode == 0, se
    res = validate(load(out))
    pr = res["privileges"]
    assert pr["uid"] == uid and pr["elevated_at_start"] and pr["dropped"]
    assert pr["fifo_priority"] == 10 and pr["memory_locked"]
    assert res["runs"][0]["wakeups"] == 300
    # a gate: judged, and its report written, by jtr as the user once the probe ended
    xml, gated = os.path.join(user_dir, "wake.xml"), os.path.join(user_dir, "gated")
    p = as_user(user, [jtr, "wake", "-f", "10", "-c", "1", "-n", "100", "-q", "-o", gated,
                       "--max-latency", "1h", "--junit", xml])
    so, se = p.communicate(timeout=60)
    assert p.returncode == 0, se
    assert load(gated)["gates"]["passed"] is True
    for f in (xml, os.path.join(gated, "result.json")):
        assert os.stat(f).st_uid == uid, f
    for f in os.listdir(out):
        assert os.stat(os.path.join(out, f)).st_uid == uid, f
    # the privilege is for FIFO and locking memory, not for the machine's PM QoS
    p = as_user(user, [jtr, "wake", "-c", "1", "-n", "10", "--cpu-dma-latency", "0", "-q",
                       "-o", out + "2"])
    so, se = p.communicate(timeout=60)
    assert p.returncode == 1 and "cannot open /dev/cpu_dma_latency" in se, se
    assert not os.path.exists(out + "2")


SENDERS = ("send", "ping", "pong", "pub", "sub")


@needs_root
def test_senders_fifo_through_install(installed, user, user_dir, validate):
    """The transports' programs are installed like the probes (the seeds made
    their socket-send tools setuid too): a user runs jtr send, jtr ping (and
    pong), jtr pub (and sub) at SCHED_FIFO through the setuid or capability
    install; a sending thread is FIFO while it runs, as the user, with no
    capability left; the results are the user's. The plain install refuses with
    the install that gives it."""
    kind, prefix = installed
    name, uid, gid = user
    for prog in SENDERS:
        f = os.path.join(prefix, "libexec", "jtr", "jtr-" + prog)
        assert bool(os.stat(f).st_mode & 0o4000) == (kind == "setuid"), prog
        caps = subprocess.run(["getcap", f], capture_output=True, text=True).stdout
        assert ("cap_ipc_lock,cap_sys_nice=ep" in caps) == (kind == "caps"), prog
    jtr = os.path.join(prefix, "bin", "jtr")
    port = 20000 + os.getpid() % 20000
    # send's port too: the default (17391) is another test's on another worker
    runs = [("send", [], ["send", "-T", "udp", "-P", "127.0.0.1:%d" % (port + 2), "-f", "10",
                          "-n", "3000", "-q"]),
            ("ping", ["pong", "-T", "udp", "-P", "127.0.0.1:%d" % port, "-q"],
             ["ping", "-T", "udp", "-P", "127.0.0.1:%d" % port, "-f", "10", "-r", "2K",
              "-n", "3000", "-q"]),
            ("pub", ["sub", "-T", "udp", "-P", "127.0.0.1:%d" % (port + 1), "-q"],
             ["pub", "-T", "udp", "-P", "127.0.0.1:%d" % (port + 1), "-f", "10", "-r", "2K",
              "-n", "3000", "-q"])]
    for prog, other, argv in runs:
        out = os.path.join(user_dir, prog)
        partner = None
        if other:
            partner = as_user(user, [jtr] + other + ["-o", out + "-" + other[0]])
            time.sleep(0.5)
        p = as_user(user, [jtr] + argv + ["-o", out])
        if kind == "plain":
            so, se = p.communicate(timeout=60)
            if partner:
                partner.kill()
                partner.communicate()
            assert p.returncode == 2, se
            assert "-f 10: cannot use SCHED_FIFO" in se and "make install-caps" in se, se
            assert not os.path.exists(out)
            continue
        # while it sends (its hidden results folder is made after the drop): a FIFO
        # thread at 10, the process the user's, no capability left
        def look(prog=prog, pid=p.pid):
            if not glob.glob(os.path.join(user_dir, ".%s.partial-*" % prog)):
                return None
            fifo = fifo_threads(pid)
            return fifo and (status(pid), fifo)
        seen = wait_for(look)
        so, se = p.communicate(timeout=60)
        if partner:
            partner.communicate(timeout=60)
        assert p.returncode == 0, (prog, se)
        assert seen, "%s: no SCHED_FIFO thread was seen" % prog
        st, fifo = seen
        assert st["Uid"] == [str(uid)] * 4 and st["Gid"] == [str(gid)] * 4, (prog, st["Uid"])
        assert int(st["CapEff"][0], 16) == 0 and int(st["CapPrm"][0], 16) == 0, prog
        assert all(prio == 10 for _, prio, _ in fifo), (prog, fifo)
        res = validate(load(out))
        pr = res["privileges"]
        assert pr["uid"] == uid and pr["elevated_at_start"] and pr["dropped"], (prog, pr)
        assert pr["fifo_priority"] == 10, (prog, pr)
        for d, _, files in os.walk(out):
            assert os.stat(d).st_uid == uid
            for f in files:
                assert os.stat(os.path.join(d, f)).st_uid == uid, (prog, f)


def test_no_writing_where_the_user_cannot(installed, user):
    kind, prefix = installed
    rootdir = tempfile.mkdtemp(prefix="jtr-rootonly-", dir="/tmp")
    os.chmod(rootdir, 0o755)  # root's folder: the user may look, not write
    try:
        target = os.path.join(rootdir, "res")
        p = as_user(user, [os.path.join(prefix, "bin", "jtr"), "null", "-n", "1K", "--runs", "1",
                           "-o", target])
        so, se = p.communicate(timeout=30)
        assert p.returncode == 2, se
        assert target in se and "Permission denied" in se
        assert os.listdir(rootdir) == []
    finally:
        shutil.rmtree(rootdir)


def test_unprivileged_run_without_fifo(installed, user, user_dir, validate):
    kind, prefix = installed
    out = os.path.join(user_dir, "plainrun")
    p = as_user(user, [os.path.join(prefix, "bin", "jtr"), "null", "-n", "5K", "--runs", "1",
                       "-o", out])
    so, se = p.communicate(timeout=30)
    assert p.returncode == 0, se
    res = validate(load(out))
    assert res["privileges"]["uid"] == user[1]
    assert res["privileges"]["elevated_at_start"] == (kind != "plain")
    assert res["privileges"]["dropped"] == (kind != "plain")
    assert os.stat(os.path.join(out, "result.json")).st_uid == user[1]


def locked_kb(pid):
    """VmLck of @pid in kB, or None when it is gone."""
    try:
        return int(status(pid)["VmLck"][0])
    except (OSError, KeyError):
        return None


@pytest.mark.parametrize("max_outliers, fits", [("10M", False), ("1000", True)])
def test_locked_memory_stays_within_the_users_limit(installed, user, user_dir, validate,
                                                    max_outliers, fits):
    """The install's privilege lifts RLIMIT_MEMLOCK; for a user other than root,
    jtr keeps to the user's limit: a run that maps more (10M outlier log entries,
    160 MB) is not locked at all and says so; a small one is locked."""
    kind, prefix = installed
    limit = 8 << 20
    out = os.path.join(user_dir, "memlock-%s" % max_outliers)
    name, uid, gid = user
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/tmp"}
    p = subprocess.Popen(["prlimit", "--memlock=%d:%d" % (limit, limit), "--",
                          "setpriv", "--reuid=%d" % uid, "--regid=%d" % gid, "--clear-groups",
                          "--", os.path.join(prefix, "bin", "jtr"), "gap", "-c", "1", "-d", "1",
                          "--max-outliers", max_outliers, "-o", out],
                         env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert wait_for(lambda: len(threads(p.pid)) >= 2), "the measuring thread never appeared"
    time.sleep(0.2)
    lck = locked_kb(p.pid)
    so, se = p.communicate(timeout=60)
    assert p.returncode == 0, se
    res = validate(load(out))
    pr = res["privileges"]
    assert pr["memlock_limit_bytes"] == limit
    over = pr["mapped_bytes"] > limit
    assert over == (not fits), pr
    warned = "more than your locked-memory limit of 8.0 MB" in se
    if kind == "plain":
        # no privilege: mlockall itself keeps to the limit, and fails over it
        assert pr["memory_locked"] == fits and not warned
    else:
        assert pr["memory_locked"] == fits and warned == (not fits), se
        assert any("more than your locked-memory limit" in w for w in res["warnings"]) == \
            (not fits)
    # what the kernel says was locked while it measured: never over the user's
    # limit, and all of the mapping when it fits
    assert lck is not None and lck * 1024 <= limit, lck
    assert (lck > 0) == pr["memory_locked"], (lck, pr)
