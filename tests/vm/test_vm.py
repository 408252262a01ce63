# SPDX-License-Identifier: GPL-2.0-only
"""The kernels users run, booted in virtual machines (tests/vm/vm.py): Debian's
standard and PREEMPT_RT kernels under QEMU with the command lines jtr's boot-time
tuning writes, jtr's own programs run inside. `make test-vm` runs them (marked
vm: never in make test). Under TCG (this host) timings mean nothing: every
assertion is about counts, names and placement."""
import hashlib
import json
import os
import re
import shutil
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import vm  # noqa: E402
from conftest import ROOT, load  # noqa: E402
from injection import outliers_during, part_of  # noqa: E402

from jtrpy.trace import causes as C  # noqa: E402
from jtrpy.trace import events as E  # noqa: E402

pytestmark = [pytest.mark.vm, pytest.mark.root]

# the boot words of an isolated, tickless CPU 1 of two
ISOLATE = "isolcpus=managed_irq,domain,1 nohz_full=1 rcu_nocbs=1 irqaffinity=0"


def need_qemu():
    if shutil.which("qemu-system-x86_64") is None:
        pytest.skip("no qemu-system-x86_64 (Debian: qemu-system-x86; scripts/deps.sh vm)")
    if not any(os.path.exists(p) for p in vm.BUSYBOX):
        pytest.skip("no busybox (Debian: busybox-static; scripts/deps.sh vm)")
    if shutil.which("apt-get") is None:
        pytest.skip("no apt-get: the VMs boot Debian's kernels, fetched with it")


def boot(out, command, cwd=ROOT, **kw):
    """Run @command (a shell line) in a VM with its results folder @out, in folder
    @cwd (this tree): (exit status, console text)."""
    need_qemu()
    os.makedirs(out, exist_ok=True)
    rc, text = vm.run(["sh", "-c", command], out=str(out), cwd=str(cwd), **kw)
    print(text[-4000:])
    return rc, text


def host_boot_state():
    """What the host boots with: its command line, and every file under /boot and
    the boot loader's configuration with its content's hash."""
    files = {}
    for top in ("/boot", "/etc/default"):
        for d, _, names in os.walk(top):
            for n in names:
                p = os.path.join(d, n)
                try:
                    with open(p, "rb") as f:
                        files[p] = hashlib.sha256(f.read()).hexdigest()
                except OSError as e:
                    files[p] = str(e)
    with open("/proc/cmdline") as f:
        return f.read(), files


def local_timer_entries(folder, cpu):
    """The tick's entries (irq_vectors local_timer_entry) on @cpu in the event log
    of the result in @folder."""
    log = E.read_events(os.path.join(folder, "events.bin"))
    kinds = log.vectors
    n = 0
    for i in log.cpu_index.get(cpu, []):
        off = E.HEADER_SIZE + E.RECORD_SIZE * i
        typ = log.data[off + E.TYPE_OFFSET]
        if typ == E.VEC_ENTRY:
            _, _, _, _, _, _, b = E.HEAD.unpack_from(log.data, off)
            if 0 <= b < len(kinds) and kinds[b] == "local_timer":
                n += 1
    return n


def loc(text, cpu):
    """LOC (local timer interrupts) of @cpu in a /proc/interrupts text."""
    for line in text.splitlines():
        if line.strip().startswith("LOC:"):
            return int(line.split()[1 + cpu])
    raise AssertionError("no LOC line in:\n" + text)


