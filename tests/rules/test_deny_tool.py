"""deny_tool (spec §4.1): every `tool.call` whose tool matches the glob is a violation at that call."""
from __future__ import annotations

import pytest
from msgspec import UNSET

from agent_invariants import check_trace

from rulecheck import assert_result, check, write_trace
from support import contract, events

KIND = "deny_tool"
RULE = {"id": "no-shell", "kind": KIND, "tool": "shell.*"}


def test_passing_trace():
    report = check(RULE,
                   {"type": "tool.call", "tool": "fs.read"},
                   {"type": "tool.result", "tool": "shell.exec", "ok": True},   # results are not calls
                   {"type": "shell.exec"},                                      # a type, not a tool
                   {"type": "tool.invoke", "tool": "shell.exec"},               # not a tool.call
                   {"type": "tool.call", "tool": "sandbox.shell.exec"})         # globs are anchored
    assert_result(report, RULE, checked=0, violations=[])
    assert report.passed is True and report.error_count == 0 and report.warning_count == 0


def test_each_denied_call_is_a_violation_at_that_call():
    report = check(RULE,
                   {"type": "tool.call", "tool": "fs.read"},
                   {"type": "tool.call", "tool": "shell.exec"},
                   {"type": "tool.result", "tool": "shell.exec"},
                   {"type": "tool.call", "tool": "shell.kill"},
                   start=10)
    assert_result(report, RULE, checked=2, violations=[
        (11, 1, {"tool": "shell.exec"}),
        (13, 3, {"tool": "shell.kill"}),
    ])
    assert report.passed is False
    assert "shell.exec" in report.violations[0].message
    assert "shell.kill" in report.violations[1].message


def test_warning_severity_reports_but_passes():
    rule = {**RULE, "severity": "warning"}
    report = check(rule, {"type": "tool.call", "tool": "fs.read"}, {"type": "tool.call", "tool": "shell.exec"})
    assert_result(report, rule, checked=1, violations=[(2, 1, {"tool": "shell.exec"})])
    assert report.passed is True
    assert report.error_count == 0 and report.warning_count == 1
    assert report.results[0].passed is False


def test_error_and_warning_rules_are_counted_separately_in_contract_order():
    warn = {"id": "no-net", "kind": KIND, "tool": "net.*", "severity": "warning"}
    report = check_trace(contract(warn, RULE), events({"type": "tool.call", "tool": "shell.exec"},
                                                      {"type": "tool.call", "tool": "net.get"}))
    assert [(v.rule_id, v.severity, v.event_seq) for v in report.violations] == [
        ("no-net", "warning", 2), ("no-shell", "error", 1)]
    assert (report.error_count, report.warning_count, report.passed) == (1, 1, False)


def test_tool_less_calls_never_match_even_star():
    rule = {"id": "deny-all", "kind": KIND, "tool": "*"}
    report = check(rule,
                   {"type": "tool.call", "call_id": "anon"},
                   {"type": "tool.invoke", "tool": "other"},
                   {"type": "tool.call", "tool": "real"})
    assert_result(report, rule, checked=1, violations=[(3, 2, {"tool": "real"})])


@pytest.mark.parametrize(("pattern", "tool", "denied"), [
    ("shell", "shell.exec", False),              # anchored at the end
    ("exec", "shell.exec", False),               # anchored at the start
    ("shell.exec", "shell.exec", True),
    ("Shell.*", "shell.exec", False),            # case-sensitive
    ("db.?", "db.x", True),
    ("db.?", "db.xy", False),
    ("db.?", "db.", False),                      # ? is exactly one character
    ("a.b", "aXb", False),                       # a dot is literal
    ("pay*ment", "payment", True),               # * may be empty
    ("pay*ment", "pay/x.y/ment", True),          # * crosses dots and slashes
    ("t(1)+[x]|^$", "t(1)+[x]|^$", True),        # regex characters are literal
    ("a|b", "a", False),
    ("  shell.exec  ", "shell.exec", True),      # globs are trimmed
    ("shell*", "shell\nexec", False),            # * does not cross a newline
    ("tool.?", "tool.\U0001F527", False),        # ? is one UTF-16 code unit
    ("tool.??", "tool.\U0001F527", True),
])
def test_glob_matching(pattern, tool, denied):
    rule = {"id": "deny", "kind": KIND, "tool": pattern}
    report = check(rule, {"type": "tool.call", "tool": tool})
    expected = [(1, 0, {"tool": tool})] if denied else []
    assert_result(report, rule, checked=int(denied), violations=expected)


def test_trace_file_reports_physical_line(tmp_path):
    path = write_trace(tmp_path,
                       "# recorded by the agent harness",
                       '{"seq": 1, "type": "tool.call", "tool": "fs.read"}',
                       "",
                       '{"seq": 2, "type": "tool.call", "tool": "shell.exec"}')
    report = check_trace(contract(RULE), str(path))
    assert_result(report, RULE, checked=1, violations=[(2, 1, {"tool": "shell.exec"})])
    assert report.violations[0].line == 4


def test_in_memory_trace_has_no_line():
    report = check(RULE, {"type": "tool.call", "tool": "shell.exec"})
    assert report.violations[0].line is UNSET
