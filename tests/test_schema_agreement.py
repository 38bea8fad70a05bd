"""The contract schema rejects what the tool rejects: both judge every contract of the test suite,
the examples, the shipped packs and the conformance sample, and must agree, except where the tool
checks what JSON Schema cannot express (`TOOL_ONLY`, each named in the schema's description).

The contracts written inline in the tests are found by reading the test files: every dict literal
that is a contract (it has `version`) or a rule (it has `kind` and `id`; it is judged inside a
minimal contract), and every string constant holding a JSON or YAML contract. Names bound at a
module's top level are resolved, so `{**RULE, "severity": "warning"}` and `"a" * 201` count; a
new test's contract joins the corpus by being written.
"""
from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import jsonschema
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from agent_invariants import load_contract
from agent_invariants.errors import ContractError

from support import EXAMPLES, REPO

SCHEMA = json.loads((REPO / "schemas/contract-v1.schema.json").read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
VALIDATOR_V2 = jsonschema.Draft202012Validator(
    json.loads((REPO / "schemas/contract-v2.schema.json").read_text(encoding="utf-8")))
TESTS = REPO / "tests"


def schema_errors(document: Any) -> list[str]:
    """The errors of the schema of the document's version (the v1 schema's, unless it says 2)."""
    version_2 = isinstance(document, dict) and document.get("version") == 2 and document.get("version") is not True
    validator = VALIDATOR_V2 if version_2 else VALIDATOR
    return [f"$.{'.'.join(map(str, error.absolute_path))}: {error.message[:120]}"
            for error in validator.iter_errors(document)]


def tool_error(source: Any) -> ContractError | None:
    """The tool's verdict: None, or the error (which names the contract itself `contract`)."""
    try:
        load_contract(source, name="contract")
    except ContractError as error:
        return error
    return None


# -- what only the tool checks ----------------------------------------------------------------

def _at(document: Any, path: str) -> Any:
    """The value at a JSON path such as `$.rules[2].name` (None when there is none)."""
    for key, index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path):
        try:
            document = document[int(index)] if index else document[key]
        except (KeyError, IndexError, TypeError):
            return None
    return document


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _over_in_utf16_only(document: Any, path: str, message: str) -> bool:
    """Too long counted in UTF-16 code units, not too long counted in characters."""
    limit = re.search(r"must be at most (\d+) characters", message)
    value = _at(document, path)
    if limit is None or not isinstance(value, str):
        return False
    trimmed = value.strip("\t\n\v\f\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
                          "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")
    return len(trimmed) <= int(limit[1]) < _utf16(trimmed)


def _min_above_max(document: Any, path: str, message: str) -> bool:
    rule = _at(document, path)
    return ("min cannot exceed max" in message and isinstance(rule, dict)
            and "min" in rule and "max" in rule and rule["min"] > rule["max"])


def _in_packs(document: Any, path: str, message: str, source: str) -> bool:
    """A problem of an `extends` entry that is a path (the schema knows the shipped packs), of a
    pack file, or of the rules the packs brought."""
    entry = _at(document, path) if path.startswith("$.extends[") else None
    by_path = isinstance(entry, str) and not entry.startswith("agent-invariants:")
    no_rule = "needs at least one rule" in message and isinstance(document, dict) and bool(document.get("extends"))
    return by_path or source != "contract" or no_rule


def _in_match_grammar(path: str) -> bool:
    """A problem inside a version-2 match tree (a condition's `matches` too), argument schema or
    distinct list."""
    return re.search(r"^\$\.rules\[\d+\]\.(?:(?:match|before|after)\.args|match|schema|distinct|when(?:\.\w+|\[\d+\])*"
                     r"\.matches)(?:$|[.\[])", path) is not None


class ToolOnly(NamedTuple):
    """A check the schema cannot make: `described` is how the schema's description names it."""

    reason: str
    described: str
    applies: Callable[[Any, str, str, str], bool]   # (document, path, message, source)
    version: int = 1                                # the first contract version whose schema names it


