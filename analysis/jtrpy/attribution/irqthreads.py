# SPDX-License-Identifier: GPL-2.0-only
"""irqthreads - a threaded IRQ handler named whole. On PREEMPT_RT (and with
threadirqs) a device's interrupt runs in a kernel thread the kernel names
irq/NUMBER-ACTION, but a comm holds 15 characters: the switch records say
"irq/25-virtio0-". The irq_handler_entry records the thread itself writes name
the action in full ("virtio0-requests"), so the attribution's texts can say
"irq/25-virtio0-requests": full_names() finds them in a log, named() puts them
into an attribution section (its causes' names, tasks and chains)."""
import re

from ..trace import events as ev

COMM_MAX = 15                       # a task's comm: 16 bytes with its NUL


def full_names(log):
    """{truncated comm: full name} of the threaded IRQ handlers whose name the
    kernel cut ('irq/25-virtio0-': 'irq/25-virtio0-requests'), from the action
    names of the log's irq_handler_entry records; {} for none."""
    actions = {}
    for e in log.of_type(ev.IRQ_ENTRY):
        if e.a not in actions:
            actions[e.a] = e.text
    out = {}
    for irq, action in actions.items():
        full = "irq/%d-%s" % (irq, action)
        if action and len(full) > COMM_MAX:
            out[full[:COMM_MAX]] = full
    return out


def named(section, names):
    """@section (an attribution, or any JSON-like value) with each truncated comm
    of @names replaced by the full name wherever a text holds it (not where the
    full name is already)."""
    if not names:
        return section
    pattern = re.compile("|".join("%s(?!%s)" % (re.escape(cut), re.escape(full[COMM_MAX:]))
                                  for cut, full in names.items()))

    def fix(v):
        if isinstance(v, str):
            return pattern.sub(lambda m: names[m.group(0)], v) if "irq/" in v else v
        if isinstance(v, dict):
            return {k: fix(x) for k, x in v.items()}
        if isinstance(v, list):
            return [fix(x) for x in v]
        return v
    return fix(section)
