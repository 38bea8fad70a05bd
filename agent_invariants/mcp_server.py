"""The MCP server: `agent-invariants serve` lets agents and IDEs check traces themselves.

A stdio server on the official MCP Python SDK (the `mcp` extra: `pip install
'agent-invariants[mcp]'`). Standard output carries only JSON-RPC; diagnostics go to standard error.
Four tools, named as the Node.js tool names them, so client configurations carry over:

    agent_invariants_validate_contract {contract}                 -> {"valid": true, "contract": ...}
    agent_invariants_check_trace       {contract, events}         -> agent-invariants/check/v1
    agent_invariants_compare_traces    {contract, baseline, candidate} -> agent-invariants/compare/v1
    agent_invariants_summarize_trace   {events}                   -> the `summary` counts

Each tool's structured content is the CLI's `--format json` report for the same input (an in-memory
trace has no file, so no `trace` and no `line` keys). Its text content is that JSON (2-space
indented, first, as the Node tool returns it, for clients that do not read structured content),
then a short rendering for reading (for check and compare, the CLI's text report). Input
schemas are generated from the `Contract` and `Event` structs, their property descriptions from
the structs' field docstrings; output schemas from the report structs. The tools are read-only and deterministic: they take JSON
values, never paths, and touch neither the filesystem nor the network. Bad input (a contract that
does not validate, a bad event, `seq` not strictly increasing, more than 100,000 events) is a tool
error (`isError`) whose text names the place, such as `contract: $.rules[2].tool: ...` or
`events[3]: $.seq: ...`; the server keeps serving. The prompt `write-contract` helps a model turn
a description of an agent's rules into a v1 contract; `protect-behavior-change` (no arguments, the
Node tool's prompt) asks it to do so for the agent at hand before a change, then compare runs.

The SDK is imported only by `build_server()` and `serve()`, so this module (and the package)
imports without the extra. Unlike the Node.js tool, summarize also checks that `seq` increases.
"""
from __future__ import annotations

import copy
import functools
import importlib
import inspect
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec

from agent_invariants import __version__
from agent_invariants.errors import InputError

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

__all__ = (
    "CHANGE_PROMPT_NAME",
    "INSTRUCTIONS",
    "MAX_EVENTS",
    "PROMPT_NAME",
    "SERVER_NAME",
    "TOOLS",
    "ArgumentError",
    "ToolSpec",
    "build_server",
    "change_prompt",
    "contract_prompt",
    "run_tool",
    "sdk_available",
    "serve",
    "tool_specs",
)

SERVER_NAME = "agent-invariants"
MAX_EVENTS = 100_000
PROMPT_NAME = "write-contract"
CHANGE_PROMPT_NAME = "protect-behavior-change"

VALIDATE = "agent_invariants_validate_contract"
CHECK = "agent_invariants_check_trace"
COMPARE = "agent_invariants_compare_traces"
SUMMARIZE = "agent_invariants_summarize_trace"
TOOLS = (VALIDATE, CHECK, COMPARE, SUMMARIZE)

INSTRUCTIONS = f"""\
agent-invariants checks recorded AI-agent runs against a contract of operating rules, \
deterministically: no model judges anything, and the same input always gives the same answer.

A contract is a JSON object {{"version": 1, "name": ..., "rules": [...], "compare": {{...}}}} with \
rules such as "never call shell.*", "payments.* needs an earlier approval", "nothing after a \
stop", "at most 3 attempts per call", "no completion claim without an observed outcome". A trace \
is the list of events of one run, in order, each {{"seq": <strictly increasing integer>, "type": \
"tool.call", "tool": ..., ...}}.

- {VALIDATE}: validate a contract while writing it (the `{PROMPT_NAME}` prompt helps write one).
- {CHECK}: did this run keep the rules? Every violation names its rule and event.
- {COMPARE}: after changing the agent's model, prompt, tools or memory, what did the new run \
make worse than the old one?
- {SUMMARIZE}: counts for a run (tools used, failures, approvals, outcomes), no contract needed.

Every tool is read-only: contracts and events are passed as JSON values, never as paths, and no \
tool reads files or uses the network. At most {MAX_EVENTS:,} events per trace per call; check \
longer traces from files with the command line (`agent-invariants check --contract C --trace T`). \
Bad input is a tool error naming the place, e.g. `contract: $.rules[2].tool: ...` or \
`events[3]: $.seq: must be strictly increasing, got 2 after 5`; fix it and call again.
"""

