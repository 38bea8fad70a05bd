"""Facts about JSON text shared by contracts, traces and the MCP server, written out once.

The nesting limit. JSON nested more than `MAX_NESTING` levels deep is refused everywhere, and at
the same depth whatever the caller: `too_deep_at` counts brackets in the text, where a decoder's
own limit depends on how deep the caller's stack already is. Code that walks such a value in
Python, some frames a level, does it inside `deep_enough()`.

msgspec's errors, in our words. A validation error names the JSON path first, and says types
as JSON says them, and the choices of a value that must be one of a few (`problem_words`):

    Expected `str`, got `int` - at `$.tool`        ->  $.tool: expected a string, got a number
    Invalid enum value 'ok' - at `$.verdict`       ->  $.verdict: unknown value "ok"; expected one of: satisfied, ...

and a syntax error says "invalid JSON" and counts columns from 1, as editors do:

    JSON is malformed: invalid character (byte 5)  ->  invalid JSON: invalid character (column 6)
    Input data was truncated                       ->  invalid JSON: the JSON ends before the value is complete

A contract file names the line too (`invalid JSON at line 3, column 7: ...`), a trace item in an
array the byte in the item (`syntax_error`), and the MCP server says "Parse error: " instead of
"invalid JSON: " (`syntax_problem`).

A file given in the wrong place. A contract passed as a trace, a trace passed as a contract, or a
trace wrapped as `{"events": [...]}` fails on its first line; `document_shape` and `text_shape`
tell what it is instead, so that the message can say so (`AS_CONTRACT`, `AS_TRACE`). They are
asked only once reading has failed.
"""
from __future__ import annotations

import ast
import contextlib
import math
import re
import sys
import types
import typing
from collections.abc import Callable, Iterator
from typing import Any, Literal, cast

import msgspec

from agent_invariants.errors import unknown_value

__all__ = (
    "AS_CONTRACT",
    "AS_TRACE",
    "INVALID_TOO_DEEP",
    "MAX_DIGITS",
    "MAX_NESTING",
    "TOO_DEEP",
    "Skipper",
    "always_matching",
    "choices_at",
    "decode_problem",
    "deep_enough",
    "document_shape",
    "invalid_utf8",
    "nested_too_deep",
    "nests_too_deep",
    "non_finite",
    "path_and_problem",
    "problem_words",
    "show",
    "syntax_error",
    "syntax_problem",
    "syntax_problem_in_file",
    "text_shape",
    "too_deep_at",
    "value_count",
    "wide_unicode",
)

MAX_NESTING = 500
"""The deepest JSON accepted, in levels of objects and arrays (the outermost value is level 1)."""

_RECURSION = 20_000
"""The recursion limit inside `deep_enough`: 500 levels of some ten frames each, and room to spare."""


