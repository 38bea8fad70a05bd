"""The langsmith importer on runs recorded by langchain-core's own LangSmith tracer
(tests/frameworks/langchain_runs.py), against spec/v2-extensions.md §7 and §10 points 26-28, 31."""
from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from agent_invariants.api import check_trace
from agent_invariants.importers import import_runs
from agent_invariants.importers.profile import load_profile
from agent_invariants.importers.records import SourceFile
from agent_invariants.importers.source import ImportedTrace
from tests.conftest import Cli
from tests.frameworks import langchain_runs, langsmith_traceable, written


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return written(langchain_runs.write, langchain_runs.SCENARIOS, tmp_path_factory.mktemp("langsmith"), ".runs.jsonl")


def events(path: Path, **options: Any) -> list[dict[str, Any]]:
    (found,) = import_runs(path, "langsmith", **options)
    return [event for event, _ in found.events]


def of_type(found: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [event for event in found if event["type"] == kind]


def test_the_root_run_bounds_the_run_and_gives_its_output(exports: dict[str, Path]) -> None:
    found = events(exports["refund_ok"])
    root = json.loads(exports["refund_ok"].read_text())
    assert [event["type"] for event in found] == ["run.start", "tool.call", "tool.result", "tool.call", "tool.result",
                                                  "agent.message", "run.completed"]
    assert {event["run_id"] for event in found} == {root["trace_id"]}
    assert found[0]["time"] == root["start_time"] and found[-1]["time"] == root["end_time"]
    assert found[-1]["output"] == "Refunded 10.0 EUR"
    assert found[-2]["data"]["text"] == "Refunded 10.0 EUR"   # the assistant's message


def test_a_tool_run_is_a_call_with_its_inputs_and_a_result_from_its_tool_message(exports: dict[str, Path]) -> None:
    call, result = of_type(events(exports["refund_ok"]), "tool.call")[1], of_type(events(exports["refund_ok"]),
                                                                                    "tool.result")[1]
    assert call["tool"] == "refund" and call["args"] == {"order_id": "A1", "amount": 10.0}
    assert call["call_id"] == result["call_id"] == "call_refund_1"   # the ToolMessage's tool_call_id
    assert result["result"] == {"refunded": 10.0, "order": "A1"}     # its content, JSON text, parsed
    assert result["ok"] is True and result["duration_ms"] > 0


def test_plain_text_results_stay_text(exports: dict[str, Path]) -> None:
    (result,) = of_type(events(exports["forbidden_tool"]), "tool.result")
    assert result["result"] == "ran: rm -rf /tmp/x"
    assert "raw_result" not in result["data"]


def test_without_a_tool_side_id_the_models_call_id_is_taken_by_name_and_order(exports: dict[str, Path]) -> None:
    calls = of_type(events(exports["args_only"]), "tool.call")
    assert [(call["tool"], call["call_id"]) for call in calls] == [("lookup_order", "call_lookup_1"),
                                                                    ("refund", "call_refund_1")]
    results = of_type(events(exports["args_only"]), "tool.result")
    assert results[0]["result"] == {"order": "A1", "paid": 10.0, "currency": "EUR"}   # the bare object


def test_a_text_input_is_kept_as_the_input_key(exports: dict[str, Path]) -> None:
    (call,) = of_type(events(exports["text_input"]), "tool.call")
    assert call["args"] == {"input": "rm -rf /tmp/x"}   # not JSON of an object: inputs as they are
    assert call["call_id"] == "call_shell_1"


def test_a_tool_that_raises_is_a_failed_result_and_the_run_goes_on(exports: dict[str, Path]) -> None:
    found = events(exports["tool_raises"])
    (result,) = of_type(found, "tool.result")
    assert result["ok"] is False and "result" not in result
    assert result["call_id"] == "call_lookup_9"   # from extra.tool_call_id: no ToolMessage
    assert result["data"]["error"] == "ValueError('order A9 not found')"   # without the traceback's paths
    assert found[-1]["type"] == "run.completed"


def test_a_tool_message_with_status_error_is_a_failed_result(exports: dict[str, Path]) -> None:
    (result,) = of_type(events(exports["tool_error_message"]), "tool.result")
    assert result["ok"] is False and result["result"] == "order A9 not found"


def test_a_root_with_an_error_is_a_failed_run(exports: dict[str, Path]) -> None:
    last = events(exports["run_fails"])[-1]
    assert last["type"] == "run.failed" and last["status"] == "failed"
    assert last["reason"] == "ValueError('order A9 not found')"


def test_parallel_calls_keep_their_own_ids_and_times(exports: dict[str, Path]) -> None:
    found = events(exports["parallel"])
    calls = of_type(found, "tool.call")
    assert sorted(call["call_id"] for call in calls) == ["call_lookup_1", "call_lookup_2"]
    for call in calls:
        (result,) = [event for event in of_type(found, "tool.result") if event["call_id"] == call["call_id"]]
        assert result["seq"] > call["seq"] and result["result"]["order"] == call["args"]["order_id"]
    times = [event["time"] for event in found]
    assert times == sorted(times)


def test_retries_are_three_calls(exports: dict[str, Path]) -> None:
    calls = of_type(events(exports["retries"]), "tool.call")
    assert [call["call_id"] for call in calls] == ["call_lookup_1", "call_lookup_2", "call_lookup_3"]


def test_a_run_named_after_an_event_type_is_that_event(exports: dict[str, Path]) -> None:
    found = events(exports["convention"])
    (grant,) = of_type(found, "approval.granted")
    assert (grant["approval_id"], grant["approval_scope"], grant["approver"]) == ("ap-1", "refund", "alice")
    refund = next(call for call in of_type(found, "tool.call") if call["tool"] == "refund")
    assert grant["seq"] < refund["seq"]


def test_a_profile_maps_a_human_review_run(exports: dict[str, Path], tmp_path: Path) -> None:
    profile = tmp_path / "profile.json"
    profile.write_text(json.dumps({"rules": [{
        "when": {"name": "human_review", "attributes": {"decision": "approve"}},
        "emit": {"type": "approval.granted", "approval_scope": {"$attr": "scope"},
                 "approver": {"$attr": "user.id"}}}]}))
    found = events(exports["convention"], profile=load_profile(profile))
    grants = of_type(found, "approval.granted")
    assert [(grant["approval_scope"], grant["approver"]) for grant in grants] == [("refund", "bob"),
                                                                                 ("refund", "alice")]


def test_two_root_runs_are_two_runs_with_their_own_call_ids(exports: dict[str, Path]) -> None:
    runs = import_runs(exports["two_runs"], "langsmith")
    assert len(runs) == 2 and runs[0].run_id != runs[1].run_id
    for found in runs:
        assert [event["call_id"] for event, _ in found.events if event["type"] == "tool.call"][0] == "call_lookup_1"


def test_verdicts_on_the_scenarios(exports: dict[str, Path], cli: Cli, tmp_path: Path) -> None:
    contract = tmp_path / "contract.json"
    contract.write_text(json.dumps({"version": 2, "name": "refunds", "rules": [
        {"id": "lookup-first", "kind": "require_order", "before": {"type": "tool.call", "tool": "lookup_order"},
         "after": {"type": "tool.call", "tool": "refund"}},
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell"},
        {"id": "refund-amount", "kind": "tool_args", "tool": "refund",
         "match": {"amount": {"$lte": {"$from_result": {"tool": "lookup_order", "path": "paid",
                                                        "where": {"order_id": {"$arg": "order_id"}}}}}}}]}))
    expected = {"refund_ok": (0, []), "missing_lookup": (1, ["lookup-first", "refund-amount"]),
                "forbidden_tool": (1, ["no-shell"]), "args_only": (0, [])}
    for scenario, (code, rules) in expected.items():
        result = cli("check", "-c", str(contract), "-t", str(exports[scenario]), "--input-format", "auto", "-f", "json")
        assert result.returncode == code, (scenario, result.stderr)
        assert [violation["rule_id"] for violation in json.loads(result.stdout)["violations"]] == rules, scenario


def test_a_tool_run_traced_on_its_own_is_a_call_inside_the_run_it_bounds(exports: dict[str, Path], cli: Cli,
                                                                         tmp_path: Path) -> None:
    """`tool.invoke()` with no agent around it makes the tool's run the root: it bounds the run
    and is still the call (it was dropped, and a deny_tool of it passed)."""
    found = events(exports["tool_alone"])
    assert [event["type"] for event in found] == ["run.start", "tool.call", "tool.result", "run.completed"]
    assert found[1]["tool"] == "shell" and found[1]["args"] == {"cmd": "rm -rf /tmp/x"}
    assert found[2]["result"] == "ran: rm -rf /tmp/x" and found[2]["ok"] is True
    contract = tmp_path / "contract.json"
    contract.write_text(json.dumps({"version": 1, "name": "x", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]}))
    result = cli("check", "-c", str(contract), "-t", str(exports["tool_alone"]), "--input-format", "langsmith")
    assert result.returncode == 1


