# SPDX-License-Identifier: GPL-2.0-only
"""elf - what jtr run app checks in a binary before it attaches a uprobe: that
it is an ELF file, and whether it defines a function by that name, in its
symbol table (.symtab, gone from a stripped binary) or its dynamic one
(.dynsym, what a shared library exports); or, for --usdt, its USDT probes (the
stapsdt notes <sys/sdt.h> leaves). Only the section headers, the two symbol
tables and the notes are read (ELF64 and ELF32, either byte order)."""
import struct

from ..errors import UsageError

STT_FUNC, STT_GNU_IFUNC = 2, 10
SHT_SYMTAB, SHT_NOTE, SHT_DYNSYM = 2, 7, 11
NT_STAPSDT = 3
SHN_UNDEF = 0


class Symbols:
    """A binary's function symbols: .functions (defined ones, name -> size),
    .undefined (names it imports), .stripped (no .symtab); .usdt, its USDT
    probes as (provider, name) pairs."""

    def __init__(self, path):
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise UsageError("%s: cannot be read: %s" % (path, e.strerror or e))
        if data[:4] != b"\x7fELF" or len(data) < 64:
            raise UsageError("%s: not an ELF binary (a script or another file): give the "
                             "executable or the shared library the function is in" % path)
        self.functions, self.undefined, self.usdt = {}, set(), set()
        bits64, end = data[4] == 2, "<" if data[5] == 1 else ">"
        if bits64:
            shoff, = struct.unpack_from(end + "Q", data, 0x28)
            shentsize, shnum, _ = struct.unpack_from(end + "HHH", data, 0x3a)
            sh = struct.Struct(end + "IIQQQQIIQQ")
            sym = struct.Struct(end + "IBBHQQ")
        else:
            shoff, = struct.unpack_from(end + "I", data, 0x20)
            shentsize, shnum, _ = struct.unpack_from(end + "HHH", data, 0x2e)
            sh = struct.Struct(end + "IIIIIIIIII")
            sym = struct.Struct(end + "IIIBBH")
        try:
            self._read(data, bits64, sh, sym, shoff, shentsize, shnum)
        except (struct.error, IndexError):
            raise UsageError("%s: its section headers or symbols are cut short: not a "
                             "whole ELF binary" % path)

    def _read(self, data, bits64, sh, sym, shoff, shentsize, shnum):
        """The section headers and the functions of both symbol tables."""
        sections = [sh.unpack_from(data, shoff + i * shentsize) for i in range(shnum)]
        types = [s[1] for s in sections]
        for s in sections:
            if s[1] == SHT_NOTE:
                self._notes(data, s[4], s[5], bits64, sh.format[0])
        self.stripped = SHT_SYMTAB not in types
        for s in sections:
            if s[1] not in (SHT_SYMTAB, SHT_DYNSYM):
                continue
            off, size, link = s[4], s[5], s[6]
            strtab = sections[link] if link < len(sections) else None
            if strtab is None:
                continue
            soff, ssize = strtab[4], strtab[5]
            for k in range(size // sym.size):
                f = sym.unpack_from(data, off + k * sym.size)
                if bits64:
                    name, info, _, shndx, _, sz = f
                else:
                    name, _, sz, info, _, shndx = f
                if info & 0xf not in (STT_FUNC, STT_GNU_IFUNC) or name >= ssize:
                    continue
                stop = data.find(b"\0", soff + name)
                n = data[soff + name:stop].decode("utf-8", "replace")
                # a versioned name of .dynsym's strings stays as it is: libbpf
                # matches the plain name too
                if shndx == SHN_UNDEF:
                    self.undefined.add(n)
                else:
                    self.functions[n] = max(sz, self.functions.get(n, 0))

    def _notes(self, data, off, size, bits64, end):
        """The stapsdt notes of a note section: owner "stapsdt", type 3, the
        description three addresses then the provider, the name and the
        arguments, each NUL-terminated."""
        pos, stop = off, off + size
        addrs = 24 if bits64 else 12
        while pos + 12 <= stop:
            namesz, descsz, typ = struct.unpack_from(end + "III", data, pos)
            name_at = pos + 12
            desc_at = name_at + (namesz + 3) // 4 * 4
            nxt = desc_at + (descsz + 3) // 4 * 4
            if nxt > stop:
                break
            if typ == NT_STAPSDT and data[name_at:name_at + namesz].rstrip(b"\0") == b"stapsdt":
                words = data[desc_at + addrs:desc_at + descsz].split(b"\0")
                if len(words) >= 2:
                    self.usdt.add((words[0].decode("utf-8", "replace"),
                                   words[1].decode("utf-8", "replace")))
            pos = nxt

    def check_usdt(self, path, provider, names):
        """Nothing, or UsageError saying which of the probes @names of @provider
        @path does not have, and what it has."""
        missing = [n for n in names if (provider, n) not in self.usdt]
        if not missing:
            return
        have = sorted("%s:%s" % pn for pn in self.usdt)
        raise UsageError("%s: no USDT probe %s in it (%s); %s" % (
            path, ", ".join("%s:%s" % (provider, n) for n in missing),
            "its probes: " + ", ".join(have[:8]) + (" ..." if len(have) > 8 else "")
            if have else "it has none: a program gets them from <sys/sdt.h>'s DTRACE_PROBE "
            "macros (readelf -n lists them as stapsdt notes)",
            "give --func for a function instead" if not have else
            "give two of them, the call's start and end"))

    def check(self, path, symbol):
        """Nothing, or UsageError saying why @symbol cannot be timed in @path and
        what to do."""
        if symbol in self.functions:
            return
        if symbol in self.undefined:
            raise UsageError("%s: %s is not defined there, it is imported from a shared "
                             "library: give the library, e.g. --func libc.so.6:%s (ldd %s "
                             "lists them)" % (path, symbol, symbol, path))
        near = sorted(n for n in self.functions if symbol in n)[:5]
        hint = "; functions with that in their name: %s" % ", ".join(near) if near else ""
        if self.stripped:
            raise UsageError("%s: no function %s in its dynamic symbols, and it is stripped "
                             "(no .symtab): time it in a build with symbols (file %s says "
                             "'not stripped'), or one the binary exports%s"
                             % (path, symbol, path, hint))
        raise UsageError("%s: no function %s in it (nm %s | grep %s lists what there is): a "
                         "static function the compiler inlined everywhere has no copy of "
                         "its own to attach to; mark it __attribute__((noinline)) or time "
                         "its caller%s" % (path, symbol, path, symbol, hint))
