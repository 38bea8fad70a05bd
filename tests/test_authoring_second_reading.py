"""Authoring contract version 2, read a second time from the spec (v2-extensions §0, §2, §3, §9, §10)
and the README's "Writing contracts" and version-2 sections: `explain`, the JSON Schema of version 2,
did-you-mean suggestions, rule packs, `validate`, and the examples of every kind's manual."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conftest import Cli
from support import REPO

Rule = dict[str, Any]

V1_KINDS = [
    "deny_tool", "allow_tools", "require_approval", "stop_is_final", "completion_requires_outcome",
    "retry_limit", "event_budget", "require_order", "require_event", "deny_event", "tool_result_required",
    "confidence_requires_outcome",
]
V2_KINDS = [
    "tool_args", "tool_order", "precedence", "tool_calls", "approval_bound", "latency_budget", "result_size",
    "run_duration", "output_match", "output_schema", "run_status", "required_when", "forbidden_when",
    "failure_handled",
]
# §3.1-§3.9 name fourteen new kinds (the README: tool_args, "four more" and "nine more").
ALL_KINDS = V1_KINDS + V2_KINDS

COMMON = {"id", "kind", "severity", "description"}
# §3.1-§3.9: the fields of every new kind.
SPEC_FIELDS: dict[str, set[str]] = {
    "tool_args": {"tool", "call_index", "match", "mode", "ignore", "schema", "distinct"},
    "tool_order": {"tools", "mode"},
    "precedence": {"before", "after", "scope", "correlate", "within_events"},
    "tool_calls": {"tool", "min", "max", "matches_output_length", "count"},
    "approval_bound": {"tool", "scope", "one_use", "bind", "max_age_events", "max_age_ms", "revoked_by",
                       "require_approver"},
    "latency_budget": {"tool", "max_ms", "percentile", "on_missing"},
    "result_size": {"tool", "max_bytes", "on_missing"},
    "run_duration": {"max_ms"},
    "output_match": {"match", "mode", "ignore", "when"},
    "output_schema": {"schema"},
    "run_status": {"equals", "in"},
    "required_when": {"tool", "when", "min", "count", "iff"},
    "forbidden_when": {"tool", "when"},
    "failure_handled": {"tool", "within_events", "by", "message_types", "message_refs_call", "retry_succeeds"},
}
# §3 (and §10.22 for result_size's on_missing): every option value.
SPEC_VALUES: list[tuple[str, str, set[str]]] = [
    ("tool_args", "mode", {"subset", "exact"}),
    ("output_match", "mode", {"subset", "exact"}),
    ("tool_order", "mode", {"subsequence", "exact", "contiguous", "any_order"}),
    ("precedence", "scope", {"each", "first", "all"}),
    ("tool_calls", "count", {"calls", "successful"}),
    ("required_when", "count", {"calls", "successful"}),
    ("approval_bound", "bind", {"none", "args", "args_subset", "call_id"}),
    ("latency_budget", "on_missing", {"fail", "skip"}),
    ("result_size", "on_missing", {"fail", "skip"}),
    ("failure_handled", "by", {"retry", "message", "any"}),
]
# §2 "Operators", "References" and the `$from_result` field list.
OPERATORS = {"$regex", "$in", "$gt", "$gte", "$lt", "$lte", "$exists", "$any_of", "$contains", "$literal"}
REFERENCES = {"$arg", "$from_output", "$from_result"}
FROM_RESULT_FIELDS = {"tool", "path", "call_index", "where", "where_result", "find", "select", "length",
                      "ok_only"}

# Every example contract of spec v2 §3.1-§3.9, as written there.
SPEC_EXAMPLES: dict[str, list[Rule]] = {
    "3.1": [{"id": "refund-args", "kind": "tool_args", "tool": "refund", "match": {
        "order": {"$regex": "^A[0-9]+$"},
        "amount": {"$from_result": {"tool": "get", "path": "paid", "where": {"id": {"$arg": "order"}}}}}}],
    "3.2": [{"id": "flow", "kind": "tool_order", "tools": ["auth.*", "get", "refund"]}],
    "3.3": [{"id": "lookup-first", "kind": "precedence", "before": {"type": "tool.result", "tool": "get", "ok": True},
             "after": {"type": "tool.call", "tool": "refund"}, "correlate": [{"before": "id", "after": "order"}]}],
    "3.4": [{"id": "refunds-match", "kind": "tool_calls", "tool": "refund", "count": "successful",
             "matches_output_length": "refunds"}],
    "3.5": [{"id": "refund-approved", "kind": "approval_bound", "tool": "refund", "bind": "args_subset"}],
    "3.6": [{"id": "fast", "kind": "latency_budget", "tool": "search", "max_ms": 2000},
            {"id": "small", "kind": "result_size", "tool": "search", "max_bytes": 64},
            {"id": "quick", "kind": "run_duration", "max_ms": 60000}],
    "3.7": [{"id": "done", "kind": "run_status", "equals": "completed"},
            {"id": "shape", "kind": "output_schema", "schema": {"type": "object", "required": ["total"]}},
            {"id": "true-total", "kind": "output_match",
             "match": {"total": {"$from_result": {"tool": "ledger", "path": "total"}}}}],
    "3.8": [{"id": "refund-iff-reported", "kind": "required_when", "tool": "refund",
             "when": {"path": "refunds", "non_empty": True}, "iff": True},
            {"id": "no-mail-on-fraud", "kind": "forbidden_when", "tool": "email",
             "when": {"outcome": {"outcome_id": "fraud", "verdict": "violated"}}}],
    "3.9": [{"id": "handle-search", "kind": "failure_handled", "tool": "search", "within_events": 2}],
}

# §2: one rule per grammar element (operators, references, `$from_result` fields, conditions, matcher keys).
GRAMMAR_EXAMPLES: dict[str, Rule] = {
    "operators": {"id": "ops", "kind": "tool_args", "tool": "t", "match": {
        "a": {"$regex": "^x"}, "b": {"$in": [1, 2]}, "c": {"$gt": 0, "$lt": 9}, "d": {"$gte": 0, "$lte": 9},
        "e": {"$exists": False}, "f": {"$any_of": [1, {"$exists": True}]}, "g": {"$contains": {"sku": "x"}},
        "h": {"$literal": {"$regex": "not an operator"}}, "i": [1, {"k": None}]}},
    "references": {"id": "refs", "kind": "tool_args", "tool": "t", "match": {
        "a": {"$arg": "b"}, "c": {"$from_output": "total"}, "d": {"$in": {"$from_result": {
            "tool": "g", "path": "items", "find": {"sku": "x"}, "select": "id", "ok_only": False}}},
        "e": {"$lte": {"$from_result": {"tool": "g", "call_index": 0, "path": "/list", "length": True}}},
        "f": {"$from_result": {"tool": "g", "where_result": {"ok": True}}}}},
    "conditions": {"id": "conds", "kind": "required_when", "tool": "t", "when": {"any_of": [
        {"path": "a", "equals": 1}, {"all_of": [{"path": "b", "non_empty": True},
                                                {"path": "c", "matches": {"$gt": 1}}]},
        {"outcome": {"outcome_id": "o*", "verdict": "satisfied"}}]}},
    "matchers": {"id": "m", "kind": "require_event", "match": {
        "type": "run.failed", "args": {"x": {"$gt": 1}}, "reason": "budget*", "status": "fail*"}},
    "stop reasons": {"id": "s", "kind": "stop_is_final", "reasons": ["user*"]},
}


def v2_schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((REPO / "schemas" / "contract-v2.schema.json").read_text(encoding="utf-8"))
    return data


def schema_errors(document: dict[str, Any]) -> list[str]:
    validator = jsonschema.Draft202012Validator(v2_schema())
    return [error.message for error in validator.iter_errors(document)]


def config_def(kind: str) -> dict[str, Any]:
    """The schema's definition of one kind (found through the `kind` const/enum)."""
    for definition in v2_schema()["$defs"].values():
        kind_property = definition.get("properties", {}).get("kind", {})
        if kind in kind_property.get("enum", []) or kind_property.get("const") == kind:
            return dict(definition)
    raise AssertionError(f"no schema definition for {kind}")


