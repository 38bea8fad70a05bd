"""`lint` read a second time from the spec alone: spec v2 §4 (every code of its table, the levels,
`--strict`, `--interface`, the glob algebra, R(t)) and §10 points 8 and 37-50 (what lint reads,
literal tools, what a bound covers, each code's conditions, rule_ids, pointers, finding order, the
report, the text and SARIF renderings, exit codes), plus `check`/`compare` refusing a version-2
contract with lint errors.

Every case runs the CLI on a contract file; the expected findings come from the spec's words."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from support import refused_line, write_contract, write_trace

Rule = dict[str, Any]
Finding = tuple[str, str, list[str], str]

# -- rule builders ----------------------------------------------------------------------------------


def deny(rid: str, tool: str, **extra: Any) -> Rule:
    return {"id": rid, "kind": "deny_tool", "tool": tool, **extra}


def allow(rid: str, *tools: str, **extra: Any) -> Rule:
    return {"id": rid, "kind": "allow_tools", "tools": list(tools), **extra}


def calls(rid: str, tool: str, **extra: Any) -> Rule:
    return {"id": rid, "kind": "tool_calls", "tool": tool, **extra}


def order(rid: str, *tools: str, **extra: Any) -> Rule:
    return {"id": rid, "kind": "tool_order", "tools": list(tools), **extra}


def need(rid: str, match: dict[str, Any], **extra: Any) -> Rule:
    return {"id": rid, "kind": "require_event", "match": match, **extra}


def call(tool: str, **extra: Any) -> dict[str, Any]:
    """A matcher of calls of `tool`."""
    return {"type": "tool.call", "tool": tool, **extra}


def prec(rid: str, before: str, after: str, kind: str = "precedence", **extra: Any) -> Rule:
    return {"id": rid, "kind": kind, "before": call(before), "after": call(after), **extra}


def args(rid: str, tool: str, match: Any = None, **extra: Any) -> Rule:
    return {"id": rid, "kind": "tool_args", "tool": tool, "match": {"a": 1} if match is None else match, **extra}


def from_result(tool: str) -> dict[str, Any]:
    return {"$from_result": {"tool": tool}}


def budget(rid: str, **bounds: int) -> Rule:
    return {"id": rid, "kind": "event_budget", **bounds}


def when_rule(rid: str, when: dict[str, Any]) -> Rule:
    return {"id": rid, "kind": "required_when", "tool": "x", "when": when}


def schema_rule(schema: dict[str, Any]) -> Rule:
    return {"id": "os", "kind": "output_schema", "schema": schema}


OUTCOME = {"outcome": {"outcome_id": "o", "verdict": "satisfied"}}

# -- running lint -----------------------------------------------------------------------------------


def lint(cli: Cli, tmp_path: Path, rules: list[Rule], *options: str, version: int = 2) -> tuple[int, dict[str, Any]]:
    """`lint --format json` of a contract holding `rules`: (exit code, report)."""
    write_contract(tmp_path, rules, version)
    result = cli("lint", "--contract", "c.json", "--format", "json", *options)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


def findings(report: dict[str, Any], code: str | None = None) -> list[Finding]:
    return [(f["code"], f["level"], f["rule_ids"], f["pointer"])
            for f in report["findings"] if code is None or f["code"] == code]


def only(cli: Cli, tmp_path: Path, rules: list[Rule], code: str) -> list[Finding]:
    """The findings of one code."""
    return findings(lint(cli, tmp_path, rules)[1], code)


# == §4 example, report, renderings and exit codes (points 37, 50) =================================

EXAMPLE = [deny("no-shell", "shell.*"), calls("must-exec", "shell.exec", min=1)]


def test_example_text_line(cli: Cli, tmp_path: Path) -> None:
    """§4: `deny_tool shell.*` with `tool_calls {tool:"shell.exec", min:1}` gives `error
    required_but_forbidden [no-shell, must-exec] /rules/1/tool`; point 50: text prints
    `<level> <code> [<ids>] <pointer>: <message>` per finding and a count line; exit 1 on an error."""
    write_contract(tmp_path, EXAMPLE)
    result = cli("lint", "--contract", "c.json")
    lines = result.stdout.splitlines()
    assert result.returncode == 1
    assert len(lines) == 2, lines
    assert lines[0].startswith("error required_but_forbidden [no-shell, must-exec] /rules/1/tool: ")
    assert len(lines[0]) > len("error required_but_forbidden [no-shell, must-exec] /rules/1/tool: ")


@pytest.mark.parametrize("kept", [0, 1])
def test_example_without_either_rule_exits_0(cli: Cli, tmp_path: Path, kept: int) -> None:
    """§4: "Without either rule, lint exits 0"."""
    code, report = lint(cli, tmp_path, [EXAMPLE[kept]])
    assert (code, findings(report)) == (0, [])


def test_json_report_shape(cli: Cli, tmp_path: Path) -> None:
    """Point 50: `{schema: "agent-invariants/lint/v1", contract: {name, version}, errors, warnings,
    findings: [{code, level, rule_ids, pointer, message}]}` (`interface` only with --interface)."""
    code, report = lint(cli, tmp_path, EXAMPLE)
    assert code == 1
    assert set(report) == {"schema", "contract", "errors", "warnings", "findings"}
    assert report["schema"] == "agent-invariants/lint/v1"
    assert report["contract"] == {"name": "spec", "version": 2}
    assert (report["errors"], report["warnings"]) == (1, 0)
    [finding] = report["findings"]
    assert set(finding) == {"code", "level", "rule_ids", "pointer", "message"}
    assert (finding["code"], finding["level"], finding["rule_ids"], finding["pointer"]) == (
        "required_but_forbidden", "error", ["no-shell", "must-exec"], "/rules/1/tool")
    assert isinstance(finding["message"], str) and finding["message"]


def test_counts_errors_and_warnings(cli: Cli, tmp_path: Path) -> None:
    """Point 50: `errors` and `warnings` count the findings of each level."""
    rules = [*EXAMPLE, deny("d1", "z"), deny("d2", "z"), {"id": "ra", "kind": "require_approval", "tool": "q",
                                                          "scope": "s"}]
    code, report = lint(cli, tmp_path, rules)
    levels = [f["level"] for f in report["findings"]]
    assert code == 1
    assert (report["errors"], report["warnings"]) == (levels.count("error"), levels.count("warning")) == (1, 2)


@pytest.mark.parametrize("options", [(), ("--strict",), ("--format", "json"), ("--interface",)])
def test_invalid_contract_exit_2_nothing_on_stdout(cli: Cli, tmp_path: Path, options: tuple[str, ...]) -> None:
    """§4: lint exits 2 on an invalid contract; point 50: with nothing on stdout."""
    write_contract(tmp_path, [deny("d", "x", bogus=1)])
    result = cli("lint", "--contract", "c.json", *options)
    assert (result.returncode, result.stdout) == (2, "")
    assert "c.json" in result.stderr


def test_invalid_v2_reference_is_exit_2(cli: Cli, tmp_path: Path) -> None:
    """§2: `$from_output` in an output rule is a load error, so lint exits 2 (point 50)."""
    write_contract(tmp_path, [{"id": "om", "kind": "output_match", "match": {"a": {"$from_output": "b"}}}])
    result = cli("lint", "--contract", "c.json")
    assert (result.returncode, result.stdout) == (2, "")


def test_missing_contract_file_is_exit_2(cli: Cli) -> None:
    """Point 50: an unreadable contract is exit 2 with nothing on stdout."""
    result = cli("lint", "--contract", "absent.json")
    assert (result.returncode, result.stdout) == (2, "")


WARNING_ONLY = [deny("d1", "z"), deny("d2", "z")]


def test_warnings_alone_exit_0(cli: Cli, tmp_path: Path) -> None:
    """§4: lint exits 1 on errors (on warnings only with --strict), 0 otherwise."""
    code, report = lint(cli, tmp_path, WARNING_ONLY)
    assert (code, report["errors"], report["warnings"]) == (0, 0, 1)


def test_strict_exits_1_on_warnings(cli: Cli, tmp_path: Path) -> None:
    """§4 / point 50: with `--strict`, exit 1 when there is any finding."""
    code, report = lint(cli, tmp_path, WARNING_ONLY, "--strict")
    assert (code, report["warnings"]) == (1, 1)


def test_strict_without_findings_exits_0(cli: Cli, tmp_path: Path) -> None:
    """Point 50: else 0, --strict included."""
    code, report = lint(cli, tmp_path, [deny("d", "x")], "--strict")
    assert (code, findings(report)) == (0, [])


def test_strict_with_errors_exits_1(cli: Cli, tmp_path: Path) -> None:
    """Point 50: exit 1 when a finding has level error."""
    assert lint(cli, tmp_path, EXAMPLE, "--strict")[0] == 1


def test_no_interface_key_without_option(cli: Cli, tmp_path: Path) -> None:
    """Point 46: `--interface` *adds* `interface` to the report; point 50 marks it optional."""
    assert "interface" not in lint(cli, tmp_path, [when_rule("rw", {"path": "a", "equals": 1})])[1]


def test_interface_changes_neither_findings_nor_exit(cli: Cli, tmp_path: Path) -> None:
    """Point 46: `--interface` changes neither the findings nor the exit code."""
    rules = [*EXAMPLE, when_rule("rw", {"path": "a", "equals": 1})]
    plain_code, plain = lint(cli, tmp_path, rules)
    code, report = lint(cli, tmp_path, rules, "--interface")
    assert (code, report["findings"]) == (plain_code, plain["findings"])
    assert "interface" in report


def test_sarif_one_result_per_finding_at_pointer_line(cli: Cli, tmp_path: Path) -> None:
    """Point 50: SARIF has one result per finding with `ruleId` the code, its level, and a region at
    the contract file's line of the pointer (one reporting descriptor per code)."""
    rules = [deny("no-shell", "shell.*"), calls("must-exec", "shell.exec", min=1),
             calls("must-run", "shell.run", min=1), deny("d1", "z"), deny("d2", "z")]
    write_contract(tmp_path, rules)
    text = (tmp_path / "c.json").read_text(encoding="utf-8").splitlines()
    exec_line = next(i for i, line in enumerate(text, 1) if '"shell.exec"' in line)
    result = cli("lint", "--contract", "c.json", "--format", "sarif")
    assert result.returncode == 1
    [run] = json.loads(result.stdout)["runs"]
    got = [(r["ruleId"], r["level"]) for r in run["results"]]
    assert sorted(got) == sorted([("required_but_forbidden", "error")] * 2 + [("duplicate_rule", "warning")])
    first = next(r for r in run["results"] if r["ruleId"] == "required_but_forbidden")
    assert first["locations"][0]["physicalLocation"]["region"]["startLine"] == exec_line
    descriptors = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    assert sorted(descriptors) == ["duplicate_rule", "required_but_forbidden"]


