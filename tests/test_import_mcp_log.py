"""The mcp-log importer on logs of real MCP sessions (the official SDK's client and server, in one
process: tests/frameworks/mcp_session_log.py), and the common mapping rules they exercise
(spec/v2-extensions.md §7, §10 point 35)."""
from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from agent_invariants.api import check_trace
from agent_invariants.errors import TraceError
from agent_invariants.importers import import_file, import_runs
from agent_invariants.importers.records import SourceFile
from agent_invariants.importers.source import ImportedTrace
from tests.conftest import Cli
from tests.frameworks import mcp_session_log, written


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    logging.getLogger("mcp").addHandler(logging.NullHandler())   # tool_raises logs the tool's traceback
    return written(mcp_session_log.write, mcp_session_log.SCENARIOS, tmp_path_factory.mktemp("mcp-logs"),
                   ".mcp.jsonl")


NO_SHELL = '{"version": 1, "name": "mcp", "rules": [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]}'


def events(path: Path, run: str | None = None) -> list[dict[str, Any]]:
    (found,) = import_runs(path, "mcp-log", run=run)
    return [event for event, _ in found.events]


def kinds(found: list[dict[str, Any]]) -> list[str]:
    return [event["type"] for event in found]


def test_a_session_is_a_run_started_by_initialize_and_completed_at_the_end_of_the_log(logs: dict[str, Path]) -> None:
    found = events(logs["refund_ok"])
    assert kinds(found) == ["run.start", "tool.call", "tool.result", "tool.listing", "tool.call", "tool.result",
                            "run.completed"]
    assert [event["seq"] for event in found] == list(range(1, 8))
    assert {event["run_id"] for event in found} == {"s1"}
    records = [json.loads(line) for line in logs["refund_ok"].read_text().splitlines()]
    assert records[0]["msg"]["method"] == "initialize"
    assert found[0]["time"] == records[0]["ts"]   # microseconds kept, UTC
    assert found[-1]["time"] == records[-1]["ts"]


def test_a_call_and_its_reply_become_a_call_and_its_result(logs: dict[str, Path]) -> None:
    call, result = events(logs["refund_ok"])[1:3]
    assert call["tool"] == "lookup_order" and call["args"] == {"order_id": "A1"}
    assert call["call_id"] == result["call_id"] == "s1:2"
    assert result["ok"] is True
    assert result["result"] == {"order": "A1", "paid": 10.0, "currency": "EUR"}   # structuredContent
    assert result["duration_ms"] > 0


def test_a_reply_written_before_its_request_still_answers_it(logs: dict[str, Path], tmp_path: Path) -> None:
    """A proxy that logs each direction from its own thread may write a reply before its request;
    pairs are found by (session, side, id), and the times order the events: the reply answers the
    request, as when the lines are the other way round (it was skipped, and the call unanswered).
    A reply earlier in time than any request of its id answers none (it is skipped and counted)."""
    lines = logs["refund_ok"].read_text().splitlines()
    records = [json.loads(line) for line in lines]
    call = next(at for at, record in enumerate(records) if record["msg"].get("method") == "tools/call")
    reply = next(at for at, record in enumerate(records) if at > call and record["msg"].get("id") ==
                 records[call]["msg"]["id"] and record["dir"] != records[call]["dir"])
    swapped = [*lines[:call], lines[reply], *lines[call + 1:reply], lines[call], *lines[reply + 1:]]
    path = tmp_path / "swapped.mcp.jsonl"
    path.write_text("\n".join(swapped) + "\n")
    strip = [({key: value for key, value in event.items() if key not in ("seq", "data")}) for event in events(path)]
    assert strip == [({key: value for key, value in event.items() if key not in ("seq", "data")})
                     for event in events(logs["refund_ok"])]
    early = {**records[reply], "ts": "2000-01-01T00:00:00.000000Z"}
    path.write_text("\n".join([*lines[:call], json.dumps(early), *lines[call:reply], *lines[reply + 1:]]) + "\n")
    imported = import_file(path, "mcp-log")
    assert [event["type"] for event, _ in imported.runs[0].events].count("tool.result") == 1
    assert imported.skipped == import_file(logs["refund_ok"], "mcp-log").skipped + 1


