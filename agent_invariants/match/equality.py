"""JSON equality, strict about types (spec §2): `true` is not `1`, `"1"` is not `1`, `1` is `1.0`.

Objects are equal when they have the same keys and equal values, arrays when they have the same
length and equal elements in order. Numbers compare as JavaScript holds them, as doubles: an
integer beyond 2^53 is the double nearest to it, so `9007199254740993` equals `9007199254740992`,
as in the canonical form (`canonical`). Booleans are never numbers, though Python's are ints.
"""
from __future__ import annotations

import math
from typing import Any

__all__ = ("as_double", "json_equal")


def json_equal(left: Any, right: Any) -> bool:
    """Whether two decoded JSON values are equal (see the module's docstring)."""
    if left is None or right is None or isinstance(left, bool) or isinstance(right, bool):
        return left is right
    if isinstance(left, (int, float)):
        return isinstance(right, (int, float)) and as_double(left) == as_double(right)
    if isinstance(left, str):
        return isinstance(right, str) and left == right
    # plain loops, not all(...): one frame per level, so a value nested as deep as a trace may hold
    # (500 levels) stays within Python's recursion limit
    if isinstance(left, list):
        if not isinstance(right, list) or len(left) != len(right):
            return False
        for a, b in zip(left, right, strict=True):  # noqa: SIM110 (a frame per level, see above)
            if not json_equal(a, b):
                return False
        return True
    if isinstance(left, dict):
        if not isinstance(right, dict) or left.keys() != right.keys():
            return False
        for key, value in left.items():  # noqa: SIM110
            if not json_equal(value, right[key]):
                return False
        return True
    return False


def as_double(number: int | float) -> int | float:
    """The number as JavaScript holds it, for comparing: a float as it is, an integer up to 2^53
    as it is (Python compares those with floats exactly as doubles do), a larger one as the nearest
    double, and one beyond the largest double as the infinity JavaScript reads it as."""
    if number.__class__ is float or -_SAFE <= number <= _SAFE:
        return number
    try:
        return float(number)
    except OverflowError:
        return math.inf if number > 0 else -math.inf


_SAFE = 2**53
