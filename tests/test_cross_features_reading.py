"""Features of contract version 2 in combination, and hostile inputs reaching them.

A reading of spec/v2-extensions.md (§0, §1, §2, §3, §5-§8 and the binding §10), of
spec/v1-semantics.md for compare, reports and the command line, and of spec/ci-formats.md. Each test
names the sentence or point it checks; "spec silent" marks a reasonable reading of an open question.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import pytest

from tests.support import github_profile_problems, jsonl, sarif_validator

Event = dict[str, Any]

# The formats `check --help` lists (text and pretty are one renderer; html is checked for determinism).
FORMATS = ("text", "json", "junit", "sarif", "markdown", "github")
ALL_FORMATS = (*FORMATS, "pretty", "html")


def _call(tool: str, call_id: str, **extra: Any) -> Event:
    return {"type": "tool.call", "tool": tool, "call_id": call_id, "args": {}, **extra}


def _result(call_id: str, **extra: Any) -> Event:
    return {"type": "tool.result", "call_id": call_id, "ok": True, **extra}


class Kind:
    """One v2 kind: a rule, a failing trace with its expected (code, seq) list, a passing trace,
    and whether the violated part is safety (still judged under --partial) or liveness."""

    def __init__(self, rule: dict[str, Any], failing: list[Event], expected: list[tuple[str, int | None]],
                 passing: list[Event], safety: bool, status: str = "fail") -> None:
        self.rule = {"id": "r", **rule}
        self.failing = failing
        self.expected = expected
        self.passing = passing
        self.safety = safety
        self.status = status


# §3.1-§3.9 and point 10.1's code table; seqs per point 10.2 (at the call, the result, the
# terminal, or none). Safety/liveness per the headings of §3 and point 10.82.
KINDS: dict[str, Kind] = {
    "tool_args": Kind(
        {"kind": "tool_args", "tool": "refund", "match": {"amount": 10}},
        [_call("refund", "c1", args={"amount": 12}), _call("refund", "c2", args={"amount": 13})],
        [("tool_args.mismatch", 1), ("tool_args.mismatch", 2)],
        [_call("refund", "c1", args={"amount": 10})], safety=True),
    "tool_order": Kind(
        {"kind": "tool_order", "tools": ["get", "refund"]},
        [_call("refund", "c1")],
        [("tool_order.missing", None)],
        [_call("get", "c1"), _call("refund", "c2")], safety=False),
    "precedence": Kind(
        {"kind": "precedence", "before": {"type": "tool.call", "tool": "get"},
         "after": {"type": "tool.call", "tool": "refund"}},
        [_call("refund", "c1"), _call("refund", "c2")],
        [("precedence.missing", 1), ("precedence.missing", 2)],
        [_call("get", "c1"), _call("refund", "c2")], safety=True),
    "tool_calls": Kind(
        {"kind": "tool_calls", "tool": "refund", "max": 0},
        [_call("refund", "c1"), _call("refund", "c2")],
        [("tool_calls.max", 1)],
        [_call("get", "c1")], safety=True),
    "approval_bound": Kind(
        {"kind": "approval_bound", "tool": "refund"},
        [_call("refund", "c1"), _call("refund", "c2")],
        [("approval_bound.missing", 1), ("approval_bound.missing", 2)],
        [{"type": "approval.granted", "tool": "refund"}, _call("refund", "c1")], safety=True),
    "latency_budget": Kind(
        {"kind": "latency_budget", "tool": "search", "max_ms": 10},
        [_call("search", "s1"), _result("s1", duration_ms=50), _call("search", "s2"),
         _result("s2", duration_ms=60)],
        [("latency_budget.exceeded", 2), ("latency_budget.exceeded", 4)],
        [_call("search", "s1"), _result("s1", duration_ms=10)], safety=True),
    "result_size": Kind(
        {"kind": "result_size", "tool": "search", "max_bytes": 3},
        [_call("search", "s1"), _result("s1", result="abcd"), _call("search", "s2"),
         _result("s2", result=[1, 2])],
        [("result_size.exceeded", 2), ("result_size.exceeded", 4)],
        [_call("search", "s1"), _result("s1", result="a")], safety=True),
    "run_duration": Kind(
        {"kind": "run_duration", "max_ms": 10},
        [{"type": "run.start"}, {"type": "run.completed", "duration_ms": 50}],
        [("run_duration.exceeded", 2)],
        [{"type": "run.start"}, {"type": "run.completed", "duration_ms": 10}], safety=False),
    "output_match": Kind(
        {"kind": "output_match", "match": {"total": 1}},
        [{"type": "run.completed", "output": {"total": 2}}],
        [("output_match.mismatch", 1)],
        [{"type": "run.completed", "output": {"total": 1}}], safety=False),
    "output_schema": Kind(
        {"kind": "output_schema", "schema": {"type": "object", "required": ["total"]}},
        [{"type": "run.completed", "output": {}}],
        [("output_schema.schema", 1)],
        [{"type": "run.completed", "output": {"total": 1}}], safety=False),
    "run_status": Kind(
        {"kind": "run_status", "equals": "completed"},
        [{"type": "run.failed"}],
        [("run_status.mismatch", 1)],
        [{"type": "run.completed"}], safety=False),
    "required_when": Kind(
        {"kind": "required_when", "tool": "refund", "when": {"path": "refunds", "non_empty": True}},
        [{"type": "run.completed", "output": {"refunds": ["A1"]}}],
        [("required_when.min", 1)],
        [_call("refund", "c1"), {"type": "run.completed", "output": {"refunds": ["A1"]}}], safety=False),
    "forbidden_when": Kind(
        {"kind": "forbidden_when", "tool": "email", "when": {"path": "fraud", "equals": True}},
        [_call("email", "m1"), _call("email", "m2"), {"type": "run.completed", "output": {"fraud": True}}],
        [("forbidden_when.forbidden", 1), ("forbidden_when.forbidden", 2)],
        [_call("email", "m1"), {"type": "run.completed", "output": {"fraud": False}}], safety=False),
    "failure_handled": Kind(
        {"kind": "failure_handled", "tool": "search", "within_events": 2},
        [_call("search", "s1"), _result("s1", ok=False), {"type": "run.completed"}],
        [("failure_handled.unhandled", 2)],
        [_call("search", "s1"), _result("s1", ok=False), {"type": "agent.message"},
         {"type": "run.completed"}], safety=False),
}
KIND_NAMES = sorted(KINDS)
MULTI = [name for name in KIND_NAMES if len(KINDS[name].expected) > 1]


def _numbered(events: list[Event]) -> list[Event]:
    return [{"seq": i + 1, **event} for i, event in enumerate(events)]


def _contract(folder: Path, rules: list[dict[str, Any]], name: str = "c.json", **extra: Any) -> None:
    document = {"version": 2, "name": "spec", "rules": rules, **extra}
    (folder / name).write_text(json.dumps(document), encoding="utf-8")


def _trace(folder: Path, events: list[Event], name: str = "t.jsonl") -> None:
    (folder / name).write_text(jsonl(_numbered(events)), encoding="utf-8")


def _setup(folder: Path, kind: str, **extra: Any) -> Kind:
    case = KINDS[kind]
    _contract(folder, [case.rule], **extra)
    _trace(folder, case.failing)
    _trace(folder, case.passing, "b.jsonl")
    return case


def _codes(report: dict[str, Any]) -> list[tuple[str, int | None]]:
    return [(v["code"], v.get("event_seq")) for v in report["violations"]]


def _json(cli: Any, *args: str) -> tuple[int, dict[str, Any]]:
    result = cli(*args, "--format", "json")
    assert "Traceback" not in result.stderr
    return result.returncode, json.loads(result.stdout)


def _one_error_line(stderr: str) -> str:
    """The standards' bad-input shape: one `agent-invariants:` line (warnings aside), no traceback."""
    assert "Traceback" not in stderr
    lines = [line for line in stderr.splitlines() if not line.startswith("agent-invariants: warning:")]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("agent-invariants: "), lines[0]
    return lines[0]


def _raw(tmp_path: Path, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
    """The CLI as a plain subprocess, bytes in and out (for pipes, closed stdout and encodings)."""
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "agent_invariants", *args], cwd=tmp_path, env=env,
                          timeout=60, **kwargs)


def _names_line(fmt: str, output: str, file: str, line: int) -> bool:
    """The rendered report places a violation at `file` line `line` (README "Formats for CI": a
    violation on line N of the trace is line N in all of them)."""
    if fmt == "sarif":
        for result in json.loads(output)["runs"][0]["results"]:
            physical = result["locations"][0]["physicalLocation"]
            if physical["artifactLocation"]["uri"] == file and physical["region"]["startLine"] == line:
                return True
        return False
    if fmt == "json":
        return any(v.get("line") == line for v in json.loads(output)["violations"])
    if fmt == "junit":  # the testcase names the first offending line, its body every violation's
        return f'file="{file}" line="{line}"' in output or f"{file}:{line} " in output
    if fmt == "github":
        return f"file={file},line={line}" in output
    return f"{file}:{line}" in output


# -- every v2 kind: plain check, codes, status and seq (§0 report extras, points 10.1, 10.2, 10.6) --


