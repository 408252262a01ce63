# SPDX-License-Identifier: GPL-2.0-only
"""watch - jtr watch: the tracer in its --watch mode on the CPUs where an
application runs, for as long as it is left running; its state lines become
Prometheus metrics (served, and/or written as a textfile), its dumps are
announced, and at the end the last state is kept in DIR/watch.json.

The tracer (ebpf/trace.c --watch, ebpf/watch.c) does the counting; this side
reads one line of JSON a --interval from its stdout, so jtr watch's own cost
is a few parses a second whatever the event rate.

watch_job is the command's job: the CPUs by default (the isolated ones), the
checks of the options the tracer takes, then the watch; the command prints
when it starts, each dump and the progress as they come (the callbacks), and
the end (render/watch.py)."""
import json
import os
import subprocess
import time
from collections import namedtuple

from ..errors import EXIT_FAILED, EXIT_INTERRUPTED, JtrError, UsageError
from ..formats import watch_metrics as wm
from ..results.result import make_results_dir
from ..system import signals
from ..system.cpus import isolated_cpus
from ..system.files import check_outputs, size_text, write_json
from ..system.memory import available_bytes
from ..system.paths import probe_path
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


def listen(o, collector):
    """Serve @collector on --listen, or UsageError naming the address and the fix."""
    if o.listen is None:
        return
    addr, port = o.listen
    try:
        wm.serve(collector, addr, port)
    except (OSError, UnicodeError) as e:
        # a name that does not resolve is a socket.gaierror (an OSError)
        raise UsageError("--listen %s:%d: %s; choose another address or port"
                         % (addr, port, getattr(e, "strerror", None) or e))


# what a watch ends with: the tracer's last state line (None when the tracer
# failed: it said why), the seconds watched, the folder, whether a stop ended
# it, and the exit status
Outcome = namedtuple("Outcome", "state seconds folder stopped rc unsaved", defaults=(None,))


def watch(o, started, dumped, progress):
    """Run the watch: @started() once the tracer runs, @dumped(the tracer's line
    of a dump) as each dump is written, @progress(the state line, seconds since
    the start) as each state line comes; an Outcome. With no @progress and no
    --textfile, nothing needs each state as it comes: the tracer keeps it in a
    memfd (--state-fd) that a scrape reads, and its stdout carries only the
    dumps and the last state (a wake-up of this process a --interval was half
    of what jtr watch cost beside a quiet application scraped every 15 s)."""
    if o.textfile:
        check_outputs([("--textfile", o.textfile)])    # before the tracer starts
    state_fd = os.memfd_create("jtr-watch-state") if progress is None and not o.textfile \
        else None
    collector = wm.Collector(state_fd)
    listen(o, collector)
    made = o.output is None or not os.path.exists(o.output)
    folder = make_results_dir("watch", o.output)
    start = time.time()
    state, dumps = {}, []
    with signals.measuring(stopping=""):
        fds = () if state_fd is None else (state_fd,)
        proc = signals.spawn([probe_path("trace")] + tracer_args(o, folder) +
                             ["--state-fd", str(state_fd)] * len(fds),
                             stdout=subprocess.PIPE, pass_fds=fds)
        started()
        for raw in proc.stdout:
            try:
                d = json.loads(raw)
            except ValueError:
                continue
            if "dump" in d:
                dumps.append(d)
                dumped(d)
                continue
            state = d
            if state_fd is None:
                collector.update(d)
            if o.textfile:
                try:
                    wm.write_textfile(o.textfile, collector)
                except OSError as e:
                    raise JtrError("cannot write --textfile %s: %s" % (o.textfile, e.strerror))
            if progress:
                progress(d, time.time() - start)
        rc = proc.wait()
    if state_fd is not None:
        if state:
            collector.update(state)     # the last, from stdout
        collector.state_fd = None
        os.close(state_fd)
    if rc != 0:
        if made and not os.listdir(folder):
            os.rmdir(folder)    # nothing was watched: leave nothing behind
        if rc < 0:
            raise JtrError("the tracer was killed by signal %d" % -rc)
        # the tracer said why, as "jtr watch: ..."
        return Outcome(None, time.time() - start, folder, signals.requested(), rc)
    if not state:
        raise JtrError("the tracer ended without a word on its stdout")
    end = time.time()
    path = os.path.join(folder, "watch.json")
    try:
        write_json(path, {
            "format": FORMAT, "tool": "watch", "cpus": list(o.cpus),
            "started": utc(start), "ended": utc(end), "duration_s": round(end - start, 3),
            "dump_above_ns": o.dump_above, "state": state, "dumps": dumps})
        unsaved = None
    except OSError as e:
        # a full disk: the counts are still the command's to show (they were lost
        # with a traceback-free error before they were printed)
        unsaved = "cannot write %s: %s" % (path, e.strerror or e)
    interrupted = signals.requested() and o.duration is not None
    return Outcome(state, end - start, folder, signals.requested(),
                   EXIT_FAILED if unsaved else EXIT_INTERRUPTED if interrupted else 0, unsaved)


def watch_job(o, started, dumped, progress):
    """jtr watch's job on its parsed options @o: the CPUs default to the isolated
    ones (none: UsageError), the ring buffer must be a power of two, at most
    MAX_APPS comms and MAX_APPS PIDs; then the watch, with the callbacks
    @started, @dumped and @progress (watch). An Outcome."""
    if o.cpus is None:
        o.cpus = isolated_cpus()
        if not o.cpus:
            raise UsageError("no isolated CPU to watch by default: give the application's "
                             "CPUs with -c LIST, e.g. -c 2-3")
    avail = available_bytes()
    if avail and o.recorder > avail // 2:
        # kernel memory for the whole watch, as the tracer checks too
        raise UsageError("--recorder %s: more than half the memory available now (%s); the "
                         "recorder is kernel memory while it watches: give at most %dM, "
                         "or free memory" % (size_text(o.recorder), size_text(avail),
                                             avail // 2 >> 20))
    if o.trace_buffer is not None and o.trace_buffer & (o.trace_buffer - 1):
        raise UsageError("--trace-buffer %s: the ring buffer must be a power of two from "
                         "4K to 1G, e.g. 4M" % o.trace_buffer)
    o.app = o.app or []
    for kind, n in (("PIDs", sum(w.isdigit() for w in o.app)),
                    ("comms", sum(not w.isdigit() for w in o.app))):
        if n > MAX_APPS:
            raise UsageError("--app: %d %s; at most %d" % (n, kind, MAX_APPS))
    return watch(o, started, dumped, progress)
