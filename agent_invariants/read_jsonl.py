"""The JSONL reader: a trace of one event per line, read a chunk at a time.

    {"seq": 1, "type": "tool.call", "tool": "kb.search"}
    # a comment
    {"seq": 2, "type": "tool.result", "tool": "kb.search", "ok": true}

Blank lines and lines starting with `#` are skipped. Each chunk's lines are checked before any is
decoded (too long, nested too deeply, invalid UTF-8), so that whatever problem comes first in the
file is the one reported. A plain chunk of ordinary events goes through `fastpath`; any other goes
line by line, where a line the strict decoder refuses is retried the ways JSON.parse would read it
(`_retry_line`) before it is explained.
"""
from __future__ import annotations

from collections.abc import Iterator
from io import BytesIO
from typing import NamedTuple

import msgspec

from agent_invariants import fastpath
from agent_invariants._js import JS_WHITESPACE, replace_lone_surrogates, utf16_len_of_utf8
from agent_invariants.errors import TraceError
from agent_invariants.events import Event, InvalidEvent, decode_event, decode_last_key_wins, decode_lax_event
from agent_invariants.jsontext import INVALID_TOO_DEEP, MAX_NESTING, decode_problem, too_deep_at
from agent_invariants.read_state import ReadState

__all__ = ("content_length", "jsonl_batches")

_BLANK_OR_COMMENT_LEADS = frozenset((b" ", b"\t", b"\r", b"\n", b"\x0b", b"\x0c", b"#"))


def jsonl_batches(state: ReadState, head: bytes, chunks: Iterator[bytes], lines_before: int) -> Iterator[list[Event]]:
    """JSONL, one list of events per chunk read (`lines_before` blank lines were dropped).

    msgspec checks types, bounds, enums and lengths while decoding. What it cannot check is
    done here, cheaply in the common case: seq increasing, the type already seen clean (a
    set lookup), and the time stamps, all of a chunk's at once. A plain chunk (one that
    cannot hold characters beyond the BMP, so UTF-16 lengths are what msgspec checked) of
    ordinary events is decoded and checked in bulk (`fastpath.plain_batch`, looked up on the
    module so that a test can turn the shortcut off); any other goes line by line, and whatever
    is unusual goes through `ReadState.accept`, which validates fully and explains. Blank and
    comment lines are recognised before decoding, so they cost no exception."""
    decode = decode_event
    clean_types = state.clean_types
    keep_lengths = state.keep_lengths
    jump = state.lines.jump
    prev: int | float = -1
    lineno = lines_before
    skipped = lines_before   # lines that held no event so far: index = lineno - 1 - skipped
    done = 0                 # events in earlier batches
    jump(0, lines_before + 1)
    fields = state.fields
    for lines, plain in _split_lines(state, head, chunks, lines_before):
        if not fields.full:
            fields.add(lines)
        if plain:
            batch = fastpath.plain_batch(lines, prev, clean_types)
            if batch is not None:
                lineno += len(lines)
                prev = batch[-1].seq
                state.check_times(batch, done)
                if keep_lengths:
                    state.lines.add_lengths([_line_units(line) for line in lines])
                done += len(batch)
                yield batch
                continue
        batch = []
        append = batch.append
        lengths: list[int] = []
        event: Event | None
        for raw in lines:
            lineno += 1
            if raw[:1] in _BLANK_OR_COMMENT_LEADS:
                stripped = raw.strip()
                if not stripped or stripped[:1] == b"#":
                    skipped += 1
                    jump(lineno - skipped, lineno + 1)
                    continue
            try:
                event = decode(raw)
            except (msgspec.DecodeError, RecursionError):
                # without its `\n`, so that a line cut inside a string reads as cut short
                event = _retry_line(state, raw[:-1] if raw[-1:] == b"\n" else raw, lineno, batch, done)
                if event is None:
                    skipped += 1
                    jump(lineno - skipped, lineno + 1)
                    continue
                prev = _accept_line(state, event, raw, prev, lineno, batch, done)
            else:
                if prev < event.seq and event.type in clean_types and plain:
                    prev = event.seq
                else:
                    prev = _accept_line(state, event, raw, prev, lineno, batch, done)
            append(event)
            if keep_lengths:
                lengths.append(_line_units(raw))
        state.check_times(batch, done)
        if keep_lengths:
            state.lines.add_lengths(lengths)
        done += len(batch)
        yield batch


def _accept_line(state: ReadState, event: Event, raw: bytes, prev: int | float, lineno: int,
                 batch: list[Event], done: int) -> int | float:
    """Full validation of one event (`ReadState.accept`), its problem reported at `lineno`."""
    try:
        return state.accept(event, raw, prev)
    except InvalidEvent as exc:
        raise _fail_after_times(state, batch, done, lineno, str(exc)) from None


def _fail_after_times(state: ReadState, batch: list[Event], done: int, lineno: int, problem: str) -> TraceError:
    """The error for `lineno`, unless an earlier event of this batch has a bad time stamp:
    time stamps are checked per batch, and the first problem in the file must win."""
    state.check_times(batch, done)
    return state.fail(lineno, problem)


