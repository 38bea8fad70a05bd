"""Glob patterns of contract v1: `*` and `?` are the only wildcards, everything else is literal.

A pattern matches the whole subject (anchored at both ends), case-sensitively. `*` matches any run
of characters, `?` exactly one; neither matches a line terminator (`\\n`, `\\r`, U+2028, U+2029), and
`?` matches one UTF-16 code unit, so an emoji needs `??`. A missing value never matches, not even
`*`. `. + ( ) [ ] { } | ^ $ \\` are plain characters: a pattern is never a regular expression.

Matching stays linear in the subject, whatever the pattern, and compiling it linear in the
pattern (a contract may hold ten thousand globs of 500 characters). A run of wildcards holding a
star is read as its `?`s and one star (`*?*` as `?*`), which matches the same subjects. Then:
- a literal prefix and one trailing `*` (`payments.*`, the usual glob) is a prefix test and a
  search for line terminators; one star between two literal stretches, a prefix and a suffix test;
- any other pattern with at most one `*` becomes one anchored regular expression, its wildcards
  written `.` (a single `.*` cannot backtrack more than once over the subject), tried on subjects
  without a line terminator; a subject holding one is matched line by line, as below;
- with several stars, the pattern is cut at its stars and each piece is found leftmost, which is
  exact for globs, after a quick test that every literal piece occurs at all. Since wildcards
  never match a line terminator, a subject that holds some matches only if the pattern holds the
  same ones, in the same order, as literals: both are cut at them and matched line by line.
Compiled patterns are cached.
"""
import re
from collections.abc import Callable, Hashable, Iterable, Sequence

from agent_invariants._js import utf16_units

__all__ = ("RUN_KEY_SIZE", "compile_glob", "compile_glob_index", "compile_glob_set", "file_by_rarest_run",
           "glob_matches", "has_line_terminator", "literal_runs", "run_pieces")

Matcher = Callable[[str], bool]

_NOT_LINE_END = "[^\n\r\u2028\u2029]"
_CACHE: dict[str, Matcher] = {}
_CACHE_LIMIT = 10_000


def glob_matches(pattern: str, subject: str | None) -> bool:
    """True when `subject` is present and matches `pattern` as a whole."""
    if subject is None or subject.__class__ is not str:
        return False
    return compile_glob(pattern)(subject)


def compile_glob(pattern: str) -> Matcher:
    """Return a function `subject -> bool` for `pattern` (cached as written and in its one-star
    form, which glob sets ask for: `**` is compiled once; the subject must be a str)."""
    matcher = _CACHE.get(pattern)
    if matcher is None:
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.clear()
        normal = _one_star_each(pattern)
        matcher = _CACHE.get(normal) or _compile(normal)
        _CACHE[pattern] = _CACHE[normal] = matcher
    return matcher


