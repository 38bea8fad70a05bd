"""A third reading of the `record` live harness: spec v2 §8 and §10 points 60-89, corner cases.

Each test names the sentence or point it checks. The agents are tiny Python scripts run with
`sys.executable`: a scripted agent (`steps.json` says what it sends; the replies it reads are logged
to `replies.jsonl`) and a few special ones.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli, agents_left

pytestmark = pytest.mark.skipif(os.name != "posix", reason="record is POSIX-only (point 79)")

LINE_CAP = 1_040_384  # point 68: 1 MiB - 8 KiB

AGENT = r'''
import json, os, signal, sys, time
steps = json.load(open("steps.json"))
log = open("replies.jsonl", "a")
def recv():
    line = sys.stdin.readline()
    log.write(line); log.flush()
    return line
count = 1
if os.path.exists("count.txt"):
    count = int(open("count.txt").read()) + 1
open("count.txt", "w").write(str(count))
recv()
out = sys.stdout.buffer
for step in steps:
    if "on_run" in step and step["on_run"] != count:
        continue
    if "raw" in step:
        out.write(step["raw"].encode("utf-8")); out.flush()
    elif "rawbytes" in step:
        out.write(bytes.fromhex(step["rawbytes"])); out.flush()
    elif "send" in step:
        out.write((json.dumps(step["send"]) + "\n").encode()); out.flush()
        if step["send"].get("type") in ("tool.call", "approval.request") and not step.get("nowait"):
            recv()
    elif "sleep" in step:
        time.sleep(step["sleep"])
    elif "exit" in step:
        out.flush(); os._exit(step["exit"])
    elif "close" in step:
        out.close(); os.close(1)
    elif "kill" in step:
        os.kill(os.getpid(), getattr(signal, step["kill"]))
    elif "ignore_term" in step:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    elif "holder" in step:
        import subprocess
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(%d)" % step["holder"]])
    elif "stderr" in step:
        sys.stderr.write(step["stderr"]); sys.stderr.flush()
    elif "probe" in step:
        trace = step["probe"]
        lines = open(trace).read().count("\n") if os.path.exists(trace) else -1
        seen = {"lines": lines, "cwd": os.getcwd(), "protocol": os.environ.get("AGENT_INVARIANTS_PROTOCOL"),
                "run_id": os.environ.get("AGENT_INVARIANTS_RUN_ID"), "home": os.environ.get("HOME"),
                "extra": os.environ.get("EXTRA")}
        out.write((json.dumps({"type": "agent.message", "text": json.dumps(seen)}) + "\n").encode()); out.flush()
    elif "read_eof" in step:
        rest = sys.stdin.readline()
        open("after_terminal.txt", "w").write(repr(rest))
    elif "flood" in step:
        chunk = b"\n" * (1 << 20)
        for _ in range(step["flood"]):
            out.write(chunk)
        out.flush()
    elif "chatter" in step:
        while True:
            out.write(b'{"type": "telemetry.tick"}\n'); out.flush(); time.sleep(0.02)
'''


def call(call_id: str, tool: str, args: Any = None, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"type": "tool.call", "call_id": call_id, "tool": tool}
    if args is not None:
        message["args"] = args
    return {"send": {**message, **extra}}


def done(**fields: Any) -> dict[str, Any]:
    return {"send": {"type": "run.completed", **fields}}


def send(message_type: str, **fields: Any) -> dict[str, Any]:
    return {"send": {"type": message_type, **fields}}


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str
    report: dict[str, Any] | None
    trace: list[dict[str, Any]] = field(default_factory=list)
    replies: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def rec(self) -> dict[str, Any]:
        assert self.report is not None, self.stderr
        found: dict[str, Any] = self.report["record"]
        return found

    def types(self) -> list[str]:
        return [event["type"] for event in self.trace]

    def last(self) -> dict[str, Any]:
        return self.trace[-1]

    def codes(self) -> list[str]:
        return [finding["code"] for finding in self.rec["findings"]]


def setup(tmp_path: Path, steps: list[dict[str, Any]], *, rules: list[dict[str, Any]] | None = None,
          fixtures: dict[str, Any] | None = None) -> None:
    contract = {"version": 2, "name": "spec", "rules": rules if rules is not None else
                [{"id": "no-rm", "kind": "deny_tool", "tool": "rm"}]}
    (tmp_path / "c.json").write_text(json.dumps(contract), encoding="utf-8")
    if fixtures is None:
        fixtures = {"version": 1, "tools": {"get": {"n": 1}}}
    (tmp_path / "f.json").write_text(json.dumps(fixtures), encoding="utf-8")
    (tmp_path / "steps.json").write_text(json.dumps(steps), encoding="utf-8")
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def record(cli: Cli, *options: str, fixtures: bool = True, out: str = "t.jsonl", agent: str = "agent.py",
           fake_clock: bool = True, timeout: float = 30) -> Run:
    """`record` with c.json (and f.json), JSON report, the given agent; small timeouts by default."""
    args = ["record", "--contract", "c.json", "--format", "json"]
    if fixtures:
        args += ["--fixtures", "f.json"]
    if out:
        args += ["--out", out]
    if fake_clock:
        args.append("--fake-clock")
    if "--timeout-ms" not in options:
        args += ["--timeout-ms", "10000"]
    if "--idle-timeout-ms" not in options:
        args += ["--idle-timeout-ms", "5000"]
    args += [*options, "--", sys.executable, agent]
    started = time.monotonic()
    proc = cli(*args, timeout=timeout)
    seconds = time.monotonic() - started
    report = json.loads(proc.stdout) if proc.stdout.strip() else None
    return Run(proc.returncode, proc.stdout, proc.stderr, report,
               read_jsonl(cli.cwd / out) if out else [], read_jsonl(cli.cwd / "replies.jsonl"), seconds)


# -- the agent writes something odd (points 60, 76, 77, 80) -------------------------------------------


def test_garbage_line_is_bad_json_and_never_recorded(tmp_path: Path, cli: Cli) -> None:
    """Point 60: anything not a JSON object is `protocol:bad_json`; point 77: the offending message is
    never recorded, `data.offending` is {line, type?, excerpt}; point 82/83: no safety error -> exit 2."""
    setup(tmp_path, [call("c1", "get", {"a": 1}), {"raw": "this is not json\n"}, {"sleep": 5}])
    run = record(cli)
    assert run.code == 2, run.stderr
    assert run.types() == ["run.start", "tool.call", "tool.result", "run.failed"]
    failed = run.last()
    assert failed["reason"] == "protocol:bad_json"
    assert failed["data"]["attested_by"] == "harness"
    assert failed["data"]["offending"]["line"] == 2
    assert failed["data"]["offending"]["excerpt"] == "this is not json"
    assert run.rec["ended_by"] == "protocol:bad_json"
    assert "record.ended" in run.codes()


def test_invalid_utf8_is_bad_json(tmp_path: Path, cli: Cli) -> None:
    """Point 60: a line that is not valid UTF-8 is `protocol:bad_json`."""
    setup(tmp_path, [{"rawbytes": b'{"type":"agent.message","text":"\xff"}\n'.hex()}, {"sleep": 5}])
    run = record(cli)
    assert (run.code, run.last()["reason"]) == (2, "protocol:bad_json")


def test_half_line_at_eof_is_parsed(tmp_path: Path, cli: Cli) -> None:
    """Point 60: a final unterminated line is parsed at EOF (here the terminal message)."""
    setup(tmp_path, [call("c1", "get", {"a": 1}), {"raw": '{"type": "run.completed", "output": 1}'}, {"exit": 0}])
    run = record(cli)
    assert run.code == 0, run.stdout + run.stderr
    assert run.types() == ["run.start", "tool.call", "tool.result", "run.completed"]
    assert run.rec["ended_by"] == "completed"


def test_half_line_of_garbage_at_eof_is_bad_json(tmp_path: Path, cli: Cli) -> None:
    """Point 60: a cut JSON object at EOF is parsed, fails, and is `protocol:bad_json` (stream order
    wins over the exit that follows, point 76)."""
    setup(tmp_path, [{"raw": '{"type": "run.comp'}, {"exit": 0}])
    run = record(cli)
    assert (run.code, run.last()["reason"]) == (2, "protocol:bad_json")


def test_blank_and_crlf_lines_are_skipped_but_counted(tmp_path: Path, cli: Cli) -> None:
    """Point 60: a trailing \\r is stripped and whitespace-only lines are skipped; the protocol doc
    counts blank lines in `offending.line` (README/doc: "Lines count from 1, blank ones included")."""
    setup(tmp_path, [{"raw": "\n \n\t\r\n" * 100}, {"raw": '{"type": "agent.message", "text": "hi"}\r\n'},
                     {"raw": "\n\n"}, {"raw": "oops\n"}, {"sleep": 5}])
    run = record(cli)
    assert run.types() == ["run.start", "agent.message", "run.failed"]
    assert run.trace[1]["data"] == {"text": "hi"}
    assert run.last()["reason"] == "protocol:bad_json"
    assert run.last()["data"]["offending"]["line"] == 304


def test_line_at_the_cap_is_accepted(tmp_path: Path, cli: Cli) -> None:
    """Point 68/80: the agent's line cap is 1,040,384 bytes; a line of exactly that many bytes (plus
    its newline) is recorded, and its trace line passes check's default 1 MiB limit."""
    head = '{"type": "agent.message", "text": "'
    text = "x" * (LINE_CAP - len(head) - 2)
    line = head + text + '"}'
    assert len(line) == LINE_CAP
    setup(tmp_path, [{"raw": line + "\n"}, done()])
    run = record(cli)
    assert run.code == 0, run.stderr
    assert run.types() == ["run.start", "agent.message", "run.completed"]
    check = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert check.returncode == 0, check.stderr


def test_line_one_byte_over_the_cap_is_output_limit(tmp_path: Path, cli: Cli) -> None:
    """Point 80: a line is rejected as soon as its 1,040,385th byte arrives without a newline; it is
    not recorded; the run ends with `output_limit` and `data.limit: "line"`."""
    head = '{"type": "agent.message", "text": "'
    line = head + "x" * (LINE_CAP + 1 - len(head) - 2) + '"}'
    assert len(line) == LINE_CAP + 1
    setup(tmp_path, [{"raw": line + "\n"}, {"sleep": 5}])
    run = record(cli)
    assert run.code == 2
    assert run.types() == ["run.start", "run.failed"]
    assert run.last()["reason"] == "output_limit"
    assert run.last()["data"]["limit"] == "line"
    assert run.rec["ended_by"] == "output_limit"


def test_huge_line_without_newline_is_cut_early(tmp_path: Path, cli: Cli) -> None:
    """Point 80: an over-long line is never buffered further: the agent that keeps writing one line
    (without a newline, never ending it) is stopped by `output_limit`, not by a timeout."""
    setup(tmp_path, [{"raw": "y" * (LINE_CAP + 10)}, {"sleep": 5}])
    run = record(cli, "--idle-timeout-ms", "4000")
    assert run.last()["reason"] == "output_limit"
    assert run.last()["data"]["limit"] == "line"


def test_unknown_type_is_a_protocol_error(tmp_path: Path, cli: Cli) -> None:
    """Point 61: any other type is `protocol:unknown_type:<type>`."""
    setup(tmp_path, [send("tool.result", call_id="c1", ok=True), {"sleep": 5}])
    run = record(cli)
    assert run.last()["reason"] == "protocol:unknown_type:tool.result"
    assert run.last()["data"]["offending"]["type"] == "tool.result"
    assert run.types() == ["run.start", "run.failed"]


