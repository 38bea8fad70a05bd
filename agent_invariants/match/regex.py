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
in linear time, and three times sooner than a call into RE2, runs there instead.

Without the extra, Python's engine runs a translation with RE2's meanings: `$` is the very end of
the text outside multi-line mode (`\\z` is Python's `\\Z`); `\\d`, `\\w`, `\\s` (no vertical tab),
`\\b`, `\\B` and POSIX classes (`[[:digit:]]`, `[[:^alpha:]]`) are ASCII, spelt out as ranges,
while `(?i)` folds every letter (`(?i)é` finds `É`); Unicode general categories and scripts (`\\pL`,
`\\p{Lu}`, `\\PN`, `\\p{^Z}`, `\\p{Greek}`, `\\p{Any}`) are the code points RE2's own tables give them
(`unicode_tables`); `\\x{41}`, octal `\\141`, `(?<name>…)`, `\\Q…\\E`, a `-` beside a class escape in
a set (`[\\d-z]`: a literal dash), an empty class (`[\\P{Any}]`), a quantified assertion (`^*`) and
the ungreedy flag `(?U)` are spelt Python's way; flags set after the start of a group hold to its
end. An unterminated class, an unknown POSIX class or Unicode class, a range ending at a class
escape (`[a-\\d]`), nested repetitions past 1000 and the escapes RE2 lacks are refused by both
engines. Untrusted traces need the extra, as nested repetition can be slow on long text. What
still departs from RE2: under `(?i)`, `İ` and `ı` fold to `i`, and a negated item of a class
(`[\\P{Lu}]`) is folded after it is negated, where RE2 folds before; `\\C` is one character, not one
byte; `\\B` never falls between the bytes of one character; a pattern past RE2's program size is
taken, `[--[:alpha:]]` is read as a POSIX class; a quantifier after an empty `\\Q\\E` that follows
a quantifier is refused. The manual (`match`) lists the same; `tests/test_regex_engines_agree.py`
holds one case of each.
"""
from __future__ import annotations

import contextlib
import re
import warnings
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

from agent_invariants.match.budget import charging, program_left, spend
from agent_invariants.match.code_points import PERL, Ranges, complement
from agent_invariants.match.linear_shape import linear_in_python

__all__ = ("MAX_REGEX", "RegexError", "compile_search", "linear_only")

MAX_REGEX = 500
"""The longest pattern, in characters."""

_MAX_REPEAT = 1000   # RE2's largest {n,m}
_INLINE_FLAGS = re.compile(r"\(\?([a-zA-Z-]*)[:)]")
_REPEAT = re.compile(r"\{(\d*)(,?)(\d*)\}")
_POSIX: dict[str, Ranges] = {
    "alnum": ((0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A)), "alpha": ((0x41, 0x5A), (0x61, 0x7A)), "ascii": ((0, 0x7F),),
    "blank": ((0x09, 0x09), (0x20, 0x20)), "cntrl": ((0, 0x1F), (0x7F, 0x7F)), "digit": PERL["d"],
    "graph": ((0x21, 0x7E),), "lower": ((0x61, 0x7A),), "print": ((0x20, 0x7E),),
    "punct": ((0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E)), "space": ((0x09, 0x0D), (0x20, 0x20)),
    "upper": ((0x41, 0x5A),), "word": PERL["w"], "xdigit": ((0x30, 0x39), (0x41, 0x46), (0x61, 0x66))}
# RE2's \b and \B, on ASCII word characters whatever the case flag says
_WORD_CHAR = "(?-i:[0-9A-Za-z_])"
_BOUNDARY = f"(?:(?<={_WORD_CHAR})(?!{_WORD_CHAR})|(?<!{_WORD_CHAR})(?={_WORD_CHAR}))"
_NOT_BOUNDARY = f"(?:(?<={_WORD_CHAR})(?={_WORD_CHAR})|(?<!{_WORD_CHAR})(?!{_WORD_CHAR}))"


class RegexError(ValueError):
    """A pattern that cannot be used; the message says why ("cannot hold a lookaround ...")."""


_LINEAR_ONLY: ContextVar[bool] = ContextVar("_LINEAR_ONLY", default=False)


@contextlib.contextmanager
def linear_only() -> Iterator[None]:
    """Within this block, a pattern is refused when RE2 is not installed and Python's engine might
    take longer than linear time on it (`(a+)+b` took 26 s on 28 characters): the MCP server's
    contracts and traces come from anyone, and its one worker would be held."""
    token = _LINEAR_ONLY.set(True)
    try:
        yield
    finally:
        _LINEAR_ONLY.reset(token)


def compile_search(pattern: str) -> Callable[[str], object]:
    """A search for `pattern` (its result is None when not found). Raises RegexError. Compiled
    under a budget (`budget.charging`), a search of a long text spends steps for its length."""
    search = _compiled_search(pattern)
    return _charged(search) if charging() else search


def _charged(search: Callable[[str], object]) -> Callable[[str], object]:
    """`search`, spending a step for each `_CHARACTERS_PER_STEP` characters of the text (a
    thousand rules searching a text of 10 MB took 41 s; 1,428 rules searching 7,000 texts of 4,090
    characters, 233 s)."""
    def charged(text: str) -> object:
        spend(len(text) // _CHARACTERS_PER_STEP)
        return search(text)

    return charged


_CHARACTERS_PER_STEP = 256
"""About a microsecond's search, RE2's or Python's (2 to 5 ms a megabyte), as a step is."""


def _compiled_search(pattern: str) -> Callable[[str], object]:
    if len(pattern) > MAX_REGEX:
        raise RegexError(f"patterns are at most {MAX_REGEX} characters")
    problem = _not_re2(pattern)
    if problem is not None:
        raise RegexError(f"cannot hold {problem} (RE2 syntax: matching stays linear in time)")
    engine = _re2()
    if engine is None:
        if _LINEAR_ONLY.get() and not linear_in_python(pattern):
            raise RegexError("needs RE2 here: without it, only the patterns Python's engine surely searches in "
                             "linear time are taken (a literal, or ^, characters and classes each maybe repeated, "
                             "$); install the re2 extra where the server runs: pip install 'agent-invariants[re2]'")
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
    left = program_left()   # (under `budget.program_budget`: a contract loading)
    if left is not None and left.left < 0:   # a pattern before this one passed the budget: the load
        return _never                       # fails with its line, this one is not compiled at all
    options = engine.Options()
    options.log_errors = False   # RE2 would print its own lines on stderr
    try:
        compiled = engine.compile(pattern, options=options)   # RE2's own words on a pattern it cannot compile
    except engine.error as exc:
        reason = exc.args[0] if exc.args else exc
        text = reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)
        raise RegexError(f"is not a valid pattern: {text}") from None
    if left is not None:
        size = compiled.programsize
        if size > left.left:
            spent = left.limit - left.left
            left.left = -1
            raise RegexError(f"compiles to {size:,} RE2 instructions, and the patterns before it to {spent:,}: "
                             f"past the {left.limit:,} a contract's patterns may take together; make them simpler "
                             "or fewer")
        left.left -= size
    found = engine.Set.SearchSet(options)
    try:
        found.Add(pattern)
        found.Compile()
    except engine.error:   # past what a set may hold, though RE2 compiles it alone: searched alone
        search_alone: Callable[[str], object] = compiled.search
        return search_alone
    inner = getattr(found, "_set", None)   # the compiled set under google-re2's Python wrapper
    if inner is None:
        search: Callable[[str], object] = found.Match
        return search
    match = inner.Match   # what the wrapper's Match calls on the UTF-8 text, minus a frame per search
    return lambda text: match(text.encode()) or None


