"""`langsmith`: LangSmith runs (LangChain, LangGraph), one root run per line with its `child_runs`
nested, or every run on its own line (§7, §10 points 26-28, 31, 36).

- the root (`parent_run_id` null): `run.start`, then `run.completed` with `output` (its
  `outputs.output`, else its `outputs`), or `run.failed` {status: failed, reason} when it has an
  `error`; a root that is a tool or model run is also read as one (below);
- `run_type: tool`: `tool.call` {tool: `name`, args: `inputs` (`inputs.input` when it is JSON text
  of an object)} at its start, `tool.result` at its end;
- `run_type: llm` with text in its reply: `agent.message` {data.text} at its end;
- a run named after one of our event types: that event, its fields from `extra.metadata.ainv`;
- `chain` runs hold the others; runs of other types (retriever, embedding, prompt, parser…) are
  skipped, and counted.

A run belongs to the trace its `trace_id` names; without one, to its record's top run's (a nested
child), else to its parent's when that was read before it, else it is a root. A run written as it
was created (no `end_time`) and again as it ended is one run, the later record's fields winning;
the update may leave out (or hold as null) the name, start time, parent and trace, as the SDK's
`Client.update_run` writes one, and is the run's trace's as an update of a run read before.

A tool's result is `outputs.output.content` when `outputs.output` is a ToolMessage (`type: "tool"`),
else `outputs.output` when it is the only key, else the outputs themselves (the SDK's `@traceable`
keeps a returned dict so, and wraps anything else as `{"output": ...}`); text is parsed as JSON
when it is JSON. `ok` is false when the run has an `error` or the ToolMessage's `status` is
`error`. Its call id is the ToolMessage's `tool_call_id`, else `extra.tool_call_id`, else the id
the model gave the call (the `tool_calls` of the nearest earlier `llm` run under the same parent
or an ancestor, by tool name and order), else the run id. Calls
and assistant text are read from an `llm` run's outputs only (its generations, or the `choices` of
an OpenAI chat completion): its inputs repeat the whole conversation.

Runs are ordered by `dotted_order` among runs of the same instant; times are kept to the microsecond.
"""
from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from typing import Any

import msgspec

from agent_invariants.errors import TraceError
from agent_invariants.importers.common import (
    END,
    FIRST,
    LAST,
    ModelTurn,
    Timeline,
    as_object,
    duration_ms,
    error_text,
    iso_nanos,
    merged_records,
    parse_args,
    parse_result,
    tool_message,
)
from agent_invariants.importers.profile import Candidate, convention_event
from agent_invariants.importers.records import Record, string_field
from agent_invariants.importers.run import Context, ImportedRun, Runs, add_record, new_list
from agent_invariants.importers.sniff import refuse_other

__all__ = ("FORMAT", "RUN_IDS", "runs")

FORMAT = "langsmith"


class _Run:
    """One run of a trace, flattened out of its parent."""

    __slots__ = ("depth", "end", "ended", "line", "order", "parent", "path", "raw", "start")

    def __init__(self, raw: dict[str, Any], depth: int, line: int, order: int, start: int, end: int,
                 path: str) -> None:
        self.raw, self.depth, self.line, self.order, self.start, self.end = raw, depth, line, order, start, end
        self.path = path
        self.parent: str | None = raw.get("parent_run_id") if isinstance(raw.get("parent_run_id"), str) else None
        self.ended = raw.get("end_time") is not None   # a run still going when it was exported has none


def runs(records: Iterator[Record], context: Context) -> Iterator[ImportedRun]:
    traces: Runs[list[_Run]] = Runs(context, new_list)
    owners: dict[str, str] = {}   # run id -> its trace id, for the traces still open
    order = 0
    for record in records:
        top: str | None = None
        for raw, depth, path in _flattened(record, context.file):
            trace_id = _trace_of(raw, top, owners)
            top = top or trace_id
            if not context.wants(trace_id):
                context.seen(trace_id)
                continue
            # (an update may leave its start out: `_Trace` refuses a run that no record starts)
            start = _time(raw.get("start_time"), f"{path}.start_time", context.file, record.line, 0)
            end = _time(raw.get("end_time"), f"{path}.end_time", context.file, record.line, start)
            add_record(traces.get(trace_id, record.line), _Run(raw, depth, record.line, order, start, end, path),
                       context, record.line, trace_id, "runs")
            owners[raw["id"]] = trace_id
            order += 1
        for trace_id, members in traces.ended(record.line):
            yield _finished(context, trace_id, members, owners)
    for trace_id, members in traces.rest():
        yield _finished(context, trace_id, members, owners)


