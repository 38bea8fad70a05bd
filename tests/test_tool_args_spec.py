"""`tool_args` and the shared match grammar, tested from the spec's words (spec v2 §2, §3.1 and §10
points 3-7, 9-13 and 17) through the CLI on real files: the §3.1 example in its FAIL and PASS
variants, each field and code, each operator, reference and `$from_result` step, the candidate-set
rules, the cross-cutting points, and the load errors (each one stderr line naming the contract file
and the JSON path of the mistake, exit 2).

Expected values are derived from the spec text, not from running the implementation."""
from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

import pytest

from support import at, refused_line, under, write_contract, write_trace

PREFIX = "agent-invariants: "
ABSENT: Any = object()


# -- helpers --------------------------------------------------------------------------------------

def call(tool: str, args: Any = ABSENT, call_id: str | None = None, **extra: Any) -> dict[str, Any]:
    """A `tool.call`; `args` left out when ABSENT, `call_id` when None."""
    event: dict[str, Any] = {"type": "tool.call", "tool": tool}
    if call_id is not None:
        event["call_id"] = call_id
    if args is not ABSENT:
        event["args"] = args
    return {**event, **extra}


def res(call_id: str, result: Any = ABSENT, ok: bool | None = True, **extra: Any) -> dict[str, Any]:
    """A `tool.result`; `result` left out when ABSENT, `ok` when None."""
    event: dict[str, Any] = {"type": "tool.result", "call_id": call_id}
    if ok is not None:
        event["ok"] = ok
    if result is not ABSENT:
        event["result"] = result
    return {**event, **extra}


def done(output: Any = ABSENT, kind: str = "run.completed") -> dict[str, Any]:
    event: dict[str, Any] = {"type": kind}
    if output is not ABSENT:
        event["output"] = output
    return event


def rule(tool: str = "refund", **fields: Any) -> dict[str, Any]:
    return {"id": "r", "kind": "tool_args", "tool": tool, **fields}


def fr(**spec: Any) -> dict[str, Any]:
    """A `$from_result` reference, on tool `get` unless told."""
    return {"$from_result": {"tool": "get", **spec}}


def subject(args: Any = ABSENT) -> dict[str, Any]:
    """The call under test: a `refund` with call_id `s`."""
    return call("refund", args, "s")


def get(call_id: str, args: dict[str, Any], result: Any, **extra: Any) -> list[dict[str, Any]]:
    """A `get` call and its result."""
    return [call("get", args, call_id), res(call_id, result, **extra)]


@dataclass
class Run:
    exit: int
    stdout: str
    report: dict[str, Any]

    @property
    def result(self) -> dict[str, Any]:
        return self.report["results"][0]

    @property
    def violations(self) -> list[dict[str, Any]]:
        return self.result["violations"]

    def brief(self) -> list[tuple[Any, ...]]:
        """(code, status, event_seq, pointer, related_seqs) per violation; None where absent."""
        return [(v["code"], v["status"], v.get("event_seq"), v.get("pointer"), v.get("related_seqs"))
                for v in self.violations]

    def single(self, code: str) -> dict[str, Any]:
        assert [v["code"] for v in self.violations] == [f"tool_args.{code}"], self.brief()
        return self.violations[0]


@pytest.fixture
def run(cli, tmp_path):
    """run(rule or [rules], *events, version=2) -> Run, from `check --format json`."""
    def _run(rules: Any, *events: Any, version: int = 2) -> Run:
        write_contract(tmp_path, rules if isinstance(rules, list) else [rules], version)
        write_trace(tmp_path, events)
        result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
        assert result.returncode in (0, 1), result.stderr
        return Run(result.returncode, result.stdout, json.loads(result.stdout))
    return _run


@pytest.fixture
def refused(cli, tmp_path):
    """refused(rules, version=2) -> the one stderr line of a refused contract (exit 2, no stdout)."""
    def _refused(rules: Any, version: int = 2) -> str:
        write_contract(tmp_path, rules if isinstance(rules, list) else [rules], version)
        write_trace(tmp_path, (call("refund", {"amount": 1}, "c1"),))
        return refused_line(cli)
    return _refused


def check(run, match: Any, args: Any, *before: Any, **fields: Any) -> Run:
    """One rule on `refund` with `match`, over `before` and then the subject call with `args`."""
    return run(rule(match=match, **fields), *before, subject(args))


def passes(out: Run) -> None:
    assert (out.exit, out.result["passed"], out.violations) == (0, True, []), out.brief()


def mismatches(out: Run) -> list[dict[str, Any]]:
    violation = out.single("mismatch")
    assert violation["status"] == "fail"
    assert violation["pointer"] == violation["evidence"]["mismatches"][0]["pointer"]
    return violation["evidence"]["mismatches"]


def unresolved(out: Run) -> list[dict[str, Any]]:
    violation = out.single("reference_unresolved")
    assert violation["status"] == "unresolved"
    assert violation["pointer"] == violation["evidence"]["unresolved"][0]["pointer"]
    return violation["evidence"]["unresolved"]


def no_candidates(pointer: str, reference: Any) -> list[dict[str, Any]]:
    return [{"pointer": pointer, "reference": reference, "reason": "no_candidates"}]


def any_of(pointer: str, candidates: list[Any], actual: Any) -> list[dict[str, Any]]:
    return [{"pointer": pointer, "expected": {"any_of": candidates}, "actual": actual}]


# -- §3.1: the example ----------------------------------------------------------------------------

EXAMPLE_RULE = {"id": "refund-args", "kind": "tool_args", "tool": "refund", "match": {
    "order": {"$regex": "^A[0-9]+$"},
    "amount": {"$from_result": {"tool": "get", "path": "paid", "where": {"id": {"$arg": "order"}}}}}}
EXAMPLE_TRACE = [
    {"seq": 1, "type": "tool.call", "tool": "get", "call_id": "c1", "args": {"id": "A9"}},
    {"seq": 2, "type": "tool.result", "call_id": "c1", "ok": True, "result": {"paid": 10}},
    {"seq": 3, "type": "tool.call", "tool": "refund", "call_id": "c2", "args": {"order": "A9", "amount": 12}},
    {"seq": 4, "type": "tool.call", "tool": "refund", "call_id": "c3", "args": {"order": "A7", "amount": 5}},
]


def test_example_fails_with_a_mismatch_at_seq_3_and_no_candidates_at_seq_4(run):
    out = run(EXAMPLE_RULE, *EXAMPLE_TRACE)
    assert out.exit == 1
    assert out.brief() == [("tool_args.mismatch", "fail", 3, "/args/amount", None),
                           ("tool_args.reference_unresolved", "unresolved", 4, "/args/amount", None)]
    assert [v["event_index"] for v in out.violations] == [2, 3]
    assert {(v["rule_id"], v["rule_kind"], v["severity"]) for v in out.violations} == {
        ("refund-args", "tool_args", "error")}
    assert out.violations[0]["evidence"] == {
        "tool": "refund", "call_id": "c2", "call_index": 0, "mode": "subset",
        "mismatches": [{"pointer": "/args/amount", "expected": {"any_of": [10]}, "actual": 12}]}
    assert out.violations[1]["evidence"] == {
        "tool": "refund", "call_id": "c3", "call_index": 1, "mode": "subset",
        "unresolved": [{"pointer": "/args/amount", "reference": EXAMPLE_RULE["match"]["amount"],
                        "reason": "no_candidates"}]}
    assert (out.result["passed"], out.result["checked"]) == (False, 2)
    assert (out.report["passed"], out.report["error_count"], out.report["warning_count"]) == (False, 2, 0)
    assert out.report["violations"] == out.violations


def test_example_passes_with_amount_10_and_no_seq_4(run):
    trace = [*EXAMPLE_TRACE[:2], {**EXAMPLE_TRACE[2], "args": {"order": "A9", "amount": 10}}]
    out = run(EXAMPLE_RULE, *trace)
    passes(out)
    assert out.result["checked"] == 1 and "vacuous" not in out.result
    assert (out.report["passed"], out.report["error_count"]) == (True, 0)


def test_example_with_amount_10_still_fails_at_seq_4(run):
    trace = [*EXAMPLE_TRACE[:2], {**EXAMPLE_TRACE[2], "args": {"order": "A9", "amount": 10}}, EXAMPLE_TRACE[3]]
    out = run(EXAMPLE_RULE, *trace)
    assert out.brief() == [("tool_args.reference_unresolved", "unresolved", 4, "/args/amount", None)]


def test_example_order_failing_the_regex_is_a_mismatch_with_the_node_as_written(run):
    out = run(EXAMPLE_RULE, *get("c1", {"id": "B9"}, {"paid": 10}), call("refund", {"order": "B9", "amount": 10}, "c2"))
    assert out.violations[0]["event_seq"] == 3
    assert mismatches(out) == [{"pointer": "/args/order", "expected": {"$regex": "^A[0-9]+$"}, "actual": "B9"}]


# -- §3.1 fields ----------------------------------------------------------------------------------

def test_tool_is_a_glob_and_only_matching_calls_are_checked(run):
    out = run(rule(tool="pay.*", match={"amount": {"$lt": 100}}),
              call("pay.card", {"amount": 500}, "c1"), call("payment", {"amount": 500}, "c2"),
              call("pay.cash", {"amount": 5}, "c3"))
    assert out.brief() == [("tool_args.mismatch", "fail", 1, "/args/amount", None)]
    assert out.result["checked"] == 2


