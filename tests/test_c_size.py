# SPDX-License-Identifier: GPL-2.0-only
"""C functions at libbpf-tools' scale: none of the C sources (the library, the
probes, the transports, the tracer; tests and generated code aside) has a
function longer than MAX_LINES, main() included (parse, run, report; the rest in
functions of their own). The sources are in the kernel's style: a function's
body opens and closes with a brace alone at the start of a line."""
import glob
import os
import re

from conftest import ROOT

MAX_LINES = 120
DIRS = ("lib", "jitter", "transports", "ebpf")


def sources():
    out = []
    for d in DIRS:
        out += glob.glob(os.path.join(ROOT, d, "**", "*.c"), recursive=True)
    return sorted(f for f in out if "/tests/" not in f)


def functions(text):
    """[(name, first line, lines)] of the functions in C source @text: from the
    line of its name to its closing brace."""
    lines = text.split("\n")
    out, i = [], 0
    while i < len(lines):
        if lines[i] == "{" and i:
            head = i - 1
            while head > 0 and "(" not in lines[head]:
                head -= 1
            names = re.findall(r"(\w+)\s*\(", lines[head])
            end = i + 1
            while end < len(lines) and lines[end] != "}":
                end += 1
            out.append((names[0] if names else "?", head + 1, end - head + 1))
            i = end
        i += 1
    return out


def test_the_parser_measures_a_function():
    text = "static int f(int a,\n\t     int b)\n{\n\treturn a;\n}\n\nint main(void)\n{\n}\n"
    assert functions(text) == [("f", 1, 5), ("main", 7, 3)]


def test_no_c_function_is_longer_than_the_limit():
    found = [(f, n) for path in sources() for f, _, n in functions(open(path).read())]
    assert len(found) > 500, len(found)          # the parser sees the functions
    assert any(f == "main" for f, _ in found)
    long = ["%s:%d %s(): %d lines" % (os.path.relpath(path, ROOT), line, f, n)
            for path in sources() for f, line, n in functions(open(path).read())
            if n > MAX_LINES]
    assert not long, "split these as libbpf-tools would: %s" % long
