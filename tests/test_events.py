"""The trace reader (spec §3): JSONL and JSON-array traces, event validation, physical lines."""
from __future__ import annotations

import json
import os
from typing import Any

import msgspec
import pytest
from msgspec import UNSET

from agent_invariants import (
    ContractError,
    EventList,
    TraceError,
    TraceFile,
    check_trace,
    iter_events,
    load_contract,
    read_trace,
    summarize_trace,
)

from support import contract, events, jsonl, report_dict

# One violation per event, located at the event: makes every event's seq/index/line visible.
EVERY_EVENT = contract({"id": "every", "kind": "deny_event", "match": {"type": "*"}})

# A contract with several kinds of violations, used to compare whole reports.
MIXED = contract(
    {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"},
    {"id": "closed", "kind": "tool_result_required"},
    {"id": "approved", "kind": "require_approval", "tool": "pay.*", "scope": "pay"},
    {"id": "final", "kind": "stop_is_final"},
    {"id": "budget", "kind": "event_budget", "max_tool_calls": 2, "severity": "warning"},
    {"id": "done", "kind": "completion_requires_outcome"},
)

MIXED_EVENTS = events(
    {"type": "run.start", "time": "2024-05-01T10:00:00Z"},
    {"type": "tool.call", "tool": "shell.exec", "call_id": "c1"},
    {"type": "tool.result", "tool": "shell.exec", "call_id": "c1", "ok": False},
    {"type": "approval.granted", "approval_scope": "pay", "approved": True},
    {"type": "tool.call", "tool": "pay.refund", "call_id": "c2"},
    {"type": "tool.call", "tool": "pay.charge"},
    {"type": "control.stop"},
    {"type": "agent.message", "data": {"text": "still here"}},
    {"type": "run.completed", "claims_completion": True, "confidence": 0.9},
)


def plain(event: Any) -> dict[str, Any]:
    """The fields of an Event that the tests care about (UNSET fields left out)."""
    names = ("seq", "type", "time", "tool", "call_id", "approval_scope", "approved", "ok",
             "claims_completion", "confidence")
    return {name: getattr(event, name) for name in names if getattr(event, name) is not UNSET}


def seqs_and_lines(report: Any) -> list[tuple[Any, int, Any]]:
    return [(v.event_seq, v.event_index, v.line) for v in report.violations]


def read_one(event: dict[str, Any], *, ascii_only: bool = True):
    """Read a one-event JSONL trace given as a dict."""
    return read_trace(json.dumps(event, ensure_ascii=ascii_only).encode("utf-8"))


def rejects(event: dict[str, Any], *, ascii_only: bool = True) -> TraceError:
    with pytest.raises(TraceError) as caught:
        read_one(event, ascii_only=ascii_only)
    return caught.value


# --- JSONL and JSON array ------------------------------------------------------------------------

def test_jsonl_and_json_array_give_identical_events():
    from_lines = read_trace(jsonl(MIXED_EVENTS).encode())
    from_array = read_trace(json.dumps(MIXED_EVENTS).encode())
    assert [plain(e) for e in from_lines] == [plain(e) for e in from_array]
    assert [e.seq for e in from_lines] == list(range(1, 10))
    assert from_lines[2].ok is False
    assert from_lines[7].data is not UNSET


def test_jsonl_and_json_array_give_identical_reports_apart_from_line(write):
    from_lines = check_trace(MIXED, write("t.jsonl", jsonl(MIXED_EVENTS)))
    from_array = check_trace(MIXED, write("t.json", json.dumps(MIXED_EVENTS, indent=2)))
    from_list = check_trace(MIXED, MIXED_EVENTS)
    assert not from_lines.passed
    assert from_lines.error_count >= 4 and from_lines.warning_count == 1
    assert report_dict(from_lines) == report_dict(from_array) == report_dict(from_list)
    # the `line` values themselves differ: JSONL has one event per line, the pretty array does not
    assert [v.line for v in from_lines.violations if v.line is not UNSET] != \
        [v.line for v in from_array.violations if v.line is not UNSET]


def test_bytes_and_path_give_the_same_report(write):
    text = jsonl(MIXED_EVENTS)
    by_path = check_trace(MIXED, write("t.jsonl", text))
    by_bytes = check_trace(MIXED, text.encode())
    assert report_dict(by_path, drop_lines=False) == report_dict(by_bytes, drop_lines=False)


def test_compact_json_array_on_one_line_puts_every_event_on_line_1():
    report = check_trace(EVERY_EVENT, json.dumps(events({"type": "a"}, {"type": "b"})).encode())
    assert seqs_and_lines(report) == [(1, 0, 1), (2, 1, 1)]


def test_pretty_json_array_line_is_where_each_object_starts(write):
    text = (
        "[\n"                                   # 1
        "  {\n"                                 # 2  event 0 starts here
        '    "seq": 1,\n'                       # 3
        '    "type": "a"\n'                     # 4
        "  },\n"                                # 5
        "\n"                                    # 6
        '  {"seq": 5, "type": "b"},\n'          # 7  event 1
        "  {\n"                                 # 8  event 2
        '    "seq": 9, "type": "c",\n'          # 9
        '    "data": {"nested": {"deep": [1, 2]}}\n'
        "  }\n"
        "]\n"
    )
    path = write("pretty.json", text)
    report = check_trace(EVERY_EVENT, path)
    assert seqs_and_lines(report) == [(1, 0, 2), (5, 1, 7), (9, 2, 8)]
    source = TraceFile(path)
    assert [e.seq for e in source] == [1, 5, 9]
    assert [source.line_of(i) for i in range(3)] == [2, 7, 8]


def test_json_array_after_leading_whitespace_and_bom():
    text = "\ufeff\n\n  [\n" + '{"seq": 1, "type": "a"},\n{"seq": 2, "type": "b"}\n]\n'
    report = check_trace(EVERY_EVENT, text.encode("utf-8"))
    assert seqs_and_lines(report) == [(1, 0, 4), (2, 1, 5)]


def test_empty_json_array_is_zero_events():
    assert read_trace(b"[]") == []
    assert check_trace(EVERY_EVENT, b"  [ ]  \n").summary.events == 0


# --- comments, blank lines, physical lines ---------------------------------------------------------

COMMENTED = (
    "# a comment on line 1\n"                   # 1
    "\n"                                        # 2
    '{"seq": 1, "type": "a"}\n'                 # 3
    "   # an indented comment\n"                # 4
    "\t# a tab-indented comment\n"              # 5
    "   \t  \n"                                 # 6  whitespace only
    '{"seq": 2, "type": "b"}\n'                 # 7
    "#\n"                                       # 8  bare '#'
    '   {"seq": 3, "type": "c"}   \n'           # 9  indented event
    "\n"
    "\n"
)


def test_comments_and_blank_lines_are_skipped_and_lines_stay_physical(write):
    path = write("commented.jsonl", COMMENTED)
    report = check_trace(EVERY_EVENT, path)
    assert seqs_and_lines(report) == [(1, 0, 3), (2, 1, 7), (3, 2, 9)]
    assert report.summary.events == 3


def test_trace_file_line_of_after_iterating(write):
    source = TraceFile(write("commented.jsonl", COMMENTED))
    assert [(e.seq, e.type) for e in source] == [(1, "a"), (2, "b"), (3, "c")]
    assert [source.line_of(i) for i in range(3)] == [3, 7, 9]


def test_iter_events_streams_the_same_events_as_read_trace(write):
    path = write("commented.jsonl", COMMENTED)
    assert [plain(e) for e in iter_events(path)] == [plain(e) for e in read_trace(path)]
    assert [plain(e) for e in iter_events(COMMENTED.encode())] == [plain(e) for e in read_trace(path)]


def test_js_whitespace_lines_are_blank_and_nbsp_indented_comment_is_a_comment():
    text = (
        '{"seq": 1, "type": "a"}\n'
        "\u00a0\u00a0\n"                        # NBSP only: blank after JS trim
        "\u00a0# comment after NBSP\n"
        "\u3000\ufeff\n"                        # ideographic space + BOM mid-file: blank
        "\u2028\n"                               # LINE SEPARATOR: JS whitespace
        '\u00a0{"seq": 2, "type": "b"}\u3000\n'  # event wrapped in JS whitespace (line 6)
    )
    report = check_trace(EVERY_EVENT, text.encode("utf-8"))
    assert seqs_and_lines(report) == [(1, 0, 1), (2, 1, 6)]


def test_a_line_of_only_u001c_is_not_blank():
    # JS trim keeps U+001C..U+001F (Python's str.strip() would remove them).
    text = '{"seq": 1, "type": "a"}\n\x1c\n{"seq": 2, "type": "b"}\n'
    with pytest.raises(TraceError) as caught:
        read_trace(text.encode())
    assert caught.value.line == 2


def test_comment_after_event_position_does_not_shift_event_index():
    text = "#c\n#c\n" + jsonl(events({"type": "a"}, {"type": "b"}))
    report = check_trace(EVERY_EVENT, text.encode())
    assert [(v.event_index, v.line) for v in report.violations] == [(0, 3), (1, 4)]


def test_hash_inside_json_is_not_a_comment():
    report = check_trace(EVERY_EVENT, b'{"seq": 1, "type": "#not-a-comment"}\n')
    assert [v.event_seq for v in report.violations] == [1]


# --- BOM, line ends ------------------------------------------------------------------------------

def test_bom_at_file_start_is_ignored(write):
    text = jsonl(events({"type": "a"}, {"type": "b"}))
    path = write("bom.jsonl", b"\xef\xbb\xbf" + text.encode())
    report = check_trace(EVERY_EVENT, path)
    assert seqs_and_lines(report) == [(1, 0, 1), (2, 1, 2)]
    assert [e.type for e in read_trace(path)] == ["a", "b"]


def test_bom_before_a_comment_line(write):
    path = write("bom.jsonl", b"\xef\xbb\xbf# header\n" + b'{"seq": 1, "type": "a"}\n')
    assert [(v.event_seq, v.line) for v in check_trace(EVERY_EVENT, path).violations] == [(1, 2)]


def test_crlf_line_ends():
    text = '# c\r\n{"seq": 1, "type": "a"}\r\n\r\n{"seq": 2, "type": "b"}\r\n'
    report = check_trace(EVERY_EVENT, text.encode())
    assert seqs_and_lines(report) == [(1, 0, 2), (2, 1, 4)]
    assert [e.type for e in read_trace(text.encode())] == ["a", "b"]


@pytest.mark.parametrize("array", [False, True], ids=["jsonl", "array"])
def test_a_repeated_key_keeps_its_last_value_as_json_parse_does(array):
    """Only the last copy of a repeated key counts: an invalid earlier copy is not an error."""
    lines = ['{"seq": 5, "seq": 1, "type": "tool.call", "tool": 5, "tool": "kb.search", "ok": "no", "ok": false}',
             '{"seq": 2, "type": "x", "data": [1], "data": {"a": 1}, "type": "note"}']
    data = ("[\n" + ",\n".join(lines) + "\n]" if array else "\n".join(lines)).encode()
    assert [plain(event) for event in read_trace(data)] == [
        {"seq": 1, "type": "tool.call", "tool": "kb.search", "ok": False}, {"seq": 2, "type": "note"}]


@pytest.mark.parametrize("line, problem", [
    ('{"seq": 1, "type": "a", "tool": "kb.search", "tool": 5}', "$.tool: expected a string, got a number"),
    ('{"seq": 1, "type": "a", "seq": 1.5}', "$.seq: must be an integer, got 1.5"),
    ('{"seq": 1, "type": "a", "data": {}, "data": null}', "$.data: expected an object, got null"),
])
def test_an_invalid_last_copy_of_a_repeated_key_is_still_an_error(line, problem):
    with pytest.raises(TraceError) as caught:
        read_trace(line.encode())
    assert caught.value.line == 1
    assert caught.value.problem == problem


def test_in_memory_events_with_a_lone_surrogate_read_as_the_replacement_character():
    """A dict from a JSON.parse-like decoder (an MCP client's, Python's json) may hold one."""
    events_in = [{"seq": 1, "type": "tool.call", "tool": "kb.\ud83d", "data": {"x": "\udc00"}}]
    from_file = read_trace(b'{"seq": 1, "type": "tool.call", "tool": "kb.\\ud83d", "data": {"x": "\\udc00"}}')
    assert [plain(event) for event in EventList(events_in)] == [plain(event) for event in from_file] == [
        {"seq": 1, "type": "tool.call", "tool": "kb.\ufffd"}]


def test_no_final_newline():
    report = check_trace(EVERY_EVENT, b'{"seq": 1, "type": "a"}\n{"seq": 2, "type": "b"}')
    assert seqs_and_lines(report) == [(1, 0, 1), (2, 1, 2)]


def test_lone_cr_is_not_a_line_separator():
    with pytest.raises(TraceError) as caught:
        read_trace(b'{"seq": 1, "type": "a"}\r{"seq": 2, "type": "b"}\n')
    assert caught.value.line == 1


def test_lone_cr_after_a_comment_keeps_the_rest_inside_the_comment():
    # "# c\r{...}" is one line starting with '#': the event behind the \r is part of the comment.
    assert read_trace(b'# c\r{"seq": 1, "type": "a"}\n') == []
    found = read_trace(b'# c\r{"seq": 1, "type": "a"}\n{"seq": 2, "type": "b"}\n')
    assert [e.seq for e in found] == [2]


def test_trailing_cr_before_end_of_text_is_whitespace():
    assert [e.seq for e in read_trace(b'{"seq": 1, "type": "a"}\r')] == [1]


# --- malformed lines ---------------------------------------------------------------------------

@pytest.mark.parametrize("bad_line", [
    '{"seq": 2, "type": "b"} {"seq": 3, "type": "c"}',       # two objects on one line
    '{"seq": 2,',                                             # object split over lines
    '[{"seq": 2, "type": "b"}]',                              # array on a non-first line
    '{"seq": NaN, "type": "b"}',
    '{"seq": Infinity, "type": "b"}',
    '{"seq": 2, "type": "b", "confidence": -Infinity}',
    '"just a string"',
    "42",
    "null",
    "{'seq': 2, 'type': 'b'}",
    '{"seq": 2, "type": "b",}',
])
def test_bad_line_is_an_error_naming_its_physical_line(bad_line):
    text = '# header\n{"seq": 1, "type": "a"}\n\n' + bad_line + '\n"type": "b"}\n'
    with pytest.raises(TraceError) as caught:
        read_trace(text.encode())
    assert caught.value.line == 4
    assert caught.value.problem
    assert ":4" in str(caught.value)


def test_error_source_names_the_file(write):
    path = write("bad.jsonl", '{"seq": 1, "type": "a"}\n{"seq": 1, "type": "b"}\n')
    with pytest.raises(TraceError) as caught:
        check_trace(EVERY_EVENT, path)
    assert caught.value.source == str(path)
    assert caught.value.line == 2


def test_truncated_json_array_is_an_error():
    with pytest.raises(TraceError):
        read_trace(b'[{"seq": 1, "type": "a"},\n{"seq": 2, "type": "b"}\n')


def test_comments_are_not_allowed_in_a_json_array():
    with pytest.raises(TraceError):
        read_trace(b'[\n# c\n{"seq": 1, "type": "a"}\n]\n')


def test_invalid_item_in_json_array_names_its_line():
    text = '[\n{"seq": 1, "type": "a"},\n{"seq": 2, "type": "b", "ok": "yes"}\n]\n'
    with pytest.raises(TraceError) as caught:
        read_trace(text.encode())
    assert caught.value.line == 3


# --- type ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("raw, trimmed", [
    ("  tool.call  ", "tool.call"),
    ("\ttool.call\n", "tool.call"),
    ("\u00a0tool.call\u00a0", "tool.call"),
    ("\ufefftool.call\ufeff", "tool.call"),
    ("\u3000\u2028tool.call\u2029\u202f", "tool.call"),
    ("\x1ctool.call\x1c", "\x1ctool.call\x1c"),      # not JS whitespace: kept
    ("\x1f\x1dx\x1e", "\x1f\x1dx\x1e"),
    ("\x85x\x85", "\x85x\x85"),                      # NEL: Python strips it, JS does not
    (" \x1c x \x1c ", "\x1c x \x1c"),
])
def test_type_is_trimmed_the_javascript_way(raw, trimmed):
    (event,) = read_one({"seq": 1, "type": raw})
    assert event.type == trimmed
    (event,) = read_one({"seq": 1, "type": raw}, ascii_only=False)
    assert event.type == trimmed