def test_every_matching_call_is_checked_and_call_index_counts_only_matching_calls(run):
    out = run(rule(match={"amount": {"$lt": 100}}),
              call("refund", {"amount": 500}, "c1"), call("get", {"amount": 500}, "c2"),
              call("refund", {"amount": 700}))
    assert [v["event_seq"] for v in out.violations] == [1, 3]
    assert [v["evidence"] for v in out.violations] == [
        {"tool": "refund", "call_id": "c1", "call_index": 0, "mode": "subset",
         "mismatches": [{"pointer": "/args/amount", "expected": {"$lt": 100}, "actual": 500}]},
        {"tool": "refund", "call_index": 1, "mode": "subset",      # no call_id: the call has none
         "mismatches": [{"pointer": "/args/amount", "expected": {"$lt": 100}, "actual": 700}]}]
    assert out.result["checked"] == 2


def test_call_index_checks_only_the_kth_matching_call(run):
    out = run(rule(call_index=1, match={"amount": {"$lt": 100}}),
              call("refund", {"amount": 500}, "c1"), call("get", {"amount": 600}, "g1"),
              call("refund", {"amount": 700}, "c2"), call("refund", {"amount": 900}, "c3"))
    assert out.brief() == [("tool_args.mismatch", "fail", 3, "/args/amount", None)]
    assert out.violations[0]["evidence"] == {
        "tool": "refund", "call_id": "c2", "call_index": 1, "mode": "subset",
        "mismatches": [{"pointer": "/args/amount", "expected": {"$lt": 100}, "actual": 700}]}


def test_call_index_passes_when_the_kth_call_matches(run):
    passes(run(rule(call_index=0, match={"amount": {"$lt": 100}}),
               call("refund", {"amount": 5}, "c1"), call("refund", {"amount": 900}, "c2")))


def test_call_missing_when_the_kth_call_never_happens_has_no_seq(run):
    out = run(rule(tool="refund*", call_index=2, match={"amount": {"$lt": 100}}),
              call("refund", {"amount": 5}, "c1"), call("get", {}, "g1"), call("refund.part", {"amount": 6}, "c2"))
    violation = out.single("call_missing")
    assert violation["status"] == "fail"
    assert {"event_seq", "event_index", "pointer", "related_seqs"} & violation.keys() == set()
    assert violation["evidence"] == {"tool": "refund*", "call_index": 2, "calls_seen": 2, "mode": "subset"}
    assert (out.exit, out.result["passed"], out.report["error_count"]) == (1, False, 1)


def test_call_index_may_be_one_million(run):
    out = run(rule(call_index=1_000_000, match={"amount": {"$lt": 100}}), call("refund", {"amount": 5}, "c1"))
    assert out.single("call_missing")["evidence"] == {
        "tool": "refund", "call_index": 1_000_000, "calls_seen": 1, "mode": "subset"}


def test_subset_mode_written_out_lets_extra_keys_pass(run):
    passes(check(run, {"order": "A1"}, {"order": "A1", "note": "x"}, mode="subset"))


def test_exact_mode_reports_an_extra_key_as_expected_absent(run):
    out = check(run, {"order": "A1"}, {"order": "A1", "note": "x"}, mode="exact")
    assert mismatches(out) == [{"pointer": "/args/note", "expected": {"$exists": False}, "actual": "x"}]
    assert out.violations[0]["evidence"]["mode"] == "exact"


def test_exact_mode_wants_equal_key_sets_at_nested_levels(run):
    out = check(run, {"customer": {"id": 7}}, {"customer": {"id": 7, "vip": True}}, mode="exact")
    assert mismatches(out) == [{"pointer": "/args/customer/vip", "expected": {"$exists": False}, "actual": True}]


def test_exact_mode_wants_equal_key_sets_inside_array_elements(run):
    out = check(run, {"lines": [{"sku": "A"}]}, {"lines": [{"sku": "A", "qty": 1}]}, mode="exact")
    assert mismatches(out) == [{"pointer": "/args/lines/0/qty", "expected": {"$exists": False}, "actual": 1}]


def test_exact_mode_still_reports_a_missing_key(run):
    out = check(run, {"order": "A1", "amount": 5}, {"order": "A1"}, mode="exact")
    assert mismatches(out) == [{"pointer": "/args/amount", "expected": 5}]


def test_exact_mode_passes_with_equal_key_sets(run):
    passes(check(run, {"order": "A1", "customer": {"id": 7}}, {"order": "A1", "customer": {"id": 7}}, mode="exact"))


def test_ignore_skips_top_level_keys_in_exact_mode(run):
    passes(check(run, {"order": "A1"}, {"order": "A1", "trace_id": "t-1"}, mode="exact", ignore=["trace_id"]))


def test_ignore_applies_to_the_top_level_only(run):
    out = check(run, {"customer": {"id": 7}}, {"customer": {"id": 7, "vip": True}}, mode="exact", ignore=["vip"])
    assert mismatches(out) == [{"pointer": "/args/customer/vip", "expected": {"$exists": False}, "actual": True}]


SCHEMA = {"type": "object", "properties": {"amount": {"type": "number"}, "currency": {"type": "string"}}}


def test_schema_violation_lists_errors_with_pointers_into_the_event(run):
    out = run(rule(schema=SCHEMA), subject({"amount": "5", "currency": 7}))
    violation = out.single("schema")
    assert (violation["status"], violation["event_seq"]) == ("fail", 1)
    errors = violation["evidence"].pop("errors")
    assert violation["evidence"] == {"tool": "refund", "call_id": "s", "call_index": 0, "mode": "subset"}
    assert sorted(error["pointer"] for error in errors) == ["/args/amount", "/args/currency"]
    assert all(error.keys() == {"pointer", "message"} and isinstance(error["message"], str) for error in errors)
    assert violation["pointer"] == errors[0]["pointer"]


def test_schema_passes_valid_args(run):
    passes(run(rule(schema=SCHEMA), subject({"amount": 5, "currency": "EUR"})))


def test_schema_follows_local_refs(run):
    schema = {"$defs": {"money": {"type": "number", "minimum": 0}},
              "properties": {"amount": {"$ref": "#/$defs/money"}}}
    passes(run(rule(schema=schema), subject({"amount": 5})))
    out = run(rule(schema=schema), subject({"amount": -5}))
    assert [error["pointer"] for error in out.single("schema")["evidence"]["errors"]] == ["/args/amount"]


def test_schema_is_json_schema_2020_12(run):
    # prefixItems exists only in 2020-12; an older draft would ignore it.
    schema = {"properties": {"pair": {"prefixItems": [{"type": "string"}, {"type": "integer"}]}}}
    out = run(rule(schema=schema), subject({"pair": ["a", "b"]}))
    assert [error["pointer"] for error in out.single("schema")["evidence"]["errors"]] == ["/args/pair/1"]


def test_schema_lists_at_most_20_errors(run):
    schema = {"properties": {f"k{i:02d}": {"type": "string"} for i in range(25)}}
    out = run(rule(schema=schema), subject({f"k{i:02d}": i for i in range(25)}))
    pointers = [error["pointer"] for error in out.single("schema")["evidence"]["errors"]]
    assert len(pointers) == 20 and len(set(pointers)) == 20
    assert set(pointers) <= {f"/args/k{i:02d}" for i in range(25)}


def test_a_schema_may_nest_as_deep_as_the_contract_may(run):
    """A schema of 480 nested `items` (the contract holds it 486 levels deep in all) loads and
    judges args as deep; the meta-schema walking it ran out of recursion at about 120 levels,
    reported as the contract being nested more than 500 levels deep."""
    schema: dict[str, Any] = {"type": "integer"}
    for _ in range(480):
        schema = {"items": schema}
    nested: Any = "x"
    for _ in range(480):
        nested = [nested]
    passes(run(rule(schema={"properties": {"rows": schema}}), subject({"rows": 1})))
    out = run(rule(schema={"properties": {"rows": schema}}), subject({"rows": nested}))
    [error] = out.single("schema")["evidence"]["errors"]
    assert error["pointer"].startswith("/args/rows" + "/0" * 80)   # (a long pointer is cut, ending in …)
    assert error["message"] == '"x" is not of type "integer"'


def test_schema_errors_quote_values_as_json(run):
    """Schema errors are read beside JSON evidence: the values they quote are JSON (`null`,
    `true`, `{"k":null}`, `"a"`), not Python's `None`, `True`, `{'k': None}`, `'a'`."""
    schema = {"type": "object", "required": ["id"], "additionalProperties": False,
              "properties": {"id": {}, "mode": {"enum": ["a", None]}, "note": {"type": ["string", "null"]},
                             "meta": {"const": {"k": None}}, "flag": {"enum": ["True", None, True]}}}
    out = run(rule(schema=schema), subject({"mode": True, "note": False, "meta": {"k": 1}, "extra": None,
                                            "flag": False}))
    messages = [error["message"] for error in out.single("schema")["evidence"]["errors"]]
    assert sorted(messages) == sorted([
        '"id" is a required property', 'true is not one of ["a",null]', 'false is not of type "string", "null"',
        '{"k":null} was expected', 'Additional properties are not allowed ("extra" was unexpected)',
        'false is not one of ["True",null,true]'])


def test_distinct_paths_form_one_composite_key(run):
    passes(run(rule(distinct=["order", "line"]),
               subject({"order": "A1", "line": 1}), subject({"order": "A1", "line": 2}),
               subject({"order": "A2", "line": 1})))


