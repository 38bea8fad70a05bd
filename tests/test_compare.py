"""Compare (spec §6): every regression policy, their order, and the per-rule change list."""
from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from agent_invariants import TraceError, check_trace, compare_reports, compare_traces, load_contract, read_trace
from agent_invariants._js import JSNumber

from support import contract, events, jsonl

ASTRAL = "b\U0001F600"     # UTF-16: 0062 D83D DE00
HIGH_BMP = "b\uff01"       # UTF-16: 0062 FF01  (sorts after ASTRAL by code units, before it by code points)


def calls(*tools: str | None, **extra: Any) -> list[dict[str, Any]]:
    """Events: one tool.call (closed by a tool.result) per tool; None gives a tool-less call."""
    specs: list[dict[str, Any]] = []
    for i, tool in enumerate(tools):
        call = {"type": "tool.call", "call_id": f"c{i}"}
        if tool is not None:
            call["tool"] = tool
        specs.append(call)
        specs.append({"type": "tool.result", "call_id": f"c{i}", "ok": True})
    return events(*specs, **extra)


def outcome_trace(verdict: str | None, tools: tuple[str, ...] = ("kb.search",)) -> list[dict[str, Any]]:
    """A trace ending with an outcome of `verdict`, or with no outcome event when None."""
    specs: list[dict[str, Any]] = [{"type": "run.start"}]
    for i, tool in enumerate(tools):
        specs.append({"type": "tool.call", "tool": tool, "call_id": f"c{i}"})
    if verdict is not None:
        specs.append({"type": "outcome.observed", "outcome_id": "o", "verdict": verdict,
                      "evidence_class": "externally_observed"})
    return events(*specs)


def kinds(report: Any) -> list[str]:
    return [r.kind for r in report.regressions]


def as_json(report: Any) -> dict[str, Any]:
    return json.loads(msgspec.json.encode(report))


NO_SHELL = {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}


# --- report shape --------------------------------------------------------------------------------

def test_identical_passing_traces_are_compatible():
    trace = outcome_trace("satisfied")
    report = compare_traces(contract(NO_SHELL), trace, trace)
    assert report.compatible is True
    assert report.regressions == []
    assert report.schema == "agent-invariants/compare/v1"
    assert report.contract.name == "test-contract" and report.contract.version == 1
    assert report.baseline.summary.events == report.candidate.summary.events == len(trace)
    assert report.baseline.schema == "agent-invariants/check/v1"


def test_baseline_and_candidate_are_full_check_reports():
    rules = contract(NO_SHELL)
    baseline, candidate = calls("kb.search"), calls("shell.exec")
    report = compare_traces(rules, baseline, candidate)
    strip = lambda r: {k: v for k, v in msgspec.to_builtins(r).items() if k != "trace"}  # noqa: E731
    assert strip(report.baseline) == strip(check_trace(rules, baseline))
    assert strip(report.candidate) == strip(check_trace(rules, candidate))


def test_compare_accepts_paths_and_bytes(tmp_path):
    rules = contract(NO_SHELL)
    base_path = tmp_path / "b.jsonl"
    base_path.write_text(jsonl(calls("kb.search")), encoding="utf-8")
    report = compare_traces(rules, base_path, jsonl(calls("kb.search", "shell.exec")).encode())
    assert kinds(report) == ["new_rule_failure", "new_tool"]
    assert report.compatible is False


def test_every_regression_is_an_error():
    report = compare_traces(
        contract(NO_SHELL, compare={"max_tool_call_increase_percent": 0}),
        outcome_trace("satisfied", ("kb.search",)),
        outcome_trace("violated", ("kb.search", "shell.exec")))
    assert len(report.regressions) == 4
    assert {r.severity for r in report.regressions} == {"error"}
    assert report.compatible is False


# --- order and labels of rule regressions ---------------------------------------------------------

RULES_FOUR = contract(
    {"id": "r1", "kind": "deny_tool", "tool": "one"},
    {"id": "r2", "kind": "deny_tool", "tool": "two"},
    {"id": "r3", "kind": "deny_tool", "tool": "three"},
    {"id": "r4", "kind": "deny_tool", "tool": "four"},
    compare={"fail_on_new_tools": False},
)