def test_trimmed_type_is_what_rules_see():
    rules = contract({"id": "n", "kind": "deny_event", "match": {"type": "tool.call"}},
                     {"id": "t", "kind": "deny_tool", "tool": "x"})
    report = check_trace(rules, events({"type": "\u00a0tool.call\ufeff", "tool": "x"}))
    assert [v.rule_id for v in report.violations] == ["n", "t"]
    assert report.summary.tool_calls == 1


def test_type_wrapped_in_u001c_keeps_it_and_counts_it():
    report = check_trace(
        contract({"id": "n", "kind": "deny_event", "match": {"type": "\x1ca\x1c"}}),
        events({"type": "\x1ca\x1c"}, {"type": "a"}))
    assert [v.event_seq for v in report.violations] == [1]
    assert read_one({"seq": 1, "type": "\x1c" + "a" * 198 + "\x1c"})[0].type == "\x1c" + "a" * 198 + "\x1c"
    error = rejects({"seq": 1, "type": "\x1c" + "a" * 199 + "\x1c"})
    assert error.line == 1


def test_type_length_is_measured_after_trimming():
    assert read_one({"seq": 1, "type": "\u00a0" + "a" * 200 + "\u00a0 "})[0].type == "a" * 200
    rejects({"seq": 1, "type": " " + "a" * 201 + " "})


