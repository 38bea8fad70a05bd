"""What a check notices that is not a violation, but may mean the trace was not really checked.

A trace that passes because nothing in it could match the rules is a silent pass. Five signs of
one are noticed, and reported as `notices` in the check report (the CLI prints them as warnings on
stderr; with `--strict` they fail):

- `empty_trace`: the trace has no events.
- `misspelt_type`: an event type that differs from a known one only by case, separators or one
  edit (`Tool.Call`, `tool_call`, `tool.cal` for `tool.call`). Known types are those of contract v1
  (`tool.call`, `tool.result`, `approval.granted`, `control.stop`, `outcome.observed`,
  `run.completed`) and every type the contract names; a type that one of the contract's type
  globs (`tool.*`) matches is known.
- `misspelt_field`: a field of the first events (`FIELD_SAMPLE` of them) that differs from a
  field the rules read (`RULE_FIELDS`) the same way (`tool_name` and `Tool` for `tool`, `callId`
  for `call_id`).
- `unmatchable_tool`: a tool called with a line break in its name (`\n`, `\r`, U+2028, U+2029),
  which no glob wildcard matches (as in the Node tool): `deny_tool` with `*` does not see its calls.
  The summary's first calls are looked through once the trace has been read: nothing per event.
- `rule_checked_nothing`: a rule whose `checked` is 0, so it may guard nothing (a glob that matches
  no tool, a type nobody writes). Rules for which zero is the passing state (`deny_tool`,
  `deny_event`, `stop_is_final`, `require_event` with `min: 0`, `tool_calls` without a `min`
  above 0...: the README lists them all) say so with `checked_nothing_is_normal` and are left out.

Types cost nothing per event: each is judged once, when the engine first asks the `TypeSpelling`
observer for a route, and only events of a misspelt type reach its handler.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from itertools import islice
from typing import Any

import msgspec

from agent_invariants._paths import input_name
from agent_invariants.globs import has_line_terminator
from agent_invariants.jsontext import show
from agent_invariants.report import CheckReport, Notice, RuleResult

__all__ = ("FIELD_SAMPLE", "KNOWN_TYPES", "RULE_FIELDS", "TRACE_PROBLEMS", "FieldSample", "TypeSpelling",
           "checked_nothing", "lines_of", "looks_like", "misspelt_fields", "named_types", "notice_lines",
           "strict_problem", "unmatchable_tools")

TRACE_PROBLEMS = frozenset({"empty_trace", "misspelt_type", "misspelt_field", "unmatchable_tool"})
"""Notices about the trace itself (`--strict` refuses such a trace, exit 2); the other kind is
about a rule (`--strict` fails it)."""
SHOWN_PER_KIND = 3
"""Notices of one kind shown for one trace; a count says how many more there were."""

RULE_FIELDS = ("seq", "type", "tool", "call_id", "call_signature", "approval_id", "approval_scope", "approved", "ok",
               "outcome_id", "verdict", "evidence_class", "claims_completion", "confidence")
"""The event fields version-1 rules read: a near miss of one of them is a field no rule sees."""
KNOWN_TYPES = ("tool.call", "tool.result", "approval.granted", "control.stop", "outcome.observed", "run.completed")
FIELD_SAMPLE = 1000
"""How many events, from the first, have their field names compared with the known ones."""
MAX_NAMES = 1000
"""Distinct misspelt types, and distinct field names of the sample, kept per trace: a hostile
trace may write a new one on every line (`t.o.o.l.c.a.l.l` squashes to `toolcall`), and neither
memory nor the report may grow with it. The first ones found are kept."""
_MAX_JUDGED = 1 << 16   # types remembered as judged; past that, a type is judged at each new route
_MAX_NAME = 64          # a field name longer than this is no misspelling of a short one: not kept
_SEPARATORS = re.compile(r"[\s._\-]+")
_TYPE_KEYS = frozenset({"type", "stop_type", "completion_types", "allowed_after"})
"""Rule fields (at any depth, in matchers too) whose strings are event types."""


def named_types(configs: Iterable[msgspec.Struct]) -> list[str]:
    """The event types the rules of a contract name."""
    found: list[str] = []
    for config in configs:
        _types_in(msgspec.to_builtins(config), False, found)
    return found


def _types_in(value: Any, is_type: bool, found: list[str]) -> None:
    """Add to `found` the strings under `value` that are event types. (A module function: a nested
    one that calls itself is a reference cycle, left to the collector after each check.)"""
    if isinstance(value, dict):
        for key, item in value.items():
            _types_in(item, key in _TYPE_KEYS, found)
    elif isinstance(value, list):
        for item in value:
            _types_in(item, is_type, found)
    elif is_type and isinstance(value, str):
        found.append(value)


def looks_like(word: str, known: Iterable[str], *, affixes: bool = False) -> str | None:
    """The known word that `word` is probably a misspelling of: equal but for case or separators
    (`.`, `_`, `-`, spaces, camelCase), or one edit away (words of five or more characters); with
    `affixes`, also a known word with a common suffix or prefix (`tool_name`, `toolId`,
    `event_type`)."""
    known = tuple(known)
    if word in known:
        return None
    squashed = _squash(word)
    lowered = word.lower()
    for candidate in known:
        if squashed == _squash(candidate):
            return candidate
    for candidate in known:
        if len(candidate) >= 5 and _one_edit(lowered, candidate.lower()):
            return candidate
    if affixes:
        for candidate in known:
            core = _squash(candidate)
            if squashed in (core + "name", core + "id", "event" + core):
                return candidate
    return None


def _squash(word: str) -> str:
    return _SEPARATORS.sub("", word).lower()


def _one_edit(a: str, b: str) -> bool:
    """True when `a` and `b` differ by one insertion, deletion, substitution or swap of neighbours."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = 0
    while i < len(short) and short[i] == long[i]:
        i += 1
    return short[i:] == long[i + 1:]