TOOL_ONLY = (
    ToolOnly("rule ids must be unique: JSON Schema's uniqueItems compares whole items, not one key",
             "rule ids are unique",
             lambda document, path, message, source: message.startswith("duplicate rule id")),
    ToolOnly("require_event's min must not be above its max: JSON Schema compares no two values",
             "`min` is not above its `max`",
             lambda document, path, message, source: _min_above_max(document, path, message)),
    ToolOnly("lengths count UTF-16 code units; JSON Schema's maxLength and a Python regex count characters",
             "UTF-16 code units",
             lambda document, path, message, source: _over_in_utf16_only(document, path, message)),
    ToolOnly("NaN and the infinities are no JSON numbers; YAML has them, and a schema sees them as numbers",
             "numbers are JSON numbers",
             lambda document, path, message, source: message.endswith("is not a number JSON allows")),
    ToolOnly("match trees, argument schemas and distinct paths: where references and $exists may stand, RE2 "
             "syntax, nesting and size, paths that parse, a valid JSON Schema, and fields that exclude each other",
             "match trees (see",
             lambda document, path, message, source: _in_match_grammar(path), version=2),
    ToolOnly("packs named in extends are files the tool reads; a schema sees one document",
             "each `extends` path names a pack file",
             _in_packs),
)


def tool_only_reasons(document: Any, error: ContractError) -> set[str] | None:
    """The reasons the tool alone rejects `document`, or None if a problem has none."""
    reasons = set()
    for path, message, _line in error.problems:
        found = [check.reason for check in TOOL_ONLY
                 if check.applies(document, path or "$", message, error.source)]
        if not found:
            return None
        reasons.update(found)
    return reasons


# -- the corpus ---------------------------------------------------------------------------------

class Case(NamedTuple):
    where: str
    source: Any       # what load_contract reads: a document, or the path of a file
    document: Any     # what the schema judges


class _Unresolved(Exception):
    pass


