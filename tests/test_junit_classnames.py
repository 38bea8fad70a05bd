"""A trace's JUnit classname is its own, whatever else the report holds (outside review, hunt 71).

GitLab and Jenkins keep a test's history by classname and name. A stem with no ASCII letter or
digit (`報告.jsonl`) had the classname `…trace`, and a second such trace `…trace-2`, in the order
of the traces, so adding one moved another's history; accented stems lost their letters (`é.jsonl`
was `trace` too). Now accents are dropped (`é` is `e`), and a stem with nothing left is named by a
short hash of itself.
"""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any


def _classnames(cli: Any, folder: Path, names: list[str]) -> dict[str, str]:
    (folder / "c.json").write_text(json.dumps({"version": 1, "name": "c", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]}))
    for name in names:
        (folder / name).write_text('{"seq": 1, "type": "run.start"}\n', encoding="utf-8")
    result = cli("check", "-c", "c.json", *[arg for name in names for arg in ("-t", name)], "-f", "junit")
    assert result.returncode == 0, result.stderr
    root = ET.fromstring(result.stdout)
    return {suite.find("properties/property[@name='trace']").get("value"): suite.find("testcase").get("classname")
            for suite in root.iter("testsuite")}


def test_a_stem_without_ascii_letters_keeps_its_own_classname(cli: Any, tmp_path: Path) -> None:
    alone = _classnames(cli, tmp_path, ["報告.jsonl"])
    together = _classnames(cli, tmp_path, ["報告.jsonl", "記録.jsonl", "é.jsonl", "e.jsonl"])
    assert together["報告.jsonl"] == alone["報告.jsonl"]
    assert alone["報告.jsonl"].startswith("agent-invariants.c.h") and len(alone["報告.jsonl"]) == len(
        "agent-invariants.c.h") + 8
    assert together["記録.jsonl"] != together["報告.jsonl"]
    assert (together["é.jsonl"], together["e.jsonl"]) == ("agent-invariants.c.e", "agent-invariants.c.e-2")
