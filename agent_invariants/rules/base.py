"""The rule protocol: the config base every kind's options extend, and the `Rule` base class.

A rule kind is one class with a `kind`, a `config_type` (a `RuleConfig` subclass tagged with the
kind; it decodes and validates the rule's JSON), a docstring that is its user manual, `route()`,
`route_tools()` and `finish()`. The engine asks `route(type, tool, claims_completion)` once per
distinct triple, or once per class of tools when `route_tools()` names the globs it reads the tool
through, and caches the answer: the bound method to call for such events (a tuple of them, or None to skip
them). A handler returns None, or True when the rule's interests changed (the cache is then
rebuilt); anything else is a bug the engine refuses. So a rule only ever sees events it cares
about, and never rescans what it has seen: it keeps small state.

A rule keeps at most `max_violations` violations (default `DEFAULT_MAX_VIOLATIONS`; 0 means no
limit), the first ones in its own order, and counts every one: some rules find quadratically many
on small input (stop_is_final on 2,000 stops finds 2 million). A rule asks `note_violation()`
before it builds a violation, so the ones past the cap are counted but never built. A kind that
finds violations out of trace order (`displaces`) says where each sits, and keeps the first ones
in trace order: a later-found but earlier violation takes the place of the latest kept one.

docs/architecture.md walks through the protocol and how to add a kind. The field types of rule
options (`Glob`, `Text`, `RuleId`) are in `rules.fields`.
"""
from __future__ import annotations

import heapq
import operator
import sys
from collections.abc import Callable
from typing import Any, ClassVar, Literal

import msgspec
from msgspec import UNSET, UnsetType

from agent_invariants._js import json_number
from agent_invariants.events import Event
from agent_invariants.match.paths import bounded_pointer
from agent_invariants.pairing import Calls
from agent_invariants.report import RuleResult, Severity, TraceSummary, Violation
from agent_invariants.rules.fields import RuleId, Text, normalise_strings, string_fields

__all__ = (
    "DEFAULT_MAX_VIOLATIONS",
    "Observer",
    "Route",
    "UNCHECKED",
    "Status",
    "Rule",
    "RuleConfig",
    "tool_name",
)

DEFAULT_MAX_VIOLATIONS = 1000
"""Violations a rule keeps (and reports show) unless told otherwise; the counts include all."""

UNCHECKED = "checked_nothing"
"""The reason of `--strict`'s violation of a rule that checked nothing (`Rule.fail_unchecked`)."""

Observer = Callable[[Event, int], Literal[True] | None]
"""A handler: called with an event and its index; True means "route me again"."""

Status = Literal["fail", "unresolved", "inconclusive"]
"""A violation's status (spec/v2-extensions.md §0): broken, not decidable from the trace, or
undecided on a trace cut short."""

Route = Observer | tuple[Observer, ...] | None
"""What `Rule.route` returns: the handler of an event, the handlers in calling order, or None."""


_KIND_NAMES: dict[type, str] = {}
"""The kind of each config class (read often: lint asks every rule's kind many times)."""

_STRINGS: dict[type, dict[str, tuple[str, bool]]] = {}
"""The Glob and Text fields of each config class (`string_fields`), which `__post_init__` trims."""

_NAMESPACES: dict[type, dict[str, Any]] = {}
"""The names of each config class's module, kept as the class is made: `string_fields` reads the
annotations there should the module have left `sys.modules` since. (pytest's in-process runs put
`sys.modules` back as it was: a kind first imported inside one keeps its classes, not its module.)"""


class RuleConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, tag_field="kind"):
    """Fields every rule has. `severity` absent means `error`; a warning never fails a check."""

    id: RuleId
    """Names the rule in every report; unique within the contract."""
    severity: Severity | UnsetType = UNSET
    """`error` (the default) fails the check; `warning` is reported but never fails it."""
    description: Text | UnsetType = UNSET
    """What the rule protects, for people reading the contract; not used by the check."""

    def __init_subclass__(cls, **options: Any) -> None:
        super().__init_subclass__(**options)
        module = sys.modules.get(cls.__module__)
        if module is not None:
            _NAMESPACES[cls] = vars(module)

    def __post_init__(self) -> None:
        kind = type(self)
        strings = _STRINGS.get(kind)
        if strings is None:   # worked out from the annotations once per kind, when a rule of it is first read
            strings = _STRINGS[kind] = string_fields(kind, _NAMESPACES.get(kind))
        normalise_strings(self, strings)

    @property
    def kind(self) -> str:
        kind = type(self)
        name = _KIND_NAMES.get(kind)
        if name is None:
            name = _KIND_NAMES[kind] = str(kind.__struct_config__.tag)   # every kind's tag is its name
        return name

    @property
    def effective_severity(self) -> Severity:
        return "error" if self.severity is UNSET else self.severity

    def to_dict(self) -> dict[str, Any]:
        """The rule as the normalised contract shows it: id, severity, description, kind, then the
        kind's own fields in declaration order; absent fields stay absent."""
        out: dict[str, Any] = {"id": self.id}
        if self.severity is not UNSET:
            out["severity"] = self.severity
        if self.description is not UNSET:
            out["description"] = self.description
        out["kind"] = self.kind
        for name, written in zip(self.__struct_fields__, self.__struct_encode_fields__, strict=True):
            if name in ("id", "severity", "description"):
                continue
            value = getattr(self, name)
            if value is not UNSET:
                out[written] = value.to_dict() if hasattr(value, "to_dict") else _js_value(value)
        return out


