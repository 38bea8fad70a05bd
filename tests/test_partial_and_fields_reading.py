"""A second reading of two cross-cutting parts of spec v2, written from the spec text alone.

1. `check --partial` (spec v2 §0 "Safety and liveness", §10 points 6 and 82, and the kind titles of
   §3.1-§3.9): for every rule kind of versions 1 and 2, a trace cut short that violates only a
   liveness part is `inconclusive` and fails nothing; one that violates a safety part still fails;
   without `--partial` both fail.
2. The event fields of §1 under version 2 (point 16): wrong types are exit 2 with one
   `file:line: $.field` line; accepted forms; version 1 ignores them as v1 did. Plus `validate`,
   `summary` and `init` (v1 §8, README "The command line").
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support import write_contract, write_trace

Rules = list[dict[str, Any]]
Events = list[Any]

T0 = "2026-01-01T10:00:00Z"


def run(cli: Any, *extra: str) -> tuple[int, dict[str, Any]]:
    """`check` of c.json and t.jsonl as JSON; returns the exit code and the parsed report."""
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json", *extra)
    assert result.returncode in (0, 1, 7), result.stderr
    return result.returncode, json.loads(result.stdout)


def check(cli: Any, tmp_path: Path, rules: Rules, events: Events, *extra: str,
          version: int = 2) -> tuple[int, dict[str, Any]]:
    write_contract(tmp_path, rules, version)
    write_trace(tmp_path, events)
    return run(cli, *extra)


def jsonl_text(events: Events) -> str:
    return "".join(json.dumps({"seq": i + 1, **e}) + "\n" for i, e in enumerate(events))


def codes_statuses(report: dict[str, Any]) -> list[tuple[str, str]]:
    return [(v["code"], v["status"]) for v in report["violations"]]


def call(tool: str, call_id: str, **fields: Any) -> dict[str, Any]:
    return {"type": "tool.call", "tool": tool, "call_id": call_id, **fields}


def result(call_id: str, **fields: Any) -> dict[str, Any]:
    return {"type": "tool.result", "call_id": call_id, **fields}


# --------------------------------------------------------------------------------------------------
# Part 1: --partial. Each case: (label, rules, trace, [(code, status without --partial)]).
# Liveness: under --partial every listed violation is "inconclusive", exit 0, error_count 0.
# --------------------------------------------------------------------------------------------------

LIVENESS: list[tuple[str, Rules, Events, list[tuple[str, str]]]] = [
    # point 82: "The liveness parts are require_event's `min` and tool_result_required."
    ("require_event.min", [{"id": "r", "kind": "require_event", "match": {"type": "run.completed"}}],
     [call("x", "c1"), result("c1", ok=True)], [("require_event.min", "fail")]),
    ("tool_result_required", [{"id": "r", "kind": "tool_result_required"}],
     [call("x", "c1")], [("tool_result_required.missing", "fail")]),
    # §3.1 title: "liveness with ... `call_index`"; call_missing is the part a longer run may fix.
    ("tool_args.call_index", [{"id": "r", "kind": "tool_args", "tool": "get", "call_index": 1,
                               "match": {"id": {"$exists": True}}}],
     [call("get", "c1", args={"id": 1})], [("tool_args.call_missing", "fail")]),
    # §3.1 title: "liveness with `$from_output`"; point 12: no terminal -> no_candidates (point 6: unresolved).
    ("tool_args.$from_output", [{"id": "r", "kind": "tool_args", "tool": "refund",
                                 "match": {"order": {"$from_output": "order"}}}],
     [call("refund", "c1", args={"order": "A1"})], [("tool_args.reference_unresolved", "unresolved")]),
    # §3.2 "tool_order (liveness)"; point 1: `missing` (subsequence), `deviation` (exact).
    ("tool_order.missing", [{"id": "r", "kind": "tool_order", "tools": ["a", "b"]}],
     [call("a", "c1")], [("tool_order.missing", "fail")]),
    ("tool_order.deviation", [{"id": "r", "kind": "tool_order", "tools": ["a", "b"], "mode": "exact"}],
     [call("a", "c1"), call("c", "c2")], [("tool_order.deviation", "fail")]),
    # §3.4 "tool_calls (max is safety; the rest is liveness)".
    ("tool_calls.min", [{"id": "r", "kind": "tool_calls", "tool": "x", "min": 2}],
     [call("x", "c1")], [("tool_calls.min", "fail")]),
    ("tool_calls.output_unresolved", [{"id": "r", "kind": "tool_calls", "tool": "x",
                                       "matches_output_length": "items"}],
     [call("x", "c1")], [("tool_calls.output_unresolved", "unresolved")]),
    ("tool_calls.output_mismatch", [{"id": "r", "kind": "tool_calls", "tool": "x",
                                     "matches_output_length": "items"}],
     [call("x", "c1"), {"type": "run.completed", "output": {"items": [1, 2]}}],
     [("tool_calls.output_mismatch", "fail")]),
    # §3.6 latency_budget: "the percentile variant is liveness".
    ("latency_budget.percentile", [{"id": "r", "kind": "latency_budget", "tool": "s", "max_ms": 100,
                                    "percentile": 50}],
     [call("s", "c1"), result("c1", ok=True, duration_ms=500)], [("latency_budget.exceeded", "fail")]),
    # §3.6 "run_duration (liveness)"; point 23: no terminal -> one duration_unresolved without seq.
    ("run_duration.duration_unresolved", [{"id": "r", "kind": "run_duration", "max_ms": 1000}],
     [{"type": "run.start", "time": T0}], [("run_duration.duration_unresolved", "unresolved")]),
    ("run_duration.exceeded", [{"id": "r", "kind": "run_duration", "max_ms": 1000}],
     [{"type": "run.start", "time": T0}, {"type": "run.completed", "time": "2026-01-01T10:00:05Z"}],
     [("run_duration.exceeded", "fail")]),
    # §3.7 "Outcome checks (liveness)".
    ("output_match.output_missing", [{"id": "r", "kind": "output_match", "match": {"total": 1}}],
     [call("x", "c1")], [("output_match.output_missing", "unresolved")]),
    ("output_match.mismatch", [{"id": "r", "kind": "output_match", "match": {"total": 1}}],
     [{"type": "run.completed", "output": {"total": 2}}], [("output_match.mismatch", "fail")]),
    ("output_schema.output_missing", [{"id": "r", "kind": "output_schema", "schema": {"type": "object"}}],
     [call("x", "c1")], [("output_schema.output_missing", "unresolved")]),
    ("output_schema.schema", [{"id": "r", "kind": "output_schema", "schema": {"type": "object"}}],
     [{"type": "run.completed", "output": [1]}], [("output_schema.schema", "fail")]),
    # §0: run status is `none` when there is no terminal event.
    ("run_status.mismatch", [{"id": "r", "kind": "run_status", "equals": "completed"}],
     [call("x", "c1")], [("run_status.mismatch", "fail")]),
    # §3.8 "Conditional obligations (liveness)".
    ("required_when.condition_unresolved", [{"id": "r", "kind": "required_when", "tool": "refund",
                                             "when": {"path": "refunds", "non_empty": True}}],
     [call("refund", "c1")], [("required_when.condition_unresolved", "unresolved")]),
    ("required_when.min", [{"id": "r", "kind": "required_when", "tool": "refund",
                            "when": {"path": "refunds", "non_empty": True}}],
     [{"type": "run.completed", "output": {"refunds": ["A1"]}}], [("required_when.min", "fail")]),
    ("required_when.forbidden", [{"id": "r", "kind": "required_when", "tool": "refund", "iff": True,
                                  "when": {"path": "refunds", "non_empty": True}}],
     [call("refund", "c1"), {"type": "run.completed", "output": {"refunds": []}}],
     [("required_when.forbidden", "fail")]),
    ("forbidden_when.forbidden", [{"id": "r", "kind": "forbidden_when", "tool": "email",
                                   "when": {"outcome": {"outcome_id": "fraud", "verdict": "violated"}}}],
     [{"type": "outcome.observed", "outcome_id": "fraud", "verdict": "violated",
       "evidence_class": "configured_verifier"}, call("email", "m1")],
     [("forbidden_when.forbidden", "fail")]),
    ("forbidden_when.condition_unresolved", [{"id": "r", "kind": "forbidden_when", "tool": "email",
                                              "when": {"path": "fraud", "equals": True}}],
     [call("email", "m1")], [("forbidden_when.condition_unresolved", "unresolved")]),
    # §3.9 "failure_handled (safety, except at the trace's end)": the window runs past the end.
    ("failure_handled.at_end", [{"id": "r", "kind": "failure_handled", "tool": "s", "within_events": 2}],
     [call("s", "c1"), result("c1", ok=False)], [("failure_handled.unhandled", "fail")]),
]

LIVE_IDS = [case[0] for case in LIVENESS]


@pytest.mark.parametrize(("rules", "events", "expected"), [case[1:] for case in LIVENESS], ids=LIVE_IDS)
def test_liveness_part_is_inconclusive_under_partial(cli: Any, tmp_path: Path, rules: Rules,
                                                     events: Events, expected: list[tuple[str, str]]) -> None:
    """§0: `check --partial` "reports liveness parts as `inconclusive`"; point 82: they are "left out
    of error_count, warning_count, passed and the exit"."""
    code, report = check(cli, tmp_path, rules, events, "--partial")
    assert codes_statuses(report) == [(c, "inconclusive") for c, _ in expected]
    assert (code, report["passed"], report["error_count"], report["warning_count"]) == (0, True, 0, 0)