def document(rules: list[Rule], version: int = 2, **extra: Any) -> dict[str, Any]:
    return {"version": version, "name": "authoring", "rules": rules, **extra}


def write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def validate(cli: Cli, tmp_path: Path, data: dict[str, Any]) -> tuple[int, str, list[str]]:
    write_json(tmp_path / "c.json", data)
    result = cli("validate", "--contract", "c.json")
    assert "Traceback" not in result.stderr
    return result.returncode, result.stdout, result.stderr.splitlines()


def refused(cli: Cli, tmp_path: Path, rule: Rule, version: int = 2) -> str:
    """`validate` refuses a one-rule contract with exactly one stderr line; returns it."""
    code, out, lines = validate(cli, tmp_path, document([rule], version))
    assert (code, out) == (2, ""), lines
    assert len(lines) == 1 and lines[0].startswith("agent-invariants: c.json:"), lines
    return lines[0]


EXPLAINED: dict[tuple[str, ...], str] = {}


def explain(cli: Cli, *args: str) -> str:
    """`explain ARGS` (exit 0, nothing on stderr); its output does not depend on the folder, so it is
    kept for the other tests."""
    if args not in EXPLAINED:
        result = cli("explain", *args)
        assert (result.returncode, result.stderr) == (0, ""), result.stderr
        EXPLAINED[args] = result.stdout
    return EXPLAINED[args]


