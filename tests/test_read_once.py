"""Every input is read once: reports that point into the contract and the traces (SARIF regions,
the rule's line in the contract) take what they need during that one read.

SARIF used to open the contract and the trace again for line numbers and lengths, which hung when
either was a pipe (a FIFO, process substitution) and could read a different file than was checked.
"""
from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from support import contract, events, jsonl

pytestmark = pytest.mark.slow   # every test here takes long (see the README's Development)

RULES = contract(
    {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"},
    {"id": "one-done", "kind": "require_event", "match": {"type": "run.completed"}},
)
TRACE = jsonl(events(
    {"type": "run.start"},
    {"type": "tool.call", "tool": "shell.exec", "call_id": "c1", "note": "é😀"},
))


def fifo(path: Path, content: str) -> threading.Thread:
    """A named pipe at `path` that yields `content` once, to whoever opens it first."""
    os.mkfifo(path)

    def feed() -> None:
        with open(path, "w", encoding="utf-8") as stream:
            stream.write(content)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    return writer


def regions(sarif: str) -> list[tuple[str, int, int]]:
    """(uri, line, end column) of each result's primary location."""
    log = json.loads(sarif)
    found = []
    for result in log["runs"][0]["results"]:
        location = result["locations"][0]["physicalLocation"]
        region = location["region"]
        assert region["startColumn"] == 1 and region["endLine"] == region["startLine"]
        found.append((location["artifactLocation"]["uri"], region["startLine"], region["endColumn"]))
    return found


def test_sarif_from_a_contract_and_a_trace_that_are_pipes(cli, tmp_path: Path) -> None:
    writers = [fifo(tmp_path / "contract.json", json.dumps(RULES, indent=2)), fifo(tmp_path / "trace.jsonl", TRACE)]
    result = cli("check", "--contract", "contract.json", "--trace", "trace.jsonl", "--format", "sarif", timeout=30)
    for writer in writers:
        writer.join(timeout=5)
    assert result.returncode == 1, result.stderr
    # the call is on line 2, 106 UTF-16 units long (the emoji counts two); the missing
    # run.completed points at its rule, which starts on line 10 of the indented contract (the
    # whole line, `    {`, as the contract was read from the pipe)
    line = TRACE.splitlines()[1]
    assert regions(result.stdout) == [("trace.jsonl", 2, len(line.encode("utf-16-le")) // 2 + 1),
                                      ("contract.json", 10, 6)]


def test_compare_sarif_from_pipes(cli, tmp_path: Path) -> None:
    baseline = jsonl(events({"type": "run.start"}, {"type": "run.completed"}))
    writers = [fifo(tmp_path / "contract.json", json.dumps(RULES)), fifo(tmp_path / "baseline.jsonl", baseline),
               fifo(tmp_path / "candidate.jsonl", TRACE)]
    result = cli("compare", "--contract", "contract.json", "--baseline", "baseline.jsonl",
                 "--candidate", "candidate.jsonl", "--format", "sarif", timeout=30)
    for writer in writers:
        writer.join(timeout=5)
    assert result.returncode == 1, result.stderr
    width = len(TRACE.splitlines()[1].encode("utf-16-le")) // 2 + 1
    # the new failure of no-shell, then the new tool, both at the call on line 2
    assert regions(result.stdout)[:1] == [("candidate.jsonl", 2, width)]
    assert ("candidate.jsonl", 2, width) in regions(result.stdout)[1:]


def test_sarif_regions_end_at_the_end_of_each_line(cli, write) -> None:
    lines = [
        '{"seq": 1, "type": "tool.call", "tool": "shell.a", "call_id": "a"}',
        '  {"seq": 2, "type": "tool.call", "tool": "shell.b", "call_id": "b", "x": "\u00e9\u00e9"}  ',
        '{"seq": 3, "type": "tool.call", "tool": "shell.c", "call_id": "c", "x": "\U0001F600"}',
    ]
    write("contract.json", RULES)
    write("crlf.jsonl", "# a comment\r\n" + "\r\n".join(lines) + "\r\n")
    write("array.json", "[\n" + ",\n\n".join(line.strip() for line in lines) + "]")
    widths = [len(line.encode("utf-16-le")) // 2 + 1 for line in lines]
    crlf = cli("check", "--contract", "contract.json", "--trace", "crlf.jsonl", "--format", "sarif")
    assert regions(crlf.stdout)[:3] == [("crlf.jsonl", 2, widths[0]), ("crlf.jsonl", 3, widths[1]),
                                        ("crlf.jsonl", 4, widths[2])]
    array = cli("check", "--contract", "contract.json", "--trace", "array.json", "--format", "sarif")
    stripped = [len(line.strip().encode("utf-16-le")) // 2 + 1 for line in lines]
    # the last item shares its line with the closing bracket
    assert regions(array.stdout)[:3] == [("array.json", 2, stripped[0] + 1), ("array.json", 4, stripped[1] + 1),
                                         ("array.json", 6, stripped[2] + 1)]
