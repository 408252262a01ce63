# SPDX-License-Identifier: GPL-2.0-only
"""tune.checks: every value a profile gives jtr's applier, checked at load."""
import os

import pytest

from jtrpy.errors import UsageError
from jtrpy.system.cpus import online_cpus
from jtrpy.tune.checks import check_profile, cpulist_problem
from jtrpy.tune.profile import Profile

OFFLINE = max(online_cpus()) + 1


def load(tmp_path, monkeypatch, body, name="p"):
    monkeypatch.setenv("JTR_PROFILE_DIRS", str(tmp_path))
    d = tmp_path / name
    d.mkdir()
    (d / "tuned.conf").write_text("[main]\nsummary=x\n" + body)
    return Profile(name)


@pytest.mark.parametrize("body,msg", [
    ("[jtr_cpuset]\ncpus=0\nname=../x", "p: [jtr_cpuset] name=../x: a cpuset name is one "
                                        "folder name under the cgroup mount"),
    ("[jtr_cpuset]\ncpus=0\nname=a/b", "name=a/b: a cpuset name"),
    ("[jtr_cpuset]\ncpus=0\nname=.", "name=.: a cpuset name"),
    ("[jtr_cpuset]\nname=x", "p: [jtr_cpuset] has no cpus="),
    ("[jtr_cpuset]\ncpus=0\nfrob=1", "[jtr_cpuset] frob=1: not an option of [jtr_cpuset]"),
    ("[scheduler]\nisolated_cores=a-b", "[scheduler] isolated_cores=a-b: 'a-b' is not a CPU"),
    ("[scheduler]\nisolated_cores=%d" % OFFLINE, "CPU %d is not online" % OFFLINE),
    ("[scheduler]\nisolated_cores=0\ndefault_irq_smp_affinity=zz",
     "default_irq_smp_affinity=zz: 'zz' is not calc, ignore or a CPU list"),
    ("[cpu]\nforce_latency=1.5", "[cpu] force_latency=1.5: not a latency in us"),
    ("[cpu]\ngovernor=performance|powersave", "not a cpufreq governor's name"),
    ("[vm]\ntransparent_hugepage.defrag=often", "'often' is not a THP mode; write always, "
                                                "defer, defer+madvise, madvise or never"),
    ("[sysctl]\nvm/../x=1", "[sysctl] vm/../x=1: not a sysctl name"),
    ("[sysctl]\nvm.swappiness=  ", "vm.swappiness=: empty"),
    ("[sysctl]\nvm.swappiness=1\x070",
     "vm.swappiness=1\\x070: a control character ('\\x07') in it; write the value in plain "
     "text"),
    ("[sysfs]\n/sys/./x=1", "not a path under /sys"),
    ("[sysfs]\n/proc/sys/vm/swappiness=1", "not a path under /sys"),
    ("[sysfs]\n/sys/a/smp_affinity=1-2", "not a CPU mask"),
    ("[bootloader]\ncmdline=a=$(reboot)", "cannot go on the kernel command line"),
    ("[bootloader]\ncmdline=nohz_full=x", "nohz_full=x: 'x' is not a CPU list"),
])
def test_bad_values_are_refused_with_their_place(tmp_path, monkeypatch, body, msg):
    p = load(tmp_path, monkeypatch, body)
    with pytest.raises(UsageError) as e:
        check_profile(p, force=True)
    assert msg in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("body", [
    "[cpu]\nforce_latency=cstate.id_no_zero:1|3\nenergy_perf_bias=performance",
    "[vm]\ntransparent_hugepages=never\n[sysctl]\nkernel.watchdog_cpumask=0",
    "[sysfs]\n/sys/devices/virtual/workqueue/*/cpumask=00000001",
    "[jtr_cpuset]\nenabled=false\ncpus=0\nname=jtr-isolated",
    "[bootloader]\ncmdline=+isolcpus=managed_irq,domain,0 skew_tick=1 nosoftlockup",
    "[scheduler]\nisolated_cores=0\ndefault_irq_smp_affinity=ignore\nsched_min=1",
    "[somethingelse]\nanything=$%^",
])
def test_good_values_pass(tmp_path, monkeypatch, body):
    check_profile(load(tmp_path, monkeypatch, body), force=True)


def test_isolated_cores_are_returned_and_checked_like_cpus(tmp_path, monkeypatch):
    p = load(tmp_path, monkeypatch, "[scheduler]\nisolated_cores=0\n")
    assert check_profile(p, force=True) == [0]
    assert check_profile(load(tmp_path, monkeypatch, "[sysctl]\nvm.swappiness=1\n",
                              "q")) is None
    every = ",".join(map(str, online_cpus()))
    assert "would isolate every CPU" in cpulist_problem(every, isolating=True)
    assert cpulist_problem(every, isolating=True, force=True) is None
    assert cpulist_problem(every) is None
    mine = ",".join(map(str, sorted(os.sched_getaffinity(0))))
    if len(online_cpus()) > len(os.sched_getaffinity(0)):
        assert "the CPU jtr runs on" in cpulist_problem(mine, isolating=True)
