# SPDX-License-Identifier: GPL-2.0-only
"""text - how jtr lays out text for people: aligned columns, CPU sets."""


def align(rows, right):
    """Rows of cells as lines, columns padded; right[i] says column i aligns right."""
    if not rows:
        return []
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.rjust(w) if right[i] else c.ljust(w)
                      for i, (c, w) in enumerate(zip(r, widths))).rstrip() for r in rows]


def cpus_text(cpus):
    """'CPU 1' or 'CPUs 1, 2, 3'."""
    if len(cpus) == 1:
        return "CPU %s" % cpus[0]
    return "CPUs %s" % ", ".join(str(c) for c in cpus) if cpus else "no CPU"
