"""The `agent-invariants/mutate/v1` report (spec §6, §10 point 66)."""
from __future__ import annotations

from typing import Literal

import msgspec
from msgspec import UNSET, UnsetType

from agent_invariants._paths import STDIN

__all__ = ("ControlScore", "FalsePositive", "MutantResult", "MutateReport", "Survivor", "false_positive_text",
           "over_block_text", "survivor_text")

Status = Literal["invalid", "equivalent", "killed", "survived"]


class MutantResult(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What became of one mutant."""

    id: str
    """`<operator>:<seq of the site event in the trace>[:<detail>]`, e.g. `change_arg:20:/amount`."""
    operator: str
    """The operator that made it, e.g. `drop_approval`."""
    status: Status
    """`invalid` (not a valid trace), `equivalent` (behaves as the original), `killed` (an
    error-severity violation) or `survived`."""
    killed_by: list[str]
    """The rules with an error-severity violation, in contract order: those that killed it, or,
    for an `over_block` equivalent, those that reject a run that behaves as the original."""
    warned: bool | UnsetType = UNSET
    """True for a survivor that drew warnings; absent otherwise."""
    over_block: bool | UnsetType = UNSET
    """True for an equivalent mutant that the contract rejects; absent otherwise."""


class Survivor(msgspec.Struct, kw_only=True):
    """A mutant no error-severity rule noticed, and what would."""

    id: str
    """The mutant's id."""
    hint: str
    """The rule kinds that kill mutants of its operator (the table of spec §6)."""


class ControlScore(msgspec.Struct, kw_only=True):
    """The negative control: a contract that checks almost nothing, scored on the same mutants."""

    auto: bool
    """True when mutate wrote it (the run status and one call of each tool); false for `--control`."""
    contract_sha256: str
    """SHA-256 of its file's bytes (of its JSON as written by mutate, for the auto control)."""
    score: float | None
    """killed / (killed + survived) under the control; null when no mutant was scored."""
    killed: int
    """Scored mutants the control rejects."""
    survived: int
    """Scored mutants the control passes."""
    too_easy: bool
    """True when the control scores above 0 and at least half the contract's score: the mutants are
    then too easy to tell a good contract from a trivial one."""


class FalsePositive(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A rewrite that keeps the trace's behaviour, yet fails the contract."""

    rewrite: str
    """`renumber`, `heartbeat`, `comments`, `reorder_keys`, `json_array` or `corpus`."""
    file: str | UnsetType = UNSET
    """For `corpus`: the file that failed."""
    killed_by: list[str]
    """The rules with an error-severity violation, in contract order."""


class MutateReport(msgspec.Struct, kw_only=True):
    """How many small breakages of a passing trace the contract notices."""

    schema: str
    """Always `agent-invariants/mutate/v1`."""
    contract_sha256: str
    """SHA-256 of the contract file's bytes."""
    trace_sha256: str
    """SHA-256 of the trace file's bytes."""
    score: float | None
    """killed / (killed + survived); null when there is no such mutant."""
    killed: int
    """Mutants with an error-severity violation."""
    survived: int
    """Mutants without one (and not equivalent)."""
    warned: int
    """Survivors that drew warnings (counted in `survived` too)."""
    equivalent: int
    """Mutants that behave as the original trace (by the fingerprint): not scored."""
    over_block: int
    """Equivalent mutants the contract rejects (counted in `equivalent` too)."""
    invalid: int
    """Mutants that are not valid traces for the contract's version: not scored."""
    mutants: list[MutantResult]
    """Every mutant tried, in the order they were made."""
    survivors: list[Survivor]
    """The survived mutants, in order, each with the rule kinds that would kill it."""
    control: ControlScore
    """The negative control's score on the same mutants."""
    false_positives: list[FalsePositive]
    """One entry per rewrite (per corpus file) that fails the contract."""
    trace: str | UnsetType = UNSET
    """(An addition.) The trace file as named by the user (`<stdin>`, or `<bytes>` for a trace
    given to the library as bytes)."""

    @property
    def trace_file(self) -> str | None:
        """The trace's file, for the formats that point into it; None for standard input or bytes."""
        return None if self.trace in (UNSET, STDIN, "<bytes>") else str(self.trace)


def survivor_text(survivor: Survivor) -> str:
    """One line on a survivor, as the formats that list findings say it."""
    return f"Mutant {survivor.id} survived: no error-severity rule rejects it; would be killed by: {survivor.hint}."


def over_block_text(mutant: MutantResult) -> str:
    """One line on an equivalent mutant that the contract still rejects."""
    return (f"Mutant {mutant.id} behaves as the original trace, yet {', '.join(mutant.killed_by)} "
            f"{'rejects' if len(mutant.killed_by) == 1 else 'reject'} it: the contract blocks a good run.")


def false_positive_text(found: FalsePositive) -> str:
    """One line on a rewrite that keeps the behaviour and fails the contract."""
    what = f"The corpus trace {found.file}" if found.file is not UNSET else f"The {found.rewrite} rewrite of the trace"
    return (f"{what} keeps its behaviour, yet fails {', '.join(found.killed_by)} (a rule that counts positions, "
            "such as within_events or max_events?).")
