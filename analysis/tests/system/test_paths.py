# SPDX-License-Identifier: GPL-2.0-only
"""paths: where an installed jtr finds its profiles. The first folder is the one
jtr tune install-profiles copies from, so it must be the one that exists: the
wheel's (jtrpy/tuning-profiles) or make install's and the package's
(PREFIX/share/jtr/tuning-profiles). Then tuned's folders, by tuned's version:
tuned 2.23 moved them to /usr/lib/tuned/profiles and /etc/tuned/profiles."""
import os
import stat
import sys

import pytest

from jtrpy.system import paths


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """An installed layout under tmp_path: PREFIX/lib/jtr/jtrpy."""
    package = tmp_path / "lib" / "jtr" / "jtrpy"
    package.mkdir(parents=True)
    monkeypatch.setattr(paths, "PACKAGE", str(package))
    monkeypatch.setattr(paths, "PREFIX", str(tmp_path))
    monkeypatch.setattr(paths, "IN_SOURCE_TREE", False)
    monkeypatch.delenv("JTR_PROFILE_DIRS", raising=False)
    tuned(monkeypatch, "2.20.0")
    return tmp_path, package


@pytest.fixture(autouse=True)
def fresh_tuned_version():
    """tuned's version is looked up once a process: again for each test."""
    paths._installed_tuned_version.cache_clear()
    yield
    paths._installed_tuned_version.cache_clear()


def tuned(monkeypatch, version):
    """The tuned version tuned_layout() sees (None: no tuned-adm anywhere)."""
    paths._installed_tuned_version.cache_clear()
    if version:
        monkeypatch.setenv("JTR_TUNED_VERSION", version)
    else:
        monkeypatch.delenv("JTR_TUNED_VERSION", raising=False)
        monkeypatch.setenv("PATH", "/nonexistent")
        monkeypatch.setattr(paths, "TUNED_ADM", ())


def test_make_install_profiles_come_first(installed, monkeypatch):
    prefix, _ = installed
    share = prefix / "share" / "jtr" / "tuning-profiles"
    share.mkdir(parents=True)
    assert paths.profile_dirs() == [str(share), "/etc/tuned", "/usr/lib/tuned"]
    tuned(monkeypatch, "2.23.0")
    assert paths.profile_dirs() == [str(share), "/etc/tuned/profiles",
                                    "/usr/lib/tuned/profiles"]


@pytest.mark.parametrize("version,system,user", [
    ("2.20.0", "/usr/lib/tuned", "/etc/tuned"),
    ("2.22.9", "/usr/lib/tuned", "/etc/tuned"),
    ("2.23.0", "/usr/lib/tuned/profiles", "/etc/tuned/profiles"),
    ("2.28.0-rc.1", "/usr/lib/tuned/profiles", "/etc/tuned/profiles"),
    ("3.0", "/usr/lib/tuned/profiles", "/etc/tuned/profiles"),
    (None, "/usr/lib/tuned/profiles", "/etc/tuned/profiles"),
])
def test_tuneds_folders_by_its_version(monkeypatch, tmp_path, version, system, user):
    tuned(monkeypatch, version)
    got = paths.tuned_layout(str(tmp_path / "none.conf"))
    assert (got["system"], got["user"]) == (system, user)
    assert got["variables"] == "/etc/tuned/jtr-variables.conf"      # in both layouts
    if version is None:
        assert got["version"] is None
    if version is None:
        assert "tuned is not installed: assuming the layout of tuned 2.23" in got["why"]
    else:
        assert got["why"].startswith("tuned %s (JTR_TUNED_VERSION=" % version)


