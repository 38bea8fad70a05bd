"""A second, independent reading of spec v2 §8 (`record`) and §10 points 60–89, as tests.

Each test names the sentence or point it checks. The agents are tiny Python scripts run with this
interpreter: one generic agent (`AGENT`) plays a list of steps, writes every line it reads from the
harness to `replies.jsonl`, and exits 0 at the end.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import cli_zygote

Json = Any
Step = list[Any]

AGENT = r'''
import json, os, signal, subprocess, sys, time

steps = json.load(open(sys.argv[1], encoding="utf-8"))
log = open(sys.argv[2], "a", encoding="utf-8")
out = sys.stdout.buffer


def read():
    line = sys.stdin.buffer.readline().decode("utf-8", "replace")
    log.write(line if line else "EOF\n")
    log.flush()
    return line


def write(data):
    out.write(data)
    out.flush()


def late(*_):
    write(b'{"type": "agent.message", "text": "during the grace"}\n')


read()
for op, arg in steps:
    if op in ("send", "push"):
        write(json.dumps(arg, ensure_ascii=False).encode() + b"\n")
        if op == "send" and arg.get("type") in ("tool.call", "approval.request", "tool_call"):
            read()
    elif op == "raw":
        write(arg.encode("latin-1"))
    elif op == "read":
        read()
    elif op == "eof":
        if read() != "":
            os._exit(9)
    elif op == "sleep":
        time.sleep(arg)
    elif op == "stderr":
        sys.stderr.write(arg)
        sys.stderr.flush()
    elif op == "stderr_fill":
        sys.stderr.buffer.write(b"a" * arg[0] + b"b" * arg[1])
        sys.stderr.flush()
    elif op == "stderr_drip":
        for _ in range(arg):
            sys.stderr.write("tick\n")
            sys.stderr.flush()
            time.sleep(0.05)
    elif op == "env":
        json.dump(dict(os.environ), open(arg, "w"))
    elif op == "where":
        json.dump({"cwd": os.getcwd(), "pid": os.getpid(), "sid": os.getsid(0), "pgid": os.getpgid(0),
                   "argv": sys.argv[3:]}, open(arg, "w"))
    elif op == "has":
        if arg[1] not in open(arg[0], encoding="utf-8").read():
            os._exit(8)
    elif op == "close_stdin":
        sys.stdin.close()
    elif op == "close_stdout":
        os.close(1)
    elif op == "on_sigterm":
        signal.signal(signal.SIGTERM, late)
    elif op == "signal":
        os.kill(os.getpid(), getattr(signal, arg))
    elif op == "orphan":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        open(arg, "w").write(str(child.pid))
    elif op == "flood":
        left = arg
        while left:
            size = min(left, 1000000)
            out.write(b" " * (size - 1) + b"\n")
            left -= size
        out.flush()
    elif op == "line":
        head = b'{"type": "agent.message", "text": "'
        body = head + b"x" * (arg[0] - len(head) - 2) + b'"}'
        write(body + (b"\n" if arg[1] else b""))
    elif op == "once":
        if os.path.exists(arg):
            os._exit(3)
        open(arg, "w").close()
    elif op == "exit":
        log.close()
        os._exit(arg)
log.close()
os._exit(0)
'''

DENY_SHELL = {"id": "no-shell", "kind": "deny_tool", "tool": "shell"}
FIXTURES: Json = {"version": 1, "input": {"q": 1}, "tools": {"get": {"a": 1}}}
DONE: Json = {"type": "run.completed", "status": "completed"}
LINE_CAP = 1_040_384
TOTAL_CAP = 64 * 1024 * 1024
KEY_ORDER = ["seq", "type", "time", "run_id", "actor", "tool", "call_id", "call_signature", "risk", "approval_id",
             "approval_scope", "approved", "ok", "outcome_id", "verdict", "evidence_class", "claims_completion",
             "confidence", "args", "result", "duration_ms", "status", "output", "approver", "reason", "data"]


def call(call_id: str, tool: str, args: Json = None, **extra: Json) -> dict[str, Json]:
    message: dict[str, Json] = {"type": "tool.call", "call_id": call_id, "tool": tool}
    if args is not None:
        message["args"] = args
    return {**message, **extra}


def send(message: Json) -> Step:
    return ["send", message]


def ev(seq: int, type_: str, **fields: Json) -> dict[str, Json]:
    """An expected event of a `--fake-clock` run."""
    return {"seq": seq, "type": type_, "time": f"1970-01-01T00:00:00.{seq:03d}Z", "run_id": "fake-run", **fields}


def cli_run(folder: Path, *args: str, env: dict[str, str] | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    proc = cli_zygote.run_python(["-m", "agent_invariants", *args], folder, None, full_env, timeout)
    return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode("utf-8", "replace"),
                                       proc.stderr.decode("utf-8", "replace"))


@dataclass
class Run:
    proc: subprocess.CompletedProcess[str]
    folder: Path
    out: Path
    elapsed: float

    @property
    def code(self) -> int:
        return self.proc.returncode

    @property
    def report(self) -> dict[str, Json]:
        data: dict[str, Json] = json.loads(self.proc.stdout)
        return data

    @property
    def rec(self) -> dict[str, Json]:
        data: dict[str, Json] = self.report["record"]
        return data

    @property
    def ended_by(self) -> str:
        return str(self.rec["ended_by"])

    @property
    def codes(self) -> list[str]:
        return [finding["code"] for finding in self.rec["findings"]]

    @property
    def text(self) -> str:
        return self.out.read_text(encoding="utf-8")

    @property
    def trace(self) -> list[dict[str, Json]]:
        return [json.loads(line) for line in self.text.splitlines() if line.strip()]

    @property
    def types(self) -> list[str]:
        return [event["type"] for event in self.trace]

    @property
    def replies(self) -> list[Json]:
        path = self.folder / "replies.jsonl"
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        return [line if line == "EOF" else json.loads(line) for line in lines]

    def violations(self, rule_id: str) -> list[dict[str, Json]]:
        return [v for v in self.report["violations"] if v["rule_id"] == rule_id]


def agent_command(folder: Path, steps: list[Step]) -> list[str]:
    (folder / "agent.py").write_text(AGENT, encoding="utf-8")
    (folder / "steps.json").write_text(json.dumps(steps), encoding="utf-8")
    return [sys.executable, str(folder / "agent.py"), str(folder / "steps.json"), str(folder / "replies.jsonl")]


def record(folder: Path, steps: list[Step], *options: str, rules: list[Json] | None = None,
           fixtures: Json = FIXTURES, out: str | None = "t.jsonl", fake_clock: bool = True, fmt: str = "json",
           run_ms: int | None = 10_000, idle_ms: int | None = 5_000, env: dict[str, str] | None = None,
           extra_args: tuple[str, ...] = ()) -> Run:
    """`record` of the generic agent playing `steps` (contract `c.json`, fixtures `f.json`, trace `t.jsonl`)."""
    folder.mkdir(parents=True, exist_ok=True)
    contract = {"version": 2, "name": "spec", "rules": rules if rules is not None else [DENY_SHELL]}
    (folder / "c.json").write_text(json.dumps(contract), encoding="utf-8")
    args = ["record", "--contract", "c.json"]
    if fixtures is not None:
        (folder / "f.json").write_text(json.dumps(fixtures), encoding="utf-8")
        args += ["--fixtures", "f.json"]
    if out is not None:
        args += ["--out", out]
    if fmt:
        args += ["--format", fmt]
    if fake_clock:
        args.append("--fake-clock")
    if run_ms is not None:
        args += ["--timeout-ms", str(run_ms)]
    if idle_ms is not None:
        args += ["--idle-timeout-ms", str(idle_ms)]
    command = agent_command(folder, steps) + list(extra_args)
    started = time.monotonic()
    proc = cli_run(folder, *args, *options, "--", *command, env=env)
    elapsed = time.monotonic() - started
    return Run(proc, folder, folder / (out or "t.jsonl"), elapsed)


def not_spawned(run: Run) -> bool:
    """The agent never started: it would have written replies.jsonl on reading run.start."""
    return not (run.folder / "replies.jsonl").exists()


def one_error_line(run: Run) -> str:
    lines = run.proc.stderr.strip().splitlines()
    assert run.code == 2 and run.proc.stdout == "", run.proc.stderr
    assert len(lines) == 1 and "Traceback" not in run.proc.stderr, run.proc.stderr
    return lines[0]


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def answers(run: Run) -> list[Json]:
    """The `result` of each `tool.result` reply, in order."""
    return [r.get("result") for r in run.replies[1:] if r != "EOF" and r["type"] == "tool.result"]


def reply_for(run: Run, call_id: str) -> dict[str, Json]:
    replies: list[dict[str, Json]] = [r for r in run.replies[1:] if r != "EOF" and r.get("call_id") == call_id]
    assert len(replies) == 1, (call_id, replies)
    return replies[0]


def event_for(run: Run, type_: str, call_id: str) -> dict[str, Json]:
    (event,) = [e for e in run.trace if e["type"] == type_ and e.get("call_id") == call_id]
    return event


# -- a shared run: one exchange of every kind (points 61, 62, 65, 79, 81) ------------------------------------

BASIC_FIXTURES: Json = {
    "version": 1, "input": {"q": 1},
    "tools": {
        "get": {"a": 1},
        "obs": {"$cases": [{"args": {"k": 1}, "result": {"seen": True}, "duration_ms": 12,
                            "observe": {"outcome_id": "o2", "verdict": "satisfied"}}]},
    },
    "approvals": [{"tool": "pa*", "args": {"amount": {"$lte": 50}}, "decision": "approve",
                   "approval_scope": "refunds", "approver": "lead"}],
}
BASIC_STEPS: list[Step] = [
    send(call("c1", "get", {"x": 1})),
    send({"type": "agent.message", "text": "hi", "claims_completion": False, "confidence": 0.5}),
    send({"type": "approval.request", "approval_id": "a1", "tool": "pay", "args": {"amount": 10}}),
    send({"type": "approval.granted", "approval_id": "g1", "tool": "pay", "args": {"amount": 5}, "call_id": "c7",
          "approval_scope": "refunds", "approver": "me", "approved": True}),
    send({"type": "approval.revoked", "approval_id": "g1", "approval_scope": "refunds", "tool": "pay",
          "reason": "changed my mind"}),
    send({"type": "outcome.observed", "outcome_id": "o1", "verdict": "satisfied",
          "evidence_class": "externally_observed"}),
    send({"args": {"k": 1}, "approval_id": "a1", "call_signature": "obs:k1", "tool": "obs", "call_id": "c2",
          "type": "tool.call"}),
    send({"type": "telemetry.tokens", "data": {"n": 3}}),
    send({"type": "control.stop", "reason": "done"}),
    send({"type": "run.completed", "status": "completed", "output": {"answer": 42}, "claims_completion": True,
          "confidence": 0.9}),
    ["eof", None],
]


@pytest.fixture(scope="module")
def basic(tmp_path_factory: pytest.TempPathFactory) -> Run:
    folder = tmp_path_factory.mktemp("basic")
    steps = [["env", str(folder / "env.json")], ["where", str(folder / "where.json")], *BASIC_STEPS]
    return record(folder, steps, fixtures=BASIC_FIXTURES, extra_args=("$HOME; echo *",))


def test_basic_run_completes_and_passes(basic: Run) -> None:
    """§8: without a harness ending, `record` runs the ordinary check; point 83: exit 0 when it passes."""
    assert (basic.code, basic.ended_by, basic.codes) == (0, "completed", []), basic.proc.stderr


def test_spawn_row_run_start_event(basic: Run) -> None:
    """Point 65, row "spawn": `run.start {data: {input, protocol: 1}}` is written first."""
    assert basic.trace[0] == ev(1, "run.start", data={"input": {"q": 1}, "protocol": 1})


def test_spawn_row_run_start_reply(basic: Run) -> None:
    """Point 62: the first stdin line is `run.start {protocol, run_id, input}`; `input` is the fixtures file's
    `input`; `protocol` is the integer 1."""
    assert basic.replies[0] == {"type": "run.start", "protocol": 1, "run_id": "fake-run", "input": {"q": 1}}


def test_tool_call_row_answered(basic: Run) -> None:
    """Point 65, row "tool.call, answered": the call as sent, then `tool.result {call_id, tool, ok, result,
    data: {fixture: {key}}}`; the reply is `tool.result {call_id, ok, result}`."""
    assert basic.trace[1:3] == [
        ev(2, "tool.call", tool="get", call_id="c1", args={"x": 1}),
        ev(3, "tool.result", tool="get", call_id="c1", ok=True, result={"a": 1}, data={"fixture": {"key": "get"}}),
    ]
    assert basic.replies[1] == {"type": "tool.result", "call_id": "c1", "ok": True, "result": {"a": 1}}


def test_agent_message_row(basic: Run) -> None:
    """Point 65: `agent.message` becomes `{claims_completion?, confidence?, data: {text?}}`."""
    assert basic.trace[3] == ev(4, "agent.message", claims_completion=False, confidence=0.5, data={"text": "hi"})


def test_approval_request_row(basic: Run) -> None:
    """Points 64/65: the request is recorded as `approval.requested`, then the harness records `approval.granted
    {approval_id, tool, args: <the request's>, approval_scope?, approver?, approved, data.attested_by: "harness"}`."""
    assert basic.trace[4:6] == [
        ev(5, "approval.requested", tool="pay", approval_id="a1", args={"amount": 10}),
        ev(6, "approval.granted", tool="pay", approval_id="a1", approval_scope="refunds", approved=True,
           args={"amount": 10}, approver="lead", data={"attested_by": "harness"}),
    ]


def test_approval_decision_reply_not_recorded(basic: Run) -> None:
    """Point 64: the harness sends `approval.decision {approval_id, approved}`, which is not recorded."""
    assert basic.replies[2] == {"type": "approval.decision", "approval_id": "a1", "approved": True}
    assert "approval.decision" not in basic.types


def test_agent_grant_row_with_every_listed_field(basic: Run) -> None:
    """Points 61/65/67: an agent `approval.granted {approval_id?, tool?, args?, call_id?, approval_scope?,
    approver?, approved?}` is recorded as sent, with `data.attested_by: "agent"`."""
    assert basic.trace[6] == ev(7, "approval.granted", tool="pay", call_id="c7", approval_id="g1",
                                approval_scope="refunds", approved=True, args={"amount": 5}, approver="me",
                                data={"attested_by": "agent"})


def test_agent_revocation_row(basic: Run) -> None:
    """Points 61/65/67: `approval.revoked {approval_id?, approval_scope?, tool?, reason?}` as sent, with
    `data.attested_by: "agent"`."""
    assert basic.trace[7] == ev(8, "approval.revoked", tool="pay", approval_id="g1", approval_scope="refunds",
                                reason="changed my mind", data={"attested_by": "agent"})


def test_agent_outcome_row_is_self_attestation(basic: Run) -> None:
    """§8 / points 65, 67: an agent-sent `outcome.observed` is `self_attestation`; its class moves to
    `data.claimed_evidence_class`."""
    assert basic.trace[8] == ev(9, "outcome.observed", outcome_id="o1", verdict="satisfied",
                                evidence_class="self_attestation",
                                data={"attested_by": "agent", "claimed_evidence_class": "externally_observed"})


def test_call_row_keeps_signature_and_approval_id(basic: Run) -> None:
    """Points 61/65: `tool.call {call_id, tool, args?, call_signature?, approval_id?}` is recorded as sent."""
    assert basic.trace[9] == ev(10, "tool.call", tool="obs", call_id="c2", call_signature="obs:k1",
                                approval_id="a1", args={"k": 1})


def test_case_result_and_observe_rows(basic: Run) -> None:
    """Points 65/66, §8 `observe`: the result carries the case's `duration_ms` and `data.fixture {key, case}`,
    then `outcome.observed {outcome_id, verdict, evidence_class: "configured_verifier", call_id,
    data: {attested_by: "harness"}}` follows it."""
    assert basic.trace[10:12] == [
        ev(11, "tool.result", tool="obs", call_id="c2", ok=True, result={"seen": True}, duration_ms=12,
           data={"fixture": {"key": "obs", "case": 0}}),
        ev(12, "outcome.observed", call_id="c2", outcome_id="o2", verdict="satisfied",
           evidence_class="configured_verifier", data={"attested_by": "harness"}),
    ]


def test_telemetry_and_control_stop_rows(basic: Run) -> None:
    """Point 65: `control.stop` and `telemetry.*` are recorded as sent."""
    assert basic.trace[12:14] == [ev(13, "telemetry.tokens", data={"n": 3}), ev(14, "control.stop", reason="done")]


def test_terminal_row_without_duration_under_fake_clock(basic: Run) -> None:
    """Points 61/65/66: the agent's `run.completed {status?, output?, claims_completion?, confidence?}` is recorded
    as sent; its measured `duration_ms` is omitted under `--fake-clock`."""
    assert basic.trace[14:] == [ev(15, "run.completed", claims_completion=True, confidence=0.9, status="completed",
                                   output={"answer": 42})]


def test_replies_are_only_those_of_the_table(basic: Run) -> None:
    """Point 65, column "reply": only calls and approval requests are answered; point 62: stdin is closed once
    the terminal message is recorded, so the agent then reads EOF."""
    assert [r if r == "EOF" else r["type"] for r in basic.replies] == [
        "run.start", "tool.result", "approval.decision", "tool.result", "EOF"]


def test_seq_and_fake_time(basic: Run) -> None:
    """Point 66: seq runs 1..n in write order; under `--fake-clock` time is `1970-01-01T00:00:00.000Z` + seq ms."""
    assert [e["seq"] for e in basic.trace] == list(range(1, 16))
    assert all(e["time"] == f"1970-01-01T00:00:00.{e['seq']:03d}Z" for e in basic.trace)


def test_every_event_carries_run_id(basic: Run) -> None:
    """Points 62/65/66: every event carries `run_id` (`fake-run` under `--fake-clock`)."""
    assert {e["run_id"] for e in basic.trace} == {"fake-run"}


def test_event_keys_follow_field_order(basic: Run) -> None:
    """Point 65: keys follow v1 §3.1 order, then v2 §1 order, with `data` last, and nothing else is added (the
    agent sent the obs call's keys in reverse order)."""
    for event in basic.trace:
        keys = list(event)
        assert all(key in KEY_ORDER for key in keys), keys
        assert keys == sorted(keys, key=KEY_ORDER.index), keys


def test_record_report_object(basic: Run) -> None:
    """Point 83: the report is the check report plus `record: {run_id, trace, command, ended_by, exit_status,
    stderr_log, stderr_bytes, findings}`."""
    report = basic.report
    assert report["schema"] == "agent-invariants/check/v1" and report["contract"]["version"] == 2
    rec = report["record"]
    assert {"run_id", "trace", "command", "ended_by", "exit_status", "stderr_log", "stderr_bytes",
            "findings"} <= set(rec)
    assert (rec["run_id"], rec["trace"], rec["ended_by"], rec["exit_status"], rec["findings"]) == (
        "fake-run", "t.jsonl", "completed", 0, [])
    assert rec["command"][0] == sys.executable and rec["command"][1].endswith("agent.py")


def test_record_agrees_with_check(basic: Run) -> None:
    """§8: "one evaluator serves live and recorded runs": a later `check` of the trace gives the same results."""
    later = cli_run(basic.folder, "check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert later.returncode == 0, later.stderr
    assert json.loads(later.stdout)["results"] == basic.report["results"]


def test_protocol_variable_is_set(basic: Run) -> None:
    """§8 / point 81: the child runs with `AGENT_INVARIANTS_PROTOCOL=1` and `AGENT_INVARIANTS_RUN_ID`."""
    env = json.loads((basic.folder / "env.json").read_text())
    assert (env["AGENT_INVARIANTS_PROTOCOL"], env["AGENT_INVARIANTS_RUN_ID"]) == ("1", "fake-run")


def test_child_runs_in_a_new_session(basic: Run) -> None:
    """§8 / point 79: the child starts in a new session (`setsid`), in its own process group."""
    where = json.loads((basic.folder / "where.json").read_text())
    assert where["sid"] == where["pid"] == where["pgid"]


def test_default_cwd_is_records(basic: Run) -> None:
    """Point 81: by default the child runs in `record`'s working folder."""
    assert json.loads((basic.folder / "where.json").read_text())["cwd"] == str(basic.folder)


def test_command_is_not_run_through_a_shell(basic: Run) -> None:
    """Point 81: the command is executed with a PATH lookup, never through a shell (an argument with `$`, `;` and
    `*` arrives verbatim)."""
    assert json.loads((basic.folder / "where.json").read_text())["argv"] == ["$HOME; echo *"]


# -- point 60: framing -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def framing(tmp_path_factory: pytest.TempPathFactory) -> Run:
    steps: list[Step] = [
        ["raw", '{"type": "agent.message", "text": "a"}\r\n'],
        ["raw", "\n   \n\t\r\n"],
        send({"type": "agent.message", "text": "real", "data": {"text": "fake", "k": 1}}),
        send({"type": "outcome.observed", "outcome_id": "o", "verdict": "unknown",
              "data": {"attested_by": "harness", "z": 2}}),
        send(call("c1", "get", data={"note": "n", "fixture": "mine"})),
        ["raw", '{"type": "run.completed", "status": "completed"}'],
    ]
    return record(tmp_path_factory.mktemp("framing"), steps)


def test_crlf_line_is_accepted(framing: Run) -> None:
    """Point 60: a trailing `\\r` is stripped."""
    assert framing.trace[1] == ev(2, "agent.message", data={"text": "a"})


def test_whitespace_only_lines_are_skipped(framing: Run) -> None:
    """Point 60: whitespace-only lines are skipped."""
    assert framing.types == ["run.start", "agent.message", "agent.message", "outcome.observed", "tool.call",
                             "tool.result", "run.completed"]


def test_final_unterminated_line_is_parsed_at_eof(framing: Run) -> None:
    """Point 60: a final unterminated line is parsed at EOF."""
    assert (framing.code, framing.ended_by, framing.trace[-1]["type"]) == (0, "completed", "run.completed")


def test_agent_data_is_merged_with_harness_keys_winning(framing: Run) -> None:
    """Point 60: the agent may add a `data` object, copied into the event's `data` with harness keys winning."""
    assert framing.trace[2]["data"] == {"text": "real", "k": 1}
    assert framing.trace[3]["data"] == {"attested_by": "agent", "z": 2}


def test_agent_data_on_a_call_is_kept(framing: Run) -> None:
    """Point 60: `data` on a `tool.call` is copied into the recorded call (the result's `data` is the harness's)."""
    assert framing.trace[4] == ev(5, "tool.call", tool="get", call_id="c1", data={"note": "n", "fixture": "mine"})
    assert framing.trace[5]["data"] == {"fixture": {"key": "get"}}


@pytest.mark.parametrize("line", ["[1]", '"text"', "not json", '{"type": "agent.message",'],
                         ids=["array", "string", "garbage", "truncated"])
def test_not_a_json_object_is_bad_json(tmp_path: Path, line: str) -> None:
    """Point 60: anything that is not a JSON object in valid UTF-8 is `protocol:bad_json`."""
    run = record(tmp_path, [["raw", line + "\n"], ["sleep", 5]])
    assert run.ended_by == "protocol:bad_json" and run.trace[-1]["reason"] == "protocol:bad_json"


def test_invalid_utf8_is_bad_json(tmp_path: Path) -> None:
    """Point 60: a line that is not valid UTF-8 is `protocol:bad_json`."""
    run = record(tmp_path, [["raw", '{"type": "agent.message", "text": "\xff"}\n'], ["sleep", 5]])
    assert run.ended_by == "protocol:bad_json"


@pytest.mark.parametrize(("message", "detail"), [
    (call("c1", "get", foo=1), "field:tool.call.foo"),
    ({"type": "agent.message", "text": "t", "seq": 9}, "field:agent.message.seq"),
    ({"type": "agent.message", "time": "2024-01-01T00:00:00Z"}, "field:agent.message.time"),
    (call("c1", "get", run_id="mine"), "field:tool.call.run_id"),
    ({"type": "run.completed", "duration_ms": 5}, "field:run.completed.duration_ms"),
], ids=["unknown", "seq", "time", "run_id", "duration_ms"])
def test_key_outside_the_type_is_a_field_error(tmp_path: Path, message: Json, detail: str) -> None:
    """Point 60: any other key, `seq`, `time`, `run_id` and `duration_ms` included, is
    `protocol:field:<type>.<key>`; point 77: the offending message is not recorded."""
    run = record(tmp_path, [["push", message], ["sleep", 5]])
    assert run.ended_by == f"protocol:{detail}"
    assert run.types == ["run.start", "run.failed"]


@pytest.mark.parametrize(("message", "detail"), [
    ({"type": "tool.call", "call_id": "c1", "tool": 5}, "field:tool.call.tool"),
    ({"type": "agent.message", "data": [1]}, "field:agent.message.data"),
], ids=["tool-number", "data-array"])
def test_mistyped_field_is_a_protocol_error(tmp_path: Path, message: Json, detail: str) -> None:
    """Point 60: fields are typed as in the v1/v2 event tables, and `data` is an object. Spec silent on the
    detail of a type error: we accept `field:<type>.<key>`, the only per-key detail point 76 lists."""
    run = record(tmp_path, [["push", message], ["sleep", 5]])
    assert run.ended_by == f"protocol:{detail}"


# -- point 61: which types the agent may send ---------------------------------------------------------

@pytest.mark.parametrize("kind", ["tool.result", "run.start", "bogus"])
def test_other_types_are_unknown(tmp_path: Path, kind: str) -> None:
    """§8 / point 61: any type outside point 61's list is `protocol:unknown_type:<type>`."""
    run = record(tmp_path, [["push", {"type": kind}], ["sleep", 5]])
    assert run.ended_by == f"protocol:unknown_type:{kind}"


def test_agent_run_failed_ends_the_run_normally(tmp_path: Path) -> None:
    """Point 61: an agent's `run.failed` ends the run normally, like `run.completed`: stdin is closed and the
    ordinary (not partial) check runs, so a liveness violation fails the run; point 67: it gets
    `data.attested_by: "agent"`."""
    rules = [{"id": "must-call", "kind": "require_event", "match": {"type": "tool.call"}}]
    run = record(tmp_path, [send({"type": "run.failed", "status": "gave_up", "reason": "no luck"}), ["eof", None]],
                 rules=rules)
    assert (run.code, run.ended_by, run.codes) == (1, "failed", [])
    assert run.trace[-1] == ev(2, "run.failed", status="gave_up", reason="no luck", data={"attested_by": "agent"})
    assert run.violations("must-call")[0]["status"] == "fail"


# -- point 62: starting the run -------------------------------------------------------------------------

def test_input_is_null_without_one(tmp_path: Path) -> None:
    """Point 62: `input` is the fixtures file's `input`, null if absent."""
    run = record(tmp_path, [send(DONE)], fixtures={"version": 1, "tools": {}})
    assert run.replies[0]["input"] is None
    assert run.trace[0]["data"] == {"input": None, "protocol": 1}


def test_input_option_overrides_the_fixtures(tmp_path: Path) -> None:
    """Point 62: `--input JSON` overrides the fixtures' input."""
    run = record(tmp_path, [send(DONE)], "--input", '[1, "two"]')
    assert run.replies[0]["input"] == [1, "two"] and run.trace[0]["data"]["input"] == [1, "two"]


def test_input_option_reads_a_file(tmp_path: Path) -> None:
    """Point 62: `--input @FILE`."""
    (tmp_path / "in.json").write_text('{"from": "file"}', encoding="utf-8")
    run = record(tmp_path, [send(DONE)], "--input", "@in.json")
    assert run.replies[0]["input"] == {"from": "file"}


def test_input_option_reads_a_lone_surrogate_escape_as_the_replacement_character(tmp_path: Path) -> None:
    """As in the fixtures' `input`, a trace or a contract: `"\\ud83d"` alone is U+FFFD, given inline or as a file."""
    (tmp_path / "in.json").write_text('{"s": "cut \\ud83d", "pair": "\\ud83d\\ude00"}', encoding="utf-8")
    for given in ('{"s": "cut \\ud83d", "pair": "\\ud83d\\ude00"}', "@in.json"):
        run = record(tmp_path, [send(DONE)], "--input", given)
        assert run.replies[0]["input"] == {"s": "cut \ufffd", "pair": "\U0001f600"}, given
        assert run.trace[0]["data"]["input"] == {"s": "cut \ufffd", "pair": "\U0001f600"}, given


@pytest.mark.parametrize("value", ["{bad", "@missing.json"])
def test_bad_input_option_exits_2_before_spawning(tmp_path: Path, value: str) -> None:
    """Point 83: exit 2 before spawning on any invalid input (here `--input`; spec silent on the wording)."""
    run = record(tmp_path, [send(DONE)], "--input", value)
    assert not_spawned(run) and "--input" in one_error_line(run)


def test_run_id_option(tmp_path: Path) -> None:
    """Point 62: `run_id` is `--run-id`; it is exported as `AGENT_INVARIANTS_RUN_ID` and set on every event."""
    env_file = tmp_path / "env.json"
    run = record(tmp_path, [["env", str(env_file)], send(call("c1", "get")), send(DONE)], "--run-id", "run-7",
                 fake_clock=False)
    assert {e["run_id"] for e in run.trace} == {"run-7"}
    assert run.replies[0]["run_id"] == "run-7" and run.rec["run_id"] == "run-7"
    assert json.loads(env_file.read_text())["AGENT_INVARIANTS_RUN_ID"] == "run-7"


def test_random_run_id_is_uuid4_hex(tmp_path: Path) -> None:
    """Point 62: without `--run-id`, a random UUID4 in hex, exported and on every event."""
    env_file = tmp_path / "env.json"
    run = record(tmp_path, [["env", str(env_file)], send(DONE)], fake_clock=False)
    run_id = run.rec["run_id"]
    assert re.fullmatch(r"[0-9a-f]{32}", run_id) and uuid.UUID(hex=run_id).version == 4
    assert {e["run_id"] for e in run.trace} == {run_id}
    assert json.loads(env_file.read_text())["AGENT_INVARIANTS_RUN_ID"] == run_id


def test_broken_pipe_is_not_an_error(tmp_path: Path) -> None:
    """Point 62: a write that fails with EPIPE is not an error in itself (the agent closed stdin, then called a
    tool and completed)."""
    run = record(tmp_path, [["close_stdin", None], ["sleep", 0.2], ["push", call("c1", "get")], ["sleep", 0.2],
                            send(DONE)])
    assert (run.code, run.ended_by) == (0, "completed"), run.proc.stderr
    assert run.types == ["run.start", "tool.call", "tool.result", "run.completed"]


# -- point 63: one message at a time -------------------------------------------------------------------

def test_pipelined_calls_are_answered_in_order(tmp_path: Path) -> None:
    """Point 63: pipelined messages are processed in sequence and are not an error in v2."""
    run = record(tmp_path, [["push", call("c1", "get")], ["push", call("c2", "get")], ["read", None],
                            ["read", None], send(DONE)])
    assert (run.code, run.ended_by) == (0, "completed")
    assert [(e["type"], e.get("call_id")) for e in run.trace[1:5]] == [
        ("tool.call", "c1"), ("tool.result", "c1"), ("tool.call", "c2"), ("tool.result", "c2")]
    assert [r["call_id"] for r in run.replies[1:3]] == ["c1", "c2"]


def test_event_is_flushed_before_its_reply(tmp_path: Path) -> None:
    """Point 63 (write-then-send) and point 68 (created before the spawn, flushed after each event): when the agent
    holds a reply, the trace file already has its event (the agent exits 8 otherwise)."""
    trace = str(tmp_path / "t.jsonl")
    run = record(tmp_path, [["has", [trace, '"run.start"']], send(call("c1", "get")),
                            ["has", [trace, '"tool.result"']], send(DONE)])
    assert (run.code, run.ended_by) == (0, "completed")


# -- point 64: approvals -------------------------------------------------------------------------------

APPROVALS: Json = {
    "version": 1,
    "tools": {"pay": {"paid": True}},
    "approvals": [{"tool": "pay", "args": {"amount": {"$lte": 50}}, "decision": "approve"},
                  {"tool": "p?y", "decision": "deny"}],
}


@pytest.fixture(scope="module")
def approvals(tmp_path_factory: pytest.TempPathFactory) -> Run:
    steps = [send({"type": "approval.request", "approval_id": "a1", "tool": "pay", "args": {"amount": 80}}),
             send({"type": "approval.request", "approval_id": "a2", "tool": "wire", "args": {"amount": 1}}),
             send({"type": "approval.request", "approval_id": "a3", "tool": "pay", "call_id": "c9"}),
             send(DONE)]
    return record(tmp_path_factory.mktemp("approvals"), steps, fixtures=APPROVALS)


def test_first_matching_approval_entry_decides(approvals: Run) -> None:
    """Point 64: answered by the first entry whose tool glob and args subset tree match; "deny" →
    `approved: false`."""
    assert approvals.replies[1] == {"type": "approval.decision", "approval_id": "a1", "approved": False}
    assert approvals.trace[2] == ev(3, "approval.granted", tool="pay", approval_id="a1", approved=False,
                                    args={"amount": 80}, data={"attested_by": "harness"})


def test_request_matching_no_entry_is_an_approval_miss(approvals: Run) -> None:
    """Point 64: a request that matches no entry is denied (`approved: false`, `data.fixture_miss: true`, finding
    `record.approval_miss`); point 72: a passing run with a miss exits 2."""
    assert approvals.replies[2] == {"type": "approval.decision", "approval_id": "a2", "approved": False}
    assert approvals.trace[4] == ev(5, "approval.granted", tool="wire", approval_id="a2", approved=False,
                                    args={"amount": 1}, data={"attested_by": "harness", "fixture_miss": True})
    assert approvals.codes == ["record.approval_miss"]
    assert approvals.rec["findings"][0]["level"] == "error"
    assert (approvals.code, approvals.report["passed"]) == (2, True)


def test_request_is_recorded_as_sent(approvals: Run) -> None:
    """Points 61/64: `approval.request {approval_id, tool, args?, call_id?}` is recorded as `approval.requested`
    with those fields; an args-less request matches an entry without `args`."""
    assert approvals.trace[5] == ev(6, "approval.requested", tool="pay", call_id="c9", approval_id="a3")
    assert approvals.trace[6]["approved"] is False and approvals.trace[6]["data"] == {"attested_by": "harness"}


def test_duplicate_approval_id_is_a_protocol_error(tmp_path: Path) -> None:
    """Point 64: a request that reuses an earlier request's `approval_id` is `protocol:duplicate_approval_id`;
    point 77: the offending message is not recorded."""
    request = {"type": "approval.request", "approval_id": "a1", "tool": "pay", "args": {"amount": 1}}
    run = record(tmp_path, [send(request), ["push", request], ["sleep", 5]], fixtures=APPROVALS)
    assert run.ended_by == "protocol:duplicate_approval_id"
    assert run.types == ["run.start", "approval.requested", "approval.granted", "run.failed"]


def test_approval_miss_with_a_failing_check_exits_1(tmp_path: Path) -> None:
    """Point 72: the check's exit 1 wins over a miss's 2."""
    rules = [{"id": "must-call", "kind": "require_event", "match": {"type": "tool.call"}}]
    run = record(tmp_path, [send({"type": "approval.request", "approval_id": "a1", "tool": "x"}), send(DONE)],
                 rules=rules, fixtures=APPROVALS)
    assert (run.code, run.codes) == (1, ["record.approval_miss"])


# -- point 66: time --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def clocked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, float]:
    before = time.time()
    steps = [send(call("c1", "get")), ["sleep", 0.3], send(DONE), ["sleep", 1.0]]
    return record(tmp_path_factory.mktemp("clock"), steps, fake_clock=False), before


def test_real_time_format_and_order(clocked: tuple[Run, float]) -> None:
    """Point 66: `time` is UTC `YYYY-MM-DDTHH:MM:SS.mmmZ`, the wall clock read at spawn plus a monotonic clock,
    so it never decreases."""
    run, before = clocked
    times = [e["time"] for e in run.trace]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", t) for t in times), times
    assert times == sorted(times)
    start = time.mktime(time.strptime(times[0][:19], "%Y-%m-%dT%H:%M:%S")) - time.timezone
    assert before - 2 <= start <= before + 10


def test_terminal_duration_is_spawn_to_terminal(clocked: tuple[Run, float]) -> None:
    """Point 66: only the terminal event's `duration_ms` is measured, spawn → terminal (not to the child's exit,
    1 s later)."""
    duration = clocked[0].trace[-1]["duration_ms"]
    assert isinstance(duration, int | float) and 300 <= duration < 1_300


def test_result_duration_absent_without_a_value(clocked: tuple[Run, float]) -> None:
    """Point 66: without a case or replayed value, a result's `duration_ms` is absent (never measured)."""
    assert "duration_ms" not in clocked[0].trace[2]


def test_fake_clock_trace_is_byte_identical(tmp_path: Path) -> None:
    """Point 66: under `--fake-clock` a deterministic agent gives a byte-identical trace."""
    steps = [send(call("c1", "get", {"x": 1})), send({"type": "agent.message", "text": "t"}), send(DONE)]
    first = record(tmp_path / "one", steps)
    second = record(tmp_path / "two", steps)
    assert first.out.read_bytes() == second.out.read_bytes()


def test_fake_time_past_one_second(tmp_path: Path) -> None:
    """Point 66: fake `time` is epoch + seq ms in the `YYYY-MM-DDTHH:MM:SS.mmmZ` form, so seq 1000 is
    `00:00:01.000`."""
    run = record(tmp_path, [["raw", '{"type": "agent.message"}\n' * 1000], send(DONE)])
    assert [e["time"] for e in run.trace[998:]] == ["1970-01-01T00:00:00.999Z", "1970-01-01T00:00:01.000Z",
                                                    "1970-01-01T00:00:01.001Z", "1970-01-01T00:00:01.002Z"]


def test_run_id_option_under_fake_clock(tmp_path: Path) -> None:
    """Point 62: "`run_id` is `--run-id`, else a random UUID4 in hex (`fake-run` under `--fake-clock`)". Point 66
    also says run_id is `fake-run` under `--fake-clock`; we read the explicit option as winning."""
    run = record(tmp_path, [send(DONE)], "--run-id", "mine")
    assert {e["run_id"] for e in run.trace} == {"mine"} and run.rec["run_id"] == "mine"


def test_fixture_duration_is_never_slept(tmp_path: Path) -> None:
    """Point 66: a tool.result's `duration_ms` is the case's value; it is never measured and never slept."""
    fixtures = {"version": 1, "tools": {"get": {"$cases": [{"result": 1, "duration_ms": 60_000}]}}}
    run = record(tmp_path, [send(call("c1", "get")), send(DONE)], fixtures=fixtures, run_ms=5_000)
    assert (run.ended_by, run.trace[2]["duration_ms"]) == ("completed", 60_000)
    assert run.elapsed < 5


# -- point 67: attestation -----------------------------------------------------------------------------

PAY_FIXTURES: Json = {"version": 1, "tools": {"pay": {"paid": True}, "verify": {"$cases": [
    {"result": "ok", "observe": {"outcome_id": "o-real", "verdict": "satisfied"}}]}},
                      "approvals": [{"tool": "pay", "decision": "approve"}]}


@pytest.fixture(scope="module")
def attested(tmp_path_factory: pytest.TempPathFactory) -> Run:
    rules = [{"id": "pay-approved", "kind": "approval_bound", "tool": "pay", "attested_by": ["harness"]},
             {"id": "self-proof", "kind": "completion_requires_outcome", "outcome_id": "o-self"},
             {"id": "real-proof", "kind": "completion_requires_outcome", "outcome_id": "o-real"}]
    steps = [send({"type": "approval.granted", "approval_id": "g1", "tool": "pay"}), send(call("c1", "pay")),
             send({"type": "approval.request", "approval_id": "a1", "tool": "pay", "args": {}}),
             send(call("c2", "pay")),
             send({"type": "outcome.observed", "outcome_id": "o-self", "verdict": "satisfied",
                   "evidence_class": "configured_verifier"}),
             send(call("c3", "verify")), send(DONE)]
    return record(tmp_path_factory.mktemp("attested"), steps, rules=rules, fixtures=PAY_FIXTURES)


def test_attested_by_harness_rejects_an_agent_grant(attested: Run) -> None:
    """Point 67: `approval_bound.attested_by: [globs]` can require harness-attested grants; a grant rejected this
    way is listed with `why: "attestation"`."""
    (violation,) = attested.violations("pay-approved")
    assert violation["event_seq"] == 3
    assert violation["evidence"]["rejected"] == [{"grant_seq": 2, "why": "attestation"}]


def test_harness_grant_satisfies_attested_by_harness(attested: Run) -> None:
    """Points 64/67: a grant decided by the fixture `approvals` carries `data.attested_by: "harness"` and
    satisfies `attested_by: ["harness"]` (only the first call fails)."""
    assert [v["event_seq"] for v in attested.violations("pay-approved")] == [3]


def test_self_attested_outcome_does_not_prove_completion(attested: Run) -> None:
    """§8: an agent-sent `outcome.observed` is recorded as `self_attestation`, whatever it claims, so it does not
    satisfy `completion_requires_outcome`."""
    assert [v["event_seq"] for v in attested.violations("self-proof")] == [len(attested.trace)]


def test_observed_outcome_proves_completion(attested: Run) -> None:
    """§8: `observe` "is how real evidence enters the trace": it satisfies `completion_requires_outcome`."""
    assert attested.violations("real-proof") == []


def test_default_attested_by_accepts_an_agent_grant(tmp_path: Path) -> None:
    """Point 67: the default accepts any grant."""
    steps = [send({"type": "approval.granted", "approval_id": "g1", "tool": "pay"}), send(call("c1", "pay")),
             send(DONE)]
    run = record(tmp_path, steps, rules=[{"id": "pay-approved", "kind": "approval_bound", "tool": "pay"}],
                 fixtures=PAY_FIXTURES)
    assert (run.code, run.report["error_count"]) == (0, 0)


def test_grant_without_attestation_matches_no_glob(tmp_path: Path) -> None:
    """Point 67: an absent `data.attested_by` matches no glob, not even `*` (a hand-written trace, `check`)."""
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "spec", "rules": [
        {"id": "bound", "kind": "approval_bound", "tool": "pay", "attested_by": ["*"]}]}))
    (tmp_path / "t.jsonl").write_text('{"seq": 1, "type": "approval.granted", "tool": "pay"}\n'
                                      '{"seq": 2, "type": "tool.call", "tool": "pay", "call_id": "c1"}\n')
    proc = cli_run(tmp_path, "check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    (violation,) = json.loads(proc.stdout)["violations"]
    assert violation["evidence"]["rejected"] == [{"grant_seq": 1, "why": "attestation"}]


# -- point 68: the trace file --------------------------------------------------------------------------

def test_default_trace_path(tmp_path: Path) -> None:
    """Point 68: `--out` defaults to `.agent-invariants/runs/<run_id>.jsonl`."""
    run = record(tmp_path, [send(DONE)], "--run-id", "r1", out=None, fake_clock=False)
    path = tmp_path / ".agent-invariants" / "runs" / "r1.jsonl"
    assert run.code == 0 and path.is_file()
    assert [json.loads(line)["type"] for line in path.read_text().splitlines()] == ["run.start", "run.completed"]


def test_default_trace_path_must_not_exist(tmp_path: Path) -> None:
    """Point 68: the default path must not exist either (exit 2 before spawning)."""
    (tmp_path / ".agent-invariants" / "runs").mkdir(parents=True)
    (tmp_path / ".agent-invariants" / "runs" / "r1.jsonl").write_text("keep\n")
    run = record(tmp_path, [send(DONE)], "--run-id", "r1", out=None)
    assert not_spawned(run) and "r1.jsonl" in one_error_line(run)


def test_existing_out_is_refused_before_spawning(tmp_path: Path) -> None:
    """Point 68: `--out` must not exist (exit 2 before spawning)."""
    (tmp_path / "t.jsonl").write_text("keep\n", encoding="utf-8")
    run = record(tmp_path, [send(DONE)])
    assert not_spawned(run) and "t.jsonl" in one_error_line(run)
    assert (tmp_path / "t.jsonl").read_text() == "keep\n"


def test_force_replaces_an_existing_regular_file(tmp_path: Path) -> None:
    """Point 68: with `--force`, an existing regular file is replaced."""
    (tmp_path / "t.jsonl").write_text("old\n", encoding="utf-8")
    run = record(tmp_path, [send(DONE)], "--force")
    assert (run.code, run.types) == (0, ["run.start", "run.completed"])


def test_force_does_not_replace_a_folder(tmp_path: Path) -> None:
    """Point 68: `--force` replaces an existing regular file, "and nothing else"; point 83: exit 2 before
    spawning."""
    (tmp_path / "t.jsonl").mkdir()
    run = record(tmp_path, [send(DONE)], "--force")
    assert run.code == 2 and not_spawned(run) and (tmp_path / "t.jsonl").is_dir()


def test_agent_line_at_the_cap_is_accepted(tmp_path: Path) -> None:
    """Points 68/80: the agent's line cap is 1,040,384 bytes; a line that long is recorded, and the trace passes
    `check`'s default 1 MiB line limit."""
    run = record(tmp_path, [["line", [LINE_CAP, True]], send(DONE)])
    assert (run.code, run.ended_by, len(run.trace)) == (0, "completed", 3)
    later = cli_run(tmp_path, "check", "--contract", "c.json", "--trace", "t.jsonl")
    assert later.returncode == 0, later.stderr


def test_agent_line_over_the_cap_is_output_limit(tmp_path: Path) -> None:
    """Point 80: a line is rejected as soon as its 1,040,385th byte arrives without a newline (never buffered
    further: the agent then holds the line open); the run ends with `output_limit`, `data.limit: "line"`, and
    the line is not recorded."""
    run = record(tmp_path, [["line", [LINE_CAP + 1, False]], ["sleep", 8]], idle_ms=4_000)
    assert run.ended_by == "output_limit" and run.types == ["run.start", "run.failed"]
    assert (run.trace[-1]["reason"], run.trace[-1]["data"]["limit"]) == ("output_limit", "line")
    assert run.elapsed < 4


def test_carriage_return_counts_toward_the_line_cap(tmp_path: Path) -> None:
    """Point 80: the caps count raw stdout bytes; a 1,040,384-byte line ending in `\\r\\n` has its 1,040,385th byte
    (`\\r`) arrive without a newline."""
    head = '{"type": "agent.message", "text": "'
    line = head + "x" * (LINE_CAP - len(head) - 2) + '"}'
    run = record(tmp_path, [["raw", line + "\r\n"], send(DONE), ["sleep", 5]])
    assert run.ended_by == "output_limit"


def test_oversized_fixture_result_is_refused_at_load(tmp_path: Path) -> None:
    """Point 68: fixture results are capped at 1,040,384 canonical bytes at load; spec silent on how: we read
    "capped at load" as a load error (exit 2 before spawning)."""
    fixtures = {"version": 1, "tools": {"get": "x" * LINE_CAP}}
    run = record(tmp_path, [send(call("c1", "get")), send(DONE)], fixtures=fixtures)
    assert not_spawned(run) and "f.json" in one_error_line(run)


# -- point 69: the fixtures file -----------------------------------------------------------------------

@pytest.mark.parametrize(("tools", "path"), [
    ({"get": {"$cases": [{"ok": "yes"}]}}, "$.tools.get.$cases[0].ok"),
    ({"get": {"$cases": [{"result": 1, "duration_ms": -1}]}}, "$.tools.get.$cases[0].duration_ms"),
    ({"get": {"$cases": [{"result": 1, "observe": {"outcome_id": "o", "verdict": "yes"}}]}},
     "$.tools.get.$cases[0].observe.verdict"),
    ({"get": {"$cases": [{"call_index": -1, "result": 1}]}}, "$.tools.get.$cases[0].call_index"),
    ({"get": {"$cases": "all"}}, "$.tools.get.$cases"),
], ids=["ok", "duration", "verdict", "call_index", "cases-type"])
def test_fixture_error_names_its_path(tmp_path: Path, tools: Json, path: str) -> None:
    """Point 69: errors look like `F: $.tools.refund.$cases[2].ok: …` and exit 2 before spawning."""
    run = record(tmp_path, [send(DONE)], fixtures={"version": 1, "tools": tools})
    assert not_spawned(run) and f"f.json: {path}: " in one_error_line(run)


def test_approval_decision_must_be_approve_or_deny(tmp_path: Path) -> None:
    """Point 64/69: `decision` is `"approve"` or `"deny"`."""
    fixtures = {"version": 1, "tools": {}, "approvals": [{"tool": "pay", "decision": "maybe"}]}
    run = record(tmp_path, [send(DONE)], fixtures=fixtures)
    assert not_spawned(run) and "f.json: $.approvals[0].decision: " in one_error_line(run)


@pytest.mark.parametrize(("fixtures", "where"), [
    ({"version": 1, "tools": {}, "extra": 1}, "$"),
    ({"version": 1, "tools": {"get": {"$cases": [{"result": 1, "reslt": 2}]}}}, "$.tools.get.$cases[0]"),
    ({"version": 1, "tools": {}, "approvals": [{"tool": "pay", "decision": "approve", "who": "x"}]},
     "$.approvals[0]"),
    ({"version": 1, "tools": {"get": {"$cases": [{"result": 1, "observe": {"outcome_id": "o", "verdict": "unknown",
                                                                         "x": 1}}]}}},
     "$.tools.get.$cases[0].observe"),
], ids=["root", "case", "approval", "observe"])
def test_unknown_fixture_keys_are_rejected_at_every_level(tmp_path: Path, fixtures: Json, where: str) -> None:
    """Point 69: unknown keys are rejected at every level (exit 2 before spawning, naming the place)."""
    run = record(tmp_path, [send(DONE)], fixtures=fixtures)
    assert not_spawned(run) and f"f.json: {where}" in one_error_line(run)


@pytest.mark.parametrize("fixtures", [
    {"tools": {}}, {"version": 1}, {"version": 2, "tools": {}},
    {"version": 1, "tools": {}, "approvals": [{"decision": "approve"}]},
], ids=["no-version", "no-tools", "version-2", "approval-without-tool"])
def test_bad_fixture_root_is_refused(tmp_path: Path, fixtures: Json) -> None:
    """Point 69: the root is `{version: 1, input?, tools, approvals?}`; `version` and `tools` are required; §8:
    an approval entry is `{tool, args?, decision, approval_scope?}`."""
    run = record(tmp_path, [send(DONE)], fixtures=fixtures)
    assert not_spawned(run) and "f.json" in one_error_line(run)


@pytest.mark.parametrize(("fixtures", "path"), [
    ({"version": 1, "tools": {"get": {"$cases": [{"args": {"x": {"$arg": "y"}}, "result": 1}]}}},
     "$.tools.get.$cases[0].args"),
    ({"version": 1, "tools": {}, "approvals": [{"tool": "pay", "decision": "approve",
                                                "args": {"x": {"$from_result": {"tool": "get"}}}}]},
     "$.approvals[0].args"),
], ids=["case", "approval"])
def test_args_trees_take_no_references(tmp_path: Path, fixtures: Json, path: str) -> None:
    """§8 / point 64: `args` is a subset match tree with no references."""
    run = record(tmp_path, [send(DONE)], fixtures=fixtures)
    assert not_spawned(run) and f"f.json: {path}" in one_error_line(run)


def test_file_fixture_resolves_against_the_fixtures_folder(tmp_path: Path) -> None:
    """Point 69: `$file`, as a fixture or a case's `result`, names a JSON file resolved against the fixtures
    file's folder; its content is the result."""
    (tmp_path / "fx").mkdir()
    (tmp_path / "fx" / "one.json").write_text('{"from": "one"}', encoding="utf-8")
    (tmp_path / "fx" / "two.json").write_text("[2]", encoding="utf-8")
    fixtures = {"version": 1, "tools": {"a": {"$file": "one.json"},
                                        "b": {"$cases": [{"result": {"$file": "two.json"}, "ok": False}]}}}
    (tmp_path / "fx" / "f.json").write_text(json.dumps(fixtures), encoding="utf-8")
    run = record(tmp_path, [send(call("c1", "a")), send(call("c2", "b")), send(DONE)], "--fixtures", "fx/f.json",
                 fixtures=None)
    assert [(r["ok"], r["result"]) for r in run.replies[1:3]] == [(True, {"from": "one"}), (False, [2])]


@pytest.mark.parametrize("content", [None, "{not json"], ids=["missing", "invalid"])
def test_bad_file_fixture_is_refused_at_load(tmp_path: Path, content: str | None) -> None:
    """Point 69: a `$file` is read at load (missing or invalid → exit 2)."""
    if content is not None:
        (tmp_path / "answer.json").write_text(content, encoding="utf-8")
    fixtures = {"version": 1, "tools": {"get": {"$file": "answer.json"}}}
    run = record(tmp_path, [send(DONE)], fixtures=fixtures)
    assert not_spawned(run) and "f.json" in one_error_line(run)


# -- points 69, 70, 72: which fixture, which case, and misses (one shared run) ----------------------------

SELECT_FIXTURES: Json = {"version": 1, "tools": {
    "ex*": "glob", "exact": "exact",
    "fi?st": "first", "fi*": "second",
    "nf": {"$cases": [{"call_index": 5, "result": "x"}]}, "n*": "glob",
    "get": "exact get", "g*": {"$cases": [{"call_index": 1, "result": "one"}, {"result": "other"}]},
    "t*": {"$cases": [{"call_index": 1, "result": "second"}, {"result": "other"}]},
    "mi": {"$cases": [{"call_index": 0, "args": {"a": 1}, "result": "zero"}, {"call_index": 1, "result": "one"}]},
    "ar": {"$cases": [{"args": {}, "result": "with"}]},
    "al": {"$cases": [{"call_index": 1, "args": {"x": 1}, "result": "both"},
                      {"args": {"x": {"$gte": 1}}, "result": "args"}, {"result": "fallback"}]},
    "lit": {"$literal": {"$file": "nowhere.json"}},
    "obj": {"$file": "nowhere.json", "also": 1},
    "def": {"$cases": [{"call_index": 0}]},
}}
SELECT_CALLS: list[Json] = [
    call("exact", "exact"), call("exo", "exo"), call("fixst", "fixst"), call("nf", "nf"), call("get", "get"),
    call("gab", "gab"), call("ta", "ta"), call("tb", "tb"), call("tc", "tc"), call("mi1", "mi", {"a": 2}),
    call("mi2", "mi"), call("ar1", "ar", {}), call("ar2", "ar"), call("al1", "al", {"x": 1}),
    call("al2", "al", {"x": 1}), call("al3", "al", {"x": 0}), call("lit", "lit"), call("obj", "obj"),
    call("def", "def"), call("zz1", "zz"), call("zz2", "zz"),
]
NO_FIXTURE = {"error": "no fixture"}


@pytest.fixture(scope="module")
def selected(tmp_path_factory: pytest.TempPathFactory) -> Run:
    steps = [send(message) for message in SELECT_CALLS] + [send(DONE)]
    return record(tmp_path_factory.mktemp("select"), steps, fixtures=SELECT_FIXTURES)


def result_of(run: Run, call_id: str) -> Json:
    return reply_for(run, call_id)["result"]


def test_exact_key_wins_over_an_earlier_glob(selected: Run) -> None:
    """§8 / point 70: the fixture is the key equal to the tool, else the first glob key in file order."""
    assert [result_of(selected, c) for c in ("exact", "exo")] == ["exact", "glob"]
    assert event_for(selected, "tool.result", "exo")["data"] == {"fixture": {"key": "ex*"}}


def test_first_glob_in_file_order(selected: Run) -> None:
    """Point 70: the first key in file order that contains `*` or `?` and glob-matches the tool."""
    assert result_of(selected, "fixst") == "first"


def test_case_miss_does_not_fall_through(selected: Run) -> None:
    """Point 70: only that fixture is consulted, so a case miss there is a fixture miss (no fall-through)."""
    assert result_of(selected, "nf") == NO_FIXTURE


def test_call_index_counts_every_call_the_glob_key_matches(selected: Run) -> None:
    """Point 70: a call's `call_index` is the number of earlier `tool.call` events whose tool the key matches:
    `t*` counts ta, tb, tc; `g*` counts the earlier `get` call that the exact key answered."""
    assert [result_of(selected, c) for c in ("ta", "tb", "tc")] == ["other", "second", "other"]
    assert event_for(selected, "tool.result", "tb")["data"] == {"fixture": {"key": "t*", "case": 0}}
    assert [result_of(selected, c) for c in ("get", "gab")] == ["exact get", "one"]


def test_call_index_counts_missed_calls(selected: Run) -> None:
    """Point 70: `call_index` counts missed calls too."""
    assert [result_of(selected, c) for c in ("mi1", "mi2")] == [NO_FIXTURE, "one"]


def test_args_selector_never_matches_a_call_without_args(selected: Run) -> None:
    """Point 70: an `args` selector never matches a call without args (even the tree `{}`)."""
    assert [result_of(selected, c) for c in ("ar1", "ar2")] == ["with", NO_FIXTURE]


def test_a_case_needs_all_its_selectors(selected: Run) -> None:
    """§8 / point 70: cases are tried in order; a case matches when all its selectors match."""
    assert [result_of(selected, c) for c in ("al1", "al2", "al3")] == ["args", "both", "fallback"]
    assert [event_for(selected, "tool.result", c)["data"]["fixture"]["case"] for c in ("al1", "al2", "al3")] == [
        1, 0, 2]


def test_literal_form_answers_verbatim(selected: Run) -> None:
    """Point 69: `{"$literal": v}` answers `v` verbatim (a real result may look like `{"$file": …}`)."""
    assert reply_for(selected, "lit") == {"type": "tool.result", "call_id": "lit", "ok": True,
                                          "result": {"$file": "nowhere.json"}}


def test_object_with_more_keys_is_a_literal(selected: Run) -> None:
    """Point 69: an object whose keys are not exactly one of `$file`/`$cases`/`$literal` is a literal result with
    `ok: true`."""
    assert reply_for(selected, "obj") == {"type": "tool.result", "call_id": "obj", "ok": True,
                                          "result": {"$file": "nowhere.json", "also": 1}}


def test_case_defaults_ok_true_and_result_null(selected: Run) -> None:
    """Point 69: in a case, an absent `ok` is true and an absent `result` is null; point 65: `result` is always
    present in the trace."""
    assert reply_for(selected, "def") == {"type": "tool.result", "call_id": "def", "ok": True, "result": None}
    result = event_for(selected, "tool.result", "def")
    assert ("result" in result, result["result"], result["data"]) == (True, None,
                                                                      {"fixture": {"key": "def", "case": 0}})


def test_fixture_miss_reply_and_trace(selected: Run) -> None:
    """§8 / point 72: the agent gets `tool.result {call_id, ok: false, result: {"error": "no fixture"}}`; the trace
    gets the same result with `data.fixture_miss: true`, and the run continues."""
    assert reply_for(selected, "zz1") == {"type": "tool.result", "call_id": "zz1", "ok": False,
                                          "result": NO_FIXTURE}
    result = event_for(selected, "tool.result", "zz1")
    assert {k: result[k] for k in ("tool", "ok", "result", "data")} == {
        "tool": "zz", "ok": False, "result": NO_FIXTURE, "data": {"fixture_miss": True}}
    assert selected.trace[-1]["type"] == "run.completed"


def test_one_finding_per_miss(selected: Run) -> None:
    """Point 72: the report gets one `record.fixture_miss` finding per miss."""
    assert selected.codes == ["record.fixture_miss"] * 5
    assert [f["call_id"] for f in selected.rec["findings"]] == ["nf", "mi1", "ar2", "zz1", "zz2"]


def test_fixture_miss_finding_fields(selected: Run) -> None:
    """Point 72: `record.fixture_miss {seq, call_id, tool, call_index}` at level error (`call_index` as point 70
    counts it for the fixture's key: ar2 is the second `ar` call). Spec silent on which seq: the call's or the
    result's."""
    finding = next(f for f in selected.rec["findings"] if f["call_id"] == "ar2")
    assert {k: finding.get(k) for k in ("code", "level", "tool", "call_index")} == {
        "code": "record.fixture_miss", "level": "error", "tool": "ar", "call_index": 1}
    assert finding["seq"] in (event_for(selected, "tool.call", "ar2")["seq"],
                              event_for(selected, "tool.result", "ar2")["seq"])


def test_passing_run_with_a_miss_exits_2(selected: Run) -> None:
    """Point 72: a run whose check passes but which had a fixture miss exits 2."""
    assert (selected.code, selected.report["passed"], selected.ended_by) == (2, True, "completed")


def test_fixture_miss_counts_as_a_tool_failure(tmp_path: Path) -> None:
    """Point 72: a miss counts as a tool failure for v1 budgets and `failure_handled`; the check's exit 1 wins over
    the miss's 2."""
    rules = [{"id": "no-failures", "kind": "event_budget", "max_tool_failures": 0},
             {"id": "handled", "kind": "failure_handled", "within_events": 1}]
    run = record(tmp_path, [send(call("c1", "nope")), send(DONE)], rules=rules)
    assert run.report["summary"]["tool_failures"] == 1
    assert [v["evidence"]["actual"] for v in run.violations("no-failures")] == [1]
    assert [v["event_seq"] for v in run.violations("handled")] == [3]
    assert (run.code, run.codes) == (1, ["record.fixture_miss"])


# -- point 71: case order checked at load ---------------------------------------------------------------

@pytest.mark.parametrize(("cases", "index"), [
    ([{"call_index": 0, "result": 0}, {"result": 1}, {"call_index": 2, "result": 2}], 1),
    ([{"args": {"a": 1, "b": 2}, "result": 0}, {"args": {"b": 2, "a": 1}, "result": 1}], 1),
    ([{"call_index": 3, "result": 0}, {"call_index": 3, "result": 1}], 1),
], ids=["fallback-not-last", "same-args", "same-call_index"])
def test_bad_case_order_is_refused(tmp_path: Path, cases: list[Json], index: int) -> None:
    """Point 71: a selector-less case that is not last, or two cases with identical selectors, exits 2
    (`F: $.tools.x.$cases[i]: …`)."""
    run = record(tmp_path, [send(DONE)], fixtures={"version": 1, "tools": {"x": {"$cases": cases}}})
    assert not_spawned(run) and f"f.json: $.tools.x.$cases[{index}]: " in one_error_line(run)


def test_case_shadowed_by_same_call_index_warns(tmp_path: Path) -> None:
    """Point 71: a case unreachable behind an earlier case with the same `call_index` and no `args` gets a stderr
    warning, and the run goes on."""
    fixtures = {"version": 1, "tools": {"x": {"$cases": [{"call_index": 0, "result": 0},
                                                         {"call_index": 0, "args": {"a": 1}, "result": 1}]}}}
    run = record(tmp_path, [send(DONE)], fixtures=fixtures)
    assert (run.code, run.ended_by) == (0, "completed")
    assert "$.tools.x.$cases[1]" in run.proc.stderr


# -- point 73: replay ------------------------------------------------------------------------------------

BASELINE: list[Json] = [
    {"seq": 1, "type": "run.start"},
    {"seq": 2, "type": "tool.call", "tool": "get", "call_id": "b1", "args": {"b": 1, "a": 2.0}},
    {"seq": 3, "type": "tool.result", "tool": "get", "call_id": "b1", "ok": True, "result": "first", "duration_ms": 7},
    {"seq": 4, "type": "outcome.observed", "outcome_id": "o", "verdict": "satisfied",
     "evidence_class": "configured_verifier", "call_id": "b1", "data": {"attested_by": "harness"}},
    {"seq": 5, "type": "tool.call", "tool": "get", "call_id": "b2", "args": {"a": 2, "b": 1}},
    {"seq": 6, "type": "tool.result", "tool": "get", "call_id": "b2", "ok": False, "result": "second"},
    {"seq": 7, "type": "outcome.observed", "outcome_id": "s", "verdict": "satisfied",
     "evidence_class": "self_attestation", "data": {"attested_by": "agent"}},
    {"seq": 8, "type": "tool.call", "tool": "get", "call_id": "b3"},
    {"seq": 9, "type": "tool.result", "tool": "get", "call_id": "b3", "ok": True, "result": "no args"},
    {"seq": 10, "type": "tool.call", "tool": "rs", "call_id": "b4", "args": {}},
    {"seq": 11, "type": "tool.call", "tool": "rs", "call_id": "b5", "args": {}},
    {"seq": 12, "type": "tool.result", "call_id": "b5", "ok": True, "result": "for b5"},
    {"seq": 13, "type": "approval.granted", "approval_id": "x1", "tool": "pay", "args": {"amount": 5},
     "approved": False, "data": {"attested_by": "harness"}},
    {"seq": 14, "type": "approval.granted", "approval_id": "x2", "tool": "pay", "args": {"amount": 5},
     "approved": True, "data": {"attested_by": "harness"}},
    {"seq": 15, "type": "approval.granted", "approval_id": "x3", "tool": "pay", "args": {"amount": 6},
     "approved": False, "data": {"attested_by": "agent"}},
    {"seq": 16, "type": "run.completed"},
]


def write_baseline(folder: Path, events: list[Json] = BASELINE) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "b.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> Run:
    folder = tmp_path_factory.mktemp("replay")
    write_baseline(folder)
    steps = [send(call("c1", "get", {"a": 2, "b": 1})), send(call("c2", "get", {"b": 1, "a": 2})),
             send(call("c3", "get")), send(call("c4", "get", {})), send(call("c5", "get", {"a": 2, "b": 1})),
             send(call("c6", "rs", {})), send(call("c7", "rs", {}))]
    steps += [send({"type": "approval.request", "approval_id": f"a{amount}{i}", "tool": "pay",
                    "args": {"amount": amount}}) for i, amount in ((1, 5), (2, 5), (3, 6))]
    fixtures = {"version": 1, "tools": {"get": "from fixtures", "rs": "rs fixture"},
                "approvals": [{"tool": "pay", "decision": "approve"}]}
    return record(folder, [*steps, send(DONE)], "--replay", "b.jsonl", fixtures=fixtures)


def test_replay_copies_ok_result_duration_and_seq(replayed: Run) -> None:
    """Point 73: the k-th call with a key (tool, RFC 8785 canonical args: 2.0 is 2, key order ignored) gets the
    k-th baseline result: `ok`, `result` and `duration_ms` copied, `data.replay_seq` = the baseline result's
    seq."""
    assert replayed.trace[2] == ev(3, "tool.result", tool="get", call_id="c1", ok=True, result="first",
                                   duration_ms=7, data={"replay_seq": 3})


def test_replay_reemits_the_following_harness_outcomes(replayed: Run) -> None:
    """Point 73: the harness re-emits the harness-attested outcomes that directly follow that result (and not an
    agent's)."""
    assert replayed.trace[3] == ev(4, "outcome.observed", call_id="c1", outcome_id="o", verdict="satisfied",
                                   evidence_class="configured_verifier", data={"attested_by": "harness"})
    assert [e["outcome_id"] for e in replayed.trace if e["type"] == "outcome.observed"] == ["o"]


def test_replay_pairs_by_occurrence(replayed: Run) -> None:
    """Point 73: the second call with the same key gets the second baseline call's result."""
    assert reply_for(replayed, "c2") == {"type": "tool.result", "call_id": "c2", "ok": False, "result": "second"}
    assert event_for(replayed, "tool.result", "c2")["data"] == {"replay_seq": 6}


def test_replay_absent_args_differ_from_empty_args(replayed: Run) -> None:
    """Point 73: absent args are distinct from `{}`: the args-less call replays, the `{}` call goes to fixtures."""
    assert [result_of(replayed, c) for c in ("c3", "c4")] == ["no args", "from fixtures"]
    assert event_for(replayed, "tool.result", "c4")["data"] == {"fixture": {"key": "get"}}


def test_replay_falls_back_to_fixtures_when_occurrences_run_out(replayed: Run) -> None:
    """Point 73: when there is no such baseline result, fixtures answer (replay, then fixtures, then a miss)."""
    assert result_of(replayed, "c5") == "from fixtures"


def test_replay_baseline_call_without_result_goes_to_fixtures(replayed: Run) -> None:
    """Point 73: the k-th call pairs with the k-th baseline call; when that call has no result, fixtures answer
    (the second call still gets the second baseline call's result)."""
    assert [result_of(replayed, c) for c in ("c6", "c7")] == ["rs fixture", "for b5"]


def test_replay_approvals_from_baseline_grants(replayed: Run) -> None:
    """Point 73: approval requests replay the baseline's harness-attested grants by the same key (in order),
    else use `approvals` (an agent-attested baseline grant is not replayed)."""
    decisions = [r["approved"] for r in replayed.replies if r != "EOF" and r["type"] == "approval.decision"]
    assert decisions == [False, True, True]


def test_replay_without_fixtures(tmp_path: Path) -> None:
    """Point 73: `--fixtures` is optional with `--replay`; an unanswered call is then a miss."""
    write_baseline(tmp_path)
    run = record(tmp_path, [send(call("c1", "get")), send(call("c2", "other")), send(DONE)], "--replay", "b.jsonl",
                 fixtures=None)
    assert answers(run) == ["no args", NO_FIXTURE]
    assert (run.code, run.codes) == (2, ["record.fixture_miss"])


def test_invalid_baseline_exits_2_before_spawning(tmp_path: Path) -> None:
    """Point 73: an invalid baseline exits 2 before spawning."""
    (tmp_path / "b.jsonl").write_text('{"seq": 2, "type": "a"}\n{"seq": 1, "type": "b"}\n', encoding="utf-8")
    run = record(tmp_path, [send(DONE)], "--replay", "b.jsonl")
    assert not_spawned(run) and "b.jsonl" in one_error_line(run)


# -- points 74, 75, 84: --enforce (one shared run; each tool is governed by its own rule) -----------------

ENFORCE_RULES: list[Json] = [
    {"id": "ra-approved", "kind": "require_approval", "tool": "ra"},
    {"id": "de-event", "kind": "deny_event", "match": {"type": "tool.call", "tool": "de"}},
    {"id": "ro-order", "kind": "require_order", "before": {"type": "tool.call", "tool": "ro.login"},
     "after": {"type": "tool.call", "tool": "ro"}},
    {"id": "pr-prec", "kind": "precedence", "before": {"type": "tool.call", "tool": "pr.login"},
     "after": {"type": "tool.call", "tool": "pr"}},
    {"id": "ta-small", "kind": "tool_args", "tool": "ta", "match": {"x": {"$lte": 5}}},
    {"id": "ti-second", "kind": "tool_args", "tool": "ti", "call_index": 1, "match": {"x": 1}},
    {"id": "ur-ref", "kind": "tool_args", "tool": "ur",
     "match": {"amount": {"$from_result": {"tool": "ur.get", "path": "paid"}}}},
    {"id": "fo-output", "kind": "tool_args", "tool": "fo", "match": {"x": {"$any_of": [{"$from_output": "x"}, 5]}}},
    {"id": "tc-max", "kind": "tool_calls", "tool": "tc", "max": 1},
    {"id": "ts-max", "kind": "tool_calls", "tool": "ts", "max": 1, "count": "successful"},
    {"id": "rl-limit", "kind": "retry_limit", "tool": "rl", "max_attempts": 1, "group_by": "tool"},
    {"id": "ab-bound", "kind": "approval_bound", "tool": "ab"},
    {"id": "cg-bad", "kind": "deny_event", "match": {"type": "tool.call", "tool": "cg", "args": {"x": "bad"}}},
    {"id": "cg-bound", "kind": "approval_bound", "tool": "cg"},
    {"id": "wa-warn", "kind": "deny_tool", "tool": "wa", "severity": "warning"},
    {"id": "tr-result", "kind": "tool_result_required", "tool": "tr"},
    {"id": "de-result", "kind": "tool_result_required", "tool": "de"},
    {"id": "to-order", "kind": "tool_order", "tools": ["to.login", "to"], "mode": "exact"},
    {"id": "long-deny", "kind": "deny_tool", "tool": "é*"},
    {"id": "st-final", "kind": "stop_is_final"},
]
LONG_TOOL = "é" * 490


def ecall(call_id: str, args: Json = None) -> Step:
    """A call whose tool is the call id's prefix (`ta-2` calls `ta`)."""
    return send(call(call_id, call_id.rsplit("-", 1)[0], args))


ENFORCE_STEPS: list[Step] = [
    ecall("ra-1"), ecall("de-1"),
    ecall("ro-1"), ecall("ro.login-1"), ecall("ro-2"),
    ecall("pr-1"), ecall("pr.login-1"), ecall("pr-2"),
    ecall("ta-1", {"x": 9}), ecall("ta-2", {"x": 1}),
    ecall("ti-1", {"x": 2}), ecall("ti-2", {"x": 2}),
    ecall("ur-1", {"amount": 5}), ecall("fo-1", {"x": 9}),
    ecall("tc-1"), ecall("tc-2"), ecall("tc-3"),
    ecall("ts-1"), ecall("ts-2"), ecall("ts-3"),
    ecall("rl-1"), ecall("rl-2"), ecall("rl-3"),
    send({"type": "approval.granted", "approval_id": "g-ab", "tool": "ab"}), ecall("ab-1"), ecall("ab-2"),
    send({"type": "approval.granted", "approval_id": "g-cg", "tool": "cg"}), ecall("cg-1", {"x": "bad"}),
    ecall("cg-2", {"x": "ok"}),
    ecall("ra-2"), ecall("wa-1"), ecall("tr-1"), ecall("to-1"),
    send(call("long-1", LONG_TOOL)),
    send({"type": "control.stop"}), ecall("st-1"),
    send(DONE),
]
ENFORCE_FIXTURES: Json = {"version": 1, "tools": {
    "ts": {"$cases": [{"call_index": 0, "ok": False, "result": "e"}, {"result": "fine"}]}, "*": "answered"}}


@pytest.fixture(scope="module")
def enforced(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return record(tmp_path_factory.mktemp("enforce"), ENFORCE_STEPS, "--enforce", "--safety-exit", "7",
                  rules=ENFORCE_RULES, fixtures=ENFORCE_FIXTURES)


def outcome(run: Run, call_id: str) -> str:
    """"denied by <rule ids>" or "answered"."""
    reply = reply_for(run, call_id)
    if reply["type"] == "tool.denied":
        return "denied by " + ",".join(event_for(run, "tool.denied", call_id)["data"]["rule_ids"])
    return "answered"


@pytest.mark.parametrize(("call_ids", "expected"), [
    (["ra-1", "ra-2"], ["denied by ra-approved", "answered"]),
    (["de-1"], ["denied by de-event"]),
    (["ro-1", "ro.login-1", "ro-2"], ["denied by ro-order", "answered", "answered"]),
    (["pr-1", "pr.login-1", "pr-2"], ["denied by pr-prec", "answered", "answered"]),
    (["ta-1", "ta-2"], ["denied by ta-small", "answered"]),
    (["ti-1", "ti-2"], ["answered", "denied by ti-second"]),
    (["ur-1"], ["denied by ur-ref"]),
    (["ab-1", "ab-2"], ["answered", "denied by ab-bound"]),
    (["long-1"], ["denied by long-deny"]),
    (["st-1"], ["denied by st-final"]),
], ids=["require_approval", "deny_event", "require_order", "precedence", "tool_args", "tool_args-call_index",
        "tool_args-unresolved", "approval_bound-one_use", "deny_tool", "stop_is_final"])
def test_enforced_kinds(enforced: Run, call_ids: list[str], expected: list[str]) -> None:
    """§8 list plus point 74: a call is denied iff an error-severity rule of a safety kind puts a `fail` or
    `unresolved` violation at it; that covers deny_event, require_order and precedence, and tool_args with
    `call_index` too."""
    assert [outcome(enforced, c) for c in call_ids] == expected


@pytest.mark.parametrize(("call_ids", "expected"), [
    (["tc-1", "tc-2", "tc-3"], ["answered", "denied by tc-max", "denied by tc-max"]),
    (["rl-1", "rl-2", "rl-3"], ["answered", "denied by rl-limit", "denied by rl-limit"]),
    (["ts-1", "ts-2", "ts-3"], ["answered", "answered", "denied by ts-max"]),
], ids=["tool_calls-max", "retry_limit", "tool_calls-successful"])
def test_bounds_deny_every_call_beyond(enforced: Run, call_ids: list[str], expected: list[str]) -> None:
    """Point 74: `tool_calls.max` and `retry_limit` deny *every* call beyond the bound; under `count: successful`
    a call is denied once the earlier successful calls reach `max` (ts-1 failed)."""
    assert [outcome(enforced, c) for c in call_ids] == expected


@pytest.mark.parametrize("call_id", ["wa-1", "fo-1", "tr-1", "to-1"],
                         ids=["warning", "from_output", "tool_result_required", "tool_order"])
def test_not_enforced(enforced: Run, call_id: str) -> None:
    """Point 74: warning rules are never enforced, nor a tool_args rule with `$from_output` anywhere, nor liveness
    kinds (tool_result_required, tool_order)."""
    assert outcome(enforced, call_id) == "answered"


def test_grant_is_consumed_by_a_call_another_rule_denies(enforced: Run) -> None:
    """Point 75 / point 21: a covered call that another rule denies still consumes its grant."""
    assert [outcome(enforced, c) for c in ("cg-1", "cg-2")] == ["denied by cg-bad", "denied by cg-bound"]


def test_denied_call_row(enforced: Run) -> None:
    """§8 / points 65, 75: the agent gets `tool.denied {call_id, reason: "<rule_id>: <message>"}`, the trace gets
    `tool.call` · `tool.denied {call_id, tool, reason, data: {rule_ids}}` and no result."""
    denied = event_for(enforced, "tool.denied", "de-1")
    call_event = event_for(enforced, "tool.call", "de-1")
    (violation,) = [v for v in enforced.violations("de-event") if v["event_seq"] == call_event["seq"]]
    reason = f"de-event: {violation['message']}"
    assert denied == ev(call_event["seq"] + 1, "tool.denied", tool="de", call_id="de-1", reason=reason,
                        data={"rule_ids": ["de-event"]})
    assert reply_for(enforced, "de-1") == {"type": "tool.denied", "call_id": "de-1", "reason": reason}
    assert not [e for e in enforced.trace if e["type"] == "tool.result" and e.get("call_id") == "de-1"]


def test_reason_is_cut_to_500_code_points(enforced: Run) -> None:
    """Point 75: the reason is cut to 500 code points (the tool name is 490 two-byte characters)."""
    reason = reply_for(enforced, "long-1")["reason"]
    assert len(reason) == 500 and reason.startswith("long-deny: ") and "éééé" in reason
    assert event_for(enforced, "tool.denied", "long-1")["reason"] == reason


def test_agent_may_continue_after_a_denial(enforced: Run) -> None:
    """§8: the agent may continue after `tool.denied`; the run completes normally."""
    assert (enforced.ended_by, enforced.trace[-1]["type"]) == ("completed", "run.completed")


def test_violation_at_a_denied_call_is_prevented(enforced: Run) -> None:
    """§8: the post-run check still reports the attempt; point 75: "Each violation at a call that was answered by
    `tool.denied` gets `prevented: true`" (point 84: "The report carries `prevented: true` on denied attempts"),
    while point 1 keeps v1 evidence identical (`deny_event`: `{match}`)."""
    seq = event_for(enforced, "tool.call", "de-1")["seq"]
    (violation,) = [v for v in enforced.violations("de-event") if v["event_seq"] == seq]
    assert violation.get("prevented") is True
    assert set(violation["evidence"]) == {"match"}


def test_denied_call_counts_for_post_run_budgets(enforced: Run) -> None:
    """Point 75: the denied `tool.call` stays in the trace and counts wherever a call counts (`tool_calls`: the
    violation sits at the second, denied call)."""
    seqs = [v["event_seq"] for v in enforced.violations("tc-max")]
    assert seqs == [event_for(enforced, "tool.call", "tc-2")["seq"]]


def test_tool_result_required_flags_a_denied_call(enforced: Run) -> None:
    """Point 75: `tool_result_required` flags a denied call."""
    assert [v["event_seq"] for v in enforced.violations("de-result")] == [
        event_for(enforced, "tool.call", "de-1")["seq"]]


def test_denied_after_stop_is_flagged_by_stop_is_final(enforced: Run) -> None:
    """Point 75: `stop_is_final` flags a `tool.denied` after a stop unless `allowed_after` lists it."""
    call_seq = event_for(enforced, "tool.call", "st-1")["seq"]
    assert [v["event_seq"] for v in enforced.violations("st-final")] == [call_seq, call_seq + 1]


def test_denial_gives_the_safety_exit(enforced: Run) -> None:
    """Point 84: `--safety-exit N` replaces 1 when a call was denied under `--enforce`."""
    assert enforced.code == 7


def test_reason_names_the_first_rule_and_rule_ids_all(tmp_path: Path) -> None:
    """Point 75: the reason is `<rule_id>: <message>` of the first firing rule in contract order, and
    `data.rule_ids` lists every firing rule (not the warning one)."""
    rules = [{"id": "z-event", "kind": "deny_event", "match": {"type": "tool.call", "tool": "get"}},
             {"id": "a-tool", "kind": "deny_tool", "tool": "get"},
             {"id": "quiet", "kind": "deny_tool", "tool": "get", "severity": "warning"}]
    run = record(tmp_path, [send(call("c1", "get")), send(DONE)], "--enforce", rules=rules)
    message = run.violations("z-event")[0]["message"]
    assert run.replies[1]["reason"] == f"z-event: {message}"
    assert sorted(run.trace[2]["data"]["rule_ids"]) == ["a-tool", "z-event"]


def test_allow_tools_is_enforced(tmp_path: Path) -> None:
    """§8: `allow_tools` is in the enforced list."""
    rules = [{"id": "only-login", "kind": "allow_tools", "tools": ["login"]}]
    run = record(tmp_path, [send(call("c1", "login")), send(call("c2", "get")), send(DONE)], "--enforce",
                 rules=rules, fixtures=ENFORCE_FIXTURES)
    assert [outcome(run, c) for c in ("c1", "c2")] == ["answered", "denied by only-login"]


def test_event_budget_is_not_enforced(tmp_path: Path) -> None:
    """Point 74: a call is denied only for a violation *at that call*; `event_budget` violations carry no seq
    (v1 §4.8), so they never deny (the post-run check still fails)."""
    rules = [{"id": "one-call", "kind": "event_budget", "max_tool_calls": 1}]
    run = record(tmp_path, [send(call("c1", "get")), send(call("c2", "get")), send(DONE)], "--enforce",
                 rules=rules, fixtures=ENFORCE_FIXTURES)
    assert [outcome(run, c) for c in ("c1", "c2")] == ["answered", "answered"]
    assert run.code == 1


def test_section_8_example_with_enforce(tmp_path: Path) -> None:
    """§8 example: with `--enforce`, the un-granted refund gets `tool.denied` from approval_bound."""
    rules = [{"id": "refund-approved", "kind": "approval_bound", "tool": "refund", "bind": "args_subset"}]
    steps = [send(call("c1", "get")), send(call("c2", "refund", {"order": "A9", "amount": 10})), send(DONE)]
    run = record(tmp_path, steps, "--enforce", rules=rules, fixtures=ENFORCE_FIXTURES)
    assert [outcome(run, c) for c in ("c1", "c2")] == ["answered", "denied by refund-approved"]
    assert reply_for(run, "c2")["reason"].startswith("refund-approved: ")


def test_section_8_example_without_enforce(tmp_path: Path) -> None:
    """§8 example: without `--enforce`, the refund is answered and `check` fails `refund-approved` at that call."""
    rules = [{"id": "refund-approved", "kind": "approval_bound", "tool": "refund", "bind": "args_subset"}]
    steps = [send(call("c1", "get")), send(call("c2", "refund", {"order": "A9", "amount": 10})), send(DONE)]
    run = record(tmp_path, steps, rules=rules, fixtures=ENFORCE_FIXTURES)
    assert [outcome(run, c) for c in ("c1", "c2")] == ["answered", "answered"]
    (violation,) = run.violations("refund-approved")
    assert (run.code, violation["event_seq"], violation["code"]) == (1, 4, "approval_bound.missing")


# -- points 65, 76, 77: endings --------------------------------------------------------------------------

def harness_end(run: Run) -> dict[str, Json]:
    """The harness's `run.failed`, which must be the trace's last event."""
    last = run.trace[-1]
    assert last["type"] == "run.failed" and last["data"]["attested_by"] == "harness", last
    return last


@pytest.fixture(scope="module")
def crashed(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return record(tmp_path_factory.mktemp("crash"), [send(call("c1", "get")), ["exit", 3]])


def test_exit_before_terminal(crashed: Run) -> None:
    """§8 / point 76: `exit:<n>` for an exit before a terminal message; the report's `exit_status` is the
    child's."""
    assert (crashed.ended_by, harness_end(crashed)["reason"], crashed.rec["exit_status"]) == ("exit:3", "exit:3", 3)


def test_harness_ending_row_under_fake_clock(crashed: Run) -> None:
    """Points 65/66: a harness ending appends `run.failed {reason, duration_ms, data: {attested_by: "harness"}}`
    (the partial trace kept); `duration_ms` is omitted under `--fake-clock`."""
    assert crashed.trace == [ev(1, "run.start", data={"input": {"q": 1}, "protocol": 1}),
                             ev(2, "tool.call", tool="get", call_id="c1"),
                             ev(3, "tool.result", tool="get", call_id="c1", ok=True, result={"a": 1},
                                data={"fixture": {"key": "get"}}),
                             ev(4, "run.failed", reason="exit:3", data={"attested_by": "harness"})]


def test_harness_ending_finding_and_exit(crashed: Run) -> None:
    """Point 83: a harness ending gives a `record.ended` finding at level error; with a passing partial check the
    exit is 2 (§8)."""
    assert crashed.codes == ["record.ended"] and crashed.rec["findings"][0]["level"] == "error"
    assert (crashed.code, crashed.report["error_count"]) == (2, 0)


def test_exit_zero_without_terminal(tmp_path: Path) -> None:
    """Point 76: `exit:<n>` for any exit before a terminal message, exit 0 included."""
    run = record(tmp_path, [send(call("c1", "get"))])
    assert (run.ended_by, harness_end(run)["reason"], run.code) == ("exit:0", "exit:0", 2)


def test_harness_ending_measures_duration(tmp_path: Path) -> None:
    """Point 65: without `--fake-clock`, the harness's `run.failed` carries the measured `duration_ms`."""
    run = record(tmp_path, [["sleep", 0.2], ["exit", 4]], fake_clock=False)
    assert 200 <= harness_end(run)["duration_ms"] < 10_000


def test_run_timeout(tmp_path: Path) -> None:
    """§8 / point 76: `timeout:run`."""
    run = record(tmp_path, [["sleep", 10]], run_ms=300, idle_ms=5_000)
    assert (run.ended_by, harness_end(run)["reason"]) == ("timeout:run", "timeout:run")
    assert run.elapsed < 5


def test_idle_timeout(tmp_path: Path) -> None:
    """§8 / point 76: `timeout:idle` — no agent message for `--idle-timeout-ms` while the harness waits."""
    run = record(tmp_path, [send({"type": "agent.message"}), ["sleep", 10]], run_ms=8_000, idle_ms=300)
    assert (run.ended_by, harness_end(run)["reason"]) == ("timeout:idle", "timeout:idle")
    assert run.types == ["run.start", "agent.message", "run.failed"]


def test_signal_death(tmp_path: Path) -> None:
    """Point 76: `signal:<NAME>` for a signal the harness did not send (spec silent on the name's form: we
    accept `SIGKILL` or `KILL`)."""
    run = record(tmp_path, [["signal", "SIGKILL"]])
    assert run.ended_by in ("signal:SIGKILL", "signal:KILL") and harness_end(run)["reason"] == run.ended_by


def test_interrupted(tmp_path: Path) -> None:
    """Point 76: `interrupted`, when `record` gets SIGINT/SIGTERM; the agent's group is ended too (point 79)."""
    where = tmp_path / "where.json"
    command = agent_command(tmp_path, [["where", str(where)], ["sleep", 20]])
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "spec", "rules": [DENY_SHELL]}))
    (tmp_path / "f.json").write_text(json.dumps(FIXTURES))
    proc = subprocess.Popen([sys.executable, "-m", "agent_invariants", "record", "--contract", "c.json",
                             "--fixtures", "f.json", "--out", "t.jsonl", "--format", "json", "--fake-clock", "--",
                             *command], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while not where.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    stdout, _ = proc.communicate(timeout=15)
    events = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert (events[-1]["type"], events[-1]["reason"]) == ("run.failed", "interrupted")
    assert json.loads(stdout)["record"]["ended_by"] == "interrupted"
    assert not alive(json.loads(where.read_text())["pid"])


@pytest.mark.parametrize(("steps", "detail"), [
    ([send(call("c1", "get")), ["push", call("c1", "get")]], "duplicate_call_id"),
    ([send(DONE), ["push", {"type": "agent.message"}]], "after_terminal"),
], ids=["duplicate_call_id", "after_terminal"])
def test_protocol_details(tmp_path: Path, steps: list[Step], detail: str) -> None:
    """§8 / point 76: the protocol details; point 77: the offending message is never recorded."""
    run = record(tmp_path, [*steps, ["sleep", 5]])
    assert (run.ended_by, harness_end(run)["reason"]) == (f"protocol:{detail}", f"protocol:{detail}")
    assert run.types[-2] == ("tool.result" if detail == "duplicate_call_id" else "run.completed")


def test_stdout_closed_while_running(tmp_path: Path) -> None:
    """Point 76: `protocol:stdout_closed` — stdout hit EOF but the child is still running 2 s later."""
    run = record(tmp_path, [["close_stdout", None], ["sleep", 8]], idle_ms=6_000)
    assert run.ended_by == "protocol:stdout_closed"
    assert run.elapsed < 6


def test_first_problem_in_stream_order_wins(tmp_path: Path) -> None:
    """Point 76: stdout is read to EOF before the exit status is looked at, so a bad line then a crash is
    `protocol:bad_json`."""
    run = record(tmp_path, [["raw", "oops\n"], ["exit", 3]])
    assert run.ended_by == "protocol:bad_json"


def test_offending_message_is_described_not_recorded(tmp_path: Path) -> None:
    """Point 77: the offending message is never recorded; `run.failed.data.offending` is `{line, type?,
    excerpt}`, `line` being the 1-based stdout line (the blank line counts)."""
    run = record(tmp_path, [send({"type": "agent.message"}), ["raw", "\n"], ["push", {"type": "nope", "x": 1}],
                            ["sleep", 5]])
    assert run.types == ["run.start", "agent.message", "run.failed"]
    offending = run.trace[-1]["data"]["offending"]
    assert (offending["line"], offending.get("type")) == (3, "nope")
    assert offending["excerpt"].startswith('{"type": "nope"')


def test_offending_excerpt_is_at_most_200_code_points(tmp_path: Path) -> None:
    """Point 77: `excerpt` has at most 200 code points; `type` is absent when the line has none."""
    run = record(tmp_path, [["raw", "é" * 300 + "\n"], ["sleep", 5]])
    offending = run.trace[-1]["data"]["offending"]
    assert offending["line"] == 1 and "type" not in offending
    assert 0 < len(offending["excerpt"]) <= 200


def test_message_after_terminal_makes_a_partial_check(tmp_path: Path) -> None:
    """Point 77: after `protocol:after_terminal`, `run.failed` is appended after the agent's terminal and becomes
    the new terminal, and the check is partial (a liveness violation is inconclusive; exit 2)."""
    rules = [{"id": "must-call", "kind": "require_event", "match": {"type": "tool.call"}}]
    run = record(tmp_path, [send(DONE), ["push", {"type": "agent.message"}]], rules=rules)
    assert run.types == ["run.start", "run.completed", "run.failed"]
    assert run.violations("must-call")[0]["status"] == "inconclusive"
    assert run.code == 2


def test_non_zero_exit_after_terminal_fails_the_run(tmp_path: Path) -> None:
    """Point 77: a non-zero exit after the terminal fails the run with `exit:<n>`."""
    run = record(tmp_path, [send(DONE), ["exit", 5]])
    assert run.types == ["run.start", "run.completed", "run.failed"]
    assert (run.ended_by, run.code) == ("exit:5", 2)


def test_lingering_after_terminal_is_idle_timeout(tmp_path: Path) -> None:
    """Point 77: no exit within `--idle-timeout-ms` after the terminal is `timeout:idle`."""
    run = record(tmp_path, [send(DONE), ["sleep", 10]], idle_ms=300, run_ms=8_000)
    assert run.types == ["run.start", "run.completed", "run.failed"]
    assert run.ended_by == "timeout:idle"


# -- point 78: timers ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("option", "value"), [
    ("--timeout-ms", "0"), ("--timeout-ms", "86400001"), ("--idle-timeout-ms", "off"), ("--idle-timeout-ms", "1.5"),
])
def test_timer_values_out_of_range(tmp_path: Path, option: str, value: str) -> None:
    """Point 78: both options take integers 1..86,400,000 ms; there is no "off" value (exit 2, no spawn)."""
    run = record(tmp_path, [send(DONE)], option, value, run_ms=None, idle_ms=None)
    assert run.code == 2 and not_spawned(run)