@pytest.mark.parametrize(("asked", "answered", "paired"), [
    ("1", "1.0", True), ("1", "1e0", True), ("7", "7", True), ('"1"', "1", False), ("1", '"1"', False)])
def test_a_reply_answers_the_request_of_the_same_json_id(tmp_path: Path, asked: str, answered: str,
                                                        paired: bool) -> None:
    """JSON-RPC ids are JSON values: a reply whose id is the request's written `1.0` or `1e0`
    (a proxy that reads and writes JSON may) answers it; `"1"` and `1` stay different ids."""
    def line(n: int, direction: str, message: str) -> str:
        return (f'{{"ts": "2026-01-01T00:00:0{n}Z", "session": "s1", "dir": "{direction}", '
                f'"msg": {{"jsonrpc": "2.0", {message}}}}}')
    path = tmp_path / "log.mcp.jsonl"
    path.write_text("\n".join([
        line(0, "c2s", '"id": 0, "method": "initialize", "params": {}'),
        line(1, "c2s", f'"id": {asked}, "method": "tools/call", "params": {{"name": "refund", "arguments": {{}}}}'),
        line(2, "s2c", f'"id": {answered}, "result": {{"content": [{{"type": "text", "text": "ok"}}]}}')]) + "\n")
    types = [event["type"] for event, _ in import_file(path, "mcp-log").runs[0].events]
    assert types.count("tool.result") == (1 if paired else 0)


@pytest.mark.parametrize("bad", [None, True, {"a": 1}, [1]])
def test_a_request_id_that_is_no_string_or_number_is_bad_input(tmp_path: Path, bad: Any) -> None:
    """MCP ids are strings or numbers, never null: another id would become a Python repr in the
    call id (`s1:{'a': 1}`). An error reply with a null id (to a request that could not be read)
    answers no request: skipped, and counted."""
    def line(direction: str, message: dict[str, Any]) -> str:
        return json.dumps({"ts": "2026-01-01T00:00:00Z", "session": "s1", "dir": direction,
                           "msg": {"jsonrpc": "2.0", **message}})
    start = line("c2s", {"id": 0, "method": "initialize", "params": {}})
    path = tmp_path / "log.mcp.jsonl"
    path.write_text("\n".join([start, line("c2s", {"id": bad, "method": "tools/call", "params": {
        "name": "refund", "arguments": {}}})]) + "\n")
    with pytest.raises(TraceError) as error:
        import_runs(path, "mcp-log")
    assert str(error.value) == (f"{path}:2: $.msg.id: expected a string or a number, as MCP ids are (never null), "
                                f"got {json.dumps(bad, separators=(',', ':'))}")
    path.write_text("\n".join([start, line("s2c", {"id": None, "error": {"code": -32700, "message": "Parse error"}})])
                    + "\n")
    imported = import_file(path, "mcp-log")
    assert (imported.skipped, [event["type"] for event, _ in imported.runs[0].events]) == (
        1, ["run.start", "run.completed"])


def test_every_event_says_where_it_came_from(logs: dict[str, Path]) -> None:
    lines = logs["refund_ok"].read_text().splitlines()
    (found,) = import_runs(logs["refund_ok"], "mcp-log")
    for event, line in found.events:
        source = event["data"]["source"]
        assert source["format"] == "mcp-log" and source["file"] == str(logs["refund_ok"])
        assert source["line"] == line
    call, line = found.events[1]
    assert json.loads(lines[line - 1])["msg"]["method"] == "tools/call"


@pytest.mark.parametrize("scenario", ["tool_raises", "unknown_tool", "bad_arguments"])
def test_a_tool_error_unknown_tool_or_bad_arguments_is_a_failed_result(logs: dict[str, Path], scenario: str) -> None:
    result = next(event for event in events(logs[scenario]) if event["type"] == "tool.result")
    assert result["ok"] is False
    assert isinstance(result["result"], str) and result["result"]   # the error text the server sent


def test_a_json_rpc_error_reply_is_a_failed_result_with_the_error(logs: dict[str, Path]) -> None:
    result = next(event for event in events(logs["jsonrpc_error"]) if event["type"] == "tool.result")
    assert result["ok"] is False
    assert result["data"]["error"]["message"] == "order A9 not found"


