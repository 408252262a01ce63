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
