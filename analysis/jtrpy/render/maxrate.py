# SPDX-License-Identifier: GPL-2.0-only
"""maxrate - jtr maxrate's lines: the heading, a line per step while it runs,
and the end: the answer, the maximum rate per message size (--sizes) or the
latency at each rate (--rates)."""
from ..units import fmt_rate
from ..vocab import TP_FULL_LEN

STEP = "%4s %12s %12s %12s %8s %7s %6s  %s"
SIZE = "%8s %12s %10s %8s %7s %12s %12s  %s"
SWEEP = "%8s %12s %12s %8s %11s %11s %11s %11s %11s %11s  %s"


def heading(o):
    """The first line: what is measured."""
    where = o["kind"] + (" " + o["addr"] if o["addr"] else "")
    sizes = ",".join(map(str, o["sizes"]))
    if o["rates"]:
        short = [s for s in o["sizes"] if s < TP_FULL_LEN]
        return "jtr maxrate: %s, %s-byte messages, %.3g s steps at %s msgs/s (latency from " \
               "the intended send time%s)" % (
                   where, sizes, o["step_ns"] / 1e9, ", ".join(map(fmt_rate, o["rates"])),
                   "; from the send at %s bytes, which carry no intended time" %
                   ",".join(map(str, short)) if short else "")
    return "jtr maxrate: %s, %s-byte messages, %.3g s steps, from %s msgs/s, method %s" % (
        where, sizes, o["step_ns"] / 1e9, fmt_rate(o["from"]), o.get("method", "seed"))


def size_line(o, i, size):
    """Before each size's steps when there are several."""
    return "-- %d-byte messages (size %d of %d)" % (size, i + 1, len(o["sizes"]))


def pct(v):
    return "-" if v is None else "%.1f%%" % v


def count(v):
    return "-" if v is None else "{:,}".format(v)


def step_head():
    return STEP % ("step", "rate asked", "pub rate", "sub rate", "lost", "late", "steal",
                   "verdict")


def step_row(rec):
    """A step of the search as it ends."""
    return STEP % (rec["step"], fmt_rate(rec["rate_hz"]), fmt_rate(rec.get("pub_rate_hz")),
                   fmt_rate(rec.get("sub_rate_hz")), count(rec.get("lost")),
                   pct(rec.get("late_pct")), pct(rec.get("steal_pct")), rec["verdict"])


def criterion(o):
    """What a passing step met, in words (the same for every size)."""
    text = "no loss, no send that waited for room, both programs' rates within %g%% of the " \
           "rate asked" % o["slack"]
    if o.get("method") == "late":
        text += ", at most %g%% of the sends late" % o["max_late"]
    return text


def size_head():
    return SIZE % ("size", "max rate", "MB/s", "lost", "late", "pub rate", "sub rate",
                   "answer")


def size_row(rec):
    """A size's answer (drivers/maxrate.py size_record) and the figures of the
    step that passed at it."""
    at = rec.get("at") or {}
    good = rec.get("max_rate_hz")
    answer = {"done": "%s failed" % fmt_rate(rec.get("first_bad_hz"))
              if rec.get("first_bad_hz") else "done",
              "reached --to": ">= (--to reached)", "none passed": "no rate passed",
              "interrupted": "interrupted", "searching": "searching"}.get(rec["state"],
                                                                         rec["state"])
    return SIZE % (rec["msg_len"], fmt_rate(good),
                   "-" if rec.get("mb_per_s") is None else "%.1f" % rec["mb_per_s"],
                   count(at.get("lost")), pct(at.get("late_pct")),
                   fmt_rate(at.get("pub_rate_hz")), fmt_rate(at.get("sub_rate_hz")), answer)


def size_table(o, sizes):
    """The maximum sustainable rate per message size: lines."""
    return ["max sustainable rate per message size (a step passes with %s):" % criterion(o),
            size_head()] + [size_row(r) for r in sizes]


def sweep_head():
    return SWEEP % ("size", "rate asked", "achieved", "lost", "min ns", "avg ns", "p50 ns",
                    "p99 ns", "p99.9 ns", "max ns", "verdict")


def sweep_row(row):
    """A rate of the sweep (drivers/maxrate.py sweep_row)."""
    mean = row.get("mean_ns")
    return SWEEP % (row["msg_len"], fmt_rate(row["rate_hz"]), fmt_rate(row.get("achieved_hz")),
                    count(row.get("lost")), count(row.get("min_ns")),
                    count(None if mean is None else int(round(mean))), count(row.get("p50_ns")),
                    count(row.get("p99_ns")), count(row.get("p99.9_ns")),
                    count(row.get("max_ns")), row["verdict"])


def sweep_table(rows):
    """The latency at each rate: lines."""
    return [sweep_head()] + [sweep_row(r) for r in rows]


def step_line(o, rec, row):
    """A step as it ends: its row of the search, or of the sweep (@row: its
    sweep row, None when it was interrupted)."""
    if not o["rates"]:
        return step_row(rec)
    if row is None:
        return "step %d at %s msgs/s: interrupted" % (rec["step"], fmt_rate(rec["rate_hz"]))
    return sweep_row(row)


def end_lines(o, out):
    """The end of a run (drivers/maxrate.py Outcome @out): the answer, or the
    table per size or per rate, then the results folder."""
    s, lines = out.search, []
    if out.state == "interrupted":
        lines.append("interrupted after %d steps" % len(s.steps))
    if out.mode == "rates":
        if s.sweep and len(o["sizes"]) > 1:      # the rows were printed as they came
            lines += sweep_table(s.sweep)
    elif out.mode == "sizes":
        lines += size_table(o, s.sizes)
    elif out.good is None:
        lines.append("no rate passed (lowest tried %s msgs/s)" % fmt_rate(out.bad))
    elif out.state == "reached --to":
        lines.append("max sustainable rate: >= %s msgs/s (--to reached)" % fmt_rate(out.good))
    else:
        lines.append("max sustainable rate: %s msgs/s%s" % (
            fmt_rate(out.good), " (%s failed)" % fmt_rate(out.bad) if out.bad else ""))
    return lines + ["results: %s" % out.outdir]
