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
the structs' field docstrings; output schemas from the report structs. The tools are read-only
and deterministic: they take JSON values, never paths, and touch neither the filesystem nor the
network. Bad input (a contract that does not validate, a bad event, `seq` not strictly
increasing, more than 100,000 events, more rules times events than `MAX_RULE_EVENTS`) is a tool
error (`isError`) whose text names the place, such as `contract: $.rules[2].tool: ...` or
`events[3]: $.seq: ...`; the server keeps serving. The prompt `write-contract` helps a model turn
a description of an agent's rules into a v1 contract; `protect-behavior-change` (no arguments, the
Node tool's prompt) asks it to do so for the agent at hand before a change, then compare runs.

The server reads no files: a contract's `extends` may name the shipped packs
(`agent-invariants:<pack>`) but no paths, and that refusal reads the same whether a path exists
or not; no reply names a file or an absolute path.

Every request gets an answer. The wire is read here, not by the SDK's stdio transport, which
drops lines it cannot decode: a line that is not JSON is answered `-32700 Parse error`, one that
is not a JSON-RPC 2.0 message (a batch, no `"jsonrpc": "2.0"`, an `id` that is neither a string
nor an integer, `params` that is not an object) `-32600 Invalid Request`, with the request's id
when it can be read, else `null`. A request is at most `MAX_REQUEST_BYTES` (32 MiB) of JSON,
nests at most `MAX_REQUEST_NESTING` (504) levels deep, so that events and contracts nest as deep
as in files (500 levels, counted from the event or the contract), and holds at most
`MAX_REQUEST_VALUES` (4,000,000) commas, colons and opening brackets, which bounds the objects
that decoding it builds (they take up to 20 times the size of their JSON); past a limit it is
answered `-32600` without being decoded (its id read from its first 64 KiB), and a line past the
size limit is never held in memory whole. Lone surrogate escapes (`"\\ud800"`) read as U+FFFD,
as in trace files, so every reply is valid UTF-8. Tool calls run one at a time. When the client
closes standard input, the server answers the requests it has read, then exits; if the client
stops reading, it exits.

The SDK is imported only by `build_server()`, `serve()` and `serve_connection()`, so this module
(and the package) imports without the extra. Unlike the Node.js tool, summarize also checks that
`seq` increases.
"""
from __future__ import annotations

import collections
import contextlib
import copy
import functools
import gc
import importlib
import inspect
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec

from agent_invariants import __version__
from agent_invariants._js import replace_lone_surrogates
from agent_invariants.errors import InputError
from agent_invariants.events import MAX_NESTING, too_deep_at

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

__all__ = (
    "CHANGE_PROMPT_NAME",
    "INSTRUCTIONS",
    "INTERNAL_ERROR",
    "INVALID_REQUEST",
    "MAX_EVENTS",
    "MAX_RULE_EVENTS",
    "MAX_REQUEST_BYTES",
    "MAX_REQUEST_NESTING",
    "MAX_REQUEST_VALUES",
    "PARSE_ERROR",
    "PROMPT_NAME",
    "SERVER_NAME",
    "TOOLS",
    "ArgumentError",
    "Oversized",
    "RequestError",
    "ToolSpec",
    "build_server",
    "change_prompt",
    "contract_prompt",
    "read_message",
    "run_tool",
    "sdk_available",
    "serve",
    "serve_connection",
    "tool_specs",
)

SERVER_NAME = "agent-invariants"
MAX_EVENTS = 100_000
MAX_REQUEST_BYTES = 32 << 20   # about 100,000 events of 300 bytes; past it, use the command line
MAX_REQUEST_NESTING = MAX_NESTING + 4   # an event in a request: {params: {arguments: {events: [event]}}}
MAX_REQUEST_VALUES = 4_000_000   # each takes up to ~60 bytes decoded: 100,000 events of up to 40 values each
MAX_RULE_EVENTS = 10_000_000
"""Rules times events of one trace, at most, per call. A check asks each rule about each new kind
of event and hands each rule the events it wants, so its time grows with both: 10,000 rules
against 1,000 events of 1,000 different tools is about ten seconds. Past this product a call is
refused (the command line has no such limit): 100 rules with 100,000 events, or 10,000 rules
with 1,000 events, still fit."""
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
tool reads files or uses the network (`extends` may name shipped packs, \
`agent-invariants:<pack>`, but no paths). At most {MAX_EVENTS:,} events per trace, \
{MAX_RULE_EVENTS:,} rules times events, and {MAX_REQUEST_BYTES >> 20} MiB of JSON per call; check \
longer traces from files with the command line (`agent-invariants check --contract C --trace T`). \
Bad input is a tool error naming the place, e.g. `contract: $.rules[2].tool: ...` or \
`events[3]: $.seq: must be strictly increasing, got 2 after 5`; fix it and call again.
"""

