"""One recorded run: the agent's messages handled one at a time, each written before it is answered.

The harness reads a message, writes the events it becomes (table below), sends the reply, and only
then takes the next message, so pipelined messages are handled in order and the trace on disk is
always ahead of what the agent has heard.

What each message writes to the trace, and what the agent gets back:

- at the start: `run.start {data: {input, protocol: 1}}`; the agent gets `run.start {protocol,
  run_id, input}`;
- `tool.call`: the call as sent, then either `tool.result {call_id, tool, ok, result,
  duration_ms?, data: {fixture} | {replay_seq} | {fixture_miss}}` (and an `outcome.observed` when
  the fixture case has `observe`), answered `tool.result {call_id, ok, result}`; or, denied,
  `tool.denied {call_id, tool, reason, data: {rule_ids, rule_ids_left_out?}}`, answered `tool.denied {call_id, reason}`;
- `approval.request`: `approval.requested`, then `approval.granted {..., data: {attested_by:
  "harness"}}`; answered `approval.decision {approval_id, approved}`;
- `approval.granted`, `approval.revoked`: as sent, with `data.attested_by: "agent"`;
- `outcome.observed`: with `evidence_class: "self_attestation"` and `data: {attested_by: "agent",
  claimed_evidence_class?}`, whatever it claimed;
- `agent.message`: `{claims_completion?, confidence?, data: {text?}}`;
- `control.stop`, `telemetry.*`: as sent;
- `run.completed`, `run.failed`: as sent, with the run's `duration_ms` (`run.failed` also
  `data.attested_by: "agent"`); the agent's stdin is then closed.

When the harness ends the run (a timeout, an exit or a signal before the terminal message, a
protocol error, an output cap, an interrupt), it ends the agent's group and appends
`run.failed {reason, duration_ms, data: {attested_by: "harness", offending?, limit?}}`.
"""
from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import msgspec

from agent_invariants.events import Event
from agent_invariants.record.agent import GRACE_SECONDS, Agent, Limit, Line
from agent_invariants.record.enforce import Enforcer
from agent_invariants.record.fixtures import MAX_MESSAGE_BYTES, Fixtures
from agent_invariants.record.mcp_backend import McpBackend
from agent_invariants.record.protocol import Message, ProtocolError, parse_message, reply
from agent_invariants.record.replay import Replay
from agent_invariants.record.writer import LineTooLong, TraceWriter
from agent_invariants.report import RecordFinding

__all__ = ("Ending", "Session")

_EXCERPT = 200
_POLL = 0.05   # seconds between looks at the agent's exit, the clocks and interrupts while nothing comes


class Ending(NamedTuple):
    """How the run ended: `completed`/`failed` (the agent's terminal message) or the harness's reason."""

    ended_by: str
    by_harness: bool
    exit_status: int | None


class _End(Exception):
    """The harness ends the run (`reason`), after the offending line or the cap, if any."""

    def __init__(self, reason: str, offending: dict[str, Any] | None = None, limit: str | None = None) -> None:
        super().__init__(reason)
        self.reason, self.offending, self.limit = reason, offending, limit


