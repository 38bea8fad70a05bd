"""A file is read in one format (§7): a record that another format claims stops the import, and an
OTLP trace whose tool steps are all the other flavour's (OpenInference or the GenAI conventions)
is named, rather than read as a run without a call, which passes."""
from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from test_import_hostile import BASE, otlp, span

from tests.conftest import Cli

IMPORTS = Path(__file__).resolve().parent.parent / "examples" / "imports"
DENY_SHELL = {"version": 1, "name": "no shell", "rules": [{"id": "no-shell", "kind": "deny_tool", "tool": "shell"}]}
MCP_SHELL = {"ts": "2026-01-01T00:00:00Z", "session": "s9", "dir": "c2s",
             "msg": {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                     "params": {"name": "shell", "arguments": {"cmd": "rm -rf /"}}}}


def _lines(name: str) -> list[str]:
    return (IMPORTS / name).read_text(encoding="utf-8").splitlines()


def _write(tmp_path: Path, name: str, lines: list[str]) -> None:
    (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "contract.json").write_text(json.dumps(DENY_SHELL), encoding="utf-8")


@pytest.mark.parametrize(("first", "then", "reading", "other"), [
    ("pydantic-ai.otlp.jsonl", "mcp-session.mcp.jsonl", "otel", "mcp-log"),
    ("agents-openinference.otlp.jsonl", "agents-sdk.agents.jsonl", "openinference", "openai-agents"),
    ("agents-sdk.agents.jsonl", "langchain.runs.jsonl", "openai-agents", "langsmith"),
    ("langchain.runs.jsonl", "pydantic-ai.otlp.jsonl", "langsmith", "otel"),
    ("mcp-session.mcp.jsonl", "agents-sdk.agents.jsonl", "mcp-log", "openai-agents"),
])
def test_a_record_of_another_format_in_a_file_stops_the_import(first: str, then: str, reading: str, other: str,
                                                                 cli: Cli, tmp_path: Path) -> None:
    """Each reader passes over the records of kinds its mapping does not use, so a file read as
    spans or as the Agents SDK's export, with another tool's records after them, passed (exit 0,
    even under --strict, and nothing said) with those records unread; a LangSmith or MCP file with
    them said only that a run lacked its id or a time. Now the first record of another format
    stops the import at its line, saying so."""
    lines = _lines(first)
    _write(tmp_path, "mixed.jsonl", [*lines, *_lines(then)])
    result = cli("check", "-c", "contract.json", "-t", "mixed.jsonl", "--input-format", "auto", "--strict")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (f"agent-invariants: mixed.jsonl:{len(lines) + 1}: is a record of the {other} format, "
                             f"in a file read as {reading}: a file is read in one format (split it, or name the "
                             "format it is in)\n")


def test_an_mcp_call_appended_to_spans_is_not_passed_over(cli: Cli, tmp_path: Path) -> None:
    """The hunt's case: a forbidden call of an MCP session appended to an export of spans."""
    _write(tmp_path, "mixed.jsonl", [*_lines("pydantic-ai.otlp.jsonl"), json.dumps(MCP_SHELL)])
    result = cli("check", "-c", "contract.json", "-t", "mixed.jsonl", "--input-format", "auto")
    assert result.returncode == 2
    assert result.stderr.startswith("agent-invariants: mixed.jsonl:2: is a record of the mcp-log format, in a file "
                                    "read as otel")


def test_a_named_format_that_is_not_the_files_says_which_it_is(cli: Cli, tmp_path: Path) -> None:
    _write(tmp_path, "session.jsonl", _lines("mcp-session.mcp.jsonl"))
    result = cli("convert", "--from", "otel", "session.jsonl")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == ("agent-invariants: session.jsonl:1: is a record of the mcp-log format, in a file read "
                             "as otel: a file is read in one format (split it, or name the format it is in)\n")


def test_records_of_no_format_are_still_skipped_and_counted(cli: Cli, tmp_path: Path) -> None:
    """Metrics beside spans are records the mapping does not use, not another format."""
    _write(tmp_path, "spans.jsonl", [*_lines("pydantic-ai.otlp.jsonl"), json.dumps({"resourceMetrics": []})])
    result = cli("convert", "--from", "auto", "spans.jsonl")
    assert result.returncode == 0, result.stderr
    assert result.stderr.endswith("; skipped 1 record of kinds the mapping does not use\n")


def _trace_id(name: str) -> str:
    (line,) = _lines(name)
    ids = {span["traceId"] for resource in json.loads(line)["resourceSpans"]
           for scope in resource["scopeSpans"] for span in scope["spans"]}
    (found,) = ids
    return str(found) if len(found) == 32 else base64.b64decode(found).hex()   # (ids as hex or base64)