def flat(text: str) -> str:
    return " ".join(text.split())


# -- explain -------------------------------------------------------------------------------------


def test_explain_lists_every_kind(cli: Cli) -> None:
    """README: "`agent-invariants explain` lists the kinds" — the twelve of v1 and every kind of §3."""
    first_words = [line.split()[0] for line in explain(cli).splitlines() if line.strip()]
    assert set(ALL_KINDS) <= set(first_words)


def test_explain_list_has_a_summary_per_kind(cli: Cli) -> None:
    """README: `explain` lists the kinds, each with what it checks (a non-empty one-line summary)."""
    lines = {line.split()[0]: line for line in explain(cli).splitlines() if line.strip()}
    for kind in ALL_KINDS:
        assert lines[kind].split(maxsplit=1)[1].startswith("Fails "), lines[kind]


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_explain_kind_prints_its_manual(cli: Cli, kind: str) -> None:
    """README: "Each rule kind's full manual (what it checks, why it matters, a failing and a passing
    trace, its options and known limits)" and "explain KIND says which of its parts are" safety or not."""
    text = explain(cli, kind)
    assert text.startswith(f"{kind}: ")
    for heading in ("## What it checks", "## Why it matters", "## Failing trace", "## Passing trace",
                    "## Options", "## Known limits", "## Fields", "## On a trace cut short (--partial)"):
        assert heading in text, heading


@pytest.mark.parametrize("kind", V2_KINDS)
def test_explain_fields_name_every_spec_field(cli: Cli, kind: str) -> None:
    """§3: every field of every new kind appears in its manual's field table."""
    fields = set(re.findall(r"^- `([a-z_]+)` \(", explain(cli, kind).split("## Fields")[1], re.M))
    assert SPEC_FIELDS[kind] | COMMON <= fields


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_explain_fields_agree_with_the_schema(cli: Cli, kind: str) -> None:
    """README "Writing contracts": the schemas are "generated from the same structs the loader uses"; the
    manual's field table and the version-2 schema name the same fields for each kind."""
    fields = set(re.findall(r"^- `([a-z_]+)` \(", explain(cli, kind).split("## Fields")[1], re.M))
    assert fields == set(config_def(kind)["properties"])


@pytest.mark.parametrize("kind", V2_KINDS)
def test_explain_names_every_option_value(cli: Cli, kind: str) -> None:
    """§3: each option's values (mode, scope, count, bind, on_missing, by) are documented in the manual."""
    text = explain(cli, kind)
    for owner, _field, values in SPEC_VALUES:
        if owner == kind:
            for value in values:
                assert f"`{value}`" in text, value


def test_explain_tool_args_names_every_code(cli: Cli) -> None:
    """§3.1 Semantics lists the codes; §10.1: code = `<kind>.<reason>`."""
    text = explain(cli, "tool_args")
    for reason in ("args_missing", "mismatch", "reference_unresolved", "schema", "not_distinct",
                   "distinct_missing", "call_missing"):
        assert f"tool_args.{reason}" in text, reason


def test_explain_match_names_every_operator_and_reference(cli: Cli) -> None:
    """§2 "Operators" and "References": the grammar manual (issue: "a manual for the grammar")."""
    text = explain(cli, "match")
    assert text.startswith("match: ")
    for name in sorted(OPERATORS | REFERENCES):
        assert f"`{name}`" in text, name


