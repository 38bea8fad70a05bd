"""`check`, `compare` and `summary` on traces in other formats (`--input-format`, `--run`).

Each input file is imported (`Stream`), and each run wanted is checked as a native trace would
be, as soon as it has been read (memory holds one run at a time). One file with one run (or
`--run ID`) gives that run's report; `--run all`, or several files, a batch report with one
section per run, each naming its file and run; as a folder's trace would be, a run holding an
event no trace may hold is that run's failure (at its line), and the others are still checked. A
file with several runs and no `--run` is bad input: the message lists the run ids and both options.

`compare --run all` pairs runs as a batch of folders pairs traces, by name, here the run id: each
run of the candidate file with the baseline file's run of the same id, or with the baseline's only
run when it holds one (trace ids are new on every recording: one baseline run then goes with every
candidate run). A candidate run that no baseline run pairs with is bad input. The baseline's runs
are checked first and only their reports kept; then each candidate run is checked and compared as
soon as it is read.

`summary --run all` counts each run: an object of the summaries by run id. Every batch lists the
runs in the order they begin in the file.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent_invariants import _collector as collector
from agent_invariants.api import check_trace, summarize_trace
from agent_invariants.batch import batch_failure
from agent_invariants.compare import compare_checked
from agent_invariants.contract import Contract
from agent_invariants.engine import run_check
from agent_invariants.errors import InputError, TraceError
from agent_invariants.importers import ALL_RUNS, Stream, one_run
from agent_invariants.importers.records import SourceFile
from agent_invariants.importers.run import in_file_order
from agent_invariants.importers.source import ImportedTrace
from agent_invariants.output import shown
from agent_invariants.report import (
    CHECK_BATCH_SCHEMA,
    COMPARE_BATCH_SCHEMA,
    BatchFailure,
    CheckBatchReport,
    CheckReport,
    CompareBatchReport,
    CompareReport,
    ContractRef,
    TraceSummary,
)

__all__ = ("check_imported", "compare_imported", "imported_source", "summarize_imported")


def imported_source(path: str, input_format: str, *, run: str | None, profile: Any,
                    max_line_bytes: int, line_lengths: bool = False) -> ImportedTrace:
    """The one run of `path` to check (several without `run` is a TraceError listing them)."""
    file = SourceFile.of(path)
    found = one_run(iter(Stream(file, input_format, profile=profile, run=run, max_line_bytes=max_line_bytes)),
                    file.name, "choose one with --run ID, or take every one with --run all (convert: --out-dir)")
    return ImportedTrace(file, found, line_lengths=line_lengths, max_line_bytes=max_line_bytes)


def check_imported(contract: Contract, paths: Sequence[str], input_format: str, *, run: str | None, profile: Any,
                   max_line_bytes: int, max_violations: int, strict: bool, partial: bool = False,
                   line_lengths: bool = False, count_safety: bool = False) -> CheckReport | CheckBatchReport:
    """The report of one run, or a batch report of every run of every file."""
    checks: dict[str, Any] = {"max_violations": max_violations, "strict": strict, "partial": partial,
                              "count_safety": count_safety}
    if len(paths) == 1 and run != ALL_RUNS:
        source = imported_source(paths[0], input_format, run=run, profile=profile, max_line_bytes=max_line_bytes,
                                 line_lengths=line_lengths)
        return check_trace(contract, source, **checks)
    with collector.paused():   # re-enabled between runs, the collector would walk every object each time
        reports, failures = _check_each(contract, paths, input_format, run=run, profile=profile,
                                        max_line_bytes=max_line_bytes, line_lengths=line_lengths, checks=checks)
    return CheckBatchReport(
        schema=CHECK_BATCH_SCHEMA, contract=ContractRef(name=contract.name, version=contract.version),
        passed=not failures and all(report.passed for report in reports), traces=len(reports) + len(failures),
        error_count=sum(report.error_count for report in reports),
        warning_count=sum(report.warning_count for report in reports), reports=reports, failures=failures)


def _check_each(contract: Contract, paths: Sequence[str], input_format: str, *, run: str | None, profile: Any,
                max_line_bytes: int, line_lengths: bool, checks: dict[str, Any]) -> tuple[list[CheckReport],
                                                                                       list[BatchFailure]]:
    reports: list[CheckReport] = []
    failures: list[BatchFailure] = []
    for path in paths:
        file = SourceFile.of(path)
        try:
            if run != ALL_RUNS:
                reports.append(check_trace(contract, imported_source(path, input_format, run=run, profile=profile,
                                                                     max_line_bytes=max_line_bytes,
                                                                     line_lengths=line_lengths), **checks))
                continue
            found_reports = []
            unreadable: list[tuple[int, BatchFailure]] = []
            for found in Stream(file, input_format, profile=profile, run=run, max_line_bytes=max_line_bytes):
                source = ImportedTrace(file, found, line_lengths=line_lengths, max_line_bytes=max_line_bytes)
                # an event no trace may hold makes this run alone unreadable, as one file of a folder
                try:
                    found_reports.append((found.first_line, check_trace(contract, source, **checks)))
                except TraceError as exc:
                    unreadable.append((found.first_line, batch_failure(path, exc)))
            if not found_reports and not unreadable:   # (as without --run: a file of no run is no pass)
                raise TraceError(file.name, None, "holds no run to check")
            reports += in_file_order(found_reports)
            failures += in_file_order(unreadable)
        except InputError as exc:
            failures.append(batch_failure(path, exc))
    return reports, failures


def compare_imported(contract: Contract, baseline: str, candidate: str, input_format: str, *, profile: Any,
                     max_line_bytes: int, max_violations: int, strict: bool, partial: bool = False,
                     line_lengths: bool = False) -> CompareBatchReport:
    """`compare --run all`: every run of `candidate` compared with its baseline run (see the
    module's docstring), one section per candidate run, in the candidate file's order."""
    checks: dict[str, Any] = {"strict": strict, "partial": partial}
    before: dict[str, CheckReport] = {}
    reports: list[tuple[int, CompareReport]] = []
    with collector.paused():
        base = SourceFile.of(baseline)
        for found in Stream(base, input_format, profile=profile, run=ALL_RUNS, max_line_bytes=max_line_bytes):
            source = ImportedTrace(base, found, max_line_bytes=max_line_bytes)
            before[found.run_id] = run_check(contract, source, max_violations, **checks).report
        if not before:
            raise TraceError(base.name, None, "holds no run to compare with")
        only = next(iter(before.values())) if len(before) == 1 else None
        file = SourceFile.of(candidate)
        for found in Stream(file, input_format, profile=profile, run=ALL_RUNS, max_line_bytes=max_line_bytes):
            paired = only or before.get(found.run_id)
            if paired is None:
                ids = ", ".join(shown(run_id) for run_id in list(before)[:20]) + (", …" if len(before) > 20 else "")
                raise TraceError(file.name, None, f"run {shown(found.run_id)} has no run of the same id in the "
                                 f"baseline {base.name} to compare it with (its runs: {ids})")
            source = ImportedTrace(file, found, line_lengths=line_lengths, max_line_bytes=max_line_bytes)
            checked = run_check(contract, source, max_violations, **checks)
            reports.append((found.first_line, compare_checked(contract, paired, checked)))
        if not reports:
            raise TraceError(file.name, None, "holds no run to compare")
    sections = in_file_order(reports)
    return CompareBatchReport(
        schema=COMPARE_BATCH_SCHEMA, contract=ContractRef(name=contract.name, version=contract.version),
        compatible=all(report.compatible for report in sections), pairs=len(sections),
        regressions=sum(report.regression_count for report in sections), reports=sections, failures=[])


def summarize_imported(path: str, input_format: str, *, profile: Any, max_line_bytes: int) -> dict[str, TraceSummary]:
    """`summary --run all`: the counts of every run of `path`, by run id, in the file's order."""
    file = SourceFile.of(path)
    summaries: list[tuple[int, tuple[str, TraceSummary]]] = []
    with collector.paused():
        for found in Stream(file, input_format, profile=profile, run=ALL_RUNS, max_line_bytes=max_line_bytes):
            summary = summarize_trace(ImportedTrace(file, found, max_line_bytes=max_line_bytes))
            summaries.append((found.first_line, (found.run_id, summary)))
    if not summaries:
        raise TraceError(file.name, None, "holds no run to count")
    return dict(in_file_order(summaries))

