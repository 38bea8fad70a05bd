"""`mutate`, read a second time from the spec alone: v2 §6 and §10 points 56-66.

Every test names the sentence or point it checks ("56" means point 10.56). The CLI runs in a
subprocess; `--show-mutant ID` (the documented way to see one mutant) shows replacement values,
positions, seq and time. Traces are a handful of events, so each run is quick.
"""
from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from support import write_contract, write_trace

Event = dict[str, Any]
Report = dict[str, Any]
Rules = list[dict[str, Any]]

NOTHING: Rules = [{"id": "budget", "kind": "event_budget", "max_events": 100_000}]
"""A rule that kills no mutant of these small traces."""

T = [f"2026-01-01T10:00:0{i}Z" for i in range(10)]
"""Distinct times, so positions can be told apart by time."""

# A trace holding a site of all sixteen operators (§6 table, point 57).
MIXED: list[Event] = [
    {"seq": 1, "type": "run.start"},
    {"seq": 2, "type": "approval.granted", "tool": "pay", "approval_id": "g1", "call_id": "p1",
     "args": {"amt": 5, "memo": None, "to": "bob"}},
    {"seq": 3, "type": "tool.call", "tool": "get", "call_id": "c1", "args": {"id": "A1"}},
    {"seq": 4, "type": "tool.result", "call_id": "c1", "ok": True, "result": {"paid": 5}},
    {"seq": 5, "type": "tool.call", "tool": "pay", "call_id": "p1", "approval_id": "g1",
     "args": {"amt": 5, "memo": None, "to": "bob"}},
    {"seq": 6, "type": "tool.result", "call_id": "p1", "ok": True, "duration_ms": 0},
    {"seq": 7, "type": "agent.message"},
    {"seq": 8, "type": "telemetry.tick"},
    {"seq": 9, "type": "tool.result", "call_id": "zz", "ok": True},
    {"seq": 10, "type": "tool.call", "tool": "get", "call_id": "c2", "args": {"id": "A2"}},
    {"seq": 11, "type": "tool.result", "call_id": "c2", "ok": False, "result": {"paid": 6}},
    {"seq": 12, "type": "control.stop", "reason": "user"},
    {"seq": 13, "type": "approval.revoked", "approval_id": "g1"},
    {"seq": 14, "type": "outcome.observed", "outcome_id": "o", "verdict": "satisfied",
     "evidence_class": "externally_observed"},
    {"seq": 15, "type": "outcome.observed", "outcome_id": "o2", "verdict": "violated",
     "evidence_class": "self_attestation"},
    {"seq": 16, "type": "run.completed", "output": [True, "s", None, {}, [], 3], "duration_ms": 40},
]

MIXED_IDS = [
    "drop_event:1",
    "drop_approval:2", "move_approval_after:2", "rebind_approval:2:call_id", "rebind_approval:2:/amt",
    "rebind_approval:2:/to",
    "drop_call:3", "swap_calls:3", "change_arg:3:/id", "duplicate_call:3", "inflate_retries:3",
    "flip_ok:4",
    "drop_call:5", "swap_calls:5", "change_arg:5:/amt", "change_arg:5:/to", "duplicate_call:5", "inflate_retries:5",
    "flip_ok:6",
    "drop_event:7",
    "drop_event:8",
    "drop_event:9", "flip_ok:9",
    "drop_call:10", "change_arg:10:/id", "duplicate_call:10", "inflate_retries:10",
    "flip_ok:11", "stale_result:11",
    "drop_event:12", "stop_earlier:12",
    "drop_event:13",
    "drop_outcome:14", "degrade_outcome:14:verdict", "degrade_outcome:14:evidence_class",
    "drop_outcome:15",
    "drop_event:16", "misreport_output:16", "misreport_output:16:/0", "misreport_output:16:/1",
    "misreport_output:16:/5", "inflate_duration:16",
]

HINTS = {
    "drop_call": "tool_order, tool_calls, precedence, required_when",
    "drop_event": "require_event, require_order, failure_handled",
    "swap_calls": "tool_order, precedence",
    "change_arg": "tool_args",
    "duplicate_call": "tool_calls, distinct, retry_limit",
    "drop_approval": "require_approval, approval_bound",
    "move_approval_after": "require_approval, approval_bound",
    "rebind_approval": "require_approval, approval_bound",
    "stop_earlier": "stop_is_final",
    "flip_ok": "failure_handled, successful counts",
    "drop_outcome": "completion rules, conditions",
    "degrade_outcome": "completion rules, conditions",
    "inflate_retries": "retry_limit, event_budget",
    "stale_result": "$from_result rules",
    "misreport_output": "output_match, output length",
    "inflate_duration": "latency and run budgets",
}
"""§6's "killed by" cells, as point 66 makes them the hints (markdown backticks dropped)."""

# A call, its result and a completed run: five mutants (drop_call:1, duplicate_call:1,
# inflate_retries:1, flip_ok:2, drop_event:3).
SIMPLE: list[Event] = [
    {"type": "tool.call", "tool": "a", "call_id": "c1"},
    {"type": "tool.result", "call_id": "c1", "ok": True},
    {"type": "run.completed", "status": "completed"},
]
SIMPLE_IDS = ["drop_call:1", "duplicate_call:1", "inflate_retries:1", "flip_ok:2", "drop_event:3"]
AUTO_CONTROL_FOR_SIMPLE: dict[str, Any] = {
    "version": 2, "name": "spec (control)", "rules": [
        {"id": "control.status", "kind": "run_status", "equals": "completed"},
        {"id": "control.calls.1", "kind": "tool_calls", "tool": "a", "min": 1},
    ]}


# -- helpers ----------------------------------------------------------------------------------------

def given(tmp_path: Path, rules: Rules, trace: list[Any], version: int = 2) -> None:
    """`c.json` holding `rules` and `t.jsonl` holding `trace` (events, or raw lines) in the test's folder."""
    write_contract(tmp_path, rules, version)
    write_trace(tmp_path, trace)


def mutate(cli: Cli, *extra: str) -> subprocess.CompletedProcess[str]:
    return cli("mutate", "--contract", "c.json", "--trace", "t.jsonl", *extra)


def report(cli: Cli, *extra: str, code: int = 0) -> Report:
    """The JSON report of a run that must exit with `code`."""
    result = mutate(cli, "--format", "json", *extra)
    assert result.returncode == code, result.stderr
    data: Report = json.loads(result.stdout)
    return data


def ids(data: Report) -> list[str]:
    return [m["id"] for m in data["mutants"]]


