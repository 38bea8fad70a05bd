"""Contract v1: the JSON file of rules a trace is checked against, loaded and validated.

    {"version": 1, "name": "refund-desk",
     "rules": [{"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}],
     "compare": {"max_tool_call_increase_percent": 25}}

Validation is strict, as in the reference tool: unknown keys anywhere are errors (except a
`$schema` at the root, which editors use), numbers must be in range, globs and names are trimmed
and must not end up empty, rule ids are unique. Every problem raises `ContractError` with the JSON
path of the offending value (`$.rules[2].max_attempts`). The loaded `Contract` is normalised
(trimmed strings) and `to_dict()` echoes it in the reference's key order.
"""
from __future__ import annotations

import difflib
import os
import re
import typing
from collections.abc import Mapping
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from agent_invariants._js import json_number
from agent_invariants.errors import ContractError
from agent_invariants.rules import RULE_KINDS
from agent_invariants.rules.base import FieldProblem, check_text

__all__ = ("ComparePolicy", "Contract", "load_contract")

RuleConfigs = typing.Union[tuple(kind.config_type for kind in RULE_KINDS.values())]  # noqa: UP007


class ComparePolicy(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What `compare` counts as a regression of the candidate against the baseline."""

    fail_on_new_tools: bool | UnsetType = UNSET
    """A tool the candidate calls and the baseline never did is a regression (default true)."""
    fail_on_new_violations: bool | UnsetType = UNSET
    """Label rules that newly fail as `new_rule_failure` (default true); either way they block."""
    max_tool_call_increase_percent: Annotated[float, Meta(ge=0, le=100_000)] | UnsetType = UNSET
    """Most tool-call growth allowed, in percent of the baseline's calls (default: not checked)."""
    require_same_outcome_or_better: bool | UnsetType = UNSET
    """The candidate's final outcome may not rank below the baseline's (default true)."""

    def to_dict(self) -> dict[str, Any]:
        return {name: json_number(value) if isinstance(value, float) else value
                for name in self.__struct_fields__ if (value := getattr(self, name)) is not UNSET}


class Contract(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A v1 contract: a named list of rules, and an optional compare policy."""

    schema: str | UnsetType = msgspec.field(default=UNSET, name="$schema")
    """JSON Schema reference for editors; accepted and ignored."""
    version: Literal[1]
    """Always the number 1."""
    name: Annotated[str, Meta(min_length=1)]
    """Shown in every report; trimmed, 1..200 characters."""
    description: Annotated[str, Meta(min_length=1)] | UnsetType = UNSET
    """Free text, trimmed, 1..5000 characters."""
    rules: Annotated[list[RuleConfigs], Meta(min_length=1, max_length=10_000)]
    """1..10000 rules; ids must be unique."""
    compare: ComparePolicy | UnsetType = UNSET
    """Policy for `compare`; validated by every command."""

    def __post_init__(self) -> None:
        msgspec.structs.force_setattr(self, "name", check_text(self.name, "name", 200))
        if self.description is not UNSET:
            msgspec.structs.force_setattr(self, "description", check_text(self.description, "description", 5000))
        first_use: dict[str, int] = {}
        for position, rule in enumerate(self.rules):
            if rule.id in first_use:
                raise FieldProblem(f"rules[{position}].id",
                                   f"duplicate rule id {rule.id!r} (already used by rules[{first_use[rule.id]}])")
            first_use[rule.id] = position

    @property
    def policy(self) -> ComparePolicy:
        return ComparePolicy() if self.compare is UNSET else self.compare

    def to_dict(self) -> dict[str, Any]:
        """The normalised contract: keys in schema order, absent optional keys left out."""
        out: dict[str, Any] = {"version": self.version, "name": self.name}
        if self.description is not UNSET:
            out["description"] = self.description
        out["rules"] = [rule.to_dict() for rule in self.rules]
        if self.compare is not UNSET:
            out["compare"] = self.compare.to_dict()
        return out


def load_contract(source: Contract | Mapping[str, Any] | bytes | str | os.PathLike[str], *,
                  name: str | None = None) -> Contract:
    """Load and validate a contract from a path, JSON bytes or an already-parsed mapping."""
    if isinstance(source, Contract):
        return source
    if isinstance(source, Mapping):
        return _validate(dict(source), name or "contract")
    if isinstance(source, (bytes, bytearray, memoryview)):
        return _validate(_parse(bytes(source), name or "contract"), name or "contract")
    path = os.fspath(source)
    label = name or path
    return _validate(_parse(_read(path, label), label), label)


def _read(path: str, label: str) -> bytes:
    if os.path.isdir(path):
        raise ContractError(label, None, "is a directory, not a contract file")
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        raise ContractError(label, None, "no such file") from None
    except PermissionError:
        raise ContractError(label, None, "permission denied") from None
    except OSError as exc:
        raise ContractError(label, None, f"cannot read: {exc.strerror or exc}") from None


def _parse(data: bytes, label: str) -> Any:
    if data.startswith(b"\xef\xbb\xbf"):
        raise ContractError(label, None, "starts with a UTF-8 byte order mark, which contract v1 does not "
                                         "allow; save the file without it")
    try:
        return msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        text = str(exc)
        found = re.search(r"\(byte (\d+)\)", text)
        offset = int(found.group(1)) if found else len(data)
        line = data.count(b"\n", 0, offset) + 1
        column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
        reason = re.sub(r"\s*\(byte \d+\)", "", text).removeprefix("JSON is malformed: ")
        if reason == "Input data was truncated":
            reason = "the JSON ends before the value is complete"
        elif reason.startswith("Invalid UTF-8"):
            reason = "invalid UTF-8"
        raise ContractError(label, None, f"invalid JSON at line {line}, column {column}: {reason}") from None


def _validate(document: Any, label: str) -> Contract:
    if not isinstance(document, dict):
        raise ContractError(label, "$", f"expected a JSON object, got {_json_type(document)}")
    try:
        return msgspec.convert(_integral_floats_as_ints(document), Contract)
    except msgspec.ValidationError as exc:
        path, problem = _explain(str(exc), document)
        raise ContractError(label, path, problem) from None


def _integral_floats_as_ints(value: Any) -> Any:
    """JSON has one number type: `3.0` is the integer 3, as it is for the reference tool."""
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) < 2**63 else value
    if isinstance(value, dict):
        return {key: _integral_floats_as_ints(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_integral_floats_as_ints(item) for item in value]
    return value


def _explain(message: str, document: Any) -> tuple[str, str]:
    """Turn msgspec's "<problem> - at `<path>`" into (path, a problem a person can act on)."""
    problem, sep, path = message.rpartition(" - at `")
    path = path.rstrip("`") if sep else "$"
    if not sep:
        problem = message
    if problem.startswith("@"):
        field, _, problem = problem[1:].partition(": ")
        return f"{path}.{field}", problem
    value = _lookup(document, path)
    if problem.startswith("Invalid value") and path.endswith(".kind"):
        kinds = list(RULE_KINDS)
        return path, f"unknown rule kind {value!r}{_suggest(value, kinds)}; expected one of: {', '.join(kinds)}"
    if problem.startswith("Object contains unknown field"):
        field = problem.split("`")[1]
        known = _known_fields(document, path)
        hint = _suggest(field, known) if known else ""
        return f"{path}.{field}", f"unknown field{hint}"
    if problem.startswith("Object missing required field"):
        return path, f"missing required field `{problem.split('`')[1]}`"
    if problem.startswith("Invalid enum value") and path == "$.version":
        return path, f"expected the number 1, got {_show(value)}"
    got = "" if value is _MISSING else f", got {_show(value)}"
    return path, f"{problem[:1].lower()}{problem[1:]}{got}"


_MISSING = object()


def _lookup(document: Any, path: str) -> Any:
    value = document
    for key, index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path[1:]):
        try:
            value = value[int(index)] if index else value[key]
        except (KeyError, IndexError, TypeError):
            return _MISSING
    return value


def _known_fields(document: Any, path: str) -> list[str]:
    """Field names allowed at `path` (the root, a rule, a matcher or the compare block)."""
    if path == "$":
        return [field.encode_name for field in msgspec.structs.fields(Contract)]
    if path == "$.compare":
        return list(ComparePolicy.__struct_fields__)
    rule_path = re.match(r"\$\.rules\[\d+\]", path)
    rule = _lookup(document, rule_path.group(0)) if rule_path else None
    kind = RULE_KINDS.get(rule.get("kind")) if isinstance(rule, dict) else None
    if kind is None:
        return []
    if path == rule_path.group(0):
        return [*kind.config_type.__struct_fields__, "kind"]
    from agent_invariants.matchers import EventMatcher
    return list(EventMatcher.__struct_fields__)


def _suggest(word: Any, choices: list[str]) -> str:
    if not isinstance(word, str):
        return ""
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _show(value: Any) -> str:
    text = msgspec.json.encode(value).decode()
    return text if len(text) <= 60 else text[:57] + "..."


def _json_type(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
            int: "a number", float: "a number", type(None): "null"}.get(type(value), "a value")