def test_timer_bounds_are_accepted(tmp_path: Path) -> None:
    """Point 78: 1..86,400,000 — the upper bound is allowed for both."""
    run = record(tmp_path, [send(DONE)], "--timeout-ms", "86400000", "--idle-timeout-ms", "86400000",
                 run_ms=None, idle_ms=None)
    assert (run.code, run.ended_by) == (0, "completed")


def test_stderr_does_not_reset_the_idle_timer(tmp_path: Path) -> None:
    """Point 78: the idle timer ignores stderr; point 80: stderr never ends the run."""
    run = record(tmp_path, [["stderr_drip", 60]], idle_ms=400, run_ms=8_000)
    assert run.ended_by == "timeout:idle"
    assert run.elapsed < 2.5


def test_partial_line_does_not_reset_the_idle_timer(tmp_path: Path) -> None:
    """Point 78: only a complete stdout line restarts the idle timer."""
    run = record(tmp_path, [["raw", '{"type": "agent.mes'], ["sleep", 10]], idle_ms=300, run_ms=8_000)
    assert run.ended_by == "timeout:idle"


def test_blank_line_restarts_the_idle_timer(tmp_path: Path) -> None:
    """Point 78: "The idle timer restarts when a complete stdout line is read or a reply is sent" — a blank line
    is a complete stdout line (point 80 counts blank lines as stdout too; point 60 only skips them)."""
    keepalive: list[Step] = [["raw", "\n"], ["sleep", 0.2]] * 5
    run = record(tmp_path, [*keepalive, send(DONE)], idle_ms=500)
    assert run.ended_by == "completed"


