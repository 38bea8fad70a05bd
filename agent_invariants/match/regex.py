"""`$regex` patterns (and a tool_args schema's `pattern`s): RE2 syntax, searched in linear time.

A contract's patterns meet text from traces, which nobody controls: a backtracking engine can
take hours on `(a+)+$` and a line of forty `a`s. So patterns are RE2's (spec §2, §10 point 10),
and the loader refuses, whichever engine runs, what RE2 cannot run: backreferences, lookaround,
atomic groups, possessive quantifiers, conditionals, comments, and Python's own flags and escapes
(`_not_re2`), and patterns over 500 characters.

With the `re2` extra (google-re2) the search runs on RE2 itself, through a one-pattern `re2.Set`:
it answers only whether the pattern is found, which is all a match asks, in a fifth of the time
of `re2.compile(...).search` (whose match object is built in Python). A pattern of the simple
shapes `linear_shape` names (`^A[0-9]+$`, a plain literal), which Python's engine also searches
in linear time, and three times sooner than a call into RE2, runs there instead. Without it, Python's
engine runs a translation with RE2's meanings: `$` only at the very end unless the pattern turns
on multi-line mode (`\\z` is Python's `\\Z`), POSIX classes such as `[[:digit:]]`, ASCII `\\d`,
`\\w`, `\\s`, `\\b`, Unicode general categories (`\\pL`, `\\p{Lu}`, `\\PN`, `\\p{^Z}`, `\\p{Any}`) as
the code points Python's own Unicode tables give them, `\\x{41}`, `\\Q…\\E`, `\\C` (one character
here) and a `-` beside a class escape in a set (`[\\d-z]`: a literal dash). What is left (scripts
such as `\\p{Greek}`, `(?U)`, `(?<name>…)`) needs the extra; so do untrusted traces, as nested
repetition can be slow on long text.
"""
from __future__ import annotations

import functools
import re
import unicodedata
import warnings
from collections.abc import Callable
from typing import Any

from agent_invariants.match.code_points import Ranges, complement
from agent_invariants.match.linear_shape import linear_in_python

__all__ = ("MAX_REGEX", "RegexError", "compile_search")

MAX_REGEX = 500
"""The longest pattern, in characters."""

_MAX_REPEAT = 1000   # RE2's largest {n,m}
_INLINE_FLAGS = re.compile(r"\(\?([a-zA-Z-]*)[:)]")
_REPEAT = re.compile(r"\{(\d*)(,?)(\d*)\}")
_POSIX = {"alnum": "0-9A-Za-z", "alpha": "A-Za-z", "ascii": "\\x00-\\x7f", "blank": "\\t ",
          "cntrl": "\\x00-\\x1f\\x7f", "digit": "0-9", "graph": "!-~", "lower": "a-z", "print": " -~",
          "punct": "!-/:-@\\[-`{-~", "space": "\\t\\n\\v\\f\\r ", "upper": "A-Z", "word": "0-9A-Za-z_",
          "xdigit": "0-9A-Fa-f"}


class RegexError(ValueError):
    """A pattern that cannot be used; the message says why ("cannot hold a lookaround ...")."""


def compile_search(pattern: str) -> Callable[[str], object]:
    """A search for `pattern` (its result is None when not found). Raises RegexError."""
    if len(pattern) > MAX_REGEX:
        raise RegexError(f"patterns are at most {MAX_REGEX} characters")
    problem = _not_re2(pattern)
    if problem is not None:
        raise RegexError(f"cannot hold {problem} (RE2 syntax: matching stays linear in time)")
    engine = _re2()
    if engine is None:
        return _python_search(pattern)
    search = _re2_search(engine, pattern)   # RE2 judges the pattern either way
    if linear_in_python(pattern):   # a shape Python's engine searches in linear time, and sooner
        return _python_search(pattern)
    return search


def _re2() -> Any:
    try:
        import re2  # the google-re2 wheel (extra `re2`)
    except ImportError:
        return None
    return re2


