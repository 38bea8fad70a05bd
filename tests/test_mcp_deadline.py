"""A call of the MCP server stops after `MAX_SECONDS`, whatever its steps count (outside review,
hunt 75: a rule's work on one event that no count foresaw held the one worker for minutes).

The step budget is the bound that says the same on every machine; this one is the backstop. Here
the limit is made small, and a check far inside the step budget, which takes seconds, is stopped
and refused; the server's next call runs as usual, and nothing is left pending in its thread.
"""
from __future__ import annotations

import time
from typing import Any

import pytest

from agent_invariants.errors import InputError
from agent_invariants.mcp_server import CHECK, LINT, run_tool


def _slow() -> dict[str, Any]:
    """400 rules that fail on each of 2,000 calls: 800,000 rule-events, each saying why (seconds)."""
    rules = [{"id": f"r{number}", "kind": "tool_args", "tool": "t", "match": {"x": {"$in": [number, "a", "b"]}}}
             for number in range(400)]
    events = [{"seq": seq, "type": "tool.call", "tool": "t", "call_id": f"c{seq}", "args": {"x": -1}}
              for seq in range(1, 2001)]
    return {"contract": {"version": 2, "name": "slow", "rules": rules}, "events": events}


def test_a_call_past_the_time_limit_is_stopped_and_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("agent_invariants.mcp_server.MAX_SECONDS", 0.2)
    began = time.monotonic()
    with pytest.raises(InputError) as refused:
        run_tool(CHECK, _slow())
    assert time.monotonic() - began < 3
    assert str(refused.value) == ("contract: checking it took more than 0.2 seconds, the limit per call; check it "
                                  "from files with `agent-invariants check`")
    time.sleep(0.3)   # (the timer of the stopped call is gone: nothing is raised here)
    small = {"contract": {"version": 2, "name": "c", "rules": [{"id": "r", "kind": "deny_tool", "tool": "shell"}]},
             "events": [{"seq": 1, "type": "run.start"}]}
    assert run_tool(CHECK, small)[0]["passed"] is True


def test_a_call_within_the_time_limit_is_not_touched(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("agent_invariants.mcp_server.MAX_SECONDS", 0.2)
    small = {"contract": {"version": 2, "name": "c", "rules": [{"id": "r", "kind": "deny_tool", "tool": "shell"}]},
             "events": [{"seq": 1, "type": "run.start"}]}
    for _ in range(20):
        assert run_tool(CHECK, small)[0]["passed"] is True
    time.sleep(0.4)   # every timer cancelled: none fires into this thread later
    assert sum(range(10)) == 45


def test_a_refused_call_points_to_its_own_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every tool's refusal said `agent-invariants check` (outside review, hunt 22): a lint call
    past the limit points to `agent-invariants lint`."""
    monkeypatch.setattr("agent_invariants.mcp_server.MAX_SECONDS", 0.05)
    rules = [{"id": f"r{number}", "kind": "tool_args", "tool": "t",
              "match": {"x": {"$regex": f"\\pL{{100}}|z{number}"}}} for number in range(10)]
    with pytest.raises(InputError) as refused:
        run_tool(LINT, {"contract": {"version": 2, "name": "slow", "rules": rules}})
    assert str(refused.value) == ("contract: checking it took more than 0.05 seconds, the limit per call; lint it "
                                  "from a file with `agent-invariants lint`")
