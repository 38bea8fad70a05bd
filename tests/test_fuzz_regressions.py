"""Inputs found by fuzzing (fuzz/): crashes (an exception other than InputError escaping the
public API) and wrong answers caught by the fuzz targets' oracles.

The rule: on any input, `check_trace` and `load_contract` either give the correct verdict or raise
`InputError` (`TraceError` for traces, with a one-line message; `ContractError` for contracts,
with one line per problem).
Each test below is a minimal reproducer through the public API, and accepts either a correct
verdict or a sensible `InputError`, whichever the fix chooses, where both are defensible.
"""
from __future__ import annotations

from functools import partial

import pytest

from agent_invariants import ContractError, TraceError, check_trace, compare_traces, load_contract, summarize_trace

from support import contract

CONTRACT = contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"})
DEEP = 100_000   # nesting far beyond any recursion limit
FIRST = b'{"seq":1,"type":"run.start"}\n'
VALID_CONTRACT_HEAD = b'{"version":1,"name":"n","rules":[{"id":"a","kind":"deny_tool","tool":"x"}]'

TEN_TO_309 = b"1" + b"0" * 309   # an integer literal beyond the largest double (~1.8e308)


def _one_line(error: Exception) -> str:
    message = str(error)
    assert message and "\n" not in message
    return message


def _contract_message(error: ContractError) -> str:
    """A contract error has one line per problem, each naming the contract."""
    message = str(error)
    assert message and all(line.startswith("contract") for line in message.split("\n"))
    return message


# ----------------------------------------------------------------------------------------------
# seq written as an integer too large for a double: OverflowError in json_number (_js.py)


@pytest.mark.parametrize("trace, line", [
    pytest.param(b'{"seq":' + TEN_TO_309 + b',"type":"x"}\n', 1, id="jsonl-first"),
    pytest.param(FIRST + b'{"seq":' + TEN_TO_309 + b',"type":"x"}\n', 2, id="jsonl-second"),
    pytest.param(b'[\n{"seq":1,"type":"a"},\n{"seq":' + TEN_TO_309 + b',"type":"x"}\n]', 3, id="array"),
])
def test_fuzz_seq_integer_beyond_double_range_is_a_trace_error(trace: bytes, line: int) -> None:
    # The reference parses such a literal as Infinity, which is not an integer: the event is invalid.
    with pytest.raises(TraceError) as caught:
        check_trace(CONTRACT, trace)
    message = _one_line(caught.value)
    assert caught.value.line == line
    assert "$.seq" in message


def test_fuzz_seq_integer_beyond_double_range_in_memory_is_a_trace_error() -> None:
    with pytest.raises(TraceError) as caught:
        check_trace(CONTRACT, [{"seq": 10**309, "type": "x"}])
    assert "$.seq" in _one_line(caught.value)


def test_fuzz_seq_integer_just_inside_double_range_is_accepted() -> None:
    # Guard for the fix: 10**308 is a finite double and an integer, so the event is valid.
    report = check_trace(CONTRACT, b'{"seq":1' + b"0" * 308 + b',"type":"x"}\n')
    assert report.passed and report.summary.events == 1


# ----------------------------------------------------------------------------------------------
# deeply nested JSON in a trace: RecursionError out of msgspec (events.py, _line_batches and
# _array_events catch only msgspec.DecodeError)


@pytest.mark.parametrize("value", [
    pytest.param(b'"data":{"a":' + b"[" * DEEP + b"]" * DEEP + b"}", id="data"),
    pytest.param(b'"args":' + b"[" * DEEP + b"]" * DEEP, id="args"),
    pytest.param(b'"extra":' + b"[" * DEEP + b"]" * DEEP, id="unknown-field"),
])
@pytest.mark.parametrize("head", [
    pytest.param(b'{"seq":2,"type":"x",', id="strict-decode"),
    pytest.param(b'{"seq":2.0,"type":"x",', id="lax-decode"),               # _retry_line, 1st decode
    pytest.param(b'\xc2\xa0{"seq":2,"type":"x",', id="js-trimmed-decode"),  # _retry_line, 2nd decode
])
def test_fuzz_deeply_nested_value_in_a_jsonl_event(head: bytes, value: bytes) -> None:
    # The reference (JSON.parse) reads any depth, and these fields are free-form, so the event is
    # valid; refusing the line with a TraceError that names it is an acceptable alternative.
    trace = FIRST + head + value + b"}\n"
    try:
        report = check_trace(CONTRACT, trace)
    except TraceError as error:
        _one_line(error)
        assert error.line == 2
    else:
        assert report.passed and report.summary.events == 2


