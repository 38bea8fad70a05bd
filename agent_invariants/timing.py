"""Event times as numbers: microseconds since 1970-01-01T00:00:00Z, and the milliseconds between
two times, for the rules of contract version 2 that measure time (approval ages, latencies, run
durations).

An event's `time` has been validated by then (`events.time_ok`): `YYYY-MM-DDTHH:MM`, optional
`:SS` and fraction, then `Z` or an offset `+HH:MM` / `+HHMM`. The fraction is truncated to
microseconds (spec v2 §3.6); the year 0000 is a year like any other. The validator, like the
reference's, does not bound the offset's digits. An offset is its hours and minutes added up, so
`+05:99` is 6 hours 39 minutes; one of 24 hours or more (`+24:00`, `+23:60`) names no instant
(spec v2 §3.6 and §10, point 23), and such a time has no number (None), which the rules report
as an unresolved duration.

    >>> epoch_us("1970-01-01T01:00:00.5+01:00")
    500000
    >>> elapsed_ms("2026-01-01T10:00:00Z", "2026-01-01T10:00:02.0009999Z")   # truncated to microseconds
    2000.999
    >>> epoch_us("2026-01-01T00:00:00+24:00") is None
    True
    >>> epoch_us("1970-01-01T01:00:00+00:60")   # 60 minutes: an hour
    0
"""
from __future__ import annotations

import datetime
import re

from msgspec import UNSET, Raw, UnsetType

from agent_invariants.payloads import decoded

__all__ = ("elapsed_ms", "epoch_us", "step_ms")

_from_iso = datetime.datetime.fromisoformat
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_MICROSECOND = datetime.timedelta(microseconds=1)

_STAMP = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(?:Z|([+-])(\d{2}):?(\d{2}))\Z")


def epoch_us(text: str) -> int | None:
    """Microseconds since the Unix epoch of a validated `time`, or None when its offset is 24
    hours or more (ValueError for text that is no event time). An integer: a float of
    milliseconds since 1970 cannot hold every microsecond."""
    try:   # the C parser takes every validated time but the year 0000 and offsets of 24 hours or more
        return (_from_iso(text) - _EPOCH) // _MICROSECOND
    except ValueError:
        pass
    found = _STAMP.match(text)
    if found is None:
        raise ValueError(f"not an event time: {text!r}")
    year, month, day, hour, minute, second, fraction, sign, off_hours, off_minutes = found.groups()
    seconds = (_days_from_civil(int(year), int(month), int(day)) * 86_400 + int(hour) * 3_600
               + int(minute) * 60 + int(second or 0))
    if sign is not None:
        offset = int(off_hours) * 3_600 + int(off_minutes) * 60
        if offset >= 86_400:
            return None
        seconds += -offset if sign == "+" else offset
    return seconds * 1_000_000 + (int(fraction[:6].ljust(6, "0")) if fraction else 0)


def elapsed_ms(start: str, end: str) -> float | None:
    """Milliseconds from one validated time to another (negative when `end` comes first), or None
    when either names no instant."""
    if start[-1] == "Z" and end[-1] == "Z":   # the usual case: the C parser, one subtraction
        try:
            return ((_from_iso(end) - _from_iso(start)) // _MICROSECOND) / 1_000
        except ValueError:
            pass   # the year 0000
    began, ended = epoch_us(start), epoch_us(end)
    if began is None or ended is None:
        return None
    return (ended - began) / 1_000


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 to this date of the proleptic Gregorian calendar (any year, 0 too)."""
    year -= month <= 2
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146_097 + day_of_era - 719_468


def step_ms(duration_ms: Raw | UnsetType, start: str | UnsetType, end: str | UnsetType) -> tuple[float | None, str]:
    """How long a step took (a call, a run), in milliseconds: the `duration_ms` its last event
    carries, else the time between its first and last events; with where that came from
    (`duration_ms` or `time`), or None with why there is none."""
    if duration_ms is not UNSET:
        return float(decoded(duration_ms)), "duration_ms"
    if start is UNSET or end is UNSET:
        return None, f"no time at the {'start' if start is UNSET else 'end'}"
    elapsed = elapsed_ms(start, end)
    if elapsed is None:
        return None, "a time whose offset names no instant"
    if elapsed < 0:
        return None, "an end before the start"
    return elapsed, "time"
