"""Places in the input files that reports point at, gathered once so renderers stay pure.

SARIF needs more than a report holds: repository-relative URIs, the line of each rule in the
contract file (where trace-wide violations are anchored), and the length of each reported trace
line (GitHub wants a region's end column). `Sources.gather` reads the files to find them; a
renderer given `None` falls back to what the report alone knows.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

from msgspec import UNSET

from agent_invariants._js import utf16_len
from agent_invariants.jsonpos import locate
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
    def gather(cls, report: AnyReport, contract_path: str | None, *,
               contract: Any = None, root: str | os.PathLike[str] | None = None) -> Sources:
        """Read the contract and traces behind `report` for the positions renderers need."""
        rule_lines: dict[str, int] = {}
        compare_line = None
        if contract_path is not None and contract_path != "-":
            try:
                positions = locate(Path(contract_path).read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError):
                positions = {}
            rules = _rule_ids(report)
            for position, rule_id in enumerate(rules):
                found = positions.get(f"$.rules[{position}]")
                if found is not None:
                    rule_lines[rule_id] = found.line
            if "$.compare" in positions:
                compare_line = positions["$.compare"].line
        descriptions = {}
        if contract is not None:
            descriptions = {rule.id: rule.description for rule in contract.rules if rule.description is not UNSET}
        return cls(contract_path=contract_path, root=root, rule_lines=rule_lines, rule_descriptions=descriptions,
                   compare_line=compare_line, line_lengths=_line_lengths(report))


def _checks(report: AnyReport) -> list[CheckReport]:
    """Every check report inside `report`."""
    sections = report.reports if isinstance(report, (CheckBatchReport, CompareBatchReport)) else [report]
    checks: list[CheckReport] = []
    for section in sections:
        checks += [section.baseline, section.candidate] if isinstance(section, CompareReport) else [section]
    return checks


def _rule_ids(report: AnyReport) -> list[str]:
    checks = _checks(report)
    return [result.rule_id for result in checks[0].results] if checks else []


def _line_lengths(report: AnyReport) -> dict[tuple[str, int], int]:
    """The length of every trace line a violation points at, one streaming pass per trace."""
    checks = _checks(report)
    wanted: dict[str, set[int]] = {}
    for check in checks:
        if check.trace is UNSET or check.trace == "-":
            continue
        lines = {v.line for v in check.violations if v.line is not UNSET}
        if lines:
            wanted.setdefault(check.trace, set()).update(lines)
    lengths: dict[tuple[str, int], int] = {}
    for path, lines in wanted.items():
        last = max(lines)
        try:
            with open(path, "rb") as handle:
                for number, raw in enumerate(handle, start=1):
                    if number in lines:
                        text = raw.rstrip(b"\n").rstrip(b"\r").decode("utf-8", "replace")
                        lengths[(path, number)] = utf16_len(text)
                    if number >= last:
                        break
        except OSError:
            continue
    return lengths
