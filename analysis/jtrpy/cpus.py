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


def online_cpus():
    """The online CPUs, [0, 1, ...]."""
    return read_cpulist("/sys/devices/system/cpu/online")


def pack_cpulist(cpus):
    """[0, 1, 2, 5] -> '0-2,5' (the inverse of parse_cpulist)."""
    out, cpus = [], sorted(set(cpus))
    i = 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else "%d-%d" % (cpus[i], cpus[j]))
        i = j + 1
    return ",".join(out)


def default_cpu():
    """The CPU the probes measure without -c: the first isolated CPU, else the last
    online one this process may use (as lib/jtr_cpu.c's jtr_cpu_default)."""
    allowed = os.sched_getaffinity(0)
    iso = [c for c in read_cpulist("/sys/devices/system/cpu/isolated") if c in allowed]
    if iso:
        return iso[0]
    online = [c for c in read_cpulist("/sys/devices/system/cpu/online") if c in allowed]
    return online[-1] if online else max(allowed)
