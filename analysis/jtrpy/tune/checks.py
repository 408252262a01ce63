# SPDX-License-Identifier: GPL-2.0-only
"""checks - every value a profile gives jtr's applier, checked when the profile is
loaded, before anything is applied (and for --dry-run and jtr ab alike).

CPU lists and masks, the cpuset name (one folder under the cgroup mount), sysctl
names and sysfs paths (only under /proc/sys and /sys), latencies, THP modes,
the words of the kernel command line (they go into a shell-read grub drop-in).
A problem is one UsageError, 'PROFILE: [section] key=value: what is wrong; what
to write'. Sections and options jtr's applier does not implement are not
checked here: the plan lists them as not applied.
"""
import os
import re

from ..errors import UsageError
from ..system.cpus import online_cpus
from ..values import format_cpulist, parse_cpulist
from .knobs import cpuset_name_problem

SYSCTL_RE = re.compile(r"^[A-Za-z0-9_:@+-]+([./][A-Za-z0-9_:@+-]+)*$")
MASK_RE = re.compile(r"^[0-9a-fA-F]+(,[0-9a-fA-F]+)*$")
CMDLINE_WORD_RE = re.compile(r"^[A-Za-z0-9_.,:=+/@-]+$")
DMA_LATENCY_MAX_US = 2000000000          # PM QoS: the default, "no constraint"
THP_ENABLED = ("always", "madvise", "never")
THP_DEFRAG = ("always", "defer", "defer+madvise", "madvise", "never")
BOOT_CPULISTS = ("isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity")
ISOLCPUS_FLAGS = ("nohz", "domain", "managed_irq")
CPUSET_OPTIONS = ("name", "cpus", "enabled", "type", "priority")


def cpulist_problem(text, isolating=False, force=False):
    """What is wrong with CPU list @text, or None. @isolating: the CPUs are to be
    isolated, so not every CPU and not every CPU jtr may run on (unless @force)."""
    try:
        cpus = parse_cpulist(text)
    except UsageError as e:
        return str(e)
    online = online_cpus()
    bad = [c for c in cpus if c not in online]
    if bad:
        return "CPU %s is not online (online: %s)" % (",".join(map(str, bad)),
                                                      format_cpulist(online))
    if not isolating or force:
        return None
    if set(online) <= set(cpus):
        return ("would isolate every CPU: nothing would be left for the kernel, IRQs and "
                "other tasks; keep at least one CPU (or --force)")
    mine = os.sched_getaffinity(0)
    if mine <= set(cpus):
        return ("would isolate the CPU jtr runs on (it may only use %s); run it from a "
                "housekeeping CPU, or --force" % format_cpulist(mine))
    return None


def _value_problem(value):
    if not value.strip():
        return "empty; write the value to set"
    if "\n" in value:
        return "more than one line; write the value on the option's own line"
    bad = re.search(r"[\x00-\x1f\x7f]", value)
    if bad:
        return "a control character (%r) in it; write the value in plain text" % bad.group(0)
    return None


def _cpu(key, value, force):
    if key == "force_latency":
        if value.startswith("cstate.") or "|" in value:
            return None                 # tuned's own forms: the plan says --via-tuned
        if not re.fullmatch(r"[0-9]{1,10}", value) or int(value) > DMA_LATENCY_MAX_US:
            return ("not a latency in us; write 0 to %d (1: only the shallowest C-states), "
                    "or tuned's cstate.* form with --via-tuned" % DMA_LATENCY_MAX_US)
    if key == "governor" and not re.fullmatch(r"[a-z0-9_]+", value):
        return ("not a cpufreq governor's name; write one such as performance (tuned's "
                "a|b alternatives need --via-tuned)")
    return None


def _vm(key, value, force):
    words = {"transparent_hugepages": THP_ENABLED, "transparent_hugepage": THP_ENABLED,
             "transparent_hugepage.defrag": THP_DEFRAG}.get(key)
    if words and value not in words:
        return "%r is not a THP mode; write %s or %s" % (value, ", ".join(words[:-1]),
                                                         words[-1])
    return None


def _sysctl(key, value, force):
    if not SYSCTL_RE.match(key):
        return ("not a sysctl name; write a name under /proc/sys in dotted form, such as "
                "vm.swappiness")
    why = _value_problem(value)
    if why is None and key.endswith("_cpumask"):
        why = cpulist_problem(value)
    return why


