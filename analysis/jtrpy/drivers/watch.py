# SPDX-License-Identifier: GPL-2.0-only
"""watch - jtr watch: the tracer in its --watch mode on the CPUs where an
application runs, for as long as it is left running; its state lines become
Prometheus metrics (served, and/or written as a textfile), its dumps are
announced, and at the end the last state is kept in DIR/watch.json.

The tracer (ebpf/trace.c --watch, ebpf/watch.c) does the counting; this side
reads one line of JSON a --interval from its stdout, so jtr watch's own cost
is a few parses a second whatever the event rate.

watch_job is the command's job: the CPUs by default (the isolated ones), the
checks of the options the tracer takes, then the watch."""
import json
import os
import subprocess
import sys
import time

from ..errors import EXIT_INTERRUPTED, JtrError, UsageError
from ..formats import watch_metrics as wm
from ..render import watch as show
from ..render.text import cpus_text
from ..results.result import make_results_dir
from ..system import signals
from ..system.cpus import isolated_cpus
from ..system.files import write_json
from ..system.paths import probe_path
from ..units import fmt_ns
from ..values import format_cpulist

FORMAT = "jtr-watch/1"
MAX_APPS = 16           # comms, and PIDs (ebpf/trace.h JTR_TRACE_MAX_APPS)


def utc(t):
    """@t (seconds since the epoch) in ISO 8601 UTC."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def tracer_args(o, folder):
    """The jtr-trace command line of watch options @o, dumps under @folder."""
    a = ["--watch", "-c", format_cpulist(o.cpus), "-o", folder,
         "--state-interval", "%dns" % o.interval, "--keep", "%dns" % o.keep,
         "--dump-max", str(o.dump_max), "--recorder", str(o.recorder),
         "--names", str(o.names)]
    for app in getattr(o, "app", None) or ():
        a += ["--app", app]
    if o.dump_above is not None:
        a += ["--dump-above", "%dns" % o.dump_above]
    if o.duration is not None:
        a += ["-d", "%dns" % o.duration]
    if o.trace_buffer is not None:
        a += ["-b", str(o.trace_buffer)]
    if o.drain_interval is not None:
        a += ["-i", "%dns" % o.drain_interval]
    return a


def listen(o, reg):
    """Serve @reg on --listen, or UsageError naming the address and the fix."""
    if o.listen is None:
        return
    addr, port = o.listen
    try:
        wm.serve(reg, addr, port)
    except OSError as e:
        raise UsageError("--listen %s:%d: %s; choose another address or port"
                         % (addr, port, e.strerror or e))


def watch(o):
    """Run the watch; the exit status."""
    wm.require()
    collector = wm.Collector()
    reg = wm.registry(collector)
    listen(o, reg)
    made = o.output is None or not os.path.exists(o.output)
    folder = make_results_dir("watch", o.output)
    tty = sys.stderr.isatty() and not o.quiet
    start = time.time()
    state, dumps, line = {}, [], ""
    with signals.measuring(stopping=""):
        proc = signals.spawn([probe_path("trace")] + tracer_args(o, folder),
                             stdout=subprocess.PIPE)
        if not o.quiet:
            print("watching %s for %s: %s%s%s; Ctrl-C to stop" % (
                cpus_text(o.cpus), show.app_text(o.app),
                "metrics on http://%s:%d/metrics" % o.listen if o.listen else "no --listen",
                ", textfile %s" % o.textfile if o.textfile else "",
                ", dumps above %s" % o.dump_above_text if o.dump_above else ""), flush=True)
        for raw in proc.stdout:
            try:
                d = json.loads(raw)
            except ValueError:
                continue
            if "dump" in d:
                dumps.append(d)
                if not o.quiet:
                    sys.stderr.write(("\r\033[K" if tty else "") + show.dump_line(d) + "\n")
                continue
            state = d
            collector.update(d)
            if o.textfile:
                try:
                    wm.write_textfile(o.textfile, reg)
                except OSError as e:
                    raise JtrError("cannot write --textfile %s: %s" % (o.textfile, e.strerror))
            if tty:
                line = show.progress_line(d, time.time() - start)
                sys.stderr.write("\r\033[K" + line)
                sys.stderr.flush()
        rc = proc.wait()
    if tty and line:
        sys.stderr.write("\r\033[K")
    if rc != 0:
        if made and not os.listdir(folder):
            os.rmdir(folder)    # nothing was watched: leave nothing behind
        if rc < 0:
            raise JtrError("the tracer was killed by signal %d" % -rc)
        return rc               # the tracer said why, as "jtr watch: ..."
    if not state:
        raise JtrError("the tracer ended without a word on its stdout")
    end = time.time()
    write_json(os.path.join(folder, "watch.json"), {
        "format": FORMAT, "tool": "watch", "cpus": list(o.cpus),
        "started": utc(start), "ended": utc(end), "duration_s": round(end - start, 3),
        "dump_above_ns": o.dump_above, "state": state, "dumps": dumps})
    if not o.quiet:
        print("\n".join(show.table(state, end - start)))
        print("watch: %s; results: %s" % ("stopped" if signals.requested() else "done", folder))
    interrupted = signals.requested() and o.duration is not None
    return EXIT_INTERRUPTED if interrupted else 0


def watch_job(o):
    """jtr watch's job on its parsed options @o: the CPUs default to the isolated
    ones (none: UsageError), the ring buffer must be a power of two, at most
    MAX_APPS comms and MAX_APPS PIDs; then the watch. The exit status."""
    if o.cpus is None:
        o.cpus = isolated_cpus()
        if not o.cpus:
            raise UsageError("no isolated CPU to watch by default: give the application's "
                             "CPUs with -c LIST, e.g. -c 2-3")
    if o.trace_buffer is not None and o.trace_buffer & (o.trace_buffer - 1):
        raise UsageError("--trace-buffer %s: the ring buffer must be a power of two from "
                         "4K to 1G, e.g. 4M" % o.trace_buffer)
    o.app = o.app or []
    for kind, n in (("PIDs", sum(w.isdigit() for w in o.app)),
                    ("comms", sum(not w.isdigit() for w in o.app))):
        if n > MAX_APPS:
            raise UsageError("--app: %d %s; at most %d" % (n, kind, MAX_APPS))
    o.dump_above_text = fmt_ns(o.dump_above) if o.dump_above is not None else None
    return watch(o)