@pytest.mark.parametrize(("rules", "events", "expected"), [case[1:] for case in LIVENESS], ids=LIVE_IDS)
def test_liveness_part_fails_without_partial(cli: Any, tmp_path: Path, rules: Rules, events: Events,
                                             expected: list[tuple[str, str]]) -> None:
    """Point 6: every violation counts and fails the rule; `status` is `unresolved` for the listed
    codes, `fail` otherwise; "`inconclusive` appears only under `--partial`"."""
    code, report = check(cli, tmp_path, rules, events)
    assert codes_statuses(report) == expected
    assert (code, report["passed"], report["error_count"]) == (1, False, len(expected))


# Safety: under --partial each still fails with status "fail" (or its point-6 status), exit 1.
SAFETY: list[tuple[str, Rules, Events, list[tuple[str, str]]]] = [
    # point 82: "the v1 safety kinds are deny_tool, allow_tools, require_approval, stop_is_final,
    # retry_limit, deny_event, require_order, completion_requires_outcome,
    # confidence_requires_outcome, event_budget, and require_event's `max`."
    ("deny_tool", [{"id": "r", "kind": "deny_tool", "tool": "x"}], [call("x", "c1")],
     [("deny_tool.denied", "fail")]),
    ("allow_tools", [{"id": "r", "kind": "allow_tools", "tools": ["a"]}], [call("x", "c1")],
     [("allow_tools.not_allowed", "fail")]),
    ("require_approval", [{"id": "r", "kind": "require_approval", "tool": "x"}], [call("x", "c1")],
     [("require_approval.missing", "fail")]),
    ("stop_is_final", [{"id": "r", "kind": "stop_is_final"}], [{"type": "control.stop"}, call("x", "c1")],
     [("stop_is_final.after_stop", "fail")]),
    ("retry_limit", [{"id": "r", "kind": "retry_limit", "max_attempts": 1}],
     [call("x", "c1"), call("x", "c2")], [("retry_limit.exceeded", "fail")]),
    ("deny_event", [{"id": "r", "kind": "deny_event", "match": {"type": "agent.message"}}],
     [{"type": "agent.message"}], [("deny_event.matched", "fail")]),
    ("require_order", [{"id": "r", "kind": "require_order", "before": {"type": "plan"},
                        "after": {"type": "act"}}], [{"type": "act"}], [("require_order.missing", "fail")]),
    ("completion_requires_outcome", [{"id": "r", "kind": "completion_requires_outcome"}],
     [{"type": "agent.message", "claims_completion": True}], [("completion_requires_outcome.missing", "fail")]),
    ("confidence_requires_outcome", [{"id": "r", "kind": "confidence_requires_outcome", "threshold": 0.5}],
     [{"type": "agent.message", "claims_completion": True, "confidence": 0.9}],
     [("confidence_requires_outcome.missing", "fail")]),
    ("event_budget", [{"id": "r", "kind": "event_budget", "max_tool_calls": 1}],
     [call("x", "c1"), call("x", "c2")], [("event_budget.tool_calls", "fail")]),
    ("require_event.max", [{"id": "r", "kind": "require_event", "match": {"type": "ping"}, "min": 0,
                            "max": 1}], [{"type": "ping"}, {"type": "ping"}], [("require_event.max", "fail")]),
    # §3.1 "tool_args (safety ...)" without $from_output and call_index.
    ("tool_args.mismatch", [{"id": "r", "kind": "tool_args", "tool": "get", "match": {"id": 1}}],
     [call("get", "c1", args={"id": 2})], [("tool_args.mismatch", "fail")]),
    ("tool_args.args_missing", [{"id": "r", "kind": "tool_args", "tool": "get", "match": {"id": 1}}],
     [call("get", "c1")], [("tool_args.args_missing", "unresolved")]),
    ("tool_args.reference_unresolved", [{"id": "r", "kind": "tool_args", "tool": "refund",
                                         "match": {"amount": {"$from_result": {"tool": "get",
                                                                               "path": "paid"}}}}],
     [call("refund", "c1", args={"amount": 1})], [("tool_args.reference_unresolved", "unresolved")]),
    # §3.3 "precedence (safety)".
    ("precedence.missing", [{"id": "r", "kind": "precedence", "before": {"type": "tool.call", "tool": "get"},
                             "after": {"type": "tool.call", "tool": "refund"}}],
     [call("refund", "c1")], [("precedence.missing", "fail")]),
    ("precedence.late", [{"id": "r", "kind": "precedence", "before": {"type": "tool.call", "tool": "get"},
                          "after": {"type": "tool.call", "tool": "refund"}}],
     [call("refund", "c1"), call("get", "c2")], [("precedence.late", "fail")]),
    # §3.4 "max is safety".
    ("tool_calls.max", [{"id": "r", "kind": "tool_calls", "tool": "x", "max": 1}],
     [call("x", "c1"), call("x", "c2")], [("tool_calls.max", "fail")]),
    # §3.5 "approval_bound (safety)".
    ("approval_bound", [{"id": "r", "kind": "approval_bound", "tool": "x"}], [call("x", "c1")],
     [("approval_bound.missing", "fail")]),
    # §3.6 "latency_budget (safety; ...)", "result_size (safety)".
    ("latency_budget.exceeded", [{"id": "r", "kind": "latency_budget", "tool": "s", "max_ms": 100}],
     [call("s", "c1"), result("c1", ok=True, duration_ms=500)], [("latency_budget.exceeded", "fail")]),
    ("result_size.exceeded", [{"id": "r", "kind": "result_size", "tool": "s", "max_bytes": 3}],
     [call("s", "c1"), result("c1", ok=True, result="long")], [("result_size.exceeded", "fail")]),
    ("result_size.result_missing", [{"id": "r", "kind": "result_size", "tool": "s", "max_bytes": 3}],
     [call("s", "c1"), result("c1", ok=True)], [("result_size.result_missing", "unresolved")]),
    # §3.9 "failure_handled (safety, except at the trace's end)": here the window has passed.
    ("failure_handled.window_passed", [{"id": "r", "kind": "failure_handled", "tool": "s",
                                        "within_events": 1}],
     [call("s", "c1"), result("c1", ok=False), {"type": "note"}, {"type": "note"}],
     [("failure_handled.unhandled", "fail")]),
]

