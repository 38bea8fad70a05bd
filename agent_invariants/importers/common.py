"""The mapping rules every importer shares (spec/v2-extensions.md §7, §10 points 26-36).

An importer reads its format and says, for one run, which events happened when: a call at a span's
start, its result at the span's end, `run.start` at the root's start, and so on. It hands them to
a `Timeline`, which writes the run out the same way whatever the format:

- events in time order; at equal times ends before starts, deeper ends first, shallower starts
  first, then source order (a span that takes no time still starts before it ends). A run's start
  and end that are a root span's (`bound`) sort as that span's start and end; those that are not
  (an MCP session's first message and the end of its log) come first and last at their instant;
- the run's end with `duration_ms` from its start;
- `seq` 1..n, `time` in UTC ISO 8601 from the integer clock (nanoseconds: nine digits; sources
  that write ISO strings: the microsecond, six digits), never through a float;
- `call_id` the native id, or the span's: an id seen on an earlier call gets `~2`, `~3`… and the
  native one goes to `data.native_call_id` (the result and any grant of that call follow it);
- `data.source` = `{format, file, line, span_id}`: where each event came from.

`parse_args` and `parse_result` read the payloads every format writes as JSON text, the same way:
an object (args) or any JSON (result) when the text is JSON, else the text is kept as written, in
`data.raw_args` / `data.raw_result`. Nothing is ever evaluated: a Python repr stays a string.
"""
from __future__ import annotations

import datetime
import math
import operator
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple, TypeVar

import msgspec

from agent_invariants._js import replace_lone_surrogates, utf16_len
from agent_invariants.errors import TraceError
from agent_invariants.jsontext import MAX_NESTING, too_deep_at

__all__ = ("END", "FIRST", "LAST", "MAX_RUN_EVENTS", "START", "ModelTurn", "Timeline", "as_object", "cut_text",
           "duration_ms", "error_text", "iso_nanos", "merged_records", "nanos_iso", "parse_args", "parse_result",
           "tool_message")

MAX_RUN_EVENTS = 1_000_000
"""The most events one imported run may make. A run is held whole until it ends, to be put in
time order (about 3 KB an event): past this, the import stops with one line, rather than grow
with an endless input (a log that never ends its session)."""

FIRST = -1
"""The run's start: before anything else at its instant (or, as `bound`, the run's start wherever
its phase sorts it)."""
END = 0
"""A span's end."""
START = 1
"""A span's start (or an event of one instant)."""
LAST = 2
"""The run's end: after anything else at its instant (or, as `bound`, the run's end wherever its
phase sorts it)."""

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode


class _Entry(NamedTuple):
    at: int              # the source clock, in nanoseconds
    phase: int           # END before START at the same time
    depth: int           # nesting of the span the event belongs to
    order: float         # source order
    event: dict[str, Any]
    line: int | None
    key: object          # the call an event belongs to (its call, result, grant), or None
    span_id: str | None
    synthetic: bool
    bound: int           # FIRST or LAST for the run's start and end, else START


