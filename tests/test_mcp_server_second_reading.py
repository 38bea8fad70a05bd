"""Second reading of the MCP server: spec v1-semantics §9 (and D8, §8, §11), plus what
v2-extensions adds (§0: "compare, MCP and the renderers need no change"; §7 and points 10.8,
10.34, 10.37: input formats, `run`, lint inside the MCP check and compare tools).

The server is driven as a client would drive it: the official MCP SDK's stdio client, talking to
`agent-invariants serve`. One server serves the whole module (the spec says it is stateless).
"""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

BIN = Path(sys.executable).parent
EXE = str(BIN / "agent-invariants")

VALIDATE = "agent_invariants_validate_contract"
CHECK = "agent_invariants_check_trace"
COMPARE = "agent_invariants_compare_traces"
SUMMARIZE = "agent_invariants_summarize_trace"

DENY_SHELL: dict[str, Any] = {
    "version": 1,
    "name": "mcp-spec",
    "rules": [{"id": "no-shell", "kind": "deny_tool", "tool": "shell.*"}],
}
SHELL_RUN: list[dict[str, Any]] = [
    {"seq": 1, "type": "tool.call", "tool": "shell.exec", "call_id": "a"},
    {"seq": 2, "type": "tool.result", "tool": "shell.exec", "call_id": "a", "ok": True},
    {"seq": 3, "type": "run.completed"},
]
CLEAN_RUN: list[dict[str, Any]] = [
    {"seq": 1, "type": "tool.call", "tool": "search", "call_id": "a"},
    {"seq": 2, "type": "tool.result", "tool": "search", "call_id": "a", "ok": True},
    {"seq": 3, "type": "run.completed"},
]

Op = Callable[[ClientSession], Awaitable[Any]]


class Server:
    """A stdio MCP client session to one `agent-invariants serve`, usable from sync tests."""

    def __init__(self, command: str, args: list[str]) -> None:
        self.params = StdioServerParameters(command=command, args=args)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.session: ClientSession | None = None
        self.init: Any = None
        self.ready = threading.Event()
        self.stop: asyncio.Event | None = None
        self.failure: BaseException | None = None

    async def _main(self) -> None:
        self.stop = asyncio.Event()
        try:
            async with stdio_client(self.params) as (read, write), ClientSession(read, write) as session:
                self.init = await session.initialize()
                self.session = session
                self.ready.set()
                await self.stop.wait()
        except BaseException as exc:  # noqa: BLE001 - surfaced to the test
            self.failure = exc
            self.ready.set()

    def start(self) -> None:
        self.thread.start()
        self.main = asyncio.run_coroutine_threadsafe(self._main(), self.loop)
        assert self.ready.wait(30), "server did not start"
        if self.failure is not None:
            raise self.failure

    def run(self, op: Op) -> Any:
        assert self.session is not None
        session = self.session

        async def run_op() -> Any:
            return await op(session)

        return asyncio.run_coroutine_threadsafe(run_op(), self.loop).result(60)

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        return self.run(lambda s: s.call_tool(name, arguments))

    def close(self) -> None:
        stop = self.stop
        if stop is not None:
            self.loop.call_soon_threadsafe(stop.set)
        try:
            self.main.result(30)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            self.loop.close()


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    srv = Server(EXE, ["serve"])
    srv.start()
    yield srv
    srv.close()


def ok_json(result: Any) -> Any:
    """The report of a successful call: its first text content item, parsed."""
    assert not result.is_error, [c.text for c in result.content]
    assert result.content[0].type == "text"
    return json.loads(result.content[0].text)


def error_text(result: Any) -> str:
    assert result.is_error, [c.text for c in result.content]
    return "\n".join(c.text for c in result.content if c.type == "text")


