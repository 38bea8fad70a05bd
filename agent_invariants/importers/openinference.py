"""`openinference`: OpenTelemetry spans with the OpenInference conventions (Arize Phoenix and its
instrumentations), as OTLP JSON lines (§7, §10 points 26, 28, 30-33, 36).

- the outermost `AGENT` span (several side by side, as LangGraph writes one per model turn: the
  span around them all; else the earliest root span): `run.start`; `run.completed`, or
  `run.failed` when it or an agent span inside it fails (or an agent's turn: a `CHAIN` right under
  an `AGENT`, where the Agents SDK's instrumentation puts the error that ended the run), or a
  guardrail fires;
- `openinference.span.kind = TOOL`: `tool.call` {tool: `tool.name` (else the span name), call_id,
  args: `input.value`} at its start, `tool.result` {result: `output.value`, ok} at its end; an
  `output.value` that is a LangChain ToolMessage (LangGraph's tools return one) gives its
  `content` as the result, its `tool_call_id` as the call id, and `status: "error"` fails it;
  a tool's args, when `input.value` holds no object (LangChain writes a tool's one argument
  alone, `"A1"`) and its call id is the model's, are those the model gave that id, whether or
  not the tool returned (one that raised has no ToolMessage; only a ToolMessage's tool, whose
  `input.value` LangChain leaves out when the model gave no arguments, gets them without one);
  the `input.value` they stand in for is kept as written in `data.raw_args`, as §7 keeps a
  non-object;
- a `GUARDRAIL` span whose tripwire fired: `control.stop` {reason: `guardrail:<name>`} at its end;
- a `TOOL` span named `handoff to <agent>` without `tool.name`: `agent.handoff` {data.to} (one named
  `handoff` alone, whose target is unknown: `agent.handoff` without `to`).

The call id is `tool.id`, else the ToolMessage's; else the id the model gave the call: the
`tool_calls` of the nearest earlier LLM span under the same parent or an ancestor
(`llm.output_messages.<i>.message.tool_calls.<j>.tool_call.id`, indexes read as numbers), matched
by tool name and order (point 28: not one in another branch, such as LangGraph's model inside the
agent node's span, beside the tools node's: a tool there that raised, with no ToolMessage to say its
id, has its span id); else the span id. A tool fails when its span's status is ERROR or it holds
an `exception` event.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from typing import Any

from agent_invariants.importers.common import END, ModelTurn, cut_text, parse_args, parse_result, tool_message
from agent_invariants.importers.otel import OPERATION, RUN_IDS, GenAiTrace, failed, handoff_target, span_error
from agent_invariants.importers.otlp import Span, Tree, read_traces
from agent_invariants.importers.records import Record
from agent_invariants.importers.run import Context, ImportedRun
from agent_invariants.importers.sniff import OPENINFERENCE_KIND

__all__ = ("FORMAT", "RUN_IDS", "runs")

FORMAT = "openinference"
KIND = OPENINFERENCE_KIND
_INDEXED = re.compile(r"^llm\.output_messages\.(\d+)\.message\.tool_calls\.(\d+)\.tool_call\."
                      r"(id|function\.name|function\.arguments)$")


def runs(records: Iterator[Record], context: Context) -> Iterator[ImportedRun]:
    for trace_id, spans in read_traces(records, context, FORMAT):
        yield context.finished(trace_id, _Trace(context, trace_id, spans).timeline())


def runs_of_either(records: Iterator[Record], context: Context, sniffed: str) -> Iterator[ImportedRun]:
    """`auto` on OTLP spans: each trace read in its own flavour (a Collector's file may hold the
    traces of a service instrumented by OpenInference beside those of one that follows the GenAI
    conventions). A trace is of the flavour whose tool steps it holds; without tool steps, of the
    one whose markers it holds (`openinference.span.kind`, `gen_ai.operation.name`); with both
    (traced twice), or neither, of the flavour `sniffed` from the file's first record."""
    for trace_id, spans in read_traces(records, context, sniffed):
        reader = _Trace if _flavour(spans, sniffed) == FORMAT else GenAiTrace
        yield context.finished(trace_id, reader(context, trace_id, spans).timeline())


def _flavour(spans: list[Span], sniffed: str) -> str:
    """The flavour a trace is read in (see `runs_of_either`)."""
    inference = any(_kind(span) == "TOOL" for span in spans)
    genai = any(span.attributes.get(OPERATION) == "execute_tool" for span in spans)
    if inference == genai:   # tool steps of both, or of neither: the markers
        inference = any(KIND in span.attributes for span in spans)
        genai = any(OPERATION in span.attributes for span in spans)
    if inference == genai:
        return sniffed
    return FORMAT if inference else "otel"


