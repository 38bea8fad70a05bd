"""Version-1 kinds under `"version": 2`, read from spec/v2-extensions.md alone: §0 (decisions, report
extras), §2 "v1 kinds under v2", and the resolutions 10.1-10.7, 10.15, 10.16 (and 10.19-10.25 where they
touch version-1 kinds). Every case runs the real CLI with `--format json` and checks exact codes,
statuses, seqs, counts and exit codes."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support import write_contract, write_trace

Event = dict[str, Any]
Rule = dict[str, Any]

V2_ONLY_EXTRAS = ("pointer", "related_seqs", "caused_by")


def run(cli: Any, tmp_path: Path, rules: list[Any], trace: list[Any], version: int = 2,
        *options: str) -> tuple[int, dict[str, Any]]:
    """Check `trace` against a contract of `rules`; returns (exit code, JSON report)."""
    write_contract(tmp_path, rules, version=version)
    write_trace(tmp_path, trace)
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json", *options)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


def refusal(cli: Any, tmp_path: Path, rules: list[Rule], trace: list[Event] | None = None,
            version: int = 2) -> str:
    """The one stderr line of a refused check (exit 2, nothing on stdout)."""
    write_contract(tmp_path, rules, version=version)
    write_trace(tmp_path, trace or [{"type": "agent.message"}])
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert (result.returncode, result.stdout) == (2, ""), (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("agent-invariants: "), result.stderr
    assert "Traceback" not in result.stderr
    return str(lines[0])


def found(report: dict[str, Any], rule_id: str | None = None) -> list[tuple[str, str, int | None]]:
    """(code, status, event_seq) of the violations (of one rule, or of the whole report)."""
    if rule_id is None:
        violations = report["violations"]
    else:
        [result] = [r for r in report["results"] if r["rule_id"] == rule_id]
        violations = result["violations"]
    return [(v["code"], v["status"], v.get("event_seq")) for v in violations]


def seqs(report: dict[str, Any], rule_id: str) -> list[int | None]:
    return [seq for _, _, seq in found(report, rule_id)]


def checked(report: dict[str, Any], rule_id: str) -> int:
    [result] = [r for r in report["results"] if r["rule_id"] == rule_id]
    count: int = result["checked"]
    return count


def deny(match: dict[str, Any]) -> Rule:
    return {"id": "d", "kind": "deny_event", "match": match}


# -- One trace that breaks all twelve version-1 kinds -------------------------------------------------

ALL_KINDS: list[Rule] = [
    {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"},
    {"id": "allow", "kind": "allow_tools", "tools": ["shell.*", "pay"]},
    {"id": "approve", "kind": "require_approval", "tool": "pay"},
    {"id": "stop", "kind": "stop_is_final"},
    {"id": "complete", "kind": "completion_requires_outcome"},
    {"id": "confident", "kind": "confidence_requires_outcome", "threshold": 0.5},
    {"id": "retry", "kind": "retry_limit", "max_attempts": 1},
    {"id": "budget", "kind": "event_budget", "max_events": 1, "max_tool_calls": 1, "max_tool_failures": 0},
    {"id": "order", "kind": "require_order", "before": {"type": "approval.granted"},
     "after": {"type": "tool.call", "tool": "pay"}},
    {"id": "need-outcome", "kind": "require_event", "match": {"type": "outcome.observed"}},
    {"id": "few-calls", "kind": "require_event", "match": {"type": "tool.call"}, "max": 1},
    {"id": "no-failure", "kind": "deny_event", "match": {"type": "tool.result", "ok": False}},
    {"id": "results", "kind": "tool_result_required"},
]

ALL_KINDS_TRACE: list[Event] = [
    {"type": "tool.call", "tool": "shell.exec", "call_id": "c1"},
    {"type": "tool.result", "call_id": "c1", "ok": False},
    {"type": "tool.call", "tool": "pay", "call_id": "c2"},
    {"type": "tool.call", "tool": "web", "call_id": "c3"},
    {"type": "tool.call", "tool": "shell.exec", "call_id": "c4"},
    {"type": "control.stop"},
    {"type": "agent.message", "claims_completion": True, "confidence": 0.9},
    {"type": "run.completed"},
]

ALL_KINDS_EXPECTED: list[tuple[str, str, int | None]] = [
    ("deny_tool.denied", "fail", 1),
    ("deny_tool.denied", "fail", 5),
    ("allow_tools.not_allowed", "fail", 4),
    ("require_approval.missing", "fail", 3),
    ("stop_is_final.after_stop", "fail", 7),
    ("completion_requires_outcome.missing", "fail", 7),
    ("completion_requires_outcome.missing", "fail", 8),
    ("confidence_requires_outcome.missing", "fail", 7),
    ("retry_limit.exceeded", "fail", 5),
    ("event_budget.events", "fail", None),
    ("event_budget.tool_calls", "fail", None),
    ("event_budget.tool_failures", "fail", None),
    ("require_order.missing", "fail", 3),
    ("require_event.min", "fail", None),
    ("require_event.max", "fail", 1),
    ("deny_event.matched", "fail", 2),
    ("tool_result_required.missing", "fail", 3),
    ("tool_result_required.missing", "fail", 4),
    ("tool_result_required.missing", "fail", 5),
]


@pytest.mark.parametrize("version", [1, 2])
def test_every_v1_kind_has_its_code_and_status_fail(cli: Any, tmp_path: Path, version: int) -> None:
    """10.1: the v1 codes table; `code` and `status: "fail"` are emitted for version-1 contracts too.
    10.2/v1 §4: the seqs are v1's (event_budget and require_event.min without seq). 10.5: the
    top-level list is the concatenation of results in contract order."""
    code, report = run(cli, tmp_path, ALL_KINDS, ALL_KINDS_TRACE, version)
    assert code == 1
    assert found(report) == ALL_KINDS_EXPECTED
    assert (report["error_count"], report["warning_count"], report["passed"]) == (19, 0, False)


@pytest.mark.parametrize("version", [1, 2])
def test_v1_kinds_carry_no_v2_only_extras(cli: Any, tmp_path: Path, version: int) -> None:
    """10.1: "v1 kinds keep message and evidence identical to v1; `code` (and `status: "fail"`) are
    the only additions" -- no pointer, related_seqs or caused_by on a v1 kind."""
    _, report = run(cli, tmp_path, ALL_KINDS, ALL_KINDS_TRACE, version)
    for violation in report["violations"]:
        assert not set(V2_ONLY_EXTRAS) & set(violation), violation


