# SPDX-License-Identifier: GPL-2.0-only
"""Packaging: the man pages and bash/zsh completion made from the commands' --help
(scripts/gen-docs.py: make man, make completion), the RPM spec (dist/jtr.spec),
and the Debian package (make deb; debian/): built, installed on this machine,
used by an unprivileged user (jtr --help, man jtr, jtr run), its probes'
capabilities and tuned's view of its profiles checked, then purged, leaving
nothing behind."""
import argparse
import contextlib
import fcntl
import glob
import io
import os
import pwd
import re
import shutil
import subprocess
import tarfile
import tempfile

import pytest
from conftest import BIN, ROOT, make_in_tree

from jtrpy.cli import main as jtr_main

# the package installed on this machine (the deb fixture's tests) is machine-wide;
# the pages, the completion and the RPM are built in the tree and read
pytestmark = [pytest.mark.slow, pytest.mark.root]

MAN = COMP = None      # the generated fixture's folders
# the tests of the installed package: machine-wide, last in the machine group (the
# package is built outside it meanwhile: built_deb)
INSTALLED = pytest.mark.machine(last=True)
PYTHON_COMMANDS = [(n, w) for n, _, w in jtr_main.COMMANDS if w not in ("exec", None)]
# the C programs (and the tracer, where it was built: jtr trace without --print)
PROGRAMS = [n for n, _, w in jtr_main.COMMANDS if w == "exec"] + \
    (["trace"] if os.path.exists(os.path.join(BIN, "jtr-trace")) else [])
PAGES = [n for n, _, w in jtr_main.COMMANDS if w is not None]


def need(tool, package):
    """Skip when @tool is missing (scripts/deps.sh installs @package for the tests)."""
    if not shutil.which(tool):
        pytest.skip("%s is not installed (apt-get install %s)" % (tool, package))


def version():
    with open(os.path.join(ROOT, "VERSION")) as f:
        return f.read().strip()


def priv_probes():
    """The Makefile's PRIV_PROBES: the probes install-caps gives capabilities."""
    with open(os.path.join(ROOT, "Makefile")) as f:
        return re.search(r"^PRIV_PROBES\s*:=\s*(.*)$", f.read(), re.M).group(1).split()


def parser_options(name, where):
    """{key: option strings} of a Python command's parser: "tune", "tune apply", ...;
    the options it shows (an old letter taken for one release is hidden, as the C
    programs leave theirs out of --help's option lines)."""
    module = __import__("jtrpy.commands." + where, fromlist=["make_parser"])
    out = {}

    def walk(key, parser):
        out[key] = {o for o, a in parser._option_string_actions.items()
                    if a.help != argparse.SUPPRESS}
        for a in parser._actions:
            if isinstance(a, argparse._SubParsersAction):
                for sub, p in a.choices.items():
                    walk("%s %s" % (key, sub), p)
    walk(name, module.make_parser("jtr " + name))
    return out


def program_options(name):
    """The options a C program's --help lists (its entries: '  -d, --duration',
    '      --threshold')."""
    text = subprocess.run([os.path.join(BIN, "jtr-" + name), "--help"], stdout=subprocess.PIPE,
                          text=True, check=True).stdout
    opts = set()
    for line in text.splitlines():
        m = re.match(r"^  (-[\w]), (--[\w-]+)|^      (--[\w-]+)", line)
        if m:
            opts |= {o for o in m.groups() if o}
    return opts


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """make man and make completion, once, into folders of this module's (an install
    target another test runs meanwhile writes build/man afresh)."""
    global MAN, COMP
    d = tmp_path_factory.mktemp("generated")
    MAN, COMP = str(d / "man"), str(d / "completion")
    p = make_in_tree("-s", "man", "completion", "MAN_OUT=%s" % MAN, "COMP_OUT=%s" % COMP,
                     timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    return MAN, COMP


def render(page, width=200):
    p = subprocess.run(["man", "-l", page], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, MANWIDTH=str(width), MANPAGER="cat", LANG="C"))
    assert p.returncode == 0, p.stderr
    return p.stdout