def test_type_length_counts_utf16_units():
    assert read_one({"seq": 1, "type": "\U0001F600" * 100}, ascii_only=False)[0].type == "\U0001F600" * 100
    rejects({"seq": 1, "type": "\U0001F600" * 100 + "a"}, ascii_only=False)
    rejects({"seq": 1, "type": "\U0001F600" * 101})


@pytest.mark.parametrize("value", ["", " ", "\t\n", "\u00a0\ufeff\u3000"])
def test_type_empty_after_trimming_is_rejected(value):
    rejects({"seq": 1, "type": value})


@pytest.mark.parametrize("value", [None, 1, True, ["a"], {"a": 1}])
def test_type_must_be_a_string(value):
    rejects({"seq": 1, "type": value})


def test_type_and_seq_are_required():
    rejects({"seq": 1})
    rejects({"type": "a"})


# --- seq -----------------------------------------------------------------------------------------

def test_integral_float_seq_becomes_an_integer():
    text = (b'{"seq": 1.0, "type": "a"}\n{"seq": 3.0, "type": "b"}\n'
            b'{"seq": 4e0, "type": "c"}\n{"seq": 1E1, "type": "d"}\n')
    found = read_trace(text)
    assert [e.seq for e in found] == [1, 3, 4, 10]
    assert all(type(e.seq) is int for e in found)
    report = check_trace(EVERY_EVENT, text)
    assert [v.event_seq for v in report.violations] == [1, 3, 4, 10]
    assert all(type(v.event_seq) is int for v in report.violations)
    encoded = msgspec.json.encode(report)
    assert b'"event_seq":3,' in encoded and b"3.0" not in encoded


