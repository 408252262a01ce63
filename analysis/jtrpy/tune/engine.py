# SPDX-License-Identifier: GPL-2.0-only
"""engine - plan, apply, verify and revert a profile, with a snapshot first.

apply: check what the machine can do, turn the profile into entries (knobs.py),
write every entry's current value into the snapshot (state file, atomically,
before the first change), then change them one by one, recording what could not
be changed and why. revert: put every entry back to the value in the snapshot,
whatever state the machine is in (a half-done apply killed with SIGKILL, an
earlier revert, values changed by hand since); so it is idempotent.
"""
import datetime
import fcntl
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

from ..errors import JtrError, UsageError
from ..system import signals
from ..system.cpus import cpulist_of, online_cpus, read_cpulist
from ..system.files import remove_stale_tmp, write_atomic
from ..system.paths import (
    TUNED_CONF_DIR,
    active_profile_path,
    boot_state_dir,
    profile_dirs,
    state_dir,
    tuned_layout,
)
from ..values import format_cpulist
from . import knobs as K
from .checks import check_profile, cpulist_problem
from .profile import Profile, cpus_to_hexmask, jtr_profiles, read_variables_file

STATE_FORMAT = "jtr-tune-state/1"
NO_HZ_FULL = "/sys/devices/system/cpu/nohz_full"
CPUFREQ = "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor"
THP = "/sys/kernel/mm/transparent_hugepage/"
BOOT_ONLY_IN_EFFECT = {"isolcpus": "/sys/devices/system/cpu/isolated",
                       "nohz_full": NO_HZ_FULL}
RT_WARNING = ("RT throttling is off: a SCHED_FIFO task that never sleeps now owns its CPU; "
              "run FIFO busy loops only on the isolated CPUs, or kernel threads there starve")


def now_iso():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")


def state_path():
    return os.path.join(state_dir(), "tune-state.json")


def boot_state_path():
    """The snapshot's copy that survives a reboot (apply --boot)."""
    return os.path.join(boot_state_dir(), "tune-state.json")


def state_source():
    """The snapshot's file: the state folder's, or, when that went with a reboot,
    the copy kept for the boot options an apply wrote."""
    p = state_path()
    return boot_state_path() if not os.path.exists(p) and os.path.exists(
        boot_state_path()) else p


