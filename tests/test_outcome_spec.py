"""The outcome kinds `output_match`, `output_schema` and `run_status`, and `caused_by`, tested from the
spec's words (spec v2 §0, §1, §2, §3.7 and §10 points 1-7, 9, 12, 14 and 16, with the issue's decisions
for what the spec leaves open) through the CLI on real files: the §3.7 example in its FAIL and PASS
variants, the terminal and its output, each field and code, `$from_result` before the terminal, the
`when` of output_match, the causality of a failing output_schema, the run status, and the load errors
(each one stderr line naming the contract file and the JSON path of the mistake, exit 2).

Expected values are derived from the spec text, not from running the implementation."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import pytest

from support import at, refused_line, under, write_contract, write_trace

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


def done(output: Any = ABSENT, kind: str = "run.completed", **extra: Any) -> dict[str, Any]:
    """A terminal event (`run.completed` unless told); `output` left out when ABSENT."""
    event: dict[str, Any] = {"type": kind}
    if output is not ABSENT:
        event["output"] = output
    return {**event, **extra}


def ledger(call_id: str, total: Any) -> list[dict[str, Any]]:
    """A `ledger` call and its successful result `{"total": total}`."""
    return [call("ledger", {}, call_id), res(call_id, {"total": total})]


def outcome(outcome_id: str, verdict: str) -> dict[str, Any]:
    return {"type": "outcome.observed", "outcome_id": outcome_id, "verdict": verdict}


def om(match: Any, rule_id: str = "m", **fields: Any) -> dict[str, Any]:
    return {"id": rule_id, "kind": "output_match", "match": match, **fields}


def osch(schema: Any, rule_id: str = "s") -> dict[str, Any]:
    return {"id": rule_id, "kind": "output_schema", "schema": schema}


def rs(rule_id: str = "st", **fields: Any) -> dict[str, Any]:
    return {"id": rule_id, "kind": "run_status", **fields}


TOTAL_REF = {"$from_result": {"tool": "ledger", "path": "total"}}


@dataclass
class Run:
    exit: int
    report: dict[str, Any]

    def result(self, rule_id: str | None = None) -> dict[str, Any]:
        results = self.report["results"]
        if rule_id is None:
            assert len(results) == 1, [r["rule_id"] for r in results]
            return results[0]
        (found,) = [r for r in results if r["rule_id"] == rule_id]
        return found

    def violations(self, rule_id: str | None = None) -> list[dict[str, Any]]:
        return self.result(rule_id)["violations"]

    def brief(self, rule_id: str | None = None) -> list[tuple[Any, ...]]:
        """(code, status, event_seq) per violation, event_seq None when absent; `event_index`
        travels with `event_seq` (point 2)."""
        out = []
        for violation in self.violations(rule_id):
            seq = violation.get("event_seq")
            assert violation.get("event_index") == (None if seq is None else seq - 1), violation
            out.append((violation["code"], violation["status"], seq))
        return out

    def single(self, code: str, rule_id: str | None = None) -> dict[str, Any]:
        assert [v["code"] for v in self.violations(rule_id)] == [code], self.brief(rule_id)
        return self.violations(rule_id)[0]

    def caused(self) -> list[tuple[Any, ...]]:
        """(rule_id, code, event_seq, caused_by) per top-level violation; None where absent."""
        return [(v["rule_id"], v["code"], v.get("event_seq"), v.get("caused_by")) for v in self.report["violations"]]


@pytest.fixture
def run(cli, tmp_path):
    """run(rule or [rules], *events, version=2) -> Run, from `check --format json`."""
    def _run(rules: Any, *events: Any, version: int = 2) -> Run:
        write_contract(tmp_path, rules if isinstance(rules, list) else [rules], version)
        write_trace(tmp_path, events)
        result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
        assert result.returncode in (0, 1), result.stderr
        return Run(result.returncode, json.loads(result.stdout))
    return _run


@pytest.fixture
def refused(cli, tmp_path):
    """refused(rules, version=2) -> the one stderr line of a refused contract (exit 2, no stdout)."""
    def _refused(rules: Any, version: int = 2) -> str:
        write_contract(tmp_path, rules if isinstance(rules, list) else [rules], version)
        write_trace(tmp_path, (done({"total": 1}),))
        return refused_line(cli)
    return _refused



def names(line: str, field: str) -> bool:
    """The line names `field` as a word of its own (not inside `output_match` or `$.rules[0].when`)."""
    return re.search(rf"(?<![\w.$]){re.escape(field)}(?!\w)", line) is not None


def passes(out: Run, rule_id: str | None = None) -> None:
    result = out.result(rule_id)
    assert (result["passed"], result["violations"]) == (True, []), out.brief(rule_id)


def all_pass(out: Run) -> None:
    assert (out.exit, out.report["passed"], out.report["error_count"], out.report["violations"]) == (
        0, True, 0, []), [(v["rule_id"], v["code"]) for v in out.report["violations"]]


def mismatches(out: Run, rule_id: str | None = None) -> list[dict[str, Any]]:
    violation = out.single("output_match.mismatch", rule_id)
    assert violation["status"] == "fail"
    assert violation["pointer"] == violation["evidence"]["mismatches"][0]["pointer"]
    return violation["evidence"]["mismatches"]


def schema_errors(out: Run, rule_id: str | None = None) -> list[dict[str, Any]]:
    violation = out.single("output_schema.schema", rule_id)
    assert violation["status"] == "fail"
    errors = violation["evidence"]["errors"]
    assert all(error.keys() == {"pointer", "message"} and isinstance(error["message"], str) for error in errors)
    return errors


# -- §3.7: the example ----------------------------------------------------------------------------

EXAMPLE_RULES = [
    {"id": "done", "kind": "run_status", "equals": "completed"},
    {"id": "shape", "kind": "output_schema", "schema": {"type": "object", "required": ["total"]}},
    {"id": "true-total", "kind": "output_match",
     "match": {"total": {"$from_result": {"tool": "ledger", "path": "total"}}}},
]
EXAMPLE_TRACE = [
    {"type": "tool.call", "tool": "ledger", "call_id": "l1", "args": {}},
    {"type": "tool.result", "call_id": "l1", "ok": True, "result": {"total": 40}},
    {"type": "run.completed", "status": "completed", "output": {"total": 45}},
]


def test_example_fails_true_total_with_a_mismatch_at_seq_3_and_passes_done_and_shape(run):
    out = run(EXAMPLE_RULES, *EXAMPLE_TRACE)
    assert out.exit == 1
    passes(out, "done")
    passes(out, "shape")
    assert out.brief("true-total") == [("output_match.mismatch", "fail", 3)]
    violation = out.violations("true-total")[0]
    assert (violation["rule_id"], violation["rule_kind"], violation["severity"]) == (
        "true-total", "output_match", "error")
    assert violation["pointer"] == "/output/total"
    assert violation["evidence"]["mismatches"] == [
        {"pointer": "/output/total", "expected": {"any_of": [40]}, "actual": 45}]
    assert "caused_by" not in violation          # shape passes
    assert [(r["rule_id"], r["passed"], r["checked"]) for r in out.report["results"]] == [
        ("done", True, 1), ("shape", True, 1), ("true-total", False, 1)]
    assert (out.report["passed"], out.report["error_count"], out.report["warning_count"]) == (False, 1, 0)
    assert out.report["violations"] == out.violations("true-total")


def test_example_passes_with_total_40(run):
    out = run(EXAMPLE_RULES, *EXAMPLE_TRACE[:2], {**EXAMPLE_TRACE[2], "output": {"total": 40}})
    all_pass(out)
    assert [(r["rule_id"], r["checked"]) for r in out.report["results"]] == [
        ("done", 1), ("shape", 1), ("true-total", 1)]
    assert all("vacuous" not in r for r in out.report["results"])


# -- output_match: the match tree on the final output ---------------------------------------------

def test_output_match_is_a_subset_match_with_the_operators_of_the_grammar(run):
    out = run(om({"total": {"$gte": 40}, "status": {"$regex": "^ok"}, "customer": {"id": 7}}),
              done({"total": 40, "status": "ok now", "customer": {"id": 7, "vip": True}, "extra": [1]}))
    all_pass(out)
    assert out.result()["checked"] == 1


def test_a_mismatch_lists_every_entry_with_pointers_under_output_and_no_actual_when_absent(run):
    out = run(om({"a": 1, "b": {"c": 2}, "d": 3}), {"type": "agent.message"},
              done({"a": 0, "b": {"c": 5, "x": 1}}))
    assert out.brief() == [("output_match.mismatch", "fail", 2)]
    assert mismatches(out) == [{"pointer": "/output/a", "expected": 1, "actual": 0},
                               {"pointer": "/output/b/c", "expected": 2, "actual": 5},
                               {"pointer": "/output/d", "expected": 3}]
    assert (out.exit, out.result()["passed"], out.report["error_count"]) == (1, False, 1)


def test_exact_mode_reports_an_extra_key_at_a_nested_level(run):
    out = run(om({"total": 40, "meta": {"k": 1}}, mode="exact"), done({"total": 40, "meta": {"k": 1, "extra": 2}}))
    assert [(entry["pointer"], entry.get("actual")) for entry in mismatches(out)] == [("/output/meta/extra", 2)]


def test_exact_mode_passes_equal_key_sets_and_ignore_skips_top_level_keys(run):
    out = run([om({"total": 40, "meta": {"k": 1}}, "equal", mode="exact"),
               om({"total": 40}, "ignored", mode="exact", ignore=["meta"])],
              done({"total": 40, "meta": {"k": 1}}))
    all_pass(out)


def test_ignore_applies_to_the_top_level_only(run):
    out = run(om({"total": 40, "meta": {"k": 1}}, mode="exact", ignore=["trace_id"]),
              done({"total": 40, "meta": {"k": 1, "trace_id": "t"}}))
    assert [(entry["pointer"], entry.get("actual")) for entry in mismatches(out)] == [("/output/meta/trace_id", "t")]


def test_exact_mode_reports_a_top_level_extra_key(run):
    out = run(om({"total": 40}, mode="exact"), done({"total": 40, "note": "x"}))
    assert [(entry["pointer"], entry.get("actual")) for entry in mismatches(out)] == [("/output/note", "x")]


# -- output_match: the terminal and its output ----------------------------------------------------

@pytest.mark.parametrize("trace", [[], [call("ledger", {}, "l1"), {"type": "agent.message"}]],
                         ids=["empty-trace", "no-terminal"])
def test_output_missing_without_a_terminal_has_no_seq(run, trace):
    out = run(om({"total": TOTAL_REF}), *trace)
    assert out.brief() == [("output_match.output_missing", "unresolved", None)]
    assert (out.exit, out.result()["passed"], out.result()["checked"]) == (1, False, 1)
    assert "vacuous" not in out.result()


@pytest.mark.parametrize("kind", ["run.completed", "run.failed"])
def test_output_missing_at_a_terminal_without_output(run, kind):
    out = run(om({"total": 40}), call("ledger", {}, "l1"), done(kind=kind))
    assert out.brief() == [("output_match.output_missing", "unresolved", 2)]
    assert out.exit == 1


def test_a_null_output_is_an_output_and_a_mismatch_for_an_object_pattern(run):
    out = run(om({"total": 40}), {"type": "agent.message"}, done(None))
    assert out.brief() == [("output_match.mismatch", "fail", 2)]
    assert all(entry["pointer"].startswith("/output") for entry in mismatches(out))


def test_a_run_failed_terminal_and_its_output_are_read(run):
    out = run([om({"total": 40}, "forty"), om({"total": 45}, "forty-five")],
              done({"total": 40}, kind="run.failed", status="failed"))
    passes(out, "forty")
    assert out.brief("forty-five") == [("output_match.mismatch", "fail", 1)]
    assert mismatches(out, "forty-five") == [{"pointer": "/output/total", "expected": 45, "actual": 40}]


def test_the_last_terminal_decides_a_mismatch(run):
    out = run(om({"total": 40}), done({"total": 40}), done({"total": 45}))
    assert out.brief() == [("output_match.mismatch", "fail", 2)]
    assert mismatches(out) == [{"pointer": "/output/total", "expected": 40, "actual": 45}]


def test_the_last_terminal_decides_a_pass_even_when_it_is_run_failed(run):
    all_pass(run(om({"total": 40}), done({"total": 45}), done({"total": 40}, kind="run.failed")))


def test_an_earlier_terminals_output_does_not_stand_in_for_the_last_ones(run):
    out = run(om({"total": 40}), done({"total": 40}), {"type": "agent.message"}, done())
    assert out.brief() == [("output_match.output_missing", "unresolved", 3)]


# -- output_match: references ---------------------------------------------------------------------

def test_from_result_reads_results_before_the_terminal_only(run):
    out = run(om({"total": TOTAL_REF}), *ledger("l1", 40), done({"total": 45}), *ledger("l2", 45))
    assert out.brief() == [("output_match.mismatch", "fail", 3)]
    assert mismatches(out) == [{"pointer": "/output/total", "expected": {"any_of": [40]}, "actual": 45}]


def test_from_result_with_only_later_results_has_no_candidates_at_the_terminal(run):
    out = run(om({"total": TOTAL_REF}), call("ledger", {}, "l1"), done({"total": 40}), res("l1", {"total": 40}))
    violation = out.single("output_match.reference_unresolved")
    assert (violation["status"], violation["event_seq"], violation["pointer"]) == ("unresolved", 2, "/output/total")
    assert violation["evidence"]["unresolved"] == [
        {"pointer": "/output/total", "reference": TOTAL_REF, "reason": "no_candidates"}]


def test_from_result_sees_results_between_an_earlier_terminal_and_the_last(run):
    # the subject is the terminal, i.e. the LAST run.completed/run.failed
    out = run(om({"total": TOTAL_REF}), *ledger("l1", 40), done({"total": 45}), *ledger("l2", 45), done({"total": 45}))
    all_pass(out)


def test_from_result_equality_passes_if_any_candidate_equals(run):
    all_pass(run(om({"total": TOTAL_REF}), *ledger("l1", 40), *ledger("l2", 45), done({"total": 40})))


def test_from_result_without_a_terminal_is_output_missing_only(run):
    out = run(om({"total": TOTAL_REF}), *ledger("l1", 40))
    assert out.brief() == [("output_match.output_missing", "unresolved", None)]


def test_a_terminal_gets_one_mismatch_then_one_reference_unresolved(run):
    missing = {"$from_result": {"tool": "audit", "path": "ref"}}
    out = run(om({"note": "n", "ref": missing, "total": 40}), *ledger("l1", 40),
              done({"note": "m", "ref": "R", "total": 45}))
    assert out.brief() == [("output_match.mismatch", "fail", 3),
                           ("output_match.reference_unresolved", "unresolved", 3)]
    first, second = out.violations()
    assert first["evidence"]["mismatches"] == [{"pointer": "/output/note", "expected": "n", "actual": "m"},
                                               {"pointer": "/output/total", "expected": 40, "actual": 45}]
    assert first["pointer"] == "/output/note"
    assert second["evidence"]["unresolved"] == [{"pointer": "/output/ref", "reference": missing,
                                                 "reason": "no_candidates"}]
    assert second["pointer"] == "/output/ref"
    assert out.report["error_count"] == 2


# -- output_match: when ---------------------------------------------------------------------------

def test_a_false_when_is_a_pass_with_checked_0(run):
    out = run([om({"total": 40}, "by-path", when={"path": "kind", "equals": "refund"}),
               om({"total": 40}, "by-outcome", when={"outcome": {"outcome_id": "fraud", "verdict": "violated"}})],
              outcome("fraud", "satisfied"), done({"kind": "order", "total": 45}))
    all_pass(out)
    for rule_id in ("by-path", "by-outcome"):
        assert out.result(rule_id)["checked"] == 0
        assert "vacuous" not in out.result(rule_id)


def test_a_false_outcome_when_skips_even_a_missing_output(run):
    out = run(om({"total": 40}, when={"outcome": {"outcome_id": "fraud", "verdict": "violated"}}),
              outcome("fraud", "satisfied"), done())
    all_pass(out)
    assert out.result()["checked"] == 0


def test_a_true_when_checks_the_output(run):
    out = run(om({"total": 40}, when={"path": "kind", "equals": "refund"}), done({"kind": "refund", "total": 45}))
    assert mismatches(out) == [{"pointer": "/output/total", "expected": 40, "actual": 45}]
    assert (out.result()["checked"], out.exit) == (1, 1)


def test_an_unresolved_when_gives_only_condition_unresolved_even_next_to_a_mismatch(run):
    out = run([om({"total": 40}, "by-path", when={"path": "kind", "equals": "refund"}),
               om({"total": 40}, "by-outcome", when={"outcome": {"outcome_id": "fraud", "verdict": "violated"}})],
              done({"total": 45}))
    for rule_id in ("by-path", "by-outcome"):
        assert out.brief(rule_id) == [("output_match.condition_unresolved", "unresolved", 1)]
        assert (out.result(rule_id)["passed"], out.result(rule_id)["checked"]) == (False, 1)
    assert (out.exit, out.report["error_count"]) == (1, 2)


def test_an_unresolved_when_at_a_terminal_without_output_is_not_output_missing(run):
    out = run(om({"total": 40}, when={"path": "kind", "equals": "refund"}), {"type": "agent.message"}, done())
    assert out.brief() == [("output_match.condition_unresolved", "unresolved", 2)]


def test_an_unresolved_when_without_a_terminal_has_no_seq(run):
    out = run(om({"total": TOTAL_REF}, when={"path": "kind", "equals": "refund"}), *ledger("l1", 40))
    assert out.brief() == [("output_match.condition_unresolved", "unresolved", None)]


# -- output_schema --------------------------------------------------------------------------------

SHAPE = {"type": "object", "properties": {
    "total": {"type": "integer"}, "currency": {"type": "string"},
    "items": {"type": "array", "items": {"properties": {"sku": {"type": "string"}}}}}}


def test_schema_errors_sit_at_the_terminal_with_pointers_under_output(run):
    out = run(osch(SHAPE), {"type": "agent.message"},
              done({"total": "45", "currency": 7, "items": [{"sku": "A"}, {"sku": 2}]}))
    assert out.brief() == [("output_schema.schema", "fail", 2)]
    assert sorted(error["pointer"] for error in schema_errors(out)) == [
        "/output/currency", "/output/items/1/sku", "/output/total"]
    assert (out.exit, out.result()["checked"], out.report["error_count"]) == (1, 1, 1)


def test_a_valid_output_passes(run):
    out = run(osch(SHAPE), done({"total": 45, "currency": "EUR", "items": [{"sku": "A"}]}))
    all_pass(out)
    assert out.result()["checked"] == 1 and "vacuous" not in out.result()


def test_a_null_output_is_an_output_for_the_schema(run):
    out = run([osch({"type": "object"}, "object"), osch({"type": "null"}, "null")], done(None))
    passes(out, "null")
    assert out.brief("object") == [("output_schema.schema", "fail", 1)]
    assert [error["pointer"] for error in schema_errors(out, "object")] == ["/output"]


@pytest.mark.parametrize("trace", [[], [call("ledger", {}, "l1"), {"type": "agent.message"}]],
                         ids=["empty-trace", "no-terminal"])
def test_output_schema_output_missing_without_a_terminal_has_no_seq(run, trace):
    out = run(osch(SHAPE), *trace)
    assert out.brief() == [("output_schema.output_missing", "unresolved", None)]
    assert (out.exit, out.result()["checked"]) == (1, 1)


@pytest.mark.parametrize("kind", ["run.completed", "run.failed"])
def test_output_schema_output_missing_at_a_terminal_without_output(run, kind):
    out = run(osch(SHAPE), {"type": "agent.message"}, done(kind=kind))
    assert out.brief() == [("output_schema.output_missing", "unresolved", 2)]


def test_output_schema_reads_the_last_terminal_even_run_failed(run):
    out = run(osch(SHAPE), done({"total": 45}), done({"total": "x"}, kind="run.failed"))
    assert out.brief() == [("output_schema.schema", "fail", 2)]
    assert [error["pointer"] for error in schema_errors(out)] == ["/output/total"]


def test_output_schema_lists_at_most_20_errors(run):
    schema = {"properties": {f"k{i:02d}": {"type": "string"} for i in range(25)}}
    out = run(osch(schema), done({f"k{i:02d}": i for i in range(25)}))
    pointers = [error["pointer"] for error in schema_errors(out)]
    assert len(pointers) == 20 and len(set(pointers)) == 20
    assert set(pointers) <= {f"/output/k{i:02d}" for i in range(25)}


def test_output_schema_is_json_schema_2020_12(run):
    # prefixItems exists only in 2020-12; an older draft would ignore it.
    out = run(osch({"properties": {"pair": {"prefixItems": [{"type": "string"}, {"type": "integer"}]}}}),
              done({"pair": ["a", "b"]}))
    assert [error["pointer"] for error in schema_errors(out)] == ["/output/pair/1"]


# -- caused_by ------------------------------------------------------------------------------------

CAUSE_RULES = [
    osch({"type": "object", "required": ["total", "items"]}, "shape"),
    om({"total": 40}, "m"),
    {"id": "tc", "kind": "tool_calls", "tool": "refund", "max": 0, "matches_output_length": "items"},
    rs("st", equals="failed"),
    {"id": "ta", "kind": "tool_args", "tool": "refund", "match": {"amount": {"$from_output": "total"}}},
    {"id": "tb", "kind": "tool_args", "tool": "refund", "match": {"amount": 1}},
    {"id": "rw", "kind": "required_when", "tool": "refund", "min": 2, "when": {"path": "items", "non_empty": True}},
    {"id": "fw", "kind": "forbidden_when", "tool": "refund",
     "when": {"outcome": {"outcome_id": "fraud", "verdict": "violated"}}},
]


def test_a_failing_output_schema_marks_every_violation_that_reads_the_output(run):
    out = run(CAUSE_RULES, outcome("fraud", "violated"), call("refund", {"amount": 5}, "c1"), done({"totl": 40}))
    assert out.caused() == [
        ("shape", "output_schema.schema", 3, None),
        ("m", "output_match.mismatch", 3, "shape"),
        ("tc", "tool_calls.max", 2, None),
        ("tc", "tool_calls.output_unresolved", 3, "shape"),
        ("st", "run_status.mismatch", 3, None),
        ("ta", "tool_args.reference_unresolved", 2, "shape"),
        ("tb", "tool_args.mismatch", 2, None),
        ("rw", "required_when.condition_unresolved", 3, "shape"),
        ("fw", "forbidden_when.forbidden", 2, None),
    ]
    # nothing is suppressed
    assert (out.exit, out.report["error_count"]) == (1, 9)
    assert [r["passed"] for r in out.report["results"]] == [False] * 8


def test_a_passing_output_schema_marks_nothing(run):
    out = run(CAUSE_RULES, outcome("fraud", "violated"), call("refund", {"amount": 5}, "c1"),
              done({"total": 41, "items": [1, 2]}))
    assert out.caused() == [
        ("m", "output_match.mismatch", 3, None),
        ("tc", "tool_calls.max", 2, None),
        ("tc", "tool_calls.output_mismatch", 3, None),
        ("st", "run_status.mismatch", 3, None),
        ("ta", "tool_args.mismatch", 2, None),
        ("tb", "tool_args.mismatch", 2, None),
        ("rw", "required_when.min", 3, None),
        ("fw", "forbidden_when.forbidden", 2, None),
    ]
    passes(out, "shape")


def test_caused_by_names_the_first_failing_output_schema_in_contract_order(run):
    out = run([osch({"type": "object"}, "s1"), om({"total": 40}, "m"),
               osch({"required": ["x"]}, "s2"), osch({"required": ["y"]}, "s3")],
              done({"total": 41}))
    passes(out, "s1")
    assert out.single("output_match.mismatch", "m")["caused_by"] == "s2"


def test_an_output_schema_whose_violations_are_inconclusive_causes_nothing(cli, tmp_path):
    """§3.7: "when it fails", the others get `caused_by`. Under `--partial` an output_schema
    rule whose violations are all inconclusive passes: nothing names it."""
    write_contract(tmp_path, [om({"a": 1}, "m"), osch({"type": "array"}, "shape")], 2)
    write_trace(tmp_path, (done({"a": 2}),))
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json", "--partial")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert [(v["rule_id"], v["status"], v.get("caused_by")) for v in report["violations"]] == [
        ("m", "inconclusive", None), ("shape", "inconclusive", None)]
    full = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert [v.get("caused_by") for v in json.loads(full.stdout)["violations"]] == ["shape", None]


def test_an_output_schemas_output_missing_causes_output_matchs(run):
    out = run([om({"total": 40}, "m"), osch({"type": "object"}, "shape"),
               {"id": "tc", "kind": "tool_calls", "tool": "refund", "matches_output_length": "items"}],
              call("refund", {}, "c1"), done())
    assert out.caused() == [("m", "output_match.output_missing", 2, "shape"),
                            ("shape", "output_schema.output_missing", 2, None),
                            ("tc", "tool_calls.output_unresolved", 2, "shape")]


def test_caused_by_marks_a_forbidden_when_whose_condition_reads_a_path(run):
    out = run([osch({"required": ["total"]}, "shape"),
               {"id": "fw", "kind": "forbidden_when", "tool": "refund",
                "when": {"path": "refunds", "non_empty": True}}],
              call("refund", {}, "c1"), done({"refunds": ["A1"]}))
    assert out.caused() == [("shape", "output_schema.schema", 2, None),
                            ("fw", "forbidden_when.forbidden", 1, "shape")]


# -- run_status -----------------------------------------------------------------------------------

def test_run_status_equals_passes_and_fails_with_status_and_expected(run):
    out = run([rs("ok", equals="completed"), rs("bad", equals="failed")],
              {"type": "agent.message"}, done({"total": 1}, status="completed"))
    passes(out, "ok")
    violation = out.single("run_status.mismatch", "bad")
    assert out.brief("bad") == [("run_status.mismatch", "fail", 2)]
    assert violation["evidence"] == {"status": "completed", "expected": "failed"}
    assert [r["checked"] for r in out.report["results"]] == [1, 1]
    assert out.exit == 1


def test_run_status_in_passes_and_fails_with_the_list_as_expected(run):
    out = run([rs("ok", **{"in": ["failed", "completed"]}), rs("bad", **{"in": ["failed", "cancelled"]})],
              done(status="completed"))
    passes(out, "ok")
    assert out.brief("bad") == [("run_status.mismatch", "fail", 1)]
    assert out.violations("bad")[0]["evidence"] == {"status": "completed", "expected": ["failed", "cancelled"]}


@pytest.mark.parametrize(("kind", "status", "other"), [("run.completed", "completed", "failed"),
                                                       ("run.failed", "failed", "completed")])
def test_an_absent_status_is_derived_from_the_terminals_type(run, kind, status, other):
    out = run([rs("same", equals=status), rs("other", equals=other)], done(kind=kind))
    passes(out, "same")
    assert out.brief("other") == [("run_status.mismatch", "fail", 1)]
    assert out.violations("other")[0]["evidence"] == {"status": status, "expected": other}


def test_awaiting_approval_is_a_status_of_its_own(run):
    out = run([rs("completed", equals="completed"), rs("either", **{"in": ["completed", "awaiting_approval"]}),
               rs("awaiting", equals="awaiting_approval")],
              done({"total": 1}, status="awaiting_approval"))
    passes(out, "either")
    passes(out, "awaiting")
    assert out.brief("completed") == [("run_status.mismatch", "fail", 1)]
    assert out.violations("completed")[0]["evidence"] == {"status": "awaiting_approval", "expected": "completed"}


def test_a_run_failed_status_wins_over_its_type(run):
    out = run(rs(equals="failed"), done(kind="run.failed", status="awaiting_approval"))
    assert out.violations()[0]["evidence"] == {"status": "awaiting_approval", "expected": "failed"}
    assert out.brief() == [("run_status.mismatch", "fail", 1)]


@pytest.mark.parametrize("trace", [[], [call("ledger", {}, "l1"), {"type": "agent.message"}]],
                         ids=["empty-trace", "no-terminal"])
def test_the_status_is_none_without_a_terminal(run, trace):
    out = run([rs("completed", equals="completed"), rs("none", equals="none")], *trace)
    passes(out, "none")
    assert out.brief("completed") == [("run_status.mismatch", "fail", None)]
    assert out.violations("completed")[0]["evidence"] == {"status": "none", "expected": "completed"}
    assert [(r["checked"], "vacuous" in r) for r in out.report["results"]] == [(1, False), (1, False)]


def test_the_last_terminal_gives_the_status(run):
    out = run(rs(equals="completed"), done(status="completed"), done(kind="run.failed"))
    assert out.brief() == [("run_status.mismatch", "fail", 2)]
    assert out.violations()[0]["evidence"] == {"status": "failed", "expected": "completed"}


# -- load errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize("reference", [{"$arg": "total"}, {"$from_output": "total"}], ids=["arg", "from_output"])
def test_arg_and_from_output_in_output_match_are_refused(refused, reference):
    (name,) = reference
    assert at(refused(om({"total": reference})), f"$.rules[0].match.total.{name}")


def test_arg_inside_a_from_result_where_in_output_match_is_refused(refused):
    ref = {"$from_result": {"tool": "ledger", "path": "total", "where": {"id": {"$arg": "id"}}}}
    assert at(refused(om({"total": ref})), "$.rules[0].match.total.$from_result.where.id.$arg")


def test_exists_at_the_root_of_an_output_match_is_refused(refused):
    assert at(refused(om({"$exists": True})), "$.rules[0].match.$exists")


def test_ignore_without_exact_mode_is_refused(refused):
    assert at(refused(om({"total": 1}, ignore=["meta"])), "$.rules[0].ignore")


def test_output_match_without_match_is_refused(refused):
    line = refused({"id": "m", "kind": "output_match"})
    assert under(line, "$.rules[0]") and names(line, "match")


def test_an_output_schema_that_is_not_json_schema_is_refused(refused):
    assert under(refused(osch({"type": "nope"})), "$.rules[0].schema")


def test_output_schema_without_schema_is_refused(refused):
    line = refused({"id": "s", "kind": "output_schema"})
    assert under(line, "$.rules[0]") and names(line, "schema")


def test_run_status_with_both_equals_and_in_is_refused(refused):
    line = refused(rs(equals="completed", **{"in": ["completed"]}))
    assert under(line, "$.rules[0]") and "equals" in line


def test_run_status_with_neither_equals_nor_in_is_refused(refused):
    line = refused(rs())
    assert under(line, "$.rules[0]") and "equals" in line


@pytest.mark.parametrize("count", [0, 21])
def test_run_status_in_needs_1_to_20_strings(refused, count):
    assert at(refused(rs(**{"in": [f"s{i}" for i in range(count)]})), "$.rules[0].in")


def test_run_status_equals_needs_a_string(refused):
    assert at(refused(rs(equals=5)), "$.rules[0].equals")


@pytest.mark.parametrize("rule", [om({"total": 1}), osch({"type": "object"}), rs(equals="completed")],
                         ids=["output_match", "output_schema", "run_status"])
def test_each_outcome_kind_in_a_version_1_contract_needs_version_2(refused, rule):
    assert 'needs "version": 2' in refused(rule, version=1)
