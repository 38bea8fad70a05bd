"""tool_calls (contract version 2): how many times a tool is called, and whether the report agrees."""
from __future__ import annotations

import heapq
from typing import Annotated, Any, ClassVar, Literal

from msgspec import UNSET, Meta, UnsetType

from agent_invariants._js import js_number
from agent_invariants.events import Event
from agent_invariants.globs import compile_glob
from agent_invariants.match.canonical import evidence_value
from agent_invariants.match.paths import NOT_FOUND, find, parse_path, pointer
from agent_invariants.pairing import Calls, PairedCall
from agent_invariants.report import RuleResult, TraceSummary
from agent_invariants.rules.base import Route, Rule, RuleConfig
from agent_invariants.rules.fields import FieldProblem, Glob
from agent_invariants.rules.terminal import NO_OUTPUT, TERMINAL_TYPES, Terminal

__all__ = ("ToolCalls", "ToolCallsConfig")

Count = Annotated[int, Meta(ge=0, le=1_000_000)]



class ToolCallsConfig(RuleConfig, frozen=True, kw_only=True, tag="tool_calls"):
    """Options of a tool_calls rule."""

    since_version: ClassVar[int] = 2

    tool: Glob = "*"
    """The calls counted: a glob on the call's tool (default `*`)."""
    min: Count | UnsetType = UNSET
    """At least this many counted calls (no default)."""
    max: Count | UnsetType = UNSET
    """At most this many counted calls; `0` alone forbids the tool."""
    matches_output_length: Annotated[str, Meta(min_length=1)] | UnsetType = UNSET
    """A path into the final output: the array there must have as many elements as calls were counted."""
    count: Literal["calls", "successful"] = "calls"
    """`calls` (default): every matching call; `successful`: calls whose result came and is not `ok: false`."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.min is UNSET and self.max is UNSET and self.matches_output_length is UNSET:
            raise FieldProblem("min", "a tool_calls rule needs at least one of min, max, matches_output_length")
        if self.min is not UNSET and self.max is not UNSET and self.min > self.max:
            raise FieldProblem("min", f"min ({self.min}) must not be above max ({self.max})")
        if self.matches_output_length is not UNSET:
            try:
                parse_path(self.matches_output_length)
            except ValueError as exc:
                raise FieldProblem("matches_output_length", str(exc)) from None


class ToolCalls(Rule):
    """Fails when a tool is called too often, too rarely, or not as often as the final report says.

    ## What it checks
    The `tool.call` events whose `tool` matches `tool` are counted: all of them (`count: calls`,
    the default), or only those whose result came back and is not `ok: false` (`count:
    successful`; a result belongs to the nearest earlier unanswered call with its `call_id`). Then:

    - `tool_calls.max`: more than `max` counted calls; one violation, at the (max+1)-th counted
      call in trace order (the call itself, also with `successful`);
    - `tool_calls.min`: fewer than `min` counted calls; no event;
    - `tool_calls.output_mismatch`: the array at `matches_output_length` in the final output (the
      `output` of the last `run.completed` or `run.failed`) has another length than the count; at
      that terminal event;
    - `tool_calls.output_unresolved` (status `unresolved`): there is no terminal event, no output,
      nothing at the path, or not an array there; at the terminal event, when there is one.

    Evidence: `{tool, count, count_mode, min, max, path, output_length}`, the options given and the
    count of the whole trace. `checked` is the count; the rule is never vacuous.

    ## Why it matters
    "At most one refund per order", "search at least once before answering", "no more than five
    web fetches": budgets on one tool. And the report an agent writes at the end is only worth
    something if it agrees with what it did: a summary listing two refunds when one succeeded is a
    wrong report, however good the prose.

    ## Failing trace
    With `{"id": "refunds-match", "kind": "tool_calls", "tool": "refund", "count": "successful",
    "matches_output_length": "refunds"}`:
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "refund", "call_id": "c1", "args": {"order": "A1"}}
    {"seq": 2, "type": "tool.result", "call_id": "c1", "ok": true}
    {"seq": 3, "type": "tool.call", "tool": "refund", "call_id": "c2", "args": {"order": "A2"}}
    {"seq": 4, "type": "tool.result", "call_id": "c2", "ok": false}
    {"seq": 5, "type": "run.completed", "output": {"refunds": ["A1", "A2"]}}
    ```
    Violation at seq 5, `tool_calls.output_mismatch`: one successful refund, but the output lists two.

    ## Passing trace
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "refund", "call_id": "c1", "args": {"order": "A1"}}
    {"seq": 2, "type": "tool.result", "call_id": "c1", "ok": true}
    {"seq": 3, "type": "tool.call", "tool": "refund", "call_id": "c2", "args": {"order": "A2"}}
    {"seq": 4, "type": "tool.result", "call_id": "c2", "ok": true}
    {"seq": 5, "type": "run.completed", "output": {"refunds": ["A1", "A2"]}}
    ```

    ## Options
    - `tool` (glob, default `*`): the calls counted.
    - `min`, `max` (0..1000000, min not above max): bounds on the count. There is no default `min`;
      `{"max": 0}` alone forbids the tool.
    - `matches_output_length` (path into the final output): the count must equal that array's length.
    - `count` (`calls` or `successful`, default `calls`).
    At least one of `min`, `max`, `matches_output_length` is required.

    Under `record --enforce`, every call beyond `max` is denied (with `successful`, every call
    once `max` successful ones came back).

    ## Known limits
    With `successful`, a call counts when its result comes, so `max` is known only then; calls
    without a `call_id` never get a result and never count as successful. The rule keeps the `max`
    + 1 earliest counted calls (with `successful`; results are paired with their calls once per
    check, for all rules) and the last terminal event.
    """

    kind: ClassVar[str] = "tool_calls"
    enforced: ClassVar[bool] = True   # record --enforce
    config_type: ClassVar[type[RuleConfig]] = ToolCallsConfig
    tags: ClassVar[tuple[str, ...]] = ("tools", "budget", "output")
    reason: ClassVar[str] = "max"
    liveness_reasons: ClassVar[frozenset[str]] = frozenset({"min", "output_mismatch", "output_unresolved"})
    mixed_parts: ClassVar[bool] = True   # `max` is safety
    displaces: ClassVar[bool] = True     # a call after the terminal event comes after its output violation

    def __init__(self, config: ToolCallsConfig) -> None:
        super().__init__(config)
        self._config = config
        self._is_tool = compile_glob(config.tool)
        self._successful = config.count == "successful"
        self._path = UNSET if config.matches_output_length is UNSET else parse_path(config.matches_output_length)
        self.pairs_calls = self._successful
        # `max` alone (or `min: 0`): no call at all is what the rule allows, not a sign it guards nothing
        self.checked_nothing_is_normal = config.min in (UNSET, 0) and config.matches_output_length is UNSET
        self._over: tuple[int | float, int] | None = None   # (seq, index) of the (max+1)-th counted call
        self._earliest: list[tuple[int, int | float]] = []    # with `successful`: see _count
        self._terminal = Terminal()

    def route_tools(self, event_type: str, claims: bool | UnsetType) -> tuple[str, ...]:
        return (self._config.tool,) if event_type == "tool.call" else ()

    def route(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType) -> Route:
        if event_type == "tool.call" and not self._successful and tool is not UNSET and self._is_tool(tool):
            return self._call
        if event_type in TERMINAL_TYPES and self._path is not UNSET:
            return self._terminal.seen
        return None   # with `successful`, results come through `read_results`

    def read_results(self, calls: Calls) -> None:
        calls.read_results(self._result, [self._config.tool], orphans=False, failed=False)   # (what counts)

    def _call(self, event: Event, index: int) -> None:
        self._count(event.seq, index)

    def _result(self, event: Event, index: int, call: PairedCall | None) -> None:
        if event.ok is not False and call is not None:   # (read_results sends only counted calls' results)
            self._count(call.seq, call.position)

    def _count(self, seq: int | float, index: int) -> None:
        self.checked += 1
        maximum = self._config.max
        if maximum is UNSET:
            return
        if not self._successful:
            if self.checked == maximum + 1:
                self._over = (seq, index)
            return
        # Results may come in another order than their calls: keep the max+1 earliest counted
        # calls (a heap of their negated positions); the latest of them is the first one over.
        earliest = self._earliest
        if len(earliest) <= maximum:
            heapq.heappush(earliest, (-index, seq))
        elif index < -earliest[0][0]:
            heapq.heapreplace(earliest, (-index, seq))

    def denies(self, result: RuleResult, call: Event, index: int) -> bool:
        """Under `record --enforce`, every counted call beyond `max` is denied, not only the first
        one over; with `successful`, a call is denied once the earlier successful calls reach
        `max` (its own success is not known before it runs)."""
        maximum = self._config.max
        if maximum is UNSET or call.tool is UNSET or not self._is_tool(call.tool):
            return False
        return self.checked >= maximum if self._successful else self.checked > maximum

    def denial(self, result: RuleResult, call: Event, index: int) -> str:
        """With `successful`, the bound is reached before it is broken (the rule passes): the
        message says so, with the count and the most allowed."""
        if self._successful and not any(violation.code == "tool_calls.max" for violation in result.violations):
            return f"{self._called()}, as many as the {self._config.max} allowed: one more success would be too many"
        return super().denial(result, call, index)

    def finish(self, summary: TraceSummary) -> RuleResult:
        config, count = self._config, self.checked
        if self._earliest and len(self._earliest) == (config.max or 0) + 1:
            position, seq = self._earliest[0]
            self._over = (seq, -position)
        if self._over is not None and self.note_violation(at=self._over[1]):
            seq, index = self._over
            self.keep(f"{self._called()}, more than the {config.max} allowed; the first one over is at seq "
                      f"{js_number(seq)}.", self._evidence(), seq, index)
        if config.min is not UNSET and count < config.min and self.note_violation(liveness=True):
            self.keep(f"{self._called()}, fewer than the {config.min} required.",
                      self._evidence(), reason="min")
        if self._path is not UNSET:
            self._check_output()
        return self.result()

    def _check_output(self) -> None:
        """The count against the length of the array at the path in the final output."""
        terminal, path, text = self._terminal, self._path, self._config.matches_output_length
        assert path is not UNSET and text is not UNSET
        output = terminal.output()
        value = NOT_FOUND if output is NO_OUTPUT else find(output, path)
        seq, index = terminal.seq, terminal.position
        if isinstance(value, list):
            if len(value) != self.checked and self.note_violation(liveness=True, at=index):
                self.keep(f"The final output lists {len(value)} at {text}, but {self._called()}.",
                          self._evidence(len(value)), seq, index,
                          reason="output_mismatch", pointer=pointer(("output", *path)), reads_output=True)
            return
        if not self.note_violation(liveness=True, at=index):
            return
        why = terminal.no_output()
        if why is None:
            why = f"the final output {'has nothing' if value is NOT_FOUND else 'holds no array'} at {text}"
        self.keep(f"Cannot compare the {self._config.tool} calls with the final output: {why}.", self._evidence(),
                  seq, index, reason="output_unresolved", status="unresolved",
                  pointer=UNSET if terminal.event is None else pointer(("output", *path)), reads_output=True)

    def _called(self) -> str:
        """`refund was called successfully 2 times`, as messages say the count."""
        count = self.checked
        how = " successfully" if self._successful else ""
        return f"{self._config.tool} was called{how} {count} time{'' if count == 1 else 's'}"

    def _evidence(self, output_length: int | None = None) -> dict[str, Any]:
        config = self._config
        evidence: dict[str, Any] = {"tool": config.tool, "count": self.checked, "count_mode": config.count}
        if config.min is not UNSET:
            evidence["min"] = config.min
        if config.max is not UNSET:
            evidence["max"] = config.max
        if config.matches_output_length is not UNSET:
            evidence["path"] = config.matches_output_length
        if output_length is not None:
            evidence["output_length"] = output_length
        return dict(evidence_value(evidence))
