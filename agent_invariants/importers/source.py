"""An imported run as a trace the engine reads: events validated as a native trace's are, each
located at the source record it came from."""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from agent_invariants.importers import ImportedRun
from agent_invariants.importers.records import SourceFile
from agent_invariants.reader import EventList

__all__ = ("ImportedTrace",)


class ImportedTrace(EventList):
    """The events of one imported run. Messages and reports name the source file, and the line
    of an event is the line of its record there (SARIF points into the source file)."""

    def __init__(self, file: SourceFile, run: ImportedRun) -> None:
        self._lines: list[int | None] = []
        super().__init__(self._noting_lines(run), name=file.name)
        self.path = file.path if file.path not in (None, "-") else None
        self.run_id = run.run_id

    def _noting_lines(self, run: ImportedRun) -> Iterator[dict[str, Any]]:
        """The run's events, written out as they are read (the run is not held twice), each line
        noted for `lines_of`."""
        for event, line in run.emitted():
            self._lines.append(line)
            yield event

    def lines_of(self, indices: Iterable[int]) -> dict[int, int]:
        found = {}
        for index in indices:
            line = self._lines[index] if 0 <= index < len(self._lines) else None
            if line is not None:
                found[index] = line
        return found
