# SPDX-License-Identifier: GPL-2.0-only
"""probes - what each tool's result measures: the one model of probes every
reader of a result uses (plan, quantity, attribute, gates, advise, render,
compare, ls, fleet).

One row per tool (result.json's "tool"): its program, its quantities (the
default first) and what they measure, whether a sample above the threshold is
CPU time the program lost (gap, null, send, clock, oslat: "time lost" is a
share of the run) or a latency (wake, ping, sub, cyclictest: several can be in
flight at once, so their sum is no time; the headline is the excess over the
threshold, per second of run), the sides of a measurement across two ends, the
phases of a round trip or a message, the rule of its outlier threshold, its
gates, and how jtr run places it.

Adding a probe: its C file (jitter/ or transports/), a row here, its tests and
its docs (docs/architecture.md, "Adding things"; analysis/tests/results/
test_probes.py lists what must agree with this table).
"""
from typing import NamedTuple

# what a quantity measures (two of the same measure can be compared)
LOOP = "loop time"
WAKE = "timer wake-up latency"
SEND_CALL = "send call"
CLOCK = "clock read delta"
CALL = "function call time"
RTT_INTENDED = "round trip from the intended send time"
RTT_SEND = "round trip from the send"
ONE_WAY_SEND = "one-way latency from the send"
ONE_WAY_INTENDED = "one-way latency from the intended send time"

GATE_LATENCY = "max-latency"
GATE_LOST = "max-lost"


class Probe(NamedTuple):
    tool: str
    program: str            # the measuring thread's comm ("" for imported results)
    quantities: tuple       # ((name, measures), ...): the default first; () when named by runs
    cpu_time: bool          # a sample above the threshold is CPU time lost
    sides: tuple = ()       # across two ends: the sides, the measuring one first
    partner: str = ""       # the program jtr run starts at the other end
    measured_by: str = "probe"  # whose result holds the latency: "probe" or "partner"
    phases: tuple = ()      # ((phase, side), ...) in the order they happen
    multi_cpu: bool = False  # one measuring thread per CPU of -c
    jtr_run: bool = False   # a probe of jtr run
    decomposed: bool = False  # each outlier taken apart along its timeline (jtr wake)
    run_kinds: bool = False  # runs of two kinds attributed apart (send and null)
    named_runs: bool = False  # each run is named after its quantity
    threshold: str = ""     # its outlier threshold's rule, for people
    typical: str = ""       # the quantity whose median is a message's own way
    about: str = ""         # one line for people

    @property
    def gates(self):
        """The gates jtr run judges its result by: the largest sample always;
        the time lost only where a sample is CPU time."""
        return (GATE_LATENCY, GATE_LOST) if self.cpu_time else (GATE_LATENCY,)

    @property
    def quantity_names(self):
        return tuple(q for q, _ in self.quantities)

    @property
    def two_ended(self):
        return bool(self.partner)


# the phases of a round trip and a message, in order, each with the side whose
# no kernel event it is (attribution/ends.py)
ROUND_TRIP_PHASES = (("send", "ping"), ("out", "pong"), ("reflect", "pong"),
                     ("reply", "ping"))
MESSAGE_PHASES = (("receive", "sub"),)
PING_QUANTITIES = (("rtt_from_intended", RTT_INTENDED), ("rtt_from_send", RTT_SEND),
                   ("send_call", SEND_CALL))
SUB_QUANTITIES = (("latency_from_send", ONE_WAY_SEND),
                  ("latency_from_intended", ONE_WAY_INTENDED))
TRANSPORT_THRESHOLD = ("max(2 x m, m + 10us) with m the median of the warm-up, or "
                       "--threshold")