def test_harness_owned_key_is_a_field_error(tmp_path: Path, cli: Cli) -> None:
    """Point 60: `seq`, `time`, `run_id`, `duration_ms` and any other key are
    `protocol:field:<type>.<key>`."""
    setup(tmp_path, [call("c1", "get", {"a": 1}, seq=9), {"sleep": 5}])
    run = record(cli)
    assert run.last()["reason"] == "protocol:field:tool.call.seq"
    assert run.types() == ["run.start", "run.failed"]


def test_agent_data_is_copied_with_harness_keys_winning(tmp_path: Path, cli: Cli) -> None:
    """Point 60: the agent may add a `data` object, copied into the event's `data`, harness keys
    winning (here `attested_by` on an agent grant, point 67)."""
    setup(tmp_path, [send("approval.granted", approval_id="g1", tool="get",
                          data={"attested_by": "harness", "note": "n"}), done()])
    run = record(cli)
    assert run.trace[1]["data"] == {"attested_by": "agent", "note": "n"}


def test_duplicate_call_id_is_a_protocol_error(tmp_path: Path, cli: Cli) -> None:
    """§8 / point 76: a duplicate `call_id` is `protocol:duplicate_call_id`, not recorded (point 77)."""
    setup(tmp_path, [call("c1", "get", {"a": 1}), call("c1", "get", {"a": 2}), {"sleep": 5}])
    run = record(cli)
    assert run.last()["reason"] == "protocol:duplicate_call_id"
    assert run.types() == ["run.start", "tool.call", "tool.result", "run.failed"]
    assert run.last()["data"]["offending"]["line"] == 2


def test_message_after_terminal_appends_new_terminal(tmp_path: Path, cli: Cli) -> None:
    """Point 77: a further message after the terminal is `protocol:after_terminal`; `run.failed` is
    appended after the agent's terminal and becomes the new terminal; the check is partial."""
    setup(tmp_path, [done(output=1), send("agent.message", text="late"), {"exit": 0}])
    run = record(cli)
    assert run.code == 2
    assert run.types() == ["run.start", "run.completed", "run.failed"]
    assert run.last()["reason"] == "protocol:after_terminal"


def test_pipelined_calls_are_answered_in_order(tmp_path: Path, cli: Cli) -> None:
    """Point 63: pipelined messages are processed in sequence and are not an error."""
    setup(tmp_path, [{**call("c1", "get", {"a": 1}), "nowait": True}, {**call("c2", "get", {"a": 2}), "nowait": True},
                     done()])
    run = record(cli)
    assert run.code == 0, run.stdout
    assert run.types() == ["run.start", "tool.call", "tool.result", "tool.call", "tool.result", "run.completed"]


# -- the agent ends badly (points 76-79) -------------------------------------------------------------


def test_exit_nonzero_before_terminal(tmp_path: Path, cli: Cli) -> None:
    """Point 76: `exit:<n>` for any exit before a terminal message."""
    setup(tmp_path, [call("c1", "get", {"a": 1}), {"exit": 3}])
    run = record(cli)
    assert run.code == 2
    assert run.last()["reason"] == "exit:3"
    assert run.rec["ended_by"] == "exit:3"
    assert run.rec["exit_status"] == 3


def test_exit_zero_without_terminal(tmp_path: Path, cli: Cli) -> None:
    """Point 76: `exit:<n>` ... exit 0 included."""
    setup(tmp_path, [send("agent.message", text="bye"), {"exit": 0}])
    run = record(cli)
    assert (run.code, run.last()["reason"]) == (2, "exit:0")


def test_exit_nonzero_after_terminal(tmp_path: Path, cli: Cli) -> None:
    """Point 77: a non-zero exit after a clean `run.completed` fails the run (`exit:<n>` appended)."""
    setup(tmp_path, [done(output=1), {"exit": 4}])
    run = record(cli)
    assert run.code == 2
    assert run.types() == ["run.start", "run.completed", "run.failed"]
    assert run.last()["reason"] == "exit:4"


def test_signal_death_is_signal_reason(tmp_path: Path, cli: Cli) -> None:
    """Point 76: `signal:<NAME>` for a signal the harness did not send."""
    setup(tmp_path, [send("agent.message", text="x"), {"kill": "SIGKILL"}])
    run = record(cli)
    assert (run.code, run.last()["reason"]) == (2, "signal:SIGKILL")


def test_agent_run_failed_ends_normally(tmp_path: Path, cli: Cli) -> None:
    """Point 61: an agent's `run.failed` ends the run normally (ordinary check, no `record.ended`);
    point 65: it gets `data.attested_by: "agent"`."""
    setup(tmp_path, [send("run.failed", reason="gave up"), {"exit": 0}])
    run = record(cli)
    assert run.code == 0, run.stdout
    assert run.types() == ["run.start", "run.failed"]
    assert run.last()["data"] == {"attested_by": "agent"}
    assert run.rec["ended_by"] == "failed"
    assert run.rec["findings"] == []


def test_never_answers_is_idle_timeout(tmp_path: Path, cli: Cli) -> None:
    """§8: no agent message for --idle-timeout-ms while the harness waits -> `timeout:idle`."""
    setup(tmp_path, [{"sleep": 20}])
    run = record(cli, "--idle-timeout-ms", "150")
    assert run.code == 2
    assert run.types() == ["run.start", "run.failed"]
    assert run.last()["reason"] == "timeout:idle"
    assert run.seconds < 5


def test_chatty_agent_hits_run_timeout(tmp_path: Path, cli: Cli) -> None:
    """Point 78: the idle timer restarts on each complete line; the run timer does not -> `timeout:run`."""
    setup(tmp_path, [{"chatter": True}])
    run = record(cli, "--timeout-ms", "300", "--idle-timeout-ms", "150")
    assert run.last()["reason"] == "timeout:run"
    assert run.rec["ended_by"] == "timeout:run"
    assert run.seconds < 5


def test_stderr_does_not_reset_idle_timer(tmp_path: Path, cli: Cli) -> None:
    """Point 78: the idle timer ignores stderr; point 80: stderr never ends the run, its tail is saved
    to `<out>.stderr.log` and the report gives path and byte count."""
    setup(tmp_path, [{"stderr": "warming up\n"}, {"sleep": 20}])
    run = record(cli, "--idle-timeout-ms", "150")
    assert run.last()["reason"] == "timeout:idle"
    assert run.rec["stderr_bytes"] == len("warming up\n")
    assert run.rec["stderr_log"] is not None and run.rec["stderr_log"].endswith("t.jsonl.stderr.log")
    assert (tmp_path / "t.jsonl.stderr.log").read_text(encoding="utf-8") == "warming up\n"


def test_lingering_after_terminal_is_idle_timeout(tmp_path: Path, cli: Cli) -> None:
    """Point 77: no exit within --idle-timeout-ms after the terminal message -> `timeout:idle`."""
    setup(tmp_path, [done(output=1), {"sleep": 20}])
    run = record(cli, "--idle-timeout-ms", "150")
    assert run.types() == ["run.start", "run.completed", "run.failed"]
    assert run.last()["reason"] == "timeout:idle"


@pytest.mark.slow
def test_sigterm_ignored_is_killed_after_grace(tmp_path: Path, cli: Cli) -> None:
    """Point 79: SIGTERM to the group, then SIGKILL 2 s later; point 78: messages that arrive during
    the grace are discarded (nothing follows the appended `run.failed`), and the reason stays the
    harness's (`timeout:run`), not a signal."""
    setup(tmp_path, [{"ignore_term": True}, {"chatter": True}])
    run = record(cli, "--timeout-ms", "500", "--idle-timeout-ms", "400", "--env", "MARK=term-ignorer")
    assert run.last()["reason"] == "timeout:run"
    assert run.types().count("run.failed") == 1
    assert 2 <= run.seconds < 8
    assert agents_left("MARK=term-ignorer") == []


@pytest.mark.slow
def test_closed_stdout_while_running_is_stdout_closed(tmp_path: Path, cli: Cli) -> None:
    """Point 76: `protocol:stdout_closed` when stdout hit EOF but the child is still running 2 s later."""
    setup(tmp_path, [send("agent.message", text="x"), {"close": True}, {"sleep": 30}])
    run = record(cli, "--idle-timeout-ms", "8000", "--env", "MARK=closer")
    assert run.last()["reason"] == "protocol:stdout_closed"
    assert run.types() == ["run.start", "agent.message", "run.failed"]
    assert agents_left("MARK=closer") == []


@pytest.mark.slow
def test_grandchild_holding_stdout_is_killed_after_clean_exit(tmp_path: Path, cli: Cli) -> None:
    """Point 79: when the leader exits the group gets SIGTERM, so a grandchild holding stdout open
    cannot block EOF; the clean run still ends `completed` with exit 0."""
    setup(tmp_path, [{"holder": 30}, done(output=1), {"exit": 0}])
    run = record(cli, "--env", "MARK=holder")
    assert run.code == 0, run.stdout + run.stderr
    assert run.rec["ended_by"] == "completed"
    assert run.seconds < 6
    assert agents_left("MARK=holder") == []


def test_command_that_cannot_start(tmp_path: Path, cli: Cli) -> None:
    """Point 81: a command that cannot start exits 2 with a one-line error and writes no trace."""
    setup(tmp_path, [])
    proc = cli("record", "--contract", "c.json", "--fixtures", "f.json", "--out", "t.jsonl", "--",
               "no-such-agent-binary-xyz")
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not (tmp_path / "t.jsonl").exists()


def test_command_that_cannot_start_leaves_the_trace_force_would_replace(tmp_path: Path, cli: Cli) -> None:
    """Found by the sixth hunt: with --force, the earlier trace was emptied when the file was
    opened and removed when the agent could not start. Point 81 writes no trace, so the old one
    stays as it was; a run that starts replaces it whole."""
    setup(tmp_path, [done(output=1)])
    earlier = b'{"seq":1,"type":"run.start"}\n' * 200   # longer than the new trace: nothing of it may stay
    (tmp_path / "t.jsonl").write_bytes(earlier)
    proc = cli("record", "--contract", "c.json", "--fixtures", "f.json", "--out", "t.jsonl", "--force", "--",
               "no-such-agent-binary-xyz")
    assert (proc.returncode, proc.stdout) == (2, "")
    assert (tmp_path / "t.jsonl").read_bytes() == earlier
    run = record(cli, "--force")
    assert (run.code, run.types()) == (0, ["run.start", "run.completed"])


# -- --enforce (§8, points 74, 75, 84) -----------------------------------------------------------------

REFUND_FIXTURES: dict[str, Any] = {"version": 1, "tools": {"*": {"ok": 1}}}


def enforced(tmp_path: Path, cli: Cli, rules: list[dict[str, Any]], steps: list[dict[str, Any]],
             *options: str) -> Run:
    setup(tmp_path, [*steps, done(output=1)], rules=rules, fixtures=REFUND_FIXTURES)
    return record(cli, "--enforce", *options)


def denied_ids(run: Run) -> list[str]:
    return [event["call_id"] for event in run.trace if event["type"] == "tool.denied"]