def test_the_line_of_a_violation_is_the_line_of_its_root_run(exports: dict[str, Path]) -> None:
    contract = {"version": 1, "name": "x", "rules": [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]}
    runs = import_runs(exports["two_runs"], "langsmith")
    report = check_trace(contract, ImportedTrace(SourceFile.of(exports["two_runs"]), runs[1]))
    assert report.run == runs[1].run_id
    assert report.trace == str(exports["two_runs"])


LIVE = ("refund_ok", "tool_raises", "parallel", "retries")


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return written(langchain_runs.write_live, LIVE, tmp_path_factory.mktemp("live"), ".runs.jsonl")


def _what(found: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(event["type"], event.get("tool"), event.get("call_id"), event.get("args"), event.get("ok"),
             event.get("result"), event.get("output"), event.get("reason")) for event in found]


@pytest.mark.parametrize("scenario", LIVE)
def test_a_run_written_as_it_was_created_and_again_as_it_ended_is_one_run(
        exports: dict[str, Path], live: dict[str, Path], scenario: str) -> None:
    """README: every run on its own line. Runs reach LangSmith twice (created, then updated at
    their end): written so, each is still one run, with the calls, results and end of the tree
    export, no call left unanswered and no `~2` copy, and a failed root still fails the run."""
    assert _what(events(live[scenario])) == _what(events(exports[scenario]))