_READ_ONLY = ("Read-only and deterministic: it reads only its arguments (never files or the network), "
              "changes nothing, and the same input always gives the same result.")
_LIMIT = (f"At most {MAX_EVENTS:,} events per trace; check longer traces from files with the command line "
          "(`agent-invariants check`), which streams them.")
_CONTRACT_ERROR = "`contract: $.rules[2].tool: ...` for the contract"


def _errors(*places: str) -> str:
    return (f"Invalid input is a tool error whose text names the place: {', '.join(places)}; "
            "a `seq` that does not strictly increase is such an error too.")

_DESCRIPTIONS = {
    VALIDATE: f"""\
Validate an agent-invariants v1 contract (the JSON object of operating rules that traces are \
checked against) and return it normalised: strings trimmed, keys in schema order, absent optional \
keys left out. Use it while writing or editing a contract, before checking traces with it. \
Returns {{"valid": true, "contract": <the normalised contract>}}, the same JSON as `agent-invariants \
validate`. An invalid contract is a tool error naming the JSON path and what is wrong, e.g. \
`contract: $.rules[3].max_attempt: unknown field (did you mean 'max_attempts'?)`. {_READ_ONLY}""",
    CHECK: f"""\
Check one recorded agent run (its events, in order) against a v1 contract. Use it to find out \
whether a run kept the agent's operating rules: no forbidden tool, no payment without approval, \
nothing after a stop, no retry storm, no "done" without observed evidence. Returns the \
`agent-invariants/check/v1` report, the same JSON as `agent-invariants check --format json` \
(without the file-only `trace` and `line` keys): `passed` (false when an error-severity rule \
broke; warnings never fail), `error_count`, `warning_count`, a `summary` of the run, one entry \
in `results` per rule, and every violation with its rule, message, `event_seq` (the event's own \
`seq`), `event_index` (0-based position) and evidence. The text content is the same report for \
reading. {_LIMIT} {_errors(_CONTRACT_ERROR, '`events[3]: $.seq: ...` for an event')} {_READ_ONLY}""",
    COMPARE: f"""\
Compare a candidate run with a baseline run of the same task under one contract and report what \
the candidate made worse. Use it after changing the agent's model, prompt, tools or memory, with \
a known-good run as the baseline. Both runs are checked; then, as the contract's `compare` \
policy sets, these are regressions: an error rule that fails only in the candidate \
(`new_rule_failure`) or in both (`contract_violation`), a tool the baseline never called \
(`new_tool`), tool calls growing beyond `max_tool_call_increase_percent` \
(`tool_call_increase`), a worse final outcome (`outcome_regression`). Returns the \
`agent-invariants/compare/v1` report, the same JSON as `agent-invariants compare --format json` \
(without the file-only `trace` and `line` keys): \
`compatible` (true when nothing regressed), both check reports, `regressions`, and \
`rule_changes` (each rule: new, fixed, still_failing or passing). {_LIMIT} \
{_errors(_CONTRACT_ERROR, '`baseline[3]: $.seq: ...` or `candidate[3]: ...` for an event')} {_READ_ONLY}""",
    SUMMARIZE: f"""\
Count what happened in one recorded agent run; no contract needed. Use it for an overview of a \
trace, e.g. before writing rules for it. Returns the same JSON as `agent-invariants summary`: \
`events`, `tool_calls`, `tool_failures` (tool results with `"ok": false`), `tools` (every tool \
called, sorted), `approvals_granted`, `outcomes_satisfied`, `outcomes_violated`, \
`completion_claims` and `final_outcome` (the verdict of the last observed outcome, or null). \
Events are validated as by the check tool, including that `seq` strictly increases (the \
Node.js tool skips that check here). {_LIMIT} {_errors('`events[3]: $.seq: ...` for an event')} \
{_READ_ONLY}""",
}

_TITLES = {
    VALIDATE: "Validate an agent-invariants contract",
    CHECK: "Check an agent trace against a contract",
    COMPARE: "Compare a candidate trace with a baseline",
    SUMMARIZE: "Summarize an agent trace",
}