@contextlib.contextmanager
def deep_enough() -> Iterator[None]:
    """Room for Python code to walk a value as deep as a trace may hold (`MAX_NESTING` levels): the
    JSON Schema validator takes some ten frames a level, `record`'s redaction five, and the
    interpreter's default limit of 1,000 frames ended the redaction at about 250 levels. Only
    Python frames grow with it (they do not use the C stack); a C decoder called inside must be
    handed text `too_deep_at` has passed. Also a decorator (`@deep_enough()`)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, _RECURSION))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)

MAX_DIGITS = 4300
"""The most digits of an integer that can be read: Python's limit (`sys.get_int_max_str_digits`),
so msgspec's and PyYAML's."""

Skipper = Callable[[bytes, int], "re.Match[bytes]"]
"""`match(data, pos)` of a pattern that also matches nothing, so it never returns None: the
scanners call `.end()` on it to skip a run (of whitespace, of separators, of a scalar)."""


def always_matching(pattern: bytes, flags: int = 0) -> Skipper:
    """The `match` of `pattern`, which must match the empty string (and so matches anywhere)."""
    compiled = re.compile(pattern, flags)
    if compiled.match(b"") is None:
        raise ValueError(f"{pattern!r} does not match the empty string")
    return cast(Skipper, compiled.match)


def nested_too_deep(limit: int) -> str:
    """The words for JSON nested deeper than `limit` levels."""
    return f"nested more than {limit} levels deep"


TOO_DEEP = nested_too_deep(MAX_NESTING)
INVALID_TOO_DEEP = f"invalid JSON: {TOO_DEEP}"

# an unterminated string runs to the end (`"?`): retrying it at every later quote is quadratic
_NESTING_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.DOTALL)


_ESCAPE = re.compile(rb"\\.", re.DOTALL)
_NOT_BRACKETS_OR_QUOTES = bytes(byte for byte in range(256) if byte not in b'[]{}"')
_SHALLOW_PASSES = 32


def too_deep_at(data: bytes, limit: int = MAX_NESTING) -> int | None:
    """Offset where JSON `data` nests deeper than `limit`, or None. Decoders' own limits depend
    on how deep the caller's stack is; this one does not. Cheap when it cannot be exceeded."""
    if len(data) <= limit or _shallow(data, limit):
        return None
    depth = 0
    for token in _NESTING_TOKEN.finditer(data):
        char = token.group()[0]
        if char == 0x22:   # a string: brackets inside it do not count
            continue
        if char in (0x5B, 0x7B):
            depth += 1
            if depth > limit:
                return token.start()
        else:
            depth -= 1
    return None


def _shallow(data: bytes, limit: int) -> bool:
    """Whether `data` surely nests no deeper than `limit`, found in C loops: escaped backslashes
    and quotes dropped, so that every quote left opens or closes a string; only quotes and
    brackets kept, then the strings' brackets dropped (every other piece between quotes): no more
    brackets than `limit` is shallow enough; else the innermost pairs (`[]`, `{}`) are removed
    once per level, up to `_SHALLOW_PASSES` levels. A long but shallow line (an OTLP batch of
    spans) costs a few passes, not a Python step per token; anything else (deep, or brackets that
    do not pair) is left to the exact scan."""
    if b"\\" in data:
        data = _ESCAPE.sub(b"", data)   # in one pass: `\\\\` and `\\"` are the escapes that matter
    # the quotes and brackets left, in order; two quotes side by side go (an empty string, or the end
    # of one and the start of the next: either way every other mark keeps its side of the quotes)
    marks = data.translate(None, _NOT_BRACKETS_OR_QUOTES).replace(b'""', b"")
    brackets = b"".join(marks.split(b'"')[0::2]) if b'"' in marks else marks
    if len(brackets) <= limit:
        return True
    for _ in range(min(limit, _SHALLOW_PASSES)):
        if not brackets:
            return True
        shorter = brackets.replace(b"[]", b"").replace(b"{}", b"")
        if len(shorter) == len(brackets):
            return False
        brackets = shorter
    return not brackets


def value_count(document: Any, whole: str | None = None) -> int:
    """How many JSON values a decoded document holds, itself included (without recursion); with
    `whole`, an array that is the value of that key counts as one (a `$in` list is one lookup)."""
    count, pending = 0, [document]
    while pending:
        value = pending.pop()
        count += 1
        if isinstance(value, dict):
            if whole is not None and isinstance(value.get(whole), list):
                count += 1
                pending.extend(item for key, item in value.items() if key != whole)
            else:
                pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
    return count


def nests_too_deep(document: Any, limit: int = MAX_NESTING) -> bool:
    """Whether a decoded document has objects or arrays more than `limit` levels deep (the
    document itself is level 1), as `too_deep_at` counts them in a text. Level by level, not
    recursively: a deep document must not exhaust the stack of the check meant to refuse it."""
    level = [document] if type(document) in _CONTAINERS else []
    for _depth in range(limit):
        below = []
        for value in level:
            items = value.values() if type(value) is dict else value
            if not _CONTAINERS.isdisjoint(map(type, items)):   # most arrays hold none: ask in C first
                below += [item for item in items if type(item) in _CONTAINERS]
        if not below:
            return False
        level = below
    return True


