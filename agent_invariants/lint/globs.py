"""The glob algebra lint reasons with: whether two globs share a subject, whether one covers another.

A glob is read as a string of symbols: literal characters, `?` (any one character) and `*` (any
run). Lint compares patterns, not subjects, so it ignores what only subjects show (version 1's
`?` and `*` never match a line break, and `?` counts UTF-16 units): a finding rests on the
patterns alone.

- `normalised(g)`: every run of wildcards that holds a `*` becomes its `?`s then one `*` (`*?*`
  is `?*`): the same subjects, one spelling.
- `intersects(p, q)`: some subject matches both. Exact, by dynamic programming over the two
  symbol strings (the positions of q reached are one big integer's bits).
- `subsumes(q, p)`: every subject p matches, q matches too. q must match p read as a string of
  symbols, where a literal matches the same literal, q's `?` any one symbol of p but `*`, and q's
  `*` any run of symbols (the positions of p reached are one big integer's bits). Sound (never
  says yes wrongly); it can miss a subsumption only through spellings normalisation does not
  unify, and then lint only loses a warning.
"""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator
from functools import cached_property, lru_cache
from typing import Generic, TypeVar

from agent_invariants.globs import file_by_rarest_run, literal_runs, run_pieces

__all__ = ("GlobIndex", "NameIndex", "is_literal", "intersects", "matches", "normalised", "prefix", "subsumes",
           "suffix")

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
    # Bit j of `reach`: a[:i] and b[:j] can match one common prefix of a subject, for every j at
    # once. Within a row, a star of a takes any run of b's symbols, and a star of b the character
    # a[i] stands for (normalised, b never has two stars in a row); then a[i] moves to the next row:
    # a star by matching nothing more, one character against a star of b, or against a character
    # of b that it may be.
    everywhere = (1 << (len(b) + 1)) - 1
    at: dict[str, int] = {}   # symbol -> the positions of b that hold it
    for position, symbol in enumerate(b):
        at[symbol] = at.get(symbol, 0) | 1 << position
    stars = at.get(ANY, 0)
    characters = everywhere >> 1 & ~stars
    ones = at.get(ONE, 0)
    reach = 1
    for symbol in a:
        if symbol == ANY:
            reach = everywhere & ~((reach & -reach) - 1)
            continue
        reach |= (reach & stars) << 1
        may_be = characters if symbol == ONE else at.get(symbol, 0) | ones
        reach = reach & stars | (reach & may_be) << 1
        if not reach:
            return False
    reach |= (reach & stars) << 1
    return bool(reach >> len(b) & 1)


@lru_cache(maxsize=65_536)
def subsumes(q: str, p: str) -> bool:
    """Whether every subject `p` matches is matched by `q` (sound: see the module's note)."""
    wide, narrow = normalised(q), normalised(p)
    # Bit j of `reach`: wide[:i] matches narrow[:j] read as symbols, for every j at once (one
    # big-int operation per symbol of q, where a table of |q|·|p| cells took 17 ms for two globs
    # of 500 symbols).
    everywhere = (1 << (len(narrow) + 1)) - 1
    at: dict[str, int] = {}   # symbol -> the positions of p that hold it
    for position, symbol in enumerate(narrow):
        at[symbol] = at.get(symbol, 0) | 1 << position
    not_star = everywhere >> 1 & ~at.get(ANY, 0)
    reach = 1
    for symbol in wide:
        if symbol == ANY:   # the star takes nothing more, or any run of p's symbols (stars too)
            reach = everywhere & ~((reach & -reach) - 1)
        else:               # a literal matches itself, `?` one symbol of p but a star
            reach = (reach & (not_star if symbol == ONE else at.get(symbol, 0))) << 1
            if not reach:
                return False
    return bool(reach >> len(narrow) & 1)


def matches(glob: str, subject: str) -> bool:
    """Whether a literal subject matches the glob (as the algebra reads both: `?` and `*` take
    any character). A glob of at most two stars is a regex search, whose backtracking is then
    at most quadratic; one of three stars or more walks its symbols over the subject's
    characters, as `subsumes` does (the regex took exponential time there: `*a` thirty times
    against forty `a`s, 20 s; the walk is slower than the regex on the usual globs)."""
    if is_literal(glob):
        return glob == subject
    start = prefix(glob)
    if len(start) == len(glob) - 1 and glob[-1] == "*":   # `shell.*`: the usual glob
        return subject.startswith(start)
    symbols = normalised(glob)
    if symbols.count(ANY) <= 2:
        return _pattern(glob).fullmatch(subject) is not None
    everywhere = (1 << (len(subject) + 1)) - 1
    at = _positions(subject)
    reach = 1
    for symbol in symbols:
        if symbol == ANY:
            reach = everywhere & ~((reach & -reach) - 1)
        else:
            reach = (reach & (everywhere >> 1 if symbol == ONE else at.get(symbol, 0))) << 1
            if not reach:
                return False
    return bool(reach >> len(subject) & 1)


@lru_cache(maxsize=65_536)
def _pattern(glob: str) -> re.Pattern[str]:
    parts = [".*" if symbol == ANY else "." if symbol == ONE else re.escape(symbol) for symbol in normalised(glob)]
    return re.compile("".join(parts), re.DOTALL)


@lru_cache(maxsize=4_096)
def _positions(subject: str) -> dict[str, int]:
    """Character -> the positions of the subject that hold it, as the bits of an integer."""
    at: dict[str, int] = {}
    for position, character in enumerate(subject):
        at[character] = at.get(character, 0) | 1 << position
    return at


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