_PARAMETERS = {
    VALIDATE: ("contract",),
    CHECK: ("contract", "events"),
    COMPARE: ("contract", "baseline", "candidate"),
    SUMMARIZE: ("events",),
}

_CONTRACT_DESCRIPTION = ("The contract itself as a JSON object (not a path, not a JSON string): "
                         '{"version": 1, "name": ..., "rules": [...], "compare": {...}}.')
_TRACE_DESCRIPTIONS = {
    "events": "The events of the run, in order; `seq` must strictly increase.",
    "baseline": "The events of the known-good run, in order; `seq` must strictly increase.",
    "candidate": "The events of the changed run, in order; `seq` must strictly increase.",
}

class ArgumentError(InputError):
    """A tool argument of the wrong shape: missing, unknown, or not the JSON type the schema asks for."""


class ToolSpec(NamedTuple):
    """One tool as `tools/list` shows it (schemas are plain JSON Schema dicts)."""

    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]


# ------------------------------------------------------------------------------------------------
# schemas


@functools.cache
def tool_specs() -> tuple[ToolSpec, ...]:
    """The four tools: names, descriptions, input and output schemas (computed once)."""
    from agent_invariants.report import CheckReport, CompareReport, TraceSummary

    specs = []
    for name in TOOLS:
        params = _PARAMETERS[name]
        if name == VALIDATE:
            output = _validate_output_schema()
        else:
            output = _output_schema({CHECK: CheckReport, COMPARE: CompareReport, SUMMARIZE: TraceSummary}[name])
        specs.append(ToolSpec(name, _TITLES[name], _DESCRIPTIONS[name], _input_schema(params), output))
    return tuple(specs)


def _input_schema(params: tuple[str, ...]) -> dict[str, Any]:
    from agent_invariants.contract import Contract
    from agent_invariants.events import Event

    structs = ([Contract] if "contract" in params else []) + ([Event] if params != ("contract",) else [])
    properties: dict[str, Any] = {}
    for param in params:
        if param == "contract":
            properties[param] = {"$ref": "#/$defs/Contract", "description": _CONTRACT_DESCRIPTION}
        else:
            properties[param] = {"type": "array", "items": {"$ref": "#/$defs/Event"}, "maxItems": MAX_EVENTS,
                                 "description": f"{_TRACE_DESCRIPTIONS[param]} At most {MAX_EVENTS:,} events."}
    return {"type": "object", "properties": properties, "required": list(params), "additionalProperties": False,
            "$defs": _definitions(*structs)}


def _output_schema(struct: type) -> dict[str, Any]:
    """The struct's schema with the struct itself at the root (MCP wants `"type": "object"` there)."""
    defs = _definitions(struct)
    root = defs.pop(struct.__name__)
    if defs:
        root["$defs"] = defs
    return root


def _validate_output_schema() -> dict[str, Any]:
    from agent_invariants.contract import Contract

    return {
        "title": "ValidContract",
        "description": "A contract that validated, normalised.",
        "type": "object",
        "properties": {
            "valid": {"const": True, "description": "Always true (an invalid contract is a tool error)."},
            "contract": {"$ref": "#/$defs/Contract",
                         "description": "The contract normalised: strings trimmed, keys in schema order, "
                                        "absent optional keys left out, `$schema` dropped."},
        },
        "required": ["valid", "contract"],
        "$defs": _definitions(Contract),
    }


def _definitions(*roots: type) -> dict[str, Any]:
    """`$defs` for the structs, described as the committed schemas/ are (`agent_invariants.schemas`:
    every property gets its field's docstring, then its type's description); a rule's `kind` also
    gets the rule's one-line summary, and `\\Z` anchors become ECMA-262 ones."""
    from agent_invariants.rules import RULE_KINDS
    from agent_invariants.schemas import describe_fields, portable_patterns, structs_of

    _, defs = msgspec.json.schema_components(roots, ref_template="#/$defs/{name}")
    structs: dict[str, type] = {}
    for root in roots:
        structs.update(structs_of(root))
    describe_fields(defs, structs)
    for definition in defs.values():
        kind = definition.get("properties", {}).get("kind", {})
        tag = (kind.get("enum") or [None])[0]
        if tag in RULE_KINDS:
            summary = _first_line(RULE_KINDS[tag])
            kind["description"] = f"The rule kind, `{tag}`: {summary[:1].lower()}{summary[1:]}"
    return portable_patterns(defs)


