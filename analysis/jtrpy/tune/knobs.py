# SPDX-License-Identifier: GPL-2.0-only
"""knobs - every setting a profile can change: read it, change it, put it back.

A profile becomes a list of entries (plain dicts, so the snapshot file can hold
them): `type` says which handler reads and writes it, `key` is its canonical
name (files by their resolved path, so two paths to one file are one entry),
`before` is the value read before anything changed and `target` the value the
profile wants. Handlers compare values the way the kernel means them (masks as
numbers, CPU lists as sets, "always [madvise] never" as its bracketed word).
"""
import errno
import glob
import os
import re
import signal
import subprocess
import sys
import time

from ..errors import UsageError
from ..system.cpus import cpulist_of
from ..system.files import write_atomic
from ..system.paths import state_dir
from ..system.procs import proc_stat
from ..values import format_cpulist

PF_NO_SETAFFINITY = 0x04000000
PF_KTHREAD = 0x00200000
DMA_LATENCY = "/dev/cpu_dma_latency"
DMA_DEFAULT_US = 2000000000
CPUSET_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$")


class KnobError(Exception):
    """A setting could not be read or written; the message says why."""


# ---------------------------------------------------------------- values

def norm_mask(text):
    """'00000003' or '3' or 'ff,ffffffff' -> the set of CPUs it holds."""
    m = int(text.replace(",", "").strip() or "0", 16)
    return frozenset(i for i in range(m.bit_length()) if m >> i & 1)


def norm_bracket(text):
    """'always [madvise] never' -> 'madvise'; a plain value as it is."""
    t = text.strip()
    if "[" in t and "]" in t:
        return t[t.index("[") + 1:t.index("]")]
    return t


def normalise(how, text):
    if text is None:
        return None
    if how == "mask":
        return norm_mask(text)
    if how == "list":
        return frozenset(cpulist_of(text))
    if how == "bracket":
        return norm_bracket(text)
    return " ".join(text.split())


def same(how, a, b):
    try:
        return normalise(how, a) == normalise(how, b)
    except (ValueError, UsageError):    # not a mask or a list ("absent"): as text
        return a == b


def _os_error(e, what):
    why = {errno.EIO: "the kernel refused it (EIO)", errno.EINVAL: "invalid value (EINVAL)",
           errno.EPERM: "not permitted (EPERM)", errno.EACCES: "permission denied",
           errno.ENOENT: "does not exist on this kernel",
           errno.EROFS: "read-only file system"}.get(e.errno, e.strerror)
    return KnobError("%s: %s" % (what, why))


