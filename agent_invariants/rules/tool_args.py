"""tool_args (contract version 2): what a tool's arguments must be."""
from __future__ import annotations

import weakref
from typing import Annotated, Any, ClassVar, Literal, NamedTuple

from msgspec import UNSET, Meta, UnsetType

from agent_invariants._js import js_number
from agent_invariants.events import Event
from agent_invariants.globs import compile_glob
from agent_invariants.match.canonical import canonical_key, evidence_value, held_key
from agent_invariants.match.explained import MAX_LISTED, findings
from agent_invariants.match.paths import NOT_FOUND, find, parse_path, pointer
from agent_invariants.match.quick import quick
from agent_invariants.match.references import NO_OUTPUT, Memory
from agent_invariants.match.schema import ArgsSchema
from agent_invariants.match.tree import (
    REFERENCES,
    MatchError,
    Node,
    Outcome,
    Resolve,
    compile_tree,
    evaluate,
    no_references,
    references_in,
)
from agent_invariants.pairing import Calls
from agent_invariants.payloads import decoded
from agent_invariants.report import RuleResult, TraceSummary, Violation
from agent_invariants.rules.base import Observer, Route, Rule, RuleConfig
from agent_invariants.rules.fields import FieldProblem, Glob

__all__ = ("ToolArgs", "ToolArgsConfig")

_TERMINAL = ("run.completed", "run.failed")


class ToolArgsConfig(RuleConfig, frozen=True, kw_only=True, tag="tool_args", weakref=True):
    """Options of a tool_args rule."""

    since_version: ClassVar[int] = 2

    tool: Glob = "*"
    """The calls checked: a glob on the call's tool (default `*`)."""
    call_index: Annotated[int, Meta(ge=0, le=1_000_000)] | UnsetType = UNSET
    """Check only the k-th call (0-based) of those the glob matches; it must exist."""
    match: Any | UnsetType = UNSET
    """A match tree the args must match (see `explain match`); references allowed."""
    mode: Literal["subset", "exact"] | UnsetType = UNSET
    """`subset` (default): the args may hold keys the tree does not name; `exact`: they may not,
    at any level."""
    ignore: Annotated[list[Annotated[str, Meta(min_length=1)]], Meta(max_length=100)] | UnsetType = UNSET
    """With `mode: exact`: top-level keys of the args that may be there unnamed."""
    schema: dict[str, Any] | bool | UnsetType = UNSET
    """A JSON Schema (2020-12) the args must satisfy; local `$ref` only. Needs the jsonschema extra."""
    distinct: Annotated[list[str], Meta(min_length=1, max_length=20)] | UnsetType = UNSET
    """Paths into the args whose values, together, must differ from every earlier matching call's."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.match is UNSET and self.schema is UNSET and self.distinct is UNSET:
            raise FieldProblem("match", "a tool_args rule needs at least one of match, schema, distinct")
        if self.distinct is not UNSET and self.call_index is not UNSET:
            raise FieldProblem("distinct", "distinct cannot be combined with call_index (one call is always distinct)")
        if self.ignore is not UNSET and self.mode != "exact":
            raise FieldProblem("ignore", 'ignore is only for mode "exact"')
        _remember(self, _compile(self))   # checked here, kept for the rule of each check


class _Compiled(NamedTuple):
    tree: Node | None
    distinct: list[tuple[str, ...]]
    schema: ArgsSchema | None


_COMPILED: dict[int, _Compiled] = {}
"""Each living config's compiled form, by id: a check of many traces makes a rule per trace, and a
schema takes long to check and try. An entry goes with its config (a long-lived process, the MCP
server, loads a contract per call: entries that outlived their contracts grew it by megabytes a
call, for compiled patterns), so it holds no more than the contracts alive hold."""


def _remember(config: ToolArgsConfig, compiled: _Compiled) -> None:
    key = id(config)
    _COMPILED[key] = compiled
    weakref.finalize(config, _COMPILED.pop, key, None)   # before the id can be reused


def _compiled(config: ToolArgsConfig) -> _Compiled:
    """The compiled form of a loaded config, compiled once."""
    found = _COMPILED.get(id(config))
    if found is None:   # (every config is compiled as it is made: a copy made without that)
        found = _compile(config)
        _remember(config, found)
    return found


def _compile(config: ToolArgsConfig) -> _Compiled:
    """The rule's trees, paths and schema, compiled; a mistake is a FieldProblem at its path."""
    try:
        tree = None if config.match is UNSET else compile_tree(config.match, "match", allowed=REFERENCES)
    except MatchError as exc:
        raise FieldProblem(exc.path, exc.problem) from None
    paths = []
    for position, text in enumerate([] if config.distinct is UNSET else config.distinct):
        try:
            paths.append(parse_path(text))
        except ValueError as exc:
            raise FieldProblem(f"distinct[{position}]", str(exc)) from None
    schema = None if config.schema is UNSET else ArgsSchema(config.schema, "schema")
    return _Compiled(tree, paths, schema)


