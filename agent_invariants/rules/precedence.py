"""precedence (contract version 2): each `after` event needs an earlier `before`, per correlated key."""
from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

import msgspec
from msgspec import UNSET, Meta, Raw, UnsetType

from agent_invariants._js import js_number
from agent_invariants.events import Event
from agent_invariants.match.canonical import canonical_key, evidence_value
from agent_invariants.match.paths import NOT_FOUND, find, parse_path, pointer
from agent_invariants.pairing import Pairing
from agent_invariants.payloads import decoded
from agent_invariants.report import RuleResult, TraceSummary, Violation
from agent_invariants.rules.base import Route, Rule, RuleConfig
from agent_invariants.rules.fields import FieldProblem
from agent_invariants.rules.matchers import CompiledMatcher, EventMatcher, event_name

__all__ = ("Correlated", "Precedence", "PrecedenceConfig")

Path = Annotated[str, Meta(min_length=1, max_length=1000)]


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


class _Group:
    """What a precedence rule remembers of one correlate key."""

    __slots__ = ("before", "first_after", "waiting")

    def __init__(self) -> None:
        self.before: tuple[int, int | float] | None = None   # (index, seq) of the nearest before
        self.first_after: int | float | None = None           # seq of the key's first after
        # kept violations of afters without an earlier before: (index, how the after is named, violation)
        self.waiting: list[tuple[int, str, Violation]] | None = None


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
    `first` and `all`), and the calls still waiting for their result; memory grows with the
    number of distinct keys. Values are compared as JSON (`1` and `1.0` are one key, `1` and `"1"`
    two).
    """

    kind: ClassVar[str] = "precedence"
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
        self._groups: dict[tuple[object, ...], _Group] = {}
        # results are seen with their call's tool and args when a matcher may match a result
        self._pairs = any(matcher.may_match_type("tool.result", UNSET) or matcher.may_match_type("tool.result", True)
                          or matcher.may_match_type("tool.result", False) for matcher in (self._before, self._after))
        self._pairing: Pairing[tuple[str | UnsetType, Raw | UnsetType]] = Pairing()
        self._evidence = evidence_value({"before": config.before.to_dict(), "after": config.after.to_dict(),
                                         "scope": config.scope})

    def route_tools(self, event_type: str, claims: bool | UnsetType) -> tuple[str, ...] | None:
        if event_type == "tool.result":
            return ()
        return (*self._before.route_tools(event_type), *self._after.route_tools(event_type))

    def route(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType) -> Route:
        if event_type == "tool.result":
            return self._result if self._pairs else None
        if event_type == "tool.call" and self._pairs:
            return self._call
        if self._before.may_match(event_type, tool, claims) or self._after.may_match(event_type, tool, claims):
            return self._event
        return None

    def _call(self, event: Event, index: int) -> None:
        self._pairing.call(event.call_id, (event.tool, event.args))
        self._seen(event, index, event.tool, event.args)

    def _result(self, event: Event, index: int) -> None:
        call = self._pairing.result(event.call_id)
        tool, args = (event.tool, UNSET) if call is None else call
        self._seen(event, index, tool, args)

    def _event(self, event: Event, index: int) -> None:
        self._seen(event, index, event.tool, event.args)

    def _seen(self, event: Event, index: int, tool: str | UnsetType, args: Raw | UnsetType) -> None:
        """An event as the matchers see it: first as an after (so that it is not its own
        predecessor), then as a before."""
        if self._after.matches_as(event, tool, args):
            self._check_after(event, index, tool, args)
        if self._before.matches_as(event, tool, args):
            self._add_before(event, index, args)

    def _key(self, args: Raw | UnsetType, paths: list[tuple[str, ...]]) -> tuple[list[Any], list[int]]:
        """The values at the correlate paths, and the positions of those that are missing."""
        if not paths:
            return [], []
        value = NOT_FOUND if args is UNSET else decoded(args)
        values = [NOT_FOUND if value is NOT_FOUND else find(value, path) for path in paths]
        return values, [position for position, found in enumerate(values) if found is NOT_FOUND]

    def _check_after(self, event: Event, index: int, tool: str | UnsetType, args: Raw | UnsetType) -> None:
        values, missing = self._key(args, self._after_paths)
        if missing:
            self.checked += 1
            self._correlate_missing(event, index, tool, args, missing)
            return
        key = tuple(canonical_key(value) for value in values)
        group = self._groups.get(key)
        scope = self._config.scope
        if scope != "each":
            if group is None:
                group = self._groups[key] = _Group()
            if group.first_after is not None and scope == "first":
                return   # only the group's first after is checked
            if group.first_after is None:
                group.first_after = event.seq
        self.checked += 1
        before = None if group is None else group.before
        named = event_name(event.type, tool)
        if before is not None:
            gap = index - before[0]
            if self._window is not UNSET and gap > self._window and self.note_violation():
                self.keep(f"{named} at seq {js_number(event.seq)} follows its {self._config.before.brief()} at seq "
                          f"{js_number(before[1])} by {gap} events, more than within_events ({self._window}).",
                          self._evidence_with(values), event.seq, index, reason="out_of_window",
                          related_seqs=[before[1]])
            return
        if not self.note_violation():
            return
        self.keep(f"{named} at seq {js_number(event.seq)} has no {self._config.before.brief()}{self._for(values)} "
                  "before it.", self._evidence_with(values), event.seq, index)
        if group is None:
            group = self._groups[key] = _Group()
        if group.waiting is None:
            group.waiting = []
        group.waiting.append((index, named, self.violations[-1]))   # late, should a before of its key come

    def _add_before(self, event: Event, index: int, args: Raw | UnsetType) -> None:
        values, missing = self._key(args, self._before_paths)
        if missing:
            return   # a before without the key is no before of any group
        key = tuple(canonical_key(value) for value in values)
        group = self._groups.get(key)
        if group is None:
            group = self._groups[key] = _Group()
        if group.waiting:
            self._late(group, event, index)
        group.before = (index, event.seq)
        first_after = group.first_after
        if self._config.scope == "all" and first_after is not None and first_after != event.seq \
                and self.note_violation():
            self.keep(f"{self._config.before.brief()} at seq {js_number(event.seq)} comes after the first "
                      f"{self._config.after.brief()} of its key (seq {js_number(first_after)}).",
                      self._evidence_with(values), event.seq, index, reason="before_after_action",
                      related_seqs=[first_after])

    def _late(self, group: _Group, event: Event, index: int) -> None:
        """The afters of the group that waited for a before: this one came, too late."""
        assert group.waiting is not None
        still = []
        for waiting in group.waiting:
            at, named, violation = waiting
            assert violation.event_seq is not UNSET
            if at == index:   # the event itself is both: it is not its own predecessor
                still.append(waiting)
                continue
            key = violation.evidence.get("key") if violation.evidence else None
            violation.code = f"{self.kind}.late"
            violation.related_seqs = [event.seq]
            violation.message = (f"{named} at seq {js_number(violation.event_seq)} comes before its "
                                 f"{self._config.before.brief()}{self._for(key)}, which is only at seq "
                                 f"{js_number(event.seq)}.")
        group.waiting = still or None

    def _for(self, values: list[Any] | None) -> str:
        """` for key [...]`, when the rule correlates."""
        return "" if not self._after_paths or values is None else f" for key {_shown(values)}"

    def _correlate_missing(self, event: Event, index: int, tool: str | UnsetType, args: Raw | UnsetType,
                           missing: list[int]) -> None:
        if not self.note_violation():
            return
        texts = [self._after_texts[position] for position in missing]
        at = "/args" if args is UNSET else pointer(("args", *self._after_paths[missing[0]]))
        evidence = dict(self._evidence, missing=texts)
        self.keep(f"{event_name(event.type, tool)} at seq {js_number(event.seq)} lacks "
                  f"{'args' if args is UNSET else ', '.join(texts)}, which "
                  f"{'tell' if len(texts) > 1 or args is UNSET else 'tells'} which {self._config.before.brief()} "
                  "it needs.", evidence_value(evidence), event.seq, index, reason="correlate_missing",
                  status="unresolved", pointer=at)

    def _evidence_with(self, values: list[Any]) -> dict[str, Any]:
        if not self._after_paths:
            return dict(self._evidence)
        return dict(evidence_value({**self._evidence, "key": values}))

    def finish(self, summary: TraceSummary) -> RuleResult:
        result = self.result()
        if self.checked == 0:
            result.vacuous = True
        return result


def _shown(values: list[Any]) -> str:
    return msgspec.json.encode(evidence_value(values)).decode()
