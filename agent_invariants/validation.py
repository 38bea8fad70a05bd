"""Every problem of a contract at once, each with its JSON path and what was expected.

msgspec stops at the first error, which makes fixing a contract a slow loop. Before decoding,
this walks the document against the same structs (field by field, rule by rule), so that a
misspelled field, an unknown kind and an out-of-range number in one file are all reported in one
run, with a "did you mean" where a name is close to a real one, and the choices where a value
must be one of a few. The structs stay the single source of the rules: each field is checked by
converting it to its declared type, and msgspec's words are put in ours (`jsontext.problem_words`).

Problems are yielded as they are found: the loader lists the first hundred and stops asking, so
a file of a million mistakes costs no more than one of a hundred.
"""
from __future__ import annotations

import functools
import typing
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import msgspec

from agent_invariants.errors import closest, did_you_mean, suggest, unknown_value
from agent_invariants.jsonpos import member, path_and_parents
from agent_invariants.jsontext import path_and_problem, problem_words, show

__all__ = ("MAX_RULES", "NEEDS_VERSION_2", "Problem", "contract_problems", "duplicate_ids", "explain", "line_of",
           "rule_problems", "since_version", "suggest", "too_many_rules", "version_2_fields",
           "version_2_uses")

MAX_RULES = 10_000
"""The most rules a contract may hold, counting every rule loaded through `extends`."""


class Problem(typing.NamedTuple):
    """One thing wrong, at a JSON path such as `$.rules[2].tool`."""

    path: str
    message: str


def contract_problems(document: Any, contract_type: type, compare_type: type,
                      rule_types: dict[str, type]) -> Iterator[Problem]:
    """Problems of a whole contract document (already parsed JSON), in document order. They are
    found as they are asked for, so a caller that shows the first hundred never pays for the
    rest (a million misspelled keys would each cost a "did you mean")."""
    if not isinstance(document, dict):
        yield Problem("$", f"expected a JSON object, got {json_type(document)}")
        return
    # The rules are read as version 1 only when the contract says version 1: a version that is
    # missing or wrong is its own one problem, not also one for each version-2 kind or field.
    given = document.get("version")
    version = 1 if given == 1 and type(given) is not bool else 2
    fields = _fields(contract_type)
    suggested: set[str | None] = set()
    yield from _unknown_keys(document, "$", list(fields), suggested)
    for name, field in fields.items():
        if name not in document:
            if field.required and name not in suggested:   # else "did you mean" already said it
                yield Problem("$", f"missing required field `{name}`")
            continue
        value, path = document[name], f"$.{name}"
        if name == "rules":
            yield from _rules_problems(value, rule_types, fewest=0 if "extends" in document else 1, version=version)
        elif name == "compare":
            yield from struct_problems(value, compare_type, path)
        else:
            found = list(field_problems(value, field.type, path, version))
            yield from found
            if not found and name in CONTRACT_TEXTS:   # (one problem per field: the type's first)
                yield from _text_problems(value, path, CONTRACT_TEXTS[name])


CONTRACT_TEXTS = {"name": 200, "description": 5000}
"""The contract's texts, trimmed, and their longest length (the walk reports a blank one with
the other problems; the contract's own check trims them)."""


def _text_problems(value: str, path: str, limit: int) -> Iterator[Problem]:
    from agent_invariants.rules.fields import FieldProblem, check_text

    try:
        check_text(value, path, limit)
    except FieldProblem as exc:
        yield Problem(path, exc.problem)


def _rules_problems(rules: Any, rule_types: dict[str, type], fewest: int, version: int) -> Iterator[Problem]:
    if not isinstance(rules, list):
        yield Problem("$.rules", f"expected an array of rules, got {json_type(rules)}")
        return
    if len(rules) < fewest:
        yield Problem("$.rules", f"must hold {fewest}..{MAX_RULES} rules, got {len(rules)}")
    repeated = dict(duplicate_ids(rule.get("id") if isinstance(rule, dict) else None for rule in rules))
    for position, rule in enumerate(rules):
        path = f"$.rules[{position}]"
        yield from rule_problems(rule, rule_types, path, version)
        if position in repeated:
            yield Problem(f"{path}.id", repeated[position])