def compile_glob_set(patterns: Iterable[str]) -> Callable[[str], Hashable]:
    """Return a function `subject -> key` for several patterns at once: two subjects get equal
    keys exactly when the same patterns match them (the engine routes a new tool by its key).

    A key stays small however many patterns there are (a contract of ten thousand rules, a trace
    of as many tools): literal patterns are found in a dict (at most one equals the subject), and
    past 64 others, a key names only the patterns that match, found through `_RunIndex` (trying
    each of thousands of patterns cost every new tool a test per pattern). Up to 64, patterns
    with at most one star are tried in one regular expression: each is an optional lookahead
    anchored at the end, with an empty group that is set when it matches, so the match's groups
    say which match. Patterns with more stars are matched one by one, as `compile_glob` does.
    (Even `*` takes part: it matches no subject with a line break.) Up to 64 globs that are each a
    literal prefix and one trailing star, the usual contract's, take a quicker path (`_prefix_set`).
    """
    distinct = list(dict.fromkeys(map(_one_star_each, patterns)))
    plain = [pattern for pattern in distinct if "*" not in pattern and "?" not in pattern]
    literal = {utf16_units(pattern): number for number, pattern in enumerate(plain)}
    wild = [pattern for pattern in distinct if "*" in pattern or "?" in pattern]
    if wild and len(wild) <= 64 and all(pattern.find("*") == len(pattern) - 1 and "?" not in pattern
                                       for pattern in wild):
        return _prefix_set(literal, [utf16_units(pattern[:-1]) for pattern in wild])
    if len(wild) > 64:
        matching = compile_glob_index(distinct)
        return lambda subject: tuple(matching(subject))   # (the same patterns match: the same list)
    simple = [pattern for pattern in wild if pattern.count("*") <= 1]
    others = tuple(compile_glob(pattern) for pattern in wild if pattern.count("*") > 1)
    # wildcards written `.`, cheap to compile (a class of all but the line terminators cost a
    # hundred times more, for each run of `?`); `.` would take a line terminator, so a subject
    # holding one is tried against the patterns one by one, giving the groups the expression would
    expressions = tuple(re.compile("".join(f"(?:(?={_regex(utf16_units(pattern))}\\Z)())?"
                                           for pattern in simple[at:at + 64]), re.DOTALL).match
                        for at in range(0, len(simple), 64))
    exact: list[Matcher] = []   # each of `simple` alone, made for the first subject that needs them

    def groups(chunk: int, units: str, subject: str) -> tuple[str | None, ...]:
        """Which patterns of chunk `chunk` match: a group per pattern, "" when it does."""
        if has_line_terminator(units):
            if not exact:
                exact.extend(map(compile_glob, simple))
            return tuple("" if matches(subject) else None for matches in exact[chunk * 64:chunk * 64 + 64])
        return expressions[chunk](units).groups()  # type: ignore[union-attr]   # never None: every part is optional

    if not others and len(expressions) <= 1:   # the usual contract: a key of at most 65 small parts
        if not expressions:
            return (lambda subject: ()) if not literal else \
                lambda subject: (literal.get(subject if subject.isascii() else utf16_units(subject), -1),)
        if not literal:
            return lambda subject: groups(0, subject if subject.isascii() else utf16_units(subject), subject)

        def one_chunk(subject: str) -> tuple[object, ...]:
            units = subject if subject.isascii() else utf16_units(subject)
            return (literal.get(units, -1), *groups(0, units, subject))
        return one_chunk

    def key(subject: str) -> tuple[object, ...]:
        units = subject if subject.isascii() else utf16_units(subject)
        found: list[object] = [literal.get(units, -1)]
        for chunk in range(len(expressions)):
            found += [chunk * 64 + number for number, group in enumerate(groups(chunk, units, subject))
                      if group is not None]
        found.append(-1)   # the one-by-one matches follow, as a pattern each
        found += [number for number, matcher in enumerate(others) if matcher(subject)]
        return tuple(found)
    return key


def compile_glob_index(patterns: Sequence[str]) -> Callable[[str], list[int]]:
    """Return a function `subject -> the numbers of the patterns that match it` (in no particular
    order), for many patterns at once: literals are found in a dict, the others through
    `_RunIndex`."""
    literal: dict[str, list[int]] = {}
    wild: list[str] = []
    numbers: list[int] = []   # the number of each of `wild`
    for number, pattern in enumerate(patterns):
        if "*" in pattern or "?" in pattern:
            wild.append(pattern)
            numbers.append(number)
        else:
            literal.setdefault(utf16_units(pattern), []).append(number)
    index = _RunIndex(wild) if wild else None

    def matching(subject: str) -> list[int]:
        found = list(literal.get(subject if subject.isascii() else utf16_units(subject), ()))
        if index is not None:
            found += [numbers[at] for at in index.matching(subject)]
        return found
    return matching


