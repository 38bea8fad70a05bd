"""A third reading of `compare`: spec v1 §6 (policy, the five regressions in their fixed order, the
inflation arithmetic, outcome ranks), §7.5 (exit codes), v2 §0 ("compare, MCP and the renderers need
no change") and the §10 points that reach compare: codes and statuses (points 1, 6), `--partial`
(point 82), lint refusal (points 8, 37), plus the README's batch compare (folders, globs, pairing by
name), `--jobs`, `--max-violations`, `--strict` and `--max-warnings`.

Aimed at the corners: a v2 candidate whose only violations are `unresolved` or `inconclusive`, a
rule failing in both runs with different codes, a tool seen only in a `tool.result`, an increase
exactly at the limit, a baseline with zero calls, every pair of final outcomes, files that do and
do not pair, one file against a folder, an unreadable baseline, every output format on one
regression, and determinism.
"""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agent_invariants import compare_traces, load_contract

Event = dict[str, Any]
Rule = dict[str, Any]
Report = dict[str, Any]


# -- helpers -----------------------------------------------------------------------------------------


def put(tmp_path: Path, name: str, content: Any) -> Path:
    """Write a contract (dict), a trace (list of events, numbered from seq 1) or raw text."""
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, dict):
        path.write_text(json.dumps(content), encoding="utf-8")
    elif isinstance(content, list):
        lines = [json.dumps({"seq": i + 1, **event}) for i, event in enumerate(content)]
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    else:
        path.write_text(content, encoding="utf-8")
    return path


def contract(*rules: Rule, version: int = 1, **policy: Any) -> dict[str, Any]:
    document: dict[str, Any] = {"version": version, "name": "spec", "rules": list(rules)}
    if policy:
        document["compare"] = policy
    return document


def call(tool: str, call_id: str | None = None, **extra: Any) -> Event:
    event: Event = {"type": "tool.call", "tool": tool, **extra}
    if call_id is not None:
        event["call_id"] = call_id
    return event


def outcome(verdict: str | None) -> Event:
    event: Event = {"type": "outcome.observed", "outcome_id": "o", "evidence_class": "externally_observed"}
    if verdict is not None:
        event["verdict"] = verdict
    return event


def run_compare(tmp_path: Path, cli: Any, document: dict[str, Any], baseline: list[Event],
                candidate: list[Event], *options: str) -> tuple[int, Report]:
    """Write c.json, b.jsonl and k.jsonl, run `compare --format json`; return the exit code and report."""
    put(tmp_path, "c.json", document)
    put(tmp_path, "b.jsonl", baseline)
    put(tmp_path, "k.jsonl", candidate)
    result = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl", "--format", "json", *options)
    assert result.returncode in (0, 1), result.stderr
    report: Report = json.loads(result.stdout)
    return result.returncode, report


def core(regressions: list[dict[str, Any]]) -> list[tuple[str, str, Any]]:
    """The interface part of each regression: kind, severity, evidence (messages may be reworded, D6)."""
    return [(r["kind"], r["severity"], r["evidence"]) for r in regressions]


def lib_compare(document: dict[str, Any], baseline: list[Event], candidate: list[Event]) -> Report:
    """The library's compare_traces (README "The library") on event lists, as plain data."""
    numbered_b = [{"seq": i + 1, **e} for i, e in enumerate(baseline)]
    numbered_k = [{"seq": i + 1, **e} for i, e in enumerate(candidate)]
    report = compare_traces(load_contract(document), numbered_b, numbered_k)
    data: Report = msgspec.to_builtins(report, enc_hook=float)
    return data


def calls(n: int) -> list[Event]:
    return [call("t") for _ in range(n)]


DENY_X: Rule = {"id": "no-x", "kind": "deny_tool", "tool": "x"}
DENY_Z: Rule = {"id": "no-z", "kind": "deny_tool", "tool": "z"}


# -- exact JSON shape ------------------------------------------------------------------------------


def test_report_keys_in_spec_order_and_exact_regression(tmp_path: Path, cli: Any) -> None:
    """v1 §6: report `{schema, contract:{name,version}, compatible, baseline, candidate, regressions}`;
    §7.2 keys in the orders given; D5 extra keys allowed after them. `new_rule_failure` evidence
    `{rule_id, rule_kind, violations}`; all regressions severity error; exit 1 (§7.5)."""
    rc, report = run_compare(tmp_path, cli, contract(DENY_X), [call("a")], [call("a"), call("x"), call("x")])
    assert rc == 1
    assert list(report)[:6] == ["schema", "contract", "compatible", "baseline", "candidate", "regressions"]
    assert report["schema"] == "agent-invariants/compare/v1"
    assert report["contract"] == {"name": "spec", "version": 1}
    assert report["compatible"] is False
    assert report["baseline"]["schema"] == report["candidate"]["schema"] == "agent-invariants/check/v1"
    assert (report["baseline"]["error_count"], report["candidate"]["error_count"]) == (0, 2)
    first = report["regressions"][0]
    assert list(first)[:4] == ["kind", "severity", "message", "evidence"]
    assert first["message"] == "Rule newly fails in candidate: no-x."
    assert list(first["evidence"]) == ["rule_id", "rule_kind", "violations"]
    assert core(report["regressions"]) == [
        ("new_rule_failure", "error", {"rule_id": "no-x", "rule_kind": "deny_tool", "violations": 2}),
        ("new_tool", "error", {"tool": "x"}),
    ]


def test_identical_traces_are_compatible_exit_0(tmp_path: Path, cli: Any) -> None:
    """§6: `compatible` = no error-severity regression; §7.5 exit 0 when compatible."""
    rc, report = run_compare(tmp_path, cli, contract(DENY_X), [call("a")], [call("a")])
    assert (rc, report["compatible"], report["regressions"]) == (0, True, [])


