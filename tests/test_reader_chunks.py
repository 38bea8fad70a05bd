"""The trace reader over many chunks: a long trace is read 64 KiB at a time, and most chunks take
a fast path (one bulk decode, then bulk checks). Whatever is unusual in a chunk, and wherever in
the chunk it sits, the events, their physical lines and the first error must be exactly those of
reading the file line by line."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agent_invariants.fastpath as fastpath_module
from agent_invariants import TraceError, TraceFile, check_trace, read_trace

from support import contract, examples

CHUNK = 1 << 16
LINE = 64   # every generated line is this long with its newline, so chunks end on line ends


def line(seq: int, kind: str = "tool.call", **fields) -> str:
    """One JSONL line of exactly LINE bytes (padded inside `call_id`)."""
    event = {"seq": seq, "type": kind, **fields}
    text = json.dumps(event, separators=(",", ":"))
    pad = LINE - 1 - len(text) - len(',"call_id":""')
    assert pad >= 0, text
    return json.dumps({**event, "call_id": "x" * pad}, separators=(",", ":"))


def trace(count: int) -> list[str]:
    return [line(seq) for seq in range(1, count + 1)]


# Line numbers (1-based) around the first two chunk ends, where a chunk's first or last line sits.
PER_CHUNK = CHUNK // LINE
PLACES = [1, 2, PER_CHUNK - 1, PER_CHUNK, PER_CHUNK + 1, PER_CHUNK + 2, 2 * PER_CHUNK, 2 * PER_CHUNK + 1, 3000]
TOTAL = 3 * PER_CHUNK + 17


def encode(lines: list[str]) -> bytes:
    data = "".join(text + "\n" for text in lines).encode("utf-8")
    return data


def test_generated_lines_fill_chunks_exactly():
    data = encode(trace(TOTAL))
    assert len(data) == TOTAL * LINE and CHUNK % LINE == 0


@pytest.mark.parametrize("place", PLACES)
def test_a_repeated_seq_is_reported_at_its_line(place):
    lines = trace(TOTAL)
    lines[place - 1] = line(place - 1 if place > 1 else 0)
    if place == 1:   # seq 0 then seq 2: valid; make line 2 repeat instead
        lines[1] = line(0)
        place = 2
    with pytest.raises(TraceError) as caught:
        read_trace(encode(lines))
    assert caught.value.line == place
    assert "strictly increasing" in caught.value.problem


@pytest.mark.parametrize("place", PLACES)
def test_an_unknown_field_type_error_is_reported_at_its_line(place):
    lines = trace(TOTAL)
    lines[place - 1] = json.dumps({"seq": place, "type": "tool.call", "tool": 7})
    with pytest.raises(TraceError) as caught:
        read_trace(encode(lines))
    assert caught.value.line == place
    assert "$.tool" in caught.value.problem


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("insert", ["", "   ", "# a comment", "\r"])
def test_blank_lines_and_comments_shift_the_lines_of_later_events(place, insert):
    lines = trace(TOTAL)
    lines.insert(place - 1, insert)
    source = TraceFile(encode(lines))
    events = list(source)
    assert [event.seq for event in events] == list(range(1, TOTAL + 1))
    for index in (0, place - 2, place - 1, place, TOTAL - 1):
        if 0 <= index < TOTAL:
            expected = index + 1 if index < place - 1 else index + 2
            assert source.line_of(index) == expected, index


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("unusual, read_as", [
    ({"seq": "SEQ.0"}, {}),                                      # an integral float seq
    ({"type": "  tool.call\t"}, {"type": "tool.call"}),          # a type to trim
    ({"tool": "caf\\u00e9"}, {"tool": "café"}),                   # an escape: not a plain chunk
    ({"tool": "café"}, {}),                                      # non-ASCII: not a plain chunk
    ({"type": "first.time.seen"}, {}),                           # a type never seen before
])
def test_unusual_but_valid_events_read_as_line_by_line(place, unusual, read_as):
    lines = trace(TOTAL)
    fields = {"seq": place, "type": "tool.call", **unusual}
    text = json.dumps(fields, ensure_ascii=False).replace('"SEQ.0"', f"{place}.0").replace("\\\\u", "\\u")
    lines[place - 1] = text
    events = read_trace(encode(lines))
    assert [event.seq for event in events] == list(range(1, TOTAL + 1))
    assert all(type(event.seq) is int for event in events)
    got = events[place - 1]
    expected = {**fields, "seq": place, **read_as}
    assert got.type == expected["type"]
    if "tool" in expected:
        assert got.tool == expected["tool"]


@pytest.mark.parametrize("place", PLACES)
def test_an_astral_tool_name_too_long_in_utf16_is_caught_in_any_chunk(place):
    lines = trace(TOTAL)
    lines[place - 1] = json.dumps({"seq": place, "type": "tool.call", "tool": "\U0001F600" * 300})
    with pytest.raises(TraceError) as caught:
        read_trace(encode(lines))
    assert caught.value.line == place
    assert "at most 500 characters, got 600" in caught.value.problem


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("escape, units", [("\\u00e9", 1), ("\\ud83d\\ude00", 2), ("\\uD83D\\uDE00", 2)])
def test_escaped_text_counts_utf16_units_in_any_chunk(place, escape, units):
    lines = trace(TOTAL)
    for seq in (3, PER_CHUNK + 7, 2 * PER_CHUNK + 9):   # escapes that need no second look, elsewhere
        lines[seq - 1] = json.dumps({"seq": seq, "type": "tool.call", "tool": "caf\u00e9"})
    count = 500 // units + 1   # one character too many
    lines[place - 1] = f'{{"seq": {place}, "type": "tool.call", "tool": "{escape * count}"}}'
    with pytest.raises(TraceError) as caught:
        read_trace(encode(lines))
    assert caught.value.line == place
    assert caught.value.problem.startswith("$.tool:") and "500" in caught.value.problem
    lines[place - 1] = f'{{"seq": {place}, "type": "tool.call", "tool": "{escape * (count - 1)}"}}'
    events = read_trace(encode(lines))
    assert len(events) == TOTAL and len(events[place - 1].tool) == count - 1
    assert events[2].tool == "café"


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("stamp", ["2025-02-30T10:00:00Z", "2025-01-01t10:00:00Z", "2025-01-01T10:00:00"])
def test_a_bad_time_stamp_among_good_ones_is_reported_at_its_line(place, stamp):
    lines = [json.dumps({"seq": seq, "type": "tool.call", "time": f"2025-01-01T10:{seq % 60:02d}:00.5+01:00"})
             for seq in range(1, TOTAL + 1)]
    assert read_trace(encode(lines))[-1].time == f"2025-01-01T10:{TOTAL % 60:02d}:00.5+01:00"
    lines[place - 1] = json.dumps({"seq": place, "type": "tool.call", "time": stamp})
    with pytest.raises(TraceError) as caught:
        read_trace(encode(lines))
    assert caught.value.line == place
    assert caught.value.problem.startswith("$.time:") and stamp in caught.value.problem


@pytest.mark.parametrize("place", PLACES)
def test_a_bad_time_stamp_is_reported_at_its_line(place):
    lines = trace(TOTAL)
    lines[place - 1] = json.dumps({"seq": place, "type": "tool.call", "time": "2025-02-30T10:00:00Z"})
    with pytest.raises(TraceError) as caught:
        read_trace(encode(lines))
    assert caught.value.line == place
    assert "$.time" in caught.value.problem


def test_violations_carry_physical_lines_across_chunks():
    lines = trace(TOTAL)
    lines.insert(PER_CHUNK, "")                     # a blank line starting the second chunk
    marked = {PER_CHUNK - 1, PER_CHUNK + 5, 2 * PER_CHUNK + 3}
    for index in marked:
        seq = json.loads(lines[index])["seq"]
        lines[index] = line(seq, "marker")
    report = check_trace(contract({"id": "m", "kind": "deny_event", "match": {"type": "marker"}}),
                         encode(lines))
    assert [violation.line for violation in report.violations] == sorted(index + 1 for index in marked)


def non_ascii_trace(count: int) -> list[str]:
    """Lines holding BMP text beyond ASCII (2- and 3-byte UTF-8): such chunks take the bulk path."""
    return [json.dumps({"seq": seq, "type": "tool.call", "tool": "kb.search", "call_id": f"c{seq}",
                        "actor": "agënt-工具"}, ensure_ascii=False) for seq in range(1, count + 1)]


@pytest.mark.parametrize("place", [1, 700, 1500, 2999])
@pytest.mark.parametrize("tool", ids=["latin", "cjk", "astral"], argvalues=[
    "é" * 501,                    # BMP: one UTF-16 unit each
    "工" * 501,
    "é" * 499 + "\U0001F600",     # astral: two units
])
def test_length_limits_count_utf16_units_in_non_ascii_chunks(place, tool):
    lines = non_ascii_trace(3000)
    lines[place - 1] = json.dumps({"seq": place, "type": "tool.call", "tool": tool}, ensure_ascii=False)
    with pytest.raises(TraceError) as caught:
        read_trace(encode(lines))
    assert caught.value.line == place
    assert caught.value.problem.startswith("$.tool:") and "500" in caught.value.problem


def test_non_ascii_text_at_the_limit_is_read_as_written():
    lines = non_ascii_trace(3000)
    lines[1500] = json.dumps({"seq": 1501, "type": "tool.call", "tool": "é" * 500}, ensure_ascii=False)
    lines[2500] = json.dumps({"seq": 2501, "type": "tool.call", "tool": "é" * 498 + "\U0001F600"},
                             ensure_ascii=False)
    events = read_trace(encode(lines))
    assert [event.seq for event in events] == list(range(1, 3001))
    assert events[0].actor == "agënt-工具"
    assert events[1500].tool == "é" * 500 and events[2500].tool.endswith("\U0001F600")


# --- the bulk path against line by line, on random traces ------------------------------------------

ORDINARY = st.builds(lambda kind, tool: {"type": kind, "tool": tool},
                     st.sampled_from(["tool.call", "tool.result", "agent.message"]),
                     st.sampled_from(["kb.search", "crm.read", "café", "工具"]))
UNUSUAL_LINES = st.sampled_from([
    "", "   ", "# comment", "\r", '{"seq": SEQ.0, "type": "tool.call"}', '{"seq": SEQ, "type": " tool.call "}',
    '{"seq": SEQ, "type": "tool.call", "tool": "caf\\u00e9"}', '{"seq": SEQ, "type": "new.kind"}',
    '{"seq": SEQ, "type": "tool.call", "time": "2025-02-30T10:00:00Z"}', '{"seq": 0, "type": "tool.call"}',
    '{"seq": SEQ, "type": "tool.call", "tool": ""}', '{"seq": SEQ, "type": 5}', "{broken",
    '{"seq": SEQ, "type": "tool.call", "tool": "\U0001F600"}',
    '{"seq": SEQ, "type": "tool.call", "tool": "\\ud83d\\ude00"}',
    '{"seq": SEQ, "type": "tool.call", "tool": "lone \\ud83d"}',
    '{"seq": SEQ, "type": "tool.call", "tool": "\\u00e9"}',
])


@st.composite
def traces(draw) -> bytes:
    """Ordinary events, and at one or two places an unusual line."""
    count = draw(st.integers(1, 12))
    unusual = draw(st.dictionaries(st.integers(1, count), UNUSUAL_LINES, min_size=1, max_size=2))
    lines = [unusual[seq].replace("SEQ", str(seq)) if seq in unusual
             else json.dumps({"seq": seq, **draw(ORDINARY)}, ensure_ascii=draw(st.booleans()))
             for seq in range(1, count + 1)]
    return "\n".join(lines).encode() + draw(st.sampled_from([b"", b"\n", b"\r\n"]))


def read_both_ways(data: bytes, monkeypatch) -> list:
    outcomes = []
    for bulk in (True, False):
        with monkeypatch.context() as patch:
            if not bulk:
                patch.setattr(fastpath_module, "plain_batch", lambda lines, prev, clean_types: None)
            source = TraceFile(data)
            try:
                events = [event for batch in source.batches() for event in batch]
                outcomes.append(([repr(event) for event in events], [source.line_of(i) for i in range(len(events))]))
            except TraceError as exc:
                outcomes.append(str(exc))
    return outcomes


@pytest.mark.slow
@settings(max_examples=examples(300), deadline=None)
@given(data=traces())
def test_the_bulk_path_reads_what_line_by_line_reads(data):
    with pytest.MonkeyPatch.context() as monkeypatch:
        bulk, line_by_line = read_both_ways(data, monkeypatch)
    assert bulk == line_by_line


@pytest.mark.parametrize("ending", ["\n", "\r\n"])
def test_lines_spanning_many_chunks_read_whole_among_short_ones(ending):
    """A line of 40 chunks (a large result, under a raised limit) is read whole between short
    lines; the pieces of a line that goes on are joined once it ends (copying the line again at
    each chunk made reading quadratic: 50 MB took 35 s)."""
    long_line = json.dumps({"seq": 2, "type": "tool.result", "call_id": "c", "ok": True,
                            "result": {"page": "y" * (40 * CHUNK + 17)}})
    first = json.dumps({"seq": 1, "type": "tool.call", "tool": "fetch", "call_id": "c"})
    text = ending.join([first, long_line,
                        json.dumps({"seq": 3, "type": "run.completed"}), long_line.replace('"seq": 2', '"seq": 4')])
    events = read_trace(text.encode(), max_line_bytes=64 * CHUNK)
    assert [(event.seq, event.type) for event in events] == [
        (1, "tool.call"), (2, "tool.result"), (3, "run.completed"), (4, "tool.result")]
    assert len(json.loads(bytes(events[1].result))["page"]) == 40 * CHUNK + 17
    with pytest.raises(TraceError) as caught:
        read_trace(text.encode(), max_line_bytes=20 * CHUNK)
    read = 21 * CHUNK - len(first) - len(ending)   # of line 2, when the chunk that passes the limit is read
    assert (caught.value.line, caught.value.problem) == (
        2, f"line is at least {read:,} bytes, over the {20 * CHUNK:,}-byte limit (raise it with "
           "--max-line-bytes, or max_line_bytes in the library and the pytest table)")