def _sysfs(key, value, force):
    parts = key.split("/")
    if not key.startswith("/sys/") or "." in parts or ".." in parts or "" in parts[2:]:
        return ("not a path under /sys; write an absolute /sys/... path without '.' or '..' "
                "(globs allowed)")
    why = _value_problem(value)
    if why is None and (key.endswith("cpumask") or key.endswith("smp_affinity")) and \
            not MASK_RE.match(value):
        why = ("not a CPU mask; write hex words as the file shows them, such as 00000001 "
               "(CPU 0), or ${f:cpulist2hex:LIST}")
    return why


def _group(value):
    """What is wrong with a group.NAME=RULE_PRIO:SCHED:PRIO:AFFINITY:REGEX, or None."""
    fields = value.split(":", 4)
    if len(fields) != 5:
        return ("not a group rule; write RULE_PRIO:SCHED:PRIO:AFFINITY:REGEX, such as "
                "0:*:*:${f:cpulist2hex:0}:^myapp as tuned does")
    rule_prio, sched, prio, aff, regex = fields
    if not rule_prio.isdigit():
        return "rule priority %r: write a number such as 0" % rule_prio
    if sched not in ("f", "b", "r", "o", "*"):
        return "policy %r: write f, b, r, o or * (no change)" % sched
    if prio != "*" and not prio.isdigit():
        return "priority %r: write a number or * (no change)" % prio
    if aff != "*":
        if not MASK_RE.match(aff):
            return ("affinity %r: write a hex CPU mask such as 1 (CPU 0), "
                    "${f:cpulist2hex:LIST}, or * (no change)" % aff)
        m = int(aff.replace(",", ""), 16)
        cpus = [c for c in range(m.bit_length()) if m >> c & 1]
        why = cpulist_problem(format_cpulist(cpus)) if cpus else "no CPU in it"
        if why:
            return "affinity %s: %s" % (aff, why)
    try:
        re.compile(regex)
    except re.error as e:
        return "regular expression %r: %s" % (regex, e)
    return None


def _scheduler(key, value, force):
    if key.startswith("group."):
        return _group(value) if value.strip() else None
    if key == "isolated_cores":
        return cpulist_problem(value, isolating=True, force=force)
    if key == "default_irq_smp_affinity" and value not in ("calc", "ignore"):
        try:
            parse_cpulist(value)
        except UsageError:
            return ("%r is not calc, ignore or a CPU list; write calc (the CPUs not "
                    "isolated), ignore, or CPUs such as 0 or 0-1" % value)
        return cpulist_problem(value)
    return None


def _cpuset(key, value, force):
    if key not in CPUSET_OPTIONS:
        return ("not an option of [jtr_cpuset]; it takes name= and cpus= (and tuned's "
                "enabled=, type=, priority=)")
    if key == "name" and cpuset_name_problem(value):
        return "%s; write a plain name such as name=jtr-isolated" % cpuset_name_problem(value)
    if key == "cpus":
        return cpulist_problem(value)
    return None


def _bootloader(key, value, force):
    if not key.startswith("cmdline"):
        return None
    for word in value.lstrip("+").split():
        if not CMDLINE_WORD_RE.match(word):
            return ("%r cannot go on the kernel command line jtr writes (quotes, '$', '\\', "
                    "';' are refused); write plain param=value words" % word)
        param, _, val = word.partition("=")
        if param in BOOT_CPULISTS:
            items = val.split(",")
            while param == "isolcpus" and items and items[0] in ISOLCPUS_FLAGS:
                items = items[1:]
            try:
                parse_cpulist(",".join(items))
            except UsageError as e:
                return "%s: %s" % (word, e)
    return None


CHECKS = {"cpu": _cpu, "vm": _vm, "sysctl": _sysctl, "sysfs": _sysfs,
          "scheduler": _scheduler, "jtr_cpuset": _cpuset, "bootloader": _bootloader}


def check_profile(profile, force=False):
    """Check every option of @profile (a Profile, variables expanded) that jtr's
    applier uses; UsageError names the first bad one. Returns the isolated CPUs
    ([scheduler] isolated_cores) as a list, or None when it isolates none."""
    for sec, opts in profile.units.items():
        check = CHECKS.get(sec)
        if check is None:
            continue
        for key, value in opts.items():
            why = check(key, value, force)
            if why:
                raise UsageError("%s: %s" % (profile.where(sec, key), why))
    cpuset = profile.units.get("jtr_cpuset")
    if cpuset is not None and "cpus" not in cpuset:
        raise UsageError("%s: [jtr_cpuset] has no cpus=; write the partition's CPUs, such as "
                         "cpus=${isolated_cores}" % profile.name)
    iso = profile.units.get("scheduler", {}).get("isolated_cores")
    return parse_cpulist(iso) if iso is not None else None