def test_order_new_rule_failures_first_then_contract_violations_in_contract_order():
    # r1, r3 fail in both; r2, r4 fail only in the candidate.
    baseline = calls("one", "three")
    candidate = calls("one", "two", "three", "four", "four")
    report = compare_traces(RULES_FOUR, baseline, candidate)
    assert [(r.kind, r.evidence["rule_id"]) for r in report.regressions] == [
        ("new_rule_failure", "r2"), ("new_rule_failure", "r4"),
        ("contract_violation", "r1"), ("contract_violation", "r3"),
    ]
    by_rule = {r.evidence["rule_id"]: r for r in report.regressions}
    assert by_rule["r2"].evidence == {"rule_id": "r2", "rule_kind": "deny_tool", "violations": 1}
    assert by_rule["r4"].evidence == {"rule_id": "r4", "rule_kind": "deny_tool", "violations": 2}
    assert by_rule["r1"].evidence == {"rule_id": "r1", "rule_kind": "deny_tool", "violations": 1,
                                      "baseline_also_failed": True}
    assert "r2" in by_rule["r2"].message and "r1" in by_rule["r1"].message
    assert report.compatible is False


def test_full_order_of_all_five_kinds():
    rules = contract(
        {"id": "old", "kind": "deny_tool", "tool": "old.*"},
        {"id": "fresh", "kind": "deny_tool", "tool": "fresh.*"},
        compare={"max_tool_call_increase_percent": 10})
    baseline = outcome_trace("satisfied", ("old.a",))
    candidate = outcome_trace("unknown", ("old.a", "fresh.b", "zeta", "alpha"))
    report = compare_traces(rules, baseline, candidate)
    assert kinds(report) == ["new_rule_failure", "contract_violation", "new_tool", "new_tool", "new_tool",
                             "tool_call_increase", "outcome_regression"]
    assert [r.evidence["tool"] for r in report.regressions if r.kind == "new_tool"] == ["alpha", "fresh.b", "zeta"]


def test_violation_present_in_both_runs_is_a_contract_violation():
    trace = calls("shell.exec")
    report = compare_traces(contract(NO_SHELL), trace, trace)
    assert kinds(report) == ["contract_violation"]
    assert report.regressions[0].evidence == {"rule_id": "no-shell", "rule_kind": "deny_tool", "violations": 1,
                                              "baseline_also_failed": True}
    assert report.compatible is False


def test_fixed_rule_is_not_a_regression():
    report = compare_traces(contract(NO_SHELL), calls("shell.exec", "kb.search"), calls("kb.search"))
    assert report.baseline.passed is False and report.candidate.passed is True
    assert report.regressions == [] and report.compatible is True


def test_fail_on_new_violations_false_only_relabels():
    rules = dict(RULES_FOUR, compare={"fail_on_new_violations": False, "fail_on_new_tools": False})
    report = compare_traces(rules, calls("one", "three"), calls("one", "two", "three", "four"))
    assert [(r.kind, r.evidence["rule_id"], r.evidence["baseline_also_failed"]) for r in report.regressions] == [
        ("contract_violation", "r1", True), ("contract_violation", "r2", False),
        ("contract_violation", "r3", True), ("contract_violation", "r4", False),
    ]
    assert report.compatible is False


def test_fail_on_new_violations_false_single_new_failure_still_blocks():
    rules = contract({"id": "closed", "kind": "tool_result_required"}, compare={"fail_on_new_violations": False})
    baseline = events({"type": "tool.call", "tool": "kb", "call_id": "c1"},
                      {"type": "tool.result", "call_id": "c1", "ok": True})
    candidate = events({"type": "tool.call", "tool": "kb", "call_id": "c1"})
    report = compare_traces(rules, baseline, candidate)
    assert kinds(report) == ["contract_violation"]
    assert report.regressions[0].evidence == {"rule_id": "closed", "rule_kind": "tool_result_required",
                                              "violations": 1, "baseline_also_failed": False}
    assert report.compatible is False


def test_fail_on_new_violations_true_explicitly_is_the_default():
    explicit = compare_traces(dict(RULES_FOUR, compare={"fail_on_new_violations": True, "fail_on_new_tools": False}),
                              calls("one"), calls("one", "two"))
    default = compare_traces(RULES_FOUR, calls("one"), calls("one", "two"))
    assert kinds(explicit) == kinds(default) == ["new_rule_failure", "contract_violation"]


# --- warnings ------------------------------------------------------------------------------------

