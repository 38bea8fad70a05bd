"""allow_tools (spec §4.2): every `tool.call` must match one of the allowlist globs."""
from __future__ import annotations

import pytest

from agent_invariants import check_trace

from rulecheck import assert_result, check, write_trace
from support import contract

KIND = "allow_tools"
RULE = {"id": "known-tools", "kind": KIND, "tools": ["kb.*", "crm.lookup"]}
ALLOWED = ["kb.*", "crm.lookup"]


def test_passing_trace_checks_every_call():
    report = check(RULE,
                   {"type": "run.start", "tool": "crm.delete"},                 # not a call
                   {"type": "tool.call", "tool": "kb.search"},
                   {"type": "tool.result", "tool": "crm.delete", "ok": True},   # results are not looked at
                   {"type": "tool.call", "tool": "crm.lookup"},
                   {"type": "tool.call", "tool": "kb.answer"})
    assert_result(report, RULE, checked=3, violations=[])
    assert report.passed is True and report.error_count == 0 and report.warning_count == 0


def test_calls_outside_the_allowlist_are_violations():
    report = check(RULE,
                   {"type": "tool.call", "tool": "kb.search"},
                   {"type": "tool.call", "tool": "crm.delete"},
                   {"type": "tool.result", "tool": "crm.delete", "ok": True},
                   {"type": "tool.call", "tool": "crm.lookup.all"},   # anchored: not crm.lookup
                   {"type": "tool.call", "tool": "crm.lookup"},
                   start=7)
    assert_result(report, RULE, checked=4, violations=[
        (8, 1, {"tool": "crm.delete", "allowed": ALLOWED}),
        (10, 3, {"tool": "crm.lookup.all", "allowed": ALLOWED}),
    ])
    assert report.passed is False
    assert "crm.delete" in report.violations[0].message


def test_warning_severity_reports_but_passes():
    rule = {**RULE, "severity": "warning"}
    report = check(rule, {"type": "tool.call", "tool": "kb.search"}, {"type": "tool.call", "tool": "crm.delete"})
    assert_result(rule=rule, report=report, checked=2, violations=[(2, 1, {"tool": "crm.delete", "allowed": ALLOWED})])
    assert report.passed is True
    assert (report.error_count, report.warning_count) == (0, 1)


def test_tool_less_call_always_violates_even_with_star():
    rule = {"id": "anything", "kind": KIND, "tools": ["*"]}
    report = check(rule,
                   {"type": "tool.call", "call_id": "c1"},
                   {"type": "tool.call", "tool": "whatever.tool"})
    assert_result(report, rule, checked=2, violations=[(1, 0, {"allowed": ["*"]})])
    assert "tool" not in report.violations[0].evidence
    assert report.violations[0].message == "Tool call has no tool field, so it is outside the allowlist."


def test_allowlist_globs_are_trimmed():
    # §2.2/§2.6: glob fields, list items included, are whitespace-trimmed; evidence shows the normalised list
    rule = {"id": "trimmed", "kind": KIND, "tools": ["  kb.*  ", "crm.lookup"]}
    report = check(rule,
                   {"type": "tool.call", "tool": "kb.search"},
                   {"type": "tool.call", "tool": "crm.delete"})
    assert_result(report, rule, checked=2, violations=[(2, 1, {"tool": "crm.delete", "allowed": ALLOWED})])


@pytest.mark.parametrize(("tools", "tool", "allowed"), [
    (["crm.?"], "crm.a", True),
    (["crm.?"], "crm.ab", False),
    (["crm.lookup"], "CRM.lookup", False),
    (["kb.*", "crm.*"], "crm.x", True),      # any one pattern is enough
    (["kb.*"], "kb.", True),                 # * may be empty
    (["kb.*"], "xkb.search", False),
])
def test_glob_matching(tools, tool, allowed):
    rule = {"id": "allow", "kind": KIND, "tools": tools}
    report = check(rule, {"type": "tool.call", "tool": tool})
    assert_result(report, rule, checked=1, violations=[] if allowed else [(1, 0, {"tool": tool, "allowed": tools})])


def test_trace_file_reports_physical_line(tmp_path):
    path = write_trace(tmp_path,
                       '{"seq": 1, "type": "tool.call", "tool": "kb.search"}',
                       "",
                       "   # comment after a blank line",
                       '{"seq": 2, "type": "tool.call", "tool": "crm.delete"}',
                       '{"seq": 3, "type": "tool.call"}')
    report = check_trace(contract(RULE), str(path))
    assert_result(report, RULE, checked=3, violations=[
        (2, 1, {"tool": "crm.delete", "allowed": ALLOWED}),
        (3, 2, {"allowed": ALLOWED}),
    ])
    assert [v.line for v in report.violations] == [4, 5]


def test_cli_text_report_says_a_call_has_no_tool(cli, write):
    write("contract.json", contract(RULE))
    write("trace.jsonl", '{"seq": 1, "type": "tool.call", "tool": "crm.delete"}\n{"seq": 2, "type": "tool.call"}\n')
    result = cli("check", "--contract", "contract.json", "--trace", "trace.jsonl")
    assert result.returncode == 1, result.stderr
    assert "trace.jsonl:1  seq 1  [allow_tools.not_allowed] Tool is outside the allowlist: crm.delete." in result.stdout
    assert ("trace.jsonl:2  seq 2  [allow_tools.not_allowed] Tool call has no tool field, so it is outside the "
            "allowlist.") in result.stdout
    assert "unknown" not in result.stdout
