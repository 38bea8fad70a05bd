"""What an importer is given and gives back: the `Context` of one import, and its `Run`s.

An importer reads records and yields one `Run` per run it finds (an OpenTelemetry trace, an Agents
SDK trace, a LangSmith root run, an MCP session). The context tells it which runs are wanted, so
that it keeps the records of those only (memory per run, not per file), and counts what it skips.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import chain
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from agent_invariants.errors import TraceError
from agent_invariants.importers.records import MAX_RUNS, too_many_runs

if TYPE_CHECKING:
    from agent_invariants.importers.common import Timeline
    from agent_invariants.importers.profile import Profile
    from agent_invariants.importers.records import SourceFile

__all__ = ("ALL_RUNS", "MAX_TRACE_RECORDS", "Context", "ImportedRun", "Runs", "add_record", "in_file_order",
           "new_list", "one_run")

ALL_RUNS = "all"
"""`--run all`: every run of the input."""

MAX_TRACE_RECORDS = 1_000_000
"""The most records (spans, runs) one trace may hold: a trace is built only once its last record
is read, so its records wait in memory, and an endless input must stop while it is read. The
runs open at once hold at most as many records between them."""


def add_record(records: list[Any], record: Any, context: Context, line: int, trace_id: str, noun: str) -> None:
    """Add a record of a trace, refusing the one past `MAX_TRACE_RECORDS` at its line."""
    if len(records) >= MAX_TRACE_RECORDS:
        raise TraceError(context.file, line, f"trace {trace_id} holds more than {MAX_TRACE_RECORDS:,} {noun}, the most "
                                             "an import holds; convert it in parts")
    records.append(record)


class ImportedRun:
    """One run read from the input: its id, its file, the line of its first record (runs are
    handed out as they end; a batch lists them in the order they begin), and its events with the
    source line of each, written out when asked for (`emitted()`, once per pass; `events` holds
    them all, for small runs)."""

    __slots__ = ("_timeline", "file", "first_line", "run_id")

    def __init__(self, run_id: str, timeline: Timeline, file: SourceFile, first_line: int = 0) -> None:
        self.run_id, self._timeline, self.file, self.first_line = run_id, timeline, file, first_line

    def __len__(self) -> int:
        return len(self._timeline)

    def emitted(self) -> Iterator[tuple[dict[str, Any], int | None]]:
        """The events in order, each with the line of its source record (payloads as JSON text:
        `Timeline.events`)."""
        return iter(self._timeline.events())

    @property
    def events(self) -> list[tuple[dict[str, Any], int | None]]:
        """The events as plain values: the JSON text a payload waits as (`Timeline`) parsed."""
        import msgspec

        decode = msgspec.json.decode
        return [({key: decode(value) if value.__class__ is msgspec.Raw else value for key, value in event.items()},
                 line) for event, line in self.emitted()]


class Context:
    """One import: the file (`file` is its name as given, which goes into `data.source`), the
    profile, the run wanted (None: whichever there is; `all`; or an id), and what was skipped."""

    def __init__(self, source: SourceFile, profile: Profile | None = None, run: str | None = None,
                 last_lines: dict[str, int] | None = None) -> None:
        self.source, self.file, self.profile, self.run = source, source.name, profile, run
        self.skipped = 0
        self.skipped_logs = 0   # of which log records (OpenTelemetry's: the message of a file of them says so)
        self.other_runs: dict[str, None] = {}   # (a set in the order first seen)
        self.began: dict[str, int] = {}   # the line of the first record of each run being read
        self.hoist_elicitation = bool(profile is not None and profile.hoist_elicitation)
        self.ending: dict[int, set[str]] = {}
        """Line -> the runs whose last record is on it (from a first pass over a file; empty for
        a pipe, whose runs all end with the input)."""
        for run_id, line in (last_lines or {}).items():
            self.ending.setdefault(line, set()).add(run_id)

    def wants(self, run_id: str) -> bool:
        """Whether the records of this run are to be kept."""
        return self.run is None or self.run == ALL_RUNS or self.run == run_id

    def seen(self, run_id: str) -> None:
        """A run that is not wanted: its id is remembered, for the message if the wanted one is
        missing (at most 1,000 ids)."""
        if len(self.other_runs) < 1000:
            self.other_runs[run_id] = None

    def skip(self, count: int = 1, *, logs: bool = False) -> None:
        """A record of a kind the format's mapping does not use (`logs`: log records)."""
        self.skipped += count
        if logs:
            self.skipped_logs += count

    def finished(self, run_id: str, timeline: Timeline) -> ImportedRun:
        """A run an importer has read whole."""
        return ImportedRun(run_id, timeline, self.source, self.began.pop(run_id, 0))


