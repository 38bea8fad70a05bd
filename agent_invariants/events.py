"""Trace events: the `Event` struct, and the checks contract v1 makes beyond its types.

    {"seq": 1, "type": "tool.call", "tool": "payments.refund", "call_id": "c1"}

msgspec checks what the struct declares while decoding (types, bounds, enums, lengths in code
points). `accept` checks the rest: `seq` is an integer >= 0 (`3.0` counts) and strictly
increasing; `type` is trimmed and then 1..200 characters; `time`, when present, is an ISO-8601
date-time with a zone; string lengths count UTF-16 code units. `data` must be an object and
`confidence` within 0..1; `null` is never a value. Unknown fields and event types are accepted and
ignored. The fields of contract version 2 (`args`, `result`, `output`, `duration_ms`, `status`,
`approver`, `reason`) are kept raw, unchecked: `payloads` checks and decodes them for version-2
rules. A problem is an `InvalidEvent` naming the field; the reader (`reader`) adds the trace and
the line.
"""
from __future__ import annotations

import datetime
import functools
import re
from collections.abc import Callable
from typing import Annotated, Literal, get_args

import msgspec
from msgspec import UNSET, Meta, Raw, UnsetType

from agent_invariants._js import JS_WHITESPACE, has_surrogate_escape, js_float, json_number, utf16_len

__all__ = (
    "EVIDENCE_CLASSES",
    "VERDICTS",
    "Event",
    "EvidenceClass",
    "InvalidEvent",
    "Verdict",
    "accept",
    "decode_event",
    "decode_last_key_wins",
    "decode_lax_event",
    "time_ok",
    "time_problem",
    "times_ok",
)

Verdict = Literal["satisfied", "violated", "unknown", "retracted"]
EvidenceClass = Literal["externally_observed", "configured_verifier", "manual_attestation", "self_attestation"]
VERDICTS: tuple[str, ...] = get_args(Verdict)
EVIDENCE_CLASSES: tuple[str, ...] = get_args(EvidenceClass)

Str200 = Annotated[str, Meta(min_length=1, max_length=200)]
Str500 = Annotated[str, Meta(min_length=1, max_length=500)]
Str2000 = Annotated[str, Meta(min_length=1, max_length=2000)]

_MAX_SAFE_INTEGER = 2**53


class JsonObject(msgspec.Struct, gc=False):
    """Any JSON object. Decoding checks that the value is an object and skips its content, but
    for the members something reads: `attested_by` (who vouches for an approval, `record`) and
    `fixture_miss` (`record --replay` does not replay a baseline's miss)."""

    attested_by: Raw | UnsetType = UNSET
    """Kept raw; `approval_bound` with `attested_by` reads it (a string, or it matches no glob)."""
    fixture_miss: Raw | UnsetType = UNSET
    """Kept raw; `true` on a result or grant `record` made for a call or request nothing answered."""


