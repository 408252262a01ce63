# SPDX-License-Identifier: GPL-2.0-only
"""tune - jtr tune's lines: the profiles, the table of settings, a plan, what an
apply, a revert and a verify did (drivers/tune.py gives them what they show)."""
from ..values import format_cpulist


def profile_line(name, summary, includes):
    """A profile of jtr tune list: its name, summary and the profiles it includes."""
    return "%-14s %s%s" % (name, summary, " (includes %s)" % ", ".join(includes)
                           if includes else "")


def active_line(st, bad):
    """The applied profile of snapshot @st, or why it is unknown (@bad), or none."""
    return "active profile: %s" % ("%s on CPUs %s (since %s)" % (
        st["profile"], st["isolated_cpus"] or "-", st["applied_at"]) if st else
        "unknown: " + bad if bad else "none")


def knob_table(rows):
    """jtr tune show's table of settings (tune/inventory.py knob_rows), the reasons
    a setting is not supported here numbered below it: lines."""
    w = max(len(r["label"]) for r in rows)
    notes = []
    table = []
    for r in rows:
        here = "yes" if r["supported"] else "no"
        if r["why"]:
            if r["why"] not in notes:
                notes.append(r["why"])
            here += " [%d]" % (notes.index(r["why"]) + 1)
        table.append((r["label"], r["now"], r["when"], here, ", ".join(r["set_by"])))
    wn = max(len(t[1]) for t in table)
    lines = ["%-*s  %-*s  %-7s  %-6s  %s" % (w, "setting", wn, "now", "when", "here", "set by")]
    for t in table:
        lines.append("%-*s  %-*s  %-7s  %-6s  %s" % (w, t[0], wn, t[1], t[2], t[3], t[4]))
    return lines + ["[%d] %s" % (i + 1, n) for i, n in enumerate(notes)]


def plan_head(plan, cpus, house):
    """The plan's first line: the profile, its CPUs and the housekeeping ones."""
    return "%s%s" % (plan.profile.name, " on CPUs %s (housekeeping: %s)" % (
        format_cpulist(cpus), format_cpulist(house)) if cpus else "")


def plan_lines(plan, cmdline=None):
    """The plan (tune/engine.py make_plan), grouped: IRQs and tasks counted,
    what is not applied here and why, the boot-only options and whether they can
    be made persistent (@cmdline: engine.can_change_cmdline's (ok, how or why)),
    the warnings."""
    tasks = [e for e in plan.entries if e["type"] == "task"]
    irqs = [e for e in plan.entries if e["key"].startswith("irq:")]
    rest = [e for e in plan.entries if e not in tasks and e not in irqs]
    w = max([len(e["label"]) for e in rest] + [10])
    out = ["plan (%d settings):" % len(plan.entries)]
    for e in rest:
        same = plan.already(e)
        out.append("  %-*s  %s -> %s%s" % (w, e["label"], e["before"], e["target"],
                                           "  (already)" if same else ""))
    if irqs:
        out.append("  %-*s  %d IRQs -> %s" % (w, "IRQ affinity", len(irqs),
                                              ", ".join(sorted({e["target"] for e in irqs}))))
    if tasks:
        names = sorted({e["comm"] for e in tasks})
        out.append("  %-*s  %d threads moved off CPUs %s (%s%s)" % (
            w, "task affinity", len(tasks), format_cpulist(plan.isolated), ", ".join(names[:8]),
            ", ..." if len(names) > 8 else ""))
    if plan.pinned:
        names = sorted({c for _, c in plan.pinned})
        out.append("  stay (the kernel pins them): %d threads: %s%s" % (
            len(plan.pinned), ", ".join(names[:10]), ", ..." if len(names) > 10 else ""))
    if plan.skipped:
        out.append("not applied here:")
        for what, why in plan.skipped:
            out.append("  %s: %s" % (what, why))
    if plan.boot:
        out.append("boot-only (the next boot; on the kernel command line):")
        out.append("  %s" % " ".join(b["word"] for b in plan.boot))
        out.append("  now: %s" % ", ".join("%s=%s" % (b["param"], b["now"]) for b in plan.boot))
        ok, why = cmdline
        out.append("  %s" % ("--boot writes it as a " + why if ok else "cannot be made "
                                                                      "persistent here: " + why))
    for w_ in plan.warnings:
        out.append("warning: %s" % w_)
    return out


def not_restored(failed):
    """The settings a revert could not restore [(label, why)]: lines."""
    return ["  not restored: %s: %s" % (label, why) for label, why in failed]


def applied_lines(name, via_tuned, st, state_path, grub_file, auto):
    """What an apply of profile @name did, from its snapshot @st: the settings
    changed, already so and failed (each failure listed), the grub drop-in
    written (@grub_file), the auto-revert (@auto: seconds, or None)."""
    res = [e.get("result", "tuned") for e in st["entries"]]
    failed = [e for e in st["entries"] if str(e.get("result", "")).startswith("failed")]
    out = ["applied %s by %s: %s%d changed, %d already so, %d failed%s (snapshot: %s)" % (
        name, "tuned" if via_tuned else "jtr",
        "%d by tuned, " % res.count("by tuned") if "by tuned" in res else "",
        res.count("changed"), res.count("unchanged"), len(failed),
        ", %d tasks exited before their turn" % res.count("gone") if "gone" in res else "",
        state_path)]
    for e in failed:
        out.append("  not applied: %s: %s" % (e["label"], e["result"][len("failed: "):]))
    if st.get("update_grub"):
        out.append("grub drop-in %s written; update-grub: %s" % (grub_file, st["update_grub"]))
    if auto:
        out.append("auto-revert in %g s unless 'jtr tune confirm'" % auto)
    return out + ["revert with: jtr tune revert"]