def test_warning_rule_failing_in_candidate_never_regresses():
    rules = contract(dict(NO_SHELL, severity="warning"))
    report = compare_traces(rules, calls("shell.a"), calls("shell.a"))
    assert report.regressions == [] and report.compatible is True
    report = compare_traces(rules, calls("kb"), calls("kb", "shell.a"))
    assert kinds(report) == ["new_tool"]
    report = compare_traces(dict(rules, compare={"fail_on_new_tools": False}), calls("kb"), calls("kb", "shell.a"))
    assert report.regressions == [] and report.compatible is True
    assert report.candidate.warning_count == 1 and report.candidate.passed


def test_warning_rule_never_regresses_with_fail_on_new_violations_false():
    rules = contract(dict(NO_SHELL, severity="warning"), compare={"fail_on_new_violations": False})
    report = compare_traces(rules, calls("shell.a"), calls("shell.a"))
    assert report.regressions == [] and report.compatible is True


def test_baseline_failing_only_a_warning_rule_then_candidate_fails_an_error_rule():
    rules = contract({"id": "soft", "kind": "deny_tool", "tool": "kb.*", "severity": "warning"},
                     {"id": "closed", "kind": "tool_result_required"})
    baseline = events({"type": "tool.call", "tool": "kb.search", "call_id": "c0"},
                      {"type": "tool.result", "tool": "kb.search", "call_id": "c0", "ok": True})
    candidate = events({"type": "tool.call", "tool": "kb.search", "call_id": "c0"})
    report = compare_traces(rules, baseline, candidate)
    assert kinds(report) == ["new_rule_failure"]
    assert report.regressions[0].evidence == {"rule_id": "closed", "rule_kind": "tool_result_required",
                                              "violations": 1}


def test_baseline_warning_failure_counts_as_a_baseline_failure():
    # The same rule id fails as a warning in the baseline report and as an error in the candidate
    # report: the baseline failure set includes warnings, so it is not a *new* failure.
    warn = load_contract(contract(dict(NO_SHELL, severity="warning")))
    error = load_contract(contract(NO_SHELL))
    trace = calls("shell.exec")
    report = compare_reports(error, check_trace(warn, trace), check_trace(error, trace))
    assert kinds(report) == ["contract_violation"]
    assert report.regressions[0].evidence["baseline_also_failed"] is True
    # whereas a baseline in which the rule passed makes it a new failure
    report = compare_reports(error, check_trace(warn, calls("kb")), check_trace(error, trace))
    assert kinds(report) == ["new_rule_failure", "new_tool"]


# --- new tools -----------------------------------------------------------------------------------

def test_new_tool_regression():
    report = compare_traces(contract(NO_SHELL), calls("crm.lookup", "kb.search"), calls("crm.lookup", "web.browse"))
    assert kinds(report) == ["new_tool"]
    assert report.regressions[0].evidence == {"tool": "web.browse"}
    assert "web.browse" in report.regressions[0].message
    assert report.compatible is False


@pytest.mark.parametrize("seq", [7, 2**53, 2**54 - 2**11, 2**54, 2**60, 2.0**60, 2.0**70])
def test_new_tool_regression_points_at_the_first_call_of_the_tool(seq):
    """At its seq as the trace reads it (past 2**53, the double JavaScript reads), whatever its size."""
    candidate = [{"seq": 1, "type": "tool.call", "tool": "crm.lookup"},
                 {"seq": 3, "type": "agent.message"},
                 {"seq": seq, "type": "tool.call", "tool": "web.browse"},
                 {"seq": seq * 2, "type": "tool.call", "tool": "web.browse"}]
    report = compare_traces(contract(NO_SHELL), calls("crm.lookup"), candidate)
    (regression,) = report.regressions
    read = read_trace(msgspec.json.encode(candidate))[2].seq
    assert read == seq
    assert (regression.event_seq, regression.event_index) == (read, 2)
    assert type(regression.event_seq) is type(read)