_CONTAINERS = frozenset((dict, list))   # the only containers a JSON decoder makes


def path_and_problem(message: str, base: str = "$") -> tuple[str, str]:
    """msgspec's "<problem> - at `$.x`" as ("$.x", "<problem>"), the path taken relative to
    `base` (the path of the value that was decoded); a message naming no path is about `base`."""
    problem, sep, where = message.rpartition(" - at `")
    if not sep:
        return base, message
    return base + where.rstrip("`")[1:], problem


def decode_problem(error: msgspec.DecodeError | RecursionError, decoded: Any = None, data: bytes | None = None) -> str:
    """Why msgspec refused a value (a `DecodeError`, or the `RecursionError` of a deep one):
    "$.tool: expected a string, got a number" for a value of the wrong type, "invalid JSON: ..."
    for text that is no JSON. `decoded` is the type decoded, where the choices of an enum are
    looked up; `data` the text, where a NaN or Infinity is named."""
    if isinstance(error, RecursionError):
        return INVALID_TOO_DEEP
    if isinstance(error, msgspec.ValidationError):
        path, problem = path_and_problem(str(error))
        if "[...]" in path and data is not None and problem.startswith(("Integer value out of range",
                                                                         "Number out of range")):
            # a generic decode names no keys: say where instead
            offset, reason = (_too_many_digits if problem.startswith("Integer") else _out_of_range)(data)
            return f"invalid JSON: {reason}" + ("" if offset is None else f" (column {offset + 1})")
        return f"{path}: {problem_words(problem, decoded, path)}"
    return f"invalid JSON: {syntax_problem(error, data)}"


_EXPECTED = {"str": "a string", "int": "an integer", "float": "a number", "int | float": "a number",
             "int | str": "an integer or a string", "int | str | null": "an integer or a string",
             "bool": "true or false", "array": "an array", "object": "an object", "null": "null"}
_GOT = {**_EXPECTED, "int": "a number", "bool": "a boolean", "date": "a date", "datetime": "a date-time",
        "time": "a time", "bytes": "binary data", "set": "a set", "tuple": "an array"}
# The patterns of the paths taken when something is wrong are compiled on first use (re caches them).
_TYPE_PROBLEM = (r"Expected `([^`]*)`(?:, got `([^`]*)`| of length ([<>]=?) (\d+)| ([<>]=?) (\S+)"
                 r"| matching regex (.*))?\Z")
_SIZES = {"str": "characters", "array": "items"}


