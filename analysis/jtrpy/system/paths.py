"""paths - where jtr's own files are: the measuring programs, the tuning
profiles and the state folder, in a source tree, after `make install`, or in a
Python install (pip) that carries its programs and profiles in the package."""
import os

from ..errors import JtrError

PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))   # .../jtrpy
SOURCE_TREE = os.path.dirname(os.path.dirname(PACKAGE))   # when PACKAGE is analysis/jtrpy
IN_SOURCE_TREE = PACKAGE == os.path.join(SOURCE_TREE, "analysis", "jtrpy")
# make install (and the Debian package, PREFIX /usr): PREFIX/lib/jtr/jtrpy, the
# programs in PREFIX/libexec/jtr and the profiles with the jtr-variables.conf
# template in PREFIX/share/jtr/tuning-profiles (with PREFIX /usr also linked
# into /usr/lib/tuned, where tuned reads them, which profile_dirs() lists last)
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
    first is where jtr tune install-profiles copies from), then tuned's."""
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
    return own + ["/etc/tuned", "/usr/lib/tuned"]


def state_dir():
    """Where jtr tune keeps its snapshot and the active profile's name."""
    return os.environ.get("JTR_STATE_DIR", "/run/jtr")


def active_profile_path():
    """The file naming the tuning profile jtr applied (results record it)."""
    return os.path.join(state_dir(), "active-profile")
