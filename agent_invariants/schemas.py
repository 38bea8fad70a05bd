"""JSON Schemas (draft 2020-12) of the contract, an event and the reports, made from the structs.

    python -m agent_invariants.schemas            # write schemas/*.schema.json
    python -m agent_invariants.schemas --check    # exit 1 if a committed schema is out of date

The structs are the single source: msgspec turns them into JSON Schema, and this module adds
what msgspec leaves out: each field's docstring as its `description` (every property gets one),
and an end anchor every validator reads alike: Python's `\\Z` becomes `(?![\\s\\S])`, since `$`
also matches before a final newline in Python's `re` (which Python validators use) but not in
ECMA-262 (which editors use). A contract that starts with
`"$schema": "<CONTRACT_SCHEMA_URL>"` is validated and completed by editors such as VS Code.

An editor should reject what the tool rejects, so `add_checks` also writes into the schema the
checks the structs make in code (`__post_init__`) where JSON Schema can say them: text neither
blank nor too long once trimmed as JavaScript trims, a matcher with at least one key, a budget
with at least one bound, a contract with a rule of its own or an `extends`, the shipped pack
names. What only the tool can check is listed in the contract schema's `description`
(`tool_only_checks`); tests/test_schema_agreement.py runs both on every contract of the tests,
the examples and the packs, and requires them to agree.
"""
from __future__ import annotations

import ast
import functools
import inspect
import json
import sys
import typing
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

import msgspec

__all__ = ("CONTRACT_SCHEMA_URL", "SCHEMAS", "add_checks", "describe_fields", "for_version", "generate", "main",
           "match_definitions", "portable_patterns", "structs_of", "tool_only_checks", "trimmed_text",
           "with_match_trees")

BASE_URL = "https://raw.githubusercontent.com/agent-invariants/agent-invariants/main/schemas/"
CONTRACT_SCHEMA_URL = BASE_URL + "contract-v1.schema.json"
DRAFT = "https://json-schema.org/draft/2020-12/schema"


def _targets() -> dict[str, tuple[Any, str]]:
    from agent_invariants.contract import Contract
    from agent_invariants.events import Event
    from agent_invariants.lint.report import LintReport
    from agent_invariants.mutate.report import MutateReport
    from agent_invariants.report import CheckBatchReport, CheckReport, CompareBatchReport, CompareReport
    from agent_invariants.stability import StabilityReport

    return {
        "contract-v1.schema.json": (
            Contract, "An agent-invariants contract, version 1: the rules a trace is checked against."),
        "contract-v2.schema.json": (
            Contract, "An agent-invariants contract, version 2: the kinds of version 1 and those of version 2, "
                      "with match trees on arguments, results and outputs."),
        "event-v1.schema.json": (
            Event, "One event of an agent trace (a line of a JSONL trace, or an item of a JSON array trace)."),
        "check-report-v1.schema.json": (
            CheckReport, "The agent-invariants/check/v1 report (`check --format json`)."),
        "compare-report-v1.schema.json": (
            CompareReport, "The agent-invariants/compare/v1 report (`compare --format json`)."),
        "check-batch-report-v1.schema.json": (
            CheckBatchReport, "The agent-invariants/check-batch/v1 report (`check --format json` of several traces)."),
        "compare-batch-report-v1.schema.json": (
            CompareBatchReport, "The agent-invariants/compare-batch/v1 report (`compare --format json` of several "
                                "pairs)."),
        "stability-report-v1.schema.json": (
            StabilityReport, "The agent-invariants/stability/v1 report (`stability --format json`)."),
        "lint-report-v1.schema.json": (
            LintReport, "The agent-invariants/lint/v1 report (`lint --format json`)."),
        "mutate-report-v1.schema.json": (
            MutateReport, "The agent-invariants/mutate/v1 report (`mutate --format json`)."),
    }