def problem_words(problem: str, decoded: Any = None, path: str = "$") -> str:
    """One problem msgspec found at `path` of a value decoded as the type `decoded`, in our
    words: types as JSON names them, the choices of an enum listed (with "did you mean"):

        Expected `str`, got `int`      ->  expected a string, got a number
        Expected `float` <= 1.0        ->  expected a number <= 1
        Invalid enum value 'warn'      ->  unknown value "warn" (did you mean 'warning'?); expected one of: ...
    """
    enum = problem.startswith(("Invalid enum value ", "Invalid value "))
    choices = choices_at(decoded, path) if enum or problem.startswith("Expected `str`,") else ()
    if enum:
        shown = problem.partition("value ")[2]
        try:
            value = ast.literal_eval(shown)   # msgspec shows the value as Python does
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return f"unknown value {shown}"
        as_json = show(value)
        return unknown_value(as_json, value, choices) if choices else f"unknown value {as_json}"
    for prefix, words in (("Object missing required field", "missing required field"),
                          ("Object contains unknown field", "unknown field")):
        if problem.startswith(prefix):
            return words + problem[len(prefix):]
    found = re.match(_TYPE_PROBLEM, problem, re.DOTALL)
    if found is None:
        return problem[:1].lower() + problem[1:]
    expected, got, size_op, size, op, bound, pattern = found.groups()
    words = _EXPECTED.get(expected, f"`{expected}`")
    if choices and expected == "str":
        words += f" (one of: {', '.join(choices)})"
    if got == "float" and expected.startswith("int | str"):   # (OTLP's times and codes: no rounding)
        return f"expected {words}, got a number with a fraction or an exponent (write the integer in full, " \
            "or as a string)"
    if got is not None:
        return f"expected {words}, got {_GOT.get(got, f'`{got}`')}"
    if size_op is not None:
        unit = _SIZES.get(expected, "items")
        if size_op == ">=" and size == "1" and expected in _SIZES:
            return f"expected a non-empty {words.partition(' ')[2]}"
        least = {">=": "at least", "<=": "at most"}.get(size_op, size_op)
        return f"expected {words} of {least} {size} {unit}"
    if op is not None:
        return f"expected {words} {op} {bound.removesuffix('.0')}"
    if pattern is not None:
        return f"expected {words} matching {pattern.strip(chr(39))}"
    return f"expected {words}"


def show(value: Any) -> str:
    """`value` as JSON (or repr), cut to 60 characters; encoded once, as it may be megabytes.
    A number JSON has no words for is named as JavaScript names it (NaN, Infinity); an integer of
    22 digits or more, as the double it stands for (1e300)."""
    if isinstance(value, float) and not math.isfinite(value):
        return non_finite(value)
    if value.__class__ is int and abs(value) >= 10**21:   # as the double it stands for: 1e300, not 301 digits
        try:
            value = float(value)
        except OverflowError:
            return non_finite(math.inf if value > 0 else -math.inf)
    try:
        text = msgspec.json.encode(value).decode()
    except (TypeError, ValueError, msgspec.EncodeError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def non_finite(value: float) -> str:
    """How messages name NaN and the infinities: `NaN`, `Infinity`, `-Infinity`."""
    return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")


def choices_at(decoded: Any, path: str) -> tuple[str, ...]:
    """The values an enum (a `Literal`) allows at JSON `path` (`$.rules[0].severity`) of the
    type `decoded`, or () when there is no enum there."""
    if decoded is None:
        return ()
    hint = decoded
    for name, _index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path.removeprefix("$")):
        hint = _member(hint, name or None)
        if hint is None:
            return ()
    return _literal_values(hint)


def _member(hint: Any, name: str | None) -> Any:
    """The type of field `name` of a struct in `hint` (or of an item, for None), if any."""
    for option in _options(hint):
        if name is None and typing.get_origin(option) is list:
            return typing.get_args(option)[0]
        if name is not None and isinstance(option, type) and issubclass(option, msgspec.Struct):
            for field in msgspec.structs.fields(option):
                if field.encode_name == name:
                    return field.type
    return None


def _options(hint: Any) -> list[Any]:
    """`hint` without Annotated, as the list of what it may be (the arms of a union)."""
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        return _options(typing.get_args(hint)[0])
    if origin is typing.Union or origin is types.UnionType:
        return [option for arm in typing.get_args(hint) for option in _options(arm)]
    return [hint]


def _literal_values(hint: Any) -> tuple[str, ...]:
    for option in _options(hint):
        if typing.get_origin(option) is Literal:
            return tuple(str(value) for value in typing.get_args(option))
    return ()


def syntax_problem(error: msgspec.DecodeError, data: bytes | None = None) -> str:
    """What is wrong with JSON text msgspec could not parse (`data`, when the caller has it at
    hand), and at which column of it."""
    offset, reason = _syntax_parts(str(error), data)
    return reason if offset is None else f"{reason} (column {offset + 1})"