SAFE_IDS = [case[0] for case in SAFETY]


@pytest.mark.parametrize(("rules", "events", "expected"), [case[1:] for case in SAFETY], ids=SAFE_IDS)
def test_safety_part_still_fails_under_partial(cli: Any, tmp_path: Path, rules: Rules, events: Events,
                                               expected: list[tuple[str, str]]) -> None:
    """§0: a safety part is "decidable on a prefix", so `--partial` judges it as usual (point 82:
    only liveness violations become inconclusive); point 6 gives the status."""
    code, report = check(cli, tmp_path, rules, events, "--partial")
    assert codes_statuses(report) == expected
    assert (code, report["passed"], report["error_count"]) == (1, False, len(expected))


@pytest.mark.parametrize(("rules", "events", "expected"), [case[1:] for case in SAFETY], ids=SAFE_IDS)
def test_safety_part_fails_without_partial(cli: Any, tmp_path: Path, rules: Rules, events: Events,
                                           expected: list[tuple[str, str]]) -> None:
    """The same trace without `--partial` fails the same way (point 6)."""
    code, report = check(cli, tmp_path, rules, events)
    assert codes_statuses(report) == expected
    assert code == 1


def test_every_listed_kind_has_a_partial_case(cli: Any) -> None:
    """The cases above cover every kind `agent-invariants explain` lists (26: twelve of v1,
    fourteen of v2)."""
    listing = cli("explain")
    assert listing.returncode == 0
    table = listing.stdout.split("\n\n")[0]
    kinds = {line.split()[0] for line in table.splitlines()}
    covered = {rules[0]["kind"] for _, rules, _, _ in LIVENESS + SAFETY}
    assert len(kinds) == 26
    assert kinds == covered


def test_v1_liveness_is_inconclusive_in_a_version_1_contract(cli: Any, tmp_path: Path) -> None:
    """Point 82 classifies the v1 kinds themselves, so `--partial` applies to version-1 contracts."""
    rules: Rules = [{"id": "done", "kind": "require_event", "match": {"type": "run.completed"}},
                    {"id": "res", "kind": "tool_result_required"}]
    code, report = check(cli, tmp_path, rules, [call("x", "c1")], "--partial", version=1)
    assert codes_statuses(report) == [("require_event.min", "inconclusive"),
                                      ("tool_result_required.missing", "inconclusive")]
    assert (code, report["contract"]["version"], report["error_count"]) == (0, 1, 0)


