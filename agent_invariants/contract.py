"""Contract v1: the JSON file of rules a trace is checked against, loaded and validated.

    {"version": 1, "name": "refund-desk",
     "rules": [{"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}],
     "compare": {"max_tool_call_increase_percent": 25}}

Validation is strict, as in the reference tool: unknown keys anywhere are errors (except a
`$schema` at the root, which editors use), numbers must be in range, globs and names are trimmed
and must not end up empty, rule ids are unique. Every problem raises `ContractError` with the JSON
path of the offending value (`$.rules[2].max_attempts`). The loaded `Contract` is normalised
(trimmed strings) and `to_dict()` echoes it in the reference's key order.

Contracts come from users, so loading one is bounded: a file is read once and only up to 16 MiB
(`contract_source`), the rules are counted before any is checked, YAML aliases may not blow a
document up (`yaml_decode`), and `extends` is capped in depth, pack loads and rules (`packs`).
"""
from __future__ import annotations

import functools
import os
import typing
from collections.abc import Mapping
from typing import Annotated, Any, Literal, cast

import msgspec
from msgspec import UNSET, Meta, UnsetType

from agent_invariants._js import json_number
from agent_invariants.contract_source import (
    MAX_CONTRACT_BYTES,
    ContractLines,
    ContractSource,
    contract_error,
    contract_lines,
    first_problems,
    mended,
    parse,
    read_contract,
)
from agent_invariants.errors import ContractError
from agent_invariants.jsontext import AS_CONTRACT, TOO_DEEP, document_shape
from agent_invariants.match.budget import program_budget
from agent_invariants.packs import resolve_extends
from agent_invariants.rules import in_order, kind_class, registered_outside, rule_configs
from agent_invariants.rules.base import RuleConfig
from agent_invariants.rules.fields import FieldProblem, check_text
from agent_invariants.validation import (
    CONTRACT_TEXTS,
    MAX_RULES,
    contract_problems,
    duplicate_ids,
    explain,
    too_many_rules,
    version_2_uses,
)

__all__ = ("MAX_CONTRACT_BYTES", "MAX_RULES", "ComparePolicy", "Contract", "ContractLines", "ContractSource",
           "contract_lines", "load_contract", "read_contract")

if typing.TYPE_CHECKING:
    RuleConfigs = RuleConfig   # to a type checker, a rule is some RuleConfig

_REGISTERED_FIRST = registered_outside()
"""The kinds registered from outside the package before this module was imported."""


def __getattr__(name: str) -> Any:
    """`RuleConfigs`: to msgspec, a rule is one of the kinds registered, a union it decodes by the
    `kind` tag. It is made when asked for, since it imports every kind (see `_every_kind_config`)."""
    if name == "RuleConfigs":
        return _every_kind_config()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _every_kind_config() -> Any:
    """The package's kinds, and those registered from outside before this module was imported
    (as the schemas list them, whatever was registered since)."""
    later = set(registered_outside()) - set(_REGISTERED_FIRST)
    return typing.Union[tuple(config for kind, config in rule_configs().items() if kind not in later)]  # noqa: UP007


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
    """A contract: a named list of rules, and an optional compare policy. Version 2 adds rule
    kinds and fields; a version-1 contract that uses one is refused (it `needs "version": 2`)."""

    schema: str | UnsetType = msgspec.field(default=UNSET, name="$schema")
    """JSON Schema reference for editors; accepted and ignored."""
    version: Literal[1, 2]
    """1, or 2 for the kinds and fields of contract version 2 (spec/v2-extensions.md)."""
    name: Annotated[str, Meta(min_length=1)]
    """Shown in every report; trimmed, 1..200 characters."""
    description: Annotated[str, Meta(min_length=1)] | UnsetType = UNSET
    """Free text, trimmed, 1..5000 characters."""
    extends: list[str] | UnsetType = UNSET
    """Rule packs to include before this contract's rules: `agent-invariants:<pack>` for a shipped
    pack, or a path relative to this file. A rule here with a pack rule's id replaces it."""
    rules: Annotated[list[RuleConfigs], Meta(max_length=MAX_RULES)] = msgspec.field(default_factory=list)
    """The rules: 1..10000 in all (counting those from `extends`); ids must be unique."""
    compare: ComparePolicy | UnsetType = UNSET
    """Policy for `compare`; validated by every command."""

    def __post_init__(self) -> None:
        if not self.rules:
            raise FieldProblem("rules", "a contract needs at least one rule (of its own or from `extends`)")
        msgspec.structs.force_setattr(self, "name", check_text(self.name, "name", CONTRACT_TEXTS["name"]))
        if self.description is not UNSET:
            msgspec.structs.force_setattr(self, "description", check_text(self.description, "description",
                                                                          CONTRACT_TEXTS["description"]))
        if self.version == 1:
            newer = next(version_2_uses(self.rules), None)
            if newer is not None:
                raise FieldProblem(*newer)
        repeated = next(duplicate_ids(rule.id for rule in self.rules), None)
        if repeated is not None:
            position, problem = repeated
            raise FieldProblem(f"rules[{position}].id", problem)

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