def test_idle_timer_pauses_while_dispatching(tmp_path: Path) -> None:
    """Points 78/88: the idle timer pauses while the harness dispatches: a `delay_ms` answer longer than the idle
    timeout does not end the run; the answer comes after the delay, recorded as the duration."""
    fixtures = {"version": 1, "tools": {"get": {"$cases": [{"result": 1, "delay_ms": 700}]}}}
    run = record(tmp_path, [send(call("c1", "get")), send(DONE)], fixtures=fixtures, idle_ms=300)
    assert (run.ended_by, run.trace[2]["duration_ms"]) == ("completed", 700)
    assert run.elapsed >= 0.7


def test_run_timer_wins_when_both_expire(tmp_path: Path) -> None:
    """Point 78: if both timers expire at once, `timeout:run` wins."""
    run = record(tmp_path, [["sleep", 10]], run_ms=400, idle_ms=400)
    assert run.ended_by == "timeout:run"


def test_run_timer_runs_until_the_child_exits(tmp_path: Path) -> None:
    """Point 78: the run timer runs from spawn until the child has exited after its terminal message."""
    run = record(tmp_path, [send(DONE), ["sleep", 10]], run_ms=400, idle_ms=8_000)
    assert run.types == ["run.start", "run.completed", "run.failed"]
    assert run.ended_by == "timeout:run"


