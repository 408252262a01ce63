# SPDX-License-Identifier: GPL-2.0-only
"""report - the HTML page of one result (jtr report; two results: compare_page.py).

Top to bottom: a title saying what was measured, where and when; the summary
(headline numbers in people's units, the largest causes with their % of the
outliers' time, the warnings: the only place they are shown); the plots as
inline SVG (text stays text; the same plots as PNG files beside the page): the
percentile spectrum to the maximum, the timeline with every outlier coloured
by its cause (attribution.per_outlier) over the time lost per cause, the causes
by category; the 10 ns graphs; tables for people (13.2 us, 53.2 %, +0.335 s);
and last, closed, the result.json fields as written (JSON's own spelling).
The plots are drawn from the result's histograms (hist.py's percentile rule),
outliers.csv and the attribution.
"""
import bisect
import os
import re

from ..attribution.attribute import categories_of
from ..errors import JtrError
from ..results.figures import result_figures, supported
from ..results.quantity import select
from ..results.result import PERCENTILE_KEYS
from ..results.validity import summary
from ..system.files import read_bytes
from . import compare_plots, plots
from .attribution import (
    BACKEND_NAMES,
    PHASE_NAMES,
    budget_lines,
    cost_text,
    group_causes,
    phases_text,
)
from .compare import format_table as compare_table
from .html import esc, fmt_ns, img, jnum, page_html, svg_figure, table
from .plots import CATEGORY_COLOURS
from .text import cpus_text

SUMMARY_CAUSES = 5      # cause categories in the summary
SUMMARY_MAX = 1 << 20   # a summary.txt read for its cyclictest lines


def legacy_section(pngs, texts, captions=None):
    """The page's part for the 10 ns graphs and files."""
    if not pngs and not texts:
        return ""
    out = ["<h2>10 ns graphs (jtr_null's gnuplot format)</h2>",
           "<p>10 ns buckets, counts on a log scale, as far as 99.9 %% of the samples "
           "reach (--histo-buckets sets it): the tail past them is on the percentile "
           "spectrum above, to the max. The data files are in jtr_null's "
           "gnuplot format (docs/compat.md): %s</p>"
           % ", ".join('<a href="%s">%s</a>' % (esc(t), esc(t)) for t in texts)]
    for name, data in pngs.items():
        out.append(img(name, data, (captions or {}).get(name, name)))
    return "\n".join(out)




def run_rows(run):
    """(field, value as in result.json, reading) of a run's headline numbers."""
    rows = []
    p = run.get("percentiles_ns") or {}
    for k in p:
        rows.append(("percentiles_ns.%s" % k, jnum(p[k]), fmt_ns(p[k])))
    for k in ("min_ns", "max_ns", "mean_ns", "stddev_ns"):
        if k in run:
            rows.append((k, jnum(run[k]), fmt_ns(run[k])))
    for k in ("samples", "duration_ns", "loop_period_ns"):
        if k in run:
            rows.append((k, jnum(run[k]), fmt_ns(run[k]) if k.endswith("_ns") else ""))
    if "lost_time_pct" in run:
        rows.append(("lost_time_pct", jnum(run["lost_time_pct"]),
                     "%.3f %% of the time lost" % run["lost_time_pct"]))
    o = run.get("outliers")
    if isinstance(o, dict):
        for k in ("threshold_ns", "count", "per_s", "logged", "dropped", "total_ns",
                  "lost_ns", "max_ns"):
            if k in o:
                rows.append(("outliers.%s" % k, jnum(o[k]),
                             fmt_ns(o[k]) if k.endswith("_ns") else ""))
    if "pmu" in run:
        pmu = run["pmu"]
        if not isinstance(pmu, dict):
            rows.append(("pmu", "null", "no hardware counters (see the warnings)"))
        else:
            if "ipc" in pmu:
                rows.append(("pmu.ipc", jnum(pmu["ipc"]), "instructions per cycle"))
            for k, v in sorted((pmu.get("per_million_loops") or {}).items()):
                rows.append(("pmu.per_million_loops.%s" % k, jnum(v),
                             "%s per million loops" % k.replace("_", " ")))
    return rows


