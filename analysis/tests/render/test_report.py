# SPDX-License-Identifier: GPL-2.0-only
"""render/report.py: the page's pieces that need no browser."""
from jtrpy.render import report
from jtrpy.render.attribution import cause_label, group_causes

from ..synthetic import loops, make_run


def test_row_categories_of_send_and_null_runs():
    """jtr send's attribution keeps the send runs' outliers in the section and the
    null runs' in by_kind.null, each in log order: every row of outliers.csv gets
    the category of its own kind's list."""
    result = {"runs": [{"kind": "send", "start_mono_ns": 100}, {"kind": "null",
                                                                "start_mono_ns": 200},
                       {"kind": "send", "start_mono_ns": 300}],
              "attribution": {"run_kind": "send",
                              "per_outlier": {"categories": ["IPI", "hardirq"], "main": "010"},
                              "by_kind": {"null": {"per_outlier": {
                                  "categories": ["timer tick"], "main": "00"}}}}}
    rows = [(1, 150, 5), (1, 210, 5), (1, 250, 5), (1, 310, 5), (1, 350, 5)]
    assert report.row_categories(result, rows) == [
        "IPI", "timer tick", "timer tick", "hardirq", "IPI"]
    # a log that does not match what was attributed: none rather than wrong ones
    assert report.row_categories(result, rows[:-1]) is None
    del result["attribution"]["by_kind"]["null"]["per_outlier"]
    assert report.row_categories(result, rows) is None


def test_causes_grouped_by_category_and_task_name():
    causes = [
        {"category": "task preemption", "name": "bash (pid 10, prio 120)", "total_ns": 50,
         "share": 0.5, "count": 2, "primary_count": 2, "max_ns": 30, "per_s": 2.0},
        {"category": "timer tick", "name": "local timer", "total_ns": 30, "share": 0.3,
         "count": 3, "primary_count": 3, "max_ns": 10, "per_s": 3.0},
        {"category": "task preemption", "name": "bash (pid 11, prio 120)", "total_ns": 15,
         "share": 0.15, "count": 1, "primary_count": 1, "max_ns": 15, "per_s": 1.0},
        {"category": "task preemption", "name": "kworker/1:2 (pid 9, workqueue x, prio 120)",
         "total_ns": 5, "share": 0.05, "count": 1, "primary_count": 1, "max_ns": 5,
         "per_s": 1.0, "side": "pong"}]
    g = group_causes(causes, names=1)
    assert [(x["category"], round(x["share"], 6), x["total_ns"], x["more"]) for x in g] == [
        ("task preemption", 0.7, 70, 1), ("timer tick", 0.3, 30, 0)]
    assert [(n["label"], n["total_ns"], n["count"], n["max_ns"]) for n in g[0]["names"]] == [
        ("bash (2 tasks)", 65, 3, 30)]
    assert cause_label(causes[3]) == "kworker/1:2 (pong side)"
    assert cause_label({"category": "hardirq", "name": "36 virtio (pid 1)"}) == \
        "36 virtio (pid 1)"


def test_title_and_times():
    r = {"tool": "gap", "host": {"hostname": "h"}, "started_at": "2026-11-26T16:02:07.5Z",
         "runs": [{"cpu": 3, "percentiles_ns": {}}]}
    assert report.title_of(r) == "jtr gap · CPU 3 · h · 2026-11-26 16:02 UTC"
    assert report.since(1_335_000_000, 1_000_000_000) == "+0.335 s"
    assert report.pct(0.532169) == "53.2 %"



def test_the_rt_throttling_warning_names_the_knob_that_throttles():
    """The sysctls, or with RT group scheduling the cpu cgroup's settings."""
    def warned(rt):
        return [w for w in report.warnings_of({"tool": "gap", "host": {"rt_throttling": rt},
                                               "privileges": {"fifo_priority": 1}})
                if w.startswith("RT throttling")]
    assert warned({"enabled": True, "runtime_us": 950000, "period_us": 1000000}) == [
        "RT throttling is enabled: SCHED_FIFO threads get 950000 us of every 1000000 us "
        "(kernel.sched_rt_runtime_us, kernel.sched_rt_period_us)"]
    assert warned({"enabled": True, "runtime_us": 800000, "period_us": 1000000,
                   "cgroup": "/", "sysctl_runtime_us": 950000}) == [
        "RT throttling is enabled: SCHED_FIFO threads get 800000 us of every 1000000 us "
        "(cpu.rt_runtime_us, cpu.rt_period_us of cgroup /)"]
    assert warned({"enabled": False, "runtime_us": -1, "period_us": 1000000}) == []


