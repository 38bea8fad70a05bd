"""Importers: the traces people already have, read as our events (spec/v2-extensions.md §7).

One module per format, each with the same small interface: `FORMAT` (its name), `RUN_IDS` (how a
first pass finds the runs a line names) and `runs(records, context)` (the runs it finds, each a
`Timeline` of events). `common` holds the mapping rules they share, `profile` the convention and
user profiles, `records` the reading of the source file, `sniff` the format a record is of (and a
record of another format refused), `run` what an importer is given and keeps.

    runs = import_runs("spans.otlp.jsonl", "auto")      # ImportedRun: run_id, events [(event, line)]
    report = check_trace(contract, ImportedTrace(SourceFile.of("spans.otlp.jsonl"), runs[0]))
    for run in Stream(SourceFile.of("big.otlp.jsonl"), "otel", run="all"):   # one run at a time
        ...

An imported trace is a `TraceSource` like a native one: every rule, report and location works on
it unchanged, and violations point at the source file and the line of the record each event came
from (`data.source` says which span).
"""
from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from types import ModuleType
from typing import Any, NamedTuple

from agent_invariants import _collector as collector
from agent_invariants.errors import TraceError
from agent_invariants.importers.records import Record, SourceFile, last_lines, read_records, rereadable
from agent_invariants.importers.run import ALL_RUNS, Context, ImportedRun, one_run
from agent_invariants.importers.sniff import format_of, is_native

__all__ = ("ALL_RUNS", "FORMATS", "Imported", "ImportedRun", "Stream", "detect", "import_file", "import_runs",
           "one_run")

FORMATS = ("otel", "openinference", "openai-agents", "langsmith", "mcp-log")
"""The formats `--input-format`, `convert --from` and the MCP tools accept (besides `auto`, and
`native` for our own JSONL)."""


_MODULES = {"otel": "otel", "openinference": "openinference", "openai-agents": "openai_agents",
            "langsmith": "langsmith", "mcp-log": "mcp_log"}


def _module(name: str) -> ModuleType:
    """The module of a format, imported when first used (`--help` and native checks need none)."""
    return importlib.import_module(f"agent_invariants.importers.{_MODULES[name]}")


def detect(value: Any, file: str, line: int) -> str:
    """The format of a first record, or a TraceError listing the formats when none fits."""
    found = format_of(value)
    if found is not None:
        return found
    if is_native(value):
        # (how native traces are written is said too: an importer also reads a record over several lines)
        raise TraceError(file, line, "is a trace of our own events already: read it as native, the default "
                         "input format (not auto), as JSON Lines (one event per line) or one JSON array")
    raise TraceError(file, line, "cannot tell the format of this record (auto); name the input format instead, "
                     f"one of: {', '.join(FORMATS)}")


class Imported(NamedTuple):
    """What one source file held: its runs, the format read, and how many records were skipped
    (of kinds the format's mapping does not use)."""

    runs: list[ImportedRun]
    source_format: str
    skipped: int


def import_runs(source: str | os.PathLike[str] | bytes | SourceFile, source_format: str = "auto", *,
                profile: Any = None, run: str | None = None, max_line_bytes: int = 1 << 20,
                name: str | None = None) -> list[ImportedRun]:
    """The runs of a source file in `source_format` (`auto` sniffs the first record): with `run`
    None every run, else only that one (or `all`). Raises TraceError on bad input."""
    return import_file(source, source_format, profile=profile, run=run, max_line_bytes=max_line_bytes,
                       name=name).runs


def import_file(source: str | os.PathLike[str] | bytes | SourceFile, source_format: str = "auto", *,
                profile: Any = None, run: str | None = None, max_line_bytes: int = 1 << 20,
                name: str | None = None) -> Imported:
    """`import_runs`, with the format found and the count of records skipped."""
    file = source if isinstance(source, SourceFile) else SourceFile.of(source, name)
    stream = Stream(file, source_format, profile=profile, run=run, max_line_bytes=max_line_bytes)
    found = list(stream)
    return Imported(found, stream.source_format, stream.skipped)


class Stream:
    """An import under way: iterate it for its runs, each as soon as its last record has been
    read (a file is first skimmed for the line each run ends on: memory holds the runs open at
    once, not the whole file; from a pipe, runs end with the input). Once it is exhausted,
    `skipped` counts the records of kinds the mapping does not use, `found` the runs given and
    `other_runs` those passed over; `source_format` is known from the first record on. A wanted
    run that is not there is a TraceError listing the others, unless the file is not `alone` (one
    of several inputs, any of which may hold it: the caller says so when none does)."""

    def __init__(self, file: SourceFile, source_format: str = "auto", *, profile: Any = None,
                 run: str | None = None, max_line_bytes: int = 1 << 20, alone: bool = True) -> None:
        self.file, self.source_format, self.profile, self.run = file, source_format, profile, run
        self.max_line_bytes, self.alone = max_line_bytes, alone
        self.skipped = 0
        self.skipped_logs = 0
        self.found = 0
        self.other_runs: list[str] = []

    def __iter__(self) -> Iterator[ImportedRun]:
        file = self.file
        records = read_records(file, self.max_line_bytes)
        with collector.paused():   # millions of small objects, none in a cycle (see _collector)
            first = next(records, None)
        if first is None:
            raise TraceError(file.name, None, "is empty: there is nothing to import")
        sniffing = self.source_format == "auto"
        if sniffing:
            self.source_format = detect(first.value, file.name, first.line)
        module = _module(self.source_format)
        pattern, key, own = module.RUN_IDS
        wanted = None if self.run in (None, ALL_RUNS) else self.run
        ending = last_lines(file, self.max_line_bytes, pattern, key, wanted, own) if rereadable(file) else None
        context = Context(file, self.profile, self.run, ending)
        found = 0
        if sniffing and self.source_format in ("otel", "openinference"):   # each trace in its own flavour
            runs = _module("openinference").runs_of_either(_chain(first, records), context, self.source_format)
        else:
            runs = module.runs(_chain(first, records), context)
        while True:
            with collector.paused():
                imported = next(runs, None)
            if imported is None:
                break
            found += 1
            yield imported
        self.skipped, self.skipped_logs, self.found = context.skipped, context.skipped_logs, found
        self.other_runs = list(context.other_runs)
        if self.alone and self.run is not None and self.run != ALL_RUNS and not found:
            known = ", ".join(self.other_runs[:20]) or "none"
            raise TraceError(file.name, None, f"has no run {self.run!r}; its runs: {known}")
        if self.alone and not found and not self.other_runs and self.skipped:
            raise TraceError(file.name, None, _no_run(self.source_format, self.skipped, self.skipped_logs))


def _no_run(source_format: str, skipped: int, logs: int) -> str:
    """Why a file whose records were all skipped holds no run: records of kinds the mapping does
    not use, such as OpenTelemetry log records whose spans are in another file, or metrics."""
    said = "holds no run: its record is of a kind the mapping does not use" if skipped == 1 else \
        f"holds no run: its {skipped:,} records are of kinds the mapping does not use"
    if source_format not in ("otel", "openinference"):
        return said + " (is the format the one it was written in?)"
    if logs:
        return said + " (log records whose spans are in another file? join the files first, e.g. cat)"
    return said + " (OTLP records of another signal, such as metrics? the spans' export is what it reads)"


def _chain(first: Record, rest: Iterator[Record]) -> Iterator[Record]:
    yield first
    yield from rest
