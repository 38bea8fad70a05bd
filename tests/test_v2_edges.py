"""Edges of the version-2 kinds found by reading them against the spec: each once a crash or a
wrong answer."""
from __future__ import annotations

import json
from typing import Any

from support import jsonl


def _check(cli, tmp_path, rules: list[dict[str, Any]], events: list[dict[str, Any]], *extra: str):
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "edges", "rules": rules}))
    (tmp_path / "t.jsonl").write_text(jsonl([{"seq": i + 1, **event} for i, event in enumerate(events)]))
    return cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json", *extra)


def test_a_numeric_correlate_key_is_shown_as_javascript_writes_it(cli, tmp_path):
    rule = {"id": "p", "kind": "precedence", "before": {"type": "tool.call", "tool": "get"},
            "after": {"type": "tool.call", "tool": "refund"}, "correlate": ["id"]}
    for value, shown in ((1e21, "[1e+21]"), (0.000001, "[0.000001]"), (12345678901234567890, "[12345678901234567000]")):
        result = _check(cli, tmp_path, [rule], [{"type": "tool.call", "tool": "refund", "args": {"id": value}}])
        assert result.returncode == 1, result.stderr
        (violation,) = json.loads(result.stdout)["violations"]
        assert violation["code"] == "precedence.missing"
        assert f"for key {shown} before it" in violation["message"]


def test_tool_calls_lists_its_violations_without_an_event_in_the_order_of_its_codes(cli, tmp_path):
    rule = {"id": "r", "kind": "tool_calls", "tool": "refund", "min": 2, "matches_output_length": "refunds"}
    result = _check(cli, tmp_path, [rule], [{"type": "tool.call", "tool": "refund", "call_id": "c1"}])
    assert [v["code"] for v in json.loads(result.stdout)["violations"]] == ["tool_calls.min",
                                                                          "tool_calls.output_unresolved"]


def test_a_tool_calls_rule_with_only_max_passes_quietly_when_the_tool_is_never_called(cli, tmp_path):
    result = _check(cli, tmp_path, [{"id": "never-delete", "kind": "tool_calls", "tool": "delete", "max": 0}],
                    [{"type": "tool.call", "tool": "get", "call_id": "c1"}])
    assert (result.returncode, result.stderr) == (0, "")


def test_an_offset_is_its_hours_and_minutes_added_up_and_names_no_instant_from_24_hours(cli, tmp_path):
    # §3.6 and point 23: only an offset of 24 hours or more is unresolved; +05:99 is 6 h 39 min
    rule = {"id": "a", "kind": "approval_bound", "tool": "refund", "max_age_ms": 1000}
    for granted, called, why in (("+05:99", "+06:39", None), ("+00:60", "+01:00", None), ("+05:30", "+05:30", None),
                                 ("+23:60", "+23:60", "time_missing"), ("+24:00", "+23:59", "time_missing"),
                                 ("+00:60", "+00:59", "expired")):
        result = _check(cli, tmp_path, [rule], [
            {"type": "approval.granted", "tool": "refund", "time": f"2024-01-01T00:00:00{granted}"},
            {"type": "tool.call", "tool": "refund", "call_id": "c1", "time": f"2024-01-01T00:00:00{called}"}])
        violations = json.loads(result.stdout)["violations"]
        assert [v["evidence"]["rejected"][0]["why"] for v in violations] == ([why] if why else [])


def test_a_failure_handled_by_a_message_stays_handled_when_a_later_retry_fails(cli, tmp_path):
    rule = {"id": "h", "kind": "failure_handled", "tool": "search", "within_events": 2, "retry_succeeds": True}
    events = [{"type": "tool.call", "tool": "search", "call_id": "s1"},
              {"type": "tool.result", "call_id": "s1", "ok": False},
              {"type": "tool.call", "tool": "search", "call_id": "s2"},
              {"type": "agent.message"}, {"type": "agent.message"},
              {"type": "tool.result", "call_id": "s2", "ok": False},
              {"type": "agent.message"}, {"type": "agent.message"}]
    result = _check(cli, tmp_path, [rule], events)
    # seq 2's failure was handled by the message at seq 4, whatever its retry did; the retry's own
    # failure (seq 6) by the message at seq 7
    assert (result.returncode, json.loads(result.stdout)["violations"]) == (0, [])


