"""JavaScript semantics that contract v1 depends on, written out once.

Contract v1 was defined by a Node.js tool, so a few of its observable behaviours are JavaScript's:
which characters `trim()` removes, string lengths counted in UTF-16 code units, how a number is
printed, how `toFixed(1)` rounds, and sorting by UTF-16 code units. Python differs on every one of
them, so each lives here with the reason, and nowhere else.
"""
import re
from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal

import msgspec

from agent_invariants.jsontext import always_matching

__all__ = (
    "ASTRAL_LEADS",
    "JSNumber",
    "JS_WHITESPACE",
    "MORE",
    "first_significant",
    "js_float",
    "js_number",
    "js_number_hook",
    "js_to_fixed1",
    "js_trim",
    "has_surrogate_escape",
    "json_number",
    "mend_lone_surrogates",
    "replace_lone_surrogates",
    "shortest_digits",
    "utf16_len",
    "utf16_len_of_utf8",
    "utf16_sort_key",
    "utf16_sorted",
    "utf16_units",
)

# ECMAScript WhiteSpace + LineTerminator: what String.prototype.trim removes. Unlike str.strip() it
# includes U+FEFF (a BOM) and excludes U+001C..U+001F and U+0085.
JS_WHITESPACE = (
    "\t\n\v\f\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)

_MAX_SAFE_INTEGER = 2**53


def js_trim(text: str) -> str:
    """`text.trim()` as JavaScript does it (returns `text` itself when nothing is removed)."""
    return text.strip(JS_WHITESPACE)


def utf16_len(text: str) -> int:
    """`text.length` in JavaScript: astral characters count twice."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def utf16_len_of_utf8(data: bytes) -> int:
    """`utf16_len` of valid UTF-8 bytes, without decoding them: one unit per byte that starts a
    character, and one more for each four-byte character (it needs a surrogate pair)."""
    if data.isascii():
        return len(data)
    units = len(data.translate(None, _CONTINUATION_BYTES))
    return units + sum(data.count(lead) for lead in ASTRAL_LEADS if lead in data)


_CONTINUATION_BYTES = bytes(range(0x80, 0xC0))
ASTRAL_LEADS = (b"\xf0", b"\xf1", b"\xf2", b"\xf3", b"\xf4")
"""The bytes that start a four-byte UTF-8 character: one beyond the BMP, two UTF-16 units."""


def utf16_units(text: str) -> str:
    """`text` with every astral character split into its two surrogate code points.

    Glob wildcards match UTF-16 code units in contract v1 (`?` does not match an emoji, `??` does),
    so patterns and subjects that contain astral characters are compared in this form.
    """
    if text.isascii() or max(text) <= "\uffff":
        return text
    data = text.encode("utf-16-le", "surrogatepass")
    return "".join(chr(data[i] | data[i + 1] << 8) for i in range(0, len(data), 2))


def utf16_sort_key(text: str) -> bytes:
    """Sort key that orders strings by UTF-16 code units, as JavaScript's default sort does."""
    return text.encode("utf-16-be", "surrogatepass")


def utf16_sorted(texts: Iterable[str]) -> list[str]:
    """`texts` in JavaScript's default order (by UTF-16 code units). For ASCII, the most common
    case by far, that is Python's own order, and no key is built for each string."""
    texts = list(texts)
    if all(map(str.isascii, texts)):
        texts.sort()
        return texts
    return sorted(texts, key=utf16_sort_key)


def json_number(value: int | float) -> int | float:
    """A number as JavaScript would hold it, ready to be written to JSON the way JS writes it.

    Integral floats become ints (JS prints `3`, not `3.0`) and integers beyond 2**53 become the
    double JS would have parsed. Other floats stay as they are.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if -_MAX_SAFE_INTEGER <= value <= _MAX_SAFE_INTEGER:
            return value
        value = float(value)
    if value.is_integer() and abs(value) < 2**63:
        return int(value)
    return value


class JSNumber(float):
    """A float that JSON output writes as JavaScript does (`1e+21`, `0.000001`), where msgspec
    would write Python's form (`1e21`, `1e-06`): evidence holds these (RFC 8785's number form),
    and every encoder of reports passes `js_number_hook`. It is a float to everyone else."""

    __slots__ = ()


def js_number_hook(value: object) -> object:
    """msgspec's `enc_hook` for reports: a `JSNumber` as its JavaScript text."""
    if isinstance(value, JSNumber):
        return msgspec.Raw(js_number(value).encode())
    raise NotImplementedError(f"cannot write {type(value).__name__} as JSON")


def js_float(value: float) -> float:
    """`value`, as a `JSNumber` when msgspec would not write it as JavaScript does."""
    if isinstance(value, JSNumber):
        return value
    return value if msgspec.json.encode(value) == js_number(value).encode() else JSNumber(value)