def test_v1_safety_still_fails_in_a_version_1_contract(cli: Any, tmp_path: Path) -> None:
    """Point 82: deny_tool is a safety kind, in a version-1 contract too."""
    code, report = check(cli, tmp_path, [{"id": "d", "kind": "deny_tool", "tool": "x"}],
                         [call("x", "c1")], "--partial", version=1)
    assert codes_statuses(report) == [("deny_tool.denied", "fail")]
    assert code == 1


def test_mixed_trace_counts_only_safety_errors(cli: Any, tmp_path: Path) -> None:
    """Point 82: inconclusive violations are left out of error_count and the exit; the safety one
    still counts. README: the JSON report says `"partial": true` and gives `inconclusive_count`;
    each rule result counts its own `inconclusive`."""
    rules: Rules = [{"id": "deny", "kind": "deny_tool", "tool": "x"},
                    {"id": "min", "kind": "tool_calls", "tool": "y", "min": 3},
                    {"id": "res", "kind": "tool_result_required"}]
    code, report = check(cli, tmp_path, rules, [call("x", "c1"), call("y", "c2")], "--partial")
    assert code == 1
    assert (report["error_count"], report["warning_count"], report["passed"]) == (1, 0, False)
    assert report["partial"] is True
    assert report["inconclusive_count"] == 3
    by_rule = {r["rule_id"]: (r["passed"], r.get("inconclusive", 0)) for r in report["results"]}
    assert by_rule == {"deny": (False, 0), "min": (True, 1), "res": (True, 2)}
    assert [(v["rule_id"], v["status"]) for v in report["violations"]] == [
        ("deny", "fail"), ("min", "inconclusive"), ("res", "inconclusive"), ("res", "inconclusive")]


def test_partial_keeps_the_violation_in_the_report(cli: Any, tmp_path: Path) -> None:
    """Point 82 changes only the status and the counts: the inconclusive violation keeps its code,
    seq and evidence (v1 §4.12: evidence `{tool, call_id?}`)."""
    rules: Rules = [{"id": "res", "kind": "tool_result_required"}]
    _, plain = check(cli, tmp_path, rules, [call("x", "c1")])
    _, partial = run(cli, "--partial")
    strip = [{k: v for k, v in viol.items() if k != "status"} for viol in plain["violations"]]
    assert [{k: v for k, v in viol.items() if k != "status"} for viol in partial["violations"]] == strip
    assert strip[0]["event_seq"] == 1 and strip[0]["evidence"] == {"tool": "x", "call_id": "c1"}


def test_inconclusive_warning_is_not_counted(cli: Any, tmp_path: Path) -> None:
    """Point 82: inconclusive violations are left out of `warning_count` too."""
    rules: Rules = [{"id": "w", "kind": "require_event", "severity": "warning", "match": {"type": "run.completed"}}]
    code, report = check(cli, tmp_path, rules, [call("x", "c1")], "--partial")
    assert (code, report["warning_count"], report["inconclusive_count"]) == (0, 0, 1)
    _, plain = run(cli)
    assert plain["warning_count"] == 1


def test_without_partial_the_report_has_no_partial_flag(cli: Any, tmp_path: Path) -> None:
    """README: "The JSON report says `"partial": true`" under --partial; spec silent on the key
    otherwise (D5 only allows extras). Here: absent or false."""
    _, report = check(cli, tmp_path, [{"id": "res", "kind": "tool_result_required"}], [call("x", "c1")])
    assert report.get("partial") in (None, False)
    assert report.get("inconclusive_count", 0) == 0


def test_safety_exit_applies_under_partial(cli: Any, tmp_path: Path) -> None:
    """Point 84: with `--safety-exit N`, an error violation from a safety part exits N instead of 1."""
    rules: Rules = [{"id": "d", "kind": "deny_tool", "tool": "x"}, {"id": "res", "kind": "tool_result_required"}]
    code, report = check(cli, tmp_path, rules, [call("x", "c1")], "--partial", "--safety-exit", "7")
    assert code == 7
    assert report["error_count"] == 1


def test_safety_exit_ignores_inconclusive(cli: Any, tmp_path: Path) -> None:
    """Points 82 and 84: only inconclusive (liveness) violations -> exit 0 whatever --safety-exit."""
    rules: Rules = [{"id": "res", "kind": "tool_result_required"}]
    code, _ = check(cli, tmp_path, rules, [call("x", "c1")], "--partial", "--safety-exit", "7")
    assert code == 0


def test_failure_handled_retry_result_not_yet_come(cli: Any, tmp_path: Path) -> None:
    """§3.9 / point 25: with `retry_succeeds`, the retry's paired result "must exist (anywhere
    later)"; a trace cut before it comes is at its end, so the failure is not yet decided."""
    rules: Rules = [{"id": "r", "kind": "failure_handled", "tool": "s", "within_events": 5,
                     "retry_succeeds": True}]
    events: Events = [call("s", "c1"), result("c1", ok=False), call("s", "c2"), {"type": "a"}, {"type": "b"},
                      {"type": "c"}, {"type": "d"}]
    code, report = check(cli, tmp_path, rules, events, "--partial")
    assert codes_statuses(report) == [("failure_handled.unhandled", "inconclusive")]
    assert code == 0


def test_partial_and_safety_in_one_kind_tool_calls(cli: Any, tmp_path: Path) -> None:
    """§3.4: in one tool_calls rule, `max` (safety) fails and `output_unresolved` (liveness) is
    inconclusive; point 5 order: the located `max` first, then the no-seq one."""
    rules: Rules = [{"id": "r", "kind": "tool_calls", "tool": "x", "max": 1, "matches_output_length": "items"}]
    code, report = check(cli, tmp_path, rules, [call("x", "c1"), call("x", "c2")], "--partial")
    assert codes_statuses(report) == [("tool_calls.max", "fail"), ("tool_calls.output_unresolved", "inconclusive")]
    assert (code, report["error_count"]) == (1, 1)