def boot_id():
    """This boot's id (/proc/sys/kernel/random/boot_id), or None."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip() or None
    except OSError:
        return None


def wrote_boot(st):
    """Did the apply of snapshot @st write boot options (a grub drop-in)?"""
    return any(e.get("key", "").startswith("grub:") for e in st.get("entries") or ())


def active_path():
    return active_profile_path()


def grub_dir():
    return os.environ.get("JTR_GRUB_DIR", "/etc/default/grub.d")


# ---------------------------------------------------------------- capabilities

def can_change_cmdline():
    """(True, how) when a grub drop-in would change the next boot, else (False, why)."""
    if os.environ.get("JTR_GRUB_DIR"):
        return True, "grub drop-in in %s (JTR_GRUB_DIR)" % grub_dir()
    if os.path.exists("/etc/default/grub"):
        return True, "grub: a drop-in in %s, then update-grub" % grub_dir()
    return False, ("this machine does not boot through grub (no /etc/default/grub): the "
                   "command line comes from whatever starts the kernel (here: %s)"
                   % ("a VM monitor" if _virtual() else "the boot loader"))


def _virtual():
    try:
        with open("/proc/cpuinfo") as f:
            return " hypervisor" in f.read()
    except OSError:
        return False


def has_nohz_full():
    return os.path.exists(NO_HZ_FULL)


def has_cpufreq():
    return os.path.exists(CPUFREQ % 0)


# ---------------------------------------------------------------- planning

class Plan:
    """What applying a profile would do: .entries (runtime changes), .boot
    (kernel parameters), .skipped [(what, why)], .pinned tasks, .warnings."""

    def __init__(self, profile, isolated):
        self.profile, self.isolated = profile, isolated
        self.entries, self.boot, self.skipped, self.pinned, self.warnings = [], [], [], [], []
        self._keys = set()

    def add(self, e):
        if e["key"] in self._keys:         # two paths to one file: one entry
            self.entries = [x for x in self.entries if x["key"] != e["key"]]
        self._keys.add(e["key"])
        self.entries.append(e)

    def skip(self, what, why):
        self.skipped.append((what, why))

    @staticmethod
    def already(e):
        """Does entry @e hold its target already (nothing to write)? A PM QoS
        request is always made: the value holds only while jtr keeps it."""
        return K.matches(e, e["before"], e["target"]) and e["type"] != "dma_latency"


def make_plan(profile, isolated):
    """The plan for @profile (a Profile, variables expanded) on this machine."""
    plan = Plan(profile, isolated)
    for sec, opts in profile.units.items():
        handler = SECTIONS.get(sec)
        if handler is None:
            for k in opts:
                plan.skip("[%s] %s" % (sec, k), "jtr's applier has no [%s] plugin; "
                          "--via-tuned applies it with tuned" % sec)
            continue
        handler(plan, {k: v for k, v in opts.items()
                       if k not in ("enabled", "type", "priority")} if sec.startswith("jtr_")
                else opts)
    keep = []
    for e in plan.entries:
        e["before"] = K.read_value(e)
        if e["before"] is None and e["type"] == "file":
            plan.skip(e["label"], "%s does not exist on this kernel" % e["path"])
        elif e["type"] == "cpuset" and e["before"] != "absent":
            plan.skip(e["label"], "%s exists already: jtr removes its partition on revert, so "
                      "it does not take over one it did not create; remove it (rmdir) or "
                      "choose another [jtr_cpuset] name" % K.cpuset_dir(e))
        else:
            keep.append(e)
    plan.entries = keep
    return plan


def _cpu(plan, opts):
    for k, v in opts.items():
        if k == "force_latency":
            try:
                us = int(v)
            except ValueError:
                plan.skip("[cpu] force_latency=%s" % v, "jtr applies a number of us; "
                          "cstate.* forms need --via-tuned")
                continue
            if not os.path.exists(K.DMA_LATENCY):
                plan.skip("cpu_dma_latency", "%s is missing (kernel without PM QoS)"
                          % K.DMA_LATENCY)
                continue
            plan.add({"type": "dma_latency", "key": "dma_latency",
                      "label": "cpu_dma_latency (us, held open)", "target": str(us),
                      "how": "text", "when": "runtime"})
        elif k == "governor":
            if not has_cpufreq():
                plan.skip("cpufreq governor=%s" % v, "no cpufreq here (%s is missing: a "
                          "virtual machine, or no cpufreq driver)" % (CPUFREQ % 0))
                continue
            for c in online_cpus():
                plan.add(K.file_entry("cpu%d scaling_governor" % c, CPUFREQ % c, v))
        else:
            plan.skip("[cpu] %s" % k, "not implemented by jtr's applier (--via-tuned)")


def _vm(plan, opts):
    files = {"transparent_hugepages": THP + "enabled",
             "transparent_hugepage": THP + "enabled",
             "transparent_hugepage.defrag": THP + "defrag"}
    for k, v in opts.items():
        if k in files:
            plan.add(K.file_entry("THP " + os.path.basename(files[k]), files[k], v, "bracket"))
        else:
            plan.skip("[vm] %s" % k, "not implemented by jtr's applier (--via-tuned)")


def _sysctl(plan, opts):
    for k, v in opts.items():
        path = "/proc/sys/" + k.replace(".", "/")
        how = "list" if k.endswith("_cpumask") else "text"
        plan.add(K.file_entry(k, path, v, how))


def _sysfs(plan, opts):
    for pattern, v in opts.items():
        paths = sorted(glob.glob(pattern))
        if not paths:
            plan.skip(pattern, "no such file on this kernel")
        for p in paths:
            real = os.path.realpath(p)
            if not real.startswith("/sys/"):
                raise UsageError("%s: %s leads to %s, which is not under /sys; write a path "
                                 "whose files are in /sys" % (plan.profile.where("sysfs", pattern),
                                                              p, real))
            label = real if real == p else "%s (= %s)" % (real, p)
            plan.add(K.file_entry(label, p, v))


def _scheduler(plan, opts):
    iso = opts.get("isolated_cores")
    for k, v in opts.items():
        if k.startswith("group.") and v.strip():
            _group(plan, k, v)
        elif k not in ("isolated_cores", "default_irq_smp_affinity"):
            plan.skip("[scheduler] %s" % k, "not implemented by jtr's applier (--via-tuned)")
    if not iso:
        return
    cpus = set(cpulist_of(iso))
    house = [c for c in online_cpus() if c not in cpus]
    for n in K.irq_numbers():
        e = K.irq_entry(n, None)
        cur = K.read_value(e)
        if cur is None:
            continue
        left = set(cpulist_of(cur)) - cpus
        if set(cpulist_of(cur)) & cpus:
            e["target"] = format_cpulist(left or house)
            plan.add(e)
    dflt = opts.get("default_irq_smp_affinity", "calc")
    if dflt != "ignore":
        e = K.file_entry("default IRQ affinity", "/proc/irq/default_smp_affinity", None, "mask")
        if dflt == "calc":
            cur = K.norm_mask(K.read_file(e["path"]))
            e["target"] = cpus_to_hexmask((cur - cpus) or house)
        else:
            e["target"] = cpus_to_hexmask(cpulist_of(dflt))
        plan.add(e)
    entries, plan.pinned = K.task_entries(cpus, keep={os.getpid()})
    for e in entries:
        plan.add(e)


def _group(plan, key, value):
    """tuned's group.NAME=RULE_PRIO:SCHED:PRIO:AFFINITY:REGEX (checked by checks.py):
    jtr applies the affinity; a policy or priority other than '*' is tuned's."""
    _, sched, prio, aff, regex = value.split(":", 4)
    if sched != "*" or prio != "*":
        plan.skip("[scheduler] %s=%s" % (key, value), "jtr's applier sets a group's "
                  "affinity only; its policy and priority need --via-tuned")
    if aff == "*":
        return
    cpus = [c for c in online_cpus() if int(aff.replace(",", ""), 16) >> c & 1]
    entries, pinned = K.group_entries(re.compile(regex), cpus, keep={os.getpid()})
    if not entries and not pinned:
        plan.skip("[scheduler] %s" % key, "no task's command line matches %s now" % regex)
    for e in entries:
        plan.add(e)
    plan.pinned += pinned


