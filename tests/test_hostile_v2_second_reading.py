"""Hostile input against what version 2 added: contracts (§2 grammar and limits, §3 kinds), traces
with the §1 fields, `convert` / `--input-format` (§7, §10 points 26-36), `lint` (§4), `stability`
(§5), `mutate` (§6) and `check --partial` (§0).

The standard (developers' guide; v1 D4; §10 points 50, 55, 56): bad input gets ONE clear, escaped
line on stderr naming the file and line or JSON path, exit 2, nothing on stdout, nothing half
written, bounded memory, no traceback, deterministic output.
"""
from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import cli_zygote

GIB = 1 << 30
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
V2_OK = {"version": 2, "name": "hostile", "rules": [
    {"id": "args", "kind": "tool_args", "tool": "refund", "match": {"order": {"$regex": "^A"}}}]}
TRACE_OK = ('{"seq":1,"type":"tool.call","tool":"refund","call_id":"c1","args":{"order":"A1"}}\n'
            '{"seq":2,"type":"tool.result","call_id":"c1","ok":true,"result":{"paid":1}}\n'
            '{"seq":3,"type":"run.completed","status":"completed","output":{"total":1}}\n')


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (GIB, GIB))


def run(cwd: Path, *args: str, stdin: bytes | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The CLI in a subprocess under a 1 GiB address-space cap and a timeout (an endless loop fails)."""
    env = {**os.environ, "NO_COLOR": "1"}
    proc = cli_zygote.run_python(["-m", "agent_invariants", *args], cwd, stdin, env, timeout, address_space=GIB)
    return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode("utf-8", "replace"),
                                       proc.stderr.decode("utf-8", "replace"))


def clean_stderr(result: subprocess.CompletedProcess[str]) -> list[str]:
    """No traceback, bounded, escaped: the stderr lines."""
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert len(result.stderr.encode()) < 2000, result.stderr[:3000]
    lines = result.stderr.splitlines()
    for line in lines:
        assert not CONTROL.search(line), repr(line)
    return lines


def refused(result: subprocess.CompletedProcess[str], name: str, *, located: bool = True) -> str:
    """Exit 2, empty stdout, exactly one stderr line naming `name` (and, when `located`, a line
    number `name:N` or a JSON path `$...`)."""
    lines = clean_stderr(result)
    assert result.returncode == 2, (result.returncode, result.stderr, result.stdout[:500])
    assert result.stdout == "", result.stdout[:500]
    assert len(lines) == 1, lines
    line = lines[0]
    assert name in line, line
    if located:
        assert re.search(re.escape(name) + r":\d+|line \d+", line) or "$" in line, line
    return line


def verdict_or_refused(result: subprocess.CompletedProcess[str], name: str) -> None:
    """Spec silent on validity: either a verdict (exit 0/1) or a clean refusal."""
    if result.returncode == 2:
        refused(result, name)
    else:
        clean_stderr(result)
        assert result.returncode in (0, 1), (result.returncode, result.stderr)


def hops(count: int) -> dict[str, Any]:
    """`count` nested `$from_result` references, each inside the previous one's `where`."""
    node: dict[str, Any] = {"$from_result": {"tool": "t"}}
    for _ in range(count - 1):
        node = {"$from_result": {"tool": "t", "where": {"a": node}}}
    return node


def contract_with(match: Any, **rule: Any) -> dict[str, Any]:
    base = {"id": "args", "kind": "tool_args", "tool": "refund", "match": match}
    return {"version": 2, "name": "hostile", "rules": [{**base, **rule}]}


def nested(depth: int, leaf: Any) -> Any:
    value = leaf
    for _ in range(depth):
        value = {"k": value}
    return value


def check(tmp: Path, contract: Any, trace: str | bytes = TRACE_OK, *extra: str) -> subprocess.CompletedProcess[str]:
    c = tmp / "c.json"
    c.write_text(contract if isinstance(contract, str) else json.dumps(contract), encoding="utf-8")
    t = tmp / "t.jsonl"
    if isinstance(trace, bytes):
        t.write_bytes(trace)
    else:
        t.write_text(trace, encoding="utf-8")
    return run(tmp, "check", "-c", "c.json", "-t", "t.jsonl", "--format", "json", *extra)


# -- §2 grammar and limits: every bad contract is a load error naming its JSON path ---------------

BAD_TREES: dict[str, Any] = {
    # §2 "Limits: depth ≤ 32"
    "depth_33": {"order": nested(33, "A")},
    # §2 "≤ 10k nodes"
    "nodes_10001": {"order": {"$any_of": [{"k": list(range(5001))}, {"k": list(range(5001))}]}},
    # §10.10 "no backreferences"
    "regex_backreference": {"order": {"$regex": "(a)\\1"}},
    # §10.10 "no ... lookaround"
    "regex_lookahead": {"order": {"$regex": "(?=a)a"}},
    "regex_lookbehind": {"order": {"$regex": "(?<!b)a"}},
    # §10.10 "atomic/possessive groups or conditionals"
    "regex_possessive": {"order": {"$regex": "a++"}},
    "regex_atomic": {"order": {"$regex": "(?>a)"}},
    # §2 "$regex ... ≤ 500 chars"
    "regex_501": {"order": {"$regex": "a" * 501}},
    # §10.10 "its operand must be a literal string"
    "regex_number": {"order": {"$regex": 5}},
    "regex_reference": {"order": {"$regex": {"$arg": "x"}}},
    # §2 "$gt $gte $lt $lte: finite numbers only; booleans and "100" never compare" (bad operands)
    "gt_string": {"amount": {"$gt": "100"}},
    "lt_bool": {"amount": {"$lt": True}},
    "gte_overflow": '{"amount": {"$gte": 1e400}}',
    "lte_nan": '{"amount": {"$lte": NaN}}',
    "gt_infinity": '{"amount": {"$gt": Infinity}}',
    # §2 "Unknown $ keys ... are load errors"
    "unknown_dollar": {"order": {"$regexp": "a"}},
    # §2 "mixed keys"
    "mixed_keys": {"order": {"$regex": "a", "x": 1}},
    # §2 "$in: ≤ 1000 values"
    "in_1001": {"order": {"$in": list(range(1001))}},
    "in_not_list": {"order": {"$in": "A1"}},
    # §2 "$any_of: 2..20 branches"
    "any_of_1": {"order": {"$any_of": ["A1"]}},
    "any_of_21": {"order": {"$any_of": [str(i) for i in range(21)]}},
    # §10.11 "$exists (boolean operand) ... a load error anywhere else (root, array element,
    # $contains operand ...)"
    "exists_root": {"$exists": True},
    "exists_in_array": {"items": [{"$exists": True}]},
    "exists_in_contains": {"items": {"$contains": {"$exists": True}}},
    "exists_not_bool": {"order": {"$exists": "yes"}},
    # §2 "$from_result ... call_index ... cannot be combined with where"
    "call_index_with_where": {"amount": {"$from_result": {"tool": "get", "call_index": 0,
                                                          "where": {"id": "A"}}}},
    # §2 "At most 4 nested hops"
    "hops_5": {"amount": hops(6)},
    # §10.12 "$arg ... load errors in ... find"
    "arg_in_find": {"amount": {"$from_result": {"tool": "get", "path": "items",
                                                "find": {"id": {"$arg": "order"}}}}},
    # §10.13 '"" is not a valid path'
    "empty_path": {"amount": {"$from_result": {"tool": "get", "path": ""}}},
}


@pytest.mark.parametrize("name", sorted(BAD_TREES))
def test_bad_match_tree_is_one_line_naming_the_path(tmp_path: Path, name: str) -> None:
    """§2 "Unknown $ keys, mixed keys and bad operands are load errors ... Limits: depth ≤ 32, ≤ 10k
    nodes"; §10.10-13; D4: one line naming the JSON path, exit 2."""
    tree = BAD_TREES[name]
    if isinstance(tree, str):
        text = '{"version":2,"name":"hostile","rules":[{"id":"args","kind":"tool_args","tool":"refund",' \
               f'"match":{tree}}}]}}'
        line = refused(check(tmp_path, text), "c.json")
    else:
        line = refused(check(tmp_path, contract_with(tree)), "c.json")
    if name not in ("lte_nan", "gt_infinity", "gte_overflow"):  # refused as JSON: line/column
        assert "$.rules[0]" in line, line


def test_depth_32_is_accepted(tmp_path: Path) -> None:
    """§2 "depth ≤ 32": a tree at the limit loads (the call's args do not match: a verdict)."""
    depth = 30  # match object + "order" + 30 nested objects stays within 32 levels
    result = check(tmp_path, contract_with({"order": nested(depth, "A")}))
    clean_stderr(result)
    assert result.returncode == 1, result.stderr


def test_regex_of_500_chars_is_accepted(tmp_path: Path) -> None:
    """§2 "$regex ... ≤ 500 chars": exactly 500 loads; "A1" does not contain 500 a's: exit 1."""
    result = check(tmp_path, contract_with({"order": {"$regex": "a" * 500}}))
    clean_stderr(result)
    assert result.returncode == 1, result.stderr


def test_in_of_1000_values_is_accepted(tmp_path: Path) -> None:
    """§2 "$in: ≤ 1000 values": exactly 1000 loads and "A1" is among them: pass."""
    values = ["A1", *[f"x{i}" for i in range(999)]]
    result = check(tmp_path, contract_with({"order": {"$in": values}}))
    clean_stderr(result)
    assert result.returncode == 0, result.stderr


def test_from_output_in_output_rule_is_a_load_error(tmp_path: Path) -> None:
    """§2 "$from_output ... In output rules it is a load error"."""
    doc = {"version": 2, "name": "h", "rules": [
        {"id": "o", "kind": "output_match", "match": {"total": {"$from_output": "total"}}}]}
    assert "$.rules[0]" in refused(check(tmp_path, doc), "c.json")


def test_arg_in_output_rule_is_a_load_error(tmp_path: Path) -> None:
    """§3.7 "$arg and $from_output are load errors here" (output_match)."""
    doc = {"version": 2, "name": "h", "rules": [
        {"id": "o", "kind": "output_match", "match": {"total": {"$arg": "x"}}}]}
    assert "$.rules[0]" in refused(check(tmp_path, doc), "c.json")


def test_reference_in_matcher_args_is_a_load_error(tmp_path: Path) -> None:
    """§2 "v1 kinds under v2 ... args: a match tree without references"."""
    doc = {"version": 2, "name": "h", "rules": [
        {"id": "e", "kind": "deny_event", "match": {"type": "tool.call", "args": {"x": {"$arg": "y"}}}}]}
    assert "$.rules[0]" in refused(check(tmp_path, doc), "c.json")


def test_reference_in_condition_is_a_load_error(tmp_path: Path) -> None:
    """§10.12 "both are load errors in output rules, conditions, matchers and find"."""
    doc = {"version": 2, "name": "h", "rules": [
        {"id": "o", "kind": "output_match", "match": {"total": 1},
         "when": {"path": "total", "matches": {"$from_output": "total"}}}]}
    assert "$.rules[0]" in refused(check(tmp_path, doc), "c.json")


def test_new_kind_in_version_1_contract_is_refused(tmp_path: Path) -> None:
    """§0 "A version: 1 contract is validated exactly as Node does, so new kinds or keys exit 2"."""
    doc = {**V2_OK, "version": 1}
    refused(check(tmp_path, doc), "c.json")


def test_deep_contract_json_is_refused_cleanly(tmp_path: Path) -> None:
    """Developers' guide: nesting 10,000 deep in a contract is bad input (§2 depth ≤ 32), not a
    RecursionError."""
    text = json.dumps(contract_with({"order": "A"})).replace('"A"', "[" * 10_000 + "]" * 10_000)
    refused(check(tmp_path, text), "c.json", located=False)  # a whole-file property


CONTRACT_BYTES: dict[str, bytes] = {
    "bom": b"\xef\xbb\xbf" + json.dumps(V2_OK).encode(),  # v1 §2.5: a BOM is a JSON error
    "utf16": json.dumps(V2_OK).encode("utf-16"),
    "nul": json.dumps(V2_OK).encode().replace(b'"hostile"', b'"ho\x00stile"'),
    "garbage": bytes(range(256)) * 4,
    "empty": b"",
    "truncated": json.dumps(V2_OK).encode()[:-3],
    "invalid_utf8": json.dumps(V2_OK).encode().replace(b"hostile", b"host\xff\xfeile"),
}


@pytest.mark.parametrize("name", sorted(CONTRACT_BYTES))
def test_undecodable_contract_is_refused(tmp_path: Path, name: str) -> None:
    """v1 §2.5 loader failure modes (all exit 2) and D4: one line naming c.json and where."""
    (tmp_path / "c.json").write_bytes(CONTRACT_BYTES[name])
    (tmp_path / "t.jsonl").write_text(TRACE_OK, encoding="utf-8")
    result = run(tmp_path, "check", "-c", "c.json", "-t", "t.jsonl")
    # the empty file and the BOM are whole-file properties: naming the file is enough
    refused(result, "c.json", located=name not in ("empty", "bom"))


def test_contract_lone_surrogate_name_gives_no_traceback(tmp_path: Path) -> None:
    """Spec silent on lone surrogates (JSON.parse accepts "\\ud800"): a verdict or a clean refusal,
    and the json report stays valid UTF-8 either way."""
    text = json.dumps(V2_OK).replace('"hostile"', '"bad\\ud800name"')
    verdict_or_refused(check(tmp_path, text), "c.json")


def test_contract_duplicate_keys_gives_no_traceback(tmp_path: Path) -> None:
    """Spec silent on duplicate keys (Node's JSON.parse keeps the last): verdict or clean refusal."""
    text = json.dumps(V2_OK).replace('"name": "hostile"', '"name": "a", "name": "b"')
    verdict_or_refused(check(tmp_path, text), "c.json")


# -- §1 event fields under version 2 (§10.16: file:line: $.field, exit 2) --------------------------

BAD_FIELDS: dict[str, tuple[str, str]] = {
    "args_array": ('{"seq":1,"type":"tool.call","tool":"refund","args":[1]}', "$.args"),
    "args_null": ('{"seq":1,"type":"tool.call","tool":"refund","args":null}', "$.args"),
    "duration_negative": ('{"seq":1,"type":"tool.result","duration_ms":-1}', "$.duration_ms"),
    "duration_bool": ('{"seq":1,"type":"tool.result","duration_ms":true}', "$.duration_ms"),
    "duration_string": ('{"seq":1,"type":"tool.result","duration_ms":"5"}', "$.duration_ms"),
    "duration_overflow": ('{"seq":1,"type":"tool.result","duration_ms":1e400}', "$.duration_ms"),
    "status_empty": ('{"seq":1,"type":"run.completed","status":""}', "$.status"),
    "status_101": ('{"seq":1,"type":"run.completed","status":"' + "s" * 101 + '"}', "$.status"),
    "approver_null": ('{"seq":1,"type":"approval.granted","approver":null}', "$.approver"),
    "reason_501": ('{"seq":1,"type":"control.stop","reason":"' + "r" * 501 + '"}', "$.reason"),
    "reason_number": ('{"seq":1,"type":"run.failed","reason":7}', "$.reason"),
}


@pytest.mark.parametrize("name", sorted(BAD_FIELDS))
def test_bad_v2_event_field_names_line_and_field(tmp_path: Path, name: str) -> None:
    """§10.16 "each new field is checked on every event that carries it ... with a file:line:
    $.field error"."""
    event, field = BAD_FIELDS[name]
    line = refused(check(tmp_path, V2_OK, TRACE_OK + event.replace('"seq":1', '"seq":9') + "\n"), "t.jsonl")
    assert "t.jsonl:4" in line and field in line, line


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_json_number_in_trace_is_refused(tmp_path: Path, literal: str) -> None:
    """v1 §3.2 "NaN, etc. all fail" (as line N); §1 duration_ms "finite ≥ 0"."""
    bad = f'{{"seq":9,"type":"run.completed","duration_ms":{literal}}}\n'
    assert "t.jsonl:4" in refused(check(tmp_path, V2_OK, TRACE_OK + bad), "t.jsonl")


def test_null_output_and_result_are_valid(tmp_path: Path) -> None:
    """§1 "Only result and output may be null"."""
    trace = TRACE_OK.replace('"result":{"paid":1}', '"result":null').replace('"output":{"total":1}', '"output":null')
    result = check(tmp_path, V2_OK, trace)
    clean_stderr(result)
    assert result.returncode == 0, result.stderr


def test_cr_only_line_ends_are_one_bad_line(tmp_path: Path) -> None:
    """v1 §3.2 "a lone \\r is not a separator": three events on one physical line → line 1."""
    assert "t.jsonl:1" in refused(check(tmp_path, V2_OK, TRACE_OK.replace("\n", "\r")), "t.jsonl")


def test_nul_byte_in_trace_line_is_refused(tmp_path: Path) -> None:
    """D4: a NUL byte outside a string is malformed JSON on line 2."""
    trace = TRACE_OK.replace('{"seq":2', '\x00{"seq":2')
    assert "t.jsonl:2" in refused(check(tmp_path, V2_OK, trace), "t.jsonl")


def test_utf16_trace_is_refused(tmp_path: Path) -> None:
    """D4: a bad encoding is exit 2 naming the file and line."""
    refused(check(tmp_path, V2_OK, TRACE_OK.encode("utf-16")), "t.jsonl")


def test_bom_trace_is_read(tmp_path: Path) -> None:
    """v1 §3.2 "Trim the whole text (JS trim: also strips a leading BOM)": a verdict."""
    result = check(tmp_path, V2_OK, b"\xef\xbb\xbf" + TRACE_OK.encode())
    clean_stderr(result)
    assert result.returncode == 0, result.stderr


def test_fifty_megabyte_line_is_refused_with_bounded_memory(tmp_path: Path) -> None:
    """v1 §3.2 "A line over 1 MiB → Trace line N exceeds 1 MiB"; memory stays bounded."""
    big = '{"seq":1,"type":"x","data":{"s":"' + "a" * 50_000_000 + '"}}\n'
    assert "t.jsonl:1" in refused(check(tmp_path, V2_OK, big), "t.jsonl")


def test_million_blank_lines_then_events_is_a_verdict(tmp_path: Path) -> None:
    """v1 §3.2 "skip empty lines"; event_index ignores them; a verdict, in time and memory."""
    result = check(tmp_path, V2_OK, "\n" * 1_000_000 + TRACE_OK)
    clean_stderr(result)
    assert result.returncode == 0, result.stderr


def test_lone_surrogate_in_trace_gives_no_traceback(tmp_path: Path) -> None:
    """Spec silent on lone surrogates inside strings: a verdict or a clean refusal (never a
    UnicodeEncodeError while printing the report)."""
    trace = TRACE_OK.replace('"order":"A1"', '"order":"A\\ud800"')
    verdict_or_refused(check(tmp_path, V2_OK, trace), "t.jsonl")


def test_deep_output_in_trace_gives_no_traceback(tmp_path: Path) -> None:
    """Developers' guide: nesting 10,000 deep is bad input or a verdict, never a RecursionError."""
    deep = "[" * 10_000 + "]" * 10_000
    trace = TRACE_OK.replace('"output":{"total":1}', f'"output":{deep}')
    verdict_or_refused(check(tmp_path, V2_OK, trace), "t.jsonl")


def test_duplicate_keys_in_event_give_no_traceback(tmp_path: Path) -> None:
    """Spec silent on duplicate keys in an event: a verdict or a clean refusal."""
    trace = TRACE_OK.replace('"status":"completed"', '"status":"completed","status":""')
    verdict_or_refused(check(tmp_path, V2_OK, trace), "t.jsonl")


# -- files that are not files ----------------------------------------------------------------------

DEVICES = ["/dev/null", "/dev/zero", "/dev/urandom", "missing.jsonl", "folder"]


def command_for(kind: str, target: str) -> list[str]:
    return {
        "check_trace": ["check", "-c", "c.json", "-t", target],
        "partial_trace": ["check", "--partial", "-c", "c.json", "-t", target],
        "check_contract": ["check", "-c", target, "-t", "t.jsonl"],
        "lint": ["lint", "-c", target],
        "stability": ["stability", target, "t.jsonl"],
        "mutate_trace": ["mutate", "-c", "c.json", "-t", target],
        "mutate_contract": ["mutate", "-c", target, "-t", "t.jsonl"],
        "mutate_control": ["mutate", "-c", "c.json", "-t", "t.jsonl", "--control", target],
        "convert_otel": ["convert", "--from", "otel", target],
        "convert_auto": ["convert", "--from", "auto", target],
        "convert_mcp": ["convert", "--from", "mcp-log", target],
        "input_format": ["check", "-c", "c.json", "-t", target, "--input-format", "openinference"],
        "profile": ["convert", "--from", "otel", "o.jsonl", "--profile", target],
    }[kind]


KINDS = ["check_trace", "partial_trace", "check_contract", "lint", "stability", "mutate_trace",
         "mutate_contract", "mutate_control", "convert_otel", "convert_auto", "convert_mcp",
         "input_format", "profile"]


def setup_inputs(tmp: Path) -> None:
    (tmp / "c.json").write_text(json.dumps(V2_OK), encoding="utf-8")
    (tmp / "t.jsonl").write_text(TRACE_OK, encoding="utf-8")
    (tmp / "o.jsonl").write_text(json.dumps(otlp([span("e", None, "invoke_agent")])) + "\n", encoding="utf-8")
    (tmp / "folder").mkdir()


DEVICE_CASES = sorted({(kind, DEVICES[(i + shift) % len(DEVICES)])
                       for i, kind in enumerate(KINDS) for shift in (0, 2)})
"""Every command and every kind of non-file, each command with two of them (for run time)."""


@pytest.mark.parametrize(("kind", "target"), DEVICE_CASES)
def test_device_folder_or_missing_file_is_refused(tmp_path: Path, kind: str, target: str) -> None:
    """Developers' guide: missing files, devices (/dev/zero, /dev/urandom) and a folder given as a
    file get one line naming it, exit 2, bounded memory, no hang. /dev/null is an empty file: a
    contract or profile that is empty is invalid; an empty trace is zero events (v1 §3.2) and
    "fewer than 2 reporting traces" is exit 2 for stability (§5)."""
    setup_inputs(tmp_path)
    result = run(tmp_path, *command_for(kind, target))
    if target == "/dev/null" and kind in ("check_trace", "partial_trace", "mutate_trace"):
        # zero events: a verdict for check (the tool_args rule is vacuous), mutate has nothing
        # to mutate (spec silent: a report or a clean refusal)
        clean_stderr(result)
        if kind != "mutate_trace":
            assert result.returncode == 0, result.stderr
        return
    if target == "/dev/null" and kind in ("convert_otel", "convert_auto", "convert_mcp", "input_format", "stability"):
        # spec silent on an empty import: a clean refusal or an (empty) conversion
        clean_stderr(result)
        assert result.returncode in (0, 1, 2)
        assert len(result.stderr.splitlines()) <= 1
        return
    refused(result, target, located=False)  # a size limit or "missing" is about the whole file


def test_fifo_trace_is_read_or_refused_without_hanging(tmp_path: Path) -> None:
    """Developers' guide: a FIFO is bad input or read once; never a hang or a traceback."""
    setup_inputs(tmp_path)
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)

    def feed() -> None:
        try:
            with open(fifo, "wb") as handle:
                handle.write(b"\x89garbage\x00\xff\n" * 1000)
        except OSError:
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    result = run(tmp_path, "check", "-c", "c.json", "-t", "pipe.jsonl")
    if writer.is_alive():  # the CLI refused without opening: release the writer
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        os.close(fd)
    writer.join(5)
    refused(result, "pipe.jsonl", located=False)