def js_number(value: int | float) -> str:
    """`String(value)` in JavaScript (Number::toString), for finite numbers."""
    if isinstance(value, int) and not isinstance(value, bool):
        if -_MAX_SAFE_INTEGER <= value <= _MAX_SAFE_INTEGER:
            return str(value)
        value = float(value)
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    digits, point = shortest_digits(abs(value))
    k = len(digits)
    if k <= point <= 21:
        body = digits + "0" * (point - k)
    elif 0 < point <= 21:
        body = digits[:point] + "." + digits[point:]
    elif -6 < point <= 0:
        body = "0." + "0" * (-point) + digits
    else:
        exponent = point - 1
        mantissa = digits[0] + ("." + digits[1:] if k > 1 else "")
        body = f"{mantissa}e{'+' if exponent >= 0 else '-'}{abs(exponent)}"
    return sign + body


def shortest_digits(value: float) -> tuple[str, int]:
    """Shortest round-trip digits of a positive float and the position of its decimal point
    (`0.<digits> x 10**point`: 1e15 is ("1", 16), 0.00015 is ("15", -3))."""
    text = repr(value)
    exponent = 0
    if "e" in text:
        text, exp_text = text.split("e")
        exponent = int(exp_text)
    whole, _, fraction = text.partition(".")
    if fraction == "0":
        fraction = ""
    digits = (whole + fraction).lstrip("0")
    point = len(whole) + exponent - (len(whole + fraction) - len((whole + fraction).lstrip("0")))
    digits = digits.rstrip("0") or "0"
    return digits, point


def js_to_fixed1(value: float) -> str:
    """`value.toFixed(1)`: rounds the exact binary value, ties away from zero (6.25 -> "6.3")."""
    if abs(value) >= 1e21:
        return js_number(value)
    exact = Decimal(value).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)
    text = f"{exact:f}"
    if text.startswith("-") and exact == 0:
        text = text[1:]
    return text


# One backslash escape at a time, left to right, so `\\\\ud800` (an escaped backslash, then
# text) is no escape: a surrogate pair, a lone high or low surrogate, or any other escape.
_ESCAPE = re.compile(
    rb"\\(?:u[dD][89abAB][0-9a-fA-F]{2}(?:\\u[dD][c-fC-F][0-9a-fA-F]{2})?|u[dD][c-fC-F][0-9a-fA-F]{2}|.)",
    re.DOTALL)
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def has_surrogate_escape(data: bytes) -> bool:
    """Whether JSON `data` holds an escape of a UTF-16 surrogate (`\\uD800` to `\\uDFFF`), the
    only way JSON text spells one. The first test is memchr: most data has no backslash."""
    return b"\\" in data and b"\\u" in data and _SURROGATE_ESCAPE.search(data) is not None


def replace_lone_surrogates(data: bytes) -> bytes:
    """`data` with each lone UTF-16 surrogate escape (`\\ud83d` without its partner) replaced by
    `\\ufffd`, the replacement character. JSON.parse reads such an escape, and JSON.stringify
    writes one for a string cut inside an emoji, but a Python string made of it cannot be written
    as UTF-8, so it is read as U+FFFD: one UTF-16 unit, as the lone surrogate is. The escapes are
    of equal length, so offsets and line lengths do not change; `data` itself comes back when
    there is nothing to replace, so callers need no check of their own."""
    if not has_surrogate_escape(data):   # the common case, cheaply
        return data

    def replace(escape: re.Match[bytes]) -> bytes:
        text = escape.group()
        lone = len(text) == 6 and text[1:2] == b"u"   # a surrogate escape matched alone
        return b"\\ufffd" if lone else text
    return _ESCAPE.sub(replace, data)


def mend_lone_surrogates(text: str) -> str:
    """`text` with each lone surrogate code point (a JavaScript string may hold one; a Python
    string from a JSON.parse-like decoder too) as U+FFFD, as `replace_lone_surrogates` reads
    them from JSON; adjacent high and low surrogates become the one character they encode."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


_ASCII_SPACE = always_matching(rb"[ \t\r\n\v\f]*")

MORE = -1   # "the first character is cut off at the end of what was read: read more"


def first_significant(data: bytes, final: bool) -> int | None:
    """Offset of the first byte that is not whitespace (JS trim's set, BOM included); None if
    there is none; `MORE` if the data ends inside a character and more may follow. Invalid
    UTF-8 is significant (the reader then reports it)."""
    pos = 0
    size = len(data)
    while pos < size:
        pos = _ASCII_SPACE(data, pos).end()
        if pos >= size:
            return None
        if data[pos] < 0x80:
            return pos
        width = 2 if data[pos] < 0xE0 else 3 if data[pos] < 0xF0 else 4
        if pos + width > size and not final:
            return MORE
        try:
            char = data[pos:pos + width].decode("utf-8")
        except UnicodeDecodeError:
            return pos
        if char not in JS_WHITESPACE:
            return pos
        pos += width
    return None