def test_the_harness_runs_a_command_and_brings_its_results_back(tmp_path):
    """The command's exit status and files come back; the guest booted the
    distribution's kernel with the words asked for; the host's boot is as it
    was (its command line, /boot and /etc/default)."""
    before = host_boot_state()
    out, tree = tmp_path / "out", tmp_path / "tree"
    tree.mkdir()
    (tree / "marker").write_text("here\n")
    # the command runs in its folder, though it is under /tmp (the guest's own)
    rc, text = boot(out, "uname -r > %s/uname; cat /proc/cmdline > %s/cmdline; "
                    "cat /sys/devices/system/cpu/online > %s/online; cp marker %s/; exit 7"
                    % (out, out, out, out), cmdline="jtr_test_word=1", cpus=3, cwd=tree)
    assert rc == 7, text[-3000:]
    assert (out / "marker").read_text() == "here\n"
    # how it ran, said first: KVM, or TCG and why (this host's /dev/kvm is PVM)
    assert re.match(r"vm: \S+-amd64 under (KVM|TCG) \(", text), text[:300]
    uname = (out / "uname").read_text().strip()
    assert uname.endswith("-amd64") and uname != os.uname().release
    assert "jtr_test_word=1" in (out / "cmdline").read_text().split()
    assert (out / "online").read_text().strip() == "0-2"
    assert host_boot_state() == before


def test_a_failing_boot_says_why_and_leaves_nothing_running(tmp_path):
    """A kernel that is not one: exit 2 as a tool (VMError), no QEMU left."""
    need_qemu()
    bad = tmp_path / "vmlinuz"
    bad.write_bytes(b"not a kernel")
    with pytest.raises(vm.VMError):
        vm.run(["true"], kernel=str(bad), out=str(tmp_path / "o"), timeout=60)
    assert not [p for p in os.listdir("/proc") if p.isdigit() and _is_our_qemu(p, tmp_path)]


def _is_our_qemu(pid, tmp_path):
    try:
        with open("/proc/%s/cmdline" % pid, "rb") as f:
            cmd = f.read()
    except OSError:
        return False
    return b"qemu-system" in cmd and str(tmp_path).encode() in cmd


