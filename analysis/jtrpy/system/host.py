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
    runtime = _int(read_text("/proc/sys/kernel/sched_rt_runtime_us"))
    period = _int(read_text("/proc/sys/kernel/sched_rt_period_us"))
    rt = {"enabled": None if runtime is None else runtime != -1}
    if runtime is not None:
        rt["runtime_us"] = runtime
    if period:
        rt["period_us"] = period
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