@pytest.mark.parametrize(("kind", "pointer"), [("tool_args", "/args/amount"), ("output_match", "/output/total")])
def test_mismatch_pointer(cli: Any, tmp_path: Path, kind: str, pointer: str) -> None:
    """§0 report extras and point 10.7: mismatch pointers are into the event."""
    _setup(tmp_path, kind)
    _, report = _json(cli, "check", "-c", "c.json", "-t", "t.jsonl")
    violation = report["violations"][0]
    assert violation["pointer"] == pointer
    assert violation["evidence"]["mismatches"][0]["pointer"] == pointer


# -- every kind in every format (v1 §7, D1, ci-formats, README "Formats for CI") --------------------


@pytest.mark.parametrize("kind", KIND_NAMES)
def test_kind_in_every_format(cli: Any, tmp_path: Path, kind: str) -> None:
    """10.1: each violation's code is `<rule's kind>.<reason>`; 10.2 places it; 10.6: `fail`.
    v1 §7.5: the exit code is the same whatever the format; D1 and README "Formats for CI": a
    violation on trace line N is line N in every format; ci-formats §1.1: the SARIF passes the
    OASIS schema and GitHub's profile (a physical, relative location on every result, also for
    violations with no seq). 10.1: every violation carries its code; §0 requires it in JSON only
    ("Report extras (JSON only)"), spec silent elsewhere: text and SARIF name it (README example
    `[require_approval.missing]`), which we pin."""
    case = _setup(tmp_path, kind)
    located = [seq for _, seq in case.expected if seq is not None]
    outputs: dict[str, str] = {}
    for fmt in FORMATS:
        result = cli("check", "-c", "c.json", "-t", "t.jsonl", "--format", fmt)
        assert (result.returncode, result.stderr) == (1, ""), (fmt, result.stderr)
        outputs[fmt] = result.stdout
        for seq in located:  # one event per line: the seq is the physical line
            assert _names_line(fmt, result.stdout, "t.jsonl", seq), (fmt, seq)
    report = json.loads(outputs["json"])  # 10.1 codes, 10.2 seqs, 10.6 status `fail`
    assert _codes(report) == case.expected
    assert {v["status"] for v in report["violations"]} == {case.status}
    assert report["error_count"] == len(case.expected)
    log = json.loads(outputs["sarif"])
    assert list(sarif_validator().iter_errors(log)) == []
    assert github_profile_problems(log) == []
    assert [r["properties"]["code"] for r in log["runs"][0]["results"]] == [c for c, _ in case.expected]
    for code, _ in case.expected:
        assert code in outputs["text"]


# -- every kind under --partial (§0 "Safety and liveness", point 10.82) ------------------------------


@pytest.mark.parametrize("kind", KIND_NAMES)
def test_kind_under_partial(cli: Any, tmp_path: Path, kind: str) -> None:
    """§0: `--partial` reports liveness parts as `inconclusive`; 10.82: they leave error_count,
    passed and the exit; safety parts are judged as usual."""
    case = _setup(tmp_path, kind)
    code, report = _json(cli, "check", "-c", "c.json", "-t", "t.jsonl", "--partial")
    assert _codes(report) == case.expected
    statuses = {v["status"] for v in report["violations"]}
    if case.safety:
        assert (code, statuses, report["error_count"]) == (1, {"fail"}, len(case.expected))
    else:
        assert (code, statuses, report["error_count"], report["passed"]) == (0, {"inconclusive"}, 0, True)


def test_failure_handled_elapsed_window_is_safety_under_partial(cli: Any, tmp_path: Path) -> None:
    """§3.9 "(safety, except at the trace's end)": a failure whose whole window passed unhandled
    fails even under `--partial`."""
    _contract(tmp_path, [{"id": "r", "kind": "failure_handled", "tool": "search", "within_events": 1}])
    _trace(tmp_path, [_call("search", "s1"), _result("s1", ok=False), _call("other", "o1")])
    code, report = _json(cli, "check", "-c", "c.json", "-t", "t.jsonl", "--partial")
    assert (code, _codes(report)) == (1, [("failure_handled.unhandled", 2)])
    assert report["violations"][0]["status"] == "fail"


def test_tool_calls_min_is_liveness_max_is_safety(cli: Any, tmp_path: Path) -> None:
    """§3.4 "(max is safety; the rest is liveness)": in one rule, the min part is inconclusive
    under --partial while the max part still fails."""
    _contract(tmp_path, [{"id": "lo", "kind": "tool_calls", "tool": "get", "min": 1},
                         {"id": "hi", "kind": "tool_calls", "tool": "refund", "max": 0}])
    _trace(tmp_path, [_call("refund", "c1")])
    code, report = _json(cli, "check", "-c", "c.json", "-t", "t.jsonl", "--partial")
    assert code == 1
    assert [(v["code"], v["status"]) for v in report["violations"]] == [
        ("tool_calls.min", "inconclusive"), ("tool_calls.max", "fail")]
    assert report["error_count"] == 1


@pytest.mark.parametrize("fmt", FORMATS)
def test_partial_inconclusive_renders_in_every_format_with_exit_0(cli: Any, tmp_path: Path, fmt: str) -> None:
    """10.82: inconclusive violations do not fail the check, whatever the format (v1 §7.5)."""
    _setup(tmp_path, "output_match")
    result = cli("check", "-c", "c.json", "-t", "t.jsonl", "--partial", "--format", fmt)
    assert (result.returncode, result.stderr) == (0, "")
    if fmt == "sarif":
        assert github_profile_problems(json.loads(result.stdout)) == []


def test_tool_args_liveness_parts_under_partial(cli: Any, tmp_path: Path) -> None:
    """§3.1 heading "(safety; liveness with `$from_output` or `call_index`)": under --partial a
    `$from_output` mismatch and a `call_missing` are inconclusive. Spec ambiguous for a mismatch at
    the call_index-th call itself: 10.74 enforces tool_args with call_index before dispatch (a
    safety reading), so `fail` is accepted there."""
    _contract(tmp_path, [
        {"id": "fo", "kind": "tool_args", "tool": "refund", "match": {"amount": {"$from_output": "total"}}},
        {"id": "ci", "kind": "tool_args", "tool": "refund", "call_index": 3, "match": {"amount": 1}},
        {"id": "ci0", "kind": "tool_args", "tool": "refund", "call_index": 0, "match": {"amount": 1}},
    ])
    _trace(tmp_path, [_call("refund", "c1", args={"amount": 5}), {"type": "run.completed", "output": {"total": 4}}])
    code, report = _json(cli, "check", "-c", "c.json", "-t", "t.jsonl", "--partial")
    assert [(v["rule_id"], v["code"], v["status"]) for v in report["violations"]] == [
        ("fo", "tool_args.mismatch", "inconclusive"), ("ci", "tool_args.call_missing", "inconclusive"),
        ("ci0", "tool_args.mismatch", "fail")]
    assert (code, report["error_count"]) == (1, 1)


def test_strict_leaves_kinds_whose_passing_state_is_zero(cli: Any, tmp_path: Path) -> None:
    """README "No silent passes" (--strict fails a rule that checked nothing, except kinds for
    which zero is the passing state) with 10.4 (vacuous kinds). Spec silent on --strict for v2
    kinds: a cap of 0, forbidden_when and failure_handled (10.48: "their subjects are meant to be
    absent") are left out; approval_bound that saw no call fails as `<kind>.checked_nothing`."""
    _contract(tmp_path, [
        {"id": "cap", "kind": "tool_calls", "tool": "shell", "max": 0},
        {"id": "fw", "kind": "forbidden_when", "tool": "email", "when": {"path": "fraud", "equals": True}},
        {"id": "fh", "kind": "failure_handled", "tool": "search", "within_events": 2},
        {"id": "ab", "kind": "approval_bound", "tool": "refund"},
    ])
    _trace(tmp_path, [_call("search", "s1"), _result("s1"), {"type": "run.completed", "output": {"fraud": False}}])
    code, report = _json(cli, "check", "-c", "c.json", "-t", "t.jsonl", "--strict")
    assert code == 1
    assert [(v["rule_id"], v["code"]) for v in report["violations"]] == [("ab", "approval_bound.checked_nothing")]


# -- every kind under --max-violations 1 (D7) -------------------------------------------------------


@pytest.mark.parametrize("kind", KIND_NAMES)
def test_kind_under_max_violations_one_and_safety_exit(cli: Any, tmp_path: Path, kind: str) -> None:
    """D7: a rule keeps at most N violations (the first ones); error_count, passed and the exit
    still count every one. 10.84: with `--safety-exit 3` the exit is 3 when the error comes from
    a safety part of a rule, else 1."""
    case = _setup(tmp_path, kind)
    code, report = _json(cli, "check", "-c", "c.json", "-t", "t.jsonl", "--max-violations", "1",
                         "--safety-exit", "3")
    assert code == (3 if case.safety else 1)
    assert report["error_count"] == len(case.expected)
    assert report["passed"] is False
    assert _codes(report) == case.expected[:1]
    assert len(report["results"][0]["violations"]) == 1


@pytest.mark.parametrize("kind", MULTI)
def test_max_violations_says_how_many_were_left_out(cli: Any, tmp_path: Path, kind: str) -> None:
    """D7: "the report says how many were left out" — the text report tells the rest."""
    _setup(tmp_path, kind)
    result = cli("check", "-c", "c.json", "-t", "t.jsonl", "--max-violations", "1", "--format", "text")
    assert result.returncode == 1
    assert "1 more" in result.stdout