def test_pointer_is_into_the_contract_after_extends(cli: Cli, tmp_path: Path) -> None:
    """Point 49: the pointer is RFC 6901 into the contract after `extends` (pack rules come first)."""
    pack = {"rules": [{"id": "p1", "kind": "deny_event", "match": {"type": "z"}}, deny("no-x", "x")]}
    (tmp_path / "pack.json").write_text(json.dumps(pack), encoding="utf-8")
    document = {"version": 2, "name": "spec", "extends": ["pack.json"], "rules": [calls("need-x", "x", min=1)]}
    (tmp_path / "c.json").write_text(json.dumps(document), encoding="utf-8")
    result = cli("lint", "--contract", "c.json", "--format", "json")
    assert result.returncode == 1, result.stderr
    assert findings(json.loads(result.stdout)) == [
        ("required_but_forbidden", "error", ["no-x", "need-x"], "/rules/2/tool")]


# == point 37: both versions; levels follow the severities ========================================


def test_lint_reads_version_1_contracts(cli: Cli, tmp_path: Path) -> None:
    """Point 37: `lint` accepts both versions and applies every code whose kinds occur, with the same
    exit codes (v1 require_order both ways, with a v1 require_event on a call)."""
    rules = [prec("ab", "a", "b", kind="require_order"), prec("ba", "b", "a", kind="require_order"),
             need("r", call("a"))]
    code, report = lint(cli, tmp_path, rules, version=1)
    assert code == 1
    assert report["contract"] == {"name": "spec", "version": 1}
    assert [f[:3] for f in findings(report, "order_contradiction")] == [("order_contradiction", "error", ["ab", "ba"])]


def test_version_1_v1_trap(cli: Cli, tmp_path: Path) -> None:
    """Point 37 with point 47: a version-1 `allow_tools ["*"]` gets its v1_trap warning."""
    code, report = lint(cli, tmp_path, [allow("al", "*")], version=1)
    assert (code, [f[:3] for f in findings(report)]) == (0, [("v1_trap", "warning", ["al"])])


@pytest.mark.parametrize("severities", [("warning", "error"), ("error", "warning"), ("warning", "warning")])
def test_error_condition_on_warning_rule_is_a_warning(cli: Cli, tmp_path: Path, severities: tuple[str, str]) -> None:
    """Point 37: an error-level condition is level `error` only when every rule it rests on (the one
    making the tool required included) has severity error; otherwise the same code at `warning`."""
    rules = [deny("no-shell", "shell.*", severity=severities[0]),
             calls("must-exec", "shell.exec", min=1, severity=severities[1])]
    code, report = lint(cli, tmp_path, rules)
    assert (code, findings(report)) == (
        0, [("required_but_forbidden", "warning", ["no-shell", "must-exec"], "/rules/1/tool")])


def test_error_when_it_holds_with_error_rules_alone(cli: Cli, tmp_path: Path) -> None:
    """Point 37: a count contradiction that holds without the warning-severity requirement stays an
    error (a needs 3 calls under a cap of 2; b's warning rule only adds to it)."""
    rules = [calls("cap", "*", max=2), calls("ra", "a", min=3), calls("rb", "b", min=1, severity="warning")]
    assert [f[:2] for f in only(cli, tmp_path, rules, "count_contradiction")] == [("count_contradiction", "error")]


def test_error_needing_a_warning_rule_is_a_warning(cli: Cli, tmp_path: Path) -> None:
    """Point 37: "when it holds only with a warning-severity rule involved" it is a warning."""
    rules = [calls("cap", "*", max=2), calls("ra", "a", min=1), calls("rb", "b", min=2, severity="warning")]
    code, report = lint(cli, tmp_path, rules)
    assert code == 0
    assert [f[:2] for f in findings(report, "count_contradiction")] == [("count_contradiction", "warning")]


# == point 8 / 37: check and compare refuse lint errors of version-2 contracts =====================

CALL_SHELL = [{"type": "tool.call", "tool": "shell.exec", "call_id": "c1"},
              {"type": "tool.result", "call_id": "c1", "ok": True}]


def test_check_refuses_v2_contract_with_lint_error(cli: Cli, tmp_path: Path) -> None:
    """§4: `check` runs lint on v2 contracts and refuses on errors (exit 2); point 8: reported like a
    contract error, `file: $.rules[i]: lint <code>: …` (spec silent on which rule of the finding)."""
    write_contract(tmp_path, EXAMPLE)
    write_trace(tmp_path, CALL_SHELL)
    line = refused_line(cli)
    assert re.match(r"agent-invariants: c\.json(:\d+)?: \$\.rules\[[01]\]: lint required_but_forbidden: ", line), line


def test_check_reports_each_lint_error(cli: Cli, tmp_path: Path) -> None:
    """Point 8: each lint error is reported like a contract error (two errors, both named)."""
    write_contract(tmp_path, [*EXAMPLE, prec("s", "a", "a"), calls("ra", "a", min=1)])
    write_trace(tmp_path, CALL_SHELL)
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl")
    assert (result.returncode, result.stdout) == (2, "")
    assert "lint required_but_forbidden: " in result.stderr
    assert "lint self_precedence: " in result.stderr


def test_check_no_lint_checks_anyway(cli: Cli, tmp_path: Path) -> None:
    """§4: `check` refuses "unless given --no-lint": the trace is then checked (the denied call fails)."""
    write_contract(tmp_path, EXAMPLE)
    write_trace(tmp_path, CALL_SHELL)
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json", "--no-lint")
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)["error_count"] == 1


def test_check_never_refuses_version_1(cli: Cli, tmp_path: Path) -> None:
    """§4 / point 37: v1 contracts are never refused (Node parity), though lint finds an error."""
    write_contract(tmp_path, [deny("no-shell", "shell.*"), need("must-exec", call("shell.exec"))], version=1)
    write_trace(tmp_path, CALL_SHELL)
    assert cli("lint", "--contract", "c.json").returncode == 1
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)["schema"] == "agent-invariants/check/v1"


def test_check_ignores_lint_warnings(cli: Cli, tmp_path: Path) -> None:
    """Point 37: check acts only on error-level findings and prints nothing for warnings (here a
    warning-level required_but_forbidden and a duplicate_rule)."""
    rules = [deny("no-shell", "shell.*", severity="warning"), calls("must-exec", "shell.exec", min=1),
             deny("d1", "z"), deny("d2", "z")]
    write_contract(tmp_path, rules)
    write_trace(tmp_path, CALL_SHELL)
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["warning_count"] == 1
    assert "lint" not in result.stderr
    assert "duplicate_rule" not in result.stderr


def test_compare_refuses_like_check(cli: Cli, tmp_path: Path) -> None:
    """Point 8: `compare` behaves the same (exit 2, nothing on stdout, the lint code named)."""
    write_contract(tmp_path, EXAMPLE)
    write_trace(tmp_path, CALL_SHELL)
    result = cli("compare", "--contract", "c.json", "--baseline", "t.jsonl", "--candidate", "t.jsonl")
    assert (result.returncode, result.stdout) == (2, "")
    assert "lint required_but_forbidden: " in result.stderr


def test_compare_accepts_no_lint(cli: Cli, tmp_path: Path) -> None:
    """Point 8: `--no-lint` is accepted by compare too."""
    write_contract(tmp_path, EXAMPLE)
    write_trace(tmp_path, CALL_SHELL)
    result = cli("compare", "--contract", "c.json", "--baseline", "t.jsonl", "--candidate", "t.jsonl",
                 "--format", "json", "--no-lint")
    assert result.returncode in (0, 1), result.stderr
    assert json.loads(result.stdout)["schema"] == "agent-invariants/compare/v1"


# == R(t) and required_but_forbidden (§4 table row 1; points 38, 40, 49) ==========================


@pytest.mark.parametrize("requirement", [
    calls("r", "x", min=1),
    calls("r", "x", min=2, count="successful"),
    calls("r", " x ", min=1),
    need("r", call("x")),
    need("r", call("x", ok=True)),
    order("r", "a", "x"),
    order("r", "x", mode="exact"),
    order("r", "x", mode="contiguous"),
    order("r", "x", mode="any_order"),
    args("r", "x", call_index=0),
], ids=["tool_calls.min", "successful min", "trimmed glob", "require_event default min", "require_event extra key",
        "tool_order", "exact", "contiguous", "any_order", "call_index"])
def test_required_tool_denied(cli: Cli, tmp_path: Path, requirement: Rule) -> None:
    """Point 38: R(t) counts tool_calls.min (either count) on a glob equal to t (trimmed),
    require_event.min (default 1) on `{type: tool.call, tool: t}` (other keys allowed), entries of a
    tool_order (any mode), call_index + 1; point 40: a deny_tool matching t gives one finding."""
    code, report = lint(cli, tmp_path, [deny("d", "x"), requirement])
    assert code == 1
    assert [f[:3] for f in findings(report)] == [("required_but_forbidden", "error", ["d", "r"])]


