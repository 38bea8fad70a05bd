"""Assertions shared by the rule-kind tests: check one rule, compare its result exactly."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_invariants import check_trace

from support import contract, events


def check(rule: dict[str, Any], *specs: dict[str, Any], start: int = 1):
    return check_trace(contract(rule), events(*specs, start=start))


def shape(value: Any) -> Any:
    """The key order of a JSON value (dict keys are compared in order, recursively)."""
    if isinstance(value, dict):
        return [(key, shape(item)) for key, item in value.items()]
    if isinstance(value, list):
        return [shape(item) for item in value]
    return None


def assert_result(report, rule: dict[str, Any], *, checked: int, violations: list[tuple]) -> None:
    """`violations`: the expected (event_seq, event_index, evidence) of the only rule, in report order."""
    severity = rule.get("severity", "error")
    (result,) = report.results
    assert (result.rule_id, result.rule_kind, result.severity) == (rule["id"], rule["kind"], severity)
    assert result.checked == checked
    assert result.passed is (not violations)
    got = [(v.rule_id, v.rule_kind, v.severity, v.event_seq, v.event_index, v.evidence) for v in result.violations]
    assert got == [(rule["id"], rule["kind"], severity, seq, index, evidence) for seq, index, evidence in violations]
    for violation, (_, _, evidence) in zip(result.violations, violations, strict=True):
        assert shape(violation.evidence) == shape(evidence)
        assert isinstance(violation.message, str) and violation.message
    assert report.violations == result.violations
    errors = len(violations) if severity == "error" else 0
    assert (report.error_count, report.warning_count) == (errors, len(violations) - errors)
    assert report.passed is (errors == 0)


def write_trace(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "trace.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path
