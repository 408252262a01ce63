# SPDX-License-Identifier: GPL-2.0-only
"""tune.engine on files of the test's own (no kernel setting is touched): the
snapshot written ahead of every change, a stopped apply, a revert that restores
what the apply reached and nothing else, the snapshot's entries checked, the
state lock, what a killed writer leaves removed, and the auto-revert's lines on
the callback it is given."""
import json
import os
import subprocess
import sys
import types

import pytest

from jtrpy.errors import UsageError
from jtrpy.tune import engine as E
from jtrpy.tune import knobs as K


def quiet(line):
    """What the engine says, not looked at here."""


PKG = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("JTR_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


def plan_of(tmp_path, n=4):
    """A plan of @n file entries on files of the test, each 'old' -> 'new'."""
    plan = E.Plan(types.SimpleNamespace(name="t"), [])
    for i in range(n):
        f = tmp_path / ("knob%d" % i)
        f.write_text("old")
        e = K.file_entry("knob %d" % i, str(f), "new", "text")
        e["before"] = K.read_value(e)
        plan.add(e)
    return plan


def test_each_entry_is_pending_on_disk_before_it_changes(state, tmp_path, monkeypatch):
    plan = plan_of(tmp_path)
    seen = []
    write = K.write_value

    def watch(e, value):
        with open(E.state_path()) as f:
            disk = {x["key"]: x.get("result") for x in json.load(f)["entries"]}
        seen.append(disk[e["key"]])
        assert K.read_value(e) == "old"         # not changed yet
        write(e, value)
    monkeypatch.setattr(K, "write_value", watch)
    st = E.apply(plan, quiet)
    assert seen == ["pending"] * 4
    assert st["status"] == "applied" and st["write_ahead"] is True
    assert [e["result"] for e in st["entries"]] == ["changed"] * 4
    assert not [n for n in os.listdir(state) if ".tmp-" in n]


def test_stopped_apply_is_reverted_exactly(state, tmp_path):
    plan = plan_of(tmp_path)
    calls = []
    st = E.apply(plan, quiet, stop=lambda: calls.append(1) or len(calls) > 2)
    assert st["status"] == "applying"
    assert [e.get("result") for e in st["entries"]] == ["changed", "changed", None, None]
    assert E.read_state()["entries"][1]["result"] == "pending"   # its outcome came later
    (tmp_path / "knob3").write_text("by hand")  # never reached: revert leaves it alone
    failed, gone = E.revert(E.read_state(), quiet)
    assert failed == [] and gone == 0
    st = E.read_state()
    assert st["status"] == "reverted" and st["touched"] == 2
    assert [(tmp_path / ("knob%d" % i)).read_text() for i in range(4)] == \
        ["old", "old", "old", "by hand"]


def test_snapshot_without_write_ahead_reverts_every_entry(state, tmp_path):
    E.apply(plan_of(tmp_path), quiet)
    st = E.read_state()
    del st["write_ahead"]                   # a snapshot of an earlier jtr
    for e in st["entries"]:
        del e["result"]
    E.revert(st, quiet)
    assert E.read_state()["touched"] == 4
    assert (tmp_path / "knob3").read_text() == "old"


@pytest.mark.parametrize("entry,why", [
    ({"type": "frob"}, "entry 2 (k) has the unknown type 'frob' (this jtr knows file, task, "
                       "dma_latency, cpuset, boot)"),
    ({"type": "file", "how": "text"}, "entry 2 (k) of type file has no valid 'path'"),
    ({"type": "file", "path": "rel", "how": "text"}, "a path that is not absolute"),
    ({"type": "task", "tid": "1", "starttime": 1, "comm": "x"}, "no valid 'tid'"),
    ({"type": "cpuset", "name": "../../tmp/x"}, "names the cpuset '../../tmp/x'"),
])
def test_snapshot_entries_this_jtr_cannot_restore_are_refused(state, tmp_path, entry, why):
    E.apply(plan_of(tmp_path, 1), quiet)
    st = E.read_state()
    st["entries"].append(dict(entry, key="k", before="1"))
    E.write_state(st)
    with pytest.raises(UsageError) as e:
        E.read_state()
    msg = str(e.value)
    assert msg.startswith(E.state_path() + ": corrupt snapshot: ") and why in msg, msg
    assert "nothing was changed" in msg and "\n" not in msg


def test_recover_removes_what_dead_writers_left(state):
    os.makedirs(state)
    dead = _dead_pid()
    for name in (".tune-state.json.tmp-%d" % dead, ".cpu_dma_latency.pid.tmp-%d" % dead,
                 ".tune-state.json.tmp-%d" % os.getpid(), "tune.lock"):
        (state / name).write_text("x")
    gone = E.recover()
    assert sorted(os.path.basename(p) for p in gone) == [
        ".cpu_dma_latency.pid.tmp-%d" % dead, ".tune-state.json.tmp-%d" % dead]
    assert sorted(os.listdir(state)) == [".tune-state.json.tmp-%d" % os.getpid(), "tune.lock"]


def _dead_pid():
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def test_state_lock_makes_a_second_writer_wait(state):
    code = ("import sys; sys.path.insert(0, %r); from jtrpy.tune import engine as E\n"
            "with E.StateLock(lambda l: print(l, flush=True)): print('got it', flush=True)" % PKG)
    with E.StateLock(quiet):
        p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                             env=dict(os.environ))
        first = p.stdout.readline()
        assert first == "waiting for pid %d, which is changing the tuning\n" % os.getpid()
        assert p.poll() is None
    assert p.stdout.read() == "got it\n" and p.wait() == 0


