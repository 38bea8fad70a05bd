"""Every violation carries a code, `<kind>.<reason>`, and a status, in version-1 reports too (spec
v2 §0 and §10 point 1, whose table of the twelve v1 kinds' codes these cases follow)."""
from __future__ import annotations

import json
from typing import Any

import pytest

from agent_invariants import check_trace

from support import contract

CALL = {"type": "tool.call", "tool": "shell.exec"}
CASES: list[tuple[dict[str, Any], list[dict[str, Any]], list[str]]] = [
    ({"kind": "deny_tool", "tool": "shell.*"}, [CALL], ["deny_tool.denied"]),
    ({"kind": "allow_tools", "tools": ["kb.*"]}, [CALL], ["allow_tools.not_allowed"]),
    ({"kind": "require_approval", "tool": "shell.*"}, [CALL], ["require_approval.missing"]),
    ({"kind": "stop_is_final"}, [{"type": "control.stop"}, CALL], ["stop_is_final.after_stop"]),
    ({"kind": "completion_requires_outcome"}, [{"type": "agent.message", "claims_completion": True}],
     ["completion_requires_outcome.missing"]),
    ({"kind": "confidence_requires_outcome", "threshold": 0.5},
     [{"type": "agent.message", "claims_completion": True, "confidence": 0.9}],
     ["confidence_requires_outcome.missing"]),
    ({"kind": "retry_limit", "max_attempts": 1}, [CALL, CALL], ["retry_limit.exceeded"]),
    ({"kind": "event_budget", "max_events": 1, "max_tool_calls": 1, "max_tool_failures": 0},
     [CALL, {"type": "tool.result", "tool": "shell.exec", "ok": False}, CALL],
     ["event_budget.events", "event_budget.tool_calls", "event_budget.tool_failures"]),
    ({"kind": "require_order", "before": {"type": "policy.checked"}, "after": {"type": "tool.call"}}, [CALL],
     ["require_order.missing"]),
    ({"kind": "require_event", "match": {"type": "run.start"}, "min": 1}, [CALL], ["require_event.min"]),
    ({"kind": "require_event", "match": {"type": "tool.call"}, "max": 1}, [CALL, CALL], ["require_event.max"]),
    ({"kind": "deny_event", "match": {"type": "tool.call"}}, [CALL], ["deny_event.matched"]),
    ({"kind": "tool_result_required"}, [CALL], ["tool_result_required.missing"]),
]


@pytest.mark.parametrize(("rule", "trace", "codes"), CASES, ids=[case[2][0] for case in CASES])
def test_each_v1_kind_names_its_violations_as_the_spec_table_does(rule, trace, codes):
    events = [{"seq": number, **event} for number, event in enumerate(trace, 1)]
    report = check_trace(contract({"id": "r", **rule}), events)
    assert [(violation.code, violation.status) for violation in report.violations] == [(code, "fail") for code in codes]


def test_a_strict_check_names_a_rule_that_checked_nothing(cli, write):
    write("c.json", '{"version": 1, "name": "c", "rules": [{"id": "r", "kind": "deny_tool", "tool": "x"},'
                    ' {"id": "o", "kind": "tool_result_required"}]}')
    write("t.jsonl", '{"seq": 1, "type": "agent.message"}\n')
    result = cli("check", "-c", "c.json", "-t", "t.jsonl", "--strict", "--format", "json", "-q")
    assert result.returncode == 1
    (violation,) = json.loads(result.stdout)["violations"]
    assert (violation["rule_id"], violation["code"], violation["status"]) == (
        "o", "tool_result_required.checked_nothing", "fail")
