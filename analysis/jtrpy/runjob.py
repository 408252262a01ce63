"""runjob - `jtr run`, the main job: tracer beside the gap probe, then attribution.

Order: start jtr-trace on the probe's CPUs (it drains its buffer from another
CPU), wait until it says it is tracing, run jtr-gap, stop the tracer, move its
event log into the probe's results folder, attribute, and add the attribution
to result.json (atomically) with a text table beside it. Without root or BPF
the probe still runs and the reason attribution is missing is printed.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

from .cpus import default_cpu
from .errors import UsageError
from .paths import probe_path
from .result import load_result, save_result, write_atomic
from .procs import proc_stat

TRACER_START_TIMEOUT_S = 60


def option_value(args, short, longs):
    """The value of gap option -@short / --@longs in @args (last one wins), or None."""
    val = None
    i = 0
    while i < len(args):
        a = args[i]
        if (a == "-" + short or a in ["--" + n for n in longs]) and i + 1 < len(args):
            val = args[i + 1]
            i += 1
        elif any(a.startswith("--%s=" % n) for n in longs):
            val = a.split("=", 1)[1]
        elif a.startswith("-" + short) and len(a) > 2 and not a.startswith("--"):
            val = a[2:]
        elif a == "--":
            break
        i += 1
    return val


def cpus_option(args):
    """The CPUs the gap probe will measure, as given with -c, or None."""
    return option_value(args, "c", ("cpu", "cpus"))


def tracer_unavailable():
    """Why the tracer cannot run here, or None when it can."""
    if os.environ.get("JTR_NO_BPF"):
        return "BPF is switched off for this run (JTR_NO_BPF is set)"
    if os.geteuid() != 0:
        return ("the kernel-event tracer needs root (or CAP_BPF and CAP_PERFMON): run "
                "'sudo jtr run'")
    try:
        probe_path("trace")
    except Exception as e:  # noqa: BLE001 - JtrError with the build hint
        return str(e)
    return None


class Tracer:
    """jtr-trace running in the background, writing into a temporary folder."""

    backend = "ebpf"

    def __init__(self, cpus, extra=()):
        self.dir = tempfile.mkdtemp(prefix="jtr-trace-")
        cmd = [probe_path("trace"), "-o", self.dir]
        if cpus:
            cmd += ["-c", cpus]
        cmd += list(extra)
        self.proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=dict(os.environ, JTR_PROG="jtr run: tracer"), restore_signals=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        self.banner = None
        self.out = []
        self.err = ""

    def wait_ready(self):
        """Block until the tracer prints its 'tracing ...' line; None or why it failed."""
        result = {}

        def read():
            for line in self.proc.stdout:
                if line.startswith("tracing "):
                    result["banner"] = line.strip()
                    return
                self.out.append(line)

        t = threading.Thread(target=read, daemon=True)
        t.start()
        t.join(TRACER_START_TIMEOUT_S)
        if "banner" in result:
            self.banner = result["banner"]
            return None
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.err = self.proc.stderr.read().strip()
        self.cleanup()
        return self.err.splitlines()[-1] if self.err else "the tracer did not start"

    def stop(self):
        """SIGTERM the tracer (it writes its files and exits); its exit status.
        Not SIGINT: after a Ctrl-C at the terminal it already had one, and a
        second SIGINT means 'abort' to it."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        out, err = self.proc.communicate()
        self.out.append(out)
        # the tracer's own "stopping: ..." notice is for a person at its terminal
        self.err = "\n".join(line for line in err.splitlines()
                             if line.strip() and "stopping: writing" not in line)
        return self.proc.returncode

    def move_into(self, outdir):
        """Move events.bin and trace.json into the probe's results folder."""
        for name in ("events.bin", "trace.json"):
            src = os.path.join(self.dir, name)
            if not os.path.exists(src):
                raise FileNotFoundError(src)
            shutil.move(src, os.path.join(outdir, name))
        self.cleanup()

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def attribution_of(outdir, slack_ns=None, top=None, events_path=None, cross_check=None):
    """The attribution of the run in @outdir and, when @cross_check is given
    ({"sched_data": PATH or None, "min_ns": NS or None}), a function that
    compares it with perf sched timehist and returns the cross_check section.
    Nothing is written. Usage errors of the cross-check come before the work."""
    from . import attribute as att
    from . import crosscheck as xc

    kw = {}
    if slack_ns is not None:
        kw["slack_ns"] = slack_ns
    if top is not None:
        kw["top"] = top
    if cross_check is None:
        return att.attribute_dir(outdir, events_path=events_path, **kw), None
    sched = xc.sched_data_path(outdir, cross_check.get("sched_data"))
    outcomes = []
    a = att.attribute_dir(outdir, events_path=events_path,
                          each=lambda *o: outcomes.append(o), **kw)
    rel = os.path.relpath(sched, outdir)
    name = sched if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel

    def check(result):
        return xc.check(result, outcomes, sched, min_ns=cross_check.get("min_ns"),
                        sched_name=name)
    return a, check