def test_not_distinct_sits_at_each_later_duplicate_and_names_the_first(run):
    out = run(rule(distinct=["order", "line"]),
              call("refund", {"order": "A1", "line": 1}, "c1"), call("refund", {"order": "A1", "line": 2}, "c2"),
              call("refund", {"order": "A1", "line": 1}, "c3"), call("refund", {"order": "A1", "line": 1}, "c4"))
    assert out.brief() == [("tool_args.not_distinct", "fail", 3, "/args/order", [1]),
                           ("tool_args.not_distinct", "fail", 4, "/args/order", [1])]
    assert out.violations[0]["evidence"] == {"tool": "refund", "call_id": "c3", "call_index": 2, "mode": "subset",
                                             "key": ["A1", 1]}


def test_not_distinct_points_at_the_first_distinct_path(run):
    out = run(rule(distinct=["line.sku", "order"]),
              subject({"order": "A1", "line": {"sku": "X"}}), subject({"order": "A1", "line": {"sku": "X"}}))
    assert out.brief() == [("tool_args.not_distinct", "fail", 2, "/args/line/sku", [1])]
    assert out.violations[0]["evidence"]["key"] == ["X", "A1"]


def test_distinct_keys_compare_as_canonical_json(run):
    out = run(rule(distinct=["n", "o"]),
              subject({"n": 1, "o": {"a": 1, "b": 2}}), subject({"n": 1.0, "o": {"b": 2, "a": 1}}))
    assert out.brief() == [("tool_args.not_distinct", "fail", 2, "/args/n", [1])]
    assert out.violations[0]["evidence"]["key"] == [1, {"a": 1, "b": 2}]


def test_distinct_missing_lists_the_paths_the_args_lack(run):
    out = run(rule(distinct=["order", "line.sku"]), subject({"order": "A1"}), subject({"order": "A1"}))
    assert out.brief() == [("tool_args.distinct_missing", "unresolved", 1, "/args/line/sku", None),
                           ("tool_args.distinct_missing", "unresolved", 2, "/args/line/sku", None)]
    assert out.violations[0]["evidence"] == {"tool": "refund", "call_id": "s", "call_index": 0, "mode": "subset",
                                             "missing": ["line.sku"]}


def test_distinct_takes_null_as_a_value(run):
    out = run(rule(distinct=["order"]), subject({"order": None}), subject({"order": None}))
    assert out.brief() == [("tool_args.not_distinct", "fail", 2, "/args/order", [1])]
    assert out.violations[0]["evidence"]["key"] == [None]


def test_a_call_without_args_gets_args_missing_only(run):
    out = run(rule(match={"order": "A1"}, schema=SCHEMA, distinct=["order"]), subject())
    assert out.brief() == [("tool_args.args_missing", "unresolved", 1, "/args", None)]
    assert out.violations[0]["evidence"] == {"tool": "refund", "call_id": "s", "call_index": 0, "mode": "subset"}
    assert out.exit == 1


def test_empty_args_are_not_args_missing(run):
    assert mismatches(check(run, {"order": "A1"}, {})) == [{"pointer": "/args/order", "expected": "A1"}]


def test_a_call_gets_one_violation_per_code_listing_every_entry(run):
    out = check(run, {"amount": {"$lt": 100}, "currency": "EUR"}, {"amount": 500, "currency": "USD"})
    assert mismatches(out) == [{"pointer": "/args/amount", "expected": {"$lt": 100}, "actual": 500},
                               {"pointer": "/args/currency", "expected": "EUR", "actual": "USD"}]


# -- literals and equality (§2) ------------------------------------------------------------------

def test_objects_match_as_subsets(run):
    passes(check(run, {"customer": {"id": 7}}, {"customer": {"id": 7, "name": "x"}, "order": "A1"}))


def test_a_nested_mismatch_points_into_the_args(run):
    out = check(run, {"items": [{"sku": {"$regex": "^A"}}]}, {"items": [{"sku": "B7"}]})
    assert mismatches(out) == [{"pointer": "/args/items/0/sku", "expected": {"$regex": "^A"}, "actual": "B7"}]


def test_arrays_match_by_position(run):
    out = check(run, {"tags": ["a", "b"]}, {"tags": ["b", "a"]})
    assert mismatches(out) == [{"pointer": "/args/tags/0", "expected": "a", "actual": "b"},
                               {"pointer": "/args/tags/1", "expected": "b", "actual": "a"}]


def test_arrays_need_the_same_length(run):
    out = check(run, {"tags": ["a", "b"]}, {"tags": ["a", "b", "c"]})
    assert mismatches(out) == [{"pointer": "/args/tags", "expected": ["a", "b"], "actual": ["a", "b", "c"]}]


def test_equality_is_json_type_strict_true_is_not_1(run):
    assert mismatches(check(run, {"flag": True}, {"flag": 1})) == [
        {"pointer": "/args/flag", "expected": True, "actual": 1}]


def test_equality_takes_1_and_1_0_as_equal(run):
    passes(check(run, {"n": 1}, {"n": 1.0}))


def test_equality_does_not_coerce_strings(run):
    assert mismatches(check(run, {"n": "1"}, {"n": 1})) == [{"pointer": "/args/n", "expected": "1", "actual": 1}]


def test_pointers_escape_slash_and_tilde(run):
    out = check(run, {"a/b": 1, "c~d": 1}, {"a/b": 2, "c~d": 2})
    assert [entry["pointer"] for entry in mismatches(out)] == ["/args/a~1b", "/args/c~0d"]


# -- operators (§2) -------------------------------------------------------------------------------

def test_regex_is_an_unanchored_search(run):
    passes(check(run, {"order": {"$regex": "[0-9]+"}}, {"order": "order A123 now"}))


def test_regex_that_finds_nothing_is_a_mismatch(run):
    assert mismatches(check(run, {"order": {"$regex": "[0-9]+"}}, {"order": "none"})) == [
        {"pointer": "/args/order", "expected": {"$regex": "[0-9]+"}, "actual": "none"}]


def test_regex_on_a_non_string_is_a_mismatch(run):
    assert mismatches(check(run, {"order": {"$regex": "1"}}, {"order": 1})) == [
        {"pointer": "/args/order", "expected": {"$regex": "1"}, "actual": 1}]


def test_regex_of_500_characters_loads(run):
    passes(check(run, {"order": {"$regex": "a" * 500}}, {"order": "a" * 500}))


def test_in_passes_on_a_listed_value(run):
    passes(check(run, {"currency": {"$in": ["EUR", "USD"]}}, {"currency": "USD"}))


def test_in_fails_on_an_unlisted_value(run):
    assert mismatches(check(run, {"currency": {"$in": ["EUR", "USD"]}}, {"currency": "GBP"})) == [
        {"pointer": "/args/currency", "expected": {"$in": ["EUR", "USD"]}, "actual": "GBP"}]


def test_in_compares_by_json_equality(run):
    passes(check(run, {"n": {"$in": [1]}}, {"n": 1.0}))
    assert mismatches(check(run, {"n": {"$in": [1]}}, {"n": True})) == [
        {"pointer": "/args/n", "expected": {"$in": [1]}, "actual": True}]


def test_in_with_1000_values_loads(run):
    passes(check(run, {"n": {"$in": list(range(1000))}}, {"n": 999}))


@pytest.mark.parametrize("operator", ["$gte", "$lte"])
def test_inclusive_comparisons_pass_at_the_boundary(run, operator):
    passes(check(run, {"amount": {operator: 100}}, {"amount": 100}))


@pytest.mark.parametrize("operator", ["$gt", "$lt"])
def test_strict_comparisons_fail_at_the_boundary(run, operator):
    assert mismatches(check(run, {"amount": {operator: 100}}, {"amount": 100})) == [
        {"pointer": "/args/amount", "expected": {operator: 100}, "actual": 100}]


def test_comparisons_pass_on_the_right_side(run):
    passes(check(run, {"a": {"$gt": 1}, "b": {"$gte": 1}, "c": {"$lt": 1}, "d": {"$lte": 1}},
                 {"a": 2, "b": 1.5, "c": 0, "d": -3}))


@pytest.mark.parametrize("actual", ["100", True], ids=["string", "boolean"])
def test_comparisons_never_compare_strings_or_booleans(run, actual):
    assert mismatches(check(run, {"amount": {"$gte": 0}}, {"amount": actual})) == [
        {"pointer": "/args/amount", "expected": {"$gte": 0}, "actual": actual}]


def test_in_a_reference_takes_the_elements_of_array_candidates_not_the_arrays(run):
    """Point 11: an array candidate contributes its elements, any other candidate itself; the
    results that come after a call was checked count for the calls after them."""
    out = run(rule(match={"id": {"$in": fr(tool="get", path="ids")}}),
              *get("g1", {}, {"ids": [1, 2]}), call("refund", {"id": 2}, "r1"),
              *get("g2", {}, {"ids": [3]}), call("refund", {"id": 3}, "r2"), call("refund", {"id": [1, 2]}, "r3"),
              *get("g3", {}, {"ids": 7}), call("refund", {"id": 7.0}, "r4"), call("refund", {"id": 8}, "r5"))
    assert [(v["code"], v["event_seq"], v["evidence"]["mismatches"][0]["actual"]) for v in out.violations] == [
        ("tool_args.mismatch", 7, [1, 2]), ("tool_args.mismatch", 11, 8)]


def test_in_a_reference_whose_candidates_are_all_empty_arrays_has_no_candidates(run):
    """Point 11: nothing contributed is `no_candidates`."""
    reference = fr(tool="get", path="ids")
    out = check(run, {"id": {"$in": reference}}, {"id": 1}, *get("g1", {}, {"ids": []}), *get("g2", {}, {"ids": []}))
    assert unresolved(out) == no_candidates("/args/id", reference)


