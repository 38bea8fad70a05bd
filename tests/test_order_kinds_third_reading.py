"""A third reading of spec v2 §3.2-§3.6 (tool_order, precedence, tool_calls, approval_bound, budgets)
with the binding §10 points, aimed at the corners: repeated and missing call_ids, orphan results,
denied calls, windows of exactly N, equal and missing times, percentiles on tiny samples, revoked
then re-granted approvals, `--partial`, and the FAIL/PASS variants of every example.

Each test runs the real CLI (`check --format json --no-lint`) and compares exact codes, statuses,
seqs, evidence, order, `checked` and `vacuous`.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support import write_contract, write_trace

Event = dict[str, Any]
Rule = dict[str, Any]


def check(tmp_path: Path, cli: Any, rules: list[Rule], trace: list[Event], *options: str) -> dict[str, Any]:
    """Write `rules` and `trace`, run `check` (JSON, no lint) and return the report plus its `rc`."""
    write_contract(tmp_path, rules)
    write_trace(tmp_path, trace)
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json", "--no-lint", *options)
    assert result.returncode in (0, 1), result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    report["rc"] = result.returncode
    return report


def brief(report: dict[str, Any], rule_id: str) -> list[tuple[str, str, int | None]]:
    """(code, status, event_seq) of one rule's violations, in report order."""
    return [(v["code"], v["status"], v.get("event_seq")) for v in result_of(report, rule_id)["violations"]]


def result_of(report: dict[str, Any], rule_id: str) -> dict[str, Any]:
    return next(r for r in report["results"] if r["rule_id"] == rule_id)


def evidence(report: dict[str, Any], rule_id: str, index: int = 0) -> dict[str, Any]:
    found: dict[str, Any] = result_of(report, rule_id)["violations"][index]["evidence"]
    return found


def refused(tmp_path: Path, cli: Any, rules: list[Rule]) -> None:
    """The contract is a load error: exit 2, nothing on stdout."""
    write_contract(tmp_path, rules)
    write_trace(tmp_path, [{"type": "run.completed"}])
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json", "--no-lint")
    assert (result.returncode, result.stdout) == (2, ""), result.stdout
    assert "Traceback" not in result.stderr


def call(tool: str | None, call_id: str | None = None, **fields: Any) -> Event:
    event: Event = {"type": "tool.call", **fields}
    if tool is not None:
        event["tool"] = tool
    if call_id is not None:
        event["call_id"] = call_id
    return event


def res(call_id: str | None, ok: bool = True, **fields: Any) -> Event:
    event: Event = {"type": "tool.result", "ok": ok, **fields}
    if call_id is not None:
        event["call_id"] = call_id
    return event


def calls(*tools: str) -> list[Event]:
    return [call(tool, f"c{i}") for i, tool in enumerate(tools, 1)]


def t(seconds: float) -> str:
    """An ISO time `seconds` after 2026-01-01T10:00:00Z (millisecond precision)."""
    whole = int(seconds)
    millis = round((seconds - whole) * 1000)
    minutes, secs = divmod(whole, 60)
    return f"2026-01-01T10:{minutes:02d}:{secs:02d}.{millis:03d}Z"


# ---------------------------------------------------------------- §3.2 tool_order

FLOW: Rule = {"id": "flow", "kind": "tool_order", "tools": ["auth.*", "get", "refund"]}


def test_tool_order_example_fail(tmp_path: Path, cli: Any) -> None:
    """§3.2 example FAIL: auth.login, refund, get → matched [{auth.*,1},{get,3}], missing ["refund"];
    point 1: code tool_order.missing; point 2: no seq; point 4: checked = number of calls."""
    report = check(tmp_path, cli, [FLOW], calls("auth.login", "refund", "get"))
    assert brief(report, "flow") == [("tool_order.missing", "fail", None)]
    assert evidence(report, "flow") == {
        "mode": "subsequence", "tools": ["auth.*", "get", "refund"],
        "matched": [{"pattern": "auth.*", "seq": 1}, {"pattern": "get", "seq": 3}], "missing": ["refund"]}
    assert result_of(report, "flow")["checked"] == 3
    assert report["rc"] == 1


def test_tool_order_example_pass(tmp_path: Path, cli: Any) -> None:
    """§3.2 example PASS: calls auth.login, get, notify, refund."""
    report = check(tmp_path, cli, [FLOW], calls("auth.login", "get", "notify", "refund"))
    assert brief(report, "flow") == []
    assert report["rc"] == 0


def test_tool_order_without_calls_is_not_vacuous(tmp_path: Path, cli: Any) -> None:
    """Point 4: tool_order is trace-level, never vacuous; checked = number of calls (0)."""
    report = check(tmp_path, cli, [FLOW], [{"type": "run.completed"}])
    rule = result_of(report, "flow")
    assert (rule["checked"], rule.get("vacuous", False)) == (0, False)
    assert brief(report, "flow") == [("tool_order.missing", "fail", None)]
    assert evidence(report, "flow")["matched"] == []


def test_tool_order_results_are_not_calls(tmp_path: Path, cli: Any) -> None:
    """§3.2: evaluated over S, all calls in order; a result of `get` (paired) is not a call."""
    rule: Rule = {"id": "o", "kind": "tool_order", "tools": ["get", "get"]}
    report = check(tmp_path, cli, [rule], [call("get", "c1"), res("c1")])
    assert brief(report, "o") == [("tool_order.missing", "fail", None)]
    assert evidence(report, "o")["missing"] == ["get"]


def test_tool_order_call_without_tool_matches_nothing(tmp_path: Path, cli: Any) -> None:
    """§3.2: a call without a tool matches nothing, not even `*`."""
    rule: Rule = {"id": "o", "kind": "tool_order", "tools": ["*"]}
    report = check(tmp_path, cli, [rule], [call(None, "c1")])
    assert brief(report, "o") == [("tool_order.missing", "fail", None)]
    assert result_of(report, "o")["checked"] == 1


def test_tool_order_exact_deviation_at_first_bad_call(tmp_path: Path, cli: Any) -> None:
    """§3.2 exact: at the first deviating call; evidence first_deviation_seq; point 1 code deviation."""
    rule: Rule = {"id": "o", "kind": "tool_order", "tools": ["a", "c"], "mode": "exact"}
    report = check(tmp_path, cli, [rule], calls("a", "b", "c"))
    assert brief(report, "o") == [("tool_order.deviation", "fail", 2)]
    found = evidence(report, "o")
    assert found["first_deviation_seq"] == 2
    assert (found["mode"], found["tools"]) == ("exact", ["a", "c"])


def test_tool_order_exact_extra_call_beyond_patterns(tmp_path: Path, cli: Any) -> None:
    """Point 18: a call beyond the patterns is the deviation (that call's seq)."""
    rule: Rule = {"id": "o", "kind": "tool_order", "tools": ["a"], "mode": "exact"}
    report = check(tmp_path, cli, [rule], calls("a", "b"))
    assert brief(report, "o") == [("tool_order.deviation", "fail", 2)]


def test_tool_order_exact_calls_run_out_has_no_seq(tmp_path: Path, cli: Any) -> None:
    """Point 18: if the calls run out first there is no seq."""
    rule: Rule = {"id": "o", "kind": "tool_order", "tools": ["a", "b"], "mode": "exact"}
    report = check(tmp_path, cli, [rule], calls("a"))
    assert brief(report, "o") == [("tool_order.deviation", "fail", None)]
    assert "first_deviation_seq" not in evidence(report, "o")


def test_tool_order_exact_toolless_call_deviates(tmp_path: Path, cli: Any) -> None:
    """§3.2 + point 18: a tool-less call matches no pattern, so it is the deviation in exact mode."""
    rule: Rule = {"id": "o", "kind": "tool_order", "tools": ["*"], "mode": "exact"}
    report = check(tmp_path, cli, [rule], [call(None, "c1")])
    assert brief(report, "o") == [("tool_order.deviation", "fail", 1)]


def test_tool_order_exact_pass(tmp_path: Path, cli: Any) -> None:
    """§3.2 exact: the same length, matched by position."""
    rule: Rule = {"id": "o", "kind": "tool_order", "tools": ["a", "b*"], "mode": "exact"}
    assert brief(check(tmp_path, cli, [rule], calls("a", "bx")), "o") == []


def test_tool_order_contiguous_gap_fails(tmp_path: Path, cli: Any) -> None:
    """§3.2 contiguous: some run of consecutive calls must match; a gap breaks it (code missing)."""
    rule: Rule = {"id": "o", "kind": "tool_order", "tools": ["a", "b"], "mode": "contiguous"}
    report = check(tmp_path, cli, [rule], calls("a", "x", "b"))
    assert brief(report, "o") == [("tool_order.missing", "fail", None)]
    assert len(evidence(report, "o")["matched"]) == 1  # point 18: largest partial matching


def test_tool_order_contiguous_pass_later_run(tmp_path: Path, cli: Any) -> None:
    """§3.2 contiguous: the run may start anywhere."""
    rule: Rule = {"id": "o", "kind": "tool_order", "tools": ["a", "b"], "mode": "contiguous"}
    assert brief(check(tmp_path, cli, [rule], calls("a", "x", "a", "b")), "o") == []


def test_tool_order_any_order_uses_maximum_matching(tmp_path: Path, cli: Any) -> None:
    """§3.2 any_order: maximum bipartite matching, never greedy: ["a*","ab"] with calls ab, ac passes."""
    rule: Rule = {"id": "o", "kind": "tool_order", "tools": ["a*", "ab"], "mode": "any_order"}
    assert brief(check(tmp_path, cli, [rule], calls("ab", "ac")), "o") == []


def test_tool_order_any_order_distinct_calls(tmp_path: Path, cli: Any) -> None:
    """§3.2 any_order: each pattern needs a distinct call; evidence matched is the largest matching."""
    rule: Rule = {"id": "o", "kind": "tool_order", "tools": ["a*", "ab"], "mode": "any_order"}
    report = check(tmp_path, cli, [rule], calls("x", "ab"))
    assert brief(report, "o") == [("tool_order.missing", "fail", None)]
    found = evidence(report, "o")
    assert len(found["matched"]) == 1 and len(found["missing"]) == 1


def test_tool_order_subsequence_reuses_no_call(tmp_path: Path, cli: Any) -> None:
    """§3.2 subsequence: in order, each call used once: [a, a] over one `a` call misses one `a`."""
    rule: Rule = {"id": "o", "kind": "tool_order", "tools": ["a", "a"]}
    report = check(tmp_path, cli, [rule], calls("a"))
    assert evidence(report, "o")["matched"] == [{"pattern": "a", "seq": 1}]
    assert evidence(report, "o")["missing"] == ["a"]


