"""Sets of code points, as character classes hold them: sorted (first, last) ranges."""
from __future__ import annotations

from collections.abc import Iterable

__all__ = ("PERL", "Ranges", "complement", "overlap")

Ranges = tuple[tuple[int, int], ...]
"""Code points as (first, last) ranges, in order."""

MAX_CODE_POINT = 0x10FFFF

PERL: dict[str, Ranges] = {"d": ((0x30, 0x39),), "w": ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)),
                           "s": ((0x09, 0x0A), (0x0C, 0x0D), (0x20, 0x20))}
"""What RE2's `\\d`, `\\w` and `\\s` hold: ASCII only (`\\s` without a vertical tab); their capitals
hold the others."""


def complement(ranges: Iterable[tuple[int, int]]) -> Ranges:
    """Every code point in none of `ranges` (which may come in any order, and overlap)."""
    found, start = [], 0
    for first, last in sorted(ranges):
        if first > start:
            found.append((start, first - 1))
        start = max(start, last + 1)
    if start <= MAX_CODE_POINT:
        found.append((start, MAX_CODE_POINT))
    return tuple(found)


def overlap(one: Ranges, other: Ranges) -> bool:
    """Whether some code point is in both."""
    return any(first <= other_last and other_first <= last for first, last in one for other_first, other_last in other)