def test_v2_contract_report_keeps_compare_schema(tmp_path: Path, cli: Any) -> None:
    """v2 §0: reports keep their schema (with contract.version 2); compare needs no change."""
    rc, report = run_compare(tmp_path, cli, contract(DENY_X, version=2), [call("a")], [call("a")])
    assert (rc, report["schema"], report["contract"]) == (0, "agent-invariants/compare/v1",
                                                          {"name": "spec", "version": 2})
    assert report["candidate"]["contract"] == {"name": "spec", "version": 2}


# -- v2 statuses: unresolved and inconclusive ------------------------------------------------------

ARGS_RULE: Rule = {"id": "args", "kind": "tool_args", "tool": "refund", "match": {"order": {"$exists": True}}}


def test_candidate_with_only_unresolved_violation_regresses(tmp_path: Path, cli: Any) -> None:
    """§10.6: an unresolved violation has its rule's severity, counts in error_count and fails the
    rule, so a candidate adding only `tool_args.args_missing` (unresolved) is a new_rule_failure."""
    rc, report = run_compare(tmp_path, cli, contract(ARGS_RULE, version=2),
                             [call("refund", "c1", args={"order": "A1"})], [call("refund", "c1")])
    assert rc == 1
    [violation] = report["candidate"]["violations"]
    assert (violation["code"], violation["status"]) == ("tool_args.args_missing", "unresolved")
    assert report["candidate"]["error_count"] == 1
    assert core(report["regressions"]) == [
        ("new_rule_failure", "error", {"rule_id": "args", "rule_kind": "tool_args", "violations": 1})]


def test_unresolved_in_both_is_contract_violation(tmp_path: Path, cli: Any) -> None:
    """§6 item 2 with §10.6: an unresolved failure in the baseline is a baseline failure too."""
    rc, report = run_compare(tmp_path, cli, contract(ARGS_RULE, version=2),
                             [call("refund", "c1")], [call("refund", "c1")])
    assert rc == 1
    assert core(report["regressions"]) == [("contract_violation", "error", {
        "rule_id": "args", "rule_kind": "tool_args", "violations": 1, "baseline_also_failed": True})]


LIVENESS: list[Rule] = [
    {"id": "done", "kind": "require_event", "match": {"type": "run.completed"}, "min": 1},
    {"id": "res", "kind": "tool_result_required"},
]
COMPLETE: list[Event] = [call("a", "c1"), {"type": "tool.result", "call_id": "c1", "ok": True},
                         {"type": "run.completed"}]


def test_partial_candidate_with_only_inconclusive_is_compatible(tmp_path: Path, cli: Any) -> None:
    """§10.82: under --partial, liveness violations (require_event min, tool_result_required) carry
    status inconclusive and are left out of error_count, passed and the exit; compare adds no
    regression for them."""
    rc, report = run_compare(tmp_path, cli, contract(*LIVENESS, version=2), COMPLETE, [call("a", "c1")],
                             "--partial")
    candidate = report["candidate"]
    assert [(v["code"], v["status"]) for v in candidate["violations"]] == [
        ("require_event.min", "inconclusive"), ("tool_result_required.missing", "inconclusive")]
    assert (candidate["passed"], candidate["error_count"], candidate["warning_count"]) == (True, 0, 0)
    assert (rc, report["compatible"], report["regressions"]) == (0, True, [])


def test_same_cut_candidate_without_partial_regresses(tmp_path: Path, cli: Any) -> None:
    """§10.6/§10.82: without --partial the same violations have status fail and both rules newly fail,
    in contract order."""
    rc, report = run_compare(tmp_path, cli, contract(*LIVENESS, version=2), COMPLETE, [call("a", "c1")])
    assert [v["status"] for v in report["candidate"]["violations"]] == ["fail", "fail"]
    assert rc == 1
    assert core(report["regressions"]) == [
        ("new_rule_failure", "error", {"rule_id": "done", "rule_kind": "require_event", "violations": 1}),
        ("new_rule_failure", "error", {"rule_id": "res", "rule_kind": "tool_result_required", "violations": 1}),
    ]


def test_partial_still_judges_safety_parts(tmp_path: Path, cli: Any) -> None:
    """§10.82: deny_tool is a safety kind; --partial does not soften it (what already happened is judged)."""
    rc, report = run_compare(tmp_path, cli, contract(DENY_X, version=2), [call("a")], [call("a"), call("x")],
                             "--partial", "--no-lint")
    assert rc == 1
    assert report["candidate"]["violations"][0]["status"] == "fail"
    assert [r["kind"] for r in report["regressions"]] == ["new_rule_failure", "new_tool"]


def test_rule_failing_in_both_with_different_codes_is_still_failing(tmp_path: Path, cli: Any) -> None:
    """§6 item 2 is per rule id, not per code: event_budget fails on tool_calls in the baseline and on
    tool_failures in the candidate (§10.1 codes) → contract_violation, baseline_also_failed true."""
    budget: Rule = {"id": "budget", "kind": "event_budget", "max_tool_calls": 1, "max_tool_failures": 0}
    rc, report = run_compare(tmp_path, cli, contract(budget), [call("a"), call("a")],
                             [call("a", "c1"), {"type": "tool.result", "call_id": "c1", "ok": False}])
    assert [v["code"] for v in report["baseline"]["violations"]] == ["event_budget.tool_calls"]
    assert [v["code"] for v in report["candidate"]["violations"]] == ["event_budget.tool_failures"]
    assert rc == 1
    assert core(report["regressions"]) == [("contract_violation", "error", {
        "rule_id": "budget", "rule_kind": "event_budget", "violations": 1, "baseline_also_failed": True})]


def test_v2_rule_failing_unresolved_then_mismatch_is_still_failing(tmp_path: Path, cli: Any) -> None:
    """Same corner in v2: baseline `args_missing` (unresolved), candidate `mismatch` (fail)."""
    rule: Rule = {"id": "args", "kind": "tool_args", "tool": "refund", "match": {"order": "A1"}}
    rc, report = run_compare(tmp_path, cli, contract(rule, version=2), [call("refund", "c1")],
                             [call("refund", "c1", args={"order": "A2"})])
    assert [v["code"] for v in report["candidate"]["violations"]] == ["tool_args.mismatch"]
    assert rc == 1
    assert [(r["kind"], r["evidence"]["baseline_also_failed"]) for r in report["regressions"]] == [
        ("contract_violation", True)]


