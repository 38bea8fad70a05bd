"""The event matcher of require_order, require_event and deny_event, the base of the kinds with
one `match`, and how messages name an event (`event_name`) and a matcher (`EventMatcher.brief`).

    {"type": "tool.call", "tool": "payments.*", "ok": false}

An event matches when every key given matches (AND); at least one key is required. `type`, `tool`
and `outcome_id` are globs; `type` is not trimmed (event types are). `ok`, `verdict` and
`claims_completion` are compared exactly, so an event without the field never matches them, and a
glob never matches a missing value.

Version 2 adds three keys (spec/v2-extensions.md, end of §2; §10 point 15): `args`, a match tree
without references on the event's own args (an event without args never matches it), and `reason`
and `status`, globs on the event's own fields (no status is derived from the event's type).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar

import msgspec
from msgspec import UNSET, Meta, Raw, UnsetType

from agent_invariants.events import Event, Verdict
from agent_invariants.globs import compile_glob
from agent_invariants.payloads import decoded, text
from agent_invariants.rules.base import Observer, Rule, RuleConfig
from agent_invariants.rules.fields import FieldProblem, Glob, check_text, normalise_strings, string_fields

if TYPE_CHECKING:
    from agent_invariants.match.quick import Holds

__all__ = ("CompiledMatcher", "EventMatcher", "MatchingRule", "event_name")

MatcherType = Annotated[str, Meta(
    min_length=1, max_length=200,
    description="Glob on the event type, 1..200 characters, not trimmed",
)]


class EventMatcher(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Which events a rule means: every key given must match."""

    type: MatcherType | UnsetType = UNSET
    """The event's type (a glob, not trimmed)."""
    tool: Glob | UnsetType = UNSET
    """The event's tool (a glob; never matches an event without a tool)."""
    ok: bool | UnsetType = UNSET
    """The event's `ok`, compared exactly (an event without `ok` never matches)."""
    outcome_id: Glob | UnsetType = UNSET
    """The event's outcome id (a glob)."""
    verdict: Verdict | UnsetType = UNSET
    """The event's verdict, compared exactly."""
    claims_completion: bool | UnsetType = UNSET
    """The event's `claims_completion`, compared exactly."""
    args: Any | UnsetType = UNSET
    """(Version 2.) A match tree the event's own `args` must match (see `explain match`); no
    references. An event without args never matches."""
    reason: Glob | UnsetType = UNSET
    """(Version 2.) The event's own `reason` (a glob)."""
    status: Glob | UnsetType = UNSET
    """(Version 2.) The event's own `status` (a glob); never derived from the event's type."""

    _strings: ClassVar[dict[str, tuple[str, bool]]] = {}
    version_2_fields: ClassVar[frozenset[str]] = frozenset({"args", "reason", "status"})

    def __post_init__(self) -> None:
        if all(getattr(self, name) is UNSET for name in self.__struct_fields__):
            raise ValueError("a matcher needs at least one of type, tool, ok, outcome_id, verdict, claims_completion"
                             " (or, in version 2, args, reason, status)")
        if self.type is not UNSET:
            check_text(self.type, "type", 200, trim=False)
        normalise_strings(self, EventMatcher._strings)
        if self.args is not UNSET:
            # the match grammar is imported only by contracts that use it (start-up)
            from agent_invariants.match.tree import MatchError, compile_tree

            try:
                compile_tree(self.args, "args")
            except MatchError as exc:
                raise FieldProblem(exc.path, exc.problem) from None

    def to_dict(self) -> dict[str, Any]:
        """The matcher with its keys in schema order, absent keys left out."""
        return {name: getattr(self, name) for name in self.__struct_fields__ if getattr(self, name) is not UNSET}

    def brief(self) -> str:
        """The matcher as messages name it: the type and tool as an event would show them, any
        other key in parentheses: `tool.call payments.*`, `tool.result ci.* (ok true)`,
        `event (verdict satisfied)`."""
        head = "event" if self.type is UNSET else self.type
        rest = self.to_dict()
        rest.pop("type", None)
        if self.type is not UNSET and self.tool is not UNSET:
            head = event_name(head, rest.pop("tool"))
        if not rest:
            return head
        shown = ", ".join(f"{key} {_js_text(value)}" for key, value in rest.items())
        return f"{head} ({shown})"


def event_name(event_type: str, tool: str | UnsetType) -> str:
    """An event as messages name it: its type, then its tool when it has one (`tool.call kb.search`)."""
    return event_type if tool is UNSET else f"{event_type} {tool}"