class Event(msgspec.Struct, gc=False, omit_defaults=True):
    """One thing the agent did or saw. Absent optional fields are `UNSET` (never `None`)."""

    # A seq written as `3.0` or beyond 2**53 is read by `LaxEvent` and normalised by `accept`.
    seq: Annotated[int, Meta(ge=0, le=2**53)]
    """Position in the run: an integer >= 0 (`3.0` counts as 3), strictly increasing through the
    trace; gaps are fine."""
    type: str
    """What happened, e.g. `tool.call`, `tool.result`, `approval.granted`, `control.stop`; trimmed,
    then 1..200 characters."""
    time: str | UnsetType = UNSET
    """When it happened: an ISO-8601 date-time with a zone, e.g. `2026-03-02T09:14:00Z`; validated,
    not used by v1 rules."""
    run_id: Str500 | UnsetType = UNSET
    """Id of the run; not used by v1 rules."""
    actor: Str500 | UnsetType = UNSET
    """Who acted (agent, user, system); not used by v1 rules."""
    tool: Str500 | UnsetType = UNSET
    """Tool name of a `tool.call` or `tool.result`, e.g. `payments.refund`."""
    call_id: Str500 | UnsetType = UNSET
    """Id linking a `tool.call` to its `tool.result` (tool_result_required)."""
    call_signature: Str2000 | UnsetType = UNSET
    """What makes two calls "the same call" for retry_limit, e.g. `refund:order-42`."""
    risk: Str200 | UnsetType = UNSET
    """Risk label; not used by v1 rules."""
    approval_id: Str500 | UnsetType = UNSET
    """On `approval.granted`: the grant's id; on a `tool.call`: the grant it relies on."""
    approval_scope: Str500 | UnsetType = UNSET
    """On `approval.granted`: what the grant covers, matched against require_approval's `scope`."""
    approved: bool | UnsetType = UNSET
    """On `approval.granted`: `false` means the approval was refused and does not count."""
    ok: bool | UnsetType = UNSET
    """On `tool.result`: `false` means the call failed (counted by event_budget's `max_tool_failures`)."""
    outcome_id: Str500 | UnsetType = UNSET
    """On `outcome.observed`: which outcome was observed, e.g. `refund-visible`."""
    verdict: Verdict | UnsetType = UNSET
    """On `outcome.observed`: whether the outcome was achieved."""
    evidence_class: EvidenceClass | UnsetType = UNSET
    """On `outcome.observed`: how the outcome was observed (the completion rules accept
    `externally_observed` and `configured_verifier` by default)."""
    claims_completion: bool | UnsetType = UNSET
    """`true` when the agent claims, at this event, that the task is done."""
    confidence: Annotated[float, Meta(ge=0, le=1)] | UnsetType = UNSET
    """The agent's confidence in a completion claim, 0..1 (confidence_requires_outcome)."""
    data: JsonObject | UnsetType = UNSET
    """Free-form details: must be an object; not used by v1 rules, so its content is not kept."""
    args: Raw | UnsetType = UNSET
    """Tool arguments, on `tool.call` and approvals (version 2: an object); not used by v1 rules."""
    result: Raw | UnsetType = UNSET
    """Tool result, on `tool.result`: any JSON value, null included; not used by v1 rules."""
    output: Raw | UnsetType = UNSET
    """The run's final output, on `run.completed` (or `run.failed`): any JSON value, null included."""
    duration_ms: Raw | UnsetType = UNSET
    """How long the step took, in milliseconds (version 2: a finite number >= 0); not used by v1 rules."""
    status: Raw | UnsetType = UNSET
    """How the run ended, on `run.completed` / `run.failed` (version 2: a string of 1..100
    characters, e.g. `awaiting_approval`); not used by v1 rules."""
    approver: Raw | UnsetType = UNSET
    """Who approved, on `approval.granted` (version 2: a string of 1..500 characters)."""
    reason: Raw | UnsetType = UNSET
    """Why, on `control.stop`, `run.failed`, `tool.denied`, `approval.revoked` (version 2: a string
    of 1..500 characters), e.g. `user_cancelled`."""


class LaxEvent(Event, gc=False, omit_defaults=True):
    """An Event whose seq may be any JSON number, for the lines the strict decoder refuses
    (`3.0`, `1e300`, negative or fractional values); `accept` then normalises or explains."""

    # Wider than Event.seq on purpose (the strict decoder must refuse what this one reads), so
    # the override is not a subtype; `accept` narrows the value or refuses the event.
    seq: int | float  # type: ignore[assignment]


# Longest allowed value of each length-limited string field, in UTF-16 code units.
_STRING_LIMITS = (
    ("run_id", 500), ("actor", 500), ("tool", 500), ("call_id", 500), ("call_signature", 2000),
    ("risk", 200), ("approval_id", 500), ("approval_scope", 500), ("outcome_id", 500),
)

# zod 3's datetime({offset: true}): YYYY-MM-DDTHH:MM, then optional :SS[.fraction], then Z or
# +-HH[:]MM (offset digits not range-checked); real calendar dates with Gregorian leap years. The
# shape is one regex; whether the date exists is cached per date, since a trace has few of them.
@functools.cache
def _time_patterns() -> tuple[Callable[[str], object], Callable[[str], object]]:
    """The shape of a stamp, and of a real date (compiled when a stamp is first looked at closely)."""
    shape = re.compile(
        r"[0-9]{4}-[0-9]{2}-[0-9]{2}T(?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:\.[0-9]+)?)?"
        r"(?:Z|[+-][0-9]{2}:?[0-9]{2})\Z"
    ).match
    real_date = re.compile(
        r"(?:(?:[0-9][0-9][2468][048]|[0-9][0-9][13579][26]|[0-9][0-9]0[48]|[02468][048]00|[13579][26]00)-02-29"
        r"|[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
        r"|02-(?:0[1-9]|1[0-9]|2[0-8])))\Z"
    ).match
    return shape, real_date


# Whether each date seen exists: a pure function of the text, so one memo serves every reader
# and thread; cleared when it reaches 100,000 dates (a trace holds few).
_DATES: dict[str, bool] = {}
_decode_stamps = msgspec.json.Decoder(list[Annotated[datetime.datetime, Meta(tz=True)]]).decode
_encode_stamps = msgspec.json.Encoder().encode