# -- policy and the fixed order ----------------------------------------------------------------------


def test_regressions_follow_fixed_order(tmp_path: Path, cli: Any) -> None:
    """§6: new_rule_failure, then contract_violation, then new_tool, tool_call_increase,
    outcome_regression — whatever the contract order of the rules."""
    document = contract(DENY_Z, DENY_X, max_tool_call_increase_percent=0)
    rc, report = run_compare(tmp_path, cli, document, [call("z"), outcome("satisfied")],
                             [call("z"), call("x"), call("y"), outcome("violated")])
    assert rc == 1
    assert [r["kind"] for r in report["regressions"]] == [
        "new_rule_failure", "contract_violation", "new_tool", "new_tool", "tool_call_increase",
        "outcome_regression"]
    assert report["regressions"][0]["evidence"]["rule_id"] == "no-x"
    assert report["regressions"][1]["evidence"]["rule_id"] == "no-z"
    assert [r["evidence"] for r in report["regressions"][2:4]] == [{"tool": "x"}, {"tool": "y"}]


def test_fail_on_new_violations_false_only_relabels(tmp_path: Path, cli: Any) -> None:
    """§6 item 2 and §12.11: with the flag false a new failure is a contract_violation with
    baseline_also_failed false — still incompatible."""
    rc, report = run_compare(tmp_path, cli, contract(DENY_X, fail_on_new_violations=False, fail_on_new_tools=False),
                             [call("a")], [call("x")])
    assert rc == 1
    assert core(report["regressions"]) == [("contract_violation", "error", {
        "rule_id": "no-x", "rule_kind": "deny_tool", "violations": 1, "baseline_also_failed": False})]


def test_new_tools_sorted_and_policy_off(tmp_path: Path, cli: Any) -> None:
    """§6 item 3: each new name in sorted (UTF-16) order; `fail_on_new_tools: false` drops them."""
    rc, report = run_compare(tmp_path, cli, contract(DENY_X), [call("a")], [call("b"), call("a"), call("B")])
    assert rc == 1
    assert core(report["regressions"]) == [("new_tool", "error", {"tool": "B"}), ("new_tool", "error", {"tool": "b"})]
    rc, report = run_compare(tmp_path, cli, contract(DENY_X, fail_on_new_tools=False), [call("a")],
                             [call("b"), call("a")])
    assert (rc, report["regressions"]) == (0, [])


def test_tool_seen_only_in_result_is_not_new(tmp_path: Path, cli: Any) -> None:
    """§6 item 3 uses summary.tools; §5: results' tools are not included. A tool.result of a new
    tool, and a tool-less call, add no new_tool."""
    candidate = [call("a", "c1"), {"type": "tool.result", "tool": "mystery", "call_id": "c1", "ok": True},
                 {"type": "tool.call"}]
    rc, report = run_compare(tmp_path, cli, contract(DENY_X), [call("a")], candidate)
    assert report["candidate"]["summary"]["tools"] == ["a"]
    assert (rc, report["regressions"]) == (0, [])


def test_warning_rule_failing_in_candidate_is_not_a_regression(tmp_path: Path, cli: Any) -> None:
    """§6: warning-severity rule failures in the candidate are never regressions."""
    soft = {**DENY_X, "severity": "warning"}
    rc, report = run_compare(tmp_path, cli, contract(soft, fail_on_new_tools=False), [call("a")], [call("x")])
    assert report["candidate"]["warning_count"] == 1
    assert (rc, report["compatible"], report["regressions"]) == (0, True, [])


def test_warning_in_baseline_blocks_new_rule_failure_label(tmp_path: Path, cli: Any) -> None:
    """§12.12: baseline failure set includes warnings. A warning rule failing in the baseline and an
    error rule failing only in the candidate: only the error rule is new_rule_failure."""
    soft: Rule = {"id": "soft", "kind": "deny_tool", "tool": "kb.*", "severity": "warning"}
    rc, report = run_compare(tmp_path, cli, contract(soft, {"id": "closed", "kind": "tool_result_required"}),
                             [call("kb.s", "c0"), {"type": "tool.result", "call_id": "c0", "ok": True}],
                             [call("kb.s", "c0")])
    assert rc == 1
    assert core(report["regressions"]) == [("new_rule_failure", "error", {
        "rule_id": "closed", "rule_kind": "tool_result_required", "violations": 1})]


# -- tool_call_increase -----------------------------------------------------------------------------


@pytest.mark.parametrize(("b", "c", "limit"), [
    (2, 3, 50),       # exactly 50 % at a 50 % limit
    (8, 9, 12.5),     # exactly 12.5 %, a fractional limit
    (40, 41, 2.5),
    (0, 0, 0),        # b = 0 and c = 0 → increase 0
    (2, 2, 0),
    (4, 2, 0),        # a decrease
])
def test_increase_at_or_below_limit_passes(b: int, c: int, limit: float) -> None:
    """§6 item 4: regression iff increase > limit (equal passes); 0 when b = c = 0."""
    report = lib_compare(contract(DENY_X, max_tool_call_increase_percent=limit), calls(b), calls(c))
    assert [r["kind"] for r in report["regressions"]] == []


