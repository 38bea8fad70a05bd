"""`otel`: OpenTelemetry spans with the GenAI semantic conventions, as OTLP JSON lines (pydantic-ai,
Strands, Google ADK, the OpenTelemetry instrumentations) (§7, §10 points 26, 29-33, 36).

Each trace is a run (its id is the trace id). What becomes what:

- the outermost `invoke_agent` / `invoke_workflow` span (else the earliest root span):
  `run.start` at its start; `run.completed` at its end, or `run.failed` {status: failed, reason}
  when it or an agent span inside it ends with an error (a span that outlasts it, such as a
  server span around it, does not move the end). Agents side by side are one run: the span
  around them all (LangGraph's graph), or, when the export left that out, from the first of them
  to the last;
- `gen_ai.operation.name = execute_tool`: `tool.call` {tool: `gen_ai.tool.name`, call_id:
  `gen_ai.tool.call.id` (else the span id), args: `gen_ai.tool.call.arguments` (else the `content`
  of its `gen_ai.tool.message` event, as Strands writes them by default), else those of the
  model's `tool_call` part with that id} at its start,
  `tool.result` {result: `gen_ai.tool.call.result` (else its `gen_ai.choice` event's `message`),
  ok} at its end (Google ADK's span of merged responses, tool `(merged tools)`, is no call, and
  its call id `<not specified>` no id);
- a `tool_call` message part (with an id) of a chat span that no `execute_tool` span ran (by its
  id, or, for a span without one, the first part of its tool in its turn): a synthetic
  `tool.call` at the chat span's end, and its `tool_call_response` part the result, at the start
  of the next chat span (messages logged in the chat span, `event_only` content capture, are its
  own);
- a span, span event or log record (its `eventName`, else `event.name`; OTLP JSON lines may hold
  `resourceLogs` beside `resourceSpans`) named after one of our event types, or matched by a
  profile: that event (fields from `ainv.*` attributes), a log record inside the span it was
  logged in;
- a span named `handoff to <agent>` (without a tool name): `agent.handoff` {data.to}; one named
  `handoff` alone (`handoff_target`): `agent.handoff` without `to`.

A tool fails (`ok: false`) when its span's status is ERROR or it holds an `exception` event (an
`error.type` attribute too). OpenTelemetry has no standard run output: the root's `ainv.output`
attribute gives it, or a profile; otherwise there is none (output rules then say so).
`gen_ai.tool.definitions` lists tools; it is never a call.
"""
from __future__ import annotations

import re
from bisect import bisect_left, insort
from collections.abc import Iterator
from typing import Any

import msgspec

from agent_invariants.errors import TraceError
from agent_invariants.importers.common import (
    END,
    FIRST,
    LAST,
    START,
    Timeline,
    duration_ms,
    error_text,
    parse_args,
    parse_result,
)
from agent_invariants.importers.otlp import TRACE_ID, Span, Tree, read_traces, trace_key
from agent_invariants.importers.profile import CONVENTION_TYPES, Candidate, convention_event
from agent_invariants.importers.records import Record, RunIds
from agent_invariants.importers.run import Context, ImportedRun
from agent_invariants.importers.sniff import OPENINFERENCE_KIND

__all__ = ("FORMAT", "RUN_IDS", "handoff_target", "runs")

FORMAT = "otel"
OPERATION = "gen_ai.operation.name"
_AGENT_OPERATIONS = ("invoke_agent", "invoke_workflow")
_CHAT_OPERATIONS = ("chat", "text_completion", "generate_content")
_MESSAGES = ("gen_ai.input.messages", "gen_ai.output.messages")
RUN_IDS: RunIds = (TRACE_ID, trace_key, None)
"""How a first pass finds the runs a line belongs to (see `records.last_lines`)."""


def runs(records: Iterator[Record], context: Context) -> Iterator[ImportedRun]:
    for trace_id, spans in read_traces(records, context, FORMAT):
        yield context.finished(trace_id, GenAiTrace(context, trace_id, spans).timeline())


