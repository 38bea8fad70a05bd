"""A bound on the work of one check, for the MCP server, whose contracts and traces may come
from anyone (the command line has none: its user waits for what they asked).

Parts of the match grammar do work that neither the rules nor the events count: a
`$from_result` reference that no index serves tries each earlier result of its tool for each
call checked (results × calls), and a `$contains` tries its tree on each item of an array (items
× the tree's size: 1,000 rules of 10 nodes against an array of 10,000 items took two minutes).
Others do work that grows with one value, for each rule that reads it: a `$regex` searches the
whole text (a thousand rules on a text of 10 MB: 41 s), a schema applies its keywords to each
value it reaches, an exact literal lists each key it lacks, `distinct` writes the canonical form of
the args it keys on. Under `limited(n)`, they spend from one budget of n steps (a step is about a
microsecond's work), and the check raises `TooManySteps` once it is spent; outside it, spending
costs one lookup, and what only a budget counts is not even measured (`charging`).

    with limited(10_000_000):
        report = check_trace(contract, events)     # or TooManySteps
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

__all__ = ("TooManySteps", "charging", "limited", "spend")


class TooManySteps(Exception):
    """A check under `limited(n)` that took more than n steps."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the check took more than {limit:,} steps")
        self.limit = limit


class _Left:
    """What is left of a budget."""

    __slots__ = ("left", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = self.left = limit


_BUDGET: ContextVar[_Left | None] = ContextVar("_BUDGET", default=None)


@contextlib.contextmanager
def limited(limit: int) -> Iterator[_Left]:
    """Within this block, a check raises `TooManySteps` once it has spent more than `limit` (what
    is `left` of it is yielded)."""
    left = _Left(limit)
    token = _BUDGET.set(left)
    try:
        yield left
    finally:
        _BUDGET.reset(token)


def spend(steps: int) -> None:
    """Count `steps` against the budget, if there is one (`TooManySteps` once it is spent)."""
    budget = _BUDGET.get()
    if budget is not None:
        budget.left -= steps
        if budget.left < 0:
            raise TooManySteps(budget.limit)


def charging() -> bool:
    """Whether a budget is set. What is compiled under one counts the work that grows with the
    size of a value, not with the rule: a `$regex` the text it searches, a schema each keyword it
    applies. (The MCP server compiles a contract under the budget that checks it; compiled
    outside one, they cost what they cost without.)"""
    return _BUDGET.get() is not None