@pytest.mark.parametrize("kernel", ["std", "rt"])
def test_nohz_full_takes_the_tick_off_the_isolated_cpu(tmp_path, kernel):
    """isolcpus, nohz_full and rcu_nocbs on CPU 1 of two: jtr run (its eBPF tracer
    loads on Debian's 6.1 kernels, standard and PREEMPT_RT) counts at most one
    tick a second on CPU 1 and about HZ on CPU 0, each as the guest's own
    /proc/interrupts counts them (LOC, read around the runs). A tick on CPU 1
    is the residual tick, never the local timer; with a busy loop beside the
    probe there (two tasks: the scheduler needs the tick, TICK_DEP_MASK_SCHED)
    the tick runs at HZ and is named as kept by SCHED."""
    out = tmp_path / "out"
    cmd = ("cat /sys/devices/system/cpu/nohz_full > {o}/nohz_full; "
           "cat /sys/devices/system/cpu/isolated > {o}/isolated; uname -v > {o}/uname; "
           "cat /proc/interrupts > {o}/irq0; ./jtr run -c 1 -d 3 -q -o {o}/iso || exit 11; "
           "cat /proc/interrupts > {o}/irq1; ./jtr run -c 0 -d 3 -q -o {o}/house || exit 12; "
           "cat /proc/interrupts > {o}/irq2; "
           # the busy loop once jtr's tracer is in (attaching while a CPU spins
           # takes minutes under TCG: each code patch waits for that vCPU's turn)
           "unshare --pid --fork --mount-proc {py} {root}/tests/inject.py busy 1 "
           "--duration 3 --out {o}/busy.csv --delay 1 --start-when '{o}/.shared.partial-*' "
           "2> {o}/busy.err & I=$!; "
           "./jtr run -c 1 -d 8 --top 100000 -q -o {o}/shared || exit 13; wait $I || exit 14; "
           "cat /proc/interrupts > {o}/irq3").format(o=out, py=sys.executable, root=ROOT)
    rc, text = boot(out, cmd, kernel=kernel, cmdline=ISOLATE, timeout=240)
    assert rc == 0, text[-3000:]
    assert (out / "nohz_full").read_text().strip() == "1"
    assert (out / "isolated").read_text().strip() == "1"
    assert ("PREEMPT_RT" in (out / "uname").read_text()) == (kernel == "rt")
    iso, house = load(out / "iso"), load(out / "house")
    for res in (iso, house):
        assert res["attribution"]["tracer"]["backend"] == "ebpf", res["attribution"]["tracer"]
    irq = [(out / ("irq%d" % k)).read_text() for k in range(4)]
    # CPU 1: its own ticks during its run, as the tracer saw them and the kernel counted
    ticks1 = local_timer_entries(out / "iso", 1)
    assert ticks1 <= loc(irq[1], 1) - loc(irq[0], 1)
    assert ticks1 <= 3 + 1, "nohz_full CPU 1 took %d ticks in 3 s" % ticks1
    ticks0 = local_timer_entries(out / "house", 0)
    print("%s: ticks in 3 s: %d on nohz_full CPU 1, %d on CPU 0" % (kernel, ticks1, ticks0))
    assert ticks0 <= loc(irq[2], 0) - loc(irq[1], 0)
    assert ticks0 >= 100 * 3, "housekeeping CPU 0 took only %d ticks in 3 s" % ticks0
    names = {(c["category"], c["name"]) for c in house["attribution"]["causes"]}
    assert ("timer tick", "local timer") in names
    ticks = [c for c in iso["attribution"]["causes"] if c["category"] == "timer tick"]
    assert sum(c["count"] for c in ticks) <= 3 + 1, ticks
    # on the nohz_full CPU a tick is the residual one (or one a dependency kept)
    assert all(c["name"] == "residual tick" or c["name"].startswith("tick kept by ")
               for c in ticks), [c["name"] for c in ticks]
    # the busy loop beside the probe for 3 s: the tick kept by SCHED while it
    # ran, as the tracer's timer:tick_stop records and the guest's LOC say
    shared = load(out / "shared")
    (b, e), = [tuple(map(int, x.split(","))) for x in (out / "busy.csv").read_text().split()]
    log = E.read_events(str(out / "shared" / "events.bin"))
    nohz, states = log.tick_states()
    assert nohz == {1}
    kept_at = [t for t, s in zip(*states.get(1, ([], []))) if s == (0, 4)]
    assert kept_at and b <= kept_at[0] < e, (b, e, states)
    ticks_shared = local_timer_entries(out / "shared", 1)
    print("%s: CPU 1 with a busy loop beside the probe for %.1f s: %d ticks in the 8 s run "
          "(LOC %d)" % (kernel, (e - b) / 1e9, ticks_shared, loc(irq[3], 1) - loc(irq[2], 1)))
    assert ticks_shared >= 50 * (e - b) / 1e9, ticks_shared
    during = [o for o in shared["attribution"]["worst"] if o["category"] == "timer tick"
              and b <= o["start_ns"] < e]
    kept = [o for o in during if "local timer (nohz_full, the tick kept by SCHED: more than "
            "one task runnable here)" in o["chain"]]
    assert during and len(kept) >= 0.9 * len(during), [o["chain"] for o in during][:3]
    assert "tick kept by SCHED" in {c["name"] for c in shared["attribution"]["causes"]}
    assert C.rule_of("timer tick", "tick kept by SCHED") == "tasks"


BOOT_WORDS = ["isolcpus=domain,managed_irq,1", "nohz_full=1", "rcu_nocbs=1", "irqaffinity=0",
              "skew_tick=1", "nosoftlockup"]