@pytest.mark.parametrize("rule", [
    when_rule("r", OUTCOME) | {"tool": "x"},
    calls("r", "x", matches_output_length="items"),
    need("r", call("x"), min=0),
    need("r", {"type": "tool.*", "tool": "x"}),
    need("r", call("x*")),
    calls("r", "x*", min=1),
], ids=["required_when", "matches_output_length", "min 0", "type glob", "tool glob", "glob tool_calls"])
def test_not_a_requirement(cli: Cli, tmp_path: Path, rule: Rule) -> None:
    """Point 38: R(t) never comes from required_when or matches_output_length; require_event needs
    `type` exactly tool.call and `tool` equal to t; R is for literal tools only."""
    assert only(cli, tmp_path, [deny("d", "x"), rule], "required_but_forbidden") == []


def test_from_result_is_not_a_requirement(cli: Cli, tmp_path: Path) -> None:
    """Point 38: R(t) never comes from `$from_result` (the reference gets reference_to_forbidden)."""
    rules = [deny("d", "x"), args("ta", "y", {"v": from_result("x")}, call_index=0)]
    assert [f[0] for f in findings(lint(cli, tmp_path, rules)[1])] == ["reference_to_forbidden"]


def test_deny_glob_matches_literal(cli: Cli, tmp_path: Path) -> None:
    """Point 40: a deny_tool whose glob matches t forbids it; the pointer is the requirement's field."""
    assert only(cli, tmp_path, [deny("d", "x*"), calls("r", "xy", min=1)], "required_but_forbidden") == [
        ("required_but_forbidden", "error", ["d", "r"], "/rules/1/tool")]


def test_allow_list_leaves_required_tool_out(cli: Cli, tmp_path: Path) -> None:
    """Point 40: an error-severity allow_tools none of whose patterns matches t (`b*` lets `bz` in)."""
    rules = [allow("al", "a", "b*"), calls("rx", "x", min=1), calls("rb", "bz", min=1)]
    assert only(cli, tmp_path, rules, "required_but_forbidden") == [
        ("required_but_forbidden", "error", ["al", "rx"], "/rules/1/tool")]


def test_warning_allow_list_forbids_nothing(cli: Cli, tmp_path: Path) -> None:
    """Point 40: only an *error-severity* allow_tools forbids."""
    assert only(cli, tmp_path, [allow("al", "a", severity="warning"), calls("r", "x", min=1)],
                "required_but_forbidden") == []


@pytest.mark.parametrize("cap", [
    calls("cap", "x*", max=0),
    need("cap", {"type": "tool.call"}, min=0, max=0),
    need("cap", {"tool": "x"}, min=0, max=0),
    budget("cap", max_tool_calls=0),
    budget("cap", max_events=0),
], ids=["tool_calls.max", "require_event type", "require_event tool", "max_tool_calls", "max_events"])
def test_cap_of_zero_forbids(cli: Cli, tmp_path: Path, cap: Rule) -> None:
    """Points 39/40: a covering bound of 0 gives required_but_forbidden, and then no
    count_contradiction."""
    code, report = lint(cli, tmp_path, [cap, calls("r", "x", min=1)])
    assert (code, findings(report)) == (1, [("required_but_forbidden", "error", ["cap", "r"], "/rules/1/tool")])


@pytest.mark.parametrize("cap", [
    calls("cap", "x", max=0, count="successful"),
    need("cap", call("x", ok=True), min=0, max=0),
    need("cap", {"type": "tool.result", "tool": "x"}, min=0, max=0),
], ids=["successful cap", "matcher with ok", "matcher on results"])
def test_cap_that_covers_no_call(cli: Cli, tmp_path: Path, cap: Rule) -> None:
    """Point 39: a `count: successful` max bounds only S(t) (here 0); a matcher with any key beyond
    type/tool bounds nothing; a type glob must match `tool.call`."""
    assert lint(cli, tmp_path, [cap, calls("r", "x", min=1)])[1]["findings"] == []


def test_successful_cap_of_zero_against_successful_min(cli: Cli, tmp_path: Path) -> None:
    """Point 39: a successful max of 0 bounds S(t) = 1: forbidden (point 40: a bound of 0)."""
    rules = [calls("cap", "x", max=0, count="successful"), calls("r", "x", min=1, count="successful")]
    assert [f[:3] for f in findings(lint(cli, tmp_path, rules)[1])] == [
        ("required_but_forbidden", "error", ["cap", "r"])]


def test_one_finding_per_forbidden_tool(cli: Cli, tmp_path: Path) -> None:
    """Point 40: one finding per (forbidding rule, tool t): a tool_order of a and b under `deny *`."""
    assert [f[:3] for f in only(cli, tmp_path, [deny("d", "*"), order("o", "a", "b")], "required_but_forbidden")] == [
        ("required_but_forbidden", "error", ["d", "o"])] * 2


def test_one_finding_per_forbidding_rule(cli: Cli, tmp_path: Path) -> None:
    """Point 40: two forbidding rules of one tool give two findings."""
    rules = [deny("d", "*"), allow("al", "q"), calls("r", "b", min=1)]
    assert [f[2] for f in only(cli, tmp_path, rules, "required_but_forbidden")] == [["d", "r"], ["al", "r"]]


def test_names_first_rule_with_the_maximum(cli: Cli, tmp_path: Path) -> None:
    """Point 49: rule_ids [forbidding rule, the rule giving R(t) — the first of those with the
    maximum] (R(x) = 3 from t2 and from o; t1 asks for 1)."""
    rules = [calls("t1", "x", min=1), calls("t2", "x", min=3), deny("d", "x"), order("o", "x", "x", "x")]
    assert [f[2] for f in only(cli, tmp_path, rules, "required_but_forbidden")] == [["t2", "d"]]


def test_rule_ids_in_contract_order(cli: Cli, tmp_path: Path) -> None:
    """Point 49: "rule_ids, in contract order" — the requirement written first is named first (the
    example of §4 has the forbidding rule first, so both readings agree there)."""
    assert only(cli, tmp_path, [calls("r", "x", min=1), deny("d", "x")], "required_but_forbidden") == [
        ("required_but_forbidden", "error", ["r", "d"], "/rules/0/tool")]


# == count_contradiction (§4 table row 2; points 39, 40) ===========================================


def test_sum_over_covered_tools_exceeds_bound(cli: Cli, tmp_path: Path) -> None:
    """§4: the sum of R(t) over the tools a bound covers exceeds it; point 49: [bound, each
    contributing requirement], pointer at the bound's field."""
    rules = [calls("cap", "*", max=2), calls("ra", "a", min=1), calls("rb", "b", min=2)]
    code, report = lint(cli, tmp_path, rules)
    assert (code, findings(report)) == (1, [("count_contradiction", "error", ["cap", "ra", "rb"], "/rules/0/max")])


def test_sum_equal_to_bound_is_fine(cli: Cli, tmp_path: Path) -> None:
    """§4: only a sum that *exceeds* the bound contradicts it."""
    rules = [calls("cap", "*", max=3), calls("ra", "a", min=1), calls("rb", "b", min=2)]
    assert lint(cli, tmp_path, rules)[1]["findings"] == []


@pytest.mark.parametrize(("bound", "field"), [("max_tool_calls", "/rules/0/max_tool_calls"),
                                              ("max_events", "/rules/0/max_events")])
def test_event_budget_bounds_every_tool(cli: Cli, tmp_path: Path, bound: str, field: str) -> None:
    """Point 39: event_budget.max_tool_calls or max_events covers every t (tool_order a, b, a: 3)."""
    rules = [budget("cap", **{bound: 2}), order("o", "a", "b", "a")]
    assert only(cli, tmp_path, rules, "count_contradiction") == [("count_contradiction", "error", ["cap", "o"], field)]


@pytest.mark.parametrize("match", [{"tool": "a*"}, {"type": "tool.*"}, {"type": "tool.call", "tool": "a*"}])
def test_require_event_max_on_calls_is_a_bound(cli: Cli, tmp_path: Path, match: dict[str, Any]) -> None:
    """Point 39: a require_event.max whose matcher has only `type` (a glob matching tool.call) and/or
    `tool` (a glob matching t) covers t."""
    rules = [need("cap", match, min=0, max=1), order("o", "a1", "a2")]
    assert only(cli, tmp_path, rules, "count_contradiction") == [
        ("count_contradiction", "error", ["cap", "o"], "/rules/0/max")]


@pytest.mark.parametrize("match", [{"type": "tool.result"}, {"type": "tool.call", "ok": True}])
def test_require_event_max_not_on_calls_bounds_nothing(cli: Cli, tmp_path: Path, match: dict[str, Any]) -> None:
    """Point 39: a type glob not matching tool.call, or any other key (`ok`), bounds nothing."""
    assert only(cli, tmp_path, [need("cap", match, min=0, max=1), order("o", "a1", "a2")], "count_contradiction") == []


def test_retry_limit_by_tool_is_per_tool(cli: Cli, tmp_path: Path) -> None:
    """Point 39: retry_limit with group_by tool compares R(t) > max_attempts tool by tool, never a
    sum ("calls a, b, c pass a per-tool limit of 2")."""
    rules = [{"id": "cap", "kind": "retry_limit", "max_attempts": 2, "group_by": "tool"}, order("o", "a", "b", "c")]
    assert lint(cli, tmp_path, rules)[1]["findings"] == []


def test_retry_limit_by_tool_exceeded(cli: Cli, tmp_path: Path) -> None:
    """§4 / point 39: a required 3 times under max_attempts 2 by tool; point 40: one finding per bound
    even when two tools exceed it."""
    rules = [{"id": "cap", "kind": "retry_limit", "max_attempts": 2, "group_by": "tool"},
             order("o", "a", "a", "a", "b", "b", "b")]
    assert only(cli, tmp_path, rules, "count_contradiction") == [
        ("count_contradiction", "error", ["cap", "o"], "/rules/0/max_attempts")]


def test_retry_limit_by_signature_is_no_bound(cli: Cli, tmp_path: Path) -> None:
    """§4: only `retry_limit.max_attempts` with `group_by: tool` is a bound."""
    rules = [{"id": "cap", "kind": "retry_limit", "max_attempts": 2}, order("o", "a", "a", "a")]
    assert lint(cli, tmp_path, rules)[1]["findings"] == []


