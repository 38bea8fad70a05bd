"""The MCP server (`agent-invariants serve`), driven the way MCP clients drive it.

Each test starts `python -m agent_invariants serve` as a subprocess and talks to it with the SDK's
own stdio client: tools and prompt listed with their schemas and annotations, each tool called on
the bundled refund-desk example and compared with the CLI's `--format json` report, bad input
answered by a precise tool error after which the same session still works, and standard output
carrying nothing but JSON-RPC. Without the `mcp` extra, `serve` exits 2 with a one-line hint.
"""
from __future__ import annotations

import copy
import importlib.metadata
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from agent_invariants import load_contract, summarize_trace
from agent_invariants.explain import explain_kind
from agent_invariants.mcp_prompts import PROMPT_NAME
from agent_invariants.mcp_server import INSTRUCTIONS, MAX_EVENTS, TOOLS
from agent_invariants.render.text import render as render_text
from agent_invariants.rules import RULE_KINDS
from agent_invariants.schemas import generate

from support import EXAMPLES, REPO

REFUND = EXAMPLES / "refund-desk"
CONTRACT_PATH = REFUND / "contract.json"
BASELINE_PATH = REFUND / "baseline.jsonl"
CANDIDATE_PATH = REFUND / "candidate.jsonl"

VALIDATE, CHECK, COMPARE, SUMMARIZE, LINT = (
    "agent_invariants_validate_contract",
    "agent_invariants_check_trace",
    "agent_invariants_compare_traces",
    "agent_invariants_summarize_trace",
    "agent_invariants_lint_contract",
)
HINT = "agent-invariants: the MCP server needs the mcp extra: pip install 'agent-invariants[mcp]'\n"


# ----------------------------------------------------------------------------------------------
# helpers


def read_events(path: Path) -> list[dict[str, Any]]:
    """A JSONL trace as the list of event objects a client would send (blank and `#` lines skipped)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip() and not line.strip().startswith("#")]


CONTRACT: dict[str, Any] = json.loads(CONTRACT_PATH.read_text(encoding="utf-8"))
BASELINE = read_events(BASELINE_PATH)
CANDIDATE = read_events(CANDIDATE_PATH)


def cli_json(*args: str) -> tuple[int, Any]:
    """Run the CLI and parse its JSON output: (exit code, report)."""
    proc = subprocess.run([sys.executable, "-m", "agent_invariants", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def without_file_keys(report: dict[str, Any]) -> dict[str, Any]:
    """A CLI report for files minus what only a file has: each check report's `trace` and the `line`
    of violations and regressions. Everything else must match the in-memory report exactly."""
    report = copy.deepcopy(report)
    compare = report["schema"] == "agent-invariants/compare/v1"
    for check in [report["baseline"], report["candidate"]] if compare else [report]:
        del check["trace"]
        for violation in check["violations"] + [v for result in check["results"] for v in result["violations"]]:
            violation.pop("line", None)
    for regression in report.get("regressions", []):
        regression.pop("line", None)
    return report


def undescribed(schema: Any, path: str = "$") -> list[str]:
    """Paths of properties without a description, anywhere in a JSON Schema."""
    missing: list[str] = []
    if isinstance(schema, dict):
        for name, prop in schema.get("properties", {}).items():
            if not (isinstance(prop, dict) and prop.get("description")):
                missing.append(f"{path}.properties.{name}")
        for key, value in schema.items():
            missing += undescribed(value, f"{path}.{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            missing += undescribed(value, f"{path}[{index}]")
    return missing


@asynccontextmanager
async def server_session() -> AsyncIterator[ClientSession]:
    """An initialised client session with a fresh `python -m agent_invariants serve`; on exit,
    checks that the server wrote no traceback to stderr."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "agent_invariants", "serve"], cwd=str(REPO))
    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
        async with stdio_client(params, errlog=errlog) as (read_stream, write_stream), \
                ClientSession(read_stream, write_stream) as session:
            await session.initialize()
            yield session
        errlog.seek(0)
        stderr = errlog.read()
    assert "Traceback" not in stderr, stderr


def run(scenario: Callable[[ClientSession], Any]) -> None:
    """Run an async scenario against a fresh server (a minute at most)."""

    async def main() -> None:
        with anyio.fail_after(60):
            async with server_session() as session:
                await scenario(session)

    anyio.run(main)


