# SPDX-License-Identifier: GPL-2.0-only
"""advise - jtr advise's text: the remedies ranked by the time they would save,
what this machine cannot do and why, the host's share, and a proof's table."""
from ..units import fmt_ns

# the shipped profile that carries a remedy among others (jtr tune apply NAME)
SHIPPED = {"rt_throttling": "jtr-realtime", "tasks": "jtr-isolate", "irq": "jtr-isolate",
           "unbound_work": "jtr-isolate", "watchdog": "jtr-isolate", "vmstat": "jtr-latency",
           "timers": "jtr-latency", "nmi": "jtr-latency", "page_faults": "jtr-latency",
           "cstate": "jtr-latency", "ipi": "jtr-latency"}


def _pct(share):
    return "%.1f %%" % (100.0 * share) if share is not None else "-"


def _signed(ns):
    return ("-" if ns < 0 else "") + fmt_ns(abs(ns))


def _per_s(ns):
    return "%s/s" % _signed(ns) if ns is not None else "-"


def _predicted(r):
    """A remedy's saving, worded as the prediction it is: "predicted -60.0 us/s
    (600.0 us in the run, 60.0 % of the outlier time)"."""
    share = "%s of the outlier time" % _pct(r["share"])
    if r["per_s_ns"] is None:
        return "predicted -%s (%s)" % (fmt_ns(r["saving_ns"]), share)
    return "predicted %s (%s in the run, %s)" % (_per_s(-r["per_s_ns"]),
                                                 fmt_ns(r["saving_ns"]), share)


def _causes(r, most=4):
    parts = ["%s %s (%dx, %s)" % (c["category"], c["name"], c["count"], fmt_ns(c["ns"]))
             for c in r["causes"][:most]]
    if len(r["causes"]) > most:
        parts.append("%d more" % (len(r["causes"]) - most))
    return "; ".join(parts)


def format_advice(doc, profile_dir=None):
    """The lines of jtr advise for people."""
    cpus = ",".join(map(str, doc["cpus"]))
    head = "%s: %s on CPU %s, %s: %d outliers, %s" % (
        doc["result"], doc["tool"], cpus, fmt_ns(doc["duration_ns"] or 0), doc["outliers"],
        fmt_ns(doc["outlier_ns"]))
    if doc["lost_pct"] is not None:
        head += " (%.3f %% of the time lost)" % doc["lost_pct"]
    lines = [head]
    if doc["throttled_outliers"]:
        lines.append("%d outliers were held by RT throttling (a real-time task lost its "
                     "CPU to idle or a lower priority)" % doc["throttled_outliers"])
    can = [r for r in doc["remedies"] if r["applicable"]]
    cannot = [r for r in doc["remedies"] if not r["applicable"] and r["rule"] != "host"]
    host = [r for r in doc["remedies"] if r["rule"] == "host"]
    lines.append("")
    if can:
        lines.append("remedies this machine can apply, largest first (predicted: what the "
                     "run lost to their causes; jtr advise --prove measures it):")
        for i, r in enumerate(can, 1):
            lines.append("  %d. %-14s %s  needs: %s" % (i, r["rule"], _predicted(r), r["needs"]))
            lines.append("     causes: %s" % _causes(r))
            for c in r["changes"]:
                lines.append("     [%s] %s=%s    # %s" % (c["section"], c["option"],
                                                         c["value"], c["comment"]))
            if r["rule"] in SHIPPED:
                lines.append("     (also in the shipped profile %s: sudo jtr tune apply %s "
                             "--cpus %s)" % (SHIPPED[r["rule"]], SHIPPED[r["rule"]], cpus))
            for n in r["notes"]:
                lines.append("     note: %s" % n)
    else:
        lines.append("no remedy this machine can apply")
    if cannot:
        lines += ["", "what cannot be done here:"]
        for r in cannot:
            lines.append("  %-14s %s (%s)  needs: %s" % (r["rule"], fmt_ns(r["saving_ns"]),
                                                        _pct(r["share"]), r["needs"]))
            lines.append("     causes: %s" % _causes(r))
            if r["boot"]:
                lines.append("     boot line: %s" % " ".join(r["boot"]))
            lines.append("     why: %s" % r["why_not"])
            for n in r["notes"]:
                lines.append("     note: %s" % n)
    for r in host:
        lines += ["", "out of the guest's reach: %s (%s of the outlier time)"
                  % (fmt_ns(r["saving_ns"]), _pct(r["share"]))]
        lines.append("     causes: %s" % _causes(r))
        lines.append("     %s" % r["remedy"])
        lines.append("     %s" % r["why_not"])
    if doc.get("own"):
        lines += ["", "the measurement's own, not a remedy's: %s" % "; ".join(
            "%s %s (%dx, %s: %s)" % (c["category"], c["name"], c["count"], fmt_ns(c["ns"]),
                                     c["why"]) for c in doc["own"][:4]) +
                  ("; %d more" % (len(doc["own"]) - 4) if len(doc["own"]) > 4 else "")]
    if doc["unexplained"]:
        lines += ["", "no rule for: %s" % "; ".join(
            "%s %s (%s)" % (u["category"], u["name"], fmt_ns(u["ns"]))
            for u in doc["unexplained"][:4])]
    if doc["profile"]:
        lines += ["", "the profile of the remedies above (tuned format):"]
        lines += ["  " + x if x else "" for x in doc["profile"].rstrip("\n").split("\n")]
        if profile_dir:
            lines += ["", "written to %s/tuned.conf; apply it: sudo jtr tune apply %s"
                      % (profile_dir, profile_dir)]
        else:
            lines += ["", "write it with --profile-dir DIR, then: sudo jtr tune apply DIR; "
                      "measure it: sudo jtr advise --prove %s" % doc["result"]]
    return lines


def format_proof(proof, doc):
    """The per-remedy table of jtr advise --prove."""
    pred = {r["rule"]: r for r in doc["remedies"]}
    lines = ["", "per remedy: time lost to its causes per second of run (baseline %d run%s, "
             "tuned %d)" % (proof["runs"]["a"], "" if proof["runs"]["a"] == 1 else "s",
                            proof["runs"]["b"]),
             "  %-14s %12s %12s %12s %12s  %-24s %s" % (
                 "remedy", "predicted", "before", "after", "saving", "95 % CI of saving",
                 "cause")]
    for r in proof["remedies"]:
        ci = "%s .. %s" % (_signed(r["ci"][0]), _signed(r["ci"][1])) if r["ci"] else "-"
        lines.append("  %-14s %12s %12s %12s %12s  %-24s %s" % (
            r["rule"], _per_s(pred[r["rule"]]["per_s_ns"]), _per_s(r["before_per_s_ns"]),
            _per_s(r["after_per_s_ns"]), _per_s(r["saving_per_s_ns"]), ci,
            "%s (%d -> %d outliers)" % (r["outcome"], r["before_count"], r["after_count"])))
    return lines