def _js_text(value: object) -> str:
    """A matcher value as JSON writes it: `true`, `false`, or the text itself."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else msgspec.json.encode(value).decode()


EventMatcher._strings = string_fields(EventMatcher)


class CompiledMatcher:
    """An EventMatcher split in two: what the engine's routing key decides (type, tool,
    claims_completion) and what must be read from each event (ok, outcome_id, verdict)."""

    __slots__ = ("_args", "_claims", "_no_references", "_ok", "_outcome", "_reason", "_status", "_tool", "_type",
                 "_verdict", "needs_event", "spec")

    def __init__(self, spec: EventMatcher) -> None:
        self.spec = spec
        self._type = None if spec.type is UNSET else compile_glob(spec.type)
        self._tool = None if spec.tool is UNSET else compile_glob(spec.tool)
        self._claims = spec.claims_completion
        self._ok = spec.ok
        self._outcome = None if spec.outcome_id is UNSET else compile_glob(spec.outcome_id)
        self._verdict = spec.verdict
        self._args: Holds | None = None
        if spec.args is not UNSET:
            from agent_invariants.match.quick import quick
            from agent_invariants.match.tree import compile_tree, no_references

            self._args, self._no_references = quick(compile_tree(spec.args, "args")), no_references
        self._reason = None if spec.reason is UNSET else compile_glob(spec.reason)
        self._status = None if spec.status is UNSET else compile_glob(spec.status)
        self.needs_event = not (self._ok is UNSET and self._outcome is None and self._verdict is UNSET
                                and self._args is None and self._reason is None and self._status is None)

    def may_match(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType) -> bool:
        """False when no event with this routing key can match; True when one can."""
        if self._type is not None and not self._type(event_type):
            return False
        if self._tool is not None and (tool is UNSET or not self._tool(tool)):
            return False
        return self._claims is UNSET or claims is self._claims

    def route_tools(self, event_type: str) -> tuple[str, ...]:
        """The tool glob `may_match` reads the tool through, for events of this type."""
        if self.spec.tool is UNSET or (self._type is not None and not self._type(event_type)):
            return ()
        return (self.spec.tool,)

    def route_types(self) -> tuple[str, ...] | None:
        """The type glob outside which `may_match` is False (None: the matcher names no type)."""
        return None if self.spec.type is UNSET else (self.spec.type,)

    def may_match_type(self, event_type: str, claims: bool | UnsetType) -> bool:
        """`may_match` without the tool: for events whose tool the route cannot see (in the kinds
        of version 2, a `tool.result`'s tool is its call's)."""
        if self._type is not None and not self._type(event_type):
            return False
        return self._claims is UNSET or claims is self._claims

    def matches(self, event: Event, args: Raw | UnsetType | None = None) -> bool:
        """The event-level keys, for an event whose routing key `may_match`; `args` stand for the
        event's own when given (in the kinds of version 2, a paired `tool.result`'s args are its
        call's: spec/v2-extensions.md §10, point 3)."""
        if self._ok is not UNSET and event.ok is not self._ok:
            return False
        if self._verdict is not UNSET and event.verdict != self._verdict:
            return False
        if self._outcome is not None and (event.outcome_id is UNSET or not self._outcome(event.outcome_id)):
            return False
        if self._reason is not None and not _glob_holds(self._reason, text(event.reason)):
            return False
        if self._status is not None and not _glob_holds(self._status, text(event.status)):
            return False
        if self._args is not None:
            if args is None:
                args = event.args
            if args is UNSET:
                return False
            return self._args(decoded(args), self._no_references)
        return True


def _glob_holds(glob: Any, value: str | None) -> bool:
    return value is not None and bool(glob(value))




class MatchingRule(Rule):
    """Base of the kinds with one `match` (deny_event, require_event): they are shown only the
    events it matches, which `checked` counts, through `matched`."""

    def __init__(self, config: RuleConfig, match: EventMatcher) -> None:
        super().__init__(config)
        self.match = CompiledMatcher(match)

    def route_tools(self, event_type: str, claims: bool | UnsetType) -> tuple[str, ...]:
        return self.match.route_tools(event_type)

    def route_types(self) -> tuple[str, ...] | None:
        return self.match.route_types()

    def route(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType) -> Observer | None:
        return self._event if self.match.may_match(event_type, tool, claims) else None

    def _event(self, event: Event, index: int) -> None:
        if self.match.needs_event and not self.match.matches(event):
            return
        self.checked += 1
        self.matched(event, index)

    def matched(self, event: Event, index: int) -> None:
        """Called for each event the matcher matches, after `checked` counted it."""
        raise NotImplementedError
