"""An evaluation's outcome as violations say it: the `mismatch` and `reference_unresolved` of
tool_args (on a call's args) and output_match (on the final output), one home for both.

    for finding in findings(outcome, "/args"):
        rule.report(finding.reason, finding.detail, {finding.key: finding.listed}, finding.pointer, finding.status)
"""
from __future__ import annotations

import math
from typing import Any, Literal, NamedTuple

import msgspec

from agent_invariants._js import JSNumber, js_number_hook
from agent_invariants._safe import inert
from agent_invariants.match.canonical import evidence_value
from agent_invariants.match.equality import as_double
from agent_invariants.match.tree import Outcome

__all__ = ("MAX_LISTED", "Finding", "findings", "shown")

MAX_LISTED = 20
"""The most mismatches, unresolved references or schema errors one violation lists."""


class Finding(NamedTuple):
    """One violation's worth of an outcome."""

    reason: Literal["mismatch", "reference_unresolved"]
    detail: str                        # `/args/amount expected any of [10], got 12`, `/args/x: no candidates`
    key: Literal["mismatches", "unresolved"]
    listed: list[dict[str, Any]]       # at most MAX_LISTED entries, pointers into the event
    pointer: str                       # the first entry's
    status: Literal["fail", "unresolved"]


def findings(outcome: Outcome, at: str) -> list[Finding]:
    """The mismatch finding (if any), then the unresolved one, with pointers under `at`."""
    found = []
    if outcome.mismatches:
        listed = [{**entry, "pointer": at + entry["pointer"]} for entry in outcome.mismatches[:MAX_LISTED]]
        first = evidence_value(listed[0])
        detail = f"{first['pointer']} expected {shown(first['expected'])}"
        resolved = outcome.resolved.get(0)
        if resolved:   # the references of that operator object, as they resolved (the first MAX_LISTED)
            detail += " where " + ", ".join(f"{name} is {shown(evidence_value(value))}"
                                            for name, value in resolved[:MAX_LISTED])
            if len(resolved) > MAX_LISTED:
                detail += f", and {len(resolved) - MAX_LISTED} more"
        if "actual" in first:   # (evidence shows a number beyond any double as null: JSON has no Infinity)
            beyond = _beyond_double(listed[0]["actual"])
            detail += f", got a number beyond any double (read as {beyond})" if beyond else \
                f", got {shown(first['actual'])}"
        more = len(outcome.mismatches) - 1
        if more:
            detail += f" (and {more} more)"
        found.append(Finding("mismatch", detail, "mismatches", listed, listed[0]["pointer"], "fail"))
    if outcome.unresolved:
        listed = [{**entry, "pointer": at + entry["pointer"]} for entry in outcome.unresolved[:MAX_LISTED]]
        first = listed[0]
        detail = f"{first['pointer']}: {first['reason'].replace('_', ' ')}"
        found.append(Finding("reference_unresolved", detail, "unresolved", listed, first["pointer"], "unresolved"))
    return found


def _beyond_double(value: Any) -> str | None:
    """`Infinity` or `-Infinity` for a JSON number no double holds (`1e400`, an integer of 400
    digits), as JavaScript reads it; None for any other value."""
    if value.__class__ not in (int, float):
        return None
    double = as_double(value)
    return None if math.isfinite(double) else "Infinity" if double > 0 else "-Infinity"


def shown(value: Any) -> str:
    """A value as a message shows it: compact JSON, cut at 80 characters; a reference's
    candidates as `any of [...]`."""
    if isinstance(value, dict) and list(value) == ["any_of"]:
        return "any of " + shown(value["any_of"])
    return inert(msgspec.json.encode(_spelled(value), enc_hook=js_number_hook).decode(), 79)


def _spelled(value: Any) -> Any:
    """`value` with each number no double holds (`1e400`, read as JavaScript reads it) written
    `Infinity`, as JavaScript writes it: JSON has no such number, and a message that said `null`
    would name another value. (Evidence, which is JSON, holds null.)"""
    if value.__class__ is float:
        return value if math.isfinite(value) else JSNumber(value)
    if isinstance(value, list):
        return [_spelled(item) for item in value]
    if isinstance(value, dict):
        return {key: _spelled(item) for key, item in value.items()}
    return value
