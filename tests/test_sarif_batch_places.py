"""SARIF results placed in the contract say which trace they are about (outside review, hunt 71).

A result about a whole trace (a required event missing), and a comparison's regression that no
event carries, sit at their rule's line in the contract. In a batch, every trace's result there
read the same ("Whole trace."), and GitHub showed several alerts no one could tell apart, while
JUnit, Markdown and the GitHub annotations named the trace. ci-formats.md §1.1: put the trace path
in `message` and in `properties`. A place in the contract is its whole line, as a trace line is
(it was one column: the indentation), and a rule's description there is escaped as messages are.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CONTRACT = """{
  "version": 1,
  "name": "need",
  "rules": [
    {"id": "need-q", "kind": "require_event", "match": {"type": "q"}, "description": "Needs q \\u202eevil"}
  ]
}
"""


def _traces(folder: Path, names: list[str]) -> None:
    folder.mkdir()
    for name in names:
        (folder / name).write_text('{"seq": 1, "type": "run.start"}\n')


def _sarif(cli: Any, *args: str) -> dict[str, Any]:
    result = cli(*args, "--format", "sarif")
    assert result.returncode == 1, result.stderr
    log: dict[str, Any] = json.loads(result.stdout)
    return log


def test_whole_trace_results_of_a_batch_name_their_trace(cli: Any, tmp_path: Path) -> None:
    (tmp_path / "c.json").write_text(CONTRACT)
    _traces(tmp_path / "runs", ["alpha.jsonl", "gamma.jsonl"])
    run = _sarif(cli, "check", "-c", "c.json", "-t", "runs")["runs"][0]
    assert [result["message"]["text"] for result in run["results"]] == [
        f"Expected 1..∞ events matching q; found 0. Whole trace runs/{name}.jsonl. [require_event.min]"
        for name in ("alpha", "gamma")]
    assert [result["properties"]["trace"] for result in run["results"]] == ["runs/alpha.jsonl", "runs/gamma.jsonl"]
    regions = [result["locations"][0]["physicalLocation"]["region"] for result in run["results"]]
    line = CONTRACT.splitlines()[4]
    assert regions == [{"startLine": 5, "endLine": 5, "startColumn": 1, "endColumn": len(line) + 1}] * 2
    assert run["tool"]["driver"]["rules"][0]["shortDescription"]["text"] == "Needs q \\u202eevil"


def test_a_regression_placed_in_the_contract_names_its_candidate(cli: Any, tmp_path: Path) -> None:
    (tmp_path / "c.json").write_text(json.dumps({"version": 1, "name": "c", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell"}], "compare": {"max_tool_call_increase_percent": 0}}))
    for folder, calls in (("base", 1), ("cand", 3)):
        (tmp_path / folder).mkdir()
        for name in ("a.jsonl", "b.jsonl"):
            (tmp_path / folder / name).write_text("".join(
                json.dumps({"seq": seq, "type": "tool.call", "tool": "read", "call_id": f"c{seq}"}) + "\n"
                for seq in range(1, calls + 1)))
    run = _sarif(cli, "compare", "-c", "c.json", "--baseline", "base", "--candidate", "cand")["runs"][0]
    increases = [result for result in run["results"] if result["properties"]["regression"] == "tool_call_increase"]
    assert [result["message"]["text"].rsplit(". ", 1)[1] for result in increases] == [
        "Candidate cand/a.jsonl.", "Candidate cand/b.jsonl."]
    assert [result["properties"]["trace"] for result in increases] == ["cand/a.jsonl", "cand/b.jsonl"]


def test_a_file_of_the_root_reached_through_a_link_is_inside_it(cli: Any, tmp_path: Path) -> None:
    """`--sarif-root` compared paths as written: a trace of the repository given through a link to
    it (a workspace link, /tmp on macOS) was refused as outside (hunt 71). Its URI is now the one
    its place in the repository gives; a file that is outside both ways is still refused."""
    real = tmp_path / "repo"
    real.mkdir()
    (real / "c.json").write_text(CONTRACT)
    (real / "t.jsonl").write_text('{"seq": 1, "type": "run.start"}\n')
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    log = _sarif(cli, "check", "-c", "link/c.json", "-t", "link/t.jsonl", "--sarif-root", "repo")
    assert {result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for result in log["runs"][0]["results"]} == {"c.json"}
    assert "Whole trace t.jsonl." in log["runs"][0]["results"][0]["message"]["text"]
    (tmp_path / "elsewhere.jsonl").write_text('{"seq": 1, "type": "run.start"}\n')
    outside = cli("check", "-c", "link/c.json", "-t", "elsewhere.jsonl", "--sarif-root", "repo", "--format", "sarif")
    assert (outside.returncode, outside.stderr) == (
        2, "agent-invariants: --sarif-root repo: elsewhere.jsonl is outside it (SARIF URIs must stay inside the "
           "repository)\n")


def test_a_message_names_a_trace_as_a_person_reads_it(cli: Any, tmp_path: Path) -> None:
    """The location's URI is percent-encoded (`a%20b%231.jsonl`), which the message showed too,
    where every other format shows the file's name (hunt 71)."""
    (tmp_path / "c.json").write_text(json.dumps({"version": 1, "name": "c", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]}))
    (tmp_path / "a b#1.jsonl").write_text('{"seq": 1, "type": "tool.call", "tool": "shell", "call_id": "c"}\n')
    [result] = _sarif(cli, "check", "-c", "c.json", "-t", "a b#1.jsonl")["runs"][0]["results"]
    assert result["message"]["text"] == "Denied tool called: shell. Event seq 1 at a b#1.jsonl:1. [deny_tool.denied]"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "a%20b%231.jsonl"
