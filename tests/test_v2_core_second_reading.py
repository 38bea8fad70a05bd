"""The cross-cutting rules of contract version 2, read a second time from the spec's words alone.

Spec v2 §0 (versioning, report extras, statuses, `--partial`, safety and liveness, vacuous and
`checked`, exit codes), §1 (the type rule of every new event field) and §10 points 1-7, 16, 82 and 84
(codes of every kind, v1 kinds included; which violations carry `event_seq`; call/result pairing;
vacuous and `checked`; violation order; unresolved and the exit code; evidence encoding; field typing;
`--partial`; `--safety-exit`), through `check` in the formats json, text, markdown, junit and sarif
where the spec or spec/ci-formats.md says what they must show.

Every case names the sentence or point it checks. Reports that many cases read are computed once per
module (one CLI run per scenario) to keep the file fast.
"""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from support import github_profile_problems, refused_line, sarif_validator, write_contract, write_trace

Rule = dict[str, Any]
Event = dict[str, Any]
Line = Event | str
Report = dict[str, Any]

FORMATS = ("json", "text", "markdown", "junit", "sarif")

# §10.6: the reasons whose status is `unresolved`; every other violation is `fail`.
UNRESOLVED_REASONS = frozenset({
    "args_missing", "reference_unresolved", "distinct_missing", "correlate_missing", "output_missing",
    "output_unresolved", "condition_unresolved", "duration_unresolved", "result_missing",
})


# -- helpers -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What one `check` run gave."""

    code: int
    stdout: str
    stderr: str

    @property
    def report(self) -> Report:
        data: Report = json.loads(self.stdout)
        return data


def run_check(folder: Path, rules: list[Rule], trace: Sequence[Line], *options: str, version: int = 2,
              fmt: str = "json") -> Outcome:
    """`check` of `rules` (a contract named `spec`) against `trace`, written into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    write_contract(folder, rules, version)
    write_trace(folder, list(trace))
    done = Cli(folder)("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", fmt, *options)
    return Outcome(done.returncode, done.stdout, done.stderr)


def violation(report: Report, rule_id: str, code: str) -> dict[str, Any]:
    """The first violation of `rule_id` with `code`."""
    for found in report["violations"]:
        if found["rule_id"] == rule_id and found["code"] == code:
            return dict(found)
    listed = [(found["rule_id"], found["code"]) for found in report["violations"]]
    raise AssertionError(f"no {code} from {rule_id} in {listed}")


def result_of(report: Report, rule_id: str) -> dict[str, Any]:
    return dict(next(result for result in report["results"] if result["rule_id"] == rule_id))


def codes_of(report: Report, rule_id: str) -> list[tuple[str, int | None]]:
    """(code, event_seq) of a rule's violations, in the order its result lists them."""
    return [(found["code"], found.get("event_seq")) for found in result_of(report, rule_id)["violations"]]


def utf16_key(text: str) -> bytes:
    return text.encode("utf-16-be")


def keys_in_canonical_order(value: Any) -> bool:
    """RFC 8785 key order (UTF-16 code units) at every level of a JSON value parsed into pairs."""
    if isinstance(value, list) and value and isinstance(value[0], tuple):
        keys = [key for key, _ in value]
        return keys == sorted(keys, key=utf16_key) and all(keys_in_canonical_order(v) for _, v in value)
    if isinstance(value, list):
        return all(keys_in_canonical_order(item) for item in value)
    return True


def prevented(found: dict[str, Any]) -> bool:
    """`prevented: true` on a violation, as a report field or inside its evidence (the spec does not
    say which)."""
    return found.get("prevented") is True or found.get("evidence", {}).get("prevented") is True


# -- scenarios shared by many cases --------------------------------------------------------------------

# §3.1's example, extended so that every tool_args code occurs once.
ARGS_EVENTS: list[Line] = [
    {"seq": 1, "type": "tool.call", "tool": "get", "call_id": "c1", "args": {"id": "A9"}},
    {"seq": 2, "type": "tool.result", "call_id": "c1", "ok": True, "result": {"paid": 10}},
    {"seq": 3, "type": "tool.call", "tool": "refund", "call_id": "c2", "args": {"order": "A9", "amount": 12}},
    {"seq": 4, "type": "tool.call", "tool": "refund", "call_id": "c3", "args": {"order": "A7", "amount": 5}},
    {"seq": 5, "type": "tool.call", "tool": "refund", "call_id": "c4"},
    {"seq": 6, "type": "tool.call", "tool": "refund", "call_id": "c5", "args": {"order": "A9", "amount": 10}},
    {"seq": 7, "type": "tool.call", "tool": "refund", "call_id": "c6", "args": {"amount": 10}},
]
ARGS_RULES: list[Rule] = [
    {"id": "ta", "kind": "tool_args", "tool": "refund",
     "match": {"order": {"$regex": "^A[0-9]+$"},
               "amount": {"$from_result": {"tool": "get", "path": "paid", "where": {"id": {"$arg": "order"}}}}}},
    {"id": "dist", "kind": "tool_args", "tool": "refund", "distinct": ["order"]},
    {"id": "ci", "kind": "tool_args", "tool": "refund", "call_index": 9, "match": {}},
    {"id": "sch", "kind": "tool_args", "tool": "refund",
     "schema": {"type": "object", "properties": {"amount": {"type": "string"}}}},
]

# One run with a terminal event and an output: most kinds fire once.
RUN_EVENTS: list[Line] = [
    {"seq": 1, "type": "run.start", "time": "2026-01-01T10:00:00Z"},
    {"seq": 2, "type": "tool.call", "tool": "search", "call_id": "s1", "args": {"q": "x"}},
    {"seq": 3, "type": "tool.result", "call_id": "s1", "ok": True, "duration_ms": 3500, "result": {"hits": ["a", "b"]}},
    {"seq": 4, "type": "tool.call", "tool": "search", "call_id": "s2", "args": {"q": "y"}},
    {"seq": 5, "type": "tool.result", "call_id": "s2", "ok": False},
    {"seq": 6, "type": "tool.call", "tool": "refund", "call_id": "r1", "args": {"order": "B2"}},
    {"seq": 7, "type": "run.completed", "time": "2026-01-01T10:02:00Z", "output": {"refunds": ["A1", "A2"]}},
]
RUN_RULES: list[Rule] = [
    {"id": "lat", "kind": "latency_budget", "tool": "search", "max_ms": 2000},
    {"id": "p50", "kind": "latency_budget", "tool": "search", "max_ms": 2000, "percentile": 50},
    {"id": "size", "kind": "result_size", "tool": "search", "max_bytes": 10},
    {"id": "quick", "kind": "run_duration", "max_ms": 60000},
    {"id": "status", "kind": "run_status", "equals": "failed"},
    {"id": "plan", "kind": "tool_order", "tools": ["refund", "search"]},
    {"id": "plan-contiguous", "kind": "tool_order", "tools": ["refund", "search"], "mode": "contiguous"},
    {"id": "plan-any", "kind": "tool_order", "tools": ["refund", "refund"], "mode": "any_order"},
    {"id": "plan-exact", "kind": "tool_order", "tools": ["search", "refund"], "mode": "exact"},
    {"id": "at-most", "kind": "tool_calls", "tool": "search", "max": 1},
    {"id": "at-least", "kind": "tool_calls", "tool": "search", "min": 3},
    {"id": "as-reported", "kind": "tool_calls", "tool": "refund", "matches_output_length": "refunds"},
    {"id": "unreported", "kind": "tool_calls", "tool": "refund", "matches_output_length": "nothere"},
    {"id": "approved", "kind": "approval_bound", "tool": "refund"},
    {"id": "handled", "kind": "failure_handled", "tool": "search", "within_events": 1},
    {"id": "mail-when", "kind": "required_when", "tool": "email", "when": {"path": "refunds", "non_empty": True}},
    {"id": "refund-iff", "kind": "required_when", "tool": "refund", "when": {"path": "refunds", "equals": []},
     "iff": True},
    {"id": "req-unknown", "kind": "required_when", "tool": "refund", "when": {"path": "zzz", "equals": 1}},
    {"id": "no-refund", "kind": "forbidden_when", "tool": "refund", "when": {"path": "refunds", "non_empty": True}},
    {"id": "forb-unknown", "kind": "forbidden_when", "tool": "refund", "when": {"path": "zzz", "equals": 1}},
    {"id": "out", "kind": "output_match", "match": {"refunds": []}},
    {"id": "out-ref", "kind": "output_match", "match": {"x": {"$from_result": {"tool": "nope"}}}},
    {"id": "out-when", "kind": "output_match", "match": {}, "when": {"path": "zzz", "equals": 1}},
    {"id": "shape", "kind": "output_schema", "schema": {"type": "object", "required": ["total"]}},
    {"id": "lookup", "kind": "precedence", "before": {"type": "tool.call", "tool": "get"},
     "after": {"type": "tool.call", "tool": "refund"}},
]

# §3.3 with scope all, a correlate and a window: every precedence code once.
PRECEDENCE_EVENTS: list[Line] = [
    {"seq": 1, "type": "tool.call", "tool": "refund", "call_id": "c0", "args": {"order": "A1"}},
    {"seq": 2, "type": "tool.call", "tool": "get", "call_id": "c1", "args": {"id": "A1"}},
    {"seq": 3, "type": "tool.call", "tool": "refund", "call_id": "c2", "args": {"x": "B2"}},
    {"seq": 4, "type": "tool.call", "tool": "get", "call_id": "c3", "args": {"id": "Z"}},
    {"seq": 5, "type": "tool.call", "tool": "noop", "call_id": "c4"},
    {"seq": 6, "type": "tool.call", "tool": "noop", "call_id": "c5"},
    {"seq": 7, "type": "tool.call", "tool": "refund", "call_id": "c6", "args": {"order": "Z"}},
    {"seq": 8, "type": "tool.call", "tool": "refund", "call_id": "c7", "args": {"order": "Q"}},
]
PRECEDENCE_RULES: list[Rule] = [
    {"id": "keyed", "kind": "precedence", "before": {"type": "tool.call", "tool": "get"},
     "after": {"type": "tool.call", "tool": "refund"}, "correlate": [{"before": "id", "after": "order"}],
     "within_events": 2, "scope": "all"},
]

# No terminal event: every "at the terminal" violation has no seq (§10.2).
OPEN_EVENTS: list[Line] = [
    {"seq": 1, "type": "outcome.observed", "outcome_id": "o", "verdict": "satisfied"},
    {"seq": 2, "type": "tool.call", "tool": "x", "call_id": "c1"},
]
OPEN_RULES: list[Rule] = [
    {"id": "out", "kind": "output_match", "match": {}},
    {"id": "out-when", "kind": "output_match", "match": {}, "when": {"path": "a", "equals": 1}},
    {"id": "shape", "kind": "output_schema", "schema": {}},
    {"id": "status", "kind": "run_status", "equals": "completed"},
    {"id": "quick", "kind": "run_duration", "max_ms": 5},
    {"id": "as-reported", "kind": "tool_calls", "tool": "x", "matches_output_length": "items"},
    {"id": "mail-when", "kind": "required_when", "tool": "email",
     "when": {"outcome": {"outcome_id": "o", "verdict": "satisfied"}}},
    {"id": "req-unknown", "kind": "required_when", "tool": "x", "when": {"path": "a", "equals": 1}},
    {"id": "forb-unknown", "kind": "forbidden_when", "tool": "x", "when": {"path": "a", "equals": 1}},
]

# A terminal without `output`.
BARE_EVENTS: list[Line] = [
    {"seq": 1, "type": "tool.call", "tool": "x", "call_id": "c1"},
    {"seq": 2, "type": "run.completed"},
]
BARE_RULES: list[Rule] = [
    {"id": "out", "kind": "output_match", "match": {}},
    {"id": "shape", "kind": "output_schema", "schema": {}},
]