def test_boot_time_tuning_is_applied_verified_and_reverted_across_reboots(tmp_path):
    """jtr tune apply jtr-isolate --boot in the VM writes its drop-in into the VM's
    own boot configuration; the next boot has its words, verify checks each
    where the kernel shows it (isolated, nohz_full, rcu_nocbs's kthreads, the
    default IRQ affinity, managed IRQs off CPU 1: the device IRQs took none
    there); revert, run after that reboot (jtr's state folder, /run/jtr, went
    with it: the snapshot's copy for boot options is read), takes them out and
    the boot after is as the first."""
    bootdir, out = tmp_path / "boot", tmp_path / "out"
    o1, o2, o3 = out / "1", out / "2", out / "3"
    rc, text = boot(o1, "./jtr tune apply jtr-isolate --cpus 1 --boot > {o}/apply 2>&1 || exit 11; "
                    "./jtr tune verify > {o}/verify 2>&1; cat /proc/cmdline > {o}/cmdline"
                    .format(o=o1), boot_dir=str(bootdir), timeout=240)
    assert rc == 0, (o1 / "apply").read_text() if (o1 / "apply").exists() else text[-3000:]
    dropin = (bootdir / "grub.d" / "99-jtr.cfg").read_text()
    assert dropin.split('"')[1].split()[1:] == BOOT_WORDS, dropin
    assert (bootdir / "state" / "tune-state.json").exists()
    print((o1 / "verify").read_text())
    assert "boot options pending the next boot (not checked): " + " ".join(BOOT_WORDS) \
        in (o1 / "verify").read_text()
    assert not set(BOOT_WORDS) & set((o1 / "cmdline").read_text().split())

    rc, text = boot(o2, "cat /proc/cmdline > {o}/cmdline; cat /proc/interrupts > {o}/irq; "
                    "./jtr tune verify > {o}/verify 2>&1; echo $? > {o}/verify_rc; "
                    "./jtr tune revert > {o}/revert 2>&1 || exit 12".format(o=o2),
                    boot_dir=str(bootdir), timeout=240)
    assert rc == 0, (o2 / "revert").read_text() if (o2 / "revert").exists() else text[-3000:]
    assert set(BOOT_WORDS) <= set((o2 / "cmdline").read_text().split())
    verify = (o2 / "verify").read_text()
    print(verify + (o2 / "revert").read_text())
    assert "booted since the apply: its 6 boot options checked (all in effect)" in verify, verify
    assert not [x for x in verify.splitlines() if x.startswith("  boot: ")], verify
    # its runtime settings went with the reboot: said, not matched against the
    # objects of this boot (a task of the first boot's tid is another task now)
    assert re.search(r"^  runtime settings: want as applied \(\d+\), now gone with the reboot$",
                     verify, re.M), verify
    assert (o2 / "verify_rc").read_text().strip() == "1"
    revert = (o2 / "revert").read_text()
    assert revert.startswith("reverted jtr-isolate: 1 setting restored from %s"
                             % (bootdir / "state" / "tune-state.json")), revert
    # the device IRQs (virtio, the ACPI one) took none on the isolated CPU
    lines = [x.split() for x in (o2 / "irq").read_text().splitlines()[1:]]
    devices = [x for x in lines if x and x[0].rstrip(":").isdigit()]
    assert devices and all(int(x[2]) == 0 for x in devices), (o2 / "irq").read_text()
    assert not (bootdir / "grub.d" / "99-jtr.cfg").exists()
    assert not (bootdir / "state" / "tune-state.json").exists()

    rc, text = boot(o3, "cat /proc/cmdline > {o}/cmdline; ./jtr tune verify > {o}/verify 2>&1; "
                    "echo $? > {o}/verify_rc".format(o=o3), boot_dir=str(bootdir), timeout=120)
    assert rc == 0, text[-3000:]
    assert not set(BOOT_WORDS) & set((o3 / "cmdline").read_text().split())
    assert (o3 / "verify_rc").read_text().strip() == "2"
    assert "no profile is applied" in (o3 / "verify").read_text()