@pytest.mark.parametrize(("b", "c", "limit", "shown", "unrounded"), [
    (2, 3, 49.9, "50.0", 50),
    (16, 17, 6.2, "6.3", 6.25),       # toFixed tie rounds up (Python's %.1f gives 6.2)
    (400, 401, 0.2, "0.3", 0.25),     # another exact binary tie
    (3, 4, 33.3, "33.3", 100 / 3),
    (5, 6, 0, "20.0", 20),
])
def test_increase_above_limit(b: int, c: int, limit: float, shown: str, unrounded: float) -> None:
    """§6 item 4 and §13: message shows the increase with toFixed(1); evidence has the unrounded value."""
    report = lib_compare(contract(DENY_X, max_tool_call_increase_percent=limit), calls(b), calls(c))
    [regression] = report["regressions"]
    assert regression["kind"] == "tool_call_increase"
    assert regression["evidence"] == {"baseline": b, "candidate": c, "increase_percent": pytest.approx(unrounded)}
    assert f"increased by {shown}%" in regression["message"]


def test_increase_from_zero_calls_is_infinite(tmp_path: Path, cli: Any) -> None:
    """§6 item 4: +∞ if b = 0 < c, whatever the limit (even the maximum 100,000); evidence
    increase_percent null; message shows ∞ (§7.2 non-ASCII unescaped)."""
    put(tmp_path, "c.json", contract(DENY_X, max_tool_call_increase_percent=100000, fail_on_new_tools=False))
    put(tmp_path, "b.jsonl", [{"type": "run.start"}])
    put(tmp_path, "k.jsonl", [call("t")])
    result = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl", "--format", "json")
    assert result.returncode == 1
    assert "∞%" in result.stdout and "\\u221e" not in result.stdout
    [regression] = json.loads(result.stdout)["regressions"]
    assert (regression["kind"], regression["evidence"]) == (
        "tool_call_increase", {"baseline": 0, "candidate": 1, "increase_percent": None})


def test_integral_increase_printed_as_integer(tmp_path: Path, cli: Any) -> None:
    """§13: integral numbers print without `.0` (JS JSON): increase_percent 50, not 50.0."""
    put(tmp_path, "c.json", contract(DENY_X, max_tool_call_increase_percent=10))
    put(tmp_path, "b.jsonl", calls(2))
    put(tmp_path, "k.jsonl", calls(3))
    result = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl", "--format", "json")
    assert result.returncode == 1
    assert '"increase_percent": 50\n' in result.stdout or '"increase_percent": 50,' in result.stdout


def test_increase_not_checked_by_default() -> None:
    """§6: max_tool_call_increase_percent unset = not checked."""
    report = lib_compare(contract(DENY_X), calls(1), calls(50))
    assert report["regressions"] == []


@pytest.mark.parametrize("limit", [-1, 100000.5, "10"])
def test_increase_limit_out_of_range_is_exit_2(tmp_path: Path, cli: Any, limit: Any) -> None:
    """§6: the percent is a number 0..100,000; §7.5 invalid contract → exit 2, stdout empty."""
    put(tmp_path, "c.json", contract(DENY_X, max_tool_call_increase_percent=limit))
    put(tmp_path, "b.jsonl", calls(1))
    result = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "b.jsonl")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith("agent-invariants: ")


def test_unknown_policy_key_is_exit_2(tmp_path: Path, cli: Any) -> None:
    """§2.1/§6: the compare block rejects unknown keys."""
    put(tmp_path, "c.json", contract(DENY_X, fail_on_new_tool=True))
    put(tmp_path, "b.jsonl", calls(1))
    result = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "b.jsonl")
    assert (result.returncode, result.stdout) == (2, "")


# -- outcome "same or better" ---------------------------------------------------------------------

RANK = {None: -1, "violated": 0, "retracted": 1, "unknown": 2, "satisfied": 3}
VERDICTS = list(RANK)


@pytest.mark.parametrize("before", VERDICTS)
@pytest.mark.parametrize("after", VERDICTS)
def test_outcome_same_or_better_every_pair(before: str | None, after: str | None) -> None:
    """§6 item 5: ranks violated 0 < retracted 1 < unknown 2 < satisfied 3, none −1; regression iff
    candidate rank < baseline rank; evidence `{baseline, candidate}` raw, null allowed."""
    baseline = [outcome(before)] if before else []
    candidate = [outcome(after)] if after else []
    report = lib_compare(contract(DENY_X), baseline, candidate)
    expected = ([("outcome_regression", "error", {"baseline": before, "candidate": after})]
                if RANK[after] < RANK[before] else [])
    assert core(report["regressions"]) == expected


def test_last_outcome_without_verdict_counts_as_none() -> None:
    """§5: final_outcome is the verdict of the last outcome.observed, null when it has none (even if
    earlier ones had one); so satisfied → (satisfied, then no verdict) regresses to none."""
    report = lib_compare(contract(DENY_X), [outcome("satisfied")], [outcome("satisfied"), outcome(None)])
    assert report["candidate"]["summary"]["final_outcome"] is None
    assert core(report["regressions"]) == [("outcome_regression", "error", {"baseline": "satisfied",
                                                                            "candidate": None})]


def test_outcome_policy_off() -> None:
    """§6 item 5 applies only if require_same_outcome_or_better."""
    report = lib_compare(contract(DENY_X, require_same_outcome_or_better=False), [outcome("satisfied")],
                         [outcome("violated")])
    assert report["regressions"] == []


def test_outcome_regression_message(tmp_path: Path, cli: Any) -> None:
    """§6 item 5 message `Final outcome regressed from <b or none> to <c or none>.` (D6: may be reworded;
    the two values must still be named)."""
    rc, report = run_compare(tmp_path, cli, contract(DENY_X), [outcome("unknown")], [])
    [regression] = report["regressions"]
    assert rc == 1
    assert "from unknown to none" in regression["message"]


# -- lint, strict, max-violations, max-warnings ------------------------------------------------------

CONTRADICTION_V2: list[Rule] = [DENY_X, {"id": "need-x", "kind": "tool_calls", "tool": "x", "min": 1}]


def test_lint_error_refuses_v2_contract(tmp_path: Path, cli: Any) -> None:
    """§10.8: a lint error is reported like a contract error (`file: $.rules[i]: lint <code>: …`,
    exit 2, nothing on stdout) and compare behaves as check does."""
    put(tmp_path, "c.json", contract(*CONTRADICTION_V2, version=2))
    put(tmp_path, "b.jsonl", [call("a")])
    result = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "b.jsonl", "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("agent-invariants: c.json")
    assert " $.rules[1]: lint required_but_forbidden: " in lines[0]


