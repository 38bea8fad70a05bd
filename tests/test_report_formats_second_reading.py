"""Reports of `check` and `compare` in every format, for version-2 contracts and imported traces.

Read from the spec alone: ci-formats.md (GitHub code scanning's SARIF profile, JUnit consumers),
v1-semantics.md §5, §7 and §14 (D1, D5, D7), v2-extensions.md §0 "Report extras" and §10 points 1, 2,
5, 6, 7 and 26-36 (importer provenance), and the README's "Formats for CI" / "Traces from other
tools" sections.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.support import REPO, github_profile_problems, sarif_validator

import cli_zygote

FORMATS = ("text", "json", "junit", "sarif", "markdown")

CONTRACT: dict[str, Any] = {
    "version": 2,
    "name": "spec",
    "rules": [
        {"id": "refund-args", "kind": "tool_args", "tool": "refund",
         "match": {"order": {"$regex": "^A[0-9]+$"},
                   "amount": {"$from_result": {"tool": "get", "path": "paid",
                                               "where": {"id": {"$arg": "order"}}}}}},
        {"id": "flow", "kind": "tool_order", "tools": ["auth.*", "get", "refund"]},
        {"id": "few", "kind": "tool_calls", "tool": "notify", "min": 1},
        {"id": "nodel", "kind": "deny_tool", "tool": "delete", "severity": "warning"},
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell"},
    ],
}

# The §3.1 example, with a blank line before seq 3, so event positions and physical lines differ.
TRACE_LINES = [
    '{"seq":1,"type":"tool.call","tool":"get","call_id":"c1","args":{"id":"A9"}}',
    '{"seq":2,"type":"tool.result","call_id":"c1","ok":true,"result":{"paid":10}}',
    "",
    '{"seq":3,"type":"tool.call","tool":"refund","call_id":"c2","args":{"order":"A9","amount":12}}',
    '{"seq":4,"type":"tool.call","tool":"refund","call_id":"c3","args":{"order":"A7","amount":5}}',
    '{"seq":5,"type":"tool.call","tool":"delete","call_id":"c4"}',
]

EXPECTED_CODES = [
    ("refund-args", "tool_args.mismatch", 3, 4),
    ("refund-args", "tool_args.reference_unresolved", 4, 5),
    ("flow", "tool_order.missing", None, None),
    ("few", "tool_calls.min", None, None),
    ("nodel", "deny_tool.denied", 5, 6),
]

MCP_LOG = [
    {"ts": "2025-01-01T00:00:00Z", "session": "s1", "dir": "c2s",
     "msg": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}},
    {"ts": "2025-01-01T00:00:01Z", "session": "s1", "dir": "s2c", "msg": {"jsonrpc": "2.0", "id": 1, "result": {}}},
    {"ts": "2025-01-01T00:00:02Z", "session": "s1", "dir": "c2s",
     "msg": {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "shell", "arguments": {"cmd": "ls"}}}},
    {"ts": "2025-01-01T00:00:03Z", "session": "s1", "dir": "s2c",
     "msg": {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "ok"}]}}},
]

PYDANTIC = "examples/imports/pydantic-ai.otlp.jsonl"
PYDANTIC_SPAN = "cb65ebb6bf54668f"


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI as users run it, in `cwd`."""
    env = {**os.environ, "NO_COLOR": "1"}
    proc = cli_zygote.run_python(["-m", "agent_invariants", *args], cwd, None, env, timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode("utf-8", "replace"),
                                       proc.stderr.decode("utf-8", "replace"))


def make_case(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "c.json").write_text(json.dumps(CONTRACT, indent=2), encoding="utf-8")
    (folder / "t.jsonl").write_text("".join(line + "\n" for line in TRACE_LINES), encoding="utf-8")
    return folder


def check_args(fmt: str) -> tuple[str, ...]:
    return ("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", fmt)


@pytest.fixture(scope="module")
def case_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_case(tmp_path_factory.mktemp("first") / "case")


@pytest.fixture(scope="module")
def outputs(case_dir: Path) -> dict[str, subprocess.CompletedProcess[str]]:
    return {fmt: run(case_dir, *check_args(fmt)) for fmt in (*FORMATS, "pretty", "html")}


@pytest.fixture(scope="module")
def sarif(outputs: dict[str, subprocess.CompletedProcess[str]]) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(outputs["sarif"].stdout)
    return data