class Timeline:
    """The events of one imported run, added in any order and written out in time order.

    `digits` is the precision of the source's clock: 9 for nanosecond clocks, 6 for ISO strings.
    """

    def __init__(self, source_format: str, file: str, run_id: str, digits: int = 9) -> None:
        self.format, self.file, self.run_id, self.digits = source_format, file, run_id, digits
        self._entries: list[_Entry] = []
        self._started: dict[object, int] = {}   # the time of each call, by key
        self._call_order: dict[object, float] = {}   # the source order of each call, by key
        self._early = False
        self._began: int | None = None   # when the run starts (its start is added before its end)
        self._backwards = False   # the run ends before it starts (its root span's clock went back)

    def __len__(self) -> int:
        """How many events `events()` writes: the run's end takes in the run.completed or
        run.failed events a convention or profile adds (`_terminal_merged`)."""
        return len(_terminal_merged(self._entries))

    def add(self, event: dict[str, Any], at: int, *, phase: int = START, depth: int = 0, line: int | None = None,
            span_id: str | None = None, key: object = None, synthetic: bool = False,
            order: float | None = None, bound: int | None = None) -> None:
        """An event (without seq, time and run_id) at `at` nanoseconds. `key` ties a call to its
        result and grants, so that they share the call id it is finally given; `order` puts it
        elsewhere than the end of the source order among events of the same instant (a hoisted
        grant takes its call's order less a half). `bound` (FIRST or LAST) marks the run's start
        or end when `phase` (START or END, a root span's) says where it sorts; a `phase` of FIRST
        or LAST marks it too. The run's start is added before its end. The event is kept as it is,
        its `args`, `result` and `output` turned into their JSON text (`msgspec.Raw`) in place."""
        if len(self._entries) >= MAX_RUN_EVENTS:
            raise TraceError(self.file, line, f"the run {self.run_id} makes more than {MAX_RUN_EVENTS:,} events, the "
                                              "most an import holds; convert it in parts")
        for field in _PAYLOADS:
            value = event.get(field)
            if value.__class__ is dict or value.__class__ is list:
                event[field] = _compact(value)
        if bound is None:
            bound = phase if phase in (FIRST, LAST) else START
        if bound == FIRST:
            self._began = at
        elif bound == LAST and at == self._began:
            phase = LAST   # a run that takes no time still starts before it ends, as a span does
        elif bound == LAST and self._began is not None and at < self._began:
            self._backwards = True   # still starts before it ends: `_bounds_outside`
        if order is None and bound != START:   # the run's start before, its end after, what ties with it
            order = -1.0 if bound == FIRST else math.inf
        if key is not None:
            if event["type"] == "tool.call":
                self._started[key] = at
                self._call_order[key] = len(self._entries) if order is None else order
            elif _follows(event, phase) and at <= self._started.get(key, at - 1):
                self._early = True   # no later than its call starts: sorting alone could put it first
        self._entries.append(_Entry(at, phase, depth if phase == START else -depth,
                                    len(self._entries) if order is None else order, event, line, key, span_id,
                                    synthetic, bound))

    def order_of(self, key: object) -> float | None:
        """The source order of the call tied to `key` (for events placed just before it)."""
        return self._call_order.get(key)

    def events(self) -> Iterator[tuple[dict[str, Any], int | None]]:
        """The run's events in order, numbered, timed and with call ids made unique, each with the
        source line it came from (payloads as JSON text, `msgspec.Raw`, which `msgspec.json`
        writes as it is)."""
        entries = sorted(_terminal_merged(self._entries), key=_ORDER)
        if self._early:
            entries = _calls_first(entries)
        if self._backwards:
            entries = _bounds_outside(entries)
        ids = _CallIds()
        clock = _Clock(self.digits)
        run_id = self.run_id
        began = next((entry.at for entry in entries if entry.bound == FIRST), None)
        source_format, file = self.format, self.file
        for seq, entry in enumerate(entries, 1):
            at, _, _, _, said, line, key, span_id, synthetic, bound = entry   # one unpacking, not a lookup each
            # the entry's own `type` lands where the first one stands: seq, type, time, run_id, the rest
            event = {"seq": seq, "type": None, "time": clock.iso(at), "run_id": run_id, **said}
            if bound == LAST and began is not None and "duration_ms" not in event:
                took = duration_ms(began, at)   # the run's own length, for budgets of traces without time
                if took is not None:
                    event["duration_ms"] = took
            if line is not None and span_id is not None and not synthetic:   # the usual event
                source = {"format": source_format, "file": file, "line": line, "span_id": span_id}
            else:
                source = self._source(entry)
            data = event.get("data")
            event["data"] = {**data, "source": source} if data else {"source": source}
            if key is not None or "call_id" in event:
                ids.apply(event, key)
            yield event, line

    def _source(self, entry: _Entry) -> dict[str, Any]:
        """`data.source` of an event that is not the usual one (a span's, with its line): built as
        events are written, not kept."""
        source: dict[str, Any] = {"format": self.format, "file": self.file}
        if entry.line is not None:
            source["line"] = entry.line
        if entry.span_id is not None:
            source["span_id"] = entry.span_id
        if entry.synthetic:
            source["synthetic"] = True
        return source


