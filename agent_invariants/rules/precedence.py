"""precedence (contract version 2): each `after` event needs an earlier `before`, per correlated key."""
from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Iterator
from itertools import chain
from operator import itemgetter
from typing import Annotated, Any, ClassVar, Literal

import msgspec
from msgspec import UNSET, Meta, Raw, UnsetType

from agent_invariants._js import js_number
from agent_invariants.events import Event
from agent_invariants.match.canonical import canonical_key, evidence_value, held_key
from agent_invariants.match.explained import shown
from agent_invariants.match.paths import NOT_FOUND, find, parse_path, pointer
from agent_invariants.pairing import Calls, PairedCall
from agent_invariants.payloads import decoded
from agent_invariants.report import RuleResult, TraceSummary
from agent_invariants.rules.base import Route, Rule, RuleConfig
from agent_invariants.rules.fields import FieldProblem
from agent_invariants.rules.matchers import CompiledMatcher, EventMatcher, event_name
from agent_invariants.spill import Partitions

__all__ = ("Correlated", "Precedence", "PrecedenceConfig")

Path = Annotated[str, Meta(min_length=1, max_length=1000)]

MAX_KEYS = 100_000
"""Keys whose state is kept in memory (about 200 bytes each: 20 MiB); past them, the state moves
to a temporary file and the rest of the trace is judged at its end (`Precedence._settle`)."""


