"""Routing by classes of tools: a rule's `route_tools` must name every glob its `route` reads the
tool through, and a trace that names a new tool on every call must be judged exactly as any other.
"""
from __future__ import annotations

import re
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec import UNSET
from test_properties import KIND_FIELDS, TYPE_GLOBS, TYPES, contracts, traces

from agent_invariants import check_trace, load_contract
from agent_invariants.globs import compile_glob, compile_glob_set
from agent_invariants.notices import TypeSpelling
from agent_invariants.rules import rule_for
from agent_invariants.rules.base import Rule
from agent_invariants.summary import SummaryCounter

from support import contract, examples

TOOL_NAMES = ["a.x", "a.y", "b.x", "c", "a.", "x.a.x", "a.x ", "a.x\n", "é.x", "😀.x", "", "*", "?.x", "a.xx"]
GLOBS = ["a.*", "*.x", "*", "?.x", "b.?", "a.x", "*a*x*", "a*\n*", "é*", "??.x", "", "*.*.*"]


@st.composite
def one_rule(draw: Any) -> Any:
    kind = draw(st.sampled_from(sorted(KIND_FIELDS)))
    document = contract({"id": "r", "kind": kind, **draw(KIND_FIELDS[kind])})
    return rule_for(load_contract(document).rules[0], 1000)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rule=one_rule(), event_type=st.sampled_from([*TYPES, *TYPE_GLOBS, "secret.read"]),
       claims=st.sampled_from([UNSET, True, False]))
def test_a_rule_routes_alike_all_tools_its_globs_cannot_tell_apart(rule, event_type, claims):
    read = rule.route_tools(event_type, claims)
    assert read is not None   # every kind of ours names its globs
    matchers = [compile_glob(pattern) for pattern in read]
    classes: dict[Any, Any] = {UNSET: rule.route(event_type, UNSET, claims)}
    for tool in TOOL_NAMES:
        key = tuple(matches(tool) for matches in matchers)
        answer = rule.route(event_type, tool, claims)
        assert classes.setdefault(key, answer) == answer, (tool, key)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rule=one_rule(), event_type=st.sampled_from([*TYPES, *TYPE_GLOBS, "secret.read", "x.new", "tool.calls"]),
       claims=st.sampled_from([UNSET, True, False]))
def test_a_rule_wants_no_event_of_a_type_its_type_globs_leave_out(rule, event_type, claims):
    """`route_types`: outside its globs, the rule's route is None whatever the tool and claims."""
    types = rule.route_types()
    if types is not None and not any(compile_glob(glob)(event_type) for glob in types):
        assert all(rule.route(event_type, tool, claims) is None for tool in [UNSET, *TOOL_NAMES])


def test_the_summary_reads_no_tool_glob():
    counter = SummaryCounter()
    for event_type in TYPES:
        assert counter.route_tools(event_type, UNSET) == ()
        assert counter.route("tool.call" if event_type == "tool.call" else event_type, "a", True) == \
            counter.route("tool.call" if event_type == "tool.call" else event_type, "b", True)


@settings(max_examples=examples(200), deadline=None)
@given(patterns=st.lists(st.sampled_from(GLOBS), max_size=6), subjects=st.lists(st.sampled_from(TOOL_NAMES),
       min_size=2, max_size=2))
def test_a_glob_set_gives_equal_keys_exactly_to_subjects_every_glob_treats_alike(patterns, subjects):
    key = compile_glob_set(patterns)
    alike = all(compile_glob(pattern)(subjects[0]) == compile_glob(pattern)(subjects[1]) for pattern in patterns)
    assert (key(subjects[0]) == key(subjects[1])) is alike


PREFIX_GLOBS = ["*", "a*", "a.*", "a.x*", "a.xx*", "b.*", "\n*", "a\n*", "é*", "😀*", "a.x", "b", ""]
PREFIX_SUBJECTS = ["", "a", "a.", "a.x", "a.xx", "a.xxy", "a.x\n", "a\nb", "a\n", "\n", "b.", "b", "é.x",
                   "😀", "😀.x", "ab\n.x", "a.x\u2028", "c"]


