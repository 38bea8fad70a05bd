"""`--partial` with `--max-violations`: the counts stay those of every violation (v1 D7: "error_count,
warning_count, passed and the exit code still count every one"), and the violations of liveness
parts stay out of them (spec v2 §10 point 82), also when some of either sort are not kept.

The rules that matter are those whose one rule finds violations of both sorts: tool_calls (`max`
is safety; `min` and the output's length are liveness) and failure_handled (a failure whose window
the trace cut short is liveness, one whose window passed is judged). Random cut-short traces are
checked keeping every violation and keeping one; the counts must agree."""
from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_invariants.api import check_trace

CONTRACT: dict[str, Any] = {"version": 2, "name": "mixed", "rules": [
    {"id": "calls", "kind": "tool_calls", "tool": "s", "max": 1, "matches_output_length": "items"},
    {"id": "enough", "kind": "tool_calls", "tool": "s", "min": 4, "count": "successful"},
    {"id": "handled", "kind": "failure_handled", "tool": "*", "within_events": 2},
    {"id": "handled-w", "kind": "failure_handled", "tool": "s", "within_events": 3, "severity": "warning"},
    {"id": "closed", "kind": "tool_result_required"},
]}

_STEP = st.sampled_from(["call", "fail", "ok", "note"])


def _trace(steps: list[str]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for number, step in enumerate(steps, start=1):
        if step == "call":
            events.append({"type": "tool.call", "tool": "s", "call_id": f"c{number}"})
        elif step in ("fail", "ok"):   # a call and its result at once
            events.append({"type": "tool.call", "tool": "s", "call_id": f"c{number}"})
            events.append({"type": "tool.result", "call_id": f"c{number}", "ok": step == "ok"})
        else:
            events.append({"type": "agent.message"})
    return [{"seq": seq, **event} for seq, event in enumerate(events, start=1)]


def _counts(report: Any) -> tuple[Any, ...]:
    rules = tuple((rule.rule_id, rule.passed, rule.inconclusive) for rule in report.results)
    return report.passed, report.error_count, report.warning_count, report.inconclusive_count, rules


@settings(max_examples=150, deadline=None)
@given(st.lists(_STEP, max_size=12), st.integers(min_value=1, max_value=3))
def test_cutting_violations_does_not_change_the_partial_counts(steps: list[str], kept: int) -> None:
    events = _trace(steps)
    every = check_trace(CONTRACT, events, partial=True, max_violations=0)
    cut = check_trace(CONTRACT, events, partial=True, max_violations=kept)
    assert _counts(cut) == _counts(every)


def test_a_cut_liveness_violation_beside_a_kept_safety_one() -> None:
    """Two calls of `s` against max 1 (safety, at the second call) and an output that is not there
    (liveness, `output_unresolved` at the end): keeping one violation keeps the `max` one, and the
    other still counts as inconclusive, not as an error."""
    events = _trace(["call", "call"])
    report = check_trace({"version": 2, "name": "one", "rules": [CONTRACT["rules"][0]]}, events, partial=True,
                         max_violations=1)
    (rule,) = report.results
    assert [violation.code for violation in rule.violations] == ["tool_calls.max"]
    assert (report.error_count, report.inconclusive_count, rule.inconclusive, rule.violations_total) == (1, 1, 1, 2)