RT_SCRIPT = r"""
O={o}
# the request queue's IRQ of the 9p device the guest reads its files from, steered
# to CPU 1, and reads through it (page cache dropped each time) while jtr runs there
irq=$(grep -m1 'virtio0-requests' /proc/interrupts | cut -d: -f1 | tr -d ' ')
echo "$irq" > $O/irq
echo 1 > /proc/irq/$irq/smp_affinity_list || exit 21
( end=$(( $(cut -d. -f1 /proc/uptime) + 20 ))
  while [ $(cut -d. -f1 /proc/uptime) -lt $end ] && [ ! -e $O/stop ]; do
      cat {root}/README.md > /dev/null; echo 1 > /proc/sys/vm/drop_caches; done ) &
reader=$!
# the spins 1 s after the run's hidden folder is there, and the run long after them:
# under TCG the folder came 2.8 s into a run once, the spins' Python later still,
# and a 4 s run ended with 15 of 19 spins after it
unshare --pid --fork --mount-proc {py} {root}/tests/inject.py fifo 1 --prio 10 --spin-us 2000 \
    --period-ms 100 --duration 2 --out $O/inject.csv --delay 1 \
    --start-when "$O/.run.partial-*" 2> $O/inject.err &
injector=$!
./jtr run -c 1 -d 10 --top 100000 -q -o $O/run > $O/run.txt 2>&1 || exit 22
wait $injector || exit 23
touch $O/stop; wait $reader
./jtr run wake -c 1 -d 2 -f 80 -q -o $O/wake > $O/wake.txt 2>&1 || exit 24
"""


def test_preempt_rt_names_threaded_irqs_and_a_fifo_spinner(tmp_path):
    """On Debian's PREEMPT_RT kernel: the 9p device's IRQ steered to CPU 1 runs in its
    thread there, and jtr run charges its interrupts to that thread, named whole
    (irq/N-virtio0-requests, N the IRQ steered, at FIFO 50) and advise's rule for it
    is the IRQ's (its affinity moves it); a FIFO spinner above the probe is named in
    the outliers that hold its spins, as on the standard kernel; jtr wake decomposes
    its late wake-ups there (the wake-up path differs: softirqs and timers in
    threads)."""
    out = tmp_path / "out"
    rc, text = boot(out, RT_SCRIPT.format(o=out, root=ROOT, py=sys.executable), kernel="rt",
                    timeout=300)
    assert rc == 0, ((out / "run.txt").read_text() if (out / "run.txt").exists() else "") + \
        text[-3000:]
    irq = int((out / "irq").read_text())
    res = load(out / "run")
    causes = res["attribution"]["causes"]
    threads = [c for c in causes if c["category"] == "task preemption"
               and c["name"].startswith("irq/%d-" % irq)]
    assert threads and threads[0]["count"] >= 1, [(c["category"], c["name"]) for c in causes]
    # named whole (the comm holds 15 characters: irq/25-virtio0-)
    assert threads[0]["name"] == "irq/%d-virtio0-requests" % irq
    assert threads[0]["tasks"][0]["prio"] == 49           # FIFO 50, as the kernel makes them
    assert C.rule_of(C.TASK, threads[0]["name"]) == "irq"
    spans = [tuple(map(int, x.split(","))) for x in (out / "inject.csv").read_text().split()]
    run = res["runs"][0]
    inside = [(b, e) for b, e in spans if run["start_mono_ns"] < b and e < run["end_mono_ns"]]
    assert len(inside) >= 10, (len(inside), len(spans))
    named = [s for s in inside if any(part_of(o, "task preemption", name="jtr-inject") > 0
                                      for o in outliers_during(res, *s))]
    print("IRQ %d: %s %d outliers; %d of %d spins in an outlier charged to jtr-inject; "
          "the spins from %.2f s into the run to %.2f s before its end" % (
              irq, threads[0]["name"], threads[0]["count"], len(named), len(inside),
              (spans[0][0] - run["start_mono_ns"]) / 1e9,
              (run["end_mono_ns"] - spans[-1][1]) / 1e9))
    assert len(named) >= 0.8 * len(inside), (len(named), len(inside))
    wake = load(out / "wake")
    assert wake["tool"] == "wake" and wake["runs"][0]["samples"] > 0
    assert "attribution" in wake and not wake.get("partial")
    # each late wake-up taken apart: the timer IRQ's latency, the IRQ, the wake-up path
    cats = {c["category"] for c in wake["attribution"]["causes"]}
    assert {"timer IRQ latency", "wake-up path"} <= cats, cats
    assert wake["attribution"]["decomposition"]