def _terminal_merged(entries: list[_Entry]) -> list[_Entry]:
    """The entries with the run's own end (`LAST`) taking what a convention or profile event of
    type run.completed or run.failed says (its type, status, output, reason): a run has one end,
    the last event. A run the export shows failed (its root or an agent span ended in an error, a
    guardrail fired: point 31) stays failed: a run.completed said beside it gives its output, not
    the end. Without such an event, the entries as they are."""
    said = [entry for entry in entries if entry.event["type"] in _TERMINALS and entry.bound != LAST]
    if not said:   # the usual run: its end is its own
        return entries
    ends = [entry for entry in entries if entry.bound == LAST]
    if not ends:
        return entries
    told = max(said, key=lambda entry: (entry.at, entry.order))
    end = ends[-1]
    event = {**end.event, **told.event, "type": told.event["type"]}
    if end.event["type"] == "run.failed" and told.event["type"] != "run.failed":
        event.update((key, end.event[key]) for key in ("type", "status", "reason") if key in end.event)
    merged = end._replace(event=event)
    return [merged if entry is end else entry for entry in entries if entry.bound == LAST or
            entry.event["type"] not in _TERMINALS]


_PAYLOADS = ("args", "result", "output")
"""The fields whose values can be large: a run waits whole in memory, so they wait as JSON text."""


def _compact(value: list[Any] | dict[str, Any]) -> Any:
    """`value` as the JSON text it is written as (`msgspec.Raw`, which `msgspec.json.encode`
    writes as it is): a run is held whole until it ends, and a parsed array of numbers takes five
    to ten times the bytes of its text. A value that JSON text cannot hold (a lone surrogate)
    stays as it is, for the reader to escape as it does any event's."""
    try:
        return msgspec.Raw(_encode(value))
    except UnicodeEncodeError:
        return value


_TERMINALS = ("run.completed", "run.failed")
_OUTCOMES = ("tool.result", "tool.cancelled")
"""What ends a call, and so never comes before it."""


def _follows(event: dict[str, Any], phase: int) -> bool:
    """Whether an event tied to a call comes after it: its end, or anything said during it (an MCP
    grant, a reply). Only what is placed at a start on purpose (a hoisted grant) may precede it."""
    return event["type"] in _OUTCOMES or phase != START

_ORDER = operator.itemgetter(0, 1, 2, 3)
"""The order of entries: time, phase, depth (signed), source order."""


def _bounds_outside(entries: list[_Entry]) -> list[_Entry]:
    """`entries` with the run's start first and its end last: a run whose end is stamped before
    its start (a root span whose clock went backwards) would otherwise be over before it began,
    with its calls after its end (a tool span ends after its call alike: `_calls_first`)."""
    return [*(entry for entry in entries if entry.bound == FIRST),
            *(entry for entry in entries if entry.bound not in (FIRST, LAST)),
            *(entry for entry in entries if entry.bound == LAST)]


def _calls_first(entries: list[_Entry]) -> list[_Entry]:
    """`entries` with every result (or other end) of a call after the call's start: a call that
    takes no time, or whose clock went backwards, would otherwise end before it starts."""
    calls = {entry.key for entry in entries if entry.key is not None and entry.event["type"] == "tool.call"}
    started: set[object] = set()
    held: dict[object, list[_Entry]] = {}
    ordered: list[_Entry] = []
    for entry in entries:
        if entry.key is not None and entry.event["type"] == "tool.call":
            started.add(entry.key)
            ordered.append(entry)
            ordered.extend(held.pop(entry.key, ()))
        elif entry.key in calls and entry.key not in started and _follows(entry.event, entry.phase):
            held.setdefault(entry.key, []).append(entry)
        else:
            ordered.append(entry)
    for waiting in held.values():
        ordered.extend(waiting)
    return ordered


class _CallIds:
    """Unique call ids: the first call with a native id keeps it; later ones get `~2`, `~3`…"""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}
        self._taken: set[str] = set()
        self._given: dict[object, str] = {}

    def apply(self, event: dict[str, Any], key: object) -> None:
        native = event.get("call_id")
        if event["type"] == "tool.call" and native is not None:
            count = self._seen.get(native, 0) + 1
            given = native
            if count > 1 or native in self._taken:
                count = max(count, 2)
                while f"{native}~{count}" in self._taken:   # a native id may look like a renamed one
                    count += 1
                given = f"{native}~{count}"
                event["call_id"] = given
                event["data"] = {"native_call_id": native, **event["data"]}
            self._seen[native] = count
            self._taken.add(given)
            if key is not None:
                self._given[key] = event["call_id"]
        elif key is not None and key in self._given:
            given = self._given[key]
            if given != native and native is not None:
                event["data"] = {"native_call_id": native, **event["data"]}
            event["call_id"] = given


def duration_ms(start: int, end: int) -> int | float | None:
    """`duration_ms` from two clock readings in nanoseconds: an integer when it is whole; None
    when the clock went backwards (the source's times cannot say how long it took)."""
    if end < start:
        return None
    whole, rest = divmod(end - start, 1_000_000)
    return whole if rest == 0 else (end - start) / 1_000_000