def test_closed_stdout_gives_no_traceback(tmp_path: Path) -> None:
    """Developers' guide: a closed pipe is no traceback and at most one stderr line."""
    setup_inputs(tmp_path)
    read_end, write_end = os.pipe()
    os.close(read_end)
    env = {**os.environ, "NO_COLOR": "1"}
    proc = subprocess.run([sys.executable, "-m", "agent_invariants", "convert", "--from", "otel", "o.jsonl"],
                          cwd=tmp_path, stdout=write_end, stderr=subprocess.PIPE, env=env, timeout=60,
                          preexec_fn=_cap_memory)
    os.close(write_end)
    stderr = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in stderr, stderr
    assert len(stderr.splitlines()) <= 1, stderr


# -- §7 importers ------------------------------------------------------------------------------

def attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return {"key": key, "value": value}
    return {"key": key, "value": {"stringValue": value}}


def span(span_id: str, parent: str | None, op: str, *, start: int = 1_000, end: int = 2_000,
         extra: list[dict[str, Any]] | None = None, trace: str = "0" * 31 + "1") -> dict[str, Any]:
    """An OTLP span (hex ids padded to 16 digits), GenAI operation `op`."""
    item: dict[str, Any] = {"traceId": trace, "spanId": span_id.rjust(16, "0"), "name": op,
                            "startTimeUnixNano": str(start), "endTimeUnixNano": str(end),
                            "attributes": [attr("gen_ai.operation.name", op), *(extra or [])]}
    if parent is not None:
        item["parentSpanId"] = parent.rjust(16, "0")
    return item


