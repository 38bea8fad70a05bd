"""Many traces at once: expand paths, directories and globs, check them in parallel, in order.

    traces = expand_traces(["runs/"])                      # every *.jsonl / *.json under runs/
    report = check_many(contract, traces, jobs=4)
    report.passed, [r.trace for r in report.reports], report.failures

Each trace is checked independently by `check_trace` (a pure function of contract and file), in a
process pool when `jobs > 1`; results come back in input order whatever order workers finish in,
so the batch report is as deterministic as a single one. A trace that cannot be read becomes a
`failure` entry (its one-line error) instead of stopping the others.

Folder walks and globs take regular files only (a symlink to one counts): a FIFO named
`x.jsonl` would block the batch, a device would never end. Neither follows a symlinked folder,
so a link back up the tree cannot make a walk endless. Ctrl-C (or SIGTERM) ends the workers at
once rather than letting each finish its trace.
"""
from __future__ import annotations

import glob
import os
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from msgspec import UNSET

from agent_invariants import _signals
from agent_invariants._paths import STDIN, listed_file, missing
from agent_invariants.api import ContractLike, check_trace, compare_traces, job_count
from agent_invariants.contract import Contract, load_contract
from agent_invariants.errors import InputError, TraceError
from agent_invariants.notices import strict_problem
from agent_invariants.output import same_file
from agent_invariants.reader import DEFAULT_MAX_LINE_BYTES, check_file_name
from agent_invariants.report import (
    CHECK_BATCH_SCHEMA,
    COMPARE_BATCH_SCHEMA,
    BatchFailure,
    CheckBatchReport,
    CompareBatchReport,
    ContractRef,
)
from agent_invariants.rules import DEFAULT_MAX_VIOLATIONS

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

__all__ = ("TRACE_SUFFIXES", "batch_failure", "check_file_name", "check_many", "compare_many", "expand_traces",
           "in_processes", "is_single", "named_traces", "pair_traces")

TRACE_SUFFIXES = (".jsonl", ".json", ".ndjson")

Progress = Callable[[int], None]

# More processes than this help no one: the work is CPU-bound, and each costs memory.
_MAX_WORKERS = 4 * (os.cpu_count() or 1)


def expand_traces(specs: Iterable[str], *, exclude: Iterable[str] = ()) -> list[str]:
    """Paths named by `specs`: files as given, directories walked for trace files (sorted), globs
    expanded (sorted). Files in `exclude` (the contract, say) are skipped in directories and
    globs. A directory or pattern that names nothing is an error; standard input (`-`) cannot be
    part of a batch."""
    return [path for _, path in named_traces(specs, exclude=exclude)]


def named_traces(specs: Iterable[str], *, exclude: Iterable[str] = ()) -> list[tuple[str, str]]:
    """`expand_traces` with each path's name for pairing: its path relative to the folder it was
    found in (`sub/run.jsonl`), or its file name when it was given directly or by a pattern."""
    skip = {os.path.realpath(path) for path in _paths(exclude, "exclude")}
    named: list[tuple[str, str]] = []
    for spec in _paths(specs, "specs"):
        if spec == "-":
            raise TraceError(STDIN, None, "standard input can only be checked on its own, not with other traces")
        if os.path.isfile(spec):
            named.append((os.path.basename(spec), spec))
        elif os.path.isdir(spec):
            found = sorted(path for path in _walk(spec) if os.path.realpath(path) not in skip)
            if not found:
                raise TraceError(spec, None, f"directory holds no trace files ({', '.join(TRACE_SUFFIXES)})")
            named += [(os.path.relpath(path, spec).replace(os.sep, "/"), path) for path in found]
        elif glob.has_magic(spec):
            found = sorted(path for path in _glob(spec)
                           if listed_file(path) and os.path.realpath(path) not in skip)
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
    """Trace files under `folder`: regular files (or links to one, or to nowhere: `listed_file`),
    with a trace suffix, neither they nor a folder on the way hidden (as a `**` glob leaves them out)."""
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(name for name in dirs if not name.startswith("."))
        for name in files:
            path = os.path.join(root, name)
            if name.endswith(TRACE_SUFFIXES) and not name.startswith(".") and listed_file(path):
                yield path


