"""The lint codes: each a function from a contract's `Facts` to its findings.

A finding's level is `error` only when the condition proves that no trace can pass and every rule
it rests on (the rule that makes a tool required included) has severity error; the same condition
resting on a warning-severity rule is a `warning`. Findings are sorted by the lowest index of the
rules they name, then by code (the order of `CODES`), then by pointer.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from msgspec import UNSET

from agent_invariants.lint.facts import CALL, Facts, Requirement
from agent_invariants.lint.globs import ANY, intersects, is_literal, matches, normalised, subsumes
from agent_invariants.lint.report import CODES, Finding
from agent_invariants.match.canonical import canonical
from agent_invariants.rules.stop_is_final import DEFAULT_ALLOWED_AFTER

__all__ = ("CHECKS", "Found", "findings")


class Found(NamedTuple):
    """A finding before it is sorted: the rules it names and the rules it rests on, by index."""

    code: str
    named: tuple[int, ...]
    rests_on: tuple[int, ...]
    pointer: str
    message: str
    provable: bool = True   # False: a warning whatever the severities


def findings(facts: Facts) -> list[Finding]:
    """Every finding of every code, in report order."""
    found = [item for check in CHECKS for item in check(facts)]
    found.sort(key=lambda item: (min(item.named), CODES.index(item.code), item.pointer))
    out = []
    for item in found:
        error = item.provable and all(facts.severity(index) == "error" for index in {*item.named, *item.rests_on})
        out.append(Finding(code=item.code, level="error" if error else "warning",
                           rule_ids=[facts.rules[index].id for index in sorted(set(item.named))],
                           pointer=item.pointer, message=item.message))
    return out


def _calls(count: int) -> str:
    return f"{count} call" if count == 1 else f"{count} calls"


def _need(facts: Facts, tool: str, requirement: Requirement) -> str:
    return f"{tool} must be called ({facts.rules[requirement.rule].id} needs {_calls(requirement.count)})"


# -- required_but_forbidden --------------------------------------------------------------------

def required_but_forbidden(facts: Facts) -> Iterator[Found]:
    """A required tool that a deny_tool denies, an error-severity allow_tools leaves out, or a
    bound of 0 caps."""
    denies = [(index, rule) for index, rule in enumerate(facts.rules) if rule.kind == "deny_tool"]
    allows = [(index, rule) for index, rule in enumerate(facts.rules)
              if rule.kind == "allow_tools" and rule.effective_severity == "error"]
    for tool, need in facts.required_tools.items():
        for index, rule in denies:
            if matches(rule.tool, tool):
                yield _forbidden(facts, tool, need, index, "denies it")
        for index, rule in allows:
            if not any(matches(pattern, tool) for pattern in rule.tools):
                yield _forbidden(facts, tool, need, index, "does not allow it")
        for bound in facts.bounds:
            if bound.limit == 0 and bound.covers(tool):
                counted = facts.successful(tool) if bound.successful else need
                if counted is not None and counted.count >= 1:
                    yield _forbidden(facts, tool, counted, bound.rule, "allows no call of it")


def _forbidden(facts: Facts, tool: str, need: Requirement, forbidding: int, how: str) -> Found:
    rule = facts.rules[forbidding]
    return Found("required_but_forbidden", (forbidding, need.rule), (), need.pointer,
                 f"{_need(facts, tool, need)}, but {rule.id} ({rule.kind}) {how}.")


# -- count_contradiction -----------------------------------------------------------------------

def count_contradiction(facts: Facts) -> Iterator[Found]:
    """More calls required of the tools a bound covers than the bound allows."""
    for bound in facts.bounds:
        if bound.limit < 1:
            continue   # a cap of 0 is required_but_forbidden
        name = facts.rules[bound.rule].id
        if bound.per_tool:
            over = [(tool, need) for tool, need in facts.required_tools.items()
                    if bound.covers(tool) and need.count > bound.limit]
            if over:
                yield Found("count_contradiction", (bound.rule, *(need.rule for _, need in over)), (), bound.pointer,
                            f"{name} allows at most {_calls(bound.limit)} of each tool, but "
                            + "; ".join(_need(facts, tool, need) for tool, need in over) + ".")
            continue
        contributions: list[tuple[str, Requirement]] = []
        for tool in facts.required_tools:
            need = facts.successful(tool) if bound.successful else facts.required(tool)
            if need is not None and need.count >= 1 and bound.covers(tool):
                contributions.append((tool, need))
        total = sum(need.count for _, need in contributions)
        what = "successful calls" if bound.successful else "calls" if not bound.events else "events"
        if total > bound.limit:
            yield Found("count_contradiction", (bound.rule, *(need.rule for _, need in contributions)), (),
                        bound.pointer, f"{name} allows at most {bound.limit} {what}, but the rules require "
                        f"{total}: " + "; ".join(_need(facts, tool, need) for tool, need in contributions) + ".")
            continue
        single = next((need for need in facts.requirements if not is_literal(need.glob) and need.count > bound.limit
                       and (need.successful or not bound.successful) and subsumes(bound.glob, need.glob)), None)
        if single is None and bound.events:
            single = next((need for need in facts.event_minimums if need.count > bound.limit), None)
        if single is not None:
            rule = facts.rules[single.rule]
            yield Found("count_contradiction", (bound.rule, single.rule), (), bound.pointer,
                        f"{name} allows at most {bound.limit} {what}, but {rule.id} ({rule.kind}) requires "
                        f"{single.count}.")


# -- order_contradiction -----------------------------------------------------------------------

def order_contradiction(facts: Facts) -> Iterator[Found]:
    """Two order rules that need A before B and B before A; or an exact tool_order that calls B
    before any A, with a rule that needs A before B."""
    for position, first in enumerate(facts.edges):
        for second in facts.edges[position + 1:]:
            if first.before != second.after or first.after != second.before:
                continue
            needs = [need for tool in (first.before, first.after) if (need := facts.required_tools.get(tool))]
            later = max(first.rule, second.rule)
            message = (f"{facts.rules[first.rule].id} needs {first.before} before {first.after} and "
                       f"{facts.rules[second.rule].id} the reverse, so ")
            message += ("the first call of either fails one of them." if needs else
                        "neither tool may ever be called.")
            yield Found("order_contradiction", (first.rule, second.rule), tuple(need.rule for need in needs),
                        f"/rules/{later}/before", message, provable=bool(needs))
    for index, rule in enumerate(facts.rules):
        if rule.kind != "tool_order" or rule.mode != "exact":
            continue
        for edge in facts.edges:
            if edge.after not in rule.tools:
                continue
            first_b = rule.tools.index(edge.after)
            if any(intersects(entry, edge.before) for entry in rule.tools[:first_b]):
                continue
            pointer = f"/rules/{index}/tools/{first_b}" if index > edge.rule else f"/rules/{edge.rule}/before"
            yield Found("order_contradiction", (index, edge.rule), (), pointer,
                        f"{rule.id} calls {edge.after} before any {edge.before}, which "
                        f"{facts.rules[edge.rule].id} needs first.")


# -- self_precedence ---------------------------------------------------------------------------

def self_precedence(facts: Facts) -> Iterator[Found]:
    """An order rule whose before and after are the same matcher: its events can never occur."""
    for index, rule in enumerate(facts.rules):
        if rule.kind not in ("precedence", "require_order"):
            continue
        after = rule.after.to_dict()
        if rule.before.to_dict() != after:
            continue
        rests_on: tuple[int, ...] = ()
        if set(after) == {"type", "tool"} and rule.after.type == CALL and is_literal(rule.after.tool):
            need = facts.required_tools.get(rule.after.tool)
            rests_on = () if need is None else (need.rule,)
        if not rests_on:
            rests_on = tuple(other for other, event in enumerate(facts.rules) if event.kind == "require_event"
                             and event.match.to_dict() == after and (event.min is UNSET or event.min >= 1))[:1]
        yield Found("self_precedence", (index,), rests_on, f"/rules/{index}/after",
                    f"{rule.id} needs an earlier event of the same kind before each one, so such events can "
                    "never occur (write a deny_event to forbid them).", provable=bool(rests_on))


# -- vacuous_distinct --------------------------------------------------------------------------

def vacuous_distinct(facts: Facts) -> Iterator[Found]:
    """`distinct` on a tool that may be called at most once: there is nothing to compare."""
    for index, rule in enumerate(facts.rules):
        if rule.kind != "tool_args" or rule.distinct is UNSET:
            continue
        glob = rule.tool
        if is_literal(glob):
            bounds = [bound for bound in facts.bounds if not bound.successful and bound.covers(glob)]
        else:
            bounds = [bound for bound in facts.bounds if not (bound.successful or bound.events or bound.per_tool)
                      and subsumes(bound.glob, glob)]
        if not bounds:
            continue
        tightest = min(bounds, key=lambda bound: (bound.limit, bound.rule))
        if tightest.limit >= 2:
            continue
        pointer = f"/rules/{index}/distinct" if index > tightest.rule else tightest.pointer
        yield Found("vacuous_distinct", (index, tightest.rule), (), pointer,
                    f"{rule.id} compares the calls of {glob}, but {facts.rules[tightest.rule].id} allows at most "
                    f"{_calls(tightest.limit)}: distinct has nothing to compare.", provable=False)


# -- duplicate_rule ----------------------------------------------------------------------------

_FILLED: dict[str, dict[str, Any]] = {
    "retry_limit": {"tool": "*", "group_by": "call_signature"},
    "tool_result_required": {"tool": "*"},
    "stop_is_final": {"stop_type": "control.stop", "allowed_after": list(DEFAULT_ALLOWED_AFTER)},
    "completion_requires_outcome": {"completion_types": ["run.completed"],
                                    "evidence_classes": ["externally_observed", "configured_verifier"]},
    "require_event": {"min": 1},
}
"""Defaults a kind applies to a field left out, filled in before rules are compared."""


def duplicate_rule(facts: Facts) -> Iterator[Found]:
    """A rule that says exactly what an earlier one says (ids, descriptions and severities aside)."""
    first: dict[str, int] = {}
    for index, rule in enumerate(facts.rules):
        fields = {name: value for name, value in rule.to_dict().items()
                  if name not in ("id", "description", "severity")}
        for name, value in _FILLED.get(rule.kind, {}).items():
            fields.setdefault(name, value)
        try:
            key = canonical(fields)
        except ValueError:   # a number beyond any double: compared as Python writes it
            key = repr(fields)
        earlier = first.setdefault(key, index)
        if earlier != index:
            yield Found("duplicate_rule", (earlier, index), (), f"/rules/{index}",
                        f"{rule.id} says what {facts.rules[earlier].id} says.", provable=False)


# -- v1_trap -----------------------------------------------------------------------------------

def v1_trap(facts: Facts) -> Iterator[Found]:
    """Version-1 rules that do not do what they seem to."""
    for index, rule in enumerate(facts.rules):
        if rule.kind == "allow_tools":
            for position, pattern in enumerate(rule.tools):
                if normalised(pattern) == (ANY,):
                    yield Found("v1_trap", (index,), (), f"/rules/{index}/tools/{position}",
                                f"{rule.id} allows every tool ({pattern!r}): it only fails calls without a tool.",
                                provable=False)
        elif rule.kind == "require_approval" and rule.scope is not UNSET:
            yield Found("v1_trap", (index,), (), f"/rules/{index}/scope",
                        f"{rule.id} has a scope: a grant must then carry both the call's approval_id and a "
                        "matching approval_scope (approval_bound says what is meant more plainly).", provable=False)
        elif rule.kind == "stop_is_final":
            stop = "control.stop" if rule.stop_type is UNSET else rule.stop_type
            allowed = list(DEFAULT_ALLOWED_AFTER) if rule.allowed_after is UNSET else rule.allowed_after
            if not any(subsumes(pattern, stop) for pattern in allowed):
                pointer = f"/rules/{index}/allowed_after" if rule.allowed_after is not UNSET else f"/rules/{index}"
                yield Found("v1_trap", (index,), (), pointer,
                            f"{rule.id}: allowed_after does not take in {stop} itself, so a second stop fails and "
                            "each later event is reported once per stop.", provable=False)


CHECKS: tuple[Callable[[Facts], Iterator[Found]], ...] = (
    required_but_forbidden, count_contradiction, order_contradiction, self_precedence, vacuous_distinct,
    duplicate_rule, v1_trap)