class _RunIndex:
    """Patterns with wildcards, filed by `file_by_rarest_run` (their runs in UTF-16 units): the
    patterns to try on a subject are the ones filed under some piece of it, and those without a
    literal."""

    __slots__ = ("_always", "_by_run", "_matchers", "_sizes")

    def __init__(self, patterns: list[str]) -> None:
        self._matchers = [compile_glob(pattern) for pattern in patterns]
        self._by_run, self._always = file_by_rarest_run([literal_runs(utf16_units(pattern)) for pattern in patterns])
        self._sizes = sorted({len(run) for run in self._by_run})

    def matching(self, subject: str) -> list[int]:
        """The numbers of the patterns that match `subject`, in order."""
        units = subject if subject.isascii() else utf16_units(subject)
        by_run = self._by_run
        if len(units) * len(self._sizes) <= len(by_run):   # the subject's pieces, looked up
            filed = [by_run[piece] for piece in run_pieces((units,), self._sizes) if piece in by_run]
        else:   # a subject longer than the index is wide: each run, searched in it
            filed = [numbers for run, numbers in by_run.items() if run in units]
        candidates = sorted({number for numbers in filed for number in numbers}.union(self._always))
        matchers = self._matchers
        return [number for number in candidates if matchers[number](subject)]


RUN_KEY_SIZE = 8
"""How much of a literal run `file_by_rarest_run` files a pattern under: a text then has at most
8 pieces to look up per character, however long the runs are."""

_WILDCARD_RUNS = re.compile(r"[*?]+")


def literal_runs(pattern: str) -> list[str]:
    """The pattern's runs of literal characters, between its wildcards."""
    return [run for run in _WILDCARD_RUNS.split(pattern) if run]


def file_by_rarest_run(runs: Sequence[Iterable[str]]) -> tuple[dict[str, list[int]], list[int]]:
    """Patterns, given by their literal runs, filed by number under one run each (its first
    `RUN_KEY_SIZE` characters): the one the fewest patterns share, so that few are filed under
    any key; and the numbers of the patterns without a run.

    A glob matches only a subject that holds each of its runs, and covers only a glob whose runs
    hold each of its runs; so the patterns that may match or cover a text are the ones filed
    under one of its `run_pieces`, and those without a run. (Routing thousands of patterns, and
    linting thousands of rules, then compare a text with a few patterns, not with all.)"""
    keys = [{run[:RUN_KEY_SIZE] for run in found} for found in runs]
    shared: dict[str, int] = {}
    for found in keys:
        for key in found:
            shared[key] = shared.get(key, 0) + 1
    by_run: dict[str, list[int]] = {}
    without: list[int] = []
    for number, found in enumerate(keys):
        if found:
            by_run.setdefault(min(found, key=lambda key: (shared[key], -len(key), key)), []).append(number)
        else:
            without.append(number)
    return by_run, without


def run_pieces(texts: Iterable[str], sizes: Iterable[int]) -> set[str]:
    """Every piece of these sizes of these texts: the keys under which `file_by_rarest_run` may
    have filed a pattern that a text matches or covers."""
    return {text[at:at + size] for text in texts for size in sizes for at in range(len(text) - size + 1)}


def _prefix_set(literal: dict[str, int], prefixes: list[str]) -> Callable[[str], Hashable]:
    """The key function of literals and globs that are each a literal prefix and one trailing star
    (`kb.*`, `*`): the usual contract. The prefixes a subject starts with form a chain, so the
    longest one whose rest of the subject has no line break names all the patterns that match:
    the alternatives are tried longest first, and the number of the group that matched is the key
    (none matched: no pattern does). Twice as fast as a lookahead per pattern, on a trace that
    names a new tool on every call. Not past 64 prefixes: the regular-expression engine saves
    every group's marks at each alternative it leaves, so a long alternation costs its square."""
    longest_first = sorted(prefixes, key=len, reverse=True)
    match = re.compile("(?:" + "|".join(f"({re.escape(prefix)})" for prefix in longest_first) +
                       f"){_NOT_LINE_END}*\\Z", re.DOTALL).match

    def key(subject: str) -> tuple[object, ...]:
        units = subject if subject.isascii() else utf16_units(subject)
        found = match(units)
        return (literal.get(units, -1), -1 if found is None else found.lastindex)

    def wild_key(subject: str) -> int | None:   # no literal patterns: the number of the group alone
        found = match(subject if subject.isascii() else utf16_units(subject))
        return -1 if found is None else found.lastindex
    return key if literal else wild_key


