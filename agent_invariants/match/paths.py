"""Paths into JSON values: `items.0.sku`, or a JSON Pointer (RFC 6901) when it starts with `/`.

A dot path is cut at its dots; a Pointer at its slashes, with `~1` standing for `/` and `~0` for
`~` (so `/a~1b` is the key `a/b`, and `/` the key `""`). Each segment then steps into the value
the same way (spec §10, point 13):

- in an object, it is a key: `0` is the key `"0"`;
- in an array, it is an index when it is a canonical non-negative integer (`0`, `12`; not `01`,
  `-1` or `1.0`) below the array's length; any other segment is not found;
- in anything else (a string, a number, null), nothing is found.

A path is found only if every segment is, and null is found like any other value. The empty path
is no path (leave `path` out for the whole value); a dot path cannot hold an empty segment
(`a..b`, `a.`): a key with a dot, or an empty key, needs a Pointer.

    >>> find({"items": [{"sku": "A1"}]}, parse_path("items.0.sku"))
    'A1'
    >>> find({"a/b": None}, parse_path("/a~1b")) is None
    True
"""
from __future__ import annotations

import re
from typing import Any

__all__ = ("MAX_POINTER", "NOT_FOUND", "bounded_pointer", "find", "parse_path", "pointer")

MAX_POINTER = 1000
"""The longest pointer a violation names (in code points): keys come from traces, too."""

_INDEX = re.compile(r"0|[1-9][0-9]*")
_POINTER_ESCAPE = re.compile(r"~(?![01])")


class _NotFound:
    """What `find` returns for a path that is not found (null is a found value)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NOT_FOUND"


NOT_FOUND: Any = _NotFound()


def parse_path(text: str) -> tuple[str, ...]:
    """The segments of a path as a contract writes it; ValueError says why one is not a path."""
    if text == "":
        raise ValueError("a path cannot be empty")
    if text.startswith("/"):
        bad = _POINTER_ESCAPE.search(text)
        if bad is not None:
            raise ValueError(f"in a JSON Pointer, ~ must be followed by 0 or 1 (at character {bad.start() + 1})")
        return tuple(segment.replace("~1", "/").replace("~0", "~") for segment in text[1:].split("/"))
    segments = tuple(text.split("."))
    if "" in segments:
        raise ValueError("a dot path cannot have an empty segment; write a JSON Pointer (starting with /) "
                         "for keys that hold dots or are empty")
    return segments


def find(value: Any, segments: tuple[str, ...]) -> Any:
    """The value at `segments` inside `value` (a decoded JSON value), or NOT_FOUND."""
    for segment in segments:
        if isinstance(value, dict):
            value = value.get(segment, NOT_FOUND)
            if value is NOT_FOUND:
                return NOT_FOUND
        elif isinstance(value, list):
            if _INDEX.fullmatch(segment) is None or int(segment) >= len(value):
                return NOT_FOUND
            value = value[int(segment)]
        else:
            return NOT_FOUND
    return value


def pointer(segments: tuple[str | int, ...]) -> str:
    """The JSON Pointer of these segments (`""` for the whole value), as reports name places."""
    return "".join("/" + str(segment).replace("~", "~0").replace("/", "~1") for segment in segments)


def bounded_pointer(text: str) -> str:
    """`text`, or, when it is longer than MAX_POINTER, the pointer of its deepest ancestor that is
    not: still a pointer into the event (an exact-mode key or a schema error may name a key as
    long as a trace line, and a report keeps up to a thousand violations per rule)."""
    if len(text) <= MAX_POINTER:
        return text
    return text[:text.rfind("/", 0, MAX_POINTER + 1)]
