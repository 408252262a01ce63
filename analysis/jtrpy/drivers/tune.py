# SPDX-License-Identifier: GPL-2.0-only
"""tune - jtr tune's jobs: the profiles read, the settings and the snapshot
looked at, a profile applied, verified, reverted, confirmed, installed into
tuned's folder (tune/engine.py does the changing). What must be said while a
job works (the plan before the apply, what the applier says) goes through the
command's @say(line) and @note(line) (stdout and stderr); the rest comes back."""
import os

from ..errors import EXIT_INTERRUPTED, UsageError
from ..render import tune as show
from ..system import signals
from ..system.cpus import online_cpus
from ..system.paths import tuned_layout
from ..tune import engine as E
from ..tune import inventory
from ..tune.profile import Profile, jtr_profiles


def state_path():
    """The snapshot's file (for --help)."""
    return E.state_path()


def grub_dir():
    """The folder of --boot's grub drop-in (for --help)."""
    return E.grub_dir()


# ---------------------------------------------------------------- list, show

def profiles():
    """jtr's profiles: [(name, summary, [the profiles it includes])]."""
    out = []
    for name in jtr_profiles():
        p = Profile(name, expand=False)
        out.append((name, p.summary, [os.path.basename(os.path.dirname(f))
                                      for f in p.files[:-1]]))
    return out


def settings(dump=False):
    """Every setting the profiles touch (inventory.knob_rows) and the applied
    profile: ({active, state_error, knobs[, dump]}, the snapshot or None); with
    @dump, every value a profile can change."""
    rows = inventory.knob_rows()
    try:
        st, bad = E.active_state(), None
    except UsageError as e:
        st, bad = None, str(e)
    doc = {"active": st["profile"] if st else None, "state_error": bad, "knobs": rows}
    if dump:
        doc["dump"] = inventory.dump()
    return doc, st


# ---------------------------------------------------------------- install-profiles

def tuned_folder(which):
    """One of tuned's folders (system, user, variables) and why it is that one."""
    layout = tuned_layout()
    return layout[which], layout["why"]


def install(folder, say):
    """Copy jtr's profiles into @folder (None: tuned's user folder, @say-ing why
    it is that one); 1 when a profile of the same name that differs was left."""
    layout = tuned_layout()
    into = folder or layout["user"]
    if not os.path.isdir(into):
        if folder:
            raise UsageError("--dir %s: no such folder (tuned's is %s: %s)"
                             % (folder, layout["user"], layout["why"]))
        raise UsageError("%s: no such folder (%s); is tuned installed? --dir DIR copies "
                         "into another folder" % (into, layout["why"]))
    if not os.access(into, os.W_OK):
        raise UsageError("%s: not writable by this user; run it as root (sudo)" % into)
    if not folder:
        say(layout["why"])
    return 1 if E.install_profiles(say, into) else 0


# ---------------------------------------------------------------- apply

def show_plan(plan, cpus, say):
    """@say the plan of @cpus (the RT throttling warning added when it turns RT
    throttling off), the housekeeping CPUs and what --boot could do."""
    if any(e["label"] == "kernel.sched_rt_runtime_us" and e["target"] == "-1"
           for e in plan.entries):
        plan.warnings.append(E.RT_WARNING)
    house = [c for c in online_cpus() if c not in cpus]
    say(show.plan_head(plan, cpus, house))
    for line in show.plan_lines(plan, E.can_change_cmdline() if plan.boot else None):
        say(line)


def refuse_if_applied():
    st = E.active_state()
    if st:
        raise UsageError("profile %s is applied (since %s); run 'jtr tune revert' first"
                         % (st["profile"], st["applied_at"]))


def apply(o, say, note):
    """jtr tune apply's job on @o {profile (the names given), cpus (text or None),
    force, dry_run, boot, auto_revert (ns or None), via_tuned (None: by whether the
    tuned daemon runs)}: the profile loaded with every value checked, the plan
    said; without --dry-run, as root and with no profile applied, applied under
    the state lock, a stop signal undoing it. The exit status."""
    if len(o["profile"]) != 1:
        raise UsageError("give one profile to apply (%s); see 'jtr tune list'"
                         % ", ".join(jtr_profiles()))
    name = o["profile"][0]
    auto = o["auto_revert"] / 1e9 if o["auto_revert"] is not None else None
    cpus = E.check_cpus(o["cpus"], o["force"]) if o["cpus"] is not None else []
    profile = E.load_profile(name, cpus, o["force"])     # every value checked
    if profile.isolated is not None:
        cpus = profile.isolated
    if o["dry_run"]:
        show_plan(E.make_plan(profile, cpus), cpus, say)
        say("dry run: nothing was changed")
        return 0
    E.need_root("apply")
    refuse_if_applied()
    via_tuned = o["via_tuned"]
    if via_tuned is None:
        via_tuned = E.tuned_running() is None
        if via_tuned and "/" in name:
            raise UsageError("the tuned daemon runs, and %s is a profile folder, not a "
                             "profile tuned can name: install it into %s/NAME and "
                             "apply NAME, or give --no-tuned (jtr applies it itself while "
                             "tuned may change the same knobs)"
                             % (name, tuned_layout()["user"]))
        if via_tuned:
            say("the tuned daemon runs: tuned applies %s, jtr snapshots and verifies "
                "(--no-tuned: jtr applies it itself)" % profile.name)
    # the first stop signal ends the apply and undoes it; later ones wait for that
    with signals.measuring(stopping="stopping: undoing the apply",
                           busy="still undoing the apply; wait"), E.StateLock(note):
        E.recover()
        refuse_if_applied()
        plan = E.make_plan(profile, cpus)
        show_plan(plan, cpus, say)
        if signals.requested():
            note("jtr tune: interrupted; nothing was changed")
            return EXIT_INTERRUPTED
        st = E.apply(plan, say, boot=o["boot"], auto_revert_s=auto, via_tuned=via_tuned,
                     stop=signals.requested)
        if signals.requested():
            failed, gone = E.revert(st, say)
            for line in show.not_restored(failed):
                say(line)
            note("jtr tune: interrupted; the apply of %s was undone (%d settings restored%s)"
                 % (profile.name, st["touched"] - len(failed) - gone,
                    ", %d not" % len(failed) if failed else ""))
            return EXIT_INTERRUPTED
    for line in show.applied_lines(profile.name, via_tuned, st, E.state_path(),
                                   os.path.join(E.grub_dir(), "99-jtr.cfg"), auto):
        say(line)
    return 0