# Every v1 kind fires once (v1 §4).
V1_EVENTS: list[Line] = [
    {"seq": 1, "type": "run.start"},
    {"seq": 2, "type": "tool.call", "tool": "shell.exec", "call_id": "c1", "call_signature": "sig"},
    {"seq": 3, "type": "tool.result", "call_id": "c1", "ok": False},
    {"seq": 4, "type": "tool.call", "tool": "shell.exec", "call_id": "c2", "call_signature": "sig"},
    {"seq": 5, "type": "control.stop"},
    {"seq": 6, "type": "tool.call", "tool": "pay", "call_id": "c3"},
    {"seq": 7, "type": "agent.message", "claims_completion": True, "confidence": 0.9},
    {"seq": 8, "type": "run.completed"},
]
V1_RULES: list[Rule] = [
    {"id": "deny", "kind": "deny_tool", "tool": "shell.*"},
    {"id": "allow", "kind": "allow_tools", "tools": ["shell.*"]},
    {"id": "approval", "kind": "require_approval", "tool": "pay", "scope": "pay", "within_events": 3},
    {"id": "stop", "kind": "stop_is_final"},
    {"id": "completion", "kind": "completion_requires_outcome"},
    {"id": "confidence", "kind": "confidence_requires_outcome", "threshold": 0.5},
    {"id": "retries", "kind": "retry_limit", "max_attempts": 1},
    {"id": "budget", "kind": "event_budget", "max_events": 1, "max_tool_calls": 1, "max_tool_failures": 0},
    {"id": "order", "kind": "require_order", "before": {"type": "approval.granted"},
     "after": {"type": "tool.call", "tool": "pay"}},
    {"id": "needs-outcome", "kind": "require_event", "match": {"type": "outcome.observed"}},
    {"id": "one-call", "kind": "require_event", "match": {"type": "tool.call"}, "max": 1},
    {"id": "no-stop", "kind": "deny_event", "match": {"type": "control.stop"}},
    {"id": "results", "kind": "tool_result_required"},
]

SCENARIOS: dict[str, tuple[list[Rule], list[Line]]] = {
    "args": (ARGS_RULES, ARGS_EVENTS),
    "run": (RUN_RULES, RUN_EVENTS),
    "precedence": (PRECEDENCE_RULES, PRECEDENCE_EVENTS),
    "open": (OPEN_RULES, OPEN_EVENTS),
    "bare": (BARE_RULES, BARE_EVENTS),
    "v1": (V1_RULES, V1_EVENTS),
}


@pytest.fixture(scope="module")
def catalogue(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Report]:
    """The JSON report of every scenario (version-2 contracts, `--no-lint`: some scenarios hold rules
    that lint would call contradictory, and §10.8 lets `--no-lint` check them anyway)."""
    reports: dict[str, Report] = {}
    for name, (rules, events) in SCENARIOS.items():
        outcome = run_check(tmp_path_factory.mktemp(name), rules, events, "--no-lint")
        assert outcome.code == 1, outcome.stderr
        reports[name] = outcome.report
    return reports


# -- §0 versioning ------------------------------------------------------------------------------------


def test_version_1_contract_refuses_a_new_kind(cli: Cli, tmp_path: Path) -> None:
    """§0: "A `version: 1` contract is validated exactly as Node does, so new kinds or keys exit 2"."""
    write_contract(tmp_path, [{"id": "calls", "kind": "tool_calls", "tool": "a", "max": 0}], version=1)
    write_trace(tmp_path, [{"type": "tool.call", "tool": "a"}])
    assert "$.rules[0]" in refused_line(cli)


@pytest.mark.parametrize("rule", [
    {"id": "r", "kind": "deny_event", "match": {"type": "tool.call", "args": {"a": 1}}},
    {"id": "r", "kind": "deny_event", "match": {"type": "control.stop", "reason": "user*"}},
    {"id": "r", "kind": "require_event", "match": {"type": "run.completed", "status": "completed"}},
    {"id": "r", "kind": "stop_is_final", "reasons": ["user*"]},
], ids=["matcher-args", "matcher-reason", "matcher-status", "stop-reasons"])
def test_version_1_contract_refuses_a_new_key(cli: Cli, tmp_path: Path, rule: Rule) -> None:
    """§0: "Any new kind, field or matcher key requires it" (`version: 2`); a v1 contract using one
    exits 2 (§2 adds matcher `args`/`reason`/`status` and `stop_is_final.reasons`)."""
    write_contract(tmp_path, [rule], version=1)
    write_trace(tmp_path, [{"type": "tool.call", "tool": "a"}])
    assert "$.rules[0]" in refused_line(cli)


@pytest.mark.parametrize("version", [3, "2"])
def test_version_must_be_the_number_1_or_2(cli: Cli, tmp_path: Path, version: Any) -> None:
    """§0 `"version": 2` and v1 §2.1 (the version is a number; "the string `"1"` ... is rejected")."""
    (tmp_path / "c.json").write_text(json.dumps({"version": version, "name": "spec", "rules": [
        {"id": "r", "kind": "deny_tool", "tool": "a"}]}), encoding="utf-8")
    write_trace(tmp_path, [{"type": "tool.call", "tool": "a"}])
    assert "$.version" in refused_line(cli)


def test_report_keeps_check_v1_schema_with_contract_version_2(catalogue: dict[str, Report]) -> None:
    """§0: "Reports keep `schema: agent-invariants/check/v1` (with `contract.version: 2`)"."""
    report = catalogue["run"]
    assert report["schema"] == "agent-invariants/check/v1"
    assert report["contract"] == {"name": "spec", "version": 2}


@pytest.fixture(scope="module")
def v1_contract_report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    """The v1 scenario checked under a version-1 contract."""
    outcome = run_check(tmp_path_factory.mktemp("v1-contract"), V1_RULES, V1_EVENTS, version=1)
    assert outcome.code == 1, outcome.stderr
    return outcome.report


def test_v1_kinds_keep_results_under_version_2(catalogue: dict[str, Report], v1_contract_report: Report) -> None:
    """§0: "v1 kinds inside a v2 contract keep identical verdicts, evidence and messages"; §10.1: "v1
    kinds keep message and evidence identical to v1"."""
    assert catalogue["v1"]["results"] == v1_contract_report["results"]
    assert catalogue["v1"]["violations"] == v1_contract_report["violations"]
    assert (catalogue["v1"]["error_count"], catalogue["v1"]["warning_count"]) == (19, 0)


# v1 quirks (v1 §12) that a version-2 contract must keep: duplicate call ids resolved by the last
# result, stop_is_final once per stop, require_approval's id AND scope, a tool-less call, `?`/`*` and
# newlines, an untrimmed matcher type, results read through their own `tool` only.
QUIRK_EVENTS: list[Line] = [
    {"seq": 1, "type": "approval.granted", "approval_id": "g1", "approval_scope": "pay", "tool": "other"},
    {"seq": 2, "type": "tool.call", "tool": "pay", "call_id": "c1", "approval_id": "g1", "call_signature": "pay"},
    {"seq": 3, "type": "tool.call", "tool": "pay", "call_id": "c1", "args": {"a": 1}},
    {"seq": 4, "type": "tool.result", "call_id": "c1", "ok": True, "tool": "pay"},
    {"seq": 5, "type": "tool.result", "call_id": "zz", "ok": False},
    {"seq": 6, "type": "control.stop", "reason": "user"},
    {"seq": 7, "type": "control.stop"},
    {"seq": 8, "type": "tool.call", "call_id": "c9"},
    {"seq": 9, "type": "tool.call", "tool": "a\nb", "call_id": "c10"},
    {"seq": 10, "type": "outcome.observed", "outcome_id": "o", "verdict": "satisfied",
     "evidence_class": "externally_observed"},
    {"seq": 11, "type": "outcome.observed", "outcome_id": "o", "verdict": "violated",
     "evidence_class": "externally_observed"},
    {"seq": 12, "type": "tool.denied", "call_id": "c10"},
    {"seq": 13, "type": "run.completed", "claims_completion": False, "status": "failed"},
]
QUIRK_RULES: list[Rule] = [
    {"id": "approval", "kind": "require_approval", "tool": "pay", "scope": "pay"},
    {"id": "retries", "kind": "retry_limit", "max_attempts": 1},
    {"id": "results", "kind": "tool_result_required"},
    {"id": "stop", "kind": "stop_is_final"},
    {"id": "allow", "kind": "allow_tools", "tools": ["*"]},
    {"id": "deny", "kind": "deny_tool", "tool": "a*"},
    {"id": "completion", "kind": "completion_requires_outcome"},
    {"id": "two-results", "kind": "require_event", "match": {"type": "tool.result", "tool": "pay"}, "min": 2},
    {"id": "order", "kind": "require_order", "before": {"type": "tool.result"}, "after": {"type": "run.completed"}},
    {"id": "budget", "kind": "event_budget", "max_tool_failures": 0},
    {"id": "spaced", "kind": "deny_event", "match": {"type": "run.completed ", "ok": True}},
]


def test_v1_quirks_are_kept_under_version_2(tmp_path: Path) -> None:
    """§0 and §10.1: a v1 kind in a version-2 contract gives the verdicts, evidence and messages of
    version 1, quirks included (v1 §14: "Fixes to those quirks arrive as opt-in extensions")."""
    one = run_check(tmp_path / "one", QUIRK_RULES, QUIRK_EVENTS, version=1)
    two = run_check(tmp_path / "two", QUIRK_RULES, QUIRK_EVENTS, "--no-lint", version=2)
    assert (one.code, two.code) == (1, 1)
    # but for point 75's `prevented` at the denied call, a field version 2 adds to every kind's violations
    assert one.report["results"] == without_prevented(two.report["results"])
    assert one.report["error_count"] == two.report["error_count"] == 16


def without_prevented(value: Any) -> Any:
    """The value with every `"prevented": true` member left out."""
    if isinstance(value, dict):
        return {key: without_prevented(item) for key, item in value.items() if key != "prevented"}
    if isinstance(value, list):
        return [without_prevented(item) for item in value]
    return value


# -- §10.1 codes, §10.2 event_seq, §10.6 status --------------------------------------------------------

# (scenario, rule id, code, event_seq or None, status)
CODE_ROWS: list[tuple[str, str, str, int | None, str]] = [
    # tool_args (§3.1; §10.2: at the call except call_missing)
    ("args", "ta", "tool_args.mismatch", 3, "fail"),
    ("args", "ta", "tool_args.reference_unresolved", 4, "unresolved"),
    ("args", "ta", "tool_args.args_missing", 5, "unresolved"),
    ("args", "sch", "tool_args.schema", 3, "fail"),
    ("args", "dist", "tool_args.not_distinct", 6, "fail"),
    ("args", "dist", "tool_args.distinct_missing", 7, "unresolved"),
    ("args", "ci", "tool_args.call_missing", None, "fail"),
    # tool_order (§10.1 table; §10.2: deviation at the call, missing without seq)
    ("run", "plan", "tool_order.missing", None, "fail"),
    ("run", "plan-contiguous", "tool_order.missing", None, "fail"),
    ("run", "plan-any", "tool_order.missing", None, "fail"),
    ("run", "plan-exact", "tool_order.deviation", 4, "fail"),
    # precedence (§3.3; §10.2: at the after, before_after_action at the before)
    ("precedence", "keyed", "precedence.late", 1, "fail"),
    ("precedence", "keyed", "precedence.before_after_action", 2, "fail"),
    ("precedence", "keyed", "precedence.correlate_missing", 3, "unresolved"),
    ("precedence", "keyed", "precedence.out_of_window", 7, "fail"),
    ("precedence", "keyed", "precedence.missing", 8, "fail"),
    ("run", "lookup", "precedence.missing", 6, "fail"),
    # tool_calls (§3.4; §10.2: max at the call, output_* at the terminal, min without seq)
    ("run", "at-most", "tool_calls.max", 4, "fail"),
    ("run", "at-least", "tool_calls.min", None, "fail"),
    ("run", "as-reported", "tool_calls.output_mismatch", 7, "fail"),
    ("run", "unreported", "tool_calls.output_unresolved", 7, "unresolved"),
    ("open", "as-reported", "tool_calls.output_unresolved", None, "unresolved"),
    # approval_bound (§3.5)
    ("run", "approved", "approval_bound.missing", 6, "fail"),
    # latency_budget, result_size, run_duration (§10.1 table; §10.2)
    ("run", "lat", "latency_budget.exceeded", 3, "fail"),
    ("run", "lat", "latency_budget.duration_unresolved", 4, "unresolved"),
    ("run", "p50", "latency_budget.exceeded", None, "fail"),
    ("run", "p50", "latency_budget.duration_unresolved", None, "unresolved"),
    ("run", "size", "result_size.exceeded", 3, "fail"),
    ("run", "size", "result_size.result_missing", 5, "unresolved"),
    ("run", "quick", "run_duration.exceeded", 7, "fail"),
    ("open", "quick", "run_duration.duration_unresolved", None, "unresolved"),
    # output checks (§3.7; §10.2: at the terminal, no seq without one)
    ("run", "status", "run_status.mismatch", 7, "fail"),
    ("open", "status", "run_status.mismatch", None, "fail"),
    ("run", "out", "output_match.mismatch", 7, "fail"),
    ("run", "out-ref", "output_match.reference_unresolved", 7, "unresolved"),
    ("run", "out-when", "output_match.condition_unresolved", 7, "unresolved"),
    ("open", "out-when", "output_match.condition_unresolved", None, "unresolved"),
    ("bare", "out", "output_match.output_missing", 2, "unresolved"),
    ("open", "out", "output_match.output_missing", None, "unresolved"),
    ("run", "shape", "output_schema.schema", 7, "fail"),
    ("bare", "shape", "output_schema.output_missing", 2, "unresolved"),
    ("open", "shape", "output_schema.output_missing", None, "unresolved"),
    # conditional obligations (§3.8, §10.24; §10.2)
    ("run", "mail-when", "required_when.min", 7, "fail"),
    ("open", "mail-when", "required_when.min", None, "fail"),
    ("run", "refund-iff", "required_when.forbidden", 6, "fail"),
    ("run", "req-unknown", "required_when.condition_unresolved", 7, "unresolved"),
    ("open", "req-unknown", "required_when.condition_unresolved", None, "unresolved"),
    ("run", "no-refund", "forbidden_when.forbidden", 6, "fail"),
    ("run", "forb-unknown", "forbidden_when.condition_unresolved", 7, "unresolved"),
    ("open", "forb-unknown", "forbidden_when.condition_unresolved", None, "unresolved"),
    # failure_handled (§3.9; §10.2: at the result)
    ("run", "handled", "failure_handled.unhandled", 5, "fail"),
    # the twelve v1 kinds (§10.1 "v1 kinds" row; positions as in v1 §4)
    ("v1", "deny", "deny_tool.denied", 2, "fail"),
    ("v1", "allow", "allow_tools.not_allowed", 6, "fail"),
    ("v1", "approval", "require_approval.missing", 6, "fail"),
    ("v1", "stop", "stop_is_final.after_stop", 6, "fail"),
    ("v1", "completion", "completion_requires_outcome.missing", 7, "fail"),
    ("v1", "confidence", "confidence_requires_outcome.missing", 7, "fail"),
    ("v1", "retries", "retry_limit.exceeded", 4, "fail"),
    ("v1", "budget", "event_budget.events", None, "fail"),
    ("v1", "budget", "event_budget.tool_calls", None, "fail"),
    ("v1", "budget", "event_budget.tool_failures", None, "fail"),
    ("v1", "order", "require_order.missing", 6, "fail"),
    ("v1", "needs-outcome", "require_event.min", None, "fail"),
    ("v1", "one-call", "require_event.max", 2, "fail"),
    ("v1", "no-stop", "deny_event.matched", 5, "fail"),
    ("v1", "results", "tool_result_required.missing", 4, "fail"),
]


