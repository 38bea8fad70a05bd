"""Where things are in a JSON text: the line and column of the value at each JSON path.

msgspec decodes fast but does not say where a value was. Contracts are small, so when a report or
an error needs a place in the contract file (the rule a budget violation belongs to, the field a
validation error is about), this module scans the text once and maps every JSON path (`$`,
`$.rules[2]`, `$.rules[2].tool`) to the 1-based line and column where its value starts.

It is also the one home of how a place in a JSON document is written, in every error and report
of a contract, a fixture or a profile: `member` spells a key, `path_and_parents` walks back up.
A key is written `.key` when it is plain (letters, digits, `_ $ - * ?`), else as a JSON string in
brackets, so that no path can be read two ways: `$.rules[0].match["customer.id"].$regex`,
`$.tools["crm.lookup"].$cases[2].ok`, `$.match[""]`.
"""
from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

import msgspec

__all__ = ("Position", "locate", "member", "path_and_parents")

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+', re.DOTALL)


_LAST_STEP = re.compile(r'(\.[^.\[]*|\[\d+\]|\["(?:[^"\\]|\\.)*"\])$', re.DOTALL)
"""The last step of a path: `.key`, `[2]` or `["key"]` (as `member` writes them)."""


def member(path: str, key: object) -> str:
    """The path of `key` in the object at `path`: `$.rules`, `$.match.$regex`; a key that is
    empty or holds any other character (a dot, a bracket, a space) as a JSON string in brackets:
    `$.match["a.b"]`. A key that is no string (YAML's `1:`, `true:`) is written as JSON writes
    its value (`$.1`, `$.true`)."""
    if not isinstance(key, str):
        key = msgspec.json.encode(key).decode() if key is None or isinstance(key, (bool, int, float)) else str(key)
    if key and all(char.isalnum() or char in "_$-*?" for char in key):
        return f"{path}.{key}"
    try:
        quoted = msgspec.json.encode(key).decode()
    except UnicodeEncodeError:   # a lone surrogate (a key of a mapping given in Python): as JSON escapes it
        quoted = json.dumps(key, ensure_ascii=False).encode("utf-8", "backslashreplace").decode()
    return f"{path}[{quoted}]"


def path_and_parents(path: str) -> list[str]:
    """`$.rules[2].tool`, `$.rules[2]`, `$.rules`, `$`: the paths whose line may stand for it."""
    paths = []
    while path:
        paths.append(path)
        trimmed = _LAST_STEP.sub("", path, count=1)
        if trimmed == path:
            break
        path = trimmed
    return paths


class Position(tuple[int, int]):
    """(line, column), both 1-based."""

    __slots__ = ()

    @property
    def line(self) -> int:
        return self[0]

    @property
    def column(self) -> int:
        return self[1]


def locate(text: str, wanted: Collection[str] | None = None, *, last: bool = False) -> dict[str, Position]:
    """Map each JSON path in `text` (or only those in `wanted`) to where its value starts. Best
    effort on invalid JSON: whatever could be placed before the text stopped making sense is
    returned. Naming the paths wanted keeps the map small however big the file (an array of a
    million numbers is a million paths) and stops the scan once they are all found. A key an
    object holds twice is placed at its first value, or with `last` at its last (the one JSON
    readers keep; the whole text is then read)."""
    position = _Lines(text).at
    found: dict[str, Position] = {}
    stack: list[list[Any]] = []   # frames: [kind, path, next index or pending key]
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
        if wanted is None or path in wanted:
            if last:
                found[path] = position(token.start())
            else:
                found.setdefault(path, position(token.start()))
                if wanted is not None and len(found) == len(wanted):
                    break
        if char in "{[":
            stack.append([char, path, 0])
    return found


class _Lines:
    """Line and column of ever larger offsets in a text, counted as the scan moves on (a table
    of every line start would cost more memory than the text for a file of empty lines)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.offset = 0
        self.line = 1
        self.line_start = 0

    def at(self, offset: int) -> Position:
        newlines = self.text.count("\n", self.offset, offset)
        if newlines:
            self.line += newlines
            self.line_start = self.text.rfind("\n", self.offset, offset) + 1
        self.offset = offset
        return Position((self.line, offset - self.line_start + 1))


def _child_path(stack: list[list[Any]], key: str | None) -> str:
    if not stack:
        return "$"
    kind, path, index = stack[-1]
    if kind == "[":
        stack[-1][2] = index + 1
        return f"{path}[{index}]"
    return member(path, key or "")


def _key(token: str) -> str:
    import json  # (here: the json module is not needed at start-up)

    try:
        return str(json.loads(token))
    except ValueError:
        return token.strip('"')
