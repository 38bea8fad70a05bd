"""The MCP wire: one JSON-RPC message per line, read and checked before the SDK sees it.

The SDK's own stdio transport drops lines it cannot decode; here every line gets an answer. A line
that is not JSON is answered `-32700 Parse error`, one that is not a JSON-RPC 2.0 message (a
batch, no `"jsonrpc": "2.0"`, an `id` that is neither a string nor an integer, `params` that is
not an object) `-32600 Invalid Request`, with the request's id when it can be read, else `null`.
A `tools/call`, `prompts/get` or list request whose params lack `name` or hold one of the wrong
type is answered `-32602 Invalid params` naming it (`$.params.arguments: must be an object`).

A request is at most `MAX_REQUEST_BYTES` (32 MiB) of JSON, nests at most `MAX_REQUEST_NESTING`
(504) levels deep, so that events and contracts nest as deep as in files (500 levels, counted
from the event or the contract), and holds at most `MAX_REQUEST_VALUES` (4,000,000) commas,
colons and opening brackets, which bounds the objects that decoding it builds (they take up to
20 times the size of their JSON). Past a limit it is answered `-32600` without being decoded (its
id read from its first 64 KiB), and a line past the size limit is never held in memory whole.
Lone surrogate escapes (`"\\ud800"`) read as U+FFFD, as in trace files, so every reply is valid
UTF-8. Nothing here needs the SDK.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, NamedTuple

import msgspec

from agent_invariants import _collector as collector
from agent_invariants._js import replace_lone_surrogates
from agent_invariants.jsontext import MAX_NESTING, nested_too_deep, syntax_problem, too_deep_at
from agent_invariants.validation import json_type

__all__ = (
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "MAX_REQUEST_BYTES",
    "MAX_REQUEST_NESTING",
    "MAX_REQUEST_VALUES",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "Lines",
    "Oversized",
    "RequestError",
    "read_message",
    "usable_id",
)

MAX_REQUEST_BYTES = 32 << 20   # about 100,000 events of 300 bytes; past it, use the command line
MAX_REQUEST_NESTING = MAX_NESTING + 4   # an event in a request: {params: {arguments: {events: [event]}}}
MAX_REQUEST_VALUES = 4_000_000   # each takes up to ~60 bytes decoded: 100,000 events of up to 40 values each
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
_CHUNK = 1 << 16
_HEAD = 1 << 16


class RequestError(Exception):
    """A line that is no message the server can hand on; `reply()` is the JSON-RPC error
    response that answers it (with the request's id when one can be read, else null)."""

    def __init__(self, code: int, message: str, request_id: int | str | None = None, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id
        self.data = data

    def reply(self) -> dict[str, Any]:
        error = {"code": self.code, "message": self.message, **({} if self.data is None else {"data": self.data})}
        return {"jsonrpc": "2.0", "id": self.request_id, "error": error}


class Oversized(NamedTuple):
    """A line longer than the limit: its first `_HEAD` bytes at most (to find its id), its size
    and the limit."""

    head: bytes
    size: int
    limit: int


_NEWLINES = re.compile(rb"\n+")


class Lines:
    """The lines of what `read(size)` returns (without their newline), none held longer than
    `limit` bytes: the rest of a longer line is read and dropped, and it comes out `Oversized`."""

    def __init__(self, read: Callable[[int], bytes], limit: int = MAX_REQUEST_BYTES) -> None:
        self._read = read
        self._limit = limit
        self._buffer = bytearray()

    def next(self) -> bytes | Oversized | None:
        """The next line, or None at the end of input. Empty lines are passed over in one step,
        however many there are (a gigabyte of them took minutes one by one)."""
        scanned = 0
        while True:
            if self._buffer[:1] == b"\n":
                blanks = _NEWLINES.match(self._buffer)
                assert blanks is not None
                del self._buffer[:blanks.end()]
                scanned = 0
                continue
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
        with collector.paused():   # two thirds of the time of a large request, with it on
            message: dict[str, Any] | None = _DECODER.decode(data)   # `_check_envelope` makes sure
    except msgspec.DecodeError as exc:
        raise RequestError(PARSE_ERROR, f"Parse error: {syntax_problem(exc)}") from None
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


def _too_deep(data: bytes) -> RequestError:
    return RequestError(INVALID_REQUEST, f"Invalid Request: {nested_too_deep(MAX_REQUEST_NESTING)}",
                        _top_level_id(data[:_HEAD]))


def _check_envelope(message: Any) -> None:
    """A JSON-RPC 2.0 request, notification or response, or `RequestError` (MCP sends no batches)."""
    if isinstance(message, list):
        raise RequestError(INVALID_REQUEST, "Invalid Request: batches are not supported; send one "
                                            "JSON-RPC message per line" if message else
                                            "Invalid Request: an empty array")
    if not isinstance(message, dict):
        raise RequestError(INVALID_REQUEST, f"Invalid Request: expected a JSON-RPC message object, got "
                                            f"{json_type(message)}")
    request_id = usable_id(message.get("id"))
    if message.get("jsonrpc") != "2.0":
        raise RequestError(INVALID_REQUEST, 'Invalid Request: $.jsonrpc: must be "2.0"', request_id)
    if "id" in message and request_id is None:
        raise RequestError(INVALID_REQUEST, "Invalid Request: $.id: must be a string or an integer")
    if "method" in message:
        if "result" in message or "error" in message:   # the SDK would read it as a response, unanswered
            raise RequestError(INVALID_REQUEST, "Invalid Request: $: a request (`method`) with a `result` "
                                                "or `error` of a response", request_id)
        if not isinstance(message["method"], str):
            raise RequestError(INVALID_REQUEST, "Invalid Request: $.method: must be a string", request_id)
        if message.get("params") is not None and not isinstance(message["params"], dict):
            raise RequestError(INVALID_REQUEST, "Invalid Request: $.params: must be an object", request_id)
        if request_id is not None and message["method"] in _PARAMS:
            _check_params(_PARAMS[message["method"]], message.get("params") or {}, request_id)
    elif request_id is None or ("result" in message) == ("error" in message):
        raise RequestError(INVALID_REQUEST, "Invalid Request: $: neither a request (no `method`) nor a "
                                            "response (`id` and one of `result` and `error`)", request_id)
    elif "result" in message and not isinstance(message["result"], dict):
        raise RequestError(INVALID_REQUEST, "Invalid Request: $.result: must be an object", request_id)
    elif "error" in message and not _is_error_object(message["error"]):
        raise RequestError(INVALID_REQUEST, "Invalid Request: $.error: must be an object with an integer "
                                            "`code` and a string `message`", request_id)


_PARAMS: dict[str, dict[str, tuple[str, bool]]] = {
    "tools/call": {"name": ("string", True), "arguments": ("object", False)},
    "prompts/get": {"name": ("string", True), "arguments": ("object of strings", False)},
    "tools/list": {"cursor": ("string", False)},
    "prompts/list": {"cursor": ("string", False)},
    "initialize": {"protocolVersion": ("string", True), "capabilities": ("object", True),
                   "clientInfo": ("object", True)},
}
"""The params of the requests whose shape the SDK checks with one message naming nothing
("Invalid request parameters"): each param's type and whether it is required. (Of `initialize`,
only the top level: the rest is the client library's business, and a hand-written one is rare.)"""


def _check_params(expected: dict[str, tuple[str, bool]], params: dict[str, Any], request_id: int | str) -> None:
    """`Invalid params` naming the first param that is missing or of the wrong type."""
    for name, (kind, required) in expected.items():
        value = params.get(name)
        if value is None:
            if required:
                raise RequestError(INVALID_PARAMS, f"Invalid params: $.params.{name}: required ({kind})", request_id)
            continue
        fits = isinstance(value, str) if kind == "string" else isinstance(value, dict)
        if not fits:
            article = "an" if kind.startswith("object") else "a"
            raise RequestError(INVALID_PARAMS, f"Invalid params: $.params.{name}: must be {article} {kind}, got "
                                               f"{json_type(value)}", request_id)
        if kind == "object of strings":
            for key, member in value.items():
                if not isinstance(member, str):
                    raise RequestError(INVALID_PARAMS, f"Invalid params: $.params.{name}.{key}: must be a "
                                                       f"string, got {json_type(member)}", request_id)


def _is_error_object(error: Any) -> bool:
    return (isinstance(error, dict) and isinstance(error.get("code"), int) and not isinstance(error["code"], bool)
            and isinstance(error.get("message"), str))


def usable_id(value: Any) -> int | str | None:
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
                return usable_id(msgspec.json.decode(replace_lone_surrogates(text)))
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