def _cpuset(plan, opts):
    ver, root = K.cpuset_root()
    name = opts.get("name", "jtr-isolated")
    if ver is None:
        plan.skip("cpuset partition " + name, root)
        return
    plan.add(K.cpuset_entry(name, opts.get("cpus", "")))


def _bootloader(plan, opts):
    for k, v in opts.items():
        if not k.startswith("cmdline"):
            plan.skip("[bootloader] %s" % k, "not implemented by jtr's applier")
            continue
        for word in v.lstrip("+").split():
            param, _, val = word.partition("=")
            if param == "nohz_full" and not has_nohz_full():
                plan.skip("boot: " + word, "this kernel is built without CONFIG_NO_HZ_FULL "
                          "(no %s): the parameter would do nothing" % NO_HZ_FULL)
                continue
            plan.boot.append({"param": param, "value": val, "word": word,
                              "now": K.boot_param_now(param)})


SECTIONS = {"cpu": _cpu, "vm": _vm, "sysctl": _sysctl, "sysfs": _sysfs,
            "scheduler": _scheduler, "jtr_cpuset": _cpuset, "bootloader": _bootloader}


# ---------------------------------------------------------------- checks

def check_cpus(text, force=False):
    """The isolated CPU list of --cpus, checked; UsageError names what is wrong."""
    why = cpulist_problem(text, isolating=True, force=force)
    if why:
        raise UsageError("--cpus %s: %s" % (text, why))
    return cpulist_of(text)


def load_profile(name, cpus, force=False):
    """Profile @name with isolated_cores set to @cpus (when given), every value
    jtr's applier uses checked (checks.py); .isolated is the list of CPUs it
    isolates, or None."""
    variables = {"isolated_cores": format_cpulist(cpus)} if cpus else {}
    profile = Profile(name, variables)
    profile.isolated = check_profile(profile, force)
    return profile


def need_root(what):
    if os.geteuid() != 0:
        raise UsageError("jtr tune %s changes kernel settings: run it as root (sudo)" % what)


# ---------------------------------------------------------------- state

# what each entry type needs to be read, changed and restored
ENTRY_FIELDS = {"file": {"path": str, "how": str}, "task": {"tid": int, "starttime": int,
                                                           "comm": str},
                "dma_latency": {}, "cpuset": {"name": str}, "boot": {"param": str}}
HOWS = ("text", "mask", "list", "bracket")
CORRUPT_FIX = ("nothing was changed. Look at it, restore what it lists by hand, then "
               "delete it")


def read_state(required=True):
    """The snapshot, or None; UsageError when it is unreadable, corrupt, or holds an
    entry this jtr does not know (naming the file and the entry)."""
    p = state_source()
    try:
        with open(p, encoding="utf-8") as f:
            st = json.load(f)
    except FileNotFoundError:
        if required:
            raise UsageError("no snapshot at %s: nothing was applied, so there is nothing to "
                             "revert" % p)
        return None
    except (OSError, ValueError) as e:
        raise UsageError("%s: corrupt snapshot (%s); %s" % (p, e, CORRUPT_FIX))
    if (not isinstance(st, dict) or st.get("format") != STATE_FORMAT
            or not isinstance(st.get("entries"), list)
            or not isinstance(st.get("profile"), str) or not isinstance(st.get("status"), str)
            or not all(isinstance(e, dict) and isinstance(e.get("type"), str)
                       and isinstance(e.get("key"), str) and "before" in e
                       for e in st["entries"])):
        raise UsageError("%s: corrupt snapshot (not %s); %s" % (p, STATE_FORMAT, CORRUPT_FIX))
    for i, e in enumerate(st["entries"]):
        why = entry_problem(e)
        if why:
            raise UsageError("%s: corrupt snapshot: entry %d (%s) %s; %s"
                             % (p, i + 1, e["key"], why, CORRUPT_FIX))
    return st


def entry_problem(e):
    """Why snapshot entry @e cannot be read or restored by this jtr, or None."""
    fields = ENTRY_FIELDS.get(e["type"])
    if fields is None:
        return "has the unknown type %r (this jtr knows %s)" % (e["type"],
                                                                ", ".join(ENTRY_FIELDS))
    for k, t in fields.items():
        if not isinstance(e.get(k), t) or isinstance(e.get(k), bool):
            return "of type %s has no valid %r" % (e["type"], k)
    if e["type"] == "file" and (not os.path.isabs(e["path"]) or e["how"] not in HOWS):
        return "has a path that is not absolute or an unknown 'how'"
    if e["type"] == "cpuset" and K.cpuset_name_problem(e["name"]):
        return "names the cpuset %r: %s" % (e["name"], K.cpuset_name_problem(e["name"]))
    return None