@pytest.mark.parametrize("kind", MULTI)
def test_max_violations_with_partial_keeps_exit(cli: Any, tmp_path: Path, kind: str) -> None:
    """§0 with D7: --partial and --max-violations 1 together change neither verdict."""
    case = _setup(tmp_path, kind)
    code, report = _json(cli, "check", "-c", "c.json", "-t", "t.jsonl", "--partial", "--max-violations", "1")
    assert code == (1 if case.safety else 0)
    assert len(report["violations"]) == 1


# -- every kind under compare (v1 §6, point 10.8) ---------------------------------------------------

# The passing traces call other tools than the failing ones: keep `new_tool` (v1 §6 point 3) out.
SAME_TOOLS = {"fail_on_new_tools": False}


@pytest.mark.parametrize("kind", KIND_NAMES)
def test_compare_without_fail_on_new_violations(cli: Any, tmp_path: Path, kind: str) -> None:
    """v1 §6 point 2: with `fail_on_new_violations: false` the same failure is a
    `contract_violation` (baseline_also_failed false): the flag only changes the label."""
    case = _setup(tmp_path, kind, compare=SAME_TOOLS)
    _contract(tmp_path, [case.rule], compare={**SAME_TOOLS, "fail_on_new_violations": False})
    code, report = _json(cli, "compare", "-c", "c.json", "-b", "b.jsonl", "-k", "t.jsonl")
    assert code == 1
    assert [(r["kind"], r["evidence"]["baseline_also_failed"]) for r in report["regressions"]] == [
        ("contract_violation", False)]


@pytest.mark.parametrize("kind", ["tool_args", "result_size", "tool_order"])
def test_compare_same_failure_in_both(cli: Any, tmp_path: Path, kind: str) -> None:
    """v1 §6 point 2: a rule failing in both runs is `contract_violation`, baseline_also_failed."""
    _setup(tmp_path, kind, compare=SAME_TOOLS)
    code, report = _json(cli, "compare", "-c", "c.json", "-b", "t.jsonl", "-k", "t.jsonl")
    assert code == 1
    assert [(r["kind"], r["evidence"]["baseline_also_failed"]) for r in report["regressions"]] == [
        ("contract_violation", True)]


@pytest.mark.parametrize("kind", KIND_NAMES)
def test_compare_fixed_candidate_is_compatible(cli: Any, tmp_path: Path, kind: str) -> None:
    """§3's PASS variants pass; v1 §6: compatible = no regression, so a candidate that fixes the
    rule is compatible (exit 0)."""
    _setup(tmp_path, kind, compare=SAME_TOOLS)
    code, report = _json(cli, "compare", "-c", "c.json", "-b", "t.jsonl", "-k", "b.jsonl")
    assert (code, report["compatible"], report["regressions"]) == (0, True, [])
    assert (report["candidate"]["passed"], report["candidate"]["violations"]) == (True, [])  # §3 PASS


# Every format for three placements (at the call, at the result, no seq); json for every kind.
COMPARE_FORMATS = {kind: (FORMATS if kind in ("tool_args", "result_size", "tool_order") else ("json",))
                   for kind in KIND_NAMES}


@pytest.mark.parametrize("kind", KIND_NAMES)
def test_compare_new_violation_in_every_format(cli: Any, tmp_path: Path, kind: str) -> None:
    """v1 §6: a rule failing only in the candidate is `new_rule_failure` (evidence: the full
    violation count); the candidate report is a check report whose violations carry the codes
    (10.1); v1 §7.5: exit 1 in every format; the compare SARIF stays valid for GitHub."""
    case = _setup(tmp_path, kind, compare=SAME_TOOLS)
    for fmt in COMPARE_FORMATS[kind]:
        result = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "t.jsonl", "--format", fmt)
        assert (result.returncode, result.stderr) == (1, ""), fmt
        if fmt == "json":
            report = json.loads(result.stdout)
            assert report["compatible"] is False
            assert [r["kind"] for r in report["regressions"]] == ["new_rule_failure"]
            assert report["regressions"][0]["evidence"] == {"rule_id": "r", "rule_kind": kind,
                                                            "violations": len(case.expected)}
            assert _codes(report["candidate"]) == case.expected
            assert report["baseline"]["violations"] == []
        if fmt == "sarif":
            log = json.loads(result.stdout)
            assert list(sarif_validator().iter_errors(log)) == []
            assert github_profile_problems(log) == []


@pytest.mark.parametrize("kind", MULTI)
def test_compare_counts_every_violation_under_max_violations(cli: Any, tmp_path: Path, kind: str) -> None:
    """D7 with v1 §6: `violations` in the regression evidence is the candidate's count, which
    --max-violations does not cut."""
    case = _setup(tmp_path, kind, compare=SAME_TOOLS)
    _, report = _json(cli, "compare", "-c", "c.json", "-b", "b.jsonl", "-k", "t.jsonl", "--max-violations", "1")
    assert report["regressions"][0]["evidence"]["violations"] == len(case.expected)
    assert report["candidate"]["error_count"] == len(case.expected)
    assert len(report["candidate"]["violations"]) == 1


@pytest.mark.parametrize("kind", [name for name in KIND_NAMES if not KINDS[name].safety])
def test_compare_partial_candidate_with_only_liveness_failures(cli: Any, tmp_path: Path, kind: str) -> None:
    """§0 + 10.82 (spec silent on compare itself): under --partial a liveness violation leaves
    `passed`, so the rule does not newly fail and the candidate is compatible."""
    _setup(tmp_path, kind, compare=SAME_TOOLS)
    code, report = _json(cli, "compare", "-c", "c.json", "-b", "b.jsonl", "-k", "t.jsonl", "--partial")
    assert (code, report["compatible"], report["regressions"]) == (0, True, [])
    assert {v["status"] for v in report["candidate"]["violations"]} == {"inconclusive"}


LINT_ERROR_RULES: list[dict[str, Any]] = [
    {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"},
    {"id": "must-exec", "kind": "tool_calls", "tool": "shell.exec", "min": 1},
]


@pytest.mark.parametrize("command", ["check", "compare"])
def test_lint_error_refuses_check_and_compare(cli: Any, tmp_path: Path, command: str) -> None:
    """10.8: a lint error in `check` is reported like a contract error (`file: $.rules[i]: lint
    <code>: …`, exit 2), and `compare` behaves the same (§4's example: required_but_forbidden)."""
    _contract(tmp_path, LINT_ERROR_RULES)
    _trace(tmp_path, [_call("a", "1")])
    pair = ("-t", "t.jsonl") if command == "check" else ("-b", "t.jsonl", "-k", "t.jsonl")
    result = cli(command, "-c", "c.json", *pair)
    assert (result.returncode, result.stdout) == (2, "")
    line = _one_error_line(result.stderr)
    assert line.startswith("agent-invariants: c.json") and " $.rules[1]: lint required_but_forbidden: " in line


def test_no_lint_lets_compare_judge(cli: Any, tmp_path: Path) -> None:
    """10.8: `--no-lint` is accepted by compare; the rule then fails in both runs (v1 §6
    contract_violation)."""
    _contract(tmp_path, LINT_ERROR_RULES)
    _trace(tmp_path, [_call("a", "1")])
    code, report = _json(cli, "compare", "-c", "c.json", "-b", "t.jsonl", "-k", "t.jsonl", "--no-lint")
    assert code == 1
    assert [r["kind"] for r in report["regressions"]] == ["contract_violation"]


def test_compare_with_a_bad_candidate(cli: Any, tmp_path: Path) -> None:
    """v1 §7.5 and D4: an invalid candidate is exit 2, nothing on stdout, one line naming file:line."""
    _setup(tmp_path, "tool_args")
    (tmp_path / "bad.jsonl").write_text('{"seq":1,"type":"tool.call"\n', encoding="utf-8")
    result = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "bad.jsonl")
    assert (result.returncode, result.stdout) == (2, "")
    assert _one_error_line(result.stderr).startswith("agent-invariants: bad.jsonl:1: ")


# -- native versus imported (§7, points 10.26-10.36) ------------------------------------------------

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"


def _otel_line(span: dict[str, Any]) -> str:
    return json.dumps({"resourceSpans": [{"resource": {"attributes": []},
                                          "scopeSpans": [{"scope": {"name": "t"}, "spans": [span]}]}]})


def _attrs(**values: str) -> list[dict[str, Any]]:
    return [{"key": key.replace("_", "."), "value": {"stringValue": value}} for key, value in values.items()]


def _otel(amount: int) -> str:
    """An OTLP JSON lines file (§7 otel row, 10.30): the tool span on line 1, the invoke_agent root
    on line 2, so a call's source line differs from its seq."""
    tool = {"traceId": TRACE_ID, "spanId": "00f067aa0ba902b7", "parentSpanId": "b7ad6b7169203331",
            "name": "execute_tool refund", "kind": 1,
            "startTimeUnixNano": "1767261601000000000", "endTimeUnixNano": "1767261602000000000",
            "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
                           {"key": "gen_ai.tool.name", "value": {"stringValue": "refund"}},
                           {"key": "gen_ai.tool.call.id", "value": {"stringValue": "c1"}},
                           {"key": "gen_ai.tool.call.arguments",
                            "value": {"stringValue": json.dumps({"amount": amount})}},
                           {"key": "gen_ai.tool.call.result", "value": {"stringValue": "{\"paid\": 10}"}}],
            "status": {}}
    root = {"traceId": TRACE_ID, "spanId": "b7ad6b7169203331", "name": "invoke_agent desk", "kind": 1,
            "startTimeUnixNano": "1767261600000000000", "endTimeUnixNano": "1767261605000000000",
            "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}}],
            "status": {}}
    return _otel_line(tool) + "\n" + _otel_line(root) + "\n"


