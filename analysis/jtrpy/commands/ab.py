"""ab - jtr ab PROFILE: does a tuning profile help? Baseline runs, the profile
applied, tuned runs, reverted, compared; always reverted (error, Ctrl-C,
SIGTERM, SIGHUP)."""
import os

from ..cli.parser import Count, Duration, JtrParser, add_backend
from ..drivers.ab import experiment
from ..errors import UsageError
from ..results.result import new_results_dir
from ..tune import engine as E

DESCRIPTION = """\
Measure whether a tuning profile helps: baseline runs on the machine as it is,
the profile applied (jtr tune apply), the same runs again, the profile reverted,
and the two sides compared (jtr compare: percentiles with bootstrap confidence
intervals, time lost, outliers/s, per-cause deltas, a verdict). With --repeat N
there are N runs a side, interleaved A B B A A B ..., so drift on a noisy
machine shows as run-to-run spread instead of as an effect. The profile is
reverted whatever happens: an error, or Ctrl-C, SIGTERM or SIGHUP. The first of
those stops the experiment: the run under way is kept (marked partial) and
compared with the rest, and the exit status is 130; later ones only wait for
the revert and the results to be written."""

NOTES = "Needs root (it applies a profile). Run it from a housekeeping CPU."

EXAMPLES = """\
  sudo jtr ab jtr-latency -d 30
  sudo jtr ab jtr-isolate --cpus 1 --repeat 3"""


def make_parser(prog):
    p = JtrParser(prog, usage="%(prog)s PROFILE [OPTIONS]", description=DESCRIPTION,
                  notes=NOTES, examples=EXAMPLES)
    p.add_argument("-c", "--cpus", metavar="LIST",
                   help="CPUs to isolate (jtr-isolate, jtr-realtime) and to measure "
                        "(default: measure the default CPU of jtr run)")
    p.add_argument("-d", "--duration", metavar="DUR", dest="duration_ns",
                   type=Duration(10 ** 6, 30 * 86400 * 10 ** 9), default=10 * 10 ** 9,
                   help="each run (default 10s; 500ms, 2m; a bare number is in seconds)")
    p.add_argument("--repeat", metavar="N", type=Count(1, 100), default=1,
                   help="runs a side, 1 to 100 (default 1)")
    p.add_argument("--no-trace", action="store_false", dest="trace",
                   help="measure only (no kernel-event tracing, no per-cause deltas)")
    add_backend(p)
    p.add_argument("-o", "--output", metavar="DIR",
                   help="results folder (default results/DATE-HOST-ab): a-1/, b-1/, ... "
                        "(each a jtr run results folder), ab.json, compare.json and "
                        "compare.txt")
    p.add_operands("profile", "PROFILE", "the profile to test (see 'jtr tune list')")
    return p


def run(opts):
    if not opts.profile:
        raise UsageError("give the profile to test, e.g. 'jtr ab jtr-latency'; see "
                         "'jtr tune list'")
    if len(opts.profile) > 1:
        raise UsageError("give one profile; '%s' is one too many" % opts.profile[1])
    name = opts.profile[0]
    cpus = E.check_cpus(opts.cpus) if opts.cpus else []
    profile = E.load_profile(name, cpus)      # unknown profile: exit 2 now
    E.need_root("ab")
    st = E.active_state()
    if st:
        raise UsageError("profile %s is applied: revert it first ('jtr tune revert'), so "
                         "the baseline is the machine untuned" % st["profile"])
    outdir = new_results_dir("ab", opts.output)
    os.makedirs(outdir)
    o = {"profile": name, "duration_ns": opts.duration_ns, "repeat": opts.repeat,
         "trace": opts.trace, "backend": opts.backend}
    return experiment(o, profile, cpus, outdir)
