"""The engine: one pass over a trace, feeding every rule only the events it asked for.

For each event the engine takes its routing key, (type, tool, claims_completion), and looks up the
handlers for it: asked once per distinct key from every rule's `route()` and cached (`routing`).
A new tool is first sorted into its class, by the globs the rules read tools through
(`route_tools`), and the routes are asked for once per class: a trace that names a new tool on
every call costs one regular-expression match per new tool, not one `route()` call per rule. Rules keep
small state and never look back, so a check is O(events) in time with memory that does not grow
with the trace (only with what the rules must remember, such as open calls or retry groups).
After the last event each rule reports its result, and violations get their physical lines.

The engine takes a loaded `Contract` and an open `TraceSource`; `api` loads and opens what users
pass (paths, bytes, mappings) and calls it.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from msgspec import UNSET

from agent_invariants import _collector as collector
from agent_invariants.contract import Contract
from agent_invariants.events import Event
from agent_invariants.notices import (
    KNOWN_TYPES,
    TypeSpelling,
    checked_nothing,
    misspelt_fields,
    named_types,
    unmatchable_tools,
)
from agent_invariants.pairing import Calls
from agent_invariants.payloads import FieldTypes
from agent_invariants.prevented import mark_prevented
from agent_invariants.reader import TraceSource
from agent_invariants.report import CHECK_SCHEMA, CheckReport, ContractRef, Notice, RuleResult, Violation
from agent_invariants.routing import Router
from agent_invariants.rules import DEFAULT_MAX_VIOLATIONS, kept_per_rule, of_version_2, rule_for
from agent_invariants.rules.base import UNCHECKED, Rule
from agent_invariants.summary import SummaryCounter

__all__ = ("Checked", "Trace", "run_check", "run_observers")


Trace = TraceSource | str | os.PathLike[str] | bytes | Iterable[Event | Mapping[str, Any]]
"""A trace as callers name it: a path (`-` for standard input), bytes, events, or an open source."""


def run_observers(source: TraceSource, observers: Sequence[Any],
                  each_batch: Callable[[list[Event], int], None] | None = None) -> int:
    """Feed every event of `source` to the observers that route it; return the number of events.
    `each_batch` sees every batch of events (and the index of its first) before they are routed.
    The cyclic garbage collector is paused meanwhile (`_collector`)."""
    with collector.paused():
        return _run(source, observers, each_batch)


def _run(source: TraceSource, observers: Sequence[Any], each_batch: Callable[[list[Event], int], None] | None) -> int:
    router = Router(observers)
    try:
        return _routed(source, router, each_batch)
    finally:
        # The routes learnt refer to the router, which refers to every observer: forgotten, the
        # check's state is freed when the caller lets it go, not at the next full collection (a
        # server or a loop of checks grew by the rules' state of each check until then).
        router.forget()


def _routed(source: TraceSource, router: Router, each_batch: Callable[[list[Event], int], None] | None) -> int:
    # claims_completion -> type -> tool -> handlers: three dict lookups on values that are already
    # hashed cost less than building, hashing and comparing a key tuple per event
    routes = router.routes
    count = 0
    for batch in source.batches():
        if each_batch is not None:
            each_batch(batch, count)
        for index, event in enumerate(batch, count):
            try:
                handlers: Any = routes[event.claims_completion][event.type]
                if handlers.__class__ is not tuple:   # a _Tools: the handlers depend on the tool
                    handlers = handlers[event.tool]
            except KeyError:
                handlers = router.learn(event)
            for handle in handlers:
                changed = handle(event, index)
                if changed is not None:
                    if changed is not True:   # a stray truthy value would empty the cache on every event
                        raise _bad_return(handle, changed)
                    router.forget()   # a rule's interests changed (e.g. after the first stop)
        count += len(batch)
    return count


def _bad_return(handle: Any, value: object) -> TypeError:
    name = getattr(handle, "__qualname__", repr(handle))
    return TypeError(f"{name} returned {value!r}; a handler returns None, or True when its rule's routes "
                     "changed (see docs/architecture.md)")


class Checked(NamedTuple):
    """A check's report, plus what the pass learned that reports do not hold."""

    report: CheckReport
    counter: SummaryCounter
    source: TraceSource
    rules: list[Rule]
    """The rules as they finished, in contract order (`record --enforce` asks them about the last call)."""