def tool_span(span_id: str, parent: str, **kwargs: Any) -> dict[str, Any]:
    extra = [attr("gen_ai.tool.name", "refund"), attr("gen_ai.tool.call.id", f"c{span_id}"),
             attr("gen_ai.tool.call.arguments", '{"order":"A1"}')]
    return span(span_id, parent, "execute_tool", extra=extra, **kwargs)


def otlp(spans: list[dict[str, Any]]) -> dict[str, Any]:
    return {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {"name": "t"},
                                                                                "spans": spans}]}]}


def convert(tmp: Path, fmt: str, text: str | bytes, *extra: str) -> subprocess.CompletedProcess[str]:
    path = tmp / "in.jsonl"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return run(tmp, "convert", "--from", fmt, "in.jsonl", *extra)


def otlp_line(spans: list[dict[str, Any]]) -> str:
    return json.dumps(otlp(spans)) + "\n"


def test_otel_cyclic_parents_do_not_hang(tmp_path: Path) -> None:
    """§7 "The root becomes run.start ..." — with spans that are each other's parent there is no
    root; spec silent: a conversion (earliest span as root) or a clean refusal, never a hang."""
    spans = [span("a", "b", "invoke_agent"), span("b", "a", "invoke_agent"), tool_span("c", "a")]
    verdict_or_refused(convert(tmp_path, "otel", otlp_line(spans)), "in.jsonl")


