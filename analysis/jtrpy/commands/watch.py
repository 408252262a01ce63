# SPDX-License-Identifier: GPL-2.0-only
"""watch - jtr watch -c LIST [--app COMM|PID]: the interruptions of an
application on the CPUs where it runs, by cause, as Prometheus metrics, for as
long as it is left running (drivers/watch.py's watch_job watches; the lines:
render/watch.py)."""
import os
import sys
import textwrap

from ..cli.parser import (
    Count,
    CpuList,
    Duration,
    JtrParser,
    Listen,
    OptionType,
    Size,
    add_output,
    shared,
    warn,
)
from ..drivers.watch import watch_job
from ..errors import UsageError
from ..render import watch as show
from ..system.cpus import online_cpus
from ..trace import causes

COMM_LEN = 15           # the kernel keeps a comm's first 15 characters

DESCRIPTION = """\
Watch the CPUs where an application runs, without taking them: the kernel-event
tracer alone (no probe), on those CPUs only, counts every interruption of the
application with its duration and its cause, in fixed tables: memory stays
bounded however long it runs. An interruption is what takes the CPU from the
application: an interrupt while it runs (timer tick, IPI, hardirq, softirq,
NMI), the time another task has the CPU while it is runnable (task preemption),
RT throttling; its own running time never is. The counts are served as
Prometheus metrics (--listen) and/or written for node_exporter's textfile
collector (--textfile). The counting runs in the kernel, in the tracer's BPF
programs: no event is copied to user space to be counted. With --dump-above, a
flight recorder keeps the last --keep of events; when an interruption lasts
--dump-above or more, they are written to a folder of DIR that 'jtr attribute'
explains event by event."""

NOTES = """\
The application: the tasks of --app's comms and processes (every thread of a
PID). Without --app it is, on each CPU, the comm that has run there longest
since the watch began (a task running when it begins has run since then; the
CPU's first second only decides which, nothing is counted in it): on a CPU
given to one program, that program, whatever else comes and goes; where two busy
programs share a CPU, or the watch begins before the application, name yours
with --app. The table at the end says which comm it was.

%s

Needs root (or CAP_BPF and CAP_PERFMON). DIR (default
results/DATE-HOST-watch) gets the dumps and, at the end, watch.json (the last
counts). Ctrl-C, SIGTERM or SIGHUP ends the watch: exit status 0 (130 when -d
was given and not reached). The unit file PREFIX/share/jtr/jtr-watch.service
(make install, the packages) runs it under systemd.""" % textwrap.fill(
    "Metrics (docs/fleet.md): jtr_watch_interruptions_total and "
    "jtr_watch_interrupted_seconds_total {cpu, category, name, container, sender}, the "
    "histogram "
    "jtr_watch_interruption_duration_seconds {cpu, category} (its _count and _sum are the "
    "sums of those two), jtr_watch_kernel_events_total {cpu, category, name, container, "
    "sender}, and the "
    "tracer's own jtr_watch_trace_events_total, _trace_dropped_total, _dumps_total, "
    "_tracer_cpu_seconds_total. Categories: %s. A name is the IRQ, vector, softirq, the "
    "task (its full comm: kworker/1:2) or sched_rt_runtime_us (RT throttling), at most "
    "--names per CPU and category (then \"other\"), never a pid; container: a task's "
    "container, pod or systemd unit where its cgroup shows one, sender: the comm of the "
    "task that sent an IPI (each only where it has a value). A wait is one interruption "
    "from the moment the application is runnable and another task has its CPU until it "
    "runs again, charged to that task; page faults have no duration: kernel events only."
    % ", ".join(causes.WATCH), 80)

EXAMPLES = """\
  sudo jtr watch -c 2-3 --listen 127.0.0.1:9477
  sudo jtr watch -c 2 --app myserver --listen 127.0.0.1:9477
  sudo jtr watch -c 2,3 --app 4321,4400 --listen 127.0.0.1:9477
  sudo jtr watch -c 2 --textfile /var/lib/node_exporter/textfile/jtr.prom
  sudo jtr watch -c 2 --listen :9477 --dump-above 100us -o /var/lib/jtr/watch
  jtr attribute /var/lib/jtr/watch/dump-20261126-134836-cpu2"""