def test_integral_float_seq_in_an_in_memory_list():
    report = check_trace(EVERY_EVENT, [{"seq": 3.0, "type": "a"}, {"seq": 7.0, "type": "b"}])
    assert [v.event_seq for v in report.violations] == [3, 7]
    assert b"3.0" not in msgspec.json.encode(report)


def test_seq_zero_first_and_gaps_are_allowed():
    text = jsonl([{"seq": 0, "type": "a"}, {"seq": 7, "type": "b"}, {"seq": 1000, "type": "c"}])
    report = check_trace(EVERY_EVENT, text.encode())
    assert seqs_and_lines(report) == [(0, 0, 1), (7, 1, 2), (1000, 2, 3)]


def test_very_large_seq_is_accepted():
    assert read_trace(b'{"seq": 1e300, "type": "a"}')[0].seq == 1e300


@pytest.mark.parametrize("values, bad_line", [
    ([1, 1], 2),
    ([1, 2, 2], 3),
    ([5, 3], 2),
    ([0, 1, 2, 1], 4),
    ([2, 3.0, 3], 3),
])
def test_seq_must_strictly_increase(values, bad_line):
    text = jsonl([{"seq": seq, "type": "a"} for seq in values])
    with pytest.raises(TraceError) as caught:
        read_trace(text.encode())
    assert caught.value.line == bad_line


def test_seq_order_is_checked_in_json_arrays_and_lists():
    with pytest.raises(TraceError):
        read_trace(json.dumps([{"seq": 2, "type": "a"}, {"seq": 1, "type": "b"}]).encode())
    with pytest.raises(TraceError):
        check_trace(EVERY_EVENT, [{"seq": 2, "type": "a"}, {"seq": 2, "type": "b"}])


@pytest.mark.parametrize("value", [-1, -0.5, 1.5, 0.1, "1", None, True, [1]])
def test_bad_seq_is_rejected(value):
    rejects({"seq": value, "type": "a"})


# --- time ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [
    "2024-01-31T08:00Z",                       # no seconds
    "2024-01-31T08:00:00Z",
    "2024-01-31T08:00:00.1Z",
    "2024-01-31T08:00:00.123456789012345Z",    # fraction of any length
    "2024-01-31T08:00:00+0100",
    "2024-01-31T08:00+01:00",
    "2024-01-31T08:00:00-05:30",
    "2024-01-31T08:00:00+24:00",               # offset not range-checked
    "2024-01-31T08:00:00-9999",
    "2000-02-29T12:00:00Z",                    # divisible by 400
    "2024-02-29T00:00Z",
    "2024-12-31T23:59:59.999Z",
    "0000-01-01T00:00Z",
    "2024-04-30T00:00Z",
])
def test_accepted_times(value):
    assert read_one({"seq": 1, "type": "a", "time": value})[0].time == value


