"""The MCP server's step budget counts the work that grows with one value, for each rule that
reads it (`match.budget`): a `$regex` searching a long text, a schema applying its keywords, an
exact literal listing the keys it lacks, `distinct` writing the canonical key of large args.

Found by an outside review of the server: none of these was counted, so one event within the
request size held the server's one worker far past the ten seconds a call may take (a thousand
rules searching a text of 10 MB: 41 s; a hundred exact rules on an object of 500,000 keys: 48 s;
two hundred `distinct` rules: 37 s; twenty schemas: 33 s). Each count is checked here at its
edge: the check passes on a budget of exactly what it costs and is stopped one step short.
Outside a budget (the command line, the library) nothing is counted.
"""
from __future__ import annotations

import json
from typing import Any

import pytest

from agent_invariants import check_trace
from agent_invariants.errors import InputError
from agent_invariants.match.budget import TooManySteps, limited
from agent_invariants.mcp_server import CHECK, run_tool


def _contract(**rule: Any) -> dict[str, Any]:
    return {"version": 2, "name": "c", "rules": [{"id": "r", "kind": "tool_args", "tool": "t", **rule}]}


def _calls(*args: Any) -> list[dict[str, Any]]:
    return [{"seq": seq, "type": "tool.call", "tool": "t", "call_id": f"c{seq}", "args": value}
            for seq, value in enumerate(args, 1)]


def _spent(contract: dict[str, Any], events: list[dict[str, Any]]) -> int:
    """The steps checking the events takes (loading the contract included), after making sure the
    check passes on a budget of exactly that and is stopped on one step less."""
    with limited(10**12) as budget:
        check_trace(contract, events)
    steps = 10**12 - budget.left
    with limited(steps):
        check_trace(contract, events)
    with limited(steps - 1), pytest.raises(TooManySteps):
        check_trace(contract, events)
    return steps


def test_a_regex_search_of_a_long_text_spends_a_step_per_256_characters() -> None:
    contract = _contract(match={"q": {"$regex": "^b"}})
    assert _spent(contract, _calls({"q": "b" * 2**20})) == 2**20 // 256
    # a text that does not match is searched again to say why: 1,000,000 // 256 twice, 5,000 // 256 once
    assert _spent(contract, _calls({"q": "a" * 1_000_000}, {"q": "b" * 5000})) == 2 * 3906 + 19


def test_every_256_characters_of_a_text_are_a_step() -> None:
    """(No text is free: 1,428 rules searching 7,000 texts of 4,090 characters each ran 233 s when
    texts under 4,096 characters were: hunt 75.)"""
    with limited(0):
        assert check_trace(_contract(match={"q": {"$regex": "b$"}}), _calls({"q": "a" * 255})).passed is False
    assert _spent(_contract(match={"q": {"$regex": "^b"}}), _calls({"q": "b" * 4090})) == 15


def test_an_object_that_breaks_an_exact_literal_spends_two_steps_per_key() -> None:
    args = {f"k{number}": number for number in range(1000)}
    assert _spent(_contract(mode="exact", match={"k0": 0}), _calls(args)) == 2000
    with limited(0):   # one that matches is judged by its key set, counted nowhere; 16 keys are free
        assert check_trace(_contract(mode="exact", match={"k0": 0}), _calls({"k0": 0})).passed is True
        assert check_trace(_contract(mode="exact", match={"k0": 0}), _calls(dict(list(args.items())[:16]))).passed \
            is False


def test_a_schema_spends_six_steps_per_keyword_applied() -> None:
    items = {"type": "array", "items": {"type": "integer"}}
    contract = _contract(schema={"type": "object", "properties": {"q": items}})
    loading = _spent(contract, [])   # (a schema is tried on a few sample values as it loads)
    # type and properties on the args, type and items on q, type on each of its 1,000 items
    assert _spent(contract, _calls({"q": list(range(1000))})) - loading == 6 * 1004


def test_a_distinct_key_spends_a_step_per_8_characters() -> None:
    value = [{"a": number} for number in range(1000)]
    written = len(json.dumps(value, separators=(",", ":")))   # its canonical form, as RFC 8785 writes it
    assert written > 4096
    assert _spent(_contract(distinct=["q"]), _calls({"q": value}, {"q": value[1:]})) == \
        written // 8 + (written - len('{"a":0},')) // 8


def test_outside_a_budget_nothing_is_counted() -> None:
    events = _calls({"q": "a" * 2**20, **{f"k{number}": number for number in range(1000)}})
    contract = {"version": 2, "name": "c", "rules": [
        {"id": "re", "kind": "tool_args", "tool": "t", "match": {"q": {"$regex": "b$"}}},
        {"id": "exact", "kind": "tool_args", "tool": "t", "mode": "exact", "match": {"k0": 0}},
        {"id": "schema", "kind": "tool_args", "tool": "t", "schema": {"type": "object"}},
        {"id": "distinct", "kind": "tool_args", "tool": "t", "distinct": ["k1"]}]}
    assert check_trace(contract, events).error_count == 2


def test_the_server_refuses_a_call_past_the_limit_saying_what_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("agent_invariants.mcp_server.MAX_RULE_EVENTS", 4095)
    arguments = {"contract": _contract(match={"q": {"$regex": "^b"}}), "events": _calls({"q": "b" * 2**20})}
    with pytest.raises(InputError) as refused:
        run_tool(CHECK, arguments)
    assert "a rule that searches a long text, applies a schema" in str(refused.value)
    monkeypatch.setattr("agent_invariants.mcp_server.MAX_RULE_EVENTS", 4096)
    assert run_tool(CHECK, arguments)[0]["passed"] is True