def write_state(st):
    os.makedirs(state_dir(), exist_ok=True)
    text = json.dumps(st, indent=1) + "\n"
    write_atomic(state_path(), text)
    # the boot options stay after a reboot, the state folder does not: a copy
    # where revert finds it then (gone once reverted)
    if wrote_boot(st) and st.get("status") in ("applying", "applied"):
        os.makedirs(boot_state_dir(), exist_ok=True)
        write_atomic(boot_state_path(), text)
    elif os.path.exists(boot_state_path()):
        os.unlink(boot_state_path())


def active_state():
    """The snapshot of a profile that is applied (not reverted), or None."""
    st = read_state(required=False)
    return st if st and st.get("status") in ("applying", "applied") else None


class StateLock:
    """`with StateLock():` one jtr at a time changes the tuning (apply, revert,
    confirm; jtr ab's apply and revert). flock on a file in the state folder: a
    killed holder releases it; a second one waits, saying for whom."""

    def __init__(self, say):
        self.say, self.fd = say, None     # @say(line): the line saying it waits

    def __enter__(self):
        os.makedirs(state_dir(), exist_ok=True)
        self.fd = os.open(os.path.join(state_dir(), "tune.lock"), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            who = os.pread(self.fd, 32, 0).decode(errors="replace").strip() or "?"
            self.say("waiting for pid %s, which is changing the tuning" % who)
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, b"%d\n" % os.getpid(), 0)
        return self

    def __exit__(self, *exc):
        os.close(self.fd)           # releases the lock
        self.fd = None
        return False


def recover():
    """Before changing anything: remove what killed jtr processes left in the state
    folder (temporary files of atomic writes, .NAME.tmp-PID), and stop a recorded
    cpu_dma_latency holder no applied profile owns. The paths removed."""
    gone = remove_stale_tmp(state_dir())
    if active_state() is None:
        K.stop_dma_holder()
    return gone


# ---------------------------------------------------------------- apply

def apply(plan, say, boot=False, auto_revert_s=None, via_tuned=False, stop=None):
    """Snapshot, then apply; returns the state written.

    Write-ahead: the snapshot holds every entry's value before the first change,
    and before each change it is written again (atomically) with that entry
    marked "pending" and the one before with its outcome, so a revert restores
    exactly what the apply reached, whenever it was killed. @stop: a function
    that is true once a stop was requested; the apply then ends before the next
    entry, with the status "applying" (the caller reverts). @say(line): what it
    says it does."""
    if active_state():
        st = active_state()
        raise UsageError("profile %s is applied (since %s); run 'jtr tune revert' first"
                         % (st["profile"], st["applied_at"]))
    entries = [dict(e) for e in plan.entries]
    st = {"format": STATE_FORMAT, "profile": plan.profile.name,
          "isolated_cpus": format_cpulist(plan.isolated), "applied_at": now_iso(),
          "pid": os.getpid(), "status": "applying", "write_ahead": True, "boot_id": boot_id(),
          "confirmed": auto_revert_s is None, "via_tuned": None,
          "boot": [b["word"] for b in plan.boot], "entries": entries}
    if boot and plan.boot:
        ok, why = can_change_cmdline()
        if not ok:
            raise UsageError("--boot: %s; put the fragment on the kernel command line "
                             "yourself" % why)
        dropin = {"type": "file", "key": "grub:" + grub_dir(), "how": "text",
                  "label": "grub drop-in", "path": os.path.join(grub_dir(), "99-jtr.cfg"),
                  "when": "boot", "before": None,
                  "target": 'GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT %s"\n'
                            % " ".join(st["boot"])}
        entries.append(dropin)
    if via_tuned:
        st["via_tuned"] = tuned_prepare(plan, st)
    write_state(st)                         # the snapshot, before any change
    if plan.isolated:
        house = set(online_cpus()) - set(plan.isolated)
        os.sched_setaffinity(0, house or os.sched_getaffinity(0))
    if via_tuned and not (stop and stop()):
        by_tuned = [e for e in entries if not (e["type"] == "cpuset"
                                               or e["key"].startswith("grub:"))]
        for e in by_tuned:
            e["result"] = "pending"
        write_state(st)                     # tuned may change any of them from here
        tuned_apply(st, say)                # the files it reads get their own result
        for e in by_tuned:
            if e["result"] == "pending":
                e["result"] = "by tuned"
    step_s = step_delay()
    for e in entries:
        if stop and stop():
            return st
        if "result" in e:
            continue
        if step_s:
            time.sleep(step_s)
        e["result"] = "pending"
        write_state(st)                     # ahead of the change (and the last outcome)
        e["result"] = _apply_one(e)
    if any(e["key"].startswith("grub:") for e in entries):
        st["update_grub"] = run_update_grub()
    st["status"] = "applied"
    write_state(st)
    write_atomic(active_path(), plan.profile.name + "\n")
    if auto_revert_s:
        st["auto_revert_pid"] = start_auto_revert(auto_revert_s, st["applied_at"])
        write_state(st)
    return st