def test_no_lint_compares_anyway(tmp_path: Path, cli: Any) -> None:
    """§10.8: `--no-lint` is accepted by compare; need-x then fails in both → contract_violation."""
    rc, report = run_compare(tmp_path, cli, contract(*CONTRADICTION_V2, version=2), [call("a")], [call("a")],
                             "--no-lint")
    assert rc == 1
    assert core(report["regressions"]) == [("contract_violation", "error", {
        "rule_id": "need-x", "rule_kind": "tool_calls", "violations": 1, "baseline_also_failed": True})]


def test_v1_contract_never_refused_by_lint(tmp_path: Path, cli: Any) -> None:
    """§4/§10.37: lint runs only on version-2 contracts inside check and compare (Node parity)."""
    need: Rule = {"id": "need-x", "kind": "require_event", "match": {"type": "tool.call", "tool": "x"}, "min": 1}
    rc, report = run_compare(tmp_path, cli, contract(DENY_X, need), [call("a")], [call("a")])
    assert rc == 1
    assert [r["kind"] for r in report["regressions"]] == ["contract_violation"]


def test_strict_empty_candidate_is_exit_2(tmp_path: Path, cli: Any) -> None:
    """README "No silent passes": with --strict an empty trace is bad input (exit 2, nothing on stdout)."""
    put(tmp_path, "c.json", contract(DENY_X))
    put(tmp_path, "b.jsonl", [call("a")])
    put(tmp_path, "k.jsonl", "")
    result = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl", "--strict")
    assert (result.returncode, result.stdout) == (2, "")
    relaxed = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl")
    assert relaxed.returncode == 0


def test_strict_rule_that_checked_nothing_fails_in_both(tmp_path: Path, cli: Any) -> None:
    """README: with --strict a rule that checked nothing fails with `<kind>.checked_nothing`; in
    both runs that is a contract_violation, not a new failure."""
    approval: Rule = {"id": "appr", "kind": "require_approval", "tool": "pay"}
    rc, report = run_compare(tmp_path, cli, contract(approval), [call("a")], [call("a")], "--strict")
    assert rc == 1
    assert [v["code"] for v in report["candidate"]["violations"]] == ["require_approval.checked_nothing"]
    assert core(report["regressions"]) == [("contract_violation", "error", {
        "rule_id": "appr", "rule_kind": "require_approval", "violations": 1, "baseline_also_failed": True})]


def test_max_violations_keeps_counts_in_regressions(tmp_path: Path, cli: Any) -> None:
    """README --max-violations / D7: a rule keeps its first N; compare's counts and regressions still
    count every violation; the report says how many were left out."""
    rc, report = run_compare(tmp_path, cli, contract(DENY_X), [call("x")], [call("x")] * 5,
                             "--max-violations", "2")
    candidate = report["candidate"]
    assert rc == 1
    assert (candidate["error_count"], len(candidate["violations"])) == (5, 2)
    assert (candidate["truncated"], candidate["violations_total"]) == (True, 5)
    assert (candidate["results"][0]["truncated"], candidate["results"][0]["violations_total"]) == (True, 5)
    assert core(report["regressions"]) == [("contract_violation", "error", {
        "rule_id": "no-x", "rule_kind": "deny_tool", "violations": 5, "baseline_also_failed": True})]


@pytest.mark.parametrize(("option", "value"), [("--max-violations", "-1"), ("--jobs", "0")])
def test_bad_numeric_option_is_exit_2(tmp_path: Path, cli: Any, option: str, value: str) -> None:
    """§7.5: bad usage → exit 2, stdout empty (--max-violations ≥ 0, --jobs ≥ 1 per --help)."""
    put(tmp_path, "c.json", contract(DENY_X))
    put(tmp_path, "b.jsonl", [call("a")])
    result = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "b.jsonl", option, value)
    assert (result.returncode, result.stdout) == (2, "")


def test_max_warnings_counts_candidate_warnings(tmp_path: Path, cli: Any) -> None:
    """README: `--max-warnings N` exits 1 when the report has more than N warning violations — for
    compare, the candidate's; a compatible compare can thus exit 1; the baseline's do not count."""
    soft = {**DENY_X, "severity": "warning"}
    put(tmp_path, "c.json", contract(soft))
    put(tmp_path, "few.jsonl", [call("x")])
    put(tmp_path, "many.jsonl", [call("x")] * 3)
    over = cli("compare", "-c", "c.json", "-b", "many.jsonl", "-k", "many.jsonl", "--max-warnings", "2")
    baseline_only = cli("compare", "-c", "c.json", "-b", "many.jsonl", "-k", "few.jsonl", "--max-warnings", "2")
    at_limit = cli("compare", "-c", "c.json", "-b", "few.jsonl", "-k", "many.jsonl", "--max-warnings", "3")
    assert (over.returncode, baseline_only.returncode, at_limit.returncode) == (1, 0, 0)


# -- unreadable input and load order -----------------------------------------------------------------


def test_unreadable_baseline_is_exit_2_nothing_printed(tmp_path: Path, cli: Any) -> None:
    """§7.5: an invalid trace → exit 2, one `agent-invariants:` line on stderr naming the file, stdout
    empty, no --output file written."""
    put(tmp_path, "c.json", contract(DENY_X))
    put(tmp_path, "b.jsonl", "not json\n")
    put(tmp_path, "k.jsonl", [call("a")])
    result = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl", "-o", "out.json")
    assert (result.returncode, result.stdout) == (2, "")
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("agent-invariants: b.jsonl:1")
    assert not (tmp_path / "out.json").exists()


