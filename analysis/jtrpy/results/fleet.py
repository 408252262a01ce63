# SPDX-License-Identifier: GPL-2.0-only
"""fleet - many hosts' results side by side (jtr fleet): whose each result is, the
headline numbers and the time lost per cause of each host, and which hosts differ
from the others, on which figure, and by which cause.

Where the results come from. Each folder given is
  - a results folder (it holds result.json): one result;
  - else a folder of hosts, as Ansible's fetch leaves them (DIR/HOST/...): each
    sub-folder is a host, named by the sub-folder's name, and its results are found
    anywhere below it (up to MAX_DEPTH folders down; hidden folders, such as a
    probe's unfinished .NAME.partial-PID, are left out). A sub-folder that is
    itself a result is a result of a plain results folder (jtr's results/).
A result given as a folder of its own, or found directly in a plain results
folder, is the host's that its result.json names (host.hostname), else its
folder's name.

Rows: one per host and probe (the result's tool and its default quantity,
results/quantity.py). When a host has several results of one probe, the newest
(started_at) is used and the others are listed as not used.

Time lost per cause: a cause's share of the attribution's outlier time times the
row's time lost (%), so that a host's causes add up to its time lost. Causes are
matched across hosts by category and name, without what differs from host to
host for the same thing (cause_key): a task's pid and priority, a kworker's
number in its pool ("kworker/1:2 (pid 374, prio 120)" is "kworker/1:*").

The rule. Each host is held against the OTHER hosts of its probe: for a figure x
of host h, the baseline is the median of the others' figures and the spread is
1.4826 x their median absolute deviation (MAD; the 1.4826 makes it the standard
deviation of normal data). h is flagged on that figure when
    x > baseline + k x spread                 (a robust margin; k = 3)
    x >= ratio x baseline                     (ratio = 2)
    x - baseline >= minimum                   (1 us for a latency; 0.5 points of
                                               time lost)
all three. Leaving h out of its own baseline is what makes the rule work for two
hosts: each is held against the other (the fleet median of two would sit
halfway and hide half of any difference), the spread is 0 and the practical
minimum decides; from three hosts on, the MAD of the others widens the margin
by how much the fleet itself varies. A percentile is judged only where at least
MIN_TAIL samples lie beyond it (p99.99 needs 100,000 samples), in the host and
in the hosts it is held against: a 2,000-sample run's p99.99 is its maximum,
one event. The cause a flag names is the one whose time lost exceeds its own
baseline (the median of the others' time lost to it, 0 where another host's
attribution does not have it) by the most.
"""
import os
import re
import statistics

from ..errors import UsageError
from ..system.schema import utc_time
from .figures import result_figures
from .find import find_results, subfolders
from .result import PERCENTILE_KEYS, load_result, result_path
from .validity import MEASUREMENT, summary

FORMAT = "jtr-fleet/1"
MAX_DEPTH = 6
MIN_TAIL = 10
MAD_SCALE = 1.4826

# the figures a host may be judged on, as named on the command line
METRICS = ("lost",) + tuple("p" + k for k in PERCENTILE_KEYS) + ("max",)
DEFAULT_METRICS = ("lost", "p99.99")
DEFAULT_K = 3.0
DEFAULT_RATIO = 2.0
DEFAULT_MIN_LATENCY_NS = 1000
DEFAULT_MIN_LOST_PCT = 0.5


# --- finding the results ----------------------------------------------------------

def host_of(result, folder):
    """The host a result given on its own belongs to: its host.hostname, else the
    name of its folder."""
    name = (result.get("host") or {}).get("hostname")
    return name or os.path.basename(os.path.abspath(folder)) or "host"


def result_folders(top):
    """The folders under @top (a host's folder) that hold a result.json, top
    first, at most MAX_DEPTH levels down, hidden folders and links left out."""
    out = []
    base = top.rstrip(os.sep).count(os.sep)

    def unreadable(e):
        # a host whose results cannot be read is said, not left out (it may be
        # the one that differs)
        raise UsageError("%s: cannot read: %s" % (e.filename, e.strerror))

    for d, dirs, files in os.walk(top, onerror=unreadable):
        dirs[:] = sorted(x for x in dirs if not x.startswith(".") and
                         not os.path.islink(os.path.join(d, x)))
        if d.rstrip(os.sep).count(os.sep) - base >= MAX_DEPTH:
            dirs[:] = []
        if "result.json" in files:
            out.append(d)
    return out