def test_v1_contract_report_equals_v2_apart_from_the_version(cli: Any, tmp_path: Path) -> None:
    """§0: "v1 kinds inside a v2 contract keep identical verdicts, evidence and messages"; reports
    keep schema agent-invariants/check/v1 with contract.version 2."""
    code1, v1 = run(cli, tmp_path, ALL_KINDS, ALL_KINDS_TRACE, 1)
    code2, v2 = run(cli, tmp_path, ALL_KINDS, ALL_KINDS_TRACE, 2)
    assert (code1, code2) == (1, 1)
    assert v1["contract"]["version"] == 1 and v2["contract"]["version"] == 2
    assert v1["schema"] == v2["schema"] == "agent-invariants/check/v1"
    v1["contract"].pop("version")
    v2["contract"].pop("version")
    assert v1 == v2


def test_event_budget_code_follows_the_evidence_metric(cli: Any, tmp_path: Path) -> None:
    """10.1: `event_budget.events` / `.tool_calls` / `.tool_failures` (the evidence `metric`)."""
    _, report = run(cli, tmp_path, [ALL_KINDS[7]], ALL_KINDS_TRACE)
    pairs = [(v["code"], v["evidence"]["metric"]) for v in report["violations"]]
    assert pairs == [("event_budget.events", "events"), ("event_budget.tool_calls", "tool_calls"),
                     ("event_budget.tool_failures", "tool_failures")]


def test_warning_severity_v1_violation_keeps_status_fail_and_exit_0(cli: Any, tmp_path: Path) -> None:
    """10.6: every violation has its rule's severity and counts in warning_count; status is fail."""
    rule = {"id": "w", "kind": "deny_tool", "tool": "x", "severity": "warning"}
    code, report = run(cli, tmp_path, [rule], [{"type": "tool.call", "tool": "x"}])
    assert code == 0
    assert (report["passed"], report["error_count"], report["warning_count"]) == (True, 0, 1)
    assert found(report) == [("deny_tool.denied", "fail", 1)]


def test_v1_evidence_string_is_not_cut_at_200(cli: Any, tmp_path: Path) -> None:
    """10.1 (v1 kinds keep evidence identical to v1) over §0's 200-char cut: a 300-char tool name
    stays whole in deny_tool's `{tool}` evidence. Spec reading: 10.1 is the specific rule for v1
    kinds."""
    tool = "t" * 300
    _, report = run(cli, tmp_path, [{"id": "d", "kind": "deny_tool", "tool": "t*"}],
                    [{"type": "tool.call", "tool": tool}])
    assert report["violations"][0]["evidence"] == {"tool": tool}


# -- Matcher `args` ------------------------------------------------------------------------------------

def test_args_matches_as_a_subset(cli: Any, tmp_path: Path) -> None:
    """§2: a literal object matches as a subset; §2 v1 kinds: matchers accept `args`."""
    trace = [{"type": "tool.call", "tool": "x", "args": {"a": 1, "b": 2}},
             {"type": "tool.call", "tool": "x", "args": {"a": 2}}]
    code, report = run(cli, tmp_path, [deny({"type": "tool.call", "args": {"a": 1}})], trace)
    assert code == 1
    assert found(report) == [("deny_event.matched", "fail", 1)]
    assert checked(report, "d") == 1


def test_args_event_without_args_never_matches(cli: Any, tmp_path: Path) -> None:
    """§2: "an event with no args never matches", even `$exists: false`."""
    trace = [{"type": "tool.call", "tool": "x"}]
    code, report = run(cli, tmp_path, [deny({"args": {"a": {"$exists": False}}})], trace)
    assert code == 0
    assert checked(report, "d") == 0


def test_args_exists_false_matches_an_args_object_lacking_the_key(cli: Any, tmp_path: Path) -> None:
    """§2 `$exists` / 10.9: only `$exists: false` accepts absence."""
    trace = [{"type": "tool.call", "tool": "x", "args": {"b": 1}},
             {"type": "tool.call", "tool": "x", "args": {"a": 1}}]
    _, report = run(cli, tmp_path, [deny({"args": {"a": {"$exists": False}}})], trace)
    assert seqs(report, "d") == [1]


def test_empty_args_matcher_matches_every_event_with_args(cli: Any, tmp_path: Path) -> None:
    """§2: `args: {}` is an empty subset, so it matches any event that has args (whatever its type),
    and never one without args."""
    trace = [{"type": "tool.call", "tool": "x", "args": {}},
             {"type": "tool.call", "tool": "x"},
             {"type": "approval.granted", "args": {"k": 1}},
             {"type": "agent.message"}]
    _, report = run(cli, tmp_path, [deny({"args": {}})], trace)
    assert seqs(report, "d") == [1, 3]