def _never(text: str) -> None:
    return None


def _python_search(pattern: str) -> Callable[[str], object]:
    translated = _python_pattern(pattern)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # "possible nested set": the translation means what RE2 does
            return re.compile(translated).search
    except re.error as exc:
        raise RegexError(f"is not a valid pattern here: {exc} (RE2 may accept it: install the re2 extra)") from None


def _python_pattern(pattern: str) -> str:
    """The pattern as Python's engine says it with RE2's meaning: `$` and `\\z` at the very end
    (where no inline flag turns on multi-line mode), classes and escapes Python lacks spelt out.
    Flags set in the middle of a group (`a(?i)b|c`), which Python's engine takes only at the
    start, hold in RE2 to the end of the group: each alternative left gets them in a group of its
    own (`a(?i:b)|(?i:c)`). RE2's `U` (ungreedy), which Python's engine lacks, turns each
    quantifier where it holds into the other kind (`a+` lazy, `a+?` greedy). A quantified
    empty-width assertion (`^*`, `\\z+`), which Python's engine refuses, is put in a group."""
    groups = [_Group(False, False)]   # the groups open at `at`, the whole pattern first
    out, at, size = [], 0, len(pattern)
    while at < size:
        char = pattern[at]
        group = groups[-1]
        if char == "(":
            flags = _INLINE_FLAGS.match(pattern, at)
            on, _, off = flags[1].partition("-") if flags is not None else ("", "", "")
            multi_line = (group.multi_line or "m" in on) and "m" not in off
            ungreedy = (group.ungreedy or "U" in on) and "U" not in off
            on, off = on.replace("U", ""), off.replace("U", "")
            written = on + ("-" + off if off else "")   # the flags Python's engine has
            if flags is not None and flags[1] and flags[0].endswith(")"):   # `(?i)`: to the end of this group
                group.multi_line, group.ungreedy = multi_line, ungreedy
                if written:
                    group.flags.append(written)
                    out.append(f"(?{written}:")
                at = flags.end()
                continue
            groups.append(_Group(multi_line, ungreedy))
            named = pattern.startswith("(?P<", at) or (pattern.startswith("(?<", at)
                                                       and pattern[at + 3:at + 4] not in ("=", "!"))
            close = pattern.find(">", at) if named else -1
            if close != -1:   # a named group: a search has no use for the name (RE2 takes any, twice)
                out.append("(?:")
                at = close + 1
                continue
            if flags is not None:   # `(?:` or `(?i:`
                out.append(f"(?{written}:")
                at = flags.end()
                continue
        elif char == "|" and group.flags:
            out.append(")" * len(group.flags) + "|" + "".join(f"(?{flags}:" for flags in group.flags))
            at += 1
            continue
        elif char == ")" and len(groups) > 1:
            out.append(")" * len(group.flags))
            groups.pop()
        if char == "\\":
            if pattern[at + 1:at + 2] == "Q":   # \Q…\E: literal text, to \E or the end
                end = pattern.find("\\E", at + 2)
                end = size if end == -1 else end
                out.append(re.escape(pattern[at + 2:end]))
                at = end + 2
                continue
            escape, at = _escape(pattern, at)
            written = "\\Z" if escape == "\\z" else "(?s:.)" if escape == "\\C" else _outside_class(escape)
            out.append(f"(?:{written})" if escape in ("\\A", "\\z") and _quantifier(pattern, at) else written)
        elif char == "[":
            end = _class_end(pattern, at)
            if end > size:
                raise RegexError("is not a valid pattern: a character class has no closing ]")
            out.append(_set(pattern[at:end]))
            at = end
        elif (quantifier := _quantifier(pattern, at)) is not None:
            at += len(quantifier)
            lazy = pattern[at:at + 1] == "?"
            at += lazy
            out.append(quantifier + ("?" if lazy is not group.ungreedy else ""))
        else:
            written = "\\Z" if char == "$" and not group.multi_line else char
            at += 1
            out.append(f"(?:{written})" if char in "^$" and _quantifier(pattern, at) else written)
    out.append(")" * len(groups[0].flags))
    return "".join(out)