def test_in_a_reference_compares_by_json_equality_even_beyond_any_double(run):
    """Points 10 and 11: an integer past the largest double is the infinity JavaScript reads, so
    an object holding one equals an object holding another, inside an array candidate or not."""
    huge = 10**400
    for result in ({"v": [{"n": huge}]}, {"v": {"n": huge}}):
        passes(check(run, {"k": {"$in": fr(tool="get", path="v")}}, {"k": {"n": 2 * huge}}, *get("g1", {}, result)))


def test_operators_in_one_object_are_anded(run):
    passes(check(run, {"amount": {"$gt": 1, "$lt": 10}}, {"amount": 5}))
    assert mismatches(check(run, {"amount": {"$gt": 1, "$lt": 10}}, {"amount": 50})) == [
        {"pointer": "/args/amount", "expected": {"$gt": 1, "$lt": 10}, "actual": 50}]


def test_exists_true_accepts_null(run):
    passes(check(run, {"note": {"$exists": True}}, {"note": None}))


def test_exists_true_on_an_absent_key_is_a_mismatch_without_actual(run):
    assert mismatches(check(run, {"note": {"$exists": True}}, {})) == [
        {"pointer": "/args/note", "expected": {"$exists": True}}]


def test_exists_false_accepts_absence(run):
    passes(check(run, {"note": {"$exists": False}}, {"order": "A1"}))


def test_exists_false_rejects_null_and_shows_it(run):
    assert mismatches(check(run, {"note": {"$exists": False}}, {"note": None})) == [
        {"pointer": "/args/note", "expected": {"$exists": False}, "actual": None}]


def test_any_of_matches_when_one_branch_does(run):
    passes(check(run, {"order": {"$any_of": [{"$regex": "^A"}, {"$in": [7]}]}}, {"order": 7}))


def test_any_of_with_no_matching_branch_is_a_mismatch(run):
    node = {"$any_of": [{"$regex": "^A"}, {"$in": [7]}]}
    assert mismatches(check(run, {"order": node}, {"order": 8})) == [
        {"pointer": "/args/order", "expected": node, "actual": 8}]


def test_any_of_with_20_branches_loads(run):
    passes(check(run, {"n": {"$any_of": [{"$in": [i]} for i in range(20)]}}, {"n": 19}))


def test_exists_may_stand_in_the_any_of_branches_of_a_key_value(run):
    node = {"$any_of": [{"$exists": False}, {"$regex": "^ok"}]}
    passes(check(run, {"note": node}, {}))
    passes(check(run, {"note": node}, {"note": "ok then"}))
    assert mismatches(check(run, {"note": node}, {"note": "bad"})) == [
        {"pointer": "/args/note", "expected": node, "actual": "bad"}]


def test_contains_passes_when_an_element_matches_as_a_subset(run):
    passes(check(run, {"items": {"$contains": {"sku": "A1"}}}, {"items": [{"sku": "B"}, {"sku": "A1", "qty": 2}]}))


def test_contains_fails_when_no_element_matches(run):
    assert mismatches(check(run, {"items": {"$contains": {"sku": "A1"}}}, {"items": [{"sku": "B"}]})) == [
        {"pointer": "/args/items", "expected": {"$contains": {"sku": "A1"}}, "actual": [{"sku": "B"}]}]


def test_contains_on_a_non_array_is_a_mismatch(run):
    assert mismatches(check(run, {"items": {"$contains": 1}}, {"items": {"0": 1}})) == [
        {"pointer": "/args/items", "expected": {"$contains": 1}, "actual": {"0": 1}}]


def test_literal_takes_dollar_keys_as_plain_values(run):
    passes(check(run, {"filter": {"$literal": {"$regex": "x"}}}, {"filter": {"$regex": "x"}}))


def test_literal_is_structural_equality_not_a_subset(run):
    node = {"$literal": {"$regex": "x"}}
    assert mismatches(check(run, {"filter": node}, {"filter": {"$regex": "x", "flags": "i"}})) == [
        {"pointer": "/args/filter", "expected": node, "actual": {"$regex": "x", "flags": "i"}}]


# -- references: $arg and $from_output (§2, point 12) ---------------------------------------------

def test_arg_reads_the_subject_calls_args(run):
    passes(check(run, {"confirm": {"$arg": "order"}}, {"order": "A1", "confirm": "A1"}))


def test_arg_mismatch_expects_any_of_its_value(run):
    assert mismatches(check(run, {"confirm": {"$arg": "order"}}, {"order": "A1", "confirm": "A2"})) == any_of(
        "/args/confirm", ["A1"], "A2")


def test_an_absent_arg_path_has_no_candidates(run):
    out = check(run, {"confirm": {"$arg": "nope"}}, {"confirm": "A1"})
    assert unresolved(out) == no_candidates("/args/confirm", {"$arg": "nope"})
    assert out.violations[0]["evidence"]["call_index"] == 0 and out.exit == 1


OUT_REF = {"$from_output": "refund.amount"}


def test_from_output_reads_the_final_output(run):
    passes(run(rule(match={"amount": OUT_REF}), subject({"amount": 10}), done({"refund": {"amount": 10}})))


def test_from_output_mismatch_sits_at_the_call(run):
    out = run(rule(match={"amount": OUT_REF}), subject({"amount": 12}), done({"refund": {"amount": 10}}))
    assert out.brief() == [("tool_args.mismatch", "fail", 1, "/args/amount", None)]
    assert mismatches(out) == any_of("/args/amount", [10], 12)


def test_from_output_without_a_terminal_has_no_candidates(run):
    out = run(rule(match={"amount": OUT_REF}), subject({"amount": 10}))
    assert unresolved(out) == no_candidates("/args/amount", OUT_REF)


def test_from_output_when_the_terminal_has_no_output_has_no_candidates(run):
    out = run(rule(match={"amount": OUT_REF}), subject({"amount": 10}), done())
    assert unresolved(out) == no_candidates("/args/amount", OUT_REF)


def test_from_output_at_an_absent_path_has_no_candidates(run):
    out = run(rule(match={"amount": OUT_REF}), subject({"amount": 10}), done({"refund": {"total": 10}}))
    assert unresolved(out) == no_candidates("/args/amount", OUT_REF)


def test_from_output_reads_the_last_terminal(run):
    out = run(rule(match={"amount": OUT_REF}), subject({"amount": 5}),
              done({"refund": {"amount": 5}}), done({"refund": {"amount": 10}}))
    assert mismatches(out) == any_of("/args/amount", [10], 5)


def test_from_output_reads_a_run_failed_terminal(run):
    passes(run(rule(match={"amount": OUT_REF}), subject({"amount": 10}),
               done({"refund": {"amount": 10}}, kind="run.failed")))


def test_from_output_may_stand_in_where(run):
    match = {"amount": fr(path="paid", where={"id": {"$from_output": "order"}})}
    trace = [*get("g1", {"id": "A9"}, {"paid": 10}), *get("g2", {"id": "B1"}, {"paid": 30})]
    passes(run(rule(match=match), *trace, subject({"amount": 10}), done({"order": "A9"})))
    out = run(rule(match=match), *trace, subject({"amount": 30}), done({"order": "A9"}))
    assert mismatches(out) == any_of("/args/amount", [10], 30)


# -- $from_result, step by step (§2, points 3 and 12) --------------------------------------------

def test_from_result_tool_is_a_glob(run):
    before = [call("crm.get", {"id": "A1"}, "g1"), res("g1", {"paid": 10})]
    passes(check(run, {"amount": fr(tool="crm.*", path="paid")}, {"amount": 10}, *before))


def test_from_result_ignores_results_of_other_tools(run):
    before = [call("lookup", {"id": "A1"}, "g1"), res("g1", {"paid": 10})]
    out = check(run, {"amount": fr(path="paid")}, {"amount": 10}, *before)
    assert unresolved(out) == no_candidates("/args/amount", fr(path="paid"))


def test_from_result_takes_only_results_before_the_subject(run):
    out = run(rule(match={"amount": fr(path="paid")}),
              call("get", {"id": "A1"}, "g1"), subject({"amount": 10}), res("g1", {"paid": 10}))
    assert out.brief() == [("tool_args.reference_unresolved", "unresolved", 2, "/args/amount", None)]
    assert unresolved(out) == no_candidates("/args/amount", fr(path="paid"))


def test_from_result_drops_failed_results_by_default(run):
    out = check(run, {"amount": fr(path="paid")}, {"amount": 10}, *get("g1", {"id": "A1"}, {"paid": 10}, ok=False))
    assert unresolved(out) == no_candidates("/args/amount", fr(path="paid"))


def test_from_result_ok_only_false_keeps_failed_results(run):
    passes(check(run, {"amount": fr(path="paid", ok_only=False)}, {"amount": 10},
                 *get("g1", {"id": "A1"}, {"paid": 10}, ok=False)))


def test_from_result_keeps_results_without_ok(run):
    passes(check(run, {"amount": fr(path="paid")}, {"amount": 10}, *get("g1", {"id": "A1"}, {"paid": 10}, ok=None)))


def test_results_without_result_add_nothing(run):
    out = check(run, {"amount": fr()}, {"amount": 10}, call("get", {"id": "A1"}, "g1"), res("g1"))
    assert unresolved(out) == no_candidates("/args/amount", fr())