# what CPUID's hypervisor leaf (or /sys/hypervisor/type) says, in people's words
HYPERVISORS = {"KVMKVMKVM": "KVM", "Microsoft Hv": "Hyper-V", "VMwareVMware": "VMware",
               "XenVMMXenVMM": "Xen", "xen": "Xen", "TCGTCGTCGTCG": "QEMU (TCG)",
               "bhyve bhyve": "bhyve", "ACRNACRNACRN": "ACRN", "QNXQVMBSQG": "QNX",
               "lrpepyh  vr": "Parallels", "VBoxVBoxVBox": "VirtualBox",
               "Linux KVM Hv": "KVM (Hyper-V interface)"}


def hypervisor_name(raw):
    """The hypervisor's name for people from its vendor string ("KVMKVMKVM": KVM);
    an unknown one as it is, quoted; None when not known."""
    if not isinstance(raw, str) or not raw.strip():
        return None
    raw = raw.strip("\0 ")
    return HYPERVISORS.get(raw) or "'%s'" % raw


def rt_throttling_applies(result):
    """Does RT throttling change what this result measured: a run at SCHED_FIFO
    that does not sleep (a busy loop is stopped for the rest of each period; a
    thread that sleeps between wake-ups, jtr wake's, is not)? The probes say so
    themselves, by the same rule, in the result's warnings."""
    fifo = (result.get("privileges") or {}).get("fifo_priority")
    return bool(fifo) and result.get("tool") != "wake"


def warnings_of(result):
    """The warnings a reader should see, from the result's own fields, each once,
    those that change the reading most first: what cuts the numbers short, then
    what leaves outliers or causes out, then what adds outliers (RT throttling,
    only where it applies: rt_throttling_applies), then the attribution's and the
    probe's own, and last the virtual machine (the hypervisor by its name)."""
    w = []          # (rank, text)
    host = result.get("host") or {}
    rt = host.get("rt_throttling")
    said = [x for x in result.get("warnings") or [] if isinstance(x, str)]
    if result.get("partial"):
        w.append((0, "partial run: it was stopped early; the numbers cover what was "
                     "measured"))
    for r in result.get("runs", []):
        o = r.get("outliers") if isinstance(r, dict) else None
        if isinstance(r, dict) and r.get("partial"):
            w.append((0, "run %s was cut short" % r.get("name")))
        if isinstance(o, dict) and o.get("dropped"):
            w.append((1, "run %s: %s outliers did not fit the log; they are counted, not "
                         "in outliers.csv" % (r.get("name"), jnum(o["dropped"]))))
    a = result.get("attribution")
    if isinstance(a, dict):
        tr = a.get("tracer") or {}
        if tr.get("dropped"):
            w.append((1, "the tracer dropped %s events: causes may be missing"
                         % jnum(tr["dropped"])))
    if isinstance(rt, dict) and rt.get("enabled") and rt_throttling_applies(result) and \
            not any(x.startswith("RT throttling") for x in said):
        w.append((2, "RT throttling is enabled: SCHED_FIFO threads get %s us of every %s us "
                     "(%s)" % (jnum(rt.get("runtime_us")), jnum(rt.get("period_us")),
                               "cpu.rt_runtime_us, cpu.rt_period_us of cgroup %s"
                               % rt["cgroup"] if isinstance(rt.get("cgroup"), str) else
                               "kernel.sched_rt_runtime_us, kernel.sched_rt_period_us")))
    if isinstance(a, dict):
        w += [(3, "attribution: %s" % x) for x in a.get("warnings") or []]
    w += [(2 if x.startswith("RT throttling") else 3, x) for x in said]
    if host.get("virtualised"):
        name = hypervisor_name(host.get("hypervisor"))
        w.append((4, "virtual machine%s: the hypervisor can take the CPU without any "
                     "kernel event in the guest" % (" (%s)" % name if name else "")))
    return list(dict.fromkeys(text for _, text in sorted(w, key=lambda x: x[0])))


def host_rows(host):
    rows = []
    for k, v in host.items():
        if isinstance(v, dict):
            rows += [("%s.%s" % (k, k2), jnum(v2)) for k2, v2 in v.items()]
        else:
            rows.append((k, jnum(v)))
    return rows


