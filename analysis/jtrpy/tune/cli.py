"""cli - `jtr tune`: list, show, apply, verify, revert, confirm."""
import json
import os
import signal
import sys
import time

from ..errors import UsageError
from . import engine as E
from . import knobs as K
from ..cpus import online_cpus, pack_cpulist
from .profile import Profile, jtr_profiles

USAGE = """\
usage: jtr tune list
       jtr tune show [--json]
       jtr tune apply PROFILE [--cpus LIST] [--dry-run] [--boot] [--auto-revert SECONDS]
                      [--via-tuned] [--force]
       jtr tune verify
       jtr tune revert
       jtr tune confirm

Tuning profiles in tuned's format (tuning-profiles/<name>/tuned.conf), applied
by jtr itself (no daemon, D-Bus or systemd needed) with a snapshot first, so
'revert' puts back exactly what was there, also after a killed apply.

  list       the profiles and what each does
  show       every setting the profiles touch: its value now, runtime or boot-only,
             whether this machine supports it (and why not), boot options in effect
  apply      check what this machine can do, print the plan, write the snapshot
             ({state}), then apply; what cannot be applied is listed with the reason
  verify     compare the machine with the applied profile; exit 0 (as applied) or 1
             (drift: each difference listed)
  revert     restore every setting from the snapshot; says what could not be
             restored and why; running it again does nothing more
  confirm    keep a profile applied with --auto-revert

options of apply:
  --cpus LIST        CPUs to isolate (jtr-isolate, jtr-realtime): 1, 2-3, 1,3
  --dry-run          print the plan and change nothing
  --boot             also write the boot-only options as a grub drop-in
                     ({grub}/99-jtr.cfg); revert removes it
  --auto-revert SEC  revert by itself after SEC seconds unless 'jtr tune confirm'
                     (for remote machines: a profile that cuts you off undoes itself)
  --via-tuned        let the running tuned daemon apply it (jtr still snapshots and
                     restores what tuned leaves behind)
  --force            allow isolating every CPU, or the CPUs jtr runs on

The state folder is $JTR_STATE_DIR (default /run/jtr); results record the active
profile from its active-profile file.

examples:
  jtr tune show
  sudo jtr tune apply jtr-isolate --cpus 1 --dry-run
  sudo jtr tune apply jtr-latency && sudo jtr run && sudo jtr tune revert
  sudo jtr tune apply jtr-realtime --cpus 2-3 --auto-revert 120; sudo jtr tune confirm
"""


def _opts(args, spec):
    """Parse @args by @spec {option: takes a value}; (options, positionals)."""
    opts, pos, i = {}, [], 0
    while i < len(args):
        a = args[i]
        if a in spec:
            if spec[a]:
                if i + 1 >= len(args):
                    raise UsageError("%s needs a value; see 'jtr tune --help'" % a)
                opts[a] = args[i + 1]
                i += 1
            else:
                opts[a] = True
        elif a.startswith("-"):
            raise UsageError("unknown option '%s'; see 'jtr tune --help'" % a)
        else:
            pos.append(a)
        i += 1
    return opts, pos


def cmd_tune(args):
    if not args or args[0] in ("-h", "--help"):
        sys.stdout.write(USAGE.format(state=E.state_path(), grub=E.grub_dir()))
        return 0 if args else 2
    sub, rest = args[0], args[1:]
    if "-h" in rest or "--help" in rest:
        sys.stdout.write(USAGE.format(state=E.state_path(), grub=E.grub_dir()))
        return 0
    fn = {"list": do_list, "show": do_show, "apply": do_apply, "verify": do_verify,
          "revert": do_revert, "confirm": do_confirm}.get(sub)
    if fn is None:
        raise UsageError("unknown 'jtr tune %s'; use list, show, apply, verify, revert or "
                         "confirm" % sub)
    return fn(rest)


# ---------------------------------------------------------------- list, show