def test_messages_during_the_kill_grace_are_discarded(tmp_path: Path) -> None:
    """Points 78/79: SIGTERM, then SIGKILL 2 s later; messages that arrive during the grace are discarded."""
    run = record(tmp_path, [["on_sigterm", None], ["sleep", 10]], run_ms=300)
    assert run.types == ["run.start", "run.failed"] and run.ended_by == "timeout:run"
    assert 2 <= run.elapsed < 6


# -- point 79: process group ------------------------------------------------------------------------------

def test_group_is_killed_after_the_leader_exits(tmp_path: Path) -> None:
    """Point 79: when the leader exits, the group gets SIGTERM, so a grandchild holding stdout open neither blocks
    EOF nor survives."""
    pid_file = tmp_path / "orphan.pid"
    run = record(tmp_path, [["orphan", str(pid_file)], send(DONE)])
    assert (run.code, run.ended_by) == (0, "completed")
    assert run.elapsed < 5
    assert not alive(int(pid_file.read_text()))


# -- point 80: output caps and stderr ---------------------------------------------------------------------

def test_total_cap(tmp_path: Path) -> None:
    """Point 80: the caps count raw stdout bytes, whitespace-only lines included; the total cap triggers on the
    first byte beyond 64 MiB (`data.limit: "total"`), and the crossing line is not recorded."""
    run = record(tmp_path, [["flood", TOTAL_CAP], send(DONE), ["sleep", 5]])
    assert run.ended_by == "output_limit" and run.types == ["run.start", "run.failed"]
    assert run.trace[-1]["data"]["limit"] == "total"


