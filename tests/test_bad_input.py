"""Bad input: one line on stderr naming the file and line (trace) or JSON path (contract), exit 2.

Every case here must leave stdout empty, print no traceback, and never write the `--output` file:
a report that existed before the failed run is left as it was, and no temporary file is left behind.

    agent-invariants: trace.jsonl:6: <what is wrong>          (a trace)
    agent-invariants: contract.json: $.rules[1].id: <what>    (a contract)
    agent-invariants: missing.json: <what>                     (the file itself)
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from support import contract, events, jsonl

pytestmark = pytest.mark.slow   # every test here takes long (see the README's Development)

PREFIX = "agent-invariants: "
SENTINEL = b"report from an earlier run\n"
MIB = 1 << 20

GOOD_CONTRACT = contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"})
GOOD_TRACE = jsonl(events({"type": "run.start"}, {"type": "tool.call", "tool": "crm.lookup", "call_id": "c1"},
                          {"type": "tool.result", "tool": "crm.lookup", "call_id": "c1", "ok": True}))
FIRST = '{"seq":1,"type":"run.start"}\n'


# ----------------------------------------------------------------------------------------------
# helpers


def _snapshot(root: Path) -> dict[str, tuple[bool, int, int]]:
    """Every file and folder under root with its size and modification time."""
    found = {}
    for path in root.rglob("*"):
        info = path.lstat()
        found[str(path.relative_to(root))] = (path.is_dir(), 0 if path.is_dir() else info.st_size, info.st_mtime_ns)
    return found


def run_bad(cli, tmp_path: Path, *args: str, output: str | None = "existing", stdin: str | bytes | None = None) -> str:
    """Run a command that must be refused; return its one stderr line without the program prefix.

    output: "existing" adds `--output out.json` over a file holding SENTINEL, "new" adds it with no
    such file, None adds no `--output` at all.
    """
    out = tmp_path / "out.json"
    if output == "existing":
        out.write_bytes(SENTINEL)
    if output is not None:
        args = (*args, "--output", "out.json")
    before = _snapshot(tmp_path)
    result = cli(*args, stdin=stdin)
    shown = f"args={args}\nexit={result.returncode}\nstdout={result.stdout!r}\nstderr={result.stderr!r}"
    assert result.returncode == 2, shown
    assert result.stdout == "", shown
    assert "Traceback" not in result.stderr, shown
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and result.stderr.endswith("\n"), f"expected exactly one stderr line\n{shown}"
    assert lines[0].startswith(PREFIX), shown
    if output == "existing":
        assert out.read_bytes() == SENTINEL, "the existing --output file was changed"
    if output == "new":
        assert not out.exists(), "--output file was created although the input was bad"
    assert _snapshot(tmp_path) == before, "files were created or changed in the working folder"
    return lines[0][len(PREFIX):]


def _name(name: str, tmp_path: Path) -> str:
    """A regex for a file name as given on the command line (or its absolute form)."""
    return f"(?:{re.escape(name)}|{re.escape(str(tmp_path / name))})"


def trace_problem(message: str, name: str, line: int, tmp_path: Path) -> str:
    """Assert `<name>:<line>: <problem>` and return the problem."""
    found = re.fullmatch(rf"{_name(name, tmp_path)}:(\d+): (\S.*)", message)
    assert found, f"expected '{name}:{line}: <what is wrong>', got {message!r}"
    assert int(found[1]) == line, f"expected line {line}, got {message!r}"
    return found[2]


def contract_problem(message: str, name: str, paths: tuple[str, ...], tmp_path: Path) -> str:
    """Assert `<name>: <json path>: <problem>` with the path one of `paths`; return path + problem."""
    found = re.fullmatch(rf"{_name(name, tmp_path)}(?::\d+)?: (\$\S*): (\S.*)", message)
    assert found, f"expected '{name}: {paths[0]}: <what is wrong>', got {message!r}"
    assert found[1] in paths, f"expected JSON path {' or '.join(paths)}, got {message!r}"
    return f"{found[1]}: {found[2]}"


def file_problem(message: str, name: str, tmp_path: Path) -> str:
    """Assert `<name>: <problem>` with no line number and no JSON path; return the problem."""
    found = re.fullmatch(rf"{_name(name, tmp_path)}: (\S.*)", message)
    assert found, f"expected '{name}: <what is wrong>', got {message!r}"
    assert not re.match(r"\d+:|\$", found[1]), f"a file-level problem should have no line or path: {message!r}"
    return found[1]


def check_bad_trace(cli, write, tmp_path: Path, content: str | bytes, *extra: str) -> str:
    write("contract.json", GOOD_CONTRACT)
    write("trace.jsonl", content)
    return run_bad(cli, tmp_path, "check", "--contract", "contract.json", "--trace", "trace.jsonl", *extra)


def check_bad_contract(cli, write, tmp_path: Path, document: Any) -> str:
    write("contract.json", document)
    write("trace.jsonl", GOOD_TRACE)
    return run_bad(cli, tmp_path, "check", "--contract", "contract.json", "--trace", "trace.jsonl")


def line(**fields: Any) -> str:
    return json.dumps(fields) + "\n"


# ----------------------------------------------------------------------------------------------
# files that cannot be read


@pytest.mark.parametrize("which", ["contract", "trace"])
def test_missing_file(cli, write, tmp_path, which):
    write("contract.json", GOOD_CONTRACT)
    write("trace.jsonl", GOOD_TRACE)
    paths = {"contract": "contract.json", "trace": "trace.jsonl", which: f"missing-{which}.json"}
    message = run_bad(cli, tmp_path, "check", "--contract", paths["contract"], "--trace", paths["trace"])
    file_problem(message, f"missing-{which}.json", tmp_path)


@pytest.mark.parametrize("which", ["contract", "trace"])
def test_directory_instead_of_file(cli, write, tmp_path, which):
    write("contract.json", GOOD_CONTRACT)
    write("trace.jsonl", GOOD_TRACE)
    (tmp_path / "a-folder").mkdir()
    paths = {"contract": "contract.json", "trace": "trace.jsonl", which: "a-folder"}
    message = run_bad(cli, tmp_path, "check", "--contract", paths["contract"], "--trace", paths["trace"])
    file_problem(message, "a-folder", tmp_path)


def _unreadable(path: Path) -> str:
    """Make `path` unreadable; return the name to pass on the command line.

    chmod 000 does not stop root, so when the file can still be read, return a path that nobody
    can read instead: one that goes through the regular file as if it were a folder.
    """
    path.chmod(0)
    try:
        path.read_bytes()
    except PermissionError:
        return path.name
    path.chmod(0o644)
    return f"{path.name}/inside.json"


@pytest.mark.parametrize("which", ["contract", "trace"])
def test_unreadable_file(cli, write, tmp_path, which):
    write("contract.json", GOOD_CONTRACT)
    write("trace.jsonl", GOOD_TRACE)
    write("blocked.json", GOOD_CONTRACT if which == "contract" else GOOD_TRACE)
    name = _unreadable(tmp_path / "blocked.json")
    try:
        paths = {"contract": "contract.json", "trace": "trace.jsonl", which: name}
        message = run_bad(cli, tmp_path, "check", "--contract", paths["contract"], "--trace", paths["trace"])
    finally:
        (tmp_path / "blocked.json").chmod(0o644)
    file_problem(message, name, tmp_path)


# ----------------------------------------------------------------------------------------------
# traces: each case names the physical line of the first bad event


def _long_line(seq: int, size: int) -> str:
    """A valid event line of exactly `size` bytes (newline not counted)."""
    head = f'{{"seq":{seq},"type":"padding","data":{{"pad":"'
    tail = '"}}'
    return head + "x" * (size - len(head) - len(tail)) + tail + "\n"


TRACE_CASES = [
    # id, trace content, extra args, line of the error, words the problem must mention (any of)
    ("invalid-json-after-comments-and-blanks",
     "# recorded by the harness\n\n" + FIRST + "# a note\n   \n" + '{"seq":2,"type":"x",}\n', (), 6, ()),
    ("invalid-utf8", FIRST.encode() + b"# caf\xc3\xa9 is fine here\n" + b'{"seq":2,"type":"caf\xe9"}\n', (), 3,
     ("utf-8", "utf8")),
    ("line-over-1-mib", FIRST + _long_line(2, MIB + 1) + line(seq=3, type="x"), (), 2, ()),
    ("line-over-max-line-bytes", FIRST + "# short\n" + _long_line(2, 65), ("--max-line-bytes", "64"), 3, ()),
    ("nan", FIRST + '{"seq":2,"type":"x","confidence":NaN}\n', (), 2, ()),
    ("infinity", FIRST + '{"seq":2,"type":"x","confidence":Infinity}\n', (), 2, ()),
    ("minus-infinity", FIRST + '{"seq":2,"type":"x","confidence":-Infinity}\n', (), 2, ()),
    ("duplicate-seq", FIRST + line(seq=2, type="x") + line(seq=2, type="y"), (), 3, ("seq",)),
    ("decreasing-seq", FIRST + line(seq=5, type="x") + "\n# later\n" + line(seq=4, type="y"), (), 5, ("seq",)),
    ("negative-seq", "# starts below zero\n" + line(seq=-1, type="x"), (), 2, ("seq",)),
    ("fractional-seq", FIRST + line(seq=1.5, type="x"), (), 2, ("seq",)),
    ("ok-as-string", FIRST + line(seq=2, type="tool.result", ok="true"), (), 2, ("ok",)),
    ("tool-as-number", FIRST + line(seq=2, type="tool.call", tool=7), (), 2, ("tool",)),
    ("data-as-array", FIRST + line(seq=2, type="x", data=[1, 2]), (), 2, ("data",)),
    ("null-tool", FIRST + line(seq=2, type="tool.call", tool=None), (), 2, ("tool",)),
    ("confidence-above-one", FIRST + line(seq=2, type="x", confidence=1.5), (), 2, ("confidence",)),
    ("not-a-leap-day", FIRST + line(seq=2, type="x", time="2023-02-29T10:00:00Z"), (), 2, ("time",)),
    ("event-is-a-number", FIRST + "42\n", (), 2, ()),
    ("event-is-an-array", FIRST + "[" + line(seq=2, type="x").strip() + "]\n", (), 2, ()),
    ("first-bad-line-wins", FIRST + '{"seq":2,"type":\n' + FIRST + "{oops\n", (), 2, ()),
    ("truncated-array", '[\n  {"seq":1,"type":"a"},\n  {"seq":2,"type":', (), 3, ()),
    ("array-item-bad-seq", '[\n  {"seq":1,"type":"a"},\n\n  {"seq":1,\n   "type":"b"}\n]\n', (), 4, ("seq",)),
]


@pytest.mark.parametrize("content, extra, lineno, words", [case[1:] for case in TRACE_CASES],
                         ids=[case[0] for case in TRACE_CASES])
def test_bad_trace_names_file_and_line(cli, write, tmp_path, content, extra, lineno, words):
    problem = trace_problem(check_bad_trace(cli, write, tmp_path, content, *extra), "trace.jsonl", lineno, tmp_path)
    if words:
        assert any(word in problem.lower() for word in words), f"the problem should mention {words}: {problem!r}"


def test_line_exactly_at_the_limit_is_accepted(cli, write):
    write("contract.json", GOOD_CONTRACT)
    write("trace.jsonl", FIRST + _long_line(2, 64) + line(seq=3, type="x"))
    result = cli("check", "--contract", "contract.json", "--trace", "trace.jsonl", "--max-line-bytes", "64")
    assert result.returncode == 0, result.stderr


def test_bad_trace_on_stdin(cli, write, tmp_path):
    write("contract.json", GOOD_CONTRACT)
    message = run_bad(cli, tmp_path, "check", "--contract", "contract.json", "--trace", "-",
                      stdin=FIRST + "# comment\n" + line(seq=1, type="again"))
    found = re.fullmatch(r"(?:<stdin>|-|<stdin> \(-\)):(\d+): \S.*", message)
    assert found and found[1] == "3", message


# ----------------------------------------------------------------------------------------------
# contracts: each case names the JSON path of the offending value


def _rules(*rules: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return contract(*rules, **extra)


DENY = {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}


def _rule(**fields: Any) -> dict[str, Any]:
    return {"id": "r1", **fields}


CONTRACT_CASES = [
    # id, contract document, accepted JSON paths, words the message must mention (any of)
    ("unknown-rule-kind", _rules(DENY, _rule(kind="deny_tools", tool="x")), ("$.rules[1].kind",), ("deny_tools",)),
    ("missing-kind", _rules(DENY, _rule(tool="x")), ("$.rules[1]", "$.rules[1].kind"), ("kind",)),
    ("duplicate-rule-id", _rules({**DENY, "id": "dup"}, DENY, {**DENY, "id": "dup", "tool": "rm"}),
     ("$.rules[2].id",), ("dup",)),
    ("max-attempts-zero", _rules(_rule(kind="retry_limit", max_attempts=0)), ("$.rules[0].max_attempts",), ()),
    ("max-attempts-fraction", _rules(_rule(kind="retry_limit", max_attempts=1.5)), ("$.rules[0].max_attempts",), ()),
    ("within-events-zero", _rules(_rule(kind="require_approval", tool="pay.*", within_events=0)),
     ("$.rules[0].within_events",), ()),
    ("threshold-above-one", _rules(_rule(kind="confidence_requires_outcome", threshold=1.5)),
     ("$.rules[0].threshold",), ()),
    ("budget-negative", _rules(_rule(kind="event_budget", max_events=-1)), ("$.rules[0].max_events",), ()),
    ("empty-glob", _rules(_rule(kind="deny_tool", tool="")), ("$.rules[0].tool",), ()),
    ("whitespace-glob", _rules(_rule(kind="deny_tool", tool=" \t ")), ("$.rules[0].tool",), ()),
    ("whitespace-glob-in-list", _rules(_rule(kind="allow_tools", tools=["crm.*", "   "])),
     ("$.rules[0].tools[1]",), ()),
    ("whitespace-glob-in-matcher", _rules(_rule(kind="deny_event", match={"tool": "  "})),
     ("$.rules[0].match.tool",), ()),
    ("unknown-key-at-root", _rules(DENY, rulez=[]), ("$", "$.rulez"), ("rulez",)),
    ("unknown-key-in-rule", _rules(DENY, {**DENY, "id": "r2", "tols": "x"}), ("$.rules[1]", "$.rules[1].tols"),
     ("tols",)),
    ("unknown-key-in-matcher", _rules(_rule(kind="deny_event", match={"type": "a", "tol": "x"})),
     ("$.rules[0].match", "$.rules[0].match.tol"), ("tol",)),
    ("unknown-key-in-compare", _rules(DENY, compare={"fail_on_new_tool": True}),
     ("$.compare", "$.compare.fail_on_new_tool"), ("fail_on_new_tool",)),
    ("version-as-string", {**_rules(DENY), "version": "1"}, ("$.version",), ()),
    ("version-3", {**_rules(DENY), "version": 3}, ("$.version",), ()),
    ("event-budget-without-bounds", _rules(DENY, _rule(kind="event_budget")), ("$.rules[1]",), ()),
    ("require-event-max-zero-alone", _rules(_rule(kind="require_event", match={"type": "a"}, max=0)),
     ("$.rules[0]", "$.rules[0].max", "$.rules[0].min"), ()),
    ("id-leading-dash", _rules({**DENY, "id": "-no-shell"}), ("$.rules[0].id",), ()),
    ("id-with-space", _rules(DENY, {**DENY, "id": "no shell"}), ("$.rules[1].id",), ()),
    ("id-too-long", _rules({**DENY, "id": "a" * 129}), ("$.rules[0].id",), ()),
    ("empty-rules", _rules(), ("$.rules",), ()),
]


@pytest.mark.parametrize("document, paths, words", [case[1:] for case in CONTRACT_CASES],
                         ids=[case[0] for case in CONTRACT_CASES])
def test_bad_contract_names_json_path(cli, write, tmp_path, document, paths, words):
    message = contract_problem(check_bad_contract(cli, write, tmp_path, document), "contract.json", paths, tmp_path)
    if words:
        assert any(word in message for word in words), f"the message should mention {words}: {message!r}"


def test_invalid_json_contract_names_line_and_column(cli, write, tmp_path):
    text = '{\n  "version": 1,\n  "name": "x",\n  "rules": [}\n}\n'
    problem = file_problem(check_bad_contract(cli, write, tmp_path, text), "contract.json", tmp_path)
    assert re.search(r"\bline 4\b", problem) and re.search(r"\bcolumn 13\b", problem), problem


@pytest.mark.parametrize("content", [
    pytest.param(b"\xef\xbb\xbf" + json.dumps(GOOD_CONTRACT).encode(), id="bom"),
    pytest.param(json.dumps(GOOD_CONTRACT).encode() + b"\n{}\n", id="two-documents"),
])
def test_contract_that_is_not_one_json_document(cli, write, tmp_path, content):
    file_problem(check_bad_contract(cli, write, tmp_path, content), "contract.json", tmp_path)


# ----------------------------------------------------------------------------------------------
# every command, every way of running it


@pytest.mark.parametrize("case, output", [("contract", None), ("trace", "new"), ("missing-file", None)])
def test_output_mode_does_not_matter(cli, write, tmp_path, case, output):
    write("contract.json", GOOD_CONTRACT if case != "contract" else _rules(DENY, DENY))
    write("trace.jsonl", GOOD_TRACE if case != "trace" else FIRST + "\n" + FIRST)
    trace = "gone.jsonl" if case == "missing-file" else "trace.jsonl"
    message = run_bad(cli, tmp_path, "check", "--contract", "contract.json", "--trace", trace, output=output)
    if case == "contract":
        contract_problem(message, "contract.json", ("$.rules[1].id",), tmp_path)
    elif case == "trace":
        trace_problem(message, "trace.jsonl", 3, tmp_path)
    else:
        file_problem(message, "gone.jsonl", tmp_path)


def test_validate_bad_contract(cli, write, tmp_path):
    write("contract.json", _rules(DENY, _rule(kind="retry_limit", max_attempts=0)))
    message = run_bad(cli, tmp_path, "validate", "--contract", "contract.json", output=None)
    contract_problem(message, "contract.json", ("$.rules[1].max_attempts",), tmp_path)


def test_summary_checks_sequence_order(cli, write, tmp_path):
    write("trace.jsonl", "# unordered\n" + line(seq=3, type="a") + line(seq=2, type="b"))
    message = run_bad(cli, tmp_path, "summary", "--trace", "trace.jsonl", output=None)
    assert "seq" in trace_problem(message, "trace.jsonl", 3, tmp_path)


def test_compare_bad_candidate(cli, write, tmp_path):
    write("contract.json", GOOD_CONTRACT)
    write("baseline.jsonl", GOOD_TRACE)
    write("candidate.jsonl", FIRST + line(seq=2, type="tool.result", ok="yes"))
    message = run_bad(cli, tmp_path, "compare", "--contract", "contract.json", "--baseline", "baseline.jsonl",
                      "--candidate", "candidate.jsonl")
    assert "ok" in trace_problem(message, "candidate.jsonl", 2, tmp_path)


def test_output_that_cannot_be_written(cli, write, tmp_path):
    target = "no-such-folder/out.json"
    write("contract.json", GOOD_CONTRACT)
    write("trace.jsonl", GOOD_TRACE)
    message = run_bad(cli, tmp_path, "check", "--contract", "contract.json", "--trace", "trace.jsonl",
                      "--output", target, output=None)
    file_problem(message, target, tmp_path)


# ----------------------------------------------------------------------------------------------
# the first error wins, in load order: contract, then baseline, then candidate


def test_contract_error_wins_over_trace_error(cli, write, tmp_path):
    write("contract.json", _rules(DENY, {**DENY, "id": "two", "kind": "nope"}))
    write("trace.jsonl", "{broken\n")
    message = run_bad(cli, tmp_path, "check", "--contract", "contract.json", "--trace", "trace.jsonl")
    contract_problem(message, "contract.json", ("$.rules[1].kind",), tmp_path)


def test_missing_contract_wins_over_missing_trace(cli, tmp_path):
    message = run_bad(cli, tmp_path, "check", "--contract", "no-contract.json", "--trace", "no-trace.jsonl")
    file_problem(message, "no-contract.json", tmp_path)


def test_baseline_error_wins_over_candidate_error(cli, write, tmp_path):
    write("contract.json", GOOD_CONTRACT)
    write("baseline.jsonl", FIRST + "# ok so far\n" + '{"seq":2,"type":"x","ok":1}\n')
    write("candidate.jsonl", "{broken\n")
    message = run_bad(cli, tmp_path, "compare", "--contract", "contract.json", "--baseline", "baseline.jsonl",
                      "--candidate", "candidate.jsonl")
    trace_problem(message, "baseline.jsonl", 3, tmp_path)


def test_missing_baseline_wins_over_missing_candidate(cli, write, tmp_path):
    write("contract.json", GOOD_CONTRACT)
    message = run_bad(cli, tmp_path, "compare", "--contract", "contract.json", "--baseline", "no-baseline.jsonl",
                      "--candidate", "no-candidate.jsonl")
    file_problem(message, "no-baseline.jsonl", tmp_path)

