"""Where a JSON Schema (2020-12) holds subschemas: the one home of that list, for the checks that
walk a schema's subschemas and nothing else (a `$schema` of another draft, the set-like arrays a
tool snapshot ignores the order of). Any other keyword's value (`const`, `default`, `examples`,
`enum`, an `x-` extension) is data, even where it holds a key named like a keyword.
"""
from __future__ import annotations

from typing import Any, Literal

__all__ = ("held",)

_ONE = ("items", "additionalItems", "additionalProperties", "contains", "propertyNames", "not", "if", "then",
        "else", "unevaluatedItems", "unevaluatedProperties", "contentSchema")
_LISTS = ("prefixItems", "allOf", "anyOf", "oneOf", "items")
_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")


def held(key: str, value: Any) -> Literal["one", "list", "map"] | None:
    """How the value of the keyword `key` holds subschemas: one, a list of them, a map of names to
    them (a property named `default` is a schema), or None: the value is data."""
    if key in _LISTS and isinstance(value, list):
        return "list"
    if key in _ONE:
        return "one"
    if key in _MAPS and isinstance(value, dict):
        return "map"
    return None