class _Clock:
    """`nanos_iso` for times in order: the date and time of day are worked out once per second."""

    def __init__(self, digits: int) -> None:
        self.digits = digits
        self.second = -1
        self.stamp = ""

    def iso(self, nanos: int) -> str:
        second, fraction = divmod(nanos, 1_000_000_000)
        if second != self.second:
            self.second = second
            self.stamp = _stamp(second)
        if self.digits == 6:
            return f"{self.stamp}.{fraction // 1000:06d}Z"
        return f"{self.stamp}.{fraction:09d}Z"


def _stamp(second: int) -> str:
    """A second since the epoch as `YYYY-MM-DDTHH:MM:SS` (four-digit years: strftime does not pad
    years before 1000 everywhere)."""
    moment = _EPOCH + datetime.timedelta(seconds=second)
    return (f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:{moment.minute:02d}:"
            f"{moment.second:02d}")


def nanos_iso(nanos: int, digits: int = 9) -> str:
    """Nanoseconds since the epoch as UTC ISO 8601 (`2025-01-31T08:00:00.123456789Z`), exactly."""
    seconds, fraction = divmod(nanos, 1_000_000_000)
    stamp = _stamp(seconds)
    if digits == 6:
        return f"{stamp}.{fraction // 1000:06d}Z"
    return f"{stamp}.{fraction:09d}Z"