def _re2_search(engine: Any, pattern: str) -> Callable[[str], object]:
    options = engine.Options()
    options.log_errors = False   # RE2 would print its own lines on stderr
    try:
        engine.compile(pattern, options=options)   # RE2's own words on a pattern it cannot compile
    except engine.error as exc:
        reason = exc.args[0] if exc.args else exc
        text = reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)
        raise RegexError(f"is not a valid pattern: {text}") from None
    found = engine.Set.SearchSet(options)
    found.Add(pattern)
    found.Compile()
    inner = getattr(found, "_set", None)   # the compiled set under google-re2's Python wrapper
    if inner is None:
        search: Callable[[str], object] = found.Match
        return search
    match = inner.Match   # what the wrapper's Match calls on the UTF-8 text, minus a frame per search
    return lambda text: match(text.encode()) or None


def _python_search(pattern: str) -> Callable[[str], object]:
    translated = _python_pattern(pattern)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # "possible nested set": the translation means what RE2 does
            return re.compile(translated, re.ASCII).search
    except re.error as exc:
        raise RegexError(f"is not a valid pattern here: {exc} (RE2 may accept it: install the re2 extra)") from None


def _python_pattern(pattern: str) -> str:
    """The pattern as Python's engine says it with RE2's meaning: `$` and `\\z` at the very end
    (unless an inline flag turns on multi-line mode), classes and escapes Python lacks spelt out."""
    multi_line = any("m" in flags.split("-")[0] for flags in _INLINE_FLAGS.findall(pattern))
    out, at, size = [], 0, len(pattern)
    while at < size:
        char = pattern[at]
        if char == "\\":
            if pattern[at + 1:at + 2] == "Q":   # \Q…\E: literal text, to \E or the end
                end = pattern.find("\\E", at + 2)
                end = size if end == -1 else end
                out.append(re.escape(pattern[at + 2:end]))
                at = end + 2
                continue
            escape, at = _escape(pattern, at)
            out.append("\\Z" if escape == "\\z" else "(?s:.)" if escape == "\\C" else _outside_class(escape))
        elif char == "[":
            end = _class_end(pattern, at)
            out.append(_set(pattern[at:end]))
            at = end
        else:
            out.append("\\Z" if char == "$" and not multi_line else char)
            at += 1
    return "".join(out)


_PROPERTY = re.compile(r"\\([pP])(?:\{(\^?)([A-Za-z_]+)\}|([A-Za-z]))")
_CODE_POINT = re.compile(r"\\x\{([0-9A-Fa-f]{1,6})\}")


def _escape(pattern: str, at: int) -> tuple[str, int]:
    """The escape that starts at `at` (`\\pL`, `\\p{Lu}`, `\\x{41}`, or a backslash and one
    character) and the position after it."""
    for form in (_PROPERTY, _CODE_POINT):
        found = form.match(pattern, at)
        if found is not None:
            return found[0], found.end()
    return pattern[at:at + 2], at + 2


def _outside_class(escape: str) -> str:
    property_ranges = _property(escape)
    if property_ranges is not None:
        negated, ranges = property_ranges
        return f"[{'^' if negated else ''}{_written(ranges)}]"
    return _code_point(escape)


def _code_point(escape: str) -> str:
    found = _CODE_POINT.fullmatch(escape)
    if found is None or int(found[1], 16) > 0x10FFFF:
        return escape   # Python's engine says what is wrong with it
    return f"\\U{int(found[1], 16):08X}"


def _set(text: str) -> str:
    """A character class in Python's words: POSIX classes and Unicode categories spelt out as
    ranges, `\\x{…}` as `\\U…`, and a `-` next to a class escape (`[\\d-z]`) a literal dash."""
    out, at = [text[0]], 1
    if text[at:at + 1] == "^":
        out.append("^")
        at += 1
    end = len(text) - 1   # the closing `]`
    after_class = False   # the last item was a class escape or a POSIX class: a `-` next is literal
    while at < end:
        if text.startswith("[:", at):
            close = text.find(":]", at + 2)
            if close != -1:
                name = text[at:close + 2]
                posix = re.fullmatch(r"\[:(\^?)([a-z]+):\]", name)
                out.append(_POSIX.get(posix[2], name) if posix and not posix[1] else name)
                at, after_class = close + 2, True
                continue
        char = text[at]
        if char == "\\":
            escape, at = _escape(text, at)
            property_ranges = _property(escape)
            if property_ranges is not None:
                negated, ranges = property_ranges
                out.append(_written(complement(ranges) if negated else ranges))
            else:
                out.append(_code_point(escape))
            after_class = property_ranges is not None or escape[1:2] in ("d", "D", "w", "W", "s", "S")
            continue
        if char == "-" and after_class and at < end - 1:   # RE2 reads it as a dash; Python as a bad range
            out.append("\\-")
        else:
            out.append(char)
        at += 1
        after_class = False
    out.append("]")
    return "".join(out)