def test_each_new_tool_regression_points_at_the_first_call_of_its_tool_whatever_the_gaps():
    """The first calls of some tools follow one another seq by seq, others come after gaps, after
    an event without a tool, or past 2**53: each regression names its tool's first call."""
    events: list[tuple[Any, str | None]] = [(5, "a"), (6, "b"), (7, "b"), (9, "c"), (10, "d"), (11, None),
                                            (12, "e"), (13, "c"), (14, "f"), (2**60, "g"), (2.0**70, "h")]
    candidate = [{"seq": seq, "type": "tool.call", **({} if tool is None else {"tool": tool})} for seq, tool in events]
    report = compare_traces(contract(NO_SHELL), calls("a"), candidate)
    first = {tool: (seq, index) for index, (seq, tool) in reversed(list(enumerate(events))) if tool is not None}
    assert {regression.evidence["tool"]: (regression.event_seq, regression.event_index)
            for regression in report.regressions} == {tool: first[tool] for tool in "bcdefgh"}
    # (a seq past 2**53 read as a float is the reader's JSNumber, a float written as JSON.stringify writes it)
    assert [type(regression.event_seq) for regression in report.regressions][-2:] == [int, JSNumber]


def test_new_tool_message_names_the_policy_key():
    report = compare_traces(contract(NO_SHELL), calls("kb.search"), calls("kb.search", "web.browse"))
    assert [r.message for r in report.regressions] == [
        "Candidate introduced tool: web.browse, which the baseline never called (policy fail_on_new_tools)."]


def test_dropping_a_tool_is_not_a_regression():
    report = compare_traces(contract(NO_SHELL), calls("a", "b"), calls("a"))
    assert report.regressions == []


def test_new_tools_are_sorted_by_utf16_code_units():
    baseline = calls("a")
    candidate = calls("z", HIGH_BMP, "a", "c", ASTRAL, "B")
    report = compare_traces(contract(NO_SHELL), baseline, candidate)
    new = [r.evidence["tool"] for r in report.regressions]
    assert new == ["B", ASTRAL, HIGH_BMP, "c", "z"]
    assert sorted([ASTRAL, HIGH_BMP]) == [HIGH_BMP, ASTRAL]   # Python's own order differs
    assert report.candidate.summary.tools == ["B", "a", ASTRAL, HIGH_BMP, "c", "z"]


def test_each_new_tool_is_reported_once():
    report = compare_traces(contract(NO_SHELL), calls("a"), calls("n", "n", "a", "n"))
    assert [r.evidence for r in report.regressions] == [{"tool": "n"}]


def test_tools_seen_only_in_tool_results_do_not_count():
    baseline = calls("kb")
    candidate = events({"type": "tool.call", "tool": "kb", "call_id": "c0"},
                       {"type": "tool.result", "tool": "brand.new", "call_id": "c0", "ok": True},
                       {"type": "tool.result", "tool": "orphan.tool", "call_id": "zz", "ok": False})
    report = compare_traces(contract(NO_SHELL), baseline, candidate)
    assert report.regressions == []
    assert report.candidate.summary.tools == ["kb"]


def test_baseline_tool_only_in_a_result_does_not_excuse_a_candidate_call():
    baseline = events({"type": "tool.call", "tool": "kb", "call_id": "c0"},
                      {"type": "tool.result", "tool": "web", "call_id": "c0", "ok": True})
    report = compare_traces(contract(NO_SHELL), baseline, calls("kb", "web"))
    assert kinds(report) == ["new_tool"] and report.regressions[0].evidence == {"tool": "web"}


def test_tool_less_calls_add_no_tool():
    report = compare_traces(contract(NO_SHELL), calls("kb"), calls("kb", None))
    assert report.regressions == []


def test_tool_names_are_compared_exactly():
    report = compare_traces(contract(NO_SHELL), calls("kb"), calls("KB", "kb "))
    assert [r.evidence["tool"] for r in report.regressions] == ["KB", "kb "]


def test_fail_on_new_tools_false():
    report = compare_traces(contract(NO_SHELL, compare={"fail_on_new_tools": False}), calls("a"), calls("a", "b"))
    assert report.regressions == [] and report.compatible is True


# --- tool call inflation -------------------------------------------------------------------------

def inflation(before: int, after: int, limit: float) -> Any:
    rules = contract(NO_SHELL, compare={"max_tool_call_increase_percent": limit, "fail_on_new_tools": False})
    return compare_traces(rules, calls(*["kb"] * before), calls(*["kb"] * after))


def test_inflation_not_checked_by_default():
    report = compare_traces(contract(NO_SHELL), calls("kb"), calls(*["kb"] * 50))
    assert report.regressions == []


