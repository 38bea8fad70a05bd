"""An MCP server's answers that the SDK cannot read, for `record --mcp` (`mcp_backend`).

The SDK reads a server's stdout line by line; a line it cannot read (not JSON, not JSON-RPC,
nested too deep for its parser, a lone surrogate escape) it hands to the session's message
handler and skips, and the request that line answered waits on until its deadline: 10 s at
start-up, 30 s a call, then "no answer". Most such lines are no answer at all (a banner, log
lines on stdout, even a flood of them, or the late answer of a call given up on), and the answer
may still come after them. So a line counts only when it looks like the answer to the request
waiting (a JSON-RPC response: `jsonrpc`, that request's `id`, a `result` or an `error`): the
request then has `UNREAD_GRACE` seconds more for a readable answer, and without one its error
says that the answer could not be read, and why (the parser's words, never the line: it may
hold what `--redact` keeps out).

    unread = Unread()                        # one per server
    ClientSession(..., message_handler=unread.handle); unread.session = session
    portal.call(unread.waiting, session.initialize, seconds)   # TimeoutError, sooner after such a line
    unread.since(seen)                       # (seen = unread.cuts before the wait) why it was cut, or None
"""
from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable
from typing import Any

from agent_invariants._safe import inert

__all__ = ("UNREAD_GRACE", "Unread")

UNREAD_GRACE = 1.0
"""Seconds a pending request waits for a readable answer after an answer of its server that the
SDK could not read (it may have been the late answer of an earlier request)."""


class Unread:
    """The answers of one server that the SDK could not read, and the request waiting meanwhile,
    whose wait such an answer cuts to `UNREAD_GRACE` seconds. (`waiting` and `handle` run on the
    event loop of the sessions; `cuts` and `said` are read from `record`'s thread after a wait.)"""

    def __init__(self) -> None:
        self.cuts = 0          # the waits cut short so far
        self.reason = ""       # why the SDK could not read the answer that cut the last
        self.session: Any = None   # the server's session, once there is one
        self._scope: Any = None   # the deadline of the request waiting for its answer, if one is

    async def waiting(self, call: Callable[[], Any], seconds: float) -> Any:
        """`call()`, given `seconds` (TimeoutError after them, or sooner after an unreadable answer)."""
        import anyio

        with anyio.fail_after(seconds) as scope:
            self._scope = scope
            try:
                return await call()
            finally:
                self._scope = None

    async def handle(self, message: Any) -> None:
        """The session's message handler: a transport fault is a line the SDK could not read."""
        if not isinstance(message, Exception) or self._scope is None:
            return
        reason = _unread_answer(message, _waiting_ids(self.session))
        if reason is None:
            return   # a stray line (a banner, a log line, a late answer): skipped, as the SDK skips it
        import anyio

        cut = anyio.current_time() + UNREAD_GRACE
        if cut < self._scope.deadline:
            self._scope.deadline = cut
            self.cuts += 1
            self.reason = reason

    def since(self, seen: int) -> str | None:
        """What to say of a wait that began when `cuts` was `seen`: why it was cut short, or None
        when no unreadable answer cut it."""
        return f"the server's answer could not be read ({self.reason})" if self.cuts > seen else None


def _waiting_ids(session: Any) -> set[Any] | None:
    """The ids of the requests the session waits an answer for, or None when the SDK does not
    tell. (Its dispatcher's table of them, which is not public API: `mcp` is held below 3.)"""
    waiting = getattr(getattr(session, "_dispatcher", None), "_pending", None)
    return set(waiting) if isinstance(waiting, dict) else None


def _unread_answer(exc: Exception, waiting: set[Any] | None) -> str | None:
    """Why the SDK could not read a line that looks like the answer to a request `waiting` (a
    JSON-RPC response: `jsonrpc`, the request's `id`, a `result` or an `error`); None for any other
    line (a log line in JSON may well hold an `id` and a `result`, and the late answer of a request
    given up on is no answer to the one waiting). The line is the input of pydantic's error, as
    text when it is no JSON the SDK can parse, else decoded; in text, any `"id"` member stands for
    the line's (numbers and numeric strings alike, as the SDK takes them), and a letter or digit
    may be written as an escape (`"\\u0069d"`), as JSON allows. The line itself is not
    quoted: it is the server's answer, which may hold what `--redact` keeps out of every file, in
    forms (escaped, cut) that text redaction cannot be sure of; the parser's words say where."""
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return None
    try:
        first = errors()[0]
    except Exception:  # noqa: BLE001 - (not pydantic's: no line to look at)
        return None
    line = first.get("input")
    if isinstance(line, dict):
        if "jsonrpc" in line and "id" in line and ("result" in line or "error" in line) \
                and (waiting is None or _request_id(line["id"]) in waiting):
            return "not a JSON-RPC response the SDK takes"
        return None
    line = _letters_read(str(line))
    if line.lstrip().startswith("{") and '"jsonrpc"' in line and '"id"' in line \
            and ('"result"' in line or '"error"' in line) \
            and (waiting is None or not waiting.isdisjoint(_ids_in(line))):
        return inert(str(first.get("msg", "")), 200)
    return None


def _letters_read(text: str) -> str:
    """`text` with each `\\uXXXX` escape of an ASCII letter or digit read (they never change
    what the JSON around them means)."""
    if "\\u00" not in text:
        return text
    return _ESCAPED_LETTER.sub(_letter, text)


def _letter(found: re.Match[str]) -> str:
    char = chr(int(found.group(2), 16))
    return found.group(1) + char if char.isascii() and char.isalnum() else found.group(0)


_ESCAPED_LETTER = re.compile(r"(?<!\\)((?:\\\\)*+)\\u00([3-7][0-9a-fA-F])")


def _ids_in(text: str) -> set[Any]:
    """The values of the `"id"` members written in `text` (JSON that may not parse)."""
    found: set[Any] = set()
    for written in _ID_MEMBER.findall(text):
        with contextlib.suppress(ValueError):
            found.add(_request_id(json.loads(written)))
    return found


_ID_MEMBER = re.compile(r'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')


def _request_id(value: Any) -> Any:
    """A request id as the SDK compares it: a string of an integer is that integer."""
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            return int(value)
    return value if isinstance(value, (int, str)) else None