def test_a_cancelled_call_gets_tool_cancelled_and_no_result(logs: dict[str, Path]) -> None:
    found = events(logs["cancelled"])
    assert kinds(found) == ["run.start", "tool.call", "tool.cancelled", "run.completed"]
    assert found[2]["call_id"] == found[1]["call_id"]


def test_an_accepted_elicitation_is_a_grant_of_the_pending_call(logs: dict[str, Path]) -> None:
    found = events(logs["elicitation_accept"])
    call = next(event for event in found if event["type"] == "tool.call" and event["tool"] == "refund")
    grant = next(event for event in found if event["type"] == "approval.granted")
    assert grant["approved"] is True and grant["call_id"] == call["call_id"]
    assert grant["args"] == {"approved": True}
    assert grant["seq"] > call["seq"]   # it happens inside the call, and is not moved silently
    assert grant["approval_id"] == "s1:elicitation:1"   # the server's request 1, not the client's initialize 1


def test_a_declined_elicitation_is_a_grant_refused(logs: dict[str, Path]) -> None:
    grant = next(event for event in events(logs["elicitation_decline"]) if event["type"] == "approval.granted")
    assert grant["approved"] is False


def test_hoist_elicitation_moves_the_grant_just_before_its_call(logs: dict[str, Path], tmp_path: Path) -> None:
    from agent_invariants.importers.profile import load_profile

    profile = tmp_path / "profile.json"
    profile.write_text('{"hoist_elicitation": true}')
    (found,) = import_runs(logs["elicitation_accept"], "mcp-log", profile=load_profile(profile))
    events_ = [event for event, _ in found.events]
    at = next(i for i, event in enumerate(events_) if event["type"] == "approval.granted")
    assert events_[at + 1]["type"] == "tool.call" and events_[at + 1]["call_id"] == events_[at]["call_id"]
    assert events_[at]["data"]["hoisted"] is True


def test_the_newer_protocol_continues_a_call_with_input_responses(logs: dict[str, Path]) -> None:
    found = events(logs["modern_elicitation_accept"])
    refunds = [event for event in found if event.get("tool") == "refund" and event["type"] == "tool.call"]
    assert len(refunds) == 1   # the continuation is the same call
    grant = next(event for event in found if event["type"] == "approval.granted")
    result = next(event for event in found if event["type"] == "tool.result" and event["tool"] == "refund")
    assert grant["approved"] is True and grant["call_id"] == refunds[0]["call_id"] == result["call_id"]
    assert result["ok"] is True and result["result"] == {"refunded": 10.0, "order": "A1"}
    assert found[0]["type"] == "run.start"   # no initialize: the first message starts the run


def test_two_sessions_are_two_runs_and_need_a_choice(logs: dict[str, Path], tmp_path: Path, cli: Cli) -> None:
    runs = import_runs(logs["two_sessions"], "mcp-log")
    assert [found.run_id for found in runs] == ["s1", "s2"]
    assert {event["run_id"] for event, _ in runs[1].events} == {"s2"}
    contract = tmp_path / "c.json"
    contract.write_text(NO_SHELL)
    result = cli("check", "-c", str(contract), "-t", str(logs["two_sessions"]), "--input-format", "mcp-log")
    assert result.returncode == 2
    assert "holds 2 runs (s1, s2)" in result.stderr and "--run ID" in result.stderr and "--run all" in result.stderr
    assert cli("check", "-c", str(contract), "-t", str(logs["two_sessions"]), "--input-format", "mcp-log",
                   "--run", "s1").returncode == 0
    both = cli("check", "-c", str(contract), "-t", str(logs["two_sessions"]), "--input-format", "mcp-log",
                   "--run", "all", "-f", "json")
    assert both.returncode == 1
    report = json.loads(both.stdout)
    assert [(section["run"], section["passed"]) for section in report["reports"]] == [("s1", True), ("s2", False)]


def _sessions(log: Path, order: list[str], rename: dict[str, str] | None = None) -> str:
    """The records of `log`'s sessions in `order` (each session's records in file order), renamed."""
    records = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    kept = [record for session in order for record in records if record["session"] == session]
    for record in kept:
        record["session"] = (rename or {}).get(record["session"], record["session"])
    return "".join(json.dumps(record) + "\n" for record in kept)


