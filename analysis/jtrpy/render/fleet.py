# SPDX-License-Identifier: GPL-2.0-only
"""fleet - jtr fleet's table for people and its HTML page (one self-contained file:
the table, a chart per probe of each host's time lost by cause category, the
flagged hosts explained, the causes side by side and the rule)."""
import base64

from ..errors import UsageError
from ..units import fmt_ns, shown
from ..values import format_cpulist
from . import plots
from .html import esc, page_html
from .text import align

TOP_CAUSES = 3
NUM = ' class="num" style="white-space:nowrap"'
CAUSES_ON_PAGE = 12

HEAD = ("host", "probe", "CPUs", "p99", "p99.99", "max", "lost or excess",
        "top causes (share of time lost)", "flag")
RIGHT = (False, False, False, True, True, True, True, False, False)


def probe_name(row):
    """'gap', or 'ping/rtt_from_send' where the quantity is not the tool's name."""
    q = row["quantity"]
    return row["tool"] if not q or q == row["tool"] else "%s/%s" % (row["tool"], q)


def _ns(v):
    return "-" if v is None else fmt_ns(v)


def _pct(v, digits=2):
    return "-" if v is None else "%.*f %%" % (digits, v)


def figure_text(metric, v, cpu_time=True):
    """A figure of METRICS for people: '9.80 %', '160 ns', '1.2 ms/s' (a latency
    probe's excess)."""
    if metric == "lost":
        return _pct(v) if cpu_time else "%s/s" % _ns(v)
    return _ns(v)


def metric_name(metric, cpu_time=True):
    if metric == "lost":
        return "time lost" if cpu_time else "excess latency"
    return metric


def cause_label(c):
    """A cause as the table shows it: its name, or its category when it has none."""
    return c["name"] or c["category"]


def top_causes(row, n=TOP_CAUSES):
    if not row["attributed"]:
        return "not attributed"
    if not row["causes"]:
        return "none"
    return "; ".join("%s %s" % (cause_label(c), share_text(c["share"]))
                     for c in row["causes"][:n])


def share_text(share):
    """'40 %', or '<1 %' for a share that would round to 0."""
    return "%.0f %%" % (100 * share) if share >= 0.005 else "<1 %"


def flag_text(row):
    """The flag column: '-', 'not judged: invalid', or 'FLAGGED lost 4.9x: task
    preemption jtr-inject'."""
    if not row["flagged"]:
        return "-" if row.get("valid", True) else "not judged: not a valid measurement"
    parts = []
    for f in row["flags"]:
        if f["times"] is not None:
            parts.append("%s %.1fx" % (f["metric"], f["times"]))
        else:
            parts.append("%s %s (others 0)" % (f["metric"], figure_text(
                f["metric"], f["value"], row.get("cpu_time", True))))
    c = row["cause"] or {}
    why = "%s: %s" % (c["category"], c["name"]) if c.get("key") else "cause unknown"
    return "FLAGGED %s: %s" % (", ".join(parts), why)


def loss_text(r):
    """The row's time lost (%), or its excess latency per s where a sample is a
    latency."""
    if r.get("cpu_time", True) or r.get("excess_ns_per_s") is None:
        return _pct(r["lost_pct"])
    return "%s/s" % _ns(r["excess_ns_per_s"])


def table_rows(doc):
    """The table's rows as text cells (HEAD's columns)."""
    out = []
    for r in doc["rows"]:
        p = r["percentiles_ns"]
        out.append((r["host"], probe_name(r) + (" (partial)" if r["partial"] else ""),
                    format_cpulist(r["cpus"]) or "-", _ns(p.get("99")), _ns(p.get("99.99")),
                    _ns(r["max_ns"]), loss_text(r), top_causes(r), flag_text(r)))
    return out


def against(f):
    """'the other host' or 'the median of the other 3 hosts'."""
    n = f["compared"]
    return "the other host" if n == 1 else "the median of the other %d hosts" % n


