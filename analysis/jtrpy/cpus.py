"""cpus - CPU lists as the kernel writes them ("0-3,6"), and the default CPU."""
import os


def parse_cpulist(text):
    """'1,3-4' (sysfs or a -c option) -> [1, 3, 4]; '' -> []."""
    out = []
    for part in filter(None, text.strip().split(",")):
        lo, _, hi = part.partition("-")
        out += range(int(lo), int(hi or lo) + 1)
    return out


def read_cpulist(path):
    """The CPU list in a sysfs file, [] when it is missing."""
    try:
        with open(path) as f:
            return parse_cpulist(f.read())
    except OSError:
        return []


def default_cpu():
    """The CPU the probes measure without -c: the first isolated CPU, else the last
    online one this process may use (as lib/jtr_cpu.c's jtr_cpu_default)."""
    allowed = os.sched_getaffinity(0)
    iso = [c for c in read_cpulist("/sys/devices/system/cpu/isolated") if c in allowed]
    if iso:
        return iso[0]
    online = [c for c in read_cpulist("/sys/devices/system/cpu/online") if c in allowed]
    return online[-1] if online else max(allowed)