def test_inflation_equal_to_the_limit_passes():
    assert inflation(2, 3, 50).regressions == []
    assert inflation(16, 20, 25).regressions == []
    assert inflation(4, 4, 0).regressions == []


def test_inflation_just_over_the_limit_regresses():
    report = inflation(2, 3, 49.99)
    assert kinds(report) == ["tool_call_increase"]
    assert report.regressions[0].evidence == {"baseline": 2, "candidate": 3, "increase_percent": 50}
    assert report.compatible is False


def test_inflation_message_gives_the_counts_and_names_the_policy_key():
    assert [r.message for r in inflation(4, 7, 50).regressions] == [
        "Tool calls increased by 75.0%, from 4 to 7; allowed 50% (policy max_tool_call_increase_percent)."]
    assert [r.message for r in inflation(0, 2, 12.5).regressions] == [
        "Tool calls increased by ∞%, from 0 to 2; allowed 12.5% (policy max_tool_call_increase_percent)."]


def test_inflation_from_zero_to_zero_is_no_increase():
    assert inflation(0, 0, 0).regressions == []


@pytest.mark.parametrize("limit", [0, 100, 100_000])
def test_inflation_from_zero_to_nonzero_is_infinite(limit):
    report = inflation(0, 1, limit)
    assert kinds(report) == ["tool_call_increase"]
    (regression,) = report.regressions
    assert regression.evidence == {"baseline": 0, "candidate": 1, "increase_percent": None}
    assert "∞" in regression.message
    assert "inf" not in regression.message.lower().replace("∞", "")
    assert as_json(report)["regressions"][0]["evidence"]["increase_percent"] is None


def test_decrease_is_never_inflation():
    assert inflation(5, 1, 0).regressions == []
    assert inflation(5, 0, 0).regressions == []


@pytest.mark.parametrize("before, after, shown, hidden", [
    (16, 17, "6.3", "6.2"),       # 6.25: JS toFixed rounds the tie up, Python's %.1f gives 6.2
    (16, 21, "31.3", "31.2"),     # 31.25
    (16, 25, "56.3", "56.2"),     # 56.25
    (8, 9, "12.5", "12.6"),
    (3, 4, "33.3", "33.4"),
])
def test_inflation_message_rounds_like_tofixed_1(before, after, shown, hidden):
    report = inflation(before, after, 0)
    (regression,) = report.regressions
    assert shown in regression.message
    assert hidden not in regression.message
    assert regression.evidence == {"baseline": before, "candidate": after,
                                   "increase_percent": (after - before) / before * 100}


def test_inflation_tie_case_keeps_the_unrounded_evidence():
    report = inflation(16, 17, 6)
    (regression,) = report.regressions
    assert regression.evidence["increase_percent"] == 6.25
    assert "6.3" in regression.message and "6.25" not in regression.message
    assert as_json(report)["regressions"][0]["evidence"] == {"baseline": 16, "candidate": 17, "increase_percent": 6.25}


def test_inflation_whole_percent_is_shown_with_one_decimal_and_stored_as_an_integer():
    report = inflation(1, 2, 0)
    (regression,) = report.regressions
    assert "100.0" in regression.message
    assert b'"increase_percent":100}' in msgspec.json.encode(regression)


def test_inflation_fractional_limit():
    assert inflation(8, 9, 12.5).regressions == []
    report = inflation(8, 9, 12.4)
    assert kinds(report) == ["tool_call_increase"]
    assert "12.4" in report.regressions[0].message


def test_inflation_counts_tool_less_calls():
    rules = contract(NO_SHELL, compare={"max_tool_call_increase_percent": 0})
    report = compare_traces(rules, calls("kb"), calls("kb", None))
    assert kinds(report) == ["tool_call_increase"]
    assert report.regressions[0].evidence["candidate"] == 2


# --- outcomes ------------------------------------------------------------------------------------

RANK = {None: -1, "violated": 0, "retracted": 1, "unknown": 2, "satisfied": 3}


@pytest.mark.parametrize("before", list(RANK))
@pytest.mark.parametrize("after", list(RANK))
def test_outcome_ranks(before, after):
    report = compare_traces(contract(NO_SHELL), outcome_trace(before), outcome_trace(after))
    assert report.baseline.summary.final_outcome == before
    assert report.candidate.summary.final_outcome == after
    if RANK[after] < RANK[before]:
        assert kinds(report) == ["outcome_regression"]
        (regression,) = report.regressions
        assert regression.evidence == {"baseline": before, "candidate": after}
        assert (before or "none") in regression.message and (after or "none") in regression.message
        assert report.compatible is False
    else:
        assert report.regressions == []
        assert report.compatible is True