def _pairs(report: dict[str, Any]) -> list[tuple[str, str, bool]]:
    return [(section["baseline"]["run"], section["candidate"]["run"], section["compatible"])
            for section in report["reports"]]


def test_compare_run_all_pairs_the_runs_by_id(logs: dict[str, Path], tmp_path: Path, cli: Cli) -> None:
    """§10.34: `--run all` compares every run as a batch, a section per run, paired by run id as a
    folder batch pairs by name (not by order: the candidate's sessions come the other way round)."""
    (tmp_path / "c.json").write_text(NO_SHELL)
    (tmp_path / "candidate.mcp.jsonl").write_text(_sessions(logs["two_sessions"], ["s2", "s1"]))
    result = cli("compare", "-c", str(tmp_path / "c.json"), "-b", str(logs["two_sessions"]),
                 "-k", str(tmp_path / "candidate.mcp.jsonl"), "--input-format", "mcp-log", "--run", "all", "-f", "json")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["schema"] == "agent-invariants/compare-batch/v1" and report["pairs"] == 2
    assert _pairs(report) == [("s2", "s2", False), ("s1", "s1", True)]   # s2 still calls shell
    assert [regression["kind"] for regression in report["reports"][0]["regressions"]] == ["contract_violation"]
    one = cli("compare", "-c", str(tmp_path / "c.json"), "-b", str(logs["two_sessions"]),
              "-k", str(tmp_path / "candidate.mcp.jsonl"), "--input-format", "mcp-log", "--run", "s1", "-f", "json")
    assert report["reports"][1] == json.loads(one.stdout)   # each section is the compare of that run alone
    text = cli("compare", "-c", str(tmp_path / "c.json"), "-b", str(logs["two_sessions"]),
               "-k", str(tmp_path / "candidate.mcp.jsonl"), "--input-format", "mcp-log", "--run", "all", "--verbose")
    assert "candidate  " + str(tmp_path / "candidate.mcp.jsonl") + " (run s2)" in text.stdout


def test_compare_run_all_with_one_baseline_run_compares_every_candidate_run_with_it(
        logs: dict[str, Path], tmp_path: Path, cli: Cli) -> None:
    """As one baseline file goes with every candidate of a folder: trace ids are new on every
    recording, so a baseline of one run is the baseline of each candidate run."""
    (tmp_path / "c.json").write_text(NO_SHELL)
    (tmp_path / "baseline.mcp.jsonl").write_text(_sessions(logs["two_sessions"], ["s1"], {"s1": "recorded"}))
    result = cli("compare", "-c", str(tmp_path / "c.json"), "-b", str(tmp_path / "baseline.mcp.jsonl"),
                 "-k", str(logs["two_sessions"]), "--input-format", "mcp-log", "--run", "all", "-f", "json")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert _pairs(report) == [("recorded", "s1", True), ("recorded", "s2", False)]
    found_kinds = [regression["kind"] for regression in report["reports"][1]["regressions"]]
    assert found_kinds == ["new_rule_failure", "new_tool"]


def test_compare_run_all_refuses_a_candidate_run_no_baseline_run_pairs_with(
        logs: dict[str, Path], tmp_path: Path, cli: Cli) -> None:
    """A candidate without a baseline of its name is an error (exit 2), as in a folder batch."""
    (tmp_path / "c.json").write_text(NO_SHELL)
    (tmp_path / "baseline.mcp.jsonl").write_text(_sessions(logs["two_sessions"], ["s1", "s2"], {"s2": "s3"}))
    result = cli("compare", "-c", str(tmp_path / "c.json"), "-b", str(tmp_path / "baseline.mcp.jsonl"),
                 "-k", str(logs["two_sessions"]), "--input-format", "mcp-log", "--run", "all")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (f"agent-invariants: {logs['two_sessions']}: run s2 has no run of the same id in the "
                             f"baseline {tmp_path / 'baseline.mcp.jsonl'} to compare it with (its runs: s1, s3)\n")


