"""What one read of a trace file keeps, shared by the JSONL reader and the JSON-array reader.

A `ReadState` is made for each read: it holds where the events are (`LineMap`), the event types
already found valid (so that the fast path can skip validating them), and it turns a problem into
the `TraceError` that names the trace and the line.
"""
from __future__ import annotations

from typing import cast

from msgspec import UNSET, Raw

from agent_invariants.errors import RAISE_LINE_LIMIT, TraceError
from agent_invariants.events import Event, accept, time_ok, time_problem, times_ok
from agent_invariants.linemap import LineMap
from agent_invariants.notices import FieldSample

__all__ = ("ReadState",)

_MAX_CLEAN_TYPES = 10_000   # a trace of ever new types stops adding them; those go the slow way


class ReadState:
    """One read of a trace: its name in messages, its line limit, its lines, its clean types."""

    def __init__(self, name: str, max_line_bytes: int, lines: LineMap) -> None:
        self.name = name
        self.max_line_bytes = max_line_bytes
        self.lines = lines
        self.keep_lengths = lines.keeps_lengths
        # event types already seen valid and trimmed: the fast path needs no `accept` for them
        self.clean_types: set[str] = set()
        # the field names of the first events, for the misspelt-field notices
        self.fields = FieldSample()

    def fail(self, line: int | None, problem: str) -> TraceError:
        return TraceError(self.name, line, problem)

    def too_long(self, size: int, at_least: bool = False) -> str:
        """The problem of a line (or item) of `size` bytes, over the limit."""
        more = "at least " if at_least else ""
        return f"line is {more}{size:,} bytes, over the {self.max_line_bytes:,}-byte limit {RAISE_LINE_LIMIT}"

    def accept(self, event: Event, raw: bytes | Raw | None, prev: int | float) -> int | float:
        """Full validation of one event (`events.accept`, which raises `InvalidEvent`); a type
        it leaves as it was is clean from then on."""
        raw_type = event.type
        prev = accept(event, raw, prev)
        if raw_type == event.type and len(self.clean_types) < _MAX_CLEAN_TYPES:
            self.clean_types.add(raw_type)
        return prev

    def check_times(self, batch: list[Event], done: int) -> None:
        """Validate every time stamp of a batch at once (`done` events came before it); find the
        culprit only on failure."""
        times = [event.time for event in batch]
        try:
            ok = times_ok(cast(list[str], times))   # cast: an UNSET among them raises TypeError
        except TypeError:   # some events have no time, and UNSET is no JSON value: leave them out
            stamps = [time for time in times if time is not UNSET]
            ok = not stamps or times_ok(stamps)
        if not ok:
            for index, event in enumerate(batch, done):
                if event.time is not UNSET and not time_ok(event.time):
                    raise self.fail(self.lines.lines([index]).get(index), time_problem(event.time))
