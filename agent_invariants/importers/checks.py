"""`check`, `compare` and `summary` on traces in other formats (`--input-format`, `--run`).

Each input file is imported (`import_runs`), and each run wanted is checked as a native trace
would be. One file with one run (or `--run ID`) gives that run's report; `--run all`, or several
files, a batch report with one section per run, each naming its file and run. A file with several
runs and no `--run` is bad input: the message lists the run ids and both options.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent_invariants.api import check_trace
from agent_invariants.contract import Contract
from agent_invariants.errors import InputError, TraceError
from agent_invariants.importers import ALL_RUNS, ImportedRun, import_runs
from agent_invariants.importers.records import SourceFile
from agent_invariants.importers.source import ImportedTrace
from agent_invariants.report import CHECK_BATCH_SCHEMA, BatchFailure, CheckBatchReport, CheckReport, ContractRef

__all__ = ("check_imported", "imported_source")


def imported_source(path: str, input_format: str, *, run: str | None, profile: Any,
                    max_line_bytes: int) -> ImportedTrace:
    """The one run of `path` to check (several without `run` is a TraceError listing them)."""
    file = SourceFile.of(path)
    runs = import_runs(file, input_format, profile=profile, run=run, max_line_bytes=max_line_bytes)
    return ImportedTrace(file, _one(file.name, runs))


def _one(name: str, runs: list[ImportedRun]) -> ImportedRun:
    if not runs:
        raise TraceError(name, None, "holds no run to check")
    if len(runs) > 1:
        shown = ", ".join(found.run_id for found in runs[:20]) + (", …" if len(runs) > 20 else "")
        raise TraceError(name, None, f"holds {len(runs)} runs ({shown}); choose one with --run ID, or take every "
                         "one with --run all (convert: --out-dir)")
    return runs[0]


def check_imported(contract: Contract, paths: Sequence[str], input_format: str, *, run: str | None, profile: Any,
                   max_line_bytes: int, max_violations: int, strict: bool) -> CheckReport | CheckBatchReport:
    """The report of one run, or a batch report of every run of every file."""
    if len(paths) == 1 and run != ALL_RUNS:
        source = imported_source(paths[0], input_format, run=run, profile=profile, max_line_bytes=max_line_bytes)
        return check_trace(contract, source, max_violations=max_violations, strict=strict)
    reports: list[CheckReport] = []
    failures: list[BatchFailure] = []
    for path in paths:
        file = SourceFile.of(path)
        try:
            runs = import_runs(file, input_format, profile=profile, run=run, max_line_bytes=max_line_bytes)
            if run != ALL_RUNS:
                runs = [_one(file.name, runs)]
            for found in runs:
                reports.append(check_trace(contract, ImportedTrace(file, found), max_violations=max_violations,
                                           strict=strict))
        except InputError as exc:
            failures.append(BatchFailure(trace=path, error=str(exc)))
    return CheckBatchReport(
        schema=CHECK_BATCH_SCHEMA, contract=ContractRef(name=contract.name, version=contract.version),
        passed=not failures and all(report.passed for report in reports), traces=len(reports) + len(failures),
        error_count=sum(report.error_count for report in reports),
        warning_count=sum(report.warning_count for report in reports), reports=reports, failures=failures)