def quantity_text(q):
    """'rtt_from_intended: 1 run, 200000 samples (the round trip from the intended
    send time); also in the result: rtt_from_send, send_call'."""
    return q.describe() + (" (the %s)" % q.measures if q.measures else "") + (
        "; also in the result: %s" % ", ".join(q.others) if q.others else "")


_STAMP = re.compile(r"(\d{4}-\d\d-\d\d)T(\d\d:\d\d)(:\d\d)?(?:\.\d+)?(Z?)")


def when_text(stamp, seconds=False):
    """'2026-11-26 16:02 UTC' of result.json's started_at ('' for none)."""
    m = _STAMP.match(str(stamp or ""))
    if not m:
        return str(stamp or "")
    return "%s %s%s%s" % (m.group(1), m.group(2), m.group(3) or "" if seconds else "",
                          " UTC" if m.group(4) else "")


def title_of(result, quantity=None):
    """What was measured, where and when: 'jtr gap · CPU 1 · vm · 2026-11-26 16:02 UTC'."""
    f = result_figures(result, quantity)
    parts = ["jtr %s" % (result.get("tool") or "result")]
    if f["cpus"]:
        parts.append(cpus_text(f["cpus"]))
    host = (result.get("host") or {}).get("hostname")
    if host:
        parts.append(str(host))
    if result.get("started_at"):
        parts.append(when_text(result["started_at"]))
    return " · ".join(parts)


def pct(share):
    """'53.2 %' of a share (0..1)."""
    return "%.1f %%" % (100.0 * share) if isinstance(share, (int, float)) else ""


def count_text(n):
    """'135,366,807'."""
    return "{:,}".format(n) if isinstance(n, int) else ""


def since(ns, t0):
    """'+0.335 s' from @t0."""
    return "+%.3f s" % ((ns - t0) / 1e9) if isinstance(ns, int) and isinstance(t0, int) else ""


def attribution_of(result):
    a = result.get("attribution")
    return a if isinstance(a, dict) else None


def outliers_of(runs):
    """(count, threshold_ns, lost_ns) of @runs' outliers (None where not known)."""
    os_ = [r.get("outliers") for r in runs if isinstance(r.get("outliers"), dict)]
    if not os_:
        return None, None, None
    th = {o.get("threshold_ns") for o in os_}
    lost = [o.get("lost_ns") for o in os_]
    return (sum(o.get("count") or 0 for o in os_), th.pop() if len(th) == 1 else None,
            sum(lost) if all(isinstance(x, int) for x in lost) else None)


def stat(name, value, note=""):
    return ('<div class="stat"><span>%s</span><b>%s</b>%s</div>'
            % (esc(name), esc(value), "<small>%s</small>" % esc(note) if note else ""))