# first in the file: its package, built here, is ready when the machine group's
# last tests install it
def test_lintian_finds_nothing_in_the_package(deb_file):
    """lintian on the built .deb: no error, warning or info tag, but the ones
    debian/jtr.lintian-overrides explains."""
    need("lintian", "lintian")
    p = subprocess.run(["lintian", "--fail-on", "error,warning,info", "--display-info",
                        deb_file], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and p.stdout.strip() == "", p.stdout + p.stderr


# ---------------------------------------------------------------- man pages

def test_a_page_per_command_rendering_without_warnings(generated):
    need("groff", "groff-base")
    need("man", "man-db")
    pages = sorted(os.listdir(MAN))
    assert pages == sorted(["jtr.1"] + ["jtr-%s.1" % n for n in PAGES])
    for page in pages:
        path = os.path.join(MAN, page)
        for dev in ("utf8", "ascii"):
            p = subprocess.run(["groff", "-man", "-ww", "-z", "-T" + dev, path],
                               capture_output=True, text=True, timeout=60)
            assert p.returncode == 0 and p.stderr == "", (page, dev, p.stderr)
        p = subprocess.run(["man", "--warnings=all", "-l", path], capture_output=True,
                           text=True, timeout=60, env=dict(os.environ, MANPAGER="cat"))
        assert p.returncode == 0 and p.stderr == "", (page, p.stderr)


def test_the_pages_say_what_help_says(generated):
    need("man", "man-db")
    top = render(os.path.join(MAN, "jtr.1"))
    assert "jtr - measure a CPU's jitter" in top
    for name in PAGES:
        assert "jtr-%s(1)" % name in top, name
    for name in PROGRAMS:
        text = render(os.path.join(MAN, "jtr-%s.1" % name))
        assert text.startswith("JTR-%s(1)" % name.upper())
        missing = [o for o in program_options(name) if o not in text]
        assert not missing, (name, missing)
    for name, where in PYTHON_COMMANDS:
        text = render(os.path.join(MAN, "jtr-%s.1" % name))
        for key, opts in parser_options(name, where).items():
            missing = [o for o in opts if o not in text]
            assert not missing, (key, missing)
    tune = render(os.path.join(MAN, "jtr-tune.1"))
    assert "JTR TUNE APPLY" in tune and "--auto-revert DUR" in tune


def sections(text):
    """The headings of a rendered page, in order."""
    return re.findall(r"^([A-Z][A-Z ]+)$", text, re.M)


def test_every_page_has_exit_status_and_see_also(generated):
    """EXIT STATUS (0, 1, 2, 130, in the user's words, with what 1 means for the
    command) and SEE ALSO (jtr(1), the related jtr pages and the tools the command
    stands beside) on every page; nothing of jtr's insides."""
    need("man", "man-db")
    for page in ["jtr"] + ["jtr-%s" % n for n in PAGES]:
        text = render(os.path.join(MAN, page + ".1"))
        heads = sections(text)
        assert "EXIT STATUS" in heads and heads[-1] == "SEE ALSO", (page, heads)
        status = text.split("\nEXIT STATUS\n", 1)[1].split("\nSEE ALSO\n")[0]
        codes = re.findall(r"^ {7}(\d+) ", status, re.M)
        assert codes == ["0", "1", "2", "130"], (page, status)
        assert "bad usage or input" in status and "Ctrl-C" in status, page
        for word in ("JtrError", "UsageError", "signals.py", "exception", "Traceback"):
            assert word not in text, (page, word)
        see = " ".join(text.split("\nSEE ALSO\n", 1)[1].split("\n")[:-2])
        if page != "jtr":
            assert "jtr(1)" in see, (page, see)
    see = lambda n: render(os.path.join(MAN, "jtr-%s.1" % n)).split("\nSEE ALSO\n")[1]  # noqa
    assert "cyclictest(8)" in see("wake") and "oslat(8)" in see("gap")
    assert "tuned-adm(8)" in see("tune") and "tuned-adm(8)" in see("advise")
    assert "sockperf(1)" in see("ping") and "perf(1)" in see("trace")
    assert "rtla(1)" in see("run")
    run = render(os.path.join(MAN, "jtr-run.1"))
    assert re.search(r"a gate failed: --max-latency or\s+--max-lost\s+exceeded", run)
    tune = render(os.path.join(MAN, "jtr-tune.1"))
    assert "verify: the machine drifted" in " ".join(tune.split())
    top = " ".join(render(os.path.join(MAN, "jtr.1")).split())
    for ref in ("cyclictest(8)", "oslat(8)", "rtla(1)", "tuned-adm(8)", "perf(1)",
                "sockperf(1)", "jtr-run(1)", "jtr-wake(1)"):
        assert ref in top, ref


# ---------------------------------------------------------------- completion

def bash_complete(cases):
    """COMPREPLY of the bash completion for each command line of @cases (the last
    word is the one completed), one bash for all."""
    script = ["source %s" % os.path.join(COMP, "jtr")]
    for words in cases:
        script.append("COMP_WORDS=(%s); COMP_CWORD=%d; COMPREPLY=(); _jtr; "
                      "printf '%%s\\n' \"${COMPREPLY[*]}\"" % (" ".join("'%s'" % w for w in words),
                                                     len(words) - 1))
    p = subprocess.run(["bash", "--norc", "-c", "\n".join(script)], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    out = p.stdout.split("\n")[:-1]
    assert len(out) == len(cases)
    return [line.split() for line in out]


def test_bash_completes_commands_options_and_files(generated, tmp_path):
    (tmp_path / "adir").mkdir()
    (tmp_path / "afile").write_text("")
    cases = [
        (["jtr", "ru"], ["run"]),
        (["jtr", "run", "--du"], ["--duration"]),            # gap's, jtr run's default probe
        (["jtr", "run", "ping", "--tr"], ["--trace-buffer", "--transport"]),
        (["jtr", "run", "w"], ["wake"]),
        (["jtr", "tune", "ap"], ["apply"]),
        (["jtr", "tune", "apply", "--dr"], ["--dry-run"]),
        (["jtr", "help", "comp"], ["compare"]),
        (["jtr", "ab", "jtr-latency", "--", "pi"], ["ping"]),
        (["jtr", "gap", "-o", str(tmp_path) + "/a"], [str(tmp_path / "adir")]),   # -o DIR
        (["jtr", "compare", str(tmp_path) + "/a"],
         [str(tmp_path / "adir"), str(tmp_path / "afile")]),
        (["jtr", "gap", "-d", ""], []),                      # a duration: no files
    ]
    got = bash_complete([c for c, _ in cases])
    for (words, want), reply in zip(cases, got):
        assert sorted(reply) == sorted(want), (words, reply)
    # every option of every command is offered after a "-" (one completion a
    # command: compgen's prefix matching is what the cases above try; one an
    # option took 3.5 s here)
    cases = []
    for name, where in PYTHON_COMMANDS:
        cases += [(key.split(), opts) for key, opts in parser_options(name, where).items()]
    cases += [([name], program_options(name)) for name in PROGRAMS]
    got = bash_complete([["jtr"] + words + ["-"] for words, _ in cases])
    missing = [" ".join(w + [o]) for (w, opts), reply in zip(cases, got)
               for o in sorted(opts - set(reply))]
    assert not missing, missing


def test_bash_completes_the_values_options_take(generated):
    """Profile names, the choices of an option, the online CPUs (also after a comma),
    and an option a command shares with its probe (jtr run -c) once."""
    with open("/sys/devices/system/cpu/online") as f:
        from jtrpy.system.cpus import cpulist_of
        cpus = [str(c) for c in cpulist_of(f.read().strip())]
    jtr = os.path.join(ROOT, "jtr")
    profiles = sorted(n for n in os.listdir(os.path.join(ROOT, "tuning-profiles"))
                      if n.startswith("jtr-") and "." not in n)
    cases = [
        ([jtr, "tune", "apply", ""], profiles),
        ([jtr, "tune", "apply", "jtr-l"], ["jtr-latency"]),
        ([jtr, "tune", "apply", "--dry-run", ""], profiles),
        ([jtr, "tune", "apply", "--cpus", "1", "jtr-r"], ["jtr-realtime"]),
        ([jtr, "ab", "-d", "2", ""], profiles),
        ([jtr, "ab", ""], profiles),
        ([jtr, "ab", "jtr-latency", "--", ""], ["gap", "wake", "null", "send", "ping", "pub"]),
        ([jtr, "run", "--backend", ""], ["auto", "ebpf", "perf"]),
        ([jtr, "advise", "--backend", "e"], ["ebpf"]),
        ([jtr, "ping", "-T", ""], ["shm", "tcp", "udp", "mcast", "unix", "unix-dgram"]),
        ([jtr, "ping", "--transport", "unix"], ["unix", "unix-dgram"]),
        ([jtr, "ping", "-t", ""], ["tsc", "clock"]),
        ([jtr, "run", "--by", ""], ["comm", "pid"]),
        ([jtr, "tune", "install-profiles", "--print-dir", ""], ["system", "user", "variables"]),
        ([jtr, "run", "-c", ""], cpus),
        ([jtr, "gap", "--cpus", "0,"], ["0," + c for c in cpus]),
        ([jtr, "tune", "apply", "jtr-isolate", "--cpus", ""], cpus),
        ([jtr, "run", "ping", "--pong-cpu", ""], cpus),
    ]
    got = bash_complete([c for c, _ in cases])
    for (words, want), reply in zip(cases, got):
        assert sorted(reply) == sorted(want), (words[1:], reply)
    # no option twice, for every command and action (jtr run and its probe's -c)
    keys = [["run", "-"], ["run", "ping", "-"], ["ab", "jtr-latency", "--", "gap", "-"]]
    keys += [k.split() + ["-"] for name, where in PYTHON_COMMANDS
             for k in parser_options(name, where)]
    keys += [[name, "-"] for name in PROGRAMS]
    got = bash_complete([[jtr] + k for k in keys])
    for k, reply in zip(keys, got):
        assert reply and len(reply) == len(set(reply)), (k, reply)
    assert "-c" in got[0] and "--cpus" in got[0] and "--duration" in got[0]


def test_zsh_completion_parses_and_completes(generated):
    need("zsh", "zsh")
    path = os.path.join(COMP, "_jtr")
    p = subprocess.run(["zsh", "-n", path], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    # zsh's completion functions stubbed to print what they were given
    stubs = r"""
_describe() { shift 3; local a=$1; print -r -- "${(P)a}" }
compadd() { [[ $1 == -a ]] && print -r -- "${(P)2}" || print -r -- "$@" }
_files() { print -r -- "_files $*" }
_message() { print -r -- "_message $*" }
c() { words=("$@"); CURRENT=$#words; PREFIX=$words[CURRENT]; source %s }
""" % path
    lines = ["c jtr ru", "c jtr run --du", "c jtr tune ap", "c jtr tune apply --dr",
             "c jtr gap -o /tm", "c jtr gap -d 1"]
    p = subprocess.run(["zsh", "-f", "-c", stubs + "\n".join(lines)], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    out = p.stdout.split("\n")
    assert "run:measure with any probe" in out[0]
    assert re.search(r"(^| )--duration:how long", out[1]) and "--no-trace:" in out[1]
    assert "apply:check every value" in out[2]
    assert "--dry-run:print the plan" in out[3]
    assert out[4:6] == ["_files -/", "_message value"]
    # the values options take, profile names, options once
    jtr = os.path.join(ROOT, "jtr")
    lines = ["c %s tune apply ''" % jtr, "c jtr run --backend ''", "c jtr ping -T ''",
             "c jtr run -", "c jtr gap -c ''"]
    p = subprocess.run(["zsh", "-f", "-c", stubs + "\n".join(lines)], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    out = p.stdout.split("\n")
    assert out[0].split() == sorted(n for n in os.listdir(os.path.join(ROOT, "tuning-profiles"))
                                    if n.startswith("jtr-") and "." not in n)
    assert out[1].split() == ["ebpf", "perf", "auto"]
    assert out[2].split() == ["shm", "tcp", "udp", "mcast", "unix", "unix-dgram"]
    names = re.findall(r"(?:^| )(-[-\w]+):", out[3])
    assert "-c" in names and "--duration" in names and len(names) == len(set(names)), names
    with open("/sys/devices/system/cpu/online") as f:
        from jtrpy.system.cpus import cpulist_of
        assert out[4].split() == [str(c) for c in cpulist_of(f.read().strip())]


# ---------------------------------------------------------------- RPM spec, versions

def test_the_rpm_spec_parses():
    need("rpmspec", "rpm")
    p = subprocess.run(["rpmspec", "-P", os.path.join(ROOT, "dist", "jtr.spec")],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert re.search(r"^Version:\s+%s$" % re.escape(version()), p.stdout, re.M)
    for probe in priv_probes():
        assert "%%caps(cap_sys_nice,cap_ipc_lock=ep) /usr/libexec/jtr/jtr-%s\n" % probe \
            in p.stdout
    assert "%config(noreplace) /etc/tuned/jtr-variables.conf" in p.stdout
    # the profiles linked for tuned before 2.23 and from 2.23 (both layouts)
    assert 'TUNEDDIR="/usr/lib/tuned /usr/lib/tuned/profiles"' in p.stdout
    assert "\n/usr/lib/tuned/jtr-*\n/usr/lib/tuned/profiles/jtr-*\n" in p.stdout


@pytest.fixture(scope="module")
def rpms():
    """make rpm (no %check: the C unit tests run in make test already): {name: file}."""
    need("rpmbuild", "rpm")
    flags = "--nocheck"
    if subprocess.run(["rpm", "-q", "--whatprovides", "gcc"], capture_output=True).returncode:
        # the build dependencies are not RPMs here (a Debian machine): not checked
        flags += " --nodeps"
    p = subprocess.run(["make", "-C", ROOT, "--no-print-directory", "rpm",
                        "RPMBUILD_FLAGS=" + flags], capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    out = {}
    for f in glob.glob(os.path.join(ROOT, "build", "rpm", "RPMS", "*", "*.rpm")):
        name = subprocess.run(["rpm", "-qp", "--qf", "%{NAME}", f], capture_output=True,
                              text=True, check=True).stdout
        out[name] = f
    return out


def rpm_query(path, *args):
    return subprocess.run(["rpm", "-qp"] + list(args) + [path], capture_output=True, text=True,
                          check=True).stdout


def test_the_rpm_builds_with_the_debian_layout(rpms):
    rpm = rpms["jtr"]
    assert rpm_query(rpm, "--qf", "%{VERSION} %{LICENSE}") == "%s GPL-2.0-only" % version()
    files = set(rpm_query(rpm, "-l").split("\n"))
    for path in ["/usr/bin/jtr", "/usr/libexec/jtr/jtr-gap", "/usr/lib/jtr/jtrpy/cli/main.py",
                 "/usr/share/man/man1/jtr.1.gz", "/usr/share/jtr/jtr-watch.service",
                 "/usr/share/jtr/tuning-profiles/jtr-latency/tuned.conf",
                 "/usr/lib/tuned/jtr-latency", "/etc/tuned/jtr-variables.conf",
                 "/usr/share/doc/jtr/README.md"]:
        # rpm gzips man pages where brp-compress runs (Fedora), not on Debian
        assert path in files or path.replace(".1.gz", ".1") in files, path
    # %license: /usr/share/licenses/jtr (Fedora's _docdir_fmt), jtr-VERSION (rpm's own)
    assert {"/usr/share/licenses/jtr/LICENSE",
            "/usr/share/licenses/jtr-%s/LICENSE" % version()} & files, files
    caps = rpm_query(rpm, "--filecaps")
    for probe in priv_probes():
        assert re.search(r"^/usr/libexec/jtr/jtr-%s\s+cap_ipc_lock,cap_sys_nice=ep$" % probe,
                         caps, re.M), caps
    # the watch unit as the package installs it: it runs the package's jtr
    need("rpm2archive", "rpm2cpio")
    with open(rpm, "rb") as f:
        tgz = subprocess.run(["rpm2archive", "-"], stdin=f, capture_output=True,
                             check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(tgz), mode="r:gz") as t:
        unit = t.extractfile("./usr/share/jtr/jtr-watch.service").read().decode()
    assert "ExecStart=/usr/bin/jtr watch -q " in unit, unit


def test_the_package_versions_are_the_version_file():
    with open(os.path.join(ROOT, "debian", "changelog")) as f:
        assert f.readline().startswith("jtr (%s) " % version())
    with open(os.path.join(ROOT, "debian", "postinst")) as f:
        assert re.search(r'^PROBES="(.*)"$', f.read(), re.M).group(1).split() == priv_probes()


# ---------------------------------------------------------------- the Debian package

# the package links the profiles into both of tuned's layouts (debian/rules):
# /usr/lib/tuned before tuned 2.23, /usr/lib/tuned/profiles from 2.23
TUNED_LINKS = [folder + os.path.basename(d) for folder in ("/usr/lib/tuned/",
                                                           "/usr/lib/tuned/profiles/")
               for d in sorted(glob.glob(os.path.join(ROOT, "tuning-profiles", "jtr-*")))
               if os.path.isdir(d)]
PKG_PATHS = ["/usr/bin/jtr", "/usr/libexec/jtr", "/usr/lib/jtr", "/usr/share/jtr"] + TUNED_LINKS
VARIABLES = "/etc/tuned/jtr-variables.conf"


def dpkg_status(pkg="jtr"):
    p = subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg], capture_output=True, text=True)
    return p.stdout if p.returncode == 0 else ""


def purge():
    return subprocess.run(["dpkg", "--purge", "jtr"], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))


# man-db's dpkg trigger rebuilds the whole man index on every install and purge
# while this flag file is there (mandb -pq: 7.5 s of CPU in the first phase, an
# index.db that was not there before left behind); man finds the pages by their
# paths without it. Moved aside for the install and the purge, put back after
# (and, after a run that was killed, before the next).
MANDB_FLAG = "/var/lib/man-db/auto-update"
MANDB_ASIDE = MANDB_FLAG + ".jtr-test"


@contextlib.contextmanager
def man_index_untouched():
    if os.path.exists(MANDB_ASIDE) and not os.path.exists(MANDB_FLAG):
        os.rename(MANDB_ASIDE, MANDB_FLAG)
    moved = os.path.exists(MANDB_FLAG)
    if moved:
        os.rename(MANDB_FLAG, MANDB_ASIDE)
    try:
        yield
    finally:
        if moved:
            os.rename(MANDB_ASIDE, MANDB_FLAG)


def built_deb():
    """make deb, once in a test run whatever the worker (a lock in build/, the run's
    id beside the package): the package the machine group installs is the one
    lintian read, built by whichever asks first. lintian, outside the group, asks
    early, so the group (the first phase's longest chain) does not wait 60 s for
    the build, 19 s alone: it runs the package's tests last."""
    for tool, pkg in (("dpkg-buildpackage", "dpkg-dev"), ("dh", "debhelper"),
                      ("dh_python3", "dh-python")):
        need(tool, pkg)
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID") or "pid %d" % os.getpid()
    build = os.path.join(ROOT, "build")
    os.makedirs(build, exist_ok=True)
    stamp = os.path.join(build, ".tests-deb.run")
    with open(os.path.join(build, ".tests-deb.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = glob.glob(os.path.join(build, "jtr_%s_*.deb" % version()))
        if len(found) == 1 and os.path.exists(stamp):
            with open(stamp) as f:
                if f.read() == run:
                    return found[0]
        p = subprocess.run(["make", "-C", ROOT, "--no-print-directory", "deb"],
                           capture_output=True, text=True, timeout=900,
                           # the C unit tests run in make test already; no debug
                           # package, two jobs, and gzip is quicker than xz
                           env=dict(os.environ,
                                    DEB_BUILD_OPTIONS="nocheck noautodbgsym parallel=2",
                                    DPKG_DEB_COMPRESSOR_TYPE="gzip"))
        assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
        (path,) = glob.glob(os.path.join(build, "jtr_%s_*.deb" % version()))
        with open(stamp, "w") as f:
            f.write(run)
        return path


@pytest.fixture(scope="module")
def deb_file():
    """The .deb (built_deb), not installed."""
    return built_deb()


@pytest.fixture(scope="module")
def deb():
    """The .deb (built_deb) installed, and a user to run it; purged and the user
    removed afterwards, whatever the tests found."""
    if os.geteuid() != 0:
        pytest.skip("needs root: it installs a package and adds a user")
    need("man", "man-db")
    if dpkg_status().startswith("install"):
        pytest.skip("the jtr package is installed on this machine; the test would remove it")
    there = [p for p in PKG_PATHS if os.path.lexists(p)]
    if there:
        pytest.skip("%s: a jtr is installed under /usr already (make install PREFIX=/usr?); "
                    "the package would replace it" % ", ".join(there))
    saved = None
    if os.path.exists(VARIABLES):
        with open(VARIABLES) as f:
            saved = f.read()
    path = built_deb()
    name = "jtrdeb%d" % os.getpid()
    subprocess.run(["useradd", "-M", "-N", "-s", "/usr/sbin/nologin", name], check=True)
    home = tempfile.mkdtemp(prefix="jtr-deb-", dir="/tmp")
    pw = pwd.getpwnam(name)
    os.chown(home, pw.pw_uid, pw.pw_gid)
    with man_index_untouched():
        try:
            # an /etc/tuned/jtr-variables.conf that is there already is kept
            p = subprocess.run(["dpkg", "-i", "--force-confdef", "--force-confold", path],
                               capture_output=True, text=True, timeout=300,
                               env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
            assert p.returncode == 0, p.stdout + p.stderr
            files = subprocess.run(["dpkg", "-L", "jtr"], capture_output=True, text=True,
                                   check=True).stdout.split("\n")
            yield {"deb": path, "user": pw, "home": home,
                   "files": [f for f in files if f and f != "/."],
                   "saved_variables": saved}
        finally:
            if dpkg_status():
                purge()
            subprocess.run(["userdel", "-f", name], check=False)
            shutil.rmtree(home, ignore_errors=True)
            if saved is not None and not os.path.exists(VARIABLES):
                with open(VARIABLES, "w") as f:
                    f.write(saved)


def as_user(deb, argv, **env):
    pw = deb["user"]
    e = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": deb["home"]}
    e.update(env)
    return subprocess.run(["setpriv", "--reuid=%d" % pw.pw_uid, "--regid=%d" % pw.pw_gid,
                           "--clear-groups", "--"] + argv, cwd=deb["home"], env=e,
                          capture_output=True, text=True, timeout=120)


@INSTALLED
def test_the_package_puts_each_file_in_its_place(deb):
    files = set(deb["files"])
    for path in ["/usr/bin/jtr", "/usr/libexec/jtr/jtr-gap", "/usr/lib/jtr/jtrpy/cli/main.py",
                 "/usr/share/man/man1/jtr.1.gz", "/usr/share/man/man1/jtr-run.1.gz",
                 "/usr/share/bash-completion/completions/jtr",
                 "/usr/share/zsh/vendor-completions/_jtr",
                 "/usr/share/doc/jtr/result-format.md", "/usr/share/doc/jtr/README.md",
                 "/usr/share/jtr/schemas/result.schema.json",
                 "/usr/share/jtr/bpftrace/irqs.bt",
                 "/usr/share/jtr/tuning-profiles/jtr-latency/tuned.conf",
                 "/usr/lib/tuned/jtr-latency", "/usr/lib/tuned/profiles/jtr-latency",
                 VARIABLES]:
        assert path in files, path
    for link in ("/usr/lib/tuned/jtr-latency", "/usr/lib/tuned/profiles/jtr-latency"):
        assert os.path.realpath(link) == "/usr/share/jtr/tuning-profiles/jtr-latency"
    info = subprocess.run(["dpkg-deb", "-f", deb["deb"], "Depends"], capture_output=True,
                          text=True, check=True).stdout
    for dep in ("python3-numpy", "python3-matplotlib", "libnuma1", "libcap2-bin"):
        assert dep in info, info
    # linked with dpkg-buildflags' hardening (the Makefile passes LDFLAGS): full RELRO
    for prog in ("/usr/libexec/jtr/jtr-gap", "/usr/libexec/jtr/jtr-ping"):
        dyn = subprocess.run(["readelf", "-d", prog], capture_output=True, text=True,
                             check=True).stdout
        assert re.search(r"\bBIND_NOW\b|Flags: .*\bNOW\b", dyn), (prog, dyn)
    conffiles = subprocess.run(["dpkg-query", "-W", "-f=${Conffiles}", "jtr"],
                               capture_output=True, text=True, check=True).stdout
    assert VARIABLES in conffiles


@INSTALLED
def test_the_packages_watch_unit_verifies(deb):
    """The unit the package installed runs the package's jtr: systemd checks it as it
    is (its ExecStart there and executable)."""
    need("systemd-analyze", "systemd")
    unit = "/usr/share/jtr/jtr-watch.service"
    assert unit in deb["files"]
    with open(unit) as f:
        text = f.read()
    assert "ExecStart=/usr/bin/jtr watch -q " in text, text
    assert "Documentation=file:///usr/share/doc/jtr/fleet.md" in text, text
    r = subprocess.run(["systemd-analyze", "verify", unit], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr


@INSTALLED
def test_a_user_runs_help_man_and_a_measurement(deb):
    p = as_user(deb, ["jtr", "--help"])
    assert p.returncode == 0 and p.stdout.startswith("usage: jtr "), p.stderr
    p = as_user(deb, ["man", "jtr"], MANPAGER="cat", MANWIDTH="200")
    assert p.returncode == 0 and "jtr-run(1)" in p.stdout, p.stderr
    p = as_user(deb, ["man", "jtr-gap"], MANPAGER="cat", MANWIDTH="200")
    assert p.returncode == 0 and "--max-outliers N" in p.stdout, p.stderr
    out = os.path.join(deb["home"], "r")
    p = as_user(deb, ["jtr", "run", "--no-trace", "-d", "1", "-o", out])
    assert p.returncode == 0, p.stderr
    assert "results: %s/" % out in p.stdout
    for f in ("result.json", "summary.txt"):
        assert os.stat(os.path.join(out, f)).st_uid == deb["user"].pw_uid
    p = as_user(deb, ["jtr", "tune", "list"])
    assert p.returncode == 0 and "jtr-isolate" in p.stdout, p.stderr


def capable():
    """The probes that have cap_sys_nice and cap_ipc_lock."""
    out = set()
    for prog in glob.glob("/usr/libexec/jtr/jtr-*"):
        caps = subprocess.run(["getcap", prog], capture_output=True, text=True).stdout
        if "cap_ipc_lock,cap_sys_nice=ep" in caps:
            out.add(os.path.basename(prog)[4:])
    return out


def reconfigure(caps):
    """Answer the debconf question jtr/probe-caps and run the postinst again."""
    subprocess.run(["debconf-set-selections"], input="jtr jtr/probe-caps boolean %s\n" % (
        "true" if caps else "false"), text=True, check=True)
    p = subprocess.run(["dpkg-reconfigure", "jtr"], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
    assert p.returncode == 0, p.stdout + p.stderr


@INSTALLED
def test_the_privileged_probes_carry_their_capabilities(deb):
    """By default (jtr/probe-caps true) the probes of make install-caps get their
    capabilities, and a user runs them at SCHED_FIFO; answered no, they lose them."""
    installed = {os.path.basename(p)[4:] for p in glob.glob("/usr/libexec/jtr/jtr-*")}
    assert set(priv_probes()) <= installed
    assert capable() == set(priv_probes())
    fifo = ["jtr", "gap", "-f", "10", "-d", "200ms", "-q", "-o"]
    p = as_user(deb, fifo + [os.path.join(deb["home"], "fifo")])
    assert p.returncode == 0, p.stderr
    try:
        reconfigure(False)
        assert capable() == set()
        p = as_user(deb, fifo + [os.path.join(deb["home"], "nofifo")])
        assert p.returncode == 2 and "cannot use SCHED_FIFO" in p.stderr, p.stderr
    finally:
        reconfigure(True)
    assert capable() == set(priv_probes())


@INSTALLED
def test_tuned_finds_the_profiles_and_their_variables(deb):
    need("tuned-adm", "tuned")
    # tuned-adm list reads the profile folders itself; without the daemon it says
    # so on the way and lists them all the same
    p = subprocess.run(["tuned-adm", "list"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    for d in TUNED_LINKS:
        assert re.search(r"^- %s\s+- jtr " % os.path.basename(d), p.stdout, re.M), p.stdout
    # tuned's own loader, from its own folders: jtr-isolate's include of the
    # variables file resolves (isolated_cores as the template says)
    code = r"""
import tuned.consts as c, tuned.profiles as P
from tuned.profiles.locator import Locator
from tuned.profiles.variables import Variables
from tuned.utils.global_config import GlobalConfig
v = Variables()
dirs = sys.argv[1].split(":") if sys.argv[1] else getattr(c, "LOAD_DIRECTORIES", None) or \
    c.CFG_DEF_PROFILE_DIRS
P.Loader(Locator(dirs), P.Factory(), P.Merger(), GlobalConfig(), v).load(["jtr-isolate"])
print(v.expand("${isolated_cores}"))
"""
    p = subprocess.run(["/usr/bin/python3", "-c", "import sys\n" + code, ""],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    # tuned 2.23 and later read /usr/lib/tuned/profiles and /etc/tuned/profiles
    # (its CFG_DEF_PROFILE_DIRS): the same from there
    q = subprocess.run(["/usr/bin/python3", "-c", "import sys\n" + code,
                        "/usr/lib/tuned/profiles:/etc/tuned/profiles"],
                       capture_output=True, text=True, timeout=60)
    assert q.returncode == 0 and q.stdout == p.stdout, q.stderr
    with open(os.path.join(ROOT, "tuning-profiles", "jtr-variables.conf")) as f:
        template = re.search(r"^isolated_cores=(.*)$", f.read(), re.M).group(1)
    if deb["saved_variables"] is None:
        assert p.stdout.strip() == template


@INSTALLED
def test_install_profiles_copies_from_the_installed_profiles(deb, tmp_path):
    p = subprocess.run(["/usr/bin/jtr", "tune", "install-profiles", "--dir", str(tmp_path)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    with open("/usr/share/jtr/tuning-profiles/jtr-latency/tuned.conf") as f:
        assert (tmp_path / "jtr-latency" / "tuned.conf").read_text() == f.read()
    assert (tmp_path / "jtr-variables.conf").is_file()


@INSTALLED
def test_purge_leaves_nothing_behind(deb):
    p = purge()
    assert p.returncode == 0, p.stdout + p.stderr
    assert dpkg_status() == ""
    left = [f for f in deb["files"] if os.path.lexists(f)]
    # what remains is only folders other packages own (/usr/share/man/man1, ...)
    for f in left:
        assert os.path.isdir(f) and not os.path.islink(f), f
        owner = subprocess.run(["dpkg", "-S", f], capture_output=True, text=True)
        assert owner.returncode == 0, "%s: left behind, owned by no package" % f
    for f in PKG_PATHS:
        assert not os.path.lexists(f), f
    if deb["saved_variables"] is None:
        assert not os.path.exists(VARIABLES)
    p = subprocess.run(["debconf-show", "jtr"], capture_output=True, text=True)
    assert p.stdout.strip() == ""       # the question jtr/probe-caps is gone too
