"""`$regex` patterns (and a tool_args schema's `pattern`s): RE2 syntax, searched in linear time.

A contract's patterns meet text from traces, which nobody controls: a backtracking engine can
take hours on `(a+)+$` and a line of forty `a`s. So patterns are RE2's (spec §2, §10 point 10),
and the loader refuses, whichever engine runs, what RE2 cannot run: backreferences, lookaround,
atomic groups, possessive quantifiers, conditionals, comments, and Python's own flags and escapes
(`_not_re2`), and patterns over 500 characters.

With the `re2` extra (google-re2) the search runs on RE2 itself, through a one-pattern `re2.Set`:
it answers only whether the pattern is found, which is all a match asks, in a fifth of the time
of `re2.compile(...).search` (whose match object is built in Python). Without it, Python's
engine runs a translation with RE2's meanings: `$` only at the very end unless the pattern turns
on multi-line mode (`\\z` is Python's `\\Z`), POSIX classes such as `[[:digit:]]`, and ASCII `\\d`,
`\\w`, `\\s`, `\\b`. RE2 features Python lacks (`\\pL`, `\\Q…\\E`, `(?<name>…)`, `(?U)`) then need
the extra, and nested repetition can be slow on long text: install the extra where traces are not
trusted.
"""
from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

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
    if engine is not None:
        return _re2_search(engine, pattern)
    return _python_search(pattern)


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
    (unless an inline flag turns on multi-line mode), POSIX classes spelt out."""
    multi_line = any("m" in flags.split("-")[0] for flags in _INLINE_FLAGS.findall(pattern))
    out, at, size = [], 0, len(pattern)
    while at < size:
        char = pattern[at]
        if char == "\\":
            pair = pattern[at:at + 2]
            out.append("\\Z" if pair == "\\z" else pair)
            at += 2
        elif char == "[":
            end = _class_end(pattern, at)
            out.append(_posix_classes(pattern[at:end]))
            at = end
        else:
            out.append("\\Z" if char == "$" and not multi_line else char)
            at += 1
    return "".join(out)


def _posix_classes(text: str) -> str:
    return re.sub(r"\[:(\^?)([a-z]+):\]", lambda found: _POSIX.get(found[2], found[0]) if not found[1] else found[0],
                  text)


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
