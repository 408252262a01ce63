#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""gen_syscalls - write analysis/jtrpy/trace/syscalls.py, the system call
names by number that `jtr run app` says a thread blocked in, from the kernel's
uapi headers (linux-libc-dev): x86_64's asm/unistd_64.h and the generic table
of asm-generic/unistd.h (arm64, riscv64 and the newer architectures).
Run it again when a kernel adds calls: scripts/gen-syscalls.py"""
import os
import re
import sys

HEADERS = {
    "x86_64": "/usr/include/x86_64-linux-gnu/asm/unistd_64.h",
    "generic": "/usr/include/asm-generic/unistd.h",
}
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "analysis", "jtrpy",
                   "trace", "syscalls.py")


def table(path):
    """{number: name} of a header's plain `#define __NR_name NUMBER` lines (the
    generic table's aliases and 32-bit-only names defined through other
    macros are left out)."""
    out = {}
    for m in re.finditer(r"^#define __NR(?:3264)?_(\w+)\s+(\d+)\s*$", open(path).read(), re.M):
        out.setdefault(int(m.group(2)), m.group(1))
    return out


def main():
    lines = ['# SPDX-License-Identifier: GPL-2.0-only',
             '"""syscalls - system call names by number, per architecture (written by',
             'scripts/gen-syscalls.py from the kernel\'s uapi headers; do not edit)."""',
             "import platform", ""]
    for arch, path in HEADERS.items():
        t = table(path)
        lines.append("%s = {" % arch.upper())
        for nr in sorted(t):
            lines.append("    %d: %r," % (nr, t[nr]))
        lines.append("}")
        lines.append("")
    lines += [
        "",
        "def table(machine=None):",
        '    """{number: name} of the system calls of @machine (platform.machine() by',
        '    default); {} for a machine the tables do not have."""',
        "    machine = machine or platform.machine()",
        '    return X86_64 if machine == "x86_64" else GENERIC if machine in (',
        '        "aarch64", "arm64", "riscv64", "loongarch64") else {}',
        "",
        "",
        "def name(nr, machine=None):",
        '    """The name of system call @nr on @machine (platform.machine() by default):',
        '    "futex", or "syscall 451" for a number the table does not have."""',
        '    return table(machine).get(nr) or "syscall %d" % nr',
        "",
    ]
    with open(OUT, "w") as f:
        f.write("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