def summary_section(label, result, quantity=None):
    """The summary of one result for the top of a page: what was measured, its
    headline numbers in people's units (p50, p99, p99.99, max, time lost), the
    largest causes with their share of the outliers' time, and the warnings
    (the only place they are shown). @label: how the page names the result."""
    q = select(result, quantity)
    f = result_figures(result, quantity)
    p = f["percentiles_ns"]
    out = ['<section class="summary">']
    bad = summary(f["validity"])
    if bad:
        out.append('<p class="invalid"><b>%s</b></p>' % esc(bad))
    what = q.measures or q.name
    dur = f["duration_ns"]
    out.append('<p class="what"><b>%s</b> · %s of %s · %s run%s, %s samples%s · %s</p>' % (
        esc(label), esc(what), esc("jtr " + str(result.get("tool"))),
        len(q.runs), "" if len(q.runs) == 1 else "s", esc(count_text(f["samples"])),
        esc(" in %.2f s" % (dur / 1e9)) if dur else "",
        esc(cpus_text(f["cpus"])) if f["cpus"] else "no CPU named"))
    stats = [stat("p" + k, fmt_ns(p[k]) if k in p and supported(k, f["samples"] or 0) else "-",
                  "" if k not in p or supported(k, f["samples"] or 0) else
                  "%s samples: none past the max" % count_text(f["samples"] or 0))
             for k in ("50", "99", "99.99")]
    stats.append(stat("max", fmt_ns(f["max_ns"]) if f["max_ns"] is not None else "-"))
    count, threshold, lost = outliers_of(q.runs)
    if f["lost_pct"] is not None:
        stats.append(stat("time lost", "%.3f %%" % f["lost_pct"],
                          fmt_ns(lost) if lost is not None else ""))
    if f.get("excess_ns_per_s") is not None:
        stats.append(stat("excess latency", "%s/s" % fmt_ns(f["excess_ns_per_s"]),
                          "past the threshold, per s of run"))
    if count is not None:
        stats.append(stat("outliers" + (" > " + fmt_ns(threshold) if threshold else ""),
                          count_text(count), "%.1f per s" % f["outliers_per_s"]
                          if f["outliers_per_s"] is not None else ""))
    missed = [r["missed"] for r in q.runs if isinstance(r.get("missed"), int)]
    if missed:
        stats.append(stat("missed periods", count_text(sum(missed)),
                          "passed while the thread was held"))
    out.append('<div class="stats">%s</div>' % "".join(stats))
    cyclic = cyclictest_lines(result)
    if cyclic:
        out.append("<p>cyclictest's summary (us):</p><pre>%s</pre>" % esc("\n".join(cyclic)))
    a = attribution_of(result)
    if a and a.get("causes"):
        o = a.get("outliers") or {}
        kind = a.get("run_kind")
        if "summed_ns" in o:    # they overlap: the time one was in flight
            out.append("<p>What held them in the %s some outlier was in flight (%% of "
                       "that time, each instant once; the kernel's events cover %s of "
                       "it):</p>" % (esc(fmt_ns(o.get("total_ns") or 0)),
                                     esc(pct((o.get("traced_ns") or 0) / o["total_ns"])
                                         if o.get("total_ns") else "none")))
        else:
            out.append("<p>Where the outliers' %s went%s (%% of their time; the "
                       "kernel's events cover %s of it):</p>" % (
                           esc(fmt_ns(o.get("total_ns") or 0)),
                           esc(" in the %s runs" % kind) if kind else "",
                           esc(pct((o.get("traced_ns") or 0) / o["total_ns"])
                               if o.get("total_ns") else "none")))
        rows = []
        for g in group_causes(a["causes"])[:SUMMARY_CAUSES]:
            names = ", ".join("%s %s" % (n["label"], pct(n["share"])) for n in g["names"])
            rows.append('<tr><td><span class="key" style="background:%s"></span>%s</td>'
                        '<td class="num"><b>%s</b></td><td class="num">%s</td><td>%s</td></tr>'
                        % (CATEGORY_COLOURS.get(g["category"], "#555"), esc(g["category"]),
                           esc(pct(g["share"])), esc(fmt_ns(g["total_ns"])),
                           esc(names + (", %d more" % g["more"] if g["more"] else ""))))
        out.append('<table class="top"><tr><th>cause</th><th>%% of time</th><th>time</th>'
                   '<th>largest</th></tr>%s</table>' % "".join(rows))
    elif a:
        out.append("<p>No outliers to attribute.</p>")
    else:
        out.append("<p>Not attributed: this result has no kernel-event trace (jtr run "
                   "traces as root; jtr attribute adds it to a traced result).</p>")
    w = warnings_of(result)
    if w:
        out.append('<ul class="warn">%s</ul>' % "".join("<li>%s</li>" % esc(x) for x in w))
    out.append("</section>")
    return "\n".join(out)


def cyclictest_lines(result):
    """jtr wake's cyclictest summary lines (T: 0 (4242) P:80 I:1000 C: ...) from
    its summary.txt, or []."""
    if result.get("tool") != "wake" or not getattr(result, "folder", None):
        return []
    name = (result.get("files") or {}).get("summary") or "summary.txt"
    try:
        text = read_bytes(os.path.join(result.folder, os.path.basename(str(name))),
                          "summary", SUMMARY_MAX).decode("utf-8", "replace")
    except (JtrError, OSError):
        return []
    return [x for x in text.splitlines() if re.match(r"T: *\d+ \( *\d+\) P:", x)]


