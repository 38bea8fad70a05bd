"""The span-based importers on exports the frameworks wrote themselves (tests/frameworks/):
`otel` on pydantic-ai's OpenTelemetry spans, `openai-agents` on the Agents SDK's own export and
`openinference` on the same runs through the OpenInference instrumentation (spec/v2-extensions.md
§7, §10 points 26, 28-33, 36)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_invariants.importers import import_file, import_runs
from tests.frameworks import (
    langgraph_openinference,
    openai_agents_export,
    openinference_agents,
    pydantic_ai_otel,
    written,
)

OTEL = ("refund_ok", "missing_lookup", "tool_raises", "forbidden_tool", "retries", "parallel", "convention",
        "unknown_tool", "tool_retry", "structured_output", "reused_call_ids", "approval_in_hook", "workflow_root",
        "two_runs", "raw_args", "format_v5")
AGENTS = ("refund_ok", "tool_raises", "tool_raises_fatal", "unknown_tool", "guardrail", "input_guardrail",
          "tool_guardrail", "handoff", "handoff_refused", "convention", "parallel", "two_runs", "retries")


@pytest.fixture(scope="module")
def otel(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return written(pydantic_ai_otel.write, OTEL, tmp_path_factory.mktemp("otel"), ".otlp.jsonl")


@pytest.fixture(scope="module")
def agents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return written(openai_agents_export.write, AGENTS, tmp_path_factory.mktemp("agents"), ".agents.jsonl")


@pytest.fixture(scope="module")
def live_agents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return written(openai_agents_export.write_live, ("refund_ok", "parallel", "tool_raises", "guardrail"),
                   tmp_path_factory.mktemp("live"), ".agents.jsonl")


@pytest.fixture(scope="module")
def inference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return written(openinference_agents.write, AGENTS, tmp_path_factory.mktemp("openinference"), ".otlp.jsonl")


def events(path: Path, source_format: str = "auto", **options: Any) -> list[dict[str, Any]]:
    (found,) = import_runs(path, source_format, **options)
    return [event for event, _ in found.events]


def kinds(found: list[dict[str, Any]]) -> list[str]:
    return [event["type"] for event in found]


def of_type(found: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [event for event in found if event["type"] == kind]


def tools(found: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [(event["tool"], event.get("args")) for event in of_type(found, "tool.call")]


# -- auto ------------------------------------------------------------------------------------------------------------

def test_auto_tells_the_formats_apart(otel: dict[str, Path], agents: dict[str, Path],
                                      inference: dict[str, Path]) -> None:
    assert import_file(otel["refund_ok"]).source_format == "otel"
    assert import_file(agents["refund_ok"]).source_format == "openai-agents"
    assert import_file(inference["refund_ok"]).source_format == "openinference"


def test_the_three_formats_agree_on_what_the_agent_did(otel: dict[str, Path], agents: dict[str, Path],
                                                        inference: dict[str, Path]) -> None:
    expected = [("lookup_order", {"order_id": "A1"}), ("refund", {"order_id": "A1", "amount": 10.0})]
    assert tools(events(otel["refund_ok"])) == expected
    assert tools(events(agents["refund_ok"])) == expected
    assert tools(events(inference["refund_ok"])) == expected


# -- otel (pydantic-ai) ----------------------------------------------------------------------------------------------

def test_otel_the_agent_span_bounds_the_run(otel: dict[str, Path]) -> None:
    found = events(otel["refund_ok"])
    assert kinds(found) == ["run.start", "tool.call", "tool.result", "tool.call", "tool.result", "run.completed"]
    record = json.loads(otel["refund_ok"].read_text().splitlines()[0])
    trace_id = {span["traceId"] for resource in record["resourceSpans"] for scope in resource["scopeSpans"]
                for span in scope["spans"]}
    assert len(trace_id) == 1 and {event["run_id"] for event in found} != set()
    times = [event["time"] for event in found]
    assert times == sorted(times) and all(len(time) == len("2026-01-01T00:00:00.123456789Z") for time in times)


def test_otel_a_tool_span_is_a_call_and_a_result(otel: dict[str, Path]) -> None:
    found = events(otel["refund_ok"])
    call, result = of_type(found, "tool.call")[0], of_type(found, "tool.result")[0]
    assert call["call_id"] == result["call_id"] == "call_1"   # gen_ai.tool.call.id, the model's id
    assert result["ok"] is True and result["result"] == {"order": "A1", "paid": 10.0, "currency": "EUR"}
    assert result["duration_ms"] > 0
    assert call["data"]["source"]["format"] == "otel" and len(call["data"]["source"]["span_id"]) == 16


def test_otel_a_tool_that_raises_fails_its_result_and_the_run(otel: dict[str, Path]) -> None:
    found = events(otel["tool_raises"])
    (result,) = of_type(found, "tool.result")
    assert result["ok"] is False
    assert found[-1]["type"] == "run.failed" and found[-1]["status"] == "failed"
    assert found[-1]["reason"] == "ValueError: order A9 not found"


def test_otel_a_retried_tool_is_a_failed_result_in_a_run_that_goes_on(otel: dict[str, Path]) -> None:
    found = events(otel["tool_retry"])
    assert of_type(found, "tool.result")[0]["ok"] is False
    assert found[-1]["type"] == "run.completed"


def test_otel_a_tool_the_agent_does_not_have_comes_from_the_message_parts(otel: dict[str, Path]) -> None:
    found = events(otel["unknown_tool"])
    (call,) = of_type(found, "tool.call")
    (result,) = of_type(found, "tool.result")
    assert call["tool"] == "delete_order" and call["data"]["source"]["synthetic"] is True
    assert result["call_id"] == call["call_id"] and "Unknown tool name" in result["result"]
    assert "ok" not in result   # the part says nothing of success: never guessed
    assert call["seq"] < result["seq"]


def test_otel_a_call_its_span_ran_is_never_also_made_from_the_message_parts(otel: dict[str, Path],
                                                                            tmp_path: Path) -> None:
    """Point 29: only a `tool_call` part whose id has no execute_tool span becomes a synthetic call.
    The wall clock that stamps spans steps back 2 s after the second model turn starts (as NTP
    may), so the refund's span starts before the turn that asked for it: it is still that call."""
    lines = otel["refund_ok"].read_text().splitlines()
    spans = [span for line in lines for resource in json.loads(line)["resourceSpans"]
             for scope in resource["scopeSpans"] for span in scope["spans"]]
    chats = sorted(int(span["startTimeUnixNano"]) for span in spans if span["name"].startswith("chat"))
    step = chats[1]

    def stepped(line: str) -> str:
        record = json.loads(line)
        for resource in record["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    for key in ("startTimeUnixNano", "endTimeUnixNano"):
                        if int(span[key]) > step:
                            span[key] = str(int(span[key]) - 2_000_000_000)
        return json.dumps(record)

    path = tmp_path / "stepped.otlp.jsonl"
    path.write_text("".join(stepped(line) + "\n" for line in lines))
    found = events(path)
    assert sorted(tool for tool, _ in tools(found)) == ["lookup_order", "refund"]
    assert not any(event["data"]["source"].get("synthetic") for event in found)
    assert sorted(event["call_id"] for event in of_type(found, "tool.call")) == \
        sorted(event["call_id"] for event in of_type(events(otel["refund_ok"]), "tool.call"))


@pytest.mark.parametrize("written_id", ["", "<not specified>"])
def test_otel_a_tool_span_without_an_id_ran_its_turns_part_of_that_tool(otel: dict[str, Path], tmp_path: Path,
                                                                        written_id: str) -> None:
    """pydantic-ai's refund with its span's `gen_ai.tool.call.id` emptied (or Google ADK's
    placeholder for a tool that raised): the span keeps its span id, and the chat span's part that
    asked for the refund is the call it ran, not a second, synthetic one."""
    record_lines = []
    for line in otel["refund_ok"].read_text().splitlines():
        record = json.loads(line)
        for resource in record["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    for attribute in span["attributes"]:
                        if attribute["key"] == "gen_ai.tool.call.id" and span["name"] == "execute_tool refund":
                            attribute["value"] = {"stringValue": written_id}
        record_lines.append(json.dumps(record) + "\n")
    path = tmp_path / "no-id.otlp.jsonl"
    path.write_text("".join(record_lines))
    found = events(path)
    assert [tool for tool, _ in tools(found)] == ["lookup_order", "refund"]
    assert not any(event["data"]["source"].get("synthetic") for event in found)
    refund = of_type(found, "tool.call")[1]
    assert refund["call_id"] == refund["data"]["source"]["span_id"]


def test_otel_an_output_tool_is_no_call(otel: dict[str, Path]) -> None:
    assert [tool for tool, _ in tools(events(otel["structured_output"]))] == ["lookup_order", "refund"]


def test_otel_reused_call_ids_stay_apart(otel: dict[str, Path]) -> None:
    calls = of_type(events(otel["reused_call_ids"]), "tool.call")
    assert [call["call_id"] for call in calls] == ["call_0", "call_0~2", "call_0~3"]
    assert [call["data"].get("native_call_id") for call in calls] == [None, "call_0", "call_0"]
    results = of_type(events(otel["reused_call_ids"]), "tool.result")
    assert [result["call_id"] for result in results] == ["call_0", "call_0~2", "call_0~3"]


def test_otel_parallel_calls(otel: dict[str, Path]) -> None:
    calls = of_type(events(otel["parallel"]), "tool.call")
    assert sorted(call["args"]["order_id"] for call in calls) == ["A1", "A2"]


def test_otel_the_convention_and_the_output(otel: dict[str, Path]) -> None:
    found = events(otel["convention"])
    (grant,) = of_type(found, "approval.granted")
    assert (grant["approval_id"], grant["approval_scope"], grant["approver"]) == ("ap-1", "refund", "alice")
    refund = next(call for call in of_type(found, "tool.call") if call["tool"] == "refund")
    assert grant["seq"] < refund["seq"]   # ordered by time, not by where the span sits in the file
    assert found[-1]["output"] == "Refunded 10.0 EUR"   # ainv.output on the root, JSON text


def test_otel_an_approval_inside_the_tool_span_comes_after_the_call(otel: dict[str, Path]) -> None:
    found = events(otel["approval_in_hook"])
    (grant,) = of_type(found, "approval.granted")
    refund = next(call for call in of_type(found, "tool.call") if call["tool"] == "refund")
    assert refund["seq"] < grant["seq"]


def test_otel_a_workflow_span_is_the_root(otel: dict[str, Path]) -> None:
    found = events(otel["workflow_root"])
    assert found[0]["type"] == "run.start" and found[-1]["type"] == "run.completed"
    assert found[0]["data"]["source"]["span_id"] != of_type(found, "tool.call")[0]["data"]["source"]["span_id"]


def test_otel_two_traces_are_two_runs(otel: dict[str, Path]) -> None:
    runs = import_runs(otel["two_runs"], "otel")
    assert len(runs) == 2 and runs[0].run_id != runs[1].run_id


def test_otel_every_flavour_reads_alike(tmp_path: Path) -> None:
    files = pydantic_ai_otel.write_flavours(tmp_path)
    assert len(files) >= 3
    read = [[{key: value for key, value in event.items() if key != "data"} | {"data": _no_file(event["data"])}
             for event in events(path)] for path in files.values()]
    assert all(found == read[0] for found in read[1:])


def _no_file(data: dict[str, Any]) -> dict[str, Any]:
    return {**data, "source": {key: value for key, value in data["source"].items() if key != "file"}}


def test_otel_text_args_that_are_not_an_object_are_kept_raw(otel: dict[str, Path]) -> None:
    raw = [call for call in of_type(events(otel["raw_args"]), "tool.call") if "args" not in call]
    for call in raw:
        assert "raw_args" in call["data"]


# -- openai-agents (the SDK's own export) ---------------------------------------------------------------------------

def test_agents_python_reprs_stay_strings(agents: dict[str, Path]) -> None:
    result = of_type(events(agents["refund_ok"]), "tool.result")[0]
    assert result["result"] == "{'order': 'A1', 'paid': 10.0, 'currency': 'EUR'}"
    assert result["data"]["raw_result"] == result["result"]


def test_agents_the_span_id_is_the_call_id(agents: dict[str, Path]) -> None:
    for call in of_type(events(agents["refund_ok"]), "tool.call"):
        assert call["call_id"] == call["data"]["source"]["span_id"] and call["call_id"].startswith("span_")


def test_agents_a_guardrail_stops_at_its_end_after_the_tool_that_ran_before_it(agents: dict[str, Path]) -> None:
    found = events(agents["guardrail"])
    (stop,) = of_type(found, "control.stop")
    assert stop["reason"] == "guardrail:no_refund_promises"
    assert of_type(found, "tool.result")[0]["seq"] < stop["seq"]
    assert found[-1]["type"] == "run.failed" and found[-1]["reason"] == "guardrail:no_refund_promises"


def test_agents_an_input_guardrail_fails_the_run(agents: dict[str, Path]) -> None:
    found = events(agents["input_guardrail"])
    assert kinds(found) == ["run.start", "control.stop", "run.failed"]


def test_agents_a_handoff_is_no_tool_call(agents: dict[str, Path]) -> None:
    found = events(agents["handoff"])
    (handoff,) = of_type(found, "agent.handoff")
    assert handoff["data"]["to"] == "refunds" and handoff["data"]["from"] == "triage"
    assert [tool for tool, _ in tools(found)] == ["refund"]


def test_agents_a_tool_error_is_a_failed_result(agents: dict[str, Path]) -> None:
    found = events(agents["tool_raises"])
    assert of_type(found, "tool.result")[0]["ok"] is False and found[-1]["type"] == "run.completed"
    fatal = events(agents["tool_raises_fatal"])
    assert fatal[-1]["type"] == "run.failed"


def test_agents_a_failed_run_says_its_cause(agents: dict[str, Path]) -> None:
    """The SDK's agent span says only "Error in agent run"; its error's `data` holds the cause. The
    reason was the message alone, the same for a tool that raised and a model that was down."""
    assert events(agents["tool_raises_fatal"])[-1]["reason"] == (
        "Error in agent run: Error running tool lookup_order: order A9 not found")


def test_agents_an_unknown_tool_fails_the_run_on_its_turn(agents: dict[str, Path]) -> None:
    found = events(agents["unknown_tool"])
    assert found[-1]["type"] == "run.failed" and "Tool not found" in found[-1]["reason"]


def test_agents_a_custom_span_named_after_an_event_type(agents: dict[str, Path]) -> None:
    (grant,) = of_type(events(agents["convention"]), "approval.granted")
    assert (grant["approval_id"], grant["approval_scope"], grant["approver"]) == ("ap-1", "refund", "alice")


def test_agents_two_traces_are_two_runs(agents: dict[str, Path]) -> None:
    runs = import_runs(agents["two_runs"], "openai-agents")
    assert len(runs) == 2 and all(found.run_id.startswith("trace_") for found in runs)


def test_agents_runs_are_listed_in_the_order_they_begin_in_the_file(agents: dict[str, Path], tmp_path: Path,
                                                                     cli: Any) -> None:
    """README: runs are listed in the order they begin in the file. A run begins at its trace
    record (written as the trace starts), even when another run's spans all end before its own."""
    first, second = (agents[name].read_text().splitlines() for name in ("refund_ok", "tool_raises"))
    both = tmp_path / "both.agents.jsonl"
    both.write_text("\n".join([first[0], *second, *first[1:]]) + "\n")
    ids = [json.loads(lines[0])["id"] for lines in (first, second)]
    result = cli("summary", "-t", str(both), "--input-format", "openai-agents", "--run", "all")
    assert result.returncode == 0, result.stderr
    assert list(json.loads(result.stdout)) == ids
    refused = cli("summary", "-t", str(both), "--input-format", "openai-agents")
    assert f"holds 2 runs ({ids[0]}, {ids[1]})" in refused.stderr


# -- openinference ---------------------------------------------------------------------------------------------------

def test_openinference_call_ids_come_from_the_model_by_name_and_order(inference: dict[str, Path]) -> None:
    found = events(inference["parallel"])
    calls = of_type(found, "tool.call")
    assert {call["args"]["order_id"]: call["call_id"] for call in calls} == {"A1": "call_lookup_order_1",
                                                                             "A2": "call_lookup_order_2"}


def test_openinference_results_are_json(inference: dict[str, Path]) -> None:
    result = of_type(events(inference["refund_ok"]), "tool.result")[0]
    assert result["result"] == {"order": "A1", "paid": 10.0, "currency": "EUR"}


def test_openinference_a_tripped_guardrail_is_a_stop_and_a_passed_one_is_not(inference: dict[str, Path]) -> None:
    found = events(inference["guardrail"])
    (stop,) = of_type(found, "control.stop")
    assert stop["reason"] == "guardrail:no_refund_promises" and found[-1]["type"] == "run.failed"
    assert not of_type(events(inference["refund_ok"]), "control.stop")


def test_openinference_a_handoff_span_is_a_handoff(inference: dict[str, Path]) -> None:
    found = events(inference["handoff"])
    assert of_type(found, "agent.handoff")[0]["data"]["to"] == "refunds"
    assert [tool for tool, _ in tools(found)] == ["refund"]


def test_a_refused_handoff_is_a_handoff_without_a_target_in_either_export(agents: dict[str, Path],
                                                                         inference: dict[str, Path]) -> None:
    """The handoff's `on_handoff` raised: the SDK's span has no `to_agent`, and the instrumentation
    names its TOOL span `handoff` alone. Point 33: a handoff is never a tool call."""
    for found in (events(agents["handoff_refused"]), events(inference["handoff_refused"])):
        assert kinds(found) == ["run.start", "agent.handoff", "run.failed"], kinds(found)
        (handoff,) = of_type(found, "agent.handoff")
        assert "to" not in handoff["data"]
        assert "handoff refused" in found[-1]["reason"]


def test_openinference_a_tool_error_is_a_failed_result(inference: dict[str, Path]) -> None:
    assert of_type(events(inference["tool_raises"]), "tool.result")[0]["ok"] is False


# -- openinference, from LangGraph (a CHAIN around per-turn AGENT spans, the tools beside them) ---------------------

@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return written(langgraph_openinference.write, langgraph_openinference.SCENARIOS,
                   tmp_path_factory.mktemp("langgraph"), ".otlp.jsonl")


def _spans(path: Path) -> list[dict[str, Any]]:
    return [span for resource in json.loads(path.read_text())["resourceSpans"]
            for scope in resource["scopeSpans"] for span in scope["spans"]]


@pytest.mark.parametrize("scenario", ["refund_ok", "refund_fails", "refund_direct", "lookup_fails"])
def test_openinference_the_span_around_the_agent_spans_and_the_tools_bounds_the_run(graph: dict[str, Path],
                                                                                    scenario: str) -> None:
    """LangGraph writes an AGENT span per model turn, side by side under the graph's CHAIN span,
    and runs the tools beside them: the run is that CHAIN span, so every call is inside it (the
    run ended with the last AGENT span, before a refund that failed the run or that ended it;
    with one model turn, before the lookup that failed it)."""
    found = events(graph[scenario], "openinference")
    (root,) = [span for span in _spans(graph[scenario]) if "parentSpanId" not in span]
    calls = ["tool.call", "tool.result"] * (1 if scenario == "lookup_fails" else 2)
    assert kinds(found) == ["run.start", *calls,
                            "run.failed" if scenario.endswith("_fails") else "run.completed"]
    assert found[-1]["duration_ms"] == (int(root["endTimeUnixNano"]) - int(root["startTimeUnixNano"])) / 1e6
    if scenario == "refund_fails":
        assert found[-1]["reason"] == "RuntimeError('payment gateway down')"   # (no traceback: it holds paths)
        assert of_type(found, "tool.result")[1]["ok"] is False
    if scenario == "lookup_fails":
        assert found[-1]["reason"] == "RuntimeError('orders database down')"


def test_openinference_a_langchain_tool_message_gives_the_result_and_the_call_id(graph: dict[str, Path]) -> None:
    """A LangChain tool's output is its ToolMessage: the result is its `content` (JSON text,
    parsed) and the call id its `tool_call_id`, the model's."""
    found = events(graph["refund_ok"], "openinference")
    assert [(event["tool"], event["call_id"]) for event in of_type(found, "tool.call")] == [
        ("lookup_order", "call_lookup_1"), ("refund", "call_refund_1")]
    assert [(event["call_id"], event["result"], event["ok"]) for event in of_type(found, "tool.result")] == [
        ("call_lookup_1", {"order_id": "A1", "paid": 25.0}, True),
        ("call_refund_1", {"refund_id": "R-9", "amount": 25.0}, True)]


def test_openinference_a_langchain_tool_given_one_argument_alone_has_the_models_arguments(
        graph: dict[str, Path]) -> None:
    """LangChain hands a tool whose call names one argument that argument alone (`input.value`
    is `A1`): the args are then those the model gave the call with the ToolMessage's id, and the
    `input.value` they stand in for is kept as written in `data.raw_args` (§7: a non-object goes
    there); a tool whose `input.value` is an object has it as its args, and no `raw_args`."""
    found = events(graph["refund_ok"], "openinference")
    calls = [(event["tool"], event.get("args"), event["data"].get("raw_args")) for event in of_type(found, "tool.call")]
    assert calls == [("lookup_order", {"order_id": "A1"}, "A1"), ("refund", {"order_id": "A1", "amount": 25}, None)]


def test_openinference_a_langchain_tool_called_without_arguments_has_empty_args(graph: dict[str, Path]) -> None:
    """The instrumentation leaves empty arguments out, the tool's `input.value` and the model's
    `function.arguments` alike: the call had no args, so a `tool_args` rule failed with
    `args_missing` in this format only. A model call written without arguments had `{}`."""
    found = events(graph["no_args"], "openinference")
    assert [(event["tool"], event["call_id"], event.get("args")) for event in of_type(found, "tool.call")] == [
        ("now", "call_now_1", {})]


def test_openinference_a_langchain_tool_that_raised_has_the_args_and_id_the_model_gave_it(
        graph: dict[str, Path]) -> None:
    """A one-argument LangChain tool's `input.value` is the bare argument (`"A9"`). The call that
    returned has a ToolMessage naming its id; the one that raised has none, and its id comes from
    the model's turn beside it (point 28): its args are the model's for that id as well (a
    `tool_args` rule found `args_missing` on exactly the failed calls), both keeping the bare
    `input.value` in `data.raw_args`."""
    found = events(graph["chain_tool_raises"], "openinference")
    calls = [(event["tool"], event["call_id"], event.get("args"), event["data"].get("raw_args"))
             for event in of_type(found, "tool.call")]
    assert calls == [("find_order", "call_find_A1", {"order_id": "A1"}, "A1"),
                     ("find_order", "call_find_A9", {"order_id": "A9"}, "A9")]
    assert [event["ok"] for event in of_type(found, "tool.result")] == [True, False]


def test_openinference_a_model_span_that_left_attributes_out_gives_no_empty_args(
        graph: dict[str, Path], tmp_path: Path) -> None:
    """An exporter over its attribute limit leaves some out and says how many: a call written
    without arguments there may have had some, so none are guessed."""
    export = json.loads(graph["no_args"].read_text())
    for span in [span for resource in export["resourceSpans"] for scope in resource["scopeSpans"]
                 for span in scope["spans"]]:
        if any(attribute["key"] == "openinference.span.kind" and attribute["value"] == {"stringValue": "LLM"}
               for attribute in span["attributes"]):
            span["droppedAttributesCount"] = 3
    path = tmp_path / "dropped.otlp.jsonl"
    path.write_text(json.dumps(export) + "\n")
    assert [(event["tool"], event.get("args")) for event in of_type(events(path, "openinference"), "tool.call")] == [
        ("now", None)]


def test_openinference_a_model_call_written_with_arguments_wins_over_one_written_without(
        graph: dict[str, Path], tmp_path: Path) -> None:
    """The same call id in a later LLM span (a wrapper's, a retry's) that writes no arguments took
    `{}` over the arguments written for it: the tool's args were lost."""
    export = json.loads(graph["refund_ok"].read_text())
    spans = export["resourceSpans"][0]["scopeSpans"][0]["spans"]
    first = min((span for span in spans if any(attribute["value"] == {"stringValue": "call_lookup_1"}
                                                for attribute in span["attributes"])),
                key=lambda span: int(span["startTimeUnixNano"]))
    again = {**first, "spanId": "f" * 16, "startTimeUnixNano": str(int(first["endTimeUnixNano"]) + 1),
             "endTimeUnixNano": str(int(first["endTimeUnixNano"]) + 2),
             "attributes": [attribute for attribute in first["attributes"]
                            if not attribute["key"].endswith("function.arguments")]}
    spans.append(again)
    path = tmp_path / "again.otlp.jsonl"
    path.write_text(json.dumps(export) + "\n")
    assert [(event["tool"], event.get("args")) for event in of_type(events(path, "openinference"), "tool.call")] == [
        ("lookup_order", {"order_id": "A1"}), ("refund", {"order_id": "A1", "amount": 25})]


# -- openai-agents, written live (each span as it starts, and again as it ends) --------------------------------------

@pytest.mark.parametrize("scenario", ["refund_ok", "parallel", "tool_raises", "guardrail"])
def test_agents_a_span_written_as_it_starts_and_as_it_ends_is_one_span(
        agents: dict[str, Path], live_agents: dict[str, Path], scenario: str) -> None:
    """README: a span exported while it ran has no end yet; written again when it ends (same span
    id), it is the same span: the same calls, results and run end as the export written at the end."""
    live, ended = events(live_agents[scenario]), events(agents[scenario])   # (two runs: their ids differ)
    assert [(event["type"], event.get("tool"), event.get("args"), event.get("ok"), event.get("result"))
            for event in live] == \
        [(event["type"], event.get("tool"), event.get("args"), event.get("ok"), event.get("result")) for event in ended]
    assert not any("native_call_id" in event["data"] or "~" in event.get("call_id", "") for event in live)


def test_agents_a_run_whose_process_died_has_no_end_and_its_call_in_flight_no_result(
        live_agents: dict[str, Path], tmp_path: Path) -> None:
    """A live log cut where the process died, inside `refund` (after its span started): the run's
    outermost spans never ended, so there is no run.completed to map (as a call whose span never
    ended gets no result): `check --partial` can then judge the run as cut short."""
    lines = live_agents["refund_ok"].read_text().splitlines()
    refund_start = next(number for number, line in enumerate(lines)
                        if '"name": "refund"' in line and '"ended_at": null' in line)
    cut = tmp_path / "died.agents.jsonl"
    cut.write_text("\n".join(lines[:refund_start + 1]) + "\n")
    found = events(cut)
    assert [(event["type"], event.get("tool")) for event in found] == [
        ("run.start", None), ("tool.call", "lookup_order"), ("tool.result", "lookup_order"), ("tool.call", "refund")]