def test_tool_order_partial_is_inconclusive(tmp_path: Path, cli: Any) -> None:
    """§0 + point 82: tool_order is liveness; under --partial it is inconclusive and fails nothing."""
    report = check(tmp_path, cli, [FLOW], calls("auth.login"), "--partial")
    assert brief(report, "flow") == [("tool_order.missing", "inconclusive", None)]
    assert (report["error_count"], report["passed"], report["rc"]) == (0, True, 0)
    assert report["inconclusive_count"] == 1


# ---------------------------------------------------------------- §3.3 precedence

LOOKUP: Rule = {"id": "lookup-first", "kind": "precedence",
                "before": {"type": "tool.result", "tool": "get", "ok": True},
                "after": {"type": "tool.call", "tool": "refund"},
                "correlate": [{"before": "id", "after": "order"}]}


def example_precedence_trace() -> list[Event]:
    return [call("get", "c1", args={"id": "A1"}), res("c1"),
            call("refund", "c2", args={"order": "B2"}),
            call("get", "c3", args={"id": "B2"}), res("c3")]


def test_precedence_example_fail(tmp_path: Path, cli: Any) -> None:
    """§3.3 example FAIL: seq 3 late, key ["B2"], related_seqs [5]; evidence {before, after, scope, key}."""
    report = check(tmp_path, cli, [LOOKUP], example_precedence_trace())
    assert brief(report, "lookup-first") == [("precedence.late", "fail", 3)]
    violation = result_of(report, "lookup-first")["violations"][0]
    assert violation["related_seqs"] == [5]
    assert violation["evidence"] == {"before": LOOKUP["before"], "after": LOOKUP["after"],
                                     "scope": "each", "key": ["B2"]}
    assert result_of(report, "lookup-first")["checked"] == 1


def test_precedence_example_pass(tmp_path: Path, cli: Any) -> None:
    """§3.3 example PASS: the refund comes after seq 5."""
    trace = example_precedence_trace()
    trace.append(trace.pop(2))
    assert brief(check(tmp_path, cli, [LOOKUP], trace), "lookup-first") == []


def test_precedence_missing(tmp_path: Path, cli: Any) -> None:
    """§3.3 missing: no `before` in the group at all, at the after."""
    trace = [call("get", "c1", args={"id": "A1"}), res("c1"), call("refund", "c2", args={"order": "B2"})]
    report = check(tmp_path, cli, [LOOKUP], trace)
    assert brief(report, "lookup-first") == [("precedence.missing", "fail", 3)]
    assert "related_seqs" not in result_of(report, "lookup-first")["violations"][0]


def test_precedence_late_points_to_first_later_before(tmp_path: Path, cli: Any) -> None:
    """Point 19: late → related_seqs [first later before]."""
    rule: Rule = {"id": "p", "kind": "precedence", "before": {"type": "tool.call", "tool": "b"},
                  "after": {"type": "tool.call", "tool": "a"}}
    report = check(tmp_path, cli, [rule], calls("a", "b", "b"))
    assert brief(report, "p") == [("precedence.late", "fail", 1)]
    assert result_of(report, "p")["violations"][0]["related_seqs"] == [2]


def window_rule(n: int) -> Rule:
    return {"id": "w", "kind": "precedence", "before": {"type": "tool.call", "tool": "b"},
            "after": {"type": "tool.call", "tool": "a"}, "within_events": n}


def test_precedence_window_of_exactly_n_passes(tmp_path: Path, cli: Any) -> None:
    """Point 19: the window is by position, i − j ≤ within_events: a gap of exactly N passes."""
    assert brief(check(tmp_path, cli, [window_rule(2)], calls("b", "x", "a")), "w") == []


def test_precedence_window_of_n_plus_one_is_out_of_window(tmp_path: Path, cli: Any) -> None:
    """§3.3 out_of_window: the nearest earlier before is more than within_events back."""
    report = check(tmp_path, cli, [window_rule(2)], calls("b", "x", "y", "a"))
    assert brief(report, "w") == [("precedence.out_of_window", "fail", 4)]


def test_precedence_window_counts_positions_not_seq(tmp_path: Path, cli: Any) -> None:
    """Point 19: the window is by position, so seq gaps do not count."""
    trace = [{**call("b", "c1"), "seq": 10}, {**call("a", "c2"), "seq": 500}]
    assert brief(check(tmp_path, cli, [window_rule(1)], trace), "w") == []


def test_precedence_window_uses_nearest_before(tmp_path: Path, cli: Any) -> None:
    """Point 19: the nearest earlier before decides (an old one outside and a near one inside pass)."""
    assert brief(check(tmp_path, cli, [window_rule(1)], calls("b", "x", "b", "a")), "w") == []


def test_precedence_out_of_window_wins_over_late(tmp_path: Path, cli: Any) -> None:
    """Point 19: an earlier before (even out of the window) gives out_of_window, not late."""
    report = check(tmp_path, cli, [window_rule(1)], calls("b", "x", "a", "b"))
    assert brief(report, "w") == [("precedence.out_of_window", "fail", 3)]


def self_rule(scope: str = "each") -> Rule:
    matcher = {"type": "tool.call", "tool": "x"}
    return {"id": "s", "kind": "precedence", "before": matcher, "after": matcher, "scope": scope}


def test_precedence_event_is_not_its_own_predecessor(tmp_path: Path, cli: Any) -> None:
    """§3.3: an event matching both matchers is not its own predecessor: the first x has none,
    the second has the first as before, so the first is late (point 19)."""
    report = check(tmp_path, cli, [self_rule()], calls("x", "x"))
    assert brief(report, "s") == [("precedence.late", "fail", 1)]
    assert result_of(report, "s")["violations"][0]["related_seqs"] == [2]
    assert result_of(report, "s")["checked"] == 2


def test_precedence_single_self_matching_event_is_missing(tmp_path: Path, cli: Any) -> None:
    """§3.3: an event matching both matchers is not its own predecessor: alone, it is missing."""
    report = check(tmp_path, cli, [self_rule()], calls("x"))
    assert brief(report, "s") == [("precedence.missing", "fail", 1)]


def test_precedence_scope_first_checks_only_first_after(tmp_path: Path, cli: Any) -> None:
    """§3.3 first: only the group's first `after` is checked."""
    rule: Rule = {"id": "p", "kind": "precedence", "before": {"type": "tool.call", "tool": "b"},
                  "after": {"type": "tool.call", "tool": "a"}, "scope": "first"}
    report = check(tmp_path, cli, [rule], calls("a", "a", "x"))
    assert brief(report, "p") == [("precedence.missing", "fail", 1)]
    assert report["violations"][0]["evidence"]["scope"] == "first"


def test_precedence_scope_all_flags_before_after_action(tmp_path: Path, cli: Any) -> None:
    """§3.3 all: every before after the first after is before_after_action at that before."""
    rule: Rule = {"id": "p", "kind": "precedence", "before": {"type": "tool.call", "tool": "b"},
                  "after": {"type": "tool.call", "tool": "a"}, "scope": "all"}
    report = check(tmp_path, cli, [rule], calls("b", "a", "b", "b"))
    assert brief(report, "p") == [("precedence.before_after_action", "fail", 3),
                                  ("precedence.before_after_action", "fail", 4)]


def test_precedence_scope_all_late_and_before_after_action_in_seq_order(tmp_path: Path, cli: Any) -> None:
    """§3.3 all + point 5: a late after (at its seq) and the before after it (at its seq), ascending."""
    rule: Rule = {"id": "p", "kind": "precedence", "before": {"type": "tool.call", "tool": "b"},
                  "after": {"type": "tool.call", "tool": "a"}, "scope": "all"}
    report = check(tmp_path, cli, [rule], calls("a", "b"))
    assert brief(report, "p") == [("precedence.late", "fail", 1), ("precedence.before_after_action", "fail", 2)]


def test_precedence_scope_all_is_per_group(tmp_path: Path, cli: Any) -> None:
    """§3.3: per group; a before of key K2 after an after of key K1 is not flagged."""
    rule: Rule = {"id": "p", "kind": "precedence", "before": {"type": "tool.call", "tool": "b"},
                  "after": {"type": "tool.call", "tool": "a"}, "scope": "all", "correlate": ["k"]}
    trace = [call("b", "c1", args={"k": 1}), call("a", "c2", args={"k": 1}), call("b", "c3", args={"k": 2})]
    assert brief(check(tmp_path, cli, [rule], trace), "p") == []


def test_precedence_correlate_missing_is_unresolved(tmp_path: Path, cli: Any) -> None:
    """§3.3 correlate_missing: the after lacks a correlate path (unresolved, point 6), at the after."""
    rule: Rule = {**LOOKUP, "id": "p"}
    trace = [call("get", "c1", args={"id": "A1"}), res("c1"), call("refund", "c2", args={"other": 1})]
    report = check(tmp_path, cli, [rule], trace)
    assert brief(report, "p") == [("precedence.correlate_missing", "unresolved", 3)]
    assert report["error_count"] == 1


def test_precedence_correlate_missing_for_each_after_under_first(tmp_path: Path, cli: Any) -> None:
    """Point 19: under first, the first after *with a resolved key* is checked; correlate_missing is
    reported for every unkeyed after whatever the scope."""
    rule: Rule = {"id": "p", "kind": "precedence", "before": {"type": "tool.call", "tool": "b"},
                  "after": {"type": "tool.call", "tool": "a"}, "scope": "first", "correlate": ["k"]}
    trace = [call("a", "c1"), call("a", "c2", args={}), call("a", "c3", args={"k": 1}),
             call("a", "c4", args={"k": 1})]
    report = check(tmp_path, cli, [rule], trace)
    assert brief(report, "p") == [("precedence.correlate_missing", "unresolved", 1),
                                  ("precedence.correlate_missing", "unresolved", 2),
                                  ("precedence.missing", "fail", 3)]


def test_precedence_before_without_correlate_is_ignored(tmp_path: Path, cli: Any) -> None:
    """§3.3: a before that lacks a correlate path is ignored (so the after is missing)."""
    rule: Rule = {"id": "p", "kind": "precedence", "before": {"type": "tool.call", "tool": "b"},
                  "after": {"type": "tool.call", "tool": "a"}, "correlate": ["k"]}
    report = check(tmp_path, cli, [rule], [call("b", "c1", args={}), call("a", "c2", args={"k": 1})])
    assert brief(report, "p") == [("precedence.missing", "fail", 2)]


def test_precedence_key_is_json_type_strict(tmp_path: Path, cli: Any) -> None:
    """§2 equality + §3.3 canonical tuple: "1" and 1 are different keys; 1 and 1.0 the same."""
    rule: Rule = {"id": "p", "kind": "precedence", "before": {"type": "tool.call", "tool": "b"},
                  "after": {"type": "tool.call", "tool": "a"}, "correlate": ["k"]}
    trace = [call("b", "c1", args={"k": "1"}), call("a", "c2", args={"k": 1}),
             call("b", "c3", args={"k": 2.0}), call("a", "c4", args={"k": 2})]
    report = check(tmp_path, cli, [rule], trace)
    assert brief(report, "p") == [("precedence.missing", "fail", 2)]