@pytest.mark.parametrize("value", [
    "1900-02-29T00:00Z",                       # divisible by 100, not 400
    "2023-02-29T00:00Z",
    "2024-02-30T00:00Z",
    "2024-04-31T00:00Z",
    "2024-13-01T00:00Z",
    "2024-00-10T00:00Z",
    "2024-01-00T00:00Z",
    "2024-01-32T00:00Z",
    "2024-01-31t08:00:00Z",                    # lowercase t
    "2024-01-31T08:00:00z",                    # lowercase z
    "2024-01-31 08:00:00Z",                    # space separator
    "2024-01-31T08:00:00+01",                  # offset hours alone
    "2024-01-31T08:00:00+1:00",
    "2024-01-31T08:00:00+01:0",
    "2024-01-31T24:00:00Z",                    # hour 24
    "2024-01-31T23:60Z",
    "2024-12-31T23:59:60Z",                    # leap second
    "2024-01-31T08:00:00",                     # missing zone
    "2024-01-31T08:00",
    "2024-01-31T08:00:00,5Z",                  # comma fraction
    "2024-01-31T08:00:00.Z",
    "2024-01-31T08:00.5Z",                     # fraction without seconds
    "2024-01-31T8:00Z",
    "2024-01-31",
    "24-01-31T08:00Z",
    "12024-01-31T08:00Z",
    "2024-01-31T08:00:00Z ",
    " 2024-01-31T08:00:00Z",
    "2024-01-31T08:00:00Z\n",
    "2024-01-31T08:00:00+01:00Z",
    "2024-01-31T08:00:00UTC",
    "\uff12\uff10\uff12\uff14-01-31T08:00Z",     # full-width digits
    "2024-01-31T08:00:00.\u0661Z",              # Arabic-Indic digit in the fraction
    "",
])
def test_rejected_times(value):
    error = rejects({"seq": 1, "type": "a", "time": value})
    assert error.line == 1


@pytest.mark.parametrize("value", [1706688000, None, True, {"at": "2024-01-31T08:00Z"}])
def test_time_must_be_a_string(value):
    rejects({"seq": 1, "type": "a", "time": value})


# --- string lengths ------------------------------------------------------------------------------

EMOJI = "\U0001F600"   # two UTF-16 code units

LIMITS = [
    ("tool", 500), ("run_id", 500), ("actor", 500), ("call_id", 500), ("call_signature", 2000),
    ("risk", 200), ("approval_id", 500), ("approval_scope", 500), ("outcome_id", 500),
]


def test_tool_of_300_emoji_is_600_units_and_too_long():
    rejects({"seq": 1, "type": "tool.call", "tool": EMOJI * 300}, ascii_only=False)
    rejects({"seq": 1, "type": "tool.call", "tool": EMOJI * 300})   # written as \ud83d\ude00 escapes
    with pytest.raises(TraceError):
        check_trace(EVERY_EVENT, [{"seq": 1, "type": "tool.call", "tool": EMOJI * 300}])


def test_tool_of_250_emoji_is_500_units_and_accepted():
    assert read_one({"seq": 1, "type": "tool.call", "tool": EMOJI * 250}, ascii_only=False)[0].tool == EMOJI * 250
    assert read_one({"seq": 1, "type": "tool.call", "tool": EMOJI * 250})[0].tool == EMOJI * 250
    report = check_trace(EVERY_EVENT, [{"seq": 1, "type": "tool.call", "tool": EMOJI * 250}])
    assert report.summary.tools == [EMOJI * 250]


@pytest.mark.parametrize("field, limit", LIMITS)
def test_string_limits_count_utf16_units(field, limit):
    assert getattr(read_one({"seq": 1, "type": "a", field: "x" * limit})[0], field) == "x" * limit
    rejects({"seq": 1, "type": "a", field: "x" * (limit + 1)})
    half = limit // 2
    assert getattr(read_one({"seq": 1, "type": "a", field: EMOJI * half}, ascii_only=False)[0], field) == EMOJI * half
    rejects({"seq": 1, "type": "a", field: EMOJI * half + "x"}, ascii_only=False)
    rejects({"seq": 1, "type": "a", field: EMOJI * (half + 1)})
    # a BMP character is one unit
    assert getattr(read_one({"seq": 1, "type": "a", field: "\u00e9" * limit}, ascii_only=False)[0], field)


@pytest.mark.parametrize("field, _limit", LIMITS)
def test_empty_strings_fail_the_minimum(field, _limit):
    rejects({"seq": 1, "type": "a", field: ""})


def test_tool_is_not_trimmed():
    assert read_one({"seq": 1, "type": "tool.call", "tool": " x "})[0].tool == " x "
    report = check_trace(contract({"id": "d", "kind": "deny_tool", "tool": "x"}),
                         events({"type": "tool.call", "tool": " x "}))
    assert report.passed


# --- null, types, unknowns -----------------------------------------------------------------------

OPTIONAL_FIELDS = ["time", "run_id", "actor", "tool", "call_id", "call_signature", "risk", "approval_id",
                   "approval_scope", "approved", "ok", "outcome_id", "verdict", "evidence_class",
                   "claims_completion", "confidence", "data"]


