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

import os
import re
import typing
from collections.abc import Mapping
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from agent_invariants._js import json_number, mend_lone_surrogates, replace_lone_surrogates
from agent_invariants.errors import ContractError
from agent_invariants.events import MAX_NESTING, too_deep_at
from agent_invariants.jsonpos import locate
from agent_invariants.packs import resolve_extends
from agent_invariants.rules import RULE_KINDS
from agent_invariants.rules.base import FieldProblem, check_text
from agent_invariants.validation import Problem, contract_problems, explain, line_of, rule_problems

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
    extends: list[str] | UnsetType = UNSET
    """Rule packs to include before this contract's rules: `agent-invariants:<pack>` for a shipped
    pack, or a path relative to this file. A rule here with a pack rule's id replaces it."""
    rules: Annotated[list[RuleConfigs], Meta(max_length=10_000)] = msgspec.field(default_factory=list)
    """The rules: 1..10000 in all (counting those from `extends`); ids must be unique."""
    compare: ComparePolicy | UnsetType = UNSET
    """Policy for `compare`; validated by every command."""

    def __post_init__(self) -> None:
        if not self.rules:
            raise FieldProblem("rules", "a contract needs at least one rule (of its own or from `extends`)")
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
    """Load and validate a contract from a path (JSON, or YAML with the yaml extra), JSON bytes
    or an already-parsed mapping. Packs named in `extends` are merged in (paths are relative to
    the contract's file, or to the current directory for bytes and mappings)."""
    try:
        return _load_any(source, name)
    except RecursionError:
        raise ContractError(name or _label(source), None, _TOO_DEEP) from None


def _label(source: Any) -> str:
    return "contract" if isinstance(source, (Mapping, bytes, bytearray, memoryview)) else os.fspath(source)


def _load_any(source: Any, name: str | None) -> Contract:
    if isinstance(source, Contract):
        return source
    if isinstance(source, Mapping):
        return _load(dict(source), name or "contract", os.getcwd(), None)
    if isinstance(source, (bytes, bytearray, memoryview)):
        label = name or "contract"
        data = bytes(source)
        return _load(_parse(data, label, yaml=False), label, os.getcwd(), data)
    path = os.fspath(source)
    label = name or path
    data = _read(path, label)
    return _load(_parse(data, label, yaml=_is_yaml(path)), label, os.path.dirname(os.path.abspath(path)), data,
                 yaml=_is_yaml(path))


def _is_yaml(path: str) -> bool:
    return path.lower().endswith((".yaml", ".yml"))


def _load(document: Any, label: str, base: str, data: bytes | None, yaml: bool = False) -> Contract:
    """Check the document, merge its packs, decode it. Every problem found is reported at once."""
    document = _mended(document)
    problems = contract_problems(document, Contract, ComparePolicy, _RULE_TYPES)
    if problems:
        raise _error(label, problems, data, yaml)
    if isinstance(document, dict) and "extends" in document:
        document = resolve_extends(document, label, base, _load_pack)
    try:
        return msgspec.convert(document, Contract)
    except msgspec.ValidationError as exc:
        raise _error(label, [explain(str(exc), "$")], data, yaml) from None


def _load_pack(path: str, label: str) -> Any:
    """A pack file, parsed; its rules are checked here so errors name the pack's own file."""
    data = _read(path, label)
    yaml = _is_yaml(path)
    pack = _mended(_parse(data, label, yaml=yaml))
    if isinstance(pack, dict) and isinstance(pack.get("rules"), list):
        problems = [problem for position, rule in enumerate(pack["rules"])
                    for problem in rule_problems(rule, _RULE_TYPES, f"$.rules[{position}]")]
        if problems:
            raise _error(label, problems, data, yaml)
    return pack


def _error(label: str, problems: list[Problem], data: bytes | None, yaml: bool) -> ContractError:
    """A ContractError for `problems`, each with the line of its JSON path in the file."""
    positions = _positions(data, yaml) if data is not None else {}
    items = [(problem.path, problem.message, line_of(problem.path, positions)) for problem in problems]
    first, *more = items
    return ContractError(label, first[0], first[1], first[2], more)


def _positions(data: bytes, yaml: bool) -> dict[str, Any]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return {}
    if yaml:
        from agent_invariants.yaml_positions import locate_yaml
        return locate_yaml(text)
    return locate(text)


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


_TOO_DEEP = f"nested more than {MAX_NESTING} levels deep"


def _parse(data: bytes, label: str, *, yaml: bool) -> Any:
    if too_deep_at(data) is not None:
        raise ContractError(label, None, _TOO_DEEP)
    if yaml:
        return _parse_yaml(data, label)
    if data.startswith(b"\xef\xbb\xbf"):
        raise ContractError(label, None, "starts with a UTF-8 byte order mark, which contract v1 does not "
                                         "allow; save the file without it")
    data = replace_lone_surrogates(data)   # same length: positions in errors stay right
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


def _parse_yaml(data: bytes, label: str) -> Any:
    try:
        import yaml  # noqa: F401  (msgspec.yaml needs PyYAML)
    except ImportError:
        raise ContractError(label, None, "YAML contracts need the yaml extra: pip install 'agent-invariants[yaml]'") from None
    try:
        return msgspec.yaml.decode(data)
    except msgspec.DecodeError as exc:
        raise ContractError(label, None, f"invalid YAML: {' '.join(str(exc).split())}") from None


def _mended(value: Any) -> Any:
    """The document as the reference reads it: JSON has one number type, so `3.0` is the integer
    3; and a lone surrogate in a string (a mapping from Python may hold one) is U+FFFD, as it is
    in a file (see `replace_lone_surrogates`)."""
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) < 2**63 else value
    if isinstance(value, str):
        return mend_lone_surrogates(value)
    if isinstance(value, dict):
        return {_mended(key): _mended(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_mended(item) for item in value]
    return value


_RULE_TYPES = {kind: rule.config_type for kind, rule in RULE_KINDS.items()}