def _glob(pattern: str) -> list[str]:
    """`glob.glob(pattern, recursive=True)`, except that `**` does not enter symlinked folders:
    glob's does, and two links back to `.` make its walk exponential. Split at the first `**`,
    the part before it is globbed as usual, each folder below that (hidden ones aside, as glob
    does) is walked once, and the rest is matched in each."""
    parts = pattern.replace(os.sep, "/").split("/")
    if "**" not in parts:
        return glob.glob(pattern)
    at = parts.index("**")
    head = "/".join(parts[:at]) or ("/" if pattern.startswith("/") else "")
    rest = "/".join(parts[at + 1:])
    found: list[str] = []
    for top in (glob.glob(head) if glob.has_magic(head) else [head]):
        for folder in _folders(top):
            if not rest:
                found += [os.path.join(folder, name) for name in _visible(folder)]
            else:
                found += _glob(os.path.join(glob.escape(folder), rest) if folder else rest)
    return list(dict.fromkeys(found))


def _folders(top: str) -> Iterable[str]:
    """`top` (the current folder when empty) and the folders below it, hidden ones left out,
    symlinked ones not entered, named as glob names them."""
    if top and not os.path.isdir(top):
        return
    for root, dirs, _ in os.walk(top or os.curdir):
        dirs[:] = [name for name in dirs if not name.startswith(".")]
        if top:
            yield root
        else:
            relative = os.path.relpath(root)
            yield "" if relative == os.curdir else relative


def _visible(folder: str) -> list[str]:
    try:
        return [name for name in os.listdir(folder or os.curdir) if not name.startswith(".")]
    except OSError:   # unreadable: glob skips it too
        return []


def check_many(contract: ContractLike, traces: Iterable[str | os.PathLike[str]], *, jobs: int = 1,
               max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, max_violations: int = DEFAULT_MAX_VIOLATIONS,
               progress: Progress | None = None, line_lengths: bool = False, strict: bool = False,
               partial: bool = False, count_safety: bool = False) -> CheckBatchReport:
    """Check each trace file against `contract` (paths of files: expand folders and globs with
    `expand_traces` first, as a folder here is a trace that cannot be read); bad traces become
    failures, the rest reports; no trace at all is a ValueError. `max_violations`, `line_lengths`,
    `strict`, `partial` and `count_safety` as for `check_trace`."""
    contract, paths, jobs = load_contract(contract), _paths(traces, "traces"), job_count(jobs)
    if not paths:   # (a glob that found nothing, say: a batch of none would pass having checked nothing)
        raise ValueError("traces is empty: there is no trace to check")
    reports, failures = _run(_check_one, [(contract, path, max_line_bytes, max_violations, line_lengths, strict,
                                           partial, count_safety) for path in paths], jobs, progress)
    return CheckBatchReport(
        schema=CHECK_BATCH_SCHEMA, contract=_reference(contract),
        passed=not failures and all(report.passed for report in reports),
        traces=len(paths), error_count=sum(r.error_count for r in reports),
        warning_count=sum(r.warning_count for r in reports), reports=reports, failures=failures)


