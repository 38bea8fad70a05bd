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

from typing import Any, Generic, TypeVar

from msgspec import UNSET, UnsetType

__all__ = ("Pairing",)

Call = TypeVar("Call")


class _Several(list):  # type: ignore[type-arg]
    """The calls waiting under one call_id, when there are several (the newest last)."""

    __slots__ = ()


class Pairing(Generic[Call]):
    """The calls waiting for a result, by `call_id`: one call, or `_Several` (the newest last).
    (One call per id is the rule; a list per id would double the cost of a pairing.)"""

    __slots__ = ("_waiting",)

    def __init__(self) -> None:
        self._waiting: dict[str, Any] = {}

    def call(self, call_id: str | UnsetType, call: Call) -> None:
        """A `tool.call` (with its id, if any): it waits for its result."""
        if call_id is UNSET:
            return
        waiting = self._waiting
        found = waiting.get(call_id, _NONE)
        if found is _NONE:
            waiting[call_id] = call
        elif found.__class__ is _Several:
            found.append(call)
        else:
            waiting[call_id] = _Several((found, call))

    def result(self, call_id: str | UnsetType) -> Call | None:
        """A `tool.result`: the call it answers (which then waits no more), or None (an orphan)."""
        if call_id is UNSET:
            return None
        waiting = self._waiting
        found = waiting.pop(call_id, _NONE)
        if found is _NONE:
            return None
        if found.__class__ is not _Several:
            return found   # type: ignore[no-any-return]
        call = found.pop()
        if len(found) > 1:
            waiting[call_id] = found
        else:
            waiting[call_id] = found[0]
        return call   # type: ignore[no-any-return]

    def waiting(self) -> int:
        """How many calls have no result yet."""
        return sum(len(found) if found.__class__ is _Several else 1 for found in self._waiting.values())


_NONE: Any = object()