def test_a_null_result_is_a_candidate(run):
    passes(check(run, {"amount": fr()}, {"amount": None}, *get("g1", {"id": "A1"}, None)))


def test_from_result_call_index_keeps_the_kth_calls_result(run):
    before = [*get("g1", {"id": "A1"}, {"paid": 10}), call("lookup", {}, "l1"), *get("g2", {"id": "A2"}, {"paid": 20})]
    passes(check(run, {"amount": fr(path="paid", call_index=1)}, {"amount": 20}, *before))
    out = check(run, {"amount": fr(path="paid", call_index=1)}, {"amount": 10}, *before)
    assert mismatches(out) == any_of("/args/amount", [20], 10)


def test_from_result_call_index_counts_calls_not_kept_results(run):
    before = [*get("g1", {"id": "A1"}, {"paid": 10}, ok=False), *get("g2", {"id": "A2"}, {"paid": 20})]
    out = check(run, {"amount": fr(path="paid", call_index=0)}, {"amount": 20}, *before)
    assert unresolved(out) == no_candidates("/args/amount", fr(path="paid", call_index=0))


def test_from_result_call_index_counts_calls_in_trace_order_not_results(run):
    # g1 is call 0 and g2 call 1, although only g2's result comes before the subject.
    passes(run(rule(match={"amount": fr(path="paid", call_index=1)}),
               call("get", {"id": "A1"}, "g1"), call("get", {"id": "A2"}, "g2"), res("g2", {"paid": 20}),
               subject({"amount": 20}), res("g1", {"paid": 10})))


def test_from_result_call_index_result_must_precede_the_subject(run):
    out = run(rule(match={"amount": fr(path="paid", call_index=0)}),
              call("get", {"id": "A1"}, "g1"), call("get", {"id": "A2"}, "g2"), res("g2", {"paid": 20}),
              subject({"amount": 10}), res("g1", {"paid": 10}))
    assert out.brief() == [("tool_args.reference_unresolved", "unresolved", 4, "/args/amount", None)]
    assert unresolved(out) == no_candidates("/args/amount", fr(path="paid", call_index=0))


def test_where_matches_the_producing_calls_args(run):
    before = [*get("g1", {"id": "A1", "kind": "x"}, {"paid": 10}), *get("g2", {"id": "A2"}, {"paid": 20})]
    out = check(run, {"amount": fr(path="paid", where={"id": "A1"})}, {"amount": 20}, *before)
    assert mismatches(out) == any_of("/args/amount", [10], 20)


def test_where_with_arg_joins_on_the_subjects_args(run):
    before = [*get("g1", {"id": "A1"}, {"paid": 10}), *get("g2", {"id": "A2"}, {"paid": 20})]
    passes(check(run, {"amount": fr(path="paid", where={"id": {"$arg": "order"}})},
                 {"order": "A2", "amount": 20}, *before))


def test_two_fields_joined_on_one_lookup_take_each_value_its_result_holds(run):
    """Two references joined on the same lookup, each reading one key: a result holding both
    keys gives each its value, one holding one key gives that one only, one holding neither gives
    none (point 12: a result at which `path` finds nothing adds no candidate)."""
    match = {"amount": fr(path="paid", where={"id": {"$arg": "order"}}),
             "currency": fr(path="currency", where={"id": {"$arg": "order"}})}
    both = get("g1", {"id": "A1"}, {"paid": 10, "currency": "EUR"})
    paid_only = get("g2", {"id": "A2"}, {"paid": 20})
    neither = get("g3", {"id": "A3"}, {"items": 7})
    passes(check(run, match, {"order": "A1", "amount": 10, "currency": "EUR"}, *both, *paid_only, *neither))
    out = check(run, match, {"order": "A2", "amount": 20, "currency": "EUR"}, *both, *paid_only, *neither)
    assert unresolved(out) == no_candidates("/args/currency", match["currency"])
    out = check(run, match, {"order": "A3", "amount": 20, "currency": "EUR"}, *both, *paid_only, *neither)
    assert unresolved(out) == [*no_candidates("/args/amount", match["amount"]),
                               *no_candidates("/args/currency", match["currency"])]
    # a later result for the same key holding only `currency` adds that candidate alone
    currency_later = get("g4", {"id": "A2"}, {"currency": "USD"})
    passes(check(run, match, {"order": "A2", "amount": 20, "currency": "USD"}, *paid_only, *currency_later))


def test_where_result_matches_the_result(run):
    before = [*get("g1", {"id": "A1"}, {"status": "void", "paid": 10}),
              *get("g2", {"id": "A1"}, {"status": "settled", "paid": 20})]
    out = check(run, {"amount": fr(path="paid", where_result={"status": "settled"})}, {"amount": 10}, *before)
    assert mismatches(out) == any_of("/args/amount", [20], 10)


ITEMS = {"items": [{"sku": "A", "price": 5, "tags": ["x"]}, {"sku": "B", "price": 7, "tags": ["x", "y"]},
                   {"sku": "B", "price": 9, "tags": []}]}


def test_find_takes_the_first_matching_element_and_select_reads_inside_it(run):
    ref = fr(path="items", find={"sku": "B"}, select="price")
    passes(check(run, {"amount": ref}, {"amount": 7}, *get("g1", {}, ITEMS)))
    assert mismatches(check(run, {"amount": ref}, {"amount": 9}, *get("g1", {}, ITEMS))) == any_of(
        "/args/amount", [7], 9)


def test_find_matches_elements_with_a_subset_node_and_operators(run):
    ref = fr(path="items", find={"price": {"$gt": 6}}, select="sku")
    passes(check(run, {"sku": ref}, {"sku": "B"}, *get("g1", {}, ITEMS)))


def test_find_without_select_yields_the_element(run):
    ref = fr(path="items", find={"sku": "B"})
    passes(check(run, {"line": ref}, {"line": {"sku": "B", "price": 7, "tags": ["x", "y"]}}, *get("g1", {}, ITEMS)))


def test_length_yields_the_arrays_length(run):
    ref = fr(path="items", length=True)
    passes(check(run, {"count": ref}, {"count": 3}, *get("g1", {}, ITEMS)))
    assert mismatches(check(run, {"count": ref}, {"count": 2}, *get("g1", {}, ITEMS))) == any_of(
        "/args/count", [3], 2)


def test_steps_run_path_then_find_then_select_then_length(run):
    ref = fr(path="items", find={"sku": "B"}, select="tags", length=True)
    passes(check(run, {"count": ref}, {"count": 2}, *get("g1", {}, ITEMS)))


def test_a_result_where_a_step_fails_contributes_nothing(run):
    # Only the first result yields a value, so the comparison sees exactly one candidate.
    before = [*get("g1", {}, ITEMS), *get("g2", {}, {"items": "none"}), *get("g3", {}, {"other": 1}),
              *get("g4", {}, {"items": [{"sku": "C"}]})]
    passes(check(run, {"amount": {"$lte": fr(path="items", find={"sku": "B"}, select="price")}}, {"amount": 7},
                 *before))


def test_find_with_no_matching_element_gives_no_candidates(run):
    ref = fr(path="items", find={"sku": "Z"}, select="price")
    out = check(run, {"amount": ref}, {"amount": 7}, *get("g1", {}, ITEMS))
    assert unresolved(out) == no_candidates("/args/amount", ref)


def test_length_of_a_non_array_gives_no_candidates(run):
    ref = fr(path="items", length=True)
    out = check(run, {"count": ref}, {"count": 1}, *get("g1", {}, {"items": {"a": 1}}))
    assert unresolved(out) == no_candidates("/args/count", ref)


def test_nested_from_result_in_where(run):
    ref = fr(path="paid", where={"id": {"$from_result": {"tool": "session", "path": "order_id"}}})
    before = [call("session", {}, "s0"), res("s0", {"order_id": "A9"}),
              *get("g1", {"id": "A9"}, {"paid": 10}), *get("g2", {"id": "B1"}, {"paid": 30})]
    passes(check(run, {"amount": ref}, {"amount": 10}, *before))
    assert mismatches(check(run, {"amount": ref}, {"amount": 30}, *before)) == any_of("/args/amount", [10], 30)


# -- candidate sets (§2, points 10 and 11) --------------------------------------------------------

def test_equality_passes_if_any_candidate_equals(run):
    before = [*get("g1", {"id": "A1"}, {"paid": 10}), *get("g2", {"id": "A2"}, {"paid": 12})]
    passes(check(run, {"amount": fr(path="paid")}, {"amount": 12}, *before))


def test_equality_with_a_candidate_is_structural_not_a_subset(run):
    ref = fr(path="items", find={"sku": "B"})
    line = {"sku": "B", "price": 7, "tags": ["x", "y"], "qty": 1}     # the candidate plus a key
    out = check(run, {"line": ref}, {"line": line}, *get("g1", {}, ITEMS))
    assert mismatches(out) == any_of("/args/line", [{"sku": "B", "price": 7, "tags": ["x", "y"]}], line)


def test_a_comparison_with_one_distinct_candidate_compares(run):
    before = [*get("g1", {"id": "A1"}, {"paid": 10}), *get("g2", {"id": "A2"}, {"paid": 10.0})]
    passes(check(run, {"amount": {"$lte": fr(path="paid")}}, {"amount": 8}, *before))


def test_a_comparison_that_fails_against_its_candidate_is_a_mismatch(run):
    out = check(run, {"amount": {"$lte": fr(path="paid")}}, {"amount": 12}, *get("g1", {"id": "A1"}, {"paid": 10}))
    (entry,) = mismatches(out)
    assert (entry["pointer"], entry["actual"]) == ("/args/amount", 12)