def _regex(units: str) -> str:
    """The regular expression of a pattern with at most one star (in UTF-16 units), its wildcards
    written `.`: for subjects without a line terminator, which the callers set apart. A run of
    `?` is one `.` with a count."""
    return "".join(".*" if run[0] == "*" else ("." if len(run) == 1 else f".{{{len(run)}}}") if run[0] == "?"
                   else re.escape(run) for run in _RUNS.findall(units))


_RUNS = re.compile(r"\*+|\?+|[^*?]+")
"""A pattern cut into runs of stars, of question marks, and of literal characters."""

_WILD_RUN = re.compile(r"[*?]*\*[*?]*")


def _one_star_each(pattern: str) -> str:
    """`pattern` with each run of wildcards that holds a star written as its question marks and
    one star, which matches the same subjects: both wildcards match any character but a line
    terminator, so such a run matches any stretch of at least as many of them as it has `?`.
    `**a` needs no more work than `*a`, nor `*?*?*?a` than `???*a`."""
    if "*" not in pattern:
        return pattern
    return _WILD_RUN.sub(lambda run: "?" * run.group().count("?") + "*", pattern)


def _compile(pattern: str) -> Matcher:
    """The matcher of a pattern in its one-star form (`_one_star_each`)."""
    units = utf16_units(pattern)
    if "*" not in units and "?" not in units:
        return lambda subject: (subject if subject.isascii() else utf16_units(subject)) == units
    if units.find("*") == len(units) - 1 and "?" not in units and not has_line_terminator(units):
        prefix = units[:-1]   # no wildcard, no line terminator: the rest of a subject must hold none
        return lambda subject: (subject if subject.isascii() else utf16_units(subject)).startswith(prefix) \
            and not has_line_terminator(subject)
    if units.count("*") == 1 and "?" not in units:   # `a*b`: string tests, nothing to compile
        return _OneStar(units)
    if units.count("*") <= 1:
        return _FewStars(units)
    return _ManyStars(units)


class _OneStar:
    """A pattern of one star between two literal stretches (`kb.*.v2` is `kb.` and `.v2`): the
    subject starts with one, ends with the other, and what lies between holds no line terminator.
    Compiling a regular expression per pattern cost a contract of thousands of such rules seconds."""

    __slots__ = ("head", "size", "tail")

    def __init__(self, units: str) -> None:
        self.head, self.tail = units.split("*")
        self.size = len(self.head) + len(self.tail)

    def __call__(self, subject: str) -> bool:
        if not subject.isascii():
            subject = utf16_units(subject)
        return len(subject) >= self.size and subject.startswith(self.head) and subject.endswith(self.tail) \
            and not has_line_terminator(subject[len(self.head):len(subject) - len(self.tail)])


class _FewStars:
    """A pattern with `?` and at most one star: one regular expression, its wildcards written `.`
    (a class of all but the line terminators cost a hundred times more to compile, for each run
    of `?`, and contracts may hold thousands of globs). A subject holding a line terminator, which
    no wildcard matches, is matched line by line as `_ManyStars` does."""

    __slots__ = ("_fullmatch", "_lines", "units")

    def __init__(self, units: str) -> None:
        self.units = units
        self._fullmatch = re.compile(_regex(units), re.DOTALL).fullmatch
        self._lines: _ManyStars | None = None

    def __call__(self, subject: str) -> bool:
        if not subject.isascii():
            subject = utf16_units(subject)
        if not has_line_terminator(subject):
            return self._fullmatch(subject) is not None
        if self._lines is None:
            self._lines = _ManyStars(self.units)
        return self._lines(subject)