def _load(folders):
    """[Result] of @folders (each one a result); UsageError for a damaged one."""
    found, _, damaged = find_results(folders)
    if damaged:
        raise UsageError(damaged[0][1])
    return found


def collect(folders):
    """({host: [Result]}, [host folders that hold no result], [host folders that
    are links out of the folder given, not followed]) of the results under
    @folders (see the module's note). UsageError for a folder that is not there or
    cannot be read, a damaged result (its load error, one line naming the file and
    the field), and when no result is found at all."""
    hosts, empty, seen, outside = {}, [], set(), []

    def add(host, results):
        for r in results:
            real = os.path.realpath(r.path)
            if real not in seen:
                seen.add(real)
                hosts.setdefault(host, []).append(r)

    for top in folders:
        if not os.path.exists(top):
            raise UsageError("%s: no such folder" % top)
        if not os.path.isdir(top):
            if os.path.basename(top) != "result.json":
                raise UsageError("%s: not a folder; give results folders or folders of "
                                 "hosts' results" % top)
            r = load_result(top)
            add(host_of(r, r.folder), [r])
            continue
        if os.path.lexists(result_path(top)):
            r = load_result(top)
            add(host_of(r, top), [r])
            continue
        inside = os.path.realpath(top)
        for p in subfolders(top):
            name = os.path.basename(p)
            if name.startswith("."):
                continue
            real = os.path.realpath(p)
            if os.path.islink(p) and os.path.commonpath([real, inside]) != inside:
                outside.append(p)          # a link out of the folder: not followed
                continue
            if os.path.lexists(result_path(p)):
                r = _load([p])[0]
                add(host_of(r, p), [r])
                continue
            found = _load(result_folders(p))
            if found:
                add(name, found)
            else:
                empty.append(p)
    if not hosts:
        raise UsageError("no jtr result in %s; give results folders, or a folder of hosts' "
                         "results (DIR/HOST/...)" % ", ".join(folders))
    return hosts, empty, outside


# --- the figures of each host ---------------------------------------------------------

_PID = re.compile(r" \(pid \d+(, prio -?\d+)?\)$")
_KWORKER = re.compile(r"^(kworker/u?)(\d+):\d+(.*)$")


def cause_key(category, name):
    """The name a cause is matched by across hosts: @name without a task's pid and
    priority and without a kworker's number in its pool ("kworker/1:*H")."""
    name = _PID.sub("", str(name or ""))
    m = _KWORKER.match(name)
    if m:
        name = "%s%s:*%s" % m.groups()
    return "%s: %s" % (category, name) if name else str(category)


def row_causes(result, lost_pct, cpu_time=True):
    """[{category, name, key, share, loss, lost_pct}] of the result's attribution,
    causes of one key merged, most time first: loss is the cause's share of the
    row's loss @lost_pct (its time lost in %, or, where a sample is a latency
    (@cpu_time false), its excess latency in ns per s), None where the result has
    none; lost_pct the same where it is time lost, else None. [] without an
    attribution."""
    a = result.get("attribution")
    merged = {}
    for c in (a.get("causes") or []) if isinstance(a, dict) else []:
        key = cause_key(c.get("category"), c.get("name"))
        name = key.split(": ", 1)[1] if ": " in key else ""
        m = merged.setdefault(key, {"category": c.get("category"), "name": name, "key": key,
                                    "share": 0.0})
        m["share"] += c.get("share") or 0.0
    out = sorted(merged.values(), key=lambda c: (-c["share"], c["key"]))
    for c in out:
        c["share"] = round(c["share"], 6)
        c["loss"] = None if lost_pct is None else c["share"] * lost_pct
        c["lost_pct"] = c["loss"] if cpu_time else None
    return out


