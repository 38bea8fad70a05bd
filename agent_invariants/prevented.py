"""Calls that were stopped: `prevented: true` on each violation at a call a `tool.denied` answered.

    {"seq": 1, "type": "tool.call", "tool": "shell.exec", "call_id": "c1"}
    {"seq": 2, "type": "tool.denied", "tool": "shell.exec", "call_id": "c1", "reason": "no-shell: ..."}

A denied call stays in the trace and counts wherever a call counts, so a rule that forbids it
still reports it; the report then says the attempt was stopped (spec/v2-extensions.md §10, points
75 and 84). `record --enforce` writes such denials, and `check` of the recorded file must give the
same report, so both mark violations here: every kind's, as point 75 says, with a field of the
violation beside `code` and `status` (evidence stays as each kind gives it: a version-1 kind's as
version 1's, point 1). `check` marks them under version 2 only: a version-1 contract's report
stays as version 1 wrote it.

A denial answers the nearest earlier call with its `call_id` that has no result and no denial
yet; the check's one pairing of calls and results (`pairing.Calls`, which every version-2 check
has) finds it, and keeps the indexes of the denied calls.
"""
from __future__ import annotations

from collections.abc import Iterable

from agent_invariants.rules.base import Rule

__all__ = ("mark_prevented",)


def mark_prevented(rules: Iterable[Rule], at: set[int], *, by_seq: bool = False) -> None:
    """Set `prevented` on each kept violation at one of these calls (event indexes; seqs with
    `by_seq`)."""
    if not at:
        return
    for rule in rules:
        for violation in rule.violations:
            if (violation.event_seq if by_seq else violation.event_index) in at:
                violation.prevented = True