def cli_json(tmp_path: Path, *args: str) -> tuple[int, Any]:
    proc = subprocess.run([EXE, *args], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    return proc.returncode, json.loads(proc.stdout)


def write_json(path: Path, document: Any) -> str:
    path.write_text(json.dumps(document), encoding="utf-8")
    return path.name


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path.name


def drop_paths(report: dict[str, Any]) -> dict[str, Any]:
    """A check report without what depends on reading a file: `trace` and violations' `line`."""
    report = json.loads(json.dumps(report))
    report.pop("trace", None)
    for violation in report.get("violations", []):
        violation.pop("line", None)
    for result in report.get("results", []):
        for violation in result.get("violations", []):
            violation.pop("line", None)
    return report


def tool_list(server: Server) -> dict[str, Any]:
    listed = server.run(lambda s: s.list_tools())
    return {tool.name: tool for tool in listed.tools}


# --- §9: server identity and capabilities -------------------------------------------------


def test_server_info_name_and_version(server: Server) -> None:
    """§9: server info `{name:"agent-invariants", version:"0.1.0"}`."""
    info = server.init.server_info
    assert (info.name, info.version) == ("agent-invariants", "0.1.0")


def test_capabilities_tools_and_prompts(server: Server) -> None:
    """§9: "capabilities tools + prompts"."""
    caps = server.init.capabilities
    assert caps.tools is not None
    assert caps.prompts is not None


def test_instructions_string(server: Server) -> None:
    """§9: "plus an `instructions` string describing intended use"."""
    assert isinstance(server.init.instructions, str)
    assert server.init.instructions.strip()


def test_the_four_node_tools_are_listed(server: Server) -> None:
    """§9 Tools: validate_contract, check_trace, compare_traces, summarize_trace."""
    assert {VALIDATE, CHECK, COMPARE, SUMMARIZE} <= set(tool_list(server))


@pytest.mark.parametrize(("name", "required"), [
    (VALIDATE, {"contract"}),
    (CHECK, {"contract", "events"}),
    (COMPARE, {"contract", "baseline", "candidate"}),
    (SUMMARIZE, {"events"}),
])
def test_input_schema_required_arguments(server: Server, name: str, required: set[str]) -> None:
    """§9: `{contract}`, `{contract, events}`, `{contract, baseline, candidate}`, `{events}`
    (input schemas exported to clients as JSON Schema)."""
    schema = tool_list(server)[name].input_schema
    assert schema["type"] == "object"
    assert set(schema["required"]) == required


@pytest.mark.parametrize(("name", "field"), [
    (CHECK, "events"), (COMPARE, "baseline"), (COMPARE, "candidate"), (SUMMARIZE, "events"),
])
def test_input_schema_events_at_most_100000(server: Server, name: str, field: str) -> None:
    """§9: `Event[≤100,000]`, exported as JSON Schema."""
    prop = tool_list(server)[name].input_schema["properties"][field]
    assert prop["type"] == "array"
    assert prop["maxItems"] == 100_000


def test_tools_publish_output_schemas_and_read_only_annotations(server: Server) -> None:
    """§9 says "no output schema, no annotations"; the README documents the departure: the tools
    are annotated read-only and idempotent, and their output schemas come from the reports (an
    addition a client may ignore, as D5 allows extra report fields)."""
    tools = tool_list(server)
    for name in (VALIDATE, CHECK, COMPARE, SUMMARIZE):
        assert tools[name].output_schema is not None
        assert tools[name].annotations is not None and tools[name].annotations.read_only_hint is True


# --- §9: tool results -----------------------------------------------------------------------


def test_validate_returns_valid_and_normalised_contract(server: Server, tmp_path: Path) -> None:
    """§9: validate_contract → `{valid:true, contract:<normalised>}` (as §8 `validate` prints)."""
    raw = {"version": 1, "name": " mcp-spec ", "rules": [{"id": "no-shell", "kind": "deny_tool",
                                                          "tool": "shell.*"}]}
    got = ok_json(server.call(VALIDATE, {"contract": raw}))
    code, expected = cli_json(tmp_path, "validate", "--contract", write_json(tmp_path / "c.json", raw))
    assert code == 0
    assert got["valid"] is True
    assert got == expected


def test_result_text_is_two_space_json(server: Server) -> None:
    """§9: "Results are a single text content item holding 2-space JSON" (the JSON part)."""
    result = server.call(VALIDATE, {"contract": DENY_SHELL})
    text = result.content[0].text
    assert text == json.dumps(json.loads(text), indent=2, ensure_ascii=False)


def test_result_text_is_the_2_space_json_first_then_the_text_report(server: Server) -> None:
    """§9: "Results are a single text content item holding 2-space JSON"; the README documents the
    addition: that item comes first, as the Node tool returns it, then the text report."""
    result = server.call(CHECK, {"contract": DENY_SHELL, "events": SHELL_RUN})
    assert len(result.content) == 2
    first = result.content[0].text
    assert json.loads(first)["schema"] == "agent-invariants/check/v1" and first.startswith('{\n  "')


def test_check_returns_check_report_like_cli(server: Server, tmp_path: Path) -> None:
    """§9: check_trace → CheckReport (the report `check --format json` prints; §7.5 failing check)."""
    got = ok_json(server.call(CHECK, {"contract": DENY_SHELL, "events": SHELL_RUN}))
    code, expected = cli_json(tmp_path, "check", "--contract", write_json(tmp_path / "c.json", DENY_SHELL),
                              "--trace", write_jsonl(tmp_path / "t.jsonl", SHELL_RUN), "--format", "json")
    assert code == 1
    assert got["schema"] == "agent-invariants/check/v1"
    assert (got["passed"], got["error_count"]) == (False, 1)
    assert [v["event_seq"] for v in got["violations"]] == [1]
    assert drop_paths(got) == drop_paths(expected)


def test_check_passing_report(server: Server) -> None:
    """§9: check_trace → CheckReport; a trace with no violation passes (error_count 0)."""
    got = ok_json(server.call(CHECK, {"contract": DENY_SHELL, "events": CLEAN_RUN}))
    assert (got["passed"], got["error_count"], got["violations"]) == (True, 0, [])


def test_check_violation_is_not_a_tool_error(server: Server) -> None:
    """§9: a failing check is a report, not an `isError` result (only schema failures and
    evaluation exceptions are)."""
    assert server.call(CHECK, {"contract": DENY_SHELL, "events": SHELL_RUN}).is_error is False


def test_compare_returns_compatibility_report_like_cli(server: Server, tmp_path: Path) -> None:
    """§9: compare_traces → CompatibilityReport (as `compare --format json` prints it)."""
    got = ok_json(server.call(COMPARE, {"contract": DENY_SHELL, "baseline": CLEAN_RUN,
                                        "candidate": SHELL_RUN}))
    code, expected = cli_json(tmp_path, "compare", "--contract", write_json(tmp_path / "c.json", DENY_SHELL),
                              "--baseline", write_jsonl(tmp_path / "b.jsonl", CLEAN_RUN),
                              "--candidate", write_jsonl(tmp_path / "k.jsonl", SHELL_RUN), "--format", "json")
    assert code == 1
    assert got["schema"] == "agent-invariants/compare/v1"
    assert got["compatible"] is False
    for report in (got, expected):
        for side in ("baseline", "candidate"):
            report[side] = drop_paths(report[side])
        for regression in report["regressions"]:
            regression.pop("line", None)  # an in-memory trace has no line numbers
    assert got == expected


def test_compare_identical_runs_compatible(server: Server) -> None:
    """§9: compare_traces → CompatibilityReport; the same run on both sides is compatible."""
    got = ok_json(server.call(COMPARE, {"contract": DENY_SHELL, "baseline": CLEAN_RUN,
                                        "candidate": CLEAN_RUN}))
    assert got["compatible"] is True


def test_summarize_returns_trace_summary_like_cli(server: Server, tmp_path: Path) -> None:
    """§9: summarize_trace `{events}` → TraceSummary (as `summary` prints it)."""
    got = ok_json(server.call(SUMMARIZE, {"events": SHELL_RUN}))
    code, expected = cli_json(tmp_path, "summary", "--trace", write_jsonl(tmp_path / "t.jsonl", SHELL_RUN))
    assert code == 0
    assert got == expected
    assert (got["events"], got["tool_calls"], got["tools"]) == (3, 1, ["shell.exec"])


def test_summarize_skips_the_seq_order_as_the_node_tool_does(server: Server) -> None:
    """§9 and §12.16: the Node tool's summarize skips the sequence check, a quirk §14 keeps."""
    events = [{"seq": 2, "type": "run.start"}, {"seq": 1, "type": "run.completed"}]
    summary = ok_json(server.call(SUMMARIZE, {"events": events}))
    assert (summary["events"], summary["completion_claims"]) == (2, 1)


# --- §9: errors -----------------------------------------------------------------------------


def test_check_non_increasing_seq_is_tool_error(server: Server) -> None:
    """§9: evaluation exceptions (e.g. non-increasing seq) come back as `isError: true` with the
    message."""
    events = [{"seq": 5, "type": "run.start"}, {"seq": 2, "type": "run.completed"}]
    text = error_text(server.call(CHECK, {"contract": DENY_SHELL, "events": events}))
    assert "seq" in text


def test_compare_non_increasing_seq_is_tool_error(server: Server) -> None:
    """§9: the sequence check applies to compare's traces too (§12.16: only summarize skips it)."""
    bad = [{"seq": 1, "type": "run.start"}, {"seq": 1, "type": "run.completed"}]
    assert server.call(COMPARE, {"contract": DENY_SHELL, "baseline": CLEAN_RUN,
                                 "candidate": bad}).is_error


@pytest.mark.parametrize(("name", "arguments"), [
    (VALIDATE, {}),
    (CHECK, {"contract": DENY_SHELL}),
    (CHECK, {"contract": DENY_SHELL, "events": "not-an-array"}),
    (COMPARE, {"contract": DENY_SHELL, "baseline": CLEAN_RUN}),
    (SUMMARIZE, {"events": {"seq": 1, "type": "x"}}),
])
def test_schema_failure_is_tool_error(server: Server, name: str, arguments: dict[str, Any]) -> None:
    """§9: "Schema failures come back as `isError: true` results"."""
    assert server.call(name, arguments).is_error is True


def test_a_schema_failure_names_the_missing_argument(server: Server) -> None:
    """§9 records the Node tool's *observed* text ("MCP error -32602: Input validation error…");
    ours names the place (D4: error texts are our own), as the README shows."""
    assert "contract" in error_text(server.call(VALIDATE, {}))


@pytest.mark.parametrize("contract", [
    {"version": 1, "rules": []},
    {"version": 1, "name": "x", "rules": [{"id": "r", "kind": "no_such_kind"}]},
    {"version": 1, "name": "x", "rules": [{"id": "r", "kind": "deny_tool", "tool": "a", "extra": 1}]},
])
def test_invalid_contract_is_tool_error(server: Server, contract: dict[str, Any]) -> None:
    """§9: the input schemas are the zod schemas (missing name, unknown kind, unknown field fail)."""
    assert server.call(VALIDATE, {"contract": contract}).is_error is True


def test_duplicate_rule_ids_refused_at_call_time(server: Server) -> None:
    """§9: "The duplicate-id/budget/min-max refinements ... only enforced at call time"."""
    rule = {"id": "same", "kind": "deny_tool", "tool": "a"}
    contract = {"version": 1, "name": "x", "rules": [rule, {**rule, "tool": "b"}]}
    assert server.call(VALIDATE, {"contract": contract}).is_error is True


def test_empty_event_budget_refused_at_call_time(server: Server) -> None:
    """§9: the budget refinement (event_budget needs at least one max) is enforced at call time."""
    contract = {"version": 1, "name": "x", "rules": [{"id": "b", "kind": "event_budget"}]}
    assert server.call(VALIDATE, {"contract": contract}).is_error is True


def test_require_event_min_above_max_refused(server: Server) -> None:
    """§9: the min-max refinement is enforced at call time."""
    contract = {"version": 1, "name": "x", "rules": [
        {"id": "e", "kind": "require_event", "match": {"type": "x"}, "min": 3, "max": 1}]}
    assert server.call(CHECK, {"contract": contract, "events": CLEAN_RUN}).is_error is True


def test_more_than_100000_events_refused(server: Server) -> None:
    """§9 / §11: `Event[≤100,000]`; "100,000 per MCP call"."""
    events = [{"seq": i + 1, "type": "x"} for i in range(100_001)]
    assert server.call(SUMMARIZE, {"events": events}).is_error is True


def test_exactly_100000_events_accepted(server: Server) -> None:
    """§9 / §11: 100,000 events per MCP call is within the limit."""
    events = [{"seq": i + 1, "type": "x"} for i in range(100_000)]
    assert ok_json(server.call(SUMMARIZE, {"events": events}))["events"] == 100_000


def test_server_keeps_serving_after_errors(server: Server) -> None:
    """§9: "Stateless": an error result leaves the next call unaffected."""
    assert server.call(VALIDATE, {"contract": {"version": 1}}).is_error is True
    assert ok_json(server.call(VALIDATE, {"contract": DENY_SHELL}))["valid"] is True


def test_unknown_tool_is_an_error(server: Server) -> None:
    """§9: only the listed tools exist (spec silent on the form: a tool error is the SDK's answer)."""
    try:
        result = server.call("agent_invariants_no_such_tool", {})
    except Exception:  # noqa: BLE001 - a JSON-RPC error is also a refusal
        return
    assert result.is_error is True


@pytest.mark.parametrize("exists", [True, False])
def test_extends_by_path_refused(server: Server, tmp_path: Path, exists: bool) -> None:
    """D8: "the MCP server never reads files (`extends` by path is refused there)"."""
    target = tmp_path / "base.json"
    if exists:
        write_json(target, DENY_SHELL)
    contract = {**DENY_SHELL, "extends": [str(target)]}
    text = error_text(server.call(VALIDATE, {"contract": contract}))
    assert str(target) in text or "extends" in text


def test_extends_refusal_same_whether_file_exists(server: Server, tmp_path: Path) -> None:
    """D8: a server "that cannot be used to probe the disk": same answer for a present and an
    absent file."""
    write_json(tmp_path / "here.json", DENY_SHELL)
    texts = [error_text(server.call(VALIDATE, {"contract": {**DENY_SHELL, "extends": [str(tmp_path / n)]}}))
             for n in ("here.json", "gone.json")]
    assert texts[0].replace("here.json", "X") == texts[1].replace("gone.json", "X")


# --- §9: prompt -----------------------------------------------------------------------------


def test_protect_behavior_change_prompt(server: Server) -> None:
    """§9: "One prompt, `protect-behavior-change` (no arguments): a single user message telling the
    model to encode approval/stop/retry/evidence expectations as a v1 contract and compare baseline
    and candidate traces"."""
    prompts = server.run(lambda s: s.list_prompts()).prompts
    listed = {p.name: p for p in prompts}
    assert not listed["protect-behavior-change"].arguments
    got = server.run(lambda s: s.get_prompt("protect-behavior-change"))
    assert len(got.messages) == 1
    message = got.messages[0]
    assert message.role == "user"
    text = message.content.text
    for word in ("approval", "stop", "retr", "evidence", "version", "baseline", "candidate"):
        assert word in text.lower(), word


# --- §8: the second binary name and `serve` arguments ---------------------------------------


def _session_version(command: str, args: list[str]) -> str:
    srv = Server(command, args)
    srv.start()
    try:
        return str(srv.init.server_info.version)
    finally:
        srv.close()


def test_second_binary_name_serves(tmp_path: Path) -> None:
    """§8: "Binary names `agent-invariants` and `agent-invariants-mcp` (both the same entry)"."""
    assert _session_version(str(BIN / "agent-invariants-mcp"), ["serve"]) == "0.1.0"


def test_serve_ignores_what_follows(tmp_path: Path) -> None:
    """§8: `serve` "(only recognised as the first argument; anything after it ignored)"."""
    assert _session_version(EXE, ["serve", "extra"]) == "0.1.0"


# --- v2 §0, 10.8, 10.37: version-2 contracts through MCP -------------------------------------


def test_v2_contract_report_keeps_check_v1_schema(server: Server) -> None:
    """v2 §0: "Reports keep `schema: agent-invariants/check/v1` (with `contract.version: 2`)";
    10.1 codes: `tool_calls.max`, at the call (10.2)."""
    contract = {"version": 2, "name": "v2", "rules": [
        {"id": "one-search", "kind": "tool_calls", "tool": "search", "max": 0}]}
    got = ok_json(server.call(CHECK, {"contract": contract, "events": CLEAN_RUN}))
    assert got["schema"] == "agent-invariants/check/v1"
    assert got["contract"]["version"] == 2
    assert [(v["code"], v["event_seq"]) for v in got["violations"]] == [("tool_calls.max", 1)]


def test_v1_report_carries_codes(server: Server) -> None:
    """10.1: `code` (and `status: "fail"`) are emitted for version-1 contracts too."""
    got = ok_json(server.call(CHECK, {"contract": DENY_SHELL, "events": SHELL_RUN}))
    assert [(v["code"], v["status"]) for v in got["violations"]] == [("deny_tool.denied", "fail")]


LINT_ERROR_V2: dict[str, Any] = {"version": 2, "name": "lint", "rules": [
    {"id": "no-shell", "kind": "deny_tool", "tool": "shell.exec"},
    {"id": "runs-shell", "kind": "tool_calls", "tool": "shell.exec", "min": 1},
]}


def test_check_refuses_v2_contract_with_lint_error(server: Server) -> None:
    """10.8: a lint error is reported like a contract error (`…: $.rules[i]: lint <code>: …`) and
    "the MCP check tool behave[s] the same"."""
    text = error_text(server.call(CHECK, {"contract": LINT_ERROR_V2, "events": CLEAN_RUN}))
    assert "lint required_but_forbidden" in text
    assert "$.rules[" in text


def test_compare_refuses_v2_contract_with_lint_error(server: Server) -> None:
    """10.8: `compare` refuses a v2 contract with a lint error; 10.37 names compare too."""
    text = error_text(server.call(COMPARE, {"contract": LINT_ERROR_V2, "baseline": CLEAN_RUN,
                                            "candidate": CLEAN_RUN}))
    assert "lint required_but_forbidden" in text


def test_no_lint_checks_anyway(server: Server) -> None:
    """10.8: "`--no-lint` is accepted" (the MCP tools' `no_lint`): the contract is then checked."""
    got = ok_json(server.call(CHECK, {"contract": LINT_ERROR_V2, "events": CLEAN_RUN, "no_lint": True}))
    assert got["passed"] is False
    assert [v["code"] for v in got["violations"]] == ["tool_calls.min"]


def test_v1_contract_never_refused_by_lint(server: Server) -> None:
    """10.37: the MCP check tool runs lint only on version-2 contracts."""
    contract = {"version": 1, "name": "v1", "rules": [
        {"id": "no-shell", "kind": "deny_tool", "tool": "shell.exec"},
        {"id": "needs-shell", "kind": "require_event", "match": {"tool": "shell.exec"}, "min": 1}]}
    got = ok_json(server.call(CHECK, {"contract": contract, "events": CLEAN_RUN}))
    assert got["error_count"] == 1


def test_lint_error_on_warning_rule_does_not_refuse(server: Server) -> None:
    """10.37: a condition resting on a warning-severity rule is only a warning: the check runs."""
    contract = json.loads(json.dumps(LINT_ERROR_V2))
    contract["rules"][0]["severity"] = "warning"
    got = ok_json(server.call(CHECK, {"contract": contract, "events": CLEAN_RUN}))
    assert got["error_count"] == 1


# --- v2 §7 and 10.34: input formats and `run` on the MCP tools -------------------------------


def _mcp_session(session: str, tool: str, second: int) -> list[dict[str, Any]]:
    """An mcp-log session (10.35 format): initialize, then one tools/call and its reply."""
    ts = f"2025-01-01T00:00:{second:02d}"
    return [
        {"ts": ts + ".000000Z", "session": session, "dir": "c2s",
         "msg": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}},
        {"ts": ts + ".100000Z", "session": session, "dir": "s2c",
         "msg": {"jsonrpc": "2.0", "id": 1, "result": {}}},
        {"ts": ts + ".200000Z", "session": session, "dir": "c2s",
         "msg": {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": tool, "arguments": {"q": 1}}}},
        {"ts": ts + ".300000Z", "session": session, "dir": "s2c",
         "msg": {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "ok"}]}}},
    ]