class NameIndex:
    """Literal names (the tools rules require), filed so that the names a glob matches are found
    without trying each one: those that start with the glob's literal prefix, else end with its
    literal suffix (the fewer), else hold its longest literal run, found in all the names at once
    by substring search; only a glob of wildcards alone tries every name. (Tried one by one, 5,000
    bounds on globs against 5,000 required tools took minutes of `lint`, and of every `check`.)"""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = sorted(set(names))
        self._reversed = sorted(name[::-1] for name in self.names)
        self._joined = "\n".join(self.names)   # (a separator in a name only adds candidates `matches` drops)
        self._starts = [0]
        for name in self.names[:-1]:
            self._starts.append(self._starts[-1] + len(name) + 1)

    def matching(self, glob: str) -> list[str]:
        """The names `glob` matches, sorted."""
        return sorted(name for name in self._candidates(glob) if matches(glob, name))

    def _candidates(self, glob: str) -> Iterable[str]:
        if is_literal(glob):
            return [glob] if glob in self._known else []
        start, ending = prefix(glob), suffix(glob)[::-1]
        runs = literal_runs(glob)
        if start or ending:   # (the sizes of the two ranges are estimates: the walks stop where they end)
            by_start, by_end = _span(self.names, start), _span(self._reversed, ending)
            if min(by_start, by_end) > _FEW and runs:   # `t*123*` among `t0`..`t4999`: the run is rarer
                run = max(runs, key=len)
                if self._joined.count(run) < min(by_start, by_end):
                    return self._holding(run)
            if by_start <= by_end:
                return _starting(self.names, start)
            return (name[::-1] for name in _starting(self._reversed, ending))
        if not runs:
            return self.names
        return self._holding(max(runs, key=len))

    def _holding(self, run: str) -> Iterator[str]:
        """The names that hold `run` (and a name run across a separator: `matches` drops it)."""
        joined, starts = self._joined, self._starts
        at = joined.find(run)
        while at != -1:
            index = bisect_right(starts, at) - 1
            yield self.names[index]
            if index + 1 == len(starts):
                return
            at = joined.find(run, starts[index + 1])

    @cached_property
    def _known(self) -> set[str]:
        return set(self.names)


_FEW = 64
"""Names few enough to try one by one rather than count a literal run among all of them."""


def _span(ordered: list[str], start: str) -> int:
    """About how many of the sorted texts start with `start` (all of them for none)."""
    if not start:
        return len(ordered)
    return bisect_left(ordered, start + "\U0010ffff") - bisect_left(ordered, start)


def _starting(ordered: list[str], start: str) -> Iterator[str]:
    """The sorted texts that start with `start`."""
    position = bisect_left(ordered, start)
    while position < len(ordered) and ordered[position].startswith(start):
        yield ordered[position]
        position += 1


class GlobIndex(Generic[T]):
    """Globs, each with a payload, filed so that the few that may cover or meet a glob are found
    without trying them all.

    For `covering`, each glob is filed under one of its literal runs (`globs.file_by_rarest_run`):
    a glob q can cover p only if each of q's runs lies inside one of p's runs (q's literals match
    p's literals one by one), so the candidates for p are the globs filed under some piece of p's
    runs, and those with no literal at all. Then q's prefix must start p's and q's suffix end p's, and only then is the
    symbol-by-symbol test run. (`a*1*b` .. `a*4000*b` share a prefix and a suffix: filed by prefix
    alone, every pair of them was compared, 93 s for 4,000 deny_tool rules.)

    For `meeting`, a literal names one subject, so the globs that meet it are the ones that cover
    it; other globs are filed by literal prefix and suffix: two globs meet only if one prefix
    starts the other and one suffix ends the other. For `subsumed`, by the same filing: a glob
    covers only globs whose prefix starts with its own and whose suffix ends with its own."""

    def __init__(self, items: Iterable[tuple[str, T]]) -> None:
        entries = list(items)
        self._by_prefix: dict[str, dict[str, list[tuple[str, T]]]] = {}
        for glob, payload in entries:
            self._by_prefix.setdefault(prefix(glob), {}).setdefault(suffix(glob), []).append((glob, payload))
        self._prefixes = sorted(self._by_prefix)
        by_run, without = file_by_rarest_run([literal_runs(glob) for glob, _ in entries])
        self._by_run = {run: [entries[number] for number in numbers] for run, numbers in by_run.items()}
        self._by_run[""] = [entries[number] for number in without]
        self._run_sizes = sorted({len(run) for run in by_run})

    def covering(self, glob: str) -> Iterator[T]:
        """The payloads of the globs that subsume `glob`, in no particular order."""
        start, end = prefix(glob), suffix(glob)
        literal = is_literal(glob)
        for piece in sorted({""} | run_pieces(literal_runs(glob), self._run_sizes)):
            for wide, payload in self._by_run.get(piece, ()):
                if start.startswith(prefix(wide)) and end.endswith(suffix(wide)) and (
                        matches(wide, glob) if literal else subsumes(wide, glob)):
                    yield payload

    def subsumed(self, glob: str) -> Iterator[T]:
        """The payloads of the globs that `glob` subsumes, in no particular order (5,000 tool_args
        rules beside 5,000 requirements on other tools, each pair tried, took 65 s of lint)."""
        start, end = prefix(glob), suffix(glob)
        position = bisect_left(self._prefixes, start)
        while position < len(self._prefixes) and self._prefixes[position].startswith(start):
            for other_end, entries in self._by_prefix[self._prefixes[position]].items():
                if other_end.endswith(end):
                    yield from (payload for other, payload in entries if subsumes(glob, other))
            position += 1

    def meeting(self, glob: str) -> Iterator[T]:
        """The payloads of the globs that some subject of `glob` matches too."""
        if is_literal(glob):   # its one subject: the globs that match it are the ones that cover it
            yield from self.covering(glob)
            return
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