def text_of(result: Any) -> str:
    """The readable text: an error's only block, or the second block of a success."""
    assert result.content and all(block.type == "text" for block in result.content), result.content
    assert len(result.content) == (1 if result.is_error else 2), result.content
    return result.content[-1].text


async def ok_call(session: ClientSession, tool: str, arguments: dict[str, Any]) -> tuple[Any, str]:
    """Call a tool that must succeed: (structured content, text). The first text block is the
    structured content as 2-space JSON, as the Node tool returns it (clients parse it)."""
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, text_of(result)
    assert json.loads(result.content[0].text) == result.structured_content
    assert result.content[0].text == json.dumps(result.structured_content, indent=2, ensure_ascii=False)
    return result.structured_content, text_of(result)


async def error_call(session: ClientSession, tool: str, arguments: dict[str, Any]) -> str:
    """Call a tool that must fail with a tool error: its text."""
    result = await session.call_tool(tool, arguments)
    assert result.is_error, result
    assert result.structured_content is None
    return text_of(result)


# ----------------------------------------------------------------------------------------------
# listing


@pytest.mark.slow
def test_tools_prompt_and_instructions_are_listed_with_schemas_and_annotations() -> None:
    async def scenario(session: ClientSession) -> None:
        info = session.initialize_result
        assert info is not None
        assert info.server_info.name == "agent-invariants"
        assert info.server_info.version == importlib.metadata.version("agent-invariants")
        assert info.instructions == INSTRUCTIONS
        for tool in TOOLS:
            assert tool in info.instructions

        tools = (await session.list_tools()).tools
        assert [tool.name for tool in tools] == [VALIDATE, CHECK, COMPARE, SUMMARIZE, LINT]
        params = {VALIDATE: ["contract"], CHECK: ["contract", "events"],
                  COMPARE: ["contract", "baseline", "candidate"], SUMMARIZE: ["events"], LINT: ["contract"]}
        for tool in tools:
            schema = tool.input_schema
            assert schema["type"] == "object" and schema["required"] == params[tool.name], tool.name
            optional = {CHECK: ["strict", "partial", "no_lint", "input_format", "run"],
                        COMPARE: ["strict", "partial", "no_lint", "input_format", "run"],
                        SUMMARIZE: ["input_format", "run"], LINT: ["interface"]}.get(tool.name, [])
            assert list(schema["properties"]) == params[tool.name] + optional
            if "strict" in optional:
                assert schema["properties"]["strict"]["type"] == "boolean"
                assert schema["properties"]["strict"]["default"] is False
            if "input_format" in optional:
                assert schema["properties"]["input_format"]["default"] == "native"
                assert "otel" in schema["properties"]["input_format"]["enum"]
            assert schema["additionalProperties"] is False
            assert undescribed(schema) == [], tool.name
            jsonschema.Draft202012Validator.check_schema(schema)
            for name in params[tool.name]:
                if name != "contract":
                    assert schema["properties"][name]["maxItems"] == MAX_EVENTS
            assert tool.output_schema is not None and tool.output_schema["type"] == "object", tool.name
            jsonschema.Draft202012Validator.check_schema(tool.output_schema)
            annotations = tool.annotations
            assert annotations is not None
            assert (annotations.read_only_hint, annotations.idempotent_hint, annotations.open_world_hint,
                    annotations.destructive_hint) == (True, True, False, False), tool.name
            assert tool.title and tool.description, tool.name
            for words in ("Use it", "Returns", "Read-only and deterministic"):
                assert words in tool.description, (tool.name, words)

        by_name = {tool.name: tool for tool in tools}
        check_schema = by_name[CHECK].input_schema
        # The generated schema accepts the example and knows every rule kind and event field.
        jsonschema.validate({"contract": CONTRACT, "events": CANDIDATE}, check_schema)
        defs = check_schema["$defs"]
        kinds = {d["properties"]["kind"]["enum"][0] for d in defs.values() if "kind" in d.get("properties", {})}
        assert kinds == set(RULE_KINDS)
        assert {"seq", "type", "tool", "call_id", "approval_id", "verdict", "confidence"} <= set(
            defs["Event"]["properties"])
        assert "seq" in defs["Event"]["required"] and "type" in defs["Event"]["required"]
        assert "strictly increasing" in defs["Event"]["properties"]["seq"]["description"]
        assert "Glob" in defs["DenyToolConfig"]["properties"]["tool"]["description"]
        # The same structs, described the same way as the published JSON Schemas (schemas/).
        published = generate()
        assert defs["Event"] == published["event-v1.schema.json"]["$defs"]["Event"]
        # Contracts of both versions: the published v2 contract, but for the versions it takes.
        v2 = published["contract-v2.schema.json"]["$defs"]
        assert defs["Contract"]["properties"]["version"]["enum"] == [1, 2]
        assert ({**defs["Contract"], "properties": {**defs["Contract"]["properties"], "version": None}}
                == {**v2["Contract"], "properties": {**v2["Contract"]["properties"], "version": None}})
        assert defs["MatchNode"] == v2["MatchNode"]
        assert "fails when the agent calls a tool" in defs["DenyToolConfig"]["properties"]["kind"]["description"]
        assert by_name[COMPARE].output_schema["properties"]["compatible"]["type"] == "boolean"
        assert "they may come in any order" in by_name[SUMMARIZE].description

    run(scenario)


