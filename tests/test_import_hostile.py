"""Importers on hand-written hostile input: broken files, odd span trees, clocks, ids, many spans,
and the mapping rules every format shares (spec/v2-extensions.md §7, §10 points 26, 30, 34, 36)."""
from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest

from agent_invariants.errors import InputError, TraceError
from agent_invariants.importers import import_file, import_runs
from tests.conftest import Cli

TRACE = "5b8efff798038103d269b633813fc60c"


def span(span_id: str, name: str, start: int, end: int, parent: str | None = None, trace: str = TRACE,
         **attributes: Any) -> dict[str, Any]:
    found: dict[str, Any] = {"traceId": trace, "spanId": span_id, "name": name, "kind": 1,
                             "startTimeUnixNano": str(start), "endTimeUnixNano": str(end),
                             "attributes": [{"key": key.replace("__", "."), "value": _value(value)}
                                            for key, value in attributes.items()], "status": {}}
    if parent is not None:
        found["parentSpanId"] = parent
    return found


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    return {"stringValue": value}


def otlp(*spans: dict[str, Any]) -> str:
    return json.dumps({"resourceSpans": [{"resource": {"attributes": []},
                                          "scopeSpans": [{"scope": {"name": "t"}, "spans": list(spans)}]}]})


BASE = 1_700_000_000_000_000_000


def agent(span_id: str = "a" * 16, start: int = BASE, end: int = BASE + 10_000_000_000, **more: Any) -> dict[str, Any]:
    return span(span_id, "invoke_agent support", start, end, gen_ai__operation__name="invoke_agent", **more)


def tool(span_id: str, start: int, end: int, name: str = "refund", parent: str | None = "a" * 16,
         call_id: str | None = None, **more: Any) -> dict[str, Any]:
    attributes = {"gen_ai__operation__name": "execute_tool", "gen_ai__tool__name": name, **more}
    if call_id is not None:
        attributes["gen_ai__tool__call__id"] = call_id
    return span(span_id, f"execute_tool {name}", start, end, parent, **attributes)


def imported(path: Path, source_format: str = "otel", **options: Any) -> list[dict[str, Any]]:
    (found,) = import_runs(path, source_format, **options)
    return [event for event, _ in found.events]


def write(tmp_path: Path, text: str, name: str = "spans.otlp.jsonl") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# -- bad files ------------------------------------------------------------------------------------------------------