def test_precedence_multi_path_key(tmp_path: Path, cli: Any) -> None:
    """§3.3: grouped by the canonical tuple of correlate values (two paths → both must agree)."""
    rule: Rule = {"id": "p", "kind": "precedence", "before": {"type": "tool.call", "tool": "b"},
                  "after": {"type": "tool.call", "tool": "a"}, "correlate": ["x", "y"]}
    trace = [call("b", "c1", args={"x": 1, "y": 2}), call("a", "c2", args={"x": 1, "y": 3})]
    report = check(tmp_path, cli, [rule], trace)
    assert brief(report, "p") == [("precedence.missing", "fail", 2)]
    assert evidence(report, "p")["key"] == [1, 3]


def test_precedence_repeated_call_id_pairs_with_nearest_open_call(tmp_path: Path, cli: Any) -> None:
    """Point 3: a result belongs to the nearest earlier call with its call_id that has no result yet.
    Calls c1(id A) and c1(id B); the first result is B's, so A's lookup result comes only at seq 5."""
    trace = [call("get", "c1", args={"id": "A"}), call("get", "c1", args={"id": "B"}), res("c1"),
             call("refund", "c9", args={"order": "A"}), res("c1")]
    report = check(tmp_path, cli, [LOOKUP], trace)
    assert brief(report, "lookup-first") == [("precedence.late", "fail", 4)]
    assert result_of(report, "lookup-first")["violations"][0]["related_seqs"] == [5]


def test_precedence_result_before_its_call_is_orphan(tmp_path: Path, cli: Any) -> None:
    """Point 3: a result with no earlier call is an orphan: it keeps only its own tool (none here)
    and has no args, so it is no before; the after is missing."""
    rule: Rule = {"id": "p", "kind": "precedence", "before": {"type": "tool.result", "tool": "get"},
                  "after": {"type": "tool.call", "tool": "refund"}}
    trace = [res("c1"), call("get", "c1"), call("refund", "c2")]
    assert brief(check(tmp_path, cli, [rule], trace), "p") == [("precedence.missing", "fail", 3)]


def test_precedence_orphan_result_keeps_its_own_tool(tmp_path: Path, cli: Any) -> None:
    """Point 3: an orphan result keeps its own `tool`, so it matches a before on that tool."""
    rule: Rule = {"id": "p", "kind": "precedence", "before": {"type": "tool.result", "tool": "get"},
                  "after": {"type": "tool.call", "tool": "refund"}}
    trace = [res("zz", tool="get"), call("refund", "c2")]
    assert brief(check(tmp_path, cli, [rule], trace), "p") == []


def test_precedence_paired_result_own_tool_is_ignored(tmp_path: Path, cli: Any) -> None:
    """Point 3: a paired result's own `tool` field is ignored by new kinds (it is its call's)."""
    rule: Rule = {"id": "p", "kind": "precedence", "before": {"type": "tool.result", "tool": "get"},
                  "after": {"type": "tool.call", "tool": "refund"}}
    trace = [call("other", "c1"), res("c1", tool="get"), call("refund", "c2")]
    assert brief(check(tmp_path, cli, [rule], trace), "p") == [("precedence.missing", "fail", 3)]


def test_precedence_failed_lookup_is_no_before(tmp_path: Path, cli: Any) -> None:
    """§2: `{type: tool.result, tool: get, ok: true}` means "a successful get"; an ok:false is not."""
    trace = [call("get", "c1", args={"id": "B2"}), res("c1", ok=False), call("refund", "c2", args={"order": "B2"})]
    report = check(tmp_path, cli, [LOOKUP], trace)
    assert brief(report, "lookup-first") == [("precedence.missing", "fail", 3)]


def test_precedence_without_afters_is_vacuous(tmp_path: Path, cli: Any) -> None:
    """Point 4: precedence is per-event (afters): none → checked 0, vacuous true, passes."""
    report = check(tmp_path, cli, [LOOKUP], calls("get"))
    rule = result_of(report, "lookup-first")
    assert (rule["checked"], rule.get("vacuous"), rule["passed"]) == (0, True, True)


def test_precedence_partial_is_still_judged(tmp_path: Path, cli: Any) -> None:
    """§3.3 precedence is safety: --partial reports it as fail, counted in error_count."""
    trace = [call("refund", "c2", args={"order": "B2"})]
    report = check(tmp_path, cli, [LOOKUP], trace, "--partial")
    assert brief(report, "lookup-first") == [("precedence.missing", "fail", 1)]
    assert (report["error_count"], report["rc"]) == (1, 1)


def test_precedence_window_out_of_range_is_refused(tmp_path: Path, cli: Any) -> None:
    """§3.3 within_events: 1..100k."""
    refused(tmp_path, cli, [window_rule(0)])


def test_precedence_bad_scope_is_refused(tmp_path: Path, cli: Any) -> None:
    """§3.3 scope: each, first or all."""
    refused(tmp_path, cli, [{**window_rule(1), "scope": "some"}])


def test_precedence_too_many_correlate_paths_is_refused(tmp_path: Path, cli: Any) -> None:
    """§3.3 / point 19: correlate is a list of 1..10 items."""
    refused(tmp_path, cli, [{**window_rule(1), "correlate": [f"p{i}" for i in range(11)]}])


# ---------------------------------------------------------------- §3.4 tool_calls

REFUNDS_MATCH: Rule = {"id": "refunds-match", "kind": "tool_calls", "tool": "refund", "count": "successful",
                       "matches_output_length": "refunds"}


def refunds_trace(second_ok: bool) -> list[Event]:
    return [call("refund", "c1", args={"order": "A1"}), res("c1"),
            call("refund", "c2", args={"order": "A2"}), res("c2", ok=second_ok),
            {"type": "run.completed", "output": {"refunds": ["A1", "A2"]}}]


def test_tool_calls_example_fail(tmp_path: Path, cli: Any) -> None:
    """§3.4 example FAIL: seq 5 output_mismatch (count 1, length 2); evidence fields per §3.4."""
    report = check(tmp_path, cli, [REFUNDS_MATCH], refunds_trace(False))
    assert brief(report, "refunds-match") == [("tool_calls.output_mismatch", "fail", 5)]
    assert evidence(report, "refunds-match") == {"tool": "refund", "count": 1, "count_mode": "successful",
                                                 "path": "refunds", "output_length": 2}
    assert result_of(report, "refunds-match")["checked"] == 1


def test_tool_calls_example_pass(tmp_path: Path, cli: Any) -> None:
    """§3.4 example PASS: seq 4 ok:true."""
    report = check(tmp_path, cli, [REFUNDS_MATCH], refunds_trace(True))
    assert brief(report, "refunds-match") == []
    assert result_of(report, "refunds-match")["checked"] == 2


def test_tool_calls_max_at_the_next_call_only(tmp_path: Path, cli: Any) -> None:
    """§3.4 max: at the (max+1)-th call (one violation); point 4: checked = counted calls."""
    rule: Rule = {"id": "m", "kind": "tool_calls", "tool": "x", "max": 1}
    report = check(tmp_path, cli, [rule], calls("x", "y", "x", "x"))
    assert brief(report, "m") == [("tool_calls.max", "fail", 3)]
    assert evidence(report, "m") == {"tool": "x", "count": 3, "count_mode": "calls", "max": 1}
    assert result_of(report, "m")["checked"] == 3


def test_tool_calls_max_zero_alone_is_valid(tmp_path: Path, cli: Any) -> None:
    """Point 20: no default min; `max: 0` alone is valid; the first call is the violation."""
    rule: Rule = {"id": "m", "kind": "tool_calls", "tool": "x", "max": 0}
    assert brief(check(tmp_path, cli, [rule], calls("x")), "m") == [("tool_calls.max", "fail", 1)]


def test_tool_calls_max_zero_without_calls_passes_not_vacuous(tmp_path: Path, cli: Any) -> None:
    """Point 20: no default min, so zero calls pass; point 4: tool_calls is never vacuous."""
    rule: Rule = {"id": "m", "kind": "tool_calls", "tool": "x", "max": 0}
    found = result_of(check(tmp_path, cli, [rule], calls("y")), "m")
    assert (found["passed"], found["checked"], found.get("vacuous", False)) == (True, 0, False)


def test_tool_calls_min_has_no_seq(tmp_path: Path, cli: Any) -> None:
    """§3.4 min: no seq."""
    rule: Rule = {"id": "m", "kind": "tool_calls", "tool": "x", "min": 2}
    report = check(tmp_path, cli, [rule], calls("x"))
    assert brief(report, "m") == [("tool_calls.min", "fail", None)]
    assert evidence(report, "m") == {"tool": "x", "count": 1, "count_mode": "calls", "min": 2}


def test_tool_calls_max_with_successful_sits_at_the_call(tmp_path: Path, cli: Any) -> None:
    """Point 20: with successful, max sits at the (max+1)-th counted call, not its result."""
    rule: Rule = {"id": "m", "kind": "tool_calls", "tool": "x", "max": 1, "count": "successful"}
    trace = [call("x", "c1"), res("c1"), call("x", "c2"), res("c2", ok=False), call("x", "c3"), res("c3")]
    assert brief(check(tmp_path, cli, [rule], trace), "m") == [("tool_calls.max", "fail", 5)]


def test_tool_calls_successful_needs_a_result(tmp_path: Path, cli: Any) -> None:
    """§3.4 successful: the result exists and is not ok:false (a result without `ok` counts)."""
    rule: Rule = {"id": "m", "kind": "tool_calls", "tool": "x", "min": 2, "count": "successful"}
    trace = [call("x", "c1"), call("x", "c2"), {"type": "tool.result", "call_id": "c2"}]
    report = check(tmp_path, cli, [rule], trace)
    assert brief(report, "m") == [("tool_calls.min", "fail", None)]
    assert evidence(report, "m")["count"] == 1


def test_tool_calls_successful_repeated_call_id(tmp_path: Path, cli: Any) -> None:
    """Point 3 + 20: two calls c1 and one result c1: one call is successful, not two."""
    rule: Rule = {"id": "m", "kind": "tool_calls", "tool": "x", "min": 2, "count": "successful"}
    report = check(tmp_path, cli, [rule], [call("x", "c1"), call("x", "c1"), res("c1")])
    assert evidence(report, "m")["count"] == 1


def test_tool_calls_successful_ignores_orphan_result(tmp_path: Path, cli: Any) -> None:
    """Point 3: a result before its call is an orphan and makes no call successful."""
    rule: Rule = {"id": "m", "kind": "tool_calls", "tool": "x", "min": 1, "count": "successful"}
    report = check(tmp_path, cli, [rule], [res("c1"), call("x", "c1")])
    assert brief(report, "m") == [("tool_calls.min", "fail", None)]


