# SPDX-License-Identifier: GPL-2.0-only
"""The Python side as a package: the wheel `pip install .` builds holds the front
end, the C programs (built by make), the tuning profiles and VERSION, and the
`jtr` it installs in a fresh venv finds its programs and profiles there, with no
source tree in sight. numpy and matplotlib are extras: without them the
commands that need them say how to get them."""
import glob
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# make test runs these beside the measuring tests, on the first CPU alone at
# SCHED_IDLE (scripts/beside.sh): builds and installs into folders of their own,
# short untraced runs on the CPU this process may use
pytestmark = pytest.mark.beside


# what a user's shell has, not this test run's: no venv, no make jobserver
CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in (
    "JTR_LIBEXEC", "JTR_PROFILE_DIRS", "PYTHONPATH", "VIRTUAL_ENV", "MAKEFLAGS", "MFLAGS",
    "MAKELEVEL", "PIP_NO_BUILD_ISOLATION", "PIP_NO_INDEX", "PYTHONUSERBASE")}
# pip's words when it cannot reach the package index for setuptools
OFFLINE = ("NewConnectionError", "Temporary failure in name resolution",
           "Network is unreachable", "No matching distribution found for setuptools")


def clone(dest):
    """A clone of the commit this tree is at (HEAD: what is committed, as a user gets it)."""
    if not shutil.which("git"):
        pytest.skip("no git on this machine (apt-get install git)")
    head = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True,
                          text=True)
    if head.returncode != 0:
        pytest.skip("%s is not a git checkout: no clone to install from" % ROOT)
    for argv in (["git", "clone", "-q", "--no-checkout", ROOT, str(dest)],
                 ["git", "-C", str(dest), "checkout", "-q", head.stdout.strip()]):
        subprocess.run(argv, check=True, capture_output=True, timeout=120)
    assert not (dest / "build").exists()
    return dest


