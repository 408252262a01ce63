# SPDX-License-Identifier: GPL-2.0-only
"""jtr run app end to end: the calls of a function of an unmodified program
(build/tests/jtr-app-target, tests/apps/) timed with uprobes and each slow one
explained, against interference of known cause (tests/inject.py), in its
executable and in a shared library, started by jtr (-- CMD) or given by --pid;
and the refusals (exit 2, the reason) for what cannot be timed."""
import os
import re
import resource
import shutil
import subprocess
import sys

import pytest
from conftest import JTR, ROOT, load, need_tracing, on_a_terminal, run_jtr
from injection import (
    INJECT,
    cpus,
    need_ipi_senders,
    outliers_during,
    part_of,
    steered_disk,
)

from jtrpy.system.elf import Symbols
from jtrpy.values import parse_cpulist

TARGET = os.path.join(ROOT, "build", "tests", "jtr-app-target")
LIB = os.path.join(ROOT, "build", "tests", "libjtr-target.so")
RUN_S = 3.5             # the target's run
INJECT_AFTER_S = 0.5    # after the tracer is in
INJECT_S = 2


def inject_cmd(tmp_path, args, out):
    """tests/inject.py in a pid namespace of its own (it pins itself), waiting
    for the tracer's folder to be there, then INJECT_AFTER_S more."""
    return ["unshare", "--pid", "--fork", "--mount-proc", sys.executable, INJECT] + args + [
        "--duration", str(INJECT_S), "--out", str(tmp_path / "inject.csv"),
        "--delay", str(INJECT_AFTER_S), "--start-when", str(out.parent / ".run.partial-*")]


def app_run(tmp_path, app_args, inject=None, target_args=(), pid_mode=False):
    """`jtr run app` of the target on the last CPU with --top covering every slow
    call, while tests/inject.py injects @inject (its arguments, or None):
    (result, injections inside the run, stdout)."""
    need_tracing()
    cpu, _ = cpus()
    out = tmp_path / "run"
    targ = [TARGET, "-c", str(cpu), "-d", str(RUN_S)] + list(target_args)
    injector = subprocess.Popen(inject_cmd(tmp_path, inject, out), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) if inject else None
    held = None
    try:
        if pid_mode:
            held = subprocess.Popen(targ, stdout=subprocess.PIPE, text=True)
            assert held.stdout.readline().startswith("ready ")
            cmd = ["--pid", str(held.pid), "-d", str(RUN_S)] + list(app_args)
        else:
            cmd = list(app_args) + ["--"] + targ
        p = run_jtr("run", "app", "-c", cpu, "--top", 100000, "-o", out, *cmd, timeout=120)
    finally:
        if injector:
            _, err = injector.communicate(timeout=60)
            assert injector.returncode == 0, err
        if held:
            held.kill()
            held.wait()
    assert p.returncode == 0, p.stdout + p.stderr
    res = load(out)
    assert res["tool"] == "app" and "attribution" in res, p.stdout + p.stderr
    spans = []
    if inject:
        r = res["runs"][0]
        text = open(tmp_path / "inject.csv").read()
        spans = [tuple(map(int, x.split(","))) for x in text.split()]
        inside = [(b, e) for b, e in spans if r["start_mono_ns"] < b and e < r["end_mono_ns"]]
        assert len(inside) >= 0.9 * len(spans), "the injection must fall inside the run"
        spans = inside
    return res, spans, p.stdout


def slow_calls_during(res, spans):
    """The distinct slow calls (outliers) that overlap an injection."""
    return list({o["start_ns"]: o for b, e in spans for o in outliers_during(res, b, e)}.values())


def held_whole(res, spans):
    """(begin, end, call) of the slow calls that hold an injection's whole span and
    ran through it: a call whose thread another task preempted (a busy loop on its
    CPU) may have been off its CPU when the interrupt came, which then took time
    from that task, not from the call (and is charged inside its preemption)."""
    return [(b, e, o) for b, e in spans for o in outliers_during(res, b, e)
            if o["start_ns"] <= b and e <= o["start_ns"] + o["length_ns"]
            and not part_of(o, "task preemption")]


def fifo_inject(cpu):
    return ["fifo", str(cpu), "--prio", "10", "--spin-us", "300", "--period-ms", "20"]