def test_deny_tool_denial_what_agent_and_trace_get(tmp_path: Path, cli: Cli) -> None:
    """§8: the agent gets `tool.denied {reason: "<rule>: <message>"}`, the trace gets `tool.denied`
    and no result, and the agent may continue; point 65: `tool.denied {call_id, tool, reason, data:
    {rule_ids}}`; point 75: violations at the call get `prevented: true`; exit 1 (point 83)."""
    run = enforced(tmp_path, cli, [{"id": "no-rm", "kind": "deny_tool", "tool": "rm"}],
                   [call("c1", "rm", {"p": "/"}), call("c2", "get", {"a": 1})])
    assert run.code == 1, run.stdout
    assert run.types() == ["run.start", "tool.call", "tool.denied", "tool.call", "tool.result", "run.completed"]
    denial = run.trace[2]
    assert list(denial) == ["seq", "type", "time", "run_id", "tool", "call_id", "reason", "data"]
    assert denial["reason"].startswith("no-rm: ")
    assert denial["data"] == {"rule_ids": ["no-rm"]}
    assert run.replies[1] == {"type": "tool.denied", "call_id": "c1", "reason": denial["reason"]}
    assert run.replies[2]["type"] == "tool.result"
    assert run.report is not None
    [violation] = run.report["violations"]
    assert violation["prevented"] is True
    assert run.rec["denied"] == 1


def test_safety_exit_applies_to_a_denial(tmp_path: Path, cli: Cli) -> None:
    """Point 84: when a call was denied under --enforce, the exit is N instead of 1."""
    run = enforced(tmp_path, cli, [{"id": "no-rm", "kind": "deny_tool", "tool": "rm"}],
                   [call("c1", "rm")], "--safety-exit", "7")
    assert run.code == 7


def test_allow_tools_denial(tmp_path: Path, cli: Cli) -> None:
    """§8 list: allow_tools is enforced."""
    run = enforced(tmp_path, cli, [{"id": "only-get", "kind": "allow_tools", "tools": ["get"]}],
                   [call("c1", "get"), call("c2", "put")])
    assert denied_ids(run) == ["c2"]


def test_require_approval_denial_and_grant(tmp_path: Path, cli: Cli) -> None:
    """§8 list: require_approval is enforced; an (agent) grant before the call lets it through."""
    run = enforced(tmp_path, cli, [{"id": "ask", "kind": "require_approval", "tool": "pay"}],
                   [call("c1", "pay"), send("approval.granted", approval_id="g1", tool="pay"), call("c2", "pay")])
    assert denied_ids(run) == ["c1"]


def test_approval_bound_attested_by_harness_refuses_self_approval(tmp_path: Path, cli: Cli) -> None:
    """Point 67: `approval_bound.attested_by: ["harness"]` refuses an agent-sent grant; under
    --enforce the call is denied (§8 example)."""
    rules = [{"id": "bound", "kind": "approval_bound", "tool": "pay", "attested_by": ["harness"]}]
    run = enforced(tmp_path, cli, rules, [send("approval.granted", approval_id="g1", tool="pay"),
                                          call("c1", "pay", {"x": 1})])
    assert denied_ids(run) == ["c1"]
    assert run.trace[1]["data"]["attested_by"] == "agent"


def test_approval_bound_harness_grant_passes(tmp_path: Path, cli: Cli) -> None:
    """Point 64: a request matched by `approvals` gives a harness-attested grant that covers the call."""
    rules = [{"id": "bound", "kind": "approval_bound", "tool": "pay", "attested_by": ["harness"]}]
    fixtures = {"version": 1, "tools": {"pay": {"ok": 1}}, "approvals": [{"tool": "pay", "decision": "approve"}]}
    setup(tmp_path, [send("approval.request", approval_id="a1", tool="pay", args={"x": 1}),
                     call("c1", "pay", {"x": 1}), done(output=1)], rules=rules, fixtures=fixtures)
    run = record(cli, "--enforce")
    assert run.code == 0, run.stdout
    assert run.types()[1:4] == ["approval.requested", "approval.granted", "tool.call"]
    grant = run.trace[2]
    assert grant["approved"] is True and grant["data"] == {"attested_by": "harness"}
    assert grant["args"] == {"x": 1}
    assert run.replies[1] == {"type": "approval.decision", "approval_id": "a1", "approved": True}


def test_approval_miss_denies_and_is_a_finding(tmp_path: Path, cli: Cli) -> None:
    """Point 64: a request that matches no entry is denied (`approved: false`, `data.fixture_miss`,
    finding `record.approval_miss`); point 72/83: a passing run with a miss exits 2."""
    setup(tmp_path, [send("approval.request", approval_id="a1", tool="pay"), done(output=1)])
    run = record(cli)
    assert run.code == 2
    grant = run.trace[2]
    assert grant["approved"] is False
    assert grant["data"]["fixture_miss"] is True
    assert run.codes() == ["record.approval_miss"]
    assert run.replies[1] == {"type": "approval.decision", "approval_id": "a1", "approved": False}


def test_duplicate_approval_id_is_a_protocol_error(tmp_path: Path, cli: Cli) -> None:
    """Point 64: a request reusing an earlier request's `approval_id` is `protocol:duplicate_approval_id`."""
    setup(tmp_path, [send("approval.request", approval_id="a1", tool="pay"),
                     send("approval.request", approval_id="a1", tool="pay"), {"sleep": 5}])
    run = record(cli)
    assert run.last()["reason"] == "protocol:duplicate_approval_id"


def test_tool_calls_max_denies_every_call_beyond(tmp_path: Path, cli: Cli) -> None:
    """Point 74: tool_calls.max denies *every* call beyond the bound, not only the (max+1)-th."""
    run = enforced(tmp_path, cli, [{"id": "one", "kind": "tool_calls", "tool": "get", "max": 1}],
                   [call("c1", "get"), call("c2", "get"), call("c3", "get")])
    assert denied_ids(run) == ["c2", "c3"]


def test_tool_calls_max_successful_counts_earlier_successes(tmp_path: Path, cli: Cli) -> None:
    """Point 74: under `count: successful` a call is denied once the earlier successful calls reach max."""
    fixtures = {"version": 1, "tools": {"get": {"$cases": [{"call_index": 0, "ok": False}, {"result": 1}]}}}
    setup(tmp_path, [call("c1", "get"), call("c2", "get"), call("c3", "get"), done(output=1)],
          rules=[{"id": "one", "kind": "tool_calls", "tool": "get", "max": 1, "count": "successful"}],
          fixtures=fixtures)
    run = record(cli, "--enforce")
    assert denied_ids(run) == ["c3"]


def test_retry_limit_denies_every_call_beyond(tmp_path: Path, cli: Cli) -> None:
    """Point 74: retry_limit denies every call beyond the bound."""
    run = enforced(tmp_path, cli, [{"id": "retry", "kind": "retry_limit", "tool": "get", "max_attempts": 1,
                                    "group_by": "tool"}],
                   [call("c1", "get"), call("c2", "get"), call("c3", "get")])
    assert denied_ids(run) == ["c2", "c3"]


def test_retry_limit_denial_names_the_calls_own_group(tmp_path: Path, cli: Cli) -> None:
    """Found by the sixth hunt: a call denied past the bound but not the first over it was given
    the reason of the rule's first violation, another group's: c5, a third `find`, was denied as
    "Retry group get ran 2 times". Point 75: the reason is the firing rule's message, for this call."""
    run = enforced(tmp_path, cli, [{"id": "retry", "kind": "retry_limit", "max_attempts": 1, "group_by": "tool"}],
                   [call("c1", "get"), call("c2", "get"), call("c3", "find"), call("c4", "find"), call("c5", "find")])
    assert [(event["call_id"], event["reason"]) for event in run.trace if event["type"] == "tool.denied"] == [
        ("c2", "retry: Retry group get ran 2 times; max_attempts is 1."),
        ("c4", "retry: Retry group find ran 2 times; max_attempts is 1."),
        ("c5", "retry: Retry group find ran 3 times; max_attempts is 1.")]


def test_stop_is_final_denies_a_call_after_stop(tmp_path: Path, cli: Cli) -> None:
    """§8 list: stop_is_final is enforced (the agent may send `control.stop`, point 61)."""
    run = enforced(tmp_path, cli, [{"id": "stop", "kind": "stop_is_final",
                                    "allowed_after": ["run.completed", "tool.denied"]}],
                   [send("control.stop", reason="user"), call("c1", "get")])
    assert denied_ids(run) == ["c1"]


def test_tool_args_denied_but_not_with_from_output(tmp_path: Path, cli: Cli) -> None:
    """Point 74: tool_args rules are enforced, except one that contains `$from_output` anywhere."""
    rules = [{"id": "small", "kind": "tool_args", "tool": "pay", "match": {"amount": {"$lte": 10}}},
             {"id": "echo", "kind": "tool_args", "tool": "pay", "match": {"amount": {"$from_output": "n"}},
              "severity": "error"}]
    run = enforced(tmp_path, cli, rules, [call("c1", "pay", {"amount": 50}), call("c2", "pay", {"amount": 5})])
    assert denied_ids(run) == ["c1"]
    assert run.trace[2]["data"]["rule_ids"] == ["small"]


def test_deny_event_precedence_require_order_are_enforced(tmp_path: Path, cli: Cli) -> None:
    """Point 74: deny_event, require_order and precedence (whose `after` is the call) are enforced too."""
    rules: list[dict[str, Any]] = [
        {"id": "no-put", "kind": "deny_event", "match": {"type": "tool.call", "tool": "put"}},
        {"id": "look-first", "kind": "precedence", "before": {"type": "tool.call", "tool": "get"},
         "after": {"type": "tool.call", "tool": "pay"}},
        {"id": "order", "kind": "require_order", "before": {"type": "tool.call", "tool": "get"},
         "after": {"type": "tool.call", "tool": "send"}}]
    steps = [call("c1", "put"), call("c2", "pay"), call("c3", "send"), call("c4", "get"), call("c5", "pay"),
             call("c6", "send")]
    run = enforced(tmp_path, cli, rules, steps)
    assert denied_ids(run) == ["c1", "c2", "c3"]
    assert [e["data"]["rule_ids"] for e in run.trace if e["type"] == "tool.denied"] == [
        ["no-put"], ["look-first"], ["order"]]


def test_warning_rules_are_never_enforced(tmp_path: Path, cli: Cli) -> None:
    """Point 74: warning rules are never enforced."""
    run = enforced(tmp_path, cli, [{"id": "no-rm", "kind": "deny_tool", "tool": "rm", "severity": "warning"}],
                   [call("c1", "rm")])
    assert denied_ids(run) == []
    assert run.code == 0


def test_several_firing_rules_first_in_contract_order(tmp_path: Path, cli: Cli) -> None:
    """Point 75: the reason is the first firing rule's in contract order; `data.rule_ids` lists every one."""
    rules: list[dict[str, Any]] = [
        {"id": "z-first", "kind": "deny_event", "match": {"type": "tool.call", "tool": "rm"}},
        {"id": "a-second", "kind": "deny_tool", "tool": "rm"}]
    run = enforced(tmp_path, cli, rules, [call("c1", "rm")])
    denial = run.trace[2]
    assert denial["reason"].startswith("z-first: ")
    assert denial["data"]["rule_ids"] == ["z-first", "a-second"]


def test_long_reason_is_cut_to_500(tmp_path: Path, cli: Cli) -> None:
    """Point 75: the reason is cut to 500 code points (a long tool name makes a long message)."""
    tool = "r" + "é" * 499
    run = enforced(tmp_path, cli, [{"id": "no-r", "kind": "deny_tool", "tool": "r*"}], [call("c1", tool)])
    reason = run.trace[2]["reason"]
    assert len(reason) == 500 and reason.startswith("no-r: ")


