"""An imported run as a trace the engine reads: events validated as a native trace's are, each
located at the source record it came from."""
from __future__ import annotations

from collections.abc import Iterable

from agent_invariants.importers import ImportedRun
from agent_invariants.importers.records import SourceFile
from agent_invariants.reader import EventList

__all__ = ("ImportedTrace",)


class ImportedTrace(EventList):
    """The events of one imported run. Messages and reports name the source file, and the line
    of an event is the line of its record there (SARIF points into the source file)."""

    def __init__(self, file: SourceFile, run: ImportedRun) -> None:
        super().__init__([event for event, _ in run.events], name=file.name)
        self.path = file.path if file.path not in (None, "-") else None
        self.run_id = run.run_id
        self._lines = [line for _, line in run.events]

    def lines_of(self, indices: Iterable[int]) -> dict[int, int]:
        found = {}
        for index in indices:
            line = self._lines[index] if 0 <= index < len(self._lines) else None
            if line is not None:
                found[index] = line
        return found