def test_runs_are_listed_in_the_order_they_begin_though_read_as_they_end(
        logs: dict[str, Path], tmp_path: Path, cli: Cli) -> None:
    """s1 begins first and ends last (s2 runs whole inside it): every list of runs names s1 first."""
    records = [json.loads(line) for line in logs["two_sessions"].read_text().splitlines() if line.strip()]
    one = [record for record in records if record["session"] == "s1"]
    two = [record for record in records if record["session"] == "s2"]
    log = tmp_path / "nested.mcp.jsonl"
    log.write_text("".join(json.dumps(record) + "\n" for record in [one[0], *two, *one[1:]]))
    (tmp_path / "c.json").write_text(NO_SHELL)
    checked = cli("check", "-c", str(tmp_path / "c.json"), "-t", str(log), "--input-format", "mcp-log", "--run", "all",
                  "-f", "json")
    assert [section["run"] for section in json.loads(checked.stdout)["reports"]] == ["s1", "s2"]
    counted = cli("summary", "-t", str(log), "--input-format", "mcp-log", "--run", "all")
    assert list(json.loads(counted.stdout)) == ["s1", "s2"]
    compared = cli("compare", "-c", str(tmp_path / "c.json"), "-b", str(log), "-k", str(log), "--input-format",
                   "mcp-log", "--run", "all", "-f", "json")
    assert [section["candidate"]["run"] for section in json.loads(compared.stdout)["reports"]] == ["s1", "s2"]
    refused = cli("check", "-c", str(tmp_path / "c.json"), "-t", str(log), "--input-format", "mcp-log")
    assert "holds 2 runs (s1, s2)" in refused.stderr


def test_summary_run_all_counts_each_run_by_its_id(logs: dict[str, Path], tmp_path: Path, cli: Cli) -> None:
    """§10.34: summary with --input-format takes --run all too: the counts of each run, by run id."""
    both = cli("summary", "-t", str(logs["two_sessions"]), "--input-format", "mcp-log", "--run", "all")
    assert both.returncode == 0, both.stderr
    counts = json.loads(both.stdout)
    assert list(counts) == ["s1", "s2"]
    for run in ("s1", "s2"):
        one = cli("summary", "-t", str(logs["two_sessions"]), "--input-format", "mcp-log", "--run", run)
        assert counts[run] == json.loads(one.stdout)
    assert "shell" in counts["s2"]["tools"] and "shell" not in counts["s1"]["tools"]


def test_compare_input_format_takes_one_file_a_side(logs: dict[str, Path], tmp_path: Path, cli: Cli) -> None:
    (tmp_path / "c.json").write_text(NO_SHELL)
    result = cli("compare", "-c", str(tmp_path / "c.json"), "-b", str(logs["two_sessions"]),
                 "-k", str(logs["two_sessions"]), "-k", str(logs["two_sessions"]), "--input-format", "mcp-log",
                 "--run", "all")
    assert result.returncode == 2
    assert result.stderr == ("agent-invariants: compare --input-format takes one baseline and one candidate file "
                             "(--run ID for one run of each, --run all for every run, paired by run id)\n")


def test_a_forbidden_tool_is_found_at_the_line_of_its_request(logs: dict[str, Path], tmp_path: Path, cli: Cli) -> None:
    contract = tmp_path / "c.json"
    contract.write_text(NO_SHELL)
    result = cli("check", "-c", str(contract), "-t", str(logs["forbidden_tool"]), "--input-format", "auto",
                     "-f", "json")
    assert result.returncode == 1
    (violation,) = json.loads(result.stdout)["violations"]
    record = json.loads(logs["forbidden_tool"].read_text().splitlines()[violation["line"] - 1])
    assert record["msg"]["params"]["name"] == "shell"