def test_a_tool_call_of_a_message_type_handles_a_failure(cli, tmp_path):
    rule = {"id": "h", "kind": "failure_handled", "tool": "search", "within_events": 2, "by": "message",
            "message_types": ["tool.call"]}
    events = [{"type": "tool.call", "tool": "search", "call_id": "s1"},
              {"type": "tool.result", "call_id": "s1", "ok": False},
              {"type": "tool.call", "tool": "notify", "call_id": "n1"},
              {"type": "run.completed"}]
    result = _check(cli, tmp_path, [rule], events)
    assert (result.returncode, json.loads(result.stdout)["violations"]) == (0, [])


def test_rules_whose_passing_state_is_to_check_nothing_pass_quietly_under_strict(cli, tmp_path):
    rules = [{"id": "h", "kind": "failure_handled", "within_events": 2},
             {"id": "o", "kind": "output_match", "match": {"total": 1}, "when": {"path": "total", "equals": 2}}]
    events = [{"type": "tool.call", "tool": "search", "call_id": "s1"},
              {"type": "tool.result", "call_id": "s1", "ok": True},
              {"type": "run.completed", "output": {"total": 1}}]
    result = _check(cli, tmp_path, rules, events, "--strict")
    assert (result.returncode, result.stderr) == (0, "")
    assert [(r["checked"], r.get("vacuous")) for r in json.loads(result.stdout)["results"]] == [(0, True), (0, None)]


def test_a_rule_that_checked_nothing_stays_vacuous_when_strict_fails_it(cli, tmp_path):
    """Found by a spec-words reading of the report rules: point 4 says `vacuous: true` when
    `checked` is 0; under --strict such a rule fails with `checked_nothing`, and lost `vacuous`.
    A version-1 kind never has it (its report is the Node tool's)."""
    rules = [{"id": "ta", "kind": "tool_args", "tool": "zzz", "match": {"a": 1}},
             {"id": "r", "kind": "tool_result_required", "tool": "zzz"}]
    events = [{"type": "agent.message"}]
    result = _check(cli, tmp_path, rules, events, "--strict")
    assert result.returncode == 1, result.stderr
    assert [(r["passed"], r["checked"], r.get("vacuous")) for r in json.loads(result.stdout)["results"]] == [
        (False, 0, True), (False, 0, None)]


def test_output_schema_walks_an_output_as_deep_as_a_trace_may_hold(cli, tmp_path):
    schema = {"type": "object", "properties": {"a": {"$ref": "#"}}}
    deep: dict[str, Any] = {}
    for _ in range(400):
        deep = {"a": deep}
    result = _check(cli, tmp_path, [{"id": "s", "kind": "output_schema", "schema": schema}],
                    [{"type": "run.completed", "output": deep}])
    assert (result.returncode, json.loads(result.stdout)["violations"]) == (0, [])


def test_a_duration_too_large_for_a_double_is_bad_input(cli, tmp_path):
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "x", "rules": [
        {"id": "d", "kind": "run_duration", "max_ms": 1}]}))
    (tmp_path / "t.jsonl").write_text('{"seq": 1, "type": "run.completed", "duration_ms": 1' + "0" * 400 + "}\n")
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl")
    assert (result.returncode, result.stdout) == (2, "")
    assert "t.jsonl:1" in result.stderr and "$.duration_ms" in result.stderr and "Traceback" not in result.stderr