@settings(max_examples=examples(300), deadline=None)
@given(patterns=st.lists(st.sampled_from(PREFIX_GLOBS), min_size=1, max_size=8),
       subjects=st.lists(st.sampled_from(PREFIX_SUBJECTS), min_size=2, max_size=2))
def test_a_set_of_prefix_globs_gives_equal_keys_exactly_to_subjects_every_glob_treats_alike(patterns, subjects):
    """The usual contract's globs (a literal prefix and one trailing star, and literals) take
    the longest-prefix path; nested prefixes and line breaks in patterns and subjects included."""
    key = compile_glob_set(patterns)
    alike = all(compile_glob(pattern)(subjects[0]) == compile_glob(pattern)(subjects[1]) for pattern in patterns)
    assert (key(subjects[0]) == key(subjects[1])) is alike


MANY_GLOB_SYMBOLS = ["a", "b", ".", "x", "*", "?", "*", "?", "\n", "é", "😀", "ab", "abcdefghij"]
MANY_GLOB_SUBJECTS = [*TOOL_NAMES, "ab.x", "abcdefghijab", "xabcdefghij.x", "a\nb", "😀😀", "ééx", "b.x.a", "aaaa"]


@settings(max_examples=examples(30), deadline=None)
@given(patterns=st.lists(st.lists(st.sampled_from(MANY_GLOB_SYMBOLS), min_size=1, max_size=5).map("".join),
                         min_size=70, max_size=160),
       subjects=st.lists(st.sampled_from(MANY_GLOB_SUBJECTS) | st.text(alphabet="abx.é😀\n", max_size=12),
                         min_size=2, max_size=6))
def test_a_set_of_many_wildcard_globs_gives_equal_keys_exactly_to_subjects_every_glob_treats_alike(
        patterns, subjects):
    """Past 64 patterns with wildcards, a subject is tried only against the patterns filed under
    pieces of it (and those without a literal): keys must still tell apart exactly what the
    patterns tell apart, line breaks and characters beyond the BMP included."""
    wild = [pattern for pattern in dict.fromkeys(patterns) if "*" in pattern or "?" in pattern]
    if len(wild) <= 64:
        patterns = patterns + [f"*{number}?{pattern}" for number, pattern in enumerate(patterns)]
    key = compile_glob_set(patterns)
    answers = {subject: tuple(compile_glob(pattern)(subject) for pattern in patterns) for subject in subjects}
    for one in subjects:
        for other in subjects:
            assert (key(one) == key(other)) is (answers[one] == answers[other]), (one, other)


@settings(max_examples=examples(300), deadline=None)
@given(patterns=st.lists(st.lists(st.sampled_from(MANY_GLOB_SYMBOLS + ["**", "?*?", "\r", "\u2028"]), min_size=1,
                                  max_size=6).map("".join), min_size=1, max_size=64),
       subjects=st.lists(st.sampled_from(MANY_GLOB_SUBJECTS) | st.text(alphabet="abx.é😀\n\r\u2028", max_size=12),
                         min_size=2, max_size=6))
def test_a_set_of_up_to_64_wildcard_globs_gives_equal_keys_exactly_to_subjects_every_glob_treats_alike(
        patterns, subjects):
    """Up to 64 patterns with wildcards share one regular expression whose wildcards are `.`, which
    would take a line terminator: a subject holding one is tried pattern by pattern, and its key
    must still equal that of a subject without one that the same patterns match."""
    key = compile_glob_set(patterns)
    answers = {subject: tuple(compile_glob(pattern)(subject) for pattern in patterns) for subject in subjects}
    for one in subjects:
        for other in subjects:
            assert (key(one) == key(other)) is (answers[one] == answers[other]), (one, other)


def test_many_globs_with_long_literal_runs_keep_their_answers():
    """Patterns filed under a piece of a run longer than the piece: a subject holding the run
    finds them, whether its own pieces are looked up or each run is searched in it."""
    patterns = [f"*{number:03d}abcdefghijklm*" for number in range(100)]
    key = compile_glob_set(patterns)
    assert key("x007abcdefghijklmz") == key("007abcdefghijklm") != key("x008abcdefghijklmz")
    assert key("x007abcdefghijklmz") != key("zz") == key("007abcdefghijkl")
    long_subject = "y" * 2000 + "042abcdefghijklm"
    assert key(long_subject) == key("042abcdefghijklm") != key("y" * 2000)


