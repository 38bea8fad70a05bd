"""A report printed in a CI job's log cannot issue the runner's commands (outside review, hunt 71).

GitHub's runner reads `##[` anywhere in a line of a job's log as a command (`##[error
file=README.md;line=1]text` makes an annotation on any file; `##[add-mask]FAIL` hides every later
FAIL) and `::` at the start of a line, after blanks, as another. Tool names and file names come
from the trace, and the reports print them: the text report (the GitHub Action's default log
format), JSON, JUnit and SARIF all printed them raw, while stderr and `--format github` escaped
them. Now no line of any of them holds `##[` or starts with `::`, and the JSON, XML and SARIF
escapes keep the data: decoded, the names are what the trace said.
"""
from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

ANNOTATION = "shell.x ##[error file=README.md;line=1]Forged annotation"
MASK = "shell.##[add-mask]FAIL"
NAMED = "::error title=Forged::All checks passed.jsonl"
COMMAND = re.compile(r"##\[|^\s*::", re.MULTILINE)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "trace.jsonl").write_text(
        json.dumps({"seq": 1, "type": "tool.call", "tool": ANNOTATION, "call_id": "1"}) + "\n"
        + json.dumps({"seq": 2, "type": "tool.call", "tool": MASK, "call_id": "2"}) + "\n")
    (tmp_path / NAMED).write_text(json.dumps({"seq": 1, "type": "tool.call", "tool": "shell.y", "call_id": "1"}) + "\n")
    (tmp_path / "c.json").write_text(json.dumps({"version": 1, "name": "inj ##[warning]x", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}]}))
    return tmp_path


def _check(cli: Any, form: str) -> str:
    result = cli("check", "-c", "c.json", "-t", "trace.jsonl", "-t", NAMED, "--verbose", "-f", form)
    assert (result.returncode, result.stderr) == (1, "")
    output: str = result.stdout
    return output


@pytest.mark.parametrize("form", ["text", "json", "junit", "sarif", "markdown", "html"])
def test_no_report_line_is_a_runner_command(cli: Any, folder: Path, form: str) -> None:
    assert COMMAND.findall(_check(cli, form)) == []


def test_the_github_format_issues_only_its_own_annotations(cli: Any, folder: Path) -> None:
    """Its lines are commands on purpose: a line the runner reads as a `::` command is not read
    again for `##[`, and its summary line escapes the contract's name."""
    commands = [line for line in _check(cli, "github").splitlines() if COMMAND.search(line)]
    assert [line.split(",", 1)[0] for line in commands] == [
        "::error file=trace.jsonl", "::error file=trace.jsonl",
        "::error file=%3A%3Aerror title=Forged%3A%3AAll checks passed.jsonl"]


def test_the_text_report_shows_the_names_escaped(cli: Any, folder: Path) -> None:
    output = _check(cli, "text")
    assert "Denied tool called: shell.x ##\\x5berror file=README.md;line=1]Forged annotation." in output
    assert "    \\x3a:error title=Forged::All checks passed.jsonl:1  seq 1  [deny_tool.denied]" in output


def test_json_and_sarif_hold_the_names_as_the_trace_wrote_them(cli: Any, folder: Path) -> None:
    report = json.loads(_check(cli, "json"))
    assert [v["evidence"]["tool"] for trace in report["reports"] for v in trace["violations"]] == [
        ANNOTATION, MASK, "shell.y"]
    assert [trace["trace"] for trace in report["reports"]] == ["trace.jsonl", NAMED]
    assert report["contract"]["name"] == "inj ##[warning]x"
    sarif = json.loads(_check(cli, "sarif"))
    assert ANNOTATION in sarif["runs"][0]["results"][0]["message"]["text"]


def test_junit_holds_the_names_as_the_trace_wrote_them(cli: Any, folder: Path) -> None:
    root = ET.fromstring(_check(cli, "junit"))
    texts = [failure.text or "" for failure in root.iter("failure")]
    assert any(ANNOTATION in text for text in texts)
    assert any(line.startswith(NAMED) for text in texts for line in text.splitlines())


def test_the_html_page_shows_the_names_as_the_trace_wrote_them(cli: Any, folder: Path) -> None:
    """The page printed `##[` raw when written to stdout, as a job's log shows it (outside
    review); it writes `##&#91;`, which a browser shows as `##[`."""
    page = _check(cli, "html")
    shown: list[str] = []
    reader = HTMLParser()
    reader.handle_data = shown.append   # type: ignore[method-assign]
    reader.feed(page)
    assert MASK in "".join(shown)
    assert "shell.##&#91;add-mask]FAIL" in page


def test_markdown_code_spans_spell_no_command(cli: Any, tmp_path: Path) -> None:
    """The Markdown puts file names and run ids in code spans, where no Markdown escape works: a
    trace named `##[error]…` printed the command raw into the GitHub Action's log (outside
    review, hunt 22). It shows as the text report shows it, `##\\x5b`."""
    name = "##[error]boom ##[add-mask]FAIL.jsonl"
    (tmp_path / name).write_text(json.dumps({"seq": 1, "type": "tool.call", "tool": "shell.y", "call_id": "1"}) + "\n")
    (tmp_path / "c.json").write_text(json.dumps({"version": 1, "name": "c", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}]}))
    result = cli("check", "-c", "c.json", "-t", name, "-f", "markdown")
    assert (result.returncode, result.stderr) == (1, "")
    assert COMMAND.findall(result.stdout) == []
    assert "`##\\x5berror]boom ##\\x5badd-mask]FAIL.jsonl`: 1 event, 1 tool call, **1 error**" in result.stdout
