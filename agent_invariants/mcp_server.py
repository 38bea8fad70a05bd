"""The MCP server: `agent-invariants serve` lets agents and IDEs check traces themselves.

A stdio server on the official MCP Python SDK (the `mcp` extra: `pip install
'agent-invariants[mcp]'`). Standard output carries only JSON-RPC; diagnostics go to standard error.
Four tools, named as the Node.js tool names them, so client configurations carry over:

    agent_invariants_validate_contract {contract}                 -> {"valid": true, "contract": ...}
    agent_invariants_check_trace       {contract, events}         -> agent-invariants/check/v1
    agent_invariants_compare_traces    {contract, baseline, candidate} -> agent-invariants/compare/v1
    agent_invariants_summarize_trace   {events}                   -> the `summary` counts

With `input_format` (and `run`), the check, compare and summarize tools take the records another
tool wrote (OTLP export requests, Agents SDK spans, LangSmith runs, MCP log lines) instead of events,
imported in memory as `check --input-format` imports a file.

Each tool's structured content is the CLI's `--format json` report for the same input (an in-memory
trace has no file, so no `trace` and no `line` keys). Its text content is that JSON (2-space
indented, first, as the Node tool returns it, for clients that do not read structured content),
then the same result rendered as text (`render.text`, as the CLI's text report). Input schemas are
generated from the `Contract` and `Event` structs, their property descriptions from the structs'
field docstrings; output schemas from the report structs (`mcp_schemas`). The tools are read-only
and deterministic: they take JSON values, never paths, and touch neither the filesystem nor the
network. Bad input (a contract that does not validate, a bad event, `seq` not strictly
increasing, more than 100,000 events, more rules times events than `MAX_RULE_EVENTS`, references
that try more earlier results than that) is a tool
error (`isError`) whose text names the place, such as `contract: $.rules[2].tool: ...` or
`events[3]: $.seq: ...`; the server keeps serving. Two prompts help write contracts
(`mcp_prompts`).

The server reads no files: a contract's `extends` may name the shipped packs
(`agent-invariants:<pack>`) but no paths, and that refusal reads the same whether a path exists
or not; no reply names a file or an absolute path.

Every request gets an answer: lines are read and checked by `mcp_wire` (limits, JSON-RPC
envelopes, the id of a request too large to decode) and served by `mcp_transport`. Tool calls run
one at a time. This module holds the tools: what they are called, what they say about themselves,
and what running one means.

The SDK is imported only by `build_server()` and `serve()` (and the modules they use), so this
module (and the package) imports without the extra. As the Node.js tool's, summarize takes events
in any order of `seq` (spec v1 §3.2, §12 point 16).
"""
from __future__ import annotations

import contextlib
import copy
import functools
import importlib
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec

from agent_invariants import __version__
from agent_invariants.errors import InputError, TraceError
from agent_invariants.jsontext import nests_too_deep, value_count
from agent_invariants.mcp_prompts import PROMPT_NAME
from agent_invariants.mcp_wire import MAX_REQUEST_BYTES
from agent_invariants.validation import json_type

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

    from agent_invariants.contract import Contract
    from agent_invariants.reader import EventList

__all__ = (
    "INSTRUCTIONS",
    "MAX_EVENTS",
    "MAX_EVIDENCE_BYTES",
    "MAX_KEPT",
    "MAX_RULE_EVENTS",
    "SERVER_NAME",
    "TOOLS",
    "ArgumentError",
    "ToolSpec",
    "build_server",
    "kept_per_rule",
    "rendered",
    "run_tool",
    "sdk_available",
    "serve",
    "tool_specs",
)

SERVER_NAME = "agent-invariants"
MAX_EVENTS = 100_000
MAX_RULE_EVENTS = 10_000_000
"""Rules times events, at most, per call (the events of both traces of a comparison together; a
rule with a large definition weighing as several, the more for a large event: `_within_budget`).
A check asks each rule about each new kind of event and hands each rule the events it wants, so
its time grows with both: 10,000 rules against 1,000 events of 1,000 different tools is about
ten seconds. Past this product a call is refused (the command line has no such limit): 100
rules with 100,000 events, or 10,000 rules with 1,000 events, still fit. It is also the most
steps a check may take (`match.budget`): the earlier results its `$from_result` references try
(one that no index serves tries each for each call checked), the items its `$contains` try
(times the tree's size), and what grows with the size of a value rather than of a rule: a
`$regex`'s search of a long text, a schema's keywords applied, an exact literal's unexpected keys,
a `distinct` key written from large args; the call stops there, after about ten seconds too."""

