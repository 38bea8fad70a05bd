"""A third, independent reading of the report formats, hunting corners with contract-version-2
features in every format (text, json, junit, sarif, markdown, github, html).

Sources: spec/ci-formats.md (SARIF §1.1, JUnit §2), spec/v1-semantics.md §5 and §7, spec/v2-extensions.md
§0 "Report extras" and §10 points 1, 2, 5, 6, 7 and 82, and the README's "Reports" and "Formats for CI"
sections (plus `--format github`, `--output` and `--max-violations` under "The command line").
"""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from support import github_profile_problems, sarif_validator, write_contract, write_trace

FORMATS = ("text", "json", "junit", "sarif", "markdown", "github", "html")
WEIRD = "we%ird::a<b>&c`d|e\nf ñ✓"
"""A tool name holding what each format must escape: %, ::, <, &, a backtick, a pipe, a newline and
non-ASCII."""

RULES: list[dict[str, Any]] = [
    {"id": "no-weird", "kind": "deny_tool", "tool": WEIRD},
    {"id": "args", "kind": "tool_args", "tool": "refund", "match": {"order": {"$regex": "^A[0-9]+$"}}},
    {"id": "need-done", "kind": "require_event", "match": {"type": "run.completed"}, "min": 1,
     "severity": "warning"},
    {"id": "fine", "kind": "deny_tool", "tool": "never.called"},
]
EVENTS: list[dict[str, Any]] = [
    {"type": "tool.call", "tool": WEIRD, "call_id": "w1"},
    {"type": "tool.call", "tool": "refund", "call_id": "c2", "args": {"order": "é" * 300}},
]

PRECEDENCE_RULES: list[dict[str, Any]] = [
    {"id": "lookup-first", "kind": "precedence", "before": {"type": "tool.result", "tool": "get", "ok": True},
     "after": {"type": "tool.call", "tool": "refund"}, "correlate": [{"before": "id", "after": "order"}]},
    {"id": "out", "kind": "output_schema", "schema": {"type": "object", "required": ["x"]}},
    {"id": "out2", "kind": "output_match", "match": {"x": 1}},
]
PRECEDENCE_EVENTS: list[dict[str, Any]] = [
    {"type": "tool.call", "tool": "get", "call_id": "c1", "args": {"id": "A1"}},
    {"type": "tool.result", "call_id": "c1", "ok": True},
    {"type": "tool.call", "tool": "refund", "call_id": "c2", "args": {"order": "B2"}},
    {"type": "tool.call", "tool": "get", "call_id": "c3", "args": {"id": "B2"}},
    {"type": "tool.result", "call_id": "c3", "ok": True},
    {"type": "tool.call", "tool": "refund", "call_id": "c4", "args": {}},
]

PARTIAL_RULES: list[dict[str, Any]] = [
    {"id": "need-done", "kind": "require_event", "match": {"type": "run.completed"}, "min": 1},
    {"id": "res", "kind": "tool_result_required", "tool": "*"},
]
PARTIAL_EVENTS: list[dict[str, Any]] = [{"type": "tool.call", "tool": "x", "call_id": "a"}]


def _setup(tmp_path: Path, rules: list[dict[str, Any]], events: list[Any]) -> None:
    write_contract(tmp_path, rules)
    write_trace(tmp_path, events)


def _check(cli: Any, fmt: str, *extra: str, trace: str = "t.jsonl") -> Any:
    return cli("check", "--contract", "c.json", "--trace", trace, "--format", fmt, *extra)


def _json(cli: Any, *extra: str) -> dict[str, Any]:
    result = _check(cli, "json", *extra)
    assert result.returncode in (0, 1), result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def _sarif(cli: Any, *extra: str, trace: str = "t.jsonl") -> dict[str, Any]:
    result = _check(cli, "sarif", *extra, trace=trace)
    assert result.returncode in (0, 1), result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def _valid_sarif(log: dict[str, Any]) -> None:
    errors = [error.message for error in sarif_validator().iter_errors(log)]
    assert errors == []
    assert github_profile_problems(log) == []


def _junit(cli: Any, *extra: str, trace: str = "t.jsonl") -> ET.Element:
    result = _check(cli, "junit", *extra, trace=trace)
    assert result.returncode in (0, 1), result.stderr
    return ET.fromstring(result.stdout.encode("utf-8"))


def _suites(root: ET.Element) -> list[ET.Element]:
    return [root] if root.tag == "testsuite" else root.findall("testsuite")


