# SPDX-License-Identifier: GPL-2.0-only
"""profile - read tuned-format profiles (<name>/tuned.conf) the way tuned does.

A profile is INI: [main] summary= and include=, a [variables] section, and one
section per tuned plugin ([cpu], [vm], [sysctl], [sysfs], [scheduler],
[bootloader], ...). Includes load first and the including profile overrides
them option by option; ${name} expands variables and ${f:func:args} the few
tuned functions jtr's profiles use. Profiles are looked up in jtr's own
tuning-profiles/ first, then /etc/tuned and /usr/lib/tuned (so a profile may
include a stock tuned profile where tuned is installed).
"""
import configparser
import os
import re

from ..errors import UsageError
from ..system.cpus import cpulist_of, online_cpus
from ..system.files import read_bytes
from ..system.paths import profile_dirs
from ..units import shown
from ..values import format_cpulist

NAME_RE = re.compile(r"^[a-zA-Z0-9_.-]+$")
VAR_RE = re.compile(r"(?<!\\)\$\{([^{}]+)\}")
# the bounds of what jtr reads as a profile: tuned.conf's size (jtr's own are 1-3
# KiB) and a value after its variables are expanded (8 variables each doubling
# the last once made a 100 MB value); tune/checks.py judges the values
MAX_PROFILE_BYTES = 1 << 20
MAX_VALUE_CHARS = 1 << 16


def jtr_profiles():
    """Names of the profiles jtr ships (jtr-* in the folders searched)."""
    out = set()
    for d in profile_dirs():
        try:
            out |= {n for n in os.listdir(d) if n.startswith("jtr-")
                    and os.path.isfile(os.path.join(d, n, "tuned.conf"))}
        except OSError:
            pass
    return sorted(out)


def find_profile(name):
    """Path of <name>/tuned.conf, or UsageError listing the profiles there are. A
    name with a '/' is the profile's folder itself (jtr advise writes one)."""
    if "/" in (name or ""):
        p = os.path.join(name, "tuned.conf")
        if os.path.isfile(p):
            return p
        raise UsageError("profile folder %s: no tuned.conf in it; give a folder holding "
                         "tuned.conf, or a profile's name (see 'jtr tune list')" % name)
    if not NAME_RE.match(name or ""):
        raise UsageError("profile name %r: use letters, digits, '.', '_' and '-'" % name)
    for d in profile_dirs():
        p = os.path.join(d, name, "tuned.conf")
        if os.path.isfile(p):
            return p
    raise UsageError("unknown profile '%s'; jtr's profiles are %s (see 'jtr tune list')"
                     % (name, ", ".join(jtr_profiles()) or "missing: tuning-profiles/ "
                        "was not found"))


def read_conf(path):
    """{section: {option: raw value}} of one tuned.conf, in file order."""
    cp = configparser.ConfigParser(delimiters=("=",), inline_comment_prefixes=("#",),
                                   strict=False, interpolation=None)
    cp.optionxform = str
    data = read_bytes(path, "tuned profile", MAX_PROFILE_BYTES)
    try:
        cp.read_string(data.decode("utf-8"), path)
    except (configparser.Error, UnicodeDecodeError) as e:
        raise UsageError("%s: not a tuned profile: %s" % (path, str(e).splitlines()[0]))
    return {s: dict(cp.items(s)) for s in cp.sections()}


def read_variables_file(path):
    """name=value lines of a tuned variables file ({} when it does not exist)."""
    out = {}
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.split("#", 1)[0].strip()
                if "=" in line and not line.startswith("["):
                    k, v = line.split("=", 1)
                    out[k.strip()] = v.strip()
    except OSError:
        pass
    return out