def test_total_cap_allows_exactly_64_mib(tmp_path: Path) -> None:
    """Point 80: exactly 64 MiB of stdout is within the cap."""
    done = json.dumps(DONE).encode() + b"\n"
    run = record(tmp_path, [["flood", TOTAL_CAP - len(done)], send(DONE)])
    assert (run.ended_by, run.types) == ("completed", ["run.start", "run.completed"])


def test_stderr_is_saved_beside_the_trace(tmp_path: Path) -> None:
    """Point 80: stderr is saved to `<out>.stderr.log`; the report gives the log's path and the byte count."""
    run = record(tmp_path, [["stderr", "warming up\nready\n"], send(DONE)])
    assert (tmp_path / "t.jsonl.stderr.log").read_text(encoding="utf-8") == "warming up\nready\n"
    assert (run.rec["stderr_log"], run.rec["stderr_bytes"]) == ("t.jsonl.stderr.log", 17)


def test_stderr_keeps_its_last_mib(tmp_path: Path) -> None:
    """Point 80: the last 1 MiB is kept, with a first line `[… N bytes dropped]` when cut; stderr is drained
    continuously, so it never blocks the child nor ends the run."""
    mib = 1 << 20
    run = record(tmp_path, [["stderr_fill", [100, mib]], send(DONE)])
    assert (run.code, run.ended_by, run.rec["stderr_bytes"]) == (0, "completed", mib + 100)
    first, rest = (tmp_path / "t.jsonl.stderr.log").read_bytes().split(b"\n", 1)
    assert (first.decode(), rest) == ("[… 100 bytes dropped]", b"b" * mib)


