"""What the reference models of the property tests share (each model's own logic stays in its file,
written from the spec alone): a sentinel for an absent key, a strategy for small objects, JSON
equality as §2 defines it, a path reader, and the one-rule report they are compared with."""
from __future__ import annotations

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


def one_result(rule: dict[str, Any], events: list[dict[str, Any]]) -> dict[str, Any]:
    """The result of `rule`, alone in a version-2 contract, on `events`, as plain dicts."""
    report = msgspec.to_builtins(check_trace({"version": 2, "name": "model", "rules": [rule]}, events))
    (result,) = report["results"]
    return result  # type: ignore[no-any-return]