_READ_ONLY = ("Read-only and deterministic: it reads only its arguments (never files or the network), "
              "changes nothing, and the same input always gives the same result.")
_LIMIT = (f"At most {MAX_EVENTS:,} events per trace, {MAX_RULE_EVENTS:,} rules times events and "
          f"{MAX_REQUEST_BYTES >> 20} MiB of JSON per call; "
          "check longer traces from files with the command line "
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
    """The contract argument, loaded without touching the filesystem: `extends` may name shipped
    packs (`agent-invariants:<pack>`) but no paths, so no reply can tell what files exist."""
    from agent_invariants.contract import load_contract

    return load_contract(value, name="contract", pack_paths=False)


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


def _within_budget(contract: Any, *traces: tuple[str, list[Any]]) -> Any:
    """`contract`, unless checking it against one of the traces is more work than a call may take."""
    for name, events in traces:
        if len(contract.rules) * len(events) > MAX_RULE_EVENTS:
            raise ArgumentError(
                f"{name}: {len(contract.rules):,} rules times {len(events):,} events is over the limit of "
                f"{MAX_RULE_EVENTS:,} per call; check it from files with `agent-invariants check`")
    return contract


def _check(args: dict[str, Any]) -> tuple[Any, str]:
    from agent_invariants.engine import check_trace
    from agent_invariants.render import text

    contract = _within_budget(_contract(args["contract"]), ("events", args["events"]))
    report = check_trace(contract, _trace(args["events"], "events"))
    return report, text.render(report)


def _compare(args: dict[str, Any]) -> tuple[Any, str]:
    from agent_invariants.compare import compare_traces
    from agent_invariants.render import text

    contract = _within_budget(_contract(args["contract"]), ("baseline", args["baseline"]),
                              ("candidate", args["candidate"]))
    report = compare_traces(contract, _trace(args["baseline"], "baseline"), _trace(args["candidate"], "candidate"))
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
# the wire: one JSON-RPC message per line (no SDK needed)


PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603
_CHUNK = 1 << 16
_HEAD = 1 << 16


class RequestError(Exception):
    """A line that is no message the server can hand on; `reply()` is the JSON-RPC error
    response that answers it (with the request's id when one can be read, else null)."""

    def __init__(self, code: int, message: str, request_id: int | str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id

    def reply(self) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": self.request_id, "error": {"code": self.code, "message": self.message}}


class Oversized(NamedTuple):
    """A line longer than the limit: its first `_HEAD` bytes at most (to find its id), its size
    and the limit."""

    head: bytes
    size: int
    limit: int


class _Lines:
    """The lines of what `read(size)` returns (without their newline), none held longer than
    `limit` bytes: the rest of a longer line is read and dropped, and it comes out `Oversized`."""

    def __init__(self, read: Callable[[int], bytes], limit: int = MAX_REQUEST_BYTES) -> None:
        self._read = read
        self._limit = limit
        self._buffer = bytearray()

    def next(self) -> bytes | Oversized | None:
        """The next line, or None at the end of input."""
        scanned = 0
        while True:
            end = self._buffer.find(b"\n", scanned)
            if end > self._limit or (end < 0 and len(self._buffer) > self._limit):
                return self._skip_line()
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[:end + 1]
                return line
            scanned = len(self._buffer)
            chunk = self._read(_CHUNK)
            if not chunk:
                line = bytes(self._buffer)
                self._buffer.clear()
                return line or None
            self._buffer += chunk

    def _skip_line(self) -> Oversized:
        end = self._buffer.find(b"\n")
        if end >= 0:
            head = bytes(self._buffer[:min(end, _HEAD)])
            del self._buffer[:end + 1]
            return Oversized(head, end, self._limit)
        head, size = bytes(self._buffer[:_HEAD]), len(self._buffer)
        self._buffer.clear()
        while chunk := self._read(_CHUNK):
            end = chunk.find(b"\n")
            if end >= 0:
                self._buffer += chunk[end + 1:]
                return Oversized(head, size + end, self._limit)
            size += len(chunk)
        return Oversized(head, size, self._limit)


_DECODER = msgspec.json.Decoder(float_hook=float)   # 1e400 is valid JSON: read it as inf, as JSON.parse does


def read_message(line: bytes | Oversized) -> dict[str, Any] | None:
    """One line as a JSON-RPC message object (None for a blank line), its envelope checked.
    Raises `RequestError` for a line too long or too deep (`Invalid Request`), one that is not
    JSON (`Parse error`) or not a JSON-RPC 2.0 message (`Invalid Request`). Lone surrogate
    escapes are read as U+FFFD, as in traces, so every string can be written back as UTF-8."""
    if isinstance(line, Oversized):
        raise RequestError(INVALID_REQUEST, f"Invalid Request: {line.size:,} bytes, over the limit of "
                                             f"{line.limit:,} per request", _top_level_id(line.head))
    if not line.strip(b" \t\r"):   # JSON's whitespace (a CRLF line ends in \r)
        return None
    data = replace_lone_surrogates(line)
    if _too_many_values(data):   # first: counting is quick, and it bounds the depth scan's time too
        raise RequestError(INVALID_REQUEST, f"Invalid Request: more than {MAX_REQUEST_VALUES:,} commas, colons "
                                            "and opening brackets (the limit per request)", _top_level_id(data[:_HEAD]))
    if too_deep_at(data, MAX_REQUEST_NESTING) is not None:
        raise _too_deep(data)
    try:
        with _collector_paused():
            message = _DECODER.decode(data)
    except msgspec.DecodeError as exc:
        raise RequestError(PARSE_ERROR, f"Parse error: {_syntax_problem(exc)}") from None
    except RecursionError:   # not below the limit, but a caller deep in its own stack might see it
        raise _too_deep(data) from None
    _check_envelope(message)
    return message


def _too_many_values(data: bytes) -> bool:
    """Whether the JSON `data` may hold more than `MAX_REQUEST_VALUES` values and keys, counted
    as its commas, colons and opening brackets (in strings too: counting only those outside
    strings costs a scan in Python). Decoding builds objects many times larger than their JSON
    (`[],` is 3 bytes, an empty list 56 plus its slot), so they are counted before decoding."""
    return sum(data.count(char) for char in (b",", b":", b"[", b"{")) > MAX_REQUEST_VALUES


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Decoded JSON holds no cycles, but building millions of lists and dicts would start the
    cyclic garbage collector over and over (two thirds of the time of a large request)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _too_deep(data: bytes) -> RequestError:
    return RequestError(INVALID_REQUEST, f"Invalid Request: nested more than {MAX_REQUEST_NESTING} levels deep",
                        _top_level_id(data[:_HEAD]))


def _syntax_problem(exc: msgspec.DecodeError) -> str:
    text = str(exc).removeprefix("JSON is malformed: ")
    found = re.search(r"\(byte (\d+)\)", text)
    if found:
        text = text.replace(found.group(0), f"(column {int(found.group(1)) + 1})")
    return "the JSON ends before the value is complete" if text == "Input data was truncated" else text


def _check_envelope(message: Any) -> None:
    """A JSON-RPC 2.0 request, notification or response, or `RequestError` (MCP sends no batches)."""
    if isinstance(message, list):
        raise RequestError(INVALID_REQUEST, "Invalid Request: batches are not supported; send one "
                                            "JSON-RPC message per line" if message else
                                            "Invalid Request: an empty array")
    if not isinstance(message, dict):
        raise RequestError(INVALID_REQUEST, f"Invalid Request: expected a JSON-RPC message object, got "
                                            f"{_json_type(message)}")
    request_id = _usable_id(message.get("id"))
    if message.get("jsonrpc") != "2.0":
        raise RequestError(INVALID_REQUEST, 'Invalid Request: $.jsonrpc: must be "2.0"', request_id)
    if "id" in message and request_id is None:
        raise RequestError(INVALID_REQUEST, "Invalid Request: $.id: must be a string or an integer")
    if "method" in message:
        if not isinstance(message["method"], str):
            raise RequestError(INVALID_REQUEST, "Invalid Request: $.method: must be a string", request_id)
        if message.get("params") is not None and not isinstance(message["params"], dict):
            raise RequestError(INVALID_REQUEST, "Invalid Request: $.params: must be an object", request_id)
    elif request_id is None or ("result" in message) == ("error" in message):
        raise RequestError(INVALID_REQUEST, "Invalid Request: $: neither a request (no `method`) nor a "
                                            "response (`id` and one of `result` and `error`)", request_id)
    elif "result" in message and not isinstance(message["result"], dict):
        raise RequestError(INVALID_REQUEST, "Invalid Request: $.result: must be an object", request_id)
    elif "error" in message and not _is_error_object(message["error"]):
        raise RequestError(INVALID_REQUEST, "Invalid Request: $.error: must be an object with an integer "
                                            "`code` and a string `message`", request_id)


def _is_error_object(error: Any) -> bool:
    return (isinstance(error, dict) and isinstance(error.get("code"), int) and not isinstance(error["code"], bool)
            and isinstance(error.get("message"), str))


def _usable_id(value: Any) -> int | str | None:
    """A request id as MCP allows it (a string or an integer), else None."""
    return value if isinstance(value, (int, str)) and not isinstance(value, bool) else None


# a string (one cut off at the end of the data runs to the end), a punctuator, or a bare value
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}:,]|[^\s\[\]{}:,"]+')


def _top_level_id(data: bytes) -> int | str | None:
    """The `id` of the JSON object that `data` starts (the start of a line too long or too deep
    to decode), if it stands in `data` at the object's top level; else None."""
    tokens = (token.group() for token in _TOKEN.finditer(data))
    if next(tokens, None) != b"{":
        return None
    depth, recent = 1, (b"", b"")
    for text in tokens:
        if depth == 1 and recent == (b'"id"', b":"):
            try:
                return _usable_id(msgspec.json.decode(replace_lone_surrogates(text)))
            except msgspec.DecodeError:
                return None
        if text in (b"{", b"["):
            depth += 1
        elif text in (b"}", b"]"):
            depth -= 1
            if not depth:
                return None
        elif depth == 1:
            recent = (recent[1], text)
    return None


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

    one_at_a_time = anyio.CapacityLimiter(1)   # calls are CPU-bound: running them together only adds memory

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in _HANDLERS:
            raise MCPError(code=types.INVALID_PARAMS,
                           message=f"unknown tool {params.name!r}; the tools are {', '.join(TOOLS)}")
        try:
            structured, text = await anyio.to_thread.run_sync(run_tool, params.name, params.arguments,
                                                              limiter=one_at_a_time)
        except InputError as exc:
            return types.CallToolResult(content=[types.TextContent(text=str(exc))], is_error=True)
        except Exception as exc:  # noqa: BLE001 - a bug: one line on stderr, an error reply, and serving goes on
            print(f"agent-invariants: internal error in {params.name}: {type(exc).__name__}: {exc}",
                  file=sys.stderr)
            raise MCPError(code=types.INTERNAL_ERROR,
                           message=f"internal error in {params.name} ({type(exc).__name__})") from None
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
    """Serve MCP on standard input and output until the client closes its end (and every request
    read has its answer)."""
    import anyio

    server = build_server()
    with _claimed_stdio() as (wire_in, wire_out):
        anyio.run(serve_connection, server, _reader(wire_in), _writer(wire_out))


@contextlib.contextmanager
def _claimed_stdio() -> Iterator[tuple[int, int]]:
    """Standard input and output for JSON-RPC alone: while serving, the wire is on private
    descriptors, fd 0 reads nothing and fd 1 writes to standard error, so nothing else in the
    process (a stray print, a library's warning) can take a request or corrupt a reply."""
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    nothing = os.open(os.devnull, os.O_RDONLY)
    os.dup2(nothing, 0)
    os.close(nothing)
    os.dup2(2, 1)
    try:
        yield wire_in, wire_out
    finally:
        sys.stdout.flush()
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
        os.close(wire_in)
        os.close(wire_out)


def _reader(fd: int) -> Callable[[int], bytes]:
    """Read up to `size` bytes from `fd`; a descriptor that fails to read ends the input."""

    def read(size: int) -> bytes:
        try:
            return os.read(fd, size)
        except OSError:
            return b""
    return read


def _writer(fd: int) -> Callable[[bytes], None]:
    """Write all of `data` to `fd` (a pipe may take it in parts)."""

    def write(data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    return write


async def serve_connection(server: Server, read: Callable[[int], bytes], write: Callable[[bytes], None], *,
                           max_request_bytes: int = MAX_REQUEST_BYTES) -> None:
    """Serve one connection: JSON-RPC lines from `read(size)` (bytes; empty at the end), replies
    to `write(line)`. Both block, so they run in worker threads. Lines the SDK cannot take are
    answered here (see `read_message`; a line over `max_request_bytes` is never held whole); the
    rest go to `server`. At the end of input the
    connection stays open until every request read has been answered: the SDK would cancel the
    calls still running. A client that stops reading (a broken pipe) ends the connection."""
    import anyio
    from mcp.shared.message import SessionMessage

    to_server, server_in = anyio.create_memory_object_stream[Any](0)
    server_out, from_server = anyio.create_memory_object_stream[SessionMessage](0)
    unanswered = _Unanswered()
    async with anyio.create_task_group() as group:
        group.start_soon(_read_requests, _Lines(read, max_request_bytes), to_server, server_out.clone(), unanswered)
        group.start_soon(_write_replies, from_server, write, unanswered, group.cancel_scope)
        async with server_out:
            await server.run(server_in, server_out, server.create_initialization_options())


class _Unanswered:
    """The requests handed to the SDK and not answered yet (by id, counted: ids may repeat)."""

    def __init__(self) -> None:
        self._ids: collections.Counter[str] = collections.Counter()
        self._changed: Any = None

    def add(self, request_id: int | str) -> None:
        self._ids[str(request_id)] += 1

    def settle(self, request_id: object) -> None:
        """Answered, or cancelled by the client (then the SDK sends no answer)."""
        key = str(request_id)
        if key in self._ids:
            self._ids[key] -= 1
            if not self._ids[key]:
                del self._ids[key]
        if self._changed is not None:
            self._changed.set()

    async def all_settled(self) -> None:
        import anyio

        while self._ids:
            self._changed = anyio.Event()
            await self._changed.wait()


async def _read_requests(lines: _Lines, to_server: Any, replies: Any, unanswered: _Unanswered) -> None:
    """Hand each line to the SDK as a message, or answer it with its error; at the end of input,
    wait for the answers, then close the SDK's input (which ends the connection)."""
    import anyio
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    async with to_server, replies:
        while (item := await anyio.to_thread.run_sync(_next_message, lines, abandon_on_cancel=True)) is not _END:
            if isinstance(item, RequestError):
                await replies.send(SessionMessage(types.jsonrpc_message_adapter.validate_python(item.reply())))
                continue
            if isinstance(item, types.JSONRPCRequest):
                unanswered.add(item.id)
            elif isinstance(item, types.JSONRPCNotification) and item.method == "notifications/cancelled":
                unanswered.settle((item.params or {}).get("requestId"))
            await to_server.send(SessionMessage(item))
        await unanswered.all_settled()


_END = object()


def _next_message(lines: _Lines) -> Any:
    """The next message as the SDK's model, a `RequestError` answering the line, or `_END`."""
    import mcp_types as types
    import pydantic

    while True:
        line = lines.next()
        if line is None:
            return _END
        try:
            message = read_message(line)
            if message is None:
                continue
            try:
                return types.jsonrpc_message_adapter.validate_python(message, by_name=False)
            except pydantic.ValidationError:   # what `_check_envelope` lets through, the SDK takes
                raise RequestError(INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message",
                                   _usable_id(message.get("id"))) from None
        except RequestError as error:
            return error


async def _write_replies(from_server: Any, write: Callable[[bytes], None], unanswered: _Unanswered,
                         scope: Any) -> None:
    """Write each reply as one line; a reply that cannot be written as JSON becomes an internal
    error for its request. A closed pipe ends the connection quietly."""
    import anyio
    import mcp_types as types

    async with from_server:
        async for session_message in from_server:
            message = session_message.message
            data = _encoded(message)
            try:
                await anyio.to_thread.run_sync(write, data + b"\n")
            except OSError:   # the client has gone
                scope.cancel()
                return
            if isinstance(message, (types.JSONRPCResponse, types.JSONRPCError)):
                unanswered.settle(message.id)


def _encoded(message: Any) -> bytes:
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True).encode()
    except ValueError:   # pydantic's serialization error: too deep, or not UTF-8
        request_id = getattr(message, "id", None)
        problem = RequestError(INTERNAL_ERROR, "Internal error: the reply could not be written as JSON",
                               request_id)
        return msgspec.json.encode(problem.reply())