@pytest.fixture
def woken(monkeypatch):
    """The auto-revert process's wait, in-process: no sleep, no handler changed."""
    monkeypatch.setattr(E.time, "sleep", lambda s: None)
    monkeypatch.setattr(E.signal, "signal", lambda *a: None)


def test_auto_revert_says_what_it_reverts(state, tmp_path, woken):
    st = E.apply(plan_of(tmp_path, 2), quiet)
    st["confirmed"] = False
    E.write_state(st)
    (tmp_path / "knob0").unlink()
    (tmp_path / "knob0").mkdir()            # a setting it cannot restore
    said = []
    assert E.autorevert(5, "not its apply", said.append) == 0 and said == []
    assert E.autorevert(5, st["applied_at"], said.append) == 0
    lines = said
    assert lines[0] == "auto-revert: t not confirmed in 5 s: reverting"
    assert lines[1].startswith("  not restored: knob 0: ") and len(lines) == 2
    assert E.read_state()["status"] == "reverted with errors"
    assert (tmp_path / "knob1").read_text() == "old"
    (state / "tune-state.json").write_text("{")
    said = []
    assert E.autorevert(5, st["applied_at"], said.append) == 1
    assert len(said) == 1 and said[0].startswith("auto-revert: %s: " % E.state_path())


def boot_plan(tmp_path, monkeypatch, words=("isolcpus=1", "skew_tick=1")):
    """A plan of two file entries and boot words, its drop-in into a folder of the
    test (JTR_GRUB_DIR)."""
    monkeypatch.setenv("JTR_GRUB_DIR", str(tmp_path / "grub.d"))
    (tmp_path / "grub.d").mkdir()
    plan = plan_of(tmp_path, 2)
    plan.boot = [{"param": w.partition("=")[0], "value": w.partition("=")[2], "word": w,
                  "now": "absent"} for w in words]
    return plan


def test_a_boot_apply_keeps_a_copy_of_its_snapshot_that_outlives_a_reboot(
        state, tmp_path, monkeypatch):
    """apply --boot: the snapshot is copied beside the state folder (it is in /run,
    gone after the reboot the boot options need); read from the copy when the
    state folder's is gone; the copy is removed once reverted."""
    st = E.apply(boot_plan(tmp_path, monkeypatch), quiet, boot=True)
    copy = state / "boot" / "tune-state.json"
    assert json.loads(copy.read_text())["status"] == "applied"
    assert st["boot_id"] == E.boot_id() and E.wrote_boot(st)
    os.unlink(state / "tune-state.json")             # the reboot took /run
    assert E.state_source() == str(copy) and E.read_state()["profile"] == "t"
    E.revert(E.read_state(), quiet)
    assert not copy.exists()
    assert json.loads((state / "tune-state.json").read_text())["status"] == "reverted"
    # an apply without --boot keeps none
    (tmp_path / "x").mkdir()
    E.apply(plan_of(tmp_path / "x"), quiet)
    assert not copy.exists()


def test_after_a_reboot_verify_checks_the_boot_options_and_revert_only_them(
        state, tmp_path, monkeypatch):
    """Booted since the apply (another boot id): verify checks each boot word
    on the command line and says the runtime settings went with the reboot
    (their entries name the last boot's objects); revert takes out the drop-in
    and writes no runtime value over this boot's."""
    st = E.apply(boot_plan(tmp_path, monkeypatch), quiet, boot=True)
    assert E.boot_state(st) == ([], ["isolcpus=1", "skew_tick=1"])   # pending
    monkeypatch.setattr(E, "boot_id", lambda: "another-boot")
    monkeypatch.setattr(K, "cmdline", lambda: ["quiet", "skew_tick=1", "isolcpus=2"])
    monkeypatch.setattr(E, "SYS_CPU", str(tmp_path) + "/")
    (tmp_path / "isolated").write_text("2\n")
    drift = E.verify(E.read_state())
    assert drift == [("boot: isolcpus=1", "on the kernel command line", "isolcpus=2"),
                     ("runtime settings", "as applied (2)", "gone with the reboot")]
    for i in range(2):                                  # the reboot put them back
        (tmp_path / ("knob%d" % i)).write_text("this boot's")
    failed, _ = E.revert(E.read_state(), quiet)
    assert failed == [] and not (tmp_path / "grub.d" / "99-jtr.cfg").exists()
    assert all((tmp_path / ("knob%d" % i)).read_text() == "this boot's" for i in range(2))


