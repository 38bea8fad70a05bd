"""What the reference models of the property tests share (each model's own logic stays in its file,
written from the spec alone): a sentinel for an absent key, a strategy for small objects, JSON
equality and paths as §2 defines them, globs as v1 does, the one-rule report they are compared
with, and the comparison of its violations with a model's."""
from __future__ import annotations

import re
from typing import Any

import msgspec
from hypothesis import strategies as st

from agent_invariants.api import check_trace

ABSENT: Any = object()
"""A key left out (in `picked` choices), or a path that finds nothing (`read`)."""


def picked(**choices: list[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """An object with one value drawn per key from its list; ABSENT leaves the key out (repeating a
    value in a list makes it likelier)."""
    return st.fixed_dictionaries({key: st.sampled_from(values) for key, values in choices.items()}).map(
        lambda drawn: {key: value for key, value in drawn.items() if value is not ABSENT})


def same(a: Any, b: Any) -> bool:
    """JSON-type-strict structural equality (§2): true ≠ 1, 1 = 1.0, equal key sets, arrays by position."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def glob(pattern: str, value: Any) -> bool:
    """v1 §2.7: `*` any run of characters, `?` one, everything else literal, anchored; never matches a
    missing value. (The models' value pools hold no line terminator.)"""
    if not isinstance(value, str):
        return False
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, value) is not None


def read_path(value: Any, path: str) -> Any:
    """§2 and point 13: the value at a dot path or (leading `/`) a JSON Pointer; ABSENT when a segment
    is missing. A canonical non-negative integer segment indexes an array, and is a key on an object;
    any other segment on an array finds nothing."""
    if path.startswith("/"):
        segments = [s.replace("~1", "/").replace("~0", "~") for s in path[1:].split("/")]
    else:
        segments = path.split(".")
    for segment in segments:
        if isinstance(value, dict):
            if segment not in value:
                return ABSENT
            value = value[segment]
        elif isinstance(value, list):
            if not re.fullmatch(r"0|[1-9][0-9]*", segment) or int(segment) >= len(value):
                return ABSENT
            value = value[int(segment)]
        else:
            return ABSENT
    return value


def one_result(rule: dict[str, Any], events: list[dict[str, Any]]) -> dict[str, Any]:
    """The result of `rule`, alone in a version-2 contract, on `events`, as plain dicts."""
    report = msgspec.to_builtins(check_trace({"version": 2, "name": "model", "rules": [rule]}, events), enc_hook=float)
    (result,) = report["results"]
    return result  # type: ignore[no-any-return]


def same_violations(result: dict[str, Any], expected: list[tuple[Any, ...]]) -> None:
    """A rule's result has exactly the model's violations, `(seq, code, status, evidence)` in report
    order (point 5), and passes only without any."""
    actual = [(v.get("event_seq"), v["code"], v["status"], v["evidence"]) for v in result["violations"]]
    assert {a[:3] for a in actual} == {e[:3] for e in expected}, (actual, expected)
    assert actual == expected
    assert result["passed"] is (expected == [])


def located_at_their_events(result: dict[str, Any], events: list[dict[str, Any]]) -> None:
    """Each violation has both `event_seq` and `event_index` or neither, and the index names the
    event with that seq."""
    for v in result["violations"]:
        assert (v.get("event_index") is None) is (v.get("event_seq") is None)
        if "event_seq" in v:
            assert events[v["event_index"]]["seq"] == v["event_seq"]
