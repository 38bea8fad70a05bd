"""The records of a source file, one decoded JSON value per line, with the line it is on.

Every format we import is JSON Lines (OTLP JSON as the Collector's file exporter writes it, the
Agents SDK's exported spans, LangSmith runs, MCP session logs), or one JSON document holding a list
of records (a LangSmith or Agents SDK export saved whole). Records are read 64 KiB at a time and
never held beyond the one being handed out: a line longer than `max_line_bytes` is refused rather
than buffered, and a whole-file document is read only up to the same bound.

Blank lines are skipped. A line that is not JSON, not UTF-8 or nested too deep stops the import
with `file:line: ...`, like a native trace; a lone UTF-16 surrogate escape (`\\ud83d` without its
partner, as JavaScript writes a string cut inside an emoji) is read as U+FFFD, as in a native trace.
"""
from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO, NamedTuple

import msgspec

from agent_invariants._js import replace_lone_surrogates, utf16_len_of_utf8
from agent_invariants._paths import input_name, missing, named_file_problem
from agent_invariants.errors import RAISE_LINE_LIMIT, TraceError
from agent_invariants.jsontext import (
    INVALID_TOO_DEEP,
    decode_problem,
    invalid_utf8,
    syntax_problem_in_file,
    too_deep_at,
    wide_unicode,
)

__all__ = ("MAX_RUNS", "Record", "SourceFile", "read_records", "too_many_runs")

MAX_RUNS = 100_000
"""The most runs one input may hold: each is remembered (its id, and its last line from a first
pass over a file), so an input of endless new runs (sessions, trace ids) must stop too."""


def too_many_runs(file: str, line: int | None) -> TraceError:
    """The error of the run past `MAX_RUNS`, at its line."""
    return TraceError(file, line, f"the input holds more than {MAX_RUNS:,} runs, the most an import reads; "
                                  "convert it in parts")


_CHUNK = 1 << 16
_decode = msgspec.json.Decoder().decode


class Record:
    """One record of a source file: its physical line (1-based), its JSON text (`raw`, for JSON
    Lines; None for an item of a whole-file document) and its JSON `value`, decoded when first
    asked for (a format with a typed decoder reads `raw` itself, faster)."""

    __slots__ = ("_value", "file", "line", "raw")

    def __init__(self, line: int, raw: bytes | None, value: Any = None, file: str = "") -> None:
        self.line, self.raw, self._value, self.file = line, raw, value, file

    @property
    def value(self) -> Any:
        if self.raw is not None and self._value is None:
            try:
                self._value = _decode(self.raw)
            except (msgspec.DecodeError, RecursionError) as exc:
                raise TraceError(self.file, self.line, decode_problem(exc, data=self.raw)) from None
        return self._value


class SourceFile(NamedTuple):
    """A source being imported: `name` for messages and provenance (the path as given, `<stdin>`
    for standard input), `path` to open (`-` for standard input) or None with `data`."""

    name: str
    path: str | None
    data: bytes | None = None

    @classmethod
    def of(cls, source: str | os.PathLike[str] | bytes, name: str | None = None) -> SourceFile:
        if isinstance(source, (bytes, bytearray, memoryview)):
            return cls(name or "<bytes>", None, bytes(source))
        path = os.fspath(source)
        return cls(name or input_name(path), path)


def read_records(source: SourceFile, max_line_bytes: int) -> Iterator[Record]:
    """The records of `source`, in file order. Raises TraceError naming the file and line."""
    stream = _open(source)
    try:
        yield from _records(source.name, stream, max_line_bytes)
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


def _open(source: SourceFile) -> BinaryIO:
    if source.data is not None:
        from io import BytesIO

        return BytesIO(source.data)
    if source.path == "-":
        return sys.stdin.buffer
    assert source.path is not None
    problem = named_file_problem(source.path)   # (each event names it)
    if problem is not None:
        raise TraceError(source.name, None, problem)
    try:
        if os.path.isdir(source.path):
            raise TraceError(source.name, None, "is a folder, not a file (name the files to import)")
        return open(source.path, "rb")  # noqa: SIM115   (closed by read_records)
    except FileNotFoundError:
        raise TraceError(source.name, None, missing(source.path)) from None
    except PermissionError:
        raise TraceError(source.name, None, "permission denied") from None
    except OSError as exc:
        raise TraceError(source.name, None, f"cannot be read: {exc.strerror or exc}") from None


def _records(name: str, stream: BinaryIO, max_line_bytes: int) -> Iterator[Record]:
    head = _head(name, stream)
    if _one_document(head):
        yield from _document(name, head, stream, max_line_bytes)
        return
    for line, text in _lines(name, head, stream, max_line_bytes):
        record = _record(name, text, line, max_line_bytes)
        if record is not None:
            yield record