def test_a_comparison_with_two_distinct_candidates_is_ambiguous_never_a_mismatch(run):
    before = [*get("g1", {"id": "A1"}, {"paid": 10}), *get("g2", {"id": "A2"}, {"paid": 20})]
    out = check(run, {"amount": {"$lte": fr(path="paid")}}, {"amount": 5}, *before)
    assert unresolved(out) == [{"pointer": "/args/amount", "reference": fr(path="paid"), "reason": "ambiguous"}]


def test_a_comparison_without_candidates_has_no_candidates(run):
    out = check(run, {"amount": {"$lte": fr(path="paid")}}, {"amount": 5})
    assert unresolved(out) == no_candidates("/args/amount", fr(path="paid"))


ALLOW_LISTS = [*get("g1", {}, {"allowed": ["EUR", "USD"]}), *get("g2", {}, {"allowed": "CHF"})]


@pytest.mark.parametrize("currency", ["USD", "CHF"])
def test_in_with_a_reference_takes_array_elements_and_other_candidates_themselves(run, currency):
    passes(check(run, {"currency": {"$in": fr(path="allowed")}}, {"currency": currency}, *ALLOW_LISTS))


def test_in_with_a_reference_fails_on_a_value_nobody_contributed(run):
    (entry,) = mismatches(check(run, {"currency": {"$in": fr(path="allowed")}}, {"currency": "GBP"}, *ALLOW_LISTS))
    assert (entry["pointer"], entry["actual"]) == ("/args/currency", "GBP")


def test_in_with_an_arg_array_takes_its_elements(run):
    passes(check(run, {"currency": {"$in": {"$arg": "allowed"}}}, {"allowed": ["EUR", "USD"], "currency": "EUR"}))


def test_in_with_nothing_contributed_has_no_candidates(run):
    out = check(run, {"currency": {"$in": fr(path="allowed")}}, {"currency": "EUR"}, *get("g1", {}, {"allowed": []}))
    assert unresolved(out) == no_candidates("/args/currency", fr(path="allowed"))


def test_contains_with_a_reference_passes_if_an_element_equals_any_candidate(run):
    before = [*get("g1", {}, {"sku": "A1"}), *get("g2", {}, {"sku": "B2"})]
    passes(check(run, {"items": {"$contains": fr(path="sku")}}, {"items": ["C", "B2"]}, *before))
    (entry,) = mismatches(check(run, {"items": {"$contains": fr(path="sku")}}, {"items": ["C"]}, *before))
    assert (entry["pointer"], entry["actual"]) == ("/args/items", ["C"])


ANY_OF_REF = {"$any_of": [fr(path="paid"), {"$lt": 5}]}


def test_any_of_passes_on_a_matching_branch_next_to_an_unresolved_one(run):
    passes(check(run, {"amount": ANY_OF_REF}, {"amount": 3}))


def test_any_of_without_a_match_is_unresolved_when_a_branch_was(run):
    out = check(run, {"amount": ANY_OF_REF}, {"amount": 7})
    assert unresolved(out) == no_candidates("/args/amount", fr(path="paid"))


def test_any_of_without_a_match_or_an_unresolved_branch_is_a_mismatch(run):
    out = check(run, {"amount": ANY_OF_REF}, {"amount": 7}, *get("g1", {}, {"paid": 10}))
    assert [entry["pointer"] for entry in mismatches(out)] == ["/args/amount"]


# -- point 3: pairing ----------------------------------------------------------------------------

def test_a_result_pairs_with_the_nearest_earlier_waiting_call_with_its_id(run):
    # The first result answers the second call (A2), the second result the first call (A1).
    out = run(rule(match={"amount": fr(path="paid", where={"id": {"$arg": "order"}})}),
              call("get", {"id": "A1"}, "c1"), call("get", {"id": "A2"}, "c1"),
              res("c1", {"paid": 10}), res("c1", {"paid": 20}), subject({"order": "A1", "amount": 10}))
    assert mismatches(out) == any_of("/args/amount", [20], 10)


def test_a_paired_results_own_tool_is_ignored(run):
    before = [call("get", {"id": "A1"}, "c1"), res("c1", {"paid": 10}, tool="other")]
    passes(check(run, {"amount": fr(path="paid")}, {"amount": 10}, *before))
    out = check(run, {"amount": fr(tool="other", path="paid")}, {"amount": 10}, *before)
    assert unresolved(out) == no_candidates("/args/amount", fr(tool="other", path="paid"))


def test_an_orphan_result_keeps_its_own_tool(run):
    passes(check(run, {"amount": fr(path="paid")}, {"amount": 10}, res("zz", {"paid": 10}, tool="get")))


def test_an_orphan_result_has_no_args_for_where(run):
    ref = fr(path="paid", where={"id": "A1"})
    out = check(run, {"amount": ref}, {"amount": 10}, res("zz", {"paid": 10}, tool="get"))
    assert unresolved(out) == no_candidates("/args/amount", ref)


# -- point 4: checked and vacuous ----------------------------------------------------------------

def test_a_rule_whose_calls_never_occur_passes_vacuously(run):
    out = run(rule(match={"amount": {"$lt": 100}}), call("get", {"amount": 500}, "g1"))
    passes(out)
    assert (out.result["checked"], out.result["vacuous"]) == (0, True)


def test_a_rule_that_checked_calls_is_not_vacuous(run):
    out = run(rule(match={"amount": {"$lt": 100}}), subject({"amount": 5}), subject({"amount": 6}))
    passes(out)
    assert out.result["checked"] == 2 and "vacuous" not in out.result


def test_a_call_index_rule_is_never_vacuous(run):
    out = run(rule(call_index=0, match={"amount": {"$lt": 100}}), call("get", {}, "g1"))
    assert out.brief() == [("tool_args.call_missing", "fail", None, None, None)]
    assert "vacuous" not in out.result


# -- point 5: order -------------------------------------------------------------------------------

def test_violations_follow_event_position_then_the_code_order(run):
    out = run(rule(match={"amount": {"$lt": 100}, "ref": {"$arg": "link"}},
                   schema={"properties": {"amount": {"type": "integer"}}}, distinct=["order"]),
              {"type": "agent.message"},
              call("refund", {"order": "A1", "amount": 5, "ref": 1, "link": 1}, "c1"),
              call("refund", {"order": "A1", "amount": 500.5, "ref": 1}, "c2"),
              call("refund", {"amount": 5, "ref": 1, "link": 1}, "c3"),
              call("refund", call_id="c4"))
    assert out.brief() == [("tool_args.mismatch", "fail", 3, "/args/amount", None),
                           ("tool_args.reference_unresolved", "unresolved", 3, "/args/ref", None),
                           ("tool_args.schema", "fail", 3, "/args/amount", None),
                           ("tool_args.not_distinct", "fail", 3, "/args/order", [2]),
                           ("tool_args.distinct_missing", "unresolved", 4, "/args/order", None),
                           ("tool_args.args_missing", "unresolved", 5, "/args", None)]
    assert [v["event_index"] for v in out.violations] == [2, 2, 2, 2, 3, 4]


def test_top_level_violations_follow_contract_order(run):
    out = run([rule(match={"amount": {"$lt": 100}}), {**rule(tool="get", match={"id": {"$regex": "^A"}}), "id": "r2"}],
              call("get", {"id": "B"}, "g1"), subject({"amount": 500}))
    assert [(v["rule_id"], v["event_seq"]) for v in out.report["violations"]] == [("r", 2), ("r2", 1)]


# -- point 6: status and severity -----------------------------------------------------------------

def test_an_unresolved_violation_of_an_error_rule_fails_the_check(run):
    out = check(run, {"confirm": {"$arg": "nope"}}, {"confirm": "A1"})
    assert (out.exit, out.result["passed"], out.report["error_count"]) == (1, False, 1)


def test_a_warning_rule_counts_its_unresolved_violation_as_a_warning(run):
    out = check(run, {"confirm": {"$arg": "nope"}}, {"confirm": "A1"}, severity="warning")
    assert (out.exit, out.result["passed"], out.report["error_count"], out.report["warning_count"]) == (0, False, 0, 1)
    assert (out.violations[0]["severity"], out.violations[0]["status"]) == ("warning", "unresolved")


# -- point 7: evidence encoding -------------------------------------------------------------------

@pytest.mark.parametrize(("written", "shown"), [("100.0", 100), ("2.50", "2.5"), ("1.0E2", 100), ("1E21", "1e+21"),
                                               ("0.000001", "0.000001"), ("1e-7", "1e-7"), ("-0.0", 0),
                                               # beyond 2**53, the double's shortest digits (as JS writes 2**60)
                                               ("1152921504606846976", 1152921504606847000),
                                               ("1.152921504606847e18", 1152921504606847000),
                                               ("18014398509481984", 18014398509481984)])
def test_evidence_numbers_are_in_canonical_form(run, written, shown):
    line = '{"seq": 1, "type": "tool.call", "tool": "refund", "call_id": "s", "args": {"amount": ' + written + "}}"
    out = run(rule(match={"amount": {"$lt": -1}}), line)
    raw = json.loads(out.stdout, parse_float=str)     # a float literal stays its text; ints stay ints
    (entry,) = raw["results"][0]["violations"][0]["evidence"]["mismatches"]
    assert entry["actual"] == shown and type(entry["actual"]) is type(shown)