@pytest.mark.parametrize(("scenario", "rule_id", "code", "seq", "status"), CODE_ROWS,
                         ids=[f"{row[0]}-{row[1]}-{row[2]}" for row in CODE_ROWS])
def test_code_has_its_place_and_status(catalogue: dict[str, Report], scenario: str, rule_id: str, code: str,
                                       seq: int | None, status: str) -> None:
    """§10.1 (every code, `<kind>.<reason>` of the rule's own kind), §10.2 (which violations carry
    `event_seq`: at the call, result, after, before or terminal; none for the listed codes and for
    terminal ones when there is no terminal; `event_index` travels with it) and §10.6 (`status`)."""
    found = violation(catalogue[scenario], rule_id, code)
    assert found.get("event_seq") == seq
    assert found.get("event_index") == (None if seq is None else seq - 1)
    assert found["status"] == status


@pytest.mark.parametrize("version", [1, 2])
def test_v1_kinds_carry_code_and_fail_status_in_both_versions(catalogue: dict[str, Report],
                                                             v1_contract_report: Report, version: int) -> None:
    """§10.1: `code` "(and `status: "fail"`) are the only additions, emitted for version-1 contracts
    too"."""
    report = v1_contract_report if version == 1 else catalogue["v1"]
    expected = sorted({row[2] for row in CODE_ROWS if row[0] == "v1"})
    assert sorted({found["code"] for found in report["violations"]}) == expected
    assert {found["status"] for found in report["violations"]} == {"fail"}


def test_call_index_counts_calls_matching_the_rules_glob(catalogue: dict[str, Report]) -> None:
    """§0 definitions: "*Call index k*: the k-th `tool.call` (0-based) matching the rule's tool glob"
    (the earlier call of `get` does not count for a rule on `refund`)."""
    found = [(v["event_seq"], v["evidence"]["call_index"]) for v in result_of(catalogue["args"], "ta")["violations"]]
    assert found[:3] == [(3, 0), (4, 1), (5, 2)]


def test_every_code_is_made_from_the_rules_own_kind(catalogue: dict[str, Report]) -> None:
    """§10.1: "every violation in a report carries a code made from the *rule's own* kind"."""
    for report in catalogue.values():
        for found in report["violations"]:
            assert found["code"].startswith(found["rule_kind"] + "."), found


def test_status_is_unresolved_exactly_for_the_listed_reasons(catalogue: dict[str, Report]) -> None:
    """§10.6: "`status` is `unresolved` for args_missing, reference_unresolved, ... result_missing,
    `fail` otherwise; `inconclusive` appears only under `--partial`"."""
    for report in catalogue.values():
        for found in report["violations"]:
            reason = found["code"].split(".", 1)[1]
            assert found["status"] == ("unresolved" if reason in UNRESOLVED_REASONS else "fail"), found


def test_event_index_travels_with_event_seq(catalogue: dict[str, Report]) -> None:
    """§10.2: "`event_index` travels with `event_seq` as in v1"."""
    for report in catalogue.values():
        for found in report["violations"]:
            assert ("event_seq" in found) == ("event_index" in found), found


def test_unresolved_violations_count_as_errors(catalogue: dict[str, Report]) -> None:
    """§10.6: "every violation has its rule's severity, counts in `error_count`/`warning_count` and fails
    the rule, whatever its status"."""
    report = catalogue["open"]
    assert report["error_count"] == len(report["violations"]) == 9
    assert all(not result["passed"] for result in report["results"])
    assert report["passed"] is False


def test_unresolved_warning_counts_as_a_warning(tmp_path: Path) -> None:
    """§10.6: an unresolved violation of a warning rule counts in `warning_count` and fails the rule;
    warnings never fail the check (v1 §5), so the exit is 0."""
    rules = [{"id": "shape", "kind": "output_schema", "schema": {}, "severity": "warning"}]
    outcome = run_check(tmp_path, rules, [{"type": "tool.call", "tool": "a", "call_id": "c1"}])
    assert outcome.code == 0
    report = outcome.report
    assert (report["error_count"], report["warning_count"], report["passed"]) == (0, 1, True)
    assert result_of(report, "shape")["passed"] is False
    assert report["violations"][0]["status"] == "unresolved"


def test_unknown_severity_is_refused(cli: Cli, tmp_path: Path) -> None:
    """§0: "There is no new severity or exit code"."""
    write_contract(tmp_path, [{"id": "r", "kind": "tool_calls", "tool": "a", "max": 0, "severity": "critical"}])
    write_trace(tmp_path, [{"type": "tool.call", "tool": "a"}])
    assert "$.rules[0].severity" in refused_line(cli)


# -- §0 report extras ----------------------------------------------------------------------------------


def test_pointers_are_rfc6901_pointers_into_the_event(catalogue: dict[str, Report]) -> None:
    """§0 report extras: `pointer` (RFC 6901, into the event); §10.7: pointers are `/args/…`,
    `/output/…`, `/result/…`."""
    pointers = [found["pointer"] for report in catalogue.values() for found in report["violations"]
                if "pointer" in found]
    assert pointers
    for pointer in pointers:
        assert pointer.split("/")[1] in ("args", "output", "result"), pointer


def test_mismatch_pointer_names_the_argument(catalogue: dict[str, Report]) -> None:
    """§3.1 example: "seq 3: `mismatch` at `/args/amount` (expected any of [10], got 12)"."""
    found = violation(catalogue["args"], "ta", "tool_args.mismatch")
    assert found["pointer"] == "/args/amount"
    assert found["evidence"]["mismatches"] == [{"pointer": "/args/amount", "expected": {"any_of": [10]},
                                                "actual": 12}]


@pytest.mark.parametrize(("node", "amount", "said"), [
    ({"$gt": 0, "$lte": {"$from_result": {"tool": "orders.get", "path": "paid"}}}, 59.9,
     'expected {"$gt":0,"$lte":{"$from_result":{"path":"paid","tool":"orders.get"}}} where $lte is 49.9, got 59.9'),
    ({"$in": {"$from_result": {"tool": "orders.get", "path": "refundable"}}}, 5,
     'expected {"$in":{"$from_result":{"path":"refundable","tool":"orders.get"}}} where $in is any of [10,20], '
     "got 5"),
    # the operators in the order `expected` shows them, each reference with what it resolved to
    ({"$lte": {"$from_result": {"tool": "orders.get", "path": "paid"}}, "$gte": {"$arg": "floor"}}, 59.9,
     'expected {"$gte":{"$arg":"floor"},"$lte":{"$from_result":{"path":"paid","tool":"orders.g… '   # (cut at 80)
     "where $gte is 1, $lte is 49.9, got 59.9"),
    # inside $any_of, each failed branch's references, named by their place in it
    ({"$any_of": [{"$lte": {"$from_result": {"tool": "orders.get", "path": "paid"}}}, 0]}, 59.9,
     'expected {"$any_of":[{"$lte":{"$from_result":{"path":"paid","tool":"orders.get"}}},0]} '
     "where $any_of[0].$lte is 49.9, got 59.9"),
    ({"$any_of": [{"$from_result": {"tool": "orders.get", "path": "paid"}}, {"$in": [1, 2]}]}, 59.9,
     'expected {"$any_of":[{"$from_result":{"path":"paid","tool":"orders.get"}},{"$in":[1,2]}]… '   # (cut at 80)
     "where $any_of[0] is any of [49.9], got 59.9"),
])
def test_a_mismatch_of_operators_on_references_says_what_they_resolved_to(tmp_path: Path, node: Any, amount: Any,
                                                                          said: str) -> None:
    """§10 point 7: `expected` is the node as written (so the evidence does not hold the value the
    reference found); the message says it, or it could not say why the value failed."""
    rules = [{"id": "ta", "kind": "tool_args", "tool": "payments.refund", "match": {"amount": node}}]
    trace = [{"type": "tool.call", "tool": "orders.get", "call_id": "g"},
             {"type": "tool.result", "tool": "orders.get", "call_id": "g", "ok": True,
              "result": {"paid": 49.9, "refundable": [10, 20]}},
             {"type": "tool.call", "tool": "payments.refund", "call_id": "r", "args": {"amount": amount, "floor": 1}}]
    found = violation(run_check(tmp_path, rules, trace).report, "ta", "tool_args.mismatch")
    assert found["message"] == f"Args of payments.refund at seq 3 do not match: /args/amount {said}."
    assert found["evidence"]["mismatches"] == [{"pointer": "/args/amount", "expected": node, "actual": amount}]


def test_a_mismatch_names_what_at_most_20_failed_branches_resolved_to_in_their_order(tmp_path: Path) -> None:
    """Standards: memory stays bounded. A tree of nested `$any_of` whose leaves compare with a
    reference said what each of its 2,197 leaves resolved to in every message (105 KB a message,
    219 MB of JSON for 1,000 calls): it names the first 20 failed branches, in their order
    (`$any_of[2]` before `$any_of[10]`), then how many more."""
    leaf: Any = {"$lte": {"$from_result": {"tool": "orders.get", "path": "paid"}}}
    node: Any = {"$any_of": [leaf] * 13}
    for _ in range(2):
        node = {"$any_of": [node] * 13}
    rules = [{"id": "ta", "kind": "tool_args", "tool": "payments.refund", "match": {"amount": node}}]
    trace = [{"type": "tool.call", "tool": "orders.get", "call_id": "g"},
             {"type": "tool.result", "tool": "orders.get", "call_id": "g", "ok": True, "result": {"paid": 49.9}},
             {"type": "tool.call", "tool": "payments.refund", "call_id": "r", "args": {"amount": 59.9}}]
    message = violation(run_check(tmp_path, rules, trace).report, "ta", "tool_args.mismatch")["message"]
    where = message.split(" where ", 1)[1]
    names = [f"$any_of[0].$any_of[0].$any_of[{n}].$lte is 49.9" for n in range(13)] + \
            [f"$any_of[0].$any_of[1].$any_of[{n}].$lte is 49.9" for n in range(7)]
    assert where == ", ".join(names) + f", and {13 ** 3 - 20} more, got 59.9."