@pytest.mark.slow
def test_the_prompt_turns_a_description_into_contract_instructions() -> None:
    async def scenario(session: ClientSession) -> None:
        prompts = (await session.list_prompts()).prompts
        assert [prompt.name for prompt in prompts] == [PROMPT_NAME, "protect-behavior-change"]
        arguments = {argument.name: argument for argument in prompts[0].arguments or []}
        assert arguments["rules"].required is True and arguments["rules"].description
        assert prompts[0].description

        description = "Never run shell commands. Refunds need a supervisor's approval first."
        result = await session.get_prompt(PROMPT_NAME, {"rules": description, "name": "refund-desk"})
        assert len(result.messages) == 1 and result.messages[0].role == "user"
        text = result.messages[0].content.text
        assert description in text and '"refund-desk"' in text
        for kind, rule in RULE_KINDS.items():
            if getattr(rule.config_type, "since_version", 1) > 1:   # the prompt writes version 1, which refuses them
                assert f"- `{kind}`:" not in text, kind
                continue
            assert f"- `{kind}`:" in text, kind
            options = explain_kind(kind).split("\n## Options\n", 1)[1].split("\n## ", 1)[0]
            for line in options.strip().splitlines():   # each option as `explain` prints it
                if line.strip():
                    assert f"\n  {line.rstrip()}\n" in text, (kind, line)
        assert VALIDATE in text and CHECK in text
        assert '"version": 1' in text

        with pytest.raises(MCPError, match="missing required argument `rules`"):
            await session.get_prompt(PROMPT_NAME, {})
        with pytest.raises(MCPError, match="unknown prompt"):
            await session.get_prompt("no-such-prompt", {"rules": "x"})

        assert not prompts[1].arguments   # the Node tool's prompt takes none
        change = await session.get_prompt("protect-behavior-change")
        text = change.messages[0].content.text
        assert change.messages[0].role == "user"
        for expectation in ("approval", "stop", "attempts", "observed outcome", COMPARE, VALIDATE, "baseline"):
            assert expectation in text, expectation

    run(scenario)


# ----------------------------------------------------------------------------------------------
# tools against the CLI


