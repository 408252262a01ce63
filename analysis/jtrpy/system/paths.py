# SPDX-License-Identifier: GPL-2.0-only
"""paths - where jtr's own files are: the measuring programs, the tuning
profiles and the state folder, in a source tree, after `make install`, or in a
Python install (pip) that carries its programs and profiles in the package."""
import functools
import os
import re
import shutil
import subprocess

from ..errors import JtrError
from . import signals

PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))   # .../jtrpy
SOURCE_TREE = os.path.dirname(os.path.dirname(PACKAGE))   # when PACKAGE is analysis/jtrpy
IN_SOURCE_TREE = PACKAGE == os.path.join(SOURCE_TREE, "analysis", "jtrpy")
# make install (and the Debian package, PREFIX /usr): PREFIX/lib/jtr/jtrpy, the
# programs in PREFIX/libexec/jtr and the profiles with the jtr-variables.conf
# template in PREFIX/share/jtr/tuning-profiles (with PREFIX /usr also linked
# into tuned's system folder, where tuned reads them, which profile_dirs() lists
# last; tuned_layout() says which folder that is)
PREFIX = os.path.dirname(os.path.dirname(os.path.dirname(PACKAGE)))


def probe_dirs():
    """Folders that may hold the jtr-* programs, in the order they are tried."""
    env = os.environ.get("JTR_LIBEXEC")
    if env:
        return [env]
    if IN_SOURCE_TREE:
        return [os.path.join(SOURCE_TREE, "build", "bin")]
    return [os.path.join(PACKAGE, "libexec"), os.path.join(PREFIX, "libexec", "jtr")]


def probe_path(name):
    """Full path of the program jtr-NAME, or JtrError saying how to build it."""
    for d in probe_dirs():
        p = os.path.join(d, "jtr-" + name)
        if os.access(p, os.X_OK):
            return p
    if name == "trace":
        raise JtrError(
            "the kernel-event tracer jtr-trace is not built (looked in %s): it needs clang, "
            "bpftool and libbpf's headers (Debian: apt-get install clang bpftool libbpf-dev "
            "libelf-dev zlib1g-dev; Ubuntu: the same, with linux-tools-common "
            "linux-tools-$(uname -r) for bpftool before 25.04; "
            "Fedora, RHEL: dnf install clang bpftool libbpf-devel "
            "elfutils-libelf-devel), then 'make' in the source tree" % ", ".join(probe_dirs()))
    raise JtrError(
        "the measuring program jtr-%s is not built (looked in %s); run 'make' in the "
        "source tree, or set JTR_LIBEXEC" % (name, ", ".join(probe_dirs())))


def profile_dirs():
    """Folders searched for <name>/tuned.conf, first match wins: jtr's own (the
    first is where jtr tune install-profiles copies from), then tuned's (its user
    folder, then its system folder, as tuned_layout() says)."""
    env = os.environ.get("JTR_PROFILE_DIRS")
    if env:
        return [d for d in env.split(":") if d]
    if IN_SOURCE_TREE:
        own = [os.path.join(SOURCE_TREE, "tuning-profiles")]
    else:
        # the wheel's (in the package), else make install's
        own = [d for d in (os.path.join(PACKAGE, "tuning-profiles"),
                           os.path.join(PREFIX, "share", "jtr", "tuning-profiles"))
               if os.path.isdir(d)][:1] or [os.path.join(PACKAGE, "tuning-profiles")]
    layout = tuned_layout()
    return own + [layout["user"], layout["system"]]


# tuned's profile folders (tuned/consts.py): up to 2.22 LOAD_DIRECTORIES,
# /usr/lib/tuned and /etc/tuned; from 2.23 CFG_DEF_PROFILE_DIRS, the "profiles"
# folders under them, which tuned-main.conf's profile_dirs may change (the later
# folder wins, so the last is the user's). The variables files stay in
# /etc/tuned in both (tuned's own realtime-variables.conf, included by its
# realtime profile as /etc/tuned/realtime-variables.conf; jtr-isolate likewise).
TUNED_PROFILES_SINCE = (2, 23)
TUNED_MAIN_CONF = "/etc/tuned/tuned-main.conf"
TUNED_CONF_DIR = "/etc/tuned"
VARIABLES_FILE = os.path.join(TUNED_CONF_DIR, "jtr-variables.conf")
TUNED_ADM = ("/usr/sbin/tuned-adm", "/usr/bin/tuned-adm")    # also where PATH lacks sbin


def _version_tuple(text):
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text or "")
    return tuple(int(x or 0) for x in m.groups()) if m else None


_READ_VERSION = "from tuned import version as v; print(v.TUNED_VERSION_STR)"


