"""output_match (contract version 2): what the run's final output must say."""
from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from msgspec import UNSET, Meta, UnsetType

from agent_invariants.match.canonical import evidence_value
from agent_invariants.match.conditions import Observed, compile_condition, reads_output
from agent_invariants.match.explained import findings
from agent_invariants.match.paths import NOT_FOUND
from agent_invariants.match.quick import quick
from agent_invariants.match.references import Memory
from agent_invariants.match.tree import MatchError, compile_tree, evaluate, no_references
from agent_invariants.pairing import Calls
from agent_invariants.report import RuleResult, TraceSummary
from agent_invariants.rules.base import Route, Rule, RuleConfig
from agent_invariants.rules.fields import FieldProblem
from agent_invariants.rules.terminal import NO_OUTPUT, TERMINAL_TYPES, Terminal

__all__ = ("OutputMatch", "OutputMatchConfig", "condition_of")

_FROM_RESULT = frozenset({"$from_result"})


def condition_of(when: Any, field: str = "when") -> Any:
    """A rule's `when`, compiled; a mistake is a FieldProblem at its path (for the loader)."""
    try:
        return compile_condition(when, field)
    except MatchError as exc:
        raise FieldProblem(exc.path, exc.problem) from None


class OutputMatchConfig(RuleConfig, frozen=True, kw_only=True, tag="output_match"):
    """Options of an output_match rule."""

    since_version: ClassVar[int] = 2

    match: Any
    """A match tree the final output must match (see `explain match`); `$from_result` only."""
    mode: Literal["subset", "exact"] | UnsetType = UNSET
    """`subset` (default): objects may hold keys the tree does not name; `exact`: they may not."""
    ignore: Annotated[list[Annotated[str, Meta(min_length=1)]], Meta(max_length=100)] | UnsetType = UNSET
    """With `mode: exact`: top-level keys of the output that may be there unnamed."""
    when: Any | UnsetType = UNSET
    """A condition (see `explain output_match`): the output is checked only when it holds."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.ignore is not UNSET and self.mode != "exact":
            raise FieldProblem("ignore", 'ignore is only for mode "exact"')
        try:
            compile_tree(self.match, "match", allowed=_FROM_RESULT)
        except MatchError as exc:
            raise FieldProblem(exc.path, exc.problem) from None
        if self.when is not UNSET:
            condition_of(self.when)


class OutputMatch(Rule):
    """Fails when the run's final output does not say what the contract expects.

    ## What it checks
    The final output is the `output` of the terminal event (the last `run.completed` or
    `run.failed`). It must match `match`, a match tree (see `explain match`): literals, operators,
    and `$from_result` references to results before the terminal event, so that "the total the
    report gives is the one the ledger returned" can be said. `$arg` and `$from_output` have no
    meaning here and are load errors. At the terminal event:

    - `output_match.output_missing` (status `unresolved`): no terminal event (then no event), or
      one without `output` (`"output": null` is an output);
    - `output_match.mismatch`: up to 20 `{pointer, expected, actual}` in `mismatches`, pointers
      into the event (`/output/total`);
    - `output_match.reference_unresolved` (status `unresolved`): a reference found no candidate,
      or several where a comparison needs one.

    With `when` (a condition, below), the output is checked only when it holds: false, the rule
    passes with `checked: 0`; unresolved, one `output_match.condition_unresolved` at the terminal
    and nothing else. A condition is judged once, at the end of the trace:
    `{"path": p, "equals": v}`, `{"path": p, "non_empty": true}`, `{"path": p, "matches": node}`
    (paths into the final output; no output, or nothing at the path, is unresolved, and so is
    `non_empty` on a value that is not an array; `node` is a match tree whose `$from_result`
    references read the results before the terminal event: a mismatch makes the condition
    false, a reference left without its candidate, and no mismatch, unresolved),
    `{"outcome": {"outcome_id": glob, "verdict": v}}` (the last matching `outcome.observed`
    decides; none is unresolved), and `{"any_of":
    [...]}` / `{"all_of": [...]}` (2..20 conditions, with Kleene's logic: one true operand makes
    any_of true, one false operand makes all_of false, even beside unresolved ones).

    When an output_schema rule of the contract fails, this rule's violations name it in
    `caused_by`.

    ## Why it matters
    An agent can call every tool right and still report the wrong number: 45 refunded when the
    ledger says 40. The final report is what people read and act on; it must agree with what
    the run observed.

    ## Failing trace
    With `{"id": "true-total", "kind": "output_match", "match": {"total": {"$from_result": {"tool":
    "ledger", "path": "total"}}}}`:
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "ledger", "call_id": "l1", "args": {}}
    {"seq": 2, "type": "tool.result", "call_id": "l1", "ok": true, "result": {"total": 40}}
    {"seq": 3, "type": "run.completed", "status": "completed", "output": {"total": 45}}
    ```
    Violation at seq 3, `output_match.mismatch` at `/output/total`: expected any of [40], got 45.

    ## Passing trace
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "ledger", "call_id": "l1", "args": {}}
    {"seq": 2, "type": "tool.result", "call_id": "l1", "ok": true, "result": {"total": 40}}
    {"seq": 3, "type": "run.completed", "status": "completed", "output": {"total": 40}}
    ```

    ## Options
    - `match` (match tree, required; `$from_result` is the only reference allowed).
    - `mode` (`subset` or `exact`, default `subset`), `ignore` (top-level keys, `exact` only).
    - `when` (condition): check the output only when it holds.

    ## Known limits
    Only the last terminal event's output is read. What `$from_result` keeps is as in tool_args:
    for each result of a referenced tool, the value it reads.
    """

    kind: ClassVar[str] = "output_match"
    config_type: ClassVar[type[RuleConfig]] = OutputMatchConfig
    tags: ClassVar[tuple[str, ...]] = ("output",)
    reason: ClassVar[str] = "mismatch"
    liveness_reasons: ClassVar[frozenset[str]] = frozenset(
        {"output_missing", "mismatch", "reference_unresolved", "condition_unresolved"})

    def __init__(self, config: OutputMatchConfig) -> None:
        super().__init__(config)
        self._config = config
        self._tree = compile_tree(config.match, "match", allowed=_FROM_RESULT)
        self._exact = config.mode == "exact"
        self._ignore = () if config.ignore is UNSET else tuple(config.ignore)
        self._holds = quick(self._tree, exact=self._exact, ignore=self._ignore)
        self._memory = Memory(self._tree)
        self._when = None if config.when is UNSET else Observed(condition_of(config.when))
        self._terminal = Terminal()
        # results come through read_results, for the match tree's references and the condition's
        self.pairs_calls = bool(self._memory) or (self._when is not None and self._when.reads_results)
        # a false `when` is a pass with checked 0, not a sign that the rule guards nothing
        self.checked_nothing_is_normal = self._when is not None

    def route_tools(self, event_type: str, claims: bool | UnsetType) -> tuple[str, ...]:
        if event_type != "tool.call":
            return ()
        return (*self._memory.call_globs, *(() if self._when is None else self._when.call_globs))

    def route(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType) -> Route:
        if event_type in TERMINAL_TYPES:
            return self._terminal.seen
        if event_type == "tool.call":   # only references that count calls see them
            numbered = self._memory.route_call(tool) if self._memory else None
            handlers = (*(() if numbered is None else (numbered,)),
                        *(() if self._when is None else self._when.call_handlers(tool)))
            return handlers or None
        return None if self._when is None else self._when.route(event_type)

    def read_results(self, calls: Calls) -> None:
        if self._memory:
            self._memory.read_results(calls)
        if self._when is not None:
            self._when.read_results(calls)

    def finish(self, summary: TraceSummary) -> RuleResult:
        output = self._terminal.output()
        self.checked = 1
        if self._when is not None:
            holds = self._when.holds(output, self._terminal.index)
            if holds is False:
                self.checked = 0
                return self.result()
            if holds is None:
                self._condition_unresolved()
                return self.result()
        seq, index = self._terminal.seq, self._terminal.position
        if output is NO_OUTPUT:
            if self.note_violation():
                self.keep(f"There is no final output to check: {self._terminal.no_output()}.", {}, seq, index,
                          reason="output_missing",
                          status="unresolved", pointer=UNSET if self._terminal.event is None else "/output",
                          reads_output=True)
            return self.result()
        resolve = self._memory.resolver(NOT_FOUND, self._terminal.index, output) if self._memory else no_references
        if self._holds(output, resolve):
            return self.result()
        outcome = evaluate(self._tree, output, resolve, exact=self._exact, ignore=self._ignore)
        for found in findings(outcome, "/output"):
            if not self.note_violation():
                continue
            if found.reason == "mismatch":
                message = f"The final output does not match: {found.detail}."
            else:
                message = f"A reference in the output check is unresolved at {found.detail}."
            self.keep(message, evidence_value({found.key: found.listed}), seq, index, reason=found.reason,
                      status=found.status, pointer=found.pointer, reads_output=True)
        return self.result()

    def _condition_unresolved(self) -> None:
        if self.note_violation():
            self.keep("The rule's `when` is unresolved: what it reads is not in the trace.",
                      evidence_value({"when": self._config.when}), self._terminal.seq, self._terminal.position,
                      reason="condition_unresolved", status="unresolved",
                      reads_output=self._when is not None and reads_output(self._when.condition))