def test_tool_calls_output_not_array_is_unresolved(tmp_path: Path, cli: Any) -> None:
    """§3.4 output_unresolved: the value is not an array (status unresolved, point 6), at the terminal."""
    rule: Rule = {"id": "m", "kind": "tool_calls", "tool": "x", "matches_output_length": "n"}
    trace = [call("x", "c1"), {"type": "run.completed", "output": {"n": 1}}]
    assert brief(check(tmp_path, cli, [rule], trace), "m") == [("tool_calls.output_unresolved", "unresolved", 2)]


def test_tool_calls_null_output_is_unresolved(tmp_path: Path, cli: Any) -> None:
    """Point 9: output null is an output; its path is absent → output_unresolved at the terminal."""
    rule: Rule = {"id": "m", "kind": "tool_calls", "tool": "x", "matches_output_length": "n"}
    trace = [{"type": "run.completed", "output": None}]
    assert brief(check(tmp_path, cli, [rule], trace), "m") == [("tool_calls.output_unresolved", "unresolved", 1)]


def test_tool_calls_no_terminal_has_no_seq(tmp_path: Path, cli: Any) -> None:
    """Point 2: "at the terminal" violations have no seq when the trace has no terminal."""
    rule: Rule = {"id": "m", "kind": "tool_calls", "tool": "x", "matches_output_length": "n"}
    report = check(tmp_path, cli, [rule], calls("x"))
    assert brief(report, "m") == [("tool_calls.output_unresolved", "unresolved", None)]


def test_tool_calls_output_of_last_terminal(tmp_path: Path, cli: Any) -> None:
    """§0: the terminal is the last run.completed or run.failed; point 16: run.failed may carry output."""
    rule: Rule = {"id": "m", "kind": "tool_calls", "tool": "x", "matches_output_length": "n"}
    trace = [call("x", "c1"), {"type": "run.completed", "output": {"n": []}},
             {"type": "run.failed", "output": {"n": [1]}}]
    assert brief(check(tmp_path, cli, [rule], trace), "m") == []


def test_tool_calls_output_and_max_order(tmp_path: Path, cli: Any) -> None:
    """Point 5: ascending event_index: max at the call, then output_mismatch at the terminal."""
    rule: Rule = {"id": "m", "kind": "tool_calls", "tool": "x", "max": 0, "matches_output_length": "n"}
    trace = [call("x", "c1"), {"type": "run.completed", "output": {"n": []}}]
    assert brief(check(tmp_path, cli, [rule], trace), "m") == [("tool_calls.max", "fail", 1),
                                                               ("tool_calls.output_mismatch", "fail", 2)]


def test_tool_calls_partial_min_inconclusive_max_fails(tmp_path: Path, cli: Any) -> None:
    """§3.4 header: max is safety, the rest liveness; --partial: min inconclusive, max fail."""
    rules: list[Rule] = [{"id": "lo", "kind": "tool_calls", "tool": "x", "min": 5},
                         {"id": "hi", "kind": "tool_calls", "tool": "x", "max": 0}]
    report = check(tmp_path, cli, rules, calls("x"), "--partial")
    assert brief(report, "lo") == [("tool_calls.min", "inconclusive", None)]
    assert brief(report, "hi") == [("tool_calls.max", "fail", 1)]
    assert (report["error_count"], report["rc"]) == (1, 1)


def test_tool_calls_partial_output_inconclusive(tmp_path: Path, cli: Any) -> None:
    """§3.4: output checks are liveness → inconclusive under --partial."""
    rule: Rule = {"id": "m", "kind": "tool_calls", "tool": "x", "matches_output_length": "n"}
    report = check(tmp_path, cli, [rule], calls("x"), "--partial")
    assert brief(report, "m") == [("tool_calls.output_unresolved", "inconclusive", None)]
    assert report["rc"] == 0


@pytest.mark.parametrize("fields", [{}, {"min": 3, "max": 2}, {"max": -1}, {"min": 1000001},
                                    {"max": 1, "count": "results"}])
def test_tool_calls_bad_fields_are_refused(tmp_path: Path, cli: Any, fields: dict[str, Any]) -> None:
    """§3.4 / point 20: one of min/max/matches_output_length; 0..1e6; min ≤ max; count calls|successful."""
    refused(tmp_path, cli, [{"id": "m", "kind": "tool_calls", "tool": "x", **fields}])


# ---------------------------------------------------------------- §3.5 approval_bound

APPROVED: Rule = {"id": "refund-approved", "kind": "approval_bound", "tool": "refund", "bind": "args_subset"}


def grant(approval_id: str | None = "g1", tool: str | None = "refund", **fields: Any) -> Event:
    event: Event = {"type": "approval.granted", **fields}
    if approval_id is not None:
        event["approval_id"] = approval_id
    if tool is not None:
        event["tool"] = tool
    return event


def example_approval_trace() -> list[Event]:
    return [grant(args={"order": "A1", "amount": 10}),
            call("refund", "c1", args={"order": "A1", "amount": 12}),
            call("refund", "c2", args={"order": "A1", "amount": 10, "memo": "x"}),
            call("refund", "c3", args={"order": "A1", "amount": 10})]


def rejected(report: dict[str, Any], rule_id: str, index: int = 0) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = evidence(report, rule_id, index)["rejected"]
    return found


def test_approval_example_fail(tmp_path: Path, cli: Any) -> None:
    """§3.5 example FAIL: seq 2 rejected [{1, args_mismatch, /args/amount}]; seq 4 [{1, consumed, by_seq 3}]."""
    report = check(tmp_path, cli, [APPROVED], example_approval_trace())
    assert brief(report, "refund-approved") == [("approval_bound.missing", "fail", 2),
                                                ("approval_bound.missing", "fail", 4)]
    assert evidence(report, "refund-approved", 0) == {
        "tool": "refund", "call_id": "c1",
        "rejected": [{"grant_seq": 1, "why": "args_mismatch", "pointer": "/args/amount"}]}
    assert evidence(report, "refund-approved", 1) == {
        "tool": "refund", "call_id": "c3", "rejected": [{"grant_seq": 1, "why": "consumed", "by_seq": 3}]}
    assert result_of(report, "refund-approved")["checked"] == 3


def test_approval_example_pass(tmp_path: Path, cli: Any) -> None:
    """§3.5 example PASS: seq 1 and seq 3 only."""
    trace = example_approval_trace()
    assert brief(check(tmp_path, cli, [APPROVED], [trace[0], trace[2]]), "refund-approved") == []


def test_approval_example_revoked(tmp_path: Path, cli: Any) -> None:
    """§3.5: an approval.revoked {"approval_id":"g1"} between them fails seq 3 (revoked)."""
    trace = example_approval_trace()
    report = check(tmp_path, cli, [APPROVED], [trace[0], {"type": "approval.revoked", "approval_id": "g1"}, trace[2]])
    assert brief(report, "refund-approved") == [("approval_bound.missing", "fail", 3)]
    assert rejected(report, "refund-approved") == [{"grant_seq": 1, "why": "revoked"}]


def test_approval_v1_require_approval_passes_example(tmp_path: Path, cli: Any) -> None:
    """§3.5: v1 require_approval passes all three calls of the example."""
    rule: Rule = {"id": "v1", "kind": "require_approval", "tool": "refund"}
    assert brief(check(tmp_path, cli, [rule], example_approval_trace()), "v1") == []


def test_approval_revoked_then_regranted(tmp_path: Path, cli: Any) -> None:
    """Point 21: a revocation affects grants before it; a new grant of the same id after it covers."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund"}
    trace = [grant(), {"type": "approval.revoked", "approval_id": "g1"}, grant(), call("refund", "c1")]
    assert brief(check(tmp_path, cli, [rule], trace), "a") == []


def test_approval_revocation_after_call_does_not_reach_back(tmp_path: Path, cli: Any) -> None:
    """Point 21: a revocation affects calls after it only."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund"}
    trace = [grant(), call("refund", "c1"), {"type": "approval.revoked", "approval_id": "g1"}]
    assert brief(check(tmp_path, cli, [rule], trace), "a") == []


def test_approval_bare_revocation_revokes_all(tmp_path: Path, cli: Any) -> None:
    """§3.5 (7): a revocation carrying none of approval_id, approval_scope, tool revokes all grants."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund"}
    trace = [grant("g1"), grant("g2"), {"type": "approval.revoked"}, call("refund", "c1")]
    report = check(tmp_path, cli, [rule], trace)
    assert rejected(report, "a") == [{"grant_seq": 2, "why": "revoked"}, {"grant_seq": 1, "why": "revoked"}]


def test_approval_revocation_by_other_id_leaves_grant(tmp_path: Path, cli: Any) -> None:
    """§3.5 (7): only grants equal on the fields the revocation carries are revoked."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund"}
    trace = [grant("g1"), {"type": "approval.revoked", "approval_id": "g2"}, call("refund", "c1")]
    assert brief(check(tmp_path, cli, [rule], trace), "a") == []


def test_approval_revocation_by_tool(tmp_path: Path, cli: Any) -> None:
    """§3.5 (7): a revocation carrying only a tool revokes the grants of that tool."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund"}
    trace = [grant("g1"), {"type": "approval.revoked", "tool": "refund"}, call("refund", "c1")]
    assert rejected(check(tmp_path, cli, [rule], trace), "a") == [{"grant_seq": 1, "why": "revoked"}]


def test_approval_custom_revoked_by(tmp_path: Path, cli: Any) -> None:
    """§3.5 revoked_by: globs of event types that revoke (default approval.revoked)."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund", "revoked_by": ["user.cancel*"]}
    trace = [grant("g1"), {"type": "user.cancelled", "approval_id": "g1"}, call("refund", "c1")]
    assert rejected(check(tmp_path, cli, [rule], trace), "a") == [{"grant_seq": 1, "why": "revoked"}]


def test_approval_later_denial_with_same_id_revokes(tmp_path: Path, cli: Any) -> None:
    """§3.5 (7) + point 21: a later approval.granted approved:false with the same approval_id revokes."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund"}
    trace = [grant("g1"), grant("g1", approved=False), call("refund", "c1")]
    report = check(tmp_path, cli, [rule], trace)
    assert brief(report, "a") == [("approval_bound.missing", "fail", 3)]
    assert {"grant_seq": 1, "why": "revoked"} in rejected(report, "a")


def test_approval_denied_grant_never_covers(tmp_path: Path, cli: Any) -> None:
    """§3.5 (1): G is approval.granted with approved not false."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund"}
    trace = [grant("g9", approved=False), call("refund", "c1")]
    assert brief(check(tmp_path, cli, [rule], trace), "a") == [("approval_bound.missing", "fail", 2)]


