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

`Calls` is the one `Pairing` of a check that the engine shares among the rules that read a
result as its call's (`Rule.pairs_calls`): the trace's calls are then paired once, however many
rules read them, and each rule gets the results of the calls it asked for.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

import msgspec
from msgspec import UNSET, Raw, UnsetType

from agent_invariants.globs import compile_glob

__all__ = ("Calls", "PairedCall", "Pairing")

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

    def pending(self) -> list[Call]:
        """The calls that have no result yet, in no particular order."""
        found: list[Call] = []
        for waiting in self._waiting.values():
            if waiting.__class__ is _Several:
                found.extend(waiting)
            else:
                found.append(waiting)
        return found

    def waiting(self) -> int:
        """How many calls have no result yet."""
        return sum(len(found) if found.__class__ is _Several else 1 for found in self._waiting.values())


_NONE: Any = object()


class PairedCall(msgspec.Struct, gc=False, frozen=True):
    """What the kinds of version 2 read of a call through its result."""

    tool: str | UnsetType
    call_id: str
    seq: int | float
    position: int                   # the call event's index in the trace
    args: Raw | UnsetType           # a copy: the call's event, and what it was read from, are let go
    time: str | UnsetType = UNSET   # the call's `time`


ResultReader = Callable[[Any, int, PairedCall | None], None]
"""A rule's handler of results: called with the `tool.result` event, its index, and the call it
answers (None for an orphan)."""

_READERS_CACHE_LIMIT = 65_536