def test_outcome_regression_evidence_keeps_null():
    report = compare_traces(contract(NO_SHELL), outcome_trace("unknown"), outcome_trace(None))
    assert as_json(report)["regressions"][0]["evidence"] == {"baseline": "unknown", "candidate": None}


def test_last_outcome_without_verdict_counts_as_none():
    candidate = events({"type": "outcome.observed", "outcome_id": "o", "verdict": "satisfied",
                        "evidence_class": "externally_observed"},
                       {"type": "outcome.observed", "outcome_id": "o"})
    report = compare_traces(contract(NO_SHELL), outcome_trace("violated"), candidate)
    assert report.candidate.summary.final_outcome is None
    assert kinds(report) == ["outcome_regression"]


def test_final_outcome_is_the_last_one_not_the_best():
    candidate = events({"type": "outcome.observed", "verdict": "satisfied"},
                       {"type": "outcome.observed", "verdict": "retracted"})
    report = compare_traces(contract(NO_SHELL), outcome_trace("unknown"), candidate)
    assert kinds(report) == ["outcome_regression"]
    assert report.regressions[0].evidence == {"baseline": "unknown", "candidate": "retracted"}


def test_outcome_regression_message_names_the_policy_key():
    report = compare_traces(contract(NO_SHELL), outcome_trace("satisfied"), outcome_trace(None))
    assert [r.message for r in report.regressions] == [
        "Final outcome regressed from satisfied to none (policy require_same_outcome_or_better)."]


def test_cli_text_report_names_the_policy_keys(cli, write):
    write("contract.json", contract(NO_SHELL, compare={"max_tool_call_increase_percent": 50}))
    write("baseline.jsonl", jsonl(calls("kb.search")))
    write("candidate.jsonl", jsonl(calls("kb.search", "kb.search", "web.browse")))
    result = cli("compare", "--contract", "contract.json", "--baseline", "baseline.jsonl",
                 "--candidate", "candidate.jsonl")
    assert result.returncode == 1, result.stderr
    assert ("new_tool: Candidate introduced tool: web.browse, which the baseline never called "
            "(policy fail_on_new_tools).") in result.stdout
    assert ("tool_call_increase: Tool calls increased by 200.0%, from 1 to 3; allowed 50% "
            "(policy max_tool_call_increase_percent).") in result.stdout


def test_rule_regressions_take_the_line_length_of_the_rules_first_violation(write):
    # each rule's regression points at its own first violation: its line, and that line's length
    rules = contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"},
                     {"id": "no-web", "kind": "deny_tool", "tool": "web.*"})
    candidate = write("candidate.jsonl", '{"seq": 1, "type": "tool.call", "tool": "shell.exec"}\n'
                                         '{"seq": 2, "type": "tool.call", "tool": "web.browse", "note": "longer"}\n')
    report = compare_traces(rules, calls("kb"), str(candidate), line_lengths=True)
    rule_regressions = [r for r in report.regressions if r.kind == "new_rule_failure"]
    assert [(r.line, r.line_length) for r in rule_regressions] == [(1, 53), (2, 71)]
    assert [(v.line, v.line_length) for v in report.candidate.violations] == [(1, 53), (2, 71)]


def test_require_same_outcome_or_better_false():
    rules = contract(NO_SHELL, compare={"require_same_outcome_or_better": False})
    report = compare_traces(rules, outcome_trace("satisfied"), outcome_trace("violated"))
    assert report.regressions == [] and report.compatible is True


# --- rule_changes --------------------------------------------------------------------------------

