# SPDX-License-Identifier: GPL-2.0-only
"""rtknobs - RT throttling's settings for the tests that need them, read and
set in an order the kernel takes, put back after the block also when it fails:
the sysctls, and the root cpu cgroup's where RT group scheduling has them."""
import contextlib
import os

RT_SYSCTL = "/proc/sys/kernel/sched_rt_%s_us"


def rt_group_dir():
    """The root of the cgroup v1 hierarchy with the cpu controller where it has RT
    group scheduling (cpu.rt_period_us), or None. There (Linux 6.12 and later
    with CONFIG_RT_GROUP_SCHED) the root group's period and runtime are what
    throttle its tasks; the sysctls only bound them."""
    with open("/proc/mounts") as f:
        for line in f:
            _, where, kind, opts = line.split()[:4]
            if kind == "cgroup" and "cpu" in opts.split(",") and \
                    os.path.exists(os.path.join(where, "cpu.rt_period_us")):
                return where
    return None


def read_rt():
    """(period, runtime, the root cpu cgroup's (period, runtime) or None) of RT
    throttling, in us."""
    def get(path):
        with open(path) as f:
            return int(f.read())
    where = rt_group_dir()
    group = tuple(get(os.path.join(where, "cpu.rt_%s_us" % n)) for n in ("period", "runtime")) \
        if where else None
    return get(RT_SYSCTL % "period"), get(RT_SYSCTL % "runtime"), group


def write_rt(period_us, runtime_us, group=None):
    """Set RT throttling's period and runtime, and the root cpu cgroup's to
    @group's (period, runtime) where it has them, in an order the kernel takes:
    the sysctl's runtime unlimited while the rest change (no group may have a
    larger share than it), a group's runtime before its period where the period
    shrinks (never more runtime than period), then the sysctl's period and
    runtime."""
    def put(path, value):
        with open(path, "w") as f:
            f.write(str(value))
    put(RT_SYSCTL % "runtime", -1)
    where = rt_group_dir()
    if where and group:
        with open(os.path.join(where, "cpu.rt_period_us")) as f:
            shrinks = group[0] < int(f.read())
        for n in (("runtime", "period") if shrinks else ("period", "runtime")):
            put(os.path.join(where, "cpu.rt_%s_us" % n), group[n == "runtime"])
    put(RT_SYSCTL % "period", period_us)
    put(RT_SYSCTL % "runtime", runtime_us)


@contextlib.contextmanager
def rt_period(period_us, runtime_us, group=None):
    """RT throttling's period and runtime set for the block (the sysctls, and the
    root cpu cgroup's where it has them: @group's (period, runtime), by default
    the same), put back after it, also when it fails (the machine fixture puts
    back the runtime sysctl only)."""
    before = read_rt()
    try:
        write_rt(period_us, runtime_us, group or (period_us, runtime_us))
        yield
    finally:
        write_rt(*before)
