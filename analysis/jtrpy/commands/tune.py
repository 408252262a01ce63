# SPDX-License-Identifier: GPL-2.0-only
"""tune - jtr tune: list, show, apply, verify, revert and confirm tuning profiles."""
import json
import os
import sys
import textwrap

from ..cli.parser import Choice, Duration, JtrParser
from ..errors import EXIT_INTERRUPTED, UsageError
from ..system import signals
from ..system.cpus import online_cpus
from ..system.paths import tuned_layout
from ..tune import engine as E
from ..tune import inventory
from ..tune import knobs as K
from ..tune.profile import Profile, jtr_profiles
from ..values import format_cpulist

ACTIONS = ("list", "show", "apply", "verify", "revert", "confirm", "install-profiles")

DESCRIPTION = """\
Tuning profiles in tuned's format (tuning-profiles/<name>/tuned.conf), applied
by jtr itself (no daemon, D-Bus or systemd needed) with a snapshot first, so
'revert' puts back exactly what was there, also after a killed apply."""

ACTION_HELP = {
    "list": "the profiles and what each does",
    "show": "every setting the profiles touch: its value now, runtime or boot-only, whether "
            "this machine supports it (and why not), boot options in effect",
    "apply": "check every value of the profile and what this machine can do, print the "
             "plan, write the snapshot ({state}), then apply, the snapshot written again "
             "before each change; what cannot be applied is listed with the reason. Ctrl-C, "
             "SIGTERM or SIGHUP stops it and undoes it (exit 130)",
    "verify": "compare the machine with the applied profile; exit 0 (as applied) or 1 "
              "(drift: each difference listed)",
    "revert": "restore every setting the apply reached from the snapshot, also after a "
              "killed apply; says what could not be restored and why; running it again does "
              "nothing more; signals do not stop it half-way",
    "confirm": "keep a profile applied with --auto-revert",
    "install-profiles": "copy jtr's profiles into tuned's own folder (where tuned-adm list "
                        "finds them: /etc/tuned/profiles from tuned 2.23, /etc/tuned "
                        "before) and the jtr-variables.conf template into /etc/tuned when "
                        "there is none; a profile of the same name that differs is left "
                        "and listed (exit 1)",
}

NOTES = """\
The state folder is $JTR_STATE_DIR (default /run/jtr); results record the active
profile from its active-profile file. 'jtr tune ACTION --help' gives the options
of one action."""

EXAMPLES = """\
  jtr tune show
  sudo jtr tune apply jtr-isolate --cpus 1 --dry-run
  sudo jtr tune apply jtr-latency && sudo jtr run && sudo jtr tune revert
  sudo jtr tune apply jtr-realtime --cpus 2-3 --auto-revert 2m; sudo jtr tune confirm"""


def make_parser(prog):
    p = JtrParser(prog, usage="%(prog)s ACTION [OPTIONS]", description=DESCRIPTION, notes=NOTES,
                  examples=EXAMPLES)
    sub = p.add_subparsers(dest="action", metavar="ACTION", title="actions",
                           parser_class=JtrParser)
    sub.required = True

    def action(name, usage="%(prog)s", **kw):
        what = ACTION_HELP[name].format(state=E.state_path())
        return sub.add_parser(name, prog="%s %s" % (prog, name), usage=usage, help=what,
                              description=textwrap.fill(what[0].upper() + what[1:] + ".", 80),
                              **kw)
    action("list")
    show = action("show", usage="%(prog)s [--json]")
    show.add_argument("--json", action="store_true",
                      help="as JSON, with a dump of every value a profile can change")
    ap = action("apply", usage="%(prog)s PROFILE [OPTIONS]",
                examples="  sudo jtr tune apply jtr-isolate --cpus 1 --dry-run\n"
                         "  sudo jtr tune apply jtr-latency --auto-revert 2m")
    ap.add_argument("--cpus", metavar="LIST",
                    help="CPUs to isolate (jtr-isolate, jtr-realtime): 1, 2-3, 1,3")
    ap.add_argument("--dry-run", action="store_true", help="print the plan and change nothing")
    ap.add_argument("--boot", action="store_true",
                    help="also write the boot-only options as a grub drop-in "
                         "(%s/99-jtr.cfg); revert removes it" % E.grub_dir())
    ap.add_argument("--auto-revert", metavar="DUR", type=Duration(5 * 10 ** 9, 86400 * 10 ** 9),
                    help="revert by itself after DUR (5s to 24h; a bare number is in "
                         "seconds) unless 'jtr tune confirm' (for remote machines: a profile "
                         "that cuts you off undoes itself)")
    ap.add_argument("--via-tuned", action="store_true", default=None,
                    help="let the running tuned daemon apply it (jtr still snapshots and "
                         "restores what tuned leaves behind); the default when the daemon "
                         "runs, so two appliers do not fight over the same knobs")
    ap.add_argument("--no-tuned", action="store_false", dest="via_tuned",
                    help="apply with jtr's own applier even where the tuned daemon runs")
    ap.add_argument("--force", action="store_true",
                    help="allow isolating every CPU, or the CPUs jtr runs on")
    ap.add_operands("profile", "PROFILE", "the profile to apply (see 'jtr tune list')")
    for name in ("verify", "revert", "confirm"):
        action(name)
    ins = action("install-profiles", usage="%(prog)s [--dir DIR | --print-dir WHICH]",
                 notes=textwrap.fill("The folders are those of the installed tuned's version "
                       "(tuned-adm --version; JTR_TUNED_VERSION instead): tuned 2.23 and "
                       "later read /usr/lib/tuned/profiles and /etc/tuned/profiles (or "
                       "tuned-main.conf's profile_dirs), earlier ones /usr/lib/tuned and "
                       "/etc/tuned; without tuned, those of 2.23 and later. The variables "
                       "file is /etc/tuned/jtr-variables.conf in both.", 80))
    ins.add_argument("--dir", metavar="DIR",
                     help="copy into DIR instead of tuned's user folder; the variables "
                          "template goes into DIR too unless DIR is in /etc/tuned")
    ins.add_argument("--print-dir", metavar="WHICH", type=Choice(*PRINT_DIRS),
                     help="print one of tuned's folders here and change nothing: system "
                          "(packaged profiles: make install links there), user (where this "
                          "copies), variables (the file jtr-isolate includes); why, on "
                          "stderr")
    return p