def test_rule_changes_cover_all_four_changes():
    rules = contract(
        {"id": "steady", "kind": "deny_tool", "tool": "never"},
        {"id": "broke", "kind": "deny_tool", "tool": "two"},
        {"id": "mended", "kind": "deny_tool", "tool": "one"},
        {"id": "stuck", "kind": "deny_tool", "tool": "three", "severity": "warning"},
        compare={"fail_on_new_tools": False},
    )
    baseline = calls("one", "one", "three")
    candidate = calls("two", "three", "three", "three")
    report = compare_traces(rules, baseline, candidate)
    changes = [msgspec.to_builtins(change) for change in report.rule_changes]
    assert changes == [
        {"rule_id": "steady", "rule_kind": "deny_tool", "severity": "error", "baseline": "passed",
         "candidate": "passed", "change": "passing", "baseline_violations": 0, "candidate_violations": 0},
        {"rule_id": "broke", "rule_kind": "deny_tool", "severity": "error", "baseline": "passed",
         "candidate": "failed", "change": "new", "baseline_violations": 0, "candidate_violations": 1},
        {"rule_id": "mended", "rule_kind": "deny_tool", "severity": "error", "baseline": "failed",
         "candidate": "passed", "change": "fixed", "baseline_violations": 2, "candidate_violations": 0},
        {"rule_id": "stuck", "rule_kind": "deny_tool", "severity": "warning", "baseline": "failed",
         "candidate": "failed", "change": "still_failing", "baseline_violations": 1, "candidate_violations": 3},
    ]
    # only the error rule that broke is a regression; the fixed and the warning rule are not
    assert [(r.kind, r.evidence.get("rule_id")) for r in report.regressions] == [("new_rule_failure", "broke")]


def test_rule_changes_follow_contract_order_and_cover_every_rule():
    rules = contract(*[{"id": f"r{i}", "kind": "deny_tool", "tool": f"t{i}"} for i in (3, 1, 2)])
    report = compare_traces(rules, calls("t1"), calls("t2"))
    assert [(c.rule_id, c.change) for c in report.rule_changes] == [("r3", "passing"), ("r1", "fixed"),
                                                                     ("r2", "new")]


def test_warning_rule_newly_failing_is_a_new_change_but_no_regression():
    rules = contract(dict(NO_SHELL, severity="warning"))
    report = compare_traces(rules, calls("kb"), calls("kb", "shell.x"))
    assert [(c.change, c.severity) for c in report.rule_changes] == [("new", "warning")]
    assert "new_rule_failure" not in kinds(report)


# --- side by side: the baseline checked in a second process --------------------------------------