@pytest.mark.parametrize("field", OPTIONAL_FIELDS)
def test_null_is_rejected_for_optional_fields(field):
    error = rejects({"seq": 1, "type": "a", field: None})
    assert error.line == 1
    with pytest.raises(TraceError):
        check_trace(EVERY_EVENT, [{"seq": 1, "type": "a", field: None}])


@pytest.mark.parametrize("field, value", [
    ("approved", "true"), ("ok", 1), ("claims_completion", 0), ("tool", 5), ("call_id", ["c"]),
    ("verdict", "passed"), ("verdict", "Satisfied"), ("evidence_class", "hearsay"), ("confidence", "0.5"),
    ("confidence", True), ("run_id", {"a": 1}),
])
def test_wrong_field_types_are_rejected(field, value):
    rejects({"seq": 1, "type": "a", field: value})


@pytest.mark.parametrize("verdict", ["satisfied", "violated", "unknown", "retracted"])
def test_verdicts(verdict):
    assert read_one({"seq": 1, "type": "outcome.observed", "verdict": verdict})[0].verdict == verdict


@pytest.mark.parametrize("evidence", ["externally_observed", "configured_verifier", "manual_attestation",
                                      "self_attestation"])
def test_evidence_classes(evidence):
    assert read_one({"seq": 1, "type": "outcome.observed", "evidence_class": evidence})[0].evidence_class == evidence


def test_unknown_fields_and_event_types_are_accepted():
    event = {"seq": 1, "type": "my.custom.event", "weird": {"x": [1, None]}, "n": None, "args": None,
             "result": [1, 2], "output": "text", "status": 3, "duration_ms": 1.5, "extra": "\u00e9"}
    (found,) = read_one(event)
    assert found.type == "my.custom.event"
    report = check_trace(EVERY_EVENT, [event])
    assert report.summary.events == 1
    assert [v.event_seq for v in report.violations] == [1]


@pytest.mark.parametrize("data", ['{}', '{"k": [1, {"z": null}]}', '   {"k": 1}'])
def test_data_object_is_accepted(data):
    text = '{"seq": 1, "type": "a", "data": ' + data + "}"
    assert read_trace(text.encode())[0].data is not UNSET
    assert read_trace(("[" + text + "]").encode())[0].data is not UNSET


@pytest.mark.parametrize("data", ["[]", "[{}]", '"text"', "1", "true", "null"])
def test_data_must_be_an_object(data):
    text = '{"seq": 1, "type": "a", "data": ' + data + "}"
    with pytest.raises(TraceError):
        read_trace(text.encode())
    with pytest.raises(TraceError):
        read_trace(("[" + text + "]").encode())
    with pytest.raises(TraceError):
        check_trace(EVERY_EVENT, [{"seq": 1, "type": "a", "data": json.loads(data)}])


@pytest.mark.parametrize("value", [0, 1, 0.0, 1.0, 0.5, 1e-9, 0.999999])
def test_confidence_within_0_and_1_is_accepted(value):
    assert read_one({"seq": 1, "type": "a", "confidence": value})[0].confidence == value


@pytest.mark.parametrize("value", [-0.0001, 1.0001, -1, 2, 1e300])
def test_confidence_outside_0_and_1_is_rejected(value):
    rejects({"seq": 1, "type": "a", "confidence": value})


def test_invalid_event_in_a_list_is_an_error_naming_no_line():
    with pytest.raises(TraceError) as caught:
        check_trace(EVERY_EVENT, [{"seq": 1, "type": "a"}, {"seq": 2, "type": "a", "ok": "no"}])
    assert caught.value.line is None


# --- empty traces --------------------------------------------------------------------------------

@pytest.mark.parametrize("content", [b"", b"   ", b"\n\n\n", b" \t\r\n \r\n", b"\xef\xbb\xbf",
                                     b"\xef\xbb\xbf  \n", "\u00a0\u3000\n".encode()])
def test_empty_and_whitespace_only_traces_have_zero_events_and_pass(write, content):
    path = write("empty.jsonl", content)
    assert read_trace(path) == []
    assert list(iter_events(path)) == []
    rules = contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"},
                     {"id": "ok", "kind": "stop_is_final"},
                     {"id": "budget", "kind": "event_budget", "max_events": 0})
    report = check_trace(rules, path)
    assert report.passed
    assert report.error_count == 0 and report.warning_count == 0
    assert report.violations == []
    assert report.summary.events == 0
    assert report.summary.tools == []
    assert report.summary.final_outcome is None
    assert [r.checked for r in report.results] == [0, 0, 0]
    assert summarize_trace(path).events == 0


def test_comment_only_trace_has_zero_events():
    assert read_trace(b"# nothing yet\n\n   # still nothing\n") == []


def test_empty_trace_with_a_requiring_rule_still_fails():
    report = check_trace(contract({"id": "start", "kind": "require_event", "match": {"type": "run.start"}}), b"")
    assert not report.passed
    assert report.violations[0].event_seq is UNSET


def test_contract_is_validated_for_an_empty_trace_too():
    assert load_contract(EVERY_EVENT).name == "test-contract"
    assert check_trace(EVERY_EVENT, b"").contract.name == "test-contract"


@pytest.mark.parametrize("last", [False, True])
@pytest.mark.parametrize("cut", ['{"seq": 2, "type": "agent.message", "text": "first line', '{"seq": 2, "type',
                                 '{"seq": 2, "type": "a", "x": tru'])
