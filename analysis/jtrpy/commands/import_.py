# SPDX-License-Identifier: GPL-2.0-only
"""import - jtr import: oslat and cyclictest --json results and HdrHistogram
interval logs as jtr results folders, so they can be listed, compared, reported
and exported next to jtr's own."""
from ..cli.parser import OUTPUT_RULE, Choice, JtrParser, add_output
from ..drivers.import_ import import_job
from ..errors import UsageError
from ..formats.imports import HLOG_UNITS

DESCRIPTION = """\
Turn the --json output of rt-tests' oslat or cyclictest into a jtr results folder
(tool "oslat" or "cyclictest", one run per measured thread), so it shows in
jtr ls and jtr compare and can be exported like jtr's own results. The kind of
file is recognised from its contents. Each run gets a jtr histogram built from
the tool's (values in us become ns), the tool's min, avg and max, and jtr's
percentiles of it. Host facts come from the file (hostname, kernel, machine); when
the file was written on this machine, the others are read here now, and the
result's "import" section says which are which. The original file is kept in the
folder. docs/interop.md says what maps to what and the limits.

With --hlog (or when FILE starts like one), FILE is an HdrHistogram interval log
(.hlog: 'jtr export --hlog', HdrHistogram's HistogramLogWriter in Java, C, Python,
Go, Rust, ...): tool "hlog", one run per tag (untagged: "hlog"), the intervals of
a tag added together, every bucket's count at the bucket's highest value on jtr's
grid of the log's precision (2 significant digits: jtr's default 1 %). Percentiles
read back equal the log's; min, max, mean and stddev are the buckets' (within the
log's relative error). The log keeps no host facts, calibration or outliers."""

EXAMPLES = """\
  oslat --cpu-list 1 -D 60 --json=oslat.json && jtr import oslat.json
  cyclictest -m -q -D 60 -t 1 -a 1 -h 1000 --json=cyc.json && jtr import -o cyc cyc.json
  jtr compare cyc results/latest
  jtr export --hlog run.hlog results/latest && jtr import --hlog -o back run.hlog
  jtr import --hlog --unit us -o app service-latency.hlog   # a Java service's log, in us"""


def make_parser(prog):
    p = JtrParser(prog, usage="%(prog)s [-o DIR] FILE...\n"
                              "       %(prog)s --hlog [--unit ns|us] [-o DIR] FILE...",
                  description=DESCRIPTION, examples=EXAMPLES)
    add_output(p, "the results folder (default results/DATE-HOST-TOOL, DATE from the file's "
                  "start time; results/latest is left pointing at the last run measured "
                  "here): " + OUTPUT_RULE + ". With several FILEs, give no -o")
    p.add_argument("--hlog", action="store_true", help="FILE is an HdrHistogram interval log")
    p.add_argument("--unit", metavar="U", type=Choice(*HLOG_UNITS),
                   help="the log's values are in ns (default) or us")
    p.add_operands("files", "FILE", "what oslat or cyclictest wrote with --json=FILE, or an "
                   "HdrHistogram log")
    return p


def summary_line(outdir, result):
    runs = result["runs"]
    mx = max(r["max_ns"] for r in runs)
    return "%s: %s, %d run%s (%s), %d samples, max %s" % (
        outdir, result["tool"], len(runs), "" if len(runs) == 1 else "s",
        ", ".join(r["name"] for r in runs), sum(r["samples"] for r in runs),
        "%d us" % (mx // 1000) if result["tool"] != "hlog" else "%d ns" % mx)


def run(opts):
    if not opts.files:
        raise UsageError("give the file oslat or cyclictest wrote with --json=FILE, or an "
                         "HdrHistogram log with --hlog FILE; see 'jtr import --help'")
    if opts.unit and not opts.hlog:
        raise UsageError("--unit goes with --hlog (the unit of an HdrHistogram log's values)")
    if opts.output is not None and len(opts.files) > 1:
        raise UsageError("-o names one folder: import one file at a time with -o, or give "
                         "no -o")
    for outdir, result in import_job(opts.files, opts.output, opts.hlog, opts.unit or "ns"):
        print(summary_line(outdir, result))
        for w in result["warnings"]:
            if not w.startswith("imported: host facts"):
                print("  note: %s" % w)
    return 0
