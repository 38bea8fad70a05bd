"""Where things are in a JSON text: the line and column of the value at each JSON path.

msgspec decodes fast but does not say where a value was. Contracts are small, so when a report or
an error needs a place in the contract file (the rule a budget violation belongs to, the field a
validation error is about), this module scans the text once and maps every JSON path (`$`,
`$.rules[2]`, `$.rules[2].tool`) to the 1-based line and column where its value starts.
"""
from __future__ import annotations

import bisect
import json
import re

__all__ = ("Position", "locate")

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+', re.DOTALL)


class Position(tuple):
    """(line, column), both 1-based."""

    __slots__ = ()

    @property
    def line(self) -> int:
        return self[0]

    @property
    def column(self) -> int:
        return self[1]


def locate(text: str) -> dict[str, Position]:
    """Map each JSON path in `text` to where its value starts. Best effort on invalid JSON:
    whatever could be placed before the text stopped making sense is returned."""
    starts = [0] + [found.end() for found in re.finditer(r"\n", text)]

    def position(offset: int) -> Position:
        line = bisect.bisect_right(starts, offset)
        return Position((line, offset - starts[line - 1] + 1))

    found: dict[str, Position] = {}
    stack: list[list] = []   # frames: [kind, path, next index or pending key]
    pending_key: str | None = None
    for token in _TOKEN.finditer(text):
        value = token.group()
        char = value[0]
        if char in ",:":
            continue
        if char in "}]":
            if stack:
                stack.pop()
            continue
        if stack and stack[-1][0] == "{" and pending_key is None:
            if char != '"':
                break
            pending_key = _key(value)
            continue
        path = _child_path(stack, pending_key)
        pending_key = None
        found.setdefault(path, position(token.start()))
        if char in "{[":
            stack.append([char, path, 0])
    return found


def _child_path(stack: list[list], key: str | None) -> str:
    if not stack:
        return "$"
    kind, path, index = stack[-1]
    if kind == "[":
        stack[-1][2] = index + 1
        return f"{path}[{index}]"
    return f"{path}.{key}"


def _key(token: str) -> str:
    try:
        return json.loads(token)
    except ValueError:
        return token.strip('"')