def _value(node: ast.AST, names: dict[str, Any]) -> Any:
    """The value of a literal expression, with the module's top-level names resolved."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_value(item, names) for item in node.elts]
    if isinstance(node, ast.Dict):
        out: dict[Any, Any] = {}
        for key, item in zip(node.keys, node.values, strict=True):
            if key is None:
                spread = _value(item, names)
                if not isinstance(spread, dict):
                    raise _Unresolved
                out.update(spread)
            else:
                out[_value(key, names)] = _value(item, names)
        return out
    if isinstance(node, ast.Subscript):
        return _value(node.value, names)[_value(node.slice, names)]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_value(node.operand, names)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult)):
        left, right = _value(node.left, names), _value(node.right, names)
        return left + right if isinstance(node.op, ast.Add) else left * right
    raise _Unresolved


_UNKNOWN = object()


def _literal(node: ast.AST, names: dict[str, Any]) -> Any:
    """`_value`, or `_UNKNOWN` when the expression is not a literal (or fails, as `"a" * -1e9` would)."""
    try:
        return _value(node, names)
    except (_Unresolved, LookupError, TypeError, ValueError, OverflowError, MemoryError):
        return _UNKNOWN


def _as_contract(value: Any) -> Any:
    """`value` as a contract to judge, or None: a contract as it is, a rule inside a minimal one."""
    if not isinstance(value, dict):
        return None
    if "version" in value and ("name" in value or "rules" in value or "extends" in value):
        return value
    if isinstance(value.get("kind"), str) and "id" in value:
        return {"version": _version_of(value["kind"]), "name": "inline", "rules": [value]}
    return None


def _version_of(kind: str) -> int:
    """The contract version a rule kind needs (1 for kinds that do not exist)."""
    from agent_invariants.rules import RULE_KINDS

    rule = RULE_KINDS.get(kind)
    return 1 if rule is None else getattr(rule.config_type, "since_version", 1)


def _from_text(text: str) -> Any:
    """The contract a string constant holds, as JSON or as YAML (without anchors, which may
    make a document without end: the hostile tests have those)."""
    stripped = text.lstrip()
    try:
        if stripped.startswith("{"):
            return _as_contract(json.loads(text))
        if stripped.startswith("version:") and not re.search(r"[&*]\w", text) and len(text) < 100_000:
            return _as_contract(yaml.safe_load(text))
    except (ValueError, yaml.YAMLError):
        return None
    return None


def _inline(path: Path) -> list[Case]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: dict[str, Any] = {}
    for statement in tree.body:   # NAME = literal, NAME: type = literal
        if isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None:
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            value = _literal(statement.value, names)
            if len(targets) == 1 and isinstance(targets[0], ast.Name) and value is not _UNKNOWN:
                names[targets[0].id] = value
    cases = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            document = _from_text(node.value)
        elif isinstance(node, ast.Dict):
            document = _as_contract(_literal(node, names))
        else:
            continue
        if document is not None:
            cases.append(Case(f"{path.relative_to(REPO)}:{node.lineno}", document, document))
    return cases


def _files() -> list[Case]:
    cases = []
    for path in [*sorted(EXAMPLES.glob("*/*.json")), *sorted((REPO / "agent_invariants/samples").glob("*.json"))]:
        document = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(document, dict) and "version" in document:   # not a trace
            cases.append(Case(str(path.relative_to(REPO)), path, document))
    for path in sorted((REPO / "rules").glob("*.json")):   # a pack: its rules inside a minimal contract
        pack = json.loads(path.read_text(encoding="utf-8"))
        document = {"version": 1, "name": pack["name"], "rules": pack["rules"]}
        cases.append(Case(str(path.relative_to(REPO)), document, document))
    sample = json.loads((TESTS / "data/conformance-contracts.json").read_text(encoding="utf-8"))
    cases += [Case(f"conformance/{name}", document, document) for name, document in sample["contracts"].items()]
    return cases


def corpus() -> list[Case]:
    """Every contract once (the first place it is written), files first."""
    cases = _files() + [case for path in sorted(TESTS.rglob("test_*.py")) for case in _inline(path)]
    seen: set[str] = set()
    unique = []
    for case in cases:
        key = json.dumps(case.document, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            unique.append(case)
    return unique


CORPUS = corpus()

PACK_FILES = {
    "cycle-a.json": {"extends": ["cycle-b.json"], "rules": []},
    "cycle-b.json": {"extends": ["cycle-a.json"], "rules": []},
    "no-rules.json": {"name": "no-rules", "rules": []},
    "blank-glob.json": {"rules": [{"id": "p", "kind": "deny_tool", "tool": " "}]},
}
"""Pack files in the folder every contract is loaded from (the contracts name them by path)."""


@pytest.fixture
def in_pack_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, pack in PACK_FILES.items():
        (tmp_path / name).write_text(json.dumps(pack), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def verdicts(case: Case) -> tuple[ContractError | None, list[str]]:
    return tool_error(case.source), schema_errors(case.document)


@pytest.mark.parametrize("case", CORPUS, ids=[case.where for case in CORPUS])
def test_the_schema_and_the_tool_agree(case, in_pack_folder):
    error, problems = verdicts(case)
    if error is None:
        assert problems == [], f"the tool accepts {case.where}, the schema does not"
    elif not problems:
        reasons = tool_only_reasons(case.document, error)
        assert reasons, f"the tool rejects {case.where} and the schema accepts it:\n{error}"


def test_the_corpus_holds_the_contracts_of_the_tests_the_examples_and_the_packs():
    places = {case.where.split(":")[0].split("/")[0] for case in CORPUS}
    assert {"examples", "rules", "conformance", "agent_invariants", "tests"} <= places
    inline = [case.where.split(":")[0] for case in CORPUS if case.where.startswith("tests/")]
    assert {"tests/test_contract.py", "tests/test_packs.py", "tests/rules/test_event_budget.py",
            "tests/test_authoring.py", "tests/test_schema_agreement.py"} <= set(inline)
    assert sum(where != "tests/test_schema_agreement.py" for where in inline) > 150


def test_every_tool_only_check_is_met_and_named_in_the_schema_description(in_pack_folder):
    met = set()
    for case in CORPUS:
        error, problems = verdicts(case)
        if error is not None and not problems:
            met |= tool_only_reasons(case.document, error) or set()
    assert met == {check.reason for check in TOOL_ONLY}
    for check in TOOL_ONLY:
        assert check.described in VALIDATOR_V2.schema["description"], check.reason
        if check.version == 1:
            assert check.described in SCHEMA["description"], check.reason


# -- hand-written contracts, for each check the schema makes beyond msgspec's ------------------

BASE = {"version": 1, "name": "x", "rules": [{"id": "a", "kind": "deny_tool", "tool": "shell.*"}]}
MATCH = {"type": "tool.call"}
PADDING = " \t\n\u00a0\u3000\ufeff"

BOTH_REJECT = {
    "budget without a bound": {**BASE, "rules": [{"id": "b", "kind": "event_budget"}]},
    "budget with only a severity": {**BASE, "rules": [{"id": "b", "kind": "event_budget", "severity": "warning"}]},
    "empty deny_event matcher": {**BASE, "rules": [{"id": "e", "kind": "deny_event", "match": {}}]},
    "empty require_event matcher": {**BASE, "rules": [{"id": "e", "kind": "require_event", "match": {}}]},
    "empty before": {**BASE, "rules": [{"id": "o", "kind": "require_order", "before": {}, "after": MATCH}]},
    "empty after": {**BASE, "rules": [{"id": "o", "kind": "require_order", "before": MATCH, "after": {}}]},
    "max 0 under the default min 1": {**BASE, "rules": [{"id": "e", "kind": "require_event", "match": MATCH,
                                                         "max": 0}]},
    "empty rules": {"version": 1, "name": "x", "rules": []},
    "no rules": {"version": 1, "name": "x"},
    "empty rules and empty extends": {"version": 1, "name": "x", "rules": [], "extends": []},
    "unknown shipped pack": {"version": 1, "name": "x", "extends": ["agent-invariants:payment"]},
    "bare pack prefix": {"version": 1, "name": "x", "extends": ["agent-invariants:"]},
    "empty pack path": {**BASE, "extends": [""]},
    "blank name": {**BASE, "name": " \t "},
    "name only a BOM": {**BASE, "name": "\ufeff"},
    "name of 201 characters": {**BASE, "name": "n" * 201},
    "blank description": {**BASE, "description": "\u3000"},
    "description of 5001 characters": {**BASE, "description": "d" * 5001},
    "blank rule description": {**BASE, "rules": [{**BASE["rules"][0], "description": "  "}]},
    "rule description of 2001": {**BASE, "rules": [{**BASE["rules"][0], "description": "d" * 2001}]},
    "blank tool": {**BASE, "rules": [{"id": "a", "kind": "deny_tool", "tool": "\u2028"}]},
    "tool of 501 characters": {**BASE, "rules": [{"id": "a", "kind": "deny_tool", "tool": "t" * 501}]},
    "blank allowed tool": {**BASE, "rules": [{"id": "a", "kind": "allow_tools", "tools": ["kb.*", " "]}]},
    "blank scope": {**BASE, "rules": [{"id": "a", "kind": "require_approval", "tool": "p.*", "scope": "\t"}]},
    "blank stop_type": {**BASE, "rules": [{"id": "a", "kind": "stop_is_final", "stop_type": " "}]},
    "blank allowed_after": {**BASE, "rules": [{"id": "a", "kind": "stop_is_final", "allowed_after": ["\n"]}]},
    "blank completion type": {**BASE, "rules": [{"id": "a", "kind": "completion_requires_outcome",
                                                 "completion_types": [" "]}]},
    "blank outcome_id": {**BASE, "rules": [{"id": "a", "kind": "completion_requires_outcome", "outcome_id": " "}]},
    "blank retry tool": {**BASE, "rules": [{"id": "a", "kind": "retry_limit", "tool": " ", "max_attempts": 1}]},
    "blank result tool": {**BASE, "rules": [{"id": "a", "kind": "tool_result_required", "tool": "\u205f"}]},
    "blank matcher tool": {**BASE, "rules": [{"id": "a", "kind": "deny_event", "match": {"tool": " "}}]},
    "blank matcher outcome": {**BASE, "rules": [{"id": "a", "kind": "deny_event", "match": {"outcome_id": " "}}]},
}

BOTH_ACCEPT = {
    "budget with one bound": {**BASE, "rules": [{"id": "b", "kind": "event_budget", "max_tool_failures": 0}]},
    "matcher with one key": {**BASE, "rules": [{"id": "e", "kind": "deny_event", "match": {"ok": False}}]},
    "min 0 max 0": {**BASE, "rules": [{"id": "e", "kind": "require_event", "match": MATCH, "min": 0, "max": 0}]},
    "max 1 under the default min": {**BASE, "rules": [{"id": "e", "kind": "require_event", "match": MATCH,
                                                       "max": 1}]},
    "only a shipped pack": {"version": 1, "name": "x", "extends": ["agent-invariants:payments"]},
    "a shipped pack and no rules": {"version": 1, "name": "x", "extends": ["agent-invariants:payments"], "rules": []},
    "name of 200 characters in padding": {**BASE, "name": PADDING + "n" * 200 + PADDING},
    "name of 200 with inner spaces": {**BASE, "name": "n" + " " * 198 + "n"},
    "description of 5000 in padding": {**BASE, "description": PADDING + "d" * 5000 + PADDING},
    "tool of 500 in padding": {**BASE, "rules": [{"id": "a", "kind": "deny_tool", "tool": PADDING + "t" * 500}]},
    "name of a character Python strips and JavaScript keeps": {**BASE, "name": "\u0085"},
    "tool of a separator Python strips and JavaScript keeps": {**BASE, "rules": [{"id": "a", "kind": "deny_tool",
                                                                                  "tool": "\x1c"}]},
    "matcher type of spaces (not trimmed)": {**BASE, "rules": [{"id": "a", "kind": "deny_event",
                                                                "match": {"type": " "}}]},
}

V2 = {"version": 2, "name": "x"}
BOTH_REJECT_V2 = {
    "unknown operator": {**V2, "rules": [{"id": "a", "kind": "tool_args", "match": {"q": {"$regx": "a"}}}]},
    "operator mixed with a key": {**V2, "rules": [{"id": "a", "kind": "tool_args",
                                                  "match": {"q": {"$regex": "a", "x": 1}}}]},
    "$any_of with one branch": {**V2, "rules": [{"id": "a", "kind": "tool_args", "match": {"q": {"$any_of": [1]}}}]},
    "$gt on a string": {**V2, "rules": [{"id": "a", "kind": "tool_args", "match": {"q": {"$gt": "100"}}}]},
    "unknown $from_result field": {**V2, "rules": [{"id": "a", "kind": "tool_args", "match": {
        "q": {"$from_result": {"tool": "get", "paths": "a"}}}}]},
    "tool_args without a check": {**V2, "rules": [{"id": "a", "kind": "tool_args", "tool": "x"}]},
    "distinct with call_index": {**V2, "rules": [{"id": "a", "kind": "tool_args", "distinct": ["q"], "call_index": 0}]},
    "ignore without mode exact": {**V2, "rules": [{"id": "a", "kind": "tool_args", "match": {}, "ignore": ["a"]}]},
    "output_match ignore without mode exact": {**V2, "rules": [{"id": "a", "kind": "output_match", "match": {},
                                                                "ignore": ["a"]}]},
    "run_status with neither equals nor in": {**V2, "rules": [{"id": "a", "kind": "run_status"}]},
    "run_status with both equals and in": {**V2, "rules": [{"id": "a", "kind": "run_status", "equals": "completed",
                                                            "in": ["failed"]}]},
    "blank $from_result tool": {**V2, "rules": [{"id": "a", "kind": "tool_args", "match": {
        "q": {"$from_result": {"tool": " \t "}}}}]},
    "$from_result tool over 500": {**V2, "rules": [{"id": "a", "kind": "tool_args", "match": {
        "q": {"$from_result": {"tool": "t" * 501}}}}]},
    "blank outcome_id": {**V2, "rules": [{"id": "a", "kind": "forbidden_when", "tool": "x", "when": {
        "outcome": {"outcome_id": "  ", "verdict": "violated"}}}]},
    "outcome_id over 500": {**V2, "rules": [{"id": "a", "kind": "forbidden_when", "tool": "x", "when": {
        "outcome": {"outcome_id": "o" * 501, "verdict": "violated"}}}]},
    "matcher args in version 1": {**BASE, "rules": [{"id": "a", "kind": "deny_event", "match": {"args": {"q": 1}}}]},
}
BOTH_ACCEPT_V2 = {
    "every operator": {**V2, "rules": [{"id": "a", "kind": "tool_args", "match": {
        "a": {"$regex": "^A[0-9]+$"}, "b": {"$in": [1, 2]}, "c": {"$gt": 0, "$lte": 10}, "d": {"$exists": False},
        "e": {"$any_of": [1, {"$regex": "x"}]}, "f": {"$contains": {"sku": "A1"}}, "g": {"$literal": {"$x": 1}},
        "h": {"$arg": "a"}, "i": {"$from_output": "total"},
        "j": {"$from_result": {"tool": "get", "path": "paid", "where": {"id": {"$arg": "order"}}, "ok_only": False}},
    }}]},
    "matcher args": {**V2, "rules": [{"id": "a", "kind": "deny_event",
                                      "match": {"type": "tool.call", "args": {"q": {"$regex": "^rm"}}}}]},
}
TOOL_ONLY_CASES = {
    "lookahead in $regex": {**V2, "rules": [{"id": "a", "kind": "tool_args", "match": {"q": {"$regex": "(?=a)"}}}]},
    "$exists at the root": {**V2, "rules": [{"id": "a", "kind": "tool_args", "match": {"$exists": True}}]},
    "reference in a matcher": {**V2, "rules": [{"id": "a", "kind": "deny_event",
                                                "match": {"args": {"q": {"$arg": "x"}}}}]},
    "remote $ref in a schema": {**V2, "rules": [{"id": "a", "kind": "tool_args",
                                                 "schema": {"$ref": "https://example.com/s.json"}}]},
    "duplicate ids": {**BASE, "rules": [BASE["rules"][0], BASE["rules"][0]]},
    "min above max": {**BASE, "rules": [{"id": "e", "kind": "require_event", "match": MATCH, "min": 3, "max": 2}]},
    "emoji over the limit in UTF-16": {**BASE, "name": "\U0001f600" * 101},
    "pack file not found": {**BASE, "extends": ["missing.json"]},
    "pack cycle": {**BASE, "extends": ["cycle-a.json"]},
    "pack with a blank glob": {**BASE, "extends": ["blank-glob.json"]},
    "packs with no rules": {"version": 1, "name": "x", "extends": ["no-rules.json"]},
}


@pytest.mark.parametrize("name", list(BOTH_REJECT) + list(BOTH_REJECT_V2))
def test_the_schema_rejects_what_the_tool_rejects(name, in_pack_folder):
    document = {**BOTH_REJECT, **BOTH_REJECT_V2}[name]
    error, problems = verdicts(Case(name, document, document))
    assert error is not None and problems, (error, problems)


@pytest.mark.parametrize("name", list(BOTH_ACCEPT) + list(BOTH_ACCEPT_V2))
def test_the_schema_accepts_what_the_tool_accepts(name, in_pack_folder):
    document = {**BOTH_ACCEPT, **BOTH_ACCEPT_V2}[name]
    assert verdicts(Case(name, document, document)) == (None, [])


@pytest.mark.parametrize("name", list(TOOL_ONLY_CASES))
def test_only_the_tool_checks_these(name, in_pack_folder):
    document = TOOL_ONLY_CASES[name]
    error, problems = verdicts(Case(name, document, document))
    assert error is not None and problems == []
    assert tool_only_reasons(document, error)


@pytest.mark.parametrize(("rule", "tool_says", "schema_path"), [
    ({"id": "b", "kind": "event_budget"}, "$.rules[0]: set at least one budget", "$.rules.0"),
    ({"id": "e", "kind": "deny_event", "match": {}}, "$.rules[0].match: a matcher needs at least one of", "$.rules.0"),
])
def test_validate_and_the_schema_refuse_the_same_file(cli, write, rule, tool_says, schema_path):
    path = write("contract.json", {**BASE, "rules": [rule]})
    result = cli("validate", "--contract", "contract.json")
    assert result.returncode == 2
    assert "contract.json:" in result.stderr and tool_says in result.stderr
    assert any(problem.startswith(schema_path) for problem in schema_errors(json.loads(path.read_text())))


def test_validate_and_the_schema_refuse_a_contract_without_rules(cli, write):
    path = write("contract.json", {"version": 1, "name": "x", "rules": []})
    result = cli("validate", "--contract", "contract.json")
    assert result.returncode == 2
    assert "contract.json:4: $.rules: " in result.stderr and "got 0" in result.stderr
    assert schema_errors(json.loads(path.read_text()))


JS_SPACE = "\t\n\v\f\r \xa0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
PYTHON_ONLY_SPACE = "\x1c\x1d\x1e\x1f\x85"   # str.strip() removes these, JavaScript's trim() does not


@given(st.text(JS_SPACE + PYTHON_ONLY_SPACE, max_size=3), st.text(JS_SPACE + PYTHON_ONLY_SPACE + "n", max_size=3),
       st.integers(196, 204), st.text(JS_SPACE + PYTHON_ONLY_SPACE, max_size=3))
def test_trimmed_length_is_judged_alike(lead, inner, length, trail):
    name = lead + inner + "n" * (length - 2 * len(inner)) + inner + trail
    document = {**BASE, "name": name}
    assert (tool_error(document) is None) == (schema_errors(document) == []), repr(name)