MAX_SECONDS = 30.0
"""The longest one call may run, whatever the steps count: a backstop for work no count foresees
(a rule's own work on one event that grows with neither rules nor events as counted). The step
budget stops the checks it knows of after about ten seconds, the same on every machine; past
this time a call is stopped where it stands and refused, which depends on the machine."""

MAX_KEPT = 10_000
"""Violations a report of one call keeps, at most, per trace: each rule keeps up to 1,000, as on
the command line, or 10,000 divided among the rules when the contract has more than ten (one each,
at least). The counts stay whole and the report says how many were left out; a response's size
then stays bounded (a thousand rules broken a thousand times each made a report of 1 GiB)."""


MAX_EVIDENCE_BYTES = 4096
"""The most bytes of JSON a violation's evidence may take in a report of this server: evidence
holds values of the trace (a whole argument, a result), and ten thousand violations each with a
large one made a report a thousand times its request."""


def kept_per_rule(contract: Contract) -> int:
    """How many violations each rule of `contract` keeps in a report of this server (MAX_KEPT in
    all, the checker's own share at a smaller scale)."""
    from agent_invariants import rules

    return rules.kept_per_rule(rules.DEFAULT_MAX_VIOLATIONS, len(contract.rules), in_all=MAX_KEPT)


VALIDATE = "agent_invariants_validate_contract"
CHECK = "agent_invariants_check_trace"
COMPARE = "agent_invariants_compare_traces"
SUMMARIZE = "agent_invariants_summarize_trace"
LINT = "agent_invariants_lint_contract"
TOOLS = (VALIDATE, CHECK, COMPARE, SUMMARIZE, LINT)

INSTRUCTIONS = f"""\
agent-invariants checks recorded AI-agent runs against a contract of operating rules, \
deterministically: no model judges anything, and the same input always gives the same answer.

A contract is a JSON object {{"version": 1, "name": ..., "rules": [...], "compare": {{...}}}} with \
rules such as "never call shell.*", "payments.* needs an earlier approval", "nothing after a \
stop", "at most 3 attempts per call", "no completion claim without an observed outcome"; \
"version": 2 adds checks of arguments ("the refund's amount is at most what the lookup of the same \
order returned": kind tool_args; `agent-invariants explain match` has the grammar), plans \
(tool_order), "the lookup of the same order came first" (precedence), counts that match the final \
report (tool_calls) and one-use approvals bound to the call's args (approval_bound). A trace \
is the list of events of one run, in order, each {{"seq": <strictly increasing integer>, "type": \
"tool.call", "tool": ..., ...}}.

- {VALIDATE}: validate a contract while writing it (the `{PROMPT_NAME}` prompt helps write one).
- {CHECK}: did this run keep the rules? Every violation names its rule and event.
- {COMPARE}: after changing the agent's model, prompt, tools or memory, what did the new run \
make worse than the old one?
- {SUMMARIZE}: counts for a run (tools used, failures, approvals, outcomes), no contract needed.
- {LINT}: what a contract's rules imply together: rules no run can pass (the check tools refuse \
a version-2 contract with such errors unless given `no_lint`), rules that can never fire.

Traces written by other tools need no conversion: give their records as the events with \
`input_format` (otel, openinference, openai-agents, langsmith, mcp-log, or auto) and, when they \
hold several runs, `run`.

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
          f"{MAX_REQUEST_BYTES >> 20} MiB of JSON per call; the report keeps at most {MAX_KEPT:,} violations "
          f"per trace (the counts stay whole), each with at most {MAX_EVIDENCE_BYTES >> 10} KiB of evidence; "
          "check longer traces from files with the command line "
          "(`agent-invariants check`), which streams them.")
_CONTRACT_ERROR = "`contract: $.rules[2].tool: ...` for the contract"


def _errors(*places: str, events: bool = True) -> str:
    seq = "; a `seq` that does not strictly increase is such an error too" if events else ""
    return f"Invalid input is a tool error whose text names the place: {', '.join(places)}{seq}."

_DESCRIPTIONS = {
    VALIDATE: f"""\
