"""The canonical JSON form of RFC 8785 (JCS): one spelling for each JSON value.

Version-2 evidence holds values in this form, and `result_size` counts the UTF-8 bytes of it, so
that the same value always reads and weighs the same, whoever wrote the trace. The form:

- no whitespace; arrays in order; object keys sorted by their UTF-16 code units (so an emoji,
  U+1F600, sorts before U+FB33);
- numbers as JavaScript prints them (ECMAScript Number::toString: `4.5`, `1e+30`, `0.002`), an
  integer beyond 2^53 as the nearest double;
- strings with only `"`, `\\` and the control characters U+0000..U+001F escaped (`\\b`, `\\t`, `\\n`,
  `\\f`, `\\r`, else `\\u00XX` in lower-case hex); every other character as itself (a lone
  surrogate, which valid JSON text never decodes to, as `\\udXXX`);
- an integer beyond the largest double has no form (ValueError): JavaScript reads it as Infinity.
"""
from __future__ import annotations

import re
from typing import Any

from agent_invariants._js import js_number, json_number, utf16_sort_key

__all__ = ("EVIDENCE_TEXT", "canonical", "canonical_key", "evidence_value")

EVIDENCE_TEXT = 200
"""The most code points of a string that evidence shows (then `…`), spec §10 point 7."""

_ESCAPED = re.compile('["\\\\\x00-\x1f\ud800-\udfff]')   # (a lone surrogate has no UTF-8: escaped too)
_SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def canonical(value: Any) -> str:
    """`value` (a decoded JSON value: dict, list, str, int, float, bool, None) in RFC 8785 form."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        try:
            return js_number(value)
        except OverflowError:   # beyond the largest double: JavaScript reads it as Infinity
            raise ValueError("an integer beyond the largest double has no canonical form") from None
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"{value!r} is not a JSON number")
        return js_number(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list):
        return "[" + ",".join(canonical(item) for item in value) + "]"
    if isinstance(value, dict):
        keys = sorted(value, key=utf16_sort_key)
        return "{" + ",".join(_string(key) + ":" + canonical(value[key]) for key in keys) + "}"
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def canonical_key(value: Any) -> object:
    """A key under which JSON-equal values meet (`1` and `1.0`; never `1` and `true` or `"1"`),
    for indexes and sets: strings and numbers up to 2^53 as themselves with a tag (Python's `==`
    is then JSON's), anything else by its canonical form. A value holding an integer beyond any
    double has no canonical form: its Python spelling stands for it."""
    kind = value.__class__
    if kind is str:
        return ("s", value)
    if (kind is int or kind is float) and -_SAFE <= value <= _SAFE:
        return ("n", value)
    try:
        return ("j", canonical(value))
    except ValueError:
        return ("p", repr(value))


_SAFE = 2**53


def evidence_value(value: Any) -> Any:
    """A decoded JSON value as evidence holds it: object keys in canonical order, numbers as
    JavaScript holds them (`100.0` is `100`), strings cut to 200 code points plus `…`; still
    structured JSON, so reports nest it as it is."""
    if isinstance(value, str):
        return value if len(value) <= EVIDENCE_TEXT else value[:EVIDENCE_TEXT] + "…"
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        try:
            return json_number(value)
        except OverflowError:
            return value
    if isinstance(value, list):
        return [evidence_value(item) for item in value]
    if isinstance(value, dict):
        return {key: evidence_value(value[key]) for key in sorted(value, key=utf16_sort_key)}
    return value


def _string(text: str) -> str:
    return '"' + _ESCAPED.sub(_escape, text) + '"'


def _escape(found: re.Match[str]) -> str:
    char = found.group()
    return _SHORT.get(char) or f"\\u{ord(char):04x}"