def run_check(contract: Contract, source: TraceSource, max_violations: int = DEFAULT_MAX_VIOLATIONS, *,
              strict: bool = False, partial: bool = False, observers: Sequence[Any] = (),
              events_version: int | None = None, count_safety: bool = False) -> Checked:
    """One pass of every rule of `contract` over `source`, each rule keeping at most
    `max_violations` violations (0: all). With `strict`, a rule that checked nothing (of a kind
    for which that is not the passing state) fails with a violation of the whole trace. With
    `partial`, the trace is taken as cut short: violations of liveness parts are `inconclusive`
    and count neither in the verdict nor in the error and warning counts. `observers` see the
    events in the same pass, after the rules (a caller that learns more of the trace than the
    report says: `stability` keeps the final output). `events_version` reads the events as that
    contract version does (default: the contract's own; `mutate` checks a version-1 trace with a
    control of version-2 kinds, which must not type-check what version 1 leaves free). With
    `count_safety`, the report says how many error violations come from safety parts
    (`safety_error_count`, for `--safety-exit`)."""
    with collector.paused():   # also while the rules finish and the report is built
        return _check(contract, source, max_violations, strict, partial, observers,
                      contract.version if events_version is None else events_version, count_safety)


def _check(contract: Contract, source: TraceSource, max_violations: int, strict: bool, partial: bool,
           observers: Sequence[Any], events_version: int, count_safety: bool) -> Checked:
    kept = kept_per_rule(max_violations, len(contract.rules))   # (memory bounded however many rules fail)
    rules = [rule_for(config, kept) for config in contract.rules]
    counter = SummaryCounter()
    spelling = TypeSpelling([*KNOWN_TYPES, *named_types(contract.rules)])
    # under version 2, the version-2 fields of each event are type-checked before any rule sees it
    fields = FieldTypes(source).check if events_version == 2 else None
    shared = _shared_calls(rules, always=contract.version == 2)   # version 2 also marks denied calls
    try:
        events = run_observers(source, [*shared, *rules, counter, spelling, *observers], fields)
        summary = counter.finish(events)
        results: list[RuleResult] = [rule.finish(summary) for rule in rules]
    finally:
        for calls in shared:
            calls.close()
    for calls in shared:
        mark_prevented(rules, calls.denied)
    normal = {rule.id for rule in rules if rule.checked_nothing_is_normal}
    nothing = checked_nothing(results, normal)
    if strict:
        unchecked = {notice.rule_id for notice in nothing}
        results = [rule.fail_unchecked(result) if rule.id in unchecked and result.passed else result
                   for rule, result in zip(rules, results, strict=True)]
    # which violations come from liveness parts: only asked when --partial or the safety count needs it
    liveness = [_liveness(rule, result, mark=partial) for rule, result in zip(rules, results, strict=True)] \
        if partial or count_safety else [0] * len(results)
    inconclusive = liveness if partial else [0] * len(results)
    _caused_by(rules, inconclusive)
    counted = [result.violation_count - left_out for result, left_out in zip(results, inconclusive, strict=True)]
    violations = [violation for result in results for violation in result.violations]
    if violations:   # (imported here: a passing check needs none of it)
        from agent_invariants.match.canonical import evidence_within_total

        evidence_within_total(violations, of_version_2)   # (version 1's keeps its keys in order)
    notices = _trace_notices(events, spelling, source, counter) + nothing
    _locate([*violations, *notices], source)
    total = sum(result.violation_count for result in results)
    errors = sum(count for result, count in zip(results, counted, strict=True) if result.severity == "error")
    cut = total > len(violations)
    report = CheckReport(
        schema=CHECK_SCHEMA,
        contract=ContractRef(name=contract.name, version=contract.version),
        passed=errors == 0,
        error_count=errors,
        warning_count=sum(counted) - errors,
        summary=summary,
        results=results,
        violations=violations,
        truncated=True if cut else UNSET,
        violations_total=total if cut else UNSET,
        trace=UNSET if source.path is None else source.path,
        run=UNSET if source.run_id is None else source.run_id,
        notices=notices or UNSET,
        partial=True if partial else UNSET,
        inconclusive_count=sum(inconclusive) if partial else UNSET,
    )
    if count_safety:   # the errors of safety parts (under --partial, every counted error)
        report.safety_error_count = sum(result.violation_count - lively for result, lively
                                        in zip(results, liveness, strict=True) if result.severity == "error")
    return Checked(report, counter, source, rules)


