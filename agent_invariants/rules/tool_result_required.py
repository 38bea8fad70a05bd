"""tool_result_required: every tool call needs a later result with the same call_id."""
import heapq
import itertools
from collections.abc import Iterator
from operator import itemgetter
from typing import ClassVar

from msgspec import UNSET, UnsetType

from agent_invariants.events import Event
from agent_invariants.globs import compile_glob
from agent_invariants.report import RuleResult, TraceSummary
from agent_invariants.rules.base import Route, Rule, RuleConfig, tool_name
from agent_invariants.rules.fields import Glob

__all__ = ("ToolResultRequired", "ToolResultRequiredConfig")


class ToolResultRequiredConfig(RuleConfig, frozen=True, kw_only=True, tag="tool_result_required"):
    """Options of a tool_result_required rule."""

    tool: Glob | UnsetType = UNSET
    """Which calls need a result (default `*`: every call that names a tool)."""


_Call = tuple[int | float, int, str | UnsetType]
"""A call awaiting its result: (seq, index, tool)."""


class ToolResultRequired(Rule):
    """Fails when a tool call never gets its result: fire-and-forget actions, lost errors.

    ## What it checks
    Each `tool.call` whose `tool` matches `tool` (`checked` counts them) needs a `call_id` and a
    `tool.result` with the same `call_id` after it. Otherwise: a violation at the call,
    `Tool call mail.send (call_id c7) has no later tool.result with that call_id.`, or
    `Tool call mail.send has no call_id, so no tool.result can answer it.`

    ## Why it matters
    An action whose outcome nobody read may have failed silently; the agent then reports success
    on a guess.

    ## Failing trace
    With `{"id": "closed-calls", "kind": "tool_result_required"}`:
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "mail.send", "call_id": "c1"}
    {"seq": 2, "type": "run.completed"}
    ```
    Violation at seq 1: `Tool call mail.send (call_id c1) has no later tool.result with that
    call_id.`

    ## Passing trace
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "mail.send", "call_id": "c1"}
    {"seq": 2, "type": "tool.result", "tool": "mail.send", "call_id": "c1", "ok": true}
    ```

    ## Options
    - `tool` (glob, default `*`): which calls need a result.

    ## Known limits
    Only `call_id` pairs a result with a call; the result's tool is not compared. A result
    without a call is not reported. When call ids repeat, the last result with that id decides,
    so one result can close several earlier calls. Calls without a `tool` are never checked.
    """

    kind: ClassVar[str] = "tool_result_required"
    config_type: ClassVar[type[RuleConfig]] = ToolResultRequiredConfig
    tags: ClassVar[tuple[str, ...]] = ("reliability", "tools")
    reason: ClassVar[str] = "missing"
    liveness_reasons: ClassVar[frozenset[str]] = frozenset({"missing"})

    def __init__(self, config: ToolResultRequiredConfig) -> None:
        super().__init__(config)
        self._pattern = "*" if config.tool is UNSET else config.tool
        self._checked_tool = compile_glob(self._pattern)
        # call_id -> the call awaiting a result, (seq, index, tool); a list of them when ids repeat
        self._open: dict[str, _Call | list[_Call]] = {}
        # calls without a call_id, as (index, seq, tool, None): the first `cap` of them, and how many
        self._unpairable: list[tuple[int, int | float, str | UnsetType, None]] = []
        self._unpairable_count = 0

    def route_tools(self, event_type: str, claims: bool | UnsetType) -> tuple[str, ...]:
        return (self._pattern,) if event_type == "tool.call" else ()

    def route(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType) -> Route:
        if event_type == "tool.result":
            return self._result
        if event_type == "tool.call" and tool is not UNSET and self._checked_tool(tool):
            return self._call
        return None

    def _call(self, event: Event, index: int) -> None:
        self.checked += 1
        if event.call_id is UNSET:
            self._unpairable_count += 1
            if self._unpairable_count <= self.cap:
                self._unpairable.append((index, event.seq, event.tool, None))
        else:
            call = (event.seq, index, event.tool)
            waiting = self._open.setdefault(event.call_id, call)
            if waiting is not call:   # the id is already awaiting a result
                if isinstance(waiting, tuple):
                    waiting = self._open[event.call_id] = [waiting]
                waiting.append(call)

    def _result(self, event: Event, index: int) -> None:
        if event.call_id is not UNSET:
            self._open.pop(event.call_id, None)

    def finish(self, summary: TraceSummary) -> RuleResult:
        unanswered = sum(1 if type(calls) is tuple else len(calls) for calls in self._open.values())
        keep = self.note_violations(self._unpairable_count + unanswered)
        # the first calls in trace order, whichever kind: only `keep` of them are ever sorted or built
        calls = itertools.chain(self._unpairable, self._unanswered())
        for index, seq, tool, call_id in heapq.nsmallest(keep, calls, key=itemgetter(0)):
            if call_id is None:
                self.keep(f"Tool call {tool_name(tool)} has no call_id, so no tool.result can answer it.",
                          {"tool": tool}, seq, index)
            else:
                self.keep(f"Tool call {tool_name(tool)} (call_id {call_id}) has no later tool.result with that "
                          "call_id.", {"tool": tool, "call_id": call_id}, seq, index)
        return self.result()

    def _unanswered(self) -> Iterator[tuple[int, int | float, str | UnsetType, str]]:
        """The calls still awaiting a result, as (index, seq, tool, call_id)."""
        for call_id, calls in self._open.items():
            for seq, index, tool in (calls if isinstance(calls, list) else [calls]):
                yield index, seq, tool, call_id
