"""The glob algebra lint reasons with: whether two globs share a subject, whether one covers another.

A glob is read as a string of symbols: literal characters, `?` (any one character) and `*` (any
run). Lint compares patterns, not subjects, so it ignores what only subjects show (version 1's
`?` and `*` never match a line break, and `?` counts UTF-16 units): a finding rests on the
patterns alone.

- `normalised(g)`: every run of wildcards that holds a `*` becomes its `?`s then one `*` (`*?*`
  is `?*`): the same subjects, one spelling.
- `intersects(p, q)`: some subject matches both. Exact, by dynamic programming over the two
  symbol strings (O(|p|·|q|)).
- `subsumes(q, p)`: every subject p matches, q matches too. q must match p read as a string of
  symbols, where a literal matches the same literal, q's `?` any one symbol of p but `*`, and q's
  `*` any run of symbols. Sound (never says yes wrongly); it can miss a subsumption only through
  spellings normalisation does not unify, and then lint only loses a warning.
"""
from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Generic, TypeVar

__all__ = ("GlobIndex", "is_literal", "intersects", "matches", "normalised", "prefix", "subsumes", "suffix")

T = TypeVar("T")

ONE = "\x00?"
"""The `?` symbol (a string no character equals)."""
ANY = "\x00*"
"""The `*` symbol."""

Symbols = tuple[str, ...]


def is_literal(glob: str) -> bool:
    """A glob without wildcards names exactly one subject."""
    return "*" not in glob and "?" not in glob


@lru_cache(maxsize=65_536)
def normalised(glob: str) -> Symbols:
    """The glob as symbols, each wildcard run with a `*` written as its `?`s then one `*`."""
    out: list[str] = []
    run_ones = 0
    run_star = False
    for char in glob:
        if char == "?":
            run_ones += 1
        elif char == "*":
            run_star = True
        else:
            out += [ONE] * run_ones + ([ANY] if run_star else [])
            run_ones, run_star = 0, False
            out.append(char)
    out += [ONE] * run_ones + ([ANY] if run_star else [])
    return tuple(out)


@lru_cache(maxsize=65_536)
def intersects(p: str, q: str) -> bool:
    """Whether some subject matches both globs."""
    a, b = normalised(p), normalised(q)
    # reach[i][j]: a[:i] and b[:j] can match one common prefix of a subject
    reach = [[False] * (len(b) + 1) for _ in range(len(a) + 1)]
    reach[0][0] = True
    for i in range(len(a) + 1):
        for j in range(len(b) + 1):
            if not reach[i][j]:
                continue
            x = a[i] if i < len(a) else None
            y = b[j] if j < len(b) else None
            if x == ANY:
                reach[i + 1][j] = True              # the star matches nothing more
                if y is not None and y != ANY:
                    reach[i][j + 1] = True          # ... or also the character b[j] stands for
            if y == ANY:
                reach[i][j + 1] = True
                if x is not None and x != ANY:
                    reach[i + 1][j] = True
            if x is not None and y is not None and x != ANY and y != ANY and (x == y or ONE in (x, y)):
                reach[i + 1][j + 1] = True          # one character both stand for
    return reach[len(a)][len(b)]


@lru_cache(maxsize=65_536)
def subsumes(q: str, p: str) -> bool:
    """Whether every subject `p` matches is matched by `q` (sound: see the module's note)."""
    wide, narrow = normalised(q), normalised(p)
    # fits[i][j]: wide[:i] matches narrow[:j] read as symbols
    fits = [[False] * (len(narrow) + 1) for _ in range(len(wide) + 1)]
    fits[0][0] = True
    for i in range(len(wide) + 1):
        for j in range(len(narrow) + 1):
            if not fits[i][j] or i == len(wide):
                continue
            symbol = wide[i]
            if symbol == ANY:
                fits[i + 1][j] = True               # the star takes nothing more
                if j < len(narrow):
                    fits[i][j + 1] = True           # ... or one more symbol of p, a star included
            elif j < len(narrow) and (symbol == narrow[j] if symbol != ONE else narrow[j] != ANY):
                fits[i + 1][j + 1] = True
    return fits[len(wide)][len(narrow)]


