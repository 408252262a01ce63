# SPDX-License-Identifier: GPL-2.0-only
"""suite - jtr suite's lines: what it runs, each item as it starts and as it
ends (the entries drivers/suite.py hands over), and the end."""
from ..units import fmt_ns


def plan_lines(folder, names, skipped):
    """The first lines: the suite's folder and its items, and why send's are
    skipped (@skipped: the items not run, each with its "why")."""
    lines = ["suite: %s: %d item%s (%s)" % (folder, len(names), "" if len(names) == 1 else "s",
                                           ", ".join(names))]
    if skipped:
        lines.append("suite: send: skipped: %s" % skipped[0]["why"])
    return lines


def headline(figures):
    """p99.99 and max of an item's figures (results/figures.py): '' when it has
    neither, None without figures."""
    if figures is None:
        return None
    p = figures["percentiles_ns"].get("99.99")
    if p is None or figures["max_ns"] is None:
        return ""
    return "p99.99 %s, max %s" % (fmt_ns(p), fmt_ns(figures["max_ns"]))


def item_line(rec):
    """An item as it starts (status "running": its command) or as it ends (done,
    interrupted or failed); @rec: its entry of suite.json with k and total, and
    at the end seconds, figures, kept and last (drivers/suite.py run_item)."""
    where = "suite: %d/%d %s: " % (rec["k"], rec["total"], rec["name"])
    if rec["status"] == "running":
        return where + " ".join(rec["command"])
    head = headline(rec["figures"])
    if rec["status"] == "done":
        return where + "done in %.1f s: %s" % (rec["seconds"], head)
    if rec["status"] == "interrupted":
        return where + "interrupted after %.1f s%s" % (
            rec["seconds"], "; kept what it measured (%s)" % head if rec["kept"] else "")
    return where + "failed (%s): %s" % (
        "did not start" if rec["exit_status"] is None else "exit %d" % rec["exit_status"],
        rec["last"])


def end_line(out):
    """The last line (drivers/suite.py Outcome @out): how many items were done,
    failed, whether it was interrupted, and how to draw them."""
    return "suite: %s: %d of %d items done%s%s; 'jtr report %s' draws them" % (
        out.folder, out.done, out.total, ", %d failed" % out.failed if out.failed else "",
        ", interrupted (partial)" if out.interrupted else "", out.folder)
