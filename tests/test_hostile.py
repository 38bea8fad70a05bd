"""Hostile input: each item ends in exit 2 with a precise message or in a correct verdict, within
a bounded time, and never in a traceback."""
from __future__ import annotations

import gzip
import json
import os
import threading
import time

import pytest

from agent_invariants.globs import glob_matches

from support import contract, events, jsonl

RULES = contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"},
                 {"id": "answered", "kind": "tool_result_required"})
MIB = 1 << 20


def run(cli, write, trace: bytes | str, *extra: str, rules=RULES, timeout: float = 60):
    write("contract.json", rules)
    write("trace.jsonl", trace)
    started = time.monotonic()
    result = cli("check", "--contract", "contract.json", "--trace", "trace.jsonl", "--format", "json", *extra,
                 timeout=timeout)
    result.seconds = time.monotonic() - started
    assert "Traceback" not in result.stderr, result.stderr
    return result


def bad(result, *fragments: str, line: int | None = 1) -> None:
    """Exit 2, nothing on stdout, one stderr line naming the trace (and line) and the problem."""
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert result.stdout == ""
    (message,) = result.stderr.splitlines()
    prefix = "agent-invariants: trace.jsonl" + ("" if line is None else f":{line}") + ": "
    assert message.startswith(prefix), message
    for fragment in fragments:
        assert fragment in message, message