def duplicate_ids(ids: Iterable[Any]) -> Iterator[tuple[int, str]]:
    """(position, problem) of each rule id already used by an earlier rule, in order; ids that
    are not strings are passed over (their rules have a problem of their own). The one check of
    unique ids, for documents (`contract_problems`) and for `Contract`s built in Python."""
    first_use: dict[str, int] = {}
    for position, rule_id in enumerate(ids):
        if not isinstance(rule_id, str):
            continue
        if rule_id in first_use:
            yield position, f"duplicate rule id {rule_id!r} (already used by rules[{first_use[rule_id]}])"
        else:
            first_use[rule_id] = position


def too_many_rules(document: Any) -> Problem | None:
    """The problem of a contract with more than `MAX_RULES` rules of its own, found by counting
    alone, so that a huge contract is refused before any rule is checked."""
    rules = document.get("rules") if isinstance(document, dict) else None
    if not isinstance(rules, list) or len(rules) <= MAX_RULES:
        return None
    return Problem("$.rules", f"at most {MAX_RULES:,} rules are allowed (1..{MAX_RULES} in all, counting those "
                              f"from extends), got {len(rules):,}")


NEEDS_VERSION_2 = 'needs "version": 2'
"""What a version-1 contract is told of a kind or field of version 2."""


def rule_problems(rule: Any, rule_types: dict[str, type], path: str, version: int = 2) -> Iterator[Problem]:
    """Problems of one rule object; the kind decides which fields it may have, the contract's
    `version` which kinds and fields exist."""
    if not isinstance(rule, dict):
        yield Problem(path, f"expected a rule object, got {json_type(rule)}")
        return
    kind = rule.get("kind")
    if kind is None:
        yield Problem(path, f"missing required field `kind` (one of: {', '.join(_kinds(rule_types, version))})")
    elif not isinstance(kind, str):
        yield Problem(f"{path}.kind",
                      f"expected a string (one of: {', '.join(_kinds(rule_types, version))}), got {json_type(kind)}")
    elif kind not in rule_types:
        meant = closest(kind, [name for name in rule_types if since_version(rule_types[name]) > version])
        if meant is not None and closest(kind, _kinds(rule_types, version)) is None:   # a kind of version 2
            yield Problem(f"{path}.kind", f"unknown rule kind {show(kind)} (did you mean {meant!r}? it "
                                          f"{NEEDS_VERSION_2})")
        else:
            yield Problem(f"{path}.kind", unknown_value(show(kind), kind, _kinds(rule_types, version), "rule kind"))
    elif since_version(rule_types[kind]) > version:
        yield Problem(f"{path}.kind", f"the rule kind {kind} {NEEDS_VERSION_2}")
    elif not _decodes(rule, rule_types[kind], version):
        yield from struct_problems({k: v for k, v in rule.items() if k != "kind"}, rule_types[kind], path,
                                   whole=rule, version=version,
                                   elsewhere=_fields_elsewhere(rule, kind, rule_types, version))


def _fields_elsewhere(rule: dict[str, Any], kind: str, rule_types: dict[str, type], version: int) -> dict[str, str]:
    """What to say of each key of a rule that its kind does not have but other kinds do (of the
    contract's version, else of version 2), rather than "did you mean" a near field of its own:
    `bind` on require_approval is approval_bound's."""
    own = _fields(rule_types[kind])
    said: dict[str, str] = {}
    for key in rule:
        if key != "kind" and key not in own:
            kinds = [name for name in _kinds(rule_types, version) if key in _fields(rule_types[name])] or \
                [name for name in rule_types if key in _fields(rule_types[name])]
            if kinds:
                named = ", ".join(kinds[:3]) + (f" and {len(kinds) - 3} more kinds" if len(kinds) > 3 else "")
                newer = all(since_version(rule_types[name]) > version for name in kinds)
                said[key] = (f"unknown field for {kind}: {key} is a field of {named}"
                             + (f", which {NEEDS_VERSION_2}" if newer else ""))
    return said


def _kinds(rule_types: dict[str, type], version: int) -> list[str]:
    """The kinds a contract of `version` may use (for messages: a rule of a known kind never asks)."""
    return [name for name, config in rule_types.items() if version >= since_version(config)]


def _decodes(rule: dict[str, Any], struct: type, version: int) -> bool:
    """Whether a rule decodes as it is and uses nothing its contract's version lacks: then
    `struct_problems` would find nothing, and one decode (in C) says so ten times faster than its
    walk field by field, which only a rule with a problem needs (for the problem's path)."""
    try:
        config: Any = msgspec.convert(rule, struct)
    except (msgspec.ValidationError, ValueError, TypeError):
        return False
    return version >= 2 or next(version_2_uses([config]), None) is None


