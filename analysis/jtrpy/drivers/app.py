# SPDX-License-Identifier: GPL-2.0-only
"""app - jtr run app: time every call of a function of an unmodified program
with a uprobe and a uretprobe, and explain each slow call.

The tracer (jtr-trace --func BINARY:SYMBOL --pid PID) is the measuring program
here: beside the kernel's events it keeps a series of the calls per CPU (the
CPU a call entered on) and writes a probe's results of tool "app" into its
folder (result.json, outliers.csv, summary.txt; ebpf/calls.c). Its outliers are
then attributed like any probe's, with the calling thread of each CPU as the
probe's task and its own waits (blocked in a system call, then woken) as a
cause of their own (attribution/attribute.py, app).

Order: the binary and the function checked (system/elf.py: exit 2 and why for
a symbol that is not there, a stripped binary, an inlined function); with
-- CMD the program started held (a shell waiting on a pipe, exec'd once the
uprobes are in: no call is missed) as the user who ran sudo; the tracer on the
CPUs the program may run on; the program let go; the end (-d, the program's
exit, or a stop signal: the tracer records until then, the program is told to
stop when -d ends first); the folder attributed and saved once.
"""
import os
import re
import shutil
import tempfile
import time

from ..errors import UsageError
from ..system import signals
from ..system.cpus import online_cpus
from ..system.elf import Symbols
from ..values import format_duration
from .attribute import attribute_into, validity_of
from .gates import conclude, judge
from .programs import Program, stop
from .run import Job, env_of, read_detail, saved, took_result

# the settings of a run that measure it again (result.json "app"; jtr advise --prove)
SETTINGS = ("func", "usdt", "pid", "cmd", "cpus", "duration_ns", "threshold_ns", "warmup",
            "max_outliers", "trace_buffer", "drain_interval")
LIB_DIRS = ("/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib")


def split_func(text):
    """(binary, symbol) of --func BINARY:SYMBOL (at the last colon), or UsageError."""
    binary, sep, symbol = text.rpartition(":")
    if not sep or not binary or not symbol:
        raise UsageError("--func %s: give the binary and the function, e.g. --func "
                         "./my-app:on_tick or --func libc.so.6:malloc" % text)
    return binary, symbol


def split_usdt(text):
    """(binary, provider, start, end) of --usdt BINARY:PROVIDER:START,END, or
    UsageError."""
    head, sep, names = text.rpartition(":")
    binary, sep2, provider = head.rpartition(":")
    start, comma, end = names.partition(",")
    if not (sep and sep2 and binary and provider and start and comma and end) or "," in end:
        raise UsageError("--usdt %s: give the binary, the provider and the two probes, e.g. "
                         "--usdt ./my-app:myapp:request_start,request_end" % text)
    return binary, provider, start, end


def mapped(pid, name):
    """The path of the file named @name (a path, or a base name such as
    libc.so.6) that process @pid maps executable, or None."""
    try:
        with open("/proc/%d/maps" % pid) as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split(None, 5)
        if len(parts) < 6 or "x" not in parts[1] or not parts[5].startswith("/"):
            continue
        path = parts[5].replace(" (deleted)", "")
        if path == name or os.path.basename(path) == name:
            return path
    return None


def resolve(binary, pid):
    """The file to attach to for @binary, seen from jtr's mount namespace: with
    @pid, the one the process maps, through /proc/PID/root (its own mount
    namespace: a container's); else a path, a program on PATH or a library in
    the usual folders. UsageError when there is none."""
    if pid:
        path = mapped(pid, binary) or mapped(pid, os.path.basename(binary))
        if path is None and "/" in binary:
            path = binary
        if path is None:
            raise UsageError("--func %s: process %d maps no file of that name (grep %s "
                             "/proc/%d/maps shows what it maps); give the path of the "
                             "executable or the library" % (binary, pid, binary, pid))
        return os.path.join("/proc/%d/root" % pid, path.lstrip("/"))
    if "/" in binary:
        if not os.path.isfile(binary):
            raise UsageError("--func %s: no such file" % binary)
        return os.path.abspath(binary)
    found = shutil.which(binary)
    if found is None:
        for d in LIB_DIRS + tuple(os.path.join(d, m) for d in ("/lib", "/usr/lib")
                                  for m in _multiarch()):
            if os.path.isfile(os.path.join(d, binary)):
                found = os.path.join(d, binary)
                break
    if found is None:
        raise UsageError("--func %s: not a program on PATH nor a library in %s: give its "
                         "path" % (binary, ", ".join(LIB_DIRS)))
    return os.path.realpath(found)