def test_failure_window_ending_with_the_trace_is_judged(cli: Any, tmp_path: Path) -> None:
    """Point 25: the window is "the next `within_events` events by position"; when the trace holds
    all of them the failure is decided (safety), so `--partial` still fails it, at the result."""
    rules: Rules = [{"id": "r", "kind": "failure_handled", "tool": "s", "within_events": 2}]
    events: Events = [call("s", "c1"), result("c1", ok=False), {"type": "a"}, {"type": "b"}]
    code, report = check(cli, tmp_path, rules, events, "--partial")
    assert [(v["code"], v["status"], v["event_seq"]) for v in report["violations"]] == [
        ("failure_handled.unhandled", "fail", 2)]
    assert code == 1


def test_latency_without_result_is_judged_under_partial(cli: Any, tmp_path: Path) -> None:
    """§3.6: latency_budget is safety except the percentile variant, and "a result-less duration is
    unresolved" (point 22: at the call). Spec silent on a result still to come in a cut trace; the
    letter of §3.6 judges it (status `unresolved`, point 6), which the product does."""
    rules: Rules = [{"id": "l", "kind": "latency_budget", "tool": "q", "max_ms": 5}]
    code, report = check(cli, tmp_path, rules, [call("q", "q1")], "--partial")
    assert [(v["code"], v["status"], v["event_seq"]) for v in report["violations"]] == [
        ("latency_budget.duration_unresolved", "unresolved", 1)]
    assert code == 1


def test_compare_partial_leaves_inconclusive_out(cli: Any, tmp_path: Path) -> None:
    """README: `compare --partial` too; point 82: inconclusive violations fail nothing, so a
    candidate whose only violation is a result still to come is compatible (exit 0); without
    `--partial` the rule newly fails (v1 §6, exit 1)."""
    write_contract(tmp_path, [{"id": "r", "kind": "tool_result_required"}])
    (tmp_path / "b.jsonl").write_text(jsonl_text([call("x", "c0"), result("c0", ok=True)]), encoding="utf-8")
    (tmp_path / "k.jsonl").write_text(jsonl_text([call("x", "c1")]), encoding="utf-8")
    args = ("compare", "--contract", "c.json", "--baseline", "b.jsonl", "--candidate", "k.jsonl", "--format", "json")
    partial = cli(*args, "--partial")
    assert partial.returncode == 0, partial.stderr
    report = json.loads(partial.stdout)
    assert (report["compatible"], report["regressions"], report["candidate"]["error_count"]) == (True, [], 0)
    plain = cli(*args)
    assert plain.returncode == 1
    assert [r["kind"] for r in json.loads(plain.stdout)["regressions"]] == ["new_rule_failure"]


def test_left_out_inconclusive_is_not_an_error(cli: Any, tmp_path: Path) -> None:
    """D7: "`error_count`, `warning_count`, `passed` and the exit code still count every one" of the
    violations a rule leaves out; point 82: inconclusive ones are left out of `error_count`. So
    `--max-violations 1` must not change the counts of a rule with a `max` (fail) and an
    `output_unresolved` (inconclusive)."""
    rules: Rules = [{"id": "r", "kind": "tool_calls", "tool": "x", "max": 1, "matches_output_length": "items"}]
    _, full = check(cli, tmp_path, rules, [call("x", "c1"), call("x", "c2")], "--partial")
    _, cut = run(cli, "--partial", "--max-violations", "1")
    assert (full["error_count"], full["inconclusive_count"]) == (1, 1)
    assert (cut["error_count"], cut["inconclusive_count"]) == (1, 1)


def test_left_out_inconclusive_warning_does_not_change_the_exit(cli: Any, tmp_path: Path) -> None:
    """D7 and point 82 as above, seen in the exit code: a warning failure_handled rule with one
    judged failure (window passed) and one at the trace's end; `--max-warnings 1` allows the one
    warning, so the exit is 0 whether or not `--max-violations 1` hides the inconclusive one."""
    rules: Rules = [{"id": "f", "kind": "failure_handled", "severity": "warning", "tool": "s",
                     "within_events": 1}]
    events: Events = [call("s", "c1"), result("c1", ok=False), {"type": "a"}, call("s", "c3"),
                      result("c3", ok=False)]
    code, full = check(cli, tmp_path, rules, events, "--partial", "--max-warnings", "1")
    assert (code, full["warning_count"]) == (0, 1)
    code, cut = run(cli, "--partial", "--max-warnings", "1", "--max-violations", "1")
    assert (code, cut["warning_count"]) == (0, 1)


def test_sarif_gives_inconclusive_level_note(cli: Any, tmp_path: Path) -> None:
    """README: "SARIF gives such results the level `note`"."""
    write_contract(tmp_path, [{"id": "res", "kind": "tool_result_required"}])
    write_trace(tmp_path, [call("x", "c1")])
    out = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "sarif", "--partial")
    assert out.returncode == 0, out.stderr
    levels = [r["level"] for r in json.loads(out.stdout)["runs"][0]["results"]]
    assert levels == ["note"]


# --------------------------------------------------------------------------------------------------
# Part 2: §1 event fields under version 2 (point 16).
# --------------------------------------------------------------------------------------------------

V2_RULES: Rules = [{"id": "d", "kind": "deny_tool", "tool": "never"}]

BAD_FIELDS: list[tuple[str, Any]] = [
    ("args", [1]), ("args", "a=1"), ("args", 3), ("args", True), ("args", None),
    ("duration_ms", -1), ("duration_ms", -0.5), ("duration_ms", "5"), ("duration_ms", True),
    ("duration_ms", None), ("duration_ms", [5]), ("duration_ms", {}),
    ("status", ""), ("status", "s" * 101), ("status", 5), ("status", None), ("status", ["done"]),
    ("approver", ""), ("approver", "a" * 501), ("approver", 1), ("approver", None), ("approver", False),
    ("reason", ""), ("reason", "r" * 501), ("reason", {}), ("reason", None),
]