def entry(data: Report, mutant_id: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = [m for m in data["mutants"] if m["id"] == mutant_id]
    assert len(found) == 1, ids(data)
    return found[0]


def status(data: Report, mutant_id: str) -> str:
    value: str = entry(data, mutant_id)["status"]
    return value


def shown(cli: Cli, mutant_id: str, *extra: str) -> list[Event]:
    """The events of one mutant, as `--show-mutant` prints them."""
    result = mutate(cli, "--show-mutant", mutant_id, *extra)
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def refused(cli: Cli, *extra: str) -> str:
    """Point 56: exit 2, nothing on stdout, one stderr line (returned)."""
    result = mutate(cli, "--format", "json", *extra)
    assert (result.returncode, result.stdout) == (2, ""), result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert "Traceback" not in result.stderr
    return lines[0]


def without(event: Event, *keys: str) -> Event:
    return {k: v for k, v in event.items() if k not in keys}


# -- point 56: the passing precondition and bad input ------------------------------------------------

def test_failing_trace_is_refused_naming_the_failing_rules(tmp_path: Path, cli: Cli) -> None:
    """56: T must pass C; otherwise exit 2 with one stderr line naming the failing rule ids."""
    given(tmp_path, [{"id": "one", "kind": "run_status", "equals": "failed"},
                     {"id": "two", "kind": "deny_tool", "tool": "a"},
                     {"id": "three", "kind": "tool_calls", "tool": "zzz", "min": 0}], SIMPLE)
    line = refused(cli)
    assert "one" in line and "two" in line and "three" not in line


def test_warnings_do_not_break_the_precondition(tmp_path: Path, cli: Cli) -> None:
    """56: T passes when check would exit 0 (warnings allowed)."""
    given(tmp_path, [{"id": "soft", "kind": "deny_tool", "tool": "a", "severity": "warning"}], SIMPLE)
    assert report(cli)["schema"] == "agent-invariants/mutate/v1"


def test_contract_with_lint_errors_is_refused(tmp_path: Path, cli: Cli) -> None:
    """56: a version-2 contract with lint errors is refused as by check."""
    given(tmp_path, [{"id": "no-a", "kind": "deny_tool", "tool": "a"},
                     {"id": "must-a", "kind": "tool_calls", "tool": "a", "min": 1}], SIMPLE)
    assert "lint" in refused(cli)


def test_no_lint_uses_the_contract_then_needs_a_passing_trace(tmp_path: Path, cli: Cli) -> None:
    """56: "unless --no-lint": the contract is used, and T (which calls a denied tool) fails it."""
    given(tmp_path, [{"id": "no-a", "kind": "deny_tool", "tool": "a"},
                     {"id": "must-a", "kind": "tool_calls", "tool": "a", "min": 1}], SIMPLE)
    line = refused(cli, "--no-lint")
    assert "no-a" in line and "lint" not in line


def test_invalid_contract_is_refused(tmp_path: Path, cli: Cli) -> None:
    """56: an invalid contract exits 2."""
    given(tmp_path, NOTHING, SIMPLE)
    (tmp_path / "c.json").write_text('{"version": 2, "name": "spec", "rules": []}', encoding="utf-8")
    refused(cli)


def test_invalid_trace_is_refused(tmp_path: Path, cli: Cli) -> None:
    """56: an invalid trace exits 2."""
    given(tmp_path, NOTHING, [{"type": "run.completed"}, "{not json"])
    assert "t.jsonl" in refused(cli)


def test_trace_invalid_for_version_2_is_refused(tmp_path: Path, cli: Cli) -> None:
    """56 with §0: new fields are type-checked under v2 (args must be an object)."""
    given(tmp_path, NOTHING, [{"type": "tool.call", "tool": "a", "args": "raw"}])
    refused(cli)


def test_invalid_control_is_refused(tmp_path: Path, cli: Cli) -> None:
    """56: an invalid control exits 2."""
    given(tmp_path, NOTHING, SIMPLE)
    (tmp_path / "c0.json").write_text('{"version": 2, "name": "c0"}', encoding="utf-8")
    refused(cli, "--control", "c0.json")


def test_control_the_trace_fails_is_refused_naming_its_rules(tmp_path: Path, cli: Cli) -> None:
    """56: a --control that T does not pass exits 2, naming the failing rule ids."""
    given(tmp_path, NOTHING, SIMPLE)
    control = {"version": 2, "name": "c0", "rules": [{"id": "ctl-status", "kind": "run_status", "equals": "failed"},
                                                      {"id": "ctl-ok", "kind": "tool_calls", "tool": "a", "min": 1}]}
    (tmp_path / "c0.json").write_text(json.dumps(control), encoding="utf-8")
    line = refused(cli, "--control", "c0.json")
    assert "ctl-status" in line and "ctl-ok" not in line


def test_control_with_only_warnings_is_accepted(tmp_path: Path, cli: Cli) -> None:
    """56: passing means check exits 0, warnings allowed; this holds for the control too."""
    given(tmp_path, NOTHING, SIMPLE)
    control = {"version": 2, "name": "c0",
               "rules": [{"id": "soft", "kind": "run_status", "equals": "failed", "severity": "warning"}]}
    (tmp_path / "c0.json").write_text(json.dumps(control), encoding="utf-8")
    assert report(cli, "--control", "c0.json")["control"]["auto"] is False


def test_unknown_rewrite_name_is_refused(tmp_path: Path, cli: Cli) -> None:
    """56: an unknown --no-rewrite name exits 2."""
    given(tmp_path, NOTHING, SIMPLE)
    assert "bogus" in refused(cli, "--no-rewrite", "bogus")


def test_min_score_above_1_is_refused(tmp_path: Path, cli: Cli) -> None:
    """63: `--min-score X (0…1)`; anything else is bad input (66: exit 2)."""
    given(tmp_path, NOTHING, SIMPLE)
    result = mutate(cli, "--min-score", "1.5")
    assert (result.returncode, result.stdout) == (2, "")


# -- point 57 (with 61's order): where each operator applies -----------------------------------------

def test_every_site_of_a_mixed_trace_in_order(tmp_path: Path, cli: Cli) -> None:
    """57 (every site of every operator) and 61 (order by site position, then §6 row, then detail)."""
    given(tmp_path, NOTHING, MIXED)
    assert ids(report(cli)) == MIXED_IDS


def test_tool_less_call_gets_no_inflate_retries(tmp_path: Path, cli: Cli) -> None:
    """57: drop_call and duplicate_call apply to every tool.call, inflate_retries only to one with a tool."""
    given(tmp_path, NOTHING, [{"type": "tool.call", "call_id": "c1"}])
    assert ids(report(cli)) == ["drop_call:1", "duplicate_call:1"]


def test_drop_call_removes_the_paired_result(tmp_path: Path, cli: Cli) -> None:
    """57: drop_call removes the call with its paired result (§10.3), and only those."""
    given(tmp_path, NOTHING, [{"type": "tool.call", "tool": "a", "call_id": "c1"},
                              {"type": "agent.message"},
                              {"type": "tool.result", "call_id": "c1", "ok": True}])
    assert [e["type"] for e in shown(cli, "drop_call:1")] == ["agent.message"]


def test_drop_call_without_a_result_removes_only_the_call(tmp_path: Path, cli: Cli) -> None:
    """57: "with its paired result, if any"."""
    given(tmp_path, NOTHING, [{"type": "tool.call", "tool": "a", "call_id": "c1"},
                              {"type": "tool.result", "call_id": "other", "ok": True}])
    assert [e["call_id"] for e in shown(cli, "drop_call:1")] == ["other"]


def test_result_pairs_one_to_one_so_a_repeated_call_id_leaves_an_orphan(tmp_path: Path, cli: Cli) -> None:
    """57 with §10.3: a second result of the same call_id is an orphan, so a drop_event site."""
    given(tmp_path, NOTHING, [{"type": "tool.call", "tool": "a", "call_id": "c1"},
                              {"type": "tool.result", "call_id": "c1", "ok": True},
                              {"type": "tool.result", "call_id": "c1", "ok": True}])
    assert [i for i in ids(report(cli)) if i.startswith("drop_")] == ["drop_call:1", "drop_event:3"]


def test_approval_granted_and_outcomes_are_no_drop_event_sites(tmp_path: Path, cli: Cli) -> None:
    """57: drop_event skips approval.granted (even approved false) and outcome.observed."""
    given(tmp_path, NOTHING, [{"type": "approval.granted", "approved": False, "tool": "x"},
                              {"type": "outcome.observed", "outcome_id": "o", "verdict": "violated",
                               "evidence_class": "self_attestation"},
                              {"type": "approval.requested"}])
    assert ids(report(cli)) == ["drop_approval:1", "drop_outcome:2", "drop_event:3"]


def test_move_approval_after_needs_a_later_own_call(tmp_path: Path, cli: Cli) -> None:
    """57: move_approval_after applies to a grant with an own call (a later call of its tool)."""
    given(tmp_path, NOTHING, [{"type": "tool.call", "tool": "pay", "call_id": "c1"},
                              {"type": "approval.granted", "tool": "pay"},
                              {"type": "approval.granted", "tool": "other"}])
    assert [i for i in ids(report(cli)) if "approval" in i] == ["drop_approval:2", "drop_approval:3"]


def test_own_call_matches_call_id_where_the_grant_has_one(tmp_path: Path, cli: Cli) -> None:
    """57: the own call is the first later call whose tool and call_id equal the grant's; 59: the grant
    lands directly after it."""
    given(tmp_path, NOTHING, [{"type": "approval.granted", "tool": "pay", "call_id": "p2"},
                              {"type": "tool.call", "tool": "pay", "call_id": "p1"},
                              {"type": "tool.call", "tool": "pay", "call_id": "p2"},
                              {"type": "tool.call", "tool": "pay", "call_id": "p3"}])
    events = shown(cli, "move_approval_after:1")
    assert [(e["type"], e["call_id"]) for e in events] == [
        ("tool.call", "p1"), ("tool.call", "p2"), ("approval.granted", "p2"), ("tool.call", "p3")]


def test_own_call_matches_approval_id_where_the_grant_has_one(tmp_path: Path, cli: Cli) -> None:
    """57: "... tool, call_id and approval_id equal the grant's wherever the grant has them"."""
    given(tmp_path, NOTHING, [{"type": "approval.granted", "approval_id": "g2"},
                              {"type": "tool.call", "tool": "pay", "call_id": "c1", "approval_id": "g1"},
                              {"type": "tool.call", "tool": "mail", "call_id": "c2", "approval_id": "g2"}])
    events = shown(cli, "move_approval_after:1")
    assert [e["type"] for e in events] == ["tool.call", "tool.call", "approval.granted"]


def test_rebind_sites_are_call_id_then_scalar_arg_leaves(tmp_path: Path, cli: Cli) -> None:
    """57 and 61: rebind_approval at the grant's call_id, then each scalar args leaf in document order
    (null leaves are no sites, 58); pointers reach nested leaves."""
    given(tmp_path, NOTHING, [{"type": "approval.granted", "call_id": "g", "tool": "x",
                               "args": {"z": None, "a": {"b": [1, "s"]}, "c": True}}])
    assert ids(report(cli)) == ["drop_approval:1", "rebind_approval:1:call_id", "rebind_approval:1:/a/b/0",
                                "rebind_approval:1:/a/b/1", "rebind_approval:1:/c"]


def test_stop_earlier_needs_an_earlier_call(tmp_path: Path, cli: Cli) -> None:
    """57: stop_earlier applies to every control.stop with an earlier tool.call."""
    given(tmp_path, NOTHING, [{"type": "control.stop"},
                              {"type": "tool.call", "call_id": "c1"},
                              {"type": "control.stop"}])
    assert [i for i in ids(report(cli)) if i.startswith("stop")] == ["stop_earlier:3"]


def test_degrade_outcome_skips_what_is_already_so(tmp_path: Path, cli: Cli) -> None:
    """57: one mutant sets verdict violated, one evidence_class self_attestation, each skipped when
    already so."""
    given(tmp_path, NOTHING, [{"type": "outcome.observed", "outcome_id": "a", "verdict": "violated",
                               "evidence_class": "externally_observed"},
                              {"type": "outcome.observed", "outcome_id": "b", "verdict": "satisfied",
                               "evidence_class": "self_attestation"}])
    assert ids(report(cli)) == ["drop_outcome:1", "degrade_outcome:1:evidence_class",
                                "drop_outcome:2", "degrade_outcome:2:verdict"]


def test_inflate_duration_skips_zero(tmp_path: Path, cli: Cli) -> None:
    """57: inflate_duration applies to every event with duration_ms > 0."""
    given(tmp_path, NOTHING, [{"type": "tool.call", "tool": "a", "call_id": "c1"},
                              {"type": "tool.result", "call_id": "c1", "ok": True, "duration_ms": 0},
                              {"type": "tool.call", "tool": "a", "call_id": "c2"},
                              {"type": "tool.result", "call_id": "c2", "ok": True, "duration_ms": 3},
                              {"type": "run.completed", "duration_ms": 0}])
    assert [i for i in ids(report(cli)) if i.startswith("inflate_d")] == ["inflate_duration:4"]


def test_stale_result_needs_an_earlier_different_pair_of_the_same_tool(tmp_path: Path, cli: Cli) -> None:
    """57: stale_result applies to a paired result whose tool has an earlier paired result with a
    different (result, ok); the result's tool is its call's, not its own field."""
    given(tmp_path, NOTHING, [{"type": "tool.call", "tool": "a", "call_id": "c1"},
                              {"type": "tool.result", "call_id": "c1", "ok": True, "result": 1},
                              {"type": "tool.call", "tool": "a", "call_id": "c2"},
                              {"type": "tool.result", "call_id": "c2", "ok": True, "result": 1},
                              {"type": "tool.call", "tool": "b", "call_id": "c3"},
                              {"type": "tool.result", "call_id": "c3", "tool": "a", "ok": True, "result": 2},
                              {"type": "tool.call", "tool": "a", "call_id": "c4"},
                              {"type": "tool.result", "call_id": "c4", "ok": False, "result": 1}])
    assert [i for i in ids(report(cli)) if i.startswith("stale")] == ["stale_result:8"]


def test_misreport_output_sites_are_the_output_nodes(tmp_path: Path, cli: Cli) -> None:
    """57/58: every node of the terminal's output, except objects, null and empty arrays; 61: pointers
    in document order."""
    output: dict[str, Any] = {"list": [1, {"s": "x"}], "o": {"e": []}, "z": None, "f": False}
    given(tmp_path, NOTHING, [{"type": "run.completed", "output": output}])
    assert ids(report(cli)) == ["drop_event:1", "misreport_output:1:/list", "misreport_output:1:/list/0",
                                "misreport_output:1:/list/1/s", "misreport_output:1:/f"]


def test_misreport_output_reads_only_the_last_terminal(tmp_path: Path, cli: Cli) -> None:
    """57 with §0: the terminal is the last run.completed or run.failed."""
    given(tmp_path, NOTHING, [{"type": "run.completed", "output": "early"},
                              {"type": "run.completed", "output": "late"}])
    assert ids(report(cli)) == ["drop_event:1", "drop_event:2", "misreport_output:2"]


def test_pointer_details_escape_slash_and_tilde(tmp_path: Path, cli: Cli) -> None:
    """61: the detail is the JSON Pointer (RFC 6901) into args."""
    given(tmp_path, NOTHING, [{"type": "tool.call", "call_id": "c1", "args": {"a/b": 1, "m~n": 2}}])
    assert [i for i in ids(report(cli)) if i.startswith("change")] == ["change_arg:1:/a~1b", "change_arg:1:/m~0n"]


# -- point 58: replacement values ---------------------------------------------------------------------

VALUES: list[Event] = [
    {"type": "approval.granted", "tool": "other", "args": {"s": "grant", "n": 99}},
    {"type": "tool.call", "tool": "get", "call_id": "c1", "args": {"s": "x", "n": 1, "b": True}},
    {"type": "tool.result", "call_id": "c1", "ok": True, "result": [1.0, True, "x", {"deep": "y"}]},
    {"type": "tool.call", "tool": "get", "call_id": "c2", "args": {"n": 7, "s": "z"}},
    {"type": "tool.result", "call_id": "c2", "ok": True, "result": {"v": "w"}},
    {"type": "run.completed", "output": {"s": "out", "n": 42}},
]


@pytest.mark.parametrize(("mutant_id", "pointer", "value"), [
    ("change_arg:2:/s", "s", "y"),   # later result string, depth-first; grant args are not sought
    ("change_arg:2:/n", "n", 7),     # 1.0 equals 1 and true is no number: the next call's 7
    ("change_arg:2:/b", "b", False),  # no other boolean in calls or results: negated
    ("change_arg:4:/n", "n", 1),     # the first differing number in trace order
    ("change_arg:4:/s", "s", "x"),
])
def test_change_arg_takes_the_first_other_value_of_its_type(
        tmp_path: Path, cli: Cli, mutant_id: str, pointer: str, value: Any) -> None:
    """58: the first value, in trace order, depth-first in document order over every tool.call args and
    tool.result result, of the leaf's JSON type (boolean ≠ number) that differs from it."""
    given(tmp_path, NOTHING, VALUES)
    position = int(mutant_id.split(":")[1]) - 1
    call = shown(cli, mutant_id)[position]
    assert call["args"][pointer] == value and type(call["args"][pointer]) is type(value)
    # Nothing else changes (§6: "give a scalar another ... value").
    assert without(call, "seq") == {**VALUES[position], "args": {**VALUES[position]["args"], pointer: value}}


def test_change_arg_falls_back_to_suffix_plus_one_and_negation(tmp_path: Path, cli: Cli) -> None:
    """58: else append ~m to a string, add 1 to a number or negate a boolean (output values are not
    sought)."""
    given(tmp_path, NOTHING, [{"type": "tool.call", "call_id": "c1", "args": {"s": "only", "n": 2.5, "f": False}},
                              {"type": "run.completed", "output": {"s": "out", "n": 9, "f": True}}])
    args = [shown(cli, f"change_arg:1:/{key}")[0]["args"] for key in ("s", "n", "f")]
    assert (args[0]["s"], args[1]["n"], args[2]["f"]) == ("only~m", 3.5, True)


def test_rebind_approval_values(tmp_path: Path, cli: Cli) -> None:
    """58: rebind_approval appends ~m to the call_id and takes arg values as change_arg does."""
    given(tmp_path, NOTHING, [{"type": "approval.granted", "call_id": "g", "args": {"n": 1, "s": "a"}},
                              {"type": "tool.call", "tool": "pay", "call_id": "g", "args": {"n": 1, "s": "a"}},
                              {"type": "tool.result", "call_id": "g", "ok": True, "result": {"n": 5, "s": "b"}}])
    grants = [shown(cli, f"rebind_approval:1:{detail}")[0] for detail in ("call_id", "/n", "/s")]
    assert grants[0]["call_id"] == "g~m" and grants[0]["args"] == {"n": 1, "s": "a"}
    assert grants[1]["args"] == {"n": 5, "s": "a"} and grants[1]["call_id"] == "g"
    assert grants[2]["args"] == {"n": 1, "s": "b"}


@pytest.mark.parametrize(("detail", "output"), [
    ("/list", {"list": [1, 2], "flag": False, "n": 1.5, "s": "t"}),
    ("/flag", {"list": [1, 2, 3], "flag": True, "n": 1.5, "s": "t"}),
    ("/n", {"list": [1, 2, 3], "flag": False, "n": 2.5, "s": "t"}),
    ("/s", {"list": [1, 2, 3], "flag": False, "n": 1.5, "s": "t~m"}),
])
def test_misreport_output_values(tmp_path: Path, cli: Cli, detail: str, output: Any) -> None:
    """58: drop the last element of a non-empty array, negate a boolean, add 1, append ~m."""
    given(tmp_path, NOTHING, [{"type": "run.completed", "output": {"list": [1, 2, 3], "flag": False, "n": 1.5,
                                                                   "s": "t"}}])
    assert shown(cli, f"misreport_output:1:{detail}")[0]["output"] == output


def test_misreport_output_of_a_scalar_root_has_no_detail(tmp_path: Path, cli: Cli) -> None:
    """61: the detail is omitted for the output's root; 58: a string gets ~m."""
    given(tmp_path, NOTHING, [{"type": "run.completed", "output": "done"}])
    assert ids(report(cli)) == ["drop_event:1", "misreport_output:1"]
    assert shown(cli, "misreport_output:1")[0]["output"] == "done~m"


STALE: list[Event] = [
    {"type": "tool.call", "tool": "get", "call_id": "c1"},
    {"type": "tool.result", "call_id": "c1", "ok": False, "result": {"v": 1}},
    {"type": "tool.call", "tool": "get", "call_id": "c2"},
    {"type": "tool.result", "call_id": "c2", "ok": True, "result": {"v": 2}},
    {"type": "tool.call", "tool": "get", "call_id": "c3"},
    {"type": "tool.result", "call_id": "c3", "ok": True, "result": {"v": 2}},
    {"type": "tool.call", "tool": "get", "call_id": "c4"},
    {"type": "tool.result", "call_id": "c4", "ok": True, "result": {"v": 3}},
]


def test_stale_result_sites(tmp_path: Path, cli: Cli) -> None:
    """57: every paired result with an earlier different pair of its tool (c3's pair differs from c1's)."""
    given(tmp_path, NOTHING, STALE)
    assert [i for i in ids(report(cli)) if i.startswith("stale")] == [
        "stale_result:4", "stale_result:6", "stale_result:8"]


@pytest.mark.parametrize(("site", "source"), [(8, 5), (6, 1)])
def test_stale_result_copies_the_nearest_earlier_different_pair(
        tmp_path: Path, cli: Cli, site: int, source: int) -> None:
    """58: stale_result copies result and ok from the nearest earlier paired result of the same tool whose
    pair differs (for seq 6 the pair at seq 4 is equal, so seq 2's is taken)."""
    given(tmp_path, NOTHING, STALE)
    result = shown(cli, f"stale_result:{site}")[site - 1]
    assert (result["call_id"], result["ok"], result["result"]) == (
        STALE[site - 1]["call_id"], STALE[source]["ok"], STALE[source]["result"])


@pytest.mark.parametrize(("before", "after"), [(True, False), (False, True), (None, False)])
def test_flip_ok(tmp_path: Path, cli: Cli, before: bool | None, after: bool) -> None:
    """57: flip_ok: true→false, false→true, absent→false."""
    result: Event = {"type": "tool.result", "call_id": "c1"}
    if before is not None:
        result["ok"] = before
    given(tmp_path, NOTHING, [{"type": "tool.call", "tool": "a", "call_id": "c1"}, result])
    assert shown(cli, "flip_ok:2")[1]["ok"] is after


def test_degrade_outcome_values(tmp_path: Path, cli: Cli) -> None:
    """§6/57: degrade_outcome sets verdict violated, or evidence_class self_attestation."""
    outcome: Event = {"type": "outcome.observed", "outcome_id": "o", "verdict": "satisfied",
                      "evidence_class": "externally_observed"}
    given(tmp_path, NOTHING, [outcome])
    verdict = shown(cli, "degrade_outcome:1:verdict")[0]
    evidence = shown(cli, "degrade_outcome:1:evidence_class")[0]
    assert (verdict["verdict"], verdict["evidence_class"]) == ("violated", "externally_observed")
    assert (evidence["verdict"], evidence["evidence_class"]) == ("satisfied", "self_attestation")


def test_inflate_duration_multiplies_by_ten(tmp_path: Path, cli: Cli) -> None:
    """§6: inflate_duration multiplies duration_ms by 10 (on results and on run.completed)."""
    given(tmp_path, NOTHING, [{"type": "tool.call", "tool": "a", "call_id": "c1"},
                              {"type": "tool.result", "call_id": "c1", "ok": True, "duration_ms": 2.5},
                              {"type": "run.completed", "duration_ms": 40}])
    assert shown(cli, "inflate_duration:2")[1]["duration_ms"] == 25
    assert shown(cli, "inflate_duration:3")[2]["duration_ms"] == 400


def test_stale_result_copies_absent_result_and_ok(tmp_path: Path, cli: Cli) -> None:
    """58: stale_result copies `result` and `ok`; an earlier pair without them leaves neither (absent is
    copied as absent, §62 keeping absent distinct)."""
    given(tmp_path, NOTHING, [{"type": "tool.call", "tool": "a", "call_id": "c1"},
                              {"type": "tool.result", "call_id": "c1"},
                              {"type": "tool.call", "tool": "a", "call_id": "c2"},
                              {"type": "tool.result", "call_id": "c2", "ok": True, "result": 1}])
    assert shown(cli, "stale_result:4")[3] == {"seq": 40, "type": "tool.result", "call_id": "c2"}


def test_inflate_duration_overflow_is_an_invalid_mutant(tmp_path: Path, cli: Cli) -> None:
    """57: inflate_duration applies to every event with duration_ms > 0; 63: a mutant that fails event
    validation (duration_ms must be finite, §1) is invalid, excluded and listed."""
    given(tmp_path, NOTHING, [{"type": "run.completed", "duration_ms": 1e308}])
    data = report(cli)
    assert [(m["id"], m["status"]) for m in data["mutants"]] == [
        ("drop_event:1", "survived"), ("inflate_duration:1", "invalid")]
    assert data["invalid"] == 1


# -- point 59: seq, time and the moving operators -----------------------------------------------------

TIMED: list[Event] = [
    {"seq": 0, "type": "tool.call", "tool": "a", "call_id": "c1", "time": T[1]},
    {"seq": 5, "type": "tool.result", "call_id": "c1", "ok": True, "time": T[2]},
    {"seq": 6, "type": "tool.call", "tool": "b", "call_id": "c2", "time": T[3]},
    {"seq": 17, "type": "tool.result", "call_id": "c2", "ok": True, "time": T[4]},
    {"seq": 40, "type": "control.stop", "time": T[5]},
    {"seq": 99, "type": "run.completed", "time": T[6]},
]


def test_ids_use_the_input_seq(tmp_path: Path, cli: Cli) -> None:
    """61: an id is <operator>:<seq of the site event in the input trace>[:<detail>]."""
    given(tmp_path, NOTHING, TIMED)
    assert ids(report(cli)) == [
        "drop_call:0", "swap_calls:0", "duplicate_call:0", "inflate_retries:0", "flip_ok:5",
        "drop_call:6", "duplicate_call:6", "inflate_retries:6", "flip_ok:17",
        "drop_event:40", "stop_earlier:40", "drop_event:99"]


def test_integral_float_seq_names_the_id_as_an_integer(tmp_path: Path, cli: Cli) -> None:
    """61: the id holds the input seq; v1 §13: an integral seq such as 3.0 is an integer, printed as one."""
    given(tmp_path, NOTHING, [{"seq": 3.0, "type": "agent.message"}])
    assert ids(report(cli)) == ["drop_event:3"]


def test_json_array_trace(tmp_path: Path, cli: Cli) -> None:
    """§6 takes any trace check reads (v1 §3.2: one JSON array); 66: trace_sha256 is of the file's bytes."""
    write_contract(tmp_path, NOTHING)
    text = json.dumps([{"seq": 1, "type": "agent.message"}, {"seq": 2, "type": "run.completed"}])
    (tmp_path / "t.json").write_text(text, encoding="utf-8")
    result = cli("mutate", "--contract", "c.json", "--trace", "t.json", "--format", "json")
    data = json.loads(result.stdout)
    assert ids(data) == ["drop_event:1", "drop_event:2"]
    assert data["trace_sha256"] == hashlib.sha256(text.encode()).hexdigest()


def test_swap_calls_exchanges_contents_and_keeps_times(tmp_path: Path, cli: Cli) -> None:
    """59: swap_calls exchanges contents slot for slot; the times stay with the positions."""
    given(tmp_path, NOTHING, TIMED)
    events = shown(cli, "swap_calls:0")
    assert [(e["type"], e["call_id"]) for e in events[:4]] == [
        ("tool.call", "c2"), ("tool.result", "c2"), ("tool.call", "c1"), ("tool.result", "c1")]
    assert [e["time"] for e in events] == T[1:7]
    assert events[0]["tool"] == "b" and events[2]["tool"] == "a"


def test_stop_earlier_lands_before_the_nearest_earlier_call(tmp_path: Path, cli: Cli) -> None:
    """59: stop_earlier puts the stop directly before the nearest earlier tool.call; times stay."""
    given(tmp_path, NOTHING, TIMED)
    events = shown(cli, "stop_earlier:40")
    assert [e["type"] for e in events] == ["tool.call", "tool.result", "control.stop", "tool.call",
                                           "tool.result", "run.completed"]
    assert [e["time"] for e in events] == T[1:7]
    assert [e["seq"] for e in events] == [10, 20, 30, 40, 50, 60]


def test_move_approval_after_keeps_times_by_position(tmp_path: Path, cli: Cli) -> None:
    """59: move_approval_after puts the grant directly after its own call; content moves, times do not."""
    given(tmp_path, NOTHING, [{"type": "approval.granted", "tool": "pay", "time": T[1]},
                              {"type": "tool.call", "tool": "pay", "call_id": "c1", "time": T[2]},
                              {"type": "tool.result", "call_id": "c1", "ok": True, "time": T[3]}])
    events = shown(cli, "move_approval_after:1")
    assert [(e["type"], e["time"]) for e in events] == [
        ("tool.call", T[1]), ("approval.granted", T[2]), ("tool.result", T[3])]


def test_drop_keeps_each_remaining_events_own_time(tmp_path: Path, cli: Cli) -> None:
    """59: drop operators keep each remaining event's own time (seq is still renumbered)."""
    given(tmp_path, NOTHING, TIMED)
    events = shown(cli, "drop_call:0")
    assert [(e["seq"], e["call_id"] if "call_id" in e else e["type"], e["time"]) for e in events] == [
        (10, "c2", T[3]), (20, "c2", T[4]), (30, "control.stop", T[5]), (40, "run.completed", T[6])]


def test_swap_needs_a_later_pair_of_another_tool(tmp_path: Path, cli: Cli) -> None:
    """59: A pairs with the nearest later complete pair of a different tool: same-tool pairs and
    calls without a result are passed over."""
    given(tmp_path, NOTHING, [{"type": "tool.call", "tool": "a", "call_id": "c1"},
                              {"type": "tool.result", "call_id": "c1", "ok": True},
                              {"type": "tool.call", "tool": "a", "call_id": "c2"},
                              {"type": "tool.result", "call_id": "c2", "ok": True},
                              {"type": "tool.call", "tool": "b", "call_id": "c3"},
                              {"type": "tool.call", "tool": "b", "call_id": "c4"},
                              {"type": "tool.result", "call_id": "c4", "ok": True}])
    assert [i for i in ids(report(cli)) if i.startswith("swap")] == ["swap_calls:1", "swap_calls:3"]
    events = shown(cli, "swap_calls:1")
    assert [e["call_id"] for e in events] == ["c4", "c4", "c2", "c2", "c3", "c1", "c1"]


def test_interleaved_pairs_do_not_swap(tmp_path: Path, cli: Cli) -> None:
    """59: only when A's result precedes B's call."""
    given(tmp_path, NOTHING, [{"type": "tool.call", "tool": "a", "call_id": "c1"},
                              {"type": "tool.call", "tool": "b", "call_id": "c2"},
                              {"type": "tool.result", "call_id": "c1", "ok": True},
                              {"type": "tool.result", "call_id": "c2", "ok": True}])
    assert not [i for i in ids(report(cli)) if i.startswith("swap")]


def test_tool_less_pairs_do_not_swap(tmp_path: Path, cli: Cli) -> None:
    """59: a complete pair is a call *with a tool* and its paired result."""
    given(tmp_path, NOTHING, [{"type": "tool.call", "call_id": "c1"},
                              {"type": "tool.result", "call_id": "c1", "ok": True},
                              {"type": "tool.call", "tool": "b", "call_id": "c2"},
                              {"type": "tool.result", "call_id": "c2", "ok": True}])
    assert not [i for i in ids(report(cli)) if i.startswith("swap")]


# -- point 60: inserted events ------------------------------------------------------------------------

def test_duplicate_call_inserts_after_the_result(tmp_path: Path, cli: Cli) -> None:
    """60: a copy of the call and of its paired result directly after the later of the two, call_id
    <id>~m; 59: inserted events copy the time of the event before them."""
    call: Event = {"type": "tool.call", "tool": "a", "call_id": "c1", "args": {"q": 1}, "time": T[1]}
    result: Event = {"type": "tool.result", "call_id": "c1", "ok": True, "result": 4, "duration_ms": 3,
                     "time": T[3]}
    given(tmp_path, NOTHING, [call, {"type": "agent.message", "time": T[2]}, result,
                              {"type": "run.completed", "time": T[4]}])
    events = shown(cli, "duplicate_call:1")
    assert [e["seq"] for e in events] == [10, 20, 30, 40, 50, 60]
    assert without(events[3], "seq") == {**call, "call_id": "c1~m", "time": T[3]}
    assert without(events[4], "seq") == {**result, "call_id": "c1~m", "time": T[3]}
    assert events[5]["type"] == "run.completed"


def test_duplicate_call_without_result_copies_the_call_only(tmp_path: Path, cli: Cli) -> None:
    """60: "and of its paired result (if any)", directly after the call."""
    given(tmp_path, NOTHING, [{"type": "tool.call", "tool": "a", "call_id": "c1", "time": T[1]},
                              {"type": "agent.message", "time": T[2]}])
    events = shown(cli, "duplicate_call:1")
    assert [(e["type"], e.get("call_id"), e["time"]) for e in events] == [
        ("tool.call", "c1", T[1]), ("tool.call", "c1~m", T[1]), ("agent.message", None, T[2])]


def test_inflate_retries_inserts_three_failed_pairs_before_the_call(tmp_path: Path, cli: Cli) -> None:
    """60: directly before the call, three pairs: a copy of the call (same tool, args, call_signature;
    call_id ~m1, ~m2, ~m3) then {"type": "tool.result", "call_id": …, "ok": false} with no result or
    duration; 59: each takes the time of the event before it."""
    call: Event = {"type": "tool.call", "tool": "a", "call_id": "c1", "call_signature": "sig",
                   "args": {"q": 1}, "time": T[2]}
    given(tmp_path, NOTHING, [{"type": "run.start", "time": T[1]}, call,
                              {"type": "tool.result", "call_id": "c1", "ok": True, "result": 1, "duration_ms": 5,
                               "time": T[3]}])
    events = shown(cli, "inflate_retries:2")
    assert [e["seq"] for e in events] == [10 * i for i in range(1, 10)]
    for k in (1, 2, 3):
        copy, failed = events[2 * k - 1], events[2 * k]
        assert without(copy, "seq") == {**call, "call_id": f"c1~m{k}", "time": T[1]}
        assert without(failed, "seq") == {"type": "tool.result", "call_id": f"c1~m{k}", "ok": False, "time": T[1]}
    assert without(events[7], "seq") == call


def test_inflate_retries_keeps_an_absent_call_id_absent(tmp_path: Path, cli: Cli) -> None:
    """60: an absent call_id stays absent; 59: inserted events with no event before them get no time."""
    given(tmp_path, NOTHING, [{"type": "tool.call", "tool": "a", "time": T[1]}])
    events = shown(cli, "inflate_retries:1")
    copy, failed = {"type": "tool.call", "tool": "a"}, {"type": "tool.result", "ok": False}
    assert events[:6] == [{"seq": 10 * (i + 1), **(copy if i % 2 == 0 else failed)} for i in range(6)]
    assert events[6] == {"seq": 70, "type": "tool.call", "tool": "a", "time": T[1]}


# -- point 61: the cap ---------------------------------------------------------------------------------

def wide_call(keys: int) -> list[Event]:
    """One call with `keys` number args, its result and the terminal: keys + 5 candidates."""
    return [{"type": "tool.call", "tool": "a", "call_id": "c1", "args": {f"k{i}": i for i in range(keys)}},
            {"type": "tool.result", "call_id": "c1", "ok": True},
            {"type": "run.completed"}]


def wide_ids(keys: int) -> list[str]:
    return ["drop_call:1", *[f"change_arg:1:/k{i}" for i in range(keys)], "duplicate_call:1",
            "inflate_retries:1", "flip_ok:2", "drop_event:3"]


def test_cap_keeps_evenly_spaced_candidates(tmp_path: Path, cli: Cli) -> None:
    """61: with N candidates above K = --max-mutants, the kept ones are those at ⌊i·N/K⌋, i = 0 … K−1."""
    given(tmp_path, NOTHING, wide_call(6))
    everything = wide_ids(6)
    assert len(everything) == 11
    assert ids(report(cli, "--max-mutants", "4")) == [everything[i * 11 // 4] for i in range(4)]


def test_cap_at_or_above_n_keeps_everything(tmp_path: Path, cli: Cli) -> None:
    """61: only above the cap are sites dropped."""
    given(tmp_path, NOTHING, wide_call(6))
    assert ids(report(cli, "--max-mutants", "11")) == wide_ids(6)


def test_default_cap_is_500(tmp_path: Path, cli: Cli) -> None:
    """61: K defaults to 500; 605 candidates keep ⌊i·605/500⌋."""
    given(tmp_path, NOTHING, wide_call(600))
    everything = wide_ids(600)
    data = report(cli)
    assert ids(data) == [everything[i * 605 // 500] for i in range(500)]
    assert data["survived"] == 500


def test_cap_counts_mutants_not_sites(tmp_path: Path, cli: Cli) -> None:
    """61: --max-mutants caps mutants: one site with several operators still counts each."""
    given(tmp_path, NOTHING, [{"type": "outcome.observed", "outcome_id": "o", "verdict": "satisfied",
                               "evidence_class": "externally_observed"}])
    assert ids(report(cli, "--max-mutants", "2")) == ["drop_outcome:1", "degrade_outcome:1:verdict"]


# -- point 62: the equivalence fingerprint -------------------------------------------------------------

def test_dropping_telemetry_is_equivalent(tmp_path: Path, cli: Cli) -> None:
    """62 (5): events whose type matches telemetry.* are outside the fingerprint."""
    given(tmp_path, NOTHING, [{"type": "telemetry.tick"}, *SIMPLE])
    data = report(cli)
    assert status(data, "drop_event:1") == "equivalent"
    assert (data["equivalent"], data["over_block"]) == (1, 0)
    assert not entry(data, "drop_event:1").get("over_block")


def test_dropping_other_events_is_not_equivalent(tmp_path: Path, cli: Cli) -> None:
    """62 (5): every other event is in the fingerprint, so dropping a message, a run.start or a
    revocation is not equivalent."""
    given(tmp_path, NOTHING, [{"type": "agent.message"}, {"type": "run.start"},
                              {"type": "approval.revoked", "approval_id": "g"}, *SIMPLE])
    data = report(cli)
    assert [status(data, f"drop_event:{seq}") for seq in (1, 2, 3)] == ["survived"] * 3


def test_dropping_a_stop_is_killed_not_equivalent(tmp_path: Path, cli: Cli) -> None:
    """62: "dropping ... a control.stop" must not be equivalent (the table's drop_event kill is real)."""
    given(tmp_path, [{"id": "stopped", "kind": "require_event", "match": {"type": "control.stop"}}],
          [*SIMPLE[:2], {"type": "control.stop"}, SIMPLE[2]])
    data = report(cli)
    assert entry(data, "drop_event:3") == {"id": "drop_event:3", "operator": "drop_event", "status": "killed",
                                           "killed_by": ["stopped"]}


TWO_READS: list[Event] = [
    {"type": "tool.call", "tool": "a", "call_id": "c1", "args": {}},
    {"type": "tool.result", "call_id": "c1", "ok": True},
    {"type": "tool.call", "tool": "b", "call_id": "c2", "args": {}},
    {"type": "tool.result", "call_id": "c2", "ok": True},
    {"type": "run.completed"},
]


def test_swap_is_not_equivalent_when_every_tool_writes(tmp_path: Path, cli: Cli) -> None:
    """62 (4): by default every call's earlier successful calls count; after the swap b loses a."""
    given(tmp_path, NOTHING, TWO_READS)
    assert status(report(cli), "swap_calls:1") == "survived"


def test_swap_of_declared_reads_is_equivalent(tmp_path: Path, cli: Cli) -> None:
    """62 (4) and §6: declaring read-only tools lets swaps of independent reads count as equivalent."""
    given(tmp_path, NOTHING, TWO_READS)
    assert status(report(cli, "--reads", "*"), "swap_calls:1") == "equivalent"


def test_grounding_superset_counts_as_equal(tmp_path: Path, cli: Cli) -> None:
    """62 (4): with b a read, only a is checked; after the swap a's earlier calls are {b} ⊇ {}."""
    given(tmp_path, NOTHING, TWO_READS)
    assert status(report(cli, "--reads", "b"), "swap_calls:1") == "equivalent"


def test_grounding_subset_is_not_equal(tmp_path: Path, cli: Cli) -> None:
    """62 (4): with a a read, b is checked; after the swap b's earlier calls are {} ⊉ {a}."""
    given(tmp_path, NOTHING, TWO_READS)
    assert status(report(cli, "--reads", "a"), "swap_calls:1") == "survived"


def test_grounding_ignores_failed_earlier_calls(tmp_path: Path, cli: Cli) -> None:
    """62 (4): only earlier calls whose result exists and is not ok:false count, so moving a call past a
    failed one (b before a, a failed) keeps a superset: equivalent."""
    given(tmp_path, NOTHING, [{"type": "tool.call", "tool": "a", "call_id": "c1", "args": {}},
                              {"type": "tool.result", "call_id": "c1", "ok": False},
                              {"type": "tool.call", "tool": "b", "call_id": "c2", "args": {}},
                              {"type": "tool.result", "call_id": "c2", "ok": True}])
    assert status(report(cli), "swap_calls:1") == "equivalent"


def test_dropping_a_grant_that_covers_no_call_is_equivalent(tmp_path: Path, cli: Cli) -> None:
    """62 (2): grants enter the fingerprint as a call's covering grants (same tool); one for another tool
    covers nothing."""
    given(tmp_path, NOTHING, [{"type": "approval.granted", "tool": "x"}, *SIMPLE])
    assert status(report(cli), "drop_approval:1") == "equivalent"


def test_dropping_a_denied_grant_is_equivalent(tmp_path: Path, cli: Cli) -> None:
    """62 (2): a grant covers a call only with approved ≠ false."""
    given(tmp_path, NOTHING, [{"type": "approval.granted", "tool": "a", "approved": False}, *SIMPLE])
    assert status(report(cli), "drop_approval:1") == "equivalent"


def test_dropping_a_covering_grant_is_not_equivalent(tmp_path: Path, cli: Cli) -> None:
    """62 (2): a tool-less grant with no approval_id covers every later call."""
    given(tmp_path, NOTHING, [{"type": "approval.granted", "approval_id": "g"}, *SIMPLE])
    assert status(report(cli), "drop_approval:1") == "survived"


def test_grant_covering_needs_equal_approval_ids(tmp_path: Path, cli: Cli) -> None:
    """62 (2): tool and approval_id must equal the call's wherever both have them."""
    given(tmp_path, NOTHING, [{"type": "approval.granted", "tool": "a", "approval_id": "g1"},
                              {"type": "tool.call", "tool": "a", "call_id": "c1", "approval_id": "g2"}])
    assert status(report(cli), "drop_approval:1") == "equivalent"


def test_rebinding_a_covering_grant_is_not_equivalent(tmp_path: Path, cli: Cli) -> None:
    """62 (2): covering grants are compared as (approval_id, approval_scope, call_id, canonical args,
    approver)."""
    given(tmp_path, NOTHING, [{"type": "approval.granted", "tool": "a", "call_id": "c1", "args": {"n": 1}},
                              *SIMPLE])
    data = report(cli)
    assert status(data, "rebind_approval:1:call_id") == "survived"
    assert status(data, "rebind_approval:1:/n") == "survived"


def test_moving_a_grant_after_its_call_is_not_equivalent(tmp_path: Path, cli: Cli) -> None:
    """62 (2): after the move the grant no longer covers the call."""
    given(tmp_path, NOTHING, [{"type": "approval.granted", "tool": "a"}, *SIMPLE])
    assert status(report(cli), "move_approval_after:1") == "survived"


def test_flipping_an_orphan_result_is_equivalent(tmp_path: Path, cli: Cli) -> None:
    """62: the fingerprint reads ok only of a call's paired result; an orphan's ok is not in (5)."""
    given(tmp_path, NOTHING, [*SIMPLE[:2], {"type": "tool.result", "call_id": "zz", "ok": True}])
    assert status(report(cli), "flip_ok:3") == "equivalent"


def test_result_null_differs_from_absent(tmp_path: Path, cli: Cli) -> None:
    """62 (2): canonical result with absent distinct from null (57: so the pairs differ)."""
    given(tmp_path, NOTHING, [{"type": "tool.call", "tool": "a", "call_id": "c1"},
                              {"type": "tool.result", "call_id": "c1", "ok": True, "result": None},
                              {"type": "tool.call", "tool": "a", "call_id": "c2"},
                              {"type": "tool.result", "call_id": "c2", "ok": True}])
    data = report(cli)
    assert status(data, "stale_result:4") == "survived"
    assert shown(cli, "stale_result:4")[3]["result"] is None


def test_outcome_edits_are_not_equivalent(tmp_path: Path, cli: Cli) -> None:
    """62 (3): the multiset of (outcome_id, verdict, evidence_class, position)."""
    given(tmp_path, NOTHING, [{"type": "outcome.observed", "outcome_id": "o", "verdict": "satisfied",
                               "evidence_class": "externally_observed"}, *SIMPLE])
    data = report(cli)
    assert [status(data, m) for m in ("drop_outcome:1", "degrade_outcome:1:verdict",
                                      "degrade_outcome:1:evidence_class")] == ["survived"] * 3


def test_stop_earlier_and_run_duration_are_not_equivalent(tmp_path: Path, cli: Cli) -> None:
    """62 (2) a stop preceding a call and (5) the terminal's duration_ms are in the fingerprint."""
    given(tmp_path, NOTHING, [*SIMPLE[:2], {"type": "control.stop"},
                              {"type": "run.completed", "status": "completed", "duration_ms": 5}])
    data = report(cli)
    assert status(data, "stop_earlier:3") == "survived"
    assert status(data, "inflate_duration:4") == "survived"


def test_equivalent_mutant_rejected_by_the_contract_is_an_over_block(tmp_path: Path, cli: Cli) -> None:
    """63: equivalent, with over_block: true when C still gives it an error violation; 66: counted in
    over_block, not in killed."""
    given(tmp_path, [{"id": "ticks", "kind": "require_event", "match": {"type": "telemetry.tick"}}],
          [{"type": "telemetry.tick"}, *SIMPLE])
    data = report(cli)
    mutant = entry(data, "drop_event:1")
    assert (mutant["status"], mutant.get("over_block")) == ("equivalent", True)
    assert (data["equivalent"], data["over_block"], data["killed"]) == (1, 1, 0)


def test_warning_on_an_equivalent_mutant_is_no_over_block(tmp_path: Path, cli: Cli) -> None:
    """63: over_block needs an *error* violation."""
    given(tmp_path, [{"id": "ticks", "kind": "require_event", "match": {"type": "telemetry.tick"},
                      "severity": "warning"}], [{"type": "telemetry.tick"}, *SIMPLE])
    data = report(cli)
    assert status(data, "drop_event:1") == "equivalent" and data["over_block"] == 0


# -- point 63: classification, score and --min-score ---------------------------------------------------

def test_mutant_failing_validation_is_invalid_and_not_scored(tmp_path: Path, cli: Cli) -> None:
    """63: a mutant is invalid when it fails event validation for the contract's version (a call_id is at
    most 500 characters, so the ~m / ~m1 copies of a 499-character id are invalid)."""
    long_id = "c" * 499
    given(tmp_path, NOTHING, [{"type": "tool.call", "tool": "a", "call_id": long_id},
                              {"type": "tool.result", "call_id": long_id, "ok": True}])
    data = report(cli)
    assert [(m["id"], m["status"]) for m in data["mutants"]] == [
        ("drop_call:1", "survived"), ("duplicate_call:1", "invalid"), ("inflate_retries:1", "invalid"),
        ("flip_ok:2", "survived")]
    assert (data["invalid"], data["survived"], data["control"]["killed"] + data["control"]["survived"]) == (2, 2, 2)


def test_killed_by_lists_error_rules_in_contract_order(tmp_path: Path, cli: Cli) -> None:
    """63: killed with ≥ 1 error violation, killed_by: those rule ids in contract order."""
    given(tmp_path, [{"id": "zeta", "kind": "tool_calls", "tool": "a", "min": 1},
                     {"id": "mid", "kind": "run_status", "equals": "completed"},
                     {"id": "alpha", "kind": "require_event", "match": {"type": "tool.call"}}], SIMPLE)
    assert entry(report(cli), "drop_call:1")["killed_by"] == ["zeta", "alpha"]


def test_warning_rules_warn_but_do_not_kill(tmp_path: Path, cli: Cli) -> None:
    """63: survived with warned: true when it drew warnings; killed_by holds error rules only; §6:
    warning-only mutants are counted as warned."""
    given(tmp_path, [{"id": "w", "kind": "tool_calls", "tool": "a", "max": 1, "severity": "warning"},
                     {"id": "e", "kind": "retry_limit", "tool": "a", "max_attempts": 3}], SIMPLE)
    data = report(cli)
    duplicate, retries = entry(data, "duplicate_call:1"), entry(data, "inflate_retries:1")
    assert (duplicate["status"], duplicate.get("warned")) == ("survived", True)
    assert (retries["status"], retries["killed_by"]) == ("killed", ["e"])
    assert (data["killed"], data["survived"], data["warned"]) == (1, 4, 1)
    assert not entry(data, "flip_ok:2").get("warned")


def test_score_is_killed_over_scored(tmp_path: Path, cli: Cli) -> None:
    """63: score = killed / (killed + survived); equivalent mutants are not scored."""
    given(tmp_path, [{"id": "done", "kind": "run_status", "equals": "completed"}],
          [{"type": "telemetry.tick"}, *SIMPLE])
    data = report(cli)
    assert (data["killed"], data["survived"], data["equivalent"], data["score"]) == (1, 4, 1, pytest.approx(0.2))


def test_nothing_scorable_gives_a_null_score(tmp_path: Path, cli: Cli) -> None:
    """63: the score is null when killed + survived is 0."""
    given(tmp_path, NOTHING, [{"type": "telemetry.tick"}])
    data = report(cli)
    assert (data["score"], data["killed"], data["survived"], data["equivalent"]) == (None, 0, 0, 1)


def test_min_score_fails_on_a_null_score(tmp_path: Path, cli: Cli) -> None:
    """63: --min-score gives exit 1 when the score is null (66: the report is still printed)."""
    given(tmp_path, NOTHING, [{"type": "telemetry.tick"}])
    assert report(cli, "--min-score", "0", code=1)["score"] is None


def test_min_score_equal_passes(tmp_path: Path, cli: Cli) -> None:
    """63: exit 1 only when the score is strictly below X (here 1/5 = 0.2)."""
    given(tmp_path, [{"id": "done", "kind": "run_status", "equals": "completed"}], SIMPLE)
    assert report(cli, "--min-score", "0.2")["score"] == pytest.approx(0.2)


def test_min_score_below_exits_1_with_the_report(tmp_path: Path, cli: Cli) -> None:
    """63/66: a score strictly below X exits 1 and the report is printed."""
    given(tmp_path, [{"id": "done", "kind": "run_status", "equals": "completed"}], SIMPLE)
    assert report(cli, "--min-score", "0.21", code=1)["killed"] == 1


def test_min_score_zero_passes_a_zero_score(tmp_path: Path, cli: Cli) -> None:
    """63: 0 is not strictly below 0."""
    given(tmp_path, NOTHING, SIMPLE)
    assert report(cli, "--min-score", "0")["score"] == 0


# -- point 64: the negative control --------------------------------------------------------------------

def test_auto_control_kills_dropped_calls_and_status_changes(tmp_path: Path, cli: Cli) -> None:
    """64: the auto control is run_status equal to T's status plus tool_calls min 1 per tool, scored on
    the same mutants (drop_call:1 and drop_event:3 of five)."""
    given(tmp_path, NOTHING, SIMPLE)
    control = report(cli)["control"]
    assert {k: control[k] for k in ("auto", "killed", "survived", "too_easy")} == {
        "auto": True, "killed": 2, "survived": 3, "too_easy": True}
    assert control["score"] == pytest.approx(0.4)


def test_auto_control_scores_as_the_spelled_out_control(tmp_path: Path, cli: Cli) -> None:
    """64: --control with the auto control's own content gives the same counts, with auto false and the
    file's hash."""
    given(tmp_path, NOTHING, SIMPLE)
    text = json.dumps(AUTO_CONTROL_FOR_SIMPLE)
    (tmp_path / "c0.json").write_text(text, encoding="utf-8")
    auto, given_control = report(cli)["control"], report(cli, "--control", "c0.json")["control"]
    assert given_control["auto"] is False
    assert given_control["contract_sha256"] == hashlib.sha256(text.encode()).hexdigest()
    assert [given_control[k] for k in ("score", "killed", "survived")] == [auto[k] for k in ("score", "killed",
                                                                                              "survived")]


def test_auto_control_one_rule_per_distinct_tool(tmp_path: Path, cli: Cli) -> None:
    """64: per distinct tool, tool_calls min 1: dropping one of two calls of a kills nothing, dropping b
    kills."""
    given(tmp_path, NOTHING, [{"type": "tool.call", "tool": "a", "call_id": "c1"},
                              {"type": "tool.call", "tool": "b", "call_id": "c2"},
                              {"type": "tool.call", "tool": "a", "call_id": "c3"}])
    control = report(cli)["control"]
    # drop_call ×3, duplicate_call ×3, inflate_retries ×3: only drop_call:2 removes the last b.
    assert (control["killed"], control["survived"]) == (1, 8)


def test_auto_control_without_terminal_expects_status_none(tmp_path: Path, cli: Cli) -> None:
    """64: equals T's run status, "none" included, so it passes a trace without a terminal."""
    given(tmp_path, NOTHING, [{"type": "tool.call", "tool": "a", "call_id": "c1"},
                              {"type": "agent.message"}])
    control = report(cli)["control"]
    # drop_call:1 (killed), duplicate_call:1, inflate_retries:1, drop_event:2.
    assert (control["auto"], control["killed"], control["survived"]) == (True, 1, 3)


def test_auto_control_status_reads_the_status_field(tmp_path: Path, cli: Cli) -> None:
    """64: control.status equals the run status; dropping the terminal makes it none."""
    given(tmp_path, NOTHING, [{"type": "run.failed", "status": "awaiting_approval"}])
    control = report(cli)["control"]
    assert (control["killed"], control["survived"]) == (1, 0)


def test_control_is_scored_on_non_invalid_non_equivalent_mutants(tmp_path: Path, cli: Cli) -> None:
    """64: the control is scored on the same non-invalid, non-equivalent mutants."""
    given(tmp_path, NOTHING, [{"type": "telemetry.tick"}, *SIMPLE])
    data = report(cli)
    assert data["control"]["killed"] + data["control"]["survived"] == data["killed"] + data["survived"] == 5


def test_too_easy_at_exactly_half(tmp_path: Path, cli: Cli) -> None:
    """64: too easy when the control score is above 0 and at least half the main score (0.4 vs 0.8)."""
    given(tmp_path, [{"id": "done", "kind": "run_status", "equals": "completed"},
                     {"id": "once", "kind": "tool_calls", "tool": "a", "min": 1, "max": 1}], SIMPLE)
    data = report(cli)
    assert data["score"] == pytest.approx(0.8) and data["control"]["too_easy"] is True


def test_not_too_easy_below_half(tmp_path: Path, cli: Cli) -> None:
    """64: a control score of 0.4 against 1.0 is below half."""
    given(tmp_path, [{"id": "done", "kind": "run_status", "equals": "completed"},
                     {"id": "once", "kind": "tool_calls", "tool": "a", "min": 1, "max": 1},
                     {"id": "ok", "kind": "tool_calls", "tool": "a", "count": "successful", "min": 1}], SIMPLE)
    data = report(cli)
    assert data["score"] == 1 and data["control"]["too_easy"] is False


def test_not_too_easy_when_the_control_scores_zero(tmp_path: Path, cli: Cli) -> None:
    """64: "when the control score is above 0": both scores 0 is not too easy."""
    given(tmp_path, NOTHING, [{"type": "agent.message"}])
    data = report(cli)
    assert (data["score"], data["control"]["score"], data["control"]["too_easy"]) == (0, 0, False)


def test_too_easy_is_printed(tmp_path: Path, cli: Cli) -> None:
    """§6: a control score of at least half the main score prints "mutants too easy"."""
    given(tmp_path, NOTHING, SIMPLE)
    result = mutate(cli)
    assert result.returncode == 0 and "mutants too easy" in result.stdout


def test_too_easy_is_not_printed_otherwise(tmp_path: Path, cli: Cli) -> None:
    """§6: only then."""
    given(tmp_path, [{"id": "done", "kind": "run_status", "equals": "completed"},
                     {"id": "once", "kind": "tool_calls", "tool": "a", "min": 1, "max": 1},
                     {"id": "ok", "kind": "tool_calls", "tool": "a", "count": "successful", "min": 1}], SIMPLE)
    result = mutate(cli)
    assert result.returncode == 0 and "too easy" not in result.stdout


# -- point 65: false-positive rewrites -----------------------------------------------------------------

SIX = [{"type": "agent.message"}] * 5 + [{"type": "run.completed"}]


def test_heartbeat_after_the_6th_of_6_events(tmp_path: Path, cli: Cli) -> None:
    """65: heartbeats after the 3rd, 6th, … event: 6 events become 8, over max_events 7."""
    given(tmp_path, [{"id": "budget", "kind": "event_budget", "max_events": 7}], SIX)
    assert report(cli)["false_positives"] == [{"rewrite": "heartbeat", "killed_by": ["budget"]}]


def test_heartbeat_adds_exactly_two_to_6_events(tmp_path: Path, cli: Cli) -> None:
    """65: 6 events get 2 heartbeats, within max_events 8; no other rewrite adds events."""
    given(tmp_path, [{"id": "budget", "kind": "event_budget", "max_events": 8}], SIX)
    assert report(cli)["false_positives"] == []


def test_heartbeat_adds_one_to_5_events(tmp_path: Path, cli: Cli) -> None:
    """65: 5 events get one heartbeat (after the 3rd): max_events 6 passes, 5 fails."""
    given(tmp_path, [{"id": "budget", "kind": "event_budget", "max_events": 6}], SIX[1:])
    assert report(cli)["false_positives"] == []
    given(tmp_path, [{"id": "budget", "kind": "event_budget", "max_events": 5}], SIX[1:])
    assert report(cli)["false_positives"] == [{"rewrite": "heartbeat", "killed_by": ["budget"]}]


def test_heartbeat_shifts_positional_windows(tmp_path: Path, cli: Cli) -> None:
    """§6: a failure names the rule responsible, typically within_events (a heartbeat after the 3rd event
    puts the grant 4 events back)."""
    given(tmp_path, [{"id": "near", "kind": "require_approval", "tool": "pay", "within_events": 3}],
          [{"type": "approval.granted"}, {"type": "agent.message"}, {"type": "agent.message"},
           {"type": "tool.call", "tool": "pay", "call_id": "c1"}])
    assert report(cli)["false_positives"] == [{"rewrite": "heartbeat", "killed_by": ["near"]}]


def test_warning_only_rewrite_failure_is_no_false_positive(tmp_path: Path, cli: Cli) -> None:
    """§6/65: rewrites must still pass, and passing allows warnings (56: check would exit 0)."""
    given(tmp_path, [{"id": "budget", "kind": "event_budget", "max_events": 7, "severity": "warning"}], SIX)
    assert report(cli)["false_positives"] == []


def test_no_rewrite_removes_heartbeat(tmp_path: Path, cli: Cli) -> None:
    """65: --no-rewrite NAME removes one rewrite."""
    given(tmp_path, [{"id": "budget", "kind": "event_budget", "max_events": 7}], SIX)
    assert report(cli, "--no-rewrite", "heartbeat")["false_positives"] == []


def corpus(tmp_path: Path) -> None:
    """corpus/: b.jsonl and a.json fail `done`, c.jsonl passes, d.txt (failing) is no corpus file."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "b.jsonl").write_text('{"seq": 1, "type": "run.failed"}\n', encoding="utf-8")
    (folder / "a.json").write_text('[{"seq": 1, "type": "run.failed"}]', encoding="utf-8")
    (folder / "c.jsonl").write_text('{"seq": 1, "type": "run.completed"}\n', encoding="utf-8")
    (folder / "d.txt").write_text('{"seq": 1, "type": "run.failed"}\n', encoding="utf-8")


def test_corpus_failures_one_per_file_sorted(tmp_path: Path, cli: Cli) -> None:
    """65: corpus is each *.jsonl / *.json file of --corpus, sorted by name, one entry per failing file:
    {rewrite, file, killed_by}."""
    given(tmp_path, [{"id": "done", "kind": "run_status", "equals": "completed"}], SIMPLE)
    corpus(tmp_path)
    found = report(cli, "--corpus", "corpus")["false_positives"]
    assert [(f["rewrite"], Path(f["file"]).name, f["killed_by"]) for f in found] == [
        ("corpus", "a.json", ["done"]), ("corpus", "b.jsonl", ["done"])]


def test_rewrites_are_reported_in_their_order(tmp_path: Path, cli: Cli) -> None:
    """65: heartbeat comes before corpus in the rewrite list."""
    given(tmp_path, [{"id": "done", "kind": "run_status", "equals": "completed"},
                     {"id": "budget", "kind": "event_budget", "max_events": 3}], SIMPLE)
    corpus(tmp_path)
    found = report(cli, "--corpus", "corpus")["false_positives"]
    assert [(f["rewrite"], f["killed_by"]) for f in found] == [
        ("heartbeat", ["budget"]), ("corpus", ["done"]), ("corpus", ["done"])]


def test_no_rewrite_repeats(tmp_path: Path, cli: Cli) -> None:
    """65: --no-rewrite NAME may repeat."""
    given(tmp_path, [{"id": "done", "kind": "run_status", "equals": "completed"},
                     {"id": "budget", "kind": "event_budget", "max_events": 3}], SIMPLE)
    corpus(tmp_path)
    data = report(cli, "--corpus", "corpus", "--no-rewrite", "heartbeat", "--no-rewrite", "corpus")
    assert data["false_positives"] == []


def test_every_rewrite_name_is_accepted(tmp_path: Path, cli: Cli) -> None:
    """65: the rewrite names for --no-rewrite."""
    given(tmp_path, NOTHING, SIMPLE)
    names = ["renumber", "heartbeat", "comments", "reorder_keys", "json_array", "corpus"]
    assert report(cli, *[arg for name in names for arg in ("--no-rewrite", name)])["false_positives"] == []


def test_fail_on_fp_exits_1_with_the_report(tmp_path: Path, cli: Cli) -> None:
    """66: exit 1 when --fail-on-fp is given and false_positives is not empty; the report is printed."""
    given(tmp_path, [{"id": "budget", "kind": "event_budget", "max_events": 7}], SIX)
    assert len(report(cli, "--fail-on-fp", code=1)["false_positives"]) == 1


def test_fail_on_fp_without_false_positives_exits_0(tmp_path: Path, cli: Cli) -> None:
    """66: --fail-on-fp only fails when false_positives is not empty."""
    given(tmp_path, NOTHING, SIMPLE)
    assert report(cli, "--fail-on-fp")["false_positives"] == []


# -- point 66: the report ------------------------------------------------------------------------------

def test_report_fields(tmp_path: Path, cli: Cli) -> None:
    """66: the report's fields."""
    given(tmp_path, NOTHING, SIMPLE)
    data = report(cli)
    assert set(data) >= {"schema", "contract_sha256", "trace_sha256", "score", "killed", "survived", "warned",
                         "equivalent", "over_block", "invalid", "mutants", "survivors", "control",
                         "false_positives"}
    assert data["schema"] == "agent-invariants/mutate/v1"
    assert set(data["control"]) >= {"auto", "contract_sha256", "score", "killed", "survived", "too_easy"}


def test_report_hashes_are_of_the_files_bytes(tmp_path: Path, cli: Cli) -> None:
    """66: contract_sha256 and trace_sha256 are of the files' bytes."""
    given(tmp_path, NOTHING, SIMPLE)
    data = report(cli)
    assert data["contract_sha256"] == hashlib.sha256((tmp_path / "c.json").read_bytes()).hexdigest()
    assert data["trace_sha256"] == hashlib.sha256((tmp_path / "t.jsonl").read_bytes()).hexdigest()


def test_report_counts_and_mutant_entries(tmp_path: Path, cli: Cli) -> None:
    """66: counts, and mutants as {id, operator, status, killed_by} in candidate order."""
    given(tmp_path, [{"id": "done", "kind": "run_status", "equals": "completed"}], SIMPLE)
    data = report(cli)
    assert {k: data[k] for k in ("killed", "survived", "warned", "equivalent", "over_block", "invalid")} == {
        "killed": 1, "survived": 4, "warned": 0, "equivalent": 0, "over_block": 0, "invalid": 0}
    assert data["mutants"] == [
        {"id": mid, "operator": mid.split(":")[0], "status": "killed" if mid == "drop_event:3" else "survived",
         "killed_by": ["done"] if mid == "drop_event:3" else []} for mid in SIMPLE_IDS]


def test_survivors_carry_their_operator_rows_hint(tmp_path: Path, cli: Cli) -> None:
    """66: survivors [{id, hint}], hint being the "killed by" cell of the operator's §6 row (all 16)."""
    given(tmp_path, NOTHING, MIXED)
    data = report(cli)
    expected = [{"id": m["id"], "hint": HINTS[m["operator"]]} for m in data["mutants"] if m["status"] == "survived"]
    assert data["survivors"] == expected
    assert {m["operator"] for m in data["mutants"]} == set(HINTS)


def test_spec_example_approval_bound(tmp_path: Path, cli: Cli) -> None:
    """§6 Example: approval_bound on refund; grant (10), call (20), result (30), run.completed (40):
    drop_approval:10 is killed, flip_ok:30 survives with the flip_ok hint, the control kills neither."""
    given(tmp_path, [{"id": "refund-approved", "kind": "approval_bound", "tool": "refund"}],
          [{"seq": 10, "type": "approval.granted", "tool": "refund", "approval_id": "g1"},
           {"seq": 20, "type": "tool.call", "tool": "refund", "call_id": "r1", "args": {"order": "A1"}},
           {"seq": 30, "type": "tool.result", "call_id": "r1", "ok": True},
           {"seq": 40, "type": "run.completed"}])
    data = report(cli)
    assert entry(data, "drop_approval:10")["killed_by"] == ["refund-approved"]
    assert {"id": "flip_ok:30", "hint": HINTS["flip_ok"]} in data["survivors"]
    # The control kills only what removes the refund call or the terminal.
    assert data["control"]["killed"] == 2
    assert status(data, "flip_ok:30") == "survived"


def test_version_1_contract_is_mutated(tmp_path: Path, cli: Cli) -> None:
    """§6 applies to any contract; 63: a version-1 contract's mutants are validated as version 1."""
    given(tmp_path, [{"id": "done", "kind": "require_event", "match": {"type": "run.completed"}}], SIMPLE,
          version=1)
    data = report(cli)
    assert ids(data) == SIMPLE_IDS and entry(data, "drop_event:3")["killed_by"] == ["done"]
