"""Every problem of a contract at once, each with its JSON path and what was expected.

msgspec stops at the first error, which makes fixing a contract a slow loop. Before decoding,
this walks the document against the same structs (field by field, rule by rule), so that a
misspelled field, an unknown kind and an out-of-range number in one file are all reported in one
run, with a "did you mean" where a name is close to a real one. The structs stay the single
source of the rules: each field is checked by converting it to its declared type.
"""
from __future__ import annotations

import difflib
import re
import typing
from typing import Any

import msgspec

__all__ = ("Problem", "contract_problems", "rule_problems")


class Problem(typing.NamedTuple):
    """One thing wrong, at a JSON path such as `$.rules[2].tool`."""

    path: str
    message: str


def contract_problems(document: Any, contract_type: type, compare_type: type,
                      rule_types: dict[str, type]) -> list[Problem]:
    """Problems of a whole contract document (already parsed JSON), in document order."""
    if not isinstance(document, dict):
        return [Problem("$", f"expected a JSON object, got {json_type(document)}")]
    problems: list[Problem] = []
    fields = {field.encode_name: field for field in msgspec.structs.fields(contract_type)}
    problems += _unknown_keys(document, "$", list(fields))
    for name, field in fields.items():
        if name not in document:
            if field.required:
                problems.append(Problem("$", f"missing required field `{name}`"))
            continue
        value, path = document[name], f"$.{name}"
        if name == "rules":
            problems += _rules_problems(value, rule_types, fewest=0 if "extends" in document else 1)
        elif name == "compare":
            problems += struct_problems(value, compare_type, path)
        else:
            problems += field_problems(value, field.type, path)
    return problems


def _rules_problems(rules: Any, rule_types: dict[str, type], fewest: int) -> list[Problem]:
    if not isinstance(rules, list):
        return [Problem("$.rules", f"expected an array of rules, got {json_type(rules)}")]
    problems = []
    if not fewest <= len(rules) <= 10_000:
        problems.append(Problem("$.rules", f"must hold {fewest}..10000 rules, got {len(rules)}"))
    first_use: dict[str, int] = {}
    for position, rule in enumerate(rules):
        path = f"$.rules[{position}]"
        problems += rule_problems(rule, rule_types, path)
        if isinstance(rule, dict) and isinstance(rule.get("id"), str):
            if rule["id"] in first_use:
                problems.append(Problem(f"{path}.id", f"duplicate rule id {rule['id']!r} "
                                                      f"(already used by rules[{first_use[rule['id']]}])"))
            else:
                first_use[rule["id"]] = position
    return problems


def rule_problems(rule: Any, rule_types: dict[str, type], path: str) -> list[Problem]:
    """Problems of one rule object; the kind decides which fields it may have."""
    if not isinstance(rule, dict):
        return [Problem(path, f"expected a rule object, got {json_type(rule)}")]
    kind = rule.get("kind")
    if kind is None:
        return [Problem(path, f"missing required field `kind` (one of: {', '.join(rule_types)})")]
    if not isinstance(kind, str):
        return [Problem(f"{path}.kind", f"expected a string (one of: {', '.join(rule_types)}), got {json_type(kind)}")]
    if kind not in rule_types:
        return [Problem(f"{path}.kind", f"unknown rule kind {show(kind)}{suggest(kind, list(rule_types))}; "
                                        f"expected one of: {', '.join(rule_types)}")]
    return struct_problems({k: v for k, v in rule.items() if k != "kind"}, rule_types[kind], path, whole=rule)


def struct_problems(value: Any, struct: type, path: str, whole: Any = None) -> list[Problem]:
    """Problems of an object against a Struct: unknown keys, missing fields, each field's value,
    then (only when those are fine) the cross-field checks of the struct itself."""
    if not isinstance(value, dict):
        return [Problem(path, f"expected an object, got {json_type(value)}")]
    fields = {field.encode_name: field for field in msgspec.structs.fields(struct)}
    problems = _unknown_keys(value, path, list(fields))
    misspelled = {_closest(key, list(fields)) for key in value if key not in fields}
    for name, field in fields.items():
        if name not in value:
            if field.required and name not in misspelled:   # else "did you mean" already said it
                problems.append(Problem(path, f"missing required field `{name}`"))
            continue
        problems += field_problems(value[name], field.type, f"{path}.{name}")
    if not problems:
        try:
            msgspec.convert(whole if whole is not None else value, struct)
        except msgspec.ValidationError as exc:
            problems.append(explain(str(exc), path))
    return problems


def field_problems(value: Any, hint: Any, path: str) -> list[Problem]:
    """Problems of one field's value against its declared type (objects are walked field by field)."""
    struct = _struct_in(hint)
    if struct is not None and isinstance(value, dict):
        return struct_problems(value, struct, path)
    try:
        msgspec.convert(value, hint)
    except msgspec.ValidationError as exc:
        problem = explain(str(exc), path)
        return [Problem(problem.path, problem.message + _got(problem.message, value, path, problem.path))]
    return []


def _got(message: str, value: Any, path: str, where: str) -> str:
    if where != path or "got" in message or message.startswith("missing"):
        return ""
    return f", got {show(value)}"


def _struct_in(hint: Any) -> type | None:
    """The Struct a field holds (through Optional/Annotated), if any."""
    if isinstance(hint, type) and issubclass(hint, msgspec.Struct):
        return hint
    for argument in typing.get_args(hint):
        found = _struct_in(argument)
        if found is not None:
            return found
    return None


def _unknown_keys(value: dict, path: str, known: list[str]) -> list[Problem]:
    return [Problem(f"{path}.{key}", f"unknown field{suggest(key, known)}")
            for key in value if key not in known]


def explain(message: str, base: str) -> Problem:
    """msgspec's "<problem> - at `$.x`" (relative to `base`) as a Problem with a readable message."""
    problem, sep, where = message.rpartition(" - at `")
    where = where.rstrip("`") if sep else "$"
    if not sep:
        problem = message
    path = base + where[1:]
    if problem.startswith("@"):   # a FieldProblem raised by a struct's own checks
        field, _, problem = problem[1:].partition(": ")
        return Problem(f"{path}.{field}", problem)
    if problem.startswith("Object contains unknown field"):
        return Problem(f"{path}.{problem.split('`')[1]}", "unknown field")
    if problem.startswith("Object missing required field"):
        return Problem(path, f"missing required field `{problem.split('`')[1]}`")
    if problem.startswith("Invalid enum value") and path.endswith(".version"):
        return Problem(path, "expected the number 1")
    return Problem(path, problem[:1].lower() + problem[1:])


def suggest(word: Any, choices: list[str]) -> str:
    close = _closest(word, choices)
    return f" (did you mean {close!r}?)" if close else ""


def _closest(word: Any, choices: list[str]) -> str | None:
    if not isinstance(word, str):
        return None
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return close[0] if close else None


def show(value: Any) -> str:
    text = msgspec.json.encode(value).decode() if _encodable(value) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _encodable(value: Any) -> bool:
    try:
        msgspec.json.encode(value)
        return True
    except (TypeError, ValueError, msgspec.EncodeError):
        return False


def json_type(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
            int: "a number", float: "a number", type(None): "null"}.get(type(value), "a value")


def line_of(path: str, positions: dict[str, Any]) -> int | None:
    """The line of `path`, or of its nearest parent that has one."""
    while path:
        found = positions.get(path)
        if found is not None:
            return found[0]
        trimmed = re.sub(r"(\.[^.\[]*|\[\d+\])$", "", path)
        if trimmed == path:
            break
        path = trimmed
    return None