def _rule_line(tmp_path: Path, rule_id: str) -> set[int]:
    """Lines (1-based) that may be called "the rule's line" in c.json: its `{` and its `"id"`."""
    lines = (tmp_path / "c.json").read_text(encoding="utf-8").splitlines()
    index = next(i for i, line in enumerate(lines) if f'"id": "{rule_id}"' in line)
    return {index, index + 1}


def _mcp_log(tmp_path: Path, tools: tuple[str, ...] = ("x", "y")) -> None:
    """`mcp.jsonl`: one MCP session per tool (§10 point 35), each calling that tool once (line 3 and 7)."""
    lines = []
    for number, tool in enumerate(tools, start=1):
        session = f"s{number}"

        def add(second: int, direction: str, msg: dict[str, Any], session: str = session) -> None:
            lines.append(json.dumps({"ts": f"2026-01-01T00:00:0{second}Z", "session": session,
                                     "dir": direction, "msg": msg}))

        add(0, "c2s", {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "c", "version": "1"}}})
        add(1, "s2c", {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-06-18", "capabilities": {},
                                                             "serverInfo": {"name": "s", "version": "1"}}})
        add(2, "c2s", {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": {}}})
        add(3, "s2c", {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "ok"}]}})
    (tmp_path / "mcp.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


# -- json: the report extras (v2 §0, §10 points 1, 2, 5, 6, 7) ---------------------------------------


def test_json_extras_code_status_pointer_related_seqs(cli: Any, tmp_path: Path) -> None:
    """§0 report extras: code, status, pointer (RFC 6901 into the event), related_seqs; point 2: the
    precedence violations sit at the after; point 6: correlate_missing is unresolved."""
    _setup(tmp_path, PRECEDENCE_RULES[:1], PRECEDENCE_EVENTS)
    violations = _json(cli)["violations"]
    late, missing = violations
    assert (late["code"], late["status"], late["event_seq"]) == ("precedence.late", "fail", 3)
    assert late["related_seqs"] == [5]
    assert "pointer" not in late
    assert (missing["code"], missing["status"], missing["event_seq"], missing["pointer"]) == (
        "precedence.correlate_missing", "unresolved", 6, "/args/order")


def test_json_caused_by_and_no_seq_without_terminal(cli: Any, tmp_path: Path) -> None:
    """§3.7: when output_schema fails, every other violation that reads the output gets
    `caused_by: <id>`; point 2: "at the terminal" violations have no seq when there is no terminal;
    point 6: output_missing is unresolved and still counts as an error."""
    _setup(tmp_path, PRECEDENCE_RULES[1:], PRECEDENCE_EVENTS[:1])
    report = _json(cli)
    out, out2 = report["violations"]
    assert (out["code"], out["status"], out.get("caused_by")) == ("output_schema.output_missing", "unresolved", None)
    assert (out2["code"], out2["status"], out2["caused_by"]) == ("output_match.output_missing", "unresolved", "out")
    assert all("event_seq" not in v and "event_index" not in v for v in (out, out2))
    assert (report["error_count"], report["passed"]) == (2, False)


def test_json_evidence_string_cut_to_200_code_points(cli: Any, tmp_path: Path) -> None:
    """Point 7: strings are cut to 200 Unicode code points plus `…` (code points, not bytes)."""
    _setup(tmp_path, RULES, EVENTS)
    args = next(v for v in _json(cli)["violations"] if v["rule_id"] == "args")
    assert args["evidence"]["mismatches"][0]["actual"] == "é" * 200 + "…"


def test_json_evidence_keys_in_rfc8785_order(cli: Any, tmp_path: Path) -> None:
    """Point 7: evidence is structured JSON with RFC 8785 key order; lists are
    `mismatches: [{pointer, expected, actual?}]`."""
    _setup(tmp_path, RULES, EVENTS)
    evidence = next(v for v in _json(cli)["violations"] if v["rule_id"] == "args")["evidence"]
    assert list(evidence) == sorted(evidence)
    assert list(evidence["mismatches"][0]) == ["actual", "expected", "pointer"]
    assert evidence["mismatches"][0]["pointer"] == "/args/order"


def test_json_non_ascii_unescaped_and_v1_codes(cli: Any, tmp_path: Path) -> None:
    """v1 §7.2: non-ASCII unescaped (`∞`); point 1: v1 kinds carry `code` and `status: fail` too."""
    _setup(tmp_path, RULES, EVENTS)
    result = _check(cli, "json")
    assert "ñ✓" in result.stdout and "1..∞" in result.stdout and "\\u00f1" not in result.stdout
    codes = [(v["code"], v["status"]) for v in json.loads(result.stdout)["violations"]]
    assert codes == [("deny_tool.denied", "fail"), ("tool_args.mismatch", "fail"), ("require_event.min", "fail")]


def test_json_top_level_violations_concatenate_results(cli: Any, tmp_path: Path) -> None:
    """v1 §5 and point 5: top-level `violations` is the concatenation of results in contract order;
    within a rule, ascending event_index."""
    _setup(tmp_path, PRECEDENCE_RULES, PRECEDENCE_EVENTS)
    report = _json(cli)
    assert report["violations"] == [v for r in report["results"] for v in r["violations"]]
    indexes = [v["event_index"] for v in report["results"][0]["violations"]]
    assert indexes == sorted(indexes)


def test_json_partial_inconclusive_left_out_of_counts(cli: Any, tmp_path: Path) -> None:
    """Point 82: under --partial, liveness violations (require_event min, tool_result_required) carry
    `status: "inconclusive"` and are left out of error_count, warning_count, passed and the exit."""
    _setup(tmp_path, PARTIAL_RULES, PARTIAL_EVENTS)
    result = _check(cli, "json", "--partial")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert [v["status"] for v in report["violations"]] == ["inconclusive", "inconclusive"]
    assert (report["passed"], report["error_count"], report["warning_count"]) == (True, 0, 0)


def test_json_truncation_marks(cli: Any, tmp_path: Path) -> None:
    """README --max-violations: in JSON a rule's result gets `"truncated": true` and
    `"violations_total"`, and so does the top of the report; counts include every one."""
    _setup(tmp_path, [{"id": "no-x", "kind": "deny_tool", "tool": "x"}], [{"type": "tool.call", "tool": "x"}] * 3)
    report = _json(cli, "--max-violations", "1")
    result = report["results"][0]
    assert (len(result["violations"]), result["truncated"], result["violations_total"]) == (1, True, 3)
    assert (report["truncated"], report["violations_total"], report["error_count"]) == (True, 3, 3)


# -- text (v1 §7.1) -----------------------------------------------------------------------------------


def test_text_verdict_counts_and_marks(cli: Any, tmp_path: Path) -> None:
    """v1 §7.1: `FAIL  <name>`, counts joined by ` · `; ✓ passed, ✗ failed error rule, ! failed
    warning rule; output ends with a newline."""
    _setup(tmp_path, RULES, EVENTS)
    result = _check(cli, "text")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0] == "FAIL  spec"
    assert "      2 events · 2 tool calls · 2 errors · 1 warning" in lines
    marks = {line.split()[1]: line.split()[0] for line in lines if line and line[0] in "✓✗!"}
    assert marks == {"no-weird": "✗", "args": "✗", "need-done": "!", "fine": "✓"}
    assert result.stdout.endswith("\n")