class Correlated(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A correlate item whose path differs on the two sides."""

    before: Path
    """The path in the args of the `before` event."""
    after: Path
    """The path in the args of the `after` event."""

    def to_dict(self) -> dict[str, str]:
        return {"before": self.before, "after": self.after}


class PrecedenceConfig(RuleConfig, frozen=True, kw_only=True, tag="precedence"):
    """Options of a precedence rule."""

    since_version: ClassVar[int] = 2

    before: EventMatcher
    """The events that must come first (a matcher; see `explain match` for `args`)."""
    after: EventMatcher
    """The events that need one of them earlier."""
    scope: Literal["each", "first", "all"] = "each"
    """`each` (default): every after; `first`: only the first after of each key; `all`: as
    `each`, and no before may come after the first after of its key."""
    correlate: Annotated[list[Path | Correlated], Meta(min_length=1, max_length=10)] | UnsetType = UNSET
    """1..10 paths into the args (or `{before, after}` pairs of paths): only a before with the same
    values counts for an after."""
    within_events: Annotated[int, Meta(ge=1, le=100_000)] | UnsetType = UNSET
    """The before must be at most this many events earlier (positions, not seq numbers)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        for position, item in enumerate(self.correlate or ()):
            sides = [("", item)] if isinstance(item, str) else [(".before", item.before), (".after", item.after)]
            for side, text in sides:
                try:
                    parse_path(text)
                except ValueError as exc:
                    raise FieldProblem(f"correlate[{position}]{side}", str(exc)) from None

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        if self.correlate is not UNSET:
            out["correlate"] = [item if isinstance(item, str) else item.to_dict() for item in self.correlate]
        return out


_Key = object
"""A group's key: the `canonical_key` of the correlate value (the value itself when it is a string,
the usual case: an order id), or a tuple of those for several paths (`()` without correlate)."""


class Precedence(Rule):
    """Fails when an `after` event comes without an earlier `before` event of the same key.

    ## What it checks
    `before` and `after` are matchers (as in require_order, with `args`, `reason` and `status`).
    In this kind a `tool.result` is seen with its call's tool and args: `{"type": "tool.result",
    "tool": "get", "ok": true}` means "a successful get" (a result answers the nearest earlier
    call with its `call_id` that has no result yet; one without such a call keeps its own tool).

    With `correlate`, events are grouped by the values at those paths in their args (a result's
    are its call's), and an after only looks at befores of its own group: the refund of order B2
    needs the lookup of B2, not of A1. Each item is a path read on both sides, or `{"before":
    "id", "after": "order"}` when the names differ; several items make one composite key. A
    before that lacks a path is ignored. For each after that is checked, the nearest earlier
    before of its group (never the event itself, should it match both) decides:

    - none earlier, one later: `precedence.late` at the after, `related_seqs` naming the first
      later before;
    - none at all: `precedence.missing` at the after;
    - the nearest is more than `within_events` events back: `precedence.out_of_window`,
      `related_seqs` naming it;
    - the after lacks a correlate path (or has no args): `precedence.correlate_missing` (status
      `unresolved`), whatever the scope.

    `scope` says which afters are checked: `each` (default) every one; `first` the first after with
    a resolved key in each group; `all` every one, and then each before that comes after its
    group's first after is a `precedence.before_after_action` at the before (`related_seqs`: that
    first after). Evidence: `{before, after, scope, key}` (`key`: the correlate values).
    `checked` counts the afters checked; a trace without any passes as vacuous.

    ## Why it matters
    "Look before you act" is the commonest safety rule of all: read the order before refunding
    it, run the tests before merging, ask before deleting. `require_order` accepts a lookup of
    any order; this rule asks for the lookup of *that* order, says whether it came too late or
    never, and with `scope: all` catches the agent that checks after acting.

    ## Failing trace
    With `{"id": "lookup-first", "kind": "precedence", "before": {"type": "tool.result", "tool":
    "get", "ok": true}, "after": {"type": "tool.call", "tool": "refund"}, "correlate": [{"before":
    "id", "after": "order"}]}`:
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "get", "call_id": "c1", "args": {"id": "A1"}}
    {"seq": 2, "type": "tool.result", "call_id": "c1", "ok": true}
    {"seq": 3, "type": "tool.call", "tool": "refund", "call_id": "c2", "args": {"order": "B2"}}
    {"seq": 4, "type": "tool.call", "tool": "get", "call_id": "c3", "args": {"id": "B2"}}
    {"seq": 5, "type": "tool.result", "call_id": "c3", "ok": true}
    ```
    Violation at seq 3, `precedence.late`: key `["B2"]`, `related_seqs: [5]`.

    ## Passing trace
    ```jsonl
    {"seq": 1, "type": "tool.call", "tool": "get", "call_id": "c1", "args": {"id": "A1"}}
    {"seq": 2, "type": "tool.result", "call_id": "c1", "ok": true}
    {"seq": 3, "type": "tool.call", "tool": "get", "call_id": "c3", "args": {"id": "B2"}}
    {"seq": 4, "type": "tool.result", "call_id": "c3", "ok": true}
    {"seq": 5, "type": "tool.call", "tool": "refund", "call_id": "c2", "args": {"order": "B2"}}
    ```

    ## Options
    - `before`, `after` (matchers, required).
    - `scope` (`each`, `first` or `all`; default `each`).
    - `correlate` (1..10 items: a path, or `{before, after}`).
    - `within_events` (1..100000): how far back the before may be, in events.

    ## Known limits
    The rule keeps, per key seen, where its nearest before was (and its first after, under
    `first` and `all`), about 200 bytes a key (a key over 256 characters is held by its SHA-256,
    so a long value costs no more). Past 100,000 keys this state moves to a temporary
    file, with every before and after that follows, and those are judged key by key at the end of
    the trace: memory stays flat however many keys there are, and the report is the same. Results
    are paired with their calls once per check, for all rules (the calls still waiting for a
    result are kept).
    Values are compared as JSON (`1` and `1.0` are one key, `1` and `"1"` two).
    """

    kind: ClassVar[str] = "precedence"
    enforced: ClassVar[bool] = True   # record --enforce
    config_type: ClassVar[type[RuleConfig]] = PrecedenceConfig
    tags: ClassVar[tuple[str, ...]] = ("order", "safety")
    reason: ClassVar[str] = "missing"

    def __init__(self, config: PrecedenceConfig) -> None:
        super().__init__(config)
        self._config = config
        self._before = CompiledMatcher(config.before)
        self._after = CompiledMatcher(config.after)
        items = config.correlate or ()
        self._before_paths = [parse_path(item if isinstance(item, str) else item.before) for item in items]
        self._after_paths = [parse_path(item if isinstance(item, str) else item.after) for item in items]
        self._after_texts = [item if isinstance(item, str) else item.after for item in items]
        self._window = config.within_events
        self._keys = _Keys(self._window, config.scope)
        # Violations are kept as findings (see `_keep_found`), built at the end: a missing one
        # may yet become late. Past MAX_KEYS keys, the befores and afters go to `_spill`.
        self._kept: list[list[Any]] = []
        self._spill: Partitions | None = None
        self._waiting_at: defaultdict[int, dict[str, list[list[Any]]]] = defaultdict(dict)
        self._kept_since: list[list[Any]] = []   # correlate_missing found since the spill: the first `cap`
        self._found_since = 0                    # and how many
        # A result is seen with its call's tool and args when a matcher may match results
        self.pairs_calls = _reads_results(self._before) or _reads_results(self._after)
        self._evidence = evidence_value({"before": config.before.to_dict(), "after": config.after.to_dict(),
                                         "scope": config.scope})

    def route_tools(self, event_type: str, claims: bool | UnsetType) -> tuple[str, ...] | None:
        if event_type == "tool.result":
            return ()
        return (*self._before.route_tools(event_type), *self._after.route_tools(event_type))

    def may_deny(self, call: Event) -> bool:
        """A call its `after` may match can break the rule, and under `scope: all` one its
        `before` may match (a before after its group's first after); no other call can."""
        routing = ("tool.call", call.tool, call.claims_completion)
        return self._after.may_match(*routing) or (self._config.scope == "all" and self._before.may_match(*routing))

    def route(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType) -> Route:
        if event_type == "tool.result" and self.pairs_calls:
            return None   # results come through `read_results`, by their call's tool
        after = self._after.may_match(event_type, tool, claims)
        before = self._before.may_match(event_type, tool, claims)
        if after and before:
            return self._event
        return self._after_event if after else self._before_event if before else None

    def read_results(self, calls: Calls) -> None:
        """The results of the calls of the tools each matcher names (of any call when it names
        none): first as afters, then as befores, as events are taken."""
        for matcher, reader in ((self._after, self._after_result), (self._before, self._before_result)):
            if _reads_results(matcher):
                tools = None if matcher.spec.tool is UNSET else [matcher.spec.tool]
                calls.read_results(reader, tools, orphans=True, args=True)

    def _after_result(self, event: Event, index: int, call: PairedCall | None) -> None:
        """A result of a call of the after's tool (or an orphan with such a tool of its own)."""
        claims = self._after.spec.claims_completion
        if claims is not UNSET and event.claims_completion is not claims:
            return
        args = UNSET if call is None else call.args
        if not self._after.needs_event or self._after.matches(event, args):
            self._check_after(event, index, event.tool if call is None else call.tool, args)

    def _before_result(self, event: Event, index: int, call: PairedCall | None) -> None:
        """A result of a call of the before's tool (or an orphan with such a tool of its own)."""
        claims = self._before.spec.claims_completion
        if claims is not UNSET and event.claims_completion is not claims:
            return
        args = UNSET if call is None else call.args
        if not self._before.needs_event or self._before.matches(event, args):
            self._add_before(event, index, args)

    def _event(self, event: Event, index: int) -> None:
        """An event seen with its own tool and args whose routing key may match both `after` and
        `before`: first as an after, so that it is not its own predecessor, then as a before."""
        self._after_event(event, index)
        self._before_event(event, index)

    def _after_event(self, event: Event, index: int) -> None:
        """An event whose routing key may match `after` (seen with its own tool and args)."""
        if not self._after.needs_event or self._after.matches(event):
            self._check_after(event, index, event.tool, event.args)

    def _before_event(self, event: Event, index: int) -> None:
        """An event whose routing key may match `before` (seen with its own tool and args)."""
        if not self._before.needs_event or self._before.matches(event):
            self._add_before(event, index, event.args)

    def _key(self, args: Raw | UnsetType, paths: list[tuple[str, ...]]) -> tuple[_Key, list[Any], list[int]]:
        """The group key of these args, the values at the correlate paths, and the positions of
        the paths that are missing."""
        if not paths:
            return (), [], []
        if args is UNSET:
            return (), [NOT_FOUND] * len(paths), list(range(len(paths)))
        value = decoded(args)
        if len(paths) == 1:   # the usual case, kept short
            found = _found(value, paths[0])
            if found is NOT_FOUND:
                return (), [found], [0]
            return held_key(canonical_key(found)), [found], []
        values = [find(value, path) for path in paths]
        missing = [position for position, found in enumerate(values) if found is NOT_FOUND]
        if missing:
            return (), values, missing
        return tuple(held_key(canonical_key(found)) for found in values), values, missing

    def _check_after(self, event: Event, index: int, tool: str | UnsetType, args: Raw | UnsetType) -> None:
        key, values, missing = self._key(args, self._after_paths)
        if missing:
            self.checked += 1
            texts = [self._after_texts[position] for position in missing]
            at = "/args" if args is UNSET else pointer(("args", *self._after_paths[missing[0]]))
            self._found([index, 0, "correlate_missing", event.seq, event_name(event.type, tool), None, None,
                         (texts, at, args is UNSET)])
            return
        if self._spill is not None:
            self._spill.add(1, _spilled(key), index, 0, event.seq, event_name(event.type, tool), evidence_value(values))
            return
        keys = self._keys
        verdict = keys.after(key, index, event.seq)
        if verdict is False:
            return
        self.checked += 1
        if verdict is not None and self.note_violation():
            found = [index, 0, verdict[0], event.seq, event_name(event.type, tool), values, verdict[1], verdict[2]]
            self._kept.append(found)
            if verdict is _MISSING:
                keys.wait(key, found)
        if len(keys.befores) + len(keys.first_after) > MAX_KEYS:
            self._start_spill()

    def _add_before(self, event: Event, index: int, args: Raw | UnsetType) -> None:
        paths = self._before_paths
        if len(paths) == 1 and self._spill is None:   # the usual case, without building `values`
            if args is UNSET:
                return
            found = _found(decoded(args), paths[0])
            if found is NOT_FOUND:
                return   # a before without the key is no before of any group
            key: _Key = held_key(canonical_key(found))
            values = None
        else:
            key, values, missing = self._key(args, paths)
            if missing:
                return
            if self._spill is not None:
                self._spill.add(1, _spilled(key), index, 1, event.seq, None, evidence_value(values))
                return
        keys = self._keys
        first_after = keys.before(key, index, event.seq)
        if first_after is not None and self.note_violation():
            values = values if values is not None else self._key(args, paths)[1]
            self._kept.append([index, 1, "before_after_action", event.seq, None, values, first_after, None])
        if len(keys.befores) + len(keys.first_after) > MAX_KEYS:
            self._start_spill()

    def _found(self, found: list[Any]) -> None:
        """A violation found as its event is read (correlate_missing): kept now, or once the
        keys have spilled, among the first `cap` of those found since (the rest only counted)."""
        if self._spill is None:
            if self.note_violation():
                self._kept.append(found)
            return
        self._found_since += 1
        if len(self._kept_since) < self.cap:
            self._kept_since.append(found)

    def _start_spill(self) -> None:
        """Too many keys: their state moves to a temporary file, and every before and after seen
        from now on is written there too, to be judged key by key at the end (`_settle`)."""
        spill = self._spill = Partitions(kinds=2)
        keys = self._keys
        for key in {**keys.befores, **keys.first_after}:
            before = keys.befores.get(key)
            spill.add(0, _spilled(key), before, keys.first_after.get(key))
        for key, waiting in keys.waiting.items():   # kept afters of a key that a later before makes late
            text = _spilled(key)
            self._waiting_at[spill.number(text)][text] = waiting
        self._keys = _Keys(self._window, self._config.scope)

    def _settle(self, spill: Partitions) -> None:
        """Judge, a partition of keys at a time, the befores and afters written to the spill, and
        keep the first of the violations found (in trace order) that there is room for."""
        total = 0

        def every() -> Iterator[list[Any]]:
            nonlocal total
            for number in range(spill.count):
                found = self._settle_partition(spill, number)
                total += len(found)
                yield from found

        try:
            room = max(0, self.cap - len(self._kept))
            self._kept.extend(heapq.nsmallest(room, chain(every(), self._kept_since), key=itemgetter(0, 1)))
            if room == 0:   # nsmallest(0, ...) would not look at them, and they must be counted
                for _ in every():
                    pass
        finally:
            spill.close()
        self.violation_count += total + self._found_since

    def _settle_partition(self, spill: Partitions, number: int) -> list[list[Any]]:
        keys = _Keys(self._window, self._config.scope)
        # (taken, not shared: the afters found waiting here are judged with this partition, and must
        # not stay behind with the rest, or every missing after of the trace would be kept)
        keys.waiting = self._waiting_at.pop(number, {})
        for text, before, first_after in spill.read(0, number):
            if before is not None:
                keys.befores[text] = (before[0], before[1])
            if first_after is not None:
                keys.first_after[text] = first_after
        found: list[list[Any]] = []
        for text, index, role, seq, named, values in spill.read(1, number):
            if role == 0:
                verdict = keys.after(text, index, seq)
                if verdict is False:
                    continue
                self.checked += 1
                if verdict is not None:
                    found.append([index, 0, verdict[0], seq, named, values, verdict[1], verdict[2]])
                    if verdict is _MISSING:
                        keys.wait(text, found[-1])
            else:
                first_after = keys.before(text, index, seq)
                if first_after is not None:
                    found.append([index, 1, "before_after_action", seq, None, values, first_after, None])
        return found

    def _keep_found(self, found: list[Any]) -> None:
        """Build the violation a finding stands for: [index, order, reason, seq, how the event is
        named, the key's values, the related seq, what else the message says]."""
        index, _, reason, seq, named, values, related, more = found
        before, after = self._config.before.brief(), self._config.after.brief()
        if reason == "correlate_missing":
            texts, at, no_args = more
            evidence = evidence_value(dict(self._evidence, missing=texts))
            self.keep(f"{named} at seq {js_number(seq)} lacks {'args' if no_args else ', '.join(texts)}, which "
                      f"{'tell' if len(texts) > 1 or no_args else 'tells'} which {before} it needs.", evidence,
                      seq, index, reason=reason, status="unresolved", pointer=at)
            return
        evidence = self._evidence_with(values)
        if reason == "missing":
            self.keep(f"{named} at seq {js_number(seq)} has no {before}{self._for(values)} before it.", evidence,
                      seq, index)
        elif reason == "late":
            self.keep(f"{named} at seq {js_number(seq)} comes before its {before}{self._for(values)}, which is "
                      f"only at seq {js_number(related)}.", evidence, seq, index, reason=reason,
                      related_seqs=[related])
        elif reason == "out_of_window":
            self.keep(f"{named} at seq {js_number(seq)} follows its {before} at seq {js_number(related)} by {more} "
                      f"events, more than within_events ({self._window}).", evidence, seq, index, reason=reason,
                      related_seqs=[related])
        else:   # before_after_action
            self.keep(f"{before} at seq {js_number(seq)} comes after the first {after} of its key (seq "
                      f"{js_number(related)}).", evidence, seq, index, reason=reason, related_seqs=[related])

    def _for(self, values: list[Any] | None) -> str:
        """` for key [...]`, when the rule correlates."""
        return "" if not self._after_paths or values is None else f" for key {_shown(values)}"

    def _evidence_with(self, values: list[Any]) -> dict[str, Any]:
        if not self._after_paths:
            return dict(self._evidence)
        return dict(evidence_value({**self._evidence, "key": values}))

    def finish(self, summary: TraceSummary) -> RuleResult:
        if self._spill is not None:
            self._settle(self._spill)
            self._spill = None
        for found in self._kept:
            self._keep_found(found)
        self._kept.clear()
        result = self.result()
        if self.checked == 0:
            result.vacuous = True
        return result


_MISSING = ("missing", None, None)
_SEEN = (-1, None)
"""Where a key's before was, when no window makes it matter."""


class _Keys:
    """What precedence remembers per key, and how it judges an after and a before by it: where
    the key's nearest before was, its first after (under `first` and `all`), and the afters found
    without a before, which a later before of their key makes `late`. Used as the events come,
    and again at the end, a partition at a time, for the keys that spilled."""

    __slots__ = ("befores", "first_after", "scope", "waiting", "window")

    def __init__(self, window: int | UnsetType, scope: str) -> None:
        self.window, self.scope = window, scope
        self.befores: dict[Any, tuple[int, Any]] = {}
        self.first_after: dict[Any, Any] = {}
        self.waiting: dict[Any, list[list[Any]]] = {}

    def after(self, key: Any, index: int, seq: Any) -> tuple[str, Any, Any] | Literal[False] | None:
        """An after of this key: False when the scope does not check it, None when it passes,
        else (reason, the seq of the before it names, the gap)."""
        if self.scope != "each":
            first = self.first_after.setdefault(key, seq)
            if first != seq and self.scope == "first":
                return False   # only the key's first after is checked
        before = self.befores.get(key)
        if before is None:
            return _MISSING
        window = self.window
        if window is not UNSET and index - before[0] > window:
            return "out_of_window", before[1], index - before[0]
        return None

    def wait(self, key: Any, found: list[Any]) -> None:
        """A missing after, should a before of its key come later."""
        self.waiting.setdefault(key, []).append(found)

    def before(self, key: Any, index: int, seq: Any) -> Any:
        """A before of this key; the seq of the key's first after when this before comes after it
        under `all` (a before_after_action), else None."""
        if self.waiting and key in self.waiting:
            still = []
            for found in self.waiting.pop(key):
                if found[0] == index:   # the event itself is both: it is not its own predecessor
                    still.append(found)
                else:
                    found[2], found[6] = "late", seq
            if still:
                self.waiting[key] = still
        self.befores[key] = _SEEN if self.window is UNSET else (index, seq)
        if self.scope == "all":
            first = self.first_after.get(key)
            if first is not None and first != seq:
                return first
        return None


def _spilled(key: _Key) -> str:
    """A key as the text the spill files it under: equal keys (`1` and `1.0`, `0` and `-0.0`, 2^53
    as an int or a float) give equal texts, as they are equal dict keys in memory."""
    return key if key.__class__ is str else repr(_plain_numbers(key))


def _plain_numbers(key: Any) -> Any:
    if key.__class__ is tuple:
        return tuple(_plain_numbers(part) for part in key)
    if key.__class__ is int or key.__class__ is float:
        return float(key) + 0.0   # (+ 0.0 makes -0.0 zero)
    return key


def _reads_results(matcher: CompiledMatcher) -> bool:
    """Whether the matcher may match a `tool.result` (which is then seen with its call's tool)."""
    return any(matcher.may_match_type("tool.result", claims) for claims in (UNSET, True, False))


def _found(value: Any, path: tuple[str, ...]) -> Any:
    """`find`, with the one-key path into an object (the usual correlate) looked up directly."""
    if len(path) == 1 and value.__class__ is dict:
        return value.get(path[0], NOT_FOUND)
    return find(value, path)


def _shown(values: list[Any]) -> str:
    return shown(evidence_value(values))
