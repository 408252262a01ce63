# SPDX-License-Identifier: GPL-2.0-only
"""tune - jtr tune: list, show, apply, verify, revert and confirm tuning profiles."""
import json
import sys
import textwrap

from ..cli.parser import Choice, Duration, JtrParser, note, say
from ..drivers import tune
from ..errors import UsageError
from ..render import tune as show

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
        what = ACTION_HELP[name].format(state=tune.state_path())
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
                         "(%s/99-jtr.cfg); revert removes it" % tune.grub_dir())
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
                       "(tuned's version module, as tuned-adm --version says it; "
                       "JTR_TUNED_VERSION instead): tuned 2.23 and later read "
                       "/usr/lib/tuned/profiles and /etc/tuned/profiles (or "
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
    if opts.print_dir:
        if opts.dir:
            raise UsageError("--print-dir says where tuned's folders are; it takes no --dir")
        folder, why = tune.tuned_folder(opts.print_dir)
        print(folder)
        print("jtr tune: %s" % why, file=sys.stderr)
        return 0
    return tune.install(opts.dir, say)


def do_list(opts):
    for name, summary, includes in tune.profiles():
        print(show.profile_line(name, summary, includes))
    return 0


def do_show(opts):
    doc, st = tune.settings(dump=opts.json)
    if opts.json:
        print(json.dumps(doc, indent=1))
        return 0
    print(show.active_line(st, doc["state_error"]))
    print("\n".join(show.knob_table(doc["knobs"])))
    return 0


def do_apply(opts):
    return tune.apply({"profile": opts.profile, "cpus": opts.cpus, "force": opts.force,
                       "dry_run": opts.dry_run, "boot": opts.boot,
                       "auto_revert": opts.auto_revert, "via_tuned": opts.via_tuned},
                      say, note)


def do_verify(opts):
    st, drift = tune.verify()
    n, bad = tune.checked(st, drift)
    for line in tune.boot_notes(st):
        print(line)
    if not drift:
        print("%s: as applied (%d settings checked)" % (st["profile"], n))
        return 0
    print("%s: %d of %d settings drifted:" % (st["profile"], bad, n))
    for label, want, now in drift:
        print("  %s: want %s, now %s" % (label, want, now))
    return 1


def do_revert(opts):
    return tune.revert(say, note)


def do_confirm(opts):
    print(tune.confirm(note))
    return 0
