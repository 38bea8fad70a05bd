"""Facts about JSON text shared by contracts, traces and the MCP server, written out once.

The nesting limit. JSON nested more than `MAX_NESTING` levels deep is refused everywhere, and at
the same depth whatever the caller: `too_deep_at` counts brackets in the text, where a decoder's
own limit depends on how deep the caller's stack already is.

msgspec's errors, in our words. A validation error names the JSON path first:

    Expected `str`, got `int` - at `$.tool`        ->  $.tool: expected `str`, got `int`

and a syntax error says "invalid JSON" and counts columns from 1, as editors do:

    JSON is malformed: invalid character (byte 5)  ->  invalid JSON: invalid character (column 6)
    Input data was truncated                       ->  invalid JSON: the JSON ends before the value is complete

A contract file names the line too (`invalid JSON at line 3, column 7: ...`), a trace item in an
array the byte in the item (`syntax_error`), and the MCP server says "Parse error: " instead of
"invalid JSON: " (`syntax_problem`).
"""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, cast

import msgspec

__all__ = (
    "INVALID_TOO_DEEP",
    "MAX_NESTING",
    "TOO_DEEP",
    "Skipper",
    "always_matching",
    "decode_problem",
    "nested_too_deep",
    "nests_too_deep",
    "path_and_problem",
    "syntax_error",
    "syntax_problem",
    "syntax_problem_in_file",
    "too_deep_at",
)

MAX_NESTING = 500
"""The deepest JSON accepted, in levels of objects and arrays (the outermost value is level 1)."""

Skipper = Callable[[bytes, int], "re.Match[bytes]"]
"""`match(data, pos)` of a pattern that also matches nothing, so it never returns None: the
scanners call `.end()` on it to skip a run (of whitespace, of separators, of a scalar)."""


def always_matching(pattern: bytes, flags: int = 0) -> Skipper:
    """The `match` of `pattern`, which must match the empty string (and so matches anywhere)."""
    compiled = re.compile(pattern, flags)
    if compiled.match(b"") is None:
        raise ValueError(f"{pattern!r} does not match the empty string")
    return cast(Skipper, compiled.match)


def nested_too_deep(limit: int) -> str:
    """The words for JSON nested deeper than `limit` levels."""
    return f"nested more than {limit} levels deep"


TOO_DEEP = nested_too_deep(MAX_NESTING)
INVALID_TOO_DEEP = f"invalid JSON: {TOO_DEEP}"

# an unterminated string runs to the end (`"?`): retrying it at every later quote is quadratic
_NESTING_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.DOTALL)


def too_deep_at(data: bytes, limit: int = MAX_NESTING) -> int | None:
    """Offset where JSON `data` nests deeper than `limit`, or None. Decoders' own limits depend
    on how deep the caller's stack is; this one does not. Cheap when it cannot be exceeded."""
    if len(data) <= limit or data.count(b"{") + data.count(b"[") <= limit:
        return None
    depth = 0
    for token in _NESTING_TOKEN.finditer(data):
        char = token.group()[0]
        if char == 0x22:   # a string: brackets inside it do not count
            continue
        if char in (0x5B, 0x7B):
            depth += 1
            if depth > limit:
                return token.start()
        else:
            depth -= 1
    return None


def nests_too_deep(document: Any) -> bool:
    """Whether a decoded document has objects or arrays more than `MAX_NESTING` levels deep (the
    document itself is level 1), as `too_deep_at` counts them in a text. Level by level, not
    recursively: a deep document must not exhaust the stack of the check meant to refuse it."""
    level = [document] if type(document) in _CONTAINERS else []
    for _depth in range(MAX_NESTING):
        below = []
        for value in level:
            items = value.values() if type(value) is dict else value
            if not _CONTAINERS.isdisjoint(map(type, items)):   # most arrays hold none: ask in C first
                below += [item for item in items if type(item) in _CONTAINERS]
        if not below:
            return False
        level = below
    return True


_CONTAINERS = frozenset((dict, list))   # the only containers a JSON decoder makes


def path_and_problem(message: str, base: str = "$") -> tuple[str, str]:
    """msgspec's "<problem> - at `$.x`" as ("$.x", "<problem>"), the path taken relative to
    `base` (the path of the value that was decoded); a message naming no path is about `base`."""
    problem, sep, where = message.rpartition(" - at `")
    if not sep:
        return base, message
    return base + where.rstrip("`")[1:], problem


def decode_problem(error: msgspec.DecodeError | RecursionError) -> str:
    """Why msgspec refused a value (a `DecodeError`, or the `RecursionError` of a deep one):
    "$.tool: expected `str`, got `int`" for a value of the wrong type, "invalid JSON: ..."
    for text that is no JSON."""
    if isinstance(error, RecursionError):
        return INVALID_TOO_DEEP
    if isinstance(error, msgspec.ValidationError):
        path, problem = path_and_problem(str(error))
        return f"{path}: {problem[:1].lower()}{problem[1:]}"
    return f"invalid JSON: {syntax_problem(error)}"


def syntax_problem(error: msgspec.DecodeError) -> str:
    """What is wrong with JSON text msgspec could not parse, and at which column of it."""
    offset, reason = _syntax_parts(str(error))
    return reason if offset is None else f"{reason} (column {offset + 1})"


def syntax_problem_in_file(data: bytes, error: msgspec.DecodeError) -> str:
    """A syntax error in a whole file (a contract), at its line and column; the end of the
    file when msgspec names no place (the JSON is cut short)."""
    offset, reason = _syntax_parts(str(error))
    if offset is None:
        offset = len(data)
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    if reason.startswith("Invalid UTF-8"):
        reason = "invalid UTF-8"
    return f"invalid JSON at line {line}, column {column}: {reason}"


_decode_any = msgspec.json.Decoder().decode


def syntax_error(data: bytes) -> tuple[int, str] | None:
    """Where msgspec finds the JSON `data` malformed (a byte offset) and why, in our words; None
    when it is well-formed JSON."""
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return exc.start, "invalid UTF-8"
    try:
        _decode_any(data)
        return None
    except RecursionError:
        return None
    except msgspec.DecodeError as exc:
        text = str(exc)
    offset, reason = _syntax_parts(text)
    return min(len(data) if offset is None else offset, len(data)), reason


_AT_BYTE = re.compile(r"\s*\(byte (\d+)\)")


def _syntax_parts(text: str) -> tuple[int | None, str]:
    """msgspec's "JSON is malformed: <reason> (byte N)" as (N, reason); None when it names no byte."""
    found = _AT_BYTE.search(text)
    reason = _AT_BYTE.sub("", text).removeprefix("JSON is malformed: ")
    if reason == "Input data was truncated":
        reason = "the JSON ends before the value is complete"
    return (int(found.group(1)) if found else None), reason