@pytest.mark.parametrize(("cap_count", "min_count", "contradicts"), [
    ("successful", "successful", True), ("successful", "calls", False), ("calls", "successful", True)])
def test_successful_cap_bounds_successful_min(cli: Cli, tmp_path: Path, cap_count: str, min_count: str,
                                              contradicts: bool) -> None:
    """Point 39: a count: successful max bounds only S(t), the largest successful min on t; a calls
    max covers every requirement (R(t) takes tool_calls.min of either count)."""
    rules = [calls("cap", "x", max=1, count=cap_count), calls("r", "x", min=2, count=min_count)]
    expected = [("count_contradiction", "error", ["cap", "r"], "/rules/0/max")] if contradicts else []
    assert findings(lint(cli, tmp_path, rules)[1]) == expected


def test_requirement_is_the_maximum_not_the_sum(cli: Cli, tmp_path: Path) -> None:
    """Point 38: R(t) is the maximum over its sources (2 and 2 under a cap of 2: fine)."""
    rules = [calls("cap", "x", max=2), order("o", "x", "x"), calls("r", "x", min=2)]
    assert lint(cli, tmp_path, rules)[1]["findings"] == []


def test_entries_are_counted_within_one_tool_order(cli: Cli, tmp_path: Path) -> None:
    """Point 38: "the number of entries equal to t in one tool_order": two orders naming x once
    each make R(x) = 1, within a cap of 1."""
    rules = [calls("cap", "x", max=1), order("o1", "x"), order("o2", "x", "y")]
    assert lint(cli, tmp_path, rules)[1]["findings"] == []


@pytest.mark.parametrize(("index", "contradicts"), [(2, True), (1, False)])
def test_call_index_at_or_over_max(cli: Cli, tmp_path: Path, index: int, contradicts: bool) -> None:
    """§4: `call_index` ≥ `max` contradicts (here on a glob, point 40: a requirement on a glob h under
    a bound whose coverage subsumes h)."""
    rules = [calls("cap", "x*", max=2), args("ta", "x*", call_index=index)]
    expected = [("count_contradiction", "error", ["cap", "ta"], "/rules/0/max")] if contradicts else []
    assert findings(lint(cli, tmp_path, rules)[1]) == expected


@pytest.mark.parametrize(("cap_glob", "req_glob", "contradicts"), [("x*", "xa*", True), ("xa*", "x*", False),
                                                                   ("*", "x*", True)])
def test_glob_requirement_under_subsuming_bound(cli: Cli, tmp_path: Path, cap_glob: str, req_glob: str,
                                                contradicts: bool) -> None:
    """Point 40: a single requirement on a glob h exceeding a bound whose coverage subsumes h."""
    rules = [calls("cap", cap_glob, max=2), calls("r", req_glob, min=3)]
    expected = [("count_contradiction", "error", ["cap", "r"], "/rules/0/max")] if contradicts else []
    assert findings(lint(cli, tmp_path, rules)[1]) == expected


def test_call_matcher_requirement_on_glob_under_budget(cli: Cli, tmp_path: Path) -> None:
    """Point 40: a call-matcher require_event.min on a glob against max_tool_calls (covers all)."""
    rules = [budget("cap", max_tool_calls=2), need("r", call("x*"), min=3)]
    assert findings(lint(cli, tmp_path, rules)[1]) == [
        ("count_contradiction", "error", ["cap", "r"], "/rules/0/max_tool_calls")]


def test_require_event_min_over_max_events(cli: Cli, tmp_path: Path) -> None:
    """§4 / point 40: any require_event.min > max_events (the matcher need not be a call)."""
    rules = [budget("cap", max_events=2), need("r", {"type": "agent.message"}, min=3)]
    assert findings(lint(cli, tmp_path, rules)[1]) == [
        ("count_contradiction", "error", ["cap", "r"], "/rules/0/max_events")]


def test_count_contradiction_on_warning_bound(cli: Cli, tmp_path: Path) -> None:
    """Point 37: a warning-severity bound makes the finding a warning (exit 0)."""
    code, report = lint(cli, tmp_path, [calls("cap", "x", max=1, severity="warning"), calls("r", "x", min=2)])
    assert (code, findings(report)) == (0, [("count_contradiction", "warning", ["cap", "r"], "/rules/0/max")])


# == order_contradiction (§4 table row 3; point 41) ================================================


@pytest.mark.parametrize("requirement", [calls("ra", "a", min=1), calls("ra", "b", min=1)], ids=["R(A)", "R(B)"])
def test_opposite_orders_with_a_required_tool(cli: Cli, tmp_path: Path, requirement: Rule) -> None:
    """Point 41: A→B with B→A is an error when R(A) + R(B) ≥ 1 (one tool suffices); point 49:
    [the two order rules]; precedence and require_order both count."""
    rules = [prec("ab", "a", "b"), prec("ba", "b", "a", kind="require_order"), requirement]
    code, report = lint(cli, tmp_path, rules)
    assert code == 1
    assert [f[:3] for f in findings(report, "order_contradiction")] == [("order_contradiction", "error", ["ab", "ba"])]


def test_opposite_orders_without_requirement_warn(cli: Cli, tmp_path: Path) -> None:
    """Point 41: a warning otherwise (the pair then forbids both tools)."""
    code, report = lint(cli, tmp_path, [prec("ab", "a", "b"), prec("ba", "b", "a")])
    assert code == 0
    got = [f[:3] for f in findings(report, "order_contradiction")]
    assert got == [("order_contradiction", "warning", ["ab", "ba"])]


def test_extra_keys_allowed_on_before(cli: Cli, tmp_path: Path) -> None:
    """Point 41: extra keys are allowed on `before` (they only make it stricter)."""
    rules = [prec("ab", "a", "b"), {"id": "ba", "kind": "precedence", "before": call("b", ok=True), "after": call("a")},
             calls("ra", "a", min=1)]
    assert [f[1] for f in only(cli, tmp_path, rules, "order_contradiction")] == ["error"]


def test_extra_keys_on_after_do_not_count(cli: Cli, tmp_path: Path) -> None:
    """Point 41: `after` must be exactly `{type: "tool.call", tool: B}`."""
    rules = [prec("ab", "a", "b"), {"id": "ba", "kind": "precedence", "before": call("b"), "after": call("a", ok=True)},
             calls("ra", "a", min=1)]
    assert only(cli, tmp_path, rules, "order_contradiction") == []


def test_glob_tools_do_not_count(cli: Cli, tmp_path: Path) -> None:
    """Point 41: A and B must both be literal."""
    rules = [prec("ab", "a*", "b"), prec("ba", "b", "a*"), calls("ra", "a", min=1)]
    assert only(cli, tmp_path, rules, "order_contradiction") == []


def test_correlate_window_and_scope_do_not_matter(cli: Cli, tmp_path: Path) -> None:
    """Point 41: correlate, within_events and scope do not matter."""
    rules = [prec("ab", "a", "b", correlate=["id"], within_events=3, scope="first"), prec("ba", "b", "a"),
             calls("ra", "a", min=1)]
    assert [f[1] for f in only(cli, tmp_path, rules, "order_contradiction")] == ["error"]


@pytest.mark.parametrize("warning_rule", [0, 2])
def test_opposite_orders_resting_on_warning_rule(cli: Cli, tmp_path: Path, warning_rule: int) -> None:
    """Point 37: a warning-severity order rule, or a warning-severity requirement, makes it a warning."""
    rules = [prec("ab", "a", "b"), prec("ba", "b", "a"), calls("ra", "a", min=1)]
    rules[warning_rule] = {**rules[warning_rule], "severity": "warning"}
    code, report = lint(cli, tmp_path, rules)
    assert code == 0
    assert [f[1] for f in findings(report, "order_contradiction")] == ["warning"]


@pytest.mark.parametrize(("tools", "mode", "contradicts"), [
    (["b", "a"], "exact", True), (["a", "b"], "exact", False), (["*", "b", "a"], "exact", False),
    (["b", "a"], "subsequence", False)])
def test_exact_order_puts_b_first(cli: Cli, tmp_path: Path, tools: list[str], mode: str, contradicts: bool) -> None:
    """Point 41: an exact tool_order in which no entry before the first entry equal to B intersects A,
    together with A→B, is an error; point 49: [tool_order, the order rule]."""
    rules = [order("o", *tools, mode=mode), prec("ab", "a", "b")]
    got = [f[:3] for f in only(cli, tmp_path, rules, "order_contradiction")]
    assert got == ([("order_contradiction", "error", ["o", "ab"])] if contradicts else [])


# == self_precedence (§4 table row 4; point 42) =====================================================


def test_self_precedence_unrequired_is_warning(cli: Cli, tmp_path: Path) -> None:
    """§4: `before` = `after` means "never occurs"; warning when not required; point 49: [the rule]."""
    code, report = lint(cli, tmp_path, [prec("s", "a", "a")])
    assert code == 0
    assert [f[:3] for f in findings(report, "self_precedence")] == [("self_precedence", "warning", ["s"])]


@pytest.mark.parametrize("kind", ["precedence", "require_order"])
def test_self_precedence_required_is_error(cli: Cli, tmp_path: Path, kind: str) -> None:
    """Point 42: an error when the matcher is `{type: tool.call, tool: t}` with R(t) ≥ 1."""
    code, report = lint(cli, tmp_path, [prec("s", "a", "a", kind=kind), calls("ra", "a", min=1)])
    assert code == 1
    assert [f[:3] for f in findings(report, "self_precedence")] == [("self_precedence", "error", ["s"])]


def test_self_precedence_compares_normalised_matchers(cli: Cli, tmp_path: Path) -> None:
    """Point 42: normalised matchers compared key by key (trimmed glob, other key order)."""
    rules = [{"id": "s", "kind": "precedence", "before": {"type": "tool.call", "tool": " a "},
              "after": {"tool": "a", "type": "tool.call"}}, calls("ra", "a", min=1)]
    assert [f[1] for f in only(cli, tmp_path, rules, "self_precedence")] == ["error"]