def iso_nanos(text: str) -> int | None:
    """An ISO 8601 time (a zone, `Z`, or none: UTC) as nanoseconds since the epoch, to the
    microsecond; None when it is not one."""
    try:
        moment = datetime.datetime.fromisoformat(text.strip())
    except (ValueError, TypeError, AttributeError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    try:
        moment = moment.astimezone(datetime.UTC)   # a time whose UTC falls outside years 1..9999 is none
    except OverflowError:
        return None
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000


Written = TypeVar("Written")


def merged_records(records: list[Written], id_of: Callable[[Written], Any],
                   merge: Callable[[Written, Written], Written | None],
                   same: Callable[[Written, Written], bool]) -> list[Written]:
    """One record per id where a source wrote a span or run twice, as it began and again as it
    ended: `merge(earlier, later)` is the one record that takes the earlier's place (None when
    the two are not one span's start and end); a later record the `same` as the first of its id
    counts once. Records that only share an id stay apart, in the order written."""
    kept: list[Written] = []
    first_at: dict[Any, int] = {}
    for record in records:
        place = first_at.setdefault(id_of(record), len(kept))
        if place < len(kept):
            earlier = kept[place]
            merged = merge(earlier, record)
            if merged is not None:
                kept[place] = merged
                continue
            if same(earlier, record):
                continue
        kept.append(record)
    return kept


def as_object(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one: an absent or odd field reads as
    nothing (the importers map what is there, and leave the rest)."""
    return value if isinstance(value, dict) else {}


def tool_message(value: Any) -> dict[str, Any] | None:
    """A LangChain ToolMessage's fields (`content`, `tool_call_id`, `status`), in any of the
    forms it is written in: its fields with `type: "tool"`, its constructor (`{"lc": 1, "kwargs":
    {...}}`), or `messages_to_dict`'s `{"type": "tool", "data": {...}}` (OpenInference writes
    that); None for any other value."""
    if not isinstance(value, dict):
        return None
    fields = as_object(value.get("kwargs")) if value.get("lc") == 1 else value
    if fields.get("type") != "tool":
        return None
    data = fields.get("data")
    return data if isinstance(data, dict) and "content" not in fields else fields


def parse_args(value: Any) -> tuple[dict[str, Any] | None, Any]:
    """(args, raw): an object as the args; JSON text holding an object parsed; anything else
    (other JSON, text that is not JSON, a Python repr) kept as written in `raw`."""
    if value is None:
        return None, None
    if isinstance(value, dict):
        return value, None
    if isinstance(value, str):
        parsed = _json(value)
        if isinstance(parsed, dict):
            return parsed, None
    return None, value


def parse_result(value: Any, json_text: bool = False) -> tuple[Any, Any]:
    """(result, raw): text that is JSON (or whose mime type says JSON) parsed; other text kept as
    the string itself, and also in `raw` when it looks like a Python repr (never evaluated)."""
    if not isinstance(value, str):
        return value, None
    parsed = _json(value)
    if parsed is not _NOT_JSON and parsed is not _NOT_TAKEN:
        return parsed, None
    if json_text or parsed is _NOT_TAKEN or _looks_like_repr(value):
        return value, value
    return value, None


_NOT_JSON: Any = object()
_NOT_TAKEN: Any = object()
"""JSON text an event cannot hold as a value (`_json`): kept as text, and as raw, as a repr is."""


def _json(text: str) -> Any:
    """The JSON value of `text`, or `_NOT_JSON` (so that a JSON `null` is told apart), or
    `_NOT_TAKEN` for JSON text that nests `MAX_NESTING` levels or more (its value, a field of an
    event, would nest the event deeper than any trace may: the whole run would be refused for one
    argument) or holds a number beyond any double (`1e400`, which a trace's JSON cannot hold)."""
    stripped = text.strip()
    if not stripped or stripped[0] not in '{["-0123456789tfn':
        return _NOT_JSON
    data = stripped.encode()
    if too_deep_at(data, MAX_NESTING - 1) is not None:
        return _NOT_TAKEN
    try:
        value = _decode(replace_lone_surrogates(data) if "\\u" in stripped else data)
    except RecursionError:
        return _NOT_TAKEN
    except msgspec.ValidationError:   # (msgspec's way of refusing a number out of range)
        return _NOT_TAKEN
    except msgspec.DecodeError:
        return _NOT_JSON
    if isinstance(value, float) and not math.isfinite(value):
        return _NOT_TAKEN
    return value


def _looks_like_repr(text: str) -> bool:
    """Python's `str()` of a dict, list, tuple, object, bytes, None, a bool or a float that is no
    JSON number: `{'a': 1}`, `[1, 'x']`, `Order(id=1)`, `b'\\x00'`, `None`, `inf`."""
    stripped = text.strip()
    if stripped in ("None", "True", "False", "inf", "-inf", "nan"):   # (what a tool returning one gives)
        return True
    if stripped[:1] in ("{", "[", "(") and stripped[-1:] in ("}", "]", ")"):
        return True
    if stripped[:2] in ("b'", 'b"') and len(stripped) > 2 and stripped[-1] == stripped[1]:
        return True
    head, _, rest = stripped.partition("(")
    return bool(rest) and stripped.endswith(")") and head.replace(".", "").replace("_", "").isalnum()


def error_text(error: str) -> str:
    """An error as `reason` and `data.error` say it: without a Python traceback (its paths, which
    LangChain writes into a run's error and a span's status message), within 500 characters."""
    head = error.split("Traceback (most recent call last):", 1)[0].strip()
    if not head:
        lines = error.strip().splitlines()
        head = lines[-1].strip() if lines else "error"
    return cut_text(head, 500)


def cut_text(text: str, limit: int) -> str:
    """`text` within `limit` UTF-16 units (the limits of `reason`, `status`…), `…` marking a cut."""
    if utf16_len(text) <= limit:
        return text
    kept = text[: limit - 1]
    while utf16_len(kept) > limit - 1:
        kept = kept[:-1]
    return kept + "…"


class ModelTurn:
    """The tool calls one model turn asked for, and which tool steps answered them (point 28: by
    tool name and order). A step with its own id takes that call if the model made it and no step
    took it yet, else the first call of its tool not taken; the call is then taken, so that the
    next step of the tool gets the next. Each step is answered in constant time, however many
    calls the turn made."""

    def __init__(self, calls: Iterable[tuple[str, str]]) -> None:
        self._of: dict[str, list[str]] = {}   # tool name -> the ids the model gave its calls, in order
        for call_id, name in calls:
            self._of.setdefault(name, []).append(call_id)
        self._made = {name: set(ids) for name, ids in self._of.items()}
        self._first: dict[str, int] = {}   # tool name -> no call of it before this one is free
        self._taken: set[str] = set()

    def take(self, name: str, own: str | None) -> str | None:
        """The call a step of tool `name` (with its own id, if it has one) answers, or None."""
        calls = self._of.get(name)
        if calls is None:
            return None
        if own is not None and own in self._made[name] and own not in self._taken:
            found = own
        else:
            at = self._first.get(name, 0)
            while at < len(calls) and calls[at] in self._taken:
                at += 1
            self._first[name] = at
            if at == len(calls):
                return None
            found = calls[at]
        self._taken.add(found)
        return found
