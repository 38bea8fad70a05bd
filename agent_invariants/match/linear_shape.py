"""Which `$regex` patterns Python's backtracking engine surely searches in linear time.

RE2 answers in time linear in the text for any pattern, and is what `$regex` means. But each call
into it costs about 0.35 µs through its Python binding, against 0.1 µs for Python's own engine,
and a check runs a pattern on every call of a tool. So the patterns of two simple shapes, where
backtracking cannot take more steps than the text has characters, run on Python's engine (through
the same translation that gives RE2's meaning when RE2 is not installed), and every other on RE2:

- a plain literal, such as `@competitor\\.`: found by the engine's prefix search;
- `^`, then atoms, each maybe repeated (`*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`), then maybe `$`,
  where an atom is a character, an escaped punctuation mark, `.`, `\\d`, `\\w`, or a class of
  characters, ranges, escaped punctuation marks, `\\d` and `\\w` (`[^@]`); and where no atom that
  repeats a varying number of times shares a character with what may come right after it (the
  atoms up to the first that must appear): `^A[0-9]+$`, `^[a-z]+ [0-9]+$`, `^[^@]+@[^@]+$`.

In the second shape the engine only ever tries the start of the text, and a character an atom
gives back can never be taken by what follows it, so the rest fails at once: each character is
given back at most once. Groups, alternation, flags and every other escape leave a pattern on RE2.

    linear_in_python("^A[0-9]+$")    # True
    linear_in_python("^[a-z]*[a-z]$")  # False: the star gives back a letter the last atom takes
"""
from __future__ import annotations

import re

from agent_invariants.match.code_points import PERL, Ranges, complement, overlap

__all__ = ("linear_in_python",)

_CLASS_ESCAPES = {"d": PERL["d"], "w": PERL["w"]}   # (not \\s: it stays on RE2, as every other escape)
_NOT_NEWLINE: Ranges = complement([(10, 10)])
_META = frozenset("\\^$.|?*+()[]{}")
_REPEAT = re.compile(r"\{([0-9]+)(,?)([0-9]*)\}")


class _Atom:
    """One atom of the second shape: the characters it takes, and how often (None: no most)."""

    __slots__ = ("chars", "least", "most")

    def __init__(self, chars: Ranges, least: int, most: int | None) -> None:
        self.chars, self.least, self.most = chars, least, most


def linear_in_python(pattern: str) -> bool:
    """Whether `pattern` (RE2 syntax, already accepted by RE2) has one of the two shapes above."""
    anchored = pattern.startswith("^")
    atoms = _atoms(pattern[1:] if anchored else pattern)
    if atoms is None:
        return False
    if not anchored:   # a plain literal: single characters, each once
        return all(atom.least == atom.most == 1 and len(atom.chars) == 1 and atom.chars[0][0] == atom.chars[0][1]
                   for atom in atoms)
    for position, atom in enumerate(atoms):
        if atom.least == atom.most:
            continue   # nothing to give back
        for following in atoms[position + 1:]:
            if overlap(atom.chars, following.chars):
                return False
            if following.least:
                break
    return True


def _atoms(body: str) -> list[_Atom] | None:
    """The atoms of `body` (a pattern without its leading `^`), or None when it holds anything
    but atoms and repeats, and a `$` at its very end."""
    atoms: list[_Atom] = []
    at, size = 0, len(body)
    while at < size:
        char = body[at]
        chars: Ranges | None
        if char == "\\":
            chars, at = _escape(body[at + 1:at + 2]), at + 2
        elif char == "[":
            chars, at = _class(body, at)
        elif char == ".":
            chars, at = _NOT_NEWLINE, at + 1
        elif char == "$" and at == size - 1:
            break
        elif char in _META:
            return None
        else:
            chars, at = ((ord(char), ord(char)),), at + 1
        if chars is None:
            return None
        repeat = _repeat(body, at)
        if repeat is None:
            return None
        least, most, at = repeat
        atoms.append(_Atom(chars, least, most))
    return atoms


def _escape(char: str) -> Ranges | None:
    """The characters of `\\d`, `\\w` or an escaped ASCII punctuation mark; None for any other escape."""
    if char in _CLASS_ESCAPES:
        return _CLASS_ESCAPES[char]
    if char.isascii() and not char.isalnum() and char.isprintable() and char != " ":
        return ((ord(char), ord(char)),)
    return None


def _class(body: str, at: int) -> tuple[Ranges | None, int]:
    """The characters of the class that starts at `at` (characters, ranges, escaped punctuation,
    `\\d`, `\\w`, maybe negated), and the position after it; None for any other class."""
    at += 1
    negated = body[at:at + 1] == "^"
    at += negated
    if body[at:at + 1] in ("]", "-", ""):
        return None, at   # a `]` or `-` first is a character in RE2: left to it, as rare
    ranges: list[tuple[int, int]] = []
    while at < len(body) and body[at] != "]":
        if body[at] == "\\":
            chars = _escape(body[at + 1:at + 2])
            if chars is None:
                return None, at
            ranges += chars
            at += 2
            continue
        if body[at] in "[-":
            return None, at   # POSIX classes, and dashes not inside a range of two characters
        first = ord(body[at])
        if body[at + 1:at + 2] == "-" and body[at + 2:at + 3] not in ("]", "\\", "[", ""):
            ranges.append((first, ord(body[at + 2])))
            at += 3
        else:
            ranges.append((first, first))
            at += 1
    if at >= len(body) or not ranges:
        return None, at
    return (complement(ranges) if negated else tuple(ranges)), at + 1


def _repeat(body: str, at: int) -> tuple[int, int | None, int] | None:
    """(least, most, position after) of the repeat at `at`, (1, 1, at) when there is none; None
    for a lazy or doubled repeat, and for a brace that is not one."""
    char = body[at:at + 1]
    if char == "*":
        least, most, at = 0, None, at + 1
    elif char == "+":
        least, most, at = 1, None, at + 1
    elif char == "?":
        least, most, at = 0, 1, at + 1
    elif char == "{":
        found = _REPEAT.match(body, at)
        if found is None:
            return None
        least = int(found[1])
        most = least if not found[2] else int(found[3]) if found[3] else None
        at = found.end()
    else:
        return 1, 1, at
    if body[at:at + 1] in ("?", "+", "*", "{"):
        return None
    return least, most, at