def assert_charged_to_spinner(res, spans):
    """≥ 95 % of the slow calls that overlap a spin charged to the spinner (the
    calls back to back: a schedule of their own keeps one phase to the
    spinner's, and every spin fell between two calls, or none did)."""
    assert len(spans) >= 60, len(spans)
    slow = slow_calls_during(res, spans)
    assert len(slow) >= 0.5 * len(spans), (len(slow), len(spans))
    mine = [o for o in slow if part_of(o, "task preemption", name="jtr-inject") > 0]
    assert len(mine) >= 0.95 * len(slow), "%d of %d slow calls during a spin charged to " \
        "jtr-inject; the others: %s" % (len(mine), len(slow),
                                       [o["chain"] for o in slow if o not in mine][:3])
    # the spin's time is in the call: the spinner's part is most of a spin
    assert sum(part_of(o, "task preemption", name="jtr-inject") for o in mine) >= \
        0.8 * 300_000 * len(mine)


@pytest.mark.measures
def test_slow_calls_of_a_program_jtr_starts_are_charged_to_a_fifo_spinner(tmp_path):
    cpu, _ = cpus()
    res, spans, stdout = app_run(tmp_path, ["--func", TARGET + ":on_tick",
                                            "--threshold", "150us"],
                                 inject=fifo_inject(cpu), target_args=["-i", "0", "-w", "50"])
    assert_charged_to_spinner(res, spans)
    run = res["runs"][0]
    # every call is in the histogram, the warm-up's 100 aside: the target says how
    # many it made (started held, it made none before the probes were in)
    made = int(re.search(r"^calls (\d+)$", stdout, re.M).group(1))
    assert run["calls"] == run["histogram"]["total"] == run["samples"] == made - 100
    assert res["params"]["function"] == "on_tick" and run["tid"] > 0
    assert "task preemption" in stdout and "jtr-inject" in stdout


@pytest.mark.measures
def test_a_shared_library_function_of_a_running_process(tmp_path):
    cpu, _ = cpus()
    res, spans, _ = app_run(tmp_path, ["--func", "libjtr-target.so:lib_tick",
                                       "--threshold", "150us"], inject=fifo_inject(cpu),
                            target_args=["-i", "0", "-w", "50", "--lib"], pid_mode=True)
    # --pid: the library the process maps, seen through its /proc/PID/root
    assert re.fullmatch(r"/proc/\d+/root%s" % re.escape(os.path.realpath(LIB)),
                        res["params"]["binary"]), res["params"]["binary"]
    assert res["params"]["function"] == "lib_tick"
    assert_charged_to_spinner(res, spans)


@pytest.mark.measures
def test_each_ipi_in_a_call_names_its_sender(tmp_path):
    need_tracing()
    cpu, other = cpus()
    need_ipi_senders(cpu)
    # calls of 250 us back to back (a schedule of their own would keep one phase
    # to the injector's: every read between two calls, or none), every one of
    # them an outlier: an IPI's few us are no threshold's to find; the IPI of a
    # read that a call holds whole was taken inside that call
    res, spans, _ = app_run(tmp_path, ["--func", TARGET + ":on_tick", "--threshold", "1ns"],
                            inject=["ipi", str(cpu), "--source", str(other), "--period-ms", "5"],
                            target_args=["-i", "0", "-w", "250"])
    held = held_whole(res, spans)
    assert len(held) >= 50, (len(held), len(spans))
    named = [o for _, _, o in held
             if "IPI call_function_single from jtr-inject (pid" in o["chain"]]
    assert len(named) >= 0.95 * len(held), "%d of %d calls holding a cpuid read name its " \
        "sender; not: %s" % (len(named), len(held),
                             [o["chain"] for _, _, o in held if o not in named][:3])
    ipi = [c for c in res["attribution"]["causes"] if c["name"] == "call_function_single"]
    assert ipi and any(s["sender"].startswith("jtr-inject (pid") for s in ipi[0]["senders"])


@pytest.mark.measures
def test_a_disk_interrupt_steered_to_the_cpu_is_charged(tmp_path):
    need_tracing()
    cpu, other = cpus()
    with steered_disk(tmp_path, cpu) as (irq, name, path):
        res, spans, _ = app_run(
            tmp_path, ["--func", TARGET + ":on_tick", "--threshold", "1ns"],
            inject=["disk", path, "--source", str(other), "--period-ms", "5"],
            target_args=["-i", "0", "-w", "250"])
    # the read's completion interrupt comes inside its span: a call holding the
    # whole span held the interrupt
    held = held_whole(res, spans)
    assert len(held) >= 50, (len(held), len(spans))
    hit = [o for _, _, o in held if part_of(o, "hardirq", prefix="%d " % irq) > 0]
    assert len(hit) >= 0.95 * len(held), "%d of %d calls holding a read charged to irq %d " \
        "(%s); not: %s" % (len(hit), len(held), irq, name,
                           [o["chain"] for _, _, o in held if o not in hit][:3])


