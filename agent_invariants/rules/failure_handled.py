"""failure_handled (contract version 2): a failed tool call is retried or talked about, soon."""
from __future__ import annotations

from collections import deque
from typing import Annotated, Any, ClassVar, Literal

from msgspec import UNSET, Meta, UnsetType

from agent_invariants._js import js_number
from agent_invariants.events import Event
from agent_invariants.globs import compile_glob
from agent_invariants.match.canonical import evidence_value
from agent_invariants.pairing import Calls, PairedCall
from agent_invariants.report import RuleResult, TraceSummary, Violation
from agent_invariants.rules.base import Observer, Route, Rule, RuleConfig
from agent_invariants.rules.fields import Glob
from agent_invariants.rules.terminal import TERMINAL_TYPES

__all__ = ("FailureHandled", "FailureHandledConfig")


class FailureHandledConfig(RuleConfig, frozen=True, kw_only=True, tag="failure_handled"):
    """Options of a failure_handled rule."""

    since_version: ClassVar[int] = 2

    tool: Glob = "*"
    """The failures watched: a glob on the failed call's tool (default `*`)."""
    within_events: Annotated[int, Meta(ge=1, le=1000)]
    """How many events after the failure may handle it."""
    by: Literal["retry", "message", "any"] = "any"
    """What handles a failure: a retry, a message, or either (default)."""
    message_types: Annotated[list[Glob], Meta(min_length=1, max_length=20)] | UnsetType = UNSET
    """The event types that count as a message (globs; default `["agent.message"]`)."""
    message_refs_call: bool = False
    """A message must carry the failed call's `call_id`."""
    retry_succeeds: bool = False
    """A retry handles the failure only if its own result comes and is not `ok: false`."""


class _Failure:
    """A failed result, and whether something handled it."""

    __slots__ = ("call_id", "closed", "deadline", "handled", "index", "provisional", "retries", "seq", "tool")

    def __init__(self, event: Event, index: int, tool: str | UnsetType, call_id: str | UnsetType, window: int) -> None:
        self.seq, self.index, self.tool, self.call_id = event.seq, index, tool, call_id
        self.deadline = index + window       # the last position that may handle it
        self.handled = False
        self.retries = 0                     # retries whose result is awaited (retry_succeeds)
        self.provisional = False             # handled only by a run event that may be the terminal
        self.closed = False                  # its window ended