PRINT_DIRS = ("system", "user", "variables")


def parse(parser, args):
    """The action first, in jtr tune's own words when it is not one."""
    if not args:
        raise UsageError("give an action: %s; see 'jtr tune --help'" % ", ".join(ACTIONS))
    if args[0].startswith("-") and args[0] not in ("-h", "--help"):
        raise UsageError("unknown option '%s'; give an action first: %s; see 'jtr tune "
                         "--help'" % (args[0].split("=")[0], ", ".join(ACTIONS)))
    if args[0] not in ACTIONS and not args[0].startswith("-"):
        raise UsageError("unknown 'jtr tune %s'; use list, show, apply, verify, revert, "
                         "confirm or install-profiles" % args[0])
    return parser.parse_args(args)


def run(opts):
    return {"list": do_list, "show": do_show, "apply": do_apply, "verify": do_verify,
            "revert": do_revert, "confirm": do_confirm,
            "install-profiles": do_install}[opts.action](opts)


def do_install(opts):
    layout = tuned_layout()
    if opts.print_dir:
        if opts.dir:
            raise UsageError("--print-dir says where tuned's folders are; it takes no --dir")
        print(layout[opts.print_dir])
        print("jtr tune: %s" % layout["why"], file=sys.stderr)
        return 0
    folder = opts.dir or layout["user"]
    if not os.path.isdir(folder):
        if opts.dir:
            raise UsageError("--dir %s: no such folder (tuned's is %s: %s)"
                             % (opts.dir, layout["user"], layout["why"]))
        raise UsageError("%s: no such folder (%s); is tuned installed? --dir DIR copies "
                         "into another folder" % (folder, layout["why"]))
    if not os.access(folder, os.W_OK):
        raise UsageError("%s: not writable by this user; run it as root (sudo)" % folder)
    if not opts.dir:
        print(layout["why"])
    return 1 if E.install_profiles(folder) else 0


# ---------------------------------------------------------------- list, show

def do_list(opts):
    for name in jtr_profiles():
        p = Profile(name, expand=False)
        inc = [os.path.basename(os.path.dirname(f)) for f in p.files[:-1]]
        print("%-14s %s%s" % (name, p.summary, " (includes %s)" % ", ".join(inc) if inc else ""))
    return 0


