# SPDX-License-Identifier: GPL-2.0-only
"""system/elf.py: what jtr run app reads of a binary before it attaches."""
import struct

import pytest

from jtrpy.errors import UsageError
from jtrpy.system.elf import Symbols


def elf64(symbols, symtab=True):
    """A little-endian ELF64 file with a .dynsym (and a .symtab unless not
    @symtab) of @symbols: [(name, defined)] functions."""
    strtab = b"\0"
    offs = []
    for name, _ in symbols:
        offs.append(len(strtab))
        strtab += name.encode() + b"\0"
    sym = struct.Struct("<IBBHQQ")
    syms = sym.pack(0, 0, 0, 0, 0, 0) + b"".join(
        sym.pack(o, 0x12, 0, 9 if defined else 0, 0x1100 if defined else 0, 50)
        for o, (_, defined) in zip(offs, symbols))
    body = strtab + syms
    str_off, sym_off = 64, 64 + len(strtab)
    sh = struct.Struct("<IIQQQQIIQQ")
    sections = [sh.pack(0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
                sh.pack(0, 3, 0, 0, str_off, len(strtab), 0, 0, 1, 0),        # .dynstr
                sh.pack(0, 11, 0, 0, sym_off, len(syms), 1, 1, 8, sym.size)]  # .dynsym
    if symtab:
        sections.append(sh.pack(0, 2, 0, 0, sym_off, len(syms), 1, 1, 8, sym.size))
    shoff = 64 + len(body)
    head = b"\x7fELF" + bytes([2, 1, 1]) + b"\0" * 9 + struct.pack(
        "<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, shoff, 0, 64, 0, 0, sh.size, len(sections), 0)
    return head + body + b"".join(sections)


def test_a_defined_function_passes(tmp_path):
    p = tmp_path / "app"
    p.write_bytes(elf64([("on_tick", True), ("malloc", False)]))
    s = Symbols(str(p))
    assert s.functions == {"on_tick": 50} and s.undefined == {"malloc"} and not s.stripped
    s.check("app", "on_tick")


@pytest.mark.parametrize("symbols, symtab, symbol, needle", [
    ([("malloc", False)], True, "malloc", "imported from a shared library: give the library"),
    ([("on_tick", True)], True, "on_tic", "no function on_tic in it (nm app | grep on_tic"),
    ([("on_tick", True)], True, "on_tic", "inlined everywhere"),
    ([("on_tick", True)], True, "tick", "functions with that in their name: on_tick"),
    ([("on_tick", True)], False, "hidden", "it is stripped (no .symtab)"),
])
def test_what_cannot_be_timed_says_why(tmp_path, symbols, symtab, symbol, needle):
    p = tmp_path / "app"
    p.write_bytes(elf64(symbols, symtab))
    with pytest.raises(UsageError, match=needle.replace("(", r"\(").replace(")", r"\)")
                       .replace(".", r"\.")):
        Symbols(str(p)).check("app", symbol)


def test_not_an_elf_file(tmp_path):
    p = tmp_path / "run.sh"
    p.write_text("#!/bin/sh\n")
    with pytest.raises(UsageError, match="not an ELF binary"):
        Symbols(str(p))
    with pytest.raises(UsageError, match="cannot be read"):
        Symbols(str(tmp_path / "missing"))
    cut = tmp_path / "cut"
    whole = elf64([("f", True)])
    cut.write_bytes(whole[:200])
    with pytest.raises(UsageError, match="cut short"):
        Symbols(str(cut))
    # the section headers whole, the symbols they point at past the end
    head = bytearray(whole)
    struct.pack_into("<Q", head, 0x28, 64)     # the headers moved to where the symbols were
    cut.write_bytes(bytes(head[:64]) + whole[-3 * 64:])
    with pytest.raises(UsageError, match="cut short"):
        Symbols(str(cut))