@pytest.mark.parametrize(("minimum", "level"), [(1, "error"), (0, "warning")])
def test_self_precedence_on_required_event(cli: Cli, tmp_path: Path, minimum: int, level: str) -> None:
    """Point 42: an error when an equal matcher has require_event.min ≥ 1, else a warning."""
    message = {"type": "agent.message"}
    rules = [{"id": "s", "kind": "require_order", "before": message, "after": message},
             need("r", message, min=minimum)]
    assert [f[1] for f in only(cli, tmp_path, rules, "self_precedence")] == [level]


def test_self_precedence_glob_tool_is_warning(cli: Cli, tmp_path: Path) -> None:
    """Point 42: the error needs a literal t (`a*` with a required `a1` stays a warning)."""
    rules = [prec("s", "a*", "a*"), calls("ra", "a1", min=1)]
    assert [f[1] for f in only(cli, tmp_path, rules, "self_precedence")] == ["warning"]


def test_self_precedence_on_warning_requirement(cli: Cli, tmp_path: Path) -> None:
    """Point 37: required only by a warning-severity rule, it is a warning."""
    rules = [prec("s", "a", "a"), calls("ra", "a", min=1, severity="warning")]
    assert [f[1] for f in only(cli, tmp_path, rules, "self_precedence")] == ["warning"]


# == reference_to_forbidden (§4 table row 5; point 42) =============================================


def ref_rules(forbidder: Rule, glob: str, required: bool = True) -> list[Rule]:
    rules = [forbidder, args("ta", "y", {"v": from_result(glob)})]
    return rules + [calls("ry", "y", min=1)] if required else rules


def test_reference_to_denied_tool_of_required_subject(cli: Cli, tmp_path: Path) -> None:
    """§4: `$from_result` names a forbidden tool: error when the subject's R ≥ 1; point 49:
    [referencing rule, forbidding rule] in contract order; the pointer is at the reference."""
    code, report = lint(cli, tmp_path, ref_rules(deny("d", "x*"), "x1"))
    assert (code, findings(report)) == (
        1, [("reference_to_forbidden", "error", ["d", "ta"], "/rules/1/match/v/$from_result/tool")])


def test_reference_of_unrequired_subject_warns(cli: Cli, tmp_path: Path) -> None:
    """§4: "error if the subject's R ≥ 1, else warning"."""
    rules = ref_rules(deny("d", "x*"), "x1", required=False)
    assert [f[:3] for f in only(cli, tmp_path, rules, "reference_to_forbidden")] == [
        ("reference_to_forbidden", "warning", ["d", "ta"])]


@pytest.mark.parametrize(("denied", "glob", "found"), [("x*", "x?", True), ("x?", "x*", False)])
def test_reference_glob_must_be_subsumed_by_deny(cli: Cli, tmp_path: Path, denied: str, glob: str,
                                                 found: bool) -> None:
    """Point 42: a `$from_result` glob g names a forbidden tool when a deny_tool subsumes g."""
    assert len(only(cli, tmp_path, ref_rules(deny("d", denied), glob), "reference_to_forbidden")) == int(found)


def test_reference_inside_any_of_warns(cli: Cli, tmp_path: Path) -> None:
    """Point 42: level error only when the reference is not inside an `$any_of` branch."""
    rules = [deny("d", "x"), args("ta", "y", {"v": {"$any_of": [from_result("x"), 1]}}), calls("ry", "y", min=1)]
    assert [f[1] for f in only(cli, tmp_path, rules, "reference_to_forbidden")] == ["warning"]


@pytest.mark.parametrize(("glob", "found"), [("x*", True), ("*a", False)])
def test_reference_outside_allow_list(cli: Cli, tmp_path: Path, glob: str, found: bool) -> None:
    """Point 42: g intersects no pattern of an error-severity allow_tools (`*a` meets `za`)."""
    rules = ref_rules(allow("al", "y", "z*"), glob)
    expected = [("reference_to_forbidden", "error", ["al", "ta"])] if found else []
    assert [f[:3] for f in only(cli, tmp_path, rules, "reference_to_forbidden")] == expected


def test_reference_to_tool_capped_at_zero(cli: Cli, tmp_path: Path) -> None:
    """Point 42: g is literal and a bound of 0 covers it."""
    assert [f[:3] for f in only(cli, tmp_path, ref_rules(calls("cap", "x", max=0), "x"), "reference_to_forbidden")] == [
        ("reference_to_forbidden", "error", ["cap", "ta"])]


@pytest.mark.parametrize(("tools", "found"), [(["y", "x"], True), (["x", "y"], False)])
def test_reference_to_tool_an_exact_order_puts_after(cli: Cli, tmp_path: Path, tools: list[str], found: bool) -> None:
    """§4 / point 42: the subject is a literal tool of an exact tool_order in which every entry
    intersecting g comes after every entry equal to the subject; point 49 names the tool_order."""
    rules = [order("o", *tools, mode="exact"), args("ta", "y", {"v": from_result("x")})]
    expected = [("reference_to_forbidden", "error", ["o", "ta"])] if found else []
    assert [f[:3] for f in only(cli, tmp_path, rules, "reference_to_forbidden")] == expected


@pytest.mark.parametrize(("when", "level"), [(None, "error"), ({"path": "v", "non_empty": True}, "warning")])
def test_reference_in_output_match(cli: Cli, tmp_path: Path, when: dict[str, Any] | None, level: str) -> None:
    """Point 42: an output_match without `when` is a required subject (error); with `when`, warning."""
    rule: Rule = {"id": "om", "kind": "output_match", "match": {"v": from_result("x")}}
    if when is not None:
        rule["when"] = when
    assert [f[:3] for f in only(cli, tmp_path, [deny("d", "x"), rule], "reference_to_forbidden")] == [
        ("reference_to_forbidden", level, ["d", "om"])]


def test_reference_nested_in_where(cli: Cli, tmp_path: Path) -> None:
    """§2: references nest (≤ 4 hops); a nested `$from_result` on a denied tool is one too."""
    nested = {"$from_result": {"tool": "z", "where": {"k": from_result("x")}}}
    rules = [deny("d", "x"), args("ta", "y", {"v": nested}), calls("ry", "y", min=1)]
    assert [f[:3] for f in only(cli, tmp_path, rules, "reference_to_forbidden")] == [
        ("reference_to_forbidden", "error", ["d", "ta"])]


def test_reference_to_warning_deny(cli: Cli, tmp_path: Path) -> None:
    """Point 37: a warning-severity deny_tool makes it a warning."""
    rules = ref_rules(deny("d", "x", severity="warning"), "x")
    assert [f[1] for f in only(cli, tmp_path, rules, "reference_to_forbidden")] == ["warning"]


# == dead_rule (§4 table row 6; point 43) ===========================================================


@pytest.mark.parametrize(("rule", "pointer"), [
    ({"id": "r", "kind": "require_approval", "tool": "x"}, "/rules/1/tool"),
    ({"id": "r", "kind": "retry_limit", "max_attempts": 2}, "/rules/1"),
    ({"id": "r", "kind": "tool_result_required"}, "/rules/1"),
    (args("r", "x"), "/rules/1/tool"),
    (calls("r", "x", max=3), "/rules/1/tool"),
    ({"id": "r", "kind": "approval_bound", "tool": "x"}, "/rules/1/tool"),
    ({"id": "r", "kind": "latency_budget", "tool": "x", "max_ms": 5}, "/rules/1/tool"),
    ({"id": "r", "kind": "result_size", "tool": "x", "max_bytes": 5}, "/rules/1/tool"),
    ({"id": "r", "kind": "failure_handled", "tool": "x", "within_events": 2}, "/rules/1/tool"),
    ({"id": "r", "kind": "forbidden_when", "tool": "x", "when": OUTCOME}, "/rules/1/tool"),
    ({"id": "r", "kind": "result_size", "max_bytes": 5}, "/rules/1"),
    ({"id": "r", "kind": "failure_handled", "within_events": 2}, "/rules/1"),
    ({"id": "r", "kind": "latency_budget", "max_ms": 5}, "/rules/1"),
], ids=["require_approval", "retry_limit default", "tool_result_required default", "tool_args", "tool_calls max",
        "approval_bound", "latency_budget", "result_size", "failure_handled", "forbidden_when",
        "result_size default", "failure_handled default", "latency_budget default"])
def test_rule_on_denied_calls_is_dead(cli: Cli, tmp_path: Path, rule: Rule, pointer: str) -> None:
    """Point 43: the kinds whose every violation needs a matching call, with their `tool` glob (`*`
    where defaulted), under a deny_tool that subsumes it; point 49: [forbidding rule, dead rule] and
    the conflicting field of the later rule (its tool, or the rule when the tool is defaulted)."""
    code, report = lint(cli, tmp_path, [deny("d", "*" if "tool" not in rule else "x"), rule])
    assert (code, findings(report)) == (0, [("dead_rule", "warning", ["d", "r"], pointer)])


def test_deny_tool_outside_allow_list_is_dead(cli: Cli, tmp_path: Path) -> None:
    """Point 43: deny_tool is dead by its allow-list clause (its glob intersects no allowed pattern)."""
    assert findings(lint(cli, tmp_path, [allow("al", "a", "b*"), deny("d", "x")])[1]) == [
        ("dead_rule", "warning", ["al", "d"], "/rules/1/tool")]


@pytest.mark.parametrize("rule", [
    when_rule("r", OUTCOME),
    {"id": "r", "kind": "latency_budget", "tool": "x", "max_ms": 5, "percentile": 90},
], ids=["required_when", "latency percentile"])
def test_rules_firing_on_absence_are_not_dead(cli: Cli, tmp_path: Path, rule: Rule) -> None:
    """Point 43: a required_when (it fires because calls are absent) and kinds outside the list are
    not dead."""
    assert findings(lint(cli, tmp_path, [deny("d", "x"), rule])[1]) == []


@pytest.mark.parametrize("forbidder", [deny("d", "x*", severity="warning"), allow("d", "a", severity="warning")])
def test_warning_forbidder_makes_nothing_dead(cli: Cli, tmp_path: Path, forbidder: Rule) -> None:
    """Point 43: the forbidding allow_tools or deny_tool must have severity error."""
    rules = [forbidder, {"id": "r", "kind": "require_approval", "tool": "x1"}]
    assert findings(lint(cli, tmp_path, rules)[1]) == []


