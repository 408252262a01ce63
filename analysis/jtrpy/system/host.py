# SPDX-License-Identifier: GPL-2.0-only
"""host - facts about this machine that can be read without measuring: what
a result's "host" holds besides the probes' own (tsc_hz, tsc_step_ns and the
hypervisor's name need the probes), for results made here from elsewhere."""
import os

from .paths import active_profile_path


def read_text(path):
    """A small file's text without its trailing newline, or None."""
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def _int(text):
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def _cpu_cgroup_dir():
    """(directory, cgroup path) of this process's cgroup v1 cpu controller
    (/proc/self/cgroup's "N:cpu,cpuacct:/PATH" under the mount
    /proc/self/mountinfo names, less the mount's own root), or None."""
    path = None
    for line in (read_text("/proc/self/cgroup") or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3 and "cpu" in parts[1].split(","):
            path = parts[2]
            break
    if path is None:
        return None
    for line in (read_text("/proc/self/mountinfo") or "").splitlines():
        # ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPER
        head, sep, tail = line.partition(" - ")
        f, t = head.split(), tail.split()
        if not sep or len(f) < 5 or len(t) < 3 or t[0] != "cgroup" or \
                "cpu" not in t[2].split(","):
            continue
        root = "" if f[3] == "/" else f[3]
        if not path.startswith(root):
            continue
        rest = path[len(root):]
        return f[4] + ("" if rest in ("", "/") else rest), path
    return None


def rt_throttling():
    """host.rt_throttling: what throttles this process's real-time tasks (as
    lib/jtr_cpu.c's jtr_rt_throttle_read): with RT group scheduling (a cgroup
    v1 cpu controller with cpu.rt_runtime_us) its cpu cgroup's runtime and
    period, which throttle whatever the sysctls say, with the cgroup and the
    sysctl's runtime beside them; else kernel.sched_rt_{runtime,period}_us.
    The sysctl at -1 turns it off either way."""
    runtime = _int(read_text("/proc/sys/kernel/sched_rt_runtime_us"))
    period = _int(read_text("/proc/sys/kernel/sched_rt_period_us"))
    rt = {"enabled": None if runtime is None else runtime != -1}
    if runtime is not None:
        rt["runtime_us"] = runtime
    if period:
        rt["period_us"] = period
    group = _cpu_cgroup_dir() if runtime is not None else None
    if group:
        g_runtime = _int(read_text(group[0] + "/cpu.rt_runtime_us"))
        g_period = _int(read_text(group[0] + "/cpu.rt_period_us"))
        if g_runtime is not None and g_runtime >= -1 and g_period and g_period > 0:
            rt.update(runtime_us=-1 if runtime < 0 else g_runtime, period_us=g_period,
                      cgroup=group[1], sysctl_runtime_us=runtime)
            rt["enabled"] = 0 <= rt["runtime_us"] < g_period
    return rt


def this_machine():
    """The host facts jtr records that can be read without measuring, from this
    machine now (tsc_hz, tsc_step_ns and the hypervisor's name need the probes)."""
    info = read_text("/proc/cpuinfo") or ""
    model, flags = "", set()
    for line in info.splitlines():
        k, _, v = line.partition(":")
        if k.strip() == "model name" and not model:
            model = v.strip()
        elif k.strip() == "flags" and not flags:
            flags = set(v.split())
    rt = rt_throttling()
    profile = (read_text(active_profile_path()) or "").split("\n")[0] or None
    return {
        "cmdline": read_text("/proc/cmdline") or "",
        "cpu_model": model,
        "online_cpus": read_text("/sys/devices/system/cpu/online") or "",
        "isolated_cpus": read_text("/sys/devices/system/cpu/isolated") or "",
        "nohz_full_cpus": (read_text("/sys/devices/system/cpu/nohz_full") or "").replace(
            "(null)", "") if os.path.exists("/sys/devices/system/cpu/nohz_full") else None,
        "clocksource": read_text(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource"),
        "tsc_invariant": "constant_tsc" in flags and "nonstop_tsc" in flags,
        "virtualised": "hypervisor" in flags,
        "rt_throttling": rt,
        "tuning_profile": profile,
    }


UNKNOWN_HOST = {"cmdline": "", "cpu_model": "", "online_cpus": "", "isolated_cpus": "",
                "nohz_full_cpus": None, "clocksource": None, "tsc_invariant": False,
                "virtualised": False, "rt_throttling": {"enabled": None},
                "tuning_profile": None}