def test_the_evidence_of_a_huge_or_deep_value_is_cut_to_a_bounded_size(tmp_path: Path) -> None:
    """Standards: memory stays bounded on any input. A mismatch's `actual` is a trace value, and a
    rule keeps up to --max-violations of them: each violation keeps about 20,000 characters and 32
    levels of evidence, its `pointer` and `expected` whole, the cuts marked."""
    deep: Any = "leaf"
    for _ in range(100):
        deep = [deep]
    rules = [{"id": "ta", "kind": "tool_args", "tool": "t", "match": {"x": {"a": 2}, "y": {"b": 1}}}]
    trace = [{"type": "tool.call", "tool": "t", "call_id": f"c{n}", "args": {"x": list(range(50_000)), "y": deep}}
             for n in range(30)]
    outcome = run_check(tmp_path, rules, trace)
    assert outcome.code == 1 and len(outcome.stdout) < 3_000_000
    evidence = violation(outcome.report, "ta", "tool_args.mismatch")["evidence"]
    big, nested = evidence["mismatches"]
    assert (big["pointer"], big["expected"], nested["pointer"], nested["expected"]) == (
        "/args/x", {"a": 2}, "/args/y", {"b": 1})
    kept = len(big["actual"]) - 1
    assert 500 < kept < 5_000 and big["actual"][:kept] == list(range(kept))
    assert big["actual"][-1] == f"… {50_000 - kept} more"
    level, depth = nested["actual"], 0
    while isinstance(level, list):
        level, depth = level[0], depth + 1
    assert (level, depth) == ("… nested deeper", 29)   # 32 levels of evidence, 3 of them above the value


def test_a_schema_whose_references_multiply_with_the_depth_of_the_args_stops_at_a_bound(tmp_path: Path) -> None:
    """Each level of the args doubles the references this schema follows (no circle: each one
    descends); a sample value at load follows one. A check follows at most 1,000 and 100 per node
    of the value, then says the schema cannot be applied to it, and goes on."""
    schema = {"$defs": {"n": {"properties": {"a": {"allOf": [{"$ref": "#/$defs/n"}, {"$ref": "#/$defs/n"}]}}}},
              "$ref": "#/$defs/n"}
    deep: Any = {}
    for _ in range(30):
        deep = {"a": deep}
    rules = [{"id": "shape", "kind": "tool_args", "tool": "t", "schema": schema}]
    trace = [{"type": "tool.call", "tool": "t", "call_id": "c1", "args": deep},
             {"type": "tool.call", "tool": "t", "call_id": "c2", "args": {"a": {"a": {}}}}]
    report = run_check(tmp_path, rules, trace).report
    assert [(found["event_seq"], found["code"], found["evidence"]["errors"]) for found in report["violations"]] == [
        (1, "tool_args.schema", [{"pointer": "/args", "message": "the schema cannot be applied: its references were "
                                  "followed more than 4,100 times for one value, the most allowed (1,000, and 100 "
                                  "for each node of the value)"}])]


def test_a_schema_of_many_mixins_on_many_small_items_is_applied(tmp_path: Path) -> None:
    """Twelve `$ref` mixins on each of 1,000 empty objects follow 12,000 references, linearly in
    the value: within the bound, so the schema judges the value (found by the twenty-first hunt)."""
    mixins = {f"m{n}": {"type": "object"} for n in range(12)}
    schema = {"$defs": mixins, "properties": {"items": {
        "type": "array", "items": {"allOf": [{"$ref": f"#/$defs/{name}"} for name in mixins]}}}}
    rules = [{"id": "shape", "kind": "tool_args", "tool": "t", "schema": schema}]
    trace = [{"type": "tool.call", "tool": "t", "call_id": "c1", "args": {"items": [{}] * 1000}},
             {"type": "tool.call", "tool": "t", "call_id": "c2", "args": {"items": [{}] * 999 + [1]}}]
    report = run_check(tmp_path, rules, trace).report
    assert [(found["event_seq"], found["evidence"]["errors"][0]["pointer"]) for found in report["violations"]] == [
        (2, "/args/items/999")]


def test_a_schema_message_writes_a_large_value_as_json_too(tmp_path: Path) -> None:
    """A schema error quotes the value as JSON (`true`, `null`, `"s0"`), also when it is large (its
    start, then `…`), not in Python's spelling (found by the twenty-first hunt)."""
    rules = [{"id": "shape", "kind": "tool_args", "tool": "t", "schema": {"properties": {"x": {"type": "object"}}}}]
    trace = [{"type": "tool.call", "tool": "t", "call_id": "c1", "args": {"x": [True, None, "s0"] * 1000}}]
    report = run_check(tmp_path, rules, trace).report
    (found,) = violation(report, "shape", "tool_args.schema")["evidence"]["errors"]
    assert found == {"pointer": "/args/x", "message": '[true,null,"s0",true,null,"s0",true,null,"s0",true,null,"s0",'
                     'true,null,"s0",true,null,"s0",true,null… is not of type "object"'}


def test_unique_items_finds_the_one_repeat_among_many_objects(tmp_path: Path) -> None:
    """`uniqueItems` on an array of 20,000 objects (the validator's own check compares every pair,
    minutes for this one call), JSON equality as elsewhere: `1` and `1.0` are one value."""
    items = [{"id": n, "tags": [str(n)]} for n in range(20_000)]
    rules = [{"id": "u", "kind": "tool_args", "tool": "t",
              "schema": {"properties": {"items": {"type": "array", "uniqueItems": True}}}}]
    trace = [{"type": "tool.call", "tool": "t", "call_id": "c1", "args": {"items": items}},
             {"type": "tool.call", "tool": "t", "call_id": "c2",
              "args": {"items": [*items, {"tags": ["7"], "id": 7.0}]}}]
    report = run_check(tmp_path, rules, trace).report
    assert [(found["event_seq"], found["code"]) for found in report["violations"]] == [(2, "tool_args.schema")]
    assert report["violations"][0]["message"] == ("Args of t at seq 2 break the schema: /args/items: has non-unique "
                                                  "elements: items 7 and 20000 are equal.")


def test_a_cut_object_keeps_its_own_ellipsis_key_and_its_canonical_order(tmp_path: Path) -> None:
    """The mark of an object's cut keys is the key `…`, unless the value has one: then `……`; the
    keys stay in canonical (UTF-16) order, the mark among them."""
    args = {"x": {"…": "mine", **{f"k{n:04}": "v" * 150 for n in range(400)}, "中": 1}}
    rules = [{"id": "ta", "kind": "tool_args", "tool": "t", "match": {"x": 5}}]
    report = run_check(tmp_path, rules, [{"type": "tool.call", "tool": "t", "call_id": "c", "args": args}]).report
    actual = violation(report, "ta", "tool_args.mismatch")["evidence"]["mismatches"][0]["actual"]
    assert actual["…"] == "mine" and actual["……"] == f"{402 - len(actual) + 1} more keys"
    assert list(actual) == sorted(actual, key=lambda key: key.encode("utf-16-be"))


def test_related_seqs_name_other_events(catalogue: dict[str, Report]) -> None:
    """§0 report extras `related_seqs`; §3.1 `not_distinct` "with `related_seqs` set to the earlier one";
    §3.3 `late`: "`related_seqs` points to it"."""
    assert violation(catalogue["args"], "dist", "tool_args.not_distinct")["related_seqs"] == [3]
    assert violation(catalogue["precedence"], "keyed", "precedence.late")["related_seqs"] == [2]


@pytest.mark.parametrize(("rule_id", "code"), [
    ("out", "output_match.mismatch"), ("out-ref", "output_match.reference_unresolved"),
    ("as-reported", "tool_calls.output_mismatch"), ("unreported", "tool_calls.output_unresolved"),
    ("mail-when", "required_when.min"), ("no-refund", "forbidden_when.forbidden"),
])
def test_output_readers_name_the_failed_output_schema(catalogue: dict[str, Report], rule_id: str, code: str) -> None:
    """§0 report extras `caused_by`; §3.7: when output_schema fails, "every other violation that reads the
    output gets `caused_by: <id>`. Nothing is suppressed"."""
    assert violation(catalogue["run"], rule_id, code)["caused_by"] == "shape"


@pytest.mark.parametrize(("rule_id", "code"), [
    ("status", "run_status.mismatch"), ("quick", "run_duration.exceeded"), ("lat", "latency_budget.exceeded"),
    ("shape", "output_schema.schema"),
])
def test_rules_that_do_not_read_the_output_have_no_cause(catalogue: dict[str, Report], rule_id: str,
                                                         code: str) -> None:
    """§3.7: only "every *other* violation that reads the output" gets `caused_by` (run_status derives
    the status, run_duration and latency_budget read times)."""
    assert "caused_by" not in violation(catalogue["run"], rule_id, code)


# -- §1 and §10.16 event fields --------------------------------------------------------------------------

BAD_FIELDS: list[tuple[str, Event]] = [
    ("args", {"type": "tool.call", "tool": "a", "args": [1]}),
    ("args", {"type": "tool.call", "tool": "a", "args": None}),
    ("args", {"type": "approval.revoked", "args": "x"}),
    ("args", {"type": "run.completed", "args": 5}),
    ("duration_ms", {"type": "tool.result", "call_id": "x", "duration_ms": -1}),
    ("duration_ms", {"type": "tool.result", "call_id": "x", "duration_ms": True}),
    ("duration_ms", {"type": "tool.result", "call_id": "x", "duration_ms": "5"}),
    ("duration_ms", {"type": "run.completed", "duration_ms": None}),
    ("duration_ms", {"type": "tool.call", "tool": "a", "duration_ms": -0.5}),
    ("status", {"type": "run.completed", "status": ""}),
    ("status", {"type": "run.completed", "status": "x" * 101}),
    ("status", {"type": "run.failed", "status": 3}),
    ("status", {"type": "run.failed", "status": None}),
    ("status", {"type": "tool.call", "tool": "a", "status": False}),
    ("approver", {"type": "approval.granted", "approver": ""}),
    ("approver", {"type": "approval.granted", "approver": "x" * 501}),
    ("approver", {"type": "approval.granted", "approver": None}),
    ("approver", {"type": "tool.call", "tool": "a", "approver": 1}),
    ("reason", {"type": "control.stop", "reason": ""}),
    ("reason", {"type": "run.failed", "reason": "x" * 501}),
    ("reason", {"type": "tool.denied", "reason": None}),
    ("reason", {"type": "agent.message", "reason": ["user"]}),
]


@pytest.mark.parametrize(("field", "event"), BAD_FIELDS,
                         ids=[f"{field}-{i}" for i, (field, _) in enumerate(BAD_FIELDS)])
def test_badly_typed_field_is_refused_with_file_line_and_path(cli: Cli, tmp_path: Path, field: str,
                                                              event: Event) -> None:
    """§1: args is an object, duration_ms finite ≥ 0, status a string 1..100, approver and reason strings
    1..500, "Only `result` and `output` may be null"; §0: "bad type → exit 2, file:line"; §10.16: "each new
    field is checked on every event that carries it ... with a `file:line: $.field` error". The line is
    the physical one (a comment and a blank line come first)."""
    write_contract(tmp_path, [{"id": "r", "kind": "deny_tool", "tool": "zzz"}])
    write_trace(tmp_path, ["# a comment", {"seq": 1, "type": "agent.message"}, "", {"seq": 2, **event}])
    done = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert (done.returncode, done.stdout) == (2, "")
    assert f"t.jsonl:4: $.{field}" in done.stderr, done.stderr
    assert len(done.stderr.splitlines()) == 1


def test_infinite_duration_is_refused(cli: Cli, tmp_path: Path) -> None:
    """§1: `duration_ms` is "finite ≥ 0" (`1e400` reads as infinity)."""
    write_contract(tmp_path, [{"id": "r", "kind": "deny_tool", "tool": "zzz"}])
    (tmp_path / "t.jsonl").write_text('{"seq":1,"type":"tool.result","call_id":"x","duration_ms":1e400}\n',
                                      encoding="utf-8")
    done = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert (done.returncode, done.stdout) == (2, "")
    assert "t.jsonl:1: $.duration_ms" in done.stderr


GOOD_FIELDS: list[Event] = [
    {"type": "tool.result", "call_id": "x", "result": None},
    {"type": "run.completed", "output": None},
    {"type": "run.failed", "output": [1, "a"]},
    {"type": "run.completed", "result": {"any": "json"}},
    {"type": "tool.call", "tool": "a", "args": {}},
    {"type": "approval.granted", "args": {"a": 1}, "approver": "x" * 500},
    {"type": "tool.result", "call_id": "x", "duration_ms": 0},
    {"type": "run.completed", "duration_ms": 1.5, "status": "x" * 100},
    {"type": "control.stop", "reason": "x" * 500},
    {"type": "run.completed", "status": "awaiting_approval"},
]


@pytest.mark.parametrize("event", GOOD_FIELDS, ids=[str(i) for i in range(len(GOOD_FIELDS))])
def test_well_typed_field_is_accepted(tmp_path: Path, event: Event) -> None:
    """§1 at its bounds: `result` and `output` any JSON with null allowed, `duration_ms` 0 and
    fractions, status of 100 and approver/reason of 500 characters."""
    outcome = run_check(tmp_path, [{"id": "r", "kind": "deny_tool", "tool": "zzz"}], [{"seq": 1, **event}])
    assert outcome.code == 0, outcome.stderr