def step_delay():
    """Seconds to wait before each entry of an apply or revert: the tests' way to
    kill or signal one half-way ($JTR_TUNE_STEP_DELAY; 0 otherwise)."""
    try:
        return max(0.0, float(os.environ.get("JTR_TUNE_STEP_DELAY", "0") or 0))
    except ValueError:
        return 0.0


def _apply_one(e):
    try:
        if e["type"] == "file" and e["before"] is None:      # a file jtr creates
            os.makedirs(os.path.dirname(e["path"]), exist_ok=True)
            write_atomic(e["path"], e["target"])
            return "changed"
        if Plan.already(e):
            return "unchanged"
        if e["type"] == "task" and K.read_value(e) is None:
            return "gone"               # exited (khugepaged does when THP goes to never)
        K.write_value(e, e["target"])
        now = K.read_value(e)
        if not K.matches(e, now, e["target"]):
            return "failed: set to %s, reads back %s" % (e["target"], now)
        return "changed"
    except K.KnobError as ex:
        return "failed: %s" % ex
    except OSError as ex:
        return "failed: %s" % ex


# ---------------------------------------------------------------- revert

def revert(st, say):
    """Restore the entries of snapshot @st that the apply reached (all of them in a
    snapshot written before write-ahead), newest first; returns ([(label, why)]
    not restored, tasks gone since). st["touched"] is how many it looked at.
    @say(line): what it says it does."""
    failed, gone, touched = [], 0, 0
    # booted since the apply: its runtime settings went with that boot (writing
    # their old values now would change this boot's own); its boot options stay
    rebooted = booted_since(st)
    st["went_with_reboot"] = 0
    step_s = step_delay()
    if st.get("auto_revert_pid") and st["auto_revert_pid"] != os.getpid():
        kill_if(st["auto_revert_pid"], "_autorevert")
    if st.get("via_tuned"):
        tuned_revert(st, say)
    for e in reversed(st["entries"]):
        if st.get("write_ahead") and "result" not in e:
            continue                    # the apply never came to it: untouched
        if rebooted and e.get("when") != "boot":
            st["went_with_reboot"] += 1
            continue
        touched += 1
        if step_s:
            time.sleep(step_s)
        try:
            if e["type"] == "file" and e["before"] is None:
                if os.path.exists(e["path"]):
                    os.unlink(e["path"])
                if e.get("made_dir"):
                    try:
                        os.rmdir(os.path.dirname(e["path"]))
                    except OSError:
                        pass
                continue
            if e["type"] == "dma_latency":
                K.stop_dma_holder()     # the request ends with the holder's file
                now = K.read_value(e)
                if now != e["before"]:
                    failed.append((e["label"], "reads %s, not %s: another process holds a "
                                   "request on %s" % (now, e["before"], K.DMA_LATENCY)))
                continue
            cur = K.read_value(e)
            if cur is None and e["type"] == "task":
                gone += 1
                continue
            if K.matches(e, cur, e["before"]):
                continue
            K.write_value(e, e["before"])
            if not K.matches(e, K.read_value(e), e["before"]):
                now = K.read_value(e)
                failed.append((e["label"], "reads back %s, not %s%s" % (
                    now, e["before"], kernel_kept(e, now))))
        except (K.KnobError, OSError) as ex:
            if e["type"] == "task" and K.read_value(e) is None:
                gone += 1
                continue
            failed.append((e["label"], str(ex)))
    if any(e["key"].startswith("grub:") for e in st["entries"]):
        st["update_grub_revert"] = run_update_grub()
    try:
        os.unlink(active_path())        # first: results must not name a reverted profile
    except OSError:
        pass
    st["status"] = "reverted" if not failed else "reverted with errors"
    st["reverted_at"] = now_iso()
    st["not_restored"] = [{"label": a, "why": b} for a, b in failed]
    st["tasks_gone"] = gone
    st["touched"] = touched
    write_state(st)
    return failed, gone


# ---------------------------------------------------------------- verify

def verify(st):
    """Drift between the machine and applied snapshot @st: [(label, want, now)]; its
    boot options are checked once the machine has booted with them (boot_state)."""
    drift = boot_state(st)[0]
    if booted_since(st):
        # the entries name this boot's objects no more (tids, IRQs, cpusets)
        n = len(runtime_reached(st))
        if n:
            drift.append(("runtime settings", "as applied (%d)" % n, "gone with the reboot"))
        return drift
    for e in st["entries"]:
        if str(e.get("result", "")).startswith("failed"):
            continue
        if e["type"] == "file" and e["before"] is None:
            if not os.path.exists(e["path"]):
                drift.append((e["label"], "present", "missing"))
            continue
        if e["type"] == "dma_latency" and not st.get("via_tuned"):   # tuned holds its own
            if not K.holder_pid():
                drift.append((e["label"], e["target"], "no holder process (value %s)"
                              % K.read_value(e)))
                continue
        cur = K.read_value(e)
        if cur is None and e["type"] == "task":
            continue
        if not K.matches(e, cur, e["target"]):
            drift.append((e["label"], e["target"], cur))
    iso = set(cpulist_of(st.get("isolated_cpus") or ""))
    if iso and any(e["type"] == "task" for e in st["entries"]):
        known = {e["key"] for e in st["entries"]}
        members = cpuset_members(st)
        entries, _ = K.task_entries(iso, keep={os.getpid()} | members)
        for e in entries:
            if e["key"] not in known:
                drift.append((e["label"], "off CPUs %s" % st["isolated_cpus"],
                              "may run on %s (started after the apply)" % e["before"]
                              if "before" in e else "may run there"))
        for n in K.irq_numbers():
            key = "irq:%d" % n
            e = K.irq_entry(n, None)
            cur = K.read_value(e)
            if key not in known and cur and set(cpulist_of(cur)) & iso:
                drift.append((e["label"], "off CPUs %s" % st["isolated_cpus"], cur))
    return drift