@pytest.mark.measures
def test_its_own_waits_are_named_with_their_waker(tmp_path):
    res, _, stdout = app_run(tmp_path, ["--func", TARGET + ":on_tick", "--threshold",
                                        "150us"],
                             target_args=["-i", "1000", "-w", "20", "--wait-every", "20",
                                          "--sleep-every", "30"])
    calls = res["runs"][0]["calls"] + 100           # and the warm-up's
    causes = {(c["category"], c["name"]): c for c in res["attribution"]["causes"]}
    futex, sleep = causes[("blocked", "futex")], causes[("blocked", "clock_nanosleep")]
    # every wait after the warm-up is a slow call of its own, charged to it: the
    # target's waits counted, not assumed (call n waits when n % 20 == 0). Up to
    # 2 % fewer: on this kind of host a switch to one task of the host's agent
    # (tokio-rt-worker, a thread of pid 1) is never followed by a switch away
    # from it (bpftrace sees the same), and a wait that went through it can end
    # unseen inside another
    for cause, every in ((futex, 20), (sleep, 30)):
        waits = calls // every - 100 // every
        assert 0.98 * waits <= cause["count"] <= waits, (cause["name"], cause["count"], waits)
    # the wait is the main cause of its call (every 60th call waits twice: then
    # one of the two is)
    waited = [o for o in res["attribution"]["worst"] if part_of(o, "blocked")]
    main = [o for o in waited if max(o["parts"], key=lambda p: p["ns"])["category"] == "blocked"]
    assert len(main) >= 0.95 * len(waited), [o["chain"] for o in waited if o not in main][:3]
    # each names its waker: the thread that signalled, or the sleep's own timer
    for name, pattern in (("futex", r"blocked in futex → woken by jtr-app-waker \(pid \d+, "
                                    r"CPU \d+\) after [\d.]+ [um]s"),
                          ("clock_nanosleep", r"blocked in clock_nanosleep → woken by its "
                                              r"timer hrtimer_wakeup on CPU \d+ after")):
        waited = [o for o in res["attribution"]["worst"] if part_of(o, "blocked", name)]
        named = [o for o in waited if re.search(pattern, o["chain"])]
        assert len(named) >= 0.95 * len(waited), (name, len(named), len(waited), [
            o["chain"] for o in waited if o not in named][:3])
    # the call's own work is not the host's: its median is charged as its own path
    assert ("own path", "the call's median") in causes
    assert "blocked" in stdout


def has_usdt():
    return ("jtr_target", "tick_start") in Symbols(TARGET).usdt


@pytest.mark.measures
def test_a_usdt_pair_times_every_call_between_its_probes(tmp_path):
    """--usdt: the target's jtr_target:tick_start and tick_end around each call;
    every call it made counted, not one more or less."""
    need_tracing()
    if not has_usdt():
        pytest.skip("the test program was built without <sys/sdt.h> (Debian: "
                    "systemtap-sdt-dev): it has no USDT probes")
    cpu, _ = cpus()
    res, spans, stdout = app_run(tmp_path, ["--usdt", TARGET + ":jtr_target:tick_start,tick_end",
                                            "--threshold", "150us"], inject=fifo_inject(cpu),
                                 target_args=["-i", "0", "-w", "50"])
    made = int(re.search(r"^calls (\d+)$", stdout, re.M).group(1))
    run = res["runs"][0]
    assert run["calls"] + 100 == made, (run["calls"], made)
    assert res["params"]["usdt"] is True
    assert res["params"]["function"] == "jtr_target:tick_start,tick_end"
    assert_charged_to_spinner(res, spans)


@pytest.mark.measures
def test_a_pid_in_another_mount_namespace(tmp_path):
    """The target run from a tmpfs only its own mount namespace has: its binary
    is found through /proc/PID/root."""
    need_tracing()
    cpu, _ = cpus()
    script = ('mount -t tmpfs none "$1" && cp "$2" "$3" "$1"/ && '
              'exec "$1"/jtr-app-target -c %d -d 3' % cpu)
    where = tmp_path / "mnt"
    where.mkdir()
    held = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                             script, "sh", str(where), TARGET, LIB],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert held.stdout.readline().startswith("ready ")
        assert not os.path.exists(where / "jtr-app-target")    # not in ours
        p = run_jtr("run", "app", "--pid", held.pid, "--func", "jtr-app-target:on_tick",
                    "-c", cpu, "-d", "2", "-o", tmp_path / "run", timeout=60)
    finally:
        held.kill()
        held.wait()
    assert p.returncode == 0, p.stderr
    res = load(tmp_path / "run")
    assert res["params"]["binary"] == "/proc/%d/root%s/jtr-app-target" % (held.pid, where)
    assert res["runs"][0]["calls"] >= 1000