def _started(r):
    t = utc_time(r.get("started_at") or "")
    return (t.timestamp() if t else 0.0, r.folder or "")


def make_rows(hosts):
    """(rows, not used): a row (a dict of figures) per host and probe, its newest
    result; the paths of the other results of the same host and probe."""
    rows, not_used = [], []
    for host, results in hosts.items():
        by_probe = {}
        for r in results:
            f = result_figures(r)
            by_probe.setdefault((f["tool"] or "?", f["quantity"]), []).append((r, f))
        for (tool, quantity), pairs in by_probe.items():
            pairs.sort(key=lambda p: _started(p[0]), reverse=True)
            r, f = pairs[0]
            not_used.extend(p[0].folder for p in pairs[1:])
            loss = f["lost_pct"] if f["cpu_time"] else f["excess_ns_per_s"]
            causes = row_causes(r, loss, f["cpu_time"])
            cats = {}
            for c in causes:
                if c["loss"] is not None:
                    cats[c["category"]] = cats.get(c["category"], 0.0) + c["loss"]
            rows.append({
                "host": host, "tool": tool, "quantity": quantity, "measures": f["measures"],
                "path": r.folder, "started_at": f["started_at"], "cpus": f["cpus"],
                "duration_ns": f["duration_ns"], "samples": f["samples"],
                "percentiles_ns": f["percentiles_ns"], "max_ns": f["max_ns"],
                "lost_pct": f["lost_pct"], "excess_ns_per_s": f["excess_ns_per_s"],
                "cpu_time": f["cpu_time"], "loss": loss,
                "outliers_per_s": f["outliers_per_s"],
                "partial": f["partial"], "tuning_profile": f["tuning_profile"],
                "attributed": isinstance(r.get("attribution"), dict),
                "causes": causes, "categories": cats, "flags": [], "cause": None,
                "flagged": False, "valid": f["validity"]["valid"] or not any(
                    x["scope"] == MEASUREMENT for x in f["validity"]["reasons"]),
                "invalid": summary(f["validity"], MEASUREMENT)})
    rows.sort(key=lambda x: (x["tool"], x["quantity"] or "", natural(x["host"])))
    return rows, sorted(not_used)


