"""`$contains` over an empty array whose tree holds a reference that finds nothing.

Spec §2: "An empty set has the reason `no_candidates`. Either reason gives `reference_unresolved`
..., never an extra mismatch", and a condition that cannot be resolved is unresolved, never false.
Found by an outside second model (hunt 74): with no item to try the tree on, its references were
never looked up, so the check said `mismatch` (and a `matches` condition said false, letting a
forbidden_when pass) where the same reference with one item said `reference_unresolved`.
"""
from __future__ import annotations

from typing import Any

from msgspec import UNSET

from agent_invariants import check_trace


def _found(rules: list[dict[str, Any]], events: list[dict[str, Any]]) -> list[tuple[str, str, Any]]:
    report = check_trace({"version": 2, "name": "c", "rules": rules},
                         [{"seq": seq, **event} for seq, event in enumerate(events, 1)])
    return [(violation.code, violation.status, violation.pointer) for violation in report.violations]


def test_an_empty_array_with_a_reference_that_finds_nothing_is_unresolved() -> None:
    rules = [{"id": "r", "kind": "tool_args", "tool": "a", "match": {"xs": {"$contains": {"$arg": "missing"}}}}]
    calls = [{"type": "tool.call", "tool": "a", "call_id": "c1", "args": {"xs": []}},
             {"type": "tool.call", "tool": "a", "call_id": "c2", "args": {"xs": [1]}}]
    assert _found(rules, calls) == [("tool_args.reference_unresolved", "unresolved", "/args/xs")] * 2


def test_a_value_that_is_no_array_with_a_reference_that_finds_nothing_is_unresolved() -> None:
    """As `$lte` or `$in` with such a reference on a string (an outside reader of §2): the
    reference is looked up whatever the value, and one that finds nothing is unresolved."""
    rules = [{"id": "r", "kind": "tool_args", "tool": "a",
              "match": {"xs": {"$contains": {"$from_result": {"tool": "nope"}}}}}]
    calls = [{"type": "tool.call", "tool": "a", "call_id": f"c{number}", "args": {"xs": value}}
             for number, value in enumerate([1, "text", {"a": 1}, None])]
    assert _found(rules, calls) == [("tool_args.reference_unresolved", "unresolved", "/args/xs")] * 4


def test_a_value_that_is_no_array_is_a_mismatch_when_the_references_resolve() -> None:
    rules = [{"id": "r", "kind": "tool_args", "tool": "a", "match": {"xs": {"$contains": {"$arg": "want"}}}}]
    calls = [{"type": "tool.call", "tool": "a", "call_id": "c1", "args": {"xs": 1, "want": 1}}]
    assert _found(rules, calls) == [("tool_args.mismatch", "fail", "/args/xs")]


def test_an_empty_array_whose_references_resolve_is_a_mismatch() -> None:
    rules = [{"id": "r", "kind": "tool_args", "tool": "a", "match": {"xs": {"$contains": {"$arg": "want"}}}},
             {"id": "plain", "kind": "tool_args", "tool": "a", "match": {"xs": {"$contains": 1}}}]
    calls = [{"type": "tool.call", "tool": "a", "call_id": "c1", "args": {"xs": [], "want": 1}}]
    assert _found(rules, calls) == [("tool_args.mismatch", "fail", "/args/xs")] * 2


def test_output_match_of_an_empty_array_is_unresolved_when_its_reference_finds_nothing() -> None:
    rules = [{"id": "r", "kind": "output_match",
              "match": {"refunds": {"$contains": {"$from_result": {"tool": "refund", "path": "id"}}}}}]
    assert _found(rules, [{"type": "run.completed", "output": {"refunds": []}}]) == [
        ("output_match.reference_unresolved", "unresolved", "/output/refunds")]


def test_a_condition_on_an_empty_array_with_such_a_reference_is_unresolved_not_false() -> None:
    """forbidden_when passed: its condition read as false, so the call was not forbidden."""
    rules = [{"id": "no-refund-if-flagged", "kind": "forbidden_when", "tool": "refund", "when": {
        "path": "flagged", "matches": {"$contains": {"$from_result": {"tool": "fraud.check", "path": "order"}}}}}]
    events = [{"type": "tool.call", "tool": "refund", "call_id": "c1", "args": {"order": "A1"}},
              {"type": "tool.result", "call_id": "c1", "ok": True, "result": {}},
              {"type": "run.completed", "output": {"flagged": []}}]
    assert _found(rules, events) == [("forbidden_when.condition_unresolved", "unresolved", UNSET)]