def test_a_truncated_file_names_its_line(tmp_path: Path) -> None:
    good = otlp(agent())
    path = write(tmp_path, good + "\n" + good[: len(good) // 2])
    with pytest.raises(TraceError) as caught:
        import_runs(path, "otel")
    assert caught.value.line == 2 and "invalid JSON" in str(caught.value)


def test_a_bad_span_names_its_line_and_json_path(tmp_path: Path) -> None:
    bad = json.loads(otlp(agent(), tool("b" * 16, BASE + 1, BASE + 2)))
    bad["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["startTimeUnixNano"] = "soon"
    path = write(tmp_path, otlp(agent()) + "\n" + json.dumps(bad))
    with pytest.raises(TraceError) as caught:
        import_runs(path, "otel")
    assert str(caught.value) == (f"{path}:2: $.resourceSpans[0].scopeSpans[0].spans[1].startTimeUnixNano: expected a "
                                 "time in nanoseconds since 1970 (digits)")


def test_a_bad_record_is_exit_2_with_one_line(tmp_path: Path, cli: Cli) -> None:
    path = write(tmp_path, otlp(agent()).replace(TRACE, "not-an-id"))
    contract = write(tmp_path, json.dumps({"version": 1, "name": "c", "rules": [
        {"id": "x", "kind": "deny_tool", "tool": "shell"}]}), "c.json")
    for command in (["check", "-c", str(contract), "-t", str(path), "--input-format", "otel"],
                    ["convert", "--from", "otel", str(path)],
                    ["summary", "-t", str(path), "--input-format", "otel"]):
        result = cli(*command)
        assert result.returncode == 2, command
        assert result.stdout == ""
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
        assert "spans[0].traceId: expected an id of 16 bytes, in hex or base64" in result.stderr


@pytest.mark.parametrize(("record", "where"), [
    ({"resourceSpans": [{"scopeSpans": 7}]}, "$.resourceSpans[0].scopeSpans: expected an array, got a number"),
    ({"resourceSpans": [{"scopeSpans": None}]}, "$.resourceSpans[0].scopeSpans: expected an array, got null"),
    ({"resourceSpans": [{"scopeSpans": [{"spans": 7}]}]},
     "$.resourceSpans[0].scopeSpans[0].spans: expected an array, got a number"),
    ({"resourceLogs": [], "resourceSpans": 7}, "$.resourceSpans: expected `array | null`, got a number"),
    ({"resourceSpans": [{"scopeSpans": [{"spans": [{"attributes": 7}]}]}]}, "attributes"),
])
def test_an_otlp_record_with_a_non_array_inside_is_one_line_whoever_reads_it(tmp_path: Path, cli: Cli,
                                                                              record: Any, where: str) -> None:
    """Telling the format from a record's shape (auto, and the hint a native read gives) looks into
    its arrays before any reader has checked them: what is not an array there is not the sniffer's
    to refuse, but the reader's, at its JSON path."""
    path = write(tmp_path, json.dumps(record) + "\n")
    contract = write(tmp_path, json.dumps({"version": 1, "name": "c", "rules": [
        {"id": "x", "kind": "deny_tool", "tool": "shell"}]}), "c.json")
    for command in (["convert", str(path)], ["summary", "-t", str(path), "--input-format", "auto"],
                    ["summary", "-t", str(path)], ["check", "-c", str(contract), "-t", str(path)]):
        result = cli(*command)
        assert (result.returncode, result.stdout, result.stderr.count("\n")) == (2, "", 1), (command, result.stderr)
        assert "Traceback" not in result.stderr
        if "auto" in command or "convert" in command:
            assert where in result.stderr, result.stderr
        else:
            assert "another tool's format (otel)" in result.stderr


def test_an_event_a_trace_may_not_hold_is_refused_at_the_line_of_its_record(tmp_path: Path, cli: Cli) -> None:
    # the mapping makes, from the span on line 3, a call whose tool name is over 500 characters
    path = write(tmp_path, "\n".join([otlp(agent()), otlp(tool("b" * 16, BASE + 1, BASE + 2, name="ok")),
                                      otlp(tool("c" * 16, BASE + 3, BASE + 4, name="x" * 600))]) + "\n")
    out = tmp_path / "out"
    for command in (["convert", "--from", "otel", str(path)],
                    ["convert", "--from", "otel", str(path), "--out-dir", str(out)]):
        result = cli(*command)
        assert result.returncode == 2, command
        assert result.stdout == ""
        assert result.stderr == f"agent-invariants: {path}:3: $.tool: expected a string of at most 500 characters\n"
    assert not out.exists()


def test_an_unknown_format_lists_the_formats(tmp_path: Path) -> None:
    path = write(tmp_path, '{"hello": "world"}\n')
    with pytest.raises(TraceError, match="otel, openinference, openai-agents, langsmith, mcp-log"):
        import_runs(path, "auto")


def test_an_empty_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="empty"):
        import_runs(write(tmp_path, "\n\n"), "auto")


def test_records_of_other_kinds_are_skipped_and_counted(tmp_path: Path) -> None:
    path = write(tmp_path, otlp(agent()) + '\n{"resourceProfiles": []}\n{"resourceMetrics": []}\n')
    imported_file = import_file(path, "otel")
    assert imported_file.skipped == 2 and len(imported_file.runs) == 1


def test_convert_says_what_it_skipped(tmp_path: Path, cli: Cli) -> None:
    path = write(tmp_path, otlp(agent()) + '\n{"resourceMetrics": []}\n')
    result = cli("convert", "--from", "otel", str(path))
    assert result.returncode == 0
    assert result.stderr == ("agent-invariants: converted 1 run (2 events); skipped 1 record of kinds the mapping "
                             "does not use\n")


def test_convert_counts_the_events_it_writes_when_a_profile_ends_the_run(tmp_path: Path, cli: Cli) -> None:
    """A run has one end: a profile event of type run.failed (here one per review span) is taken
    into the run's own last event, so the note counts what is written."""
    path = write(tmp_path, otlp(agent(), span("b" * 16, "review", BASE + 1, BASE + 2, "a" * 16),
                                span("c" * 16, "review", BASE + 3, BASE + 4, "a" * 16)))
    profile = tmp_path / "profile.json"
    profile.write_text(json.dumps({"rules": [{"when": {"name": "review"},
                                              "emit": {"type": "run.failed", "reason": "rejected"}}]}))
    result = cli("convert", "--from", "otel", str(path), "--profile", str(profile))
    assert result.returncode == 0
    written = [json.loads(line) for line in result.stdout.splitlines()]
    assert [event["type"] for event in written] == ["run.start", "run.failed"]
    assert written[-1]["reason"] == "rejected"
    assert result.stderr == "agent-invariants: converted 1 run (2 events)\n"


def test_a_profile_that_is_a_folder_or_missing_is_named_a_profile(tmp_path: Path, cli: Cli) -> None:
    path = write(tmp_path, otlp(agent()))
    (tmp_path / "profiles").mkdir()
    for profile, problem in [("profiles", "is a directory, not a profile file"), ("missing.json", "no such file")]:
        result = cli("convert", "--from", "otel", str(path), "--profile", str(tmp_path / profile))
        assert (result.returncode, result.stdout) == (2, "")
        assert result.stderr == f"agent-invariants: {tmp_path / profile}: {problem}\n"


def test_a_line_longer_than_the_limit_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, otlp(agent(), tool("b" * 16, BASE + 1, BASE + 2, big="x" * 5000)))
    with pytest.raises(TraceError, match=r"a record is longer than 1,000 bytes \(raise it with --max-line-bytes, or "
                                         r"max_line_bytes in the library and the pytest table\)"):
        import_runs(path, "otel", max_line_bytes=1000)


# -- odd span trees -----------------------------------------------------------------------------------------------

def test_a_span_whose_parent_is_missing_is_still_read(tmp_path: Path) -> None:
    path = write(tmp_path, otlp(agent(), tool("b" * 16, BASE + 1, BASE + 2, parent="f" * 16)))
    assert [event["type"] for event in imported(path)] == ["run.start", "tool.call", "tool.result", "run.completed"]


def test_a_cycle_of_parents_ends(tmp_path: Path) -> None:
    path = write(tmp_path, otlp(tool("b" * 16, BASE + 1, BASE + 2, parent="c" * 16),
                                tool("c" * 16, BASE + 3, BASE + 4, parent="b" * 16),
                                tool("d" * 16, BASE + 5, BASE + 6, parent="d" * 16)))
    found = imported(path)
    assert sum(event["type"] == "tool.call" for event in found) == 3   # one of the cycle is also the run's root
    # no span is a root: the earliest span is the run's, which ends with it (the other two come after)
    assert [event["type"] for event in found] == ["run.start", "tool.call", "tool.result", "run.completed",
                                                  "tool.call", "tool.result", "tool.call", "tool.result"]


def test_duplicate_span_ids_are_both_read(tmp_path: Path) -> None:
    path = write(tmp_path, otlp(agent(), tool("b" * 16, BASE + 1, BASE + 2, call_id="c1"),
                                tool("b" * 16, BASE + 3, BASE + 4, call_id="c1")))
    calls = [event for event in imported(path) if event["type"] == "tool.call"]
    assert [call["call_id"] for call in calls] == ["c1", "c1~2"]


def test_a_clock_going_backwards_gives_no_duration_and_keeps_the_result_after_its_call(tmp_path: Path) -> None:
    path = write(tmp_path, otlp(agent(), tool("b" * 16, BASE + 5_000, BASE + 1_000, call_id="c1")))
    found = imported(path)
    call = next(event for event in found if event["type"] == "tool.call")
    result = next(event for event in found if event["type"] == "tool.result")
    assert call["seq"] < result["seq"] and "duration_ms" not in result


def test_a_run_whose_root_ends_before_it_starts_still_starts_first_and_ends_last(tmp_path: Path) -> None:
    """A root span whose end is stamped before its start (its clock went backwards) made
    `run.completed` the first event and `run.start` the last, the calls after the run's end: the
    run starts first and ends last, as a tool span's call comes before its result, without a
    duration."""
    path = write(tmp_path, otlp(agent(start=BASE + 1_000_000_000, end=BASE), tool("b" * 16, BASE + 500, BASE + 600)))
    found = imported(path)
    assert [event["type"] for event in found] == ["run.start", "tool.call", "tool.result", "run.completed"]
    assert "duration_ms" not in found[-1]


@pytest.mark.parametrize(("attribute", "span_name", "tool_name"), [
    ("", "execute_tool refund", "refund"), ("", "execute_tool  refund ", "refund"),
    ("", " execute_tool refund", "refund"), ("  ", "execute_tool refund", "refund"),
    (" refund ", "execute_tool", "refund"), ("", "execute_tool ", "<unnamed>"), ("", "execute_tool", "<unnamed>"),
    ("", "execute_tool\trefund", "refund"), ("", "execute_toolkit", "execute_toolkit"),
    (" ", " ", "<unnamed>")])
def test_a_tool_span_without_a_tool_name_is_named_by_its_span_name_trimmed(tmp_path: Path, attribute: str,
                                                                          span_name: str, tool_name: str) -> None:
    """README: a tool span without `gen_ai.tool.name` takes the tool from its span name
    (`execute_tool refund` is `refund`); an empty name left the whole span name, trailing space
    and all, as the tool (`"execute_tool "`), which no contract names. A blank attribute is no
    name; a tool neither names is `<unnamed>`, as the other importers call one."""
    tool_span = span("b" * 16, span_name, BASE + 1, BASE + 2, "a" * 16, gen_ai__operation__name="execute_tool",
                     gen_ai__tool__name=attribute)
    found = imported(write(tmp_path, otlp(agent(), tool_span)))
    assert [event["tool"] for event in found if event["type"] == "tool.call"] == [tool_name]


def test_a_call_that_takes_no_time_starts_before_it_ends(tmp_path: Path) -> None:
    path = write(tmp_path, otlp(agent(), tool("b" * 16, BASE + 7, BASE + 7, call_id="c1")))
    found = imported(path)
    assert [event["type"] for event in found] == ["run.start", "tool.call", "tool.result", "run.completed"]
    assert found[2]["duration_ms"] == 0


def _chat(span_id: str, start: int, *parts: dict[str, Any]) -> dict[str, Any]:
    """A chat span (a model turn) whose output asks for these tool calls."""
    messages = json.dumps([{"role": "assistant", "parts": [{"type": "tool_call", **part} for part in parts]}])
    return span(span_id, "chat m", start, start + 1000, "a" * 16, gen_ai__operation__name="chat",
                gen_ai__output__messages=messages)


def _calls(tmp_path: Path, *spans: dict[str, Any]) -> list[tuple[str, str, bool]]:
    found = imported(write(tmp_path, otlp(agent(), *spans)))
    return [(event["tool"], event["call_id"], event["data"]["source"].get("synthetic", False))
            for event in found if event["type"] == "tool.call"]


def test_a_tool_span_without_an_id_ran_the_part_of_its_tool_in_its_turn_only(tmp_path: Path) -> None:
    """Point 29: a part no span ran is a synthetic call. A span without an id of its own ran the
    first part of its tool asked for in the turn it started in (between that chat span and the
    next), not a part of another tool, nor one of an earlier turn."""
    refund = {"id": "call_1", "name": "refund", "arguments": {"order": "A9"}}
    unnamed = tool("b" * 16, BASE + 3000, BASE + 4000, call_id="")
    assert _calls(tmp_path, _chat("c" * 16, BASE + 1000, refund), unnamed) == [("refund", "b" * 16, False)]
    lookup = tool("b" * 16, BASE + 3000, BASE + 4000, name="lookup", call_id="")
    assert _calls(tmp_path, _chat("c" * 16, BASE + 1000, refund), lookup) == [
        ("refund", "call_1", True), ("lookup", "b" * 16, False)]
    later = tool("b" * 16, BASE + 8000, BASE + 9000, call_id="")
    assert _calls(tmp_path, _chat("c" * 16, BASE + 1000, refund), _chat("d" * 16, BASE + 5000), later) == [
        ("refund", "call_1", True), ("refund", "b" * 16, False)]
    twice = {"id": "call_2", "name": "refund", "arguments": {"order": "B7"}}
    assert _calls(tmp_path, _chat("c" * 16, BASE + 1000, refund, twice), unnamed) == [
        ("refund", "call_2", True), ("refund", "b" * 16, False)]


def test_a_part_with_an_empty_id_is_read_as_one_without_an_id(tmp_path: Path) -> None:
    """A `tool_call` part with an empty id names no call and pairs no response: it is passed over
    as a part without an id is (it made an event with an empty call id, which a trace may not hold,
    and the whole import failed at line 1 with `$.call_id`); the span that ran it is read."""
    empty = {"id": "", "name": "refund", "arguments": {"order": "A9"}}
    assert _calls(tmp_path, _chat("c" * 16, BASE + 1000, empty)) == []
    ran = tool("b" * 16, BASE + 3000, BASE + 4000, call_id="")
    assert _calls(tmp_path, _chat("c" * 16, BASE + 1000, empty), ran) == [("refund", "b" * 16, False)]


def test_ids_in_hex_and_in_base64_are_the_same_ids(tmp_path: Path) -> None:
    def b64(text: str) -> str:
        return base64.b64encode(bytes.fromhex(text)).decode()
    hexed = otlp(agent(), tool("b" * 16, BASE + 1, BASE + 2, call_id="c1"))
    encoded = json.loads(hexed)
    for item in encoded["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        item["traceId"], item["spanId"] = b64(item["traceId"]), b64(item["spanId"])
        if "parentSpanId" in item:
            item["parentSpanId"] = b64(item["parentSpanId"])
    one = import_runs(write(tmp_path, hexed, "a.jsonl"), "otel")[0]
    two = import_runs(write(tmp_path, json.dumps(encoded), "b.jsonl"), "otel")[0]
    assert one.run_id == two.run_id == TRACE
    strip = [{**event, "data": {**event["data"], "source": {**event["data"]["source"], "file": ""}}}
             for event, _ in one.events]
    assert strip == [{**event, "data": {**event["data"], "source": {**event["data"]["source"], "file": ""}}}
                     for event, _ in two.events]


def test_times_are_exact_to_the_nanosecond(tmp_path: Path) -> None:
    start = 1_700_000_000_123_456_789
    record = json.loads(otlp(agent(start=start, end=start + 1)))
    record["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["startTimeUnixNano"] = start   # a JSON number > 2^53
    found = imported(write(tmp_path, json.dumps(record)))
    assert found[0]["time"] == "2023-11-14T22:13:20.123456789Z"


def test_status_names_and_numbers_mean_the_same(tmp_path: Path) -> None:
    for code in (2, "STATUS_CODE_ERROR"):
        failing = tool("b" * 16, BASE + 1, BASE + 2, call_id="c1")
        failing["status"] = {"code": code, "message": "no"}
        found = imported(write(tmp_path, otlp(agent(), failing)))
        result = [event for event in found if event["type"] == "tool.result"]
        assert result[0]["ok"] is False and result[0]["data"]["error"] == "no"


def test_an_exception_event_fails_a_tool(tmp_path: Path) -> None:
    failing = tool("b" * 16, BASE + 1, BASE + 2, call_id="c1")
    failing["events"] = [{"name": "exception", "timeUnixNano": str(BASE + 2), "attributes": [
        {"key": "exception.type", "value": {"stringValue": "ValueError"}}]}]
    result = [event for event in imported(write(tmp_path, otlp(agent(), failing))) if event["type"] == "tool.result"]
    assert result[0]["ok"] is False


def test_python_reprs_are_never_evaluated(tmp_path: Path) -> None:
    path = write(tmp_path, otlp(agent(), tool("b" * 16, BASE + 1, BASE + 2, call_id="c1",
                                              gen_ai__tool__call__arguments="{'order': __import__('os')}",
                                              gen_ai__tool__call__result="Order(id=1, paid=10.0)")))
    found = imported(path)
    call = next(event for event in found if event["type"] == "tool.call")
    result = next(event for event in found if event["type"] == "tool.result")
    assert "args" not in call and call["data"]["raw_args"] == "{'order': __import__('os')}"
    assert result["result"] == result["data"]["raw_result"] == "Order(id=1, paid=10.0)"


def test_args_that_are_json_but_not_an_object_are_kept_raw(tmp_path: Path) -> None:
    path = write(tmp_path, otlp(agent(), tool("b" * 16, BASE + 1, BASE + 2, gen_ai__tool__call__arguments="[1, 2]")))
    call = next(event for event in imported(path) if event["type"] == "tool.call")
    assert call["data"]["raw_args"] == "[1, 2]" and "args" not in call


# -- several runs ----------------------------------------------------------------------------------------------------

def test_several_runs_need_a_choice_and_list_their_ids(tmp_path: Path, cli: Cli) -> None:
    other = "0" * 31 + "1"
    path = write(tmp_path, otlp(agent(), agent(span_id="c" * 16).__or__({"traceId": other})))
    contract = write(tmp_path, json.dumps({"version": 1, "name": "c", "rules": [
        {"id": "x", "kind": "deny_tool", "tool": "shell"}]}), "c.json")
    result = cli("convert", "--from", "otel", str(path))
    assert result.returncode == 2 and f"({TRACE}, {other})" in result.stderr and "--out-dir" in result.stderr
    result = cli("check", "-c", str(contract), "-t", str(path), "--input-format", "otel", "--run", other, "-f", "json")
    assert result.returncode == 0 and json.loads(result.stdout)["run"] == other
    result = cli("check", "-c", str(contract), "-t", str(path), "--input-format", "otel", "--run", "nope")
    assert result.returncode == 2 and "has no run 'nope'" in result.stderr and TRACE in result.stderr
    out = tmp_path / "runs"
    result = cli("convert", "--from", "otel", str(path), "--out-dir", str(out))
    assert result.returncode == 0 and sorted(p.name for p in out.iterdir()) == [f"{other}.jsonl", f"{TRACE}.jsonl"]


def test_run_and_profile_need_an_input_format(tmp_path: Path, cli: Cli) -> None:
    contract = write(tmp_path, json.dumps({"version": 1, "name": "c", "rules": [
        {"id": "x", "kind": "deny_tool", "tool": "shell"}]}), "c.json")
    trace = write(tmp_path, '{"seq": 1, "type": "run.start"}\n', "t.jsonl")
    result = cli("check", "-c", str(contract), "-t", str(trace), "--run", "x")
    assert result.returncode == 2 and "--input-format" in result.stderr


def test_a_profile_with_a_mistake_names_its_path_and_line(tmp_path: Path, cli: Cli) -> None:
    profile = write(tmp_path, '{"rules": [\n  {"when": {"name": "x"},\n   "emit": {"type": "approval.granted", '
                              '"approver": {"$attr": 5}}}]}', "p.json")
    path = write(tmp_path, otlp(agent()))
    result = cli("convert", "--from", "otel", str(path), "--profile", str(profile))
    assert result.returncode == 2
    assert "p.json:3: $.rules[0].emit.approver.$attr: expected an attribute name" in result.stderr


def test_a_profile_operator_misspelt_is_refused_not_emitted_as_a_literal(tmp_path: Path, cli: Cli) -> None:
    """`{"$atr": "scope"}` (meant as `$attr`) was taken for a literal object: the grant's scope
    became that object, refused later at the trace's line (or, for `args`, written into the
    event). An object with one `$` key other than `$attr` and `$json_attr` is a mistake in the
    profile, named at its path; one with other keys, `$` ones among them, stays a literal."""
    profile = write(tmp_path, '{"rules": [\n  {"when": {"name": "x"},\n   "emit": {"type": "approval.granted", '
                              '"approval_scope": {"$atr": "scope"}}}]}', "p.json")
    path = write(tmp_path, otlp(agent()))
    result = cli("convert", "--from", "otel", str(path), "--profile", str(profile))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (f"agent-invariants: {profile}:3: $.rules[0].emit.approval_scope.$atr: unknown operator "
                             "'$atr' (did you mean '$attr'?); expected $attr or $json_attr (an object with one `$` "
                             "key is no literal here)\n")
    literal = write(tmp_path, json.dumps({"rules": [{"when": {"name": "x"}, "emit": {
        "type": "approval.granted", "args": {"$ref": "a", "order": "A1"}}}]}), "q.json")
    assert cli("convert", "--from", "otel", str(path), "--profile", str(literal)).returncode == 0


# -- scale -----------------------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_hundred_thousand_spans(tmp_path: Path) -> None:
    spans = [agent(end=BASE + 10**12)]
    spans += [tool(f"{n + 1:016x}", BASE + 10 * n + 1, BASE + 10 * n + 5, name="lookup", call_id=f"c{n}")
              for n in range(100_000)]
    lines = [otlp(*spans[i:i + 5000]) for i in range(0, len(spans), 5000)]
    path = write(tmp_path, "\n".join(lines))
    (found,) = import_runs(path, "otel", max_line_bytes=1 << 24)
    events = found.events   # (each reading converts every event)
    assert len(events) == 200_002
    assert [event["seq"] for event, _ in events[:3]] == [1, 2, 3]
    assert events[-1][0]["type"] == "run.completed"


@pytest.mark.parametrize("flavour", ["otel", "openinference"])
def test_spans_nested_twenty_thousand_deep_are_read_in_time_that_grows_with_their_number(tmp_path: Path, cli: Cli,
                                                                                        flavour: str) -> None:
    """Each span asked whether an agent span was above it by walking its ancestors: a chain of
    16,000 spans (each with a tool beside the next) took 24 s as otel, 37 s as OpenInference, and
    a chain of a million (within the span limit) days. The run is read in about a second."""
    marks = {"otel": ({"gen_ai__operation__name": "invoke_agent"}, {"gen_ai__operation__name": "execute_tool"}),
             "openinference": ({"openinference__span__kind": "AGENT"}, {"openinference__span__kind": "TOOL"})}
    agent_marks, tool_marks = marks[flavour]
    spans = [span(f"{1:016x}", "agent", BASE, BASE + 10**9, **agent_marks)]
    for n in range(2, 20_002):
        spans.append(span(f"{n:016x}", f"step{n}", BASE + n, BASE + 10**9 - n, f"{n - 1:016x}"))
        spans.append(span(f"{n + 10**6:016x}", "lookup", BASE + n, BASE + n + 1, f"{n:016x}", tool__name="lookup",
                          gen_ai__tool__name="lookup", **tool_marks))
    write(tmp_path, "\n".join(otlp(*spans[i:i + 4000]) for i in range(0, len(spans), 4000)))
    result = cli("convert", "--from", flavour, "spans.otlp.jsonl", "-o", "out.jsonl", "--max-line-bytes", "16777216",
                 timeout=30)
    assert (result.returncode, result.stderr) == (0, "agent-invariants: converted 1 run (40002 events)\n")


# -- the shared rules ------------------------------------------------------------------------------------------------

def test_at_equal_times_deeper_ends_shallower_ends_shallower_starts_deeper_starts(tmp_path: Path) -> None:
    root = "a" * 16
    spans = [agent(span_id=root, start=BASE, end=BASE + 100),
             tool("b" * 16, BASE + 10, BASE + 50, name="outer_end", parent=root, call_id="b"),
             tool("c" * 16, BASE + 20, BASE + 50, name="inner_end", parent="b" * 16, call_id="c"),
             tool("e" * 16, BASE + 50, BASE + 55, name="inner_start", parent="d" * 16, call_id="e"),
             tool("d" * 16, BASE + 50, BASE + 60, name="outer_start", parent=root, call_id="d")]
    found = imported(write(tmp_path, otlp(*spans)))
    at_50 = [(event["type"], event["tool"]) for event in found if event["time"].endswith(".000000050Z")]
    assert at_50 == [("tool.result", "inner_end"), ("tool.result", "outer_end"), ("tool.call", "outer_start"),
                     ("tool.call", "inner_start")]


def test_at_equal_times_and_depths_the_file_order_decides(tmp_path: Path) -> None:
    spans = [agent(), tool("b" * 16, BASE + 5, BASE + 9, name="first", call_id="1"),
             tool("c" * 16, BASE + 5, BASE + 9, name="second", call_id="2")]
    calls = [event["tool"] for event in imported(write(tmp_path, otlp(*spans))) if event["type"] == "tool.call"]
    assert calls == ["first", "second"]


def test_sarif_points_at_the_source_file_and_the_record(tmp_path: Path, cli: Cli) -> None:
    write(tmp_path, otlp(agent()) + "\n" + otlp(tool("b" * 16, BASE + 1, BASE + 2, name="shell", call_id="c1")),
          "spans.otlp.jsonl")
    write(tmp_path, json.dumps({"version": 1, "name": "c", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]}), "c.json")
    result = cli("check", "-c", "c.json", "-t", "spans.otlp.jsonl", "--input-format", "otel", "-f", "sarif")
    assert result.returncode == 1, result.stderr
    (found,) = json.loads(result.stdout)["runs"][0]["results"]
    location = found["locations"][0]["physicalLocation"]
    second_line = (tmp_path / "spans.otlp.jsonl").read_text().splitlines()[1]
    assert location["artifactLocation"]["uri"] == "spans.otlp.jsonl"
    assert location["region"] == {"startLine": 2, "endLine": 2, "startColumn": 1, "endColumn": len(second_line) + 1}
    assert found["properties"]["span_id"] == "b" * 16
    text = cli("check", "-c", "c.json", "-t", "spans.otlp.jsonl", "--input-format", "otel").stdout
    assert f"spans.otlp.jsonl:2  span {'b' * 16}  seq 2  [deny_tool.denied]" in text


# -- what an outside review found ------------------------------------------------------------------------------------

def test_a_convention_run_end_becomes_the_runs_end(tmp_path: Path) -> None:
    said = span("c" * 16, "run.failed", BASE + 5, BASE + 6, "a" * 16, ainv__reason="the user gave up",
                ainv__status="failed")
    found = imported(write(tmp_path, otlp(agent(), said)))
    assert [event["type"] for event in found] == ["run.start", "run.failed"]
    assert (found[-1]["reason"], found[-1]["status"]) == ("the user gave up", "failed")


def test_a_span_that_never_ended_gets_no_result(tmp_path: Path) -> None:
    running = tool("b" * 16, BASE + 1, 0, call_id="c1")
    found = imported(write(tmp_path, otlp(agent(), running)))
    assert [event["type"] for event in found] == ["run.start", "tool.call", "run.completed"]


def test_renamed_call_ids_never_collide(tmp_path: Path) -> None:
    spans = [agent(), tool("b" * 16, BASE + 1, BASE + 2, call_id="c~2"),
             tool("c" * 16, BASE + 3, BASE + 4, call_id="c"), tool("d" * 16, BASE + 5, BASE + 6, call_id="c")]
    calls = [event["call_id"] for event in imported(write(tmp_path, otlp(*spans))) if event["type"] == "tool.call"]
    assert len(set(calls)) == 3 and calls[:2] == ["c~2", "c"]


@pytest.mark.parametrize(("stamp", "shown"), [("0999-06-01T00:00:00Z", "0999-06-01T00:00:00.000000Z"),
                                               ("2026-01-01T00:30:00+01:00", "2025-12-31T23:30:00.000000Z")])
def test_iso_times_are_written_in_utc_with_four_digit_years(tmp_path: Path, stamp: str, shown: str) -> None:
    line = json.dumps({"ts": stamp, "session": "s1", "dir": "c2s",
                       "msg": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}})
    found = imported(write(tmp_path, line + "\n", "log.mcp.jsonl"), "mcp-log")
    assert found[0]["time"] == shown


@pytest.mark.parametrize("bad", ["²", "9" * 5000])
def test_a_time_of_odd_digits_is_bad_input(tmp_path: Path, bad: str) -> None:
    record = json.loads(otlp(agent()))
    record["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["startTimeUnixNano"] = bad
    with pytest.raises(TraceError, match="expected a time in nanoseconds since 1970"):
        import_runs(write(tmp_path, json.dumps(record)), "otel")


@pytest.mark.parametrize("field", ["startTimeUnixNano", "endTimeUnixNano"])
@pytest.mark.parametrize("written", ["1.5", "1.7e18", "1700000000000000000.0"])
def test_a_time_written_as_a_fraction_is_bad_input_that_says_how_to_write_it(tmp_path: Path, field: str,
                                                                              written: str) -> None:
    # (a double holds no nanoseconds at today's times: the span's time is not rounded, it is refused)
    text = otlp(agent()).replace(f'"{field}": "{BASE if field.startswith("start") else BASE + 10_000_000_000}"',
                                 f'"{field}": {written}')
    assert written in text
    with pytest.raises(TraceError) as error:
        import_runs(write(tmp_path, text), "otel")
    assert str(error.value).endswith(f"$.resourceSpans[0].scopeSpans[0].spans[0].{field}: expected an integer or a "
                                     "string, got a number with a fraction or an exponent (write the integer in "
                                     "full, or as a string)")


def test_a_time_beyond_year_9999_in_utc_is_bad_input(tmp_path: Path) -> None:
    line = json.dumps({"ts": "9999-12-31T23:59:59-01:00", "session": "s1", "dir": "c2s", "msg": {"id": 1}})
    with pytest.raises(TraceError, match=r"\$\.ts: expected an ISO 8601 time"):
        import_runs(write(tmp_path, line, "log.mcp.jsonl"), "mcp-log")


def _mcp(message: dict[str, Any], direction: str = "c2s") -> str:
    return json.dumps({"ts": "2026-01-01T00:00:00Z", "session": "s", "dir": direction,
                       "msg": {"jsonrpc": "2.0", **message}})


@pytest.mark.parametrize(("lines", "problem"), [
    ([{"id": 1, "method": "tools/call", "params": {"name": 5}}], "2: $.msg.params.name: expected the tool's name "
                                                                 "(a string), got 5"),
    ([{"id": 1, "method": "tools/call", "params": {"arguments": {}}}], "2: $.msg.params.name: expected the tool's "
                                                                       "name (a string), got none"),
    ([{"id": 1, "method": "tools/call", "params": "x"}], '2: $.msg.params: expected the call\'s {name, arguments}, '
                                                         'got "x"'),
    ([{"id": 1, "method": "tools/call", "params": {"name": "t"}},
      {"id": 1, "result": {"content": [], "isError": "yes"}}],
     '3: $.msg.result.isError: expected true or false, got "yes"'),
])
def test_an_mcp_call_without_a_tool_name_or_a_reply_with_an_odd_is_error_is_bad_input(
        tmp_path: Path, lines: list[dict[str, Any]], problem: str) -> None:
    """§7 (mcp-log: tool is `params.name`, ok is not `isError`; an unknown ok is never guessed): no
    tool name is made up, and an `isError` that is neither true nor false is not read as success."""
    records = [_mcp({"id": 0, "method": "initialize", "params": {}}),
               *(_mcp(line, "s2c" if "result" in line else "c2s") for line in lines)]
    path = write(tmp_path, "\n".join(records) + "\n", "log.mcp.jsonl")
    with pytest.raises(TraceError) as error:
        import_runs(path, "mcp-log")
    assert str(error.value) == f"{path}:{problem}"


def test_an_event_the_checker_would_refuse_is_bad_input_at_its_record(tmp_path: Path, cli: Cli) -> None:
    path = write(tmp_path, otlp(agent()) + "\n" + otlp(tool("b" * 16, BASE + 1, BASE + 2, name="t" * 600)))
    result = cli("convert", "--from", "otel", str(path))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith(f"agent-invariants: {path}:2: $.tool:")


def test_an_out_dir_that_is_a_file_is_bad_input(tmp_path: Path, cli: Cli) -> None:
    path = write(tmp_path, otlp(agent()))
    write(tmp_path, "x", "taken")
    result = cli("convert", "--from", "otel", str(path), "--out-dir", str(tmp_path / "taken"))
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "is not a folder" in result.stderr


def test_an_out_dir_that_is_a_mount_point_takes_the_runs(tmp_path: Path, cli: Cli) -> None:
    """A volume's root (`--out-dir /out` in a container) has its parent on another file system:
    runs staged there could not be moved in ("Invalid cross-device link"). /dev/shm is such a
    root on Linux; the runs' ids are new to it, and taken out again."""
    mount = Path("/dev/shm")
    assert os.path.ismount(mount) and os.stat(mount).st_dev != os.stat(mount.parent).st_dev
    ids = [os.urandom(16).hex() for _ in range(2)]
    path = write(tmp_path, otlp(*(agent().__or__({"traceId": trace_id}) for trace_id in ids)))
    try:
        result = cli("convert", "--from", "otel", str(path), "--out-dir", str(mount))
        assert (result.returncode, result.stderr) == (0, "agent-invariants: converted 2 runs (4 events)\n")
        assert sorted(p.name for p in mount.iterdir() if p.name.startswith(tuple(ids))) == sorted(
            f"{trace_id}.jsonl" for trace_id in ids)
        assert not [p for p in mount.iterdir() if p.name.startswith(".agent-invariants-")]
    finally:
        for trace_id in ids:
            (mount / f"{trace_id}.jsonl").unlink(missing_ok=True)


def test_an_otel_log_record_named_after_an_event_type_is_that_event(tmp_path: Path) -> None:
    logs = {"resourceLogs": [{"resource": {}, "scopeLogs": [{"scope": {}, "logRecords": [
        {"timeUnixNano": str(BASE + 5), "traceId": TRACE, "spanId": "a" * 16, "eventName": "outcome.observed",
         "attributes": [{"key": "ainv.outcome_id", "value": {"stringValue": "refund-visible"}},
                        {"key": "ainv.verdict", "value": {"stringValue": "satisfied"}}]},
        {"timeUnixNano": str(BASE + 6), "eventName": "outcome.observed"}]}]}]}   # no trace: no run
    path = write(tmp_path, json.dumps(logs) + "\n" + otlp(agent(), tool("b" * 16, BASE + 1, BASE + 2, call_id="c1")))
    imported_file = import_file(path, "auto")
    assert imported_file.source_format == "otel" and imported_file.skipped == 1
    found = [event for event, _ in imported_file.runs[0].events]
    (outcome,) = [event for event in found if event["type"] == "outcome.observed"]
    assert (outcome["outcome_id"], outcome["verdict"]) == ("refund-visible", "satisfied")
    assert outcome["data"]["source"] == {"format": "otel", "file": str(path), "line": 1, "span_id": "a" * 16}
    assert [event["type"] for event in found] == ["run.start", "tool.call", "tool.result", "outcome.observed",
                                                  "run.completed"]


def test_auto_on_a_native_trace_says_to_read_it_natively(tmp_path: Path) -> None:
    path = write(tmp_path, '{"seq": 1, "type": "run.start"}\n', "native.jsonl")
    with pytest.raises(TraceError, match="is a trace of our own events already: read it as native, the default"):
        import_runs(path, "auto")


def test_auto_on_a_pretty_printed_native_trace_says_how_native_traces_are_written(tmp_path: Path) -> None:
    """The importers read a record written over several lines; native reading does not (one event
    per line, or one array). `auto` said only "read it as native", where the same file was then
    refused as invalid JSON: it says how a native trace is written too."""
    path = write(tmp_path, json.dumps({"seq": 1, "type": "run.start"}, indent=2) + "\n", "native.json")
    with pytest.raises(TraceError) as error:
        import_runs(path, "auto")
    assert str(error.value) == (f"{path}:1: is a trace of our own events already: read it as native, the default "
                                "input format (not auto), as JSON Lines (one event per line) or one JSON array")


def test_the_runs_end_says_how_long_the_run_took(tmp_path: Path) -> None:
    found = imported(write(tmp_path, otlp(agent(start=BASE, end=BASE + 2_500_000))))
    assert [event["type"] for event in found] == ["run.start", "run.completed"]
    assert found[-1]["duration_ms"] == 2.5 and "duration_ms" not in found[0]


def test_a_lone_surrogate_escape_is_read_as_the_replacement_character_as_in_a_native_trace(tmp_path: Path) -> None:
    """JavaScript writes `\\ud83d` alone for a string cut inside an emoji; a native trace reads it as
    U+FFFD, and so does every importer: in the record itself and in args given as JSON text."""
    line = otlp(agent(), tool("b" * 16, BASE + 1000, BASE + 2000, name="refund\ud83d", call_id="c1",
                              gen_ai__tool__call__arguments='{"note": "cut \ud83d"}'))
    assert "\\ud83d" in line   # json.dumps escapes the lone surrogate
    events = imported(write(tmp_path, line + "\n"))
    call = next(event for event in events if event["type"] == "tool.call")
    assert (call["tool"], call["args"]) == ("refund\ufffd", {"note": "cut \ufffd"})
    line = otlp(agent(), tool("b" * 16, BASE + 1000, BASE + 2000, call_id="c1",
                              gen_ai__tool__call__arguments='{"note": "cut \\ud83d"}'))   # the escape in the JSON text
    call = next(event for event in imported(write(tmp_path, line + "\n")) if event["type"] == "tool.call")
    assert call["args"] == {"note": "cut \ufffd"}
    session = {"ts": "2026-01-01T00:00:00Z", "session": "s1", "dir": "c2s",
               "msg": {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "lookup", "arguments": {"order": "A\udc00"}}}}
    events = imported(write(tmp_path, json.dumps(session) + "\n", "s.mcp.jsonl"), "mcp-log")
    assert next(event for event in events if event["type"] == "tool.call")["args"] == {"order": "A\ufffd"}


EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "imports"


@pytest.mark.parametrize(("source_format", "example"), [
    ("otel", "pydantic-ai.otlp.jsonl"), ("openinference", "agents-openinference.otlp.jsonl"),
    ("openai-agents", "agents-sdk.agents.jsonl"), ("langsmith", "langchain.runs.jsonl"),
    ("mcp-log", "mcp-session.mcp.jsonl")])
def test_bytes_that_are_not_utf8_are_refused_even_where_no_field_is_read(tmp_path: Path, cli: Cli,
                                                                          source_format: str, example: str) -> None:
    lines = (EXAMPLES / example).read_bytes().splitlines(keepends=True)
    lines[-1] = b'{"junk\xff": 1, ' + lines[-1][1:]   # a key no importer reads, on the last line
    (tmp_path / "t.jsonl").write_bytes(b"".join(lines))
    array = b"[\n" + b",\n".join(line.rstrip(b"\n") for line in lines) + b"\n]\n"
    (tmp_path / "t.json").write_bytes(array)
    for name in ("t.jsonl", "t.json"):
        for command in (["convert", "--from", source_format, name], ["convert", "--from", "auto", name],
                        ["summary", "-t", name, "--input-format", source_format]):
            result = cli(*command)
            assert (result.returncode, result.stdout) == (2, ""), command
            line = len(lines) + (name == "t.json")   # the array's items start on its second line
            assert result.stderr == f"agent-invariants: {name}:{line}: invalid UTF-8 (byte 7 of the line)\n"


def test_an_agents_sdk_span_with_an_empty_id_is_named_an_empty_id(tmp_path: Path, cli: Cli) -> None:
    """The span id is the call id: an empty one is refused as such (it said `expected a string`)."""
    lines = (EXAMPLES / "agents-sdk.agents.jsonl").read_text(encoding="utf-8").splitlines()
    at = next(number for number, line in enumerate(lines) if '"type": "function"' in line)
    lines[at] = json.dumps({**json.loads(lines[at]), "id": ""})
    (tmp_path / "t.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = cli("convert", "--from", "openai-agents", "t.jsonl")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"agent-invariants: t.jsonl:{at + 1}: $.id: expected a non-empty string\n"


def test_an_integer_too_long_to_read_is_named_at_its_column_when_the_format_is_guessed(tmp_path: Path,
                                                                                         cli: Cli) -> None:
    text = otlp(agent()).replace(f'"{BASE}"', "9" * 5000, 1)
    (tmp_path / "t.jsonl").write_text(text + "\n")
    result = cli("convert", "--from", "auto", "t.jsonl")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == ("agent-invariants: t.jsonl:1: invalid JSON: an integer of 5,000 digits is too long "
                             f"to read (at most 4,300) (column {text.index('9' * 5000) + 1})\n")


@pytest.mark.parametrize("source_format", ["langsmith", "mcp-log", "auto"])
def test_a_number_out_of_range_is_named_at_its_column_not_at_an_unnamed_path(tmp_path: Path, cli: Cli,
                                                                          source_format: str) -> None:
    """LangSmith runs and MCP log records are read as plain JSON first: msgspec names no keys
    there, and the message was `$[...][...]: number out of range`."""
    example = Path(__file__).resolve().parent.parent / "examples/imports"
    source = "langchain.runs.jsonl" if source_format == "langsmith" else "mcp-session.mcp.jsonl"
    lines = (example / source).read_text().splitlines()
    lines[-1] = lines[-1].replace("{", '{"x": [{"y": 1e400}], ', 1)
    (tmp_path / "t.jsonl").write_text("\n".join(lines) + "\n")
    result = cli("convert", "--from", source_format, "t.jsonl")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (f"agent-invariants: t.jsonl:{len(lines)}: invalid JSON: 1e400 is out of range (Infinity "
                             f"is not a number JSON allows) (column {lines[-1].index('1e400') + 1})\n")


def test_a_run_past_the_most_events_an_import_holds_stops_with_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by the fifth hunt: an MCP log whose one session never ends (`yes '<a call>'` piped in)
    grew without end, 2.7 GB in 20 seconds. A run is held whole until it ends; past
    MAX_RUN_EVENTS events (a million; made small here) the import stops, naming the line."""
    monkeypatch.setattr("agent_invariants.importers.common.MAX_RUN_EVENTS", 5)
    record = {"ts": "2026-01-01T00:00:00Z", "session": "s", "dir": "c2s",
              "msg": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "arguments": {}}}}
    data = b"".join(json.dumps(record).encode() + b"\n" for _ in range(20))
    with pytest.raises(TraceError) as caught:
        import_file(data, "mcp-log")
    assert str(caught.value) == ("<bytes>:5: the run s makes more than 5 events, the most an import holds; "
                                 "convert it in parts")
    monkeypatch.setattr("agent_invariants.importers.common.MAX_RUN_EVENTS", 6)
    imported = import_file(b"".join(json.dumps(record).encode() + b"\n" for _ in range(4)), "mcp-log")
    assert len(imported.runs[0].events) == 6   # the start, four calls, the end


@pytest.mark.parametrize(("key", "expected"), [("ts", "an ISO 8601 time"), ("session", "a session id (a string)"),
                                               ("dir", '"c2s" or "s2c"'), ("msg", "a JSON-RPC message (an object)")])
def test_an_mcp_log_record_without_a_key_says_the_key_is_missing_not_null(tmp_path: Path, key: str,
                                                                           expected: str) -> None:
    record: dict[str, object] = {"ts": "2025-01-01T00:00:00Z", "session": "s1", "dir": "c2s", "msg": {"id": 1}}
    del record[key]
    with pytest.raises(TraceError) as error:
        import_runs(write(tmp_path, json.dumps(record)), "mcp-log")
    assert str(error.value).endswith(f":1: $.{key}: expected {expected}, got nothing (the key is missing)")
    record[key] = None
    with pytest.raises(TraceError) as error:
        import_runs(write(tmp_path, json.dumps(record)), "mcp-log")
    assert str(error.value).endswith(f":1: $.{key}: expected {expected}, got null")


def test_a_trace_of_more_spans_than_an_import_holds_is_refused_while_it_is_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Standards: an endless input stops with one line, memory bounded. A trace is built only once
    its last span is read, so its spans wait in memory: the one past the most an import holds
    (1,000,000; 5 here) is refused at its own line, not when the input ends (an endless stream of
    spans grew until it ran out of memory)."""
    import agent_invariants.importers.run as run

    monkeypatch.setattr(run, "MAX_TRACE_RECORDS", 5)
    lines = [otlp(agent())] + [otlp(tool(f"{n:016x}", BASE + n, BASE + n + 1, call_id=f"c{n}")) for n in range(1, 9)]
    path = write(tmp_path, "\n".join(lines) + "\n")
    for source_format in ("otel", "openinference"):
        with pytest.raises(TraceError) as error:
            import_runs(path, source_format)
        assert str(error.value) == (f"{path}:6: trace {TRACE} holds more than 5 spans, the most an import holds; "
                                    "convert it in parts")


@pytest.mark.parametrize("through", ["file", "pipe"])
def test_an_input_of_endless_new_runs_is_refused_at_the_run_past_the_most_an_import_reads(
        tmp_path: Path, cli: Any, through: str) -> None:
    """Standards: memory stays bounded. Each run is remembered (its id, and its last line from a
    first pass over a file), and a pipe's runs all stay open until it ends, so an input that keeps
    starting new ones (an MCP session per line) grew until it ran out of memory: the run past
    100,000 is refused at its line, one line on stderr, exit 2, nothing written."""
    line = '{{"ts": "2026-01-01T00:00:00Z", "session": "s{0}", "dir": "c2s", "msg": {{"jsonrpc": "2.0", "id": 1, ' \
           '"method": "initialize", "params": {{}}}}}}\n'
    (tmp_path / "log.jsonl").write_text("".join(line.format(n) for n in range(100_001)), encoding="utf-8")
    arguments = ["convert", "--from", "mcp-log", "--out-dir", "runs"]
    result = cli(*arguments, "log.jsonl") if through == "file" else cli(*arguments, "-", stdin=(
        tmp_path / "log.jsonl").read_bytes())
    name = "log.jsonl" if through == "file" else "<stdin>"
    assert (result.returncode, result.stdout, result.stderr) == (
        2, "", f"agent-invariants: {name}:100001: the input holds more than 100,000 runs, the most an import reads; "
               "convert it in parts\n")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["log.jsonl"]


def test_runs_open_together_hold_at_most_as_many_records_as_one_trace(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs whose records interleave all stay open until their last line (a pipe's, until it
    ends): between them they hold at most as many records as one trace may (1,000,000; 5 here),
    or three traces of 4 spans each, read together, grew past it unchecked."""
    import agent_invariants.importers.run as run

    monkeypatch.setattr(run, "MAX_TRACE_RECORDS", 5)
    traces = [f"{n:032x}" for n in (1, 2, 3)]
    lines = [otlp(span(f"{n:04x}{t:012x}", "execute_tool refund", BASE + n, BASE + n + 1, trace=trace,
                       gen_ai__operation__name="execute_tool", gen_ai__tool__name="refund"))
             for n in range(4) for t, trace in enumerate(traces)]
    path = write(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(TraceError) as error:
        import_runs(path, "otel", run="all")
    assert str(error.value) == (f"{path}:6: the 3 runs not yet ended here hold more than 5 records between them, the "
                                "most an import holds; convert the input in parts")


def test_a_span_written_as_it_started_and_again_as_it_ended_is_one_call(tmp_path: Path) -> None:
    """README: a span written twice, as it started (no end, or end 0) and again as it ended (a live
    export), is one; the ended record wins. It was two calls, the first never answered."""
    started = {**tool("b" * 16, BASE + 1, 0, name="lookup", call_id="c1"), "endTimeUnixNano": "0"}
    running = {**agent(), "endTimeUnixNano": "0"}
    ended = tool("b" * 16, BASE + 1, BASE + 2, name="lookup", call_id="c1", gen_ai__tool__call__result="found")
    for first in (otlp(running, started), otlp(running, {key: value for key, value in started.items()
                                                         if key != "endTimeUnixNano"})):
        path = write(tmp_path, first + "\n" + otlp(agent(), ended) + "\n")
        found = imported(path)
        assert [(event["type"], event.get("call_id"), event.get("result")) for event in found] == [
            ("run.start", None, None), ("tool.call", "c1", None), ("tool.result", "c1", "found"),
            ("run.completed", None, None)]
        assert found[1]["data"]["source"]["line"] == 2


def test_a_span_renamed_while_it_ran_is_one_span_as_it_started_and_as_it_ended(tmp_path: Path) -> None:
    """OpenTelemetry lets a span be renamed while it runs: written as it started (`invoke_agent`,
    `execute_tool`) and as it ended (`invoke_agent support`, `execute_tool refund`), with the same
    id, start, kind, tool and call id, it is one span. It was two: a call never answered, and a
    root that never ended (the run had no `run.completed`)."""
    started_tool = {key: value for key, value in tool("b" * 16, BASE + 1, 0, call_id="c1").items()
                    if key != "endTimeUnixNano"}
    started_tool["name"] = "execute_tool"
    started_root = {key: value for key, value in agent().items() if key != "endTimeUnixNano"}
    started_root["name"] = "invoke_agent"
    path = write(tmp_path, otlp(started_root, started_tool) + "\n" +
                 otlp(agent(), tool("b" * 16, BASE + 1, BASE + 2, call_id="c1")) + "\n")
    assert [(event["type"], event.get("call_id")) for event in imported(path)] == [
        ("run.start", None), ("tool.call", "c1"), ("tool.result", "c1"), ("run.completed", None)]
    # renamed to a name that is not the started one's made longer: another span
    started_tool["name"] = "execute_tool shell"
    del started_tool["attributes"][1]   # (no gen_ai.tool.name: the tool is the one its name says, `shell`)
    path = write(tmp_path, otlp(agent(), started_tool) + "\n" + otlp(tool("b" * 16, BASE + 1, BASE + 2,
                                                                           call_id="c1")) + "\n")
    assert [event["tool"] for event in imported(path) if event["type"] == "tool.call"] == [
        "shell", "refund"]


def test_a_record_whose_name_is_all_that_says_its_tool_is_not_merged_into_another_tools(tmp_path: Path) -> None:
    """A record as it started is the ended one's renamed only when a tool attribute names the tool
    in both: a tool span without one is the tool its name says (`<unnamed>`, or OpenInference's
    `shell`), and merging it into a record of another tool made a call vanish, or the first, saying
    less, won over a later one naming `shell` (a contract denying `shell` passed). Of two records
    that did not end, the later wins (it may say more)."""
    unnamed = {**tool("b" * 16, BASE + 1, 0), "name": "execute_tool"}
    unnamed["attributes"] = [attribute for attribute in unnamed["attributes"]
                             if attribute["key"] != "gen_ai.tool.name"]
    del unnamed["endTimeUnixNano"]
    shell = tool("b" * 16, BASE + 1, BASE + 2, name="shell", call_id="c1")
    running_shell = {key: value for key, value in shell.items() if key != "endTimeUnixNano"}
    for records in ([unnamed, shell], [unnamed, running_shell], [{**unnamed, "endTimeUnixNano": str(BASE + 3)},
                                                                 running_shell]):
        path = write(tmp_path, "\n".join(otlp(agent(), record) for record in records) + "\n")
        assert sorted(event["tool"] for event in imported(path) if event["type"] == "tool.call") == [
            "<unnamed>", "shell"]
    bare = {**running_shell, "attributes": [attribute for attribute in running_shell["attributes"]
                                            if attribute["key"] != "gen_ai.tool.call.arguments"]}
    fuller = tool("b" * 16, BASE + 1, 0, name="shell", call_id="c1", gen_ai__tool__call__arguments='{"cmd": "id"}')
    del fuller["endTimeUnixNano"]
    path = write(tmp_path, otlp(agent(), bare) + "\n" + otlp(fuller) + "\n")
    assert [(event["type"], event.get("args")) for event in imported(path)][1:2] == [("tool.call", {"cmd": "id"})]
    # a later record that says less (a writer that sends the span again without its attributes)
    # does not win: the shell call stays, with its arguments
    for less in ({**fuller, "attributes": []}, {**fuller, "attributes": [attribute for attribute in fuller[
            "attributes"] if attribute["key"] != "gen_ai.tool.name"]}):
        path = write(tmp_path, otlp(agent(), fuller) + "\n" + otlp(less) + "\n")
        assert [(event["type"], event.get("tool"), event.get("args")) for event in imported(path)][1:2] == [
            ("tool.call", "shell", {"cmd": "id"})]
        # ended without what the started record said: the ended one wins, keeping what only the other said
        ended = {**less, "endTimeUnixNano": str(BASE + 2)}
        path = write(tmp_path, otlp(agent(), fuller) + "\n" + otlp(ended) + "\n")
        assert [(event["type"], event.get("tool"), event.get("args")) for event in imported(path)][1:3] == [
            ("tool.call", "shell", {"cmd": "id"}), ("tool.result", "shell", None)]


def test_google_adks_merged_responses_span_is_no_call_and_its_unspecified_call_id_no_id(tmp_path: Path) -> None:
    """Google ADK writes, beside the `execute_tool` span of each call the model made together, one
    `execute_tool (merged)` span of tool `(merged tools)`: it was a call of a tool of that name
    (which no allow list lets through, and which call budgets counted). A tool that raised gets
    the call id `<not specified>`: two such were `<not specified>` and `<not specified>~2`."""
    merged = tool("c" * 16, BASE + 3, BASE + 4, name="(merged tools)", call_id="0774fb2a-9993")
    merged["name"] = "execute_tool (merged)"
    raised = [tool(f"{n:016x}", BASE + 5 + n, BASE + 6 + n, name="charge", call_id="<not specified>")
              for n in (1, 2)]
    path = write(tmp_path, otlp(agent(), tool("b" * 16, BASE + 1, BASE + 2, name="lookup", call_id="fc1"), merged,
                                *raised) + "\n")
    imported_file = import_file(path, "otel")
    assert [(event["tool"], event["call_id"]) for event, _ in imported_file.runs[0].events
            if event["type"] == "tool.call"] == [("lookup", "fc1"), ("charge", "0000000000000001"),
                                                 ("charge", "0000000000000002")]
    assert imported_file.skipped == 1


def test_a_bytes_repr_result_is_also_kept_raw(tmp_path: Path) -> None:
    """Point 26: a Python repr is kept as a string and also copied to `data.raw_result`; a tool
    that returns bytes has them written as `b'...'` (the Agents SDK's `str()`), which was not."""
    path = write(tmp_path, otlp(agent(), tool("b" * 16, BASE + 1, BASE + 2, name="blob", call_id="c1",
                                              gen_ai__tool__call__result="b'\\x00\\x11\"3'")) + "\n")
    (result,) = [event for event in imported(path) if event["type"] == "tool.result"]
    assert result["result"] == result["data"]["raw_result"] == "b'\\x00\\x11\"3'"


def test_strands_default_tool_events_give_the_args_and_the_result(tmp_path: Path) -> None:
    """Strands, unless `OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental` is set, writes a
    call's arguments as its tool span's `gen_ai.tool.message` event (`content`) and the result as
    its `gen_ai.choice` event (`message`): every call had no args (`tool_args`: args_missing)."""
    def event(name: str, **attributes: str) -> dict[str, Any]:
        return {"name": name, "timeUnixNano": str(BASE + 2),
                "attributes": [{"key": key, "value": {"stringValue": value}} for key, value in attributes.items()]}

    lookup = tool("b" * 16, BASE + 1, BASE + 3, name="lookup", call_id="t1")
    lookup["events"] = [event("gen_ai.tool.message", role="tool", content='{"order_id": "A1"}', id="t1"),
                        event("gen_ai.choice", message='[{"text": "paid 10"}]', id="t1")]
    path = write(tmp_path, otlp(agent(), lookup) + "\n")
    call, result = [event for event in imported(path) if event["type"] in ("tool.call", "tool.result")]
    assert (call["args"], result["result"]) == ({"order_id": "A1"}, [{"text": "paid 10"}])


def test_log_records_the_mapping_does_not_read_are_counted_as_skipped(tmp_path: Path) -> None:
    """README: records of kinds the mapping does not use are skipped and counted. The log records
    of a trace (the older GenAI events, `gen_ai.choice` and the like) were dropped uncounted: a
    run whose tool calls only they held converted with no word of them."""
    logs = [{"timeUnixNano": str(BASE + 5), "traceId": TRACE, "spanId": "a" * 16, "eventName": name,
             "body": {"stringValue": "{}"}} for name in ("gen_ai.choice", "gen_ai.tool.message")]
    path = write(tmp_path, otlp(agent()) + "\n" + json.dumps(
        {"resourceLogs": [{"scopeLogs": [{"logRecords": logs}]}]}) + "\n")
    imported_file = import_file(path, "otel")
    assert [event["type"] for event, _ in imported_file.runs[0].events] == ["run.start", "run.completed"]
    assert imported_file.skipped == 2


def test_spans_that_share_an_id_but_not_their_content_are_both_kept(tmp_path: Path) -> None:
    """The same span written twice (an exporter retrying) is one; two spans that only share an id
    and times, one a lookup and the other a shell call, are two: neither is dropped unsaid (the
    second was, and a contract denying the shell passed)."""
    lookup = tool("b" * 16, BASE + 1, BASE + 2, name="lookup", call_id="c1")
    shell = tool("b" * 16, BASE + 1, BASE + 2, name="lookup", call_id="c1", gen_ai__tool__name="shell")
    path = write(tmp_path, otlp(agent(), lookup) + "\n" + otlp(lookup, shell) + "\n")
    assert [(event["type"], event.get("tool"), event.get("call_id")) for event in imported(path)] == [
        ("run.start", None, None), ("tool.call", "lookup", "c1"), ("tool.call", "shell", "c1~2"),
        ("tool.result", "lookup", "c1"), ("tool.result", "shell", "c1~2"), ("run.completed", None, None)]
    # a record as it started is the ended one's only if it is that span: its name, tool and call id
    started = {key: value for key, value in tool("b" * 16, BASE + 1, BASE + 2, name="shell", call_id="c9").items()
               if key != "endTimeUnixNano"}
    for lines in ([otlp(agent(), lookup), otlp(started)], [otlp(started), otlp(agent(), lookup)]):
        path = write(tmp_path, "\n".join(lines) + "\n")
        assert sorted(event["tool"] for event in imported(path) if event["type"] == "tool.call") == [
            "lookup", "shell"]


def test_a_pretty_printed_export_is_one_record(tmp_path: Path) -> None:
    """An OTLP export written over several lines (`json.dumps(..., indent=2)`, a collector's debug
    output) is one record, as a JSON array of records is read whole: it was "invalid JSON at
    line 1"; the same export on one line gives the same events."""
    export = json.loads(otlp(agent(), tool("b" * 16, BASE + 1, BASE + 2, call_id="c1")))
    pretty = write(tmp_path, json.dumps(export, indent=2) + "\n", name="pretty.json")
    compact = write(tmp_path, json.dumps(export) + "\n", name="compact.jsonl")
    found = imported(pretty)
    assert [event["type"] for event in found] == ["run.start", "tool.call", "tool.result", "run.completed"]
    assert [{**event, "data": {}} for event in found] == [{**event, "data": {}} for event in imported(compact)]
    assert {event["data"]["source"]["line"] for event in found} == {1}


def test_a_pretty_printed_export_is_placed_by_its_lines(tmp_path: Path) -> None:
    """A record over several lines is at the line it starts on (it was line 1 after blank lines),
    and a syntax error in it at its line and column (it was "column 1248", an offset in the file);
    two records one after the other say that a file is one document or JSON Lines."""
    export = json.loads(otlp(agent(), tool("b" * 16, BASE + 1, BASE + 2, call_id="c1")))
    pretty = json.dumps(export, indent=2)
    found = imported(write(tmp_path, "\n\n" + pretty + "\n", name="blank.json"))
    assert {event["data"]["source"]["line"] for event in found} == {3}
    broken = pretty.replace('"kind": 1,', '"kind": 1', 1)   # (the comma after the agent span's kind)
    at = broken[:broken.index('"kind": 1') + len('"kind": 1')].count("\n") + 2   # (noticed at the next key)
    line = broken.splitlines()[at - 1]
    column = len(line) - len(line.lstrip()) + 1
    second = pretty.count("\n") + 2
    for text, message in (
            (broken, f"invalid JSON at line {at}, column {column}: expected ',' or '}}'"),
            (pretty + "\n" + pretty, f"invalid JSON at line {second}, column 1: trailing characters: a file is one "
             "JSON document (an array of records, or one record) or JSON Lines")):
        with pytest.raises(TraceError) as error:
            import_runs(write(tmp_path, text + "\n", name="bad.json"), "otel")
        assert str(error.value) == f"{tmp_path / 'bad.json'}: {message}"


def test_a_run_waiting_to_end_holds_its_payloads_as_text_not_as_parsed_values(tmp_path: Path) -> None:
    """A run is held whole until it ends; arrays of numbers parsed take five times their text.
    Ten calls with 2,000 numbers in their arguments and results: the run read, the memory
    still held is within twice the file's size (it was almost five times)."""
    import random
    import tracemalloc

    pick = random.Random(3)
    lines = [{"ts": "2026-12-02T01:51:00.000000Z", "session": "s1", "dir": "c2s",
              "msg": {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}}]
    for k in range(1, 11):
        numbers = [round(pick.random(), 3) for _ in range(2000)]
        at = f"2026-12-02T01:51:{k:02d}.000000Z"
        lines.append({"ts": at, "session": "s1", "dir": "c2s", "msg": {
            "jsonrpc": "2.0", "id": k, "method": "tools/call", "params": {"name": "fit", "arguments": {"v": numbers}}}})
        lines.append({"ts": at, "session": "s1", "dir": "s2c", "msg": {
            "jsonrpc": "2.0", "id": k, "result": {"content": [], "structuredContent": {"v": numbers}}}})
    path = tmp_path / "session.mcp.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    tracemalloc.start()
    try:
        (run,) = import_runs(path, "mcp-log")
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < 2 * path.stat().st_size
    calls = [event for event, _ in run.events if event["type"] == "tool.call"]
    assert len(calls) == 10 and calls[0]["args"] == {"v": lines[1]["msg"]["params"]["arguments"]["v"]}


def _session_log(sessions: list[str]) -> str:
    return "".join(json.dumps({"ts": f"2026-01-01T00:00:0{n}Z", "session": session, "dir": "c2s",
                               "msg": {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}}) + "\n"
                   for n, session in enumerate(sessions))


@pytest.mark.parametrize(("sessions", "files"), [
    (["a/b", "a_b", "a_b-2"], {"a_b.jsonl": "a/b", "a_b-2.jsonl": "a_b", "a_b-2-2.jsonl": "a_b-2"}),
    (["a_b-2", "a/b", "a_b"], {"a_b-2.jsonl": "a_b-2", "a_b.jsonl": "a/b", "a_b-3.jsonl": "a_b"}),
    (["S1", "s1", "s1-2"], {"S1.jsonl": "S1", "s1-2.jsonl": "s1", "s1-2-2.jsonl": "s1-2"}),
])
def test_runs_whose_names_meet_each_get_a_file_of_their_own(tmp_path: Path, cli: Any, sessions: list[str],
                                                             files: dict[str, str]) -> None:
    """README, --out-dir: a run whose id made safe is a name taken already gets `-2`, `-3`, ...,
    the first free one: `a/b`, `a_b` and `a_b-2` made `a_b-2.jsonl` twice, one run was lost, two
    files were left behind after exit 2 and the message blamed a missing file."""
    (tmp_path / "log.jsonl").write_text(_session_log(sessions), encoding="utf-8")
    result = cli("convert", "--from", "mcp-log", "log.jsonl", "--out-dir", "runs")
    assert (result.returncode, result.stderr) == (0, "agent-invariants: converted 3 runs (6 events)\n")
    found = {path.name: json.loads(path.read_text().splitlines()[0])["run_id"]
             for path in (tmp_path / "runs").iterdir()}
    assert found == files


def test_runs_whose_names_meet_are_named_in_the_order_they_begin(tmp_path: Path, cli: Any) -> None:
    """README, --out-dir: the first run to begin keeps the name. `a/b` begins first and is read
    to its end last; it got `a_b-2.jsonl` (runs are handed out as they end: outside reader)."""
    lines = [("a/b", "c2s", {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}),
             ("a_b", "c2s", {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}),
             ("a/b", "s2c", {"jsonrpc": "2.0", "id": 1, "result": {}})]
    (tmp_path / "log.jsonl").write_text("".join(
        json.dumps({"ts": f"2026-01-01T00:00:0{n}Z", "session": session, "dir": side, "msg": message}) + "\n"
        for n, (session, side, message) in enumerate(lines)), encoding="utf-8")
    result = cli("convert", "--from", "mcp-log", "log.jsonl", "--out-dir", "runs")
    assert (result.returncode, result.stderr) == (0, "agent-invariants: converted 2 runs (4 events)\n")
    found = {path.name: json.loads(path.read_text().splitlines()[0])["run_id"]
             for path in (tmp_path / "runs").iterdir()}
    assert found == {"a_b.jsonl": "a/b", "a_b-2.jsonl": "a_b"}


def test_a_file_made_in_the_folder_while_runs_are_placed_is_kept_and_nothing_is_left(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """README, --out-dir: "a file already there is never overwritten: exit 2 and nothing written",
    also when something else makes it after the folder was looked at (the runs were renamed in,
    replacing it); the runs placed before are taken out again."""
    import agent_invariants.importers.convert as convert

    (tmp_path / "log.jsonl").write_text(_session_log(["a", "b"]), encoding="utf-8")
    out = tmp_path / "runs"
    real_link = os.link

    def link_after_another_writes(source: Any, target: Any) -> None:
        if Path(target).name == "b.jsonl":
            Path(target).write_text("theirs", encoding="utf-8")
        real_link(source, target)

    monkeypatch.setattr(convert.os, "link", link_after_another_writes)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as refused:
        convert.convert_files(["log.jsonl"], "mcp-log", run=None, profile=None, max_line_bytes=1 << 20, out_dir=out)
    assert str(refused.value) == f"{out / 'b.jsonl'}: already exists; refusing to overwrite it"
    assert sorted(path.name for path in out.iterdir()) == ["b.jsonl"]
    assert (out / "b.jsonl").read_text() == "theirs"


def _nested(levels: int) -> str:
    """JSON text `levels` deep: an object holding arrays."""
    return '{"a": ' + "[" * (levels - 1) + "]" * (levels - 1) + "}"


@pytest.mark.parametrize("field", ["gen_ai__tool__call__arguments", "gen_ai__tool__call__result"])
def test_json_text_that_would_nest_the_event_too_deep_stays_text(tmp_path: Path, cli: Cli, field: str) -> None:
    """Found by the sixth hunt: an argument or result whose JSON text nested 499 levels or more
    was parsed, and its event, one level more, was refused with the whole run ("nested more than
    500 levels deep" at the span's line): one argument a model wrote made the trace uncheckable.
    README: such text "stays text (`data.raw_args` / `data.raw_result`)". Text 499 levels deep
    still fits (its event is 500)."""
    fits, too_deep = _nested(499), _nested(500)
    path = write(tmp_path, otlp(agent(), tool("b" * 16, BASE + 1, BASE + 2, call_id="c1", **{field: fits}),
                                tool("c" * 16, BASE + 3, BASE + 4, call_id="c2", **{field: too_deep})))
    result = cli("convert", "--from", "otel", str(path))
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    if field.endswith("arguments"):
        calls = [event for event in events if event["type"] == "tool.call"]
        assert calls[0]["args"] == json.loads(fits) and "raw_args" not in calls[0]["data"]
        assert "args" not in calls[1] and calls[1]["data"]["raw_args"] == too_deep
    else:
        results = [event for event in events if event["type"] == "tool.result"]
        assert results[0]["result"] == json.loads(fits) and "raw_result" not in results[0]["data"]
        assert results[1]["result"] == results[1]["data"]["raw_result"] == too_deep
    (tmp_path / "c.json").write_text(json.dumps({"version": 1, "name": "c", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}]}))
    checked = cli("check", "-c", str(tmp_path / "c.json"), "-t", str(path), "--input-format", "otel")
    assert (checked.returncode, checked.stderr) == (0, "")


# -- the order records are written in --------------------------------------------------------------------------------

def _oi_span(span_id: str, parent: str | None, name: str, kind: str, start: int, end: int,
             error: str | None = None) -> dict[str, Any]:
    found = span(span_id, name, BASE + start, BASE + end, parent, openinference__span__kind=kind)
    found["status"] = {"code": "STATUS_CODE_ERROR", "message": error} if error else {"code": "STATUS_CODE_OK"}
    return found


def test_a_failed_run_gives_the_reason_of_the_first_span_to_fail_however_the_spans_are_written(tmp_path: Path) -> None:
    """Found by the sixth hunt, on spans of the OpenAI Agents instrumentation: a tripped input
    guardrail (its GUARDRAIL span ends first) and the agent's turn, failed by it. The reason was
    the first failing span written: `guardrail:no_shell` in one order, the turn's error text in
    the other, and a rule on the reason passed or failed with the order of the lines (a
    Collector's file keeps none). §7: events are ordered by time; the first to fail says why."""
    spans = [_oi_span("00000000000000b1", "00000000000000a3", "no_shell", "GUARDRAIL", 400, 500),
             _oi_span("00000000000000a3", "00000000000000a2", "turn", "CHAIN", 300, 900,
                      error="Guardrail tripwire triggered: {'guardrail': 'no_shell'}"),
             _oi_span("00000000000000a2", "00000000000000a1", "guarded", "AGENT", 200, 950),
             _oi_span("00000000000000a1", None, "guard", "AGENT", 100, 1000)]
    reasons = []
    for order, written in (("forward", spans), ("reversed", spans[::-1])):
        path = write(tmp_path, "".join(otlp(one) + "\n" for one in written), f"{order}.otlp.jsonl")
        (end,) = [event for event in imported(path, "openinference") if event["type"] == "run.failed"]
        reasons.append(end["reason"])
    assert reasons == ["guardrail:no_shell", "guardrail:no_shell"]


def _agents_span(span_id: str, parent: str | None, start: str, end: str, data: dict[str, Any],
                 error: str | None = None) -> str:
    return json.dumps({"object": "trace.span", "id": span_id, "trace_id": "trace_1", "parent_id": parent,
                       "started_at": f"2026-01-01T00:00:{start}+00:00", "ended_at": f"2026-01-01T00:00:{end}+00:00",
                       "span_data": data, "error": None if error is None else {"message": error, "data": {}}})


def test_agents_sdk_failure_reason_does_not_depend_on_the_order_spans_are_written(tmp_path: Path) -> None:
    """The same in the Agents SDK's own export: a guardrail that tripped at 0.5 s and the agent
    span that failed for it at 0.9 s give the guardrail's reason, whichever line comes first."""
    trace = json.dumps({"object": "trace", "id": "trace_1", "workflow_name": "w"})
    guardrail = {"type": "guardrail", "name": "no_shell", "triggered": True}
    spans = [_agents_span("guard", "agent", "00.4", "00.5", guardrail),
             _agents_span("agent", None, "00.1", "00.9", {"type": "agent", "name": "a"}, error="Stopped: guardrail")]
    reasons = []
    for order, written in (("forward", spans), ("reversed", spans[::-1])):
        path = write(tmp_path, "\n".join([trace, *written]) + "\n", f"{order}.jsonl")
        (end,) = [event for event in imported(path, "openai-agents") if event["type"] == "run.failed"]
        reasons.append(end["reason"])
    assert reasons == ["guardrail:no_shell", "guardrail:no_shell"]


def test_agents_sdk_run_bounds_are_the_root_span_when_a_tool_starts_and_ends_with_it(tmp_path: Path) -> None:
    """Found by the sixth hunt: a function span written before the root, starting and ending in
    the same microsecond as it, gave `run.start` and `run.failed` its line and span id, so a
    `run_status` violation pointed at a tool that succeeded. At equal times the shallower span
    starts first and ends last (§7): the bounds are the root's."""
    lines = [json.dumps({"object": "trace", "id": "trace_1", "workflow_name": "w"}),
             _agents_span("fn", "root", "00", "01", {"type": "function", "name": "f", "input": "{}", "output": "r"}),
             _agents_span("root", None, "00", "01", {"type": "agent", "name": "a"}, error="Max turns exceeded")]
    events = imported(write(tmp_path, "\n".join(lines) + "\n", "tie.jsonl"), "openai-agents")
    assert [(event["type"], event["data"]["source"]["line"], event["data"]["source"]["span_id"]) for event in events] \
        == [("run.start", 3, "root"), ("tool.call", 2, "fn"), ("tool.result", 2, "fn"), ("run.failed", 3, "root")]


def test_a_tool_name_that_is_no_string_gives_way_to_the_span_name(tmp_path: Path) -> None:
    """Found by the sixth hunt: `gen_ai.tool.name` written as `{"intValue": "7"}` made the call
    `<unnamed>` (OpenInference's `tool.name` the same), though the span's name says the tool, as
    it does when the attribute is absent (README: "A span without `gen_ai.tool.name` ... is the
    tool its name says")."""
    otel = write(tmp_path, otlp(agent(), tool("b" * 16, BASE + 1, BASE + 2, name="x", call_id="c1",
                                              gen_ai__tool__name=7)), "otel.otlp.jsonl")
    assert [event["tool"] for event in imported(otel) if event["type"] == "tool.call"] == ["x"]
    for named in ({"intValue": "7"}, {"stringValue": "  "}):   # (a blank one too: a second reading)
        spans = [_oi_span("00000000000000a1", None, "support", "AGENT", 0, 100),
                 _oi_span("00000000000000b1", "00000000000000a1", "refund", "TOOL", 10, 20)]
        spans[1]["attributes"].append({"key": "tool.name", "value": named})
        oi = write(tmp_path, "".join(otlp(one) + "\n" for one in spans), "oi.otlp.jsonl")
        assert [event["tool"] for event in imported(oi, "openinference") if event["type"] == "tool.call"] == ["refund"]


def test_agents_sdk_a_tripped_guardrail_exported_before_it_ended_says_why_the_run_failed(tmp_path: Path) -> None:
    """A second reading: a triggered guardrail without `ended_at` gets its `control.stop` where it
    starts, before a later agent error, but the run's reason was that error's: a span still open
    now ends, for the reason too, where its stop is placed."""
    trace = json.dumps({"object": "trace", "id": "trace_1", "workflow_name": "w"})
    guard = json.loads(_agents_span("guard", "agent", "00.2", "00.2",
                                    {"type": "guardrail", "name": "g", "triggered": True}))
    del guard["ended_at"]
    lines = [trace, json.dumps(guard),
             _agents_span("agent", None, "00.1", "00.6", {"type": "agent", "name": "a"}, error="turn-err")]
    events = imported(write(tmp_path, "\n".join(lines) + "\n", "open.jsonl"), "openai-agents")
    assert [(event["type"], event.get("reason")) for event in events] == [
        ("run.start", None), ("control.stop", "guardrail:g"), ("run.failed", "guardrail:g")]


# Found by a spec-words reading of the importers: a result that is Python's str() of None or a
# bool was not copied to data.raw_result as other reprs are (point 26); JSON text holding a number
# beyond any double, or nested too deep, stayed text in a result without data.raw_result, which the
# README promises (args had it); a call id written as an intValue was dropped for the span's id.
# (And a later reading: Python's str() of a float that is no JSON number, `inf` or `nan`.)

@pytest.mark.parametrize("written", ["None", "True", "False", "inf", "-inf", "nan", "1e400", "[" * 600 + "]" * 600])
def test_a_result_an_event_cannot_hold_as_a_value_is_kept_as_text_and_raw(tmp_path: Path, written: str) -> None:
    spans = otlp(agent(), tool("b" * 16, BASE + 1, BASE + 2, call_id="c1", gen_ai__tool__call__result=written))
    result = next(event for event in imported(write(tmp_path, spans)) if event["type"] == "tool.result")
    assert result["result"] == written
    assert result["data"]["raw_result"] == written


@pytest.mark.parametrize("written", ["none", "True story", "1e3", "infinite", "NaN!"])
def test_text_that_is_no_repr_is_not_copied_to_raw(tmp_path: Path, written: str) -> None:
    spans = otlp(agent(), tool("b" * 16, BASE + 1, BASE + 2, call_id="c1", gen_ai__tool__call__result=written))
    result = next(event for event in imported(write(tmp_path, spans)) if event["type"] == "tool.result")
    assert result["result"] == (1000 if written == "1e3" else written)
    assert "raw_result" not in result.get("data", {})


def test_a_call_id_written_as_an_integer_is_its_digits(tmp_path: Path) -> None:
    spans = otlp(agent(), tool("b" * 16, BASE + 1, BASE + 2, call_id=42))   # {"intValue": "42"}
    assert [(event["type"], event["call_id"]) for event in imported(write(tmp_path, spans))
            if event["type"].startswith("tool.")] == [("tool.call", "42"), ("tool.result", "42")]
