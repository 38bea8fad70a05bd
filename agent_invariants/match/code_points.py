"""Sets of code points, as character classes hold them: sorted (first, last) ranges."""
from __future__ import annotations

from collections.abc import Iterable

__all__ = ("Ranges", "complement", "overlap")

Ranges = tuple[tuple[int, int], ...]
"""Code points as (first, last) ranges, in order."""

MAX_CODE_POINT = 0x10FFFF


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
