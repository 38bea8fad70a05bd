"""Places in the input files that reports point at, for renderers, which stay pure.

SARIF needs more than a report holds: repository-relative URIs, the line of each rule in the
contract file (where trace-wide violations are anchored), and the length of each reported trace
line (GitHub wants a region's end column). `Sources` reads no file: the rules' lines come from the
contract's bytes as they were read for loading (`ContractSource`), and the lengths from the
violations themselves (a check run with `line_lengths=True` learns them while reading the trace),
so a contract or trace that is a pipe is read once. Each answer is worked out when a renderer first
asks for it, so every format can be handed a `Sources` and only SARIF pays for it. A renderer
given none falls back to what the report alone knows.
"""
from __future__ import annotations

import os
import re
from functools import cached_property
from pathlib import Path
from typing import Any
from urllib.parse import quote

from msgspec import UNSET

from agent_invariants.contract_source import ContractLines, ContractSource, contract_lines, pointer_lines
from agent_invariants.render.shared import AnyReport, checks, sections
from agent_invariants.report import CompareReport, Regression, Violation

__all__ = ("Sources", "outside", "relative_path", "to_uri")


def to_uri(path: str, root: str | os.PathLike[str] | None = None) -> str:
    """`path` as a relative URI (forward slashes, percent-encoded) from `root` (default: the
    current directory). Standard input is `stdin`."""
    if path == "-":
        return "stdin"
    relative = Path(relative_path(_named_file(path), root)).as_posix()
    return quote(relative.encode("utf-8", "surrogateescape"), safe="/-._~")


def _named_file(path: str) -> str:
    """The file a report's name stands for. A name holding bytes that are not UTF-8 is shown with
    `\\udcfe`-style escapes (a report's text cannot hold the bytes): when no file is named so but
    one with those bytes is, its URI is that file's (`%FE`), not the escape's (`%5Cudcfe`)."""
    if "\\udc" not in path or os.path.lexists(path):
        return path
    raw = _BYTE_ESCAPE.sub(lambda found: chr(int(found.group(1), 16)), path)
    return raw if os.path.lexists(raw) else path


_BYTE_ESCAPE = re.compile(r"\\u(dc[89a-f][0-9a-f])")
"""How a byte that is not UTF-8 is shown in a file name (`batch._as_text`)."""


def relative_path(path: str, root: str | os.PathLike[str] | None = None) -> str:
    """`path` relative to `root` (default: the current directory), as written; when that climbs
    out of the root (`../`), as the folders on the way resolve, if that stays inside: a file of the
    repository reached through a link to it (a workspace link, `/tmp` on macOS) is inside it. The
    file's own name is not resolved: a linked file stays where it is written."""
    top = os.path.abspath(root or os.curdir)
    written = os.path.relpath(os.path.abspath(path), top)
    if not _climbs(written):
        return written
    folder, name = os.path.split(os.path.abspath(path))
    resolved = os.path.relpath(os.path.join(os.path.realpath(folder), name), os.path.realpath(top))
    return written if _climbs(resolved) else resolved


def outside(path: str, root: str | os.PathLike[str]) -> bool:
    """Whether `path` is outside `root` both as written and as its folders resolve (`relative_path`)."""
    return _climbs(relative_path(path, root))


def _climbs(relative: str) -> bool:
    return relative == os.pardir or relative.startswith(os.pardir + os.sep)


class Sources:
    """What the renderers may ask about the files behind `report`: from the contract's
    `ContractSource` (the bytes read to load it) and, for rule descriptions, the loaded contract.
    `Sources()` knows nothing beyond URIs relative to the current folder."""

    def __init__(self, report: AnyReport | None = None, contract: ContractSource | None = None, *,
                 loaded: Any = None, root: str | os.PathLike[str] | None = None,
                 outputs: dict[int, tuple[int, int | None]] | None = None,
                 sites: dict[str, tuple[int, int | None]] | None = None) -> None:
        self.root = root
        self.outputs = outputs or {}
        """For a stability report: the line of each trace's terminal event, and its length (by run)."""
        self.sites = sites or {}
        """For a mutate report: the line of each mutant's site event in the trace, and its length (by id)."""
        self.contract_path = None if contract is None else contract.label
        self._report = report
        self._contract = contract
        self._loaded = loaded
        self._uris: dict[str, str] = {}

    @property
    def contract_uri(self) -> str | None:
        return None if self.contract_path is None else to_uri(self.contract_path, self.root)

    def shown(self, path: str) -> str:
        """How a message names `path`: as its URI does, relative to the root, but not
        percent-encoded (`runs/a b.jsonl`, where the URI is `runs/a%20b.jsonl`)."""
        return "stdin" if path == "-" else Path(relative_path(path, self.root)).as_posix()

    def uri(self, path: str) -> str:
        """`to_uri(path)`, worked out once per path (a report names its trace at every result)."""
        found = self._uris.get(path)
        if found is None:
            found = self._uris[path] = to_uri(path, self.root)
        return found

    @property
    def rule_lines(self) -> dict[str, int]:
        """The line of each rule (by id) in the contract file."""
        return self._contract_lines.rules

    @property
    def compare_line(self) -> int | None:
        """The line of the contract's compare policy."""
        return self._contract_lines.compare

    @cached_property
    def _contract_lines(self) -> ContractLines:
        return ContractLines({}, None) if self._contract is None else contract_lines(self._contract)

    @cached_property
    def rule_descriptions(self) -> dict[str, str]:
        """The contract's description of each rule that has one (by id)."""
        if self._loaded is None:
            return {}
        return {rule.id: rule.description for rule in self._loaded.rules if rule.description is not UNSET}

    def pointer_lines(self, pointers: list[str]) -> dict[str, int]:
        """The contract file's line of each JSON pointer into the loaded contract (lint findings)."""
        if self._contract is None or self._loaded is None:
            return {}
        return pointer_lines(self._contract, [rule.id for rule in self._loaded.rules], pointers)

    def contract_line_length(self, line: int) -> int | None:
        """Length of a line of the contract file in UTF-16 code units (a line break and a byte
        order mark not counted), or None when the file or the line is unknown."""
        lengths = self._contract_line_lengths
        return lengths[line - 1] if 0 < line <= len(lengths) else None

    @cached_property
    def _contract_line_lengths(self) -> list[int]:
        if self._contract is None:
            return []
        text = self._contract.data.decode("utf-8", "replace").removeprefix("\ufeff")
        return [len(line.rstrip("\r").encode("utf-16-le")) // 2 for line in text.split("\n")]

    def line_length(self, path: str, line: int) -> int | None:
        """Length of a trace line in UTF-16 code units (SARIF's default column unit)."""
        return self._line_lengths.get((path, line))

    @cached_property
    def _line_lengths(self) -> dict[tuple[str, int], int]:
        """The length of every trace line a violation or regression points at, as the check learnt it."""
        lengths: dict[tuple[str, int], int] = {}
        if self._report is None:
            return lengths
        for section in sections(self._report):
            if isinstance(section, CompareReport):
                _add_lengths(lengths, section.candidate.trace, section.regressions)
        for check in checks(self._report):
            _add_lengths(lengths, check.trace, check.violations)
        return lengths


def _add_lengths(lengths: dict[tuple[str, int], int], trace: Any, located: list[Violation] | list[Regression]) -> None:
    if trace is UNSET:
        return
    for item in located:
        if item.line is not UNSET and item.line_length is not UNSET:
            lengths[(trace, item.line)] = item.line_length