def test_otel_self_parent_does_not_hang(tmp_path: Path) -> None:
    """As above, a span that is its own parent."""
    verdict_or_refused(convert(tmp_path, "otel", otlp_line([span("a", "a", "invoke_agent")])), "in.jsonl")


def test_otel_duplicate_span_ids_give_no_traceback(tmp_path: Path) -> None:
    """Spec silent on duplicate span ids: a conversion or a clean refusal."""
    spans = [span("a", None, "invoke_agent"), tool_span("c", "a"), tool_span("c", "a", start=1_500)]
    verdict_or_refused(convert(tmp_path, "otel", otlp_line(spans)), "in.jsonl")


def test_otel_ids_in_both_encodings_are_one_tree(tmp_path: Path) -> None:
    """§10.30 "ids as hex or base64": a child naming its root's hex id in base64 is the same span,
    so the run is one: start, call, result, completed."""
    root = span("a", None, "invoke_agent")
    child = tool_span("c", "a")
    child["parentSpanId"] = "AAAAAAAAAAo="  # base64 of 00000000 0000000a
    result = convert(tmp_path, "otel", otlp_line([root, child]))
    clean_stderr(result)
    assert result.returncode == 0, result.stderr
    types = [json.loads(line)["type"] for line in result.stdout.splitlines() if line.strip()]
    assert types == ["run.start", "tool.call", "tool.result", "run.completed"], types


def test_otel_end_before_start_gives_no_traceback(tmp_path: Path) -> None:
    """Clock going backwards: spec silent for convert (a negative duration is "unresolved" in
    §3.6): a conversion or a clean refusal."""
    spans = [span("a", None, "invoke_agent"), tool_span("c", "a", start=1_900, end=1_100)]
    verdict_or_refused(convert(tmp_path, "otel", otlp_line(spans)), "in.jsonl")


def test_otel_time_beyond_year_9999_is_refused(tmp_path: Path) -> None:
    """§7 "time in UTC ISO" (v1 §3.3 YYYY has four digits): a time after 9999 cannot be written,
    so it is bad input naming the line, not an OverflowError."""
    spans = [span("a", None, "invoke_agent", start=10**30, end=10**30 + 5)]
    refused(convert(tmp_path, "otel", otlp_line(spans)), "in.jsonl")


def test_otel_negative_time_gives_no_traceback(tmp_path: Path) -> None:
    """Spec silent on negative clocks: a conversion (before 1970) or a clean refusal."""
    spans = [span("a", None, "invoke_agent", start=-5_000, end=-1_000)]
    verdict_or_refused(convert(tmp_path, "otel", otlp_line(spans)), "in.jsonl")


def test_otel_time_with_fraction_is_refused(tmp_path: Path) -> None:
    """§7 "taken from the integer source clock": a non-integer clock is bad input."""
    root = span("a", None, "invoke_agent")
    root["startTimeUnixNano"] = "12.5"
    refused(convert(tmp_path, "otel", otlp_line([root])), "in.jsonl")


def test_otel_attribute_nested_10000_deep_gives_no_traceback(tmp_path: Path) -> None:
    """Developers' guide: nested attribute values 10,000 deep are bad input or converted, never a
    RecursionError."""
    deep = '{"kvlistValue":{"values":[{"key":"k","value":' * 10_000 + '{"stringValue":"x"}' + "}]}}" * 10_000
    root = span("a", None, "invoke_agent", extra=[attr("deep", {"stringValue": "PLACEHOLDER"})])
    text = otlp_line([root]).replace('{"stringValue": "PLACEHOLDER"}', deep)
    verdict_or_refused(convert(tmp_path, "otel", text), "in.jsonl")


def test_otel_wrong_types_name_the_json_path(tmp_path: Path) -> None:
    """D4: wrong types name the line and JSON path."""
    text = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": 7}]}]}) + "\n"
    line = refused(convert(tmp_path, "otel", text), "in.jsonl")
    assert "in.jsonl:1" in line, line


FORMATS = ["otel", "openinference", "openai-agents", "langsmith", "mcp-log", "auto"]
CONTENTS = ["garbage", "nan", "array_line", "utf16", "big_line"]
FORMAT_CASES = sorted({(fmt, CONTENTS[(i + shift) % len(CONTENTS)])
                       for i, fmt in enumerate(FORMATS) for shift in (0, 1, 3)})


@pytest.mark.parametrize(("fmt", "content"), FORMAT_CASES)
def test_each_format_refuses_malformed_input(tmp_path: Path, fmt: str, content: str) -> None:
    """§7 every importer, and D4: malformed records are one line naming file:line, exit 2."""
    data = {
        "garbage": b'\x89PNG\r\n\x1a\n\x00\x00\xff\xfe' * 50,
        "nan": b'{"x": NaN}\n',
        "array_line": b"[1, 2, 3]\n",
        "utf16": '{"resourceSpans": []}\n'.encode("utf-16"),
        "big_line": b'{"x":"' + b"a" * 3_000_000 + b'"}\n',
    }[content]
    # spec silent: openai-agents skips records of kinds it does not map (saying so), so a lone
    # array line leaves "no run", a whole-file refusal
    refused(convert(tmp_path, fmt, data), "in.jsonl", located=(fmt, content) != ("openai-agents", "array_line"))


@pytest.mark.parametrize("fmt", ["otel", "openinference", "openai-agents", "langsmith", "mcp-log", "auto"])
def test_each_format_refuses_an_empty_object(tmp_path: Path, fmt: str) -> None:
    """§7: a record that is not of the format (`{}`) is bad input naming line 1 (auto cannot sniff
    it). Spec silent on the wording: "holds no run" about the whole file is a reasonable reading."""
    refused(convert(tmp_path, fmt, "{}\n"), "in.jsonl", located=False)