def _multiarch():
    """The multiarch folder names of this machine (x86_64-linux-gnu, ...)."""
    try:
        return [d for d in os.listdir("/usr/lib") if re.fullmatch(r"\w+-linux-gnu\w*", d)]
    except OSError:
        return []


def process_cpus(pid):
    """The CPUs any thread of @pid may run on (its affinity), in order."""
    cpus = set()
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        raise UsageError("--pid %d: no process %d is running" % (pid, pid))
    for t in tids:
        try:
            cpus |= os.sched_getaffinity(int(t))
        except OSError:
            continue
    return sorted(cpus & set(online_cpus())) or online_cpus()


def check_pid(pid):
    if not os.path.isdir("/proc/%d" % pid):
        raise UsageError("--pid %d: no process %d is running; give the PID of a running "
                         "process (pgrep NAME finds it)" % (pid, pid))


def _user_kw():
    """Popen's user and group for a program started under sudo: the user who ran
    it, not root (its files are theirs)."""
    uid, gid = os.environ.get("SUDO_UID"), os.environ.get("SUDO_GID")
    if os.geteuid() != 0 or not uid or not uid.isdigit() or not (gid or "").isdigit():
        return {}
    return {"user": int(uid), "group": int(gid), "extra_groups": []}


class Held:
    """The program of -- CMD, started and held in a shell that waits on a pipe;
    go() lets it exec the command."""

    def __init__(self, cmd):
        r, self.w = os.pipe()
        try:
            self.proc = signals.spawn(
                ["sh", "-c", 'read _ <&%d || exit 127; exec %d<&-; exec "$@"' % (r, r), "sh"]
                + list(cmd), pass_fds=(r,), stop=True, **_user_kw())
        except OSError as e:
            os.close(self.w)
            raise UsageError("cannot start %s: %s" % (cmd[0], e.strerror or e))
        finally:
            os.close(r)
        self.pid = self.proc.pid

    def go(self):
        os.write(self.w, b"go\n")
        os.close(self.w)
        self.w = None

    def cancel(self):
        if self.w is not None:
            os.close(self.w)        # read fails: the shell exits without the command
            self.w = None
        stop(self.proc)


def _ready(proc, detail, progress=None):
    """Until the tracer says it traces (every program attached): True; False if
    it ended or a stop came. No time limit: the attach took minutes on an
    emulated machine beside a busy CPU (each code patch waits for that CPU),
    and a limit of 30 s then held the program back for good, the run timing no
    call; the wait is said on a terminal, and Ctrl-C ends it."""
    ready = False
    while not ready and proc.poll() is None and not signals.requested():
        detail.seek(0)
        ready = b"tracing CPU" in detail.read()
        if not ready:
            if progress is not None:
                progress("waiting for jtr-trace to attach its programs (the program starts "
                         "then)")
            time.sleep(0.01)
    if progress is not None:
        progress.done()
    return ready and not signals.requested()


def app_job(o, progress=None):
    """jtr run app's job on the command's settings @o (commands/run.py
    app_options), concluded as jtr run's are (drivers/gates.conclude: --junit's
    report, the exit status). (Job, exit status)."""
    started = time.time()
    job = measure_app(o, progress)
    return job, conclude(job, o.get("junit"), "jtr run", "app", started, o["command"],
                         o["gates"])