def test_explain_match_names_the_from_result_fields(cli: Cli) -> None:
    """§2: `$from_result {tool, path?, call_index?, where?, where_result?, find?, select?, length?, ok_only?}`."""
    text = explain(cli, "match")
    for field in sorted(FROM_RESULT_FIELDS - {"tool"}):
        assert f"`{field}" in text, field


def test_explain_match_states_the_limits_and_reasons(cli: Cli) -> None:
    """§2: depth ≤ 32, ≤ 10k nodes, `$regex` ≤ 500 chars, `$in` ≤ 1000, `$any_of` 2..20; reasons
    `ambiguous` and `no_candidates`; at most 4 nested hops."""
    text = flat(explain(cli, "match"))
    for needle in ("32", "10,000", "500", "1000", "2..20", "`ambiguous`", "`no_candidates`", "four"):
        assert needle in text, needle


def test_explain_match_states_type_strict_equality(cli: Cli) -> None:
    """§2 "Paths and equality": `true≠1`, `1=1.0`; null is found."""
    text = flat(explain(cli, "match"))
    assert "`true` is not `1`" in text and "`1` is `1.0`" in text and "`null` is found" in text


def test_conditions_are_documented(cli: Cli) -> None:
    """§2 "Conditions": the six forms, documented where conditions are taken (output_match's `when`)."""
    text = flat(explain(cli, "output_match"))
    for needle in ('"equals"', '"non_empty"', '"matches"', '"outcome"', '"any_of"', '"all_of"', "Kleene"):
        assert needle in text, needle


def test_explain_unknown_kind_suggests(cli: Cli) -> None:
    """Spec silent on `explain` of an unknown name; the product refuses it (exit 2) with a suggestion,
    consistent with the loader's did-you-mean (README "Every problem at once")."""
    result = cli("explain", "tool_arg")
    assert (result.returncode, result.stdout) == (2, "")
    assert "did you mean 'tool_args'?" in result.stderr


# -- the JSON Schema of version 2 ---------------------------------------------------------------------


def test_schema_is_draft_2020_12() -> None:
    """README "Writing contracts": "JSON Schemas (draft 2020-12) of the contract (version 1 and version 2)"."""
    schema = v2_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("section", sorted(SPEC_EXAMPLES))
def test_spec_examples_validate_against_the_schema(section: str) -> None:
    """§3.1-§3.9: every example contract of the spec is a valid version-2 contract."""
    assert schema_errors(document(SPEC_EXAMPLES[section])) == []


@pytest.mark.parametrize("name", sorted(GRAMMAR_EXAMPLES))
def test_grammar_examples_validate_against_the_schema(name: str) -> None:
    """§2: every operator, reference, `$from_result` field, condition form and matcher key is accepted."""
    assert schema_errors(document([GRAMMAR_EXAMPLES[name]])) == []


@pytest.mark.parametrize("name", sorted(GRAMMAR_EXAMPLES))
def test_grammar_examples_load(cli: Cli, tmp_path: Path, name: str) -> None:
    """§2: the same grammar examples load (`validate` exits 0): schema and loader agree."""
    code, _out, lines = validate(cli, tmp_path, document([GRAMMAR_EXAMPLES[name]]))
    assert code == 0, lines


def test_schema_names_every_operator() -> None:
    """Issue: "editors complete every operator" — §2's operators are the schema's operator properties."""
    operators = v2_schema()["$defs"]["MatchOperators"]["properties"]
    assert set(operators) == OPERATORS


def test_schema_names_every_reference_and_from_result_field() -> None:
    """§2 References: `$arg`, `$from_output`, `$from_result` with its nine fields."""
    text = json.dumps(v2_schema())
    for name in sorted(REFERENCES):
        assert f'"{name}"' in text, name
    branch = next(b for b in v2_schema()["$defs"]["MatchReference"]["oneOf"] if "$from_result" in b["properties"])
    assert set(branch["properties"]["$from_result"]["properties"]) == FROM_RESULT_FIELDS