def test_args_absent_nested_key_is_a_non_match(cli: Any, tmp_path: Path) -> None:
    """10.9: a literal whose key is absent is a mismatch (so the matcher does not match)."""
    trace = [{"type": "tool.call", "tool": "x", "args": {"a": {"c": 1}}}]
    code, report = run(cli, tmp_path, [deny({"args": {"a": {"b": 1}}})], trace)
    assert (code, report["violations"]) == (0, [])


def test_args_equality_is_type_strict(cli: Any, tmp_path: Path) -> None:
    """§2: equality is JSON-type-strict: true != 1, 1 = 1.0."""
    trace = [{"type": "tool.call", "args": {"a": True}},
             {"type": "tool.call", "args": {"a": 1.0}},
             {"type": "tool.call", "args": {"a": "1"}}]
    _, report = run(cli, tmp_path, [deny({"args": {"a": 1}})], trace)
    assert seqs(report, "d") == [2]


def test_args_operators_work_in_matchers(cli: Any, tmp_path: Path) -> None:
    """§2: a matcher's args is a match tree (operators included)."""
    trace = [{"type": "tool.call", "args": {"n": 5, "q": "refund-12"}},
             {"type": "tool.call", "args": {"n": 6, "q": "refund-13"}},
             {"type": "tool.call", "args": {"n": 7, "q": "order-1"}}]
    _, report = run(cli, tmp_path, [deny({"args": {"n": {"$gt": 5}, "q": {"$regex": "^refund"}}})], trace)
    assert seqs(report, "d") == [2]


def test_args_null_value_satisfies_exists_true(cli: Any, tmp_path: Path) -> None:
    """10.9: a null arg satisfies `$exists: true`."""
    trace = [{"type": "tool.call", "args": {"a": None}}, {"type": "tool.call", "args": {}}]
    _, report = run(cli, tmp_path, [deny({"args": {"a": {"$exists": True}}})], trace)
    assert seqs(report, "d") == [1]


@pytest.mark.parametrize("reference", [
    {"$arg": "a"},
    {"$from_output": "a"},
    {"$from_result": {"tool": "get"}},
])
def test_args_with_a_reference_is_a_load_error(cli: Any, tmp_path: Path, reference: dict[str, Any]) -> None:
    """§2: matcher `args` is "a match tree without references"; 10.12: references are load errors in
    matchers."""
    line = refusal(cli, tmp_path, [deny({"type": "tool.call", "args": {"a": reference}})])
    assert "c.json" in line


def test_args_with_unknown_operator_is_a_load_error(cli: Any, tmp_path: Path) -> None:
    """§2: unknown `$` keys are load errors, so one grammar holds everywhere (matchers too)."""
    line = refusal(cli, tmp_path, [deny({"args": {"a": {"$nope": 1}}})])
    assert "c.json" in line


def test_args_exists_at_the_root_is_a_load_error(cli: Any, tmp_path: Path) -> None:
    """10.11: `$exists` is a load error anywhere but a literal key's value (here: the args root)."""
    line = refusal(cli, tmp_path, [deny({"args": {"$exists": True}})])
    assert "$.rules[0].match.args" in line


def test_args_regex_backreference_is_a_load_error(cli: Any, tmp_path: Path) -> None:
    """10.10: the loader enforces RE2 syntax (no backreferences), in matchers as everywhere."""
    line = refusal(cli, tmp_path, [deny({"args": {"a": {"$regex": "(a)\\1"}}})])
    assert "$.rules[0].match.args.a" in line


def test_args_any_of_at_the_root(cli: Any, tmp_path: Path) -> None:
    """§2: an operator object may be the root node; `$any_of` matches if any branch matches."""
    trace = [{"type": "tool.call", "args": {"a": 1}}, {"type": "tool.call", "args": {"b": 2}},
             {"type": "tool.call", "args": {"c": 3}}]
    _, report = run(cli, tmp_path, [deny({"args": {"$any_of": [{"a": 1}, {"b": 2}]}})], trace)
    assert seqs(report, "d") == [1, 2]


@pytest.mark.parametrize("pattern", [[1], 5, "x", None])
def test_non_object_args_pattern_never_matches(cli: Any, tmp_path: Path, pattern: Any) -> None:
    """Spec silent on a matcher `args` that is not an object: a literal node may be any JSON (§2), and
    an event's args is always an object (§1), so it is accepted and never matches."""
    code, report = run(cli, tmp_path, [deny({"args": pattern})], [{"type": "tool.call", "args": {"a": 1}}])
    assert (code, report["violations"]) == (0, [])


def test_empty_matcher_still_refused_under_v2(cli: Any, tmp_path: Path) -> None:
    """v1 §2.4: "A matcher needs at least one field", kept under version 2."""
    line = refusal(cli, tmp_path, [deny({})])
    assert "$.rules[0].match" in line


def test_matcher_args_reads_approval_args(cli: Any, tmp_path: Path) -> None:
    """§1: `args` is on approval.granted too; a matcher reads the event's own args (10.15)."""
    rule = {"id": "o", "kind": "require_order",
            "before": {"type": "approval.granted", "args": {"amount": 10}},
            "after": {"type": "tool.call", "tool": "pay"}}
    trace = [{"type": "approval.granted", "args": {"amount": 12}},
             {"type": "tool.call", "tool": "pay"},
             {"type": "approval.granted", "args": {"amount": 10}},
             {"type": "tool.call", "tool": "pay"}]
    code, report = run(cli, tmp_path, [rule], trace)
    assert code == 1
    assert found(report) == [("require_order.missing", "fail", 2)]
    assert checked(report, "o") == 2