# -- point 81: environment, folder, command ---------------------------------------------------------------

def test_child_inherits_the_environment(tmp_path: Path) -> None:
    """Point 81: the child gets `record`'s environment plus the protocol variables, adjusted by `--env K=V`."""
    env_file = tmp_path / "env.json"
    run = record(tmp_path, [["env", str(env_file)], send(DONE)], "--env", "EXTRA=x=y", "--env", "KEEP=over",
                 env={"KEEP": "mine", "OTHER": "o"})
    env = json.loads(env_file.read_text())
    assert run.code == 0
    assert (env["EXTRA"], env["KEEP"], env["OTHER"], env["AGENT_INVARIANTS_PROTOCOL"]) == ("x=y", "over", "o", "1")


def test_env_clear(tmp_path: Path) -> None:
    """Point 81: `--env-clear` starts from an empty environment; `--env` and the protocol variables remain (the
    interpreter may add LC_CTYPE itself)."""
    env_file = tmp_path / "env.json"
    run = record(tmp_path, [["env", str(env_file)], send(DONE)], "--env-clear", "--env", "ONLY=1",
                 env={"OTHER": "o"})
    env = json.loads(env_file.read_text())
    assert run.code == 0
    assert set(env) - {"LC_CTYPE"} == {"ONLY", "AGENT_INVARIANTS_PROTOCOL", "AGENT_INVARIANTS_RUN_ID"}


