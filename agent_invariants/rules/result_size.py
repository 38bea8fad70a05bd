"""result_size (contract version 2): how large a tool's result may be."""
from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from msgspec import UNSET, Meta, Raw, UnsetType

from agent_invariants._js import js_number
from agent_invariants.events import Event
from agent_invariants.match.canonical import canonical, evidence_value, plain_size
from agent_invariants.pairing import Calls, PairedCall
from agent_invariants.payloads import decoded
from agent_invariants.report import RuleResult, TraceSummary
from agent_invariants.rules.base import Route, Rule, RuleConfig
from agent_invariants.rules.fields import Glob

__all__ = ("ResultSize", "ResultSizeConfig", "result_bytes")


class ResultSizeConfig(RuleConfig, frozen=True, kw_only=True, tag="result_size"):
    """Options of a result_size rule."""

    since_version: ClassVar[int] = 2

    tool: Glob = "*"
    """The results measured: a glob on their call's tool (default `*`)."""
    max_bytes: Annotated[int, Meta(ge=0)]
    """The most bytes a result may have, in its canonical JSON form."""
    on_missing: Literal["fail", "skip"] = "fail"
    """A result event without `result`: a violation (`fail`, the default) or not (`skip`)."""


_MOST_GROWTH = 6
"""How many times longer than a JSON text its canonical form can be: whitespace and escapes only
shrink, and a number grows most when an exponent is written out (`[1e20]`, 6 bytes, is
`[100000000000000000000]`, 23)."""


def result_bytes(raw: Raw, at_most: int | None = None) -> int:
    """The size of a result as result_size counts it: the UTF-8 bytes of its RFC 8785 form; a
    number beyond any double has no canonical form, and counts as written. A result written
    plainly (`plain_size`) that is at most `at_most` bytes long is measured as it is: its
    canonical form is as long, or shorter when it repeats a key (the decoder keeps the last). Any
    other is decoded and written out."""
    text = bytes(raw)
    size = plain_size(text)
    if size is not None and (at_most is None or size <= at_most):
        return size
    try:
        return len(canonical(decoded(raw)).encode("utf-8", "surrogatepass"))
    except ValueError:
        return len(text)


class ResultSize(Rule):
    """Fails when a tool returns more than its budget of bytes.

    ## What it checks
    Every `tool.result` answering a call whose `tool` matches `tool` (a result without a call:
    by its own `tool`) is measured: the UTF-8 bytes of its `result` written in the canonical JSON
    form of RFC 8785 (no whitespace, keys sorted, numbers as JavaScript writes them: `100.0` is
    `100`), so that the same value weighs the same however the trace wrote it. `null` weighs 4. A
    result holding a number beyond any double (`1e400`, an integer of 400 digits), which that form
    cannot write, weighs as the trace wrote it, whitespace included.

    - `result_size.exceeded`: more than `max_bytes`, at the result; evidence `{tool, call_id,
      bytes, max_bytes}`;
    - `result_size.result_missing` (status `unresolved`): the result event has no `result`, at the
      result, unless `on_missing` is `skip`.

    `checked` counts the results of matching calls, with or without a `result` to measure (with
    `on_missing: skip` too); a trace without any passes as vacuous. Calls that never
    got a result are tool_result_required's business.

    ## Why it matters
    Everything a tool returns goes into the model's context: a search that returns 5 MB costs
    money, pushes the instructions out of the window and invites injected text. A budget per
    tool catches the tool (or the query) that suddenly returns far more than it used to.

    ## Failing trace
    With `{"id": "small", "kind": "result_size", "tool": "search", "max_bytes": 16}`:
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "search", "call_id": "s1", "args": {"q": "x"}}
    {"seq": 2, "type": "tool.result", "call_id": "s1", "ok": true, "result": {"hits": ["a", "b"]}}
    ```
    Violation at seq 2, `result_size.exceeded`: `{"hits":["a","b"]}` is 18 bytes, over 16.

    ## Passing trace
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "search", "call_id": "s1", "args": {"q": "x"}}
    {"seq": 2, "type": "tool.result", "call_id": "s1", "ok": true, "result": {"hits": ["a"]}}
    ```

    ## Options
    - `tool` (glob, default `*`): the results measured, by their call's tool.
    - `max_bytes` (integer >= 0, required).
    - `on_missing` (`fail` or `skip`, default `fail`).

    ## Known limits
    The size is of the value, not of the line: escapes the trace used (`\\u00e9` for `é`) and
    whitespace do not count, nor does a repeated key (`{"a":1,"a":22}` is `{"a":22}`, as JSON.parse
    reads it). A result written plainly (no escapes, spaces, fractions or exponents) within the
    budget is passed without being decoded.
    """

    kind: ClassVar[str] = "result_size"
    config_type: ClassVar[type[RuleConfig]] = ResultSizeConfig
    tags: ClassVar[tuple[str, ...]] = ("budget", "context")
    reason: ClassVar[str] = "exceeded"
    pairs_calls = True

    def __init__(self, config: ResultSizeConfig) -> None:
        super().__init__(config)
        self._config = config

    def route_tools(self, event_type: str, claims: bool | UnsetType) -> tuple[str, ...]:
        return ()

    def route(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType) -> Route:
        return None   # results come through read_results

    def read_results(self, calls: Calls) -> None:
        calls.read_results(self._result, [self._config.tool], orphans=True)

    def _result(self, event: Event, index: int, call: PairedCall | None) -> None:
        self.checked += 1
        if event.result is UNSET:
            if self._config.on_missing == "fail" and self.note_violation():
                tool, evidence = _named(event, call)
                self.keep(f"The result of {tool} at seq {js_number(event.seq)} has no result to measure.",
                          evidence_value(evidence), event.seq, index, reason="result_missing", status="unresolved",
                          pointer="/result")
            return
        if len(event.result) * _MOST_GROWTH <= self._config.max_bytes:
            return   # however it is written, its canonical form cannot reach the budget
        size = result_bytes(event.result, self._config.max_bytes)
        if size > self._config.max_bytes and self.note_violation():
            tool, evidence = _named(event, call)
            evidence.update(bytes=size, max_bytes=self._config.max_bytes)
            self.keep(f"The result of {tool} at seq {js_number(event.seq)} is {size} bytes, over the "
                      f"{self._config.max_bytes} allowed.", evidence_value(evidence), event.seq, index,
                      pointer="/result")

    def finish(self, summary: TraceSummary) -> RuleResult:
        result = self.result()
        if self.checked == 0:
            result.vacuous = True
        return result


def _named(event: Event, call: PairedCall | None) -> tuple[str | UnsetType, dict[str, Any]]:
    """The tool of a result (its call's), and the evidence that names it and its call."""
    tool, call_id = (event.tool, event.call_id) if call is None else (call.tool, call.call_id)
    evidence: dict[str, Any] = {"tool": tool}
    if call_id is not UNSET:
        evidence["call_id"] = call_id
    return tool, evidence