def test_approval_one_grant_two_calls_at_once(tmp_path: Path, cli: Any) -> None:
    """§3.5 one_use: two calls in flight share one grant: the second finds it consumed by the first."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund"}
    trace = [grant(), call("refund", "c1"), call("refund", "c2"), res("c1"), res("c2")]
    report = check(tmp_path, cli, [rule], trace)
    assert brief(report, "a") == [("approval_bound.missing", "fail", 3)]
    assert rejected(report, "a") == [{"grant_seq": 1, "why": "consumed", "by_seq": 2}]


def test_approval_one_use_false_reuses(tmp_path: Path, cli: Any) -> None:
    """§3.5 one_use: default true; false lets a grant cover several calls."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund", "one_use": False}
    assert brief(check(tmp_path, cli, [rule], [grant(), call("refund", "c1"), call("refund", "c2")]), "a") == []


def test_approval_nearest_grant_first_and_rejected_order(tmp_path: Path, cli: Any) -> None:
    """§3.5: the nearest covering grant is used; point 21: rejected lists nearest first."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund"}
    trace = [grant("g1"), grant("g2"), call("refund", "c1"), call("refund", "c2"), call("refund", "c3")]
    report = check(tmp_path, cli, [rule], trace)
    assert brief(report, "a") == [("approval_bound.missing", "fail", 5)]
    assert rejected(report, "a") == [{"grant_seq": 2, "why": "consumed", "by_seq": 3},
                                     {"grant_seq": 1, "why": "consumed", "by_seq": 4}]


def test_approval_rejected_capped_at_ten_nearest(tmp_path: Path, cli: Any) -> None:
    """§3.5 evidence: at most 10; point 21: the 10 nearest rejected grants, nearest first."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund"}
    trace = [grant(f"g{i}", tool="other") for i in range(12)] + [call("refund", "c1")]
    found = rejected(check(tmp_path, cli, [rule], trace), "a")
    assert [r["grant_seq"] for r in found] == list(range(12, 2, -1))
    assert {r["why"] for r in found} == {"tool_mismatch"}


def test_approval_grant_tool_is_string_equality(tmp_path: Path, cli: Any) -> None:
    """Point 21: the tool condition is string equality (a grant tool `ref*` is no glob)."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund"}
    report = check(tmp_path, cli, [rule], [grant(tool="ref*"), call("refund", "c1")])
    assert rejected(report, "a") == [{"grant_seq": 1, "why": "tool_mismatch"}]


def test_approval_grant_after_call_is_no_candidate(tmp_path: Path, cli: Any) -> None:
    """Point 21: only grants strictly before the call are candidates."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund"}
    report = check(tmp_path, cli, [rule], [call("refund", "c1"), grant()])
    assert brief(report, "a") == [("approval_bound.missing", "fail", 1)]
    assert rejected(report, "a") == []


def test_approval_scope_glob_with_question_mark(tmp_path: Path, cli: Any) -> None:
    """§3.5 (3): with a rule scope, G's approval_scope matches it (a glob: `?` is one character)."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund", "scope": "refund:?"}
    trace = [grant("g1", tool=None, approval_scope="refund:12"), grant("g2", tool=None, approval_scope="refund:1"),
             call("refund", "c1"), call("refund", "c2")]
    report = check(tmp_path, cli, [rule], trace)
    assert brief(report, "a") == [("approval_bound.missing", "fail", 4)]
    assert rejected(report, "a") == [{"grant_seq": 2, "why": "consumed", "by_seq": 3},
                                     {"grant_seq": 1, "why": "scope_mismatch"}]


def test_approval_without_scope_grant_needs_tool(tmp_path: Path, cli: Any) -> None:
    """§3.5 (3): without a rule scope, G must have a tool."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund"}
    trace = [grant(tool=None, approval_scope="refund"), call("refund", "c1")]
    assert brief(check(tmp_path, cli, [rule], trace), "a") == [("approval_bound.missing", "fail", 2)]


def test_approval_call_approval_id_must_equal(tmp_path: Path, cli: Any) -> None:
    """§3.5 (4): if C has an approval_id, G's is equal."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund"}
    trace = [grant("g1"), call("refund", "c1", approval_id="g2")]
    report = check(tmp_path, cli, [rule], trace)
    assert brief(report, "a") == [("approval_bound.missing", "fail", 2)]
    assert evidence(report, "a")["approval_id"] == "g2"


def test_approval_bind_args_exact_equality(tmp_path: Path, cli: Any) -> None:
    """§3.5 (5) args: equal args; §2 equality makes 10 = 10.0, and an extra key breaks it."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund", "bind": "args"}
    trace = [grant("g1", args={"n": 10}), call("refund", "c1", args={"n": 10.0}),
             grant("g2", args={"n": 10}), call("refund", "c2", args={"n": 10, "m": 1})]
    report = check(tmp_path, cli, [rule], trace)
    assert brief(report, "a") == [("approval_bound.missing", "fail", 4)]
    assert rejected(report, "a")[0]["grant_seq"] == 3
    assert rejected(report, "a")[0]["why"] == "args_mismatch"


def test_approval_bind_args_without_args_never_binds(tmp_path: Path, cli: Any) -> None:
    """Point 21: under args/args_subset a grant or call without args never binds (args_mismatch)."""
    trace = [grant("g1"), call("refund", "c1", args={"order": "A1"})]
    report = check(tmp_path, cli, [APPROVED], trace)
    assert [r["why"] for r in rejected(report, "refund-approved")] == ["args_mismatch"]


def test_approval_bind_call_id(tmp_path: Path, cli: Any) -> None:
    """§3.5 (5) call_id: equal ids (call_id_mismatch otherwise)."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund", "bind": "call_id"}
    trace = [grant("g1", call_id="c2"), call("refund", "c1"), call("refund", "c2")]
    report = check(tmp_path, cli, [rule], trace)
    assert brief(report, "a") == [("approval_bound.missing", "fail", 2)]
    assert rejected(report, "a") == [{"grant_seq": 1, "why": "call_id_mismatch"}]


def test_approval_bind_call_id_needs_both_ids(tmp_path: Path, cli: Any) -> None:
    """Point 21: under call_id both need one: a call without call_id is never covered."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund", "bind": "call_id"}
    report = check(tmp_path, cli, [rule], [grant("g1", call_id="c1"), call("refund")])
    assert brief(report, "a") == [("approval_bound.missing", "fail", 2)]
    assert "call_id" not in evidence(report, "a")


def test_approval_max_age_events_exactly_n(tmp_path: Path, cli: Any) -> None:
    """§3.5 (6): the position gap is ≤ max_age_events: a gap of exactly N covers, N+1 is expired."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund", "max_age_events": 2}
    ok = check(tmp_path, cli, [rule], [grant(), {"type": "note"}, call("refund", "c1")])
    assert brief(ok, "a") == []
    late = check(tmp_path, cli, [rule], [grant(), {"type": "note"}, {"type": "note"}, call("refund", "c1")])
    assert rejected(late, "a") == [{"grant_seq": 1, "why": "expired"}]


def test_approval_max_age_ms_equal_times(tmp_path: Path, cli: Any) -> None:
    """§3.5 (6): with max_age_ms both events carry time, gap ≤ max: equal timestamps cover."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund", "max_age_ms": 1}
    trace = [grant(time=t(0)), call("refund", "c1", time=t(0))]
    assert brief(check(tmp_path, cli, [rule], trace), "a") == []


def test_approval_max_age_ms_expired(tmp_path: Path, cli: Any) -> None:
    """§3.5 (6): too old gives expired."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund", "max_age_ms": 1000}
    trace = [grant(time=t(0)), call("refund", "c1", time=t(1.001))]
    assert rejected(check(tmp_path, cli, [rule], trace), "a") == [{"grant_seq": 1, "why": "expired"}]


def test_approval_max_age_ms_missing_time(tmp_path: Path, cli: Any) -> None:
    """§3.5 (6): a missing time gives time_missing."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund", "max_age_ms": 1000}
    trace = [grant(time=t(0)), call("refund", "c1")]
    assert rejected(check(tmp_path, cli, [rule], trace), "a") == [{"grant_seq": 1, "why": "time_missing"}]


def test_approval_require_approver(tmp_path: Path, cli: Any) -> None:
    """§3.5 (9): G has an approver if the rule requires one."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund", "require_approver": True}
    trace = [grant("g1"), call("refund", "c1"), grant("g2", approver="ann"), call("refund", "c2")]
    report = check(tmp_path, cli, [rule], trace)
    assert brief(report, "a") == [("approval_bound.missing", "fail", 2)]
    assert rejected(report, "a") == [{"grant_seq": 1, "why": "approver_missing"}]


def test_approval_denied_attempt_is_prevented(tmp_path: Path, cli: Any) -> None:
    """§3.5: attempts count; a call that a later tool.denied marks gets prevented: true."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund"}
    trace = [call("refund", "c1"), {"type": "tool.denied", "tool": "refund", "call_id": "c1"}]
    report = check(tmp_path, cli, [rule], trace)
    assert brief(report, "a") == [("approval_bound.missing", "fail", 1)]
    assert result_of(report, "a")["violations"][0].get("prevented") is True


def test_approval_denied_covered_call_still_consumes(tmp_path: Path, cli: Any) -> None:
    """Point 21: a covered call that a later tool.denied marks still consumes its grant."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund"}
    trace = [grant(), call("refund", "c1"), {"type": "tool.denied", "tool": "refund", "call_id": "c1"},
             call("refund", "c2")]
    report = check(tmp_path, cli, [rule], trace)
    assert brief(report, "a") == [("approval_bound.missing", "fail", 4)]
    assert rejected(report, "a") == [{"grant_seq": 1, "why": "consumed", "by_seq": 2}]
    assert "prevented" not in result_of(report, "a")["violations"][0]


def test_approval_state_is_per_rule(tmp_path: Path, cli: Any) -> None:
    """Point 21: consumption is per rule: two rules may each use the same grant."""
    rules: list[Rule] = [{"id": "a", "kind": "approval_bound", "tool": "refund"},
                         {"id": "b", "kind": "approval_bound", "tool": "ref*"}]
    report = check(tmp_path, cli, rules, [grant(), call("refund", "c1")])
    assert (brief(report, "a"), brief(report, "b")) == ([], [])


def test_approval_vacuous_without_calls(tmp_path: Path, cli: Any) -> None:
    """Point 4: approval_bound is per-event (matching calls): none → checked 0, vacuous."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund"}
    found = result_of(check(tmp_path, cli, [rule], [grant(), call("other", "c1")]), "a")
    assert (found["checked"], found.get("vacuous"), found["passed"]) == (0, True, True)


