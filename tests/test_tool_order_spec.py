"""`tool_order`, tested from the spec's words (spec v2 §0, §3.2 and §10 points 1-7 and 18, with the
decisions of issue 18 for what the spec leaves open) through the CLI on real files: the §3.2 example
in its FAIL and PASS variants, each mode with failing and passing traces, where an `exact` deviation
sits, maximum matching in `any_order`, tool-less calls, `checked`, the never-vacuous rule, duplicate
patterns, and the load errors (each one stderr line naming the contract file and the JSON path of
the mistake, exit 2). A property test compares `any_order` with a brute-force maximum matching.

Expected values are derived from the spec text, not from running the implementation."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from itertools import combinations
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from agent_invariants import check_trace

from support import at, examples, refused_line, under, write_contract, write_trace

ABSENT: Any = object()


# -- helpers --------------------------------------------------------------------------------------

def call(tool: Any = ABSENT, **extra: Any) -> dict[str, Any]:
    """A `tool.call`; `tool` left out when ABSENT."""
    event: dict[str, Any] = {"type": "tool.call"}
    if tool is not ABSENT:
        event["tool"] = tool
    return {**event, **extra}


def calls(*tools: str) -> list[dict[str, Any]]:
    return [call(tool) for tool in tools]


def rule(*tools: str, **fields: Any) -> dict[str, Any]:
    return {"id": "r", "kind": "tool_order", "tools": list(tools), **fields}


@dataclass
class Run:
    exit: int
    report: dict[str, Any]

    @property
    def result(self) -> dict[str, Any]:
        return self.report["results"][0]

    @property
    def violations(self) -> list[dict[str, Any]]:
        return self.result["violations"]

    def brief(self) -> list[tuple[Any, ...]]:
        """(code, status, event_seq, event_index) per violation; None where absent."""
        return [(v["code"], v["status"], v.get("event_seq"), v.get("event_index")) for v in self.violations]

    def single(self, code: str) -> dict[str, Any]:
        """The one violation, of `tool_order.<code>`, with status fail."""
        assert [(v["code"], v["status"]) for v in self.violations] == [(f"tool_order.{code}", "fail")], self.brief()
        assert self.exit == 1 and self.result["passed"] is False
        return self.violations[0]


@pytest.fixture
def run(cli, tmp_path):
    """run(rule, *events) -> Run, from `check --format json`."""
    def _run(the_rule: dict[str, Any], *events: Any, version: int = 2) -> Run:
        write_contract(tmp_path, [the_rule], version)
        write_trace(tmp_path, events)
        result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
        assert result.returncode in (0, 1), result.stderr
        return Run(result.returncode, json.loads(result.stdout))
    return _run


@pytest.fixture
def refused(cli, tmp_path):
    """refused(rule, version=2) -> the one stderr line of a refused contract (exit 2, no stdout)."""
    def _refused(the_rule: dict[str, Any], version: int = 2) -> str:
        write_contract(tmp_path, [the_rule], version)
        write_trace(tmp_path, (call("a"),))
        return refused_line(cli)
    return _refused



def passes(out: Run, checked: int) -> None:
    assert (out.exit, out.result["passed"], out.violations) == (0, True, []), out.brief()
    assert out.result["checked"] == checked
    assert "vacuous" not in out.result


def evidence(mode: str, tools: list[str], matched: list[tuple[str, int]], missing: list[str],
             first_deviation_seq: int | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {"mode": mode, "tools": tools,
                            "matched": [{"pattern": pattern, "seq": seq} for pattern, seq in matched],
                            "missing": missing}
    if first_deviation_seq is not None:
        data["first_deviation_seq"] = first_deviation_seq
    return data


def missing(out: Run, mode: str, tools: list[str], matched: list[tuple[str, int]], absent: list[str]) -> None:
    """One `tool_order.missing` violation, without a seq, with exactly this evidence."""
    violation = out.single("missing")
    assert "event_seq" not in violation and "event_index" not in violation
    assert violation["evidence"] == evidence(mode, tools, matched, absent)


def deviation(out: Run, tools: list[str], matched: list[tuple[str, int]], absent: list[str],
              seq: int | None) -> None:
    """One `tool_order.deviation` violation at `seq` (seq = position + 1), or without a seq when None."""
    violation = out.single("deviation")
    if seq is None:
        assert "event_seq" not in violation and "event_index" not in violation
    else:
        assert (violation["event_seq"], violation["event_index"]) == (seq, seq - 1)
    assert violation["evidence"] == evidence("exact", tools, matched, absent, seq)


# -- §3.2: the example ----------------------------------------------------------------------------

EXAMPLE_RULE = {"id": "flow", "kind": "tool_order", "tools": ["auth.*", "get", "refund"]}


def test_example_fails_with_refund_missing(run):
    out = run(EXAMPLE_RULE, *calls("auth.login", "refund", "get"))
    missing(out, "subsequence", ["auth.*", "get", "refund"], [("auth.*", 1), ("get", 3)], ["refund"])
    violation = out.violations[0]
    assert (violation["rule_id"], violation["rule_kind"], violation["severity"]) == ("flow", "tool_order", "error")
    assert violation["message"]
    assert "related_seqs" not in violation and "pointer" not in violation
    assert (out.result["rule_id"], out.result["rule_kind"], out.result["checked"]) == ("flow", "tool_order", 3)
    assert "vacuous" not in out.result
    assert (out.report["passed"], out.report["error_count"], out.report["warning_count"]) == (False, 1, 0)
    assert out.report["violations"] == out.violations


def test_example_passes_with_auth_get_notify_refund(run):
    out = run(EXAMPLE_RULE, *calls("auth.login", "get", "notify", "refund"))
    passes(out, 4)
    assert (out.report["passed"], out.report["error_count"]) == (True, 0)


def test_a_warning_rule_fails_with_a_warning(run):
    out = run({**EXAMPLE_RULE, "severity": "warning"}, *calls("refund"))
    (violation,) = out.violations
    assert (out.exit, out.result["passed"], violation["severity"], violation["code"], violation["status"]) == (
        0, False, "warning", "tool_order.missing", "fail")
    assert (out.report["error_count"], out.report["warning_count"]) == (0, 1)


# -- S: every tool.call, in order -----------------------------------------------------------------

def test_checked_is_the_number_of_tool_calls_whatever_their_tool(run):
    out = run(rule("a", "b"), call("a", call_id="1"), {"type": "tool.result", "call_id": "1", "ok": True},
              {"type": "message"}, call("zzz"), call(), call("b"), {"type": "run.completed"})
    passes(out, 4)


def test_a_tool_result_is_not_a_call_even_with_a_matching_tool(run):
    out = run(rule("a", "b"), call("a", call_id="1"), {"type": "tool.result", "call_id": "1", "tool": "b", "ok": True})
    missing(out, "subsequence", ["a", "b"], [("a", 1)], ["b"])
    assert out.result["checked"] == 1


def test_matched_seqs_are_the_events_seqs(run):
    out = run(rule("a", "b", "c"), call("a", seq=10), {"seq": 20, "type": "message"}, call("b", seq=30))
    missing(out, "subsequence", ["a", "b", "c"], [("a", 10), ("b", 30)], ["c"])


def test_a_call_without_tool_matches_not_even_a_star(run):
    out = run(rule("*"), call(), {"type": "tool.result", "tool": "x"})
    missing(out, "subsequence", ["*"], [], ["*"])
    assert out.result["checked"] == 1


def test_patterns_are_globs_with_only_star_and_question_mark(run):
    passes(run(rule("a?c", "d*", "x.y"), *calls("abc", "d", "x.y")), 3)
    out = run(rule("a?c", "x.y"), *calls("ac", "abc", "xzy"))
    missing(out, "subsequence", ["a?c", "x.y"], [("a?c", 2)], ["x.y"])


# -- never vacuous (point 4) ----------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["subsequence", "contiguous", "any_order"])
def test_no_calls_is_a_missing_violation_with_every_pattern_missing(run, mode):
    out = run(rule("a", "b*", "a", mode=mode), {"type": "message"}, {"type": "run.completed"})
    missing(out, mode, ["a", "b*", "a"], [], ["a", "b*", "a"])
    assert out.result["checked"] == 0 and "vacuous" not in out.result


def test_no_calls_in_exact_mode_is_a_deviation_without_seq(run):
    out = run(rule("a", "b", mode="exact"), {"type": "run.completed"})
    deviation(out, ["a", "b"], [], ["a", "b"], None)
    assert out.result["checked"] == 0 and "vacuous" not in out.result


def test_an_empty_trace_fails(run):
    out = run(rule("a"))
    missing(out, "subsequence", ["a"], [], ["a"])
    assert out.result["checked"] == 0


# -- subsequence (default) ------------------------------------------------------------------------

def test_subsequence_is_the_default_and_allows_gaps(run):
    passes(run(rule("a", "b", "c"), *calls("x", "a", "y", "b", "b", "z", "c", "a")), 8)


def test_subsequence_named_explicitly_passes_the_same(run):
    passes(run(rule("a", "b", mode="subsequence"), *calls("a", "x", "b")), 3)


def test_subsequence_needs_the_order(run):
    out = run(rule("a", "b", mode="subsequence"), *calls("b", "a"))
    missing(out, "subsequence", ["a", "b"], [("a", 2)], ["b"])


def test_subsequence_matches_greedy_leftmost(run):
    out = run(rule("a", "b", "a"), *calls("a", "a", "b", "x"))
    missing(out, "subsequence", ["a", "b", "a"], [("a", 1), ("b", 3)], ["a"])


def test_subsequence_missing_is_the_rest_of_the_patterns_after_the_first_unmatched(run):
    out = run(rule("x", "a"), *calls("a"))
    missing(out, "subsequence", ["x", "a"], [], ["x", "a"])


def test_subsequence_uses_each_call_once(run):
    out = run(rule("a*", "ab"), *calls("ab"))
    missing(out, "subsequence", ["a*", "ab"], [("a*", 1)], ["ab"])


# -- exact (point 18) -----------------------------------------------------------------------------

def test_exact_passes_when_every_position_matches(run):
    passes(run(rule("a", "b*", "?", mode="exact"), call("a", call_id="1"),
               {"type": "tool.result", "call_id": "1", "ok": True}, call("bee"), call("z")), 3)


def test_exact_deviation_is_at_the_first_mismatching_call(run):
    out = run(rule("a", "b", "c", mode="exact"), *calls("a", "x", "c"))
    deviation(out, ["a", "b", "c"], [("a", 1)], ["b", "c"], 2)


def test_exact_deviation_at_the_first_position(run):
    out = run(rule("a", "b", mode="exact"), *calls("b", "a"))
    deviation(out, ["a", "b"], [], ["a", "b"], 1)


def test_exact_deviation_seq_skips_other_events(run):
    out = run(rule("a", "b", mode="exact"), call("a"), {"type": "message"}, {"type": "message"}, call("c"))
    deviation(out, ["a", "b"], [("a", 1)], ["b"], 4)


def test_exact_extra_call_beyond_the_patterns_is_the_deviation(run):
    out = run(rule("a", "b", mode="exact"), *calls("a", "b", "c", "d"))
    deviation(out, ["a", "b"], [("a", 1), ("b", 2)], [], 3)


def test_exact_extra_call_matching_a_pattern_still_deviates(run):
    out = run(rule("a", mode="exact"), *calls("a", "a"))
    deviation(out, ["a"], [("a", 1)], [], 2)


def test_exact_calls_running_out_is_a_deviation_without_seq(run):
    out = run(rule("a", "b", "c", mode="exact"), *calls("a", "b"), {"type": "run.completed"})
    deviation(out, ["a", "b", "c"], [("a", 1), ("b", 2)], ["c"], None)


def test_exact_mismatch_comes_before_running_out(run):
    out = run(rule("a", "b", "c", mode="exact"), *calls("a", "x"))
    deviation(out, ["a", "b", "c"], [("a", 1)], ["b", "c"], 2)


def test_exact_a_call_without_tool_deviates(run):
    out = run(rule("a", "*", mode="exact"), call("a"), call())
    deviation(out, ["a", "*"], [("a", 1)], ["*"], 2)


def test_exact_an_extra_call_without_tool_deviates(run):
    out = run(rule("a", mode="exact"), call("a"), call())
    deviation(out, ["a"], [("a", 1)], [], 2)
    assert out.result["checked"] == 2


# -- contiguous -----------------------------------------------------------------------------------

def test_contiguous_passes_on_a_run_of_consecutive_calls(run):
    passes(run(rule("a", "b", mode="contiguous"), *calls("a", "x", "a", "b", "y")), 5)


def test_contiguous_counts_only_calls_between_them(run):
    passes(run(rule("a", "b", mode="contiguous"), call("a", call_id="1"),
               {"type": "tool.result", "call_id": "1", "ok": True}, {"type": "message"}, call("b")), 2)


def test_contiguous_fails_on_a_gap_that_subsequence_allows(run):
    out = run(rule("a", "b", mode="contiguous"), *calls("a", "x", "b"))
    missing(out, "contiguous", ["a", "b"], [("a", 1)], ["b"])


def test_contiguous_reports_the_longest_matched_prefix(run):
    out = run(rule("a", "b", "c", mode="contiguous"), *calls("a", "x", "a", "b", "x", "c"))
    missing(out, "contiguous", ["a", "b", "c"], [("a", 3), ("b", 4)], ["c"])


def test_contiguous_reports_the_earliest_longest_run(run):
    out = run(rule("a", "b", "c", mode="contiguous"), *calls("x", "a", "b", "x", "a", "b", "x"))
    missing(out, "contiguous", ["a", "b", "c"], [("a", 2), ("b", 3)], ["c"])


def test_contiguous_a_call_without_tool_breaks_the_run(run):
    out = run(rule("a", "b", mode="contiguous"), call("a"), call(), call("b"))
    missing(out, "contiguous", ["a", "b"], [("a", 1)], ["b"])


def test_contiguous_with_no_first_pattern_matched(run):
    out = run(rule("a", "b", mode="contiguous"), *calls("b", "b"))
    missing(out, "contiguous", ["a", "b"], [], ["a", "b"])


# -- any_order ------------------------------------------------------------------------------------

def test_any_order_passes_in_any_order_with_extra_calls(run):
    passes(run(rule("b", "a", mode="any_order"), *calls("a", "x", "b", "a")), 4)


def test_any_order_uses_a_maximum_matching_not_a_greedy_one(run):
    passes(run(rule("a*", "ab", mode="any_order"), *calls("ab", "ac")), 2)


def test_any_order_maximum_matching_over_several_wildcards(run):
    passes(run(rule("a*", "*c", "ab", mode="any_order"), *calls("ab", "ac", "bc")), 3)


def test_any_order_reports_the_unique_maximum_matching_in_pattern_order(run):
    out = run(rule("a*", "ab", "b", mode="any_order"), *calls("ab", "ac"))
    missing(out, "any_order", ["a*", "ab", "b"], [("a*", 2), ("ab", 1)], ["b"])


def test_any_order_each_pattern_needs_a_distinct_call(run):
    out = run(rule("a", "a", mode="any_order"), *calls("a", "b"))
    missing(out, "any_order", ["a", "a"], [("a", 1)], ["a"])


def test_any_order_a_call_without_tool_matches_nothing(run):
    out = run(rule("*", "*", mode="any_order"), call(), call("q"), call())
    missing(out, "any_order", ["*", "*"], [("*", 2)], ["*"])
    assert out.result["checked"] == 3


# -- duplicate patterns ---------------------------------------------------------------------------

def test_duplicate_patterns_each_need_a_call_in_subsequence(run):
    passes(run(rule("a", "a"), *calls("a", "b", "a")), 3)
    out = run(rule("a", "a", "b"), *calls("a", "b"))
    missing(out, "subsequence", ["a", "a", "b"], [("a", 1)], ["a", "b"])


def test_duplicate_patterns_in_exact_mode(run):
    passes(run(rule("a", "a", mode="exact"), *calls("a", "a")), 2)
    out = run(rule("a", "a", mode="exact"), *calls("a"))
    deviation(out, ["a", "a"], [("a", 1)], ["a"], None)


def test_duplicate_patterns_in_contiguous_mode(run):
    passes(run(rule("a", "a", mode="contiguous"), *calls("a", "b", "a", "a")), 4)
    out = run(rule("a", "a", mode="contiguous"), *calls("a", "b", "a"))
    missing(out, "contiguous", ["a", "a"], [("a", 1)], ["a"])


def test_duplicate_patterns_in_any_order_mode(run):
    passes(run(rule("a", "b", "a", mode="any_order"), *calls("b", "a", "a")), 3)


def test_one_hundred_patterns_load(run):
    passes(run(rule(*(["t"] * 100), mode="exact"), *calls(*(["t"] * 100))), 100)


# -- load errors ----------------------------------------------------------------------------------

def test_empty_tools_is_refused(refused):
    assert at(refused(rule()), "$.rules[0].tools")


def test_more_than_100_tools_is_refused(refused):
    assert at(refused(rule(*(["t"] * 101))), "$.rules[0].tools")


def test_missing_tools_is_refused(refused):
    line = refused({"id": "r", "kind": "tool_order"})
    assert under(line, "$.rules[0]") and "tools" in line


def test_an_empty_pattern_is_refused(refused):
    assert at(refused(rule("a", "")), "$.rules[0].tools[1]")


def test_tools_that_are_not_a_list_is_refused(refused):
    assert at(refused({"id": "r", "kind": "tool_order", "tools": "a"}), "$.rules[0].tools")


@pytest.mark.parametrize("mode", ["strict", 1])
def test_an_unknown_mode_is_refused(refused, mode):
    assert at(refused(rule("a", mode=mode)), "$.rules[0].mode")


def test_an_unknown_field_is_refused(refused):
    assert at(refused(rule("a", order="exact")), "$.rules[0].order")


def test_tool_order_in_a_version_1_contract_needs_version_2(refused):
    line = refused(rule("a"), version=1)
    assert 'needs "version": 2' in line and under(line, "$.rules[0]")


# -- property: any_order is a maximum bipartite matching -------------------------------------------

GLOBS = ["a*", "ab", "*c", "?b", "b"]
TOOLS = ["ab", "ac", "b", "cb", "abc"]


def glob(pattern: str, tool: str | None) -> bool:
    """v1's glob: only `*` and `?` are special, anchored at both ends; a missing tool never matches."""
    if tool is None:
        return False
    regex = "".join(".*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in pattern)
    return re.fullmatch(regex, tool) is not None


def maximum_matching(patterns: tuple[str, ...], tools: tuple[str | None, ...]) -> int:
    """The size of a maximum matching, by trying every injective assignment (or none) per pattern."""
    @cache
    def best(i: int, used: frozenset[int]) -> int:
        if i == len(patterns):
            return 0
        options = [best(i + 1, used)]
        options += [1 + best(i + 1, used | {j}) for j, tool in enumerate(tools)
                    if j not in used and glob(patterns[i], tool)]
        return max(options)
    return best(0, frozenset())


def splits_into(patterns: list[str], matched: list[str], absent: list[str]) -> bool:
    """`matched` and `absent` are complementary subsequences of `patterns`."""
    for chosen in combinations(range(len(patterns)), len(matched)):
        if ([patterns[i] for i in chosen] == matched
                and [patterns[i] for i in range(len(patterns)) if i not in chosen] == absent):
            return True
    return False


# each call: its tool (None: a call without `tool`) and whether a `message` event comes before it
trace_items = st.lists(st.tuples(st.sampled_from([*TOOLS, None]), st.booleans()), max_size=7)


@pytest.mark.slow
@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(patterns=st.lists(st.sampled_from(GLOBS), min_size=1, max_size=5), items=trace_items)
def test_any_order_agrees_with_a_brute_force_maximum_matching(patterns, items):
    trace: list[dict[str, Any]] = []
    call_tools: dict[int, str | None] = {}
    for tool, message_first in items:
        if message_first:
            trace.append({"seq": 2 * len(trace) + 5, "type": "message"})
        seq = 2 * len(trace) + 5                      # seqs that are not positions
        call_tools[seq] = tool
        trace.append({"seq": seq, "type": "tool.call", **({} if tool is None else {"tool": tool})})
    document = {"version": 2, "name": "p", "rules": [rule(*patterns, mode="any_order")]}
    report = msgspec.to_builtins(check_trace(document, trace))
    (result,) = report["results"]
    size = maximum_matching(tuple(patterns), tuple(call_tools.values()))

    event("passes" if size == len(patterns) else "fails")
    assert result["checked"] == len(call_tools)
    assert result["passed"] is (size == len(patterns))
    if size == len(patterns):
        assert result["violations"] == []
        return
    (violation,) = result["violations"]
    assert (violation["code"], violation["status"]) == ("tool_order.missing", "fail")
    assert "event_seq" not in violation
    found = violation["evidence"]
    assert (found["mode"], found["tools"]) == ("any_order", patterns)
    assert "first_deviation_seq" not in found
    pairs = [(entry["pattern"], entry["seq"]) for entry in found["matched"]]
    assert len(pairs) == size and len(found["missing"]) == len(patterns) - size
    seqs = [seq for _, seq in pairs]
    assert len(set(seqs)) == len(seqs)
    assert all(seq in call_tools and glob(pattern, call_tools[seq]) for pattern, seq in pairs)
    assert splits_into(patterns, [pattern for pattern, _ in pairs], found["missing"])
