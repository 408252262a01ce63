# SPDX-License-Identifier: GPL-2.0-only
"""duplex - jtr duplex's summary (what it prints, and summary.txt) from its
duplex.json document (drivers/duplex.py): the kind and both directions, what
this side sent and received, the latency, and how each program ended."""
from ..units import fmt_ns, fmt_rate


def heading(o):
    """The first line: the kind and both directions."""
    kind, pa, sa = o["kind"], o["pub_addr"], o["sub_addr"]
    if kind in ("tcp", "unix"):
        where = "publishing on %s (listening), receiving from %s" % (pa, sa)
    elif kind == "shm":
        where = "publishing into ring %s, reading ring %s" % (pa, sa)
    else:
        where = "sending %s, receiving on %s" % (pa, sa)
    return "jtr duplex: %s, %s" % (kind, where)


def count(v):
    return "-" if v is None else "{:,}".format(v)


def ended(side):
    """', exit 1, peer gone, partial' for a program that did not end well, else ''."""
    bits = []
    if side.get("exit_status"):
        bits.append("exit %d" % side["exit_status"])
    if side.get("peer") not in (None, "ok"):
        bits.append("peer %s" % side["peer"])
    if side.get("partial"):
        bits.append("partial")
    return ", " + ", ".join(bits) if bits else ""


def latency_text(lat):
    """'p50 12.3 us p99 45.6 us max 1.20 ms' of one latency record, or None."""
    if not lat or lat.get("p50_ns") is None:
        return None
    return "p50 %s p99 %s max %s" % (fmt_ns(lat["p50_ns"]), fmt_ns(lat["p99_ns"]),
                                     fmt_ns(lat["max_ns"]))


def summary(doc):
    """The summary's lines from a duplex.json document."""
    o, p, s = doc["params"], doc["pub"], doc["sub"]
    lines = [heading({"kind": o["transport"], "pub_addr": o["pub_addr"],
                      "sub_addr": o["sub_addr"]})]
    if p.get("sent") is None:
        lines.append("  sent      nothing%s" % ended(p))
    else:
        asked = "max rate" if o["rate_hz"] is None else "%s/s" % fmt_rate(o["rate_hz"])
        late = "" if p.get("late_pct") is None else ", %.1f%% late" % p["late_pct"]
        lines.append("  sent      %s at %s (+%s warm-up), achieved %s/s%s%s" % (
            count(p["sent"]), asked, count(p.get("warmup_sent")), fmt_rate(p.get("rate_hz")),
            late, ended(p)))
    if s.get("received") is None:
        lines.append("  received  nothing%s" % ended(s))
        return lines
    lat = s.get("latency_ns") or {}
    send = latency_text(lat.get("from_send"))
    lines.append("  received  %s (+%s warm-up) at %s/s, lost %s, %s%s" % (
        count(s["received"]), count(s.get("warmup_received")), fmt_rate(s.get("rate_hz")),
        count(s.get("lost")), "latency " + send if send else
        "no latency (unstamped messages, or jtr sub --fast)", ended(s)))
    intended = latency_text(lat.get("from_intended"))
    if intended:
        lines.append("            from the intended send time: %s" % intended)
    return lines