def _tool_named(named: Any, span_name: str) -> Any:
    """A tool span's tool: its `gen_ai.tool.name` (trimmed), else (the attribute is recommended,
    not required) from the span's name, which the conventions write `execute_tool {gen_ai.tool.name}`;
    a tool neither names (blank, or a span named only `execute_tool`) is `<unnamed>`, as the other
    importers name one, not `execute_tool` or a tool named with spaces. A name that is no string
    (`{"intValue": "7"}`: a producer's slip) is no name: the span's name says the tool."""
    name = (named.strip() if isinstance(named, str) else "") or span_name.strip()
    return _OPERATION_WORD.sub("", name).strip() or "<unnamed>"


_OPERATION_WORD = re.compile(r"\Aexecute_tool(?:\s+|\Z)")
"""The operation that starts a tool span's name, and the whitespace after it (a tab too)."""


def span_error(span: Span) -> str:
    """What a failed span says of its error: its status message, else its exception's."""
    for event in span.events:
        if event.name == "exception":
            kind = event.attributes.get("exception.type")
            message = event.attributes.get("exception.message")
            text = ": ".join(str(part) for part in (kind, message) if part)
            if text:
                return error_text(span.message or text)
    return error_text(span.message or str(span.attributes.get("error.type") or "error"))


def failed(span: Span) -> bool:
    """Whether a span ended with an error: status ERROR, an exception event or `error.type`."""
    if span.error or "error.type" in span.attributes:
        return True
    return bool(span.events) and any(event.name == "exception" for event in span.events)


def handoff_target(name: str) -> str | None:
    """The agent a span named as a handoff hands to, `handoff to <agent>` (point 33); `""` for one
    named `handoff` alone, as the Agents SDK's instrumentation names a handoff whose target is
    unknown (its `on_handoff` raised); None for any other name. Only a span without a tool name
    is asked: a tool may be called `handoff`."""
    if name.startswith("handoff to "):
        return name[len("handoff to "):].strip()
    return "" if name == "handoff" else None


