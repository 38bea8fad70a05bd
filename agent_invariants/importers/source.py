"""An imported run as a trace the engine reads: events validated as a native trace's are, each
located at the source record it came from."""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

from agent_invariants.errors import TraceError
from agent_invariants.importers.records import SourceFile, line_lengths, rereadable
from agent_invariants.importers.run import ImportedRun
from agent_invariants.reader import EventList

__all__ = ("ImportedTrace", "checked_jsonl")


class ImportedTrace(EventList):
    """The events of one imported run. Messages and reports name the source file, and the line
    of an event is the line of its record there (SARIF points into the source file). Records
    that came in memory (the MCP server's `events`) have no file: with `report_lines` False the
    report gives no line, as for events in memory (errors still name the record)."""

    def __init__(self, file: SourceFile, run: ImportedRun, *, line_lengths: bool = False,
                 max_line_bytes: int = 1 << 20, report_lines: bool = True) -> None:
        self._report_lines = report_lines
        self._lines: list[int | None] = []
        self._spans: list[str | None] = []
        super().__init__(self._noting_lines(run), name=file.name)
        self.path = file.path   # (`-` for standard input: reports name it so, as a native trace's)
        self.run_id = run.run_id
        self._file, self._line_lengths, self._max_line_bytes = file, line_lengths, max_line_bytes

    def _noting_lines(self, run: ImportedRun) -> Iterator[dict[str, Any] | bytes]:
        """The run's events, written out as they are read (the run is not held twice), each line
        and span noted for `lines_of` and `spans_of`. An event goes to the reader as the JSON
        text `convert` writes (its payloads wait as text: `Timeline`), unless it holds a lone
        surrogate, which the reader escapes as it does any in-memory event's."""
        import msgspec

        encode = msgspec.json.Encoder().encode
        for event, line in run.emitted():
            self._lines.append(line)
            self._spans.append(event["data"]["source"].get("span_id"))
            try:
                yield encode(event)
            except UnicodeEncodeError:
                yield event

    def _where(self, index: int) -> tuple[str, int | None]:
        """An event the checker refuses is named by the record it came from: the mapping made
        from it something a trace may not hold (a tool name over 500 characters, say)."""
        line = self._lines[index] if index < len(self._lines) else None
        return self.name, line

    def spans_of(self, indices: Iterable[int]) -> dict[int, str]:
        return _known(self._spans, indices)

    def line_lengths_of(self, indices: Iterable[int]) -> dict[int, int]:
        """With `line_lengths` (SARIF regions end at the end of the line): the length of the
        source line of each event asked for, read again from the file for those lines only."""
        if not self._line_lengths or not rereadable(self._file):
            return {}
        lines = self.lines_of(indices)
        lengths = line_lengths(self._file, set(lines.values()), self._max_line_bytes)
        return {index: lengths[line] for index, line in lines.items() if line in lengths}

    def lines_of(self, indices: Iterable[int]) -> dict[int, int]:
        return _known(self._lines, indices) if self._report_lines else {}


Known = TypeVar("Known")


def _known(values: list[Known | None], indices: Iterable[int]) -> dict[int, Known]:
    """The value noted for each index asked for, where one was."""
    found = {}
    for index in indices:
        value = values[index] if 0 <= index < len(values) else None
        if value is not None:
            found[index] = value
    return found


def checked_jsonl(run: ImportedRun) -> bytes:
    """The run's events as `convert` writes them (JSON Lines), each event encoded once and those
    bytes read back by the reader `check` uses, version-2 fields included (so that the output is
    a trace `check` reads, and at the reader's pace). A problem is a TraceError at the line of the
    source record the event came from (the mapping made from it something a trace may not hold:
    a tool name over 500 characters, say)."""
    import msgspec

    from agent_invariants.payloads import FieldTypes
    from agent_invariants.reader import TraceFile

    encode = msgspec.json.encode
    raws: list[bytes] = []
    lines: list[int | None] = []
    for event, line in run.emitted():
        raws.append(encode(event))
        lines.append(line)
    if not raws:
        return b""
    data = b"\n".join(raws) + b"\n"
    longest = max(map(len, raws))
    del raws
    source = TraceFile(data, name=run.file.name, max_line_bytes=longest + 1, sample_fields=False)
    fields = FieldTypes(source)
    count = 0
    try:
        for batch in source.batches():
            fields.check(batch, count)
            count += len(batch)
    except TraceError as exc:   # at a line of `data`: the source line of its event
        line = lines[exc.line - 1] if exc.line is not None and 0 < exc.line <= len(lines) else None
        raise TraceError(run.file.name, line, exc.problem) from None
    return data