def test_deny_under_deny_is_shadowed_not_dead(cli: Cli, tmp_path: Path) -> None:
    """Point 43: a deny_tool under a deny_tool is shadowed_rule instead."""
    assert [f[0] for f in findings(lint(cli, tmp_path, [deny("d", "x*"), deny("d2", "x1")])[1])] == ["shadowed_rule"]


def test_reference_pair_gives_no_dead_rule(cli: Cli, tmp_path: Path) -> None:
    """Point 43: a pair that already gives reference_to_forbidden gives no dead_rule."""
    rules = [deny("d", "x"), args("ta", "x", {"v": from_result("x")})]
    codes = [f[0] for f in findings(lint(cli, tmp_path, rules)[1])]
    assert "reference_to_forbidden" in codes and "dead_rule" not in codes


def test_dead_rule_written_before_allow_list(cli: Cli, tmp_path: Path) -> None:
    """Point 49: rule_ids in contract order, pointer at the later rule's conflicting field (the
    README's example: `dead_rule [mail-needs-approval, known-tools] /rules/3/tools`)."""
    rules = [{"id": "r", "kind": "require_approval", "tool": "x"}, allow("al", "a")]
    assert findings(lint(cli, tmp_path, rules)[1]) == [("dead_rule", "warning", ["r", "al"], "/rules/1/tools")]


@pytest.mark.parametrize(("pattern", "glob", "dead"), [
    ("a?c", "ab*", False), ("a?c", "abd*", True), ("*a", "b*", False), ("a*b", "*c", True),
    ("?", "ab", True), ("??", "a*", False), ("*a*b*", "b*a", False), ("abc", "a*d*", True)])
def test_intersects_is_exact(cli: Cli, tmp_path: Path, pattern: str, glob: str, dead: bool) -> None:
    """§4: `intersects(p, q)` is exact (`*` absorbs any symbol): a rule is dead iff its glob meets no
    allowed pattern."""
    rules = [allow("al", pattern), {"id": "r", "kind": "require_approval", "tool": glob}]
    assert len(only(cli, tmp_path, rules, "dead_rule")) == int(dead)


# == vacuous_distinct (§4 table row 7; point 44) ===================================================


def distinct(glob: str) -> Rule:
    return {"id": "ta", "kind": "tool_args", "tool": glob, "distinct": ["id"]}


@pytest.mark.parametrize(("glob", "bound", "field"), [
    ("x", calls("cap", "x", max=1), "max"),
    ("x*", calls("cap", "*", max=1), "max"),
    ("x", budget("cap", max_tool_calls=1), "max_tool_calls"),
    ("x*", budget("cap", max_tool_calls=1), "max_tool_calls"),
    ("x", budget("cap", max_events=1), "max_events"),
    ("x", need("cap", call("x"), min=0, max=1), "max"),
    ("x", {"id": "cap", "kind": "retry_limit", "max_attempts": 1, "group_by": "tool"}, "max_attempts"),
], ids=["tool_calls", "glob under *", "max_tool_calls", "glob max_tool_calls", "max_events", "require_event",
        "retry_limit"])
def test_distinct_under_bound_below_two(cli: Cli, tmp_path: Path, glob: str, bound: Rule, field: str) -> None:
    """Point 44: the smallest bound lint knows on the glob is below 2 — a covering bound (point 39)
    when literal, or a tool_calls.max / call-matcher require_event.max / max_tool_calls whose glob
    subsumes g; point 49: [tool_args, bound]."""
    assert only(cli, tmp_path, [distinct(glob), bound], "vacuous_distinct") == [
        ("vacuous_distinct", "warning", ["ta", "cap"], f"/rules/1/{field}")]


@pytest.mark.parametrize(("glob", "bound"), [
    ("x", calls("cap", "x", max=2)),
    ("*", calls("cap", "x*", max=1)),
    ("x", calls("cap", "x", max=1, count="successful")),
], ids=["max 2", "bound not subsuming", "successful"])
def test_distinct_without_bound_below_two(cli: Cli, tmp_path: Path, glob: str, bound: Rule) -> None:
    """Point 44: no finding with max ≥ 2, a bound whose glob does not subsume g, or a successful max."""
    assert only(cli, tmp_path, [distinct(glob), bound], "vacuous_distinct") == []


def test_distinct_names_the_smallest_bound(cli: Cli, tmp_path: Path) -> None:
    """Point 44: the smallest bound (0 from the budget, 1 from tool_calls) is the one named."""
    rules = [distinct("x"), calls("cap", "x", max=1), budget("cap2", max_tool_calls=0)]
    assert [f[2] for f in only(cli, tmp_path, rules, "vacuous_distinct")] == [["ta", "cap2"]]


# == duplicate_rule (§4 table row 8; point 44) =====================================================


def test_duplicate_with_defaults_filled_in(cli: Cli, tmp_path: Path) -> None:
    """Point 44: validated rules, trimmed strings, defaults filled in, ignoring id, description and
    severity (`retry_limit {max_attempts: 2}` versus the same with `tool: " * "`)."""
    rules = [{"id": "r1", "kind": "retry_limit", "max_attempts": 2},
             {"id": "r2", "kind": "retry_limit", "max_attempts": 2, "tool": " * ", "group_by": "call_signature",
              "severity": "warning", "description": "again"}]
    assert findings(lint(cli, tmp_path, rules)[1]) == [("duplicate_rule", "warning", ["r1", "r2"], "/rules/1")]


def test_duplicate_require_event_default_min(cli: Cli, tmp_path: Path) -> None:
    """Point 44: `min` defaults to 1 before comparing."""
    rules = [need("r1", {"type": "agent.message"}), need("r2", {"type": "agent.message"}, min=1)]
    assert [f[:3] for f in findings(lint(cli, tmp_path, rules)[1])] == [("duplicate_rule", "warning", ["r1", "r2"])]


@pytest.mark.parametrize(("rule", "default"), [
    ({"kind": "approval_bound", "tool": "pay"}, {"revoked_by": ["approval.revoked"]}),
    ({"kind": "failure_handled", "within_events": 2}, {"message_types": ["agent.message"]}),
])
def test_duplicate_with_a_list_default_filled_in(cli: Cli, tmp_path: Path, rule: dict, default: dict) -> None:
    """Point 44: a list a kind defaults (§3.5 `revoked_by`, §3.9 `message_types`) is filled in too."""
    rules = [{"id": "r1", **rule}, {"id": "r2", **rule, **default}]
    assert only(cli, tmp_path, rules, "duplicate_rule") == [("duplicate_rule", "warning", ["r1", "r2"], "/rules/1")]


def test_each_later_duplicate_names_the_first(cli: Cli, tmp_path: Path) -> None:
    """Point 44: one finding per later duplicate, naming the first occurrence."""
    rules = [deny("a", "x"), deny("b", "x"), deny("c", " x")]
    assert findings(lint(cli, tmp_path, rules)[1]) == [
        ("duplicate_rule", "warning", ["a", "b"], "/rules/1"), ("duplicate_rule", "warning", ["a", "c"], "/rules/2")]


def test_lists_keep_their_order(cli: Cli, tmp_path: Path) -> None:
    """Point 44: lists keep their order, so reordered tools are not duplicates."""
    assert only(cli, tmp_path, [allow("a", "x", "y"), allow("b", "y", "x")], "duplicate_rule") == []


def test_duplicate_pair_is_not_also_shadowed(cli: Cli, tmp_path: Path) -> None:
    """Point 44: a duplicate pair is not also shadowed_rule (equal caps would otherwise shadow)."""
    assert [f[0] for f in findings(lint(cli, tmp_path, [calls("a", "x", max=1), calls("b", "x", max=1)])[1])] == [
        "duplicate_rule"]


# == shadowed_rule (§4 table row 9; point 45) ======================================================


def test_wider_deny_shadows(cli: Cli, tmp_path: Path) -> None:
    """§4 / point 45: A's deny_tool glob subsumes B's; point 49: [A, B] in contract order, pointer at
    the later rule's field."""
    assert findings(lint(cli, tmp_path, [deny("a", "x*"), deny("b", "x1")])[1]) == [
        ("shadowed_rule", "warning", ["a", "b"], "/rules/1/tool")]


@pytest.mark.parametrize(("severities", "shadowed"), [
    (("warning", "error"), False), (("error", "warning"), True), (("warning", "warning"), True)])
def test_shadowing_needs_severity_at_least_bs(cli: Cli, tmp_path: Path, severities: tuple[str, str],
                                              shadowed: bool) -> None:
    """§4: A, with severity ≥ B's, subsumes B."""
    rules = [deny("a", "x*", severity=severities[0]), deny("b", "x1", severity=severities[1])]
    assert len(only(cli, tmp_path, rules, "shadowed_rule")) == int(shadowed)


@pytest.mark.parametrize(("a", "b", "shadowed"), [
    ({"type": "tool.*"}, {"type": "tool.call", "tool": "x"}, True),
    ({"type": "tool.*", "tool": "x*"}, {"type": "tool.call", "tool": "xy"}, True),
    ({"type": "tool.result", "ok": False}, {"type": "tool.result", "ok": True}, False),
    ({"type": "tool.call", "args": {"a": 1}}, {"type": "tool.call", "tool": "x", "args": {"a": 1}}, True),
    ({"type": "tool.call", "args": {"a": 1}}, {"type": "tool.call", "args": {"a": 1, "b": 2}}, False),
], ids=["fewer keys", "glob keys subsume", "exact key differs", "equal args", "args differ"])
def test_deny_event_shadowing(cli: Cli, tmp_path: Path, a: dict[str, Any], b: dict[str, Any], shadowed: bool) -> None:
    """Point 45: A's matcher keys are a subset of B's, glob keys subsuming and exact keys (and `args`
    trees) equal."""
    rules = [{"id": "a", "kind": "deny_event", "match": a}, {"id": "b", "kind": "deny_event", "match": b}]
    expected = [("shadowed_rule", "warning", ["a", "b"], "/rules/1/match")] if shadowed else []
    assert findings(lint(cli, tmp_path, rules)[1]) == expected


