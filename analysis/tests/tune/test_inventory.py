# SPDX-License-Identifier: GPL-2.0-only
"""tune.inventory: jtr tune show's rows from profiles written here, on a machine
of the test's own (every read of a setting answered by a stand-in, nothing of
this machine read): one row per setting with who sets it, what this machine
supports and why not, the boot options, the sections jtr does not apply; and the
dump of every value a profile can change."""
import os

import pytest

from jtrpy.tune import engine, inventory, knobs

BASE = """[main]
summary=base
[variables]
x=1
[sysctl]
kernel.timer_migration=0
[vm]
transparent_hugepages=never
[cpu]
force_latency=cstate.id:1|3
governor=performance
[sysfs]
{sys}/*/knob=1
"""
ISO = """[main]
summary=iso
include=jtr-base
[variables]
isolated_cores=1
[sysctl]
kernel.timer_migration=1
[scheduler]
isolated_cores=${{isolated_cores}}
default_irq_smp_affinity=ignore
sched_min_granularity_ns=10000000
[jtr_cpuset]
cpus=${{isolated_cores}}
enabled=true
[bootloader]
cmdline=+isolcpus=1 nohz_full=1 quiet long_one={long}
[irqbalance]
banned_cpus=1
"""
LONG = "abcdefghijklmnopqrstuvwxyz"
FILES = {"/proc/sys/kernel/timer_migration": "1",
         engine.THP + "enabled": "always [madvise] never",
         "/proc/irq/default_smp_affinity": "f"}
TASKS = {1: ("systemd", 0, 5), 20: ("kworker/1:0", knobs.PF_NO_SETAFFINITY, 9),
         21: ("bash", 0, 11)}