def _mcp(amount: int) -> str:
    """An MCP log (§7 mcp-log row, 10.35): the tools/call request is on line 3."""
    records = [
        {"ts": "2026-01-01T10:00:00Z", "session": "s1", "dir": "c2s",
         "msg": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}},
        {"ts": "2026-01-01T10:00:00.100Z", "session": "s1", "dir": "s2c",
         "msg": {"jsonrpc": "2.0", "id": 1, "result": {}}},
        {"ts": "2026-01-01T10:00:01Z", "session": "s1", "dir": "c2s",
         "msg": {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "refund", "arguments": {"amount": amount}}}},
        {"ts": "2026-01-01T10:00:02Z", "session": "s1", "dir": "s2c",
         "msg": {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "{\"paid\": 10}"}]}}},
    ]
    return "".join(json.dumps(record) + "\n" for record in records)


IMPORTS = {"otel": (_otel, 1), "mcp-log": (_mcp, 3)}  # format: (writer, source line of the call)
IMPORT_RULES: list[dict[str, Any]] = [
    {"id": "args", "kind": "tool_args", "tool": "refund", "match": {"amount": 10}},
    {"id": "size", "kind": "result_size", "tool": "refund", "max_bytes": 1},
    {"id": "status", "kind": "run_status", "equals": "completed"},
]


def _strip_source(report: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(v["rule_id"], v["code"], v["status"], v.get("event_seq"), v.get("pointer"),
             json.dumps(v.get("evidence"), sort_keys=True)) for v in report["violations"]]


@pytest.mark.parametrize("fmt", sorted(IMPORTS))
def test_imported_and_converted_give_same_verdicts(cli: Any, tmp_path: Path, fmt: str) -> None:
    """§7: `check --input-format FMT` and `convert --from FMT` then a native check judge the same
    events: same codes, seqs, pointers and evidence, same exit."""
    writer, _ = IMPORTS[fmt]
    (tmp_path / "run.src").write_text(writer(12), encoding="utf-8")
    _contract(tmp_path, IMPORT_RULES)
    converted = cli("convert", "--from", fmt, "run.src", "-o", "native.jsonl")
    assert converted.returncode == 0, converted.stderr
    code_in, imported = _json(cli, "check", "-c", "c.json", "-t", "run.src", "--input-format", fmt)
    code_nat, native = _json(cli, "check", "-c", "c.json", "-t", "native.jsonl")
    assert code_in == code_nat == 1
    assert _strip_source(imported) == _strip_source(native)
    assert [v["code"] for v in native["violations"]] == ["tool_args.mismatch", "result_size.exceeded"]


@pytest.mark.parametrize("fmt", sorted(IMPORTS))
def test_imported_passing_run_passes(cli: Any, tmp_path: Path, fmt: str) -> None:
    """§7 + §3.1: the fixed import (amount 10) passes tool_args; the verdict is the native one."""
    writer, _ = IMPORTS[fmt]
    (tmp_path / "run.src").write_text(writer(10), encoding="utf-8")
    _contract(tmp_path, IMPORT_RULES[:1] + IMPORT_RULES[2:])
    code, report = _json(cli, "check", "-c", "c.json", "-t", "run.src", "--input-format", fmt)
    assert (code, report["violations"]) == (0, [])


@pytest.mark.parametrize("fmt", sorted(IMPORTS))
def test_imported_violation_points_at_source_line_in_every_format(cli: Any, tmp_path: Path, fmt: str) -> None:
    """§7 "`data.source` holds {format, file, line, span_id}"; README: a violation on line N is
    line N in every format — for an import, the source file's line of the call."""
    writer, line = IMPORTS[fmt]
    (tmp_path / "run.src").write_text(writer(12), encoding="utf-8")
    _contract(tmp_path, IMPORT_RULES[:1])
    for out in FORMATS:
        result = cli("check", "-c", "c.json", "-t", "run.src", "--input-format", fmt, "--format", out)
        assert result.returncode == 1, (out, result.stderr)
        if out == "json":
            assert json.loads(result.stdout)["violations"][0]["line"] == line
        else:
            assert _names_line(out, result.stdout, "run.src", line), out


@pytest.mark.parametrize("fmt", sorted(IMPORTS))
def test_imported_under_partial(cli: Any, tmp_path: Path, fmt: str) -> None:
    """§0 + §7: --partial applies to imported traces too: the safety mismatch still fails."""
    writer, _ = IMPORTS[fmt]
    (tmp_path / "run.src").write_text(writer(12), encoding="utf-8")
    _contract(tmp_path, [*IMPORT_RULES[:1], {"id": "o", "kind": "output_match", "match": {"x": 1}}])
    code, report = _json(cli, "check", "-c", "c.json", "-t", "run.src", "--input-format", fmt, "--partial")
    assert code == 1
    assert [(v["code"], v["status"]) for v in report["violations"]] == [
        ("tool_args.mismatch", "fail"), ("output_match.output_missing", "inconclusive")]


@pytest.mark.parametrize("fmt", sorted(IMPORTS))
def test_imported_compare_with_native_baseline(cli: Any, tmp_path: Path, fmt: str) -> None:
    """§7 / 10.34: compare takes --input-format; an imported candidate that breaks tool_args is a
    new_rule_failure against its fixed import."""
    writer, _ = IMPORTS[fmt]
    (tmp_path / "base.src").write_text(writer(10), encoding="utf-8")
    (tmp_path / "cand.src").write_text(writer(12), encoding="utf-8")
    _contract(tmp_path, IMPORT_RULES[:1])
    code, report = _json(cli, "compare", "-c", "c.json", "-b", "base.src", "-k", "cand.src", "--input-format", fmt)
    assert code == 1
    assert [r["kind"] for r in report["regressions"]] == ["new_rule_failure"]


def test_imported_compare_sarif_points_at_candidate_source_line(cli: Any, tmp_path: Path) -> None:
    """README (compare SARIF: a regression sits at the candidate event behind it) with §7's
    `data.source`: for an imported candidate, the MCP log's line 3."""
    (tmp_path / "base.src").write_text(_mcp(10), encoding="utf-8")
    (tmp_path / "cand.src").write_text(_mcp(12), encoding="utf-8")
    _contract(tmp_path, IMPORT_RULES[:1])
    result = cli("compare", "-c", "c.json", "-b", "base.src", "-k", "cand.src", "--input-format", "mcp-log",
                 "--format", "sarif")
    assert result.returncode == 1
    log = json.loads(result.stdout)
    assert github_profile_problems(log) == []
    assert _names_line("sarif", result.stdout, "cand.src", 3)


@pytest.mark.parametrize("fmt", sorted(IMPORTS))
def test_auto_reads_what_the_named_format_reads(cli: Any, tmp_path: Path, fmt: str) -> None:
    """§7: "`auto` sniffs the first record": the verdict is the one of the named format."""
    writer, _ = IMPORTS[fmt]
    (tmp_path / "run.src").write_text(writer(12), encoding="utf-8")
    _contract(tmp_path, IMPORT_RULES[:1])
    _, named = _json(cli, "check", "-c", "c.json", "-t", "run.src", "--input-format", fmt)
    code, auto = _json(cli, "check", "-c", "c.json", "-t", "run.src", "--input-format", "auto")
    assert code == 1
    assert _strip_source(auto) == _strip_source(named)
    assert [v["line"] for v in auto["violations"]] == [v["line"] for v in named["violations"]]


def test_auto_on_a_native_trace(cli: Any, tmp_path: Path) -> None:
    """§7 "`auto` sniffs the first record" does not say whether native JSONL is among the sniffed
    formats (spec ambiguous). The README says "not our own JSONL: name that `native`", and the
    product refuses it as bad input, on one line naming the file and its line 1 and the way out."""
    _setup(tmp_path, "tool_args")
    result = cli("check", "-c", "c.json", "-t", "t.jsonl", "--input-format", "auto", "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")
    line = _one_error_line(result.stderr)
    assert line.startswith("agent-invariants: t.jsonl:1: ") and "native" in line


def test_otel_without_ainv_output_gives_output_missing(cli: Any, tmp_path: Path) -> None:
    """10.30: OTel has no standard run output; output rules then report `output_missing`, never a
    guess (unresolved per 10.6, at the terminal per 10.2)."""
    (tmp_path / "run.src").write_text(_otel(10), encoding="utf-8")
    _contract(tmp_path, [{"id": "o", "kind": "output_match", "match": {"x": 1}}])
    code, report = _json(cli, "check", "-c", "c.json", "-t", "run.src", "--input-format", "otel")
    assert code == 1
    assert [(v["code"], v["status"]) for v in report["violations"]] == [("output_match.output_missing", "unresolved")]