SIDE_RULES = contract(
    {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"},
    {"id": "closed", "kind": "tool_result_required"},
    {"id": "retries", "kind": "retry_limit", "max_attempts": 1},
    compare={"fail_on_new_tools": True, "max_tool_call_increase_percent": 10},
)


@pytest.fixture
def pools(monkeypatch):
    """Every trace counts as large; records each process pool a compare starts."""
    import concurrent.futures

    import agent_invariants.compare as compare_module

    started: list[int] = []
    real = concurrent.futures.ProcessPoolExecutor

    def counting_pool(*args, **kwargs):
        started.append(kwargs.get("max_workers", 0))
        return real(*args, **kwargs)

    monkeypatch.setattr(compare_module, "SIDE_BY_SIDE_BYTES", 0)
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", counting_pool)
    return started


def test_side_by_side_gives_the_one_process_report(write, pools):
    baseline = write("base.jsonl", jsonl(calls("kb.search", "kb.search", "crm.read")))
    candidate = write("cand.jsonl", jsonl(calls("kb.search", "shell.exec", "kb.search", "mail.send")
                                          + [{"seq": 99, "type": "tool.call", "tool": "mail.send", "call_id": "open"}]))
    alone = msgspec.json.encode(compare_traces(SIDE_RULES, baseline, candidate, jobs=1))
    assert pools == []
    beside = msgspec.json.encode(compare_traces(SIDE_RULES, baseline, candidate, jobs=2))
    assert pools == [1]
    assert beside == alone
    assert b'"new_tool"' in beside and b'"line":' in beside


@pytest.mark.parametrize("bad_baseline, bad_candidate", [(True, False), (False, True), (True, True)])
def test_side_by_side_reports_the_error_one_process_would(write, pools, bad_baseline, bad_candidate):
    good = jsonl(calls("kb.search"))
    baseline = write("base.jsonl", good + ('{"seq": 0, "type": "late"}\n' if bad_baseline else ""))
    candidate = write("cand.jsonl", ("{oops\n" if bad_candidate else "") + good)
    errors = []
    for jobs in (1, 2):
        with pytest.raises(TraceError) as caught:
            compare_traces(SIDE_RULES, baseline, candidate, jobs=jobs)
        errors.append((caught.value.source, caught.value.line, str(caught.value)))
    assert pools == [1]
    assert errors[0] == errors[1]
    assert errors[0][0] == str(baseline if bad_baseline else candidate)


def test_in_memory_traces_and_stdin_stay_in_one_process(write, pools):
    trace = calls("kb.search")
    compare_traces(SIDE_RULES, trace, trace, jobs=2)
    compare_traces(SIDE_RULES, jsonl(trace).encode(), jsonl(trace).encode(), jobs=2)
    assert pools == []


@pytest.mark.slow
def test_cli_compare_of_large_traces_is_the_same_with_one_job_or_two(cli, write):
    lines = []
    for i in range(22_000):   # about 9 MiB: past the size where the baseline gets its own process
        lines.append(json.dumps({"seq": 2 * i, "type": "tool.call", "tool": "kb.search", "call_id": f"c{i}",
                                 "call_signature": f"kb.search:{i % 20_000}", "data": {"pad": "x" * 300}}))
        lines.append(json.dumps({"seq": 2 * i + 1, "type": "tool.result", "tool": "kb.search", "call_id": f"c{i}"}))
    baseline = write("base.jsonl", "\n".join(lines) + "\n")
    candidate = write("cand.jsonl", "\n".join(lines[:-1]) + "\n")   # the last call has no result
    contract_path = write("contract.json", SIDE_RULES)
    runs = [cli("compare", "-c", str(contract_path), "--baseline", str(baseline), "--candidate", str(candidate),
                "--format", "json", "--jobs", jobs) for jobs in ("1", "2")]
    assert [run.returncode for run in runs] == [1, 1]
    assert runs[0].stdout == runs[1].stdout and runs[0].stderr == runs[1].stderr == ""
    report = json.loads(runs[0].stdout)
    assert {r["kind"] for r in report["regressions"]} == {"contract_violation", "new_rule_failure"}


class _PoolThatCannotStart:
    """Stands in for ProcessPoolExecutor where processes cannot be made (a read-only /dev/shm)."""

    def __init__(self, *args, **kwargs):
        raise OSError(30, "Read-only file system")


class _PoolWhoseWorkerDies:
    """Stands in for ProcessPoolExecutor whose worker is killed (for memory, say)."""

    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def submit(self, *args, **kwargs):
        from concurrent.futures import Future
        from concurrent.futures.process import BrokenProcessPool

        future = Future()
        future.set_exception(BrokenProcessPool("A process in the process pool was terminated abruptly"))
        return future


@pytest.mark.parametrize("pool", [_PoolThatCannotStart, _PoolWhoseWorkerDies])
def test_side_by_side_falls_back_to_one_process(write, monkeypatch, pool):
    import concurrent.futures

    import agent_invariants.compare as compare_module

    baseline = write("base.jsonl", jsonl(calls("kb.search", "crm.read")))
    candidate = write("cand.jsonl", jsonl(calls("kb.search", "shell.exec")))
    alone = msgspec.json.encode(compare_traces(SIDE_RULES, baseline, candidate, jobs=1))
    monkeypatch.setattr(compare_module, "SIDE_BY_SIDE_BYTES", 0)
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", pool)
    assert msgspec.json.encode(compare_traces(SIDE_RULES, baseline, candidate, jobs=2)) == alone
    bad = write("bad.jsonl", "{oops\n")
    with pytest.raises(TraceError) as caught:
        compare_traces(SIDE_RULES, bad, candidate, jobs=2)
    assert caught.value.source == str(bad) and caught.value.line == 1


def _compare_in_a_worker(contract_dict, baseline, candidate):
    import agent_invariants.compare as compare_module

    compare_module.SIDE_BY_SIDE_BYTES = 0
    return msgspec.json.encode(compare_traces(contract_dict, baseline, candidate, jobs=2))


def test_side_by_side_inside_a_daemon_worker_process(write):
    """A worker of a multiprocessing pool (as under Dask or Ray) may not start processes."""
    import multiprocessing

    baseline = write("base.jsonl", jsonl(calls("kb.search", "crm.read")))
    candidate = write("cand.jsonl", jsonl(calls("kb.search", "shell.exec")))
    alone = msgspec.json.encode(compare_traces(SIDE_RULES, baseline, candidate))
    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.apply(_compare_in_a_worker, (SIDE_RULES, str(baseline), str(candidate))) == alone
