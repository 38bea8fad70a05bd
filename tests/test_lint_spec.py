"""`lint` (spec v2 §4 and the binding resolutions of §10 "lint (§4)", points 37-50), tested through
the library on contract files, and the CLI for what only the command does.

Written from the spec text alone — v2-extensions.md §3 (rule kinds), §4 (`lint`) and points 37-50,
which win where they differ from §4, plus v1-semantics.md §2 for the version-1 kinds — without reading
the implementation. Every expected finding (code, level, rule_ids, pointer) and exit code below comes
from those words, never from running the tool. Where the spec leaves a pointer open (which field of a
matcher, of a duplicate, of a requirement other than `tool_calls`), a test checks only that the
pointer lies inside the rule it must name; messages are only checked to be non-empty.

Conventions taken from point 49: rule_ids are listed in contract order, so the contracts below put
the rules in the order point 49 names them (forbidding rule before requirement, A before B, ...),
which makes both readings agree.

Each test writes one contract into tmp_path and lints it: `lint()` loads the file and reports as
`lint --format json` does, in this process (quick); `run_lint()` runs
`python -m agent_invariants lint --contract <file> --format json` in a subprocess (cwd=tmp_path),
for exit codes, text output and invalid contracts.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from agent_invariants.contract import load_contract
from agent_invariants.lint import lint_contract
from agent_invariants.render.json import to_json

import cli_zygote

SCHEMA = "agent-invariants/lint/v1"
ERROR_CODES = ("required_but_forbidden", "count_contradiction", "order_contradiction",
               "self_precedence", "reference_to_forbidden")


# -- helpers --------------------------------------------------------------------------------------

def rule(rule_id: str, kind: str, **fields: Any) -> dict[str, Any]:
    """One contract rule; `severity` may be passed among the fields."""
    return {"id": rule_id, "kind": kind, **fields}


def warning(r: dict[str, Any]) -> dict[str, Any]:
    """The same rule with `severity: "warning"`."""
    return {**r, "severity": "warning"}


def call(tool: str, **extra: Any) -> dict[str, Any]:
    """The call matcher `{type: "tool.call", tool}` (extra keys narrow it)."""
    return {"type": "tool.call", "tool": tool, **extra}


def from_result(tool: str, path: str = "v") -> dict[str, Any]:
    return {"$from_result": {"tool": tool, "path": path}}


def deny(rule_id: str, tool: str, **f: Any) -> dict[str, Any]:
    return rule(rule_id, "deny_tool", tool=tool, **f)


def need(rule_id: str, tool: str, n: int = 1, **f: Any) -> dict[str, Any]:
    """`tool_calls {tool, min: n}`: makes R(tool) = n when tool is literal."""
    return rule(rule_id, "tool_calls", tool=tool, min=n, **f)


def cap(rule_id: str, tool: str, n: int, **f: Any) -> dict[str, Any]:
    """`tool_calls {tool, max: n}`."""
    return rule(rule_id, "tool_calls", tool=tool, max=n, **f)


def contract(*rules: dict[str, Any], version: int = 2, name: str = "lint-spec") -> dict[str, Any]:
    return {"version": version, "name": name, "rules": list(rules)}


class F(NamedTuple):
    """A finding without its message."""
    code: str
    level: str
    rule_ids: list[str]
    pointer: str


@dataclass
class Lint:
    rc: int
    stdout: str
    stderr: str

    @property
    def report(self) -> dict[str, Any]:
        return json.loads(self.stdout)

    @property
    def findings(self) -> list[F]:
        found = self.report["findings"]
        for f in found:
            assert isinstance(f["message"], str) and f["message"].strip(), f
        return [F(f["code"], f["level"], f["rule_ids"], f["pointer"]) for f in found]

    def of(self, code: str) -> list[F]:
        return [f for f in self.findings if f.code == code]

    def codes(self) -> list[str]:
        return [f.code for f in self.findings]


def run_lint(tmp_path: Path, document: dict[str, Any] | str, *args: str, fmt: str = "json") -> Lint:
    """Write the contract (a dict, or raw text) and run `lint` on it."""
    path = tmp_path / "contract.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document), encoding="utf-8")
    cmd = [sys.executable, "-m", "agent_invariants", "lint", "--contract", str(path), "--format", fmt,
           *args]
    done = cli_zygote.as_text(cli_zygote.run_python(cmd[1:], tmp_path, timeout=120))
    return Lint(done.returncode, done.stdout, done.stderr)


def lint(tmp_path: Path, *rules: dict[str, Any], args: tuple[str, ...] = (), version: int = 2) -> Lint:
    """Lint a contract file made of these rules, as `lint --format json` reports it (in this
    process, through the library: the command's own paths are tested with `run_lint`); the
    contract must load."""
    path = tmp_path / "contract.json"
    path.write_text(json.dumps(contract(*rules, version=version)), encoding="utf-8")
    report = lint_contract(load_contract(path), with_interface="--interface" in args)
    strict = "--strict" in args
    rc = 1 if report.errors or (strict and report.findings) else 0
    return Lint(rc, to_json(report), "")


def inside(pointer: str, index: int) -> bool:
    """The pointer is /rules/<index> or a field below it."""
    return pointer == f"/rules/{index}" or pointer.startswith(f"/rules/{index}/")


def one(result: Lint, code: str) -> F:
    """The single finding of this code."""
    found = result.of(code)
    assert len(found) == 1, result.findings
    return found[0]


def assert_finding(result: Lint, code: str, level: str, rule_ids: list[str],
                   pointer: str | int) -> None:
    """Exactly one finding of `code`, with these fields; an int pointer only names the rule it must
    lie in (the spec leaves the field open)."""
    f = one(result, code)
    assert (f.level, f.rule_ids) == (level, rule_ids), result.findings
    if isinstance(pointer, int):
        assert inside(f.pointer, pointer), f
    else:
        assert f.pointer == pointer, f


NO_SHELL = deny("no-shell", "shell.*")
MUST_EXEC = need("must-exec", "shell.exec")


# -- §4's example, the report and the text line ---------------------------------------------------

def test_section4_example_gives_exactly_one_required_but_forbidden_error(tmp_path: Path) -> None:
    result = lint(tmp_path, NO_SHELL, MUST_EXEC)
    assert result.findings == [F("required_but_forbidden", "error", ["no-shell", "must-exec"],
                                 "/rules/1/tool")]
    assert result.rc == 1


@pytest.mark.parametrize("kept", [NO_SHELL, MUST_EXEC], ids=["deny_only", "requirement_only"])
def test_section4_example_without_either_rule_exits_0(tmp_path: Path, kept: dict[str, Any]) -> None:
    result = lint(tmp_path, kept)
    assert result.rc == 0
    assert result.findings == []


def test_json_report_has_schema_contract_counts_and_findings(tmp_path: Path) -> None:
    result = run_lint(tmp_path, contract(NO_SHELL, MUST_EXEC, name="shell-policy"))
    report = result.report
    assert set(report) == {"schema", "contract", "errors", "warnings", "findings"}
    assert report["schema"] == SCHEMA
    assert report["contract"] == {"name": "shell-policy", "version": 2}
    assert (report["errors"], report["warnings"]) == (1, 0)
    assert set(report["findings"][0]) == {"code", "level", "rule_ids", "pointer", "message"}


def test_json_report_counts_errors_and_warnings_separately(tmp_path: Path) -> None:
    # one required_but_forbidden (error) and one v1_trap (warning)
    result = lint(tmp_path, NO_SHELL, MUST_EXEC, rule("stop", "stop_is_final"))
    levels = [f.level for f in result.findings]
    assert sorted(levels) == ["error", "warning"]
    assert (result.report["errors"], result.report["warnings"]) == (1, 1)


def test_text_format_prints_the_section4_line_then_a_count_line(tmp_path: Path) -> None:
    result = run_lint(tmp_path, contract(NO_SHELL, MUST_EXEC), fmt="text")
    assert result.rc == 1
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    assert len(lines) == 2, result.stdout
    prefix = "error required_but_forbidden [no-shell, must-exec] /rules/1/tool: "
    assert lines[0].startswith(prefix) and lines[0][len(prefix):].strip()


def test_output_option_writes_the_json_report_to_the_file(tmp_path: Path) -> None:
    out = tmp_path / "lint.json"
    result = run_lint(tmp_path, contract(NO_SHELL, MUST_EXEC), "--output", str(out))
    assert result.rc == 1
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["schema"] == SCHEMA
    assert [(f["code"], f["rule_ids"]) for f in report["findings"]] == [
        ("required_but_forbidden", ["no-shell", "must-exec"])]


# -- exit codes (point 50) ------------------------------------------------------------------------

def test_error_finding_exits_1(tmp_path: Path) -> None:
    assert lint(tmp_path, NO_SHELL, MUST_EXEC).rc == 1


def test_warnings_only_exit_0(tmp_path: Path) -> None:
    result = lint(tmp_path, rule("stop", "stop_is_final"))
    assert [f.level for f in result.findings] == ["warning"]
    assert result.rc == 0


def test_warnings_only_exit_1_with_strict(tmp_path: Path) -> None:
    result = lint(tmp_path, rule("stop", "stop_is_final"), args=("--strict",))
    assert [f.level for f in result.findings] == ["warning"]
    assert result.rc == 1


def test_no_findings_exit_0_even_with_strict(tmp_path: Path) -> None:
    result = lint(tmp_path, deny("no-shell", "shell.*"), args=("--strict",))
    assert result.findings == []
    assert result.rc == 0


@pytest.mark.parametrize("document", [
    contract(),                                                               # rules: [] (1..10,000)
    contract(rule("odd", "no_such_kind", tool="x")),                          # unknown kind
    contract(rule("re", "require_event", match={"type": "x"}, min=2, max=1)),  # min > max
    contract(deny("same", "a"), deny("same", "b")),                           # duplicate id
    contract(rule("budget", "event_budget")),                                 # no bound
    contract(rule("calls", "tool_calls", tool="x", min=3, max=2)),            # min > max
    '{"version": 2, "name": "x", "rules": [',                                 # not JSON
], ids=["no_rules", "unknown_kind", "require_event_min_over_max", "duplicate_id", "empty_budget",
        "tool_calls_min_over_max", "bad_json"])
@pytest.mark.parametrize("fmt", ["json", "text"])
def test_invalid_contract_exits_2_with_nothing_on_stdout(tmp_path: Path, document: Any,
                                                         fmt: str) -> None:
    result = run_lint(tmp_path, document, "--strict", fmt=fmt)
    assert result.rc == 2
    assert result.stdout == ""


def test_version_1_contract_with_a_version_2_kind_exits_2(tmp_path: Path) -> None:
    """A v2 kind in a version-1 contract is a load error (§0)."""
    result = run_lint(tmp_path, contract(NO_SHELL, MUST_EXEC, version=1))
    assert result.rc == 2
    assert result.stdout == ""


# -- version-1 contracts are linted too (point 37) ------------------------------------------------

def test_version_1_contract_gets_required_but_forbidden(tmp_path: Path) -> None:
    result = lint(tmp_path, NO_SHELL, rule("must-exec", "require_event", match=call("shell.exec")),
                  version=1)
    assert_finding(result, "required_but_forbidden", "error", ["no-shell", "must-exec"], 1)
    assert result.report["contract"]["version"] == 1
    assert result.rc == 1


def test_version_1_contract_gets_v1_trap(tmp_path: Path) -> None:
    result = lint(tmp_path, rule("all", "allow_tools", tools=["*"]), version=1)
    assert result.findings == [F("v1_trap", "warning", ["all"], "/rules/0/tools/0")]
    assert result.rc == 0


# -- levels next to warning-severity rules (point 37) ---------------------------------------------

@pytest.mark.parametrize("forbid, require", [
    (warning(NO_SHELL), MUST_EXEC),
    (NO_SHELL, warning(MUST_EXEC)),
    (warning(NO_SHELL), warning(MUST_EXEC)),
], ids=["warning_deny", "warning_requirement", "both_warning"])
def test_error_condition_resting_on_a_warning_rule_is_a_warning(
        tmp_path: Path, forbid: dict[str, Any], require: dict[str, Any]) -> None:
    result = lint(tmp_path, forbid, require)
    assert result.findings == [F("required_but_forbidden", "warning", ["no-shell", "must-exec"],
                                 "/rules/1/tool")]
    assert result.rc == 0


def test_error_condition_resting_on_a_warning_rule_exits_1_with_strict(tmp_path: Path) -> None:
    result = lint(tmp_path, warning(NO_SHELL), MUST_EXEC, args=("--strict",))
    assert [f.level for f in result.findings] == ["warning"]
    assert result.rc == 1


# -- R(t): which rules make a literal tool required (point 38) ------------------------------------

@pytest.mark.parametrize("requirement", [
    need("req", "x"),
    need("req", "x", count="successful"),
    rule("req", "require_event", match=call("x")),                           # min defaults to 1
    rule("req", "require_event", match=call("x", ok=True)),                  # other keys only narrow
    rule("req", "require_event", match=call("x"), min=2),
    rule("req", "tool_order", tools=["x"]),
    rule("req", "tool_order", tools=["y", "x"], mode="exact"),
    rule("req", "tool_order", tools=["x", "y"], mode="contiguous"),
    rule("req", "tool_order", tools=["y", "x"], mode="any_order"),
    rule("req", "tool_args", tool="x", call_index=0, match={"q": "a"}),
], ids=["tool_calls_min", "tool_calls_min_successful", "require_event_default_min",
        "require_event_narrowed", "require_event_min_2", "tool_order_subsequence",
        "tool_order_exact", "tool_order_contiguous", "tool_order_any_order", "tool_args_call_index"])
def test_requirement_source_makes_a_denied_tool_required_but_forbidden(
        tmp_path: Path, requirement: dict[str, Any]) -> None:
    result = lint(tmp_path, deny("deny", "x"), requirement)
    pointer = "/rules/1/tool" if requirement["kind"] == "tool_calls" else 1
    assert_finding(result, "required_but_forbidden", "error", ["deny", "req"], pointer)


@pytest.mark.parametrize("non_requirement", [
    rule("req", "required_when", tool="x", when={"path": "flag", "equals": True}),
    rule("req", "tool_calls", tool="x", matches_output_length="items"),
    rule("req", "output_match", match={"total": from_result("x", "total")}),
    rule("req", "require_event", match=call("x"), min=0),
    rule("req", "require_event", match={"type": "tool.*", "tool": "x"}),     # type not exactly tool.call
    rule("req", "require_event", match={"type": "tool.result", "tool": "x"}),
    rule("req", "require_event", match={"tool": "x"}),                        # no type at all
    need("req", "x*"),                                                        # not a literal tool
], ids=["required_when", "matches_output_length", "from_result", "require_event_min_0",
        "require_event_type_glob", "require_event_result", "require_event_without_type",
        "glob_requirement"])
def test_rule_that_does_not_make_a_tool_required_gives_no_required_but_forbidden(
        tmp_path: Path, non_requirement: dict[str, Any]) -> None:
    result = lint(tmp_path, deny("deny", "x*"), non_requirement)
    assert result.of("required_but_forbidden") == []


def test_required_but_forbidden_names_the_first_rule_with_the_largest_requirement(
        tmp_path: Path) -> None:
    result = lint(tmp_path,
                  deny("deny", "x"),
                  need("once", "x", 1),
                  rule("thrice", "require_event", match=call("x"), min=3),
                  rule("order", "tool_order", tools=["x", "x", "x"]))
    assert_finding(result, "required_but_forbidden", "error", ["deny", "thrice"], 2)


def test_r_is_the_maximum_over_sources_not_their_sum(tmp_path: Path) -> None:
    result = lint(tmp_path, cap("cap", "x", 1), need("once", "x", 1),
                  rule("order", "tool_order", tools=["x", "y"]),
                  rule("order2", "tool_order", tools=["y", "x"]))
    assert result.of("count_contradiction") == []


def test_r_counts_the_entries_of_one_tool_order(tmp_path: Path) -> None:
    result = lint(tmp_path, cap("cap", "x", 1), rule("order", "tool_order", tools=["x", "y", "x"]))
    assert_finding(result, "count_contradiction", "error", ["cap", "order"], "/rules/0/max")


# -- required_but_forbidden (table row 1, point 40) -----------------------------------------------

def test_required_tool_outside_an_error_allow_list_is_required_but_forbidden(tmp_path: Path) -> None:
    result = lint(tmp_path, rule("allow", "allow_tools", tools=["a", "b"]), need("need-c", "c"))
    assert result.findings == [F("required_but_forbidden", "error", ["allow", "need-c"],
                                 "/rules/1/tool")]


def test_required_tool_inside_the_allow_list_is_fine(tmp_path: Path) -> None:
    result = lint(tmp_path, rule("allow", "allow_tools", tools=["a", "c*"]), need("need-c", "c"))
    assert result.findings == []


def test_required_tool_not_matched_by_deny_glob_is_fine(tmp_path: Path) -> None:
    result = lint(tmp_path, deny("deny", "shell.*"), need("need", "shellexec"))
    assert result.of("required_but_forbidden") == []


@pytest.mark.parametrize("bound", [
    cap("cap", "x", 0),
    cap("cap", "*", 0),
    rule("cap", "event_budget", max_tool_calls=0),
    rule("cap", "event_budget", max_events=0),
    rule("cap", "require_event", match=call("x"), min=0, max=0),
    rule("cap", "require_event", match={"type": "tool.*"}, min=0, max=0),
], ids=["tool_calls_max_0", "tool_calls_glob_max_0", "max_tool_calls_0", "max_events_0",
        "require_event_max_0", "require_event_type_glob_max_0"])
def test_cap_of_0_is_required_but_forbidden_not_count_contradiction(tmp_path: Path,
                                                                    bound: dict[str, Any]) -> None:
    result = lint(tmp_path, bound, need("need", "x"))
    assert result.findings == [F("required_but_forbidden", "error", ["cap", "need"],
                                 "/rules/1/tool")]


def test_one_required_but_forbidden_per_tool_of_one_forbidding_rule(tmp_path: Path) -> None:
    result = lint(tmp_path, deny("deny-all", "*"), need("need-z", "z"), need("need-a", "a"))
    assert result.findings == [
        F("required_but_forbidden", "error", ["deny-all", "need-z"], "/rules/1/tool"),
        F("required_but_forbidden", "error", ["deny-all", "need-a"], "/rules/2/tool"),
    ]


def test_one_required_but_forbidden_per_forbidding_rule_of_one_tool(tmp_path: Path) -> None:
    result = lint(tmp_path, deny("deny-prefix", "x*"), deny("deny-suffix", "*x"), need("need", "x"))
    assert result.findings == [
        F("required_but_forbidden", "error", ["deny-prefix", "need"], "/rules/2/tool"),
        F("required_but_forbidden", "error", ["deny-suffix", "need"], "/rules/2/tool"),
    ]


def test_one_required_but_forbidden_for_a_tool_required_by_several_rules(tmp_path: Path) -> None:
    result = lint(tmp_path, deny("deny", "x"), need("need", "x"),
                  rule("need-too", "require_event", match=call("x")))
    assert len(result.of("required_but_forbidden")) == 1


# -- count_contradiction (table row 2, points 39-40) ----------------------------------------------

def test_sum_of_requirements_over_a_tool_calls_max_is_count_contradiction(tmp_path: Path) -> None:
    result = lint(tmp_path, cap("cap", "a*", 2), need("a1", "a1", 2), need("a2", "a2", 1),
                  need("b", "b", 5))
    assert result.findings == [F("count_contradiction", "error", ["cap", "a1", "a2"], "/rules/0/max")]


def test_an_error_finding_names_the_error_rule_it_rests_on(tmp_path: Path) -> None:
    # the literal tool's requirement is a warning's; the error level rests on the glob's (point 37),
    # which the finding must then name among its rules (point 49)
    result = lint(tmp_path, cap("cap", "*", 1), warning(need("a-x", "a.x", 2)), need("any", "*", 2))
    assert result.findings == [F("count_contradiction", "error", ["cap", "a-x", "any"], "/rules/0/max")]


def test_sum_of_requirements_equal_to_the_bound_is_fine(tmp_path: Path) -> None:
    result = lint(tmp_path, cap("cap", "a*", 3), need("a1", "a1", 2), need("a2", "a2", 1))
    assert result.findings == []


@pytest.mark.parametrize("metric", ["max_tool_calls", "max_events"])
def test_sum_of_requirements_over_an_event_budget_is_count_contradiction(tmp_path: Path,
                                                                         metric: str) -> None:
    result = lint(tmp_path, rule("budget", "event_budget", **{metric: 3}), need("a", "a", 2),
                  need("b", "b", 2))
    assert result.findings == [F("count_contradiction", "error", ["budget", "a", "b"],
                                 f"/rules/0/{metric}")]


@pytest.mark.parametrize("metric", ["max_tool_calls", "max_events"])
def test_requirements_within_an_event_budget_are_fine(tmp_path: Path, metric: str) -> None:
    result = lint(tmp_path, rule("budget", "event_budget", **{metric: 4}), need("a", "a", 2),
                  need("b", "b", 2))
    assert result.findings == []


@pytest.mark.parametrize("matcher", [
    {"type": "tool.call", "tool": "a*"},
    {"type": "tool.*", "tool": "a*"},
    {"tool": "a*"},
    {"type": "tool.call"},
], ids=["type_and_tool", "type_glob", "tool_only", "type_only"])
def test_call_matcher_require_event_max_bounds_the_sum(tmp_path: Path,
                                                       matcher: dict[str, Any]) -> None:
    result = lint(tmp_path, rule("re", "require_event", match=matcher, min=0, max=2),
                  need("a1", "a1", 2), need("a2", "a2", 1))
    assert_finding(result, "count_contradiction", "error", ["re", "a1", "a2"], "/rules/0/max")


@pytest.mark.parametrize("extra", [{"ok": True}, {"args": {"q": "x"}}], ids=["ok", "args"])
def test_require_event_matcher_with_another_key_bounds_nothing(tmp_path: Path,
                                                               extra: dict[str, Any]) -> None:
    result = lint(tmp_path, rule("re", "require_event", match=call("a", **extra), min=0, max=1),
                  need("a", "a", 2))
    assert result.of("count_contradiction") == []


def test_retry_limit_by_tool_compares_tool_by_tool(tmp_path: Path) -> None:
    """Calls a, b, c pass a per-tool limit of 2 (point 39)."""
    result = lint(tmp_path, rule("retry", "retry_limit", max_attempts=2, group_by="tool"),
                  need("a", "a", 2), need("b", "b", 2), need("c", "c", 1))
    assert result.findings == []


def test_retry_limit_by_tool_below_one_tools_requirement_is_count_contradiction(
        tmp_path: Path) -> None:
    result = lint(tmp_path, rule("retry", "retry_limit", max_attempts=2, group_by="tool"),
                  need("a", "a", 3), need("b", "b", 2))
    assert result.findings == [F("count_contradiction", "error", ["retry", "a"],
                                 "/rules/0/max_attempts")]


def test_retry_limit_by_call_signature_bounds_nothing(tmp_path: Path) -> None:
    result = lint(tmp_path, rule("retry", "retry_limit", max_attempts=2), need("a", "a", 3))
    assert result.findings == []


def test_successful_count_bound_ignores_call_requirements(tmp_path: Path) -> None:
    result = lint(tmp_path, cap("cap", "a", 1, count="successful"), need("a", "a", 2))
    assert result.of("count_contradiction") == []


def test_successful_count_bound_below_a_successful_min_is_count_contradiction(
        tmp_path: Path) -> None:
    result = lint(tmp_path, cap("cap", "a", 1, count="successful"),
                  need("a", "a", 2, count="successful"))
    assert result.findings == [F("count_contradiction", "error", ["cap", "a"], "/rules/0/max")]


def test_calls_bound_below_a_successful_min_is_count_contradiction(tmp_path: Path) -> None:
    # R(t) takes tool_calls.min of either count
    result = lint(tmp_path, cap("cap", "a", 1), need("a", "a", 2, count="successful"))
    assert result.findings == [F("count_contradiction", "error", ["cap", "a"], "/rules/0/max")]


def test_call_index_at_the_max_is_count_contradiction(tmp_path: Path) -> None:
    result = lint(tmp_path, cap("cap", "a", 2),
                  rule("third", "tool_args", tool="a", call_index=2, match={"q": 1}))
    assert_finding(result, "count_contradiction", "error", ["cap", "third"], "/rules/0/max")


def test_call_index_below_the_max_is_fine(tmp_path: Path) -> None:
    result = lint(tmp_path, cap("cap", "a", 2),
                  rule("second", "tool_args", tool="a", call_index=1, match={"q": 1}))
    assert result.of("count_contradiction") == []


def test_require_event_min_over_max_events_is_count_contradiction(tmp_path: Path) -> None:
    result = lint(tmp_path, rule("budget", "event_budget", max_events=3),
                  rule("msgs", "require_event", match={"type": "agent.message"}, min=4))
    assert result.findings == [F("count_contradiction", "error", ["budget", "msgs"],
                                 "/rules/0/max_events")]


def test_require_event_min_at_max_events_is_fine(tmp_path: Path) -> None:
    result = lint(tmp_path, rule("budget", "event_budget", max_events=3),
                  rule("msgs", "require_event", match={"type": "agent.message"}, min=3))
    assert result.findings == []


def test_glob_requirement_over_a_bound_whose_coverage_subsumes_it(tmp_path: Path) -> None:
    result = lint(tmp_path, cap("cap", "*", 2), need("shells", "shell.*", 3))
    assert result.findings == [F("count_contradiction", "error", ["cap", "shells"], "/rules/0/max")]


def test_glob_requirement_over_a_narrower_bound_is_fine(tmp_path: Path) -> None:
    result = lint(tmp_path, cap("cap", "shell.exec", 2), need("shells", "shell.*", 3))
    assert result.of("count_contradiction") == []


def test_count_contradiction_resting_on_a_warning_requirement_is_a_warning(tmp_path: Path) -> None:
    result = lint(tmp_path, cap("cap", "a", 1), warning(need("a", "a", 2)))
    assert result.findings == [F("count_contradiction", "warning", ["cap", "a"], "/rules/0/max")]
    assert result.rc == 0


def test_count_contradiction_on_a_warning_bound_is_a_warning(tmp_path: Path) -> None:
    result = lint(tmp_path, warning(cap("cap", "a", 1)), need("a", "a", 2))
    assert result.findings == [F("count_contradiction", "warning", ["cap", "a"], "/rules/0/max")]


# -- order_contradiction (table row 3, point 41) --------------------------------------------------

def a_before_b(rule_id: str, kind: str = "precedence", **f: Any) -> dict[str, Any]:
    return rule(rule_id, kind, before=call("a"), after=call("b"), **f)


def b_before_a(rule_id: str, kind: str = "precedence", **f: Any) -> dict[str, Any]:
    return rule(rule_id, kind, before=call("b"), after=call("a"), **f)


@pytest.mark.parametrize("kinds", [("precedence", "precedence"), ("require_order", "require_order"),
                                   ("precedence", "require_order"), ("require_order", "precedence")])
@pytest.mark.parametrize("required", ["a", "b"])
def test_opposite_orders_with_one_tool_required_are_an_error(tmp_path: Path,
                                                             kinds: tuple[str, str],
                                                             required: str) -> None:
    result = lint(tmp_path, a_before_b("ab", kinds[0]), b_before_a("ba", kinds[1]),
                  need("need", required))
    assert_finding(result, "order_contradiction", "error", ["ab", "ba"], 1)


def test_opposite_orders_without_requirements_are_a_warning(tmp_path: Path) -> None:
    result = lint(tmp_path, a_before_b("ab"), b_before_a("ba", "require_order"))
    assert_finding(result, "order_contradiction", "warning", ["ab", "ba"], 1)


def test_opposite_orders_with_a_warning_requirement_are_a_warning(tmp_path: Path) -> None:
    result = lint(tmp_path, a_before_b("ab"), b_before_a("ba"), warning(need("need", "a")))
    assert_finding(result, "order_contradiction", "warning", ["ab", "ba"], 1)


def test_opposite_orders_ignore_correlate_window_and_scope(tmp_path: Path) -> None:
    result = lint(tmp_path, a_before_b("ab", correlate=["id"], within_events=5, scope="all"),
                  b_before_a("ba", scope="first"), need("need", "a"))
    assert_finding(result, "order_contradiction", "error", ["ab", "ba"], 1)


def test_opposite_orders_allow_extra_keys_on_before(tmp_path: Path) -> None:
    result = lint(tmp_path,
                  rule("ab", "precedence", before=call("a", args={"mode": "x"}), after=call("b")),
                  b_before_a("ba"), need("need", "a"))
    assert_finding(result, "order_contradiction", "error", ["ab", "ba"], 1)


def test_extra_key_on_after_breaks_the_order_edge(tmp_path: Path) -> None:
    result = lint(tmp_path,
                  rule("ab", "precedence", before=call("a"), after=call("b", args={"mode": "x"})),
                  b_before_a("ba"), need("need", "a"))
    assert result.of("order_contradiction") == []


def test_orders_on_glob_tools_are_no_order_contradiction(tmp_path: Path) -> None:
    result = lint(tmp_path, rule("ab", "precedence", before=call("a*"), after=call("b")),
                  rule("ba", "precedence", before=call("b"), after=call("a*")), need("need", "b"))
    assert result.of("order_contradiction") == []


def test_same_direction_twice_is_no_order_contradiction(tmp_path: Path) -> None:
    result = lint(tmp_path, a_before_b("ab"), a_before_b("ab2", "require_order"), need("need", "a"))
    assert result.of("order_contradiction") == []


@pytest.mark.parametrize("tools", [["b", "a"], ["x*", "b", "a"], ["b", "x", "a", "b"]])
def test_exact_tool_order_putting_b_before_every_a_contradicts_a_before_b(tmp_path: Path,
                                                                           tools: list[str]) -> None:
    result = lint(tmp_path, rule("flow", "tool_order", tools=tools, mode="exact"), a_before_b("ab"))
    assert_finding(result, "order_contradiction", "error", ["flow", "ab"], 1)


@pytest.mark.parametrize("tools, mode", [
    (["a", "b"], "exact"),
    (["*a", "b", "a"], "exact"),      # an entry before the first b intersects a
    (["b", "a"], "subsequence"),
    (["b", "a"], "any_order"),
], ids=["a_first", "glob_entry_may_be_a", "subsequence", "any_order"])
def test_tool_order_that_does_not_put_b_before_every_a_is_fine(tmp_path: Path, tools: list[str],
                                                               mode: str) -> None:
    result = lint(tmp_path, rule("flow", "tool_order", tools=tools, mode=mode), a_before_b("ab"))
    assert result.of("order_contradiction") == []


# -- self_precedence (table row 4, point 42) ------------------------------------------------------

@pytest.mark.parametrize("kind", ["precedence", "require_order"])
def test_self_precedence_on_a_required_tool_is_an_error(tmp_path: Path, kind: str) -> None:
    result = lint(tmp_path, rule("self", kind, before=call("x"), after=call("x")), need("need", "x"))
    assert_finding(result, "self_precedence", "error", ["self"], 0)


@pytest.mark.parametrize("kind", ["precedence", "require_order"])
def test_self_precedence_on_an_unrequired_tool_is_a_warning(tmp_path: Path, kind: str) -> None:
    result = lint(tmp_path, rule("self", kind, before=call("x"), after=call("x")))
    assert_finding(result, "self_precedence", "warning", ["self"], 0)


def test_self_precedence_compares_matchers_key_by_key(tmp_path: Path) -> None:
    result = lint(tmp_path, rule("self", "precedence", before={"tool": "x", "type": "tool.call"},
                                 after={"type": "tool.call", "tool": "x"}), need("need", "x"))
    assert_finding(result, "self_precedence", "error", ["self"], 0)


def test_self_precedence_on_a_required_non_call_event_is_an_error(tmp_path: Path) -> None:
    msg = {"type": "agent.message"}
    result = lint(tmp_path, rule("self", "require_order", before=msg, after=msg),
                  rule("msgs", "require_event", match=msg))
    assert_finding(result, "self_precedence", "error", ["self"], 0)


def test_self_precedence_on_an_unrequired_non_call_event_is_a_warning(tmp_path: Path) -> None:
    msg = {"type": "agent.message"}
    result = lint(tmp_path, rule("self", "require_order", before=msg, after=msg),
                  rule("msgs", "require_event", match=msg, min=0))
    assert_finding(result, "self_precedence", "warning", ["self"], 0)


def test_self_precedence_on_a_tool_required_by_a_warning_rule_is_a_warning(tmp_path: Path) -> None:
    result = lint(tmp_path, rule("self", "precedence", before=call("x"), after=call("x")),
                  warning(need("need", "x")))
    assert_finding(result, "self_precedence", "warning", ["self"], 0)


def test_different_matchers_are_no_self_precedence(tmp_path: Path) -> None:
    result = lint(tmp_path, rule("p", "precedence", before=call("x", ok=True), after=call("x")),
                  need("need", "x"))
    assert result.of("self_precedence") == []


# -- reference_to_forbidden (table row 5, point 42) -----------------------------------------------

REFUND_ARGS = rule("refund-args", "tool_args", tool="refund", match={"amount": from_result("get")})
NEED_REFUND = need("need-refund", "refund")


def test_reference_to_a_denied_tool_from_a_required_subject_is_an_error(tmp_path: Path) -> None:
    result = lint(tmp_path, REFUND_ARGS, deny("no-get", "get"), NEED_REFUND)
    assert_finding(result, "reference_to_forbidden", "error", ["refund-args", "no-get"],
                   "/rules/1/tool")


def test_reference_to_a_denied_tool_from_an_unrequired_subject_is_a_warning(tmp_path: Path) -> None:
    result = lint(tmp_path, REFUND_ARGS, deny("no-get", "get"))
    assert_finding(result, "reference_to_forbidden", "warning", ["refund-args", "no-get"],
                   "/rules/1/tool")


def test_reference_from_a_subject_required_by_call_index_is_an_error(tmp_path: Path) -> None:
    first = rule("first", "tool_args", tool="refund", call_index=0,
                 match={"amount": from_result("get")})
    result = lint(tmp_path, first, deny("no-get", "get"))
    assert_finding(result, "reference_to_forbidden", "error", ["first", "no-get"], "/rules/1/tool")


def test_reference_inside_any_of_is_a_warning_even_when_required(tmp_path: Path) -> None:
    args = rule("refund-args", "tool_args", tool="refund",
                match={"amount": {"$any_of": [from_result("get"), {"$gt": 0}]}})
    result = lint(tmp_path, args, deny("no-get", "get"), NEED_REFUND)
    assert_finding(result, "reference_to_forbidden", "warning", ["refund-args", "no-get"],
                   "/rules/1/tool")


def test_reference_from_output_match_without_when_is_an_error(tmp_path: Path) -> None:
    total = rule("total", "output_match", match={"total": from_result("ledger", "total")})
    result = lint(tmp_path, total, deny("no-ledger", "ledger"))
    assert_finding(result, "reference_to_forbidden", "error", ["total", "no-ledger"],
                   "/rules/1/tool")


def test_reference_from_output_match_with_when_is_a_warning(tmp_path: Path) -> None:
    total = rule("total", "output_match", match={"total": from_result("ledger", "total")},
                 when={"outcome": {"outcome_id": "paid", "verdict": "satisfied"}})
    result = lint(tmp_path, total, deny("no-ledger", "ledger"))
    assert_finding(result, "reference_to_forbidden", "warning", ["total", "no-ledger"],
                   "/rules/1/tool")


@pytest.mark.parametrize("kind", ["required_when", "forbidden_when"])
def test_reference_in_a_condition_is_a_warning(tmp_path: Path, kind: str) -> None:
    """A condition that cannot hold leaves its rule asking for nothing: no trace is refused by it."""
    obligation = rule("obliged", kind, tool="refund", when={"path": "total", "matches": from_result("ledger", "total")})
    result = lint(tmp_path, obligation, deny("no-ledger", "ledger"))
    assert_finding(result, "reference_to_forbidden", "warning", ["obliged", "no-ledger"], "/rules/1/tool")


def test_reference_to_a_denied_tool_resting_on_a_warning_deny_is_a_warning(tmp_path: Path) -> None:
    result = lint(tmp_path, REFUND_ARGS, warning(deny("no-get", "get")), NEED_REFUND)
    assert_finding(result, "reference_to_forbidden", "warning", ["refund-args", "no-get"],
                   "/rules/1/tool")


def test_reference_to_a_tool_outside_the_allow_list(tmp_path: Path) -> None:
    result = lint(tmp_path, REFUND_ARGS, rule("allow", "allow_tools", tools=["refund"]),
                  NEED_REFUND)
    assert_finding(result, "reference_to_forbidden", "error", ["refund-args", "allow"], 1)


def test_reference_to_a_tool_inside_the_allow_list_is_fine(tmp_path: Path) -> None:
    result = lint(tmp_path, REFUND_ARGS, rule("allow", "allow_tools", tools=["refund", "get"]),
                  NEED_REFUND)
    assert result.of("reference_to_forbidden") == []


def test_reference_to_a_literal_tool_capped_at_0(tmp_path: Path) -> None:
    result = lint(tmp_path, REFUND_ARGS, cap("no-get", "get", 0), NEED_REFUND)
    assert_finding(result, "reference_to_forbidden", "error", ["refund-args", "no-get"], 1)


def test_reference_to_a_tool_an_exact_order_puts_after_the_subject(tmp_path: Path) -> None:
    result = lint(tmp_path, REFUND_ARGS,
                  rule("flow", "tool_order", tools=["refund", "get"], mode="exact"))
    assert_finding(result, "reference_to_forbidden", "error", ["refund-args", "flow"], 1)


@pytest.mark.parametrize("tools, mode", [(["get", "refund"], "exact"),
                                         (["refund", "get"], "subsequence")])
def test_reference_to_a_tool_an_order_does_not_put_after_the_subject_is_fine(
        tmp_path: Path, tools: list[str], mode: str) -> None:
    result = lint(tmp_path, REFUND_ARGS, rule("flow", "tool_order", tools=tools, mode=mode))
    assert result.of("reference_to_forbidden") == []


def test_reference_to_a_tool_not_matched_by_the_deny_glob_is_fine(tmp_path: Path) -> None:
    result = lint(tmp_path, REFUND_ARGS, deny("no-get", "get.*"), NEED_REFUND)
    assert result.of("reference_to_forbidden") == []


# -- dead_rule (table row 6, point 43) ------------------------------------------------------------

DEAD_UNDER_DENY = [
    rule("dead", "require_approval", tool="shell.exec"),
    rule("dead", "retry_limit", tool="shell.exec", max_attempts=2),
    rule("dead", "tool_result_required", tool="shell.exec"),
    rule("dead", "tool_args", tool="shell.exec", match={"cmd": "ls"}),
    cap("dead", "shell.exec", 3),
    rule("dead", "approval_bound", tool="shell.exec"),
    rule("dead", "latency_budget", tool="shell.exec", max_ms=100),
    rule("dead", "result_size", tool="shell.exec", max_bytes=100),
    rule("dead", "failure_handled", tool="shell.exec", within_events=2),
    rule("dead", "forbidden_when", tool="shell.exec",
         when={"outcome": {"outcome_id": "fraud", "verdict": "violated"}}),
]


@pytest.mark.parametrize("dead", DEAD_UNDER_DENY, ids=lambda r: r["kind"])
def test_rule_on_a_denied_tool_is_dead(tmp_path: Path, dead: dict[str, Any]) -> None:
    result = lint(tmp_path, deny("no-shell", "shell.*"), dead)
    assert result.findings == [F("dead_rule", "warning", ["no-shell", "dead"], "/rules/1/tool")]
    assert result.rc == 0


@pytest.mark.parametrize("dead", DEAD_UNDER_DENY, ids=lambda r: r["kind"])
def test_rule_on_a_tool_outside_the_allow_list_is_dead(tmp_path: Path, dead: dict[str, Any]) -> None:
    result = lint(tmp_path, rule("allow", "allow_tools", tools=["get", "refund"]), dead)
    assert result.findings == [F("dead_rule", "warning", ["allow", "dead"], "/rules/1/tool")]


def test_deny_tool_outside_the_allow_list_is_dead(tmp_path: Path) -> None:
    result = lint(tmp_path, rule("allow", "allow_tools", tools=["get", "refund"]),
                  deny("no-shell", "shell.*"))
    assert result.findings == [F("dead_rule", "warning", ["allow", "no-shell"], "/rules/1/tool")]


def test_deny_tool_intersecting_the_allow_list_is_not_dead(tmp_path: Path) -> None:
    result = lint(tmp_path, rule("allow", "allow_tools", tools=["get", "shell.ls"]),
                  deny("no-shell", "shell.*"))
    assert result.of("dead_rule") == []


def test_rule_with_the_default_tool_under_deny_all_is_dead(tmp_path: Path) -> None:
    result = lint(tmp_path, deny("no-tools", "*"), rule("results", "tool_result_required"))
    assert_finding(result, "dead_rule", "warning", ["no-tools", "results"], 1)


def test_rule_with_the_default_tool_under_an_allow_list_is_not_dead(tmp_path: Path) -> None:
    result = lint(tmp_path, rule("allow", "allow_tools", tools=["get"]),
                  rule("retries", "retry_limit", max_attempts=2))
    assert result.findings == []


@pytest.mark.parametrize("alive", [
    need("alive", "shell.exec"),
    rule("alive", "tool_calls", tool="shell.exec", min=1, max=3),
    rule("alive", "required_when", tool="shell.exec",
         when={"outcome": {"outcome_id": "x", "verdict": "violated"}}),
    rule("alive", "tool_args", tool="shell.exec", call_index=0, match={"cmd": "ls"}),
    rule("alive", "latency_budget", tool="shell.exec", max_ms=100, percentile=95),
    rule("alive", "tool_calls", tool="shell.exec", matches_output_length="cmds"),
], ids=["tool_calls_min", "tool_calls_min_max", "required_when", "tool_args_call_index",
        "latency_percentile", "tool_calls_output_length"])
def test_rule_that_fires_when_calls_are_absent_is_not_dead(tmp_path: Path,
                                                           alive: dict[str, Any]) -> None:
    result = lint(tmp_path, deny("no-shell", "shell.*"), alive)
    assert result.of("dead_rule") == []


def test_rule_on_a_tool_outside_the_glob_of_the_deny_is_not_dead(tmp_path: Path) -> None:
    result = lint(tmp_path, deny("no-shell", "shell.*"),
                  rule("approve", "require_approval", tool="shellexec"))
    assert result.findings == []


def test_rule_whose_glob_the_deny_does_not_subsume_is_not_dead(tmp_path: Path) -> None:
    result = lint(tmp_path, deny("no-shell", "shell.*"),
                  rule("approve", "require_approval", tool="sh*"))
    assert result.findings == []


def test_warning_deny_tool_makes_nothing_dead(tmp_path: Path) -> None:
    result = lint(tmp_path, warning(deny("no-shell", "shell.*")),
                  rule("approve", "require_approval", tool="shell.exec"))
    assert result.findings == []


def test_warning_allow_tools_makes_nothing_dead(tmp_path: Path) -> None:
    result = lint(tmp_path, warning(rule("allow", "allow_tools", tools=["get"])),
                  rule("approve", "require_approval", tool="shell.exec"))
    assert result.findings == []


def test_deny_tool_under_deny_tool_is_shadowed_not_dead(tmp_path: Path) -> None:
    result = lint(tmp_path, deny("no-shell", "shell.*"), deny("no-exec", "shell.exec"))
    assert result.findings == [F("shadowed_rule", "warning", ["no-shell", "no-exec"],
                                 "/rules/1/tool")]


def test_one_dead_rule_per_forbidding_rule(tmp_path: Path) -> None:
    result = lint(tmp_path, deny("no-shell", "shell.*"), deny("no-exec", "*.exec"),
                  rule("approve", "approval_bound", tool="shell.exec"))
    assert result.findings == [
        F("dead_rule", "warning", ["no-shell", "approve"], "/rules/2/tool"),
        F("dead_rule", "warning", ["no-exec", "approve"], "/rules/2/tool"),
    ]


def test_pair_with_reference_to_forbidden_gives_no_dead_rule(tmp_path: Path) -> None:
    args = rule("x1-args", "tool_args", tool="x1", match={"v": from_result("x2")})
    result = lint(tmp_path, deny("no-x", "x*"), args)
    assert_finding(result, "reference_to_forbidden", "warning", ["no-x", "x1-args"], 1)
    assert result.of("dead_rule") == []


# -- vacuous_distinct (table row 7, point 44) -----------------------------------------------------

SEARCH_DISTINCT = rule("distinct-q", "tool_args", tool="search", distinct=["q"])


def test_distinct_on_a_literal_tool_capped_at_1_is_vacuous(tmp_path: Path) -> None:
    result = lint(tmp_path, SEARCH_DISTINCT, rule("once", "tool_calls", tool="search", min=1, max=1))
    assert result.findings == [F("vacuous_distinct", "warning", ["distinct-q", "once"],
                                 "/rules/1/max")]


def test_distinct_on_a_literal_tool_capped_at_2_is_fine(tmp_path: Path) -> None:
    result = lint(tmp_path, SEARCH_DISTINCT, rule("twice", "tool_calls", tool="search", min=1, max=2))
    assert result.findings == []


def test_distinct_under_a_successful_count_cap_is_fine(tmp_path: Path) -> None:
    result = lint(tmp_path, SEARCH_DISTINCT, need("need", "search"),
                  cap("once", "search", 1, count="successful"))
    assert result.of("vacuous_distinct") == []


def test_distinct_on_a_glob_under_a_subsuming_budget_is_vacuous(tmp_path: Path) -> None:
    args = rule("distinct-q", "tool_args", tool="search.*", distinct=["q"])
    result = lint(tmp_path, args, rule("budget", "event_budget", max_tool_calls=1))
    assert_finding(result, "vacuous_distinct", "warning", ["distinct-q", "budget"],
                   "/rules/1/max_tool_calls")


def test_distinct_on_a_glob_under_a_narrower_cap_is_fine(tmp_path: Path) -> None:
    args = rule("distinct-q", "tool_args", tool="search.*", distinct=["q"])
    result = lint(tmp_path, args, cap("once", "search.web", 1))
    assert result.of("vacuous_distinct") == []


def test_tool_args_without_distinct_under_a_cap_of_1_is_fine(tmp_path: Path) -> None:
    args = rule("q-args", "tool_args", tool="search", match={"q": "x"})
    result = lint(tmp_path, args, rule("once", "tool_calls", tool="search", min=1, max=1))
    assert result.findings == []


# -- duplicate_rule (table row 8, point 44) -------------------------------------------------------

def test_duplicate_with_defaults_filled_in(tmp_path: Path) -> None:
    result = lint(tmp_path, rule("retry", "retry_limit", max_attempts=2),
                  rule("retry-all", "retry_limit", tool="*", max_attempts=2))
    assert len(result.findings) == 1, result.findings       # not also shadowed_rule
    assert_finding(result, "duplicate_rule", "warning", ["retry", "retry-all"], 1)
    assert result.rc == 0


def test_duplicate_ignores_id_description_and_severity(tmp_path: Path) -> None:
    result = lint(tmp_path, rule("retry", "retry_limit", max_attempts=2),
                  rule("retry-2", "retry_limit", tool="*", max_attempts=2, group_by="call_signature",
                       severity="warning", description="the same again"))
    assert [(f.code, f.rule_ids) for f in result.findings] == [
        ("duplicate_rule", ["retry", "retry-2"])]


def test_duplicate_compares_trimmed_strings(tmp_path: Path) -> None:
    result = lint(tmp_path, deny("no-exec", "shell.exec"), deny("no-exec-2", "  shell.exec "))
    assert [(f.code, f.level, f.rule_ids) for f in result.findings] == [
        ("duplicate_rule", "warning", ["no-exec", "no-exec-2"])]


def test_each_later_duplicate_names_the_first_occurrence(tmp_path: Path) -> None:
    result = lint(tmp_path, deny("d1", "x"), deny("d2", "x"), deny("d3", "x"))
    assert [(f.code, f.rule_ids) for f in result.findings] == [
        ("duplicate_rule", ["d1", "d2"]), ("duplicate_rule", ["d1", "d3"])]


def test_lists_in_another_order_are_not_duplicates(tmp_path: Path) -> None:
    result = lint(tmp_path, rule("allow", "allow_tools", tools=["a", "b"]),
                  rule("allow-2", "allow_tools", tools=["b", "a"]))
    assert result.of("duplicate_rule") == []


def test_different_values_are_not_duplicates(tmp_path: Path) -> None:
    result = lint(tmp_path, rule("retry", "retry_limit", max_attempts=2),
                  rule("retry-3", "retry_limit", max_attempts=3))
    assert result.of("duplicate_rule") == []


# -- shadowed_rule (table row 9, point 45) --------------------------------------------------------

def test_deny_tool_subsuming_a_later_deny_tool_shadows_it(tmp_path: Path) -> None:
    result = lint(tmp_path, deny("no-tools", "*"), deny("no-shell", "shell.*"))
    assert result.findings == [F("shadowed_rule", "warning", ["no-tools", "no-shell"],
                                 "/rules/1/tool")]


def test_error_rule_shadows_a_warning_rule(tmp_path: Path) -> None:
    result = lint(tmp_path, deny("no-tools", "*"), warning(deny("no-shell", "shell.*")))
    assert result.findings == [F("shadowed_rule", "warning", ["no-tools", "no-shell"],
                                 "/rules/1/tool")]


def test_warning_rule_does_not_shadow_an_error_rule(tmp_path: Path) -> None:
    result = lint(tmp_path, warning(deny("no-tools", "*")), deny("no-shell", "shell.*"))
    assert result.findings == []


def test_of_two_equivalent_globs_the_warning_is_shadowed_by_the_error_whichever_comes_first(tmp_path: Path) -> None:
    # a.** and a.* match the same tools; A's severity must be at least B's (point 45)
    result = lint(tmp_path, warning(deny("first", "a.*")), deny("second", "a.**"))
    assert result.findings == [F("shadowed_rule", "warning", ["first", "second"], "/rules/1/tool")]
    assert "first is shadowed by second" in result.report["findings"][0]["message"]
    result = lint(tmp_path, deny("first", "a.*"), deny("second", "a.**"))
    assert result.findings == [F("shadowed_rule", "warning", ["first", "second"], "/rules/1/tool")]
    assert "second is shadowed by first" in result.report["findings"][0]["message"]


def test_incomparable_deny_globs_do_not_shadow(tmp_path: Path) -> None:
    result = lint(tmp_path, deny("prefix", "a?"), deny("suffix", "?b"))
    assert result.findings == []


@pytest.mark.parametrize("a_match, b_match", [
    ({"type": "tool.call"}, {"type": "tool.call", "tool": "x"}),
    ({"type": "tool.*"}, {"type": "tool.result", "ok": False}),
    ({"tool": "*", "ok": False}, {"type": "tool.result", "tool": "x", "ok": False}),
], ids=["subset_keys", "glob_subsumes", "glob_and_exact_key"])
def test_deny_event_with_fewer_keys_shadows(tmp_path: Path, a_match: dict[str, Any],
                                            b_match: dict[str, Any]) -> None:
    result = lint(tmp_path, rule("a", "deny_event", match=a_match),
                  rule("b", "deny_event", match=b_match))
    assert_finding(result, "shadowed_rule", "warning", ["a", "b"], 1)


@pytest.mark.parametrize("a_match, b_match", [
    ({"type": "tool.result", "ok": False}, {"type": "tool.result", "ok": True}),
    ({"type": "tool.call", "tool": "x"}, {"type": "tool.call", "ok": True}),
    ({"type": "tool.call", "tool": "x"}, {"type": "tool.call", "tool": "y"}),
], ids=["exact_key_differs", "incomparable_keys", "glob_does_not_subsume"])
def test_deny_event_that_does_not_cover_the_other_does_not_shadow(
        tmp_path: Path, a_match: dict[str, Any], b_match: dict[str, Any]) -> None:
    result = lint(tmp_path, rule("a", "deny_event", match=a_match),
                  rule("b", "deny_event", match=b_match))
    assert result.of("shadowed_rule") == []


@pytest.mark.parametrize("a, b, field", [
    (cap("a", "x", 2), cap("b", "x", 5), "max"),
    (cap("a", "x", 2, count="successful"), cap("b", "x", 5, count="successful"), "max"),
    (rule("a", "event_budget", max_events=10), rule("b", "event_budget", max_events=20),
     "max_events"),
    (rule("a", "event_budget", max_tool_calls=3, max_events=10),
     rule("b", "event_budget", max_tool_calls=3), "max_tool_calls"),
    (rule("a", "retry_limit", tool="x", max_attempts=2, group_by="tool"),
     rule("b", "retry_limit", tool="x", max_attempts=3, group_by="tool"), "max_attempts"),
], ids=["tool_calls", "tool_calls_successful", "event_budget", "event_budget_subset",
        "retry_limit"])
def test_smaller_cap_on_the_same_glob_or_metric_shadows(tmp_path: Path, a: dict[str, Any],
                                                        b: dict[str, Any], field: str) -> None:
    result = lint(tmp_path, a, b)
    assert result.findings == [F("shadowed_rule", "warning", ["a", "b"], f"/rules/1/{field}")]


@pytest.mark.parametrize("a, b", [
    (cap("a", "x", 2), rule("b", "tool_calls", tool="x", min=1, max=5)),           # B adds a min
    (cap("a", "x", 2), cap("b", "x", 5, count="successful")),                      # other count
    (cap("a", "x*", 2), cap("b", "x", 5)),                                         # other glob string
    (rule("a", "event_budget", max_events=10),
     rule("b", "event_budget", max_events=20, max_tool_calls=3)),                  # B bounds more
    (rule("a", "retry_limit", tool="x", max_attempts=2, group_by="tool"),
     rule("b", "retry_limit", tool="x", max_attempts=3)),                          # other group_by
], ids=["b_has_min", "other_count", "other_glob", "b_bounds_more", "other_group_by"])
def test_cap_that_does_not_bound_as_tightly_does_not_shadow(tmp_path: Path, a: dict[str, Any],
                                                            b: dict[str, Any]) -> None:
    result = lint(tmp_path, a, b)
    assert result.of("shadowed_rule") == []


@pytest.mark.parametrize("tools, j", [
    (["a*", "ab"], 1),
    (["ab", "a*"], 0),
    (["a*", "a**"], 1),      # the later of two equivalent ones
    (["a**", "a*"], 1),
    (["x", "y", "x"], 2),
], ids=["later_subsumed", "earlier_subsumed", "equivalent", "equivalent_reversed", "repeated"])
def test_allow_tools_pattern_subsumed_within_its_list_is_shadowed(tmp_path: Path, tools: list[str],
                                                                  j: int) -> None:
    result = lint(tmp_path, rule("allow", "allow_tools", tools=tools))
    assert result.findings == [F("shadowed_rule", "warning", ["allow"], f"/rules/0/tools/{j}")]


def test_allow_tools_with_incomparable_patterns_is_fine(tmp_path: Path) -> None:
    result = lint(tmp_path, rule("allow", "allow_tools", tools=["a?", "*b", "c"]))
    assert result.findings == []


# -- unschemaed_read (table row 10, point 46) -----------------------------------------------------

REFUNDS_WHEN = rule("refund-if", "required_when", tool="refund",
                    when={"path": "refunds", "non_empty": True})


def schema_rule(schema: dict[str, Any]) -> dict[str, Any]:
    return rule("shape", "output_schema", schema=schema)


REQUIRES_REFUNDS = {"type": "object", "required": ["refunds"],
                    "properties": {"refunds": {"type": "array"}}}


def test_condition_path_without_output_schema_is_unschemaed(tmp_path: Path) -> None:
    result = lint(tmp_path, REFUNDS_WHEN)
    assert result.findings == [F("unschemaed_read", "warning", ["refund-if"], "/rules/0/when/path")]
    assert result.rc == 0


def test_condition_path_the_schema_requires_is_fine(tmp_path: Path) -> None:
    result = lint(tmp_path, REFUNDS_WHEN, schema_rule(REQUIRES_REFUNDS))
    assert result.findings == []


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"refunds": {"type": "array"}}},
    {"type": "object", "required": ["total"], "properties": {"total": {}, "refunds": {}}},
    {"allOf": [REQUIRES_REFUNDS]},
    {"anyOf": [REQUIRES_REFUNDS, REQUIRES_REFUNDS]},
], ids=["not_in_required", "other_key_required", "allOf", "anyOf"])
def test_condition_path_the_schema_does_not_require_is_unschemaed(tmp_path: Path,
                                                                  schema: dict[str, Any]) -> None:
    result = lint(tmp_path, REFUNDS_WHEN, schema_rule(schema))
    assert result.findings == [F("unschemaed_read", "warning", ["refund-if"], "/rules/0/when/path")]


def test_schema_requirement_follows_local_refs(tmp_path: Path) -> None:
    schema = {"$defs": {"out": REQUIRES_REFUNDS}, "$ref": "#/$defs/out"}
    result = lint(tmp_path, REFUNDS_WHEN, schema_rule(schema))
    assert result.findings == []


NESTED_WHEN = rule("nested-if", "forbidden_when", tool="email",
                   when={"path": "order.items.0.sku", "equals": "A1"})


def nested_schema(*, inner_required: bool = True, min_items: int | None = 1,
                  prefix: bool = False) -> dict[str, Any]:
    item = {"type": "object", "properties": {"sku": {"type": "string"}}}
    if inner_required:
        item["required"] = ["sku"]
    items: dict[str, Any] = {"type": "array"}
    if prefix:
        items["prefixItems"] = [item]
    else:
        items["items"] = item
    if min_items is not None:
        items["minItems"] = min_items
    return {"type": "object", "required": ["order"],
            "properties": {"order": {"type": "object", "required": ["items"],
                                     "properties": {"items": items}}}}


@pytest.mark.parametrize("schema", [nested_schema(), nested_schema(prefix=True),
                                    nested_schema(min_items=3)],
                         ids=["items", "prefixItems", "more_items"])
def test_nested_path_required_at_every_segment_is_fine(tmp_path: Path,
                                                       schema: dict[str, Any]) -> None:
    result = lint(tmp_path, NESTED_WHEN, schema_rule(schema))
    assert result.findings == []


@pytest.mark.parametrize("schema", [nested_schema(inner_required=False),
                                    nested_schema(min_items=None), nested_schema(min_items=0)],
                         ids=["leaf_not_required", "no_minItems", "minItems_0"])
def test_nested_path_missing_one_requirement_is_unschemaed(tmp_path: Path,
                                                           schema: dict[str, Any]) -> None:
    result = lint(tmp_path, NESTED_WHEN, schema_rule(schema))
    assert result.findings == [F("unschemaed_read", "warning", ["nested-if"], "/rules/0/when/path")]


def test_each_unrequired_path_of_nested_conditions_is_unschemaed(tmp_path: Path) -> None:
    when = {"any_of": [{"path": "refunds", "non_empty": True},
                       {"all_of": [{"path": "flag", "equals": True},
                                   {"outcome": {"outcome_id": "x", "verdict": "satisfied"}}]}]}
    result = lint(tmp_path, rule("mail-if", "forbidden_when", tool="email", when=when),
                  schema_rule(REQUIRES_REFUNDS))
    assert result.findings == [F("unschemaed_read", "warning", ["mail-if"],
                                 "/rules/0/when/any_of/1/all_of/0/path")]


def test_outcome_condition_reads_no_path(tmp_path: Path) -> None:
    result = lint(tmp_path, rule("mail-if", "forbidden_when", tool="email",
                                 when={"outcome": {"outcome_id": "x", "verdict": "violated"}}))
    assert result.findings == []


def test_output_length_path_without_output_schema_is_unschemaed(tmp_path: Path) -> None:
    result = lint(tmp_path, rule("count", "tool_calls", tool="refund",
                                 matches_output_length="refunds"))
    assert result.findings == [F("unschemaed_read", "warning", ["count"],
                                 "/rules/0/matches_output_length")]


def test_output_length_path_the_schema_requires_is_fine(tmp_path: Path) -> None:
    result = lint(tmp_path, rule("count", "tool_calls", tool="refund",
                                 matches_output_length="refunds"), schema_rule(REQUIRES_REFUNDS))
    assert result.findings == []


def test_output_match_when_path_is_read_but_its_match_paths_are_not(tmp_path: Path) -> None:
    total = rule("total", "output_match", match={"total": 40, "currency": "EUR"},
                 when={"path": "refunds", "non_empty": True})
    result = lint(tmp_path, total)
    assert result.findings == [F("unschemaed_read", "warning", ["total"], "/rules/0/when/path")]


# -- v1_trap (table row 11, point 47) -------------------------------------------------------------

@pytest.mark.parametrize("tools, j", [(["*"], 0), (["get", "**"], 1)], ids=["star", "double_star"])
def test_allow_tools_star_is_a_v1_trap(tmp_path: Path, tools: list[str], j: int) -> None:
    result = lint(tmp_path, rule("allow", "allow_tools", tools=tools))
    assert result.of("v1_trap") == [F("v1_trap", "warning", ["allow"], f"/rules/0/tools/{j}")]


@pytest.mark.parametrize("tools", [["*.*"], ["?*"], ["get", "a*"]])
def test_allow_tools_without_a_bare_star_is_no_v1_trap(tmp_path: Path, tools: list[str]) -> None:
    result = lint(tmp_path, rule("allow", "allow_tools", tools=tools))
    assert result.of("v1_trap") == []


def test_require_approval_with_scope_is_a_v1_trap(tmp_path: Path) -> None:
    result = lint(tmp_path, rule("approve", "require_approval", tool="refund", scope="refunds"))
    assert result.findings == [F("v1_trap", "warning", ["approve"], "/rules/0/scope")]


def test_require_approval_without_scope_is_no_v1_trap(tmp_path: Path) -> None:
    result = lint(tmp_path, rule("approve", "require_approval", tool="refund"))
    assert result.findings == []


@pytest.mark.parametrize("fields", [
    {},                                                            # the default allowed_after
    {"allowed_after": []},
    {"allowed_after": ["run.*", "telemetry.*"]},
    {"stop_type": "halt", "allowed_after": ["run.completed"]},
], ids=["default_list", "empty_list", "no_stop_pattern", "custom_stop_type"])
def test_stop_is_final_whose_allowed_after_omits_the_stop_type_is_a_v1_trap(
        tmp_path: Path, fields: dict[str, Any]) -> None:
    result = lint(tmp_path, rule("final", "stop_is_final", **fields))
    assert_finding(result, "v1_trap", "warning", ["final"], 0)
    assert len(result.findings) == 1


@pytest.mark.parametrize("fields", [
    {"allowed_after": ["run.completed", "run.failed", "telemetry.*", "control.stop"]},
    {"allowed_after": ["control.*"]},
    {"allowed_after": ["*"]},
    {"stop_type": "halt.now", "allowed_after": ["halt.*"]},
], ids=["stop_listed", "glob_subsumes_stop", "star", "custom_stop_type"])
def test_stop_is_final_allowing_its_stop_type_is_no_v1_trap(tmp_path: Path,
                                                            fields: dict[str, Any]) -> None:
    result = lint(tmp_path, rule("final", "stop_is_final", **fields))
    assert result.findings == []


def test_one_v1_trap_per_trap(tmp_path: Path) -> None:
    result = lint(tmp_path, rule("allow", "allow_tools", tools=["*"]),
                  rule("approve", "require_approval", tool="refund", scope="refunds"),
                  rule("final", "stop_is_final"))
    assert [(f.code, f.rule_ids) for f in result.findings] == [
        ("v1_trap", ["allow"]), ("v1_trap", ["approve"]), ("v1_trap", ["final"])]


# -- unrequired_subject (point 48) ----------------------------------------------------------------

SUBJECT_RULES = [
    rule("subject", "tool_args", tool="refund", match={"amount": {"$gt": 0}}),
    rule("subject", "approval_bound", tool="refund"),
    rule("subject", "latency_budget", tool="refund", max_ms=100),
    rule("subject", "result_size", tool="refund", max_bytes=100),
    rule("subject", "precedence", before=call("get"), after=call("refund")),
]


@pytest.mark.parametrize("subject", SUBJECT_RULES, ids=lambda r: r["kind"])
def test_subject_nothing_requires_is_unrequired_subject(tmp_path: Path,
                                                        subject: dict[str, Any]) -> None:
    result = lint(tmp_path, subject)
    assert result.findings == [F("unrequired_subject", "warning", ["subject"], "/rules/0")]
    assert result.rc == 0


@pytest.mark.parametrize("subject", SUBJECT_RULES, ids=lambda r: r["kind"])
@pytest.mark.parametrize("requirement", [
    need("need", "refund"),
    warning(need("need", "refund")),
    rule("need", "require_event", match=call("refund")),
    rule("need", "tool_order", tools=["get", "refund"]),
], ids=["tool_calls", "warning_tool_calls", "require_event", "tool_order"])
def test_subject_with_a_requirement_is_not_unrequired(tmp_path: Path, subject: dict[str, Any],
                                                      requirement: dict[str, Any]) -> None:
    result = lint(tmp_path, subject, requirement)
    assert result.of("unrequired_subject") == []


@pytest.mark.parametrize("exempt", [
    rule("exempt", "forbidden_when", tool="refund",
         when={"outcome": {"outcome_id": "fraud", "verdict": "violated"}}),
    rule("exempt", "failure_handled", tool="refund", within_events=2),
    rule("exempt", "latency_budget", tool="refund", max_ms=100, percentile=95),
    rule("exempt", "tool_args", tool="refund", call_index=0, match={"amount": {"$gt": 0}}),
], ids=["forbidden_when", "failure_handled", "latency_percentile", "tool_args_call_index"])
def test_exempt_rule_is_never_unrequired_subject(tmp_path: Path, exempt: dict[str, Any]) -> None:
    result = lint(tmp_path, exempt)
    assert result.of("unrequired_subject") == []


@pytest.mark.parametrize("requirement, required", [
    (need("need", "search.web"), True),           # a literal t the glob matches
    (need("need", "search.w*"), True),            # a glob requirement the subject glob subsumes
    (rule("need", "require_event", match=call("search.?")), True),
    (need("need", "s*"), False),                  # not subsumed by search.*
    (need("need", "searchweb"), False),
    (need("need", "search.web", 0), False),       # min 0 requires nothing
], ids=["literal", "subsumed_glob", "subsumed_glob_require_event", "wider_glob", "not_matched",
        "min_0"])
def test_glob_subject_is_required_by_matching_literal_or_subsumed_glob(
        tmp_path: Path, requirement: dict[str, Any], required: bool) -> None:
    budget = rule("budget", "latency_budget", tool="search.*", max_ms=100)
    result = lint(tmp_path, budget, requirement)
    expected = [] if required else [F("unrequired_subject", "warning", ["budget"], "/rules/0")]
    assert result.of("unrequired_subject") == expected


def test_precedence_on_a_non_call_after_is_required_by_an_equal_require_event(
        tmp_path: Path) -> None:
    msg = {"type": "agent.message"}
    prec = rule("grant-first", "precedence", before={"type": "approval.granted"}, after=msg)
    assert lint(tmp_path, prec, rule("msgs", "require_event", match=msg)).findings == []


def test_precedence_on_a_non_call_after_without_requirement_is_unrequired(tmp_path: Path) -> None:
    msg = {"type": "agent.message"}
    prec = rule("grant-first", "precedence", before={"type": "approval.granted"}, after=msg)
    result = lint(tmp_path, prec)
    assert result.findings == [F("unrequired_subject", "warning", ["grant-first"], "/rules/0")]


def test_dead_rule_gets_no_unrequired_subject(tmp_path: Path) -> None:
    result = lint(tmp_path, deny("no-shell", "shell.*"),
                  rule("approve", "approval_bound", tool="shell.exec"))
    assert result.codes() == ["dead_rule"]


# -- finding order (point 49) ---------------------------------------------------------------------

def test_findings_sorted_by_lowest_rule_index_then_table_row_then_pointer(tmp_path: Path) -> None:
    result = lint(tmp_path,
                  rule("trap", "require_approval", tool="a", scope="s"),          # 0: v1_trap
                  rule("allow", "allow_tools", tools=["*", "x", "y"]),           # 1: v1_trap, 2 shadowed
                  deny("deny-x", "x"),                                            # 2
                  need("need-x", "x"),                                            # 3: rbf [2, 3]
                  rule("retry", "retry_limit", max_attempts=2),                   # 4
                  rule("retry-again", "retry_limit", tool="*", max_attempts=2))   # 5: dup [4, 5]
    got = result.findings
    assert [(f.code, f.rule_ids) for f in got] == [
        ("v1_trap", ["trap"]),
        ("shadowed_rule", ["allow"]),
        ("shadowed_rule", ["allow"]),
        ("v1_trap", ["allow"]),
        ("required_but_forbidden", ["deny-x", "need-x"]),
        ("duplicate_rule", ["retry", "retry-again"]),
    ]
    assert [f.pointer for f in got[:5]] == ["/rules/0/scope", "/rules/1/tools/1", "/rules/1/tools/2",
                                            "/rules/1/tools/0", "/rules/3/tool"]
    assert inside(got[5].pointer, 5)


def test_findings_of_one_rule_and_row_are_sorted_by_pointer(tmp_path: Path) -> None:
    result = lint(tmp_path, rule("budget", "event_budget", max_tool_calls=0),
                  need("need-z", "z"), need("need-b", "b"), need("need-m", "m"))
    assert [f.pointer for f in result.findings] == ["/rules/1/tool", "/rules/2/tool", "/rules/3/tool"]


# -- the glob algebra, seen through the CLI (§4 "Glob algebra", point 38) --------------------------

@pytest.mark.parametrize("required_tool, forbidden", [
    ("abc", True),
    ("  abc ", True),          # trimmed: still the literal abc
    ("a", True),               # * matches the empty run
    ("ab?", False),            # a glob: R(t) needs literal tools
    ("ab*", False),
    ("ba", False),
])
def test_r_of_a_literal_tool_under_a_glob_deny(tmp_path: Path, required_tool: str,
                                               forbidden: bool) -> None:
    result = lint(tmp_path, deny("deny", "a*"), need("need", required_tool))
    expected = [F("required_but_forbidden", "error", ["deny", "need"], "/rules/1/tool")]
    assert result.of("required_but_forbidden") == (expected if forbidden else [])


@pytest.mark.parametrize("deny_glob, ref_glob, subsumed", [
    ("get", "get", True),
    ("g*", "get", True),
    ("*", "?*", True),
    ("?*", "*", False),        # a ? of q never matches a * of p
    ("a*", "a?", True),
    ("a?", "a*", False),
    ("*a*", "?a", True),
    ("a*b", "a?*b", True),
    ("a?*b", "a*b", False),
    ("*?", "a?", True),        # normalised: ?*
    ("a**", "a*", True),       # normalised: a*
    ("ab?", "a*", False),
    ("get", "ge*", False),
])
def test_deny_subsumes_a_from_result_glob(tmp_path: Path, deny_glob: str, ref_glob: str,
                                          subsumed: bool) -> None:
    total = rule("total", "output_match", match={"total": from_result(ref_glob, "total")})
    result = lint(tmp_path, total, deny("deny", deny_glob))
    expected = [F("reference_to_forbidden", "error", ["total", "deny"], "/rules/1/tool")]
    assert result.of("reference_to_forbidden") == (expected if subsumed else [])


@pytest.mark.parametrize("pattern, glob, intersects", [
    ("a*", "*b", True),        # ab
    ("a?", "??b", False),      # lengths 2 and 3
    ("ab*", "*ba", True),      # aba
    ("a*", "b*", False),
    ("x?z", "*y*", True),      # xyz
    ("x?z", "*yy*", False),
    ("?", "**", True),
    ("*.*", "shell", False),
    ("a*c", "*b*", True),      # abc
    ("*a", "b*", True),        # ba
])
def test_allow_pattern_intersects_a_rule_glob(tmp_path: Path, pattern: str, glob: str,
                                              intersects: bool) -> None:
    result = lint(tmp_path, rule("allow", "allow_tools", tools=[pattern]),
                  rule("approve", "require_approval", tool=glob))
    expected = [F("dead_rule", "warning", ["allow", "approve"], "/rules/1/tool")]
    assert result.of("dead_rule") == ([] if intersects else expected)


@pytest.mark.parametrize("pattern, ref_glob, intersects", [
    ("get*", "*et", True),
    ("get?", "*et", False),
    ("g?t", "*e*", True),
])
def test_from_result_glob_intersecting_no_allow_pattern_is_forbidden(
        tmp_path: Path, pattern: str, ref_glob: str, intersects: bool) -> None:
    total = rule("total", "output_match", match={"total": from_result(ref_glob, "total")})
    result = lint(tmp_path, total, rule("allow", "allow_tools", tools=[pattern]))
    if intersects:
        assert result.of("reference_to_forbidden") == []
    else:
        assert_finding(result, "reference_to_forbidden", "error", ["total", "allow"], 1)


@pytest.mark.parametrize("bound_glob, requirement_glob, contradicts", [
    ("s*", "s?", True),
    ("*", "s*", True),
    ("s?", "s*", False),
    ("s?", "?s", False),
])
def test_glob_requirement_against_a_bound_uses_subsumption(tmp_path: Path, bound_glob: str,
                                                           requirement_glob: str,
                                                           contradicts: bool) -> None:
    result = lint(tmp_path, cap("cap", bound_glob, 1), need("need", requirement_glob, 2))
    expected = [F("count_contradiction", "error", ["cap", "need"], "/rules/0/max")]
    assert result.of("count_contradiction") == (expected if contradicts else [])


@pytest.mark.parametrize("deny_a, deny_b, shadowed", [
    ("a*", "ab?", True),
    ("*a*", "?a", True),
    ("*", "?*", True),
    ("a?", "a*b", False),
    ("?b", "a?", False),
])
def test_deny_glob_subsumption_decides_shadowing(tmp_path: Path, deny_a: str, deny_b: str,
                                                 shadowed: bool) -> None:
    result = lint(tmp_path, deny("a", deny_a), deny("b", deny_b))
    expected = [F("shadowed_rule", "warning", ["a", "b"], "/rules/1/tool")]
    assert result.findings == (expected if shadowed else [])