def test_approval_partial_is_safety(tmp_path: Path, cli: Any) -> None:
    """§3.5 approval_bound is safety: --partial keeps status fail."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund"}
    report = check(tmp_path, cli, [rule], [call("refund", "c1")], "--partial")
    assert brief(report, "a") == [("approval_bound.missing", "fail", 1)]
    assert report["rc"] == 1


@pytest.mark.parametrize("fields", [{"bind": "all"}, {"max_age_events": 0}, {"max_age_events": 100001},
                                    {"max_age_ms": 0}, {"one_use": "yes"}])
def test_approval_bad_fields_are_refused(tmp_path: Path, cli: Any, fields: dict[str, Any]) -> None:
    """§3.5 fields: bind none|args|args_subset|call_id; max_age_events 1..100k; max_age_ms ≥ 1."""
    refused(tmp_path, cli, [{"id": "a", "kind": "approval_bound", "tool": "refund", **fields}])


# ---------------------------------------------------------------- §3.6 budgets

BUDGETS: list[Rule] = [{"id": "fast", "kind": "latency_budget", "tool": "search", "max_ms": 2000},
                       {"id": "small", "kind": "result_size", "tool": "search", "max_bytes": 64},
                       {"id": "quick", "kind": "run_duration", "max_ms": 60000}]


def budget_trace(duration: int, end: str) -> list[Event]:
    return [{"type": "run.start", "time": "2026-01-01T10:00:00Z"},
            call("search", "s1", args={"q": "x"}),
            res("s1", duration_ms=duration, result={"hits": ["a", "b"]}),
            {"type": "run.completed", "time": end}]


def test_budgets_example_fail(tmp_path: Path, cli: Any) -> None:
    """§3.6 example FAIL: fast at seq 3 (3500 > 2000); quick at seq 4 (120000 > 60000); small passes."""
    report = check(tmp_path, cli, BUDGETS, budget_trace(3500, "2026-01-01T10:02:00Z"))
    assert brief(report, "fast") == [("latency_budget.exceeded", "fail", 3)]
    assert brief(report, "quick") == [("run_duration.exceeded", "fail", 4)]
    assert brief(report, "small") == []
    fast = evidence(report, "fast")
    assert {k: fast[k] for k in ("tool", "call_id", "duration_ms", "max_ms")} == {
        "tool": "search", "call_id": "s1", "duration_ms": 3500, "max_ms": 2000}
    assert set(fast) == {"tool", "call_id", "duration_ms", "max_ms", "source"}
    quick = evidence(report, "quick")
    assert {k: quick[k] for k in ("duration_ms", "max_ms", "start_seq", "end_seq")} == {
        "duration_ms": 120000, "max_ms": 60000, "start_seq": 1, "end_seq": 4}
    assert set(quick) == {"duration_ms", "max_ms", "start_seq", "end_seq", "source"}
    assert [v["rule_id"] for v in report["violations"]] == ["fast", "quick"]


def test_budgets_example_pass(tmp_path: Path, cli: Any) -> None:
    """§3.6 example PASS: a duration of 120 and completion at 10:00:30."""
    report = check(tmp_path, cli, BUDGETS, budget_trace(120, "2026-01-01T10:00:30Z"))
    assert report["violations"] == [] and report["rc"] == 0
    assert [result_of(report, r)["checked"] for r in ("fast", "small", "quick")] == [1, 1, 1]


def test_result_size_example_is_18_bytes(tmp_path: Path, cli: Any) -> None:
    """§3.6: the example's result {"hits":["a","b"]} is 18 bytes: over 17, not over 18."""
    rules: list[Rule] = [{"id": "s17", "kind": "result_size", "tool": "search", "max_bytes": 17},
                         {"id": "s18", "kind": "result_size", "tool": "search", "max_bytes": 18}]
    report = check(tmp_path, cli, rules, budget_trace(1, "2026-01-01T10:00:01Z"))
    assert brief(report, "s17") == [("result_size.exceeded", "fail", 3)]
    assert evidence(report, "s17") == {"tool": "search", "call_id": "s1", "bytes": 18, "max_bytes": 17}
    assert brief(report, "s18") == []


def lat(**fields: Any) -> Rule:
    return {"id": "l", "kind": "latency_budget", "tool": "x", **fields}


def test_latency_from_times(tmp_path: Path, cli: Any) -> None:
    """§3.6: without duration_ms the duration is result.time − call.time."""
    trace = [call("x", "c1", time=t(0)), res("c1", time=t(1.5))]
    report = check(tmp_path, cli, [lat(max_ms=1000)], trace)
    assert brief(report, "l") == [("latency_budget.exceeded", "fail", 2)]
    assert evidence(report, "l")["duration_ms"] == 1500


def test_latency_duration_ms_wins_over_times(tmp_path: Path, cli: Any) -> None:
    """§3.6: a call's duration is its result's duration_ms, else the time difference."""
    trace = [call("x", "c1", time=t(0)), res("c1", time=t(9), duration_ms=10)]
    assert brief(check(tmp_path, cli, [lat(max_ms=1000)], trace), "l") == []


def test_latency_equal_to_max_passes(tmp_path: Path, cli: Any) -> None:
    """Point 23: every time/size budget fails only when strictly over the maximum."""
    trace = [call("x", "c1", time=t(0)), res("c1", time=t(1))]
    assert brief(check(tmp_path, cli, [lat(max_ms=1000)], trace), "l") == []


def test_latency_equal_timestamps_is_zero(tmp_path: Path, cli: Any) -> None:
    """§3.6: equal times give a duration of 0 (measured, not unresolved)."""
    trace = [call("x", "c1", time=t(3)), res("c1", time=t(3))]
    assert brief(check(tmp_path, cli, [lat(max_ms=1)], trace), "l") == []


def test_latency_negative_is_unresolved_at_call(tmp_path: Path, cli: Any) -> None:
    """§3.6: a negative duration is unresolved; point 2: duration_unresolved sits at the call."""
    trace = [call("x", "c1", time=t(5)), res("c1", time=t(1))]
    assert brief(check(tmp_path, cli, [lat(max_ms=1)], trace), "l") == [
        ("latency_budget.duration_unresolved", "unresolved", 1)]


def test_latency_missing_time_is_unresolved(tmp_path: Path, cli: Any) -> None:
    """§3.6: a duration that cannot be computed (a missing time) is unresolved."""
    trace = [call("x", "c1"), res("c1", time=t(1))]
    assert brief(check(tmp_path, cli, [lat(max_ms=1)], trace), "l") == [
        ("latency_budget.duration_unresolved", "unresolved", 1)]


def test_latency_resultless_call_unresolved_unless_skip(tmp_path: Path, cli: Any) -> None:
    """§3.6: a result-less duration is unresolved (on_missing fail by default); skip drops it."""
    report = check(tmp_path, cli, [lat(max_ms=1), {**lat(max_ms=1, on_missing="skip"), "id": "k"}],
                   [call("x", "c1")])
    assert brief(report, "l") == [("latency_budget.duration_unresolved", "unresolved", 1)]
    assert brief(report, "k") == []


def test_latency_repeated_call_id_pairs_nearest_open_call(tmp_path: Path, cli: Any) -> None:
    """Point 3: the result pairs with the nearest earlier open call with that id (the second, at 9 s),
    and the first call has no result."""
    trace = [call("x", "c1", time=t(0)), call("x", "c1", time=t(9)), res("c1", time=t(10))]
    report = check(tmp_path, cli, [lat(max_ms=5000)], trace)
    assert brief(report, "l") == [("latency_budget.duration_unresolved", "unresolved", 1)]


def test_latency_default_tool_is_any(tmp_path: Path, cli: Any) -> None:
    """§3.6 latency_budget: `tool` defaults to `*`."""
    rule: Rule = {"id": "l", "kind": "latency_budget", "max_ms": 10}
    report = check(tmp_path, cli, [rule], [call("a", "c1"), res("c1", duration_ms=11)])
    assert brief(report, "l") == [("latency_budget.exceeded", "fail", 2)]


def test_latency_huge_duration(tmp_path: Path, cli: Any) -> None:
    """§1 duration_ms finite ≥ 0; point 7: numbers in RFC 8785 form (1e300 → 1e+300)."""
    write_contract(tmp_path, [lat(max_ms=1)])
    (tmp_path / "t.jsonl").write_text(
        '{"seq":1,"type":"tool.call","tool":"x","call_id":"c1"}\n'
        '{"seq":2,"type":"tool.result","call_id":"c1","ok":true,"duration_ms":1e300}\n', encoding="utf-8")
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json", "--no-lint")
    assert result.returncode == 1, result.stderr
    assert '"duration_ms": 1e+300' in result.stdout


def test_latency_vacuous_without_calls(tmp_path: Path, cli: Any) -> None:
    """Point 4: latency_budget is per-event (matching calls): none → checked 0, vacuous."""
    found = result_of(check(tmp_path, cli, [lat(max_ms=1, percentile=50)], [call("y", "c1")]), "l")
    assert (found["checked"], found.get("vacuous"), found["violations"]) == (0, True, [])


@pytest.mark.parametrize(("durations", "p", "value"), [
    ([300, 100, 200], 50, 200), ([300, 100, 200], 100, 300), ([300, 100, 200], 1, 100),
    ([7], 0.001, 7), ([10, 20], 50, 10), ([10, 20], 50.1, 20)])
def test_latency_percentile_nearest_rank(tmp_path: Path, cli: Any, durations: list[int], p: float,
                                         value: int) -> None:
    """Point 22: value = sorted[max(1, ⌈p·n/100⌉) − 1]; a violation iff value > max_ms, no seq;
    evidence {percentile, value, max_ms, samples, unmeasured}."""
    trace: list[Event] = []
    for i, duration in enumerate(durations):
        trace += [call("x", f"c{i}"), res(f"c{i}", duration_ms=duration)]
    report = check(tmp_path, cli, [lat(max_ms=value - 1, percentile=p)], trace)
    assert brief(report, "l") == [("latency_budget.exceeded", "fail", None)]
    assert evidence(report, "l") == {"percentile": p, "value": value, "max_ms": value - 1,
                                     "samples": len(durations), "unmeasured": 0}
    assert brief(check(tmp_path, cli, [lat(max_ms=value, percentile=p)], trace), "l") == []


def test_latency_percentile_unmeasured_adds_one_unresolved(tmp_path: Path, cli: Any) -> None:
    """Point 22: under on_missing fail, unmeasured calls add one no-seq duration_unresolved; point 5
    orders ties by the spec's listing (exceeded, then duration_unresolved)."""
    trace = [call("x", "c1"), res("c1", duration_ms=50), call("x", "c2"), call("x", "c3")]
    report = check(tmp_path, cli, [lat(max_ms=10, percentile=90)], trace)
    assert brief(report, "l") == [("latency_budget.exceeded", "fail", None),
                                  ("latency_budget.duration_unresolved", "unresolved", None)]
    assert evidence(report, "l")["unmeasured"] == 2


def test_latency_percentile_unmeasured_skipped(tmp_path: Path, cli: Any) -> None:
    """Point 22: with on_missing skip, unmeasured calls add nothing."""
    trace = [call("x", "c1"), res("c1", duration_ms=5), call("x", "c2")]
    assert brief(check(tmp_path, cli, [lat(max_ms=10, percentile=90, on_missing="skip")], trace), "l") == []