@pytest.mark.parametrize(("field", "value"), BAD_FIELDS, ids=[f"{f}={json.dumps(v)[:12]}" for f, v in BAD_FIELDS])
def test_wrong_field_type_is_one_line_exit_2(cli: Any, tmp_path: Path, field: str, value: Any) -> None:
    """Point 16: "under version 2 each new field is checked on every event that carries it (args
    object; duration_ms finite number ≥ 0, not boolean; status 1..100; approver and reason 1..500;
    ... null rejected for every other field), with a `file:line: $.field` error". Checked on an
    event type outside the "on" column, after a comment line (the line is the physical one)."""
    write_contract(tmp_path, V2_RULES)
    write_trace(tmp_path, [{"seq": 1, "type": "x"}, "# a comment", {"seq": 2, "type": "agent.message", field: value}])
    out = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert (out.returncode, out.stdout) == (2, ""), out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"agent-invariants: t.jsonl:3: $.{field}: ")


def test_json_array_trace_names_the_physical_line(cli: Any, tmp_path: Path) -> None:
    """Point 16's `file:line` for a JSON-array trace (README: streamed item by item): the item's line."""
    write_contract(tmp_path, V2_RULES)
    (tmp_path / "t.json").write_text('[{"seq":1,"type":"a"},\n {"seq":2,"type":"b","args":[]}]\n', encoding="utf-8")
    out = cli("check", "--contract", "c.json", "--trace", "t.json")
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == "agent-invariants: t.json:2: $.args: expected an object, got an array\n"


def test_infinite_duration_is_refused(cli: Any, tmp_path: Path) -> None:
    """Point 16: duration_ms must be finite; `1e400` reads as infinity. Spec silent on overflowing
    literals; refusing it is the reading that keeps "finite"."""
    write_contract(tmp_path, V2_RULES)
    write_trace(tmp_path, ['{"seq":1,"type":"tool.result","call_id":"c","duration_ms":1e400}'])
    out = cli("check", "--contract", "c.json", "--trace", "t.jsonl")
    assert out.returncode == 2
    assert out.stderr.startswith("agent-invariants: t.jsonl:1: $.duration_ms: ")


GOOD_FIELDS: list[tuple[str, Any]] = [
    ("args", {}), ("args", {"a": {"b": [1, None]}}),
    ("result", None), ("result", 0), ("result", "text"), ("result", [1, "a"]), ("result", {"k": None}),
    ("result", False),
    ("output", None), ("output", 1.5), ("output", "s"), ("output", []), ("output", {"x": [None]}),
    ("duration_ms", 0), ("duration_ms", 1.5), ("duration_ms", 1e6), ("duration_ms", -0.0),
    ("status", "s"), ("status", "s" * 100), ("status", "awaiting_approval"),
    ("approver", "a"), ("approver", "a" * 500),
    ("reason", "r"), ("reason", "r" * 500),
]


@pytest.mark.parametrize(("field", "value"), GOOD_FIELDS, ids=[f"{f}={json.dumps(v)[:12]}" for f, v in GOOD_FIELDS])
def test_accepted_field_forms(cli: Any, tmp_path: Path, field: str, value: Any) -> None:
    """§1 table and point 16: the accepted types (`result`/`output` any JSON including null;
    status 1..100, approver/reason 1..500 characters; duration_ms finite ≥ 0), on any event."""
    code, report = check(cli, tmp_path, V2_RULES, [{"type": "agent.message", field: value}])
    assert (code, report["passed"], report["summary"]["events"]) == (0, True, 1)


def test_length_limits_count_characters(cli: Any, tmp_path: Path) -> None:
    """§1: `status` is "string 1..100": 100 non-ASCII characters are accepted (spec silent on the
    unit; characters, as v1's length limits)."""
    code, _ = check(cli, tmp_path, V2_RULES, [{"type": "run.completed", "status": "é" * 100}])
    assert code == 0


def test_output_on_run_failed_is_the_final_output(cli: Any, tmp_path: Path) -> None:
    """Point 16: "`run.failed` may carry `output`, which is the final output when it is the terminal"."""
    rules: Rules = [{"id": "o", "kind": "output_match", "match": {"total": 3}}]
    code, report = check(cli, tmp_path, rules, [{"type": "run.failed", "output": {"total": 3}}])
    assert (code, report["violations"]) == (0, [])


def test_null_output_is_an_output(cli: Any, tmp_path: Path) -> None:
    """Point 9: "`output: null` is an output (a mismatch for an object pattern, not `output_missing`)"."""
    rules: Rules = [{"id": "o", "kind": "output_match", "match": {"total": 3}}]
    code, report = check(cli, tmp_path, rules, [{"type": "run.completed", "output": None}])
    assert codes_statuses(report) == [("output_match.mismatch", "fail")]
    assert code == 1


def test_null_result_is_four_bytes(cli: Any, tmp_path: Path) -> None:
    """Point 9: "`result: null` is a 4-byte result" (§3.6 result_size, strictly over fails: point 23)."""
    rules: Rules = [{"id": "s", "kind": "result_size", "tool": "t", "max_bytes": 3}]
    _, report = check(cli, tmp_path, rules, [call("t", "c1"), result("c1", ok=True, result=None)])
    assert [(v["code"], v["evidence"]["bytes"]) for v in report["violations"]] == [("result_size.exceeded", 4)]


def test_first_bad_event_is_named(cli: Any, tmp_path: Path) -> None:
    """v1 §3.2 / D4: the trace is read in order and the first error wins: line 2 is named, not 3."""
    write_contract(tmp_path, V2_RULES)
    write_trace(tmp_path, [{"type": "a"}, {"type": "b", "status": ""}, {"type": "c", "args": []}])
    out = cli("check", "--contract", "c.json", "--trace", "t.jsonl")
    assert out.returncode == 2
    assert out.stderr.startswith("agent-invariants: t.jsonl:2: $.status: ")