def times_ok(times: list[str]) -> bool:
    """True if every stamp is valid; False means "check them one by one" (maybe all are fine).

    msgspec parses RFC 3339 in C. On everything it accepts, zod agrees (checked by fuzzing),
    except a lowercase `t` or `z` or a space for the `T`, none of which a valid stamp contains
    (nor does the JSON array holding them, but for an escape such as `\\t`, which is then
    looked at one by one too). Stamps msgspec refuses but zod accepts (no seconds, year 0000,
    offset +24:00) fall back to the exact regex, `time_ok`.
    """
    encoded = _encode_stamps(times)
    if b"t" in encoded or b"z" in encoded or b" " in encoded:
        return all(time_ok(stamp) for stamp in times)
    try:
        _decode_stamps(encoded)
    except msgspec.DecodeError:
        return all(time_ok(stamp) for stamp in times)
    return True


def time_problem(value: str) -> str:
    return f"$.time: expected an ISO-8601 date-time with a zone such as 2025-01-31T08:00:00Z, got {value!r}"


def time_ok(value: str) -> bool:
    """Whether `value` is a date-time zod 3's datetime({offset: true}) accepts."""
    shape, real_date = _time_patterns()
    if shape(value) is None:
        return False
    date = value[:10]
    ok = _DATES.get(date)
    if ok is None:
        if len(_DATES) >= 100_000:
            _DATES.clear()
        ok = _DATES[date] = real_date(date) is not None
    return ok


class InvalidEvent(Exception):
    """An event failed validation; the reader adds where it is."""


decode_event = msgspec.json.Decoder(Event).decode
"""Decode one event strictly: what it refuses goes to `decode_lax_event`, then `accept`."""
decode_lax_event = msgspec.json.Decoder(LaxEvent).decode
"""Decode one event whose seq may be any JSON number; `accept` must then check it."""

def accept(event: Event, raw: bytes | Raw | None, prev: int | float) -> int | float:
    """Validate what msgspec cannot; normalise `seq` and `type` in place; return the seq."""
    seq: int | float = event.seq
    if seq.__class__ is not int or not prev < seq <= _MAX_SAFE_INTEGER:
        seq = _check_seq(seq, prev)
        event.seq = seq  # type: ignore[assignment]   # an integral float past 2**53 stays a float
    kind = event.type
    trimmed = kind.strip(JS_WHITESPACE)
    if trimmed is not kind or not kind or len(kind) > 100:
        if not trimmed:
            raise InvalidEvent("$.type: must not be empty or only whitespace")
        if utf16_len(trimmed) > 200:
            raise InvalidEvent(f"$.type: must be at most 200 characters, got {utf16_len(trimmed)}")
        event.type = trimmed
    if event.time is not UNSET and not time_ok(event.time):
        raise InvalidEvent(time_problem(event.time))
    if raw is None or not raw.isascii() or has_surrogate_escape(raw):
        _check_utf16_lengths(event)
    return seq


def _check_seq(seq: int | float, prev: int | float) -> int | float:
    if seq.__class__ is float and not seq.is_integer():
        raise InvalidEvent(f"$.seq: must be an integer, got {seq!r}")
    try:
        seq = json_number(seq)
    except OverflowError:   # beyond any double: JavaScript reads Infinity, which is no integer
        raise InvalidEvent("$.seq: must be an integer, got a number too large for a double") from None
    if seq < 0:
        raise InvalidEvent(f"$.seq: must be >= 0, got {seq}")
    if not seq > prev:
        raise InvalidEvent(f"$.seq: must be strictly increasing, got {seq} after {prev}")
    # a seq that stays a float (1e300, 1e16) is written wherever a report names it as JSON.stringify
    # writes it (1e+300, 10000000000000000), not as msgspec would
    return js_float(seq) if seq.__class__ is float else seq


def _check_utf16_lengths(event: Event) -> None:
    """msgspec counts code points; contract v1 counts UTF-16 units, so astral text may be too long."""
    for name, limit in _STRING_LIMITS:
        value = getattr(event, name)
        if value is not UNSET and len(value) * 2 > limit and utf16_len(value) > limit:
            raise InvalidEvent(f"$.{name}: must be at most {limit} characters, got {utf16_len(value)}")


def decode_last_key_wins(raw: bytes | Raw) -> Event | None:
    """The event a line holds when a repeated key makes the typed decode fail: JSON.parse, as
    the reference reads traces, keeps the last value of a repeated key and never sees the
    others, while msgspec checks every copy. So `{"tool": 5, "tool": "kb.search"}` is an event
    with tool `kb.search`. None when the line is no JSON object, or still fails without the
    earlier copies (the caller then reports the first decode's problem)."""
    try:
        value = msgspec.json.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return None
    if type(value) is not dict:
        return None
    try:
        return decode_lax_event(msgspec.json.encode(value))
    except (msgspec.DecodeError, RecursionError, OverflowError, TypeError):
        return None