def test_text_newline_in_message_stays_on_one_line(cli: Any, tmp_path: Path) -> None:
    """Spec silent on control characters in text; a message's newline must not start a new report
    line (reasonable reading: one line per violation)."""
    _setup(tmp_path, RULES, EVENTS)
    lines = _check(cli, "text").stdout.splitlines()
    denied = [line for line in lines if "Denied tool called" in line]
    assert len(denied) == 1 and "ñ✓" in denied[0]
    assert not any(line.startswith("f ñ✓") for line in lines)


def test_text_violation_without_seq_has_no_seq(cli: Any, tmp_path: Path) -> None:
    """v1 §7.1: `seq <n>: ` is omitted when the violation has no seq."""
    _setup(tmp_path, RULES, EVENTS)
    line = next(x for x in _check(cli, "text").stdout.splitlines() if "Expected 1..∞" in x)
    assert "seq" not in line.split("Expected")[0]


def test_text_batch_totals_line(cli: Any, tmp_path: Path) -> None:
    """README "Many traces at once": the text report of a batch ends with one line of totals
    (`FAIL  refund-desk  12 traces: 11 passed, 1 failed · 2 errors · 0 warnings`)."""
    write_contract(tmp_path, [{"id": "no-x", "kind": "deny_tool", "tool": "x"}])
    (tmp_path / "a.jsonl").write_text('{"seq":1,"type":"tool.call","tool":"x"}\n', encoding="utf-8")
    (tmp_path / "b.jsonl").write_text('{"seq":1,"type":"tool.call","tool":"y"}\n', encoding="utf-8")
    result = cli("check", "--contract", "c.json", "--trace", "a.jsonl", "--trace", "b.jsonl")
    assert result.returncode == 1
    assert result.stdout.splitlines()[-1] == "FAIL  spec  2 traces: 1 passed, 1 failed · 1 error · 0 warnings"