def send_added(a):
    """jtr send's difference (attribution.difference: send - null per cause) as
    rows of time per second of each kind's runs, largest change first, for the
    delta plot; [] without one."""
    diff, others = a.get("difference"), a.get("by_kind") or {}
    if not diff or len(others) != 1:
        return []
    d_main = (a.get("outliers") or {}).get("duration_ns") or 0
    d_other = (next(iter(others.values())).get("outliers") or {}).get("duration_ns") or 0
    if not d_main or not d_other:
        return []
    kind, other = a.get("run_kind") or "send", next(iter(others))
    rows = []
    for r in diff:
        b = r[kind]["total_ns"] / (d_main / 1e9)
        o = r[other]["total_ns"] / (d_other / 1e9)
        rows.append({"category": r["category"], "name": r["name"], "a_ns_per_s": o,
                     "b_ns_per_s": b, "diff_ns_per_s": b - o})
    return sorted(rows, key=lambda r: -abs(r["diff_ns_per_s"]))


def decomposition_section(a):
    """jtr wake's late wake-ups taken apart, the components' table (as jtr run
    prints it), or ""."""
    dec = a.get("decomposition") if a else None
    if not isinstance(dec, dict) or not dec.get("components"):
        return ""
    rows = [(c["label"], str(c["dominant_count"]),
             pct(c["share"]) if c["component"] != "unaccounted" else "-",
             fmt_ns(c["total_ns"]), fmt_ns(c["p50_ns"]), fmt_ns(c["max_ns"]))
            for c in dec["components"] if c["count"] or c["total_ns"]]
    n = (a.get("outliers") or {}).get("count", 0)
    return ("<h2>Late wake-ups taken apart</h2><p>Each late wake-up's time from the timer's "
            "expiry to the thread back in user space, by component (dominant: the "
            "component that was the largest part of how many; %d of %d with a whole "
            "wake-up path).</p>" % (dec.get("complete", 0), n) +
            table(rows, head=("component", "dominant", "share", "total", "p50", "max")))


def run_table(runs):
    """One row per run in people's units (a percentile its samples do not
    support: -, results/figures.supported)."""
    keys = [k for k in PERCENTILE_KEYS if any(k in (r.get("percentiles_ns") or {})
                                              for r in runs)]
    head = ["run", "CPU", "samples", "duration"] + ["p" + k for k in keys] + [
        "max", "mean", "outliers", "per s", "time lost"]
    rows = []
    for r in runs:
        pc = r.get("percentiles_ns") or {}
        o = r.get("outliers") if isinstance(r.get("outliers"), dict) else {}
        rows.append([str(r.get("name") or ""), str(r.get("cpu", "")), count_text(r.get("samples")),
                     fmt_ns(r.get("duration_ns"))] +
                    [fmt_ns(pc.get(k)) if supported(k, r.get("samples") or 0) else "-"
                     for k in keys] +
                    [fmt_ns(r.get("max_ns")), fmt_ns(r.get("mean_ns")),
                     count_text(o.get("count")), "%.1f" % o["per_s"] if "per_s" in o else "",
                     "%.3f %%" % r["lost_time_pct"] if "lost_time_pct" in r else ""])
    return table(rows, head=head, cls="people")


def causes_table(a):
    """The attribution's causes for people: by category, most time first, the
    tasks of one name together ('bash (44 tasks)'); with the time per phase
    across two ends."""
    groups = group_causes(a.get("causes") or [], names=None)
    sided = any(n.get("phases") for g in groups for n in g["names"])
    head = ["cause", "name"] + (["phases"] if sided else []) + [
        "share", "time", "outliers", "max", "per s"]
    rows = []
    for g in groups:
        for n in g["names"]:
            rows.append([str(g["category"]), n["label"]] +
                        ([phases_text(n) or "-"] if sided else []) +
                        [pct(n["share"]), fmt_ns(n["total_ns"]), count_text(n["count"]),
                         fmt_ns(n["max_ns"]), "%.1f" % n["per_s"]])
    return table(rows, head=head, cls="people")