def test_fields_are_typed_under_v2_even_with_only_v1_kinds(cli: Any, tmp_path: Path) -> None:
    """§0 / point 16: typing depends on the contract's version, not on which kinds read the field."""
    write_contract(tmp_path, [{"id": "d", "kind": "deny_tool", "tool": "x"}], version=2)
    write_trace(tmp_path, [{"type": "tool.call", "tool": "y", "args": "x=1"}])
    out = cli("check", "--contract", "c.json", "--trace", "t.jsonl")
    assert out.returncode == 2
    assert out.stderr.startswith("agent-invariants: t.jsonl:1: $.args: ")


BAD_FOR_V2: dict[str, Any] = {"args": [1], "result": None, "duration_ms": "slow", "status": "",
                               "output": None, "approver": 7, "reason": None}


def test_version_1_ignores_the_new_fields(cli: Any, tmp_path: Path) -> None:
    """§0: "New fields are optional keys that Node ignores. They are type-checked only under v2";
    v1 §3.1: unknown keys are preserved and ignored. The verdict equals that of the bare trace."""
    rules: Rules = [{"id": "d", "kind": "deny_tool", "tool": "x"}]
    code, report = check(cli, tmp_path, rules, [call("x", "c1", **BAD_FOR_V2)], version=1)
    _, bare = check(cli, tmp_path, rules, [call("x", "c1")], version=1)
    assert code == 1
    for key in ("passed", "error_count", "warning_count", "summary", "results"):
        assert report[key] == bare[key], key


def test_version_1_ignores_bad_fields_on_every_event_type(cli: Any, tmp_path: Path) -> None:
    """§0: version 1 does not type-check §1's fields on any event (a passing trace stays passing)."""
    rules: Rules = [{"id": "res", "kind": "tool_result_required"}]
    events: Events = [call("x", "c1", args="raw"), result("c1", ok=True, duration_ms=-5, reason=""),
                      {"type": "run.completed", "status": 3, "approver": ""}]
    code, report = check(cli, tmp_path, rules, events, version=1)
    assert (code, report["passed"], report["violations"]) == (0, True, [])


def test_version_1_args_do_not_drive_v1_kinds_under_v2(cli: Any, tmp_path: Path) -> None:
    """§0: "v1 kinds inside a v2 contract keep identical verdicts, evidence and messages"."""
    rules: Rules = [{"id": "res", "kind": "tool_result_required"}]
    events: Events = [call("x", "c1", args={"a": 1}), result("c1", ok=True, result={"r": 1}, duration_ms=3)]
    code, v2 = check(cli, tmp_path, rules, events, version=2)
    _, v1 = check(cli, tmp_path, rules, events, version=1)
    assert code == 0
    assert v2["results"] == v1["results"]


def test_compare_types_the_candidate_under_v2(cli: Any, tmp_path: Path) -> None:
    """Point 16 applies wherever a v2 contract reads a trace: `compare` names the bad trace's line."""
    write_contract(tmp_path, V2_RULES)
    (tmp_path / "b.jsonl").write_text('{"seq":1,"type":"a"}\n', encoding="utf-8")
    (tmp_path / "k.jsonl").write_text('{"seq":1,"type":"a"}\n{"seq":2,"type":"b","reason":5}\n', encoding="utf-8")
    out = cli("compare", "--contract", "c.json", "--baseline", "b.jsonl", "--candidate", "k.jsonl")
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr.startswith("agent-invariants: k.jsonl:2: $.reason: ")


# --------------------------------------------------------------------------------------------------
# validate, summary, init (v1 §7.5 and §8; README "The command line").
# --------------------------------------------------------------------------------------------------


def test_validate_prints_the_v2_contract(cli: Any, tmp_path: Path) -> None:
    """v1 §8: `validate` prints `{"valid": true, "contract": <normalised contract>}` (2-space JSON),
    exit 0; §0: the version stays 2. Rules written in schema order with no defaults come back as written."""
    rules: Rules = [{"id": "d", "kind": "deny_tool", "tool": "x"},
                    {"id": "a", "kind": "tool_args", "tool": "get", "match": {"id": {"$regex": "^A"}}}]
    write_contract(tmp_path, rules)
    out = cli("validate", "--contract", "c.json")
    expected = {"valid": True, "contract": {"version": 2, "name": "spec", "rules": rules}}
    assert (out.returncode, out.stderr) == (0, "")
    assert out.stdout == json.dumps(expected, indent=2, ensure_ascii=False) + "\n"


def test_validate_normalises_a_v2_contract(cli: Any, tmp_path: Path) -> None:
    """v1 §2.6 (kept for v2 by §0): names and globs are trimmed and keys re-ordered into schema order
    (root: version, name, rules; rule: id, severity, kind, then the kind's fields in table order;
    matcher: type, tool, ok). A match tree is data: its own key order stays as written."""
    document = {"rules": [{"match": {"b": 1, "a": 2}, "tool": " get ", "kind": "tool_args",
                           "severity": "warning", "id": "a"},
                          {"after": {"tool": "r", "type": "tool.call"}, "before": {"ok": True, "type": "x"},
                           "kind": "require_order", "id": "o"}],
                "name": " spec ", "version": 2}
    (tmp_path / "c.json").write_text(json.dumps(document), encoding="utf-8")
    out = cli("validate", "--contract", "c.json")
    assert out.returncode == 0, out.stderr
    contract = json.loads(out.stdout)["contract"]
    assert json.dumps(contract) == json.dumps({
        "version": 2, "name": "spec",
        "rules": [{"id": "a", "severity": "warning", "kind": "tool_args", "tool": "get", "match": {"b": 1, "a": 2}},
                  {"id": "o", "kind": "require_order", "before": {"type": "x", "ok": True},
                   "after": {"type": "tool.call", "tool": "r"}}]})


