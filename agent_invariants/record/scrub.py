"""The values `--redact` removed, as the strings of a trace event or a report are searched for
them (`redact.Redactor` remembers them; `Forms.scrubbed` replaces them with the mark).

    forms = Forms()
    forms.add(["sk-live-123"])                 # as values are removed
    forms.scrubbed('got "sk-live-123…"')       # 'got "[redacted]…"'
    forms.scrubbed('got "sk-live-1…"')         # 'got "[redacted]"': a start shown cut
"""
from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterable

__all__ = ("REDACTED", "SHORTEST_SCRUBBED", "Forms")

REDACTED = "[redacted]"
SHORTEST_SCRUBBED = 3
"""Values shorter than this are not looked for inside strings (replacing every `1` inside messages
would garble them)."""


class Forms:
    """The remembered values of at least `SHORTEST_SCRUBBED` characters, as a string is searched
    for them: longest first (so that a value inside another goes after it). Past `_FEW` of them, a
    string is first looked through once per length of value, each stretch of it in a set, rather
    than once per value: a run that sends a new secret with every call would otherwise scrub every
    event against all of them (4,000 calls took 4.0 s against 0.7 s without --redact)."""

    __slots__ = ("_heads", "_lengths", "_starts", "_values", "across", "longest_first")

    def __init__(self) -> None:
        self.longest_first: list[str] = []   # (then in code point order: the same order in every run)
        self._values: set[str] = set()
        self.across: list[str] = []
        """The values that may take in a mark (`a[redacted]b`): not those the mark's own letters hold."""
        self._lengths: list[int] = []
        self._starts: list[str] = []
        self._heads: set[str] = set()

    def add(self, secrets: Iterable[str]) -> None:
        """Look for `secrets` too (each new, each inserted where its order puts it)."""
        for secret in secrets:
            if len(secret) < SHORTEST_SCRUBBED:
                continue
            insort(self.longest_first, secret, key=_longest_first)
            self._values.add(secret)
            if secret not in REDACTED:
                insort(self.across, secret, key=_longest_first)
            if len(secret) not in self._lengths:
                insort(self._lengths, len(secret))
            if len(secret) > _SHOWN_START:
                insort(self._starts, secret)
                self._heads.add(secret[:_SHOWN_START])

    def scrubbed(self, text: str) -> str:
        """`text` with each remembered value in it replaced by the mark; marks already there stay
        whole (a value `red` would otherwise make `[redacted]` `[[redacted]dacted]`), unless a
        value takes in a mark (`a[redacted]b`): that goes, mark and all."""
        if REDACTED in text:
            text = REDACTED.join(self._plain(piece, self.longest_first) for piece in text.split(REDACTED))
            text = self._plain(text, self.across) if REDACTED in text else text
        else:
            text = self._plain(text, self.longest_first)
        return self._cut(text) if self._starts and ("…" in text or "..." in text) else text

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

    def _plain(self, text: str, secrets: list[str]) -> str:
        if len(self.longest_first) > _FEW and not self._holds_one(text):
            return text
        for secret in secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def _holds_one(self, text: str) -> bool:
        values = self._values
        return any(text[at:at + size] in values for size in self._lengths for at in range(len(text) - size + 1))


def _longest_first(secret: str) -> tuple[int, str]:
    return -len(secret), secret


_SHOWN_START = 6
"""The shortest start of a value that `Forms._cut` takes for the value, cut (shorter ones could be
any word)."""
_LONGEST_SHOWN = 300
"""The longest start of a value a message shows before cutting it (60 to 80 characters, as a rule)."""
_FEW = 32
"""Remembered values searched for one by one (each `in` is one fast scan of the string)."""