def test_require_order_args_event_is_not_its_own_predecessor(cli: Any, tmp_path: Path) -> None:
    """v1 §4.9 kept under v2: an event matching both before and after is not its own predecessor."""
    rule = {"id": "o", "kind": "require_order", "before": {"args": {"k": 1}},
            "after": {"type": "tool.call", "args": {"k": 1}}}
    trace = [{"type": "tool.call", "args": {"k": 1}}, {"type": "tool.call", "args": {"k": 1}}]
    _, report = run(cli, tmp_path, [rule], trace)
    assert found(report, "o") == [("require_order.missing", "fail", 1)]


def test_require_order_evidence_keeps_the_v2_matchers(cli: Any, tmp_path: Path) -> None:
    """v1 §4.9: evidence `{before, after}` (the normalised matchers), here with v2 keys."""
    before = {"type": "approval.granted", "args": {"amount": {"$lte": 10}}}
    after = {"type": "tool.call", "status": "s*", "reason": "r"}
    rule = {"id": "o", "kind": "require_order", "before": before, "after": after}
    _, report = run(cli, tmp_path, [rule], [{"type": "tool.call", "status": "sent", "reason": "r"}])
    assert report["violations"][0]["evidence"] == {"before": before, "after": after}


def test_require_event_counts_args_matches_min_and_max(cli: Any, tmp_path: Path) -> None:
    """v1 §4.10 with an args matcher: one violation; `.max` at the first match, `.min` too when
    there is one; checked = matches."""
    trace = [{"type": "tool.call", "args": {"q": "a"}},
             {"type": "tool.call", "args": {"q": "b"}},
             {"type": "tool.call", "args": {"q": "a"}}]
    rules = [{"id": "max", "kind": "require_event", "match": {"args": {"q": "a"}}, "max": 1},
             {"id": "min", "kind": "require_event", "match": {"args": {"q": "a"}}, "min": 3}]
    _, report = run(cli, tmp_path, rules, trace)
    assert found(report) == [("require_event.max", "fail", 1), ("require_event.min", "fail", 1)]
    assert (checked(report, "max"), checked(report, "min")) == (2, 2)
    assert report["violations"][0]["evidence"] == {"match": {"args": {"q": "a"}}, "found": 2, "min": 1, "max": 1}


def test_require_event_min_without_match_has_no_seq(cli: Any, tmp_path: Path) -> None:
    """v1 §4.10 / 10.1: require_event.min without seq when nothing matches."""
    rule = {"id": "r", "kind": "require_event", "match": {"type": "control.stop", "reason": "user*"}}
    _, report = run(cli, tmp_path, [rule], [{"type": "control.stop", "reason": "budget"}])
    assert found(report) == [("require_event.min", "fail", None)]
    assert "event_index" not in report["violations"][0]


# -- Matcher `reason` ----------------------------------------------------------------------------------

def test_reason_glob_matches_own_reason_only(cli: Any, tmp_path: Path) -> None:
    """§2: `reason` is a glob; a glob never matches an absent field (v1 §2.4)."""
    trace = [{"type": "control.stop", "reason": "user cancel"},
             {"type": "control.stop", "reason": "budget"},
             {"type": "control.stop"}]
    _, report = run(cli, tmp_path, [deny({"reason": "user*"})], trace)
    assert seqs(report, "d") == [1]


@pytest.mark.parametrize(("pattern", "reason", "matches"), [
    ("a.b(c)", "a.b(c)", True),
    ("a.b(c)", "aXb(c)", False),
    ("[x]", "[x]", True),
    ("[x]", "x", False),
    ("a?c", "abc", True),
    ("a?c", "ac", False),
    ("x*", "X1", False),
    ("^r$", "^r$", True),
])
def test_reason_glob_characters(cli: Any, tmp_path: Path, pattern: str, reason: str, matches: bool) -> None:
    """v1 §2.7 glob semantics for `reason`: only `*` and `?` are wildcards, anchored, case-sensitive."""
    _, report = run(cli, tmp_path, [deny({"reason": pattern})], [{"type": "run.failed", "reason": reason}])
    assert seqs(report, "d") == ([1] if matches else [])


@pytest.mark.parametrize("event_type", ["control.stop", "run.failed", "tool.denied", "approval.revoked",
                                        "agent.message"])
def test_reason_is_read_on_any_event_type(cli: Any, tmp_path: Path, event_type: str) -> None:
    """10.15: matcher keys read the event's own field; 10.16: the field is checked (so present) on
    every event that carries it."""
    _, report = run(cli, tmp_path, [deny({"reason": "why"})], [{"type": event_type, "reason": "why"}])
    assert seqs(report, "d") == [1]


def test_empty_reason_glob_is_a_load_error(cli: Any, tmp_path: Path) -> None:
    """§2: `reason` is a glob; v1 §2.2: globs are 1..500 chars after trimming."""
    refusal(cli, tmp_path, [deny({"reason": "  "})])


def test_reason_glob_over_500_chars_is_a_load_error(cli: Any, tmp_path: Path) -> None:
    """v1 §2.2: a glob is 1..500 chars."""
    refusal(cli, tmp_path, [deny({"reason": "r" * 501})])


# -- Matcher `status` ----------------------------------------------------------------------------------