def attribute_into(outdir, slack_ns=None, top=None, events_path=None, cross_check=None,
                   strict=True):
    """Attribute the run in @outdir, add it to result.json, write attribution.txt;
    returns the table's lines. With @cross_check (see attribution_of) the
    comparison with perf sched timehist is added too ("cross_check", and its
    lines after the table); without it an earlier cross_check is removed, as it
    judged an earlier attribution. A cross-check that fails after the
    attribution raises UsageError if @strict, else says why in its lines."""
    from . import attribute as att
    from . import crosscheck as xc

    result = load_result(outdir)
    a, check = attribution_of(outdir, slack_ns=slack_ns, top=top, events_path=events_path,
                              cross_check=cross_check)
    lines = att.format_table(a)
    write_atomic(os.path.join(outdir, "attribution.txt"), "\n".join(lines) + "\n")
    result["attribution"] = a
    result.pop("cross_check", None)
    files = result.setdefault("files", {})
    if events_path is None:
        files["events"] = "events.bin"
        files["trace"] = "trace.json"
    files["attribution"] = "attribution.txt"
    if check is not None:
        try:
            cc = check(result)
        except UsageError as e:
            if strict:
                save_result(outdir, result)
                raise
            lines += ["", "cross-check: not run: %s" % e]
        else:
            result["cross_check"] = cc
            if not os.path.isabs(cc["sched_data"]):
                files[xc.FILE_ROLE] = cc["sched_data"]
            lines += [""] + xc.format_lines(cc, a["outliers"].get("start_ns") or 0)
    save_result(outdir, result)
    return lines


def signal_children(sig, comm=None):
    """Send @sig to this process's children (named @comm, if given)."""
    me = os.getpid()
    for p in os.listdir("/proc"):
        st = proc_stat(int(p)) if p.isdigit() else None
        if st and st.ppid == me and comm in (None, st.comm):
            try:
                os.kill(int(p), sig)
            except OSError:
                pass


def start_probe(name, args, env, **popen_kw):
    """Start jtr-NAME with @args: signals as a shell would leave them, so the
    first Ctrl-C (or SIGTERM) makes it write what it measured and exit."""
    return subprocess.Popen([probe_path(name)] + list(args), env=env, restore_signals=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
                            **popen_kw)


def run_gap(args, env):
    """Run jtr-gap with @args, its output passed through; (exit status, folder)."""
    outdir = None
    child = start_probe("gap", args, env, stdout=subprocess.PIPE, text=True)
    for line in child.stdout:
        if line.startswith("results: "):
            outdir = line[len("results: "):].strip().rstrip("/")
        sys.stdout.write(line)
        sys.stdout.flush()
    rc = child.wait()
    if rc == 0 and outdir is None:
        # -q: the probe did not say where; it is -o, or the latest under results/
        outdir = option_value(args, "o", ("output",)) or os.path.join("results", "latest")
    return rc, outdir