def test_version_1_does_not_type_check_new_fields(tmp_path: Path) -> None:
    """§0: "Traces stay unversioned. New fields are optional keys that Node ignores. They are
    type-checked only under v2"."""
    events = [{"seq": i + 1, **event} for i, (_, event) in enumerate(BAD_FIELDS)]
    outcome = run_check(tmp_path, [{"id": "r", "kind": "deny_tool", "tool": "zzz"}], events, version=1)
    assert outcome.code == 0, outcome.stderr


def test_failed_terminal_output_is_the_final_output(tmp_path: Path) -> None:
    """§10.16: "`run.failed` may carry `output`, which is the final output when it is the terminal"; §0:
    the terminal is the *last* `run.completed` or `run.failed`."""
    events: list[Line] = [{"seq": 1, "type": "run.completed", "output": {"a": 1}},
                          {"seq": 2, "type": "run.failed", "output": {"a": 2}}]
    rules: list[Rule] = [{"id": "out", "kind": "output_match", "match": {"a": 2}},
                         {"id": "status", "kind": "run_status", "equals": "failed"}]
    outcome = run_check(tmp_path, rules, events)
    assert outcome.code == 0, outcome.stdout


def test_run_status_is_taken_from_the_last_terminal(tmp_path: Path) -> None:
    """§0: "*Run status*: its `status`; if absent, `completed` or `failed` by type" (its = the terminal,
    the last `run.completed` or `run.failed`); `awaiting_approval` is a status like any other (§1)."""
    events = [{"seq": 1, "type": "run.failed"}, {"seq": 2, "type": "run.completed", "status": "awaiting_approval"}]
    outcome = run_check(tmp_path, [{"id": "status", "kind": "run_status", "equals": "completed"}], events)
    assert outcome.code == 1
    assert outcome.report["violations"][0]["evidence"] == {"status": "awaiting_approval", "expected": "completed"}


# -- §10.3 pairing -------------------------------------------------------------------------------------

PAIRING_EVENTS: list[Line] = [
    {"seq": 1, "type": "tool.call", "tool": "a", "call_id": "c1"},
    {"seq": 2, "type": "tool.call", "tool": "b", "call_id": "c1"},
    {"seq": 3, "type": "tool.result", "call_id": "c1", "ok": True, "duration_ms": 10, "result": "xx"},
    {"seq": 4, "type": "tool.result", "call_id": "c1", "ok": False, "duration_ms": 99, "result": "yyyy", "tool": "b"},
    {"seq": 5, "type": "tool.result", "call_id": "c1", "ok": False, "tool": "a", "result": "orphan"},
    {"seq": 6, "type": "tool.result", "call_id": "zz", "ok": False, "tool": "b"},
]
PAIRING_RULES: list[Rule] = [
    {"id": "lat-a", "kind": "latency_budget", "tool": "a", "max_ms": 50},
    {"id": "lat-b", "kind": "latency_budget", "tool": "b", "max_ms": 5},
    {"id": "size-a", "kind": "result_size", "tool": "a", "max_bytes": 3},
    {"id": "handled", "kind": "failure_handled", "within_events": 1},
    {"id": "ok-a", "kind": "tool_calls", "tool": "a", "count": "successful", "min": 1},
]


@pytest.fixture(scope="module")
def pairing(tmp_path_factory: pytest.TempPathFactory) -> Report:
    outcome = run_check(tmp_path_factory.mktemp("pairing"), PAIRING_RULES, PAIRING_EVENTS, "--no-lint")
    assert outcome.code == 1, outcome.stderr
    return outcome.report


def test_result_belongs_to_nearest_open_call(pairing: Report) -> None:
    """§10.3: "a `tool.result` belongs to the nearest earlier `tool.call` with the same `call_id` that
    has no result yet": seq 3 answers b (seq 2), seq 4 answers a (seq 1)."""
    assert [(found["event_seq"], found["evidence"]["duration_ms"]) for found in
            result_of(pairing, "lat-a")["violations"]] == [(4, 99)]
    assert [(found["event_seq"], found["evidence"]["duration_ms"]) for found in
            result_of(pairing, "lat-b")["violations"]] == [(3, 10)]


def test_paired_result_ignores_its_own_tool(pairing: Report) -> None:
    """§10.3: "A paired result's own `tool` field is ignored by new kinds": seq 4 says `b` but answers a
    call of `a`, and seq 3 (no tool) answers `b`; a's only paired result failed."""
    assert codes_of(pairing, "ok-a") == [("tool_calls.min", None)]
    assert result_of(pairing, "ok-a")["checked"] == 0


def test_orphan_result_keeps_its_own_tool(pairing: Report) -> None:
    """§10.3: "a result with no such call is an orphan, which keeps its own `tool`"; §10.25: "a failed
    orphan result uses its own tool and call_id"."""
    assert codes_of(pairing, "size-a") == [("result_size.exceeded", 4), ("result_size.exceeded", 5)]
    handled = result_of(pairing, "handled")["violations"]
    assert [(found["event_seq"], found["evidence"]["tool"], found["evidence"]["call_id"]) for found in handled] == [
        (4, "a", "c1"), (5, "a", "c1"), (6, "b", "zz")]


def test_new_kinds_see_calls_through_results_and_v1_kinds_do_not(tmp_path: Path) -> None:
    """§0 definitions: "In new kinds, a result's tool and args are its call's (v1 kinds read only the
    event's own fields)"."""
    events = [
        {"seq": 1, "type": "tool.call", "tool": "get", "call_id": "c1", "args": {"id": "A"}},
        {"seq": 2, "type": "tool.result", "call_id": "c1", "ok": True},
        {"seq": 3, "type": "tool.call", "tool": "refund", "call_id": "c2", "args": {"id": "A"}},
    ]
    rules = [
        {"id": "new", "kind": "precedence", "before": {"type": "tool.result", "tool": "get", "ok": True},
         "after": {"type": "tool.call", "tool": "refund"}, "correlate": ["id"]},
        {"id": "old", "kind": "require_event", "match": {"type": "tool.result", "tool": "get"}},
    ]
    report = run_check(tmp_path, rules, events).report
    assert codes_of(report, "new") == []
    assert codes_of(report, "old") == [("require_event.min", None)]


# -- §10.4 vacuous and checked ----------------------------------------------------------------------------

SUBJECTLESS_RULES: list[Rule] = [
    {"id": "args", "kind": "tool_args", "tool": "refund", "match": {"a": 1}},
    {"id": "prec", "kind": "precedence", "before": {"type": "tool.call", "tool": "get"},
     "after": {"type": "tool.call", "tool": "refund"}},
    {"id": "appr", "kind": "approval_bound", "tool": "refund"},
    {"id": "lat", "kind": "latency_budget", "tool": "refund", "max_ms": 1},
    {"id": "lat-p", "kind": "latency_budget", "tool": "refund", "max_ms": 1, "percentile": 90},
    {"id": "forb", "kind": "forbidden_when", "tool": "refund", "when": {"path": "a", "equals": 1}},
    {"id": "size", "kind": "result_size", "tool": "refund", "max_bytes": 1},
    {"id": "fail", "kind": "failure_handled", "tool": "*", "within_events": 1},
    {"id": "args-k", "kind": "tool_args", "tool": "refund", "call_index": 0, "match": {"a": 1}},
    {"id": "plan", "kind": "tool_order", "tools": ["refund"]},
    {"id": "calls", "kind": "tool_calls", "tool": "refund", "max": 0},
    {"id": "out", "kind": "output_match", "match": {}},
    {"id": "shape", "kind": "output_schema", "schema": {}},
    {"id": "status", "kind": "run_status", "equals": "none"},
    {"id": "quick", "kind": "run_duration", "max_ms": 5},
    {"id": "req", "kind": "required_when", "tool": "refund", "when": {"path": "a", "equals": 1}},
]


@pytest.fixture(scope="module")
def subjectless(tmp_path_factory: pytest.TempPathFactory) -> Report:
    """Every kind over a trace in which no rule's subject occurs (one unrelated call, no terminal)."""
    events = [{"seq": 1, "type": "tool.call", "tool": "other", "call_id": "c1"}]
    outcome = run_check(tmp_path_factory.mktemp("subjectless"), SUBJECTLESS_RULES, events, "--no-lint")
    assert outcome.code == 1, outcome.stderr
    return outcome.report


@pytest.mark.parametrize("rule_id", ["args", "prec", "appr", "lat", "lat-p", "forb", "size", "fail"])
def test_per_event_kind_without_subject_is_vacuous(subjectless: Report, rule_id: str) -> None:
    """§0: "A rule whose subject never occurs passes with `checked: 0, vacuous: true`"; §10.4 lists the
    per-event kinds, and "a vacuous forbidden_when passes even if its condition is unresolved"."""
    result = result_of(subjectless, rule_id)
    assert (result["checked"], result.get("vacuous"), result["passed"], result["violations"]) == (0, True, True, [])


@pytest.mark.parametrize(("rule_id", "checked", "codes"), [
    ("args-k", None, [("tool_args.call_missing", None)]),
    ("plan", 1, [("tool_order.missing", None)]),
    ("calls", 0, []),
    ("out", 1, [("output_match.output_missing", None)]),
    ("shape", 1, [("output_schema.output_missing", None)]),
    ("status", 1, []),
    ("quick", 1, [("run_duration.duration_unresolved", None)]),
    ("req", 1, [("required_when.condition_unresolved", None)]),
])
def test_trace_level_kind_is_never_vacuous(subjectless: Report, rule_id: str, checked: int | None,
                                           codes: list[tuple[str, int | None]]) -> None:
    """§0 "Never vacuous" and §10.4: "Trace-level kinds are never vacuous: tool_args with call_index,
    tool_order (`checked` = number of calls), tool_calls (`checked` = counted calls), output_match/
    output_schema/run_status/run_duration/required_when (`checked` 1 ...)". (spec silent on `checked`
    of tool_args with call_index: not asserted.)"""
    result = result_of(subjectless, rule_id)
    assert result.get("vacuous") is not True
    if checked is not None:
        assert result["checked"] == checked
    assert codes_of(subjectless, rule_id) == codes


CHECKED_EVENTS: list[Line] = [
    {"seq": 1, "type": "tool.call", "tool": "a", "call_id": "1"},
    {"seq": 2, "type": "tool.result", "call_id": "1", "ok": False},
    {"seq": 3, "type": "tool.call", "tool": "a", "call_id": "2"},
    {"seq": 4, "type": "tool.result", "call_id": "2", "ok": True},
    {"seq": 5, "type": "tool.call", "tool": "a", "call_id": "3"},
    {"seq": 6, "type": "tool.call", "tool": "b", "call_id": "4"},
    {"seq": 7, "type": "tool.result", "call_id": "4"},
    {"seq": 8, "type": "tool.call", "call_id": "5"},
    {"seq": 9, "type": "agent.message"},
    {"seq": 10, "type": "run.completed", "output": {"x": 0}},
]
CHECKED_ROWS: list[tuple[Rule, int]] = [
    ({"kind": "tool_calls", "tool": "*", "count": "successful", "min": 0}, 2),
    ({"kind": "tool_calls", "tool": "a", "min": 0}, 3),
    ({"kind": "tool_order", "tools": ["a"]}, 5),
    ({"kind": "output_match", "match": {"x": 5}, "when": {"path": "x", "equals": 1}}, 0),
    ({"kind": "output_match", "match": {"x": 0}, "when": {"path": "x", "equals": 0}}, 1),
    ({"kind": "failure_handled", "within_events": 1}, 1),
    ({"kind": "forbidden_when", "tool": "a", "when": {"path": "x", "equals": 1}}, 3),
    ({"kind": "result_size", "tool": "*", "max_bytes": 100, "on_missing": "skip"}, 3),
    ({"kind": "latency_budget", "tool": "a", "max_ms": 100, "on_missing": "skip"}, 3),
    ({"kind": "tool_args", "tool": "a", "match": {}}, 3),
    ({"kind": "precedence", "before": {"type": "tool.call"}, "after": {"type": "tool.result", "ok": True}}, 1),
    ({"kind": "run_status", "equals": "completed"}, 1),
]


@pytest.fixture(scope="module")
def checked_report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    rules = [{"id": f"r{i}", **rule} for i, (rule, _) in enumerate(CHECKED_ROWS)]
    outcome = run_check(tmp_path_factory.mktemp("checked"), rules, CHECKED_EVENTS, "--no-lint")
    assert outcome.code in (0, 1), outcome.stderr
    return outcome.report