@pytest.mark.parametrize("fmt", ["otel", "openinference"])
def test_a_file_of_log_records_alone_holds_no_run(tmp_path: Path, fmt: str) -> None:
    """The logs file of an OTLP file exporter, given for its traces file: its records name a
    trace, but a trace of no span is no run (it was a run of no events, which every contract that
    requires nothing passed)."""
    record = {"timeUnixNano": "1700000000000000000", "traceId": "0af7651916cd43dd8448eb211c80319c",
              "spanId": "b7ad6b7169203331", "eventName": "gen_ai.client.inference.operation.details",
              "body": {"stringValue": "x"}}
    text = json.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": [record]}]}]}) + "\n"
    line = refused(convert(tmp_path, fmt, text), "in.jsonl", located=False)
    assert "holds no run: its record is of a kind the mapping does not use (log records whose spans are in " \
        "another file? join the files first, e.g. cat)" in line, line   # (said so since a later reading)
    (tmp_path / "c.json").write_text(json.dumps({"version": 1, "name": "c", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]}))
    every = run(tmp_path, "check", "-c", "c.json", "-t", "in.jsonl", "--input-format", fmt, "--run", "all")
    assert every.returncode == 2, every.stdout   # (--run all: no run checked is no pass either)
    assert "in.jsonl: holds no run: its record is of a kind the mapping does not use (log records whose spans " \
        "are in another file? join the files first, e.g. cat)" in every.stderr, every.stderr


@pytest.mark.parametrize("fmt", ["otel", "openinference"])
def test_a_file_of_metrics_alone_holds_no_run_and_is_not_taken_for_log_records(tmp_path: Path, fmt: str) -> None:
    """The metrics file of an OTLP file exporter holds no run either; the hint for a file of log
    records (their spans in another file) does not fit it: it says another signal is not read."""
    metric = {"name": "gen_ai.client.token.usage", "sum": {"dataPoints": [{"asInt": "3"}]}}
    text = json.dumps({"resourceMetrics": [{"scopeMetrics": [{"metrics": [metric]}]}]}) + "\n"
    line = refused(convert(tmp_path, fmt, text * 2), "in.jsonl", located=False)
    assert "holds no run: its 2 records are of kinds the mapping does not use (OTLP records of another signal, " \
        "such as metrics? the spans' export is what it reads)" in line, line
    assert "log records" not in line


def _agent_trace(trace: str) -> str:
    """An OTLP line of one trace: an agent span around one `lookup` tool span."""
    def attribute(key: str, value: str) -> dict[str, Any]:
        return {"key": key, "value": {"stringValue": value}}

    spans = [{"traceId": trace, "spanId": "00000000000000a1", "name": "invoke_agent desk", "startTimeUnixNano": "1000",
              "endTimeUnixNano": "9000", "attributes": [attribute("gen_ai.operation.name", "invoke_agent")]},
             {"traceId": trace, "spanId": "00000000000000c3", "parentSpanId": "00000000000000a1",
              "name": "execute_tool lookup", "startTimeUnixNano": "4000", "endTimeUnixNano": "5000",
              "attributes": [attribute("gen_ai.operation.name", "execute_tool"),
                             attribute("gen_ai.tool.name", "lookup"), attribute("gen_ai.tool.call.id", "call_1")]}]
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}) + "\n"


@pytest.mark.parametrize("extra", [[], ["--out-dir", "out"]])
def test_convert_refuses_a_file_of_log_records_beside_the_file_of_their_spans(tmp_path: Path,
                                                                              extra: list[str]) -> None:
    """A Collector's file exporter writing each signal to its own file: `convert spans logs` reads
    each file on its own, so the logs' records, whose run is in the spans file, joined no run and
    were dropped (an approval the convention made of one vanished, the run converted with a count of
    skipped records). The file that holds no run of its own is refused, saying to join the files;
    joined, the approval is there."""
    trace = "0af7651916cd43dd8448eb211c80319c"
    (tmp_path / "spans.jsonl").write_text(_agent_trace(trace), encoding="utf-8")
    grant = {"timeUnixNano": "3000", "traceId": trace, "spanId": "00000000000000a1", "eventName": "approval.granted",
             "attributes": [{"key": "ainv.approval_scope", "value": {"stringValue": "lookup"}}]}
    (tmp_path / "logs.jsonl").write_text(json.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": [grant]}]}]})
                                         + "\n", encoding="utf-8")
    for inputs in (["spans.jsonl", "logs.jsonl"], ["logs.jsonl", "spans.jsonl"]):
        line = refused(run(tmp_path, "convert", "--from", "otel", *inputs, *extra), "logs.jsonl", located=False)
        assert "holds no run of its own" in line and "join the files" in line, line
        assert not (tmp_path / "out").exists()
    joined_text = b"".join((tmp_path / name).read_bytes() for name in ("spans.jsonl", "logs.jsonl"))
    (tmp_path / "both.jsonl").write_bytes(joined_text)
    joined = run(tmp_path, "convert", "--from", "otel", "both.jsonl")
    assert joined.returncode == 0, joined.stderr
    assert [event["type"] for event in map(json.loads, joined.stdout.splitlines())] == [
        "run.start", "approval.granted", "tool.call", "tool.result", "run.completed"]


def test_convert_run_id_is_taken_from_whichever_input_holds_it(tmp_path: Path) -> None:
    """`convert --run ID a b`: the run is in one input of several. It was refused by the other
    (`a.jsonl: has no run …`); an id that no input holds lists the runs of them all."""
    first, second = "0af7651916cd43dd8448eb211c80319c", "1af7651916cd43dd8448eb211c80319c"
    (tmp_path / "a.jsonl").write_text(_agent_trace(first), encoding="utf-8")
    (tmp_path / "b.jsonl").write_text(_agent_trace(second), encoding="utf-8")
    for wanted, source in ((first, "a.jsonl"), (second, "b.jsonl")):
        result = run(tmp_path, "convert", "--from", "otel", "a.jsonl", "b.jsonl", "--run", wanted)
        assert result.returncode == 0, result.stderr
        found = list(map(json.loads, result.stdout.splitlines()))
        assert {(event["run_id"], event["data"]["source"]["file"]) for event in found} == {(wanted, source)}
        assert len(found) == 4
    line = refused(run(tmp_path, "convert", "--from", "otel", "a.jsonl", "b.jsonl", "--run", "nope"), "'nope'",
                   located=False)
    assert f"their runs: {first}, {second}" in line, line


def test_otel_chat_messages_logged_in_a_record_of_the_chat_span_are_the_spans_own(tmp_path: Path) -> None:
    """The OpenTelemetry GenAI instrumentations' `event_only` content capture sets no messages on
    the chat span: they are on a `gen_ai.client.inference.operation.details` log record in it, as
    structured values. A tool the model asked for that no `execute_tool` span ran comes from them
    as from the span's own (§10 point 29): here `shell`, which the denied-tool rule must see; and a
    tool span without arguments of its own (the capture leaves them off) takes the model's."""
    trace = "0af7651916cd43dd8448eb211c80319c"

    def attribute(key: str, value: dict[str, Any]) -> dict[str, Any]:
        return {"key": key, "value": value}

    def text(value: str) -> dict[str, Any]:
        return {"stringValue": value}

    def kvlist(**members: dict[str, Any]) -> dict[str, Any]:
        return {"kvlistValue": {"values": [attribute(key, value) for key, value in members.items()]}}

    asked = {"arrayValue": {"values": [kvlist(role=text("assistant"), parts={"arrayValue": {"values": [
        kvlist(type=text("tool_call"), id=text("call_1"), name=text("shell"), arguments=kvlist(cmd=text("id"))),
        kvlist(type=text("tool_call"), id=text("call_2"), name=text("lookup"),
               arguments=kvlist(order=text("A1")))]}})]}}
    spans = [{"traceId": trace, "spanId": "00000000000000a1", "name": "invoke_agent desk", "startTimeUnixNano": "1000",
              "endTimeUnixNano": "9000", "attributes": [attribute("gen_ai.operation.name", text("invoke_agent"))]},
             {"traceId": trace, "spanId": "00000000000000b2", "parentSpanId": "00000000000000a1", "name": "chat m",
              "startTimeUnixNano": "2000", "endTimeUnixNano": "3000",
              "attributes": [attribute("gen_ai.operation.name", text("chat"))]},
             {"traceId": trace, "spanId": "00000000000000c3", "parentSpanId": "00000000000000a1",
              "name": "execute_tool lookup", "startTimeUnixNano": "4000", "endTimeUnixNano": "5000",
              "attributes": [attribute("gen_ai.operation.name", text("execute_tool")),
                             attribute("gen_ai.tool.name", text("lookup")),
                             attribute("gen_ai.tool.call.id", text("call_2"))]}]
    record = {"timeUnixNano": "3000", "traceId": trace, "spanId": "00000000000000b2",
              "eventName": "gen_ai.client.inference.operation.details",
              "attributes": [attribute("gen_ai.operation.name", text("chat")),
                             attribute("gen_ai.output.messages", asked)]}
    lines = [json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}),
             json.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": [record]}]}]})]
    result = convert(tmp_path, "otel", "\n".join(lines) + "\n")
    assert result.returncode == 0, result.stderr
    calls = [event for event in map(json.loads, result.stdout.splitlines()) if event["type"] == "tool.call"]
    assert [(call["tool"], call["call_id"], call["args"], call["data"]["source"].get("synthetic")) for call in calls] \
        == [("shell", "call_1", {"cmd": "id"}, True), ("lookup", "call_2", {"order": "A1"}, None)]   # (the args the
    # model gave the call: the tool span has none of its own under `event_only` capture)