@pytest.mark.parametrize(("name", "named", "right", "marker"), [
    ("pydantic-ai.otlp.jsonl", "openinference", "otel", "gen_ai.operation.name = execute_tool"),
    ("agents-openinference.otlp.jsonl", "otel", "openinference", "openinference.span.kind = TOOL"),
])
@pytest.mark.parametrize("profile", [False, True])
def test_a_trace_of_the_other_otlp_flavours_tool_steps_is_named_not_read_as_a_run_without_calls(
        name: str, named: str, right: str, marker: str, profile: bool, cli: Cli, tmp_path: Path) -> None:
    """The two flavours share their records, and each reads tool steps only by its own markers:
    pydantic-ai's spans read as OpenInference (or the Agents SDK's OpenInference spans read as
    otel) were a run of two events, no call, which passed (a contract of deny_tool alone without
    a word). A trace whose tool steps are all the other flavour's is named now; a profile, which
    maps spans by name, reads none of them either."""
    _write(tmp_path, "spans.jsonl", _lines(name))
    extra = ("--profile", str(IMPORTS / "human-review.profile.json")) if profile else ()
    result = cli("check", "-c", "contract.json", "-t", "spans.jsonl", "--input-format", named, *extra)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith(f"agent-invariants: spans.jsonl:{result.stderr.split(':')[2]}: trace "
                                    f"{_trace_id(name)} holds tool steps of {right} ({marker}) and none of {named}, "
                                    f"which does not read them: read it as {right} (or as auto, which reads each "
                                    "trace in its own flavour)\n")
    assert cli("check", "-c", "contract.json", "-t", "spans.jsonl", "--input-format", right).returncode == 0


END = BASE + 10_000_000
AGENT = span("e7ad6b7169203331", "invoke_agent a", BASE, END, gen_ai__operation__name="invoke_agent")
SHELL = span("e9ad6b7169203331", "execute_tool shell", BASE, END, AGENT["spanId"],
             gen_ai__operation__name="execute_tool", gen_ai__tool__name="shell", gen_ai__tool__call__id="c1",
             gen_ai__tool__call__arguments='{"cmd": "rm -rf /"}')


def test_a_model_span_of_the_other_flavour_does_not_hide_the_tool_steps(cli: Cli, tmp_path: Path) -> None:
    """A GenAI agent whose model client is traced by an OpenInference instrumentor: auto read the
    first record's LLM span as OpenInference, whose reading has no call of the `execute_tool`
    spans (it passed, exit 0 under --strict). auto reads the trace as otel, the flavour of its tool
    steps; named openinference, it is refused, naming the flavour to read it as."""
    llm = span("e8ad6b7169203331", "ChatCompletion", BASE, END, AGENT["spanId"], openinference__span__kind="LLM")
    _write(tmp_path, "spans.jsonl", [otlp(AGENT, llm, SHELL)])
    result = cli("check", "-c", "contract.json", "-t", "spans.jsonl", "--input-format", "auto", "--strict", "-f",
                 "json")
    assert (result.returncode, json.loads(result.stdout)["violations"][0]["rule_id"]) == (1, "no-shell")
    result = cli("check", "-c", "contract.json", "-t", "spans.jsonl", "--input-format", "openinference")
    assert (result.returncode, result.stdout) == (2, "")
    assert "holds tool steps of otel (gen_ai.operation.name = execute_tool) and none of openinference" in \
        result.stderr
    assert cli("check", "-c", "contract.json", "-t", "spans.jsonl", "--input-format", "otel").returncode == 1


@pytest.mark.parametrize("order", ["genai-first", "openinference-first"])
def test_auto_reads_each_trace_of_a_collectors_file_in_its_own_flavour(order: str, cli: Cli, tmp_path: Path) -> None:
    """A Collector's file exporter writes the traces of every service to one file: pydantic-ai's
    run (the GenAI conventions) beside the Agents SDK's run traced by OpenInference. auto reads each
    trace in its own flavour, whichever comes first; each is the run that trace's file alone makes."""
    genai, inference = _lines("pydantic-ai.otlp.jsonl"), _lines("agents-openinference.otlp.jsonl")
    _write(tmp_path, "genai.jsonl", genai)
    _write(tmp_path, "inference.jsonl", inference)
    _write(tmp_path, "collector.jsonl", genai + inference if order == "genai-first" else inference + genai)
    for name, alone in (("genai.jsonl", genai), ("inference.jsonl", inference)):
        run = _trace_id("pydantic-ai.otlp.jsonl" if alone is genai else "agents-openinference.otlp.jsonl")
        expected = cli("convert", "--from", "auto", name)
        together = cli("convert", "--from", "auto", "collector.jsonl", "--run", run)
        assert (together.returncode, expected.returncode) == (0, 0), together.stderr
        line = 1 if (alone is genai) == (order == "genai-first") else 2   # (each example is one line)
        assert together.stdout == expected.stdout.replace(f'"file":"{name}","line":1,',
                                                          f'"file":"collector.jsonl","line":{line},')
        assert '"tool.call"' in together.stdout
    first, second = ("otel", "openinference") if order == "genai-first" else ("openinference", "otel")
    result = cli("check", "-c", "contract.json", "-t", "collector.jsonl", "--input-format", first, "--run", "all")
    assert result.returncode == 2   # named, the file is read in that flavour: the other's trace is refused
    assert f"and none of {first}, which does not read them: read it as {second} (or as auto" in result.stdout