def test_denied_call_counts_for_call_index(tmp_path: Path, cli: Cli) -> None:
    """Point 70/75: a denied call stays in the trace and counts for the fixture's call_index."""
    rules = [{"id": "small", "kind": "tool_args", "tool": "pay", "match": {"amount": {"$lte": 10}}}]
    fixtures = {"version": 1, "tools": {"pay": {"$cases": [{"call_index": 0, "result": "zero"},
                                                           {"call_index": 1, "result": "one"}]}}}
    setup(tmp_path, [call("c1", "pay", {"amount": 50}), call("c2", "pay", {"amount": 5}), done(output=1)],
          rules=rules, fixtures=fixtures)
    run = record(cli, "--enforce")
    assert run.trace[4]["result"] == "one"
    assert run.trace[4]["data"]["fixture"] == {"key": "pay", "case": 1}


# -- fixtures (points 69-72, 88) -----------------------------------------------------------------------


def fixture_run(tmp_path: Path, cli: Cli, tools: dict[str, Any], steps: list[dict[str, Any]],
                *options: str) -> Run:
    setup(tmp_path, [*steps, done(output=1)], fixtures={"version": 1, "tools": tools})
    return record(cli, *options)


def test_exact_key_beats_an_earlier_glob(tmp_path: Path, cli: Cli) -> None:
    """Point 70: the fixture is the key equal to the tool, else the first glob key in file order."""
    run = fixture_run(tmp_path, cli, {"g*": "glob", "get": "exact", "ge?": "second glob"},
                      [call("c1", "get"), call("c2", "gap")])
    assert [run.trace[2]["result"], run.trace[4]["result"]] == ["exact", "glob"]
    assert run.trace[4]["data"] == {"fixture": {"key": "g*"}}


def test_case_miss_does_not_fall_through_to_a_glob(tmp_path: Path, cli: Cli) -> None:
    """Point 70: only that fixture is consulted: a case miss there is a fixture miss; point 72: the
    agent gets ok false, {"error": "no fixture"}, and one `record.fixture_miss` finding."""
    run = fixture_run(tmp_path, cli, {"get": {"$cases": [{"call_index": 5, "result": 1}]}, "*": "any"},
                      [call("c1", "get")])
    result = run.trace[2]
    assert (result["ok"], result["result"], result["data"]) == (False, {"error": "no fixture"}, {"fixture_miss": True})
    assert run.replies[1] == {"type": "tool.result", "call_id": "c1", "ok": False, "result": {"error": "no fixture"}}
    assert run.code == 2
    [finding] = run.rec["findings"]
    assert (finding["code"], finding["seq"], finding["call_id"], finding["tool"], finding["call_index"]) == (
        "record.fixture_miss", 2, "c1", "get", 0)


def test_glob_call_index_counts_every_call_the_key_matches(tmp_path: Path, cli: Cli) -> None:
    """Point 70: call_index counts earlier calls whose tool the key matches (missed ones too)."""
    tools = {"k*": {"$cases": [{"call_index": 1, "result": "second"}, {"result": "other"}]}}
    run = fixture_run(tmp_path, cli, tools, [call("c1", "ka"), call("c2", "kb"), call("c3", "ka")])
    assert [e["result"] for e in run.trace if e["type"] == "tool.result"] == ["other", "second", "other"]


def test_args_selector_never_matches_a_call_without_args(tmp_path: Path, cli: Cli) -> None:
    """Point 70: an `args` selector never matches a call without args (here `{}` selects everything)."""
    tools = {"get": {"$cases": [{"args": {}, "result": "with"}]}}
    run = fixture_run(tmp_path, cli, tools, [call("c1", "get", {}), call("c2", "get")])
    assert [e["result"] for e in run.trace if e["type"] == "tool.result"] == ["with", {"error": "no fixture"}]


def test_several_matching_cases_first_wins(tmp_path: Path, cli: Cli) -> None:
    """§8: cases are tried in order; the first whose selectors all match answers."""
    tools = {"get": {"$cases": [{"args": {"a": 1}, "call_index": 1, "result": "both"},
                                {"args": {"a": 1}, "result": "args"}, {"result": "fallback"}]}}
    run = fixture_run(tmp_path, cli, tools, [call("c1", "get", {"a": 1}), call("c2", "get", {"a": 1, "b": 2}),
                                             call("c3", "get", {"a": 2})])
    assert [e["result"] for e in run.trace if e["type"] == "tool.result"] == ["args", "both", "fallback"]


def test_case_defaults_ok_true_result_null(tmp_path: Path, cli: Cli) -> None:
    """Point 69: in a case, an absent `ok` is true and an absent `result` is null (point 65: `result`
    is always present)."""
    run = fixture_run(tmp_path, cli, {"get": {"$cases": [{"duration_ms": 7}]}}, [call("c1", "get")])
    result = run.trace[2]
    assert (result["ok"], result["result"], result["duration_ms"]) == (True, None, 7)
    assert list(result) == ["seq", "type", "time", "run_id", "tool", "call_id", "ok", "result", "duration_ms", "data"]


def test_literal_and_file_forms(tmp_path: Path, cli: Cli) -> None:
    """Point 69: `{"$literal": v}` answers v verbatim; `$file` is read relative to the fixtures file."""
    (tmp_path / "answer.json").write_text('{"from": "file"}', encoding="utf-8")
    tools = {"lit": {"$literal": {"$file": "x"}}, "fil": {"$file": "answer.json"}}
    run = fixture_run(tmp_path, cli, tools, [call("c1", "lit"), call("c2", "fil")])
    assert [run.trace[2]["result"], run.trace[4]["result"]] == [{"$file": "x"}, {"from": "file"}]


def test_observe_emits_configured_verifier_outcome(tmp_path: Path, cli: Cli) -> None:
    """§8 / point 65: `observe` emits `outcome.observed {outcome_id, verdict, evidence_class:
    "configured_verifier", call_id, data: {attested_by: "harness"}}` after the result."""
    tools = {"verify": {"$cases": [{"result": True, "observe": {"outcome_id": "o1", "verdict": "satisfied"}}]}}
    run = fixture_run(tmp_path, cli, tools, [call("c1", "verify")])
    outcome = run.trace[3]
    assert {k: v for k, v in outcome.items() if k not in ("seq", "time", "run_id")} == {
        "type": "outcome.observed", "call_id": "c1", "outcome_id": "o1", "verdict": "satisfied",
        "evidence_class": "configured_verifier", "data": {"attested_by": "harness"}}


def test_agent_outcome_is_self_attestation(tmp_path: Path, cli: Cli) -> None:
    """Point 67: an agent's `evidence_class` moves to `data.claimed_evidence_class`, replaced by
    `self_attestation`; completion_requires_outcome is then not satisfied by it."""
    rules = [{"id": "proof", "kind": "completion_requires_outcome"}]
    setup(tmp_path, [send("outcome.observed", outcome_id="o1", verdict="satisfied",
                          evidence_class="configured_verifier"), done(output=1)], rules=rules)
    run = record(cli)
    outcome = run.trace[1]
    assert outcome["evidence_class"] == "self_attestation"
    assert outcome["data"] == {"attested_by": "agent", "claimed_evidence_class": "configured_verifier"}
    assert run.code == 1


@pytest.mark.parametrize("tools, where", [
    ({"x": {"$cases": [{"result": 1}, {"call_index": 0, "result": 2}]}}, "$.tools.x.$cases[0]"),
    ({"x": {"$cases": [{"call_index": 0, "result": 1}, {"call_index": 0, "result": 2}]}}, "$.tools.x.$cases[1]"),
    ({"x": {"$cases": [{"result": 1, "okay": True}]}}, "$.tools.x.$cases[0]"),
    ({"x": {"$file": "missing.json"}}, "$.tools.x"),
    ({"x": {"$cases": [{"duration_ms": -1}]}}, "$.tools.x.$cases[0].duration_ms"),
])
def test_bad_fixtures_exit_2_before_spawning(tmp_path: Path, cli: Cli, tools: dict[str, Any], where: str) -> None:
    """Points 69/71: fallback not last, identical selectors, unknown keys, a missing `$file`, a
    negative duration: `F: $.path: …`, exit 2 before spawning (no trace, the agent never ran)."""
    setup(tmp_path, [done()], fixtures={"version": 1, "tools": tools})
    run = record(cli)
    assert run.code == 2 and run.report is None
    assert "f.json" in run.stderr and where in run.stderr, run.stderr
    assert not (tmp_path / "t.jsonl").exists()
    assert not (tmp_path / "count.txt").exists()


def test_delay_ms_is_recorded_as_duration(tmp_path: Path, cli: Cli) -> None:
    """Point 88: `delay_ms`: the answer is sent after that wall-clock delay, recorded as the duration."""
    run = fixture_run(tmp_path, cli, {"slow": {"$cases": [{"delay_ms": 250, "result": 1}]}}, [call("c1", "slow")],
                      "--idle-timeout-ms", "150")
    assert run.rec["ended_by"] == "completed", run.trace
    assert run.trace[2]["duration_ms"] == 250
    assert run.seconds >= 0.25


def test_hang_ends_by_a_timeout(tmp_path: Path, cli: Cli) -> None:
    """Point 88: `hang: true` is never answered; the run ends by the idle or run timeout, and the
    call stays without a result (tool_result_required is liveness: inconclusive, exit 2)."""
    rules = [{"id": "answered", "kind": "tool_result_required"}]
    setup(tmp_path, [call("c1", "stuck"), done()], rules=rules,
          fixtures={"version": 1, "tools": {"stuck": {"$cases": [{"hang": True}]}}})
    run = record(cli, "--timeout-ms", "300", "--idle-timeout-ms", "150")
    assert run.types() == ["run.start", "tool.call", "run.failed"]
    assert run.last()["reason"] in ("timeout:idle", "timeout:run")
    assert run.code == 2
    assert run.report is not None
    assert run.report["error_count"] == 0
    assert [v["status"] for v in run.report["violations"]] == ["inconclusive"]


# -- --replay (point 73) -------------------------------------------------------------------------------

BASELINE = [
    {"seq": 1, "type": "run.start"},
    {"seq": 2, "type": "tool.call", "tool": "get", "call_id": "b1", "args": {"a": 1, "b": 2}},
    {"seq": 3, "type": "tool.result", "call_id": "b1", "ok": True, "result": "A-first", "duration_ms": 11},
    {"seq": 4, "type": "outcome.observed", "outcome_id": "o1", "verdict": "satisfied",
     "evidence_class": "configured_verifier", "data": {"attested_by": "harness"}},
    {"seq": 5, "type": "tool.call", "tool": "put", "call_id": "b2", "args": {"x": 1}},
    {"seq": 6, "type": "tool.result", "call_id": "b2", "ok": False, "result": "P"},
    {"seq": 7, "type": "tool.call", "tool": "get", "call_id": "b3", "args": {"a": 1, "b": 2}},
    {"seq": 8, "type": "tool.result", "call_id": "b3", "ok": True, "result": "A-second"},
    {"seq": 9, "type": "tool.call", "tool": "get", "call_id": "b4"},
    {"seq": 10, "type": "tool.result", "call_id": "b4", "ok": True, "result": "no-args"},
    {"seq": 11, "type": "run.completed"},
]


def replay(tmp_path: Path, cli: Cli, steps: list[dict[str, Any]], *, fixtures: bool = False) -> Run:
    (tmp_path / "base.jsonl").write_text("".join(json.dumps(e) + "\n" for e in BASELINE), encoding="utf-8")
    setup(tmp_path, [*steps, done(output=1)], fixtures={"version": 1, "tools": {"*": "from fixtures"}})
    return record(cli, "--replay", "base.jsonl", fixtures=fixtures)


