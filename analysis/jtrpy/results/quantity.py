# SPDX-License-Identifier: GPL-2.0-only
"""quantity - which runs of a result measure the same thing, and which of them a
headline number, a list row, a report or a comparison is about.

A result's runs are not always one quantity. The runs of jtr gap (one per CPU)
and jtr null (one per repetition) are: merging them gives the loop time of the
whole result. The runs of jtr ping are not: the round trip from the intended send
time, the round trip from the send and the time in the send call are three
different numbers, and a percentile of the three together means nothing. So every
reader asks select() for ONE quantity (the tool's default, or the one named with
--quantity) and merges only its runs.

Per tool (docs/result-format.md, "Quantities"):
  gap         gap: every run (one per CPU)
  null        null: every run (one per repetition)
  oslat       oslat: every run (one per thread); cyclictest likewise
  wake        wake: every run (one per CPU); it measures what cyclictest does
  clock       one quantity per clock source (the run's name); default the first
              (rdtsc where the TSC is usable)
  send        send (the send runs, the default) and null (the null loop of the
              same mean, their reference)
  ping        rtt_from_intended (default: correct under coordinated omission),
              rtt_from_send, send_call
  sub         latency_from_send (default: what sockperf and um_lat report, the
              receive time less the time the message was sent),
              latency_from_intended
  pub         send_call
  hlog        an imported HdrHistogram log: a tag that names one of the above
              (rtt_from_send, send_1, ...) is that quantity; every other tag (cpu1,
              untagged) is the quantity hlog, as jtr export --hlog writes a gap
              result's CPUs

Each quantity also says what it measures (MEASURES): two quantities of the same
measure (gap and null and oslat: the time of one pass of a busy loop) can be
compared, with a warning; two of different measures (a round trip against a loop
time) cannot, unless asked for.
"""
import re

from ..errors import UsageError
from . import probes as P
from .result import Result

# what each named quantity measures, and the quantities of the tools that always
# have the same ones, the default first: the probe model's (results/probes.py)
LOOP, WAKE, SEND_CALL, CLOCK = P.LOOP, P.WAKE, P.SEND_CALL, P.CLOCK
MEASURES = P.MEASURES
FIXED = {p.tool: p.quantity_names for p in P.PROBES if p.quantities}
# the tools whose runs are each named after their quantity
NAMED_RUNS = tuple(p.tool for p in P.PROBES if p.named_runs)

_NUMBERED = re.compile(r"(send|null)_\d+")


def run_quantity(tool, run):
    """The name of the quantity @run (a run of a @tool result) measures."""
    name = str(run.get("name") or "")
    if tool in NAMED_RUNS:
        return name
    if tool == "send":
        return "null" if run.get("kind") == "null" else "send"
    if tool == "hlog":
        m = _NUMBERED.fullmatch(name)
        if m:
            return m.group(1)
        return name if name in MEASURES else "hlog"
    return tool or "runs"


def check_name(tool, name, what):
    """UsageError unless a result of @tool (one of FIXED) can have the quantity
    @name; @what names the results (before there are any, as jtr ab runs them)."""
    if name is not None and tool in FIXED and name not in FIXED[tool]:
        raise UsageError("--quantity %s: %s have %s" % (name, what, ", ".join(FIXED[tool])))


def measures(tool, name):
    """What quantity @name of a @tool result measures, or None when not known
    (a tag of an imported log, a tool this version does not know)."""
    if tool == "clock":
        return CLOCK
    return MEASURES.get(name)


def quantities(result):
    """The names of @result's quantities, the default first, the others in the
    order of their first run."""
    tool = result.get("tool")
    names = []
    for run in _runs(result):
        q = run_quantity(tool, run)
        if q not in names:
            names.append(q)
    default = FIXED.get(tool, (None,))[0]
    if default in names:
        names.remove(default)
        names.insert(0, default)
    return names


class Quantity:
    """One quantity of a result: its name, what it measures, its runs, and the
    names of all the result's quantities (the default first)."""

    def __init__(self, name, measures, runs, names):
        self.name, self.measures, self.runs, self.names = name, measures, runs, names

    @property
    def others(self):
        """The result's other quantities."""
        return [n for n in self.names if n != self.name]

    def describe(self):
        """'rtt_from_intended: 1 run, 200000 samples'."""
        n = len(self.runs)
        return "%s: %d run%s, %d samples" % (self.name, n, "" if n == 1 else "s",
                                             sum(r.get("samples") or 0 for r in self.runs))


def select(result, name=None, label=None):
    """The Quantity @name of @result (None: its default); UsageError naming the
    quantities it has when it has no @name (@label: how to name the result)."""
    names = quantities(result)
    tool = result.get("tool")
    if name is None:
        name = names[0] if names else None
    elif name not in names:
        raise UsageError("%s: no quantity '%s' in this %s result; it has %s" % (
            label or getattr(result, "label", "the result"), name, tool or "?",
            ", ".join(names) if names else "none (it has no runs)"))
    runs = [r for r in _runs(result) if run_quantity(tool, r) == name]
    return Quantity(name, measures(tool, name), runs, names)


def selected(result, name=None, label=None):
    """@result with only the runs of its quantity @name (select()): a copy (a
    Result stays one, with its folder), and the Quantity."""
    q = select(result, name, label)
    doc = dict(result, runs=q.runs)
    return (Result(doc, result.path) if isinstance(result, Result) else doc), q


def tagged(result):
    """[(run name, quantity name)] of @result's runs."""
    return [(r.get("name"), run_quantity(result.get("tool"), r)) for r in _runs(result)]


def check_same(qa, qb, mixed=False, tags=("A", "B")):
    """The warnings of comparing quantity @qa with @qb; UsageError when they
    measure different things (both known) and @mixed was not given."""
    if qa.name == qb.name:
        return []
    what = "%s and %s differ in quantity (%s vs %s)" % (tags[0], tags[1], qa.name, qb.name)
    if qa.measures and qb.measures and qa.measures != qb.measures:
        if not mixed:
            raise UsageError("%s: %s measures the %s, %s the %s; compare one quantity "
                             "(--quantity NAME; %s has %s, %s has %s), or give "
                             "--mixed-quantities to compare them all the same" % (
                                 what, qa.name, qa.measures, qb.name, qb.measures,
                                 tags[0], ", ".join(qa.names), tags[1], ", ".join(qb.names)))
        return ["%s, which measure different things (the %s, the %s): compared as asked "
                "(--mixed-quantities)" % (what, qa.measures, qb.measures)]
    if qa.measures == qb.measures:
        return ["%s, both the %s: the difference includes that" % (what, qa.measures)]
    return ["%s; what %s measures is not known: the difference includes that" % (
        what, " and ".join(q.name for q in (qa, qb) if not q.measures))]


def _runs(result):
    return [r for r in result.get("runs") or [] if isinstance(r, dict)]