def _kind(span: Span) -> str:
    kind = span.attributes.get(KIND)
    return kind.upper() if isinstance(kind, str) else ""


class _Trace(GenAiTrace):
    source_format = FORMAT
    other_convention = ("otel", OPERATION, "execute_tool")

    def __init__(self, context: Context, trace_id: str, spans: list[Span]) -> None:
        super().__init__(context, trace_id, spans)
        self.model_ids = _model_ids(self.tree)

    def kind(self, span: Span) -> str | None:
        return _kind(span) or None

    def is_agent(self, span: Span) -> bool:
        return _kind(span) == "AGENT"

    def is_tool(self, span: Span) -> bool:
        return _kind(span) == "TOOL"

    def ends_run(self, span: Span) -> bool:
        parent = self.tree.parent(span)
        if _kind(span) == "GUARDRAIL":
            return _tripped(span, parent)
        turn = _kind(span) == "CHAIN" and parent is not None and _kind(parent) == "AGENT"   # an agent's turn
        return super().ends_run(span) or (turn and failed(span))

    def failure_text(self, span: Span) -> str:
        if _kind(span) == "GUARDRAIL" and _tripped(span, self.tree.parent(span)):
            return cut_text(f"guardrail:{_guardrail_name(span)}", 500)
        return span_error(span)

    def span(self, span: Span, depth: int) -> None:
        kind = _kind(span)
        attributes = span.attributes
        target = handoff_target(span.name) if kind == "TOOL" and not attributes.get("tool.name") else None
        if target is not None:
            self.handoff(span, depth, target)
        elif kind == "TOOL":
            tool = _tool_name(span)
            output = attributes.get("output.value")
            # LangChain's tools return a ToolMessage (`"type": "tool"`): text is parsed here only then
            message = tool_message(parse_result(output)[0] if isinstance(output, str) and '"tool"' in output
                                   else output)
            written = attributes.get("input.value")
            if message is not None:
                call_id = attributes.get("tool.id") or message.get("tool_call_id") or self.model_ids.get(span.order)
                args = self._args(written, call_id, returned=True)
                self.tool(span, depth, tool=tool, call_id=call_id, args=args,
                          raw_args=None if args is written else written,
                          result=message.get("content"), has_result=True,
                          says_failed=message.get("status") == "error")
                return
            mime = attributes.get("output.mime_type")
            call_id = attributes.get("tool.id") or self.model_ids.get(span.order)
            args = self._args(written, call_id, returned=False)
            self.tool(span, depth, tool=tool, call_id=call_id, args=args, raw_args=None if args is written else written,
                      result=output, has_result="output.value" in attributes,
                      json_result=isinstance(mime, str) and "json" in mime)
        elif kind == "GUARDRAIL" and _tripped(span, self.tree.parent(span)):
            self.out.add({"type": "control.stop", "reason": cut_text(f"guardrail:{_guardrail_name(span)}", 500)},
                         span.end, phase=END, depth=depth, line=span.line, span_id=span.span_id)

    def _args(self, written: Any, call_id: Any, *, returned: bool) -> Any:
        """A LangChain tool's args: its `input.value` when that holds an object; else (a tool of one
        argument gets it alone, `"A1"`) the arguments the model gave the call with its id. A tool
        that `returned` a ToolMessage is LangChain's for sure: its model's call written without
        arguments had none (`{}`). Any other takes only arguments the model wrote, and only in
        place of an `input.value` that is there (§7 reads the args there)."""
        if parse_args(written)[0] is not None or not isinstance(call_id, str):
            return written   # an object, or no model's call to ask
        if written is None and not returned:
            return None
        asked = self.asked(call_id)
        if asked is None or (asked is _UNWRITTEN and not returned):
            return written
        return {} if asked is _UNWRITTEN else asked

    def asked(self, call_id: str) -> Any:
        """The arguments the model gave the call with this id: its LLM spans' tool calls (None: no
        such call; `_UNWRITTEN`: one written without arguments, which LangChain's instrumentation
        leaves out when empty, unless the span says it left attributes out)."""
        if self._asked is None:
            self._asked = {}
            for span in self.tree.spans:
                if _kind(span) == "LLM":
                    for found, _, arguments in _model_calls(span):
                        if arguments is not None:   # (written arguments win, in whichever span)
                            self._asked[found] = arguments
                        elif not span.dropped:
                            self._asked.setdefault(found, _UNWRITTEN)
        return self._asked.get(call_id)

    def after(self) -> None:
        return None