def _property(escape: str) -> tuple[bool, Ranges] | None:
    """(negated, the code points) of a Unicode property escape; None for any other escape, and
    for properties Python's tables cannot say (scripts): Python's engine then refuses them."""
    found = _PROPERTY.fullmatch(escape)
    if found is None:
        return None
    name = found[3] or found[4]
    negated = (found[1] == "P") != (found[2] == "^")
    if name == "Any":
        return negated, ((0, 0x10FFFF),)
    if name not in _CATEGORIES:
        return None
    return negated, _category_ranges(name)


_CATEGORIES = frozenset({"C", "Cc", "Cf", "Co", "Cs", "L", "Ll", "Lm", "Lo", "Lt", "Lu", "M", "Mc", "Me", "Mn", "N",
                         "Nd", "Nl", "No", "P", "Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps", "S", "Sc", "Sk", "Sm", "So",
                         "Z", "Zl", "Zp", "Zs"})


@functools.cache
def _category_ranges(name: str) -> Ranges:
    """The code points of a general category (one letter: all of its two-letter ones)."""
    ranges: list[tuple[int, int]] = []
    for code in range(0x110000):
        category = unicodedata.category(chr(code))
        if category == name or category[0] == name:
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))
    return tuple(ranges)


def _written(ranges: Ranges) -> str:
    """Ranges as the inside of a set: `\\U…` for each code point, a dash between first and last."""
    return "".join(f"\\U{first:08X}" if first == last else f"\\U{first:08X}-\\U{last:08X}" for first, last in ranges)


def _class_end(pattern: str, at: int) -> int:
    """The position just after the character class that starts at `at` (POSIX classes inside)."""
    at += 1
    if pattern[at:at + 1] == "^":
        at += 1
    if pattern[at:at + 1] == "]":
        at += 1
    while at < len(pattern) and pattern[at] != "]":
        if pattern[at] == "\\":
            at += 2
        elif pattern[at:at + 2] == "[:":
            close = pattern.find(":]", at + 2)
            at = close + 2 if close != -1 else at + 1
        else:
            at += 1
    return at + 1


def _not_re2(pattern: str) -> str | None:
    """The first feature of `pattern` that RE2 lacks (and Python has), or None: refused whichever
    engine runs, so a pattern means the same wherever it is checked. Escapes and character classes
    are stepped over, so `\\\\1` (a backslash, then 1) or `[(?=]` are no false alarms."""
    at, size = 0, len(pattern)
    while at < size:
        char = pattern[at]
        if char == "\\":
            following = pattern[at + 1:at + 2]
            if following.isdigit() and following != "0":
                return "a backreference"
            if following in ("k", "g") and pattern[at + 2:at + 3] == "<":
                return "a backreference"
            if following == "Z":
                return "\\Z (RE2 writes the end of the text \\z)"
            if following in ("u", "U", "N"):
                return f"\\{following} (RE2 writes a code point \\x{{41}})"
            at += 2
            continue
        if char == "[":
            at = _class_end(pattern, at)
            continue
        if char == "(" and pattern[at + 1:at + 2] == "?":
            head = pattern[at + 2:at + 4]
            if head[:1] in ("=", "!") or head in ("<=", "<!"):
                return "a lookaround"
            if head[:1] == ">":
                return "an atomic group"
            if head[:1] == "(":
                return "a conditional"
            if head == "P=":
                return "a backreference"
            if head[:1] == "#":
                return "a comment group"
            flags = _INLINE_FLAGS.match(pattern, at)
            if flags is not None and set(flags[1]) - set("imsU-"):
                return f"the inline flag {flags[1]!r} (RE2 knows i, m, s and U)"
        if char in "*+?}" and pattern[at + 1:at + 2] == "+":
            return "a possessive quantifier"
        if char == "{":
            repeat = _REPEAT.match(pattern, at)
            if repeat is not None:
                if not repeat[1] and repeat[2]:
                    return "a repetition without a lower bound ({,n}: write {0,n})"
                if max(int(repeat[1] or 0), int(repeat[3] or 0)) > _MAX_REPEAT:
                    return f"a repetition over {_MAX_REPEAT}"
        at += 1
    return None