@pytest.mark.parametrize("kind", V2_KINDS)
def test_schema_names_every_field(kind: str) -> None:
    """§3: every field of every new kind is a property of its schema definition, with a description."""
    properties = config_def(kind)["properties"]
    assert SPEC_FIELDS[kind] | COMMON <= set(properties)
    assert all(properties[field].get("description") for field in SPEC_FIELDS[kind])


@pytest.mark.parametrize(("kind", "field", "values"), SPEC_VALUES, ids=[f"{k}.{f}" for k, f, _ in SPEC_VALUES])
def test_schema_names_every_option_value(kind: str, field: str, values: set[str]) -> None:
    """§3: each option's values are an enum an editor can complete."""
    assert set(config_def(kind)["properties"][field]["enum"]) == values


def test_schema_matchers_and_stop_reasons() -> None:
    """§2 "v1 kinds under v2": matchers gain `args`, `reason`, `status`; `stop_is_final` gains `reasons`."""
    assert {"args", "reason", "status"} <= set(v2_schema()["$defs"]["EventMatcher"]["properties"])
    assert "reasons" in config_def("stop_is_final")["properties"]


def test_schema_names_every_kind() -> None:
    """§3 and v1: the rule list of version 2 admits each of the kinds (one definition per kind)."""
    for kind in ALL_KINDS:
        config_def(kind)


def test_schema_requires_version_2() -> None:
    """§0: "Any new kind, field or matcher key requires" `"version": 2`."""
    assert schema_errors(document(SPEC_EXAMPLES["3.2"], version=1)) != []


MISSPELT: dict[str, Rule] = {
    "operator": {"id": "a", "kind": "tool_args", "tool": "t", "match": {"x": {"$regx": "a"}}},
    "field": {"id": "a", "kind": "retry_limit", "max_attempt": 3},
    "kind": {"id": "a", "kind": "tool_arg", "tool": "t", "match": {}},
    "value": {"id": "a", "kind": "tool_args", "tool": "t", "mode": "exactt", "match": {}},
    "order value": {"id": "a", "kind": "tool_order", "tools": ["a"], "mode": "any-order"},
    "order field": {"id": "a", "kind": "tool_order", "tools": ["a"], "order": "any_order"},
    "from_result field": {"id": "a", "kind": "tool_args",
                          "match": {"x": {"$from_result": {"tool": "g", "ok_onl": True}}}},
    "condition key": {"id": "a", "kind": "required_when", "tool": "t", "when": {"path": "a", "non_emty": True}},
}


@pytest.mark.parametrize("name", sorted(MISSPELT))
def test_schema_rejects_misspellings(name: str) -> None:
    """§2 "Unknown `$` keys ... are load errors"; README "Unknown keys are errors everywhere": the schema
    rejects what the loader rejects, so an editor flags the typo."""
    assert schema_errors(document([MISSPELT[name]])) != []


# -- did-you-mean -------------------------------------------------------------------------------------

SUGGESTIONS: list[tuple[str, str, str]] = [
    ("operator", "$.rules[0].match.x.$regx: unknown operator", "did you mean '$regex'?"),
    ("field", "$.rules[0].max_attempt: unknown field", "did you mean 'max_attempts'?"),
    ("kind", '$.rules[0].kind: unknown rule kind "tool_arg"', "did you mean 'tool_args'?"),
    ("value", '$.rules[0].mode: unknown value "exactt"', "did you mean 'exact'?"),
    ("order value", '$.rules[0].mode: unknown value "any-order"', "did you mean 'any_order'?"),
    ("order field", "$.rules[0].order: unknown field", "did you mean 'mode'?"),
    ("from_result field", "$.rules[0].match.x.$from_result.ok_onl", "did you mean 'ok_only'?"),
    ("condition key", "$.rules[0].when.non_emty", "did you mean 'non_empty'?"),
]


@pytest.mark.parametrize(("name", "where", "hint"), SUGGESTIONS, ids=[s[0] for s in SUGGESTIONS])
def test_misspelling_gets_a_suggestion(cli: Cli, tmp_path: Path, name: str, where: str, hint: str) -> None:
    """Issue: "did-you-mean for operators and fields"; README: each problem with "the file's line, the JSON
    path, what was expected and a suggestion for near-misses"."""
    line = refused(cli, tmp_path, MISSPELT[name])
    assert where in line and hint in line, line


