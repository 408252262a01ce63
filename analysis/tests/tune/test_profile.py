# SPDX-License-Identifier: GPL-2.0-only
"""tune.profile: includes merged with where each option came from, variables
expanded, and the errors of an expansion located in the option that holds it."""
import pytest

from jtrpy.errors import UsageError
from jtrpy.tune.profile import NeedCpus, Profile


@pytest.fixture
def profiles(tmp_path, monkeypatch):
    """write(name, text): a profile folder of its own in a search path of its own."""
    monkeypatch.setenv("JTR_PROFILE_DIRS", str(tmp_path))

    def write(name, text):
        d = tmp_path / name
        d.mkdir()
        (d / "tuned.conf").write_text(text)
    return write


def test_origin_and_where_name_the_profile_that_set_an_option(profiles):
    profiles("base", "[main]\nsummary=b\n[sysctl]\nvm.swappiness=10\nkernel.x=1\n")
    profiles("top", "[main]\ninclude=base\n[variables]\nv=7\n[sysctl]\nkernel.x=${v}\n")
    p = Profile("top")
    assert p.units["sysctl"] == {"vm.swappiness": "10", "kernel.x": "7"}
    assert p.origin[("sysctl", "vm.swappiness")] == "base"
    assert p.origin[("sysctl", "kernel.x")] == "top"
    assert p.where("sysctl", "vm.swappiness") == "base: [sysctl] vm.swappiness=10"
    assert p.where("sysctl", "kernel.x") == "top: [sysctl] kernel.x=${v} (= 7)"


def test_expansion_errors_name_the_option(profiles):
    profiles("bad", "[main]\n[scheduler]\nx=${f:cpulist_invert:a-b}\n")
    with pytest.raises(UsageError) as e:
        Profile("bad")
    assert str(e.value).startswith("bad: [scheduler] x=${f:cpulist_invert:a-b}: ${f:"
                                   "cpulist_invert} of 'a-b': not a CPU list")
    profiles("unset", "[main]\n[sysctl]\nkernel.x=${nope}\n")
    with pytest.raises(UsageError) as e:
        Profile("unset")
    assert str(e.value) == ("unset: [sysctl] kernel.x=${nope}: variable ${nope} is not set; "
                            "set it in [variables]")


def test_unset_isolated_cores_asks_for_cpus(profiles):
    profiles("iso", "[main]\n[scheduler]\nisolated_cores=${isolated_cores}\n")
    with pytest.raises(NeedCpus) as e:
        Profile("iso")
    assert "say which with --cpus LIST" in str(e.value)
    assert Profile("iso", {"isolated_cores": "1"}).units["scheduler"]["isolated_cores"] == "1"


def test_a_profile_is_bounded(profiles, tmp_path):
    """Variables that double at each level stop at MAX_VALUE_CHARS (eight of them
    made a 100 MB value) and a tuned.conf larger than MAX_PROFILE_BYTES is not
    read (a 3M-line one took 60 s)."""
    from jtrpy.tune import profile as P
    doubling = "".join("v%d=${v%d}${v%d}\n" % (k, k - 1, k - 1) for k in range(1, 9))
    profiles("big", "[main]\n[variables]\nv0=%s\n%s[sysctl]\nkernel.x=${v8}\n"
             % ("x" * 1000, doubling))
    with pytest.raises(UsageError, match="expands to more than 65536 characters"):
        Profile("big")
    many = "${v0}" * 200
    profiles("wide", "[main]\n[variables]\nv0=%s\n[sysctl]\nkernel.x=%s\n" % ("x" * 1000, many))
    with pytest.raises(UsageError, match="expands to more than 65536 characters"):
        Profile("wide")
    profiles("huge", "[main]\n[sysctl]\n" + "kernel.x=1\n" * (P.MAX_PROFILE_BYTES // 11 + 1))
    with pytest.raises(UsageError, match="larger than the 1 MiB a tuned profile may have"):
        Profile("huge")
    profiles("fine", "[main]\n[variables]\nv=%s\n[sysctl]\nkernel.x=${v}${v}\n" % ("y" * 30000))
    assert len(Profile("fine").units["sysctl"]["kernel.x"]) == 60000