# -- JUnit (README "Formats for CI", ci-formats §2) ----------------------------------------------------


def test_junit_one_suite_per_trace_one_case_per_rule(cli: Any, tmp_path: Path) -> None:
    """README: one <testsuite> per trace, one <testcase> per rule (passing rules too)."""
    _setup(tmp_path, RULES, EVENTS)
    suites = _suites(_junit(cli))
    assert len(suites) == 1
    assert [case.get("name") for case in suites[0].iter("testcase")] == ["no-weird", "args", "need-done", "fine"]


def test_junit_failure_lists_violation_with_line(cli: Any, tmp_path: Path) -> None:
    """README: a broken error rule has a <failure> listing each violation with its line; `file` and
    `line` point at the first offending event."""
    _setup(tmp_path, [{"id": "no-x", "kind": "deny_tool", "tool": "x"}],
           ["# comment", {"seq": 1, "type": "tool.call", "tool": "y"}, "", {"seq": 2, "type": "tool.call", "tool": "x"},
            {"seq": 3, "type": "tool.call", "tool": "x"}])
    case = next(_junit(cli).iter("testcase"))
    assert (case.get("file"), case.get("line")) == ("t.jsonl", "4")
    failure = case.find("failure")
    assert failure is not None and failure.text is not None
    assert failure.get("type") == "deny_tool"
    assert failure.text.splitlines() == ["t.jsonl:4 seq 2: [deny_tool.denied] Denied tool called: x.",
                                         "t.jsonl:5 seq 3: [deny_tool.denied] Denied tool called: x."]


def test_junit_warning_rule_passes_with_system_out(cli: Any, tmp_path: Path) -> None:
    """README: a broken warning rule passes with its violations in <system-out>."""
    _setup(tmp_path, RULES, EVENTS)
    case = next(c for c in _junit(cli).iter("testcase") if c.get("name") == "need-done")
    assert case.find("failure") is None and case.find("error") is None
    out = case.find("system-out")
    assert out is not None and out.text is not None and "[require_event.min]" in out.text


def test_junit_escapes_markup_in_messages(cli: Any, tmp_path: Path) -> None:
    """v1 §7.3: XML escaping of & < > " '; the XML parses and gives the message back, its line
    break shown as `\\n` (README: "a line break that a trace smuggles into a message is shown as
    `\\n`, as in every format")."""
    _setup(tmp_path, RULES, EVENTS)
    root = _junit(cli)
    failure = next(c for c in root.iter("testcase") if c.get("name") == "no-weird").find("failure")
    assert failure is not None and failure.text is not None
    assert WEIRD.replace("\n", "\\n") in failure.text and "\n" not in failure.text
    suites = _suites(root)
    assert (suites[0].get("tests"), suites[0].get("failures")) == ("4", "2")


def test_junit_classname_unique_for_same_stem(cli: Any, tmp_path: Path) -> None:
    """README: classname is unique in the report: the contract, the trace's file stem, then `-2`, `-3`…
    when two traces share a stem (`a/t.jsonl`, `b/t.jsonl`)."""
    write_contract(tmp_path, [{"id": "no-x", "kind": "deny_tool", "tool": "x"}])
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "t.jsonl").write_text('{"seq":1,"type":"tool.call","tool":"x"}\n', encoding="utf-8")
    result = cli("check", "--contract", "c.json", "--trace", "a/t.jsonl", "--trace", "b/t.jsonl", "--format", "junit")
    root = ET.fromstring(result.stdout.encode("utf-8"))
    classnames = [case.get("classname") for case in root.iter("testcase")]
    assert classnames == ["agent-invariants.spec.t", "agent-invariants.spec.t-2"]


def test_junit_run_all_names_run_and_source_line(cli: Any, tmp_path: Path) -> None:
    """README: classname holds an imported run's id; `line` is the line in the source file
    (§10 point 34: `--run all` checks every run as a batch, one section per run)."""
    write_contract(tmp_path, [{"id": "no-x", "kind": "deny_tool", "tool": "x"}])
    _mcp_log(tmp_path)
    root = _junit(cli, "--input-format", "mcp-log", "--run", "all", trace="mcp.jsonl")
    cases = list(root.iter("testcase"))
    assert len(_suites(root)) == 2
    assert [c.get("classname") for c in cases] == ["agent-invariants.spec.mcp-s1", "agent-invariants.spec.mcp-s2"]
    assert (cases[0].get("file"), cases[0].get("line")) == ("mcp.jsonl", "3")