ONE_RUN = _mcp_session("s1", "shell.exec", 1)
TWO_RUNS = ONE_RUN + _mcp_session("s2", "search", 2)


def test_check_with_input_format_mcp_log(server: Server, tmp_path: Path) -> None:
    """§7: `check --input-format FMT` (the MCP check tool's `input_format`) gives the report of the
    converted run, as the CLI does."""
    got = ok_json(server.call(CHECK, {"contract": DENY_SHELL, "events": ONE_RUN, "input_format": "mcp-log"}))
    code, expected = cli_json(tmp_path, "check", "--contract", write_json(tmp_path / "c.json", DENY_SHELL),
                              "--trace", write_jsonl(tmp_path / "t.jsonl", ONE_RUN),
                              "--input-format", "mcp-log", "--format", "json")
    assert code == 1
    assert [v["code"] for v in got["violations"]] == ["deny_tool.denied"]
    assert drop_paths(got) == drop_paths(expected)


def test_input_format_auto(server: Server) -> None:
    """§7: "`auto` sniffs the first record"."""
    got = ok_json(server.call(CHECK, {"contract": DENY_SHELL, "events": ONE_RUN, "input_format": "auto"}))
    assert [v["code"] for v in got["violations"]] == ["deny_tool.denied"]


def test_summarize_with_input_format(server: Server) -> None:
    """§7 / 10.34: `summary` with `--input-format` (the MCP summarize tool's `input_format`)."""
    got = ok_json(server.call(SUMMARIZE, {"events": ONE_RUN, "input_format": "mcp-log"}))
    assert (got["tool_calls"], got["tools"]) == (1, ["shell.exec"])