@pytest.fixture
def machine(tmp_path, monkeypatch):
    """Two profiles (jtr-base, jtr-iso including it) and a machine of stand-ins."""
    sys_dir = tmp_path / "sys"
    for d in ("b", "a"):
        (sys_dir / d).mkdir(parents=True)
        (sys_dir / d / "knob").write_text("0\n")
    prof = tmp_path / "profiles"
    for name, text in (("jtr-base", BASE), ("jtr-iso", ISO)):
        (prof / name).mkdir(parents=True)
        (prof / name / "tuned.conf").write_text(text.format(sys=sys_dir, long=LONG))
    monkeypatch.setenv("JTR_PROFILE_DIRS", str(prof))
    monkeypatch.setenv("JTR_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("JTR_GRUB_DIR", str(tmp_path / "grub"))
    files = dict(FILES, **{str(sys_dir / d / "knob"): "0" for d in "ab"})

    def read_file(path):
        if path not in files:
            raise knobs.KnobError("%s: does not exist on this kernel" % path)
        return files[path]
    monkeypatch.setattr(knobs, "read_file", read_file)
    monkeypatch.setattr(knobs, "DMA_LATENCY", str(tmp_path / "cpu_dma_latency"))
    monkeypatch.setattr(knobs, "read_dma_latency", lambda: 2000000000)
    monkeypatch.setattr(engine, "has_cpufreq", lambda: False)
    monkeypatch.setattr(engine, "has_nohz_full", lambda: False)
    monkeypatch.setattr(engine, "can_change_cmdline", lambda: (True, "grub drop-in"))
    monkeypatch.setattr(engine, "BOOT_ONLY_IN_EFFECT",
                        {"isolcpus": str(tmp_path / "isolated")})
    (tmp_path / "isolated").write_text("")
    files[str(tmp_path / "isolated")] = ""
    monkeypatch.setattr(knobs, "boot_param_now", lambda p: {"quiet": "(set)"}.get(p, "absent"))
    monkeypatch.setattr(knobs, "irq_numbers", lambda: [1, 9, 24])
    monkeypatch.setattr(knobs, "read_value", lambda e: {"irq:24": "1"}.get(e["key"], "0-3"))
    monkeypatch.setattr(knobs, "all_tids", lambda: sorted(TASKS))
    monkeypatch.setattr(knobs, "task_stat", lambda t: TASKS.get(t))
    monkeypatch.setattr(knobs, "cpuset_root", lambda: (2, str(tmp_path / "cgroup")))
    (tmp_path / "cgroup" / "jtr-isolated").mkdir(parents=True)
    (tmp_path / "cgroup" / "other").mkdir()
    return tmp_path


def test_one_row_per_setting(machine):
    rows = {r["key"]: r for r in inventory.knob_rows()}
    sysd = machine / "sys"
    assert list(rows) == [
        "file:/proc/sys/kernel/timer_migration", "file:" + engine.THP + "enabled",
        "dma_latency", "governor", "file:%s/a/knob" % sysd, "file:%s/b/knob" % sysd,
        "irqs", "file:/proc/irq/default_smp_affinity", "tasks",
        "sched:sched_min_granularity_ns", "cpuset", "boot:isolcpus", "boot:nohz_full",
        "boot:quiet", "boot:long_one", "irqbalance:banned_cpus"]
    tm = rows["file:/proc/sys/kernel/timer_migration"]
    assert (tm["label"], tm["now"], tm["when"], tm["supported"], tm["set_by"]) == (
        "kernel.timer_migration", "1", "runtime", True, ["base=0", "iso=1"])
    assert rows["file:" + engine.THP + "enabled"]["now"] == "madvise"
    dma = rows["dma_latency"]
    assert (dma["now"], dma["supported"], dma["set_by"]) == ("-", False,
                                                             ["base=cstate.id:1|3"])
    assert dma["why"] == "%s missing" % knobs.DMA_LATENCY
    assert rows["governor"]["why"].startswith("no cpufreq (") and rows["governor"]["now"] == "-"
    assert rows["irqs"]["now"] == "3 IRQs: 0-3 x2, 1 x1"
    assert rows["tasks"]["now"] == "3 threads, 1 pinned by the kernel"
    assert rows["sched:sched_min_granularity_ns"]["label"] == \
        "[scheduler] sched_min_granularity_ns"
    cs = rows["cpuset"]
    assert (cs["now"], cs["supported"]) == ("present", True)
    assert cs["why"] == "cgroup v2 at %s (isolated partition)" % (machine / "cgroup")
    assert rows["boot:isolcpus"]["now"] == "absent (in effect: none)"
    assert rows["boot:isolcpus"]["set_by"] == ["iso=1"] and rows["boot:isolcpus"]["when"] == \
        "boot"
    assert (rows["boot:nohz_full"]["supported"], rows["boot:nohz_full"]["why"]) == (
        False, "kernel built without CONFIG_NO_HZ_FULL")
    assert rows["boot:quiet"]["now"] == "(set)" and rows["boot:quiet"]["set_by"] == ["iso=(set)"]
    assert rows["boot:long_one"]["set_by"] == ["iso=%s..." % LONG[:21]]   # at most 24
    ib = rows["irqbalance:banned_cpus"]
    assert (ib["label"], ib["supported"]) == ("[irqbalance] banned_cpus", False)
    assert ib["why"] == "not implemented by jtr's applier (--via-tuned)"


def test_what_this_machine_cannot_do(machine, monkeypatch):
    (machine / "cpu_dma_latency").write_text("")
    monkeypatch.setattr(engine, "can_change_cmdline", lambda: (False, "no grub"))
    monkeypatch.setattr(knobs, "cpuset_root", lambda: (None, "no cpuset controller"))
    monkeypatch.setattr(engine, "has_cpufreq", lambda: True)
    read = knobs.read_file

    def read_file(path):
        if path.startswith("/proc/sys/"):
            raise knobs.KnobError("%s: permission denied" % path)
        return "performance" if "cpufreq" in path else read(path)
    monkeypatch.setattr(knobs, "read_file", read_file)
    rows = {r["key"]: r for r in inventory.knob_rows()}
    assert rows["dma_latency"]["now"] == "2000000000" and rows["dma_latency"]["supported"]
    assert rows["governor"]["now"] == "performance" and rows["governor"]["supported"]
    assert (rows["cpuset"]["now"], rows["cpuset"]["supported"], rows["cpuset"]["why"]) == \
        ("absent", False, "no cpuset controller")
    assert rows["boot:isolcpus"]["why"] == "no grub"
    tm = rows["file:/proc/sys/kernel/timer_migration"]
    assert (tm["now"], tm["supported"], tm["why"]) == (
        "-", False, "/proc/sys/kernel/timer_migration: permission denied")


def test_sysfs_glob_that_matches_nothing(machine):
    conf = machine / "profiles" / "jtr-base" / "tuned.conf"
    conf.write_text(conf.read_text().replace("/*/knob=1", "/*/nothing=1"))
    rows = {r["key"]: r for r in inventory.knob_rows()}
    r = rows["file:%s/*/nothing" % (machine / "sys")]
    assert (r["supported"], r["why"]) == (False, "no such file on this kernel")


def test_dump_holds_every_value_a_profile_changes(machine, monkeypatch):
    aff = {1: {0, 1, 2, 3}, 20: {1}}

    def affinity(t):
        if t not in aff:
            raise ProcessLookupError(t)
        return aff[t]
    monkeypatch.setattr(inventory.os, "sched_getaffinity", affinity)
    me = os.getpid()                    # this process's own threads are not the machine's
    monkeypatch.setattr(knobs, "all_tids", lambda: sorted(TASKS) + [me])
    monkeypatch.setattr(knobs, "task_stat", lambda t: TASKS.get(t) or ("pytest", 0, 1))
    aff[me] = {0}
    d = inventory.dump()
    assert d["file:/proc/sys/kernel/timer_migration"] == "1"
    assert d["file:%s/a/knob" % (machine / "sys")] == "0"
    assert (d["dma_latency"], d["default_irq"]) == (None, "f")
    assert {k: v for k, v in d.items() if k.startswith("irq:")} == {
        "irq:1": "0-3", "irq:9": "0-3", "irq:24": "1"}
    # tasks by tid, starttime and comm; a task gone meanwhile is left out, and this one
    assert {k: v for k, v in d.items() if k.startswith("task:")} == {
        "task:1:5:systemd": "0-3", "task:20:9:kworker/1:0": "1"}
    assert d["cpusets"] == ["jtr-isolated", "other"]
    assert d["active_profile"] is False and d["grub_dropin"] is False
    os.makedirs(machine / "state")
    (machine / "state" / "active-profile").write_text("jtr-iso\n")
    os.makedirs(machine / "grub")
    (machine / "grub" / "99-jtr.cfg").write_text("")
    d = inventory.dump()
    assert d["active_profile"] is True and d["grub_dropin"] is True


def test_a_boot_setting_in_effect_not_readable_is_said(machine, monkeypatch):
    """isolcpus' in-effect file (/sys/devices/system/cpu/isolated) that cannot be
    read: the row says so; jtr tune show does not stop."""
    read = knobs.read_file

    def read_file(path):
        if path == str(machine / "isolated"):
            raise knobs.KnobError("%s: permission denied" % path)
        return read(path)
    monkeypatch.setattr(knobs, "read_file", read_file)
    rows = {r["key"]: r for r in inventory.knob_rows()}
    assert rows["boot:isolcpus"]["now"] == "absent (in effect: not readable: %s: permission " \
        "denied)" % (machine / "isolated")