def test_junit_truncation_note(cli: Any, tmp_path: Path) -> None:
    """README: JUnit ends the list with `… and N more (raise --max-violations to see them)`."""
    _setup(tmp_path, [{"id": "no-x", "kind": "deny_tool", "tool": "x"}], [{"type": "tool.call", "tool": "x"}] * 3)
    failure = next(_junit(cli, "--max-violations", "1").iter("failure"))
    assert failure.text is not None
    assert failure.text.splitlines()[-1] == "… and 2 more (raise --max-violations to see them)"


# -- SARIF (ci-formats §1.1, README) -------------------------------------------------------------------


def test_sarif_valid_with_v2_corners(cli: Any, tmp_path: Path) -> None:
    """ci-formats §1.4: valid against the OASIS schema and GitHub's profile, with unresolved
    violations, violations without a seq, long strings and non-ASCII."""
    _setup(tmp_path, RULES + PRECEDENCE_RULES, EVENTS + PRECEDENCE_EVENTS)
    _valid_sarif(_sarif(cli))


def test_sarif_region_spans_the_offending_line(cli: Any, tmp_path: Path) -> None:
    """README: one result per violation at the offending event's line, the region spanning that line
    (ci-formats: startColumn 1, endColumn = line length + 1, columns in UTF-16 units)."""
    _setup(tmp_path, RULES, ["# header", *EVENTS])
    lines = (tmp_path / "t.jsonl").read_text(encoding="utf-8").splitlines()
    results = _sarif(cli)["runs"][0]["results"]
    for result, line in zip(results[:2], (2, 3), strict=True):
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"] == "t.jsonl"
        assert location["region"] == {"startLine": line, "endLine": line, "startColumn": 1,
                                      "endColumn": len(lines[line - 1].encode("utf-16-le")) // 2 + 1}


def test_sarif_whole_trace_violation_at_rule_in_contract(cli: Any, tmp_path: Path) -> None:
    """README: violations of the whole trace (a missing required event) point at the rule's line in
    the contract."""
    _setup(tmp_path, RULES, EVENTS)
    result = next(r for r in _sarif(cli)["runs"][0]["results"] if r["ruleId"] == "need-done")
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "c.json"
    assert location["region"]["startLine"] in _rule_line(tmp_path, "need-done")


def test_sarif_rules_levels_and_properties(cli: Any, tmp_path: Path) -> None:
    """README: one rule descriptor per contract rule (passing too); ci-formats: level error/warning
    from the severity, ruleIndex names its rule; the v2 extras travel in `properties`."""
    _setup(tmp_path, RULES, EVENTS)
    run = _sarif(cli)["runs"][0]
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == ["no-weird", "args", "need-done", "fine"]
    summary = [(r["ruleId"], r["ruleIndex"], r["level"]) for r in run["results"]]
    assert summary == [("no-weird", 0, "error"), ("args", 1, "error"), ("need-done", 2, "warning")]
    properties = run["results"][1]["properties"]
    assert (properties["code"], properties["status"], properties["pointer"]) == ("tool_args.mismatch", "fail",
                                                                                 "/args/order")


def test_sarif_message_first_sentence_and_code(cli: Any, tmp_path: Path) -> None:
    """README example: message text is the message, `Event seq N at FILE:LINE.`, then `[code]`."""
    _setup(tmp_path, [{"id": "no-x", "kind": "deny_tool", "tool": "x"}], [{"type": "tool.call", "tool": "x"}])
    text = _sarif(cli)["runs"][0]["results"][0]["message"]["text"]
    assert text == "Denied tool called: x. Event seq 1 at t.jsonl:1. [deny_tool.denied]"


def test_sarif_partial_inconclusive_valid(cli: Any, tmp_path: Path) -> None:
    """Point 82 in SARIF: inconclusive violations are still reported; the log stays valid and their
    status travels in properties (spec silent on the level; any valid level is accepted)."""
    _setup(tmp_path, PARTIAL_RULES, PARTIAL_EVENTS)
    log = _sarif(cli, "--partial")
    _valid_sarif(log)
    assert [r["properties"]["status"] for r in log["runs"][0]["results"]] == ["inconclusive", "inconclusive"]


def test_sarif_partial_claims_no_truncation(cli: Any, tmp_path: Path) -> None:
    """README: "SARIF's runs[0].properties gives violationsLeftOut" for a report "that left some out";
    nothing is left out here (2 violations, --max-violations 1000)."""
    _setup(tmp_path, PARTIAL_RULES, PARTIAL_EVENTS)
    properties = _sarif(cli, "--partial")["runs"][0].get("properties", {})
    assert properties.get("violationsLeftOut", 0) >= 0
    assert "truncated" not in properties


def test_sarif_truncation_properties(cli: Any, tmp_path: Path) -> None:
    """README: SARIF's `runs[0].properties` gives `violationsLeftOut`."""
    _setup(tmp_path, [{"id": "no-x", "kind": "deny_tool", "tool": "x"}], [{"type": "tool.call", "tool": "x"}] * 3)
    run = _sarif(cli, "--max-violations", "1")["runs"][0]
    assert (len(run["results"]), run["properties"]["violationsLeftOut"]) == (1, 2)


def test_sarif_category_gets_trailing_slash(cli: Any, tmp_path: Path) -> None:
    """README: `--category NAME` sets automationDetails.id (help: a trailing / is added when missing,
    ci-formats: the id is read as `category/run-id`)."""
    _setup(tmp_path, RULES, EVENTS)
    assert _sarif(cli, "--category", "ainv/nightly")["runs"][0]["automationDetails"]["id"] == "ainv/nightly/"


def test_sarif_anchor_contract(cli: Any, tmp_path: Path) -> None:
    """README: `--sarif-anchor contract`: every result points at its rule in the contract; the trace
    and line go into the message and relatedLocations."""
    _setup(tmp_path, RULES, EVENTS)
    log = _sarif(cli, "--sarif-anchor", "contract")
    _valid_sarif(log)
    first = log["runs"][0]["results"][0]
    location = first["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "c.json"
    assert location["region"]["startLine"] in _rule_line(tmp_path, "no-weird")
    related = first["relatedLocations"][0]["physicalLocation"]
    assert (related["artifactLocation"]["uri"], related["region"]["startLine"]) == ("t.jsonl", 1)
    assert "t.jsonl:1" in first["message"]["text"]


def test_sarif_fingerprints_differ_per_trace_in_contract(cli: Any, tmp_path: Path) -> None:
    """README: where the file does not tell two results apart, the hash also takes the trace of a
    result placed in the contract: two traces missing the same event give two fingerprints."""
    write_contract(tmp_path, [{"id": "need-done", "kind": "require_event", "match": {"type": "run.completed"}}])
    for name in ("a", "b"):
        (tmp_path / f"{name}.jsonl").write_text('{"seq":1,"type":"tool.call","tool":"x"}\n', encoding="utf-8")
    result = cli("check", "--contract", "c.json", "--trace", "a.jsonl", "--trace", "b.jsonl", "--format", "sarif")
    log = json.loads(result.stdout)
    _valid_sarif(log)
    hashes = [r["partialFingerprints"]["primaryLocationLineHash"] for run in log["runs"] for r in run["results"]]
    assert len(hashes) == 2 and len(set(hashes)) == 2


def test_sarif_run_all_source_line_and_distinct_fingerprints(cli: Any, tmp_path: Path) -> None:
    """§10 point 34 and README: `--run all` results sit at the line in the source file; results
    placed in the contract take the run's number among its file's runs into the hash."""
    write_contract(tmp_path, [{"id": "no-x", "kind": "deny_tool", "tool": "x"},
                              {"id": "need-ask", "kind": "require_event", "match": {"type": "approval.granted"}}])
    _mcp_log(tmp_path)
    log = _sarif(cli, "--input-format", "mcp-log", "--run", "all", trace="mcp.jsonl")
    _valid_sarif(log)
    results = [r for run in log["runs"] for r in run["results"]]
    denied = [r for r in results if r["ruleId"] == "no-x"]
    assert len(denied) == 1
    location = denied[0]["locations"][0]["physicalLocation"]
    assert (location["artifactLocation"]["uri"], location["region"]["startLine"]) == ("mcp.jsonl", 3)
    in_contract = [r["partialFingerprints"]["primaryLocationLineHash"] for r in results if r["ruleId"] == "need-ask"]
    assert len(in_contract) == 2 and len(set(in_contract)) == 2


def test_sarif_empty_trace(cli: Any, tmp_path: Path) -> None:
    """ci-formats: `results[]` is required, so an empty trace gives an empty list, valid."""
    _setup(tmp_path, RULES[:1], [])
    log = _sarif(cli)
    _valid_sarif(log)
    assert log["runs"][0]["results"] == []


# -- markdown (README) ---------------------------------------------------------------------------------


def test_markdown_header_and_rule_table(cli: Any, tmp_path: Path) -> None:
    """README example: `## ❌ agent-invariants: <name> failed`, the trace line, then the rule table."""
    _setup(tmp_path, RULES, EVENTS)
    lines = _check(cli, "markdown").stdout.splitlines()
    assert lines[:6] == [
        "## ❌ agent-invariants: spec failed",
        "",
        "`t.jsonl`: 2 events, 2 tool calls, **2 errors**, 1 warning",
        "",
        "| Rule | Kind | Status | Checked | Violations |",
        "| --- | --- | --- | --- | --- |",
    ]
    assert lines[6] == "| `no-weird` | deny_tool | ❌ failed | 1 | 1 |"


def test_markdown_escapes_trace_text(cli: Any, tmp_path: Path) -> None:
    """README: text from traces is escaped (no HTML, no table breaks, no @-mentions)."""
    tool = "@octocat|<b>x</b>&y`z\nw"
    _setup(tmp_path, [{"id": "no-x", "kind": "deny_tool", "tool": tool}], [{"type": "tool.call", "tool": tool}])
    out = _check(cli, "markdown").stdout
    line = next(x for x in out.splitlines() if "Denied tool called" in x)
    assert "<b>" not in out and "@octocat" not in line and "@&#8203;octocat" in line
    assert "|" not in line.replace("\\|", "")
    assert "`z" not in line.replace("\\`z", "")
    assert not any(x.startswith("w") for x in out.splitlines())


def test_markdown_first_50_violations(cli: Any, tmp_path: Path) -> None:
    """README: the first 50 violations with `file:line`."""
    _setup(tmp_path, [{"id": "no-x", "kind": "deny_tool", "tool": "x"}], [{"type": "tool.call", "tool": "x"}] * 60)
    lines = _check(cli, "markdown").stdout.splitlines()
    listed = [x for x in lines if x.startswith("- ") and "Denied tool called" in x]
    assert len(listed) == 50
    assert "`t.jsonl:1`" in listed[0] and "`t.jsonl:50`" in listed[-1]


def test_markdown_truncation_note(cli: Any, tmp_path: Path) -> None:
    """README: Markdown ends the list with `… and N more (raise --max-violations to see them)`."""
    _setup(tmp_path, [{"id": "no-x", "kind": "deny_tool", "tool": "x"}], [{"type": "tool.call", "tool": "x"}] * 3)
    out = _check(cli, "markdown", "--max-violations", "1").stdout
    assert "… and 2 more (raise --max-violations to see them)" in out


@pytest.mark.parametrize(("rules", "note"), [
    # 3 inconclusive left out of trr and 3 of dx: inconclusive ones count as left out too (point 82)
    ([{"id": "trr", "kind": "tool_result_required", "tool": "x"}, {"id": "dx", "kind": "deny_tool", "tool": "x"}],
     "… and 6 more (raise --max-violations to see them)"),
    ([{"id": "trr", "kind": "tool_result_required", "tool": "x"}], "… and 3 more (raise --max-violations to see them)"),
])
def test_markdown_truncation_note_counts_inconclusive_violations_left_out(cli: Any, tmp_path: Path, rules: list,
                                                                          note: str) -> None:
    """README: "A report that left some out says so"; under --partial the calls without their
    results are inconclusive violations, left out of the counts (point 82) but not of the list."""
    _setup(tmp_path, rules, [{"type": "tool.call", "tool": "x", "call_id": f"c{n}"} for n in range(5)])
    out = _check(cli, "markdown", "--partial", "--max-violations", "2").stdout
    assert f"- {note}" in out.splitlines()


# -- github (README "--format github") -----------------------------------------------------------------


def test_github_annotations_exact(cli: Any, tmp_path: Path) -> None:
    """README: one workflow command per violation (`::error file=…,line=…,title=<rule> (<kind>)::…`),
    warning severity as ::warning, then the totals; `%` escaped as `%25`."""
    _setup(tmp_path, [{"id": "no-x", "kind": "deny_tool", "tool": "x%y"},
                      {"id": "soft", "kind": "deny_tool", "tool": "z", "severity": "warning"}],
           [{"type": "tool.call", "tool": "x%y"}, {"type": "tool.call", "tool": "z"}])
    result = _check(cli, "github")
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "::error file=t.jsonl,line=1,title=no-x (deny_tool)::Denied tool called: x%25y.",
        "::warning file=t.jsonl,line=2,title=soft (deny_tool)::Denied tool called: z.",
        "FAIL  spec",
        "      trace t.jsonl",
        "      2 events · 2 tool calls · 1 error · 1 warning",
    ]


def test_github_property_escapes(cli: Any, tmp_path: Path) -> None:
    """README: `%3A`, `%2C` in properties, so a file name cannot end a property early."""
    write_contract(tmp_path, [{"id": "no-x", "kind": "deny_tool", "tool": "x"}])
    (tmp_path / "a,b:c.jsonl").write_text('{"seq":1,"type":"tool.call","tool":"x"}\n', encoding="utf-8")
    first = _check(cli, "github", trace="a,b:c.jsonl").stdout.splitlines()[0]
    assert first.startswith("::error file=a%2Cb%3Ac.jsonl,line=1,title=no-x (deny_tool)::")


def test_github_newline_cannot_start_a_command(cli: Any, tmp_path: Path) -> None:
    """README: a trace cannot end an annotation early or start another command: every line is an
    annotation or the totals, and the newline in the message does not split it."""
    _setup(tmp_path, RULES, EVENTS)
    lines = _check(cli, "github").stdout.splitlines()
    annotations = [x for x in lines if x.startswith("::")]
    assert len(annotations) == 3
    assert lines[len(annotations):][0] == "FAIL  spec"
    assert not any(x.startswith("f ñ") for x in lines)


def test_github_whole_trace_warning(cli: Any, tmp_path: Path) -> None:
    """A violation without a seq still gets one annotation (spec silent on its line: none given is
    a reasonable reading) at its severity."""
    _setup(tmp_path, RULES, EVENTS)
    line = next(x for x in _check(cli, "github").stdout.splitlines() if "need-done" in x)
    assert line.startswith("::warning ") and "Expected 1..∞ events matching run.completed; found 0." in line


# -- html (README "See the run") -----------------------------------------------------------------------


def test_html_escapes_trace_text(cli: Any, tmp_path: Path) -> None:
    """README: every text from a trace or contract is escaped."""
    tool = "<script>alert(1)</script>&"
    _setup(tmp_path, [{"id": "no-x", "kind": "deny_tool", "tool": tool}], [{"type": "tool.call", "tool": tool}])
    page = _check(cli, "html").stdout
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;&amp;" in page


# -- every format ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_byte_identical_twice(cli: Any, tmp_path: Path, fmt: str) -> None:
    """ci-formats: byte-stable output (no time, fixed order); a report is the same when run twice."""
    _setup(tmp_path, RULES + PRECEDENCE_RULES, EVENTS + PRECEDENCE_EVENTS)
    first, second = _check(cli, fmt), _check(cli, fmt)
    assert first.returncode == second.returncode == 1
    assert first.stdout == second.stdout and first.stdout


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_output_file_equals_stdout(cli: Any, tmp_path: Path, fmt: str) -> None:
    """README `--output FILE` gets the whole report; stdout then stays empty; same exit code."""
    _setup(tmp_path, RULES, EVENTS)
    printed = _check(cli, fmt)
    written = _check(cli, fmt, "--output", "r.out")
    assert (written.returncode, written.stdout) == (printed.returncode, "")
    assert (tmp_path / "r.out").read_text(encoding="utf-8") == printed.stdout


@pytest.mark.parametrize("fmt", ("text", "junit", "sarif", "markdown", "github"))
def test_every_format_gives_the_physical_line(cli: Any, tmp_path: Path, fmt: str) -> None:
    """README: every format renders the same report; a violation on line N of the trace is line N in
    all of them (comments and blank lines count)."""
    _setup(tmp_path, [{"id": "no-x", "kind": "deny_tool", "tool": "x"}],
           ["# c", "", "# c", {"seq": 7, "type": "tool.call", "tool": "x"}])
    out = _check(cli, fmt).stdout
    expected = {"text": "t.jsonl:4", "junit": 'line="4"', "sarif": '"startLine": 4', "markdown": "`t.jsonl:4`",
                "github": "line=4,"}[fmt]
    assert expected in out


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_empty_trace_passes(cli: Any, tmp_path: Path, fmt: str) -> None:
    """An empty trace is a passing report (exit 0) in every format, with a warning on stderr."""
    _setup(tmp_path, RULES[:1], [])
    result = _check(cli, fmt)
    assert result.returncode == 0 and result.stdout
    assert "no events" in result.stderr