# where the kernel shows a boot word's effect, and rcu_nocbs's kthreads' names
SYS_CPU = "/sys/devices/system/cpu/"
DEFAULT_IRQ_AFFINITY = "/proc/irq/default_smp_affinity"
RCU_NOCB_THREADS = ("rcuop/%d", "rcuos/%d", "rcuob/%d")


def _word_cpus(value):
    """The CPUs of a boot word's value: 'domain,managed_irq,1-3' -> ([1, 2, 3],
    ['domain', 'managed_irq'])."""
    parts = value.split(",")
    flags = []
    while parts and re.fullmatch(r"[a-z_]+", parts[0]):
        flags.append(parts.pop(0))
    try:
        return cpulist_of(",".join(parts)), flags
    except UsageError:
        return None, flags


def _threads_named(names):
    """The comms among /proc/*/comm that are in @names."""
    found = set()
    for d in glob.glob("/proc/[0-9]*/comm"):
        try:
            with open(d) as f:
                c = f.read().strip()
        except OSError:
            continue
        if c in names:
            found.add(c)
    return found


def boot_effects(word, cmdline=None):
    """What the kernel shows of boot word @word in this boot: [(label, want, now)]
    for each way it is not in effect ([] when it is): on the command line at all;
    isolcpus in /sys/.../cpu/isolated (and, with managed_irq, no device IRQ
    effective on an isolated CPU whose affinity holds another); nohz_full in
    /sys/.../cpu/nohz_full; rcu_nocbs by its rcuop/N kthreads; irqaffinity in
    /proc/irq/default_smp_affinity."""
    line = K.cmdline() if cmdline is None else cmdline
    label = "boot: " + word
    if word not in line:
        param = word.partition("=")[0]
        now = [w for w in line if w.partition("=")[0] == param]
        return [(label, "on the kernel command line", " ".join(now) or "absent")]
    param, _, value = word.partition("=")
    cpus, flags = _word_cpus(value) if value else (None, [])
    if cpus is None:
        return []
    out = []
    want = format_cpulist(cpus)
    if param in ("isolcpus", "nohz_full"):
        now = read_cpulist(SYS_CPU + ("isolated" if param == "isolcpus" else "nohz_full"))
        if sorted(now) != sorted(cpus):
            out.append((label + " in effect", "%s %s" % (param, want),
                        format_cpulist(now) or "none"))
    if param == "isolcpus" and "managed_irq" in flags:
        on = []
        for n in K.irq_numbers():
            try:
                eff = cpulist_of(K.read_file("/proc/irq/%d/effective_affinity_list" % n))
                aff = cpulist_of(K.read_file("/proc/irq/%d/smp_affinity_list" % n))
            except (K.KnobError, UsageError):
                continue
            if set(eff) & set(cpus) and set(aff) - set(cpus):
                on.append("IRQ %d %s on %s" % (n, K.irq_name(n), format_cpulist(eff)))
        if on:
            out.append((label + " managed IRQs", "off CPUs %s" % want, ", ".join(on)))
    if param == "rcu_nocbs":
        names = {fmt % c for c in cpus for fmt in RCU_NOCB_THREADS}
        found = _threads_named(names)
        missing = [c for c in cpus if not any(fmt % c in found for fmt in RCU_NOCB_THREADS)]
        if missing:
            out.append((label + " in effect", "an rcuop/N kthread for each of CPUs %s" % want,
                        "none for %s" % format_cpulist(missing)))
    if param == "irqaffinity":
        try:
            now = sorted(K.norm_mask(K.read_file(DEFAULT_IRQ_AFFINITY)))
        except K.KnobError as e:
            now = str(e)
        if now != sorted(cpus):
            out.append((label + " in effect", "default IRQ affinity %s" % want,
                        format_cpulist(now) if isinstance(now, list) else now))
    return out


def boot_state(st):
    """The boot options snapshot @st's apply wrote (a grub drop-in): (drift,
    pending). Before a reboot they are pending ([words], nothing checked); after
    one, each is checked as boot_effects says."""
    words = st.get("boot") or []
    if not words or not wrote_boot(st):
        return [], []
    if st.get("boot_id") and st.get("boot_id") == boot_id():
        return [], list(words)
    line = K.cmdline()
    drift = []
    for w in words:
        drift += boot_effects(w, line)
    return drift, []