def _first_line(obj: object) -> str:
    return (inspect.getdoc(obj) or "").strip().split("\n", 1)[0]


# ------------------------------------------------------------------------------------------------
# running a tool (no SDK needed)


def run_tool(name: str, arguments: Mapping[str, Any] | None) -> tuple[dict[str, Any], str]:
    """Run one tool on its JSON arguments: (structured content, text). Raises `InputError` for
    bad input and `KeyError` for an unknown tool name."""
    handler = _HANDLERS[name]
    args = _arguments(name, arguments)
    report, text = handler(args)
    from agent_invariants.render.json import to_json

    return msgspec.json.decode(to_json(report)), text


def _arguments(name: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    params = _PARAMETERS[name]
    args = dict(arguments or {})
    for key in args:
        if key not in params:
            raise ArgumentError(f"unknown argument `{key}`; {name} takes {_listing(params)}")
    for key in params:
        if key not in args:
            raise ArgumentError(f"missing required argument `{key}`")
    if "contract" in args and not isinstance(args["contract"], dict):
        raise ArgumentError(f"contract: expected a JSON object (the contract itself, not a path or a JSON "
                            f"string), got {_json_type(args['contract'])}")
    for key in params:
        if key == "contract":
            continue
        events = args[key]
        if not isinstance(events, list):
            raise ArgumentError(f"{key}: expected an array of event objects, got {_json_type(events)}")
        if len(events) > MAX_EVENTS:
            raise ArgumentError(f"{key}: {len(events):,} events, over the limit of {MAX_EVENTS:,} per call; "
                                "check longer traces from a file with `agent-invariants check`")
    return args


def _listing(params: tuple[str, ...]) -> str:
    names = [f"`{param}`" for param in params]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
            int: "a number", float: "a number"}.get(type(value), "a value")


def _contract(value: dict[str, Any]):
    from agent_invariants.contract import load_contract

    return load_contract(value, name="contract")


def _trace(events: list[Any], name: str):
    from agent_invariants.events import EventList

    return EventList(events, name=name)


def _validate(args: dict[str, Any]) -> tuple[Any, str]:
    contract = _contract(args["contract"])
    rules = contract.rules
    lines = [f"VALID  {contract.name}", f"      {len(rules)} rule{'' if len(rules) == 1 else 's'}", ""]
    lines += [f"  {rule.id}  {rule.kind}{'  (warning)' if rule.effective_severity == 'warning' else ''}"
              for rule in rules]
    return {"valid": True, "contract": contract.to_dict()}, "\n".join(lines) + "\n"


def _check(args: dict[str, Any]) -> tuple[Any, str]:
    from agent_invariants.engine import check_trace
    from agent_invariants.render import text

    report = check_trace(_contract(args["contract"]), _trace(args["events"], "events"))
    return report, text.render(report)


def _compare(args: dict[str, Any]) -> tuple[Any, str]:
    from agent_invariants.compare import compare_traces
    from agent_invariants.render import text

    report = compare_traces(_contract(args["contract"]), _trace(args["baseline"], "baseline"),
                            _trace(args["candidate"], "candidate"))
    return report, text.render(report)


def _summarize(args: dict[str, Any]) -> tuple[Any, str]:
    from agent_invariants.summary import summarize_trace

    summary = summarize_trace(_trace(args["events"], "events"))
    lines = [
        " · ".join([_count(summary.events, "event"), _count(summary.tool_calls, "tool call"),
                    _count(summary.tool_failures, "failed tool result"),
                    _count(summary.approvals_granted, "approval granted", "approvals granted")]),
        f"tools: {', '.join(summary.tools) if summary.tools else 'none'}",
        (f"outcomes: {summary.outcomes_satisfied} satisfied, {summary.outcomes_violated} violated; "
         f"final outcome: {summary.final_outcome or 'none'}"),
        f"completion claims: {summary.completion_claims}",
    ]
    return summary, "\n".join(lines) + "\n"


def _count(count: int, noun: str, plural: str | None = None) -> str:
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