def _trace_of(raw: dict[str, Any], top: str | None, owners: dict[str, str]) -> str:
    """The trace a run belongs to: its `trace_id`; without one, its record's top run's (a nested
    child), else the trace of the run it updates (one of its id read already), else its parent's
    when that was read already, else its own id (a root)."""
    if isinstance(raw.get("trace_id"), str):
        return str(raw["trace_id"])
    if top is not None:
        return top
    if raw["id"] in owners:
        return owners[raw["id"]]
    parent = raw.get("parent_run_id")
    return owners.get(parent, raw["id"]) if isinstance(parent, str) else str(raw["id"])


def _finished(context: Context, trace_id: str, members: list[_Run], owners: dict[str, str]) -> ImportedRun:
    for run in members:
        owners.pop(run.raw["id"], None)
    return context.finished(trace_id, _Trace(context, trace_id, members).timeline())


RUN_IDS = string_field("trace_id", own="id")
"""How a first pass finds the trace a line belongs to (see `records.last_lines`); a run without
`trace_id` (its own id is the trace's) is let go at the end of the input, and a record naming no
trace but the id of one (a root run's update, as `Client.update_run` writes it) counts for it."""


def _flattened(record: Record, file: str) -> Iterator[tuple[dict[str, Any], int, str]]:
    """A record's run and its `child_runs`, depth first, each with its depth and JSON path."""
    stack: list[tuple[Any, int, str]] = [(record.value, 0, "$")]
    while stack:
        raw, depth, path = stack.pop()
        problem = _run_problem(raw, path)
        if problem is not None:
            if not depth:   # (a record of another format, in a file of runs: said so)
                refuse_other(raw, FORMAT, file, record.line)
            raise TraceError(file, record.line, problem)
        if not depth and raw.get("name") is None:   # (an update's, or another format's record)
            refuse_other(raw, FORMAT, file, record.line)
        yield raw, depth, path
        children = raw.get("child_runs") or []
        if not isinstance(children, list):
            raise TraceError(file, record.line, f"{path}.child_runs: expected a list")
        for index in range(len(children) - 1, -1, -1):
            stack.append((children[index], depth + 1, f"{path}.child_runs[{index}]"))


def _run_problem(raw: Any, path: str) -> str | None:
    """Why `raw` is no run (an object with an id), or None; its name may be left to the record
    it updates (`_Trace` refuses a run that no record names)."""
    if not isinstance(raw, dict):
        return f"{path}: expected a run (an object)"
    if not isinstance(raw.get("id"), str) or not raw["id"]:
        return f"{path}.id: expected the run's id (a string)"
    if raw.get("name") is not None and not isinstance(raw["name"], str):
        return f"{path}.name: expected a string"
    return None


def _time(value: Any, path: str, file: str, line: int, default: int | None = None) -> int:
    if value is None and default is not None:
        return default
    at = iso_nanos(value) if isinstance(value, str) else None
    if at is None:
        raise TraceError(file, line, f"{path}: expected an ISO 8601 time")
    return at


def _merged(members: list[_Run]) -> list[_Run]:
    """One run per id where a run was written as it was created (no `end_time`) and again as it
    ended, as runs reach LangSmith (created, then updated): the later record's fields update the
    earlier one's (a field it holds as null keeps the earlier value), in the earlier one's place.
    The same record written twice counts once; runs that only share an id stay apart, as written."""
    return merged_records(members, lambda run: run.raw["id"], _updated, lambda earlier, run: earlier.raw == run.raw)


