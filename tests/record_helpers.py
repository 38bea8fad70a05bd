"""Running `record` on scripted agents in the tests: scripts, contracts, fixtures, and leftovers."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from agent_invariants.api import check_trace
from agent_invariants.record import Recorded, RecordOptions, exit_code, record

from conftest import agents_left

AGENT = Path(__file__).parent / "data" / "record" / "scripted_agent.py"
MARK = f"AGENT_INVARIANTS_TEST_WORKER={os.getpid()}"
"""Every agent these tests start gets it: tests of one worker run one at a time, so an agent with
this worker's mark still running after a test was left by that test."""


def call(call_id: str, tool: str, args: Any = None, **more: Any) -> list[dict[str, Any]]:
    """The steps of one tool call: send it, read the reply."""
    message: dict[str, Any] = {"type": "tool.call", "call_id": call_id, "tool": tool, **more}
    if args is not None:
        message["args"] = args
    return [{"send": message}, {"recv": True}]


def send(message_type: str, **fields: Any) -> dict[str, Any]:
    return {"send": {"type": message_type, **fields}}


START = [{"recv": True}]
"""Every script reads run.start first."""
DONE = [send("run.completed", status="completed")]


class Run:
    """One recorded run: the report, the exit code, the written events and what the agent heard."""

    def __init__(self, recorded: Recorded, trace: Path, replies: Path, safety_exit: int = 1) -> None:
        agree(recorded, trace)
        self.recorded = recorded
        self.report = recorded.report
        self.code = exit_code(recorded, safety_exit)
        self.trace = trace
        self.events = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
        self.replies = [json.loads(line) for line in replies.read_text(encoding="utf-8").splitlines()] \
            if replies.exists() else []

    @property
    def info(self) -> Any:
        return self.report.record

    def bare(self) -> list[dict[str, Any]]:
        """The events without seq, time and run_id (checked once, in `numbered`)."""
        return [{key: value for key, value in event.items() if key not in ("seq", "time", "run_id")}
                for event in self.events]

    def numbered(self) -> bool:
        return all(event["seq"] == at and event["run_id"] == "fake-run"
                   and event["time"] == f"1970-01-01T00:00:00.{at:03d}Z" for at, event in enumerate(self.events, 1))

    def violations(self) -> list[tuple[str, Any, str]]:
        return [(v.rule_id, v.event_seq, v.code) for v in self.report.violations]


def agree(recorded: Recorded, trace: Path) -> None:
    """One evaluator: a later `check` of the written trace (with `--partial` when the harness ended
    the run, as `record` did) finds exactly the violations `record` reported, and the same verdict."""
    report = recorded.report
    later = check_trace(recorded.loaded, trace, partial=report.partial is True)

    def seen(violations: list[Any]) -> list[tuple[Any, ...]]:
        return [(v.rule_id, v.event_seq, v.code, v.status, v.message) for v in violations]
    assert seen(later.violations) == seen(report.violations)
    assert (later.passed, later.error_count, later.warning_count) == (
        report.passed, report.error_count, report.warning_count)


def run_agent(tmp: Path, steps: list[dict[str, Any]], contract: dict[str, Any], fixtures: dict[str, Any] | None,
              *, name: str = "run", safety_exit: int = 1, **options: Any) -> Run:
    """Record the scripted agent playing `steps` (fake clock unless told otherwise)."""
    script = tmp / f"{name}.script.json"
    script.write_text(json.dumps(steps), encoding="utf-8")
    contract_path = tmp / f"{name}.contract.json"
    contract_path.write_text(json.dumps(contract), encoding="utf-8")
    if fixtures is not None:
        fixtures_path = tmp / f"{name}.fixtures.json"
        fixtures_path.write_text(json.dumps(fixtures), encoding="utf-8")
        options.setdefault("fixtures", str(fixtures_path))
    trace = tmp / f"{name}.jsonl"
    replies = tmp / f"{name}.replies.jsonl"
    options.setdefault("fake_clock", True)
    options.setdefault("out", str(trace))
    options["env"] = [*options.get("env", ()), MARK]
    recorded = record(contract_path, [sys.executable, str(AGENT), str(script), str(replies)],
                      RecordOptions(**options))
    return Run(recorded, Path(options["out"]), replies, safety_exit)


def leftover_agents() -> list[int]:
    """Pids of the agents this test process started that are still running (the session as a
    whole is checked in conftest)."""
    return agents_left(MARK)