def do_list(args):
    _opts(args, {})
    for name in jtr_profiles():
        p = Profile(name, expand=False)
        inc = [os.path.basename(os.path.dirname(f)) for f in p.files[:-1]]
        print("%-14s %s%s" % (name, p.summary, " (includes %s)" % ", ".join(inc) if inc else ""))
    return 0


def knob_rows():
    """One row per setting the jtr profiles touch: label, now, when, here, set by."""
    rows, seen = [], {}

    def row(key, label, now, when, here, prof, value):
        if key in seen:
            seen[key]["set_by"].append("%s=%s" % (prof, value))
            return
        seen[key] = r = {"key": key, "label": label, "now": now, "when": when,
                         "supported": here[0], "why": here[1],
                         "set_by": ["%s=%s" % (prof, value)]}
        rows.append(r)

    profs = sorted((Profile(n, expand=False) for n in jtr_profiles()),
                   key=lambda p: (len(p.files), p.name))
    for prof in profs:
        name = prof.name
        short = name.replace("jtr-", "")
        own = prof.files[-1]
        from .profile import read_conf
        for sec, opts in read_conf(own).items():
            for k, v in opts.items():
                if sec in ("main", "variables") or k in ("enabled", "name"):
                    continue
                if sec == "scheduler" and k == "default_irq_smp_affinity":
                    continue            # shown with isolated_cores' rows
                for r in _rows_for(sec, k, v):
                    val = r[5] if len(r) > 5 else v
                    row(r[0], r[1], r[2], r[3], r[4], short,
                        val if len(val) < 24 else val[:21] + "...")
    return rows


def _file_row(label, path, how="text"):
    try:
        v = K.read_file(path)
        v = K.norm_bracket(v) if how == "bracket" else v
        return ("file:" + os.path.realpath(path), label, v, "runtime", (True, ""))
    except K.KnobError as e:
        return ("file:" + path, label, "-", "runtime", (False, str(e)))


def _rows_for(sec, k, v):
    if sec == "sysctl":
        return [_file_row(k, "/proc/sys/" + k.replace(".", "/"))]
    if sec == "sysfs":
        import glob
        paths = sorted({os.path.realpath(p) for p in glob.glob(k)})
        if not paths:
            return [("file:" + k, k, "-", "runtime", (False, "no such file on this kernel"))]
        return [_file_row(p, p) for p in paths]
    if sec == "vm":
        return [_file_row("THP enabled", E.THP + "enabled", "bracket")]
    if sec == "cpu" and k == "force_latency":
        ok = os.path.exists(K.DMA_LATENCY)
        return [("dma_latency", "cpu_dma_latency (us)",
                 str(K.read_dma_latency()) if ok else "-", "runtime",
                 (ok, "" if ok else "%s missing" % K.DMA_LATENCY))]
    if sec == "cpu" and k == "governor":
        ok = E.has_cpufreq()
        now = K.read_file(E.CPUFREQ % 0) if ok else "-"
        return [("governor", "cpufreq governor", now, "runtime",
                 (ok, "" if ok else "no cpufreq (%s missing: VM or no driver)"
                  % (E.CPUFREQ % 0)))]
    if sec == "scheduler" and k == "isolated_cores":
        irqs = K.irq_numbers()
        affs = {}
        for n in irqs:
            a = K.read_value(K.irq_entry(n, None))
            affs[a] = affs.get(a, 0) + 1
        tids = K.all_tids()
        pinned = sum(1 for t in tids if (K.task_stat(t) or ("", 0, 0))[1] & K.PF_NO_SETAFFINITY)
        return [("irqs", "IRQ affinity", "%d IRQs: %s" % (len(irqs), ", ".join(
                    "%s x%d" % (a, c) for a, c in sorted(affs.items(), key=str))),
                 "runtime", (True, "managed IRQs refuse (EPERM): the kernel places them; apply lists them")),
                _file_row("default IRQ affinity", "/proc/irq/default_smp_affinity"),
                ("tasks", "task affinity", "%d threads, %d pinned by the kernel"
                 % (len(tids), pinned), "runtime",
                 (True, "per-CPU kernel threads cannot move"))]
    if sec == "scheduler":
        return [("sched:" + k, "[scheduler] " + k, "-", "runtime", (True, ""))]
    if sec == "jtr_cpuset" and k == "cpus":
        ver, root = K.cpuset_root()
        here = (True, "cgroup v%d at %s (%s)" % (ver, root, "isolated partition" if ver == 2
                                                   else "exclusive cpuset, no load balancing")
                ) if ver else (False, root)
        d = os.path.join(root, "jtr-isolated") if ver else None
        return [("cpuset", "cpuset partition", "present" if d and os.path.isdir(d) else
                 "absent", "runtime", here)]
    if sec == "bootloader":
        ok, why = E.can_change_cmdline()
        out = []
        for word in v.lstrip("+").split():
            param = word.partition("=")[0]
            here = (ok, why if not ok else "")
            if param == "nohz_full" and not E.has_nohz_full():
                here = (False, "kernel built without CONFIG_NO_HZ_FULL")
            now = K.boot_param_now(param)
            eff = E.BOOT_ONLY_IN_EFFECT.get(param)
            if eff and os.path.exists(eff):
                now += " (in effect: %s)" % (K.read_file(eff) or "none")
            out.append(("boot:" + param, param, now, "boot", here, word.partition("=")[2]
                        or "(set)"))
        return out
    return [("%s:%s" % (sec, k), "[%s] %s" % (sec, k), "-", "runtime",
             (False, "not implemented by jtr's applier (--via-tuned)"))]