def _tuned_adm_python(adm):
    """tuned-adm's interpreter line as an argv (["/usr/bin/python3", "-Es"]) where
    tuned-adm is a Python script, else None."""
    try:
        with open(adm, "rb") as f:
            first = f.readline(256)
    except OSError:
        return None
    argv = first[2:].decode("utf-8", "replace").split() if first.startswith(b"#!") else []
    return argv if any("python" in os.path.basename(a) for a in argv[:2]) else None


@functools.lru_cache(maxsize=None)
def _installed_tuned_version():
    """(version text or None, how it was learnt)."""
    env = os.environ.get("JTR_TUNED_VERSION")
    if env:
        return env, "JTR_TUNED_VERSION=%s" % env
    adm = shutil.which("tuned-adm") or next(
        (p for p in TUNED_ADM if os.access(p, os.X_OK)), None)
    if not adm:
        return None, "tuned is not installed"
    python = _tuned_adm_python(adm)
    if python:
        # tuned's own version module, read by tuned-adm's interpreter: 0.02 s of
        # CPU where tuned-adm --version takes 0.14 s (it loads all of tuned-adm)
        try:
            p = signals.run(python + ["-c", _READ_VERSION], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, timeout=30)
            ver = _version_tuple(p.stdout) if p.returncode == 0 else None
            if ver:
                return "%d.%d.%d" % ver, "tuned's version module"
        except (OSError, subprocess.TimeoutExpired):
            pass
    try:
        p = signals.run([adm, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                        text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, "%s --version failed (%s)" % (adm, e)
    ver = _version_tuple(p.stdout)
    if p.returncode != 0 or not ver:
        return None, "%s --version said %r" % (adm, p.stdout.strip()[-80:])
    return "%d.%d.%d" % ver, "tuned-adm --version"


def _profile_dirs_option(path):
    """tuned-main.conf's profile_dirs (a list), or None where it is not set."""
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                m = re.match(r"\s*profile_dirs\s*=\s*(.*)$", line.split("#", 1)[0])
                if m:
                    return [d.strip() for d in re.split(r"[,;]", m.group(1)) if d.strip()]
    except OSError:
        pass
    return None


def tuned_layout(main_conf=TUNED_MAIN_CONF):
    """Where the installed tuned reads profiles: {"version": "2.20.0" or None,
    "system": folder of packaged profiles, "user": the admin's folder (where
    install-profiles copies), "variables": jtr-variables.conf's path (what
    jtr-isolate includes), "why": one line saying how this was decided}. By
    tuned's version (its version module, read by tuned-adm's python, or
    tuned-adm --version; JTR_TUNED_VERSION instead of it);
    where tuned is not installed, the layout of tuned 2.23 and later, the one a
    tuned installed now has upstream."""
    text, how = _installed_tuned_version()
    ver = _version_tuple(text)
    new = ver is None or ver[:2] >= TUNED_PROFILES_SINCE
    if new:
        system, user = "/usr/lib/tuned/profiles", "/etc/tuned/profiles"
    else:
        system, user = "/usr/lib/tuned", "/etc/tuned"
    if ver is None:
        why = "%s: assuming the layout of tuned 2.23 and later (%s, %s)" % (how, system, user)
    else:
        why = "tuned %s (%s): %s" % (text, how, "2.23 or later reads %s and %s" % (
            system, user) if new else "before 2.23 it reads %s and %s" % (system, user))
    dirs = _profile_dirs_option(main_conf) if new and ver is not None else None
    if dirs:
        system, user = dirs[0], dirs[-1]
        why += "; %s sets profile_dirs = %s" % (main_conf, ",".join(dirs))
    return {"version": text if ver else None, "system": system, "user": user,
            "variables": VARIABLES_FILE, "why": why}


def state_dir():
    """Where jtr tune keeps its snapshot and the active profile's name."""
    return os.environ.get("JTR_STATE_DIR", "/run/jtr")


def boot_state_dir():
    """Where jtr tune keeps a copy of the snapshot of a profile whose boot options it
    wrote (apply --boot): the state folder (/run) is gone after the reboot they
    need, and revert must still find them. Under a state folder given by
    JTR_STATE_DIR (tests, staging), its boot/ subfolder."""
    if os.environ.get("JTR_BOOT_STATE_DIR"):
        return os.environ["JTR_BOOT_STATE_DIR"]
    if os.environ.get("JTR_STATE_DIR"):
        return os.path.join(os.environ["JTR_STATE_DIR"], "boot")
    return "/var/lib/jtr"


def active_profile_path():
    """The file naming the tuning profile jtr applied (results record it)."""
    return os.path.join(state_dir(), "active-profile")
