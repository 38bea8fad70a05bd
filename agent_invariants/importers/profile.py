"""Mapping profiles and the built-in `ainv` convention: approvals, stops, outcomes and claims.

No trace format says "a human approved this" or "the agent claims it is done". Two ways tell the
importer, and nothing else does: a claim of completion or an observed outcome is never read from
text (§7).

**The convention.** A span, span event, log record, Agents SDK `custom` span or LangSmith run named
after one of our event types (`approval.granted`, `control.stop`, `outcome.observed`…) becomes
that event at the record's start. Its fields come from `ainv.<field>` attributes (OpenTelemetry),
the custom span's `data`, or the run's `extra.metadata.ainv` (keys with or without `ainv.`);
`args` and `output` may be JSON text or a value. A key that names no event field is kept on the
event as it is, as a native trace would hold it (a check warns of a misspelt one: `aproved`).

**A profile** (JSON or YAML, `--profile P`) adds rules, tried in order before the convention,
the first that matches winning:

    {"rules": [{"when": {"name": "human_review", "attributes": {"decision": "approve"}},
                "emit": {"type": "approval.granted", "approval_scope": {"$attr": "scope"},
                         "approver": {"$attr": "user.id"}}}],
     "hoist_elicitation": false}

- `when.name`: a glob on the record's name (span name, run name, JSON-RPC method);
- `when.kind`: the record's kind in its format (`gen_ai.operation.name`, `openinference.span.kind`,
  the Agents SDK's `span_data.type`, LangSmith's `run_type`);
- `when.attributes`: a match tree (see `explain match`; no references) on the record's attributes
  (OpenTelemetry attributes by their dotted names, a custom span's `data`, a run's metadata);
- `emit`: `type` and the event's fields, each a literal, `{"$attr": name}` (the attribute's value) or
  `{"$json_attr": name}` (an attribute holding JSON text, parsed). A field whose attribute is absent
  is left out; an object of one other `$` key (`{"$atr": …}`) is a mistake, not a literal.
- `hoist_elicitation` (mcp-log): move an MCP elicitation's grant to just before its call. MCP
  logs take no rules: a JSON-RPC message says what it is.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, UnsetType

from agent_invariants.contract_source import contract_error, parse, read_contract
from agent_invariants.errors import suggest
from agent_invariants.globs import compile_glob
from agent_invariants.importers.common import parse_args, parse_result
from agent_invariants.jsonpos import member
from agent_invariants.validation import Problem, explain

__all__ = ("CONVENTION_TYPES", "Candidate", "Profile", "load_profile")

CONVENTION_TYPES = frozenset({
    "approval.granted", "approval.revoked", "approval.requested", "control.stop", "outcome.observed",
    "agent.message", "agent.handoff", "run.completed", "run.failed", "policy.checked", "human.message",
})
"""Record names the convention turns into events (tool calls come from the format's own spans)."""

_FIELDS = frozenset({
    "tool", "call_id", "call_signature", "risk", "approval_id", "approval_scope", "approved", "ok", "outcome_id",
    "verdict", "evidence_class", "claims_completion", "confidence", "actor", "args", "result", "output", "status",
    "approver", "reason", "duration_ms", "data",
})
"""The event fields a convention record or a profile may set (not seq, time, run_id or type)."""

_OPERATORS = ("$attr", "$json_attr")
"""What an emitted field's value may be besides a literal: `{"$attr": name}`, `{"$json_attr": name}`."""

_SET_BY_THE_IMPORTER = frozenset({"seq", "time", "run_id", "type"})
"""The fields a convention record's own fields never set: the importer numbers, times and names
each event, and the record's name is its type."""


class When(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """Which records a profile rule maps."""

    name: Annotated[str, Meta(min_length=1, max_length=500)] | UnsetType = UNSET
    kind: Annotated[str, Meta(min_length=1, max_length=200)] | UnsetType = UNSET
    attributes: dict[str, Any] | UnsetType = UNSET


class MappingRule(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """One profile rule: records matching `when` become the event `emit` describes."""

    when: When
    emit: dict[str, Any]


class ProfileDocument(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    rules: Annotated[list[MappingRule], Meta(max_length=1000)] = []
    hoist_elicitation: bool = False


class Candidate(msgspec.Struct, frozen=True):
    """A record as profiles see it: its name, kind and attributes (flat, by name)."""

    name: str
    kind: str | None
    attributes: Mapping[str, Any]


class Profile:
    """A loaded profile: its rules compiled, ready to map records."""

    def __init__(self, document: ProfileDocument, label: str) -> None:
        from agent_invariants.match.quick import quick
        from agent_invariants.match.tree import MatchError, compile_tree

        self.label = label
        self.hoist_elicitation = document.hoist_elicitation
        self._rules: list[tuple[Any, str | None, Any, dict[str, Any]]] = []
        for index, rule in enumerate(document.rules):
            at = f"$.rules[{index}]"
            _check_emit(rule.emit, f"{at}.emit", label)
            test = None
            if rule.when.attributes is not UNSET:
                try:
                    test = quick(compile_tree(rule.when.attributes, f"{at}.when.attributes"))
                except MatchError as exc:
                    raise _EmitProblem(exc.path, exc.problem) from None   # named with its line by load_profile
            name = None if rule.when.name is UNSET else compile_glob(rule.when.name)
            self._rules.append((name, None if rule.when.kind is UNSET else rule.when.kind, test, rule.emit))

    def event_for(self, candidate: Candidate) -> dict[str, Any] | None:
        """The event the first matching rule emits for this record, else None."""
        from agent_invariants.match.tree import no_references

        for name, kind, test, emit in self._rules:
            if name is not None and not name(candidate.name):
                continue
            if kind is not None and kind != candidate.kind:
                continue
            if test is not None and not test(dict(candidate.attributes), no_references):
                continue
            return _emitted(emit, candidate.attributes)
        return None


def convention_event(candidate: Candidate, fields: Mapping[str, Any]) -> dict[str, Any] | None:
    """The event a record named after one of our event types stands for, its fields from
    `fields` (`ainv.`-prefixed or not); None for any other record."""
    if candidate.name not in CONVENTION_TYPES:
        return None
    event: dict[str, Any] = {"type": candidate.name}
    # bare keys first, so that an `ainv.` key says the last word when both are there
    for key, value in sorted(fields.items(), key=lambda item: item[0].startswith("ainv.")):
        field = key[5:] if key.startswith("ainv.") else key
        if field in _SET_BY_THE_IMPORTER:
            continue
        if field not in _FIELDS:   # kept as a native trace keeps it: a check notices a misspelt field
            event[field] = value   # (`aproved`), which --strict refuses, rather than lose it unsaid
            continue
        if value is None:
            continue
        if field == "args":
            args, raw = parse_args(value)
            if args is not None:
                event["args"] = args
            else:
                event.setdefault("data", {})["raw_args"] = raw
        elif field in ("output", "result"):
            event[field] = parse_result(value, json_text=True)[0]
        elif field == "data":
            if isinstance(value, dict):
                event["data"] = {**value, **event.get("data", {})}
        else:
            event[field] = value
    return event


def load_profile(path: str | os.PathLike[str]) -> Profile:
    """Read and check a profile file (JSON, or YAML with the yaml extra). Raises ContractError
    naming the file, the JSON path and the line."""
    source = read_contract(path, kind="profile")
    document = parse(source)
    try:
        decoded = msgspec.convert(document, ProfileDocument)
    except msgspec.ValidationError as exc:
        raise contract_error(source.label, [explain(str(exc), "$")], source) from None
    try:
        return Profile(decoded, source.label)
    except _EmitProblem as exc:
        raise contract_error(source.label, [Problem(exc.path, exc.problem)], source) from None


class _EmitProblem(Exception):
    """A mistake in a rule of a profile (its emit or its attributes' match tree), at a JSON path."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(problem)
        self.path, self.problem = path, problem


def _check_emit(emit: dict[str, Any], at: str, label: str) -> None:
    kind = emit.get("type")
    if not isinstance(kind, str) or not kind.strip():
        raise _EmitProblem(f"{at}.type", "expected the event type to emit (a string such as approval.granted)")
    for field, value in emit.items():
        if field == "type":
            continue
        if field not in _FIELDS:
            raise _EmitProblem(member(at, field), f"not an event field a profile may set; expected one of: "
                               f"{', '.join(sorted(_FIELDS))}")
        operator = _one_key(value)
        if operator in _OPERATORS:
            name = value[operator]
            if not isinstance(name, str) or not name:
                raise _EmitProblem(member(member(at, field), operator), "expected an attribute name")
        elif operator is not None and operator.startswith("$"):   # `$atr`: a literal, unmeant
            raise _EmitProblem(member(member(at, field), operator), f"unknown operator {operator!r}"
                               f"{suggest(operator, _OPERATORS)}; expected $attr or $json_attr (an object "
                               "with one `$` key is no literal here)")
        elif field == "data" and not isinstance(value, dict):
            raise _EmitProblem(f"{at}.data", "expected an object")


def _one_key(value: Any) -> str | None:
    """The key of an emitted field's value that is an object of one key (`$attr` in `{"$attr":
    "scope"}`), else None."""
    return next(iter(value)) if isinstance(value, dict) and len(value) == 1 else None


def _emitted(emit: dict[str, Any], attributes: Mapping[str, Any]) -> dict[str, Any]:
    event: dict[str, Any] = {}
    for field, value in emit.items():
        how = _one_key(value)
        if how in _OPERATORS:
            name = value[how]
            if name not in attributes:
                continue
            found = attributes[name]
            value = parse_result(found, json_text=True)[0] if how == "$json_attr" else found
        if field == "data" and not isinstance(value, dict):
            continue   # `data` is an object; an attribute holding anything else is left out
        event[field] = value
    return event