def since_version(struct: type) -> int:
    """The contract version that brought a rule kind (its config's `since_version`, default 1)."""
    return int(getattr(struct, "since_version", 1))


def version_2_fields(struct: type) -> frozenset[str]:
    """The fields of a version-1 struct that only a version-2 contract may use."""
    return frozenset(getattr(struct, "version_2_fields", ()))


def version_2_uses(rules: Iterable[Any]) -> Iterator[tuple[str, str]]:
    """(field path, problem) of each use of a version-2 kind or field among decoded rule configs,
    for contracts built in Python: the loader finds these in the document already."""
    for position, rule in enumerate(rules):
        if since_version(type(rule)) > 1:
            yield f"rules[{position}].kind", f"the rule kind {rule.kind} {NEEDS_VERSION_2}"
            continue
        yield from _uses_in(rule, f"rules[{position}]")


def _uses_in(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """The version-2 fields set in a struct, then in the structs among its fields (matchers)."""
    fields, holders = _version_2_plan(type(value))
    for name in fields:
        if getattr(value, name) is not msgspec.UNSET:
            yield f"{path}.{name}", f"the field {name} {NEEDS_VERSION_2}"
    for name in holders:
        item = getattr(value, name)
        if isinstance(item, msgspec.Struct):
            yield from _uses_in(item, f"{path}.{name}")


_PLANS: dict[type, tuple[tuple[str, ...], tuple[str, ...]]] = {}


def _version_2_plan(struct: type) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A struct's version-2 fields (sorted), and its fields that may hold a struct: worked out
    once per struct, as a contract of 10,000 rules asks 10,000 times."""
    plan = _PLANS.get(struct)
    if plan is None:
        holders = tuple(field.name for field in msgspec.structs.fields(struct) if _struct_in(field.type) is not None)
        plan = _PLANS[struct] = tuple(sorted(version_2_fields(struct))), holders
    return plan


def struct_problems(value: Any, struct: type, path: str, whole: Any = None, version: int = 2,
                    elsewhere: Mapping[str, str] | None = None) -> Iterator[Problem]:
    """Problems of an object against a Struct: unknown keys, missing fields, each field's value,
    then (only when those are fine) the cross-field checks of the struct itself. Under
    `version` 1, a version-2 field is a problem of its own (not an unknown one); `elsewhere`
    says what to say of an unknown key instead (a field of another rule kind)."""
    if not isinstance(value, dict):
        yield Problem(path, f"expected an object, got {json_type(value)}")
        return
    fields = _fields(struct)
    suggested: set[str | None] = set()
    found = False
    newer = version_2_fields(struct) if version < 2 else frozenset()
    for key in value:
        if key in newer:
            found = True
            yield Problem(f"{path}.{key}", f"the field {key} {NEEDS_VERSION_2}")
    known = [name for name in fields if name not in newer]
    for problem in _unknown_keys({key: None for key in value if key not in newer}, path, known, suggested,
                                 sorted(newer), elsewhere or {}):
        found = True
        yield problem
    for name, field in fields.items():
        if name not in value:
            if field.required and name not in suggested:   # else "did you mean" already said it
                found = True
                yield Problem(path, f"missing required field `{name}`")
            continue
        if name in newer:
            continue
        for problem in field_problems(value[name], field.type, f"{path}.{name}", version):
            found = True
            yield problem
    if not found:
        try:
            msgspec.convert(whole if whole is not None else value, struct)
        except msgspec.ValidationError as exc:
            yield explain(str(exc), path)


def field_problems(value: Any, hint: Any, path: str, version: int = 2) -> Iterator[Problem]:
    """Problems of one field's value against its declared type (objects are walked field by field)."""
    struct = _struct_in(hint)
    if struct is not None and isinstance(value, dict):
        yield from struct_problems(value, struct, path, version=version)
        return
    try:
        msgspec.convert(value, hint)
    except msgspec.ValidationError as exc:
        if isinstance(value, float) and value.is_integer() and str(exc).startswith("Expected `int`, got `float`"):
            yield _huge_integer(value, hint, path)   # (smaller ones are read as integers already)
            return
        problem = explain(str(exc), path, hint)
        yield Problem(problem.path, _got(problem.message, value, path, problem.path))


def _huge_integer(value: float, hint: Any, path: str) -> Problem:
    """The problem of an integer past 2**63 (9.2e18) written with an exponent (`1e20`; a smaller
    one is read as the integer it is): the bound it breaks, if any, else how to write it."""
    whole = int(value)
    try:
        msgspec.convert(whole, hint)
    except msgspec.ValidationError as exc:
        problem = explain(str(exc), path, hint)
        return Problem(problem.path, _got(problem.message, value, path, problem.path))
    return Problem(path, f"expected an integer written in full, without an exponent, got {show(value)}")


def _got(message: str, value: Any, path: str, where: str) -> str:
    """The message, saying the value itself where it is one number or string (`got 1.5`, `got "yes"`
    say more than `got a number`); other values are named by their type."""
    if where != path or message.startswith(("missing", "unknown")):
        return message
    head, sep, _ = message.rpartition(", got ")
    if isinstance(value, (str, int, float)):
        return f"{head if sep else message}, got {show(value)}"
    return message if sep else f"{message}, got {show(value)}"


@functools.cache
def _fields(struct: type) -> dict[str, Any]:
    """A struct's fields by their JSON name; asked once per struct, as msgspec works them out
    from the annotations on every call (most of the time it takes to check 10,000 rules)."""
    return {field.encode_name: field for field in msgspec.structs.fields(struct)}


@functools.cache
def _struct_in(hint: Any) -> type | None:
    """The Struct a field holds (through Optional/Annotated), if any; the types of fields are
    few, the fields checked many, so the answer is kept."""
    if isinstance(hint, type) and issubclass(hint, msgspec.Struct):
        return hint
    for argument in typing.get_args(hint):
        found = _struct_in(argument)
        if found is not None:
            return found
    return None


def _unknown_keys(value: dict[str, Any], path: str, known: list[str], suggested: set[str | None],
                  newer: Sequence[str] = (), elsewhere: Mapping[str, str] | None = None) -> Iterator[Problem]:
    """A problem for each key not in `known`; the names suggested go into `suggested`. A key
    `elsewhere` names gets what it says; a key close to none of `known` but to one of `newer`
    (the fields of version 2, in a contract of version 1) is said to be that one, which needs
    version 2."""
    for key in value:
        if elsewhere and key in elsewhere:
            yield Problem(member(path, key), elsewhere[key])
        elif key not in known:
            close = closest(key, known)
            suggested.add(close)
            later = None if close is not None or not newer else closest(key, newer)
            if close is not None:
                yield Problem(member(path, key), f"unknown field{did_you_mean(close)}")
            elif later is not None:
                yield Problem(member(path, key), f"unknown field (did you mean {later!r}? it {NEEDS_VERSION_2})")
            else:
                yield Problem(member(path, key), f"unknown field; expected one of: {', '.join(known)}")


def explain(message: str, base: str, hint: Any = None) -> Problem:
    """msgspec's "<problem> - at `$.x`" (relative to `base`) as a Problem with a readable message:
    the path split off as everywhere (`jsontext.path_and_problem`), the problem in our words
    (`jsontext.problem_words`), with the choices of an enum when `hint`, the type converted to,
    has one there."""
    relative, problem = path_and_problem(message)
    path = base + relative[1:]
    if problem.startswith("@"):   # a FieldProblem raised by a struct's own checks
        field, _, problem = problem[1:].partition(": ")
        return Problem(f"{path}.{field}", problem)   # (a path below the field, as the struct wrote it)
    if problem.startswith("Object contains unknown field"):
        return Problem(member(path, problem.split('`')[1]), "unknown field")
    if problem.startswith("Invalid enum value") and path.endswith(".version"):
        return Problem(path, "expected the number 1 or 2")
    if "matching regex" in problem:
        meaning = _described(hint)
        if meaning:
            return Problem(path, f"expected {meaning}")
    return Problem(path, problem_words(problem, hint, relative))


def _described(hint: Any) -> str:
    """The description of a string field's format (`RuleId`), as a message says it."""
    for meta in typing.get_args(hint)[1:] if typing.get_origin(hint) is typing.Annotated else ():
        description = getattr(meta, "description", None)
        if isinstance(description, str) and description:
            return description[:1].lower() + description[1:]
    return ""


def json_type(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
            int: "a number", float: "a number", type(None): "null"}.get(type(value), "a value")


def line_of(path: str, positions: Mapping[str, tuple[int, int]]) -> int | None:
    """The line of `path`, or of its nearest parent that has one."""
    for where in path_and_parents(path):
        found = positions.get(where)
        if found is not None:
            return found[0]
    return None