@pytest.mark.parametrize(("a", "b", "shadowed"), [
    (calls("a", "x", max=1), calls("b", "x", max=3), True),
    (calls("a", "x", max=1), calls("b", "x", min=1, max=3), False),
    (calls("a", "x", max=1), calls("b", "x", max=3, count="successful"), False),
    (calls("a", "x*", max=1), calls("b", "x1", max=3), False),
    (budget("a", max_events=5), budget("b", max_events=10), True),
    (budget("a", max_events=5), budget("b", max_events=10, max_tool_calls=3), False),
    ({"id": "a", "kind": "retry_limit", "max_attempts": 2}, {"id": "b", "kind": "retry_limit", "max_attempts": 3},
     True),
    ({"id": "a", "kind": "retry_limit", "max_attempts": 2},
     {"id": "b", "kind": "retry_limit", "max_attempts": 3, "group_by": "tool"}, False),
], ids=["smaller max", "B has min", "other count", "other glob string", "budget metric", "B bounds more",
        "retry", "other group_by"])
def test_smaller_cap_shadows(cli: Cli, tmp_path: Path, a: Rule, b: Rule, shadowed: bool) -> None:
    """Point 45: caps of one kind on the same glob string with the same count or group_by, or the same
    event_budget metric — A's max ≤ B's and B sets nothing A does not bound as tightly (no min)."""
    assert [f[2] for f in only(cli, tmp_path, [a, b], "shadowed_rule")] == ([["a", "b"]] if shadowed else [])


def test_allow_list_pattern_within_its_list(cli: Cli, tmp_path: Path) -> None:
    """Point 45: within one allow_tools, a pattern subsumed by another of the list (the later of two
    equivalent ones) gives shadowed_rule with rule_ids [that rule] and pointer /rules/i/tools/j."""
    assert findings(lint(cli, tmp_path, [allow("al", "a*", "ab", "a?", "a*")])[1]) == [
        ("shadowed_rule", "warning", ["al"], "/rules/0/tools/1"),
        ("shadowed_rule", "warning", ["al"], "/rules/0/tools/2"),
        ("shadowed_rule", "warning", ["al"], "/rules/0/tools/3")]


@pytest.mark.parametrize(("q", "p", "subsumes"), [
    ("*?", "a", True), ("a**", "a*b", True), ("a*", "a?", True), ("a?", "a*", False), ("?*", "*?", True),
    ("*a*", "?a?", True), ("a?*", "a*", False), ("a?", "ab", True), ("ab", "a?", False), ("**?*", "?", True),
    ("a*b", "a*xb", True), ("x?", "x\U0001f600", True), ("x?y", "x\ny", True), ("x?", "x*", False),
])
def test_subsumes(cli: Cli, tmp_path: Path, q: str, p: str, subsumes: bool) -> None:
    """§4 / point 38: normalise wildcard runs (`?` first, then one `*`); q must match p symbol by
    symbol — a literal the same literal, `?` any one symbol except `*`, `*` any run; v1's newline
    and UTF-16 quirks are ignored. An error deny_tool q shadows a warning deny_tool p iff q ⊒ p (p
    cannot shadow q, being of lower severity)."""
    rules = [deny("q", q), deny("p", p, severity="warning")]
    assert [f[2] for f in only(cli, tmp_path, rules, "shadowed_rule")] == ([["q", "p"]] if subsumes else [])


# == unschemaed_read (§4 table row 10; point 46) ====================================================


def test_every_condition_path_without_schema(cli: Cli, tmp_path: Path) -> None:
    """Point 46: with no output_schema, one warning per (rule, path) for each condition path,
    nested any_of/all_of included."""
    when = {"any_of": [{"path": "a.b", "equals": 1},
                       {"all_of": [{"path": "c", "non_empty": True}, {"path": "/d/0", "matches": {"$regex": "x"}}]}]}
    assert findings(lint(cli, tmp_path, [when_rule("rw", when)])[1]) == [
        ("unschemaed_read", "warning", ["rw"], "/rules/0/when/any_of/0/path"),
        ("unschemaed_read", "warning", ["rw"], "/rules/0/when/any_of/1/all_of/0/path"),
        ("unschemaed_read", "warning", ["rw"], "/rules/0/when/any_of/1/all_of/1/path")]


def test_one_warning_per_rule_and_path(cli: Cli, tmp_path: Path) -> None:
    """Point 46: one warning per (rule, path), even when the rule reads the path twice."""
    when = {"any_of": [{"path": "a", "equals": 1}, {"path": "a", "equals": 2}]}
    assert len(only(cli, tmp_path, [when_rule("rw", when)], "unschemaed_read")) == 1


def test_length_path(cli: Cli, tmp_path: Path) -> None:
    """Point 46: each matches_output_length path no output_schema requires."""
    assert findings(lint(cli, tmp_path, [calls("t", "x", matches_output_length="items")])[1]) == [
        ("unschemaed_read", "warning", ["t"], "/rules/0/matches_output_length")]


@pytest.mark.parametrize("rule", [
    when_rule("r", OUTCOME),
    {"id": "r", "kind": "output_match", "match": {"a": 1}},
    args("r", "x", {"v": {"$from_output": "z"}}, call_index=0),
], ids=["outcome condition", "output_match tree", "$from_output"])
def test_reads_that_are_not_condition_paths(cli: Cli, tmp_path: Path, rule: Rule) -> None:
    """Point 46: only condition and length paths are checked (outcome conditions have no path)."""
    assert findings(lint(cli, tmp_path, [rule])[1]) == []


@pytest.mark.parametrize(("schema", "path"), [
    ({"type": "object", "required": ["a"], "properties": {"a": {"type": "object", "required": ["b"],
                                                                 "properties": {"b": {}}}}}, "a.b"),
    ({"type": "object", "required": ["a"], "properties": {"a": {"type": "object", "required": ["b"],
                                                                 "properties": {"b": {}}}}}, "/a/b"),
    ({"required": ["a"], "properties": {"a": {"type": "array", "minItems": 2,
                                              "items": {"required": ["k"], "properties": {"k": {}}}}}}, "a.1.k"),
    ({"required": ["a"], "properties": {"a": {"minItems": 1, "prefixItems": [{"required": ["z"],
                                                                               "properties": {"z": {}}}]}}}, "a.0.z"),
    ({"$defs": {"A": {"required": ["b"], "properties": {"b": {}}}}, "required": ["a"],
      "properties": {"a": {"$ref": "#/$defs/A"}}}, "a.b"),
], ids=["properties", "pointer", "minItems items", "prefixItems", "$ref"])
def test_required_path_is_quiet(cli: Cli, tmp_path: Path, schema: dict[str, Any], path: str) -> None:
    """Point 46: required when every key segment is in `required` and descends into
    `properties[key]`, every numeric segment has `minItems` > index and descends into
    `prefixItems`/`items`, local `$ref`s followed."""
    rules = [schema_rule(schema), when_rule("rw", {"path": path, "equals": 1})]
    assert findings(lint(cli, tmp_path, rules)[1]) == []


@pytest.mark.parametrize(("schema", "path"), [
    ({"type": "object", "required": ["a"], "properties": {"a": {"type": "object", "properties": {"b": {}}}}}, "a.b"),
    ({"required": ["a"], "properties": {"a": {"type": "array", "minItems": 1, "items": {}}}}, "a.1"),
    ({"allOf": [{"required": ["a"], "properties": {"a": {}}}]}, "a"),
], ids=["not in required", "minItems too small", "allOf never requires"])
def test_unrequired_path_warns(cli: Cli, tmp_path: Path, schema: dict[str, Any], path: str) -> None:
    """Point 46: a path the schema does not require warns (allOf, anyOf, if/then never require)."""
    rules = [schema_rule(schema), when_rule("rw", {"path": path, "equals": 1})]
    assert findings(lint(cli, tmp_path, rules)[1]) == [("unschemaed_read", "warning", ["rw"], "/rules/1/when/path")]


# == --interface (§4 Output; point 46, notation of point 51) ========================================


def interface(cli: Cli, tmp_path: Path, rules: list[Rule]) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = lint(cli, tmp_path, rules, "--interface")[1]["interface"]
    return entries


def test_interface_lists_every_read(cli: Cli, tmp_path: Path) -> None:
    """Point 46: `interface: [{path, rules, required}]`, sorted by path in point 51's notation:
    condition and length paths, every node of output_match trees (objects and their members) and
    `$from_output` paths; `required` from the output_schema."""
    schema = {"type": "object", "required": ["a"],
              "properties": {"a": {"type": "object", "required": ["b"], "properties": {"b": {}}}}}
    rules = [schema_rule(schema), when_rule("rw", {"path": "a.b", "equals": 1}),
             {"id": "om", "kind": "output_match", "match": {"a": {"b": 1, "c": 2}, "my key": {"$regex": "x"}}},
             calls("m", "x", matches_output_length="items"),
             args("ta", "x", {"v": {"$from_output": "z.y"}}, call_index=0)]
    entries = {e["path"]: (e["rules"], e["required"]) for e in interface(cli, tmp_path, rules)}
    assert entries["a"] == (["om"], True)
    assert entries["a.b"] == (["rw", "om"], True)
    assert entries["a.c"] == (["om"], False)
    assert entries['["my key"]'] == (["om"], False)
    assert entries["items"] == (["m"], False)
    assert entries["z.y"] == (["ta"], False)
    assert set(entries) - {"$"} == {"a", "a.b", "a.c", '["my key"]', "items", "z.y"}


def test_interface_is_sorted_by_path(cli: Cli, tmp_path: Path) -> None:
    """Point 46: sorted by path (point 51's notation: `k`, `P.k`, `P["k"]`)."""
    rules = [{"id": "om", "kind": "output_match", "match": {"b": 1, "a.b": 2, "é": {"my key": 3}, "ok_-9": 4}}]
    paths = [e["path"] for e in interface(cli, tmp_path, rules)]
    assert paths == sorted(paths)
    assert set(paths) - {"$"} == {"b", '["a.b"]', '["é"]', '["é"]["my key"]', "ok_-9"}


