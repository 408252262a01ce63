# SPDX-License-Identifier: GPL-2.0-only
"""watch_metrics - jtr watch's accounting as Prometheus metrics: the tracer's
latest state line (ebpf/watch.c jtr_watch_state) in the text format (the one
writer, formats/prom.py), rendered at most once per state line whatever the
number of scrapes, served over HTTP from a thread that sleeps until a scrape
comes, or written as a textfile for node_exporter's collector.
(prometheus_client did this before: 0.83 ms a scrape of a one-CPU state here, a
wake-up every 0.5 s in its server, a thread per scrape, and a dependency jtr
watch no longer has; the tests read the text with its parser.)

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
import functools
import json
import os
import select
import socket
import struct
import threading
import time

from ..system.files import write_output
from ..trace.causes import IPI
from ..vocab import WATCH_BOUNDS_NS
from .prom import exposition, labels_text

# what a scrape gets: the text format, as prometheus_client served it
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

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
    ("jtr_watch_bpf_runs_total", "counter", ("cpu",),
     "Runs of the tracer's BPF programs on a watched CPU, each counted."),
    ("jtr_watch_bpf_seconds_total", "counter", ("cpu",),
     "Time of the tracer's BPF programs on a watched CPU, in the time of what ran there: "
     "each program's runs times its mean over the runs it timed (one in 64)."),
    ("jtr_watch_longest_interruption_seconds", "gauge", (),
     "The longest interruption seen since the watch began."),
)
BOUNDS_S = tuple(b / 1e9 for b in WATCH_BOUNDS_NS)


@functools.lru_cache(maxsize=4096)
def _histogram_labels(cpu, cat):
    """The labels of CPU @cpu's category @cat, and each of its bucket's
    sample name with its labels (the same at every scrape: made once)."""
    labels = labels_text({"cpu": cpu, "category": cat})
    return labels, tuple('jtr_watch_interruption_duration_seconds_bucket%s,le="%s"}'
                         % (labels[:-1], le) for le in [repr(b) for b in BOUNDS_S] + ["+Inf"])


def families(state):
    """The metric families of one state line (a dict), in FAMILIES' order, as
    prom.exposition takes them."""
    samples = {f[0]: [] for f in FAMILIES}
    hist = samples["jtr_watch_interruption_duration_seconds"]
    for c in state.get("cpus", ()):
        cpu = str(c["cpu"])
        if "bpf_runs" in c:
            labels = labels_text({"cpu": cpu})
            samples["jtr_watch_bpf_runs_total"].append(("jtr_watch_bpf_runs_total", labels,
                                                         c["bpf_runs"]))
            samples["jtr_watch_bpf_seconds_total"].append(
                ("jtr_watch_bpf_seconds_total", labels, c["bpf_ns"] / 1e9))
        for k in c["categories"]:
            cat = k["category"]
            for row in k["names"]:
                name, n, ns, ev = row[:4]
                labels = {"cpu": cpu, "category": cat, "name": name}
                if len(row) > 4 and row[4]:
                    # a label only where it has a value: a series without one is
                    # the same series as before the label came
                    labels["sender" if cat == IPI else "container"] = row[4]
                labels = labels_text(labels)
                samples["jtr_watch_interruptions_total"].append(
                    ("jtr_watch_interruptions_total", labels, n))
                samples["jtr_watch_interrupted_seconds_total"].append(
                    ("jtr_watch_interrupted_seconds_total", labels, ns / 1e9))
                samples["jtr_watch_kernel_events_total"].append(
                    ("jtr_watch_kernel_events_total", labels, ev))
            labels, buckets = _histogram_labels(cpu, cat)
            cum = 0
            for bucket, n in zip(buckets, k["hist"]):
                cum += n
                hist.append((bucket, "", cum))
            hist.append(("jtr_watch_interruption_duration_seconds_count", labels, cum))
            hist.append(("jtr_watch_interruption_duration_seconds_sum", labels,
                         k["ns"] / 1e9))
    for name, key, scale in (("jtr_watch_trace_events_total", "records", 1),
                             ("jtr_watch_trace_dropped_total", "dropped", 1),
                             ("jtr_watch_dumps_total", "dumps", 1),
                             ("jtr_watch_dumps_skipped_total", "dumps_skipped", 1),
                             ("jtr_watch_tracer_cpu_seconds_total", "cpu_ns", 1e-9),
                             ("jtr_watch_longest_interruption_seconds", "longest_ns", 1e-9)):
        v = state.get(key, 0)
        samples[name].append((name, {}, v * scale if scale != 1 else v))
    return [(name, typ, text, samples[name]) for name, typ, _, text in FAMILIES]


def read_state(fd, tries=3):
    """The state line the tracer keeps in descriptor @fd (jtr-trace --state-fd:
    bytes 0-7 a sequence number, odd while it changes; 8-15 the line's length;
    the line from 16), copied between two equal even sequence numbers:
    (sequence number, the state as a dict), or None when it has none yet or
    was changing @tries times in a row."""
    for _ in range(tries):
        head = os.pread(fd, 16, 0)
        if len(head) < 16:
            return None
        seq, n = struct.unpack("=QQ", head)
        if seq == 0:
            return None
        if not seq & 1:
            line = os.pread(fd, n, 16)
            if os.pread(fd, 8, 0) == head[:8]:
                try:
                    return seq, json.loads(line)
                except ValueError:
                    return None
        time.sleep(0.001)               # it is being written: a line takes microseconds
    return None


class Collector:
    """What a scrape sees: the latest state (set with update, or read from the
    tracer's descriptor @state_fd at each scrape) in the text format, rendered at
    the first scrape after each new state."""

    def __init__(self, state_fd=None):
        self.latest = ({}, None)        # (state, its text or None)
        self.state_fd, self.seq = state_fd, 0

    def update(self, state):
        """@state from now on (the descriptor, if any, is no longer read: a state
        given is the newest, the tracer's last)."""
        self.state_fd = None
        self.latest = (state, None)     # one reference swap: a scrape sees one whole state

    def text(self):
        fd = self.state_fd
        if fd is not None:
            head = os.pread(fd, 8, 0)
            if len(head) == 8 and struct.unpack("=Q", head)[0] != self.seq:
                got = read_state(fd)
                if got is not None and self.state_fd is not None:
                    self.seq = got[0]
                    self.latest = (got[1], None)
        state, text = latest = self.latest
        if text is None:
            text = exposition(families(state))
            if self.latest is latest:   # not replaced meanwhile
                self.latest = (state, text)
        return text


REQUEST_MAX = 16 << 10          # bytes of a request's line and headers
IDLE_S = 30                     # a connection that sends nothing is let go
STATUS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
          431: "Request Header Fields Too Large",
          500: "Internal Server Error"}


def response(collector, request):
    """The bytes that answer @request (its line and headers, bytes): GET or HEAD
    of any path but /favicon.ico is the metrics; the connection is closed after
    each answer (Prometheus opens another)."""
    words = request.split(b"\r\n", 1)[0].split()
    status, body, extra = 200, b"", ""
    if len(words) != 3 or not words[2].startswith(b"HTTP/"):
        status = 400
    elif words[0] not in (b"GET", b"HEAD"):
        status, extra = 405, "Allow: GET, HEAD\r\n"
    elif words[1].split(b"?")[0] == b"/favicon.ico":
        status = 404
    else:
        try:
            body = collector.text().encode()
        except Exception as e:          # noqa: BLE001 (the server goes on)
            status, body = 500, ("%s\n" % e).encode()
    head = ("HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n%s"
            "Connection: close\r\n\r\n" % (status, STATUS[status],
                                             CONTENT_TYPE if status == 200 else "text/plain",
                                             len(body), extra)).encode()
    return head if words and words[0] == b"HEAD" else head + body


class Server:
    """The metrics of @collector on ADDR:PORT, served by one daemon thread that
    sleeps in epoll until a connection or a byte comes: no poll, no thread per
    scrape, and a scrape whose request is there when it is accepted is answered
    there and then (http.server took 0.31 ms of CPU a scrape here, with its
    thread per connection; this 0.06 ms, and less cold). Slow or silent
    clients wait side by side with the rest, each let go after IDLE_S. OSError
    or UnicodeError when the address cannot be used."""

    def __init__(self, collector, addr, port):
        family, _, _, _, sockaddr = socket.getaddrinfo(
            addr, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
        self.collector = collector
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.sock.bind(sockaddr)
            self.sock.listen(64)
        except OSError:
            self.sock.close()
            raise
        self.sock.setblocking(False)
        self.server_address = self.sock.getsockname()
        self.ep = select.epoll()
        self.ep.register(self.sock.fileno(), select.EPOLLIN)
        self.conns = {}                 # fd: [socket, deadline, request read, answer left]
        threading.Thread(target=self.loop, name="jtr-watch-metrics", daemon=True).start()

    def loop(self):
        lfd = self.sock.fileno()
        while True:
            timeout = max(0.0, min(c[1] for c in self.conns.values()) - time.monotonic()) \
                if self.conns else -1
            for fd, _ in self.ep.poll(timeout):
                if fd == lfd:
                    self.accept()
                elif fd in self.conns:
                    self.serve(fd, self.conns[fd])
            if self.conns:
                now = time.monotonic()
                for fd in [fd for fd, c in self.conns.items() if c[1] <= now]:
                    self.close(fd)

    def accept(self):
        while True:
            try:
                s, _ = self.sock.accept()
            except OSError:             # none left; or out of descriptors: a retry
                return
            s.setblocking(False)
            fd = s.fileno()
            c = self.conns[fd] = [s, time.monotonic() + IDLE_S, b"", None]
            if self.serve(fd, c):       # the request was not all there yet
                self.ep.register(fd, select.EPOLLIN)

    def serve(self, fd, c):
        """Read @c's request, answer it; True while it waits for its client."""
        s = c[0]
        try:
            if c[3] is None:
                data = s.recv(4096)
                if not data:
                    self.close(fd)
                    return False
                c[2] += data
                if b"\r\n\r\n" not in c[2] and b"\n\n" not in c[2]:
                    if len(c[2]) <= REQUEST_MAX:
                        return True
                    c[3] = memoryview(response_status(431))
                else:
                    c[3] = memoryview(response(self.collector, c[2]))
            c[3] = c[3][s.send(c[3]):]
            if c[3]:
                self.want(fd, select.EPOLLOUT)
                return True
        except (BlockingIOError, InterruptedError):
            return True
        except OSError:                 # the client went away
            pass
        self.close(fd)
        return False

    def want(self, fd, events):
        try:
            self.ep.modify(fd, events)
        except FileNotFoundError:       # not registered yet
            self.ep.register(fd, events)

    def close(self, fd):
        c = self.conns.pop(fd, None)
        if c is not None:
            try:
                self.ep.unregister(fd)
            except OSError:             # it never waited
                pass
            c[0].close()

    def server_close(self):
        """Stop listening (the thread sleeps on; it is a daemon)."""
        try:
            self.ep.unregister(self.sock.fileno())
        except OSError:
            pass
        self.sock.close()


def response_status(status):
    """An answer of @status alone, no body."""
    return ("HTTP/1.1 %d %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            % (status, STATUS[status])).encode()


def serve(collector, addr, port):
    """Serve @collector on http://ADDR:PORT/metrics (Server); the Server."""
    return Server(collector, addr, port)


def write_textfile(path, collector):
    """@collector's text to @path (node_exporter's textfile collector reads *.prom
    files): a regular file atomically, a device or a FIFO written through
    (system/files.write_output)."""
    write_output(path, collector.text())
