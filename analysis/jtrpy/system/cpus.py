# SPDX-License-Identifier: GPL-2.0-only
"""cpus - the machine's CPUs as sysfs lists them, and the default CPU."""
import os

from ..errors import UsageError
from ..values import parse_cpulist


def cpulist_of(text):
    """A CPU list as the kernel writes it ("0-3,6" and a newline; empty for none) or
    a profile or snapshot holds it: [0, 1, 2, 3, 6]; UsageError when it is not one."""
    text = (text or "").strip()
    return parse_cpulist(text) if text else []


def read_cpulist(path):
    """The CPU list in a sysfs file, [] when it is missing, empty or unreadable."""
    try:
        with open(path) as f:
            return cpulist_of(f.read())
    except (OSError, UsageError):
        return []


def online_cpus():
    """The online CPUs, [0, 1, ...]."""
    return read_cpulist("/sys/devices/system/cpu/online")


def isolated_cpus():
    """The CPUs isolated at boot (isolcpus=), [] when none."""
    return read_cpulist("/sys/devices/system/cpu/isolated")


def cpuset_cpus():
    """The CPUs this process's cpuset cgroup allows (cgroup v2
    cpuset.cpus.effective), where it may pin a thread outside its affinity; the
    online CPUs when it has none (as lib/jtr_cpu.c's jtr_cpus_cpuset)."""
    try:
        with open("/proc/self/cgroup") as f:
            path = next((x[3:].strip() for x in f if x.startswith("0::")), None)
    except OSError:
        path = None
    if path is not None:
        cpus = read_cpulist("/sys/fs/cgroup%s/cpuset.cpus.effective"
                            % ("" if path == "/" else path))
        if cpus:
            return cpus
    return online_cpus()


def default_cpu():
    """The CPU the probes measure without -c: the first isolated CPU, else the last
    online one this process may use (as lib/jtr_cpu.c's jtr_cpu_default)."""
    allowed, cpuset = os.sched_getaffinity(0), cpuset_cpus()
    iso = [c for c in isolated_cpus() if c in cpuset]
    if iso:
        return iso[0]
    online = [c for c in online_cpus() if c in allowed]
    return online[-1] if online else max(allowed)