def test_status_reads_the_terminal_own_status(cli: Any, tmp_path: Path) -> None:
    """§2: `status` is a glob over the event's status."""
    trace = [{"type": "run.completed", "status": "awaiting_approval"}]
    _, report = run(cli, tmp_path, [deny({"type": "run.*", "status": "awaiting*"})], trace)
    assert found(report) == [("deny_event.matched", "fail", 1)]


@pytest.mark.parametrize(("event_type", "pattern"), [("run.completed", "completed"), ("run.failed", "failed"),
                                                     ("run.completed", "*")])
def test_status_never_sees_the_derived_run_status(cli: Any, tmp_path: Path, event_type: str,
                                                  pattern: str) -> None:
    """10.15: "matcher keys read the event's own field only (no derived status -- only run_status
    derives one)": a terminal without `status` never matches."""
    code, report = run(cli, tmp_path, [deny({"status": pattern})], [{"type": event_type}])
    assert (code, report["violations"], checked(report, "d")) == (0, [], 0)


def test_status_on_a_non_terminal_event_is_read(cli: Any, tmp_path: Path) -> None:
    """10.16: `status` is type-checked on every event carrying it; 10.15: the matcher reads the
    event's own field, whatever its type."""
    trace = [{"type": "agent.message", "status": "completed"},
             {"type": "tool.result", "status": "completed"},
             {"type": "run.completed"}]
    _, report = run(cli, tmp_path, [deny({"status": "completed"})], trace)
    assert seqs(report, "d") == [1, 2]


def test_status_and_type_and_args_are_anded(cli: Any, tmp_path: Path) -> None:
    """v1 §2.4: all present keys must match (AND), with the v2 keys too."""
    trace = [{"type": "run.failed", "status": "timeout", "reason": "budget", "args": {"a": 1}},
             {"type": "run.failed", "status": "timeout", "reason": "user", "args": {"a": 1}},
             {"type": "run.failed", "status": "timeout", "reason": "budget"}]
    _, report = run(cli, tmp_path, [deny({"type": "run.failed", "status": "time*", "reason": "budget",
                                          "args": {"a": 1}})], trace)
    assert seqs(report, "d") == [1]


# -- tool.result under v1 kinds: its own fields (10.15) -----------------------------------------------

def test_result_without_own_tool_never_matches_tool(cli: Any, tmp_path: Path) -> None:
    """10.15: "in v1 kinds tool/args are the event's own (a tool.result without its own tool never
    matches tool)"; §2's "successful get" reading is for new kinds only."""
    trace = [{"type": "tool.call", "tool": "get", "call_id": "c1"},
             {"type": "tool.result", "call_id": "c1", "ok": True},
             {"type": "tool.call", "tool": "get", "call_id": "c2"},
             {"type": "tool.result", "call_id": "c2", "tool": "get", "ok": True}]
    _, report = run(cli, tmp_path, [deny({"type": "tool.result", "tool": "get", "ok": True})], trace)
    assert seqs(report, "d") == [4]


def test_result_own_tool_wins_over_its_call(cli: Any, tmp_path: Path) -> None:
    """10.15: a v1 kind reads the result's own tool, even when it differs from its call's."""
    trace = [{"type": "tool.call", "tool": "get", "call_id": "c1"},
             {"type": "tool.result", "call_id": "c1", "tool": "other"}]
    _, report = run(cli, tmp_path, [deny({"type": "tool.result", "tool": "other"})], trace)
    assert seqs(report, "d") == [2]


def test_result_without_own_args_never_matches_args(cli: Any, tmp_path: Path) -> None:
    """10.15: v1 kinds read the result's own args, not its call's; §2: no args never matches."""
    trace = [{"type": "tool.call", "tool": "get", "call_id": "c1", "args": {"id": 1}},
             {"type": "tool.result", "call_id": "c1", "ok": True}]
    _, report = run(cli, tmp_path, [deny({"type": "tool.result", "args": {"id": 1}})], trace)
    assert (report["violations"], checked(report, "d")) == ([], 0)


def test_require_order_result_tool_is_its_own(cli: Any, tmp_path: Path) -> None:
    """10.15 in require_order: an after `{type: tool.result, tool: get}` sees only results naming
    get themselves."""
    rule = {"id": "o", "kind": "require_order", "before": {"type": "approval.granted"},
            "after": {"type": "tool.result", "tool": "get"}}
    trace = [{"type": "tool.call", "tool": "get", "call_id": "c1"},
             {"type": "tool.result", "call_id": "c1"},
             {"type": "tool.result", "call_id": "c1", "tool": "get"}]
    _, report = run(cli, tmp_path, [rule], trace)
    assert (found(report), checked(report, "o")) == ([("require_order.missing", "fail", 3)], 1)


def test_tool_result_required_unchanged_with_duplicate_call_ids(cli: Any, tmp_path: Path) -> None:
    """§0: v1 kinds keep identical verdicts under v2 (10.3's pairing is for new kinds): v1 §4.12's
    "last result wins" still satisfies both calls of one call_id."""
    trace = [{"type": "tool.call", "tool": "a", "call_id": "c"},
             {"type": "tool.call", "tool": "a", "call_id": "c"},
             {"type": "tool.result", "call_id": "c"}]
    for version in (1, 2):
        code, report = run(cli, tmp_path, [{"id": "r", "kind": "tool_result_required"}], trace, version)
        assert (code, report["violations"], checked(report, "r")) == (0, [], 2)


