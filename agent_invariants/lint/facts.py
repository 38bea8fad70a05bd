"""What a contract's rules say about calls, gathered once for every lint code: which tools must be
called and how often (R(t)), which rules bound how many calls, and which order rules link two tools.

- A **requirement** is a number of calls some rule demands of a glob: `tool_calls.min` (either
  `count`), the `min` (default 1) of a `require_event` whose matcher has `type: "tool.call"` (its
  `tool`; without one, `*` and calls without a tool name, which no glob matches, so only a bound
  that counts those too, `event_budget` or a `require_event.max` naming no tool, caps it, unless
  an error-severity `allow_tools`, which fails every such call, leaves only named ones), the
  number of times one entry appears in a `tool_order`, or `call_index + 1` of
  a `tool_args`. For a literal tool t, R(t) is the largest requirement on exactly t; S(t) the
  largest `count: successful` one.
- A **bound** caps calls: `tool_calls.max`, the `max` of a `require_event` whose matcher has only
  `type` (a glob matching `tool.call`) and/or `tool`, `event_budget.max_tool_calls` and
  `max_events` (every tool), and `retry_limit.max_attempts` with `group_by: tool` (each tool on
  its own). A `count: successful` cap bounds S(t) only.
- An **edge** A→B is a `precedence` or `require_order` whose `after` is exactly `{type:
  "tool.call", tool: B}` and whose `before` has `type: "tool.call"` and `tool: A` (more keys on
  `before` only make it stricter), both literal and different.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from msgspec import UNSET

from agent_invariants.lint.globs import GlobIndex, NameIndex, is_literal, matches
from agent_invariants.match.canonical import canonical
from agent_invariants.rules.base import RuleConfig

__all__ = ("Bound", "Edge", "Facts", "Requirement")

CALL = "tool.call"


@dataclass(frozen=True)
class Requirement:
    """`count` calls a rule demands of the tools `glob` matches."""

    rule: int
    glob: str
    count: int
    pointer: str
    successful: bool = False   # a tool_calls with count: successful
    unnamed: bool = False      # calls without a tool name meet it too (a require_event naming no tool)


@dataclass(frozen=True)
class Bound:
    """A cap of `limit` calls on the tools `glob` matches (all of them together, or each on its
    own with `per_tool`)."""

    rule: int
    glob: str
    limit: int
    pointer: str
    per_tool: bool = False     # retry_limit with group_by: tool
    successful: bool = False   # bounds successful calls only
    events: bool = False       # event_budget.max_events: bounds every event, required ones included
    unnamed: bool = False      # counts calls without a tool name too, which no glob matches

    def covers(self, tool: str) -> bool:
        return matches(self.glob, tool)


@dataclass(frozen=True)
class Edge:
    """A→B: every call of `after` needs an earlier call of `before`."""

    rule: int
    before: str
    after: str


@dataclass
class Facts:
    """Requirements, bounds and edges of one contract's rules (by index)."""

    rules: Sequence[Any]   # RuleConfig of every kind: each code reads the fields of the kinds it knows
    requirements: list[Requirement] = field(default_factory=list)
    bounds: list[Bound] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    event_minimums: list[Requirement] = field(default_factory=list)   # every require_event's min
    _matching: dict[str, list[str]] = field(default_factory=dict, init=False, repr=False)   # glob -> tools

    @classmethod
    def of(cls, rules: Sequence[RuleConfig]) -> Facts:
        facts = cls(rules)
        for index, rule in enumerate(rules):
            gather = _GATHER.get(rule.kind)
            if gather is not None:
                gather(facts, index, rule)
        if any(rule.kind == "allow_tools" and facts.severity(index) == "error" for index, rule in enumerate(rules)):
            # an allow_tools fails every call without a tool name: in a trace that passes, only
            # named calls can meet a requirement that names no tool
            facts.requirements = [replace(need, unnamed=False) for need in facts.requirements]
        return facts

    def severity(self, index: int) -> str:
        severity: str = self.rules[index].effective_severity
        return severity

    def required(self, tool: str, *, errors_only: bool = False) -> Requirement | None:
        """The requirement that gives R(tool): the largest on exactly that literal tool (the first
        of equals), or None when nothing requires it; with `errors_only`, among the requirements of
        error-severity rules (an error finding may rest on those alone)."""
        best = None
        for requirement in self._by_tool.get(tool, ()):
            if errors_only and self.severity(requirement.rule) != "error":
                continue
            if best is None or requirement.count > best.count:
                best = requirement
        return best

    def successful(self, tool: str, *, errors_only: bool = False) -> Requirement | None:
        """The requirement that gives S(tool): the largest `count: successful` one."""
        best = None
        for requirement in self._by_tool.get(tool, ()):
            if errors_only and self.severity(requirement.rule) != "error":
                continue
            if requirement.successful and (best is None or requirement.count > best.count):
                best = requirement
        return best

    @cached_property
    def required_tools(self) -> dict[str, Requirement]:
        """Each literal tool with R(t) >= 1, with the requirement giving it, in contract order."""
        out: dict[str, Requirement] = {}
        for tool in self._by_tool:
            found = self.required(tool)
            if found is not None and found.count >= 1:
                out[tool] = found
        return out

    @cached_property
    def _by_tool(self) -> dict[str, list[Requirement]]:
        by_tool: dict[str, list[Requirement]] = {}
        for requirement in self.requirements:
            if is_literal(requirement.glob):
                by_tool.setdefault(requirement.glob, []).append(requirement)
        return by_tool

    def required_matching(self, glob: str) -> list[str]:
        """The required literal tools `glob` matches, in contract order (worked out once a glob:
        many bounds may share one)."""
        found = self._matching.get(glob)
        if found is None:
            order = self._required_order
            found = self._matching[glob] = sorted(self._required_names.matching(glob), key=order.__getitem__)
        return found

    @cached_property
    def _required_names(self) -> NameIndex:
        return NameIndex(self.required_tools)

    @cached_property
    def _required_order(self) -> dict[str, int]:
        return {tool: position for position, tool in enumerate(self.required_tools)}

    @cached_property
    def glob_requirements(self) -> list[Requirement]:
        """The requirements on globs that are not literal (rare: they are read one by one)."""
        return [need for need in self.requirements if not is_literal(need.glob)]

    @cached_property
    def denies(self) -> GlobIndex[int]:
        """Every deny_tool, by its glob (payload: the rule's index)."""
        return GlobIndex((rule.tool, index) for index, rule in enumerate(self.rules) if rule.kind == "deny_tool")

    @cached_property
    def allows(self) -> list[tuple[int, GlobIndex[int]]]:
        """Each error-severity allow_tools, with its patterns indexed (payload: the pattern's position)."""
        return [(index, GlobIndex((pattern, position) for position, pattern in enumerate(rule.tools)))
                for index, rule in enumerate(self.rules)
                if rule.kind == "allow_tools" and rule.effective_severity == "error"]

    @cached_property
    def deny_events(self) -> tuple[GlobIndex[int], GlobIndex[int], list[int]]:
        """The deny_event rules: those whose matcher has a tool, by that glob; those without a
        tool but with a type, by the type's glob; the others."""
        with_tool: list[tuple[str, int]] = []
        with_type: list[tuple[str, int]] = []
        others: list[int] = []
        for index, rule in enumerate(self.rules):
            if rule.kind != "deny_event":
                continue
            if rule.match.tool is not UNSET:
                with_tool.append((rule.match.tool, index))
            elif rule.match.type is not UNSET:
                with_type.append((rule.match.type, index))
            else:
                others.append(index)
        return GlobIndex(with_tool), GlobIndex(with_type), others

    @cached_property
    def requiring_events(self) -> dict[str, int]:
        """A require_event with a min of 1 or more per matcher (by its `written_key`): the first of
        error severity, else the first."""
        found: dict[str, int] = {}
        for index, rule in enumerate(self.rules):
            if rule.kind == "require_event" and (rule.min is UNSET or rule.min >= 1):
                key = written_key(rule.match.to_dict())
                if key not in found or (self.severity(found[key]) != "error" and self.severity(index) == "error"):
                    found[key] = index
        return found

    def by_glob(self, kind: str) -> dict[str, list[int]]:
        """The rules of a kind by their `tool` as written (`*` where the kind defaults it)."""
        return self._by_kind_and_glob.get(kind, {})

    @cached_property
    def _by_kind_and_glob(self) -> dict[str, dict[str, list[int]]]:
        found: dict[str, dict[str, list[int]]] = {}
        for index, rule in enumerate(self.rules):
            if rule.kind in ("tool_calls", "retry_limit"):
                found.setdefault(rule.kind, {}).setdefault("*" if rule.tool is UNSET else rule.tool, []).append(index)
        return found

    def allowed(self, patterns: GlobIndex[int], glob: str) -> bool:
        """Whether some pattern of an allow list lets a call of `glob` through."""
        return next(iter(patterns.meeting(glob)), None) is not None