def _head(name: str, stream: BinaryIO) -> bytes:
    """The first chunk, without a UTF-8 byte order mark."""
    head = _read(name, stream, 0)
    wide = wide_unicode(head)
    if wide is not None:
        raise TraceError(name, 1, wide)
    return head[3:] if head.startswith(b"\xef\xbb\xbf") else head


def _read(name: str, stream: BinaryIO, line: int) -> bytes:
    try:
        return stream.read(_CHUNK)
    except OSError as exc:
        raise TraceError(name, line or None, f"cannot be read: {exc.strerror or exc}") from None


def _lines(name: str, head: bytes, stream: BinaryIO, max_line_bytes: int) -> Iterator[tuple[int, bytes]]:
    """(line number, text) of each line; a line is never longer than `max_line_bytes` in memory
    (each chunk is split once: a long line costs no more than its length)."""
    line = 0
    parts: list[bytes] = []   # the line read so far
    size = 0
    chunk = head
    while chunk:
        pieces = chunk.split(b"\n")
        for piece in pieces[:-1]:
            line += 1
            if size + len(piece) > max_line_bytes:
                raise TraceError(name, line, _too_long(max_line_bytes))
            parts.append(piece)
            yield line, b"".join(parts)
            parts, size = [], 0
        if pieces[-1]:
            parts.append(pieces[-1])
            size += len(pieces[-1])
            if size > max_line_bytes:
                raise TraceError(name, line + 1, _too_long(max_line_bytes))
        chunk = _read(name, stream, line)
    if parts:
        yield line + 1, b"".join(parts)


def rereadable(source: SourceFile) -> bool:
    """Whether `source` can be read a second time: bytes, or a regular file (not a pipe)."""
    if source.data is not None:
        return True
    return source.path not in (None, "-") and os.path.isfile(source.path or "")


def line_lengths(source: SourceFile, wanted: set[int], max_line_bytes: int) -> dict[int, int]:
    """The length, in UTF-16 code units, of each line of a JSON Lines file in `wanted` (SARIF
    regions end there); none for a file that is one JSON document."""
    stream = _open(source)
    found: dict[int, int] = {}
    try:
        head = _head(source.name, stream)
        if head.lstrip()[:1] == b"[" or not wanted:
            return found
        last = max(wanted)
        for line, text in _lines(source.name, head, stream, max_line_bytes):
            if line in wanted:
                found[line] = utf16_len_of_utf8(text.rstrip(b"\r"))
            if line >= last:
                break
        return found
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


RunIds = tuple[re.Pattern[bytes], Callable[[bytes], str | None], re.Pattern[bytes] | None]
"""What `last_lines` needs of a format (its `RUN_IDS`): the pattern of the run ids a line names,
how a match is read, and the pattern of a record's own id (or None; see `last_lines`)."""


def string_field(name: str, own: str | None = None) -> RunIds:
    """What `last_lines` needs to find the run ids a line holds in a string field `name`
    (`"trace_id": "…"`), and a record's own id in the field `own`: escaped values are not found,
    so such a run ends with the input."""
    return _string_pattern(name), _text_id, None if own is None else _string_pattern(own)


def _string_pattern(name: str) -> re.Pattern[bytes]:
    return re.compile(b'"' + re.escape(name.encode()) + rb'"\s*:\s*"([^"\\]*)"')


def _text_id(found: bytes) -> str | None:
    return found.decode("utf-8", "replace")


def last_lines(source: SourceFile, max_line_bytes: int, pattern: re.Pattern[bytes],
               key: Callable[[bytes], str | None], wanted: str | None = None,
               own: re.Pattern[bytes] | None = None) -> dict[str, int] | None:
    """A first, quick pass over a file of JSON Lines: for each run id (`pattern`'s group 1, read
    by `key`; only `wanted` when that names one), the last line it is named on. An importer then
    lets a run go as soon as its last line is read: memory holds the runs open at once, not the
    file. None for a file that is one JSON document (read whole anyway). The run past `MAX_RUNS`
    is an error at its line. With `own` (a record's own id, group 1), a line that names no run
    but the id of one named before counts for it: a LangSmith root run's update leaves its trace
    out, and its id is its trace's; a line that names no run and the id of none (a child run's
    update) may belong to any trace, and the file is then read whole (None), as a pipe is."""
    stream = _open(source)
    try:
        head = _head(source.name, stream)
        if _one_document(head):
            return None
        found: dict[str, int] = {}
        for line, text in _lines(source.name, head, stream, max_line_bytes):
            named = {key(match) for match in set(pattern.findall(text))}
            if own is not None and not named - {None}:
                ids = set(map(_text_id, own.findall(text)))
                named = {run_id for run_id in ids if run_id in found}
                if ids and not named:   # (an update of a run inside a trace: which one, only a whole read tells)
                    return None
            for run_id in named:
                if run_id is not None and (wanted is None or run_id == wanted):
                    if run_id not in found and len(found) >= MAX_RUNS:
                        raise too_many_runs(source.name, line)
                    found[run_id] = line
        return found
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


