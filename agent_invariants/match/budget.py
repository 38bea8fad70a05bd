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

Loading a contract has a bound of its own, on any command: its `$regex` patterns may compile to
`MAX_PROGRAM` RE2 instructions in all (`program_budget`, which `match.regex` spends).
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

__all__ = ("MAX_PROGRAM", "TooManySteps", "charging", "limited", "program_budget", "program_left", "spend")

MAX_PROGRAM = 3_000_000
"""The most RE2 instructions the patterns of one contract compile to, together (`program_budget`).
A pattern of 500 characters may compile to far more than its length: `\\pL{100}` is 119,604
instructions, about 3 MB and 70 ms to compile, and a contract of 300 such rules took 1.1 GB and
21 s to load (10,000 would take 37 GB). Usual patterns take 6 to 100 (`^A[0-9]+$`, an e-mail's
shape), `\\pL+` 1,201, `.{1000}` 8,004: this is room for 2,500 of the last but one, and some
90 MB."""


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
_PROGRAM: ContextVar[_Left | None] = ContextVar("_PROGRAM", default=None)


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


@contextlib.contextmanager
def program_budget() -> Iterator[None]:
    """Within this block (one pass over a contract: decoding it, or the walk naming its problems),
    the RE2 patterns compiled may take `MAX_PROGRAM` instructions in all; `match.regex` refuses
    the one that would pass it (a RegexError, so its path is named). A block within another (a
    contract loaded while one loads) shares the outer budget."""
    if _PROGRAM.get() is not None:
        yield
        return
    token = _PROGRAM.set(_Left(MAX_PROGRAM))
    try:
        yield
    finally:
        _PROGRAM.reset(token)


def program_left() -> _Left | None:
    """The program budget of the block compiling now (None outside one): what is `left` of it,
    below 0 once a pattern passed it."""
    return _PROGRAM.get()
