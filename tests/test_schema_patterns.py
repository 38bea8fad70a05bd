"""A schema's `patternProperties` patterns are searched in linear time everywhere the validator
reads them (outside review of the MCP server, hunt 75).

`pattern` and `patternProperties` ran on RE2 patterns already, but the validator's own
`additionalProperties` found the keys no pattern names with Python's backtracking engine: with
`^(a+)+b$` a call whose args had a key of 30 `a`s took 35 s, and one more `a` doubled it, inside
one C call that no limit can stop. It now searches them as `patternProperties` does. The
validator's `unevaluatedProperties` does the same deep inside its own walk, where Python's `\\d`
also means more than RE2's (`^\\d*٣*$` backtracked for minutes in one C call: hunt 76): beside
it, only plain text, maybe after `^`, is taken.
"""
from __future__ import annotations

import json
import time
from typing import Any

import pytest

from agent_invariants import check_trace
from agent_invariants.errors import ContractError


def _check(schema: dict[str, Any], args: dict[str, Any]) -> list[str]:
    contract = {"version": 2, "name": "c", "rules": [{"id": "r", "kind": "tool_args", "tool": "t", "schema": schema}]}
    report = check_trace(contract, [{"seq": 1, "type": "tool.call", "tool": "t", "call_id": "c", "args": args}])
    return [violation.message for violation in report.violations]


def test_additional_properties_searches_the_patterns_in_linear_time() -> None:
    schema = {"type": "object", "patternProperties": {"^(a+)+b$": {}}, "additionalProperties": False}
    began = time.monotonic()
    assert _check(schema, {"a" * 40: 1, "aab": 2}) == [
        'Args of t at seq 1 break the schema: /args: "' + "a" * 40 + '" does not match any of the regexes: '
        "'^(a+)+b$'."]
    assert time.monotonic() - began < 5   # (Python's engine: days)


def test_additional_properties_means_what_it_meant() -> None:
    schema = {"type": "object", "properties": {"id": {}}, "patternProperties": {"^x_": {"type": "string"}},
              "additionalProperties": {"type": "integer"}}
    assert _check(schema, {"id": None, "x_a": "s", "n": 1}) == []
    assert _check(schema, {"x_a": 1}) == ['Args of t at seq 1 break the schema: /args/x_a: 1 is not of type "string".']
    assert _check(schema, {"n": "s"}) == ['Args of t at seq 1 break the schema: /args/n: "s" is not of type "integer".']
    closed = {"type": "object", "properties": {"id": {}}, "additionalProperties": False}
    assert _check(closed, {"id": 1, "b": 2, "a": 3}) == [
        'Args of t at seq 1 break the schema: /args: Additional properties are not allowed ("a", "b" were unexpected).']


@pytest.mark.parametrize(("pattern", "key"), [("^(a+)+b$", None), ("(x|xy)*z", None), ("^x_[a-z]+$", None),
                                              ("^\\d*\u0663*$", None), ("^a$", None), ("^x_", "x_ab"),
                                              ("note", "my note")])
def test_beside_unevaluated_properties_only_linear_patterns_are_taken(pattern: str, key: str | None) -> None:
    schema = {"type": "object", "patternProperties": {pattern: {}}, "unevaluatedProperties": False}
    if key is not None:
        assert _check(schema, {key: 1}) == []
        assert len(_check(schema, {key: 1, "other": 2})) == 1
        return
    with pytest.raises(ContractError) as refused:
        _check(schema, {})
    assert str(refused.value).endswith(
        f"$.rules[0].schema.patternProperties: the pattern {json.dumps(pattern, ensure_ascii=False)}: beside "
        "unevaluatedProperties, the validator searches patternProperties with Python's engine, whose meaning and time "
        "differ from RE2's: use plain text, maybe after ^")
