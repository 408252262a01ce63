# SPDX-License-Identifier: GPL-2.0-only
"""jtr tune in-process, changing nothing: the action first and in its own words,
the profiles listed, the table of settings (rows given), a dry run, verify and
confirm against snapshots written here, a revert that has nothing to do, and the
folders of tuned it names. Only what needs no root and writes no setting runs
here (tests/test_tune.py applies on a machine; the plan as printed:
tests/render/test_tune.py)."""
import json

import pytest

from jtrpy.cli.main import main as jtr
from jtrpy.system import paths
from jtrpy.tune import engine as E
from jtrpy.tune import inventory

from ..drivers import test_tune as jobs

entry, snapshot = jobs.entry, jobs.snapshot
state, profiles = jobs.state, jobs.profiles    # fixtures: the snapshot's folder, two profiles

ACTIONS = "list, show, apply, verify, revert, confirm, install-profiles"


@pytest.mark.parametrize("args,message", [
    ([], "give an action: %s; see 'jtr tune --help'" % ACTIONS),
    (["--cpus=1"], "unknown option '--cpus'; give an action first: %s; see 'jtr tune --help'"
     % ACTIONS),
    (["frob"], "unknown 'jtr tune frob'; use list, show, apply, verify, revert, confirm or "
               "install-profiles"),
])
def test_the_action_comes_first(capsys, args, message):
    assert jtr(["tune"] + args) == 2
    assert capsys.readouterr().err == "jtr tune: %s\n" % message