def _updated(earlier: _Run, run: _Run) -> _Run | None:
    """A run created (`earlier`, not ended) as `run` updates it; None when `earlier` had ended."""
    if earlier.ended:
        return None
    raw = {**earlier.raw, **{key: value for key, value in run.raw.items()
                             if value is not None or earlier.raw.get(key) is None}}
    return _Run(raw, earlier.depth, run.line, earlier.order, earlier.start, run.end if run.ended else earlier.end,
                run.path)


def _unwritten(run: _Run) -> str | None:
    """What a run (its records merged) lacks that only an update may leave out, or None."""
    if not isinstance(run.raw.get("name"), str):
        return f"{run.path}.name: expected the run's name (a string), here or in an earlier record of the run"
    if run.raw.get("start_time") is None:
        return f"{run.path}.start_time: expected an ISO 8601 time, here or in an earlier record of the run"
    return None


class _Trace:
    """The runs of one trace, mapped to events."""

    def __init__(self, context: Context, trace_id: str, members: list[_Run]) -> None:
        self.context, self.trace_id = context, trace_id
        members = _merged(members)
        for run in members:
            problem = _unwritten(run)
            if problem is not None:
                raise TraceError(context.file, run.line, problem)
        members.sort(key=lambda run: (str(run.raw.get("dotted_order") or ""), run.order))
        self.members = members
        self.by_id = {run.raw["id"]: run for run in members}
        self.depths = {id(run): self._depth(run) for run in members}
        self.out = Timeline(FORMAT, context.file, trace_id, digits=6)

    def _depth(self, run: _Run) -> int:
        dotted = run.raw.get("dotted_order")
        return dotted.count(".") if isinstance(dotted, str) and dotted else run.depth

    def timeline(self) -> Timeline:
        roots = [run for run in self.members if run.parent is None or run.parent not in self.by_id]
        # no root (a cycle of parents): the earliest run is the run's, as for spans
        root = min(roots or self.members, key=lambda run: (run.start, run.order))
        model_ids = _ModelIds(self)
        for run in self.members:
            depth = self.depths[id(run)]
            if run is root:
                self._root(run)
                self._root_itself(run, model_ids)
            elif self._mapped(run, depth):
                continue
            elif run.raw.get("run_type") == "tool":
                self._tool(run, depth, model_ids.call_id(run))
            elif run.raw.get("run_type") in ("llm", "chat_model"):
                self._message(run, depth)
            elif run.raw.get("run_type") != "chain":   # a retriever, an embedding, a prompt, a parser…
                self.context.skip()
        return self.out

    def _root_itself(self, run: _Run, model_ids: _ModelIds) -> None:
        """What the root run is besides the run's bounds: a tool run traced on its own (no agent
        around it, or its parent left out of the export) is still a call, and a model run still
        speaks."""
        if run.raw.get("run_type") == "tool":
            self._tool(run, 0, model_ids.call_id(run))
        elif run.raw.get("run_type") in ("llm", "chat_model"):
            self._message(run, 0)

    def _mapped(self, run: _Run, depth: int) -> bool:
        """A run the profile or the convention turns into an event."""
        metadata = as_object(as_object(run.raw.get("extra")).get("metadata"))
        candidate = Candidate(run.raw["name"], run.raw.get("run_type") if isinstance(run.raw.get("run_type"), str)
                              else None, metadata)
        event = self.context.profile.event_for(candidate) if self.context.profile is not None else None
        if event is None:
            event = convention_event(candidate, as_object(metadata.get("ainv")))
        if event is None:
            return False
        self.out.add(event, run.start, depth=depth, line=run.line, span_id=run.raw["id"])
        return True

    def _root(self, run: _Run) -> None:
        # the root run's own start and end: at equal times, §7's order of starts and ends
        self.out.add({"type": "run.start"}, run.start, line=run.line, span_id=run.raw["id"], bound=FIRST)
        error = run.raw.get("error")
        end: dict[str, Any] = {"type": "run.completed"}
        if error:
            text = error if isinstance(error, str) else msgspec.json.encode(error).decode()
            end = {"type": "run.failed", "status": "failed", "reason": error_text(text)}
        outputs = run.raw.get("outputs")
        if isinstance(outputs, dict) and outputs:
            end["output"] = outputs["output"] if list(outputs) == ["output"] else outputs
        if run.ended or error:
            self.out.add(end, run.end, phase=END, line=run.line, span_id=run.raw["id"], bound=LAST)

    def _tool(self, run: _Run, depth: int, call_id: str) -> None:
        raw = run.raw
        key = ("run", raw["id"], run.order)
        call: dict[str, Any] = {"type": "tool.call", "tool": raw["name"] or "<unnamed>", "call_id": call_id}
        inputs = raw.get("inputs")
        if isinstance(inputs, dict) and isinstance(inputs.get("input"), str) and len(inputs) == 1:
            parsed, _ = parse_args(inputs["input"])
            inputs = parsed if parsed is not None else inputs
        args, rest = parse_args(inputs)
        if args is not None:
            call["args"] = args
        elif rest is not None:
            call["data"] = {"raw_args": rest}
        self.out.add(call, run.start, depth=depth, line=run.line, span_id=raw["id"], key=key)
        if not run.ended and not raw.get("error"):
            return   # still running when it was exported: no result, and none guessed
        result: dict[str, Any] = {"type": "tool.result", "tool": call["tool"], "call_id": call_id}
        message = _tool_message(raw)
        outputs = as_object(raw.get("outputs"))
        failed = bool(raw.get("error"))
        if message is not None:
            value, kept = parse_result(message.get("content"))
            failed = failed or message.get("status") == "error"
        elif list(outputs) == ["output"]:   # (the SDK wraps what a tool returned that is no dict so)
            value, kept = parse_result(outputs["output"])
        elif outputs:   # the SDK's @traceable keeps a returned dict as the outputs themselves
            value, kept = outputs, None
        else:
            value, kept = _NONE, None
        if value is not _NONE:
            result["result"] = value
        result["ok"] = not failed
        if kept is not None:
            result["data"] = {"raw_result": kept}
        if failed and raw.get("error"):
            error = raw["error"]
            result.setdefault("data", {})["error"] = error_text(error if isinstance(error, str) else
                                                                msgspec.json.encode(error).decode())
        took = duration_ms(run.start, run.end)
        if took is not None:
            result["duration_ms"] = took
        self.out.add(result, run.end, phase=END, depth=depth, line=run.line, span_id=raw["id"], key=key)

    def _message(self, run: _Run, depth: int) -> None:
        for message in _generated(run.raw):
            content = message.get("content")
            text = content if isinstance(content, str) else _text_blocks(content)
            if text:
                self.out.add({"type": "agent.message", "actor": "agent", "data": {"text": text}}, run.end,
                             phase=END, depth=depth, line=run.line, span_id=run.raw["id"])