@pytest.mark.measures
def test_as_a_user_with_capabilities(nobody_folder):
    """Not root: with CAP_BPF and CAP_PERFMON the tracepoints load but this
    kernel makes uprobes for CAP_SYS_ADMIN only (exit 2, saying so, nothing
    written); with it too, the run is the user's: its folder is theirs."""
    need_tracing()
    top, _ = nobody_folder
    top = os.path.join(top, "home")     # the user's own folder
    os.mkdir(top)
    os.chown(top, 65534, 65534)
    cpu, _ = cpus()
    run_as = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    if subprocess.run(run_as + ["--inh-caps=+bpf", "--ambient-caps=+bpf", "true"],
                      capture_output=True).returncode != 0:
        pytest.skip("this setpriv does not know CAP_BPF (util-linux before 2.37)")
    cmd = [os.path.join(ROOT, "jtr"), "run", "app", "--func", TARGET + ":on_tick", "-c", str(cpu)]
    target = ["--", TARGET, "-c", str(cpu), "-d", "1"]
    caps = "+bpf,+perfmon"
    p = subprocess.run(run_as + ["--inh-caps=" + caps, "--ambient-caps=" + caps] + cmd +
                       ["-o", os.path.join(top, "a")] + target, capture_output=True, text=True,
                       timeout=60, cwd=top)
    assert p.returncode == 2, p.stderr
    assert "lets only root or CAP_SYS_ADMIN make uprobes" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr and not os.path.exists(os.path.join(top, "a"))
    caps += ",+sys_admin"
    p = subprocess.run(run_as + ["--inh-caps=" + caps, "--ambient-caps=" + caps] + cmd +
                       ["-o", os.path.join(top, "b")] + target, capture_output=True, text=True,
                       timeout=60, cwd=top)
    assert p.returncode == 0, p.stderr
    # the locked-memory limit it inherits (8 MB here) below what the rings and
    # the outlier logs map (68 MB here): the hint names jtr trace's options that
    # map less
    limit = resource.getrlimit(resource.RLIMIT_MEMLOCK)[0]
    if limit != resource.RLIM_INFINITY and limit < 32 << 20:
        assert "memory not locked" in p.stderr and \
            "lower -b/--buffer or --max-outliers" in p.stderr, p.stderr
    out = os.path.join(top, "b")
    assert os.stat(out).st_uid == 65534
    assert all(os.stat(os.path.join(out, f)).st_uid == 65534 for f in os.listdir(out))
    res = load(out)
    assert res["tool"] == "app" and res["runs"][0]["calls"] >= 500 and "attribution" in res


def test_refusals_say_why(tmp_path):
    """Exit 2 and the reason, nothing written, for what cannot be timed."""
    need_tracing()
    stripped = tmp_path / "stripped"
    shutil.copy(TARGET, stripped)
    subprocess.run(["strip", str(stripped)], check=True)
    script = tmp_path / "script.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    gone = subprocess.Popen(["true"])
    gone.wait()
    out = tmp_path / "x"
    cases = [
        (["--func", TARGET + ":on_tick", "--pid", gone.pid], "no process %d" % gone.pid),
        (["--func", TARGET + ":nope", "--", TARGET], "no function nope in it"),
        (["--func", TARGET + ":clock_nanosleep", "--", TARGET],
         "imported from a shared library"),
        (["--func", "%s:on_tick" % stripped, "--", stripped], "it is stripped"),
        (["--func", "%s:main" % script, "--", script], "not an ELF binary"),
        (["--func", "on_tick", "--", TARGET], "give the binary and the function"),
        (["--func", TARGET + ":on_tick"], "give the process with --pid PID"),
        (["--func", TARGET + ":on_tick", "--", "/nonexistent/prog"], "no such program"),
        (["--func", "/nonexistent/bin:f", "--", TARGET], "no such file"),
        (["--func", TARGET + ":on_tick", "--pid", os.getpid(), "--", TARGET],
         "--pid and -- CMD: give one of them"),
        (["--usdt", TARGET + ":jtr_target:nope,tick_end", "--", TARGET],
         "no USDT probe jtr_target:nope in it"),
        (["--usdt", TARGET + ":tick_start", "--", TARGET],
         "give the binary, the provider and the two probes"),
        (["--func", TARGET + ":on_tick", "--usdt", TARGET + ":p:a,b", "--", TARGET],
         "--func and --usdt: give one of them"),
        (["--", TARGET], "give the function with --func BINARY:SYMBOL, or a USDT pair"),
        (["--func", TARGET + ":on_tick", "--max-lost", "1%", "--", TARGET],
         "unknown option '--max-lost'"),
    ]
    for args, msg in cases:
        p = run_jtr("run", "app", "-o", out, *args, timeout=30)
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        assert msg in p.stderr and "Traceback" not in p.stderr, (args, p.stderr)
    assert not out.exists()