class GenAiTrace:
    """The spans of one trace, mapped to events by the GenAI conventions (subclassed by
    `openinference`, which reads other attributes)."""

    source_format = FORMAT

    def __init__(self, context: Context, trace_id: str, spans: list[Span]) -> None:
        self.context = context
        self.tree = Tree(_once(spans))
        self.trace_id = trace_id
        self.out = Timeline(self.source_format, context.file, trace_id)
        self.parts = _MessageParts()
        self._asked: dict[str, Any] | None = None   # call id -> the arguments the model gave it
        self._message_logs: set[int] = set()   # the log records read as their chat spans' messages

    def timeline(self) -> Timeline:
        self.convention()
        self.messages_from_logs()
        outermost = self.outermost()
        root = min(outermost, key=lambda span: (span.start, span.order))
        for span in self.tree.spans:
            depth = self.tree.depth_of(span)
            if span.log:   # a log record says only what the convention or a profile reads in it
                if not self.mapped(span, depth) and id(span) not in self._message_logs:
                    self.context.skip()   # (the messages of a log record in a chat span are read)
                continue
            if span is root:
                self.run_bounds(root, outermost)
            else:
                self.mapped(span, depth)   # a profile adds events: a tool step stays a tool step
            self.span(span, depth)
            if span.events:
                self.span_events(span, depth)
        self.after()
        return self.out

    def convention(self) -> None:
        """Stop the import of a trace whose tool steps are all the other flavour's: read as this
        one, it would be a run without those calls, which passes (the two flavours share their
        records, so only a trace's spans tell them apart; `sniff` reads a first record's, and one
        span of the other flavour there, a model's, decides it). A trace with tool steps of both,
        traced twice, is read as asked."""
        other, marker, tool_step = self.other_convention
        found: Span | None = None
        for span in self.tree.spans:
            if self.is_tool(span):
                return
            value = span.attributes.get(marker) if found is None else None
            if isinstance(value, str) and value.upper() == tool_step.upper():
                found = span
        if found is not None:
            raise TraceError(self.context.file, found.line, f"trace {self.trace_id} holds tool steps of {other} "
                             f"({marker} = {tool_step}) and none of {self.source_format}, which does not read "
                             f"them: read it as {other} (or as auto, which reads each trace in its own flavour)")

    # -- what each format reads differently ------------------------------------------------------------------------

    other_convention = ("openinference", OPENINFERENCE_KIND, "TOOL")
    """The other flavour of OTLP spans, and the attribute and value its tool steps are told by."""

    def outermost(self) -> list[Span]:
        """The spans the run is: the outermost agent span; when several are outermost, side by
        side, or tool steps lie outside them, the closest span of the format's around them all
        (LangGraph writes an agent span per model turn, its tools beside them, under the graph's
        span), or, without one (the export left it out), all of them (the run starts with the
        first and ends with the last); else the earliest root span (point 30: a later root beside
        it is not the run's), else the earliest span."""
        under = self._under_agents()
        agents = [span for span in self.tree.spans if self.is_agent(span) and not under[id(span)]]
        # tool steps outside every agent span are the run's too (LangGraph runs its tools beside
        # its one agent span per model turn, however many turns there are)
        astray = [span for span in self.tree.spans if agents and self.is_tool(span) and not under[id(span)]]
        around = self._around(agents + astray) if len(agents) + len(astray) > 1 else None
        if around is not None:
            return [around]
        if agents:
            return agents + astray
        pool = [span for span in self.tree.roots() if not span.log] or self.tree.spans
        return [min(pool, key=lambda span: (span.start, span.order))]

    def _under_agents(self) -> dict[int, bool]:
        """For each span (by `id`), whether an agent span is above it: worked out from the roots
        down, one step a span, however deep the tree (asking each span's ancestors took time
        that grew with the square of the depth: a chain of 16,000 spans took 24 s)."""
        under: dict[int, bool] = {}
        for span in sorted(self.tree.spans, key=self.tree.depth_of):   # (a parent comes before its children)
            parent = self.tree.parent(span)
            under[id(span)] = parent is not None and (under.get(id(parent), False) or self.is_agent(parent))
        return under

    def _around(self, spans: list[Span]) -> Span | None:
        """The closest span of the format's own (one with a `kind`: not a server span around the
        process, which would move the run's bounds) that holds all of `spans` below it, or None.
        Those that hold them all are a chain above them: each span's count of them below it is
        summed from the leaves up, one step a span."""
        wanted = {id(span) for span in spans}
        below: dict[int, int] = {}
        by_depth = sorted(self.tree.spans, key=self.tree.depth_of, reverse=True)   # deepest first
        for span in by_depth:
            parent = self.tree.parent(span)
            if parent is not None:
                below[id(parent)] = below.get(id(parent), 0) + below.get(id(span), 0) + (id(span) in wanted)
        return next((span for span in by_depth if below.get(id(span), 0) == len(wanted)
                     and self.kind(span) is not None), None)

    def messages_from_logs(self) -> None:
        """The messages of a chat span that the instrumentation logged rather than set on it (the
        OpenTelemetry GenAI instrumentations' `event_only` content capture puts them on a
        `gen_ai.client.inference.operation.details` log record in the span): read as its own."""
        for record in self.tree.spans:
            chat = self.tree.parent(record) if record.log else None
            if chat is None or chat.log or chat.attributes.get(OPERATION) not in _CHAT_OPERATIONS:
                continue
            for key in _MESSAGES:
                if key in record.attributes:
                    self._message_logs.add(id(record))
                    if key not in chat.attributes:
                        chat.attributes[key] = record.attributes[key]

    def asked(self, call_id: str) -> Any:
        """The arguments the model gave the call with this id (its chat spans' `tool_call` parts,
        the last that has some), or None: a tool span without its own arguments takes them (each
        format reads the model's calls where it writes them)."""
        if self._asked is None:
            self._asked = {part["id"]: part["arguments"] for span in self.tree.spans
                           if not span.log and span.attributes.get(OPERATION) in _CHAT_OPERATIONS
                           for part in _parts(span.attributes.get("gen_ai.output.messages"))
                           if part.get("type") == "tool_call" and isinstance(part.get("id"), str)
                           and part["id"] and "arguments" in part}
        return self._asked.get(call_id)

    def kind(self, span: Span) -> str | None:
        kind = span.attributes.get(OPERATION)
        return kind if isinstance(kind, str) else None

    def is_agent(self, span: Span) -> bool:
        return span.attributes.get(OPERATION) in _AGENT_OPERATIONS

    def is_tool(self, span: Span) -> bool:
        return span.attributes.get(OPERATION) == "execute_tool"

    def span(self, span: Span, depth: int) -> None:
        target = handoff_target(span.name)
        if target is not None and not span.attributes.get("gen_ai.tool.name"):
            self.handoff(span, depth, target)
        elif span.attributes.get(OPERATION) == "execute_tool":
            attributes = span.attributes
            if attributes.get("gen_ai.tool.name") == _MERGED:   # no call of its own: skipped
                self.context.skip()
                return
            call_id = attributes.get("gen_ai.tool.call.id")
            if call_id == _NO_CALL_ID:
                call_id = None
            elif call_id.__class__ is int:   # (an intValue: a producer's slip; its digits are the id)
                call_id = str(call_id)
            args = attributes.get("gen_ai.tool.call.arguments")
            result, has_result = attributes.get("gen_ai.tool.call.result"), "gen_ai.tool.call.result" in attributes
            if args is None and not has_result and "tool_response" in attributes:   # pydantic-ai's instrumentation
                args = attributes.get("tool_arguments")                              # version 2 names them so
                result, has_result = attributes["tool_response"], True
            if args is None or not has_result:   # (Strands' default, older conventions: the span's events)
                written = {inner.name: inner.attributes for inner in span.events if inner.name in _OLDER_EVENTS}
                if args is None and "content" in written.get("gen_ai.tool.message", {}):
                    args = written["gen_ai.tool.message"]["content"]
                if not has_result and "message" in written.get("gen_ai.choice", {}):
                    result, has_result = written["gen_ai.choice"]["message"], True
            if args is None and isinstance(call_id, str):   # (`event_only` capture sets none on the span)
                args = self.asked(call_id)
            self.tool(span, depth, tool=_tool_named(attributes.get("gen_ai.tool.name"), span.name), call_id=call_id,
                      args=args, result=result, has_result=has_result)
        elif span.attributes.get(OPERATION) in _CHAT_OPERATIONS:
            self.parts.add_chat(span)

    def after(self) -> None:
        self.parts.emit(self)

    # -- shared --------------------------------------------------------------------------------------------------------

    def run_bounds(self, root: Span, outermost: list[Span]) -> None:
        depth = self.tree.depth_of(root)   # the root span's own start and end: at equal times, §7's order
        self.out.add({"type": "run.start"}, root.start, depth=depth, line=root.line, span_id=root.span_id, bound=FIRST)
        # the first to fail, in the events' order (by its end; at equal times the deeper one), not the
        # first written: a Collector's file holds a trace's spans in no set order
        failing = min((span for span in self.tree.spans if self.ends_run(span)
                       or (span is root and not self.is_tool(span) and failed(span))),
                      key=lambda span: (not span.ended, span.end, -self.tree.depth_of(span), span.order), default=None)
        end: dict[str, Any] = {"type": "run.completed"}
        if failing is not None:
            end = {"type": "run.failed", "status": "failed", "reason": self.failure_text(failing)}
        output = root.attributes.get("ainv.output")
        if output is not None:
            end["output"] = parse_result(output, json_text=True)[0]
        # the end of the last of the run's outermost spans (§7), not of a span around them
        last = max(outermost, key=lambda span: (span.ended, span.end, -span.order))
        if all(span.ended for span in outermost) or failing is not None:
            self.out.add(end, last.end, phase=END, depth=self.tree.depth_of(last), line=last.line, span_id=last.span_id,
                         bound=LAST)

    def ends_run(self, span: Span) -> bool:
        """A span whose error fails the run: a root's or an agent span's (point 31), wherever it is
        in the trace (a trace may hold several agents side by side)."""
        return failed(span) and (self.tree.parent(span) is None or self.is_agent(span))

    def failure_text(self, span: Span) -> str:
        return span_error(span)

    def mapped(self, span: Span, depth: int) -> bool:
        """A span the profile or the convention turns into an event, at its start."""
        if self.context.profile is None and span.name not in CONVENTION_TYPES:
            return False   # asked before the span's kind is worked out: most spans are neither's
        event = self.mapped_event(span.name, "log" if span.log else self.kind(span), span.attributes)
        if event is None:
            return False
        # a log record is named by the span it was logged in
        self.out.add(event, span.start, depth=depth, line=span.line, span_id=span.parent if span.log else span.span_id)
        return True

    def span_events(self, span: Span, depth: int) -> None:
        for inner in span.events:
            event = self.mapped_event(inner.name, "event", inner.attributes)
            if event is not None:
                self.out.add(event, inner.at, depth=depth + 1, line=span.line, span_id=span.span_id)

    def mapped_event(self, name: str, kind: str | None, attributes: dict[str, Any]) -> dict[str, Any] | None:
        profile = self.context.profile
        if profile is None and name not in CONVENTION_TYPES:
            return None
        candidate = Candidate(name, kind, attributes)
        event = profile.event_for(candidate) if profile is not None else None
        return event if event is not None else convention_event(candidate, {
            key: value for key, value in attributes.items() if key.startswith("ainv.")})

    def handoff(self, span: Span, depth: int, target: str) -> None:
        self.out.add({"type": "agent.handoff", "data": {"to": target} if target else {}}, span.start, depth=depth,
                     line=span.line, span_id=span.span_id)

    def tool(self, span: Span, depth: int, *, tool: Any, call_id: Any, args: Any, result: Any, has_result: bool,
             json_result: bool = False, says_failed: bool = False, raw_args: Any = None) -> None:
        """The call and result of a tool span (`raw_args`: what the span wrote in place of args
        that come from elsewhere, kept as written)."""
        name = tool if isinstance(tool, str) and tool else "<unnamed>"
        own_id = isinstance(call_id, str) and call_id != ""
        native = call_id if own_id else span.span_id
        key = ("span", span.order)
        call: dict[str, Any] = {"type": "tool.call", "tool": name, "call_id": native}
        parsed, raw = parse_args(args)
        if parsed is not None:
            call["args"] = parsed
        elif raw is not None:
            raw_args = raw
        if raw_args is not None:
            call["data"] = {"raw_args": raw_args}
        self.out.add(call, span.start, depth=depth, line=span.line, span_id=span.span_id, key=key)
        self.parts.executed.setdefault(native, []).append(span.start)
        if not own_id:
            insort(self.parts.anonymous.setdefault(name, []), span.start)
        if not span.ended:
            return   # still running when it was exported: no result, and none guessed
        broken = failed(span) or says_failed
        outcome: dict[str, Any] = {"type": "tool.result", "tool": name, "call_id": native, "ok": not broken}
        if has_result:
            value, kept = parse_result(result, json_result)
            outcome["result"] = value
            if kept is not None:
                outcome["data"] = {"raw_result": kept}
        if broken and failed(span):
            outcome.setdefault("data", {})["error"] = span_error(span)
        took = duration_ms(span.start, span.end)
        if took is not None:
            outcome["duration_ms"] = took
        self.out.add(outcome, span.end, phase=END, depth=depth, line=span.line, span_id=span.span_id, key=key)