SCHEMAS = ("contract-v1.schema.json", "contract-v2.schema.json", "event-v1.schema.json",
           "check-report-v1.schema.json", "compare-report-v1.schema.json", "check-batch-report-v1.schema.json",
           "compare-batch-report-v1.schema.json", "stability-report-v1.schema.json",
           "lint-report-v1.schema.json", "mutate-report-v1.schema.json")


def generate() -> dict[str, dict[str, Any]]:
    """Every schema, by file name."""
    out = {}
    for name, (struct, title) in _targets().items():
        schema = msgspec.json.schema(struct)
        structs = structs_of(struct)
        describe_fields(schema.get("$defs", {}), structs)
        add_checks(schema.get("$defs", {}), structs)
        portable_patterns(schema)
        head = {"$schema": DRAFT, "$id": BASE_URL + name, "title": title}
        if name.startswith("contract-v"):
            version = int(name[len("contract-v")])
            for_version(schema, version, structs)
            head["description"] = tool_only_checks(version)
        out[name] = {**head, **schema}
    return out


def for_version(schema: dict[str, Any], version: int, structs: dict[str, type]) -> None:
    """The contract schema made from the structs (which hold every version's kinds and fields)
    cut to one version: version 1 loses the kinds and fields of version 2; version 2 gets the
    match-tree definitions, so editors complete every operator and reference."""
    from agent_invariants.validation import since_version, version_2_fields

    definitions = schema["$defs"]
    contract = definitions["Contract"]["properties"]
    if version == 1:
        definitions["Contract"]["description"] = "A v1 contract: a named list of rules, and an optional compare policy."
        contract["version"] = {"enum": [1], "description": "Always the number 1."}
        newer = {name for name, struct in structs.items() if since_version(struct) > 1}
        rules = contract["rules"]["items"]
        rules["anyOf"] = [item for item in rules["anyOf"] if item["$ref"].rpartition("/")[2] not in newer]
        mapping = rules["discriminator"]["mapping"]
        for kind in [kind for kind, ref in mapping.items() if ref.rpartition("/")[2] in newer]:
            del mapping[kind]
        for name in newer:
            del definitions[name]
        for name, struct in structs.items():
            for field in version_2_fields(struct):
                definitions.get(name, {}).get("properties", {}).pop(field, None)
        _drop_unreachable(schema)   # the structs only version-2 kinds use (precedence's Correlated)
        return
    contract["version"] = {"enum": [2], "description": "2: the contract uses the kinds and fields of version 2."}
    with_match_trees(definitions)


def _drop_unreachable(schema: dict[str, Any]) -> None:
    """Remove the definitions no `$ref` reaches from the schema's root."""
    definitions = schema["$defs"]
    reached: set[str] = set()
    waiting: list[Any] = [{key: value for key, value in schema.items() if key != "$defs"}]
    while waiting:
        node = waiting.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                name = ref[len("#/$defs/"):]
                if name not in reached and name in definitions:
                    reached.add(name)
                    waiting.append(definitions[name])
            waiting.extend(node.values())
        elif isinstance(node, list):
            waiting.extend(node)
    for name in [name for name in definitions if name not in reached]:
        del definitions[name]


def with_match_trees(definitions: dict[str, Any]) -> None:
    """Add the match-tree and condition definitions, and point the fields that hold them there."""
    definitions.update(match_definitions())
    for fields, target in ((_MATCH_FIELDS, "MatchNode"), (_CONDITION_FIELDS, "Condition")):
        for name, field in fields:
            if name in definitions:
                properties = definitions[name]["properties"]
                properties[field] = {"$ref": f"#/$defs/{target}", "description": properties[field]["description"]}


_MATCH_FIELDS = (("ToolArgsConfig", "match"), ("EventMatcher", "args"), ("OutputMatchConfig", "match"))
"""The fields that hold a match tree: (definition, field)."""

_CONDITION_FIELDS = (("OutputMatchConfig", "when"), ("RequiredWhenConfig", "when"), ("ForbiddenWhenConfig", "when"))
"""The fields that hold a condition: (definition, field)."""