def results(run: Run) -> list[Any]:
    return [e["result"] for e in run.trace if e["type"] == "tool.result"]


HUGE = 10**309
"""An integer beyond the largest double: valid JSON, which has no canonical form (RFC 8785)."""


def test_numbers_beyond_any_double_in_fixtures_input_and_baseline_are_no_crash(tmp_path: Path, cli: Cli) -> None:
    """Found by the sixth hunt: such a number in a fixture's result, in `--input`, or in the args
    of a baseline's call (or `1e400` there, which `check` reads) stopped `record` with a Python
    traceback and exit 1, before the agent started; an agent's call holding one, under
    `--replay`, stopped it mid-run, its trace left without a result or an end. Keys and sizes
    now take such values as the rest of the tool does: the call meets the baseline's."""
    lines = [json.dumps(event) for event in BASELINE]
    lines[1] = lines[1].replace('{"a": 1, "b": 2}', f'{{"n": {HUGE}}}')
    lines[4] = lines[4].replace('{"x": 1}', '{"x": 1e400}')
    (tmp_path / "base.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    setup(tmp_path, [call("c1", "get", {"n": HUGE}), {"recv": True}, call("c2", "find"), {"recv": True},
                     done(output=1)], fixtures={"version": 1, "tools": {"find": {"big": HUGE}}})
    run = record(cli, "--replay", "base.jsonl", "--input", json.dumps({"n": HUGE}))
    assert (run.code, run.stderr) == (0, ""), run.stderr
    assert run.types() == ["run.start", "tool.call", "tool.result", "outcome.observed", "tool.call", "tool.result",
                           "run.completed"]
    assert (run.trace[2]["result"], run.trace[2]["data"]) == ("A-first", {"replay_seq": 3})
    assert run.trace[5]["result"] == {"big": HUGE}
    assert run.trace[0]["data"]["input"] == {"n": HUGE}


def test_replay_matches_by_key_not_by_position(tmp_path: Path, cli: Cli) -> None:
    """Point 73: the key is (tool, canonical args): calls in another order, with keys reordered,
    get their own baseline results; ok, result, duration_ms copied; `data.replay_seq` set."""
    run = replay(tmp_path, cli, [call("c1", "put", {"x": 1}), call("c2", "get", {"b": 2, "a": 1})])
    assert results(run) == ["P", "A-first"]
    put, get = (e for e in run.trace if e["type"] == "tool.result")
    assert (put["ok"], put["data"]) == (False, {"replay_seq": 6})
    assert (get["duration_ms"], get["data"]) == (11, {"replay_seq": 3})
    assert run.code == 0, run.stdout


def test_replay_occurrence_k_gets_kth_result(tmp_path: Path, cli: Cli) -> None:
    """Point 73: the k-th call with a key gets the k-th baseline call's result with that key."""
    run = replay(tmp_path, cli, [call("c1", "get", {"a": 1, "b": 2}), call("c2", "get", {"a": 1, "b": 2})])
    assert results(run) == ["A-first", "A-second"]


def test_replay_reemits_harness_outcomes_after_result(tmp_path: Path, cli: Cli) -> None:
    """Point 73: the harness-attested outcomes that directly follow the result are re-emitted."""
    run = replay(tmp_path, cli, [call("c1", "get", {"a": 1, "b": 2})])
    assert run.types()[1:4] == ["tool.call", "tool.result", "outcome.observed"]
    assert run.trace[3]["outcome_id"] == "o1" and run.trace[3]["data"]["attested_by"] == "harness"


def test_replay_extra_occurrence_falls_to_a_miss_without_fixtures(tmp_path: Path, cli: Cli) -> None:
    """Point 73: an extra call (a third occurrence) has no baseline result; `--fixtures` is optional,
    so without it the call is a miss (point 72: exit 2)."""
    run = replay(tmp_path, cli, [call("c1", "put", {"x": 1}), call("c2", "put", {"x": 1})])
    assert results(run) == ["P", {"error": "no fixture"}]
    assert run.codes() == ["record.fixture_miss"]
    assert run.code == 2


def test_replay_then_fixtures(tmp_path: Path, cli: Cli) -> None:
    """Point 73: the order is replay, then fixtures, then a miss: different args go to the fixtures."""
    run = replay(tmp_path, cli, [call("c1", "put", {"x": 2}), call("c2", "put", {"x": 1})], fixtures=True)
    assert results(run) == ["from fixtures", "P"]
    assert run.code == 0


def test_replay_absent_args_differ_from_empty(tmp_path: Path, cli: Cli) -> None:
    """Point 73: absent args are distinct from `{}`."""
    run = replay(tmp_path, cli, [call("c1", "get", {}), call("c2", "get")])
    assert results(run) == [{"error": "no fixture"}, "no-args"]


def test_replay_missing_calls_are_fine(tmp_path: Path, cli: Cli) -> None:
    """Point 73: a run that makes fewer calls than the baseline simply uses fewer results (spec silent
    on unused baseline calls; no finding is a reasonable reading)."""
    run = replay(tmp_path, cli, [])
    assert run.code == 0 and run.rec["findings"] == []


def test_invalid_baseline_exits_2_before_spawning(tmp_path: Path, cli: Cli) -> None:
    """Point 73: an invalid baseline exits 2 before spawning."""
    setup(tmp_path, [done()])
    (tmp_path / "base.jsonl").write_text('{"seq": 1, "type": "run.start"}\nnot json\n', encoding="utf-8")
    run = record(cli, "--replay", "base.jsonl", fixtures=False)
    assert run.code == 2 and run.report is None
    assert not (tmp_path / "t.jsonl").exists() and not (tmp_path / "count.txt").exists()


# -- redaction (point 86) ------------------------------------------------------------------------------


def test_redaction_in_trace_keeps_the_verdict(tmp_path: Path, cli: Cli) -> None:
    """Point 86: values of matching keys (any case; nested, JSON in strings, key=value text, --key
    value flags) become "[redacted]" before anything is written; rules run on raw values."""
    rules = [{"id": "key-shape", "kind": "tool_args", "tool": "get",
              "match": {"auth": {"Api_Key": {"$regex": "^sk-"}}}}]
    steps = [call("c1", "get", {"auth": {"Api_Key": "sk-SECRET1"}, "blob": json.dumps({"api_key": "SECRET2"})}),
             send("agent.message", text="using api_key=SECRET3 and --api-key SECRET4"),
             {"stderr": "api_key: \"SECRET5\"\n"}, done(output={"API_KEY": "SECRET6"})]
    setup(tmp_path, steps, rules=rules)
    run = record(cli, "--redact", "api_key", "--redact", "api-key")
    assert run.code == 0, run.stdout
    written = (tmp_path / "t.jsonl").read_text(encoding="utf-8") + run.stdout
    written += (tmp_path / "t.jsonl.stderr.log").read_text(encoding="utf-8")
    assert "SECRET" not in written
    assert run.trace[1]["args"]["auth"]["Api_Key"] == "[redacted]"
    assert json.loads(run.trace[1]["args"]["blob"]) == {"api_key": "[redacted]"}
    assert run.last()["output"] == {"API_KEY": "[redacted]"}


def test_redaction_of_a_failing_value_keeps_fail_and_hides_it(tmp_path: Path, cli: Cli) -> None:
    """Point 86: redaction never changes a verdict (a raw value that fails still fails), and the
    report does not show it."""
    rules = [{"id": "key-shape", "kind": "tool_args", "tool": "get", "match": {"token": {"$regex": "^sk-"}}}]
    setup(tmp_path, [call("c1", "get", {"token": "LEAKED-VALUE"}), done(output=1)], rules=rules)
    run = record(cli, "--redact", "token")
    assert run.code == 1
    assert "LEAKED-VALUE" not in run.stdout
    assert "LEAKED-VALUE" not in (tmp_path / "t.jsonl").read_text(encoding="utf-8")


def test_redact_list_in_fixtures(tmp_path: Path, cli: Cli) -> None:
    """Point 86: a `redact: [keys]` list in the fixtures file works like --redact (results too)."""
    setup(tmp_path, [call("c1", "get"), done(output=1)],
          fixtures={"version": 1, "redact": ["password"], "tools": {"get": {"password": "hunter2"}}})
    run = record(cli)
    assert run.trace[2]["result"] == {"password": "[redacted]"}
    assert run.replies[1]["result"] == {"password": "hunter2"}


def test_redacting_a_field_name_is_refused(tmp_path: Path, cli: Cli) -> None:
    """Point 86: keys that are event or report field names are refused (exit 2)."""
    setup(tmp_path, [done()])
    run = record(cli, "--redact", "tool")
    assert run.code == 2 and run.report is None
    assert not (tmp_path / "t.jsonl").exists()


# -- --out, --fake-clock, run.start (points 62, 66, 68) ------------------------------------------------


def test_out_that_exists_is_refused_before_spawning(tmp_path: Path, cli: Cli) -> None:
    """Point 68: `--out` must not exist (exit 2 before spawning); the file is left as it was."""
    setup(tmp_path, [done()])
    (tmp_path / "t.jsonl").write_text('{"keep": 1}\n', encoding="utf-8")
    run = record(cli)
    assert run.code == 2 and run.report is None
    assert (tmp_path / "t.jsonl").read_text(encoding="utf-8") == '{"keep": 1}\n'
    assert not (tmp_path / "count.txt").exists()


def test_force_replaces_a_regular_file(tmp_path: Path, cli: Cli) -> None:
    """Point 68: with --force an existing regular file is replaced."""
    setup(tmp_path, [done(output=1)])
    (tmp_path / "t.jsonl").write_text("old\n", encoding="utf-8")
    run = record(cli, "--force")
    assert run.code == 0
    assert run.types() == ["run.start", "run.completed"]


def test_force_does_not_replace_a_folder(tmp_path: Path, cli: Cli) -> None:
    """Point 68: --force replaces an existing regular file, "and nothing else": a folder -> exit 2."""
    setup(tmp_path, [done()])
    (tmp_path / "t.jsonl").mkdir()
    run = record(cli, "--force", out="t.jsonl")
    assert run.code == 2 and run.report is None
    assert (tmp_path / "t.jsonl").is_dir()
    assert not (tmp_path / "count.txt").exists()


def test_out_in_a_missing_folder(tmp_path: Path, cli: Cli) -> None:
    """Point 68: spec silent on a missing parent of an explicit --out; the default one lives in folders
    that must be created, so creating the parent is the reading taken (product: created)."""
    setup(tmp_path, [done(output=1)])
    run = record(cli, out="new/deeper/t.jsonl")
    assert run.code == 0, run.stderr
    assert read_jsonl(tmp_path / "new/deeper/t.jsonl")[-1]["type"] == "run.completed"


def test_default_out_path(tmp_path: Path, cli: Cli) -> None:
    """Point 68: --out defaults to `.agent-invariants/runs/<run_id>.jsonl`; point 62: --run-id."""
    setup(tmp_path, [done(output=1)])
    run = record(cli, "--run-id", "r-42", out="", fake_clock=False)
    assert run.code == 0, run.stderr
    trace = read_jsonl(tmp_path / ".agent-invariants/runs/r-42.jsonl")
    assert [e["run_id"] for e in trace] == ["r-42", "r-42"]
    assert run.rec["run_id"] == "r-42"


