"""Outcome checks (spec v2 §3.7: output_match, output_schema, run_status) and conditional obligations
(§3.8: required_when, forbidden_when), read a second time from the spec's words alone.

Each case names the sentence or the §10 point it checks. §0 defines the *terminal* (the last
`run.completed` or `run.failed`), the *final output* (its `output`) and the *run status* (its
`status`, else `completed`/`failed` by type, `none` without a terminal). §10 points 1-7, 9, 13, 14, 16
and 24 settle codes, positions, `checked`, order, statuses, evidence, null, paths, conditions, event
typing and the iff code.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_invariants import check_trace, load_contract

from conftest import Cli
from support import refused_line, write_contract, write_trace

Event = dict[str, Any]
Rule = dict[str, Any]


# -- helpers -----------------------------------------------------------------------------------------


def check(cli: Cli, tmp_path: Path, rules: list[Rule], trace: list[Any], *options: str) -> tuple[int, Any]:
    """`check --format json` of a version-2 contract holding `rules` against `trace`."""
    write_contract(tmp_path, rules)
    write_trace(tmp_path, trace)
    done = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json", *options)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def result_of(report: Any, rule_id: str) -> Any:
    return next(result for result in report["results"] if result["rule_id"] == rule_id)


def located(report: Any) -> list[tuple[str, int | None]]:
    """(code, event_seq) of every violation of the report, in report order."""
    return [(v["code"], v.get("event_seq")) for v in report["violations"]]


def only_violation(report: Any) -> Any:
    assert len(report["violations"]) == 1, report["violations"]
    return report["violations"][0]


def call(tool: str, call_id: str, **fields: Any) -> Event:
    return {"type": "tool.call", "tool": tool, "call_id": call_id, **fields}


def result(call_id: str, value: Any = None, ok: bool = True) -> Event:
    event: Event = {"type": "tool.result", "call_id": call_id, "ok": ok}
    if value is not None:
        event["result"] = value
    return event


def completed(**fields: Any) -> Event:
    return {"type": "run.completed", **fields}


def failed(**fields: Any) -> Event:
    return {"type": "run.failed", **fields}


def outcome(outcome_id: str, verdict: str | None = None) -> Event:
    event: Event = {"type": "outcome.observed", "outcome_id": outcome_id, "evidence_class": "configured_verifier"}
    if verdict is not None:
        event["verdict"] = verdict
    return event


def refuses(cli: Cli, tmp_path: Path, rules: list[Rule], version: int = 2) -> str:
    """The contract is refused (exit 2, one line on stderr naming c.json)."""
    write_contract(tmp_path, rules, version=version)
    write_trace(tmp_path, [completed(output={})])
    return refused_line(cli)


LEDGER_RULES: list[Rule] = [
    {"id": "done", "kind": "run_status", "equals": "completed"},
    {"id": "shape", "kind": "output_schema", "schema": {"type": "object", "required": ["total"]}},
    {"id": "true-total", "kind": "output_match",
     "match": {"total": {"$from_result": {"tool": "ledger", "path": "total"}}}},
]


IFF_REPORTED: Rule = {"id": "refund-iff-reported", "kind": "required_when", "tool": "refund",
                      "when": {"path": "refunds", "non_empty": True}, "iff": True}
NO_MAIL: Rule = {"id": "no-mail-on-fraud", "kind": "forbidden_when", "tool": "email",
                 "when": {"outcome": {"outcome_id": "fraud", "verdict": "violated"}}}


def ledger_trace(total: Any) -> list[Any]:
    return [call("ledger", "l1", args={}), result("l1", {"total": 40}),
            completed(status="completed", output={"total": total})]


# -- §3.7 example ----------------------------------------------------------------------------------


def test_section_3_7_example_fails_only_true_total(cli: Cli, tmp_path: Path) -> None:
    """§3.7: FAIL → `true-total` at seq 3: `mismatch` at `/output/total` (expected any of [40], got 45)."""
    code, report = check(cli, tmp_path, LEDGER_RULES, ledger_trace(45))
    assert code == 1
    violation = only_violation(report)
    assert (violation["rule_id"], violation["code"], violation["status"]) == (
        "true-total", "output_match.mismatch", "fail")
    assert (violation["event_seq"], violation["event_index"]) == (3, 2)
    assert violation["evidence"]["mismatches"] == [
        {"pointer": "/output/total", "expected": {"any_of": [40]}, "actual": 45}]
    assert violation["pointer"] == "/output/total"


def test_section_3_7_example_passes_with_the_ledger_total(cli: Cli, tmp_path: Path) -> None:
    """§3.7: PASS: `"total":40`; point 4: each outcome rule has `checked` 1."""
    code, report = check(cli, tmp_path, LEDGER_RULES, ledger_trace(40))
    assert code == 0 and report["violations"] == []
    assert [r["checked"] for r in report["results"]] == [1, 1, 1]


# -- run_status ------------------------------------------------------------------------------------


def test_run_status_equals_mismatch_sits_at_the_terminal(cli: Cli, tmp_path: Path) -> None:
    """§3.7 run_status: evidence `{status, expected}`; point 1 code `run_status.mismatch`; point 2 at
    the terminal; point 6 status `fail`. §0: a `run.failed` without status has the status `failed`."""
    rules = [{"id": "done", "kind": "run_status", "equals": "completed"}]
    code, report = check(cli, tmp_path, rules, [call("refund", "c1"), failed(reason="down")])
    assert code == 1
    violation = only_violation(report)
    assert (violation["code"], violation["status"], violation["event_seq"]) == ("run_status.mismatch", "fail", 2)
    assert violation["evidence"] == {"status": "failed", "expected": "completed"}


def test_run_status_is_derived_completed_from_the_type(cli: Cli, tmp_path: Path) -> None:
    """§0: run status is the terminal's `status`; if absent, `completed` by type."""
    rules = [{"id": "done", "kind": "run_status", "equals": "completed"}]
    code, report = check(cli, tmp_path, rules, [completed()])
    assert code == 0 and result_of(report, "done")["checked"] == 1


def test_run_status_explicit_status_wins_over_the_type(cli: Cli, tmp_path: Path) -> None:
    """§0: run status is the terminal's `status` (a `run.completed` may end `awaiting_approval`)."""
    rules = [{"id": "done", "kind": "run_status", "equals": "completed"}]
    code, report = check(cli, tmp_path, rules, [completed(status="awaiting_approval")])
    assert code == 1
    assert only_violation(report)["evidence"] == {"status": "awaiting_approval", "expected": "completed"}


def test_run_status_in_accepts_awaiting_approval(cli: Cli, tmp_path: Path) -> None:
    """§3.7 `in` (1..20 strings); §1: `awaiting_approval` is not a failure."""
    rules = [{"id": "end", "kind": "run_status", "in": ["completed", "awaiting_approval"]}]
    code, report = check(cli, tmp_path, rules, [failed(status="awaiting_approval")])
    assert code == 0 and report["violations"] == []


def test_run_status_in_mismatch_evidence_lists_the_expected_set(cli: Cli, tmp_path: Path) -> None:
    """§3.7 run_status evidence `{status, expected}`; with `in`, expected is read as the list."""
    rules = [{"id": "end", "kind": "run_status", "in": ["completed", "awaiting_approval"]}]
    code, report = check(cli, tmp_path, rules, [failed()])
    assert code == 1
    violation = only_violation(report)
    assert violation["evidence"] == {"status": "failed", "expected": ["completed", "awaiting_approval"]}
    assert violation["event_seq"] == 1


def test_run_status_of_a_run_failed_is_its_own_status(cli: Cli, tmp_path: Path) -> None:
    """§0: the run status is the terminal's `status`; only when it is absent does the type decide."""
    rules = [{"id": "done", "kind": "run_status", "equals": "completed"}]
    code, report = check(cli, tmp_path, rules, [failed(status="completed")])
    assert code == 0 and report["violations"] == []


def test_run_status_equals_is_compared_exactly(cli: Cli, tmp_path: Path) -> None:
    """§3.7: `equals` is a string the status must equal (not a glob)."""
    rules = [{"id": "done", "kind": "run_status", "equals": "compl*"}]
    code, report = check(cli, tmp_path, rules, [completed()])
    assert located(report) == [("run_status.mismatch", 1)]


def test_run_status_evidence_keys_in_canonical_order(cli: Cli, tmp_path: Path) -> None:
    """Point 7: evidence is serialised with RFC 8785 key order (`expected` before `status`)."""
    write_contract(tmp_path, [{"id": "done", "kind": "run_status", "equals": "completed"}])
    write_trace(tmp_path, [failed()])
    text = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json").stdout
    evidence = text[text.index('"evidence"'):]
    assert evidence.index('"expected"') < evidence.index('"status"')


def test_run_status_none_without_terminal_has_no_seq(cli: Cli, tmp_path: Path) -> None:
    """§0: run status `none` when there is no terminal event; point 2: no seq without a terminal;
    point 4: `checked` 1 (trace-level kinds are never vacuous)."""
    rules = [{"id": "done", "kind": "run_status", "equals": "completed"}]
    code, report = check(cli, tmp_path, rules, [call("a", "c1"), result("c1")])
    assert code == 1
    violation = only_violation(report)
    assert "event_seq" not in violation and "event_index" not in violation
    assert violation["evidence"] == {"status": "none", "expected": "completed"}
    assert result_of(report, "done")["checked"] == 1


def test_run_status_equals_none_passes_without_terminal(cli: Cli, tmp_path: Path) -> None:
    """§0: the run status is `none` when there is no terminal event, so `equals: none` holds."""
    rules = [{"id": "open", "kind": "run_status", "equals": "none"}]
    code, report = check(cli, tmp_path, rules, [call("a", "c1")])
    assert code == 0 and report["violations"] == []


def test_run_status_reads_the_last_terminal(cli: Cli, tmp_path: Path) -> None:
    """§0: the terminal is the *last* `run.completed` or `run.failed`; other events may follow it."""
    rules = [{"id": "done", "kind": "run_status", "equals": "completed"}]
    trace = [completed(status="completed"), failed(), {"type": "telemetry.flush"}]
    code, report = check(cli, tmp_path, rules, trace)
    assert code == 1
    violation = only_violation(report)
    assert (violation["event_seq"], violation["evidence"]["status"]) == (2, "failed")


def test_run_status_ignores_status_of_other_events(cli: Cli, tmp_path: Path) -> None:
    """§0: the run status is the terminal's `status`; a status on another event is not the run's."""
    rules = [{"id": "done", "kind": "run_status", "equals": "completed"}]
    trace = [{"type": "agent.message", "status": "failed"}, completed()]
    code, report = check(cli, tmp_path, rules, trace)
    assert code == 0 and report["violations"] == []


