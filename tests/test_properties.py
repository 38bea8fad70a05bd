"""Property tests: random small contracts and traces; invariants that must hold for all of them."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_invariants import TraceFile, check_trace, compare_traces, load_contract

from strategies import EVIDENCE, VERDICTS, evidence_lists, optional, require_event_fields
from support import examples, jsonl, report_dict

pytestmark = pytest.mark.slow   # every test here takes long (see the README's Development)

TOOLS = ["a.x", "a.y", "b.x"]
TYPES = ["tool.call", "tool.result", "approval.granted", "outcome.observed", "control.stop", "run.completed",
         "agent.message"]
TOOL_GLOBS = [*TOOLS, "a.*", "*.x", "*", "?.x", "b.?", "a.x ", "c.*"]
TYPE_GLOBS = [*TYPES, "tool.*", "*", "run.*", "*.stop", "approval.?ranted"]
OUTCOMES = ["o1", "o2"]

SETTINGS = settings(max_examples=examples(75), deadline=None, suppress_health_check=[HealthCheck.too_slow])


matchers = st.fixed_dictionaries({}, optional={
    "type": st.sampled_from(TYPE_GLOBS),
    "tool": st.sampled_from(TOOL_GLOBS),
    "ok": st.booleans(),
    "outcome_id": st.sampled_from([*OUTCOMES, "o*"]),
    "verdict": st.sampled_from(VERDICTS),
    "claims_completion": st.booleans(),
}).filter(bool)

KIND_FIELDS: dict[str, st.SearchStrategy] = {
    "deny_tool": st.fixed_dictionaries({"tool": st.sampled_from(TOOL_GLOBS)}),
    "allow_tools": st.fixed_dictionaries({"tools": st.lists(st.sampled_from(TOOL_GLOBS), min_size=1, max_size=3)}),
    "require_approval": st.fixed_dictionaries({"tool": st.sampled_from(TOOL_GLOBS)}, optional={
        "scope": st.sampled_from(["s1", "s*", "s2"]), "within_events": st.integers(1, 5)}),
    "stop_is_final": st.fixed_dictionaries({}, optional={
        "stop_type": st.sampled_from(TYPE_GLOBS),
        "allowed_after": st.lists(st.sampled_from(TYPE_GLOBS), max_size=3)}),
    "completion_requires_outcome": st.fixed_dictionaries({}, optional={
        "completion_types": st.lists(st.sampled_from(TYPE_GLOBS), min_size=1, max_size=2),
        "outcome_id": st.sampled_from([*OUTCOMES, "o*"]),
        "evidence_classes": evidence_lists}),
    "retry_limit": st.fixed_dictionaries({"max_attempts": st.integers(1, 3)}, optional={
        "tool": st.sampled_from(TOOL_GLOBS), "group_by": st.sampled_from(["tool", "call_signature"])}),
    "event_budget": st.fixed_dictionaries({}, optional={
        "max_events": st.integers(0, 12), "max_tool_calls": st.integers(0, 5),
        "max_tool_failures": st.integers(0, 3)}).filter(bool),
    "require_order": st.fixed_dictionaries({"before": matchers, "after": matchers}),
    "require_event": require_event_fields(matchers),
    "deny_event": st.fixed_dictionaries({"match": matchers}),
    "tool_result_required": st.fixed_dictionaries({}, optional={"tool": st.sampled_from(TOOL_GLOBS)}),
    "confidence_requires_outcome": st.fixed_dictionaries(
        {"threshold": st.sampled_from([0, 0.3, 0.5, 0.9, 1])}, optional={"evidence_classes": evidence_lists}),
}


@st.composite
def rules(draw, index: int) -> dict[str, Any]:
    kind = draw(st.sampled_from(sorted(KIND_FIELDS)))
    rule: dict[str, Any] = {"id": f"r{index}", "kind": kind}
    severity = draw(optional(st.sampled_from(["error", "warning"])))
    if severity is not None:
        rule["severity"] = severity
    rule.update(draw(KIND_FIELDS[kind]))
    return rule


@st.composite
def contracts(draw) -> dict[str, Any]:
    count = draw(st.integers(1, 5))
    document: dict[str, Any] = {"version": 1, "name": "prop", "rules": [draw(rules(i)) for i in range(count)]}
    compare = draw(st.fixed_dictionaries({}, optional={
        "fail_on_new_tools": st.booleans(),
        "fail_on_new_violations": st.booleans(),
        "max_tool_call_increase_percent": st.sampled_from([0, 10, 50.5]),
        "require_same_outcome_or_better": st.booleans(),
    }))
    if compare or draw(st.booleans()):
        document["compare"] = compare
    return document


event_bodies = st.fixed_dictionaries({"type": st.sampled_from(TYPES)}, optional={
    "tool": st.sampled_from(TOOLS),
    "call_id": st.sampled_from(["c1", "c2", "c3"]),
    "call_signature": st.sampled_from(["sig1", "sig2", "a.x"]),
    "approval_id": st.sampled_from(["p1", "p2"]),
    "approval_scope": st.sampled_from(["s1", "s2"]),
    "approved": st.booleans(),
    "ok": st.booleans(),
    "outcome_id": st.sampled_from(OUTCOMES),
    "verdict": st.sampled_from(VERDICTS),
    "evidence_class": st.sampled_from(EVIDENCE),
    "claims_completion": st.booleans(),
    "confidence": st.sampled_from([0, 0.3, 0.5, 0.9, 1]),
    "time": st.sampled_from(["2024-01-31T08:00Z", "2024-02-29T23:59:59.5+01:00"]),
    "data": st.just({"k": [1, "v"]}),
    "note": st.sampled_from(["x", None, 3]),
})


@st.composite
def traces(draw, bodies_of: st.SearchStrategy[dict[str, Any]] = event_bodies) -> list[dict[str, Any]]:
    """Events of `bodies_of` with strictly increasing seqs, with gaps."""
    bodies = draw(st.lists(bodies_of, max_size=14))
    seq = draw(st.integers(0, 2))
    out = []
    for body in bodies:
        out.append({"seq": seq, **body})
        seq += draw(st.integers(1, 3))
    return out


def lines_of(report: Any) -> list[Any]:
    return [violation.line for violation in report.violations]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("properties")


# --- properties ----------------------------------------------------------------------------------

@SETTINGS
@given(document=contracts(), trace=traces())
def test_a_trace_compared_with_itself_regresses_only_by_its_own_violations(document, trace):
    checked = check_trace(document, trace)
    report = compare_traces(document, trace, trace)
    assert {r.kind for r in report.regressions} <= {"contract_violation"}
    assert report.compatible is checked.passed
    failing_errors = [r.rule_id for r in checked.results if not r.passed and r.severity == "error"]
    assert [r.evidence["rule_id"] for r in report.regressions] == failing_errors
    assert all(r.evidence["baseline_also_failed"] is True for r in report.regressions)
    assert all(c.change in ("passing", "still_failing") for c in report.rule_changes)


@SETTINGS
@given(document=contracts(), trace=traces())
def test_check_is_deterministic(document, trace):
    contract = load_contract(document)
    first = msgspec.json.encode(check_trace(document, trace))
    second = msgspec.json.encode(check_trace(contract, trace))
    third = msgspec.json.encode(check_trace(contract, list(reversed(list(reversed(trace))))))
    assert first == second == third
    assert msgspec.json.encode(compare_traces(contract, trace, trace)) == \
        msgspec.json.encode(compare_traces(document, trace, trace))


@SETTINGS
@given(document=contracts(), trace=traces())
def test_report_is_internally_consistent(document, trace):
    report = check_trace(document, trace)
    assert [r.rule_id for r in report.results] == [r["id"] for r in document["rules"]]
    assert report.violations == [v for r in report.results for v in r.violations]
    assert report.error_count == sum(v.severity == "error" for v in report.violations)
    assert report.warning_count == len(report.violations) - report.error_count
    assert report.passed is (report.error_count == 0)
    for result in report.results:
        assert result.passed is (not result.violations)
        assert all(v.severity == result.severity and v.rule_id == result.rule_id for v in result.violations)
    for violation in report.violations:
        if violation.event_index is not msgspec.UNSET:
            assert trace[violation.event_index]["seq"] == violation.event_seq
    assert report.summary.events == len(trace)


@SETTINGS
@given(document=contracts(), trace=traces(), pretty=st.booleans())
def test_jsonl_file_list_and_json_array_file_agree(scratch, document, trace, pretty):
    lines_path = scratch / "trace.jsonl"
    array_path = scratch / "trace.json"
    lines_path.write_text(jsonl(trace), encoding="utf-8")
    array_path.write_text(json.dumps(trace, indent=2 if pretty else None), encoding="utf-8")
    from_file = check_trace(document, lines_path)
    from_list = check_trace(document, trace)
    from_array = check_trace(document, array_path)
    assert report_dict(from_file) == report_dict(from_list) == report_dict(from_array)
    # JSONL without comments: each event's line is its position + 1
    assert lines_of(from_file) == [
        v.event_index + 1 if v.event_index is not msgspec.UNSET else msgspec.UNSET for v in from_file.violations]
    # pretty JSON array: the line is where the event's object starts
    text_lines = array_path.read_text(encoding="utf-8").split("\n")
    for violation in from_array.violations:
        if violation.event_index is not msgspec.UNSET:
            if pretty:
                assert text_lines[violation.line - 1].strip() == "{"
                assert f'"seq": {violation.event_seq},' in text_lines[violation.line]
            else:
                assert violation.line == 1


@SETTINGS
@given(document=contracts(), trace=traces(), data=st.data())
def test_comment_and_blank_lines_only_change_line_numbers(scratch, document, trace, data):
    fillers = st.lists(st.sampled_from(["", "   ", "# comment", "  # indented {\"seq\": -1}", "\t", "#"]),
                       max_size=3)
    out: list[str] = []
    for event in trace:
        out.extend(data.draw(fillers))
        out.append(json.dumps(event))
    out.extend(data.draw(fillers))
    newline = data.draw(st.sampled_from(["\n", "\r\n"]))
    commented = scratch / "commented.jsonl"
    commented.write_bytes(newline.join(out).encode("utf-8"))
    plain = scratch / "plain.jsonl"
    plain.write_text(jsonl(trace), encoding="utf-8")

    with_comments = check_trace(document, commented)
    without = check_trace(document, plain)
    assert report_dict(with_comments) == report_dict(without)
    for violation in with_comments.violations:
        if violation.event_index is msgspec.UNSET:
            assert violation.line is msgspec.UNSET
        else:
            assert json.loads(out[violation.line - 1])["seq"] == violation.event_seq
    source = TraceFile(commented)
    assert [e.seq for e in source] == [e["seq"] for e in trace]
    for index, event in enumerate(trace):
        assert json.loads(out[source.line_of(index) - 1]) == event


# Strings with lone surrogates and backslashes, the characters whose escapes the reader rewrites.
surrogate_text = st.text(st.sampled_from(["a", "\\", "u", "d", "8", "\ud83d", "\ude00", "\udc00", "\ud800", "é", "😀"]),
                         min_size=1, max_size=12)


@given(surrogate_text, st.booleans())
@SETTINGS
def test_lone_surrogates_read_as_the_replacement_character_and_nothing_else_changes(text, as_array):
    """JSON escapes every surrogate (`json.dumps`); the reader must give back the same string with
    each lone surrogate as U+FFFD and every pair as its character, as a UTF-16 round trip does."""
    event = json.dumps({"seq": 1, "type": "x", "actor": text})
    trace = (f"[{event}]" if as_array else event).encode()
    expected = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    (read,) = TraceFile(trace)
    assert read.actor == expected
