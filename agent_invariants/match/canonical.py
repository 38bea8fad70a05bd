"""The canonical JSON form of RFC 8785 (JCS): one spelling for each JSON value.

Version-2 evidence holds values in this form, and `result_size` counts the UTF-8 bytes of it, so
that the same value always reads and weighs the same, whoever wrote the trace. The form:

- no whitespace; arrays in order; object keys sorted by their UTF-16 code units (so an emoji,
  U+1F600, sorts before U+FB33);
- numbers as JavaScript prints them (ECMAScript Number::toString: `4.5`, `1e+30`, `0.002`), an
  integer beyond 2^53 as the nearest double;
- strings with only `"`, `\\` and the control characters U+0000..U+001F escaped (`\\b`, `\\t`, `\\n`,
  `\\f`, `\\r`, else `\\u00XX` in lower-case hex); every other character as itself (a lone
  surrogate, which valid JSON text never decodes to, as `\\udXXX`);
- an integer beyond the largest double has no form (ValueError): JavaScript reads it as Infinity.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from typing import Any

import msgspec
from msgspec import UNSET

from agent_invariants._js import js_float, js_number, js_number_hook, json_number, utf16_sort_key
from agent_invariants.match.budget import spend
from agent_invariants.match.equality import as_double

__all__ = ("EVIDENCE_DEPTH", "EVIDENCE_SIZE", "EVIDENCE_TEXT", "EVIDENCE_TOTAL", "EVIDENCE_TOTAL_V1", "canonical",
           "canonical_key", "canonical_text", "evidence_cut", "evidence_value", "evidence_within_total", "held_key",
           "plain_size")

EVIDENCE_TEXT = 200
"""The most code points of a string that evidence shows (then `…`), spec §10 point 7."""
_SAFE = 2**53

_ESCAPED = re.compile('["\\\\\x00-\x1f\ud800-\udfff]')   # (a lone surrogate has no UTF-8: escaped too)
_SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def canonical(value: Any) -> str:
    """`value` (a decoded JSON value: dict, list, str, int, float, bool, None) in RFC 8785 form."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        try:
            return js_number(value)
        except OverflowError:   # beyond the largest double: JavaScript reads it as Infinity
            raise ValueError("an integer beyond the largest double has no canonical form") from None
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"{value!r} is not a JSON number")
        return js_number(value)
    if isinstance(value, str):
        return _string(value)
    # plain loops, not generators: one frame per level (a trace's values nest up to 500 deep)
    if isinstance(value, list):
        if len(value) >= _FLAT_LENGTH:
            flat = _flat(value)
            if flat is not None:
                return flat
        items = []
        for item in value:
            items.append(canonical(item))
        return "[" + ",".join(items) + "]"
    if isinstance(value, dict):
        members = []
        for key in sorted(value, key=utf16_sort_key):
            members.append(_string(key) + ":" + canonical(value[key]))
        return "{" + ",".join(members) + "}"
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def canonical_key(value: Any) -> object:
    """A key under which JSON-equal values meet (`1` and `1.0`; never `1` and `true` or `"1"`),
    for indexes and sets: a string as itself (the usual key, an order id, and the cheapest to
    hash and keep); every other key is a tuple, so never equal to a string: a number as the
    double JavaScript reads (as `json_equal` compares them), anything else by its canonical form.
    A value holding an integer beyond any double has no canonical form: its spelling with each
    number as that double stands for it (such an integer is the infinity JavaScript reads, so two
    of them meet, as `json_equal` has it)."""
    kind = value.__class__
    if kind is str:
        return value
    if kind is int or kind is float:
        return ("n", as_double(value))   # as JavaScript holds it: 2^53 + 1 is 2^53
    try:
        text = canonical(value)
    except ValueError:
        spelling: list[str] = []
        _spelled(value, spelling)
        return ("p", "".join(spelling))
    if len(text) > _FREE_CHARACTERS:   # (the MCP server's bound on a check: `budget`)
        spend(len(text) // _CHARACTERS_PER_STEP)
    return ("j", text)


_LONGEST_KEY = 256
"""The longest key held as it is, in characters; a longer one is held by its digest (`held_key`)."""


def held_key(key: object) -> object:
    """A `canonical_key` as a rule keeps it for the rest of a trace (precedence's correlate keys,
    `tool_args`' distinct values): one longer than `_LONGEST_KEY` characters (a value of kilobytes)
    by the SHA-256 of its form, so that a key held stays small whatever the values (1,600 keys of
    500 KB held 794 MiB). Equal keys give equal digests; a digest is a tuple, never equal to a
    string key. (hashlib is imported when first needed: it costs a check 3 ms and 4 MiB.)"""
    if isinstance(key, str):
        if len(key) <= _LONGEST_KEY:
            return key
        text = "s" + key
    elif isinstance(key, tuple) and key[0] in ("j", "p") and len(key[1]) > _LONGEST_KEY:
        text = key[0] + key[1]
    else:
        return key
    import hashlib

    return ("#", hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest())


def canonical_text(value: Any) -> str:
    """One text for each JSON value, JSON-equal values alike, for keys, sets and sorting where
    a value may come from anyone: its canonical form, or for a value without one (an integer
    beyond any double, or the infinity a reader made of `1e400`) its spelling as `canonical_key`
    has it, after a NUL, with which no canonical text starts."""
    try:
        return canonical(value)
    except ValueError:
        spelling: list[str] = []
        _spelled(value, spelling)
        return "\x00" + "".join(spelling)


_FREE_CHARACTERS = 256
"""A key this short is written in a few microseconds, as a rule's look at an event is counted (a
reference's own key, written once, is one); not counting it spares every check a lookup per key
(3% of a check of version-2 kinds)."""
_CHARACTERS_PER_STEP = 8
"""About a microsecond's work of `canonical` (0.15 µs a character of what it writes), as a step is:
two hundred `distinct` rules, each writing the key of a call's args of 8 MB, took 37 s; ten rules
writing keys of 4,000 characters for 7,000 calls, 28 s."""


def _spelled(value: Any, out: list[str]) -> None:
    """Spell a decoded JSON value into `out` so that JSON-equal values are spelt alike: object
    members sorted, every number as the double `as_double` reads (0 for -0). A flat string, as
    a key of nested tuples would be compared and hashed a C frame per level; plain loops, one
    Python frame per level, as in `json_equal`, for values nested as deep as a trace may hold."""
    kind = value.__class__
    if kind is dict:
        out.append("{")
        for key in sorted(value):
            out.append(repr(key))
            out.append(":")
            _spelled(value[key], out)
            out.append(",")
        out.append("}")
    elif kind is list:
        out.append("[")
        for element in value:
            _spelled(element, out)
            out.append(",")
        out.append("]")
    elif kind is int or kind is float:
        out.append(repr(float(as_double(value)) or 0.0))
    else:
        out.append(repr(value))   # a string (quoted), None, True or False


def evidence_value(value: Any) -> Any:
    """A decoded JSON value as evidence holds it: object keys in canonical order, numbers as
    JavaScript holds them (`100.0` is `100`), strings cut to 200 code points plus `…`; still
    structured JSON, so reports nest it as it is.

    A value may be as large as a trace line, and a rule keeps up to `--max-violations` of them,
    each printed twice in the JSON report, indented once more per level: so the whole evidence
    of one violation keeps about `EVIDENCE_SIZE` characters and `EVIDENCE_DEPTH` levels. An
    object's plain members come first, and its arrays and objects share what is left; past it an
    array ends with `"… 12 more"`, an object gets the key `"…"` (`"12 more keys"`), and an array or
    object deeper than the levels kept is the string `"… nested deeper"`. So a mismatch keeps its
    `pointer`, and its `expected` and `actual` half of the rest each."""
    return _evidence(value, [EVIDENCE_SIZE], 0)


EVIDENCE_SIZE = 20_000
"""About how many characters of evidence one violation keeps (see `evidence_value`)."""
EVIDENCE_DEPTH = 32
"""How many levels of arrays and objects one violation's evidence keeps."""
EVIDENCE_TOTAL = 250_000
"""About how many bytes of evidence (as compact JSON) of the version-2 kinds one check report keeps
in full, in report order: past it, each further violation keeps about `EVIDENCE_SMALL`
(`evidence_within_total`)."""
EVIDENCE_TOTAL_V1 = 4_000_000
"""The same for the evidence of the twelve version-1 kinds, which is the Node tool's, byte for
byte, and stays so on the reports contracts of people's make (four thousand violations of a
kilobyte each); past it, only what would make a report of a GB (an `allow_tools` of a thousand
long patterns, listed in each of a thousand violations) is cut."""
EVIDENCE_SMALL = 500


def evidence_within_total(violations: Iterable[Any], canonical_kind: Callable[[str], bool]) -> None:
    """Cut the evidence of `violations` (in report order) past `EVIDENCE_TOTAL` of the kinds that
    are `canonical_kind` (version 2's), and past `EVIDENCE_TOTAL_V1` of the others (version 1's:
    the Node tool's, whose objects keep the order of their keys, cut or not), to about
    `EVIDENCE_SMALL` characters each, as `evidence_value` cuts (`"… 12 more"`). Each violation's
    evidence is bounded, but a thousand of them per rule, each naming a large earlier result,
    made a report of 116 MB from a trace of 85 KB, and ran out of memory with eight such rules;
    a version-1 `allow_tools` of a thousand long patterns, listed in each violation, one of a GB."""
    spent = [0, 0]   # of the version-2 kinds, of the version-1 kinds
    for violation in violations:
        evidence = violation.evidence
        if evidence is UNSET:
            continue
        canonical = canonical_kind(violation.rule_kind)
        if spent[not canonical] > (EVIDENCE_TOTAL if canonical else EVIDENCE_TOTAL_V1):
            violation.evidence = evidence_cut(evidence, keep_order=not canonical)
        else:
            spent[not canonical] += len(msgspec.json.encode(evidence, enc_hook=js_number_hook))


def evidence_cut(evidence: Any, *, keep_order: bool = False) -> Any:
    """A violation's evidence cut to about `EVIDENCE_SMALL` characters, the marks of what was
    left out counting what earlier cuts left out too; with `keep_order`, its objects keep the
    order of their keys. Cutting again changes nothing (a test says so): so the cut of evidence
    that `evidence_within_total` left whole is the cut of the same evidence it cut, which is what
    SARIF fingerprints hash (whether a violation is past the total depends on the violations
    before it in the report, and a fingerprint that moved with them would reopen alerts)."""
    return _evidence(evidence, [EVIDENCE_SMALL], 0, recut=True, keep_order=keep_order)


def _evidence(value: Any, left: list[int], depth: int, recut: bool = False, keep_order: bool = False) -> Any:
    """`evidence_value`, with `left[0]` characters left to spend (it may go below 0 by one
    string or number: only what follows is cut). With `recut`, `value` is evidence cut before,
    whose marks of what was left out (`"… 12 more"`, `"12 more keys"`) count in the new ones.
    With `keep_order`, objects keep the order of their keys (the Node tool's evidence)."""
    kind = value.__class__   # the usual numbers first, as they are: written alike by JavaScript and msgspec
    if (kind is int and -_SAFE <= value <= _SAFE) or (kind is float and 1e-4 <= abs(value) < 1e16
                                                      and not value.is_integer()):
        left[0] -= 8
        return value
    if isinstance(value, str):
        kept = value if len(value) <= EVIDENCE_TEXT else value[:EVIDENCE_TEXT] + "…"
        left[0] -= len(kept) + 2
        return kept
    if isinstance(value, bool) or value is None:
        left[0] -= 5
        return value
    if isinstance(value, (int, float)):
        left[0] -= 8
        try:
            number = json_number(value)
        except OverflowError:
            return value
        if isinstance(number, int) and not -_SAFE <= number <= _SAFE:
            number = float(number)   # JS writes such a double by its shortest digits: 2**60 as 1152921504606847000
        return js_float(number) if isinstance(number, float) and math.isfinite(number) else number
    if isinstance(value, (list, dict)) and depth >= EVIDENCE_DEPTH:
        left[0] -= 16
        return "… nested deeper"
    if isinstance(value, list):   # loops, not comprehensions: one frame per level
        left[0] -= 2
        carried = _more(value[-1], _MORE_ITEMS) if recut and value else 0
        if carried:
            value = value[:-1]
        items = []
        for position, item in enumerate(value):
            if left[0] <= 0:
                items.append(f"… {len(value) - position + carried} more")
                break
            items.append(_evidence(item, left, depth + 1, recut, keep_order))
        else:
            if carried:
                items.append(f"… {carried} more")
        return items
    if isinstance(value, dict):
        return _members(value, left, depth, recut, keep_order)
    return value


_MORE_ITEMS = re.compile(r"… ([0-9]+) more")
_MORE_KEYS = re.compile(r"([0-9]+) more keys")


def _more(mark: Any, pattern: re.Pattern[str]) -> int:
    """How many items (or keys) `mark` says were left out, if it is such a mark; else 0."""
    found = pattern.fullmatch(mark) if mark.__class__ is str else None
    return 0 if found is None else int(found.group(1))


def _members(value: dict[str, Any], left: list[int], depth: int, recut: bool, keep_order: bool) -> dict[str, Any]:
    """An object as evidence holds it (`_evidence`): plain members first, then the arrays and
    objects, each with an even share of what is left; a key cut as a string is (to 200 code
    points and `…`, one more `…` should two meet); keys in canonical order, or, with
    `keep_order`, in their own."""
    left[0] -= 2
    carried = 0
    marks = [key for key in value if key and key.strip("…") == ""] if recut else []
    if marks:   # the mark of the keys left out before: the longest key of `…` alone
        mark = max(marks, key=len)
        carried = _more(value[mark], _MORE_KEYS)
        if carried:
            value = {key: member for key, member in value.items() if key != mark}
    kept: dict[str, tuple[str, Any]] = {}   # key -> (the key as evidence shows it, the member)
    names: set[str] = set()

    def shown(key: str) -> str:
        name = key if len(key) <= EVIDENCE_TEXT else key[:EVIDENCE_TEXT] + "…"
        while name in names:
            name += "…"
        names.add(name)
        left[0] -= len(name) + 3
        return name

    nested = []
    for key, member in value.items():
        if isinstance(member, (list, dict)):
            nested.append(key)
        elif left[0] > 0:
            name = shown(key)
            kept[key] = (name, _evidence(member, left, depth + 1, recut, keep_order))
    for number, key in enumerate(sorted(nested, key=utf16_sort_key)):
        if left[0] <= 0:
            break
        share = [left[0] // (len(nested) - number)]
        spent = share[0]
        name = shown(key)
        kept[key] = (name, _evidence(value[key], share, depth + 1, recut, keep_order))
        left[0] -= spent - share[0]
    found = dict(kept[key] for key in value if key in kept)
    if len(kept) < len(value) or carried:
        marker = "…"
        while marker in found:   # (a value's own key "…" is kept as it is)
            marker += "…"
        found[marker] = f"{len(value) - len(kept) + carried} more keys"
    return found if keep_order else {key: found[key] for key in sorted(found, key=utf16_sort_key)}


_PLAIN_STRING = re.compile(rb'"[^"]*"')
_NOT_PLAIN = re.compile(rb"[ \t\r\n.]|[0-9][eE]|[0-9]{16}|-0")


def plain_size(text: bytes) -> int | None:
    """The UTF-8 size of the canonical form of a JSON text written *plainly*, without decoding it:
    no escapes, no whitespace between tokens, no fraction or exponent, no integer of more than 15
    digits, no `-0`. Such a text is its own canonical form but for the order of its keys, which
    does not change its size; a repeated key, which the decoder keeps one of, makes the canonical
    form shorter, so the size is then an upper bound. None for any other text (decode it then)."""
    if b"\\" in text:
        return None
    if _NOT_PLAIN.search(_PLAIN_STRING.sub(b"", text)):
        return None
    return len(text)


_encode = msgspec.json.Encoder().encode
_FLAT_LENGTH = 16
"""The shortest array `canonical` first tries to write whole (`_flat`)."""


def _flat(items: list[Any]) -> str | None:
    """An array of integers within 2^53 (written as Python writes them, as JavaScript does) or
    of strings that need no escape, written in C, without a call per item: an embedding of 1,536
    numbers, a list of ids, or a 2-million-number array, the key of whose args each of `mutate`'s
    mutants of it needs (2 s a mutant, item by item). None: the array is written item by item."""
    kinds = set(map(type, items))
    if len(kinds) != 1:
        return None
    if int in kinds:   # (not a bool: its type is bool)
        if min(items) >= -_SAFE and max(items) <= _SAFE:
            return _encode(items).decode()   # (msgspec writes an integer as Python does)
    elif str in kinds and _ESCAPED.search("".join(items)) is None:
        return '["' + '","'.join(items) + '"]'
    return None


def _string(text: str) -> str:
    return '"' + _ESCAPED.sub(_escape, text) + '"'


def _escape(found: re.Match[str]) -> str:
    char = found.group()
    return _SHORT.get(char) or f"\\u{ord(char):04x}"