@pytest.mark.parametrize("around", ["invoke_workflow", None])
def test_otel_agents_side_by_side_are_one_run_bounded_by_a_genai_span_around_them(tmp_path: Path,
                                                                                  around: str | None) -> None:
    """Two agent spans side by side: under a GenAI span (a workflow, LangGraph's graph) that span
    is the run; under a span of no convention (a server span around the process) the run is
    still from the first agent's start to the last one's end, which such a span does not move."""
    trace = "0af7651916cd43dd8448eb211c80319c"

    def span(span_id: str, parent: str | None, operation: str | None, start: int, end: int) -> dict[str, Any]:
        found: dict[str, Any] = {"traceId": trace, "spanId": span_id, "name": operation or "GET /agents",
                                 "startTimeUnixNano": str(start), "endTimeUnixNano": str(end), "attributes": []}
        if parent:
            found["parentSpanId"] = parent
        if operation:
            found["attributes"] = [{"key": "gen_ai.operation.name", "value": {"stringValue": operation}}]
        return found

    spans = [span("00000000000000a1", None, around, 1000, 9000),
             span("00000000000000b1", "00000000000000a1", "invoke_agent", 2000, 3000),
             span("00000000000000b2", "00000000000000a1", "invoke_agent", 4000, 5000)]
    result = convert(tmp_path, "otel", json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}) + "\n")
    assert result.returncode == 0, result.stderr
    found = list(map(json.loads, result.stdout.splitlines()))
    assert [event["type"] for event in found] == ["run.start", "run.completed"]
    assert [event["data"]["source"]["span_id"] for event in found] == (
        ["00000000000000a1", "00000000000000a1"] if around else ["00000000000000b1", "00000000000000b2"])


def test_otel_a_tool_step_beside_the_agent_span_is_inside_the_run(tmp_path: Path) -> None:
    """A tool span outside the agent span, the span around both left out of the export: the run
    goes from the first of them to the last (it ended with the agent span, before the call)."""
    trace = "0af7651916cd43dd8448eb211c80319c"
    spans = [{"traceId": trace, "spanId": span_id, "parentSpanId": "00000000000000ff", "name": name,
              "startTimeUnixNano": str(start), "endTimeUnixNano": str(end),
              "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": operation}},
                             {"key": "gen_ai.tool.name", "value": {"stringValue": "refund"}}]}
             for span_id, name, operation, start, end in [
                 ("00000000000000a1", "invoke_agent", "invoke_agent", 1000, 2000),
                 ("00000000000000b2", "execute_tool", "execute_tool", 3000, 4000)]]
    result = convert(tmp_path, "otel", json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}) + "\n")
    assert result.returncode == 0, result.stderr
    assert [event["type"] for event in map(json.loads, result.stdout.splitlines())] == [
        "run.start", "tool.call", "tool.result", "run.completed"]


def mcp(ts: str, session: str, direction: str, msg: dict[str, Any]) -> str:
    return json.dumps({"ts": ts, "session": session, "dir": direction, "msg": msg}) + "\n"


def init(session: str, second: int) -> str:
    return mcp(f"2026-01-01T00:00:0{second}Z", session, "c2s",
               {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})


def test_mcp_interleaved_sessions_need_run_or_out_dir(tmp_path: Path) -> None:
    """§7 "With several runs in the input, --run or --out-dir is required; otherwise exit 2 and
    list the run ids"; §10.34 "the message lists the run ids and both options"."""
    text = init("s1", 1) + init("s2", 2) + mcp("2026-01-01T00:00:03Z", "s1", "c2s", {
        "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "refund", "arguments": {}}})
    line = refused(convert(tmp_path, "mcp-log", text), "in.jsonl", located=False)
    assert "s1" in line and "s2" in line and "--run" in line and "--out-dir" in line, line


@pytest.mark.parametrize("direction", ["x2y", "", "C2S"])
def test_mcp_unknown_direction_names_line_and_field(tmp_path: Path, direction: str) -> None:
    """§10.35 `"dir": "c2s"|"s2c"`: anything else is bad input at file:line $.dir."""
    text = init("s1", 1) + mcp("2026-01-01T00:00:02Z", "s1", direction, {"jsonrpc": "2.0", "method": "x"})
    line = refused(convert(tmp_path, "mcp-log", text), "in.jsonl")
    assert "in.jsonl:2" in line and "$.dir" in line, line


@pytest.mark.parametrize("ts", ["yesterday", "99999-01-01T00:00:00Z", "2026-02-30T00:00:00Z"])
def test_mcp_bad_timestamp_names_line_and_field(tmp_path: Path, ts: str) -> None:
    """§10.35 `"ts": ISO-8601 UTC string`."""
    text = init("s1", 1) + mcp(ts, "s1", "c2s", {"jsonrpc": "2.0", "method": "x"})
    line = refused(convert(tmp_path, "mcp-log", text), "in.jsonl")
    assert "in.jsonl:2" in line and "$.ts" in line, line


def two_sessions_then_bad_line() -> str:
    return init("s1", 1) + init("s2", 2) + '{"ts": "2026-01-01T00:00:03Z", "session": "s1", "dir"\n'


def test_convert_out_dir_leaves_no_partial_files(tmp_path: Path) -> None:
    """Developers' guide: "convert --out-dir leaves no partial files" when a later line is bad."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine", encoding="utf-8")
    line = refused(convert(tmp_path, "mcp-log", two_sessions_then_bad_line(), "--out-dir", "out"), "in.jsonl")
    assert "in.jsonl:3" in line, line
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]
    assert (out / "keep.txt").read_text(encoding="utf-8") == "mine"


def test_convert_out_dir_not_created_on_failure(tmp_path: Path) -> None:
    """Nothing half-written: a failing convert does not leave a new (empty) out dir behind."""
    refused(convert(tmp_path, "mcp-log", two_sessions_then_bad_line(), "--out-dir", "new"), "in.jsonl")
    assert not (tmp_path / "new").exists() or not any((tmp_path / "new").iterdir())


def test_convert_output_file_untouched_on_failure(tmp_path: Path) -> None:
    """Developers' guide: "--output files are not truncated on failure"."""
    (tmp_path / "out.jsonl").write_text("previous\n", encoding="utf-8")
    text = init("s1", 1) + '{"ts": "2026-01-01T00:00:03Z", "session"\n'
    refused(convert(tmp_path, "mcp-log", text, "--output", "out.jsonl"), "in.jsonl")
    assert (tmp_path / "out.jsonl").read_text(encoding="utf-8") == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "out.jsonl"]


def test_convert_output_onto_its_input_is_refused(tmp_path: Path) -> None:
    """`convert --help`: "an input file is refused" as --output; the input stays intact."""
    text = init("s1", 1)
    refused(convert(tmp_path, "mcp-log", text, "--output", "in.jsonl"), "in.jsonl", located=False)
    assert (tmp_path / "in.jsonl").read_text(encoding="utf-8") == text


def test_convert_is_deterministic(tmp_path: Path) -> None:
    """Developers' guide "Output is deterministic": two conversions give identical bytes."""
    spans = [span("a", None, "invoke_agent"), tool_span("c", "a"), tool_span("d", "a", start=1_200)]
    first = convert(tmp_path, "otel", otlp_line(spans))
    second = convert(tmp_path, "otel", otlp_line(spans))
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout


# -- §7 mapping profiles ------------------------------------------------------------------------

BAD_PROFILES: dict[str, Any] = {
    "not_object": [1, 2],
    "rules_not_list": {"rules": {"when": {}}},
    "unknown_key": {"rules": [], "extra": 1},
    "rule_unknown_key": {"rules": [{"when": {"name": "x"}, "emit": {"type": "control.stop"}, "then": 1}]},
    "emit_no_type": {"rules": [{"when": {"name": "x"}, "emit": {}}]},
    "attr_not_string": {"rules": [{"when": {"name": "x"}, "emit": {"type": "control.stop", "reason": {"$attr": 5}}}]},
    "bad_match_in_when": {"rules": [{"when": {"attributes": {"d": {"$regex": "(a)\\1"}}},
                                     "emit": {"type": "control.stop"}}]},
    "hoist_not_bool": {"hoist_elicitation": "yes", "rules": []},
}


@pytest.mark.parametrize("name", sorted(BAD_PROFILES))
def test_bad_profile_names_its_json_path(tmp_path: Path, name: str) -> None:
    """§7 "User profiles add rules {when:{name?, kind?, attributes?: node}, emit:{type, field:
    literal|{"$attr":k}|{"$json_attr":k}}}"; D4: one line naming the profile and a JSON path."""
    setup_inputs(tmp_path)
    (tmp_path / "p.json").write_text(json.dumps(BAD_PROFILES[name]), encoding="utf-8")
    result = run(tmp_path, "convert", "--from", "otel", "o.jsonl", "--profile", "p.json")
    line = refused(result, "p.json")
    assert "$" in line, line


def test_bad_profile_refused_by_check_input_format(tmp_path: Path) -> None:
    """§7 `check --input-format` takes the same profile: same refusal, nothing on stdout."""
    setup_inputs(tmp_path)
    (tmp_path / "p.json").write_text(json.dumps(BAD_PROFILES["emit_no_type"]), encoding="utf-8")
    result = run(tmp_path, "check", "-c", "c.json", "-t", "o.jsonl", "--input-format", "otel", "--profile", "p.json")
    refused(result, "p.json")


# -- lint, stability, mutate, --partial ------------------------------------------------------------

@pytest.mark.parametrize("name", ["regex_backreference", "depth_33", "unknown_dollar", "exists_root"])
def test_lint_refuses_invalid_contract(tmp_path: Path, name: str) -> None:
    """§4 "lint ... 2 on an invalid contract"; §10.50 "exit 2 with nothing on stdout"."""
    (tmp_path / "c.json").write_text(json.dumps(contract_with(BAD_TREES[name])), encoding="utf-8")
    fmt = {"regex_backreference": "text", "depth_33": "json", "unknown_dollar": "sarif"}.get(name, "text")
    line = refused(run(tmp_path, "lint", "-c", "c.json", "--format", fmt), "c.json")
    assert "$.rules[0]" in line, line


def test_lint_is_deterministic(tmp_path: Path) -> None:
    """Developers' guide "Output is deterministic"."""
    doc = {"version": 2, "name": "h", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"},
        {"id": "must-exec", "kind": "tool_calls", "tool": "shell.exec", "min": 1}]}
    (tmp_path / "c.json").write_text(json.dumps(doc), encoding="utf-8")
    first = run(tmp_path, "lint", "-c", "c.json", "--format", "json")
    second = run(tmp_path, "lint", "-c", "c.json", "--format", "json")
    assert first.returncode == 1, first.stderr
    assert first.stdout == second.stdout


