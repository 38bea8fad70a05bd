"""`compare --partial`: a candidate cut short is judged on what already happened, in every format.

README, "A trace cut short": what only the end of a run can decide "is reported with status
`inconclusive` and fails nothing". The final outcome is the last `outcome.observed` of the run
(v1 §6), which the rest of a cut-short run may replace: a drop of it is an inconclusive
regression. The counts a comparison shows leave inconclusive violations out, as the check's
`error_count` does (§10 point 82). The spec says nothing of compare under `--partial`: this is the
reading the README gives.
"""
from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import pytest

from tests.support import github_profile_problems, jsonl, sarif_validator

OUTCOME = {"type": "outcome.observed", "outcome_id": "o", "verdict": "satisfied",
           "evidence_class": "externally_observed"}
BASELINE = [{"seq": 1, "type": "tool.call", "tool": "get", "call_id": "g1"},
            {"seq": 2, "type": "tool.result", "call_id": "g1", "ok": True},
            {"seq": 3, **OUTCOME},
            {"seq": 4, "type": "run.completed"}]
CUT = BASELINE[:2]   # the same run, cut short before its outcome
NO_SHELL = {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}


def _files(tmp_path: Path, candidate: list[dict[str, Any]], rules: list[dict[str, Any]] | None = None) -> None:
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "cut", "rules": rules or [NO_SHELL]}))
    (tmp_path / "b.jsonl").write_text(jsonl(BASELINE))
    (tmp_path / "k.jsonl").write_text(jsonl(candidate))


def _compare(cli: Any, *extra: str) -> tuple[int, dict[str, Any]]:
    result = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl", "-f", "json", *extra)
    return result.returncode, json.loads(result.stdout)


def test_an_outcome_not_yet_observed_is_an_inconclusive_regression(cli: Any, tmp_path: Path) -> None:
    _files(tmp_path, CUT)
    code, report = _compare(cli, "--partial")
    assert (code, report["compatible"]) == (0, True)
    assert report["regressions"] == [{
        "kind": "outcome_regression", "severity": "error",
        "message": "Final outcome regressed from satisfied to none (policy require_same_outcome_or_better), "
                   "but the candidate was cut short: a later outcome would replace its last (--partial).",
        "evidence": {"baseline": "satisfied", "candidate": None}, "status": "inconclusive"}]


def test_a_worse_outcome_of_a_cut_short_run_is_inconclusive_too(cli: Any, tmp_path: Path) -> None:
    """The last outcome so far is not the final one: a later `satisfied` would replace it."""
    _files(tmp_path, [*CUT, {"seq": 3, **OUTCOME, "verdict": "violated"}])
    code, report = _compare(cli, "--partial")
    assert (code, report["compatible"]) == (0, True)
    assert [(r["kind"], r["evidence"], r["status"]) for r in report["regressions"]] == [
        ("outcome_regression", {"baseline": "satisfied", "candidate": "violated"}, "inconclusive")]
    assert report["regressions"][0]["line"] == 3


def test_without_partial_the_same_drop_fails(cli: Any, tmp_path: Path) -> None:
    _files(tmp_path, CUT)
    code, report = _compare(cli)
    assert (code, report["compatible"]) == (1, False)
    assert [(r["kind"], "status" in r) for r in report["regressions"]] == [("outcome_regression", False)]
    assert report["regressions"][0]["message"] == \
        "Final outcome regressed from satisfied to none (policy require_same_outcome_or_better)."


def test_what_already_happened_still_fails_beside_it(cli: Any, tmp_path: Path) -> None:
    _files(tmp_path, [*CUT, {"seq": 3, "type": "tool.call", "tool": "shell.exec", "call_id": "s1"}])
    code, report = _compare(cli, "--partial")
    assert (code, report["compatible"]) == (1, False)
    assert [(r["kind"], r.get("status")) for r in report["regressions"]] == [
        ("new_rule_failure", None), ("new_tool", None), ("outcome_regression", "inconclusive")]


