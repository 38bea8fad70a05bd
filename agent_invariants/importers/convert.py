"""`convert`: runs of other formats written out as native JSONL, one file per run.

One run (the only one, or `--run ID`) goes to standard output or `--output`; several (`--run all`,
or an input holding several) need `--out-dir`, where each run becomes `<run id>.jsonl` (characters
other than letters, digits, `.`, `_` and `-` become `_`; a name taken twice gets `-2`, `-3`…).
Runs are written as they are read, so memory holds one run at a time; the files go to a
temporary folder inside `--out-dir` (or its parent, when it is yet to be made) first and are moved
into place only once every input has been read: a bad record leaves nothing behind, and an
existing file is never overwritten.
Each input file is read on its own: a run that two of them share (a trace whose spans a rotating
exporter split) is refused with a message saying so, rather than written as two partial runs, and
so is a file that holds no run of its own (OpenTelemetry log records beside the file of their
spans), whose records would otherwise be dropped. `--run ID` takes the run from whichever input
holds it.
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

from agent_invariants import _collector as collector
from agent_invariants.errors import InputError
from agent_invariants.importers import ALL_RUNS, ImportedRun, Stream, one_run
from agent_invariants.importers.records import SourceFile
from agent_invariants.importers.run import in_file_order
from agent_invariants.importers.source import checked_jsonl
from agent_invariants.output import move_new, shown

__all__ = ("convert_files", "jsonl")

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def convert_files(inputs: Sequence[str], source_format: str, *, run: str | None, profile: Any,
                  max_line_bytes: int, out_dir: Path | None) -> tuple[str | None, str]:
    """Convert every input: with `out_dir`, write each run there and return (None, note); else
    return the one run's JSONL and the note (a line saying what was converted)."""
    _refuse_twice(inputs)
    streams = [Stream(SourceFile.of(path), source_format, profile=profile, run=run, max_line_bytes=max_line_bytes,
                      alone=len(inputs) == 1) for path in inputs]
    runs = _whole(_each(streams, run))
    with collector.paused():   # re-enabled between runs, the collector would walk every object each time
        if out_dir is None:
            text, count, events = _one(runs, ", ".join(inputs))
        else:
            count, events = _to_folder(runs, out_dir)
            text = None
    note = f"converted {count} run{'s' if count != 1 else ''} ({events} events)"
    skipped = sum(stream.skipped for stream in streams)
    if skipped:
        note += f"; skipped {skipped} record{'s' if skipped != 1 else ''} of kinds the mapping does not use"
    return text, note


def _refuse_twice(inputs: Sequence[str]) -> None:
    """An input named twice (or by two names) would be two halves of each of its runs."""
    seen: dict[object, str] = {}
    for path in inputs:
        try:
            found = os.stat(path)
            key: object = (found.st_dev, found.st_ino)
        except OSError:   # (a file that cannot be read is said when it is read)
            key = path
        first = seen.get(key)
        if first is not None:
            also = "" if first == path else f" (as {shown(first)})"
            raise InputError(f"convert: {shown(path)} is given twice{also}: give each input once")
        seen[key] = path


def _each(streams: list[Stream], run: str | None) -> Iterator[ImportedRun]:
    """The runs of every input in turn. Of several inputs, each must hold a run (a wanted one or
    another): the records of one that holds none, such as OpenTelemetry log records whose spans
    are in another file, could join no run. A wanted run (`--run ID`) must be in one of them."""
    for stream in streams:
        yield from stream
        if not stream.found and not stream.other_runs and len(streams) > 1:
            raise InputError(f"convert: {shown(stream.file.name)} holds no run of its own; each input is read on "
                             "its own, so records whose run is in another file (log records beside the file of "
                             "their spans) would be lost: join the files first (e.g. cat) and convert the whole")
    if run not in (None, ALL_RUNS) and len(streams) > 1 and not any(stream.found for stream in streams):
        known = list(dict.fromkeys(other for stream in streams for other in stream.other_runs))
        shown_runs = ", ".join(known[:20]) + (", …" if len(known) > 20 else "")
        raise InputError(f"convert: no input has run {run!r}; their runs: {shown_runs or 'none'}")