def pip_install(argv, env=None):
    """pip install, with build isolation (setuptools from the package index)."""
    p = subprocess.run(argv, capture_output=True, text=True, timeout=900,
                       env=env or CLEAN_ENV)
    if p.returncode != 0 and any(w in p.stdout + p.stderr for w in OFFLINE):
        pytest.skip("pip cannot reach the package index for setuptools (build isolation): "
                    + (p.stdout + p.stderr).strip().splitlines()[-1])
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return p


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The wheel `pip install .` builds from a fresh clone of this tree (build
    isolation on: pip fetches setuptools into a build environment of its own; the
    C programs built by make inside it), built once: pip install, pip install
    --user and pipx install each install it as they would after building it
    themselves; (the wheel, a fresh venv whose pip built it, a folder)."""
    tmp = tmp_path_factory.mktemp("pkg")
    src = clone(tmp / "clone")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    pip_install([str(venv / "bin" / "pip"), "wheel", "-q", "--no-deps",
                 "--disable-pip-version-check", "-w", str(tmp / "wheels"), str(src)])
    (whl,) = glob.glob(str(tmp / "wheels" / "jtr-*.whl"))
    return whl, venv, tmp


@pytest.fixture(scope="module")
def installed(wheel):
    """`pip install .` in a fresh venv: the clone's wheel installed there;
    (the venv's jtrpy folder, the venv, a folder to run in)."""
    whl, venv, tmp = wheel
    pip_install([str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check",
                 whl])
    (pkg,) = glob.glob(str(venv / "lib" / "python3*" / "site-packages" / "jtrpy"))
    return pathlib.Path(pkg), venv, tmp


def jtr(installed, *args, **kw):
    _, venv, tmp = installed
    return subprocess.run([str(venv / "bin" / "jtr")] + [str(a) for a in args], cwd=tmp,
                          env=CLEAN_ENV, capture_output=True, text=True, timeout=120, **kw)


@pytest.mark.slow
def test_the_install_carries_programs_profiles_and_version(installed):
    pkg = installed[0]
    for prog in ("gap", "null", "clock", "send", "ping", "pong", "pub", "sub", "ipc") + \
            (("trace",) if os.path.exists(os.path.join(ROOT, "build", "bin", "jtr-trace"))
             else ()):
        assert os.access(pkg / "libexec" / ("jtr-" + prog), os.X_OK), prog
    assert (pkg / "tuning-profiles" / "jtr-latency" / "tuned.conf").is_file()
    assert (pkg / "VERSION").is_file() and (pkg / "cli" / "main.py").is_file()


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



@pytest.mark.slow
def test_pip_install_user_from_a_clone(wheel, tmp_path):
    """`pip install --user .` with the system python3, the clone's wheel: jtr in
    ~/.local/bin (HOME a fresh folder here) finds its programs and profiles in the
    package. Debian 12's python3 is externally managed (PEP 668): pip wants
    --break-system-packages even for --user, as docs/install.md says."""
    py = "/usr/bin/python3"
    if not os.path.exists(py) or subprocess.run([py, "-m", "pip", "--version"],
                                                capture_output=True).returncode != 0:
        pytest.skip("no pip for %s (apt-get install python3-pip)" % py)
    home = tmp_path / "home"
    home.mkdir()
    env = dict(CLEAN_ENV, HOME=str(home), PIP_BREAK_SYSTEM_PACKAGES="1")
    pip_install([py, "-m", "pip", "install", "--user", "-q", "--disable-pip-version-check",
                 wheel[0]], env)
    works(str(home / ".local" / "bin" / "jtr"), env, tmp_path)


@pytest.mark.slow
def test_pipx_install_from_a_clone(wheel, tmp_path):
    """`pipx install .` (its own venv), the clone's wheel: the jtr
    it links finds its programs and profiles in the package."""
    if not shutil.which("pipx"):
        pytest.skip("pipx is not installed (Debian: pipx, in scripts/deps.sh)")
    env = dict(CLEAN_ENV, HOME=str(tmp_path / "home"), PIPX_HOME=str(tmp_path / "pipx"),
               PIPX_BIN_DIR=str(tmp_path / "bin"))
    pip_install(["pipx", "install", wheel[0]], env)
    works(str(tmp_path / "bin" / "jtr"), env, tmp_path)


def works(jtr_, env, tmp_path):
    """The installed @jtr_ runs: its version, a short gap run, its profiles."""
    p = subprocess.run([jtr_, "--version"], env=env, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0 and p.stdout.startswith("jtr "), p.stdout + p.stderr
    p = subprocess.run([jtr_, "gap", "-d", "200ms", "-q", "-o", str(tmp_path / "g")], env=env,
                       cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "g" / "result.json").is_file()
    p = subprocess.run([jtr_, "tune", "list"], env=env, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0 and "jtr-latency" in p.stdout, p.stderr

DEPS = os.path.join(ROOT, "scripts", "deps.sh")
KREL = os.uname().release
# what make run must not pull in: the tools of the tests alone
TEST_ONLY = {"libcmocka-dev", "chromium", "default-jre-headless", "gnuplot-nox",
             "libhdrhistogram-java", "tuned", "prometheus", "ansible-core", "bpftrace",
             "python3-venv", "rt-tests", "sockperf"}


def _fake_tools(tmp, missing, fail=()):
    """A PATH whose dpkg-query and rpm say the packages @missing ("*": all) are not
    installed until the fake apt-get or dnf installs them; the installer records
    its calls and whether policy-rc.d was there, and fails, installing nothing,
    when one of its packages is in @fail (as apt-get and dnf do for a name they do
    not know); systemctl records its calls."""
    bin_, inst = tmp / "bin", tmp / "installed"
    bin_.mkdir()
    inst.mkdir()
    log = tmp / "calls.log"
    state = ('for a; do pkg=$a; done\n'          # the package: the last word
             '[ -e "%s/$pkg" ] && { printf "install ok installed"; exit 0; }\n'
             'case " %s " in *" $pkg "* | *" * "*) exit 1 ;; esac\n'
             'printf "install ok installed"\n' % (inst, " ".join(missing)))
    installer = ('if [ "$1" = install ]; then\n'
                 '  echo "$(basename "$0") $* policy=$(test -x "$POLICY_RC_D" && '
                 '"$POLICY_RC_D"; echo $?)" >> %s\n'
                 '  for a; do case " %s " in *" $a "*) exit 100 ;; esac; done\n'
                 '  for a; do case $a in install | -*) ;; *) touch "%s/$a" ;; esac; done\n'
                 'fi\n' % (log, " ".join(fail), inst))
    tools = {"dpkg-query": state, "rpm": state, "apt-get": installer, "dnf": installer,
             "systemctl": 'echo "systemctl $*" >> %s\n' % log}
    for name, body in tools.items():
        (bin_ / name).write_text("#!/bin/sh\n" + body)
        (bin_ / name).chmod(0o755)
    return bin_, log


def _deps(tmp, targets, missing, fail=(), os_release="ID=debian\n", policy=None,
          systemd=None, nobody=False, **more_env):
    """scripts/deps.sh @targets with the fake tools, a fake os-release and a venv
    that is already there (@nobody: as user nobody, with no sudo on its PATH); (its
    process, the installer's calls, [the packages of each install call])."""
    if os.geteuid() != 0:
        pytest.skip("deps.sh installs as root; this run is not root")
    bin_, log = _fake_tools(tmp, missing, fail)
    path = "%s:%s" % (bin_, os.environ["PATH"])
    argv = ["sh", DEPS] + targets
    if nobody:
        # the few programs deps.sh runs, and no sudo
        base = tmp / "base"
        base.mkdir()
        for prog in ("sh", "uname", "id", "tr", "awk", "grep", "sed", "cmp", "env", "cat"):
            os.symlink(shutil.which(prog), base / prog)
        path = "%s:%s" % (bin_, base)
        argv = [shutil.which("setpriv"), "--reuid=65534", "--regid=65534",
                "--clear-groups", "--"] + argv
    rel = tmp / "os-release"
    rel.write_text(os_release)
    venv = tmp / "venv"        # what the venv step checks: nothing to do
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("#!/bin/sh\nexit 1\n")
    (venv / "bin" / "python").chmod(0o755)
    shutil.copy(os.path.join(ROOT, "requirements-dev.txt"), venv / ".requirements")
    (venv / "share" / "junit").mkdir(parents=True)
    (venv / "share" / "junit" / "junit-10.xsd").write_text("<xs:schema/>\n")
    env = dict(os.environ, PATH=path, OS_RELEASE=str(rel),
               POLICY_RC_D=str(policy or tmp / "policy-rc.d"),
               SYSTEMD_DIR=str(systemd or tmp / "no-systemd"), VENV=str(venv))
    env.update(more_env)
    p = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    calls = log.read_text().splitlines() if log.exists() else []
    pkgs = [[w for w in c.split()[2:-1] if not w.startswith("-")] for c in calls
            if not c.startswith("systemctl")]
    return p, calls, pkgs


@pytest.fixture(scope="module")
def every_target(tmp_path_factory):
    """{target: (process, packages of its one install call)} with nothing installed."""
    out = {}
    for target in ("run", "bench", "test", "vm"):
        p, _, pkgs = _deps(tmp_path_factory.mktemp(target), [target], ["*"])
        assert p.returncode == 0, p.stdout + p.stderr
        assert len(pkgs) == 1, pkgs
        out[target] = (p, set(pkgs[0]))
    return out


def test_the_packages_and_the_venv_apart(tmp_path):
    """DEPS_ONLY: make test installs the packages first, then makes the venv while it
    builds; each step does its part alone."""
    (tmp_path / "p").mkdir()
    p, _, pkgs = _deps(tmp_path / "p", ["test"], ["*"], DEPS_ONLY="packages",
                       VENV=str(tmp_path / "no-venv"))
    assert p.returncode == 0 and len(pkgs) == 1 and "python3-venv" in pkgs[0], p.stderr
    assert not (tmp_path / "no-venv").exists() and "creating" not in p.stdout
    (tmp_path / "v").mkdir()
    p, calls, _ = _deps(tmp_path / "v", ["test"], ["*"], DEPS_ONLY="venv")
    assert p.returncode == 0 and calls == [] and p.stderr == "", p.stderr
    (tmp_path / "b").mkdir()
    p, calls, _ = _deps(tmp_path / "b", ["test"], ["*"], DEPS_ONLY="apt")
    assert p.returncode == 2 and calls == [], p.stderr
    assert "DEPS_ONLY='apt'; give packages, venv or nothing" in p.stderr


def test_make_run_installs_what_jtr_run_needs_and_no_test_tool(every_target):
    run = every_target["run"][1]
    assert {"gcc", "make", "libnuma-dev", "python3", "clang", "bpftool", "libbpf-dev",
            "linux-perf", "python3-numpy"} <= run
    assert not run & TEST_ONLY, run & TEST_ONLY


def test_make_test_installs_the_test_tools_and_bench_its_peers(every_target):
    run, bench, test = (every_target[t][1] for t in ("run", "bench", "test"))
    assert run < bench < test
    assert {"rt-tests", "sockperf", "python3-venv"} <= bench
    assert not bench & (TEST_ONLY - {"rt-tests", "sockperf", "python3-venv"})
    assert TEST_ONLY <= test
    # installed by test, with their services kept off
    for d in ("tuned", "prometheus"):
        assert "deps: %s installed, its service not started nor enabled" % d \
            in every_target["test"][0].stdout


def test_make_test_vm_alone_installs_qemu_and_a_static_busybox(every_target):
    """QEMU is large and make test boots no VM: the vm target alone wants it."""
    vm, test = every_target["vm"][1], every_target["test"][1]
    assert vm == {"qemu-system-x86", "busybox-static"}
    assert not vm & test


@pytest.mark.parametrize("os_release", ["ID=ubuntu\nID_LIKE=debian\n",
                                        'ID=linuxmint\nID_LIKE="ubuntu debian"\n'])
@pytest.mark.parametrize("lacks, alone", [
    # 25.04 on: a bpftool package, and no linux-tools for this kernel: the generic one
    ("linux-tools-" + KREL, ["bpftool", "linux-tools-common", "linux-tools-" + KREL,
                             "linux-tools-generic"]),
    # before: no bpftool package, linux-tools-common has it
    ("bpftool", ["bpftool", "linux-tools-common", "linux-tools-" + KREL]),
])
def test_ubuntu_gets_perf_and_bpftool_from_linux_tools(tmp_path, os_release, lacks, alone):
    """Ubuntu's perf is in linux-tools-common and the running kernel's linux-tools
    (linux-tools-generic where that does not exist); bpftool in its own package, or
    else in linux-tools-common."""
    tools = ["linux-tools-common", "linux-tools-" + KREL, "linux-tools-generic"]
    p, calls, pkgs = _deps(tmp_path, ["run"], tools + ["linux-perf", "bpftool", "gcc"],
                           fail=[lacks], os_release=os_release)
    assert pkgs[0] == ["gcc", "bpftool", "linux-tools-common", "linux-tools-" + KREL], calls
    assert all(c.startswith("apt-get install") for c in calls)
    # then one by one, each alternative in turn
    assert pkgs[1:] == [["gcc"]] + [[a] for a in alone], calls
    assert p.returncode == 0 and "not installed" not in p.stderr, p.stderr


@pytest.mark.parametrize("os_release", ["ID=fedora\n", 'ID="rocky"\nID_LIKE="rhel centos fedora"\n',
                                        'ID="rhel"\nID_LIKE="fedora"\n'])
def test_fedora_and_rhel_install_with_dnf_under_their_names(tmp_path, os_release):
    p, calls, pkgs = _deps(tmp_path, ["test"], ["*"], os_release=os_release)
    assert p.returncode == 0, p.stderr
    assert len(calls) == 1 and calls[0].startswith("dnf install -y"), calls
    assert calls[0].endswith("policy=1"), calls         # no policy-rc.d: not Debian
    assert {"glibc-devel", "numactl-devel", "libbpf-devel", "elfutils-libelf-devel",
            "zlib-devel", "perf", "libcmocka-devel", "realtime-tests", "procps-ng",
            "python3-prometheus_client"} <= set(pkgs[0])
    assert not {"libnuma-dev", "linux-perf", "libbpf-dev", "python3-venv"} & set(pkgs[0])


@pytest.mark.parametrize("bad, rc", [("sockperf", 0), ("gcc", 1)])
def test_one_missing_package_stops_no_other(tmp_path, bad, rc):
    """All at once fails on a name the release lacks; then each is installed alone,
    and the summary says what is missing and what that takes away. The exit status
    says whether the target can work: make bench runs without sockperf, not
    without gcc."""
    p, calls, pkgs = _deps(tmp_path, ["bench"], ["gcc", "rt-tests", "sockperf"], fail=[bad])
    assert pkgs == [["gcc", "rt-tests", "sockperf"], ["gcc"], ["rt-tests"], ["sockperf"]], \
        calls
    assert p.returncode == rc, p.stderr
    if bad == "sockperf":
        assert "  sockperf (optional): make bench skips the UDP and TCP comparison with " \
               "sockperf" in p.stderr
    else:
        assert "  gcc (required): nothing is built" in p.stderr
        assert p.stderr.rstrip().endswith("deps: required packages are missing: gcc")
    assert "rt-tests" not in p.stderr


@pytest.mark.parametrize("fail", [(), ("tuned", "prometheus", "gcc")])
def test_deps_installs_daemons_without_starting_or_enabling_them(tmp_path, fail):
    """scripts/deps.sh: tuned and prometheus are installed with a policy-rc.d that
    refuses every service start (exit 101) in place, removed afterwards (also when
    apt-get fails), then disabled where systemd runs, and it says so."""
    policy, systemd = tmp_path / "policy-rc.d", tmp_path / "systemd"
    systemd.mkdir()
    p, calls, pkgs = _deps(tmp_path, ["test"], ["tuned", "prometheus", "gcc"], fail,
                           policy=policy, systemd=systemd)
    assert pkgs[0] == ["gcc", "tuned", "prometheus"], calls
    installs = [c for c in calls if not c.startswith("systemctl")]
    assert all(c.endswith("policy=101") for c in installs), calls  # no service could start
    assert not policy.exists()                          # and the file is gone again
    if fail:
        assert p.returncode == 1 and len(installs) == 4, (p.stderr, calls)
        assert not [c for c in calls if c.startswith("systemctl")], calls
        assert "service not started" not in p.stdout
        return
    assert p.returncode == 0, p.stderr
    assert calls[1:] == ["systemctl disable --now tuned", "systemctl disable --now prometheus"]
    for d in ("tuned", "prometheus"):
        assert "deps: %s installed, its service not started nor enabled" % d in p.stdout


@pytest.mark.parametrize("missing, rc", [(["gcc", "sockperf"], 1), (["sockperf"], 0)])
def test_without_root_or_sudo_deps_says_what_to_install(missing, rc):
    """Not root and no sudo: nothing is installed; deps.sh names the command to run
    as root, and fails only for a package the target requires."""
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="jtr-deps-"))
    try:
        tmp.chmod(0o755)
        p, calls, _ = _deps(tmp, ["bench"], missing, nobody=True)
    finally:
        shutil.rmtree(tmp)
    assert calls == []
    assert "deps: not root and no sudo: install as root: apt-get install %s\n" \
        % " ".join(missing) in p.stderr
    assert p.returncode == rc, p.stderr
    assert "  sockperf (optional): make bench skips" in p.stderr


def test_deps_leaves_a_policy_it_did_not_write(tmp_path):
    """An existing policy-rc.d (a container's own) is neither replaced nor removed."""
    policy = tmp_path / "policy-rc.d"
    policy.write_text("#!/bin/sh\nexit 0\n")
    policy.chmod(0o755)
    p, calls, _ = _deps(tmp_path, ["test"], ["tuned"], policy=policy)
    assert p.returncode == 0, p.stderr
    assert policy.read_text() == "#!/bin/sh\nexit 0\n"
    assert calls[0].endswith("policy=0")
    assert "deps: tuned installed, its service not started nor enabled" in p.stdout


def _copy_without_the_tracer(tmp_path):
    """A copy of this tree with its build/, less the tracer (its program and the files
    it is made from): make builds only what the copy lacks. Every other build from
    source (a clone for pip, the .deb, the RPM, a fleet host) builds the probes."""
    src = tmp_path / "src"
    build = os.path.join(ROOT, "build")
    skip = {ROOT: {".git", ".venv", "results"},
            build: {"deb", "rpm", "python", "ebpf", "ccache"},
            os.path.join(build, "bin"): {"jtr-trace"}}
    shutil.copytree(ROOT, src, symlinks=True, ignore=lambda d, names: [
        n for n in names if n in skip.get(d, ()) or n in ("__pycache__", ".pytest_cache")])
    return src


def test_the_probes_build_without_the_tracers_tools(tmp_path):
    """Without clang (or bpftool, libbpf's headers, the kernel's BTF) make builds the
    probes, says what the tracer needs, and jtr says it again when asked to trace."""
    src = _copy_without_the_tracer(tmp_path)
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


def _path_without(tmp, names):
    """A folder of links to every program on PATH but @names: a PATH that lacks them."""
    d = tmp / "sysbin"
    d.mkdir()
    for folder in os.environ["PATH"].split(":"):
        if not os.path.isdir(folder):
            continue
        for n in os.listdir(folder):
            if n not in names and not os.path.lexists(d / n):
                os.symlink(os.path.join(folder, n), d / n)
    return d


def test_make_run_builds_the_tracer_its_deps_step_installed(tmp_path):
    """A fresh machine: make run's deps step installs clang and bpftool, and the same
    make builds jtr-trace before jtr run starts. The deps step here is a stand-in for
    scripts/deps.sh that puts links to clang and bpftool into a folder on make's PATH
    (as apt-get puts them into /usr/bin), on the second run only; the PATH has no other
    clang or bpftool. The tree is a copy with this tree's build/, less the tracer."""
    for tool in ("clang", "bpftool"):
        if not shutil.which(tool):
            pytest.skip("%s is not installed (scripts/deps.sh test installs it)" % tool)
    if not os.path.exists("/sys/kernel/btf/vmlinux") or \
            not os.path.exists("/usr/include/bpf/libbpf.h"):
        pytest.skip("no kernel BTF or no libbpf headers: jtr-trace cannot be built here")
    src = _copy_without_the_tracer(tmp_path)
    tools = tmp_path / "installed"
    tools.mkdir()
    # the deps step: installs the tracer's tools when the file "available" is there
    (src / "scripts" / "deps.sh").write_text(
        "#!/bin/sh\n"
        "[ \"$1\" = run ] || exit 2\n"
        "[ -e %s/available ] || { echo 'deps: clang and bpftool not installed' >&2; exit 0; }\n"
        "ln -s %s %s/clang && ln -s %s %s/bpftool\n"
        % (tmp_path, shutil.which("clang"), tools, shutil.which("bpftool"), tools))
    # jtr run: says whether the tracer is there
    (src / "jtr").write_text('#!/bin/sh\necho "jtr $*: $(ls build/bin | grep -c jtr-trace)"\n')
    env = dict(os.environ, PATH="%s:%s" % (tools, _path_without(tmp_path, {"clang", "bpftool"})))
    for k in ("CLANG", "BPFTOOL", "MAKEFLAGS", "MAKELEVEL"):
        env.pop(k, None)

    p = subprocess.run(["make", "-s", "-j2", "run"], cwd=src, env=env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "the kernel-event tracer (jtr-trace) is not built: missing clang bpftool." \
        in p.stdout, p.stdout
    assert p.stdout.endswith("jtr run: 0\n"), p.stdout
    assert not (src / "build" / "bin" / "jtr-trace").exists()

    (tmp_path / "available").touch()
    p = subprocess.run(["make", "-s", "-j2", "run"], cwd=src, env=env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "not built" not in p.stdout, p.stdout
    assert p.stdout.endswith("jtr run: 1\n"), p.stdout
    t = subprocess.run([str(src / "build" / "bin" / "jtr-trace"), "--help"],
                       capture_output=True, text=True, timeout=30)
    assert t.returncode == 0 and "usage" in t.stdout.lower(), t.stdout + t.stderr


def test_every_source_file_says_its_licence():
    """Each source file the project tracks names its licence in its first lines (SPDX),
    the one LICENSE holds: a file added without it fails here."""
    files = subprocess.run(["git", "-C", ROOT, "ls-files", "*.c", "*.h", "*.py", "*.sh",
                            "*.bt", "Makefile"], capture_output=True, text=True)
    if files.returncode != 0:
        pytest.skip("not a git checkout: %s" % files.stderr.strip())
    missing = []
    for name in files.stdout.split():
        with open(os.path.join(ROOT, name), encoding="utf-8", errors="replace") as f:
            head = "".join(f.readline() for _ in range(5))
        if "SPDX-License-Identifier: GPL-2.0-only" not in head:
            missing.append(name)
    assert not missing, missing
    assert "GNU GENERAL PUBLIC LICENSE" in open(os.path.join(ROOT, "LICENSE")).read()