def test_misspelt_value_lists_expected_values(cli: Cli, tmp_path: Path) -> None:
    """README: the error says "what was expected" — the option's values."""
    line = refused(cli, tmp_path, MISSPELT["order value"])
    assert line.endswith("expected one of: subsequence, exact, contiguous, any_order"), line


def test_all_problems_reported_at_once(cli: Cli, tmp_path: Path) -> None:
    """README "Every problem at once": one line per problem, each with its file line."""
    rules = [{**MISSPELT[name], "id": name} for name in ("operator", "field", "kind")]
    (tmp_path / "c.json").write_text(
        '{"version": 2, "name": "n", "rules": [\n' + ",\n".join(json.dumps(r) for r in rules) + "\n]}\n",
        encoding="utf-8")
    result = cli("validate", "--contract", "c.json")
    assert result.returncode == 2
    assert [line.split(": ")[1] for line in result.stderr.splitlines()] == ["c.json:2", "c.json:3", "c.json:4"]


def test_v2_kind_in_version_1_needs_version_2(cli: Cli, tmp_path: Path) -> None:
    """§0: a version-1 contract with a new kind exits 2; README: it "is refused with `needs "version": 2`"."""
    line = refused(cli, tmp_path, SPEC_EXAMPLES["3.2"][0], version=1)
    assert '$.rules[0].kind: the rule kind tool_order needs "version": 2' in line


def test_v2_matcher_key_in_version_1_is_refused(cli: Cli, tmp_path: Path) -> None:
    """§0: "Any new kind, field or matcher key requires" version 2 (exit 2)."""
    line = refused(cli, tmp_path, {"id": "m", "kind": "deny_event", "match": {"type": "x", "reason": "y"}}, version=1)
    assert "$.rules[0].match.reason" in line


def test_from_output_in_output_rule_is_a_load_error(cli: Cli, tmp_path: Path) -> None:
    """§2: `$from_output` "In output rules it is a load error"."""
    line = refused(cli, tmp_path, {"id": "o", "kind": "output_match", "match": {"a": {"$from_output": "a"}}})
    assert "$.rules[0].match.a" in line


def test_arg_in_find_is_a_load_error(cli: Cli, tmp_path: Path) -> None:
    """§10.12: `$arg` and `$from_output` "are load errors in output rules, conditions, matchers and `find`"."""
    reference = {"$from_result": {"tool": "g", "path": "items", "find": {"sku": {"$arg": "sku"}}}}
    line = refused(cli, tmp_path, {"id": "o", "kind": "tool_args", "match": {"a": reference}})
    assert "$.rules[0].match.a.$from_result.find.sku.$arg" in line


def test_mixed_keys_are_a_load_error(cli: Cli, tmp_path: Path) -> None:
    """§2: "Unknown `$` keys, mixed keys and bad operands are load errors"."""
    line = refused(cli, tmp_path, {"id": "o", "kind": "tool_args", "match": {"a": {"$gt": 1, "b": 2}}})
    assert "$.rules[0].match.a" in line


# -- validate and rule packs ----------------------------------------------------------------------------


def test_validate_prints_the_normalised_v2_contract(cli: Cli, tmp_path: Path) -> None:
    """README: `validate` "prints the effective contract"; `--help`: "print it normalised (trimmed ...)"."""
    rule: Rule = {"id": "a", "kind": "tool_args", "tool": "  refund ", "match": {"amount": {"$gt": 0}}}
    code, out, lines = validate(cli, tmp_path, document([rule]))
    assert code == 0, lines
    printed = json.loads(out)["contract"]
    assert printed["version"] == 2
    assert printed["rules"] == [{**rule, "tool": "refund"}]


def test_validate_output_is_itself_valid(cli: Cli, tmp_path: Path) -> None:
    """The printed contract is a contract: it validates against the v2 schema and loads again."""
    code, out, _ = validate(cli, tmp_path, document([r for rules in SPEC_EXAMPLES.values() for r in rules]))
    assert code == 0
    printed = json.loads(out)["contract"]
    assert schema_errors(printed) == []
    assert validate(cli, tmp_path, printed)[0] == 0


