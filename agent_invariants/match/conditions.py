"""Conditions: `when` of output_match, required_when and forbidden_when (spec v2 §2, §10 point 14).

A condition is judged once, when the trace has ended, over the whole trace, and is true, false or
*unresolved* (three-valued: unresolved is never false):

- `{"path": p, "equals": v}`: the final output's value at `p` equals `v` (JSON equality);
- `{"path": p, "non_empty": true}`: the value at `p` is an array with an element (a value that
  is not an array is unresolved);
- `{"path": p, "matches": node}`: the value at `p` matches a match tree, whose `$from_result`
  references read the results before the terminal event, as in output rules (spec v2 §2: the
  subject is the terminal event); a mismatch is false, a reference that finds nothing (or too
  much, for a comparison) with no mismatch beside it is unresolved. `$arg` and `$from_output`
  are load errors here (§10 point 12);
- `{"outcome": {"outcome_id": glob, "verdict": v}}`: the last `outcome.observed` whose
  `outcome_id` matches has that verdict (one without a verdict: false; none at all: unresolved);
- `{"any_of": [2..20 conditions]}`, `{"all_of": [...]}`: Kleene's logic: a true operand makes
  `any_of` true and a false one makes `all_of` false, even beside unresolved ones.

Paths read the final output (the `output` of the last `run.completed` or `run.failed`): with no
output, or nothing at the path, the condition is unresolved.

    when = compile_condition({"path": "refunds", "non_empty": True}, "when")
    state = Observed(when)                   # fed every outcome.observed through `observe`
    state.holds(final_output, terminal)      # True, False or None (unresolved)

A rule whose condition holds references gives `Observed` the check's pairing (`read_results`,
and `pairs_calls` on the rule) and, when a reference counts calls, the calls of its tools
(`call_globs`, `call_handlers`), as it does for its own match tree.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from msgspec import UNSET, UnsetType

from agent_invariants.errors import closest, did_you_mean
from agent_invariants.events import VERDICTS, Event
from agent_invariants.globs import compile_glob
from agent_invariants.jsonpos import member
from agent_invariants.match.equality import json_equal
from agent_invariants.match.paths import NOT_FOUND, find, parse_path
from agent_invariants.match.quick import quick
from agent_invariants.match.references import Memory
from agent_invariants.match.tree import MatchError, compile_tree, evaluate, no_references
from agent_invariants.pairing import Calls
from agent_invariants.rules.fields import GLOB_LIMIT, FieldProblem, check_text

__all__ = ("Condition", "Observed", "compile_condition", "reads_output")

MAX_BRANCHES = 20
_FROM_RESULT = frozenset({"$from_result"})
_FORMS = ("path", "outcome", "any_of", "all_of")
_PATH_TESTS = ("equals", "non_empty", "matches")


class Condition(NamedTuple):
    """A compiled condition: its form, what it needs, and the condition as written."""

    form: str                   # equals, non_empty, matches, outcome, any_of, all_of
    operand: Any                # (path, value), (path,), (path, test, tree), (glob, verdict), [conditions]
    written: Any


def compile_condition(value: Any, path: str) -> Condition:
    """A condition as the contract writes it, checked; a mistake is a MatchError at its JSON path."""
    if not isinstance(value, dict):
        raise MatchError(path, "a condition is an object: {path, equals}, {path, non_empty}, {path, matches}, "
                               "{outcome}, {any_of} or {all_of}")
    forms = [key for key in _FORMS if key in value]
    if len(forms) != 1:
        if not forms:   # a misspelt form (`pth`, `outcom`, `any`) is named, with what it may mean
            meant = next(((key, guess) for key in value if (guess := closest(key, _FORMS)) is not None), None)
            if meant is not None:
                raise MatchError(member(path, meant[0]), f"unknown key in a condition{did_you_mean(meant[1])}")
        what = "has none of" if not forms else "mixes"
        raise MatchError(path, f"a condition {what} path, outcome, any_of, all_of")
    form = forms[0]
    known = _PATH_TESTS + ("path",) if form == "path" else (form,)
    extra = [key for key in value if key not in known]
    if extra:
        hint = did_you_mean(closest(extra[0], known)) or f" (allowed: {', '.join(known)})"
        raise MatchError(member(path, extra[0]), f"unknown key in a {form} condition{hint}")
    if form in ("any_of", "all_of"):
        _only(value, (form,), path)
        branches = value[form]
        if not isinstance(branches, list) or not 2 <= len(branches) <= MAX_BRANCHES:
            raise MatchError(f"{path}.{form}", f"expected a list of 2..{MAX_BRANCHES} conditions")
        return Condition(form, [compile_condition(branch, f"{path}.{form}[{at}]")
                                for at, branch in enumerate(branches)], value)
    if form == "outcome":
        _only(value, ("outcome",), path)
        return Condition("outcome", _outcome(value["outcome"], f"{path}.outcome"), value)
    tests = [key for key in _PATH_TESTS if key in value]
    if len(tests) != 1:
        raise MatchError(path, "a path condition needs exactly one of equals, non_empty, matches")
    test = tests[0]
    _only(value, ("path", test), path)
    segments = _path(value["path"], f"{path}.path")
    if test == "equals":
        return Condition("equals", (segments, value["equals"]), value)
    if test == "non_empty":
        if value["non_empty"] is not True:
            raise MatchError(f"{path}.non_empty", "expected true")
        return Condition("non_empty", (segments,), value)
    tree = compile_tree(value["matches"], f"{path}.matches", allowed=_FROM_RESULT)
    return Condition("matches", (segments, quick(tree), tree), value)


def _only(value: dict[str, Any], keys: tuple[str, ...], path: str) -> None:
    extra = [key for key in value if key not in keys]
    if extra:
        raise MatchError(member(path, extra[0]), f"unknown key in a {keys[0]} condition (allowed: {', '.join(keys)})")


def _path(text: Any, where: str) -> tuple[str, ...]:
    if not isinstance(text, str):
        raise MatchError(where, "expected a path (a string)")
    try:
        return parse_path(text)
    except ValueError as exc:
        raise MatchError(where, str(exc)) from None


def _outcome(value: Any, path: str) -> tuple[Any, str]:
    if not isinstance(value, dict):
        raise MatchError(path, "expected an object {outcome_id, verdict}")
    extra = [key for key in value if key not in ("outcome_id", "verdict")]
    if extra:
        hint = did_you_mean(closest(extra[0], ("outcome_id", "verdict"))) or " (allowed: outcome_id, verdict)"
        raise MatchError(member(path, extra[0]), f"unknown key{hint}")
    glob, verdict = value.get("outcome_id"), value.get("verdict")
    if not isinstance(glob, str):
        raise MatchError(f"{path}.outcome_id", "expected a glob on outcome ids (a non-empty string)")
    try:
        glob = check_text(glob, "outcome_id", GLOB_LIMIT)   # trimmed, as every glob is
    except FieldProblem as exc:
        raise MatchError(f"{path}.outcome_id", exc.problem) from None
    if verdict not in VERDICTS:
        raise MatchError(f"{path}.verdict", f"expected one of {', '.join(VERDICTS)}")
    return compile_glob(glob), verdict


def reads_output(condition: Condition) -> bool:
    """Whether the condition reads the final output (a path), anywhere in it."""
    if condition.form in ("any_of", "all_of"):
        return any(reads_output(branch) for branch in condition.operand)
    return condition.form != "outcome"


class Observed:
    """What a condition needs of the trace besides the output: for each `outcome` in it, the
    verdict of the last matching `outcome.observed` (UNSET: one without a verdict); for each
    `matches` with references, the results they may read (a `Memory`)."""

    __slots__ = ("_last", "_memories", "_outcomes", "condition")

    def __init__(self, condition: Condition) -> None:
        self.condition = condition
        self._outcomes = list(_nodes(condition, "outcome"))
        self._last: dict[int, Any] = {}   # id of an outcome node -> the last matching verdict
        self._memories = {id(node): memory for node in _nodes(condition, "matches")
                          if (memory := Memory(node.operand[2]))}   # id of a matches node -> its memory

    @property
    def reads_results(self) -> bool:
        """Whether a reference of the condition reads results (the rule then `pairs_calls`)."""
        return bool(self._memories)

    def read_results(self, calls: Calls) -> None:
        """Ask the check's pairing for the results the condition's references read."""
        for memory in self._memories.values():
            memory.read_results(calls)

    @property
    def call_globs(self) -> tuple[str, ...]:
        """The globs of the tools whose calls the references count (`call_index`), for `route_tools`."""
        return tuple(glob for memory in self._memories.values() for glob in memory.call_globs)

    def call_handlers(self, tool: str | UnsetType) -> tuple[Callable[[Event, int], None], ...]:
        """The handlers of a `tool.call` of this tool: a reference that counts calls sees it."""
        found = (memory.route_call(tool) for memory in self._memories.values())
        return tuple(handler for handler in found if handler is not None)

    def route(self, event_type: str) -> Callable[[Event, int], None] | None:
        """The handler a rule routes events of this type to for its condition, or None: only
        `outcome.observed`, and only when the condition reads outcomes."""
        return self.observe if event_type == "outcome.observed" and self._outcomes else None

    def observe(self, event: Event, index: int) -> None:
        """An `outcome.observed` event."""
        if event.outcome_id is UNSET:
            return
        for node in self._outcomes:
            if node.operand[0](event.outcome_id):
                self._last[id(node)] = event.verdict

    def holds(self, output: Any, terminal: int = -1) -> bool | None:
        """The condition at the end of the trace (`terminal`: the terminal event's index, which
        references read the results before): True, False, or None (unresolved)."""
        return self._holds(self.condition, output, terminal)

    def _holds(self, condition: Condition, output: Any, terminal: int) -> bool | None:
        form, operand = condition.form, condition.operand
        if form == "any_of":
            values = [self._holds(branch, output, terminal) for branch in operand]
            return True if True in values else None if None in values else False
        if form == "all_of":
            values = [self._holds(branch, output, terminal) for branch in operand]
            return False if False in values else None if None in values else True
        if form == "outcome":
            if id(condition) not in self._last:
                return None
            return bool(self._last[id(condition)] == operand[1])
        value = NOT_FOUND if output is NOT_FOUND else find(output, operand[0])
        if value is NOT_FOUND:
            return None
        if form == "equals":
            return json_equal(value, operand[1])
        if form == "non_empty":
            return bool(value) if isinstance(value, list) else None
        memory = self._memories.get(id(condition))
        if memory is None:
            return bool(operand[1](value, no_references))
        resolve = memory.resolver(NOT_FOUND, terminal, output)   # an output comes with a terminal event
        if operand[1](value, resolve):
            return True
        outcome = evaluate(operand[2], value, resolve)   # why not: a mismatch, or only unresolved references
        return False if outcome.mismatches else None if outcome.unresolved else True


def _nodes(condition: Condition, form: str) -> list[Condition]:
    """The conditions of this form in `condition`, nested ones included."""
    if condition.form in ("any_of", "all_of"):
        return [node for branch in condition.operand for node in _nodes(branch, form)]
    return [condition] if condition.form == form else []