def test_a_line_cut_short_says_events_are_one_line_each(cut, last):
    text = '{"seq": 1, "type": "a"}\n' + cut + ("" if last else '\nsecond line"}\n{"seq": 3, "type": "b"}\n')
    with pytest.raises(TraceError) as caught:
        read_trace(text.encode())
    assert caught.value.line == 2
    assert caught.value.problem.endswith("(each event must be one JSON object on one line)"), caught.value.problem


def _reads_as(read) -> str:
    try:
        return f"{len(read())} events"
    except (TraceError, ContractError) as error:
        return str(error)


def _nested(levels: int) -> bytes:
    """A valid event that nests `levels` deep in all (the event object is the first level)."""
    return b'{"seq": 1, "type": "x", "args": ' + b"[" * (levels - 1) + b"]" * (levels - 1) + b"}"


@pytest.mark.parametrize("form", ["jsonl", "array", "in memory"])
def test_events_may_nest_500_levels_deep_and_no_more_in_every_form(form):
    def read(levels: int):
        if form == "jsonl":
            return lambda: read_trace(_nested(levels) + b"\n")
        if form == "array":
            return lambda: read_trace(b"[" + _nested(levels) + b"]")
        return lambda: list(EventList([json.loads(_nested(levels))]))

    where = "events[0]" if form == "in memory" else "<bytes>:1"
    assert _reads_as(read(500)) == "1 events"
    assert _reads_as(read(501)) == f"{where}: invalid JSON: nested more than 500 levels deep"


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_contracts_may_nest_500_levels_deep_and_no_more_with_the_words_of_traces(tmp_path, suffix):
    def read(levels: int):
        # the root object is the first level, `x` (an unknown field, refused after the depth) the rest
        path = tmp_path / f"c{levels}{suffix}"
        document = json.dumps(contract({"id": "a", "kind": "deny_tool", "tool": "x"}))
        path.write_text(document[:-1] + ', "x": ' + "[" * (levels - 1) + "]" * (levels - 1) + "}")
        return lambda: load_contract(path).rules

    assert _reads_as(read(500)).endswith("$.x: unknown field; expected one of: $schema, version, name, description, "
                                         "extends, rules, compare")
    assert _reads_as(read(501)).endswith(": nested more than 500 levels deep")


def test_what_a_trace_reads_as_does_not_depend_on_the_traces_read_before():
    # The fast path skips validating event types already seen valid; what it has seen belongs to
    # one read, so a bad time stamp reads the same after other traces as in a fresh process.
    bad_time = b'[{"seq": 1, "type": "seen.before", "time": "2026-02-30T00:00:00Z"}]'
    first = _reads_as(lambda: read_trace(bad_time))
    ordinary = b"[" + b",".join(b'{"seq": %d, "type": "seen.before"}' % seq for seq in range(1, 50)) + b"]"
    assert _reads_as(lambda: read_trace(ordinary)) == "49 events"
    assert _reads_as(lambda: read_trace(bad_time)) == first == (
        "<bytes>:1: item 0: $.time: expected an ISO-8601 date-time with a zone such as 2025-01-31T08:00:00Z, "
        "got '2026-02-30T00:00:00Z'")


# -- in-memory events and paths from library callers ----------------------------------------------------------------

NO_SHELL = contract({"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"})


@pytest.mark.parametrize("value, problem", [
    (b"shell.exec", "holds a bytes, which is not a JSON value"),
    (float("nan"), "holds NaN or an infinity, which JSON has no form for"),
    (float("inf"), "holds NaN or an infinity, which JSON has no form for"),
    (__import__("decimal").Decimal("1"), "holds a Decimal, which is not a JSON value"),
    ({"a"}, "holds a set, which is not a JSON value"),
])
def test_an_in_memory_event_holding_what_json_cannot_is_refused_not_rewritten(value, problem):
    """msgspec would write bytes as base64 text: a call of b"shell.exec" became a call of
    "c2hlbGwuZXhlYw==", and a deny_tool of it passed."""
    with pytest.raises(TraceError) as caught:
        check_trace(NO_SHELL, [{"seq": 1, "type": "tool.call", "tool": value}])
    assert str(caught.value) == f"events[0]: not a JSON event object: {problem}"