# msgspec (and typing.get_type_hints) read the type of `Contract.rules` the first time they need
# it, and only then: the union of every kind registered by then, which imports them all. Loading
# a contract does not need it (its rules decode as the kinds they name, `_contract_type`), so a
# check imports only the kinds its contract uses.
Contract.__annotations__["rules"] = "Annotated[list[_every_kind_config()], Meta(max_length=MAX_RULES)]"


def load_contract(source: Contract | Mapping[str, Any] | ContractSource | bytes | str | os.PathLike[str], *,
                  name: str | None = None, pack_paths: bool = True, packs_read: list[str] | None = None) -> Contract:
    """Load and validate a contract from a path (JSON, or YAML with the yaml extra), the
    `ContractSource` of `read_contract`, JSON bytes or an already-parsed mapping. `name` is how
    messages name it (default: the path, or `contract`).

    Packs named in `extends` are merged in: shipped ones (`agent-invariants:<pack>`) and, with
    `pack_paths`, files relative to the contract's file (or to the current directory for bytes
    and mappings). A server loading contracts sent by others passes `pack_paths=False`: then an
    `extends` entry that is a path is refused without a look at the filesystem, and no message
    shows a path of this machine. The path of each pack file read is added to `packs_read`, when
    given (the CLI refuses an output that would replace one)."""
    try:
        return _load_any(source, name, pack_paths, packs_read)
    except RecursionError:
        raise ContractError(name or _label(source), None, TOO_DEEP) from None


def _label(source: Any) -> str:
    if isinstance(source, ContractSource):
        return source.label
    return "contract" if isinstance(source, (Mapping, bytes, bytearray, memoryview)) else os.fspath(source)


def _load_any(source: Any, name: str | None, pack_paths: bool, packs_read: list[str] | None) -> Contract:
    if isinstance(source, Contract):
        return source
    if isinstance(source, Mapping):
        label = name or "contract"
        return _load(mended(dict(source), label), label, os.getcwd(), None, pack_paths, packs_read)
    if isinstance(source, ContractSource):
        source = source if name is None else source._replace(label=name)
    elif isinstance(source, (bytes, bytearray, memoryview)):
        source = ContractSource(bytes(source), name or "contract", os.getcwd(), yaml=False)
    elif isinstance(source, (str, os.PathLike)):
        source = read_contract(source, label=name)
    else:
        raise TypeError(f"a contract is a path, a mapping, JSON bytes, a ContractSource or a Contract, not "
                        f"{type(source).__name__}")
    return _load(parse(source), source.label, source.base, source, pack_paths, packs_read)