def test_progress_and_the_programs_own_lines_share_a_terminal(tmp_path):
    """On a terminal the program started with -- CMD writes to too, progress is
    whole lines every 3 s, not one line redrawn in place: the program's lines
    came glued to it ('...0 droppedcalls 3000')."""
    need_tracing()
    cpu, _ = cpus()
    rc, seen = on_a_terminal([os.path.join(ROOT, "jtr"), "run", "app", "--func",
                              TARGET + ":on_tick", "-c", str(cpu), "-o", str(tmp_path / "r"),
                              "--", TARGET, "-c", str(cpu), "-d", "3.6"])
    assert rc == 0, seen
    lines = seen.decode().replace("\r\n", "\n").split("\n")
    assert any(re.fullmatch(r"jtr run app: timing on_tick 3 s: \d+ calls, \d+ slow; \d+ "
                            r"events, \d+ dropped", x) for x in lines), seen
    assert any(re.fullmatch(r"calls \d+", x) for x in lines), seen      # the program's own
    # nothing redrawn in place while it runs (jtr's own progress after it exits
    # is: attributing)
    assert b"\x1b[K" not in seen[:seen.index(b"\ncalls ")], seen
    # on a terminal of its own (the program's output elsewhere) it is one line
    # redrawn, as for every probe: tests/test_probes.py


def test_help_has_examples():
    p = run_jtr("run", "app", "--help")
    assert p.returncode == 0
    assert "--func BINARY:SYMBOL" in p.stdout and "examples:" in p.stdout.lower()


@pytest.mark.measures
def test_jtr_keeps_itself_off_the_programs_cpu_and_takes_q(tmp_path):
    """While the program runs, jtr's own process (its wait for the program polls)
    may run on every CPU but the one the program is pinned to; after the run it
    is as before (jtr ab starts the program again from there). -q leaves out the
    tracer's own summary and keeps jtr run's report."""
    need_tracing()
    cpu, _ = cpus()
    p = subprocess.Popen([JTR, "run", "app", "-q", "-c", str(cpu), "--func", TARGET + ":on_tick",
                          "-o", str(tmp_path / "run"), "--", TARGET, "-c", str(cpu), "-d", "2"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = set()
    while p.poll() is None:
        try:
            with open("/proc/%d/status" % p.pid) as f:
                line = [x for x in f if x.startswith("Cpus_allowed_list:")][0]
            seen.add(line.split()[1])
        except (OSError, IndexError):
            pass
        subprocess.run(["sleep", "0.05"])
    out, err = p.communicate()
    assert p.returncode == 0, out + err
    allowed = [set(parse_cpulist(s)) for s in seen]
    assert any(cpu not in a for a in allowed), seen
    assert "outliers" in out and load(tmp_path / "run")["tool"] == "app"



@pytest.mark.measures
def test_a_slow_attach_is_waited_for_and_said(tmp_path):
    """A tracer that takes long to attach (minutes on an emulated machine beside a
    busy CPU) is waited for, the program held until it traces, and the wait is
    said on a terminal (a 30 s limit held the program back for good there: no
    call timed). Here jtr-trace starts 4 s late."""
    need_tracing()
    cpu, _ = cpus()
    libexec = tmp_path / "libexec"
    libexec.mkdir()
    slow = libexec / "jtr-trace"
    slow.write_text("#!/bin/sh\nsleep 4\nexec %s \"$@\"\n"
                    % os.path.join(ROOT, "build", "bin", "jtr-trace"))
    slow.chmod(0o755)
    env = dict(os.environ, JTR_LIBEXEC=str(libexec))
    env.pop("JTR_PROG", None)
    rc, seen = on_a_terminal([JTR, "run", "app", "--func", TARGET + ":on_tick", "-c", str(cpu),
                              "-o", str(tmp_path / "r"), "--", TARGET, "-c", str(cpu), "-d", "1"],
                             env=env)
    assert rc == 0, seen
    assert b"waiting for jtr-trace to attach its programs" in seen, seen
    assert load(tmp_path / "r")["runs"][0]["calls"] >= 900 - 100