@pytest.mark.slow
def test_each_tool_returns_the_cli_json_report_for_a_passing_and_a_failing_example() -> None:
    reports = {
        "check-baseline": cli_json("check", "-c", str(CONTRACT_PATH), "-t", str(BASELINE_PATH), "-f", "json"),
        "check-candidate": cli_json("check", "-c", str(CONTRACT_PATH), "-t", str(CANDIDATE_PATH), "-f", "json"),
        "compare-same": cli_json("compare", "-c", str(CONTRACT_PATH), "-b", str(BASELINE_PATH),
                                 "-k", str(BASELINE_PATH), "-f", "json"),
        "compare": cli_json("compare", "-c", str(CONTRACT_PATH), "-b", str(BASELINE_PATH),
                            "-k", str(CANDIDATE_PATH), "-f", "json"),
        "summary-baseline": cli_json("summary", "-t", str(BASELINE_PATH)),
        "summary-candidate": cli_json("summary", "-t", str(CANDIDATE_PATH)),
        "validate": cli_json("validate", "-c", str(CONTRACT_PATH)),
    }
    assert reports["check-baseline"][0] == 0 and reports["check-candidate"][0] == 1
    assert reports["compare-same"][0] == 0 and reports["compare"][0] == 1

    async def scenario(session: ClientSession) -> None:
        passed, text = await ok_call(session, CHECK, {"contract": CONTRACT, "events": BASELINE})
        assert passed == without_file_keys(reports["check-baseline"][1])
        assert passed["passed"] is True and text.startswith("PASS  refund-desk\n")

        failed, text = await ok_call(session, CHECK, {"contract": CONTRACT, "events": CANDIDATE})
        assert failed == without_file_keys(reports["check-candidate"][1])
        assert failed["passed"] is False and failed["error_count"] > 0
        assert text.startswith("FAIL  refund-desk\n")
        for violation in failed["violations"]:
            if "event_seq" in violation:
                assert f"seq {violation['event_seq']}  [{violation['code']}] {violation['message']}" in text

        same, text = await ok_call(session, COMPARE, {"contract": CONTRACT, "baseline": BASELINE,
                                                      "candidate": BASELINE})
        assert same == without_file_keys(reports["compare-same"][1])
        assert same["compatible"] is True and text.startswith("COMPATIBLE  refund-desk\n")

        worse, text = await ok_call(session, COMPARE, {"contract": CONTRACT, "baseline": BASELINE,
                                                       "candidate": CANDIDATE})
        assert worse == without_file_keys(reports["compare"][1])
        assert worse["compatible"] is False and text.startswith("REGRESSION  refund-desk\n")
        for regression in worse["regressions"]:
            assert f"{regression['kind']}: {regression['message']}" in text

        for name, events in (("summary-baseline", BASELINE), ("summary-candidate", CANDIDATE)):
            summary, text = await ok_call(session, SUMMARIZE, {"events": events})
            assert summary == reports[name][1]
            assert text.startswith(f"{summary['events']} events · {summary['tool_calls']} tool calls")
            assert ", ".join(summary["tools"]) in text
            assert text == render_text(summarize_trace(events))   # the text format's rendering, not the server's own

        valid, text = await ok_call(session, VALIDATE, {"contract": CONTRACT})
        assert valid == reports["validate"][1]
        assert text.startswith("VALID  refund-desk\n")
        for rule in CONTRACT["rules"]:
            assert f"  {rule['id']}  {rule['kind']}" in text
        assert text == render_text(load_contract(CONTRACT))

        # Deterministic: the same call gives the same answer.
        again, _ = await ok_call(session, CHECK, {"contract": CONTRACT, "events": CANDIDATE})
        assert json.dumps(again) == json.dumps(failed)

    run(scenario)


# ----------------------------------------------------------------------------------------------
# bad input