def _tool_calls(facts: Facts, index: int, rule: Any) -> None:
    successful = rule.count == "successful"
    if rule.min is not UNSET:
        facts.requirements.append(Requirement(index, rule.tool, rule.min, f"/rules/{index}/tool", successful))
    if rule.max is not UNSET:
        facts.bounds.append(Bound(index, rule.tool, rule.max, f"/rules/{index}/max", successful=successful))


def _require_event(facts: Facts, index: int, rule: Any) -> None:
    matcher = rule.match
    least = 1 if rule.min is UNSET else rule.min
    facts.event_minimums.append(Requirement(index, "*", least, f"/rules/{index}/min"))
    unnamed = matcher.tool is UNSET   # every call then, named or not
    tool = "*" if unnamed else matcher.tool
    if matcher.type == CALL:
        pointer = f"/rules/{index}/match/{'type' if unnamed else 'tool'}"
        facts.requirements.append(Requirement(index, tool, least, pointer, unnamed=unnamed))
    keys = set(matcher.to_dict())
    if rule.max is not UNSET and keys <= {"type", "tool"} and keys and (
            matcher.type is UNSET or matches(matcher.type, CALL)):
        facts.bounds.append(Bound(index, tool, rule.max, f"/rules/{index}/max", unnamed=unnamed))