def do_show(opts):
    rows = inventory.knob_rows()
    try:
        st, bad = E.active_state(), None
    except UsageError as e:
        st, bad = None, str(e)
    if opts.json:
        print(json.dumps({"active": st["profile"] if st else None, "state_error": bad,
                          "knobs": rows, "dump": inventory.dump()}, indent=1))
        return 0
    print("active profile: %s" % ("%s on CPUs %s (since %s)" % (
        st["profile"], st["isolated_cpus"] or "-", st["applied_at"]) if st else
        "unknown: " + bad if bad else "none"))
    w = max(len(r["label"]) for r in rows)
    notes = []
    table = []
    for r in rows:
        here = "yes" if r["supported"] else "no"
        if r["why"]:
            if r["why"] not in notes:
                notes.append(r["why"])
            here += " [%d]" % (notes.index(r["why"]) + 1)
        table.append((r["label"], r["now"], r["when"], here, ", ".join(r["set_by"])))
    wn = max(len(t[1]) for t in table)
    print("%-*s  %-*s  %-7s  %-6s  %s" % (w, "setting", wn, "now", "when", "here", "set by"))
    for t in table:
        print("%-*s  %-*s  %-7s  %-6s  %s" % (w, t[0], wn, t[1], t[2], t[3], t[4]))
    for i, n in enumerate(notes):
        print("[%d] %s" % (i + 1, n))
    return 0


# ---------------------------------------------------------------- apply

def _print_plan(plan, out=None):
    out = sys.stdout if out is None else out
    tasks = [e for e in plan.entries if e["type"] == "task"]
    irqs = [e for e in plan.entries if e["key"].startswith("irq:")]
    rest = [e for e in plan.entries if e not in tasks and e not in irqs]
    w = max([len(e["label"]) for e in rest] + [10])
    out.write("plan (%d settings):\n" % len(plan.entries))
    for e in rest:
        same = K.matches(e, e["before"], e["target"]) and e["type"] != "dma_latency"
        out.write("  %-*s  %s -> %s%s\n" % (w, e["label"], e["before"], e["target"],
                                            "  (already)" if same else ""))
    if irqs:
        out.write("  %-*s  %d IRQs -> %s\n" % (w, "IRQ affinity", len(irqs),
                                               ", ".join(sorted({e["target"] for e in irqs}))))
    if tasks:
        names = sorted({e["comm"] for e in tasks})
        out.write("  %-*s  %d threads moved off CPUs %s (%s%s)\n" % (
            w, "task affinity", len(tasks), format_cpulist(plan.isolated), ", ".join(names[:8]),
            ", ..." if len(names) > 8 else ""))
    if plan.pinned:
        names = sorted({c for _, c in plan.pinned})
        out.write("  stay (the kernel pins them): %d threads: %s%s\n" % (
            len(plan.pinned), ", ".join(names[:10]), ", ..." if len(names) > 10 else ""))
    if plan.skipped:
        out.write("not applied here:\n")
        for what, why in plan.skipped:
            out.write("  %s: %s\n" % (what, why))
    if plan.boot:
        out.write("boot-only (the next boot; on the kernel command line):\n  %s\n"
                  % " ".join(b["word"] for b in plan.boot))
        out.write("  now: %s\n" % ", ".join("%s=%s" % (b["param"], b["now"]) for b in plan.boot))
        ok, why = E.can_change_cmdline()
        out.write("  %s\n" % ("--boot writes it as a " + why if ok else "cannot be made "
                                                                        "persistent here: " + why))
    for w_ in plan.warnings:
        out.write("warning: %s\n" % w_)


def do_apply(opts):
    if len(opts.profile) != 1:
        raise UsageError("give one profile to apply (%s); see 'jtr tune list'"
                         % ", ".join(jtr_profiles()))
    auto = opts.auto_revert / 1e9 if opts.auto_revert is not None else None
    cpus = E.check_cpus(opts.cpus, opts.force) if opts.cpus is not None else []
    profile = E.load_profile(opts.profile[0], cpus, opts.force)     # every value checked
    if profile.isolated is not None:
        cpus = profile.isolated
    if opts.dry_run:
        _show_plan(E.make_plan(profile, cpus), cpus)
        print("dry run: nothing was changed")
        return 0
    E.need_root("apply")
    _refuse_if_applied()
    if opts.via_tuned is None:
        opts.via_tuned = E.tuned_running() is None
        if opts.via_tuned and "/" in opts.profile[0]:
            raise UsageError("the tuned daemon runs, and %s is a profile folder, not a "
                             "profile tuned can name: install it into %s/NAME and "
                             "apply NAME, or give --no-tuned (jtr applies it itself while "
                             "tuned may change the same knobs)"
                             % (opts.profile[0], tuned_layout()["user"]))
        if opts.via_tuned:
            print("the tuned daemon runs: tuned applies %s, jtr snapshots and verifies "
                  "(--no-tuned: jtr applies it itself)" % profile.name)
    # the first stop signal ends the apply and undoes it; later ones wait for that
    with signals.measuring(stopping="stopping: undoing the apply",
                           busy="still undoing the apply; wait"), E.StateLock():
        E.recover()
        _refuse_if_applied()
        plan = E.make_plan(profile, cpus)
        _show_plan(plan, cpus)
        sys.stdout.flush()
        if signals.requested():
            print("jtr tune: interrupted; nothing was changed", file=sys.stderr)
            return EXIT_INTERRUPTED
        st = E.apply(plan, boot=opts.boot, auto_revert_s=auto, via_tuned=opts.via_tuned,
                     stop=signals.requested)
        if signals.requested():
            failed, gone = E.revert(st)
            for label, why in failed:
                print("  not restored: %s: %s" % (label, why))
            sys.stdout.flush()
            print("jtr tune: interrupted; the apply of %s was undone (%d settings restored%s)"
                  % (profile.name, st["touched"] - len(failed) - gone,
                     ", %d not" % len(failed) if failed else ""), file=sys.stderr)
            return EXIT_INTERRUPTED
    res = [e.get("result", "tuned") for e in st["entries"]]
    failed = [e for e in st["entries"] if str(e.get("result", "")).startswith("failed")]
    print("applied %s by %s: %s%d changed, %d already so, %d failed%s (snapshot: %s)" % (
        profile.name, "tuned" if opts.via_tuned else "jtr",
        "%d by tuned, " % res.count("by tuned") if "by tuned" in res else "",
        res.count("changed"), res.count("unchanged"), len(failed),
        ", %d tasks exited before their turn" % res.count("gone") if "gone" in res else "",
        E.state_path()))
    for e in failed:
        print("  not applied: %s: %s" % (e["label"], e["result"][len("failed: "):]))
    if st.get("update_grub"):
        print("grub drop-in %s written; update-grub: %s" % (
            os.path.join(E.grub_dir(), "99-jtr.cfg"), st["update_grub"]))
    if auto:
        print("auto-revert in %g s unless 'jtr tune confirm'" % auto)
    print("revert with: jtr tune revert")
    return 0