def test_latency_percentile_no_samples_one_unresolved(tmp_path: Path, cli: Any) -> None:
    """Point 22: no call measured (but some exist) → exactly one no-seq duration_unresolved, even skip."""
    trace = [call("x", "c1"), call("x", "c2")]
    report = check(tmp_path, cli, [lat(max_ms=10, percentile=50, on_missing="skip")], trace)
    assert brief(report, "l") == [("latency_budget.duration_unresolved", "unresolved", None)]


def test_latency_partial_percentile_inconclusive_per_result_fail(tmp_path: Path, cli: Any) -> None:
    """§3.6: latency_budget is safety, the percentile variant liveness (--partial: inconclusive)."""
    rules: list[Rule] = [lat(max_ms=10), {**lat(max_ms=10, percentile=50), "id": "p"}]
    report = check(tmp_path, cli, rules, [call("x", "c1"), res("c1", duration_ms=11)], "--partial")
    assert brief(report, "l") == [("latency_budget.exceeded", "fail", 2)]
    assert brief(report, "p") == [("latency_budget.exceeded", "inconclusive", None)]
    assert (report["error_count"], report["rc"]) == (1, 1)


@pytest.mark.parametrize("fields", [{"max_ms": 0}, {"max_ms": 10, "percentile": 0},
                                    {"max_ms": 10, "percentile": 100.5}, {"max_ms": 10, "on_missing": "pass"}])
def test_latency_bad_fields_are_refused(tmp_path: Path, cli: Any, fields: dict[str, Any]) -> None:
    """§3.6: max_ms > 0, percentile ∈ (0,100], on_missing fail|skip."""
    refused(tmp_path, cli, [{"id": "l", "kind": "latency_budget", **fields}])


def size(**fields: Any) -> Rule:
    return {"id": "z", "kind": "result_size", **fields}


@pytest.mark.parametrize(("value", "nbytes"), [(None, 4), (100.0, 3), ("é", 4), ({"b": 1, "a": [True]}, 18),
                                               ("x" * 300, 302)])
def test_result_size_canonical_bytes(tmp_path: Path, cli: Any, value: Any, nbytes: int) -> None:
    """§3.6 + points 7, 9: UTF-8 bytes of RFC 8785 canonical JSON (null is 4 bytes, 100.0 → 100,
    raw UTF-8, sorted keys, no spaces); strings are not cut for counting."""
    trace = [call("x", "c1"), res("c1", result=value)]
    report = check(tmp_path, cli, [size(max_bytes=nbytes - 1)], trace)
    assert brief(report, "z") == [("result_size.exceeded", "fail", 2)]
    assert evidence(report, "z")["bytes"] == nbytes
    assert brief(check(tmp_path, cli, [size(max_bytes=nbytes)], trace), "z") == []


def test_result_size_missing_result(tmp_path: Path, cli: Any) -> None:
    """Point 22: a result event without `result` is result_missing at that result (unresolved)."""
    report = check(tmp_path, cli, [size(max_bytes=5)], [call("x", "c1"), res("c1")])
    assert brief(report, "z") == [("result_size.result_missing", "unresolved", 2)]


def test_result_size_call_without_result_is_not_its_business(tmp_path: Path, cli: Any) -> None:
    """Point 22: calls without a result event are tool_result_required's business; vacuous (point 4)."""
    found = result_of(check(tmp_path, cli, [size(max_bytes=5)], [call("x", "c1")]), "z")
    assert (found["violations"], found["checked"], found.get("vacuous")) == ([], 0, True)


def test_result_size_tool_through_pairing(tmp_path: Path, cli: Any) -> None:
    """§0 + point 3: a result's tool is its call's; an orphan keeps its own tool."""
    trace = [call("x", "c1"), res("c1", tool="y", result="aaaa"), res("zz", tool="x", result="bbbb"),
             res("qq", result="cccc")]
    report = check(tmp_path, cli, [size(tool="x", max_bytes=1)], trace)
    assert brief(report, "z") == [("result_size.exceeded", "fail", 2), ("result_size.exceeded", "fail", 3)]
    assert "call_id" in evidence(report, "z", 1)


def test_result_size_partial_is_safety(tmp_path: Path, cli: Any) -> None:
    """§3.6 result_size (safety): fail under --partial too."""
    report = check(tmp_path, cli, [size(max_bytes=1)], [call("x", "c1"), res("c1", result=[1, 2])], "--partial")
    assert brief(report, "z") == [("result_size.exceeded", "fail", 2)]


def run_rule(**fields: Any) -> Rule:
    return {"id": "d", "kind": "run_duration", "max_ms": 1000, **fields}


def test_run_duration_terminal_duration_ms_wins(tmp_path: Path, cli: Any) -> None:
    """Point 23: the terminal's duration_ms wins over times."""
    trace: list[Event] = [{"type": "run.start", "time": t(0)},
                          {"type": "run.completed", "time": t(50), "duration_ms": 5}]
    assert brief(check(tmp_path, cli, [run_rule()], trace), "d") == []


def test_run_duration_exactly_max_passes(tmp_path: Path, cli: Any) -> None:
    """Point 23: fails only when strictly over."""
    trace = [{"type": "run.start", "time": t(0)}, {"type": "run.completed", "time": t(1)}]
    assert brief(check(tmp_path, cli, [run_rule()], trace), "d") == []


def test_run_duration_start_without_time_has_no_fallback(tmp_path: Path, cli: Any) -> None:
    """Point 23: the start is the first run.start; no time → duration_unresolved (at the terminal)."""
    trace = [{"type": "note", "time": t(0)}, {"type": "run.start"}, {"type": "run.completed", "time": t(9)}]
    assert brief(check(tmp_path, cli, [run_rule()], trace), "d") == [
        ("run_duration.duration_unresolved", "unresolved", 3)]


def test_run_duration_first_event_without_run_start(tmp_path: Path, cli: Any) -> None:
    """§3.6: without run.start the first event's time is the start."""
    trace = [{"type": "note", "time": t(0)}, {"type": "run.failed", "time": t(2)}]
    report = check(tmp_path, cli, [run_rule()], trace)
    assert brief(report, "d") == [("run_duration.exceeded", "fail", 2)]
    assert {k: evidence(report, "d")[k] for k in ("duration_ms", "start_seq", "end_seq")} == {
        "duration_ms": 2000, "start_seq": 1, "end_seq": 2}


def test_run_duration_no_terminal(tmp_path: Path, cli: Any) -> None:
    """Point 23: no terminal → one duration_unresolved without seq; checked 1 (point 4)."""
    report = check(tmp_path, cli, [run_rule()], [{"type": "run.start", "time": t(0)}])
    assert brief(report, "d") == [("run_duration.duration_unresolved", "unresolved", None)]
    assert result_of(report, "d")["checked"] == 1


def test_run_duration_negative_is_unresolved(tmp_path: Path, cli: Any) -> None:
    """Point 23: negative differences are unresolved."""
    trace = [{"type": "run.start", "time": t(5)}, {"type": "run.completed", "time": t(1)}]
    assert brief(check(tmp_path, cli, [run_rule()], trace), "d") == [
        ("run_duration.duration_unresolved", "unresolved", 2)]


def test_run_duration_offset_of_24h_is_unresolved(tmp_path: Path, cli: Any) -> None:
    """§3.6 / point 23: a time offset ≥ 24 h (which the v1 grammar accepts, v1 §3.3) is unresolved."""
    trace = [{"type": "run.start", "time": "2026-01-01T10:00:00Z"},
             {"type": "run.completed", "time": "2026-01-01T10:00:00+24:00"}]
    assert brief(check(tmp_path, cli, [run_rule()], trace), "d") == [
        ("run_duration.duration_unresolved", "unresolved", 2)]


def test_run_duration_a_day_long_run_is_measured(tmp_path: Path, cli: Any) -> None:
    """Point 23 reads "offsets ≥ 24 h" as time-zone offsets (v1 §3.3 leaves them unchecked), so a run
    of a whole day is simply measured (and over 1 s)."""
    trace = [{"type": "run.start", "time": "2026-01-01T10:00:00Z"},
             {"type": "run.completed", "time": "2026-01-02T10:00:00Z"}]
    report = check(tmp_path, cli, [run_rule()], trace)
    assert brief(report, "d") == [("run_duration.exceeded", "fail", 2)]
    assert evidence(report, "d")["duration_ms"] == 86_400_000


def test_run_duration_microsecond_truncation(tmp_path: Path, cli: Any) -> None:
    """§3.6: times truncated to µs: 1.0000009 s after start is 1000 ms plus under 1 µs → not over."""
    trace = [{"type": "run.start", "time": "2026-01-01T10:00:00Z"},
             {"type": "run.completed", "time": "2026-01-01T10:00:01.0000009Z"}]
    assert brief(check(tmp_path, cli, [run_rule()], trace), "d") == []


def test_run_duration_partial_is_inconclusive(tmp_path: Path, cli: Any) -> None:
    """§3.6 run_duration is liveness: inconclusive under --partial."""
    report = check(tmp_path, cli, [run_rule()], [{"type": "run.start", "time": t(0)}], "--partial")
    assert brief(report, "d") == [("run_duration.duration_unresolved", "inconclusive", None)]
    assert report["rc"] == 0


# ---------------------------------------------------------------- more corners


def test_tool_order_partial_exact_deviation_is_inconclusive(tmp_path: Path, cli: Any) -> None:
    """§3.2 (liveness) + point 82: even a located exact deviation is inconclusive under --partial."""
    rule: Rule = {"id": "o", "kind": "tool_order", "tools": ["a"], "mode": "exact"}
    report = check(tmp_path, cli, [rule], calls("b"), "--partial")
    assert brief(report, "o") == [("tool_order.deviation", "inconclusive", 1)]
    assert report["rc"] == 0


@pytest.mark.parametrize("fields", [{"tools": []}, {"tools": [f"t{i}" for i in range(101)]},
                                    {"tools": ["a"], "mode": "sequence"}])
def test_tool_order_bad_fields_are_refused(tmp_path: Path, cli: Any, fields: dict[str, Any]) -> None:
    """§3.2 fields: tools 1..100 globs; mode one of the four."""
    refused(tmp_path, cli, [{"id": "o", "kind": "tool_order", **fields}])


def test_precedence_long_key_is_cut_in_evidence(tmp_path: Path, cli: Any) -> None:
    """Point 7: evidence strings are cut to 200 code points plus `…`."""
    rule: Rule = {"id": "p", "kind": "precedence", "before": {"type": "tool.call", "tool": "b"},
                  "after": {"type": "tool.call", "tool": "a"}, "correlate": ["k"]}
    report = check(tmp_path, cli, [rule], [call("a", "c1", args={"k": "é" * 300})])
    assert evidence(report, "p")["key"] == ["é" * 200 + "…"]


