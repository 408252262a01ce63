# SPDX-License-Identifier: GPL-2.0-only
"""system.procs: /proc/PID/stat read back as this process knows itself (a comm
holding ') ' does not shift the fields), /proc/stat's CPU rows, and the CPU time
of waited-for children."""
import io
import os
import subprocess
import sys
import threading

from jtrpy.system import procs


def test_proc_stat_of_this_process():
    st = procs.proc_stat(os.getpid())
    assert st.ppid == os.getppid()
    assert st.state in "RS"
    assert st.comm == open("/proc/self/comm").read().strip()
    assert st.starttime > 0 and st.cpu_ns >= 0
    assert st.cpu_ns % (1_000_000_000 // os.sysconf("SC_CLK_TCK")) == 0   # whole ticks


def test_a_comm_with_brackets_and_spaces_is_read_whole():
    """The comm is everything between the first '(' and the last ')': a thread
    named 'a) (b) c' still has this process as its pid's parent's child."""
    ready, done, tid = threading.Event(), threading.Event(), []

    def named():
        tid.append(threading.get_native_id())
        with open("/proc/self/task/%d/comm" % tid[0], "w") as f:
            f.write("a) (b) c")
        ready.set()
        done.wait(5)
    t = threading.Thread(target=named)
    t.start()
    try:
        ready.wait(5)
        st = procs.proc_stat(tid[0])
    finally:
        done.set()
        t.join()
    assert st.comm == "a) (b) c"
    assert st.ppid == os.getppid() and st.state in "RS"


def test_a_task_that_is_gone_is_none():
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    assert procs.proc_stat(p.pid) is None


def test_cpu_times_rows():
    t = procs.cpu_times()
    assert "all" in t and set(os.sched_getaffinity(0)) <= set(t)
    assert all(len(v) == 8 and all(x >= 0 for x in v) for v in t.values())


def test_cpu_times_parsing(monkeypatch):
    """Rows up to the first that is not a CPU's; an older kernel's shorter rows
    padded with zeros; a file that is not /proc/stat's is None."""
    text = ("cpu  10 1 20 300 4 5 6 7 8 9\ncpu0 4 0 8 100 1 2 3 3\ncpu1 6 1 12 200\n"
            "intr 12345 0 0\ncpu9 1 1 1 1 1 1 1 1\n")
    monkeypatch.setattr(procs, "open", lambda *a, **k: io.StringIO(text), raising=False)
    assert procs.cpu_times() == {"all": [10, 1, 20, 300, 4, 5, 6, 7],
                                 0: [4, 0, 8, 100, 1, 2, 3, 3],
                                 1: [6, 1, 12, 200, 0, 0, 0, 0]}
    text = "cpu  10 x 20\n"
    assert procs.cpu_times() is None

    def gone(*a, **k):
        raise FileNotFoundError("/proc/stat")
    monkeypatch.setattr(procs, "open", gone, raising=False)
    assert procs.cpu_times() is None


def test_children_cpu_time_grows_by_a_childs_cpu_time():
    before = procs.children_cpu_ns()
    subprocess.run([sys.executable, "-c", "x = 0\nfor i in range(1_000_000): x += i"],
                   check=True)
    assert procs.children_cpu_ns() - before >= 10_000_000