class _MessageParts:
    """`tool_call` message parts of chat spans that no `execute_tool` span ran (point 29), and their
    `tool_call_response` parts. A chat span's output holds the calls it asked for, once; the next
    chat span's input holds their responses (with the whole history: the latest response of an id
    is this turn's, as some models reuse ids across turns). A call some `execute_tool` span with its
    id ran between the two chat spans is not repeated, nor is one whose id has as many spans as
    distinct parts (whatever the times: a wall clock may step back), nor the same part (id, name and
    arguments) that a later chat span repeats. An `execute_tool` span without an id of its own (none,
    an empty one, ADK's `<not specified>`) ran the first part of its tool in the turn it started in
    that no span ran by id. A part without an id (or an empty one) is not read: nothing names its
    call or pairs its response. Output tools (pydantic-ai's `model_request_parameters.output_tools`,
    how a structured answer is given) are not calls."""

    def __init__(self) -> None:
        self.chats: list[Span] = []
        self.executed: dict[str, list[int]] = {}   # call id -> the start of each execute_tool span with it
        self.anonymous: dict[str, list[int]] = {}   # tool -> the starts of its execute_tool spans without an id

    def add_chat(self, span: Span) -> None:
        self.chats.append(span)

    def emit(self, trace: GenAiTrace) -> None:
        by_agent: dict[int, list[Span]] = {}   # each agent's chats: turns follow each other within one agent
        for chat in self.chats:
            parent = trace.tree.parent(chat)
            by_agent.setdefault(-1 if parent is None else parent.order, []).append(chat)
        # An id with as many execute_tool spans as distinct parts ran every time it was asked for,
        # whatever the times say (a wall clock stepped back during the run); only the ids with
        # more parts than spans are placed by time, which turn's call no span ran.
        calls = {chat.order: list(_calls(chat, _output_tools(chat))) for chat in self.chats}   # (read once)
        marks: dict[str, set[tuple[str, str, str]]] = {}
        for found in calls.values():
            for _, part, mark in found:
                marks.setdefault(part["id"], set()).add(mark)
        ran = {call_id for call_id, found in marks.items() if len(self.executed.get(call_id, ())) >= len(found)}
        emitted: set[tuple[str, str, str]] = set()
        for chats in by_agent.values():
            self._emit_turns(trace, sorted(chats, key=lambda span: (span.start, span.order)), calls, emitted, ran)

    def _emit_turns(self, trace: GenAiTrace, chats: list[Span], calls: dict[int, list[Any]],
                    emitted: set[tuple[str, str, str]], ran: set[str]) -> None:
        for index, chat in enumerate(chats):
            following = chats[index + 1] if index + 1 < len(chats) else None
            until = following.start if following is not None else None
            answers = {} if following is None else {
                part["id"]: part for part in _parts(following.attributes.get("gen_ai.input.messages"))
                if part.get("type") == "tool_call_response" and isinstance(part.get("id"), str)}   # the last wins
            for number, part, mark in calls[chat.order]:
                if mark in emitted:
                    continue   # the same part again (a chat span exported twice, a later turn's history)
                emitted.add(mark)   # (also when a span ran it: the same part repeated later is that call)
                call_id = part["id"]
                if call_id in ran or any(chat.start <= start and (until is None or start <= until)
                                         for start in self.executed.get(call_id, ())):
                    continue
                if self._ran_without_id(part.get("name"), chat.start, until):
                    continue
                self._emit(trace, chat, following, number, part, answers.get(call_id))

    def _ran_without_id(self, name: Any, since: int, until: int | None) -> bool:
        """Whether a span without an id ran the tool `name` in this turn (it then runs no other part)."""
        starts = self.anonymous.get(name) if isinstance(name, str) else None
        if not starts:
            return False
        at = bisect_left(starts, since)
        if at == len(starts) or (until is not None and starts[at] > until):
            return False
        del starts[at]
        return True

    def _emit(self, trace: GenAiTrace, chat: Span, following: Span | None, number: int, part: dict[str, Any],
              answer: dict[str, Any] | None) -> None:
        key = ("part", chat.order, number)
        name = part.get("name") if isinstance(part.get("name"), str) and part.get("name") else "<unnamed>"
        call: dict[str, Any] = {"type": "tool.call", "tool": name, "call_id": part["id"]}
        args, raw = parse_args(part.get("arguments"))
        if args is not None:
            call["args"] = args
        elif raw is not None:
            call["data"] = {"raw_args": raw}
        trace.out.add(call, chat.end, phase=END, depth=trace.tree.depth_of(chat), line=chat.line,
                      span_id=chat.span_id, key=key, synthetic=True)
        if answer is None or following is None or not ("result" in answer or "response" in answer):
            return
        value, kept = parse_result(answer["result"] if "result" in answer else answer["response"])
        result: dict[str, Any] = {"type": "tool.result", "tool": name, "call_id": part["id"], "result": value}
        if kept is not None:
            result["data"] = {"raw_result": kept}
        trace.out.add(result, following.start, phase=START, depth=trace.tree.depth_of(following),
                      line=following.line, span_id=following.span_id, key=key, synthetic=True)