def test_fake_clock_trace_is_byte_identical(tmp_path: Path, cli: Cli) -> None:
    """Point 66: under --fake-clock, time = epoch + seq ms, run_id fake-run, terminal duration
    omitted: a deterministic agent gives a byte-identical trace."""
    setup(tmp_path, [call("c1", "get", {"a": 1}), send("agent.message", text="x"), done(output=1)])
    first = record(cli, out="one.jsonl")
    (tmp_path / "replies.jsonl").unlink()
    second = record(cli, out="two.jsonl")
    assert first.code == second.code == 0
    assert (tmp_path / "one.jsonl").read_bytes() == (tmp_path / "two.jsonl").read_bytes()
    assert [e["time"] for e in first.trace] == [f"1970-01-01T00:00:00.00{i}Z" for i in range(1, 6)]
    assert "duration_ms" not in first.last()
    assert {e["run_id"] for e in first.trace} == {"fake-run"}


def test_fake_clock_byte_identical_after_harness_ending(tmp_path: Path, cli: Cli) -> None:
    """Point 66: byte-identical traces also when the harness ends the run (here exit:5)."""
    setup(tmp_path, [call("c1", "get"), {"exit": 5}])
    record(cli, out="one.jsonl")
    record(cli, out="two.jsonl")
    assert (tmp_path / "one.jsonl").read_bytes() == (tmp_path / "two.jsonl").read_bytes()


def test_real_clock_shape(tmp_path: Path, cli: Cli) -> None:
    """Point 66: time is `YYYY-MM-DDTHH:MM:SS.mmmZ`, never decreasing; the terminal's duration_ms is
    measured; point 62: run_id is a UUID4 in hex, exported as AGENT_INVARIANTS_RUN_ID."""
    import re
    setup(tmp_path, [call("c1", "get"), done(output=1)])
    run = record(cli, fake_clock=False)
    times = [e["time"] for e in run.trace]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", t) for t in times), times
    assert times == sorted(times)
    assert isinstance(run.last()["duration_ms"], (int, float))
    assert "duration_ms" not in run.trace[2]  # a tool.result's duration is never measured
    run_id = run.trace[0]["run_id"]
    assert re.fullmatch(r"[0-9a-f]{32}", run_id) and run_id[12] == "4"
    assert run.replies[0]["run_id"] == run_id


def test_run_start_input_override(tmp_path: Path, cli: Cli) -> None:
    """Point 62: `input` is the fixtures' `input`, overridden by --input; protocol is 1."""
    setup(tmp_path, [done(output=1)], fixtures={"version": 1, "input": {"from": "fixtures"}, "tools": {}})
    run = record(cli, "--input", '{"from": "option"}')
    assert run.replies[0] == {"type": "run.start", "protocol": 1, "run_id": "fake-run", "input": {"from": "option"}}
    assert run.trace[0]["data"] == {"input": {"from": "option"}, "protocol": 1}


# -- verdicts: record vs check, partial (points 82, 83) ------------------------------------------------


def test_check_of_trace_agrees_with_record(tmp_path: Path, cli: Cli) -> None:
    """§8: without a harness ending, record runs the ordinary check on the trace: `check` of the
    written trace gives the same verdict and violations; §8 example: without --enforce the call is
    answered and the check fails at it."""
    rules: list[dict[str, Any]] = [{"id": "no-rm", "kind": "deny_tool", "tool": "rm"},
                                   {"id": "two", "kind": "tool_calls", "tool": "*", "min": 3}]
    setup(tmp_path, [call("c1", "rm"), call("c2", "get"), done(output=1)], rules=rules, fixtures=REFUND_FIXTURES)
    run = record(cli)
    assert run.types() == ["run.start", "tool.call", "tool.result", "tool.call", "tool.result", "run.completed"]
    check = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    report = json.loads(check.stdout)
    assert run.report is not None
    assert (run.code, check.returncode) == (1, 1)
    for key in ("passed", "error_count", "warning_count", "violations", "results"):
        assert run.report[key] == report[key], key


def test_partial_check_of_harness_ended_trace_agrees(tmp_path: Path, cli: Cli) -> None:
    """Point 82: a harness-ended run is checked with --partial; `check --partial` of the trace agrees;
    a safety failure makes it exit 1 (behaviour outranks harness failure)."""
    rules: list[dict[str, Any]] = [{"id": "no-rm", "kind": "deny_tool", "tool": "rm"},
                                   {"id": "done", "kind": "require_event", "match": {"type": "run.completed"}}]
    setup(tmp_path, [call("c1", "rm"), {"exit": 9}], rules=rules, fixtures=REFUND_FIXTURES)
    run = record(cli)
    check = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--partial", "--format", "json")
    report = json.loads(check.stdout)
    assert run.report is not None
    assert (run.code, check.returncode) == (1, 1)
    assert run.report["error_count"] == report["error_count"] == 1
    assert run.report["violations"] == report["violations"]


def test_harness_ended_liveness_only_is_exit_2(tmp_path: Path, cli: Cli) -> None:
    """Point 82: liveness violations under --partial are `inconclusive`, left out of error_count and
    the exit: a harness-ended run with only those exits 2 (with a `record.ended` finding)."""
    rules = [{"id": "done", "kind": "require_event", "match": {"type": "run.completed"}}]
    setup(tmp_path, [{"exit": 1}], rules=rules)
    run = record(cli)
    assert run.code == 2
    assert run.report is not None
    assert run.report["error_count"] == 0
    assert [v["status"] for v in run.report["violations"]] == ["inconclusive"]
    assert run.codes() == ["record.ended"]


def test_timeout_options_range(tmp_path: Path, cli: Cli) -> None:
    """Point 78: both options take integers 1..86,400,000; there is no "off" value (0 -> exit 2)."""
    setup(tmp_path, [done()])
    assert record(cli, "--timeout-ms", "0").code == 2
    assert record(cli, "--idle-timeout-ms", "86400001").code == 2
    assert not (tmp_path / "count.txt").exists()


# -- --repeat (point 87) -------------------------------------------------------------------------------


def repeat(cli: Cli, *options: str) -> subprocess.CompletedProcess[str]:
    return cli("record", "--contract", "c.json", "--fixtures", "f.json", "--fake-clock", "--format", "json",
               "--timeout-ms", "10000", "--idle-timeout-ms", "5000", *options, "--", sys.executable, "agent.py")


def test_repeat_with_a_run_failing_in_the_middle(tmp_path: Path, cli: Cli) -> None:
    """Point 87: --repeat N --out-dir D runs N times, writes D/run-<i>.jsonl, checks each and exits
    with the worst code; the report lists every run. Run 2 of 3 exits 3 mid-run (harness-ended:
    exit 2); runs 1 and 3 complete with the same output."""
    setup(tmp_path, [call("c1", "get"), {"on_run": 2, "exit": 3}, done(output={"n": 1})])
    proc = repeat(cli, "--repeat", "3", "--out-dir", "runs")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    traces = [read_jsonl(tmp_path / f"runs/run-{i}.jsonl") for i in (1, 2, 3)]
    assert [t[-1]["type"] for t in traces] == ["run.completed", "run.failed", "run.completed"]
    assert traces[1][-1]["reason"] == "exit:3"
    assert traces[0] == traces[2]
    report = json.loads(proc.stdout)
    text = json.dumps(report)
    assert text.count('"ended_by": "exit:3"') == 1 and text.count('"ended_by": "completed"') == 2
    assert "stability" in report


def test_repeat_with_a_failing_check_is_worst(tmp_path: Path, cli: Cli) -> None:
    """Point 87: the worst code wins: one run breaking a rule -> exit 1."""
    setup(tmp_path, [{"on_run": 2, **call("c1", "rm")}, done(output={"n": 1})], fixtures=REFUND_FIXTURES)
    proc = repeat(cli, "--repeat", "2", "--out-dir", "runs")
    assert proc.returncode == 1, proc.stdout + proc.stderr


def test_repeat_needs_out_dir(tmp_path: Path, cli: Cli) -> None:
    """Point 87 names `--repeat N --out-dir D` together; the help says --repeat "Needs --out-dir"."""
    setup(tmp_path, [done()])
    proc = repeat(cli, "--repeat", "2")
    assert proc.returncode == 2
    assert not (tmp_path / "count.txt").exists()


# -- more corners ----------------------------------------------------------------------------------------


def probed(run: Run, index: int) -> dict[str, Any]:
    seen: dict[str, Any] = json.loads(run.trace[index]["data"]["text"])
    return seen


def test_trace_exists_before_spawn_and_is_flushed_before_reply(tmp_path: Path, cli: Cli) -> None:
    """Point 68: the trace is created before the spawn and flushed after each event; point 63: each
    event is flushed before its reply is sent (write-then-send)."""
    setup(tmp_path, [{"probe": "t.jsonl"}, call("c1", "get"), {"probe": "t.jsonl"}, done(output=1)])
    run = record(cli)
    assert probed(run, 1)["lines"] in (0, 1)
    assert probed(run, 4)["lines"] == 4


def test_environment_and_cwd(tmp_path: Path, cli: Cli) -> None:
    """Point 81: the child gets AGENT_INVARIANTS_PROTOCOL=1 and AGENT_INVARIANTS_RUN_ID, --env K=V,
    and --env-clear drops record's environment; --cwd D sets its folder."""
    (tmp_path / "sub").mkdir()
    setup(tmp_path, [{"probe": "none"}, done(output=1)])
    for name in ("steps.json", "agent.py"):
        (tmp_path / "sub" / name).write_text((tmp_path / name).read_text(encoding="utf-8"), encoding="utf-8")
    run = record(cli, "--env-clear", "--env", "EXTRA=yes", "--cwd", "sub", "--run-id", "rid", agent="agent.py")
    seen = json.loads(run.trace[1]["data"]["text"])
    assert seen["protocol"] == "1" and seen["run_id"] == "rid" and seen["extra"] == "yes"
    assert seen["home"] is None
    assert Path(seen["cwd"]).resolve() == (tmp_path / "sub").resolve()


def test_agent_message_and_telemetry_shapes(tmp_path: Path, cli: Cli) -> None:
    """Point 65: `agent.message` -> {claims_completion?, confidence?, data: {text?}}; `control.stop`
    and `telemetry.*` as sent; an agent `approval.revoked` gets `data.attested_by: "agent"`."""
    setup(tmp_path, [send("agent.message", text="t", claims_completion=False, confidence=0.5),
                     send("telemetry.tokens"), send("approval.revoked", approval_id="g1", reason="r"),
                     send("control.stop", reason="user"), done(output=1)])
    run = record(cli)
    strip = [{k: v for k, v in e.items() if k not in ("seq", "time", "run_id")} for e in run.trace[1:5]]
    assert strip == [
        {"type": "agent.message", "claims_completion": False, "confidence": 0.5, "data": {"text": "t"}},
        {"type": "telemetry.tokens"},
        {"type": "approval.revoked", "approval_id": "g1", "reason": "r", "data": {"attested_by": "agent"}},
        {"type": "control.stop", "reason": "user"},
    ]


def test_approval_entry_copies_scope_and_approver(tmp_path: Path, cli: Cli) -> None:
    """Point 64: the first entry whose tool glob and args tree match answers; its approval_scope and
    approver are copied; `decision: "deny"` gives approved false (no miss)."""
    fixtures = {"version": 1, "tools": {}, "approvals": [
        {"tool": "pay", "args": {"amount": {"$gt": 10}}, "decision": "deny"},
        {"tool": "p*", "decision": "approve", "approval_scope": "small", "approver": "lead"}]}
    setup(tmp_path, [send("approval.request", approval_id="a1", tool="pay", args={"amount": 50}),
                     send("approval.request", approval_id="a2", tool="pay", args={"amount": 5}), done(output=1)],
          fixtures=fixtures)
    run = record(cli)
    grants = [e for e in run.trace if e["type"] == "approval.granted"]
    assert [g["approved"] for g in grants] == [False, True]
    assert (grants[1]["approval_scope"], grants[1]["approver"]) == ("small", "lead")
    assert "fixture_miss" not in grants[0]["data"]
    assert run.code == 0, run.stdout