def test_fuzz_deeply_nested_unterminated_line_is_a_trace_error() -> None:
    with pytest.raises(TraceError) as caught:
        check_trace(CONTRACT, b'{"a":' + b"[" * DEEP)
    _one_line(caught.value)
    assert caught.value.line == 1


def test_fuzz_deeply_nested_unterminated_array_trace_is_a_trace_error() -> None:
    with pytest.raises(TraceError) as caught:
        check_trace(CONTRACT, b"[" * DEEP)
    _one_line(caught.value)


@pytest.mark.parametrize("lead", [
    pytest.param(b"", id="decode"),
    pytest.param(b"\xc2\xa0", id="js-trimmed-decode"),   # _retry_array decodes again, JS-trimmed
])
def test_fuzz_deeply_nested_value_in_an_array_event(lead: bytes) -> None:
    trace = lead + b'[{"seq":1,"type":"x","data":{"a":' + b"[" * DEEP + b"]" * DEEP + b"}}]"
    try:
        report = check_trace(CONTRACT, trace)
    except TraceError as error:
        _one_line(error)
    else:
        assert report.passed and report.summary.events == 1


# ----------------------------------------------------------------------------------------------
# deeply nested JSON in a contract: RecursionError from msgspec in contract._parse (catches only
# DecodeError), and, at a depth msgspec still decodes (about 500), from the recursive
# contract._integral_floats_as_ints. No nested value is valid anywhere in a contract.


@pytest.mark.parametrize("data", [
    pytest.param(b"[" * DEEP, id="unterminated"),
    pytest.param(VALID_CONTRACT_HEAD + b',"x":' + b"[" * DEEP + b"]" * DEEP + b"}", id="unknown-key-very-deep"),
])
def test_fuzz_deeply_nested_contract_is_a_contract_error(data: bytes) -> None:
    with pytest.raises(ContractError) as caught:
        load_contract(data)
    _contract_message(caught.value)


@pytest.mark.parametrize("data", [
    pytest.param(b'{"a":' * 500 + b"1" + b"}" * 500, id="objects-500"),
    pytest.param(VALID_CONTRACT_HEAD + b',"x":' + b"[" * 600 + b"]" * 600 + b"}", id="unknown-key-arrays-600"),
    pytest.param(b'{"version":1,"name":"n","rules":[{"id":"a","kind":"deny_tool","tool":"x","extra":'
                 + b'{"a":' * 600 + b"1" + b"}" * 600 + b"}]}", id="unknown-rule-key-objects-600"),
])
def test_fuzz_moderately_nested_contract_is_a_contract_error(data: bytes) -> None:
    with pytest.raises(ContractError) as caught:
        load_contract(data)
    _contract_message(caught.value)


def test_fuzz_moderately_nested_contract_mapping_is_a_contract_error() -> None:
    nested: object = 1
    for _ in range(600):
        nested = {"a": nested}
    document = {**contract({"id": "a", "kind": "deny_tool", "tool": "x"}), "x": nested}
    with pytest.raises(ContractError) as caught:
        load_contract(document)
    _contract_message(caught.value)


# ----------------------------------------------------------------------------------------------
# Not crashes: wrong answers the fuzz oracles found.

# A JSON-array trace whose item also occurs, byte for byte, nested inside the item before it:
# events.py `_array_events` searches for each item from the *start* of the previous item, so it
# finds the nested copy and reports the wrong physical line.


def test_fuzz_array_item_line_is_not_taken_from_a_nested_copy_in_the_previous_item() -> None:
    trace = (b'[{"seq":1,"type":"a","data":\n'
             b'{"seq":2,"type":"b"}},\n'
             b'\n'
             b'{"seq":2,"type":"b"}]')
    deny_b = contract({"id": "no-b", "kind": "deny_event", "match": {"type": "b"}})
    report = check_trace(deny_b, trace)
    assert [(v.event_seq, v.event_index, v.line) for v in report.violations] == [(2, 1, 4)]