def _calls(chat: Span, outputs: set[str]) -> Iterator[tuple[int, dict[str, Any], tuple[str, str, str]]]:
    """The `tool_call` parts of a chat span's output with an id (output tools left out): each with
    its place among the parts and its mark (id, name, arguments), which tells a repeat."""
    for number, part in enumerate(_parts(chat.attributes.get("gen_ai.output.messages"))):
        call_id = part.get("id")
        name = part.get("name")
        if part.get("type") != "tool_call" or not isinstance(call_id, str) or not call_id or (
                isinstance(name, str) and name in outputs):
            continue
        yield number, part, (call_id, str(name), msgspec.json.encode(part.get("arguments")).decode())


def _output_tools(chat: Span) -> set[str]:
    """The names of a chat's output tools, which pydantic-ai lists in its own attribute."""
    parameters = parse_result(chat.attributes.get("model_request_parameters"))[0]
    tools = parameters.get("output_tools") if isinstance(parameters, dict) else None
    return {tool["name"] for tool in tools if isinstance(tool, dict) and isinstance(tool.get("name"), str)} \
        if isinstance(tools, list) else set()


def _once(spans: list[Span]) -> list[Span]:
    """The spans without repeats. A live export writes a span as it starts and again as it ends
    (same id, start, kind, tool and call id, and name or a name made longer, the first without an
    end): one span, the ended record (else the later, if it says all the earlier said) in the
    first one's place, with the attributes only the earlier had. An exporter that retries writes
    the same span twice (same id, name, times, attributes and events): once. Spans that only share
    an id (another name or content) are kept, as different spans, rather than one of them dropped
    unsaid."""
    kept: list[Span] = []
    place: dict[tuple[str, int], list[int]] = {}   # (span id, start) -> where its records are in `kept`
    for span in spans:
        places = place.setdefault((span.span_id, span.start), [])
        twin = next((at for at in places if _same(kept[at], span)), None)
        if twin is None:
            places.append(len(kept))
            kept.append(span)
            continue
        earlier = kept[twin]
        says_all = earlier.attributes.keys() <= span.attributes.keys()
        if span.ended or (not earlier.ended and says_all):   # the ended record, else the later saying all
            if not says_all:   # (what only the earlier said stays)
                span.attributes = {**earlier.attributes, **span.attributes}
            span.order = earlier.order
            kept[twin] = span
    return kept