def explain(row):
    """Lines saying why @row was flagged and by which cause."""
    lines = []
    cpu = row.get("cpu_time", True)
    for f in row["flags"]:
        m = f["metric"]
        lines.append("%s against %s on %s (%s; flagged from %s)" % (
            "%s %s" % (metric_name(m, cpu), figure_text(m, f["value"], cpu)),
            figure_text(m, f["baseline"], cpu), against(f),
            "%.1fx" % f["times"] if f["times"] is not None else "the others have none",
            figure_text(m, f["threshold"], cpu)))
    c = row["cause"] or {}
    if c.get("key"):
        lines.append("by %s: %s, %s to it against %s on %s" % (
            c["category"], c["name"],
            "%.2f %% of the time lost" % c["lost_pct"] if cpu else
            "%s/s of excess latency" % _ns(c["lost_pct"]),
            "%.2f %%" % c["baseline_pct"] if cpu else "%s/s" % _ns(c["baseline_pct"]),
            "the other host" if row["flags"][0]["compared"] == 1 else "the others (median)"))
    else:
        lines.append("cause not named: %s" % c.get("why", "unknown"))
    return lines


def rule_text(rule):
    return ("each host against the median of the other hosts of its probe; flagged when a "
            "figure is above that median + %g x %g MAD, at least %gx it and %s (latencies) or "
            "%g points (time lost) above it; figures judged: %s (a percentile only with %d "
            "samples beyond it)" % (
                rule["k"], 1.4826, rule["ratio"], fmt_ns(rule["min_latency_ns"]),
                rule["min_lost_pct"], ", ".join(rule["metrics"]), rule["min_tail_samples"]))


def notes(doc):
    out = []
    if doc["not_judged"]:
        out.append("probes run on one host only, not judged: %s" % ", ".join(doc["not_judged"]))
    if doc["not_used"]:
        out.append("older results of a host and probe, not used: %s" % ", ".join(
            doc["not_used"]))
    if doc["hosts_without_results"]:
        out.append("host folders without a jtr result: %s" % ", ".join(
            doc["hosts_without_results"]))
    if doc.get("links_not_followed"):
        out.append("links out of the folder given, not followed: %s" % ", ".join(
            doc["links_not_followed"]))
    return out


def warnings(doc):
    """jtr fleet's warnings: results not judged, host folders without a result,
    links not followed (names escaped)."""
    out = ["%s: %s; not judged (--accept-invalid judges it all the same)"
           % (x["path"], x["why"]) for x in doc.get("invalid") or ()]
    out += ["%s: no jtr result in this host's folder; left out" % f
            for f in doc["hosts_without_results"]]
    out += ["%s: a link out of the folder given; not followed (give its target itself to "
            "include it)" % f for f in doc.get("links_not_followed") or ()]
    return [shown(x) for x in out]


def format_text(doc):
    """jtr fleet's output for people: the table, the flagged hosts explained, the rule.
    Names from outside (host folders, task names) are shown escaped (units.shown):
    a folder named with a newline or an escape sequence cannot move the terminal."""
    n = len(doc["hosts"])
    lines = align([HEAD] + [tuple(shown(c) for c in r) for r in table_rows(doc)], RIGHT)
    return lines + [shown(x) for x in _text_after_table(doc, n)]


def _text_after_table(doc, n):
    lines = [""]
    flagged = [r for r in doc["rows"] if r["flagged"]]
    if flagged:
        lines.append("flagged: %s" % ", ".join(doc["flagged_hosts"]))
        for r in flagged:
            first, *rest = explain(r)
            lines.append("  %s %s: %s" % (r["host"], probe_name(r), first))
            lines.extend("    " + x for x in rest)
    else:
        lines.append("no host differs from the others (%d host%s)" % (n, "" if n == 1 else "s"))
    lines.append("rule: " + rule_text(doc["rule"]))
    lines.extend(notes(doc))
    return lines


# --- the page -------------------------------------------------------------------------

def _figure(data, alt):
    return ('<figure><img src="data:image/png;base64,%s" alt="%s"><figcaption>%s'
            '</figcaption></figure>' % (base64.b64encode(data).decode("ascii"), esc(alt),
                                        esc(alt)))


def groups(doc):
    """{probe name: [rows]} in the table's order."""
    out = {}
    for r in doc["rows"]:
        out.setdefault(probe_name(r), []).append(r)
    return out


def bars(rows):
    """The chart's bars: per row its time lost by cause category, largest first; the
    time lost of a row without an attribution as one 'not attributed' part."""
    out = []
    for r in rows:
        if r["attributed"]:
            parts = sorted(r["categories"].items(), key=lambda kv: -kv[1])
        else:
            parts = [("not attributed", r.get("loss", r["lost_pct"]) or 0.0)]
        out.append((r["host"], parts, r["flagged"]))
    return out


