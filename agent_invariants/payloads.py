"""The fields of contract version 2 on an event, type-checked and decoded on demand.

    {"seq": 3, "type": "tool.call", "tool": "refund", "call_id": "c2", "args": {"order": "A9"}}

The reader keeps `args`, `result`, `output`, `duration_ms`, `status`, `approver` and `reason` as
raw JSON (`msgspec.Raw`, spec/v2-extensions.md §1): a version-1 check never looks at them and pays
nothing for them, and a result of a megabyte is only decoded if some rule reads it. Under a
version-2 contract the engine runs `FieldTypes` on each batch first, which checks each of these
fields on every event that carries it (§10, point 16): `args` an object; `duration_ms` a finite number >= 0;
`status` 1..100 characters; `approver` and `reason` 1..500; `result` and `output` any JSON, null
included; null for none of the others. A problem stops the check with `file:line: $.field: ...`.

`decoded(raw)` is the one way rules read a payload: the value is decoded once per event, however
many rules ask one after the other (the last one is remembered), and must not be changed by its reader.
"""
from __future__ import annotations

import math
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Raw, UnsetType

from agent_invariants._js import utf16_len
from agent_invariants.errors import TraceError
from agent_invariants.events import Event, JsonObject
from agent_invariants.match.equality import as_double
from agent_invariants.validation import json_type

__all__ = ("FieldTypes", "decoded", "field_problem", "text")

_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode
_objects = msgspec.json.Decoder(list[JsonObject]).decode
_durations = msgspec.json.Decoder(list[Annotated[float, msgspec.Meta(ge=0)]]).decode
_last: tuple[Raw | None, Any] = (None, None)
"""The payload decoded last and its value: the rules that read a field of an event read it one
after the other. (One tuple, replaced whole, so that a reader in another thread sees a pair.)
Holding the payload keeps it alive, so the identity test cannot meet a reused address."""

_TEXT_LIMITS = (("status", 100), ("approver", 500), ("reason", 500))


def decoded(raw: Raw) -> Any:
    """The JSON value of a raw payload, decoded once however many rules read it."""
    global _last
    last = _last
    if last[0] is raw:
        return last[1]
    try:
        value = _decode(raw)
    except msgspec.ValidationError:   # a number beyond any double: read as JavaScript reads it
        value = _decode_wide(raw)
    _last = (raw, value)
    return value


def _decode_wide(raw: Raw) -> Any:
    """JSON whose numbers msgspec refuses (`1e400`, an integer of 5,000 digits): those beyond the
    largest double are the infinities JavaScript reads them as, the others exact."""
    import json  # (here: the json module is not needed at start-up)

    return json.loads(bytes(memoryview(raw)), parse_int=_wide_int, parse_float=float)


def _wide_int(text: str) -> int | float:
    if len(text) <= 4000:   # Python reads up to 4,300 digits; json_number rounds it as JavaScript does
        return int(text)
    return float("-inf") if text.startswith("-") else float("inf")


def text(raw: Raw | UnsetType) -> str | None:
    """A text field (`status`, `reason`, `approver`) as a string, or None when the event has none
    (or, in a version-1 check, holds something else there)."""
    if raw is UNSET:
        return None
    value = decoded(raw)
    return value if isinstance(value, str) else None




def field_problem(event: Event) -> str | None:
    """What is wrong with the version-2 fields of an event (`$.field: ...`), or None."""
    if event.args is not UNSET and memoryview(event.args)[0] != 123:   # an object starts with `{`
        return f"$.args: expected an object, got {_kind_of(event.args)}"
    if event.duration_ms is not UNSET:
        value = decoded(event.duration_ms)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"$.duration_ms: expected a number of milliseconds >= 0, got {json_type(value)}"
        if isinstance(value, int) and not math.isfinite(as_double(value)):
            return "$.duration_ms: expected a finite number >= 0, got a number too large for a double"
        if not math.isfinite(value) or value < 0:
            return f"$.duration_ms: expected a finite number >= 0, got {value!r}"
    for name, limit in _TEXT_LIMITS:
        raw = getattr(event, name)
        if raw is UNSET:
            continue
        value = decoded(raw)
        if not isinstance(value, str):
            return f"$.{name}: expected a string of 1..{limit} characters, got {json_type(value)}"
        if not value or utf16_len(value) > limit:   # (as version 1 counts its text fields, as JavaScript does)
            return f"$.{name}: must be 1..{limit} characters (UTF-16 units) long, got {utf16_len(value)}"
    return None


def _all_objects(values: list[Raw]) -> bool:
    """Whether every raw JSON value surely is an object, told from their first bytes in two scans
    of their text joined by NUL bytes (msgspec keeps no blank before a value, and JSON text holds
    no NUL byte: should one be there, the answer is no, and the caller looks closer)."""
    joined = b"\0".join(values)
    separators = len(values) - 1
    return joined[:1] == b"{" and joined.count(b"\0") == separators and joined.count(b"\0{") == separators


def _kind_of(raw: Raw) -> str:
    """What a raw JSON value is, from its first byte (no need to decode it to say so)."""
    return {ord("["): "an array", ord('"'): "a string", ord("t"): "a boolean", ord("f"): "a boolean",
            ord("n"): "null", ord("{"): "an object"}.get(memoryview(raw)[0], "a number")


class FieldTypes:
    """The engine's check of each batch of events under a version-2 contract: refuses an event
    whose version-2 fields have the wrong type, naming the trace and the line.

    Most events carry `args` (calls) or nothing of these fields, and many results a
    `duration_ms`: those fields of a whole batch are checked at once, the args by their first
    bytes (`_all_objects`), and where that is not enough by msgspec in C, as are the durations (the
    raw values joined in a JSON array, decoded as objects or as numbers >= 0). Events with the rare
    text fields, and every event of a batch where something fails, go through `field_problem`,
    which says what is wrong."""

    __slots__ = ("_source",)

    def __init__(self, source: Any) -> None:
        self._source = source

    def check(self, batch: list[Event], first: int) -> None:
        # A present field is a Raw, never empty, so true; an absent one is UNSET, which is false.
        # Every event of the trace passes here, and the rare fields of most events are absent:
        # four identity tests with the global UNSET cost less than four truth tests.
        try:
            args = [event.args for event in batch if event.args]
            if args and not _all_objects(args):
                _objects(_encode(args))
            rare = [event for event in batch if event.duration_ms is not UNSET or event.status is not UNSET
                    or event.approver is not UNSET or event.reason is not UNSET]
            if not rare:
                return
            durations = [event.duration_ms for event in rare if event.duration_ms is not UNSET]
            if durations:
                _durations(_encode(durations))
        except msgspec.ValidationError:
            self._one_by_one(batch, first)
            return
        texts = [event for event in rare if event.status is not UNSET or event.approver is not UNSET
                 or event.reason is not UNSET]
        for event in texts:
            if field_problem(event) is not None:
                self._one_by_one(batch, first)

    def _one_by_one(self, batch: list[Event], first: int) -> None:
        """The exact check, event by event (it decides, should the two ever differ)."""
        for offset, event in enumerate(batch):
            problem = field_problem(event)
            if problem is not None:
                self._fail(first + offset, problem)

    def _fail(self, index: int, problem: str) -> None:
        line = self._source.line_of(index)
        name = self._source.name if line is not None or self._source.path is not None \
            else f"{self._source.name}[{index}]"
        raise TraceError(name, line, problem)
