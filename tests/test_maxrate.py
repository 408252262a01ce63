"""jtr maxrate: the search converges on a receiver of known speed (jtr sub
--max-rate) over a lossy and a back-pressured transport, stops at --to, keeps
the table and maxrate.json when interrupted, and refuses bad input with one
line and exit 2."""
import json
import os
import signal
import subprocess
import time

import pytest
from conftest import JTR, load, run_jtr
from test_transports import free_port


@pytest.fixture(autouse=True)
def no_shm_left():
    yield
    prefix = "jtr-mr%d-" % os.getpid()
    for f in os.listdir("/dev/shm"):
        if f.startswith(prefix):
            os.unlink(os.path.join("/dev/shm", f))


def addr(kind):
    if kind == "shm":
        return "mr%d-%d" % (os.getpid(), free_port())
    return "127.0.0.1:%d" % free_port()


def passed_rates(doc):
    return {s["rate_hz"] for s in doc["steps"] if s["pass"]}


def check_folder(out, doc):
    assert doc["format"] == "jtr-maxrate/1"
    for st in doc["steps"]:
        for side in ("pub", "sub"):
            assert load(os.path.join(out, st["folder"], side))["tool"] == side
        assert st["verdict"] == "pass" if st["pass"] else st["verdict"].startswith("FAIL")


@pytest.mark.parametrize("kind,ceiling", [("udp", 5000), ("shm", 10000)])
def test_converges_on_a_known_ceiling(tmp_path, kind, ceiling):
    out = tmp_path / "mr"
    # a failed step during which the host stole any CPU time is run again, uncounted
    # (--max-steal 0.5: one 10 ms tick of the two CPUs' 1 s is 1 %)
    p = run_jtr("maxrate", "-T", kind, "-P", addr(kind), "-d", "0.3", "--from", "1K",
                "--sub", "--max-rate %d" % ceiling, "--max-late", "100", "--retries", "1",
                "--max-steal", "0.5", "-o", out, timeout=240)
    assert p.returncode == 0, p.stdout + p.stderr
    doc = json.loads((out / "maxrate.json").read_text())
    check_folder(str(out), doc)
    ans = doc["max_rate_hz"]
    assert doc["state"] == "done"
    assert 0.85 * ceiling <= ans <= 1.05 * ceiling, p.stdout
    assert doc["first_bad_hz"] > ans and (doc["first_bad_hz"] - ans) <= 0.05 * ans + 1
    firsts = [s for s in doc["steps"] if s["try"] == 1]   # retries aside
    assert firsts[0]["rate_hz"] == 1000
    for a, b in zip(firsts, firsts[1:]):                    # doubling while passing
        if b["rate_hz"] > a["rate_hz"] * 1.5:
            assert b["rate_hz"] == 2 * a["rate_hz"] and a["rate_hz"] in passed_rates(doc)
    assert any(not s["pass"] for s in doc["steps"])
    # every rate at or below the answer passed in one of its tries
    assert all(s["rate_hz"] in passed_rates(doc) for s in doc["steps"] if s["rate_hz"] <= ans)
    for s in doc["steps"]:
        assert s["steal_pct"] is None or 0 <= s["steal_pct"] <= 100
        assert s["noisy"] == (not s["pass"] and (s["steal_pct"] or 0) > 0.5)
    assert "max sustainable rate: {:,} msgs/s".format(ans) in p.stdout
    assert "rate asked" in p.stdout and p.stdout.count("FAIL") >= 1


def test_stops_at_to(tmp_path):
    out = tmp_path / "mr"
    p = run_jtr("maxrate", "-P", addr("udp"), "-d", "0.3", "--from", "500", "--to", "1K",
                "--max-steal", "0.5", "-o", out, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    doc = json.loads((out / "maxrate.json").read_text())
    # a step may be run again (retries, host steal), but only these two rates
    assert [s["rate_hz"] for s in doc["steps"] if s["pass"]] == [500, 1000]
    assert {s["rate_hz"] for s in doc["steps"]} == {500, 1000}
    assert doc["state"] == "reached --to" and doc["max_rate_hz"] == 1000
    assert ">= 1,000 msgs/s" in p.stdout


@pytest.mark.parametrize("how", ["ctrl-c", "ctrl-c-ignored", "term"])
def test_ctrl_c_keeps_the_table(tmp_path, how):
    """Ctrl-C (SIGINT to the process group), also when jtr started with SIGINT
    ignored as a script's background job does, and SIGTERM to jtr alone: the
    search stops, the children are stopped, the table is kept."""
    out = tmp_path / "mr"
    ignore = how == "ctrl-c-ignored"
    p = subprocess.Popen([JTR, "maxrate", "-P", addr("udp"), "-d", "1", "--from", "1K",
                          "-o", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True,
                         preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
                         if ignore else None)
    try:
        end = time.monotonic() + 30
        while not (out / "maxrate.json").exists() and time.monotonic() < end:
            time.sleep(0.05)
        assert (out / "maxrate.json").exists()
        time.sleep(0.5)                                 # in the middle of a step
        if how == "term":
            p.send_signal(signal.SIGTERM)
        else:
            os.killpg(p.pid, signal.SIGINT)             # what Ctrl-C in a terminal does
        so, se = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    assert p.returncode == 130, so + se
    assert "interrupted after" in so and "1,000" in so
    doc = json.loads((out / "maxrate.json").read_text())
    assert doc["state"] == "interrupted" and doc["max_rate_hz"] >= 1000
    # the step that was running was stopped, not left behind
    left = subprocess.run(["pgrep", "-s", str(p.pid)], capture_output=True, text=True)
    assert left.stdout.strip() == "", "left running: " + left.stdout


def test_help():
    p = run_jtr("maxrate", "--help", check=True)
    assert "usage: jtr maxrate" in p.stdout and "examples:" in p.stdout
    assert "maxrate" in run_jtr("--help").stdout


@pytest.mark.parametrize("args,says", [
    (["-T", "carrier-pigeon"], "-T carrier-pigeon"),
    (["--from", "0"], "--from 0"),
    (["--from", "fast"], "--from fast"),
    (["--from", "2M", "--to", "1M"], "above --to"),
    (["-d", "1ms"], "100ms to 1h"),
    (["-m", "8"], "-m 8"),
    (["--tolerance", "0"], "--tolerance 0"),
    (["--retries", "x"], "--retries x"),
    (["--sub", "'unclosed"], "--sub"),
    (["--frobnicate"], "unknown option"),
    (["-T"], "needs a value"),
])
def test_bad_input(tmp_path, args, says):
    p = run_jtr("maxrate", "-o", tmp_path / "mr", *args, cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and says in p.stderr, p.stderr
    assert not (tmp_path / "mr").exists()


def test_existing_folder_is_refused(tmp_path):
    p = run_jtr("maxrate", "-o", tmp_path)
    assert p.returncode == 2 and "exists" in p.stderr


def test_sub_max_rate_bad_value():
    p = run_jtr("sub", "--max-rate", "0")
    assert p.returncode == 2 and "--max-rate" in p.stderr
