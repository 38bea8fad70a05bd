"""The MCP server's `$regex` stays linear in time when google-re2 is missing.

Its contracts and traces come from anyone. Python's backtracking engine, which runs `$regex`
without the `re2` extra, takes exponential time on nested repetition: `(a+)+b` on 28 `a`s took
26 seconds, and a pattern of that shape held the server's one worker. The `mcp` extra installs
google-re2; without it, the server refuses the patterns Python's engine might search in more than
linear time, and keeps those it surely searches in linear time (a literal, `^A[0-9]+$`).
"""
from __future__ import annotations

import tomllib
from typing import Any

import pytest

from agent_invariants.errors import InputError
from agent_invariants.match import regex
from agent_invariants.mcp_server import CHECK, run_tool

from support import REPO


def _check(pattern: str, value: str) -> dict[str, Any]:
    contract = {"version": 2, "name": "c", "rules": [
        {"id": "shape", "kind": "tool_args", "tool": "lookup", "match": {"q": {"$regex": pattern}}}]}
    events = [{"seq": 1, "type": "tool.call", "tool": "lookup", "call_id": "c1", "args": {"q": value}}]
    report, _ = run_tool(CHECK, {"contract": contract, "events": events})
    return report


@pytest.fixture
def without_re2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(regex, "_re2", lambda: None)


@pytest.mark.usefixtures("without_re2")
@pytest.mark.parametrize("pattern", [r"(a+)+b", r"(a|a)*b", r"(\w+\s?)+$", r"[a-z]+x"])
def test_a_pattern_python_may_search_slowly_is_refused_without_re2(pattern: str) -> None:
    with pytest.raises(InputError) as refused:
        _check(pattern, "a" * 40)
    assert str(refused.value) == (
        "contract: $.rules[0].match.q.$regex: $regex needs RE2 here: without it, only the patterns Python's engine "
        "surely searches in linear time are taken (a literal, or ^, characters and classes each maybe repeated, $); "
        "install the re2 extra where the server runs: pip install 'agent-invariants[re2]'")


@pytest.mark.usefixtures("without_re2")
@pytest.mark.parametrize(("pattern", "value", "passed"), [
    (r"^A[0-9]+$", "A123", True), (r"^A[0-9]+$", "B123", False), (r"refund\.", "a refund. here", True)])
def test_a_pattern_python_searches_in_linear_time_runs_without_re2(pattern: str, value: str, passed: bool) -> None:
    assert _check(pattern, value)["passed"] is passed


def test_with_re2_the_server_runs_any_re2_pattern() -> None:
    assert _check(r"(a+)+b", "a" * 40)["passed"] is False
    assert _check(r"(a+)+b", "aaab")["passed"] is True


def test_the_command_line_without_re2_still_takes_such_a_pattern(cli: Any, tmp_path: Any) -> None:
    """The bound is the server's: a user of the command line runs their own contracts."""
    (tmp_path / "c.json").write_text('{"version": 2, "name": "c", "rules": [{"id": "r", "kind": "tool_args", '
                                     '"tool": "t", "match": {"q": {"$regex": "(ab+)+c"}}}]}')
    (tmp_path / "t.jsonl").write_text('{"seq": 1, "type": "tool.call", "tool": "t", "call_id": "c", '
                                      '"args": {"q": "abbc"}}\n')
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "re2.py").write_text("raise ImportError('google-re2 hidden for this test')\n")
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", env={"PYTHONPATH": str(hidden)})
    assert (result.returncode, result.stderr) == (0, "")


def test_the_mcp_extra_installs_re2() -> None:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert "google-re2>=1.1" in extras["mcp"]