def pair_traces(baselines: Sequence[tuple[str, str]], candidates: Sequence[tuple[str, str]], *,
                one_file: bool = False) -> list[tuple[str, str]]:
    """Pair baseline and candidate traces, each given as (name, path) by `named_traces`: every
    candidate with the baseline when it was given as `one_file` (not a folder or a pattern that
    happens to hold one), else by name (the path inside the folder given, or the file name). A
    candidate without a baseline of its name, or a name two baselines share, is an error: a silent
    guess would compare the wrong runs. So is a baseline file that is not there, rather than one
    unreadable pair for each candidate."""
    if one_file:
        shared = baselines[0][1]
        if shared != "-" and not os.path.exists(shared):
            raise TraceError(shared, None, missing(shared))
        return [(shared, path) for _, path in candidates]
    by_name: dict[str, str] = {}
    for name, path in baselines:
        first = by_name.setdefault(name, path)
        if first != path and not same_file(first, path):   # (one file named twice: once)
            raise TraceError(path, None, f"two baseline traces are named {name!r} ({first} and this one); "
                                         "a name must be unique among the baselines (folders pair by the path "
                                         "inside them, files and globs by the file name)")
    pairs = []
    for name, candidate in candidates:
        baseline = by_name.get(name)
        if baseline is None:
            raise TraceError(candidate, None, f"no baseline trace named {name!r} to compare it with")
        pairs.append((baseline, candidate))
    return pairs


def compare_many(contract: ContractLike, pairs: Iterable[tuple[str | os.PathLike[str], str | os.PathLike[str]]], *,
                 jobs: int = 1,
                 max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, max_violations: int = DEFAULT_MAX_VIOLATIONS,
                 progress: Progress | None = None, line_lengths: bool = False,
                 strict: bool = False, partial: bool = False) -> CompareBatchReport:
    """Compare each (baseline, candidate) pair under `contract` (options as for `compare_traces`);
    no pair at all is a ValueError."""
    if isinstance(pairs, (str, bytes, os.PathLike)):
        raise TypeError("pairs is a list of (baseline, candidate) pairs of paths, not one path")
    contract, jobs = load_contract(contract), job_count(jobs)
    both = []
    for pair in pairs:
        if isinstance(pair, (str, bytes, os.PathLike)) or len(pair) != 2:
            raise TypeError(f"pairs holds {pair!r:.200}, not a (baseline, candidate) pair of paths")
        both.append(tuple(_paths(pair, "a pair")))
    if not both:
        raise ValueError("pairs is empty: there is no pair to compare")
    reports, failures = _run(_compare_one, [(contract, b, c, max_line_bytes, max_violations, line_lengths, strict,
                                             partial) for b, c in both], jobs, progress)
    return CompareBatchReport(
        schema=COMPARE_BATCH_SCHEMA, contract=_reference(contract),
        compatible=not failures and all(report.compatible for report in reports),
        pairs=len(both), regressions=sum(report.regression_count for report in reports), reports=reports,
        failures=failures)


def _paths(items: Iterable[Any], what: str) -> list[str]:
    """The paths a caller gave (str or path objects, in any iterable), as text; TypeError for one
    path given alone (it would be read as its characters) or an item that is no path."""
    if isinstance(items, (str, bytes, os.PathLike)):
        raise TypeError(f"{what} is a list of paths, not one path")
    paths = []
    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f"{what} holds {type(item).__name__} {item!r:.200}, not a path")
        paths.append(os.fsdecode(os.fspath(item)))   # (bytes of a path object: its name, never a trace's bytes)
    return paths


def _check_one(contract: Contract, path: str, max_line_bytes: int, max_violations: int, line_lengths: bool,
               strict: bool, partial: bool, count_safety: bool) -> Any:
    try:
        check_file_name(path)
        report = check_trace(contract, path, max_line_bytes=max_line_bytes, max_violations=max_violations,
                             line_lengths=line_lengths, strict=strict, partial=partial, count_safety=count_safety)
    except InputError as exc:
        return batch_failure(path, exc)
    problem = strict_problem(path, report) if strict else None   # --strict: bad input, as above
    return report if problem is None else BatchFailure(trace=_as_text(path), error=problem)


