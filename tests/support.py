"""Helpers shared by the tests: small contracts, numbered events, JSONL text."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"


def contract(*rules: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A minimal valid v1 contract holding `rules`."""
    return {"version": 1, "name": "test-contract", "rules": list(rules), **extra}


def jsonl(events: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(event) + "\n" for event in events)


def events(*specs: dict[str, Any], start: int = 1) -> list[dict[str, Any]]:
    """Number events: each spec gets `seq` = its position + start unless it has one."""
    return [{"seq": start + i, **spec} for i, spec in enumerate(specs)]


def report_dict(report: Any, *, drop_lines: bool = True) -> dict[str, Any]:
    """A check report as plain data without what depends on how the trace was read: `trace`,
    and each violation's physical `line` (unless `drop_lines` is False)."""
    data = msgspec.to_builtins(report)
    data.pop("trace", None)
    if drop_lines:
        for violation in data["violations"]:
            violation.pop("line", None)
        for result in data["results"]:
            for violation in result["violations"]:
                violation.pop("line", None)
    return data


def write_contract(tmp_path: Path, rules: list[dict[str, Any]], version: int = 2) -> None:
    """`c.json` in `tmp_path`: a contract named `spec` holding `rules` (version 2 unless told)."""
    document = {"version": version, "name": "spec", "rules": rules}
    (tmp_path / "c.json").write_text(json.dumps(document, indent=2), encoding="utf-8")


def write_trace(tmp_path: Path, events: tuple[Any, ...] | list[Any]) -> None:
    """`t.jsonl` in `tmp_path`: events get `seq` = position + 1 unless they carry one; a str is
    written as a raw line."""
    lines = []
    for position, event in enumerate(events):
        if isinstance(event, str):
            lines.append(event)
        else:
            lines.append(json.dumps(event if "seq" in event else {"seq": position + 1, **event}))
    (tmp_path / "t.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def refused_line(cli: Any) -> str:
    """`check` of `c.json` and `t.jsonl` in the test's folder, which must refuse the contract: exit
    2, nothing on stdout, one stderr line naming c.json (and no traceback). Returns that line."""
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert (result.returncode, result.stdout) == (2, ""), result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("agent-invariants: ") and "c.json" in lines[0], lines[0]
    assert "Traceback" not in result.stderr
    return lines[0]


def at(line: str, path: str) -> bool:
    """The line names exactly this JSON path (followed by the problem)."""
    return f" {path}: " in line


def under(line: str, path: str) -> bool:
    """The line names this JSON path or one inside it."""
    return f" {path}" in line