@pytest.fixture(scope="module")
def mcp_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("mcp")
    contract = {"version": 2, "name": "mcp", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell"},
        {"id": "min-notify", "kind": "tool_calls", "tool": "notify", "min": 1}]}
    (folder / "c.json").write_text(json.dumps(contract), encoding="utf-8")
    (folder / "s.mcp.jsonl").write_text("".join(json.dumps(r) + "\n" for r in MCP_LOG), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def mcp_outputs(mcp_dir: Path) -> dict[str, subprocess.CompletedProcess[str]]:
    return {fmt: run(mcp_dir, "check", "-c", "c.json", "-t", "s.mcp.jsonl", "--input-format", "mcp-log",
                     "--format", fmt) for fmt in FORMATS}


@pytest.fixture(scope="module")
def pydantic_outputs() -> dict[str, subprocess.CompletedProcess[str]]:
    return {fmt: run(REPO, "check", "-c", "examples/imports/contract.json", "-t", PYDANTIC, "--input-format",
                     "auto", "--format", fmt) for fmt in FORMATS}


def json_report(outputs: dict[str, subprocess.CompletedProcess[str]]) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(outputs["json"].stdout)
    return data


def results_of(log: dict[str, Any]) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = log["runs"][0]["results"]
    return results


# -- exit codes and the JSON report ----------------------------------------------------------------


def test_every_format_has_the_same_exit_code(outputs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """v1 §7.5: exit 1 for >= 1 error violation, whatever the format (html included)."""
    assert {fmt: r.returncode for fmt, r in outputs.items()} == {fmt: 1 for fmt in outputs}


def test_pretty_is_text(outputs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """v1 §7.1 "pretty (default)"; the CLI offers `text` and `pretty`: spec silent, read as one format."""
    assert outputs["pretty"].stdout == outputs["text"].stdout


def test_json_codes_seqs_and_order(outputs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """§0 report extras and §10.1 (every violation has a code of its rule's kind), §10.2 (no seq for
    tool_order.missing and tool_calls.min), §10.5 (order within a rule, concatenation in contract
    order), D1/D5 (`line` = physical line)."""
    got = [(v["rule_id"], v["code"], v.get("event_seq"), v.get("line")) for v in json_report(outputs)["violations"]]
    assert got == EXPECTED_CODES


def test_json_status_and_pointer(outputs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """§10.6: reference_unresolved is `unresolved`, the others `fail`; §0: `pointer` (RFC 6901) into
    the event for tool_args."""
    violations = json_report(outputs)["violations"]
    assert [v["status"] for v in violations] == ["fail", "unresolved", "fail", "fail", "fail"]
    assert [v.get("pointer") for v in violations[:2]] == ["/args/amount", "/args/amount"]


def test_json_unresolved_counts_as_error(outputs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """§10.6: every violation counts in error_count/warning_count whatever its status."""
    report = json_report(outputs)
    assert (report["passed"], report["error_count"], report["warning_count"]) == (False, 4, 1)


def test_json_is_two_space_indented_with_newline(outputs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """v1 §7.2: JSON.stringify(report, null, 2) + newline."""
    text = outputs["json"].stdout
    assert text.endswith("}\n") and text.startswith('{\n  "schema": "agent-invariants/check/v1"')


def test_json_evidence_string_cut_at_200_code_points(tmp_path: Path) -> None:
    """§10.7: evidence strings are cut to 200 Unicode code points plus `…`."""
    value = "é" * 150 + "😀" * 300
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "n", "rules": [
        {"id": "a", "kind": "tool_args", "tool": "*", "match": {"q": "z"}}]}), encoding="utf-8")
    (tmp_path / "t.jsonl").write_text(json.dumps(
        {"seq": 1, "type": "tool.call", "tool": "x", "args": {"q": value}}) + "\n", encoding="utf-8")
    result = run(tmp_path, "check", "-c", "c.json", "-t", "t.jsonl", "-f", "json")
    mismatch = json.loads(result.stdout)["violations"][0]["evidence"]["mismatches"][0]
    assert mismatch["actual"] == value[:200] + "…"


# -- text --------------------------------------------------------------------------------------------


def test_text_header(outputs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """v1 §7.1: `FAIL  <contract name>`, counts separated by ` · `, output ends with a newline."""
    text = outputs["text"].stdout
    assert text.splitlines()[0] == "FAIL  spec"
    assert "5 events · 4 tool calls · 4 errors · 1 warning" in text
    assert text.endswith("\n")


def test_text_shows_code_pointer_seq_and_line(outputs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """§0 report extras shown in the text report: code and pointer; v1 §7.1 `seq <n>`; README: a
    violation on line N is line N in every format."""
    line = next(x for x in outputs["text"].stdout.splitlines() if "tool_args.mismatch" in x)
    assert "/args/amount" in line and "seq 3" in line and "t.jsonl:4" in line


def test_text_places_violation_without_seq(outputs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """v1 §7.1: "seq <n>: " omitted when no seq; §10.2: tool_calls.min has none. The line still
    names its code."""
    line = next(x for x in outputs["text"].stdout.splitlines() if "tool_calls.min" in x)
    assert "seq " not in line


def test_text_marks_warning_rule(outputs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """v1 §7.1: ✗ failed error rule, ! failed warning rule."""
    lines = outputs["text"].stdout.splitlines()
    assert any(x.startswith("! nodel") for x in lines) and any(x.startswith("✗ refund-args") for x in lines)


# -- SARIF -------------------------------------------------------------------------------------------


def test_sarif_passes_schema_and_github_profile(sarif: dict[str, Any]) -> None:
    """ci-formats §1.1/§1.4: OASIS schema plus GitHub's profile (locations, four region fields,
    rule texts <= 1024, fingerprints, relative uris, ruleIndex)."""
    assert list(sarif_validator().iter_errors(sarif)) == []
    assert github_profile_problems(sarif) == []


def test_sarif_one_descriptor_per_rule_in_contract_order(sarif: dict[str, Any]) -> None:
    """v1 §7.4 (one rule per contract rule, passing ones too); ci-formats: rule ids stable."""
    ids = [rule["id"] for rule in sarif["runs"][0]["tool"]["driver"]["rules"]]
    assert ids == [rule["id"] for rule in CONTRACT["rules"]]


def test_sarif_rule_texts_present(sarif: dict[str, Any]) -> None:
    """ci-formats §1.1: shortDescription, fullDescription (<= 1024) and help.text required."""
    for rule in sarif["runs"][0]["tool"]["driver"]["rules"]:
        assert 0 < len(rule["shortDescription"]["text"]) <= 1024
        assert 0 < len(rule["fullDescription"]["text"]) <= 1024
        assert rule["help"]["text"]


def test_sarif_code_in_message_and_properties(sarif: dict[str, Any]) -> None:
    """§0 report extras, §10.1: each result shows its code in the message and its properties."""
    got = [(r["ruleId"], r["properties"]["code"]) for r in results_of(sarif)]
    assert got == [(rule, code) for rule, code, _, _ in EXPECTED_CODES]
    assert all(r["properties"]["code"] in r["message"]["text"] for r in results_of(sarif))


def test_sarif_levels(sarif: dict[str, Any]) -> None:
    """v1 §7.4: level error|warning after the rule's severity."""
    assert [r["level"] for r in results_of(sarif)] == ["error", "error", "error", "error", "warning"]


def test_sarif_region_is_the_physical_line(sarif: dict[str, Any]) -> None:
    """D1: SARIF regions use the event's physical line; ci-formats: startColumn 1, endColumn = line
    length + 1."""
    first = results_of(sarif)[0]["locations"][0]["physicalLocation"]
    assert first["artifactLocation"]["uri"] == "t.jsonl"
    assert first["region"] == {"startLine": 4, "endLine": 4, "startColumn": 1,
                               "endColumn": len(TRACE_LINES[3]) + 1}


def test_sarif_places_violations_without_seq(sarif: dict[str, Any]) -> None:
    """ci-formats: every result needs a physical location; README: whole-trace violations point at
    the rule's line in the contract."""
    contract_lines = (json.dumps(CONTRACT, indent=2)).splitlines()
    for result in results_of(sarif)[2:4]:
        physical = result["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"] == "c.json"
        start = physical["region"]["startLine"]
        declared = contract_lines[start - 1:start + 1]  # the rule object's `{` line, then its id
        assert any(f'"id": "{result["ruleId"]}"' in line for line in declared), declared


def test_sarif_fingerprints_are_distinct(sarif: dict[str, Any]) -> None:
    """ci-formats "Fingerprints and dedup": one primaryLocationLineHash per result, derived from rule
    and evidence, so two results do not collapse into one alert."""
    hashes = [r["partialFingerprints"]["primaryLocationLineHash"] for r in results_of(sarif)]
    assert len(set(hashes)) == len(hashes)


def test_sarif_uri_relative_for_absolute_arguments(case_dir: Path) -> None:
    """ci-formats "Alert-limit trap" and §1.1 Location: uris are repo-relative, no absolute path even
    when the files are named by absolute paths (README: relative to the current folder)."""
    result = run(case_dir, "check", "-c", str(case_dir / "c.json"), "-t", str(case_dir / "t.jsonl"), "-f", "sarif")
    assert str(case_dir) not in result.stdout
    assert github_profile_problems(json.loads(result.stdout)) == []


def test_sarif_category_gets_trailing_slash(case_dir: Path) -> None:
    """ci-formats: automationDetails.id is `category/run-id`; `--category` help: a trailing / is added."""
    result = run(case_dir, *check_args("sarif"), "--category", "agent-invariants/nightly")
    assert json.loads(result.stdout)["runs"][0]["automationDetails"]["id"] == "agent-invariants/nightly/"


def test_sarif_contract_anchor(case_dir: Path) -> None:
    """ci-formats "Anchor location" (nightly artifacts) and README `--sarif-anchor contract`: every
    result at the contract, the trace line in the message."""
    log = json.loads(run(case_dir, *check_args("sarif"), "--sarif-anchor", "contract").stdout)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results_of(log)}
    assert uris == {"c.json"}
    assert "t.jsonl:4" in results_of(log)[0]["message"]["text"]
    assert github_profile_problems(log) == []


def test_sarif_stays_under_25000_results(tmp_path: Path) -> None:
    """ci-formats hard limits: <= 25,000 results per run, or the whole file is rejected; README: errors
    first, and the run's properties say how many were cut."""
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "n", "rules": [
        {"id": "warn", "kind": "deny_tool", "tool": "x", "severity": "warning"},
        {"id": "err", "kind": "deny_tool", "tool": "x"}]}), encoding="utf-8")
    (tmp_path / "t.jsonl").write_text("".join(
        f'{{"seq":{i + 1},"type":"tool.call","tool":"x"}}\n' for i in range(12_600)), encoding="utf-8")
    result = run(tmp_path, "check", "-c", "c.json", "-t", "t.jsonl", "-f", "sarif", "--max-violations", "0")
    log = json.loads(result.stdout)
    results = results_of(log)
    assert result.returncode == 1 and len(results) == 25_000
    assert [r["ruleId"] for r in results].count("err") == 12_600  # every error kept
    assert "25200" in json.dumps(log["runs"][0].get("properties", {}))
    assert github_profile_problems(log) == []


# -- JUnit -------------------------------------------------------------------------------------------


def test_junit_one_testcase_per_rule(outputs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """ci-formats §2 mapping and README: one <testcase> per rule, passing rules too; a failed error
    rule has <failure>, a failed warning rule passes with <system-out>."""
    root = ET.fromstring(outputs["junit"].stdout)
    cases = {case.get("name"): [child.tag for child in case] for case in root.iter("testcase")}
    assert cases == {"refund-args": ["failure"], "flow": ["failure"], "few": ["failure"],
                     "nodel": ["system-out"], "no-shell": []}


def test_junit_failure_carries_code_and_pointer(outputs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """§0 report extras in every format: the failure body names code and pointer and the line."""
    root = ET.fromstring(outputs["junit"].stdout)
    failure = next(c for c in root.iter("testcase") if c.get("name") == "refund-args").find("failure")
    assert failure is not None and failure.text is not None
    assert "tool_args.mismatch" in failure.text and "/args/amount" in failure.text
    assert "tool_args.reference_unresolved" in failure.text and "t.jsonl:4" in failure.text


def test_junit_no_seq_failure_has_code(outputs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """§10.2: tool_order.missing has no seq; its failure still names the code."""
    root = ET.fromstring(outputs["junit"].stdout)
    case = next(c for c in root.iter("testcase") if c.get("name") == "flow")
    failure = case.find("failure")
    assert failure is not None and "tool_order.missing" in (failure.text or "")
    assert case.get("line") is None


def test_junit_counts(outputs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """ci-formats §2: tests/failures on the suite; five rules, three failing error rules."""
    root = ET.fromstring(outputs["junit"].stdout)
    suite = next(root.iter("testsuite"))
    assert (suite.get("tests"), suite.get("failures")) == ("5", "3")


def test_junit_is_valid_xml_for_hostile_strings(tmp_path: Path) -> None:
    """ci-formats §2: JUnit must parse; trace strings with control characters, `]]>`, lone
    surrogates and huge text."""
    tools = ["a\u0001b]]>c<d>&\"'\u001b[31m", "\ud800lone", "h" * 490]
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "x]]>\u0007", "rules": [
        {"id": "no-bad", "kind": "deny_tool", "tool": "*"},
        {"id": "args", "kind": "tool_args", "tool": "*", "match": {"q": "z"}}]}), encoding="utf-8")
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(
        {"seq": i + 1, "type": "tool.call", "tool": t, "args": {"q": t + "\ud800]]>\u0000" + "k" * 200_000}}) + "\n"
        for i, t in enumerate(tools)), encoding="utf-8")
    result = run(tmp_path, "check", "-c", "c.json", "-t", "t.jsonl", "-f", "junit")
    assert result.returncode == 1
    root = ET.fromstring(result.stdout)
    assert [c.get("name") for c in root.iter("testcase")] == ["no-bad", "args"]
    assert len(result.stdout) < 100_000


# -- Markdown ----------------------------------------------------------------------------------------


def test_markdown_escapes_trace_text(tmp_path: Path) -> None:
    """README "Formats for CI": text from traces is escaped (no HTML, no table breaks)."""
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "n|<b>", "rules": [
        {"id": "deny", "kind": "deny_tool", "tool": "*"}]}), encoding="utf-8")
    (tmp_path / "t.jsonl").write_text(json.dumps(
        {"seq": 1, "type": "tool.call", "tool": "p|q`r`<img src=x>"}) + "\n", encoding="utf-8")
    text = run(tmp_path, "check", "-c", "c.json", "-t", "t.jsonl", "-f", "markdown").stdout
    assert "<img" not in text and "<b>" not in text
    assert "p|q" not in text and "`r`" not in text