def start_tracer(backend, cpus, tracer_args):
    """Start the tracer for @backend ('ebpf', 'perf' or 'auto': eBPF, else perf);
    returns (tracer, None) or (None, why there is none)."""
    from . import perftrace

    why = None
    if backend in ("ebpf", "auto"):
        why = tracer_unavailable()
        if why is None:
            tracer = Tracer(cpus, tracer_args)
            why = tracer.wait_ready()
            if why is None:
                return tracer, None
            bad = re.match(r"jtr run: tracer: -([bi]) (.*)", why)
            if tracer.proc.returncode == 2 and bad:
                opt = {"b": "--trace-buffer", "i": "--drain-interval"}[bad.group(1)]
                raise UsageError("%s %s" % (opt, bad.group(2)))
        if backend == "ebpf":
            return None, why
    why_perf = perftrace.unavailable()
    if why_perf is None:
        tracer = perftrace.PerfTracer(cpus or str(default_cpu()),
                                      tempfile.mkdtemp(prefix="jtr-perf-"))
        why_perf = tracer.wait_ready()
        if why_perf is None:
            if why:
                sys.stderr.write("jtr run: eBPF tracer unavailable (%s); tracing with perf\n"
                                 % why)
            return tracer, None
        tracer.cleanup()
    return None, "; ".join(w for w in (why, why_perf) if w)


def start_recorder(cpus):
    """perf sched record beside the tracer, for --cross-check: (recorder, None) or
    (None, why there is none)."""
    from .crosscheck import SchedRecorder

    rec = SchedRecorder(cpus or str(default_cpu()))
    why = rec.wait_ready()
    if why:
        rec.cleanup()
        return None, why
    return rec, None


def run(args, trace=True, tracer_args=(), slack_ns=None, top=None, backend="auto",
        cross_check=None):
    """The whole job; returns (exit status, folder, attribution lines or None, why not).
    cross_check: None, or {"min_ns": NS or None} to record the scheduler's events
    with perf beside the tracer and compare them with the attribution."""
    env = dict(os.environ, JTR_PROG="jtr run")
    why = None if trace else "tracing was switched off (--no-trace)"
    tracer = recorder = None
    xwhy = None
    # the children get Ctrl-C from the terminal and finish their files; we wait for
    # them, and only note it (a Ctrl-C before the probe starts ends the job)
    interrupted = []

    def on_sigint(*_):
        # a Ctrl-C reaches the probe too; a SIGINT sent to jtr alone does not, so
        # pass it on as SIGTERM (the probe's stop request either way; a second
        # SIGINT would abort it)
        interrupted.append(1)
        signal_children(signal.SIGTERM, "jtr-gap")
    old = signal.signal(signal.SIGINT, on_sigint)
    try:
        if why is None:
            tracer, why = start_tracer(backend, cpus_option(args), tracer_args)
        if tracer and cross_check is not None and not interrupted:
            recorder, xwhy = start_recorder(cpus_option(args))
        if interrupted:
            for t in (tracer, recorder):
                if t:
                    t.stop()
                    t.cleanup()
            raise KeyboardInterrupt
        rc, outdir = run_gap(args, env)
        trc = tracer.stop() if tracer else None
        xrc = recorder.stop() if recorder else None
    finally:
        signal.signal(signal.SIGINT, old)
    for t in (tracer, recorder):
        if t and t.err:
            sys.stderr.write(t.err + "\n")
    if rc != 0 or not outdir:
        for t in (tracer, recorder):
            if t:
                t.cleanup()
        return rc, outdir, None, why
    if recorder:
        if xrc == 0:
            recorder.move_into(outdir)
        else:
            recorder.cleanup()
            xwhy = "perf sched record failed: %s" % (recorder.err or "exit %d" % xrc)
            recorder = None
    if tracer:
        if trc != 0:
            tracer.cleanup()
            return rc, outdir, None, "the tracer failed: %s" % (tracer.err or "exit %d" % trc)
        tracer.move_into(outdir)
        try:
            lines = attribute_into(outdir, slack_ns=slack_ns, top=top, strict=False,
                                   cross_check=dict(cross_check, sched_data=None)
                                   if recorder else None)
        except UsageError as e:
            return rc, outdir, None, str(e)
        if xwhy:
            lines += ["", "cross-check: not run: %s" % xwhy]
        return rc, outdir, lines, None
    return rc, outdir, None, why
