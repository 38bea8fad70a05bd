"""`record --mcp 'SERVER_CMD ARGS'`: real stdio MCP servers answer the tools no fixture names.

Each `--mcp` string is split as a shell would split it (never run through a shell) and started
through the official MCP SDK. The servers start side by side, before the agent starts, and the
`initialize` and paginated `tools/list` of each run under one start-up deadline: a server that
cannot start or answer in time is bad input (exit 2; of several, the first named). A tool is
served by the first server that lists it. Each call is forwarded as `tools/call` under its own
deadline; the result is the call's `structuredContent`, else its `content` blocks, and `isError`,
a JSON-RPC error or the deadline make it `ok: false`. The duration is measured (and left out
under `--fake-clock`, which must give identical traces). A server's output is read as UTF-8 with
invalid bytes replaced (the SDK's strict reading stopped at the first, and every later answer of
that server was lost); what becomes of a line the SDK cannot read is `mcp_unread`'s.

The SDK is asynchronous and `record` is not: the sessions live on an event loop in a thread of
their own (an anyio blocking portal), and `record` waits for each answer there. A server's
stderr is drained by a thread of its own and never mixed into ours; only its last line is shown,
in the error of a server that fails to start (`ModuleNotFoundError: No module named 'mcp'` says
more than "Connection closed"). The SDK ends the servers when the run is over, side by side (it
gives one that does not end a few seconds); what a server started itself is then ended with its
process group (on Linux, where /proc tells which group is the server's), and so is every server
at once when `record` is interrupted meanwhile.

`--write-tool-snapshot F` saves the discovered tools; `--tool-snapshot F` compares them with a
saved snapshot: name, description, input and output schema and annotations, with key order, tool
order and the order of `required`, `enum` and `type` arrays inside schemas ignored. Drift is a
`record.schema_drift` finding naming the tools.
"""
from __future__ import annotations

import contextlib
import functools
import logging
import os
import shlex
import signal
import threading
import time
from collections.abc import Callable, Sequence
from concurrent import futures
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from agent_invariants._safe import inert
from agent_invariants._signals import Terminated
from agent_invariants.contract_source import json_file
from agent_invariants.errors import InputError
from agent_invariants.match.canonical import canonical_text
from agent_invariants.match.subschemas import held
from agent_invariants.output import shown, write
from agent_invariants.record.mcp_unread import Unread

__all__ = ("McpAnswer", "McpBackend", "normalised_tools", "read_snapshot", "snapshot_drift", "snapshot_drift_of",
           "start_servers")

MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024
"""The largest tool snapshot read."""

_UNORDERED = ("required", "enum", "type")
"""Schema keys whose arrays are sets: their order does not count as drift."""


class McpAnswer(NamedTuple):
    ok: bool
    result: Any
    duration_ms: int
    server: int