def kernel_kept(e, now):
    """Why task entry @e's affinity reads back @now, less than its old value: the
    kernel keeps its kernel threads on the housekeeping CPUs (nohz_full and
    isolcpus take the others from them, whatever is written), or ''."""
    if e["type"] != "task" or not isinstance(e.get("tid"), int):
        return ""
    st = K.task_stat(e["tid"])
    if not st or not st[1] & K.PF_KTHREAD:
        return ""
    house = set(online_cpus()) - set(read_cpulist(SYS_CPU + "nohz_full")) - \
        set(read_cpulist(SYS_CPU + "isolated"))
    try:
        want, got = set(cpulist_of(e["before"])), set(cpulist_of(now))
    except (UsageError, TypeError):
        return ""
    if got and got != want and got == want & house:
        return (": the kernel keeps its kernel threads on the housekeeping CPUs (%s; "
                "nohz_full and isolcpus take the others)" % format_cpulist(sorted(house)))
    return ""


def runtime_reached(st):
    """The snapshot's runtime entries its apply reached."""
    return [e for e in st["entries"] if e.get("when") != "boot" and
            not (st.get("write_ahead") and "result" not in e)]


def booted_since(st):
    """Has the machine booted since snapshot @st was written?"""
    return bool(st.get("boot_id")) and st.get("boot_id") != boot_id()


def cpuset_members(st):
    out = set()
    for e in st["entries"]:
        if e["type"] == "cpuset":
            d = K.cpuset_dir(e)
            try:
                out |= {int(t) for t in K.read_file(os.path.join(d, "tasks")).split()}
            except (K.KnobError, TypeError):
                pass
    return out


# ---------------------------------------------------------------- auto revert

def start_auto_revert(seconds, token):
    """A process of its own that reverts after @seconds unless confirmed; what it
    says (autorevert's lines) goes to auto-revert.log in the state folder."""
    pkg = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = ("import sys; sys.path.insert(0, %r); from jtrpy.tune.engine import autorevert; "
            "sys.exit(autorevert(float(sys.argv[1]), sys.argv[2], lambda line: print(line, "
            "flush=True)))" % pkg)
    logf = open(os.path.join(state_dir(), "auto-revert.log"), "a")
    p = subprocess.Popen([sys.executable, "-c", code, str(seconds), token, "_autorevert"],
                         start_new_session=True, stdin=subprocess.DEVNULL, stdout=logf,
                         stderr=logf, env=dict(os.environ))
    logf.close()
    return p.pid


def kill_if(pid, marker):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            if marker.encode() in f.read():
                os.kill(pid, signal.SIGTERM)
    except OSError:
        pass


# ---------------------------------------------------------------- grub, tuned

def run_update_grub():
    prog = shutil.which("update-grub") or shutil.which("grub-mkconfig")
    if os.environ.get("JTR_GRUB_DIR") or not prog:
        return "not run: %s" % ("JTR_GRUB_DIR is set (a test or staging folder)"
                                if prog or os.environ.get("JTR_GRUB_DIR")
                                else "update-grub is not installed")
    args = [prog] if prog.endswith("update-grub") else [prog, "-o", "/boot/grub/grub.cfg"]
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return "ok" if p.returncode == 0 else "failed: %s" % p.stdout.strip()[-200:]


def tuned_running():
    """None when the tuned daemon answers on the system bus, else why not."""
    if not shutil.which("tuned-adm"):
        return "tuned is not installed (Debian: apt-get install tuned)"
    if not shutil.which("dbus-send"):
        return "dbus-send is not installed: jtr asks the tuned daemon over D-Bus"
    try:
        p = signals.run(["dbus-send", "--system", "--print-reply",
                         "--dest=com.redhat.tuned", "/Tuned",
                         "com.redhat.tuned.control.active_profile"],
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                        timeout=20)
    except subprocess.TimeoutExpired:
        return "the tuned daemon did not answer on D-Bus in 20 s"
    if p.returncode != 0:
        return "the tuned daemon is not running (D-Bus: %s)" % (
            p.stdout.strip().splitlines() or ["no answer"])[-1]
    return None


def tuned_prepare(plan, st):
    """Install the profile chain into tuned's user folder (tuned_layout()) for
    tuned, and isolated_cores into /etc/tuned/jtr-variables.conf; returns the
    record."""
    why = tuned_running()
    if why:
        raise UsageError("--via-tuned: %s; without --via-tuned jtr applies the profile "
                         "itself" % why)
    p = signals.run(["tuned-adm", "active"], stdout=subprocess.PIPE, text=True)
    prev = p.stdout.split(":", 1)[1].strip().splitlines()[0] if (
        "Current active profile:" in p.stdout) else ""
    layout = tuned_layout()
    for path in plan.profile.files:
        name = os.path.basename(os.path.dirname(path))
        dst = os.path.join(layout["user"], name, "tuned.conf")
        if os.path.abspath(path) != dst:
            with open(path) as f:
                text = f.read()
            if _same_text(dst, text):
                continue                # jtr tune install-profiles put it there: it stays
            if os.path.exists(dst):
                raise UsageError("--via-tuned: %s exists already; jtr installs its profiles "
                                 "there for tuned and removes them on revert, so it will not "
                                 "overwrite one it did not install" % dst)
            st["entries"].insert(0, {"type": "file", "key": "tuned:" + dst, "label": dst,
                                     "path": dst, "how": "text", "when": "runtime",
                                     "before": None, "target": text,
                                     "made_dir": not os.path.isdir(os.path.dirname(dst))})
    var = layout["variables"]
    st["entries"].insert(0, {"type": "file", "key": "tuned:" + var, "label": var, "path": var,
                             "how": "text", "when": "runtime",
                             "before": K.read_value({"type": "file", "path": var,
                                                     "how": "text"}),
                             "target": "isolated_cores=%s\n" % st["isolated_cpus"]})
    # tuned names a profile by its folder's name: a profile given as a folder
    # (jtr advise --prove's) is the one installed under that name (the files
    # are loaded includes first, the profile itself last)
    top = os.path.basename(os.path.dirname(plan.profile.files[-1])) if plan.profile.files \
        else plan.profile.name
    return {"previous": prev, "name": top}