def test_many_globs_in_one_set_keep_their_answers():
    patterns = [f"t.{number}*" for number in range(150)] + ["*x*y*"]
    key = compile_glob_set(patterns)
    assert key("t.1x.y") != key("t.1") != key("t.2")
    assert key("t.149") == key("t.1490")
    assert key("t.14") != key("t.149")
    assert compile_glob_set(["*"])("a") != compile_glob_set(["*"])("a\n")   # * takes no line break


def test_a_key_names_only_the_patterns_that_match_however_many_there_are():
    """A contract of ten thousand rules and a trace of as many tools: each tool's key holds what
    matched it, not an answer per pattern (the engine keeps up to 65,536 keys)."""
    key = compile_glob_set([f"t{number}" for number in range(10_000)] + ["t1*", "t?", "*x*y*"])
    assert max(len(key(subject)) for subject in ("t5", "t17", "t9999", "zz", "t1xy")) <= 5
    assert key("t5") != key("t6") != key("t1") and key("zz") == key("zy") and key("t17") != key("t18")
    assert key("t1xy") != key("t1x") != key("t2xy")


def test_a_new_tool_on_every_call_is_judged_as_each_rule_says():
    """3,000 calls, each of a tool never named before (more than the route cache keeps at once is
    covered by the benchmark); the expected counts are worked out here from the names alone."""
    calls = 3000
    trace: list[dict[str, Any]] = []
    for number in range(calls):
        tool = f"pay.{number}" if number % 3 == 0 else f"svc.{number}"
        trace.append({"seq": len(trace) + 1, "type": "tool.call", "tool": tool, "call_id": f"c{number}"})
        if number % 7:
            trace.append({"seq": len(trace) + 1, "type": "tool.result", "tool": tool, "call_id": f"c{number}",
                          "ok": True})
    document = contract(
        {"id": "no-pay-1", "kind": "deny_tool", "tool": "pay.1*"},
        {"id": "approved", "kind": "require_approval", "tool": "pay.*"},
        {"id": "answered", "kind": "tool_result_required", "tool": "svc.*"},
        {"id": "known", "kind": "allow_tools", "tools": ["svc.*", "pay.?", "pay.??"]},
        {"id": "once", "kind": "retry_limit", "max_attempts": 1, "group_by": "tool"},
    )
    report = check_trace(load_contract(document), trace, max_violations=0)
    tools = [event["tool"] for event in trace if event["type"] == "tool.call"]
    pays = [tool for tool in tools if tool.startswith("pay.")]
    counts = {result.rule_id: (result.checked, result.violation_count) for result in report.results}
    assert counts["no-pay-1"] == (len([t for t in pays if t.startswith("pay.1")]),) * 2
    assert counts["approved"] == (len(pays), len(pays))
    unanswered = [n for n in range(calls) if n % 3 and not n % 7]
    assert counts["answered"] == (calls - len(pays), len(unanswered))
    outside = [tool for tool in pays if not re.fullmatch(r"pay\.\d{1,2}", tool)]
    assert counts["known"] == (calls, len(outside))
    assert counts["once"] == (calls, 0)
    assert report.summary.tool_calls == calls and len(report.summary.tools) == calls


def reported_asking_every_rule(contract_: Any, trace: list[dict[str, Any]], **options: Any) -> bytes:
    """The JSON report of `check_trace` with every observer's `route_tools` and `route_types`
    taken away, so that `route` is asked for every tool and every type."""
    with pytest.MonkeyPatch.context() as patch:
        for owner in (Rule, SummaryCounter, TypeSpelling, *(type(rule_for(rule, 1000)) for rule in contract_.rules)):
            patch.setattr(owner, "route_tools", lambda self, event_type, claims: None, raising=False)
            patch.setattr(owner, "route_types", lambda self: None, raising=False)
        return msgspec.json.encode(check_trace(contract_, trace, **options))