class McpBackend:
    """The started servers, their sessions and the tools each serves."""

    def __init__(self, commands: list[str], start_timeout_ms: int, call_timeout_ms: int) -> None:
        self.commands = commands
        self.call_timeout = call_timeout_ms / 1000
        self.tools: list[dict[str, Any]] = []      # as listed, each with the index of its server
        self._owner: dict[str, int] = {}
        self._sessions: list[Any] = []
        self._unread: list[Unread] = []   # each server's lines the SDK could not read
        self._exits: list[list[Any]] = []   # each server's context managers, in the order entered
        self._groups: list[int] = []   # the servers' process groups (where /proc tells them)
        self._stderr: list[_StderrTail] = []   # each server's
        self._portal_cm: Any = None
        self._portal: Any = None
        self._closed: dict[int, None] = {}   # the servers whose connection closed during the run, in order
        self._start(start_timeout_ms / 1000)

    def _start(self, seconds: float) -> None:
        try:
            import mcp  # noqa: F401 (to tell that the extra is missing before anything starts)
            from anyio.from_thread import start_blocking_portal
        except ImportError:
            raise InputError("--mcp needs the mcp extra: pip install 'agent-invariants[mcp]'") from None
        servers = [_Starting(command, _split(command)) for command in self.commands]
        self._quiet = _Quiet()   # the SDK logs a server's noise with tracebacks on our stderr: not wanted
        self._portal_cm = start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        deadline = time.monotonic() + seconds
        before = _children()
        threads = [threading.Thread(target=self._start_one, args=(server, deadline), name="mcp-server-start",
                                    daemon=True) for server in servers]
        error: BaseException | None = None
        said = ""
        try:
            for thread in threads:
                thread.start()
            for server, thread in zip(servers, threads, strict=True):   # the first named that fails is told,
                thread.join()                                         # as soon as those before it started
                error = server.error
                if error is not None:
                    said = self._stop_starting(threads, before, server)
                    break
        except BaseException:   # interrupted
            self._stop_starting(threads, before, None)
            self._started(servers, before)
            self.close()
            raise
        self._started(servers, before)
        if error is not None:
            self.close()
            if said and isinstance(error, InputError):
                raise InputError(f"{error}; its stderr ended with: {said}") from None
            raise error   # (an InputError as it is; any other, a fault of ours, goes on up)
        for number, server in enumerate(servers):
            for entry in server.tools:
                self.tools.append({**entry, "server": number})
                self._owner.setdefault(entry["name"], number)

    def _start_one(self, server: _Starting, deadline: float) -> None:
        """Start one server and its session, and list its tools (in a thread of its own, which
        waits on the portal: the servers start side by side)."""
        from mcp import ClientSession, StdioServerParameters, stdio_client

        argv = server.argv
        try:
            params = StdioServerParameters(command=argv[0], args=argv[1:], encoding_error_handler="replace")
            server.stderr = stderr = _StderrTail()
            transport = self._portal.wrap_async_context_manager(stdio_client(params, errlog=stderr.file))
            try:
                streams = self._enter(server, transport)
            finally:
                stderr.started()
            server.session = session = self._enter(server, self._portal.wrap_async_context_manager(
                ClientSession(streams[0], streams[1], message_handler=server.unread.handle)))
            server.unread.session = session
            self._within(session.initialize, deadline, server, "initialize")
            cursor = None
            while True:
                listed = self._within(functools.partial(session.list_tools, params=_page(cursor)), deadline,
                                      server, "tools/list")
                server.tools.extend(tool.model_dump(by_alias=True, exclude_none=True, mode="json")
                                    for tool in listed.tools)
                cursor = getattr(listed, "next_cursor", None)
                if not cursor:
                    break
        except BaseException as exc:   # told by the thread that waits for them all
            server.error = exc

    def _stop_starting(self, threads: list[threading.Thread], before: set[int], failed: _Starting | None) -> str:
        """End every server at once (one failed to start, or `record` was interrupted: no grace,
        the deadline is the user's), so that the threads still starting end now, not at the
        deadline; the last line on the failed server's stderr."""
        while True:   # (a server may start between a look at the children and the kill)
            self._groups.extend(_children() - before)   # the SDK starts each server leading a group
            self._kill()
            starting = [thread for thread in threads if thread.ident is not None and thread.is_alive()]
            if not starting:
                break
            starting[0].join(0.1)
        return "" if failed is None or failed.stderr is None else failed.stderr.last_line()

    def _started(self, servers: list[_Starting], before: set[int]) -> None:
        """Take over what the servers that started hold: their sessions, the context managers to
        leave (in the order entered, server by server), their stderr, their process groups."""
        self._groups.extend(_children() - before)   # the SDK starts each server leading a group
        for server in servers:
            self._sessions.append(server.session)
            self._unread.append(server.unread)
            self._exits.append(server.exits)
            if server.stderr is not None:
                self._stderr.append(server.stderr)

    @staticmethod
    def _enter(server: _Starting, manager: Any) -> Any:
        try:
            value = manager.__enter__()
        except Exception as exc:
            raise InputError(f"--mcp {shlex.quote(server.command)}: cannot start: {_reason(exc)}") from None
        server.exits.append(manager)
        return value

    def _within(self, call: Any, deadline: float, server: _Starting, what: str) -> Any:
        command = shlex.quote(server.command)
        unread = server.unread
        seen = unread.cuts
        try:
            return self._portal.call(unread.waiting, call, max(0.001, deadline - time.monotonic()))
        except TimeoutError:
            cut = unread.since(seen)
            if cut is not None:
                raise InputError(f"--mcp {command}: no answer to {what}: {cut}") from None
            raise InputError(f"--mcp {command}: no answer to {what} before the start-up deadline ran out "
                             "(--mcp-start-timeout-ms)") from None
        except Exception as exc:
            cut = unread.since(seen)
            before = "" if cut is None else f"; before that, {cut}"
            raise InputError(f"--mcp {command}: {what} failed: {_reason(exc)}{before}") from None

    def serves(self, tool: str) -> bool:
        return tool in self._owner

    def call(self, tool: str, args: Any, waiting: Callable[[int], None] | None = None) -> McpAnswer:
        """Forward one call; the answer as the trace records it. While it is pending, `waiting(fd)`
        is called again and again (it waits a moment, reading the agent, and wakes when `fd`, a
        pipe rung as the answer comes, can be read): what it raises (the run timer ran out,
        `record` was interrupted) cancels the call and goes on up."""
        number = self._owner[tool]
        session, unread = self._sessions[number], self._unread[number]
        seen = unread.cuts
        started = time.monotonic()
        asked = functools.partial(session.call_tool, tool, args if isinstance(args, dict) else None)
        pending = self._portal.start_task_soon(unread.waiting, asked, self.call_timeout)
        # the answer rings the bell as it comes, in the portal's thread, which wakes the wait and
        # times the answer: a wait that looked only now and then passed on each answer up to a look
        # later, and counted that in the tool's duration
        bell = _Bell()
        pending.add_done_callback(bell.ring)
        try:
            while not pending.done():
                if waiting is None:
                    futures.wait([pending])
                else:
                    waiting(bell.read)
        finally:
            if not pending.done():
                pending.cancel()
            bell.close()
        took = round(((time.monotonic() if bell.rung is None else bell.rung) - started) * 1000)
        try:
            answer = pending.result()
        except TimeoutError:
            cut = unread.since(seen)
            if cut is not None:
                return McpAnswer(False, {"error": f"no answer: {cut}"}, took, number)
            return McpAnswer(False, {"error": f"no answer within {round(self.call_timeout * 1000)} ms"},
                             took, number)
        except Exception as exc:   # a JSON-RPC error, or the server gone
            if _connection_closed(exc):
                self._closed[number] = None
            cut = unread.since(seen)
            return McpAnswer(False, {"error": _reason(exc) + ("" if cut is None else f"; before that, {cut}")},
                             took, number)
        dumped = answer.model_dump(by_alias=True, exclude_none=True, mode="json")
        result = dumped.get("structuredContent", dumped.get("content"))
        return McpAnswer(not dumped.get("isError", False), result, took, number)

    def lost(self) -> list[str]:
        """A line for each server whose connection closed during the run (it died, or ended):
        its calls were answered `ok: false`, which the rules may not notice."""
        return [f"--mcp {shlex.quote(self.commands[number])}: the server closed its connection during the run; "
                "every call of its tools after that was answered ok: false (Connection closed)"
                for number in self._closed]

    def close(self) -> None:
        """End the sessions and the servers (the SDK closes their stdin, then ends them), side by
        side: the SDK gives a server that does not end a few seconds, each. An interrupt (Ctrl-C,
        SIGTERM) meanwhile ends them at once, and is spent: what `record` was doing goes on (after
        a run, its report is still written: the run is over, only the wait for the servers was)."""
        threads = [threading.Thread(target=_leave, args=(exits,), name="mcp-server-end", daemon=True)
                   for exits in self._exits if exits]
        try:
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        except (KeyboardInterrupt, Terminated):
            self._kill()
            for thread in threads:
                if thread.ident is not None:
                    thread.join(_ENDED_AFTER_KILL)
        finally:
            self._exits.clear()
            if self._portal_cm is not None:
                with contextlib.suppress(Exception):
                    self._portal_cm.__exit__(None, None, None)
                self._portal_cm = None
            self._quiet.restore()
            self._kill()   # what a server started itself, and left behind
            for stderr in self._stderr:
                stderr.close()

    def _kill(self) -> None:
        """End the servers' process groups at once (the SDK's own ending gives each a few seconds)."""
        for group in self._groups:
            with contextlib.suppress(OSError):
                os.killpg(group, signal.SIGKILL)
        self._groups.clear()