# A lone UTF-16 surrogate escape in a string (`"\ud800"`), which JavaScript's JSON.stringify
# writes for a string cut in the middle of an emoji. The reference reads it (JSON.parse accepts
# it), so a trace that has one in a free-form field is valid there. msgspec refuses it, and the
# reader then said the line is truncated ("the JSON ends before the value is complete (each
# event must be one JSON object on one line)"), which is false. Now it is read, as U+FFFD.


@pytest.mark.parametrize("trace", [
    pytest.param(FIRST + b'{"seq":2,"type":"x","data":{"note":"cut \\ud83d"}}\n', id="jsonl-data"),
    pytest.param(FIRST + b'{"seq":2,"type":"x","args":"\\ud800"}\n', id="jsonl-args"),
    pytest.param(b'[{"seq":1,"type":"run.start"},\n{"seq":2,"type":"x","note":"\\ud800"}]', id="array"),
])
def test_fuzz_lone_surrogate_escape_is_read(trace: bytes) -> None:
    report = check_trace(CONTRACT, trace)
    assert report.passed and report.summary.events == 2


# A trace file is read 64 KiB at a time. When a multi-byte JS whitespace character (here U+00A0)
# straddles the end of the first chunk before any content, events.py `_first_significant` takes
# the incomplete UTF-8 sequence for the first significant byte, so `_batches` decides "JSONL"
# instead of "JSON array" and the file is read differently from the same bytes in memory.


@pytest.mark.parametrize("lead", [
    pytest.param(b" " * 65535 + b"\xc2\xa0", id="nbsp-split"),
    pytest.param(b" " * 65534 + b"\xe2\x80\xa8", id="u2028-split"),
    pytest.param(b" " * 65535 + b"\xef\xbb\xbf", id="bom-split"),
])
def test_fuzz_chunk_boundary_inside_leading_whitespace_does_not_change_the_format(tmp_path, lead: bytes) -> None:
    data = lead + b'[{"seq":1,"type":"run.start"},\n{"seq":2,"type":"tool.call","tool":"shell.exec"}]'
    path = tmp_path / "trace.json"
    path.write_bytes(data)
    in_memory = check_trace(CONTRACT, data)
    from_file = check_trace(CONTRACT, str(path))
    assert in_memory.summary.events == from_file.summary.events == 2
    assert [(v.event_index, v.line) for v in from_file.violations] == [(1, 2)]


# ----------------------------------------------------------------------------------------------
# A rule whose `kind` is an array or an object: TypeError (unhashable type) from
# validation.py `rule_problems`, which looks the kind up in a dict (`kind not in rule_types`).


@pytest.mark.parametrize("kind", [
    pytest.param(b'["deny_tool"]', id="array"),
    pytest.param(b'{"a":1}', id="object"),
])
def test_fuzz_rule_kind_of_the_wrong_json_type_is_a_contract_error(kind: bytes) -> None:
    data = b'{"version":1,"name":"n","rules":[{"id":"a","kind":' + kind + b',"tool":"x"}]}'
    with pytest.raises(ContractError) as caught:
        load_contract(data)
    _contract_message(caught.value)
    assert caught.value.path == "$.rules[0].kind"


# ----------------------------------------------------------------------------------------------
# Invalid UTF-8 (README, Compatibility: "Invalid UTF-8 in a trace is an error rather than being
# replaced silently"; the reference replaces it and then fails to parse such a line).

# A trace of nothing but invalid bytes and whitespace is read as an empty trace, and passes:
# events.py `_first_significant` decodes with errors="ignore", so an invalid byte is dropped, the
# whitespace after it is taken for the first character, and `pos` skips past both.


@pytest.mark.parametrize("trace", [
    pytest.param(b"\xff\n", id="ff-newline"),
    pytest.param(b"\x80 ", id="continuation-byte-space"),
    pytest.param(b"\xfe\xff\n\n", id="utf16-be-bom-then-newlines"),
])
def test_fuzz_invalid_utf8_then_whitespace_is_not_an_empty_trace(trace: bytes) -> None:
    with pytest.raises(TraceError) as caught:
        check_trace(CONTRACT, trace)
    assert "UTF-8" in _one_line(caught.value)
    assert caught.value.line == 1


# msgspec skips unknown keys, their values, `data`'s content and the raw fields (`args`, ...)
# without checking their UTF-8, so those invalid bytes pass, while the same bytes in `type` or
# in a comment line are refused.