class _AskedPerTool:
    """An observer without `route_tools`: it must be asked for every new tool, and see each call."""

    def __init__(self) -> None:
        self.asked: list[Any] = []
        self.seen: list[Any] = []

    def route(self, event_type: str, tool: Any, claims: Any) -> Any:
        self.asked.append((event_type, tool))
        return self._seen if event_type == "tool.call" and isinstance(tool, str) and tool.endswith("1") else None

    def _seen(self, event: Any, index: int) -> None:
        self.seen.append(index)


def test_an_observer_without_route_tools_is_asked_for_every_tool():
    from agent_invariants import EventList
    from agent_invariants.engine import run_observers

    tools = ["a1", "b2", "a1", "c1", "b2", "d3"]
    observer, counter = _AskedPerTool(), SummaryCounter()
    events = EventList([{"seq": n, "type": "tool.call", "tool": tool} for n, tool in enumerate(tools)])
    assert run_observers(events, [counter, observer]) == len(tools)
    assert observer.asked == [("tool.call", "a1"), ("tool.call", "b2"), ("tool.call", "c1"), ("tool.call", "d3")]
    assert observer.seen == [0, 2, 3]
    assert counter.tool_calls == len(tools)


@settings(max_examples=examples(75), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=contracts(), trace=traces(),
       renames=st.lists(st.sampled_from([name for name in TOOL_NAMES if name]), min_size=3, max_size=3))
def test_routing_by_classes_reports_exactly_what_asking_per_tool_does(document, trace, renames):
    """The same contract and trace, checked as the engine does and with every observer's
    `route_tools` and `route_types` taken away (so `route` is asked for every tool and type): the
    reports are equal."""
    names = dict(zip(["a.x", "a.y", "b.x"], renames, strict=True))
    trace = [{**event, "tool": names[event["tool"]]} if "tool" in event else event for event in trace]
    contract_ = load_contract(document)
    assert msgspec.json.encode(check_trace(contract_, trace)) == reported_asking_every_rule(contract_, trace)


def test_new_types_and_tools_on_every_event_report_as_asking_per_tool():
    """Types and tools never seen before on every event, a stop halfway (its rule then wants
    every event: the routes are forgotten), absent tools among them: the reports are those of
    the engine asking `route` for every tool."""
    trace: list[dict[str, Any]] = []
    for number in range(600):
        event: dict[str, Any] = {"seq": number, "type": f"t.{number % 7}" if number % 3 else f"new.{number}"}
        if number % 5:
            event["tool"] = f"k{number % 11}" if number % 2 else f"fresh.{number}"
        if number == 300:
            event = {"seq": number, "type": "control.stop"}
        trace.append(event)
    document = contract({"id": "d", "kind": "deny_event", "match": {"tool": "k1*"}},
                        {"id": "s", "kind": "stop_is_final", "allowed_after": ["t.1"]},
                        {"id": "a", "kind": "allow_tools", "tools": ["k*"]},
                        {"id": "o", "kind": "require_order", "before": {"type": "t.2", "tool": "k?"},
                         "after": {"type": "new.*"}})
    rules = load_contract(document)
    assert msgspec.json.encode(check_trace(rules, trace, max_violations=0)) == \
        reported_asking_every_rule(rules, trace, max_violations=0)


def test_a_call_without_a_tool_does_not_stand_for_the_calls_with_one():
    """No rule reads tool.call's tool, but the summary tells an absent tool from a present one:
    after a call with a tool and one without, a third call's tool is still listed."""
    trace = [{"seq": 1, "type": "tool.call", "tool": "a"}, {"seq": 2, "type": "tool.call"},
             {"seq": 3, "type": "tool.call", "tool": "b"}, {"seq": 4, "type": "tool.call", "tool": "c"}]
    report = check_trace(load_contract(contract({"id": "s", "kind": "stop_is_final"})), trace)
    assert (report.summary.tool_calls, report.summary.tools) == (4, ["a", "b", "c"])


