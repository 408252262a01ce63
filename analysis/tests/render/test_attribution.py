# SPDX-License-Identifier: GPL-2.0-only
"""render/attribution.py: the attribution as text for people."""


def test_a_task_is_one_row_unless_split_by_pid():
    """One cause per comm ('bash (3 tasks)'); --by pid: a row per task with its
    pid, count and time, the shares adding up to the comm's."""
    from jtrpy.render.attribution import by_pid, format_table
    tasks = [{"pid": 11, "prio": 120, "count": 3, "total_ns": 600},
             {"pid": 12, "prio": 120, "count": 2, "total_ns": 300},
             {"pid": 13, "prio": 120, "count": 1, "total_ns": 100}]
    c = {"category": "task preemption", "name": "bash", "count": 6, "primary_count": 6,
         "total_ns": 1000, "share": 0.5, "p50_ns": 100, "max_ns": 300, "per_s": 6.0,
         "example_chain": "x", "pids": 3, "prio": 120, "tasks": tasks}
    att = {"outliers": {"count": 6, "total_ns": 2000, "traced_ns": 1000, "cpus": [1],
                        "duration_ns": 10**9},
           "tracer": {"backend": "ebpf", "events": 1, "dropped": 0, "cpus": [1]},
           "causes": [c], "worst": [], "warnings": []}
    one = "\n".join(format_table(att))
    assert "bash (3 tasks)" in one and "pid 11" not in one
    split = by_pid([c])
    assert [(r["tasks"][0]["pid"], r["count"], r["total_ns"]) for r in split] == [
        (11, 3, 600), (12, 2, 300), (13, 1, 100)]
    assert abs(sum(r["share"] for r in split) - 0.5) < 1e-9
    text = "\n".join(format_table(att, split=True))
    assert "bash (pid 11, prio 120)" in text and "bash (pid 13, prio 120)" in text


def test_grouped_causes_survive_a_damaged_task_list():
    """A damaged result (a task of a cause is a list, not a dict: the fuzz
    test's 'attribution.causes.1.tasks.0=[]') still groups, labelled by name."""
    from jtrpy.render.attribution import group_causes
    c = {"category": "task preemption", "name": "bash", "count": 1, "total_ns": 10,
         "share": 1.0, "pids": 1, "tasks": [[]]}
    [g] = group_causes([c])
    assert [n["label"] for n in g["names"]] == ["bash"]


def test_grouped_causes_name_containers_and_ipi_senders():
    """The report's rows say what the text table says: a task's container, an
    IPI's sender of most time."""
    from jtrpy.render.attribution import group_causes
    task = {"category": "task preemption", "name": "stress", "count": 2, "total_ns": 20,
            "share": 0.5, "pids": 1, "tasks": [{"pid": 7, "prio": 120}],
            "containers": ["docker 0123456789ab"]}
    ipi = {"category": "IPI", "name": "call_function_single", "count": 2, "total_ns": 10,
           "share": 0.25, "senders": [{"sender": "java (pid 8, CPU 0) flush_tlb_func",
                                       "count": 2, "total_ns": 10}]}
    labels = [n["label"] for g in group_causes([task, ipi]) for n in g["names"]]
    assert labels == ["stress (pid 7, prio 120) [docker 0123456789ab]",
                      "call_function_single from java (pid 8, CPU 0) flush_tlb_func"]