def attribution_tables(a, t0):
    """The attribution for people: the tracer, the causes, the budget by phase
    (round trips), the worst outliers."""
    out = []
    o = a.get("outliers") or {}
    tr = a.get("tracer") or {}
    out.append("<p>%s outliers, %s of outlier time, %s of it covered by kernel events; "
               "tracer: %s, %s events, %s dropped</p>" % (
                   esc(count_text(o.get("count"))), esc(fmt_ns(o.get("total_ns") or 0)),
                   esc(fmt_ns(o.get("traced_ns") or 0)),
                   esc(BACKEND_NAMES.get(tr.get("backend"), tr.get("backend") or "unknown")),
                   esc(count_text(tr.get("events"))), esc(count_text(tr.get("dropped")))))
    cost = cost_text(tr)
    if cost:
        out.append("<p>Tracer %s</p>" % esc(cost))
    out.append(causes_table(a))
    budget = budget_lines(a)
    if budget:
        out.append("<h4>By phase</h4><pre>%s</pre>" % esc("\n".join(budget[1:])))
    for kind, other in (a.get("by_kind") or {}).items():
        out.append("<h4>The %s runs</h4>" % esc(kind))
        out.append(causes_table(other))
    if a.get("worst"):
        out.append("<h4>Worst outliers</h4>")
        out.append(table([(fmt_ns(w.get("length_ns")), "CPU %s" % w.get("cpu"),
                           since(w.get("start_ns"), t0),
                           "%s%s" % (w.get("category"), " (%s side)" % w["side"]
                                     if w.get("side") else ""),
                           w.get("chain")) for w in a["worst"]],
                         head=("length", "CPU", "when", "cause", "chain"), cls="people"))
    return "\n".join(out)


def raw_section(result):
    """The result.json fields as written, in a closed <details>."""
    out = ['<details class="raw"><summary>result.json fields (as written)</summary>']
    out.append(table([
        ("tool", jnum(result.get("tool"))),
        ("started_at", jnum(result.get("started_at"))),
        ("ended_at", jnum(result.get("ended_at"))),
        ("command", " ".join(str(c) for c in result.get("command") or [])),
        ("jtr_version", jnum(result.get("jtr_version"))),
        ("partial", jnum(result.get("partial"))),
    ], head=("field", "value")))
    for run in result.get("runs", []):
        if not isinstance(run, dict):
            continue
        out.append("<h4>runs[] %s (CPU %s)</h4>" % (esc(run.get("name")),
                                                    esc(jnum(run.get("cpu")))))
        out.append(table(run_rows(run), head=("result.json field", "value", "reading"),
                         cls="run"))
    a = attribution_of(result)
    if a:
        out.append("<h4>attribution.causes[]</h4>")
        out.append(table([(c.get("category"), c.get("name"), jnum(c.get("count")),
                           jnum(c.get("primary_count")), jnum(c.get("total_ns")),
                           jnum(c.get("share")), jnum(c.get("p50_ns")), jnum(c.get("max_ns")),
                           jnum(c.get("per_s"))) for c in a.get("causes") or []],
                         head=("category", "name", "count", "primary_count", "total_ns",
                               "share", "p50_ns", "max_ns", "per_s")))
        out.append("<h4>attribution.worst[]</h4>")
        out.append(table([(jnum(x.get("cpu")), jnum(x.get("start_ns")),
                           jnum(x.get("length_ns")), x.get("category"), x.get("name"),
                           x.get("chain")) for x in a.get("worst") or []],
                         head=("cpu", "start_ns", "length_ns", "category", "name", "chain")))
    out.append("<h4>host</h4>")
    out.append(table(host_rows(result.get("host") or {}), head=("host field", "value")))
    out.append("<h4>params</h4>")
    out.append(table([(k, jnum(v)) for k, v in (result.get("params") or {}).items()],
                     head=("params field", "value")))
    out.append("</details>")
    return "\n".join(out)


