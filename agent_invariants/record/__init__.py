"""run an agent against fixtures, write its trace as it goes, and check the trace.

    agent-invariants record --contract c.json --fixtures f.json [--enforce] -- python agent.py

The agent runs as a child process in its own session, with `AGENT_INVARIANTS_PROTOCOL=1` and
`AGENT_INVARIANTS_RUN_ID` in its environment, and talks JSON Lines on stdin and stdout. Its tool
calls are answered from the fixtures or from a baseline trace (`--replay`); with `--enforce`, the
contract's safety rules judge each call before it is answered. Each exchange becomes events in
the trace, flushed before the agent hears the reply. docs/record-protocol.md (in the project's
repository) is the whole protocol: every message, the fixtures' format, replay and enforcement.
When the run ends, the trace is checked by the same evaluator as `check`: with `--partial` when
the harness ended the run (a timeout, a crash, a protocol error), so that what
only the end of a run can decide is `inconclusive`. `record` and a later `check` of the file agree,
unless `--redact` hid values the rules read (`record` judged the real ones, the file holds
`[redacted]`).

The report is the check report with a `record` object (how the run ended, the findings, the
denied calls, the agent's stderr log). The exit code:
2 for bad input before the agent starts (contract, lint, fixtures, baseline, `--out`); else 1 when
the check has errors or a call was denied (`--safety-exit N` instead, when an error comes from a
safety part or a call was denied, even one the check then finds nothing at); else 2 when a
finding says the run did not test what it was meant to (a fixture or approval miss, a run the
harness ended, MCP servers' tools that drifted from a snapshot, a server's result too large to
record); else 0.

The contract, the fixtures and the command are trusted: the agent gets `record`'s environment
(unless `--env-clear`). `--redact KEY` keeps the values of such keys out of every file written and
of the report, while the rules judge the real values. `record` is POSIX-only.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import re
import uuid
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import msgspec
from msgspec import UNSET

from agent_invariants._js import replace_lone_surrogates
from agent_invariants._paths import STDIN
from agent_invariants._signals import hangup_terminates
from agent_invariants.contract import Contract
from agent_invariants.contract_source import ContractSource, json_file, read_contract
from agent_invariants.engine import run_check
from agent_invariants.errors import InputError, TraceError
from agent_invariants.jsontext import TOO_DEEP, syntax_problem_in_file
from agent_invariants.output import input_at, move_new, refuse_unwritable, same_file, shown
from agent_invariants.prevented import mark_prevented
from agent_invariants.reader import DEFAULT_MAX_LINE_BYTES, TraceFile
from agent_invariants.record.agent import Agent
from agent_invariants.record.enforce import Enforcer
from agent_invariants.record.fixtures import MAX_MESSAGE_BYTES, Fixtures, load_fixtures, too_big_for_a_line
from agent_invariants.record.mcp_backend import McpBackend, read_snapshot, snapshot_drift_of, start_servers
from agent_invariants.record.redact import Redactor
from agent_invariants.record.replay import Replay
from agent_invariants.record.session import Session
from agent_invariants.record.writer import MAX_TRACE_LINE, Clock, TraceWriteError, TraceWriter, claim_file
from agent_invariants.report import CheckReport, RecordFinding, RecordInfo
from agent_invariants.rules import DEFAULT_MAX_VIOLATIONS
from agent_invariants.stability import FinalOutput

__all__ = ("RecordOptions", "Recorded", "exit_code", "record")

_RUN_ID = re.compile(r"[A-Za-z0-9_:-][A-Za-z0-9._:-]{0,199}")
MAX_TIMEOUT_MS = 86_400_000
"""The longest run or idle timeout (a day); both take 1..this."""
FAKE_RUN_ID = "fake-run"


class RecordOptions(NamedTuple):
    """What `record` is told besides the contract and the command (the CLI's options)."""

    fixtures: str | None = None
    replay: str | None = None
    out: str | None = None
    force: bool = False
    enforce: bool = False
    fake_clock: bool = False
    timeout_ms: int = 60_000
    idle_timeout_ms: int = 30_000
    run_id: str | None = None
    input: str | None = None           # JSON text, or @FILE
    env: Sequence[str] = ()            # KEY=VALUE sets, KEY passes record's own value on
    env_clear: bool = False
    cwd: str | None = None
    redact: Sequence[str] = ()         # keys whose values stay out of every file written
    mcp: Sequence[str] = ()            # stdio MCP server commands answering the tools no fixture names
    mcp_start_timeout_ms: int = 10_000
    mcp_call_timeout_ms: int = 30_000
    protocol: str = "native"           # or "agentdoctor": that harness's adapter messages
    tool_snapshot: str | None = None         # compare the servers' tools with this snapshot
    write_tool_snapshot: str | None = None   # save the servers' tools here
    lint: bool = True
    strict: bool = False
    max_violations: int = DEFAULT_MAX_VIOLATIONS
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES   # for the replayed baseline
    report: str | None = None          # where the report goes (--output): never a file the run reads or writes


class Recorded(NamedTuple):
    """A finished run: its report (the check of its trace, with `record`), and what the exit needs."""

    report: CheckReport
    contract: ContractSource
    loaded: Contract
    output: tuple[Any, bytes | None] = (None, None)
    """The run's final output as the rules saw it (raw, before redaction; `NO_OUTPUT` when it
    reported none), and its JSON text: what `--repeat` compares the runs by."""
    output_line: int | None = None
    """The line of the trace that holds the final output (None: none reported): where `--repeat`'s
    SARIF results and GitHub annotations point."""


def record(contract: str | os.PathLike[str] | ContractSource, command: Sequence[str],
           options: RecordOptions | None = None, warn: Callable[[str], None] | None = None, *,
           fixture_warnings: bool = True) -> Recorded:
    """Run `command` as the agent and check its trace. InputError for anything wrong before the
    agent starts (nothing is written then); `warn` hears of fixture cases that can never be chosen
    (unless not `fixture_warnings`: `--repeat` says them once), of a server that closed its
    connection during the run, and of events whose redacted values were left out."""
    options = options or RecordOptions()
    if os.name == "nt":
        raise InputError("record is not supported on Windows")
    if not command:
        raise InputError("record needs the agent's command after --, e.g. -- python agent.py")
    _check_timeouts(options)
    source = contract if isinstance(contract, ContractSource) else read_contract(contract)
    loaded = _load(source, options.lint)
    if options.fixtures is None and options.replay is None and not options.mcp:
        raise InputError("record needs --fixtures (or --replay, or --mcp) to answer the agent's tool calls")
    if (options.tool_snapshot or options.write_tool_snapshot) and not options.mcp:
        raise InputError("--tool-snapshot and --write-tool-snapshot compare the tools --mcp servers list")
    fixtures = None if options.fixtures is None else load_fixtures(options.fixtures,
                                                                    warn if fixture_warnings else None)
    replay = None if options.replay is None else Replay(options.replay, options.max_line_bytes)
    if replay is not None and options.replay is not None and not replay.events:
        said = f"--replay {shown(options.replay)}: the baseline has no events, so it answers no call"
        if options.strict:   # as --strict makes an empty trace an error of check
            raise InputError(said)
        if warn is not None and fixture_warnings:
            warn(f"warning: {said}")
    run_id = options.run_id or (FAKE_RUN_ID if options.fake_clock else uuid.uuid4().hex)
    if not _RUN_ID.fullmatch(run_id):
        raise InputError(f"--run-id {shown(run_id)}: use 1..200 letters, digits, '.', '_', ':' or '-', not starting "
                         "with '.' (it names the trace file)")
    input_value = _input(options, fixtures)
    if options.out == "":
        raise InputError("--out: the trace needs a file name")
    out = options.out or os.path.join(".agent-invariants", "runs", f"{run_id}.jsonl")
    inputs = run_inputs(source, options, fixtures)
    log = f"{out}.stderr.log"
    _refuse_input_as("--out", out, inputs)
    _refuse_input_as("--out", log, inputs)
    claim_file(out, options.force)   # (the trace is named first: the writer claims it again, to write it)
    claim_file(log, options.force)
    redactor = Redactor([*options.redact, *(fixtures.redact if fixtures is not None else ())])
    env = _environment(options, run_id, warn)
    if redactor.active:   # the values record hands out itself, which the agent or a server may echo
        redactor.handed(command, env, options.mcp)
    if options.cwd is not None and not os.path.isdir(options.cwd):
        raise InputError(f"--cwd {shown(options.cwd)}: no such folder")
    if options.write_tool_snapshot is not None:
        if options.write_tool_snapshot == options.tool_snapshot:
            raise InputError("--write-tool-snapshot must not replace the --tool-snapshot it is compared with")
        refuse_file_of_run("--write-tool-snapshot", options.write_tool_snapshot, [out, log], "the snapshot")
        claim_file(options.write_tool_snapshot, options.force)
        _refuse_input_as("--write-tool-snapshot", options.write_tool_snapshot, inputs, "the snapshot")
    refuse_report_at(options.report, [*inputs, out, log, options.write_tool_snapshot])
    saved_tools = None if options.tool_snapshot is None else read_snapshot(options.tool_snapshot)
    # (SIGHUP while the servers start ends `record` as SIGTERM does, so that they are ended too; its
    # default would leave them running)
    with hangup_terminates(), contextlib.ExitStack() as resources:
        try:
            backend = None if not options.mcp else start_servers(
                options.mcp, options.mcp_start_timeout_ms, options.mcp_call_timeout_ms, resources)
        except InputError as exc:   # (it may quote a server's last stderr line: a secret's key=value too)
            raise InputError(redactor.said(exc.message)) if redactor.active else exc from None
        drift = [] if backend is None else snapshot_drift_of(backend, options.write_tool_snapshot, saved_tools,
                                                             redactor.scrub if redactor.active else None)
        recorded = _run(source, loaded, command, options, fixtures=fixtures, replay=replay, run_id=run_id,
                        input_value=input_value, out=out, log=log, redactor=redactor, env=env, backend=backend,
                        drift=drift, warn=warn)
        if backend is not None and warn is not None:
            for line in backend.lost():
                warn(f"warning: {redactor.said(line) if redactor.active else line}")
        return recorded


def _run(source: ContractSource, loaded: Contract, command: Sequence[str], options: RecordOptions, *,
         fixtures: Fixtures | None, replay: Replay | None, run_id: str,
         input_value: Any, out: str, log: str, redactor: Redactor, env: dict[str, str], backend: McpBackend | None,
         drift: list[str], warn: Callable[[str], None] | None) -> Recorded:
    """The run itself, once every input is known good."""
    writer = TraceWriter(out, run_id, Clock(options.fake_clock), options.force,
                         redactor if redactor.active else None)
    session = Session(writer, fixtures, replay, Enforcer(loaded) if options.enforce else None,
                      options.timeout_ms, options.idle_timeout_ms, backend, options.protocol)
    if drift:
        session.findings.append(RecordFinding(
            code="record.schema_drift", level="error",
            message=f"The MCP servers' tools differ from the snapshot {options.tool_snapshot}: {', '.join(drift)}."))

    def start() -> Agent:
        try:
            return Agent(command, env, options.cwd)
        except OSError as exc:
            writer.discard()   # the agent never ran: no trace
            raise InputError(f"{shown(command[0])}: cannot start: {exc.strerror or exc}") from None

    final = FinalOutput()
    try:
        with hangup_terminates():   # so that the raw copy goes whatever ends `record`
            try:
                ending, agent = session.run(start, input_value)
            except TraceWriteError as exc:   # (a full disk): the events before are kept, set aside
                writer.close()
                raise TraceWriteError(exc.message + _set_aside(out, writer.seq - 1)) from None
            finally:
                writer.close()
            tail = bytes(agent.stderr_tail)
            if redactor.active and agent.stderr_bytes > len(tail):   # a cut line may be a key=value cut
                tail = tail[tail.find(b"\n") + 1:] if b"\n" in tail else b""
            stderr = redactor.log(tail) if redactor.active else tail
            stderr_log = _save_stderr(log, stderr, agent.stderr_bytes, len(tail), options.force)
            judged = TraceFile(writer.judged, name=out, digest=hashlib.blake2b())
            try:
                checked = run_check(loaded, judged, options.max_violations, strict=options.strict,
                                    partial=ending.by_harness, count_safety=True, observers=[final])
            except TraceError:   # a line record did not write, when something else wrote to the trace
                _as_written(writer, _digest_of(writer.judged), out)
                raise
            _as_written(writer, judged.digest.digest(), out)
    finally:
        writer.remove_raw()
    for seq, event_type, shorter in writer.shortened:
        if warn is not None:
            warn(f"warning: {shown(out)} line {seq} ({event_type}): {_SHORTENED[shorter]}")
    report = checked.report
    report.trace = out
    mark_prevented(checked.rules, session.denied, by_seq=True)   # (also calls the agent left without call_id)
    report.record = RecordInfo(
        run_id=run_id, trace=out, command=redactor.value(list(command)) if redactor.active else list(command),
        ended_by=ending.ended_by, exit_status=ending.exit_status,
        stderr_log=stderr_log, stderr_bytes=agent.stderr_bytes, findings=session.findings,
        denied=len(session.denied))
    redactor.scrub(report)   # what the report quotes from the raw trace
    output = final.output()
    index = final.terminal.index
    line = judged.lines_of([index]).get(index) if output[1] is not None else None
    return Recorded(report, source, loaded, output, line)


_LONGER = f"marked, the line would be longer than {MAX_TRACE_LINE:,} bytes"
_SHORTENED = {
    1: f"its redacted keys are left out, not marked \"[redacted]\": {_LONGER}",
    2: f"its redacted keys are left out, and each value that held a secret is replaced whole by \"[redacted]\": "
       f"{_LONGER}",
    3: f"its redacted keys are left out, and so is each value that held a secret: {_LONGER}",
}
"""What `warn` says of an event `TraceWriter` wrote shorter than redaction would have."""


def _set_aside(out: str, events: int) -> str:
    """What became of a trace `record` could not write to its end: it is renamed `<out>.partial`
    (`.partial-2`… when an earlier run's is there), so that nothing mistakes it for a whole run,
    which `check` would judge as one, and a second run finds `out` free. Said as the end of the
    error's line."""
    written = f"the {events:,} event{'' if events == 1 else 's'} written before"
    for number in range(1, 101):
        partial = f"{out}.partial" + ("" if number == 1 else f"-{number}")
        try:
            move_new(out, partial)
        except FileExistsError:
            continue
        except OSError:
            break
        return f"; {written} are kept in {shown(partial)}, cut short"
    return f"; {written} stay in it, cut short"


def _as_written(writer: TraceWriter, judged: bytes, out: str) -> None:
    """Refuse to judge a run whose trace is not what `record` wrote: something else (the agent,
    a process it left behind) wrote to it, or to the raw copy the rules read when redacting,
    while the run went on or was checked. `judged` is the digest of what the check read; the
    trace file, when it is not what the check read, is read once more."""
    for path, written in writer.written.items():
        found = judged if path == writer.judged else _digest_of(path)
        if found != written.digest():
            raise InputError(f"{shown(out)}: the trace is not what record wrote: something else wrote to it while "
                             "the run went on (the agent?), so the run is not judged")


def _digest_of(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return hashlib.file_digest(handle, hashlib.blake2b).digest()
    except OSError:
        return b""


def exit_code(recorded: Recorded, safety_exit: int = 1) -> int:
    """1 when the check has errors (`safety_exit` when one comes from a safety part), and
    `safety_exit` when a call was denied (point 84: also when the check then finds nothing, as
    a `tool_calls` bound on successful calls may: the call denied never got a result); else 2
    when a finding is an error, else 0."""
    report = recorded.report
    assert report.record is not UNSET
    if report.error_count or report.record.denied:
        return safety_exit if report.safety_error_count or report.record.denied else 1
    return 2 if any(finding.level == "error" for finding in report.record.findings) else 0


def _load(source: ContractSource, lint: bool) -> Contract:
    from agent_invariants.contract import load_contract

    loaded = load_contract(source)
    if lint:
        from agent_invariants.lint import refuse_unpassable

        refuse_unpassable(loaded, source.label, source)
    return loaded


def _check_timeouts(options: RecordOptions) -> None:
    for name, value in (("--timeout-ms", options.timeout_ms), ("--idle-timeout-ms", options.idle_timeout_ms)):
        if not 1 <= value <= MAX_TIMEOUT_MS:
            raise InputError(f"{name} must be 1..{MAX_TIMEOUT_MS:,} (milliseconds), got {value}")


def _input(options: RecordOptions, fixtures: Fixtures | None) -> Any:
    """`run.start`'s input: `--input` (JSON, or @FILE), else the fixtures' `input`, else null."""
    if options.input is None:
        return None if fixtures is None else fixtures.input
    if options.input.startswith("@"):
        where = f"--input {shown(options.input[1:])}"
        value = json_file(options.input[1:], MAX_MESSAGE_BYTES, where, "JSON")
    else:
        where = "--input"
        data = replace_lone_surrogates(options.input.encode("utf-8", "surrogateescape"))
        try:
            value = msgspec.json.decode(data)
        except RecursionError:
            raise InputError(f"{where}: not JSON: {TOO_DEEP}") from None
        except msgspec.DecodeError as exc:   # (also 1e999): where, as in a file
            raise InputError(f"{where}: not JSON: {syntax_problem_in_file(data, exc)}") from None
    problem = too_big_for_a_line(value, "the input")
    if problem is not None:
        raise InputError(f"{where}: {problem}")
    return value


def _environment(options: RecordOptions, run_id: str, warn: Callable[[str], None] | None) -> dict[str, str]:
    """The agent's environment: record's own (none with `--env-clear`), then `--env`, then the
    protocol's two variables. `warn` hears of an `--env KEY` that record's own environment lacks."""
    env = {} if options.env_clear else dict(os.environ)
    for item in options.env:
        key, equals, value = item.partition("=")
        if not key:
            raise InputError(f"--env {shown(item)}: expected KEY=VALUE or KEY")
        if equals:
            env[key] = value
        elif key in os.environ:
            env[key] = os.environ[key]
        elif warn is not None:
            warn(f"warning: --env {shown(key)}: not set in record's environment, so the agent gets no such variable")
    env["AGENT_INVARIANTS_PROTOCOL"] = "1"
    env["AGENT_INVARIANTS_RUN_ID"] = run_id
    return env


def run_inputs(source: ContractSource, options: RecordOptions, fixtures: Fixtures | None) -> list[str | None]:
    """The files a run reads: the contract, the fixtures and the `$file`s they name, the
    baseline, the tool snapshot, and `--input @FILE`."""
    given = options.input[1:] if options.input is not None and options.input.startswith("@") else None
    return [None if source.label == STDIN else source.label, options.fixtures, options.replay, options.tool_snapshot,
            given, *(() if fixtures is None else fixtures.files)]


def _refuse_input_as(option: str, path: str, inputs: list[str | None], what: str = "the trace") -> None:
    """A file `record` writes must not be one it reads (even with `--force`)."""
    clash = input_at(path, *inputs)
    if clash is not None:
        raise InputError(f"{option} {shown(path)} is an input of the run ({shown(clash)}); write {what} elsewhere")


def refuse_report_at(report: str | None, files: list[str | None]) -> None:
    """`--output` must be a place the report can be written (checked before the agent runs, not
    after), and must name none of the files a run reads or writes (the trace it writes, its
    stderr log, a `$file` fixture…): the report would take the place of the trace it judges."""
    refuse_file_of_run("--output", report, files, "the report")
    if report is not None:
        refuse_unwritable(report, [path for path in files if path is not None and path != "-"])


def refuse_file_of_run(option: str, written: str | None, files: list[str | None], what: str) -> None:
    """A file `record` writes besides the trace (`option`) must be none of `files`, which need not
    exist yet: one would take the place of the other."""
    if written is None or written == "-":
        return
    for path in files:
        if path is not None and path != "-" and same_file(written, path):
            raise InputError(f"{option} {shown(written)} is a file of the run ({shown(path)}); write {what} "
                             "elsewhere")


def _save_stderr(log: str, tail: bytes, total: int, kept: int, force: bool) -> str | None:
    """Write the last MiB of the agent's stderr beside the trace; its path (None: it wrote
    nothing, and with `force` an older run's log there is removed)."""
    if not total:
        if force and os.path.isfile(log) and not os.path.islink(log):
            os.unlink(log)
        return None
    head = f"[… {total - kept:,} bytes dropped]\n".encode() if total > kept else b""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if force else os.O_EXCL) | getattr(os, "O_NOFOLLOW", 0)
    try:
        handle = os.open(log, flags, 0o666)
        with os.fdopen(handle, "wb") as stream:
            stream.write(head + tail)
    except OSError:
        return None   # (claimed before the run; a race with another writer loses the log only)
    return log