def test_a_report_with_javascript_numbers_in_its_evidence_becomes_plain_data_as_the_readme_says():
    import msgspec

    from agent_invariants import check_trace
    from agent_invariants.render.json import to_json

    contract = {"version": 2, "name": "n", "rules": [{"id": "r", "kind": "tool_args", "tool": "t", "match": {"n": 0}}]}
    report = check_trace(contract, [{"seq": 1, "type": "tool.call", "tool": "t", "args": {"n": 1e21}}])
    plain = msgspec.to_builtins(report, enc_hook=float)
    (entry,) = plain["violations"][0]["evidence"]["mismatches"]
    assert (entry["actual"], type(entry["actual"])) == (1e21, float)
    assert '"actual":1e+21' in to_json(report).replace(" ", "")


def test_a_denial_answers_the_nearest_call_with_its_id_that_no_denial_answered_yet():
    from msgspec import UNSET

    from agent_invariants import check_trace

    rules = [{"id": "at-most-0", "kind": "tool_calls", "tool": "x", "max": 0},
             {"id": "no-x", "kind": "tool_args", "tool": "x", "match": {"a": 1}}]
    contract = {"version": 2, "name": "n", "rules": rules}
    events = [{"seq": 1, "type": "tool.call", "tool": "x", "call_id": "c", "args": {"a": 2}},   # answered by seq 2
              {"seq": 2, "type": "tool.result", "tool": "x", "call_id": "c"},
              {"seq": 3, "type": "tool.call", "tool": "x", "call_id": "c", "args": {"a": 3}},   # the second denial
              {"seq": 4, "type": "tool.call", "tool": "x", "call_id": "c", "args": {"a": 4}},   # the first denial
              {"seq": 5, "type": "tool.denied", "tool": "x", "call_id": "c"},
              {"seq": 6, "type": "tool.denied", "tool": "x", "call_id": "c"},
              {"seq": 7, "type": "tool.call", "tool": "x", "call_id": "d", "args": {"a": 5}}]   # never denied
    report = check_trace(contract, events)
    marked = [(v.rule_id, v.event_seq, v.prevented) for v in report.violations]
    assert marked == [("at-most-0", 1, UNSET),
                      ("no-x", 1, UNSET), ("no-x", 3, True), ("no-x", 4, True), ("no-x", 7, UNSET)]
    version_1 = check_trace({**contract, "version": 1, "rules": [{"id": "no-x", "kind": "deny_tool", "tool": "x"}]},
                            events)
    assert [(v.event_seq, v.prevented) for v in version_1.violations] == [(seq, UNSET) for seq in (1, 3, 4, 7)]


def test_the_globs_of_a_reference_and_of_a_condition_are_trimmed_as_every_glob(cli, tmp_path):
    """README: "Globs are trimmed and must be 1..500 characters": `$from_result`'s `tool` and a
    condition's `outcome_id` too (" get " finds the results of get; " o " the outcome o)."""
    events = [{"seq": 1, "type": "tool.call", "tool": "get", "call_id": "g", "args": {}},
              {"seq": 2, "type": "tool.result", "call_id": "g", "ok": True, "result": {"total": 5}},
              {"seq": 3, "type": "outcome.observed", "outcome_id": "o", "verdict": "violated"},
              {"seq": 4, "type": "tool.call", "tool": "refund", "call_id": "r", "args": {"amount": 5}}]
    rules = [{"id": "same", "kind": "tool_args", "tool": "refund",
              "match": {"amount": {"$from_result": {"tool": " get ", "path": "total"}}}},
             {"id": "no-refund", "kind": "forbidden_when", "tool": "refund",
              "when": {"outcome": {"outcome_id": " o ", "verdict": "violated"}}}]
    result = _check(cli, tmp_path, rules, events)
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert [(v["rule_id"], v["code"]) for v in report["violations"]] == [("no-refund", "forbidden_when.forbidden")]
    assert [r["passed"] for r in report["results"]] == [True, False]