def test_tool_denied_is_an_ordinary_event_to_v1_kinds(cli: Any, tmp_path: Path) -> None:
    """10.75: tool.denied is ordinary to v1 kinds: tool_result_required flags a denied call."""
    trace = [{"type": "tool.call", "tool": "a", "call_id": "c"},
             {"type": "tool.denied", "call_id": "c", "reason": "no"}]
    _, report = run(cli, tmp_path, [{"id": "r", "kind": "tool_result_required"}], trace)
    assert found(report) == [("tool_result_required.missing", "fail", 1)]


# -- stop_is_final.reasons -----------------------------------------------------------------------------

STOP = {"id": "s", "kind": "stop_is_final", "reasons": ["user*"]}


def test_reasons_only_matching_stops_count(cli: Any, tmp_path: Path) -> None:
    """§2: `reasons: [globs]`; only matching stops count."""
    trace = [{"type": "control.stop", "reason": "budget"}, {"type": "agent.message"}]
    code, report = run(cli, tmp_path, [STOP], trace)
    assert (code, report["violations"], checked(report, "s")) == (0, [], 0)


def test_reasons_stop_without_reason_does_not_count(cli: Any, tmp_path: Path) -> None:
    """§2 + v1 §2.7: a glob never matches an absent value, so a reason-less stop is not counted."""
    trace = [{"type": "control.stop"}, {"type": "agent.message"}]
    code, report = run(cli, tmp_path, [STOP], trace)
    assert (code, report["violations"], checked(report, "s")) == (0, [], 0)


def test_reasons_matching_stop_flags_later_events(cli: Any, tmp_path: Path) -> None:
    """§2/v1 §4.4: a counting stop flags each later event not in allowed_after, with v1 evidence."""
    trace = [{"type": "control.stop", "reason": "user cancel"}, {"type": "agent.message"},
             {"type": "run.completed"}]
    code, report = run(cli, tmp_path, [STOP], trace)
    assert code == 1
    assert found(report) == [("stop_is_final.after_stop", "fail", 2)]
    assert report["violations"][0]["evidence"] == {
        "stop_seq": 1, "allowed_after": ["run.completed", "run.failed", "telemetry.*"]}
    assert checked(report, "s") == 1


def test_reasons_non_counting_stop_is_not_flagged_by_earlier_non_counting(cli: Any, tmp_path: Path) -> None:
    """10.15: "a stop whose reason does not match neither counts nor is itself flagged by the earlier
    non-counting stops"."""
    trace = [{"type": "control.stop", "reason": "budget"}, {"type": "control.stop", "reason": "guard"},
             {"type": "control.stop", "reason": "user"}, {"type": "run.completed"}]
    code, report = run(cli, tmp_path, [STOP], trace)
    assert (code, report["violations"], checked(report, "s")) == (0, [], 1)


def test_reasons_non_counting_stop_after_a_counting_one_is_flagged(cli: Any, tmp_path: Path) -> None:
    """v1 §4.4 (a later stop is itself disallowed unless listed) with 10.15: a non-matching stop after
    a counting one is an ordinary later event, flagged once; it flags nothing itself."""
    trace = [{"type": "control.stop", "reason": "user"}, {"type": "control.stop", "reason": "budget"},
             {"type": "agent.message"}]
    _, report = run(cli, tmp_path, [STOP], trace)
    assert found(report) == [("stop_is_final.after_stop", "fail", 2), ("stop_is_final.after_stop", "fail", 3)]
    assert [v["evidence"]["stop_seq"] for v in report["violations"]] == [1, 1]
    assert checked(report, "s") == 1


def test_reasons_several_counting_stops_flag_once_per_stop(cli: Any, tmp_path: Path) -> None:
    """v1 §4.4 kept: an event after the k-th counting stop is reported k times; 10.5: ascending
    event_index within the rule result."""
    trace = [{"type": "control.stop", "reason": "user a"}, {"type": "control.stop", "reason": "user b"},
             {"type": "agent.message"}]
    _, report = run(cli, tmp_path, [STOP], trace)
    assert seqs(report, "s") == [2, 3, 3]
    assert [v["evidence"]["stop_seq"] for v in report["violations"]] == [1, 1, 2]
    assert checked(report, "s") == 2


def test_reasons_with_custom_stop_type_and_allowed_after(cli: Any, tmp_path: Path) -> None:
    """§2: `reasons` combines with v1's stop_type and allowed_after (which replaces the default)."""
    rule = {"id": "s", "kind": "stop_is_final", "stop_type": "run.failed", "reasons": ["guard*"],
            "allowed_after": ["telemetry.*"]}
    trace = [{"type": "run.failed", "reason": "guardrail"}, {"type": "telemetry.x"},
             {"type": "run.completed"}]
    _, report = run(cli, tmp_path, [rule], trace)
    assert found(report) == [("stop_is_final.after_stop", "fail", 3)]
    assert report["violations"][0]["evidence"] == {"stop_seq": 1, "allowed_after": ["telemetry.*"]}


def test_reasons_glob_characters_are_literal(cli: Any, tmp_path: Path) -> None:
    """v1 §2.7 for `reasons`: `.`, `(`, `[` are literal; `?` is one character."""
    rule = {"id": "s", "kind": "stop_is_final", "reasons": ["cancel(user)", "b?"]}
    trace = [{"type": "control.stop", "reason": "cancelXuser)"}, {"type": "control.stop", "reason": "bx"},
             {"type": "agent.message"}, {"type": "control.stop", "reason": "cancel(user)"},
             {"type": "agent.message"}]
    _, report = run(cli, tmp_path, [rule], trace)
    assert checked(report, "s") == 2
    assert seqs(report, "s") == [3, 4, 5, 5]