def test_markdown_lists_code_and_line(outputs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """README: the first 50 violations with file:line; §0 code in every format; a table row per rule."""
    text = outputs["markdown"].stdout
    assert text.startswith("## ❌ agent-invariants: spec failed")
    assert "`t.jsonl:4`" in text and "tool_args.mismatch" in text and "tool_calls.min" in text
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert [row.split("|")[1].strip() for row in rows] == [f"`{r['id']}`" for r in CONTRACT["rules"]]


# -- HTML --------------------------------------------------------------------------------------------


def test_html_is_self_contained(outputs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """README "See the run": one self-contained page that loads nothing."""
    page = outputs["html"].stdout
    assert "<html" in page.lower() and "Content-Security-Policy" in page
    assert "<script src" not in page and 'rel="stylesheet" href' not in page


# -- determinism -------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_same_bytes_from_another_folder(fmt: str, outputs: dict[str, subprocess.CompletedProcess[str]],
                                        case_dir: Path, tmp_path: Path) -> None:
    """ci-formats "Alert-limit trap": no temp dirs, timestamps or random ids in the output: the same
    check run from another folder gives the same bytes, naming neither folder."""
    other = make_case(tmp_path / "elsewhere")
    second = run(other, *check_args(fmt))
    assert second.stdout == outputs[fmt].stdout
    assert str(case_dir) not in second.stdout and str(other) not in second.stdout


# -- imported traces ---------------------------------------------------------------------------------


def test_import_json_points_at_source_line(mcp_outputs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """§7 data.source and README: a violation on an imported trace points at the source file and
    line of the record it came from (the tools/call request is line 3)."""
    report = json_report(mcp_outputs)
    assert report["trace"] == "s.mcp.jsonl"
    got = [(v["code"], v.get("event_seq"), v.get("line")) for v in report["violations"]]
    assert got == [("deny_tool.denied", 2, 3), ("tool_calls.min", None, None)]


@pytest.mark.parametrize("fmt", ["text", "junit", "markdown"])
def test_import_line_in_every_format(fmt: str, mcp_outputs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """README "Traces from other tools": the source file and line in every format."""
    assert mcp_outputs[fmt].returncode == 1
    assert "s.mcp.jsonl:3" in mcp_outputs[fmt].stdout


def test_import_sarif_points_at_source(mcp_outputs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """§7/README: SARIF locations point at the source file; the no-seq one is still located."""
    log = json.loads(mcp_outputs["sarif"].stdout)
    first = results_of(log)[0]["locations"][0]["physicalLocation"]
    assert first["artifactLocation"]["uri"] == "s.mcp.jsonl"
    assert (first["region"]["startLine"], first["region"]["endColumn"]) == (3, len(json.dumps(MCP_LOG[2])) + 1)
    assert github_profile_problems(log) == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_import_span_id_in_every_format(fmt: str,
                                        pydantic_outputs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """README: a violation points at the source file, its line and its span (`file:1 span cb65…`;
    SARIF too); exit 1 in every format."""
    result = pydantic_outputs[fmt]
    assert result.returncode == 1
    assert PYDANTIC_SPAN in result.stdout and PYDANTIC in result.stdout


# -- compare -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def compare_outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, subprocess.CompletedProcess[str]]:
    folder = tmp_path_factory.mktemp("compare")
    (folder / "c.json").write_text(json.dumps({"version": 2, "name": "cmp", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell"},
        {"id": "min-notify", "kind": "tool_calls", "tool": "notify", "min": 1}]}), encoding="utf-8")
    (folder / "b.jsonl").write_text('{"seq":1,"type":"tool.call","tool":"notify"}\n', encoding="utf-8")
    (folder / "k.jsonl").write_text('{"seq":1,"type":"tool.call","tool":"get"}\n'
                                    '{"seq":2,"type":"tool.call","tool":"shell"}\n', encoding="utf-8")
    return {fmt: run(folder, "compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl", "-f", fmt)
            for fmt in (*FORMATS, "html")}


def test_compare_exit_code_in_every_format(compare_outputs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """v1 §7.5: compare with >= 1 regression exits 1, in every format."""
    assert {f: r.returncode for f, r in compare_outputs.items()} == {f: 1 for f in compare_outputs}


def test_compare_json_regressions(compare_outputs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """v1 §6: regressions in fixed order: new_rule_failure per rule, then new_tool (sorted)."""
    report = json.loads(compare_outputs["json"].stdout)
    kinds = [(r["kind"], r["evidence"].get("rule_id", r["evidence"].get("tool"))) for r in report["regressions"]]
    assert kinds == [("new_rule_failure", "no-shell"), ("new_rule_failure", "min-notify"),
                     ("new_tool", "get"), ("new_tool", "shell")]


def test_compare_sarif_every_result_located(compare_outputs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """ci-formats: every result needs a physical location, also for compare (a regression without an
    event, such as tool_calls.min's new failure, included)."""
    log = json.loads(compare_outputs["sarif"].stdout)
    assert list(sarif_validator().iter_errors(log)) == []
    assert github_profile_problems(log) == []


def test_compare_junit_and_markdown(compare_outputs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """README: for compare a "regressions" suite comes first; Markdown lists the regressions."""
    root = ET.fromstring(compare_outputs["junit"].stdout)
    first = next(root.iter("testsuite"))
    assert [c.get("name") for c in first.iter("testcase")][:2] == ["new_rule_failure: no-shell",
                                                                    "new_rule_failure: min-notify"]
    assert "### Regressions" in compare_outputs["markdown"].stdout
    assert compare_outputs["text"].stdout.startswith("REGRESSION  cmp")


# -- closed pipe -------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["sarif", "json"])
def test_closed_pipe_is_no_traceback(fmt: str, case_dir: Path, tmp_path: Path) -> None:
    """README "Exit codes": standard output that cannot be written (a closed pipe) is exit 2 with one
    line on stderr, never 1 and never a traceback."""
    big = tmp_path / "big.jsonl"
    big.write_text("".join(f'{{"seq":{i + 1},"type":"tool.call","tool":"shell"}}\n' for i in range(3000)),
                   encoding="utf-8")
    shutil.copy(case_dir / "c.json", tmp_path / "c.json")
    command = (f"{sys.executable} -m agent_invariants check -c c.json -t big.jsonl -f {fmt} 2>err | head -c 10"
               " >/dev/null; echo ${PIPESTATUS[0]}")
    proc = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "NO_COLOR": "1"})
    err = (tmp_path / "err").read_text(encoding="utf-8")
    assert proc.stdout.strip() == "2"
    assert "Traceback" not in err and len(err.splitlines()) >= 1


# -- violations left out (D7) ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def capped_outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, subprocess.CompletedProcess[str]]:
    folder = tmp_path_factory.mktemp("capped")
    (folder / "c.json").write_text(json.dumps({"version": 2, "name": "n", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]}), encoding="utf-8")
    (folder / "t.jsonl").write_text("".join(
        f'{{"seq":{i + 1},"type":"tool.call","tool":"shell"}}\n' for i in range(3)), encoding="utf-8")
    return {fmt: run(folder, "check", "-c", "c.json", "-t", "t.jsonl", "-f", fmt, "--max-violations", "1")
            for fmt in FORMATS}


def test_capped_json_counts_every_violation(capped_outputs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """D7: a rule keeps at most --max-violations violations; error_count, passed and the exit code
    count every one, and the report says how many were left out."""
    report = json_report(capped_outputs)
    assert (capped_outputs["json"].returncode, report["error_count"], len(report["violations"])) == (1, 3, 1)
    assert report["results"][0]["violations_total"] == 3


@pytest.mark.parametrize("fmt", ["text", "junit", "markdown", "sarif"])
def test_capped_report_says_how_many_left_out(fmt: str,
                                              capped_outputs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """D7: "the report says how many were left out", in every format (2 of 3 here)."""
    result = capped_outputs[fmt]
    assert result.returncode == 1
    assert "2 more" in result.stdout


# -- several traces, several regressions of a kind ---------------------------------------------------


def test_sarif_batch_is_one_run_with_each_file(tmp_path: Path) -> None:
    """ci-formats "Category and runs": one run per category, results of one tool; each result at its
    own trace file."""
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "n", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]}), encoding="utf-8")
    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / name).write_text('{"seq":1,"type":"tool.call","tool":"shell"}\n', encoding="utf-8")
    log = json.loads(run(tmp_path, "check", "-c", "c.json", "-t", "a.jsonl", "-t", "b.jsonl", "-f", "sarif").stdout)
    assert len(log["runs"]) == 1
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results_of(log)]
    assert uris == ["a.jsonl", "b.jsonl"]
    hashes = {r["partialFingerprints"]["primaryLocationLineHash"] for r in results_of(log)}
    assert len(hashes) == 2 and github_profile_problems(log) == []


def test_compare_sarif_one_descriptor_per_regression_kind(tmp_path: Path) -> None:
    """ci-formats: stable rule ids, one reporting descriptor per kind; two new tools are two results
    of one descriptor."""
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "n", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]}), encoding="utf-8")
    (tmp_path / "b.jsonl").write_text('{"seq":1,"type":"tool.call","tool":"get"}\n', encoding="utf-8")
    (tmp_path / "k.jsonl").write_text('{"seq":1,"type":"tool.call","tool":"zap"}\n'
                                      '{"seq":2,"type":"tool.call","tool":"zip"}\n', encoding="utf-8")
    result = run(tmp_path, "compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl", "-f", "sarif")
    log = json.loads(result.stdout)
    ids = [rule["id"] for rule in log["runs"][0]["tool"]["driver"]["rules"]]
    assert len(ids) == len(set(ids)) and result.returncode == 1
    new_tool = [r for r in results_of(log) if r["properties"].get("regression") == "new_tool"]
    assert len(new_tool) == 2 and len({r["ruleId"] for r in new_tool}) == 1
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in new_tool] == [1, 2]
    assert github_profile_problems(log) == []


