"""Judging the mutants: make each, tell whether it behaves as the original, check it.

Every mutant is independent of the others, so with `jobs` > 1 the kept mutants are split into
runs of consecutive indexes, one task each, in the batch check's process pool. A worker gets the
trace's bytes and lines, not the mutants: it reads the trace again, lists the same candidates
(the list is deterministic) and makes, fingerprints, writes and checks only the mutants of its
tasks, so the parent holds no mutant and the whole of the work is shared. A worker keeps what it
read of the trace for its next task.
"""
from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from typing import NamedTuple

from agent_invariants.batch import in_processes
from agent_invariants.contract import Contract
from agent_invariants.engine import run_check
from agent_invariants.errors import InputError
from agent_invariants.mutate.fingerprint import Fingerprint, Fingerprints
from agent_invariants.mutate.operators import Candidate, Candidates, as_mutant
from agent_invariants.mutate.trace import Original, as_jsonl, parsed
from agent_invariants.reader import TraceFile
from agent_invariants.report import CheckReport

__all__ = ("Outcome", "Work", "check_made", "error_rules", "judged", "kept")

_AUTO_EVENTS = 200_000
"""With `jobs` 0 (automatic), mutants whose events add up to this many are checked in every core."""


class Outcome(NamedTuple):
    """How one mutant fared: whether it behaves as the original, the contract's error rules
    (None: not a valid trace), whether it drew warnings, and whether the control rejects it
    (None when it is not scored: invalid or equivalent, or not a valid trace for the control)."""

    equivalent: bool
    errors: list[str] | None
    warned: bool
    control_kills: bool | None


class Work(NamedTuple):
    """What judging needs besides the trace: both contracts, the read-only tool globs, the cap."""

    contract: Contract
    control: Contract
    control_events: int
    """The version the control reads events as: the contract's (the auto control is of version-2
    kinds, yet must read a version-1 trace as version 1 does)."""
    reads: tuple[str, ...]
    max_mutants: int


def kept(original: Original, cap: int) -> list[Candidate]:
    """All candidates, or `cap` of them evenly spread: those at index ⌊i·N/cap⌋ (spec §10 point 61).
    The candidates are listed twice, counted then picked, so that only the kept ones are held."""
    found = Candidates(original.events, original.seqs)
    total = sum(1 for _ in found)
    if total <= cap:
        return list(found)
    wanted = {number * total // cap for number in range(cap)}
    return [candidate for number, candidate in enumerate(found) if number in wanted]


def judged(original: Original, work: Work, jobs: int) -> tuple[list[Candidate], list[Outcome]]:
    """The kept mutants of `original` and the outcome of each, in up to `jobs` processes (0: as
    many as there are cores when the work is large enough to pay for starting them)."""
    mutants = _Mutants(original, work)
    count = len(mutants.found)
    if jobs == 0:
        jobs = (os.cpu_count() or 1) if count * max(len(original.events), 1) >= _AUTO_EVENTS else 1
    if jobs <= 1 or count < 2:
        return mutants.found, [mutants.outcome(index) for index in range(count)]
    size = -(-count // (jobs * 4))
    tasks = [(original.label, original.data, original.lines, work, start, min(start + size, count))
             for start in range(0, count, size)]
    return mutants.found, [outcome for part in in_processes(_task, tasks, jobs) for outcome in part]


class _Mutants:
    """The kept mutants of one trace under one `Work`, made and judged one at a time."""

    def __init__(self, original: Original, work: Work) -> None:
        self.original = original
        self.work = work
        self.found = kept(original, work.max_mutants)
        self._fingerprints = Fingerprints(work.reads)
        self._before: Fingerprint = self._fingerprints.of(original.events, remember=True)

    def outcome(self, index: int) -> Outcome:
        events = self.found[index].make()
        equivalent = self._fingerprints.of(events).same_as(self._before)
        text = as_jsonl(as_mutant(events))
        del events
        work = self.work
        errors, warned = _verdict(work.contract, text, work.contract.version)
        if errors is None or equivalent:
            return Outcome(equivalent, errors, warned, None)
        control_errors, _ = _verdict(work.control, text, work.control_events)
        # a mutant a version-2 control cannot read (a version-1 contract's trace, where inflating a
        # duration made it infinite) is not scored for it: failing to read is not a violation
        return Outcome(equivalent, errors, warned, None if control_errors is None else bool(control_errors))


_CACHED: dict[bytes, _Mutants] = {}
"""In a worker: the mutants of the trace it was last given, by the trace's hash (a pool serves
one mutate run, so the contracts are the same in every task)."""


def _task(label: str, data: bytes, lines: Sequence[int | None], work: Work, start: int,
          stop: int) -> list[Outcome]:
    key = hashlib.sha256(data).digest()
    mutants = _CACHED.get(key)
    if mutants is None:
        _CACHED.clear()
        mutants = _CACHED[key] = _Mutants(parsed(label, data, list(lines), {}), work)
    return [mutants.outcome(index) for index in range(start, stop)]


def check_made(contract: Contract, text: bytes, label: str, events_version: int | None = None) -> CheckReport:
    """`check` of a trace mutate wrote (a mutant, a rewrite): read without a line limit, as its
    lines may be longer than the original's (the whole is at most a few times the 64 MiB input)."""
    source = TraceFile(text, name=label, max_line_bytes=len(text) + 1)
    return run_check(contract, source, 1, events_version=events_version).report


def _verdict(contract: Contract, text: bytes, events_version: int) -> tuple[list[str] | None, bool]:
    """The error rules of `contract` on a mutant (None when it is not a valid trace), and
    whether it drew warnings."""
    try:
        checked = check_made(contract, text, "mutant", events_version)
    except InputError:
        return None, False
    return error_rules(checked), checked.warning_count > 0


def error_rules(checked: CheckReport) -> list[str]:
    """The rules with an error-severity violation, in contract order."""
    return [result.rule_id for result in checked.results if not result.passed and result.severity == "error"]
