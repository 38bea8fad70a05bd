"""`tool_calls`, tested from the spec's words (spec v2 §0, §3.4 and §10 points 1-7, 16 and 20, with
the decisions of issue 18 for what the spec leaves open) through the CLI on real files: the §3.4
example in its FAIL and PASS variants, `min`, `max` and `max: 0`, `count: successful` with one-to-one
call/result pairing (point 3), `matches_output_length` at the terminal and when it is unresolved,
evidence, `checked`, the order of violations, and the load errors (each one stderr line naming the
contract file and the JSON path of the mistake, exit 2).

Expected values are derived from the spec text, not from running the implementation."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from support import at, refused_line, under, write_contract, write_trace

ABSENT: Any = object()


# -- helpers --------------------------------------------------------------------------------------

def call(tool: Any = "refund", call_id: str | None = None, **extra: Any) -> dict[str, Any]:
    """A `tool.call`; `tool` left out when ABSENT, `call_id` when None."""
    event: dict[str, Any] = {"type": "tool.call"}
    if tool is not ABSENT:
        event["tool"] = tool
    if call_id is not None:
        event["call_id"] = call_id
    return {**event, **extra}


def res(call_id: str, ok: bool | None = True, **extra: Any) -> dict[str, Any]:
    """A `tool.result`; `ok` left out when None."""
    event: dict[str, Any] = {"type": "tool.result", "call_id": call_id}
    if ok is not None:
        event["ok"] = ok
    return {**event, **extra}


def done(output: Any = ABSENT, kind: str = "run.completed") -> dict[str, Any]:
    event: dict[str, Any] = {"type": kind}
    if output is not ABSENT:
        event["output"] = output
    return event


def rule(**fields: Any) -> dict[str, Any]:
    return {"id": "r", "kind": "tool_calls", **fields}


def ev(count: int, count_mode: str = "calls", tool: str = "refund", **optional: Any) -> dict[str, Any]:
    """Evidence: {tool, count, count_mode} and the optional keys given."""
    return {"tool": tool, "count": count, "count_mode": count_mode, **optional}


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

    def single(self, code: str, seq: int | None, status: str = "fail") -> dict[str, Any]:
        """The one violation, `tool_calls.<code>` with `status`, at `seq` (= position + 1) or without one."""
        index = None if seq is None else seq - 1
        assert self.brief() == [(f"tool_calls.{code}", status, seq, index)]
        assert self.exit == 1 and self.result["passed"] is False
        assert "vacuous" not in self.result
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
        write_trace(tmp_path, (call(), done({"refunds": []})))
        return refused_line(cli)
    return _refused



def passes(out: Run, checked: int) -> None:
    assert (out.exit, out.result["passed"], out.violations) == (0, True, []), out.brief()
    assert out.result["checked"] == checked
    assert "vacuous" not in out.result


# -- §3.4: the example ----------------------------------------------------------------------------

EXAMPLE_RULE = {"id": "refunds-match", "kind": "tool_calls", "tool": "refund", "count": "successful",
                "matches_output_length": "refunds"}
EXAMPLE_TRACE = [
    {"seq": 1, "type": "tool.call", "tool": "refund", "call_id": "c1", "args": {"order": "A1"}},
    {"seq": 2, "type": "tool.result", "call_id": "c1", "ok": True},
    {"seq": 3, "type": "tool.call", "tool": "refund", "call_id": "c2", "args": {"order": "A2"}},
    {"seq": 4, "type": "tool.result", "call_id": "c2", "ok": False},
    {"seq": 5, "type": "run.completed", "output": {"refunds": ["A1", "A2"]}},
]


def test_example_fails_with_an_output_mismatch_at_seq_5(run):
    out = run(EXAMPLE_RULE, *EXAMPLE_TRACE)
    violation = out.single("output_mismatch", 5)
    assert violation["evidence"] == ev(1, "successful", path="refunds", output_length=2)
    assert (violation["rule_id"], violation["rule_kind"], violation["severity"]) == (
        "refunds-match", "tool_calls", "error")
    assert violation["message"]
    assert "related_seqs" not in violation
    assert (out.result["rule_id"], out.result["checked"]) == ("refunds-match", 1)
    assert (out.report["passed"], out.report["error_count"], out.report["warning_count"]) == (False, 1, 0)
    assert out.report["violations"] == out.violations


def test_example_passes_when_seq_4_is_ok(run):
    trace = [*EXAMPLE_TRACE[:3], {**EXAMPLE_TRACE[3], "ok": True}, EXAMPLE_TRACE[4]]
    passes(run(EXAMPLE_RULE, *trace), 2)


# -- min ------------------------------------------------------------------------------------------

def test_min_fails_without_a_seq(run):
    out = run(rule(tool="refund", min=2), call(), call("get"), done())
    violation = out.single("min", None)
    assert violation["evidence"] == ev(1, min=2)
    assert out.result["checked"] == 1


def test_min_passes_at_min(run):
    passes(run(rule(tool="refund", min=2), call(), call("get"), call(), done()), 2)


def test_min_0_alone_passes_with_no_calls_and_is_not_vacuous(run):
    passes(run(rule(tool="refund", min=0), call("get"), done()), 0)


@pytest.mark.parametrize("bounds", [{"min": 0}, {"max": 0}, {"min": 0, "max": 2}])
def test_no_call_where_none_is_allowed_passes_strict_without_a_notice(cli, tmp_path, bounds):
    """`--strict` fails a rule that checked nothing unless nothing is its passing state: `max`
    alone was exempt, `min: 0` (none is as fine) failed with `checked_nothing`."""
    write_contract(tmp_path, [rule(tool="refund", **bounds)], 2)
    write_trace(tmp_path, (call("get"), done()))
    result = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--strict")
    assert (result.returncode, result.stderr) == (0, ""), result.stdout


def test_no_calls_is_a_min_violation_not_a_vacuous_pass(run):
    out = run(rule(tool="refund", min=1))
    assert out.single("min", None)["evidence"] == ev(0, min=1)
    assert out.result["checked"] == 0


def test_tool_is_a_glob(run):
    passes(run(rule(tool="pay.*", min=2, max=2), call("pay.card"), call("payment"), call("pay.cash")), 2)


def test_tool_defaults_to_star_which_no_toolless_call_matches(run):
    out = run(rule(min=3), call("a"), call(ABSENT), call("b"), res("x"))
    assert out.single("min", None)["evidence"] == ev(2, tool="*", min=3)
    assert out.result["checked"] == 2


def test_count_calls_named_explicitly(run):
    out = run(rule(tool="refund", min=2, count="calls"), call())
    assert out.single("min", None)["evidence"] == ev(1, "calls", min=2)


# -- max ------------------------------------------------------------------------------------------

def test_max_is_one_violation_at_the_call_after_max(run):
    out = run(rule(tool="refund", max=2), call(), call("get"), call(), call(), call("get"), call())
    violation = out.single("max", 4)
    assert violation["evidence"] == ev(4, max=2)
    assert out.result["checked"] == 4


def test_max_passes_at_max(run):
    passes(run(rule(tool="refund", max=2), call(), call("get"), call()), 2)


def test_max_0_alone_is_valid_and_passes_with_no_calls(run):
    passes(run(rule(tool="refund", max=0), call("get"), done()), 0)


def test_max_0_fails_at_the_first_call_only(run):
    out = run(rule(tool="refund", max=0), call("get"), call(), call())
    assert out.single("max", 2)["evidence"] == ev(2, max=0)
    assert out.result["checked"] == 2


def test_max_with_the_default_tool_skips_toolless_calls(run):
    out = run(rule(max=1), call("a"), call(ABSENT), call("b"))
    assert out.single("max", 3)["evidence"] == ev(2, tool="*", max=1)


def test_min_and_max_together_with_too_few(run):
    out = run(rule(tool="refund", min=1, max=2), call("get"))
    assert out.single("min", None)["evidence"] == ev(0, min=1, max=2)


def test_min_and_max_together_with_too_many(run):
    out = run(rule(tool="refund", min=1, max=2), call(), call(), call())
    assert out.single("max", 3)["evidence"] == ev(3, min=1, max=2)


def test_min_equal_to_max_passes_at_that_count(run):
    passes(run(rule(tool="refund", min=2, max=2), call(), call()), 2)


# -- count: successful (point 20) -----------------------------------------------------------------

def test_successful_counts_results_that_exist_and_are_not_ok_false_and_max_sits_at_the_call(run):
    out = run(rule(tool="refund", count="successful", max=1),
              call(call_id="c1"), res("c1", ok=True),          # counted
              call(call_id="c2"), res("c2", ok=False),         # not counted
              call(call_id="c3"), res("c3", ok=None),          # counted: ok absent
              call(call_id="c4"))                              # not counted: no result
    assert out.single("max", 5)["evidence"] == ev(2, "successful", max=1)
    assert out.result["checked"] == 2


def test_successful_failed_calls_do_not_reach_max(run):
    passes(run(rule(tool="refund", count="successful", max=1),
               call(call_id="c1"), res("c1", ok=False), call(call_id="c2"), res("c2", ok=True),
               call(call_id="c3"), res("c3", ok=False), call(call_id="c4")), 1)


def test_successful_max_sits_at_the_call_even_when_its_result_comes_first(run):
    out = run(rule(tool="refund", count="successful", max=1),
              call(call_id="c1"), call(call_id="c2"), res("c2"), res("c1"))
    assert out.single("max", 2)["evidence"] == ev(2, "successful", max=1)


def test_successful_min_counts_neither_failed_nor_unanswered_calls(run):
    out = run(rule(tool="refund", count="successful", min=2),
              call(call_id="c1"), res("c1", ok=False), call(call_id="c2"), call(call_id="c3"), res("c3"), done())
    assert out.single("min", None)["evidence"] == ev(1, "successful", min=2)
    assert out.result["checked"] == 1


# -- pairing (point 3) ----------------------------------------------------------------------------

def test_a_result_answers_the_nearest_earlier_unanswered_call_with_its_id(run):
    out = run(rule(tool="refund", count="successful", max=0), call(call_id="x"), call(call_id="x"), res("x"))
    assert out.single("max", 2)["evidence"] == ev(1, "successful", max=0)
    assert out.result["checked"] == 1


def test_repeated_call_ids_pair_one_to_one(run):
    out = run(rule(tool="refund", count="successful", max=0),
              call(call_id="x"), call(call_id="x"), res("x", ok=False), res("x", ok=True))
    assert out.single("max", 1)["evidence"] == ev(1, "successful", max=0)


def test_a_result_pairs_with_the_nearest_call_of_its_id_whatever_the_tool(run):
    out = run(rule(tool="refund", count="successful", min=1), call(call_id="x"), call("get", call_id="x"), res("x"))
    assert out.single("min", None)["evidence"] == ev(0, "successful", min=1)


def test_a_result_before_its_call_answers_nothing(run):
    out = run(rule(tool="refund", count="successful", min=1), res("x", tool="refund"), call(call_id="x"))
    assert out.single("min", None)["evidence"] == ev(0, "successful", min=1)
    assert out.result["checked"] == 0


def test_a_paired_results_own_tool_is_ignored(run):
    passes(run(rule(tool="refund", count="successful", min=1, max=1), call(call_id="c1"), res("c1", tool="get")), 1)


def test_results_are_not_calls(run):
    out = run(rule(tool="get", min=1), call(call_id="c1"), res("c1", tool="get"), res("c9", tool="get"))
    assert out.single("min", None)["evidence"] == ev(0, tool="get", min=1)


# -- matches_output_length ------------------------------------------------------------------------

def test_output_length_equal_to_the_count_passes(run):
    passes(run(rule(tool="refund", matches_output_length="items"), call(), call("get"), call(),
               done({"items": ["a", "b"]})), 2)


def test_output_length_mismatch_sits_at_the_terminal(run):
    out = run(rule(tool="refund", matches_output_length="items"), call(), call(), done({"items": [1]}))
    assert out.single("output_mismatch", 3)["evidence"] == ev(2, path="items", output_length=1)
    assert out.result["checked"] == 2


def test_no_calls_and_an_empty_array_pass(run):
    passes(run(rule(tool="refund", matches_output_length="items"), call("get"), done({"items": []})), 0)


def test_the_terminal_is_the_last_run_completed_or_run_failed(run):
    passes(run(rule(tool="refund", matches_output_length="items"),
               call(), done({"items": [1, 2]}), done({"items": [1]}, kind="run.failed")), 1)
    out = run(rule(tool="refund", matches_output_length="items"),
              call(), done({"items": [1]}, kind="run.failed"), done({"items": [1, 2]}), {"type": "message"})
    assert out.single("output_mismatch", 3)["evidence"] == ev(1, path="items", output_length=2)


def test_run_failed_carries_the_final_output(run):
    out = run(rule(tool="refund", matches_output_length="items"), call(), done({"items": [1, 2]}, kind="run.failed"))
    assert out.single("output_mismatch", 2)["evidence"] == ev(1, path="items", output_length=2)


@pytest.mark.parametrize(("path", "output"), [
    ("data.items", {"data": {"items": [1, 2]}}),
    ("/data/items", {"data": {"items": [1, 2]}}),
    ("pages.1", {"pages": [[1], [1, 2]]}),
    ("/a~1b", {"a/b": [1, 2]}),
    ("/", {"": [1, 2]}),
], ids=["dot", "pointer", "index", "pointer-escape", "empty-key"])
def test_the_path_is_a_dot_path_or_a_pointer(run, path, output):
    passes(run(rule(tool="refund", matches_output_length=path), call(), call(), done(output)), 2)


@pytest.mark.parametrize("terminal", [
    done(), done(None), done({"other": [1]}), done({"items": "ab"}), done({"items": {"0": 1}}),
    done({"items": None}), done([1]),
], ids=["no-output", "null-output", "path-absent", "string", "object", "null", "array-output"])
def test_output_unresolved_at_the_terminal(run, terminal):
    out = run(rule(tool="refund", matches_output_length="items"), call(), terminal)
    violation = out.single("output_unresolved", 2, status="unresolved")
    assert violation["evidence"] == ev(1, path="items")
    assert out.report["error_count"] == 1


def test_output_unresolved_without_a_terminal_has_no_seq(run):
    out = run(rule(tool="refund", matches_output_length="items"), call(), {"type": "message"})
    assert out.single("output_unresolved", None, status="unresolved")["evidence"] == ev(1, path="items")
    assert out.result["checked"] == 1


def test_an_empty_trace_is_output_unresolved(run):
    out = run(rule(tool="refund", matches_output_length="items"))
    assert out.single("output_unresolved", None, status="unresolved")["evidence"] == ev(0, path="items")
    assert out.result["checked"] == 0


# -- several violations (point 5) -----------------------------------------------------------------

def test_a_located_violation_comes_before_min(run):
    out = run(rule(tool="refund", min=2, matches_output_length="items"), call(), done({"items": [1, 2]}))
    assert out.brief() == [("tool_calls.output_mismatch", "fail", 2, 1), ("tool_calls.min", "fail", None, None)]
    mismatch, too_few = (v["evidence"] for v in out.violations)
    assert (mismatch["count"], mismatch["output_length"], too_few["count"], too_few["min"]) == (1, 2, 1, 2)


def test_max_then_output_mismatch_in_trace_order(run):
    out = run(rule(tool="refund", max=1, matches_output_length="items"), call(), call(), done({"items": [1]}))
    assert out.brief() == [("tool_calls.max", "fail", 2, 1), ("tool_calls.output_mismatch", "fail", 3, 2)]
    too_many, mismatch = (v["evidence"] for v in out.violations)
    assert (too_many["count"], too_many["max"], mismatch["count"], mismatch["output_length"]) == (2, 1, 2, 1)


def test_max_alone_when_the_output_length_agrees(run):
    out = run(rule(tool="refund", max=1, matches_output_length="items"), call(), call(), done({"items": [1, 2]}))
    assert out.single("max", 2)["evidence"]["count"] == 2


def test_a_warning_rule_counts_an_unresolved_output_as_a_warning(run):
    out = run(rule(tool="refund", matches_output_length="items", severity="warning"), call(), done())
    (violation,) = out.violations
    assert (violation["code"], violation["status"], violation["severity"]) == (
        "tool_calls.output_unresolved", "unresolved", "warning")
    assert (out.exit, out.result["passed"], out.report["error_count"], out.report["warning_count"]) == (0, False, 0, 1)


# -- load errors ----------------------------------------------------------------------------------

def test_min_above_max_is_refused(refused):
    line = refused(rule(tool="refund", min=3, max=2))
    assert under(line, "$.rules[0]") and "min" in line and "max" in line


def test_a_rule_with_none_of_min_max_matches_output_length_is_refused(refused):
    line = refused(rule(tool="refund", count="successful"))
    assert under(line, "$.rules[0]")
    assert all(field in line for field in ("min", "max", "matches_output_length"))


@pytest.mark.parametrize(("field", "value"), [("min", -1), ("max", 1_000_001), ("min", 1.5), ("max", "2"),
                                              ("min", True), ("max", None)],
                         ids=["negative", "above-1e6", "fraction", "string", "boolean", "null"])
def test_a_bound_that_is_not_an_integer_0_to_1e6_is_refused(refused, field, value):
    assert at(refused(rule(tool="refund", **{field: value})), f"$.rules[0].{field}")


def test_bounds_of_0_and_1e6_load(run):
    passes(run(rule(tool="refund", min=0, max=1_000_000), call()), 1)


@pytest.mark.parametrize("path", ["", "a..b", "a.", 5, None], ids=["empty", "empty-segment", "trailing-dot",
                                                               "number", "null"])
def test_a_bad_path_is_refused(refused, path):
    assert at(refused(rule(tool="refund", matches_output_length=path)), "$.rules[0].matches_output_length")


@pytest.mark.parametrize("count", ["all", 1])
def test_an_unknown_count_is_refused(refused, count):
    assert at(refused(rule(tool="refund", min=1, count=count)), "$.rules[0].count")


def test_an_empty_tool_is_refused(refused):
    assert at(refused(rule(tool="", min=1)), "$.rules[0].tool")


def test_an_unknown_field_is_refused(refused):
    assert at(refused(rule(tool="refund", min=1, maximum=2)), "$.rules[0].maximum")


def test_tool_calls_in_a_version_1_contract_needs_version_2(refused):
    line = refused(rule(tool="refund", max=1), version=1)
    assert 'needs "version": 2' in line and under(line, "$.rules[0]")