def test_missing_baseline_file_is_exit_2(tmp_path: Path, cli: Any) -> None:
    """§7.5: unreadable trace → exit 2, stdout empty."""
    put(tmp_path, "c.json", contract(DENY_X))
    put(tmp_path, "k.jsonl", [call("a")])
    result = cli("compare", "-c", "c.json", "-b", "absent.jsonl", "-k", "k.jsonl")
    assert (result.returncode, result.stdout) == (2, "")
    assert "absent.jsonl" in result.stderr


def test_load_order_contract_then_baseline_then_candidate(tmp_path: Path, cli: Any) -> None:
    """§8: contract first, then baseline before candidate; the first error wins."""
    put(tmp_path, "c.json", contract(DENY_X))
    put(tmp_path, "bad-c.json", "{")
    put(tmp_path, "b.jsonl", "nope\n")
    put(tmp_path, "k.jsonl", "nope\n")
    both = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl")
    assert both.returncode == 2 and "b.jsonl" in both.stderr and "k.jsonl" not in both.stderr
    all_bad = cli("compare", "-c", "bad-c.json", "-b", "b.jsonl", "-k", "k.jsonl")
    assert all_bad.returncode == 2 and "bad-c.json" in all_bad.stderr and "b.jsonl" not in all_bad.stderr


def test_bad_seq_order_in_candidate_is_exit_2(tmp_path: Path, cli: Any) -> None:
    """§7.5: invalid trace (seq order) → exit 2 (both traces are fully checked, §6)."""
    put(tmp_path, "c.json", contract(DENY_X))
    put(tmp_path, "b.jsonl", [call("a")])
    put(tmp_path, "k.jsonl", '{"seq":2,"type":"x"}\n{"seq":1,"type":"x"}\n')
    result = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl")
    assert (result.returncode, result.stdout) == (2, "")
    assert "k.jsonl:2" in result.stderr


# -- batch compare: folders, globs, pairing ------------------------------------------------------------


def batch_tree(tmp_path: Path) -> None:
    put(tmp_path, "c.json", contract(DENY_X))
    put(tmp_path, "base/one.jsonl", [call("a")])
    put(tmp_path, "base/sub/two.jsonl", [call("a")])
    put(tmp_path, "cand/one.jsonl", [call("a")])
    put(tmp_path, "cand/sub/two.jsonl", [call("x")])


def pairs_of(report: Report) -> list[tuple[str, str, bool]]:
    return [(r["baseline"]["trace"], r["candidate"]["trace"], r["compatible"]) for r in report["reports"]]


def test_folders_pair_by_relative_path(tmp_path: Path, cli: Any) -> None:
    """README "Many traces at once": folders pair by the path inside the folder; one section per pair;
    the worst exit wins (1)."""
    batch_tree(tmp_path)
    result = cli("compare", "-c", "c.json", "-b", "base", "-k", "cand", "--format", "json")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["schema"] == "agent-invariants/compare-batch/v1"
    assert (report["compatible"], report["failures"]) == (False, [])
    assert pairs_of(report) == [("base/one.jsonl", "cand/one.jsonl", True),
                                ("base/sub/two.jsonl", "cand/sub/two.jsonl", False)]
    assert [r["kind"] for r in report["reports"][1]["regressions"]] == ["new_rule_failure", "new_tool"]


def test_all_pairs_compatible_exit_0(tmp_path: Path, cli: Any) -> None:
    """README batch: the overall verdict is compatible and exit 0 when every pair is."""
    batch_tree(tmp_path)
    result = cli("compare", "-c", "c.json", "-b", "base", "-k", "base", "--format", "json")
    assert result.returncode == 0
    assert json.loads(result.stdout)["compatible"] is True


def test_candidate_without_baseline_is_exit_2(tmp_path: Path, cli: Any) -> None:
    """README: a candidate without a baseline of its name is an error (exit 2)."""
    batch_tree(tmp_path)
    put(tmp_path, "cand/three.jsonl", [call("a")])
    result = cli("compare", "-c", "c.json", "-b", "base", "-k", "cand", "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")
    assert "three.jsonl" in result.stderr


def test_nested_candidate_does_not_pair_by_bare_name_across_folders(tmp_path: Path, cli: Any) -> None:
    """README: folders pair by the path inside the folder, so cand/sub/one.jsonl does not pair with
    base/one.jsonl."""
    put(tmp_path, "c.json", contract(DENY_X))
    put(tmp_path, "base/one.jsonl", [call("a")])
    put(tmp_path, "cand/sub/one.jsonl", [call("a")])
    result = cli("compare", "-c", "c.json", "-b", "base", "-k", "cand", "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")


