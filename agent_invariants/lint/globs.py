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

from functools import lru_cache

__all__ = ("is_literal", "intersects", "matches", "normalised", "subsumes")

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
    """Whether a literal subject matches the glob (as the algebra reads both)."""
    return subsumes(glob, subject)
