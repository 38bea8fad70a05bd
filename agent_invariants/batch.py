"""Many traces at once: expand paths, directories and globs, check them in parallel, in order.

    report = check_many(contract, ["runs/"], jobs=4)      # every *.jsonl / *.json under runs/
    report.passed, [r.trace for r in report.reports], report.failures

Each trace is checked independently by `check_trace` (a pure function of contract and file), in a
process pool when `jobs > 1`; results come back in input order whatever order workers finish in,
so the batch report is as deterministic as a single one. A trace that cannot be read becomes a
`failure` entry (its one-line error) instead of stopping the others.
"""
from __future__ import annotations

import glob
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from agent_invariants.compare import compare_traces
from agent_invariants.contract import Contract
from agent_invariants.engine import check_trace
from agent_invariants.errors import InputError, TraceError
from agent_invariants.events import DEFAULT_MAX_LINE_BYTES
from agent_invariants.report import (
    CHECK_BATCH_SCHEMA,
    COMPARE_BATCH_SCHEMA,
    BatchFailure,
    CheckBatchReport,
    CompareBatchReport,
    ContractRef,
)

__all__ = ("TRACE_SUFFIXES", "check_many", "compare_many", "expand_traces", "is_single", "pair_traces")

TRACE_SUFFIXES = (".jsonl", ".json", ".ndjson")

Progress = Callable[[int], None]


def expand_traces(specs: Iterable[str], *, exclude: Iterable[str] = ()) -> list[str]:
    """Paths named by `specs`: files as given, directories walked for trace files (sorted), globs
    expanded (sorted). Files in `exclude` (the contract, say) are skipped in directories and
    globs. A directory or pattern that names nothing is an error; standard input (`-`) cannot be
    part of a batch."""
    skip = {os.path.realpath(path) for path in exclude}
    paths: list[str] = []
    for spec in specs:
        if spec == "-":
            raise TraceError("<stdin>", None, "standard input can only be checked on its own, not with other traces")
        if os.path.isfile(spec):
            paths.append(spec)
        elif os.path.isdir(spec):
            found = sorted(path for path in _walk(spec) if os.path.realpath(path) not in skip)
            if not found:
                raise TraceError(spec, None, f"directory holds no trace files ({', '.join(TRACE_SUFFIXES)})")
            paths += found
        elif glob.has_magic(spec):
            found = sorted(path for path in glob.glob(spec, recursive=True)
                           if os.path.isfile(path) and os.path.realpath(path) not in skip)
            if not found:
                raise TraceError(spec, None, "pattern matches no files")
            paths += found
        else:
            paths.append(spec)   # let the reader say what is wrong with it
    return paths


def is_single(specs: Sequence[str]) -> bool:
    """True when `specs` name exactly one trace directly (a file or `-`, not a folder or pattern):
    then commands keep their one-trace output."""
    if len(specs) != 1:
        return False
    spec = specs[0]
    return spec == "-" or os.path.isfile(spec) or not (os.path.isdir(spec) or glob.has_magic(spec))


def _walk(folder: str) -> Iterable[str]:
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in files:
            if name.endswith(TRACE_SUFFIXES) and not name.startswith("."):
                yield os.path.join(root, name)


def check_many(contract: Contract, traces: Sequence[str], *, jobs: int = 1,
               max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, progress: Progress | None = None) -> CheckBatchReport:
    """Check each trace against `contract`; bad traces become failures, the rest reports."""
    outcomes = _run(_check_one, [(contract, path, max_line_bytes) for path in traces], jobs, progress)
    reports = [outcome for outcome in outcomes if not isinstance(outcome, BatchFailure)]
    failures = [outcome for outcome in outcomes if isinstance(outcome, BatchFailure)]
    return CheckBatchReport(
        schema=CHECK_BATCH_SCHEMA, contract=ContractRef(name=contract.name, version=contract.version),
        passed=not failures and all(report.passed for report in reports),
        traces=len(traces), error_count=sum(r.error_count for r in reports),
        warning_count=sum(r.warning_count for r in reports), reports=reports, failures=failures)


def pair_traces(baselines: Sequence[str], candidates: Sequence[str]) -> list[tuple[str, str]]:
    """Pair baseline and candidate traces: one-to-one when both lists have one entry, else by
    file name (a candidate without a baseline of the same name is an error)."""
    if len(baselines) == 1 and len(candidates) == 1:
        return [(baselines[0], candidates[0])]
    if len(baselines) == 1:
        return [(baselines[0], candidate) for candidate in candidates]
    by_name: dict[str, str] = {}
    for path in baselines:
        by_name.setdefault(os.path.basename(path), path)
    pairs = []
    for candidate in candidates:
        baseline = by_name.get(os.path.basename(candidate))
        if baseline is None:
            raise TraceError(candidate, None, "no baseline trace with the same file name")
        pairs.append((baseline, candidate))
    return pairs


def compare_many(contract: Contract, pairs: Sequence[tuple[str, str]], *, jobs: int = 1,
                 max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
                 progress: Progress | None = None) -> CompareBatchReport:
    """Compare each (baseline, candidate) pair under `contract`."""
    outcomes = _run(_compare_one, [(contract, b, c, max_line_bytes) for b, c in pairs], jobs, progress)
    reports = [outcome for outcome in outcomes if not isinstance(outcome, BatchFailure)]
    failures = [outcome for outcome in outcomes if isinstance(outcome, BatchFailure)]
    return CompareBatchReport(
        schema=COMPARE_BATCH_SCHEMA, contract=ContractRef(name=contract.name, version=contract.version),
        compatible=not failures and all(report.compatible for report in reports),
        pairs=len(pairs), regressions=sum(len(r.regressions) for r in reports), reports=reports,
        failures=failures)


def _check_one(contract: Contract, path: str, max_line_bytes: int) -> Any:
    try:
        return check_trace(contract, path, max_line_bytes=max_line_bytes)
    except InputError as exc:
        return BatchFailure(trace=path, error=str(exc))


def _compare_one(contract: Contract, baseline: str, candidate: str, max_line_bytes: int) -> Any:
    try:
        return compare_traces(contract, baseline, candidate, max_line_bytes=max_line_bytes)
    except InputError as exc:
        return BatchFailure(trace=candidate, error=str(exc))


def _run(task: Callable[..., Any], arguments: list[tuple], jobs: int, progress: Progress | None) -> list[Any]:
    """Results of `task(*a)` for each `a`, in order; in `jobs` processes when that helps."""
    if jobs <= 1 or len(arguments) <= 1:
        results = []
        for args in arguments:
            results.append(task(*args))
            if progress:
                progress(1)
        return results
    with ProcessPoolExecutor(max_workers=min(jobs, len(arguments))) as pool:
        futures = [pool.submit(task, *args) for args in arguments]
        if progress:
            for future in futures:
                future.add_done_callback(lambda _: progress(1))
        return [future.result() for future in futures]