def _load(document: Any, label: str, base: str, source: ContractSource | None, pack_paths: bool,
          packs_read: list[str] | None = None) -> Contract:
    """Check the document, merge its packs, decode it. Every problem found is reported at once,
    but a contract of too many rules is refused before any of them is checked."""
    too_many = too_many_rules(document)
    if too_many is not None:
        raise contract_error(label, [too_many], source)
    if isinstance(document, dict) and "extends" not in document:
        named = _named_kinds(document)   # (None: rules of another shape, which every kind may decode)
        decoded = _decoded(document, rule_configs() if named is None else named)   # a valid contract needs
        if decoded is not None:                                                       # no walk
            return decoded
    rule_types = rule_configs()
    with program_budget():   # (of RE2 instructions, for the `$regex` patterns)
        problems = first_problems(contract_problems(document, Contract, ComparePolicy, rule_types))
    if problems:
        misplaced = AS_CONTRACT.get(document_shape(document) or "")   # a trace given as a contract?
        if misplaced:
            raise ContractError(label, None, misplaced.format(kind="contract"))
        raise contract_error(label, problems, source)
    if isinstance(document, dict) and "extends" in document:
        document = resolve_extends(document, label, base, rule_types, pack_paths=pack_paths, files=packs_read,
                                   source=source)
    try:
        with program_budget():
            return _decode(document, rule_types)
    except msgspec.ValidationError as exc:
        raise contract_error(label, [explain(str(exc), "$")], source) from None


def _named_kinds(document: dict[str, Any]) -> dict[str, type] | None:
    """The config of each kind the document's rules name (their modules imported now), when
    every rule is an object naming a known kind, or a rule already decoded; else None."""
    rules = document.get("rules")
    if not isinstance(rules, (list, tuple)):
        return None
    named: dict[str, type] = {}
    for rule in rules:
        if isinstance(rule, RuleConfig):
            named[rule.kind] = type(rule)
            continue
        kind = rule.get("kind") if isinstance(rule, Mapping) else None
        if kind.__class__ is not str:
            return None
        if kind not in named:
            found = kind_class(kind)
            if found is None:
                return None
            named[kind] = found.config_type
    return named or None


def _decoded(document: dict[str, Any], rule_types: dict[str, type]) -> Contract | None:
    """The contract, when the document decodes as it is; None when it has a problem, which the
    walk of `contract_problems` then names with its path (every check of the walk is also made by
    decoding: the structs' types, unknown fields, `__post_init__`)."""
    try:
        with program_budget():
            return _decode(document, rule_types)
    except (msgspec.ValidationError, ValueError, TypeError):
        return None


def _decode(document: Any, rule_types: dict[str, type]) -> Contract:
    """The document decoded into a `Contract` whose rules may be of these kinds
    (msgspec.ValidationError when it does not fit)."""
    configs = tuple(rule_types[kind] for kind in in_order(rule_types))   # (msgspec takes equal unions for one)
    contract = msgspec.convert(document, _contract_type(configs))
    return Contract(**msgspec.structs.asdict(contract))


@functools.lru_cache(maxsize=256)
def _contract_type(configs: tuple[type, ...]) -> type[Contract]:
    """What decodes a contract whose rules may be of these kinds: a subclass of `Contract` whose
    `rules` take just those kinds (msgspec reads a struct's types once, so `Contract` itself
    could not follow the kinds imported or registered since), copied into a `Contract` once
    decoded. Kept for the last 256 sets of kinds, each in the order of `RULE_KINDS`: msgspec takes
    two unions of the same types for one, so a union's order must not depend on a contract's."""
    kinds: Any = typing.Union[configs]  # noqa: UP007   (known only at run time)
    rules = Annotated[list[kinds], Meta(max_length=MAX_RULES)]
    return cast(type[Contract], msgspec.defstruct(
        "Contract", [("rules", rules, msgspec.field(default_factory=list))], bases=(Contract,), module=__name__))