# ---------------------------------------------------------------- verify, revert, confirm

def verify():
    """The applied snapshot and its drift from the machine [(label, want, now)];
    UsageError when no profile is applied."""
    st = E.active_state()
    if not st:
        raise UsageError("no profile is applied (no active snapshot at %s)" % E.state_path())
    return st, E.verify(st)


def boot_notes(st):
    """What verify says of the snapshot's boot options beside its drift: the words
    waiting for the next boot, or that the runtime settings did not outlive one."""
    drift, pending = E.boot_state(st)
    if pending:
        return ["boot options pending the next boot (not checked): %s" % " ".join(pending)]
    if E.booted_since(st) and E.wrote_boot(st):
        n = len(drifted_words(drift))
        return ["booted since the apply: its %d boot options checked (%s); its %d runtime "
                "settings went with the reboot ('jtr tune revert', then apply again)"
                % (len(st.get("boot") or []), "%d drifted" % n if n else "all in effect",
                   len(E.runtime_reached(st)))]
    return []


def drifted_words(drift):
    """The boot words among verify's drift lines (each once: a word's lines all
    begin 'boot: WORD')."""
    return {label.split()[1] for label, _, _ in drift if label.startswith("boot: ")}


def checked(st, drift):
    """(settings checked, settings drifted) of verify: the snapshot's entries, and
    its boot options once the machine has booted with them, each counted once
    (after a reboot its runtime settings all went with it)."""
    words = len(drifted_words(drift))
    if E.booted_since(st):
        n = len(E.runtime_reached(st))
        return n + (len(st.get("boot") or []) if E.wrote_boot(st) else 0), n + words
    boot_lines = sum(1 for label, _, _ in drift if label.startswith("boot: "))
    return len(st["entries"]), len(drift) - boot_lines + words


def already_reverted(st, say):
    if st["status"].startswith("reverted"):
        say("%s was already reverted at %s; nothing to do" % (st["profile"],
                                                             st.get("reverted_at")))
        return True
    return False


def revert(say, note):
    """jtr tune revert's job: every setting the apply reached restored from the
    snapshot, under the state lock, stop signals held off; nothing when it was
    reverted already. The exit status (1: some setting not restored)."""
    if already_reverted(E.read_state(), say):
        return 0
    E.need_root("revert")
    # a revert is not stopped half-way: every stop signal is acknowledged and waits
    with signals.holding("still reverting; wait"), \
            E.StateLock(note):
        E.recover()
        st = E.read_state()             # again: another revert may have come first
        if already_reverted(st, say):
            return 0
        if st.get("status") == "applying":
            say("the apply of %s did not finish (pid %s); restoring everything it may have "
                "changed" % (st["profile"], st.get("pid")))
        source = E.state_source()
        failed, gone = E.revert(st, say)
    n = st["touched"] - len(failed) - gone
    say("reverted %s: %d setting%s restored from %s%s" % (
        st["profile"], n, "" if n == 1 else "s", source,
        "; %d tasks have exited since" % gone if gone else ""))
    if st.get("went_with_reboot"):
        say("booted since the apply: its other %d settings went with that reboot (their "
            "values before it are not written over this boot's)" % st["went_with_reboot"])
    for line in show.not_restored(failed):
        say(line)
    return 1 if failed else 0


def confirm(note):
    """jtr tune confirm's job: the applied profile kept (its auto-revert stopped);
    the line saying so. UsageError when no profile is applied. @note(line): that
    it waits for another jtr changing the tuning."""
    st = E.active_state()
    if not st:
        raise UsageError("no profile is applied: nothing to confirm")
    if st.get("confirmed"):
        return "%s is already confirmed" % st["profile"]
    E.need_root("confirm")
    with E.StateLock(note):
        st = E.active_state()
        if not st:
            raise UsageError("no profile is applied: nothing to confirm")
        st["confirmed"] = True
        E.write_state(st)
    if st.get("auto_revert_pid"):
        E.kill_if(st["auto_revert_pid"], "_autorevert")
    return "%s confirmed: it stays applied until 'jtr tune revert'" % st["profile"]