# -- identity across the traces of a batch -----------------------------------------------------------

MCP_TWO_SESSIONS = [
    {"ts": "2025-01-01T00:00:00Z", "session": session, "dir": "c2s", "msg": message}
    for session in ("s1", "s2")
    for message in ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
                    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "shell", "arguments": {}}})
]


@pytest.fixture(scope="module")
def batch_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A contract with a located and a whole-trace (no seq) rule; two traces named t.jsonl in two
    folders; an MCP log holding two sessions (two runs)."""
    folder = tmp_path_factory.mktemp("batch")
    (folder / "c.json").write_text(json.dumps({"version": 2, "name": "n", "rules": [
        {"id": "st", "kind": "run_status", "equals": "completed"},
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]}), encoding="utf-8")
    for sub in ("a", "b"):
        (folder / sub).mkdir()
        (folder / sub / "t.jsonl").write_text('{"seq":1,"type":"tool.call","tool":"shell"}\n', encoding="utf-8")
    (folder / "m.jsonl").write_text("".join(json.dumps(r) + "\n" for r in MCP_TWO_SESSIONS), encoding="utf-8")
    return folder


BATCHES = {
    "same-name-traces": ("-t", "a/t.jsonl", "-t", "b/t.jsonl"),
    "runs-of-one-import": ("-t", "m.jsonl", "--input-format", "mcp-log", "--run", "all"),
}


@pytest.mark.parametrize("batch", sorted(BATCHES))
def test_junit_testcase_identity_unique_in_batch(batch: str, batch_dir: Path) -> None:
    """ci-formats §2: GitLab's identity is classname+name, duplicates after the first are dropped;
    the mapping makes classname "unique per scenario, which keeps GitLab from dropping cases";
    README: "`classname` is unique per contract and trace"."""
    result = run(batch_dir, "check", "-c", "c.json", *BATCHES[batch], "-f", "junit")
    assert result.returncode == 1
    identities = [(c.get("classname"), c.get("name")) for c in ET.fromstring(result.stdout).iter("testcase")]
    assert len(identities) == 4
    assert len(set(identities)) == 4, identities


@pytest.mark.parametrize("batch", sorted(BATCHES))
def test_sarif_fingerprints_unique_in_batch(batch: str, batch_dir: Path) -> None:
    """ci-formats "Fingerprints and dedup": primaryLocationLineHash derived from (rule id, scenario key,
    canonical evidence key); distinct violations (of two traces or two runs) stay distinct alerts."""
    result = run(batch_dir, "check", "-c", "c.json", *BATCHES[batch], "-f", "sarif")
    results = results_of(json.loads(result.stdout))
    assert len(results) == {"same-name-traces": 4, "runs-of-one-import": 2}[batch]  # MCP runs end completed
    hashes = [r["partialFingerprints"]["primaryLocationLineHash"] for r in results]
    assert len(set(hashes)) == len(results), hashes


# -- smaller format details --------------------------------------------------------------------------


def test_sarif_end_column_counts_utf16_units(tmp_path: Path) -> None:
    """ci-formats "Anchor location": endColumn = line length + 1; the run declares columnKind
    utf16CodeUnits (spec silent on the unit: we read the length in the declared unit)."""
    line = json.dumps({"seq": 1, "type": "tool.call", "tool": "😀é"}, ensure_ascii=False)
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "n", "rules": [
        {"id": "d", "kind": "deny_tool", "tool": "*"}]}), encoding="utf-8")
    (tmp_path / "t.jsonl").write_text(line + "\n", encoding="utf-8")
    log = json.loads(run(tmp_path, "check", "-c", "c.json", "-t", "t.jsonl", "-f", "sarif").stdout)
    assert log["runs"][0]["columnKind"] == "utf16CodeUnits"
    region = results_of(log)[0]["locations"][0]["physicalLocation"]["region"]
    assert region["endColumn"] == len(line.encode("utf-16-le")) // 2 + 1


def test_markdown_lists_first_50_violations(tmp_path: Path) -> None:
    """README "Formats for CI": Markdown shows the first 50 violations with file:line (and says what
    it left out)."""
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "n", "rules": [
        {"id": "d", "kind": "deny_tool", "tool": "*"}]}), encoding="utf-8")
    (tmp_path / "t.jsonl").write_text("".join(
        f'{{"seq":{i + 1},"type":"tool.call","tool":"x"}}\n' for i in range(60)), encoding="utf-8")
    text = run(tmp_path, "check", "-c", "c.json", "-t", "t.jsonl", "-f", "markdown").stdout
    listed = [line for line in text.splitlines() if line.startswith("- ❌")]
    assert len(listed) == 50 and "`t.jsonl:50`" in listed[-1]
    assert "10 more" in text


def test_output_file_holds_the_stdout_bytes(case_dir: Path, tmp_path: Path,
                                            outputs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """v1 §7.5 / §8: `--output` writes the report instead of stdout, same exit code."""
    target = tmp_path / "out.sarif"
    result = run(case_dir, *check_args("sarif"), "--output", str(target))
    assert (result.returncode, result.stdout) == (1, "")
    assert target.read_text(encoding="utf-8") == outputs["sarif"].stdout


@pytest.fixture(scope="module")
def hostile_bytes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """Raw stdout of each format for a trace whose strings hold control characters, `]]>` and a lone
    surrogate escape."""
    folder = tmp_path_factory.mktemp("hostile")
    (folder / "c.json").write_text(json.dumps({"version": 2, "name": "n", "rules": [
        {"id": "no-bad", "kind": "deny_tool", "tool": "*"}]}), encoding="utf-8")
    (folder / "t.jsonl").write_text(json.dumps({"seq": 1, "type": "tool.call", "tool": "a\u0001]]>\u001b[31m\ud800"})
                                    + "\n", encoding="utf-8")
    env = {**os.environ, "NO_COLOR": "1"}
    return {fmt: cli_zygote.run_python(["-m", "agent_invariants", "check", "-c", "c.json", "-t", "t.jsonl",
                                        "-f", fmt], folder, None, env).stdout
            for fmt in FORMATS}


@pytest.mark.parametrize("fmt", FORMATS)
def test_output_is_utf8_without_raw_controls(fmt: str, hostile_bytes: dict[str, bytes]) -> None:
    """ci-formats §2 (JUnit must stay valid XML: no C0 controls), README "Exit codes" (input text is
    escaped, it cannot drive the terminal), §10.7 (strings from the trace): every format is valid
    UTF-8 (a lone surrogate becomes U+FFFD) and carries no raw control character but tab/newline."""
    data = hostile_bytes[fmt]
    text = data.decode("utf-8")  # strict
    assert text and not [c for c in text if ord(c) < 0x20 and c not in "\t\n\r"]