def test_an_imported_trace_checks_like_its_conversion(logs: dict[str, Path], tmp_path: Path, cli: Cli) -> None:
    contract = {"version": 2, "name": "mcp", "rules": [
        {"id": "lookup-first", "kind": "require_order", "before": {"type": "tool.call", "tool": "lookup_order"},
         "after": {"type": "tool.call", "tool": "refund"}},
        {"id": "closed", "kind": "tool_result_required", "tool": "*"}]}
    for scenario in ("refund_ok", "missing_lookup", "cancelled"):
        converted = tmp_path / f"{scenario}.jsonl"
        result = cli("convert", "--from", "mcp-log", str(logs[scenario]), "--output", str(converted))
        assert result.returncode == 0, result.stderr
        imported = check_trace(contract, ImportedTrace(SourceFile.of(logs[scenario]), import_runs(logs[scenario])[0]))
        native = check_trace(contract, converted)
        assert [(v.rule_id, v.event_seq) for v in imported.violations] == \
               [(v.rule_id, v.event_seq) for v in native.violations]
    assert not check_trace(contract, tmp_path / "refund_ok.jsonl").violations
    assert [v.rule_id for v in check_trace(contract, tmp_path / "missing_lookup.jsonl").violations] == ["lookup-first"]
    assert [v.rule_id for v in check_trace(contract, tmp_path / "cancelled.jsonl").violations] == ["closed"]


def test_the_mcp_check_tool_takes_records_of_another_format(logs: dict[str, Path]) -> None:
    from agent_invariants.errors import InputError
    from agent_invariants.mcp_server import CHECK, SUMMARIZE, run_tool

    contract = json.loads(NO_SHELL)
    records = [json.loads(line) for line in logs["forbidden_tool"].read_text().splitlines()]
    report, text = run_tool(CHECK, {"contract": contract, "events": records, "input_format": "mcp-log"})
    assert report["passed"] is False and report["run"] == "s1"
    assert [violation["rule_id"] for violation in report["violations"]] == ["no-shell"]
    assert "trace" not in report   # records given as values have no file
    assert all("line" not in violation for violation in report["violations"])   # and so no lines, as events
    summary, _ = run_tool(SUMMARIZE, {"events": records, "input_format": "auto"})
    assert summary["tools"] == ["shell"]
    both = [json.loads(line) for line in logs["two_sessions"].read_text().splitlines()]
    with pytest.raises(InputError, match=r"events: holds 2 runs \(s1, s2\); choose one with `run`"):
        run_tool(CHECK, {"contract": contract, "events": both, "input_format": "mcp-log"})
    report, _ = run_tool(CHECK, {"contract": contract, "events": both, "input_format": "mcp-log", "run": "s2"})
    assert report["passed"] is False and report["run"] == "s2"
    with pytest.raises(InputError, match="input_format: expected one of native, auto, otel"):
        run_tool(CHECK, {"contract": contract, "events": both, "input_format": "csv"})
    # null is no value of either: refused as input_format's is, not read as "no run chosen"
    with pytest.raises(InputError, match=r"^run: expected a run id \(a string\), got null$"):
        run_tool(CHECK, {"contract": contract, "events": both, "input_format": "mcp-log", "run": None})


def test_a_tools_list_reply_is_a_tool_listing(logs: dict[str, Path]) -> None:
    found = events(logs["tools_list"])
    listing = next(event for event in found if event["type"] == "tool.listing")
    assert sorted(tool["name"] for tool in listing["data"]["tools"]) == ["lookup_order", "refund", "shell"]
    assert listing["seq"] < next(event["seq"] for event in found if event["type"] == "tool.call")


def test_an_error_reply_to_tools_list_is_no_listing_and_counts_as_skipped() -> None:
    records = [{"ts": "2026-01-01T00:00:00Z", "session": "s", "dir": "c2s", "msg": {"jsonrpc": "2.0", "id": 1,
                "method": "initialize", "params": {}}},
               {"ts": "2026-01-01T00:00:01Z", "session": "s", "dir": "c2s", "msg": {"jsonrpc": "2.0", "id": 2,
                "method": "tools/list"}},
               {"ts": "2026-01-01T00:00:02Z", "session": "s", "dir": "s2c", "msg": {"jsonrpc": "2.0", "id": 2,
                "error": {"code": -32603, "message": "boom"}}}]
    imported = import_file("\n".join(json.dumps(record) for record in records).encode(), "mcp-log")
    (run,) = imported.runs
    assert kinds([event for event, _ in run.events]) == ["run.start", "run.completed"]
    assert imported.skipped == 1