def _two_sessions(amount_a: int, amount_b: int) -> str:
    """An MCP log holding two interleaved sessions (10.35: each session is its own run)."""
    sessions = []
    for number, (session, amount) in enumerate((("sA", amount_a), ("sB", amount_b))):
        records = _mcp(amount).splitlines()
        sessions.append([json.loads(r) | {"session": session,
                                           "ts": json.loads(r)["ts"].replace("10:00:0", f"10:00:{number}")}
                         for r in records])
    mixed = [record for pair in zip(*sessions, strict=True) for record in pair]
    return "".join(json.dumps(record) + "\n" for record in mixed)


def test_several_imported_runs_need_run(cli: Any, tmp_path: Path) -> None:
    """10.34: without --run, an input with several runs is exit 2 and the message lists the run
    ids and both options."""
    (tmp_path / "log.src").write_text(_two_sessions(12, 10), encoding="utf-8")
    _contract(tmp_path, IMPORT_RULES[:1])
    result = cli("check", "-c", "c.json", "-t", "log.src", "--input-format", "mcp-log")
    assert (result.returncode, result.stdout) == (2, "")
    line = _one_error_line(result.stderr)
    assert "sA" in line and "sB" in line and "--run" in line and "all" in line


def test_run_all_is_a_batch_of_runs(cli: Any, tmp_path: Path) -> None:
    """10.34: `--run all` checks every run as a batch (one section per run id); each section is
    the verdict of `--run <id>`, and the output does not depend on --jobs (README)."""
    (tmp_path / "log.src").write_text(_two_sessions(12, 10), encoding="utf-8")
    _contract(tmp_path, IMPORT_RULES[:1])
    args = ("check", "-c", "c.json", "-t", "log.src", "--input-format", "mcp-log", "--run", "all")
    code, batch = _json(cli, *args, "--jobs", "2")
    assert code == 1
    assert [(s["run"], _codes(s)) for s in batch["reports"]] == [("sA", [("tool_args.mismatch", 2)]), ("sB", [])]
    assert batch["reports"][0]["violations"][0]["line"] == 5  # sA's tools/call is the file's 5th line
    _, single = _json(cli, "check", "-c", "c.json", "-t", "log.src", "--input-format", "mcp-log", "--run", "sA")
    assert _strip_source(single) == _strip_source(batch["reports"][0])
    one = cli(*args, "--jobs", "1", "--format", "sarif")
    four = cli(*args, "--jobs", "4", "--format", "sarif")
    assert one.stdout == four.stdout


def test_compare_pairs_imported_runs_by_id(cli: Any, tmp_path: Path) -> None:
    """10.34 and `compare --help` ("compare pairs them by run id"): with --run all, baseline and
    candidate runs meet by session id; only sB regressed."""
    (tmp_path / "base.src").write_text(_two_sessions(10, 10), encoding="utf-8")
    (tmp_path / "cand.src").write_text(_two_sessions(10, 13), encoding="utf-8")
    _contract(tmp_path, IMPORT_RULES[:1])
    code, report = _json(cli, "compare", "-c", "c.json", "-b", "base.src", "-k", "cand.src",
                         "--input-format", "mcp-log", "--run", "all")
    assert code == 1
    text = json.dumps(report)
    assert "new_rule_failure" in text and "sB" in text


# -- batches and --jobs (README "Many traces at once") ----------------------------------------------


def _batch(folder: Path) -> None:
    _contract(folder, [{**KINDS[kind].rule, "id": kind} for kind in ("tool_args", "approval_bound", "run_status")])
    runs = folder / "runs"
    runs.mkdir()
    for i, amount in enumerate([9, 10, 11, 10, 12, 10]):
        events = [_call("refund", "c1", args={"amount": amount})]
        if i % 2:
            events = [{"type": "approval.granted", "tool": "refund"}, *events, {"type": "run.completed"}]
        (runs / f"t{i}.jsonl").write_text(jsonl(_numbered(events)), encoding="utf-8")


def test_batch_verdicts_equal_single_checks(cli: Any, tmp_path: Path) -> None:
    """README: each trace of a batch is checked "exactly as a single run would check it"."""
    _batch(tmp_path)
    code, batch = _json(cli, "check", "-c", "c.json", "-t", "runs", "--jobs", "3")
    assert code == 1
    names = sorted(p.name for p in (tmp_path / "runs").iterdir())
    assert len(batch["reports"]) == len(names)
    for name, section in zip(names, batch["reports"], strict=True):
        _, single = _json(cli, "check", "-c", "c.json", "-t", f"runs/{name}")
        assert section["trace"] == single["trace"] == f"runs/{name}"
        assert _strip_source(section) == _strip_source(single)
        assert section["error_count"] == single["error_count"]
    assert batch["error_count"] == sum(s["error_count"] for s in batch["reports"])


@pytest.mark.parametrize("fmt", ["json", "text", "sarif", "junit"])
def test_batch_output_does_not_depend_on_jobs(cli: Any, tmp_path: Path, fmt: str) -> None:
    """README: the report holds one section per trace in the order named, whatever --jobs."""
    _batch(tmp_path)
    one = cli("check", "-c", "c.json", "-t", "runs", "--jobs", "1", "--format", fmt)
    four = cli("check", "-c", "c.json", "-t", "runs", "--jobs", "4", "--format", fmt)
    assert one.returncode == four.returncode == 1
    assert one.stdout == four.stdout


def test_batch_sections_follow_the_order_named(cli: Any, tmp_path: Path) -> None:
    """README: "one section per trace in the order they were named"."""
    _batch(tmp_path)
    order = ["runs/t5.jsonl", "runs/t0.jsonl", "runs/t3.jsonl"]
    args = [a for name in order for a in ("-t", name)]
    _, batch = _json(cli, "check", "-c", "c.json", *args, "--jobs", "2")
    assert [s["trace"] for s in batch["reports"]] == order


def test_batch_with_one_bad_trace(cli: Any, tmp_path: Path) -> None:
    """README: an unreadable trace is listed under `failures` and named on stderr, the others are
    still reported, and the exit is 2."""
    _batch(tmp_path)
    (tmp_path / "runs" / "t2.jsonl").write_text('{"seq":1,"type":"tool.call"\n', encoding="utf-8")
    result = cli("check", "-c", "c.json", "-t", "runs", "--jobs", "2", "--format", "json")
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("agent-invariants: runs/t2.jsonl:1: "), lines
    batch = json.loads(result.stdout)
    assert [f["trace"] for f in batch["failures"]] == ["runs/t2.jsonl"]
    assert [s["trace"] for s in batch["reports"]] == [f"runs/t{i}.jsonl" for i in (0, 1, 3, 4, 5)]


def test_batch_with_one_bad_trace_writes_a_whole_output_file(cli: Any, tmp_path: Path) -> None:
    """README: the report of the others is written; with --output (replaced atomically, per
    `check --help`) the file is whole JSON, never a half-written one (spec silent on -o here)."""
    _batch(tmp_path)
    (tmp_path / "runs" / "t2.jsonl").write_text("not json\n", encoding="utf-8")
    result = cli("check", "-c", "c.json", "-t", "runs", "--jobs", "2", "--format", "json", "-o", "out.json")
    assert (result.returncode, result.stdout) == (2, "")
    batch = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert len(batch["reports"]) == 5
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("out")] == ["out.json"]


def test_batch_partial_keeps_liveness_inconclusive(cli: Any, tmp_path: Path) -> None:
    """§0 + README: --partial in a batch judges each trace as a single --partial check would."""
    _batch(tmp_path)
    _, batch = _json(cli, "check", "-c", "c.json", "-t", "runs", "--partial", "--jobs", "2")
    for section in batch["reports"]:
        for violation in section["violations"]:
            expected = "inconclusive" if violation["code"] == "run_status.mismatch" else "fail"
            assert violation["status"] == expected


# -- hostile inputs reaching v2 code paths ----------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_comments_blank_lines_and_crlf_keep_physical_lines(cli: Any, tmp_path: Path, fmt: str) -> None:
    """D1 / v1 §3.2: `#` comments and blank lines are skipped but lines stay physical, so v2
    violations point at lines 3 and 6 in every format."""
    _setup(tmp_path, "tool_args")
    first, second = (json.dumps(e) for e in _numbered(KINDS["tool_args"].failing))
    (tmp_path / "t.jsonl").write_bytes(f"# run 1\r\n\r\n{first}\r\n# x\n\n{second}\n".encode())
    result = cli("check", "-c", "c.json", "-t", "t.jsonl", "--format", fmt)
    assert result.returncode == 1
    assert _names_line(fmt, result.stdout, "t.jsonl", 3) and _names_line(fmt, result.stdout, "t.jsonl", 6)


def test_json_array_trace_lines(cli: Any, tmp_path: Path) -> None:
    """v1 §3.2 step 3 (a JSON array) with D1: each violation names the physical line its event
    starts on."""
    _setup(tmp_path, "tool_args")
    first, second = (json.dumps(e) for e in _numbered(KINDS["tool_args"].failing))
    (tmp_path / "t.json").write_text(f"[\n  {first},\n\n  {second}\n]\n", encoding="utf-8")
    code, report = _json(cli, "check", "-c", "c.json", "-t", "t.json")
    assert code == 1
    assert [(v["code"], v["line"]) for v in report["violations"]] == [
        ("tool_args.mismatch", 2), ("tool_args.mismatch", 4)]


