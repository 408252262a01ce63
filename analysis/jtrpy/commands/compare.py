# SPDX-License-Identifier: GPL-2.0-only
"""compare - jtr compare A B: is B better or worse than A?"""
from ..cli.parser import (
    Count,
    Duration,
    JtrParser,
    Percent,
    add_accept_invalid,
    add_output,
    add_quantity,
)
from ..drivers.compare import compare_results
from ..errors import UsageError
from ..render.compare import format_table
from ..stats.compare import (
    DEFAULT_CONFIDENCE,
    DEFAULT_MIN_EFFECT_NS,
    DEFAULT_MIN_EFFECT_PCT,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    FORMAT,
    SHORT_RUN_NS,
)
from ..units import fmt_ns

DESCRIPTION = """\
Compare two results: A (before) and B (after), each a results folder or its
result.json. Printed for each percentile of the per-loop time (p50 to p99.999):
A, B, the difference B-A and a bootstrap confidence interval of it drawn from
the two histograms; then the time lost and the outliers per second, the causes
when both results were attributed, IPC and misses per million loops when both
carry hardware counters, and a one-line verdict naming the metrics that decided
it. Lower is better. A key metric (p99, p99.9, p99.99, time lost) counts as
changed when its CI excludes 0 and the change is at least the minimum practical
effect (--min-effect and --min-effect-pct): then the verdict is better, worse or
mixed; a smaller change is "no practical difference", none "no significant
change". Two sides that measure different things (--mixed-quantities) or whose
values have different resolutions (an imported oslat result counts whole
microseconds) are "not comparable", and a result that is not a valid measurement
(its validity: a client late on most sends, a threshold from a slow warm-up)
gets no verdict ("invalid") unless --accept-invalid: the numbers are shown, not
judged. Where a sample is a latency (wake, ping, sub) the time lost is replaced
by the excess latency per second of run (how far the outliers went past the
threshold). A side that is one run shorter than %d s gets a suggestion to repeat
it.
Each result is compared on one quantity, named in the output: its tool's
default (gap, null, ping's rtt_from_intended, sub's latency_from_send, ...) or
--quantity NAME. The runs of that quantity (a gap run per CPU, a null run per
repetition) are merged into one histogram; a ping result's three runs are three
quantities, never pooled. Two quantities that measure different things (a round
trip against a loop time) are refused unless --mixed-quantities.
docs/compare.md explains the method and the JSON.""" % (SHORT_RUN_NS // 10 ** 9)

EXAMPLES = """\
  jtr compare before after
  jtr compare results/20261122-041305-vm-gap results/latest
  jtr compare --confidence 99 --resamples 5000 -o cmp.json before/result.json after
  jtr compare --quantity rtt_from_send ping-before ping-after
  jtr compare --min-effect 1us --min-effect-pct 20 before after   # only large changes"""


def make_parser(prog):
    p = JtrParser(prog, usage="%(prog)s [OPTIONS] A B", description=DESCRIPTION,
                  examples=EXAMPLES)
    p.add_argument("--confidence", metavar="PCT", type=Percent(50, 99.99),
                   default=DEFAULT_CONFIDENCE,
                   help="confidence level of the intervals, 50 to 99.99 (default %g)"
                   % DEFAULT_CONFIDENCE)
    p.add_argument("--resamples", metavar="N", type=Count(100, 100000),
                   default=DEFAULT_RESAMPLES,
                   help="bootstrap resamples, 100 to 100000 (default %d)" % DEFAULT_RESAMPLES)
    p.add_argument("--seed", metavar="N", type=Count(0, 2 ** 32 - 1), default=DEFAULT_SEED,
                   help="seed of the resampling: the same seed gives the same output "
                        "(default %d)" % DEFAULT_SEED)
    p.add_argument("--min-effect", metavar="DUR", type=Duration(0, 10 ** 12),
                   default=DEFAULT_MIN_EFFECT_NS,
                   help="smallest change of a percentile that counts (time lost: per ms of "
                        "run), e.g. 50ns, 1us; 0 for any (default %s)"
                        % fmt_ns(DEFAULT_MIN_EFFECT_NS).replace(" ", ""))
    p.add_argument("--min-effect-pct", metavar="PCT", type=Percent(0, 1000),
                   default=DEFAULT_MIN_EFFECT_PCT,
                   help="smallest change that counts, in %%%% of A, 0 to 1000; 0 for any "
                        "(default %g)" % DEFAULT_MIN_EFFECT_PCT)
    add_accept_invalid(p)
    p.add_argument("--json", action="store_true",
                   help="print the comparison as JSON (%s) instead of the table" % FORMAT)
    add_output(p, "also write the JSON comparison to FILE", metavar="FILE")
    add_quantity(p, mixed=True)
    p.add_operands("results", "A B", "the results before and after: results folders or "
                   "their result.json")
    return p


def run(opts):
    if len(opts.results) != 2:
        raise UsageError("give two results, A (before) and B (after), not %d; see "
                         "'jtr compare --help'" % len(opts.results))
    c, text = compare_results(
        *opts.results, out=opts.output, confidence=opts.confidence, resamples=opts.resamples,
        seed=opts.seed, quantity=opts.quantity, mixed=opts.mixed,
        min_effect_ns=opts.min_effect, min_effect_pct=opts.min_effect_pct,
        accept_invalid=opts.accept_invalid)
    if opts.json:
        print(text, end="")
    else:
        print("\n".join(format_table(c)))
    return 0