def nested(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


@pytest.mark.slow
@pytest.mark.parametrize("field", ["data", "args"])
def test_deeply_nested_json_is_bad_input(cli, write, field):
    line = f'{{"seq": 1, "type": "x", "{field}": {nested(100_000)}}}\n'
    bad(run(cli, write, line), "nested more than 500 levels")


@pytest.mark.slow
def test_nesting_up_to_500_levels_is_fine_and_501_is_not(cli, write):
    # the event object is the first level
    assert run(cli, write, f'{{"seq": 1, "type": "x", "data": {nested(499)}}}\n').returncode == 0
    bad(run(cli, write, f'{{"seq": 1, "type": "x", "data": {nested(500)}}}\n'), "nested more than 500 levels")


@pytest.mark.slow
def test_deeply_nested_array_trace_and_contract(cli, write):
    write("deep.json", f'[{{"seq": 1, "type": "x", "data": {nested(100_000)}}}]')
    write("contract.json", RULES)
    _refused_as_too_deep(cli("check", "--contract", "contract.json", "--trace", "deep.json"))
    write("deep-contract.json", f'{{"version": 1, "name": "x", "rules": [], "description": {nested(100_000)}}}')
    _refused_as_too_deep(cli("validate", "--contract", "deep-contract.json"))


def _refused_as_too_deep(result) -> None:
    assert result.returncode == 2, result.stderr
    assert "nested more than 500 levels" in result.stderr and "Traceback" not in result.stderr


def padded_event(size: int) -> bytes:
    """A valid event line of exactly `size` bytes (newline not counted)."""
    head = b'{"seq": 1, "type": "x", "data": {"pad": "'
    tail = b'"}}'
    return head + b"p" * (size - len(head) - len(tail)) + tail


@pytest.mark.slow
def test_a_line_of_exactly_one_mebibyte_is_accepted_and_one_more_byte_is_not(cli, write):
    assert run(cli, write, padded_event(MIB) + b"\n").returncode == 0
    bad(run(cli, write, padded_event(MIB + 1) + b"\n"), "1,048,577 bytes", "1,048,576-byte limit", "--max-line-bytes")


@pytest.mark.slow
def test_the_cr_of_a_crlf_line_end_does_not_count_towards_the_limit(cli, write):
    assert run(cli, write, padded_event(MIB) + b"\r\n" + padded_event(MIB).replace(b'"seq": 1', b'"seq": 2')
               + b"\r\n").returncode == 0
    bad(run(cli, write, padded_event(MIB + 1) + b"\r\n"), "1,048,577 bytes")


@pytest.mark.slow
def test_a_huge_line_without_newline_is_refused_without_reading_it_all(cli, write):
    result = run(cli, write, b'{"seq": 1, "type": "' + b"x" * (40 * MIB))
    bad(result, "at least", "over the 1,048,576-byte limit")


@pytest.mark.slow
def test_megabyte_strings_are_checked_against_their_limits(cli, write):
    line = json.dumps({"seq": 1, "type": "tool.call", "tool": "t" * MIB}).encode() + b"\n"
    bad(run(cli, write, line, "--max-line-bytes", str(4 * MIB)), "$.tool",
        "expected a string of at most 500 characters")
    ok = json.dumps({"seq": 1, "type": "x", "data": {"blob": "b" * MIB}}).encode() + b"\n"
    assert run(cli, write, ok, "--max-line-bytes", str(4 * MIB)).returncode == 0


@pytest.mark.slow
def test_huge_integers(cli, write):
    result = run(cli, write, b'{"seq": 123456789012345678901234567890, "type": "tool.call", "tool": "shell.x"}\n'
                             b'{"seq": 1e300, "type": "y"}\n')
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["violations"][0]["event_seq"] == 123456789012345678901234567890 \
        or report["violations"][0]["event_seq"] == pytest.approx(1.2345678901234568e29)
    bad(run(cli, write, b'{"seq": 1, "type": "x", "confidence": 1e400}\n'), "$.confidence")
    bad(run(cli, write, b'{"seq": 1e400, "type": "x"}\n'), "$.seq")


@pytest.mark.slow
@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_invalid_json(cli, write, literal):
    bad(run(cli, write, f'{{"seq": 1, "type": "x", "confidence": {literal}}}\n'), "invalid JSON")
    write("c.json", '{"version": 1, "name": "x", "rules": [{"id": "a", "kind": "confidence_requires_outcome", '
                    f'"threshold": {literal}}}]}}')
    result = cli("validate", "--contract", "c.json")
    assert result.returncode == 2 and "invalid JSON" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow
def test_lone_surrogates_are_read_as_the_replacement_character(cli, write):
    """JSON.parse reads a lone surrogate escape (JSON.stringify writes one for a string cut inside
    an emoji); it becomes U+FFFD, one UTF-16 unit like the surrogate, so `?` still matches it."""
    trace = ('{"seq": 1, "type": "tool.call", "tool": "shell.\\ud83d", "call_id": "c", "data": {"n": "\\udc00"}}\n'
             '{"seq": 2, "type": "tool.result", "tool": "shell.\\ud83d", "call_id": "c", "run_id": "\\udc00\\ud800"}\n'
             '{"seq": 3, "type": "x", "note": "\\\\ud800 is text after an escaped backslash"}\n')
    no_single = contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.?"})
    result = run(cli, write, trace, rules=no_single)
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert [(v["event_seq"], v["evidence"]["tool"]) for v in report["violations"]] == [(1, "shell.\ufffd")]
    assert report["summary"]["tools"] == ["shell.\ufffd"]
    write("array.json", "[" + ",\n".join(trace.splitlines()) + "]")
    as_array = cli("check", "--contract", "contract.json", "--trace", "array.json", "--format", "json")
    assert json.loads(as_array.stdout)["violations"] == report["violations"]
    paired = run(cli, write, '{"seq": 1, "type": "tool.call", "tool": "shell.\\ud83d\\ude00", "call_id": "c"}\n')
    assert paired.returncode == 1 and json.loads(paired.stdout)["violations"][0]["evidence"]["tool"] == "shell.😀"


@pytest.mark.slow
def test_invalid_utf8_and_nul_bytes(cli, write):
    bad(run(cli, write, b'{"seq": 1, "type": "\xff\xfe"}\n'), "UTF-8")
    bad(run(cli, write, b'{"seq": 1, "type": "x\x00"}\n'), "invalid JSON")
    escaped = run(cli, write, b'{"seq": 1, "type": "tool.call", "tool": "shell.\\u0000", "call_id": "c"}\n')
    assert escaped.returncode == 1


@pytest.mark.slow
def test_a_bom_in_the_middle(cli, write):
    line_start = run(cli, write, b'{"seq": 1, "type": "x"}\n\xef\xbb\xbf{"seq": 2, "type": "y"}\n')
    assert line_start.returncode == 0   # a BOM is whitespace to JavaScript's trim, as in the reference
    bad(run(cli, write, b'{"seq": 1, "type": "x"}\n{"seq": 2,\xef\xbb\xbf "type": "y"}\n'), "invalid JSON", line=2)


def test_cr_only_line_ends_make_one_line(cli, write):
    bad(run(cli, write, b'{"seq": 1, "type": "x"}\r{"seq": 2, "type": "y"}\r'), "invalid JSON")


@pytest.mark.slow
def test_gzip_and_binary_files(cli, write):
    bad(run(cli, write, gzip.compress(jsonl(events({"type": "x"})).encode())), "gzip", line=None)
    bad(run(cli, write, bytes(range(256)) * 4), "invalid JSON")


@pytest.mark.slow
def test_a_directory_and_a_fifo(cli, write, tmp_path):
    write("contract.json", RULES)
    (tmp_path / "folder.jsonl").mkdir()
    result = cli("check", "--contract", "contract.json", "--trace", str(tmp_path / "folder.jsonl"))
    assert result.returncode == 2 and "directory holds no trace files" in result.stderr   # a folder of traces
    (tmp_path / "c-folder.json").mkdir()
    result = cli("check", "--contract", str(tmp_path / "c-folder.json"), "--trace", "-", stdin="")
    assert result.returncode == 2 and "is a directory" in result.stderr
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "w") as stream:
            stream.write(jsonl(events({"type": "tool.call", "tool": "shell.exec", "call_id": "c"})))

    writer = threading.Thread(target=feed)
    writer.start()
    result = cli("check", "--contract", "contract.json", "--trace", str(fifo), "--format", "json", timeout=30)
    writer.join()
    assert result.returncode == 1 and json.loads(result.stdout)["violations"][0]["rule_id"] == "no-shell"