def _quantifier(pattern: str, at: int) -> str | None:
    """The quantifier at `at` (`*`, `+`, `?`, `{2}`, `{2,}`, `{2,5}`; not a lazy mark after it), or None."""
    char = pattern[at:at + 1]
    if char in ("*", "+", "?"):
        return char
    repeat = _REPEAT.match(pattern, at) if char == "{" else None
    return repeat[0] if repeat is not None and repeat[1] else None


class _Group:
    """A group of the pattern being translated: whether `$` ends a line in it, whether its
    quantifiers are ungreedy (RE2's `U`), and the flags set in it so far (each opened as a group
    of its own)."""

    __slots__ = ("flags", "multi_line", "ungreedy")

    def __init__(self, multi_line: bool, ungreedy: bool) -> None:
        self.multi_line = multi_line
        self.ungreedy = ungreedy
        self.flags: list[str] = []


_PROPERTY = re.compile(r"\\([pP])(?:\{(\^?)([A-Za-z_]+)\}|([A-Za-z]))")
_CODE_POINT = re.compile(r"\\x\{([0-9A-Fa-f]+)\}")   # any number of digits, as RE2 reads them
_HEX_ESCAPE = re.compile(r"\\x(?:\{|[0-9A-Fa-f]{2})")
_OCTAL = re.compile(r"\\(0[0-7]{0,2}|[1-7][0-7]{1,2})")   # RE2's octal escapes: `\\141` (`\\1` alone is refused)