def test_cwd_option(tmp_path: Path) -> None:
    """Point 81: the child runs in `--cwd D`."""
    (tmp_path / "work").mkdir()
    where = tmp_path / "where.json"
    run = record(tmp_path, [["where", str(where)], send(DONE)], "--cwd", "work")
    assert run.code == 0 and json.loads(where.read_text())["cwd"] == str(tmp_path / "work")


def test_command_found_on_path(tmp_path: Path) -> None:
    """Point 81: the command is looked up on PATH."""
    (tmp_path / "bin").mkdir()
    script = tmp_path / "bin" / "my-agent"
    script.write_text(f"#!{sys.executable}\n{AGENT}", encoding="utf-8")
    script.chmod(0o755)
    (tmp_path / "steps.json").write_text(json.dumps([send(DONE)]))
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "spec", "rules": [DENY_SHELL]}))
    (tmp_path / "f.json").write_text(json.dumps(FIXTURES))
    proc = cli_run(tmp_path, "record", "--contract", "c.json", "--fixtures", "f.json", "--out", "t.jsonl",
                   "--", "my-agent", "steps.json", "replies.jsonl",
                   env={"PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"})
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("executable", [False, True], ids=["missing", "not-executable"])
def test_command_that_cannot_start(tmp_path: Path, executable: bool) -> None:
    """Point 81: a command that cannot start exits 2 with a one-line error and writes no trace."""
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "spec", "rules": [DENY_SHELL]}))
    (tmp_path / "f.json").write_text(json.dumps(FIXTURES))
    agent = tmp_path / "agent-file"
    if executable:
        agent.write_text("not a program\n")
    proc = cli_run(tmp_path, "record", "--contract", "c.json", "--fixtures", "f.json", "--out", "t.jsonl",
                   "--", str(agent))
    lines = proc.stderr.strip().splitlines()
    assert (proc.returncode, len(lines)) == (2, 1), proc.stderr
    assert not (tmp_path / "t.jsonl").exists()


# -- points 82, 83, 84: verdict, report and exit codes ----------------------------------------------------

@pytest.fixture(scope="module")
def hung(tmp_path_factory: pytest.TempPathFactory) -> Run:
    rules = [{"id": "must-call", "kind": "require_event", "match": {"type": "tool.call"}, "min": 2},
             {"id": "results", "kind": "tool_result_required"}]
    fixtures = {"version": 1, "tools": {"slow": {"$cases": [{"hang": True}]}}}
    return record(tmp_path_factory.mktemp("hung"), [send(call("c1", "slow"))], rules=rules, fixtures=fixtures,
                  idle_ms=300)


def test_hang_is_never_answered(hung: Run) -> None:
    """Point 88: `hang: true` is never answered; the run ends by the idle timeout."""
    assert (hung.ended_by, hung.types) == ("timeout:idle", ["run.start", "tool.call", "run.failed"])
    assert [r for r in hung.replies[1:] if r != "EOF"] == []  # stdin may close as the ending starts (point 62)


def test_harness_ended_check_is_partial(hung: Run) -> None:
    """Point 82: under `--partial`, the liveness parts (require_event's `min`, tool_result_required) are
    `inconclusive` and left out of `error_count`, `passed` and the exit; the harness-ended run exits 2."""
    statuses = {v["rule_id"]: v["status"] for v in hung.report["violations"]}
    assert statuses == {"must-call": "inconclusive", "results": "inconclusive"}
    assert (hung.report["error_count"], hung.report["passed"], hung.code) == (0, True, 2)


@pytest.mark.parametrize(("rule", "steps"), [
    ({"id": "r", "kind": "deny_tool", "tool": "get"}, [send(call("c1", "get")), ["exit", 3]]),
    ({"id": "r", "kind": "require_event", "match": {"type": "tool.call"}, "min": 0, "max": 0},
     [send(call("c1", "get")), ["exit", 3]]),
    ({"id": "r", "kind": "completion_requires_outcome"}, [send(DONE), ["exit", 3]]),
], ids=["deny_tool", "require_event-max", "completion_requires_outcome"])
def test_harness_ended_run_with_a_safety_failure_exits_1(tmp_path: Path, rule: Json, steps: list[Step]) -> None:
    """§8 / point 82: the v1 safety kinds keep failing under `--partial`; the exit is then 1 (behaviour outranks
    harness failure)."""
    run = record(tmp_path, steps, rules=[rule])
    assert run.ended_by == "exit:3"
    assert {v["status"] for v in run.violations("r")} == {"fail"}
    assert run.code == 1


