"""vocab - the words the C programs and the Python side share, declared once on
this side. analysis/tests/test_parity.py parses the C declarations and requires
the same words: the transports (transports/tp.c's kind names), the tracer
backends (what ebpf/trace.c and the perf backend write as trace.json "backend").
The event log's layout is declared in trace/events.py (ebpf/trace.h on the C
side) and the version in the VERSION file, read by jtrpy/__init__.py."""

# transports/tp.c: enum tp_kind's names, in its order
TRANSPORTS = ("shm", "tcp", "udp", "mcast", "unix", "unix-dgram")
# the ones that lose messages rather than block (a receiver must be ready first)
DATAGRAM_TRANSPORTS = ("udp", "mcast", "unix-dgram")

# the tracer backends: trace.json "backend" and jtr run --backend
BACKENDS = ("ebpf", "perf")
# --backend also takes "auto": eBPF, else perf
BACKEND_CHOICES = ("auto",) + BACKENDS