def cpus_to_hexmask(cpus):
    """[0, 1] -> '00000003': tuned's format, comma every 32 CPUs, as sysfs reads it."""
    m = 0
    for c in cpus:
        m |= 1 << c
    s = "%x" % m
    s = s.zfill((len(s) + 7) // 8 * 8)
    return ",".join(s[i:i + 8] for i in range(0, len(s), 8))


def _unpack(arg):
    return cpulist_of(arg.strip("'\""))


FUNCTIONS = {
    "cpulist_invert": lambda a: format_cpulist(set(online_cpus()) - set(_unpack(a))),
    "cpulist2hex": lambda a: cpus_to_hexmask(_unpack(a)),
    "cpulist2hex_invert": lambda a: cpus_to_hexmask(set(online_cpus()) - set(_unpack(a))),
    "cpulist_unpack": lambda a: ",".join(str(c) for c in _unpack(a)),
    "cpulist_pack": lambda a: format_cpulist(_unpack(a)),
}


class NeedCpus(UsageError):
    """The profile isolates CPUs and nobody said which (--cpus LIST)."""


class Profile:
    """A profile with its includes merged: .name, .summary, .files (include
    order), .units {section: {option: value}} with variables expanded, .raw the
    same as written, .raw_variables the [variables] section as written (include=
    and all), .origin {(section, option): the profile that set it}."""

    def __init__(self, name, variables=None, expand=True):
        self.name = name
        self.files = []
        self.origin = {}
        raw_units, raw_vars = {}, {}
        self._load(name, raw_units, raw_vars, [])
        self.summary = raw_units.get("main", {}).get("summary", "")
        self.raw_variables = dict(raw_vars)       # [variables] as written, merged
        self.variables = {}
        for k, v in raw_vars.items():
            if k == "include":
                for fk, fv in read_variables_file(v).items():
                    self.variables.setdefault(fk, fv)
            else:
                self.variables[k] = v
        self.variables.update(variables or {})
        self.raw = {sec: opts for sec, opts in raw_units.items() if sec != "main"}
        self.units = {}
        for sec, opts in self.raw.items():
            self.units[sec] = {k: self._expand_option(sec, k, v) if expand else v
                               for k, v in opts.items()}

    def where(self, sec, key, value=None):
        """'PROFILE: [section] key=value' of an option, value as written (and what
        it expands to, where that differs), for the messages about it."""
        raw = self.raw.get(sec, {}).get(key, "") if value is None else value
        text = "%s: [%s] %s=%s" % (self.origin.get((sec, key), self.name), sec, key,
                                   shown(raw))
        exp = self.units.get(sec, {}).get(key) if value is None else None
        if exp is not None and exp != raw:
            text += " (= %s)" % shown(exp)
        return text

    def _expand_option(self, sec, key, value):
        try:
            out = self.expand(value)
        except NeedCpus:
            raise
        except UsageError as e:
            raise UsageError("%s: %s" % (self.where(sec, key, value), e))
        return out

    def _load(self, name, units, variables, seen):
        path = find_profile(name)
        if path in seen:
            raise UsageError("%s: include loop (%s)" % (path, " -> ".join(seen + [path])))
        seen = seen + [path]
        conf = read_conf(path)
        inc = conf.get("main", {}).get("include")
        if inc:
            for n in filter(None, re.split(r"\s*[,;]\s*", inc.strip())):
                self._load(n, units, variables, seen)
        self.files.append(path)
        for sec, opts in conf.items():
            if sec == "variables":
                variables.update(opts)
                self.origin.update({(sec, k): name for k in opts})
                continue
            u = units.setdefault(sec, {})
            for k, v in opts.items():
                if not (sec == "main" and k == "include"):
                    u[k] = v
                    self.origin[(sec, k)] = name

    def expand(self, text, depth=0):
        """Expand ${var} and ${f:func:arg}; UsageError for an unset variable or a
        function it cannot compute (NeedCpus for an unset isolated_cores)."""
        if depth > 10:
            raise UsageError("variables nest too deep")
        grown = [len(text)]

        def one(m):
            out = one_var(m)
            grown[0] += len(out)        # bounded while it grows, not once it has
            if grown[0] > MAX_VALUE_CHARS:
                raise UsageError("the value expands to more than %d characters"
                                 % MAX_VALUE_CHARS)
            return out

        def one_var(m):
            body = m.group(1)
            if body.startswith("f:"):
                _, func, *args = body.split(":")
                if func not in FUNCTIONS:
                    raise UsageError("tuned function %s is not supported by jtr's applier "
                                     "(use --via-tuned)" % func)
                arg = self.expand(":".join(args), depth + 1)
                try:
                    return FUNCTIONS[func](arg)
                except (ValueError, UsageError):
                    raise UsageError("${f:%s} of %r: not a CPU list; write CPU numbers and "
                                     "ranges such as 1, 0-3 or 1,3-5" % (func, arg))
            if body.startswith("i:"):
                return m.group(0)
            if body not in self.variables:
                if body == "isolated_cores":
                    raise NeedCpus("profile %s isolates CPUs: say which with --cpus LIST (for "
                                   "example --cpus 1)" % self.name)
                raise UsageError("variable ${%s} is not set; set it in [variables]" % body)
            return self.expand(self.variables[body], depth + 1)
        while True:                     # inner ${...} first, then what encloses them
            new = VAR_RE.sub(one, text)
            if len(new) > MAX_VALUE_CHARS:
                raise UsageError("the value expands to more than %d characters"
                                 % MAX_VALUE_CHARS)
            if new == text:
                return new
            text, depth = new, depth + 1
            grown[0] = len(text)
            if depth > 10:
                raise UsageError("variables nest too deep")