def test_extends_shipped_pack_in_v2(cli: Cli, tmp_path: Path) -> None:
    """README "Rule packs": a shipped pack, then the contract's own rules last; an own rule with a pack
    rule's id replaces it in place."""
    own = [{"id": "payments.need-approval", "kind": "require_approval", "tool": "payments.*", "within_events": 5},
           SPEC_EXAMPLES["3.1"][0]]
    code, out, lines = validate(cli, tmp_path, document(own, extends=["agent-invariants:payments"]))
    assert code == 0, lines
    rules = json.loads(out)["contract"]["rules"]
    assert [r["id"] for r in rules] == ["payments.need-approval", "payments.no-repeat", "payments.result-read",
                                       "refund-args"]
    assert rules[0]["within_events"] == 5


def test_extends_pack_with_tool_args(cli: Cli, tmp_path: Path) -> None:
    """Issue: "a rule pack ... using tool_args"; README: a pack may be "a path relative to the contract"."""
    (tmp_path / "packs").mkdir()
    write_json(tmp_path / "packs" / "args.json", {"rules": SPEC_EXAMPLES["3.1"]})
    code, out, lines = validate(cli, tmp_path, document([SPEC_EXAMPLES["3.2"][0]], extends=["packs/args.json"]))
    assert code == 0, lines
    assert [r["id"] for r in json.loads(out)["contract"]["rules"]] == ["refund-args", "flow"]


def test_v2_pack_in_v1_contract_is_refused(cli: Cli, tmp_path: Path) -> None:
    """§0: a version-1 contract that (through a pack) uses a new kind exits 2 and names the kind."""
    write_json(tmp_path / "args.json", {"rules": SPEC_EXAMPLES["3.1"]})
    code, out, lines = validate(cli, tmp_path, document([{"id": "x", "kind": "deny_tool", "tool": "a"}], version=1,
                                                       extends=["args.json"]))
    assert (code, out) == (2, "")
    assert any('the rule kind tool_args needs "version": 2' in line for line in lines), lines


def test_extends_v2_contract_checks(cli: Cli, tmp_path: Path) -> None:
    """README "Rule packs" + §3.1: a pack's tool_args rule judges the trace like an own rule."""
    (tmp_path / "packs").mkdir()
    write_json(tmp_path / "packs" / "args.json", {"rules": SPEC_EXAMPLES["3.1"]})
    write_json(tmp_path / "c.json", document([], extends=["packs/args.json"]))
    (tmp_path / "t.jsonl").write_text(SPEC_31_TRACE, encoding="utf-8")
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert result.returncode == 1, result.stderr
    codes = [(v.get("event_seq"), v["code"]) for v in json.loads(result.stdout)["violations"]]
    assert codes == [(3, "tool_args.mismatch"), (4, "tool_args.reference_unresolved")]


SPEC_31_TRACE = "".join(json.dumps(e) + "\n" for e in [
    {"seq": 1, "type": "tool.call", "tool": "get", "call_id": "c1", "args": {"id": "A9"}},
    {"seq": 2, "type": "tool.result", "call_id": "c1", "ok": True, "result": {"paid": 10}},
    {"seq": 3, "type": "tool.call", "tool": "refund", "call_id": "c2", "args": {"order": "A9", "amount": 12}},
    {"seq": 4, "type": "tool.call", "tool": "refund", "call_id": "c3", "args": {"order": "A7", "amount": 5}},
])


# -- the manuals' examples, run --------------------------------------------------------------------------

MANUAL = re.compile(r"## Failing trace\nWith `(?P<rule>.*?)`:\n```jsonl\n(?P<fail>.*?)```\n(?P<says>.*?)"
                    r"## Passing trace\n```jsonl\n(?P<pass>.*?)```", re.S)


def manual_example(cli: Cli, kind: str) -> tuple[Rule, str, str, str]:
    found = MANUAL.search(explain(cli, kind))
    assert found, f"no example in the manual of {kind}"
    rule: Rule = json.loads(flat(found["rule"]))
    return rule, found["fail"], flat(found["says"]), found["pass"]


def run_check(cli: Cli, tmp_path: Path, rule: Rule, trace: str, version: int) -> tuple[int, list[dict[str, Any]]]:
    write_json(tmp_path / "c.json", document([rule], version))
    (tmp_path / "t.jsonl").write_text(trace, encoding="utf-8")
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    violations: list[dict[str, Any]] = json.loads(result.stdout)["violations"]
    return result.returncode, violations