def _js_value(value: Any) -> Any:
    """Numbers as JavaScript prints them (`50`, not `50.0`)."""
    return json_number(value) if isinstance(value, float) else value


class Rule:
    """Base of every rule kind: holds the config, the `checked` count and the violations: the
    kept ones in `violations`, all of them in `violation_count`."""

    kind: ClassVar[str]
    config_type: ClassVar[type[RuleConfig]]
    tags: ClassVar[tuple[str, ...]] = ()
    reason: ClassVar[str] = "violated"
    """The reason of the kind's violations in their `code`, `<kind>.<reason>`, where the kind
    has one (spec/v2-extensions.md §10, point 1); others name theirs to `keep`."""
    pairs_calls: bool = False
    """True for kinds (or rules) that see a `tool.result` as its call's (version 2): the engine
    then gives them the check's one `pairing.Calls` through `read_results` before the first event."""
    liveness_reasons: ClassVar[frozenset[str]] = frozenset()
    """The reasons of the kind's violations that come from liveness parts (spec v2 §0, §10 point
    82): a trace cut short may yet satisfy them, so `--partial` reports them `inconclusive`. A kind
    whose parts depend on its options overrides `is_liveness`."""
    mixed_parts: ClassVar[bool] = False
    """True for kinds whose one rule may find violations of both liveness and safety parts (as
    tool_calls' `max` and `min`): they pass `liveness=True` to `note_violation` for each liveness
    one, so that `--partial` counts exactly those that `--max-violations` left out of the report."""
    routes_change: ClassVar[bool] = False
    """True for kinds whose handlers may return True (their interests change with what they saw,
    as stop_is_final's after the first stop): what `route` says of a fresh rule then does not hold
    for a rule that has seen events."""
    enforced: ClassVar[bool] = False
    """True for the safety kinds that `record --enforce` applies before a call is answered (spec
    v2 §10 point 74): a call is denied when `denies` says so."""
    displaces: ClassVar[bool] = False
    """True for kinds that find violations out of trace order (at the trace's end, or when a later
    event settles an earlier one): they pass `at` (the event index the violation sits at) to
    `note_violation`. Once `cap` are kept, one earlier than the latest kept takes its place, so that
    the kept ones are the first in trace order (spec v2 §10 point 5, D7); `result` lists them so."""
    judges_output_shape: ClassVar[bool] = False
    """True for output_schema: when such a rule fails, the violations of other rules that read the
    final output get its id as `caused_by`."""
    checked_nothing_is_normal: bool = False
    """True for kinds (or rules: a rule may set it) whose `checked` counts what they forbid, so
    that 0 is their passing state; otherwise a rule that checked nothing gets a
    `rule_checked_nothing` notice (see `notices`)."""

    def __init__(self, config: RuleConfig) -> None:
        self.config = config
        self.id = config.id
        self.severity: Severity = config.effective_severity
        self.checked = 0
        self.violations: list[Violation] = []
        self.violation_count = 0              # every violation found, kept or not
        self.liveness_cut = 0                 # (mixed_parts) liveness violations found but not kept
        self.cap = DEFAULT_MAX_VIOLATIONS     # the most violations kept; see limit_violations
        self.read_output: list[Violation] = []   # kept violations that read the final output (caused_by)
        # `displaces`: the kept violations, latest in trace order first (a heap of
        # (-without an event, -index, -number noted, liveness, violation)), and the ids of the
        # kept ones note_violation was told are liveness
        self._by_place: list[tuple[int, int, int, bool, Violation]] = []
        self.liveness_kept: set[int] = set()
        self._noted_liveness = False

    def limit_violations(self, max_violations: int) -> None:
        """Keep at most `max_violations` violations (0: keep all); call before the first event."""
        try:
            limit = operator.index(max_violations)   # (an int, or what stands for one: not 1.5 or "3")
        except TypeError:
            limit = -1
        if limit < 0:
            raise ValueError(f"max_violations must be 0 (no limit) or an integer above, got {max_violations!r}")
        self.cap = min(limit, sys.maxsize) or sys.maxsize   # (no list holds more)

    def route(self, event_type: str, tool: str | UnsetType, claims: bool | UnsetType) -> Route:
        """The method to call for events with this type, tool and claims_completion (or a tuple
        of methods, called in that order), or None to skip such events.

        Called once per distinct triple (the engine caches it). A handler returns None, or True
        to tell the engine the rule's interests changed (the cache is then rebuilt).
        """
        raise NotImplementedError

    def route_tools(self, event_type: str, claims: bool | UnsetType) -> tuple[str, ...] | None:
        """The tool globs through which `route(event_type, tool, claims)` looks at the tool.

        Its answer must then be the same for any two tools that are both absent, or both present
        and matched by the same of these globs (`()`: the tool plays no part, or only whether
        there is one). The engine asks `route` once per such class of tools instead of once per
        tool: a trace may name a new tool on every call. None, the default, says the answer
        depends on the tool in some other way, and `route` is asked for every new tool.
        """
        return None

    def route_types(self) -> tuple[str, ...] | None:
        """The type globs outside which `route` answers None, whatever the tool and claims (a
        rule that judges only some types): the engine then does not ask it about events of any
        other type. None, the default, says it may want events of any type. The answer must not
        change during a check (a kind whose interests change, as stop_is_final's, answers None)."""
        return None

    def read_results(self, calls: Calls) -> None:
        """For a rule that `pairs_calls`: ask `calls` for the results it reads (`Calls.read_results`)."""
        raise NotImplementedError

    def finish(self, summary: TraceSummary) -> RuleResult:
        """Called once after the last event; returns the rule's result."""
        return self.result()

    def result(self) -> RuleResult:
        if self.displaces:
            self.violations = [entry[4] for entry in sorted(self._by_place, reverse=True)]   # earliest first
            kept = set(map(id, self.violations))
            self.read_output = [violation for violation in self.read_output if id(violation) in kept]
        total = self.violation_count
        cut = total > len(self.violations)
        return RuleResult(rule_id=self.id, rule_kind=self.kind, passed=total == 0, severity=self.severity,
                          checked=self.checked, violations=self.violations,
                          truncated=True if cut else UNSET, violations_total=total if cut else UNSET)

    def note_violation(self, *, liveness: bool = False, at: int | UnsetType | None = None) -> bool:
        """Count the rule's next violation; True when it is to be kept (built with `keep`). A kind
        with `mixed_parts` says whether it comes from a liveness part, for the count of those
        that are not kept (`inconclusive_total`); a kind that `displaces` says which event it
        sits at (`at`: None or UNSET for none)."""
        self.violation_count += 1
        self._noted_liveness = liveness
        if self.violation_count <= self.cap:
            return True
        if self.displaces and self._by_place and _place(at) < (-self._by_place[0][0], -self._by_place[0][1]):
            return True   # earlier than the latest kept, which `keep` lets go
        if liveness:
            self.liveness_cut += 1
        return False

    @property
    def keeps_no_more(self) -> bool:
        """Whether `note_violation` would keep no further violation (the cap is reached, and the
        kind does not let an earlier one displace a kept one): what a rule finds then is only
        counted, so it need not build it."""
        return self.violation_count >= self.cap and not self.displaces

    def note_violations(self, count: int) -> int:
        """Count the rule's next `count` violations at once; how many of them are to be kept."""
        room = max(0, self.cap - self.violation_count)
        self.violation_count += count
        return min(count, room)

    def is_liveness(self, violation: Violation) -> bool:
        """Whether a kept violation comes from a liveness part of the rule (see `liveness_reasons`)."""
        code = violation.code
        return code is not UNSET and code.partition(".")[2] in self.liveness_reasons

    def may_deny(self, call: Event) -> bool:
        """For an `enforced` kind, asked of a rule that saw no event: whether it could put a
        violation at `call`, so that `record --enforce` must run it over the trace to decide.
        By default, when it routes such a call to a handler; always for a rule that pairs results
        with calls (its routes do not say which calls it judges), whose routes change with what it
        saw, or whose kind decides denials its own way. A kind that knows better says so: the
        enforcement of a run of n calls it is asked about costs n²/2 event visits."""
        if self.routes_change or self.pairs_calls or type(self).denies is not Rule.denies:
            return True
        return self.route("tool.call", call.tool, call.claims_completion) is not None

    def denies(self, result: RuleResult, call: Event, index: int) -> bool:
        """For an `enforced` kind, run over a trace that ends with `call` (at `index`): whether
        `record --enforce` denies the call. By default, when a violation of a safety part sits at
        the call (run with `partial`, liveness violations are `inconclusive`); a kind whose bound
        is broken once, at the first call over it, says so for every later call too."""
        return any(violation.event_index == index and violation.status != "inconclusive"
                   for violation in result.violations)

    def denial(self, result: RuleResult, call: Event, index: int) -> str:
        """Why `record --enforce` denies `call` (asked once `denies` says it does): the message of
        the violation at the call, else of the rule's first (a bound broken earlier)."""
        return next((violation.message for violation in result.violations if violation.event_index == index),
                    result.violations[0].message if result.violations else "the call is beyond the rule's bound")

    def inconclusive_total(self, kept: int) -> int:
        """How many of all the rule's violations are liveness ones, given that `kept` of the kept
        ones are: with `mixed_parts`, those and the ones counted as liveness but not kept; for
        other kinds (a rule's violations all come from one sort of part), all of them when every
        kept one is, else none past the kept ones."""
        if self.mixed_parts:
            return kept + self.liveness_cut
        if kept and kept == len(self.violations):
            return self.violation_count
        return kept

    def fail_unchecked(self, passed: RuleResult) -> RuleResult:
        """`--strict`, for a rule that checked nothing where that is not its passing state (and
        so `passed`): the rule fails with one violation of the whole trace,
        `<kind>.checked_nothing` (inconclusive under `--partial`, as the rest of the run may
        bring what the rule checks). It stays `vacuous`, if it was: it checked nothing."""
        if self.note_violation():
            self.keep("The rule checked nothing in this trace, so it may guard nothing (--strict).",
                      {"checked": 0, "strict": True}, reason=UNCHECKED)
        failed = self.result()
        failed.vacuous = passed.vacuous
        return failed

    def keep(self, message: str, evidence: dict[str, Any] | UnsetType = UNSET, seq: int | float | UnsetType = UNSET,
             index: int | UnsetType = UNSET, *, reason: str | None = None, status: Status = "fail",
             pointer: str | UnsetType = UNSET, related_seqs: list[int | float] | UnsetType = UNSET,
             reads_output: bool = False) -> None:
        """Keep a violation the `note_violation(s)` just counted; `seq` and `index` name the
        event, when there is one; `reason` names the violation in its code (default: the
        kind's `reason`); `status`, `pointer` and `related_seqs` are for version-2 kinds, and
        `reads_output` says the violation read the final output (an output_schema rule that
        fails then becomes its `caused_by`)."""
        violation = Violation(
            rule_id=self.id, rule_kind=self.kind, severity=self.severity, message=message,
            event_seq=seq, event_index=index, evidence=evidence,
            code=f"{self.kind}.{self.reason if reason is None else reason}", status=status,
            pointer=pointer if pointer is UNSET else bounded_pointer(pointer), related_seqs=related_seqs)
        if reads_output:
            self.read_output.append(violation)
        if self.displaces:
            self._displace(violation)
        else:
            self.violations.append(violation)

    def _displace(self, violation: Violation) -> None:
        """Hold a kept violation of a kind that `displaces` by its place in the trace, ties in the
        order noted (the order of the kind's codes: each was noted just before it is kept), and let
        the latest go past the cap. `result` lists them."""
        without, index = _place(violation.event_index)
        heapq.heappush(self._by_place, (-without, -index, -self.violation_count, self._noted_liveness, violation))
        if self._noted_liveness:
            self.liveness_kept.add(id(violation))
        if len(self._by_place) > self.cap:
            *_, liveness, gone = heapq.heappop(self._by_place)
            if liveness:
                self.liveness_cut += 1
                self.liveness_kept.discard(id(gone))


def _place(index: int | UnsetType | None) -> tuple[int, int]:
    """Where a violation sits, for ordering: (0, its event's index), or (1, 0) after every event."""
    return (1, 0) if index is None or index is UNSET else (0, index)


def tool_name(tool: str | UnsetType) -> str:
    """How messages print a tool: its name, or `unknown` when the event has none."""
    return "unknown" if tool is UNSET else tool
