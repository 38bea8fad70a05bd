"""Calls and their results, paired one to one, for the kinds of contract version 2.

A `tool.result` belongs to the nearest earlier `tool.call` with the same `call_id` that has no
result yet (spec/v2-extensions.md §10, point 3). So a call made twice with one id and answered
twice gets one result each, the later call the first answer; a result with no such call is an
*orphan* (it keeps its own `tool`, and has no args); a call without a `call_id` never gets a
result. In the new kinds a paired result's tool and args are its call's.

`Pairing` is fed calls and results in trace order and keeps only the calls still waiting for a
result (memory grows with unanswered calls only, as tool_result_required's does).

    pairing = Pairing()
    pairing.call(call.call_id, call)          # whatever the kind keeps of a call
    pairing.result(result.call_id)            # -> what was kept of the call it answers, or None
"""
from __future__ import annotations

from typing import Generic, TypeVar

from msgspec import UNSET, UnsetType

__all__ = ("Pairing",)

Call = TypeVar("Call")


class Pairing(Generic[Call]):
    """The calls waiting for a result, by `call_id`: the newest last."""

    __slots__ = ("_waiting",)

    def __init__(self) -> None:
        self._waiting: dict[str, list[Call]] = {}

    def call(self, call_id: str | UnsetType, call: Call) -> None:
        """A `tool.call` (with its id, if any): it waits for its result."""
        if call_id is not UNSET:
            self._waiting.setdefault(call_id, []).append(call)

    def result(self, call_id: str | UnsetType) -> Call | None:
        """A `tool.result`: the call it answers (which then waits no more), or None (an orphan)."""
        if call_id is UNSET:
            return None
        waiting = self._waiting.get(call_id)
        if not waiting:
            return None
        call = waiting.pop()
        if not waiting:
            del self._waiting[call_id]
        return call

    def waiting(self) -> int:
        """How many calls have no result yet."""
        return sum(map(len, self._waiting.values()))