@pytest.mark.slow
def test_bad_input_is_a_precise_tool_error_and_the_session_keeps_working() -> None:
    def renumbered(events: list[dict[str, Any]], at: int, seq: int) -> list[dict[str, Any]]:
        events = copy.deepcopy(events)
        events[at]["seq"] = seq
        return events

    typo = copy.deepcopy(CONTRACT)
    retry = next(i for i, rule in enumerate(typo["rules"]) if rule["kind"] == "retry_limit")
    typo["rules"][retry]["max_attempt"] = typo["rules"][retry].pop("max_attempts")
    wrong_type = copy.deepcopy(CONTRACT)
    wrong_type["rules"][2]["tools"] = "crm.*"
    duplicate = copy.deepcopy(CONTRACT)
    duplicate["rules"][1]["id"] = duplicate["rules"][0]["id"]
    seq_back = BASELINE[2]["seq"] - 1

    async def scenario(session: ClientSession) -> None:
        async def still_works() -> None:
            summary, _ = await ok_call(session, SUMMARIZE, {"events": BASELINE})
            assert summary["events"] == len(BASELINE)

        # A bad contract, in every tool that takes one: the JSON path and the problem.
        assert await error_call(session, VALIDATE, {"contract": typo}) == (
            f"contract: $.rules[{retry}].max_attempt: unknown field (did you mean 'max_attempts'?)")
        await still_works()
        message = await error_call(session, CHECK, {"contract": wrong_type, "events": BASELINE})
        assert message.startswith("contract: $.rules[2].tools: expected an array, got \""), message
        message = await error_call(session, COMPARE, {"contract": duplicate, "baseline": BASELINE,
                                                      "candidate": BASELINE})
        assert message == (f"contract: $.rules[1].id: duplicate rule id {CONTRACT['rules'][0]['id']!r} "
                           "(already used by rules[0])"), message
        await still_works()

        # Non-increasing seq: the event's index in its list, and the values.
        assert await error_call(session, CHECK, {"contract": CONTRACT, "events": renumbered(BASELINE, 2, seq_back)}) \
            == f"events[2]: $.seq: must be strictly increasing, got {seq_back} after {BASELINE[1]['seq']}"
        await still_works()
        message = await error_call(session, COMPARE, {"contract": CONTRACT, "baseline": BASELINE,
                                                      "candidate": renumbered(CANDIDATE, 4, 0)})
        assert message.startswith("candidate[4]: $.seq: must be strictly increasing, got 0 after"), message
        message = await error_call(session, COMPARE, {"contract": CONTRACT, "baseline": renumbered(BASELINE, 1, 0),
                                                      "candidate": CANDIDATE})
        assert message.startswith("baseline[1]: $.seq: must be strictly increasing, got 0 after"), message
        # As the Node.js tool's (spec v1 §3.2, §12 point 16), summarize takes any order of seq, and
        # duplicates; each seq is still an integer >= 0.
        in_order, _ = await ok_call(session, SUMMARIZE, {"events": BASELINE})
        for events in (renumbered(BASELINE, 3, 0), [{**event, "seq": 7} for event in BASELINE], BASELINE[::-1]):
            summary, _ = await ok_call(session, SUMMARIZE, {"events": events})
            assert summary == in_order
        message = await error_call(session, SUMMARIZE, {"events": renumbered(BASELINE, 3, -1)})
        assert message == "events[3]: $.seq: must be >= 0, got -1", message

        # Bad events: the index and the field.
        assert await error_call(session, SUMMARIZE, {"events": [{"seq": 1, "type": "run.start"}, {"seq": 2}]}) \
            == "events[1]: $: missing required field `type`"
        bad_ok = [{"seq": 1, "type": "tool.result", "ok": "yes"}]
        assert await error_call(session, CHECK, {"contract": CONTRACT, "events": bad_ok}) \
            == "events[0]: $.ok: expected true or false, got a string"
        assert await error_call(session, SUMMARIZE, {"events": [{"seq": 1, "type": "x"}, "tool.call"]}) \
            == "events[1]: $: expected an object, got a string"
        await still_works()

        # Arguments of the wrong shape.
        assert await error_call(session, CHECK, {"contract": str(CONTRACT_PATH), "events": BASELINE}) == (
            "contract: expected a JSON object (the contract itself, not a path or a JSON string), got a string")
        assert await error_call(session, SUMMARIZE, {"events": {"seq": 1, "type": "x"}}) \
            == "events: expected an array of event objects, got an object"
        assert await error_call(session, CHECK, {"contract": CONTRACT}) == "missing required argument `events`"
        assert await error_call(session, SUMMARIZE, {"events": [], "trace": "run.jsonl"}) \
            == f"unknown argument `trace`; {SUMMARIZE} takes `events`, `input_format` and `run`"
        with pytest.raises(MCPError, match="unknown tool 'agent_invariants_check'"):
            await session.call_tool("agent_invariants_check", {"contract": CONTRACT, "events": BASELINE})
        await still_works()

        # More than 100,000 events per call; exactly 100,000 are fine.
        many = [{"seq": seq, "type": "telemetry.tick"} for seq in range(MAX_EVENTS + 1)]
        assert await error_call(session, SUMMARIZE, {"events": many}) == (
            "events: 100,001 events, over the limit of 100,000 per call; "
            "check longer traces from a file with `agent-invariants check`")
        message = await error_call(session, COMPARE, {"contract": CONTRACT, "baseline": BASELINE, "candidate": many})
        assert message.startswith("candidate: 100,001 events, over the limit"), message
        summary, _ = await ok_call(session, SUMMARIZE, {"events": many[:MAX_EVENTS]})
        assert summary["events"] == MAX_EVENTS
        await still_works()

    run(scenario)


# ----------------------------------------------------------------------------------------------
# the wire