@pytest.mark.parametrize(("index", "expected"), [(i, checked) for i, (_, checked) in enumerate(CHECKED_ROWS)],
                         ids=[f"{rule['kind']}-{i}" for i, (rule, _) in enumerate(CHECKED_ROWS)])
def test_checked_counts_the_kinds_subjects(checked_report: Report, index: int, expected: int) -> None:
    """§10.4: `checked` = subjects examined: matching calls (tool_args, latency_budget, forbidden_when),
    matching results (result_size), failed results (failure_handled), afters (precedence), all calls
    (tool_order, a tool-less one included), counted calls (tool_calls, `successful`: "the paired result
    exists and `ok` is not false"), 1 for output rules and 0 "when a false `when` skips output_match"."""
    result = result_of(checked_report, f"r{index}")
    assert result["checked"] == expected
    if expected:
        assert result.get("vacuous") is not True


# -- §10.5 order -------------------------------------------------------------------------------------------

ORDER_EVENTS: list[Line] = [
    {"seq": 1, "type": "tool.call", "tool": "a", "call_id": "c1"},
    {"seq": 2, "type": "tool.call", "tool": "a", "call_id": "c2"},
    {"seq": 3, "type": "tool.result", "call_id": "c1", "ok": True, "duration_ms": 100},
    {"seq": 4, "type": "tool.call", "tool": "a", "call_id": "c3", "args": {"k": 1}},
    {"seq": 5, "type": "tool.call", "tool": "a", "call_id": "c4", "args": {"k": 1, "z": 2}},
    {"seq": 6, "type": "run.completed", "output": {"items": [1, 2]}},
]
ORDER_RULES: list[Rule] = [
    {"id": "lat", "kind": "latency_budget", "tool": "a", "max_ms": 50},
    {"id": "args", "kind": "tool_args", "tool": "a", "match": {"z": 1, "q": {"$from_result": {"tool": "nope"}}},
     "schema": {"type": "object", "properties": {"z": {"type": "string"}}}, "distinct": ["k"]},
    {"id": "calls", "kind": "tool_calls", "tool": "a", "min": 9, "matches_output_length": "items"},
    {"id": "out", "kind": "output_match", "match": {"items": [1], "x": {"$from_result": {"tool": "nope"}}}},
]


@pytest.fixture(scope="module")
def ordered(tmp_path_factory: pytest.TempPathFactory) -> Report:
    outcome = run_check(tmp_path_factory.mktemp("ordered"), ORDER_RULES, ORDER_EVENTS, "--no-lint")
    assert outcome.code == 1, outcome.stderr
    return outcome.report


def test_violations_follow_event_index_not_subject_order(ordered: Report) -> None:
    """§10.5: "within a rule result, ascending `event_index`": the unresolved duration of the call at
    seq 2 comes before the slow result at seq 3 (of the call at seq 1)."""
    assert codes_of(ordered, "lat") == [
        ("latency_budget.duration_unresolved", 2), ("latency_budget.exceeded", 3),
        ("latency_budget.duration_unresolved", 4), ("latency_budget.duration_unresolved", 5)]


def test_codes_at_one_call_follow_the_spec_list(ordered: Report) -> None:
    """§10.5: "ties at one event follow the order in which the spec lists that kind's codes (tool_args:
    args_missing, mismatch, reference_unresolved, schema, not_distinct, distinct_missing)"."""
    assert codes_of(ordered, "args") == [
        ("tool_args.args_missing", 1), ("tool_args.args_missing", 2),
        ("tool_args.mismatch", 4), ("tool_args.reference_unresolved", 4),
        ("tool_args.mismatch", 5), ("tool_args.reference_unresolved", 5), ("tool_args.schema", 5),
        ("tool_args.not_distinct", 5)]


def test_violations_without_seq_come_last(ordered: Report) -> None:
    """§10.5: "ascending `event_index`, then the violations without a seq"."""
    assert codes_of(ordered, "calls") == [("tool_calls.output_mismatch", 6), ("tool_calls.min", None)]


def test_output_match_mismatch_comes_before_reference(ordered: Report) -> None:
    """§10.5 ties, with §3.7's list for output_match ("`output_missing`, plus the mismatch and reference
    codes of tool_args")."""
    assert codes_of(ordered, "out") == [("output_match.mismatch", 6), ("output_match.reference_unresolved", 6)]


def test_top_level_violations_concatenate_results_in_contract_order(catalogue: dict[str, Report]) -> None:
    """§10.5: "the top-level `violations` stays the concatenation of results in contract order"."""
    for name, report in catalogue.items():
        assert [result["rule_id"] for result in report["results"]] == [rule["id"] for rule in SCENARIOS[name][0]]
        assert report["violations"] == [found for result in report["results"] for found in result["violations"]]


# -- §0 and §10.7 evidence encoding ---------------------------------------------------------------------------

LONG_ARGS: dict[str, Any] = {
    "emoji": "\U0001f600" * 300, "exact": "é" * 200, "plain": "x" * 201, "big": 1e21, "half": 2.50,
    "whole": 100.0, "zero": -0.0, "tiny": 1e-7, "a/b": 1, "m~n": 2,
    "obj": {"z": 1, "\uff61": 2, "\U0001f600": 3, "a": 4, "B": 5},
}
LONG_MATCH: dict[str, Any] = {
    "emoji": "no", "exact": "no", "plain": "no", "big": 5, "half": 3, "whole": 1, "zero": 1, "tiny": 1,
    "a/b": 2, "m~n": 3, "obj": 5, "absent": 1, "op": {"$gt": 5},
}


