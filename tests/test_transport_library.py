# SPDX-License-Identifier: GPL-2.0-only
"""The transport library (build/libjtrtp.a, transports/lib/) returns -errno and
never prints or exits: no object in it may reference the C library's printing
or exiting functions, nor lib/'s main() helpers (jtr_probe.c), which print and
exit. The program glue (build/libjtrtpprog.a, transports/prog/) may."""
import os
import subprocess

import pytest
from conftest import ROOT

BUILD = os.path.join(ROOT, "build")

# what prints to a stream, ends the process, or aborts it
FORBIDDEN = {
    "printf", "fprintf", "vprintf", "vfprintf", "dprintf", "vdprintf", "puts", "fputs",
    "fputc", "putc", "putchar", "fwrite", "perror", "psignal", "psiginfo", "syslog",
    "vsyslog", "__printf_chk", "__fprintf_chk", "__vprintf_chk", "__vfprintf_chk",
    "__dprintf_chk", "__vdprintf_chk", "stdout", "stderr",
    "exit", "_exit", "_Exit", "quick_exit", "abort", "__assert_fail",
    "err", "errx", "verr", "verrx", "warn", "warnx", "vwarn", "vwarnx", "error",
    "error_at_line",
}


def undefined_by_object(archive):
    """{object: set of undefined symbols} of @archive, from nm."""
    out = subprocess.run(["nm", "-u", "-A", archive], check=True, capture_output=True,
                         text=True).stdout
    objs = {}
    for line in out.splitlines():
        # "build/libjtrtp.a:tp.o:                 U jtr_err_set"
        where, _, sym = line.rpartition(" ")
        obj = where.split(":")[1]
        objs.setdefault(obj, set()).add(sym.split("@")[0])
    return objs


def defined(obj):
    out = subprocess.run(["nm", "--defined-only", "-g", obj], check=True, capture_output=True,
                         text=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


@pytest.fixture(scope="module")
def main_helpers():
    """The symbols of lib/jtr_probe.c, the main() helpers that print and exit."""
    return defined(os.path.join(BUILD, "lib", "jtr_probe.o"))


def test_library_never_prints_or_exits(main_helpers):
    archive = os.path.join(BUILD, "libjtrtp.a")
    members = subprocess.run(["ar", "t", archive], check=True, capture_output=True,
                             text=True).stdout.split()
    assert {"tp.o", "tp_ring.o", "tp_sock.o", "tp_shm.o", "tp_seq.o", "tp_numa.o",
            "tp_ipcq.o"} <= set(members), members
    assert not {"tp_prog.o", "tp_stats.o"} & set(members), members
    objs = undefined_by_object(archive)
    bad = {obj: sorted(syms & (FORBIDDEN | main_helpers)) for obj, syms in objs.items()}
    bad = {obj: syms for obj, syms in bad.items() if syms}
    assert not bad, ("the transport library prints or exits; move this to transports/prog/ "
                     "or return -errno: %s" % bad)


def test_the_check_sees_the_glue(main_helpers):
    """The same check finds what the program glue does, so it is not vacuous."""
    objs = undefined_by_object(os.path.join(BUILD, "libjtrtpprog.a"))
    assert objs["tp_prog.o"] & main_helpers
    assert objs["tp_stats.o"] & FORBIDDEN


# The call graph of transports/'s C files, object by object: file A calls file B
# when A references a symbol B defines (nm). No two files may call each other,
# directly or round a longer loop: a transport, the dispatcher and the helpers
# below them, and jtr ipc's parts, are each above or below one another.
GRAPH_DIRS = ("transports/lib", "transports/prog", "transports/ipc")

# what ends the process: the C library's exits and lib/'s main() helpers that
# exit (jtr_probe.h); in jtr ipc only the coordinator's files (main.c, which
# runs the rows, and coord.c, which forks the children and ends them with the
# status they return) may; the children's work (procs.c, methods.c, shm.c,
# tcp.c, objects.c) and the output report a failure instead
EXITS = {"exit", "_exit", "_Exit", "quick_exit", "abort", "__assert_fail",
         "jtr_fatal", "jtr_usage_error", "jtr_unknown_option", "jtr_probe_exit"}
IPC_MAY_EXIT = {"main.o", "coord.o"}


def objects():
    objs = []
    for d in GRAPH_DIRS:
        folder = os.path.join(BUILD, d)
        objs += sorted(os.path.join(d, f) for f in os.listdir(folder) if f.endswith(".o"))
    assert objs, "no objects under build/transports: run make"
    return objs


def undefined(obj):
    out = subprocess.run(["nm", "-u", obj], check=True, capture_output=True, text=True).stdout
    return {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}


@pytest.fixture(scope="module")
def call_graph():
    """{object: {object it calls: [symbols]}} over GRAPH_DIRS."""
    objs = objects()
    defs = {o: defined(os.path.join(BUILD, o)) for o in objs}
    graph = {}
    for a in objs:
        uses = undefined(os.path.join(BUILD, a))
        graph[a] = {b: sorted(uses & defs[b]) for b in objs if b != a and uses & defs[b]}
    return graph


def cycles(graph):
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_the_graph_sees_the_calls(call_graph):
    """Not vacuous: the dispatcher calls the transports through their tables,
    jtr ipc's coordinator forks the processes, the glue calls the library."""
    assert "transports/lib/tp_shm.o" in call_graph["transports/lib/tp.o"]
    assert "transports/lib/tp_sock.o" in call_graph["transports/lib/tp.o"]
    assert "transports/ipc/procs.o" in call_graph["transports/ipc/coord.o"]
    assert "transports/lib/tp.o" in call_graph["transports/prog/tp_prog.o"]
    assert cycles({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}) == [["a", "b", "c"]]


def test_no_two_files_call_each_other(call_graph):
    loops = cycles(call_graph)
    edges = ["%s -> %s (%s)" % (a, b, ", ".join(syms[:4]))
             for comp in loops for a in comp for b, syms in call_graph[a].items() if b in comp]
    assert not loops, ("these files call each other, round %s: %s; move what both use into a "
                       "file below them" % (loops, "; ".join(edges)))


def test_only_the_ipc_coordinator_ends_the_process():
    bad = {}
    for obj in objects():
        d, name = os.path.split(obj)
        if d == "transports/ipc" and name not in IPC_MAY_EXIT:
            hit = undefined(os.path.join(BUILD, obj)) & EXITS
            if hit:
                bad[name] = sorted(hit)
    assert not bad, ("jtr ipc's %s end the process; return the failure (the child's status, "
                     "a message in the board or a jtr_err) to coord.c: %s" % (sorted(bad), bad))