def test_offending_excerpt_is_cut_to_200(tmp_path: Path, cli: Cli) -> None:
    """Point 77: `excerpt` has at most 200 code points."""
    setup(tmp_path, [{"raw": "é" * 1000 + "\n"}, {"sleep": 5}])
    run = record(cli)
    excerpt = run.last()["data"]["offending"]["excerpt"]
    assert 0 < len(excerpt) <= 200 and set(excerpt) <= {"é", "…"}


def test_fixture_miss_with_a_check_error_exits_1(tmp_path: Path, cli: Cli) -> None:
    """Point 72/83: a miss makes a passing run exit 2, but the check's exit 1 still wins."""
    setup(tmp_path, [call("c1", "rm"), done(output=1)], fixtures={"version": 1, "tools": {}})
    run = record(cli)
    assert run.code == 1
    assert run.codes() == ["record.fixture_miss"]


def test_fixture_miss_counts_as_tool_failure(tmp_path: Path, cli: Cli) -> None:
    """Point 72: a miss counts as a tool failure for v1 budgets."""
    rules = [{"id": "budget", "kind": "event_budget", "max_tool_failures": 0}]
    setup(tmp_path, [call("c1", "nothing"), done(output=1)], rules=rules, fixtures={"version": 1, "tools": {}})
    run = record(cli)
    assert run.code == 1
    assert run.report is not None and run.report["summary"]["tool_failures"] == 1


def test_denied_call_without_result_fails_tool_result_required(tmp_path: Path, cli: Cli) -> None:
    """Point 75: `tool.denied` is an ordinary event to v1 kinds: tool_result_required flags a denied call."""
    rules = [{"id": "no-rm", "kind": "deny_tool", "tool": "rm"}, {"id": "answered", "kind": "tool_result_required"}]
    run = enforced(tmp_path, cli, rules, [call("c1", "rm")])
    assert run.report is not None
    assert sorted(v["rule_id"] for v in run.report["violations"]) == ["answered", "no-rm"]


def test_unresolved_at_the_call_is_denied(tmp_path: Path, cli: Cli) -> None:
    """Point 74: a call is denied on a `fail` *or `unresolved`* violation at it (tool_args on a call
    without args: `args_missing`, unresolved)."""
    rules = [{"id": "shape", "kind": "tool_args", "tool": "pay", "match": {"amount": {"$lte": 10}}}]
    run = enforced(tmp_path, cli, rules, [call("c1", "pay")])
    assert denied_ids(run) == ["c1"]


def test_oversized_fixture_result_is_refused_at_load(tmp_path: Path, cli: Cli) -> None:
    """Point 68: fixture results are capped at 1,040,384 canonical bytes at load (exit 2)."""
    setup(tmp_path, [done()], fixtures={"version": 1, "tools": {"big": "z" * LINE_CAP}})
    run = record(cli)
    assert run.code == 2 and run.report is None
    assert not (tmp_path / "count.txt").exists()


@pytest.mark.slow
def test_stderr_log_keeps_the_last_mib(tmp_path: Path, cli: Cli) -> None:
    """Point 80: the stderr log keeps its last 1 MiB, with a first line `[… N bytes dropped]`."""
    setup(tmp_path, [{"stderr": "a" * (1 << 20) + "b" * 100}, done(output=1)])
    run = record(cli)
    assert run.code == 0
    log = (tmp_path / "t.jsonl.stderr.log").read_text(encoding="utf-8")
    first, _, rest = log.partition("\n")
    assert first == "[… 100 bytes dropped]", first
    assert rest.endswith("b" * 100)
    assert run.rec["stderr_bytes"] == (1 << 20) + 100


def test_interrupt_to_record_is_interrupted(tmp_path: Path) -> None:
    """Point 76: `interrupted`, when `record` gets SIGINT/SIGTERM: run.failed appended, trace kept."""
    setup(tmp_path, [send("agent.message", text="x"), {"sleep": 30}])
    env = {**os.environ, "NO_COLOR": "1", "MARK": "interrupted"}
    proc = subprocess.Popen([sys.executable, "-m", "agent_invariants", "record", "--contract", "c.json",
                             "--fixtures", "f.json", "--fake-clock", "--out", "t.jsonl", "--format", "json",
                             "--", sys.executable, "agent.py"], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and len(read_jsonl(tmp_path / "t.jsonl")) < 2:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    stdout, _ = proc.communicate(timeout=15)
    trace = read_jsonl(tmp_path / "t.jsonl")
    assert [e["type"] for e in trace] == ["run.start", "agent.message", "run.failed"]
    assert trace[-1]["reason"] == "interrupted"
    assert json.loads(stdout)["record"]["ended_by"] == "interrupted"
    assert agents_left("MARK=interrupted") == []


@pytest.mark.slow
def test_total_output_cap_counts_blank_lines(tmp_path: Path, cli: Cli) -> None:
    """Point 80: the caps count raw stdout bytes, newlines and blank lines included; the total cap
    triggers on the first byte beyond 64 MiB -> `output_limit`, `data.limit: "total"`."""
    setup(tmp_path, [{"flood": 64}, {"raw": "\n"}, {"sleep": 5}])
    run = record(cli, timeout=60)
    assert run.last()["reason"] == "output_limit"
    assert run.last()["data"]["limit"] == "total"


def test_delay_counts_against_the_run_timer(tmp_path: Path, cli: Cli) -> None:
    """Point 78/88: the run timer runs from spawn to the end, a `delay_ms` included."""
    run = fixture_run(tmp_path, cli, {"slow": {"$cases": [{"delay_ms": 3000}]}}, [call("c1", "slow")],
                      "--timeout-ms", "250")
    assert run.last()["reason"] == "timeout:run"
    assert run.seconds < 4


def test_objects_that_are_not_only_a_form_are_literals(tmp_path: Path, cli: Cli) -> None:
    """Point 69: an object whose *only* key is `$file`, `$cases` or `$literal` is that form; anything
    else (also null, a list) is a literal result with ok: true."""
    tools: dict[str, Any] = {"a": {"$file": "x.json", "other": 1}, "b": {"$cases": [], "n": 2}, "c": None, "d": [1, 2]}
    run = fixture_run(tmp_path, cli, tools, [call("c1", "a"), call("c2", "b"), call("c3", "c"), call("c4", "d")])
    answered = [(e["ok"], e["result"]) for e in run.trace if e["type"] == "tool.result"]
    assert answered == [(True, value) for value in tools.values()]
    assert run.code == 0, run.stderr


def test_case_result_may_be_a_file(tmp_path: Path, cli: Cli) -> None:
    """Point 69: `$file` as a case's `result` is read relative to the fixtures file's folder."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "r.json").write_text("[3]", encoding="utf-8")
    setup(tmp_path, [call("c1", "get"), done(output=1)],
          fixtures={"version": 1, "tools": {"get": {"$cases": [{"result": {"$file": "r.json"}}]}}})
    (tmp_path / "sub" / "f.json").write_text((tmp_path / "f.json").read_text(encoding="utf-8"), encoding="utf-8")
    run = record(cli, "--fixtures", "sub/f.json", fixtures=False)
    assert run.trace[2]["result"] == [3]


def test_unreachable_case_is_only_a_warning(tmp_path: Path, cli: Cli) -> None:
    """Point 71: a case unreachable behind an earlier one with the same call_index and no args gets a
    stderr warning (the run still goes)."""
    tools = {"get": {"$cases": [{"call_index": 0, "result": 1}, {"call_index": 0, "args": {"a": 1}, "result": 2}]}}
    run = fixture_run(tmp_path, cli, tools, [call("c1", "get", {"a": 1})])
    assert run.code == 0
    assert "$.tools.get.$cases[1]" in run.stderr
    assert run.trace[2]["result"] == 1


@pytest.mark.parametrize("fixtures", [
    {"tools": {}},
    {"version": 2, "tools": {}},
    {"version": 1},
    {"version": 1, "tools": {}, "approvals": [{"tool": "x", "decision": "maybe"}]},
])
def test_bad_fixture_root_exits_2(tmp_path: Path, cli: Cli, fixtures: dict[str, Any]) -> None:
    """Point 69: `version` (1) and `tools` are required, unknown keys rejected, `decision` is
    "approve" or "deny"; exit 2 before spawning."""
    setup(tmp_path, [done()], fixtures=fixtures)
    run = record(cli)
    assert run.code == 2 and "f.json" in run.stderr
    assert not (tmp_path / "count.txt").exists()


def test_replay_baseline_call_without_result_uses_fixtures(tmp_path: Path, cli: Cli) -> None:
    """Point 73: when the k-th baseline call has no result, the fixtures answer."""
    base = [{"seq": 1, "type": "tool.call", "tool": "get", "call_id": "b1"},
            {"seq": 2, "type": "run.completed"}]
    (tmp_path / "base.jsonl").write_text("".join(json.dumps(e) + "\n" for e in base), encoding="utf-8")
    setup(tmp_path, [call("c1", "get"), done(output=1)], fixtures={"version": 1, "tools": {"get": "fixture"}})
    run = record(cli, "--replay", "base.jsonl")
    assert run.trace[2]["result"] == "fixture"
    assert run.trace[2]["data"] == {"fixture": {"key": "get"}}


def test_replay_of_approvals(tmp_path: Path, cli: Cli) -> None:
    """Point 73: approval requests replay the baseline's harness-attested grants by the same key."""
    base = [{"seq": 1, "type": "approval.requested", "approval_id": "x", "tool": "pay", "args": {"a": 1}},
            {"seq": 2, "type": "approval.granted", "approval_id": "x", "tool": "pay", "args": {"a": 1},
             "approved": True, "approver": "boss", "data": {"attested_by": "harness"}},
            {"seq": 3, "type": "run.completed"}]
    (tmp_path / "base.jsonl").write_text("".join(json.dumps(e) + "\n" for e in base), encoding="utf-8")
    setup(tmp_path, [send("approval.request", approval_id="a1", tool="pay", args={"a": 1}), done(output=1)],
          fixtures={"version": 1, "tools": {}, "approvals": [{"tool": "pay", "decision": "deny"}]})
    run = record(cli, "--replay", "base.jsonl")
    grant = run.trace[2]
    assert (grant["approved"], grant["approval_id"], grant.get("approver")) == (True, "a1", "boss")
    assert run.replies[1]["approved"] is True


def test_repeat_refuses_existing_run_file(tmp_path: Path, cli: Cli) -> None:
    """Point 87 with point 68: the run files must not exist (exit 2 before any run)."""
    setup(tmp_path, [done(output=1)])
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "run-2.jsonl").write_text("", encoding="utf-8")
    proc = repeat(cli, "--repeat", "2", "--out-dir", "runs")
    assert proc.returncode == 2
    assert not (tmp_path / "count.txt").exists()
    assert not (tmp_path / "runs" / "run-1.jsonl").exists()


def test_safety_exit_for_harness_ended_safety_failure(tmp_path: Path, cli: Cli) -> None:
    """Points 82/84: a harness-ended run with a safety error exits N under --safety-exit N."""
    setup(tmp_path, [call("c1", "rm"), {"exit": 3}], fixtures=REFUND_FIXTURES)
    run = record(cli, "--safety-exit", "9")
    assert run.code == 9