def test_stop_is_final_singular_reason_is_unknown(cli: Any, tmp_path: Path) -> None:
    """§2: the key is `reasons`; v1 §2.2: unknown keys are rejected per rule kind."""
    line = refusal(cli, tmp_path, [{"id": "s", "kind": "stop_is_final", "reason": ["u"]}])
    assert "$.rules[0].reason" in line


@pytest.mark.parametrize("reasons", [[], [""], ["r" * 501]])
def test_reasons_bad_lists_are_load_errors(cli: Any, tmp_path: Path, reasons: list[str]) -> None:
    """§2: `reasons: [globs]`; v1 §2.2: a glob is 1..500 chars. Spec reading: an empty list is
    refused like v1's other glob lists with a minimum of 1 (spec silent on its length; the product
    refuses it)."""
    refusal(cli, tmp_path, [{"id": "s", "kind": "stop_is_final", "reasons": reasons}])


def test_stop_without_reasons_behaves_as_v1(cli: Any, tmp_path: Path) -> None:
    """§2: "Without these keys, behaviour is v1's": every stop counts, reasons or not."""
    trace = [{"type": "control.stop", "reason": "budget"}, {"type": "agent.message"}]
    for version in (1, 2):
        _, report = run(cli, tmp_path, [{"id": "s", "kind": "stop_is_final"}], trace, version)
        assert found(report) == [("stop_is_final.after_stop", "fail", 2)]


# -- Order of violations (10.5) ------------------------------------------------------------------------

def test_stop_is_final_keeps_the_version_1_order_under_version_2(cli: Any, tmp_path: Path) -> None:
    """§0: v1 kinds inside a v2 contract "keep identical verdicts, evidence and messages"; point 1:
    `code` and `status` "are the only additions"; issue 16 asks that the same contract as version 2
    give the same violations. So point 5's ascending order is for the new kinds: stop_is_final keeps
    v1's stop-by-stop order (2,3,4,3,4), as under version 1 (next tests)."""
    trace = [{"type": "control.stop"}, {"type": "control.stop"}, {"type": "agent.message"},
             {"type": "agent.message"}]
    _, report = run(cli, tmp_path, [{"id": "s", "kind": "stop_is_final"}], trace)
    assert seqs(report, "s") == [2, 3, 4, 3, 4]


def test_retry_limit_keeps_the_version_1_order_under_version_2(cli: Any, tmp_path: Path) -> None:
    """As above: v1 §4.7's "groups visited in order of first appearance" holds under version 2 too
    (group a first, though b's excess call comes first)."""
    rule = {"id": "r", "kind": "retry_limit", "max_attempts": 1, "group_by": "tool"}
    trace = [{"type": "tool.call", "tool": "a"}, {"type": "tool.call", "tool": "b"},
             {"type": "tool.call", "tool": "b"}, {"type": "tool.call", "tool": "a"}]
    _, report = run(cli, tmp_path, [rule], trace)
    assert seqs(report, "r") == [4, 3]


def test_v1_contract_keeps_node_order_of_stop_is_final(cli: Any, tmp_path: Path) -> None:
    """v1 §4.4 / §14: a version-1 contract gives Node's violations, stop by stop (spec reading: 10.5
    does not reorder a version-1 report, which must equal Node's)."""
    trace = [{"type": "control.stop"}, {"type": "control.stop"}, {"type": "agent.message"},
             {"type": "agent.message"}]
    _, report = run(cli, tmp_path, [{"id": "s", "kind": "stop_is_final"}], trace, 1)
    assert seqs(report, "s") == [2, 3, 4, 3, 4]


def test_v1_contract_keeps_node_order_of_retry_limit(cli: Any, tmp_path: Path) -> None:
    """v1 §4.7: "groups visited in order of first appearance" for a version-1 contract."""
    rule = {"id": "r", "kind": "retry_limit", "max_attempts": 1, "group_by": "tool"}
    trace = [{"type": "tool.call", "tool": "a"}, {"type": "tool.call", "tool": "b"},
             {"type": "tool.call", "tool": "b"}, {"type": "tool.call", "tool": "a"}]
    _, report = run(cli, tmp_path, [rule], trace, 1)
    assert seqs(report, "r") == [4, 3]


def test_top_level_violations_follow_contract_order(cli: Any, tmp_path: Path) -> None:
    """10.5: "the top-level violations stays the concatenation of results in contract order", even when
    an earlier rule's violation has no seq and a later one's has."""
    rules = [{"id": "b", "kind": "event_budget", "max_events": 0},
             {"id": "n", "kind": "deny_tool", "tool": "x"}]
    _, report = run(cli, tmp_path, rules, [{"type": "tool.call", "tool": "x"}])
    assert found(report) == [("event_budget.events", "fail", None), ("deny_tool.denied", "fail", 1)]


# -- Version-2 keys inside a version-1 contract --------------------------------------------------------

