"""Places in the input files that reports point at, gathered once so renderers stay pure.

SARIF needs more than a report holds: repository-relative URIs, the line of each rule in the
contract file (where trace-wide violations are anchored), and the length of each reported trace
line (GitHub wants a region's end column). `Sources.gather` reads no file: the rules' lines come
from the contract's bytes as they were read for loading (`ContractSource`), and the lengths from
the violations themselves (a check run with `line_lengths=True` learns them while reading the
trace), so a contract or trace that is a pipe is read once. A renderer given `None` falls back
to what the report alone knows.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

from msgspec import UNSET

from agent_invariants.contract_source import ContractSource, contract_lines
from agent_invariants.report import CheckBatchReport, CheckReport, CompareBatchReport, CompareReport

AnyReport = CheckReport | CompareReport | CheckBatchReport | CompareBatchReport

__all__ = ("Sources", "to_uri")


def to_uri(path: str, root: str | os.PathLike[str] | None = None) -> str:
    """`path` as a relative URI (forward slashes, percent-encoded) from `root` (default: the
    current directory). Standard input is `stdin`."""
    if path == "-":
        return "stdin"
    relative = os.path.relpath(os.path.abspath(path), os.path.abspath(root or os.curdir))
    return quote(Path(relative).as_posix(), safe="/-._~")


class Sources:
    """What the renderers may ask about the files behind a report."""

    def __init__(self, *, contract_path: str | None = None, root: str | os.PathLike[str] | None = None,
                 rule_lines: dict[str, int] | None = None, rule_descriptions: dict[str, str] | None = None,
                 compare_line: int | None = None,
                 line_lengths: dict[tuple[str, int], int] | None = None) -> None:
        self.contract_path = contract_path
        self.root = root
        self.rule_lines = rule_lines or {}
        self.rule_descriptions = rule_descriptions or {}
        self.compare_line = compare_line
        self.line_lengths = line_lengths or {}

    @property
    def contract_uri(self) -> str | None:
        return None if self.contract_path is None else to_uri(self.contract_path, self.root)

    def uri(self, path: str) -> str:
        return to_uri(path, self.root)

    def line_length(self, path: str, line: int) -> int | None:
        """Length of a trace line in UTF-16 code units (SARIF's default column unit)."""
        return self.line_lengths.get((path, line))

    @classmethod
    def gather(cls, report: AnyReport, contract: ContractSource | None = None, *, loaded: Any = None,
               root: str | os.PathLike[str] | None = None) -> Sources:
        """What renderers need besides `report`: from the contract's `ContractSource` (the bytes
        read to load it) and, for rule descriptions, the loaded contract."""
        rule_lines: dict[str, int] = {}
        compare_line = None
        contract_path = None
        if contract is not None:
            contract_path = contract.label
            lines = contract_lines(contract)
            rule_lines, compare_line = lines.rules, lines.compare
        descriptions = {}
        if loaded is not None:
            descriptions = {rule.id: rule.description for rule in loaded.rules if rule.description is not UNSET}
        return cls(contract_path=contract_path, root=root, rule_lines=rule_lines, rule_descriptions=descriptions,
                   compare_line=compare_line, line_lengths=_line_lengths(report))


def _checks(report: AnyReport) -> list[CheckReport]:
    """Every check report inside `report`."""
    sections = report.reports if isinstance(report, (CheckBatchReport, CompareBatchReport)) else [report]
    checks: list[CheckReport] = []
    for section in sections:
        checks += [section.baseline, section.candidate] if isinstance(section, CompareReport) else [section]
    return checks


def _line_lengths(report: AnyReport) -> dict[tuple[str, int], int]:
    """The length of every trace line a violation or regression points at, as the check learnt it."""
    lengths: dict[tuple[str, int], int] = {}
    sections = report.reports if isinstance(report, (CheckBatchReport, CompareBatchReport)) else [report]
    for section in sections:
        if isinstance(section, CompareReport):
            _add_lengths(lengths, section.candidate.trace, section.regressions)
        for check in _checks(section):
            _add_lengths(lengths, check.trace, check.violations)
    return lengths


def _add_lengths(lengths: dict[tuple[str, int], int], trace: Any, located: list) -> None:
    if trace is UNSET:
        return
    for item in located:
        if item.line is not UNSET and item.line_length is not UNSET:
            lengths[(trace, item.line)] = item.line_length
