"""The mutation operators: every small edit of a passing trace that a good contract should notice.

`Candidates(events, seqs)` lists every mutant the trace allows, in the order of spec §10 point 61
(the site event's position, then the operator's row in the table below, then the detail), each
with its id `<operator>:<seq of the site in the input>[:<detail>]` and a function that makes its
events. Making them is left for the mutants that are kept under `--max-mutants`.

Where each operator applies, and what it writes (spec §6 and §10 points 57-60):
- `drop_call`, at every tool.call: remove it and its paired result.
- `drop_event`, at every event that is not a tool.call, a paired tool.result, an
  approval.granted or an outcome.observed: remove it.
- `swap_calls`, at a complete pair (a call with a tool, and its result) whose nearest later
  complete pair of another tool starts after its result: exchange the two slot for slot.
- `change_arg`, at every string, number or boolean leaf of a call's args: another value (below).
- `duplicate_call`, at every tool.call: a copy of the call and of its result (call_id `<id>~m`)
  after the later of the two.
- `drop_approval`, at every approval.granted: remove it.
- `move_approval_after`, at a grant with an own call (the first later call whose tool, call_id
  and approval_id equal the grant's, wherever the grant has them): put it directly after it.
- `rebind_approval`, at a grant's call_id (`~m` appended) and every scalar leaf of its args
  (another value).
- `stop_earlier`, at a control.stop with an earlier tool.call: put it directly before the
  nearest earlier call.
- `flip_ok`, at every tool.result: `ok` true to false, false to true, absent to false.
- `drop_outcome`, at every outcome.observed: remove it.
- `degrade_outcome`, at every outcome.observed: `verdict: violated`, and `evidence_class:
  self_attestation` (each unless already so).
- `inflate_retries`, at every tool.call with a tool: three failed copies before it (call_id
  `~m1`..`~m3`, each answered by a result with `ok: false`).
- `stale_result`, at a paired result whose tool has an earlier paired result with another
  (result, ok): the nearest such result and ok.
- `misreport_output`, at every array (not empty), boolean, number and string of the terminal's
  output: drop the last element, negate, add 1, append `~m`.
- `inflate_duration`, at every event with duration_ms > 0: times 10 (past the largest double, the
  mutant fails validation under version 2 and is listed as invalid).

Another value for a leaf is the first value of its JSON type, in trace order and depth first in
each tool.call's args and tool.result's result, that differs from it; else the string with `~m`,
the number plus 1, the boolean negated.

Moving operators keep each position's `time` (the content moves, the times do not); dropped events
leave the others' times alone; an inserted event takes the time of the event before it. Every
mutant is then numbered 10, 20, ... by position (when it is written, `as_mutant`).
"""
from __future__ import annotations

import hashlib
import math
from bisect import bisect_right
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any, NamedTuple

from msgspec import Raw

from agent_invariants.match.canonical import canonical_key
from agent_invariants.match.paths import pointer
from agent_invariants.mutate.trace import MISSING, Event, fresh, member, raw
from agent_invariants.pairing import Pairing
from agent_invariants.rules.terminal import TERMINAL_TYPES

__all__ = ("HINTS", "OPERATORS", "Candidate", "Candidates", "as_mutant", "pairs")

_ROWS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("drop_call",), "tool_order, tool_calls, precedence, required_when"),
    (("drop_event",), "require_event, require_order, failure_handled"),
    (("swap_calls",), "tool_order, precedence"),
    (("change_arg",), "tool_args"),
    (("duplicate_call",), "tool_calls, distinct, retry_limit"),
    (("drop_approval", "move_approval_after", "rebind_approval"), "require_approval, approval_bound"),
    (("stop_earlier",), "stop_is_final"),
    (("flip_ok",), "failure_handled, successful counts"),
    (("drop_outcome", "degrade_outcome"), "completion rules, conditions"),
    (("inflate_retries",), "retry_limit, event_budget"),
    (("stale_result",), "$from_result rules"),
    (("misreport_output",), "output_match, output length"),
    (("inflate_duration",), "latency and run budgets"),
)