def _condition_definition() -> dict[str, Any]:
    """JSON Schema of a condition (`explain output_match`); the tool also checks its paths and trees."""
    from agent_invariants.rules.fields import GLOB_LIMIT

    condition = {"$ref": "#/$defs/Condition"}
    path = {"type": "string", "minLength": 1, "description": "A path into the final output."}
    branches = {"type": "array", "minItems": 2, "maxItems": 20, "items": condition}
    return {
        "description": "A condition on the whole run, judged at its end: true, false or unresolved.",
        "oneOf": [
            {"type": "object", "required": ["path", "equals"], "additionalProperties": False,
             "properties": {"path": path, "equals": {"description": "Equal to this value (JSON equality)."}}},
            {"type": "object", "required": ["path", "non_empty"], "additionalProperties": False,
             "properties": {"path": path, "non_empty": {"const": True, "description": "An array with an element."}}},
            {"type": "object", "required": ["path", "matches"], "additionalProperties": False,
             "properties": {"path": path, "matches": {
                 "$ref": "#/$defs/MatchNode",
                 "description": "Matches this tree ($from_result references read results before the "
                                "terminal event)."}}},
            {"type": "object", "required": ["outcome"], "additionalProperties": False,
             "properties": {"outcome": {
                 "type": "object", "required": ["outcome_id", "verdict"], "additionalProperties": False,
                 "description": "The last matching outcome.observed has this verdict.",
                 "properties": {"outcome_id": {"type": "string", **trimmed_text(GLOB_LIMIT),
                                               "description": "A glob on the outcome ids (trimmed, 1..500 long)."},
                                "verdict": {"enum": ["satisfied", "violated", "unknown", "retracted"],
                                            "description": "The verdict the last matching outcome must have."}}}}},
            {"type": "object", "required": ["any_of"], "additionalProperties": False,
             "properties": {"any_of": {**branches, "description": "Some condition holds (Kleene's logic)."}}},
            {"type": "object", "required": ["all_of"], "additionalProperties": False,
             "properties": {"all_of": {**branches, "description": "Every condition holds (Kleene's logic)."}}},
        ],
    }


