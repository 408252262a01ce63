# SPDX-License-Identifier: GPL-2.0-only
"""ab - jtr ab PROFILE [OPTIONS] [-- PROBE [PROBE OPTIONS]]: does a tuning
profile help? Baseline runs, the profile applied, tuned runs, reverted,
compared; always reverted (error, Ctrl-C, SIGTERM, SIGHUP). The probe is any
of jtr run's, with its own options passed on as they are."""
import os

from ..cli.parser import (
    Count,
    Duration,
    JtrParser,
    add_accept_invalid,
    add_backend,
    add_partner_cpus,
    add_quantity,
    shared,
)
from ..drivers.ab import experiment
from ..drivers.plan import PROBES, find_option, make_plan, partner_cpu_of
from ..errors import UsageError
from ..results.quantity import check_name
from ..results.result import new_results_dir
from ..system.cpus import online_cpus
from ..tune import engine as E

DESCRIPTION = """\
Measure whether a tuning profile helps: baseline runs on the machine as it is,
the profile applied (jtr tune apply), the same runs again, the profile reverted,
and the two sides compared (jtr compare: percentiles with bootstrap confidence
intervals, time lost, outliers/s, per-cause deltas, a verdict). With --repeat N
there are N runs a side, interleaved A B B A A B ..., so drift on a noisy
machine shows as run-to-run spread instead of as an effect. Each run is a
jtr run of PROBE (after '--'; gap when none is given) with its options as they
are, ping's jtr pong and pub's jtr sub started beside it, and the sides are
compared on the probe's default quantity (gap; null; send's send runs; ping's
rtt_from_intended; pub: the subscriber's latency_from_send) or --quantity. The
profile is
reverted whatever happens: an error, or Ctrl-C, SIGTERM or SIGHUP. The first of
those stops the experiment: the run under way is kept (marked partial) and
compared with the rest, and the exit status is 130; later ones only wait for
the revert and the results to be written."""

NOTES = """\
Needs root (it applies a profile). Run it from a housekeeping CPU.
-d sets the length of a gap run; the other probes' own options set theirs (null:
-n samples, --runs runs; send: -n; ping and pub: -n messages, -r rate), and -d is
refused with them. jtr ab chooses each run's folder (-o in the probe's options
is refused)."""

EXAMPLES = """\
  sudo jtr ab jtr-latency -d 30
  sudo jtr ab jtr-isolate --cpus 1 --repeat 3
  sudo jtr ab jtr-latency --repeat 3 -- null -n 500K -r 1
  sudo jtr ab jtr-isolate --cpus 1 --pong-cpu 0 -- ping -T udp -1 -n 20K -r 10K
  sudo jtr ab jtr-latency --quantity rtt_from_send -- ping -T udp -1 -n 20K -r 10K"""

DEFAULT_DURATION_NS = 10 * 10 ** 9


def make_parser(prog):
    p = JtrParser(prog, usage="%(prog)s PROFILE [OPTIONS] [-- PROBE [PROBE OPTIONS]]",
                  description=DESCRIPTION, notes=NOTES, examples=EXAMPLES)
    p.add_argument(*shared("-c"), metavar="LIST",
                   help="CPUs to isolate (jtr-isolate, jtr-realtime) and to measure "
                        "(default: measure the default CPU of jtr run)")
    p.add_argument(*shared("-d"), metavar="DUR", dest="duration_ns",
                   type=Duration(10 ** 6, 30 * 86400 * 10 ** 9),
                   help="each gap run (default 10s; 500ms, 2m; a bare number is in seconds); "
                        "the other probes' options set their length")
    add_partner_cpus(p, online_cpus)
    p.add_argument("--repeat", metavar="N", type=Count(1, 100), default=1,
                   help="runs a side, 1 to 100 (default 1)")
    p.add_argument("--no-trace", action="store_false", dest="trace",
                   help="measure only (no kernel-event tracing, no per-cause deltas)")
    add_backend(p)
    p.add_argument(*shared("-o"), metavar="DIR",
                   help="results folder (default results/DATE-HOST-ab): a-1/, b-1/, ... "
                        "(each a jtr run results folder), ab.json, compare.json and "
                        "compare.txt")
    add_quantity(p)
    add_accept_invalid(p)
    p.add_operands("profile", "PROFILE", "the profile to test (see 'jtr tune list')")
    return p


def parse(parser, args):
    """jtr ab's options before '--'; after it the probe and its options (none: gap)."""
    args = list(args)
    probe, probe_args = "gap", []
    if "--" in args:
        i = args.index("--")
        args, rest = args[:i], args[i + 1:]
        if not rest or rest[0] not in PROBES:
            raise UsageError("-- %s: give a probe after '--': one of %s, e.g. 'jtr ab "
                             "jtr-latency -- ping -T udp -n 20K'" % (
                                 rest[0] if rest else "", ", ".join(PROBES)))
        probe, probe_args = rest[0], rest[1:]
    opts = parser.parse_args(args)
    extra = [w for w in opts.profile[1:] if w in PROBES]
    if extra:
        raise UsageError("%s: put the probe after '--': jtr ab %s [OPTIONS] -- %s [ITS OPTIONS]"
                         % (extra[0], opts.profile[0], extra[0]))
    opts.probe, opts.probe_args = probe, probe_args
    check_probe(opts)
    return opts


def check_probe(opts):
    """Refuse what makes no sense for the probe, saying why; set opts.duration_ns
    (gap: -d, the probe's own -d or 10 s; others: None) and opts.partner_cpu."""
    probe, args = opts.probe, opts.probe_args
    if find_option(args, "-o", "--output") is not None:
        raise UsageError("-o in %s's options: jtr ab chooses each run's folder (a-1, b-1, "
                         "... in its own -o); drop it" % probe)
    opts.partner_cpu = partner_cpu_of(probe, opts.pong_cpu, opts.sub_cpu)
    own = [o for o in (("-d", "--duration"), ("-n", "--count", "--loops"), ("-j",))
           if probe == "gap" and find_option(args, *o) is not None]
    if own and opts.duration_ns is not None:
        raise UsageError("-d and gap's %s both set the length of a run; give one" % own[0][0])
    if probe != "gap" and opts.duration_ns is not None:
        raise UsageError("-d: %s's own options set its length (%s), not a duration; give "
                         "them after '-- %s'" % (probe, LENGTH[probe], probe))
    if probe == "gap" and not own and opts.duration_ns is None:
        opts.duration_ns = DEFAULT_DURATION_NS
    cpus = E.check_cpus(opts.cpus) if opts.cpus else []
    plan = make_plan(probe, args, cpus[:1] or None, opts.partner_cpu)   # refused now, not later
    tool = plan.partner if plan.measured_by == "partner" else probe
    check_name(tool, opts.quantity, "%s results" % tool)


LENGTH = {"null": "-n samples a run, --runs runs", "send": "-n samples, --pairs pairs",
          "ping": "-n messages, -r rate", "pub": "-n messages, -r rate"}


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
         "trace": opts.trace, "backend": opts.backend, "probe": opts.probe,
         "probe_args": opts.probe_args, "partner_cpu": opts.partner_cpu,
         "quantity": opts.quantity, "accept_invalid": opts.accept_invalid}
    return experiment(o, profile, cpus, outdir)