def test_run_status_warning_severity_never_fails_the_check(cli: Cli, tmp_path: Path) -> None:
    """Point 6: every violation has its rule's severity and counts in `warning_count`."""
    rules = [{"id": "done", "kind": "run_status", "equals": "completed", "severity": "warning"}]
    code, report = check(cli, tmp_path, rules, [failed()])
    assert code == 0
    assert (report["error_count"], report["warning_count"], report["passed"]) == (0, 1, True)
    assert only_violation(report)["severity"] == "warning"


@pytest.mark.parametrize("rule", [
    pytest.param({}, id="neither-equals-nor-in"),
    pytest.param({"in": []}, id="in-empty"),
    pytest.param({"in": [f"s{i}" for i in range(21)]}, id="in-21"),
    pytest.param({"equals": 3}, id="equals-not-a-string"),
    pytest.param({"in": ["completed", 3]}, id="in-not-strings"),
    pytest.param({"equals": "completed", "bogus": 1}, id="unknown-field"),
    # Spec silent: "`equals` (a string) or `in`" is read as exactly one of them, and a status is
    # 1..100 characters (§1), so an empty `equals` could never match.
    pytest.param({"equals": "completed", "in": ["completed"]}, id="equals-and-in"),
    pytest.param({"equals": ""}, id="equals-empty"),
])
def test_run_status_bad_fields_are_refused(cli: Cli, tmp_path: Path, rule: Rule) -> None:
    """§3.7 run_status: `equals` (a string) or `in` (1..20 strings); a rule needs one of them."""
    refuses(cli, tmp_path, [{"id": "done", "kind": "run_status", **rule}])


def test_run_status_in_with_twenty_strings_is_accepted(cli: Cli, tmp_path: Path) -> None:
    """§3.7 run_status: `in` takes 1..20 strings (20 is the limit, inclusive)."""
    rules = [{"id": "end", "kind": "run_status", "in": [f"s{i}" for i in range(19)] + ["completed"]}]
    code, _ = check(cli, tmp_path, rules, [completed()])
    assert code == 0


# -- output_match ----------------------------------------------------------------------------------


def test_output_match_missing_output_is_unresolved_at_the_terminal(cli: Cli, tmp_path: Path) -> None:
    """§3.7 output_match code `output_missing`; point 6: status `unresolved`, which still fails."""
    rules = [{"id": "m", "kind": "output_match", "match": {"total": 1}}]
    code, report = check(cli, tmp_path, rules, [call("a", "c1"), completed()])
    assert code == 1
    violation = only_violation(report)
    assert (violation["code"], violation["status"], violation["event_seq"]) == (
        "output_match.output_missing", "unresolved", 2)
    assert report["error_count"] == 1


def test_output_match_without_terminal_is_output_missing_without_seq(cli: Cli, tmp_path: Path) -> None:
    """Point 2: an 'at the terminal' violation has no seq when the trace has no terminal."""
    rules = [{"id": "m", "kind": "output_match", "match": {"total": 1}}]
    code, report = check(cli, tmp_path, rules, [call("a", "c1")])
    assert code == 1
    violation = only_violation(report)
    assert violation["code"] == "output_match.output_missing"
    assert "event_seq" not in violation and "event_index" not in violation
    assert result_of(report, "m")["checked"] == 1


def test_output_match_reads_only_the_last_terminal_output(cli: Cli, tmp_path: Path) -> None:
    """§0: the final output is the output of the *last* terminal; an earlier one's does not count."""
    rules = [{"id": "m", "kind": "output_match", "match": {"total": 1}}]
    code, report = check(cli, tmp_path, rules, [completed(output={"total": 1}), failed()])
    assert code == 1
    assert located(report) == [("output_match.output_missing", 2)]


def test_output_match_reads_a_run_failed_output(cli: Cli, tmp_path: Path) -> None:
    """Point 16: `run.failed` may carry `output`, which is the final output when it is the terminal."""
    rules = [{"id": "m", "kind": "output_match", "match": {"total": 1}}]
    code, report = check(cli, tmp_path, rules, [failed(output={"total": 2})])
    assert code == 1
    assert located(report) == [("output_match.mismatch", 1)]


def test_output_match_violation_sits_at_terminal_not_last_event(cli: Cli, tmp_path: Path) -> None:
    """§3.7: violations sit at the terminal event, even when events follow it."""
    rules = [{"id": "m", "kind": "output_match", "match": {"total": 1}}]
    trace = [completed(output={"total": 2}), {"type": "telemetry.flush"}]
    code, report = check(cli, tmp_path, rules, trace)
    violation = only_violation(report)
    assert (violation["event_seq"], violation["event_index"]) == (1, 0)


def test_output_match_null_output_is_a_mismatch_not_missing(cli: Cli, tmp_path: Path) -> None:
    """Point 9: `output: null` is an output (a mismatch for an object pattern, not `output_missing`)."""
    rules = [{"id": "m", "kind": "output_match", "match": {"total": 1}}]
    code, report = check(cli, tmp_path, rules, [completed(output=None)])
    assert code == 1
    violation = only_violation(report)
    assert violation["code"] == "output_match.mismatch"
    assert violation["status"] == "fail"


def test_output_match_null_output_matches_a_null_literal(cli: Cli, tmp_path: Path) -> None:
    """Point 9: null is present wherever it appears; a scalar literal must be equal (§2)."""
    rules = [{"id": "m", "kind": "output_match", "match": None}]
    code, report = check(cli, tmp_path, rules, [completed(output=None)])
    assert code == 0 and report["violations"] == []


def test_output_match_absent_key_is_mismatch_without_actual(cli: Cli, tmp_path: Path) -> None:
    """Point 9: a node whose key is absent is a `mismatch`; point 7: `actual` omitted when absent."""
    rules = [{"id": "m", "kind": "output_match", "match": {"total": 1}}]
    code, report = check(cli, tmp_path, rules, [completed(output={"sum": 1})])
    violation = only_violation(report)
    assert violation["code"] == "output_match.mismatch"
    assert violation["evidence"]["mismatches"] == [{"pointer": "/output/total", "expected": 1}]


def test_output_match_exists_false_accepts_absence(cli: Cli, tmp_path: Path) -> None:
    """Point 9: only `$exists: false` accepts absence."""
    rules = [{"id": "m", "kind": "output_match", "match": {"error": {"$exists": False}}}]
    code, report = check(cli, tmp_path, rules, [completed(output={"total": 1})])
    assert code == 0 and report["violations"] == []


def test_output_match_exists_true_accepts_null(cli: Cli, tmp_path: Path) -> None:
    """Point 9: a null value satisfies `$exists: true`."""
    rules = [{"id": "m", "kind": "output_match", "match": {"error": {"$exists": True}}}]
    code, report = check(cli, tmp_path, rules, [completed(output={"error": None})])
    assert code == 0 and report["violations"] == []


def test_output_match_exists_false_rejects_null(cli: Cli, tmp_path: Path) -> None:
    """Point 9: null is present, so `$exists: false` fails on a null value."""
    rules = [{"id": "m", "kind": "output_match", "match": {"error": {"$exists": False}}}]
    code, report = check(cli, tmp_path, rules, [completed(output={"error": None})])
    assert located(report) == [("output_match.mismatch", 1)]


def test_output_match_position_with_comment_lines(cli: Cli, tmp_path: Path) -> None:
    """Point 2: `event_index` travels with `event_seq` as in v1 (position among events, comments
    not counted)."""
    rules = [{"id": "m", "kind": "output_match", "match": {"total": 1}}]
    code, report = check(cli, tmp_path, rules, ["# a comment", call("a", "c1", seq=5), completed(seq=9, output={})])
    violation = only_violation(report)
    assert (violation["event_seq"], violation["event_index"]) == (9, 1)


def test_output_match_subset_mode_allows_extra_keys(cli: Cli, tmp_path: Path) -> None:
    """§2: objects match as subsets (the default mode)."""
    rules = [{"id": "m", "kind": "output_match", "match": {"total": 1}}]
    code, _ = check(cli, tmp_path, rules, [completed(output={"total": 1.0, "note": "x"})])
    assert code == 0


def test_output_match_exact_mode_flags_an_extra_key(cli: Cli, tmp_path: Path) -> None:
    """§3.7 `mode`; §2: with `mode: exact`, key sets must be equal."""
    rules = [{"id": "m", "kind": "output_match", "mode": "exact", "match": {"total": 1}}]
    code, report = check(cli, tmp_path, rules, [completed(output={"total": 1, "note": "x"})])
    assert code == 1
    assert only_violation(report)["code"] == "output_match.mismatch"


def test_output_match_exact_mode_ignore_allows_top_level_key(cli: Cli, tmp_path: Path) -> None:
    """§3.7 `ignore`; §2: key sets equal at every level, except top-level `ignore`."""
    rules = [{"id": "m", "kind": "output_match", "mode": "exact", "ignore": ["note"], "match": {"total": 1}}]
    code, report = check(cli, tmp_path, rules, [completed(output={"total": 1, "note": "x"})])
    assert code == 0 and report["violations"] == []


def test_output_match_exact_ignore_does_not_excuse_a_named_key(cli: Cli, tmp_path: Path) -> None:
    """§2: `ignore` exempts keys from the key-set comparison; a key the tree names must still match."""
    rules = [{"id": "m", "kind": "output_match", "mode": "exact", "ignore": ["a"], "match": {"a": 1}}]
    code, report = check(cli, tmp_path, rules, [completed(output={"a": 2})])
    assert located(report) == [("output_match.mismatch", 1)]


def test_output_match_object_pattern_on_a_string_output(cli: Cli, tmp_path: Path) -> None:
    """§2: an object literal matches objects only; point 7: the pointer of the whole output is `/output`."""
    rules = [{"id": "m", "kind": "output_match", "match": {}}]
    code, report = check(cli, tmp_path, rules, [completed(output="done")])
    expected = [{"pointer": "/output", "expected": {}, "actual": "done"}]
    assert only_violation(report)["evidence"]["mismatches"] == expected


def test_output_match_exact_ignore_is_top_level_only(cli: Cli, tmp_path: Path) -> None:
    """§2: `ignore` exempts top-level keys only; a nested extra key still fails in exact mode."""
    rules = [{"id": "m", "kind": "output_match", "mode": "exact", "ignore": ["note"],
              "match": {"inner": {"a": 1}}}]
    code, report = check(cli, tmp_path, rules, [completed(output={"inner": {"a": 1, "note": 2}})])
    assert code == 1
    assert only_violation(report)["code"] == "output_match.mismatch"


def test_output_match_exact_mode_applies_inside_arrays(cli: Cli, tmp_path: Path) -> None:
    """§2: with `mode: exact`, key sets must be equal at every level (objects inside arrays too)."""
    rules = [{"id": "m", "kind": "output_match", "mode": "exact", "match": {"items": [{"a": 1}]}}]
    code, report = check(cli, tmp_path, rules, [completed(output={"items": [{"a": 1, "b": 2}]})])
    assert located(report) == [("output_match.mismatch", 1)]