def test_rt_throttling_is_warned_of_where_it_applies_and_once():
    """Only a busy loop at SCHED_FIFO is throttled: not a SCHED_OTHER run, not jtr
    wake's thread that sleeps between wake-ups; a probe that warned itself is not
    warned of twice; every warning once."""
    rt = {"enabled": True, "runtime_us": 950000, "period_us": 1000000}
    probes = "RT throttling is on (kernel.sched_rt_runtime_us=950000 of 1000000): ..."

    def rt_lines(**r):
        return [w for w in report.warnings_of(dict({"host": {"rt_throttling": rt}}, **r))
                if w.startswith("RT throttling")]
    assert rt_lines(tool="gap", privileges={"fifo_priority": None}) == []
    assert rt_lines(tool="gap") == []
    assert rt_lines(tool="wake", privileges={"fifo_priority": 80}) == []
    assert len(rt_lines(tool="gap", privileges={"fifo_priority": 1})) == 1
    assert rt_lines(tool="gap", privileges={"fifo_priority": 1}, warnings=[probes]) == [probes]
    twice = "no hardware counters here (perf_event_open cycles: No such file or directory)"
    assert report.warnings_of({"warnings": [twice, twice]}) == [twice]


def test_the_hypervisor_is_named_in_words():
    def said(raw):
        return report.warnings_of({"host": {"virtualised": True, "hypervisor": raw}})
    assert said("KVMKVMKVM") == ["virtual machine (KVM): the hypervisor can take the CPU "
                                 "without any kernel event in the guest"]
    assert said("Microsoft Hv")[0].startswith("virtual machine (Hyper-V):")
    assert said("NewHvNewHv")[0].startswith("virtual machine ('NewHvNewHv'):")
    assert said(None)[0].startswith("virtual machine: the hypervisor")


def test_the_warnings_that_change_the_reading_most_come_first():
    r = {"partial": True, "warnings": ["memory not locked", "RT throttling is on (...)"],
         "privileges": {"fifo_priority": 1}, "tool": "gap",
         "host": {"virtualised": True, "hypervisor": "KVMKVMKVM",
                  "rt_throttling": {"enabled": True, "runtime_us": 950000,
                                    "period_us": 1000000}},
         "runs": [{"name": "gap_1", "outliers": {"dropped": 3}}],
         "attribution": {"tracer": {"dropped": 7}, "warnings": ["a late event"]}}
    assert [w.split(":")[0].split(" (")[0] for w in report.warnings_of(r)] == [
        "partial run", "run gap_1", "the tracer dropped 7 events", "RT throttling is on",
        "attribution", "memory not locked", "virtual machine"]


class _Folder(dict):
    folder = None


def test_a_wake_page_says_what_wake_is_for(tmp_path):
    """jtr wake's page: the missed periods, cyclictest's line (from its summary.txt),
    the decomposition's table and its plot of the worst late wake-ups."""
    (tmp_path / "summary.txt").write_text(
        "jtr wake: tsc timebase\n\ncyclictest's summary (us):\n"
        "T: 0 (24912) P:10 I:1000 C:   5000 Min:     12 Act: 1310 Avg:  108 Max:    1345\n"
        "T: 1 (  765) P: 0 I:1000 C:   5000 Min:     12 Act:   13 Avg:   18 Max:     345\n")
    comps = [{"component": k, "label": label, "count": n, "total_ns": t, "share": s,
              "dominant_count": d, "p50_ns": 3000, "max_ns": 9000, "min_ns": 100}
             for k, label, n, t, s, d in (
                 ("irq_latency", "timer IRQ latency", 5, 15000, 0.01, 0),
                 ("blocking", "blocking thread", 4, 1_400_000, 0.99, 4),
                 ("nmi", "NMI interference", 0, 0, 0.0, 0))]
    worst = [{"cpu": 1, "start_ns": 2_000_000_000 + i, "length_ns": 350_000, "category":
              "task preemption", "name": "spin", "chain": "x",
              "components": {"irq_latency": 3000, "blocking": 347_000}} for i in range(4)]
    run = dict(make_run(loops(1, n=1000)), name="cpu1", cpu=1, missed=217,
               start_mono_ns=10 ** 9)
    r = _Folder(tool="wake", files={"summary": "summary.txt"}, runs=[run],
        attribution={"outliers": {"count": 4, "start_ns": 10 ** 9},
                     "decomposition": {"components": comps, "complete": 4},
                     "worst": worst, "causes": []})
    r.folder = str(tmp_path)
    assert report.cyclictest_lines(r) == [
        "T: 0 (24912) P:10 I:1000 C:   5000 Min:     12 Act: 1310 Avg:  108 Max:    1345",
        "T: 1 (  765) P: 0 I:1000 C:   5000 Min:     12 Act:   13 Avg:   18 Max:     345"]
    html = report.summary_section("w", r)
    assert "missed periods" in html and "217" in html and "Act: 1310" in html
    # 1,000 samples: no p99.99 of their own
    assert "1,000 samples: none past the max" in html
    runs = report.run_table([run])
    head = [c.split("</th>")[0] for c in runs.split("<th>")[1:]]
    cells = [c.split("</td>")[0] for c in runs.split("<td>")[1:]]
    assert cells[head.index("p99.9")] != "-" and cells[head.index("p99.99")] == "-"
    sec = report.decomposition_section(r["attribution"])
    assert "<td>blocking thread</td><td>4</td><td>99.0 %</td>" in sec
    assert "NMI interference" not in sec          # a component that never was
    assert "4 of 4 with a whole wake-up path" in sec
    from jtrpy.render import plots
    shown = report.page_plots(plots.pyplot(), r, "w", None, [])
    svg = shown["decomposition"][1]
    assert "350.0 us at +1.000 s" in svg and "blocking thread" in svg
    # not a wake result: none of it
    assert report.cyclictest_lines(_Folder(tool="gap")) == []
    assert report.decomposition_section({"causes": []}) == ""