def test_validate_and_summary_write_json_whatever_format(cli: Any, tmp_path: Path) -> None:
    """README: `validate` and `summary` print JSON; they accept `--format` (checking its value but
    always writing JSON) and take `--output`."""
    write_contract(tmp_path, V2_RULES)
    out = cli("validate", "--contract", "c.json", "--format", "junit")
    assert (out.returncode, json.loads(out.stdout)["valid"]) == (0, True)
    bad = cli("validate", "--contract", "c.json", "--format", "bogus")
    assert (bad.returncode, bad.stdout) == (2, "")
    write_trace(tmp_path, SUMMARY_TRACE)
    to_file = cli("summary", "--trace", "t.jsonl", "--output", "s.json")
    assert (to_file.returncode, to_file.stdout) == (0, "")
    assert json.loads((tmp_path / "s.json").read_text(encoding="utf-8")) == SUMMARY_EXPECTED


def test_validate_refuses_a_new_kind_in_version_1(cli: Any, tmp_path: Path) -> None:
    """§0: "Any new kind, field or matcher key requires it [version 2]" -> exit 2, nothing on stdout;
    README: refused with `needs "version": 2`."""
    write_contract(tmp_path, [{"id": "a", "kind": "tool_args", "tool": "get", "match": {"id": 1}}], version=1)
    out = cli("validate", "--contract", "c.json")
    assert (out.returncode, out.stdout) == (2, "")
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("agent-invariants: ") and "c.json" in lines[0]
    assert 'needs "version": 2' in lines[0]


def test_validate_refuses_a_bad_v2_rule(cli: Any, tmp_path: Path) -> None:
    """§3.1: "At least one of `match`, `schema` or `distinct` is required" -> exit 2 (v1 §7.5)."""
    write_contract(tmp_path, [{"id": "a", "kind": "tool_args", "tool": "get"}])
    out = cli("validate", "--contract", "c.json")
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr.startswith("agent-invariants: ") and "$.rules[0]" in out.stderr


SUMMARY_TRACE: Events = [
    {"type": "run.start", "time": T0},
    call("get", "c1", args={"id": 1}),
    result("c1", ok=False, result=None, duration_ms=5),
    {"type": "tool.denied", "tool": "refund", "reason": "guard"},
    {"type": "approval.granted", "approver": "bob", "tool": "refund", "args": {"id": 1}},
    {"type": "approval.revoked", "reason": "changed mind"},
    {"type": "run.failed", "status": "awaiting_approval", "output": {"a": 1}, "reason": "boom"},
]

SUMMARY_EXPECTED = {"events": 7, "tool_calls": 1, "tool_failures": 1, "tools": ["get"], "approvals_granted": 1,
                    "outcomes_satisfied": 0, "outcomes_violated": 0, "completion_claims": 0,
                    "final_outcome": None}


def test_summary_of_a_v2_trace_counts_as_v1(cli: Any, tmp_path: Path) -> None:
    """v1 §5 TraceSummary on a trace with v2 fields and event types: `tool.denied`, `approval.revoked`,
    `run.start` carry no v1 meaning (v1 §3.1), run.failed is no completion claim; exact JSON, exit 0."""
    write_trace(tmp_path, SUMMARY_TRACE)
    out = cli("summary", "--trace", "t.jsonl")
    assert (out.returncode, out.stderr) == (0, "")
    assert out.stdout == json.dumps(SUMMARY_EXPECTED, indent=2) + "\n"


def test_check_summary_matches_summary_command(cli: Any, tmp_path: Path) -> None:
    """v1 §5: the report's `summary` is the TraceSummary that `summary` prints (under a v2 contract)."""
    code, report = check(cli, tmp_path, V2_RULES, SUMMARY_TRACE)
    assert (code, report["summary"], report["contract"]) == (0, SUMMARY_EXPECTED, {"name": "spec", "version": 2})


def test_summary_does_not_type_v2_fields(cli: Any, tmp_path: Path) -> None:
    """§0: fields are "type-checked only under v2"; `summary` has no contract, so it reads them as v1
    (spec silent on summary explicitly; this is the reading of "Traces stay unversioned")."""
    write_trace(tmp_path, [{"type": "x", "args": [1], "status": "", "duration_ms": -1}])
    out = cli("summary", "--trace", "t.jsonl")
    assert out.returncode == 0
    assert json.loads(out.stdout)["events"] == 1


def test_summary_still_checks_seq_order(cli: Any, tmp_path: Path) -> None:
    """v1 §8: "`summary --trace F` ... seq order is checked because the file is parsed" -> exit 2."""
    write_trace(tmp_path, [{"seq": 2, "type": "a", "args": {}}, {"seq": 1, "type": "b"}])
    out = cli("summary", "--trace", "t.jsonl")
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr.startswith("agent-invariants: t.jsonl:2: ")


def test_init_writes_a_contract_that_validates_and_a_passing_trace(cli: Any, tmp_path: Path) -> None:
    """v1 §8: `init [dir]` writes agent-invariants.json and agent-trace.jsonl (7 rules, 7 events, a
    passing sample), exit 0; README: it writes the `$schema` line. The sample passes under
    `--partial` too (nothing inconclusive in a complete run)."""
    out = cli("init", "d")
    assert out.returncode == 0, out.stderr
    contract = json.loads((tmp_path / "d" / "agent-invariants.json").read_text(encoding="utf-8"))
    assert "$schema" in contract and len(contract["rules"]) == 7
    assert contract["$schema"].endswith(f"contract-v{contract['version']}.schema.json")
    assert len((tmp_path / "d" / "agent-trace.jsonl").read_text(encoding="utf-8").splitlines()) == 7
    checked = cli("check", "--contract", "d/agent-invariants.json", "--trace", "d/agent-trace.jsonl",
                  "--format", "json", "--partial")
    assert checked.returncode == 0, checked.stderr
    assert json.loads(checked.stdout)["inconclusive_count"] == 0


def test_init_refuses_to_overwrite(cli: Any, tmp_path: Path) -> None:
    """v1 §8: refuses (exit 2) if either file exists."""
    (tmp_path / "agent-trace.jsonl").write_text("", encoding="utf-8")
    out = cli("init")
    assert (out.returncode, out.stdout) == (2, "")
    assert "agent-trace.jsonl" in out.stderr and not (tmp_path / "agent-invariants.json").exists()
