"""An imported run as a trace the engine reads: events validated as a native trace's are, each
located at the source record it came from."""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from agent_invariants.errors import TraceError
from agent_invariants.events import Event
from agent_invariants.importers import ImportedRun
from agent_invariants.importers.records import SourceFile, line_lengths, rereadable
from agent_invariants.reader import EventList

__all__ = ("ImportedTrace", "checked_jsonl")


class ImportedTrace(EventList):
    """The events of one imported run. Messages and reports name the source file, and the line
    of an event is the line of its record there (SARIF points into the source file)."""

    def __init__(self, file: SourceFile, run: ImportedRun, *, line_lengths: bool = False,
                 max_line_bytes: int = 1 << 20) -> None:
        self._lines: list[int | None] = []
        self._spans: list[str | None] = []
        super().__init__(self._noting_lines(run), name=file.name)
        self.path = file.path if file.path not in (None, "-") else None
        self.run_id = run.run_id
        self._file, self._line_lengths, self._max_line_bytes = file, line_lengths, max_line_bytes

    def _noting_lines(self, run: ImportedRun) -> Iterator[dict[str, Any]]:
        """The run's events, written out as they are read (the run is not held twice), each line
        and span noted for `lines_of` and `spans_of`."""
        for event, line in run.emitted():
            self._lines.append(line)
            self._spans.append(event["data"]["source"].get("span_id"))
            yield event

    def _where(self, index: int) -> tuple[str, int | None]:
        """An event the checker refuses is named by the record it came from: the mapping made
        from it something a trace may not hold (a tool name over 500 characters, say)."""
        line = self._lines[index] if index < len(self._lines) else None
        return self.name, line

    def spans_of(self, indices: Iterable[int]) -> dict[int, str]:
        found = {}
        for index in indices:
            span = self._spans[index] if 0 <= index < len(self._spans) else None
            if span is not None:
                found[index] = span
        return found

    def line_lengths_of(self, indices: Iterable[int]) -> dict[int, int]:
        """With `line_lengths` (SARIF regions end at the end of the line): the length of the
        source line of each event asked for, read again from the file for those lines only."""
        if not self._line_lengths or not rereadable(self._file):
            return {}
        lines = self.lines_of(indices)
        lengths = line_lengths(self._file, set(lines.values()), self._max_line_bytes)
        return {index: lengths[line] for index, line in lines.items() if line in lengths}

    def lines_of(self, indices: Iterable[int]) -> dict[int, int]:
        found = {}
        for index in indices:
            line = self._lines[index] if 0 <= index < len(self._lines) else None
            if line is not None:
                found[index] = line
        return found


def checked_jsonl(run: ImportedRun) -> Iterator[bytes]:
    """The run's events as `convert` writes them (JSON, no newline), each validated as `check`
    will read it, version-2 fields included: a problem is a TraceError at the line of the source
    record (the mapping made from it something a trace may not hold: a tool name over 500
    characters, say). Each event is encoded once, and those bytes are what is checked."""
    import msgspec

    from agent_invariants.events import InvalidEvent, accept, decode_lax_event
    from agent_invariants.jsontext import decode_problem
    from agent_invariants.payloads import field_problem

    encode = msgspec.json.encode
    prev: int | float = -1
    for event, line in run.emitted():
        raw = encode(event)
        try:
            decoded = decode_lax_event(raw)
            prev = accept(decoded, raw, prev)
            problem = field_problem(decoded)
        except (msgspec.DecodeError, RecursionError) as exc:
            problem = decode_problem(exc, Event)
        except InvalidEvent as exc:
            problem = str(exc)
        if problem is not None:
            raise TraceError(run.file.name, line, problem)
        yield raw