class _Call(NamedTuple):
    """What is checked of one call (kept until the end by rules that read the final output)."""

    seq: int | float
    position: int                        # the event's index in the trace
    tool: str
    call_id: str | UnsetType
    number: int
    args: Any


class ToolArgs(Rule):
    """Fails when a tool is called with arguments the contract does not allow.

    ## What it checks
    Every `tool.call` whose `tool` matches `tool` (only the `call_index`-th of them, when given) is
    checked against `match` (a match tree: see `explain match`), `schema` (JSON Schema 2020-12)
    and `distinct`. Each call gets at most one violation per code, at the call:

    - `tool_args.args_missing` (unresolved): the call has no `args`; nothing else is checked;
    - `tool_args.mismatch`: up to 20 `{pointer, expected, actual}` in `mismatches` (`expected` is the
      node as written, or `{"any_of": [...]}` for a reference; an unexpected key under `exact` is
      expected `{"$exists": false}`; the message adds what references inside an operator object
      resolved to: `expected {"$lte":{"$from_result":…}} where $lte is 49.9, got 59.9`, and inside
      `$any_of` each failed branch's, by its place: `where $any_of[0].$lte is 49.9`; the first 20,
      then how many more);
    - `tool_args.reference_unresolved` (unresolved): a reference found no candidate
      (`no_candidates`), or several distinct ones where a comparison needs one (`ambiguous`);
    - `tool_args.schema`: up to 20 `{pointer, message}` in `errors` (a schema whose references a
      value makes it follow more than 1,000 times and 100 per node of the value is not applied to
      that value, and says so, as does one that cannot be applied at all);
    - `tool_args.not_distinct`: the values at the `distinct` paths equal an earlier call's;
      `related_seqs` names the first call with them;
    - `tool_args.distinct_missing` (unresolved): the args lack a `distinct` path;
    - `tool_args.call_missing`: with `call_index`, fewer calls happened (no event; evidence
      `{call_index, calls_seen}`).

    Evidence also holds `{tool, call_id, call_index, mode}`; pointers are into the event
    (`/args/amount`), values in canonical JSON. `checked` counts the calls checked; a rule without
    `call_index` whose tool was never called passes with `vacuous: true`.

    References compare the args with what the trace saw earlier: `{"$arg": "order"}` is another
    argument of the same call, `{"$from_result": {"tool": "orders.get", "path": "paid", "where":
    {"id": {"$arg": "order"}}}}` every earlier successful `orders.get` result for this order, and
    `{"$from_output": "refund.amount"}` the run's final output (the calls are then judged at the
    end of the trace).

    ## Why it matters
    "Refunds need an approval" says nothing of the amount. Most harmful calls are the right tool
    with the wrong arguments: a refund larger than what was paid, an order id the agent never
    looked up, a search repeated with the same query, a path outside the workspace.

    ## Failing trace
    With `{"id": "refund-args", "kind": "tool_args", "tool": "refund", "match": {"order": {"$regex":
    "^A[0-9]+$"}, "amount": {"$from_result": {"tool": "get", "path": "paid", "where": {"id": {"$arg":
    "order"}}}}}}`:
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "get", "call_id": "c1", "args": {"id": "A9"}}
    {"seq": 2, "type": "tool.result", "call_id": "c1", "ok": true, "result": {"paid": 10}}
    {"seq": 3, "type": "tool.call", "tool": "refund", "call_id": "c2", "args": {"order": "A9", "amount": 12}}
    {"seq": 4, "type": "tool.call", "tool": "refund", "call_id": "c3", "args": {"order": "A7", "amount": 5}}
    ```
    Violations: seq 3, `tool_args.mismatch` at `/args/amount` (expected any of [10], got 12); seq 4,
    `tool_args.reference_unresolved` (`no_candidates`: A7 was never looked up).

    ## Passing trace
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "get", "call_id": "c1", "args": {"id": "A9"}}
    {"seq": 2, "type": "tool.result", "call_id": "c1", "ok": true, "result": {"paid": 10}}
    {"seq": 3, "type": "tool.call", "tool": "refund", "call_id": "c2", "args": {"order": "A9", "amount": 10}}
    ```

    ## Options
    - `tool` (glob, default `*`): the calls checked.
    - `call_index` (0..1000000): check only that call (0-based) among those `tool` matches; if the
      trace has fewer, `call_missing`. Not with `distinct`.
    - `match` (match tree): see `explain match` for literals, operators and references.
    - `mode` (`subset` or `exact`, default `subset`): whether the args may hold keys the tree
      does not name.
    - `ignore` (list of keys, `mode: exact` only): top-level keys allowed unnamed.
    - `schema` (JSON Schema 2020-12, local `$ref` only): needs `pip install 'agent-invariants[jsonschema]'`.
      `pattern`, `patternProperties` and `additionalProperties` search RE2 patterns, as `$regex`
      does; beside `unevaluatedProperties`, whose walk the validator makes with Python's engine, a
      `patternProperties` pattern must be plain text, maybe after `^`.
    - `distinct` (1..20 paths): together they form one key that must not repeat; `related_seqs`
      names the first call with the key.
    At least one of `match`, `schema`, `distinct` is required.

    ## Known limits
    A call's args are read from its own `args`; a trace that puts them elsewhere (say in `data`) has
    none (`args_missing`). The results `$from_result` reads are kept for the whole trace: for each
    result of a referenced tool, the value at `path` (the whole result with `where_result`) and the
    keys of the call's args that `where` names; nothing of other tools. `distinct` keeps one key per
    distinct value seen (a value longer than 256 characters by its SHA-256). Rules that read the
    final output keep each checked call's args until the end of the trace. In `schema`, the
    validator's `unevaluatedProperties` looks again at every key for each key of an object (args
    of 60,000 keys: 18 s a call); `additionalProperties`, which often says the same, costs each key
    once.
    """

    kind: ClassVar[str] = "tool_args"
    enforced: ClassVar[bool] = True   # record --enforce
    config_type: ClassVar[type[RuleConfig]] = ToolArgsConfig
    tags: ClassVar[tuple[str, ...]] = ("tools", "arguments")
    reason: ClassVar[str] = "mismatch"
    liveness_reasons: ClassVar[frozenset[str]] = frozenset({"call_missing"})

    def __init__(self, config: ToolArgsConfig) -> None:
        super().__init__(config)
        self._config = config
        compiled = _compiled(config)
        self._tree, self._distinct, self._schema = compiled
        self._is_tool = compile_glob(config.tool)
        # with call_index, a missing call is the rule's own violation (call_missing), not a notice
        self.checked_nothing_is_normal = config.call_index is not UNSET
        self._exact = config.mode == "exact"
        self._mode = "exact" if self._exact else "subset"
        self._ignore = () if config.ignore is UNSET else tuple(config.ignore)
        self._holds = None if self._tree is None else quick(self._tree, exact=self._exact, ignore=self._ignore)
        self._memory = Memory(self._tree)
        self.pairs_calls = bool(self._memory)   # results come through read_results
        self._references = self._memory.references   # (asked on every call checked: see _resolver)
        self._at_end = any(reference.name == "$from_output" for reference in references_in(self._tree))
        # a match tree alone, judged as the call comes: a call that matches needs nothing more
        self._tree_only = self._holds is not None and self._schema is None and not self._distinct \
            and not self._at_end
        self._waiting: list[_Call] = []      # calls judged at the end (rules reading the output)
        self._output: Any = NO_OUTPUT
        self._calls = 0                      # calls the glob matched so far
        self._first_with: dict[tuple[object, ...], int | float] = {}   # distinct key -> seq of its first call

    def route_tools(self, event_type: str, claims: bool | UnsetType) -> tuple[str, ...]:
        if event_type == "tool.call":
            return (self._config.tool, *self._memory.call_globs)
        return ()

    def may_deny(self, call: Event) -> bool:
        """Only a call of its `tool` can break it (the calls of the tools its references read are
        only remembered); a rule that reads the final output never denies (point 74)."""
        return not self._at_end and call.tool is not UNSET and self._is_tool(call.tool)

    def route(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType) -> Route:
        if event_type == "tool.call":
            handlers: list[Observer] = []
            if tool is not UNSET and self._is_tool(tool):
                handlers.append(self._call)
            if self._memory:
                numbered = self._memory.route_call(tool)
                if numbered is not None:
                    handlers.append(numbered)
            return tuple(handlers) or None
        if event_type in _TERMINAL and self._at_end:
            return self._terminal
        return None

    def read_results(self, calls: Calls) -> None:
        self._memory.read_results(calls)

    def _call(self, event: Event, index: int) -> None:
        number = self._calls
        self._calls += 1
        call_index = self._config.call_index
        if call_index is not UNSET and number != call_index:
            return
        self.checked += 1
        args = NOT_FOUND if event.args is UNSET else decoded(event.args)
        holds = self._holds if self._tree_only and args is not NOT_FOUND else None
        if holds is not None and holds(
                args, self._memory.resolver(args, index, NO_OUTPUT) if self._references else no_references):
            return   # the usual call: its args match, and nothing else is asked of them (`_resolver`, inlined)
        call = _Call(event.seq, index, event.tool, event.call_id, number, args)   # type: ignore[arg-type]
        if self._at_end:
            self._waiting.append(call)
        else:
            self._judge(call, NO_OUTPUT, matched=None if holds is None else False)

    def _terminal(self, event: Event, index: int) -> None:
        self._output = NO_OUTPUT if event.output is UNSET else decoded(event.output)

    def finish(self, summary: TraceSummary) -> RuleResult:
        for call in self._waiting:
            self._judge(call, self._output)
        call_index = self._config.call_index
        if call_index is not UNSET and self._calls <= call_index and self.note_violation():
            self.keep(f"Call {call_index} of {self._config.tool} never happened: the trace has {self._calls} "
                      f"such call{'' if self._calls == 1 else 's'}.",
                      evidence_value({"tool": self._config.tool, "call_index": call_index, "calls_seen": self._calls,
                                      "mode": self._mode}), reason="call_missing")
        result = self.result()
        if call_index is UNSET and self.checked == 0:
            result.vacuous = True
        return result

    def is_liveness(self, violation: Violation) -> bool:
        """`call_missing`, and every violation of a rule that reads the final output: the output
        of a trace cut short is not known yet."""
        return self._at_end or super().is_liveness(violation)

    def _judge(self, call: _Call, output: Any, matched: bool | None = None) -> None:
        """Every check of one call, its violations in the order of their codes (`matched`: the
        quick test of the tree, when it was already tried on these args)."""
        if call.args is NOT_FOUND:
            self._report(call, "args_missing", f"Call {_named(call)} has no args to check.", {}, "/args", "unresolved")
            return
        if self._tree is not None and self._holds is not None:
            resolve = self._resolver(call.args, call.position, output)
            if matched is None:
                matched = self._holds(call.args, resolve)   # the quick yes; evaluate() only to say why not
            if not matched:
                self._explain(call, evaluate(self._tree, call.args, resolve, exact=self._exact,
                                                    ignore=self._ignore))
        if self._schema is not None:
            errors = self._schema.errors(call.args, MAX_LISTED)
            if errors:
                errors = [{"pointer": "/args" + entry["pointer"], "message": entry["message"]} for entry in errors]
                self._report(call, "schema", f"Args of {_named(call)} break the schema: {errors[0]['pointer']}: "
                             f"{errors[0]['message']}.", {"errors": errors}, errors[0]["pointer"])
        if self._distinct:
            self._check_distinct(call)

    def _resolver(self, args: Any, position: int, output: Any) -> Resolve:
        """The candidates of the tree's references for the call at `position` with these args."""
        return self._memory.resolver(args, position, output) if self._references else no_references

    def _explain(self, call: _Call, outcome: Outcome) -> None:
        """The mismatch and unresolved violations of a call whose args do not match."""
        if self.keeps_no_more:   # (--max-violations reached: counted, their messages not built)
            self.note_violations(bool(outcome.mismatches) + bool(outcome.unresolved))
            return
        for found in findings(outcome, "/args"):
            if found.reason == "mismatch":
                message = f"Args of {_named(call)} do not match: {found.detail}."
            else:
                message = f"A reference in the args check of {_named(call)} is unresolved at {found.detail}."
            self._report(call, found.reason, message, {found.key: found.listed}, found.pointer, found.status)

    def _check_distinct(self, call: _Call) -> None:
        values = [find(call.args, path) for path in self._distinct]
        missing = [text for text, value in zip(self._config.distinct or (), values, strict=True) if value is NOT_FOUND]
        if missing:
            at = pointer(("args", *self._distinct[values.index(NOT_FOUND)]))
            self._report(call, "distinct_missing", f"Args of {_named(call)} lack {', '.join(missing)}, which "
                         "tell calls apart.", {"missing": missing}, at, "unresolved")
            return
        key = tuple(held_key(canonical_key(value)) for value in values)
        first = self._first_with.get(key)
        if first is None:
            self._first_with[key] = call.seq
            return
        self._report(call, "not_distinct", f"Args of {_named(call)} repeat those of the call at seq {js_number(first)} "
                     f"({', '.join(self._config.distinct or ())}).", {"key": values},
                     pointer(("args", *self._distinct[0])), related=[first])

    def _report(self, call: _Call, reason: str, message: str, extra: dict[str, Any], at: str,
                status: Literal["fail", "unresolved"] = "fail", related: list[int | float] | None = None) -> None:
        if not self.note_violation():
            return
        evidence: dict[str, Any] = {"tool": call.tool}
        if call.call_id is not UNSET:
            evidence["call_id"] = call.call_id
        evidence.update(call_index=call.number, mode=self._mode)
        evidence.update(extra)
        self.keep(message, evidence_value(evidence), call.seq, call.position, reason=reason, status=status, pointer=at,
                  related_seqs=UNSET if related is None else related, reads_output=self._at_end)


def _named(call: _Call) -> str:
    """A call as messages name it: `refund at seq 3`."""
    return f"{call.tool} at seq {js_number(call.seq)}"