def test_a_batch_counts_only_the_regressions_that_fail(cli: Any, tmp_path: Path) -> None:
    _files(tmp_path, CUT)
    (tmp_path / "base").mkdir()
    (tmp_path / "cand").mkdir()
    (tmp_path / "base" / "r.jsonl").write_text(jsonl(BASELINE))
    (tmp_path / "cand" / "r.jsonl").write_text(jsonl(CUT))
    (tmp_path / "cand" / "s.jsonl").write_text(jsonl([*CUT, {"seq": 3, "type": "tool.call", "tool": "shell.x"}]))
    (tmp_path / "base" / "s.jsonl").write_text(jsonl(BASELINE))
    result = cli("compare", "-c", "c.json", "-b", "base", "-k", "cand", "--partial", "-f", "json")
    report = json.loads(result.stdout)
    assert (result.returncode, report["compatible"], report["pairs"]) == (1, False, 2)
    assert [section["compatible"] for section in report["reports"]] == [True, False]
    assert report["regressions"] == 2   # s's new_rule_failure and new_tool; neither outcome drop counts
    text = cli("compare", "-c", "c.json", "-b", "base", "-k", "cand", "--partial", "-f", "markdown").stdout
    assert "| `cand/r.jsonl` | ✅ compatible | 0 |" in text
    assert "| `cand/s.jsonl` | ❌ regression | 2 |" in text


def test_every_format_shows_it_without_failing(cli: Any, tmp_path: Path) -> None:
    _files(tmp_path, CUT)
    run = lambda fmt: cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl", "--partial", "-f", fmt)  # noqa: E731
    message = "Final outcome regressed from satisfied to none"

    text = run("text")
    assert text.returncode == 0 and text.stdout.startswith("COMPATIBLE  cut")
    assert f"? outcome_regression: {message}" in text.stdout

    junit = ElementTree.fromstring(run("junit").stdout)
    assert (junit.get("failures"), junit.get("errors")) == ("0", "0")
    case = junit.find("./testsuite/testcase[@name='outcome_regression']")
    assert case is not None and case.find("failure") is None
    out = case.find("system-out")
    assert out is not None and (out.text or "").startswith(f"inconclusive: {message}")

    log = json.loads(run("sarif").stdout)
    assert list(sarif_validator().iter_errors(log)) == [] and github_profile_problems(log) == []
    assert [(r["ruleId"], r["level"]) for r in log["runs"][0]["results"]] == [("compare.outcome-regression", "note")]

    github = run("github").stdout.splitlines()
    assert github[0].startswith("::notice file=k.jsonl,title=compatibility.outcome_regression::" + message)

    markdown = run("markdown").stdout
    assert markdown.startswith("## ✅ agent-invariants: cut: compatible")
    assert f"- ❔ **outcome_regression**: {message}" in markdown

    html = run("html")
    assert html.returncode == 0
    assert f'<span class="finding info">? inconclusive</span> outcome_regression: {message}' in html.stdout


@pytest.mark.parametrize(("partial", "counted"), [(True, 1), (False, 2)])
def test_counts_leave_inconclusive_violations_out(cli: Any, tmp_path: Path, partial: bool, counted: int) -> None:
    """A failure handled in time is judged; one at the trace's end is not yet (failure_handled's
    liveness part): the regression's `violations` and the rule change count what failed."""
    rule = {"id": "fh", "kind": "failure_handled", "tool": "s", "within_events": 2}
    candidate = [{"seq": 1, "type": "tool.call", "tool": "s", "call_id": "s1"},
                 {"seq": 2, "type": "tool.result", "call_id": "s1", "ok": False},
                 {"seq": 3, "type": "x"}, {"seq": 4, "type": "y"},
                 {"seq": 5, "type": "tool.call", "tool": "s", "call_id": "s2"},
                 {"seq": 6, "type": "tool.result", "call_id": "s2", "ok": False},
                 {"seq": 7, **OUTCOME}]
    _files(tmp_path, candidate, [rule])
    (tmp_path / "b.jsonl").write_text(jsonl([{"seq": 1, "type": "tool.call", "tool": "s", "call_id": "s0"},
                                             {"seq": 2, "type": "tool.result", "call_id": "s0", "ok": True},
                                             {"seq": 3, **OUTCOME}]))
    code, report = _compare(cli, *(["--partial"] if partial else []))
    assert code == 1
    assert report["candidate"]["error_count"] == counted
    assert [(r["kind"], r["evidence"]["violations"]) for r in report["regressions"]] == [("new_rule_failure", counted)]
    change = report["rule_changes"][0]
    assert (change["change"], change["candidate_violations"]) == ("new", counted)
    assert len(report["candidate"]["violations"]) == 2