class _ManyStars:
    """A pattern with two or more stars."""

    __slots__ = ("literals", "pieces", "segments", "terminators")

    def __init__(self, units: str) -> None:
        self.pieces = [_Piece(text) for text in units.split("*")]
        # literal stretches every match must contain: a cheap first test
        self.literals = [part for text in units.split("*") for part in text.split("?") if part]
        parts = _line_split(units) if has_line_terminator(units) else [units]
        self.segments = [_segment(text) for text in parts[0::2]] if len(parts) > 1 else []
        self.terminators = parts[1::2]

    def __call__(self, subject: str) -> bool:
        if not subject.isascii():
            subject = utf16_units(subject)
        for literal in self.literals:
            if literal not in subject:
                return False
        if has_line_terminator(subject):
            return self._lines_match(subject)
        return _pieces_match(self.pieces, subject)

    def _lines_match(self, subject: str) -> bool:
        """Wildcards never take a line terminator, so each of the subject's must meet the same
        literal one in the pattern: cut both at them and match the lines pairwise."""
        parts = _line_split(subject)
        if parts[1::2] != self.terminators:
            return False
        return all(matches(line) for matches, line in zip(self.segments, parts[0::2], strict=True))


def _segment(text: str) -> Matcher:
    """A matcher of one line of a pattern (no line terminator in it, nor in its subjects)."""
    if "*" in text:
        pieces = [_Piece(piece) for piece in text.split("*")]
        return lambda subject: _pieces_match(pieces, subject)
    whole = _Piece(text)
    return lambda subject: len(subject) == whole.size and whole.at(subject, 0)


def has_line_terminator(text: str) -> bool:
    """Whether `text` holds what neither `*` nor `?` matches: a line terminator."""
    return "\n" in text or "\r" in text or (not text.isascii() and ("\u2028" in text or "\u2029" in text))


def _line_split(text: str) -> list[str]:
    """`text` cut at its line terminators, which are kept between the pieces."""
    return re.split("([\n\r\u2028\u2029])", text)


class _Piece:
    """A star-free stretch of a pattern; `?` in it matches any one character. One that mixes both
    is matched by its literal runs at their offsets: nothing is compiled (a contract of thousands
    of globs of a hundred such pieces each compiled as many regular expressions)."""

    __slots__ = ("_runs", "_wild", "size", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.size = len(text)
        self._wild = bool(text) and set(text) == {"?"}   # only ?s: any `size` characters
        self._runs: list[tuple[int, str]] | None = None   # (offset, literal run), when `?` and literals mix
        if "?" in text and not self._wild:
            self._runs = [(found.start(), found.group()) for found in _LITERAL_RUN.finditer(text)]

    def at(self, subject: str, pos: int) -> bool:
        if self._wild:
            return pos + self.size <= len(subject)
        if self._runs is None:
            return subject.startswith(self.text, pos)
        return pos + self.size <= len(subject) and all(subject.startswith(run, pos + offset)
                                                       for offset, run in self._runs)

    def find(self, subject: str, start: int, end: int) -> int:
        """The first position from `start` where the piece matches and ends by `end`, or -1."""
        if self._wild:
            return start if start + self.size <= end else -1
        if self._runs is None:
            return subject.find(self.text, start, end)
        offset, first = self._runs[0]
        found = subject.find(first, start + offset, end)
        while found >= 0 and found - offset + self.size <= end:
            if self.at(subject, found - offset):
                return found - offset
            found = subject.find(first, found + 1, end)
        return -1


_LITERAL_RUN = re.compile(r"[^?]+")


def _pieces_match(pieces: list[_Piece], subject: str) -> bool:
    """Anchored match of a pattern with `len(pieces) - 1` stars against a subject without line breaks."""
    first, last = pieces[0], pieces[-1]
    end = len(subject) - last.size
    if end < first.size or not first.at(subject, 0) or not last.at(subject, end):
        return False
    pos = first.size
    for piece in pieces[1:-1]:
        if piece.size:
            found = piece.find(subject, pos, end)
            if found < 0:
                return False
            pos = found + piece.size
    return True