def test_jtr_ab_of_a_boot_time_profile_across_a_reboot(tmp_path):
    """jtr ab jtr-isolate --boot: the baseline run on the plain command line, the
    profile applied with its boot options, a reboot, then jtr ab --resume: the
    tuned run on the profile's command line, the revert (the boot after is
    plain), and a verdict; the counts say what the boot options did: the
    tracer's ticks on CPU 1 go from about HZ a second to almost none."""
    bootdir, out = tmp_path / "boot", tmp_path / "out"
    ab = out / "ab"
    rc, text = boot(out, "./jtr ab jtr-isolate --cpus 1 --boot -d 2 -o {ab} > {o}/ab1 2>&1"
                    .format(ab=ab, o=out), boot_dir=str(bootdir), timeout=240)
    assert rc == 0, (out / "ab1").read_text() if (out / "ab1").exists() else text[-3000:]
    assert "reboot, then: jtr ab --resume %s" % ab in (out / "ab1").read_text()
    record = load(ab / "a-1")
    assert record["tool"] == "gap"
    rc, text = boot(out, "./jtr ab --resume {ab} > {o}/ab2 2>&1; echo $? > {o}/ab2_rc; "
                    "cat /proc/cmdline > {o}/cmdline2".format(ab=ab, o=out),
                    boot_dir=str(bootdir), timeout=240)
    said = (out / "ab2").read_text()
    print(said)
    assert rc == 0 and (out / "ab2_rc").read_text().strip() == "0", said + text[-2000:]
    assert set(BOOT_WORDS) <= set((out / "cmdline2").read_text().split())
    doc = json.loads((ab / "ab.json").read_text())
    assert doc["phase"] == "done" and doc["verdict"] and not doc["partial"]
    assert doc["boot_options_not_in_effect"] == []
    assert [r["name"] for r in doc["runs"]] == ["a-1", "b-1"]
    assert not (bootdir / "grub.d" / "99-jtr.cfg").exists()
    ticks = [local_timer_entries(ab / side, 1) for side in ("a-1", "b-1")]
    print("ticks on CPU 1 in 2 s: baseline %d, %s with its boot options %d"
          % (ticks[0], "jtr-isolate", ticks[1]))
    # at least 100 a second without; with, a twentieth of that at most (6 of 555
    # once: the tick stops once one task runs there, after the probe's start)
    assert ticks[0] >= 100 * 2 and ticks[1] * 20 <= ticks[0], ticks
    rc, text = boot(out, "cat /proc/cmdline > {o}/cmdline3".format(o=out),
                    boot_dir=str(bootdir), timeout=120)
    assert not set(BOOT_WORDS) & set((out / "cmdline3").read_text().split())


def test_advise_proves_its_boot_time_remedy_across_a_reboot(tmp_path):
    """jtr advise on a run that lost time to the tick names the boot remedy
    (nohz_full, rcu_nocbs); --prove --boot measures the baseline and applies the
    advised profile with those boot words; after the reboot --resume measures
    again and the proof says the tick's time went away (its counts before and
    after), and the boot after is plain."""
    bootdir, out = tmp_path / "boot", tmp_path / "out"
    prove = out / "prove"
    rc, text = boot(out, "./jtr run -c 1 -d 2 -q -o {o}/run || exit 11; "
                    "./jtr advise {o}/run > {o}/advice 2>&1 || exit 12; "
                    "./jtr advise --prove --boot -d 2 -o {p} {o}/run > {o}/prove1 2>&1"
                    .format(o=out, p=prove), boot_dir=str(bootdir), timeout=240)
    said = (out / "prove1").read_text() if (out / "prove1").exists() else ""
    print((out / "advice").read_text() if (out / "advice").exists() else "", said)
    assert rc == 0, said + text[-3000:]
    assert "reboot, then: jtr advise --resume %s" % prove in said
    advice = json.loads((prove / "advice.json").read_text())
    tick = [r for r in advice["remedies"] if r["rule"] == "tick"]
    assert tick and tick[0]["applicable"], advice["remedies"]
    dropin = (bootdir / "grub.d" / "99-jtr.cfg").read_text()
    assert "nohz_full=1" in dropin and "rcu_nocbs=1" in dropin, dropin
    rc, text = boot(out, "./jtr advise --resume {p} > {o}/prove2 2>&1; echo $? > {o}/rc2"
                    .format(o=out, p=prove), boot_dir=str(bootdir), timeout=240)
    said = (out / "prove2").read_text()
    print(said)
    assert rc == 0 and (out / "rc2").read_text().strip() == "0", said + text[-2000:]
    proof = json.loads((prove / "prove.json").read_text())
    row = {r["rule"]: r for r in proof["remedies"]}["tick"]
    # the tick's outliers: many before, a handful at most after (counts, not times)
    assert row["before_count"] >= 20 and row["after_count"] * 10 <= row["before_count"], row
    assert not (bootdir / "grub.d" / "99-jtr.cfg").exists()