def match_definitions() -> dict[str, Any]:
    """JSON Schema of match trees (`explain match`): what a schema can say of them. The tool also
    checks what it cannot (where references and `$exists` may stand, RE2 syntax, paths, depth)."""
    from agent_invariants.rules.fields import GLOB_LIMIT

    node = {"$ref": "#/$defs/MatchNode"}
    reference = {"$ref": "#/$defs/MatchReference"}
    number_or_reference = {"anyOf": [{"type": "number"}, reference]}
    path = {"type": "string", "minLength": 1, "description": "A dot path (`items.0.sku`) or a JSON Pointer (`/a~1b`)."}
    return {
        "Condition": _condition_definition(),
        "MatchNode": {
            "description": "A match tree: a literal (objects match as subsets, arrays by position, scalars by "
                           "JSON equality), an object of operators (only `$` keys, all must hold), or a reference.",
            "anyOf": [
                {"type": ["string", "number", "boolean", "null"]},
                {"type": "array", "items": node},
                {"type": "object", "propertyNames": {"not": {"pattern": "^[$]"}}, "additionalProperties": node},
                {"$ref": "#/$defs/MatchOperators"},
                reference,
            ],
        },
        "MatchOperators": {
            "type": "object", "minProperties": 1, "additionalProperties": False,
            "properties": {
                "$regex": {"type": "string", "maxLength": 500,
                           "description": "Unanchored search in RE2 syntax (no backreferences or lookaround); "
                                          "strings only."},
                "$in": {"anyOf": [{"type": "array", "maxItems": 1000}, reference],
                        "description": "Equal to one of these values (at most 1000), or to a reference's candidate "
                                       "(an array candidate gives its elements)."},
                "$gt": {**number_or_reference, "description": "A number greater than this."},
                "$gte": {**number_or_reference, "description": "A number greater than or equal to this."},
                "$lt": {**number_or_reference, "description": "A number less than this."},
                "$lte": {**number_or_reference, "description": "A number less than or equal to this."},
                "$exists": {"type": "boolean",
                            "description": "Whether the key is present (only as the value of a key)."},
                "$any_of": {"type": "array", "minItems": 2, "maxItems": 20, "items": node,
                            "description": "Some branch matches (2..20 branches)."},
                "$contains": {**node, "description": "Some element of the array matches."},
                "$literal": {"description": "Equal to this value, `$` keys and all (JSON equality)."},
            },
        },
        "MatchReference": {
            "description": "A set of candidate values found in the trace.",
            "oneOf": [
                {"type": "object", "required": ["$arg"], "additionalProperties": False,
                 "properties": {"$arg": {**path, "description": "A value of the checked call's args."}}},
                {"type": "object", "required": ["$from_output"], "additionalProperties": False,
                 "properties": {"$from_output": {**path, "description": "A value of the run's final output."}}},
                {"type": "object", "required": ["$from_result"], "additionalProperties": False,
                 "properties": {"$from_result": {
                     "type": "object", "required": ["tool"], "additionalProperties": False,
                     "description": "Values of earlier results of a tool.",
                     "properties": {
                         "tool": {"type": "string", **trimmed_text(GLOB_LIMIT),
                                  "description": "Glob on the producing call's tool (trimmed, 1..500 long)."},
                         "path": {**path, "description": "The value inside each result (default: the whole result)."},
                         "call_index": {"type": "integer", "minimum": 0, "maximum": 1_000_000,
                                        "description": "Only the result of the k-th call of the tool (0-based)."},
                         "where": {**node, "description": "Only results whose call's args match (`$arg` joins)."},
                         "where_result": {**node, "description": "Only results that match."},
                         "find": {**node, "description": "The first element of the array at `path` that matches."},
                         "select": {**path, "description": "The value inside the element `find` found."},
                         "length": {"type": "boolean", "description": "The array's length instead."},
                         "ok_only": {"type": "boolean",
                                     "description": "Leave out results with `ok: false` (default true)."},
                     }}}},
            ],
        },
    }


def structs_of(root: Any) -> dict[str, type]:
    """Every Struct class reachable from `root`, by name (as msgspec names its $defs)."""
    found: dict[str, type] = {}

    def visit(hint: Any) -> None:
        if isinstance(hint, type) and issubclass(hint, msgspec.Struct):
            if hint.__name__ in found:
                return
            found[hint.__name__] = hint
            for field in msgspec.structs.fields(hint):
                visit(field.type)
        for argument in typing.get_args(hint):
            visit(argument)

    visit(root)
    return found


def describe_fields(definitions: dict[str, Any], structs: dict[str, type]) -> None:
    """Give every property a description: the field's docstring, then its type's, if any."""
    for name, definition in definitions.items():
        struct = structs.get(name)
        docs = _field_docs(struct) if struct else {}
        python_names = {field.encode_name: field.name for field in msgspec.structs.fields(struct)} if struct else {}
        for field, spec in definition.get("properties", {}).items():
            own = docs.get(python_names.get(field, field))
            if field == "kind" and "enum" in spec and not own:
                own = f"The rule kind: `{spec['enum'][0]}`."
            parts = [part for part in (own, spec.get("description")) if part]
            spec["description"] = " ".join(dict.fromkeys(parts)) or _fallback(field)


def _field_docs(struct: type) -> dict[str, str]:
    """`name: type` followed by a string literal, in the class and its Struct bases."""
    docs: dict[str, str] = {}
    for cls in reversed(struct.__mro__):
        if isinstance(cls, type) and issubclass(cls, msgspec.Struct) and cls is not msgspec.Struct:
            docs.update(_docs_by_class(cls.__module__).get(cls.__qualname__, {}))
    return docs


