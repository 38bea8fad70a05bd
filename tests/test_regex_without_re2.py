"""`$regex` means the same with and without the `re2` extra (spec v2 §10 point 10: the loader
enforces RE2 syntax with or without google-re2, so acceptance must not depend on the machine).

The same contract and trace are checked twice through the CLI, once on RE2 and once on Python's
engine (google-re2 hidden behind a module that refuses to import): the reports must be equal.
The patterns use the RE2 features Python's engine says differently: Unicode general categories
and scripts, `\\x{…}`, `\\Q…\\E`, `\\C`, a dash beside a class escape in a set, POSIX classes, `$`
and `\\z`, `(?U)`, a quantified assertion, an empty class.
"""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

PIECES = [r"\pL", r"\p{Lu}", r"\PN", r"\p{^Z}", r"[\pL\d]", r"[^\pN-]", r"\x{41}", r"[\x{41}-\x{5A}]", r"\QA.B\E",
          r"[\d-z]", r"[\w-]", r"\C", r"\p{Any}", "[[:alpha:]]", "[[:digit:]-]", "a", ".", r"\d", r"\s", "(?:ab|c)",
          "x*", "y+", r"\z", r"\p{Greek}", r"[\p{Han}\p{^Latin}]", r"\pC", "(?U)a+", "^*", r"[^\P{Any}]"]
TEXTS = ["", "a", "A.B", "é", "Ä", "1", "٣", "-", "z", " ", "ab", "xyz", "AZ", "q5-", "Ω", "\u00a0", "ǅ", "a\n",
         "中", "\u0378"]


def _patterns() -> list[str]:
    chosen = random.Random(7)
    found = list(PIECES)
    for _ in range(60):
        pattern = "".join(chosen.choice(PIECES) for _ in range(chosen.randint(1, 3)))
        found.append(("^" if chosen.random() < 0.4 else "") + pattern + ("$" if chosen.random() < 0.4 else ""))
    return found


def _report(cli: Any, folder: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json", "--max-violations", "0",
                 **({"env": env} if env else {}))
    assert result.returncode in (0, 1), result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def test_regex_verdicts_are_the_same_on_re2_and_on_pythons_engine(cli: Any, tmp_path: Path) -> None:
    patterns = _patterns()
    rules = [{"id": f"r{number}", "kind": "tool_args", "tool": f"t{number}", "match": {"x": {"$regex": pattern}}}
             for number, pattern in enumerate(patterns)]
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "regex", "rules": rules}), encoding="utf-8")
    calls = [{"type": "tool.call", "tool": f"t{number}", "call_id": f"c{number}-{index}", "args": {"x": text}}
             for number in range(len(patterns)) for index, text in enumerate(TEXTS)]
    (tmp_path / "t.jsonl").write_text("".join(json.dumps({"seq": seq, **call}) + "\n"
                                              for seq, call in enumerate(calls, 1)), encoding="utf-8")
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "re2.py").write_text("raise ImportError('google-re2 hidden for this test')\n")
    on_re2 = _report(cli, tmp_path)
    on_python = _report(cli, tmp_path, {"PYTHONPATH": str(hidden)})
    assert on_python == on_re2
    assert 0 < on_re2["error_count"] < len(calls)   # the cases both match and miss


@pytest.mark.parametrize(("pattern", "text", "code"), [
    (r"\p{Greek}", "Ω", 0), (r"^\p{Han}+$", "中文", 0), (r"^\p{Greek}+$", "Ωx", 1), ("(?U)^a+b", "aab", 0),
    ("^*x", "x", 0), (r"[\P{Any}]", "x", 1), (r"\pC", "\u0378", 1)])
def test_what_re2_takes_is_taken_without_it(cli: Any, tmp_path: Path, pattern: str, text: str, code: int) -> None:
    """Scripts, `(?U)`, a quantified assertion and an empty class were refused without the extra
    (outside reading of point 10); `\\pC` held the unassigned code points there, which RE2's does not."""
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "regex", "rules": [
        {"id": "r", "kind": "tool_args", "tool": "t", "match": {"x": {"$regex": pattern}}}]}))
    call = {"seq": 1, "type": "tool.call", "tool": "t", "args": {"x": text}}
    (tmp_path / "t.jsonl").write_text(json.dumps(call) + "\n")
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "re2.py").write_text("raise ImportError('google-re2 hidden for this test')\n")
    on_re2 = cli("check", "--contract", "c.json", "--trace", "t.jsonl")
    on_python = cli("check", "--contract", "c.json", "--trace", "t.jsonl", env={"PYTHONPATH": str(hidden)})
    assert (on_re2.returncode, on_re2.stderr) == (code, "")
    assert (on_python.returncode, on_python.stdout, on_python.stderr) == (code, on_re2.stdout, "")