def test_several_runs_without_run_is_error_listing_ids(server: Server) -> None:
    """10.34: "Without `--run`, an input with several runs is exit 2, and the message lists the run
    ids and both options" (10.35: run id = session)."""
    text = error_text(server.call(CHECK, {"contract": DENY_SHELL, "events": TWO_RUNS,
                                          "input_format": "mcp-log"}))
    assert "s1" in text and "s2" in text
    assert "run" in text


def test_run_selects_one_run(server: Server) -> None:
    """10.34: `check` ... with `--input-format` take `--run ID` too."""
    got = ok_json(server.call(CHECK, {"contract": DENY_SHELL, "events": TWO_RUNS,
                                      "input_format": "mcp-log", "run": "s2"}))
    assert (got["passed"], got["summary"]["tools"]) == (True, ["search"])


def test_summarize_run_selects_one_run(server: Server) -> None:
    """10.34: `summary` with `--input-format` takes `--run ID`."""
    got = ok_json(server.call(SUMMARIZE, {"events": TWO_RUNS, "input_format": "mcp-log", "run": "s1"}))
    assert got["tools"] == ["shell.exec"]


def test_compare_with_input_format_and_run(server: Server) -> None:
    """10.34: `compare` with `--input-format` takes `--run ID` too (same run id on both sides)."""
    got = ok_json(server.call(COMPARE, {"contract": DENY_SHELL, "baseline": TWO_RUNS,
                                        "candidate": TWO_RUNS, "input_format": "mcp-log", "run": "s1"}))
    assert got["candidate"]["summary"]["tools"] == ["shell.exec"]