def test_output_match_pointer_escapes_keys(cli: Cli, tmp_path: Path) -> None:
    """§0/point 7: pointers are RFC 6901 (`/` as `~1`, `~` as `~0`), into the event."""
    rules = [{"id": "m", "kind": "output_match", "match": {"a/b": 1, "c~d": 1}}]
    code, report = check(cli, tmp_path, rules, [completed(output={"a/b": 2, "c~d": 2})])
    pointers = [m["pointer"] for m in only_violation(report)["evidence"]["mismatches"]]
    assert sorted(pointers) == ["/output/a~1b", "/output/c~0d"]


def test_output_match_reference_is_structural_equality(cli: Cli, tmp_path: Path) -> None:
    """Point 10 (as used by §3.7): equality with a reference candidate has equal key sets, even in
    subset mode."""
    rules = [{"id": "m", "kind": "output_match", "match": {"o": {"$from_result": {"tool": "l", "path": "o"}}}}]
    trace = [call("l", "a"), result("a", {"o": {"a": 1}}), completed(output={"o": {"a": 1, "b": 2}})]
    code, report = check(cli, tmp_path, rules, trace)
    assert located(report) == [("output_match.mismatch", 3)]


def test_output_match_reference_call_index_counts_calls(cli: Cli, tmp_path: Path) -> None:
    """§2 step 2: `call_index` keeps the k-th call's result (0-based, §0)."""
    rules = [{"id": "m", "kind": "output_match",
              "match": {"t": {"$from_result": {"tool": "l", "path": "t", "call_index": 1}}}}]
    trace = [call("l", "a"), result("a", {"t": 1}), call("l", "b"), result("b", {"t": 2}), completed(output={"t": 1})]
    code, report = check(cli, tmp_path, rules, trace)
    [mismatch] = only_violation(report)["evidence"]["mismatches"]
    assert mismatch["expected"] == {"any_of": [2]}


def test_output_match_reference_where_filters_by_call_args(cli: Cli, tmp_path: Path) -> None:
    """§2 step 3: `where` matches the producing call's args."""
    rules = [{"id": "m", "kind": "output_match",
              "match": {"t": {"$from_result": {"tool": "l", "path": "t", "where": {"id": "B"}}}}}]
    trace = [call("l", "a", args={"id": "A"}), result("a", {"t": 1}),
             call("l", "b", args={"id": "B"}), result("b", {"t": 2}), completed(output={"t": 2})]
    code, report = check(cli, tmp_path, rules, trace)
    assert code == 0 and report["violations"] == []


def test_output_match_reference_length(cli: Cli, tmp_path: Path) -> None:
    """§2 step 4: `length: true` yields the array's length."""
    rules = [{"id": "m", "kind": "output_match",
              "match": {"n": {"$from_result": {"tool": "l", "path": "items", "length": True}}}}]
    trace = [call("l", "a"), result("a", {"items": [1, 2, 3]}), completed(output={"n": 3})]
    code, report = check(cli, tmp_path, rules, trace)
    assert code == 0 and report["violations"] == []


def test_output_match_pointer_reaches_into_arrays(cli: Cli, tmp_path: Path) -> None:
    """Point 7: pointers are into the event (`/output/…`), RFC 6901 (array index as a segment)."""
    rules = [{"id": "m", "kind": "output_match", "match": {"items": [{"sku": "a"}, {"sku": "b"}]}}]
    code, report = check(cli, tmp_path, rules, [completed(output={"items": [{"sku": "a"}, {"sku": "c"}]})])
    assert only_violation(report)["evidence"]["mismatches"] == [
        {"pointer": "/output/items/1/sku", "expected": "b", "actual": "c"}]


def test_output_match_lists_at_most_20_mismatches(cli: Cli, tmp_path: Path) -> None:
    """§3.7: the mismatch code of tool_args (§3.1: up to 20 `{pointer, expected, actual}`), one
    violation per code."""
    rules = [{"id": "m", "kind": "output_match", "match": {f"k{i:02}": 0 for i in range(25)}}]
    code, report = check(cli, tmp_path, rules, [completed(output={f"k{i:02}": 1 for i in range(25)})])
    violation = only_violation(report)
    assert violation["code"] == "output_match.mismatch"
    assert len(violation["evidence"]["mismatches"]) == 20


def test_output_match_reference_no_candidates_is_unresolved(cli: Cli, tmp_path: Path) -> None:
    """§3.7: the reference code of tool_args; §2: an empty set is `no_candidates`, giving
    `reference_unresolved`, never an extra mismatch; point 7: `unresolved: [{pointer, reference,
    reason}]`."""
    rules = [{"id": "m", "kind": "output_match",
              "match": {"total": {"$from_result": {"tool": "ledger", "path": "total"}}}}]
    code, report = check(cli, tmp_path, rules, [completed(output={"total": 45})])
    assert code == 1
    violation = only_violation(report)
    assert (violation["code"], violation["status"], violation["event_seq"]) == (
        "output_match.reference_unresolved", "unresolved", 1)
    [entry] = violation["evidence"]["unresolved"]
    assert (entry["pointer"], entry["reason"]) == ("/output/total", "no_candidates")
    assert entry["reference"] == {"$from_result": {"tool": "ledger", "path": "total"}}


def test_output_match_reference_ambiguous_for_a_comparison(cli: Cli, tmp_path: Path) -> None:
    """§2: comparisons need exactly one distinct candidate; otherwise `ambiguous`."""
    rules = [{"id": "m", "kind": "output_match",
              "match": {"total": {"$lte": {"$from_result": {"tool": "ledger", "path": "total"}}}}}]
    trace = [call("ledger", "l1"), result("l1", {"total": 40}), call("ledger", "l2"), result("l2", {"total": 50}),
             completed(output={"total": 45})]
    code, report = check(cli, tmp_path, rules, trace)
    violation = only_violation(report)
    assert violation["code"] == "output_match.reference_unresolved"
    assert violation["evidence"]["unresolved"][0]["reason"] == "ambiguous"


def test_output_match_reference_any_candidate_matches(cli: Cli, tmp_path: Path) -> None:
    """§2: equality passes if any candidate matches."""
    rules = [{"id": "m", "kind": "output_match",
              "match": {"total": {"$from_result": {"tool": "ledger", "path": "total"}}}}]
    trace = [call("ledger", "l1"), result("l1", {"total": 40}), call("ledger", "l2"), result("l2", {"total": 45}),
             completed(output={"total": 45})]
    code, report = check(cli, tmp_path, rules, trace)
    assert code == 0 and report["violations"] == []


def test_output_match_reference_reads_only_results_before_terminal(cli: Cli, tmp_path: Path) -> None:
    """§2 step 1: results strictly before the subject, which is the terminal event in output rules."""
    rules = [{"id": "m", "kind": "output_match",
              "match": {"total": {"$from_result": {"tool": "ledger", "path": "total"}}}}]
    trace = [call("ledger", "l1"), completed(output={"total": 40}), result("l1", {"total": 40})]
    code, report = check(cli, tmp_path, rules, trace)
    violation = only_violation(report)
    assert (violation["code"], violation["event_seq"]) == ("output_match.reference_unresolved", 2)


def test_output_match_reference_drops_failed_results_by_default(cli: Cli, tmp_path: Path) -> None:
    """§2 step 1: `ok_only` (default true) drops `ok:false` results."""
    rules = [{"id": "m", "kind": "output_match",
              "match": {"total": {"$from_result": {"tool": "ledger", "path": "total"}}}}]
    trace = [call("ledger", "l1"), result("l1", {"total": 40}, ok=False), completed(output={"total": 40})]
    code, report = check(cli, tmp_path, rules, trace)
    assert located(report) == [("output_match.reference_unresolved", 3)]


def test_output_match_reference_ok_only_false_keeps_failed_results(cli: Cli, tmp_path: Path) -> None:
    """§2 step 1: with `ok_only: false`, `ok:false` results are candidates."""
    rules = [{"id": "m", "kind": "output_match",
              "match": {"total": {"$from_result": {"tool": "ledger", "path": "total", "ok_only": False}}}}]
    trace = [call("ledger", "l1"), result("l1", {"total": 40}, ok=False), completed(output={"total": 40})]
    code, report = check(cli, tmp_path, rules, trace)
    assert code == 0 and report["violations"] == []


def test_output_match_mismatch_comes_before_reference_unresolved(cli: Cli, tmp_path: Path) -> None:
    """Point 5: ties at one event follow the listed code order (mismatch, reference_unresolved)."""
    rules = [{"id": "m", "kind": "output_match",
              "match": {"a": {"$from_result": {"tool": "nothing", "path": "x"}}, "b": 1}}]
    code, report = check(cli, tmp_path, rules, [completed(output={"a": 1, "b": 2})])
    assert located(report) == [("output_match.mismatch", 1), ("output_match.reference_unresolved", 1)]


def test_output_match_expected_candidates_are_capped_at_20(cli: Cli, tmp_path: Path) -> None:
    """Point 7: `expected` is `{"any_of": [candidates ≤ 20]}` for a reference."""
    rules = [{"id": "m", "kind": "output_match",
              "match": {"total": {"$from_result": {"tool": "ledger", "path": "total"}}}}]
    trace: list[Any] = []
    for i in range(25):
        trace += [call("ledger", f"l{i}"), result(f"l{i}", {"total": i})]
    code, report = check(cli, tmp_path, rules, [*trace, completed(output={"total": 100})])
    [mismatch] = only_violation(report)["evidence"]["mismatches"]
    assert len(mismatch["expected"]["any_of"]) == 20
    assert mismatch["actual"] == 100


def test_output_match_long_strings_are_cut_to_200_code_points(cli: Cli, tmp_path: Path) -> None:
    """Point 7: strings are cut to 200 Unicode code points plus `…`."""
    rules = [{"id": "m", "kind": "output_match", "match": {"s": "short"}}]
    code, report = check(cli, tmp_path, rules, [completed(output={"s": "é" * 300})])
    [mismatch] = only_violation(report)["evidence"]["mismatches"]
    assert mismatch["actual"] == "é" * 200 + "…"


def test_output_match_strings_of_200_code_points_are_kept_whole(cli: Cli, tmp_path: Path) -> None:
    """Point 7: only strings longer than 200 code points are cut (200 is kept, 201 is cut)."""
    rules = [{"id": "m", "kind": "output_match", "match": {"a": "q", "b": "q"}}]
    code, report = check(cli, tmp_path, rules, [completed(output={"a": "x" * 200, "b": "y" * 201})])
    actual = {m["pointer"]: m["actual"] for m in only_violation(report)["evidence"]["mismatches"]}
    assert actual == {"/output/a": "x" * 200, "/output/b": "y" * 200 + "…"}