Validate an agent-invariants contract, of version 1 or 2 (the JSON object of operating rules that traces are \
checked against) and return it normalised: strings trimmed, keys in schema order, absent optional \
keys left out. Use it while writing or editing a contract, before checking traces with it. \
Returns {{"valid": true, "contract": <the normalised contract>}}, the same JSON as `agent-invariants \
validate`. An invalid contract is a tool error naming the JSON path and what is wrong, e.g. \
`contract: $.rules[3].max_attempt: unknown field (did you mean 'max_attempts'?)`. {_READ_ONLY}""",
    CHECK: f"""\
Check one recorded agent run (its events, in order) against a contract of version 1 or 2. Use it to find out \
whether a run kept the agent's operating rules: no forbidden tool, no payment without approval, \
nothing after a stop, no retry storm, no "done" without observed evidence. Returns the \
`agent-invariants/check/v1` report, the same JSON as `agent-invariants check --format json` \
(without the file-only `trace` and `line` keys): `passed` (false when an error-severity rule \
broke; warnings never fail), `error_count`, `warning_count`, a `summary` of the run, one entry \
in `results` per rule, and every violation with its rule, message, `event_seq` (the event's own \
`seq`), `event_index` (0-based position) and evidence. The text content is the same report for \
reading. {_LIMIT} {_errors(_CONTRACT_ERROR, '`events[3]: $.seq: ...` for an event')} {_READ_ONLY}""",
    COMPARE: f"""\