def test_safety_exit_on_a_harness_ended_run(tmp_path: Path) -> None:
    """Point 84: `--safety-exit N` applies to a harness-ended run whose safety rule failed too."""
    run = record(tmp_path, [send(call("c1", "get")), ["exit", 3]], "--safety-exit", "7",
                 rules=[{"id": "r", "kind": "deny_tool", "tool": "get"}])
    assert run.code == 7


BOTH_PARTS = [{"id": "one-get", "kind": "tool_calls", "tool": "get", "min": 1, "max": 1}]


def test_safety_exit_for_a_safety_part(tmp_path: Path) -> None:
    """Point 84: an error-severity violation from a safety part (tool_calls `max`) gives exit N."""
    run = record(tmp_path, [send(call("c1", "get")), send(call("c2", "get")), send(DONE)], "--safety-exit", "7",
                 rules=BOTH_PARTS)
    assert run.code == 7


def test_liveness_part_keeps_exit_1(tmp_path: Path) -> None:
    """Points 83/84: after a normal ending, exit 1 when the check has `error_count ≥ 1`; a liveness part (tool_calls
    `min`) keeps 1 under `--safety-exit N`."""
    run = record(tmp_path, [send(DONE)], "--safety-exit", "7", rules=BOTH_PARTS)
    assert (run.code, run.report["error_count"]) == (1, 1)


def test_check_takes_safety_exit(tmp_path: Path) -> None:
    """Point 84: `check` takes `--safety-exit N` too."""
    (tmp_path / "c.json").write_text(json.dumps({"version": 2, "name": "spec", "rules": [
        {"id": "no-get", "kind": "deny_tool", "tool": "get"}]}))
    (tmp_path / "t.jsonl").write_text('{"seq": 1, "type": "tool.call", "tool": "get"}\n')
    proc = cli_run(tmp_path, "check", "--contract", "c.json", "--trace", "t.jsonl", "--safety-exit", "9")
    assert proc.returncode == 9


@pytest.mark.parametrize(("rules", "extra"), [
    ([{"id": "x", "kind": "nope"}], ()),
    ([{"id": "no-get", "kind": "deny_tool", "tool": "get"}, {"id": "must-get", "kind": "tool_calls", "tool": "get",
                                                            "min": 1}], ()),
    (None, ("--replay", "missing.jsonl")),
], ids=["contract", "lint", "baseline"])
def test_invalid_input_exits_2_before_spawning(tmp_path: Path, rules: list[Json] | None,
                                               extra: tuple[str, ...]) -> None:
    """Point 83: exit 2 before spawning on any invalid input: the contract, a lint error, the replay baseline."""
    run = record(tmp_path, [send(DONE)], *extra, rules=rules)
    assert not_spawned(run) and "Traceback" not in run.proc.stderr
    assert run.code == 2, run.proc.stderr


def test_no_lint_lets_a_lint_error_run(tmp_path: Path) -> None:
    """Point 83: `record` takes `check`'s `--no-lint`."""
    rules = [{"id": "no-get", "kind": "deny_tool", "tool": "get"},
             {"id": "must-get", "kind": "tool_calls", "tool": "get", "min": 1}]
    run = record(tmp_path, [send(DONE)], "--no-lint", rules=rules)
    assert (run.ended_by, run.code) == ("completed", 1)


def test_output_option_writes_the_report(tmp_path: Path) -> None:
    """Point 83: `record` takes `--output`."""
    run = record(tmp_path, [send(DONE)], "--output", "report.json")
    assert (run.code, run.proc.stdout) == (0, "")
    assert json.loads((tmp_path / "report.json").read_text())["record"]["ended_by"] == "completed"


def test_quiet_text_report(tmp_path: Path) -> None:
    """Point 83: `record` takes `--format text` and `--quiet`."""
    run = record(tmp_path, [send(DONE)], "--quiet", fmt="text")
    assert run.code == 0 and "PASS" in run.proc.stdout


@pytest.mark.parametrize("fmt", ["junit", "sarif"])
def test_findings_appear_in_other_formats(tmp_path: Path, fmt: str) -> None:
    """Point 83: the other formats show the findings as extra results or testcases."""
    run = record(tmp_path, [send(call("c1", "nope")), send(DONE)], fmt=fmt)
    assert run.code == 2 and "record.fixture_miss" in run.proc.stdout


# -- point 85: --mcp ----------------------------------------------------------------------------------

MCP_SERVER = '''
import sys
from typing import TypedDict

from mcp.server.mcpserver import MCPServer

app = MCPServer("tools")


class Echo(TypedDict):
    echo: str


@app.tool(name="echo", description=sys.argv[1])
def echo(text: str, times: int = 1) -> Echo:
    return {"echo": text * times}


@app.tool(name="boom")
def boom(why: str, how: str) -> str:
    raise ValueError("broken")


@app.tool(name="shadow")
def shadow() -> str:
    return "from the server"


app.run()
'''


@pytest.fixture(scope="module")
def mcp_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    pytest.importorskip("mcp")
    folder = tmp_path_factory.mktemp("mcp")
    (folder / "server.py").write_text(MCP_SERVER, encoding="utf-8")
    fixtures = {"version": 1, "tools": {"shadow": "from the fixture"}}
    steps = [send(call("c1", "echo", {"text": "hi"})), send(call("c2", "boom", {"why": "a", "how": "b"})),
             send(call("c3", "shadow", {})), send(DONE)]
    return record(folder, steps, "--mcp", f"{sys.executable} server.py 'first version'", "--write-tool-snapshot",
                  "snap.json", fixtures=fixtures, fake_clock=False)


@pytest.mark.slow
def test_mcp_forwards_calls(mcp_run: Run) -> None:
    """Point 85: `--mcp` forwards each `tool.call` as `tools/call` and records the measured `duration_ms` and the
    result (`structuredContent`, else `content`)."""
    assert (mcp_run.code, mcp_run.ended_by) == (0, "completed"), mcp_run.proc.stderr
    result = event_for(mcp_run, "tool.result", "c1")
    assert (result["ok"], result["result"]) == (True, {"echo": "hi"})
    assert isinstance(result["duration_ms"], int | float) and result["duration_ms"] >= 0


@pytest.mark.slow
def test_mcp_tool_error_is_not_ok(mcp_run: Run) -> None:
    """Point 85: `ok: false` for `isError`."""
    assert event_for(mcp_run, "tool.result", "c2")["ok"] is False


@pytest.mark.slow
def test_mcp_fixtures_win_for_the_tools_they_name(mcp_run: Run) -> None:
    """Point 85: fixtures win for the tools they name."""
    assert event_for(mcp_run, "tool.result", "c3")["result"] == "from the fixture"


@pytest.mark.slow
def test_mcp_listing_event(mcp_run: Run) -> None:
    """Point 85: a `tool.listing` event records the discovered tools."""
    (listing,) = [e for e in mcp_run.trace if e["type"] == "tool.listing"]
    assert all(f'"{name}"' in json.dumps(listing) for name in ("echo", "boom", "shadow"))


def shuffled(value: Json) -> Json:
    """The same JSON with every object's keys in reverse order (the tools' order included)."""
    if isinstance(value, dict):
        return {k: shuffled(v) for k, v in reversed(list(value.items()))}
    if isinstance(value, list):
        return [shuffled(v) for v in value]
    return value


def required_reversed(value: Json) -> Json:
    """The same JSON with every `required` array reversed."""
    if isinstance(value, dict):
        return {k: v[::-1] if k == "required" and isinstance(v, list) else required_reversed(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [required_reversed(v) for v in value]
    return value


def compare_snapshot(mcp_run: Run, name: str, snapshot: Json, description: str) -> Run:
    (mcp_run.folder / f"{name}.json").write_text(json.dumps(snapshot))
    return record(mcp_run.folder / name, [send(DONE)], "--mcp", f"{sys.executable} ../server.py '{description}'",
                  "--tool-snapshot", f"../{name}.json", fixtures=None)


@pytest.mark.slow
def test_mcp_snapshot_drift(mcp_run: Run) -> None:
    """Point 85: `--tool-snapshot F` compares the discovered tools with a saved snapshot (key and tool order
    ignored) and reports drift as a `record.schema_drift` finding naming the tools: only `echo`'s description
    changed."""
    snapshot = shuffled(json.loads((mcp_run.folder / "snap.json").read_text()))
    changed = compare_snapshot(mcp_run, "shuffled", snapshot, "second version")
    assert changed.codes == ["record.schema_drift"], changed.proc.stderr
    message = changed.rec["findings"][0]["message"]
    assert "echo" in message and "boom" not in message and "shadow" not in message
    assert changed.code == 2


@pytest.mark.slow
def test_mcp_snapshot_required_order_is_ignored(mcp_run: Run) -> None:
    """Point 85: "`required`, `enum`, `type` arrays order-insensitive inside schemas": a snapshot that lists
    `boom`'s two required arguments in the other order is no drift."""
    snapshot = required_reversed(json.loads((mcp_run.folder / "snap.json").read_text()))
    same = compare_snapshot(mcp_run, "reordered", snapshot, "first version")
    assert (same.codes, same.code) == ([], 0)


# -- point 86: redaction ------------------------------------------------------------------------------------

REDACT_STEPS: list[Step] = [
    ["stderr", 'token: "err-secret"\nrun --token flag-secret\ntoken=eq-secret\n'],
    send(call("c1", "get", {"token": "arg-secret", "blob": '{"token": "json-secret"}', "note": "token=kv-secret"})),
    send({"type": "run.completed", "output": {"TOKEN": "out-secret", "n": 1}}),
]
REDACT_FIXTURES: Json = {"version": 1, "input": {"Token": "in-secret"},
                         "tools": {"get": {"token": "res-secret", "n": 2}}}
REDACT_RULES: list[Json] = [
    {"id": "raw-token", "kind": "tool_args", "tool": "get", "match": {"token": "arg-secret"}},
    {"id": "other-token", "kind": "tool_args", "tool": "get", "match": {"token": "other"}},
]


@pytest.fixture(scope="module")
def redacted(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return record(tmp_path_factory.mktemp("redact"), REDACT_STEPS, "--redact", "TOKEN", rules=REDACT_RULES,
                  fixtures=REDACT_FIXTURES)


def test_redaction_keeps_the_verdict(redacted: Run) -> None:
    """Point 86: rules run on the raw values, so redaction never changes a verdict."""
    assert {r["rule_id"]: r["passed"] for r in redacted.report["results"]} == {"raw-token": True,
                                                                               "other-token": False}


def test_redaction_in_the_trace(redacted: Run) -> None:
    """Point 86: values of matching keys (case-insensitive) in args, results, output and input, in JSON inside
    strings and in `key=value` text become `"[redacted]"` before anything is written."""
    trace = redacted.trace
    assert trace[0]["data"]["input"] == {"Token": "[redacted]"}
    assert trace[1]["args"]["token"] == "[redacted]"
    assert json.loads(trace[1]["args"]["blob"]) == {"token": "[redacted]"}
    assert trace[1]["args"]["note"] == "token=[redacted]"
    assert trace[2]["result"] == {"token": "[redacted]", "n": 2}
    assert trace[3]["output"] == {"TOKEN": "[redacted]", "n": 1}
    assert "secret" not in redacted.text


def test_redaction_in_the_stderr_log(redacted: Run) -> None:
    """Point 86: redaction covers stderr: `key: "value"`, `--key value` and `key=value` text."""
    log = (redacted.folder / "t.jsonl.stderr.log").read_text(encoding="utf-8")
    assert "secret" not in log and log.count("[redacted]") == 3


def test_redaction_in_the_report(redacted: Run) -> None:
    """Point 86: nothing secret is written, the report (a failing rule's evidence) included."""
    assert "secret" not in redacted.proc.stdout


def test_redaction_list_in_the_fixtures(tmp_path: Path) -> None:
    """Point 86: a `redact: [keys]` list in the fixtures file works like `--redact`."""
    run = record(tmp_path, REDACT_STEPS, fixtures={**REDACT_FIXTURES, "redact": ["token"]})
    assert run.code == 0 and "secret" not in run.text


@pytest.mark.parametrize("key", ["tool", "seq", "evidence"])
def test_redacting_a_field_name_is_refused(tmp_path: Path, key: str) -> None:
    """Point 86: keys that are event or report field names are refused (exit 2)."""
    run = record(tmp_path, [send(DONE)], "--redact", key)
    assert run.code == 2 and not_spawned(run)


# -- point 87: --repeat ----------------------------------------------------------------------------------

def test_repeat_runs_and_exits_with_the_worst_code(tmp_path: Path) -> None:
    """Point 87: `record --repeat N --out-dir D` runs the agent N times, writes `D/run-<i>.jsonl`, checks each,
    runs `stability` over them and exits with the worst code; the report lists every run and the stability
    result (here the second run crashes: exit 2)."""
    steps = [["once", str(tmp_path / "ran-once")], send({"type": "run.completed", "output": {"answer": 1}})]
    run = record(tmp_path, steps, "--repeat", "2", "--out-dir", "runs", out=None)
    first = [json.loads(line)["type"] for line in (tmp_path / "runs" / "run-1.jsonl").read_text().splitlines()]
    second = [json.loads(line) for line in (tmp_path / "runs" / "run-2.jsonl").read_text().splitlines()]
    assert first == ["run.start", "run.completed"] and second[-1]["reason"] == "exit:3"
    assert run.code == 2
    assert "run-1.jsonl" in run.proc.stdout and "run-2.jsonl" in run.proc.stdout
    assert "stability" in run.report


def test_repeat_needs_out_dir(tmp_path: Path) -> None:
    """Point 87: `--repeat N` goes with `--out-dir D` (spec: the synopsis names both)."""
    run = record(tmp_path, [send(DONE)], "--repeat", "2", out=None)
    assert run.code == 2 and not_spawned(run)


# -- point 89: --protocol agentdoctor ------------------------------------------------------------------------

def test_agentdoctor_protocol_gives_the_same_trace(tmp_path: Path) -> None:
    """Point 89: `--protocol agentdoctor` maps `run_start`, `tool_call` (with `callId` and `arguments`) and `final`
    to ours in both directions; the recorded trace is the same as with our protocol."""
    native = record(tmp_path / "native", [send(call("c1", "get", {"x": 1})),
                                          send({"type": "run.completed", "status": "completed", "output": 1})])
    doctor = record(tmp_path / "doctor", [send({"type": "tool_call", "callId": "c1", "tool": "get",
                                                "arguments": {"x": 1}}),
                                          send({"type": "final", "status": "completed", "output": 1})],
                    "--protocol", "agentdoctor")
    assert (native.code, doctor.code) == (0, 0), doctor.proc.stderr
    assert doctor.out.read_bytes() == native.out.read_bytes()
    assert doctor.replies[0]["type"] == "run_start"
    assert doctor.replies[1]["callId"] == "c1" and doctor.replies[1]["result"] == {"a": 1}