def test_approval_args_subset_nested_pointer(tmp_path: Path, cli: Any) -> None:
    """§3.5 (5) args_subset: G's args subset-match C's; args_mismatch carries the pointer of the
    deviating node, into the event (point 7)."""
    trace = [grant(args={"o": {"n": 1}}), call("refund", "c1", args={"o": {"n": 2, "m": 3}})]
    report = check(tmp_path, cli, [APPROVED], trace)
    assert rejected(report, "refund-approved") == [{"grant_seq": 1, "why": "args_mismatch", "pointer": "/args/o/n"}]


def test_approval_scope_grant_with_other_tool(tmp_path: Path, cli: Any) -> None:
    """§3.5 (2): if G has a tool it must equal C's, even when its scope matches."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund", "scope": "pay*"}
    trace = [grant(tool="other", approval_scope="payments"), call("refund", "c1")]
    assert rejected(check(tmp_path, cli, [rule], trace), "a") == [{"grant_seq": 1, "why": "tool_mismatch"}]


def test_approval_scope_grant_without_tool_covers(tmp_path: Path, cli: Any) -> None:
    """§3.5 (2)-(3): a scoped grant without a tool covers a call of the rule's tool."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund", "scope": "pay*"}
    assert brief(check(tmp_path, cli, [rule], [grant(tool=None, approval_scope="payments"),
                                               call("refund", "c1")]), "a") == []


def test_approval_safety_exit(tmp_path: Path, cli: Any) -> None:
    """Point 84: --safety-exit N replaces exit 1 when an error violation comes from a safety part
    (approval_bound); a liveness-only failure (tool_order) keeps exit 1."""
    write_contract(tmp_path, [{"id": "a", "kind": "approval_bound", "tool": "refund"}])
    write_trace(tmp_path, [call("refund", "c1")])
    args = ("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json", "--no-lint",
            "--safety-exit", "9")
    assert cli(*args).returncode == 9
    write_contract(tmp_path, [FLOW])
    assert cli(*args).returncode == 1


def test_tool_calls_tool_glob_counts_every_match(tmp_path: Path, cli: Any) -> None:
    """§3.4 tool (a glob, as everywhere): re* counts refund and reship; the third is max+1."""
    rule: Rule = {"id": "m", "kind": "tool_calls", "tool": "re*", "max": 2}
    report = check(tmp_path, cli, [rule], calls("refund", "get", "reship", "refund"))
    assert brief(report, "m") == [("tool_calls.max", "fail", 4)]


def test_latency_result_without_call_id_is_unmeasured(tmp_path: Path, cli: Any) -> None:
    """Point 3: a call without call_id has no result; its duration is unresolved at the call."""
    report = check(tmp_path, cli, [lat(max_ms=100)], [call("x"), res(None, duration_ms=5)])
    assert brief(report, "l") == [("latency_budget.duration_unresolved", "unresolved", 1)]


def test_budget_violations_order_in_rule(tmp_path: Path, cli: Any) -> None:
    """Point 5: ascending event_index within a rule result (result at 2, call at 3)."""
    trace = [call("x", "c1"), res("c1", duration_ms=50), call("x", "c2")]
    assert brief(check(tmp_path, cli, [lat(max_ms=10)], trace), "l") == [
        ("latency_budget.exceeded", "fail", 2), ("latency_budget.duration_unresolved", "unresolved", 3)]


def test_tool_order_contiguous_largest_partial_matching(tmp_path: Path, cli: Any) -> None:
    """Point 18: `matched` for contiguous reports the largest partial matching."""
    rule: Rule = {"id": "o", "kind": "tool_order", "tools": ["a", "b", "c"], "mode": "contiguous"}
    report = check(tmp_path, cli, [rule], calls("a", "x", "a", "b", "x"))
    assert evidence(report, "o")["matched"] == [{"pattern": "a", "seq": 3}, {"pattern": "b", "seq": 4}]
    assert evidence(report, "o")["missing"] == ["c"]


def test_precedence_correlate_json_pointer_and_index(tmp_path: Path, cli: Any) -> None:
    """§2 paths (dot with array index, or JSON Pointer) in correlate {before, after}."""
    rule: Rule = {"id": "p", "kind": "precedence", "before": {"type": "tool.call", "tool": "b"},
                  "after": {"type": "tool.call", "tool": "a"},
                  "correlate": [{"before": "ids.0", "after": "/order/id"}]}
    trace = [call("b", "c1", args={"ids": ["K"]}), call("a", "c2", args={"order": {"id": "K"}}),
             call("a", "c3", args={"order": {"id": "L"}})]
    assert brief(check(tmp_path, cli, [rule], trace), "p") == [("precedence.missing", "fail", 3)]


def test_approval_revocation_must_match_every_field_it_carries(tmp_path: Path, cli: Any) -> None:
    """§3.5 (7): a revocation revokes grants equal on the approval_id, approval_scope and tool it
    carries: {g1, tool other} does not revoke g1 of refund."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund"}
    trace = [grant("g1"), {"type": "approval.revoked", "approval_id": "g1", "tool": "other"}, call("refund", "c1")]
    assert brief(check(tmp_path, cli, [rule], trace), "a") == []


def test_approval_bind_none_ignores_args(tmp_path: Path, cli: Any) -> None:
    """§3.5 bind: none (default) binds nothing, so grant args do not matter."""
    rule: Rule = {"id": "a", "kind": "approval_bound", "tool": "refund"}
    trace = [grant(args={"amount": 1}), call("refund", "c1", args={"amount": 999})]
    assert brief(check(tmp_path, cli, [rule], trace), "a") == []


@pytest.mark.parametrize(("p", "value"), [(7, 7), (55, 55), (29, 29), (0.5, 1)])
def test_latency_percentile_rank_on_100_samples(tmp_path: Path, cli: Any, p: float, value: int) -> None:
    """Point 22: ⌈p·n/100⌉ is exact: p 7 over samples 1..100 is the 7th value (not 8 by float error)."""
    trace: list[Event] = []
    for i in range(1, 101):
        trace += [call("x", f"c{i}"), res(f"c{i}", duration_ms=i)]
    report = check(tmp_path, cli, [lat(max_ms=value, percentile=p)], trace)
    assert brief(report, "l") == []
    report = check(tmp_path, cli, [lat(max_ms=value - 0.5, percentile=p)], trace)
    assert evidence(report, "l")["value"] == value


@pytest.mark.parametrize(("raw", "nbytes"), [("1000000000000000000000", 5), ("-0.0", 1), ("1E2", 3),
                                             ("0.000001", 8), ("1e-7", 4)])
def test_result_size_canonical_number_form(tmp_path: Path, cli: Any, raw: str, nbytes: int) -> None:
    """Point 7: RFC 8785 number form (1e21 → 1e+21, -0 → 0, 1E2 → 100, 1e-7 stays 1e-7)."""
    write_contract(tmp_path, [size(max_bytes=nbytes - 1)])
    (tmp_path / "t.jsonl").write_text(
        '{"seq":1,"type":"tool.call","tool":"x","call_id":"c1"}\n'
        f'{{"seq":2,"type":"tool.result","call_id":"c1","ok":true,"result":{raw}}}\n', encoding="utf-8")
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json", "--no-lint")
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)["violations"][0]["evidence"]["bytes"] == nbytes


def test_run_duration_failed_terminal_duration_ms(tmp_path: Path, cli: Any) -> None:
    """Point 23: the terminal's duration_ms wins (run.failed is a terminal too); evidence end_seq."""
    trace: list[Event] = [{"type": "run.start"}, {"type": "run.failed", "duration_ms": 1001}]
    report = check(tmp_path, cli, [run_rule()], trace)
    assert brief(report, "d") == [("run_duration.exceeded", "fail", 2)]
    assert (evidence(report, "d")["duration_ms"], evidence(report, "d")["end_seq"]) == (1001, 2)


def test_precedence_after_result_uses_its_calls_args(tmp_path: Path, cli: Any) -> None:
    """§3.3: correlate values come from args; a result uses its call's args (and tool, point 3)."""
    rule: Rule = {"id": "p", "kind": "precedence", "before": {"type": "tool.call", "tool": "get"},
                  "after": {"type": "tool.result", "tool": "refund"}, "correlate": [{"before": "id", "after": "order"}]}
    trace = [call("get", "c1", args={"id": "A"}), call("refund", "c2", args={"order": "A"}), res("c2"),
             call("refund", "c3", args={"order": "B"}), res("c3")]
    report = check(tmp_path, cli, [rule], trace)
    assert brief(report, "p") == [("precedence.missing", "fail", 5)]
    assert evidence(report, "p")["key"] == ["B"]


def test_precedence_scope_first_late_then_unchecked(tmp_path: Path, cli: Any) -> None:
    """§3.3 first + point 19: the first after is late; later afters are not checked."""
    rule: Rule = {"id": "p", "kind": "precedence", "before": {"type": "tool.call", "tool": "b"},
                  "after": {"type": "tool.call", "tool": "a"}, "scope": "first"}
    report = check(tmp_path, cli, [rule], calls("a", "b", "a", "a"))
    assert brief(report, "p") == [("precedence.late", "fail", 1)]
    assert result_of(report, "p")["violations"][0]["related_seqs"] == [2]


def test_tool_calls_orphan_result_is_not_a_call(tmp_path: Path, cli: Any) -> None:
    """§3.4 counts calls; an orphan result with its own tool adds no call (point 3)."""
    rule: Rule = {"id": "m", "kind": "tool_calls", "tool": "x", "min": 1, "count": "successful"}
    report = check(tmp_path, cli, [rule], [res("z9", tool="x")])
    assert brief(report, "m") == [("tool_calls.min", "fail", None)]
    assert result_of(report, "m")["checked"] == 0


def test_latency_times_across_offsets(tmp_path: Path, cli: Any) -> None:
    """§3.6: times use the v1 grammar (with offsets): 10:00:00Z to 11:00:01+01:00 is 1000 ms."""
    trace = [call("x", "c1", time="2026-01-01T10:00:00Z"), res("c1", time="2026-01-01T11:00:01+01:00")]
    report = check(tmp_path, cli, [lat(max_ms=999)], trace)
    assert evidence(report, "l")["duration_ms"] == 1000


def test_latency_times_truncated_to_microseconds(tmp_path: Path, cli: Any) -> None:
    """§3.6: times truncated to µs, so 100 ns and 900 ns after the same µs are equal (0 ms)."""
    trace = [call("x", "c1", time="2026-01-01T10:00:00.0000001Z"), res("c1", time="2026-01-01T10:00:00.0000009Z")]
    report = check(tmp_path, cli, [lat(max_ms=1, percentile=100)], trace)
    assert brief(report, "l") == []