def dump():
    """Every value the profiles can change, as it is now (tests compare two dumps)."""
    d = {}
    for r in knob_rows():
        if r["key"].startswith("file:"):
            d[r["key"]] = r["now"]
    d["dma_latency"] = K.read_dma_latency() if os.path.exists(K.DMA_LATENCY) else None
    for n in K.irq_numbers():
        d["irq:%d" % n] = K.read_value(K.irq_entry(n, None))
    d["default_irq"] = K.read_file("/proc/irq/default_smp_affinity")
    mine = {int(t) for t in os.listdir("/proc/self/task")}
    for t in K.all_tids():
        st = K.task_stat(t)
        if t in mine:
            continue
        try:
            if st:
                d["task:%d:%d:%s" % (t, st[2], st[0])] = pack_cpulist(os.sched_getaffinity(t))
        except OSError:
            pass
    ver, root = K.cpuset_root()
    if ver:
        d["cpusets"] = sorted(n for n in os.listdir(root) if os.path.isdir(os.path.join(root, n)))
    d["active_profile"] = os.path.exists(E.active_path())
    d["grub_dropin"] = os.path.exists(os.path.join(E.grub_dir(), "99-jtr.cfg"))
    return d


def do_show(args):
    opts, _ = _opts(args, {"--json": False})
    rows = knob_rows()
    try:
        st, bad = E.active_state(), None
    except UsageError as e:
        st, bad = None, str(e)
    if "--json" in opts:
        print(json.dumps({"active": st["profile"] if st else None, "state_error": bad,
                          "knobs": rows, "dump": dump()}, indent=1))
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

def _print_plan(plan, out=sys.stdout):
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
            w, "task affinity", len(tasks), pack_cpulist(plan.isolated), ", ".join(names[:8]),
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


