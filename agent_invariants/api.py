"""The library's entry points: what a user names (paths, bytes, mappings, events) in, reports out.

    report = check_trace("agent-invariants.json", "run.jsonl")
    compat = compare_traces(contract, "baseline.jsonl", "candidate.jsonl")

Each function loads the contract (`load_contract`) and opens the traces (`open_trace`), then hands
them to the code that works on loaded things only: the engine (`engine.run_check`) and compare
(`compare.run_compare`). The CLI, the batch runner and the MCP server call these functions too.
"""
from __future__ import annotations

import operator
import os
from collections.abc import Mapping
from typing import Any

from agent_invariants.compare import run_compare
from agent_invariants.contract import Contract, load_contract
from agent_invariants.engine import Trace, run_check, run_observers
from agent_invariants.reader import DEFAULT_MAX_LINE_BYTES, open_trace
from agent_invariants.report import CheckReport, CompareReport, TraceSummary
from agent_invariants.rules import DEFAULT_MAX_VIOLATIONS
from agent_invariants.summary import SummaryCounter

__all__ = ("ContractLike", "check_trace", "compare_traces", "job_count", "summarize_trace")

ContractLike = Contract | Mapping[str, Any] | str | os.PathLike[str]
"""A contract as callers name it: loaded, a parsed mapping, or a path."""


def check_trace(contract: ContractLike, trace: Trace, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
                max_violations: int = DEFAULT_MAX_VIOLATIONS, line_lengths: bool = False,
                strict: bool = False, partial: bool = False, count_safety: bool = False) -> CheckReport:
    """Check one trace against a contract.

    `trace` is a path (`-` for standard input), the bytes of a trace file, a list of events
    (dicts or `Event`s) or a `TraceSource`. Each rule keeps its first `max_violations`
    violations (all rules together at most 100,000, or 100 times `max_violations`: `kept_per_rule`
    in `rules`; 0: all of them, and memory grows with them); the counts and the verdict include
    every one. With `line_lengths`, violations in a trace file also get the length of their line
    (`line_length`, which SARIF regions need). With `strict`, a rule that checked nothing fails
    (see `CheckReport.notices`). With `partial`, the trace is taken as cut short (a crashed or
    still-running agent): violations of the rules' liveness parts are `inconclusive` and left out
    of the verdict and counts. With `count_safety`, the report's `safety_error_count` says how many
    error violations come from safety parts of rules (`--safety-exit`). Raises `InputError` for a
    bad contract or trace.
    """
    source = open_trace(trace, max_line_bytes=max_line_bytes, line_lengths=line_lengths)
    return run_check(load_contract(contract), source, max_violations, strict=strict, partial=partial,
                     count_safety=count_safety).report


def compare_traces(contract: ContractLike, baseline: Trace, candidate: Trace, *,
                   max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, max_violations: int = DEFAULT_MAX_VIOLATIONS,
                   jobs: int = 1, line_lengths: bool = False, strict: bool = False,
                   partial: bool = False) -> CompareReport:
    """Check both traces under `contract` and report what the candidate made worse.

    Each rule keeps its first `max_violations` violations in each report (0: all); the counts,
    and so the regressions, include every one. `line_lengths`, `strict` and `partial` (both
    traces taken as cut short) as for `check_trace`.

    With `jobs` > 1, when both traces are files and the baseline is large (8 MiB or more), the
    baseline is checked in a second process while this one checks the candidate: on two cores a
    compare then takes about as long as one check. The report is the same either way, and so is
    the error when a trace is bad (the baseline's comes first).
    """
    return run_compare(load_contract(contract), baseline, candidate, max_line_bytes=max_line_bytes,
                       max_violations=max_violations, jobs=job_count(jobs), line_lengths=line_lengths, strict=strict,
                       partial=partial)


def job_count(jobs: Any) -> int:
    """`jobs` as the count of processes it says: an integer of at least 1 (ValueError else)."""
    try:
        count = operator.index(jobs)   # (an int, or what stands for one: not 2.5 or "2")
    except TypeError:
        count = 0
    if count < 1:
        raise ValueError(f"jobs must be an integer of at least 1, got {jobs!r:.200}")
    return count


def summarize_trace(trace: Trace) -> TraceSummary:
    """Count tools, approvals, failures, outcomes and completion claims in a trace."""
    counter = SummaryCounter()
    events = run_observers(open_trace(trace), [counter])
    return counter.finish(events)