Item = TypeVar("Item")


class Runs(Generic[Item]):
    """What an importer holds of the runs it is reading (a list of spans, a session…), each let
    go as soon as its last record has been read (`Context.ending`), or at the end of the input."""

    def __init__(self, context: Context, make: Callable[[str], Item]) -> None:
        self.context, self.make = context, make
        self.open: dict[str, Item] = {}
        self.done: set[str] = set()
        self.held: dict[str, int] = {}   # the records of each open run
        self.holding = 0   # theirs together

    def get(self, run_id: str, line: int) -> Item:
        """The run's item, made (by `make(run_id)`) on its first record. The run past `MAX_RUNS`,
        and a record past `MAX_TRACE_RECORDS` of several runs open together (a pipe's runs all
        end with it), are errors at their line (one run's own bound is its importer's)."""
        found = self.open.get(run_id)
        if found is None:
            if run_id in self.done:
                raise TraceError(self.context.file, line, f"a record of run {run_id!r} comes after the line its "
                                 "records were taken to end on (its id is written in a way that cannot be found "
                                 "quickly); read the file through a pipe to take it whole")
            if len(self.done) + len(self.open) >= MAX_RUNS:
                raise too_many_runs(self.context.file, line)
            found = self.open[run_id] = self.make(run_id)
            self.held[run_id] = 0
            self.context.began.setdefault(run_id, line)   # (a record that holds no item may have begun it)
        self.held[run_id] += 1
        self.holding += 1
        if self.holding > MAX_TRACE_RECORDS and len(self.open) > 1:
            raise TraceError(self.context.file, line, f"the {len(self.open):,} runs not yet ended here hold more "
                             f"than {MAX_TRACE_RECORDS:,} records between them, the most an import holds; convert "
                             "the input in parts")
        return found

    def _close(self, run_id: str) -> Item:
        self.done.add(run_id)
        self.holding -= self.held.pop(run_id)
        return self.open.pop(run_id)

    def ended(self, line: int) -> Iterator[tuple[str, Item]]:
        """The runs whose last record is on `line`, taken out in the order they began."""
        ending = self.context.ending.get(line)
        if not ending:
            return
        for run_id in [run_id for run_id in self.open if run_id in ending]:
            yield run_id, self._close(run_id)

    def __bool__(self) -> bool:
        return bool(self.open)

    def rest(self) -> Iterator[tuple[str, Item]]:
        """The runs still open at the end of the input, in the order they began."""
        while self.open:
            run_id = next(iter(self.open))
            yield run_id, self._close(run_id)


def new_list(run_id: str) -> list[Any]:
    """What `Runs` makes for a run whose records are kept in a list."""
    return []


def one_run(runs: Iterator[ImportedRun], where: str, choose: str) -> ImportedRun:
    """The only run of `runs`; none, or several (their ids listed, then how to `choose`), is a
    TraceError naming `where`."""
    first = next(runs, None)
    if first is None:
        raise TraceError(where, None, "holds no run (is the format the one it was written in?)")
    second = next(runs, None)
    if second is None:
        return first
    files: dict[str, int] = {}   # the inputs in the order given: a file's runs come after the runs of those before
    ids = in_file_order([((files.setdefault(found.file.name, len(files)), found.first_line), found.run_id)
                         for found in chain((first, second), runs)])
    shown = ", ".join(ids[:20]) + (", …" if len(ids) > 20 else "")
    raise TraceError(where, None, f"holds {len(ids)} runs ({shown}); {choose}")


Made = TypeVar("Made")


def in_file_order(made: list[tuple[Any, Made]]) -> list[Made]:
    """What was made of each run, given with the run's `first_line` (or, across files, the file's
    place and that line), in the order the runs begin in the file: an importer hands a run out as
    soon as its last record is read, so a run that began first may come later (one run is held at
    a time; what is made of it is kept)."""
    return [item for _, item in sorted(made, key=lambda pair: pair[0])]
