"""The readers' shortcut for ordinary events: a chunk of them decoded and checked in bulk.

Most traces are long runs of ordinary events: one JSON object per line (or per array item),
seq increasing, types seen before, no characters beyond the BMP. For those, msgspec decodes a
whole chunk in one C loop and a few comprehensions check what it cannot. Each function here
returns exactly what the line-by-line path returns, or declines (None), and the caller then
takes that path, which explains or skips whatever is unusual. So the shortcut only has to
recognise the usual case; the fuzzer checks both paths read every input alike.

Time stamps are left to the caller, which checks a whole batch of them at once either way.
"""
from __future__ import annotations

from itertools import islice
from operator import lt

import msgspec

from agent_invariants._js import ASTRAL_LEADS, has_surrogate_escape
from agent_invariants.events import Event, decode_event
from agent_invariants.jsonarray import Stretch
from agent_invariants.jsontext import MAX_NESTING, too_deep_at

__all__ = ("bmp_only", "plain_batch", "plain_stretch")


def plain_batch(lines: list[bytes] | list[msgspec.Raw], prev: int | float, clean_types: set[str]) -> list[Event] | None:
    """The events of a plain chunk's lines when every line is an ordinary event: decoded by
    msgspec in one C loop, seq strictly increasing from `prev`, every type already seen clean.
    None sends the chunk through the line-by-line path, which explains or skips what is unusual
    (a blank line, a comment, a bad event), so this one only has to recognise the usual case."""
    if not lines:
        return None
    try:
        batch = list(map(decode_event, lines))
    except (msgspec.DecodeError, RecursionError):
        return None
    # Comprehensions, not map(attrgetter): the interpreter reads struct fields far faster.
    seqs = [event.seq for event in batch]
    if prev < seqs[0] and all(map(lt, seqs, islice(seqs, 1, None))) and {event.type for event in batch} <= clean_types:
        return batch
    return None


def plain_stretch(stretch: Stretch, prev: int | float, clean_types: set[str]) -> list[Event] | None:
    """The events of a stretch of array items when all are ordinary (see `plain_batch`); None
    sends the items one by one through the reader's item path. msgspec does not look inside
    what it skips (unknown fields, `data`), so the whole region is checked for invalid UTF-8
    and every long item for nesting first."""
    region = stretch.region
    ascii_only = region.isascii()
    if not ascii_only:
        try:
            region.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if not bmp_only(region, ascii_only):
        return None
    if any(too_deep_at(bytes(item)) is not None for item in stretch.items if len(item) > MAX_NESTING):
        return None
    return plain_batch(stretch.items, prev, clean_types)


def bmp_only(data: bytes, ascii_only: bool) -> bool:
    """Whether `data` (valid UTF-8) cannot hold a character beyond the BMP, which counts two
    UTF-16 units while msgspec's lengths count one: no four-byte sequence (lead byte F0..F4) and
    no escape of a surrogate (`\\u00e9`, as Python's json.dumps writes, is fine). Each lead byte
    is looked for with memchr."""
    if not ascii_only and any(lead in data for lead in ASTRAL_LEADS):
        return False
    return not has_surrogate_escape(data)