def test_trace_on_stdin(cli: Any, tmp_path: Path) -> None:
    """`check --help`: `-` reads the trace from stdin; the verdict is the file's."""
    case = _setup(tmp_path, "result_size")
    code = cli("check", "-c", "c.json", "-t", "-", "--format", "json",
               stdin=(tmp_path / "t.jsonl").read_text(encoding="utf-8"))
    assert code.returncode == 1
    assert _codes(json.loads(code.stdout)) == case.expected


def test_backtracking_regex_on_long_input_stays_fast(cli: Any, tmp_path: Path) -> None:
    """§2 / 10.10: `$regex` is the RE2 subset, whose matching is linear: a pattern that backtracks
    exponentially elsewhere gives its verdict on a 100k-character arg at once."""
    _contract(tmp_path, [{"id": "r", "kind": "tool_args", "tool": "d", "match": {"s": {"$regex": "^(a+)+$"}}}])
    _trace(tmp_path, [_call("d", "1", args={"s": "a" * 100_000 + "!"})])
    started = time.monotonic()
    code, report = _json(cli, "check", "-c", "c.json", "-t", "t.jsonl")
    assert (code, _codes(report)) == (1, [("tool_args.mismatch", 1)])
    assert time.monotonic() - started < 10


def test_evidence_cut_counts_code_points(cli: Any, tmp_path: Path) -> None:
    """10.7: strings are cut to 200 Unicode code points plus `…` (an astral emoji is one)."""
    _contract(tmp_path, [{"id": "r", "kind": "output_match", "match": {"x": 1}}])
    _trace(tmp_path, [{"type": "run.completed", "output": {"x": "😀" * 300}}])
    _, report = _json(cli, "check", "-c", "c.json", "-t", "t.jsonl")
    assert report["violations"][0]["evidence"]["mismatches"][0]["actual"] == "😀" * 200 + "…"


@pytest.mark.parametrize("fmt", ("github", "markdown", "junit"))
def test_hostile_arg_values_cannot_forge_ci_output(cli: Any, tmp_path: Path, fmt: str) -> None:
    """README (reports): text from traces is escaped — no forged workflow command in github
    output, no HTML or table break in markdown, well-formed XML in JUnit (even with controls)."""
    _contract(tmp_path, [{"id": "r", "kind": "tool_args", "tool": "d", "match": {"s": "a"}}])
    values = ["x\n::error file=a.py,line=1::forged", "a\u0001b\u0000c", "<b>x</b> | y\n| z |"]
    _trace(tmp_path, [_call("d", str(i), args={"s": v}) for i, v in enumerate(values)])
    result = cli("check", "-c", "c.json", "-t", "t.jsonl", "--format", fmt)
    assert result.returncode == 1
    if fmt == "github":
        commands = [line for line in result.stdout.splitlines() if line.startswith("::")]
        assert len(commands) == 3 and all(line.startswith("::error file=t.jsonl,") for line in commands)
    elif fmt == "markdown":
        assert "<b>" not in result.stdout and "\n| z |" not in result.stdout
    else:
        ElementTree.fromstring(result.stdout.encode())


def _hostile_contract(folder: Path) -> None:
    _contract(folder, [
        {"id": "args", "kind": "tool_args", "tool": "d", "match": {"s": "a"}},
        {"id": "size", "kind": "result_size", "tool": "d", "max_bytes": 100},
        {"id": "out", "kind": "output_match", "match": {"x": 1}},
    ])


def test_ten_megabyte_line_is_refused_by_default(cli: Any, tmp_path: Path) -> None:
    """D2: the 1 MiB per-line limit stays as a safety default: exit 2, one line naming file:line."""
    _hostile_contract(tmp_path)
    big = "x" * (10 * 1024 * 1024)
    (tmp_path / "t.jsonl").write_text(jsonl(_numbered([_call("d", "1", args={"s": big})])), encoding="utf-8")
    result = cli("check", "-c", "c.json", "-t", "t.jsonl")
    assert (result.returncode, result.stdout) == (2, "")
    assert _one_error_line(result.stderr).startswith("agent-invariants: t.jsonl:1: ")