def _same(earlier: Span, later: Span) -> bool:
    """Whether two records of one span id and start are one span: written as it started and
    again (either not ended; of one kind, tool and call id, as far as both say, and one name or
    the name as renamed), or the same record twice."""
    if earlier.log or later.log:
        return False
    if not earlier.ended or not later.ended:   # what both say the span is (its kind, tool, call id) must agree
        return (earlier.name == later.name or _renamed(earlier, later)) and all(
            earlier.attributes.get(key) == later.attributes.get(key) for key in _IDENTITY
            if key in earlier.attributes and key in later.attributes)
    return earlier.name == later.name and (earlier.end, earlier.error, earlier.message, earlier.attributes) == (
        later.end, later.error, later.message, later.attributes) and [
        (event.name, event.at, event.attributes) for event in earlier.events] == [
        (event.name, event.at, event.attributes) for event in later.events]


def _renamed(earlier: Span, later: Span) -> bool:
    """Whether two records can be one span renamed while it ran (OpenTelemetry allows it):
    `execute_tool` made `execute_tool refund`, the one name the other with more words after it.
    Only when the name is not what says the tool: a tool span without a tool attribute is the
    tool its name says, and another name is another tool's."""
    if _named_tool(earlier) or _named_tool(later):
        return False
    shorter, longer = sorted((earlier.name, later.name), key=len)
    return longer.startswith(shorter + " ")


