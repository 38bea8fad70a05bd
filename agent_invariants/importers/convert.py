"""`convert`: runs of other formats written out as native JSONL, one file per run.

One run (the only one, or `--run ID`) goes to standard output or `--output`; several (`--run all`,
or an input holding several) need `--out-dir`, where each run becomes `<run id>.jsonl` (characters
other than letters, digits, `.`, `_` and `-` become `_`; a name taken twice gets `-2`, `-3`…).
The files are written only once every input has been read: a bad record leaves nothing behind.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from agent_invariants import _collector as collector
from agent_invariants.errors import InputError
from agent_invariants.importers import ImportedRun, import_file
from agent_invariants.importers.records import SourceFile

__all__ = ("convert_files", "jsonl")

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def convert_files(inputs: Sequence[str], source_format: str, *, run: str | None, profile: Any,
                  max_line_bytes: int, out_dir: Path | None) -> tuple[list[tuple[Path, str]], str]:
    """The files to write, as (path, text) (the path is unused without `out_dir`), and a line
    saying what was converted."""
    runs: list[ImportedRun] = []
    skipped = 0
    for path in inputs:
        imported = import_file(SourceFile.of(path), source_format, profile=profile, run=run,
                               max_line_bytes=max_line_bytes)
        runs += imported.runs
        skipped += imported.skipped
    if not runs:
        raise InputError("convert: the input holds no run")
    if out_dir is None and len(runs) > 1:
        shown = ", ".join(found.run_id for found in runs[:20]) + (", …" if len(runs) > 20 else "")
        raise InputError(f"convert: the input holds {len(runs)} runs ({shown}); write one with --run ID, or every "
                         "one with --out-dir DIR")
    files = [(out_dir / name if out_dir is not None else Path("-"), jsonl(found))
             for name, found in zip(_file_names(runs), runs, strict=True)]
    events = sum(len(found) for found in runs)
    note = f"converted {len(runs)} run{'s' if len(runs) != 1 else ''} ({events} events)"
    if skipped:
        note += f"; skipped {skipped} record{'s' if skipped != 1 else ''} of kinds the mapping does not use"
    return files, note


def jsonl(run: ImportedRun) -> str:
    """A run as native JSON Lines."""
    encode = msgspec.json.encode
    with collector.paused():
        return "".join(encode(event).decode() + "\n" for event, _ in run.emitted())


def _file_names(runs: list[ImportedRun]) -> list[str]:
    taken: dict[str, int] = {}
    names = []
    for found in runs:
        base = _UNSAFE.sub("_", found.run_id)[:200] or "run"
        count = taken.get(base, 0) + 1
        taken[base] = count
        names.append(f"{base}.jsonl" if count == 1 else f"{base}-{count}.jsonl")
    return names



