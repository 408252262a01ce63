# SPDX-License-Identifier: GPL-2.0-only
"""vocab - the words the C programs and the Python side share, declared once on
this side. analysis/tests/test_parity.py parses the C declarations and requires
the same words: the transports (transports/tp.c's kind names), the tracer
backends (what ebpf/trace.c and the perf backend write as trace.json "backend").
The event log's layout is declared in trace/events.py (ebpf/trace.h on the C
side) and the version in the VERSION file, read by jtrpy/__init__.py."""

# the event log's bound, bytes: the most the readers take (read whole) and where
# the tracer stops writing (ebpf/trace.c JTR_TRACE_LOG_MAX): 33 million events
MAX_LOG_BYTES = 2 << 30

# transports/tp.c: enum tp_kind's names, in its order
TRANSPORTS = ("shm", "tcp", "udp", "mcast", "unix", "unix-dgram")
# the ones that lose messages rather than block (a receiver must be ready first)
DATAGRAM_TRANSPORTS = ("udp", "mcast", "unix-dgram")

# transports/lib/tp.h: a message's header (TP_HDR_LEN, the smallest message) and
# the length from which it carries its intended send time (TP_FULL_LEN)
TP_HDR_LEN = 24
TP_FULL_LEN = 32

# the tracer backends: trace.json "backend" and jtr run --backend
BACKENDS = ("ebpf", "perf")
# --backend also takes "auto": eBPF, else perf
BACKEND_CHOICES = ("auto",) + BACKENDS

# jtr watch's cause categories are trace/causes.py's WATCH; the upper bounds of
# its duration histogram's buckets, ns (watch.c
# jtr_watch_bounds_ns; the last bucket, +Inf, is not listed)
WATCH_BOUNDS_NS = (1000, 2000, 5000, 10000, 20000, 50000, 100000, 200000, 500000,
                   1000000, 2000000, 5000000, 10000000, 20000000, 50000000, 100000000)