def _record(name: str, text: bytes, line: int, max_line_bytes: int) -> Record | None:
    if len(text) > max_line_bytes:
        raise TraceError(name, line, _too_long(max_line_bytes))
    if not text.strip():
        return None
    if too_deep_at(text) is not None:
        raise TraceError(name, line, INVALID_TOO_DEEP)
    _refuse_invalid_utf8(text, name, line)
    return Record(line, replace_lone_surrogates(text), file=name)


def _refuse_invalid_utf8(text: bytes, name: str, first_line: int) -> None:
    """Bytes that are not UTF-8 anywhere in a record are an error, as in a trace of events (a
    typed decoder never looks at the parts of a record it skips), named at their line."""
    bad = invalid_utf8(text)
    if bad is not None:
        start = text.rfind(b"\n", 0, bad) + 1
        raise TraceError(name, first_line + text.count(b"\n", 0, start),
                         f"invalid UTF-8 (byte {bad - start + 1} of the line)")


def _one_document(head: bytes) -> bool:
    """Whether a file (its first chunk) is one JSON document rather than JSON Lines: an array of
    records, or one record written over several lines (its first line is `{` alone, as a
    pretty-printed export starts; no JSON Lines file has such a line)."""
    start = head.lstrip()
    return start[:1] == b"[" or start.split(b"\n", 1)[0].strip() == b"{"


def _document(name: str, start: bytes, stream: BinaryIO, max_line_bytes: int) -> Iterator[Record]:
    """A file that is one JSON document, read whole (up to `max_line_bytes`): an array of records,
    each item's line the line its value starts on; or one record, at the line it starts on."""
    data = bytearray(start)
    while len(data) <= max_line_bytes:
        chunk = stream.read(_CHUNK)
        if not chunk:
            break
        data += chunk
    if len(data) > max_line_bytes:
        what = "an array" if start.lstrip()[:1] == b"[" else "a record over several lines (its first line is { alone)"
        raise TraceError(name, 1, f"is one JSON document, {what}, larger than {max_line_bytes:,} bytes; write it as "
                         f"JSON Lines (one record per line) {RAISE_LINE_LIMIT}")
    text = replace_lone_surrogates(bytes(data))
    if too_deep_at(text) is not None:
        raise TraceError(name, None, INVALID_TOO_DEEP)
    _refuse_invalid_utf8(text, name, 1)
    try:
        items = _decode(text)
    except RecursionError:
        raise TraceError(name, None, INVALID_TOO_DEEP) from None
    except msgspec.DecodeError as exc:   # (where, as the line and column of the file: it is one document)
        problem = syntax_problem_in_file(text, exc)
        if problem.endswith("trailing characters"):
            problem += ": a file is one JSON document (an array of records, or one record) or JSON Lines"
        raise TraceError(name, None, problem) from None
    if isinstance(items, dict):   # at the line it starts on
        yield Record(text[:len(text) - len(text.lstrip())].count(b"\n") + 1, None, items, name)
        return
    starts = _item_lines(text)
    for index, item in enumerate(items):
        yield Record(starts[index] if index < len(starts) else 1, None, item, name)


def _item_lines(text: bytes) -> list[int]:
    """The line each top-level item of a JSON array starts on: tokens are strings, brackets,
    commas and runs of anything else; nothing is interpreted."""
    starts: list[int] = []
    depth, expecting, line, counted = 0, False, 1, 0
    for token in _TOKEN.finditer(text):
        kind = token.group()[:1]
        if depth == 1 and expecting and kind != b"]":
            line += text.count(b"\n", counted, token.start())
            counted = token.start()
            starts.append(line)
            expecting = False
        if kind in (b"[", b"{"):
            depth += 1
            expecting = expecting or depth == 1
        elif kind in (b"]", b"}"):
            depth -= 1
        elif kind == b"," and depth == 1:
            expecting = True
    return starts


_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{},]|[^\s\[\]{},"]+', re.DOTALL)


def _too_long(limit: int) -> str:
    return f"a record is longer than {limit:,} bytes {RAISE_LINE_LIMIT}"