def test_a_violations_pointer_is_never_cut_like_evidence_strings(run):
    key = "k" * 300
    violation = check(run, {key: 1}, {key: 2}).single("mismatch")
    assert violation["pointer"] == f"/args/{key}"                       # a pointer into the event
    assert violation["evidence"]["mismatches"][0]["pointer"] == f"/args/{key[:194]}…"   # evidence: 200 code points


def test_a_pointer_over_1000_characters_names_its_deepest_ancestor_within_them(run):
    key = "k" * 5000
    violation = check(run, {}, {key: 1}, mode="exact").single("mismatch")
    assert violation["pointer"] == "/args"
    violation = check(run, {"nested": {}}, {"nested": {key: 1}}, mode="exact").single("mismatch")
    assert violation["pointer"] == "/args/nested"


def test_evidence_shows_the_written_nodes_numbers_canonically(run):
    out = check(run, {"amount": {"$lt": 50.0}}, {"amount": 100})
    raw = json.loads(out.stdout, parse_float=str)
    assert raw["results"][0]["violations"][0]["evidence"]["mismatches"] == [
        {"pointer": "/args/amount", "expected": {"$lt": 50}, "actual": 100}]


def test_evidence_keys_are_in_rfc8785_order(run):
    out = check(run, {"amount": {"$lt": 100, "$gt": 1}}, {"amount": 500})

    def ordered(value: Any) -> bool:
        if isinstance(value, dict):
            return list(value) == sorted(value) and all(ordered(item) for item in value.values())
        if isinstance(value, list):
            return all(ordered(item) for item in value)
        return True
    assert ordered(out.violations[0]["evidence"])


def test_evidence_strings_are_cut_to_200_code_points_plus_ellipsis(run):
    out = check(run, {"note": {"$regex": "^ok"}}, {"note": "😀" * 250})
    assert mismatches(out)[0]["actual"] == "😀" * 200 + "…"


def test_evidence_strings_of_200_code_points_are_kept_whole(run):
    out = check(run, {"note": {"$regex": "^ok"}}, {"note": "😀" * 200})
    assert mismatches(out)[0]["actual"] == "😀" * 200


def test_evidence_cuts_the_written_node_too(run):
    out = check(run, {"note": "a" * 300}, {"note": "b"})
    assert mismatches(out) == [{"pointer": "/args/note", "expected": "a" * 200 + "…", "actual": "b"}]


def test_evidence_lists_at_most_20_mismatches(run):
    out = check(run, {f"k{i:02d}": 1 for i in range(25)}, {f"k{i:02d}": 0 for i in range(25)})
    pointers = [entry["pointer"] for entry in mismatches(out)]
    assert len(pointers) == 20 and len(set(pointers)) == 20
    assert set(pointers) <= {f"/args/k{i:02d}" for i in range(25)}
    assert out.result["passed"] is False and len(out.violations) == 1


def test_evidence_lists_at_most_20_candidates(run):
    before = [event for i in range(25) for event in get(f"g{i}", {}, {"paid": i + 1})]
    (entry,) = mismatches(check(run, {"amount": fr(path="paid")}, {"amount": 99}, *before))
    candidates = entry["expected"]["any_of"]
    assert len(candidates) == 20 and len(set(candidates)) == 20 and set(candidates) <= set(range(1, 26))
    assert (entry["pointer"], entry["actual"]) == ("/args/amount", 99)


# -- point 9: absence and null --------------------------------------------------------------------

def test_an_absent_key_under_a_literal_is_a_mismatch_without_actual(run):
    assert mismatches(check(run, {"order": "A1"}, {"amount": 5})) == [{"pointer": "/args/order", "expected": "A1"}]


def test_an_absent_key_under_an_operator_is_a_mismatch_without_actual(run):
    assert mismatches(check(run, {"amount": {"$gt": 1}}, {"order": "A1"})) == [
        {"pointer": "/args/amount", "expected": {"$gt": 1}}]


def test_null_matches_a_null_literal(run):
    passes(check(run, {"note": None}, {"note": None}))


def test_null_is_present_and_mismatches_a_value(run):
    assert mismatches(check(run, {"note": "x"}, {"note": None})) == [
        {"pointer": "/args/note", "expected": "x", "actual": None}]


# -- point 13: paths ------------------------------------------------------------------------------

def test_a_numeric_dot_segment_indexes_an_array(run):
    passes(check(run, {"copy": {"$arg": "items.1"}}, {"items": ["x", "y"], "copy": "y"}))


def test_a_numeric_dot_segment_on_an_object_is_a_key(run):
    passes(check(run, {"copy": {"$arg": "m.0"}}, {"m": {"0": "z"}, "copy": "z"}))


def test_a_non_numeric_segment_on_an_array_is_not_found(run):
    out = check(run, {"copy": {"$arg": "items.first"}}, {"items": ["x"], "copy": "x"})
    assert unresolved(out) == no_candidates("/args/copy", {"$arg": "items.first"})


def test_a_non_canonical_index_on_an_array_is_not_found(run):
    out = check(run, {"copy": {"$arg": "items.01"}}, {"items": ["x", "y"], "copy": "y"})
    assert unresolved(out) == no_candidates("/args/copy", {"$arg": "items.01"})


def test_a_slash_path_is_the_pointer_to_the_empty_key(run):
    passes(check(run, {"copy": {"$arg": "/"}}, {"": "e", "copy": "e"}))


def test_pointer_paths_unescape_slash_and_tilde(run):
    passes(check(run, {"copy": {"$arg": "/a~1b/c~0d"}}, {"a/b": {"c~d": 3}, "copy": 3}))


def test_from_result_paths_may_be_pointers(run):
    passes(check(run, {"amount": fr(path="/items/1/price")}, {"amount": 7}, *get("g1", {}, ITEMS)))


# -- v1 kinds under v2 (§2) -----------------------------------------------------------------------

def test_a_v2_matcher_takes_an_args_tree_and_an_event_without_args_never_matches(run):
    deny = {"id": "d", "kind": "deny_event",
            "match": {"type": "tool.call", "tool": "refund", "args": {"amount": {"$gt": 100}}}}
    out = run(deny, subject({"amount": 500}), subject({"amount": 5}), subject())
    assert [(v["code"], v["event_seq"]) for v in out.violations] == [("deny_event.matched", 1)]


# -- load errors ----------------------------------------------------------------------------------

def test_an_unknown_operator_is_refused_with_did_you_mean(refused):
    line = refused(rule(match={"order": {"$regx": "^A"}}))
    assert at(line, "$.rules[0].match.order.$regx")
    assert "did you mean" in line and "$regex" in line


def test_an_unknown_from_result_key_is_refused_with_did_you_mean(refused):
    line = refused(rule(match={"amount": {"$from_result": {"tol": "get"}}}))
    assert at(line, "$.rules[0].match.amount.$from_result.tol") and "did you mean" in line


def test_mixed_dollar_and_plain_keys_are_refused(refused):
    assert at(refused(rule(match={"order": {"$in": ["A1"], "id": 1}})), "$.rules[0].match.order")


@pytest.mark.parametrize("operand", ["A1", list(range(1001))], ids=["not-a-list", "1001-values"])
def test_a_bad_in_operand_is_refused(refused, operand):
    assert at(refused(rule(match={"order": {"$in": operand}})), "$.rules[0].match.order.$in")


@pytest.mark.parametrize("count", [1, 21])
def test_any_of_needs_2_to_20_branches(refused, count):
    node = {"$any_of": [{"$in": [i]} for i in range(count)]}
    assert at(refused(rule(match={"order": node})), "$.rules[0].match.order.$any_of")


@pytest.mark.parametrize("operator", ["$gt", "$gte", "$lt", "$lte"])
@pytest.mark.parametrize("operand", ["100", True], ids=["string", "boolean"])
def test_a_comparison_takes_only_a_finite_number(refused, operator, operand):
    assert at(refused(rule(match={"amount": {operator: operand}})), f"$.rules[0].match.amount.{operator}")


def test_exists_as_the_root_is_refused(refused):
    assert at(refused(rule(match={"$exists": True})), "$.rules[0].match.$exists")


def test_exists_inside_contains_is_refused(refused):
    assert at(refused(rule(match={"items": {"$contains": {"$exists": True}}})),
              "$.rules[0].match.items.$contains.$exists")


def test_exists_as_an_array_element_is_refused(refused):
    assert at(refused(rule(match={"tags": [{"$exists": True}]})), "$.rules[0].match.tags[0].$exists")


def test_exists_needs_a_boolean(refused):
    assert at(refused(rule(match={"note": {"$exists": 1}})), "$.rules[0].match.note.$exists")


@pytest.mark.parametrize("pattern", [
    5, {"$arg": "order"}, "a" * 501, "(a)\\1", "(?=a)", "(?!a)", "(?<=a)b", "(?<!a)b", "(?>a)", "a*+", "a++",
    "(a)?(?(1)b|c)",
], ids=["not-a-string", "a-reference", "501-chars", "backreference", "lookahead", "negative-lookahead",
        "lookbehind", "negative-lookbehind", "atomic-group", "possessive-star", "possessive-plus", "conditional"])
def test_a_regex_outside_the_re2_subset_is_refused(refused, pattern):
    assert at(refused(rule(match={"order": {"$regex": pattern}})), "$.rules[0].match.order.$regex")


@pytest.mark.parametrize("reference", [{"$arg": "sku"}, {"$from_output": "sku"}], ids=["arg", "from_output"])
def test_a_reference_inside_find_is_refused(refused, reference):
    (name,) = reference
    ref = fr(path="items", find={"sku": reference}, select="price")
    assert at(refused(rule(match={"amount": ref})), f"$.rules[0].match.amount.$from_result.find.sku.{name}")