def test_interface_contains_elements(cli: Cli, tmp_path: Path) -> None:
    """Point 46: array elements of output_match trees as `[]` (a `$contains` operand is one)."""
    rules = [{"id": "om", "kind": "output_match", "match": {"c": {"$contains": {"d": 1}}}}]
    assert {"c", "c[]", "c[].d"} <= {e["path"] for e in interface(cli, tmp_path, rules)}


def test_interface_literal_array_elements(cli: Cli, tmp_path: Path) -> None:
    """Point 46: "every node of output_match trees (objects and their members, array elements as
    `[]`)": the literal array `[{"d": 1}]` at `c` has an element node `c[]` with member `c[].d`."""
    rules = [{"id": "om", "kind": "output_match", "match": {"c": [{"d": 1}]}}]
    assert {"c", "c[]", "c[].d"} <= {e["path"] for e in interface(cli, tmp_path, rules)}


def test_interface_empty_without_output_reads(cli: Cli, tmp_path: Path) -> None:
    """Point 46: a contract that reads no output path lists nothing."""
    assert interface(cli, tmp_path, [deny("d", "x")]) == []


def test_interface_text_rendering(cli: Cli, tmp_path: Path) -> None:
    """§4: `--interface` lists the paths and flags the ones output_schema does not require (text)."""
    write_contract(tmp_path, [when_rule("rw", {"path": "a.b", "equals": 1})])
    result = cli("lint", "--contract", "c.json", "--interface")
    assert result.returncode == 0
    assert any("a.b" in line and not line.startswith("warning") for line in result.stdout.splitlines())


# == v1_trap (§4 table row 11; point 47) ============================================================


@pytest.mark.parametrize(("rule", "trapped"), [
    (allow("r", "a", "*"), True),
    (allow("r", "**"), True),
    (allow("r", " * "), True),
    (allow("r", "*?"), False),
    ({"id": "r", "kind": "require_approval", "tool": "x", "scope": "s"}, True),
    ({"id": "r", "kind": "require_approval", "tool": "x"}, False),
    ({"id": "r", "kind": "stop_is_final"}, True),
    ({"id": "r", "kind": "stop_is_final", "allowed_after": []}, True),
    ({"id": "r", "kind": "stop_is_final", "allowed_after": ["control.*", "run.completed"]}, False),
    ({"id": "r", "kind": "stop_is_final", "stop_type": "halt.*", "allowed_after": ["halt.?"]}, True),
    ({"id": "r", "kind": "stop_is_final", "stop_type": "halt.x", "allowed_after": ["halt.*"]}, False),
], ids=["allow *", "allow **", "allow trimmed", "allow *?", "scope", "no scope", "default list", "empty list",
        "stop listed", "glob not subsumed", "stop subsumed"])
def test_v1_trap(cli: Cli, tmp_path: Path, rule: Rule, trapped: bool) -> None:
    """Point 47: one warning per trap: an allow_tools pattern whose normalised form is `*`; a
    require_approval with `scope`; a stop_is_final whose effective allowed_after (the default list
    included) has no pattern subsuming its stop_type; point 49: [the rule]."""
    got = [f[:3] for f in only(cli, tmp_path, [rule], "v1_trap")]
    assert got == ([("v1_trap", "warning", ["r"])] if trapped else [])


# == unrequired_subject (point 48) ==================================================================


@pytest.mark.parametrize("rule", [
    args("r", "x*"),
    {"id": "r", "kind": "precedence", "before": {"type": "a"}, "after": {"type": "b"}},
    {"id": "r", "kind": "approval_bound", "tool": "x"},
    {"id": "r", "kind": "latency_budget", "max_ms": 5},
    {"id": "r", "kind": "result_size", "max_bytes": 5},
], ids=["tool_args", "precedence", "approval_bound", "latency_budget", "result_size"])
def test_unrequired_subject(cli: Cli, tmp_path: Path, rule: Rule) -> None:
    """Point 48: `unrequired_subject` (warning; rule_ids [the rule]; pointer /rules/i) for a subject
    nothing requires."""
    code, report = lint(cli, tmp_path, [deny("d", "zz"), rule])
    assert (code, findings(report)) == (0, [("unrequired_subject", "warning", ["r"], "/rules/1")])


@pytest.mark.parametrize("rule", [
    {"id": "r", "kind": "forbidden_when", "tool": "x", "when": OUTCOME},
    {"id": "r", "kind": "failure_handled", "within_events": 2},
    args("r", "x", call_index=0),
    {"id": "r", "kind": "latency_budget", "max_ms": 5, "percentile": 90},
], ids=["forbidden_when", "failure_handled", "call_index", "percentile"])
def test_subject_exempt(cli: Cli, tmp_path: Path, rule: Rule) -> None:
    """Point 48: forbidden_when and failure_handled are exempt; only tool_args without call_index and
    latency_budget without percentile have subjects."""
    assert only(cli, tmp_path, [rule], "unrequired_subject") == []


@pytest.mark.parametrize(("requirement", "required"), [
    (calls("q", "x1", min=1, severity="warning"), True),
    (calls("q", "xa*", min=1), True),
    (need("q", call("x?")), True),
    (need("q", call("xa", ok=True)), True),
    (calls("q", "*", min=1), False),
    (when_rule("q", OUTCOME) | {"tool": "x1"}, False),
], ids=["literal R any severity", "subsumed glob", "require_event glob", "require_event extra key",
        "wider glob", "required_when"])
def test_call_subject_required(cli: Cli, tmp_path: Path, requirement: Rule, required: bool) -> None:
    """Point 48: a call subject on glob g is required when a literal t that g matches has R(t) ≥ 1
    (any severity) or a requirement on a glob that g subsumes has min ≥ 1."""
    found = only(cli, tmp_path, [args("ta", "x*"), requirement], "unrequired_subject")
    assert found == ([] if required else [("unrequired_subject", "warning", ["ta"], "/rules/0")])


@pytest.mark.parametrize(("after", "requirement", "required"), [
    ({"type": "b", "tool": "x*"}, need("r", {"tool": "x*", "type": "b"}, min=2), True),
    ({"type": "b"}, need("r", {"type": "b"}, min=0), False),
    ({"type": "b"}, need("r", {"type": "b", "tool": "x"}), False),
], ids=["equal matcher", "min 0", "unequal matcher"])
def test_precedence_subject_and_require_event(cli: Cli, tmp_path: Path, after: dict[str, Any], requirement: Rule,
                                              required: bool) -> None:
    """Point 48: a precedence subject is required when an equal matcher has require_event.min ≥ 1."""
    rule = {"id": "p", "kind": "precedence", "before": {"type": "a"}, "after": after}
    assert len(only(cli, tmp_path, [rule, requirement], "unrequired_subject")) == int(not required)


def test_precedence_subject_required_by_literal_call(cli: Cli, tmp_path: Path) -> None:
    """Point 48: its `after` a literal call matcher with R ≥ 1."""
    assert only(cli, tmp_path, [prec("p", "a", "b"), order("o", "b")], "unrequired_subject") == []


def test_dead_rule_gets_no_unrequired_subject(cli: Cli, tmp_path: Path) -> None:
    """Point 48: a rule with a dead_rule finding gets no unrequired_subject."""
    assert [f[0] for f in findings(lint(cli, tmp_path, [deny("d", "x"), args("ta", "x")])[1])] == ["dead_rule"]


# == finding order (point 49) =======================================================================


def test_sorted_by_code_row_not_by_name(cli: Cli, tmp_path: Path) -> None:
    """Point 49: sorted by the lowest rule index named, then the code's row in the table (row 1
    required_but_forbidden before row 6 dead_rule, though `dead_rule` sorts first by name and its
    pointer is earlier), then pointer."""
    rules = [deny("d", "x"), {"id": "ra", "kind": "require_approval", "tool": "x"}, calls("r", "x", min=1)]
    assert findings(lint(cli, tmp_path, rules)[1]) == [
        ("required_but_forbidden", "error", ["d", "r"], "/rules/2/tool"),
        ("dead_rule", "warning", ["d", "ra"], "/rules/1/tool")]


def test_sorted_by_lowest_rule_index_first(cli: Cli, tmp_path: Path) -> None:
    """Point 49: a finding naming rule 0 comes before one naming only later rules, whatever its code."""
    rules = [allow("al", "*", "a"), when_rule("rw", {"path": "a", "equals": 1}), deny("d", "q"), deny("d2", "q")]
    assert [(f[0], f[2]) for f in findings(lint(cli, tmp_path, rules)[1])] == [
        ("shadowed_rule", ["al"]), ("v1_trap", ["al"]), ("unschemaed_read", ["rw"]), ("duplicate_rule", ["d", "d2"])]


def test_ties_sorted_by_pointer(cli: Cli, tmp_path: Path) -> None:
    """Point 49: same lowest rule and code: by pointer (/rules/1/tool before /rules/2/tool, though the
    tools b, a are in the other order)."""
    rules = [deny("d", "*"), calls("rb", "b", min=1), calls("ra", "a", min=1)]
    assert [f[3] for f in findings(lint(cli, tmp_path, rules)[1])] == ["/rules/1/tool", "/rules/2/tool"]


@pytest.mark.parametrize(("count", "message"), [
    ("calls", "cap allows at most 1 call, but the rules require 2: a must be called (n needs 2 calls)."),
    ("successful", "cap allows at most 1 successful call, but the rules require 2: a must be called (n needs 2 "
                   "successful calls)."),
])
def test_count_contradiction_counts_in_words_of_one_or_more(cli: Cli, tmp_path: Path, count: str, message: str) -> None:
    rules = [calls("cap", "a", max=1, count=count), calls("n", "a", min=2, count=count)]
    (finding,) = lint(cli, tmp_path, rules)[1]["findings"]
    assert (finding["code"], finding["message"]) == ("count_contradiction", message)
