"""The values `--redact` removed, as the strings of a trace event or a report are searched for
them (`redact.Redactor` remembers them; `Forms.scrubbed` replaces them with the mark).

    forms = Forms()
    forms.add(["sk-live-123"])                 # as values are removed
    forms.scrubbed('got "sk-live-123…"')       # 'got "[redacted]…"'
    forms.scrubbed('got "sk-live-1…"')         # 'got "[redacted]"': a start shown cut
"""
from __future__ import annotations

import re
from bisect import bisect_left, insort
from collections.abc import Iterable

__all__ = ("REDACTED", "SHORTEST_SCRUBBED", "Forms")

REDACTED = "[redacted]"
SHORTEST_SCRUBBED = 3
"""Values shorter than this are not looked for inside strings (replacing every `1` inside messages
would garble them)."""


class Forms:
    """The remembered values of at least `SHORTEST_SCRUBBED` characters, as a string is searched
    for them (in no order: where they are found is merged before anything is replaced, so the
    result is the same in every run). Past `_FEW` of them, a string is looked through once per
    length of value, each stretch of it in a set, rather than once per value: a run that sends a
    new secret with every call would otherwise scrub every event against all of them (4,000 calls
    took 4.0 s against 0.7 s without --redact)."""

    __slots__ = ("_heads", "_lengths", "_starts", "_values")

    def __init__(self) -> None:
        self._values: set[str] = set()
        self._lengths: list[int] = []
        self._starts: list[str] = []
        self._heads: set[str] = set()

    def add(self, secrets: Iterable[str]) -> None:
        """Look for `secrets` too (each new, each inserted where its order puts it)."""
        for secret in secrets:
            if len(secret) < SHORTEST_SCRUBBED:
                continue
            self._values.add(secret)
            if len(secret) not in self._lengths:
                insort(self._lengths, len(secret))
            if len(secret) > _SHOWN_START:
                insort(self._starts, secret)
                self._heads.add(secret[:_SHOWN_START])

    def scrubbed(self, text: str) -> str:
        """`text` with each remembered value in it replaced by the mark: each whole one (`test` in
        `run test now`, not in `pytest`: a value that begins or ends with a letter, a digit or `_`
        counts where the text does not go on with one there, or an escape such as `\\n` comes before
        it). Values that overlap are replaced together (`abcdef` and `defgh` in `abcdefgh`), and so
        is a mark that a value overlaps or takes in (`a[redacted]b`); marks already there stay whole
        (a value `red` would otherwise make `[redacted]` `[[redacted]dacted]`)."""
        spans = self._found(text)
        if spans:
            text = _replaced(text, spans)
        return self._cut(text) if self._starts and ("…" in text or "..." in text) else text

    def _found(self, text: str) -> list[tuple[int, int]]:
        """Where the remembered values are in `text`, and the marks beside them."""
        found: list[tuple[int, int]] = []
        if len(self._values) > _FEW:
            values = self._values
            for size in self._lengths:
                for at in range(len(text) - size + 1):
                    if text[at:at + size] in values:
                        found.append((at, at + size))
        else:
            for secret in self._values:
                at = text.find(secret)
                while at != -1:
                    found.append((at, at + len(secret)))
                    at = text.find(secret, at + 1)
        if found:
            at = text.find(REDACTED)
            while at != -1:
                found.append((at, at + len(REDACTED)))
                at = text.find(REDACTED, at + len(REDACTED))
        return found

    def _cut(self, text: str) -> str:
        """`text` with each start of a value that a message shows cut (`"eyJhbGciOi…"`: the start,
        then `…` or `...`) replaced by the mark: a long value is never shown whole, so its shown
        start is no remembered value."""
        for marker in ("…", "..."):
            at = text.find(marker)
            while at != -1:
                size = self._shown_start(text, at)
                if size:
                    text = text[:at - size] + REDACTED + text[at + len(marker):]
                    at -= size
                at = text.find(marker, at + 1)
        return text

    def _shown_start(self, text: str, at: int) -> int:
        """The length of the longest stretch of `text` ending at `at` that begins some remembered
        value longer than it (0: none of `_SHOWN_START` characters or more)."""
        starts, heads = self._starts, self._heads
        for begin in range(max(0, at - _LONGEST_SHOWN), at - _SHOWN_START + 1):   # (the longest first)
            if text[begin:begin + _SHOWN_START] in heads:
                shown = text[begin:at]
                found = bisect_left(starts, shown)
                if found < len(starts) and starts[found].startswith(shown) and len(starts[found]) > len(shown):
                    return at - begin
        return 0


def _replaced(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with each stretch of `spans` (those that overlap or touch taken together) replaced
    by the mark where it is whole."""
    spans.sort()
    pieces: list[str] = []
    done = 0   # where the text not copied yet begins
    start, end = spans[0]
    for begin, stop in [*spans[1:], (len(text) + 1, len(text) + 1)]:
        if begin <= end:
            end = max(end, stop)
            continue
        if _whole(text, start, end):
            pieces += (text[done:start], REDACTED)
            done = end
        start, end = begin, stop
    pieces.append(text[done:])
    return "".join(pieces)


def _whole(text: str, start: int, end: int) -> bool:
    """Whether `text[start:end]` is whole: no letter, digit or `_` of the text goes on past an edge
    that is one (but for an escape before it: `\\nabc`, `%20abc`, `\\x1b[35mabc`)."""
    if start and _word(text[start]) and _word(text[start - 1]) \
            and not _ESCAPE_BEFORE.search(text, max(0, start - 24), start):
        return False
    return not (end < len(text) and _word(text[end - 1]) and _word(text[end]))


def _word(char: str) -> bool:
    """A letter, digit or `_` of ASCII (words of other scripts need no spaces between them:
    `令牌是abc123` holds the value `abc123`)."""
    return char.isascii() and (char.isalnum() or char == "_")


_ESCAPE_BEFORE = re.compile(r"(?:\\(?:[bfnrtv0]|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4})|%[0-9a-fA-F]{2}"
                            r"|(?:\x1b|\\+(?:x1b|u001b|e|0?33)|\^\[)\[[0-9;:?]*+[A-Za-z])$")
"""An escape that may end in a letter or digit just before a value: `\\n`, `\\u00e9`, `%20`, a
terminal's colour (`\\x1b[35m`, as it is or escaped)."""


_SHOWN_START = 6
"""The shortest start of a value that `Forms._cut` takes for the value, cut (shorter ones could be
any word)."""
_LONGEST_SHOWN = 300
"""The longest start of a value a message shows before cutting it (60 to 80 characters, as a rule)."""
_FEW = 32
"""Remembered values searched for one by one (each `in` is one fast scan of the string)."""