PROBES = (
    Probe("gap", "jtr-gap", (("gap", LOOP),), True,
          multi_cpu=True, jtr_run=True, threshold="--threshold (default 1us)",
          about="the gaps of a busy loop reading the TSC (like oslat)"),
    Probe("wake", "jtr-wake", (("wake", WAKE),), False,
          multi_cpu=True, jtr_run=True, decomposed=True,
          threshold="--threshold, else from the warm-up's wake-ups",
          about="timer wake-up latency (like cyclictest), every late one taken apart"),
    Probe("null", "jtr-null", (("null", LOOP),), True, jtr_run=True,
          threshold="--threshold", about="the time of an empty timed loop"),
    Probe("send", "jtr-send", (("send", SEND_CALL), ("null", LOOP)), True, jtr_run=True,
          run_kinds=True, sides=("send", "drain"), threshold="--threshold",
          about="the time of a send call, against a null loop of the same mean"),
    Probe("clock", "jtr-clock", (), True, named_runs=True,
          about="the delta between two reads of each clock source"),
    Probe("ping", "jtr-ping", PING_QUANTITIES, False, sides=("ping", "pong"),
          partner="pong", phases=ROUND_TRIP_PHASES,
          jtr_run=True, named_runs=True, threshold=TRANSPORT_THRESHOLD,
          typical="rtt_from_send",
          about="round trips to jtr pong"),
    Probe("pong", "jtr-pong", (), False, sides=("ping", "pong"),
          about="the reflecting end of a round trip"),
    Probe("pub", "jtr-pub", (("send_call", SEND_CALL),), False, sides=("pub", "sub"),
          partner="sub", measured_by="partner", phases=MESSAGE_PHASES,
          jtr_run=True, named_runs=True,
          about="a publisher's send calls (jtr sub measures the messages' latency)"),
    Probe("sub", "jtr-sub", SUB_QUANTITIES, False, sides=("pub", "sub"),
          phases=MESSAGE_PHASES, named_runs=True,
          typical="latency_from_send",
          threshold=TRANSPORT_THRESHOLD, about="the latency of each message received"),
    Probe("ipc", "jtr-ipc", (), False,
          about="latency and throughput of the IPC methods"),
    Probe("app", "", (("app", CALL),), False,
          threshold="--threshold, else from the warm-up's calls",
          about="every call of an application's function, timed with uprobes (jtr run app)"),
    Probe("oslat", "", (("oslat", LOOP),), True, about="an imported oslat result"),
    Probe("cyclictest", "", (("cyclictest", WAKE),), False,
          about="an imported cyclictest result"),
    Probe("hlog", "", (), False, about="an imported HdrHistogram log"),
)
BY_TOOL = {p.tool: p for p in PROBES}
# jtr run's probes, in its order
RUN_PROBES = tuple(p.tool for p in PROBES if p.jtr_run)
# what a quantity measures, by its name (a clock source's is CLOCK)
MEASURES = {q: m for p in PROBES for q, m in p.quantities}
MEASURES.update({"send_call": SEND_CALL})


def probe_of(result_or_tool):
    """The Probe of a result (or of a tool name), or None for a tool this version
    does not know."""
    tool = result_or_tool.get("tool") if isinstance(result_or_tool, dict) else \
        result_or_tool
    return BY_TOOL.get(tool)


def is_cpu_time(result_or_tool):
    """Whether a sample above the threshold is CPU time lost (a share of the run
    makes sense), for a result or a tool; False for a tool not known (nothing is
    claimed of it)."""
    p = probe_of(result_or_tool)
    return bool(p and p.cpu_time)


def is_decomposed(result):
    """Whether a result's outliers are each taken apart along their timeline
    (jtr wake's decomposition) rather than charged to the events in them."""
    p = probe_of(result)
    return bool(p and p.decomposed)


def program_of(tool, side=None):
    """The comm of the program measuring @side of a @tool measurement (jtr-pong on
    ping's pong side), or its own."""
    p = BY_TOOL.get(side) if side else None
    if p is None:
        p = BY_TOOL.get(tool)
    return p.program if p else None