class Calls(Pairing[Any]):
    """The one pairing of a check, shared by every rule that reads a result as its call's.

    In the kinds of version 2, a result's tool and args are its call's, so such rules cannot be
    routed results by the result's own `tool` as the engine routes events. The engine makes one
    `Calls` in every version-2 check (it also learns which calls a `tool.denied` answered, whose
    violations are `prevented`), and lets it see every `tool.call`, `tool.result` and
    `tool.denied` before any rule does; each rule that reads results asks it, through
    `read_results`, for the results of the calls of some tools. A trace's calls are then paired
    once however many rules read them, and a rule's handler runs only for the results it asked
    for (looked up once per tool).

    It keeps each call that is still waiting for its result, with a copy of its args (not the
    event, whose payloads hold the buffer they were read from).
    """

    __slots__ = ("_arg_tools", "_args", "_of_calls", "_of_orphans", "_read", "_readers", "denied")

    def __init__(self) -> None:
        super().__init__()
        self._args: list[Callable[[str], Any] | None] = []   # the tools of the readers that read args (None: any)
        self._arg_tools: tuple[str, ...] | None = ()        # their globs (None: some reads every call's)
        self._read: tuple[str, ...] | None = ()   # the globs of the tools whose calls' results are read (None: all)
        self._readers: list[tuple[Callable[[str], Any] | None, bool, ResultReader, bool | None]] = []
        # by the call's tool (or, for orphans, the result's own): the readers of a result that is
        # not `ok: false`, and of one that is
        self._of_calls: dict[str | UnsetType, tuple[tuple[ResultReader, ...], tuple[ResultReader, ...]]] = {}
        self._of_orphans: dict[str | UnsetType, tuple[tuple[ResultReader, ...], tuple[ResultReader, ...]]] = {}
        self.denied: set[int] = set()   # the indexes of the calls a tool.denied answered (`prevented`)

    def read_results(self, reader: ResultReader, tools: Sequence[str] | None, *, orphans: bool,
                     args: bool = False, failed: bool | None = None) -> None:
        """Call `reader(result, index, call)` for each `tool.result` that answers a call whose
        tool matches one of the globs `tools` (None: any call, with a tool or not) and, with
        `orphans`, for each result that answers none, by its own tool (`call` is then None).
        With `args`, the reader reads the call's args (else `call.args` may be UNSET). With
        `failed` True, only the results that are `ok: false`; False, only the others (a reader
        called for every result costs most checks more than what it does with one)."""
        matchers = None if tools is None else [compile_glob(glob) for glob in tools]
        is_tool = None if matchers is None else (lambda tool: any(matches(tool) for matches in matchers))
        self._readers.append((is_tool, orphans, reader, failed))
        if args:
            self._args.append(is_tool)
            self._arg_tools = None if tools is None or self._arg_tools is None else (*self._arg_tools, *tools)
        self._read = None if tools is None or self._read is None else (*self._read, *tools)
        self._of_calls.clear()
        self._of_orphans.clear()

    def close(self) -> None:
        """The check is over: let the readers go. They are the rules' handlers, and a rule may
        hold this pairing (latency_budget reads its pending calls at the end): a reference cycle
        that would keep every rule's state until the next full collection."""
        self._readers.clear()
        self._args.clear()
        self._of_calls.clear()
        self._of_orphans.clear()

    def route_tools(self, event_type: str, claims: bool | UnsetType) -> tuple[str, ...]:
        if event_type != "tool.call":
            return ()
        return (*(self._read or ()), *(self._arg_tools or ()))   # whether a call's results are read, and its args

    def route(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType) -> Any:
        if event_type == "tool.call":
            if not self._is_read(tool):
                return self._other_call
            with_args = any(is_tool is None or (tool is not UNSET and is_tool(tool)) for is_tool in self._args)
            return self._call_with_args if with_args else self._call
        if event_type == "tool.result":
            return self._result
        return self._denied if event_type == "tool.denied" else None

    def _is_read(self, tool: str | UnsetType) -> bool:
        """Whether some reader reads the results of calls of this tool."""
        if self._read is None:
            return True
        return tool is not UNSET and any(is_tool is not None and is_tool(tool) for is_tool, _, _, _ in self._readers)

    # The two handlers below run for every call and result of the trace: `Pairing.call` and
    # `Pairing.result` are inlined for the usual case, one waiting call per id.
    def _call(self, event: Any, index: int) -> None:
        call_id = event.call_id
        if call_id is UNSET:
            return
        call = PairedCall(event.tool, call_id, event.seq, index, UNSET, event.time)
        found = self._waiting.setdefault(call_id, call)
        if found is not call:   # the id is already waiting: Pairing.call keeps both
            self.call(call_id, call)

    def _call_with_args(self, event: Any, index: int) -> None:
        """A call whose results some reader reads with the call's args (kept as a copy)."""
        call_id = event.call_id
        if call_id is UNSET:
            return
        args = event.args
        call = PairedCall(event.tool, call_id, event.seq, index, args if args is UNSET else args.copy(), event.time)
        found = self._waiting.setdefault(call_id, call)
        if found is not call:
            self.call(call_id, call)

    def _other_call(self, event: Any, index: int) -> None:
        """A call whose result no reader reads: it waits all the same (as its index, an int), so
        that its result answers it and no other call."""
        call_id = event.call_id
        if call_id is not UNSET and self._waiting.setdefault(call_id, index) is not index:
            self.call(call_id, index)

    def _result(self, event: Any, index: int) -> None:
        call = self._waiting.pop(event.call_id, None)   # (UNSET is never a key: no call without an id waits)
        if call.__class__ is int:
            return   # the result of a call whose results no one reads (the usual case)
        if call.__class__ is _Several:
            self._waiting[event.call_id] = call
            call = self.result(event.call_id)
            if call.__class__ is int:
                return
        if call is None:
            readers = self._of_orphans.get(event.tool)
            if readers is None:
                readers = self._learn(self._of_orphans, event.tool, orphans=True)
        else:
            readers = self._of_calls.get(call.tool)
            if readers is None:
                readers = self._learn(self._of_calls, call.tool, orphans=False)
        for reader in readers[event.ok is False]:
            reader(event, index, call)

    def _denied(self, event: Any, index: int) -> None:
        """A `tool.denied`: it answers the nearest waiting call with its call_id that no denial
        answered yet (the call still waits for a result: pairing is of results, point 3)."""
        found = self._waiting.get(event.call_id)   # (UNSET is never a key)
        waiting = found if found.__class__ is _Several else [] if found is None else [found]
        for call in reversed(waiting):   # the nearest first
            position = call if call.__class__ is int else call.position
            if position not in self.denied:
                self.denied.add(position)
                return

    def _learn(self, cache: dict[str | UnsetType, tuple[tuple[ResultReader, ...], tuple[ResultReader, ...]]],
               tool: str | UnsetType, *, orphans: bool) -> tuple[tuple[ResultReader, ...], tuple[ResultReader, ...]]:
        """The readers of the results of a call (or of orphans) with this tool: of a result that is
        not `ok: false`, and of one that is."""
        if len(cache) >= _READERS_CACHE_LIMIT:
            cache.clear()
        found = [(reader, failed) for is_tool, wants_orphans, reader, failed in self._readers
                 if (wants_orphans or not orphans) and (is_tool is None or (tool is not UNSET and is_tool(tool)))]
        cache[tool] = pair = (tuple(reader for reader, failed in found if failed is not True),
                              tuple(reader for reader, failed in found if failed is not False))
        return pair