def test_list(profiles, capsys):
    assert jtr(["tune", "list"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "jtr-base       the base", "jtr-more       more (includes jtr-base)"]


ROWS = [{"label": "vm.swappiness", "now": "60", "when": "runtime", "supported": True,
         "why": "", "set_by": ["base=10"]},
        {"label": "isolcpus", "now": "absent", "when": "boot", "supported": False,
         "why": "no grub", "set_by": ["iso=1", "rt=1"]},
        {"label": "nohz_full", "now": "absent", "when": "boot", "supported": False,
         "why": "no grub", "set_by": ["iso=1"]},
        {"label": "[x] y", "now": "-", "when": "runtime", "supported": False,
         "why": "not implemented", "set_by": ["rt=1"]}]


def test_show_table_with_numbered_reasons(state, capsys, monkeypatch):
    monkeypatch.setattr(inventory, "knob_rows", lambda: [dict(r) for r in ROWS])
    assert jtr(["tune", "show"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "active profile: none",
        "setting        now     when     here    set by",
        "vm.swappiness  60      runtime  yes     base=10",
        "isolcpus       absent  boot     no [1]  iso=1, rt=1",
        "nohz_full      absent  boot     no [1]  iso=1",
        "[x] y          -       runtime  no [2]  rt=1",
        "[1] no grub", "[2] not implemented"]
    snapshot(state, isolated_cpus="1")
    assert jtr(["tune", "show"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        "active profile: jtr-base on CPUs 1 (since 2026-01-01T00:00:00Z)")
    (state / "tune-state.json").write_text("{")
    assert jtr(["tune", "show"]) == 0
    assert capsys.readouterr().out.startswith("active profile: unknown: %s: corrupt snapshot"
                                              % (state / "tune-state.json"))


def test_show_json(state, capsys, monkeypatch):
    monkeypatch.setattr(inventory, "knob_rows", lambda: ROWS[:1])
    monkeypatch.setattr(inventory, "dump", lambda: {"file:x": "1"})
    assert jtr(["tune", "show", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"active": None, "state_error": None,
                                                   "knobs": ROWS[:1], "dump": {"file:x": "1"}}


def test_dry_run_prints_the_plan_and_changes_nothing(profiles, state, capsys, monkeypatch):
    assert jtr(["tune", "apply", "jtr-more", "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:3] == ["jtr-more", "plan (1 settings):",
                       "  kernel.ostype  Linux -> Linux  (already)"]
    assert "  [myplugin] x: jtr's applier has no [myplugin] plugin; --via-tuned applies it " \
           "with tuned" in out
    assert out[-1] == "dry run: nothing was changed" and not state.exists()


def test_apply_refusals(profiles, state, capsys, monkeypatch):
    assert jtr(["tune", "apply"]) == 2
    assert capsys.readouterr().err == ("jtr tune: give one profile to apply (jtr-base, "
                                       "jtr-more); see 'jtr tune list'\n")
    monkeypatch.setattr(E.os, "geteuid", lambda: 1000)
    assert jtr(["tune", "apply", "jtr-base"]) == 2
    assert capsys.readouterr().err == ("jtr tune: jtr tune apply changes kernel settings: run "
                                       "it as root (sudo)\n")
    assert not state.exists()


def test_verify_and_confirm_need_an_applied_profile(state, capsys):
    assert jtr(["tune", "verify"]) == 2
    assert capsys.readouterr().err == ("jtr tune: no profile is applied (no active snapshot at "
                                       "%s)\n" % (state / "tune-state.json"))
    assert jtr(["tune", "confirm"]) == 2
    assert capsys.readouterr().err == "jtr tune: no profile is applied: nothing to confirm\n"
    assert jtr(["tune", "revert"]) == 2
    assert capsys.readouterr().err == ("jtr tune: no snapshot at %s: nothing was applied, so "
                                       "there is nothing to revert\n" % (state / "tune-state.json"))


def test_verify_lists_the_drift(state, tmp_path, capsys):
    knob = tmp_path / "knob"
    knob.write_text("1\n")
    e = entry(str(knob), "file:" + str(knob), "0", "1", path=str(knob), result="changed")
    snapshot(state, entries=[e])
    assert jtr(["tune", "verify"]) == 0
    assert capsys.readouterr().out == "jtr-base: as applied (1 settings checked)\n"
    knob.write_text("7\n")
    assert jtr(["tune", "verify"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "jtr-base: 1 of 1 settings drifted:", "  %s: want 1, now 7" % knob]


def test_confirmed_and_reverted_already(state, capsys):
    snapshot(state, confirmed=True)
    assert jtr(["tune", "confirm"]) == 0
    assert capsys.readouterr().out == "jtr-base is already confirmed\n"
    snapshot(state, status="reverted", reverted_at="2026-01-02T00:00:00Z")
    assert jtr(["tune", "revert"]) == 0
    assert capsys.readouterr().out == ("jtr-base was already reverted at 2026-01-02T00:00:00Z; "
                                       "nothing to do\n")


def test_install_profiles_into_a_folder(profiles, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("JTR_TUNED_VERSION", "2.20.0")
    paths._installed_tuned_version.cache_clear()     # read once a process
    try:
        assert jtr(["tune", "install-profiles", "--print-dir", "user"]) == 0
        cap = capsys.readouterr()
        assert cap.out == "/etc/tuned\n"
        assert cap.err.startswith("jtr tune: tuned 2.20.0 (JTR_TUNED_VERSION=2.20.0): before "
                                  "2.23 it reads /usr/lib/tuned and /etc/tuned")
    finally:
        paths._installed_tuned_version.cache_clear()     # read once a process
    assert jtr(["tune", "install-profiles", "--print-dir", "user", "--dir", "x"]) == 2
    assert "--print-dir says where tuned's folders are; it takes no --dir" in \
        capsys.readouterr().err
    assert jtr(["tune", "install-profiles", "--dir", str(tmp_path / "none")]) == 2
    assert capsys.readouterr().err.startswith("jtr tune: --dir %s: no such folder (tuned's is "
                                              % (tmp_path / "none"))
    dst = tmp_path / "dst"
    dst.mkdir()
    assert jtr(["tune", "install-profiles", "--dir", str(dst)]) == 0
    assert (dst / "jtr-base" / "tuned.conf").read_text() == \
        (profiles / "jtr-base" / "tuned.conf").read_text()
    assert (dst / "jtr-variables.conf").exists()
    (dst / "jtr-more" / "tuned.conf").write_text("[main]\n# mine\n")
    assert jtr(["tune", "install-profiles", "--dir", str(dst)]) == 1
    assert "jtr-more/tuned.conf: left as it is: it differs from jtr's jtr-more" in \
        capsys.readouterr().out
