"""Exact counts per group over a stream, in bounded memory.

retry_limit must count every call of every group in the whole trace, and most real traces give
almost every call its own `call_signature`. Counting in a dict makes memory grow with the trace,
so past `max_groups` groups (or group keys of `max_characters` characters in all: signatures may
be 2,000 characters long) the tally moves to disk: its state and every later member go to a
temporary file (`spill.SpillFile`: anonymous, so nothing is left behind; a full or unwritable
temporary folder is a one-line error) in blocks partitioned by the group's hash, and `finish` settles one partition at
a time.
The answer is the same either way; only memory and a little time differ.
"""
from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Iterator
from itertools import compress, count, islice, repeat
from operator import itemgetter
from typing import Any

import msgspec

from agent_invariants.spill import Partitions

__all__ = ("GroupTally", "Overflow")

DEFAULT_MAX_GROUPS = 400_000   # about 50 MiB of typical call signatures (40-character keys)
DEFAULT_MAX_KEY_CHARACTERS = 24 << 20
"""The characters of the group keys held before the spill, whatever their number: 400,000 groups of
2,000-character signatures (the longest) held 837 MiB."""
_PARTITIONS = 256
_FLUSH_EVERY = 1 << 14   # members buffered before they are written out
_MEMBER_BATCH = 1 << 10   # members handed to the partitions at once
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

    def __init__(self, limit: int, max_groups: int | None = None, max_characters: int | None = None) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")   # max_attempts is 1..10000
        self.limit = limit
        self.max_groups = DEFAULT_MAX_GROUPS if max_groups is None else max_groups
        # the characters of new group keys the dict may still take before the spill
        self._room = DEFAULT_MAX_KEY_CHARACTERS if max_characters is None else max_characters
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
            self._room -= len(group)   # (a new group only: the usual member costs nothing more)
            if len(counts) > self.max_groups or self._room < 0:
                self._spill = _Spill(counts, self._excess)
                self._counts, self._excess = {}, {}
                # From now on, members go straight to the spill: one call each, as before. (An
                # attribute set in __init__ would do the same at the price of a reference cycle.)
                self.add = self._spill.member  # type: ignore[method-assign]
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

    Every state group first appeared before any members-only group, so a state group's order,
    and for the others the number of state groups plus the index of the first member, rank
    groups by first appearance. Members are buffered and handed to the partitions
    `_MEMBER_BATCH` at a time (one call per member costs more than the partitioning).
    """

    def __init__(self, counts: dict[str, int], excess: dict[str, tuple[Any, int]]) -> None:
        self._parts = Partitions(kinds=2, count=_PARTITIONS, flush_every=_FLUSH_EVERY)
        self._counted = sum(counts.values())
        self._states = len(counts)   # ranks of first appearance: states before every later group
        def found(item: int) -> Iterator[Any]:   # the seq or the index of each group's first excess member
            return map(itemgetter(item), map(excess.get, counts, repeat((None, -1))))

        # records built in C, not by a generator, and none held beyond those buffered
        self._parts.add_many(_STATE, zip(counts, count(), counts.values(), found(0), found(1)))
        self._members: list[tuple[str, Any, int]] = []   # handed to the partitions a batch at a time

    def member(self, group: str, seq: Any, index: int) -> None:
        """Count one member of `group`, after the spill."""
        members = self._members
        members.append((group, seq, index))
        if len(members) >= _MEMBER_BATCH:
            self._parts.add_many(_MEMBERS, members)
            members.clear()

    @property
    def members(self) -> int:
        return self._counted + self._parts.added[_MEMBERS] + len(self._members)

    def settle(self, limit: int, keep: int | None) -> tuple[list[Overflow], int]:
        """The first `keep` overflowing groups (all when None) in order of first appearance, and
        how many groups overflowed in all; only the kept ones are held at once."""
        parts = self._parts
        parts.add_many(_MEMBERS, self._members)
        self._members.clear()
        try:
            count = 0
            first: list[tuple[int, Overflow]] = []   # in order of rank, at most `keep`
            bound = None   # once `keep` are held, only groups ranked before the last of them can enter
            for number in range(_PARTITIONS):
                found, over = _settle(parts, number, limit, self._states, keep, bound)
                count += over
                if keep is None:
                    first += found
                elif found:
                    first = sorted([*first, *found])[:keep]
                    bound = first[-1][0] if len(first) == keep else None
            if keep is None:
                first.sort()
            return [overflow for _, overflow in first], count
        finally:
            parts.close()


def _settle(parts: Partitions, number: int, limit: int, offset: int, keep: int | None,
            bound: int | None) -> tuple[list[tuple[int, Overflow]], int]:
    """The first `keep` (all when None) overflowing groups of partition `number`, each with its
    rank of first appearance (a state group's order; `offset` plus the index of its first member
    for the others), leaving out those ranked at or after `bound`; and how many groups of the
    partition overflowed.

    A trace may make every group overflow (each signature called twice, one attempt allowed), so
    what touches every member or group is done in C (`map`, `compress`, `Counter`): the totals
    come out in order of first appearance (states are stored in their order, members in stream
    order), so the first `keep` groups over the limit are the partition's candidates, and only
    their records are then looked at one by one, for their ranks and first excess members. The
    rest of each member is only decoded when some group of the partition can still enter the
    report."""
    states = parts.read(_STATE, number)
    state_groups = list(map(itemgetter(0), states))
    [member_groups] = parts.read_columns(_MEMBERS, number, 0)
    totals = Counter(dict(zip(state_groups, map(itemgetter(2), states), strict=True)))
    totals.update(member_groups)
    over = list(compress(totals, map(limit.__lt__, totals.values())))
    if not over:
        return [], 0
    chosen = over[:keep]
    indexes = None   # the members' indexes, decoded once, and only when needed
    if bound is not None:
        if bound > offset:   # groups first seen after the spill can rank before the bound
            [indexes] = parts.read_columns(_MEMBERS, number, 2)
        chosen = chosen[:_ranked_before(chosen, bound, states, offset, member_groups, indexes)]
    if not chosen:   # none can enter the report (or it keeps none): the rest of each member stays unread
        return [], len(over)
    [seqs] = parts.read_columns(_MEMBERS, number, 1)
    if indexes is None:
        [indexes] = parts.read_columns(_MEMBERS, number, 2)
    members = zip(member_groups, seqs, indexes, strict=True)   # groups decoded once
    kept = set(chosen)
    rank: dict[str, int] = {}
    seen: dict[str, int] = {}
    excess: dict[str, tuple[Any, int]] = {}
    for group, order, counted, seq, index in compress(states, map(kept.__contains__, state_groups)):
        rank[group] = order
        seen[group] = counted
        if index >= 0:
            excess[group] = (seq, index)
    for group, seq, index in compress(members, map(kept.__contains__, member_groups)):
        if group not in rank:
            rank[group] = offset + index
        seen[group] = so_far = seen.get(group, 0) + 1
        if so_far == limit + 1 and group not in excess:
            excess[group] = (seq, index)
    return [(rank[group], Overflow(group, totals[group], *excess[group])) for group in chosen], len(over)


def _ranked_before(over: list[str], bound: int, states: list[tuple[Any, ...]], offset: int,
                   member_groups: list[str], indexes: list[int] | None) -> int:
    """How many of a partition's overflowing groups `over` (in order of first appearance) rank
    before `bound`: they are a prefix of `over`, found by bisection, so that a partition where
    most groups overflow (every signature called twice, one attempt allowed) looks at the records
    of only the few groups that can still enter the report. A state group ranks by its order;
    the others, all after the states, by `offset` plus the index of their first member, so only
    the members before index `bound - offset` can be first members of those that qualify (none
    when `bound <= offset`; the members' `indexes` are needed only otherwise)."""
    state_rank = dict(zip(map(itemgetter(0), states), map(itemgetter(1), states), strict=True))
    early = set() if indexes is None else set(member_groups[:bisect_left(indexes, bound - offset)])

    def after(group: str) -> bool:
        rank = state_rank.get(group)
        return rank >= bound if rank is not None else group not in early

    return bisect_left(over, True, key=after)
