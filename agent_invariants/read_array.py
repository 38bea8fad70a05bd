"""The JSON-array reader: a trace that is one array of events, validated like JSONL.

    [
      {"seq": 1, "type": "tool.call", "tool": "kb.search"},
      {"seq": 2, "type": "tool.result", "tool": "kb.search", "ok": true}
    ]

`jsonarray` finds the items in the stream (and their lines); this turns them into events. A
stretch of items msgspec parsed together goes through `fastpath` when all are ordinary; any other
item is validated alone, and its problems name the item (`item 3: $.tool: ...`) and its line.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator

import msgspec

from agent_invariants import fastpath
from agent_invariants._js import replace_lone_surrogates
from agent_invariants.events import Event, InvalidEvent, decode_last_key_wins, decode_lax_event
from agent_invariants.jsonarray import ArrayError, Stretch, scan_array
from agent_invariants.jsontext import INVALID_TOO_DEEP, MAX_NESTING, decode_problem, syntax_error, too_deep_at
from agent_invariants.read_state import ReadState

__all__ = ("array_batches",)


def array_batches(state: ReadState, head: bytes, start: int, chunks: Iterator[bytes],
                  lines_before: int) -> Iterator[list[Event]]:
    """The events of the array whose `[` is at `head[start]` (after `lines_before` dropped blank
    lines), one list per chunk read."""
    first_line = lines_before + 1 + head.count(b"\n", 0, start)
    prev: int | float = -1
    index = 0
    items = scan_array(head, start, chunks, line=first_line, lines=state.lines,
                       max_item_bytes=state.max_line_bytes, max_depth=MAX_NESTING + 1)
    try:
        for found in items:
            batch: list[Event] = []
            pieces: Iterable[tuple[int, bytes]]
            for piece in found:
                if not state.fields.full:
                    state.fields.add(piece.items if isinstance(piece, Stretch) else (piece[1],))
                if isinstance(piece, Stretch):
                    events = fastpath.plain_stretch(piece, prev, state.clean_types)
                    if events is not None:
                        state.check_times(events, index)
                        batch += events
                        prev = events[-1].seq
                        index += len(events)
                        continue
                    pieces = zip(piece.lines, map(bytes, piece.items), strict=True)
                else:
                    pieces = (piece,)
                for line, item in pieces:
                    event = _array_event(state, item, index, line, prev)
                    prev = event.seq
                    batch.append(event)
                    index += 1
            yield batch
    except ArrayError as exc:
        raise state.fail(exc.line, exc.message) from None


def _array_event(state: ReadState, item: bytes, index: int, line: int, prev: int | float) -> Event:
    """One item of a JSON array, validated like a JSONL line (and named by its position)."""
    event: Event | None
    item = replace_lone_surrogates(item)
    deep = too_deep_at(item)
    if deep is not None:
        raise state.fail(line + item.count(b"\n", 0, deep), INVALID_TOO_DEEP)
    if not item.isascii():
        try:
            item.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise state.fail(line + item.count(b"\n", 0, exc.start),
                             f"item {index}: invalid UTF-8 (byte {exc.start + 1} of the item)") from None
    try:
        try:
            event = decode_lax_event(item)
        except (msgspec.DecodeError, RecursionError):
            event = decode_last_key_wins(item)
            if event is None:
                raise
        state.accept(event, item, prev)
    except msgspec.ValidationError as exc:
        raise state.fail(line, f"item {index}: {decode_problem(exc, Event)}") from None
    except (msgspec.DecodeError, RecursionError) as exc:
        broken = syntax_error(item)
        if broken is None:
            raise state.fail(line, f"item {index}: {decode_problem(exc, Event)}") from None
        offset, reason = broken
        raise state.fail(line + item.count(b"\n", 0, offset),
                         f"item {index}: invalid JSON: {reason} (byte {offset + 1} of the item)") from None
    except InvalidEvent as exc:
        raise state.fail(line, f"item {index}: {exc}") from None
    return event
