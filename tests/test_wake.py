# SPDX-License-Identifier: GPL-2.0-only
"""jtr wake (timer wake-up latency) and jtr run wake (each late wake-up taken
apart), on the real kernel: the probe's own numbers against its files and
cyclictest's summary line, the schedule that never shifts, Ctrl-C, bad input,
and ground truth for the decomposition: a higher-priority SCHED_FIFO spinner is
the blocking thread, a lower-priority one is preempted, a disk interrupt steered
to the CPU is named by its IRQ."""
import csv
import os
import re
import shutil
import signal
import subprocess
import time

import pytest
from conftest import BIN, assert_usage_errors, load, need_tracing, run_jtr
from injection import cpus, host_held, outliers_during, part_of, run_folder, steered_disk

# the tests that run the probe are marked measures (alone, after the rest); the one
# of bad input judges what jtr wake refuses, which holds beside other tests

# cyclictest's summary line (rt-tests' print_stat), as tools that read it parse it
CYCLIC = re.compile(r"T:\s*(\d+)\s+\(\s*(\d+)\)\s+P:\s*(\d+)\s+I:\s*(\d+)\s+C:\s*(\d+)\s+"
                    r"Min:\s*(\d+)\s+Act:\s*(\d+)\s+Avg:\s*(\d+)\s+Max:\s*(\d+)")


@pytest.mark.measures
def test_wake_result_and_cyclictest_line(tmp_path, validate):
    cpu, _ = cpus()
    out = tmp_path / "w"
    p = run_jtr("wake", "-c", cpu, "-n", "400", "-i", "500us", "-o", out, check=True)
    res = validate(load(out))
    assert res["tool"] == "wake" and res["params"]["interval_ns"] == 500_000
    (r,) = res["runs"]
    assert r["cpu"] == cpu and r["wakeups"] == r["samples"] == 400
    assert r["histogram"]["total"] == 400 and 0 < r["min_ns"] <= r["max_ns"]
    # no period is lost: the measured span is the schedule's, 400 periods
    assert r["duration_ns"] == 400 * 500_000
    # the summary line as cyclictest prints it, in us, for this very run
    lines = [m for m in map(CYCLIC.search, p.stdout.splitlines()) if m]
    assert len(lines) == 1, p.stdout
    t, tid, prio, iv, c, mn, _, avg, mx = map(int, lines[0].groups())
    assert (t, tid, prio, iv, c) == (0, r["tid"], 0, 500, 400)
    assert mn == r["min_ns"] // 1000 and mx == r["max_ns"] // 1000
    assert mn <= avg <= mx
    assert lines[0].group(0) in (out / "summary.txt").read_text()
    # the outlier log: intended times on the schedule, every one above the threshold
    with open(out / "outliers.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == r["outliers"]["logged"]
    for row in rows:
        assert int(row["length_ns"]) > r["outliers"]["threshold_ns"]
        assert (int(row["start_ns"]) - r["start_mono_ns"]) % 500_000 == 0


@pytest.mark.measures
def test_every_wake_up_logged_with_threshold_zero(tmp_path):
    cpu, _ = cpus()
    out = tmp_path / "w"
    run_jtr("wake", "-c", cpu, "-n", "200", "--threshold", "0", "--warmup", "0", "-q",
            "-o", out, check=True)
    r = load(out)["runs"][0]
    with open(out / "outliers.csv") as f:
        starts = [int(row["start_ns"]) for row in csv.DictReader(f)]
    assert len(starts) == 200 == r["outliers"]["logged"]
    assert starts == [r["start_mono_ns"] + k * 1_000_000 for k in range(200)]


def test_wake_bad_input(tmp_path):
    assert_usage_errors(tmp_path, [
        (["wake", "-i", "1000"], "-i 1000: write the unit: -i 1000us is cyclictest's"),
        (["wake", "-i", "0us"], "out of range"),
        (["wake", "-d", "1", "-n", "5"], "-d and -n both given"),
        (["wake", "-d", "2ms", "-i", "5ms"], "shorter than one interval"),
        (["wake", "-c", "4096"], "-c 4096"),
        (["wake", "-f", "100"], "SCHED_FIFO priority must be 1-99"),
        (["wake", "--threshold", "fast"], "--threshold fast"),
        (["wake", "--cpu-dma-latency", "soon"], "--cpu-dma-latency soon"),
        (["wake", "extra"], "unexpected argument 'extra'"),
    ])


@pytest.mark.measures
def test_wake_ctrl_c_keeps_what_was_measured(tmp_path):
    cpu, _ = cpus()
    out = tmp_path / "w"
    p = subprocess.Popen([os.path.join(BIN, "jtr-wake"), "-c", str(cpu), "-d", "30", "-q",
                          "-o", str(out)], stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 130, err
    res = load(out)
    r = res["runs"][0]
    assert res["partial"] and r["partial"]
    assert 500 < r["wakeups"] < 30_000
    assert "interrupted; partial results in" in err.strip().splitlines()[-1]


def spinner(cpu, prio, spin_us, period_ms, duration_s, out):
    """tests/inject.py's FIFO spinner in a pid namespace of its own."""
    return subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc", "python3",
                             os.path.join(os.path.dirname(__file__), "inject.py"), "fifo",
                             str(cpu), "--prio", str(prio), "--spin-us", str(spin_us),
                             "--period-ms", str(period_ms), "--duration", str(duration_s),
                             "--out", str(out)])


