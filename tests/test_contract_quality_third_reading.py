"""A third reading of spec v2 §4 `lint`, §5 `stability` and §6 `mutate`, with §10 points 37-66.

Written from the spec text alone; each case names the sentence or point it checks. Corners first:
each lint code once with a near miss, exit codes under `--strict`/`--interface`, version 1 vs 2,
stability's reporting rules and path options, mutate's cap, score threshold, control and corpus.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support import write_contract

Rule = dict[str, Any]
Finding = tuple[str, str, list[str], str]


# -- helpers ---------------------------------------------------------------------------------------


def _in_process(*args: str) -> tuple[int, str]:
    """The command line's `main` run in this process (as `agent_invariants.cli.main` allows): exit code
    and stdout. Used for the many small lint cases; text, SARIF and stderr cases run the real CLI."""
    from agent_invariants.cli import main

    buffer = io.BytesIO()
    out = io.TextIOWrapper(buffer, encoding="utf-8")
    saved = sys.argv, sys.stdout
    sys.argv, sys.stdout = ["agent-invariants", *args], out
    code = 0
    try:
        main()
    except SystemExit as exit:
        code = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
    finally:
        out.flush()
        sys.argv, sys.stdout = saved
    return code, buffer.getvalue().decode("utf-8")


def _lint(cli: Any, tmp_path: Path, rules: list[Any], *options: str, version: int = 2) -> tuple[int, dict[str, Any]]:
    """Lint `rules` as `c.json` with `--format json`; returns (exit code, report or {})."""
    del cli  # the CLI fixture is kept in the signature; lint runs in process for speed
    write_contract(tmp_path, rules, version)
    code, stdout = _in_process("lint", "--contract", str(tmp_path / "c.json"), "--format", "json", *options)
    return code, (json.loads(stdout) if stdout.strip() else {})


def _findings(report: dict[str, Any]) -> list[Finding]:
    return [(f["code"], f["level"], f["rule_ids"], f["pointer"]) for f in report["findings"]]


def _codes(report: dict[str, Any]) -> list[str]:
    return [f["code"] for f in report["findings"]]


def _write_jsonl(path: Path, events: list[Rule]) -> None:
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")


def _canonical_sha(value: Any) -> str:
    """SHA-256 of RFC 8785 JSON for the simple values used here (ASCII keys, integers)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _run(output: Any = None, *, with_output: bool = True) -> list[Rule]:
    terminal: Rule = {"seq": 2, "type": "run.completed"}
    if with_output:
        terminal["output"] = output
    return [{"seq": 1, "type": "agent.message"}, terminal]


def _stability(cli: Any, tmp_path: Path, outputs: list[Any], *options: str) -> tuple[int, dict[str, Any], str]:
    """One trace per output (`t0.jsonl`, …); returns (exit, JSON report or {}, stderr)."""
    names = []
    for i, output in enumerate(outputs):
        name = f"t{i}.jsonl"
        _write_jsonl(tmp_path / name, _run(output))
        names.append(name)
    result = cli("stability", *names, "--format", "json", *options)
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, (json.loads(result.stdout) if result.stdout.strip() else {}), result.stderr


# The §6 example: grant (10), refund call (20), result (30), run.completed (40); approval_bound.
REFUND_TRACE: list[Rule] = [
    {"seq": 10, "type": "approval.granted", "tool": "refund", "args": {"order": "A1"}},
    {"seq": 20, "type": "tool.call", "tool": "refund", "call_id": "c1", "args": {"order": "A1"}},
    {"seq": 30, "type": "tool.result", "call_id": "c1", "ok": True},
    {"seq": 40, "type": "run.completed"},
]
BOUND: Rule = {"id": "bound", "kind": "approval_bound", "tool": "refund"}
# Derived by hand from points 57 and 61 (site position, then the operator's row in §6's table).
REFUND_IDS = [
    "drop_approval:10", "move_approval_after:10", "rebind_approval:10:/order",
    "drop_call:20", "change_arg:20:/order", "duplicate_call:20", "inflate_retries:20",
    "flip_ok:30", "drop_event:40",
]


@pytest.fixture(scope="module")
def refund_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """One `mutate --format json` of the §6 example, shared by the tests that only read its report."""
    folder = tmp_path_factory.mktemp("refund")
    write_contract(folder, [BOUND])
    _write_jsonl(folder / "t.jsonl", REFUND_TRACE)
    result = subprocess.run([sys.executable, "-m", "agent_invariants", "mutate", "--contract", "c.json",
                             "--trace", "t.jsonl", "--format", "json"], cwd=folder, capture_output=True,
                            text=True, env={**os.environ, "NO_COLOR": "1"}, timeout=60)
    return folder, result