OPERATORS: tuple[str, ...] = tuple(name for names, _ in _ROWS for name in names)
"""Every operator, in the order of the table of spec §6 (which orders mutants at one site)."""

HINTS: dict[str, str] = {name: killers for names, killers in _ROWS for name in names}
"""Per operator, the rule kinds that would kill its mutants: a survivor's hint."""


class Candidate(NamedTuple):
    """One mutant the trace allows: where, which operator, its id, and how to make its events."""

    position: int
    operator: str
    id: str
    make: Callable[[], list[Event]]


def pairs(events: list[Event]) -> dict[int, int]:
    """Call index -> index of its result, paired one to one as every version-2 kind pairs them
    (spec §10 point 3): a result answers the nearest earlier unanswered call with its call_id."""
    waiting: Pairing[int] = Pairing()
    found: dict[int, int] = {}
    for index, event in enumerate(events):
        kind = member(event, "type")
        call_id = member(event, "call_id")
        if kind == "tool.call" and call_id.__class__ is str:
            waiting.call(call_id, index)
        elif kind == "tool.result" and call_id.__class__ is str:
            call = waiting.result(call_id)
            if call is not None:
                found[call] = index
    return found


DETAIL_LIMIT = 1000
"""The longest pointer a mutant id writes whole, in characters. A longer one (a deep output of
long keys: the ids of its nodes together grow with the square of its size, 160 MB of report from a
0.8 MB trace) is cut there, `…`, and ends with a hash of the whole, which keeps ids apart."""