def syntax_problem_in_file(data: bytes, error: msgspec.DecodeError) -> str:
    """A syntax error in a whole file (a contract), at its line and column; the end of the
    file when msgspec names no place (the JSON is cut short)."""
    offset, reason = _syntax_parts(str(error), data)
    if reason.startswith("Number out of range"):   # a number past a double's range: where is not said
        offset, reason = _out_of_range(data)
    elif reason.startswith("Integer value out of range"):   # nor where an integer too long to read is
        offset, reason = _too_many_digits(data)
    elif reason.startswith("Invalid UTF-8"):   # nor where the bad byte is
        offset, reason = invalid_utf8(data), "invalid UTF-8"
    if offset is None:
        offset = len(data)
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return f"invalid JSON at line {line}, column {column}: {reason}"


_NON_JSON_NUMBER = rb"-?(?:NaN|Infinity)\b"
_STRING_OR_NUMBER = rb'"(?:[^"\\]|\\.)*"?|-?[0-9][0-9.eE+-]*'


def _out_of_range(data: bytes) -> tuple[int | None, str]:
    """Where the first number too large for a double is (JavaScript reads it as Infinity)."""
    for token in re.finditer(_STRING_OR_NUMBER, data, re.DOTALL):
        text = token.group()
        if text[:1] != b'"':
            try:
                if math.isinf(float(text)):
                    return token.start(), f"{text.decode()} is out of range (Infinity is not a number JSON allows)"
            except ValueError:
                continue
    return None, "a number is out of range (Infinity is not a number JSON allows)"


def _too_many_digits(data: bytes) -> tuple[int | None, str]:
    """Where the first integer too long to be read is (over `MAX_DIGITS` digits)."""
    for token in re.finditer(_STRING_OR_NUMBER, data, re.DOTALL):
        digits = len(token.group().removeprefix(b"-"))
        if token.group()[:1] != b'"' and digits > MAX_DIGITS and token.group().lstrip(b"-").isdigit():
            return token.start(), f"an integer of {digits:,} digits is too long to read (at most {MAX_DIGITS:,})"
    return None, f"an integer is too long to read (at most {MAX_DIGITS:,} digits)"


def wide_unicode(data: bytes) -> str | None:
    """What a message says of a file that is UTF-16 or UTF-32 text, told by its byte order mark
    or, without one, by the NUL bytes around its first `{` or `[` (Windows PowerShell 5 writes
    redirected output as UTF-16), or None: these files are UTF-8, and "invalid UTF-8 at byte 1"
    would leave the user guessing why."""
    if data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        name, told = "UTF-32", "it starts with a UTF-32 byte order mark"
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        name, told = "UTF-16", "it starts with a UTF-16 byte order mark"
    elif data[:4] in (b"{\x00\x00\x00", b"[\x00\x00\x00", b"\x00\x00\x00{", b"\x00\x00\x00["):
        name, told = "UTF-32", "its first character is four bytes"
    elif data[:2] in (b"{\x00", b"[\x00", b"\x00{", b"\x00["):
        name, told = "UTF-16", "its first character is two bytes"
    else:
        return None
    return f"is {name} text ({told}), not UTF-8: save it as UTF-8 (e.g. iconv -f {name} -t UTF-8)"


def invalid_utf8(data: bytes) -> int | None:
    """The offset of the first byte of `data` that is not UTF-8, or None."""
    if data.isascii():
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start
    return None


_decode_any = msgspec.json.Decoder().decode


def syntax_error(data: bytes) -> tuple[int, str] | None:
    """Where msgspec finds the JSON `data` malformed (a byte offset) and why, in our words; None
    when it is well-formed JSON."""
    bad = invalid_utf8(data)
    if bad is not None:
        return bad, "invalid UTF-8"
    try:
        _decode_any(data)
        return None
    except RecursionError:
        return None
    except msgspec.DecodeError as exc:
        text = str(exc)
    offset, reason = _syntax_parts(text, data)
    return min(len(data) if offset is None else offset, len(data)), reason