@pytest.fixture(scope="module")
def sdk_exports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return written(langsmith_traceable.write, langsmith_traceable.SCENARIOS, tmp_path_factory.mktemp("sdk"),
                   ".runs.jsonl")


def test_updates_the_client_writes_without_name_start_or_trace_complete_the_runs_they_update(
        tmp_path: Path, cli: Cli) -> None:
    """README: a run written as it started and again as it ended is one. `Client.update_run`
    without a name writes `name: null`, no `start_time` and null parent and trace ids: each update
    ends the run of its id, in that run's trace."""
    path = tmp_path / "by_hand.runs.jsonl"
    langsmith_traceable.write_by_hand(path)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(record["name"], record.get("trace_id"), "start_time" in record) for record in records] == [
        ("support-agent", None, True), ("shell", None, True), (None, None, False),
        ("lookup_order", None, True), (None, None, False), (None, None, False)]
    found = events(path)
    assert [(event["type"], event.get("tool"), event["time"][17:19], event.get("ok"), event.get("result"),
             event.get("output")) for event in found] == [
        ("run.start", None, "00", None, None, None),
        ("tool.call", "shell", "01", None, None, None),
        ("tool.result", "shell", "02", True, "a.txt", None),
        ("tool.call", "lookup_order", "03", None, None, None),
        ("tool.result", "lookup_order", "04", False, None, None),
        ("run.completed", None, "05", None, None, "No such order.")]
    assert {event["run_id"] for event in found} == {str(uuid.UUID(int=1))}
    contract = tmp_path / "c.json"
    contract.write_text(json.dumps({"version": 2, "name": "c",
                                    "rules": [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]}))
    result = cli("check", "-c", str(contract), "-t", str(path), "--input-format", "langsmith")
    assert result.returncode == 1 and "no-shell" in result.stdout


def test_updates_without_the_trace_their_runs_were_created_in_complete_them_in_a_file(tmp_path: Path) -> None:
    """Runs created with their `trace_id` and updated without it (`update_run` writes null): read
    from a file, whose first pass finds where each trace ends, the root's update counted for no
    trace and came after its trace had ended (exit 2); through a pipe it was read whole."""
    path = tmp_path / "traced.runs.jsonl"
    langsmith_traceable.write_by_hand(path, traced=True)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [record.get("trace_id") for record in records] == [str(uuid.UUID(int=1))] * 2 + [None] + [
        str(uuid.UUID(int=1))] + [None, None]
    found = events(path)
    assert [(event["type"], event.get("tool"), event.get("ok")) for event in found] == [
        ("run.start", None, None), ("tool.call", "shell", None), ("tool.result", "shell", True),
        ("tool.call", "lookup_order", None), ("tool.result", "lookup_order", False), ("run.completed", None, None)]
    assert found[-1]["output"] == "No such order."


