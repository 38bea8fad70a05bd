"""tool_order (contract version 2): the tool calls follow a plan, in one of four senses."""
from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Annotated, Any, ClassVar, Literal

from msgspec import UNSET, Meta, UnsetType

from agent_invariants._js import js_number
from agent_invariants.events import Event
from agent_invariants.globs import compile_glob
from agent_invariants.match.canonical import evidence_value
from agent_invariants.report import RuleResult, TraceSummary
from agent_invariants.rules.base import Route, Rule, RuleConfig, tool_name
from agent_invariants.rules.fields import Glob

__all__ = ("ToolOrder", "ToolOrderConfig")

Mode = Literal["subsequence", "exact", "contiguous", "any_order"]

_NONE: frozenset[int] = frozenset()

_SIGNATURES = 65_536
"""The most tools whose matching patterns are remembered at once (a trace may name a new tool on
every call); the memo is emptied when full."""


class ToolOrderConfig(RuleConfig, frozen=True, kw_only=True, tag="tool_order"):
    """Options of a tool_order rule."""

    since_version: ClassVar[int] = 2

    tools: Annotated[list[Glob], Meta(min_length=1, max_length=100)]
    """The plan: 1..100 globs on the calls' tools, in order."""
    mode: Mode = "subsequence"
    """How the calls must follow the plan: `subsequence` (default), `exact`, `contiguous` or `any_order`."""


_Seq = int | float


_HANDLERS = {"subsequence": "_subsequence", "exact": "_exact", "contiguous": "_contiguous", "any_order": "_any_order"}
"""The handler of the calls in each mode."""