class Session:
    """Runs one agent to its end and writes its trace."""

    def __init__(self, writer: TraceWriter, fixtures: Fixtures | None, replay: Replay | None,
                 enforcer: Enforcer | None, run_timeout_ms: int, idle_timeout_ms: int,
                 backend: McpBackend | None = None, dialect: str = "native") -> None:
        self.writer = writer
        self.dialect = dialect
        self.fixtures = fixtures
        # numbers each call for the fixtures' call_index; without fixtures, per tool all the same
        self._numbering = fixtures if fixtures is not None else Fixtures(None, [], [])
        self.replay = replay
        self.backend = backend
        self.enforcer = enforcer
        self.run_timeout = run_timeout_ms / 1000
        self.idle_timeout = idle_timeout_ms / 1000
        self.findings: list[RecordFinding] = []
        self.denied: set[int] = set()          # seqs of the calls answered with tool.denied
        self._call_ids: set[str] = set()
        self._approval_ids: set[str] = set()
        self._terminal: str | None = None      # the agent's terminal message type, once sent
        self._interrupted = False
        self.reason: str | None = None         # why the harness ended the run, if it did

    def run(self, start: Callable[[], Agent], input_value: Any) -> tuple[Ending, Agent]:
        """Start the agent and handle it to the end. Whatever happens (a trace that cannot be
        written raises TraceWriteError), nothing of the agent is left running."""
        agent = start()
        restore = self._catch_interrupts()
        try:
            begun = time.monotonic()
            self.run_deadline = begun + self.run_timeout
            self.idle_deadline = begun + self.idle_timeout
            self.writer.write("run.start", {}, {"input": input_value, "protocol": 1})
            if self.backend is not None:   # what the real servers offer, as the agent starts
                self._listing(self.backend.tools)
            agent.send(self._reply("run.start", protocol=1, run_id=self.writer.run_id, input=input_value))
            try:
                self._loop(agent)
            except _End as end:
                agent.end_group(keep_reading=False)
                self._fail(end)
        finally:
            restore()
            agent.end_group(keep_reading=False)
        if self.reason is not None:
            ended_by = self.reason
        else:
            ended_by = "completed" if self._terminal == "run.completed" else "failed"
        return Ending(ended_by, self.reason is not None, agent.process.returncode), agent

    def _loop(self, agent: Agent) -> None:
        """Handle messages until the agent has exited after its terminal message. Raises _End
        for every ending the harness decides before that."""
        leader_gone_at: float | None = None
        while True:
            in_grace = leader_gone_at is not None
            if agent.blank_line_at + self.idle_timeout > self.idle_deadline:   # point 78: any complete line
                self.idle_deadline = agent.blank_line_at + self.idle_timeout
            self._check_clocks(run=not in_grace, idle=not in_grace)
            if agent.sending:   # the agent has not read its last reply yet
                self._send_rest(agent)
                continue
            if agent.lines:
                item = agent.next_line()
                self._take(item, agent)
                self.idle_deadline = time.monotonic() + self.idle_timeout   # read, handled, answered
                continue
            if agent.stdout_done:
                self._after_eof(agent)
                return
            if leader_gone_at is None and agent.exited() is not None:
                leader_gone_at = time.monotonic()   # end what it left behind, which may hold stdout
                if agent.group_alive():
                    agent.signal_group(signal.SIGTERM)
            elif leader_gone_at is not None and time.monotonic() - leader_gone_at > GRACE_SECONDS:
                agent.end_group(keep_reading=True)
                continue
            agent.wait(self._until_deadline())

    def _send_rest(self, agent: Agent) -> None:
        """Wait for the agent to take (more of) its reply; the idle clock restarts once it is sent."""
        agent.wait(self._until_deadline())
        if not agent.sending:
            self.idle_deadline = time.monotonic() + self.idle_timeout

    def _after_eof(self, agent: Agent) -> None:
        """stdout is closed: wait for the agent's exit, and judge it."""
        eof_at = time.monotonic()
        while agent.exited() is None:
            self._check_clocks()
            if self._terminal is None and time.monotonic() - eof_at > GRACE_SECONDS:
                raise _End("protocol:stdout_closed")
            agent.wait(self._until_deadline())
        status = agent.exited()
        assert status is not None
        agent.end_group(keep_reading=False)   # the leader is gone: end whatever it left behind
        if self._terminal is None or status != 0:
            raise _End(_exit_reason(status))

    def _check_clocks(self, *, run: bool = True, idle: bool = True) -> None:
        """End the run on an interrupt, or when a timer that runs now ran out: neither during the
        kill grace (the agent has exited, what it left gets 2 s), not the idle one while the
        harness itself takes time to answer. Both at once: `timeout:run` wins."""
        if self._interrupted:
            raise _End("interrupted")
        now = time.monotonic()
        if run and now >= self.run_deadline:
            raise _End("timeout:run")
        if idle and now >= self.idle_deadline:
            raise _End("timeout:idle")

    def _until_deadline(self) -> float:
        return max(0.0, min(_POLL, self.run_deadline - time.monotonic(), self.idle_deadline - time.monotonic()))

    def _take(self, item: Line | Limit, agent: Agent) -> None:
        if isinstance(item, Limit):
            raise _End("output_limit", limit=item.kind)
        try:
            message = parse_message(item.text, self.dialect)
        except ProtocolError as exc:
            if self._terminal is not None:
                raise _End("protocol:after_terminal", _offending(item, exc.message_type)) from None
            raise _End(f"protocol:{exc.detail}", _offending(item, exc.message_type)) from None
        if self._terminal is not None:
            raise _End("protocol:after_terminal", _offending(item, message.type))
        handle = _HANDLERS.get(message.type, Session._as_sent)
        try:
            handle(self, message, agent)
        except ProtocolError as exc:
            raise _End(f"protocol:{exc.detail}", _offending(item, message.type)) from None
        except LineTooLong:   # (what the harness adds to a message at the cap, past the 8 KiB it leaves)
            raise _End("output_limit", _offending(item, message.type), limit="line") from None

    # --- the messages -------------------------------------------------------------------------

    def _tool_call(self, message: Message, agent: Agent) -> None:
        """Record the call, then answer it: denied (--enforce), else from the baseline (--replay),
        a server (--mcp, for the tools no fixture names), the fixtures, or as a miss. Every call
        counts, however it is answered: for the fixtures' call_index and the replay's occurrences."""
        fields = message.fields
        call_id, tool, args = fields["call_id"], fields["tool"], fields.get("args")
        _first_use(self._call_ids, call_id, "duplicate_call_id")
        call = self.writer.write("tool.call", fields, message.data)
        call_index = self._numbering.count(tool)
        replayed = None if self.replay is None else self.replay.answer(tool, args)
        denial = None
        if self.enforcer is not None:
            denial = self.enforcer.judge(self.writer.judged, msgspec.json.decode(self.writer.last_line, type=Event))
        if denial is not None:
            self.denied.add(call["seq"])
            self.writer.write("tool.denied", {"call_id": call_id, "tool": tool, "reason": denial.reason},
                              denial.data())
            agent.send(self._reply("tool.denied", call_id=call_id, reason=denial.reason))
            return
        if replayed is not None:
            self._result(call_id, tool, replayed.ok, replayed.result, replayed.duration_ms,
                         {"replay_seq": replayed.seq})
            for outcome in replayed.outcomes:
                self.writer.write("outcome.observed", {**outcome, "call_id": call_id}, {"attested_by": "harness"})
            agent.send(self._reply("tool.result", call_id=call_id, ok=replayed.ok, result=replayed.result))
            return
        if self.backend is not None and self.backend.serves(tool) and (
                self.fixtures is None or self.fixtures.fixture_for(tool) is None):   # fixtures win for their tools
            served = self.backend.call(tool, args, waiting=lambda answered: self._wait_answering(agent, answered))
            size = len(msgspec.json.encode(served.result))
            if size > MAX_MESSAGE_BYTES:   # the server's fault, not the agent's: the run tests less than it should
                served = served._replace(ok=False, result={"error": "the server's result is larger than a trace line "
                                                                     f"can carry ({MAX_MESSAGE_BYTES:,} bytes)"})
                self.findings.append(RecordFinding(
                    code="record.result_too_large", level="error", seq=call["seq"], call_id=call_id, tool=tool,
                    message=f"MCP server {served.server} answered call {call_id} of {tool} with {size:,} bytes of "
                            f"JSON, more than a trace line can carry ({MAX_MESSAGE_BYTES:,}); the agent got ok: "
                            "false in its place."))
            self._result(call_id, tool, served.ok, served.result,
                         None if self.writer.clock.fake else served.duration_ms, {"mcp": {"server": served.server}})
            agent.send(self._reply("tool.result", call_id=call_id, ok=served.ok, result=served.result))
            return
        answer = None if self.fixtures is None else self.fixtures.answer(tool, args, call_index)
        if answer is None:
            result = {"error": "no fixture"}
            self._result(call_id, tool, False, result, None, {"fixture_miss": True})
            self.findings.append(RecordFinding(
                code="record.fixture_miss", level="error", seq=call["seq"], call_id=call_id, tool=tool,
                call_index=call_index,
                message=f"No fixture answers call {call_id} of {tool} (call_index {call_index}); the agent got "
                        "ok: false, {\"error\": \"no fixture\"}."))
            agent.send(self._reply("tool.result", call_id=call_id, ok=False, result=result))
            return
        if answer.hang:
            return   # a tool that never answers: the call stays without a result
        duration = answer.duration_ms
        if answer.delay_ms is not None:
            self._pause(agent, answer.delay_ms / 1000)
            duration = answer.delay_ms if duration is None else duration
        self._result(call_id, tool, answer.ok, answer.result, duration, {"fixture": answer.provenance})
        if answer.observe is not None:
            outcome_id, verdict = answer.observe
            self.writer.write("outcome.observed", {"outcome_id": outcome_id, "verdict": verdict,
                                                   "evidence_class": "configured_verifier", "call_id": call_id},
                              {"attested_by": "harness"})
        agent.send(self._reply("tool.result", call_id=call_id, ok=answer.ok, result=answer.result))

    def _listing(self, tools: list[dict[str, Any]]) -> None:
        """The `tool.listing` event: every tool as listed, or, past a trace line, their names
        (and past that, their count)."""
        shorter = [{"name": tool["name"], "server": tool["server"]} for tool in tools]
        for data in ({"tools": tools}, {"tools": shorter, "schemas_left_out": True}, {"tool_count": len(tools)}):
            try:
                self.writer.write("tool.listing", {}, data)
                return
            except LineTooLong:
                continue

    def _reply(self, kind: str, **fields: Any) -> bytes:
        return reply(kind, self.dialect, **fields)

    def _wait_answering(self, agent: Agent, answered: int) -> None:
        """A moment of a server's answer (cut short when `answered` can be read: it has come): an
        interrupt or the run timer ends the run meanwhile (the call is then cancelled), the idle
        timer does not run, the agent's output is still read."""
        self._check_clocks(idle=False)
        agent.wait(min(_POLL, max(0.0, self.run_deadline - time.monotonic())), also=answered)

    def _pause(self, agent: Agent, seconds: float) -> None:
        """Wait `seconds` (a slow tool) while the agent's output is still read; an interrupt or the
        run timer ends the run meanwhile, the idle timer does not run (the harness is answering)."""
        until = time.monotonic() + seconds
        while (left := until - time.monotonic()) > 0:
            self._check_clocks(idle=False)
            agent.wait(min(_POLL, left, max(0.0, self.run_deadline - time.monotonic())))

    def _result(self, call_id: str, tool: str, ok: bool, result: Any, duration_ms: Any, data: dict[str, Any]) -> None:
        fields = {"call_id": call_id, "tool": tool, "ok": ok, "result": result}
        if duration_ms is not None:
            fields["duration_ms"] = duration_ms
        self.writer.write("tool.result", fields, data)

    def _approval_request(self, message: Message, agent: Agent) -> None:
        fields = message.fields
        approval_id, tool, args = fields["approval_id"], fields["tool"], fields.get("args")
        _first_use(self._approval_ids, approval_id, "duplicate_approval_id")
        requested = self.writer.write("approval.requested", fields, message.data)
        granted: dict[str, Any] = {"approval_id": approval_id, "tool": tool}
        if args is not None:
            granted["args"] = args
        data: dict[str, Any] = {"attested_by": "harness"}
        replayed = None if self.replay is None else self.replay.grant(tool, args)
        decided = None if replayed is not None or self.fixtures is None else self.fixtures.decide(tool, args)
        source = replayed or decided
        if source is None:
            approved = False
            data["fixture_miss"] = True
            self.findings.append(RecordFinding(
                code="record.approval_miss", level="error", seq=requested["seq"], tool=tool,
                message=f"No approvals entry decides request {approval_id} for {tool}; it was denied."))
        else:
            approved = source.approved
            if source.approval_scope is not None:
                granted["approval_scope"] = source.approval_scope
            if source.approver is not None:
                granted["approver"] = source.approver
        granted["approved"] = approved
        self.writer.write("approval.granted", granted, data)
        agent.send(self._reply("approval.decision", approval_id=approval_id, approved=approved))

    def _attested_by_agent(self, message: Message, agent: Agent) -> None:
        self.writer.write(message.type, message.fields, {**(message.data or {}), "attested_by": "agent"})

    def _outcome(self, message: Message, agent: Agent) -> None:
        fields = dict(message.fields)
        data = {**(message.data or {}), "attested_by": "agent"}
        claimed = fields.pop("evidence_class", None)
        if claimed is not None:
            data["claimed_evidence_class"] = claimed
        fields["evidence_class"] = "self_attestation"
        self.writer.write("outcome.observed", fields, data)

    def _agent_message(self, message: Message, agent: Agent) -> None:
        fields = dict(message.fields)
        text = fields.pop("text", None)
        data = message.data
        if text is not None:
            data = {**(data or {}), "text": text}
        self.writer.write("agent.message", fields, data)

    def _as_sent(self, message: Message, agent: Agent) -> None:
        self.writer.write(message.type, message.fields, message.data)

    def _terminal_message(self, message: Message, agent: Agent) -> None:
        fields = dict(message.fields)
        elapsed = self.writer.clock.elapsed_ms()
        if elapsed is not None:
            fields["duration_ms"] = elapsed
        data = message.data
        if message.type == "run.failed":
            data = {**(data or {}), "attested_by": "agent"}
        self.writer.write(message.type, fields, data)
        self._terminal = message.type
        agent.close_stdin()

    # --- the end ------------------------------------------------------------------------------

    def _fail(self, end: _End) -> None:
        """Append the harness's `run.failed` (after the agent's terminal message, if it sent one)."""
        self.reason = end.reason
        fields: dict[str, Any] = {"reason": end.reason}
        elapsed = self.writer.clock.elapsed_ms()
        if elapsed is not None:
            fields["duration_ms"] = elapsed
        data: dict[str, Any] = {"attested_by": "harness"}
        if end.offending is not None:
            data["offending"] = end.offending
        if end.limit is not None:
            data["limit"] = end.limit
        failed = self.writer.write("run.failed", fields, data)
        self.findings.append(RecordFinding(code="record.ended", level="error", seq=failed["seq"],
                                           message=f"The harness ended the run: {end.reason}."))

    def _catch_interrupts(self) -> Callable[[], None]:
        """SIGINT, SIGTERM and SIGHUP (a closed terminal) to `record` end the run (reason
        `interrupted`) instead of cutting it and leaving the agent, in its own session, running."""
        if threading.current_thread() is not threading.main_thread():
            return lambda: None

        def note(signum: int, frame: Any) -> None:
            self._interrupted = True

        previous = {signum: signal.signal(signum, note) for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}

        def restore() -> None:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        return restore