_HANDLERS: dict[str, Callable[[dict[str, Any]], tuple[Any, str]]] = {
    VALIDATE: _validate, CHECK: _check, COMPARE: _compare, SUMMARIZE: _summarize,
}


# ------------------------------------------------------------------------------------------------
# the prompt


def contract_prompt(rules: str, name: str | None = None) -> str:
    """The `write-contract` prompt: how to turn a description of an agent's rules into a v1 contract.
    The rule reference is built from each rule kind's own manual, so it never goes stale."""
    from agent_invariants.contract import ComparePolicy
    from agent_invariants.rules import RULE_KINDS

    kinds = []
    for kind, rule in RULE_KINDS.items():
        kinds.append(f"- `{kind}`: {_first_line(rule)}")
        kinds += [f"  {line}" for line in _options(rule)]
    policy = [f"- `{field}`: {spec['description']}"
              for field, spec in _definitions(ComparePolicy)["ComparePolicy"]["properties"].items()]
    named = f' Name the contract "{name}".' if name else ""
    return f"""\
Write an agent-invariants contract (version 1) that encodes the operating rules of an AI agent \
described below.{named} agent-invariants checks recorded runs of the agent against the contract, \
deterministically, in CI and through this MCP server.

<rules>
{rules.strip()}
</rules>

A contract is one JSON object:
{{"version": 1, "name": "<agent or task name>", "description": "<optional>", "rules": [<rules>], \
"compare": {{<optional compare policy>}}}}

How to write it:
- One rule per expectation: {{"id": ..., "kind": ..., <options>}}. An id is a letter or digit, \
then up to 127 of A-Z a-z 0-9 . _ -, unique in the contract. Add "description" to say why the \
rule exists; add "severity": "warning" to a rule that should be reported but never fail a run.
- Tool names, event types, scopes and outcome ids are globs: `*` matches any run of characters, \
`?` one character, everything else is literal (never a regular expression). A glob never \
matches a missing value, not even `*`.
- Unknown keys are errors: use only the options listed here.
- Encode what the description asks for, no more. If something cannot be expressed with these \
rule kinds (for example checks on tool arguments, or on time), say so rather than approximating.

Rule kinds:
{chr(10).join(kinds)}

Traces are lists of events with a strictly increasing `seq` and a `type`. Event types with a \
meaning: `tool.call` and `tool.result` (with `tool`, `call_id`, `call_signature`, `ok`), \
`approval.granted` (with `approval_id`, `approval_scope`, `approved`), `outcome.observed` (with \
`outcome_id`, `verdict`, `evidence_class`), `control.stop`, `run.completed`, `run.failed`, \
`telemetry.*`. Any event may carry `claims_completion` and `confidence`. Use the tool names and \
event types the agent really emits; if a recorded run is at hand, \
`agent_invariants_summarize_trace` lists its tools.

Compare policy (optional "compare" object; used when a changed agent's run is compared with a \
known-good run):
{chr(10).join(policy)}

Then:
1. Call `agent_invariants_validate_contract` with the contract and fix whatever it reports (the \
error names the JSON path) until it is valid.
2. If a recorded run is available, call `agent_invariants_check_trace` with the contract and its \
events, and make sure every violation is a real breach of the described rules, not a mistake in \
the contract.
3. Answer with the final contract in one JSON code block, then one line per rule saying which \
part of the description it encodes, then anything in the description you could not encode.
"""


_CHANGE_RULES = """\
The rules this agent must keep whatever changes in its model, prompt, memory or tools: which \
actions need an approval first (payments, refunds, deletions, deployments), that it does nothing \
after a stop or cancellation, which tools it must never use (shells, admin tools), how many \
attempts one call may take, that every call gets a result, and that it claims a task done only \
after an observed outcome proves it. Take the specifics from this conversation, the agent's \
instructions and its recorded runs; ask when an expectation is unclear."""


def change_prompt() -> str:
    """The `protect-behavior-change` prompt (the Node tool's, no arguments): write a contract for
    the agent at hand before changing it, then compare a run before the change with one after."""
    return contract_prompt(_CHANGE_RULES) + """
4. To check a change of model, prompt, memory or tools: record a run before it (the baseline) and \
one after it (the candidate) on the same task, call `agent_invariants_compare_traces` with the \
contract and both, and report every regression it lists. The change is safe to ship only when \
the result is compatible.
"""


