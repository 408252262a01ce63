# SPDX-License-Identifier: GPL-2.0-only
"""jtr tune's lines: a plan as it is printed, the profiles, the active profile,
what an apply did."""
import types

from jtrpy.render import tune as show
from jtrpy.tune.engine import Plan

from ..drivers.test_tune import entry


def test_the_plan_as_printed():
    plan = types.SimpleNamespace(
        entries=[entry("vm.swappiness", "file:a", "60", "10"),
                 entry("kernel.timer_migration", "file:b", "0", "0"),
                 entry("IRQ 9", "irq:9", "0-3", "0"), entry("IRQ 10", "irq:10", "0-3", "0,2"),
                 entry("bash", "task:1", "0-3", "0", "task", comm="bash"),
                 entry("sshd", "task:2", "0-3", "0", "task", comm="sshd")],
        isolated=[1, 2, 3], pinned=[(5, "ksoftirqd/1"), (6, "migration/1")],
        skipped=[("[myplugin] x", "no plugin")], warnings=["careful"],
        boot=[{"word": "isolcpus=1", "param": "isolcpus", "now": "absent"}],
        already=Plan.already)
    assert show.plan_lines(plan, (False, "no grub here")) == [
        "plan (6 settings):",
        "  vm.swappiness           60 -> 10",
        "  kernel.timer_migration  0 -> 0  (already)",
        "  IRQ affinity            2 IRQs -> 0, 0,2",
        "  task affinity           2 threads moved off CPUs 1-3 (bash, sshd)",
        "  stay (the kernel pins them): 2 threads: ksoftirqd/1, migration/1",
        "not applied here:", "  [myplugin] x: no plugin",
        "boot-only (the next boot; on the kernel command line):", "  isolcpus=1",
        "  now: isolcpus=absent", "  cannot be made persistent here: no grub here",
        "warning: careful"]
    plan.boot = []
    assert show.plan_lines(plan)[-1] == "warning: careful"
    plan.profile = types.SimpleNamespace(name="jtr-isolate")
    assert show.plan_head(plan, [2, 3], [0, 1]) == "jtr-isolate on CPUs 2-3 (housekeeping: 0-1)"
    assert show.plan_head(plan, [], [0, 1]) == "jtr-isolate"


def test_profiles_and_the_active_one():
    assert show.profile_line("jtr-more", "more", ["jtr-base"]) == \
        "jtr-more       more (includes jtr-base)"
    assert show.profile_line("jtr-base", "the base", []) == "jtr-base       the base"
    st = {"profile": "jtr-base", "isolated_cpus": "", "applied_at": "2026-01-01T00:00:00Z"}
    assert show.active_line(st, None) == \
        "active profile: jtr-base on CPUs - (since 2026-01-01T00:00:00Z)"
    assert show.active_line(None, "corrupt") == "active profile: unknown: corrupt"
    assert show.active_line(None, None) == "active profile: none"


def test_what_an_apply_did():
    st = {"entries": [{"label": "a", "result": "changed"}, {"label": "b", "result": "unchanged"},
                      {"label": "c", "result": "failed: EPERM"}, {"label": "d"},
                      {"label": "e", "result": "gone"}], "update_grub": "ok"}
    assert show.applied_lines("jtr-base", False, st, "/run/jtr/tune-state.json", "/g/99-jtr.cfg",
                              120.0) == [
        "applied jtr-base by jtr: 1 changed, 1 already so, 1 failed, 1 tasks exited before "
        "their turn (snapshot: /run/jtr/tune-state.json)",
        "  not applied: c: EPERM",
        "grub drop-in /g/99-jtr.cfg written; update-grub: ok",
        "auto-revert in 120 s unless 'jtr tune confirm'",
        "revert with: jtr tune revert"]
    st = {"entries": [{"label": "a", "result": "by tuned"}]}
    assert show.applied_lines("jtr-base", True, st, "s", "g", None) == [
        "applied jtr-base by tuned: 1 by tuned, 0 changed, 0 already so, 0 failed (snapshot: s)",
        "revert with: jtr tune revert"]
    assert show.not_restored([("a", "gone")]) == ["  not restored: a: gone"]
