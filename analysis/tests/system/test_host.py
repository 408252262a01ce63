# SPDX-License-Identifier: GPL-2.0-only
"""system.host: the host facts read without measuring, from files given here
(the machine's own are not read): the first model name, the TSC flags, RT
throttling's settings, nohz_full's "(null)", the tuning profile's first line."""
import os

import pytest

from jtrpy.system import host

CPUINFO = """processor\t: 0
model name\t: Example CPU @ 2.00GHz
flags\t\t: fpu constant_tsc nonstop_tsc hypervisor
processor\t: 1
model name\t: Another
flags\t\t: fpu
"""
NOHZ = "/sys/devices/system/cpu/nohz_full"


@pytest.fixture
def files(monkeypatch, tmp_path):
    """{path: text} the fake read_text serves (others: None); nohz_full's file
    exists when it is in the dict."""
    served = {}
    monkeypatch.setenv("JTR_STATE_DIR", str(tmp_path))
    monkeypatch.setattr(host, "read_text", lambda p: served.get(p))
    exists = os.path.exists
    monkeypatch.setattr(host.os.path, "exists", lambda p: p in served if p == NOHZ
                        else exists(p))
    return served


def test_read_text(tmp_path):
    f = tmp_path / "x"
    f.write_text("  value\n\n")
    assert host.read_text(str(f)) == "value"
    assert host.read_text(str(tmp_path / "missing")) is None
    assert host.read_text(str(tmp_path)) is None         # a folder


def test_facts_of_a_machine(files, tmp_path):
    files.update({
        "/proc/cpuinfo": CPUINFO, "/proc/cmdline": "quiet isolcpus=1",
        "/proc/sys/kernel/sched_rt_runtime_us": "950000",
        "/proc/sys/kernel/sched_rt_period_us": "1000000",
        "/sys/devices/system/cpu/online": "0-3", "/sys/devices/system/cpu/isolated": "1",
        NOHZ: "(null)",
        "/sys/devices/system/clocksource/clocksource0/current_clocksource": "tsc",
        str(tmp_path / "active-profile"): "jtr-isolate\napplied 2026-01-01"})
    f = host.this_machine()
    assert f == {
        "cmdline": "quiet isolcpus=1", "cpu_model": "Example CPU @ 2.00GHz",
        "online_cpus": "0-3", "isolated_cpus": "1", "nohz_full_cpus": "",
        "clocksource": "tsc", "tsc_invariant": True, "virtualised": True,
        "rt_throttling": {"enabled": True, "runtime_us": 950000, "period_us": 1000000},
        "tuning_profile": "jtr-isolate"}
    assert set(f) == set(host.UNKNOWN_HOST)


def test_facts_of_a_machine_that_says_little(files):
    """Nothing readable: the unknown host's facts; RT throttling off (-1) and a
    period that is not a number; one TSC flag of two is not invariant."""
    assert host.this_machine() == host.UNKNOWN_HOST
    files.update({"/proc/cpuinfo": "flags\t: constant_tsc\n",
                  "/proc/sys/kernel/sched_rt_runtime_us": "-1",
                  "/proc/sys/kernel/sched_rt_period_us": "x", NOHZ: "2-3"})
    f = host.this_machine()
    assert f["rt_throttling"] == {"enabled": False, "runtime_us": -1}
    assert f["tsc_invariant"] is False and f["virtualised"] is False
    assert f["nohz_full_cpus"] == "2-3" and f["cpu_model"] == ""


def test_rt_throttling_of_a_cpu_cgroup(files):
    """With RT group scheduling (a cgroup v1 cpu controller with
    cpu.rt_runtime_us) the process's cpu cgroup throttles, whatever the sysctl
    says (kernel 6.18: the root group's 800000 stopped a FIFO loop 200 ms a
    second under a sysctl of 950000); the sysctl at -1 turns it off; inside a
    container the mount's root is the container's cgroup."""
    files.update({"/proc/sys/kernel/sched_rt_runtime_us": "950000",
                  "/proc/sys/kernel/sched_rt_period_us": "1000000",
                  "/proc/self/cgroup": "12:pids:/\n4:cpu,cpuacct:/jobs/a\n0::/",
                  "/proc/self/mountinfo":
                  "30 25 0:26 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
                  "32 25 0:28 / /sys/fs/cgroup/cpu,cpuacct rw shared:10 - cgroup cgroup "
                  "rw,cpu,cpuacct"})
    sysctls = {"enabled": True, "runtime_us": 950000, "period_us": 1000000}
    assert host.rt_throttling() == sysctls      # no RT group scheduling
    files.update({"/sys/fs/cgroup/cpu,cpuacct/jobs/a/cpu.rt_runtime_us": "800000",
                  "/sys/fs/cgroup/cpu,cpuacct/jobs/a/cpu.rt_period_us": "1000000"})
    assert host.rt_throttling() == {"enabled": True, "runtime_us": 800000,
                                    "period_us": 1000000, "cgroup": "/jobs/a",
                                    "sysctl_runtime_us": 950000}
    files["/proc/sys/kernel/sched_rt_runtime_us"] = "-1"
    assert host.rt_throttling()["enabled"] is False
    assert host.rt_throttling()["runtime_us"] == -1
    files["/proc/sys/kernel/sched_rt_runtime_us"] = "950000"
    files.update({"/proc/self/cgroup": "4:cpuacct,cpu:/docker/x/svc",
                  "/proc/self/mountinfo": "32 25 0:28 /docker/x /sys/fs/cgroup/cpu rw - "
                  "cgroup cgroup rw,cpuacct,cpu",
                  "/sys/fs/cgroup/cpu/svc/cpu.rt_runtime_us": "0",
                  "/sys/fs/cgroup/cpu/svc/cpu.rt_period_us": "1000000"})
    rt = host.rt_throttling()
    assert (rt["cgroup"], rt["runtime_us"], rt["enabled"]) == ("/docker/x/svc", 0, True)