def test_strict_of_a_rule_a_cut_short_run_has_not_reached_yet_is_inconclusive(cli: Any, tmp_path: Path) -> None:
    """`--strict` fails a rule that checked nothing; a run cut short before the rule's first call
    may yet bring it, so under `--partial` that is inconclusive and fails nothing (it failed the
    compare as a new rule failure, exit 1). A whole run stays strict."""
    approval = {"id": "approved-pay", "kind": "require_approval", "tool": "pay"}
    _files(tmp_path, CUT, [approval])
    (tmp_path / "b.jsonl").write_text(jsonl([*BASELINE[:3], {"seq": 4, "type": "approval.granted"},
                                             {"seq": 5, "type": "tool.call", "tool": "pay", "call_id": "p1"},
                                             {"seq": 6, "type": "run.completed"}]))
    code, report = _compare(cli, "--partial", "--strict")
    assert (code, report["compatible"]) == (0, True)
    assert [(r["kind"], r["status"]) for r in report["regressions"]] == [("outcome_regression", "inconclusive")]
    (unchecked,) = report["candidate"]["violations"]
    assert (unchecked["code"], unchecked["status"]) == ("require_approval.checked_nothing", "inconclusive")
    checked = cli("check", "-c", "c.json", "-t", "k.jsonl", "-f", "json", "--partial", "--strict")
    assert (checked.returncode, json.loads(checked.stdout)["inconclusive_count"]) == (0, 1)
    whole = cli("check", "-c", "c.json", "-t", "k.jsonl", "-f", "json", "--strict")
    assert (whole.returncode, json.loads(whole.stdout)["error_count"]) == (1, 1)
    safety = cli("check", "-c", "c.json", "-t", "k.jsonl", "--strict", "--safety-exit", "7", "-f", "json")
    # (only the run's end decides it, as the README defines what is no safety part: found by a
    # spec-words reading of the report rules, where it was counted with the safety errors, exit 7)
    assert (safety.returncode, json.loads(safety.stdout)["safety_error_count"]) == (1, 0)


def test_a_rule_whose_violations_are_all_inconclusive_reads_inconclusive_in_markdown_and_html(
        cli: Any, tmp_path: Path) -> None:
    """Under --partial such a rule passes, and its table row said "passed" beside a violation."""
    _files(tmp_path, CUT, [{"id": "outcome", "kind": "require_event", "match": {"type": "outcome.observed"},
                            "min": 1}])
    markdown = cli("check", "-c", "c.json", "-t", "k.jsonl", "--partial", "-f", "markdown").stdout.splitlines()
    assert "| `outcome` | require_event | ❔ inconclusive | 0 | 1 |" in markdown
    page = cli("check", "-c", "c.json", "-t", "k.jsonl", "--partial", "-f", "html").stdout
    assert '<td>require_event</td><td><span class="finding info">? inconclusive</span></td><td class="num">1</td>' \
        in page


def test_a_rule_only_the_end_of_the_run_decides_is_shown_inconclusive_not_passing(cli: Any, tmp_path: Path) -> None:
    """A rule whose violations in the cut candidate are all inconclusive has not failed, and has
    not passed either: every format showed it `passed -> passed  passing` (a run that never
    ended "passing" run_status). JSON keeps its states and adds `candidate_inconclusive`; text,
    Markdown and HTML show it inconclusive, and text lists its violations with `?`."""
    ended = {"id": "ended", "kind": "run_status", "equals": "completed"}
    _files(tmp_path, CUT, [NO_SHELL, ended])
    code, report = _compare(cli, "--partial")
    assert code == 0
    assert [(change["rule_id"], change["candidate"], change["change"], change.get("candidate_inconclusive"))
            for change in report["rule_changes"]] == [("no-shell", "passed", "passing", None),
                                                      ("ended", "passed", "passing", 1)]
    text = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl", "--partial", "--color", "never").stdout
    assert "  no-shell  passed -> passed  passing\n  ended     passed -> inconclusive  1 inconclusive\n" in text
    assert "\n? ended  run_status  1 inconclusive (--partial)\n" in text
    markdown = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl", "--partial", "-f", "markdown").stdout
    assert "| `ended` | run_status | passed (0) | inconclusive (1) | ❔ inconclusive |" in markdown
    page = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl", "--partial", "-f", "html").stdout
    assert '<td>inconclusive (1)</td><td><span class="finding warn">? inconclusive</span></td>' in page