def _tool_order(facts: Facts, index: int, rule: Any) -> None:
    seen: dict[str, int] = {}
    for position, entry in enumerate(rule.tools):
        seen.setdefault(entry, position)
    for entry, position in seen.items():
        pointer = f"/rules/{index}/tools/{position}"
        facts.requirements.append(Requirement(index, entry, rule.tools.count(entry), pointer))


def _tool_args(facts: Facts, index: int, rule: Any) -> None:
    if rule.call_index is not UNSET:
        facts.requirements.append(Requirement(index, rule.tool, rule.call_index + 1, f"/rules/{index}/call_index"))


def _event_budget(facts: Facts, index: int, rule: Any) -> None:
    if rule.max_tool_calls is not UNSET:
        facts.bounds.append(Bound(index, "*", rule.max_tool_calls, f"/rules/{index}/max_tool_calls", unnamed=True))
    if rule.max_events is not UNSET:
        facts.bounds.append(Bound(index, "*", rule.max_events, f"/rules/{index}/max_events", events=True,
                                  unnamed=True))


def _retry_limit(facts: Facts, index: int, rule: Any) -> None:
    if rule.group_by == "tool":
        tool = "*" if rule.tool is UNSET else rule.tool
        facts.bounds.append(Bound(index, tool, rule.max_attempts, f"/rules/{index}/max_attempts", per_tool=True))


def _order(facts: Facts, index: int, rule: Any) -> None:
    before, after = rule.before, rule.after
    if set(after.to_dict()) != {"type", "tool"} or after.type != CALL or before.type != CALL:
        return
    if before.tool is UNSET or not is_literal(before.tool) or not is_literal(after.tool) or before.tool == after.tool:
        return
    facts.edges.append(Edge(index, before.tool, after.tool))


_GATHER = {
    "tool_calls": _tool_calls,
    "require_event": _require_event,
    "tool_order": _tool_order,
    "tool_args": _tool_args,
    "event_budget": _event_budget,
    "retry_limit": _retry_limit,
    "precedence": _order,
    "require_order": _order,
}


def written_key(matcher: dict[str, Any]) -> str:
    """A matcher as written, as a key under which JSON-equal matchers meet (RFC 8785: `1` and
    `1.0` are one number, `true` is no number)."""
    try:
        return canonical(matcher)
    except ValueError:   # a number beyond any double: as Python writes it
        return repr(sorted(matcher.items()))
