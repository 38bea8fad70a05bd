"""`record` and `record --repeat`: every format heads the report with the verdict the exit code
gives (spec v2 §10 points 83 and 87: a run the harness ended is a finding at level error; the
report of `--repeat` lists every run and the stability result).

A run whose rules passed but that the harness ended is `incomplete` (exit 2); `--repeat` whose
runs passed but whose final outputs changed shape is `unstable` (exit 1), and its unstable paths
are in every format, SARIF results and GitHub annotations on the final output's line."""
from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET

import pytest
from html_page import parse

from support import github_profile_problems, sarif_validator

CONTRACT = {"version": 1, "name": "k0", "rules": [{"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}]}
FIXTURES = {"version": 1, "tools": {}}
# The n-th run (counted in the file `n`) reports {"total": 10}, then {"total": "10"}, alternately;
# with CRASH_AT set, that run exits 3 before it reports anything (and the others report 10).
AGENT = """
import json, os, sys
n = int(open("n").read()) if os.path.exists("n") else 0
open("n", "w").write(str(n + 1))
sys.stdin.readline()
if n == int(os.environ.get("CRASH_AT", "-1")):
    sys.exit(3)
total = 10 if n % 2 == 0 or "CRASH_AT" in os.environ else "10"
print(json.dumps({"type": "run.completed", "output": {"total": total}}), flush=True)
"""


def _record(cli, write, fmt: str, *, repeat: int | None = 2, crash_at: int | None = None, quiet: bool = False):
    write("c.json", CONTRACT)
    write("fx.json", FIXTURES)
    write("agent.py", AGENT)
    (cli.cwd / "n").unlink(missing_ok=True)
    runs = ["--repeat", str(repeat), "--out-dir", "runs", "--force"] if repeat else ["--out", "t.jsonl", "--force"]
    env = ["--env", f"CRASH_AT={crash_at}"] if crash_at is not None else []
    return cli("record", "-c", "c.json", "--fixtures", "fx.json", "--fake-clock", *runs, *env, "--format", fmt,
               *(["-q"] if quiet else []), "--", sys.executable, "agent.py")


def test_unstable_outputs_head_the_text_and_quiet_keeps_only_the_verdicts(cli, write) -> None:
    result = _record(cli, write, "text")
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("UNSTABLE  k0  2 traces: 2 passed, 0 failed · 0 errors · 0 warnings\n")
    assert "  ✗ total  type  number in [0] · string in [1]" in result.stdout
    quiet = _record(cli, write, "text", quiet=True)
    assert quiet.returncode == 1
    assert quiet.stdout == ("UNSTABLE  k0  2 traces: 2 passed, 0 failed · 0 errors · 0 warnings\n\n"
                            "UNSTABLE  2 of 2 traces report an output · 1 unstable path\n")


def test_unstable_outputs_are_in_the_html_page(cli, write) -> None:
    result = _record(cli, write, "html")
    assert result.returncode == 1, result.stderr
    page = parse(result.stdout)
    assert page.all("h1")[0].text() == "agent-invariants: k0: unstable"
    section = page.by_id("stability")
    assert "✗ unstable" in section.text()
    assert "Output path total holds number in runs/run-1.jsonl; string in runs/run-2.jsonl." in section.text()


def test_unstable_outputs_are_sarif_results_at_the_final_output(cli, write) -> None:
    result = _record(cli, write, "sarif")
    assert result.returncode == 1, result.stderr
    log = json.loads(result.stdout)
    sarif_validator().validate(log)
    assert github_profile_problems(log) == []
    run = log["runs"][0]
    [found] = run["results"]
    assert found["ruleId"] == "stability.type"
    assert run["tool"]["driver"]["rules"][found["ruleIndex"]]["id"] == "stability.type"
    where = found["locations"][0]["physicalLocation"]
    assert (where["artifactLocation"]["uri"], where["region"]["startLine"]) == ("runs/run-2.jsonl", 2)
    assert run["properties"]["stability"] == {"measured": True, "stable": False}


def test_unstable_outputs_are_github_annotations_and_a_markdown_verdict(cli, write) -> None:
    github = _record(cli, write, "github")
    assert github.returncode == 1
    assert github.stdout.splitlines()[0] == (
        "::error file=runs/run-2.jsonl,line=2,title=stability%3A total (type)::Output path total holds number in "
        "runs/run-1.jsonl; string in runs/run-2.jsonl.")
    markdown = _record(cli, write, "markdown")
    assert markdown.stdout.startswith("## ❌ agent-invariants: k0: unstable\n")


def test_a_run_the_harness_ended_makes_the_repeat_incomplete_in_every_format(cli, write) -> None:
    text = _record(cli, write, "text", repeat=3, crash_at=2)
    assert text.returncode == 2, text.stderr
    assert "INCOMPLETE  k0  3 traces: 2 passed, 0 failed, 1 incomplete · 0 errors · 0 warnings" in text.stdout
    markdown = _record(cli, write, "markdown", repeat=3, crash_at=2).stdout
    assert markdown.startswith("## ⚠️ agent-invariants: k0: incomplete\n")
    assert "| `runs/run-3.jsonl` | ⚠️ incomplete | 0 | 0 |" in markdown
    assert "| `runs/run-1.jsonl` | ✅ passed | 0 | 0 |" in markdown
    page = parse(_record(cli, write, "html", repeat=3, crash_at=2).stdout)
    assert page.all("h1")[0].text() == "agent-invariants: k0: incomplete"
    rows = [row.text() for row in page.all("tr") if row.text().startswith("runs/run-")]   # the index
    assert [row.startswith(f"runs/run-{number}.jsonl") for number, row in enumerate(rows, 1)] == [True] * 3
    assert ["⚠ incomplete" in row for row in rows] == [False, False, True]
    assert "✓ stable" in page.by_id("stability").text()
    junit = ET.fromstring(_record(cli, write, "junit", repeat=3, crash_at=2).stdout)
    ended = [case for case in junit.iter("testcase") if case.get("name") == "record.ended"]
    assert [case.find("failure") is not None for case in ended] == [False, False, True]


@pytest.mark.parametrize("fmt", ["html", "markdown", "text"])
def test_a_single_run_the_harness_ended_is_incomplete(cli, write, fmt) -> None:
    result = _record(cli, write, fmt, repeat=None, crash_at=0)
    assert result.returncode == 2, result.stderr
    heads = {"html": "<h1>agent-invariants: k0: incomplete</h1>", "markdown": "## ⚠️ agent-invariants: k0 incomplete",
             "text": "INCOMPLETE  k0"}
    assert heads[fmt] in result.stdout