def _named_tool(span: Span) -> bool:
    """Whether a span is a tool step whose tool only its name gives."""
    attributes = span.attributes
    tool_step = attributes.get(OPERATION) == "execute_tool" or attributes.get("openinference.span.kind") == "TOOL"
    return tool_step and not attributes.get("gen_ai.tool.name") and not attributes.get("tool.name")


_OLDER_EVENTS = frozenset({"gen_ai.tool.message", "gen_ai.choice"})
"""The events of a tool span by which Strands, unless told to follow the latest conventions,
gives the call's arguments (`gen_ai.tool.message`'s `content`) and its result (`gen_ai.choice`'s
`message`)."""
_MERGED = "(merged tools)"
"""The tool name of Google ADK's `execute_tool (merged)` span: the responses of calls the model
made together, each of which has its own `execute_tool` span beside it."""
_NO_CALL_ID = "<not specified>"
"""The call id Google ADK writes for a tool that raised (it takes the id from the response there
is none of): no id, so the span's."""


_IDENTITY = (OPERATION, "gen_ai.tool.name", "gen_ai.tool.call.id", "openinference.span.kind", "tool.name",
             "tool.id")
"""The attributes that say what a span is: a record as it started and one as it ended must agree on them."""


def _parts(messages: Any) -> Iterator[dict[str, Any]]:
    """The parts of GenAI messages (JSON text or a list of `{role, parts}`)."""
    if isinstance(messages, str):
        messages = parse_result(messages)[0]
    if not isinstance(messages, list):
        return
    for message in messages:
        parts = message.get("parts") if isinstance(message, dict) else None
        if isinstance(parts, list):
            for part in parts:
                if isinstance(part, dict):
                    yield part
