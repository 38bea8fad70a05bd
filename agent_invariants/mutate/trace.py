"""The trace `mutate` edits: read once, its events kept as written, member by member.

Each event is a dict of its top-level members, every value the `msgspec.Raw` JSON text it was
written as, so an edit decodes only the member it changes and every other value goes back out
byte for byte. Mutants and rewrites are written as JSON Lines (`as_jsonl`), the form `check` reads.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal
from typing import Any, NamedTuple, TypeVar

import msgspec
from msgspec import Raw

from agent_invariants._js import first_significant, js_number, js_trim, replace_lone_surrogates
from agent_invariants._paths import named_file_problem
from agent_invariants.contract_source import file_problem, read_at_most
from agent_invariants.errors import TraceError
from agent_invariants.jsontext import MAX_DIGITS
from agent_invariants.payloads import decoded

__all__ = ("MAX_TRACE_BYTES", "MISSING", "Event", "Original", "as_json_array", "as_jsonl", "fresh",
           "member", "parse_events", "parsed", "raw", "read_bytes")

Event = dict[str, Raw]
"""An event as mutate holds it: member name -> the member's JSON text."""

MAX_TRACE_BYTES = 64 * 1024 * 1024
"""The largest trace mutate reads: every mutant is a copy of it (check streams; mutate cannot)."""

T = TypeVar("T")

MISSING: Any = object()
"""The value of a member an event does not have."""

_events = msgspec.json.Decoder(Event).decode
_array = msgspec.json.Decoder(list[Event]).decode
_exact = msgspec.json.Decoder(float_hook=Decimal).decode
_encode = msgspec.json.Encoder(decimal_format="number").encode


class Original(NamedTuple):
    """The trace given to mutate: its bytes (hashed in the report), its events, the `seq` each
    was written with (mutant ids use it) and the physical line of each (SARIF points at it)."""

    label: str
    data: bytes
    events: list[Event]
    seqs: list[str]
    lines: list[int | None]
    lengths: dict[int, int]
    """The length of each event's line in UTF-16 code units (SARIF regions end there), by line."""


def read_bytes(path: str, label: str) -> bytes:
    """The bytes of the trace at `path` (`-`: standard input), at most `MAX_TRACE_BYTES`."""
    problem = named_file_problem(path)   # (the report names it)
    if problem is not None:
        raise TraceError(label, None, problem)
    try:
        data = read_at_most(0 if path == "-" else path, MAX_TRACE_BYTES + 1)
    except OSError as exc:
        raise TraceError(label, None, file_problem(exc, "trace")) from None
    if len(data) > MAX_TRACE_BYTES:
        raise TraceError(label, None, f"over {MAX_TRACE_BYTES // (1024 * 1024)} MiB: mutate copies the whole "
                                      "trace into every mutant, so it takes traces up to that size")
    return data


def parse_events(data: bytes, lines: Sequence[int | None], label: str) -> list[Event]:
    """The events of a trace that `check` has read without a problem, at the `lines` it found
    them on: each JSON Lines event is decoded from its own line, an array trace as a whole."""
    start = first_significant(data, final=True)
    try:
        if start is not None and data[start:start + 1] == b"[":
            return [_one_line(event) for event in _mended(_array, data[start:])]
        physical = data.split(b"\n")
        return [_mended(_events, js_trim(physical[line - 1].decode("utf-8")).encode("utf-8"))
                for line in _known(lines)]
    except (msgspec.DecodeError, UnicodeDecodeError, IndexError) as exc:   # check read it: cannot happen
        raise TraceError(label, None, f"cannot be read again for mutation: {exc}") from None


def _one_line(event: Event) -> Event:
    """An event of an array trace, each member's text on one line, as JSON Lines need it: a value
    written over several lines (`json.dump(events, indent=2)`) has line breaks only between its
    tokens (JSON strings hold none), so dropping them changes no value, and other members go back
    out as written."""
    for name, value in event.items():
        text = bytes(memoryview(value))
        if b"\n" in text or b"\r" in text:
            event[name] = Raw(text.replace(b"\r", b"").replace(b"\n", b""))
    return event


def parsed(label: str, data: bytes, lines: list[int | None], lengths: dict[int, int]) -> Original:
    """The `Original` of a trace that `check` read without a problem, its events on `lines`."""
    events = parse_events(data, lines, label)
    if len(events) != len(lines):   # check read them: cannot happen
        raise TraceError(label, None, f"read {len(events)} events for mutation where check read {len(lines)}")
    return Original(label, data, events, [_seq(member(event, "seq")) for event in events], lines, lengths)


def _seq(value: Any) -> str:
    """A seq as mutant ids write it: as JavaScript writes the number (`3.0` is `3`, `1e300` is `1e+300`)."""
    return js_number(value) if value.__class__ in (int, float) else "0"


def _known(lines: Sequence[int | None]) -> Iterable[int]:
    for line in lines:
        if line is None:
            raise IndexError("an event has no line")
        yield line


def _mended(decode: Callable[[bytes], T], text: bytes) -> T:
    """`decode(text)`, or, when it holds a lone surrogate escape msgspec refuses, the text with
    them replaced, as the reader reads them."""
    try:
        return decode(text)
    except msgspec.DecodeError:
        return decode(replace_lone_surrogates(text))


def member(event: Event, name: str) -> Any:
    """The decoded value of a member (shared: do not change it), or MISSING."""
    found = event.get(name)
    return MISSING if found is None else decoded(found)


def fresh(value: Raw) -> Any:
    """A member's value decoded anew, free to change; its numbers with a fraction or an exponent
    are `Decimal`s, so that each goes back out as written (`1e400` too, which no double holds),
    and so are integers too long for Python to read (over `MAX_DIGITS` digits)."""
    try:
        return _exact(value)
    except msgspec.ValidationError:   # such an integer: msgspec refuses it
        return json.loads(bytes(memoryview(value)), parse_float=Decimal, parse_int=_wide_int)


def _wide_int(text: str) -> int | Decimal:
    return int(text) if len(text.lstrip("-")) <= MAX_DIGITS else Decimal(text)


def raw(value: Any) -> Raw:
    """The JSON text of a value, as a member (a `Decimal` written as the number it is)."""
    return Raw(_encode(value))


def as_jsonl(events: Iterable[Event]) -> bytes:
    """The events as JSON Lines."""
    return b"".join(_encode(event) + b"\n" for event in events)


def as_json_array(events: Iterable[Event]) -> bytes:
    """The events as one JSON array, an event a line."""
    return b"[\n" + b",\n".join(_encode(event) for event in events) + b"\n]\n"