def _log(*messages: tuple[str, dict[str, Any]]) -> bytes:
    """A one-session log of (dir, msg), a second apart."""
    return "\n".join(json.dumps({"ts": f"2026-01-01T00:00:{second:02d}Z", "session": "s", "dir": side, "msg": msg})
                     for second, (side, msg) in enumerate(messages)).encode()


def _call(number: int, tool: str, arguments: Any, **more: Any) -> tuple[str, dict[str, Any]]:
    return ("c2s", {"jsonrpc": "2.0", "id": number, "method": "tools/call",
                    "params": {"name": tool, "arguments": arguments, **more}})


def _reply(number: int, value: Any) -> tuple[str, dict[str, Any]]:
    return ("s2c", {"jsonrpc": "2.0", "id": number, "result": {"structuredContent": value, "content": []}})


def test_replies_in_reverse_order_each_answer_their_own_call() -> None:
    log = _log(*[_call(number, "t", {"n": number}) for number in range(1, 5)],
               *[_reply(number, {"n": number}) for number in range(4, 0, -1)])
    (run,) = import_runs(log, "mcp-log")
    found = [event for event, _ in run.events]
    assert [(event["type"], event.get("call_id")) for event in found[1:-1]] == [
        ("tool.call", "s:1"), ("tool.call", "s:2"), ("tool.call", "s:3"), ("tool.call", "s:4"),
        ("tool.result", "s:4"), ("tool.result", "s:3"), ("tool.result", "s:2"), ("tool.result", "s:1")]
    assert [event["result"] for event in found if event["type"] == "tool.result"] == [{"n": 4}, {"n": 3}, {"n": 2},
                                                                                        {"n": 1}]


def test_a_continuation_carries_on_the_latest_pending_call_whose_arguments_are_json_equal() -> None:
    # true is not 1 in JSON (§2), though it is in Python; 1.0 is 1. An answered call is not pending.
    log = _log(_call(1, "refund", {"amount": 1}), _call(2, "refund", {"amount": True}),
               _call(3, "refund", {"amount": 1}), _reply(3, {"done": 3}),
               _call(4, "refund", {"amount": 1.0}, requestState="x", inputResponses={"ok": {"action": "accept"}}),
               _reply(4, {"done": 1}), _reply(2, {"done": 2}))
    (run,) = import_runs(log, "mcp-log")
    found = [event for event, _ in run.events]
    assert [(event["type"], event.get("call_id")) for event in found[1:-1]] == [
        ("tool.call", "s:1"), ("tool.call", "s:2"), ("tool.call", "s:3"), ("tool.result", "s:3"),
        ("approval.granted", "s:1"), ("tool.result", "s:1"), ("tool.result", "s:2")]
    assert [event["result"] for event in found if event["type"] == "tool.result"] == [{"done": 3}, {"done": 1},
                                                                                        {"done": 2}]


@pytest.mark.parametrize(("mime", "expected"), [("application/json", {"r": 1}), ("Application/JSON; charset=utf-8",
                                                                                 {"r": 1}), ("text/plain", None)])
def test_an_embedded_json_resource_is_read_as_json(tmp_path: Path, mime: str, expected: Any) -> None:
    """Found by the sixth hunt: point 26 reads a result's text as JSON "when it is valid JSON (or
    the mime type says `application/json`)"; an embedded resource whose mimeType said so stayed
    the content array. A media type's case and parameters do not matter (a second reading); another
    type keeps the array, as before."""
    item = {"type": "resource", "resource": {"uri": "x:", "mimeType": mime, "text": '{"r":1}'}}
    records = [
        {"ts": "2026-01-01T00:00:00.000000Z", "session": "s", "dir": "c2s",
         "msg": {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}},
        {"ts": "2026-01-01T00:00:01.000000Z", "session": "s", "dir": "c2s",
         "msg": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "arguments": {}}}},
        {"ts": "2026-01-01T00:00:02.000000Z", "session": "s", "dir": "s2c",
         "msg": {"jsonrpc": "2.0", "id": 1, "result": {"content": [item]}}}]
    log = tmp_path / "resource.mcp.jsonl"
    log.write_text("".join(json.dumps(record) + "\n" for record in records))
    (result,) = [event for event in events(log) if event["type"] == "tool.result"]
    assert result["result"] == (expected if expected is not None else [item])