def _compare_one(contract: Contract, baseline: str, candidate: str, max_line_bytes: int, max_violations: int,
                 line_lengths: bool, strict: bool, partial: bool) -> Any:
    try:
        check_file_name(baseline)
        check_file_name(candidate)
        report = compare_traces(contract, baseline, candidate, max_line_bytes=max_line_bytes,
                                max_violations=max_violations, line_lengths=line_lengths, strict=strict,
                                partial=partial)
    except InputError as exc:
        if not (isinstance(exc, TraceError) and exc.source == baseline):
            return batch_failure(candidate, exc)
        # the baseline is the one that cannot be read: named, and the candidate read on its own,
        # so that a candidate unreadable too is named now, not after the baseline is mended
        failures = [batch_failure(baseline, exc)]
        if candidate != baseline:
            alone = _check_one(contract, candidate, max_line_bytes, max_violations, line_lengths, strict, partial,
                               False)
            if isinstance(alone, BatchFailure):
                failures.append(alone)
        return failures
    if strict:   # --strict: a trace with notices is bad input, named as the unreadable ones are
        for path, checked in ((baseline, report.baseline), (candidate, report.candidate)):
            problem = strict_problem(path, checked)
            if problem:
                return BatchFailure(trace=_as_text(path), error=problem)
    return report


def batch_failure(path: str, exc: InputError) -> BatchFailure:
    """The failure of the trace at `path` (a file, or a run of it) in a batch report, with the
    line of that file the error names, if any."""
    line = exc.line if isinstance(exc, TraceError) and exc.source == path and exc.line is not None else UNSET
    return BatchFailure(trace=_as_text(path), error=str(exc), line=line)


def _as_text(path: str) -> str:
    """`path` with undecodable bytes as `\\udcff` escapes, so any report format can hold it."""
    return path.encode("utf-8", "backslashreplace").decode("utf-8")


def _reference(contract: Contract) -> ContractRef:
    return ContractRef(name=contract.name, version=contract.version)


def _run(task: Callable[..., Any], arguments: list[tuple[Any, ...]], jobs: int,
         progress: Progress | None) -> tuple[list[Any], list[BatchFailure]]:
    """The reports and the failures `task(*a)` returns for each `a` (a report, a failure, or a
    list of failures: a pair of traces that are both unreadable), each in order."""
    outcomes = in_processes(task, arguments, jobs, progress)
    failures: list[BatchFailure] = []
    for outcome in outcomes:
        if isinstance(outcome, BatchFailure):
            failures.append(outcome)
        elif isinstance(outcome, list):
            failures += outcome
    return [outcome for outcome in outcomes if not isinstance(outcome, (BatchFailure, list))], failures


def in_processes(task: Callable[..., Any], arguments: list[tuple[Any, ...]], jobs: int,
                 progress: Progress | None = None) -> list[Any]:
    """Results of `task(*a)` for each `a`, in order; in up to `jobs` processes when that helps
    (never more than there are tasks, nor more than `_MAX_WORKERS`)."""
    workers = min(jobs, len(arguments), _MAX_WORKERS)
    if workers > 1:
        from concurrent.futures import ProcessPoolExecutor  # here: a single trace never needs it

        try:
            pool = ProcessPoolExecutor(max_workers=workers, initializer=_signals.quiet_worker)
        except (OSError, NotImplementedError):   # no working semaphores (a read-only /dev/shm, say)
            pass
        else:
            return _run_in(pool, task, arguments, progress)
    results = []
    for args in arguments:
        results.append(task(*args))
        if progress:
            progress(1)
    return results


def _run_in(pool: ProcessPoolExecutor, task: Callable[..., Any], arguments: list[tuple[Any, ...]],
            progress: Progress | None) -> list[Any]:
    """`in_processes` in the worker processes of `pool`. If anything stops the wait (Ctrl-C, SIGTERM),
    the workers are ended there and then, and no task is left to run."""
    futures: list[Future[Any]] = []
    try:
        with _signals.held():   # workers start during the first submit; see quiet_worker
            for args in arguments:
                futures.append(pool.submit(task, *args))
        if progress:
            for future in futures:
                future.add_done_callback(lambda _: progress(1))
        results = [future.result() for future in futures]
    except BaseException:
        _signals.end_workers(pool)
        raise
    pool.shutdown()
    return results