@pytest.mark.parametrize("rule", [
    deny({"type": "tool.call", "args": {"a": 1}}),
    deny({"type": "control.stop", "reason": "user"}),
    deny({"type": "run.completed", "status": "done"}),
    {"id": "o", "kind": "require_order", "before": {"args": {}}, "after": {"type": "tool.call"}},
    {"id": "e", "kind": "require_event", "match": {"status": "x"}},
    {"id": "s", "kind": "stop_is_final", "reasons": ["user"]},
    {"id": "t", "kind": "tool_args", "tool": "x", "match": {"a": 1}},
    {"id": "t", "kind": "run_status", "equals": "completed"},
], ids=["args", "reason", "status", "order-args", "event-status", "stop-reasons", "tool_args", "run_status"])
def test_v2_key_or_kind_in_v1_contract_is_refused(cli: Any, tmp_path: Path, rule: Rule) -> None:
    """§0: "A version: 1 contract is validated exactly as Node does, so new kinds or keys exit 2";
    README: refused with `needs "version": 2`."""
    line = refusal(cli, tmp_path, [rule], version=1)
    assert "c.json" in line
    assert 'needs "version": 2' in line


def test_v1_contract_ignores_v2_event_fields_of_bad_type(cli: Any, tmp_path: Path) -> None:
    """§0: "New fields are optional keys that Node ignores. They are type-checked only under v2"."""
    trace = [{"type": "tool.call", "tool": "x", "args": [1]}, {"type": "run.completed", "status": ""},
             {"type": "control.stop", "reason": 5}]
    code, report = run(cli, tmp_path, [{"id": "n", "kind": "deny_tool", "tool": "x"}], trace, 1)
    assert code == 1
    assert found(report) == [("deny_tool.denied", "fail", 1)]


@pytest.mark.parametrize(("event", "field"), [
    ({"type": "tool.call", "args": [1]}, "args"),
    ({"type": "agent.message", "args": "a=1"}, "args"),
    ({"type": "agent.message", "args": None}, "args"),
    ({"type": "run.completed", "status": ""}, "status"),
    ({"type": "agent.message", "status": "s" * 101}, "status"),
    ({"type": "run.failed", "status": None}, "status"),
    ({"type": "control.stop", "reason": 5}, "reason"),
    ({"type": "agent.message", "reason": "r" * 501}, "reason"),
])
def test_v2_contract_type_checks_fields_on_every_event(cli: Any, tmp_path: Path, event: Event,
                                                       field: str) -> None:
    """10.16: under version 2 each new field is checked on every event that carries it (args object,
    status 1..100, reason 1..500, null rejected), with a `file:line: $.field` error, exit 2."""
    write_contract(tmp_path, [{"id": "n", "kind": "deny_tool", "tool": "x"}])
    write_trace(tmp_path, [{"type": "agent.message"}, event])
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")
    assert f"t.jsonl:2: $.{field}" in result.stderr


def test_v2_field_limits_accept_the_boundaries(cli: Any, tmp_path: Path) -> None:
    """10.16: status 1..100 and reason 1..500 (inclusive bounds); the matcher then reads them."""
    trace = [{"type": "run.completed", "status": "s" * 100}, {"type": "control.stop", "reason": "r" * 500}]
    _, report = run(cli, tmp_path, [deny({"status": "s*"}), {**deny({"reason": "r*"}), "id": "d2"}], trace)
    assert (seqs(report, "d"), seqs(report, "d2")) == ([1], [2])


# -- Verdicts, messages and counts unchanged under version 2 -------------------------------------------

V1_CORNERS: list[Rule] = [
    {"id": "approve", "kind": "require_approval", "tool": "pay", "scope": "pay*", "within_events": 2},
    {"id": "allow", "kind": "allow_tools", "tools": ["*"]},
    {"id": "retry", "kind": "retry_limit", "max_attempts": 1},
    {"id": "results", "kind": "tool_result_required", "tool": "*"},
    {"id": "stop", "kind": "stop_is_final", "allowed_after": []},
    {"id": "e", "kind": "require_event", "match": {"type": "tool.call", "tool": "pay"}, "min": 0, "max": 0},
    {"id": "c", "kind": "completion_requires_outcome", "outcome_id": "o*",
     "evidence_classes": ["self_attestation"]},
]

V1_CORNERS_TRACE: list[Event] = [
    {"type": "approval.granted", "approval_scope": "payments", "args": {"amount": 3}},
    {"type": "tool.call", "tool": "pay", "call_id": "a", "args": {"amount": 3}, "call_signature": "s"},
    {"type": "tool.call", "call_id": "b"},
    {"type": "tool.result", "call_id": "a", "tool": "pay", "result": {"ok": 1}, "duration_ms": 5},
    {"type": "agent.message"},
    {"type": "tool.call", "tool": "pay", "call_id": "c", "call_signature": "s"},
    {"type": "outcome.observed", "outcome_id": "o1", "verdict": "satisfied", "evidence_class": "self_attestation"},
    {"type": "control.stop", "reason": "user"},
    {"type": "control.stop", "reason": "user"},
    {"type": "run.completed", "status": "done", "output": {"x": 1}},
]


def test_v1_corner_contract_same_under_both_versions(cli: Any, tmp_path: Path) -> None:
    """§0 / 10.1: verdicts, evidence, messages and counts of v1 kinds are the same under version 2
    (v2 event fields are just ignored by them)."""
    _, v1 = run(cli, tmp_path, V1_CORNERS, V1_CORNERS_TRACE, 1)
    _, v2 = run(cli, tmp_path, V1_CORNERS, V1_CORNERS_TRACE, 2, "--no-lint")
    v1["contract"].pop("version")
    v2["contract"].pop("version")
    assert v1 == v2
    assert [(r["rule_id"], r["checked"], len(r["violations"])) for r in v2["results"]] == [
        ("approve", 2, 1), ("allow", 3, 1), ("retry", 2, 1), ("results", 2, 1), ("stop", 2, 3),
        ("e", 2, 1), ("c", 1, 0)]