def _split_lines(state: ReadState, head: bytes, chunks: Iterator[bytes],
                 lines_before: int = 0) -> Iterator[tuple[list[bytes], bool]]:
    """Lines of the input (each with its `\\n`, but for an unfinished last line), a chunk at a
    time, each list with a flag: True when the chunk is plain (see `fastpath.bmp_only`).

    A line too long, nested too deeply, or holding invalid UTF-8 anywhere (msgspec does not
    look inside the content it skips: unknown fields, `data`, raw payloads) ends the reading
    at that line, after the lines before it were handed out, so whatever problem comes first
    in the file is the one reported. (BytesIO splits with memchr; `bytes.split` looks at one
    byte at a time, which costs more than decoding some events.)
    """
    limit = state.max_line_bytes
    pending: list[bytes] = []   # the unfinished last line, in the pieces it came in: joined once, when it
    waiting = 0                 # ends (a line of many chunks copied again at each was quadratic)
    for chunk in _chain_first(head, chunks):
        if b"\n" not in chunk:   # the line goes on
            pending.append(chunk)
            waiting += len(chunk)
            if waiting > limit + 1:   # too long even if a `\r\n` ends it
                raise state.fail(lines_before + 1, state.too_long(waiting, at_least=True))
            continue
        data = b"".join((*pending, chunk)) if pending else chunk
        lines = BytesIO(data).readlines()
        tail = lines.pop() if lines[-1][-1:] != b"\n" else b""
        pending, waiting = ([tail], len(tail)) if tail else ([], 0)
        ascii_only = data.isascii()
        problem = _first_line_problem(state, lines, ascii_only)
        if problem is not None:
            at, message = problem
            yield lines[:at], False
            raise state.fail(lines_before + at + 1, message)
        lines_before += len(lines)
        yield lines, fastpath.bmp_only(data, ascii_only)
        if waiting > limit + 1:   # the unfinished last line is too long even if a `\r\n` ends it
            raise state.fail(lines_before + 1, state.too_long(waiting, at_least=True))
    if pending:
        tail = b"".join(pending)
        ascii_only = tail.isascii()
        problem = _first_line_problem(state, [tail], ascii_only)
        if problem is not None:
            raise state.fail(lines_before + 1, problem[1])
        yield [tail], fastpath.bmp_only(tail, ascii_only)


def _first_line_problem(state: ReadState, lines: list[bytes], ascii_only: bool) -> tuple[int, str] | None:
    """The first of `lines` (index, message) that is too long, nested too deeply or not UTF-8.
    Each test is skipped when the whole chunk cannot fail it."""
    limit = state.max_line_bytes
    longest = max(map(len, lines)) if lines else 0
    found: list[tuple[int, str]] = []
    if longest > limit:
        at = next((i for i, line in enumerate(lines) if content_length(line) > limit), None)
        if at is not None:
            found.append((at, state.too_long(content_length(lines[at]))))
    if longest > MAX_NESTING:
        deep = next((i for i, line in enumerate(lines) if too_deep_at(line) is not None), None)
        if deep is not None:
            found.append((deep, INVALID_TOO_DEEP))
    if not ascii_only:
        bad = _first_invalid_utf8(lines)
        if bad is not None:
            found.append((bad[0], f"invalid UTF-8 (byte {bad[1]} of the line)"))
    return min(found) if found else None


def _retry_line(state: ReadState, raw: bytes, lineno: int, batch: list[Event], done: int) -> Event | None:
    """A line the strict decoder refused: read it laxly (seq `3.0`, out-of-range values to
    explain later), skip it if blank or a comment, decode it JS-trimmed, or explain.

    Problems are kept as text, never as exceptions: an exception held in a local refers to
    this frame through its traceback, a cycle that only the paused cyclic collector could
    free, so every refused line would stay in memory."""
    found = _lax(raw)
    if not isinstance(found, _Problem):
        return found
    problem = found
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        invalid = f"invalid UTF-8 (byte {exc.start + 1} of the line)"
        raise _fail_after_times(state, batch, done, lineno, invalid) from None
    trimmed = text.strip(JS_WHITESPACE)
    if not trimmed or trimmed.startswith("#"):
        return None
    if trimmed != text.strip(" \t\r\n"):
        found = _lax(trimmed.encode("utf-8"))
        if not isinstance(found, _Problem):
            return found
        problem = found
    encoded = trimmed.encode("utf-8")
    line = replace_lone_surrogates(encoded)
    if line != encoded:
        found = _lax(line)
        if not isinstance(found, _Problem):
            return found
        problem = found   # now the problem is another one: name that
    event = decode_last_key_wins(line)
    if event is not None:
        return event
    message = problem.text
    if trimmed == "{" or problem.truncated and trimmed.startswith("{"):
        message += " (each event must be one JSON object on one line)"
    raise _fail_after_times(state, batch, done, lineno, message)


class _Problem(NamedTuple):
    """Why a line did not decode: the message, and whether the JSON was cut short."""

    text: str
    truncated: bool


def _lax(raw: bytes) -> Event | _Problem:
    """The event on a line read laxly (any JSON number as seq), or why it does not decode."""
    try:
        return decode_lax_event(raw)
    except (msgspec.DecodeError, RecursionError) as exc:
        return _Problem(decode_problem(exc, Event, raw), str(exc) == "Input data was truncated")


def content_length(line: bytes) -> int:
    """Length of a line without its `\\n` and the `\\r` of a CRLF end (not part of the line)."""
    size = len(line)
    if line.endswith(b"\n"):
        size -= 1
    if line.endswith(b"\r", 0, size):
        size -= 1
    return size


def _line_units(line: bytes) -> int:
    """Length of a line in UTF-16 code units, without its end (what a SARIF region spans)."""
    size = content_length(line)
    return size if line.isascii() else utf16_len_of_utf8(line[:size])


def _first_invalid_utf8(lines: list[bytes]) -> tuple[int, int] | None:
    """(index of the first line with invalid UTF-8, 1-based byte in that line), or None."""
    try:
        b"".join(lines).decode("utf-8")
        return None
    except UnicodeDecodeError:
        pass
    for at, line in enumerate(lines):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as exc:
            return at, exc.start + 1
    return None


def _chain_first(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    if first:
        yield first
    yield from rest