def test_baseline_without_candidate_is_ignored(tmp_path: Path, cli: Any) -> None:
    """Spec silent on a baseline without a candidate (README names only the other way as an error):
    the product compares the pairs that exist; a reasonable reading."""
    batch_tree(tmp_path)
    put(tmp_path, "only/one.jsonl", [call("a")])
    result = cli("compare", "-c", "c.json", "-b", "base", "-k", "only", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert pairs_of(json.loads(result.stdout)) == [("base/one.jsonl", "only/one.jsonl", True)]


def test_one_baseline_file_against_a_folder(tmp_path: Path, cli: Any) -> None:
    """README: one baseline goes with every candidate."""
    batch_tree(tmp_path)
    result = cli("compare", "-c", "c.json", "-b", "base/one.jsonl", "-k", "cand", "--format", "json")
    assert result.returncode == 1
    assert pairs_of(json.loads(result.stdout)) == [("base/one.jsonl", "cand/one.jsonl", True),
                                                   ("base/one.jsonl", "cand/sub/two.jsonl", False)]


def test_two_baselines_of_one_name_is_exit_2(tmp_path: Path, cli: Any) -> None:
    """README: globs pair by file name; two baselines of one name is an error (exit 2)."""
    put(tmp_path, "c.json", contract(DENY_X))
    put(tmp_path, "g/one.jsonl", [call("a")])
    put(tmp_path, "g/x/one.jsonl", [call("a")])
    put(tmp_path, "k/one.jsonl", [call("a")])
    result = cli("compare", "-c", "c.json", "-b", "g/**/*.jsonl", "-k", "k/one.jsonl", "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")


def test_globs_pair_by_file_name(tmp_path: Path, cli: Any) -> None:
    """README: for globs the pairing key is the file name."""
    put(tmp_path, "c.json", contract(DENY_X))
    put(tmp_path, "old/a.jsonl", [call("a")])
    put(tmp_path, "old/b.jsonl", [call("a")])
    put(tmp_path, "new/b.jsonl", [call("x")])
    put(tmp_path, "new/a.jsonl", [call("a")])
    result = cli("compare", "-c", "c.json", "-b", "old/*.jsonl", "-k", "new/*.jsonl", "--format", "json")
    assert result.returncode == 1
    assert pairs_of(json.loads(result.stdout)) == [("old/a.jsonl", "new/a.jsonl", True),
                                                   ("old/b.jsonl", "new/b.jsonl", False)]


def test_unreadable_baseline_in_batch_lists_failure(tmp_path: Path, cli: Any) -> None:
    """README: a trace that cannot be read is listed under failures and reported on stderr without
    stopping the others; exit 2 wins; the report of the others is on stdout."""
    put(tmp_path, "c.json", contract(DENY_X))
    put(tmp_path, "base/one.jsonl", [call("a")])
    put(tmp_path, "base/two.jsonl", "nope\n")
    put(tmp_path, "cand/one.jsonl", [call("a")])
    put(tmp_path, "cand/two.jsonl", [call("a")])
    result = cli("compare", "-c", "c.json", "-b", "base", "-k", "cand", "--format", "json")
    assert result.returncode == 2
    report = json.loads(result.stdout)
    assert pairs_of(report) == [("base/one.jsonl", "cand/one.jsonl", True)]
    assert len(report["failures"]) == 1 and "base/two.jsonl" in report["failures"][0]["error"]
    assert report["compatible"] is False
    assert "base/two.jsonl:1" in result.stderr


def test_batch_is_deterministic_across_jobs(tmp_path: Path, cli: Any) -> None:
    """README: traces are checked in parallel, each exactly as a single run would; the report is in
    the order named whatever --jobs is."""
    batch_tree(tmp_path)
    for i in range(4):
        put(tmp_path, f"base/m{i}.jsonl", [call("a"), outcome("satisfied")])
        put(tmp_path, f"cand/m{i}.jsonl", [call("a"), call("x" if i % 2 else "a"), outcome("violated")])
    args = ("compare", "-c", "c.json", "-b", "base", "-k", "cand", "--format", "json")
    one, many = cli(*args, "--jobs", "1"), cli(*args, "--jobs", "4")
    assert one.returncode == many.returncode == 1
    assert one.stdout == many.stdout


# -- output formats on one regression, determinism -----------------------------------------------------


def one_regression(tmp_path: Path) -> None:
    """Only a new tool `b` (candidate line 2)."""
    put(tmp_path, "c.json", contract(DENY_X))
    put(tmp_path, "b.jsonl", [call("a")])
    put(tmp_path, "k.jsonl", [call("a"), call("b")])


def fmt(cli: Any, name: str) -> tuple[int, str]:
    result = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl", "--format", name)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, result.stdout


def test_text_format_on_one_regression(tmp_path: Path, cli: Any) -> None:
    """§7.1 (layout is our own design, D1): `REGRESSION  <name>` first, `✗ <kind>: <message>` per
    regression, no "No configured … regression" line; output ends with a newline; exit 1."""
    one_regression(tmp_path)
    rc, out = fmt(cli, "text")
    lines = out.splitlines()
    assert rc == 1 and lines[0] == "REGRESSION  spec" and out.endswith("\n")
    assert [line for line in lines if line.startswith("✗ ")] == [
        next(line for line in lines if line.startswith("✗ new_tool: Candidate introduced tool: b"))]
    assert "No configured" not in out


def test_text_format_compatible(tmp_path: Path, cli: Any) -> None:
    """§7.1: `COMPATIBLE  <name>` and the ✓ line only when there are no regressions; exit 0."""
    one_regression(tmp_path)
    result = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "b.jsonl")
    lines = result.stdout.splitlines()
    assert result.returncode == 0 and lines[0] == "COMPATIBLE  spec"
    assert any(line.startswith("✓ No configured behavio") for line in lines)


def test_pretty_is_text(tmp_path: Path, cli: Any) -> None:
    """README: `pretty` is an alias of `text` (the Node default format)."""
    one_regression(tmp_path)
    assert fmt(cli, "pretty") == fmt(cli, "text")


def test_junit_format_on_one_regression(tmp_path: Path, cli: Any) -> None:
    """§7.3/D1 and README: JUnit XML; for compare a regressions suite comes first, with one failing
    testcase for the regression."""
    one_regression(tmp_path)
    rc, out = fmt(cli, "junit")
    assert rc == 1
    root = ET.fromstring(out)
    suites = list(root.iter("testsuite"))
    failures = [f for f in suites[0].iter("failure")]
    assert len(failures) == 1 and "Candidate introduced tool: b" in (failures[0].get("message") or "")
    assert sum(len(list(s.iter("failure"))) for s in suites) == 1


def test_sarif_format_on_one_regression(tmp_path: Path, cli: Any) -> None:
    """§7.4/D1 and README: SARIF 2.1.0; each regression is one error result located at the candidate
    event behind it (a new tool's first call: line 2), baselineState `new`."""
    one_regression(tmp_path)
    rc, out = fmt(cli, "sarif")
    log = json.loads(out)
    assert rc == 1 and log["version"] == "2.1.0"
    [result] = log["runs"][0]["results"]
    assert result["level"] == "error" and result["baselineState"] == "new"
    [location] = result["locations"]
    assert location["physicalLocation"]["artifactLocation"]["uri"] == "k.jsonl"
    assert location["physicalLocation"]["region"]["startLine"] == 2