def test_ten_megabyte_args_result_output_judged_with_raised_limit(cli: Any, tmp_path: Path) -> None:
    """D2 (configurable limit), §3.1, §3.6, §3.7 and 10.7: huge args, result and output are judged;
    evidence strings are cut to 200 code points plus `…`; result_size counts UTF-8 bytes."""
    _hostile_contract(tmp_path)
    big = "é" * (5 * 1024 * 1024)  # 10 MiB of UTF-8 in the args' line; 2 MiB in the others
    events = [_call("d", "1", args={"s": big}), _result("1", result=big[:1024 * 1024]),
              {"type": "run.completed", "output": {"x": big[:1024 * 1024]}}]
    (tmp_path / "t.jsonl").write_text(
        "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in _numbered(events)), encoding="utf-8")
    code, report = _json(cli, "check", "-c", "c.json", "-t", "t.jsonl", "--max-line-bytes", "20000000")
    assert code == 1
    assert _codes(report) == [("tool_args.mismatch", 1), ("result_size.exceeded", 2), ("output_match.mismatch", 3)]
    args, size, out = report["violations"]
    assert args["evidence"]["mismatches"][0]["actual"] == "é" * 200 + "…"
    assert out["evidence"]["mismatches"][0]["actual"] == "é" * 200 + "…"
    assert size["evidence"]["bytes"] == 2 * 1024 * 1024 + 2


@pytest.mark.parametrize(("literal", "canonical", "size"), [
    ("1e21", "1e+21", 5), ("100.0", "100", 3), ("1e-7", "1e-7", 4), ("1.5e-7", "1.5e-7", 6),
    ("123456789012345678901", "123456789012345680000", 21),
])
def test_evidence_numbers_in_rfc8785_form(cli: Any, tmp_path: Path, literal: str, canonical: str,
                                          size: int) -> None:
    """10.7: evidence is serialised with RFC 8785 number form, and result_size counts the bytes of
    that canonical form (`100.0` → `100`)."""
    _contract(tmp_path, [{"id": "r", "kind": "tool_args", "tool": "d", "match": {"n": "x"}},
                         {"id": "s", "kind": "result_size", "tool": "d", "max_bytes": 1}])
    (tmp_path / "t.jsonl").write_text(
        f'{{"seq":1,"type":"tool.call","tool":"d","call_id":"1","args":{{"n":{literal}}}}}\n'
        f'{{"seq":2,"type":"tool.result","call_id":"1","ok":true,"result":{literal}}}\n', encoding="utf-8")
    result = cli("check", "-c", "c.json", "-t", "t.jsonl", "--format", "json")
    assert result.returncode == 1
    assert f'"actual": {canonical}' in result.stdout
    assert json.loads(result.stdout)["violations"][1]["evidence"]["bytes"] == size


def _nest(levels: int) -> dict[str, Any]:
    """A match tree `levels` deep counting the root as level 1."""
    node: dict[str, Any] = {"$exists": True}
    for _ in range(levels - 2):
        node = {"k": node}
    return {"s": node}


@pytest.mark.parametrize(("levels", "code"), [(32, 1), (33, 2)])
def test_match_tree_depth_limit(cli: Any, tmp_path: Path, levels: int, code: int) -> None:
    """§2 "Limits: depth ≤ 32". Spec silent on the base: the root counts as level 1 (the product
    accepts 32 such levels and refuses 33), refused on one line naming c.json."""
    _contract(tmp_path, [{"id": "r", "kind": "tool_args", "tool": "d", "match": _nest(levels)}])
    _trace(tmp_path, [_call("d", "1", args={"s": "x"})])
    result = cli("check", "-c", "c.json", "-t", "t.jsonl")
    assert result.returncode == code
    if code == 2:
        line = _one_error_line(result.stderr)
        assert line.startswith("agent-invariants: c.json") and "$.rules[0].match.s" in line


def _deep_args(folder: Path, levels: int) -> None:
    _contract(folder, [{"id": "r", "kind": "tool_args", "tool": "d", "match": {"s": 1}}])
    deep = "[" * levels + "1" + "]" * levels
    (folder / "t.jsonl").write_text(
        f'{{"seq":1,"type":"tool.call","tool":"d","call_id":"1","args":{{"s":{deep}}}}}\n', encoding="utf-8")


def test_deeply_nested_args_are_judged(cli: Any, tmp_path: Path) -> None:
    """§2 states no depth limit for trace values: args nested 200 deep are read and compared
    (spec silent; a plain mismatch is the reasonable reading, never a crash)."""
    _deep_args(tmp_path, 200)
    code, report = _json(cli, "check", "-c", "c.json", "-t", "t.jsonl")
    assert (code, _codes(report)) == (1, [("tool_args.mismatch", 1)])


def test_absurdly_nested_args_are_bad_input_at_their_line(cli: Any, tmp_path: Path) -> None:
    """Spec silent on a nesting limit for trace JSON (the product stops at 500 levels); refusing is
    reasonable if it follows D4: exit 2, one stderr line naming file:line, nothing on stdout."""
    _deep_args(tmp_path, 2000)
    result = cli("check", "-c", "c.json", "-t", "t.jsonl")
    assert (result.returncode, result.stdout) == (2, "")
    assert _one_error_line(result.stderr).startswith("agent-invariants: t.jsonl:1: ")


@pytest.mark.parametrize(("node", "code"), [
    ({"$regex": "a" * 500}, 1), ({"$regex": "a" * 501}, 2),
    ({"$in": list(range(1000))}, 1), ({"$in": list(range(1001))}, 2),
    ({"$any_of": [1] * 20}, 1), ({"$any_of": [1] * 21}, 2), ({"$any_of": [1]}, 2),
])
def test_operator_limits(cli: Any, tmp_path: Path, node: dict[str, Any], code: int) -> None:
    """§2 operators: `$regex` ≤ 500 chars, `$in` ≤ 1000 values, `$any_of` 2..20 branches; over
    the limit is a load error (exit 2, one line with the JSON path), at it a plain verdict."""
    _contract(tmp_path, [{"id": "r", "kind": "tool_args", "tool": "d", "match": {"s": node}}])
    _trace(tmp_path, [_call("d", "1", args={"s": "b"})])
    result = cli("check", "-c", "c.json", "-t", "t.jsonl")
    assert result.returncode == code
    if code == 2:
        assert f"$.rules[0].match.s.{next(iter(node))}" in _one_error_line(result.stderr)


def test_regex_with_lookaround_is_refused(cli: Any, tmp_path: Path) -> None:
    """10.10: the loader enforces RE2 syntax with or without google-re2 (no lookaround)."""
    _contract(tmp_path, [{"id": "r", "kind": "tool_args", "tool": "d", "match": {"s": {"$regex": "(?=a)"}}}])
    _trace(tmp_path, [_call("d", "1", args={"s": "a"})])
    result = cli("check", "-c", "c.json", "-t", "t.jsonl")
    assert (result.returncode, result.stdout) == (2, "")
    assert "$.rules[0].match.s.$regex" in _one_error_line(result.stderr)


def test_non_finite_comparison_operand_is_refused(cli: Any, tmp_path: Path) -> None:
    """§2: `$gt` takes finite numbers only and bad operands are load errors: `1e400` overflows."""
    (tmp_path / "c.json").write_text(
        '{"version":2,"name":"spec","rules":[{"id":"r","kind":"tool_args","tool":"d",'
        '"match":{"n":{"$gt":1e400}}}]}', encoding="utf-8")
    _trace(tmp_path, [_call("d", "1", args={"n": 1})])
    result = cli("check", "-c", "c.json", "-t", "t.jsonl")
    assert (result.returncode, result.stdout) == (2, "")
    assert _one_error_line(result.stderr).startswith("agent-invariants: c.json")


def _numbers_contract(folder: Path, value: str) -> None:
    (folder / "c.json").write_text(
        '{"version":2,"name":"spec","rules":['
        f'{{"id":"gt","kind":"tool_args","tool":"a","match":{{"n":{{"$gt":{value}}}}}}},'
        f'{{"id":"in","kind":"tool_args","tool":"b","match":{{"n":{{"$in":[{value}]}}}}}},'
        f'{{"id":"lit","kind":"tool_args","tool":"c","match":{{"n":{{"$literal":{value}}}}}}}]}}',
        encoding="utf-8")


def _numbers_trace(folder: Path, value: str) -> None:
    lines = [f'{{"seq":{i + 1},"type":"tool.call","tool":"{t}","call_id":"{i}","args":{{"n":{value}}}}}'
             for i, t in enumerate("abc")]
    (folder / "t.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_huge_number_in_args_never_compares(cli: Any, tmp_path: Path) -> None:
    """§2: comparisons take finite numbers only; an arg of 1e400 is no finite number, so `$gt`
    mismatches, and `$in`/`$literal` of a finite value do not equal it (spec silent on whether
    the line may instead be refused: the product reads it, as JavaScript reads 1e400, and judges
    it a mismatch)."""
    _numbers_contract(tmp_path, "1")
    _numbers_trace(tmp_path, "1e400")
    result = cli("check", "-c", "c.json", "-t", "t.jsonl", "--format", "json")
    assert (result.returncode, result.stderr) == (1, "")
    assert [v["code"] for v in json.loads(result.stdout)["violations"]] == ["tool_args.mismatch"] * 3


def test_big_integer_equal_literals_match(cli: Any, tmp_path: Path) -> None:
    """§2 equality is structural and `1=1.0`: the same literal 2^53+1 in contract and args
    matches `$in` and `$literal` (true whether numbers are exact or IEEE doubles)."""
    _numbers_contract(tmp_path, "9007199254740993")
    _numbers_trace(tmp_path, "9007199254740993")
    _, report = _json(cli, "check", "-c", "c.json", "-t", "t.jsonl")
    failed = [v["rule_id"] for v in report["violations"]]
    assert "in" not in failed and "lit" not in failed


def test_big_integer_strictly_greater_compares(cli: Any, tmp_path: Path) -> None:
    """§2 `$gt` on finite numbers: 2^53+2 > 2^53 (both exact in IEEE doubles, so every reading
    agrees); the spec is silent on 2^53+1 versus 2^53, which we leave alone."""
    _numbers_contract(tmp_path, "9007199254740992")
    _numbers_trace(tmp_path, "9007199254740994")
    _, report = _json(cli, "check", "-c", "c.json", "-t", "t.jsonl")
    assert [v["rule_id"] for v in report["violations"]] == ["in", "lit"]


def test_lone_surrogate_matched_by_regex(cli: Any, tmp_path: Path) -> None:
    """10.10: `$regex` matches strings; a string holding a lone surrogate (valid JSON escape) is
    still a string: `^x` finds it (spec silent on surrogates; a match is the reasonable reading)."""
    _contract(tmp_path, [{"id": "r", "kind": "tool_args", "tool": "d", "match": {"s": {"$regex": "^x"}}}])
    (tmp_path / "t.jsonl").write_text(
        '{"seq":1,"type":"tool.call","tool":"d","call_id":"1","args":{"s":"x\\ud800y"}}\n', encoding="utf-8")
    code, report = _json(cli, "check", "-c", "c.json", "-t", "t.jsonl")
    assert (code, report["violations"]) == (0, [])


def _surrogate_mismatch(folder: Path) -> None:
    _contract(folder, [{"id": "r", "kind": "tool_args", "tool": "d", "match": {"s": {"$regex": "^z"}}}])
    (folder / "t.jsonl").write_text(
        '{"seq":1,"type":"tool.call","tool":"d","call_id":"1","args":{"s":"x\\ud800y"}}\n', encoding="utf-8")


def test_lone_surrogate_in_evidence_is_written_as_utf8(tmp_path: Path) -> None:
    """10.7 (evidence strings) with a lone surrogate in a mismatching arg: the JSON report is
    valid UTF-8 and exits 1, never a traceback (spec silent on how the surrogate is shown)."""
    _surrogate_mismatch(tmp_path)
    result = _raw(tmp_path, "check", "-c", "c.json", "-t", "t.jsonl", "--format", "json", capture_output=True)
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout.decode("utf-8"))  # strict: raises on a surrogate written as bytes
    assert _codes(report) == [("tool_args.mismatch", 1)]


@pytest.mark.parametrize("fmt", ["text", "sarif", "junit", "html"])
def test_lone_surrogate_in_evidence_other_formats(cli: Any, tmp_path: Path, fmt: str) -> None:
    """As above for other formats (the escaping ones): exit 1, nothing on stderr (no traceback)."""
    _surrogate_mismatch(tmp_path)
    result = cli("check", "-c", "c.json", "-t", "t.jsonl", "--format", fmt)
    assert (result.returncode, result.stderr) == (1, "")


@pytest.mark.parametrize("fmt", ALL_FORMATS)
def test_lone_surrogates_in_contract_name_tool_and_keys(cli: Any, tmp_path: Path, fmt: str) -> None:
    """Spec silent on lone surrogates outside values: in the contract name, a tool glob, a call_id
    and an args key they are plain text; every format renders the verdict (exit 1, clean stderr)."""
    (tmp_path / "c.json").write_text(
        '{"version":2,"name":"sp\\ud800ec","rules":[{"id":"r","kind":"tool_args","tool":"d\\ud800",'
        '"match":{"s":"a"}}]}', encoding="utf-8")
    (tmp_path / "t.jsonl").write_text(
        '{"seq":1,"type":"tool.call","tool":"d\\ud800","call_id":"1\\ud800",'
        '"args":{"s\\ud800":"b","s":"\\udc00"}}\n', encoding="utf-8")
    result = cli("check", "-c", "c.json", "-t", "t.jsonl", "--format", fmt)
    assert (result.returncode, result.stderr) == (1, "")


def test_raw_nul_byte_is_refused_at_its_line(cli: Any, tmp_path: Path) -> None:
    """v1 §3.2 and D4: a line that is not JSON (a raw NUL inside a string) is exit 2 with one line
    naming file:line, and nothing on stdout."""
    _hostile_contract(tmp_path)
    (tmp_path / "t.jsonl").write_bytes(b'{"seq":1,"type":"run.start"}\n{"seq":2,"type":"x\x00y"}\n')
    result = cli("check", "-c", "c.json", "-t", "t.jsonl")
    assert (result.returncode, result.stdout) == (2, "")
    line = _one_error_line(result.stderr)
    assert line.startswith("agent-invariants: t.jsonl:2: ") and "\x00" not in line


def test_escaped_nul_in_args_is_an_ordinary_string(cli: Any, tmp_path: Path) -> None:
    """§2 equality: "a\\u0000" is a string unequal to "a": a mismatch, and the report stays JSON."""
    _hostile_contract(tmp_path)
    (tmp_path / "t.jsonl").write_text(
        '{"seq":1,"type":"tool.call","tool":"d","call_id":"1","args":{"s":"a\\u0000"}}\n', encoding="utf-8")
    code, report = _json(cli, "check", "-c", "c.json", "-t", "t.jsonl")
    assert code == 1
    assert report["violations"][0]["evidence"]["mismatches"][0]["actual"] == "a\x00"


def test_line_break_in_a_contract_key_is_escaped(cli: Any, tmp_path: Path) -> None:
    """README (error messages): input text is escaped, so a crafted key cannot forge a line: an
    unknown field holding a newline stays on one stderr line."""
    _contract(tmp_path, [{"id": "r", "kind": "tool_args", "tool": "d", "match": {"s": "a"}, "bad\nkey": 1}])
    _trace(tmp_path, [_call("d", "1", args={"s": "a"})])
    result = cli("check", "-c", "c.json", "-t", "t.jsonl")
    assert result.returncode == 2
    assert "\\n" in _one_error_line(result.stderr)


@pytest.mark.parametrize(("prefix", "eol"), [(b"", b"\r\n"), (b"\xef\xbb\xbf", b"\n"), (b"\xef\xbb\xbf", b"\r\n")])
def test_crlf_and_bom_traces_give_the_plain_verdict(cli: Any, tmp_path: Path, prefix: bytes, eol: bytes) -> None:
    """v1 §3.2: lines split on `\\n` or `\\r\\n` and a leading BOM is trimmed; v2 kinds then give the
    same codes and lines as for the plain file."""
    _hostile_contract(tmp_path)
    events = _numbered([_call("d", "1", args={"s": "b"}), {"type": "run.completed", "output": {"x": 1}}])
    (tmp_path / "t.jsonl").write_bytes(prefix + eol.join(json.dumps(e).encode() for e in events) + eol)
    code, report = _json(cli, "check", "-c", "c.json", "-t", "t.jsonl")
    assert code == 1
    assert [(v["code"], v["line"]) for v in report["violations"]] == [("tool_args.mismatch", 1)]


def test_empty_trace_from_dev_null(cli: Any, tmp_path: Path) -> None:
    """v1 §3.2: an empty text is zero events (valid). 10.4: tool_args without call_index is vacuous;
    output_match is never vacuous and reports `output_missing` with no seq (10.2: no terminal)."""
    _hostile_contract(tmp_path)
    code, report = _json(cli, "check", "-c", "c.json", "-t", "/dev/null")
    assert code == 1
    assert _codes(report) == [("output_match.output_missing", None)]
    assert report["results"][0]["checked"] == 0 and report["results"][0].get("vacuous") is True


def test_trace_on_a_fifo(tmp_path: Path) -> None:
    """README: traces may be pipes; a FIFO is read once and judged as the file would be."""
    _hostile_contract(tmp_path)
    fifo = tmp_path / "t.fifo"
    os.mkfifo(fifo)
    data = jsonl(_numbered([_call("d", "1", args={"s": "b"}), {"type": "run.completed", "output": {"x": 1}}]))

    def feed() -> None:
        with open(fifo, "w", encoding="utf-8") as handle:
            handle.write(data)

    writer = threading.Thread(target=feed)
    writer.start()
    result = _raw(tmp_path, "check", "-c", "c.json", "-t", "t.fifo", "--format", "json", capture_output=True)
    writer.join(timeout=10)
    assert result.returncode == 1, result.stderr
    assert [v["code"] for v in json.loads(result.stdout)["violations"]] == ["tool_args.mismatch"]


def test_broken_pipe_on_stdout(tmp_path: Path) -> None:
    """README exit codes: stdout that cannot be written (a closed pipe) is exit 2 with one stderr
    line, never 1 — even when the verdict has violations."""
    _setup(tmp_path, "tool_args")
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = _raw(tmp_path, "check", "-c", "c.json", "-t", "t.jsonl", "--format", "json",
                      stdout=write_end, stderr=subprocess.PIPE)
    finally:
        os.close(write_end)
    assert result.returncode == 2
    _one_error_line(result.stderr.decode())


def test_head_c0_pipeline(tmp_path: Path) -> None:
    """README: `check … | head -c0` (a reader that goes away) is exit 2 with one stderr line once
    the write fails; with a report too big for the pipe buffer, the write always fails."""
    _contract(tmp_path, [{"id": "r", "kind": "tool_args", "tool": "d", "match": {"s": "a"}}])
    _trace(tmp_path, [_call("d", str(i), args={"s": "b" * 150}) for i in range(600)])
    script = (f'"{sys.executable}" -m agent_invariants check -c c.json -t t.jsonl --format json '
              '--max-violations 0 | head -c0; exit "${PIPESTATUS[0]}"')
    result = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, timeout=60,
                            env={**os.environ, "NO_COLOR": "1"})
    assert result.returncode == 2
    _one_error_line(result.stderr.decode())


