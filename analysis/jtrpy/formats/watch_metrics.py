# SPDX-License-Identifier: GPL-2.0-only
"""watch_metrics - jtr watch's accounting as Prometheus metrics, with the
official client (prometheus_client): one collector that turns the tracer's
latest state line (ebpf/watch.c jtr_watch_state) into metric families when
Prometheus scrapes, served over HTTP or written as a textfile for
node_exporter's collector.

Names follow Prometheus' conventions: the jtr_watch_ prefix, base units
(seconds), _total on counters. Labels: cpu, category (trace/causes.py WATCH)
and, where it is bounded, name: the cause's name, at most --names a CPU and
category (the rest are "other"); container: a preempting task's container, pod
or systemd unit where its cgroup shows one (ebpf/cgroups.h), and sender: the
comm of the task that sent an IPI where the tracer saw the send (both empty, so
absent, for the rest); no pid label. Every category has its
histogram on every CPU, and its _count and _sum are the sums of the counters
by name of the same state line (ebpf/watch.c counts both in one place).
docs/fleet.md lists them and the Grafana dashboard (dist/grafana/jtr-watch.json)
queries them."""
from ..errors import UsageError
from ..system import packages
from ..system.files import write_output
from ..trace.causes import IPI
from ..vocab import WATCH_BOUNDS_NS

try:
    import prometheus_client
    from prometheus_client.core import (
        CounterMetricFamily,
        GaugeMetricFamily,
        HistogramMetricFamily,
    )
except ImportError:             # jtr watch says how to get it
    prometheus_client = None

HOW_TO_GET = ("jtr watch serves its metrics with prometheus_client: %s"
              % packages.python_hint("prometheus_client"))

# the labels of a cause's series; container and sender only where they have a
# value
NAMED = ("cpu", "category", "name", "container", "sender")
# name (as exposed: counters end in _total), type, labels, help
FAMILIES = (
    ("jtr_watch_interruptions_total", "counter", NAMED,
     "Interruptions of the application on a watched CPU: interrupts while it runs (by the "
     "part that took most of each), NMIs, and its waits for the CPU while runnable (by "
     "the task that took it, or RT throttling)."),
    ("jtr_watch_interrupted_seconds_total", "counter", NAMED,
     "Time taken from the application on a watched CPU, by cause."),
    ("jtr_watch_interruption_duration_seconds", "histogram", ("cpu", "category"),
     "Durations of the interruptions of the application on a watched CPU (a wait: until "
     "it runs again)."),
    ("jtr_watch_kernel_events_total", "counter", NAMED,
     "Kernel events on a watched CPU (interrupts, softirqs, NMIs, preemptions, RT "
     "throttling, page faults), whether they interrupted the application or not."),
    ("jtr_watch_trace_events_total", "counter", (),
     "Events the tracer received from the kernel."),
    ("jtr_watch_trace_dropped_total", "counter", (),
     "Events the kernel could not hand to the tracer (its ring buffer was full)."),
    ("jtr_watch_dumps_total", "counter", (),
     "Flight-recorder dumps written (an interruption reached --dump-above)."),
    ("jtr_watch_dumps_skipped_total", "counter", (),
     "Dumps not written (--dump-max reached, or a write failed)."),
    ("jtr_watch_tracer_cpu_seconds_total", "counter", (),
     "CPU time the tracer process has used, user and system, loading included."),
    ("jtr_watch_longest_interruption_seconds", "gauge", (),
     "The longest interruption seen since the watch began."),
)
BOUNDS_S = tuple(b / 1e9 for b in WATCH_BOUNDS_NS)


def require():
    """UsageError saying how to get prometheus_client when it is missing."""
    if prometheus_client is None:
        raise UsageError(HOW_TO_GET)


def _counter(name, *a, **kw):
    # the client adds _total itself
    return CounterMetricFamily(name[:-len("_total")], *a, **kw)


def families(state):
    """The metric families of one state line (a dict), in FAMILIES' order."""
    helps = {f[0]: f[3] for f in FAMILIES}
    count = _counter("jtr_watch_interruptions_total", helps["jtr_watch_interruptions_total"],
                     labels=NAMED[:3])
    secs = _counter("jtr_watch_interrupted_seconds_total",
                    helps["jtr_watch_interrupted_seconds_total"],
                    labels=NAMED[:3])
    hist = HistogramMetricFamily("jtr_watch_interruption_duration_seconds",
                                 helps["jtr_watch_interruption_duration_seconds"],
                                 labels=("cpu", "category"))
    events = _counter("jtr_watch_kernel_events_total", helps["jtr_watch_kernel_events_total"],
                      labels=NAMED[:3])
    for c in state.get("cpus", ()):
        cpu = str(c["cpu"])
        for k in c["categories"]:
            cat = k["category"]
            for row in k["names"]:
                name, n, ns, ev = row[:4]
                labels = {"cpu": cpu, "category": cat, "name": name}
                if len(row) > 4 and row[4]:
                    labels["sender" if cat == IPI else "container"] = row[4]
                # a label only where it has a value: a series without one is the
                # same series as before the label came
                for fam, v in ((count, n), (secs, ns / 1e9), (events, ev)):
                    fam.add_sample(fam.name + "_total", labels, v)
            cum, buckets = 0, []
            for le, n in zip(BOUNDS_S + (float("inf"),), k["hist"]):
                cum += n
                buckets.append(("+Inf" if le == float("inf") else repr(le), cum))
            hist.add_metric((cpu, cat), buckets, k["ns"] / 1e9)
    out = [count, secs, hist, events]
    for name, key, scale in (("jtr_watch_trace_events_total", "records", 1),
                             ("jtr_watch_trace_dropped_total", "dropped", 1),
                             ("jtr_watch_dumps_total", "dumps", 1),
                             ("jtr_watch_dumps_skipped_total", "dumps_skipped", 1),
                             ("jtr_watch_tracer_cpu_seconds_total", "cpu_ns", 1e-9)):
        out.append(_counter(name, helps[name], value=state.get(key, 0) * scale))
    out.append(GaugeMetricFamily("jtr_watch_longest_interruption_seconds",
                                 helps["jtr_watch_longest_interruption_seconds"],
                                 value=state.get("longest_ns", 0) / 1e9))
    return out


class Collector:
    """What a scrape sees: the families of the latest state (set with update)."""

    def __init__(self):
        self.state = {}

    def update(self, state):
        self.state = state      # one reference swap: a scrape sees one whole state

    def collect(self):
        return iter(families(self.state))


def registry(collector):
    """A registry of @collector alone (not the client's default, which adds the
    Python process' own metrics)."""
    require()
    reg = prometheus_client.CollectorRegistry(auto_describe=False)
    reg.register(collector)
    return reg


def serve(reg, addr, port):
    """Serve @reg on http://ADDR:PORT/metrics from a daemon thread."""
    prometheus_client.start_http_server(port, addr=addr, registry=reg)


def write_textfile(path, reg):
    """@reg in the text format to @path (node_exporter's textfile collector reads
    *.prom files): a regular file atomically, a device or a FIFO written through
    (system/files.write_output)."""
    write_output(path, exposition(reg))


def exposition(reg):
    """@reg in the text format (a str)."""
    return prometheus_client.generate_latest(reg).decode()