class FailureHandled(Rule):
    """Fails when a tool call fails and the agent neither retries it nor says so within a few events.

    ## What it checks
    Each `tool.result` with `"ok": false` whose call's tool matches `tool` (a result without a
    call: its own `tool`) is a failure. The next `within_events` events (by position) may handle
    it:

    - a **retry**: a `tool.call` of the same tool (exactly the failed call's name); with
      `retry_succeeds`, only if that call's own result comes (at any later point) and is not
      `ok: false`;
    - a **message**: an event whose type matches `message_types` (default `agent.message`); with
      `message_refs_call`, only one carrying the failed call's `call_id`.

    `by` says which of them count: `retry`, `message` or `any` (default). The terminal event
    (the last `run.completed` or `run.failed`) takes a place in the window but never handles; an
    earlier one whose type matches `message_types` is a message like any other (which one is
    last is known when the next one comes, or at the end). A trace that ends inside the window
    fails. A failure nothing handled is a `failure_handled.unhandled`
    at the failed result, evidence `{tool, call_id, within_events, by}`. `checked` counts the
    failures; a trace without any passes as vacuous.

    ## Why it matters
    Swallowed errors are how agents report success on work that never happened: the search failed,
    the agent answered anyway. A retry or a word to the user is the least a failure deserves.

    ## Failing trace
    With `{"id": "handle-search", "kind": "failure_handled", "tool": "search", "within_events": 2}`:
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "search", "call_id": "s1", "args": {"q": "x"}}
    {"seq": 2, "type": "tool.result", "call_id": "s1", "ok": false}
    {"seq": 3, "type": "run.completed", "claims_completion": true}
    ```
    Violation at seq 2, `failure_handled.unhandled`.

    ## Passing trace
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "search", "call_id": "s1", "args": {"q": "x"}}
    {"seq": 2, "type": "tool.result", "call_id": "s1", "ok": false}
    {"seq": 3, "type": "agent.message", "text": "The search failed; I will try another source."}
    {"seq": 4, "type": "run.completed", "claims_completion": true}
    ```

    ## Options
    - `tool` (glob, default `*`), `within_events` (1..1000, required).
    - `by` (`retry`, `message` or `any`; default `any`).
    - `message_types` (globs, default `["agent.message"]`), `message_refs_call` (default false).
    - `retry_succeeds` (default false).

    ## Known limits
    A message is any event of a matching type: what it says is not read. The rule keeps the
    failures whose window is open (at most `within_events` events' worth) and, with
    `retry_succeeds`, each retry waiting for its result together with the failures it may
    handle: a trace of many failures and many retries whose results never come keeps up to
    failures × `within_events` entries, and takes as long.
    """

    kind: ClassVar[str] = "failure_handled"
    config_type: ClassVar[type[RuleConfig]] = FailureHandledConfig
    tags: ClassVar[tuple[str, ...]] = ("reliability", "tools")
    reason: ClassVar[str] = "unhandled"
    mixed_parts: ClassVar[bool] = True   # a failure whose window the trace cut short is liveness
    displaces: ClassVar[bool] = True     # a failure is settled when its window closes, or a retry's result comes
    pairs_calls = True
    checked_nothing_is_normal = True   # a run without failures is the passing state

    def __init__(self, config: FailureHandledConfig) -> None:
        super().__init__(config)
        self._config = config
        self._window = config.within_events
        self._retries = config.by in ("retry", "any")
        self._messages = config.by in ("message", "any")
        self._is_message = [compile_glob(glob) for glob in config.message_types or ["agent.message"]]
        self._open: deque[_Failure] = deque()                 # failures whose window is open, oldest first
        self._is_tool = compile_glob(config.tool)
        self._by_tool: dict[str | UnsetType, list[_Failure]] = {}   # open failures by tool, oldest first
        self._by_call: dict[str, list[_Failure]] = {}               # open failures by call_id
        self._awaited: dict[int, list[_Failure]] = {}       # retry call's position -> failures it may handle
        # A run.completed or run.failed of a message type handles only if a later one comes (the
        # last is the terminal): the failures only the latest one handled wait here for that.
        self._runs_handle = self._messages and any(is_type(run_type) for run_type in TERMINAL_TYPES
                                                   for is_type in self._is_message)
        self._provisional: list[_Failure] = []

    def route_tools(self, event_type: str, claims: bool | UnsetType) -> tuple[str, ...]:
        return (self._config.tool,) if event_type == "tool.call" else ()

    def route(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType) -> Route:
        handlers: list[Observer] = []
        # a retry has the failed call's tool, which `tool` matches
        if event_type == "tool.call" and self._retries and tool is not UNSET and self._is_tool(tool):
            handlers.append(self._call)
        if event_type in TERMINAL_TYPES:
            if self._runs_handle:
                handlers.append(self._run_event)
        elif self._messages and any(is_type(event_type) for is_type in self._is_message):
            handlers.append(self._message)
        return tuple(handlers) or None

    def read_results(self, calls: Calls) -> None:
        # (a retry's result too; without `retry_succeeds`, only failures matter: windows close as
        # other events come, in the same order)
        calls.read_results(self._result, [self._config.tool], orphans=True,
                           failed=None if self._config.retry_succeeds else True)

    def _result(self, event: Event, index: int, call: PairedCall | None) -> None:
        if self._open and self._open[0].deadline < index:
            self._expire(index)
        if call is not None and call.position in self._awaited:
            for failure in self._awaited.pop(call.position):
                failure.retries -= 1
                if event.ok is not False:
                    failure.handled = True
                elif failure.retries == 0 and failure.deadline < index and not failure.handled \
                        and not failure.provisional:
                    self._unhandled(failure)   # its window closed, and its last retry failed
        if event.ok is not False:
            return
        tool, call_id = (event.tool, event.call_id) if call is None else (call.tool, call.call_id)
        self.checked += 1
        failure = _Failure(event, index, tool, call_id, self._window)
        self._open.append(failure)
        self._by_tool.setdefault(tool, []).append(failure)
        if call_id is not UNSET and self._config.message_refs_call:   # (only messages naming a call look it up)
            self._by_call.setdefault(call_id, []).append(failure)

    def _call(self, event: Event, index: int) -> None:
        if self._open and self._open[0].deadline < index:
            self._expire(index)
        failures = self._by_tool.get(event.tool)
        if not failures:
            return
        for failure in failures:
            if failure.handled:
                continue
            if not self._config.retry_succeeds:
                failure.handled = True
            elif event.call_id is not UNSET:   # a retry without a call_id never gets a result
                failure.retries += 1
                self._awaited.setdefault(index, []).append(failure)
        if not self._config.retry_succeeds:
            del self._by_tool[event.tool]

    def _message(self, event: Event, index: int) -> None:
        self._expire(index)
        # (a failed result whose type is a message type is not in its own window)
        if not self._config.message_refs_call:
            if self._open and self._open[-1].index == index:
                for failure in self._open:
                    failure.handled = failure.handled or failure.index < index
                return
            for failure in self._open:   # every open failure is handled, and needs nothing more
                failure.handled = True
            self._open.clear()
            self._by_tool.clear()
            self._by_call.clear()
        elif event.call_id is not UNSET:
            for failure in self._by_call.get(event.call_id, ()):
                failure.handled = failure.handled or failure.index < index

    def _run_event(self, event: Event, index: int) -> None:
        """A run.completed or run.failed: the one before it was not the terminal, so what it
        handled is handled; this one handles, if it is a message, only should another come."""
        for failure in self._provisional:
            failure.provisional = False
            failure.handled = True
        self._provisional.clear()
        if not any(is_type(event.type) for is_type in self._is_message):
            return
        self._expire(index)
        if self._config.message_refs_call:
            failures: Any = () if event.call_id is UNSET else self._by_call.get(event.call_id, ())
        else:
            failures = self._open
        for failure in failures:
            if not failure.handled and not failure.provisional:
                failure.provisional = True
                self._provisional.append(failure)

    def _expire(self, index: int) -> None:
        """Close the windows that ended before this position."""
        opened = self._open
        while opened and opened[0].deadline < index:
            failure = opened.popleft()
            _forget(self._by_tool, failure.tool, failure)
            if failure.call_id is not UNSET:
                _forget(self._by_call, failure.call_id, failure)
            failure.closed = True
            if not failure.handled and failure.retries == 0 and not failure.provisional:
                self._unhandled(failure)

    def _unhandled(self, failure: _Failure, *, cut: bool = False) -> None:
        """A violation at the failure; `cut`: the trace ended before its window did, or before a
        retry's result came (a liveness part: more events may yet handle it)."""
        if not self.note_violation(liveness=cut, at=failure.index):
            return
        config = self._config
        evidence: dict[str, Any] = {"tool": failure.tool, "within_events": config.within_events, "by": config.by}
        if failure.call_id is not UNSET:
            evidence["call_id"] = failure.call_id
        retry = "successful retry" if config.retry_succeeds else "retry"   # (a retry that failed handled nothing)
        handlers = {"retry": f"no {retry}", "message": "no message", "any": f"no {retry} or message"}[config.by]
        self.keep(f"The failed call {failure.tool} (result at seq {js_number(failure.seq)}) was not handled: "
                  f"{handlers} within {config.within_events} event{'' if config.within_events == 1 else 's'}.",
                  evidence_value(evidence), failure.seq, failure.index)

    def is_liveness(self, violation: Violation) -> bool:
        return id(violation) in self.liveness_kept

    def finish(self, summary: TraceSummary) -> RuleResult:
        self._expire(summary.events)   # the windows that closed by the last event
        for failure in self._provisional:   # the latest run event is the terminal: it handled nothing
            failure.provisional = False       # (a trace cut short may yet show it was not: liveness)
            if failure.closed and not failure.handled and failure.retries == 0:
                self._unhandled(failure, cut=True)
        self._provisional.clear()
        for failure in self._open:         # the trace ended inside these windows
            if not failure.handled and failure.retries == 0:
                self._unhandled(failure, cut=True)
        self._open.clear()
        for failures in self._awaited.values():       # retries whose result never came
            for failure in failures:
                failure.retries -= 1
                if failure.retries == 0 and not failure.handled:
                    self._unhandled(failure, cut=True)
        self._awaited.clear()
        result = self.result()
        if self.checked == 0:
            result.vacuous = True
        return result


def _forget(index: dict[Any, list[_Failure]], key: Any, failure: _Failure) -> None:
    """Take a failure whose window closed out of an index of open failures (it is the oldest)."""
    found = index.get(key)
    if found is not None and found and found[0] is failure:
        del found[0]
        if not found:
            del index[key]