def version_for(kind: str) -> int:
    return 1 if kind in V1_KINDS else 2


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_manual_example_validates_against_the_schema(cli: Cli, kind: str) -> None:
    """Each manual's example contract is valid for editors too (v2 schema)."""
    rule = manual_example(cli, kind)[0]
    assert rule["kind"] == kind
    assert schema_errors(document([rule])) == []


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_manual_failing_trace_fails_as_said(cli: Cli, tmp_path: Path, kind: str) -> None:
    """The manual's failing trace gives the violations its text names: at those seqs (or one without a
    seq when it names none), with the codes it names (§10.1 codes, §10.2 placement)."""
    rule, failing, says, _ = manual_example(cli, kind)
    code, violations = run_check(cli, tmp_path, rule, failing, version_for(kind))
    assert code == 1
    seqs = sorted(int(s) for s in re.findall(r"\bseq (\d+)(?=[,:]| \()", says))
    located = sorted(v["event_seq"] for v in violations if "event_seq" in v)
    if seqs:
        assert located == seqs, (says, violations)
    else:
        assert len(violations) == 1 and "event_seq" not in violations[0], violations
    named = set(re.findall(rf"`({kind}\.[a-z_]+)`", says))
    assert named <= {v["code"] for v in violations}, (named, violations)


@pytest.mark.parametrize("kind", V1_KINDS)
def test_manual_v1_message_is_exact(cli: Cli, tmp_path: Path, kind: str) -> None:
    """The v1 manuals quote the violation message; it is the message the check prints."""
    rule, failing, says, _ = manual_example(cli, kind)
    quoted = re.findall(r"`([^`]*\.)`", says)
    _, violations = run_check(cli, tmp_path, rule, failing, 1)
    assert quoted and quoted[-1] in [v["message"] for v in violations], (quoted, violations)


@pytest.mark.parametrize("kind", V1_KINDS)
def test_manual_v1_example_same_under_v2(cli: Cli, tmp_path: Path, kind: str) -> None:
    """§0: "v1 kinds inside a v2 contract keep identical verdicts, evidence and messages"."""
    rule, failing, _, _ = manual_example(cli, kind)
    assert run_check(cli, tmp_path, rule, failing, 1) == run_check(cli, tmp_path, rule, failing, 2)


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_manual_passing_trace_passes(cli: Cli, tmp_path: Path, kind: str) -> None:
    """The manual's passing trace passes its example rule (exit 0, no violation)."""
    rule, _, _, passing = manual_example(cli, kind)
    assert run_check(cli, tmp_path, rule, passing, version_for(kind)) == (0, [])


def test_manual_tool_args_example_is_the_spec_example(cli: Cli) -> None:
    """§3.1: the manual shows the spec's example rule."""
    assert manual_example(cli, "tool_args")[0] == SPEC_EXAMPLES["3.1"][0]


def test_manual_approval_bound_rejections(cli: Cli, tmp_path: Path) -> None:
    """§3.5 FAIL: seq 2 rejected [{1, args_mismatch, /args/amount}]; seq 4 rejected [{1, consumed, by_seq 3}],
    as the manual prints them."""
    rule, failing, _, _ = manual_example(cli, "approval_bound")
    _, violations = run_check(cli, tmp_path, rule, failing, 2)
    assert [(v["event_seq"], v["evidence"]["rejected"]) for v in violations] == [
        (2, [{"grant_seq": 1, "why": "args_mismatch", "pointer": "/args/amount"}]),
        (4, [{"grant_seq": 1, "why": "consumed", "by_seq": 3}])]


def test_readme_v2_examples_validate(cli: Cli, tmp_path: Path) -> None:
    """README version-2 sections: their example rules load and satisfy the schema."""
    rules: list[Rule] = [
        {"id": "refund-at-most-paid", "kind": "tool_args", "tool": "payments.refund",
         "match": {"order": {"$regex": "^A[0-9]+$"},
                   "amount": {"$gt": 0, "$lte": {"$from_result": {"tool": "orders.get", "path": "paid",
                                                                  "where": {"order": {"$arg": "order"}}}}}}},
        {"id": "approved-refunds", "kind": "approval_bound", "tool": "payments.refund", "bind": "args_subset"},
    ]
    assert schema_errors(document(rules)) == []
    assert validate(cli, tmp_path, document(rules))[0] == 0