def _refuse_if_applied():
    st = E.active_state()
    if st:
        raise UsageError("profile %s is applied (since %s); run 'jtr tune revert' first"
                         % (st["profile"], st["applied_at"]))


def _show_plan(plan, cpus):
    if any(e["label"] == "kernel.sched_rt_runtime_us" and e["target"] == "-1"
           for e in plan.entries):
        plan.warnings.append(E.RT_WARNING)
    house = [c for c in online_cpus() if c not in cpus]
    print("%s%s" % (plan.profile.name, " on CPUs %s (housekeeping: %s)" % (
        format_cpulist(cpus), format_cpulist(house)) if cpus else ""))
    _print_plan(plan)


# ---------------------------------------------------------------- verify, revert, confirm

def do_verify(opts):
    st = E.active_state()
    if not st:
        raise UsageError("no profile is applied (no active snapshot at %s)" % E.state_path())
    drift = E.verify(st)
    n = len(st["entries"])
    if not drift:
        print("%s: as applied (%d settings checked)" % (st["profile"], n))
        return 0
    print("%s: %d of %d settings drifted:" % (st["profile"], len(drift), n))
    for label, want, now in drift:
        print("  %s: want %s, now %s" % (label, want, now))
    return 1


def do_revert(opts):
    if _already_reverted(E.read_state()):
        return 0
    E.need_root("revert")
    # a revert is not stopped half-way: every stop signal is acknowledged and waits
    with signals.holding("still reverting; wait"), \
            E.StateLock():
        E.recover()
        st = E.read_state()             # again: another revert may have come first
        if _already_reverted(st):
            return 0
        if st.get("status") == "applying":
            print("the apply of %s did not finish (pid %s); restoring everything it may have "
                  "changed" % (st["profile"], st.get("pid")))
        failed, gone = E.revert(st)
    print("reverted %s: %d settings restored from %s%s" % (
        st["profile"], st["touched"] - len(failed) - gone, E.state_path(),
        "; %d tasks have exited since" % gone if gone else ""))
    for label, why in failed:
        print("  not restored: %s: %s" % (label, why))
    return 1 if failed else 0


def _already_reverted(st):
    if st["status"].startswith("reverted"):
        print("%s was already reverted at %s; nothing to do" % (st["profile"],
                                                               st.get("reverted_at")))
        return True
    return False


def do_confirm(opts):
    st = E.active_state()
    if not st:
        raise UsageError("no profile is applied: nothing to confirm")
    if st.get("confirmed"):
        print("%s is already confirmed" % st["profile"])
        return 0
    E.need_root("confirm")
    with E.StateLock():
        st = E.active_state()
        if not st:
            raise UsageError("no profile is applied: nothing to confirm")
        st["confirmed"] = True
        E.write_state(st)
    if st.get("auto_revert_pid"):
        E.kill_if(st["auto_revert_pid"], "_autorevert")
    print("%s confirmed: it stays applied until 'jtr tune revert'" % st["profile"])
    return 0