Compare a candidate run with a baseline run of the same task under one contract (of version 1 or 2) \
and report what \
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
Events are validated as by the check tool, but for the order of `seq`: here, as in the Node.js \
tool, they may come in any order (each `seq` an integer >= 0). {_LIMIT} \
{_errors('`events[3]: $.seq: ...` for an event')} {_READ_ONLY}""",
}

_DESCRIPTIONS[LINT] = f"""\
Lint an agent-invariants contract: find what its rules imply together, before any run is checked. \
Use it while writing or changing a contract, and when a check tool refuses one. Returns the \
`agent-invariants/lint/v1` report, the same JSON as `agent-invariants lint --format \
json`: `errors`, `warnings` and `findings`, each {{code, level, rule_ids, pointer, message}}. An \
`error` is a proof that no run can pass (e.g. `required_but_forbidden`: a rule requires a call of \
shell.exec that a deny_tool denies; `count_contradiction`, `order_contradiction`, \
`self_precedence`, `reference_to_forbidden`), made only of error-severity rules: the check and \
compare tools refuse a version-2 contract with one unless given `no_lint`. A `warning` is a rule \
that can never fire or is redundant (`dead_rule`, `shadowed_rule`, `duplicate_rule`, \
`vacuous_distinct`, `unschemaed_read`, `unrequired_subject`, `v1_trap`). `pointer` is a JSON \
pointer into the contract. `interface: true` adds every path of the final output the rules read. \
{_errors(_CONTRACT_ERROR, events=False)} {_READ_ONLY}"""

_TITLES = {
    VALIDATE: "Validate an agent-invariants contract",
    CHECK: "Check an agent trace against a contract",
    COMPARE: "Compare a candidate trace with a baseline",
    SUMMARIZE: "Summarize an agent trace",
    LINT: "Lint an agent-invariants contract",
}

_PARAMETERS = {
    VALIDATE: ("contract",),
    CHECK: ("contract", "events"),
    COMPARE: ("contract", "baseline", "candidate"),
    SUMMARIZE: ("events",),
    LINT: ("contract",),
}
_OPTIONAL = {CHECK: ("strict", "partial", "no_lint", "input_format", "run"),
             COMPARE: ("strict", "partial", "no_lint", "input_format", "run"),
             SUMMARIZE: ("input_format", "run"), LINT: ("interface",)}
"""Arguments a tool may be given: `strict`, `partial` and `no_lint` (false when absent), `input_format`
(native when absent) and `run` (none)."""

INPUT_FORMATS = ("native", "auto", "otel", "openinference", "openai-agents", "langsmith", "mcp-log")


_TRACE_DESCRIPTIONS = {
    "events": "The events of the run, in order; `seq` must strictly increase.",
    "baseline": "The events of the known-good run, in order; `seq` must strictly increase.",
    "candidate": "The events of the changed run, in order; `seq` must strictly increase.",
}
_PARAMETER_DESCRIPTIONS = {
    "contract": ("The contract itself as a JSON object (not a path, not a JSON string): "
                 '{"version": 1, "name": ..., "rules": [...], "compare": {...}} (version 2 for tool_args and '
                 'the other version-2 kinds and fields).'),
    **{param: f"{text} At most {MAX_EVENTS:,} events." for param, text in _TRACE_DESCRIPTIONS.items()},
    "strict": ("Fail on what would otherwise be `notices` in the report: a trace with no events or with a "
               "misspelt event type or field is a tool error, and a rule that checked nothing fails."),
    "partial": ("The run was cut short (the agent crashed or is still running; in a comparison, both runs are "
                "taken as cut short): what only the end of a run can decide (a required event, a result still to "
                "come, the final output, a rule that has checked nothing yet) is reported `inconclusive` and does "
                "not fail the check (nor, in a comparison, a drop of the final outcome); what already happened "
                "is judged."),
    "interface": "Also list every path of the run's final output the rules read, and whether an output_schema "
                 "rule requires it.",
    "no_lint": ("Check a version-2 contract even when lint proves that no trace can pass it (by default such a "
                "contract is refused, each lint error named as a contract error)."),
    "input_format": ("The format of the trace arguments: native (our events, the default), or the records another "
                     "tool wrote, imported as `agent-invariants check --input-format` does: otel (OTLP JSON export "
                     "requests with GenAI spans), openinference, openai-agents (the Agents SDK's exported traces "
                     "and spans), langsmith (runs), mcp-log ({ts, session, dir, msg} lines), or auto."),
    "run": ("With input_format: the run to check when the records hold several (a trace id, an MCP session); "
            "without it, records of several runs are an error that lists them."),
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


@functools.cache
def tool_specs() -> tuple[ToolSpec, ...]:
    """The five tools: names, descriptions, input and output schemas (computed once)."""
    from agent_invariants.lint.report import LintReport
    from agent_invariants.mcp_schemas import input_schema, output_schema, valid_contract_schema
    from agent_invariants.report import CheckReport, CompareReport, TraceSummary

    outputs = {CHECK: CheckReport, COMPARE: CompareReport, SUMMARIZE: TraceSummary, LINT: LintReport}
    return tuple(
        ToolSpec(name, _TITLES[name], _DESCRIPTIONS[name],
                 input_schema(_PARAMETERS[name], _PARAMETER_DESCRIPTIONS, MAX_EVENTS, _OPTIONAL.get(name, ())),
                 valid_contract_schema() if name == VALIDATE else output_schema(outputs[name]))
        for name in TOOLS)


# ------------------------------------------------------------------------------------------------
# running a tool (no SDK needed)


_STRUCTURED_DEPTH = 100
"""How deep the structured content of a reply may nest, while a contract or an event may nest 500
(and a report echoes them, in a normalised contract or a violation's evidence): the SDK's client
reads no line nested past 200 levels (the envelope takes 2; the call never returned), and checks
the content against the tool's output schema by recursion (past about 160 levels of a `$literal`,
a RecursionError). Deeper parts are a note there; the JSON text beside it holds them whole."""


def _shallow(value: Any, limit: int) -> Any:
    """`value`, each part nested deeper than `limit` levels replaced by a note saying so."""
    if type(value) not in (dict, list) or not nests_too_deep(value, limit):
        return value
    if limit <= 0:
        return "(nested too deep for the structured content: see the JSON text)"
    if isinstance(value, dict):
        return {key: _shallow(item, limit - 1) for key, item in value.items()}
    if isinstance(value, list):
        return [_shallow(item, limit - 1) for item in value]
    return value


def run_tool(name: str, arguments: Mapping[str, Any] | None) -> tuple[dict[str, Any], str]:
    """Run one tool on its JSON arguments: (structured content, text), the result as JSON data
    (the CLI's `--format json` report) and as text. Raises `InputError` for bad input and
    `KeyError` for an unknown tool name."""
    as_json, text = rendered(name, arguments)
    return msgspec.json.decode(as_json), text


def rendered(name: str, arguments: Mapping[str, Any] | None) -> tuple[str, str]:
    """`run_tool`'s result as the CLI writes it with `--format json` (numbers in JavaScript's
    form, `1e+21`, which JSON data decoded and written again would lose) and as text."""
    from agent_invariants.match.budget import TooManySteps, limited
    from agent_invariants.match.regex import linear_only
    from agent_invariants.render import json, text

    handler = _HANDLERS[name]
    state = _process_state()
    try:
        with limited(MAX_RULE_EVENTS), linear_only(), _deadline(MAX_SECONDS):
            result = handler(_arguments(name, arguments))
    except _TimedOut:
        _restore(state)
        raise ArgumentError(f"contract: checking it took more than {MAX_SECONDS:g} seconds, the limit per call; "
                            f"{_FROM_FILES[name]}") from None
    except TooManySteps as exc:
        raise ArgumentError(f"contract: checking it took more than {exc.limit:,} steps, the limit per call (a "
                            "`$from_result` reference whose `where_result`, or `where` that is no equality join on an "
                            "`$arg`, tries each earlier result of its tool for each call checked; a `$contains`, "
                            "which tries its tree on each item of an array; a rule that searches a long text, "
                            "applies a schema, or lists the keys of a large object or the values of large args for "
                            f"each event it reads); {_FROM_FILES[name]}") from None
    return json.render(result), text.render(result)


_FROM_FILES = {
    VALIDATE: "validate it from a file with `agent-invariants validate`",
    CHECK: "check it from files with `agent-invariants check`",
    COMPARE: "compare the traces from files with `agent-invariants compare`",
    SUMMARIZE: "summarize it from a file with `agent-invariants summary`",
    LINT: "lint it from a file with `agent-invariants lint`"}
"""What a call refused for its time or steps points to: the same job on the command line, which
has no such limits."""


def _rendered_or_refused(name: str, arguments: Mapping[str, Any] | None) -> tuple[str, str] | str:
    """`rendered`, or the message of the InputError it raised: returned, not raised across the
    worker thread, where the error sat in a reference cycle (the thread's future and the frames
    awaiting it) with every frame of the call, which hold its arguments. The collector seldom
    looks at such a cycle in a server, which makes few objects: a session sent the same bad
    20 MB request ten times grew by 600 MB."""
    try:
        return rendered(name, arguments)
    except InputError as exc:
        return str(exc)


def _process_state() -> tuple[bool, int, int]:
    """What a check changes for its time and puts back in a `finally` (the cyclic collector, paused
    and frozen; the recursion limit, raised for a deep schema), which `_TimedOut` may interrupt."""
    import gc

    return gc.isenabled(), sys.getrecursionlimit(), gc.get_freeze_count()


def _restore(state: tuple[bool, int, int]) -> None:
    """Put back what a stopped call left changed (`_process_state`)."""
    import gc

    enabled, limit, frozen = state
    if gc.get_freeze_count() > frozen:
        gc.unfreeze()
    if enabled:
        gc.enable()
    sys.setrecursionlimit(limit)


class _TimedOut(BaseException):
    """Raised in a call's thread when it runs past `MAX_SECONDS` (a BaseException, as
    KeyboardInterrupt is: no `except Exception` on the way may take it for an error of its own)."""


@contextlib.contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Within this block, `_TimedOut` is raised in this thread once `seconds` have passed: a timer
    thread sets it as the thread's pending exception (CPython's `PyThreadState_SetAsyncExc`),
    which the thread raises at its next Python instruction, and again every `_AGAIN` seconds
    while the block runs (raised inside a `__del__`, one is lost: meanwhile such a loss is not
    printed, as Python prints an exception no one can catch, nor handed to the hook there was).
    The block's end takes back one set but not yet raised, under the lock the timer sets it
    under, so none outlives the block."""
    import ctypes
    import threading

    thread, lock, running, ended = threading.get_ident(), threading.Lock(), [True], threading.Event()

    def stop() -> None:
        wait = seconds
        while not ended.wait(wait):
            with lock:
                if running[0]:
                    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread), ctypes.py_object(_TimedOut))
            wait = _AGAIN

    previous = sys.unraisablehook

    def unraisable(lost: Any) -> None:
        if not isinstance(lost.exc_value, _TimedOut):   # (ours is raised again within _AGAIN)
            previous(lost)

    sys.unraisablehook = unraisable
    threading.Thread(target=stop, daemon=True).start()
    try:
        yield
    finally:
        while True:   # (one set before the lock is taken may be raised here: the end is made all the same)
            try:
                with lock:
                    running[0] = False
                    ended.set()
                    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread), None)   # (NULL: none pending)
                break
            except _TimedOut:
                continue
        if sys.unraisablehook is unraisable:
            sys.unraisablehook = previous