MANAGED_SCRIPT = r"""
O={o}
irq=$(grep -m1 'virtio2-req' /proc/interrupts | cut -d: -f1 | tr -d ' ')
echo "$irq" > $O/irq
cat /proc/irq/$irq/effective_affinity_list > $O/effective
grep -E "^ *$irq:" /proc/interrupts > $O/before
# reads from CPU 0 through the disk's one request queue while jtr runs on CPU 1
taskset -c 0 sh -c 'while [ ! -e {o}/stop ]; do
    dd if=/dev/vda of=/dev/null bs=64k count=100 iflag=direct 2>/dev/null; done' &
./jtr run -c 1 -d 3 -q -o $O/run > $O/run.txt 2>&1 || exit 31
touch $O/stop; wait
grep -E "^ *$irq:" /proc/interrupts > $O/after
"""


@pytest.mark.parametrize("managed", [True, False])
def test_managed_irq_keeps_a_disks_queue_interrupt_off_the_isolated_cpu(tmp_path, managed):
    """A virtio disk with one request queue: its IRQ is managed (the kernel places
    it, affinity 0-1). With isolcpus=domain,managed_irq,1 the kernel puts it on
    CPU 0: reads take no interrupt on CPU 1 and CPU 1's attribution has no cause of
    that IRQ; with isolcpus=domain,1 alone it lands on CPU 1, and the attribution
    names it there (counted by the guest's /proc/interrupts both times)."""
    need_qemu()
    disk = tmp_path / "disk.img"
    with open(disk, "wb") as f:
        f.truncate(64 << 20)
    out = tmp_path / "out"
    words = "isolcpus=domain,%s1" % ("managed_irq," if managed else "")
    rc, text = boot(out, MANAGED_SCRIPT.format(o=out), cmdline=words, timeout=240,
                    disks=[(str(disk), 1)])
    assert rc == 0, ((out / "run.txt").read_text() if (out / "run.txt").exists() else "") + \
        text[-3000:]
    irq = int((out / "irq").read_text())
    counts = [[int(x) for x in (out / f).read_text().split()[1:3]] for f in ("before", "after")]
    on = [a - b for a, b in zip(counts[1], counts[0])]       # per CPU, during the run
    causes = {(c["category"], c["name"]): c for c in load(out / "run")["attribution"]["causes"]}
    name = ("hardirq", "%d virtio2-req.0" % irq)
    print("%s: IRQ %d effective on %s; interrupts during the run: CPU 0 %d, CPU 1 %d; "
          "CPU 1's attribution: %s" % (words, irq, (out / "effective").read_text().strip(),
                                       on[0], on[1], causes.get(name, {}).get("count")))
    if managed:
        assert (out / "effective").read_text().strip() == "0"
        assert on[1] == 0 and on[0] > 0, on
        assert name not in causes
    else:
        assert (out / "effective").read_text().strip() == "1"
        assert on[1] > 0, on
        assert causes[name]["count"] >= 1