class Apps(OptionType):
    """--app: a comma list of comms and PIDs (all digits: a running process)."""

    def parse(self, text, opt, prog):
        items = text.split(",")
        if "" in items:
            raise UsageError("an empty name; give the application's comm or PID, e.g. "
                             "--app myserver or --app 4321")
        for w in items:
            if w.isdigit():
                if int(w) == 0 or not os.path.exists("/proc/%d" % int(w)):
                    raise UsageError("no process %s is running; give the PID of a running "
                                     "process, or a comm" % w)
            elif len(w) > COMM_LEN:
                warn(prog, "%s %s: the kernel keeps a comm's first %d characters: tasks "
                     "named %s are the application" % (opt, w, COMM_LEN, w[:COMM_LEN]))
        return items


def make_parser(prog):
    p = JtrParser(prog, usage="%(prog)s -c LIST [OPTIONS]", description=DESCRIPTION,
                  notes=NOTES, examples=EXAMPLES)
    p.add_argument(*shared("-c"), metavar="LIST", type=CpuList(online_cpus),
                   help="CPUs to watch: where the application runs (default: the isolated "
                   "CPUs; there must be some)")
    p.add_argument("--app", metavar="COMM|PID", type=Apps(), action="extend",
                   help="the application: its tasks' comm, or a PID (all its threads); a "
                   "comma list, or repeat it (default: on each CPU, the comm that has run "
                   "there longest). Its own time is never an interruption")
    p.add_argument("--listen", metavar="ADDR:PORT", type=Listen(),
                   help="serve the metrics on http://ADDR:PORT/metrics (:PORT: every "
                   "address)")
    p.add_argument("--textfile", metavar="FILE",
                   help="write the metrics to FILE (atomically, every --interval) for "
                   "node_exporter's textfile collector (it reads *.prom)")
    p.add_argument("--dump-above", metavar="DUR", type=Duration(1000, 3600 * 10**9),
                   help="when an interruption lasts this long or more, write the flight "
                   "recorder's events to DIR/dump-DATE-cpuN/ (default: no dumps)")
    p.add_argument("--keep", metavar="DUR", type=Duration(10**9, 24 * 3600 * 10**9),
                   default=120 * 10**9,
                   help="how much the flight recorder keeps, and a dump holds (default 2m)")
    p.add_argument("--recorder", metavar="SIZE", type=Size(64 << 10, 16 << 30),
                   default=64 << 20,
                   help="the flight recorder's memory (with --dump-above): 64 bytes an "
                   "event (default 64M: a million events), kernel memory while it "
                   "watches: at most half the memory available")
    p.add_argument("--dump-max", metavar="N", type=Count(0, 10**6), default=20,
                   help="dumps written at most (default 20); dumps never overlap")
    p.add_argument("--names", metavar="N", type=Count(1, 1024), default=32,
                   help="names kept per CPU and category, first come first kept; later "
                   "ones are counted as \"other\" (default 32): the bound on the metrics' "
                   "series")
    p.add_argument("--interval", metavar="DUR", type=Duration(10**7, 3600 * 10**9),
                   default=10**9,
                   help="how often the counts are updated (default 1s)")
    p.add_argument(*shared("-d"), metavar="DUR", type=Duration(10**9, 366 * 86400 * 10**9),
                   help="stop after this long (default: at Ctrl-C or SIGTERM)")
    p.add_argument("--trace-buffer", metavar="SIZE", type=Size(4096, 1 << 30),
                   help="the tracer's ring buffer (default: sized from the event rate; see "
                   "jtr trace -b)")
    p.add_argument("--drain-interval", metavar="DUR", type=Duration(10**6, 10 * 10**9),
                   help="how often the tracer drains it (default 100ms)")
    p.add_argument(*shared("-q"), action="store_true",
                   help="no progress, no table at the end")
    add_output(p, "folder of the dumps and watch.json (default results/DATE-HOST-watch)")
    return p


def run(o):
    tty = sys.stderr.isatty() and not o.quiet
    shown = []      # a progress line is on the terminal: cleared when the watch ends

    def started():
        if not o.quiet:
            print(show.watching_line(o), flush=True)

    def dumped(d):
        if not o.quiet:
            sys.stderr.write(("\r\033[K" if tty else "") + show.dump_line(d) + "\n")

    def progress(state, seconds):
        # one line on the terminal, written over as the counts change
        if tty:
            shown[:] = [1]
            sys.stderr.write("\r\033[K" + show.progress_line(state, seconds))
            sys.stderr.flush()
    try:
        out = watch_job(o, started, dumped, progress if tty else None)
    finally:
        if shown:
            sys.stderr.write("\r\033[K")
    if out.state is not None and not o.quiet:
        print("\n".join(show.end_lines(out)))
    if out.unsaved:
        print("jtr watch: error: %s" % out.unsaved, file=sys.stderr)
    return out.rc