def natural(text):
    """A sort key that puts host2 before host10."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


# --- the rule -----------------------------------------------------------------------

def metric_value(row, metric):
    """The row's figure @metric (METRICS), or None when it has none or it cannot be
    judged (a percentile with fewer than MIN_TAIL samples beyond it)."""
    if metric == "lost":
        return row.get("loss", row.get("lost_pct"))
    if metric == "max":
        return row["max_ns"]
    key = metric[1:]
    v = row["percentiles_ns"].get(key)
    if v is None or (row["samples"] or 0) * (1 - float(key) / 100) < MIN_TAIL - 1e-6:
        return None
    return v


def baseline(values):
    """(median, spread) of @values: the spread is MAD_SCALE x the median absolute
    deviation from the median (0 for one value)."""
    med = statistics.median(values)
    return med, MAD_SCALE * statistics.median(abs(v - med) for v in values)


class Rule:
    """The flagging rule's settings (see the module's note)."""

    def __init__(self, metrics=DEFAULT_METRICS, k=DEFAULT_K, ratio=DEFAULT_RATIO,
                 min_latency_ns=DEFAULT_MIN_LATENCY_NS, min_lost_pct=DEFAULT_MIN_LOST_PCT):
        self.metrics, self.k, self.ratio = tuple(metrics), k, ratio
        self.min_latency_ns, self.min_lost_pct = min_latency_ns, min_lost_pct

    def minimum(self, metric, cpu_time=True):
        """The smallest difference that counts: in a latency, min_latency_ns; in the
        time lost, min_lost_pct points; in a latency probe's excess latency per s,
        min_latency_ns per ms of run."""
        if metric != "lost":
            return self.min_latency_ns
        return self.min_lost_pct if cpu_time else self.min_latency_ns * 1000.0

    def as_dict(self):
        return {"baseline": "the median of the other hosts of the probe",
                "spread": "%g x the other hosts' median absolute deviation" % MAD_SCALE,
                "metrics": list(self.metrics), "k": self.k, "ratio": self.ratio,
                "min_latency_ns": self.min_latency_ns, "min_lost_pct": self.min_lost_pct,
                "min_tail_samples": MIN_TAIL}

    def judge(self, x, others, metric, cpu_time=True):
        """The flag (a dict) of figure @x against the other hosts' figures @others,
        or None."""
        base, spread = baseline(others)
        threshold = max(base + self.k * spread, self.ratio * base,
                        base + self.minimum(metric, cpu_time))
        if not (x > base + self.k * spread and x >= threshold):
            return None
        return {"metric": metric, "value": x, "baseline": base, "spread": spread,
                "threshold": threshold, "times": x / base if base else None,
                "compared": len(others)}


def excess_cause(row, others):
    """The cause of @row whose time lost exceeds the median of @others' (attributed
    rows; 0 where one lacks it) by the most: {category, name, key, lost_pct,
    baseline_pct, excess_pct}; or {"why": ...} when that cannot be said."""
    if not row["attributed"]:
        return {"why": "this run was not attributed (jtr run as root traces its causes)"}
    if row.get("loss") is None:
        return {"why": "this result has no time lost"}
    peers = [o for o in others if o["attributed"] and o.get("loss") is not None]
    if not peers:
        return {"why": "no other host's run of this probe was attributed"}
    best = None
    for c in row["causes"]:
        theirs = [next((d["loss"] for d in o["causes"] if d["key"] == c["key"]), 0.0)
                  for o in peers]
        base = statistics.median(theirs)
        excess = c["loss"] - base
        if best is None or excess > best["excess_pct"]:
            best = {"category": c["category"], "name": c["name"], "key": c["key"],
                    "lost_pct": c["loss"], "baseline_pct": base, "excess_pct": excess,
                    "unit": "%" if row.get("cpu_time", True) else "ns/s"}
    if best is None or best["excess_pct"] <= 0:
        return {"why": "no cause takes more time here than on the other hosts"}
    return best


def judge(rows, rule, accept_invalid=False):
    """Flag the rows that differ from the other hosts of their probe (rule: a Rule);
    sets each row's flags, flagged and cause, and returns the probes that have a
    single host (not judged). A row that is not a valid measurement is neither
    judged nor a baseline of the others unless @accept_invalid."""
    groups = {}
    for row in rows:
        if row.get("valid", True) or accept_invalid:
            groups.setdefault((row["tool"], row["quantity"]), []).append(row)
    alone = []
    for key, group in groups.items():
        if len(group) < 2:
            alone.append("%s/%s" % key if key[1] != key[0] else key[0])
            continue
        for row in group:
            others = [o for o in group if o is not row]
            for metric in rule.metrics:
                x = metric_value(row, metric)
                theirs = [v for v in (metric_value(o, metric) for o in others)
                          if v is not None]
                if x is None or not theirs:
                    continue
                flag = rule.judge(x, theirs, metric, row.get("cpu_time", True))
                if flag:
                    row["flags"].append(flag)
            if row["flags"]:
                row["flagged"] = True
                row["cause"] = excess_cause(row, others)
    return alone


def fleet(folders, rule=None, accept_invalid=False):
    """The whole jtr fleet document (FORMAT) of the results under @folders (rows
    that are not a valid measurement are not judged unless @accept_invalid)."""
    rule = rule or Rule()
    hosts, empty, outside = collect(folders)
    rows, not_used = make_rows(hosts)
    alone = judge(rows, rule, accept_invalid)
    flagged = sorted({r["host"] for r in rows if r["flagged"]}, key=natural)
    invalid = [] if accept_invalid else [
        {"host": r["host"], "tool": r["tool"], "path": r["path"], "why": r["invalid"]}
        for r in rows if not r["valid"]]
    return {"format": FORMAT, "hosts": sorted(hosts, key=natural), "rule": rule.as_dict(),
            "rows": rows, "flagged_hosts": flagged, "not_judged": alone,
            "invalid": invalid, "not_used": not_used, "hosts_without_results": empty,
            "links_not_followed": outside}