def _whole(runs: Iterator[ImportedRun]) -> Iterator[ImportedRun]:
    """The runs, refusing one that a second input file holds part of: each file is read on its
    own, so its halves would become two runs with one id, neither of them whole."""
    seen: dict[str, str] = {}
    for found in runs:
        first = seen.setdefault(found.run_id, found.file.name)
        if first != found.file.name:
            raise InputError(f"convert: run {shown(found.run_id)} is in both {first} and {found.file.name}; each "
                             "input is read on its own, so join the files first (e.g. cat) and convert the whole")
        yield found


def _one(runs: Iterator[ImportedRun], where: str) -> tuple[str, int, int]:
    found = one_run(runs, where, "write one with --run ID, or every one with --out-dir DIR")
    return jsonl(found), 1, len(found)


def _to_folder(runs: Iterator[ImportedRun], out_dir: Path) -> tuple[int, int]:
    # staged on the folder's own file system (a folder that is there may be a mount: a volume's
    # root, whose parent is another file system, where no file can be linked or renamed across)
    try:
        if out_dir.exists() and not out_dir.is_dir():
            raise InputError(f"--out-dir {out_dir}: is not a folder")
        beside = out_dir if out_dir.is_dir() else out_dir.parent
        beside.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".agent-invariants-", dir=beside))
    except OSError as exc:
        raise InputError(f"--out-dir {out_dir}: cannot write there: {exc.strerror or exc}") from None
    try:
        # Runs come as they end; they are named in the order they begin (where two ids make one
        # name, the first to begin keeps it): each is staged under a name no run takes (a hidden
        # one), and named once all are read.
        staged: list[tuple[tuple[int, int], tuple[str, str]]] = []   # (where it begins, (its id, its staged file))
        files: dict[str, int] = {}   # input file -> its place among the inputs
        events = 0
        for found in runs:
            temporary = f".{len(staged)}.jsonl"
            try:
                (staging / temporary).write_bytes(checked_jsonl(found))   # UTF-8 as encoded, not decoded again
            except OSError as exc:
                raise InputError(f"--out-dir {out_dir}: cannot write there: {exc.strerror or exc}") from None
            begins = (files.setdefault(found.file.name, len(files)), found.first_line)
            staged.append((begins, (found.run_id, temporary)))
            events += len(found)
        if not staged:
            raise InputError("convert: the input holds no run (is --from the format it was written in?)")
        taken: set[str] = set()
        named = [(temporary, _file_name(run_id, taken)) for run_id, temporary in in_file_order(staged)]
        _place(staging, named, out_dir)
        return len(named), events
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _place(staging: Path, named: list[tuple[str, str]], out_dir: Path) -> None:
    """Move the written runs (each staged file with its name) into `out_dir`: all of them, or
    none when a name is taken there (looked for first, and again as each file is linked in,
    which fails rather than replace a file something else made meanwhile; the files placed
    before are then taken out again)."""
    for _, name in named:
        if os.path.lexists(out_dir / name):
            raise InputError(f"{out_dir / name}: already exists; refusing to overwrite it")
    placed: list[Path] = []
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for temporary, name in named:
            move_new(staging / temporary, out_dir / name)
            placed.append(out_dir / name)
    except FileExistsError:
        _take_out(placed)
        raise InputError(f"{out_dir / name}: already exists; refusing to overwrite it") from None
    except OSError as exc:
        _take_out(placed)
        raise InputError(f"--out-dir {out_dir}: cannot write there: {exc.strerror or exc}") from None


def _take_out(placed: list[Path]) -> None:
    for path in placed:
        with suppress(OSError):
            path.unlink()


def jsonl(run: ImportedRun) -> str:
    """A run as native JSON Lines, each event validated as `check` reads it."""
    return checked_jsonl(run).decode()


def _file_name(run_id: str, taken: set[str]) -> str:
    """The file of a run: its id made safe, and when that name is taken already (by a run whose
    id is made alike, `a/b` beside `a_b`), `-2`, `-3`, ... added, the first number whose name no
    run took (`a_b-2` may be a run's own id). Names are compared ignoring case: S1 and s1 are one
    file where a file system ignores it."""
    base = _UNSAFE.sub("_", run_id)[:200] or "run"
    if base.startswith("."):   # a hidden file would be left out of a folder check (and `..` is no name)
        base = "_" + base[1:]
    name, count = f"{base}.jsonl", 1
    while name.lower() in taken:
        count += 1
        name = f"{base}-{count}.jsonl"
    taken.add(name.lower())
    return name