@pytest.mark.parametrize("run", [None, str(uuid.UUID(int=1))])
def test_a_child_update_after_its_roots_is_read_from_a_file_as_from_a_pipe(tmp_path: Path, run: str | None) -> None:
    """A child run's update (no trace, and an id that is no trace's) after the root's: the first
    pass took the trace to end at the root's update, and the child's result was dropped (with
    `--run`, exit 0: a failed call read as one never answered) or refused. Such a file is read
    whole, as a pipe is."""
    traced = tmp_path / "traced.runs.jsonl"
    langsmith_traceable.write_by_hand(traced, traced=True)
    lines = traced.read_text().splitlines()
    path = tmp_path / "late.runs.jsonl"
    path.write_text("\n".join([*lines[:4], lines[5], lines[4]]) + "\n")   # the root's update before lookup_order's
    found = events(path, **({} if run is None else {"run": run}))
    assert [(event["type"], event.get("tool"), event.get("ok")) for event in found] == [
        ("run.start", None, None), ("tool.call", "shell", None), ("tool.result", "shell", True),
        ("tool.call", "lookup_order", None), ("tool.result", "lookup_order", False), ("run.completed", None, None)]


@pytest.mark.parametrize("lines, problem", [
    ([2], ":1: $.name: expected the run's name (a string), here or in an earlier record of the run"),
    ([0, 5], ":2: $.name: expected the run's name (a string), here or in an earlier record of the run"),
])
def test_an_update_of_no_run_read_before_is_refused_at_its_line(tmp_path: Path, cli: Cli, lines: list[int],
                                                                  problem: str) -> None:
    """An update alone (its create left out), or one after its run already ended, names no run."""
    by_hand = tmp_path / "by_hand.runs.jsonl"
    langsmith_traceable.write_by_hand(by_hand)
    records = by_hand.read_text().splitlines()
    if lines == [0, 5]:   # the root, ended already, then its update
        records[0] = json.dumps({**json.loads(records[0]), "end_time": "2026-12-01T00:00:09+00:00"})
    path = tmp_path / "t.runs.jsonl"
    path.write_text("".join(records[index] + "\n" for index in lines))
    result = cli("convert", "--from", "langsmith", str(path))
    assert (result.returncode, result.stderr) == (2, f"agent-invariants: {path}{problem}\n")


def test_a_run_without_a_start_time_in_any_record_is_refused(tmp_path: Path, cli: Cli) -> None:
    path = tmp_path / "t.runs.jsonl"
    path.write_text(json.dumps({"id": "r1", "name": "agent", "run_type": "chain",
                                "end_time": "2026-12-01T00:00:09+00:00"}) + "\n")
    result = cli("convert", "--from", "langsmith", str(path))
    assert (result.returncode, result.stderr) == (2, f"agent-invariants: {path}:1: $.start_time: expected an ISO 8601 "
                                                      "time, here or in an earlier record of the run\n")


def test_a_traceable_tool_that_returns_a_dict_has_it_as_its_result(sdk_exports: dict[str, Path]) -> None:
    """The SDK keeps a dict a `@traceable` tool returned as the run's `outputs` themselves: that dict
    is the result (it was left out, with `ok: true`), even with an `output` key among others (the
    SDK writes `{"output": ...}` alone for what is no dict)."""
    results = of_type(events(sdk_exports["refund_dicts"]), "tool.result")
    assert [result["result"] for result in results] == [{"order_id": "A1", "paid": 25.0},
                                                        {"refund_id": "R-9", "amount": 25, "output": "sent"}]
    assert [result["ok"] for result in results] == [True, True]


def test_an_openai_chat_completion_gives_the_model_call_ids_and_the_assistant_text(
        sdk_exports: dict[str, Path]) -> None:
    """An `llm` run whose outputs are an OpenAI chat completion (`choices[].message`): its
    `tool_calls` name the calls (by `function.name` and order) and its text is `agent.message`."""
    found = events(sdk_exports["refund_dicts"])
    assert [(event["tool"], event["call_id"]) for event in of_type(found, "tool.call")] == [
        ("lookup_order", "call_lookup_1"), ("refund", "call_refund_1")]
    assert [event["data"]["text"] for event in of_type(found, "agent.message")] == ["Refunded 25 for A1."]
    assert found[-1]["output"] == "Refunded 25 for A1."


def test_a_contract_reading_a_traceable_tools_result_passes_a_correct_run(sdk_exports: dict[str, Path]) -> None:
    contract = {"version": 2, "name": "refunds", "rules": [
        {"id": "refund-at-most-paid", "kind": "tool_args", "tool": "refund", "match": {"amount": {
            "$lte": {"$from_result": {"tool": "lookup_order", "where": {"order_id": {"$arg": "order_id"}},
                                      "path": "paid"}}}}}]}
    (run,) = import_runs(sdk_exports["refund_dicts"], "langsmith")
    assert check_trace(contract, ImportedTrace(SourceFile.of(sdk_exports["refund_dicts"]), run)).passed
    assert [result["ok"] for result in of_type(events(sdk_exports["refund_fails"]), "tool.result")] == [True, False]