def test_lines_of_a_file_opened_as_text_are_named_as_such(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(jsonl(events({"type": "tool.call", "tool": "shell.exec"})))
    with path.open(encoding="utf-8") as text, pytest.raises(TraceError) as caught:
        check_trace(NO_SHELL, text)
    assert str(caught.value) == ("events[0]: not a JSON event object: is a line of text, not an event object (a "
                                 "file opened in text mode? pass its path, or open it in binary mode)")
    with path.open("rb") as binary:
        assert not check_trace(NO_SHELL, binary).passed


def test_a_name_holding_a_nul_character_is_no_such_file(tmp_path):
    from agent_invariants.importers import import_file
    from agent_invariants.mutate import mutate_files

    contract_file = tmp_path / "c.json"
    contract_file.write_text(json.dumps(NO_SHELL), encoding="utf-8")
    for read in (lambda: check_trace(NO_SHELL, "runs\x00.jsonl"), lambda: read_trace("a\x00b"),
                 lambda: import_file("spans\x00.json"), lambda: mutate_files(contract_file, "runs\x00.jsonl")):
        with pytest.raises(TraceError, match=r"no such file \(the name holds a NUL character\)"):
            read()
    with pytest.raises(ContractError, match=r"no such file \(the name holds a NUL character\)"):
        load_contract("c\x00.json")


def test_standard_input_that_is_closed_is_said_so(monkeypatch):
    """A daemon or pythonw has no sys.stdin at all."""
    monkeypatch.setattr("sys.stdin", None)
    with pytest.raises(TraceError, match="^<stdin>: standard input is closed$"):
        check_trace(NO_SHELL, "-")


def test_a_file_name_that_is_not_utf8_is_refused_by_the_library_as_by_the_command(tmp_path):
    """No report could name it: the JSON renderer failed on the name once the check had passed."""
    name = os.fsdecode(bytes(tmp_path) + b"/n\xffb.jsonl")
    with open(name, "w", encoding="utf-8") as handle:
        handle.write(jsonl(events({"type": "tool.call", "tool": "fs.read"})))
    with pytest.raises(TraceError) as caught:
        check_trace(NO_SHELL, name)
    assert str(caught.value).endswith("n\\udcffb.jsonl: file name is not valid UTF-8; rename the file to read it")


@pytest.mark.parametrize("trace, problem", [
    (None, "not NoneType"), (3, "not int"), ({"seq": 1, "type": "x"}, "not one event")])
def test_a_trace_of_the_wrong_type_is_a_type_error_that_says_what_a_trace_is(trace, problem):
    with pytest.raises(TypeError) as caught:
        check_trace(NO_SHELL, trace)
    assert str(caught.value) == f"a trace is a path, bytes, an iterable of events or a TraceSource, {problem}"


@pytest.mark.parametrize("contract, problem", [(None, "not NoneType"), (3, "not int"), ([NO_SHELL], "not list")])
def test_a_contract_of_the_wrong_type_is_a_type_error_that_says_what_a_contract_is(contract, problem):
    with pytest.raises(TypeError) as caught:
        load_contract(contract)
    what = "a contract is a path, a mapping, JSON bytes, a ContractSource or a Contract"
    assert str(caught.value) == f"{what}, {problem}"


def test_an_empty_path_names_no_file_and_says_so():
    with pytest.raises(TraceError) as trace:
        check_trace(NO_SHELL, "")
    with pytest.raises(ContractError) as contract:
        load_contract("")
    assert (str(trace.value), str(contract.value)) == ('"": an empty path names no trace file',
                                                       '"": an empty path names no contract file')


@pytest.mark.parametrize("limit", [0, -5, None, 1.5, True])
def test_a_line_limit_below_one_byte_is_refused(limit):
    """-5 was taken, and every line was then over "the -5-byte limit"; True was a limit of one
    byte; and given with a list of events, which has no lines, a wrong limit passed unsaid."""
    with pytest.raises(ValueError, match=f"^max_line_bytes must be an integer of at least 1, got {limit}$"):
        check_trace(NO_SHELL, b'{"seq": 1, "type": "x"}\n', max_line_bytes=limit)
    with pytest.raises(ValueError, match=f"^max_line_bytes must be an integer of at least 1, got {limit}$"):
        check_trace(NO_SHELL, [{"seq": 1, "type": "x"}], max_line_bytes=limit)


def test_max_violations_takes_any_integer_from_zero_and_nothing_else():
    """10**30 raised from deep inside (islice's stop); None and "3" were TypeErrors from a comparison."""
    assert check_trace(NO_SHELL, [{"seq": 1, "type": "tool.call", "tool": "shell.exec"}],
                       max_violations=10**30).error_count == 1
    for value in (-1, None, "3", 1.5):
        with pytest.raises(ValueError, match=r"^max_violations must be 0 \(no limit\) or an integer above, got "):
            check_trace(NO_SHELL, [{"seq": 1, "type": "x"}], max_violations=value)


def test_in_memory_values_msgspec_writes_are_written_as_it_does():
    """A datetime, UUID, enum or dataclass in an event is written as msgspec writes it (refusing
    only what JSON has no form for), and a loop is too deep, as a file's nesting would be."""
    import dataclasses
    import datetime
    import enum
    import uuid

    class Kind(enum.Enum):
        A = "a"

    @dataclasses.dataclass
    class Point:
        x: int

    event = {"seq": 1, "type": "tool.call", "time": datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC),
             "tool": Kind.A, "call_id": uuid.UUID(int=1), "data": {"at": Point(1), "none": None}}
    [read] = list(EventList([event]))
    assert (read.time, read.tool, read.call_id) == ("2025-01-01T00:00:00Z", "a", "00000000-0000-0000-0000-000000000001")
    loop: dict[str, object] = {}
    loop["self"] = loop
    with pytest.raises(TraceError, match=r"^events\[0\]: invalid JSON: nested more than 500 levels deep$"):
        list(EventList([{"seq": 1, "type": "x", "data": loop}]))
    assert [event.seq for event in EventList([bytearray(b'{"seq": 7, "type": "x"}')])] == [7]


def test_an_in_memory_result_weighs_what_the_same_line_of_a_file_weighs():
    """`result_size` counts the bytes of a number beyond any double as written: the json module's
    spaces and escapes made an event read from memory heavier than the same one from a file."""
    rules = {"version": 2, "name": "size", "rules": [{"id": "small", "kind": "result_size", "tool": "t",
                                                      "max_bytes": 440}]}
    events_in = [{"seq": 1, "type": "tool.call", "tool": "t", "call_id": "c"},
                 {"seq": 2, "type": "tool.result", "tool": "t", "call_id": "c", "ok": True,
                  "result": {"note": "é" * 10, "n": 10**400, "none": None}}]
    from_file = check_trace(rules, b"".join(msgspec.json.encode(event) + b"\n" for event in events_in))
    from_memory = check_trace(rules, events_in)
    assert [violation.message for violation in from_memory.violations] == \
        [violation.message for violation in from_file.violations] == \
        ["The result of t at seq 2 is 449 bytes, over the 440 allowed."]
