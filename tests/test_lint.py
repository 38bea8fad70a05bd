"""`lint` as a user meets it, beyond the spec's codes (test_lint_spec.py): the glob algebra against
brute force, check and compare refusing what lint proves unpassable (and `--no-lint`), SARIF at the
contract's lines, `--interface`, the MCP tool, and the bundled example."""
from __future__ import annotations

import fnmatch
import itertools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_invariants.contract import load_contract
from agent_invariants.lint import lint_contract
from agent_invariants.lint.globs import intersects, matches, subsumes
from agent_invariants.mcp_server import run_tool

import cli_zygote
from support import examples, github_profile_problems, sarif_validator

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "lint" / "contract.json"
UNPASSABLE = {"version": 2, "name": "unpassable", "rules": [
    {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"},
    {"id": "must-exec", "kind": "tool_calls", "tool": "shell.exec", "min": 1}]}


def cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return cli_zygote.as_text(cli_zygote.run_python(["-m", "agent_invariants", *args], cwd, timeout=120))


def write(tmp_path: Path, document: dict[str, Any], name: str = "c.json") -> str:
    (tmp_path / name).write_text(json.dumps(document, indent=2))
    return name


# -- the glob algebra against brute force ---------------------------------------------------------

GLOBS = st.text(alphabet="ab?*", min_size=0, max_size=5)


def subjects(longest: int) -> list[str]:
    """Every string over a, b and c (a letter no glob names) up to `longest` characters."""
    return ["".join(letters) for size in range(longest + 1) for letters in itertools.product("abc", repeat=size)]


def glob_match(glob: str, subject: str) -> bool:
    return fnmatch.fnmatchcase(subject, glob.replace("[", "[[]"))


@settings(max_examples=examples(150), deadline=None)
@given(p=GLOBS, q=GLOBS)
def test_intersects_is_exact(p, q):
    """Some subject matches both exactly when intersects says so (a witness, if any, is at most
    |p| + |q| characters long over a, b and one letter neither glob names)."""
    shared = any(glob_match(p, subject) and glob_match(q, subject) for subject in subjects(len(p) + len(q)))
    assert intersects(p, q) is shared


@settings(max_examples=examples(300), deadline=None)
@given(q=GLOBS, p=GLOBS)
def test_subsumes_never_claims_wrongly(q, p):
    if subsumes(q, p):
        assert all(glob_match(q, subject) for subject in subjects(len(p) + 2) if glob_match(p, subject))


@settings(max_examples=examples(300), deadline=None)
@given(q=st.text(alphabet="ab?*", max_size=12), p=st.text(alphabet="ab", max_size=12))
def test_subsumes_is_exact_for_a_literal(q, p):
    """A literal names one subject: q covers it exactly when q matches it."""
    assert subsumes(q, p) is glob_match(q, p)


@settings(max_examples=examples(300), deadline=None)
@given(glob=st.text(alphabet="ab.?*\n", max_size=12), subject=st.text(alphabet="ab.\n", max_size=12))
def test_matches_is_exact_for_a_literal(glob, subject):
    """Whether a tool name matches a glob, as the algebra reads both (`?` and `*` take any
    character, a line break too)."""
    assert matches(glob, subject) is fnmatch.fnmatchcase(subject, glob.replace("[", "[[]"))


@settings(max_examples=examples(300), deadline=None)
@given(names=st.lists(st.text(alphabet="ab.\n", max_size=8), max_size=12),
       glob=st.text(alphabet="ab.?*\n", max_size=10))
def test_the_names_a_glob_matches_are_found_as_trying_each_finds_them(names, glob):
    """Lint files the required tools by prefix, suffix and literal runs (NameIndex), so as not to
    try each against each glob: it finds exactly the names `matches` accepts."""
    from agent_invariants.lint.globs import NameIndex

    assert NameIndex(names).matching(glob) == sorted({name for name in names if matches(glob, name)})


def test_many_bounds_on_globs_beside_many_required_tools_are_linted_in_seconds(tmp_path: Path) -> None:
    """Each `tool_calls` bound on a glob tried every required tool: 3,000 rules (a 1 MB contract)
    took 38 s of lint, and of every check, 10,000 (within the limit) minutes. One bound that the
    tools it covers must exceed is still found."""
    stars = "*a" * 60
    rules = [{"id": f"m{n}", "kind": "tool_calls", "tool": f"{stars}*{n:05d}", "max": 0 if n == 7 else 5}
             for n in range(2_500)]
    rules += [{"id": f"r{n}", "kind": "tool_calls", "tool": f"{'a' * 60}{n:05d}", "min": 1} for n in range(2_500)]
    path = write(tmp_path, {"version": 2, "name": "bounds", "rules": rules})
    result = subprocess.run([sys.executable, "-m", "agent_invariants", "lint", "--contract", path, "--format", "json"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert result.returncode == 1, result.stderr
    findings = [(finding["code"], finding["rule_ids"]) for finding in json.loads(result.stdout)["findings"]]
    assert findings == [("required_but_forbidden", ["m7", "r7"])]   # (a bound of 0 forbids what r7 needs)


def test_findings_that_each_name_thousands_of_rules_stop_lint_at_a_bounded_size(tmp_path: Path) -> None:
    """Each bound on `*a?*` covers every required tool, so each count_contradiction names all of
    them: 5,000 of each took 73 s and 5.5 GB. Lint stops once its findings hold about 4 million
    characters, as it stops at 10,000 findings, and says so."""
    rules = [{"id": f"m{n}", "kind": "tool_calls", "tool": "*a?*", "max": 5 + n} for n in range(1_000)]
    rules += [{"id": f"r{n}", "kind": "tool_calls", "tool": f"ta{n:05d}", "min": 1} for n in range(1_000)]
    path = write(tmp_path, {"version": 2, "name": "wide", "rules": rules})
    result = cli("lint", "--contract", path, "--format", "json", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["truncated"] is True and len(result.stdout) < 6_000_000
    assert 0 < len(report["findings"]) < 1_000
    assert {(finding["code"], len(finding["rule_ids"])) for finding in report["findings"]} == {
        ("count_contradiction", 1_001)}


def test_a_glob_of_many_stars_against_a_long_name_takes_no_exponential_time(tmp_path: Path) -> None:
    """Lint matched a glob against a tool name with a backtracking regex: a 1 KB contract (a
    deny_tool of `*a` 250 times, within the 500-character limit, beside a tool of 500 `a`s) did not
    end, nor did `check`, which lints first (`*a` thirty times against forty `a`s: 20 s). Each
    finding that matches a name now walks the glob once."""
    stars = "*a" * 250
    rules = [{"id": "must", "kind": "tool_calls", "tool": "a" * 500, "min": 1},
             {"id": "no", "kind": "deny_tool", "tool": stars},
             {"id": "wide", "kind": "deny_tool", "tool": "a" * 499}]
    result = cli("lint", "--contract", write(tmp_path, {"version": 2, "name": "stars", "rules": rules}), cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert [line.split(" ")[:4] for line in result.stdout.splitlines()[:-1]] == [
        ["error", "required_but_forbidden", "[must,", "no]"], ["warning", "shadowed_rule", "[no,", "wide]"]]


@settings(max_examples=examples(150), deadline=None)
@given(stored=st.lists(GLOBS, min_size=0, max_size=12), glob=GLOBS)
def test_the_index_finds_what_a_scan_of_every_glob_finds(stored, glob):
    from agent_invariants.lint.globs import GlobIndex

    index = GlobIndex((pattern, position) for position, pattern in enumerate(stored))
    assert sorted(index.covering(glob)) == [n for n, pattern in enumerate(stored) if subsumes(pattern, glob)]
    assert sorted(index.meeting(glob)) == [n for n, pattern in enumerate(stored) if intersects(pattern, glob)]


@settings(max_examples=examples(200), deadline=None)
@given(stored=st.lists(st.lists(st.text(alphabet="ab", min_size=1, max_size=12) | st.sampled_from(["*", "?"]),
                                max_size=5).map("".join), min_size=1, max_size=40),
       data=st.data())
def test_the_index_finds_what_a_scan_finds_among_long_runs(stored, data):
    """Globs filed under pieces of runs longer than the index cuts them to, many sharing a run;
    the glob looked up is one of them narrowed (a wildcard written as letters, or kept), so that
    many cover it."""
    from agent_invariants.lint.globs import GlobIndex

    narrowing = {"*": st.sampled_from(["*", "", "a", "ab*", "*b"]), "?": st.sampled_from(["?", "a", "b"])}
    glob = "".join(data.draw(narrowing[char]) if char in narrowing else char
                   for char in data.draw(st.sampled_from(stored)))
    index = GlobIndex((pattern, position) for position, pattern in enumerate(stored))
    assert sorted(index.covering(glob)) == [n for n, pattern in enumerate(stored) if subsumes(pattern, glob)]


@pytest.mark.parametrize(("q", "p"), [("*", "a?b*"), ("a*", "ab"), ("a*", "a?*"), ("?*", "*?"), ("a**b", "a*b"),
                                      ("*?*", "??*")])
def test_subsumes_sees_the_usual_cases(q, p):
    assert subsumes(q, p)


# -- check, compare and the MCP tools refuse what lint proves unpassable ----------------------------

def test_check_refuses_an_unpassable_version_2_contract_like_a_contract_error(tmp_path):
    contract = write(tmp_path, UNPASSABLE)
    (tmp_path / "t.jsonl").write_text('{"seq": 1, "type": "run.start"}\n')
    refused = cli("check", "--contract", contract, "--trace", "t.jsonl", cwd=tmp_path)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.splitlines() == [
        "agent-invariants: c.json:10: $.rules[1]: lint required_but_forbidden: shell.exec must be called (must-exec "
        "needs 1 call), but no-shell (deny_tool) denies it. (--no-lint to check anyway)"]
    checked = cli("check", "--contract", contract, "--trace", "t.jsonl", "--no-lint", "--format", "json",
                  cwd=tmp_path)
    assert checked.returncode == 1
    assert [result["passed"] for result in json.loads(checked.stdout)["results"]] == [True, False]
    compared = cli("compare", "--contract", contract, "--baseline", "t.jsonl", "--candidate", "t.jsonl", cwd=tmp_path)
    assert compared.returncode == 2 and "lint required_but_forbidden" in compared.stderr


def test_a_refusal_names_the_rule_where_the_file_holds_it_not_among_its_packs_rules(tmp_path):
    """With packs, the loaded contract holds their rules before the file's own: the refusal said
    `c.json:4: $.rules[7]` of a file with two rules. It names the rule's place in the file, and a
    rule a pack brings as the pack's (the `extends` the file names)."""
    (tmp_path / "pack.json").write_text(json.dumps({"rules": [
        {"id": "pack-needs", "kind": "tool_calls", "tool": "shell.exec", "min": 1}]}))
    (tmp_path / "own.json").write_text(
        '{"version": 2, "name": "own", "extends": ["agent-invariants:no-shell-or-admin"],\n'
        ' "rules": [\n  {"id": "other", "kind": "deny_tool", "tool": "zz"},\n'
        '  {"id": "must-exec", "kind": "tool_calls", "tool": "shell.exec", "min": 1}\n]}\n')
    (tmp_path / "packed.json").write_text(json.dumps({"version": 2, "name": "packed", "extends": ["pack.json"],
                                                      "rules": [{"id": "no-shell", "kind": "deny_tool",
                                                                 "tool": "shell.*"}]}))
    (tmp_path / "t.jsonl").write_text('{"seq": 1, "type": "run.start"}\n')
    own = cli("check", "--contract", "own.json", "--trace", "t.jsonl", cwd=tmp_path)
    assert (own.returncode, own.stderr) == (2, (
        "agent-invariants: own.json:4: $.rules[1]: lint required_but_forbidden: shell.exec must be called (must-exec "
        "needs 1 call), but no-shell.shell (deny_tool) denies it. (--no-lint to check anyway)\n"))
    packed = cli("check", "--contract", "packed.json", "--trace", "t.jsonl", cwd=tmp_path)
    assert (packed.returncode, packed.stderr) == (2, (
        "agent-invariants: packed.json: $.extends: rule pack-needs of a pack: lint required_but_forbidden: "
        "shell.exec must be called (pack-needs needs 1 call), but no-shell (deny_tool) denies it. (--no-lint to "
        "check anyway)\n"))


def test_a_version_1_contract_is_never_refused(tmp_path):
    contract = write(tmp_path, {"version": 1, "name": "v1", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"},
        {"id": "must-exec", "kind": "require_event", "match": {"type": "tool.call", "tool": "shell.exec"}}]})
    assert cli("lint", "--contract", contract, cwd=tmp_path).returncode == 1   # lint itself says so
    (tmp_path / "t.jsonl").write_text('{"seq": 1, "type": "run.start"}\n')
    assert cli("check", "--contract", contract, "--trace", "t.jsonl", cwd=tmp_path).returncode == 1   # judged


def test_the_mcp_check_tools_refuse_unless_no_lint():
    from agent_invariants.errors import ContractError

    events = [{"seq": 1, "type": "run.start"}]
    with pytest.raises(ContractError, match=r"contract: \$\.rules\[1\]: lint required_but_forbidden"):
        run_tool("agent_invariants_check_trace", {"contract": UNPASSABLE, "events": events})
    report, _ = run_tool("agent_invariants_check_trace", {"contract": UNPASSABLE, "events": events, "no_lint": True})
    assert report["passed"] is False
    with pytest.raises(ContractError):
        run_tool("agent_invariants_compare_traces", {"contract": UNPASSABLE, "baseline": events, "candidate": events})


def test_the_mcp_lint_tool_returns_the_lint_report():
    report, text = run_tool("agent_invariants_lint_contract", {"contract": UNPASSABLE, "interface": True})
    assert (report["schema"], report["errors"], report["warnings"], report["interface"]) == (
        "agent-invariants/lint/v1", 1, 0, [])
    assert text.splitlines()[0].startswith("error required_but_forbidden [no-shell, must-exec] /rules/1/tool: ")


# -- reports -------------------------------------------------------------------------------------

def test_the_example_has_one_error_and_three_warnings():
    result = cli("lint", "--contract", str(EXAMPLE), "--format", "json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert [(finding["code"], finding["level"]) for finding in report["findings"]] == [
        ("required_but_forbidden", "error"), ("dead_rule", "warning"), ("shadowed_rule", "warning"),
        ("v1_trap", "warning")]
    schema = json.loads((REPO / "schemas" / "lint-report-v1.schema.json").read_text())
    import jsonschema

    jsonschema.validate(report, schema)


def test_sarif_puts_each_finding_at_its_line_of_the_contract(tmp_path):
    contract = write(tmp_path, {"version": 2, "name": "lines", "rules": [
        {"id": "known", "kind": "allow_tools", "tools": ["kb.*", "kb.search"]},
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"},
        {"id": "must-exec", "kind": "tool_calls", "tool": "shell.exec", "min": 1}]})
    result = cli("lint", "--contract", contract, "--format", "sarif", cwd=tmp_path)
    assert result.returncode == 1
    log = json.loads(result.stdout)
    assert list(sarif_validator().iter_errors(log)) == [] and github_profile_problems(log) == []
    text = (tmp_path / contract).read_text().splitlines()
    places = {(result_["ruleId"], result_["level"]): text[result_["locations"][0]["physicalLocation"]["region"][
        "startLine"] - 1].strip() for result_ in log["runs"][0]["results"]}
    assert places[("required_but_forbidden", "error")] == '"tool": "shell.exec",'
    assert places[("shadowed_rule", "warning")] == '"kb.search"'
    # each code's descriptor has the level of its findings (every one said error: a warning's alert
    # was ranked as an error's)
    assert sorted((rule["id"], rule["defaultConfiguration"]["level"], rule["properties"]["problem.severity"])
                  for rule in log["runs"][0]["tool"]["driver"]["rules"]) == [
        ("dead_rule", "warning", "warning"), ("required_but_forbidden", "error", "error"),
        ("shadowed_rule", "warning", "warning")]


def test_sarif_a_codes_descriptor_is_an_error_when_any_of_its_findings_is(tmp_path):
    """An error code's finding that rests on a warning rule is a warning: the descriptor took the
    level of the code's first finding, so it flipped with the order of the rules."""
    contract = write(tmp_path, {"version": 2, "name": "levels", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*", "severity": "warning"},
        {"id": "must-exec", "kind": "tool_calls", "tool": "shell.exec", "min": 1},
        {"id": "no-rm", "kind": "deny_tool", "tool": "rm"},
        {"id": "must-rm", "kind": "tool_calls", "tool": "rm", "min": 1}]})
    log = json.loads(cli("lint", "--contract", contract, "--format", "sarif", cwd=tmp_path).stdout)
    run = log["runs"][0]
    assert [result["level"] for result in run["results"]] == ["warning", "error"]
    assert [(rule["id"], rule["defaultConfiguration"]["level"]) for rule in run["tool"]["driver"]["rules"]] == [
        ("required_but_forbidden", "error")]


def test_interface_lists_the_output_paths_read_and_whether_a_schema_requires_them(tmp_path):
    contract = write(tmp_path, {"version": 2, "name": "reads", "rules": [
        {"id": "shape", "kind": "output_schema", "schema": {"type": "object", "required": ["total"],
                                                             "properties": {"total": {"type": "number"}}}},
        {"id": "total", "kind": "output_match", "match": {"total": {"$gte": 0}},
         "when": {"path": "refunds", "non_empty": True}}]})
    result = cli("lint", "--contract", contract, "--interface", "--format", "json", cwd=tmp_path)
    assert json.loads(result.stdout)["interface"] == [
        {"path": "$", "rules": ["total"], "required": True},
        {"path": "refunds", "rules": ["total"], "required": False},
        {"path": "total", "rules": ["total"], "required": True}]
    assert [finding["code"] for finding in json.loads(result.stdout)["findings"]] == ["unschemaed_read"]
    # SARIF (where it was left out) lists it as the run's property, and lists it alone without truncation
    log = json.loads(cli("lint", "--contract", contract, "--interface", "--format", "sarif", cwd=tmp_path).stdout)
    assert log["runs"][0]["properties"] == {"interface": json.loads(result.stdout)["interface"]}
    assert "properties" not in json.loads(cli("lint", "--contract", contract, "--format", "sarif",
                                              cwd=tmp_path).stdout)["runs"][0]


def test_an_interface_with_no_path_read_says_none(tmp_path):
    contract = write(tmp_path, {"version": 2, "name": "reads", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}]})
    result = cli("lint", "--contract", contract, "--interface", cwd=tmp_path)
    assert result.stdout.splitlines()[-2:] == ["", "output paths read: none"]


def test_an_invalid_contract_is_exit_2_with_nothing_on_stdout(tmp_path):
    contract = write(tmp_path, {"version": 2, "name": "bad", "rules": [{"id": "x", "kind": "deny_tool"}]})
    result = cli("lint", "--contract", contract, cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("agent-invariants: c.json:")


def test_the_library_lints_a_loaded_contract():
    report = lint_contract(load_contract(UNPASSABLE))
    assert (report.errors, report.warnings, report.findings[0].pointer) == (1, 0, "/rules/1/tool")


# -- from review -----------------------------------------------------------------------------------

def codes(*rules: dict[str, Any]) -> list[tuple[str, str, list[str]]]:
    report = lint_contract(load_contract({"version": 2, "name": "t", "rules": list(rules)}))
    return [(finding.code, finding.level, finding.rule_ids) for finding in report.findings]


def test_matchers_are_compared_as_json_where_true_is_no_number_and_globs_once_normalised():
    call_a: dict[str, Any] = {"type": "tool.call", "tool": "a"}
    one, true = {**call_a, "args": {"k": 1}}, {**call_a, "args": {"k": True}}
    required = {"id": "r", "kind": "require_event", "match": true}
    assert codes({"id": "p", "kind": "precedence", "before": one, "after": true}, required) == []
    assert codes({"id": "p", "kind": "precedence", "before": {"type": "tool.call", "tool": "a*?"},
                  "after": {"type": "tool.call", "tool": "a?*"}})[0] == ("self_precedence", "warning", ["p"])


def test_an_error_needs_only_the_error_severity_rules_that_prove_it():
    found = codes({"id": "d", "kind": "deny_tool", "tool": "a"},
                  {"id": "w", "kind": "tool_calls", "tool": "a", "min": 2, "severity": "warning"},
                  {"id": "e", "kind": "tool_calls", "tool": "a", "min": 1})
    assert found[0] == ("required_but_forbidden", "error", ["d", "w"])   # named by the largest, proved by e


def test_a_path_segment_that_only_looks_like_a_digit_is_a_key():
    schema = {"type": "object", "required": ["l"], "properties": {"l": {"type": "array", "minItems": 3}}}
    found = codes({"id": "s", "kind": "output_schema", "schema": schema},
                  {"id": "o", "kind": "output_match", "when": {"path": "l.²", "equals": "x"}, "match": {"z": 1}})
    assert found == [("unschemaed_read", "warning", ["o"])]


def test_defaults_are_filled_in_before_rules_are_compared():
    assert codes({"id": "a", "kind": "output_match", "match": {"k": 1}},
                 {"id": "b", "kind": "output_match", "match": {"k": 1}, "mode": "subset"}) == [
        ("duplicate_rule", "warning", ["a", "b"])]
    assert codes({"id": "a", "kind": "retry_limit", "max_attempts": 2},
                 {"id": "b", "kind": "retry_limit", "tool": "*", "max_attempts": 3, "group_by": "call_signature"}
                 ) == [("shadowed_rule", "warning", ["a", "b"])]


def test_the_mcp_refusal_names_its_own_way_to_check_anyway():
    from agent_invariants.errors import ContractError

    with pytest.raises(ContractError, match=r"\(no_lint to check anyway\)"):
        run_tool("agent_invariants_check_trace", {"contract": UNPASSABLE, "events": [{"seq": 1, "type": "x"}]})


def test_a_deny_event_is_shadowed_by_a_wider_one_filed_by_type_or_tool():
    assert codes({"id": "a", "kind": "deny_event", "match": {"type": "evt.*"}},
                 {"id": "b", "kind": "deny_event", "match": {"type": "evt.x", "tool": "t"}},
                 {"id": "c", "kind": "deny_event", "match": {"type": "other", "tool": "t?"}},
                 {"id": "d", "kind": "deny_event", "match": {"tool": "t*"}}) == [
        ("shadowed_rule", "warning", ["a", "b"]), ("shadowed_rule", "warning", ["b", "d"]),
        ("shadowed_rule", "warning", ["c", "d"])]


def test_lint_stops_after_ten_thousand_findings_and_says_so(tmp_path):
    """150 deny_tool rules on globs that say the same (`*`, `**`, ...) are 11,175 pairs, each a
    shadowed_rule (point 45): lint lists 10,000 in bounded memory and marks the report, rather
    than growing with the pairs."""
    rules = [{"id": f"d{index}", "kind": "deny_tool", "tool": "*" * (index + 1)} for index in range(150)]
    contract = write(tmp_path, {"version": 2, "name": "many", "rules": rules})
    result = cli("lint", "--contract", contract, "--format", "json", cwd=tmp_path)
    report = json.loads(result.stdout)
    assert (result.returncode, report["truncated"], report["warnings"], len(report["findings"])) == (0, True, 10_000,
                                                                                                     10_000)
    import jsonschema

    jsonschema.validate(report, json.loads((REPO / "schemas" / "lint-report-v1.schema.json").read_text()))
    text = cli("lint", "--contract", contract, cwd=tmp_path).stdout.splitlines()
    assert text[-2:] == ["many: 0 errors · 10000 warnings", "lint stopped after 10000 findings: the contract has more"]
    sarif = json.loads(cli("lint", "--contract", contract, "--format", "sarif", cwd=tmp_path).stdout)
    assert (len(sarif["runs"][0]["results"]), sarif["runs"][0]["properties"]["truncated"]) == (10_000, True)
    fewer = write(tmp_path, {"version": 2, "name": "few", "rules": rules[:20]})
    assert "truncated" not in json.loads(cli("lint", "--contract", fewer, "--format", "json", cwd=tmp_path).stdout)


def test_a_call_requirement_naming_no_tool_is_met_by_calls_without_a_name_too():
    """A `require_event` on `tool.call` that names no tool counts every call, named or not, and
    `*` matches no missing tool: a cap on the calls of `*` leaves it passable (three calls
    without a name pass both rules), and it does not require a call that `**` sees. A cap on
    every call (`event_budget.max_tool_calls`, a `require_event.max` naming no tool) still
    contradicts it."""
    any_three = {"id": "three", "kind": "require_event", "match": {"type": "tool.call"}, "min": 3}
    named = [{"id": "cap", "kind": "require_event", "match": {"type": "tool.call", "tool": "*"}, "max": 2},
             {"id": "cap", "kind": "tool_calls", "tool": "*", "max": 2}]
    for cap in named:
        assert [code for code in codes(any_three, cap) if code[0] == "count_contradiction"] == []
    every = [{"id": "cap", "kind": "event_budget", "max_tool_calls": 2},
             {"id": "cap", "kind": "require_event", "match": {"type": "tool.call"}, "max": 2}]
    for cap in every:
        assert ("count_contradiction", "error", ["three", "cap"]) in codes(any_three, cap)
    args = {"id": "args", "kind": "tool_args", "tool": "**", "match": {"x": 1}}
    assert ("unrequired_subject", "warning", ["args"]) in codes(any_three, args)
    assert ("unrequired_subject", "warning", ["args"]) not in codes(
        {**any_three, "match": {"type": "tool.call", "tool": "*"}}, args)


def test_check_takes_a_contract_whose_call_requirement_unnamed_calls_meet(tmp_path):
    contract = write(tmp_path, {"version": 2, "name": "t", "rules": [
        {"id": "three", "kind": "require_event", "match": {"type": "tool.call"}, "min": 3},
        {"id": "cap", "kind": "tool_calls", "tool": "*", "max": 2}]})
    (tmp_path / "t.jsonl").write_text("".join(json.dumps({"seq": n, "type": "tool.call"}) + "\n" for n in (1, 2, 3)))
    result = cli("check", "--contract", contract, "--trace", str(tmp_path / "t.jsonl"), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_two_references_to_one_forbidden_tool_are_one_finding_at_the_later_rule():
    """Both point at the later deny_tool's `tool`: the same finding twice would be noise."""
    reads = {"id": "reads", "kind": "tool_args", "tool": "pay", "match": {
        "note": {"$from_result": {"tool": "shell.rm", "path": "paid"}},
        "amount": {"$from_result": {"tool": "shell.rm"}}}}
    deny = {"id": "deny", "kind": "deny_tool", "tool": "shell.*"}
    assert [code for code in codes(reads, deny) if code[0] == "reference_to_forbidden"] == [
        ("reference_to_forbidden", "warning", ["reads", "deny"])]
    required = {"id": "need", "kind": "tool_calls", "tool": "pay", "min": 1}
    either = {**reads, "match": {"note": {"$any_of": [{"$from_result": {"tool": "shell.rm"}}, "x"]},
                                 "amount": {"$from_result": {"tool": "shell.rm"}}}}
    assert [code for code in codes(either, deny, required) if code[0] == "reference_to_forbidden"] == [
        ("reference_to_forbidden", "error", ["reads", "deny"])]   # (the one outside $any_of proves it)


def test_a_budget_of_no_calls_and_no_events_forbids_a_read_tool_once():
    """`max_events: 0` and `max_tool_calls: 0` in one rule are one forbidding rule (outside review,
    hunt 22): a later budget gave a finding at each of its two fields, an earlier one a single
    finding, as required_but_forbidden gives one per rule."""
    reads = {"id": "reads", "kind": "output_match",
             "match": {"amount": {"$from_result": {"tool": "c", "path": "paid"}}}}
    budget = {"id": "none", "kind": "event_budget", "max_events": 0, "max_tool_calls": 0}
    for rules in ((reads, budget), (budget, reads)):
        report = lint_contract(load_contract({"version": 2, "name": "t", "rules": list(rules)}))
        assert [(finding.code, finding.level) for finding in report.findings] == [("reference_to_forbidden", "error")]


def test_with_an_allow_list_only_named_calls_meet_a_requirement_that_names_no_tool():
    """allow_tools fails every call without a tool name (even with `*`): in a trace that passes,
    the calls a `require_event` naming no tool counts are named, so `*` sees them."""
    allow = {"id": "allow", "kind": "allow_tools", "tools": ["*"]}
    any_three = {"id": "three", "kind": "require_event", "match": {"type": "tool.call"}, "min": 3}
    cap = {"id": "cap", "kind": "tool_calls", "tool": "*", "max": 2}
    assert ("count_contradiction", "error", ["cap", "three"]) in codes(allow, cap, any_three)
    args = {"id": "args", "kind": "tool_args", "tool": "*", "match": {"x": 1}}
    assert [code for code in codes(allow, any_three, args) if code[0] == "unrequired_subject"] == []
    warned = {**allow, "severity": "warning"}   # (a warning fails nothing: unnamed calls may still pass)
    assert [code for code in codes(warned, cap, any_three) if code[0] == "count_contradiction"] == []


@pytest.mark.slow
def test_bounds_on_globs_find_the_few_required_tools_their_literal_run_names():
    """Found by a hunt for slow corners: 5,000 `min` rules on `t0`..`t4999` and 5,000 `max`
    bounds on `t*0*`..`t*4999*` made lint try every bound against every tool (each glob's prefix,
    `t`, names them all): 17 s of lint, and so of every `check` of the contract. A glob's rarest
    literal run now picks its candidates (1 s). The bound is 10 times what it takes, so that only
    the old cost fails it; what lint finds is the reference model's to say (test_lint_model)."""
    import time

    rules = [{"id": f"m{n}", "kind": "tool_calls", "tool": f"t{n}", "min": 1} for n in range(5_000)]
    rules += [{"id": f"x{n}", "kind": "tool_calls", "tool": f"t*{n}*", "max": 1_000_000} for n in range(5_000)]
    contract = load_contract({"version": 2, "name": "many", "rules": rules})
    started = time.monotonic()
    report = lint_contract(contract)
    assert time.monotonic() - started < 10
    assert report.findings == []


@pytest.mark.slow
@pytest.mark.parametrize("bound", [{"kind": "tool_calls", "max": 1}, {"kind": "require_event", "max": 5}],
                         ids=["max-1-calls", "required-events"])
def test_distinct_rules_beside_many_bounds_are_not_compared_with_each(bound):
    """Found by a second hunt for slow corners: 5,000 `tool_args` rules with `distinct` beside
    5,000 bounds on other tools: `vacuous_distinct` tried every bound (31 s), and
    `unrequired_subject` every requirement a `require_event` makes (65 s), each pair with the
    glob algebra. Bounds of 2 calls or more cannot make `distinct` vacuous, and the others are
    found by their globs; requirements by their literal prefix. The bound is many times what it
    takes; what lint finds is the reference model's to say (test_lint_model)."""
    import time

    rules: list[dict[str, Any]] = [{"id": f"d{n}", "kind": "tool_args", "tool": f"t{n}x*", "distinct": ["q"]}
                                   for n in range(3_000)]
    for n in range(3_000):
        limit = {key: value for key, value in bound.items() if key != "kind"}
        tool = f"u{n}y*"
        rules.append({"id": f"b{n}", "kind": bound["kind"], **limit,
                      **({"tool": tool} if bound["kind"] == "tool_calls" else {"match": {"type": "tool.call",
                                                                                      "tool": tool}})})
    contract = load_contract({"version": 2, "name": "many", "rules": rules})
    started = time.monotonic()
    report = lint_contract(contract)
    assert time.monotonic() - started < 10
    assert {finding.code for finding in report.findings} == {"unrequired_subject"}
