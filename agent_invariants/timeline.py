"""The run around a report's findings, for the HTML page: which events to draw, and what the rest held.

A page that drew every event of a million-event trace would not open, and most events of a long
run are the same few calls. What is drawn, and what is folded into counted rows (`selection`
says it in words, and the page writes that above each timeline):

- a trace of at most `FULL_EVENTS` events is drawn whole;
- a longer one shows its first and last `EDGE` events, each event a violation or regression points
  at (up to `MAX_PINNED`, the failing rules taking turns) with `CONTEXT` events either side, and
  the first `MAX_MARKED` marked events: approvals, stops, outcomes, completion claims, failed
  results, denied calls and the run's end. Every other stretch of events is one row that counts
  them by type and tool (`Counted`).

A batch shares these limits out among the traces it draws in detail (`detailed`). A comparison
also keeps each run's first `MAX_CALLS` tool calls, which `align` lines up.

The events come from a second read of the trace, once the check has said which events matter.
Only a regular file (or an imported run of one) can be read again: for standard input or a pipe
the page says why it has no timeline (the CLI copies such a trace to a file first, for a single
check). When the second read does not give the events the check saw
(the file changed in between: see `collect`), the timeline is dropped with that reason, never
drawn wrong.

    timelines = collect(report)                  # or collect(report, reopen, stamps)
    timelines.of(report.candidate)               # a Timeline, or a Missing with the reason
"""
from __future__ import annotations

import os
import stat
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import msgspec
from msgspec import UNSET

from agent_invariants._collector import paused
from agent_invariants.errors import InputError
from agent_invariants.events import Event
from agent_invariants.reader import DEFAULT_MAX_LINE_BYTES, TraceFile, TraceSource
from agent_invariants.render.shared import AnyReport, ok, sections
from agent_invariants.report import CheckReport, CompareReport

Item = TypeVar("Item", bound=Hashable)

__all__ = ("CONTEXT", "EDGE", "FULL_EVENTS", "MAX_CALLS", "MAX_MARKED", "MAX_PINNED", "MAX_SECTIONS", "READ_ONCE",
           "SELECTION", "Call", "Counted", "Gap", "Missing", "Row", "Timeline", "Timelines", "align", "collect",
           "detailed", "Reopen", "Stamp", "reopen_file", "rereadable", "selection", "stamp", "take_turns")

FULL_EVENTS = 400
"""A trace of at most this many events is drawn whole."""
EDGE = 3
"""The first and the last events drawn in any trace."""
CONTEXT = 3
"""Events drawn before and after each event a finding points at."""
MAX_PINNED = 300
"""Events a finding points at that are drawn with their neighbourhood, per trace (`take_turns`)."""
MAX_MARKED = 100
"""Marked events (approvals, stops, outcomes, claims, failures, denials, ends) drawn beyond those, per trace."""
MAX_CALLS = 500
"""Tool calls of each trace that a comparison lines up side by side (the first ones)."""
MAX_SECTIONS = 20
"""Traces (or pairs) of a batch drawn in detail: the failing ones first, then the others, in order."""
_NAMES_PER_GAP = 6      # types and tools named in a folded row; the rest are counted as "other"
_COUNTED_PER_GAP = 256  # distinct names a folded row counts exactly (past that, see `Counted`)
_PREVIEW = 160          # characters of args, result, output or reason shown on an event's row

def selection(full: int, pinned: int, marked: int) -> str:
    """What a timeline with these limits draws, in words (the page says it above the timeline)."""
    return (f"Traces of up to {full} events are drawn whole. A longer trace shows its first and last {EDGE} "
            f"events, each event a violation or regression points at (up to {pinned}, each failing rule's first "
            f"ones) with {CONTEXT} events either side, and the first {marked} approvals, stops, outcomes, completion "
            "claims, failed results, denied calls and run ends; each stretch of other events is one row that counts "
            "them.")