@pytest.mark.slow
def test_stdout_carries_only_json_rpc() -> None:
    """Raw JSON-RPC over a pipe: every line the server writes is one JSON-RPC 2.0 message."""
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": CHECK, "arguments": {"contract": CONTRACT, "events": CANDIDATE}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
         "params": {"name": SUMMARIZE, "arguments": {"events": [{"seq": 2, "type": "a"}, {"seq": 1.5, "type": "b"}]}}},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "nope", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 6, "method": "prompts/list"},
        {"jsonrpc": "2.0", "id": 7, "method": "prompts/get",
         "params": {"name": PROMPT_NAME, "arguments": {"rules": "x"}}},
    ]
    expected = {request["id"] for request in requests if "id" in request}
    messages = []
    with subprocess.Popen([sys.executable, "-m", "agent_invariants", "serve"], cwd=REPO, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        try:
            for request in requests:
                proc.stdin.write(json.dumps(request).encode() + b"\n")
                proc.stdin.flush()
                while "id" in request and request["id"] not in {message.get("id") for message in messages}:
                    line = proc.stdout.readline()
                    assert line, "the server closed standard output early"
                    messages.append(json.loads(line))   # a line that is not JSON fails here
            proc.stdin.close()
            rest = proc.stdout.read()
            assert proc.wait(timeout=30) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
        stderr = proc.stderr.read().decode()
    assert rest == b"", rest
    assert "Traceback" not in stderr, stderr
    assert all(message["jsonrpc"] == "2.0" and ("result" in message or "error" in message) for message in messages)
    assert {message["id"] for message in messages} == expected
    by_id = {message["id"]: message for message in messages}
    assert by_id[3]["result"]["structuredContent"]["passed"] is False
    assert by_id[4]["result"]["isError"] is True
    assert by_id[5]["error"]["code"] == -32602


@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_serve_help_prints_its_usage_and_starts_no_server(cli, flag: str) -> None:
    result = cli("serve", flag)   # no input: a server would wait for it
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Usage: agent-invariants serve [OPTIONS]")


# ----------------------------------------------------------------------------------------------
# without the extra


def test_the_sdk_is_an_optional_extra() -> None:
    requirements = importlib.metadata.requires("agent-invariants") or []

    def name(requirement: str) -> str:
        return re.split(r"[\s<>=!~;\[(]", requirement, maxsplit=1)[0].lower()

    core = [req for req in requirements if "extra ==" not in req]
    assert "mcp" not in [name(req) for req in core], core
    extras = importlib.metadata.metadata("agent-invariants").get_all("Provides-Extra")
    assert "mcp" in extras
    for extra in ("mcp", "test"):
        assert any(name(req) == "mcp" and f"extra == '{extra}'" in req for req in requirements), extra


BLOCK_SDK = "import sys; sys.modules['mcp'] = sys.modules['mcp_types'] = None; "


def test_serve_without_the_sdk_exits_2_with_a_one_line_hint() -> None:
    code = BLOCK_SDK + "from agent_invariants.cli import main; main(['serve'])"
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60,
                          check=False)
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", HINT)


