# SPDX-License-Identifier: GPL-2.0-only
"""fields - the fields of result.json jtr's readers use, and what each must be
(system/schema.py checks them when a result is loaded).

docs/result.schema.json is the full definition of what the tools write; this is
the part the analysis commands rely on (ls, compare, report, export, attribute,
import's results), checked on every load so a damaged or hostile result is
refused with one line naming the field instead of failing somewhere later. A
field absent here is not required, as long as the readers do without it; one
present must have the type they expect. Limits: times in ns 0 to 2^63-1 (292
years), counts 0 to 2^53 (what a double holds exactly), CPUs 0 to 65535,
names 256 characters, 1 to 14 sub-bucket bits (lib/jtr_hist.h)."""
from ..system.schema import (
    COUNT,
    COUNT_MAX,
    CPU,
    NAME,
    NS,
    TEXT,
    Any,
    Bool,
    Int,
    List,
    Num,
    Obj,
    Opt,
    Str,
    Time,
    Tuple,
    describe,
)

MAX_HISTO_BUCKETS = 1000000     # formats/legacy.py's 10 ns view (jtr report --histo-buckets)


def ascending_buckets(buckets):
    """Why @buckets ([lo, hi, count], checked one by one) are not one histogram's:
    each lo <= hi, above the bucket before, the counts' sum a count; or None."""
    prev, total = -1, 0
    for i, (lo, hi, count) in enumerate(buckets):
        if lo > hi or lo <= prev:
            return ("[%d]" % i, "a bucket above the one before it with lo_ns <= hi_ns",
                    "[%s, %s, %s]" % (describe(lo), describe(hi), describe(count)))
        prev, total = hi, total + count
    if total > COUNT_MAX:
        return ("", "buckets whose counts add up to at most 2^53",
                "a total of %s" % describe(total))
    return None


PERCENTILES = Obj(values=NS, what="an object of percentile: ns")
BUCKET = Tuple(NS, NS, COUNT, what="a [lo_ns, hi_ns, count] bucket (times in ns, a count)")
HISTOGRAM = Obj({
    "unit": Str(16),
    "sub_bucket_bits": Int(1, 14),
    "max_rel_error": Num(0, 1),
    "total": COUNT,
    "buckets": List(BUCKET, "a list of [lo_ns, hi_ns, count] buckets", valid=ascending_buckets),
}, required=("sub_bucket_bits", "buckets"), what="a histogram object")
OUTLIERS = Obj({
    "threshold_ns": NS, "count": COUNT, "per_s": Num(0), "logged": COUNT, "dropped": COUNT,
    "total_ns": NS, "lost_ns": NS, "max_ns": NS, "log": Str(),
    "length_percentiles_ns": PERCENTILES,
})
PMU = Obj({
    "cycles": Opt(COUNT), "instructions": Opt(COUNT), "cache_misses": Opt(COUNT),
    "dtlb_load_misses": Opt(COUNT), "ipc": Opt(Num(0)),
    "per_million_loops": Obj(values=Num(0)),
})
RUN = Obj({
    "name": Opt(NAME), "cpu": Opt(CPU), "partial": Opt(Bool()), "kind": Opt(Str(64)),
    "pair": Opt(COUNT), "run": Opt(COUNT),
    "start_mono_ns": Opt(NS), "end_mono_ns": Opt(NS), "duration_ns": Opt(NS),
    "samples": Opt(COUNT), "min_ns": NS, "max_ns": NS,
    "mean_ns": Opt(Num(0)), "stddev_ns": Opt(Num(0)), "loop_period_ns": Opt(Num(0)),
    "lost_time_pct": Opt(Num(0)), "percentiles_ns": PERCENTILES,
    "outliers": Opt(OUTLIERS), "pmu": Opt(PMU), "histogram": Opt(HISTOGRAM),
    "legacy_lead": Opt(NAME),
}, what="a run object")
HOST = Obj({"hostname": Opt(NAME), "tuning_profile": Opt(NAME),
            "rt_throttling": Opt(Obj(values=Any()))})
CALIBRATION = Obj({"timebase": Opt(Str(32)), "tsc_hz": Opt(Num(0)),
                   "gettime_cost_ns": Opt(Num(0)), "rdtsc_cost_ns": Opt(Num(0)),
                   "loops_1000_cost_ns": Opt(Num(0))})
PARAMS = Obj({"histo_buckets": Opt(Int(0, MAX_HISTO_BUCKETS)), "desc": Opt(TEXT)})
TRACER = Obj({
    "backend": Opt(Str(64)), "events": Opt(COUNT), "dropped": Opt(COUNT),
    "cpus": List(CPU), "start_ns": Opt(NS), "end_ns": Opt(NS),
    "cost": Obj({"kernel_ns": NS, "kernel_runs": COUNT, "kernel_timed_runs": COUNT,
                 "tracing_cpu_ns": NS,
                 "setup_cpu_ns": NS, "convert_ns": NS, "process_cpus": Opt(Str(256))}),
})
CAUSE = Obj({
    "category": NAME, "name": Str(), "count": Opt(COUNT), "primary_count": Opt(COUNT),
    "total_ns": NS, "share": Num(0), "p50_ns": Opt(NS), "max_ns": Opt(NS),
    "per_s": Opt(Num(0)), "example_chain": Opt(TEXT),
}, what="a cause object")
WORST = Obj({
    "cpu": CPU, "start_ns": NS, "length_ns": NS, "category": Opt(NAME), "name": Opt(Str()),
    "chain": Opt(TEXT), "traced_ns": Opt(NS),
}, required=("start_ns", "length_ns"), what="an outlier object")
ATTRIBUTION = Obj({
    "tracer": TRACER,
    "outliers": Obj({"count": Opt(COUNT), "total_ns": Opt(NS), "traced_ns": Opt(NS),
                     "unlogged": Opt(COUNT), "duration_ns": Opt(NS), "start_ns": Opt(NS),
                     "cpus": List(CPU)}),
    "causes": List(CAUSE, "a list of cause objects"),
    "worst": List(WORST, "a list of outlier objects"),
    "warnings": List(TEXT, "a list of strings"),
})
RESULT = Obj({
    "format": Str(64), "tool": Str(64), "jtr_version": Opt(Str(64)),
    "command": List(TEXT, "a list of strings"),
    "started_at": Opt(Time()), "ended_at": Opt(Time()),
    "started_mono_ns": Opt(NS), "ended_mono_ns": Opt(NS), "partial": Opt(Bool()),
    "privileges": Opt(Obj(values=Any())), "host": Opt(HOST), "calibration": Opt(CALIBRATION),
    "params": Opt(PARAMS), "runs": List(RUN, "a list of run objects"),
    "files": Obj(values=Str(), what="an object of role: file name"),
    "warnings": List(TEXT, "a list of strings"),
    "attribution": Opt(ATTRIBUTION), "import": Opt(Obj(values=Any())),
    "transport": Opt(Obj(values=Any())),
}, what="a result object")