def test_a_baseline_cut_as_short_reads_inconclusive_too(cli: Any, tmp_path: Path) -> None:
    """The same cut trace on both sides: the baseline's rule was shown `passed`, the candidate's
    `inconclusive`, as if the rule's state had changed between two identical runs. JSON adds
    `baseline_inconclusive`, as it adds `candidate_inconclusive`."""
    ended = {"id": "ended", "kind": "run_status", "equals": "completed"}
    _files(tmp_path, CUT, [NO_SHELL, ended])
    (tmp_path / "b.jsonl").write_text(jsonl(CUT))
    code, report = _compare(cli, "--partial")
    assert code == 0
    assert [(change["rule_id"], change.get("baseline_inconclusive"), change.get("candidate_inconclusive"))
            for change in report["rule_changes"]] == [("no-shell", None, None), ("ended", 1, 1)]
    text = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl", "--partial", "--color", "never").stdout
    assert "  ended     inconclusive -> inconclusive  1 inconclusive\n" in text
    markdown = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl", "--partial", "-f", "markdown").stdout
    assert "| `ended` | run_status | inconclusive (1) | inconclusive (1) | ❔ inconclusive |" in markdown
    page = cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl", "--partial", "-f", "html").stdout
    assert '<td>inconclusive (1)</td><td>inconclusive (1)</td><td><span class="finding warn">' in page


def test_a_regression_points_at_the_violation_that_fails_its_rule(cli: Any, tmp_path: Path) -> None:
    """Found by a spec-words reading of compare: under --partial a rule whose first violation is
    inconclusive (a retry whose result had not come) and whose second fails (a failure with no
    retry at all) regressed at the first: every format placed it at seq 2, and SARIF gave the
    blocking regression the level `note`, taken from that violation. It points at seq 5 now."""
    rule = {"id": "fh", "kind": "failure_handled", "within_events": 1, "retry_succeeds": True}
    candidate = [{"seq": 1, "type": "tool.call", "tool": "s", "call_id": "c1"},
                 {"seq": 2, "type": "tool.result", "call_id": "c1", "ok": False},
                 {"seq": 3, "type": "tool.call", "tool": "s", "call_id": "c2"},
                 {"seq": 4, "type": "tool.call", "tool": "t", "call_id": "c3"},
                 {"seq": 5, "type": "tool.result", "call_id": "c3", "ok": False},
                 {"seq": 6, "type": "agent.thought"}]
    _files(tmp_path, candidate, [rule])
    code, report = _compare(cli, "--partial")
    assert code == 1
    assert [(r["event_seq"], r["line"]) for r in report["regressions"] if r["kind"] == "new_rule_failure"] == [(5, 5)]
    assert [(v["event_seq"], v["status"]) for v in report["candidate"]["violations"]] == [
        (2, "inconclusive"), (5, "fail")]
    sarif = json.loads(cli("compare", "-c", "c.json", "-b", "b.jsonl", "-k", "k.jsonl", "-f", "sarif",
                           "--partial").stdout)
    [result] = [result for result in sarif["runs"][0]["results"] if result["ruleId"] == "fh"]
    assert result["level"] == "error"
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 5
    assert "(result at seq 5) was not handled: no successful retry or message within 1 event." in \
        result["message"]["text"]
    junit = cli("check", "-c", "c.json", "-t", "k.jsonl", "-f", "junit", "--partial").stdout
    assert '<testcase name="fh" classname="agent-invariants.cut.k" file="k.jsonl" line="5">' in junit   # (likewise)