def test_an_empty_path_is_refused(refused):
    assert at(refused(rule(match={"copy": {"$arg": ""}})), "$.rules[0].match.copy.$arg")


def test_a_tree_deeper_than_32_levels_is_refused(refused):
    deep: Any = 1
    for _ in range(40):
        deep = {"k": deep}
    assert under(refused(rule(match=deep)), "$.rules[0].match")


def test_a_tree_of_more_than_10000_nodes_is_refused(refused):
    assert under(refused(rule(match={"tags": list(range(10_001))})), "$.rules[0].match")


def test_call_index_with_distinct_is_refused(refused):
    line = refused(rule(call_index=0, distinct=["order"]))
    assert under(line, "$.rules[0]") and "call_index" in line and "distinct" in line


@pytest.mark.parametrize("key", ["where", "where_result"])
def test_from_result_call_index_with_where_is_refused(refused, key):
    line = refused(rule(match={"amount": fr(call_index=0, **{key: {"id": "A1"}})}))
    assert under(line, "$.rules[0].match.amount.$from_result") and "call_index" in line and key in line


def test_a_rule_with_none_of_match_schema_distinct_is_refused(refused):
    line = refused(rule())
    assert under(line, "$.rules[0]") and all(field in line for field in ("match", "schema", "distinct"))


@pytest.mark.parametrize("value", [-1, 1_000_001])
def test_call_index_outside_0_to_1e6_is_refused(refused, value):
    assert at(refused(rule(call_index=value, match={"order": "A1"})), "$.rules[0].call_index")


def test_an_unknown_mode_is_refused(refused):
    assert at(refused(rule(mode="strict", match={"order": "A1"})), "$.rules[0].mode")


def test_ignore_without_exact_mode_is_refused(refused):
    assert at(refused(rule(ignore=["note"], match={"order": "A1"})), "$.rules[0].ignore")


@pytest.mark.parametrize("count", [0, 21])
def test_distinct_needs_1_to_20_paths(refused, count):
    assert at(refused(rule(distinct=[f"k{i}" for i in range(count)], match={"order": "A1"})), "$.rules[0].distinct")


def test_a_schema_with_a_remote_ref_is_refused(refused):
    schema = {"properties": {"amount": {"$ref": "https://example.com/money.json"}}}
    assert under(refused(rule(schema=schema)), "$.rules[0].schema")


def test_an_invalid_schema_is_refused(refused):
    assert under(refused(rule(schema={"type": "nope"})), "$.rules[0].schema")


def test_a_reference_in_a_matchers_args_is_refused(refused):
    deny = {"id": "d", "kind": "deny_event", "match": {"type": "tool.call", "args": {"amount": {"$arg": "x"}}}}
    assert at(refused(deny), "$.rules[0].match.args.amount.$arg")


def test_tool_args_in_a_version_1_contract_needs_version_2(refused):
    assert 'needs "version": 2' in refused(rule(match={"order": "A1"}), version=1)


def test_a_matcher_args_tree_in_a_version_1_contract_needs_version_2(refused):
    deny = {"id": "d", "kind": "deny_event", "match": {"type": "tool.call", "args": {"amount": 1}}}
    assert 'needs "version": 2' in refused(deny, version=1)


def test_args_that_are_not_an_object_are_refused_at_their_line(cli, tmp_path):
    write_contract(tmp_path, [rule(match={"order": "A1"})])
    write_trace(tmp_path, (call("get", {}, "g1"), call("refund", "A1", "c1")))
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")
    (line,) = result.stderr.splitlines()
    assert line.startswith(PREFIX) and "t.jsonl:2: $.args: " in line


@pytest.mark.parametrize("kept", [1, 2, 3])
def test_violations_past_max_violations_are_counted_by_code_as_those_kept(kept: int) -> None:
    """v1 D7: --max-violations bounds what is kept, never the counts. Past it, a call that both
    mismatches and has an unresolved reference still counts as two violations."""
    from agent_invariants import check_trace

    contract = {"version": 2, "name": "cap", "rules": [{
        "id": "refund", "kind": "tool_args", "tool": "refund",
        "match": {"amount": {"$from_result": {"tool": "get", "path": "paid"}},
                  "order": {"$from_result": {"tool": "find", "path": "id"}}}}]}
    events: list[dict[str, Any]] = [{"type": "tool.call", "tool": "get", "call_id": "g"},
                                    {"type": "tool.result", "call_id": "g", "ok": True, "result": {"paid": 10}}]
    events += [{"type": "tool.call", "tool": "refund", "call_id": f"r{n}", "args": {"amount": 12, "order": "A"}}
                for n in range(5)]
    events = [{"seq": number, **event} for number, event in enumerate(events, 1)]
    every = check_trace(contract, events, max_violations=0)
    cut = check_trace(contract, events, max_violations=kept)
    assert (every.results[0].violation_count, every.error_count) == (10, 10)
    assert (cut.results[0].violation_count, cut.error_count) == (10, 10)
    assert [v.code for v in cut.violations] == [v.code for v in every.violations][:kept]


# -- a looked-up array, call after call ------------------------------------------------------------

def _joined_lookups(tmp_path, match: dict, items: int, row: int | None = None) -> subprocess.CompletedProcess:
    """One `orders.get` of A whose result holds `items` records, then as many `pay` calls of A,
    checked by a `tool_args` rule whose reference joins on the order id (`where` with `$arg`)."""
    events = [{"seq": 1, "type": "tool.call", "tool": "orders.get", "call_id": "c0", "args": {"id": "A"}},
              {"seq": 2, "type": "tool.result", "call_id": "c0", "ok": True,
               "result": {"items": [{"k": n} for n in range(items)]}}]
    events += [{"seq": 3 + n, "type": "tool.call", "tool": "pay", "call_id": f"p{n}",
                "args": {"k": items - 1, "row": {"k": items - 1 if row is None else row}, "id": "A"}}
               for n in range(items)]
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(event) + "\n" for event in events))
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "x", "rules": [
        {"id": "a", "kind": "tool_args", "tool": "pay", "match": match}]}))
    return subprocess.run([sys.executable, "-m", "agent_invariants", "check", "-c", "c.json", "-t", "t.jsonl"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=20)


def test_find_in_a_joined_result_is_taken_once_a_result_not_once_a_call(tmp_path):
    """`find` over a looked-up array ran again for each call (calls x elements x the tree: 1,000
    calls against 1,000 records, each tried by a tree of 400 nodes, took 72 s): a result's steps
    read nothing of the subject, and are taken once."""
    wide = {"$any_of": [{"$any_of": [{"$gt": 1e9 + x} for x in range(20)]} for _ in range(19)] + [{"$gte": 999}]}
    reference = {"$from_result": {"tool": "orders.get", "path": "items", "where": {"id": {"$arg": "id"}},
                                  "find": {"k": wide}, "select": "k"}}
    result = _joined_lookups(tmp_path, {"k": reference}, 1_000)
    assert result.returncode == 0, result.stdout + result.stderr


def test_in_a_joined_array_looks_each_value_up_in_a_set_of_its_elements(tmp_path):
    """`$in` a looked-up array compared each call's value with every element (8,000 calls against
    8,000 records: about 45 s): the array seen last keeps the keys of its elements."""
    reference = {"$from_result": {"tool": "orders.get", "path": "items", "where": {"id": {"$arg": "id"}}}}
    result = _joined_lookups(tmp_path, {"row": {"$in": reference}}, 8_000)
    assert result.returncode == 0, result.stdout + result.stderr


def test_in_a_joined_array_explains_each_mismatch_from_the_same_set(tmp_path):
    """A value in no element fails every call, and each failure's explanation listed the array's
    distinct elements by comparing them all again (4,000 calls: 12.5 s)."""
    reference = {"$from_result": {"tool": "orders.get", "path": "items", "where": {"id": {"$arg": "id"}}}}
    result = _joined_lookups(tmp_path, {"row": {"$in": reference}}, 8_000, row=-1)
    assert result.returncode == 1, result.stderr
    assert "8000 errors" in result.stdout.replace(",", "")


def test_distinct_holds_a_long_value_by_its_digest(tmp_path):
    """Found by a hunt for unbounded memory: `distinct` kept every value seen in full (10,000
    calls with 100 KB queries: 1 GB), where precedence holds a key over 256 characters by its
    SHA-256. It does too now: 500 calls with 20 KB queries, that differ only at their start, held
    11 MB and now hold about 1.5; long values that are equal still meet."""
    import tracemalloc

    from agent_invariants import check_trace

    long = "x" * 20_000
    path = tmp_path / "t.jsonl"
    with path.open("w") as out:
        for number in range(500):
            out.write(json.dumps({"seq": number + 1, "type": "tool.call", "tool": "search", "call_id": f"c{number}",
                                  "args": {"q": f"{number:06d}{long}"}}) + "\n")
        out.write(json.dumps({"seq": 501, "type": "tool.call", "tool": "search", "call_id": "again",
                              "args": {"q": f"{7:06d}{long}"}}) + "\n")
    rule = {"id": "d", "kind": "tool_args", "tool": "search", "distinct": ["q"]}
    tracemalloc.start()
    try:
        report = check_trace({"version": 2, "name": "t", "rules": [rule]}, str(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4_000_000
    (violation,) = report.violations
    assert (violation.code, violation.event_seq, violation.related_seqs) == ("tool_args.not_distinct", 501, [8])