def _options(rule: type) -> list[str]:
    """The lines of the `## Options` section of a rule kind's manual."""
    doc = inspect.getdoc(rule) or ""
    _, found, rest = doc.partition("## Options")
    if not found:
        return []
    return [line.rstrip() for line in rest.split("\n## ", 1)[0].strip().splitlines() if line.strip()]


# ------------------------------------------------------------------------------------------------
# the server (needs the SDK)


def sdk_available() -> bool:
    """Whether the MCP SDK (the `mcp` extra, version 2) can be imported."""
    try:
        for module in ("mcp_types", "mcp.server.lowlevel", "mcp.server.stdio"):
            importlib.import_module(module)
    except ImportError:
        return False
    return True


def build_server() -> Server:
    """The low-level MCP server with the four tools and the prompt (imports the SDK)."""
    import anyio.to_thread
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    annotations = types.ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                                        open_world_hint=False)
    tools = [types.Tool(name=spec.name, title=spec.title, description=spec.description,
                        input_schema=copy.deepcopy(spec.input_schema),
                        output_schema=copy.deepcopy(spec.output_schema),
                        annotations=annotations.model_copy(update={"title": spec.title}))
             for spec in tool_specs()]
    prompt = types.Prompt(
        name=PROMPT_NAME,
        title="Write an agent-invariants contract",
        description="Turn a plain-language description of an AI agent's operating rules into a v1 "
                    "contract, validate it with the server's tools, and explain each rule.",
        arguments=[
            types.PromptArgument(name="rules", required=True, description=(
                "The agent's rules in plain words: which tools it may or must not use, what needs "
                "approval, what must come first, what must never happen after a stop, how often it may "
                "retry, what counts as done.")),
            types.PromptArgument(name="name", required=False, description="The contract's name (optional)."),
        ],
    )

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in _HANDLERS:
            raise MCPError(code=types.INVALID_PARAMS,
                           message=f"unknown tool {params.name!r}; the tools are {', '.join(TOOLS)}")
        try:
            structured, text = await anyio.to_thread.run_sync(run_tool, params.name, params.arguments)
        except InputError as exc:
            return types.CallToolResult(content=[types.TextContent(text=str(exc))], is_error=True)
        # the JSON itself first (as the Node tool returns it, and as the MCP spec asks of tools with
        # structured content), then the readable text
        as_json = msgspec.json.format(msgspec.json.encode(structured), indent=2).decode()
        return types.CallToolResult(content=[types.TextContent(text=as_json), types.TextContent(text=text)],
                                    structured_content=structured)

    change = types.Prompt(
        name=CHANGE_PROMPT_NAME,
        title="Protect an agent's behaviour through a change",
        description="Before changing an agent's model, prompt, memory or tools: encode its approval, "
                    "stop, retry and evidence expectations as a v1 contract, then compare a run from "
                    "before the change with one from after it.",
    )

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[prompt, change])

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name == CHANGE_PROMPT_NAME:
            return types.GetPromptResult(
                description=change.description,
                messages=[types.PromptMessage(role="user", content=types.TextContent(text=change_prompt()))],
            )
        if params.name != PROMPT_NAME:
            raise MCPError(code=types.INVALID_PARAMS, message=f"unknown prompt {params.name!r}; the prompts "
                                                              f"are {PROMPT_NAME!r} and {CHANGE_PROMPT_NAME!r}")
        arguments = params.arguments or {}
        rules = arguments.get("rules", "")
        if not rules.strip():
            raise MCPError(code=types.INVALID_PARAMS,
                           message="missing required argument `rules` (the agent's rules in plain words)")
        text = contract_prompt(rules, arguments.get("name") or None)
        return types.GetPromptResult(
            description="Write an agent-invariants v1 contract from a description of the agent's rules.",
            messages=[types.PromptMessage(role="user", content=types.TextContent(text=text))],
        )

    return Server(
        SERVER_NAME,
        version=__version__,
        title="agent-invariants",
        description="Deterministic checks of recorded AI-agent runs against a contract of operating rules.",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


def serve() -> None:
    """Serve MCP on standard input and output until the client closes the connection."""
    import anyio
    from mcp.server.stdio import stdio_server

    server = build_server()

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