SELECTION = selection(FULL_EVENTS, MAX_PINNED, MAX_MARKED)
"""The rule for one trace (a batch shares the limits out among the traces it draws)."""


@dataclass(slots=True)
class Row:
    """One event drawn on the timeline. Text fields hold the trace's own text, not yet escaped."""

    index: int
    seq: int | float
    line: int | None
    type: str
    tool: str | None
    call_id: str | None
    span: str | None
    marks: tuple[str, ...]
    """What kind of moment it is: `approval`, `stop`, `outcome`, `claim`, `failure`, `denied`, `end`."""
    detail: str
    """A short account of the event's own fields (arguments, result, verdict, reason), cut."""
    partner: int | float | None = None
    """The seq of the call's result, or of the result's call, when both are drawn."""


@dataclass(frozen=True, slots=True)
class Counted:
    """The most common names of a folded stretch (most common first, ties by name), and how many
    events had another name. Exact while the stretch held at most `_COUNTED_PER_GAP` names; past
    that the counts come from Misra and Gries' summary in bounded memory: each count may be low by
    up to `lowered` (and `other` high by as much), and every name more common than one event in
    `_COUNTED_PER_GAP + 1` is still among them."""

    names: list[tuple[str, int]]
    other: int
    lowered: int = 0


@dataclass(slots=True)
class Gap:
    """A stretch of events folded into one row, counted by type and by tool."""

    first: int
    last: int
    first_seq: int | float
    last_seq: int | float
    types: Counted
    tools: Counted

    @property
    def events(self) -> int:
        return self.last - self.first + 1


@dataclass(slots=True)
class Call:
    """A tool call, for lining up a baseline's calls with a candidate's."""

    index: int
    seq: int | float
    tool: str
    line: int | None = None


@dataclass(slots=True)
class Timeline:
    """What is drawn of one trace: rows and folded stretches in trace order, and its first calls."""

    events: int
    rows: list[Row | Gap]
    calls: list[Call]
    calls_total: int
    whole: bool
    rule: str
    """What was drawn and what folded, in words (`selection`)."""
    pinned_left_out: int = 0
    """Events findings point at beyond the limit: listed with their findings, not drawn."""


@dataclass(frozen=True, slots=True)
class Missing:
    """Why a trace has no timeline."""

    reason: str


@dataclass
class Timelines:
    """The timeline of each check report of a report (a compare report holds two)."""

    _by_report: dict[int, Timeline | Missing] = field(default_factory=dict)
    _kept: list[CheckReport] = field(default_factory=list)   # keeps the ids above meaning the same reports

    def add(self, check: CheckReport, timeline: Timeline | Missing) -> None:
        self._by_report[id(check)] = timeline
        self._kept.append(check)

    def of(self, check: CheckReport) -> Timeline | Missing | None:
        """The timeline of `check`, the reason it has none, or None when none was asked for."""
        return self._by_report.get(id(check))


def detailed(report: AnyReport) -> list[CheckReport | CompareReport]:
    """The sections drawn in detail: all of a single report; of a batch, the first `MAX_SECTIONS`
    failing ones, then passing ones while there is room, in the batch's order."""
    every = list(sections(report))
    if len(every) <= MAX_SECTIONS:
        return every
    failing = [index for index, section in enumerate(every) if not ok(section)]
    passing = [index for index, section in enumerate(every) if ok(section)]
    chosen = sorted((failing + passing)[:MAX_SECTIONS])
    return [every[index] for index in chosen]


READ_ONCE = "standard input can be read only once: pass the trace as a file to see its timeline"
"""Why a trace read from standard input has no timeline."""


def rereadable(path: str) -> str | None:
    """Why the trace at `path` cannot be read a second time, or None when it can."""
    if path == "-":
        return READ_ONCE
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return f"the trace cannot be read again ({exc.strerror or exc})"
    if not stat.S_ISREG(mode):
        return "a pipe or device can be read only once: pass the trace as a file to see its timeline"
    return None


