"""Calls that were stopped: `prevented: true` on each violation at a call a `tool.denied` answered.

    {"seq": 1, "type": "tool.call", "tool": "shell.exec", "call_id": "c1"}
    {"seq": 2, "type": "tool.denied", "tool": "shell.exec", "call_id": "c1", "reason": "no-shell: ..."}

A denied call stays in the trace and counts wherever a call counts, so a rule that forbids it
still reports it; the report then says the attempt was stopped (spec/v2-extensions.md §10, points
75 and 84). `record --enforce` writes such denials, and `check` of the recorded file must give the
same report, so both mark violations here, in their evidence: every kind's, as point 75 says (a
version-1 kind's evidence keeps its order, `prevented` last; a version-2 kind's is canonical).
`check` marks them under version 2 only: a version-1 contract's report stays as version 1 wrote it.

A denial answers the nearest earlier call with its `call_id` that has no result and no denial
yet; the check's one pairing of calls and results (`pairing.Calls`, which every version-2 check
has) finds it, and keeps the indexes of the denied calls.
"""
from __future__ import annotations

from collections.abc import Iterable

from msgspec import UNSET

from agent_invariants.match.canonical import evidence_value
from agent_invariants.report import Violation
from agent_invariants.rules.base import Rule

__all__ = ("mark_prevented",)


def mark_prevented(rules: Iterable[Rule], at: set[int], *, by_seq: bool = False) -> None:
    """Add `prevented: true` to the evidence of each kept violation at one of these calls (event
    indexes; seqs with `by_seq`)."""
    if not at:
        return
    for rule in rules:
        canonical = getattr(rule.config, "since_version", 1) >= 2
        for violation in rule.violations:
            where = violation.event_seq if by_seq else violation.event_index
            if where in at:
                _mark(violation, canonical)


def _mark(violation: Violation, canonical: bool) -> None:
    evidence = {} if violation.evidence is UNSET else violation.evidence
    if evidence.get("prevented") is not True:
        evidence = {**evidence, "prevented": True}
        violation.evidence = evidence_value(evidence) if canonical else evidence