def test_stability_bad_trace_is_refused_with_nothing_on_stdout(tmp_path: Path) -> None:
    """§10.55 "an unreadable or invalid trace ... is exit 2 with nothing on stdout"."""
    (tmp_path / "a.jsonl").write_text(TRACE_OK, encoding="utf-8")
    (tmp_path / "b.jsonl").write_text(TRACE_OK + '{"seq":9,"type":"run.completed",\n', encoding="utf-8")
    line = refused(run(tmp_path, "stability", "a.jsonl", "b.jsonl", "--format", "json"), "b.jsonl")
    assert "b.jsonl:4" in line, line


def test_stability_stdin_twice_is_refused(tmp_path: Path) -> None:
    """`stability --help`: "- for stdin, once"."""
    result = run(tmp_path, "stability", "-", "-", stdin=TRACE_OK.encode())
    refused(result, "-", located=False)


def test_stability_deep_output_gives_no_traceback(tmp_path: Path) -> None:
    """§5 shapes of an output nested 10,000 deep: a verdict or a clean refusal, no RecursionError."""
    deep = "[" * 10_000 + "]" * 10_000
    (tmp_path / "a.jsonl").write_text(TRACE_OK.replace('{"total":1}', deep), encoding="utf-8")
    (tmp_path / "b.jsonl").write_text(TRACE_OK, encoding="utf-8")
    result = run(tmp_path, "stability", "a.jsonl", "b.jsonl", "--format", "json")
    verdict_or_refused(result, "a.jsonl")


def test_stability_wide_output_is_deterministic(tmp_path: Path) -> None:
    """§10.55 "entries sorted by path in code-point order"; deterministic output."""
    wide = json.dumps({f"k{i}": i for i in range(2000)})
    (tmp_path / "a.jsonl").write_text(TRACE_OK.replace('{"total":1}', wide), encoding="utf-8")
    (tmp_path / "b.jsonl").write_text(TRACE_OK, encoding="utf-8")
    first = run(tmp_path, "stability", "a.jsonl", "b.jsonl", "--format", "json")
    second = run(tmp_path, "stability", "a.jsonl", "b.jsonl", "--format", "json")
    assert first.returncode == 1, first.stderr
    assert first.stdout == second.stdout
    paths = [entry["path"] for entry in json.loads(first.stdout)["unstable"]]
    assert paths == sorted(paths)


@pytest.mark.parametrize("flag", [["--ignore", ""], ["--map", "a..b"], ["--ignore", "$.["]])
def test_stability_bad_path_option_is_one_line(tmp_path: Path, flag: list[str]) -> None:
    """§10.51 "--ignore P and --map P take that notation": an unparsable path is bad input."""
    (tmp_path / "a.jsonl").write_text(TRACE_OK, encoding="utf-8")
    result = run(tmp_path, "stability", "a.jsonl", "a.jsonl", *flag)
    lines = clean_stderr(result)
    assert result.returncode == 2 and result.stdout == "" and len(lines) == 1, (result.returncode, lines)


def test_mutate_failing_trace_is_refused_naming_the_rule(tmp_path: Path) -> None:
    """§10.56 "mutate exits 2 with one stderr line naming the failing rule ids, and nothing on
    stdout"."""
    result = check(tmp_path, V2_OK, TRACE_OK.replace('"A1"', '"B1"'))
    assert result.returncode == 1
    line = refused(run(tmp_path, "mutate", "-c", "c.json", "-t", "t.jsonl"), "args", located=False)
    assert "args" in line


def test_mutate_unknown_no_rewrite_is_refused(tmp_path: Path) -> None:
    """§10.56 "an unknown --no-rewrite name" is exit 2, one line."""
    setup_inputs(tmp_path)
    refused(run(tmp_path, "mutate", "-c", "c.json", "-t", "t.jsonl", "--no-rewrite", "bogus"), "bogus", located=False)


@pytest.mark.parametrize("args", [["--max-mutants", "0"], ["--min-score", "1.5"], ["--min-score", "nan"],
                                  ["--max-mutants", "1e400"]])
def test_mutate_bad_option_value_is_one_line(tmp_path: Path, args: list[str]) -> None:
    """D4 one line, exit 2 for out-of-range option values."""
    setup_inputs(tmp_path)
    result = run(tmp_path, "mutate", "-c", "c.json", "-t", "t.jsonl", *args)
    lines = clean_stderr(result)
    assert (result.returncode, result.stdout, len(lines)) == (2, "", 1), (result.returncode, lines)


def test_mutate_bad_corpus_trace_is_refused(tmp_path: Path) -> None:
    """§6 "every --corpus trace" must be read: a malformed one is bad input naming file:line."""
    setup_inputs(tmp_path)
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "x.jsonl").write_text('{"seq":1,"type":"x"}\n{"seq":\n', encoding="utf-8")
    line = refused(run(tmp_path, "mutate", "-c", "c.json", "-t", "t.jsonl", "--corpus", "corpus"), "x.jsonl")
    assert "x.jsonl:2" in line, line


def test_mutate_output_untouched_on_failure(tmp_path: Path) -> None:
    """Developers' guide: "--output files are not truncated on failure"."""
    setup_inputs(tmp_path)
    (tmp_path / "r.json").write_text("old", encoding="utf-8")
    (tmp_path / "t.jsonl").write_text(TRACE_OK + "{bad\n", encoding="utf-8")
    refused(run(tmp_path, "mutate", "-c", "c.json", "-t", "t.jsonl", "-o", "r.json"), "t.jsonl")
    assert (tmp_path / "r.json").read_text(encoding="utf-8") == "old"