def test_unknown_run_is_error(server: Server) -> None:
    """10.34: `--run ID` names one of the input's runs; an absent id is bad input."""
    assert server.call(CHECK, {"contract": DENY_SHELL, "events": TWO_RUNS, "input_format": "mcp-log",
                               "run": "nope"}).is_error is True


def test_unknown_input_format_is_error(server: Server) -> None:
    """§7: formats are native, otel, openinference, openai-agents, langsmith, mcp-log, auto."""
    assert server.call(CHECK, {"contract": DENY_SHELL, "events": ONE_RUN,
                               "input_format": "csv"}).is_error is True


def test_run_all_is_refused_listing_ids(server: Server) -> None:
    """10.34: "`--run all` checks every run as a batch". Spec silent for the MCP check tool, whose
    result is one CheckReport: refusing with the run ids, saying `all` is for the command line, is
    a reasonable reading."""
    text = error_text(server.call(CHECK, {"contract": DENY_SHELL, "events": TWO_RUNS,
                                          "input_format": "mcp-log", "run": "all"}))
    assert "s1" in text and "s2" in text and '`run: "all"` is for the command line' in text


def test_extends_shipped_pack_accepted(server: Server) -> None:
    """D8: only `extends` *by path* is refused; a shipped pack is no file read."""
    contract = {**DENY_SHELL, "extends": ["agent-invariants:payments"]}
    assert ok_json(server.call(VALIDATE, {"contract": contract}))["valid"] is True


def test_partial_reports_liveness_as_inconclusive(server: Server) -> None:
    """v2 §0: "`check --partial` ... reports liveness parts as `inconclusive`" (the MCP check
    tool's `partial`); inconclusive fails nothing."""
    contract = {"version": 2, "name": "p", "rules": [
        {"id": "needs-refund", "kind": "tool_calls", "tool": "refund", "min": 1}]}
    events = CLEAN_RUN[:2]
    full = ok_json(server.call(CHECK, {"contract": contract, "events": events}))
    cut = ok_json(server.call(CHECK, {"contract": contract, "events": events, "partial": True}))
    assert full["passed"] is False
    assert cut["passed"] is True
    assert [v["status"] for v in cut["violations"]] == ["inconclusive"]