def test_a_trace_with_tool_steps_of_both_flavours_is_read_as_asked(cli: Cli, tmp_path: Path) -> None:
    """Traced twice (both instrumentations on): each reading has its calls."""
    tool = span("eaad6b7169203331", "shell", BASE, END, AGENT["spanId"], openinference__span__kind="TOOL",
                tool__name="shell", input__value='{"cmd": "ls"}')
    _write(tmp_path, "spans.jsonl", [otlp(AGENT, SHELL, tool)])
    for named in ("otel", "openinference"):
        assert cli("check", "-c", "contract.json", "-t", "spans.jsonl", "--input-format", named).returncode == 1


def test_our_own_events_appended_to_spans_stop_the_import(cli: Cli, tmp_path: Path) -> None:
    native = {"seq": 2, "type": "tool.call", "tool": "shell", "call_id": "x", "args": {"cmd": "rm -rf /"}}
    _write(tmp_path, "mixed.jsonl", [*_lines("pydantic-ai.otlp.jsonl"), json.dumps(native)])
    result = cli("check", "-c", "contract.json", "-t", "mixed.jsonl", "--input-format", "auto", "--strict")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == ("agent-invariants: mixed.jsonl:2: is one of our own events (a native trace), in a "
                             "file read as otel: a file is read in one format (split it, or name the format it is "
                             "in)\n")


def test_a_metrics_record_no_plain_json_reader_takes_is_still_skipped(cli: Cli, tmp_path: Path) -> None:
    """Asking whether a skipped record is another format's read it as plain JSON, which refuses
    `1e400`: a metrics record the typed read passes over stopped the import."""
    metrics = ('{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"x","gauge":{"dataPoints":'
               '[{"asDouble":1e400}]}}]}]}]}')
    _write(tmp_path, "spans.jsonl", [otlp(AGENT, SHELL), metrics])
    result = cli("check", "-c", "contract.json", "-t", "spans.jsonl", "--input-format", "auto")
    assert result.returncode == 1, result.stderr


@pytest.mark.parametrize("count", [None, 0.0, "x"])
def test_a_dropped_attributes_count_of_any_json_value_is_read(count: Any, cli: Cli, tmp_path: Path) -> None:
    """The count is read only to know whether an exporter left attributes out: a writer of its
    own that puts null there (or a float) was refused for it."""
    _write(tmp_path, "spans.jsonl", [otlp({**AGENT, "droppedAttributesCount": count},
                                          {**SHELL, "droppedAttributesCount": count})])
    result = cli("check", "-c", "contract.json", "-t", "spans.jsonl", "--input-format", "otel")
    assert result.returncode == 1, result.stderr


def test_an_agents_record_appended_to_langsmith_runs_is_named(cli: Cli, tmp_path: Path) -> None:
    _write(tmp_path, "mixed.jsonl", [*_lines("langchain.runs.jsonl"),
                                     json.dumps({"object": "trace", "id": "trace_1", "workflow_name": "w"})])
    result = cli("check", "-c", "contract.json", "-t", "mixed.jsonl", "--input-format", "auto")
    assert result.returncode == 2
    assert result.stderr.startswith("agent-invariants: mixed.jsonl:2: is a record of the openai-agents format, in a "
                                    "file read as langsmith")


def test_an_export_on_standard_input_is_named_as_a_native_trace_there_is(cli: Cli, tmp_path: Path) -> None:
    """A native trace on standard input is `-` in the report and its warnings; an imported one was
    `<events>` in the warnings, `<trace>:1` at each violation and no trace in the JSON report."""
    export = (IMPORTS / "langchain.runs.jsonl").read_text(encoding="utf-8")
    arguments = ("check", "-c", str(IMPORTS / "contract.json"), "-t", "-", "--input-format", "auto")
    text = cli(*arguments, stdin=export)
    assert text.returncode == 1, text.stderr
    assert text.stderr.startswith("agent-invariants: warning: - (run ")
    assert [line.split()[0] for line in text.stdout.splitlines() if " seq " in line] == ["-:1"]
    assert json.loads(cli(*arguments, "-f", "json", stdin=export).stdout)["trace"] == "-"