def _escape(pattern: str, at: int) -> tuple[str, int]:
    """The escape that starts at `at` (`\\pL`, `\\p{Lu}`, `\\x{41}`, or a backslash and one
    character) and the position after it."""
    for form in (_PROPERTY, _CODE_POINT, _OCTAL):
        found = form.match(pattern, at)
        if found is not None:
            return found[0], found.end()
    return pattern[at:at + 2], at + 2


def _outside_class(escape: str) -> str:
    if escape in ("\\b", "\\B"):
        return _BOUNDARY if escape == "\\b" else _NOT_BOUNDARY
    found = _class_escape(escape)
    if found is not None:
        negated, ranges = found
        return f"[{'^' if negated else ''}{_written(ranges)}]"
    return _code_point(escape)


def _class_escape(escape: str) -> tuple[bool, Ranges] | None:
    """(negated, the code points) of `\\d`, `\\w`, `\\s`, their capitals, and the Unicode
    property escapes Python's tables can say; None for any other escape."""
    perl = PERL.get(escape[1:].lower()) if len(escape) == 2 else None
    if perl is not None:
        return escape[1].isupper(), perl
    found = _property(escape)
    if found is None and _PROPERTY.fullmatch(escape) is not None:
        raise RegexError(f"is not a valid pattern: no Unicode class {escape}")
    return found


def _code_point(escape: str) -> str:
    octal = _OCTAL.fullmatch(escape)
    if octal is not None:
        return f"\\U{int(octal[1], 8):08X}"
    found = _CODE_POINT.fullmatch(escape)
    if found is None or int(found[1], 16) > 0x10FFFF:
        return escape   # Python's engine says what is wrong with it
    return f"\\U{int(found[1], 16):08X}"


def _set(text: str) -> str:
    """A character class in Python's words: POSIX classes and Unicode classes spelt out as
    ranges, `\\x{…}` as `\\U…`, a `-` next to a class escape (`[\\d-z]`) a literal dash, and a
    class that holds nothing (`[\\P{Any}]`) one that matches nothing. A range cannot end at a
    class escape (`[a-\\pL]`): RE2 refuses it."""
    out, at = [text[0]], 1
    if text[at:at + 1] == "^":
        out.append("^")
        at += 1
    items = len(out)
    end = len(text) - 1   # the closing `]`
    after_class = False   # the last item was a class escape or a POSIX class: a `-` next is literal
    single = False        # the last item was one character, which a `-` makes the first of a range
    ending = False        # the item next ends a range
    while at < end:
        if text.startswith("[:", at):
            close = text.find(":]", at + 2)
            if close != -1:
                name = text[at:close + 2]
                posix = re.fullmatch(r"\[:(\^?)([a-z]+):\]", name)
                if posix is None or posix[2] not in _POSIX:
                    raise RegexError(f"is not a valid pattern: no character class {name}")
                ranges = _POSIX[posix[2]]
                out.append(_written(complement(ranges) if posix[1] else ranges))
                at, after_class, single, ending = close + 2, True, False, False
                continue
        char = text[at]
        if char == "\\":
            escape, at = _escape(text, at)
            found = _class_escape(escape)
            if found is not None:
                if ending:
                    raise RegexError(f"is not a valid pattern: a range cannot end at the class {escape}")
                negated, ranges = found
                out.append(_written(complement(ranges) if negated else ranges))
            else:
                out.append(_code_point(escape))
            after_class, single, ending = found is not None, found is None and not ending, False
            continue
        if char == "-" and after_class and at < end - 1:   # RE2 reads it as a dash; Python as a bad range
            out.append("\\-")
        else:
            out.append(char)
        if char == "-" and single and at < end - 1:   # the dash of a range
            single, ending = False, True
        else:
            single, ending = not ending, False
        at += 1
        after_class = False
    if not any(out[items:]):   # nothing in it (`[\\P{Any}]`, `[^\\p{^Any}]`): Python's engine has no empty set
        return "[\\x00-\\U0010FFFF]" if items == 2 else "[^\\x00-\\U0010FFFF]"
    out.append("]")
    return "".join(out)