def test_sarif_contract_violation_is_unchanged(tmp_path: Path, cli: Any) -> None:
    """README: a regression's baselineState is `new` or `unchanged` (a rule failing in both)."""
    put(tmp_path, "c.json", contract(DENY_X))
    put(tmp_path, "b.jsonl", [call("a"), call("x")])
    put(tmp_path, "k.jsonl", [call("a"), call("a"), call("x")])
    rc, out = fmt(cli, "sarif")
    results = json.loads(out)["runs"][0]["results"]
    regression = [r for r in results if "baselineState" in r]
    assert rc == 1 and [r["baselineState"] for r in regression] == ["unchanged"]
    assert regression[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 3


def test_markdown_format_on_one_regression(tmp_path: Path, cli: Any) -> None:
    """README: Markdown gives the verdict and, for compare, the regressions and the per-rule table."""
    one_regression(tmp_path)
    rc, out = fmt(cli, "markdown")
    assert rc == 1 and out.startswith("## ❌")
    regression_lines = [line for line in out.splitlines() if "new_tool" in line]
    assert len(regression_lines) == 1 and "Candidate introduced tool: b" in regression_lines[0]
    assert "| `no-x` |" in out


def test_json_format_on_one_regression(tmp_path: Path, cli: Any) -> None:
    """§7.2: 2-space JSON plus newline, exactly one regression."""
    one_regression(tmp_path)
    rc, out = fmt(cli, "json")
    assert rc == 1 and out.endswith("}\n") and out.startswith('{\n  "schema"')
    assert core(json.loads(out)["regressions"]) == [("new_tool", "error", {"tool": "b"})]


@pytest.mark.parametrize("name", ["text", "json", "junit", "sarif", "markdown"])
def test_every_format_is_deterministic(tmp_path: Path, cli: Any, name: str) -> None:
    """Determinism: the same inputs give byte-identical output, exit code included."""
    one_regression(tmp_path)
    assert fmt(cli, name) == fmt(cli, name)


def test_output_file_gets_report_and_stdout_is_empty(tmp_path: Path, cli: Any) -> None:
    """§8: `--output O` writes the report to O, then nothing on stdout; exit code unchanged."""
    one_regression(tmp_path)
    result = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl", "-f", "json", "-o", "r.json")
    assert (result.returncode, result.stdout) == (1, "")
    assert json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["compatible"] is False


def test_bad_format_is_exit_2(tmp_path: Path, cli: Any) -> None:
    """§7.5: bad --format → exit 2, stdout empty."""
    one_regression(tmp_path)
    result = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl", "--format", "yaml")
    assert (result.returncode, result.stdout) == (2, "")


def test_library_matches_cli(tmp_path: Path, cli: Any) -> None:
    """README "The library": compare_traces gives the CLI's verdict and regressions."""
    one_regression(tmp_path)
    rc, out = fmt(cli, "json")
    report = lib_compare(contract(DENY_X), [call("a")], [call("a"), call("b")])
    assert (report["compatible"], core(report["regressions"])) == (False, core(json.loads(out)["regressions"]))


def test_strict_misspelt_type_in_candidate_is_exit_2(tmp_path: Path, cli: Any) -> None:
    """README "No silent passes": with --strict a misspelt event type makes the trace bad input (exit 2);
    without it only a warning on stderr."""
    approval: Rule = {"id": "appr", "kind": "require_approval", "tool": "pay"}
    put(tmp_path, "c.json", contract(approval))
    put(tmp_path, "b.jsonl", [call("pay"), {"type": "approval.granted", "tool": "pay"}])
    put(tmp_path, "k.jsonl", [{"type": "Tool.Call", "tool": "pay"}])
    strict = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl", "--strict")
    relaxed = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl")
    assert (strict.returncode, strict.stdout) == (2, "")
    assert "Tool.Call" in strict.stderr and "k.jsonl:1" in strict.stderr
    assert relaxed.returncode == 0 and "warning" in relaxed.stderr


def big_baseline(tmp_path: Path, name: str, bad_tail: bool = False) -> None:
    """A baseline over 8 MiB (README: checked in a second process under --jobs)."""
    pad = "p" * 150
    lines = [json.dumps({"seq": i + 1, "type": "tool.call", "tool": "a", "data": {"p": pad}}) for i in range(50_000)]
    if bad_tail:
        lines.append('{"seq": 1, "type": "x"}')
    put(tmp_path, name, "\n".join(lines) + "\n")


def test_large_baseline_report_same_under_jobs(tmp_path: Path, cli: Any) -> None:
    """README: a single compare with a large baseline uses --jobs; the report is that of one process."""
    put(tmp_path, "c.json", contract(DENY_X, max_tool_call_increase_percent=0))
    big_baseline(tmp_path, "b.jsonl")
    put(tmp_path, "k.jsonl", [call("x")])
    args = ("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl", "--format", "json")
    one, two = cli(*args, "--jobs", "1"), cli(*args, "--jobs", "2")
    assert one.returncode == two.returncode == 1
    assert one.stdout == two.stdout
    assert [r["kind"] for r in json.loads(one.stdout)["regressions"]] == ["new_rule_failure", "new_tool"]


def test_large_bad_baseline_error_wins_under_jobs(tmp_path: Path, cli: Any) -> None:
    """README: under --jobs the error when a trace is bad is that of one process; §8: the baseline is
    loaded before the candidate, so its error wins over a missing candidate."""
    put(tmp_path, "c.json", contract(DENY_X))
    big_baseline(tmp_path, "b.jsonl", bad_tail=True)
    args = ("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "absent.jsonl")
    one, two = cli(*args, "--jobs", "1"), cli(*args, "--jobs", "2")
    assert (one.returncode, one.stdout, two.returncode, two.stdout) == (2, "", 2, "")
    assert one.stderr == two.stderr
    assert one.stderr.startswith("agent-invariants: b.jsonl:50001")