_HANDLERS: dict[str, Callable[[Session, Message, Agent], None]] = {
    "tool.call": Session._tool_call,
    "approval.request": Session._approval_request,
    "approval.granted": Session._attested_by_agent,
    "approval.revoked": Session._attested_by_agent,
    "outcome.observed": Session._outcome,
    "agent.message": Session._agent_message,
    "run.completed": Session._terminal_message,
    "run.failed": Session._terminal_message,
}
"""How each message type is recorded and answered; `control.stop` and `telemetry.*` are written as sent."""


def _first_use(seen: set[str], identifier: str, detail: str) -> None:
    """Note an id the agent gives; one given before is the protocol error `detail`."""
    if identifier in seen:
        raise ProtocolError(detail)
    seen.add(identifier)


def _offending(line: Line, message_type: str | None) -> dict[str, Any]:
    """What `run.failed` says of the line that broke the protocol."""
    text = line.text.decode("utf-8", "replace")
    found: dict[str, Any] = {"line": line.number}
    if message_type is not None:
        found["type"] = message_type
    found["excerpt"] = text if len(text) <= _EXCERPT else text[:_EXCERPT]
    return found


def _exit_reason(status: int) -> str:
    if status < 0:
        try:
            return f"signal:{signal.Signals(-status).name}"
        except ValueError:
            return f"signal:{-status}"
    return f"exit:{status}"
