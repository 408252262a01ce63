# SPDX-License-Identifier: GPL-2.0-only
"""inventory - every setting the jtr profiles touch, as it is on this machine
now: its value, whether it needs a reboot, whether this machine supports it
and why not (jtr tune show), and a dump of every value a profile can change
(what the tests compare before and after)."""
import glob
import os

from ..values import format_cpulist
from . import engine, knobs
from .profile import Profile, jtr_profiles, read_conf


def knob_rows():
    """One row per setting the jtr profiles touch: label, now, when, here, set by."""
    rows, seen = [], {}

    def row(key, label, now, when, here, prof, value):
        if key in seen:
            seen[key]["set_by"].append("%s=%s" % (prof, value))
            return
        seen[key] = r = {"key": key, "label": label, "now": now, "when": when,
                         "supported": here[0], "why": here[1],
                         "set_by": ["%s=%s" % (prof, value)]}
        rows.append(r)

    profs = sorted((Profile(n, expand=False) for n in jtr_profiles()),
                   key=lambda p: (len(p.files), p.name))
    for prof in profs:
        name = prof.name
        short = name.replace("jtr-", "")
        own = prof.files[-1]
        for sec, opts in read_conf(own).items():
            for k, v in opts.items():
                if sec in ("main", "variables") or k in ("enabled", "name"):
                    continue
                if sec == "scheduler" and k == "default_irq_smp_affinity":
                    continue            # shown with isolated_cores' rows
                for r in _rows_for(sec, k, v):
                    val = r[5] if len(r) > 5 else v
                    row(r[0], r[1], r[2], r[3], r[4], short,
                        val if len(val) < 24 else val[:21] + "...")
    return rows


def _file_row(label, path, how="text"):
    try:
        v = knobs.read_file(path)
        v = knobs.norm_bracket(v) if how == "bracket" else v
        return ("file:" + os.path.realpath(path), label, v, "runtime", (True, ""))
    except knobs.KnobError as e:
        return ("file:" + path, label, "-", "runtime", (False, str(e)))


def _rows_for(sec, k, v):
    if sec == "sysctl":
        return [_file_row(k, "/proc/sys/" + k.replace(".", "/"))]
    if sec == "sysfs":
        paths = sorted({os.path.realpath(p) for p in glob.glob(k)})
        if not paths:
            return [("file:" + k, k, "-", "runtime", (False, "no such file on this kernel"))]
        return [_file_row(p, p) for p in paths]
    if sec == "vm":
        return [_file_row("THP enabled", engine.THP + "enabled", "bracket")]
    if sec == "cpu" and k == "force_latency":
        ok = os.path.exists(knobs.DMA_LATENCY)
        return [("dma_latency", "cpu_dma_latency (us)",
                 str(knobs.read_dma_latency()) if ok else "-", "runtime",
                 (ok, "" if ok else "%s missing" % knobs.DMA_LATENCY))]
    if sec == "cpu" and k == "governor":
        ok = engine.has_cpufreq()
        now = knobs.read_file(engine.CPUFREQ % 0) if ok else "-"
        return [("governor", "cpufreq governor", now, "runtime",
                 (ok, "" if ok else "no cpufreq (%s missing: VM or no driver)"
                  % (engine.CPUFREQ % 0)))]
    if sec == "scheduler" and k == "isolated_cores":
        irqs = knobs.irq_numbers()
        affs = {}
        for n in irqs:
            a = knobs.read_value(knobs.irq_entry(n, None))
            affs[a] = affs.get(a, 0) + 1
        tids = knobs.all_tids()
        pinned = sum(1 for t in tids
                     if (knobs.task_stat(t) or ("", 0, 0))[1] & knobs.PF_NO_SETAFFINITY)
        return [("irqs", "IRQ affinity", "%d IRQs: %s" % (len(irqs), ", ".join(
                    "%s x%d" % (a, c) for a, c in sorted(affs.items(), key=str))),
                 "runtime", (True, "managed IRQs refuse (EPERM): the kernel places them; "
                             "apply lists them")),
                _file_row("default IRQ affinity", "/proc/irq/default_smp_affinity"),
                ("tasks", "task affinity", "%d threads, %d pinned by the kernel"
                 % (len(tids), pinned), "runtime",
                 (True, "per-CPU kernel threads cannot move"))]
    if sec == "scheduler":
        return [("sched:" + k, "[scheduler] " + k, "-", "runtime", (True, ""))]
    if sec == "jtr_cpuset" and k == "cpus":
        ver, root = knobs.cpuset_root()
        here = (True, "cgroup v%d at %s (%s)" % (ver, root, "isolated partition" if ver == 2
                                                   else "exclusive cpuset, no load balancing")
                ) if ver else (False, root)
        d = os.path.join(root, "jtr-isolated") if ver else None
        return [("cpuset", "cpuset partition", "present" if d and os.path.isdir(d) else
                 "absent", "runtime", here)]
    if sec == "bootloader":
        ok, why = engine.can_change_cmdline()
        out = []
        for word in v.lstrip("+").split():
            param = word.partition("=")[0]
            here = (ok, why if not ok else "")
            if param == "nohz_full" and not engine.has_nohz_full():
                here = (False, "kernel built without CONFIG_NO_HZ_FULL")
            now = knobs.boot_param_now(param)
            eff = engine.BOOT_ONLY_IN_EFFECT.get(param)
            if eff and os.path.exists(eff):
                try:
                    now += " (in effect: %s)" % (knobs.read_file(eff) or "none")
                except knobs.KnobError as e:
                    now += " (in effect: not readable: %s)" % e
            out.append(("boot:" + param, param, now, "boot", here, word.partition("=")[2]
                        or "(set)"))
        return out
    return [("%s:%s" % (sec, k), "[%s] %s" % (sec, k), "-", "runtime",
             (False, "not implemented by jtr's applier (--via-tuned)"))]


def dump():
    """Every value the profiles can change, as it is now (tests compare two dumps)."""
    d = {}
    for r in knob_rows():
        if r["key"].startswith("file:"):
            d[r["key"]] = r["now"]
    d["dma_latency"] = knobs.read_dma_latency() if os.path.exists(knobs.DMA_LATENCY) else None
    for n in knobs.irq_numbers():
        d["irq:%d" % n] = knobs.read_value(knobs.irq_entry(n, None))
    d["default_irq"] = knobs.read_file("/proc/irq/default_smp_affinity")
    mine = {int(t) for t in os.listdir("/proc/self/task")}
    for t in knobs.all_tids():
        st = knobs.task_stat(t)
        if t in mine:
            continue
        try:
            if st:
                d["task:%d:%d:%s" % (t, st[2], st[0])] = format_cpulist(os.sched_getaffinity(t))
        except OSError:
            pass
    ver, root = knobs.cpuset_root()
    if ver:
        d["cpusets"] = sorted(n for n in os.listdir(root) if os.path.isdir(os.path.join(root, n)))
    d["active_profile"] = os.path.exists(engine.active_path())
    d["grub_dropin"] = os.path.exists(os.path.join(engine.grub_dir(), "99-jtr.cfg"))
    return d
