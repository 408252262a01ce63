# SPDX-License-Identifier: GPL-2.0-only
"""jtr tune's jobs in-process, changing nothing: the profiles and the settings
read, tuned's folders, the plan said (RT throttling's warning, what --boot could
do), the refusals of an apply before it changes anything, verify's drift,
confirm and revert with a snapshot written here. tests/test_tune.py applies and
reverts on a machine."""
import json
import types

import pytest

from jtrpy.drivers import tune
from jtrpy.errors import UsageError
from jtrpy.render import tune as show
from jtrpy.system import paths
from jtrpy.tune import engine as E
from jtrpy.tune import inventory


def entry(label, key, before, target, type_="file", **kw):
    e = {"label": label, "key": key, "before": before, "target": target, "type": type_,
         "how": "text"}
    e.update(kw)
    return e


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("JTR_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


@pytest.fixture
def profiles(tmp_path, monkeypatch):
    d = tmp_path / "profiles"
    # kernel.ostype: a sysctl nothing changes (the machine's tests run beside these)
    for name, text in (("jtr-base", "[main]\nsummary=the base\n[sysctl]\nkernel.ostype=Linux\n"),
                       ("jtr-more", "[main]\nsummary=more\ninclude=jtr-base\n"
                                    "[myplugin]\nx=1\n")):
        (d / name).mkdir(parents=True)
        (d / name / "tuned.conf").write_text(text)
    (d / "jtr-variables.conf").write_text("[variables]\nisolated_cores=1\n")
    monkeypatch.setenv("JTR_PROFILE_DIRS", str(d))
    return d


def snapshot(state, status="applied", entries=(), **kw):
    st = {"format": E.STATE_FORMAT, "profile": "jtr-base", "status": status,
          "entries": list(entries), "applied_at": "2026-01-01T00:00:00Z"}
    st.update(kw)
    state.mkdir(exist_ok=True)
    (state / "tune-state.json").write_text(json.dumps(st))


def test_profiles(profiles):
    assert tune.profiles() == [("jtr-base", "the base", []), ("jtr-more", "more", ["jtr-base"])]


def test_settings_and_the_snapshot(state, monkeypatch):
    monkeypatch.setattr(inventory, "knob_rows", lambda: ["row"])
    monkeypatch.setattr(inventory, "dump", lambda: {"file:x": "1"})
    assert tune.settings() == ({"active": None, "state_error": None, "knobs": ["row"]}, None)
    snapshot(state)
    doc, st = tune.settings(dump=True)
    assert doc == {"active": "jtr-base", "state_error": None, "knobs": ["row"],
                   "dump": {"file:x": "1"}} and st["applied_at"] == "2026-01-01T00:00:00Z"
    (state / "tune-state.json").write_text("{")
    doc, st = tune.settings()
    assert st is None and doc["state_error"].startswith("%s: corrupt snapshot"
                                                        % (state / "tune-state.json"))


def test_tuned_folders_and_install_refusals(tmp_path, monkeypatch):
    monkeypatch.setenv("JTR_TUNED_VERSION", "2.20.0")
    paths._installed_tuned_version.cache_clear()     # read once a process
    try:
        folder, why = tune.tuned_folder("user")
        assert folder == "/etc/tuned" and why.startswith("tuned 2.20.0 (JTR_TUNED_VERSION")
        said = []
        with pytest.raises(UsageError, match="^--dir %s: no such folder \\(tuned's is "
                                             "/etc/tuned: " % (tmp_path / "none")):
            tune.install(str(tmp_path / "none"), said.append)
        assert said == []
    finally:
        paths._installed_tuned_version.cache_clear()


def test_the_plan_said(monkeypatch):
    monkeypatch.setattr(E, "can_change_cmdline", lambda: (True, "grub drop-in in /g"))
    monkeypatch.setattr(tune, "online_cpus", lambda: [0, 1, 2, 3])
    plan = types.SimpleNamespace(
        profile=types.SimpleNamespace(name="jtr-realtime"), isolated=[2, 3], pinned=[],
        skipped=[], warnings=[],
        entries=[entry("kernel.sched_rt_runtime_us", "file:rt", "950000", "-1")],
        boot=[{"word": "nohz_full=2-3", "param": "nohz_full", "now": "absent"}],
        already=E.Plan.already)
    said = []
    tune.show_plan(plan, [2, 3], said.append)
    assert said[0] == "jtr-realtime on CPUs 2-3 (housekeeping: 0-1)"
    assert said[1:] == show.plan_lines(plan, (True, "grub drop-in in /g"))
    assert plan.warnings == [E.RT_WARNING] and said[-2] == "  --boot writes it as a grub " \
                                                            "drop-in in /g"


def test_apply_refusals_change_nothing(profiles, state, monkeypatch):
    o = {"profile": [], "cpus": None, "force": False, "dry_run": False, "boot": False,
         "auto_revert": None, "via_tuned": None}
    said = []
    with pytest.raises(UsageError, match="give one profile to apply \\(jtr-base, jtr-more\\)"):
        tune.apply(o, said.append, said.append)
    monkeypatch.setattr(E.os, "geteuid", lambda: 1000)
    with pytest.raises(UsageError, match="run it as root"):
        tune.apply(dict(o, profile=["jtr-base"]), said.append, said.append)
    assert said == [] and not state.exists()
    monkeypatch.setattr(E.os, "geteuid", lambda: 0)
    snapshot(state)
    with pytest.raises(UsageError, match="^profile jtr-base is applied \\(since "
                                         "2026-01-01T00:00:00Z\\); run 'jtr tune revert'"):
        tune.apply(dict(o, profile=["jtr-base"]), said.append, said.append)
    assert said == []
    assert tune.apply(dict(o, profile=["jtr-more"], dry_run=True), said.append, None) == 0
    assert said[:2] == ["jtr-more", "plan (1 settings):"]
    assert said[-1] == "dry run: nothing was changed"


def test_verify_confirm_and_revert(state, tmp_path):
    said = []
    with pytest.raises(UsageError, match="no profile is applied \\(no active snapshot"):
        tune.verify()
    with pytest.raises(UsageError, match="no profile is applied: nothing to confirm"):
        tune.confirm(said.append)
    knob = tmp_path / "knob"
    knob.write_text("7\n")
    e = entry(str(knob), "file:" + str(knob), "0", "1", path=str(knob), result="changed")
    snapshot(state, entries=[e], confirmed=True)
    st, drift = tune.verify()
    assert st["profile"] == "jtr-base" and drift == [(str(knob), "1", "7")]
    assert tune.confirm(said.append) == "jtr-base is already confirmed"
    snapshot(state, status="reverted", reverted_at="2026-01-02T00:00:00Z")
    assert said == []
    assert tune.revert(said.append, said.append) == 0
    assert said == ["jtr-base was already reverted at 2026-01-02T00:00:00Z; nothing to do"]