def charts(doc):
    """[(probe, png bytes)] of the time lost per host by cause category, or a line
    saying why there are none (no matplotlib)."""
    try:
        plt = plots.pyplot()
    except UsageError:
        return "no charts: matplotlib is not installed (apt-get install python3-matplotlib)"
    out = []
    for probe, rows in groups(doc).items():
        if any(r.get("loss", r["lost_pct"]) is not None for r in rows):
            what = "time lost (%)" if rows[0].get("cpu_time", True) else \
                "excess latency (ns per s of run)"
            out.append((probe, plots.plot_fleet(
                plt, "%s: %s per host by cause category" % (probe, what), bars(rows))))
    return out


def cause_table(rows):
    """HTML table of the largest causes (rows) by host (columns), % of the time lost."""
    keys = {}
    for r in rows:
        for c in r["causes"]:
            if c.get("loss", c["lost_pct"]) is not None:
                keys[c["key"]] = max(keys.get(c["key"], 0.0), c.get("loss", c["lost_pct"]))
    if not keys:
        return ""
    top = sorted(keys, key=lambda k: -keys[k])[:CAUSES_ON_PAGE]
    head = "<tr><th>cause</th>%s</tr>" % "".join("<th>%s</th>" % esc(r["host"]) for r in rows)
    body = []
    for k in top:
        cells = []
        for r in rows:
            v = next((c.get("loss", c["lost_pct"]) for c in r["causes"] if c["key"] == k),
                     None)
            mark = r["cause"] and r["cause"].get("key") == k
            cells.append('<td class="num" style="white-space:nowrap%s">%s</td>' % (
                ';background:#fdd;font-weight:bold' if mark else "",
                ("%.3f %%" % v if r.get("cpu_time", True) else "%s/s" % _ns(v))
                if v is not None else ("0" if r["attributed"] else "-")))
        body.append("<tr><td>%s</td>%s</tr>" % (esc(k), "".join(cells)))
    return "<table>%s%s</table>" % (head, "".join(body))


def page(doc, title="jtr fleet"):
    """The HTML page (text) of a jtr fleet document."""
    body = ["<h1>%s: %d host%s</h1>" % (esc(title), len(doc["hosts"]),
                                        "" if len(doc["hosts"]) == 1 else "s")]
    if doc["flagged_hosts"]:
        body.append('<p style="color:#c00000;font-weight:bold">flagged: %s</p>' % esc(
            ", ".join(doc["flagged_hosts"])))
    else:
        body.append("<p>no host differs from the others</p>")
    rows = ["<tr>%s</tr>" % "".join("<th>%s</th>" % esc(h) for h in HEAD)]
    for r, cells in zip(doc["rows"], table_rows(doc)):
        rows.append("<tr%s>%s</tr>" % (
            ' class="flagged" style="background:#fdd"' if r["flagged"] else "",
            "".join('<td%s>%s</td>' % (NUM if RIGHT[i] else "", esc(c))
                    for i, c in enumerate(cells))))
    body.append('<table id="fleet">%s</table>' % "\n".join(rows))
    flagged = [r for r in doc["rows"] if r["flagged"]]
    if flagged:
        body.append("<h2>Flagged hosts</h2><ul>")
        for r in flagged:
            body.append('<li class="flagged"><b>%s</b> (%s): %s</li>' % (
                esc(r["host"]), esc(probe_name(r)), "; ".join(esc(x) for x in explain(r))))
        body.append("</ul>")
    ch = charts(doc)
    body.append("<h2>Time lost by cause category</h2>")
    if isinstance(ch, str):
        body.append("<p>%s</p>" % esc(ch))
    else:
        for probe, data in ch:
            body.append(_figure(data, "%s: time lost per host (%% of the run) by cause category; "
                                      "flagged hosts in red" % probe))
    body.append("<h2>Causes per host</h2><p>% of each host's run lost to each cause (its "
                "share of the outlier time times its time lost); the cause a flag names is "
                "marked.</p>")
    for probe, rs in groups(doc).items():
        t = cause_table(rs)
        body.append("<h3>%s</h3>%s" % (esc(probe), t or "<p>no attribution</p>"))
    body.append("<h2>Rule</h2><p>%s</p>" % esc(rule_text(doc["rule"])))
    body.append("<h2>Results</h2><ul>%s</ul>" % "".join(
        "<li>%s %s: %s</li>" % (esc(r["host"]), esc(probe_name(r)), esc(r["path"]))
        for r in doc["rows"]))
    n = notes(doc)
    if n:
        body.append('<ul class="warn">%s</ul>' % "".join("<li>%s</li>" % esc(x) for x in n))
    return page_html(title, body)
