"""The field types of contract rules, and how their strings are normalised.

    tool: Glob                   # trimmed as JavaScript trims, 1..500 UTF-16 code units
    description: Text            # trimmed, 1..2000
    id: RuleId                   # a pattern, not trimmed

msgspec checks types and patterns while decoding; what it cannot say (JavaScript's trim, lengths
in UTF-16 code units) is checked in `__post_init__` through `normalise_strings`, which finds the
`Glob` and `Text` fields of a struct by their annotation once, when the class is made. A problem
is a `FieldProblem` naming the field; the contract loader adds the JSON path.
"""
from __future__ import annotations

import sys
import typing
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta

from agent_invariants._js import js_trim, utf16_len

__all__ = ("GLOB_LIMIT", "FieldProblem", "Glob", "RuleId", "Text", "check_text", "normalise_strings",
           "string_fields")

_GLOB = "glob"
_TEXT_2000 = "text:2000"
GLOB_LIMIT = 500
"""The longest glob, in UTF-16 code units (after trimming)."""
_LIMITS = {_GLOB: GLOB_LIMIT, _TEXT_2000: 2000}
"""The most UTF-16 code units a string of each marked type may hold, after trimming."""

RuleId = Annotated[str, Meta(
    pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z",
    description="Rule id: a letter or digit, then up to 127 of A-Z a-z 0-9 . _ -",
)]
Glob = Annotated[str, Meta(
    min_length=1,
    description="Glob: `*` any run of characters, `?` one character, all else literal; trimmed, 1..500 long",
), _GLOB]
Text = Annotated[str, Meta(min_length=1, description="Free text, trimmed, 1..2000 characters"), _TEXT_2000]


class FieldProblem(ValueError):
    """A problem with one field, raised from `__post_init__`; the loader adds the JSON path."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"@{field}: {problem}")
        self.field, self.problem = field, problem


def check_text(value: str, field: str, limit: int, *, trim: bool = True) -> str:
    """Trim `value` as JavaScript would and check its length (1..limit UTF-16 code units)."""
    text = js_trim(value) if trim else value
    if not text:
        raise FieldProblem(field, "must not be empty or only whitespace")
    if len(text) * 2 > limit and utf16_len(text) > limit:
        raise FieldProblem(field, f"must be at most {limit} characters, got {utf16_len(text)}")
    return text


def string_fields(cls: type, namespace: dict[str, Any] | None = None) -> dict[str, tuple[str, bool]]:
    """Fields of `cls` annotated `Glob` or `Text` (or lists of them): name -> (marker, is_list).
    `namespace`, the names of the module that made `cls`, resolves its annotations should that
    module no longer be in `sys.modules`."""
    found = {}
    names = None if cls.__module__ in sys.modules else namespace
    for name, hint in typing.get_type_hints(cls, localns=names, include_extras=True).items():
        kind = _string_kind(hint)
        if kind is not None:
            found[name] = kind
    return found


def _string_kind(hint: Any) -> tuple[str, bool] | None:
    """(marker, is_list) for a Glob/Text type, however wrapped (Union, Annotated, list)."""
    origin = typing.get_origin(hint)
    if origin is Annotated:
        base, *metadata = typing.get_args(hint)
        marks = [mark for mark in metadata if isinstance(mark, str) and mark in _LIMITS]
        return (marks[0], False) if marks else _string_kind(base)
    if origin is list:
        item = _string_kind(typing.get_args(hint)[0])
        return None if item is None else (item[0], True)
    if origin is typing.Union:
        for option in typing.get_args(hint):
            kind = _string_kind(option)
            if kind is not None:
                return kind
    return None


def normalise_strings(struct: msgspec.Struct, kinds: dict[str, tuple[str, bool]]) -> None:
    """Trim every Glob/Text field of a (frozen) struct in place and check its length."""
    for name, (mark, is_list) in kinds.items():
        value = getattr(struct, name)
        if value is UNSET:
            continue
        limit = _LIMITS[mark]
        if is_list:
            value = [check_text(item, f"{name}[{i}]", limit) for i, item in enumerate(value)]
        else:
            value = check_text(value, name, limit)
        msgspec.structs.force_setattr(struct, name, value)