@pytest.fixture(scope="module")
def encoded(tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    """One call whose args mismatch on strings, numbers, escaped keys and an object, and a reference with
    25 candidates."""
    events: list[Line] = []
    for i in range(25):
        events += [{"seq": 2 * i + 1, "type": "tool.call", "tool": "get", "call_id": f"g{i}"},
                   {"seq": 2 * i + 2, "type": "tool.result", "call_id": f"g{i}", "ok": True, "result": {"paid": i}}]
    events.append({"seq": 51, "type": "tool.call", "tool": "t", "call_id": "c",
                   "args": {**LONG_ARGS, "op": 3, "amount": 99}})
    rules = [{"id": "enc", "kind": "tool_args", "tool": "t",
              "match": {**LONG_MATCH, "amount": {"$from_result": {"tool": "get", "path": "paid"}}}}]
    outcome = run_check(tmp_path_factory.mktemp("encoded"), rules, events)
    assert outcome.code == 1, outcome.stderr
    return outcome


def mismatch_at(outcome: Outcome, pointer: str) -> dict[str, Any]:
    mismatches = outcome.report["violations"][0]["evidence"]["mismatches"]
    return dict(next(item for item in mismatches if item["pointer"] == pointer))


def test_evidence_is_structured_json(encoded: Outcome) -> None:
    """§10.7: "evidence stays structured JSON" (not strings of canonical JSON); the list is
    `mismatches: [{pointer, expected, actual?}]`."""
    evidence = encoded.report["violations"][0]["evidence"]
    assert isinstance(evidence, dict)
    assert all(isinstance(item, dict) and set(item) <= {"pointer", "expected", "actual"}
               for item in evidence["mismatches"])


def test_long_string_is_cut_to_200_code_points(encoded: Outcome) -> None:
    """§10.7: "strings are cut to 200 Unicode code points plus `…`" (an astral character is one code
    point, not two UTF-16 units)."""
    assert mismatch_at(encoded, "/args/emoji")["actual"] == "\U0001f600" * 200 + "…"
    assert mismatch_at(encoded, "/args/plain")["actual"] == "x" * 200 + "…"


def test_string_of_200_code_points_is_kept(encoded: Outcome) -> None:
    """§10.7: only longer strings are cut."""
    assert mismatch_at(encoded, "/args/exact")["actual"] == "é" * 200


@pytest.mark.parametrize(("pointer", "text"), [
    ("/args/big", "1e+21"), ("/args/half", "2.5"), ("/args/whole", "100"), ("/args/zero", "0"),
    ("/args/tiny", "1e-7"),
])
def test_evidence_numbers_use_canonical_form(encoded: Outcome, pointer: str, text: str) -> None:
    """§0 "Evidence values are RFC 8785 canonical JSON"; §10.7: "serialised with RFC 8785 key order and
    number form"."""
    marker = f'"pointer": "{pointer}"'
    block = encoded.stdout[: encoded.stdout.index(marker)].rsplit("{", 1)[1]
    assert f'"actual": {text},' in block, block


def test_evidence_keys_use_canonical_order(encoded: Outcome) -> None:
    """§10.7: RFC 8785 key order, which sorts by UTF-16 code units (U+1F600 before U+FF61), at every
    level, values from the trace included."""
    report = json.loads(encoded.stdout, object_pairs_hook=list)
    evidence = dict(dict(dict(report)["violations"][0])["evidence"])
    assert keys_in_canonical_order(list(evidence.items()))
    obj = mismatch_at(encoded, "/args/obj")["actual"]
    assert list(obj) == ["B", "a", "z", "\U0001f600", "\uff61"]


def test_absent_actual_is_omitted(encoded: Outcome) -> None:
    """§10.7: "`mismatches: [{pointer, expected, actual?}]` (`actual` omitted when absent)"."""
    assert mismatch_at(encoded, "/args/absent") == {"pointer": "/args/absent", "expected": 1}


def test_operator_expected_is_the_node_as_written(encoded: Outcome) -> None:
    """§10.7: "`expected` is the node as written"."""
    assert mismatch_at(encoded, "/args/op") == {"pointer": "/args/op", "expected": {"$gt": 5}, "actual": 3}


def test_reference_expected_lists_at_most_20_candidates(encoded: Outcome) -> None:
    """§10.7: "or `{"any_of": [candidates ≤ 20]}` for a reference" (25 earlier results here)."""
    expected = mismatch_at(encoded, "/args/amount")["expected"]
    assert list(expected) == ["any_of"]
    assert len(expected["any_of"]) == 20
    assert set(expected["any_of"]) <= set(range(25))


@pytest.mark.parametrize(("pointer", "key"), [("/args/a~1b", "a/b"), ("/args/m~0n", "m~n")])
def test_pointer_escapes_slash_and_tilde(encoded: Outcome, pointer: str, key: str) -> None:
    """§0: `pointer` is RFC 6901 ("/" is written `~1`, "~" is written `~0`)."""
    assert mismatch_at(encoded, pointer)["actual"] == LONG_ARGS[key]


def test_unresolved_and_schema_lists_have_their_shapes(catalogue: dict[str, Report]) -> None:
    """§10.7: "`unresolved: [{pointer, reference, reason}]`, `errors: [{pointer, message}]` (schema)"."""
    unresolved = violation(catalogue["args"], "ta", "tool_args.reference_unresolved")["evidence"]["unresolved"]
    assert unresolved == [{"pointer": "/args/amount", "reason": "no_candidates",
                           "reference": {"$from_result": {"tool": "get", "path": "paid",
                                                          "where": {"id": {"$arg": "order"}}}}}]
    errors = violation(catalogue["args"], "sch", "tool_args.schema")["evidence"]["errors"]
    assert [set(error) for error in errors] == [{"pointer", "message"}]
    assert errors[0]["pointer"] == "/args/amount"


SIZED: list[tuple[str, int]] = [
    ('{"a":100.0}', 9), ('"é"', 4), ("1e21", 5), ("null", 4), ('"\\u2028"', 5), ('"\\u001f"', 8),
    ("0.1", 3), ("1e-7", 4), ('"\\ud83d\\ude00"', 6), ('{"b":1,"a":[1.50,true]}', 22),
]


@pytest.fixture(scope="module")
def sized(tmp_path_factory: pytest.TempPathFactory) -> Report:
    """One result per SIZED value (raw JSON text), each over a 1-byte budget."""
    lines: list[Line] = []
    for i, (text, _) in enumerate(SIZED):
        lines.append(json.dumps({"seq": 2 * i + 1, "type": "tool.call", "tool": "t", "call_id": f"c{i}"}))
        lines.append(f'{{"seq":{2 * i + 2},"type":"tool.result","call_id":"c{i}","ok":true,"result":{text}}}')
    outcome = run_check(tmp_path_factory.mktemp("sized"), [{"id": "size", "kind": "result_size", "tool": "t",
                                                            "max_bytes": 1}], lines)
    assert outcome.code == 1, outcome.stderr
    return outcome.report


@pytest.mark.parametrize(("index", "size"), [(i, size) for i, (_, size) in enumerate(SIZED)],
                         ids=[f"result-{i}" for i in range(len(SIZED))])
def test_result_size_counts_canonical_utf8_bytes(sized: Report, index: int, size: int) -> None:
    """§10.7: "`result_size` counts the UTF-8 bytes of the same canonical form (raw UTF-8, `100.0` →
    `100`)"; §10.9: "`result: null` is a 4-byte result"."""
    found = next(found for found in sized["violations"] if found["event_seq"] == 2 * index + 2)
    assert found["evidence"]["bytes"] == size


def test_new_kind_evidence_keys_are_canonical_everywhere(tmp_path: Path) -> None:
    """§10.7 key order for every violation of the new kinds in the "run" scenario (v1 kinds keep v1's
    evidence, §10.1)."""
    outcome = run_check(tmp_path, RUN_RULES, RUN_EVENTS, "--no-lint")
    report = dict(json.loads(outcome.stdout, object_pairs_hook=list))
    for found in report["violations"]:
        evidence = dict(found).get("evidence")
        assert evidence is not None and keys_in_canonical_order(evidence), found


# -- §0 safety and liveness, §10.82 --partial ----------------------------------------------------------------

PARTIAL_EVENTS: list[Line] = [
    {"seq": 1, "type": "tool.call", "tool": "get", "call_id": "c1", "args": {"id": "A9"}},
    {"seq": 2, "type": "tool.result", "call_id": "c1", "ok": True, "result": {"paid": 10}, "duration_ms": 5},
    {"seq": 3, "type": "tool.call", "tool": "refund", "call_id": "c2", "args": {"order": "A9", "amount": 12}},
    {"seq": 4, "type": "tool.result", "call_id": "c2", "ok": False},
    {"seq": 5, "type": "tool.call", "tool": "search", "call_id": "c3"},
    {"seq": 6, "type": "tool.result", "call_id": "c3", "ok": False},
    {"seq": 7, "type": "agent.message"},
    {"seq": 8, "type": "agent.message"},
]
# (rule, code, status under --partial)
PARTIAL_ROWS: list[tuple[Rule, str, str]] = [
    ({"kind": "tool_args", "tool": "refund", "match": {"amount": {"$from_result": {"tool": "get", "path": "paid"}}}},
     "tool_args.mismatch", "fail"),
    ({"kind": "tool_args", "tool": "refund", "match": {"amount": {"$from_result": {"tool": "nope"}}}},
     "tool_args.reference_unresolved", "unresolved"),
    ({"kind": "tool_args", "tool": "refund", "match": {"amount": {"$from_output": "amount"}}},
     "tool_args.reference_unresolved", "inconclusive"),
    ({"kind": "tool_args", "tool": "refund", "call_index": 3, "match": {}}, "tool_args.call_missing", "inconclusive"),
    ({"kind": "tool_order", "tools": ["get", "refund", "notify"]}, "tool_order.missing", "inconclusive"),
    ({"kind": "tool_order", "tools": ["refund"], "mode": "exact"}, "tool_order.deviation", "inconclusive"),
    ({"kind": "precedence", "before": {"type": "tool.call", "tool": "auth"},
      "after": {"type": "tool.call", "tool": "refund"}}, "precedence.missing", "fail"),
    ({"kind": "tool_calls", "tool": "*", "max": 1}, "tool_calls.max", "fail"),
    ({"kind": "tool_calls", "tool": "notify", "min": 1}, "tool_calls.min", "inconclusive"),
    ({"kind": "tool_calls", "tool": "refund", "matches_output_length": "refunds"}, "tool_calls.output_unresolved",
     "inconclusive"),
    ({"kind": "approval_bound", "tool": "refund"}, "approval_bound.missing", "fail"),
    ({"kind": "latency_budget", "tool": "get", "max_ms": 1}, "latency_budget.exceeded", "fail"),
    ({"kind": "latency_budget", "tool": "get", "max_ms": 1, "percentile": 50}, "latency_budget.exceeded",
     "inconclusive"),
    ({"kind": "result_size", "tool": "get", "max_bytes": 2}, "result_size.exceeded", "fail"),
    ({"kind": "run_duration", "max_ms": 1}, "run_duration.duration_unresolved", "inconclusive"),
    ({"kind": "output_match", "match": {"a": 1}}, "output_match.output_missing", "inconclusive"),
    ({"kind": "output_schema", "schema": {"type": "object"}}, "output_schema.output_missing", "inconclusive"),
    ({"kind": "run_status", "equals": "completed"}, "run_status.mismatch", "inconclusive"),
    ({"kind": "required_when", "tool": "x", "when": {"path": "a", "equals": 1}}, "required_when.condition_unresolved",
     "inconclusive"),
    ({"kind": "forbidden_when", "tool": "refund", "when": {"path": "a", "equals": 1}},
     "forbidden_when.condition_unresolved", "inconclusive"),
    ({"kind": "failure_handled", "tool": "search", "within_events": 1, "by": "retry"}, "failure_handled.unhandled",
     "fail"),
    ({"kind": "failure_handled", "tool": "search", "within_events": 5, "by": "retry"}, "failure_handled.unhandled",
     "inconclusive"),
]


@pytest.fixture(scope="module")
def partial(tmp_path_factory: pytest.TempPathFactory) -> Report:
    rules = [{"id": f"r{i}", **rule} for i, (rule, _, _) in enumerate(PARTIAL_ROWS)]
    outcome = run_check(tmp_path_factory.mktemp("partial"), rules, PARTIAL_EVENTS, "--partial", "--no-lint")
    assert outcome.code == 1, outcome.stderr
    return outcome.report


@pytest.mark.parametrize(("index", "code", "status"), [(i, code, status) for i, (_, code, status) in
                                                       enumerate(PARTIAL_ROWS)],
                         ids=[f"{rule['kind']}-{i}" for i, (rule, _, _) in enumerate(PARTIAL_ROWS)])
def test_partial_reports_liveness_parts_as_inconclusive(partial: Report, index: int, code: str, status: str) -> None:
    """§0: "`check --partial` ... reports liveness parts as `inconclusive`"; the §3 headings say which part
    is which: tool_args safety (liveness with `$from_output` or `call_index`), tool_order liveness,
    precedence safety, tool_calls `max` safety and the rest liveness, approval_bound safety, latency_budget
    safety (percentile liveness), result_size safety, run_duration and §3.7/§3.8 liveness, failure_handled
    safety "except at the trace's end"."""
    found = violation(partial, f"r{index}", code)
    assert found["status"] == status
    assert result_of(partial, f"r{index}")["passed"] is (status == "inconclusive")


def test_partial_leaves_inconclusive_out_of_the_counts(partial: Report) -> None:
    """§10.82: liveness violations "are left out of `error_count`, `warning_count`, `passed` and the exit"."""
    fails = sum(1 for _, _, status in PARTIAL_ROWS if status != "inconclusive")
    assert partial["error_count"] == fails
    assert partial["warning_count"] == 0
    assert sum(1 for found in partial["violations"] if found["status"] == "inconclusive") == len(PARTIAL_ROWS) - fails


# (rule, code, status under --partial): §10.82's split of the v1 kinds
V1_PARTIAL_ROWS: list[tuple[str, str, str]] = [
    ("deny", "deny_tool.denied", "fail"),
    ("allow", "allow_tools.not_allowed", "fail"),
    ("approval", "require_approval.missing", "fail"),
    ("stop", "stop_is_final.after_stop", "fail"),
    ("completion", "completion_requires_outcome.missing", "fail"),
    ("confidence", "confidence_requires_outcome.missing", "fail"),
    ("retries", "retry_limit.exceeded", "fail"),
    ("budget", "event_budget.events", "fail"),
    ("order", "require_order.missing", "fail"),
    ("needs-outcome", "require_event.min", "inconclusive"),
    ("one-call", "require_event.max", "fail"),
    ("no-stop", "deny_event.matched", "fail"),
    ("results", "tool_result_required.missing", "inconclusive"),
]


@pytest.fixture(scope="module")
def v1_partial(tmp_path_factory: pytest.TempPathFactory) -> Report:
    outcome = run_check(tmp_path_factory.mktemp("v1-partial"), V1_RULES, V1_EVENTS, "--partial", version=1)
    assert outcome.code == 1, outcome.stderr
    return outcome.report


@pytest.mark.parametrize(("rule_id", "code", "status"), V1_PARTIAL_ROWS, ids=[row[0] for row in V1_PARTIAL_ROWS])
def test_partial_splits_v1_kinds(v1_partial: Report, rule_id: str, code: str, status: str) -> None:
    """§10.82: "the v1 safety kinds are deny_tool, allow_tools, require_approval, stop_is_final,
    retry_limit, deny_event, require_order, completion_requires_outcome, confidence_requires_outcome,
    event_budget, and require_event's `max`. The liveness parts are require_event's `min` and
    tool_result_required"."""
    assert {found["status"] for found in result_of(v1_partial, rule_id)["violations"]} == {status}
    assert violation(v1_partial, rule_id, code)["status"] == status


def test_partial_v1_counts_exclude_inconclusive(v1_partial: Report) -> None:
    """§10.82 amends point 6: 19 violations, 3 of them inconclusive, leave 16 errors."""
    assert (v1_partial["error_count"], v1_partial["warning_count"]) == (16, 0)


def test_inconclusive_never_appears_without_partial(catalogue: dict[str, Report]) -> None:
    """§10.6: "`inconclusive` appears only under `--partial`"."""
    for report in catalogue.values():
        assert all(found["status"] != "inconclusive" for found in report["violations"])


def test_partial_with_only_liveness_passes(tmp_path: Path) -> None:
    """§10.82: inconclusive violations are left out of `passed` and the exit; warnings too."""
    rules = [{"id": "results", "kind": "tool_result_required", "severity": "warning"},
             {"id": "status", "kind": "run_status", "equals": "completed"}]
    outcome = run_check(tmp_path, rules, [{"seq": 1, "type": "tool.call", "tool": "a", "call_id": "1"}], "--partial")
    assert outcome.code == 0
    report = outcome.report
    assert (report["passed"], report["error_count"], report["warning_count"]) == (True, 0, 0)
    assert [found["status"] for found in report["violations"]] == ["inconclusive", "inconclusive"]


# -- §10.84 --safety-exit ------------------------------------------------------------------------------------

SAFETY_EVENTS: list[Line] = [
    {"seq": 1, "type": "run.start", "time": "2026-01-01T00:00:00Z"},
    {"seq": 2, "type": "tool.call", "tool": "get", "call_id": "c1", "args": {"id": "A9"}},
    {"seq": 3, "type": "tool.result", "call_id": "c1", "ok": True, "result": {"paid": 10}, "duration_ms": 500},
    {"seq": 4, "type": "tool.call", "tool": "refund", "call_id": "c2", "args": {"order": "A9", "amount": 12}},
    {"seq": 5, "type": "tool.result", "call_id": "c2", "ok": False},
    {"seq": 6, "type": "agent.message"},
    {"seq": 7, "type": "run.completed", "output": {"refunds": [1, 2]}, "time": "2026-01-01T01:00:00Z"},
]
# (rule, safety part?)
SAFETY_ROWS: list[tuple[Rule, bool]] = [
    ({"kind": "tool_args", "tool": "refund", "match": {"amount": {"$from_result": {"tool": "get", "path": "paid"}}}},
     True),
    ({"kind": "tool_args", "tool": "refund", "match": {"amount": {"$from_result": {"tool": "nope"}}}}, True),
    ({"kind": "tool_args", "tool": "refund", "match": {"amount": {"$from_output": "refunds"}}}, False),
    ({"kind": "tool_args", "tool": "refund", "call_index": 4, "match": {}}, False),
    ({"kind": "tool_order", "tools": ["refund", "get"]}, False),
    ({"kind": "tool_order", "tools": ["refund", "get"], "mode": "exact"}, False),
    ({"kind": "precedence", "before": {"type": "tool.call", "tool": "auth"},
      "after": {"type": "tool.call", "tool": "refund"}}, True),
    ({"kind": "tool_calls", "tool": "*", "max": 1}, True),
    ({"kind": "tool_calls", "tool": "*", "min": 3}, False),
    ({"kind": "tool_calls", "tool": "refund", "matches_output_length": "refunds"}, False),
    ({"kind": "approval_bound", "tool": "refund"}, True),
    ({"kind": "latency_budget", "tool": "get", "max_ms": 1}, True),
    ({"kind": "latency_budget", "tool": "get", "max_ms": 1, "percentile": 50}, False),
    ({"kind": "result_size", "tool": "get", "max_bytes": 1}, True),
    ({"kind": "run_duration", "max_ms": 1}, False),
    ({"kind": "output_match", "match": {"refunds": []}}, False),
    ({"kind": "output_schema", "schema": {"type": "array"}}, False),
    ({"kind": "run_status", "equals": "failed"}, False),
    ({"kind": "required_when", "tool": "x", "when": {"path": "refunds", "non_empty": True}}, False),
    ({"kind": "forbidden_when", "tool": "get", "when": {"path": "refunds", "non_empty": True}}, False),
    ({"kind": "failure_handled", "tool": "refund", "within_events": 1, "by": "retry"}, True),
    ({"kind": "failure_handled", "tool": "refund", "within_events": 5, "by": "retry"}, False),
]


@pytest.mark.parametrize(("rule", "safety"), SAFETY_ROWS,
                         ids=[f"{rule['kind']}-{i}" for i, (rule, _) in enumerate(SAFETY_ROWS)])
def test_safety_exit_for_new_kinds(tmp_path: Path, rule: Rule, safety: bool) -> None:
    """§10.84: with `--safety-exit N`, "when any error-severity violation comes from a safety part of a
    rule ... the exit is N instead of 1"; a liveness part still exits 1 (§0 and §3 say which is which)."""
    outcome = run_check(tmp_path, [{"id": "r", **rule}], SAFETY_EVENTS, "--safety-exit", "9", "--no-lint")
    assert outcome.report["error_count"] >= 1
    assert outcome.code == (9 if safety else 1)


V1_SAFETY_ROWS: list[tuple[str, bool]] = [(rule_id, status == "fail") for rule_id, _, status in V1_PARTIAL_ROWS]


@pytest.mark.parametrize(("rule_id", "safety"), V1_SAFETY_ROWS, ids=[row[0] for row in V1_SAFETY_ROWS])
def test_safety_exit_for_v1_kinds(tmp_path: Path, rule_id: str, safety: bool) -> None:
    """§10.84 with §10.82's list of v1 safety kinds (require_event's `min` and tool_result_required are
    liveness), for a version-1 contract."""
    rule = next(rule for rule in V1_RULES if rule["id"] == rule_id)
    outcome = run_check(tmp_path, [rule], V1_EVENTS, "--safety-exit", "9", version=1)
    assert outcome.code == (9 if safety else 1)


def test_safety_exit_defaults_to_1(tmp_path: Path) -> None:
    """§10.84: "`--safety-exit N` (default 1)"."""
    outcome = run_check(tmp_path, [{"id": "deny", "kind": "deny_tool", "tool": "a"}],
                        [{"seq": 1, "type": "tool.call", "tool": "a"}])
    assert outcome.code == 1


def test_safety_exit_ignores_warning_safety_violations(tmp_path: Path) -> None:
    """§10.84: only "error-severity" safety violations turn the exit to N."""
    rules: list[Rule] = [{"id": "deny", "kind": "deny_tool", "tool": "a", "severity": "warning"},
                         {"id": "needs", "kind": "require_event", "match": {"type": "run.completed"}}]
    outcome = run_check(tmp_path, rules, [{"seq": 1, "type": "tool.call", "tool": "a"}], "--safety-exit", "9")
    assert outcome.code == 1


def test_safety_exit_with_partial(tmp_path: Path) -> None:
    """§10.82 and §10.84 together: an inconclusive liveness part leaves the exit alone, a safety failure
    gives N."""
    events = [{"seq": 1, "type": "tool.call", "tool": "a", "call_id": "1"}]
    liveness: list[Rule] = [{"id": "needs", "kind": "require_event", "match": {"type": "run.completed"}}]
    both: list[Rule] = [*liveness, {"id": "deny", "kind": "deny_tool", "tool": "a"}]
    assert run_check(tmp_path / "one", liveness, events, "--partial", "--safety-exit", "9").code == 0
    assert run_check(tmp_path / "two", both, events, "--partial", "--safety-exit", "9").code == 9


@pytest.mark.parametrize("value", ["x", ""])
def test_safety_exit_needs_an_integer(tmp_path: Path, value: str) -> None:
    """v1 §7.5: bad usage exits 2 with nothing on stdout (the value of `--safety-exit N` is a number)."""
    outcome = run_check(tmp_path, [{"id": "deny", "kind": "deny_tool", "tool": "a"}],
                        [{"seq": 1, "type": "tool.call", "tool": "a"}], "--safety-exit", value)
    assert (outcome.code, outcome.stdout) == (2, "")


@pytest.mark.parametrize("fmt", FORMATS)
def test_safety_exit_is_the_same_in_every_format(tmp_path: Path, fmt: str) -> None:
    """§10.84 and §0 "There is no new severity or exit code": the exit does not depend on `--format`."""
    outcome = run_check(tmp_path, [{"id": "deny", "kind": "deny_tool", "tool": "a"}],
                        [{"seq": 1, "type": "tool.call", "tool": "a"}], "--safety-exit", "7", fmt=fmt)
    assert outcome.code == 7
    assert outcome.stdout


def test_approval_bound_marks_a_denied_call_prevented(tmp_path: Path) -> None:
    """§3.5: "a call that a later `tool.denied` marks gets `prevented: true`"."""
    events = [{"seq": 1, "type": "tool.call", "tool": "refund", "call_id": "c1"},
              {"seq": 2, "type": "tool.denied", "tool": "refund", "call_id": "c1", "reason": "no"}]
    outcome = run_check(tmp_path, [{"id": "appr", "kind": "approval_bound", "tool": "refund"}], events)
    assert prevented(violation(outcome.report, "appr", "approval_bound.missing"))


@pytest.mark.parametrize("rule", [
    {"id": "deny", "kind": "deny_tool", "tool": "shell.*"},
    {"id": "args", "kind": "tool_args", "tool": "shell.exec", "match": {"cmd": "pwd"}},
    {"id": "calls", "kind": "tool_calls", "tool": "shell.exec", "max": 0},
], ids=["deny_tool", "tool_args", "tool_calls"])
def test_every_violation_at_a_denied_call_is_prevented(tmp_path: Path, rule: Rule) -> None:
    """§10.75: "Each violation at a call that was answered by `tool.denied` gets `prevented: true`";
    §10.84: "`record` (and `check`) ... The report carries `prevented: true` on denied attempts"; §8:
    "one evaluator serves live and recorded runs"."""
    events = [{"seq": 1, "type": "tool.call", "tool": "shell.exec", "call_id": "c1", "args": {"cmd": "ls"}},
              {"seq": 2, "type": "tool.denied", "tool": "shell.exec", "call_id": "c1", "reason": "no"}]
    outcome = run_check(tmp_path, [rule], events)
    assert outcome.code == 1
    assert all(prevented(found) for found in outcome.report["violations"])


def test_a_v1_kind_at_a_denied_call_is_prevented_under_version_2_only(tmp_path: Path) -> None:
    """Point 75 ("each violation at a call that was answered by `tool.denied`", which it says v1
    kinds flag too) is specific where §0's identical evidence is general; a version-1 contract's
    report stays version 1's."""
    events = [{"seq": 1, "type": "tool.call", "tool": "shell.exec", "call_id": "c1"},
              {"seq": 2, "type": "tool.denied", "tool": "shell.exec", "call_id": "c1", "reason": "no"}]
    rules = [{"id": "deny", "kind": "deny_tool", "tool": "shell.*"}]
    two = run_check(tmp_path / "two", rules, events)
    one = run_check(tmp_path / "one", rules, events, version=1)
    assert two.report["violations"][0]["prevented"] is True
    assert two.report["violations"][0]["evidence"] == {"tool": "shell.exec"}   # point 1: v1 evidence
    assert one.report["violations"][0]["evidence"] == {"tool": "shell.exec"}
    assert "prevented" not in one.report["violations"][0]


# -- formats ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_partial_with_only_liveness_exits_0_in_every_format(tmp_path: Path, fmt: str) -> None:
    """§10.82: inconclusive violations are left out of the exit, whatever the format."""
    rules = [{"id": "status", "kind": "run_status", "equals": "completed"}]
    outcome = run_check(tmp_path, rules, [{"seq": 1, "type": "tool.call", "tool": "a", "call_id": "1"}],
                        "--partial", fmt=fmt)
    assert outcome.code == 0, outcome.stderr


@pytest.mark.parametrize(("fmt", "code"), [(fmt, code) for fmt in FORMATS for code in (0, 1)])
def test_exit_code_does_not_depend_on_format(tmp_path: Path, fmt: str, code: int) -> None:
    """v1 §7.5 exit codes, kept by §0 ("no new severity or exit code"): 1 with an error violation (an
    unresolved one here, §10.6), else 0."""
    rules = [{"id": "shape", "kind": "output_schema", "schema": {}, "severity": "error" if code else "warning"}]
    outcome = run_check(tmp_path, rules, [{"seq": 1, "type": "tool.call", "tool": "a", "call_id": "1"}], fmt=fmt)
    assert outcome.code == code


def sarif_of(folder: Path, *options: str) -> dict[str, Any]:
    """SARIF of the "run" scenario, its trace preceded by a comment and a blank line."""
    outcome = run_check(folder, RUN_RULES, ["# a comment", "", *RUN_EVENTS], "--no-lint", *options, fmt="sarif")
    assert outcome.code == 1, outcome.stderr
    log: dict[str, Any] = json.loads(outcome.stdout)
    return log


def test_sarif_is_valid_for_github_with_whole_trace_violations(tmp_path: Path) -> None:
    """ci-formats §1.1: the OASIS schema and GitHub's profile ("`locations[]`, with at least one
    location", a physical one), also for violations that have no seq (§10.2)."""
    log = sarif_of(tmp_path)
    assert list(sarif_validator().iter_errors(log)) == []
    assert github_profile_problems(log) == []


def test_sarif_has_one_result_per_violation_on_its_physical_line(tmp_path: Path) -> None:
    """v1 §14 D1: "SARIF regions use the event's physical line in the trace file, not its position + 1";
    v1 §7.4: one result per violation."""
    log = sarif_of(tmp_path / "sarif")
    report = run_check(tmp_path / "json", RUN_RULES, ["# a comment", "", *RUN_EVENTS], "--no-lint").report
    results = log["runs"][0]["results"]
    assert len(results) == len(report["violations"])
    lines = {result["locations"][0]["physicalLocation"]["region"]["startLine"] for result in results
             if result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "t.jsonl"}
    expected = {found["event_seq"] + 2 for found in report["violations"] if "event_seq" in found}
    assert lines == expected


def test_sarif_does_not_call_inconclusive_an_error(tmp_path: Path) -> None:
    """§10.82: inconclusive violations are not errors (left out of `error_count` and `passed`), so their
    SARIF results are not at level `error` (ci-formats §1.1 "Level mapping"); safety ones stay errors."""
    log = sarif_of(tmp_path, "--partial")
    results = log["runs"][0]["results"]
    assert github_profile_problems(log) == []
    levels = {result["ruleId"]: result["level"] for result in results}
    assert levels["status"] != "error"
    assert levels["approved"] == "error"


def junit_of(folder: Path, *options: str) -> ET.Element:
    outcome = run_check(folder, RUN_RULES, RUN_EVENTS, "--no-lint", *options, fmt="junit")
    assert outcome.code == 1, outcome.stderr
    return ET.fromstring(outcome.stdout.encode("utf-8"))


def test_junit_testcases_have_unique_identities(tmp_path: Path) -> None:
    """ci-formats §2: "`name` is required" (Jenkins) and "classname+name is the identity: duplicates after
    the first are dropped" (GitLab), so no two testcases share both."""
    root = junit_of(tmp_path)
    cases = root.iter("testcase")
    identities = [(case.get("classname"), case.get("name")) for case in cases]
    assert identities and all(name for _, name in identities)
    assert len(identities) == len(set(identities))


def test_junit_failures_follow_the_verdict_under_partial(tmp_path: Path) -> None:
    """§10.82: a rule whose only violations are inconclusive passes, so it has no `<failure>`; a failed
    safety rule keeps one."""
    root = junit_of(tmp_path, "--partial")
    failing = {case.get("name") for case in root.iter("testcase") if case.find("failure") is not None}
    assert "approved" in failing
    assert "status" not in failing


@pytest.mark.parametrize(("options", "first"), [((), "FAIL"), (("--partial",), "FAIL")])
def test_text_verdict_line(tmp_path: Path, options: tuple[str, ...], first: str) -> None:
    """v1 §7.1: the text report starts with `PASS|FAIL  <contract name>` (safety failures stay failures
    under `--partial`)."""
    outcome = run_check(tmp_path, RUN_RULES, RUN_EVENTS, "--no-lint", *options, fmt="text")
    assert outcome.stdout.splitlines()[0].split() == [first, "spec"]


def test_text_verdict_passes_when_only_liveness_is_left(tmp_path: Path) -> None:
    """v1 §7.1 with §10.82: only inconclusive violations leave a passing check."""
    rules = [{"id": "status", "kind": "run_status", "equals": "completed"}]
    outcome = run_check(tmp_path, rules, [{"seq": 1, "type": "tool.call", "tool": "a", "call_id": "1"}],
                        "--partial", fmt="text")
    assert outcome.stdout.splitlines()[0].split() == ["PASS", "spec"]
