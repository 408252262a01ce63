"""The Python side as a package: the wheel `pip install .` builds holds the front
end, the C programs (built by make), the tuning profiles and VERSION, and the
`jtr` it installs in a fresh venv finds its programs and profiles there, with no
source tree in sight. numpy and matplotlib are extras: without them the
commands that need them say how to get them."""
import glob
import os
import subprocess
import sys
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A fresh venv with jtr's wheel installed (no network: the wheel is built here
    with the test venv's setuptools, then installed from the file)."""
    tmp = tmp_path_factory.mktemp("pkg")
    wheels = tmp / "wheels"
    p = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation",
                        "--no-deps", "-q", "-w", str(wheels), ROOT],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    (whl,) = glob.glob(str(wheels / "jtr-*.whl"))
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    p = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-index", whl],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    return whl, venv, tmp


def jtr(installed, *args, **kw):
    _, venv, tmp = installed
    env = {k: v for k, v in os.environ.items()
           if k not in ("JTR_LIBEXEC", "JTR_PROFILE_DIRS", "PYTHONPATH")}
    return subprocess.run([str(venv / "bin" / "jtr")] + [str(a) for a in args], cwd=tmp,
                          env=env, capture_output=True, text=True, timeout=120, **kw)


def test_the_wheel_carries_programs_profiles_and_version(installed):
    names = zipfile.ZipFile(installed[0]).namelist()
    for prog in ("gap", "null", "clock", "send", "ping", "pong", "pub", "sub", "ipc", "trace"):
        assert "jtrpy/libexec/jtr-%s" % prog in names, prog
    assert "jtrpy/tuning-profiles/jtr-latency/tuned.conf" in names
    assert "jtrpy/VERSION" in names and "jtrpy/cli/main.py" in names


def test_the_installed_jtr_works_without_the_source_tree(installed, tmp_path):
    with open(os.path.join(ROOT, "VERSION")) as f:
        version = f.read().strip()
    p = jtr(installed, "--version")
    assert p.returncode == 0 and p.stdout == "jtr %s\n" % version
    p = jtr(installed, "gap", "-d", "200ms", "-q", "-o", tmp_path / "g")
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "g" / "result.json").is_file()
    p = jtr(installed, "tune", "list")
    assert p.returncode == 0 and "jtr-latency" in p.stdout, p.stderr
    p = jtr(installed, "help", "compare")
    assert p.returncode == 0 and p.stdout.startswith("usage: jtr compare")
    # numpy is an extra (jtr[compare]): the fresh venv has none
    p = jtr(installed, "compare", tmp_path / "g", tmp_path / "g")
    assert p.returncode == 1 and "needs numpy" in p.stderr and "jtr[compare]" in p.stderr
    assert p.stderr.count("\n") == 1