def test_profile_dirs_of_tuned_main_conf(monkeypatch, tmp_path):
    """tuned 2.23 and later take profile_dirs from tuned-main.conf (the later folder
    wins: the last is the admin's); earlier ones have no such option."""
    conf = tmp_path / "tuned-main.conf"
    conf.write_text("# profile_dirs = /x\nprofile_dirs = /usr/lib/tuned/profiles,"
                    "/opt/p ; /srv/mine  # local\n")
    tuned(monkeypatch, "2.24.0")
    got = paths.tuned_layout(str(conf))
    assert (got["system"], got["user"]) == ("/usr/lib/tuned/profiles", "/srv/mine")
    assert "profile_dirs = /usr/lib/tuned/profiles,/opt/p,/srv/mine" in got["why"]
    tuned(monkeypatch, "2.21.0")
    assert paths.tuned_layout(str(conf))["user"] == "/etc/tuned"


def python_tuned_adm(tmp_path, monkeypatch, module_version, says):
    """A tuned-adm in Python on PATH that says tuned-adm @says when run; its tuned
    package's version module says @module_version (None: there is no tuned
    package for its interpreter)."""
    site = tmp_path / "site"
    if module_version:
        (site / "tuned").mkdir(parents=True)
        (site / "tuned" / "__init__.py").write_text("")
        (site / "tuned" / "version.py").write_text(
            'TUNED_VERSION_STR = "%s"\n' % module_version)
    adm = tmp_path / "bin" / "tuned-adm"
    adm.parent.mkdir()
    adm.write_text("#!%s\nprint('tuned-adm %s')\n" % (sys.executable, says))
    adm.chmod(adm.stat().st_mode | stat.S_IEXEC)
    monkeypatch.delenv("JTR_TUNED_VERSION", raising=False)
    monkeypatch.setenv("PYTHONPATH", str(site))
    monkeypatch.setenv("PATH", str(adm.parent))
    return paths.tuned_layout(str(tmp_path / "none.conf"))


def test_tuneds_version_module_by_tuned_adms_python(monkeypatch, tmp_path):
    """tuned's own version module, imported by the interpreter tuned-adm names:
    what tuned-adm --version prints, without loading tuned-adm (2.24.1 here, so
    the test can tell which was read)."""
    got = python_tuned_adm(tmp_path, monkeypatch, "2.25.0", "2.24.1")
    assert got["version"] == "2.25.0" and got["user"] == "/etc/tuned/profiles"
    assert got["why"].startswith("tuned 2.25.0 (tuned's version module)")


def test_tuned_adm_is_asked_where_its_module_cannot_be_read(monkeypatch, tmp_path):
    got = python_tuned_adm(tmp_path, monkeypatch, None, "2.22.0")
    assert got["version"] == "2.22.0" and got["user"] == "/etc/tuned"
    assert got["why"].startswith("tuned 2.22.0 (tuned-adm --version)")


def test_the_installed_tuneds_version_is_read(monkeypatch, tmp_path):
    """tuned-adm --version, as tuned prints it, where tuned-adm is no Python
    script."""
    adm = tmp_path / "tuned-adm"
    adm.write_text("#!/bin/sh\necho 'tuned-adm 2.24.1'\n")
    adm.chmod(adm.stat().st_mode | stat.S_IEXEC)
    monkeypatch.delenv("JTR_TUNED_VERSION", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    got = paths.tuned_layout(str(tmp_path / "none.conf"))
    assert got["version"] == "2.24.1" and got["user"] == "/etc/tuned/profiles"
    assert got["why"].startswith("tuned 2.24.1 (tuned-adm --version)")


def test_the_wheels_profiles_come_first(installed):
    prefix, package = installed
    (package / "tuning-profiles").mkdir()
    (prefix / "share" / "jtr" / "tuning-profiles").mkdir(parents=True)
    assert paths.profile_dirs()[0] == os.path.join(package, "tuning-profiles")


def test_without_profiles_the_packages_folder_is_named(installed):
    _, package = installed
    assert paths.profile_dirs()[0] == os.path.join(package, "tuning-profiles")


def test_the_environment_wins(installed, monkeypatch):
    monkeypatch.setenv("JTR_PROFILE_DIRS", "/a::/b")
    assert paths.profile_dirs() == ["/a", "/b"]