def _property(escape: str) -> tuple[bool, Ranges] | None:
    """(negated, the code points) of a Unicode property escape, a general category or a script
    as RE2's own tables hold it (`unicode_tables`); None for any other escape, and for a name RE2
    does not know."""
    found = _PROPERTY.fullmatch(escape)
    if found is None:
        return None
    name = found[3] or found[4]
    negated = (found[1] == "P") != (found[2] == "^")
    if name == "Any":
        return negated, ((0, 0x10FFFF),)
    from agent_invariants.match import unicode_tables  # (50 KB of tables: read when a pattern names a class)

    ranges = unicode_tables.ranges(name)
    return None if ranges is None else (negated, ranges)


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


def _class_problem(text: str) -> str | None:
    """The first escape of a character class that RE2 lacks (and Python has), or None."""
    at = text.find("\\")
    while at != -1:
        problem = _escape_problem(text, at, in_class=True)
        if problem is not None:
            return problem
        at = text.find("\\", at + 2)
    return None


def _escape_problem(text: str, at: int, *, in_class: bool) -> str | None:
    """What RE2 lacks (and Python has) in the escape at `at`, or None."""
    following = text[at + 1:at + 2]
    if (following.isdigit() and following != "0" and _OCTAL.match(text, at) is None) or (in_class and following == "b"):
        return f"the escape \\{following} in a character class (RE2 has none)" if in_class else "a backreference"
    if following in ("k", "g") and text[at + 2:at + 3] == "<":
        return "a backreference"
    if following == "Z":
        return "\\Z (RE2 writes the end of the text \\z)"
    if following in ("u", "U", "N"):
        return f"\\{following} (RE2 writes a code point \\x{{41}})"
    if not following.isascii():
        return f"the escape \\{following} (RE2 escapes only ASCII characters)"
    if following == "x" and _HEX_ESCAPE.match(text, at) is None:
        return "\\x without two hex digits (write \\x41 or \\x{41})"
    return None


def _not_re2(pattern: str) -> str | None:
    """The first feature of `pattern` that RE2 lacks (and Python has), or None: refused whichever
    engine runs, so a pattern means the same wherever it is checked. Escapes and character classes
    are stepped over, so `\\\\1` (a backslash, then 1) or `[(?=]` are no false alarms."""
    at, size = 0, len(pattern)
    while at < size:
        char = pattern[at]
        if char == "\\":
            problem = _escape_problem(pattern, at, in_class=False)
            if problem is not None:
                return problem
            at = _escape(pattern, at)[1]   # `\\x{1001}` is a code point, not a repetition
            continue
        if char == "[":
            end = _class_end(pattern, at)
            problem = _class_problem(pattern[at:end])
            if problem is not None:
                return problem
            at = end
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
    if _repeats_multiply_past_limit(pattern):
        return f"repetitions that multiply past {_MAX_REPEAT} (as (?:a{{2}}){{501}} does)"
    return None


def _repeats_multiply_past_limit(pattern: str) -> bool:
    """Whether `{n,m}` repetitions nested in one another multiply past 1000, which RE2 refuses
    (each counts its most, or its least when it has no most; `*`, `+` and `?` count 1)."""
    outer: list[int] = []   # for each open group, the heaviest repetition around it so far
    heaviest = last = 1     # the heaviest in the group at `at`; the weight of the last atom
    at, size = 0, len(pattern)
    while at < size:
        char, step, last_before = pattern[at], 1, last
        last = 1
        if char == "\\":
            if pattern.startswith("Q", at + 1):
                end = pattern.find("\\E", at + 2)
                step = size - at if end == -1 else end + 2 - at
            else:
                step = _escape(pattern, at)[1] - at
        elif char == "[":
            step = _class_end(pattern, at) - at
        elif char == "(":
            outer.append(heaviest)
            heaviest = 1
        elif char == ")" and outer:
            last = heaviest
            heaviest = max(outer.pop(), heaviest)
        elif char == "{" and (repeat := _REPEAT.match(pattern, at)) is not None and repeat[1]:
            most = int(repeat[3]) if repeat[3] else -1 if repeat[2] else int(repeat[1])
            last = last_before * max(1, most if most >= 0 else int(repeat[1]))
            if last > _MAX_REPEAT:
                return True
            heaviest = max(heaviest, last)
            step = repeat.end() - at
        at += step
    return False