def measure_app(o, progress=None):
    """The measurement of app_job: a Job."""
    if o.get("usdt"):
        binary, provider, start, end = split_usdt(o["usdt"])
    else:
        binary, symbol = split_func(o["func"])
    if o["pid"] is not None:
        check_pid(o["pid"])
    if o["cmd"]:
        prog = shutil.which(o["cmd"][0]) if "/" not in o["cmd"][0] else o["cmd"][0]
        if not prog or not os.access(prog, os.X_OK):
            raise UsageError("%s: no such program (give its path, or put it on PATH)"
                             % o["cmd"][0])
    if o["cmd"] and "/" not in binary and binary == os.path.basename(o["cmd"][0]):
        binary = prog       # the program started: the one PATH finds
    path = resolve(binary, o["pid"])
    if o.get("usdt"):
        Symbols(path).check_usdt(binary, provider, (start, end))
        what = ["--usdt", "%s:%s:%s,%s" % (path, provider, start, end)]
    else:
        Symbols(path).check(binary, symbol)
        what = ["--func", "%s:%s" % (path, symbol)]
    job = Job()
    held = None
    with signals.measuring():
        if o["cmd"]:
            held = Held(o["cmd"])
        pid = o["pid"] if o["pid"] is not None else held.pid if held else None
        cpus = o["cpus"] or (process_cpus(pid) if pid else online_cpus())
        args = what + ["-c", ",".join(map(str, cpus))]
        if pid:
            args += ["--pid", str(pid)]
        if o["duration_ns"]:
            args += ["-d", format_duration(o["duration_ns"])]
        for opt, key in (("--threshold", "threshold_ns"), ("--warmup", "warmup"),
                         ("--max-outliers", "max_outliers"), ("-b", "trace_buffer")):
            if o.get(key) is not None:
                args += [opt, format_duration(o[key]) if key == "threshold_ns" else str(o[key])]
        if o.get("drain_interval") is not None:
            args += ["-i", format_duration(o["drain_interval"])]
        if o["output"]:
            args += ["-o", o["output"]]
        # jtr itself (its wait for the program polls) off the CPUs the program
        # runs on, where others are allowed: it preempted the timed thread there
        # (back after: jtr ab starts the program again from here)
        mine = os.sched_getaffinity(0)
        off = set(mine) - set(cpus)
        if off:
            os.sched_setaffinity(0, off)
        detail = tempfile.TemporaryFile()
        try:
            tracer = Program("trace", args, env=env_of("jtr run app", True), stdout=detail)
            if held:
                if not _ready(tracer.proc, detail, progress):
                    held.cancel()
                else:
                    held.go()
                    # the tracer ends once the program is gone (or at -d, or a stop)
                    while held.proc.poll() is None and tracer.poll() is None:
                        time.sleep(0.05)
                    if held.proc.poll() is None:
                        stop(held.proc)
            job.rc, folder = tracer.run()
        except BaseException:
            detail.close()
            if held:
                held.cancel()
            raise
        finally:
            os.sched_setaffinity(0, mine)
    job.detail = read_detail(detail)
    if not took_result(job, folder):
        return job
    if o.get("quiet"):
        job.detail = ""     # the tracer's summary (its readiness is read from it: not -q)
    # how to measure it again (jtr advise --prove runs it in jtr ab): the settings
    job.result["app"] = {k: o.get(k) for k in SETTINGS}
    job.result["command"] = list(o.get("argv") or job.result.get("command") or [])
    job.result["validity"] = validity_of(job.result)
    try:
        try:
            job.lines = attribute_into(job.result, slack_ns=o.get("slack_ns"),
                                       top=o.get("top"), strict=False, progress=progress,
                                       save=False)
        except UsageError as e:
            job.why = str(e)
        finally:
            if progress is not None:
                progress.done()
        if any(g is not None for g in o["gates"]):
            job.cases = judge(job.result, *o["gates"], why=job.why)
    finally:
        saved(job.result, folder)
    return job