def _liveness(rule: Rule, result: RuleResult, *, mark: bool) -> int:
    """How many of the rule's violations come from its liveness parts. With `mark` (a trace cut
    short, which may yet satisfy them), they become `inconclusive` and leave the rule's verdict.
    So does `--strict`'s `checked_nothing`: only the run's end decides it (the rest of the run
    may bring what the rule checks), so it is never one of `--safety-exit`'s safety errors."""
    kept = 0
    unchecked = f"{rule.kind}.{UNCHECKED}"
    for violation in result.violations:
        if rule.is_liveness(violation) or violation.code == unchecked:
            if mark:
                violation.status = "inconclusive"
            kept += 1
    total = rule.inconclusive_total(kept)
    if total and mark:
        result.inconclusive = total
        result.passed = result.violation_count == total
    return total


def _shared_calls(rules: list[Rule], *, always: bool) -> list[Calls]:
    """The pairing of calls and results that the rules reading a result as its call's share
    (`Rule.pairs_calls`), which sees every call and result before the rules do: none, unless some
    rule reads it or `always` (which also learns the calls a `tool.denied` answered), or one."""
    readers = [rule for rule in rules if rule.pairs_calls]
    if not readers and not always:
        return []
    calls = Calls()
    for rule in readers:
        rule.read_results(calls)
    return [calls]


def _caused_by(rules: list[Rule], inconclusive: list[int]) -> None:
    """When an output_schema rule fails, every violation of another rule that read the final
    output names it as `caused_by` (the first such rule in contract order); nothing is dropped.
    Under `--partial`, an output_schema rule whose violations are all `inconclusive` (each
    rule's count of them) has not failed, and causes nothing."""
    cause = next((rule.id for rule, left_out in zip(rules, inconclusive, strict=True)
                  if rule.judges_output_shape and rule.violation_count > left_out), None)
    if cause is None:
        return
    for rule in rules:
        if rule.id != cause:
            for violation in rule.read_output:
                violation.caused_by = cause


def _trace_notices(events: int, spelling: TypeSpelling, source: TraceSource, counter: SummaryCounter) -> list[Notice]:
    if not events:
        return [Notice(kind="empty_trace", message="the trace has no events, so no rule saw anything")]
    return (spelling.notices() + misspelt_fields(source.field_sample())
            + unmatchable_tools(counter.called_tools, counter.first_call))


def _locate(violations: Sequence[Violation | Notice], source: TraceSource) -> None:
    """Give each violation the physical line of its event (and that line's length, when the
    source learnt it), looked up once for all of them."""
    indices = [v.event_index for v in violations if v.event_index is not UNSET and v.line is UNSET]
    if not indices:
        return
    lines = source.lines_of(indices)
    lengths = source.line_lengths_of(indices)
    spans = source.spans_of(indices)
    for violation in violations:
        index = violation.event_index
        if index is UNSET or violation.line is not UNSET:
            continue
        line = lines.get(index)
        if line is not None:
            violation.line = line
            length = lengths.get(index)
            if length is not None and isinstance(violation, Violation):
                violation.line_length = length
        span = spans.get(index)
        if span is not None and isinstance(violation, Violation):
            violation.span_id = span