_AGAIN = 0.05
"""Seconds between two `_TimedOut`s set in a call past its time (`_deadline`)."""


def _arguments(name: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    params = _PARAMETERS[name]
    optional = _OPTIONAL.get(name, ())
    args = dict(arguments or {})
    for key in args:
        if key not in params and key not in optional:
            raise ArgumentError(f"unknown argument `{key}`; {name} takes {_listing(params + optional)}")
    for key in params:
        if key not in args:
            raise ArgumentError(f"missing required argument `{key}`")
    for key in optional:
        if key in ("strict", "partial", "no_lint", "interface") and not isinstance(args.setdefault(key, False), bool):
            raise ArgumentError(f"{key}: expected true or false, got {json_type(args[key])}")
        if key == "input_format" and args.setdefault(key, "native") not in INPUT_FORMATS:
            raise ArgumentError(f"input_format: expected one of {', '.join(INPUT_FORMATS)}, got "
                                f"{msgspec.json.encode(args[key]).decode()[:80]}")
        if key == "run" and key in args and not isinstance(args[key], str):   # (null too, as for input_format)
            raise ArgumentError(f"run: expected a run id (a string), got {json_type(args[key])}")
        if key == "run":
            args.setdefault(key, None)
    if args.get("run") is not None:   # as the command line refuses --run without --input-format
        if args["run"] == "":
            raise ArgumentError("run: expected a run id, got an empty string")
        if args["input_format"] == "native":
            raise ArgumentError("run: chooses a run among the records of another tool, so it needs input_format "
                                "(native events are one run)")
    if "contract" in args and not isinstance(args["contract"], dict):
        raise ArgumentError(f"contract: expected a JSON object (the contract itself, not a path or a JSON "
                            f"string), got {json_type(args['contract'])}")
    for key in params:
        if key == "contract":
            continue
        events = args[key]
        if not isinstance(events, list):
            raise ArgumentError(f"{key}: expected an array of event objects, got {json_type(events)}")
        if len(events) > MAX_EVENTS:
            raise ArgumentError(f"{key}: {len(events):,} events, over the limit of {MAX_EVENTS:,} per call; "
                                "check longer traces from a file with `agent-invariants check`")
    return args


def _listing(params: tuple[str, ...]) -> str:
    names = [f"`{param}`" for param in params]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _contract(value: dict[str, Any]) -> Contract:
    """The contract argument, loaded without touching the filesystem: `extends` may name shipped
    packs (`agent-invariants:<pack>`) but no paths, so no reply can tell what files exist."""
    from agent_invariants.contract import load_contract

    return load_contract(value, name="contract", pack_paths=False)


def _trace(events: list[Any], name: str, args: dict[str, Any] | None = None, *, ordered: bool = True) -> EventList:
    """The trace argument `name`: events (their `seq` in any order, unless `ordered`), or with
    `input_format` the records of another tool, imported in memory (their one run, or `run`)."""
    from agent_invariants.reader import EventList

    if args is None or args.get("input_format", "native") == "native":
        return EventList(events, name=name, ordered=ordered)
    from agent_invariants.importers import Stream, one_run
    from agent_invariants.importers.records import SourceFile
    from agent_invariants.importers.source import ImportedTrace

    run = args.get("run")
    choose = "choose one with `run`"
    if run == "all":   # one report per call: `all` is for the command line, which gives one per run
        run, choose = None, "a tool call checks one run (`run: \"all\"` is for the command line): choose one with `run`"
    data = b"".join(_record_line(record, name, at) for at, record in enumerate(events))
    file = SourceFile.of(data, name)
    try:
        found = one_run(iter(Stream(file, args["input_format"], run=run, max_line_bytes=MAX_REQUEST_BYTES)), name,
                        choose)
    except TraceError as exc:   # record n is line n + 1 of `data`: named as the argument's item, as events are
        if exc.source != name or exc.line is None:
            raise
        raise TraceError(f"{name}[{exc.line - 1}]", None, exc.problem) from None
    if len(found) > MAX_EVENTS:
        raise ArgumentError(f"{name}: the records make {len(found):,} events, over the limit of {MAX_EVENTS:,} per "
                            "call; check longer traces from a file with `agent-invariants check --input-format`")
    return ImportedTrace(file, found, report_lines=False)   # (no line: the records came in memory)


def _record_line(record: Any, name: str, at: int) -> bytes:
    """A record given as a value, as the line of JSON it is imported from. msgspec writes an
    infinity (a number past any double in the request, such as 1e400) as `null`, which would
    change what the record says: such a record is refused, as a file's is."""
    import json

    line = msgspec.json.encode(record)
    if b"null" in line:   # (a real null, or an infinity written as one: the json module tells them apart)
        try:
            json.dumps(record, allow_nan=False)
        except ValueError:
            raise TraceError(f"{name}[{at}]", None, "holds a number beyond any double (such as 1e400), which the "
                                                    "import cannot carry") from None
    return line + b"\n"


def _within_budget(contract: Any, *traces: tuple[str, list[Any]]) -> Any:
    """`contract`, unless checking it against the traces is more work than a call may take: rules
    times events, the events of all traces together. A rule with a large definition (a match tree
    or a schema of thousands of nodes, tried node by node on the values of an event it reads: a
    `find` on each item of a result, an exact mode on each key) weighs as `_weight` plain rules for
    each event, times `_size` of it. (A small rule's `$contains` is counted as the check goes:
    `match.budget`.)"""
    weights = [_weight(rule) for rule in contract.rules]
    plain = weights.count(1)
    large = sum(weights) - plain
    count = sum(len(events) for _, events in traces)
    cost = plain * count + (large * sum(_size(event) for _, events in traces for event in events) if large else 0)
    if cost > MAX_RULE_EVENTS:
        names = " and ".join(name for name, _ in traces)
        weighing = f" (weighing as {cost:,} for the size of their definitions and of the events)" if large else ""
        raise ArgumentError(
            f"{names}: {len(weights):,} rule{'' if len(weights) == 1 else 's'} times {count:,} "
            f"event{'' if count == 1 else 's'}{weighing} is over the limit of {MAX_RULE_EVENTS:,} per call; check it "
            "from files with `agent-invariants check`")
    return contract


def _size(event: Any) -> int:
    """How many small events an event weighs as, for a rule with a large definition: 1, and one
    more for each JSON value of it past the first `_FREE_NODES` (ten rules whose `find` of 1,248
    nodes is tried on each of a result's 200,000 items ran four minutes)."""
    return 1 + max(0, value_count(event) - _FREE_NODES)


def _weight(rule: Any) -> int:
    """How many plain rules a rule's checks of an event cost, at most, about: 1, and two more for
    each JSON node of its definition past the first `_FREE_NODES` (a rule whose match tree of 8,400
    nodes tries every `$any_of` branch took 17 to 35 ms an event, where a plain rule takes about a
    microsecond)."""
    return 1 + 2 * max(0, value_count(rule.to_dict()) - _FREE_NODES)


_FREE_NODES = 16
"""The JSON nodes of a rule's definition that cost no more than a plain rule's."""


def _linted(contract: Contract, args: dict[str, Any]) -> Contract:
    """The contract, unless lint refuses it (a version-2 contract no trace can pass; `no_lint` skips)."""
    from agent_invariants.lint import refuse_unpassable

    return contract if args["no_lint"] else refuse_unpassable(contract, "contract", skip="no_lint")


def _validate(args: dict[str, Any]) -> Any:
    return _contract(args["contract"])


def _check(args: dict[str, Any]) -> Any:
    from agent_invariants.api import check_trace

    contract = _within_budget(_linted(_contract(args["contract"]), args), ("events", args["events"]))
    report = check_trace(contract, _trace(args["events"], "events", args), strict=args["strict"],
                         partial=args["partial"], max_violations=kept_per_rule(contract))
    return _strictly(_small_evidence(report), args)


def _compare(args: dict[str, Any]) -> Any:
    from agent_invariants.api import compare_traces

    contract = _within_budget(_linted(_contract(args["contract"]), args), ("baseline", args["baseline"]),
                              ("candidate", args["candidate"]))
    report = compare_traces(contract, _trace(args["baseline"], "baseline", args),
                            _trace(args["candidate"], "candidate", args), strict=args["strict"],
                            partial=args["partial"], max_violations=kept_per_rule(contract))
    _small_evidence(report.baseline)
    _small_evidence(report.candidate)
    return _strictly(report, args)


def _small_evidence(report: Any) -> Any:
    """The check report with each violation's evidence within MAX_EVIDENCE_BYTES (a whole
    argument array, say, in each of 10,000 violations). Larger evidence is cut short as the
    report cuts evidence past its total (`"… 1990 more"`; a version-1 kind's, a contract's long
    list of patterns, keeping the order of its keys); what is still too large is said, not
    returned."""
    from agent_invariants._js import js_number_hook
    from agent_invariants.match.canonical import evidence_cut
    from agent_invariants.rules import of_version_2

    def size(evidence: Any) -> int:
        return len(msgspec.json.encode(evidence, enc_hook=js_number_hook))   # (as the report writes it)

    for violation in report.violations:
        if violation.evidence is msgspec.UNSET:
            continue
        whole = size(violation.evidence)
        if whole <= MAX_EVIDENCE_BYTES:
            continue
        short = evidence_cut(violation.evidence, keep_order=not of_version_2(violation.rule_kind))
        violation.evidence = short if size(short) <= MAX_EVIDENCE_BYTES else \
            {"left_out": f"evidence of {whole:,} bytes, over the {MAX_EVIDENCE_BYTES:,} this server returns; "
                         "check from files with the command line for it"}
    return report


def _strictly(report: Any, args: dict[str, Any]) -> Any:
    """The report, unless `strict` refuses a trace (named by its argument) for a problem of its
    own (`notices`)."""
    from agent_invariants.notices import strict_problem
    from agent_invariants.report import CompareReport

    if not args["strict"]:
        return report
    named = [("baseline", report.baseline), ("candidate", report.candidate)] if isinstance(report, CompareReport) \
        else [("events", report)]
    problems = [problem for name, check in named if (problem := strict_problem(name, check))]
    if problems:
        raise InputError("; ".join(problems))
    return report


def _summarize(args: dict[str, Any]) -> Any:
    from agent_invariants.api import summarize_trace

    return summarize_trace(_trace(args["events"], "events", args, ordered=False))


def _lint(args: dict[str, Any]) -> Any:
    from agent_invariants.lint import lint_contract

    return lint_contract(_contract(args["contract"]), with_interface=args["interface"])


_HANDLERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    VALIDATE: _validate, CHECK: _check, COMPARE: _compare, SUMMARIZE: _summarize, LINT: _lint,
}


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
    """The low-level MCP server with the four tools and the two prompts (imports the SDK)."""
    import anyio.to_thread
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    from agent_invariants.mcp_prompts import prompt_answer, prompt_list

    annotations = types.ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                                        open_world_hint=False)
    tools = [types.Tool(name=spec.name, title=spec.title, description=spec.description,
                        input_schema=copy.deepcopy(spec.input_schema),
                        output_schema=copy.deepcopy(spec.output_schema),
                        annotations=annotations.model_copy(update={"title": spec.title}))
             for spec in tool_specs()]
    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    one_at_a_time = anyio.CapacityLimiter(1)   # calls are CPU-bound: running them together only adds memory

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in _HANDLERS:
            raise MCPError(code=types.INVALID_PARAMS,
                           message=f"unknown tool {params.name!r}; the tools are {', '.join(TOOLS)}")
        try:
            answer = await anyio.to_thread.run_sync(_rendered_or_refused, params.name, params.arguments,
                                                    limiter=one_at_a_time)
        except Exception as exc:  # noqa: BLE001 - a bug: one line on stderr, an error reply, and serving goes on
            print(f"agent-invariants: internal error in {params.name}: {type(exc).__name__}: {exc}",
                  file=sys.stderr)
            raise MCPError(code=types.INTERNAL_ERROR,
                           message=f"internal error in {params.name} ({type(exc).__name__})") from None
        if isinstance(answer, str):
            return types.CallToolResult(content=[types.TextContent(text=answer)], is_error=True)
        # the JSON itself first (as the Node tool returns it, and as the MCP spec asks of tools with
        # structured content), then the readable text
        as_json, text = answer
        structured = msgspec.json.decode(as_json)
        return types.CallToolResult(content=[types.TextContent(text=as_json.removesuffix("\n")),
                                             types.TextContent(text=text)],
                                    structured_content=_shallow(structured, _STRUCTURED_DEPTH))

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=prompt_list())

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        answer: types.GetPromptResult = prompt_answer(params.name, params.arguments)
        return answer

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
    from agent_invariants.mcp_transport import serve_stdio

    serve_stdio(build_server())