Reopen = Callable[[CheckReport, "str | None"], "TraceSource | str"]
"""`reopen(check, path)`: the trace of `check` to read again from `path` (None: it had no file),
or why it cannot be read again."""

Stamp = tuple[str, int, int, int, int, int]


def reopen_file(check: CheckReport, path: str | None,
                max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> TraceSource | str:
    """The check's trace file, at `path`, read again as a native trace; or why it cannot be."""
    if path is None:
        return "the trace was not read from a file"
    return rereadable(path) or TraceFile(path, max_line_bytes=max_line_bytes, name=str(check.trace))


def stamp(path: str) -> Stamp | None:
    """What tells a file from the same file changed or replaced: the file a link leads to (as an
    absolute path), its device, inode, size, and the times of its last change; None when it
    cannot be read."""
    try:
        real = os.path.realpath(path)
        found = os.stat(real)
    except (OSError, ValueError):
        return None
    return real, found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns


def collect(report: AnyReport, reopen: Reopen = reopen_file,
            stamps: dict[str, Stamp | None] | None = None) -> Timelines:
    """The timeline of every check report drawn in detail. `reopen(check, path)` gives the
    check's trace to read again, or says (a string) why it cannot be; by default the file is read
    again as a native trace (`reopen_file`).

    A timeline is dropped when the events read are not those the check saw: when the count or the
    seq of an event a finding names differs, and when the file read again differs from the one in
    `stamps`: taken before the check read it (`stamp`), or better, from the file the check itself
    opened (`TraceFile.opened`, after the path it resolved to). A stamped trace is read again
    from the file its stamp names, so a link turned elsewhere in between is not followed; a trace
    not in `stamps` is not compared."""
    timelines = Timelines()
    chosen = detailed(report)
    room = _Room.shared_by(len(chosen))
    with paused():
        for section in chosen:
            if isinstance(section, CompareReport):
                regressions = [(regression.event_index, regression.event_seq) for regression in section.regressions
                               if regression.event_index is not UNSET and regression.event_seq is not UNSET]
                timelines.add(section.baseline, _timeline(section.baseline, reopen, [], room, stamps))
                timelines.add(section.candidate, _timeline(section.candidate, reopen, regressions, room, stamps))
            else:
                timelines.add(section, _timeline(section, reopen, [], room, stamps))
    return timelines


def _timeline(check: CheckReport, reopen: Reopen, more_pins: Sequence[tuple[int, int | float]], room: _Room,
              stamps: dict[str, Stamp | None] | None) -> Timeline | Missing:
    before = None if stamps is None or check.trace is UNSET else stamps.get(check.trace)
    path = None if check.trace is UNSET else before[0] if before is not None else check.trace
    try:
        source = reopen(check, path)   # an imported run is imported again: that may fail too
        if isinstance(source, str):
            return Missing(source)
        timeline = _read(source, check.summary.events, _pins(check, [index for index, _ in more_pins], room.pinned),
                         room)
    except InputError as exc:
        return Missing(f"the trace could not be read again: {exc}")
    stamped = stamps is not None and check.trace is not UNSET and check.trace in stamps
    opened = getattr(source, "opened", None)   # what the second read opened, for a file read natively
    changed = stamped and (before is None or (stamp(str(check.trace)) != before if opened is None
                                              else opened != before[1:]))
    if changed or timeline.events != check.summary.events or not _same_events(timeline, check, more_pins):
        return Missing("the trace changed after it was checked: check it again to see its timeline")
    return timeline


@dataclass(frozen=True, slots=True)
class _Room:
    """How much of each trace is drawn: the limits above for one trace (or pair); shared out when a
    batch draws several, so the page stays about the size of one."""

    full: int
    pinned: int
    marked: int

    @classmethod
    def shared_by(cls, sections: int) -> _Room:
        share = max(1, sections)
        return cls(max(100, FULL_EVENTS // share), max(15, MAX_PINNED // share), max(5, MAX_MARKED // share))


def _same_events(timeline: Timeline, check: CheckReport, more_pins: Sequence[tuple[int, int | float]]) -> bool:
    """Whether the events drawn are the ones the check's violations and the comparison's
    regressions name (the same seq at the same index)."""
    drawn = {row.index: row.seq for row in timeline.rows if isinstance(row, Row)}
    named = [*more_pins, *((violation.event_index, violation.event_seq) for violation in check.violations
                           if violation.event_index is not UNSET and violation.event_seq is not UNSET)]
    return all(drawn.get(index, seq) == seq for index, seq in named)


def _pins(check: CheckReport, more: Sequence[int], limit: int) -> tuple[list[int], int]:
    """The events findings point at that are drawn, and how many others there are. The failing
    rules (and the regressions) take turns, each its first events first, so that a rule that
    breaks late in a long trace is drawn too, and many rules do not push the count past `limit`."""
    by_rule: dict[str, list[int]] = {}
    for violation in check.violations:
        if violation.event_index is not UNSET:
            by_rule.setdefault(violation.rule_id, []).append(violation.event_index)
    groups = [*by_rule.values(), list(more)] if more else list(by_rule.values())
    every = {index for group in groups for index in group}
    chosen = take_turns(groups, limit)
    return sorted(chosen), len(every) - len(chosen)


def take_turns(groups: Sequence[Sequence[Item]], limit: int) -> set[Item]:
    """Up to `limit` distinct items, the groups taking turns: each group's first, then each one's
    second, and so on, so that no group is left out while another has many."""
    chosen: set[Item] = set()
    depth = 0
    while len(chosen) < limit and any(depth < len(group) for group in groups):
        for group in groups:
            if depth < len(group) and len(chosen) < limit:
                chosen.add(group[depth])
        depth += 1
    return chosen


def _read(source: TraceSource, total: int, pins: tuple[list[int], int], room: _Room) -> Timeline:
    whole = total <= room.full
    shown, left_out = pins
    near = {index for pin in shown for index in range(pin - CONTEXT, pin + CONTEXT + 1)}
    rows: list[Row | Gap] = []
    calls: list[Call] = []
    calls_total = marked = 0
    gap: _Folding | None = None
    open_calls: dict[str, Row] = {}   # call id -> its drawn call row, to pair a drawn result with
    count = 0
    for batch in source.batches():
        for index, event in enumerate(batch, count):
            if event.type == "tool.call":
                calls_total += 1
                if len(calls) < MAX_CALLS:
                    calls.append(Call(index, event.seq, event.tool if event.tool is not UNSET else ""))
            marks = _marks(event)
            keep = whole or index < EDGE or index >= total - EDGE or index in near
            if not keep and marks and marked < room.marked:
                keep, marked = True, marked + 1
            if not keep:
                gap = gap or _Folding(index, event.seq)
                gap.add(index, event)
                continue
            if gap is not None:
                rows.append(gap.done())
                gap = None
            rows.append(_row(index, event, marks, open_calls))
        count += len(batch)
    if gap is not None:
        rows.append(gap.done())
    drawn = [row.index for row in rows if isinstance(row, Row)]
    lines, spans = source.lines_of(drawn), source.spans_of(drawn)
    for row in rows:
        if isinstance(row, Row):
            row.line, row.span = lines.get(row.index), spans.get(row.index)
    call_lines = source.lines_of(call.index for call in calls)
    for call in calls:
        call.line = call_lines.get(call.index)
    return Timeline(count, rows, calls, calls_total, whole, selection(room.full, room.pinned, room.marked),
                    pinned_left_out=left_out)


def align(base: list[Call], cand: list[Call]) -> list[tuple[str, Call | None, Call | None]]:
    """The two runs' calls lined up: (`same`, `changed`, `removed` or `added`, baseline call,
    candidate call), along a longest common subsequence of their tool names. A call of one run
    between the same two matched calls as a call of the other is `changed` into it, one for one;
    the rest are `removed` (baseline only) or `added` (candidate only). The common start and end
    are matched first, then the rest in O(len(base) × len(cand)) time (at most `MAX_CALLS` each)."""
    start = 0
    while start < min(len(base), len(cand)) and base[start].tool == cand[start].tool:
        start += 1
    end = 0
    while end < min(len(base), len(cand)) - start and base[-1 - end].tool == cand[-1 - end].tool:
        end += 1
    steps: list[tuple[str, Call | None, Call | None]] = [
        ("same", left, right) for left, right in zip(base[:start], cand[:start], strict=False)]
    steps += _paired(_common(base[start:len(base) - end], cand[start:len(cand) - end]))
    steps += [("same", left, right) for left, right in zip(base[len(base) - end:], cand[len(cand) - end:],
                                                            strict=True)]
    return steps


def _common(base: list[Call], cand: list[Call]) -> list[tuple[str, Call | None, Call | None]]:
    """A longest common subsequence of the tool names, as same, removed and added steps in order.
    The textbook table is built over the ends of both lists and walked from their starts, so each
    call is matched as early as it can be (as `difflib` would)."""
    names: dict[str, int] = {}
    left = [names.setdefault(call.tool, len(names)) for call in base]
    right = [names.setdefault(call.tool, len(names)) for call in cand]
    width = len(right)
    table = [[0] * (width + 1)]   # table[k][j]: the common length of left[-k:] and right[j:]
    for name in reversed(left):
        below, row = table[-1], [0] * (width + 1)
        for column in range(width - 1, -1, -1):
            row[column] = below[column + 1] + 1 if name == right[column] else max(below[column], row[column + 1])
        table.append(row)
    steps: list[tuple[str, Call | None, Call | None]] = []
    i = j = 0
    while i < len(left) and j < width:
        rest = len(left) - i   # table[rest] is the row of left[i:]
        if left[i] == right[j]:
            steps.append(("same", base[i], cand[j]))
            i, j = i + 1, j + 1
        elif table[rest - 1][j] >= table[rest][j + 1]:
            steps.append(("removed", base[i], None))
            i += 1
        else:
            steps.append(("added", None, cand[j]))
            j += 1
    steps += [("removed", call, None) for call in base[i:]]
    steps += [("added", None, call) for call in cand[j:]]
    return steps


def _paired(steps: list[tuple[str, Call | None, Call | None]]) -> list[tuple[str, Call | None, Call | None]]:
    """Between two matched calls, the removed and added calls paired one for one as changed."""
    paired: list[tuple[str, Call | None, Call | None]] = []
    removed: list[Call | None] = []
    added: list[Call | None] = []

    def flush() -> None:
        for old, new in zip(removed, added, strict=False):
            paired.append(("changed", old, new))
        paired.extend(("removed", old, None) for old in removed[len(added):])
        paired.extend(("added", None, new) for new in added[len(removed):])
        removed.clear()
        added.clear()

    for step in steps:
        if step[0] == "removed":
            removed.append(step[1])
        elif step[0] == "added":
            added.append(step[2])
        else:
            flush()
            paired.append(step)
    flush()
    return paired


def _row(index: int, event: Event, marks: tuple[str, ...], open_calls: dict[str, Row]) -> Row:
    call_id = None if event.call_id is UNSET else event.call_id
    row = Row(index, event.seq, None, event.type, None if event.tool is UNSET else event.tool, call_id, None,
              marks, _detail(event))
    if call_id is not None:
        if event.type == "tool.call":
            open_calls[call_id] = row
        elif event.type == "tool.result" and call_id in open_calls:
            call = open_calls.pop(call_id)
            call.partner, row.partner = event.seq, call.seq
    return row


def _marks(event: Event) -> tuple[str, ...]:
    kind = event.type
    marks: list[str] = []
    if kind == "approval.requested":
        marks.append("asked")
    elif kind == "approval.revoked":
        marks.append("revoked")
    elif kind == "approval.granted":
        marks.append("refused" if event.approved is False else "approval")
    elif kind == "control.stop":
        marks.append("stop")
    elif kind == "outcome.observed":
        marks.append("outcome")
    elif kind == "tool.denied":
        marks.append("denied")
    elif kind == "tool.result" and event.ok is False:
        marks.append("failure")
    if event.claims_completion is True or kind == "run.completed":
        marks.append("claim")
    if kind in ("run.completed", "run.failed"):
        marks.append("end")
    return tuple(marks)


def _detail(event: Event) -> str:
    """The fields that say what this event was, beyond its type and tool."""
    parts: list[str] = []
    if event.approval_id is not UNSET:
        parts.append(f"approval {event.approval_id}")
    if event.approval_scope is not UNSET:
        parts.append(f"scope {event.approval_scope}")
    if event.approved is False:
        parts.append("refused")
    if event.outcome_id is not UNSET:
        parts.append(f"outcome {event.outcome_id}")
    if event.verdict is not UNSET:
        parts.append(str(event.verdict))
    if event.evidence_class is not UNSET:
        parts.append(str(event.evidence_class))
    if event.ok is not UNSET:
        parts.append("ok" if event.ok else "failed")
    if event.confidence is not UNSET:
        parts.append(f"confidence {event.confidence:g}")
    for name in ("approver", "status", "reason", "args", "result", "output"):
        raw = getattr(event, name)
        if raw is not UNSET:
            parts.append(f"{name} {_preview(raw)}")
    return "; ".join(parts)


def _preview(raw: msgspec.Raw) -> str:
    """A JSON value on one line, cut to `_PREVIEW` characters."""
    data = bytes(raw)
    if len(data) > 4 * _PREVIEW:   # only the start is shown: reformat no more than that
        data = data[:4 * _PREVIEW]
        text = " ".join(data.decode("utf-8", "replace").split())
    else:
        try:
            text = msgspec.json.format(data, indent=0).decode("utf-8", "replace")
        except msgspec.DecodeError:
            text = data.decode("utf-8", "replace")
    return text if len(text) <= _PREVIEW else text[:_PREVIEW] + "…"


class _Folding:
    """A stretch of events being folded: bounded counts of their types and tools."""

    def __init__(self, first: int, first_seq: int | float) -> None:
        self.first, self.first_seq = first, first_seq
        self.last, self.last_seq = first, first_seq
        self.types, self.tools = _Names(), _Names()

    def add(self, index: int, event: Event) -> None:
        self.last, self.last_seq = index, event.seq
        self.types.add(event.type)
        if event.tool is not UNSET:
            self.tools.add(event.tool)

    def done(self) -> Gap:
        return Gap(self.first, self.last, self.first_seq, self.last_seq, self.types.counted(), self.tools.counted())


class _Names:
    """Counts of names in at most `_COUNTED_PER_GAP` entries (Misra and Gries): a name that finds
    the table full takes one from every count instead, and names whose count reaches 0 leave."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.total = 0
        self.lowered = 0   # rounds of taking one from every count

    def add(self, name: str) -> None:
        self.total += 1
        counts = self.counts
        if name in counts:
            counts[name] += 1
        elif len(counts) < _COUNTED_PER_GAP:
            counts[name] = 1
        else:   # each round takes as much as it was given since the last: linear time overall
            self.lowered += 1
            self.counts = {key: count - 1 for key, count in counts.items() if count > 1}

    def counted(self) -> Counted:
        named = sorted(self.counts.items(), key=lambda item: (-item[1], item[0]))[:_NAMES_PER_GAP]
        return Counted(named, self.total - sum(count for _, count in named), self.lowered)