def _same_text(path, text):
    try:
        with open(path) as f:
            return f.read() == text
    except OSError:
        return False


VARIABLES = "jtr-variables.conf"


def variables_path(folder):
    """Where install-profiles puts the variables template for profiles copied into
    @folder: /etc/tuned/jtr-variables.conf (what jtr-isolate includes) for a
    folder in /etc/tuned (tuned's user folder, either layout), else @folder's own
    (a staging folder)."""
    real = os.path.realpath(folder)
    if real == TUNED_CONF_DIR or real.startswith(TUNED_CONF_DIR + "/"):
        return os.path.join(TUNED_CONF_DIR, VARIABLES)
    return os.path.join(folder, VARIABLES)


def install_profiles(say, folder=None):
    """Copy jtr's profiles into @folder/<name>/tuned.conf (default: tuned's user
    folder, where tuned-adm list finds them) and the jtr-variables.conf template
    (variables_path) when there is none; a profile of that name jtr did not
    install (its text differs) is left and listed, each @say-ing what became of
    it. Returns the number left."""
    folder = folder or tuned_layout()["user"]
    own = profile_dirs()[0]
    left = 0
    for name in jtr_profiles():
        src = os.path.join(own, name, "tuned.conf")
        if not os.path.isfile(src):
            continue
        with open(src) as f:
            text = f.read()
        dst = os.path.join(folder, name, "tuned.conf")
        if _same_text(dst, text):
            say("%s: installed already" % dst)
            continue
        if os.path.exists(dst):
            say("%s: left as it is: it differs from jtr's %s (installed by another "
                "jtr, or edited); remove it to install this one" % (dst, name))
            left += 1
            continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        write_atomic(dst, text)
        say("%s: installed" % dst)
    var = variables_path(folder)
    if os.path.exists(var):
        say("%s: kept (yours; isolated_cores=%s)"
            % (var, read_variables_file(var).get("isolated_cores", "unset")))
    else:
        with open(os.path.join(own, VARIABLES)) as f:
            write_atomic(var, f.read())
        say("%s: installed from the template (isolated_cores=%s): edit it"
            % (var, read_variables_file(var).get("isolated_cores")))
    return left


def tuned_apply(st, say):
    for e in st["entries"]:
        if e["key"].startswith("tuned:"):
            e["result"] = _apply_one(e)
    name = st["via_tuned"].get("name") or st["profile"]
    p = subprocess.run(["tuned-adm", "profile", name], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise JtrError("tuned-adm profile %s failed: %s (revert with 'jtr tune revert')"
                       % (name, p.stdout.strip()))
    say("tuned applied %s" % name)


def tuned_revert(st, say):
    prev = st["via_tuned"].get("previous")
    args = ["tuned-adm", "profile", prev] if prev and prev != "none" else ["tuned-adm", "off"]
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    say("%s: %s" % (" ".join(args), "ok" if p.returncode == 0 else p.stdout.strip()))
    time.sleep(0.5)
    left = []
    for e in st["entries"]:
        if e["type"] in ("file", "task") and not e["key"].startswith("tuned:"):
            cur = K.read_value(e)
            if cur is not None and not K.matches(e, cur, e["before"]):
                left.append(e["label"])
    if left:
        say("tuned left %d setting(s) changed; jtr restores them: %s"
            % (len(left), ", ".join(left[:8]) + (" ..." if len(left) > 8 else "")))


def all_profiles():
    return jtr_profiles()


def autorevert(seconds, token, say):
    """The --auto-revert process: sleep, then revert unless confirmed, saying so
    with @say(line) (to the process's log: start_auto_revert). SIGTERM (confirm,
    revert) ends it while it waits; once it reverts, nothing stops it half-way."""
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    time.sleep(seconds)
    with StateLock(say):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        try:
            st = active_state()
        except UsageError as e:
            say("auto-revert: %s" % e)
            return 1
        if not st or st.get("applied_at") != token or st.get("confirmed"):
            return 0
        say("auto-revert: %s not confirmed in %g s: reverting" % (st["profile"], seconds))
        failed, _ = revert(st, say)
        for label, why in failed:
            say("  not restored: %s: %s" % (label, why))
    return 0