@pytest.mark.parametrize("field", [
    pytest.param(b'"k\xff":1', id="unknown-key"),
    pytest.param(b'"note":"\xff"', id="unknown-field-value"),
    pytest.param(b'"data":{"a":"\xff"}', id="data"),
    pytest.param(b'"args":"\xff"', id="args"),
])
def test_fuzz_invalid_utf8_anywhere_in_an_event_line_is_an_error(field: bytes) -> None:
    with pytest.raises(TraceError) as caught:
        check_trace(CONTRACT, FIRST + b'{"seq":2,"type":"x",' + field + b"}\n")
    assert "UTF-8" in _one_line(caught.value)
    assert caught.value.line == 2


# ----------------------------------------------------------------------------------------------
# `extends` naming a shipped pack whose name is longer than a file name may be: OSError
# (ENAMETOOLONG) from `Path.is_file()` in packs.py `pack_path` (pathlib swallows only ENOENT,
# ENOTDIR, EBADF and ELOOP). It is an unknown pack.


def test_fuzz_extends_pack_name_too_long_for_a_file_name_is_a_contract_error() -> None:
    data = b'{"version":1,"name":"n","extends":["agent-invariants:' + b"a" * 300 + b'"],"rules":[]}'
    with pytest.raises(ContractError) as caught:
        load_contract(data)
    _contract_message(caught.value)
    assert caught.value.path == "$.extends[0]"


# ----------------------------------------------------------------------------------------------
# How deep a trace may nest is whatever msgspec reaches before Python's recursion limit, which
# counts the caller's frames too (events.py turns the RecursionError into "nested too deeply").
# So the same bytes are accepted or refused depending on the call stack: found as a whole read
# and a chunked read of the same line disagreeing. On the CLI, a line whose `args` nest 978 deep
# made `check` exit 2 while `compare` (as the candidate) and `summary` exited 0. A verdict must
# be a function of the input only.


def _nested_trace(depth: int) -> bytes:
    return FIRST + b'{"seq":2,"type":"x","args":' + b"[" * depth + b"]" * depth + b"}\n"


def _accepts(call) -> bool:
    try:
        call()
    except TraceError:
        return False
    return True


def _deeper(frames: int, call):
    return call() if frames == 0 else _deeper(frames - 1, call)


@pytest.mark.parametrize("depth", [300, 500, 700, 900])
def test_fuzz_nesting_verdict_does_not_depend_on_the_callers_stack(depth: int) -> None:
    data = _nested_trace(depth)
    shallow = _accepts(lambda: check_trace(CONTRACT, data))
    assert _accepts(lambda: _deeper(250, lambda: check_trace(CONTRACT, data))) == shallow


def test_fuzz_nesting_verdict_is_the_same_for_check_compare_and_summary() -> None:
    differ = []
    for depth in range(800, 1001):
        data = _nested_trace(depth)
        seen = {_accepts(partial(check_trace, CONTRACT, data)), _accepts(partial(summarize_trace, data)),
                _accepts(partial(compare_traces, CONTRACT, FIRST, data))}
        if len(seen) > 1:
            differ.append(depth)
    assert differ == []


# ----------------------------------------------------------------------------------------------
# Found by the chunking oracle on the final code: within one chunk, the per-line checks ran one
# kind after another (length, nesting, UTF-8) instead of in file order, so a too-deep line 2 was
# reported before invalid UTF-8 on line 1; and an unfinished, already too long last line was
# reported before the complete lines in front of it were read.


def test_fuzz_the_first_problem_in_the_file_wins_within_a_chunk() -> None:
    trace = (b'{"seq":1,"type":"x","note":"\xff"}\n'
             b'{"seq":2,"type":"y","d":' + b"[" * 600 + b"]" * 600 + b"}\n")
    with pytest.raises(TraceError) as caught:
        check_trace(CONTRACT, trace)
    assert caught.value.line == 1 and "UTF-8" in _one_line(caught.value)


def test_fuzz_an_unfinished_too_long_line_does_not_hide_an_earlier_error() -> None:
    from agent_invariants.reader import TraceFile

    trace = b'{"seq":1,"type":"x"\n' + b'{"seq":2,"type":"' + b"y" * 5000
    with pytest.raises(TraceError) as caught:
        list(TraceFile(trace, max_line_bytes=1000))
    assert caught.value.line == 1 and "invalid JSON" in _one_line(caught.value)
