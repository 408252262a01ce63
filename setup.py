# SPDX-License-Identifier: GPL-2.0-only
"""setup - the parts of `pip install .` that pyproject.toml cannot say: the C
programs are built with make and installed inside the package (jtrpy/libexec),
with the tuning profiles (jtrpy/tuning-profiles) and the VERSION file, where
jtrpy/system/paths.py looks for them."""
import glob
import os
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))


class BuildWithPrograms(build_py):
    """build_py, then `make all` and the programs, profiles and VERSION copied in."""

    def run(self):
        # copy every module whatever the times say: a checkout older than the last
        # build (git switch, an archive) would otherwise keep the build's modules
        self.force = True
        super().run()
        try:
            # a make per CPU this process may use (a clone's build: 16 s -> 8 s on two)
            subprocess.check_call(["make", "-C", ROOT, "-j%d" % len(os.sched_getaffinity(0)),
                                   "all"])
        except (OSError, subprocess.CalledProcessError) as e:
            raise SystemExit("jtr: building the C programs failed (%s); 'make deps-run' "
                             "(scripts/deps.sh run) installs what they need" % e)
        pkg = os.path.join(self.build_lib, "jtrpy")
        libexec = os.path.join(pkg, "libexec")
        os.makedirs(libexec, exist_ok=True)
        for prog in glob.glob(os.path.join(ROOT, "build", "bin", "jtr-*")):
            shutil.copy2(prog, libexec)
        for conf in glob.glob(os.path.join(ROOT, "tuning-profiles", "jtr-*", "tuned.conf")):
            dst = os.path.join(pkg, "tuning-profiles", os.path.basename(os.path.dirname(conf)))
            os.makedirs(dst, exist_ok=True)
            shutil.copy2(conf, dst)
        shutil.copy2(os.path.join(ROOT, "tuning-profiles", "jtr-variables.conf"),
                     os.path.join(pkg, "tuning-profiles"))
        shutil.copy2(os.path.join(ROOT, "VERSION"), pkg)


class BinaryDistribution(Distribution):
    """The wheel carries machine code: it is for this platform only."""

    def has_ext_modules(self):
        return True


# setuptools' own build folder, apart from make's build/ of the C side; egg_info
# wants its folder to be there already (a fresh clone has no build/)
PY_BUILD = os.path.join("build", "python")
os.makedirs(os.path.join(ROOT, PY_BUILD), exist_ok=True)

setup(cmdclass={"build_py": BuildWithPrograms}, distclass=BinaryDistribution,
      options={"build": {"build_base": PY_BUILD}, "egg_info": {"egg_base": PY_BUILD}})