def _model_ids(tree: Tree) -> dict[int, str]:
    """The id the model gave each TOOL span without `tool.id` (point 28), by span order: the
    `tool_calls` of the nearest LLM span that ended before the tool started, under the same
    parent or an ancestor, taken by tool name in the order the tools started (file order is the
    order they ended, which swaps parallel calls)."""
    llms: dict[int, list[Span]] = {}   # parent (its order, -1 for none) -> its LLM spans, by end
    for span in tree.spans:
        if _kind(span) == "LLM":
            parent = tree.parent(span)
            llms.setdefault(-1 if parent is None else parent.order, []).append(span)
    for found in llms.values():
        found.sort(key=lambda span: (span.end, span.order))
    ends = {parent: [span.end for span in found] for parent, found in llms.items()}
    turns: dict[int, ModelTurn] = {}   # LLM span (its order) -> its calls, and those a tool took
    ids: dict[int, str] = {}
    tools = [span for span in tree.spans if _kind(span) == "TOOL"]
    with_llms = _Scopes(tree, llms)
    for span in sorted(tools, key=lambda span: (span.start, span.order)):
        name = _tool_name(span)
        own = span.attributes.get("tool.id")
        parent = tree.parent(span)
        for scope in [None] if parent is None else with_llms.up(parent):
            key = -1 if scope is None else scope.order
            before = bisect_right(ends.get(key, []), span.start)
            if not before:
                continue
            model = llms[key][before - 1]
            turn = turns.get(model.order)
            if turn is None:
                turn = turns[model.order] = ModelTurn((call_id, name) for call_id, name, _ in _model_calls(model))
            answered = turn.take(name, str(own) if own else None)
            if answered is not None and not own:
                ids[span.order] = answered
            break
    return ids


class _Scopes:
    """The spans, from one up through its ancestors, that have LLM spans as children: a tool's
    model turn is looked for only there. Each span's nearest such one is remembered, so that
    tools deep under a chain of spans do not each walk the whole chain."""

    def __init__(self, tree: Tree, llms: dict[int, list[Span]]) -> None:
        self.tree, self.llms = tree, llms
        self._nearest: dict[int, Span | None] = {}   # span (its order) -> the nearest at or above it

    def up(self, span: Span) -> Iterator[Span]:
        found = self._at_or_above(span)
        while found is not None:
            yield found
            parent = self.tree.parent(found)
            found = None if parent is None else self._at_or_above(parent)

    def _at_or_above(self, span: Span) -> Span | None:
        nearest, llms, path = self._nearest, self.llms, []
        current: Span | None = span
        while current is not None and current.order not in nearest and current.order not in llms:
            path.append(current)
            current = self.tree.parent(current)
        found = None if current is None else nearest.get(current.order, current)
        for passed in path:
            nearest[passed.order] = found
        return found


def _model_calls(span: Span) -> list[tuple[str, str, Any]]:
    """(call id, tool name, arguments or None) of each tool call in an LLM span's output messages,
    in order (the flattened `llm.output_messages.<i>...` keys, indexes compared as numbers)."""
    found: dict[tuple[int, int], dict[str, Any]] = {}
    for key, value in span.attributes.items():
        match = _INDEXED.match(key)
        if match:
            found.setdefault((int(match.group(1)), int(match.group(2))), {})[match.group(3)] = value
    return [(str(parts["id"]), str(parts.get("function.name")), parts.get("function.arguments"))
            for _, parts in sorted(found.items()) if isinstance(parts.get("id"), str)]


_UNWRITTEN: Any = object()
"""A model's tool call written without arguments (`_Trace.asked`)."""


def _tool_name(span: Span) -> str:
    """A TOOL span's tool: its `tool.name`, else its span name (a blank name, or one that is no
    string, a producer's slip, is no name)."""
    named = span.attributes.get("tool.name")
    return named if isinstance(named, str) and named.strip() else span.name


def _tripped(span: Span, parent: Span | None) -> bool:
    """Whether a guardrail's tripwire fired. The OpenAI Agents instrumentation leaves the GUARDRAIL
    span itself empty and OK: the trip shows in its parent's error, `Guardrail tripwire triggered:
    {'guardrail': '<name>'}`. A guardrail that passed is no stop."""
    if failed(span) or span.attributes.get("guardrail.triggered") is True:
        return True
    message = parent.message if parent is not None else None
    return bool(message) and _TRIPPED.search(message or "") is not None and \
        f"'guardrail': {span.name!r}" in (message or "")


_TRIPPED = re.compile(r"[Gg]uardrail tripwire triggered")


def _guardrail_name(span: Span) -> str:
    name = span.attributes.get("guardrail.name")
    return name if isinstance(name, str) and name else span.name