@functools.cache
def _docs_by_class(module_name: str) -> dict[str, dict[str, str]]:
    """The field docstrings of each class a module defines, by qualified name. A module's source is
    parsed once: the schemas describe a few hundred structs of a few dozen modules, and reading
    each class's source on its own parsed its whole module each time (1.5 s of the MCP server's
    start-up, which describes its tools' arguments and reports)."""
    try:
        tree = ast.parse(inspect.getsource(sys.modules[module_name]))
    except (KeyError, OSError, TypeError, SyntaxError):
        return {}
    classes = _Classes()
    classes.visit(tree)
    found: dict[str, dict[str, str]] = {}
    for name, node in classes.found.items():
        docs = found[name] = {}
        for statement, following in pairwise(node.body):
            if (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
                    and isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
                    and isinstance(following.value.value, str)):
                docs[statement.target.id] = " ".join(following.value.value.split())
    return found


class _Classes(ast.NodeVisitor):
    """Each class of a module by qualified name (`Outer.Inner`, `function.<locals>.Local`); the
    first of two of one name, as `inspect.getsource` finds it."""

    def __init__(self) -> None:
        self.found: dict[str, ast.ClassDef] = {}
        self._names: list[str] = []

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._names += [node.name, "<locals>"]
        self.generic_visit(node)
        del self._names[-2:]

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._names.append(node.name)
        self.found.setdefault(".".join(self._names), node)
        self.generic_visit(node)
        self._names.pop()


def _fallback(field: str) -> str:
    return field.replace("_", " ").capitalize() + "."


def add_checks(definitions: dict[str, Any], structs: dict[str, type]) -> None:
    """Write into the definitions what the structs check in code, where JSON Schema can say it:
    trimmed text, and the checks of `_STRUCT_CHECKS` (tests/test_schema_agreement.py holds them
    to what the loader does)."""
    from agent_invariants.rules.fields import _LIMITS, string_fields
    from agent_invariants.validation import CONTRACT_TEXTS

    # text a struct trims and measures in its own `__post_init__` (rule options say it by their
    # type, `Glob` or `Text`): the most characters it may hold once trimmed
    trimmed_in_code = {"Contract": CONTRACT_TEXTS}
    for name, definition in definitions.items():
        struct = structs.get(name)
        if struct is None:
            continue
        properties = definition.get("properties", {})
        texts = {field: (limit, False) for field, limit in trimmed_in_code.get(name, {}).items()}
        texts.update({_encoded(struct, field): (_LIMITS[mark], is_list)
                      for field, (mark, is_list) in string_fields(struct).items()})
        for field, (limit, is_list) in texts.items():
            spec = properties[field]["items"] if is_list else properties[field]
            spec.update(trimmed_text(limit))
        check = _STRUCT_CHECKS.get(name)
        if check is not None:
            check(definition, struct)


def _encoded(struct: type, field: str) -> str:
    return next(item.encode_name for item in msgspec.structs.fields(struct) if item.name == field)


def trimmed_text(limit: int) -> dict[str, str]:
    """The pattern of a string that, trimmed as JavaScript trims it, holds 1..`limit` characters
    (the loader's `check_text`). The whitespace is spelled out, as `\\s` differs between Python
    and ECMA-262; the end anchor is the portable one."""
    from agent_invariants._js import JS_WHITESPACE

    space, solid = f"[{_char_class(JS_WHITESPACE)}]", f"[^{_char_class(JS_WHITESPACE)}]"
    return {"pattern": f"^{space}*{solid}(?:[\\s\\S]{{0,{limit - 2}}}{solid})?{space}*(?![\\s\\S])"}


def _char_class(chars: str) -> str:
    """The inside of a regex character class holding `chars`, as `\\uXXXX` escapes and ranges."""
    runs: list[list[int]] = []
    for code in sorted(set(map(ord, chars))):
        if runs and runs[-1][1] == code - 1:
            runs[-1][1] = code
        else:
            runs.append([code, code])
    return "".join(f"\\u{low:04x}" if low == high else f"\\u{low:04x}-\\u{high:04x}" for low, high in runs)


