"""The bundled traces of other tools (examples/imports/, written by the frameworks themselves) give
the verdicts the README states."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Cli

IMPORTS = Path(__file__).resolve().parent.parent / "examples" / "imports"

VERDICTS = {
    "pydantic-ai.otlp.jsonl": (1, ["lookup-first"]),
    "agents-openinference.otlp.jsonl": (0, []),
    "agents-sdk.agents.jsonl": (0, []),
    "langchain.runs.jsonl": (1, ["no-shell"]),
    "mcp-session.mcp.jsonl": (0, []),
}


@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_each_example_gives_the_verdict_the_readme_states(name: str, cli: Cli) -> None:
    result = cli("check", "-c", str(IMPORTS / "contract.json"), "-t", str(IMPORTS / name), "--input-format", "auto",
                 "-f", "json")
    code, rules = VERDICTS[name]
    assert result.returncode == code, result.stderr
    report = json.loads(result.stdout)
    assert [violation["rule_id"] for violation in report["violations"]] == rules
    assert report["trace"] == str(IMPORTS / name) and report["run"]


def test_the_readme_names_every_example() -> None:
    readme = (IMPORTS.parent.parent / "README.md").read_text(encoding="utf-8")
    for name in VERDICTS:
        assert f"`{name}`" in readme


def test_the_example_profile_turns_a_review_into_the_approval(cli: Cli) -> None:
    command = ["check", "-c", str(IMPORTS / "approvals.json"), "-t", str(IMPORTS / "pydantic-ai-review.otlp.jsonl"),
               "--input-format", "auto"]
    assert cli(*command).returncode == 1
    assert cli(*command, "--profile", str(IMPORTS / "human-review.profile.json")).returncode == 0
