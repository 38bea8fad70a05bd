"""`check --partial` (a trace cut short), tested from the spec's words: spec v2 §0 ("Safety and
liveness"), the safety/liveness parts named in the headings of §3.1-§3.9, §10 points 1, 2, 4, 6,
19-25 and 82 (the v1 safety kinds; liveness violations are `inconclusive` and left out of
`error_count`, `warning_count`, `passed` and the exit), and the README's "A trace cut short"
paragraph (`"partial": true`, `inconclusive_count`, each rule result's `inconclusive`, SARIF level
`note`). Also `compare --partial` and the MCP check and compare tools' `partial` argument.

Each trace is the prefix of a run: no terminal event, calls still waiting for their results, a
failure whose window is still open. Several rules share a contract, and each report is produced
once per module (module-scoped fixtures), so the file starts the CLI 15 times (and the MCP server once).

Expected values are derived from the spec text, not from running the implementation."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from conftest import Cli

# -- helpers --------------------------------------------------------------------------------------

def call(tool: str, call_id: str, **extra: Any) -> dict[str, Any]:
    return {"type": "tool.call", "tool": tool, "call_id": call_id, **extra}


def res(call_id: str, ok: bool = True, **extra: Any) -> dict[str, Any]:
    return {"type": "tool.result", "call_id": call_id, "ok": ok, **extra}


def numbered(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Events get `seq` = position + 1."""
    return [{"seq": position + 1, **event} for position, event in enumerate(events)]


def jsonl(events: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(event) + "\n" for event in events)


def contract(rules: list[dict[str, Any]], version: int) -> dict[str, Any]:
    return {"version": version, "name": "cut-short", "rules": rules}


class Folder:
    """A folder with the contracts and traces of this module, and the CLI run in it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.cli = Cli(path)

    def write(self, name: str, content: Any) -> str:
        text = content if isinstance(content, str) else json.dumps(content, indent=2)
        (self.path / name).write_text(text, encoding="utf-8")
        return name

    def check(self, contract_file: str, trace_file: str, *options: str, fmt: str = "json") -> tuple[int, str]:
        result = self.cli("check", "--contract", contract_file, "--trace", trace_file, "--format", fmt, *options)
        assert result.returncode in (0, 1), result.stderr
        assert "Traceback" not in result.stderr, result.stderr
        return result.returncode, result.stdout

    def check_json(self, contract_file: str, trace_file: str, *options: str) -> tuple[int, dict[str, Any]]:
        code, out = self.check(contract_file, trace_file, *options)
        return code, json.loads(out)

    def compare(self, contract_file: str, baseline: str, candidate: str, *options: str) -> tuple[int, dict[str, Any]]:
        result = self.cli("compare", "--contract", contract_file, "--baseline", baseline,
                          "--candidate", candidate, "--format", "json", *options)
        assert result.returncode in (0, 1), result.stderr
        return result.returncode, json.loads(result.stdout)


def by_rule(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {result["rule_id"]: result for result in report["results"]}


def verdicts(report: dict[str, Any]) -> dict[str, list[tuple[str, str, int | None]]]:
    """rule id -> sorted (code, status, event_seq) of its violations."""
    return {result["rule_id"]: sorted((v["code"], v["status"], v.get("event_seq")) for v in result["violations"])
            for result in report["results"]}


def statuses(report: dict[str, Any]) -> dict[str, set[str]]:
    return {rule_id: {status for _, status, _ in items} for rule_id, items in verdicts(report).items()}


def inconclusive_of(result: dict[str, Any]) -> int:
    """A rule result's `inconclusive` count (absent read as 0 only when it has no such violation)."""
    count = sum(v["status"] == "inconclusive" for v in result["violations"])
    return result["inconclusive"] if count else result.get("inconclusive", 0)


def assert_partial_report(report: dict[str, Any], exit_code: int, *, errors: int, warnings: int,
                          inconclusive: int) -> None:
    """The report-level facts of point 82 and the README: inconclusive violations count nowhere
    but in `inconclusive_count`, and `passed`/the exit follow `error_count`."""
    assert report["partial"] is True
    assert (report["error_count"], report["warning_count"], report["inconclusive_count"]) == (
        errors, warnings, inconclusive)
    assert report["passed"] is (errors == 0)
    assert exit_code == (1 if errors else 0)
    all_violations = [v for result in report["results"] for v in result["violations"]]
    assert sum(v["status"] == "inconclusive" for v in all_violations) == inconclusive
    assert report["violations"] == all_violations
    for result in report["results"]:
        counted = [v for v in result["violations"] if v["status"] != "inconclusive"]
        assert result["passed"] is (not counted), result
        assert inconclusive_of(result) == len(result["violations"]) - len(counted), result


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Folder:
    return Folder(tmp_path_factory.mktemp("partial"))