def read_file(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError as e:
        raise _os_error(e, path)


def write_file(path, value):
    try:
        with open(path, "w") as f:
            f.write(str(value))
    except OSError as e:
        raise _os_error(e, "writing %r to %s" % (value, path))


# ---------------------------------------------------------------- files

def file_entry(label, path, target, how=None):
    """An entry for one sysctl or sysfs file (path resolved to its real file)."""
    real = os.path.realpath(path)
    if how is None:
        how = "mask" if real.endswith("cpumask") or real.endswith("smp_affinity") else (
            "bracket" if _is_bracket(real) else "text")
    return {"type": "file", "key": "file:" + real, "label": label, "path": real,
            "how": how, "target": target, "when": "runtime"}


def _is_bracket(path):
    try:
        return "[" in read_file(path)
    except KnobError:
        return False


# ---------------------------------------------------------------- IRQs

def irq_numbers():
    out = []
    for d in glob.glob("/proc/irq/[0-9]*"):
        if os.path.exists(os.path.join(d, "smp_affinity_list")):
            out.append(int(os.path.basename(d)))
    return sorted(out)


def irq_name(n):
    try:
        names = [e for e in os.listdir("/proc/irq/%d" % n)
                 if os.path.isdir("/proc/irq/%d/%s" % (n, e))]
    except OSError:
        names = []
    return ",".join(sorted(names)) or "-"


def irq_entry(n, target):
    return {"type": "file", "key": "irq:%d" % n, "label": "IRQ %d %s affinity" % (n, irq_name(n)),
            "path": "/proc/irq/%d/smp_affinity_list" % n, "how": "list", "target": target,
            "when": "runtime"}


# ---------------------------------------------------------------- tasks

def task_stat(tid):
    """(comm, flags, starttime) of a task, or None when it is gone."""
    st = proc_stat(tid)
    return None if st is None else (st.comm, st.flags, st.starttime)


def all_tids():
    """Every thread this /proc shows (in a pid namespace: only its own)."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            out += [int(t) for t in os.listdir("/proc/%s/task" % p)]
        except OSError:
            pass
    return sorted(out)


def task_entries(isolated, keep=()):
    """Entries moving every movable task off @isolated; and the pinned ones
    [(tid, comm)] the kernel does not let move (per-CPU kernel threads)."""
    iso, entries, pinned = set(isolated), [], []
    for tid in all_tids():
        if tid in keep:
            continue
        st = task_stat(tid)
        if st is None:
            continue
        comm, flags, start = st
        try:
            aff = os.sched_getaffinity(tid)
        except OSError:
            continue
        if not aff & iso:
            continue
        if flags & PF_NO_SETAFFINITY:
            pinned.append((tid, comm))
            continue
        left = aff - iso
        if not left:
            pinned.append((tid, comm))     # pinned to isolated CPUs on purpose
            continue
        entries.append({"type": "task", "key": "task:%d" % tid,
                        "label": "task %s (tid %d) affinity" % (comm, tid), "tid": tid,
                        "comm": comm, "starttime": start, "how": "list",
                        "target": format_cpulist(left), "when": "runtime"})
    return entries, pinned


def task_cmdline(tid):
    """What tuned's [scheduler] group rules match: the task's command line, its
    arguments joined by spaces, or "[comm]" for a kernel thread; None when gone."""
    try:
        with open("/proc/%d/cmdline" % tid, "rb") as f:
            raw = f.read()
    except OSError:
        return None
    if raw:
        return raw.rstrip(b"\0").replace(b"\0", b" ").decode("utf-8", "replace")
    st = task_stat(tid)
    return None if st is None else "[%s]" % st[0]


def group_entries(regex, cpus, keep=()):
    """Entries setting the affinity of every thread whose process's command line
    @regex (compiled) finds (re.search, as tuned does) to @cpus; and the ones the
    kernel does not let move [(tid, comm)]."""
    entries, pinned, target = [], [], format_cpulist(cpus)
    for tid in all_tids():
        if tid in keep:
            continue
        cmd = task_cmdline(tid)
        st = task_stat(tid)
        if cmd is None or st is None or not regex.search(cmd):
            continue
        comm, flags, start = st
        if flags & PF_NO_SETAFFINITY:
            pinned.append((tid, comm))
            continue
        entries.append({"type": "task", "key": "task:%d" % tid,
                        "label": "task %s (tid %d) affinity" % (comm, tid), "tid": tid,
                        "comm": comm, "starttime": start, "how": "list",
                        "target": target, "when": "runtime"})
    return entries, pinned


# ---------------------------------------------------------------- cpuset

def controller_root(controller):
    """(version, root folder) of cgroup @controller ("cpuset", "cpu"): the
    cgroup2 mount where it has it, else v1's; or (None, why not)."""
    with open("/proc/mounts") as f:
        mounts = [line.split() for line in f]
    for m in mounts:
        if m[2] == "cgroup2":
            ctl = os.path.join(m[1], "cgroup.controllers")
            try:
                if controller in read_file(ctl).split():
                    return 2, m[1]
            except KnobError:
                pass
    for m in mounts:
        if m[2] == "cgroup" and controller in m[3].split(","):
            return 1, m[1]
    return None, "no %s controller is mounted (cgroup v1 or v2)" % controller


def cpuset_root():
    """(version, root folder) of the cpuset controller, or (None, why not)."""
    return controller_root("cpuset")


def cpuset_entry(name, cpus):
    return {"type": "cpuset", "key": "cpuset:" + name, "label": "cpuset partition " + name,
            "name": name, "target": cpus, "how": "list", "when": "runtime"}


# ---------------------------------------------------------------- read / write

def read_value(e):
    """The entry's current value as text, None when it does not exist."""
    t = e["type"]
    if t == "file":
        try:
            v = read_file(e["path"])
        except KnobError:
            return None
        return norm_bracket(v) if e["how"] == "bracket" else v
    if t == "task":
        st = task_stat(e["tid"])
        if st is None or st[2] != e["starttime"]:
            return None
        try:
            return format_cpulist(os.sched_getaffinity(e["tid"]))
        except OSError:
            return None
    if t == "dma_latency":
        return str(read_dma_latency())
    if t == "cpuset":
        d = cpuset_dir(e)
        if not d or not os.path.isdir(d):
            return "absent"
        return read_file(os.path.join(d, "cpuset.cpus"))
    if t == "boot":
        return boot_param_now(e["param"])
    raise KnobError("unknown entry type %r" % t)


def write_value(e, value):
    """Set the entry to @value (a target or a 'before'); KnobError says why not."""
    t = e["type"]
    if t == "file" and e["key"].startswith("irq:"):
        try:
            with open(e["path"], "w") as f:
                f.write(str(value))
        except OSError as ex:
            if ex.errno == errno.EPERM:
                raise KnobError("a managed IRQ: the kernel places it on the CPUs of its "
                                "queue and refuses other affinities (EPERM)")
            raise _os_error(ex, "writing %r to %s" % (value, e["path"]))
        return
    if t == "file":
        write_file(e["path"], value)
        return
    if t == "task":
        if read_value(e) is None:
            raise KnobError("task %s (tid %d) has exited" % (e["comm"], e["tid"]))
        try:
            os.sched_setaffinity(e["tid"], cpulist_of(value))
        except OSError as ex:
            raise _os_error(ex, "task %s (tid %d)" % (e["comm"], e["tid"]))
        return
    if t == "dma_latency":
        if value == e["before"]:
            stop_dma_holder()
        else:
            start_dma_holder(int(value))
        return
    if t == "cpuset":
        if value == "absent":
            remove_cpuset(e)
        else:
            make_cpuset(e, value)
        return
    raise KnobError("%s is set at boot, not at run time" % e["label"])


def matches(e, value, want):
    if value is None or want is None:
        return value == want
    if e["type"] == "dma_latency":
        return int(value) <= int(want) if want != e.get("before") else True
    return same(e.get("how", "text"), value, want)


# ---------------------------------------------------------------- cpu_dma_latency

def read_dma_latency():
    """The PM QoS CPU latency the kernel enforces now, in us."""
    try:
        with open(DMA_LATENCY, "rb") as f:
            raw = f.read(4)
        return int.from_bytes(raw, "little", signed=True)
    except OSError as e:
        raise _os_error(e, DMA_LATENCY)


def dma_pidfile():
    return os.path.join(state_dir(), "cpu_dma_latency.pid")


HOLDER_TAG = "jtr-cpu-dma-latency-holder"
# The holder waits at its gate until the applier has recorded it (pid and start
# time in the pidfile), and only then opens the device: if the applier dies
# first, the gate reads end-of-file and the holder leaves without holding
# anything. So a holder that holds the device is always one revert can find.
HOLDER = r"""
import os, signal, sys
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
us, gate, status = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
if os.read(gate, 3) != b"go\n":
    sys.exit(1)
os.close(gate)
fd = os.open("/dev/cpu_dma_latency", os.O_WRONLY)
os.write(fd, us.to_bytes(4, "little", signed=True))
os.write(status, b"ok\n")
os.close(status)
while True:
    signal.pause()
"""


def holder_pid():
    """The recorded holder's pid while that very process (same start time) lives."""
    try:
        pid, start = read_file(dma_pidfile()).split()
        st = task_stat(int(pid))
        if st and st[2] == int(start) and not _is_zombie(int(pid)):
            return int(pid)
    except (KnobError, ValueError):
        pass
    return None


def start_dma_holder(us):
    """Hold /dev/cpu_dma_latency at @us from a small process of its own (the
    request lasts while the file is open), recorded in the state folder before
    it opens the device (see HOLDER)."""
    stop_dma_holder()
    gate_r, gate_w = os.pipe()
    status_r, status_w = os.pipe()
    try:
        p = subprocess.Popen([sys.executable, "-c", HOLDER, str(us), str(gate_r), str(status_w),
                              HOLDER_TAG, dma_pidfile()], pass_fds=(gate_r, status_w),
                             start_new_session=True, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
    except OSError as e:
        for fd in (gate_r, gate_w, status_r, status_w):
            os.close(fd)
        raise _os_error(e, "starting the holder of %s" % DMA_LATENCY)
    os.close(gate_r)
    os.close(status_w)
    try:
        st = task_stat(p.pid)
        if st is None:
            raise KnobError("the holder of %s exited at once" % DMA_LATENCY)
        write_atomic(dma_pidfile(), "%d %d\n" % (p.pid, st[2]))
        os.write(gate_w, b"go\n")
    finally:
        os.close(gate_w)                # an applier killed before "go": the holder leaves
    with os.fdopen(status_r) as f:
        ok = f.read()
    if ok != "ok\n":
        p.wait()
        stop_dma_holder()
        why = p.stderr.read().decode(errors="replace").strip().splitlines()
        raise KnobError("holding %s: %s" % (DMA_LATENCY, why[-1] if why else
                                            "the holder exited (%s)" % p.returncode))
    p.stderr.close()


def stop_dma_holder():
    """Stop the recorded holder (SIGTERM, then SIGKILL) and forget it, and end any
    holder of the same state folder never recorded (its applier killed between
    starting it and writing the pidfile: it holds nothing and would leave by itself
    once it reads its closed gate, a moment after a revert said it was done);
    KnobError when one does not end."""
    pid = holder_pid()
    if pid:
        _end(pid, (signal.SIGTERM, signal.SIGKILL))
    for stray in unrecorded_holders():
        _end(stray, (signal.SIGKILL,))
    try:
        os.unlink(dma_pidfile())
    except OSError:
        pass


def unrecorded_holders():
    """The pids of holders (HOLDER's code, HOLDER_TAG and this state folder's
    pidfile in their arguments) of this user that are not the recorded one and
    have not ended."""
    mine, out = holder_pid(), []
    tail = [HOLDER_TAG.encode(), dma_pidfile().encode()]
    for d in glob.glob("/proc/[0-9]*"):
        try:
            if os.stat(d).st_uid != os.geteuid():
                continue
            with open(os.path.join(d, "cmdline"), "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        pid = int(os.path.basename(d))
        if len(argv) >= 8 and argv[1] == b"-c" and argv[2] == HOLDER.encode() and \
                argv[6:8] == tail and pid != mine and not _is_zombie(pid):
            out.append(pid)
    return out


def _end(pid, signals):
    """Send @signals to @pid in turn, each given 2 s to end it; KnobError when it
    does not."""
    for sig in signals:
        try:
            os.kill(pid, sig)
        except OSError:
            return
        end = time.monotonic() + 2.0
        while not _is_zombie(pid) and time.monotonic() < end:
            time.sleep(0.005)
        if _is_zombie(pid):
            return
    raise KnobError("the holder of %s (pid %d) does not end" % (DMA_LATENCY, pid))


def _is_zombie(pid):
    st = proc_stat(pid)
    return st is None or st.state in ("Z", "X")


# ---------------------------------------------------------------- cpuset

def cpuset_name_problem(name):
    """Why @name is not a cpuset jtr may create (one folder right under the
    cgroup mount), or None."""
    if not isinstance(name, str) or not CPUSET_NAME_RE.match(name) or name in (".", ".."):
        return "a cpuset name is one folder name under the cgroup mount (no '/', no '..')"
    return None


def cpuset_path(name):
    """(version, root, folder) of cpuset @name; KnobError when there is no cpuset
    controller or the folder would not be right under the mount."""
    ver, root = cpuset_root()
    if ver is None:
        raise KnobError(root)
    why = cpuset_name_problem(name)
    d = os.path.join(root, name)
    if why is None and os.path.dirname(os.path.realpath(d)) != os.path.realpath(root):
        why = "%s is not right under %s" % (os.path.realpath(d), root)
    if why:
        raise KnobError("cpuset %r: %s" % (name, why))
    return ver, root, d


def cpuset_dir(e):
    try:
        return cpuset_path(e["name"])[2]
    except KnobError:
        return None


def make_cpuset(e, cpus):
    ver, root, d = cpuset_path(e["name"])
    try:
        os.mkdir(d)
    except FileExistsError:
        pass
    except OSError as ex:
        raise _os_error(ex, d)
    if ver == 2:
        sub = os.path.join(root, "cgroup.subtree_control")
        if "cpuset" not in read_file(sub).split():
            write_file(sub, "+cpuset")
        write_file(os.path.join(d, "cpuset.cpus"), cpus)
        write_file(os.path.join(d, "cpuset.cpus.partition"), "isolated")
        got = read_file(os.path.join(d, "cpuset.cpus.partition"))
        if got != "isolated":
            raise KnobError("cgroup v2 partition %s is %r, not isolated" % (d, got))
    else:
        write_file(os.path.join(d, "cpuset.cpus"), cpus)
        write_file(os.path.join(d, "cpuset.mems"), read_file(os.path.join(root, "cpuset.mems")))
        write_file(os.path.join(d, "cpuset.cpu_exclusive"), "1")
        write_file(os.path.join(d, "cpuset.sched_load_balance"), "0")


def remove_cpuset(e):
    """Move the partition's tasks back to the parent and remove it."""
    try:
        _, root, d = cpuset_path(e["name"])
    except KnobError:
        if cpuset_root()[0] is None:
            return                      # no cpuset controller: nothing was made
        raise
    if not os.path.isdir(d):
        return
    procs = "cgroup.procs"
    for _ in range(3):
        try:
            pids = read_file(os.path.join(d, procs)).split()
        except KnobError:
            pids = []
        for pid in pids:
            try:
                write_file(os.path.join(root, procs), pid)
            except KnobError:
                pass
        try:
            os.rmdir(d)
            return
        except OSError as ex:
            err = ex
            time.sleep(0.05)
    raise _os_error(err, "removing " + d)


# ---------------------------------------------------------------- boot

def cmdline():
    return read_file("/proc/cmdline").split()


def boot_param_now(param):
    """The value of a kernel parameter on this boot's command line, or 'absent'."""
    for w in cmdline():
        k, eq, v = w.partition("=")
        if k == param:
            return v if eq else "(set)"
    return "absent"
