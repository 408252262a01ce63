# SPDX-License-Identifier: GPL-2.0-only
"""JTR_RESULTS_FD: a front end learns where the results are without reading
stdout. The program writes the folder's absolute path and a newline to that
descriptor, in one write, once the folder is in place, partial results too."""
import os
import signal
import subprocess
import time

import pytest
from conftest import BIN, JTR, load

UDP_PORT = 20000 + os.getpid() % 20000


def start(prog, args, fd=None, env_fd=None):
    """build/bin/jtr-PROG with JTR_RESULTS_FD set to @env_fd (default @fd),
    @fd passed on."""
    env = {k: v for k, v in os.environ.items() if k not in ("JTR_PROG", "JTR_RESULTS_FD")}
    if fd is not None or env_fd is not None:
        env["JTR_RESULTS_FD"] = str(fd if env_fd is None else env_fd)
    return subprocess.Popen([os.path.join(BIN, "jtr-" + prog)] + [str(a) for a in args],
                            env=env, pass_fds=(fd,) if fd is not None else (),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def read_all(r):
    """Everything written to the pipe's read end @r until its writers close."""
    with os.fdopen(r) as f:
        return f.read()


def test_gap_says_where(tmp_path):
    out = tmp_path / "gap"
    r, w = os.pipe()
    p = start("gap", ["-d", "0.2", "-q", "-o", out], fd=w)
    os.close(w)
    said = read_all(r)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert said == "%s\n" % os.path.realpath(out)
    assert load(said.strip())["tool"] == "gap"


def test_partial_results_too(tmp_path):
    out = tmp_path / "part"
    r, w = os.pipe()
    p = start("gap", ["-d", "60", "-q", "-o", out], fd=w)
    os.close(w)
    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    said = read_all(r)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert said == "%s\n" % os.path.realpath(out)
    assert load(out)["partial"] is True


def test_pub_and_sub_say_where(tmp_path):
    addr = "127.0.0.1:%d" % UDP_PORT
    rs, ws = os.pipe()
    rp, wp = os.pipe()
    sub = start("sub", ["-T", "udp", "-P", addr, "--wait", "30", "-o", tmp_path / "sub"], fd=ws)
    os.close(ws)
    try:
        for line in sub.stderr:
            if "ready on" in line:
                break
        pub = start("pub", ["-T", "udp", "-P", addr, "-n", "2K", "-r", "20K", "-q", "-o",
                            tmp_path / "pub"], fd=wp)
        os.close(wp)
        assert read_all(rp) == "%s\n" % os.path.realpath(tmp_path / "pub")
        assert read_all(rs) == "%s\n" % os.path.realpath(tmp_path / "sub")
        assert pub.wait(timeout=60) == 0 and sub.wait(timeout=60) == 0
        assert load(tmp_path / "sub")["transport"]["measured"] > 0
    finally:
        for p in (sub,):
            if p.poll() is None:
                p.kill()


@pytest.mark.parametrize("value, warned", [("99", False), ("abc", True)])
def test_a_bad_descriptor_is_no_failure(tmp_path, value, warned):
    """A descriptor that is not open is ignored; a value that is not a number
    is said once on stderr; the run succeeds either way."""
    p = start("gap", ["-d", "0.1", "-q", "-o", tmp_path / "x"], env_fd=value)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert ("JTR_RESULTS_FD=abc is not a file descriptor number" in err) == warned
    assert (tmp_path / "x" / "result.json").is_file()


@pytest.mark.parametrize("name", [b"r\nun", b"x\xffy"], ids=["newline", "not-utf8"])
def test_jtr_run_takes_any_name_the_file_system_takes(tmp_path, name):
    """jtr run -o with a newline or a byte that is not UTF-8 in the name: the
    folder the probe reports is read whole (it was cut at the newline, or the byte
    replaced, and jtr run said 'no such result' and left its tracer's folder in
    /tmp); nothing is left in TMPDIR."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = os.path.join(os.fsencode(str(tmp_path)), name)
    env = dict(os.environ, TMPDIR=str(tmp))
    p = subprocess.run([os.fsencode(JTR), b"run", b"-c", b"1", b"-d", b"0.3", b"-q", b"-o", out],
                       env=env, capture_output=True)
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 0, err
    assert "Traceback" not in err
    res = load(os.fsdecode(out))
    assert res["tool"] == "gap" and "attribution" in res, sorted(res)
    assert os.listdir(tmp) == []