def test_boot_effects_where_the_kernel_shows_each_word(tmp_path, monkeypatch):
    """A word on the command line is checked where the kernel shows it: isolcpus
    and nohz_full in sysfs, irqaffinity as the default IRQ mask, rcu_nocbs by its
    kthreads; other words by their presence alone."""
    monkeypatch.setattr(E, "SYS_CPU", str(tmp_path) + "/")
    monkeypatch.setattr(E, "DEFAULT_IRQ_AFFINITY", str(tmp_path / "default_smp_affinity"))
    monkeypatch.setattr(K, "irq_numbers", lambda: [])
    (tmp_path / "isolated").write_text("1-2\n")
    (tmp_path / "nohz_full").write_text("(null)\n")
    (tmp_path / "default_smp_affinity").write_text("00000001\n")
    monkeypatch.setattr(E, "_threads_named", lambda names: {"rcuop/1"} & names)
    line = ["isolcpus=domain,managed_irq,1-2", "nohz_full=1-2", "irqaffinity=0",
            "rcu_nocbs=1-2", "skew_tick=1"]
    assert E.boot_effects("isolcpus=domain,managed_irq,1-2", line) == []
    assert E.boot_effects("irqaffinity=0", line) == []
    assert E.boot_effects("skew_tick=1", line) == []
    assert E.boot_effects("nohz_full=1-2", line) == [
        ("boot: nohz_full=1-2 in effect", "nohz_full 1-2", "none")]
    assert E.boot_effects("rcu_nocbs=1-2", line) == [
        ("boot: rcu_nocbs=1-2 in effect", "an rcuop/N kthread for each of CPUs 1-2",
         "none for 2")]
    assert E.boot_effects("nosoftlockup", line) == [
        ("boot: nosoftlockup", "on the kernel command line", "absent")]
    (tmp_path / "default_smp_affinity").write_text("3\n")
    assert E.boot_effects("irqaffinity=0", line) == [
        ("boot: irqaffinity=0 in effect", "default IRQ affinity 0", "0-1")]


def test_managed_irqs_on_an_isolated_cpu_are_drift(tmp_path, monkeypatch):
    """isolcpus=managed_irq: an IRQ effective on an isolated CPU while its affinity
    holds a housekeeping one is listed (one line for the word); one that may only
    run there is not."""
    monkeypatch.setattr(E, "SYS_CPU", str(tmp_path) + "/")
    (tmp_path / "isolated").write_text("1\n")
    files = {"/proc/irq/24/effective_affinity_list": "1", "/proc/irq/24/smp_affinity_list": "0-1",
             "/proc/irq/25/effective_affinity_list": "1", "/proc/irq/25/smp_affinity_list": "1",
             "/proc/irq/26/effective_affinity_list": "0", "/proc/irq/26/smp_affinity_list": "0-1"}
    monkeypatch.setattr(K, "irq_numbers", lambda: [24, 25, 26])
    monkeypatch.setattr(K, "read_file", lambda p: files[p])
    monkeypatch.setattr(K, "irq_name", lambda n: "virtio0-req.%d" % n)
    word = "isolcpus=managed_irq,domain,1"
    assert E.boot_effects(word, [word]) == [
        ("boot: isolcpus=managed_irq,domain,1 managed IRQs", "off CPUs 1",
         "IRQ 24 virtio0-req.24 on 1")]
    assert E.boot_effects("isolcpus=domain,1", ["isolcpus=domain,1"]) == []


def test_a_kernel_thread_kept_on_the_housekeeping_cpus_is_said_so(tmp_path, monkeypatch):
    """A kernel thread's old affinity 0-1 reads back 0 in a boot with nohz_full=1:
    the revert says the kernel keeps it there; a user task's or another shortfall
    gets no such reason."""
    monkeypatch.setattr(E, "SYS_CPU", str(tmp_path) + "/")
    monkeypatch.setattr(E, "online_cpus", lambda: [0, 1])
    (tmp_path / "nohz_full").write_text("1\n")
    (tmp_path / "isolated").write_text("\n")
    e = {"type": "task", "tid": 48, "before": "0-1"}
    monkeypatch.setattr(K, "task_stat", lambda tid: ("kswapd0", K.PF_KTHREAD, 1))
    assert E.kernel_kept(e, "0") == (": the kernel keeps its kernel threads on the "
                                     "housekeeping CPUs (0; nohz_full and isolcpus take "
                                     "the others)")
    assert E.kernel_kept(dict(e, before="1"), "0") == ""
    monkeypatch.setattr(K, "task_stat", lambda tid: ("bash", 0, 1))
    assert E.kernel_kept(e, "0") == ""