def result_section(label, result, quantity=None):
    """The tables of one result for people (runs, causes, worst outliers, host,
    parameters), its headline on @quantity (None: its default), then its
    result.json fields as written in a closed <details>."""
    out = ["<h2>%s</h2>" % esc(label)]
    q = select(result, quantity)
    out.append("<p>%s · %s</p>" % (esc(quantity_text(q)), esc(
        " ".join(str(c) for c in result.get("command") or []))))
    runs = [r for r in result.get("runs", []) if isinstance(r, dict)]
    out.append("<h3>Runs</h3>")
    out.append(run_table(runs))
    a = attribution_of(result)
    if a:
        out.append("<h3>Causes</h3>")
        out.append(attribution_tables(a, (a.get("outliers") or {}).get("start_ns")
                                      or plots.run_start(result)))
    host = result.get("host") or {}
    out.append("<h3>Host</h3>")
    facts = [("host", host.get("hostname")), ("kernel", host.get("kernel")),
             ("CPU model", host.get("cpu_model")), ("online CPUs", host.get("online_cpus")),
             ("isolated CPUs", host.get("isolated_cpus") or "none"),
             ("nohz_full CPUs", host.get("nohz_full_cpus") or "none"),
             ("virtualised", ("yes (%s)" % (hypervisor_name(host.get("hypervisor")) or
                                             "hypervisor not named"))
              if host.get("virtualised")
              else "no" if "virtualised" in host else None),
             ("TSC", "%.3f MHz" % (host["tsc_hz"] / 1e6)
              if isinstance(host.get("tsc_hz"), (int, float)) else None),
             ("tuning profile", host.get("tuning_profile") or "none active")]
    out.append(table([(k, str(v)) for k, v in facts if v is not None], cls="people"))
    out.append(raw_section(result))
    return "\n".join(out)


def compare_section(c):
    rows = [(m["name"], m["unit"], jnum(m["a"]), jnum(m["b"]), jnum(m["diff"]),
             "%s .. %s" % (jnum(m["ci"][0]), jnum(m["ci"][1])), m["change"] or "")
            for m in c["metrics"]]
    return "\n".join([
        "<h2>Comparison (jtr compare)</h2>",
        "<p><b>verdict:</b> %s</p>" % esc(c["verdict_text"]),
        table(rows, head=("metric", "unit", "A", "B", "B-A", "%g %% CI of B-A"
                          % c["method"]["confidence"], "change")),
        "<pre>%s</pre>" % esc("\n".join(compare_table(c))),
    ])


def row_categories(result, rows):
    """The main cause category of each row of @result's outliers.csv (@rows, in
    its order) from the attribution's per_outlier, or None where it was not kept.
    A jtr send result's attribution covers its send runs' outliers and by_kind
    each other kind's: the rows are given to each as drivers/attribute.py split
    them (by the run whose start is the last before the outlier's)."""
    a = attribution_of(result)
    if not a:
        return None
    if not a.get("by_kind"):
        return categories_of(a)
    spans = sorted((r["start_mono_ns"], r.get("kind")) for r in result.get("runs", [])
                   if isinstance(r, dict) and isinstance(r.get("start_mono_ns"), int))
    parts = {a.get("run_kind"): categories_of(a)}
    parts.update((k, categories_of(v)) for k, v in a["by_kind"].items())
    if not spans or any(v is None for v in parts.values()):
        return None
    starts, taken, out = [t for t, _ in spans], dict.fromkeys(parts, 0), []
    for row in rows:
        kind = spans[max(0, bisect.bisect_right(starts, row[1]) - 1)][1]
        cats = parts.get(kind)
        if cats is None or taken[kind] >= len(cats):
            return None
        out.append(cats[taken[kind]])
        taken[kind] += 1
    return out if all(taken[k] == len(v) for k, v in parts.items()) else None