def test_partial_check_refuses_bad_trace_line(tmp_path: Path) -> None:
    """§0 `check --partial` reads traces as check does: a truncated last line is still bad input
    (exit 2, file:line), not silently dropped."""
    line = refused(check(tmp_path, V2_OK, TRACE_OK + '{"seq":4,"type":"tool.ca', "--partial"), "t.jsonl")
    assert "t.jsonl:4" in line, line


def test_partial_check_of_hostile_contract_is_refused(tmp_path: Path) -> None:
    """§0 --partial changes statuses, not loading: a bad contract is still exit 2 at its path."""
    line = refused(check(tmp_path, contract_with(BAD_TREES["regex_lookahead"]), TRACE_OK, "--partial"), "c.json")
    assert "$.rules[0]" in line, line


# -- run ids as file names, unknown runs, slow regexes ---------------------------------------------

def sessions(*names: str) -> str:
    return "".join(mcp("2026-01-01T00:00:00Z", name, "c2s",
                       {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}) for name in names)


@pytest.mark.parametrize("session", ["../evil", "/tmp/evil-abs", ".", "a\x1b[31m"])
def test_out_dir_keeps_hostile_run_ids_inside(tmp_path: Path, session: str) -> None:
    """§7 `--out-dir D` (convert --help: "DIR/<run id>.jsonl"); §10.35 "run id = session". Spec
    silent on ids that are not file names: every file lands inside D, one per run."""
    result = convert(tmp_path, "mcp-log", sessions(session, "ok"), "--out-dir", "out")
    clean_stderr(result)
    assert result.returncode == 0, result.stderr
    written = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert len(written) == 2 and all(p.parent == tmp_path / "out" for p in written), written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "out"]


def test_out_dir_colliding_run_ids_lose_nothing(tmp_path: Path) -> None:
    """Developers' guide "nothing lost": two runs whose ids map to one file name both survive."""
    result = convert(tmp_path, "mcp-log", sessions("a/b", "a_b"), "--out-dir", "out")
    assert result.returncode == 0, result.stderr
    run_ids = {json.loads(path.read_text(encoding="utf-8").splitlines()[0])["run_id"]
               for path in (tmp_path / "out").iterdir()}
    assert run_ids == {"a/b", "a_b"}


def test_out_dir_existing_file_is_not_overwritten(tmp_path: Path) -> None:
    """Developers' guide "nothing lost or half-written": a run file that exists already is a
    refusal, and no other run file is written."""
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "s1.jsonl").write_text("precious\n", encoding="utf-8")
    refused(convert(tmp_path, "mcp-log", sessions("s2", "s1"), "--out-dir", "out"), "s1.jsonl", located=False)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["s1.jsonl"]
    assert (tmp_path / "out" / "s1.jsonl").read_text(encoding="utf-8") == "precious\n"


def test_unknown_run_is_refused_listing_the_runs(tmp_path: Path) -> None:
    """§10.34: `--run ID` picks a run; an id that is not there is exit 2 listing the run ids."""
    line = refused(convert(tmp_path, "mcp-log", sessions("s1", "s2"), "--run", "nope"), "in.jsonl", located=False)
    assert "s1" in line and "s2" in line, line


def test_catastrophic_regex_stays_linear(tmp_path: Path) -> None:
    """§10.10 "the loader enforces RE2 syntax with or without google-re2": matching stays linear, so
    `^(a*)*b$` against 40 a's answers at once (a backtracking engine would take hours)."""
    call = {"seq": 1, "type": "tool.call", "tool": "refund", "args": {"order": "a" * 40}}
    (tmp_path / "c.json").write_text(json.dumps(contract_with({"order": {"$regex": "^(a*)*b$"}})), encoding="utf-8")
    (tmp_path / "t.jsonl").write_text(json.dumps(call) + "\n", encoding="utf-8")
    result = run(tmp_path, "check", "-c", "c.json", "-t", "t.jsonl", timeout=20)
    clean_stderr(result)
    assert result.returncode == 1, result.stderr


def test_lone_surrogate_reports_are_valid_utf8(tmp_path: Path) -> None:
    """Spec silent on lone surrogates; whatever the verdict, every report format stays valid
    UTF-8 (an unpaired surrogate cannot be written as UTF-8)."""
    trace = TRACE_OK.replace('"order":"A1"', '"order":"B\\ud800"')
    check(tmp_path, V2_OK, trace)
    for fmt in ("json", "text", "sarif", "junit", "html"):
        proc = cli_zygote.run_python(["-m", "agent_invariants", "check", "-c", "c.json", "-t", "t.jsonl",
                                      "--format", fmt], tmp_path, address_space=GIB)
        assert proc.returncode == 1, proc.stderr
        proc.stdout.decode("utf-8")  # raises if not UTF-8


def run_with_stdin_file(cwd: Path, device: str, *args: str) -> subprocess.CompletedProcess[str]:
    with open(device, "rb") as handle:
        proc = subprocess.run([sys.executable, "-m", "agent_invariants", *args], cwd=cwd, stdin=handle,
                              capture_output=True, timeout=60, preexec_fn=_cap_memory)
    return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode("utf-8", "replace"),
                                       proc.stderr.decode("utf-8", "replace"))


@pytest.mark.parametrize(("device", "args"), [
    ("/dev/zero", ["check", "-c", "c.json", "-t", "-"]),
    ("/dev/urandom", ["convert", "--from", "otel", "-"]),
    ("/dev/zero", ["stability", "-", "t.jsonl"]),
    ("/dev/urandom", ["mutate", "-c", "c.json", "-t", "-"]),
])
def test_endless_stdin_is_refused(tmp_path: Path, device: str, args: list[str]) -> None:
    """Developers' guide: an endless input (on stdin, `-`) is one line naming <stdin> and a line,
    exit 2, in bounded memory."""
    setup_inputs(tmp_path)
    # mutate refuses by total size first (a whole-input limit: no line to name)
    refused(run_with_stdin_file(tmp_path, device, *args), "<stdin>", located=args[0] != "mutate")


def test_garbage_contract_on_stdin_names_stdin(tmp_path: Path) -> None:
    """§4 lint "2 on an invalid contract"; the line names the input (stdin) and where."""
    refused(run(tmp_path, "lint", "-c", "-", stdin=b"{bad\n"), "<stdin>")


def test_convert_second_input_missing_leaves_output_untouched(tmp_path: Path) -> None:
    """§7 `convert IN…`: a missing second input is exit 2 and --output keeps its old content."""
    (tmp_path / "a.jsonl").write_text(sessions("s1"), encoding="utf-8")
    (tmp_path / "o.txt").write_text("old\n", encoding="utf-8")
    result = run(tmp_path, "convert", "--from", "mcp-log", "a.jsonl", "missing.jsonl", "-o", "o.txt")
    refused(result, "missing.jsonl", located=False)
    assert (tmp_path / "o.txt").read_text(encoding="utf-8") == "old\n"


def test_partial_check_refuses_decreasing_seq(tmp_path: Path) -> None:
    """v1 §3.2 step 5 (sequence strictly increasing) holds under `--partial` too: file:line."""
    trace = '{"seq":2,"type":"x"}\n{"seq":1,"type":"x"}\n'
    assert "t.jsonl:2" in refused(check(tmp_path, V2_OK, trace, "--partial"), "t.jsonl")


def test_mutate_unknown_show_mutant_is_one_line(tmp_path: Path) -> None:
    """§6 mutant ids are `operator:seq[:detail]`: an id that names no mutant is bad input."""
    setup_inputs(tmp_path)
    result = run(tmp_path, "mutate", "-c", "c.json", "-t", "t.jsonl", "--show-mutant", "nope:1")
    refused(result, "nope:1", located=False)


def test_stability_contract_that_is_a_trace_is_refused(tmp_path: Path) -> None:
    """§10.55 "an unreadable or invalid ... contract is exit 2 with nothing on stdout"."""
    setup_inputs(tmp_path)
    refused(run(tmp_path, "stability", "t.jsonl", "t.jsonl", "--contract", "t.jsonl"), "t.jsonl", located=False)
