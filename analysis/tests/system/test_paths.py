"""paths: where an installed jtr finds its profiles. The first folder is the one
jtr tune install-profiles copies from, so it must be the one that exists: the
wheel's (jtrpy/tuning-profiles) or make install's and the package's
(PREFIX/share/jtr/tuning-profiles)."""
import os

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
    return tmp_path, package


def test_make_install_profiles_come_first(installed):
    prefix, _ = installed
    share = prefix / "share" / "jtr" / "tuning-profiles"
    share.mkdir(parents=True)
    assert paths.profile_dirs() == [str(share), "/etc/tuned", "/usr/lib/tuned"]


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