def _mutate(cli: Any, tmp_path: Path, rules: list[Rule], trace: list[Rule], *options: str,
            ) -> tuple[int, dict[str, Any], str]:
    write_contract(tmp_path, rules)
    _write_jsonl(tmp_path / "t.jsonl", trace)
    result = cli("mutate", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json", *options)
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, (json.loads(result.stdout) if result.stdout.strip() else {}), result.stderr


# == lint (§4, points 37-50) ========================================================================

SHELL_PAIR: list[Rule] = [
    {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"},
    {"id": "must-exec", "kind": "tool_calls", "tool": "shell.exec", "min": 1},
]


def test_lint_example_exact_json_report(cli: Any, tmp_path: Path) -> None:
    """§4 example + point 50: the json report shape and the finding named by §4's example line."""
    code, report = _lint(cli, tmp_path, SHELL_PAIR)
    assert code == 1
    for finding in report["findings"]:
        assert isinstance(finding.pop("message"), str)
    assert report == {
        "schema": "agent-invariants/lint/v1", "contract": {"name": "spec", "version": 2},
        "errors": 1, "warnings": 0,
        "findings": [{"code": "required_but_forbidden", "level": "error", "rule_ids": ["no-shell", "must-exec"],
                      "pointer": "/rules/1/tool"}],
    }


def test_lint_example_without_either_rule_exits_0(cli: Any, tmp_path: Path) -> None:
    """§4 example: 'Without either rule, lint exits 0.'"""
    for rules in ([SHELL_PAIR[0]], [SHELL_PAIR[1]]):
        code, report = _lint(cli, tmp_path, rules)
        assert (code, report["findings"]) == (0, [])


def test_lint_text_line_format(cli: Any, tmp_path: Path) -> None:
    """Point 50: text prints `<level> <code> [<ids>] <pointer>: <message>` per finding, then a count line."""
    write_contract(tmp_path, SHELL_PAIR)
    result = cli("lint", "--contract", "c.json")
    lines = result.stdout.splitlines()
    assert result.returncode == 1
    assert lines[0].startswith("error required_but_forbidden [no-shell, must-exec] /rules/1/tool: ")
    assert len(lines) == 2 and "1 error" in lines[1]


def test_lint_sarif_one_result_per_finding_at_pointer_line(cli: Any, tmp_path: Path) -> None:
    """Point 50: SARIF has one result per finding, ruleId the code, its level, a region at the pointer's line."""
    write_contract(tmp_path, SHELL_PAIR)
    result = cli("lint", "--contract", "c.json", "--format", "sarif")
    assert result.returncode == 1
    run = json.loads(result.stdout)["runs"][0]
    (only,) = run["results"]
    assert (only["ruleId"], only["level"]) == ("required_but_forbidden", "error")
    text_lines = (tmp_path / "c.json").read_text().splitlines()
    # /rules/1/tool: the second `"tool":` line of the indented file.
    tool_lines = [i + 1 for i, line in enumerate(text_lines) if '"tool": ' in line]
    region = only["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] == tool_lines[1]
    assert [d["id"] for d in run["tool"]["driver"]["rules"]] == ["required_but_forbidden"]


def test_lint_invalid_contract_exit_2_empty_stdout(cli: Any, tmp_path: Path) -> None:
    """Point 50: 'An invalid contract is exit 2 with nothing on stdout.'"""
    write_contract(tmp_path, [{"id": "x", "kind": "deny_tool"}])
    result = cli("lint", "--contract", "c.json", "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")


def test_lint_v1_contract_with_v2_kind_is_invalid(cli: Any, tmp_path: Path) -> None:
    """§0: a version-1 contract with a new kind exits 2; lint shares that validation (point 50)."""
    write_contract(tmp_path, [SHELL_PAIR[1]], version=1)
    result = cli("lint", "--contract", "c.json", "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")


def test_lint_reads_version_1_contracts(cli: Any, tmp_path: Path) -> None:
    """Point 37: 'lint accepts both versions and applies every code whose kinds occur'."""
    code, report = _lint(cli, tmp_path, [{"id": "all", "kind": "allow_tools", "tools": ["*"]}], version=1)
    assert code == 0
    assert report["contract"] == {"name": "spec", "version": 1}
    # Point 49: pointer is 'the conflicting field' — here the `*` pattern.
    assert _findings(report) == [("v1_trap", "warning", ["all"], "/rules/0/tools/0")]


def test_lint_v1_error_exits_1(cli: Any, tmp_path: Path) -> None:
    """Point 37: version 1 gets 'the same exit codes' — an error finding exits 1."""
    rules = [{"id": "no-pay", "kind": "deny_tool", "tool": "pay"},
             {"id": "need-pay", "kind": "require_event", "match": {"type": "tool.call", "tool": "pay"}}]
    code, report = _lint(cli, tmp_path, rules, version=1)
    assert (code, _findings(report)) == (1, [("required_but_forbidden", "error", ["no-pay", "need-pay"],
                                              "/rules/1/match/tool")])


def test_lint_strict_warning_exits_1(cli: Any, tmp_path: Path) -> None:
    """§4/point 50: lint exits 1 'on warnings with --strict', 0 without."""
    rules = [{"id": "all", "kind": "allow_tools", "tools": ["*"]}]
    assert _lint(cli, tmp_path, rules)[0] == 0
    assert _lint(cli, tmp_path, rules, "--strict")[0] == 1


def test_lint_strict_clean_exits_0(cli: Any, tmp_path: Path) -> None:
    """Point 50: with `--strict`, exit 1 only 'when there is any finding'."""
    code, report = _lint(cli, tmp_path, [SHELL_PAIR[0]], "--strict")
    assert (code, report["findings"]) == (0, [])


# -- required_but_forbidden ------------------------------------------------------------------------


def test_rbf_near_miss_min_0(cli: Any, tmp_path: Path) -> None:
    """Point 38: R(t) is tool_calls.min — min 0 requires nothing, so no required_but_forbidden."""
    rules = [SHELL_PAIR[0], {"id": "must-exec", "kind": "tool_calls", "tool": "shell.exec", "min": 0}]
    code, report = _lint(cli, tmp_path, rules)
    assert "required_but_forbidden" not in _codes(report) and code == 0


def test_rbf_warning_severity_deny_is_warning(cli: Any, tmp_path: Path) -> None:
    """Point 37: a warning-severity rule involved makes the same code level `warning`; exit 0."""
    rules = [{**SHELL_PAIR[0], "severity": "warning"}, SHELL_PAIR[1]]
    code, report = _lint(cli, tmp_path, rules)
    assert (code, _findings(report)) == (0, [("required_but_forbidden", "warning", ["no-shell", "must-exec"],
                                              "/rules/1/tool")])
    assert (report["errors"], report["warnings"]) == (0, 1)


def test_rbf_warning_severity_requirement_is_warning(cli: Any, tmp_path: Path) -> None:
    """Point 37: 'including the one that makes a tool required' — a warning-severity requirement."""
    rules = [SHELL_PAIR[0], {**SHELL_PAIR[1], "severity": "warning"}]
    code, report = _lint(cli, tmp_path, rules)
    assert code == 0 and [(c, lv) for c, lv, _, _ in _findings(report)] == [("required_but_forbidden", "warning")]


def test_rbf_from_allow_tools(cli: Any, tmp_path: Path) -> None:
    """§4 row: t 'matches no allow_tools pattern' (an error-severity allow_tools, point 40)."""
    rules = [{"id": "only-read", "kind": "allow_tools", "tools": ["read.*"]},
             {"id": "must-write", "kind": "tool_calls", "tool": "write", "min": 1}]
    code, report = _lint(cli, tmp_path, rules)
    assert (code, _findings(report)) == (1, [("required_but_forbidden", "error", ["only-read", "must-write"],
                                              "/rules/1/tool")])


def test_rbf_cap_zero_not_count_contradiction(cli: Any, tmp_path: Path) -> None:
    """Point 40: a covering bound of 0 gives required_but_forbidden and 'then gives no count_contradiction'."""
    rules = [{"id": "cap", "kind": "tool_calls", "tool": "pay", "max": 0},
             {"id": "need", "kind": "require_event", "match": {"type": "tool.call", "tool": "pay"}}]
    code, report = _lint(cli, tmp_path, rules)
    assert code == 1 and _codes(report) == ["required_but_forbidden"]
    assert report["findings"][0]["rule_ids"] == ["cap", "need"]


def test_rbf_glob_requirement_not_literal(cli: Any, tmp_path: Path) -> None:
    """Point 38: R(t) is for literal tools; `tool_calls shell.* min 1` under deny shell.* is not R(t)."""
    rules = [SHELL_PAIR[0], {"id": "some-shell", "kind": "tool_calls", "tool": "shell.*", "min": 1}]
    _, report = _lint(cli, tmp_path, rules)
    assert "required_but_forbidden" not in _codes(report)


def test_rbf_one_finding_per_forbidding_rule_and_tool(cli: Any, tmp_path: Path) -> None:
    """Point 40: 'one finding per (forbidding rule, tool t) with R(t) ≥ 1'; rule_ids name the max R rule."""
    rules = [SHELL_PAIR[0],
             {"id": "a", "kind": "tool_calls", "tool": "shell.exec", "min": 1},
             {"id": "b", "kind": "tool_calls", "tool": "shell.exec", "min": 2},
             {"id": "c", "kind": "tool_calls", "tool": "shell.ls", "min": 1}]
    _, report = _lint(cli, tmp_path, rules)
    rbf = [f for f in _findings(report) if f[0] == "required_but_forbidden"]
    assert sorted(ids[1] for _, _, ids, _ in rbf) == ["b", "c"]


# -- count_contradiction ---------------------------------------------------------------------------


def _two_required(budget: Rule, mins: tuple[int, int] = (1, 1)) -> list[Rule]:
    return [budget,
            {"id": "need-a", "kind": "tool_calls", "tool": "a", "min": mins[0]},
            {"id": "need-b", "kind": "tool_calls", "tool": "b", "min": mins[1]}]


def test_count_contradiction_sum_exceeds_budget(cli: Any, tmp_path: Path) -> None:
    """§4 row / point 39-40: sum of R(t) over covered tools exceeds `event_budget.max_tool_calls`."""
    code, report = _lint(cli, tmp_path, _two_required({"id": "budget", "kind": "event_budget",
                                                        "max_tool_calls": 1}))
    assert (code, _findings(report)) == (1, [("count_contradiction", "error", ["budget", "need-a", "need-b"],
                                              "/rules/0/max_tool_calls")])


def test_count_contradiction_near_miss_sum_equals_bound(cli: Any, tmp_path: Path) -> None:
    """§4 row: 'exceeds' — a sum equal to the bound is no contradiction."""
    code, report = _lint(cli, tmp_path, _two_required({"id": "budget", "kind": "event_budget",
                                                        "max_tool_calls": 2}))
    assert (code, report["findings"]) == (0, [])


def test_count_contradiction_retry_limit_per_tool(cli: Any, tmp_path: Path) -> None:
    """Point 39: retry_limit group_by tool compares R(t) > max_attempts tool by tool, never a sum."""
    budget: Rule = {"id": "retries", "kind": "retry_limit", "max_attempts": 2, "group_by": "tool"}
    code, report = _lint(cli, tmp_path, _two_required(budget, (2, 2)))
    assert "count_contradiction" not in _codes(report) and code == 0
    code, report = _lint(cli, tmp_path, _two_required(budget, (3, 1)))
    assert code == 1 and [ids for c, _, ids, _ in _findings(report) if c == "count_contradiction"] == [
        ["retries", "need-a"]]


def test_count_contradiction_retry_limit_by_signature_bounds_nothing(cli: Any, tmp_path: Path) -> None:
    """Point 39: only `retry_limit` with `group_by: tool` is a bound."""
    budget: Rule = {"id": "retries", "kind": "retry_limit", "max_attempts": 1}
    _, report = _lint(cli, tmp_path, _two_required(budget, (3, 3)))
    assert "count_contradiction" not in _codes(report)


def test_count_contradiction_successful_max_does_not_bound_calls(cli: Any, tmp_path: Path) -> None:
    """Point 39: a `tool_calls.max` with `count: successful` bounds only S(t), not R(t)."""
    rules = [{"id": "ok-cap", "kind": "tool_calls", "tool": "a", "max": 1, "count": "successful"},
             {"id": "need-a", "kind": "tool_calls", "tool": "a", "min": 3}]
    _, report = _lint(cli, tmp_path, rules)
    assert "count_contradiction" not in _codes(report)


def test_count_contradiction_successful_min_over_successful_max(cli: Any, tmp_path: Path) -> None:
    """Point 39: S(t), the largest `count: successful` min, is bounded by a successful max."""
    rules = [{"id": "ok-cap", "kind": "tool_calls", "tool": "a", "max": 1, "count": "successful"},
             {"id": "need-ok", "kind": "tool_calls", "tool": "a", "min": 2, "count": "successful"}]
    code, report = _lint(cli, tmp_path, rules)
    assert code == 1 and "count_contradiction" in _codes(report)


def test_count_contradiction_require_event_min_over_max_events(cli: Any, tmp_path: Path) -> None:
    """§4 row / point 40: 'any require_event.min exceeds max_events'."""
    rules = [{"id": "msgs", "kind": "require_event", "match": {"type": "agent.message"}, "min": 3},
             {"id": "budget", "kind": "event_budget", "max_events": 2}]
    code, report = _lint(cli, tmp_path, rules)
    assert code == 1 and _codes(report) == ["count_contradiction"]
    assert report["findings"][0]["pointer"] == "/rules/1/max_events"
    rules[0]["min"] = 2
    assert _lint(cli, tmp_path, rules)[0] == 0


def test_count_contradiction_call_index_at_max(cli: Any, tmp_path: Path) -> None:
    """§4 row: '`call_index` ≥ `max`' — call_index 2 needs 3 calls, above max 2; call_index 1 fits."""
    rules = [{"id": "third", "kind": "tool_args", "tool": "a", "call_index": 2, "match": {"x": 1}},
             {"id": "cap", "kind": "tool_calls", "tool": "a", "max": 2}]
    code, report = _lint(cli, tmp_path, rules)
    assert code == 1 and _codes(report) == ["count_contradiction"]
    rules[0]["call_index"] = 1
    code, report = _lint(cli, tmp_path, rules)
    assert (code, _codes(report)) == (0, [])


def test_count_contradiction_matcher_with_extra_key_bounds_nothing(cli: Any, tmp_path: Path) -> None:
    """Point 39: 'a matcher with any other key (ok, args, …) bounds nothing'."""
    rules = [{"id": "cap", "kind": "require_event", "match": {"type": "tool.call", "tool": "a", "args": {"x": 1}},
              "min": 0, "max": 1},
             {"id": "need-a", "kind": "tool_calls", "tool": "a", "min": 3}]
    _, report = _lint(cli, tmp_path, rules)
    assert "count_contradiction" not in _codes(report)


def test_count_contradiction_glob_requirement_under_subsuming_bound(cli: Any, tmp_path: Path) -> None:
    """Point 40: a requirement on a glob h exceeding a bound whose coverage subsumes h."""
    rules = [{"id": "cap", "kind": "tool_calls", "tool": "mail.*", "max": 1},
             {"id": "need", "kind": "tool_calls", "tool": "mail.*", "min": 2}]
    code, report = _lint(cli, tmp_path, rules)
    assert code == 1 and "count_contradiction" in _codes(report)


# -- order_contradiction ---------------------------------------------------------------------------


def _call(tool: str) -> Rule:
    return {"type": "tool.call", "tool": tool}


def test_order_contradiction_error_when_one_required(cli: Any, tmp_path: Path) -> None:
    """Point 41: A→B with B→A is an error when R(A) + R(B) ≥ 1 (one suffices)."""
    rules = [{"id": "a-first", "kind": "precedence", "before": _call("a"), "after": _call("b")},
             {"id": "b-first", "kind": "require_order", "before": _call("b"), "after": _call("a")},
             {"id": "need-b", "kind": "tool_calls", "tool": "b", "min": 1}]
    code, report = _lint(cli, tmp_path, rules)
    assert code == 1
    assert [(c, lv, ids) for c, lv, ids, _ in _findings(report)] == [
        ("order_contradiction", "error", ["a-first", "b-first"])]


def test_order_contradiction_warning_without_requirement(cli: Any, tmp_path: Path) -> None:
    """Point 41: without R the pair 'forbids both tools' — a warning."""
    rules = [{"id": "a-first", "kind": "precedence", "before": _call("a"), "after": _call("b")},
             {"id": "b-first", "kind": "require_order", "before": _call("b"), "after": _call("a")}]
    code, report = _lint(cli, tmp_path, rules)
    assert code == 0
    assert ("order_contradiction", "warning") in [(c, lv) for c, lv, _, _ in _findings(report)]


def test_order_contradiction_near_miss_after_with_args(cli: Any, tmp_path: Path) -> None:
    """Point 41: `after` must be exactly `{type: tool.call, tool: B}`; an extra key drops the pair."""
    rules = [{"id": "a-first", "kind": "precedence", "before": _call("a"),
              "after": {**_call("b"), "args": {"x": 1}}},
             {"id": "b-first", "kind": "require_order", "before": _call("b"), "after": _call("a")},
             {"id": "need-a", "kind": "tool_calls", "tool": "a", "min": 1}]
    _, report = _lint(cli, tmp_path, rules)
    assert "order_contradiction" not in _codes(report)


def test_order_contradiction_exact_tool_order(cli: Any, tmp_path: Path) -> None:
    """§4 row / point 41: an exact tool_order putting B before every A, with A→B, is an error."""
    rules = [{"id": "flow", "kind": "tool_order", "tools": ["b", "a"], "mode": "exact"},
             {"id": "a-first", "kind": "precedence", "before": _call("a"), "after": _call("b")}]
    code, report = _lint(cli, tmp_path, rules)
    assert code == 1
    assert [(c, lv, ids) for c, lv, ids, _ in _findings(report)] == [
        ("order_contradiction", "error", ["flow", "a-first"])]


def test_order_contradiction_subsequence_tool_order_is_fine(cli: Any, tmp_path: Path) -> None:
    """Point 41: only an *exact* tool_order counts; a subsequence order allows a, b, a."""
    rules = [{"id": "flow", "kind": "tool_order", "tools": ["b", "a"]},
             {"id": "a-first", "kind": "precedence", "before": _call("a"), "after": _call("b")}]
    _, report = _lint(cli, tmp_path, rules)
    assert "order_contradiction" not in _codes(report)


# -- self_precedence -------------------------------------------------------------------------------


def test_self_precedence_error_with_requirement(cli: Any, tmp_path: Path) -> None:
    """§4 row / point 42: before = after on a call matcher with R(t) ≥ 1 is an error."""
    rules = [{"id": "self", "kind": "precedence", "before": _call("x"), "after": _call("x")},
             {"id": "need-x", "kind": "tool_calls", "tool": "x", "min": 1}]
    code, report = _lint(cli, tmp_path, rules)
    assert code == 1
    assert [(c, lv, ids) for c, lv, ids, _ in _findings(report)] == [("self_precedence", "error", ["self"])]


def test_self_precedence_warning_without_requirement(cli: Any, tmp_path: Path) -> None:
    """§4 row: 'error if R ≥ 1, else warning'."""
    rules = [{"id": "self", "kind": "require_order", "before": _call("x"), "after": _call("x")}]
    code, report = _lint(cli, tmp_path, rules)
    assert code == 0 and [(c, lv) for c, lv, _, _ in _findings(report)] == [("self_precedence", "warning")]


def test_self_precedence_non_call_matcher_required_by_require_event(cli: Any, tmp_path: Path) -> None:
    """Point 42: error when 'an equal matcher has require_event.min ≥ 1'."""
    msg: Rule = {"type": "agent.message"}
    rules = [{"id": "self", "kind": "require_order", "before": msg, "after": msg},
             {"id": "need-msg", "kind": "require_event", "match": msg}]
    code, report = _lint(cli, tmp_path, rules)
    assert code == 1 and ("self_precedence", "error") in [(c, lv) for c, lv, _, _ in _findings(report)]


def test_self_precedence_near_miss_different_tools(cli: Any, tmp_path: Path) -> None:
    """§4 row: only `before` = `after`; different tools give no self_precedence."""
    rules = [{"id": "p", "kind": "require_order", "before": _call("x"), "after": _call("y")}]
    _, report = _lint(cli, tmp_path, rules)
    assert "self_precedence" not in _codes(report)


# -- reference_to_forbidden ------------------------------------------------------------------------


def _ref_rules(*, required: bool, any_of: bool = False) -> list[Rule]:
    ref: Rule = {"$from_result": {"tool": "get", "path": "paid"}}
    node: Rule = {"$any_of": [ref, 5]} if any_of else ref
    rules: list[Rule] = [{"id": "no-get", "kind": "deny_tool", "tool": "get"},
                         {"id": "amount", "kind": "tool_args", "tool": "refund", "match": {"amount": node}}]
    if required:
        rules.append({"id": "need-refund", "kind": "tool_calls", "tool": "refund", "min": 1})
    return rules


def test_reference_to_forbidden_error_when_subject_required(cli: Any, tmp_path: Path) -> None:
    """§4 row / point 42: `$from_result` names a denied tool; the subject's R ≥ 1 makes it an error."""
    code, report = _lint(cli, tmp_path, _ref_rules(required=True))
    assert code == 1
    assert [(c, lv, ids) for c, lv, ids, _ in _findings(report)] == [
        ("reference_to_forbidden", "error", ["no-get", "amount"])]


def test_reference_to_forbidden_warning_when_not_required(cli: Any, tmp_path: Path) -> None:
    """§4 row: 'error if the subject's R ≥ 1, else warning'."""
    code, report = _lint(cli, tmp_path, _ref_rules(required=False))
    assert code == 0
    assert ("reference_to_forbidden", "warning") in [(c, lv) for c, lv, _, _ in _findings(report)]


def test_reference_to_forbidden_inside_any_of_is_warning(cli: Any, tmp_path: Path) -> None:
    """Point 42: error only when 'the reference is not inside an `$any_of` branch'."""
    code, report = _lint(cli, tmp_path, _ref_rules(required=True, any_of=True))
    assert code == 0
    assert [(c, lv) for c, lv, _, _ in _findings(report)] == [("reference_to_forbidden", "warning")]


def test_reference_to_forbidden_output_match_without_when_is_error(cli: Any, tmp_path: Path) -> None:
    """Point 42: an output_match without `when` is a required subject."""
    rules = [{"id": "no-get", "kind": "deny_tool", "tool": "get"},
             {"id": "total", "kind": "output_match",
              "match": {"total": {"$from_result": {"tool": "get", "path": "paid"}}}}]
    code, report = _lint(cli, tmp_path, rules)
    assert code == 1 and ("reference_to_forbidden", "error") in [(c, lv) for c, lv, _, _ in _findings(report)]


def test_reference_to_forbidden_near_miss_allowed_tool(cli: Any, tmp_path: Path) -> None:
    """§4 row: a reference to a tool nothing forbids gives no finding."""
    rules = _ref_rules(required=True)
    rules[0] = {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}
    code, report = _lint(cli, tmp_path, rules)
    assert (code, report["findings"]) == (0, [])


def test_reference_to_forbidden_exact_order_puts_reference_after(cli: Any, tmp_path: Path) -> None:
    """§4 row: 'one that an exact order puts after the subject'."""
    rules: list[Rule] = [
        {"id": "flow", "kind": "tool_order", "tools": ["refund", "get"], "mode": "exact"},
        {"id": "amount", "kind": "tool_args", "tool": "refund",
         "match": {"amount": {"$from_result": {"tool": "get", "path": "paid"}}}}]
    code, report = _lint(cli, tmp_path, rules)
    assert code == 1 and [(c, lv, ids) for c, lv, ids, _ in _findings(report)] == [
        ("reference_to_forbidden", "error", ["flow", "amount"])]


# -- dead_rule -------------------------------------------------------------------------------------


def test_dead_rule_from_allow_tools(cli: Any, tmp_path: Path) -> None:
    """§4 row / point 43: the rule's glob intersects no pattern of an error-severity allow_tools."""
    rules = [{"id": "known", "kind": "allow_tools", "tools": ["read.*"]},
             {"id": "mail-ok", "kind": "require_approval", "tool": "mail.send"}]
    code, report = _lint(cli, tmp_path, rules)
    assert code == 0
    assert _findings(report) == [("dead_rule", "warning", ["known", "mail-ok"], "/rules/1/tool")]


def test_dead_rule_near_miss_warning_allow_tools(cli: Any, tmp_path: Path) -> None:
    """Point 43: 'the forbidding allow_tools or deny_tool must have severity error'."""
    rules = [{"id": "known", "kind": "allow_tools", "tools": ["read.*"], "severity": "warning"},
             {"id": "mail-ok", "kind": "require_approval", "tool": "mail.send"}]
    _, report = _lint(cli, tmp_path, rules)
    assert "dead_rule" not in _codes(report)


def test_dead_rule_from_deny_tool(cli: Any, tmp_path: Path) -> None:
    """§4 row: 'a deny_tool subsumes it' (retry_limit is one of point 43's kinds)."""
    rules = [{"id": "no-mail", "kind": "deny_tool", "tool": "mail.*"},
             {"id": "retries", "kind": "retry_limit", "tool": "mail.send", "max_attempts": 2}]
    code, report = _lint(cli, tmp_path, rules)
    assert code == 0 and [(c, ids) for c, _, ids, _ in _findings(report)] == [("dead_rule", ["no-mail", "retries"])]


def test_dead_rule_near_miss_partial_overlap(cli: Any, tmp_path: Path) -> None:
    """§4 row: `mail.*` is not subsumed by deny `mail.send` — the rule can still fire."""
    rules = [{"id": "no-send", "kind": "deny_tool", "tool": "mail.send"},
             {"id": "retries", "kind": "retry_limit", "tool": "mail.*", "max_attempts": 2}]
    _, report = _lint(cli, tmp_path, rules)
    assert "dead_rule" not in _codes(report)


def test_dead_rule_not_for_required_when(cli: Any, tmp_path: Path) -> None:
    """Point 43: a required_when on a denied tool 'is not dead'."""
    rules = [{"id": "no-mail", "kind": "deny_tool", "tool": "mail.*"},
             {"id": "mail-if", "kind": "required_when", "tool": "mail.send",
              "when": {"path": "x", "equals": 1}}]
    _, report = _lint(cli, tmp_path, rules)
    assert "dead_rule" not in _codes(report)


# -- vacuous_distinct ------------------------------------------------------------------------------


def test_vacuous_distinct_under_max_1(cli: Any, tmp_path: Path) -> None:
    """§4 row / point 44: `distinct` on a tool with max < 2; rule_ids [tool_args, bound]."""
    rules = [{"id": "uniq", "kind": "tool_args", "tool": "a", "distinct": ["id"]},
             {"id": "one", "kind": "tool_calls", "tool": "a", "min": 1, "max": 1}]
    code, report = _lint(cli, tmp_path, rules)
    assert code == 0 and [(c, lv, ids) for c, lv, ids, _ in _findings(report)] == [
        ("vacuous_distinct", "warning", ["uniq", "one"])]


def test_vacuous_distinct_near_miss_max_2(cli: Any, tmp_path: Path) -> None:
    """§4 row: 'max < 2' — max 2 is not vacuous."""
    rules = [{"id": "uniq", "kind": "tool_args", "tool": "a", "distinct": ["id"]},
             {"id": "two", "kind": "tool_calls", "tool": "a", "min": 1, "max": 2}]
    code, report = _lint(cli, tmp_path, rules)
    assert (code, report["findings"]) == (0, [])


# -- duplicate_rule / shadowed_rule ----------------------------------------------------------------


def test_duplicate_rule_with_defaults_filled(cli: Any, tmp_path: Path) -> None:
    """Point 44: defaults filled in, id/description/severity ignored; one finding, not also shadowed."""
    rules = [{"id": "r1", "kind": "retry_limit", "max_attempts": 2},
             {"id": "r2", "kind": "retry_limit", "max_attempts": 2, "tool": " * ", "group_by": "call_signature",
              "severity": "warning", "description": "same"}]
    code, report = _lint(cli, tmp_path, rules)
    assert code == 0 and [(c, ids) for c, _, ids, _ in _findings(report)] == [("duplicate_rule", ["r1", "r2"])]


def test_duplicate_rule_one_per_later_duplicate(cli: Any, tmp_path: Path) -> None:
    """Point 44: 'one finding per later duplicate, naming the first occurrence'."""
    rule: Rule = {"kind": "deny_tool", "tool": "x"}
    rules = [{"id": "d1", **rule}, {"id": "d2", **rule}, {"id": "d3", **rule}]
    _, report = _lint(cli, tmp_path, rules)
    assert [(c, ids) for c, _, ids, _ in _findings(report)] == [
        ("duplicate_rule", ["d1", "d2"]), ("duplicate_rule", ["d1", "d3"])]


def test_shadowed_deny_tool(cli: Any, tmp_path: Path) -> None:
    """§4 row / point 45: a deny_tool glob subsuming another; pointer in the later rule."""
    rules = [{"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"},
             {"id": "no-exec", "kind": "deny_tool", "tool": "shell.exec"}]
    code, report = _lint(cli, tmp_path, rules)
    assert (code, _findings(report)) == (0, [("shadowed_rule", "warning", ["no-shell", "no-exec"], "/rules/1/tool")])


def test_shadowed_near_miss_weaker_severity(cli: Any, tmp_path: Path) -> None:
    """§4 row: A must have severity ≥ B's; a warning A does not shadow an error B."""
    rules = [{"id": "no-shell", "kind": "deny_tool", "tool": "shell.*", "severity": "warning"},
             {"id": "no-exec", "kind": "deny_tool", "tool": "shell.exec"}]
    _, report = _lint(cli, tmp_path, rules)
    assert "shadowed_rule" not in _codes(report)


def test_shadowed_smaller_max(cli: Any, tmp_path: Path) -> None:
    """§4 row: 'a smaller max on the same glob or metric'."""
    rules = [{"id": "one", "kind": "tool_calls", "tool": "refund", "max": 1},
             {"id": "two", "kind": "tool_calls", "tool": "refund", "max": 2}]
    code, report = _lint(cli, tmp_path, rules)
    assert (code, _findings(report)) == (0, [("shadowed_rule", "warning", ["one", "two"], "/rules/1/max")])


def test_shadowed_near_miss_b_has_min(cli: Any, tmp_path: Path) -> None:
    """Point 45: B that 'sets nothing A does not bound' — a `min` on B is not shadowed."""
    rules = [{"id": "one", "kind": "tool_calls", "tool": "refund", "max": 1},
             {"id": "two", "kind": "tool_calls", "tool": "refund", "min": 1, "max": 2}]
    _, report = _lint(cli, tmp_path, rules)
    assert "shadowed_rule" not in _codes(report)


def test_shadowed_allow_tools_pattern_in_own_list(cli: Any, tmp_path: Path) -> None:
    """Point 45: a pattern subsumed by another of the same list: rule_ids [that rule], `/rules/i/tools/j`."""
    rules = [{"id": "known", "kind": "allow_tools", "tools": ["read.*", "read.file"]}]
    code, report = _lint(cli, tmp_path, rules)
    assert (code, _findings(report)) == (0, [("shadowed_rule", "warning", ["known"], "/rules/0/tools/1")])


def test_shadowed_deny_event_keys_subset(cli: Any, tmp_path: Path) -> None:
    """Point 45: deny_event A's matcher keys a subset of B's, glob keys subsuming."""
    rules = [{"id": "a", "kind": "deny_event", "match": {"type": "tool.*"}},
             {"id": "b", "kind": "deny_event", "match": {"type": "tool.call", "tool": "x"}}]
    _, report = _lint(cli, tmp_path, rules)
    assert [(c, ids) for c, _, ids, _ in _findings(report)] == [("shadowed_rule", ["a", "b"])]


# -- unschemaed_read / --interface -----------------------------------------------------------------

WHEN_RULE: Rule = {"id": "mail-if", "kind": "required_when", "tool": "mail",
                   "when": {"path": "refunds", "non_empty": True}}


def _schema(required: list[str]) -> Rule:
    return {"id": "shape", "kind": "output_schema",
            "schema": {"type": "object", "required": required,
                       "properties": {"refunds": {"type": "array"}, "total": {"type": "number"}}}}


def test_unschemaed_read_without_output_schema(cli: Any, tmp_path: Path) -> None:
    """Point 46: 'with no output_schema, every such path' warns, once per (rule, path)."""
    code, report = _lint(cli, tmp_path, [WHEN_RULE])
    assert (code, _findings(report)) == (0, [("unschemaed_read", "warning", ["mail-if"],
                                              report["findings"][0]["pointer"])])


def test_unschemaed_read_near_miss_required_path(cli: Any, tmp_path: Path) -> None:
    """Point 46: a path the schema requires gives no warning."""
    code, report = _lint(cli, tmp_path, [_schema(["refunds"]), WHEN_RULE])
    assert (code, report["findings"]) == (0, [])


def test_unschemaed_read_property_not_required(cli: Any, tmp_path: Path) -> None:
    """Point 46: a key under `properties` but not in `required` is not required."""
    _, report = _lint(cli, tmp_path, [_schema(["total"]), WHEN_RULE])
    assert _codes(report) == ["unschemaed_read"]


def test_unschemaed_read_strict_exits_1(cli: Any, tmp_path: Path) -> None:
    """§4: warnings exit 1 under `--strict`."""
    assert _lint(cli, tmp_path, [WHEN_RULE], "--strict")[0] == 1


def test_interface_lists_reads_and_keeps_exit(cli: Any, tmp_path: Path) -> None:
    """Point 46: `--interface` adds `interface: [{path, rules, required}]` sorted by path, and changes
    neither the findings nor the exit code."""
    rules = [_schema(["total"]), WHEN_RULE, {"id": "tot", "kind": "output_match", "match": {"total": 3}}]
    plain_code, plain = _lint(cli, tmp_path, rules)
    code, report = _lint(cli, tmp_path, rules, "--interface")
    assert "interface" not in plain
    assert (code, report["findings"]) == (plain_code, plain["findings"])
    by_path = {entry["path"]: entry for entry in report["interface"]}
    assert by_path["refunds"] == {"path": "refunds", "rules": ["mail-if"], "required": False}
    assert by_path["total"] == {"path": "total", "rules": ["tot"], "required": True}
    paths = [entry["path"] for entry in report["interface"]]
    assert paths == sorted(paths)


def test_interface_does_not_change_strict_exit(cli: Any, tmp_path: Path) -> None:
    """Point 46: `--interface` changes neither findings nor the exit (with `--strict` too)."""
    assert _lint(cli, tmp_path, [WHEN_RULE], "--strict", "--interface")[0] == 1
    assert _lint(cli, tmp_path, [_schema(["refunds"]), WHEN_RULE], "--strict", "--interface")[0] == 0


def test_interface_array_elements_and_from_output(cli: Any, tmp_path: Path) -> None:
    """Point 46: output_match nodes (array elements as `[]`) and `$from_output` paths are listed."""
    rules = [{"id": "items", "kind": "output_match", "match": {"items": [{"sku": "x"}]}},
             {"id": "arg", "kind": "tool_args", "tool": "a", "call_index": 0,
              "match": {"n": {"$from_output": "count"}}}]
    _, report = _lint(cli, tmp_path, rules, "--interface")
    paths = {entry["path"] for entry in report["interface"]}
    assert {"items", "items[]", "items[].sku", "count"} <= paths


# -- v1_trap ---------------------------------------------------------------------------------------


def test_v1_trap_allow_star_and_double_star(cli: Any, tmp_path: Path) -> None:
    """Point 47: an allow_tools pattern whose normalised form is `*` (so `**` too)."""
    _, report = _lint(cli, tmp_path, [{"id": "all", "kind": "allow_tools", "tools": ["**"]}])
    assert _codes(report) == ["v1_trap"]


def test_v1_trap_near_miss_star_prefix(cli: Any, tmp_path: Path) -> None:
    """Point 47: `a*` is not `*`."""
    code, report = _lint(cli, tmp_path, [{"id": "some", "kind": "allow_tools", "tools": ["a*"]}])
    assert (code, report["findings"]) == (0, [])


def test_v1_trap_require_approval_scope(cli: Any, tmp_path: Path) -> None:
    """§4 row: `require_approval` with `scope`; without scope, no trap."""
    rule: Rule = {"id": "ok", "kind": "require_approval", "tool": "pay", "scope": "finance"}
    _, report = _lint(cli, tmp_path, [rule], version=1)
    assert _findings(report) == [("v1_trap", "warning", ["ok"], report["findings"][0]["pointer"])]
    _, report = _lint(cli, tmp_path, [{"id": "ok", "kind": "require_approval", "tool": "pay"}], version=1)
    assert report["findings"] == []


def test_v1_trap_stop_default_allowed_after(cli: Any, tmp_path: Path) -> None:
    """Point 47: the default allowed_after omits control.stop, so it has the trap."""
    _, report = _lint(cli, tmp_path, [{"id": "stop", "kind": "stop_is_final"}])
    assert _codes(report) == ["v1_trap"]


def test_v1_trap_near_miss_stop_type_allowed(cli: Any, tmp_path: Path) -> None:
    """Point 47: an allowed_after pattern subsuming the stop_type clears the trap."""
    rule: Rule = {"id": "stop", "kind": "stop_is_final", "allowed_after": ["control.*", "run.completed"]}
    code, report = _lint(cli, tmp_path, [rule])
    assert (code, report["findings"]) == (0, [])


# -- unrequired_subject ----------------------------------------------------------------------------


def test_unrequired_subject_precedence(cli: Any, tmp_path: Path) -> None:
    """Point 48: a precedence whose `after` nothing requires; rule_ids [rule], pointer `/rules/i`."""
    rules = [{"id": "get-first", "kind": "precedence", "before": _call("get"), "after": _call("refund")}]
    code, report = _lint(cli, tmp_path, rules)
    assert (code, _findings(report)) == (0, [("unrequired_subject", "warning", ["get-first"], "/rules/0")])


def test_unrequired_subject_near_miss_required(cli: Any, tmp_path: Path) -> None:
    """Point 48: an `after` with R ≥ 1 (any severity) is required."""
    rules = [{"id": "get-first", "kind": "precedence", "before": _call("get"), "after": _call("refund")},
             {"id": "need", "kind": "tool_calls", "tool": "refund", "min": 1, "severity": "warning"}]
    code, report = _lint(cli, tmp_path, rules)
    assert (code, report["findings"]) == (0, [])


def test_unrequired_subject_glob_subject_literal_required(cli: Any, tmp_path: Path) -> None:
    """Point 48: a call subject on glob g is required when a literal t that g matches has R(t) ≥ 1."""
    rules = [{"id": "args", "kind": "tool_args", "tool": "mail.*", "match": {"to": "x"}},
             {"id": "need", "kind": "tool_calls", "tool": "mail.send", "min": 1}]
    _, report = _lint(cli, tmp_path, rules)
    assert "unrequired_subject" not in _codes(report)


def test_unrequired_subject_exempts_forbidden_when_and_failure_handled(cli: Any, tmp_path: Path) -> None:
    """Point 48: 'forbidden_when and failure_handled are exempt'."""
    rules = [{"id": "fw", "kind": "forbidden_when", "tool": "mail", "when": {"outcome": {
                 "outcome_id": "fraud", "verdict": "violated"}}},
             {"id": "fh", "kind": "failure_handled", "tool": "pay", "within_events": 2}]
    _, report = _lint(cli, tmp_path, rules)
    assert "unrequired_subject" not in _codes(report)


def test_unrequired_subject_not_with_dead_rule(cli: Any, tmp_path: Path) -> None:
    """Point 48: 'a rule with a dead_rule finding gets no unrequired_subject'."""
    rules = [{"id": "known", "kind": "allow_tools", "tools": ["read.*"]},
             {"id": "lat", "kind": "latency_budget", "tool": "mail.send", "max_ms": 100}]
    _, report = _lint(cli, tmp_path, rules)
    assert _codes(report) == ["dead_rule"]


# -- finding order ---------------------------------------------------------------------------------


def test_finding_order_rule_index_then_row(cli: Any, tmp_path: Path) -> None:
    """Point 49: sorted by the lowest rule index they name, then the code's row in §4's table."""
    rules = [{"id": "stop", "kind": "stop_is_final"},                                   # 0: v1_trap
             {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"},                # 1
             {"id": "no-exec", "kind": "deny_tool", "tool": "shell.exec"},              # 2: shadowed by 1
             {"id": "must-exec", "kind": "tool_calls", "tool": "shell.exec", "min": 1}]  # 3: rbf with 1 and 2
    code, report = _lint(cli, tmp_path, rules)
    assert code == 1
    assert [(c, ids) for c, _, ids, _ in _findings(report)] == [
        ("v1_trap", ["stop"]),
        ("required_but_forbidden", ["no-shell", "must-exec"]),
        ("shadowed_rule", ["no-shell", "no-exec"]),
        ("required_but_forbidden", ["no-exec", "must-exec"]),
    ]
    assert (report["errors"], report["warnings"]) == (2, 2)


# -- lint inside check (points 8 and 37) -----------------------------------------------------------

PASSING_TRACE: list[Rule] = [{"seq": 1, "type": "run.completed"}]


def test_check_refuses_v2_lint_error(cli: Any, tmp_path: Path) -> None:
    """§4 / point 8: `check` refuses a v2 contract with lint errors (exit 2, `lint <code>` on stderr)."""
    write_contract(tmp_path, SHELL_PAIR)
    _write_jsonl(tmp_path / "t.jsonl", PASSING_TRACE)
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")
    assert "lint required_but_forbidden" in result.stderr


def test_check_no_lint_runs_the_check(cli: Any, tmp_path: Path) -> None:
    """§4: '... unless given `--no-lint`': the trace without shell.exec fails must-exec (exit 1)."""
    write_contract(tmp_path, SHELL_PAIR)
    _write_jsonl(tmp_path / "t.jsonl", PASSING_TRACE)
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json", "--no-lint")
    assert result.returncode == 1 and json.loads(result.stdout)["passed"] is False


def test_check_never_refuses_v1(cli: Any, tmp_path: Path) -> None:
    """§4: 'v1 contracts are never refused (Node parity)'."""
    rules: list[Rule] = [{"id": "no-pay", "kind": "deny_tool", "tool": "pay"},
                         {"id": "need-pay", "kind": "require_event", "match": {"type": "tool.call", "tool": "pay"}}]
    write_contract(tmp_path, rules, version=1)
    _write_jsonl(tmp_path / "t.jsonl", PASSING_TRACE)
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert result.returncode == 1 and result.stdout


def test_check_ignores_lint_warnings(cli: Any, tmp_path: Path) -> None:
    """Point 37: check acts only on error-level findings and prints nothing for (lint) warnings."""
    write_contract(tmp_path, [{"id": "all", "kind": "allow_tools", "tools": ["*"]}])
    _write_jsonl(tmp_path / "t.jsonl", PASSING_TRACE)
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert result.returncode == 0 and "v1_trap" not in result.stderr + result.stdout


def test_check_warning_level_condition_not_refused(cli: Any, tmp_path: Path) -> None:
    """Point 37: an error-level condition resting on a warning-severity rule is a warning: no refusal."""
    write_contract(tmp_path, [{**SHELL_PAIR[0], "severity": "warning"}, SHELL_PAIR[1]])
    _write_jsonl(tmp_path / "t.jsonl", PASSING_TRACE)
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert result.returncode == 1 and json.loads(result.stdout)["passed"] is False


# == stability (§5, points 51-55) ===================================================================


def test_stability_one_trace_not_measured(cli: Any, tmp_path: Path) -> None:
    """§5 / point 55: fewer than 2 reporting traces: printed, measured false, stable false, exit 2."""
    code, report, _ = _stability(cli, tmp_path, [{"a": 1}])
    assert code == 2
    assert report == {"schema": "agent-invariants/stability/v1",
                      "runs": [{"trace": "t0.jsonl", "reporting": True, "output_sha256": _canonical_sha({"a": 1})}],
                      "measured": False, "stable": False, "unstable": []}


def test_stability_identical_traces_exact_report(cli: Any, tmp_path: Path) -> None:
    """Point 55: exact report for two identical outputs; exit 0."""
    output = {"b": [1, 2], "a": "x"}
    code, report, _ = _stability(cli, tmp_path, [output, output])
    sha = _canonical_sha(output)
    assert code == 0
    assert report == {"schema": "agent-invariants/stability/v1",
                      "runs": [{"trace": "t0.jsonl", "reporting": True, "output_sha256": sha},
                               {"trace": "t1.jsonl", "reporting": True, "output_sha256": sha}],
                      "measured": True, "stable": True, "unstable": []}


def test_stability_spec_example_exact(cli: Any, tmp_path: Path) -> None:
    """§5 example: `total` type-unstable; `refunds[].amount` presence-unstable (absent T3, unknown T2)."""
    outputs = [{"refunds": [{"id": "A9", "amount": 10}], "total": 10},
               {"refunds": [], "total": "0"},
               {"refunds": [{"id": "B2"}], "total": 0}]
    code, report, _ = _stability(cli, tmp_path, outputs)
    assert code == 1 and (report["measured"], report["stable"]) == (True, False)
    assert report["unstable"] == [
        {"path": "refunds[].amount", "kind": "presence", "present_in": [0], "absent_in": [2], "unknown_in": [1],
         "types": [["number"], [], []]},
        {"path": "total", "kind": "type", "present_in": [0, 1, 2], "absent_in": [], "unknown_in": [],
         "types": [["number"], ["string"], ["number"]]},
    ]


def test_stability_spec_example_fixed_passes(cli: Any, tmp_path: Path) -> None:
    """§5 example: 'It passes with "total":0 in T2 and an amount in T3.'"""
    outputs = [{"refunds": [{"id": "A9", "amount": 10}], "total": 10},
               {"refunds": [], "total": 0},
               {"refunds": [{"id": "B2", "amount": 3}], "total": 0}]
    code, report, _ = _stability(cli, tmp_path, outputs)
    assert (code, report["stable"], report["unstable"]) == (0, True, [])


def test_stability_non_reporting_trace_listed_and_excluded(cli: Any, tmp_path: Path) -> None:
    """§5 / point 54-55: a trace whose terminal lacks `output` is listed (sha null) and excluded."""
    _write_jsonl(tmp_path / "a.jsonl", _run({"x": 1}))
    _write_jsonl(tmp_path / "b.jsonl", _run(with_output=False))
    _write_jsonl(tmp_path / "c.jsonl", _run({"x": 2}))
    result = cli("stability", "a.jsonl", "b.jsonl", "c.jsonl", "--format", "json")
    report = json.loads(result.stdout)
    assert result.returncode == 0 and report["stable"] is True
    assert report["runs"][1] == {"trace": "b.jsonl", "reporting": False, "output_sha256": None}


def test_stability_two_traces_one_reporting_exit_2(cli: Any, tmp_path: Path) -> None:
    """§5: 'With fewer than 2 reporting traces the verdict is "not measured", exit 2'."""
    _write_jsonl(tmp_path / "a.jsonl", _run({"x": 1}))
    _write_jsonl(tmp_path / "b.jsonl", [{"seq": 1, "type": "agent.message"}])
    result = cli("stability", "a.jsonl", "b.jsonl", "--format", "json")
    report = json.loads(result.stdout)
    assert result.returncode == 2 and (report["measured"], report["stable"]) == (False, False)


def test_stability_null_output_reports(cli: Any, tmp_path: Path) -> None:
    """Point 54: `output: null` reports, shape {$: {null}}; against a number, `$` is type-unstable."""
    code, report, _ = _stability(cli, tmp_path, [None, 5])
    assert code == 1
    assert report["runs"][0]["reporting"] is True and report["runs"][0]["output_sha256"] == _canonical_sha(None)
    assert [(u["path"], u["kind"], u["types"]) for u in report["unstable"]] == [("$", "type", [["null"], ["number"]])]


def test_stability_earlier_terminal_output_does_not_count(cli: Any, tmp_path: Path) -> None:
    """Point 54: the last terminal without output does not report, though an earlier one had output."""
    _write_jsonl(tmp_path / "a.jsonl", [{"seq": 1, "type": "run.completed", "output": {"x": 1}},
                                        {"seq": 2, "type": "run.failed"}])
    _write_jsonl(tmp_path / "b.jsonl", _run({"x": 1}))
    result = cli("stability", "a.jsonl", "b.jsonl", "--format", "json")
    report = json.loads(result.stdout)
    assert result.returncode == 2 and report["runs"][0]["reporting"] is False


def test_stability_run_failed_output_reports(cli: Any, tmp_path: Path) -> None:
    """Point 54: the terminal may be run.failed; its `output` is the final output."""
    _write_jsonl(tmp_path / "a.jsonl", [{"seq": 1, "type": "run.failed", "output": {"x": 1}}])
    _write_jsonl(tmp_path / "b.jsonl", _run({"x": 1}))
    result = cli("stability", "a.jsonl", "b.jsonl", "--format", "json")
    assert result.returncode == 0 and json.loads(result.stdout)["runs"][0]["reporting"] is True


def test_stability_ignore_silences_path_and_below(cli: Any, tmp_path: Path) -> None:
    """§5 / point 51: traces differing only in ignored paths are stable; `$.` prefix accepted."""
    outputs = [{"a": 1, "debug": {"t": 1}}, {"a": 1, "debug": "off"}]
    assert _stability(cli, tmp_path, outputs)[0] == 1
    assert _stability(cli, tmp_path, outputs, "--ignore", "debug")[0] == 0
    assert _stability(cli, tmp_path, outputs, "--ignore", "$.debug")[0] == 0


def test_stability_ignore_repeats(cli: Any, tmp_path: Path) -> None:
    """Point 51: `--ignore` may repeat."""
    outputs = [{"a": 1, "b": 1}, {"a": "1", "b": "1"}]
    assert _stability(cli, tmp_path, outputs, "--ignore", "a")[0] == 1
    assert _stability(cli, tmp_path, outputs, "--ignore", "a", "--ignore", "b")[0] == 0


def test_stability_ignore_child_only(cli: Any, tmp_path: Path) -> None:
    """Point 51: ignoring `items[].took_ms` leaves other element paths checked."""
    outputs = [{"items": [{"took_ms": 1, "id": "a"}]}, {"items": [{"took_ms": "1", "id": 2}]}]
    code, report, _ = _stability(cli, tmp_path, outputs, "--ignore", "items[].took_ms")
    assert code == 1 and [u["path"] for u in report["unstable"]] == ["items[].id"]


def test_stability_map_collapses_ids(cli: Any, tmp_path: Path) -> None:
    """§5 / point 51: `--map P` merges the members of the object at P at `P{}`."""
    outputs = [{"by_order": {"A1": {"state": "x"}}}, {"by_order": {"B2": {"state": "y"}}}]
    assert _stability(cli, tmp_path, outputs)[0] == 1
    code, report, _ = _stability(cli, tmp_path, outputs, "--map", "by_order")
    assert (code, report["unstable"]) == (0, [])


def test_stability_map_reports_member_paths(cli: Any, tmp_path: Path) -> None:
    """Point 51: mapped members are written `P{}`."""
    outputs = [{"by": {"A1": {"state": "x"}}}, {"by": {"B2": {"state": 1}}}]
    code, report, _ = _stability(cli, tmp_path, outputs, "--map", "by")
    assert code == 1 and [(u["path"], u["kind"]) for u in report["unstable"]] == [("by{}.state", "type")]


def test_stability_map_empty_object_is_unknown(cli: Any, tmp_path: Path) -> None:
    """Point 51: 'an empty one makes the paths below it unknown, like an empty array'."""
    outputs = [{"by": {"A1": {"state": "x"}}}, {"by": {}}]
    code, report, _ = _stability(cli, tmp_path, outputs, "--map", "by")
    assert (code, report["unstable"]) == (0, [])


def test_stability_map_to_nothing_changes_nothing(cli: Any, tmp_path: Path) -> None:
    """Point 51: `--map` on a path with no object there has nothing to collapse (spec silent on an
    error; the reasonable reading is no effect)."""
    outputs = [{"a": 1}, {"a": "x"}]
    code, report, _ = _stability(cli, tmp_path, outputs, "--map", "nowhere")
    assert code == 1 and [u["path"] for u in report["unstable"]] == ["a"]


def test_stability_malformed_map_is_bad_input(cli: Any, tmp_path: Path) -> None:
    """Point 51: `--map` takes the path notation; a path that is not in it is bad input (spec silent
    on the exit; exit 2 as for every other bad input, with no report)."""
    code, report, stderr = _stability(cli, tmp_path, [{"a": 1}, {"a": 1}], "--map", "a[")
    assert (code, report) == (2, {}) and stderr


def test_stability_empty_array_unknown_not_absent(cli: Any, tmp_path: Path) -> None:
    """§5: 'Paths under an empty array are unknown, not absent'."""
    code, report, _ = _stability(cli, tmp_path, [{"xs": [{"a": 1}]}, {"xs": []}])
    assert (code, report["unstable"]) == (0, [])


def test_stability_only_topmost_absent_reported(cli: Any, tmp_path: Path) -> None:
    """§5 / point 52: 'only the topmost absent path is reported'."""
    code, report, _ = _stability(cli, tmp_path, [{"a": {"b": {"c": 1}}}, {}])
    assert code == 1
    assert report["unstable"] == [{"path": "a", "kind": "presence", "present_in": [0], "absent_in": [1],
                                   "unknown_in": [], "types": [["object"], []]}]


def test_stability_presence_and_type_at_one_path(cli: Any, tmp_path: Path) -> None:
    """Points 53/55: a path may have both entries; presence before type."""
    code, report, _ = _stability(cli, tmp_path, [{"a": 1}, {"a": "x"}, {}])
    assert code == 1
    assert [(u["path"], u["kind"]) for u in report["unstable"]] == [("a", "presence"), ("a", "type")]


def test_stability_int_and_float_same_type(cli: Any, tmp_path: Path) -> None:
    """Point 53: 1 and 1.0 are both number."""
    assert _stability(cli, tmp_path, [{"a": 1}, {"a": 1.5}])[0] == 0


def test_stability_element_types_merge(cli: Any, tmp_path: Path) -> None:
    """§5 / point 53: elements merge — [1, "x"] against ["x", 1] is the same type set."""
    assert _stability(cli, tmp_path, [{"xs": [1, "x"]}, {"xs": ["y", 2]}])[0] == 0
    code, report, _ = _stability(cli, tmp_path, [{"xs": [1, "x"]}, {"xs": [2]}])
    assert code == 1 and report["unstable"][0]["types"] == [["number", "string"], ["number"]]


def test_stability_key_with_dot_is_quoted(cli: Any, tmp_path: Path) -> None:
    """Point 51: a member not matching `[A-Za-z0-9_-]+` is written `["k"]`."""
    code, report, _ = _stability(cli, tmp_path, [{"a.b": 1}, {"a.b": "x"}])
    assert code == 1 and [u["path"] for u in report["unstable"]] == ['["a.b"]']
    assert _stability(cli, tmp_path, [{"a.b": 1}, {"a.b": "x"}], "--ignore", '["a.b"]')[0] == 0


def test_stability_sorted_by_code_point(cli: Any, tmp_path: Path) -> None:
    """Point 55: entries sorted by path in code-point order (`B` < `a`)."""
    code, report, _ = _stability(cli, tmp_path, [{"a": 1, "B": 1}, {"a": "1", "B": "1"}])
    assert code == 1 and [u["path"] for u in report["unstable"]] == ["B", "a"]


def test_stability_contract_checks_each_trace(cli: Any, tmp_path: Path) -> None:
    """Point 55: with `--contract`, `runs[i].check` = {passed, error_count, warning_count}; worst exit."""
    write_contract(tmp_path, [{"id": "status", "kind": "run_status", "equals": "completed"}])
    _write_jsonl(tmp_path / "a.jsonl", _run({"x": 1}))
    _write_jsonl(tmp_path / "b.jsonl", [{"seq": 1, "type": "run.completed", "status": "partial", "output": {"x": 2}}])
    result = cli("stability", "a.jsonl", "b.jsonl", "--contract", "c.json", "--format", "json")
    report = json.loads(result.stdout)
    assert result.returncode == 1 and report["stable"] is True
    assert [run["check"] for run in report["runs"]] == [
        {"passed": True, "error_count": 0, "warning_count": 0},
        {"passed": False, "error_count": 1, "warning_count": 0}]


def test_stability_without_contract_no_check_key(cli: Any, tmp_path: Path) -> None:
    """Point 55: `check?` is only present with `--contract`."""
    _, report, _ = _stability(cli, tmp_path, [{"x": 1}, {"x": 1}])
    assert all("check" not in run for run in report["runs"])


def test_stability_contract_does_not_lower_not_measured(cli: Any, tmp_path: Path) -> None:
    """Point 55: 'the exit is the maximum of the stability exit and every check's' — 2 stays 2."""
    write_contract(tmp_path, [{"id": "status", "kind": "run_status", "equals": "completed"}])
    _write_jsonl(tmp_path / "a.jsonl", _run({"x": 1}))
    result = cli("stability", "a.jsonl", "--contract", "c.json", "--format", "json")
    report = json.loads(result.stdout)
    assert result.returncode == 2 and report["runs"][0]["check"]["passed"] is True


def test_stability_contract_lint_refusal(cli: Any, tmp_path: Path) -> None:
    """Point 55: each trace is checked 'as check would (lint refusal included)' — exit 2, no stdout."""
    write_contract(tmp_path, SHELL_PAIR)
    _write_jsonl(tmp_path / "a.jsonl", _run({"x": 1}))
    _write_jsonl(tmp_path / "b.jsonl", _run({"x": 1}))
    result = cli("stability", "a.jsonl", "b.jsonl", "--contract", "c.json", "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")


def test_stability_invalid_trace_exit_2_empty(cli: Any, tmp_path: Path) -> None:
    """Point 55: 'an unreadable or invalid trace or contract is exit 2 with nothing on stdout'."""
    _write_jsonl(tmp_path / "a.jsonl", _run({"x": 1}))
    (tmp_path / "b.jsonl").write_text("{not json\n", encoding="utf-8")
    result = cli("stability", "a.jsonl", "b.jsonl", "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")
    result = cli("stability", "a.jsonl", "missing.jsonl", "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")


# == mutate (§6, points 56-66) ======================================================================


def test_mutate_spec_example_exact(refund_run: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    """§6 example + points 57, 61, 63, 64, 66: ids, order, statuses, hints and the auto control."""
    _, result = refund_run
    report = json.loads(result.stdout)
    assert result.returncode == 0
    killed = {"drop_approval:10", "move_approval_after:10", "duplicate_call:20", "inflate_retries:20"}
    assert [m["id"] for m in report["mutants"]] == REFUND_IDS
    for mutant in report["mutants"]:
        assert mutant["operator"] == mutant["id"].split(":")[0]
        assert (mutant["status"], mutant["killed_by"]) == (
            ("killed", ["bound"]) if mutant["id"] in killed else ("survived", []))
    assert (report["killed"], report["survived"], report["equivalent"], report["invalid"]) == (4, 5, 0, 0)
    assert report["score"] == 4 / 9
    hints = {s["id"]: s["hint"] for s in report["survivors"]}
    assert "failure_handled" in hints["flip_ok:30"] and "successful" in hints["flip_ok:30"]
    assert [s["id"] for s in report["survivors"]] == [i for i in REFUND_IDS if i not in killed]


def test_mutate_report_keys_and_hashes(refund_run: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    """Point 66: the report's fields; hashes are SHA-256 of the files' bytes."""
    tmp_path, result = refund_run
    report = json.loads(result.stdout)
    assert {"schema", "contract_sha256", "trace_sha256", "score", "killed", "survived", "warned", "equivalent",
            "over_block", "invalid", "mutants", "survivors", "control", "false_positives"} <= set(report)
    assert report["schema"] == "agent-invariants/mutate/v1"
    assert report["contract_sha256"] == hashlib.sha256((tmp_path / "c.json").read_bytes()).hexdigest()
    assert report["trace_sha256"] == hashlib.sha256((tmp_path / "t.jsonl").read_bytes()).hexdigest()


def test_mutate_auto_control_too_easy_at_exactly_half(
        refund_run: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    """Point 64: control (run_status + tool_calls min 1) kills drop_call:20 and drop_event:40: 2/9,
    exactly half of 4/9 — 'at least half' prints too easy. The control kills neither drop_approval
    nor flip_ok (§6 example)."""
    report = json.loads(refund_run[1].stdout)
    control = report["control"]
    assert {k: control[k] for k in ("auto", "killed", "survived", "too_easy")} == {
        "auto": True, "killed": 2, "survived": 7, "too_easy": True}
    assert control["score"] == 2 / 9


def test_mutate_determinism_byte_identical(cli: Any, tmp_path: Path,
                                           refund_run: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    """§6: 'Deterministic, with no seed' — two runs (in two folders) give the same bytes."""
    write_contract(tmp_path, [BOUND])
    _write_jsonl(tmp_path / "t.jsonl", REFUND_TRACE)
    second = cli("mutate", "-c", "c.json", "-t", "t.jsonl", "--format", "json")
    assert second.returncode == 0 and second.stdout == refund_run[1].stdout


def test_mutate_failing_trace_exit_2(cli: Any, tmp_path: Path) -> None:
    """§6 / point 56: T must pass C; else exit 2, one stderr line naming the failing rule id, no stdout."""
    code, report, stderr = _mutate(cli, tmp_path, [BOUND], REFUND_TRACE[1:])
    assert (code, report) == (2, {})
    assert len(stderr.strip().splitlines()) == 1 and "bound" in stderr


def test_mutate_warnings_allowed_in_precondition(cli: Any, tmp_path: Path) -> None:
    """Point 56: 'T passes when check would exit 0 (warnings allowed)'."""
    rules = [BOUND, {"id": "no-refund", "kind": "deny_tool", "tool": "refund", "severity": "warning"}]
    code, report, _ = _mutate(cli, tmp_path, rules, REFUND_TRACE, "--no-lint")
    assert code == 0 and report["mutants"]


def test_mutate_lint_error_refused(cli: Any, tmp_path: Path) -> None:
    """Point 56: 'a version-2 contract with lint errors is refused as by check unless --no-lint'."""
    code, report, stderr = _mutate(cli, tmp_path, [BOUND, *SHELL_PAIR], REFUND_TRACE)
    assert (code, report) == (2, {}) and "required_but_forbidden" in stderr


def test_mutate_invalid_contract_exit_2(cli: Any, tmp_path: Path) -> None:
    """Point 56: an invalid contract is exit 2 with nothing on stdout."""
    code, report, stderr = _mutate(cli, tmp_path, [{"id": "x", "kind": "nope"}], REFUND_TRACE)
    assert (code, report) == (2, {}) and stderr


def test_mutate_unknown_no_rewrite_exit_2(cli: Any, tmp_path: Path) -> None:
    """Point 56: 'an unknown --no-rewrite name' is exit 2."""
    code, report, _ = _mutate(cli, tmp_path, [BOUND], REFUND_TRACE, "--no-rewrite", "bogus")
    assert (code, report) == (2, {})


def test_mutate_max_mutants_1_keeps_first(cli: Any, tmp_path: Path) -> None:
    """Point 61: K = 1 keeps index ⌊0·N/1⌋ = 0, the first candidate."""
    _, report, _ = _mutate(cli, tmp_path, [BOUND], REFUND_TRACE, "--max-mutants", "1")
    assert [m["id"] for m in report["mutants"]] == REFUND_IDS[:1]
    assert (report["killed"], report["survived"], report["score"]) == (1, 0, 1.0)


def test_mutate_max_mutants_equal_to_n_keeps_all(cli: Any, tmp_path: Path) -> None:
    """Point 61: the cap applies only 'with N candidates above K'."""
    _, report, _ = _mutate(cli, tmp_path, [BOUND], REFUND_TRACE, "--max-mutants", str(len(REFUND_IDS)))
    assert [m["id"] for m in report["mutants"]] == REFUND_IDS


def test_mutate_max_mutants_evenly_spaced(cli: Any, tmp_path: Path) -> None:
    """Point 61: with N = 9 and K = 4, indexes ⌊i·9/4⌋ = 0, 2, 4, 6."""
    _, report, _ = _mutate(cli, tmp_path, [BOUND], REFUND_TRACE, "--max-mutants", "4")
    assert [m["id"] for m in report["mutants"]] == [REFUND_IDS[i] for i in (0, 2, 4, 6)]


def test_mutate_max_mutants_zero_refused(cli: Any, tmp_path: Path) -> None:
    """§6: `--max-mutants` caps a count of mutants; 0 keeps none and is bad input (exit 2)."""
    code, report, _ = _mutate(cli, tmp_path, [BOUND], REFUND_TRACE, "--max-mutants", "0")
    assert (code, report) == (2, {})


def test_mutate_min_score_equal_passes(cli: Any, tmp_path: Path) -> None:
    """Point 63: exit 1 only when the score is 'strictly below X' — equal passes (K=2 keeps indexes
    0 and 4: drop_approval:10 killed, change_arg:20:/order survived, score 0.5)."""
    code, report, _ = _mutate(cli, tmp_path, [BOUND], REFUND_TRACE, "--max-mutants", "2", "--min-score", "0.5")
    assert (code, report["score"]) == (0, 0.5)
    assert _mutate(cli, tmp_path, [BOUND], REFUND_TRACE, "--max-mutants", "1", "--min-score", "1")[0] == 0
    assert _mutate(cli, tmp_path, [BOUND], REFUND_TRACE, "--max-mutants", "2", "--min-score", "0.51")[0] == 1


def test_mutate_min_score_above_exit_1_report_printed(cli: Any, tmp_path: Path) -> None:
    """§6 / point 66: exit 1 below `--min-score`; the report is printed for 1."""
    code, report, _ = _mutate(cli, tmp_path, [BOUND], REFUND_TRACE, "--min-score", "0.5")
    assert code == 1 and report["score"] == 4 / 9
    assert _mutate(cli, tmp_path, [BOUND], REFUND_TRACE, "--min-score", "0.4")[0] == 0


def test_mutate_min_score_out_of_range(cli: Any, tmp_path: Path) -> None:
    """Point 63: `--min-score X` (0…1); 1.5 is bad input."""
    assert _mutate(cli, tmp_path, [BOUND], REFUND_TRACE, "--min-score", "1.5")[0] == 2


def test_mutate_null_score_fails_min_score_0(cli: Any, tmp_path: Path) -> None:
    """Point 63: score null when nothing is scorable; `--min-score` then gives exit 1 (even 0)."""
    trace = [{"seq": 1, "type": "telemetry.ping"}]
    code, report, _ = _mutate(cli, tmp_path, [{"id": "no-x", "kind": "deny_tool", "tool": "x"}], trace)
    assert code == 0 and report["score"] is None
    assert [(m["id"], m["status"]) for m in report["mutants"]] == [("drop_event:1", "equivalent")]
    assert _mutate(cli, tmp_path, [{"id": "no-x", "kind": "deny_tool", "tool": "x"}], trace,
                   "--min-score", "0")[0] == 1


def test_mutate_unkillable_contract_scores_0(cli: Any, tmp_path: Path) -> None:
    """Point 63: a contract no mutant can violate scores 0.0 (not null); `--min-score 0` passes."""
    rules = [{"id": "no-x", "kind": "deny_tool", "tool": "x"}]
    code, report, _ = _mutate(cli, tmp_path, rules, REFUND_TRACE, "--min-score", "0")
    assert code == 0 and (report["score"], report["killed"], report["survived"]) == (0.0, 0, 9)
    assert _mutate(cli, tmp_path, rules, REFUND_TRACE, "--min-score", "0.01")[0] == 1


def test_mutate_unkillable_contract_control_too_easy(cli: Any, tmp_path: Path) -> None:
    """Point 64: too_easy when the control score is 'above 0 and at least half the main score' — a
    main score of 0 against the auto control's 2/9 is too easy."""
    rules = [{"id": "no-x", "kind": "deny_tool", "tool": "x"}]
    _, report, _ = _mutate(cli, tmp_path, rules, REFUND_TRACE)
    assert (report["control"]["score"], report["control"]["too_easy"]) == (2 / 9, True)


def test_mutate_explicit_control(cli: Any, tmp_path: Path) -> None:
    """§6 / point 66: `--control` names the control: auto false, its sha256, scored on the same mutants."""
    control = {"version": 2, "name": "ctl", "rules": [{"id": "st", "kind": "run_status", "equals": "completed"}]}
    (tmp_path / "ctl.json").write_text(json.dumps(control), encoding="utf-8")
    code, report, _ = _mutate(cli, tmp_path, [BOUND], REFUND_TRACE, "--control", "ctl.json")
    assert code == 0
    assert report["control"]["auto"] is False
    assert report["control"]["contract_sha256"] == hashlib.sha256((tmp_path / "ctl.json").read_bytes()).hexdigest()
    # Only drop_event:40 (no terminal: status none) breaks run_status.
    assert (report["control"]["killed"], report["control"]["survived"]) == (1, 8)
    assert report["control"]["too_easy"] is False


def test_mutate_control_failing_trace_exit_2(cli: Any, tmp_path: Path) -> None:
    """Point 56: a `--control` that T does not pass is exit 2, nothing on stdout."""
    control = {"version": 2, "name": "ctl", "rules": [{"id": "st", "kind": "run_status", "equals": "failed"}]}
    (tmp_path / "ctl.json").write_text(json.dumps(control), encoding="utf-8")
    code, report, stderr = _mutate(cli, tmp_path, [BOUND], REFUND_TRACE, "--control", "ctl.json")
    assert (code, report) == (2, {}) and "st" in stderr


def test_mutate_control_invalid_exit_2(cli: Any, tmp_path: Path) -> None:
    """Point 56: an invalid control is exit 2."""
    (tmp_path / "ctl.json").write_text("{", encoding="utf-8")
    assert _mutate(cli, tmp_path, [BOUND], REFUND_TRACE, "--control", "ctl.json")[:2] == (2, {})


def test_mutate_empty_corpus_no_false_positive(cli: Any, tmp_path: Path) -> None:
    """Point 65: an empty `--corpus` folder adds no rewrite; false_positives stays empty."""
    (tmp_path / "corpus").mkdir()
    code, report, _ = _mutate(cli, tmp_path, [BOUND], REFUND_TRACE, "--corpus", "corpus", "--fail-on-fp")
    assert (code, report["false_positives"]) == (0, [])


def test_mutate_corpus_failure_is_false_positive(cli: Any, tmp_path: Path) -> None:
    """Point 65: each failing corpus file is `{rewrite: corpus, file, killed_by}`; exit 0, 1 with --fail-on-fp."""
    (tmp_path / "corpus").mkdir()
    _write_jsonl(tmp_path / "corpus" / "b.jsonl", REFUND_TRACE[1:])
    _write_jsonl(tmp_path / "corpus" / "a.jsonl", REFUND_TRACE)
    (tmp_path / "corpus" / "ignored.txt").write_text("not a trace", encoding="utf-8")
    code, report, _ = _mutate(cli, tmp_path, [BOUND], REFUND_TRACE, "--corpus", "corpus")
    assert code == 0
    (entry,) = report["false_positives"]
    assert entry["rewrite"] == "corpus" and entry["file"].endswith("b.jsonl") and entry["killed_by"] == ["bound"]
    assert _mutate(cli, tmp_path, [BOUND], REFUND_TRACE, "--corpus", "corpus", "--fail-on-fp")[0] == 1
    assert _mutate(cli, tmp_path, [BOUND], REFUND_TRACE, "--corpus", "corpus", "--fail-on-fp",
                   "--no-rewrite", "corpus")[0] == 0


def test_mutate_corpus_unreadable_file_is_bad_input(cli: Any, tmp_path: Path) -> None:
    """Point 65/66: a corpus `*.jsonl` that is not a trace cannot be checked; spec silent — treated as
    bad input (exit 2, no report) like an invalid trace (point 56)."""
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "bad.jsonl").write_text("{nope\n", encoding="utf-8")
    code, report, stderr = _mutate(cli, tmp_path, [BOUND], REFUND_TRACE, "--corpus", "corpus")
    assert (code, report) == (2, {}) and "bad.jsonl" in stderr


def test_mutate_heartbeat_false_positive_on_max_events(cli: Any, tmp_path: Path) -> None:
    """§6: a failure 'names the rule responsible, typically within_events or max_events'."""
    rules = [BOUND, {"id": "budget", "kind": "event_budget", "max_events": 4}]
    code, report, _ = _mutate(cli, tmp_path, rules, REFUND_TRACE)
    assert code == 0
    assert {"rewrite": "heartbeat", "killed_by": ["budget"]} in report["false_positives"]
    assert _mutate(cli, tmp_path, rules, REFUND_TRACE, "--fail-on-fp")[0] == 1
    assert _mutate(cli, tmp_path, rules, REFUND_TRACE, "--fail-on-fp", "--no-rewrite", "heartbeat")[0] == 0


def test_mutate_killed_by_in_contract_order(cli: Any, tmp_path: Path) -> None:
    """Point 63: `killed_by`: the error rule ids in contract order."""
    rules = [{"id": "z-calls", "kind": "tool_calls", "tool": "refund", "min": 1}, BOUND]
    _, report, _ = _mutate(cli, tmp_path, rules, REFUND_TRACE)
    by_id = {m["id"]: m for m in report["mutants"]}
    assert by_id["drop_call:20"]["killed_by"] == ["z-calls"]
    assert by_id["drop_approval:10"]["killed_by"] == ["bound"]


def test_mutate_warned_survivor(cli: Any, tmp_path: Path) -> None:
    """Point 63: a survived mutant with warnings has `warned: true` and counts in `warned`."""
    rules = [BOUND, {"id": "calls", "kind": "tool_calls", "tool": "refund", "min": 1, "severity": "warning"}]
    _, report, _ = _mutate(cli, tmp_path, rules, REFUND_TRACE)
    by_id = {m["id"]: m for m in report["mutants"]}
    assert by_id["drop_call:20"]["status"] == "survived" and by_id["drop_call:20"].get("warned") is True
    assert report["warned"] == 1


def test_mutate_show_mutant_renumbers_seq(cli: Any, tmp_path: Path) -> None:
    """§6 / point 59: every mutant gets seq 10, 20, … by position; the id keeps the input seq."""
    write_contract(tmp_path, [BOUND])
    trace = [{**e, "seq": e["seq"] // 10} for e in REFUND_TRACE]  # seqs 1..4
    _write_jsonl(tmp_path / "t.jsonl", trace)
    result = cli("mutate", "-c", "c.json", "-t", "t.jsonl", "--show-mutant", "drop_approval:1")
    events = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    assert result.returncode == 0
    assert [(e["seq"], e["type"]) for e in events] == [(10, "tool.call"), (20, "tool.result"), (30, "run.completed")]


def test_mutate_inflate_retries_shape(cli: Any, tmp_path: Path) -> None:
    """Point 60: three failed copies `<id>~m1..~m3` directly before the call."""
    write_contract(tmp_path, [BOUND])
    _write_jsonl(tmp_path / "t.jsonl", REFUND_TRACE)
    result = cli("mutate", "-c", "c.json", "-t", "t.jsonl", "--show-mutant", "inflate_retries:20")
    events = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    assert [(e["type"], e.get("call_id"), e.get("ok")) for e in events[1:8]] == [
        ("tool.call", "c1~m1", None), ("tool.result", "c1~m1", False),
        ("tool.call", "c1~m2", None), ("tool.result", "c1~m2", False),
        ("tool.call", "c1~m3", None), ("tool.result", "c1~m3", False),
        ("tool.call", "c1", None)]
    assert [e["seq"] for e in events] == [10 * (i + 1) for i in range(len(events))]


def test_mutate_change_arg_uses_seen_value(cli: Any, tmp_path: Path) -> None:
    """Point 58: change_arg takes the first differing same-type value seen in call args / results."""
    trace = [{"seq": 1, "type": "tool.call", "tool": "get", "call_id": "g", "args": {"id": "A1"}},
             {"seq": 2, "type": "tool.result", "call_id": "g", "ok": True, "result": {"n": 7, "s": "B2"}},
             {"seq": 3, "type": "tool.call", "tool": "put", "call_id": "p", "args": {"id": "A1", "n": 7}},
             {"seq": 4, "type": "run.completed"}]
    write_contract(tmp_path, [{"id": "no-x", "kind": "deny_tool", "tool": "x"}])
    _write_jsonl(tmp_path / "t.jsonl", trace)
    shown = cli("mutate", "-c", "c.json", "-t", "t.jsonl", "--show-mutant", "change_arg:3:/id")
    events = [json.loads(line) for line in shown.stdout.splitlines() if line.strip()]
    assert events[2]["args"] == {"id": "B2", "n": 7}
    shown = cli("mutate", "-c", "c.json", "-t", "t.jsonl", "--show-mutant", "change_arg:3:/n")
    events = [json.loads(line) for line in shown.stdout.splitlines() if line.strip()]
    assert events[2]["args"] == {"id": "A1", "n": 8}


def test_mutate_equivalent_swap_of_reads(cli: Any, tmp_path: Path) -> None:
    """§6: 'Declaring read-only tools lets swaps of independent reads count as equivalent.'"""
    trace = [{"seq": 1, "type": "tool.call", "tool": "a", "call_id": "1", "args": {}},
             {"seq": 2, "type": "tool.result", "call_id": "1", "ok": True},
             {"seq": 3, "type": "tool.call", "tool": "b", "call_id": "2", "args": {}},
             {"seq": 4, "type": "tool.result", "call_id": "2", "ok": True},
             {"seq": 5, "type": "run.completed"}]
    rules = [{"id": "order", "kind": "tool_order", "tools": ["a", "b"]}]
    _, report, _ = _mutate(cli, tmp_path, rules, trace)
    swap = {m["id"]: m for m in report["mutants"]}["swap_calls:1"]
    assert (swap["status"], swap["killed_by"]) == ("killed", ["order"])
    _, report, _ = _mutate(cli, tmp_path, rules, trace, "--reads", "*")
    swap = {m["id"]: m for m in report["mutants"]}["swap_calls:1"]
    assert swap["status"] == "equivalent" and swap.get("over_block") is True
    assert report["over_block"] == 1


def test_mutate_drop_event_of_message_not_equivalent(cli: Any, tmp_path: Path) -> None:
    """Point 62 (5): dropping an agent.message changes the fingerprint; require_event kills it."""
    trace = [{"seq": 1, "type": "agent.message"}, {"seq": 2, "type": "run.completed"}]
    rules = [{"id": "msg", "kind": "require_event", "match": {"type": "agent.message"}}]
    _, report, _ = _mutate(cli, tmp_path, rules, trace)
    assert {m["id"]: m["status"] for m in report["mutants"]}["drop_event:1"] == "killed"


def test_mutate_degrade_outcome_ids(cli: Any, tmp_path: Path) -> None:
    """Point 57/61: degrade_outcome gives `verdict` before `evidence_class`, after drop_outcome."""
    trace = [{"seq": 1, "type": "outcome.observed", "outcome_id": "o", "verdict": "satisfied",
              "evidence_class": "configured_verifier"},
             {"seq": 2, "type": "run.completed"}]
    _, report, _ = _mutate(cli, tmp_path, [{"id": "no-x", "kind": "deny_tool", "tool": "x"}], trace)
    assert [m["id"] for m in report["mutants"]] == [
        "drop_outcome:1", "degrade_outcome:1:verdict", "degrade_outcome:1:evidence_class", "drop_event:2"]


def test_mutate_misreport_output_sites(cli: Any, tmp_path: Path) -> None:
    """Point 57/58/61: misreport_output on every non-object, non-null, non-empty-array node, document order."""
    trace = [{"seq": 1, "type": "run.completed", "output": {"xs": [1], "ok": True, "e": [], "n": None, "s": "a"}}]
    _, report, _ = _mutate(cli, tmp_path, [{"id": "no-x", "kind": "deny_tool", "tool": "x"}], trace)
    ids = [m["id"] for m in report["mutants"]]
    assert ids == ["drop_event:1", "misreport_output:1:/xs", "misreport_output:1:/xs/0",
                   "misreport_output:1:/ok", "misreport_output:1:/s"]


# == more corners ===================================================================================


def test_lint_r_from_tool_order_occurrences(cli: Any, tmp_path: Path) -> None:
    """Point 38: R(t) counts 'the number of entries equal to t in one tool_order (any mode)';
    [a, b, a] needs 2 calls of a, above `max: 1`. Point 49: pointer is the bound's field."""
    rules = [{"id": "flow", "kind": "tool_order", "tools": ["a", "b", "a"]},
             {"id": "cap", "kind": "tool_calls", "tool": "a", "max": 1}]
    code, report = _lint(cli, tmp_path, rules)
    assert (code, _findings(report)) == (1, [("count_contradiction", "error", ["flow", "cap"], "/rules/1/max")])


def test_lint_require_event_max_type_glob_covers_every_tool(cli: Any, tmp_path: Path) -> None:
    """Point 39: a require_event.max whose matcher has only `type` (a glob matching tool.call) covers
    every tool: R(a) + R(b) = 2 > 1."""
    rules = [{"id": "cap", "kind": "require_event", "match": {"type": "tool.*"}, "min": 0, "max": 1},
             {"id": "na", "kind": "tool_calls", "tool": "a", "min": 1},
             {"id": "nb", "kind": "tool_calls", "tool": "b", "min": 1}]
    code, report = _lint(cli, tmp_path, rules)
    assert (code, _findings(report)) == (1, [("count_contradiction", "error", ["cap", "na", "nb"], "/rules/0/max")])


def test_lint_shadowed_event_budget_metric(cli: Any, tmp_path: Path) -> None:
    """§4 row: 'a smaller max on the same ... metric' (event_budget)."""
    rules = [{"id": "b1", "kind": "event_budget", "max_events": 5},
             {"id": "b2", "kind": "event_budget", "max_events": 9}]
    assert _findings(_lint(cli, tmp_path, rules)[1]) == [("shadowed_rule", "warning", ["b1", "b2"],
                                                          "/rules/1/max_events")]


def test_lint_duplicate_lists_keep_order(cli: Any, tmp_path: Path) -> None:
    """Point 44: 'lists keep their order' — [a, b] and [b, a] are not duplicates."""
    rules = [{"id": "a1", "kind": "allow_tools", "tools": ["a", "b"]},
             {"id": "a2", "kind": "allow_tools", "tools": ["b", "a"]}]
    code, report = _lint(cli, tmp_path, rules)
    assert (code, report["findings"]) == (0, [])


def test_lint_unschemaed_nested_and_length_paths(cli: Any, tmp_path: Path) -> None:
    """Point 46: nested any_of condition paths and matches_output_length paths; a required parent
    does not require its child."""
    rules = [{"id": "sh", "kind": "output_schema",
              "schema": {"type": "object", "required": ["a"],
                         "properties": {"a": {"type": "object", "properties": {"b": {}}}, "xs": {"type": "array"}}}},
             {"id": "rw", "kind": "required_when", "tool": "t",
              "when": {"any_of": [{"path": "a.b", "equals": 1}, {"path": "a", "non_empty": True}]}},
             {"id": "len", "kind": "tool_calls", "tool": "t", "matches_output_length": "xs"}]
    _, report = _lint(cli, tmp_path, rules)
    assert _findings(report) == [("unschemaed_read", "warning", ["rw"], "/rules/1/when/any_of/0/path"),
                                 ("unschemaed_read", "warning", ["len"], "/rules/2/matches_output_length")]


def test_lint_unschemaed_min_items_and_ref(cli: Any, tmp_path: Path) -> None:
    """Point 46: a numeric segment needs `minItems` > index; local `$ref`s are followed."""
    schema = {"type": "object", "required": ["xs"],
              "properties": {"xs": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/it"}}},
              "$defs": {"it": {"type": "object", "required": ["id"]}}}
    rules = [{"id": "sh", "kind": "output_schema", "schema": schema},
             {"id": "rw", "kind": "required_when", "tool": "t", "when": {"path": "xs.0.id", "equals": 1}},
             {"id": "rw2", "kind": "required_when", "tool": "t", "when": {"path": "xs.1.id", "equals": 1}}]
    _, report = _lint(cli, tmp_path, rules)
    assert _findings(report) == [("unschemaed_read", "warning", ["rw2"], "/rules/2/when/path")]


def test_lint_sarif_warning_level(cli: Any, tmp_path: Path) -> None:
    """Point 50: SARIF results carry the finding's level."""
    write_contract(tmp_path, [{"id": "all", "kind": "allow_tools", "tools": ["*"]}])
    result = cli("lint", "--contract", "c.json", "--format", "sarif")
    (only,) = json.loads(result.stdout)["runs"][0]["results"]
    assert (result.returncode, only["ruleId"], only["level"]) == (0, "v1_trap", "warning")


def test_lint_contract_from_stdin(cli: Any, tmp_path: Path) -> None:
    """Point 50 (and `--help`): the contract may come on stdin; same findings and exit."""
    document = json.dumps({"version": 2, "name": "spec", "rules": SHELL_PAIR})
    result = cli("lint", "--contract", "-", "--format", "json", stdin=document)
    assert result.returncode == 1 and _codes(json.loads(result.stdout)) == ["required_but_forbidden"]


def test_stability_sha_is_rfc8785(cli: Any, tmp_path: Path) -> None:
    """Point 55: `output_sha256` is the hex SHA-256 of the RFC 8785 output (1.0 → 1, 1e21 → 1e+21,
    keys sorted); `-` reads one trace from stdin."""
    line = '{"seq":1,"type":"run.completed","output":{"b":1.0,"a":1e21,"\\u00e9":"x","Z":[]}}\n'
    (tmp_path / "a.jsonl").write_text(line, encoding="utf-8")
    result = cli("stability", "a.jsonl", "-", "--format", "json", stdin=line)
    report = json.loads(result.stdout)
    expected = hashlib.sha256('{"Z":[],"a":1e+21,"b":1,"é":"x"}'.encode()).hexdigest()
    assert result.returncode == 0
    assert [(r["trace"], r["output_sha256"]) for r in report["runs"]] == [("a.jsonl", expected), ("-", expected)]


def test_stability_malformed_ignore_is_bad_input(cli: Any, tmp_path: Path) -> None:
    """Point 51: `--ignore` takes the path notation; `a[` is not a path (spec silent: exit 2, no report)."""
    code, report, stderr = _stability(cli, tmp_path, [{"a": 1}, {"a": 1}], "--ignore", "a[")
    assert (code, report) == (2, {}) and "a[" in stderr


def test_stability_text_not_measured(cli: Any, tmp_path: Path) -> None:
    """Point 55: not measured is still printed (text too) with exit 2."""
    _write_jsonl(tmp_path / "a.jsonl", _run({"x": 1}))
    result = cli("stability", "a.jsonl")
    assert result.returncode == 2 and "NOT MEASURED" in result.stdout.upper()


def test_mutate_every_operator_site_order(cli: Any, tmp_path: Path) -> None:
    """Points 57 and 61: sites and id order over a trace that offers almost every operator."""
    trace: list[Rule] = [
        {"seq": 1, "type": "approval.granted", "tool": "refund", "call_id": "c1", "approval_id": "g1",
         "args": {"order": "A1", "n": 2}},
        {"seq": 2, "type": "tool.call", "tool": "get", "call_id": "c0", "args": {}},
        {"seq": 3, "type": "tool.result", "call_id": "c0", "ok": True, "result": 1, "duration_ms": 5},
        {"seq": 4, "type": "tool.call", "tool": "refund", "call_id": "c1", "approval_id": "g1",
         "args": {"order": "A1", "n": 2}},
        {"seq": 5, "type": "tool.result", "call_id": "c1", "ok": True, "result": {"a": 1}},
        {"seq": 6, "type": "tool.call", "tool": "refund", "call_id": "c2", "args": {"order": "A1", "n": 2}},
        {"seq": 7, "type": "tool.result", "call_id": "c2", "ok": True, "result": {"a": 2}},
        {"seq": 8, "type": "control.stop"},
        {"seq": 9, "type": "run.completed", "output": 7}]
    _, report, _ = _mutate(cli, tmp_path, [{"id": "no-x", "kind": "deny_tool", "tool": "x"}], trace)
    assert [m["id"] for m in report["mutants"]] == [
        "drop_approval:1", "move_approval_after:1", "rebind_approval:1:call_id", "rebind_approval:1:/order",
        "rebind_approval:1:/n",
        "drop_call:2", "swap_calls:2", "duplicate_call:2", "inflate_retries:2",
        "flip_ok:3", "inflate_duration:3",
        "drop_call:4", "change_arg:4:/order", "change_arg:4:/n", "duplicate_call:4", "inflate_retries:4",
        "flip_ok:5",
        "drop_call:6", "change_arg:6:/order", "change_arg:6:/n", "duplicate_call:6", "inflate_retries:6",
        "flip_ok:7", "stale_result:7",
        "drop_event:8", "stop_earlier:8",
        "drop_event:9", "misreport_output:9"]
    assert {m["status"] for m in report["mutants"]} == {"survived"}


def test_mutate_moving_operators_keep_times(cli: Any, tmp_path: Path) -> None:
    """Point 59: swap_calls moves content but times stay by position; duplicate_call copies the time of
    the event before; drop keeps each remaining event's own time."""
    trace = [{"seq": 1, "type": "tool.call", "tool": "a", "call_id": "1", "args": {}, "time": "2025-01-01T00:00:01Z"},
             {"seq": 2, "type": "tool.result", "call_id": "1", "ok": True, "time": "2025-01-01T00:00:02Z"},
             {"seq": 3, "type": "tool.call", "tool": "b", "call_id": "2", "args": {}, "time": "2025-01-01T00:00:03Z"},
             {"seq": 4, "type": "tool.result", "call_id": "2", "ok": True, "time": "2025-01-01T00:00:04Z"}]
    write_contract(tmp_path, [{"id": "no-x", "kind": "deny_tool", "tool": "x"}])
    _write_jsonl(tmp_path / "t.jsonl", trace)

    def show(mutant: str) -> list[tuple[Any, ...]]:
        out = cli("mutate", "-c", "c.json", "-t", "t.jsonl", "--show-mutant", mutant).stdout
        return [(e["seq"], e.get("tool"), e["call_id"], e["time"][-2:]) for e in map(json.loads, out.splitlines())]

    assert show("swap_calls:1") == [(10, "b", "2", "1Z"), (20, None, "2", "2Z"), (30, "a", "1", "3Z"),
                                    (40, None, "1", "4Z")]
    assert show("duplicate_call:1") == [(10, "a", "1", "1Z"), (20, None, "1", "2Z"), (30, "a", "1~m", "2Z"),
                                        (40, None, "1~m", "2Z"), (50, "b", "2", "3Z"), (60, None, "2", "4Z")]
    assert show("drop_call:1") == [(10, "b", "2", "3Z"), (20, None, "2", "4Z")]


def test_mutate_jobs_do_not_change_report(cli: Any, tmp_path: Path,
                                          refund_run: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    """§6: generation and classification are deterministic — `--jobs 2` gives the same bytes."""
    write_contract(tmp_path, [BOUND])
    _write_jsonl(tmp_path / "t.jsonl", REFUND_TRACE)
    two = cli("mutate", "-c", "c.json", "-t", "t.jsonl", "--format", "json", "--jobs", "2")
    assert two.returncode == 0 and two.stdout == refund_run[1].stdout


def test_mutate_max_mutants_above_n(cli: Any, tmp_path: Path) -> None:
    """Point 61: a cap above N keeps every candidate."""
    _, report, _ = _mutate(cli, tmp_path, [BOUND], REFUND_TRACE, "--max-mutants", "500000")
    assert [m["id"] for m in report["mutants"]] == REFUND_IDS


def test_mutate_no_terminal_auto_control_status_none(cli: Any, tmp_path: Path) -> None:
    """Point 64: the auto control uses T's run status, `none` included, so it always passes T."""
    trace = [{"seq": 1, "type": "tool.call", "tool": "a", "call_id": "1", "args": {}},
             {"seq": 2, "type": "tool.result", "call_id": "1", "ok": True}]
    code, report, _ = _mutate(cli, tmp_path, [{"id": "no-x", "kind": "deny_tool", "tool": "x"}], trace)
    assert code == 0 and report["control"]["auto"] is True
    # drop_call:1 leaves no call of `a`, which control.calls.1 (tool_calls a min 1) kills.
    assert report["control"]["killed"] >= 1


def test_dead_rule_deny_star_kills_defaulted_tool(cli: Any, tmp_path: Path) -> None:
    """Point 43: failure_handled's tool defaults to `*`; deny_tool `*` subsumes it. Point 49: the
    pointer is into the contract, so a tool left out is pointed at by its rule."""
    rules = [{"id": "d", "kind": "deny_tool", "tool": "*"},
             {"id": "fh", "kind": "failure_handled", "within_events": 2}]
    assert _findings(_lint(cli, tmp_path, rules)[1]) == [("dead_rule", "warning", ["d", "fh"], "/rules/1")]


def test_dead_rule_deny_tool_under_allow_tools(cli: Any, tmp_path: Path) -> None:
    """Point 43: deny_tool is a dead rule under an allow_tools that lets none of its tools through."""
    rules = [{"id": "al", "kind": "allow_tools", "tools": ["read.*"]},
             {"id": "d", "kind": "deny_tool", "tool": "mail.*"}]
    assert _findings(_lint(cli, tmp_path, rules)[1]) == [("dead_rule", "warning", ["al", "d"], "/rules/1/tool")]


def test_dead_rule_tool_calls_max_only_vs_min(cli: Any, tmp_path: Path) -> None:
    """Point 43: 'tool_calls with max only' can be dead; one that also sets `min` is not."""
    rules: list[Rule] = [{"id": "d", "kind": "deny_tool", "tool": "mail.*"},
                         {"id": "c", "kind": "tool_calls", "tool": "mail.send", "max": 3}]
    assert _codes(_lint(cli, tmp_path, rules)[1]) == ["dead_rule"]
    rules[1]["min"] = 0
    assert _codes(_lint(cli, tmp_path, rules)[1]) == []


def test_self_precedence_normalised_matchers(cli: Any, tmp_path: Path) -> None:
    """Point 42: matchers are compared normalised, key by key (trimmed glob, any key order)."""
    rules = [{"id": "p", "kind": "precedence", "before": {"type": "tool.call", "tool": " x "},
              "after": {"tool": "x", "type": "tool.call"}},
             {"id": "need", "kind": "tool_calls", "tool": "x", "min": 1}]
    code, report = _lint(cli, tmp_path, rules)
    assert code == 1 and [(c, lv) for c, lv, _, _ in _findings(report)] == [("self_precedence", "error")]


def test_reference_to_forbidden_cap_zero_call_index_subject(cli: Any, tmp_path: Path) -> None:
    """Point 42: a literal glob covered by a bound of 0 is forbidden; call_index makes R(subject) ≥ 1."""
    rules = [{"id": "cap", "kind": "tool_calls", "tool": "get", "max": 0},
             {"id": "ta", "kind": "tool_args", "tool": "refund", "call_index": 0,
              "match": {"a": {"$from_result": {"tool": "get"}}}}]
    code, report = _lint(cli, tmp_path, rules)
    assert code == 1 and [(c, lv, ids) for c, lv, ids, _ in _findings(report)] == [
        ("reference_to_forbidden", "error", ["cap", "ta"])]


def test_count_contradiction_one_finding_per_bound(cli: Any, tmp_path: Path) -> None:
    """Point 40: 'one finding per bound ≥ 1' — two metrics of one event_budget give two findings,
    ordered by pointer (point 49)."""
    rules = [{"id": "b", "kind": "event_budget", "max_tool_calls": 1, "max_events": 1},
             {"id": "na", "kind": "tool_calls", "tool": "a", "min": 2}]
    assert _findings(_lint(cli, tmp_path, rules)[1]) == [
        ("count_contradiction", "error", ["b", "na"], "/rules/0/max_events"),
        ("count_contradiction", "error", ["b", "na"], "/rules/0/max_tool_calls")]


def test_unrequired_subject_kinds(cli: Any, tmp_path: Path) -> None:
    """Point 48: approval_bound and result_size warn; latency_budget *with* percentile does not."""
    rules = [{"id": "ab", "kind": "approval_bound", "tool": "refund"},
             {"id": "ls", "kind": "latency_budget", "tool": "x", "max_ms": 5, "percentile": 90},
             {"id": "rs", "kind": "result_size", "tool": "y", "max_bytes": 5}]
    assert _findings(_lint(cli, tmp_path, rules)[1]) == [("unrequired_subject", "warning", ["ab"], "/rules/0"),
                                                         ("unrequired_subject", "warning", ["rs"], "/rules/2")]


def test_stability_parent_type_change_absent_below(cli: Any, tmp_path: Path) -> None:
    """Point 52: `a.b` is absent-here under `{}` and absent-below under a number; `absent_in` lists both."""
    code, report, _ = _stability(cli, tmp_path, [{"a": {"b": 1}}, {"a": 5}, {"a": {}}])
    assert code == 1
    assert report["unstable"] == [
        {"path": "a", "kind": "type", "present_in": [0, 1, 2], "absent_in": [], "unknown_in": [],
         "types": [["object"], ["number"], ["object"]]},
        {"path": "a.b", "kind": "presence", "present_in": [0], "absent_in": [1, 2], "unknown_in": [],
         "types": [["number"], [], []]}]


def test_mutate_flip_ok_absent_and_stop_without_earlier_call(cli: Any, tmp_path: Path) -> None:
    """Point 57: flip_ok turns an absent `ok` into false; stop_earlier needs an earlier tool.call."""
    trace = [{"seq": 1, "type": "control.stop"},
             {"seq": 2, "type": "tool.call", "tool": "a", "call_id": "1", "args": {}},
             {"seq": 3, "type": "tool.result", "call_id": "1"}]
    _, report, _ = _mutate(cli, tmp_path, [{"id": "no-x", "kind": "deny_tool", "tool": "x"}], trace)
    assert [m["id"] for m in report["mutants"]] == [
        "drop_event:1", "drop_call:2", "duplicate_call:2", "inflate_retries:2", "flip_ok:3"]
    shown = cli("mutate", "-c", "c.json", "-t", "t.jsonl", "--show-mutant", "flip_ok:3").stdout
    assert json.loads(shown.splitlines()[2])["ok"] is False


def test_mutate_missing_corpus_folder_exit_2(cli: Any, tmp_path: Path) -> None:
    """Point 56: bad input is exit 2 with nothing on stdout — a `--corpus` folder that does not exist."""
    code, report, stderr = _mutate(cli, tmp_path, [BOUND], REFUND_TRACE, "--corpus", "nowhere")
    assert (code, report) == (2, {}) and "nowhere" in stderr


def test_mutate_corpus_json_array_file(cli: Any, tmp_path: Path) -> None:
    """Point 65: corpus takes `*.json` files too (a trace as one JSON array)."""
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "arr.json").write_text(json.dumps(REFUND_TRACE[1:]), encoding="utf-8")
    _, report, _ = _mutate(cli, tmp_path, [BOUND], REFUND_TRACE, "--corpus", "corpus")
    assert [(fp["rewrite"], Path(fp["file"]).name, fp["killed_by"]) for fp in report["false_positives"]] == [
        ("corpus", "arr.json", ["bound"])]


def test_check_lint_refusal_line_format(cli: Any, tmp_path: Path) -> None:
    """Point 8: 'reported like a contract error (`file: $.rules[i]: lint <code>: …`, exit 2)'."""
    write_contract(tmp_path, SHELL_PAIR)
    _write_jsonl(tmp_path / "t.jsonl", PASSING_TRACE)
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl")
    (line,) = result.stderr.splitlines()
    assert result.returncode == 2 and "c.json" in line and "$.rules[" in line
    assert ": lint required_but_forbidden: " in line


def test_stability_invalid_contract_exit_2(cli: Any, tmp_path: Path) -> None:
    """Point 55: an invalid contract is exit 2 with nothing on stdout."""
    write_contract(tmp_path, [{"id": "x", "kind": "deny_tool"}])
    _write_jsonl(tmp_path / "a.jsonl", _run({"x": 1}))
    _write_jsonl(tmp_path / "b.jsonl", _run({"x": 1}))
    result = cli("stability", "a.jsonl", "b.jsonl", "--contract", "c.json", "--format", "json")
    assert (result.returncode, result.stdout) == (2, "")


def test_interface_empty_when_nothing_read(cli: Any, tmp_path: Path) -> None:
    """Point 46: `--interface` adds `interface` even when the contract reads no output path."""
    code, report = _lint(cli, tmp_path, [{"id": "x", "kind": "deny_tool", "tool": "x"}], "--interface")
    assert (code, report["interface"], report["findings"]) == (0, [], [])