@pytest.mark.slow
def test_the_package_works_without_the_sdk() -> None:
    code = BLOCK_SDK + (
        "import json\n"
        "from agent_invariants.cli import main\n"
        "from agent_invariants import mcp_server\n"
        "assert not mcp_server.sdk_available()\n"
        "report, text = mcp_server.run_tool(mcp_server.TOOLS[1], {'contract': json.load(open(sys.argv[1])),\n"
        "    'events': [{'seq': 1, 'type': 'tool.call', 'tool': 'shell.exec'}]})\n"
        "assert text.startswith('FAIL')\n"
        "main(['check', '--contract', sys.argv[1], '--trace', sys.argv[2]])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(CONTRACT_PATH), str(BASELINE_PATH)], cwd=REPO,
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("PASS  refund-desk")


def test_the_check_and_compare_tools_take_strict() -> None:
    from agent_invariants.errors import InputError
    from agent_invariants.mcp_server import run_tool

    contract = {"version": 1, "name": "c", "rules": [{"id": "pay", "kind": "require_approval", "tool": "pay.*"}]}
    events = [{"seq": 1, "type": "tool.call", "tool": "kb.search"}]
    report, _ = run_tool(CHECK, {"contract": contract, "events": events})
    assert report["passed"] is True
    assert [notice["kind"] for notice in report["notices"]] == ["rule_checked_nothing"]
    report, text = run_tool(CHECK, {"contract": contract, "events": events, "strict": True})
    assert report["passed"] is False and "checked nothing in this trace" in text
    compared, _ = run_tool(COMPARE, {"contract": contract, "baseline": events, "candidate": events, "strict": True})
    assert compared["candidate"]["passed"] is False
    misspelt = [{"seq": 1, "type": "run.start"}, {"seq": 2, "type": "Tool.Call", "tool": "pay.out"}]
    with pytest.raises(InputError) as refused:   # (the event by its place in the list, as a file's by its line)
        run_tool(CHECK, {"contract": contract, "events": misspelt, "strict": True})
    assert str(refused.value).startswith('events[1]: event type "Tool.Call" looks like "tool.call"')
    with pytest.raises(InputError) as wrong:
        run_tool(CHECK, {"contract": contract, "events": events, "strict": "yes"})
    assert str(wrong.value) == "strict: expected true or false, got a string"


def test_a_report_keeps_at_most_10000_violations_per_trace_however_many_rules_break() -> None:
    """A request of 96 KiB (a thousand rules, a thousand events, each a violation of each) made a
    response of 1.1 GiB: the rules of a contract of more than ten share 10,000 kept violations;
    the counts stay whole and the report says what it left out. Ten rules keep 1,000 each."""
    from agent_invariants.mcp_server import run_tool

    events = [{"seq": n, "type": "tool.call", "tool": "a"} for n in range(1, 201)]
    many = {"version": 1, "name": "c", "rules": [{"id": f"r{n}", "kind": "deny_tool", "tool": "a"} for n in range(400)]}
    report, _ = run_tool(CHECK, {"contract": many, "events": events})
    assert (report["error_count"], report["violations_total"], report["truncated"]) == (80_000, 80_000, True)
    assert len(report["violations"]) == 10_000
    assert {len(result["violations"]) for result in report["results"]} == {25}   # 10,000 / 400
    compared, _ = run_tool(COMPARE, {"contract": many, "baseline": events[:1], "candidate": events})
    assert len(compared["candidate"]["violations"]) == 10_000 and compared["candidate"]["error_count"] == 80_000
    few = {**many, "rules": many["rules"][:10]}
    report, _ = run_tool(CHECK, {"contract": few, "events": events})
    assert len(report["violations"]) == 2_000 and "truncated" not in report


def test_a_violations_evidence_over_4_kib_is_cut_short_or_said_not_returned() -> None:
    """Evidence holds values of the trace: a thousand rules each quoting an argument of 2,000
    numbers made a request of 110 KiB a response of 164 MiB. Evidence over 4 KiB is cut short as
    a report cuts evidence past its total, saying what it left out (a version-1 kind's, a
    contract's long list of patterns, keeping the order of its keys). Small evidence stays whole."""
    from agent_invariants.mcp_server import run_tool

    numbers = list(range(10**6, 10**6 + 2000))
    rules = [{"id": f"r{n}", "kind": "tool_args", "tool": "a", "match": {"x": 0}} for n in range(3)]
    allowed = [f"tool-{n:03d}-{'x' * 40}" for n in range(100)]
    contract = {"version": 2, "name": "c", "rules": [*rules, {"id": "y", "kind": "tool_args", "tool": "a",
                                                              "match": {"y": 0}},
                                                     {"id": "v1", "kind": "allow_tools", "tools": allowed}]}
    events = [{"seq": 1, "type": "tool.call", "tool": "a", "call_id": "c", "args": {"x": numbers, "y": 1}}]
    report, _ = run_tool(CHECK, {"contract": contract, "events": events, "no_lint": True})
    *big, small, listing = report["violations"]
    assert [violation["rule_id"] for violation in big] == ["r0", "r1", "r2"]
    for violation in big:
        (mismatch,) = violation["evidence"]["mismatches"]
        kept = mismatch["actual"][:-1]
        assert kept == numbers[:len(kept)] and 10 < len(kept) < 100
        assert mismatch["actual"][-1] == f"… {2000 - len(kept)} more"
        assert len(json.dumps(violation["evidence"])) < 1_000
    assert small["evidence"]["mismatches"] == [{"actual": 1, "expected": 0, "pointer": "/args/y"}]
    assert list(listing["evidence"]) == ["tool", "allowed"]   # (a version-1 kind's: its keys in their order)
    kept = listing["evidence"]["allowed"][:-1]
    assert kept == allowed[:len(kept)] and listing["evidence"]["allowed"][-1] == f"… {100 - len(kept)} more"
    compared, _ = run_tool(COMPARE, {"contract": contract, "baseline": events, "candidate": events, "no_lint": True})
    assert compared["candidate"]["violations"] == report["violations"]


def test_evidence_holding_a_number_javascript_writes_its_own_way_is_measured_as_the_report_writes_it() -> None:
    """Evidence holds numbers in JavaScript's form (`1e+21`), which only the report's encoder
    writes: measuring the evidence's size without it failed the call (a TypeError)."""
    from agent_invariants.mcp_server import run_tool

    contract = {"version": 2, "name": "c", "rules": [{"id": "r", "kind": "tool_args", "tool": "t",
                                                     "match": {"x": {"$lt": 0}}}]}
    events = [{"seq": 1, "type": "tool.call", "tool": "t", "call_id": "c", "args": {"x": 1e21}}]
    report, _ = run_tool(CHECK, {"contract": contract, "events": events})
    (violation,) = report["violations"]
    assert violation["evidence"]["mismatches"][0]["actual"] == 1e21
    compared, _ = run_tool(COMPARE, {"contract": contract, "baseline": events, "candidate": events})
    assert compared["candidate"]["violations"][0]["evidence"] == violation["evidence"]


def test_the_json_text_writes_numbers_as_the_command_line_report_does(tmp_path: Path) -> None:
    """The first text block is the command line's `--format json` report (less its file keys):
    numbers as JavaScript writes them (`1e+21`, `2e+300`), not as a decoder of the structured
    content would write them again (`1e21`)."""
    contract = {"version": 2, "name": "c", "rules": [{"id": "r", "kind": "tool_args", "tool": "t",
                                                     "match": {"x": {"$lt": 0}}}]}
    events = [{"seq": n + 1, "type": "tool.call", "tool": "t", "call_id": f"c{n}", "args": {"x": x}}
              for n, x in enumerate([1e21, 2e300, 1.2345678901234568e29, 1e16])]
    (tmp_path / "c.json").write_text(json.dumps(contract))
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(event) + "\n" for event in events))
    written = subprocess.run([sys.executable, "-m", "agent_invariants", "check", "-c", str(tmp_path / "c.json"),
                              "-t", str(tmp_path / "t.jsonl"), "-f", "json"], capture_output=True, text=True)
    assert written.returncode == 1, written.stderr
    actual = [line.strip() for line in written.stdout.splitlines() if '"actual"' in line]
    assert actual[:4] == ['"actual": 1e+21,', '"actual": 2e+300,', '"actual": 1.2345678901234568e+29,',
                          '"actual": 10000000000000000,']

    async def scenario(session: ClientSession) -> None:
        result = await session.call_tool(CHECK, {"contract": contract, "events": events})
        lines = [line.strip() for line in result.content[0].text.splitlines() if '"actual"' in line]
        assert lines == actual

    run(scenario)


