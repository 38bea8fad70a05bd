"""Exact counts per group over a stream, in bounded memory.

retry_limit must count every call of every group in the whole trace, and most real traces give
almost every call its own `call_signature`. Counting in a dict makes memory grow with the trace,
so past `max_groups` groups the tally moves to disk: its state and every later member go to a
temporary file (`spill.SpillFile`: anonymous, so nothing is left behind; a full or unwritable
temporary folder is a one-line error) in blocks partitioned by the group's hash, and `finish` settles one partition at
a time.
The answer is the same either way; only memory and a little time differ.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from functools import partial
from heapq import nsmallest
from itertools import islice
from operator import itemgetter
from typing import Any

import msgspec

from agent_invariants.spill import Partitions

__all__ = ("GroupTally", "Overflow")

DEFAULT_MAX_GROUPS = 400_000   # about 50 MiB of typical call signatures (40-character keys)
_PARTITIONS = 256
_FLUSH_EVERY = 1 << 14   # members buffered before they are written out
_STATE, _MEMBERS = 0, 1   # the kinds of records of the spill


class Overflow(msgspec.Struct, frozen=True):
    """A group with more than `limit` members: how many, and where its first excess member was."""

    group: str
    count: int
    seq: Any
    index: int


class GroupTally:
    """Counts members per group key; `finish()` lists the groups with more than `limit` members,
    in the order the groups first appeared."""

    def __init__(self, limit: int, max_groups: int | None = None) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")   # max_attempts is 1..10000
        self.limit = limit
        self.max_groups = DEFAULT_MAX_GROUPS if max_groups is None else max_groups
        self._counts: dict[str, int] = {}                    # in order of first appearance
        self._excess: dict[str, tuple[Any, int]] = {}       # group -> (seq, index) of member limit+1
        self._spill: _Spill | None = None
        self._first_excess = limit + 1
        self.overflowed = 0   # groups over the limit, known after finish()

    def add(self, group: str, seq: Any, index: int) -> None:
        """Count one member of `group` (seq and index locate it, should it be the first excess)."""
        counts = self._counts
        count = counts.get(group, 0) + 1
        counts[group] = count
        if count == 1:
            if len(counts) > self.max_groups:
                self._spill = _Spill(counts, self._excess)
                self._counts, self._excess = {}, {}
                # From now on, members go straight to the spill: one call each, as before. (An
                # attribute set in __init__ would do the same at the price of a reference cycle.)
                self.add = self._spill.member  # type: ignore[method-assign,assignment]
        elif count == self._first_excess:
            self._excess[group] = (seq, index)

    @property
    def members(self) -> int:
        """How many members were counted, in all groups."""
        spilled = 0 if self._spill is None else self._spill.members
        return spilled + sum(self._counts.values())

    def finish(self, keep: int | None = None) -> list[Overflow]:
        """The groups with more than `limit` members, in the order they first appeared: the first
        `keep` of them (all when None). `overflowed` then tells how many there were in all."""
        if self._spill is not None:
            overflows, self.overflowed = self._spill.settle(self.limit, keep)
            return overflows
        self.overflowed = len(self._excess)
        over = (group for group in self._counts if group in self._excess)
        return [Overflow(group, self._counts[group], *self._excess[group]) for group in islice(over, keep)]


class _Spill:
    """The tally on disk (`spill.Partitions`, chosen by the group's hash), in two kinds of records:

    - `STATE`: the in-memory tally when it spilled, `[group, order, count, seq, index]` (order =
      rank of first appearance; seq/index of the first excess member, or index -1);
    - `MEMBERS`: every later member, `[group, seq, index]`, in stream order.

    Every state group first appeared before any members-only group, so (0, order) and (1, index
    of first member) sort groups by first appearance.
    """

    def __init__(self, counts: dict[str, int], excess: dict[str, tuple[Any, int]]) -> None:
        self._parts = Partitions(kinds=2, count=_PARTITIONS, flush_every=_FLUSH_EVERY)
        self._counted = sum(counts.values())
        for order, (group, count) in enumerate(counts.items()):
            seq, index = excess.get(group, (None, -1))
            self._parts.add(_STATE, group, order, count, seq, index)
        # every later member: one call each, in C to the partitions
        self.member: Callable[[str, Any, int], None] = partial(self._parts.add, _MEMBERS)

    @property
    def members(self) -> int:
        return self._counted + self._parts.added[_MEMBERS]

    def settle(self, limit: int, keep: int | None) -> tuple[list[Overflow], int]:
        """The first `keep` overflowing groups (all when None) in order of first appearance, and
        how many groups overflowed in all; only the kept ones are held at once."""
        parts = self._parts
        try:
            count = 0

            def every() -> Iterator[tuple[tuple[int, int], Overflow]]:
                nonlocal count
                for number in range(_PARTITIONS):
                    found = _settle(parts.read(_STATE, number), parts.read(_MEMBERS, number), limit)
                    count += len(found)
                    yield from found

            if keep is None:
                first = sorted(every(), key=itemgetter(0))
            elif keep:
                first = nsmallest(keep, every(), key=itemgetter(0))
            else:   # nsmallest(0, ...) would not look at them, and they must be counted
                first = []
                for _ in every():
                    pass
            return [overflow for _, overflow in first], count
        finally:
            parts.close()


def _settle(states: list[list[Any]], members: list[list[Any]], limit: int) -> list[tuple[tuple[int, int], Overflow]]:
    """The overflowing groups of one partition. Totals are counted in C; only the few groups
    over the limit are then looked at member by member."""
    totals = Counter(dict(zip(map(itemgetter(0), states), map(itemgetter(2), states), strict=True)))
    totals.update(map(itemgetter(0), members))
    over = {group for group, count in totals.items() if count > limit}
    if not over:
        return []
    first: dict[str, tuple[int, int]] = {}
    seen: dict[str, int] = {}
    excess: dict[str, tuple[Any, int]] = {}
    for group, order, count, seq, index in states:
        if group in over:
            first[group] = (0, order)
            seen[group] = count
            if index >= 0:
                excess[group] = (seq, index)
    for group, seq, index in members:
        if group in over:
            first.setdefault(group, (1, index))
            seen[group] = seen.get(group, 0) + 1
            if seen[group] == limit + 1 and group not in excess:
                excess[group] = (seq, index)
    return [(first[group], Overflow(group, totals[group], *excess[group])) for group in over]