class TypeSpelling:
    """An observer that notices event types that look like misspellings of `known` ones. Known
    types with wildcards (a contract's `tool.*`) are not compared: a type they match is known."""

    def __init__(self, known: Iterable[str]) -> None:
        from agent_invariants.globs import compile_glob

        names = tuple(dict.fromkeys(known))
        self._known = tuple(name for name in names if "*" not in name and "?" not in name)
        self._globs = [compile_glob(name) for name in names if name not in self._known]
        self._found: dict[str, list[Any]] = {}   # type -> [looks like, count, first index]
        # each type is judged once (routes are asked for again per new tool, claims, ...)
        self._judged: dict[str, str | None] = {}
        self._handlers: dict[str, Any] = {}   # type -> its handler (the types in _found)

    def route_tools(self, event_type: str, claims: object) -> tuple[str, ...]:
        return ()   # types only

    def route(self, event_type: str, tool: object, claims: object) -> Any:
        close = self._judged.get(event_type, "")
        if close == "":
            close = self._judge(event_type)
        if close is None or (event_type not in self._found and len(self._found) >= MAX_NAMES):
            return None
        handler = self._handlers.get(event_type)
        if handler is None:   # one per type, so that routes of such events compare equal
            found = self._found.setdefault(event_type, [close, 0, None])

            def seen(event: Any, index: int) -> None:
                found[1] += 1
                if found[2] is None:
                    found[2] = index

            handler = self._handlers[event_type] = seen
        return handler

    def _judge(self, event_type: str) -> str | None:
        close = None
        if event_type not in self._known and not any(glob(event_type) for glob in self._globs):
            close = looks_like(event_type, self._known)
        if len(self._judged) < _MAX_JUDGED:
            self._judged[event_type] = close
        return close

    def notices(self) -> list[Notice]:
        return [Notice(kind="misspelt_type", message=f"event type {show(event_type)} looks like {show(close)}; "
                       "rules match types exactly, so none matched it", count=count, event_index=first)
                for event_type, (close, count, first) in self._found.items() if count]


class FieldSample:
    """The field names of the first `FIELD_SAMPLE` events of one read, from their raw JSON: the
    decoded events have no place for fields they do not know. Blank and comment lines are passed
    over; a line that does not decode as an object still counts as an event (the reader reads it
    its own way, or refuses the trace). Names longer than `_MAX_NAME` are not kept."""

    _decoder = msgspec.json.Decoder(dict[str, msgspec.Raw])

    def __init__(self) -> None:
        self.keys: dict[str, tuple[int, int]] = {}   # name -> (events with it, index of the first)
        self.seen = 0
        self.full = False

    def add(self, items: Iterable[bytes | memoryview | msgspec.Raw]) -> None:
        """Take the field names of `items` (raw events, in order), until the sample is full."""
        keys = self.keys
        for item in items:
            if self.seen >= FIELD_SAMPLE:
                self.full = True
                return
            data = bytes(item).removeprefix(b"\xef\xbb\xbf").strip()
            if not data or data[:1] == b"#":   # no event: the reader skips it too
                continue
            try:
                names = self._decoder.decode(data)
            except (msgspec.DecodeError, RecursionError):   # an event all the same (lone surrogates, say)
                names = {}
            for name in names:
                if name in keys:
                    count, first = keys[name]
                    keys[name] = (count + 1, first)
                elif len(keys) < MAX_NAMES and len(name) <= _MAX_NAME:
                    keys[name] = (1, self.seen)
            self.seen += 1


def misspelt_fields(keys: dict[str, tuple[int, int]]) -> list[Notice]:
    """Notices for the field names of sampled events (`keys`: name -> (count, first event
    index)) that look like misspellings of a field the rules read (`RULE_FIELDS`), but for event
    fields and for fields the events also have as written (a trace with `tool` that also has
    `tool_id` means something by it)."""
    from agent_invariants.events import Event

    known = tuple(field for field in RULE_FIELDS if field not in keys)
    found = []
    for key, (count, first) in keys.items():
        close = looks_like(key, known, affixes=True) if key not in Event.__struct_fields__ else None
        if close is not None:
            found.append(Notice(kind="misspelt_field", message=f"field {show(key)} looks like {show(close)}; "
                                f"rules read only {show(close)}", count=count, event_index=first))
    return found


