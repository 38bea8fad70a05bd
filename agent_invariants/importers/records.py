"""The records of a source file, one decoded JSON value per line, with the line it is on.

Every format we import is JSON Lines (OTLP JSON as the Collector's file exporter writes it, the
Agents SDK's exported spans, LangSmith runs, MCP session logs), or one JSON document holding a list
of records (a LangSmith or Agents SDK export saved whole). Records are read 64 KiB at a time and
never held beyond the one being handed out: a line longer than `max_line_bytes` is refused rather
than buffered, and a whole-file document is read only up to the same bound.

Blank lines are skipped. A line that is not JSON, not UTF-8 or nested too deep stops the import
with `file:line: ...`, like a native trace.
"""
from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from typing import Any, BinaryIO, NamedTuple

import msgspec

from agent_invariants.errors import TraceError
from agent_invariants.jsontext import INVALID_TOO_DEEP, decode_problem, too_deep_at

__all__ = ("Record", "SourceFile", "read_records")

_CHUNK = 1 << 16
_decode = msgspec.json.Decoder().decode


class Record(NamedTuple):
    """One record of a source file: its JSON value and its physical line (1-based)."""

    value: Any
    line: int


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
        return cls(name or ("<stdin>" if path == "-" else path), path)


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
    try:
        if os.path.isdir(source.path):
            raise TraceError(source.name, None, "is a folder, not a file (name the files to import)")
        return open(source.path, "rb")  # noqa: SIM115   (closed by read_records)
    except FileNotFoundError:
        raise TraceError(source.name, None, "no such file") from None
    except PermissionError:
        raise TraceError(source.name, None, "permission denied") from None
    except OSError as exc:
        raise TraceError(source.name, None, f"cannot be read: {exc.strerror or exc}") from None


def _records(name: str, stream: BinaryIO, max_line_bytes: int) -> Iterator[Record]:
    line = 0
    pending = b""
    first = True
    while True:
        try:
            chunk = stream.read(_CHUNK)
        except OSError as exc:
            raise TraceError(name, line or None, f"cannot be read: {exc.strerror or exc}") from None
        if first and chunk:
            first = False
            if chunk.startswith(b"\xef\xbb\xbf"):
                chunk = chunk[3:]
            if chunk.lstrip()[:1] == b"[":   # one JSON document holding the records
                yield from _document(name, chunk, stream, max_line_bytes)
                return
        if not chunk:
            break
        pending += chunk
        lines = pending.split(b"\n")
        pending = lines.pop()
        if len(pending) > max_line_bytes:
            raise TraceError(name, line + len(lines) + 1, _too_long(max_line_bytes))
        for text in lines:
            line += 1
            record = _record(name, text, line, max_line_bytes)
            if record is not None:
                yield record
    if pending:
        record = _record(name, pending, line + 1, max_line_bytes)
        if record is not None:
            yield record


def _record(name: str, text: bytes, line: int, max_line_bytes: int) -> Record | None:
    if len(text) > max_line_bytes:
        raise TraceError(name, line, _too_long(max_line_bytes))
    if not text.strip():
        return None
    if too_deep_at(text) is not None:
        raise TraceError(name, line, INVALID_TOO_DEEP)
    try:
        return Record(_decode(text), line)
    except (msgspec.DecodeError, RecursionError) as exc:
        raise TraceError(name, line, decode_problem(exc, data=text)) from None


def _document(name: str, start: bytes, stream: BinaryIO, max_line_bytes: int) -> Iterator[Record]:
    """A file that is one JSON array of records, read whole (up to `max_line_bytes`); each item's
    line is the line its value starts on."""
    data = bytearray(start)
    while len(data) <= max_line_bytes:
        chunk = stream.read(_CHUNK)
        if not chunk:
            break
        data += chunk
    if len(data) > max_line_bytes:
        raise TraceError(name, 1, f"is one JSON document larger than {max_line_bytes} bytes; write it as JSON "
                         "Lines (one record per line) or raise --max-line-bytes")
    text = bytes(data)
    if too_deep_at(text) is not None:
        raise TraceError(name, None, INVALID_TOO_DEEP)
    try:
        items = _decode(text)
    except (msgspec.DecodeError, RecursionError) as exc:
        raise TraceError(name, None, decode_problem(exc, data=text)) from None
    starts = _item_lines(text)
    for index, item in enumerate(items):
        yield Record(item, starts[index] if index < len(starts) else 1)


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
    return f"a record is longer than {limit} bytes (raise --max-line-bytes to read it)"
