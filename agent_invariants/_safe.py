"""Text from users made safe to print: one home for escaping what goes to a terminal or a log.

A file name, a JSON key or a value echoed in a message comes from whoever wrote the input. Shown
raw, it could clear the screen or retitle the terminal (ESC, CSI, OSC, BEL), forge a second
`agent-invariants: ` line in a CI log (a newline), make a line read differently from what it
holds (bidirectional overrides), or make two names look alike (a zero-width space). `inert`
shows such characters as escapes instead:

    >>> inert("run\\x1b[2J.jsonl\\nagent-invariants: ok \\u202e")
    'run\\\\x1b[2J.jsonl\\\\nagent-invariants: ok \\\\u202e'

Harmless text (accents, CJK, emoji) is kept as it is. Backslashes are not doubled, so escaping
again changes nothing: a message escaped where it was built can pass through `inert` once more.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

__all__ = ("LINE_LIMIT", "TEXT_LIMIT", "VALUE_LIMIT", "inert", "log_safe", "log_safe_report", "said")

VALUE_LIMIT = 200
"""A value echoed in a message (a key, an option value) is cut after this many characters."""

TEXT_LIMIT = 1000
"""A file name, a JSON path or a problem text is cut after this many characters."""

LINE_LIMIT = 4000
"""One line of an error message: a file name, a JSON path and a problem at their limits fit."""

_SINGLE = [*range(0x20), *range(0x7F, 0xA0)]   # C0, DEL and C1 controls (\t, \n, \r: short forms below)
_WIDE = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A),   # bidi controls
         0x2028, 0x2029]                                                           # line separators
# Characters that show nothing, so that two names that look the same may differ (a tool
# `payments.refund` followed by a zero-width space is not the tool a rule denies): the format
# characters (category Cf) that show nothing on their own, all but the Arabic and Kaithi number
# signs, which are drawn; variation selectors, fillers and the Mongolian vowel separator too.
_INVISIBLE = [0xAD, 0x34F, 0x115F, 0x1160, 0x17B4, 0x17B5, *range(0x180B, 0x1810), 0x200B, 0x200C, 0x200D,
              *range(0x2060, 0x2065), *range(0x206A, 0x2070), 0x3164, 0xFEFF, 0xFFA0, *range(0xFE00, 0xFE10),
              0xFFF9, 0xFFFA, 0xFFFB]
_INVISIBLE_ASTRAL = [*range(0x13430, 0x13440), *range(0x1BCA0, 0x1BCA4), *range(0x1D173, 0x1D17B),
                     *range(0xE0000, 0xE0080), *range(0xE0100, 0xE01F0)]
# Noncharacters (U+FDD0..U+FDEF and the last two code points of every plane): never text, drawn as
# nothing or a box, and left out by some XML writers (junit-xml), so that names holding them
# would pass for one another.
_NONCHARACTERS = [*range(0xFDD0, 0xFDF0), 0xFFFE, 0xFFFF]
_NONCHARACTERS_ASTRAL = [plane | last for plane in range(0x10000, 0x110000, 0x10000) for last in (0xFFFE, 0xFFFF)]
_ESCAPES = ({code: f"\\x{code:02x}" for code in _SINGLE}
            | {code: f"\\u{code:04x}" for code in _WIDE + _INVISIBLE + _NONCHARACTERS}
            | {code: f"\\U{code:08x}" for code in _INVISIBLE_ASTRAL + _NONCHARACTERS_ASTRAL}
            | {ord("\t"): "\\t", ord("\n"): "\\n", ord("\r"): "\\r"})


def inert(text: str, limit: int | None = None) -> str:
    """`text` with control characters, bidirectional controls, invisible characters, noncharacters
    and lone surrogates shown as `\\x1b`/`\\n`/`\\u202e`/`\\u200b`-style escapes; cut to its first `limit`
    characters and `…` when longer."""
    if limit is not None and len(text) > limit:
        text = text[:limit] + "…"
    text = text.translate(_ESCAPES)
    if text.isascii():
        return text
    try:
        text.encode("utf-8")   # holds no lone surrogate (a file name's undecodable bytes): the usual case
    except UnicodeEncodeError:
        # not in the table above: 2,048 entries would cost every start-up a millisecond
        return "".join(f"\\u{ord(char):04x}" if 0xD800 <= ord(char) < 0xE000 else char for char in text)
    return text


def log_safe(text: str) -> str:
    """`text` with every `##[` shown as `##\\x5b`: a CI runner reads `##[error]`, `##[warning]` or
    `##[stop-commands]` anywhere in a line of a job's log as a command (GitHub's legacy syntax),
    so a name in a message must not spell one. Its `::` commands count only at the start of a
    line, where our lines hold `agent-invariants:` or a command of our own."""
    return text.replace("##[", "##\\x5b")


def said(message: str) -> str:
    """`message` as lines for stderr, each `agent-invariants: ` and the line escaped (`inert`, cut
    at LINE_LIMIT, `log_safe`): how the command and its hooks say what went wrong."""
    return "".join(f"agent-invariants: {log_safe(inert(line, LINE_LIMIT))}\n" for line in message.split("\n"))


def log_safe_report(text: str, form: Literal["text", "json", "xml"]) -> str:
    """A whole report, safe to print in a CI job's log: GitHub's runner reads `##[` anywhere in a
    line as a command (`##[error file=README.md;line=1]...` makes an annotation, `##[add-mask]FAIL`
    hides every later FAIL) and `::` at the start of a line, after blanks, as another (a trace
    named `::error title=...::x.jsonl` starts a line of the text report). A report holds names
    and values from the trace, so each is written as its form escapes a character: text shows
    `##\\x5b` and `\\x3a:` (as messages on stderr do), JSON writes `##\\u005b` and XML `##&#91;`
    and `&#58;:`, which hold the same data. (Pretty JSON starts no line with a string.)"""
    bracket, colon = _LOG_ESCAPES[form]
    text = text.replace("##[", bracket)
    if form == "json":
        return _json_escaped(text)
    return text if colon is None else _COMMAND_AT_LINE_START.sub(colon, text)


def _json_escaped(text: str) -> str:
    """JSON text with each character that `inert` escapes written as a JSON escape (`\\u202e`,
    a surrogate pair past U+FFFF): the same data, which a terminal or a CI log showing the report
    cannot be driven by (U+009B starts a control sequence in terminals that read C1 controls) nor
    made to read backwards. The encoder already escapes C0 controls; such characters are only
    ever inside strings."""
    if text.isascii() and "\x7f" not in text:
        return text
    bmp, astral = _json_unsafe()
    text = bmp.sub(_json_escape, text)
    return astral.sub(_json_escape, text) if _ASTRAL.search(text) else text


@lru_cache(maxsize=1)
def _json_unsafe() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The characters `_json_escaped` writes as escapes, in the BMP and past it, each a class of
    ranges (compiled when first needed: start-up pays nothing). Apart, because a class that holds
    characters past the BMP is tried range by range on every character: 91 MB of report took
    19 s as one class of single characters, 0.3 s so."""
    codes = sorted(code for code in _ESCAPES if code >= 0x7F)
    return (re.compile(_ranges([code for code in codes if code <= 0xFFFF])),
            re.compile(_ranges([code for code in codes if code > 0xFFFF])))


def _ranges(codes: list[int]) -> str:
    """A regular-expression class of these sorted code points, consecutive ones as ranges."""
    parts: list[str] = []
    start = previous = codes[0]
    for code in [*codes[1:], -1]:
        if code != previous + 1:
            parts.append(f"\\U{start:08x}" if start == previous else f"\\U{start:08x}-\\U{previous:08x}")
            start = code
        previous = code
    return "[" + "".join(parts) + "]"


def _json_escape(found: re.Match[str]) -> str:
    code = ord(found.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 | code >> 10:04x}\\u{0xDC00 | code & 0x3FF:04x}"


_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


_LOG_ESCAPES: dict[str, tuple[str, str | None]] = {   # form -> (`##[` as written, replacement of `::`'s first colon)
    "text": ("##\\x5b", r"\1\\x3a"), "json": ("##\\u005b", None), "xml": ("##&#91;", r"\1&#58;")}
_COMMAND_AT_LINE_START = re.compile(r"^(\s*):(?=:)", re.MULTILINE)