def test_output_match_strings_are_cut_by_code_points_not_units(cli: Cli, tmp_path: Path) -> None:
    """Point 7: the cut counts Unicode code points (an emoji is one, not two UTF-16 units)."""
    rules = [{"id": "m", "kind": "output_match", "match": {"s": "short"}}]
    code, report = check(cli, tmp_path, rules, [completed(output={"s": "\U0001F600" * 250})])
    [mismatch] = only_violation(report)["evidence"]["mismatches"]
    assert mismatch["actual"] == "\U0001F600" * 200 + "…"


def test_output_match_evidence_uses_canonical_key_order_and_numbers(cli: Cli, tmp_path: Path) -> None:
    """Point 7: evidence is serialised with RFC 8785 key order and number form (`40.0` → `40`)."""
    write_contract(tmp_path, [{"id": "m", "kind": "output_match", "match": {"total": 40.0}}])
    write_trace(tmp_path, [completed(output={"total": 41})])
    done = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    text = done.stdout
    start = text.index('"mismatches"')
    entry = text[start:text.index("]", start)]
    assert entry.index('"actual"') < entry.index('"expected"') < entry.index('"pointer"')
    assert '"expected": 40,' in entry


def test_output_match_evidence_numbers_in_javascript_form(cli: Cli, tmp_path: Path) -> None:
    """Point 7: evidence numbers use the RFC 8785 (JavaScript) number form."""
    write_contract(tmp_path, [{"id": "m", "kind": "output_match", "match": {"a": 0, "b": 0}}])
    write_trace(tmp_path, [completed(output={"a": 1e21, "b": 1.5e-7})])
    text = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json").stdout
    assert '"actual": 1e+21,' in text and '"actual": 1.5e-7,' in text


def test_output_match_expected_lists_distinct_candidates(cli: Cli, tmp_path: Path) -> None:
    """Point 7 with §2 ("references yield candidate *sets*"; `1=1.0`): two equal results give one
    candidate. Spec reading: a set holds each value once."""
    rules = [{"id": "m", "kind": "output_match",
              "match": {"t": {"$from_result": {"tool": "l", "path": "t"}}}}]
    trace = [call("l", "a"), result("a", {"t": 40}), call("l", "b"), result("b", {"t": 40.0}),
             completed(output={"t": 1})]
    code, report = check(cli, tmp_path, rules, trace)
    [mismatch] = only_violation(report)["evidence"]["mismatches"]
    assert mismatch["expected"] == {"any_of": [40]}


@pytest.mark.parametrize("match", [
    pytest.param({"total": {"$arg": "x"}}, id="arg"),
    pytest.param({"total": {"$from_output": "total"}}, id="from_output"),
    pytest.param({"total": {"$from_result": {"tool": "t", "where": {"x": {"$arg": "x"}}}}}, id="arg-in-where"),
])
def test_output_match_refuses_arg_and_from_output(cli: Cli, tmp_path: Path, match: Any) -> None:
    """§3.7: `$arg` and `$from_output` are load errors in output_match; §2: `$from_output` in output
    rules is a load error (it would compare the output with itself)."""
    refuses(cli, tmp_path, [{"id": "m", "kind": "output_match", "match": match}])


@pytest.mark.parametrize("rule", [
    pytest.param({}, id="no-match"),
    pytest.param({"match": {"a": 1}, "ignore": ["a"]}, id="ignore-without-exact"),
    pytest.param({"match": {"a": 1}, "mode": "strict"}, id="bad-mode"),
    pytest.param({"match": {"a": {"$regexp": "x"}}}, id="unknown-operator"),
    pytest.param({"match": {"a": 1}, "extra": True}, id="unknown-field"),
])
def test_output_match_bad_fields_are_refused(cli: Cli, tmp_path: Path, rule: Rule) -> None:
    """§3.7 output_match fields `match`, `mode`, `ignore`, `when`; §3.1: `ignore` is for exact mode
    only; §2: unknown `$` keys are load errors."""
    refuses(cli, tmp_path, [{"id": "m", "kind": "output_match", **rule}])


def test_outcome_kinds_need_version_2(cli: Cli, tmp_path: Path) -> None:
    """§0: any new kind requires `"version": 2`; a version-1 contract that uses one exits 2."""
    refuses(cli, tmp_path, [{"id": "m", "kind": "output_match", "match": {"a": 1}}], version=1)


# -- output_match `when` -----------------------------------------------------------------------------


def test_output_match_false_when_passes_with_checked_0(cli: Cli, tmp_path: Path) -> None:
    """§3.7: a false `when` is a pass with checked 0 (point 4), even with no output to read."""
    rules = [{"id": "m", "kind": "output_match", "match": {"total": 1},
              "when": {"outcome": {"outcome_id": "audit", "verdict": "violated"}}}]
    code, report = check(cli, tmp_path, rules, [outcome("audit", "satisfied"), completed()])
    assert code == 0
    rule = result_of(report, "m")
    assert (rule["passed"], rule["checked"], rule["violations"]) == (True, 0, [])


def test_output_match_false_when_is_not_vacuous(cli: Cli, tmp_path: Path) -> None:
    """Point 4: output_match is a trace-level kind, never vacuous, even with checked 0."""
    rules = [{"id": "m", "kind": "output_match", "match": {"total": 1}, "when": {"path": "k", "equals": 1}}]
    code, report = check(cli, tmp_path, rules, [completed(output={"k": 2})])
    rule = result_of(report, "m")
    assert rule["checked"] == 0 and rule.get("vacuous") is not True


def test_output_match_true_when_without_terminal_is_output_missing(cli: Cli, tmp_path: Path) -> None:
    """§3.7 `output_missing`; point 2: no seq without a terminal (the `when` holds on an outcome)."""
    rules = [{"id": "m", "kind": "output_match", "match": {"total": 1},
              "when": {"outcome": {"outcome_id": "audit", "verdict": "violated"}}}]
    code, report = check(cli, tmp_path, rules, [outcome("audit", "violated")])
    assert located(report) == [("output_match.output_missing", None)]


def test_output_match_true_when_checks_the_output(cli: Cli, tmp_path: Path) -> None:
    """§3.7: with a true `when`, the match is checked as usual."""
    rules = [{"id": "m", "kind": "output_match", "match": {"total": 1},
              "when": {"path": "kind", "equals": "refund"}}]
    code, report = check(cli, tmp_path, rules, [completed(output={"kind": "refund", "total": 2})])
    assert located(report) == [("output_match.mismatch", 1)]
    assert result_of(report, "m")["checked"] == 1


def test_output_match_unresolved_when_reports_only_that(cli: Cli, tmp_path: Path) -> None:
    """§3.7: an unresolved `when` gives `condition_unresolved`; point 14: exactly one, at the
    terminal, and nothing else (neither output_missing nor a mismatch)."""
    rules = [{"id": "m", "kind": "output_match", "match": {"total": 1},
              "when": {"outcome": {"outcome_id": "audit", "verdict": "violated"}}}]
    code, report = check(cli, tmp_path, rules, [call("a", "c1"), completed()])
    assert code == 1
    violation = only_violation(report)
    assert (violation["code"], violation["status"], violation["event_seq"]) == (
        "output_match.condition_unresolved", "unresolved", 2)


def test_output_match_unresolved_when_hides_a_mismatch(cli: Cli, tmp_path: Path) -> None:
    """Point 14: with an unresolved `when`, output_match reports no mismatch."""
    rules = [{"id": "m", "kind": "output_match", "match": {"total": 1},
              "when": {"path": "kind", "equals": "refund"}}]
    code, report = check(cli, tmp_path, rules, [completed(output={"total": 2})])
    assert located(report) == [("output_match.condition_unresolved", 1)]


def test_output_match_unresolved_when_without_terminal_has_no_seq(cli: Cli, tmp_path: Path) -> None:
    """Point 14: one `condition_unresolved` at the terminal, no seq without one."""
    rules = [{"id": "m", "kind": "output_match", "match": {"total": 1},
              "when": {"path": "kind", "equals": "refund"}}]
    code, report = check(cli, tmp_path, rules, [call("a", "c1")])
    assert located(report) == [("output_match.condition_unresolved", None)]


# -- output_schema ---------------------------------------------------------------------------------


def test_output_schema_missing_required_property(cli: Cli, tmp_path: Path) -> None:
    """§3.7 output_schema code `schema` (up to 20 errors), point 7 `errors: [{pointer, message}]`,
    point 2 at the terminal, point 6 status `fail`."""
    rules = [{"id": "shape", "kind": "output_schema", "schema": {"type": "object", "required": ["total"]}}]
    code, report = check(cli, tmp_path, rules, [completed(output={"sum": 45})])
    assert code == 1
    violation = only_violation(report)
    assert (violation["code"], violation["status"], violation["event_seq"]) == ("output_schema.schema", "fail", 1)
    [error] = violation["evidence"]["errors"]
    assert set(error) == {"pointer", "message"} and "total" in error["message"]


def test_output_schema_error_pointer_is_into_the_event(cli: Cli, tmp_path: Path) -> None:
    """Point 7: pointers are into the event (`/output/…`)."""
    schema = {"type": "object", "properties": {"total": {"type": "number"}}}
    rules = [{"id": "shape", "kind": "output_schema", "schema": schema}]
    code, report = check(cli, tmp_path, rules, [completed(output={"total": "45"})])
    assert [e["pointer"] for e in only_violation(report)["evidence"]["errors"]] == ["/output/total"]


def test_output_schema_lists_at_most_20_errors(cli: Cli, tmp_path: Path) -> None:
    """§3.7 output_schema: `schema` (up to 20 errors), in one violation."""
    schema = {"type": "object", "properties": {f"k{i:02}": {"type": "string"} for i in range(25)}}
    rules = [{"id": "shape", "kind": "output_schema", "schema": schema}]
    code, report = check(cli, tmp_path, rules, [completed(output={f"k{i:02}": i for i in range(25)})])
    violation = only_violation(report)
    assert violation["code"] == "output_schema.schema"
    assert len(violation["evidence"]["errors"]) == 20


def test_output_schema_missing_output_is_unresolved(cli: Cli, tmp_path: Path) -> None:
    """§3.7 output_schema code `output_missing`; point 6: status `unresolved`."""
    rules = [{"id": "shape", "kind": "output_schema", "schema": {"type": "object"}}]
    code, report = check(cli, tmp_path, rules, [completed(status="completed")])
    assert code == 1
    violation = only_violation(report)
    assert (violation["code"], violation["status"], violation["event_seq"]) == (
        "output_schema.output_missing", "unresolved", 1)