def test_an_imported_record_holding_a_number_past_any_double_is_refused_not_read_as_null() -> None:
    """Records given as values were written out by msgspec, which writes an infinity as `null`:
    `{"amount": null}` then passed for an amount of 1e400 (a file's import refuses the number)."""
    from agent_invariants.errors import TraceError
    from agent_invariants.mcp_server import run_tool

    def message(n: int, direction: str, body: dict[str, Any]) -> dict[str, Any]:
        return {"ts": f"2026-12-02T01:51:0{n}.000000Z", "session": "s1", "dir": direction,
                "msg": {"jsonrpc": "2.0", "id": n, **body}}

    records = [message(1, "c2s", {"method": "initialize", "params": {}}),
               message(2, "c2s", {"method": "tools/call", "params": {"name": "refund",
                                                                      "arguments": {"amount": float("inf")}}})]
    contract = {"version": 2, "name": "c", "rules": [{"id": "n", "kind": "tool_args", "tool": "refund",
                                                      "match": {"amount": None}}]}
    with pytest.raises(TraceError) as refused:
        run_tool(CHECK, {"contract": contract, "events": records, "input_format": "mcp-log"})
    assert str(refused.value) == "events[1]: holds a number beyond any double (such as 1e400), which the import " \
                                 "cannot carry"
    records[1]["msg"]["params"]["arguments"]["amount"] = None
    report, _ = run_tool(CHECK, {"contract": contract, "events": records, "input_format": "mcp-log"})
    assert report["passed"] is True
