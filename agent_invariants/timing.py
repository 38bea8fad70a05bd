"""Event times as numbers: milliseconds since 1970-01-01T00:00:00Z, for the rules of contract
version 2 that measure time (approval ages, latencies, run durations).

An event's `time` has been validated by then (`events.time_ok`): `YYYY-MM-DDTHH:MM`, optional
`:SS` and fraction, then `Z` or an offset `+HH:MM` / `+HHMM`. The conversion is exact to the
millisecond and takes every stamp the validator does, including the year 0000 and offsets that
`datetime` refuses (`+24:00`), which `datetime.fromisoformat` would not.

    >>> epoch_ms("1970-01-01T01:00:00.5+01:00")
    500.0
"""
from __future__ import annotations

import re

__all__ = ("epoch_ms",)

_STAMP = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(?:Z|([+-])(\d{2}):?(\d{2}))\Z")


def epoch_ms(text: str) -> float:
    """Milliseconds since the Unix epoch of a validated `time` (ValueError for anything else)."""
    found = _STAMP.match(text)
    if found is None:
        raise ValueError(f"not an event time: {text!r}")
    year, month, day, hour, minute, second, fraction, sign, off_hours, off_minutes = found.groups()
    seconds = (_days_from_civil(int(year), int(month), int(day)) * 86_400 + int(hour) * 3_600
               + int(minute) * 60 + int(second or 0))
    if sign is not None:
        offset = int(off_hours) * 3_600 + int(off_minutes) * 60
        seconds += -offset if sign == "+" else offset
    milliseconds = float(seconds * 1_000)
    if fraction:
        milliseconds += int(fraction[:9].ljust(9, "0")) / 1_000_000
    return milliseconds


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 to this date of the proleptic Gregorian calendar (any year, 0 too)."""
    year -= month <= 2
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146_097 + day_of_era - 719_468
