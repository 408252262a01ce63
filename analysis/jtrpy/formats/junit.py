# SPDX-License-Identifier: GPL-2.0-only
"""junit - the JUnit XML report CI servers read (jtr run --junit FILE).

The document is the one of Jenkins' JUnit schema (junit-10.xsd, as the xunit
plugin and pytest's own tests have it): <testsuites> holding one <testsuite>
(name, tests, failures, errors, skipped, time in seconds with at most three
decimals, timestamp, hostname; <properties>), a <testcase> per check
(classname, name, time) with a <failure message type> or <error message type>
whose text says more, and <system-out>. jtr run, jtr gap and jtr wake write it
(write_junit), the gates judged in one place (drivers/gates.py).

A suite is handed in as data:
  {"name", "hostname", "timestamp", "time_s", "properties": [(name, value)],
   "cases": [{"classname", "name", "time_s", "failure": {"type", "message",
   "text"} or None, "error": the same or None, "system_out": text or None}]}
Text that XML 1.0 cannot hold (control characters, lone surrogates, U+FFFE,
U+FFFF) is written as U+FFFD.
"""
import re
import xml.etree.ElementTree as ET

from ..errors import JtrError
from ..system.files import write_output

DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(s):
    """@s (any value) as text XML 1.0 can hold."""
    return _NOT_XML.sub("\ufffd", "" if s is None else str(s))


def seconds(s):
    """junit-10.xsd's SUREFIRE_TIME: at most three decimals, never negative."""
    return "%.3f" % (s if isinstance(s, (int, float)) and 0 < s < 1e15 else 0)


def _element(parent, tag, attrs, text=None):
    e = ET.SubElement(parent, tag, {k: xml_text(v) for k, v in attrs})
    if text is not None:
        e.text = xml_text(text)
    return e


def junit_xml(suite):
    """The JUnit XML document of @suite (see the module's note), as text."""
    cases = suite.get("cases") or []
    failures = str(sum(1 for c in cases if c.get("failure")))
    errors = str(sum(1 for c in cases if c.get("error")))
    t = seconds(suite.get("time_s"))
    root = ET.Element("testsuites", {"name": xml_text(suite["name"]), "tests": str(len(cases)),
                                     "failures": failures, "errors": errors, "time": t})
    s = _element(root, "testsuite", (
        ("name", suite["name"]), ("tests", len(cases)), ("failures", failures),
        ("errors", errors), ("skipped", "0"), ("time", t),
        ("timestamp", suite.get("timestamp") or ""), ("hostname", suite.get("hostname") or "")))
    if suite.get("properties"):
        props = ET.SubElement(s, "properties")
        for name, value in suite["properties"]:
            _element(props, "property", (("name", name), ("value", value)))
    for c in cases:
        tc = _element(s, "testcase", (("classname", c["classname"]), ("name", c["name"]),
                                      ("time", seconds(c.get("time_s")))))
        for tag in ("failure", "error"):
            f = c.get(tag)
            if f:
                _element(tc, tag, (("message", f["message"]), ("type", f["type"])),
                         f.get("text") or "")
        if c.get("system_out"):
            _element(tc, "system-out", (), c["system_out"])
    ET.indent(root, "  ")
    return DECLARATION + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(path, suite):
    """Write the JUnit report of @suite to @path (write_output: a regular file
    atomically, a device or FIFO written through); JtrError when it
    cannot be written."""
    try:
        write_output(path, junit_xml(suite))
    except OSError as e:
        raise JtrError("--junit %s: cannot write: %s" % (path, e.strerror or e))