def _needs_a_rule(definition: dict[str, Any], struct: type) -> None:
    """A contract needs a rule of its own or a pack in `extends`; a pack entry names a shipped
    pack, and a path is never empty."""
    from agent_invariants.packs import PACK_PREFIX, available_packs

    definition["anyOf"] = [
        {"required": ["rules"], "properties": {"rules": {
            "minItems": 1, "description": "At least one rule of the contract's own, unless `extends` names a pack."}}},
        {"required": ["extends"], "properties": {"extends": {
            "minItems": 1, "description": "At least one pack, unless the contract has a rule of its own."}}},
    ]
    definition["properties"]["extends"]["items"]["anyOf"] = [
        {"enum": [PACK_PREFIX + pack for pack in available_packs()]},
        {"minLength": 1, "not": {"pattern": "^" + PACK_PREFIX}},
    ]


def _needs_a_key(definition: dict[str, Any], struct: type) -> None:
    """An event matcher needs at least one key (it allows no others)."""
    definition["minProperties"] = 1


def _needs_an_option(definition: dict[str, Any], struct: type) -> None:
    """A kind whose options are all optional but one is needed (event_budget's bounds)."""
    from agent_invariants.rules.base import RuleConfig

    options = [field.encode_name for field in msgspec.structs.fields(struct)
               if field.name not in RuleConfig.__struct_fields__]
    definition["anyOf"] = [{"required": [option]} for option in options]


def _max_not_below_default_min(definition: dict[str, Any], struct: type) -> None:
    """require_event's `min` defaults to 1, so a `max` without a `min` is at least 1 (`min` not
    above a `max` when both are given is the tool's to check)."""
    below = "Without `min` (which defaults to 1), `max` is at least 1; write `\"min\": 0, \"max\": 0` for never."
    definition["dependentSchemas"] = {
        "max": {"anyOf": [{"required": ["min"]}, {"properties": {"max": {"minimum": 1, "description": below}}}]}}


def _tool_args_fields(definition: dict[str, Any], struct: type) -> None:
    """tool_args needs one of match, schema, distinct; `distinct` excludes `call_index`; `ignore`
    needs `mode: exact`."""
    definition["anyOf"] = [{"required": ["match"]}, {"required": ["schema"]}, {"required": ["distinct"]}]
    definition["not"] = {"required": ["distinct", "call_index"]}
    definition["dependentSchemas"] = _IGNORE_NEEDS_EXACT


def _output_match_fields(definition: dict[str, Any], struct: type) -> None:
    """output_match's `ignore` needs `mode: exact`, as tool_args' does."""
    definition["dependentSchemas"] = _IGNORE_NEEDS_EXACT


_IGNORE_NEEDS_EXACT = {"ignore": {"required": ["mode"], "properties": {"mode": {
    "const": "exact", "description": "`ignore` is for `mode: exact` only."}}}}
"""tool_args' and output_match's `ignore` (top-level keys left out of `mode: exact`)."""


def _run_status_fields(definition: dict[str, Any], struct: type) -> None:
    """run_status needs exactly one of `equals` and `in`."""
    definition["oneOf"] = [{"required": ["equals"]}, {"required": ["in"]}]


def _tool_calls_fields(definition: dict[str, Any], struct: type) -> None:
    """tool_calls needs one of min, max, matches_output_length (min not above max is the tool's to check)."""
    definition["anyOf"] = [{"required": ["min"]}, {"required": ["max"]}, {"required": ["matches_output_length"]}]


_STRUCT_CHECKS: dict[str, Callable[[dict[str, Any], type], None]] = {
    "ToolArgsConfig": _tool_args_fields,
    "ToolCallsConfig": _tool_calls_fields,
    "OutputMatchConfig": _output_match_fields,
    "RunStatusConfig": _run_status_fields,
    "Contract": _needs_a_rule,
    "EventMatcher": _needs_a_key,
    "EventBudgetConfig": _needs_an_option,
    "RequireEventConfig": _max_not_below_default_min,
}
"""The checks a struct makes in `__post_init__` across its fields, by definition name."""