_AT_BYTE = r"\s*\(byte (\d+)\)"


def _syntax_parts(text: str, data: bytes | None = None) -> tuple[int | None, str]:
    """msgspec's "JSON is malformed: <reason> (byte N)" as (N, reason); None when it names no byte.
    In `data`, the text refused, a NaN or Infinity is named (where it starts, at its sign)."""
    found = re.search(_AT_BYTE, text)
    offset = int(found.group(1)) if found else None
    reason = re.sub(_AT_BYTE, "", text).removeprefix("JSON is malformed: ")
    if reason == "Input data was truncated":
        reason = "the JSON ends before the value is complete"
    elif reason == "trailing characters" and offset:   # (msgspec names the byte after the first of them)
        offset -= 1
    elif reason == "invalid character" and data is not None and offset is not None:
        word = re.compile(_NON_JSON_NUMBER).match(data, offset - (data[offset - 1:offset] == b"-"))
        if word is not None:
            offset, reason = word.start(), f"{word.group().decode()} is not a number JSON allows"
    return offset, reason


# A file given in the wrong place (see the module doc): what each side says about it.
AS_CONTRACT = {
    "event": "this looks like a trace (events with seq and type, one per line), not a {kind}",
    "events array": "this looks like a trace (a JSON array of events), not a {kind}",
    "events object": "this looks like a trace (an object holding an events array), not a {kind}",
}
"""Templates: `{kind}` is what the file should have been (a contract, a profile, a fixtures file)."""
AS_TRACE = {
    "contract": "this looks like a contract (an object with version and rules), not a trace; a trace holds "
                "one event per line, or a JSON array of events",
    "events object": 'this is one object holding an "events" array, not a trace: each line must be one event; '
                     "a JSON array of events is also accepted",
}
_CONTRACT_KEYS = ("version", "rules", "extends")
_SNIFF_BYTES = 1 << 16
_TOP_KEY = re.compile(rb'"([A-Za-z_$]+)"\s*:\s*(\[)?')
_YAML_CONTRACT_KEY = re.compile(rb"^(?:version|rules|extends):", re.MULTILINE)


def document_shape(document: Any) -> str | None:
    """Which of our documents a decoded JSON value is: "contract", "event" (one trace event),
    "events array", "events object" (`{"events": [...]}`); None for none of them."""
    if type(document) is dict:
        if "seq" in document and "type" in document and not any(key in document for key in _CONTRACT_KEYS):
            return "event"
        if type(document.get("events")) is list and "rules" not in document:
            return "events object"
        if "seq" not in document and any(key in document for key in _CONTRACT_KEYS):
            return "contract"
    elif type(document) is list and document and type(document[0]) is dict:
        return "events array" if "seq" in document[0] and "type" in document[0] else None
    return None


def text_shape(text: bytes) -> str | None:
    """`document_shape` of a file from its first bytes (at least `_SNIFF_BYTES` of them when the
    file is longer): the whole text if it decodes, else its first line (a JSONL trace), else the
    keys seen in the first 64 KiB of an object too long to decode whole (or of a YAML contract).
    For messages about a file that failed to read, never on the way of one that reads."""
    text = text.lstrip(b" \t\r\n")
    for candidate in (text, text.split(b"\n", 1)[0]):
        try:
            return document_shape(_decode_any(candidate))
        except (msgspec.DecodeError, RecursionError):
            continue
    if text[:1] != b"{":   # a YAML contract starts its lines with its keys
        return "contract" if _YAML_CONTRACT_KEY.search(text, 0, _SNIFF_BYTES) else None
    keys: dict[str, Any] = {}
    for found in _TOP_KEY.finditer(text, 0, _SNIFF_BYTES):
        keys.setdefault(found.group(1).decode(), [] if found.group(2) else None)
    return document_shape(keys)