def unmatchable_tools(tools: Iterable[str], first_call: Callable[[str], tuple[Any, int] | None]) -> list[Notice]:
    """One notice for the tools called with a line break in their name (`first_call`: the seq
    and index of a tool's first call), at the first such call."""
    if not _any_line_terminator(tools):
        return []
    found = sorted((first_call(tool)[1], tool) for tool in tools if has_line_terminator(tool))  # type: ignore[index]
    index, tool = found[0]
    more = f" (and {len(found) - 1} more such tool{'s' if len(found) > 2 else ''})" if len(found) > 1 else ""
    return [Notice(kind="unmatchable_tool", event_index=index,
                   message=f"tool {show(tool)}{more} has a line break in its name, which no glob wildcard (* or ?) "
                   "matches: a rule that reads tools through one does not see its calls")]


def _any_line_terminator(texts: Iterable[str]) -> bool:
    """Whether any of `texts` holds a line terminator, asked of a few thousand joined at a time:
    a trace may name a million tools, and a call per name costs a tenth of a second there."""
    remaining = iter(texts)
    while chunk := list(islice(remaining, 4096)):
        if has_line_terminator("\0".join(chunk)):
            return True
    return False


def checked_nothing(results: Iterable[RuleResult], normal: set[str]) -> list[Notice]:
    """Notices for the rules that passed having checked nothing, but for those (by id) in
    `normal`. A rule that failed so (a `require_event` that found none) said it in its violation:
    "it may guard nothing" would contradict it."""
    return [Notice(kind="rule_checked_nothing", rule_id=result.rule_id,
                   message=f"rule {show(result.rule_id)} ({result.rule_kind}) checked nothing in this trace; "
                   "it may guard nothing (do its tools or types appear in the trace?)")
            for result in results if result.checked == 0 and result.passed and result.rule_id not in normal]


def notice_lines(checks: Iterable[CheckReport], strict: bool, *, rules_fail: bool = False) -> tuple[list[str], bool]:
    """What the checks noticed, as lines for stderr (`warning: trace:line: message`; with
    `strict`, `error:` for the problems of a trace itself; with `rules_fail`, the CLI's `--strict`,
    also for a rule of severity error that checked nothing, which then fails, but in a report of
    a run cut short, where such a violation is inconclusive), and whether `strict` refuses a trace."""
    lines: list[str] = []
    refused = False
    for check in checks:
        if check.notices is msgspec.UNSET:
            continue
        trace = check.trace if check.trace is not msgspec.UNSET else "<events>"
        if check.run is not msgspec.UNSET:
            trace += f" (run {check.run})"
        failing = {result.rule_id for result in check.results if result.severity == "error"} \
            if rules_fail and check.partial is not True else set()
        errors = [notice for notice in check.notices if (strict and notice.kind in TRACE_PROBLEMS)
                  or (notice.kind == "rule_checked_nothing" and notice.rule_id in failing)]
        said = {id(notice) for notice in errors}
        others = [notice for notice in check.notices if id(notice) not in said]
        lines += [f"error: {line}" for line in lines_of(trace, errors)]
        lines += [f"warning: {line}" for line in lines_of(trace, others)]
        refused = refused or (strict and any(notice.kind in TRACE_PROBLEMS for notice in errors))
    return lines, refused


def strict_problem(trace: str, check: CheckReport) -> str | None:
    """Why `--strict` refuses the checked trace (its problems, on one line), or None."""
    problems = [notice for notice in check.notices or () if notice.kind in TRACE_PROBLEMS]
    return "; ".join(lines_of(trace, problems)) if problems else None


def lines_of(trace: str, notices: Iterable[Notice]) -> list[str]:
    """One line per notice of a trace, `trace:line: message` (`events[3]: message` for an event
    given in memory, which has no line), at most `SHOWN_PER_KIND` of each kind and then how many
    more; what came from the input is escaped (`_safe.inert`)."""
    from agent_invariants._safe import TEXT_LIMIT, inert

    by_kind: dict[str, list[Notice]] = {}
    for notice in notices:
        by_kind.setdefault(notice.kind, []).append(notice)
    trace = inert(input_name(trace), TEXT_LIMIT)   # (`-`: as the reader's errors name it)
    lines = []
    for found in by_kind.values():
        for notice in found[:SHOWN_PER_KIND]:
            where = f"{trace}:{notice.line}" if notice.line is not msgspec.UNSET \
                else f"{trace}[{notice.event_index}]" if notice.event_index is not msgspec.UNSET else trace
            count = f" ({notice.count} events)" if notice.count is not msgspec.UNSET and notice.count > 1 else ""
            lines.append(f"{where}: {inert(notice.message)}{count}")
        if len(found) > SHOWN_PER_KIND:
            lines.append(f"{trace}: … and {len(found) - SHOWN_PER_KIND} more like these")
    return lines