def do_apply(args):
    opts, pos = _opts(args, {"--cpus": True, "--dry-run": False, "--boot": False,
                             "--auto-revert": True, "--via-tuned": False, "--force": False})
    if len(pos) != 1:
        raise UsageError("give one profile to apply (%s); see 'jtr tune list'"
                         % ", ".join(jtr_profiles()))
    auto = None
    if "--auto-revert" in opts:
        try:
            auto = float(opts["--auto-revert"])
        except ValueError:
            auto = -1
        if not 5 <= auto <= 86400:
            raise UsageError("--auto-revert %s: give seconds from 5 to 86400"
                             % opts["--auto-revert"])
    cpus = E.check_cpus(opts["--cpus"], "--force" in opts) if "--cpus" in opts else []
    profile = E.load_profile(pos[0], cpus)
    if not cpus and "scheduler" in profile.units:
        cpus = [int(c) for c in profile.expand("${f:cpulist_unpack:${isolated_cores}}").split(",")]
        E.check_cpus(pack_cpulist(cpus), "--force" in opts)
    if "--dry-run" not in opts:
        E.need_root("apply")
        if E.active_state():
            st = E.active_state()
            raise UsageError("profile %s is applied (since %s); run 'jtr tune revert' first"
                             % (st["profile"], st["applied_at"]))
    plan = E.make_plan(profile, cpus)
    if any(e["label"] == "kernel.sched_rt_runtime_us" and e["target"] == "-1"
           for e in plan.entries):
        plan.warnings.append(E.RT_WARNING)
    house = [c for c in online_cpus() if c not in cpus]
    print("%s%s" % (profile.name, " on CPUs %s (housekeeping: %s)" % (
        pack_cpulist(cpus), pack_cpulist(house)) if cpus else ""))
    _print_plan(plan)
    if "--dry-run" in opts:
        print("dry run: nothing was changed")
        return 0
    st = E.apply(plan, boot="--boot" in opts, auto_revert_s=auto,
                 via_tuned="--via-tuned" in opts)
    res = [e.get("result", "tuned") for e in st["entries"]]
    failed = [e for e in st["entries"] if str(e.get("result", "")).startswith("failed")]
    print("applied %s: %s%d changed, %d already so, %d failed%s (snapshot: %s)" % (
        profile.name, "%d by tuned, " % res.count("by tuned") if "by tuned" in res else "",
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


# ---------------------------------------------------------------- verify, revert, confirm

def do_verify(args):
    _opts(args, {})
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


def do_revert(args):
    _opts(args, {})
    st = E.read_state()
    if st.get("status", "").startswith("reverted"):
        print("%s was already reverted at %s; nothing to do" % (st["profile"],
                                                               st.get("reverted_at")))
        return 0
    E.need_root("revert")
    if st.get("status") == "applying":
        print("the apply of %s did not finish (pid %s); restoring everything it may have "
              "changed" % (st["profile"], st.get("pid")))
    failed, gone = E.revert(st)
    print("reverted %s: %d settings restored from %s%s" % (
        st["profile"], len(st["entries"]) - len(failed) - gone, E.state_path(),
        "; %d tasks have exited since" % gone if gone else ""))
    for label, why in failed:
        print("  not restored: %s: %s" % (label, why))
    return 1 if failed else 0


def do_confirm(args):
    _opts(args, {})
    st = E.active_state()
    if not st:
        raise UsageError("no profile is applied: nothing to confirm")
    if st.get("confirmed"):
        print("%s is already confirmed" % st["profile"])
        return 0
    E.need_root("confirm")
    st["confirmed"] = True
    E.write_state(st)
    if st.get("auto_revert_pid"):
        E._kill_if(st["auto_revert_pid"], "_autorevert")
    print("%s confirmed: it stays applied until 'jtr tune revert'" % st["profile"])
    return 0


def autorevert(seconds, token):
    """The --auto-revert process: sleep, then revert unless confirmed."""
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    time.sleep(seconds)
    try:
        st = E.active_state()
    except UsageError as e:
        print("auto-revert: %s" % e)
        return 1
    if not st or st.get("applied_at") != token or st.get("confirmed"):
        return 0
    print("auto-revert: %s not confirmed in %g s: reverting" % (st["profile"], seconds))
    failed, _ = E.revert(st)
    for label, why in failed:
        print("  not restored: %s: %s" % (label, why))
    return 0