# -- the twelve v1 kinds (point 82) ---------------------------------------------------------------

# A v1 run cut short: no terminal event, four calls still waiting for their results.
V1_TRACE = numbered([
    call("search", "s1"),
    res("s1", ok=False),                                                        # 2: a failed result
    call("search", "s2"),
    call("shell.exec", "x1"),                                                   # 4: denied, not allowed
    call("refund", "r1"),                                                       # 5: no approval before it
    {"type": "agent.message", "claims_completion": True, "confidence": 0.9},   # 6: no outcome before it
    {"type": "control.stop"},
    call("search", "s3"),                                                       # 8: after the stop
])

# The v1 safety kinds of point 82, each broken by what already happened.
V1_SAFETY = [
    {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"},
    {"id": "allowlist", "kind": "allow_tools", "tools": ["search", "refund"]},
    {"id": "refund-approval", "kind": "require_approval", "tool": "refund"},
    {"id": "stop", "kind": "stop_is_final"},
    {"id": "proof", "kind": "completion_requires_outcome"},
    {"id": "confident", "kind": "confidence_requires_outcome", "threshold": 0.8},
    {"id": "retries", "kind": "retry_limit", "tool": "search", "max_attempts": 2, "group_by": "tool"},
    {"id": "budget", "kind": "event_budget", "max_tool_calls": 4},
    {"id": "approval-first", "kind": "require_order", "before": {"type": "approval.granted"},
     "after": {"type": "tool.call", "tool": "refund"}},
    {"id": "no-failures", "kind": "deny_event", "match": {"type": "tool.result", "ok": False}},
    {"id": "search-at-most-twice", "kind": "require_event", "match": {"type": "tool.call", "tool": "search"},
     "max": 2},
]
# The v1 liveness parts of point 82: require_event's `min` and tool_result_required.
V1_LIVENESS = [
    {"id": "needs-outcome", "kind": "require_event", "match": {"type": "outcome.observed"}},
    {"id": "refund-result", "kind": "tool_result_required", "tool": "refund", "severity": "warning"},
    {"id": "results", "kind": "tool_result_required"},
]

V1_SAFETY_VERDICTS = {
    "no-shell": [("deny_tool.denied", "fail", 4)],
    "allowlist": [("allow_tools.not_allowed", "fail", 4)],
    "refund-approval": [("require_approval.missing", "fail", 5)],
    "stop": [("stop_is_final.after_stop", "fail", 8)],
    "proof": [("completion_requires_outcome.missing", "fail", 6)],
    "confident": [("confidence_requires_outcome.missing", "fail", 6)],
    "retries": [("retry_limit.exceeded", "fail", 8)],
    "budget": [("event_budget.tool_calls", "fail", None)],
    "approval-first": [("require_order.missing", "fail", 5)],
    "no-failures": [("deny_event.matched", "fail", 2)],
    "search-at-most-twice": [("require_event.max", "fail", 1)],
}


def v1_liveness_verdicts(status: str) -> dict[str, list[tuple[str, str, int | None]]]:
    return {
        "needs-outcome": [("require_event.min", status, None)],
        "refund-result": [("tool_result_required.missing", status, 5)],
        "results": sorted(("tool_result_required.missing", status, seq) for seq in (3, 4, 5, 8)),
    }


@pytest.fixture(scope="module")
def v1_files(folder: Folder) -> dict[str, str]:
    return {
        "all": folder.write("v1-all.json", contract(V1_SAFETY + V1_LIVENESS, 1)),
        "liveness": folder.write("v1-liveness.json", contract(V1_LIVENESS, 1)),
        "trace": folder.write("v1-cut.jsonl", jsonl(V1_TRACE)),
    }


@pytest.fixture(scope="module")
def v1_partial(folder: Folder, v1_files: dict[str, str]) -> tuple[int, dict[str, Any]]:
    return folder.check_json(v1_files["all"], v1_files["trace"], "--partial")


def test_v1_safety_kinds_are_judged_on_a_cut_trace(v1_partial):
    code, report = v1_partial
    got = verdicts(report)
    for rule_id, expected in V1_SAFETY_VERDICTS.items():
        assert got[rule_id] == expected, rule_id
        assert by_rule(report)[rule_id]["passed"] is False
        assert inconclusive_of(by_rule(report)[rule_id]) == 0


def test_v1_liveness_parts_are_inconclusive_and_count_nowhere(v1_partial):
    code, report = v1_partial
    got = verdicts(report)
    for rule_id, expected in v1_liveness_verdicts("inconclusive").items():
        assert got[rule_id] == expected, rule_id
        assert by_rule(report)[rule_id]["passed"] is True
        assert by_rule(report)[rule_id]["inconclusive"] == len(expected)
    # 11 judged errors; the warning rule's inconclusive violation is not in warning_count.
    assert_partial_report(report, code, errors=11, warnings=0, inconclusive=6)


def test_v1_the_same_trace_without_partial_fails_every_part(folder, v1_files):
    code, report = folder.check_json(v1_files["all"], v1_files["trace"])
    assert verdicts(report) == {**V1_SAFETY_VERDICTS, **v1_liveness_verdicts("fail")}
    assert (code, report["passed"], report["error_count"], report["warning_count"]) == (1, False, 16, 1)
    assert report.get("partial") in (None, False)
    assert report.get("inconclusive_count", 0) == 0
    assert all(result["passed"] is False for result in report["results"])


def test_v1_only_liveness_rules_on_a_cut_trace_pass_with_exit_0(folder, v1_files):
    code, report = folder.check_json(v1_files["liveness"], v1_files["trace"], "--partial")
    assert verdicts(report) == v1_liveness_verdicts("inconclusive")
    assert_partial_report(report, code, errors=0, warnings=0, inconclusive=6)
    assert all(result["passed"] is True for result in report["results"])


def test_text_output_marks_inconclusive_violations(folder, v1_files):
    code, text = folder.check(v1_files["liveness"], v1_files["trace"], "--partial", fmt="text")
    assert code == 0
    assert text.startswith("PASS"), text
    assert "inconclusive" in text.lower(), text
    assert "✗" not in text, text
    code, text = folder.check(v1_files["all"], v1_files["trace"], "--partial", fmt="text")
    assert code == 1 and text.startswith("FAIL"), text
    lines = text.splitlines()
    # Each shown violation of a liveness rule says it is inconclusive; a judged one does not.
    marked = [line for line in lines if "inconclusive" in line.lower()]
    assert marked, text
    denied = [line for line in lines if "deny_tool.denied" in line]
    assert denied and all("inconclusive" not in line.lower() for line in denied), text
    no_result = [line for line in lines if "tool_result_required.missing" in line]
    assert len(no_result) == 5, text   # refund-result 1 + results 4
    assert all("inconclusive" in line.lower() for line in no_result), text


def test_sarif_gives_inconclusive_results_the_level_note(folder, v1_files):
    code, out = folder.check(v1_files["all"], v1_files["trace"], "--partial", fmt="sarif")
    assert code == 1
    results = json.loads(out)["runs"][0]["results"]
    levels: dict[str, list[str]] = {}
    for result in results:
        levels.setdefault(result["ruleId"], []).append(result["level"])
    for rule_id in V1_SAFETY_VERDICTS:
        assert levels[rule_id] == ["error"], rule_id
    assert levels["needs-outcome"] == ["note"]
    assert levels["refund-result"] == ["note"]          # a warning rule's inconclusive result too
    assert levels["results"] == ["note"] * 4
    assert len(results) == 11 + 6


# -- the v2 kinds (§3.1-§3.9) ---------------------------------------------------------------------

# A v2 run cut short: no terminal (so no output and run status `none`), a refund without result, a
# retry whose result has not come, a failure in the trace's last event.
V2_TRACE = numbered([
    {"type": "run.start", "time": "2026-01-01T10:00:00Z"},
    {"type": "outcome.observed", "outcome_id": "fraud", "verdict": "violated",
     "evidence_class": "configured_verifier"},
    call("get", "g1", args={"id": "A1"}),
    res("g1", result={"paid": 10}, duration_ms=3500),                 # 4: slow, 11 bytes
    call("refund", "r1", args={"order": "B2", "amount": 12}),          # 5
    call("search", "s1", args={"q": "x"}),
    res("s1", ok=False, duration_ms=100),                              # 7: failed, no `result`
    call("email", "m1", args={"to": "x@y"}),                           # 8: neither retry nor message
    call("ping", "p1", args={}),
    res("p1", ok=False, result=None),                                  # 10: failed
    call("ping", "p2", args={}),                                       # 11: its retry, result to come
    call("fetch", "f1", args={}),
    res("f1", ok=False, result=None),                                  # 13: failed, window still open
])

FRAUD = {"outcome": {"outcome_id": "fraud", "verdict": "violated"}}

V2_SAFETY = [
    # §3.1 tool_args (safety): a wrong amount at seq 5 is already decided.
    {"id": "refund-args", "kind": "tool_args", "tool": "refund",
     "match": {"amount": {"$from_result": {"tool": "get", "path": "paid"}}}},
    # §3.3 precedence (safety): no lookup of B2 before the refund.
    {"id": "lookup-first", "kind": "precedence", "before": {"type": "tool.result", "tool": "get", "ok": True},
     "after": {"type": "tool.call", "tool": "refund"}, "correlate": [{"before": "id", "after": "order"}]},
    # §3.4 tool_calls: max is safety (the 2nd ping call, seq 11).
    {"id": "one-ping", "kind": "tool_calls", "tool": "ping", "max": 1},
    # §3.5 approval_bound (safety).
    {"id": "refund-approved", "kind": "approval_bound", "tool": "refund"},
    # §3.6 latency_budget without percentile (safety), result_size (safety).
    {"id": "fast", "kind": "latency_budget", "tool": "get", "max_ms": 2000},
    {"id": "small", "kind": "result_size", "tool": "*", "max_bytes": 8},
    # §3.9 failure_handled (safety, except at the trace's end): the window of seq 7 is seq 8 only.
    {"id": "handle-search", "kind": "failure_handled", "tool": "search", "within_events": 1},
]
V2_LIVENESS = [
    # §3.1 tool_args: liveness with call_index (the call may yet come) or $from_output.
    {"id": "second-refund", "kind": "tool_args", "tool": "refund", "call_index": 1,
     "match": {"order": {"$regex": "^[AB]"}}},
    {"id": "refund-vs-output", "kind": "tool_args", "tool": "refund",
     "match": {"order": {"$regex": "^A"}, "amount": {"$from_output": "total"}}},
    # §3.2 tool_order (liveness), both without seq and at a call.
    {"id": "flow", "kind": "tool_order", "tools": ["get", "refund", "notify"]},
    {"id": "exact-flow", "kind": "tool_order", "tools": ["get", "search"], "mode": "exact"},
    # §3.4 tool_calls: min and matches_output_length are liveness.
    {"id": "notify-all", "kind": "tool_calls", "tool": "notify", "min": 1, "matches_output_length": "notified"},
    # §3.6 the percentile variant of latency_budget, run_duration (liveness).
    {"id": "p50", "kind": "latency_budget", "tool": "get", "max_ms": 2000, "percentile": 50},
    {"id": "quick", "kind": "run_duration", "max_ms": 60000},
    # §3.7 outcome checks (liveness).
    {"id": "true-total", "kind": "output_match",
     "match": {"total": {"$from_result": {"tool": "get", "path": "paid"}}}},
    {"id": "shape", "kind": "output_schema",
     "schema": {"type": "object", "required": ["total", "notified", "refunds"]}},
    {"id": "done", "kind": "run_status", "equals": "completed"},
    # §3.8 conditional obligations (liveness).
    {"id": "refund-iff-cleared", "kind": "required_when", "tool": "refund",
     "when": {"outcome": {"outcome_id": "fraud", "verdict": "satisfied"}}, "iff": True},
    {"id": "notify-on-fraud", "kind": "required_when", "tool": "notify", "when": FRAUD},
    {"id": "refund-iff-reported", "kind": "required_when", "tool": "refund",
     "when": {"path": "refunds", "non_empty": True}, "iff": True},
    {"id": "no-mail-on-fraud", "kind": "forbidden_when", "tool": "email", "when": FRAUD},
    # §3.9 failure_handled "except at the trace's end": a window the trace ends in.
    {"id": "handle-fetch", "kind": "failure_handled", "tool": "fetch", "within_events": 2},
]

V2_SAFETY_VERDICTS = {
    "refund-args": [("tool_args.mismatch", "fail", 5)],
    "lookup-first": [("precedence.missing", "fail", 5)],
    "one-ping": [("tool_calls.max", "fail", 11)],
    "refund-approved": [("approval_bound.missing", "fail", 5)],
    "fast": [("latency_budget.exceeded", "fail", 4)],
    "small": [("result_size.exceeded", "fail", 4), ("result_size.result_missing", "unresolved", 7)],
    "handle-search": [("failure_handled.unhandled", "fail", 7)],
}


def v2_liveness_verdicts(partial: bool) -> dict[str, list[tuple[str, str, int | None]]]:
    """Under --partial every status is inconclusive; without it, point 6's fail/unresolved, and
    point 2's seqs (a violation "at the terminal" has none when there is no terminal)."""
    def v(code: str, plain: str, seq: int | None) -> tuple[str, str, int | None]:
        return (code, "inconclusive" if partial else plain, seq)
    return {
        "second-refund": [v("tool_args.call_missing", "fail", None)],
        "refund-vs-output": sorted([v("tool_args.mismatch", "fail", 5),
                                    v("tool_args.reference_unresolved", "unresolved", 5)]),
        "flow": [v("tool_order.missing", "fail", None)],
        "exact-flow": [v("tool_order.deviation", "fail", 5)],
        "notify-all": sorted([v("tool_calls.min", "fail", None),
                              v("tool_calls.output_unresolved", "unresolved", None)]),
        "p50": [v("latency_budget.exceeded", "fail", None)],
        "quick": [v("run_duration.duration_unresolved", "unresolved", None)],
        "true-total": [v("output_match.output_missing", "unresolved", None)],
        "shape": [v("output_schema.output_missing", "unresolved", None)],
        "done": [v("run_status.mismatch", "fail", None)],
        "refund-iff-cleared": [v("required_when.forbidden", "fail", 5)],
        "notify-on-fraud": [v("required_when.min", "fail", None)],
        "refund-iff-reported": [v("required_when.condition_unresolved", "unresolved", None)],
        "no-mail-on-fraud": [v("forbidden_when.forbidden", "fail", 8)],
        "handle-fetch": [v("failure_handled.unhandled", "fail", 13)],
    }


@pytest.fixture(scope="module")
def v2_files(folder: Folder) -> dict[str, str]:
    return {
        "all": folder.write("v2-all.json", contract(V2_SAFETY + V2_LIVENESS, 2)),
        "liveness": folder.write("v2-liveness.json", contract(V2_LIVENESS, 2)),
        "trace": folder.write("v2-cut.jsonl", jsonl(V2_TRACE)),
    }


@pytest.fixture(scope="module")
def v2_partial(folder: Folder, v2_files: dict[str, str]) -> tuple[int, dict[str, Any]]:
    return folder.check_json(v2_files["all"], v2_files["trace"], "--partial")


def test_v2_safety_parts_are_judged_on_a_cut_trace(v2_partial):
    code, report = v2_partial
    got = verdicts(report)
    for rule_id, expected in V2_SAFETY_VERDICTS.items():
        assert got[rule_id] == expected, rule_id
        assert by_rule(report)[rule_id]["passed"] is False
        assert inconclusive_of(by_rule(report)[rule_id]) == 0


@pytest.mark.parametrize("rule_id", [rule["id"] for rule in V2_LIVENESS])
def test_v2_liveness_parts_are_inconclusive(v2_partial, rule_id):
    code, report = v2_partial
    expected = v2_liveness_verdicts(partial=True)[rule_id]
    assert verdicts(report)[rule_id] == expected
    assert by_rule(report)[rule_id]["passed"] is True
    assert by_rule(report)[rule_id]["inconclusive"] == len(expected)


def test_v2_counts_leave_inconclusive_violations_out(v2_partial):
    code, report = v2_partial
    # judged: refund-args 1, lookup-first 1, one-ping 1, refund-approved 1, fast 1, small 2,
    # handle-search 1; inconclusive: 17 (see v2_liveness_verdicts).
    assert_partial_report(report, code, errors=8, warnings=0, inconclusive=17)


def test_v2_the_same_trace_without_partial_counts_every_violation(folder, v2_files):
    code, report = folder.check_json(v2_files["all"], v2_files["trace"])
    assert verdicts(report) == {**V2_SAFETY_VERDICTS, **v2_liveness_verdicts(partial=False)}
    assert (code, report["passed"], report["error_count"], report["warning_count"]) == (1, False, 25, 0)
    assert report.get("partial") in (None, False)
    assert report.get("inconclusive_count", 0) == 0
    assert all(result["passed"] is False for result in report["results"])


def test_v2_only_liveness_rules_on_a_cut_trace_pass_with_exit_0(folder, v2_files):
    code, report = folder.check_json(v2_files["liveness"], v2_files["trace"], "--partial")
    assert verdicts(report) == v2_liveness_verdicts(partial=True)
    assert_partial_report(report, code, errors=0, warnings=0, inconclusive=17)


def test_failure_handled_waiting_for_the_retrys_result_is_inconclusive_but_a_passed_window_is_judged(folder, v2_files):
    """§3.9 "safety, except at the trace's end"; point 25: with retry_succeeds the retry's paired
    result must exist (anywhere later), which a cut trace cannot yet show (the kind's manual:
    "or whose retry's result has not come")."""
    rules = [{"id": "handle-ping", "kind": "failure_handled", "tool": "ping", "within_events": 3,
              "by": "retry", "retry_succeeds": True},
             {"id": "handle-ping-1", "kind": "failure_handled", "tool": "ping", "within_events": 1,
              "by": "message"}]
    name = folder.write("v2-ping.json", contract(rules, 2))
    code, report = folder.check_json(name, v2_files["trace"], "--partial")
    assert verdicts(report) == {
        "handle-ping": [("failure_handled.unhandled", "inconclusive", 10)],
        # The window (seq 11) passed with no message: judged.
        "handle-ping-1": [("failure_handled.unhandled", "fail", 10)],
    }
    assert_partial_report(report, code, errors=1, warnings=0, inconclusive=1)


def test_latency_budget_without_percentile_is_safety_so_a_result_less_call_is_judged(folder, v2_files):
    """§3.6: "`latency_budget` (safety; the percentile variant is liveness)" and "A negative,
    unparsable or result-less duration is unresolved" (point 22: `duration_unresolved` at the
    call). The kind's manual instead makes `duration_unresolved` of a call whose result has not
    come inconclusive; this test follows the spec's heading."""
    rules = [{"id": "ping-latency", "kind": "latency_budget", "tool": "ping", "max_ms": 2000}]
    name = folder.write("v2-latency.json", contract(rules, 2))
    code, report = folder.check_json(name, v2_files["trace"], "--partial")
    # p1 (seq 9): its result has neither duration_ms nor times; p2 (seq 11): no result.
    assert verdicts(report) == {"ping-latency": [("latency_budget.duration_unresolved", "unresolved", 9),
                                                 ("latency_budget.duration_unresolved", "unresolved", 11)]}
    assert_partial_report(report, code, errors=2, warnings=0, inconclusive=0)


# -- compare --partial ----------------------------------------------------------------------------

COMPARE_RULES = [
    {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"},
    {"id": "says-something", "kind": "require_event", "match": {"type": "agent.message"}},
    {"id": "results", "kind": "tool_result_required"},
]
BASELINE = numbered([call("search", "s1"), res("s1"), call("shell.exec", "x0"), res("x0"),
                     {"type": "agent.message"}, {"type": "run.completed"}])


@pytest.fixture(scope="module")
def compare_files(folder: Folder) -> dict[str, str]:
    # Here `no-shell` denies rm.*: the baseline (which calls shell.exec) passes every rule.
    rules = [{**COMPARE_RULES[0], "tool": "rm.*"}, *COMPARE_RULES[1:]]
    return {
        "contract": folder.write("compare.json", contract(rules, 1)),
        "baseline": folder.write("baseline.jsonl", jsonl(BASELINE)),
        # Cut short after the first call: no result, no message yet, same tools so far.
        "cut": folder.write("cut.jsonl", jsonl(numbered([call("search", "s1"), res("s1"), call("shell.exec", "x0")]))),
        # Cut short too, but with a denied tool already called.
        "denied": folder.write("denied.jsonl", jsonl(numbered([call("search", "s1"), res("s1"),
                                                               call("shell.exec", "x0"), res("x0"),
                                                               call("rm.rf", "d1")]))),
    }


def test_compare_partial_an_inconclusive_violation_is_no_regression(folder, compare_files):
    code, report = folder.compare(compare_files["contract"], compare_files["baseline"], compare_files["cut"],
                                  "--partial")
    candidate = report["candidate"]
    assert verdicts(candidate) == {"no-shell": [],
                                   "says-something": [("require_event.min", "inconclusive", None)],
                                   "results": [("tool_result_required.missing", "inconclusive", 3)]}
    assert (candidate["passed"], candidate["error_count"], candidate["inconclusive_count"]) == (True, 0, 2)
    assert (code, report["compatible"], report["regressions"]) == (0, True, [])


def test_compare_partial_still_reports_a_judged_violation_as_a_regression(folder, compare_files):
    code, report = folder.compare(compare_files["contract"], compare_files["baseline"], compare_files["denied"],
                                  "--partial")
    candidate = report["candidate"]
    assert verdicts(candidate) == {"no-shell": [("deny_tool.denied", "fail", 5)],
                                   "says-something": [("require_event.min", "inconclusive", None)],
                                   "results": [("tool_result_required.missing", "inconclusive", 5)]}
    assert (candidate["error_count"], candidate["inconclusive_count"]) == (1, 2)
    # rm.rf is a new tool too; no regression names the inconclusive rules.
    assert (code, report["compatible"]) == (1, False)
    assert sorted(r["kind"] for r in report["regressions"]) == ["new_rule_failure", "new_tool"]
    failing = [r["evidence"]["rule_id"] for r in report["regressions"] if r["kind"] == "new_rule_failure"]
    assert failing == ["no-shell"]


def test_compare_without_partial_the_cut_candidate_regresses(folder, compare_files):
    code, report = folder.compare(compare_files["contract"], compare_files["baseline"], compare_files["cut"])
    assert (code, report["compatible"]) == (1, False)
    failing = sorted(r["evidence"]["rule_id"] for r in report["regressions"] if r["kind"] == "new_rule_failure")
    assert failing == ["results", "says-something"]


# -- the MCP check and compare tools: `partial` ---------------------------------------------------

def test_mcp_check_and_compare_tools_take_partial(folder, v1_files, v1_partial):
    pytest.importorskip("mcp")
    from test_mcp import CHECK, COMPARE, ok_call, server_session

    mcp_contract = contract(V1_SAFETY + V1_LIVENESS, 1)
    reports: dict[str, Any] = {}

    async def main() -> None:
        with anyio.fail_after(60):
            async with server_session() as session:
                reports["partial"], reports["text"] = await ok_call(
                    session, CHECK, {"contract": mcp_contract, "events": V1_TRACE, "partial": True})
                reports["full"], _ = await ok_call(session, CHECK, {"contract": mcp_contract, "events": V1_TRACE})
                reports["compare"], _ = await ok_call(session, COMPARE, {
                    "contract": contract(COMPARE_RULES, 1), "baseline": BASELINE,
                    "candidate": numbered([call("search", "s1"), res("s1"), call("shell.exec", "x0")]),
                    "partial": True})

    anyio.run(main)
    report = reports["partial"]
    assert verdicts(report) == {**V1_SAFETY_VERDICTS, **v1_liveness_verdicts("inconclusive")}
    assert_partial_report(report, 1, errors=11, warnings=0, inconclusive=6)
    # The same report as `check --partial --format json`, but for what only a file has.
    _, cli_report = v1_partial
    assert verdicts(cli_report) == verdicts(report)
    assert {k: v for k, v in cli_report.items() if k not in ("trace", "results", "violations")} == {
        k: v for k, v in report.items() if k not in ("trace", "results", "violations")}
    assert "inconclusive" in reports["text"].lower()
    assert (reports["full"]["error_count"], reports["full"]["warning_count"]) == (16, 1)
    assert reports["full"].get("partial") in (None, False)
    compared = reports["compare"]
    # no-shell fails in both runs (shell.exec): contract_violation; the liveness rules do not regress.
    assert compared["candidate"]["inconclusive_count"] == 2
    assert [r["kind"] for r in compared["regressions"]] == ["contract_violation"]
    assert compared["regressions"][0]["evidence"]["rule_id"] == "no-shell"