def tool_only_checks(version: int = 1) -> str:
    """The contract schema's description: what only the tool checks."""
    from agent_invariants.contract_source import MAX_CONTRACT_BYTES
    from agent_invariants.jsontext import MAX_NESTING
    from agent_invariants.packs import MAX_EXTENDS_DEPTH, MAX_PACK_LOADS
    from agent_invariants.validation import MAX_RULES

    newer = ("" if version == 1 else
             " (7) match trees (see `agent-invariants explain match`): `$exists` only as a key's value, references "
             "only where the rule allows them (none in a matcher's `args` or in `find`), `$regex` in RE2 syntax, "
             "`$from_result` without `call_index` beside `where`, at most 4 nested `$from_result`, 32 levels and "
             "10,000 nodes, paths that parse (a `correlate` path and `matches_output_length` too); a tool_args or "
             "output_schema `schema` is a valid JSON Schema with local `$ref` only; a tool_calls rule's `min` is "
             "not above its `max`.")
    return (
        f"An agent-invariants contract, version {version}. This schema checks all of a contract that JSON Schema "
        "can express; `agent-invariants validate` also checks what it cannot: "
        "(1) rule ids are unique among the contract's own rules (one with the id of a pack's rule replaces it); "
        "(2) a require_event rule's `min` is not above its `max`; "
        "(3) lengths are counted in UTF-16 code units, as JavaScript counts them: a character beyond U+FFFF, "
        "such as an emoji, counts twice, where a validator counting characters counts it once; "
        "(4) each `extends` path names a pack file (JSON, or YAML: an object with `rules` and optionally "
        "`$schema`, `name`, `description`, `extends`) whose rules are valid, no pack extends itself, packs "
        f"extend packs at most {MAX_EXTENDS_DEPTH} levels deep, at most {MAX_PACK_LOADS} pack files are "
        f"loaded, and there are 1..{MAX_RULES} rules in all, the packs' included; "
        f"(5) a contract or pack file is at most {MAX_CONTRACT_BYTES // 2**20} MiB and nested at most "
        f"{MAX_NESTING} levels deep; "
        "(6) numbers are JSON numbers: YAML's `.nan`, `.inf` and `-.inf`, which a validator of the decoded "
        "document sees as numbers, are refused. Globs have no syntax to check (`*` and `?` are the only wildcards, "
        "all else is literal). The MCP server takes only shipped packs in `extends`, never paths." + newer
    )


def portable_patterns(node: Any) -> Any:
    """Rewrite (in place, and return) every `pattern` ending in Python's `\\Z` for any validator."""
    if isinstance(node, dict):
        if isinstance(node.get("pattern"), str) and node["pattern"].endswith("\\Z"):
            node["pattern"] = node["pattern"][:-2] + "(?![\\s\\S])"
        for value in node.values():
            portable_patterns(value)
    elif isinstance(node, list):
        for value in node:
            portable_patterns(value)
    return node


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


_USAGE = """usage: python -m agent_invariants.schemas [--out DIR] [--check]

Write the JSON Schemas of contracts, traces and reports to DIR (default: schemas); with --check,
write nothing and exit 1 when a file there is missing or out of date."""


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if "-h" in args or "--help" in args:
        print(_USAGE)
        return 0
    if any(arg.startswith("-") and arg not in ("--out", "--check") for arg in args) or args[-1:] == ["--out"]:
        print(_USAGE, file=sys.stderr)
        return 2
    folder = Path(args[args.index("--out") + 1]) if "--out" in args else Path("schemas")
    stale = []
    for name, schema in generate().items():
        path = folder / name
        text = render(schema)
        if "--check" in args:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path))
        else:
            folder.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
    if stale:
        print("out of date (run python -m agent_invariants.schemas): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