def matches(glob: str, subject: str) -> bool:
    """Whether a literal subject matches the glob (as the algebra reads both: `?` and `*` take
    any character)."""
    if is_literal(glob):
        return glob == subject
    start = prefix(glob)
    if len(start) == len(glob) - 1 and glob[-1] == "*":   # `shell.*`: the usual glob
        return subject.startswith(start)
    return _pattern(glob).fullmatch(subject) is not None


@lru_cache(maxsize=65_536)
def _pattern(glob: str) -> re.Pattern[str]:
    parts = [".*" if symbol == ANY else "." if symbol == ONE else re.escape(symbol) for symbol in normalised(glob)]
    return re.compile("".join(parts), re.DOTALL)


@lru_cache(maxsize=1 << 16)
def suffix(glob: str) -> str:
    """The literal characters a glob ends with (all of it, for a literal)."""
    for position in range(len(glob) - 1, -1, -1):
        if glob[position] in "*?":
            return glob[position + 1:]
    return glob


@lru_cache(maxsize=1 << 16)
def prefix(glob: str) -> str:
    """The literal characters a glob starts with (all of it, for a literal)."""
    for position, char in enumerate(glob):
        if char in "*?":
            return glob[:position]
    return glob


class GlobIndex(Generic[T]):
    """Globs, each with a payload, filed by their literal prefix and suffix, so that the few that
    may cover or meet a glob are found without trying them all: a glob q can cover p only if q's
    prefix starts p's and q's suffix ends p's, and two globs meet only if one prefix starts the
    other. Contracts of thousands of rules are linted pairwise only among such candidates (`*.op1`
    and `*.op2` share the empty prefix, but not their suffixes)."""

    def __init__(self, items: Iterable[tuple[str, T]]) -> None:
        self._by_prefix: dict[str, dict[str, list[tuple[str, T]]]] = {}
        for glob, payload in items:
            self._by_prefix.setdefault(prefix(glob), {}).setdefault(suffix(glob), []).append((glob, payload))
        self._prefixes = sorted(self._by_prefix)

    def covering(self, glob: str) -> Iterator[T]:
        """The payloads of the globs that subsume `glob`, in the order they were given within a
        prefix and suffix (prefixes shortest first, then suffixes shortest first)."""
        start, end = prefix(glob), suffix(glob)
        literal = is_literal(glob)
        for size in range(len(start) + 1):
            by_suffix = self._by_prefix.get(start[:size])
            if by_suffix is None:
                continue
            for cut in range(len(end), -1, -1):   # suffixes that end glob's, shortest first
                for wide, payload in by_suffix.get(end[cut:], ()):
                    if matches(wide, glob) if literal else subsumes(wide, glob):
                        yield payload

    def meeting(self, glob: str) -> Iterator[T]:
        """The payloads of the globs that some subject of `glob` matches too."""
        start = prefix(glob)
        seen: set[str] = set()
        for size in range(len(start) + 1):   # prefixes that start glob's
            seen.add(start[:size])
            yield from self._meeting_in(self._by_prefix.get(start[:size], {}), glob)
        position = bisect_left(self._prefixes, start)   # prefixes that glob's starts
        while position < len(self._prefixes) and self._prefixes[position].startswith(start):
            found = self._prefixes[position]
            position += 1
            if found not in seen:
                yield from self._meeting_in(self._by_prefix[found], glob)

    @staticmethod
    def _meeting_in(by_suffix: dict[str, list[tuple[str, T]]], glob: str) -> Iterator[T]:
        end = suffix(glob)
        for other_end, entries in by_suffix.items():
            if not (end.endswith(other_end) or other_end.endswith(end)):
                continue   # no subject ends with both
            for other, payload in entries:
                if intersects(other, glob):
                    yield payload
