"""The lint codes: each a function from a contract's `Facts` to its findings.

A finding's level is `error` only when the condition proves that no trace can pass and every rule
it rests on (the rule that makes a tool required included) has severity error; the same condition
resting on a warning-severity rule is a `warning`. Findings are sorted by the lowest index of the
rules they name, then by code (the order of `CODES`), then by pointer.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import msgspec
from msgspec import UNSET

from agent_invariants.lint.facts import CALL, Bound, Edge, Facts, Requirement, written_key
from agent_invariants.lint.globs import ANY, GlobIndex, intersects, is_literal, normalised, subsumes
from agent_invariants.lint.report import CODES, Finding
from agent_invariants.match.canonical import canonical
from agent_invariants.match.equality import json_equal
from agent_invariants.match.paths import parse_path
from agent_invariants.match.paths import pointer as json_pointer
from agent_invariants.rules.stop_is_final import DEFAULT_ALLOWED_AFTER

__all__ = ("CHECKS", "MAX_FINDINGS", "Found", "findings")


class Found(NamedTuple):
    """A finding before it is sorted: the rules it names and the rules it rests on, by index."""

    code: str
    named: tuple[int, ...]
    rests_on: tuple[int, ...]
    pointer: str
    message: str
    provable: bool = True   # False: a warning whatever the severities
    decisive: tuple[int, ...] | None = None   # the rules that prove it alone, when not all it names


MAX_FINDINGS = 10_000
"""The most findings lint reports. Pairs of rules can be findings, so a contract of thousands of
rules that shadow each other has millions: lint stops at this many (codes in table order, each
as it finds them), in bounded memory and time, and says that it stopped."""

MAX_FINDINGS_SIZE = 4_000_000
"""The most characters of messages and rule ids lint's findings hold in all (it stops there as at
`MAX_FINDINGS`): one finding may name thousands of rules (a bound on `*a?*` beside 5,000 required
tools names each), and 10,000 of them took 5.5 GB and 73 s to build."""


def findings(facts: Facts) -> tuple[list[Finding], bool]:
    """Every finding of every code, in report order, and whether lint stopped at MAX_FINDINGS (or
    MAX_FINDINGS_SIZE)."""
    found: list[Found] = []
    stopped = False
    size = 0
    for check in CHECKS:
        for item in check(facts, found):   # (a check reads the findings of the codes before it only)
            size += len(item.message) + 16 * len(item.named)
            if len(found) == MAX_FINDINGS or (found and size > MAX_FINDINGS_SIZE):
                stopped = True
                break
            found.append(item)
        if stopped:
            break
    found.sort(key=lambda item: (min(item.named), CODES.index(item.code), item.pointer))
    out = []
    for item in found:
        deciding = {*item.named, *item.rests_on} if item.decisive is None else set(item.decisive)
        error = item.provable and all(facts.severity(index) == "error" for index in deciding)
        out.append(Finding(code=item.code, level="error" if error else "warning",
                           rule_ids=[facts.rules[index].id for index in sorted(set(item.named))],
                           pointer=item.pointer, message=item.message))
    return out, stopped


def _calls(count: int, what: str = "call") -> str:
    """`1 call`, `2 calls`, `1 successful call`."""
    return f"{count} {what}" if count == 1 else f"{count} {what}s"


def _need(facts: Facts, tool: str, requirement: Requirement, what: str = "call") -> str:
    return f"{tool} must be called ({facts.rules[requirement.rule].id} needs {_calls(requirement.count, what)})"


# -- required_but_forbidden --------------------------------------------------------------------

def required_but_forbidden(facts: Facts, earlier: list[Found]) -> Iterator[Found]:
    """A required tool that a deny_tool denies, an error-severity allow_tools leaves out, or a
    bound of 0 caps."""
    zero = [bound for bound in facts.bounds if bound.limit == 0]
    for tool, need in facts.required_tools.items():
        strict = facts.required(tool, errors_only=True)
        for index in sorted(facts.denies.covering(tool)):
            yield _forbidden(facts, tool, need, index, "denies it", strict)
        for index, patterns in facts.allows:
            if not facts.allowed(patterns, tool):
                yield _forbidden(facts, tool, need, index, "does not allow it", strict)
        capped: set[int] = set()   # one finding per (rule, tool), however many of its bounds are 0
        for bound in zero:
            if bound.covers(tool) and bound.rule not in capped:
                counted = facts.successful(tool) if bound.successful else need
                if counted is not None and counted.count >= 1:
                    by_errors = facts.successful(tool, errors_only=True) if bound.successful else strict
                    capped.add(bound.rule)
                    yield _forbidden(facts, tool, counted, bound.rule, "allows no call of it", by_errors)


def _forbidden(facts: Facts, tool: str, need: Requirement, forbidding: int, how: str,
               strict: Requirement | None) -> Found:
    """`strict`: the largest requirement of an error-severity rule, which proves the finding alone."""
    rule = facts.rules[forbidding]
    decisive = None if strict is None or strict.count < 1 else (forbidding, strict.rule)
    return Found("required_but_forbidden", (forbidding, need.rule), (), need.pointer,
                 f"{_need(facts, tool, need)}, but {rule.id} ({rule.kind}) {how}.", decisive=decisive)


# -- count_contradiction -----------------------------------------------------------------------

def count_contradiction(facts: Facts, earlier: list[Found]) -> Iterator[Found]:
    """More calls required of the tools a bound covers than the bound allows."""
    for bound in facts.bounds:
        if bound.limit < 1:
            continue   # a cap of 0 is required_but_forbidden
        name = facts.rules[bound.rule].id
        covered = facts.required_matching(bound.glob)
        if bound.per_tool:
            over = [(tool, facts.required_tools[tool]) for tool in covered
                    if facts.required_tools[tool].count > bound.limit]
            if over:
                strict = [need for tool in covered if (need := facts.required(tool, errors_only=True))
                          and need.count > bound.limit]
                yield Found("count_contradiction", (bound.rule, *(need.rule for _, need in over)), (), bound.pointer,
                            f"{name} allows at most {_calls(bound.limit)} of each tool, but "
                            + "; ".join(_need(facts, tool, need) for tool, need in over) + ".",
                            decisive=(bound.rule, strict[0].rule) if strict else None)
            continue
        contributions: list[tuple[str, Requirement]] = []
        for tool in covered:
            need = facts.successful(tool) if bound.successful else facts.required(tool)
            if need is not None and need.count >= 1:
                contributions.append((tool, need))
        total = sum(need.count for _, need in contributions)
        what = "successful call" if bound.successful else "call" if not bound.events else "event"
        if total > bound.limit:
            strict = [need for tool in covered if (need := (facts.successful if bound.successful else facts.required)(
                tool, errors_only=True)) and need.count >= 1]
            decisive = (bound.rule, *(need.rule for need in strict)) \
                if sum(need.count for need in strict) > bound.limit else None
            named = [bound.rule, *(need.rule for _, need in contributions)]
            also = ""
            if decisive is None:   # an error-severity requirement on a glob may prove it alone
                alone = _single(facts, bound, errors_only=True)
                decisive = None if alone is None else (bound.rule, alone.rule)
                if alone is not None and alone.rule not in named:   # named too: the level rests on it
                    named.append(alone.rule)
                    rule = facts.rules[alone.rule]
                    also = f"; and {rule.id} ({rule.kind}) alone requires {alone.count}"
            yield Found("count_contradiction", tuple(named), (),
                        bound.pointer, f"{name} allows at most {_calls(bound.limit, what)}, but the rules require "
                        f"{total}: " + "; ".join(_need(facts, tool, need, "successful call" if bound.successful
                                                       else "call") for tool, need in contributions) + also
                        + ".", decisive=decisive)
            continue
        single = _single(facts, bound)
        if single is not None:
            rule = facts.rules[single.rule]
            alone = _single(facts, bound, errors_only=True)
            yield Found("count_contradiction", (bound.rule, single.rule), (), bound.pointer,
                        f"{name} allows at most {_calls(bound.limit, what)}, but {rule.id} ({rule.kind}) requires "
                        f"{single.count}.", decisive=None if alone is None else (bound.rule, alone.rule))


def _single(facts: Facts, bound: Bound, *, errors_only: bool = False) -> Requirement | None:
    """The first requirement that alone asks more of a bound than it allows: one on a glob the
    bound covers, from a tool_calls.min, a require_event.min or a call_index (point 40: not a
    tool_order's glob entries), or any require_event.min for a bound on events; with
    `errors_only`, of an error-severity rule."""
    def over(need: Requirement) -> bool:
        return (need.count > bound.limit and facts.rules[need.rule].kind != "tool_order"
                and (not errors_only or facts.severity(need.rule) == "error"))

    found = next((need for need in facts.glob_requirements if over(need) and (bound.unnamed or not need.unnamed)
                  and (need.successful or not bound.successful) and subsumes(bound.glob, need.glob)), None)
    if found is None and bound.events:
        found = next((need for need in facts.event_minimums if over(need)), None)
    return found


# -- order_contradiction -----------------------------------------------------------------------

def order_contradiction(facts: Facts, earlier: list[Found]) -> Iterator[Found]:
    """Two order rules that need A before B and B before A; or an exact tool_order that calls B
    before any A, with a rule that needs A before B."""
    by_pair: dict[tuple[str, str], list[Edge]] = {}
    for edge in facts.edges:
        by_pair.setdefault((edge.before, edge.after), []).append(edge)
    for first in facts.edges:
        for second in by_pair.get((first.after, first.before), ()):
            if second.rule < first.rule:
                continue   # each pair once, from its earlier rule
            needs = [need for tool in (first.before, first.after) if (need := facts.required_tools.get(tool))]
            strict = [need for tool in (first.before, first.after)
                      if (need := facts.required(tool, errors_only=True)) and need.count >= 1]
            later = max(first.rule, second.rule)
            message = (f"{facts.rules[first.rule].id} needs {first.before} before {first.after} and "
                       f"{facts.rules[second.rule].id} the reverse, so ")
            message += ("the first call of either fails one of them." if needs else
                        "neither tool may ever be called.")
            yield Found("order_contradiction", (first.rule, second.rule), tuple(need.rule for need in needs),
                        f"/rules/{later}/before", message, provable=bool(needs),
                        decisive=(first.rule, second.rule, strict[0].rule) if strict else None)
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

def self_precedence(facts: Facts, earlier: list[Found]) -> Iterator[Found]:
    """An order rule whose before and after are the same matcher: its events can never occur."""
    for index, rule in enumerate(facts.rules):
        if rule.kind not in ("precedence", "require_order"):
            continue
        after = rule.after.to_dict()
        if not same_matcher(rule.before.to_dict(), after):
            continue
        rests_on: tuple[int, ...] = ()
        if set(after) == {"type", "tool"} and rule.after.type == CALL and is_literal(rule.after.tool):
            need = facts.required(rule.after.tool, errors_only=True) or facts.required_tools.get(rule.after.tool)
            rests_on = () if need is None or need.count < 1 else (need.rule,)
        if not rests_on:
            requiring = facts.requiring_events.get(written_key(after))
            rests_on = () if requiring is None else (requiring,)
        yield Found("self_precedence", (index,), rests_on, f"/rules/{index}/after",
                    f"{rule.id} needs an earlier event of the same kind before each one, so such events can "
                    "never occur (write a deny_event to forbid them).", provable=bool(rests_on))


# -- vacuous_distinct --------------------------------------------------------------------------

def vacuous_distinct(facts: Facts, earlier: list[Found]) -> Iterator[Found]:
    """`distinct` on a tool that may be called at most once: there is nothing to compare. Only the
    bounds below 2 calls can say so, and only those whose glob covers the rule's are looked at
    (tried against every bound, 5,000 distinct rules beside 5,000 bounds took a minute)."""
    few = [bound for bound in facts.bounds if bound.limit < 2 and not bound.successful]
    if not few:
        return
    index_of: GlobIndex[Bound] = GlobIndex((bound.glob, bound) for bound in few)
    for index, rule in enumerate(facts.rules):
        if rule.kind != "tool_args" or rule.distinct is UNSET:
            continue
        glob = rule.tool
        covering = index_of.covering(glob)
        if is_literal(glob):
            bounds = [bound for bound in covering if bound.covers(glob)]
        else:
            bounds = [bound for bound in covering if not (bound.events or bound.per_tool)]
        if not bounds:
            continue
        tightest = min(bounds, key=lambda bound: (bound.limit, bound.rule))
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
    "output_match": {"mode": "subset"},
    "tool_args": {"mode": "subset"},
    "confidence_requires_outcome": {"evidence_classes": ["externally_observed", "configured_verifier"]},
    "approval_bound": {"revoked_by": ["approval.revoked"]},
    "failure_handled": {"message_types": ["agent.message"]},
}
"""Defaults a kind applies to a field left out, filled in before rules are compared."""


def duplicate_rule(facts: Facts, earlier: list[Found]) -> Iterator[Found]:
    """A rule that says exactly what an earlier one says (ids, descriptions and severities aside)."""
    all_fields = []
    groups: dict[tuple[object, ...], int] = {}   # rules that may be equal share a rough key: kind, names, texts
    for rule in facts.rules:
        fields = {name: value for name, value in rule.to_dict().items()
                  if name not in ("id", "description", "severity")}
        for name, value in _FILLED.get(rule.kind, {}).items():
            fields.setdefault(name, value)
        rough = (rule.kind, *sorted((name, value if isinstance(value, str) else "") for name, value in fields.items()))
        groups[rough] = groups.get(rough, 0) + 1
        all_fields.append((rough, fields))
    first: dict[str, int] = {}
    for index, (rough, fields) in enumerate(all_fields):
        if groups[rough] == 1:
            continue   # no other rule of its kind has its field names and texts
        rule = facts.rules[index]
        try:
            key = canonical(fields)
        except ValueError:   # a number beyond any double: compared as Python writes it
            key = repr(fields)
        original = first.setdefault(key, index)
        if original != index:
            yield Found("duplicate_rule", (original, index), (), f"/rules/{index}",
                        f"{rule.id} says what {facts.rules[original].id} says.", provable=False)


# -- v1_trap -----------------------------------------------------------------------------------

def v1_trap(facts: Facts, earlier: list[Found]) -> Iterator[Found]:
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
                        f"{rule.id} has a scope: a grant must then carry a matching approval_scope and also, when "
                        "the call names an approval_id, that id: the scope never stands in for the id "
                        "(approval_bound says what is meant more plainly).", provable=False)
        elif rule.kind == "stop_is_final":
            stop = "control.stop" if rule.stop_type is UNSET else rule.stop_type
            allowed = list(DEFAULT_ALLOWED_AFTER) if rule.allowed_after is UNSET else rule.allowed_after
            if not any(subsumes(pattern, stop) for pattern in allowed):
                pointer = f"/rules/{index}/allowed_after" if rule.allowed_after is not UNSET else f"/rules/{index}"
                yield Found("v1_trap", (index,), (), pointer,
                            f"{rule.id}: allowed_after does not take in {stop} itself, so a second stop fails and "
                            "each later event is reported once per stop.", provable=False)


# -- reference_to_forbidden --------------------------------------------------------------------

def reference_to_forbidden(facts: Facts, earlier: list[Found]) -> Iterator[Found]:
    """A `$from_result` that reads the results of a tool no call may make (or, under an exact
    tool_order, none made before the subject). One in a condition (`when`) is a warning: a
    condition that cannot hold makes its rule ask for nothing, not a trace that cannot pass."""
    # the exact tool_orders, found once (each reference of each rule asks about them)
    orders = [(index, rule) for index, rule in enumerate(facts.rules)
              if rule.kind == "tool_order" and rule.mode == "exact"]
    for index, rule in enumerate(facts.rules):
        if rule.kind not in ("tool_args", "output_match", "required_when", "forbidden_when"):
            continue
        subject = rule.tool if rule.kind == "tool_args" else None
        need = None if subject is None else (facts.required(subject, errors_only=True)
                                             or facts.required_tools.get(subject))
        need = need if need is not None and need.count >= 1 else None
        required = need is not None if rule.kind == "tool_args" else rule.when is UNSET
        found = [] if rule.kind.endswith("_when") else list(_references(rule.match, f"/rules/{index}/match"))
        if getattr(rule, "when", UNSET) is not UNSET:   # never provable: see above
            found += _references(rule.when, f"/rules/{index}/when", optional=True)
        # two references to one tool point alike when the forbidding rule comes later (at its
        # field): one finding, the provable one if either is
        said: dict[tuple[str, str], Found] = {}
        for glob, pointer, optional in found:
            for forbidding, field, how in _forbidders(facts, glob, subject, orders):
                later = pointer if index > forbidding else field
                rests_on = () if need is None else (need.rule,)
                finding = Found("reference_to_forbidden", (index, forbidding), rests_on, later,
                                f"{rule.id} reads the results of {glob}, but {facts.rules[forbidding].id} {how}.",
                                provable=required and not optional)
                first = said.setdefault((later, finding.message), finding)
                if finding.provable and not first.provable:
                    said[(later, finding.message)] = finding
        yield from said.values()


def _references(tree: Any, pointer: str, optional: bool = False) -> Iterator[tuple[str, str, bool]]:
    """The tool glob of each `$from_result` in a match tree, its pointer, and whether it sits in
    an `$any_of` branch (where another branch may pass)."""
    if isinstance(tree, dict):
        for key, value in tree.items():
            here = pointer + json_pointer((key,))
            if key == "$from_result" and isinstance(value, dict):
                if isinstance(value.get("tool"), str):
                    yield value["tool"].strip(), f"{here}/tool", optional
                yield from _references(value.get("where"), f"{here}/where", optional)
            elif key != "$literal":
                yield from _references(value, here, optional or key == "$any_of")
    elif isinstance(tree, list):
        for position, item in enumerate(tree):
            yield from _references(item, f"{pointer}/{position}", optional)


def _forbidders(facts: Facts, glob: str, subject: str | None,
                orders: list[tuple[int, Any]]) -> Iterator[tuple[int, str, str]]:
    """The rules that forbid every call of `glob` (before `subject`, for one of the exact
    tool_orders `orders`): (rule index, the pointer of its field, how it forbids)."""
    for index in sorted(facts.denies.covering(glob)):
        yield index, f"/rules/{index}/tool", "denies it"
    for index, patterns in facts.allows:
        if not facts.allowed(patterns, glob):
            yield index, f"/rules/{index}/tools", "does not allow it"
    for index, rule in orders:
        if subject is not None and is_literal(subject) and subject in rule.tools:
            last_subject = max(position for position, entry in enumerate(rule.tools) if entry == subject)
            reads = [position for position, entry in enumerate(rule.tools) if intersects(entry, glob)]
            if all(position > last_subject for position in reads):
                at = reads[0] if reads else last_subject
                yield index, f"/rules/{index}/tools/{at}", f"calls it only after {subject}"
    if is_literal(glob):
        capped: set[int] = set()   # one per rule, however many of its bounds are 0 (as required_but_forbidden)
        for bound in facts.bounds:
            if bound.limit == 0 and not bound.successful and bound.covers(glob) and bound.rule not in capped:
                capped.add(bound.rule)
                yield bound.rule, bound.pointer, "allows no call of it"


# -- dead_rule ---------------------------------------------------------------------------------

_CALL_KINDS = ("require_approval", "retry_limit", "tool_result_required", "tool_args", "tool_calls",
               "approval_bound", "latency_budget", "result_size", "failure_handled", "forbidden_when")
"""Kinds whose every violation needs a call (or its result) of their `tool`."""


def dead_rule(facts: Facts, earlier: list[Found]) -> Iterator[Found]:
    """A rule on calls that can never be made: an error-severity allow_tools lets none of its tool
    through, or an error-severity deny_tool covers it."""
    taken = {frozenset(item.named) for item in earlier if item.code in ("required_but_forbidden",
                                                                         "reference_to_forbidden")}
    shut_out: dict[str, list[int]] = {}   # by glob: the allow lists that let none of its calls through
    denied_by: dict[str, list[int]] = {}   # by glob: the deny_tool rules that cover it
    for index, rule in enumerate(facts.rules):
        glob = _subject(rule)
        if glob is None:
            continue
        if glob not in shut_out:
            shut_out[glob] = [other for other, patterns in facts.allows if not facts.allowed(patterns, glob)]
        forbidding: list[tuple[int, str, str]] = [
            (other, "lets none of its calls through", f"/rules/{other}/tools") for other in shut_out[glob]
            if other != index]
        if rule.kind != "deny_tool":
            if glob not in denied_by:
                denied_by[glob] = list(facts.denies.covering(glob))
            forbidding += [(other, "denies all of them", f"/rules/{other}/tool") for other in denied_by[glob]
                           if other != index and facts.severity(other) == "error"]
        for other, how, field in sorted(forbidding):
            if frozenset((index, other)) in taken:
                continue
            pointer = _tool_pointer(rule, index) if index > other else field
            yield Found("dead_rule", (other, index), (), pointer,
                        f"{rule.id} ({rule.kind}) judges calls of {glob}, but {facts.rules[other].id} {how}: it can "
                        f"never fire on a trace that passes {facts.rules[other].id}.", provable=False)


def _tool_pointer(rule: Any, index: int) -> str:
    """The pointer to a rule's `tool`, or to the rule when its `tool` is absent or its kind's
    default (`*`), which the contract may have left out: a pointer must lead somewhere."""
    tool = getattr(rule, "tool", UNSET)
    default = next((field.default for field in msgspec.structs.fields(rule) if field.name == "tool"), UNSET)
    return f"/rules/{index}" if tool is UNSET or tool == default else f"/rules/{index}/tool"


def _subject(rule: Any) -> str | None:
    """The tool glob a rule's every violation needs a call of, for the kinds dead_rule applies to."""
    if rule.kind == "deny_tool":
        return str(rule.tool)
    if rule.kind not in _CALL_KINDS:
        return None
    if rule.kind == "tool_args" and rule.call_index is not UNSET:
        return None
    if rule.kind == "tool_calls" and (rule.max is UNSET or rule.min is not UNSET
                                      or rule.matches_output_length is not UNSET):
        return None
    if rule.kind == "latency_budget" and rule.percentile is not UNSET:
        return None
    return "*" if rule.tool is UNSET else str(rule.tool)


# -- shadowed_rule -----------------------------------------------------------------------------

_RANK = {"error": 2, "warning": 1}
_GLOB_KEYS = ("type", "tool", "outcome_id", "reason", "status")


def shadowed_rule(facts: Facts, earlier: list[Found]) -> Iterator[Found]:
    """A rule whose every violation another rule of at least its severity raises too."""
    original = {later: first for first, later in (item.named for item in earlier if item.code == "duplicate_rule")}
    by_kind: dict[str, list[int]] = {}
    for index, rule in enumerate(facts.rules):
        by_kind.setdefault(rule.kind, []).append(index)
        if rule.kind == "allow_tools":
            yield from _shadowed_patterns(facts, index)
    for kind, indexes in by_kind.items():
        covers = _COVERS.get(kind)
        if covers is None:
            continue
        # Duplicates (of each other, or of one earlier rule) are duplicate_rule's: a rule's
        # candidates are asked for once per set of duplicates (they are alike), and filed by set,
        # so that a rule skips its own set whole (10,000 copies of one rule made 10^8 pairs).
        candidates_of: dict[int, list[tuple[int, list[int]]]] = {}
        for b in indexes:
            own = original.get(b, b)
            candidates = candidates_of.get(own)
            if candidates is None:
                by_set: dict[int, list[int]] = {}
                for a in _shadowing_candidates(facts, kind, b, indexes):
                    by_set.setdefault(original.get(a, a), []).append(a)
                candidates = candidates_of[own] = [item for item in by_set.items() if item[0] != own]
            for a in (a for _, others in candidates for a in others):
                wide, narrow = facts.rules[a], facts.rules[b]
                if _RANK[wide.effective_severity] < _RANK[narrow.effective_severity] or not covers(wide, narrow):
                    continue
                alike = covers(narrow, wide)
                if alike and a > b and _RANK[narrow.effective_severity] >= _RANK[wide.effective_severity]:
                    continue   # the two say the same: the later is shadowed, unless only it is an error
                later = max(a, b)
                field = next(name for name in _FIELDS[kind] if getattr(narrow, name) is not UNSET)
                yield Found("shadowed_rule", (a, b), (), f"/rules/{later}/{field}",
                            f"{narrow.id} is shadowed by {wide.id}: every violation of {narrow.id} is one of "
                            f"{wide.id} too.", provable=False)


def _shadowing_candidates(facts: Facts, kind: str, b: int, indexes: list[int]) -> list[int]:
    """The rules of a kind that may shadow rule b: for deny_tool, the globs that cover its own;
    for deny_event, the matchers whose tool (or, without one, type) covers its; for caps, the
    rules on the same glob; in contract order."""
    narrow = facts.rules[b]
    if kind == "deny_tool":
        return sorted(facts.denies.covering(narrow.tool))
    if kind == "deny_event":
        written = narrow.match.to_dict()
        by_tool, by_type, others = facts.deny_events   # a wider matcher's keys are among the narrower's
        found = [a for a in others if set(facts.rules[a].match.to_dict()) <= set(written)]
        if "tool" in written:
            found += by_tool.covering(written["tool"])
        if "type" in written:
            found += by_type.covering(written["type"])
        return sorted(found)
    if kind in ("tool_calls", "retry_limit"):
        return facts.by_glob(kind).get(_tool(narrow), [])
    return indexes


def _shadowed_patterns(facts: Facts, index: int) -> Iterator[Found]:
    """Patterns of one allow_tools list that another pattern of the list already allows."""
    rule = facts.rules[index]
    patterns: GlobIndex[int] = GlobIndex((pattern, position) for position, pattern in enumerate(rule.tools))
    for position, pattern in enumerate(rule.tools):
        for other in sorted(patterns.covering(pattern)):
            wider = rule.tools[other]
            if other == position or (subsumes(pattern, wider) and other > position):
                continue   # itself, or the same subjects: the later of the two is the redundant one
            yield Found("shadowed_rule", (index,), (), f"/rules/{index}/tools/{position}",
                        f"{rule.id}: {pattern!r} is already allowed by {wider!r}.", provable=False)
            break


_DEFAULT_VALUES = {"group_by": "call_signature", "count": "calls"}


def _value(rule: Any, name: str) -> Any:
    """A field's value, its default where the kind applies one to a field left out."""
    value = getattr(rule, name)
    return _DEFAULT_VALUES.get(name, value) if value is UNSET else value


def _tool(rule: Any) -> str:
    """A cap's tool glob, `*` where the kind defaults it."""
    return "*" if rule.tool is UNSET else str(rule.tool)


def _deny_event_covers(wide: Any, narrow: Any) -> bool:
    a, b = wide.match.to_dict(), narrow.match.to_dict()
    if not set(a) <= set(b):
        return False
    return all(subsumes(value, b[key]) if key in _GLOB_KEYS else json_equal(value, b[key]) for key, value in a.items())


def same_matcher(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two matchers (as written) are the same: the same keys, globs equal once normalised,
    other values equal as JSON (`1` is `1.0`, never `true`)."""
    return set(a) == set(b) and all(
        normalised(value) == normalised(b[key]) if key in _GLOB_KEYS else json_equal(value, b[key])
        for key, value in a.items())


def _cap_covers(fields: tuple[str, ...], same: tuple[str, ...]) -> Callable[[Any, Any], bool]:
    """Caps of one kind: the same values in `same`, and for every cap in `fields` the narrow rule
    sets, the wide one sets it at most as high; the narrow rule sets nothing else."""
    def covers(wide: Any, narrow: Any) -> bool:
        if any(_value(wide, name) != _value(narrow, name) for name in same):
            return False
        if getattr(narrow, "min", UNSET) is not UNSET or getattr(narrow, "matches_output_length", UNSET) is not UNSET:
            return False
        set_by_narrow = [name for name in fields if getattr(narrow, name) is not UNSET]
        return bool(set_by_narrow) and all(getattr(wide, name) is not UNSET and getattr(wide, name) <= getattr(
            narrow, name) for name in set_by_narrow)
    return covers


_COVERS: dict[str, Callable[[Any, Any], bool]] = {
    "deny_tool": lambda wide, narrow: subsumes(wide.tool, narrow.tool),
    "deny_event": _deny_event_covers,
    "tool_calls": _cap_covers(("max",), ("count",)),
    "retry_limit": _cap_covers(("max_attempts",), ("group_by",)),
    "event_budget": _cap_covers(("max_events", "max_tool_calls", "max_tool_failures"), ()),
}
_FIELDS = {"deny_tool": ("tool",), "deny_event": ("match",), "tool_calls": ("max",), "retry_limit": ("max_attempts",),
           "event_budget": ("max_events", "max_tool_calls", "max_tool_failures")}
"""The field a shadowed_rule finding points at: the first of these the shadowed rule sets (both
rules hold it: the wider one bounds every cap the narrower sets)."""


# -- unschemaed_read ---------------------------------------------------------------------------

def unschemaed_read(facts: Facts, earlier: list[Found]) -> Iterator[Found]:
    """An output path a condition or `matches_output_length` reads that no output_schema requires:
    when the output lacks it, the rule is unresolved rather than failing."""
    schemas = [rule.schema for rule in facts.rules if rule.kind == "output_schema"]
    for index, rule in enumerate(facts.rules):
        seen: set[tuple[str, ...]] = set()   # one warning per path, however it is written (`a.b`, `/a/b`)
        for text, pointer in output_reads(rule, index):
            try:
                segments = parse_path(text)
            except ValueError:
                continue
            if segments in seen:
                continue
            seen.add(segments)
            if not any(requires(schema, segments) for schema in schemas):
                where = "no output_schema requires it" if schemas else "no output_schema describes the output"
                yield Found("unschemaed_read", (index,), (), pointer,
                            f"{rule.id} reads the output at {text!r}, but {where}: without it the rule is "
                            "unresolved.", provable=False)


def output_reads(rule: Any, index: int) -> Iterator[tuple[str, str]]:
    """The output paths a rule's conditions (and matches_output_length) read, with their pointers."""
    if rule.kind == "tool_calls" and rule.matches_output_length is not UNSET:
        yield rule.matches_output_length, f"/rules/{index}/matches_output_length"
    if rule.kind in ("output_match", "required_when", "forbidden_when") and rule.when is not UNSET:
        yield from _condition_paths(rule.when, f"/rules/{index}/when")


def _condition_paths(condition: Any, pointer: str) -> Iterator[tuple[str, str]]:
    if not isinstance(condition, dict):
        return
    if isinstance(condition.get("path"), str):
        yield condition["path"], f"{pointer}/path"
    for form in ("any_of", "all_of"):
        for position, branch in enumerate(condition.get(form) or ()):
            yield from _condition_paths(branch, f"{pointer}/{form}/{position}")


def requires(schema: Any, segments: tuple[str, ...]) -> bool:
    """Whether every output a JSON Schema accepts has a value at the path: each key segment in
    `required` and described in `properties`, each index below `minItems` (local $refs followed;
    allOf, anyOf and if/then are not read)."""
    root, here = schema, schema
    for segment in segments:
        here = _resolved(root, here)
        if here is False:
            return True   # no output passes: whatever it reads is there
        if not isinstance(here, dict):
            return False
        if _INDEX.fullmatch(segment) and ("items" in here or "prefixItems" in here or "minItems" in here):
            position = int(segment)
            if not isinstance(here.get("minItems"), int) or here["minItems"] <= position:
                return False
            prefix = here.get("prefixItems")
            here = prefix[position] if isinstance(prefix, list) and position < len(prefix) else here.get("items", True)
        else:
            required = here.get("required")
            properties = here.get("properties")
            if not isinstance(required, list) or segment not in required:
                return False
            here = properties.get(segment, True) if isinstance(properties, dict) else True
    return True


def _resolved(root: Any, schema: Any) -> Any:
    """A schema with its local `$ref`s followed (at most 32 deep: a loop requires nothing)."""
    for _ in range(32):
        reference = schema.get("$ref") if isinstance(schema, dict) else None
        if not isinstance(reference, str) or not reference.startswith("#"):
            return schema
        target: Any = root
        for step in reference[1:].split("/")[1:]:
            step = step.replace("~1", "/").replace("~0", "~")
            if isinstance(target, dict) and step in target:
                target = target[step]
            elif isinstance(target, list) and step.isdigit() and int(step) < len(target):
                target = target[int(step)]
            else:
                return True
        schema = target
    return True


# -- unrequired_subject ------------------------------------------------------------------------

_INDEX = re.compile(r"0|[1-9][0-9]*")
"""An array index in a path, as the evaluator reads one (`01` and `²` are keys)."""

_SUBJECT_KINDS = ("tool_args", "precedence", "approval_bound", "latency_budget", "result_size")


def unrequired_subject(facts: Facts, earlier: list[Found]) -> Iterator[Found]:
    """A rule about calls nothing requires: a run that makes none passes it as vacuous."""
    dead = {item.named[-1] for item in earlier if item.code == "dead_rule"} | {
        index for item in earlier if item.code == "dead_rule" for index in item.named}
    required_globs = GlobIndex((need.glob, need) for need in facts.glob_requirements
                               if need.count >= 1 and not need.unnamed)
    for index, rule in enumerate(facts.rules):
        if rule.kind not in _SUBJECT_KINDS or index in dead:
            continue
        if rule.kind == "tool_args" and rule.call_index is not UNSET:
            continue
        if rule.kind == "latency_budget" and rule.percentile is not UNSET:
            continue
        if rule.kind == "precedence":
            required = _after_required(facts, rule.after)
            subject = f"its after ({rule.after.brief()})"
        else:
            glob = rule.tool
            # (calls without a name need no `glob`)
            required = bool(facts.required_matching(glob)) or next(required_globs.subsumed(glob), None) is not None
            subject = f"a call of {glob}"
        if not required:
            yield Found("unrequired_subject", (index,), (), f"/rules/{index}",
                        f"No rule requires {subject}, so a run without one passes {rule.id} as vacuous.",
                        provable=False)


def _after_required(facts: Facts, after: Any) -> bool:
    written = after.to_dict()
    if set(written) == {"type", "tool"} and after.type == CALL and is_literal(after.tool) and (
            after.tool in facts.required_tools):
        return True
    return written_key(written) in facts.requiring_events


CHECKS: tuple[Callable[[Facts, list[Found]], Iterator[Found]], ...] = (
    required_but_forbidden, count_contradiction, order_contradiction, self_precedence, reference_to_forbidden,
    dead_rule, vacuous_distinct, duplicate_rule, shadowed_rule, unschemaed_read, v1_trap, unrequired_subject)
"""Every code, each run after those it looks back at (dead_rule after the two forbidding codes,
shadowed_rule after duplicate_rule, unrequired_subject after dead_rule)."""