_NONE: Any = object()


def _tool_message(raw: dict[str, Any]) -> dict[str, Any] | None:
    outputs = raw.get("outputs")
    return tool_message(outputs.get("output")) if isinstance(outputs, dict) else None


def _generated(raw: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The messages an llm run produced (from its outputs' generations, or the `choices` of an
    OpenAI chat completion, as `wrap_openai` and @traceable functions return it; never its
    inputs), each with its `content` and its `tool_calls` as `{id, name}`."""
    outputs = raw.get("outputs")
    if isinstance(outputs, dict) and isinstance(outputs.get("choices"), list):
        yield from _chosen(outputs["choices"])
        return
    generations = outputs.get("generations") if isinstance(outputs, dict) else None
    if not isinstance(generations, list):
        return
    for batch in generations:
        for generation in batch if isinstance(batch, list) else [batch]:
            message = as_object(generation).get("message")
            if isinstance(message, dict):
                yield as_object(message["kwargs"]) if isinstance(message.get("kwargs"), dict) else message


def _chosen(choices: list[Any]) -> Iterator[dict[str, Any]]:
    """The messages of an OpenAI chat completion's choices, their tool calls as LangChain writes
    them (`{id, name}`; OpenAI's are `{id, function: {name, arguments}}`)."""
    for choice in choices:
        message = as_object(as_object(choice).get("message"))
        calls = [{"id": call.get("id"), "name": as_object(call.get("function")).get("name")}
                 for call in message.get("tool_calls") or [] if isinstance(call, dict)]
        yield {"content": message.get("content"), "tool_calls": calls}


def _text_blocks(content: Any) -> str:
    if not isinstance(content, list):
        return ""
    return "".join(block.get("text", "") for block in content
                   if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str))


_NOWHERE: Any = object()
"""Above the top: no scope."""


class _ModelIds:
    """Call ids for tool runs: the tool side's own, else the model's (point 28), else the run id."""

    def __init__(self, trace: _Trace) -> None:
        self.trace = trace
        self.turns: dict[str, ModelTurn] = {}   # llm run id -> its calls, and those tool runs took
        self.models: dict[str | None, list[_Run]] = {}   # parent id -> its llm runs, by end
        for member in trace.members:
            if member.raw.get("run_type") in ("llm", "chat_model"):
                self.models.setdefault(member.parent, []).append(member)
        for found in self.models.values():
            found.sort(key=lambda member: (member.end, member.order))
        self.ends = {parent: [member.end for member in found] for parent, found in self.models.items()}
        self.nearest: dict[str | None, Any] = {}   # scope -> the nearest scope at or above it with model runs

    def call_id(self, run: _Run) -> str:
        own = self._own(run)
        taken = self._take(run, own)
        return own or taken or run.raw["id"]

    @staticmethod
    def _own(run: _Run) -> str | None:
        """The tool side's id: its ToolMessage's `tool_call_id`, else `extra.tool_call_id`."""
        message = _tool_message(run.raw)
        if message is not None and isinstance(message.get("tool_call_id"), str) and message["tool_call_id"]:
            return str(message["tool_call_id"])
        extra = run.raw.get("extra")
        if isinstance(extra, dict) and isinstance(extra.get("tool_call_id"), str) and extra["tool_call_id"]:
            return str(extra["tool_call_id"])
        return None

    def _take(self, run: _Run, own: str | None) -> str | None:
        """The call of the nearest earlier model run that this tool run answers (`ModelTurn`): in
        its parent's runs, else its grandparent's... Only the scopes that hold model runs are
        looked at (`_with_models`): a deep chain of runs without any costs no walk per run."""
        name = run.raw["name"]
        scope = self._with_models(run.parent)
        visited: set[str | None] = set()
        while scope is not _NOWHERE and scope not in visited:   # (a cycle of parents ends)
            visited.add(scope)
            before = bisect_right(self.ends[scope], run.start)
            if not before:
                scope = self._with_models(self._above(scope))
                continue
            model = self.models[scope][before - 1]
            turn = self.turns.get(model.raw["id"])
            if turn is None:
                turn = self.turns[model.raw["id"]] = ModelTurn(
                    (call["id"], call["name"]) for message in _generated(model.raw)
                    for call in message.get("tool_calls") or []
                    if isinstance(call, dict) and isinstance(call.get("name"), str) and isinstance(call.get("id"), str))
            return turn.take(name, own)
        return None

    def _above(self, scope: str | None) -> Any:
        """The scope above `scope` (the parent of the run it names), or `_NOWHERE` at the top."""
        run = self.trace.by_id.get(scope) if scope is not None else None
        return _NOWHERE if run is None else run.parent

    def _with_models(self, scope: Any) -> Any:
        """The nearest of `scope` and the scopes above it that holds model runs, or `_NOWHERE`;
        remembered for every scope on the way, so that each is walked through once."""
        path: list[str | None] = []
        on_path: set[str | None] = set()
        while scope is not _NOWHERE and scope not in self.models and scope not in self.nearest:
            if scope in on_path:   # a cycle of parents without model runs
                scope = _NOWHERE
                break
            on_path.add(scope)
            path.append(scope)
            scope = self._above(scope)
        found = self.nearest.get(scope, scope) if scope is not _NOWHERE else _NOWHERE
        for member in path:
            self.nearest[member] = found
        return found
