"""The terminal event of a run, as the kinds of contract version 2 read it (spec v2 §0).

The *terminal* is the last `run.completed` or `run.failed` of the trace; the *final output* is its
`output` (a `run.failed` may carry one); the *run status* is its `status`, or `completed` /
`failed` by its type, or `none` when the trace has no terminal. Rules that read them keep one
`Terminal`, route both types to `seen`, and ask at the end.
"""
from __future__ import annotations

from typing import Any

from msgspec import UNSET, UnsetType

from agent_invariants._js import js_number
from agent_invariants.events import Event
from agent_invariants.match.paths import NOT_FOUND
from agent_invariants.payloads import decoded, text

__all__ = ("NO_OUTPUT", "TERMINAL_TYPES", "Terminal", "run_status")

TERMINAL_TYPES = ("run.completed", "run.failed")

NO_OUTPUT: Any = NOT_FOUND
"""The final output of a trace without a terminal event, or whose terminal has no `output`."""


class Terminal:
    """The last terminal event seen so far (a rule's handler for both types is `seen`)."""

    __slots__ = ("event", "index")

    def __init__(self) -> None:
        self.event: Event | None = None
        self.index = -1

    def seen(self, event: Event, index: int) -> None:
        self.event, self.index = event, index

    @property
    def seq(self) -> int | float | UnsetType:
        """The terminal's seq, or UNSET without one (its violations then have no event)."""
        return UNSET if self.event is None else self.event.seq

    @property
    def position(self) -> int | UnsetType:
        """The terminal's index in the trace, or UNSET without one."""
        return UNSET if self.event is None else self.index

    def output(self) -> Any:
        """The final output (null is an output), or NO_OUTPUT."""
        if self.event is None or self.event.output is UNSET:
            return NO_OUTPUT
        return decoded(self.event.output)

    def no_output(self) -> str | None:
        """Why there is no final output (for a message), or None when there is one."""
        if self.event is None:
            return "the trace has no run.completed or run.failed event"
        if self.event.output is UNSET:
            return f"the terminal event (seq {js_number(self.event.seq)}) has no output"
        return None

    def status(self) -> str:
        """The run status: the terminal's `status`, else `completed` or `failed` by its type; `none`
        without a terminal."""
        if self.event is None:
            return "none"
        return run_status(self.event.type, text(self.event.status))


def run_status(terminal_type: str | None, own: str | None) -> str:
    """The run status of a trace whose terminal event is of `terminal_type` (None: it has none)
    with `own` as its `status` (None: none, or not a string)."""
    if terminal_type is None:
        return "none"
    if own is not None:
        return own
    return "completed" if terminal_type == "run.completed" else "failed"
