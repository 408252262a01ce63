# SPDX-License-Identifier: GPL-2.0-only
"""formats.junit: the JUnit XML report, validated against the schema CI servers
read (Jenkins' junit-10.xsd, which scripts/deps.sh takes from pytest's sdist)."""
import xml.etree.ElementTree as ET

from jtrpy.formats.junit import junit_xml, seconds, xml_text


def suite(cases, **kw):
    s = {"name": "jtr run gap", "hostname": "vm", "timestamp": "2026-11-26T13:48:10+00:00",
         "time_s": 11.5004, "properties": [("tool", "gap"), ("max_ns", 1250000)],
         "cases": cases}
    s.update(kw)
    return s


FAILED = {"classname": "jtr.run.gap", "name": "max-latency cpu 1", "time_s": 10.0004,
          "failure": {"type": "max-latency",
                      "message": "max-latency cpu 1: FAILED: max 1.25 ms > limit 100us",
                      "text": "value: 1.25 ms\nlimit: 100us\ncauses: <task> & \"x\"\n"},
          "system_out": "CPU 1: ...\n"}
PASSED = {"classname": "jtr.run.gap", "name": "max-lost cpu 1", "time_s": 10.0,
          "failure": None, "system_out": "CPU 1: ...\n"}


def test_a_failed_and_a_passed_case(schema):
    text = junit_xml(suite([FAILED, PASSED]))
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites ')
    schema.validate(text)
    root = ET.fromstring(text)
    assert (root.tag, root.get("tests"), root.get("failures"), root.get("errors")) == (
        "testsuites", "2", "1", "0")
    [s] = root
    assert (s.get("name"), s.get("hostname"), s.get("time"), s.get("timestamp")) == (
        "jtr run gap", "vm", "11.500", "2026-11-26T13:48:10+00:00")
    assert [(p.get("name"), p.get("value")) for p in s.find("properties")] == [
        ("tool", "gap"), ("max_ns", "1250000")]
    failed, passed = s.findall("testcase")
    assert (failed.get("classname"), failed.get("name"), failed.get("time")) == (
        "jtr.run.gap", "max-latency cpu 1", "10.000")
    f = failed.find("failure")
    assert f.get("type") == "max-latency" and f.get("message") == FAILED["failure"]["message"]
    assert f.text == FAILED["failure"]["text"]          # escaped and read back whole
    assert failed.find("system-out").text == "CPU 1: ...\n"
    assert passed.find("failure") is None and passed.find("system-out") is not None


def test_all_passed_and_no_properties(schema):
    text = junit_xml(suite([PASSED], properties=[], time_s=None))
    schema.validate(text)
    root = ET.fromstring(text)
    assert root.get("failures") == "0" and root[0].find("properties") is None
    assert root[0].get("time") == "0.000"


def test_an_error_case(schema):
    case = {"classname": "jtr.run.gap", "name": "run",
            "error": {"type": "no-result", "message": "jtr gap wrote no result (exit 2)",
                      "text": "jtr gap wrote no result (exit 2)"}}
    text = junit_xml(suite([case]))
    schema.validate(text)
    root = ET.fromstring(text)
    assert (root.get("errors"), root.get("failures")) == ("1", "0")
    assert root[0].find("testcase/error").get("type") == "no-result"


def test_what_xml_cannot_hold_is_replaced(schema):
    """A comm or a hostname may hold control characters or broken text: the file
    stays XML that CI servers read."""
    odd = "kworker\x01/1:2\x1b[0m \ud800 \ufffe caf\xe9 \u20ac"
    case = dict(FAILED, name="max-latency cpu 1 " + odd,
                failure=dict(FAILED["failure"], message="m\n'q'\t" + odd, text=odd))
    text = junit_xml(suite([case], hostname=odd, properties=[("command", odd)]))
    schema.validate(text)
    root = ET.fromstring(text)
    want = "kworker\ufffd/1:2\ufffd[0m \ufffd \ufffd caf\xe9 \u20ac"
    assert root[0].get("hostname") == want
    f = root[0].find("testcase/failure")
    assert f.text == want and f.get("message") == "m\n'q'\t" + want   # kept in the attribute
    assert xml_text(None) == "" and xml_text(12) == "12"


def test_the_schema_refuses_what_jtr_must_not_write(schema):
    """The validation has teeth: the schema CI servers read refuses a suite's
    time with four decimals and a testcase without its name."""
    good = junit_xml(suite([PASSED]))
    assert schema.is_valid(good)
    assert not schema.is_valid(good.replace('time="11.500"', 'time="11.5004"'))
    assert not schema.is_valid(good.replace(' name="max-lost cpu 1"', ""))
    assert seconds(10.0004) == "10.000" and seconds(-1) == "0.000" and seconds("x") == "0.000"
