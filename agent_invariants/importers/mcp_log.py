"""`mcp-log`: logs of MCP sessions, one JSON-RPC message per line (§7, §10 point 35).

    {"ts": "2026-03-02T09:14:00.123456Z", "session": "s1", "dir": "c2s", "msg": {"jsonrpc": "2.0", ...}}

`dir` is who sent the message: `c2s` the client, `s2c` the server. Each session is one run (its
id is the session). What becomes what:

- the `initialize` request (else the session's first message): `run.start`;
- a `tools/call` request: `tool.call` {tool: `params.name`, call_id: `<session>:<id>`, args:
  `params.arguments`};
- its reply (the other direction, same id): `tool.result` {result: `structuredContent`, else
  `content` (one text item: parsed as JSON when it is), ok: false on an error reply or `isError`};
- `notifications/cancelled` of a pending call: `tool.cancelled` (and no result);
- `elicitation/create` during a call, answered: `approval.granted` {call_id of that call, args: the
  content, approved: whether it was accepted};
- a `tools/list` reply: `tool.listing` {data.tools} (an error reply lists nothing: skipped);
- the end of the log: `run.completed`.

Other requests and notifications, replies that answer no request, and elicitations outside a call
are skipped and counted.

A reply pairs with its request on (session, requesting side, id): both sides number their own
requests, so the server's elicitation 1 is not the client's initialize 1. A reply written before
its request (a proxy logging each direction from its own thread), at a time not before it, is its
reply all the same. A grant comes during its call, after the `tool.call`: a profile with
`hoist_elicitation: true` moves it to just before the call (marked `data.hoisted`). Under protocol
versions that continue a call with `requestState` / `inputResponses` instead of an elicitation
request, the continuation is the same call, and each accepted input response a grant of it.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec

from agent_invariants.errors import TraceError
from agent_invariants.importers.common import (
    END,
    FIRST,
    LAST,
    Timeline,
    as_object,
    duration_ms,
    iso_nanos,
    parse_args,
    parse_result,
)
from agent_invariants.importers.records import Record, string_field
from agent_invariants.importers.run import Context, ImportedRun, Runs
from agent_invariants.importers.sniff import refuse_other
from agent_invariants.jsontext import show
from agent_invariants.match.canonical import canonical_key
from agent_invariants.match.equality import as_double

__all__ = ("FORMAT", "RUN_IDS", "runs")

FORMAT = "mcp-log"
_SIDES = ("c2s", "s2c")


def runs(records: Iterator[Record], context: Context) -> Iterator[ImportedRun]:
    sessions: Runs[_Session] = Runs(context, lambda session_id: _Session(context, session_id))
    for record in records:
        at, session_id, side, message = _fields(record, context.file)
        if context.wants(session_id):
            session = sessions.get(session_id, record.line)
            session.take(at, side, message, record.line)
        else:
            context.seen(session_id)
        for finished_id, finished in sessions.ended(record.line):
            yield context.finished(finished_id, finished.finish())
    for finished_id, finished in sessions.rest():
        yield context.finished(finished_id, finished.finish())


RUN_IDS = string_field("session")
"""How a first pass finds the session a line belongs to (see `records.last_lines`): a key named
`session` deeper in a message only makes the session end later, never sooner."""


def _got(value: dict[str, Any], key: str) -> str:
    """What a record holds at `key`, as its messages show it: a missing key is not a null."""
    return show(value[key]) if key in value else "nothing (the key is missing)"


def _fields(record: Record, file: str) -> tuple[int, str, str, dict[str, Any]]:
    value = record.value
    if not isinstance(value, dict) or not {"ts", "session", "dir", "msg"} <= value.keys():
        refuse_other(value, FORMAT, file, record.line)
    if not isinstance(value, dict):
        raise TraceError(file, record.line, "expected an MCP log record {ts, session, dir, msg}")
    stamp = value.get("ts")
    at = iso_nanos(stamp) if isinstance(stamp, str) else None
    if at is None:
        raise TraceError(file, record.line, f"$.ts: expected an ISO 8601 time, got {_got(value, 'ts')}")
    session = value.get("session")
    if not isinstance(session, str) or not session:
        raise TraceError(file, record.line,
                         f"$.session: expected a session id (a string), got {_got(value, 'session')}")
    side = value.get("dir")
    if side not in _SIDES:
        raise TraceError(file, record.line, f'$.dir: expected "c2s" or "s2c", got {_got(value, "dir")}')
    message = value.get("msg")
    if not isinstance(message, dict):
        raise TraceError(file, record.line, f"$.msg: expected a JSON-RPC message (an object), got {_got(value, 'msg')}")
    return at, session, side, message


class _Call:
    """A tools/call waiting for its reply. Its `key` is (session, requesting side, JSON-RPC id, the
    call's number in its session): a session may use an id again once it was answered, and the
    timeline must not take the second call's events for the first's."""

    __slots__ = ("args", "at", "call_id", "done", "key", "line", "same", "tool")

    def __init__(self, key: tuple[str, str, object, int], tool: str, args: Any, at: int, line: int,
                 call_id: str) -> None:
        self.key, self.tool, self.args, self.at, self.line = key, tool, args, at, line
        self.call_id = call_id   # (the id as its request wrote it: the key holds what it compares as)
        self.done = False
        self.same: tuple[str, object] | None = None   # (tool, arguments as JSON-equal values meet), once indexed


class _Pending:
    """The calls of a session still waiting for their reply, oldest first. The latest is the one an
    elicitation belongs to; a continuation carries on the latest of the same name and arguments.
    Replies may come in any order, so a call leaves in one step (a list would search and shift: a
    log answering 50,000 calls in reverse took 32 s). The index by name and arguments is built when
    a session first continues a call: most logs never do, and their calls are not keyed."""

    def __init__(self) -> None:
        self._calls: dict[_Call, None] = {}   # in the order they were made
        self._by_args: dict[tuple[str, object], dict[_Call, None]] | None = None

    def add(self, call: _Call) -> None:
        self._calls[call] = None
        if self._by_args is not None:
            _index(self._by_args, call)

    def remove(self, call: _Call) -> None:
        if call not in self._calls:
            return   # answered or cancelled already
        del self._calls[call]
        if self._by_args is None or call.same is None:
            return   # not indexed
        same = self._by_args[call.same]
        del same[call]
        if not same:
            del self._by_args[call.same]

    def latest(self) -> _Call | None:
        return next(reversed(self._calls), None)

    def continued(self, tool: str, args: Any) -> _Call | None:
        """The latest pending call of `tool` whose arguments are JSON-equal to `args` (§2: `1` is
        `1.0`, `true` is not `1`)."""
        if self._by_args is None:
            self._by_args = {}
            for call in self._calls:
                _index(self._by_args, call)
        same = self._by_args.get((tool, canonical_key(args)))
        return next(reversed(same)) if same else None


def _index(by_args: dict[tuple[str, object], dict[_Call, None]], call: _Call) -> None:
    call.same = (call.tool, canonical_key(call.args))
    by_args.setdefault(call.same, {})[call] = None



class _Session:
    """One session being read: its requests waiting for replies, and its timeline."""

    def __init__(self, context: Context, session_id: str) -> None:
        self.context, self.id = context, session_id
        self.timeline = Timeline(FORMAT, context.file, session_id, digits=6)
        self.started = False
        self.last = 0
        self.last_line = 0
        # (side, id) -> the requests waiting for a reply under that id, as (method, what it is): a
        # client that reuses an id before its reply has several, answered nearest first (§10.3)
        self.requests: dict[tuple[str, object], list[tuple[str, Any]]] = {}
        self.pending = _Pending()                                        # calls without a reply, oldest first
        self.calls = 0                                                   # calls made so far
        # (side, id) -> replies read before any request they answer, as (time, message, line): a
        # proxy logging each direction from its own thread may write a reply before its request
        self.early: dict[tuple[str, object], list[tuple[int, dict[str, Any], int]]] = {}

    def take(self, at: int, side: str, message: dict[str, Any], line: int) -> None:
        self.last = max(self.last, at)
        self.last_line = line
        method = message.get("method")
        if "id" in message and (isinstance(message["id"], bool) or not isinstance(message["id"], str | int | float)):
            if message["id"] is None and not isinstance(method, str):   # an error reply to a request that
                self.context.skip()                                     # could not be read: it answers none
                return
            raise TraceError(self.context.file, line, "$.msg.id: expected a string or a number, as MCP ids are "
                             f"(never null), got {show(message['id'])}")
        if not self.started:
            self.started = True
            self.timeline.add({"type": "run.start"}, at, phase=FIRST, line=line)
        if isinstance(method, str):
            if "id" in message:
                self._request(at, side, method, message, line)
            else:
                self._notification(at, side, method, message, line)
        elif "id" in message and ("result" in message or "error" in message):
            requester = "s2c" if side == "c2s" else "c2s"
            key = (requester, _id_key(message["id"]))
            found = self._answered(key)
            if found is not None:
                self._reply(at, found, message, line)
            else:   # (answered when its request comes, if it is not later than the reply)
                self.early.setdefault(key, []).append((at, message, line))
        else:
            self.context.skip()

    def _request(self, at: int, side: str, method: str, message: dict[str, Any], line: int) -> None:
        params = as_object(message.get("params"))
        key = (side, _id_key(message["id"]))
        if method == "tools/call":
            if not isinstance(message.get("params"), dict):
                raise TraceError(self.context.file, line, "$.msg.params: expected the call's {name, arguments}, got "
                                 f"{show(message.get('params'))}")
            call = self._call(at, side, message, params, line)
            self._waits(key, ("tools/call", call), at)
        elif method == "elicitation/create":
            self._waits(key, ("elicitation", (self._current(), params, message["id"])), at)
        elif method == "tools/list":
            self._waits(key, ("tools/list", None), at)
        elif method == "initialize":
            self._waits(key, ("initialize", None), at)
        else:
            self._waits(key, (method, None), at)
            self.context.skip()

    def _waits(self, key: tuple[str, object], request: tuple[str, Any], at: int) -> None:
        self.requests.setdefault(key, []).append(request)
        early = self.early.get(key)
        if early and early[0][0] >= at:   # its reply was written first, at a later time
            replied, message, line = early.pop(0)
            if not early:
                del self.early[key]
            found = self._answered(key)
            assert found is not None
            self._reply(replied, found, message, line)

    def _answered(self, key: tuple[str, object]) -> tuple[str, Any] | None:
        """The request a reply (or a cancellation) with this side and id answers: the latest of
        those waiting under the id, as a result answers the nearest earlier call (§10.3)."""
        waiting = self.requests.get(key)
        if not waiting:
            return None
        found = waiting.pop()
        if not waiting:
            del self.requests[key]
        return found

    def _call(self, at: int, side: str, message: dict[str, Any], params: dict[str, Any], line: int) -> _Call:
        tool = params.get("name")
        if not isinstance(tool, str) or not tool:   # a call names its tool: there is none to make up
            got = show(tool) if "name" in params else "none"
            raise TraceError(self.context.file, line,
                             f"$.msg.params.name: expected the tool's name (a string), got {got}")
        parsed, raw = parse_args(params.get("arguments"))   # (JSON text holding an object is parsed, §7)
        args = parsed if parsed is not None else raw
        continued = self.pending.continued(tool, args) if ("requestState" in params or "inputResponses" in params) \
            else None
        if continued is not None:
            self._input_responses(at, continued, params, line)
            return continued
        self.calls += 1
        call = _Call((self.id, side, _id_key(message["id"]), self.calls), tool, args, at, line,
                     f"{self.id}:{_id_text(message['id'])}")
        event: dict[str, Any] = {"type": "tool.call", "tool": tool, "call_id": call.call_id}
        if parsed is not None:
            event["args"] = parsed
        elif raw is not None:
            event["data"] = {"raw_args": raw}
        self.timeline.add(event, at, depth=1, line=line, key=call.key)
        self.pending.add(call)
        return call

    def _input_responses(self, at: int, call: _Call, params: dict[str, Any], line: int) -> None:
        responses = params.get("inputResponses")
        items = responses.items() if isinstance(responses, dict) else enumerate(responses) \
            if isinstance(responses, list) else ()
        for name, response in items:
            if isinstance(response, dict):
                self._grant(at, call, response, line, f"input:{name}")

    def _reply(self, at: int, found: tuple[str, Any], message: dict[str, Any], line: int) -> None:
        kind, what = found
        if kind == "tools/call":
            self._result(at, what, message, line)
        elif kind == "elicitation":
            call, params, request_id = what
            result = as_object(message.get("result"))
            if call is not None:
                self._grant(at, call, result, line, request_id)
            else:
                self.context.skip()
        elif kind == "tools/list":
            if "error" in message:
                self.context.skip()   # no listing was given
                return
            result = as_object(message.get("result"))
            tools = result.get("tools")
            self.timeline.add({"type": "tool.listing", "data": {"tools": tools if isinstance(tools, list) else []}},
                              at, phase=END, depth=1, line=line)

    def _result(self, at: int, call: _Call, message: dict[str, Any], line: int) -> None:
        if call.done:
            return
        result = message.get("result")
        if isinstance(result, dict) and ("inputRequests" in result or "requestState" in result) \
                and "content" not in result and "structuredContent" not in result:
            return   # not the answer yet: the call continues with the client's input
        call.done = True
        self.pending.remove(call)
        event: dict[str, Any] = {"type": "tool.result", "tool": call.tool,
                                 "call_id": call.call_id}
        if "error" in message:
            event["ok"] = False
            event["data"] = {"error": message["error"]}
        elif isinstance(result, dict):
            failed = result.get("isError", False)
            if not isinstance(failed, bool):   # neither said nor guessed (§7): what the server meant is unknown
                raise TraceError(self.context.file, line, f"$.msg.result.isError: expected true or false, got "
                                 f"{show(failed)}")
            event["ok"] = not failed
            value, raw = _tool_output(result)
            if value is not _NONE:
                event["result"] = value
            if raw is not None:
                event["data"] = {"raw_result": raw}
        took = duration_ms(call.at, at)
        if took is not None:
            event["duration_ms"] = took
        self.timeline.add(event, at, phase=END, depth=1, line=line, key=call.key)

    def _grant(self, at: int, call: _Call, answer: dict[str, Any], line: int, request_id: object) -> None:
        accepted = answer.get("action") == "accept"
        event: dict[str, Any] = {"type": "approval.granted", "call_id": call.call_id,
                                 "tool": call.tool, "approval_scope": call.tool, "approved": accepted}
        if request_id is not None:
            shown = request_id if isinstance(request_id, str) and request_id.startswith("input:") \
                else f"elicitation:{_id_text(request_id)}"
            event["approval_id"] = f"{self.id}:{shown}"
        content = answer.get("content")
        if isinstance(content, dict):
            event["args"] = content
        if self.context.hoist_elicitation:
            event["data"] = {"hoisted": True}
            order = self.timeline.order_of(call.key)
            self.timeline.add(event, call.at, depth=1, line=line, key=call.key,
                              order=None if order is None else order - 0.5)
        else:   # a reply, like the call's result: at the same instant, file order decides
            self.timeline.add(event, at, phase=END, depth=1, line=line, key=call.key)

    def _notification(self, at: int, side: str, method: str, message: dict[str, Any], line: int) -> None:
        if method != "notifications/cancelled":
            self.context.skip()   # (initialized, progress, message…: counted, as other unused records are)
            return
        params = as_object(message.get("params"))
        requester = side   # the side that sent the request cancels it
        found = self._answered((requester, _id_key(params.get("requestId"))))
        if found is None or found[0] != "tools/call":
            self.context.skip()
            return
        call: _Call = found[1]
        call.done = True
        self.pending.remove(call)
        event: dict[str, Any] = {"type": "tool.cancelled", "tool": call.tool,
                                 "call_id": call.call_id}
        reason = params.get("reason")
        if isinstance(reason, str) and reason:
            event["data"] = {"reason": reason}
        self.timeline.add(event, at, phase=END, depth=1, line=line, key=call.key)

    def _current(self) -> _Call | None:
        """The call an elicitation belongs to: the latest one still waiting for its reply."""
        return self.pending.latest()

    def finish(self) -> Timeline:
        self.context.skip(sum(len(replies) for replies in self.early.values()))   # replies to no request
        self.timeline.add({"type": "run.completed"}, self.last, phase=LAST, line=self.last_line)
        return self.timeline


_NONE: Any = object()


def _tool_output(result: dict[str, Any]) -> tuple[Any, Any]:
    """A tools/call result's value (`structuredContent`, else `content`; one text item read as
    JSON when it is, and one embedded resource whose `mimeType` says `application/json` too,
    point 26) and the raw text kept beside it, if any."""
    if result.get("structuredContent") is not None:
        return result["structuredContent"], None
    content = result.get("content")
    only = content[0] if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict) else {}
    if only.get("type") == "text" and isinstance(only.get("text"), str):
        return parse_result(only["text"])
    resource = only.get("resource") if only.get("type") == "resource" else None
    if isinstance(resource, dict) and isinstance(resource.get("text"), str) \
            and _media_type(resource.get("mimeType")) == "application/json":
        return parse_result(resource["text"], json_text=True)
    if content is None:
        return _NONE, None
    return content, None


def _media_type(mime: object) -> str | None:
    """A MIME type without its parameters, in lower case (`Application/JSON; charset=utf-8`)."""
    return mime.partition(";")[0].strip().lower() if isinstance(mime, str) else None


def _id_key(value: object) -> object:
    """A JSON-RPC id as a key: 1 and "1" are different ids, 1 and 1.0 one (the same JSON
    number, as a proxy that reads and writes JSON may write it; compared as JavaScript holds
    numbers), and `requestId`, which may be anything, as its JSON."""
    if isinstance(value, str):
        return ("str", value)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)):
        return ("number", as_double(value))
    return ("other", _id_text(value))


def _id_text(value: object) -> str:
    """A JSON-RPC id as call ids spell it: a string as it is, anything else as JSON (`7`, `true`)."""
    if isinstance(value, str):
        return value
    try:
        return msgspec.json.encode(value).decode()
    except (TypeError, msgspec.EncodeError):
        return str(value)