def page_plots(plt, result, label, quantity, rows, progress=None):
    """{name: (png, svg, caption)} of one result's plots: percentile spectrum,
    timeline (@rows: its outlier log's rows, [] without one), causes, histogram;
    @progress (a cli Progress, or None) told which is drawn."""
    runs = [r for r in (select(result, quantity, label).runs if quantity
                        else result.get("runs", []))
            if isinstance(r, dict) and isinstance(r.get("histogram"), dict)]
    cmap = plt.get_cmap("tab10")
    what = "%s" % (select(result, quantity, label).measures or "value")
    out = {}
    say = progress or (lambda text: None)
    say("the percentile spectrum")
    if runs:
        sp = [(r.get("name") or "run %d" % i,
               plots.spectrum(r["histogram"]["buckets"], r.get("min_ns", 0), r.get("max_ns", 0)),
               cmap(i % 10)) for i, r in enumerate(runs)]
        out["percentiles"] = plots.png_and_svg(plt, plots.spectrum_figure(plt, sp, what)) + (
            "Percentile spectrum of the %s, from 50 %% to the maximum" % what,)
    a = attribution_of(result)
    if a:
        if rows or a.get("worst"):
            say("the timeline of %d outliers" % len(rows))
            cats = row_categories(result, rows) if rows else None
            out["timeline"] = plots.png_and_svg(
                plt, plots.timeline_figure(plt, result, rows, cats)) + (
                "Every outlier over the run, coloured by its main cause; below, the time "
                "lost per cause over the run" if cats is not None else
                "Outliers over the run; this result's attribution does not keep each "
                "outlier's cause (jtr attribute again to colour them all)",)
        if any("measured_mean_ns" in b for b in a.get("budget") or ()):
            out["budget"] = plots.png_and_svg(plt, plots.budget_figure(
                plt, a["budget"], PHASE_NAMES)) + (
                "Where the outliers' time went along their path: per phase the mean its "
                "stamps measured per outlier (the bar: against the longest phase), its "
                "part charged to kernel events and the host, and the cause that took most "
                "of it",)
        added = send_added(a)
        if added:
            kinds = (next(iter(a["by_kind"])), a.get("run_kind") or "send")
            out["added"] = plots.png_and_svg(plt, compare_plots.delta_figure(
                plt, added, sides=kinds)) + (
                "What the %s runs add, per cause: %s less %s, the outliers' time per second "
                "of each kind's runs (right of 0: the %s path adds it)" % (
                    kinds[1], kinds[1], kinds[0], kinds[1]),)
        dec = a.get("decomposition")
        if isinstance(dec, dict) and any(w.get("components") for w in a.get("worst") or ()):
            labels = {c["component"]: c["label"] for c in dec.get("components") or ()}
            out["decomposition"] = plots.png_and_svg(plt, plots.decomposition_figure(
                plt, a["worst"], labels, list(labels),
                (a.get("outliers") or {}).get("start_ns") or plots.run_start(result))) + (
                "The worst late wake-ups, each taken apart along the wake-up path (the "
                "components of the table above; every one in decomposition.csv)",)
        if a.get("causes"):
            out["causes"] = plots.png_and_svg(
                plt, plots.causes_figure(plt, group_causes(a["causes"]))) + (
                "Outlier time per cause category and its largest names (tasks by name, "
                "their pids together)",)
    if runs:
        say("the histogram")
        hs = [(r.get("name") or "run %d" % i, r["histogram"]["buckets"], cmap(i % 10))
              for i, r in enumerate(runs)]
        fig = plots.histogram_figure(plt, hs, what, font=plots.FONT)
        out["histogram"] = plots.png_and_svg(plt, fig) + (
            "Histogram of the %s, counts on a log scale" % what,)
    return out


def single_page(result, given, opts, rows):
    """(pngs, page, texts) of one result's page: title, summary, plots, the 10 ns
    graphs, the tables for people, the result.json fields (closed). @rows: its
    outlier log's rows ([] without one: the worst outliers only); @opts:
    gnuplot, histo_buckets, quantity (None: the result's default; its plots show
    each run, or only those of the quantity asked for)."""
    quantity = opts.get("quantity")
    plt = plots.pyplot()
    label = os.path.basename(os.path.abspath(result.folder)) or given
    shown = page_plots(plt, result, label, quantity, rows, opts.get("progress"))
    pngs = {name: v[0] for name, v in shown.items()}
    title = title_of(result, quantity)
    body = ["<h1>%s</h1>" % esc(title), summary_section(label, result, quantity),
            decomposition_section(attribution_of(result))]
    body += [svg_figure(svg, caption, name) for name, (_, svg, caption) in shown.items()]
    graphs, texts = plots.legacy_graphs(plt, plots.file_stems([label]), [result],
                                        every=opts.get("gnuplot"), nb=opts.get("histo_buckets"))
    body.append(legacy_section(graphs, texts))
    pngs.update(graphs)
    body.append(result_section(label, result, quantity))
    return pngs, page_html(title, body), texts