_ENDED_AFTER_KILL = 5.0
"""Seconds a server's session has to end once its process group is killed (it ends at once)."""


def _leave(managers: list[Any]) -> None:
    """Leave one server's context managers, the last entered first."""
    for manager in reversed(managers):
        with contextlib.suppress(Exception):
            manager.__exit__(None, None, None)


class _Starting:
    """One `--mcp` server while it starts: what its thread makes of it."""

    def __init__(self, command: str, argv: list[str]) -> None:
        self.command, self.argv = command, argv
        self.exits: list[Any] = []        # its context managers, entered, in order
        self.session: Any = None
        self.stderr: _StderrTail | None = None
        self.tools: list[dict[str, Any]] = []   # as listed, in order
        self.error: BaseException | None = None
        self.unread = Unread()


class _StderrTail:
    """A server's stderr: a pipe drained by a thread, so a chatty server never blocks, of which
    the last `KEPT` bytes are kept, to explain a server that fails to start."""

    KEPT = 4096

    def __init__(self) -> None:
        read, write = os.pipe()
        self.file = os.fdopen(write, "w", encoding="utf-8")   # the server's stderr (the SDK's errlog)
        self._read = read
        self._tail = bytearray()
        self._thread = threading.Thread(target=self._drain, name="mcp-server-stderr", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        while True:
            try:
                chunk = os.read(self._read, 65536)
            except OSError:
                return
            if not chunk:
                return
            self._tail += chunk
            del self._tail[:-self.KEPT]

    def started(self) -> None:
        """The server has its copy of the pipe (or failed to start): ours closes, so that the
        drain ends when the server does."""
        self.file.close()

    def last_line(self) -> str:
        """The last line the server wrote, once it is gone or after a moment, escaped and cut."""
        self._thread.join(timeout=1)
        lines = [line for line in bytes(self._tail).decode("utf-8", "replace").splitlines() if line.strip()]
        return inert(lines[-1].strip(), 300) if lines else ""

    def close(self) -> None:
        self.file.close()
        self._thread.join(timeout=1)
        if not self._thread.is_alive():
            os.close(self._read)


class _Quiet:
    """The SDK's logger silenced while the servers run (and as it was afterwards)."""

    def __init__(self) -> None:
        self.logger = logging.getLogger("mcp")
        self.level, self.propagate = self.logger.level, self.logger.propagate
        self.logger.setLevel(logging.CRITICAL + 1)
        self.logger.propagate = False

    def restore(self) -> None:
        self.logger.setLevel(self.level)
        self.logger.propagate = self.propagate


def start_servers(commands: Sequence[str], start_timeout_ms: int, call_timeout_ms: int,
                  resources: contextlib.ExitStack) -> McpBackend:
    """The `--mcp` servers, started, and closed when `resources` closes."""
    backend = McpBackend(list(commands), start_timeout_ms, call_timeout_ms)
    resources.callback(backend.close)
    return backend


def snapshot_drift_of(backend: McpBackend, write_to: str | None, saved: dict[str, Any] | None,
                      scrub: Callable[[Any], Any] | None = None) -> list[str]:
    """Save the servers' tools (`--write-tool-snapshot`), compare them with a saved snapshot
    (`--tool-snapshot`, read by `read_snapshot`): the names of the tools that drifted. With
    `scrub` (`--redact`), the values it removes are out of both (a token a server repeats in a
    description: the file is one `record` writes, and a new token is no drift)."""
    now = normalised_tools(backend.tools)
    if scrub is not None:
        now = scrub(now)
    if write_to is not None:
        write(msgspec.json.format(msgspec.json.encode({"version": 1, "tools": now}), indent=2).decode() + "\n",
              Path(write_to))
    return [] if saved is None else snapshot_drift(saved, now)


_SNAPSHOT_FIELDS = ("name", "description", "inputSchema", "outputSchema", "annotations")
"""What a snapshot keeps of each tool (`normalised_tools`)."""


def read_snapshot(path: str) -> dict[str, Any]:
    """The tools of a snapshot `--write-tool-snapshot` wrote, by name, as `snapshot_drift`
    compares them. Anything it would not have written (an unknown key, an entry named other than
    its key) is bad input, not drift: the one line names the file and the JSON path."""
    label = f"--tool-snapshot {shown(path)}"
    saved = json_file(path, MAX_SNAPSHOT_BYTES, label, "snapshot")
    if not isinstance(saved, dict) or saved.get("version") != 1 or not isinstance(saved.get("tools"), dict):
        raise InputError(f"{label}: not a tool snapshot ({{\"version\": 1, \"tools\": {{...}}}}, as "
                         "--write-tool-snapshot writes)")
    unknown = next((key for key in saved if key not in ("version", "tools")), None)
    if unknown is not None:
        raise InputError(f"{label}: $.{shown(unknown)}: unknown key (a snapshot holds version and tools)")
    for name, entry in saved["tools"].items():
        where = f"{label}: $.tools.{shown(name)}"
        if not isinstance(entry, dict):
            raise InputError(f"{where}: must be an object (the tool's {', '.join(_SNAPSHOT_FIELDS)})")
        unknown = next((key for key in entry if key not in _SNAPSHOT_FIELDS), None)
        if unknown is not None:
            raise InputError(f"{where}.{shown(unknown)}: unknown key (a tool holds {', '.join(_SNAPSHOT_FIELDS)})")
        if "name" in entry and entry["name"] != name:
            raise InputError(f"{where}.name: must be the tool's name, {shown(name)}")
    return {name: _schemas_unordered(entry) for name, entry in saved["tools"].items()}


def _children() -> set[int]:
    """The pids of this process's children that lead their own process group, where /proc tells
    them (Linux); elsewhere none, and what a server starts may outlive the run."""
    me = os.getpid()
    found: set[int] = set()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me and int(fields[2]) == int(entry):   # ppid is us, pgid is itself
            found.add(int(entry))
    return found


def normalised_tools(tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The tools as a snapshot compares them: by name, with only the compared fields, schema
    arrays that are sets sorted."""
    found: dict[str, Any] = {}
    for tool in tools:
        entry = {key: tool[key] for key in ("name", "description", "inputSchema", "outputSchema", "annotations")
                 if key in tool}
        found.setdefault(tool["name"], _schemas_unordered(entry))
    return dict(sorted(found.items()))


def _schemas_unordered(entry: Any) -> Any:
    """A tool's entry with the set-like arrays of its schemas sorted (a saved snapshot's too:
    someone may have edited it, or another version written it)."""
    if not isinstance(entry, dict):
        return entry
    return {key: _unordered(value) if key in ("inputSchema", "outputSchema") else value for key, value in entry.items()}


def snapshot_drift(saved: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """The names of the tools added, removed or changed since the snapshot, sorted."""
    names = set(saved) | set(now)
    return sorted(name for name in names
                  if name not in saved or name not in now or canonical_text(saved[name]) != canonical_text(now[name]))


def _unordered(schema: Any) -> Any:
    """A schema with the set-like arrays of it and its subschemas sorted."""
    if not isinstance(schema, dict):
        return schema
    return {key: _unordered_at(key, value) for key, value in schema.items()}


def _unordered_at(key: str, value: Any) -> Any:
    """The value of a schema's keyword `key`: its set-like arrays sorted, its subschemas too,
    anything else kept as it is."""
    if key in _UNORDERED and isinstance(value, list):
        return sorted(value, key=canonical_text)
    holds = held(key, value)
    if holds == "list":
        return [_unordered(schema) for schema in value]
    if holds == "one":
        return _unordered(value)
    if holds == "map":
        return {name: _unordered(schema) for name, schema in value.items()}
    return value


def _split(command: str) -> list[str]:
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise InputError(f"--mcp {command!r}: {exc}") from None
    if not argv:
        raise InputError("--mcp: the server command is empty")
    return argv


def _page(cursor: str | None) -> Any:
    if cursor is None:
        return None
    from mcp import types

    return types.PaginatedRequestParams(cursor=cursor)


def _connection_closed(exc: BaseException) -> bool:
    """Whether the SDK said the server's connection closed: its error code and its words, as it
    raises that error itself. The code alone is JSON-RPC's first server error (-32000), which
    servers send of their own for anything, and go on answering."""
    from mcp_types import CONNECTION_CLOSED

    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _connection_closed(exc.exceptions[0])
    return getattr(exc, "code", None) == CONNECTION_CLOSED and getattr(exc, "message", None) == "Connection closed"


class _Bell:
    """A pipe that a call's answer rings once, from the portal's thread, so that the wait for it,
    which selects on the agent's pipes too, wakes at once; `rung` is when (the answer's time).
    Rung after it is closed, the pipe stays silent (its descriptors' numbers may be another
    file's by then)."""

    def __init__(self) -> None:
        self.read, self._write = os.pipe()
        self._lock = threading.Lock()
        self._open = True
        self.rung: float | None = None

    def ring(self, _: Any = None) -> None:
        """(A done callback of the call's future, which it is handed.)"""
        with self._lock:
            if self.rung is None:
                self.rung = time.monotonic()
            if self._open:
                os.write(self._write, b"\0")   # (one byte into an empty pipe: never blocks)

    def close(self) -> None:
        with self._lock:
            self._open = False
            os.close(self.read)
            os.close(self._write)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _reason(exc.exceptions[0])
    return str(exc) or type(exc).__name__