class ToolOrder(Rule):
    """Fails when the tool calls do not follow the plan `tools`.

    ## What it checks
    The calls are every `tool.call` of the trace, in order (a call without a `tool` matches no
    pattern). `mode` says what following the plan means:

    - `subsequence` (default): the patterns match calls in order, with any calls between them
      (matched leftmost first, which finds a match whenever there is one);
    - `exact`: as many calls as patterns, the k-th call matching the k-th pattern;
    - `contiguous`: some run of consecutive calls matches the patterns one by one;
    - `any_order`: each pattern matches a call of its own, in any order; other calls may come
      too. The pairing is a maximum bipartite matching, never first-come: with `["a*", "ab"]`
      and calls `ab`, `ac`, pairing `a*` with the first call would leave `ab` unmatched, yet the
      plan is followed (`a*` with `ac`, `ab` with `ab`).

    There is at most one violation. In `exact` mode it is `tool_order.deviation`, at the first
    call that does not match its pattern or comes beyond the patterns (no event when the calls
    run out first). In the other modes it is `tool_order.missing`, with no event. Evidence:
    `{mode, tools, matched: [{pattern, seq}], missing, first_deviation_seq}`: `matched` is the
    largest partial match found (the matched prefix of the plan for `subsequence`, `exact` and
    `contiguous`, the longest consecutive run for the last; a maximum matching for `any_order`),
    `missing` the patterns left over. `checked` counts the calls; the rule is never vacuous: a
    trace without calls misses the whole plan.

    ## Why it matters
    Plans are how agents are told to work safely: authenticate, then look up, then act; search,
    then fetch, then answer. A model change that skips the lookup still produces a fluent answer.

    ## Failing trace
    With `{"id": "flow", "kind": "tool_order", "tools": ["auth.*", "get", "refund"]}`:
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "auth.login"}
    {"seq": 2, "type": "tool.call", "tool": "refund"}
    {"seq": 3, "type": "tool.call", "tool": "get"}
    ```
    Violation `tool_order.missing`: matched `auth.*` at seq 1 and `get` at seq 3; `refund` is missing.

    ## Passing trace
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "auth.login"}
    {"seq": 2, "type": "tool.call", "tool": "get"}
    {"seq": 3, "type": "tool.call", "tool": "notify"}
    {"seq": 4, "type": "tool.call", "tool": "refund"}
    ```

    ## Options
    - `tools` (1..100 globs, required): the plan.
    - `mode` (`subsequence`, `exact`, `contiguous` or `any_order`; default `subsequence`).

    ## Known limits
    Only calls count: results, failures and retries do not (a failed `get` still matches `get`;
    pair this rule with `precedence` on `tool.result ... ok: true` when success matters). What is
    kept: `subsequence` and `exact` keep the matched pairs; `contiguous` the last `len(tools)`
    calls; `any_order` the first `len(tools)` calls each pattern matches (enough for a maximum
    matching), so at most 10,000 calls whatever the trace's length.
    """

    kind: ClassVar[str] = "tool_order"
    routes_change: ClassVar[bool] = True   # its handlers narrow what it wants
    config_type: ClassVar[type[RuleConfig]] = ToolOrderConfig
    tags: ClassVar[tuple[str, ...]] = ("tools", "order")
    reason: ClassVar[str] = "missing"
    liveness_reasons: ClassVar[frozenset[str]] = frozenset({"missing", "deviation"})
    checked_nothing_is_normal = True   # no calls is a violation of its own

    def __init__(self, config: ToolOrderConfig) -> None:
        super().__init__(config)
        self._config = config
        self._tools = tuple(config.tools)
        self._globs: tuple[Callable[[str], Any], ...] = tuple(compile_glob(glob) for glob in self._tools)
        self._signatures: dict[str, frozenset[int]] = {}
        self._shared: dict[frozenset[int], frozenset[int]] = {}   # each signature once, however many tools have it
        self._matched: list[tuple[int, _Seq]] = []          # (pattern, seq), the largest partial match so far
        self._deviation: tuple[_Seq, int, str | UnsetType] | None = None   # exact: (seq, index, tool)
        self._done = False                                   # the verdict is known: later calls change nothing
        self._calls = 0                                      # calls seen so far (exact, any_order)
        self._handler = _HANDLERS[config.mode]   # (a name: a bound method kept here would be a reference cycle)
        size = len(self._tools)
        self._recent: deque[_Seq] = deque(maxlen=size)       # contiguous: the last calls' seqs
        self._runs: list[int] = []                           # contiguous: lengths of the runs still growing
        self._candidates: list[list[tuple[int, _Seq]]] = [[] for _ in self._tools]   # any_order

    def route_tools(self, event_type: str, claims: bool | UnsetType) -> tuple[str, ...]:
        return ()   # every call is seen, whatever its tool

    def route(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType) -> Route:
        return getattr(self, self._handler) if event_type == "tool.call" and not self._done else None

    def _signature(self, tool: str | UnsetType) -> frozenset[int]:
        """The positions of the patterns this tool matches (a set: `contiguous` asks of each run)."""
        if tool is UNSET:
            return _NONE
        found = self._signatures.get(tool)
        if found is None:
            if len(self._signatures) >= _SIGNATURES:
                self._signatures.clear()
                self._shared.clear()
            found = frozenset(k for k, glob in enumerate(self._globs) if glob(tool))
            found = self._signatures[tool] = self._shared.setdefault(found, found)
        return found

    # A handler returns True once the verdict is known: the engine then routes it no more calls
    # (`checked` is the trace's count of calls, from the summary).
    def _subsequence(self, event: Event, index: int) -> Literal[True] | None:
        position = len(self._matched)
        if event.tool is not UNSET and self._globs[position](event.tool):
            self._matched.append((position, event.seq))
            if position + 1 == len(self._globs):
                self._done = True
                return True
        return None

    def _exact(self, event: Event, index: int) -> Literal[True] | None:
        position = self._calls
        self._calls += 1
        if position < len(self._globs) and event.tool is not UNSET and self._globs[position](event.tool):
            self._matched.append((position, event.seq))
            return None
        self._deviation = (event.seq, index, event.tool)
        self._done = True
        return True

    def _contiguous(self, event: Event, index: int) -> Literal[True] | None:
        self._recent.append(event.seq)
        matches = self._signature(event.tool)
        grown = [length + 1 for length in (0, *self._runs) if length in matches]
        self._runs = grown
        if grown and grown[-1] > len(self._matched):   # the longest run so far: remember its calls
            longest = grown[-1]
            seqs = list(self._recent)[-longest:]
            self._matched = list(enumerate(seqs))
            if longest == len(self._globs):
                self._done = True
                return True
        return None

    def _any_order(self, event: Event, index: int) -> Literal[True] | None:
        number = self._calls
        self._calls += 1
        size = len(self._globs)
        candidates = self._candidates
        for pattern in sorted(self._signature(event.tool)):
            kept = candidates[pattern]
            if len(kept) < size:   # the first `size` calls a pattern matches are enough (see _maximum_matching)
                kept.append((number, event.seq))
                if len(kept) == size and all(len(kept) == size for kept in candidates):
                    self._done = True   # every pattern has all the calls it could need
                    return True
        return None

    def finish(self, summary: TraceSummary) -> RuleResult:
        self.checked = summary.tool_calls
        if self._config.mode == "any_order":
            self._matched = self._maximum_matching()
        matched = dict(self._matched)
        missing = [glob for position, glob in enumerate(self._tools) if position not in matched]
        if self._config.mode == "exact":
            if (missing or self._deviation is not None) and self.note_violation():
                self._report_deviation(missing)
        elif missing and self.note_violation():
            self.keep(f"The tool calls do not follow the plan {_plan(self._tools)} ({self._config.mode}): "
                      f"{_listed(missing)} {'is' if len(missing) == 1 else 'are'} missing.", self._evidence(missing))
        return self.result()

    def _report_deviation(self, missing: list[str]) -> None:
        position = len(self._matched)
        if self._deviation is None:
            self.keep(f"The tool calls ran out after {position} of the {len(self._tools)} calls of the plan "
                      f"{_plan(self._tools)} (exact): {_listed(missing)} never came.", self._evidence(missing),
                      reason="deviation")
            return
        seq, index, tool = self._deviation
        if position < len(self._tools):
            why = f"the plan expects {self._tools[position]} there"
        else:
            why = f"the plan has only {len(self._tools)} calls"
        self.keep(f"Call {tool_name(tool)} at seq {js_number(seq)} (call {position + 1}) deviates from the plan "
                  f"{_plan(self._tools)} (exact): {why}.", self._evidence(missing, seq), seq, index,
                  reason="deviation")

    def _evidence(self, missing: list[str], deviation: _Seq | None = None) -> dict[str, Any]:
        evidence: dict[str, Any] = {
            "mode": self._config.mode, "tools": list(self._tools),
            "matched": [{"pattern": self._tools[position], "seq": seq} for position, seq in sorted(self._matched)],
            "missing": missing}
        if deviation is not None:
            evidence["first_deviation_seq"] = deviation
        return dict(evidence_value(evidence))

    def _maximum_matching(self) -> list[tuple[int, _Seq]]:
        """A maximum matching of patterns to distinct calls, as (pattern, seq) in pattern order.

        Augmenting paths (Kuhn's algorithm), patterns in order, each trying its calls in trace
        order. Keeping only the first `len(tools)` calls per pattern loses nothing: if a maximum
        matching gives pattern p a later call, at most len(tools) - 1 of p's first len(tools) calls
        are taken by other patterns, so one is free to take instead.
        """
        owner: dict[int, int] = {}      # call number -> the pattern it is matched to
        seqs = {number: seq for kept in self._candidates for number, seq in kept}
        for pattern in range(len(self._tools)):
            _augment(self._candidates, owner, pattern, set())
        return sorted((pattern, seqs[number]) for number, pattern in owner.items())


def _augment(candidates: list[list[tuple[int, _Seq]]], owner: dict[int, int], pattern: int, seen: set[int]) -> bool:
    """Match `pattern` to a call, taking one from another pattern that can move (an augmenting
    path). (A module function: a nested one that calls itself is a reference cycle, which kept
    the rule until the collector's next full pass.)"""
    for number, _ in candidates[pattern]:
        if number in seen:
            continue
        seen.add(number)
        if number not in owner or _augment(candidates, owner, owner[number], seen):
            owner[number] = pattern
            return True
    return False


def _plan(tools: tuple[str, ...]) -> str:
    return "[" + ", ".join(tools) + "]"


def _listed(patterns: list[str]) -> str:
    return ", ".join(patterns)