def test_rules_that_each_name_one_tool_report_as_asking_every_rule_for_every_tool():
    """Rules whose globs are all literals are asked only for the tools they name, and answer for
    every other tool as for a tool none of them names (allow_tools then wants the call: a
    violation); among them, rules with wildcards and rules of no tool. Tools named and unnamed,
    new on many calls, with line breaks, beyond the BMP, absent; a stop halfway: the reports
    are those of the engine asking every rule for every tool."""
    named = ["t1", "t2", "t3", "t4", "é.5", "😀.6", "t1\n"]
    rules: list[dict[str, Any]] = [
        *({"id": f"deny-{n}", "kind": "deny_tool", "tool": tool} for n, tool in enumerate(named[:3])),
        {"id": "allow", "kind": "allow_tools", "tools": ["t1", "t3", "é.5", "t3"]},
        {"id": "allow-wild", "kind": "allow_tools", "tools": ["t*", "é.?"]},
        {"id": "event", "kind": "deny_event", "match": {"type": "tool.call", "tool": "t4"}},
        {"id": "cap", "kind": "tool_calls", "tool": "😀.6", "max": 1},
        {"id": "approved", "kind": "require_approval", "tool": "t2"},
        {"id": "answered", "kind": "tool_result_required", "tool": "t3"},
        {"id": "retries", "kind": "retry_limit", "tool": "t1\n", "max_attempts": 1, "group_by": "tool"},
        {"id": "args", "kind": "tool_args", "tool": "t4", "match": {"n": {"$lt": 5}}},
        {"id": "first", "kind": "precedence", "before": {"type": "tool.call", "tool": "t1"},
         "after": {"type": "tool.call", "tool": "t2"}},
        {"id": "wild", "kind": "deny_tool", "tool": "x*"},
        {"id": "stop", "kind": "stop_is_final"},
    ]
    trace: list[dict[str, Any]] = []
    for number in range(900):
        tool = named[number % len(named)] if number % 3 else f"x{number}" if number % 2 else f"fresh.{number}"
        call: dict[str, Any] = {"seq": len(trace) + 1, "type": "tool.call", "call_id": f"c{number}",
                                "args": {"n": number % 9}}
        if number % 11:
            call["tool"] = tool
        trace.append(call)
        if number % 4:
            trace.append({"seq": len(trace) + 1, "type": "tool.result", "call_id": f"c{number}", "ok": True,
                          **({"tool": tool} if number % 11 else {})})
        if number == 450:
            trace.append({"seq": len(trace) + 1, "type": "control.stop"})
    document = {"version": 2, "name": "literals", "rules": rules}
    loaded = load_contract(document)
    assert msgspec.json.encode(check_trace(loaded, trace, max_violations=0)) == \
        reported_asking_every_rule(loaded, trace, max_violations=0)
    results = {result.rule_id: result for result in check_trace(loaded, trace, max_violations=0).results}
    assert results["deny-0"].violation_count == results["deny-1"].violation_count > 0
    assert results["allow"].violation_count > 0 and results["event"].violation_count > 0


def test_rules_that_each_judge_one_type_report_as_asking_every_rule_for_every_type():
    """Rules on types of their own (literal and glob, alone and in pairs), on a trace naming a
    new type on most events: only the rules whose type globs match a type are asked about it,
    and the reports are those of the engine asking every rule about every type."""
    rules: list[dict[str, Any]] = [
        *({"id": f"deny-{n}", "kind": "deny_event", "match": {"type": f"x.{n}"}} for n in range(0, 300, 7)),
        *({"id": f"need-{n}", "kind": "require_event", "match": {"type": f"x.{n}*"}, "min": 1} for n in range(5)),
        {"id": "order", "kind": "require_order", "before": {"type": "x.299"}, "after": {"type": "x.2?"}},
        {"id": "any", "kind": "deny_event", "match": {"tool": "t"}},
        {"id": "tools", "kind": "deny_tool", "tool": "t"},
        {"id": "stop", "kind": "stop_is_final"},
    ]
    trace = [{"seq": number + 1, "type": "tool.call" if number % 5 == 0 else f"x.{number % 300}",
              **({"tool": "t"} if number % 3 == 0 else {})} for number in range(900)]
    trace[450] = {"seq": 451, "type": "control.stop"}
    loaded = load_contract({"version": 1, "name": "types", "rules": rules})
    assert msgspec.json.encode(check_trace(loaded, trace, max_violations=0)) == \
        reported_asking_every_rule(loaded, trace, max_violations=0)
    results = {result.rule_id: result for result in check_trace(loaded, trace, max_violations=0).results}
    assert results["deny-7"].violation_count == 3 and results["order"].violation_count > 0