def test_a_round_trips_page_draws_its_path_phase_by_phase():
    """ping's budget as a diagram of the path: a box per phase in path order, its
    side, the measured and charged means, the cause that took most of it; a
    round trip measured whole apart."""
    from jtrpy.render import plots
    budget = [{"phase": p, "side": s, "outliers": 10, "measured_mean_ns": m,
               "charged_mean_ns": c, "dominant": {"category": "task preemption",
                                                 "name": "jtr-trace", "side": s,
                                                 "share": 0.62}}
              for p, s, m, c in (("send", "ping", 579_210, 128_008), ("out", "pong", 51_836,
                                                                       46_073),
                                 ("reflect", "pong", 14, 0), ("reply", "ping", 23_203, 10_184),
                                 ("trip", "ping", 23_585, 9238))]
    r = {"tool": "ping", "runs": [], "attribution": {"budget": budget, "causes": [],
                                                     "outliers": {"count": 10}}}
    svg = report.page_plots(plots.pyplot(), r, "p", None, [])["budget"][1]
    words = ("the send (from the", "the way out and pong's", "pong's reflection",
             "the way back and the", "the round trip after")
    at = [svg.index(w) for w in words]
    assert at == sorted(at)                     # in path order, the whole trip last
    assert "579.2 us measured" in svg and "128.0 us kernel, host" in svg
    assert "pong side · 10 outliers" in svg and "most: jtr-trace 62 %" in svg


def test_a_send_page_shows_what_the_send_path_adds_per_cause():
    """jtr send's page: send against null per cause, each kind's time per second
    of its own runs (the two kinds ran for different times)."""
    from jtrpy.render import plots
    a = {"run_kind": "send", "outliers": {"duration_ns": 2 * 10 ** 9, "count": 3},
         "by_kind": {"null": {"outliers": {"duration_ns": 10 ** 9}}}, "causes": [],
         "difference": [
             {"category": "softirq", "name": "NET_RX",
              "send": {"count": 52, "total_ns": 4_000_000}, "null": {"count": 0,
                                                                    "total_ns": 0}},
             {"category": "timer tick", "name": "local timer",
              "send": {"count": 9, "total_ns": 2_000_000},
              "null": {"count": 8, "total_ns": 1_500_000}}]}
    rows = report.send_added(a)
    assert [(r["name"], r["a_ns_per_s"], r["b_ns_per_s"]) for r in rows] == [
        ("NET_RX", 0, 2_000_000), ("local timer", 1_500_000, 1_000_000)]
    svg = report.page_plots(plots.pyplot(), {"tool": "send", "runs": [], "attribution": a},
                            "s", None, [])["added"][1]
    assert "null 0/s, send 2.00 ms/s" in svg and "send - null" in svg
    assert report.send_added({"causes": []}) == []


def test_the_page_says_which_plot_it_draws():
    """jtr report may take seconds a page: its progress line says which plot."""
    from jtrpy.render import plots
    said = []
    r = {"tool": "gap", "runs": [dict(make_run(loops(3, n=20_000)), start_mono_ns=0)]}
    report.page_plots(plots.pyplot(), r, "g", None, [], said.append)
    assert said == ["the percentile spectrum", "the histogram"]
