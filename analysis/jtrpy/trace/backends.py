# SPDX-License-Identifier: GPL-2.0-only
"""backends - which tracer records a run: the eBPF tracer, or perf record on
the same tracepoints where BPF is not allowed (vocab.BACKENDS)."""
import re
import tempfile

from ..errors import UsageError
from ..system.cpus import default_cpu
from . import ebpf, perf, sched

# the tracer's own options, as jtr run names them
TRACER_OPTIONS = {"b": "--trace-buffer", "i": "--drain-interval"}


def start(backend, cpus, tracer_args=(), prog="jtr run"):
    """Start the tracer of @backend ("ebpf", "perf", or "auto": eBPF, else perf) on
    @cpus (a CPU list text, None for the default CPU) and wait until it records.
    Returns (tracer, None, notice) or (None, why there is none, None); notice says
    why perf traces when eBPF was wanted. UsageError when the tracer refuses one
    of @tracer_args."""
    why = None
    if backend in ("ebpf", "auto"):
        why = ebpf.unavailable()
        if why is None:
            tracer = ebpf.Tracer(cpus, tracer_args, prog)
            why = _ready(tracer)
            if why is None:
                return tracer, None, None
            bad = re.match(r"%s: tracer: -([bi]) (.*)" % re.escape(prog), why)
            if tracer.proc.returncode == 2 and bad:
                raise UsageError("%s %s" % (TRACER_OPTIONS[bad.group(1)], bad.group(2)))
        if backend == "ebpf":
            return None, why, None
    why_perf = perf.unavailable()
    if why_perf is None:
        tracer = perf.PerfTracer(cpus or str(default_cpu()), tempfile.mkdtemp(prefix="jtr-perf-"))
        why_perf = _ready(tracer)
        if why_perf is None:
            notice = "eBPF tracer unavailable (%s); tracing with perf" % why if why else None
            return tracer, None, notice
        tracer.cleanup()
    return None, "; ".join(w for w in (why, why_perf) if w), None


def _ready(tracer):
    """@tracer started: None, or why not. A stop (Ctrl-C, SIGTERM) or an error while
    it starts ends it and removes its folder before going on up (the jtr run killed
    as its perf tracer started left an empty /tmp/jtr-perf-* behind)."""
    try:
        return tracer.wait_ready()
    except BaseException:
        if tracer.proc is not None and tracer.proc.poll() is None:
            tracer.proc.kill()
            tracer.proc.wait()
        tracer.cleanup()
        raise


def start_recorder(cpus):
    """perf sched record beside the tracer (the cross-check): (recorder, None) or
    (None, why there is none)."""
    rec = sched.SchedRecorder(cpus or str(default_cpu()))
    why = _ready(rec)
    if why:
        rec.cleanup()
        return None, why
    return rec, None