def _shortened(detail: str) -> str:
    if len(detail) <= DETAIL_LIMIT:
        return detail
    digest = hashlib.sha256(detail.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{detail[:DETAIL_LIMIT]}…{digest}"


class Candidates:
    """Every mutant of the trace, in the order of spec §10 point 61, made as they are asked for
    (a long trace has millions: only the kept ones need to exist at once). The sites are worked
    out once; each iteration lists the candidates anew (to count them, then pick)."""

    def __init__(self, events: list[Event], seqs: list[str]) -> None:
        self._sites = _Sites(events, seqs)

    def __iter__(self) -> Iterator[Candidate]:
        for index in range(len(self._sites.events)):
            yield from self._sites.at(index)



def as_mutant(events: list[Event]) -> list[Event]:
    """The events numbered 10, 20, ... by position."""
    return [{**event, "seq": Raw(b"%d" % (10 * (index + 1)))} for index, event in enumerate(events)]


class _Sites:
    """The trace, with what the operators need to know of it, worked out once in linear time:
    which result answers which call, the pair each complete pair swaps with, each grant's own
    call, the call each stop moves before, the result each result could be a stale copy of."""

    def __init__(self, events: list[Event], seqs: list[str]) -> None:
        self.events = events
        self.seqs = seqs
        self.types = types = [member(event, "type") for event in events]
        self.result_of = pairs(events)
        self.call_of = {result: call for call, result in self.result_of.items()}
        self.swaps = self._swaps()
        self.own_calls = self._own_calls()
        self.stale = self._stale()
        self.before_stop: dict[int, int] = {}
        last_call = None
        for index, kind in enumerate(types):
            if kind == "control.stop" and last_call is not None:
                self.before_stop[index] = last_call
            elif kind == "tool.call":
                last_call = index
        self.terminal = next((index for index in range(len(events) - 1, -1, -1)
                              if types[index] in TERMINAL_TYPES), None)
        self._pools: dict[str, list[Any]] | None = None

    def at(self, index: int) -> Iterator[Candidate]:
        """The candidates whose site is event `index`, in the order of the table's rows."""
        kind, event = self.types[index], self.events[index]
        if kind == "tool.call":
            gone = {index, self.result_of.get(index, index)}
            yield self._candidate("drop_call", index, partial(self._without, gone))
        elif kind not in ("approval.granted", "outcome.observed") and index not in self.call_of:
            yield self._candidate("drop_event", index, partial(self._without, {index}))
        if index in self.swaps:
            yield self._candidate("swap_calls", index, partial(self._moved, self.swaps[index]))
        if kind == "tool.call":
            if "args" in event:
                yield from self._leaf_changes("change_arg", index)
            result = self.result_of.get(index)
            copies = [event] + ([] if result is None else [self.events[result]])
            yield self._candidate("duplicate_call", index, partial(
                self._inserted, (index if result is None else result) + 1, [_suffixed(copy, "~m") for copy in copies]))
        if kind == "approval.granted":
            yield self._candidate("drop_approval", index, partial(self._without, {index}))
            own = self.own_calls.get(index)
            if own is not None:   # the grant goes after its call; the events between move up one
                yield self._candidate("move_approval_after", index, partial(self._rotated, index, own, 1))
            call_id = member(event, "call_id")
            if call_id.__class__ is str:
                yield self._candidate("rebind_approval", index, partial(
                    self._replaced, index, "call_id", raw(call_id + "~m")), "call_id")
            if "args" in event:
                yield from self._leaf_changes("rebind_approval", index)
        if index in self.before_stop:   # the stop goes before the call; the events between move down one
            yield self._candidate("stop_earlier", index, partial(self._rotated, self.before_stop[index], index, -1))
        if kind == "tool.result":
            flipped = member(event, "ok") is False   # true and absent become false
            yield self._candidate("flip_ok", index, partial(self._replaced, index, "ok", raw(flipped)))
        if kind == "outcome.observed":
            yield self._candidate("drop_outcome", index, partial(self._without, {index}))
            for name, worse in (("verdict", "violated"), ("evidence_class", "self_attestation")):
                if member(event, name) != worse:
                    yield self._candidate("degrade_outcome", index, partial(self._replaced, index, name, raw(worse)),
                                          name)
        if kind == "tool.call" and "tool" in event:
            copies = [copy for number in (1, 2, 3) for copy in _failed_copy(event, number)]
            yield self._candidate("inflate_retries", index, partial(self._inserted, index, copies))
        if index in self.stale:
            yield self._candidate("stale_result", index, partial(self._restaled, index, self.stale[index]))
        if index == self.terminal and "output" in event:
            for path, value in _nodes(member(event, "output")):
                if isinstance(value, list) and not value or value is None or isinstance(value, dict) or _huge(value):
                    continue
                yield self._candidate("misreport_output", index, partial(
                    self._changed, index, "output", path, _misreported), pointer(path) or None)
        duration = member(event, "duration_ms")
        if duration.__class__ in (int, float) and duration > 0 and not _huge(duration):
            inflated = duration * 10   # beyond any double, written exactly: the mutant is then invalid (point 63)
            yield self._candidate("inflate_duration", index, partial(self._replaced, index, "duration_ms", raw(
                inflated if not _huge(inflated) else fresh(event["duration_ms"]) * 10)))   # an int stays exact

    def _candidate(self, operator: str, position: int, make: Callable[[], list[Event]],
                   detail: str | None = None) -> Candidate:
        ident = f"{operator}:{self.seqs[position]}" + ("" if detail is None else f":{_shortened(detail)}")
        return Candidate(position, operator, ident, make)

    # --- what the moving operators pair, found once ------------------------------------------

    def _swaps(self) -> dict[int, dict[int, int]]:
        """swap_calls: each complete pair A (a call with a tool, and its result) with the nearest
        later complete pair B of another tool, when A's result comes before B's call: the slots
        they exchange, by A's call."""
        complete = sorted((call, result, member(self.events[call], "tool")) for call, result in self.result_of.items()
                          if member(self.events[call], "tool").__class__ is str)
        swaps: dict[int, dict[int, int]] = {}
        other_tool: int | None = None   # the nearest later pair of a tool other than the current one
        for number in range(len(complete) - 1, -1, -1):
            call, result, tool = complete[number]
            if number + 1 == len(complete):
                other_tool = None
            elif complete[number + 1][2] != tool:
                other_tool = number + 1
            # else the next pair has this tool: the nearest pair of another is the next pair's
            if other_tool is not None and result < complete[other_tool][0]:
                later, answer, _ = complete[other_tool]
                swaps[call] = {call: later, result: answer, later: call, answer: result}
        return swaps

    def _own_calls(self) -> dict[int, int]:
        """move_approval_after: each grant's own call, the first later tool.call whose tool,
        call_id and approval_id equal the grant's wherever the grant has them (calls indexed by
        each combination of those fields a grant can have)."""
        names = ("tool", "call_id", "approval_id")
        by_fields: dict[tuple[str, ...], dict[tuple[Any, ...], list[int]]] = {}
        own: dict[int, int] = {}
        for index, kind in enumerate(self.types):
            if kind != "approval.granted":
                continue
            fields = tuple(name for name in names if name in self.events[index])
            calls = by_fields.get(fields)
            if calls is None:
                calls = by_fields[fields] = {}
                for call, call_kind in enumerate(self.types):
                    if call_kind == "tool.call" and all(name in self.events[call] for name in fields):
                        key = tuple(canonical_key(member(self.events[call], name)) for name in fields)
                        calls.setdefault(key, []).append(call)
            positions = calls.get(tuple(canonical_key(member(self.events[index], name)) for name in fields), [])
            found = bisect_right(positions, index)
            if found < len(positions):
                own[index] = positions[found]
        return own

    def _stale(self) -> dict[int, int]:
        """stale_result: each paired result whose tool has an earlier paired result with another
        (result, ok), and the nearest such (found in one pass: the nearest earlier result that
        differs from the one before it, when that one is the same)."""
        stale: dict[int, int] = {}
        last: dict[str, tuple[int, object, int | None]] = {}   # tool -> (result, its answer, nearest other)
        for result in sorted(self.call_of):
            tool = member(self.events[self.call_of[result]], "tool")
            if tool.__class__ is not str:
                continue
            mine = _answer(self.events[result])
            before = last.get(tool)
            other = None if before is None else before[0] if before[1] != mine else before[2]
            if other is not None:
                stale[result] = other
            last[tool] = (result, mine, other)
        return stale

    # --- edits ---------------------------------------------------------------------------------

    def _leaf_changes(self, operator: str, index: int) -> Iterator[Candidate]:
        """A candidate for each scalar leaf of the event's args, in document order."""
        for path, leaf in _nodes(member(self.events[index], "args")):
            if leaf is None or isinstance(leaf, (dict, list)) or _huge(leaf):
                continue
            change = partial(_constant, self._replacement(leaf))
            yield self._candidate(operator, index, partial(self._changed, index, "args", path, change),
                                  pointer(path) or None)

    def _replacement(self, leaf: Any) -> Any:
        """Another value for a leaf (spec §10 point 58)."""
        kind = _kind(leaf)
        mine = canonical_key(leaf)
        for other in self._pool()[kind]:
            if canonical_key(other) != mine:
                return other
        return _misreported(leaf)

    def _pool(self) -> dict[str, list[Any]]:
        """The distinct scalars of every call's args and result's result, in trace order and
        depth first, by JSON type."""
        if self._pools is None:
            pools: dict[str, dict[object, Any]] = {"string": {}, "number": {}, "boolean": {}}
            for index, kind in enumerate(self.types):
                name = "args" if kind == "tool.call" else "result" if kind == "tool.result" else None
                if name is None or name not in self.events[index]:
                    continue
                for _, value in _nodes(member(self.events[index], name)):
                    if value is not None and not isinstance(value, (dict, list)) and not _huge(value):
                        pools[_kind(value)].setdefault(canonical_key(value), value)
            self._pools = {kind: list(values.values()) for kind, values in pools.items()}
        return self._pools

    def _without(self, gone: set[int]) -> list[Event]:
        return [event for index, event in enumerate(self.events) if index not in gone]

    def _replaced(self, index: int, name: str, value: Raw) -> list[Event]:
        events = list(self.events)
        events[index] = {**events[index], name: value}
        return events

    def _changed(self, index: int, name: str, path: tuple[str | int, ...], change: Callable[[Any], Any]) -> list[Event]:
        """The events with the node at `path` in member `name` of event `index` changed."""
        return self._replaced(index, name, raw(_changed_at(fresh(self.events[index][name]), path, change)))

    def _restaled(self, result: int, earlier: int) -> list[Event]:
        events = list(self.events)
        event = {name: value for name, value in events[result].items() if name not in ("result", "ok")}
        for name in ("result", "ok"):
            if name in events[earlier]:
                event[name] = events[earlier][name]
        events[result] = event
        return events

    def _moved(self, slots: dict[int, int]) -> list[Event]:
        """The events with `events[slot] = old[came]` for each slot, every slot keeping its time."""
        events = list(self.events)
        for slot, came in slots.items():
            events[slot] = _timed(self.events[came], self.events[slot])
        return events

    def _rotated(self, first: int, last: int, step: int) -> list[Event]:
        """The events with slots `first`..`last` rotated by `step` (1: each takes the content of the
        next, the first's goes last; -1: the other way), every slot keeping its time."""
        span = range(first, last + 1)
        came = [*span[1:], first] if step == 1 else [last, *span[:-1]]
        return self._moved(dict(zip(span, came, strict=True)))

    def _inserted(self, at: int, added: list[Event]) -> list[Event]:
        """The events with `added` at index `at`, each taking the time of the event before it."""
        events = self.events[:at]
        for event in added:
            events.append(_timed(event, events[-1] if events else None))
        events.extend(self.events[at:])
        return events


def _timed(event: Event, like: Event | None) -> Event:
    """`event` with the time of `like` (none when `like` is None or has none)."""
    event = {name: value for name, value in event.items() if name != "time"}
    if like is not None and "time" in like:
        event["time"] = like["time"]
    return event


def _suffixed(event: Event, suffix: str) -> Event:
    call_id = member(event, "call_id")
    return event if call_id.__class__ is not str else {**event, "call_id": raw(call_id + suffix)}


def _failed_copy(call: Event, number: int) -> list[Event]:
    copy = _suffixed(call, f"~m{number}")
    failed: Event = {"seq": Raw(b"0"), "type": raw("tool.result")}
    if "call_id" in copy:
        failed["call_id"] = copy["call_id"]
    failed["ok"] = raw(False)
    return [copy, failed]


def _answer(event: Event) -> tuple[object, object]:
    """A result's (result, ok), absent apart from null, for comparisons."""
    return tuple(("-",) if member(event, name) is MISSING else canonical_key(member(event, name))
                 for name in ("result", "ok"))  # type: ignore[return-value]


def _huge(value: Any) -> bool:
    """A number beyond any double (`1e400`, read as an infinity): no site, and no replacement
    (JSON cannot write what it would become)."""
    return isinstance(value, float) and not math.isfinite(value)


def _constant(value: Any, _old: Any) -> Any:
    return value


def _kind(value: Any) -> str:
    return "boolean" if value is True or value is False else "string" if isinstance(value, str) else "number"


def _misreported(value: Any) -> Any:
    """misreport_output's edit (and the fallback of a replacement): the last element dropped,
    the boolean negated, 1 added, `~m` appended."""
    if isinstance(value, list):
        return value[:-1]
    if value is True or value is False:
        return not value
    if isinstance(value, str):
        return value + "~m"
    return value + 1


def _nodes(value: Any) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    """Every node of a JSON value with its path, depth first in document order (root first).
    Each level is walked by an iterator of its members, so what is held at once grows with the
    depth, not the width (an array of 2 million numbers put 2 million paths on a stack: 900 MB)."""
    yield (), value
    stack: list[tuple[tuple[str | int, ...], Iterator[tuple[str | int, Any]]]] = [((), _members(value))]
    while stack:
        path, members = stack[-1]
        for key, item in members:
            inner = (*path, key)
            yield inner, item
            if isinstance(item, (dict, list)):
                stack.append((inner, _members(item)))
                break   # its members next, then this level's next one
        else:
            stack.pop()


def _members(node: Any) -> Iterator[tuple[str | int, Any]]:
    if isinstance(node, dict):
        return iter(node.items())
    return enumerate(node) if isinstance(node, list) else iter(())


def _changed_at(value: Any, path: tuple[str | int, ...], change: Callable[[Any], Any]) -> Any:
    """`value` (a fresh copy) with the node at `path` replaced by `change(node)`."""
    if not path:
        return change(value)
    parent = value
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = change(parent[path[-1]])
    return value