@pytest.mark.slow
def test_a_contract_of_ten_thousand_rules(cli, write):
    rules = [{"id": f"r{i}", "kind": "deny_tool", "tool": f"*tool{i}*?*"} for i in range(10_000)]
    trace = jsonl([{"seq": i, "type": "tool.call", "tool": f"x-tool{i * 37}-y", "call_id": f"c{i}"}
                   for i in range(200)])
    result = run(cli, write, trace, rules={"version": 1, "name": "big", "rules": rules}, timeout=120)
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert len(report["results"]) == 10_000
    # tool x-tool{37i}-y matches rule r{j} when "tool{j}" occurs in it followed by at least one character
    found = [(f"r{j}", i) for j in range(10_000) for i in range(200)
             if f"tool{j}" in f"x-tool{i * 37}-y" and not f"x-tool{i * 37}-y".endswith(f"tool{j}")]
    assert report["error_count"] == len(found)
    # all rules together keep at most 100,000 violations: 10 each here, the first ones
    per_rule: dict[str, int] = {}
    kept = []
    for rule_id, seq in found:   # (by rule, each rule's in trace order)
        per_rule[rule_id] = per_rule.get(rule_id, 0) + 1
        if per_rule[rule_id] <= 10:
            kept.append((rule_id, seq))
    assert len(kept) < len(found)
    assert sorted((v["rule_id"], v["event_seq"]) for v in report["violations"]) == sorted(kept)
    assert result.seconds < 60
    too_many = {"version": 1, "name": "big", "rules": rules + [{"id": "one-more", "kind": "deny_tool", "tool": "x"}]}
    write("contract.json", too_many)
    over = cli("validate", "--contract", "contract.json")
    assert over.returncode == 2 and "$.rules" in over.stderr and "10000" in over.stderr


def test_globs_are_literal_and_linear():
    metacharacters = r".+()[]{}|^$\ "
    assert glob_matches(metacharacters, metacharacters)
    assert not glob_matches(".*", "anything")
    assert glob_matches("a.b", "a.b") and not glob_matches("a.b", "axb")
    subject = "a" * 50_000
    started = time.monotonic()
    assert not glob_matches("*a" * 40 + "*b", subject)
    assert glob_matches("*a" * 40 + "*", subject)
    assert not glob_matches("a" * 20 + "?" * 10 + "*" * 30 + "b", subject)
    assert glob_matches("*a*a*a*a*a*a*a*a*\n*", subject + "\n" + subject)   # the literal \n matches it
    assert not glob_matches("*a*a*a*a*a*a*a*a*\n*b", subject + "\n" + subject)
    assert not glob_matches("*a*a*a*a*a*a*a*a*", subject + "\n" + subject)   # a star never takes \n
    assert time.monotonic() - started < 2


@pytest.mark.slow
def test_terminal_escapes_from_traces_are_neutralised_in_text(cli, write):
    hostile = "shell.\x1b[2J\x1b]0;pwned\x07\u009b31m"
    result = run(cli, write, jsonl(events({"type": "tool.call", "tool": hostile, "call_id": "c"})))
    write("trace.jsonl", jsonl(events({"type": "tool.call", "tool": hostile, "call_id": "c"})))
    text = cli("check", "--contract", "contract.json", "--trace", "trace.jsonl", "--format", "text",
               env={"NO_COLOR": ""})
    assert result.returncode == text.returncode == 1
    assert "\x1b" not in text.stdout and "\x07" not in text.stdout and "\u009b" not in text.stdout
    assert "shell.\\x1b[2J\\x1b]0;pwned\\x07\\x9b31m" in text.stdout


@pytest.mark.slow
def test_patterns_that_compile_to_gigabytes_are_refused_at_the_one_past_the_budget(cli, write):
    """A pattern of a few characters may compile to a large program: `\\pL{100}` is 119,604 RE2
    instructions, 3 MB and 70 ms, and a 30 KB contract of 300 such rules took 1.1 GB and 21 s to
    load (outside review, hunt 22). The patterns of a contract may take 3,000,000 instructions
    together: the 26th is refused, with its path, and the rest are not compiled (how long that
    takes is the benchmark's to say, not a timed test's: the suite runs on loaded machines too)."""
    def rules(count: int) -> list[dict]:
        return [{"id": f"r{n}", "kind": "tool_args", "tool": "x", "match": {"a": {"$regex": f"\\pL{{100}}|z{n}"}}}
                for n in range(count)]

    write("fits.json", {"version": 2, "name": "x", "rules": rules(25)})
    assert cli("validate", "-c", "fits.json").returncode == 0
    write("over.json", {"version": 2, "name": "x", "rules": rules(300)})
    result = cli("validate", "-c", "over.json")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "agent-invariants: over.json:261: $.rules[25].match.a.$regex: $regex compiles to 119,607 RE2 instructions, and "
        "the patterns before it to 2,990,165: past the 3,000,000 a contract's patterns may take together; make them "
        "simpler or fewer\n")
