"""The Python side as a package: the wheel `pip install .` builds holds the front
end, the C programs (built by make), the tuning profiles and VERSION, and the
`jtr` it installs in a fresh venv finds its programs and profiles there, with no
source tree in sight. numpy and matplotlib are extras: without them the
commands that need them say how to get them."""
import glob
import os
import shutil
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


def _fake_tools(tmp, missing, apt_rc=0):
    """A PATH whose dpkg-query says @missing are not installed, whose apt-get
    records what it installs and whether the policy-rc.d file was there, and whose
    systemctl records its calls."""
    bin_ = tmp / "bin"
    bin_.mkdir()
    log = tmp / "calls.log"
    tools = {
        "dpkg-query": 'for a; do pkg=$a; done\n'          # the package: the last word
                      'for p in %s; do [ "$pkg" = "$p" ] && exit 1; done\n'
                      'printf "install ok installed"\n' % " ".join(missing),
        "apt-get": 'if [ "$1" = install ]; then\n'
                   '  echo "apt-get $* policy=$(test -x "$POLICY_RC_D" && "$POLICY_RC_D"; '
                   'echo $?)" >> %s\n  exit %d\nfi\n' % (log, apt_rc),
        "systemctl": 'echo "systemctl $*" >> %s\n' % log,
    }
    for name, body in tools.items():
        (bin_ / name).write_text("#!/bin/sh\n" + body)
        (bin_ / name).chmod(0o755)
    return bin_, log


@pytest.mark.parametrize("apt_rc", [0, 100])
def test_deps_installs_daemons_without_starting_or_enabling_them(tmp_path, apt_rc):
    """scripts/deps.sh: tuned and prometheus are installed with a policy-rc.d that
    refuses every service start (exit 101) in place, removed afterwards (also when
    apt-get fails), then disabled where systemd runs, and it says so."""
    if os.geteuid() != 0:
        pytest.skip("deps.sh installs as root; this run is not root")
    bin_, log = _fake_tools(tmp_path, ["tuned", "prometheus", "gcc"], apt_rc)
    policy, systemd = tmp_path / "policy-rc.d", tmp_path / "systemd"
    systemd.mkdir()
    env = dict(os.environ, PATH="%s:%s" % (bin_, os.environ["PATH"]),
               POLICY_RC_D=str(policy), SYSTEMD_DIR=str(systemd), VENV=sys.prefix)
    p = subprocess.run(["sh", os.path.join(ROOT, "scripts", "deps.sh")], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=120)
    calls = log.read_text().splitlines()
    assert calls[0].startswith("apt-get install -y -q --no-install-recommends gcc tuned "
                               "prometheus "), calls
    assert calls[0].endswith("policy=101"), calls       # no service could start
    assert not policy.exists()                          # and the file is gone again
    if apt_rc:
        assert p.returncode == apt_rc and not calls[1:], (p.stdout, calls)
        return
    assert p.returncode == 0, p.stderr
    assert calls[1:] == ["systemctl disable --now tuned", "systemctl disable --now prometheus"]
    for d in ("tuned", "prometheus"):
        assert "deps: %s installed, its service not started nor enabled" % d in p.stdout


def test_deps_leaves_a_policy_it_did_not_write(tmp_path):
    """An existing policy-rc.d (a container's own) is neither replaced nor removed."""
    if os.geteuid() != 0:
        pytest.skip("deps.sh installs as root; this run is not root")
    bin_, log = _fake_tools(tmp_path, ["tuned"])
    policy = tmp_path / "policy-rc.d"
    policy.write_text("#!/bin/sh\nexit 0\n")
    policy.chmod(0o755)
    env = dict(os.environ, PATH="%s:%s" % (bin_, os.environ["PATH"]),
               POLICY_RC_D=str(policy), SYSTEMD_DIR=str(tmp_path / "none"), VENV=sys.prefix)
    p = subprocess.run(["sh", os.path.join(ROOT, "scripts", "deps.sh")], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert policy.read_text() == "#!/bin/sh\nexit 0\n"
    assert log.read_text().splitlines()[0].endswith("policy=0")
    assert "deps: tuned installed, its service not started nor enabled" in p.stdout


def test_the_probes_build_without_the_tracers_tools(tmp_path):
    """Without clang (or bpftool, libbpf's headers, the kernel's BTF) make builds every
    probe, says what the tracer needs, and jtr says it again when asked to trace."""
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "results", "__pycache__", ".pytest_cache"))
    p = subprocess.run(["make", "-s", "-j2", "all", "CLANG=/nonexistent/clang"], cwd=src,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "the kernel-event tracer (jtr-trace) is not built: missing /nonexistent/clang" \
        in p.stdout
    assert "apt-get install clang bpftool libbpf-dev" in p.stdout
    built = set(os.listdir(src / "build" / "bin"))
    assert {"jtr-gap", "jtr-null", "jtr-wake", "jtr-ping"} <= built
    assert "jtr-trace" not in built
    t = subprocess.run([str(src / "jtr"), "trace", "-d", "1"], capture_output=True, text=True,
                       timeout=60, env=dict(os.environ, JTR_LIBEXEC=str(src / "build" / "bin")))
    assert t.returncode == 1 and t.stderr.count("\n") == 1, t.stderr
    assert "jtr-trace is not built" in t.stderr and "libbpf-dev" in t.stderr