@pytest.mark.measures
def test_late_wake_up_never_shifts_the_schedule(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("the spinner needs SCHED_FIFO: this run is not root")
    cpu, _ = cpus()
    out = tmp_path / "w"
    # 3.5 ms spins above the probe every 25 ms for 1 s: each holds 3 or 4 periods
    # (they begin with the probe here; its 1.5 s hold them all when the spinner
    # starts up to half a second later)
    spin = spinner(cpu, 20, 3500, 25, 1, tmp_path / "spins.csv")
    p = run_jtr("wake", "-c", cpu, "-f", "10", "-n", "1500", "-q", "-o", out, check=True)
    spin.wait(timeout=30)
    r = load(out)["runs"][0]
    spans = [tuple(map(int, x.split(","))) for x in (tmp_path / "spins.csv").read_text().split()]
    held = [s for s in spans if r["start_mono_ns"] < s[0] and s[1] < r["end_mono_ns"]]
    assert len(held) >= 20, p.stderr
    # every period is a sample, however late: none was skipped
    assert r["wakeups"] == 1500 and r["duration_ns"] == 1500 * 1_000_000
    # the periods that passed while the spinner held the CPU were not slept for
    assert r["missed"] >= 2 * len(held)
    assert r["max_ns"] >= 2_500_000


@pytest.mark.measures
def test_cyclictest_import_compares_with_wake(tmp_path):
    if not shutil.which("cyclictest"):
        pytest.skip("cyclictest is not installed (Debian: rt-tests)")
    if os.geteuid() != 0:
        pytest.skip("cyclictest needs root (mlockall, /dev/cpu_dma_latency)")
    cpu, _ = cpus()
    subprocess.run(["cyclictest", "-m", "-q", "-D", "2", "-t", "1", "-a", str(cpu), "-p", "80",
                    "-h", "2000", "--json=%s" % (tmp_path / "cyc.json")], check=True,
                   stdout=subprocess.DEVNULL, timeout=60)
    run_jtr("import", "-o", tmp_path / "cyc", tmp_path / "cyc.json", check=True)
    run_jtr("wake", "-c", cpu, "-f", "80", "-d", "2", "--cpu-dma-latency", "0", "-q",
            "-o", tmp_path / "w", check=True)
    p = run_jtr("compare", tmp_path / "cyc", tmp_path / "w", "--resamples", "200")
    assert p.returncode == 0, p.stderr
    assert "timer wake-up latency" in p.stdout + p.stderr
    assert "different" not in p.stderr


# --- jtr run wake: the decomposition against injected interference -----------

def decomposed_rows(folder):
    with open(folder / "decomposition.csv") as f:
        return list(csv.DictReader(f))


def check_sums(res, folder):
    """Every outlier's components add up to its latency; where its whole wake-up
    path was seen, unaccounted stays within the documented tolerance."""
    d = res["attribution"]["decomposition"]
    rows = decomposed_rows(folder)
    assert len(rows) == res["attribution"]["outliers"]["count"]
    keys = [c["component"] for c in d["components"]]
    for row in rows:
        if not row["irq_latency_ns"]:
            continue            # not traced
        assert sum(int(row[k + "_ns"]) for k in keys) == int(row["latency_ns"])
    assert d["within_tolerance"] >= 0.95 * d["complete"], d
    for w in res["attribution"]["worst"]:
        assert sum(w["components"].values()) == w["length_ns"]


@pytest.mark.measures
def test_higher_priority_spinner_is_the_blocking_thread(tmp_path, validate):
    need_tracing()
    cpu, _ = cpus()
    # 1.5 ms spins: each holds at least one whole period of the 1 ms schedule
    folder, res, spans, stdout = run_folder(
        tmp_path, cpu, ["fifo", str(cpu), "--prio", "20", "--spin-us", "1500",
                        "--period-ms", "23"], ["-f", "10"], probe="wake")
    validate(res)
    assert len(spans) >= 50
    att = res["attribution"]
    assert len(att["worst"]) == att["outliers"]["count"]

    def blocked_by_spinner(o):
        return part_of(o, "task preemption", name="jtr-inject") > 0

    n = stalled = 0
    for b, e in spans:
        found = [o for o in outliers_during(res, b, e) if blocked_by_spinner(o)]
        if not found:
            continue
        if any((o.get("components") or {}).get("stall", 0) for o in found):
            # the CPU stayed idle after the timer interrupt with both threads
            # woken and no kernel event (3.04 ms once, the host's steal counter still):
            # the machine held it, not the spinner (the stall jtr names); no ground
            # truth
            stalled += 1
            print("a spin inside a stall of the machine, left out: %d-%d" % (b, e))
            continue
        n += 1
        # the spin time: what the spinner kept of the outlier is the overlap of its
        # span (from its spin's start to its sleep: inject.py) with the outlier,
        # within the timer interrupt, the switch, its Python back from the sleep
        # before the span (156 us once, 201 us in a make test here: 300 us allowed)
        # and the host's steal inside
        o = max(found, key=lambda o: part_of(o, "task preemption", prefix="jtr-inject"))
        overlap = min(e, o["start_ns"] + o["length_ns"]) - max(b, o["start_ns"])
        kept = part_of(o, "task preemption", prefix="jtr-inject")
        # another task in the outlier's blocking part, over 100 us: the host's other
        # load took part of the window (236 us once in a make test); no ground truth
        # for this spin, counted with the stalls
        elsewhere = part_of(o, "task preemption") - kept
        if elsewhere > 100_000:
            stalled += 1
            print("a spin shared with another task (%d ns), left out: %d-%d"
                  % (elsewhere, b, e))
            continue
        # the timer interrupt's own parts inside the spin are not the spinner's (a
        # slow one, 42.5 + 50.1 us, took the lower bound 0.2 us past 100 us once)
        others = sum(v for k, v in (o.get("components") or {}).items() if k != "blocking")
        host = (o.get("components") or {}).get("host", 0)
        assert overlap - 100_000 - others <= kept <= overlap + 300_000 + host, (b, e, o)
        # the spinner's time is the largest part, unless the host took more: its
        # steal, or a timer interrupt it let come late to the idle vCPU before the
        # spin (1.72 ms once, no steal counted for a halted vCPU: the spinner's own
        # timer expired 1.32 ms late in the same interrupt), each named as it is
        dom = o["dominant"]
        assert dom == "blocking" or (dom in ("host", "irq_latency") and
                                     (o.get("components") or {}).get(dom, 0) >= kept), o
    assert stalled <= 0.1 * len(spans), "%d of %d spins in stalls or shared" % (
        stalled, len(spans))
    assert n >= 0.95 * (len(spans) - stalled), "%d of %d spins named as the blocking thread" % (
        n, len(spans) - stalled)
    assert "late wake-ups taken apart" in stdout and "blocking thread" in stdout
    check_sums(res, folder)


@pytest.mark.measures
def test_lower_priority_spinner_is_preempted(tmp_path):
    need_tracing()
    cpu, _ = cpus()
    folder, res, spans, _ = run_folder(tmp_path, cpu, ["fifo", str(cpu), "--prio", "5",
                                                       "--spin-us", "3000", "--period-ms", "10"],
                                       ["-f", "50", "--threshold", "0"], probe="wake", top=100)
    assert len(spans) >= 100
    rows = decomposed_rows(folder)
    during = [r for r in rows if r["irq_latency_ns"] and any(
        b < int(r["start_ns"]) < e for b, e in spans)]
    assert len(during) >= 100
    # every wake-up is decomposed; the probe preempts the spinner: past the timer
    # interrupt only the switch is left. (A wake-up the host stalled after the
    # timer interrupt shows the spinner holding the CPU past the 30 us a preemption
    # may take, and names it: the 5 % the ground truth allows.)
    named = [r for r in rows if r["blocking_task"].startswith("jtr-inject")]
    assert len(named) <= 0.05 * len(during), named[:3]
    quick = [r for r in during if int(r["scheduling_ns"]) < 30_000 and r["blocking_ns"] == "0"]
    assert len(quick) >= 0.95 * len(during)
    check_sums(res, folder)


def _disk_truth(res, irq, name):
    """(wake-ups listed with the disk's interrupt inside, those the host held,
    the listed wake-ups that name it) of a wake result. Ground truth from the
    event log itself: every entry of that interrupt inside a listed wake-up's
    timeline (the 3000 longest) is named there, but in a wake-up the host held
    for half or more (990 of 1,010 us once, in CI): the handler ran inside the
    host's hold, and its time is the host's."""
    att = res["attribution"]
    named = [o for o in att["worst"] if part_of(o, "hardirq", "%d %s" % (irq, name)) > 0]
    inside = held = 0
    for o in att["worst"]:
        hits = [x for x in o["events"] if re.search(r"irq_handler_entry %d " % irq, x)]
        t = [float(x.split()[0]) * 1000 for x in hits]
        if any(0 < ns < o["length_ns"] for ns in t):
            inside += 1
            if part_of(o, "hardirq", "%d %s" % (irq, name)) == 0:
                assert host_held(o), o
                held += 1
    return inside, held, named


@pytest.mark.measures
@pytest.mark.slow
def test_disk_interrupt_is_named_in_the_wake_up(tmp_path):
    need_tracing()
    cpu, other = cpus()
    # the ground truth needs completions inside the listed wake-ups; on a busy host
    # a run had only 6 (650 of 1,000 reads on a quiet one): such a run is made once
    # more, saying so
    for attempt in (1, 2):
        d = tmp_path / ("again" if attempt == 2 else "first")
        d.mkdir()
        with steered_disk(d, cpu) as (irq, name, data):
            # 200 us periods and a read every 2 ms, each issued at a random point of
            # a probe's period: completions land at every phase of the wake-ups, and
            # some inside them (a fixed phase put 650 of the 1,000 inside listed
            # wake-ups in one run and 3 in the next, on a quiet host). 100 us periods
            # doubled the wake-ups to take apart: 2.5 s more of attribution
            _, res, spans, _ = run_folder(d, cpu, ["disk", str(data), "--source",
                                                   str(other), "--period-ms", "2",
                                                   "--jitter-us", "200"],
                                          ["-i", "200us", "--threshold", "0"], probe="wake",
                                          top=3000)
        inside, held, named = _disk_truth(res, irq, name)
        if inside >= 10 or attempt == 2:
            break
        print("only %d listed wake-ups had the disk's interrupt inside (a busy host): "
              "again" % inside)
    assert len(spans) >= 200
    if held:
        print("%d of %d wake-ups with the interrupt inside were the host's" % (held, inside))
    assert inside >= 10 and held <= inside // 4 and len(named) >= inside - held
