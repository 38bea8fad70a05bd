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

__all__ = ("TRACE_SUFFIXES", "check_many", "compare_many", "expand_traces", "is_single", "named_traces", "pair_traces")

TRACE_SUFFIXES = (".jsonl", ".json", ".ndjson")

Progress = Callable[[int], None]


def expand_traces(specs: Iterable[str], *, exclude: Iterable[str] = ()) -> list[str]:
    """Paths named by `specs`: files as given, directories walked for trace files (sorted), globs
    expanded (sorted). Files in `exclude` (the contract, say) are skipped in directories and
    globs. A directory or pattern that names nothing is an error; standard input (`-`) cannot be
    part of a batch."""
    return [path for _, path in named_traces(specs, exclude=exclude)]


def named_traces(specs: Iterable[str], *, exclude: Iterable[str] = ()) -> list[tuple[str, str]]:
    """`expand_traces` with each path's name for pairing: its path relative to the folder it was
    found in (`sub/run.jsonl`), or its file name when it was given directly or by a pattern."""
    skip = {os.path.realpath(path) for path in exclude}
    named: list[tuple[str, str]] = []
    for spec in specs:
        if spec == "-":
            raise TraceError("<stdin>", None, "standard input can only be checked on its own, not with other traces")
        if os.path.isfile(spec):
            named.append((os.path.basename(spec), spec))
        elif os.path.isdir(spec):
            found = sorted(path for path in _walk(spec) if os.path.realpath(path) not in skip)
            if not found:
                raise TraceError(spec, None, f"directory holds no trace files ({', '.join(TRACE_SUFFIXES)})")
            named += [(os.path.relpath(path, spec).replace(os.sep, "/"), path) for path in found]
        elif glob.has_magic(spec):
            found = sorted(path for path in glob.glob(spec, recursive=True)
                           if os.path.isfile(path) and os.path.realpath(path) not in skip)
            if not found:
                raise TraceError(spec, None, "pattern matches no files")
            named += [(os.path.basename(path), path) for path in found]
        else:
            named.append((os.path.basename(spec), spec))   # let the reader say what is wrong with it
    return named


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


def pair_traces(baselines: Sequence[tuple[str, str]], candidates: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Pair baseline and candidate traces, each given as (name, path) by `named_traces`: one to
    one when both sides hold one trace, every candidate with a lone baseline, else by name (the
    path inside the folder given, or the file name). A candidate without a baseline of its name,
    or a name two baselines share, is an error: a silent guess would compare the wrong runs."""
    if len(baselines) == 1:
        return [(baselines[0][1], path) for _, path in candidates]
    by_name: dict[str, str] = {}
    for name, path in baselines:
        if by_name.setdefault(name, path) != path:
            raise TraceError(path, None, f"two baseline traces are named {name!r} ({by_name[name]} "
                                         "and this one); give folders, which pair by relative path")
    pairs = []
    for name, candidate in candidates:
        baseline = by_name.get(name)
        if baseline is None:
            raise TraceError(candidate, None, f"no baseline trace named {name!r} to compare it with")
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