def test_closed_stdout_at_start(tmp_path: Path) -> None:
    """README: a command started with stdout closed is exit 2 with one stderr line, never 1."""
    _setup(tmp_path, "tool_args")
    script = f'exec >&-; "{sys.executable}" -m agent_invariants check -c c.json -t t.jsonl --format json'
    result = subprocess.run(["bash", "-c", script], cwd=tmp_path, stderr=subprocess.PIPE, timeout=60,
                            env={**os.environ, "NO_COLOR": "1"})
    assert result.returncode == 2
    _one_error_line(result.stderr.decode())


def test_v2_field_of_wrong_type_names_file_line_and_path(cli: Any, tmp_path: Path) -> None:
    """§0 "bad type → exit 2, file:line" and 10.16: `file:line: $.field`, under version 2."""
    _setup(tmp_path, "latency_budget")
    (tmp_path / "t.jsonl").write_text(
        '{"seq":1,"type":"run.start"}\n\n{"seq":2,"type":"tool.result","call_id":"s1","duration_ms":true}\n',
        encoding="utf-8")
    result = cli("check", "-c", "c.json", "-t", "t.jsonl")
    assert (result.returncode, result.stdout) == (2, "")
    assert _one_error_line(result.stderr).startswith("agent-invariants: t.jsonl:3: $.duration_ms")


# -- determinism ---------------------------------------------------------------------------------------


def _all_kinds_contract(folder: Path) -> None:
    rules = [{**case.rule, "id": name} for name, case in KINDS.items()]
    _contract(folder, rules)
    events: list[Event] = []
    for case in KINDS.values():
        events.extend(e for e in case.failing if e["type"] not in ("run.completed", "run.failed"))
    events.append({"type": "run.failed", "output": {"total": 2, "refunds": ["A1"], "fraud": True},
                   "duration_ms": 50})
    _trace(folder, events)


@pytest.mark.parametrize("fmt", ALL_FORMATS)
def test_same_check_twice_is_byte_identical(cli: Any, tmp_path: Path, fmt: str) -> None:
    """The brief's determinism and ci-formats §1.1 ("no timestamps, run ids or absolute paths"):
    one contract with all fourteen kinds, checked twice, gives the same bytes, and the output holds
    neither the folder's absolute path nor a timestamp."""
    _all_kinds_contract(tmp_path)
    args = ("check", "-c", "c.json", "-t", "t.jsonl", "--no-lint", "--format", fmt)
    first = cli(*args)
    second = cli(*args)
    assert first.returncode == 1, first.stderr
    assert first.stdout == second.stdout
    text = first.stdout
    assert str(tmp_path) not in text
    for stamp in {time.strftime("%Y-%m-%d"), time.strftime("%Y-%m-%d", time.gmtime())}:
        assert stamp not in text  # today's date: no run timestamp (help texts hold fixed examples)


@pytest.mark.parametrize("fmt", ["json", "sarif", "junit"])
def test_compare_twice_is_byte_identical(cli: Any, tmp_path: Path, fmt: str) -> None:
    """Determinism for compare, and no absolute path in its output."""
    _setup(tmp_path, "approval_bound")
    first = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "t.jsonl", "--format", fmt)
    second = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "t.jsonl", "--format", fmt)
    assert first.returncode == 1
    assert first.stdout == second.stdout
    assert str(tmp_path) not in first.stdout


def test_sarif_with_absolute_trace_path_stays_relative(cli: Any, tmp_path: Path) -> None:
    """ci-formats §1.1: the artifact URI "should be repo-relative"; an absolute --trace inside the
    current folder still gives a relative URI (README: `--sarif-root`, default the current one)."""
    _setup(tmp_path, "tool_args")
    result = cli("check", "-c", "c.json", "-t", str(tmp_path / "t.jsonl"), "--format", "sarif")
    log = json.loads(result.stdout)
    assert github_profile_problems(log) == []
    assert str(tmp_path) not in result.stdout


def test_all_kinds_together_keep_contract_order(cli: Any, tmp_path: Path) -> None:
    """v1 §5 / 10.5: the top-level violations are the concatenation of results in contract order,
    each kind still giving its own code beside the thirteen others."""
    _all_kinds_contract(tmp_path)
    code, report = _json(cli, "check", "-c", "c.json", "-t", "t.jsonl", "--no-lint")
    assert code == 1
    order = [v["rule_id"] for v in report["violations"]]
    assert order == sorted(order, key=list(KINDS).index)
    assert all(v["code"].startswith(v["rule_kind"] + ".") for v in report["violations"])