AGENTDOCTOR = r'''
import json, sys
start = json.loads(sys.stdin.readline())
open("start.json", "w").write(json.dumps(start))
print(json.dumps({"type": "tool_call", "callId": "c1", "name": "get", "arguments": {"a": 1}}), flush=True)
reply = json.loads(sys.stdin.readline())
open("reply.json", "w").write(json.dumps(reply))
print(json.dumps({"type": "final", "status": "completed", "output": {"n": 1}}), flush=True)
'''


def test_agentdoctor_protocol_gives_the_same_trace(tmp_path: Path, cli: Cli) -> None:
    """Point 89: --protocol agentdoctor maps run_start / tool_call (callId, arguments) / final both
    ways; the recorded trace is the same as with our protocol."""
    setup(tmp_path, [call("c1", "get", {"a": 1}), done(status="completed", output={"n": 1})])
    native = record(cli, out="native.jsonl")
    (tmp_path / "ad.py").write_text(AGENTDOCTOR, encoding="utf-8")
    mapped = record(cli, "--protocol", "agentdoctor", out="ad.jsonl", agent="ad.py")
    assert mapped.code == native.code == 0, mapped.stdout + mapped.stderr
    assert (tmp_path / "ad.jsonl").read_bytes() == (tmp_path / "native.jsonl").read_bytes()
    start = json.loads((tmp_path / "start.json").read_text(encoding="utf-8"))
    reply = json.loads((tmp_path / "reply.json").read_text(encoding="utf-8"))
    assert start["type"] == "run_start" and start["runId"] == "fake-run"
    assert (reply["type"], reply["callId"], reply["result"], reply["isError"]) == ("tool_result", "c1", {"n": 1}, False)


def test_stdin_is_closed_after_the_terminal(tmp_path: Path, cli: Cli) -> None:
    """Point 62: stdin is closed when the agent's terminal message is recorded (the agent reads EOF
    instead of waiting, and the run ends `completed`)."""
    setup(tmp_path, [done(output=1), {"read_eof": True}, {"exit": 0}])
    run = record(cli, "--idle-timeout-ms", "2000")
    assert run.rec["ended_by"] == "completed"
    assert (tmp_path / "after_terminal.txt").read_text(encoding="utf-8") == "''"


def test_bad_line_then_crash_first_problem_wins(tmp_path: Path, cli: Cli) -> None:
    """Point 76: stdout is read to EOF before the exit status is looked at, so the first problem in
    stream order wins: a bad line followed at once by exit 3 is `protocol:bad_json`."""
    setup(tmp_path, [{"raw": "{oops\n"}, {"exit": 3}])
    run = record(cli)
    assert run.last()["reason"] == "protocol:bad_json"
    assert run.types() == ["run.start", "run.failed"]


def test_message_keys_follow_event_order(tmp_path: Path, cli: Cli) -> None:
    """Point 65: keys follow v1 §3.1 order, then v2 §1 order, `data` last, whatever order they came in."""
    message = {"data": {"k": 1}, "args": {"a": 1}, "approval_id": "g", "call_signature": "sig", "call_id": "c1",
               "tool": "get", "type": "tool.call"}
    setup(tmp_path, [{"send": message}, done(output=1)])
    run = record(cli)
    assert list(run.trace[1]) == ["seq", "type", "time", "run_id", "tool", "call_id", "call_signature",
                                  "approval_id", "args", "data"]


def test_denied_call_still_consumes_its_grant(tmp_path: Path, cli: Cli) -> None:
    """Points 21/75: a covered call that a later `tool.denied` marks still consumes its (one-use)
    grant, so the next call has none and is denied by approval_bound."""
    rules: list[dict[str, Any]] = [
        {"id": "small", "kind": "tool_args", "tool": "pay", "match": {"amount": {"$lte": 10}}},
        {"id": "bound", "kind": "approval_bound", "tool": "pay"}]
    run = enforced(tmp_path, cli, rules, [send("approval.granted", approval_id="g1", tool="pay"),
                                          call("c1", "pay", {"amount": 50}), call("c2", "pay", {"amount": 5})])
    assert denied_ids(run) == ["c1", "c2"]
    assert [e["data"]["rule_ids"] for e in run.trace if e["type"] == "tool.denied"] == [["small"], ["bound"]]


def test_replayed_calls_count_for_call_index(tmp_path: Path, cli: Cli) -> None:
    """Point 70: call_index counts replayed calls too: the second `put` (not in the baseline) is
    call_index 1 of the fixture key."""
    (tmp_path / "base.jsonl").write_text("".join(json.dumps(e) + "\n" for e in BASELINE), encoding="utf-8")
    setup(tmp_path, [call("c1", "put", {"x": 1}), call("c2", "put", {"x": 9}), done(output=1)],
          fixtures={"version": 1, "tools": {"put": {"$cases": [{"call_index": 0, "result": "zero"},
                                                                {"call_index": 1, "result": "one"}]}}})
    run = record(cli, "--replay", "base.jsonl")
    assert results(run) == ["P", "one"]


def test_redaction_of_input_reaches_agent_unredacted(tmp_path: Path, cli: Cli) -> None:
    """Point 86: redaction applies to the input written on run.start; the agent itself gets the real
    value (only what is written is redacted)."""
    setup(tmp_path, [done(output=1)], fixtures={"version": 1, "input": {"Token": "abc123"}, "tools": {}})
    run = record(cli, "--redact", "token")
    assert run.trace[0]["data"]["input"] == {"Token": "[redacted]"}
    assert run.replies[0]["input"] == {"Token": "abc123"}


def test_cr_before_newline_counts_toward_the_line_cap(tmp_path: Path, cli: Cli) -> None:
    """Point 80: caps count raw bytes; a line whose 1,040,385th byte is a `\\r` (not a newline) is
    rejected, although a trailing `\\r` would otherwise be stripped (point 60)."""
    head = '{"type": "agent.message", "text": "'
    line = head + "x" * (LINE_CAP - len(head) - 2) + '"}'
    setup(tmp_path, [{"raw": line + "\r\n"}, {"sleep": 5}])
    run = record(cli)
    assert run.last()["reason"] == "output_limit"
    assert run.last()["data"]["limit"] == "line"


def test_both_timers_at_once_run_wins(tmp_path: Path, cli: Cli) -> None:
    """Point 78: if both timers expire at once, `timeout:run` wins (equal limits, a silent agent)."""
    setup(tmp_path, [{"sleep": 20}])
    run = record(cli, "--timeout-ms", "200", "--idle-timeout-ms", "200")
    assert run.last()["reason"] == "timeout:run"


def test_agent_that_exits_before_its_reply_is_exit_not_a_crash(tmp_path: Path, cli: Cli) -> None:
    """Point 62: a write that fails with EPIPE is not an error in itself; the exit reports it: an
    agent that sends a call and exits at once ends with `exit:0`, no traceback."""
    (tmp_path / "quick.py").write_text(
        'import sys\nsys.stdout.write(\'{"type": "tool.call", "call_id": "c1", "tool": "get"}\\n\')\n'
        'sys.stdout.flush()\nsys.stdin.close()\n', encoding="utf-8")
    setup(tmp_path, [])
    run = record(cli, agent="quick.py")
    assert run.code == 2
    assert run.last()["reason"] == "exit:0"
    assert "Traceback" not in run.stderr


def test_force_never_replaces_a_device(tmp_path: Path, cli: Cli) -> None:
    """Point 68: with --force an existing regular file is replaced, "and nothing else" (a report
    once replaced /dev/null): `--out /dev/null --force` exits 2 before spawning."""
    setup(tmp_path, [done()])
    run = record(cli, "--force", out="/dev/null")
    assert run.code == 2 and run.report is None
    assert Path("/dev/null").is_char_device()
    assert not (tmp_path / "count.txt").exists()


def test_every_violation_at_a_denied_call_is_prevented(tmp_path: Path, cli: Cli) -> None:
    """Point 75: each violation at a call answered by `tool.denied` gets `prevented: true` (a warning
    rule's too, though warnings never deny); `check` of the trace gives the same exit."""
    rules: list[dict[str, Any]] = [{"id": "warn-rm", "kind": "deny_tool", "tool": "rm", "severity": "warning"},
                                   {"id": "no-rm", "kind": "deny_tool", "tool": "rm"}]
    run = enforced(tmp_path, cli, rules, [call("c1", "rm")])
    assert run.report is not None
    assert sorted((v["rule_id"], v.get("prevented")) for v in run.report["violations"]) == [
        ("no-rm", True), ("warn-rm", True)]
    assert run.trace[2]["data"]["rule_ids"] == ["no-rm"]
    check = cli("check", "--contract", "c.json", "--trace", "t.jsonl", "--format", "json")
    assert (run.code, check.returncode) == (1, 1)


def test_safety_exit_not_used_for_liveness_errors(tmp_path: Path, cli: Cli) -> None:
    """Point 84: the exit is N only when an error comes from a safety part (or a denial); a liveness
    failure in a completed run exits 1."""
    rules = [{"id": "two", "kind": "tool_calls", "tool": "*", "min": 2}]
    setup(tmp_path, [call("c1", "get"), done(output=1)], rules=rules)
    run = record(cli, "--safety-exit", "9")
    assert run.code == 1


def test_harness_ending_measures_duration(tmp_path: Path, cli: Cli) -> None:
    """Points 65/66: the harness's `run.failed {reason, duration_ms, data}` has a measured duration
    (spawn -> terminal) when the clock is real."""
    setup(tmp_path, [{"exit": 6}])
    run = record(cli, fake_clock=False)
    assert run.last()["reason"] == "exit:6"
    assert run.last()["duration_ms"] >= 0


MCP_SERVER = r'''
try:
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:
    from mcp.server.fastmcp import FastMCP as Server
app = Server("t")

@app.tool()
def lookup(order: str) -> dict:
    """Look an order up."""
    return {"order": order, "paid": 10}

@app.tool()
def boom() -> str:
    """Always fails."""
    raise ValueError("kaput")

@app.tool()
def get() -> str:
    """Named by the fixtures too."""
    return "from server"

app.run()
'''


@pytest.mark.slow
def test_mcp_backend_fixtures_win_and_errors_are_not_ok(tmp_path: Path, cli: Cli) -> None:
    """Point 85: --mcp forwards calls of listed tools as tools/call (fixtures win for the tools they
    name); a `tool.listing` records the discovered tools; `ok: false` for isError; the result is
    `structuredContent`, else `content`."""
    pytest.importorskip("mcp")
    (tmp_path / "server.py").write_text(MCP_SERVER, encoding="utf-8")
    setup(tmp_path, [call("c1", "lookup", {"order": "A9"}), call("c2", "boom", {}), call("c3", "get"), done(output=1)],
          fixtures={"version": 1, "tools": {"get": "from fixtures"}})
    run = record(cli, "--mcp", f"{sys.executable} server.py", timeout=60)
    assert run.code == 0, run.stderr
    assert run.types()[:2] == ["run.start", "tool.listing"]
    assert sorted(tool["name"] for tool in run.trace[1]["data"]["tools"]) == ["boom", "get", "lookup"]
    lookup, boom, get = (e for e in run.trace if e["type"] == "tool.result")
    assert lookup["ok"] is True and "A9" in json.dumps(lookup["result"])
    assert lookup["data"] == {"mcp": {"server": 0}}
    assert boom["ok"] is False
    assert (get["result"], get["data"]) == ("from fixtures", {"fixture": {"key": "get"}})