def test_output_schema_without_terminal_has_no_seq(cli: Cli, tmp_path: Path) -> None:
    """Point 2: no seq when the trace has no terminal; point 4: checked 1."""
    rules = [{"id": "shape", "kind": "output_schema", "schema": {"type": "object"}}]
    code, report = check(cli, tmp_path, rules, [call("a", "c1")])
    assert located(report) == [("output_schema.output_missing", None)]
    assert result_of(report, "shape")["checked"] == 1


def test_output_schema_judges_a_null_output(cli: Cli, tmp_path: Path) -> None:
    """Point 9: `output: null` is an output: the schema judges it (not `output_missing`)."""
    rules = [{"id": "shape", "kind": "output_schema", "schema": {"type": "object"}}]
    code, report = check(cli, tmp_path, rules, [completed(output=None)])
    assert located(report) == [("output_schema.schema", 1)]


def test_output_schema_null_output_can_pass(cli: Cli, tmp_path: Path) -> None:
    """Point 9: a null output is an output, which `{"type": "null"}` accepts."""
    rules = [{"id": "shape", "kind": "output_schema", "schema": {"type": "null"}}]
    code, report = check(cli, tmp_path, rules, [completed(output=None)])
    assert code == 0 and report["violations"] == []


def test_output_schema_is_draft_2020_12(cli: Cli, tmp_path: Path) -> None:
    """§3.1/§3.7: JSON Schema 2020-12 (`prefixItems` is a 2020-12 keyword)."""
    schema = {"type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}]}
    rules = [{"id": "shape", "kind": "output_schema", "schema": schema}]
    code, report = check(cli, tmp_path, rules, [completed(output=["a", "b"])])
    assert only_violation(report)["evidence"]["errors"][0]["pointer"] == "/output/1"


def test_output_schema_follows_local_refs(cli: Cli, tmp_path: Path) -> None:
    """§3.1: only local `$ref` (which works)."""
    schema = {"$defs": {"money": {"type": "number", "minimum": 0}},
              "type": "object", "properties": {"total": {"$ref": "#/$defs/money"}}}
    rules = [{"id": "shape", "kind": "output_schema", "schema": schema}]
    code, report = check(cli, tmp_path, rules, [completed(output={"total": -1})])
    assert located(report) == [("output_schema.schema", 1)]


@pytest.mark.parametrize(("schema", "codes"), [
    pytest.param(True, [], id="true"),
    pytest.param(False, [("output_schema.schema", 1)], id="false"),
])
def test_output_schema_boolean_schemas(cli: Cli, tmp_path: Path, schema: bool, codes: list[Any]) -> None:
    """§3.7: `schema` is a JSON Schema 2020-12, in which `true` and `false` are schemas."""
    rules = [{"id": "shape", "kind": "output_schema", "schema": schema}]
    code, report = check(cli, tmp_path, rules, [completed(output={})])
    assert located(report) == codes


@pytest.mark.parametrize("rule", [
    pytest.param({}, id="no-schema"),
    # Spec silent: a schema that is not valid 2020-12, or a local `$ref` that points nowhere, cannot
    # be evaluated, and refusing it at load is the reasonable reading.
    pytest.param({"schema": {"type": "objekt"}}, id="invalid-schema"),
    pytest.param({"schema": {"$ref": "#/$defs/nope"}}, id="dangling-local-ref"),
    pytest.param({"schema": 5}, id="not-a-schema"),
    pytest.param({"schema": {"$ref": "https://example.com/s.json"}}, id="remote-ref"),
    pytest.param({"schema": {"type": "object"}, "match": {}}, id="unknown-field"),
])
def test_output_schema_bad_fields_are_refused(cli: Cli, tmp_path: Path, rule: Rule) -> None:
    """§3.7 output_schema: field `schema`; §3.1: only local `$ref`."""
    refuses(cli, tmp_path, [{"id": "shape", "kind": "output_schema", **rule}])


# -- caused_by ---------------------------------------------------------------------------------------

SHAPE: Rule = {"id": "shape", "kind": "output_schema", "schema": {"type": "object", "required": ["total"]}}


def test_caused_by_names_the_failing_output_schema(cli: Cli, tmp_path: Path) -> None:
    """§3.7: when output_schema fails, every other violation that reads the output gets
    `caused_by: <id>`; nothing is suppressed."""
    rules = [SHAPE, {"id": "m", "kind": "output_match", "match": {"total": 40}}]
    code, report = check(cli, tmp_path, rules, [completed(output={"sum": 40})])
    assert located(report) == [("output_schema.schema", 1), ("output_match.mismatch", 1)]
    schema_violation, match_violation = report["violations"]
    assert match_violation["caused_by"] == "shape"
    assert "caused_by" not in schema_violation


def test_caused_by_does_not_depend_on_contract_order(cli: Cli, tmp_path: Path) -> None:
    """§3.7: *every* other violation that reads the output, also of rules listed before the schema."""
    rules = [{"id": "m", "kind": "output_match", "match": {"total": 40}}, SHAPE]
    code, report = check(cli, tmp_path, rules, [completed(output={"sum": 40})])
    assert located(report) == [("output_match.mismatch", 1), ("output_schema.schema", 1)]
    assert report["violations"][0]["caused_by"] == "shape"


def test_caused_by_on_tool_args_reading_the_output(cli: Cli, tmp_path: Path) -> None:
    """§3.7: a tool_args violation whose `$from_output` reads the output gets `caused_by`."""
    rules = [SHAPE, {"id": "ta", "kind": "tool_args", "tool": "x", "match": {"a": {"$from_output": "a"}}}]
    code, report = check(cli, tmp_path, rules, [call("x", "c1", args={"a": 2}), completed(output={"a": 1})])
    assert located(report) == [("output_schema.schema", 2), ("tool_args.mismatch", 1)]
    assert report["violations"][1]["caused_by"] == "shape"


def test_caused_by_on_an_unresolved_output_condition(cli: Cli, tmp_path: Path) -> None:
    """§3.7: a condition path reads the output, so its `condition_unresolved` gets `caused_by`."""
    rules = [SHAPE, {"id": "fw", "kind": "forbidden_when", "tool": "x", "when": {"path": "total", "equals": 1}}]
    code, report = check(cli, tmp_path, rules, [call("x", "c1"), completed(output={})])
    assert located(report) == [("output_schema.schema", 2), ("forbidden_when.condition_unresolved", 2)]
    assert report["violations"][1]["caused_by"] == "shape"


def test_caused_by_when_both_miss_the_output(cli: Cli, tmp_path: Path) -> None:
    """§3.7 with point 6 (an unresolved violation fails its rule): output_schema fails with
    `output_missing`, and the output_match violation names it. Spec reading: `output_missing` is a
    failure of the schema rule, and output_match read (the absence of) the output."""
    rules = [SHAPE, {"id": "m", "kind": "output_match", "match": {"total": 40}}]
    code, report = check(cli, tmp_path, rules, [completed()])
    assert located(report) == [("output_schema.output_missing", 1), ("output_match.output_missing", 1)]
    assert report["violations"][1]["caused_by"] == "shape"


def test_caused_by_absent_when_output_schema_passes(cli: Cli, tmp_path: Path) -> None:
    """§3.7: `caused_by` is given only when output_schema fails."""
    rules = [SHAPE, {"id": "m", "kind": "output_match", "match": {"total": 40}}]
    code, report = check(cli, tmp_path, rules, [completed(output={"total": 41})])
    assert "caused_by" not in only_violation(report)


def test_caused_by_not_on_violations_that_do_not_read_the_output(cli: Cli, tmp_path: Path) -> None:
    """§3.7: only violations that read the output get `caused_by` (run_status reads the status)."""
    rules = [SHAPE, {"id": "done", "kind": "run_status", "equals": "completed"}]
    code, report = check(cli, tmp_path, rules, [failed(output={"sum": 1})])
    assert located(report) == [("output_schema.schema", 1), ("run_status.mismatch", 1)]
    assert "caused_by" not in report["violations"][1]


def test_caused_by_on_output_length_violation(cli: Cli, tmp_path: Path) -> None:
    """§3.7: every other violation that reads the output (here tool_calls' output length, §3.4)."""
    rules = [SHAPE, {"id": "n", "kind": "tool_calls", "tool": "refund", "matches_output_length": "refunds"}]
    trace = [call("refund", "r1"), completed(output={"refunds": ["a", "b"]})]
    code, report = check(cli, tmp_path, rules, trace)
    assert located(report) == [("output_schema.schema", 2), ("tool_calls.output_mismatch", 2)]
    assert report["violations"][1]["caused_by"] == "shape"


def test_caused_by_on_output_length_unresolved(cli: Cli, tmp_path: Path) -> None:
    """§3.7: `tool_calls.output_unresolved` read the output too, so it names the schema."""
    rules = [SHAPE, {"id": "n", "kind": "tool_calls", "tool": "refund", "matches_output_length": "refunds"}]
    code, report = check(cli, tmp_path, rules, [call("refund", "r1"), completed(output={})])
    assert located(report) == [("output_schema.schema", 2), ("tool_calls.output_unresolved", 2)]
    assert report["violations"][1]["caused_by"] == "shape"


def test_caused_by_on_required_when_iff_violation(cli: Cli, tmp_path: Path) -> None:
    """§3.7: the iff violations (point 24) follow from an output condition, so they name the schema."""
    rules = [SHAPE, IFF_REPORTED]
    code, report = check(cli, tmp_path, rules, [call("refund", "r1"), completed(output={"refunds": []})])
    assert located(report) == [("output_schema.schema", 2), ("required_when.forbidden", 1)]
    assert report["violations"][1]["caused_by"] == "shape"


def test_caused_by_on_required_when_with_an_output_condition(cli: Cli, tmp_path: Path) -> None:
    """§3.7: a condition path reads the final output (§2), so its violation gets `caused_by`."""
    rules = [SHAPE, {"id": "rw", "kind": "required_when", "tool": "refund",
                     "when": {"path": "refunds", "non_empty": True}}]
    code, report = check(cli, tmp_path, rules, [completed(output={"refunds": ["a"]})])
    assert located(report) == [("output_schema.schema", 1), ("required_when.min", 1)]
    assert report["violations"][1]["caused_by"] == "shape"


def test_caused_by_on_forbidden_when_with_an_output_condition(cli: Cli, tmp_path: Path) -> None:
    """§3.7: a forbidden_when whose condition reads the output gets `caused_by` too."""
    rules = [SHAPE, {"id": "fw", "kind": "forbidden_when", "tool": "email",
                     "when": {"path": "fraud", "equals": True}}]
    trace = [call("email", "m1"), completed(output={"fraud": True})]
    code, report = check(cli, tmp_path, rules, trace)
    assert located(report) == [("output_schema.schema", 2), ("forbidden_when.forbidden", 1)]
    assert report["violations"][1]["caused_by"] == "shape"


def test_caused_by_not_on_an_outcome_condition(cli: Cli, tmp_path: Path) -> None:
    """§3.7: an `outcome` condition reads `outcome.observed`, not the output: no `caused_by`."""
    rules = [SHAPE, {"id": "fw", "kind": "forbidden_when", "tool": "email",
                     "when": {"outcome": {"outcome_id": "fraud", "verdict": "violated"}}}]
    trace = [outcome("fraud", "violated"), call("email", "m1"), completed(output={})]
    code, report = check(cli, tmp_path, rules, trace)
    assert located(report) == [("output_schema.schema", 3), ("forbidden_when.forbidden", 2)]
    assert "caused_by" not in report["violations"][1]


# -- required_when -----------------------------------------------------------------------------------

def test_section_3_8_example_fails(cli: Cli, tmp_path: Path) -> None:
    """§3.8: FAIL → `refund-iff-reported` at seq 3 (count 0 < 1); `no-mail-on-fraud` at seq 2."""
    trace = [outcome("fraud", "violated"), call("email", "m1", args={"to": "x@y"}),
             completed(output={"refunds": ["A1"]})]
    code, report = check(cli, tmp_path, [IFF_REPORTED, NO_MAIL], trace)
    assert code == 1
    assert located(report) == [("required_when.min", 3), ("forbidden_when.forbidden", 2)]
    first, second = report["violations"]
    assert first["evidence"] == {"tool": "refund", "count": 0, "min": 1,
                                 "when": {"path": "refunds", "non_empty": True}}
    assert (first["status"], second["status"]) == ("fail", "fail")
    assert second["event_index"] == 1


def test_section_3_8_example_passes(cli: Cli, tmp_path: Path) -> None:
    """§3.8: PASS: the verdict is `satisfied`, and a refund call replaces the email."""
    trace = [outcome("fraud", "satisfied"), call("refund", "r1", args={"order": "A1"}),
             completed(output={"refunds": ["A1"]})]
    code, report = check(cli, tmp_path, [IFF_REPORTED, NO_MAIL], trace)
    assert code == 0 and report["violations"] == []


def test_required_when_min_counts_calls(cli: Cli, tmp_path: Path) -> None:
    """§3.8 required_when: `min`; count < min is `required_when.min` (point 24) with the count."""
    rules = [{"id": "rw", "kind": "required_when", "tool": "refund", "min": 2,
              "when": {"path": "refunds", "non_empty": True}}]
    code, report = check(cli, tmp_path, rules, [call("refund", "r1"), completed(output={"refunds": [1, 2]})])
    violation = only_violation(report)
    assert (violation["code"], violation["event_seq"]) == ("required_when.min", 2)
    assert (violation["evidence"]["count"], violation["evidence"]["min"]) == (1, 2)


def test_required_when_min_reached_passes(cli: Cli, tmp_path: Path) -> None:
    """§3.8: a violation only if count < min; point 4: `checked` 1."""
    rules = [{"id": "rw", "kind": "required_when", "tool": "refund*", "min": 2,
              "when": {"path": "refunds", "non_empty": True}}]
    trace = [call("refund", "r1"), call("refund.partial", "r2"), completed(output={"refunds": [1, 2]})]
    code, report = check(cli, tmp_path, rules, trace)
    assert code == 0 and result_of(report, "rw")["checked"] == 1


def test_required_when_false_condition_without_iff_passes(cli: Cli, tmp_path: Path) -> None:
    """§3.8: only a holding condition requires the calls; without `iff` a false one allows them."""
    rules = [{"id": "rw", "kind": "required_when", "tool": "refund", "when": {"path": "refunds", "non_empty": True}}]
    code, report = check(cli, tmp_path, rules, [call("refund", "r1"), completed(output={"refunds": []})])
    assert code == 0 and report["violations"] == []


def test_required_when_false_condition_is_not_vacuous(cli: Cli, tmp_path: Path) -> None:
    """Point 4: required_when is trace-level: `checked` 1 and never vacuous, even with no call."""
    rules = [{"id": "rw", "kind": "required_when", "tool": "refund", "when": {"path": "refunds", "non_empty": True}}]
    code, report = check(cli, tmp_path, rules, [completed(output={"refunds": []})])
    rule = result_of(report, "rw")
    assert (code, rule["checked"], rule.get("vacuous")) == (0, 1, None)


def test_required_when_iff_false_condition_flags_each_call(cli: Cli, tmp_path: Path) -> None:
    """§3.8 `iff`; point 24: `required_when.forbidden`, one per matching call, at the call; point 5:
    ascending event order."""
    trace = [call("refund", "r1"), call("email", "m1"), call("refund", "r2"), completed(output={"refunds": []})]
    code, report = check(cli, tmp_path, [IFF_REPORTED], trace)
    assert code == 1
    assert located(report) == [("required_when.forbidden", 1), ("required_when.forbidden", 3)]
    assert [v["status"] for v in report["violations"]] == ["fail", "fail"]
    assert result_of(report, "refund-iff-reported")["checked"] == 1


def test_required_when_count_successful_skips_failed_and_unanswered(cli: Cli, tmp_path: Path) -> None:
    """§3.8 `count` (as tool_calls, point 20: the paired result exists and is not `ok:false`)."""
    rules = [{"id": "rw", "kind": "required_when", "tool": "refund", "count": "successful",
              "when": {"path": "refunds", "non_empty": True}}]
    trace = [call("refund", "r1"), result("r1", ok=False), call("refund", "r2"), completed(output={"refunds": [1]})]
    code, report = check(cli, tmp_path, rules, trace)
    violation = only_violation(report)
    assert (violation["code"], violation["evidence"]["count"]) == ("required_when.min", 0)


def test_required_when_count_successful_pairs_results_one_to_one(cli: Cli, tmp_path: Path) -> None:
    """§3.8 `count: successful` with point 3: a result belongs to the nearest earlier unanswered call
    with its call_id, so one result makes one of two same-id calls successful."""
    rules = [{"id": "rw", "kind": "required_when", "tool": "refund", "count": "successful", "min": 2,
              "when": {"path": "refunds", "non_empty": True}}]
    trace = [call("refund", "r"), call("refund", "r"), result("r"), completed(output={"refunds": [1, 2]})]
    code, report = check(cli, tmp_path, rules, trace)
    violation = only_violation(report)
    assert (violation["code"], violation["evidence"]["count"]) == ("required_when.min", 1)


def test_required_when_count_successful_counts_an_ok_result(cli: Cli, tmp_path: Path) -> None:
    """§3.8 `count: successful`: a call whose result is not `ok:false` counts."""
    rules = [{"id": "rw", "kind": "required_when", "tool": "refund", "count": "successful",
              "when": {"path": "refunds", "non_empty": True}}]
    trace = [call("refund", "r1"), result("r1"), completed(output={"refunds": [1]})]
    code, report = check(cli, tmp_path, rules, trace)
    assert code == 0 and report["violations"] == []


def test_required_when_unresolved_gives_one_violation_whatever_the_count(cli: Cli, tmp_path: Path) -> None:
    """Point 24: an unresolved condition gives one `required_when.condition_unresolved` whatever the
    count; point 14: at the terminal and nothing else."""
    trace = [call("refund", "r1"), completed(output={"total": 1})]
    code, report = check(cli, tmp_path, [IFF_REPORTED], trace)
    violation = only_violation(report)
    assert (violation["code"], violation["status"], violation["event_seq"]) == (
        "required_when.condition_unresolved", "unresolved", 2)


def test_required_when_unresolved_with_warning_severity(cli: Cli, tmp_path: Path) -> None:
    """Point 6: an unresolved violation has its rule's severity (warning: counted, exit 0)."""
    rules = [{**IFF_REPORTED, "severity": "warning"}]
    code, report = check(cli, tmp_path, rules, [completed()])
    assert code == 0
    assert (report["error_count"], report["warning_count"]) == (0, 1)
    assert only_violation(report)["status"] == "unresolved"


def test_required_when_min_without_terminal_has_no_seq(cli: Cli, tmp_path: Path) -> None:
    """Point 2: `required_when.min` sits at the terminal, with no seq when there is none."""
    rules = [{"id": "rw", "kind": "required_when", "tool": "refund",
              "when": {"outcome": {"outcome_id": "claim", "verdict": "satisfied"}}}]
    code, report = check(cli, tmp_path, rules, [outcome("claim", "satisfied")])
    assert located(report) == [("required_when.min", None)]
    assert result_of(report, "rw")["checked"] == 1


def test_required_when_tool_results_are_not_calls(cli: Cli, tmp_path: Path) -> None:
    """§3.8: the rule counts calls of `tool`; a `tool.result` naming the tool is no call."""
    rules = [{"id": "rw", "kind": "required_when", "tool": "refund", "when": {"path": "refunds", "non_empty": True}}]
    trace = [{"type": "tool.result", "tool": "refund", "call_id": "x", "ok": True}, completed(output={"refunds": [1]})]
    code, report = check(cli, tmp_path, rules, trace)
    assert located(report) == [("required_when.min", 2)]


@pytest.mark.parametrize("rule", [
    pytest.param({"when": {"path": "a", "equals": 1}}, id="no-tool"),
    pytest.param({"tool": "refund"}, id="no-when"),
    pytest.param({"tool": "refund", "when": {"path": "a", "equals": 1}, "count": "all"}, id="bad-count"),
    pytest.param({"tool": "refund", "when": {"path": "a", "equals": 1}, "iff": "yes"}, id="bad-iff"),
    pytest.param({"tool": "refund", "when": {"path": "a", "equals": 1}, "min": 1.5}, id="fractional-min"),
    pytest.param({"tool": "refund", "when": {"path": "a", "equals": 1}, "max": 1}, id="unknown-field"),
])
def test_required_when_bad_fields_are_refused(cli: Cli, tmp_path: Path, rule: Rule) -> None:
    """§3.8 required_when fields `tool`, `when`, `min`, `count`, `iff`."""
    refuses(cli, tmp_path, [{"id": "rw", "kind": "required_when", **rule}])


# -- forbidden_when ----------------------------------------------------------------------------------


def test_forbidden_when_condition_is_judged_over_the_whole_trace(cli: Cli, tmp_path: Path) -> None:
    """Point 14: a condition is evaluated once, at trace end: a call before the outcome is forbidden."""
    trace = [call("email", "m1"), outcome("fraud", "violated"), call("email", "m2"), completed()]
    code, report = check(cli, tmp_path, [NO_MAIL], trace)
    assert located(report) == [("forbidden_when.forbidden", 1), ("forbidden_when.forbidden", 3)]
    assert result_of(report, "no-mail-on-fraud")["checked"] == 2


def test_forbidden_when_outcome_after_terminal_still_counts(cli: Cli, tmp_path: Path) -> None:
    """Point 14: the condition is evaluated once, at trace end, over the whole trace."""
    trace = [call("email", "m1"), completed(), outcome("fraud", "violated")]
    code, report = check(cli, tmp_path, [NO_MAIL], trace)
    assert located(report) == [("forbidden_when.forbidden", 1)]


def test_forbidden_when_results_are_not_calls(cli: Cli, tmp_path: Path) -> None:
    """§3.8: each *call* is a violation; a `tool.result` naming the tool is none (point 4: vacuous)."""
    trace = [outcome("fraud", "violated"), {"type": "tool.result", "tool": "email", "call_id": "q", "ok": True},
             completed()]
    code, report = check(cli, tmp_path, [NO_MAIL], trace)
    rule = result_of(report, "no-mail-on-fraud")
    assert (code, rule["checked"], rule.get("vacuous")) == (0, 0, True)


def test_forbidden_when_false_condition_passes_and_counts_calls(cli: Cli, tmp_path: Path) -> None:
    """Point 4: forbidden_when's `checked` is the number of matching calls."""
    rules = [{**NO_MAIL, "tool": "mail.*"}]
    trace = [call("mail.send", "m1"), call("crm", "c1"), call("mail.draft", "m2"),
             outcome("fraud", "satisfied"), completed()]
    code, report = check(cli, tmp_path, rules, trace)
    assert code == 0
    assert (result_of(report, "no-mail-on-fraud")["checked"], report["violations"]) == (2, [])


def test_forbidden_when_unresolved_gives_one_violation_at_terminal(cli: Cli, tmp_path: Path) -> None:
    """§3.8: an unresolved condition gives one `condition_unresolved`; point 14: at the terminal and
    nothing else from the rule."""
    trace = [call("email", "m1"), call("email", "m2"), completed()]
    code, report = check(cli, tmp_path, [NO_MAIL], trace)
    violation = only_violation(report)
    assert (violation["code"], violation["status"], violation["event_seq"]) == (
        "forbidden_when.condition_unresolved", "unresolved", 3)


def test_forbidden_when_vacuous_passes_with_unresolved_condition(cli: Cli, tmp_path: Path) -> None:
    """Point 4: a vacuous forbidden_when (no matching call) passes even if its condition is
    unresolved, with `checked: 0, vacuous: true`."""
    code, report = check(cli, tmp_path, [NO_MAIL], [call("crm", "c1"), completed()])
    assert code == 0
    rule = result_of(report, "no-mail-on-fraud")
    assert (rule["passed"], rule["checked"], rule.get("vacuous")) == (True, 0, True)


def test_forbidden_when_unresolved_without_terminal_has_no_seq(cli: Cli, tmp_path: Path) -> None:
    """Point 14: `condition_unresolved` has no seq without a terminal."""
    code, report = check(cli, tmp_path, [NO_MAIL], [call("email", "m1")])
    assert located(report) == [("forbidden_when.condition_unresolved", None)]


def test_forbidden_when_calls_without_terminal_are_still_flagged(cli: Cli, tmp_path: Path) -> None:
    """Point 2: `forbidden_when.forbidden` sits at the call, terminal or not."""
    code, report = check(cli, tmp_path, [NO_MAIL], [outcome("fraud", "violated"), call("email", "m1")])
    assert located(report) == [("forbidden_when.forbidden", 2)]


@pytest.mark.parametrize("rule", [
    pytest.param({"when": {"path": "a", "equals": 1}}, id="no-tool"),
    pytest.param({"tool": "email"}, id="no-when"),
    pytest.param({"tool": "email", "when": {"path": "a", "equals": 1}, "iff": True}, id="iff-not-a-field"),
])
def test_forbidden_when_bad_fields_are_refused(cli: Cli, tmp_path: Path, rule: Rule) -> None:
    """§3.8 forbidden_when: fields `tool`, `when` (only those)."""
    refuses(cli, tmp_path, [{"id": "fw", "kind": "forbidden_when", **rule}])


# -- conditions (§2, point 13, point 14) -----------------------------------------------------------------


def verdict(when: Any, trace_end: list[Event]) -> str:
    """How a condition came out: a forbidden_when on `x` with one call to `x` before `trace_end`
    reports `forbidden` (true), nothing (false) or `condition_unresolved` (unresolved). Run through
    the public library (`load_contract`, `check_trace`: spec v1 §10's checkTrace) to keep the many
    cases fast; the CLI cases above cover the same kinds end to end."""
    contract = load_contract({"version": 2, "name": "spec",
                              "rules": [{"id": "fw", "kind": "forbidden_when", "tool": "x", "when": when}]})
    trace = [{"seq": position + 1, **event} for position, event in enumerate([call("x", "c1"), *trace_end])]
    codes = tuple(str(violation.code) for violation in check_trace(contract, trace).violations)
    return {(): "false", ("forbidden_when.forbidden",): "true",
            ("forbidden_when.condition_unresolved",): "unresolved"}[codes]


def out(value: Any) -> list[Event]:
    return [completed(output=value)]


TRUE_WHEN: dict[str, Any] = {"path": "t", "equals": True}
FALSE_WHEN: dict[str, Any] = {"path": "f", "equals": True}
UNRESOLVED_WHEN: dict[str, Any] = {"path": "absent", "equals": True}
LOGIC_OUTPUT: dict[str, Any] = {"t": True, "f": False}

CONDITION_CASES = [
    # §2 {path, equals}: equality is JSON-type-strict and structural.
    pytest.param({"path": "a", "equals": 1}, out({"a": 1.0}), "true", id="equals-1-is-1.0"),
    pytest.param({"path": "a", "equals": 1}, out({"a": True}), "false", id="equals-true-is-not-1"),
    pytest.param({"path": "a", "equals": "1"}, out({"a": 1}), "false", id="equals-string-is-not-number"),
    pytest.param({"path": "a", "equals": {"k": 1}}, out({"a": {"k": 1, "j": 2}}), "false", id="equals-key-sets"),
    pytest.param({"path": "a", "equals": [1, 2]}, out({"a": [2, 1]}), "false", id="equals-arrays-by-position"),
    pytest.param({"path": "a", "equals": None}, out({"a": None}), "true", id="equals-null-is-found"),
    # §2: a missing output or path is unresolved.
    pytest.param({"path": "a", "equals": 1}, out({"b": 1}), "unresolved", id="missing-path"),
    pytest.param({"path": "a", "equals": 1}, [completed()], "unresolved", id="missing-output"),
    pytest.param({"path": "a", "equals": 1}, [], "unresolved", id="no-terminal"),
    pytest.param({"path": "a.b", "equals": 1}, out({"a": None}), "unresolved", id="path-through-null"),
    # §2 {path, non_empty: true}: non_empty on a non-array is unresolved.
    pytest.param({"path": "a", "non_empty": True}, out({"a": [0]}), "true", id="non-empty-array"),
    pytest.param({"path": "a", "non_empty": True}, out({"a": []}), "false", id="empty-array"),
    pytest.param({"path": "a", "non_empty": True}, out({"a": "text"}), "unresolved", id="non-empty-string"),
    pytest.param({"path": "a", "non_empty": True}, out({"a": {"k": 1}}), "unresolved", id="non-empty-object"),
    pytest.param({"path": "a", "non_empty": True}, out({"a": None}), "unresolved", id="non-empty-null"),
    # §2 {path, matches: node}: a match tree.
    pytest.param({"path": "r", "matches": {"amount": {"$gt": 0}}}, out({"r": {"amount": 5}}), "true",
                 id="matches-true"),
    pytest.param({"path": "r", "matches": {"amount": {"$gt": 0}}}, out({"r": {"amount": 0}}), "false",
                 id="matches-false"),
    pytest.param({"path": "r", "matches": {"id": {"$regex": "^A"}}}, out({"r": {"id": 7}}), "false",
                 id="matches-regex-on-number"),
    # Point 14: `outcome` selects by outcome_id (a glob); the last one decides; none → unresolved.
    pytest.param({"outcome": {"outcome_id": "fraud", "verdict": "violated"}},
                 [outcome("fraud", "violated"), completed()], "true", id="outcome-equal"),
    pytest.param({"outcome": {"outcome_id": "fraud", "verdict": "violated"}},
                 [outcome("fraud", "violated"), outcome("fraud", "satisfied"), completed()], "false",
                 id="outcome-last-decides"),
    pytest.param({"outcome": {"outcome_id": "fraud", "verdict": "violated"}},
                 [outcome("fraud", "violated"), outcome("fraud"), completed()], "false",
                 id="outcome-absent-verdict-is-false"),
    pytest.param({"outcome": {"outcome_id": "fraud", "verdict": "violated"}},
                 [outcome("fraud", "violated"), outcome("audit", "satisfied"), completed()], "true",
                 id="outcome-other-ids-ignored"),
    pytest.param({"outcome": {"outcome_id": "fr*", "verdict": "violated"}},
                 [outcome("fraud", "violated"), completed()], "true", id="outcome-id-glob"),
    pytest.param({"outcome": {"outcome_id": "fraud", "verdict": "violated"}},
                 [outcome("audit", "violated"), completed()], "unresolved", id="outcome-none"),
    pytest.param({"outcome": {"outcome_id": "fraud", "verdict": "violated"}},
                 [outcome("fraud", "violated")], "true", id="outcome-needs-no-terminal"),
    # Point 14: any_of / all_of use Kleene logic.
    pytest.param({"any_of": [TRUE_WHEN, UNRESOLVED_WHEN]}, out(LOGIC_OUTPUT), "true", id="any-true-unresolved"),
    pytest.param({"any_of": [FALSE_WHEN, UNRESOLVED_WHEN]}, out(LOGIC_OUTPUT), "unresolved",
                 id="any-false-unresolved"),
    pytest.param({"any_of": [FALSE_WHEN, FALSE_WHEN]}, out(LOGIC_OUTPUT), "false", id="any-false-false"),
    pytest.param({"all_of": [FALSE_WHEN, UNRESOLVED_WHEN]}, out(LOGIC_OUTPUT), "false", id="all-false-unresolved"),
    pytest.param({"all_of": [TRUE_WHEN, UNRESOLVED_WHEN]}, out(LOGIC_OUTPUT), "unresolved",
                 id="all-true-unresolved"),
    pytest.param({"all_of": [TRUE_WHEN, TRUE_WHEN]}, out(LOGIC_OUTPUT), "true", id="all-true-true"),
    pytest.param({"all_of": [TRUE_WHEN, {"any_of": [FALSE_WHEN, TRUE_WHEN]}]}, out(LOGIC_OUTPUT), "true",
                 id="nested"),
    # Point 13: paths.
    pytest.param({"path": "items.1.sku", "equals": "b"}, out({"items": [{"sku": "a"}, {"sku": "b"}]}), "true",
                 id="path-numeric-indexes-array"),
    pytest.param({"path": "m.0", "equals": "x"}, out({"m": {"0": "x"}}), "true", id="path-numeric-key-of-object"),
    pytest.param({"path": "items.first", "equals": 1}, out({"items": [1]}), "unresolved",
                 id="path-name-on-array-not-found"),
    pytest.param({"path": "items.5", "equals": 1}, out({"items": [1]}), "unresolved", id="path-index-out-of-range"),
    pytest.param({"path": "/a~1b", "equals": 1}, out({"a/b": 1}), "true", id="pointer-escapes"),
    pytest.param({"path": "/", "equals": 1}, out({"": 1}), "true", id="pointer-slash-is-empty-key"),
    pytest.param({"path": "/items/0", "equals": 1}, out({"items": [1]}), "true", id="pointer-into-array"),
    pytest.param({"path": "items.01", "equals": 1}, out({"items": [0, 1]}), "unresolved",
                 id="path-non-canonical-index-on-array"),
    pytest.param({"path": "m.01", "equals": 1}, out({"m": {"01": 1}}), "true", id="path-non-canonical-key"),
    pytest.param({"path": "items.-1", "equals": 1}, out({"items": [1]}), "unresolved", id="path-negative-index"),
    pytest.param({"path": "/items/01", "equals": 1}, out({"items": [0, 1]}), "unresolved",
                 id="pointer-leading-zero-index"),
    pytest.param({"path": "/items/-", "equals": 1}, out({"items": [1]}), "unresolved", id="pointer-dash"),
    pytest.param({"path": "0", "equals": 5}, out([5]), "true", id="path-on-array-output"),
    # Point 16: a `run.failed` terminal's output is the final output.
    pytest.param({"path": "a", "equals": 1}, [failed(output={"a": 1})], "true", id="run-failed-output"),
    # §0: the final output is the last terminal's.
    pytest.param({"path": "a", "equals": 1}, [completed(output={"a": 1}), failed()], "unresolved",
                 id="last-terminal-output"),
    # Point 11: `$exists` as a key's value inside a condition's `matches`; null is present (point 9).
    pytest.param({"path": "a", "matches": {"k": {"$exists": True}}}, out({"a": {"k": None}}), "true",
                 id="matches-exists-null"),
]


@pytest.mark.parametrize(("when", "trace_end", "expected"), CONDITION_CASES)
def test_condition_value(when: Any, trace_end: list[Event], expected: str) -> None:
    """§2 conditions, point 13 (paths) and point 14 (outcome, Kleene logic, trace-end evaluation)."""
    assert verdict(when, trace_end) == expected


@pytest.mark.parametrize("when", [
    pytest.param({"path": "", "equals": 1}, id="empty-path"),
    pytest.param({"path": "a"}, id="path-alone"),
    pytest.param({"path": "a", "equals": 1, "non_empty": True}, id="two-tests"),
    pytest.param({"any_of": [TRUE_WHEN]}, id="any-of-1"),
    pytest.param({"all_of": [TRUE_WHEN] * 21}, id="all-of-21"),
    pytest.param({"path": "a", "matches": {"$arg": "x"}}, id="arg-in-matches"),
    pytest.param({"path": "a", "matches": {"k": {"$from_output": "k"}}}, id="from-output-in-matches"),
    pytest.param({"unless": TRUE_WHEN}, id="unknown-key"),
    pytest.param({"path": "a", "equals": 1, "outcome": {"outcome_id": "a", "verdict": "violated"}}, id="mixed"),
    pytest.param({"outcome": {"outcome_id": "a", "verdict": "bogus"}}, id="bad-verdict"),
    pytest.param({"path": "a", "matches": {"$exists": True}}, id="exists-at-matches-root"),
])
def test_bad_conditions_are_refused(cli: Cli, tmp_path: Path, when: Any) -> None:
    """§2 condition forms (`any_of`/`all_of` take 2..20); point 13: `""` is not a valid path;
    point 12: `$arg`/`$from_output` are load errors in conditions."""
    refuses(cli, tmp_path, [{"id": "fw", "kind": "forbidden_when", "tool": "x", "when": when}])


def test_any_of_with_20_conditions_is_accepted() -> None:
    """§2: `{any_of: [2..20]}` (20 is the limit, inclusive)."""
    assert verdict({"any_of": [FALSE_WHEN] * 19 + [TRUE_WHEN]}, out(LOGIC_OUTPUT)) == "true"


# -- event-field typing (point 16) ---------------------------------------------------------------------


@pytest.mark.parametrize(("event", "field"), [
    pytest.param(completed(status=5), "status", id="status-number"),
    pytest.param(completed(status=""), "status", id="status-empty"),
    pytest.param(completed(status="s" * 101), "status", id="status-101"),
    pytest.param(completed(status=None), "status", id="status-null"),
    pytest.param({"type": "agent.message", "status": 1}, "status", id="status-on-any-event"),
    pytest.param(call("a", "c2", args=[1]), "args", id="args-array"),
    pytest.param(call("a", "c2", args=None), "args", id="args-null"),
    pytest.param({"type": "agent.message", "args": "x"}, "args", id="args-on-any-event"),
    pytest.param(result("c1") | {"duration_ms": -1}, "duration_ms", id="duration-negative"),
    pytest.param(result("c1") | {"duration_ms": True}, "duration_ms", id="duration-boolean"),
    pytest.param(result("c1") | {"duration_ms": "5"}, "duration_ms", id="duration-string"),
    pytest.param(result("c1") | {"duration_ms": None}, "duration_ms", id="duration-null"),
    pytest.param({"type": "approval.granted", "approver": ""}, "approver", id="approver-empty"),
    pytest.param({"type": "approval.granted", "approver": "a" * 501}, "approver", id="approver-501"),
    pytest.param(failed(reason=5), "reason", id="reason-number"),
    pytest.param(failed(reason=None), "reason", id="reason-null"),
    pytest.param({"type": "control.stop", "reason": "r" * 501}, "reason", id="reason-501"),
])
def test_bad_new_field_is_refused(cli: Cli, tmp_path: Path, event: Event, field: str) -> None:
    """Point 16: under version 2 each new field is checked on every event that carries it (args
    object; duration_ms finite number >= 0, not boolean; status 1..100; approver and reason 1..500;
    null rejected except for result/output), with a `file:line: $.field` error."""
    write_contract(tmp_path, [{"id": "done", "kind": "run_status", "equals": "completed"}])
    write_trace(tmp_path, [call("a", "c1"), event])
    done = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert f"t.jsonl:2: $.{field}" in done.stderr


def test_new_fields_at_their_limits_are_accepted(cli: Cli, tmp_path: Path) -> None:
    """Point 16: duration_ms 0, approver and reason of 500 characters, `result: null` are valid."""
    trace = [call("a", "c1"), result("c1") | {"duration_ms": 0, "result": None},
             {"type": "approval.granted", "approver": "a" * 500}, completed(reason="r" * 500)]
    code, _ = check(cli, tmp_path, [{"id": "done", "kind": "run_status", "equals": "completed"}], trace)
    assert code == 0


def test_status_of_100_characters_is_accepted(cli: Cli, tmp_path: Path) -> None:
    """Point 16 / §1: status is a string of 1..100 characters (100 inclusive), compared exactly."""
    rules = [{"id": "done", "kind": "run_status", "equals": "s" * 100}]
    code, _ = check(cli, tmp_path, rules, [completed(status="s" * 100)])
    assert code == 0


@pytest.mark.parametrize("value", [None, 0, "text", [1], {"a": None}, False])
def test_output_accepts_any_json(cli: Cli, tmp_path: Path, value: Any) -> None:
    """Point 16: result/output any JSON including null, on any event that carries it."""
    rules = [{"id": "done", "kind": "run_status", "equals": "completed"}]
    code, _ = check(cli, tmp_path, rules, [{"type": "agent.message", "output": value}, completed(output=value)])
    assert code == 0


def test_status_is_not_typed_under_version_1(cli: Cli, tmp_path: Path) -> None:
    """§0: new fields are type-checked only under v2 (Node ignores them)."""
    write_contract(tmp_path, [{"id": "d", "kind": "deny_tool", "tool": "shell"}], version=1)
    write_trace(tmp_path, [completed(status=5, output=None)])
    done = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert done.returncode == 0, done.stderr


# -- --partial (point 6 with point 82) ---------------------------------------------------------------


def test_partial_makes_output_match_inconclusive(cli: Cli, tmp_path: Path) -> None:
    """§0: `check --partial` reports liveness parts as `inconclusive` (§3.7 is liveness); point 6:
    `inconclusive` appears only under `--partial`; point 82: left out of `error_count` and the exit."""
    rules = [{"id": "m", "kind": "output_match", "match": {"total": 1}}]
    code, report = check(cli, tmp_path, rules, [completed(output={"total": 2})], "--partial")
    assert code == 0
    violation = only_violation(report)
    assert (violation["code"], violation["status"]) == ("output_match.mismatch", "inconclusive")
    assert report["error_count"] == 0


def test_partial_makes_required_when_inconclusive(cli: Cli, tmp_path: Path) -> None:
    """§0/§3.8: conditional obligations are liveness, so `--partial` reports them `inconclusive`."""
    rules = [{"id": "rw", "kind": "required_when", "tool": "refund",
              "when": {"outcome": {"outcome_id": "claim", "verdict": "satisfied"}}}]
    code, report = check(cli, tmp_path, rules, [outcome("claim", "satisfied")], "--partial")
    assert code == 0
    assert [(v["code"], v["status"]) for v in report["violations"]] == [("required_when.min", "inconclusive")]


def test_partial_makes_run_status_inconclusive(cli: Cli, tmp_path: Path) -> None:
    """§0: `--partial` reports liveness parts `inconclusive` (§3.7 is liveness); the status is `none`."""
    rules = [{"id": "done", "kind": "run_status", "equals": "completed"}]
    code, report = check(cli, tmp_path, rules, [call("a", "c1")], "--partial")
    assert code == 0
    violation = only_violation(report)
    assert (violation["code"], violation["status"]) == ("run_status.mismatch", "inconclusive")
    assert violation["evidence"] == {"status": "none", "expected": "completed"}


def test_partial_makes_forbidden_when_inconclusive(cli: Cli, tmp_path: Path) -> None:
    """§0/§3.8: forbidden_when is liveness (its condition is known only at the end)."""
    code, report = check(cli, tmp_path, [NO_MAIL], [outcome("fraud", "violated"), call("email", "m1")], "--partial")
    assert code == 0
    assert [(v["code"], v["status"]) for v in report["violations"]] == [("forbidden_when.forbidden", "inconclusive")]
